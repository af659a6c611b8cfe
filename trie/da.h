/*
 * da: the double-array core that the `dat` and `xcda` layouts share (not
 * for use outside trie/).
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
 * with TRIE_DA_FREE, which no probe matches either.
 *
 * NUL bytes.  darts-clone keys are C strings: label 0 is the value unit.
 * Token vocabularies hold NUL bytes, even "\0\0" after the token "\0"
 * (o200k), so with `nul_far` set (the `dat` layout) the child along NUL
 * sits at base ^ 0x100, in the neighbouring block, with label bits 0; that
 * unit is reserved as a base so that no other node reads it as its value.
 * Without nul_far (charsmaps) a NUL byte never matches, as in darts-clone.
 *
 * Child chain.  trie_da_build_chain() fills `chain` after the build, one
 * 16-bit entry per unit beside the units (2 more bytes per unit, half
 * again the units' size): bits 0-7 the label of the unit's first child,
 * bits 8-15 the label of its next sibling (0: none; children come in label
 * order with NUL first, so a next sibling is never NUL).  A first label of
 * 0 on a node without a NUL child means no children: the probe of that
 * label fails.  The walk follows the chain where the recognizer allows many
 * bytes, so it reads a node's children, not 256 empty slots; lookups never
 * read it.  It is derived from the units alone, so a layout builds it only
 * when it is first walked (the `dat` layout's prepare_walk): an array that
 * is only looked up never pays its bytes.
 *
 * The builder places each node's children at a free "base", every base
 * used by one node only, so a matching label can only be the probing
 * node's own child.  Bases 0 and 0x100 stay unused (their NUL probes would
 * meet the root).  Arrays grow by blocks of 256 units; probes are still
 * range-checked, since a NUL probe and a blob read from a file may point
 * past the end.
 */
#ifndef TRIE_DA_H
#define TRIE_DA_H

#include <stddef.h>
#include <stdint.h>

#include "../base/bitset.h"
#include "../base/err.h"
#include "trie.h"

#define TRIE_DA_LEAF_BIT 0x80000000u
#define TRIE_DA_FREE TRIE_DA_LEAF_BIT
#define TRIE_DA_NUL_SLOT 0x100u

static inline uint32_t trie_da_offset(uint32_t u)
{
    return (u >> 10) << ((u & (1u << 9)) >> 6);
}

static inline int trie_da_has_leaf(uint32_t u)
{
    return (u >> 8) & 1;
}

/* The label as a child check compares it: a leaf unit never matches. */
static inline uint32_t trie_da_label(uint32_t u)
{
    return u & (TRIE_DA_LEAF_BIT | 0xFFu);
}

static inline uint32_t trie_da_value(uint32_t u)
{
    return u & ~TRIE_DA_LEAF_BIT;
}

/* trie_da_build flags. */
#define TRIE_DA_NUL_FAR 1 /* NUL children at base ^ TRIE_DA_NUL_SLOT */

typedef struct {
    uint32_t *units;
    uint16_t *chain;  /* n entries once trie_da_build_chain ran, else NULL */
    uint32_t root_kids; /* the root's children, counted with the chain */
    size_t n;         /* a multiple of 256 when built here */
    uint32_t max_len; /* the longest key */
    size_t nkeys;
    int nul_far;      /* NUL children at base ^ TRIE_DA_NUL_SLOT */
    int direct;       /* built here with nul_far, no extended offset and
                       * an even number of blocks: the trie_da_*_direct
                       * readers apply */
} trie_da_t;

/* Where the child of a node whose children are at `base` would be along
 * byte c; UINT32_MAX (past any array) for a NUL the array cannot hold. */
static inline uint32_t trie_da_slot(const trie_da_t *da, uint32_t base, uint8_t c)
{
    if (c == 0)
        return da->nul_far ? base ^ TRIE_DA_NUL_SLOT : UINT32_MAX;
    return base ^ c;
}

/* Builds the units for the sorted, unique keys, key i carrying values[i]
 * (below 2^31); `flags` is 0 or TRIE_DA_NUL_FAR.  Builds no chain.  Fails
 * on a NUL byte in a key unless TRIE_DA_NUL_FAR, or on an array too large
 * to encode its offsets. */
int trie_da_build(trie_da_t *da, const trie_key_t *keys, size_t n,
                  const uint32_t *values, int flags, tb_err_t *err);
void trie_da_free(trie_da_t *da);

/* Fills da->chain from the units (see "Child chain" above); does nothing if
 * there is one.  For arrays that trie_da_build made (every base owned by one
 * node).  Fails only for memory, leaving no chain. */
