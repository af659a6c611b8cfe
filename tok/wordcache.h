/*
 * wordcache: a tokenizer state's memory of the words it has encoded, word
 * bytes -> ids, for the models whose words a text repeats (BPE merges,
 * WordPiece covers).  Open addressing over slots of 4 bytes (a tag from
 * the word's hash and the offset of its entry), the entries in one pool:
 * a hit touches the slot and the lines of one entry.  It starts small and
 * grows fourfold while it fills, so a fresh state's first pass touches only
 * the pages its words need; past its largest size it is cleared whole,
 * which keeps it bounded.  Lookups are inline: they are the hot path of a
 * warm encode.
 */
#ifndef TOK_WORDCACHE_H
#define TOK_WORDCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../base/buf.h"
#include "../base/hash.h"
#include "tokenizer.h"

/* Only words up to this many bytes are cached: longer ones are rarely
 * repeated and would crowd the pool.  A line of Chinese or Japanese is one
 * word of byte-level pre-tokenizers (\p{L}+), often 100-250 bytes: a
 * quarter of the bytes of the multi corpus lie in words of 128-256. */
#define TOK_WC_MAX_WORD 256

/* An entry in the pool: its key's length and number of ids (uint16_t
 * each, TOK_WC_HEAD bytes), its bytes and then its ids. */
#define TOK_WC_HEAD 4

/* A slot: a tag from the word's hash in its top byte (never 0) and the
 * offset of the word's entry in the pool below it (the pool is < 16 MB);
 * 0: empty.  Four bytes, not eight: a fresh state's first pass over a
 * megabyte touched 512 KB of slots, each page of them a fault (3-9 us of
 * wall clock here). */
typedef uint32_t tok_wc_slot_t;
#define TOK_WC_TAG 0xFF000000u
#define TOK_WC_OFF 0x00FFFFFFu

typedef struct tok_wordcache {
    tok_wc_slot_t *slots;
    size_t nslots; /* a power of two */
    size_t count;
    tb_buf_t pool;
} tok_wordcache_t;

/* A word of at most this many bytes (most of a text's) is hashed and
 * compared with an entry as two 64-bit halves read whole, with no loop
 * and no call: tb_hash's loop and memcmp each mispredicted a branch on
 * most words of an encode.  The pool keeps this many bytes readable past
 * its end, so a short entry's key is read whole too. */
#define TOK_WC_SHORT 16

/* A word as the cache looks it up. */
typedef struct {
    const uint8_t *w;
    size_t n;
    uint64_t h;      /* its hash, tb_hash(w, n) */
    uint64_t lo, hi; /* a short word's bytes 0-7 and 8-15, zero past n */
} tok_wc_key_t;

/* tok_wc_mask[n]: the bits of a short word's lo and hi that its n bytes
 * fill (little-endian: byte i at bits 8i). */
extern const uint64_t tok_wc_mask[TOK_WC_SHORT + 1][2];

/* The key of w[0..n), from which `room` bytes may be read (room >= n): a
 * short word with TOK_WC_SHORT of them, as a word inside a longer text
 * has, is read in two loads, one at the end of its text through a copy.
 * Its hash is tb_hash's, which the vocabulary's index is built with. */
static inline __attribute__((always_inline)) tok_wc_key_t
tok_wc_key(const uint8_t *w, size_t n, size_t room)
{
    tok_wc_key_t k = {w, n, 0, 0, 0};
    if (n > TOK_WC_SHORT) {
        k.h = tb_hash(w, n);
        return k;
    }
    if (room >= TOK_WC_SHORT) {
        k.lo = tb_load_le64(w);
        k.hi = tb_load_le64(w + 8);
    } else {
        uint8_t b[TOK_WC_SHORT] = {0};
        if (n)
            memcpy(b, w, n);
        k.lo = tb_load_le64(b);
        k.hi = tb_load_le64(b + 8);
    }
    k.lo &= tok_wc_mask[n][0];
    k.hi &= tok_wc_mask[n][1];
    k.h = tb_hash_short(k.lo, k.hi, n);
    return k;
}

/* The tag of hash h, in place in a slot: 7 of its top bits, and one. */
static inline uint32_t tok_wc_tag(uint64_t h)
{
    return ((uint32_t)(h >> 32) | 1u << 24) & TOK_WC_TAG;
}

/* The slot where a probe for the word of hash h starts. */
static inline size_t tok_wc_home(const tok_wordcache_t *c, uint64_t h)
{
    return (size_t)h & (c->nslots - 1);
}

static inline size_t tok_wc_key_len(const uint8_t *e)
{
    uint16_t n;
    memcpy(&n, e, sizeof n);
    return n;
}

static inline size_t tok_wc_nids(const uint8_t *e)
{
    uint16_t n;
    memcpy(&n, e + 2, sizeof n);
    return n;
}

/* Whether the pool's entry e is k's. */
static inline int tok_wc_holds(const uint8_t *e, const tok_wc_key_t *k)
{
    if (tok_wc_key_len(e) != k->n)
        return 0;
    if (k->n > TOK_WC_SHORT)
        return !memcmp(e + TOK_WC_HEAD, k->w, k->n);
    uint64_t lo = tb_load_le64(e + TOK_WC_HEAD), hi = tb_load_le64(e + TOK_WC_HEAD + 8);
    return !(((lo & tok_wc_mask[k->n][0]) ^ k->lo) | ((hi & tok_wc_mask[k->n][1]) ^ k->hi));
}

/* The slot holding k's word, or the empty one where it would go. */
static inline const tok_wc_slot_t *tok_wc_find(const tok_wordcache_t *c,
                                               const tok_wc_key_t *k)
{
    uint32_t tag = tok_wc_tag(k->h);
    size_t mask = c->nslots - 1, i = tok_wc_home(c, k->h);
    for (;;) {
        const tok_wc_slot_t *s = &c->slots[i];
        if (!*s || ((*s & TOK_WC_TAG) == tag && tok_wc_holds(c->pool.data + (*s & TOK_WC_OFF), k)))
            return s;
        i = (i + 1) & mask;
    }
}

/* Appends the ids cached for k's word to out: 1, or 0 when none are, or
 * -1 out of memory.  Up to four ids (most words) are copied as one
 * 16-byte move, which the pool's slack makes safe to read. */
static inline __attribute__((always_inline)) int
tok_wc_get(const tok_wordcache_t *c, const tok_wc_key_t *k, tok_ids_t *out)
{
    if (k->n > TOK_WC_MAX_WORD)
        return 0;
    const tok_wc_slot_t *s = tok_wc_find(c, k);
    if (!*s)
        return 0;
    const uint8_t *e = c->pool.data + (*s & TOK_WC_OFF);
    size_t nids = tok_wc_nids(e);
    if (tb_vec_reserve(out, nids > 4 ? nids : 4))
        return -1;
    const uint8_t *ids = e + TOK_WC_HEAD + k->n;
    if (nids <= 4)
        memcpy(out->data + out->len, ids, 4 * sizeof *out->data);
    else
        memcpy(out->data + out->len, ids, nids * sizeof *out->data);
    out->len += nids;
    return 1;
}

/* Makes an empty cache; -1 if out of memory. */
int tok_wc_init(tok_wordcache_t *c);
/* Remembers k's word -> ids; a word too long or a failure to remember is
 * harmless and ignored. */
void tok_wc_put(tok_wordcache_t *c, const tok_wc_key_t *k, const uint32_t *ids,
                size_t nids);
void tok_wc_free(tok_wordcache_t *c);

#endif
