/*
 * uprops: General_Category at the references' Unicode version (uprops.h).
 *
 * Data layout: uprops_runs (generated) cuts 0 .. U+10FFFF into maximal runs
 * of one leaf category, sorted, with no gaps (unassigned code points are
 * runs of Cn), so a lookup is one binary search and a class is one pass.
 * uprops_pcre2_delta lists the runs where the PCRE2 that the build probed
 * (scripts/probe-pcre2.c) gives another category: 127 runs from Unicode
 * 14.0 to 16.0, all but one (U+1171E, Mn to Mc) characters that PCRE2 has
 * as unassigned.
 *
 * Why the delta: a class written out in full has hundreds of ranges (\p{L}
 * some 660, \p{Lu} more), which PCRE2 tries one by one, so text of letters
 * outside them (lower-case Cyrillic against o200k's [\p{Lu}\p{Lt}...]) was
 * encoded up to six times slower; with the delta, o200k on the multi
 * corpus takes about 1.3 times as long as with PCRE2's classes alone.  PCRE2's own \p{..} is one table lookup;
 * with the delta's few ranges added it is the same set, whenever no code
 * point of the delta leaves the set (and the PCRE2 linked at run time has
 * the Unicode version that was probed).
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <string.h>

#include "uprops.h"

typedef struct {
    uint32_t lo, hi;
    uint8_t gc;
} uprops_run_t;

#include "uprops_tables.h"

#define NRUNS (sizeof uprops_runs / sizeof uprops_runs[0])
#define NLEAVES (sizeof uprops_leaves / sizeof uprops_leaves[0])
#define NGROUPS (sizeof uprops_groups / sizeof uprops_groups[0])
#define NSPACE (sizeof uprops_space / sizeof uprops_space[0])
#define IN(mask, leaf) (((mask) >> (leaf)) & 1)

const char *tok_uprops_version(void)
{
    return UPROPS_VERSION;
}

unsigned tok_uprops_gc(uint32_t cp)
{
    if (cp > 0x10FFFF)
        cp = 0x10FFFF; /* a noncharacter: Cn, as anything past the range */
    size_t lo = 0, hi = NRUNS - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (uprops_runs[mid].hi < cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return uprops_runs[lo].gc;
}

const char *tok_uprops_leaf_name(unsigned k)
{
    return k < NLEAVES ? uprops_leaves[k][0] : NULL;
}

/* Does `name` (len bytes, loosely) equal `want` (NUL-terminated)? */
static int loose_equal(const char *name, size_t len, const char *want)
{
    size_t i = 0;
    for (; *want; want++) {
        if (*want == '_')
            continue;
        while (i < len && (name[i] == ' ' || name[i] == '_' || name[i] == '-'))
            i++;
        if (i == len || (name[i] | 0x20) != (*want | 0x20))
            return 0;
        i++;
    }
    while (i < len && (name[i] == ' ' || name[i] == '_' || name[i] == '-'))
        i++;
    return i == len;
}

uint32_t tok_uprops_mask(const char *name, size_t len)
{
    for (size_t k = 0; k < NLEAVES; k++)
        for (int j = 0; j < 2; j++)
            if (loose_equal(name, len, uprops_leaves[k][j]))
                return (uint32_t)1 << k;
    for (size_t k = 0; k < NGROUPS; k++)
        for (int j = 0; j < 2; j++)
            if (loose_equal(name, len, uprops_groups[k].name[j]))
                return uprops_groups[k].mask;
    return 0;
}

/* Appends lo..hi as one class item. */
static int put_range(tb_buf_t *out, uint32_t lo, uint32_t hi)
{
    char item[32];
    int n = lo == hi ? snprintf(item, sizeof item, "\\x{%x}", lo)
                     : snprintf(item, sizeof item, "\\x{%x}-\\x{%x}", lo, hi);
    return tb_buf_put(out, item, (size_t)n);
}

/* Every range of the code points whose leaf is in mask (or not, with
 * negate), from the tables alone. */
static int put_all_ranges(uint32_t mask, int negate, tb_buf_t *out)
{
    int open = 0;
    uint32_t lo = 0, hi = 0;
    for (size_t k = 0; k < NRUNS; k++) {
        const uprops_run_t *r = &uprops_runs[k];
        int in = IN(mask, r->gc) != !!negate;
        if (r->lo >= 0xD800 && r->hi <= 0xDFFF)
            in = 0; /* surrogates: absent from UTF-8 text */
        if (in && open && hi + 1 == r->lo) {
            hi = r->hi;
            continue;
        }
        if (open && put_range(out, lo, hi))
            return -1;
        open = in;
        lo = r->lo;
        hi = r->hi;
    }
    return open ? put_range(out, lo, hi) : 0;
}

/* Is the PCRE2 linked the one the delta was probed with? */
static int pcre2_probed(void)
{
    static int same = -1; /* racing threads all store the same answer */
    if (same < 0) {
        char v[64];
        same = pcre2_config(PCRE2_CONFIG_UNICODE_VERSION, v) > 0 &&
               !strcmp(v, UPROPS_PCRE2_UNICODE);
    }
    return same;
}

