/*
 * maskcache: token masks kept per grammar state, so that a mask asked for
 * again costs a copy instead of a walk of the trie.
 *
 * A grammar's states are hash-consed and never change once made (gram.h),
 * so the mask at state s depends on s and on the tokens walked, nothing
 * else: a cache keyed by the state id is exact for one grammar and one
 * trie (or slicer over the same keys).  Long strings are where it pays: a
 * string's body leaves the lexer and the parser where they were, so every
 * token inside it reaches the state the one before reached.  The cache is
 * the caller's, never the grammar's, because the mask also depends on the
 * trie; it notices a grammar reset (gr_gram_reset renumbers states) by the
 * grammar's epoch and empties itself.
 *
 * A mask is kept the second time its state misses: most states of a
 * schema's object are met once (the properties seen so far are part of
 * the state), and keeping a mask costs a copy of its words (or a pass
 * over them, once memory grows short), a good part of a cheap walk; a
 * state met twice is likely met again.  The matcher keeps a mask at once
 * where the state is inside a string's body (a slice was taken whole,
 * slicer.h), since a token there mostly leaves the state where it was,
 * and where the walk visited more nodes than a quarter of the mask's
 * words, which costs more than keeping it.
 *
 * Memory is bounded by max_bytes of entries and index (the vectors' slack
 * aside): an entry that would pass it empties the cache first (a flush;
 * counted), which keeps the policy simple, at the price of the hot entries
 * made again after a flush.
 * A mask is stored as the words that differ from zeros or from a base mask
 * the caller names (a slicer's union of slices: a mask inside a string is
 * mostly that), with a bitmap of which, where at most three in four do,
 * else as its words, while the cache holds less than a quarter of
 * max_bytes; then in the smallest of the ids set, the ids clear (a mask
 * that allows almost everything) or those.
 */
#ifndef GR_MASKCACHE_H
#define GR_MASKCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "../base/bitset.h"
#include "../base/buf.h"
#include "gram.h"

#define GR_MASKCACHE_DEFAULT_BYTES ((size_t)64 << 20)

typedef struct {
    uint64_t hits, misses, flushes;
    uint64_t against_base; /* masks kept as their words that differ from the base */
} gr_maskcache_stats_t;

/*
 * Data layout: at[s] counts state s's misses, 0 to 2, while it has no
 * entry, and is its entry's offset in words + 3 once it has.  An entry is
 * a header word (form << 30 | the payload's length) and the payload: ids
 * (set or clear), the bitset's 64-bit words as pairs of uint32, or a
 * sparse entry (the reference, 0 zeros or 1 the base; the bitmap of the
 * words kept, then those words, 64-bit and 8-byte aligned: a padding word
 * before the header where needed),
 * all in the one array `words`.
 */
typedef struct {
    const gr_gram_t *g; /* not owned */
    uint32_t epoch;     /* g's epoch when the entries were made */
    size_t nbits;       /* the masks' size */
    size_t max_bytes;
    TB_VEC(uint32_t) at;
    /* the entries: max_bytes / 4 of them reserved at the first (tb_reserve,
     * maskcache.c), not the allocator's, so never grown nor moved; nwords
     * written since the last flush, words_peak at most */
    uint32_t *words;
    size_t nwords, words_peak;
    const tb_bitset_t *base; /* not owned: the base of the sparse entries
                                kept against it, the last one named */
    gr_maskcache_stats_t stats;
} gr_maskcache_t;

/* A cache of masks of nbits bits over g, holding at most max_bytes (0:
 * GR_MASKCACHE_DEFAULT_BYTES). */
void gr_maskcache_init(gr_maskcache_t *c, const gr_gram_t *g, size_t nbits, size_t max_bytes);
void gr_maskcache_free(gr_maskcache_t *c);

/* Copies state s's mask into mask if it is kept: 1; else 0.  base (may be
 * NULL) is the mask put may keep entries against: it must not change
 * while the cache holds them, and naming another one empties the cache. */
int gr_maskcache_get(gr_maskcache_t *c, uint32_t s, tb_bitset_t *mask, const tb_bitset_t *base);

/* Keeps mask (complete: the walk succeeded) as state s's if s has missed
 * twice (gr_maskcache_get counts), or at once if `now`.  -1 on memory (the
 * cache is then only smaller: never wrong). */
int gr_maskcache_put(gr_maskcache_t *c, uint32_t s, const tb_bitset_t *mask,
                     const tb_bitset_t *base, int now);

/* Bytes held: the index and the most of the entries ever written (their
 * array is address space for max_bytes, mapped whole, where a page costs
 * once written; freed, it is kept for the process's next cache). */
size_t gr_maskcache_bytes(const gr_maskcache_t *c);

#endif
