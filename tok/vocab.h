/*
 * vocab: the in-memory vocabulary every loader produces and every trie is
 * built from.
 *
 * Token strings are raw bytes whatever the file's convention: GPT-2's
 * byte-to-unicode alphabet, SentencePiece's "<0xNN>" byte pieces and its
 * U+2581 word marker are all decoded at load time (the marker becomes a
 * plain space), so that a trie over the vocabulary sees the bytes a model
 * really emits.
 *
 * Layout: all token strings back to back in `bytes`; token i spans
 * bytes[offset[i] .. offset[i+1]).  Ids are dense 0..size-1; an id the file
 * leaves out has kind TOK_UNUSED and an empty string.  A built vocabulary's
 * arrays are one allocation, which tok_vocab_free frees.
 */
#ifndef TOK_VOCAB_H
#define TOK_VOCAB_H

#include <stddef.h>
#include <stdint.h>

#include "../base/err.h"
#include "../base/hash.h"

/* Numbered as SentencePiece's ModelProto.SentencePiece.Type numbers them. */
typedef enum {
    TOK_NORMAL = 1,
    TOK_UNKNOWN = 2,
    TOK_CONTROL = 3,
    TOK_USER = 4, /* user-defined / added, matched verbatim in the text */
    TOK_BYTE = 6, /* SentencePiece byte-fallback piece <0xNN> */
    TOK_UNUSED = 5,
} tok_kind_t;

/* Largest vocabulary tokbench accepts (ids must fit 24 bits in some tries),
 * and the longest token (some vocabularies hold runs of 1000+ spaces). */
#define TOK_VOCAB_MAX_SIZE (1u << 24)
#define TOK_TOKEN_MAX_LEN 65535u

/* An index of some of a vocabulary's tokens by their bytes (the lowest id
 * of equal strings kept): open addressing, linear probing, sized to its
 * tokens (at most 2/3 full, not a power of two), a probe starting where
 * the hash scales to.  A slot is 4 bytes, 8 bits of the token's hash
 * above its 24-bit id (TOK_VOCAB_MAX_SIZE), all ones when empty (no tag
 * is 0xFF), so a probe that meets another token is told so by the tag
 * 255 times in 256, and the table holds no pointer: a compiled tokenizer
 * (compiled.c) maps it from its file and uses it in place.  8-byte slots
 * in a power of two took 2 MiB for cl100k's 100k tokens, now 0.6 MiB. */
typedef uint32_t tok_index_slot_t;
#define TOK_INDEX_EMPTY UINT32_MAX
#define TOK_INDEX_TAG_MASK 0xFF000000u

/* The id a used slot holds. */
static inline uint32_t tok_index_slot_id(tok_index_slot_t s)
{
    return s & ~TOK_INDEX_TAG_MASK;
}

typedef struct {
    tok_index_slot_t *slots;
    size_t size, count;
} tok_index_t;

/* The slot where a probe for bytes of hash h (tb_hash) starts. */
static inline size_t tok_index_first(const tok_index_t *x, uint64_t h)
{
    return (size_t)(((unsigned __int128)h * x->size) >> 64);
}

typedef struct {
    uint32_t size;      /* number of ids */
    uint8_t *bytes;     /* every token's raw bytes, back to back */
    uint32_t *offset;   /* size + 1 entries */
    float *score;       /* SentencePiece score; -rank for BPE ranks; 0 if none */
    uint8_t *kind;      /* tok_kind_t per id */
    uint8_t *special;   /* 1 if the file marks the token special */
    tok_index_t by_bytes; /* raw bytes -> lowest id with those bytes */
    int32_t byte_id[256]; /* token of the single byte b (byte piece or plain) */
    int32_t bos, eos, unk, pad; /* -1 where the file names none */
} tok_vocab_t;

/* Building: add tokens in any id order, then finish. */
typedef struct tok_vocab_builder tok_vocab_builder_t;

tok_vocab_builder_t *tok_vocab_builder_new(void);
/* Adds id -> bytes.  Fails on an id past TOK_VOCAB_MAX_SIZE, a token over
 * TOK_TOKEN_MAX_LEN bytes, or an id given twice. */