int trie_da_build_chain(trie_da_t *da, tb_err_t *err);

/* Value of exactly s[0..n), or -1. */
int64_t trie_da_lookup(const trie_da_t *da, const uint8_t *s, size_t n);
/* Values of the keys that are prefixes of s[0..n), shortest first (the
 * value goes in trie_match_t.id); writes at most max, returns the count. */
size_t trie_da_prefixes(const trie_da_t *da, const uint8_t *s, size_t n,
                        trie_match_t *out, size_t max);

/*
 * The readers for arrays with `direct` set (the dat layout's), inline so a
 * layout's lookup is one call, and short, since a lookup is a chain of
 * dependent loads: no unit has the extension bit (the array is below 2^21
 * units), so an offset is u >> 10; a NUL byte's slot comes from a table
 * (byte c -> c, NUL -> TRIE_DA_NUL_SLOT) beside the chain rather than on
 * it; and there is no range check: the builder leaves an even number of
 * blocks, so a NUL slot (the neighbouring block) and every other slot of a
 * node (its own block) lie inside the array.  One load per byte, as in
 * Darts, whose 8-byte units hold base and check together.
 */
extern const uint16_t trie_da_xor_of[256];

static inline int trie_da_direct_step(const uint32_t *units, uint32_t *node,
                                      uint32_t *u, uint8_t c)
{
    /* node ^ byte first, since it does not wait for the load of u; the
     * empty asm keeps the compiler from reassociating the XORs and putting
     * two of them after the load. */
    uint32_t k = *node ^ trie_da_xor_of[c];
    __asm__("" : "+r"(k));
    uint32_t p = k ^ (*u >> 10);
    uint32_t v = units[p];
    if ((v & (TRIE_DA_LEAF_BIT | 0xFFu)) != c)
        return 0;
    *node = p;
    *u = v;
    return 1;
}

static inline int64_t trie_da_direct_value(const uint32_t *units,
                                           uint32_t node, uint32_t u)
{
    if (!trie_da_has_leaf(u))
        return -1;
    return trie_da_value(units[node ^ (u >> 10)]);
}

static inline int64_t trie_da_lookup_direct(const trie_da_t *da,
                                            const uint8_t *s, size_t n)
{
    const uint32_t *units = da->units;
    uint32_t node = 0, u = units[0];
    for (size_t i = 0; i < n; i++)
        if (!trie_da_direct_step(units, &node, &u, s[i]))
            return -1;
    return n ? trie_da_direct_value(units, node, u) : -1;
}

static inline size_t trie_da_prefixes_direct(const trie_da_t *da,
                                             const uint8_t *s, size_t n,
                                             trie_match_t *out, size_t max)
{
    const uint32_t *units = da->units;
    uint32_t node = 0, u = units[0];
    size_t found = 0;
    for (size_t i = 0; i < n; i++) {
        if (!trie_da_direct_step(units, &node, &u, s[i]))
            break;
        int64_t v = trie_da_direct_value(units, node, u);
        if (v >= 0 && found++ < max)
            out[found - 1] = (trie_match_t){.id = (uint32_t)v,
                                            .len = (uint32_t)i + 1};
    }
    return found;
}

/* Length of the longest key that is a prefix of s[0..n), its value in
 * *value; 0 (value untouched) if there is none. */
size_t trie_da_longest(const trie_da_t *da, const uint8_t *s, size_t n,
                       uint32_t *value);

/* One level of a walk: the node, where its children are, the next label to
 * try (256: none left) and the labels the recognizer allows there; with
 * `chained` the next label is the next child along the chain, else the next
 * allowed label to probe. */
typedef struct {
    uint32_t node, base, next, chained;
    uint64_t allowed[4];
} trie_da_frame_t;

/* The mask walk (see trie_layout_t.walk), depth first over frames[0 ..
 * max_len]; values are the mask bits. */
uint64_t trie_da_walk(const trie_da_t *da, trie_da_frame_t *frames,
                      trie_rec_t *rec, tb_bitset_t *mask);

/* Structural checks from the root: every value unit in range and a leaf
 * with a value below `value_limit`, no node without children or value, the
 * child chain (where there is one) listing exactly each node's children, and
 * (unless nkeys is (size_t)-1) nkeys values in all.  With `shared` 0 every
 * unit must be reached once (a tree, as trie_da_build makes); with 1 units
 * may be reached from several parents, as in the arrays darts-clone builds
 * from a DAWG (SentencePiece's charsmaps share identical subtries). */
int trie_da_validate(const trie_da_t *da, size_t nkeys, uint32_t value_limit,
                     int shared, tb_err_t *err);

#endif
