/*
 * sort: an integer sort for hot paths where qsort's call per comparison
 * was the cost (an Earley row's items, a long row's index): 64-bit keys
 * sorted ascending in place, by a least-significant-digit radix sort over
 * bytes that skips every byte all keys share, and by insertion for short
 * arrays.
 */
#ifndef TB_SORT_H
#define TB_SORT_H

#include <stddef.h>
#include <stdint.h>

/* Sorts a[0 .. n) ascending; tmp has room for n keys (its contents are
 * lost). */
void tb_sort_u64(uint64_t *a, uint64_t *tmp, size_t n);

#endif
