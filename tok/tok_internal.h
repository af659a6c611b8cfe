/*
 * tok_internal: the tokenizer object as the loaders fill it and the encoder
 * runs it.  Not for use outside tok/.
 *
 * Encoding is a fixed pipeline, the one Hugging Face tokenizers defines and
 * the others are special cases of:
 *   1. split the text around added tokens (exact matches, longest first);
 *   2. run the normalizer steps over each remaining span;
 *   3. run the pre-tokenizer steps, which cut the span into words;
 *   4. run the model (BPE merges or Unigram Viterbi) over each word.
 * The U+2581 word marker of SentencePiece-style vocabularies is decoded to a
 * space at load time, so after normalization the encoder maps every U+2581
 * back to a space (`meta_to_space`) before the model sees the bytes.
 */
#ifndef TOK_INTERNAL_H
#define TOK_INTERNAL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdatomic.h>

#include "../base/buf.h"
#include "../base/da.h"
#include "../base/hash.h"
#include "tokenizer.h"
#include "uprops.h"

struct tok_wordcache; /* wordcache.h */

/* ---- normalizers ---------------------------------------------------- */
typedef enum {
    TOK_NORM_NFC,
    TOK_NORM_NFKC,
    TOK_NORM_NFD,
    TOK_NORM_NFKD,
    TOK_NORM_LOWERCASE,
    TOK_NORM_PREPEND,  /* a: the prefix */
    TOK_NORM_REPLACE,  /* a: the literal (flags & 1: a regex) to find,
                          b: its replacement */
    TOK_NORM_STRIP,    /* flags: 1 left, 2 right */
    TOK_NORM_CHARSMAP, /* SentencePiece precompiled_charsmap in `blob` */
    TOK_NORM_SPM,      /* SentencePiece's own normalizer: charsmap in blob,
                          flags: TOK_SPM_* below */
    TOK_NORM_BERT,     /* Hugging Face's BertNormalizer, flags: TOK_BERT_* */
} tok_norm_kind_t;

enum {
    TOK_SPM_ADD_DUMMY_PREFIX = 1,
    TOK_SPM_REMOVE_EXTRA_WHITESPACES = 2,
    TOK_SPM_ESCAPE_WHITESPACES = 4,
};

enum {
    TOK_BERT_CLEAN = 1,   /* clean_text: drop controls, white space to ' ' */
    TOK_BERT_CHINESE = 2, /* handle_chinese_chars: a space each side of CJK */
    TOK_BERT_STRIP = 4,   /* strip_accents: NFD, then drop Mn */
    TOK_BERT_LOWER = 8,   /* lowercase */
};

/* bert.c: the BertNormalizer's clean_text and handle_chinese_chars (as
 * flags say) and its strip_accents, each appending s[0..n) so changed to
 * out; BERT's CJK ideographs; and the BertPreTokenizer's punctuation. */
int tok_bert_clean(uint32_t flags, const uint8_t *s, size_t n, tb_buf_t *out,
                   tb_err_t *err);
int tok_bert_strip_accents(const uint8_t *s, size_t n, tb_buf_t *out,
                           tb_err_t *err);
int tok_is_cjk(uint32_t c);
/* m: a memo of the punctuation ranges (TOK_RANGES_MEMO_EMPTY to start). */
int tok_bert_is_punct(uint32_t c, tok_ranges_memo_t *m);

typedef struct {
    tok_norm_kind_t kind;
    tb_buf_t a, b;     /* string arguments (raw UTF-8) */
    tb_buf_t blob;     /* charsmap: 4-byte size, double-array units, pool */
    uint32_t flags;
    int blob_mapped;   /* blob lies in a compiled file's mapping: not freed */
} tok_norm_t;

