/* hash: see hash.h.  The string hash mixes 8 bytes at a time with one
 * 64x64->128 multiply, which is plenty for token strings and fast. */
#include "hash.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"

/* Up to 16 bytes (most tokens and words) as tb_hash_short takes them,
 * read without passing len: whole words that overlap, shifted, or the
 * first, middle and last byte (which cover up to 3).  Bytes copied one by
 * one into a word on the stack cost a failed store forwarding on every
 * short token. */
static uint64_t hash_short(const uint8_t *p, size_t len)
{
    uint64_t lo = 0, hi = 0;
    if (len >= 8) {
        lo = tb_load_le64(p);
        hi = len > 8 ? tb_load_le64(p + len - 8) >> (8 * (16 - len)) : 0;
    } else if (len >= 4) {
        lo = tb_load_le32(p) | ((uint64_t)tb_load_le32(p + len - 4) >> (8 * (8 - len))) << 32;
    } else if (len) { /* p may be NULL when there is nothing to hash */
        lo = p[0] | (uint64_t)p[len / 2] << (8 * (len / 2)) |
             (uint64_t)p[len - 1] << (8 * (len - 1));
    }
    return tb_hash_short(lo, hi, len);
}

uint64_t tb_hash(const void *data, size_t len)
{
    const uint8_t *p = data;
    if (len <= 16)
        return hash_short(p, len);
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ len;
    while (len >= 8) {
        h = tb_hash_mix(h ^ tb_load_le64(p), 0xbf58476d1ce4e5b9ULL);
        p += 8;
        len -= 8;
    }
    uint64_t w = 0; /* the last 0-7 bytes: the 8 ending there, shifted */
    if (len)
        w = tb_load_le64(p + len - 8) >> (8 * (8 - len));
    return tb_hash_mix(h ^ w ^ ((uint64_t)len << 56), 0x94d049bb133111ebULL);
}

/* At most 2/3 full: with linear probing a miss then reads about five
 * slots, mostly in one cache line, and a table whose count falls between
 * 1/3 and 1/2 of a power of two takes half the memory it took at 1/2
 * (Llama 3's 280k merges: 2^19 slots, not 2^20). */
static int too_full(size_t count, size_t mask)
{
    return count * 3 > (mask + 1) * 2;
}

size_t tb_hash_table_size(size_t expected)
{
    size_t n = 16;
    while (n * 2 < expected * 3)
        n *= 2;
    return n;
}

int tb_strmap_init(tb_strmap_t *m, size_t expected)
{
    size_t n = tb_hash_table_size(expected);
    m->slots = tb_alloc_big(n * sizeof *m->slots);
    if (m->slots)
        memset(m->slots, 0, n * sizeof *m->slots);
    m->mask = n - 1;
    m->count = 0;
    return m->slots ? 0 : -1;
}

void tb_strmap_free(tb_strmap_t *m)
{
    free(m->slots);
    m->slots = NULL;
}

/* An empty key must still be a non-NULL pointer to mark its slot used. */
static const uint8_t empty_key;

static uint32_t tag_of(uint64_t h) { return (uint32_t)(h >> 32); }

static int slot_holds(const tb_strmap_slot_t *s, const uint8_t *key,
                      size_t len, uint32_t tag)
{
    return s->tag == tag && s->len == len && tb_same_bytes(s->key, key, len);
}

/* The slot of key (hash h), or the empty slot where it would go, probing
 * from slot i on (no slot between h's own and i holds the key). */
static tb_strmap_slot_t *strmap_find_from(const tb_strmap_t *m, const uint8_t *key,
                                          size_t len, uint64_t h, size_t i)
{
    i &= m->mask;
    uint32_t tag = tag_of(h);
    for (;;) {
        tb_strmap_slot_t *s = &m->slots[i];
        if (!s->key || slot_holds(s, key, len, tag))
            return s;
        i = (i + 1) & m->mask;
    }
}

static tb_strmap_slot_t *strmap_find(const tb_strmap_t *m, const uint8_t *key,
                                     size_t len, uint64_t h)
{
    return strmap_find_from(m, key, len, h, (size_t)h);
}

static int strmap_rehash(tb_strmap_t *m)
{
    tb_strmap_t bigger;
    if (tb_strmap_init(&bigger, (m->mask + 1)))
        return -1;
    for (size_t i = 0; i <= m->mask; i++) {
        const tb_strmap_slot_t *s = &m->slots[i];
        if (s->key)
            *strmap_find(&bigger, s->key, s->len, tb_hash(s->key, s->len)) = *s;
    }
    bigger.count = m->count;
    free(m->slots);
    *m = bigger;
    return 0;
}

/* Puts key (hash h) into a map with room for it. */
static int strmap_put_hashed(tb_strmap_t *m, const uint8_t *key, size_t len,
                             uint64_t h, int32_t val)
{
    key = len ? key : &empty_key;
    tb_strmap_slot_t *s = strmap_find(m, key, len, h);
    if (s->key)
        return 1;
    *s = (tb_strmap_slot_t){.key = key, .len = (uint32_t)len, .val = val,
                            .tag = tag_of(h)};
    m->count++;
    return 0;
}

