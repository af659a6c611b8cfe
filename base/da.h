/*
 * da: a double array in the darts-clone format, built from sorted keys and
 * read by exact lookup, common-prefix search and longest match.  In base so
 * that every layer can share one: the tokenizers' Unigram prefix index and
 * the `dat` and `xcda` trie layouts (which add their walk in trie/da.h).
 *
 * Units are 32 bits in the darts-clone format (darts-clone's
 * DoubleArrayUnit; SentencePiece's precompiled charsmap stores the same):
 *   bits 0-7    label: the byte on the edge into this unit
 *   bit  8      has_leaf: a key ends here; its value sits in the unit at
 *               child(node, 0), i.e. node ^ offset
 *   bit  9      extension: the offset field is to be shifted left by 8
 *   bits 10-31  offset
 *   a leaf unit instead holds bit 31 set and the value in bits 0-30.
 * The child of `node` along byte c is node ^ offset(node) ^ c, and it is
 * there only if that unit's label bits, read together with bit 31, equal c.
 * Bit 31 keeps a leaf unit from passing for a child; free units are filled
 * with TB_DA_FREE, which no probe matches either.
 *
 * NUL bytes.  darts-clone keys are C strings: label 0 is the value unit.
 * Token vocabularies hold NUL bytes, even "\0\0" after the token "\0"
 * (o200k), so with `nul_far` set (the `dat` layout, the Unigram index) the
 * child along NUL sits at base ^ 0x100, in the neighbouring block, with
 * label bits 0; that unit is reserved as a base so that no other node reads
 * it as its value.  Without nul_far (charsmaps) a NUL byte never matches,
 * as in darts-clone.
 *
 * The builder places each node's children at a free "base", every base
 * used by one node only, so a matching label can only be the probing
 * node's own child.  Bases 0 and 0x100 stay unused (their NUL probes would
 * meet the root).  Arrays grow by blocks of 256 units; probes are still
 * range-checked, since a NUL probe and a blob read from a file may point
 * past the end.
 */
#ifndef TB_DA_H
#define TB_DA_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define TB_DA_LEAF_BIT 0x80000000u
#define TB_DA_FREE TB_DA_LEAF_BIT
#define TB_DA_NUL_SLOT 0x100u

static inline uint32_t tb_da_offset(uint32_t u)
{
    return (u >> 10) << ((u & (1u << 9)) >> 6);
}

static inline int tb_da_has_leaf(uint32_t u)
{
    return (u >> 8) & 1;
}

/* The label as a child check compares it: a leaf unit never matches. */
static inline uint32_t tb_da_label(uint32_t u)
{
    return u & (TB_DA_LEAF_BIT | 0xFFu);
}

static inline uint32_t tb_da_value(uint32_t u)
{
    return u & ~TB_DA_LEAF_BIT;
}

/* tb_da_build flags. */
#define TB_DA_NUL_FAR 1 /* NUL children at base ^ TB_DA_NUL_SLOT */

/* A key to build from: s[0..len), carrying value (below 2^31). */
typedef struct {
    const uint8_t *s;
    uint32_t len;
    uint32_t value;
} tb_da_key_t;

/* A key found in a text: its value and its length (it is text[0..len)).
 * The field is `id` since the values are token ids wherever this is read
 * (trie_match_t is this type). */
typedef struct {
    uint32_t id;
    uint32_t len;
} tb_da_match_t;

typedef struct {
    uint32_t *units;
    size_t n;         /* a multiple of 256 when built here */
    uint32_t max_len; /* the longest key */
    size_t nkeys;
    int nul_far;      /* NUL children at base ^ TB_DA_NUL_SLOT */
    int shifted;      /* keys in the shifted alphabet (below): the readers
                       * encode, one or two labels per byte; set by the
                       * caller that built it from encoded keys */
    int direct;       /* built here with nul_far, no extended offset and
                       * an even number of blocks: the tb_da_*_direct
                       * readers apply */
} tb_da_t;

/* Where the child of a node whose children are at `base` would be along
 * byte c; UINT32_MAX (past any array) for a NUL the array cannot hold. */
static inline uint32_t tb_da_slot(const tb_da_t *da, uint32_t base, uint8_t c)
{
    if (c == 0)
        return da->nul_far ? base ^ TB_DA_NUL_SLOT : UINT32_MAX;
    return base ^ c;
}

/* The value of the node whose unit is u, or -1. */
static inline int64_t tb_da_value_of(const tb_da_t *da, uint32_t node,
                                     uint32_t u)
{
    uint32_t p = node ^ tb_da_offset(u);
    if (!tb_da_has_leaf(u) || p >= da->n)
        return -1;
    return tb_da_value(da->units[p]);
}

/* The child of `node` (whose unit is *u) along byte c: its index, *u
 * then its unit; 0 (the root, never a child) if there is none. */
static inline uint32_t tb_da_step(const tb_da_t *da, uint32_t node, uint32_t *u,
                                  uint8_t c)
{
    uint32_t p = tb_da_slot(da, node ^ tb_da_offset(*u), c);
    if (p >= da->n)
        return 0;
    uint32_t v = da->units[p];
    if (tb_da_label(v) != c)
        return 0;
    *u = v;
    return p;
}

