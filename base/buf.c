/* buf: the growth rule shared by tb_buf_t and TB_VEC, big blocks (see buf.h). */
#include "buf.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

int tb_grow(void **data, size_t *cap, size_t len, size_t extra, size_t elem)
{
    if (extra > SIZE_MAX / elem - len)
        return -1;
    size_t need = len + extra;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need)
        ncap = ncap > SIZE_MAX / 2 / elem ? need : ncap * 2;
    void *p = realloc(*data, ncap * elem);
    if (!p)
        return -1;
    *data = p;
    *cap = ncap;
    return 0;
}

int tb_reserve_big(void **data, size_t *cap, size_t len, size_t n, size_t elem)
{
    void *p;
    if (len || n > SIZE_MAX / elem || !(p = tb_alloc_big(n * elem)))
        return -1;
    free(*data);
    *data = p;
    *cap = n;
    return 0;
}

int tb_cmp_strs(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int tb_cmp_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int tb_sorted(const void *base, size_t n, size_t size,
              int (*cmp)(const void *, const void *))
{
    const char *p = base;
    for (size_t i = 1; i < n; i++)
        if (cmp(p + (i - 1) * size, p + i * size) > 0)
            return 0;
    return 1;
}

void *tb_alloc_big(size_t bytes)
{
    enum { HUGE = 2u << 20 };
    if (bytes < HUGE)
        return malloc(bytes ? bytes : 1);
    /* whole huge pages: a block past 2 MiB fills its last one mostly */
    void *p = aligned_alloc(HUGE, (bytes + HUGE - 1) / HUGE * HUGE);
    if (p)
        madvise(p, bytes, MADV_HUGEPAGE); /* a hint: refused, nothing changes */
    return p;
}

/*
 * Reserved address space given back is kept for the next reservation of
 * its size class: a driver frees one schema's grammar and makes the next
 * one's, and mapped afresh each time, every page its tables touched
 * faulted in again (MaskBench's 40 files with the most masks near TBM p90,
 * 2-core Xeon guest: 136k pages, at 2.7 us a 4 KiB fault, and a third of
 * the faults within masks).  A few regions are kept, each with at most
 * SPARE_KEPT bytes still backed, so what a freed grammar holds is bounded.
 * Sizes are rounded to a power of two so that tables of a few different
 * sizes (their rows are a grammar's byte classes) meet in one class.
 */
#define SPARE_REGIONS 8
#define SPARE_KEPT ((size_t)64 << 20)

static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    void *p;
    size_t bytes;
} spare[SPARE_REGIONS];

static size_t size_class(size_t bytes)
{
    size_t c = (size_t)1 << 16;
    while (c < bytes && c <= SIZE_MAX / 2)
        c *= 2;
    return c < bytes ? bytes : c;
}

static void *spare_take(size_t bytes)
{
    void *p = NULL;
    pthread_mutex_lock(&spare_lock);
    for (int i = 0; i < SPARE_REGIONS && !p; i++)
        if (spare[i].p && spare[i].bytes == bytes) {
            p = spare[i].p;
            spare[i].p = NULL;
        }
    pthread_mutex_unlock(&spare_lock);
    return p;
}

/* Keeps p (bytes, a size class) as a spare, or says no: 0. */
static int spare_give(void *p, size_t bytes)
{
    int kept = 0;
    pthread_mutex_lock(&spare_lock);
    for (int i = 0; i < SPARE_REGIONS && !kept; i++)
        if (!spare[i].p) {
            spare[i].p = p;
            spare[i].bytes = bytes;
            kept = 1;
        }
    pthread_mutex_unlock(&spare_lock);
    return kept;
}

void *tb_reserve(size_t bytes)
{
    bytes = size_class(bytes);
    void *p = spare_take(bytes);
    if (p)
        return p;
    p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
             -1, 0);
    /* No MADV_HUGEPAGE (buf.h).  With it, MaskBench's every 10th file
     * had TBM p90 46.7 us against 44.3 without (medians of 8 runs of each
     * build taking turns, 2-core Xeon guest): masks that first touch a
     * lexer's new rows or the mask cache's next entries paid for whole
     * huge pages. */
    return p == MAP_FAILED ? NULL : p;
}

void tb_unreserve(void *p, size_t bytes)
{
    if (!p)
        return;
    bytes = size_class(bytes);
    if (bytes > SPARE_KEPT)
        madvise((char *)p + SPARE_KEPT, bytes - SPARE_KEPT, MADV_DONTNEED);
    if (!spare_give(p, bytes))
        munmap(p, bytes);
}

void tb_buf_free(tb_buf_t *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