/* ---- pre-tokenizers ------------------------------------------------- */
/* Patterns with a hand-written matcher (fastsplit.c). */
typedef enum { TOK_FAST_NONE, TOK_FAST_LLAMA3, TOK_FAST_QWEN2, TOK_FAST_O200K } tok_fast_t;
/* Which matcher, if any, pattern[0..len) has (the pattern as written). */
tok_fast_t tok_fast_kind(const uint8_t *pattern, size_t len);
/* The end of the match the pattern of `kind` makes at s[pos] (pos < n),
 * which PCRE2 (UTF, UCP, pretok.c's classes) would give, or 0 where the
 * matcher cannot say (invalid UTF-8 in the way): then ask PCRE2. */
size_t tok_fast_match(tok_fast_t kind, const uint8_t *s, size_t n, size_t pos);

typedef enum {
    TOK_PRE_SPLIT,      /* regex (or literal, compiled as a regex) split */
    TOK_PRE_BYTE_LEVEL, /* flags & 1: add prefix space; & 2: use GPT-2 regex */
    TOK_PRE_METASPACE,  /* flags & 1: prepend marker; & 2: split on it;
                           & 4: prepend to the first piece of the text
                           only, whatever 1 says */
    TOK_PRE_DIGITS,     /* flags & 1: individual digits */
    TOK_PRE_WHITESPACE_SPLIT,
    TOK_PRE_BERT,       /* white space removed, each punctuation mark a word */
} tok_pre_kind_t;

/* What a split does with the matched delimiter (Hugging Face's names). */
typedef enum {
    TOK_SPLIT_REMOVED,
    TOK_SPLIT_ISOLATED,
    TOK_SPLIT_MERGED_WITH_PREVIOUS,
    TOK_SPLIT_MERGED_WITH_NEXT,
    TOK_SPLIT_CONTIGUOUS,
} tok_split_behavior_t;

typedef struct {
    tok_pre_kind_t kind;
    tok_split_behavior_t behavior;
    int invert;
    uint32_t flags;
    tb_buf_t pattern;          /* the source pattern, for messages */
    int literal;               /* re matches the pattern's bytes as they are */
    pcre2_code *re;            /* compiled with JIT where available and no
                                  hand-written matcher; the match data is
                                  the caller's (tok_state) */
    tok_fast_t fast;           /* a hand-written matcher of the pattern */
    /* With a matcher, re's JIT-compiled copy, made the first time the
     * matcher cannot answer (pretok.c's jit_copy): written once, under a
     * lock, into a tokenizer that is otherwise only read. */
    _Atomic(pcre2_code *) jit;
} tok_pre_t;

/* ---- added tokens --------------------------------------------------- */
typedef struct {
    uint32_t id;
    tb_buf_t content;
    uint8_t special, lstrip, rstrip, single_word, normalized;
} tok_added_t;

/* The first bytes, up to 8, that all added tokens of one kind with a given
 * first byte share: little-endian (the first in the low byte), and the
 * bits of `bytes` that hold them. */
typedef struct {
    uint64_t bytes, mask;
} tok_added_prefix_t;

/* ---- models --------------------------------------------------------- */
typedef enum {
    TOK_MODEL_BPE,
    TOK_MODEL_UNIGRAM,
    TOK_MODEL_WORDPIECE,
    TOK_MODEL_WORDLEVEL, /* a word is a token, or the unknown one */
} tok_model_kind_t;

/* The merge table (bpe.c): (left id << 32 | right id) -> (rank << 32 |
 * merged id), open addressing with linear probing, at most 2/3 full, of
 * any size (not a power of two: bpe.c's first_slot).  Key and value lie
 * side by side so that a lookup touches one cache line: the table of a
 * large vocabulary (6.7 MB for Llama 3) misses the CPU caches.  The
 * loaders fill it and the encoder reads this one copy. */
typedef struct {
    uint64_t key; /* UINT64_MAX: an empty slot (no vocabulary has such ids) */
    uint64_t val;
} tok_merge_slot_t;

typedef struct {
    tok_merge_slot_t *slots; /* NULL until the first merge */
    size_t size, count; /* slots, merges */
} tok_merges_t;

