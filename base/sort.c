/* sort: see sort.h. */
#include "sort.h"

#include <string.h>

/* Below this many keys, insertion beats a radix sort's passes. */
#define SORT_INSERTION 48

static void insertion_sort(uint64_t *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint64_t x = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1] > x; j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

void tb_sort_u64(uint64_t *a, uint64_t *tmp, size_t n)
{
    if (n < SORT_INSERTION) {
        insertion_sort(a, n);
        return;
    }
    size_t count[8][256];
    memset(count, 0, sizeof count);
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < 8; b++)
            count[b][(a[i] >> (8 * b)) & 0xFF]++;
    uint64_t *src = a, *dst = tmp;
    for (int b = 0; b < 8; b++) {
        size_t *c = count[b];
        if (c[(src[0] >> (8 * b)) & 0xFF] == n)
            continue; /* every key has this byte: the order stands */
        size_t at = 0;
        for (int d = 0; d < 256; d++) {
            size_t k = c[d];
            c[d] = at;
            at += k;
        }
        for (size_t i = 0; i < n; i++)
            dst[c[(src[i] >> (8 * b)) & 0xFF]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
}
