/*
 * hash: a fast non-cryptographic hash and two open-addressing maps built on
 * it, the ones several modules need:
 *   tb_strmap_t  byte string -> int32 (keys are borrowed: they must outlive
 *                the map, as token bytes in a vocabulary do);
 *   tb_u64map_t  64-bit key -> 64-bit value (e.g. a BPE pair -> merge).
 * Both use linear probing at load factor <= 2/3 and never delete.
 */
#ifndef TB_HASH_H
#define TB_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

uint64_t tb_hash(const void *data, size_t len);

/* a * b folded to 64 bits (high half xor low): tb_hash's one step. */
static inline uint64_t tb_hash_mix(uint64_t a, uint64_t b)
{
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* tb_hash of a string of len <= 16 bytes given as its bytes, zero past
 * len, in two little-endian words (byte i of lo at bits 8i, byte 8 + i of
 * hi): for a caller that holds a short key whole, as a word read in two
 * loads (wordcache.h), and hashes it with no loop and no branch. */
static inline uint64_t tb_hash_short(uint64_t lo, uint64_t hi, size_t len)
{
    return tb_hash_mix(tb_hash_mix(lo ^ len * 0x9E3779B97F4A7C15ull, 0xbf58476d1ce4e5b9ull) ^ hi,
                       0x94d049bb133111ebull);
}

/* The 8 and 4 bytes at p as little-endian numbers. */
static inline uint64_t tb_load_le64(const void *p)
{
    uint64_t x;
    memcpy(&x, p, sizeof x);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    return x;
}

static inline uint32_t tb_load_le32(const void *p)
{
    uint32_t x;
    memcpy(&x, p, sizeof x);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    x = __builtin_bswap32(x);
#endif
    return x;
}

/* a[0..len) == b[0..len), tokens (mostly under 9 bytes) compared in
 * place rather than through a call of memcmp */
static inline int tb_same_bytes(const uint8_t *a, const uint8_t *b, size_t len)
{
    if (len > 8)
        return memcmp(a, b, len) == 0;
    if (len >= 4) { /* first and last four bytes cover them all */
        uint32_t a0, a1, b0, b1;
        memcpy(&a0, a, 4);
        memcpy(&b0, b, 4);
        memcpy(&a1, a + len - 4, 4);
        memcpy(&b1, b + len - 4, 4);
        return a0 == b0 && a1 == b1;
    }
    for (size_t i = 0; i < len; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

static inline uint64_t tb_hash_u64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* The slots (a power of two) of a table of `expected` keys at most 2/3
 * full, as both maps here size themselves. */
size_t tb_hash_table_size(size_t expected);

/* A slot keeps the high half of its key's hash: a probe that meets another
 * key is told so by the tag nearly always, without reading that key (a
 * cache miss when the keys lie all over a vocabulary file). */
typedef struct {
    const uint8_t *key;
    uint32_t len;
    int32_t val;
    uint32_t tag;
} tb_strmap_slot_t;

typedef struct {
    tb_strmap_slot_t *slots; /* key == NULL marks an empty slot */
    size_t mask, count;
} tb_strmap_t;

int tb_strmap_init(tb_strmap_t *m, size_t expected);
void tb_strmap_free(tb_strmap_t *m);
/* Inserts key -> val.  If the key is there already, keeps the old value and
 * returns 1; returns 0 on insert and -1 on allocation failure. */
int tb_strmap_put(tb_strmap_t *m, const uint8_t *key, size_t len, int32_t val);
/* Item i of a batch of puts: its key (len bytes) and value; returns 0 to
 * leave the item out. */
typedef int (*tb_strmap_item_fn)(const void *arg, size_t i, const uint8_t **key,
                                 size_t *len, int32_t *val);
/* tb_strmap_put of items 0 .. n-1 in order, the slots of many fetched at
 * once (see tb_strmap_get_many).  Returns how many keys were there already
 * (and kept their values), or -1 on allocation failure. */
long tb_strmap_put_all(tb_strmap_t *m, size_t n, tb_strmap_item_fn item,
                       const void *arg);
/* Value for key, or -1 if absent. */
int32_t tb_strmap_get(const tb_strmap_t *m, const uint8_t *key, size_t len);
/* tb_strmap_get of keys[i] (lens[i] bytes) into vals[i] for i < n: the
 * slots of all are fetched, then the keys they hold, then compared, so the
 * cache misses of many lookups overlap instead of following each other. */
void tb_strmap_get_many(const tb_strmap_t *m, size_t n,
                        const uint8_t *const *keys, const size_t *lens,
                        int32_t *vals);

typedef struct {
    uint64_t *keys; /* UINT64_MAX marks an empty slot: never a valid key */
    uint64_t *vals;
    size_t mask, count;
} tb_u64map_t;

int tb_u64map_init(tb_u64map_t *m, size_t expected);
void tb_u64map_free(tb_u64map_t *m);
/* Same contract as tb_strmap_put; key must not be UINT64_MAX. */
int tb_u64map_put(tb_u64map_t *m, uint64_t key, uint64_t val);
/* Starts fetching the slot of key, for a put or get soon after.  A macro:
 * gcc 12 takes a function that only prefetches for one without effects
 * and drops its calls before it would inline them. */
#define tb_u64map_prefetch(m, key)                                           \
    do {                                                                     \
        size_t tb_at_ = (size_t)tb_hash_u64(key) & (m)->mask;                \
        __builtin_prefetch(&(m)->keys[tb_at_]);                              \
        __builtin_prefetch(&(m)->vals[tb_at_]);                              \
    } while (0)

/* Returns 1 and fills *val if present, else 0. */
static inline int tb_u64map_get(const tb_u64map_t *m, uint64_t key, uint64_t *val)
{
    size_t i = (size_t)tb_hash_u64(key) & m->mask;
    for (;;) {
        uint64_t k = m->keys[i];
        if (k == key) {
            *val = m->vals[i];
            return 1;
        }
        if (k == UINT64_MAX)
            return 0;
        i = (i + 1) & m->mask;
    }
}

#endif