/* One multi-byte character a byte-level word may start as one symbol (its
 * token) instead of its bytes (bpe.c's premerged characters), in a table
 * by code point: open addressing with linear probing, a power of two of
 * slots.  Its partners, at [first, first + n_left + n_right) of the
 * partner array, are the neighbours that forbid it: the bytes of a token
 * that would merge with one of its parts before the character is whole,
 * n_left of them met right before it, then n_right right after it, each
 * packed as bytes from the low end and the length in the top byte.
 * neighbours (tok_premerge_neighbours) says which bytes they can meet: a
 * character whose neighbours match none starts whole with no partner
 * read, most of them in running text (Llama 3, the first MB of multi:
 * 72k of 86k). */
typedef struct {
    uint32_t cp; /* 0: an empty slot (U+0000 is one byte) */
    int32_t id;
    uint32_t first;
    uint8_t n_left, n_right;
    uint16_t neighbours;
} tok_premerge_slot_t;

/* How a BPE model ranks a pair of adjacent symbols.  tiktoken files and
 * SentencePiece BPE GGUF files hold no merges: a pair merges into the
 * token spelled by its two parts' bytes, found in the vocabulary's index
 * by bytes when the pair is met, as tiktoken and llama.cpp do it, so no
 * merge table (24 bytes a merge, five times cl100k's file) is derived. */
typedef enum {
    TOK_RANK_MERGES, /* the merge table (tok_merges_t) */
    TOK_RANK_ID,     /* tiktoken: the joined token, ranked by its id */
    TOK_RANK_SCORE,  /* SentencePiece BPE: the joined piece, the best
                        score first, the leftmost pair on a tie */
} tok_rank_t;

/* The tables of one BPE tokenizer (tok_bpe_t.tables), derived from its
 * vocabulary and merges by tok_bpe_prepare, or mapped from a compiled file
 * (compiled.c), and only read while encoding. */
typedef struct {
    /* t->bpe.merges' slots, borrowed: the tokenizer owns them (NULL when
     * pairs are ranked by bytes) */
    const tok_merge_slot_t *mt;
    size_t mt_size;
    /* ranked by bytes: t->bpe.rank_by, t->vocab (borrowed), and the
     * longest ordinary token, past which no two parts join */
    tok_rank_t rank_by;
    const tok_vocab_t *vocab;
    uint32_t join_max;
    /* a Bloom filter over the merges' pairs (see bpe.c), 1 << filter_shift
     * words, which answers most pairs with no merge before the table
     * (NULL when pairs are ranked by bytes) */
    uint64_t *filter;
    unsigned filter_shift;
    /* byte-level models: the merge of every pair of bytes, (rank << 32 |
     * merged) or UINT64_MAX, so a word's first pairs skip the big table */
    uint64_t *byte_pairs;
    /* premerged characters (byte-level models; 1 << premerge_bits
     * slots, none when premerge_bits is 0) */
    tok_premerge_slot_t *premerge;
    unsigned premerge_bits;
    uint64_t *partners;
    size_t n_partners;
    /* character -> id, preferring ordinary tokens over byte pieces (the
     * vocabulary's own index keeps the lowest id, which for SentencePiece
     * files is the <0xNN> piece of an ASCII letter, not the letter) */
    int32_t ascii[128];
    tok_index_t chars;
    /* cutting long words at spaces (see bpe.c's build_cut_table): allowed
     * at all, and the bytes x for which some merge result holds "x " */
    int cut_ok;
    uint8_t crossable[256];
    int borrowed; /* filter, byte_pairs, premerge, partners and chars lie in
                     a compiled file's mapping */
} bpe_tables_t;

