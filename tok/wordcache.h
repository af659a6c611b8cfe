/*
 * wordcache: a tokenizer state's memory of the words it has encoded, word
 * bytes -> ids, for the models whose words a text repeats (BPE merges,
 * WordPiece covers).  Open addressing over slots of 8 bytes (a tag from
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

typedef struct {
    uint32_t tag; /* high half of the word's hash, never 0; 0: empty */
    uint32_t off; /* into pool: the word's entry */
} tok_wc_slot_t;

typedef struct tok_wordcache {
    tok_wc_slot_t *slots;
    size_t nslots; /* a power of two */
    size_t count;
    tb_buf_t pool;
} tok_wordcache_t;

/* The cache's hash of w[0..n), 0 for a word too long to cache. */
static inline uint64_t tok_wc_hash(const uint8_t *w, size_t n)
{
    return n <= TOK_WC_MAX_WORD ? tb_hash(w, n) : 0;
}

static inline uint32_t tok_wc_tag(uint64_t h)
{
    return (uint32_t)(h >> 32) | 1;
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

/* The slot holding w[0..n) (hash h), or the empty one where it would go. */
static inline const tok_wc_slot_t *tok_wc_find(const tok_wordcache_t *c,
                                               const uint8_t *w, size_t n,
                                               uint64_t h)
{
    uint32_t tag = tok_wc_tag(h);
    size_t mask = c->nslots - 1, i = tok_wc_home(c, h);
    for (;;) {
        const tok_wc_slot_t *s = &c->slots[i];
        if (!s->tag)
            return s;
        if (s->tag == tag && tok_wc_key_len(c->pool.data + s->off) == n &&
            !memcmp(c->pool.data + s->off + TOK_WC_HEAD, w, n))
            return s;
        i = (i + 1) & mask;
    }
}

/* Appends the ids cached for w[0..n) (hash h) to out: 1, or 0 when none
 * are, or -1 out of memory. */
static inline int tok_wc_get(const tok_wordcache_t *c, const uint8_t *w,
                             size_t n, uint64_t h, tok_ids_t *out)
{
    if (n > TOK_WC_MAX_WORD)
        return 0;
    const tok_wc_slot_t *s = tok_wc_find(c, w, n, h);
    if (!s->tag)
        return 0;
    const uint8_t *e = c->pool.data + s->off;
    return tb_vec_append(out, e + TOK_WC_HEAD + n, tok_wc_nids(e)) ? -1 : 1;
}

/* Makes an empty cache; -1 if out of memory. */
int tok_wc_init(tok_wordcache_t *c);
/* Remembers w[0..n) (hash h) -> ids; a word too long or a failure to
 * remember is harmless and ignored. */
void tok_wc_put(tok_wordcache_t *c, const uint8_t *w, size_t n, uint64_t h,
                const uint32_t *ids, size_t nids);
void tok_wc_free(tok_wordcache_t *c);

#endif
