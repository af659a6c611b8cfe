/* buf: the growth rule shared by tb_buf_t and TB_VEC, big blocks (see buf.h). */
#include "buf.h"

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

void *tb_reserve(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    if (bytes >= 2u << 20)
        madvise(p, bytes, MADV_HUGEPAGE); /* a hint: refused, nothing changes */
    return p;
}

void tb_unreserve(void *p, size_t bytes)
{
    if (p)
        munmap(p, bytes);
}

void tb_buf_free(tb_buf_t *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
