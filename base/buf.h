/*
 * buf: growable arrays.
 *
 * tb_buf_t is a byte buffer; TB_VEC(T) declares a typed vector with the same
 * growth rule.  Both abort-free: growth returns -1 on allocation failure and
 * leaves the buffer as it was.
 */
#ifndef TB_BUF_H
#define TB_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    uint8_t *data;
    size_t len, cap;
} tb_buf_t;

/* Makes room for `extra` more elements of size `elem` in *data. */
int tb_grow(void **data, size_t *cap, size_t len, size_t extra, size_t elem);

static inline int tb_buf_reserve(tb_buf_t *b, size_t extra)
{
    if (b->cap - b->len >= extra)
        return 0;
    return tb_grow((void **)&b->data, &b->cap, b->len, extra, 1);
}

static inline int tb_buf_put(tb_buf_t *b, const void *p, size_t n)
{
    if (tb_buf_reserve(b, n))
        return -1;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

static inline int tb_buf_putc(tb_buf_t *b, uint8_t c)
{
    return tb_buf_put(b, &c, 1);
}

void tb_buf_free(tb_buf_t *b);

/* malloc for a big block read or probed all over (a whole file, a hash
 * table): from 2 MiB on it asks for transparent huge pages, so that random
 * reads do not miss the TLB and first touches fault 2 MiB at a time, not
 * 4 KiB.  Freed with free(). */
void *tb_alloc_big(size_t bytes);

/* Address space for `bytes`, backed only where touched, 4 KiB at a time:
 * a table that would grow by realloc up to a known bound grows in place
 * instead, with nothing copied.  No huge pages: a reservation is far
 * larger than what a mask touches of it (a lexer's tables, the mask
 * cache), and a first touch of a huge page zeroes 2 MiB, or waits while
 * the kernel compacts memory for one (buf.c).  Its contents are unspecified: a region given back is
 * kept for the process's next reservation of about its size, with the
 * pages it had (buf.c).  NULL on failure; freed with tb_unreserve(p,
 * bytes). */
void *tb_reserve(size_t bytes);
void tb_unreserve(void *p, size_t bytes);

/* qsort and bsearch's comparator for an array of C strings (char *). */
int tb_cmp_strs(const void *a, const void *b);
/* The same for an array of doubles, ascending. */
int tb_cmp_doubles(const void *a, const void *b);
/* Whether n elements of `size` bytes at base are in cmp's order already
 * (loaders skip a sort of what files nearly always list in order). */
int tb_sorted(const void *base, size_t n, size_t size,
              int (*cmp)(const void *, const void *));

/* A typed vector: struct { T *data; size_t len, cap; }. */
#define TB_VEC(T) struct { T *data; size_t len, cap; }

#define tb_vec_reserve(v, extra)                                             \
    ((v)->cap - (v)->len >= (size_t)(extra)                                  \
         ? 0                                                                 \
         : tb_grow((void **)&(v)->data, &(v)->cap, (v)->len, (extra),        \
                   sizeof *(v)->data))

/* Appends src[0..n); with n == 0 it touches neither pointer, which may
 * then be NULL (memcpy's arguments must not be, even for no bytes). */
#define tb_vec_append(v, src, n)                                             \
    (tb_vec_reserve((v), (n))                                                \
         ? -1                                                                \
         : ((n) ? (memcpy((v)->data + (v)->len, (src),                       \
                          (size_t)(n) * sizeof *(v)->data),                  \
                   (v)->len += (n))                                          \
                : 0,                                                         \
            0))

/* Gives an empty vector room for n elements from tb_alloc_big: for a
 * bound well above what it will hold (a count bounded by the input's
 * size), as address space whose untouched pages cost nothing and whose
 * touched ones fault 2 MiB at a time, not 4 KiB (on a virtual machine a
 * 4 KiB fault costs about 3 us).  Past the bound it grows as usual.  0,
 * or -1 with the vector left as it was. */
#define tb_vec_reserve_big(v, n)                                             \
    tb_reserve_big((void **)&(v)->data, &(v)->cap, (v)->len, (n),            \
                   sizeof *(v)->data)
int tb_reserve_big(void **data, size_t *cap, size_t len, size_t n, size_t elem);

#define tb_vec_push(v, x)                                                    \
    (tb_vec_reserve((v), 1) ? -1 : ((v)->data[(v)->len++] = (x), 0))

#endif
