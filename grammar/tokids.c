/* tokids: special tokens to token ids (see tokids.h). */
#include "tokids.h"

#include <stdlib.h>
#include <string.h>

#include "cfg.h"

static int cmp_range(const void *x, const void *y)
{
    const gr_idrange_t *a = x, *b = y;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* Sorts r[0..n) and merges ranges that overlap or touch; the new count. */
static size_t normalize(gr_idrange_t *r, size_t n)
{
    qsort(r, n, sizeof *r, cmp_range);
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        if (out && r[i].lo <= r[out - 1].hi + 1) {
            if (r[i].hi > r[out - 1].hi)
                r[out - 1].hi = r[i].hi;
        } else {
            r[out++] = r[i];
        }
    }
    return out;
}

/* A decimal id s[0..n) into *v (no sign, no blank, below 2^32). */
static int parse_id(const char *s, size_t n, uint32_t *v)
{
    uint64_t x = 0;
    if (n == 0 || n > 10)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        x = x * 10 + (uint64_t)(s[i] - '0');
    }
    if (x > UINT32_MAX)
        return -1;
    *v = (uint32_t)x;
    return 0;
}

/* One range "a" or "a-b" of s[0..n) into *r. */
static int parse_range(const char *s, size_t n, gr_idrange_t *r, tb_err_t *err)
{
    const char *dash = memchr(s, '-', n);
    size_t k = dash ? (size_t)(dash - s) : n;
    if ((dash && memchr(dash + 1, '-', n - k - 1)) || parse_id(s, k, &r->lo) ||
        (dash ? parse_id(dash + 1, n - k - 1, &r->hi) : (r->hi = r->lo, 0)) || r->lo > r->hi)
        return tb_fail(err, "invalid token range '%.*s' (an id, or ids a-b with a <= b)",
                       (int)n, s);
    return 0;
}

/* <[...]>: body s[0..n) between the brackets. */
static int numeric(const tok_vocab_t *v, const char *s, size_t n, tb_buf_t *out, tb_err_t *err)
{
    int negate = n && s[0] == '^';
    s += negate;
    n -= (size_t)negate;
    gr_idrange_t all = {0, v->size - 1};
    if (n == 1 && s[0] == '*')
        return negate ? tb_fail(err, "negated wildcard token <[^*]> is not supported")
                      : (tb_buf_put(out, &all, sizeof all) ? tb_fail(err, "out of memory") : 0);
    if (memchr(s, '*', n))
        return tb_fail(err, "wildcard token range '*' must not contain additional tokens");
    size_t mark = out->len;
    for (size_t i = 0; i < n;) {
        const char *comma = memchr(s + i, ',', n - i);
        size_t k = comma ? (size_t)(comma - s) : n;
        gr_idrange_t r;
        if (k > i && parse_range(s + i, k - i, &r, err))
            return -1;
        if (k > i && r.hi >= v->size)
            return tb_fail(err, "token id %u is past the vocabulary's %u ids", r.hi, v->size);
        if (k > i && tb_buf_put(out, &r, sizeof r))
            return tb_fail(err, "out of memory");
        i = k + 1;
    }
    size_t m = (out->len - mark) / sizeof(gr_idrange_t);
    if (m == 0)
        return tb_fail(err, "empty token range");
    gr_idrange_t *r = (gr_idrange_t *)(out->data + mark);
    m = normalize(r, m);
    out->len = mark + m * sizeof *r;
    if (!negate)
        return 0;
    /* the gaps between the ranges, in 0 .. size-1, in their place */
    gr_idrange_t *pos = malloc(m * sizeof *pos);
    if (!pos)
        return tb_fail(err, "out of memory");
    memcpy(pos, r, m * sizeof *pos);
    out->len = mark;
    uint32_t next = 0;
    int rc = 0;
    for (size_t i = 0; i <= m && !rc; i++) {
        uint32_t lo = i < m ? pos[i].lo : v->size;
        gr_idrange_t gap = {next, lo - 1};
        if (lo > next && tb_buf_put(out, &gap, sizeof gap))
            rc = tb_fail(err, "out of memory");
        next = i < m ? pos[i].hi + 1 : next;
    }
    free(pos);
    if (!rc && out->len == mark)
        rc = tb_fail(err, "<[^...]> leaves no token of the vocabulary");
    return rc;
}

/* <name>: the special tokens of v whose text is s[0..n). */
static int named(const tok_vocab_t *v, const char *s, size_t n, tb_buf_t *out,
                 tb_err_t *err)
{
    size_t mark = out->len;
    for (uint32_t id = 0; id < v->size; id++) {
        size_t len;
        const uint8_t *t = tok_vocab_token(v, id, &len);
        int special = v->special[id] || v->kind[id] == TOK_CONTROL;
        gr_idrange_t r = {id, id};
        if (special && len == n && !memcmp(t, s, n) && tb_buf_put(out, &r, sizeof r))
            return tb_fail(err, "out of memory");
    }
    if (out->len == mark)
        return tb_fail(err, "unknown special token: the vocabulary has no special token "
                       "with this text");
    return 0;
}

int gr_token_ids(const tok_vocab_t *v, const char *s, size_t n, tb_buf_t *out, tb_err_t *err)
{
    if (v->size == 0)
        return tb_fail(err, "the vocabulary has no tokens");
    if (n >= 4 && s[1] == '[' && s[n - 2] == ']')
        return numeric(v, s + 2, n - 4, out, err);
    return named(v, s, n, out, err);
}