typedef struct {
    tok_merges_t merges;
    int merges_borrowed; /* the slots lie in a compiled file's mapping */
    tok_rank_t rank_by;  /* TOK_RANK_MERGES unless the loader says */
    int byte_level;      /* initial symbols are single bytes, not chars */
    int byte_fallback;   /* unknown chars become <0xNN> byte pieces */
    int fuse_unk;        /* consecutive unknowns become one unk */
    int ignore_merges;   /* a word that is a token is emitted whole */
    int32_t unk;         /* -1 if none */
    bpe_tables_t *tables;
} tok_bpe_t;

/* Unigram prefix search, pluggable so that trie layouts can stand in for
 * the default index: writes the pieces that are prefixes of s[0..n) as
 * (id, length), shortest first, at most max of them, and returns how many.
 * An index must hold exactly the NORMAL and USER pieces (by their own ids,
 * not the <0xNN> piece of the same byte), so that every one gives the same
 * ids (tok_unigram_indexed() says which pieces). */
typedef tb_da_match_t tok_prefix_hit_t; /* the default index writes these */
typedef size_t (*tok_prefix_fn)(const void *index, const uint8_t *s, size_t n,
                                tok_prefix_hit_t *out, size_t max);

typedef struct {
    int32_t unk;
    int byte_fallback;
    float unk_penalty;   /* score of an unknown char: min score - 10 */
    float max_score;     /* max(FLT_MIN, best NORMAL score): user-piece bonus */
    uint32_t max_piece_len; /* longest piece in bytes */
    int32_t byte_piece[256]; /* <0xNN> piece of each byte, or unk */
    tok_prefix_fn prefix;    /* prefix search over prefix_index */
    const void *prefix_index;
    tb_da_t *own_index;  /* unigram.c's default index, if built */
    int index_borrowed;  /* its units lie in a compiled file's mapping */
} tok_unigram_t;

/* unigram.c: builds the default prefix index over t's vocabulary and
 * plugs it in; frees it. */
int tok_unigram_build_index(tok_tokenizer_t *t, tb_err_t *err);
/* Plugs in d (malloc'd) as t's own index; `borrowed`: its units are not
 * d's to free (a compiled file's). */
void tok_unigram_use_index(tok_tokenizer_t *t, tb_da_t *d, int borrowed);
void tok_unigram_free(tok_unigram_t *u);
/* 1 if piece id belongs in a Unigram prefix index. */
int tok_unigram_indexed(const tok_vocab_t *v, uint32_t id);

/* WordPiece (wordpiece.c): word-start pieces begin with a space in the
 * vocabulary, continuations are bare (a GGUF spells the first with U+2581,
 * a tokenizer.json the second with the continuing prefix, "##"). */
typedef struct {
    int split_text;      /* GGUF: the model splits and normalizes the text
                            itself, as llama.cpp's WPM does; tokenizer.json:
                            it covers the words its pipeline made */
    int lowercase, strip_accents; /* split_text's normalization */
    int32_t unk;         /* -1 if none (WordLevel's too) */
    size_t max_len;      /* longest piece in bytes */
    uint32_t max_chars;  /* a word of more characters is unknown (0: any) */
    uint8_t prefix[16];  /* tokenizer.json's continuing_subword_prefix, for */
    uint8_t prefix_len;  /* the WordPiece decoder */
} tok_wordpiece_t;

/* Splits, normalizes and covers the whole span s[0..n) (split_text). */
int tok_wordpiece_word(const tok_tokenizer_t *t, const uint8_t *s, size_t n,
                       tok_ids_t *out, tb_err_t *err);
/* Covers one word of a tokenizer.json pipeline, as Hugging Face's WordPiece
 * model does: an unknown word, or one of more than max_chars characters, is
 * the unknown token, and an error where the vocabulary has none. */
int tok_wordpiece_cover(const tok_tokenizer_t *t, tok_state_t *st,
                        const uint8_t *w, size_t n, tok_ids_t *out,
                        tb_err_t *err);
