/*
 * bitset: a fixed-size set of small integers, one bit each.
 *
 * Token masks are bitsets over token ids: a trie walk sets the bit of every
 * token the recognizer allows, and tests compare masks word by word.
 * Bits past nbits in the last word are kept zero so that equality and counts
 * can work on whole words.
 */
#ifndef TB_BITSET_H
#define TB_BITSET_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t *words;
    size_t nbits;
} tb_bitset_t;

static inline size_t tb_bitset_words(size_t nbits)
{
    return (nbits + 63) / 64;
}

/* All bits clear.  Returns -1 on allocation failure. */
static inline int tb_bitset_init(tb_bitset_t *s, size_t nbits)
{
    s->nbits = nbits;
    s->words = calloc(tb_bitset_words(nbits) ? tb_bitset_words(nbits) : 1,
                      sizeof *s->words);
    return s->words ? 0 : -1;
}

static inline void tb_bitset_free(tb_bitset_t *s)
{
    free(s->words);
    s->words = NULL;
    s->nbits = 0;
}

static inline void tb_bitset_clear_all(tb_bitset_t *s)
{
    memset(s->words, 0, tb_bitset_words(s->nbits) * sizeof *s->words);
}

static inline void tb_bitset_set(tb_bitset_t *s, size_t i)
{
    s->words[i >> 6] |= (uint64_t)1 << (i & 63);
}

static inline void tb_bitset_clear(tb_bitset_t *s, size_t i)
{
    s->words[i >> 6] &= ~((uint64_t)1 << (i & 63));
}

static inline int tb_bitset_get(const tb_bitset_t *s, size_t i)
{
    return (int)((s->words[i >> 6] >> (i & 63)) & 1);
}

/* Masks are mostly empty or full words: those skip the popcount, a call
 * into libgcc where the build does not assume the popcnt instruction. */
static inline size_t tb_bitset_count(const tb_bitset_t *s)
{
    size_t n = 0;
    for (size_t w = 0; w < tb_bitset_words(s->nbits); w++) {
        uint64_t x = s->words[w];
        n += x == 0 ? 0 : x == ~(uint64_t)0 ? 64 : (size_t)__builtin_popcountll(x);
    }
    return n;
}

/* 1 if both sets have the same size and the same members. */
static inline int tb_bitset_equal(const tb_bitset_t *a, const tb_bitset_t *b)
{
    return a->nbits == b->nbits &&
           memcmp(a->words, b->words,
                  tb_bitset_words(a->nbits) * sizeof *a->words) == 0;
}

#endif
