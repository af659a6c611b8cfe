/*
 * wordcache: the growing and clearing of a state's word cache; lookups are
 * inline in wordcache.h, which says how it is laid out.
 */
#include "wordcache.h"

#include <stdlib.h>

/* 1 MB of slots at most, at most half used. */
#define MAX_SLOTS (1u << 18)
/* The slots a state starts with, four times as many each time the cache
 * fills: a fresh state's first pass over a text touches only the pages
 * its words need (on this KVM guest a page's first touch costs 3 us of
 * CPU, 5-10 of wall clock: 768 of them, a tenth of a first megabyte's
 * encode, for slots that were mostly empty), and the tables it outgrows
 * are pages touched too (doubling, they came to as much as the last). */
#define FIRST_SLOTS (1u << 12)
#define GROWTH 4
#define MAX_POOL ((size_t)8 << 20)
_Static_assert(MAX_POOL <= TOK_WC_OFF, "a slot's offset has 24 bits");

const uint64_t tok_wc_mask[TOK_WC_SHORT + 1][2] = {
    {0, 0},
    {0xFFull, 0},
    {0xFFFFull, 0},
    {0xFFFFFFull, 0},
    {0xFFFFFFFFull, 0},
    {0xFFFFFFFFFFull, 0},
    {0xFFFFFFFFFFFFull, 0},
    {0xFFFFFFFFFFFFFFull, 0},
    {~0ull, 0},
    {~0ull, 0xFFull},
    {~0ull, 0xFFFFull},
    {~0ull, 0xFFFFFFull},
    {~0ull, 0xFFFFFFFFull},
    {~0ull, 0xFFFFFFFFFFull},
    {~0ull, 0xFFFFFFFFFFFFull},
    {~0ull, 0xFFFFFFFFFFFFFFull},
    {~0ull, ~0ull},
};

int tok_wc_init(tok_wordcache_t *c)
{
    memset(c, 0, sizeof *c);
    c->nslots = FIRST_SLOTS;
    c->slots = calloc(c->nslots, sizeof *c->slots);
    return c->slots ? 0 : -1;
}

void tok_wc_free(tok_wordcache_t *c)
{
    free(c->slots);
    tb_buf_free(&c->pool);
    memset(c, 0, sizeof *c);
}

static void clear(tok_wordcache_t *c)
{
    memset(c->slots, 0, c->nslots * sizeof *c->slots);
    c->count = 0;
    c->pool.len = 0;
}

/* GROWTH times the slots, the words moved over (their hashes taken again
 * from the pool); -1 if out of memory, the cache as it was. */
static int grow(tok_wordcache_t *c)
{
    tok_wc_slot_t *old = c->slots;
    size_t n = c->nslots;
    if (!(c->slots = calloc(GROWTH * n, sizeof *c->slots))) {
        c->slots = old;
        return -1;
    }
    c->nslots = GROWTH * n;
    for (size_t i = 0; i < n; i++) {
        if (!old[i])
            continue;
        size_t off = old[i] & TOK_WC_OFF;
        const uint8_t *e = c->pool.data + off;
        tok_wc_key_t k = tok_wc_key(e + TOK_WC_HEAD, tok_wc_key_len(e),
                                    c->pool.cap - off - TOK_WC_HEAD);
        *(tok_wc_slot_t *)tok_wc_find(c, &k) = old[i];
    }
    free(old);
    return 0;
}

void tok_wc_put(tok_wordcache_t *c, const tok_wc_key_t *k, const uint32_t *ids,
                size_t nids)
{
    size_t n = k->n, need = TOK_WC_HEAD + n + nids * sizeof *ids;
    uint16_t head[2] = {(uint16_t)n, (uint16_t)nids};
    if (n > TOK_WC_MAX_WORD || nids > UINT16_MAX)
        return;
    if (c->count >= c->nslots / 2 && c->nslots < MAX_SLOTS)
        grow(c); /* if it cannot, the cache is cleared when full */
    if (c->count >= c->nslots / 2 || c->pool.len + need > MAX_POOL)
        clear(c);
    if (tb_buf_reserve(&c->pool, need + TOK_WC_SHORT)) /* the slack tok_wc_get reads */
        return;
    tok_wc_slot_t *s = (tok_wc_slot_t *)tok_wc_find(c, k);
    *s = tok_wc_tag(k->h) | (uint32_t)c->pool.len;
    tb_buf_put(&c->pool, head, TOK_WC_HEAD);
    tb_buf_put(&c->pool, k->w, n);
    tb_buf_put(&c->pool, ids, nids * sizeof *ids);
    c->count++;
}