/* Derives max_len from the vocabulary (tok_prepare calls it). */
void tok_wordpiece_prepare(tok_tokenizer_t *t);
/* Frees a state's word cache (st->wordpiece). */
void tok_wordpiece_state_free(struct tok_wordcache *cache);
/* Hugging Face's WordLevel model (wordpiece.c): the word's own token, else
 * the unknown one (t->wordpiece.unk), else an error. */
int tok_wordlevel_word(const tok_tokenizer_t *t, const uint8_t *w, size_t n,
                       tok_ids_t *out, tb_err_t *err);

/* A list of words: spans of a pre-tokenized buffer. */
typedef struct {
    uint32_t off, len;
} tok_span_t;
typedef TB_VEC(tok_span_t) tok_spans_t;

/* The matches of the pattern of `kind` (fastsplit.c) from s[0] on, one
 * after another, each pushed to words as a span at base + its start, up
 * to the end of s or to where the matcher cannot say (tok_fast_match's
 * 0): returns that place, or SIZE_MAX out of memory. */
size_t tok_fast_words(tok_fast_t kind, const uint8_t *s, size_t n, uint32_t base,
                      tok_spans_t *words);

/* ---- decoder -------------------------------------------------------- */
enum {
    TOK_DEC_STRIP_LEADING_SPACE = 1, /* drop one space at the very start */
    TOK_DEC_WORDPIECE = 2, /* Hugging Face's WordPiece decoder: tokens
                              joined by spaces, continuations glued on */
    TOK_DEC_CLEANUP = 4,   /* and its cleanup of " ." and the like */
    TOK_DEC_JOIN = 8,      /* no decoder in a WordPiece or WordLevel
                              tokenizer.json: the token strings joined by
                              spaces, as Hugging Face decodes then */
};

/* One item of a pair's rule (struct tok_tokenizer's `pair`). */
enum { TOK_PAIR_A = -1, TOK_PAIR_B = -2 };
typedef struct {
    int32_t what; /* a special token's id, or TOK_PAIR_A / TOK_PAIR_B */
    uint32_t type; /* its type id */
} tok_pair_item_t;

/* Spare states a tokenizer keeps: about 10 MB each at most (bpe.c's word
 * cache), taken only as concurrent calls need them. */
#define TOK_SPARE_STATES 4

/* A field added here is written and read by compiled.c too (its core_t,
 * records or sections), or a compiled tokenizer comes back without it. */
struct tok_tokenizer {
    tok_vocab_t vocab;
    tok_format_t format;
    tok_model_kind_t model;
    tok_bpe_t bpe;
    tok_unigram_t unigram;
    tok_wordpiece_t wordpiece;
    TB_VEC(tok_norm_t) norms;
    TB_VEC(tok_pre_t) pres;
    TB_VEC(tok_added_t) added;
    int meta_to_space;   /* map U+2581 to a space after normalization */
    int match_added;     /* split the text around added tokens */
    int needs_utf8;      /* refuse invalid UTF-8 input */
    uint32_t decode_flags;
    char model_name[48];
    /* What TOK_ADD_SPECIAL puts before and after the ids, as the loader
     * read the file's rule; add_special_error says why the file's rule is
     * not supported (empty when it is): only an encode that asks fails. */
    tok_ids_t special_prefix, special_suffix;
    char add_special_error[160];
    /* A pair's rule (tok_encode_pair): what comes out in order, each a
     * special id (what >= 0) or one of the texts (TOK_PAIR_A, TOK_PAIR_B,
     * A first), with its type id.  Empty: A with type 0, then B with type
     * 1, nothing added.  pair_error: why the file's pair rule is not
     * supported (empty when it is). */
    TB_VEC(tok_pair_item_t) pair;
    char pair_error[160];
    /* encode.c's index over `added`, built by tok_prepare: `added` sorted
     * by (normalized, content), normalized ones from added_norm_from on,
     * and added_at[k][b] the range [from, to) of those with normalized ==
     * k whose first byte is b (empty: no token starts with b), and
     * added_lead[k] the first byte of all of those when they share it
     * (-1: several, or none), which memchr then finds, and
     * added_prefix[k][b] the bytes all those with first byte b begin
     * with, up to 8, which a position must show before its tokens are
     * searched. */
    uint32_t added_norm_from;
    uint32_t added_at[2][256][2];
    int added_lead[2];
    tok_added_prefix_t added_prefix[2][256];
    int ready;           /* tok_prepare ran: only read from here on */
    /* A tokenizer opened from a compiled file (compiled.c): the read-only
     * mapping that its vocabulary, merge table, BPE tables and Unigram
     * index point into (NULL: those are malloc'd). */
    const uint8_t *map;
    size_t map_len;
    /* While load_source runs a loader: the source file's mapping, whose
     * pages the loader gives back (tok_release_source) once it has copied
     * what it keeps (NULL: a loader called on a buffer of its caller's). */
    const uint8_t *src;
    size_t src_len;
    /* The one field an encode writes: states that calls borrow and put
     * back (NULL: none there), so that up to TOK_SPARE_STATES threads at a
     * time find a warm word cache. */
    _Atomic(tok_state_t *) spare[TOK_SPARE_STATES];
};

