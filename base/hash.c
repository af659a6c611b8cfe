/* hash: see hash.h.  The string hash mixes 8 bytes at a time with one
 * 64x64->128 multiply, which is plenty for token strings and fast. */
#include "hash.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t a, uint64_t b)
{
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

uint64_t tb_hash(const void *data, size_t len)
{
    const uint8_t *p = data;
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ len;
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = mix(h ^ w, 0xbf58476d1ce4e5b9ULL);
        p += 8;
        len -= 8;
    }
    uint64_t w = 0;
    if (len) /* p may be NULL when there is nothing to hash */
        memcpy(&w, p, len);
    return mix(h ^ w ^ ((uint64_t)len << 56), 0x94d049bb133111ebULL);
}

static size_t table_size(size_t expected)
{
    size_t n = 16;
    while (n < expected * 2)
        n *= 2;
    return n;
}

int tb_strmap_init(tb_strmap_t *m, size_t expected)
{
    size_t n = table_size(expected);
    m->slots = calloc(n, sizeof *m->slots);
    m->mask = n - 1;
    m->count = 0;
    return m->slots ? 0 : -1;
}

void tb_strmap_free(tb_strmap_t *m)
{
    free(m->slots);
    m->slots = NULL;
}

static tb_strmap_slot_t *strmap_find(const tb_strmap_t *m, const uint8_t *key,
                                     size_t len)
{
    size_t i = (size_t)tb_hash(key, len) & m->mask;
    for (;;) {
        tb_strmap_slot_t *s = &m->slots[i];
        if (!s->key || (s->len == len && memcmp(s->key, key, len) == 0))
            return s;
        i = (i + 1) & m->mask;
    }
}

static int strmap_rehash(tb_strmap_t *m)
{
    tb_strmap_t bigger;
    if (tb_strmap_init(&bigger, (m->mask + 1)))
        return -1;
    for (size_t i = 0; i <= m->mask; i++)
        if (m->slots[i].key)
            *strmap_find(&bigger, m->slots[i].key, m->slots[i].len) = m->slots[i];
    bigger.count = m->count;
    free(m->slots);
    *m = bigger;
    return 0;
}

int tb_strmap_put(tb_strmap_t *m, const uint8_t *key, size_t len, int32_t val)
{
    if ((m->count + 1) * 2 > m->mask + 1 && strmap_rehash(m))
        return -1;
    /* An empty key must still be a non-NULL pointer to mark the slot used. */
    static const uint8_t empty;
    tb_strmap_slot_t *s = strmap_find(m, len ? key : &empty, len);
    if (s->key)
        return 1;
    s->key = len ? key : &empty;
    s->len = (uint32_t)len;
    s->val = val;
    m->count++;
    return 0;
}

int32_t tb_strmap_get(const tb_strmap_t *m, const uint8_t *key, size_t len)
{
    static const uint8_t empty;
    const tb_strmap_slot_t *s = strmap_find(m, len ? key : &empty, len);
    return s->key ? s->val : -1;
}

int tb_u64map_init(tb_u64map_t *m, size_t expected)
{
    size_t n = table_size(expected);
    m->keys = malloc(n * sizeof *m->keys);
    m->vals = malloc(n * sizeof *m->vals);
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
    if ((m->count + 1) * 2 > m->mask + 1 && u64map_rehash(m))
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