/*
 * The shifted alphabet, for arrays that may not hold a NUL label (the
 * charsmap format of `xcda`, whose keys are NUL-terminated): key byte b is
 * stored as label b + 1 for b up to 0xFD, and 0xFE and 0xFF as two labels,
 * TB_DA_ESC then 1 or 2.  The code is prefix-free and keeps byte order,
 * so the encoded keys are sorted and unique as the keys were, prefixes stay
 * prefixes, and every node of the array but the escape nodes (reached by
 * TB_DA_ESC from a node that is not one) stands for a byte of a key.  The
 * builder takes keys already encoded (tb_da_shift); the readers of an array
 * with `shifted` set encode the bytes they are given, one or two steps per
 * byte, and count lengths in bytes; trie/da's walk decodes labels.
 */
#define TB_DA_ESC 0xFFu

/* The labels of byte b: *n of them (1 or 2) in l[0..*n). */
static inline void tb_da_shift(uint8_t b, uint8_t l[2], unsigned *n)
{
    if (b < 0xFE) {
        l[0] = (uint8_t)(b + 1);
        *n = 1;
    } else {
        l[0] = TB_DA_ESC;
        l[1] = (uint8_t)(b - 0xFD);
        *n = 2;
    }
}

/* Builds the units for the n keys, sorted by their bytes and unique;
 * `flags` is 0 or TB_DA_NUL_FAR.  Fails on a value of 2^31 or more, on a
 * NUL byte in a key unless TB_DA_NUL_FAR, or on an array too large to
 * encode its offsets. */
int tb_da_build(tb_da_t *da, const tb_da_key_t *keys, size_t n, int flags,
                tb_err_t *err);
void tb_da_free(tb_da_t *da);

/* Value of exactly s[0..n), or -1. */
int64_t tb_da_lookup(const tb_da_t *da, const uint8_t *s, size_t n);
/* Values of the keys that are prefixes of s[0..n), shortest first; writes
 * at most max, returns the count (which may be more than max). */
size_t tb_da_prefixes(const tb_da_t *da, const uint8_t *s, size_t n,
                      tb_da_match_t *out, size_t max);
/* Length of the longest key that is a prefix of s[0..n), its value in
 * *value; 0 (value untouched) if there is none. */
size_t tb_da_longest(const tb_da_t *da, const uint8_t *s, size_t n,
                     uint32_t *value);

/*
 * The readers for arrays with `direct` set, inline so a lookup is one
 * call, and short, since a lookup is a chain of dependent loads: no unit
 * has the extension bit (the array is below 2^21 units), so an offset is
 * u >> 10; a NUL byte's slot comes from a table (byte c -> c, NUL ->
 * TB_DA_NUL_SLOT) beside the chain rather than on it; and there is no
 * range check: the builder leaves an even number of blocks, so a NUL slot
 * (the neighbouring block) and every other slot of a node (its own block)
 * lie inside the array.  One load per byte, as in Darts, whose 8-byte units
 * hold base and check together.
 */
extern const uint16_t tb_da_xor_of[256];

static inline int tb_da_direct_step(const uint32_t *units, uint32_t *node,
                                    uint32_t *u, uint8_t c)
{
    /* node ^ byte first, since it does not wait for the load of u; the
     * empty asm keeps the compiler from reassociating the XORs and putting
     * two of them after the load. */
    uint32_t k = *node ^ tb_da_xor_of[c];
    __asm__("" : "+r"(k));
    uint32_t p = k ^ (*u >> 10);
    uint32_t v = units[p];
    if ((v & (TB_DA_LEAF_BIT | 0xFFu)) != c)
        return 0;
    *node = p;
    *u = v;
    return 1;
}

static inline int64_t tb_da_direct_value(const uint32_t *units, uint32_t node,
                                         uint32_t u)
{
    if (!tb_da_has_leaf(u))
        return -1;
    return tb_da_value(units[node ^ (u >> 10)]);
}

static inline int64_t tb_da_lookup_direct(const tb_da_t *da, const uint8_t *s,
                                          size_t n)
{
    const uint32_t *units = da->units;
    uint32_t node = 0, u = units[0];
    for (size_t i = 0; i < n; i++)
        if (!tb_da_direct_step(units, &node, &u, s[i]))
            return -1;
    return n ? tb_da_direct_value(units, node, u) : -1;
}

static inline size_t tb_da_prefixes_direct(const tb_da_t *da, const uint8_t *s,
                                           size_t n, tb_da_match_t *out,
                                           size_t max)
{
    const uint32_t *units = da->units;
    uint32_t node = 0, u = units[0];
    size_t found = 0;
    for (size_t i = 0; i < n; i++) {
        if (!tb_da_direct_step(units, &node, &u, s[i]))
            break;
        int64_t v = tb_da_direct_value(units, node, u);
        if (v >= 0 && found++ < max)
            out[found - 1] = (tb_da_match_t){.id = (uint32_t)v,
                                             .len = (uint32_t)i + 1};
    }
    return found;
}

#endif