int tok_vocab_add(tok_vocab_builder_t *b, uint32_t id, const uint8_t *bytes,
                  size_t len, float score, tok_kind_t kind, int special,
                  tb_err_t *err);
/* Room for `tokens` tokens of `bytes` bytes in all, bounds that a loader
 * knows before it adds them (tb_alloc_big: a few faults of 2 MiB, not one
 * per 4 KiB; pages past what the tokens fill cost nothing).  Tokens added
 * in ascending ids within both bounds go straight into the vocabulary's
 * own arrays, nothing held beside them; the first one out of order or
 * past a bound moves them into the builder's lists.  Failing, the builder
 * grows as usual. */
void tok_vocab_builder_reserve(tok_vocab_builder_t *b, size_t tokens,
                               size_t bytes);
/* Moves the tokens into v (ids never added become TOK_UNUSED) and frees b. */
int tok_vocab_finish(tok_vocab_builder_t *b, tok_vocab_t *v, tb_err_t *err);
/* The same in two steps: v without its index by bytes and byte_id, then
 * those (for at most `count` tokens), for a loader that builds a transient
 * table as large in between (SentencePiece's Unigram index or merges), so
 * that the two are not held at once.  v is not to be looked up between. */
int tok_vocab_finish_unindexed(tok_vocab_builder_t *b, tok_vocab_t *v,
                               tb_err_t *err);
int tok_vocab_index(tok_vocab_t *v, size_t count, tb_err_t *err);
void tok_vocab_builder_free(tok_vocab_builder_t *b);

void tok_vocab_free(tok_vocab_t *v);

static inline const uint8_t *tok_vocab_token(const tok_vocab_t *v, uint32_t id,
                                             size_t *len)
{
    *len = v->offset[id + 1] - v->offset[id];
    return v->bytes + v->offset[id];
}

/* Indexes the ids 0..v->size-1 that keep(v, id) accepts, at most
 * `expected` of them, into x (whose slots it allocates). */
int tok_index_build(tok_index_t *x, const tok_vocab_t *v, size_t expected,
                    int (*keep)(const tok_vocab_t *v, uint32_t id));
void tok_index_free(tok_index_t *x);
/* The id of x whose bytes are exactly s[0..n), or -1. */
int32_t tok_index_get(const tok_index_t *x, const tok_vocab_t *v,
                      const uint8_t *s, size_t n);
/* The same for s[0..n) whose tb_hash the caller has already. */
int32_t tok_index_get_hashed(const tok_index_t *x, const tok_vocab_t *v,
                             const uint8_t *s, size_t n, uint64_t h);
/* tok_index_get of keys[i] (lens[i] bytes) into ids[i] for i < n, the
 * slots of many fetched at once so that their cache misses overlap. */
void tok_index_get_many(const tok_index_t *x, const tok_vocab_t *v, size_t n,
                        const uint8_t *const *keys, const size_t *lens,
                        int32_t *ids);

/* Lowest id whose bytes are exactly s[0..n), or -1. */
static inline int32_t tok_vocab_find(const tok_vocab_t *v, const uint8_t *s,
                                     size_t n)
{
    return tok_index_get(&v->by_bytes, v, s, n);
}

/* sha256 over ids, kinds and bytes: names a vocabulary independent of the
 * file it came from. */
void tok_vocab_checksum(const tok_vocab_t *v, char hex[65]);

/* GPT-2's byte-to-unicode alphabet: the code point standing for byte b, and
 * the inverse (-1 for a code point outside the alphabet). */
uint32_t tok_gpt2_byte_to_cp(uint8_t b);
int tok_gpt2_cp_to_byte(uint32_t cp);

/* Decodes a GPT-2 byte-level string (UTF-8 of alphabet code points) into raw
 * bytes in out (room for len bytes).  Returns the byte count, or -1 if a
 * code point is outside the alphabet. */
long tok_gpt2_decode(const uint8_t *s, size_t len, uint8_t *out);

#endif