/* Can PCRE2's \p{..} of mask's categories, plus ranges, stand for mask? */
static int pcre2_covers(uint32_t mask)
{
    if (!pcre2_probed())
        return 0;
    for (size_t k = 0; uprops_pcre2_delta[k][0] <= 0x10FFFF; k++)
        if (IN(mask, uprops_pcre2_delta[k][3]) && !IN(mask, uprops_pcre2_delta[k][2]))
            return 0;
    return 1;
}

static int put_property(tb_buf_t *out, const char *name)
{
    return tb_buf_put(out, "\\p{", 3) || tb_buf_put(out, name, strlen(name)) ||
           tb_buf_putc(out, '}');
}

/* PCRE2's \p{..}: whole groups (L, N...) where mask holds them, then the
 * leaves left, then the code points PCRE2 does not have in mask. */
static int put_pcre2_items(uint32_t mask, tb_buf_t *out)
{
    uint32_t left = mask;
    for (size_t k = 0; k < NGROUPS; k++)
        if ((left & uprops_groups[k].mask) == uprops_groups[k].mask) {
            if (put_property(out, uprops_groups[k].name[0]))
                return -1;
            left &= ~uprops_groups[k].mask;
        }
    for (unsigned k = 0; k < NLEAVES; k++)
        if (IN(left, k) && put_property(out, uprops_leaves[k][0]))
            return -1;
    for (size_t k = 0; uprops_pcre2_delta[k][0] <= 0x10FFFF; k++)
        if (IN(mask, uprops_pcre2_delta[k][2]) && !IN(mask, uprops_pcre2_delta[k][3]) &&
            put_range(out, uprops_pcre2_delta[k][0], uprops_pcre2_delta[k][1]))
            return -1;
    return 0;
}

int tok_uprops_class_items(uint32_t mask, int negate, tb_buf_t *out)
{
    if (!negate && pcre2_covers(mask))
        return put_pcre2_items(mask, out);
    return put_all_ranges(mask, negate, out);
}

/* Appends lo..hi less the surrogates. */
static int put_nonsurrogate(tb_buf_t *out, uint32_t lo, uint32_t hi)
{
    if (lo > hi)
        return 0;
    if (hi < 0xD800 || lo > 0xDFFF)
        return put_range(out, lo, hi);
    return (lo < 0xD800 && put_range(out, lo, 0xD7FF)) ||
           (hi > 0xDFFF && put_range(out, 0xE000, hi));
}

void tok_uprops_gc_fill(uint8_t *out, uint32_t n)
{
    for (size_t k = 0; k < NRUNS && uprops_runs[k].lo < n; k++) {
        uint32_t hi = uprops_runs[k].hi < n ? uprops_runs[k].hi : n - 1;
        memset(out + uprops_runs[k].lo, uprops_runs[k].gc, hi - uprops_runs[k].lo + 1);
    }
}

/* The first of the n sorted ranges that does not end below c (n if
 * none): c is in it, or in the gap before it. */
static size_t range_at(const uint32_t (*r)[2], size_t n, uint32_t c)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r[mid][1] < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int tok_uprops_in_ranges(const uint32_t (*r)[2], size_t n, uint32_t c)
{
    size_t k = range_at(r, n, c);
    return k < n && r[k][0] <= c;
}

int tok_uprops_in_ranges_memo(const uint32_t (*r)[2], size_t n, uint32_t c,
                              tok_ranges_memo_t *m)
{
    if (c >= m->lo && c <= m->hi)
        return m->in;
    size_t k = range_at(r, n, c);
    m->in = k < n && r[k][0] <= c;
    if (m->in) {
        m->lo = r[k][0];
        m->hi = r[k][1];
    } else { /* the gap before range k */
        m->lo = k ? r[k - 1][1] + 1 : 0;
        m->hi = k < n ? r[k][0] - 1 : UINT32_MAX;
    }
    return m->in;
}

int tok_uprops_is_space(uint32_t cp)
{
    /* searched, not scanned: most letters lie past most of the ranges */
    return tok_uprops_in_ranges(uprops_space, NSPACE, cp);
}

int tok_uprops_is_space_memo(uint32_t cp, tok_ranges_memo_t *m)
{
    return tok_uprops_in_ranges_memo(uprops_space, NSPACE, cp, m);
}

int tok_uprops_space_items(int negate, tb_buf_t *out)
{
    uint32_t next = 0; /* with negate: the first code point not yet put */
    for (size_t k = 0; k < NSPACE; k++) {
        if (negate ? put_nonsurrogate(out, next, uprops_space[k][0] - 1)
                   : put_range(out, uprops_space[k][0], uprops_space[k][1]))
            return -1;
        next = uprops_space[k][1] + 1;
    }
    return negate ? put_nonsurrogate(out, next, 0x10FFFF) : 0;
}