/* What normalizing a text writes besides its output (normalize.c): the
 * steps' outputs, which take turns; the BertNormalizer's buffers for a
 * run of non-ASCII text; and its memo of the characters it has met, made
 * at first use. */
typedef struct {
    tb_buf_t step[2];
    tb_buf_t run[2];
    struct tok_bert_memo *bert;
} tok_norm_scratch_t;

/* Everything an encode writes, so that the tokenizer itself is only read
 * and any number of threads can share it, each with a state of its own.
 * The parts are made at first use. */
struct tok_state {
    const tok_tokenizer_t *tok; /* the tokenizer whose tables the caches hold */
    tb_buf_t pre, word;         /* encode.c: pre-tokenized text; a word with
                                   U+2581 mapped to spaces */
    tb_buf_t norm;              /* encode.c: a piece's normalized text */
    tok_norm_scratch_t norm_scratch; /* normalize.c's buffers and memo: kept,
                                   since a piece of text (64 KiB, say) as
                                   buffers of its own is pages mapped and
                                   faulted in on every call */
    tok_spans_t words;          /* encode.c: the words of `pre` */
    pcre2_match_data *md;       /* pretok.c: one ovector pair is enough */
    void *bpe;                  /* bpe.c: word cache and merge scratch */
    struct tok_wordcache *wordpiece; /* wordpiece.c: word cache */
    void *viterbi;              /* unigram.c: Viterbi arrays ... */
    size_t viterbi_cap;         /* ... of this many bytes */
    int parse_special;          /* encode.c: this call matches the added
                                   tokens marked special */
};

/* Derives every table encoding reads (the added-token index, the fixed
 * pre-tokenizer patterns, the BPE engine's tables) and drops the spare
 * states, whose caches may be stale (a caller's own states, made before,
 * must be freed too).  tok_load calls it; a tokenizer built by hand calls
 * it once complete (and again after changing it), before any encode and
 * before it is shared. */
int tok_prepare(tok_tokenizer_t *t, tb_err_t *err);        /* encode.c */
/* The part of tok_prepare that a compiled tokenizer needs too (its tables
 * come from the file): the added-token index and the pre-tokenizers' fixed
 * patterns. */
int tok_prepare_steps(tok_tokenizer_t *t, tb_err_t *err);  /* encode.c */

/* What a compiled file was made from: a hash of its source's bytes
 * (tb_hash) and their size, and a hash of the source's path as given (a
 * loader may read the name, as tiktoken's does, and messages kept for
 * later name the path).  The cache needs to tell a changed source from
 * the one compiled, not to resist forgery (a file is bounds-checked
 * whatever its hashes say): sha256 took 335 ms over Gemma 3's 33 MB on
 * an Intel Xeon without the SHA extensions, every cached load, where
 * tb_hash takes 9. */