int tb_strmap_put(tb_strmap_t *m, const uint8_t *key, size_t len, int32_t val)
{
    if (too_full(m->count + 1, m->mask) && strmap_rehash(m))
        return -1;
    return strmap_put_hashed(m, key, len, tb_hash(key, len), val);
}

enum { STEP = 32 }; /* keys of a batch, whose cache misses overlap */

long tb_strmap_put_all(tb_strmap_t *m, size_t n, tb_strmap_item_fn item,
                       const void *arg)
{
    const uint8_t *keys[STEP];
    size_t lens[STEP];
    int32_t vals[STEP];
    uint64_t h[STEP];
    long there = 0;
    for (size_t at = 0; at < n;) {
        size_t k = 0;
        for (; k < STEP && at < n; at++)
            k += item(arg, at, &keys[k], &lens[k], &vals[k]) != 0;
        while (too_full(m->count + k, m->mask))
            if (strmap_rehash(m))
                return -1;
        for (size_t i = 0; i < k; i++) {
            h[i] = tb_hash(keys[i], lens[i]);
            __builtin_prefetch(&m->slots[(size_t)h[i] & m->mask]);
        }
        for (size_t i = 0; i < k; i++)
            there += strmap_put_hashed(m, keys[i], lens[i], h[i], vals[i]);
    }
    return there;
}

int32_t tb_strmap_get(const tb_strmap_t *m, const uint8_t *key, size_t len)
{
    key = len ? key : &empty_key;
    const tb_strmap_slot_t *s = strmap_find(m, key, len, tb_hash(key, len));
    return s->key ? s->val : -1;
}

void tb_strmap_get_many(const tb_strmap_t *m, size_t n,
                        const uint8_t *const *keys, const size_t *lens,
                        int32_t *vals)
{
    uint64_t h[STEP];
    size_t first[STEP];
    for (size_t at = 0; at < n; at += STEP) {
        size_t k = n - at < STEP ? n - at : STEP;
        for (size_t i = 0; i < k; i++) {
            h[i] = tb_hash(keys[at + i], lens[at + i]);
            __builtin_prefetch(&m->slots[(size_t)h[i] & m->mask]);
        }
        /* the key of the first slot with the right tag is most likely
         * the one: fetch it before any comparison waits on it, and start
         * the comparisons there (the slots before it hold other keys) */
        for (size_t i = 0; i < k; i++) {
            size_t j = (size_t)h[i] & m->mask;
            while (m->slots[j].key && m->slots[j].tag != tag_of(h[i]))
                j = (j + 1) & m->mask;
            if (m->slots[j].key)
                __builtin_prefetch(m->slots[j].key);
            first[i] = j;
        }
        for (size_t i = 0; i < k; i++) {
            const uint8_t *key = lens[at + i] ? keys[at + i] : &empty_key;
            const tb_strmap_slot_t *s = &m->slots[first[i]];
            if (s->key && !slot_holds(s, key, lens[at + i], tag_of(h[i])))
                s = strmap_find_from(m, key, lens[at + i], h[i], first[i] + 1);
            vals[at + i] = s->key ? s->val : -1;
        }
    }
}

int tb_u64map_init(tb_u64map_t *m, size_t expected)
{
    size_t n = tb_hash_table_size(expected);
    m->keys = tb_alloc_big(n * sizeof *m->keys);
    m->vals = tb_alloc_big(n * sizeof *m->vals);
    m->mask = n - 1;
    m->count = 0;
    if (!m->keys || !m->vals) {
        tb_u64map_free(m);
        return -1;
    }
    memset(m->keys, 0xff, n * sizeof *m->keys);
    return 0;
}

void tb_u64map_free(tb_u64map_t *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = m->vals = NULL;
}

static int u64map_rehash(tb_u64map_t *m)
{
    tb_u64map_t bigger;
    if (tb_u64map_init(&bigger, m->mask + 1))
        return -1;
    for (size_t i = 0; i <= m->mask; i++)
        if (m->keys[i] != UINT64_MAX)
            tb_u64map_put(&bigger, m->keys[i], m->vals[i]);
    tb_u64map_free(m);
    *m = bigger;
    return 0;
}

int tb_u64map_put(tb_u64map_t *m, uint64_t key, uint64_t val)
{
    if (too_full(m->count + 1, m->mask) && u64map_rehash(m))
        return -1;
    size_t i = (size_t)tb_hash_u64(key) & m->mask;
    while (m->keys[i] != UINT64_MAX) {
        if (m->keys[i] == key)
            return 1;
        i = (i + 1) & m->mask;
    }
    m->keys[i] = key;
    m->vals[i] = val;
    m->count++;
    return 0;
}