typedef struct {
    uint64_t sum;
    uint64_t size;
    uint64_t path_hash;
} tok_source_id_t;

/* compiled.c: writes t as a compiled file at path (atomically: a temporary
 * file renamed), stamped with its source's identity. */
int tok_compiled_write(const tok_tokenizer_t *t, const char *path,
                       const tok_source_id_t *src, tb_err_t *err);
/* Opens the compiled file at path made from src, into *out, ready to
 * encode.  Returns 0, 1 when there is no such file, or -1 when the file is
 * refused (stale, truncated, damaged, of another build): err says why, in
 * a few words after the path. */
int tok_compiled_open(const char *path, const tok_source_id_t *src,
                      tok_tokenizer_t **out, tb_err_t *err);
/* A spare state of t, or a new one (NULL: out of memory); safe from any
 * thread.  tok_state_give puts it back, or frees it when every slot is
 * taken; tok_state_drop_spares frees them all (not while t is in use). */
tok_state_t *tok_state_take(const tok_tokenizer_t *t);     /* encode.c */
void tok_state_give(const tok_tokenizer_t *t, tok_state_t *st);
void tok_state_drop_spares(tok_tokenizer_t *t);

/* encode.c: the ids of text[0..len) with st, added tokens marked special
 * matched only if parse_special (special.c puts the flags around it). */
int tok_encode_text(const tok_tokenizer_t *t, tok_state_t *st, const uint8_t *text,
                    size_t len, int parse_special, tok_ids_t *out, tb_err_t *err);
/* special.c: 1 if TOK_SKIP_SPECIAL leaves id out of a decode. */
int tok_skips_special(const tok_tokenizer_t *t, uint32_t id);

/* Allocates an empty tokenizer (vocab unset, bos/eos/unk -1). */
tok_tokenizer_t *tok_new(tok_format_t format);

/* Loaders: each fills t from a file already read into memory. */
/* Gives back the pages within bytes [from, to) of the source file's
 * mapping (t->src), if the load runs from one (tb_release_map): a loader
 * calls it on a part it is done with, before it builds more tables; the
 * bytes stay readable. */
void tok_release_source(tok_tokenizer_t *t, size_t from, size_t to); /* load.c */
int tok_load_hf_json(tok_tokenizer_t *t, const char *path, const uint8_t *data,
                     size_t len, tb_err_t *err);
int tok_load_spm_model(tok_tokenizer_t *t, const char *path,
                       const uint8_t *data, size_t len, tb_err_t *err);
int tok_load_tiktoken(tok_tokenizer_t *t, const char *path,
                      const uint8_t *data, size_t len, tb_err_t *err);
int tok_load_gguf(tok_tokenizer_t *t, const char *path, const uint8_t *data,
                  size_t len, tb_err_t *err);
/* Writes t's vocabulary (BPE models only) as a vocabulary-only GGUF v3
 * file; `pre` is tokenizer.ggml.pre for byte-level models (NULL: none). */
int tok_gguf_write(const tok_tokenizer_t *t, const char *path,
                   const char *pre, tb_err_t *err);         /* gguf.c */

/* What a tokenizer.ggml.pre name stands for (gguf_pre.c): split regexes
 * applied in turn (NULL-ended), and the model's flags. */
typedef struct {
    const char *const *patterns;
    int ignore_merges, nfc;
} tok_gguf_pre_t;
int tok_gguf_pre(const uint8_t *name, size_t n, tok_gguf_pre_t *out,
                 tb_err_t *err);

/* Pipeline pieces, each in its own file.  SentencePiece BPE GGUF files
 * (by piece score) and tiktoken files (by rank) rank pairs through the
 * index by bytes (tok_rank_t); the others fill the merge table. */
int tok_pre_compile(tok_pre_t *p, const uint8_t *pattern, size_t len,
                    int literal, tb_err_t *err);           /* pretok.c */
/* Compiles the fixed pattern of a step other than Split. */
int tok_pre_prepare(tok_pre_t *p, tb_err_t *err);          /* pretok.c */
void tok_bpe_free(tok_bpe_t *m);                   /* bpe.c */
/* One merge as ids: left + right = merged, at rank (lower merges first). */
typedef struct {
    uint32_t left, right, merged, rank;
} tok_merge_t;
/* Adds merges[0 .. n) into a table sized for them once, the slots of later
 * merges fetched while earlier ones are put. */
int tok_bpe_add_merges(tok_bpe_t *m, const tok_merge_t *merges,
                       size_t n);                          /* bpe.c */
/* Room for n more merges, so that adding them one by one (a loader that
 * knows how many come) sizes the table once. */
int tok_bpe_reserve_merges(tok_bpe_t *m, size_t n);        /* bpe.c */
int tok_bpe_add_merge(tok_bpe_t *m, uint32_t left, uint32_t right,
                      uint32_t rank, uint32_t merged);     /* bpe.c */
/* 1 and the merge of (left, right) if the table has one, else 0. */
int tok_bpe_merge_get(const tok_merges_t *m, uint32_t left, uint32_t right,
                      uint32_t *rank, uint32_t *merged);   /* bpe.c */
/* (Re)builds t->bpe.tables from the vocabulary and the merges. */
int tok_bpe_prepare(tok_tokenizer_t *t, tb_err_t *err);   /* bpe.c */
/* A premerged character's neighbours from its partners p[0..n_left +
 * n_right): bit b >> 5 for the last byte b of each left partner, bit
 * 8 + (b >> 5) for the first byte b of each right one (a partner can match
 * only the byte of its own class next to the character). */
uint16_t tok_premerge_neighbours(const uint64_t *p, size_t n_left, size_t n_right); /* bpe.c */
void tok_bpe_state_free(void *bpe);                        /* bpe.c */
int tok_bpe_word(const tok_tokenizer_t *t, tok_state_t *st, const uint8_t *w,
                 size_t n, tok_ids_t *out, tb_err_t *err); /* bpe.c */
/* tok_bpe_word over the words of text[0..text_len), each looked up ahead
 * of its turn. */
int tok_bpe_words(const tok_tokenizer_t *t, tok_state_t *st, const uint8_t *text,
                  size_t text_len, const tok_span_t *words, size_t n, tok_ids_t *out,
                  tb_err_t *err);                           /* bpe.c */

/* Runs the normalizer steps over s[0..n) into out (normalize.c); the
 * SentencePiece steps call tok_spm_normalize (charsmap.c). */
int tok_normalize(const tok_tokenizer_t *t, const uint8_t *s, size_t n,
                  tb_buf_t *out, tb_err_t *err);
/* The same with the scratch the caller's (kept between calls). */
int tok_normalize_with(const tok_tokenizer_t *t, tok_norm_scratch_t *scratch,
                       const uint8_t *s, size_t n, tb_buf_t *out, tb_err_t *err);
void tok_norm_scratch_free(tok_norm_scratch_t *scratch);
int tok_spm_normalize(const tok_norm_t *nm, const uint8_t *s, size_t n,
                      tb_buf_t *out, tb_err_t *err);
/* Runs the pre-tokenizer steps over s[0..n): the text the words index
 * (which may differ from s, e.g. with a prefix space) goes to text_out.
 * `first`: s starts the text (a Metaspace with prepend_scheme "first"
 * prepends only there). */
int tok_pretokenize(const tok_tokenizer_t *t, tok_state_t *st, const uint8_t *s,
                    size_t n, int first, tb_buf_t *text_out, tok_spans_t *words,
                    tb_err_t *err);
int tok_unigram_word(const tok_tokenizer_t *t, tok_state_t *st, const uint8_t *w,
                     size_t n, tok_ids_t *out, tb_err_t *err); /* unigram.c */

#endif
