/*
 * regex: the hash-consed term store and the pattern parser (see regex.h).
 *
 * The parser works on code-point sets (sorted, disjoint ranges) for
 * everything that denotes one character, and turns each set into UTF-8 byte
 * sequences only when the atom is complete, so that negation and case
 * folding happen on code points, where they mean what the user wrote.
 * The Unicode tables behind \p{..} and (?i) (general categories, scripts
 * and their extensions, simple case folding) are read from the
 * unicode-data package's files on first use and kept (see "Unicode data
 * files" below), so a pattern pays for the files only once per process.
 */
#include "regex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/buf.h"
#include "../base/file.h"
#include "../base/hash.h"
#include "../base/utf8.h"

/* ---- the term store ------------------------------------------------------ */

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t node_hash(const lex_node_t *n)
{
    uint64_t h = mix(n->kind, ((uint64_t)n->a << 32) | n->b);
    /* only a byte set or a repetition's bounds use set: the other kinds'
     * is zero, and a concatenation or union is most of what is interned */
    if (n->kind == LEX_K_BYTES || n->kind == LEX_K_REPEAT)
        for (int i = 0; i < 4; i++)
            h = mix(h, n->set[i]);
    return h ^ (h >> 29);
}

static int node_eq(const lex_node_t *x, const lex_node_t *y)
{
    return x->kind == y->kind && x->a == y->a && x->b == y->b &&
           !memcmp(x->set, y->set, sizeof x->set);
}

static int table_grow(lex_terms_t *t)
{
    size_t cap = t->tcap ? t->tcap * 2 : 1024;
    uint32_t *tab = malloc(cap * sizeof *tab);
    if (!tab)
        return -1;
    memset(tab, 0xFF, cap * sizeof *tab);
    for (size_t i = 0; i < t->n; i++) {
        size_t h = node_hash(&t->node[i]) & (cap - 1);
        while (tab[h] != UINT32_MAX)
            h = (h + 1) & (cap - 1);
        tab[h] = (uint32_t)i;
    }
    free(t->table);
    t->table = tab;
    t->tcap = cap;
    return 0;
}

/* The id of *n, created if new (has_and is set here, not by the caller).
 * LEX_NOTHING (and t->full) past the limit. */
static lex_term_t intern(lex_terms_t *t, const lex_node_t *n)
{
    size_t h = node_hash(n) & (t->tcap - 1);
    for (uint32_t id; (id = t->table[h]) != UINT32_MAX; h = (h + 1) & (t->tcap - 1))
        if (node_eq(&t->node[id], n))
            return id;
    if (t->n >= t->max_nodes) {
        t->full = 1;
        return LEX_NOTHING;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap * 2;
        lex_node_t *nn = realloc(t->node, cap * sizeof *nn);
        if (!nn) {
            t->full = 1;
            return LEX_NOTHING;
        }
        t->node = nn;
        t->cap = cap;
    }
    lex_term_t id = (lex_term_t)t->n;
    t->node[t->n] = *n;
    /* a and b are 0 (LEX_NOTHING, no AND) where the kind has no part */
    t->node[t->n++].has_and = (uint8_t)(n->kind == LEX_K_AND || n->kind == LEX_K_NOT ||
                                        t->node[n->a].has_and ||
                                        t->node[n->b].has_and);
    t->table[h] = id;
    /* Keep the load under one half so probes stay short. */
    if (t->n * 2 > t->tcap && table_grow(t))
        t->full = 1;
    return id;
}

int lex_terms_init(lex_terms_t *t, size_t max_nodes, tb_err_t *err)
{
    memset(t, 0, sizeof *t);
    t->max_nodes = max_nodes < 16 ? 16 : max_nodes;
    t->cap = 256;
    t->node = malloc(t->cap * sizeof *t->node);
    if (!t->node || table_grow(t)) {
        lex_terms_free(t);
        return tb_fail(err, "out of memory");
    }
    lex_node_t n = {0};
    n.kind = LEX_K_NOTHING;
    intern(t, &n);
    n.kind = LEX_K_EPSILON;
    n.nullable = 1;
    intern(t, &n);
    return 0;
}

void lex_terms_free(lex_terms_t *t)
{
    lex_regex_memo_end(t);
    free(t->node);
    free(t->table);
    free(t->scratch);
    free(t->cps);
    free(t->cps_ranges.data);
    memset(t, 0, sizeof *t);
}

lex_term_t lex_bytes(lex_terms_t *t, const uint64_t set[4])
{
    if (!(set[0] | set[1] | set[2] | set[3]))
        return LEX_NOTHING;
    lex_node_t n = {.kind = LEX_K_BYTES};
    memcpy(n.set, set, sizeof n.set);
    return intern(t, &n);
}

/* Sets bits lo..hi of set, a word at a time (a class's ranges are wide:
 * bit by bit, this was a tenth of a small schema's set-up). */
static void add_byte_range(uint64_t set[4], unsigned lo, unsigned hi)
{
    for (unsigned w = lo >> 6; lo <= hi && w <= hi >> 6; w++) {
        unsigned a = w == lo >> 6 ? lo & 63 : 0, z = w == hi >> 6 ? hi & 63 : 63;
        set[w] |= (~0ull >> (63 - z)) & (~0ull << a);
    }
}

lex_term_t lex_byte_range(lex_terms_t *t, uint8_t lo, uint8_t hi)
{
    uint64_t set[4] = {0};
    add_byte_range(set, lo, hi);
    return lex_bytes(t, set);
}

static int scratch_push(lex_terms_t *t, size_t *n, lex_term_t v);

/* a . b for an a that is not a concatenation. */
static lex_term_t concat_node(lex_terms_t *t, lex_term_t a, lex_term_t b)
{
    if (a == LEX_NOTHING || b == LEX_NOTHING)
        return LEX_NOTHING;
    if (a == LEX_EPSILON)
        return b;
    if (b == LEX_EPSILON)
        return a;
    lex_node_t n = {.kind = LEX_K_CONCAT, .a = a, .b = b,
                    .nullable = (uint8_t)(t->node[a].nullable && t->node[b].nullable)};
    return intern(t, &n);
}

lex_term_t lex_concat(lex_terms_t *t, lex_term_t a, lex_term_t b)
{
    if (a == LEX_NOTHING || b == LEX_NOTHING)
        return LEX_NOTHING;
    if (t->node[a].kind != LEX_K_CONCAT)
        return concat_node(t, a, b);
    /* Right-nested: (pq)r becomes p(qr), so a derivative's head and the
     * rest line up the same way whichever way the pattern grouped them.
     * a's chain is read into scratch and rebuilt onto b from its end, not
     * by recursion: x{1000} repeated makes chains of 10^5 terms. */
    size_t n = 0;
    for (lex_term_t x = a;; x = t->node[x].b) {
        int last = t->node[x].kind != LEX_K_CONCAT;
        if (scratch_push(t, &n, last ? x : t->node[x].a)) {
            t->full = 1; /* out of memory: callers fail as on a full store */
            return LEX_NOTHING;
        }
        if (last)
            break;
    }
    lex_term_t acc = b;
    while (n)
        acc = concat_node(t, t->scratch[--n], acc);
    return acc;
}

/*
 * Sorts v[0..n) by id, tmp[0..n) its scratch, every id at most max.  A
 * union of an enum's remainders has hundreds of alternatives, often in
 * order already (a literal's rest is made just before it): a check, then
 * insertion where short, else one pass per byte of the ids that tells
 * them apart.  qsort's calls to a comparison were a fifth of a cold mask
 * over a 700-value enum.
 */
static void sort_terms(lex_term_t *v, size_t n, lex_term_t *tmp, lex_term_t max)
{
    size_t i = 1;
    while (i < n && v[i - 1] <= v[i])
        i++;
    if (i >= n)
        return;
    if (n <= 32) {
        for (; i < n; i++) {
            lex_term_t x = v[i];
            size_t j = i;
            for (; j > 0 && v[j - 1] > x; j--)
                v[j] = v[j - 1];
            v[j] = x;
        }
        return;
    }
    lex_term_t *from = v, *to = tmp;
    for (unsigned shift = 0; shift < 32 && (max >> shift); shift += 8) {
        size_t at[257] = {0};
        for (i = 0; i < n; i++)
            at[((from[i] >> shift) & 255) + 1]++;
        if (at[((from[0] >> shift) & 255) + 1] == n)
            continue; /* one value of this byte: the pass would move nothing */
        for (int k = 1; k < 257; k++)
            at[k] += at[k - 1];
        for (i = 0; i < n; i++)
            to[at[(from[i] >> shift) & 255]++] = from[i];
        lex_term_t *x = from;
        from = to;
        to = x;
    }
    if (from != v)
        memcpy(v, from, n * sizeof *v);
}

static int scratch_push(lex_terms_t *t, size_t *n, lex_term_t v)
{
    if (*n == t->scap &&
        tb_grow((void **)&t->scratch, &t->scap, *n, 1, sizeof *t->scratch))
        return -1;
    t->scratch[(*n)++] = v;
    return 0;
}

/* Whether x is [\x00-\xff]* (every byte string). */
static int is_everything(const lex_terms_t *t, lex_term_t x)
{
    const lex_node_t *n = &t->node[x];
    if (n->kind != LEX_K_STAR || t->node[n->a].kind != LEX_K_BYTES)
        return 0;
    const uint64_t *s = t->node[n->a].set;
    return (s[0] & s[1] & s[2] & s[3]) == UINT64_MAX;
}

lex_term_t lex_or_n(lex_terms_t *t, const lex_term_t *terms, size_t count)
{
    /* Flatten into scratch, folding every byte set into one: a union of
     * single-byte alternatives is one byte set, whatever the grouping. */
    size_t n = 0;
    uint64_t set[4] = {0};
    int any_set = 0, has_eps = 0, has_nullable = 0;
    for (size_t i = 0; i < count; i++) {
        lex_term_t cur = terms[i];
        for (;;) {
            const lex_node_t *x = &t->node[cur];
            lex_term_t alt = x->kind == LEX_K_OR ? x->a : cur;
            const lex_node_t *y = &t->node[alt];
            if (y->kind == LEX_K_BYTES) {
                for (int w = 0; w < 4; w++)
                    set[w] |= y->set[w];
                any_set = 1;
            } else if (alt == LEX_EPSILON) {
                has_eps = 1;
            } else if (is_everything(t, alt)) {
                return alt; /* absorbs the union: a look-ahead's A.* once A matched */
            } else if (alt != LEX_NOTHING) {
                has_nullable |= y->nullable;
                if (scratch_push(t, &n, alt)) {
                    t->full = 1;
                    return LEX_NOTHING;
                }
            }
            if (x->kind != LEX_K_OR)
                break;
            cur = x->b;
        }
    }
    if (any_set && scratch_push(t, &n, lex_bytes(t, set))) {
        t->full = 1;
        return LEX_NOTHING;
    }
    /* The empty string is redundant beside a nullable alternative. */
    if (has_eps && !has_nullable && scratch_push(t, &n, LEX_EPSILON)) {
        t->full = 1;
        return LEX_NOTHING;
    }
    if (n == 0)
        return has_eps ? LEX_EPSILON : LEX_NOTHING;
    /* room after the list for the sort's scratch */
    if (t->scap < 2 * n && tb_grow((void **)&t->scratch, &t->scap, n, n, sizeof *t->scratch)) {
        t->full = 1;
        return LEX_NOTHING;
    }
    sort_terms(t->scratch, n, t->scratch + n, (lex_term_t)(t->n - 1));
    size_t u = 1;
    for (size_t i = 1; i < n; i++)
        if (t->scratch[i] != t->scratch[u - 1])
            t->scratch[u++] = t->scratch[i];
    /* Build the chain from the end; interning never touches scratch. */
    lex_term_t acc = t->scratch[u - 1];
    for (size_t i = u - 1; i-- > 0;) {
        lex_node_t nd = {.kind = LEX_K_OR, .a = t->scratch[i], .b = acc};
        nd.nullable = (uint8_t)(t->node[nd.a].nullable | t->node[acc].nullable);
        acc = intern(t, &nd);
    }
    return acc;
}

lex_term_t lex_or(lex_terms_t *t, lex_term_t a, lex_term_t b)
{
    if (a == b || b == LEX_NOTHING)
        return a;
    if (a == LEX_NOTHING)
        return b;
    lex_term_t v[2] = {a, b};
    return lex_or_n(t, v, 2);
}

lex_term_t lex_repeat(lex_terms_t *t, lex_term_t a, uint32_t min, uint32_t max)
{
    if (max == 0 || a == LEX_EPSILON)
        return LEX_EPSILON;
    if (a == LEX_NOTHING)
        return min == 0 ? LEX_EPSILON : LEX_NOTHING;
    if (t->node[a].nullable)
        min = 0; /* empty iterations make up any minimum */
    if (min == 1 && max == 1)
        return a;
    lex_node_t n = {.kind = LEX_K_REPEAT, .a = a, .nullable = min == 0};
    n.set[0] = min;
    n.set[1] = max;
    return intern(t, &n);
}

lex_term_t lex_and(lex_terms_t *t, lex_term_t a, lex_term_t b)
{
    if (a == LEX_NOTHING || b == LEX_NOTHING)
        return LEX_NOTHING;
    if (a == b)
        return a;
    if (a == LEX_EPSILON || b == LEX_EPSILON)
        return t->node[a == LEX_EPSILON ? b : a].nullable ? LEX_EPSILON : LEX_NOTHING;
    if (is_everything(t, a) || is_everything(t, b))
        return is_everything(t, a) ? b : a;
    if (a > b) { /* sorted, so that a & b and b & a are one term */
        lex_term_t x = a;
        a = b;
        b = x;
    }
    lex_node_t n = {.kind = LEX_K_AND, .a = a, .b = b,
                    .nullable = (uint8_t)(t->node[a].nullable && t->node[b].nullable)};
    return intern(t, &n);
}

lex_term_t lex_not(lex_terms_t *t, lex_term_t a)
{
    if (t->node[a].kind == LEX_K_NOT)
        return t->node[a].a;
    if (a == LEX_NOTHING)
        return lex_star(t, lex_byte_range(t, 0, 255));
    if (is_everything(t, a))
        return LEX_NOTHING;
    lex_node_t n = {.kind = LEX_K_NOT, .a = a, .nullable = (uint8_t)!t->node[a].nullable};
    return intern(t, &n);
}

lex_term_t lex_star(lex_terms_t *t, lex_term_t a)
{
    if (a == LEX_NOTHING || a == LEX_EPSILON)
        return LEX_EPSILON;
    if (t->node[a].kind == LEX_K_STAR)
        return a;
    lex_node_t n = {.kind = LEX_K_STAR, .a = a, .nullable = 1};
    return intern(t, &n);
}

/* ---- code-point sets ------------------------------------------------------ */

#define CP_MAX 0x10FFFFu

typedef struct {
    uint32_t lo, hi;
} cp_range_t;

typedef struct {
    cp_range_t *r;
    size_t n, cap;
} cp_set_t;

static int cps_add(cp_set_t *s, uint32_t lo, uint32_t hi)
{
    if (s->n == s->cap && tb_grow((void **)&s->r, &s->cap, s->n, 1, sizeof *s->r))
        return -1;
    s->r[s->n++] = (cp_range_t){lo, hi};
    return 0;
}

static int cmp_range(const void *x, const void *y)
{
    const cp_range_t *a = x, *b = y;
    return (a->lo > b->lo) - (a->lo < b->lo);
}

/* Sorts and merges overlapping or touching ranges. */
static void cps_norm(cp_set_t *s)
{
    if (!s->n)
        return;
    size_t sorted = 1; /* classes are mostly written in order: no qsort then */
    while (sorted < s->n && s->r[sorted - 1].lo <= s->r[sorted].lo)
        sorted++;
    if (sorted < s->n)
        qsort(s->r, s->n, sizeof *s->r, cmp_range);
    size_t u = 0;
    for (size_t i = 1; i < s->n; i++) {
        if (s->r[i].lo <= s->r[u].hi + 1) {
            if (s->r[i].hi > s->r[u].hi)
                s->r[u].hi = s->r[i].hi;
        } else
            s->r[++u] = s->r[i];
    }
    s->n = u + 1;
}

/* Complement within the code points UTF-8 can carry. */
static int cps_negate(cp_set_t *s)
{
    cps_norm(s);
    cp_set_t o = {0};
    uint32_t next = 0;
    int rc = 0;
    for (size_t i = 0; i < s->n && !rc; i++) {
        if (s->r[i].lo > next)
            rc = cps_add(&o, next, s->r[i].lo - 1);
        next = s->r[i].hi + 1;
    }
    if (!rc && next <= CP_MAX)
        rc = cps_add(&o, next, CP_MAX);
    free(s->r);
    *s = o;
    return rc;
}

/* ---- code-point sets to UTF-8 byte sequences ------------------------------ */

typedef struct {
    lex_term_t *v;
    size_t n, cap;
} term_list_t;

static int tl_push(term_list_t *l, lex_term_t x)
{
    if (l->n == l->cap && tb_grow((void **)&l->v, &l->cap, l->n, 1, sizeof *l->v))
        return -1;
    l->v[l->n++] = x;
    return 0;
}

static unsigned utf8_len(uint32_t c)
{
    return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
}

/* Emits [lo, hi] (same encoded length) as sequences of byte ranges: split
 * until every continuation position spans a whole 64-value block or lo and
 * hi agree above it, so that each position is an independent byte range. */
static int emit_utf8(lex_terms_t *t, term_list_t *out, uint32_t lo, uint32_t hi)
{
    unsigned n = utf8_len(lo);
    for (unsigned i = 1; i < n; i++) {
        uint32_t m = (1u << (6 * i)) - 1;
        if ((lo & ~m) != (hi & ~m)) {
            if (lo & m)
                return emit_utf8(t, out, lo, lo | m) ||
                       emit_utf8(t, out, (lo | m) + 1, hi);
            if ((hi & m) != m)
                return emit_utf8(t, out, lo, (hi & ~m) - 1) ||
                       emit_utf8(t, out, hi & ~m, hi);
        }
    }
    uint8_t a[4], b[4];
    tb_utf8_encode(lo, a);
    tb_utf8_encode(hi, b);
    lex_term_t seq = LEX_EPSILON;
    for (unsigned i = n; i-- > 0;)
        seq = lex_concat(t, lex_byte_range(t, a[i], b[i]), seq);
    return tl_push(out, seq);
}

struct lex_cps_memo {
    uint64_t hash;
    uint32_t off, n;
    lex_term_t term; /* LEX_NOTHING: a free slot (no class maps to it) */
};

/* The slot of class s (normalized): its term, or the free slot to fill. */
static struct lex_cps_memo *cps_slot(lex_terms_t *t, const cp_set_t *s, uint64_t h)
{
    size_t m = t->cps_cap - 1;
    for (size_t i = h & m;; i = (i + 1) & m) {
        struct lex_cps_memo *e = &t->cps[i];
        if (e->term == LEX_NOTHING)
            return e;
        if (e->hash == h && e->n == s->n &&
            !memcmp(t->cps_ranges.data + e->off, s->r, s->n * sizeof *s->r))
            return e;
    }
}

/* Remembers class s -> term (a failed allocation only forgets). */
static void cps_remember(lex_terms_t *t, const cp_set_t *s, uint64_t h, lex_term_t term)
{
    if ((t->cps_n + 1) * 2 > t->cps_cap) {
        size_t cap = t->cps_cap ? t->cps_cap * 2 : 64;
        struct lex_cps_memo *n = calloc(cap, sizeof *n), *old = t->cps;
        if (!n)
            return;
        size_t oldcap = t->cps_cap;
        t->cps = n;
        t->cps_cap = cap;
        for (size_t i = 0; i < oldcap; i++)
            if (old[i].term != LEX_NOTHING) {
                size_t j = old[i].hash & (cap - 1);
                while (n[j].term != LEX_NOTHING)
                    j = (j + 1) & (cap - 1);
                n[j] = old[i];
            }
        free(old);
    }
    if (tb_vec_reserve(&t->cps_ranges, 2 * s->n))
        return;
    struct lex_cps_memo *e = cps_slot(t, s, h);
    *e = (struct lex_cps_memo){h, (uint32_t)t->cps_ranges.len, (uint32_t)s->n, term};
    memcpy(t->cps_ranges.data + t->cps_ranges.len, s->r, s->n * sizeof *s->r);
    t->cps_ranges.len += 2 * s->n;
    t->cps_n++;
}

/* The term of the non-ASCII ranges r[0..n) (UTF-8 sequences of two bytes
 * or more), from the memo or made and remembered. */
static int multibyte_term(lex_terms_t *t, const cp_range_t *r, size_t n, lex_term_t *out)
{
    cp_set_t view = {.r = (cp_range_t *)r, .n = n};
    uint64_t h = tb_hash(r, n * sizeof *r);
    if (t->cps_cap) {
        const struct lex_cps_memo *e = cps_slot(t, &view, h);
        if (e->term != LEX_NOTHING) {
            *out = e->term;
            return 0;
        }
    }
    static const uint32_t bounds[][2] = {{0x80, 0x7FF}, {0x800, 0xFFFF}, {0x10000, CP_MAX}};
    term_list_t l = {0};
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        for (int k = 0; k < 3 && !rc; k++) {
            uint32_t lo = r[i].lo > bounds[k][0] ? r[i].lo : bounds[k][0];
            uint32_t hi = r[i].hi < bounds[k][1] ? r[i].hi : bounds[k][1];
            if (lo > hi)
                continue;
            /* Surrogates have no UTF-8 encoding. */
            if (k == 1 && lo <= 0xDFFF && hi >= 0xD800) {
                if (lo < 0xD800)
                    rc = emit_utf8(t, &l, lo, 0xD7FF);
                if (!rc && hi > 0xDFFF)
                    rc = emit_utf8(t, &l, 0xE000, hi);
            } else
                rc = emit_utf8(t, &l, lo, hi);
        }
    }
    if (!rc)
        *out = lex_or_n(t, l.v, l.n);
    if (!rc && *out != LEX_NOTHING && !t->full)
        cps_remember(t, &view, h, *out);
    free(l.v);
    return rc;
}

/* The term of s (normalized): its ASCII members as one byte set, made at
 * once, or'ed with the rest, which many classes share (every [^...] of
 * ASCII characters holds all of U+0080 up), remembered apart.  A range
 * across 0x7F is cut there in place (s is spent: cps_term frees it). */
static int cps_to_term(lex_terms_t *t, cp_set_t *s, lex_term_t *out)
{
    uint64_t ascii[4] = {0};
    size_t i = 0;
    for (; i < s->n && s->r[i].lo < 0x80; i++)
        add_byte_range(ascii, s->r[i].lo, s->r[i].hi < 0x7F ? s->r[i].hi : 0x7F);
    lex_term_t low = lex_bytes(t, ascii), high = LEX_NOTHING;
    if (i > 0 && s->r[i - 1].hi >= 0x80)
        s->r[--i].lo = 0x80; /* its upper part belongs to the rest */
    int rc = i < s->n ? multibyte_term(t, s->r + i, s->n - i, &high) : 0;
    if (!rc)
        *out = lex_or(t, low, high);
    return rc;
}

/* ---- Unicode data files ---------------------------------------------------- */

/*
 * The Unicode tables are read at run time from the unicode-data package's
 * files (see regex.h for the files and the environment variables that move
 * them) and kept for the rest of the process: every later pattern that needs
 * the same file, from the same path, reuses the table.  A table whose path
 * changed (the environment variable was set or changed) is read again.  The
 * cache makes lex_regex_parse not thread-safe on its first use of a table.
 */

/* The path of data file `file` (a name in the Unicode data directory). */
static void data_path(const char *file, char *out, size_t cap)
{
    const char *p = !strcmp(file, "UnicodeData.txt") ? getenv("TOKBENCH_UNICODE_DATA") : NULL;
    if (p && *p) {
        snprintf(out, cap, "%s", p);
        return;
    }
    const char *dir = getenv("TOKBENCH_UNICODE_DIR");
    snprintf(out, cap, "%s/%s", dir && *dir ? dir : LEX_UNICODE_DIR, file);
}

/* A data file read whole, handed out one line at a time. */
typedef struct {
    char path[512];
    char *text, *p, *end;
    size_t line;
    tb_err_t *err;
} ucd_file_t;

static int ucd_open(ucd_file_t *f, const char *file, const char *why, tb_err_t *err)
{
    memset(f, 0, sizeof *f);
    data_path(file, f->path, sizeof f->path);
    f->err = err;
    size_t len;
    uint8_t *data;
    if (tb_read_file(f->path, &data, &len, err))
        return tb_wrap(err, "%s needs the Unicode data file %s (package unicode-data, or "
                       "see lexer/regex.h for the override)", why, f->path);
    f->text = f->p = (char *)data;
    f->end = f->text + len;
    return 0;
}

static void ucd_close(ucd_file_t *f)
{
    free(f->text);
    f->text = NULL;
}

static int ucd_bad(ucd_file_t *f, const char *what)
{
    return tb_fail(f->err, "malformed Unicode data file %s, line %zu: %s", f->path, f->line,
                   what);
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        s[--n] = 0;
    return s;
}

/* The next line that has data, cut at '#' and split at ';' into at most
 * maxf trimmed fields (the file's text is modified).  Returns the number of
 * fields, 0 at the end of the file. */
static int ucd_next(ucd_file_t *f, char **field, int maxf)
{
    while (f->p < f->end) {
        char *line = f->p, *nl = memchr(line, '\n', (size_t)(f->end - line));
        if (!nl)
            nl = f->end;
        *nl = 0;
        f->p = nl < f->end ? nl + 1 : f->end;
        f->line++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        if (!*trim(line))
            continue;
        int n = 0;
        for (char *s = line; n < maxf;) {
            char *semi = strchr(s, ';');
            if (semi)
                *semi = 0;
            field[n++] = trim(s);
            if (!semi)
                break;
            s = semi + 1;
        }
        return n;
    }
    return 0;
}

/* "XXXX" or "XXXX..YYYY" into lo, hi; -1 unless well formed. */
static int parse_cps(const char *s, uint32_t *lo, uint32_t *hi)
{
    char *e;
    unsigned long a = strtoul(s, &e, 16), b = a;
    if (e == s)
        return -1;
    if (e[0] == '.' && e[1] == '.') {
        const char *t = e + 2;
        b = strtoul(t, &e, 16);
        if (e == t)
            return -1;
    }
    if (*e || a > b || b > CP_MAX)
        return -1;
    *lo = (uint32_t)a;
    *hi = (uint32_t)b;
    return 0;
}

/* Loose matching of property names, as PCRE2 and UAX #44 do: case, spaces,
 * hyphens and underscores do not count.  out has room for cap bytes. */
static void loose_name(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    for (; *in && n + 1 < cap; in++) {
        if (*in == ' ' || *in == '-' || *in == '_')
            continue;
        out[n++] = (char)(*in >= 'A' && *in <= 'Z' ? *in + 32 : *in);
    }
    out[n] = 0;
}

/*
 * A property table as runs: code points lo..hi have value v (a category or
 * script index); once finished, sorted and covering 0..CP_MAX exactly once.
 * Some thousands of runs stand for a 1.1 MB table; \p{..} scans them.
 */
typedef struct {
    uint32_t lo, hi, v;
} prop_run_t;

typedef TB_VEC(prop_run_t) prop_runs_t;

/* Appends lo..hi = v, merged into the last run when it continues it. */
static int runs_push(prop_runs_t *rs, uint32_t lo, uint32_t hi, uint32_t v)
{
    prop_run_t *last = rs->len ? &rs->data[rs->len - 1] : NULL;
    if (last && last->v == v && last->hi + 1 == lo) {
        last->hi = hi;
        return 0;
    }
    return tb_vec_push(rs, ((prop_run_t){lo, hi, v}));
}

static int cmp_run(const void *x, const void *y)
{
    const prop_run_t *a = x, *b = y;
    return (a->lo > b->lo) - (a->lo < b->lo);
}

/* Sorts the runs and fills the gaps between them with value dflt.  1 when
 * two runs overlap (*dup: a code point the file gave twice), -1 out of
 * memory. */
static int runs_finish(prop_runs_t *rs, uint32_t dflt, uint32_t *dup)
{
    qsort(rs->data, rs->len, sizeof *rs->data, cmp_run);
    prop_runs_t out = {0};
    uint32_t next = 0;
    int rc = 0;
    for (size_t i = 0; i < rs->len && !rc; i++) {
        const prop_run_t *x = &rs->data[i];
        if (x->lo < next) {
            *dup = x->lo;
            rc = 1;
        } else if ((x->lo > next && runs_push(&out, next, x->lo - 1, dflt)) ||
                   runs_push(&out, x->lo, x->hi, x->v))
            rc = -1;
        next = x->hi + 1;
    }
    if (!rc && next <= CP_MAX && runs_push(&out, next, CP_MAX, dflt))
        rc = -1;
    free(rs->data);
    *rs = out;
    return rc;
}

/* runs_finish, with its failures as messages about `path`. */
static int runs_finish_file(prop_runs_t *rs, uint32_t dflt, const char *path, tb_err_t *err)
{
    uint32_t dup = 0;
    int rc = runs_finish(rs, dflt, &dup);
    if (rc > 0)
        return tb_fail(err, "malformed Unicode data file %s: U+%04X is given twice", path, dup);
    return rc ? tb_fail(err, "out of memory") : 0;
}

/* ---- general categories (UnicodeData.txt) -------------------------------- */

static const char *const cat_names[] = {
    "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No",
    "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So",
    "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn",
};
#define NCATS (sizeof cat_names / sizeof *cat_names)
#define CAT_CN (NCATS - 1)

/* The category of every code point (v = index in cat_names; unlisted code
 * points are Cn). */
static struct {
    char src[512];
    prop_runs_t runs;
} cats;

static int load_categories(tb_err_t *err)
{
    char path[512];
    data_path("UnicodeData.txt", path, sizeof path);
    if (cats.runs.data && !strcmp(cats.src, path))
        return 0;
    ucd_file_t f;
    if (ucd_open(&f, "UnicodeData.txt", "\\p{<general category>}", err))
        return -1;
    prop_runs_t runs = {0};
    char *fl[4];
    int nf, rc = 0;
    long first = -1; /* the start of a "<..., First>" range */
    while (!rc && (nf = ucd_next(&f, fl, 4)) > 0) {
        uint32_t cp, hi;
        unsigned c = 0;
        while (nf == 4 && c < NCATS && (fl[2][0] != cat_names[c][0] ||
                                        fl[2][1] != cat_names[c][1] || fl[2][2]))
            c++;
        if (nf < 4 || parse_cps(fl[0], &cp, &hi) || hi != cp || c == NCATS) {
            rc = ucd_bad(&f, "expected code;name;general category;...");
            break;
        }
        size_t nl = strlen(fl[1]);
        if (nl > 8 && !strcmp(fl[1] + nl - 8, ", First>")) {
            first = cp;
            continue;
        }
        uint32_t from = nl > 7 && !strcmp(fl[1] + nl - 7, ", Last>") && first >= 0
                            ? (uint32_t)first : cp;
        if (runs_push(&runs, from, cp, c))
            rc = tb_fail(err, "out of memory");
        first = -1;
    }
    ucd_close(&f);
    if (!rc)
        rc = runs_finish_file(&runs, CAT_CN, f.path, err);
    if (rc) {
        free(runs.data);
        return -1;
    }
    free(cats.runs.data);
    cats.runs = runs;
    snprintf(cats.src, sizeof cats.src, "%s", f.path);
    return 0;
}

/* ---- scripts (PropertyValueAliases.txt, Scripts.txt, ScriptExtensions.txt) */

#define MAX_SCRIPTS 255 /* script indexes fit the byte table read from Scripts.txt */
#define SC_ALIASES 4

/* A run of code points and the scripts in their Script_Extensions (bit i of
 * bits[i / 64] for script index i). */
typedef struct {
    uint32_t lo, hi;
    uint64_t bits[4];
} scx_run_t;

static struct {
    char src[512];                          /* the Scripts.txt it came from */
    size_t n;                               /* scripts */
    char alias[MAX_SCRIPTS][SC_ALIASES][48]; /* loose names, "" when unused */
    prop_runs_t runs;                       /* the Script of every code point */
    TB_VEC(scx_run_t) scx;
    size_t unknown;                         /* Zzzz, the script of unlisted code points */
} scr;

/* The index of the script called `loose` (a loose name), or -1. */
static int script_find(const char *loose)
{
    for (size_t i = 0; i < scr.n; i++)
        for (int a = 0; a < SC_ALIASES; a++)
            if (scr.alias[i][a][0] && !strcmp(scr.alias[i][a], loose))
                return (int)i;
    return -1;
}

/* The "sc ; Short ; Long ; Other..." lines of PropertyValueAliases.txt. */
static int load_script_names(tb_err_t *err)
{
    ucd_file_t f;
    if (ucd_open(&f, "PropertyValueAliases.txt", "\\p{<script>}", err))
        return -1;
    char *fl[2 + SC_ALIASES];
    int nf, rc = 0;
    scr.n = 0;
    while (!rc && (nf = ucd_next(&f, fl, 2 + SC_ALIASES)) > 0) {
        if (strcmp(fl[0], "sc"))
            continue;
        if (nf < 3 || !*fl[1] || !*fl[2])
            rc = ucd_bad(&f, "expected sc ; short name ; long name");
        else if (scr.n == MAX_SCRIPTS - 1)
            rc = ucd_bad(&f, "more scripts than this parser has room for");
        else {
            for (int a = 0; a < SC_ALIASES; a++)
                scr.alias[scr.n][a][0] = 0;
            for (int a = 1; a < nf && a <= SC_ALIASES; a++)
                loose_name(fl[a], scr.alias[scr.n][a - 1], sizeof scr.alias[0][0]);
            scr.n++;
        }
    }
    ucd_close(&f);
    if (rc)
        return -1;
    int z = script_find("zzzz");
    if (z < 0)
        return tb_fail(err, "malformed Unicode data file %s: no script Zzzz (Unknown)", f.path);
    scr.unknown = (size_t)z;
    return 0;
}

/* Scripts.txt into runs of script indexes. */
static int load_script_values(tb_err_t *err, prop_runs_t *runs)
{
    ucd_file_t f;
    if (ucd_open(&f, "Scripts.txt", "\\p{<script>}", err))
        return -1;
    char *fl[2], name[64], last[64] = "";
    int nf, rc = 0, s = -1;
    while (!rc && (nf = ucd_next(&f, fl, 2)) > 0) {
        uint32_t lo, hi;
        loose_name(nf == 2 ? fl[1] : "", name, sizeof name);
        /* The file groups its lines by script: look a name up once. */
        if (strcmp(name, last)) {
            s = script_find(name);
            memcpy(last, name, sizeof last);
        }
        if (nf != 2 || parse_cps(fl[0], &lo, &hi))
            rc = ucd_bad(&f, "expected code point(s) ; script");
        else if (s < 0)
            rc = ucd_bad(&f, "a script that PropertyValueAliases.txt does not name");
        else if (runs_push(runs, lo, hi, (uint32_t)s))
            rc = tb_fail(err, "out of memory");
    }
    if (!rc)
        rc = runs_finish_file(runs, (uint32_t)scr.unknown, f.path, err);
    ucd_close(&f);
    return rc;
}

static int load_script_extensions(tb_err_t *err)
{
    ucd_file_t f;
    if (ucd_open(&f, "ScriptExtensions.txt", "\\p{<script>}", err))
        return -1;
    char *fl[2], name[64];
    int nf, rc = 0;
    scr.scx.len = 0;
    while (!rc && (nf = ucd_next(&f, fl, 2)) > 0) {
        scx_run_t run = {0};
        if (nf != 2 || parse_cps(fl[0], &run.lo, &run.hi) || !*fl[1]) {
            rc = ucd_bad(&f, "expected code point(s) ; script names");
            break;
        }
        /* The value is a space-separated list of short script names. */
        for (char *tok = strtok(fl[1], " \t"); tok && !rc; tok = strtok(NULL, " \t")) {
            loose_name(tok, name, sizeof name);
            int s = script_find(name);
            if (s < 0)
                rc = ucd_bad(&f, "a script that PropertyValueAliases.txt does not name");
            else
                run.bits[s >> 6] |= 1ull << (s & 63);
        }
        if (!rc && tb_vec_push(&scr.scx, run))
            rc = tb_fail(err, "out of memory");
    }
    ucd_close(&f);
    return rc;
}

static int load_scripts(tb_err_t *err)
{
    char path[512];
    data_path("Scripts.txt", path, sizeof path);
    if (scr.runs.data && !strcmp(scr.src, path))
        return 0;
    scr.src[0] = 0;
    prop_runs_t runs = {0};
    if (load_script_names(err) || load_script_values(err, &runs) ||
        load_script_extensions(err)) {
        free(runs.data);
        return -1;
    }
    free(scr.runs.data);
    scr.runs = runs;
    snprintf(scr.src, sizeof scr.src, "%s", path);
    return 0;
}

/* ---- case folding (CaseFolding.txt) ---------------------------------------- */

/*
 * PCRE2 in UTF mode matches a character caselessly against every character
 * with the same simple case folding (CaseFolding.txt, statuses C and S):
 * k, K and U+212A KELVIN SIGN; s, S and U+017F LONG S; sigma, final sigma
 * and capital sigma.  Those sets ("orbits") are kept as one array sorted by
 * code point, each entry linking to the next member of its orbit, so that
 * folding a range visits only the cased code points inside it.
 */
typedef struct {
    uint32_t cp;
    uint32_t next; /* index of the next member of the orbit (circular) */
    uint32_t key;  /* the folded form, while building */
} orbit_t;

static struct {
    char src[512];
    orbit_t *o;
    size_t n;
} fold;

static int cmp_orbit_key(const void *x, const void *y)
{
    const orbit_t *a = x, *b = y;
    if (a->key != b->key)
        return (a->key > b->key) - (a->key < b->key);
    return (a->cp > b->cp) - (a->cp < b->cp);
}

static int cmp_orbit_cp(const void *x, const void *y)
{
    const orbit_t *a = x, *b = y;
    return (a->cp > b->cp) - (a->cp < b->cp);
}

/* Links each orbit (entries sorted by cp, key = folded form) into a cycle. */
static int link_orbits(orbit_t *o, size_t n)
{
    /* A copy sorted by orbit, whose next fields say where each entry is in o. */
    orbit_t *byk = malloc(n * sizeof *byk);
    if (!byk)
        return -1;
    memcpy(byk, o, n * sizeof *o);
    for (size_t i = 0; i < n; i++)
        byk[i].next = (uint32_t)i; /* where the entry is in o */
    qsort(byk, n, sizeof *byk, cmp_orbit_key);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && byk[j + 1].key == byk[i].key)
            j++;
        for (size_t k = i; k <= j; k++)
            o[byk[k].next].next = byk[k < j ? k + 1 : i].next;
        i = j + 1;
    }
    free(byk);
    return 0;
}

static int load_folding(tb_err_t *err)
{
    char path[512];
    data_path("CaseFolding.txt", path, sizeof path);
    if (fold.o && !strcmp(fold.src, path))
        return 0;
    ucd_file_t f;
    if (ucd_open(&f, "CaseFolding.txt", "(?i) (caseless matching)", err))
        return -1;
    TB_VEC(orbit_t) v = {0};
    char *fl[4];
    int nf, rc = 0;
    while (!rc && (nf = ucd_next(&f, fl, 4)) > 0) {
        uint32_t from, x, to;
        if (nf < 3 || parse_cps(fl[0], &from, &x) || x != from || !*fl[1] || fl[1][1]) {
            rc = ucd_bad(&f, "expected code; status; mapping");
            break;
        }
        if (strcmp(fl[1], "C") && strcmp(fl[1], "S"))
            continue; /* full (F) and Turkic (T) foldings: not simple */
        if (parse_cps(fl[2], &to, &x) || x != to || to == from) {
            rc = ucd_bad(&f, "a simple folding must map to one other code point");
            break;
        }
        /* The folded form belongs to its own orbit; duplicates go below. */
        if (tb_vec_push(&v, ((orbit_t){.cp = from, .key = to})) ||
            tb_vec_push(&v, ((orbit_t){.cp = to, .key = to})))
            rc = tb_fail(err, "out of memory");
    }
    orbit_t *o = v.data;
    size_t n = v.len;
    if (!rc && n) {
        qsort(o, n, sizeof *o, cmp_orbit_key);
        size_t u = 1;
        for (size_t i = 1; i < n; i++)
            if (o[i].cp != o[u - 1].cp || o[i].key != o[u - 1].key)
                o[u++] = o[i];
        n = u;
        qsort(o, n, sizeof *o, cmp_orbit_cp);
        for (size_t i = 1; i < n && !rc; i++)
            if (o[i].cp == o[i - 1].cp)
                rc = tb_fail(err, "malformed Unicode data file %s: U+%04X folds two ways",
                             f.path, o[i].cp);
        if (!rc && link_orbits(o, n))
            rc = tb_fail(err, "out of memory");
    }
    ucd_close(&f);
    if (rc) {
        free(o);
        return -1;
    }
    free(fold.o);
    fold.o = o;
    fold.n = n;
    snprintf(fold.src, sizeof fold.src, "%s", f.path);
    return 0;
}

/* Adds to s every code point caselessly equal to one already in it. */
static int cps_fold(cp_set_t *s, tb_err_t *err)
{
    if (load_folding(err))
        return -1;
    size_t n = s->n;
    for (size_t i = 0; i < n; i++) {
        uint32_t lo = s->r[i].lo, hi = s->r[i].hi;
        size_t a = 0, b = fold.n; /* first entry with cp >= lo */
        while (a < b) {
            size_t m = (a + b) / 2;
            if (fold.o[m].cp < lo)
                a = m + 1;
            else
                b = m;
        }
        for (size_t j = a; j < fold.n && fold.o[j].cp <= hi; j++)
            for (size_t k = fold.o[j].next; k != j; k = fold.o[k].next)
                if (cps_add(s, fold.o[k].cp, fold.o[k].cp))
                    return tb_fail(err, "out of memory");
    }
    cps_norm(s);
    return 0;
}

/* ---- the parser ----------------------------------------------------------- */

typedef struct {
    lex_terms_t *t;
    const char *p; /* the pattern */
    size_t len, pos;
    int icase;
    unsigned depth;
    size_t open_at; /* the innermost open group's '(' */
    tb_err_t *err;
    struct lex_group_memo *memo;
    unsigned deepest; /* the deepest nesting reached (memo_group's heights) */
} parser_t;

static int perr(parser_t *ps, size_t at, const char *fmt, const char *detail)
{
    char what[256];
    snprintf(what, sizeof what, fmt, detail ? detail : "");
    return tb_fail(ps->err, "regex '%.*s': %s at offset %zu", (int)(ps->len > 300 ? 300 : ps->len),
                   ps->p, what, at);
}

/* Puts the pattern and offset in front of an error raised below the parser
 * (a Unicode data file that is missing or malformed). */
static int perr_wrap(parser_t *ps, size_t at)
{
    return tb_wrap(ps->err, "regex '%.*s' at offset %zu", (int)(ps->len > 300 ? 300 : ps->len),
                   ps->p, at);
}

static int full_check(parser_t *ps)
{
    if (ps->t->full)
        return perr(ps, ps->pos, "pattern too large (more than the term limit)", NULL);
    return 0;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Reads exactly n hex digits, or {H...} when brace_ok and a brace follows. */
static int read_hex(parser_t *ps, unsigned n, int brace_ok, uint32_t *cp)
{
    size_t start = ps->pos;
    uint32_t v = 0;
    if (brace_ok && ps->pos < ps->len && ps->p[ps->pos] == '{') {
        ps->pos++;
        unsigned digits = 0;
        while (ps->pos < ps->len && ps->p[ps->pos] != '}') {
            int h = hexval(ps->p[ps->pos]);
            if (h < 0 || ++digits > 8)
                return perr(ps, ps->pos, "bad hex escape", NULL);
            v = v * 16 + (uint32_t)h;
            ps->pos++;
        }
        if (ps->pos >= ps->len || !digits)
            return perr(ps, start, "unterminated hex escape", NULL);
        ps->pos++;
    } else {
        for (unsigned i = 0; i < n; i++) {
            int h = ps->pos < ps->len ? hexval(ps->p[ps->pos]) : -1;
            if (h < 0)
                return perr(ps, ps->pos, "expected a hex digit", NULL);
            v = v * 16 + (uint32_t)h;
            ps->pos++;
        }
    }
    if (v > CP_MAX || (v >= 0xD800 && v <= 0xDFFF))
        return perr(ps, start, "code point out of range (or a surrogate)", NULL);
    *cp = v;
    return 0;
}

static int add_perl_class(cp_set_t *s, char c)
{
    switch (c) {
    case 'd': return cps_add(s, '0', '9');
    case 'w':
        return cps_add(s, '0', '9') || cps_add(s, 'A', 'Z') || cps_add(s, 'a', 'z') ||
               cps_add(s, '_', '_');
    default: /* 's': PCRE's ASCII white space */
        return cps_add(s, '\t', '\r') || cps_add(s, ' ', ' ');
    }
}

/* The general categories a loose name stands for (want[c] = 1 for index c
 * of cat_names): a letter for a group, two for a category, l& and lc for
 * cased letters, any.  0 if the name is none of those. */
static int gc_want(const char *name, uint8_t want[256])
{
    size_t n = strlen(name);
    int cased = !strcmp(name, "l&") || !strcmp(name, "lc"), any = !strcmp(name, "any");
    int found = 0;
    for (size_t c = 0; c < NCATS; c++) {
        char lc[3] = {(char)(cat_names[c][0] + 32), cat_names[c][1], 0};
        if ((n == 1 && lc[0] == name[0]) || (n == 2 && !strcmp(lc, name)) ||
            (cased && c <= 2) || any)
            want[c] = found = 1;
    }
    return found;
}

/* Adds the runs whose value v has want[v] to s. */
static int add_runs(cp_set_t *s, const prop_runs_t *runs, const uint8_t want[256])
{
    for (size_t i = 0; i < runs->len; i++)
        if (want[runs->data[i].v] && cps_add(s, runs->data[i].lo, runs->data[i].hi))
            return -1;
    return 0;
}

/* \p{..} / \P{..} / \pX, after the 'p' or 'P'. */
static int parse_property(parser_t *ps, int negate, cp_set_t *s)
{
    size_t start = ps->pos - 2;
    char name[72];
    size_t n = 0;
    if (ps->pos < ps->len && ps->p[ps->pos] == '{') {
        ps->pos++;
        while (ps->pos < ps->len && ps->p[ps->pos] != '}') {
            if (n + 1 >= sizeof name)
                return perr(ps, start, "property name too long", NULL);
            name[n++] = ps->p[ps->pos++];
        }
        if (ps->pos >= ps->len)
            return perr(ps, start, "unterminated \\p{", NULL);
        ps->pos++;
    } else if (ps->pos < ps->len) {
        name[n++] = ps->p[ps->pos++];
    } else
        return perr(ps, start, "\\p needs a property name", NULL);
    name[n] = 0;
    char key[sizeof name];
    loose_name(name, key, sizeof key);
    char *val = key;
    if (*val == '^') { /* \p{^L} is PCRE's spelling of \P{L} */
        negate = !negate;
        val++;
    }
    /* sc=X (or script=X, sc:X) is the Script property; scx=X and a bare
     * script name are Script_Extensions as PCRE2 10.40+ reads them. */
    int by_sc = 0, prefixed = 0;
    char *eq = strpbrk(val, "=:");
    if (eq) {
        *eq = 0;
        if (!strcmp(val, "sc") || !strcmp(val, "script"))
            by_sc = 1;
        else if (strcmp(val, "scx") && strcmp(val, "scriptextensions"))
            return perr(ps, start, "unknown or unsupported Unicode property '%s'", name);
        val = eq + 1;
        prefixed = 1;
    }
    uint8_t want[256] = {0};
    cp_set_t mine = {0};
    int rc;
    if (!prefixed && gc_want(val, want)) {
        if (load_categories(ps->err))
            return perr_wrap(ps, start);
        rc = add_runs(&mine, &cats.runs, want);
    } else {
        if (load_scripts(ps->err))
            return perr_wrap(ps, start);
        int x = script_find(val);
        if (x < 0)
            return perr(ps, start, "unknown or unsupported Unicode property '%s'", name);
        want[x] = 1;
        rc = add_runs(&mine, &scr.runs, want);
        for (size_t i = 0; i < scr.scx.len && !rc && !by_sc; i++)
            if ((scr.scx.data[i].bits[x >> 6] >> (x & 63)) & 1)
                rc = cps_add(&mine, scr.scx.data[i].lo, scr.scx.data[i].hi);
        if (!rc && !mine.n) { /* Katakana_Or_Hiragana: named, given to nothing */
            free(mine.r);
            return perr(ps, start, "Unicode script '%s' has no characters", name);
        }
    }
    cps_norm(&mine);
    if (!rc && negate)
        rc = cps_negate(&mine);
    for (size_t i = 0; i < mine.n && !rc; i++)
        rc = cps_add(s, mine.r[i].lo, mine.r[i].hi);
    free(mine.r);
    return rc ? tb_fail(ps->err, "out of memory") : 0;
}

/*
 * An escape after the backslash.  Either a single code point (*cp, return
 * 0) or a set added to s (return 1); -1 on error.  in_class: inside [...],
 * where \b would be a backspace in some dialects; we refuse it everywhere.
 */
static int parse_escape(parser_t *ps, uint32_t *cp, cp_set_t *s)
{
    size_t at = ps->pos - 1;
    if (ps->pos >= ps->len)
        return perr(ps, at, "trailing backslash", NULL);
    char c = ps->p[ps->pos++];
    switch (c) {
    case 'n': *cp = '\n'; return 0;
    case 'r': *cp = '\r'; return 0;
    case 't': *cp = '\t'; return 0;
    case 'f': *cp = '\f'; return 0;
    case 'v': *cp = '\v'; return 0;
    case 'a': *cp = 7; return 0;
    case 'e': *cp = 27; return 0;
    case '0':
        if (ps->pos < ps->len && ps->p[ps->pos] >= '0' && ps->p[ps->pos] <= '7')
            return perr(ps, at, "octal escapes are not supported", NULL);
        *cp = 0;
        return 0;
    case 'x': return read_hex(ps, 2, 1, cp);
    case 'u': return read_hex(ps, 4, 1, cp);
    case 'd': case 'w': case 's':
        return add_perl_class(s, c) ? tb_fail(ps->err, "out of memory") : 1;
    case 'D': case 'W': case 'S': {
        cp_set_t tmp = {0};
        int rc = add_perl_class(&tmp, (char)(c + 32)) || cps_negate(&tmp);
        for (size_t i = 0; i < tmp.n && !rc; i++)
            rc = cps_add(s, tmp.r[i].lo, tmp.r[i].hi);
        free(tmp.r);
        return rc ? tb_fail(ps->err, "out of memory") : 1;
    }
    case 'p': case 'P':
        return parse_property(ps, c == 'P', s) ? -1 : 1;
    case 'b': case 'B': case 'A': case 'z': case 'Z': case 'G':
        return perr(ps, at, "assertion \\%s is not supported (the whole pattern is matched)",
                    (char[]){c, 0});
    case 'k': case 'g':
        return perr(ps, at, "back-references are not supported", NULL);
    default:
        break;
    }
    if (c >= '1' && c <= '9')
        return perr(ps, at, "back-references are not supported", NULL);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return perr(ps, at, "unknown escape \\%s", (char[]){c, 0});
    if ((unsigned char)c >= 0x80)
        return perr(ps, at, "escaped non-ASCII character", NULL);
    *cp = (unsigned char)c;
    return 0;
}

/* One literal code point from the pattern text (UTF-8). */
static int read_literal(parser_t *ps, uint32_t *cp)
{
    size_t l = tb_utf8_decode((const uint8_t *)ps->p + ps->pos, ps->len - ps->pos, cp);
    if (!l)
        return perr(ps, ps->pos, "invalid UTF-8 in the pattern", NULL);
    ps->pos += l;
    return 0;
}

/* The items of a class up to and past its ']': literals and ranges go to
 * lit, escaped classes to sets. */
static int parse_class_items(parser_t *ps, size_t start, cp_set_t *lit, cp_set_t *sets)
{
    int first = 1;
    for (;;) {
        if (ps->pos >= ps->len)
            return perr(ps, start, "unterminated character class", NULL);
        char c = ps->p[ps->pos];
        if (c == ']' && !first) {
            ps->pos++;
            return 0;
        }
        first = 0;
        if (c == '[' && ps->pos + 1 < ps->len && ps->p[ps->pos + 1] == ':')
            return perr(ps, ps->pos, "POSIX classes [:name:] are not supported", NULL);
        uint32_t lo;
        size_t at = ps->pos;
        int kind;
        if (c == '\\') {
            ps->pos++;
            kind = parse_escape(ps, &lo, sets);
        } else
            kind = read_literal(ps, &lo);
        if (kind < 0)
            return -1;
        int dash = ps->pos + 1 < ps->len && ps->p[ps->pos] == '-' && ps->p[ps->pos + 1] != ']';
        if (kind == 1) {
            if (dash) /* [\d-z]: PCRE2 refuses it too */
                return perr(ps, at, "a class cannot start a range", NULL);
            continue;
        }
        uint32_t hi = lo;
        if (dash) {
            ps->pos++;
            char d = ps->p[ps->pos];
            if (d == '\\') {
                ps->pos++;
                cp_set_t junk = {0};
                int k = parse_escape(ps, &hi, &junk);
                free(junk.r);
                if (k < 0)
                    return -1;
                if (k == 1)
                    return perr(ps, at, "a class cannot end a range", NULL);
            } else if (read_literal(ps, &hi))
                return -1;
            if (hi < lo)
                return perr(ps, at, "range out of order", NULL);
        }
        if (cps_add(lit, lo, hi))
            return tb_fail(ps->err, "out of memory");
    }
}

/* [...] after the '['.  Under (?i) the literals and ranges are folded, the
 * escaped classes (\d \w \s \p{..} and their negations) are not, as PCRE2
 * does it; then the whole class is negated if it starts with ^. */
static int parse_class(parser_t *ps, cp_set_t *s)
{
    size_t start = ps->pos - 1;
    int negate = 0;
    if (ps->pos < ps->len && ps->p[ps->pos] == '^') {
        negate = 1;
        ps->pos++;
    }
    cp_set_t lit = {0};
    int rc = parse_class_items(ps, start, &lit, s);
    if (!rc && ps->icase && lit.n)
        rc = cps_fold(&lit, ps->err);
    for (size_t i = 0; i < lit.n && !rc; i++)
        if (cps_add(s, lit.r[i].lo, lit.r[i].hi))
            rc = tb_fail(ps->err, "out of memory");
    free(lit.r);
    if (rc)
        return -1;
    cps_norm(s);
    if (negate && cps_negate(s))
        return tb_fail(ps->err, "out of memory");
    return 0;
}

/*
 * Anchors are written away as the parser goes: a subpattern is four terms,
 * the strings it matches along paths through no anchor (n), through a ^
 * only (s), a $ only (e) or both (se).  A ^ holds only where all before it
 * matched "", a $ only where all after it does, so concatenation keeps a
 * path through an anchor only where the other side may be empty; the whole
 * pattern is the union of the four.  LEX_NOTHING marks an empty one.
 */
typedef struct {
    lex_term_t n, s, e, se;
} anch_t;

#define ANCHOR_UNROLL 16 /* largest bound of a repetition that holds an anchor */

static int nul(const lex_terms_t *t, lex_term_t x) { return lex_node(t, x)->nullable; }

static anch_t plain(lex_term_t x) { return (anch_t){x, LEX_NOTHING, LEX_NOTHING, LEX_NOTHING}; }

static int has_anchor(const anch_t *a)
{
    return a->s != LEX_NOTHING || a->e != LEX_NOTHING || a->se != LEX_NOTHING;
}

static anch_t anch_cat(lex_terms_t *t, anch_t a, anch_t b)
{
    if (!has_anchor(&a) && !has_anchor(&b))
        return plain(lex_concat(t, a.n, b.n));
    int before = nul(t, a.n) || nul(t, a.s); /* a may be "" through no $ */
    int after = nul(t, b.n) || nul(t, b.e);  /* b may be "" through no ^ */
    anch_t o;
    o.n = lex_concat(t, a.n, b.n);
    o.s = lex_or(t, lex_concat(t, a.s, b.n), before ? b.s : LEX_NOTHING);
    o.e = lex_or(t, lex_concat(t, a.n, b.e), after ? a.e : LEX_NOTHING);
    o.se = lex_or(t, lex_concat(t, a.s, b.e),
                  lex_or(t, before ? b.se : LEX_NOTHING, after ? a.se : LEX_NOTHING));
    if ((nul(t, a.e) || nul(t, a.se)) && (nul(t, b.s) || nul(t, b.se)))
        o.se = lex_or(t, o.se, LEX_EPSILON); /* "$^" around nothing */
    return o;
}

static anch_t anch_or(lex_terms_t *t, anch_t a, anch_t b)
{
    return (anch_t){lex_or(t, a.n, b.n), lex_or(t, a.s, b.s), lex_or(t, a.e, b.e),
                    lex_or(t, a.se, b.se)};
}

static lex_term_t anch_whole(lex_terms_t *t, anch_t a)
{
    return lex_or(t, lex_or(t, a.n, a.s), lex_or(t, a.e, a.se));
}

static int parse_alt(parser_t *ps, anch_t *out);

/* r{n,m} with m = -1 for no upper bound. */
static lex_term_t repeat(lex_terms_t *t, lex_term_t r, long n, long m)
{
    if (m < 0) /* r{n,}: r{n} then r* */
        return lex_concat(t, lex_repeat(t, r, (uint32_t)n, (uint32_t)n), lex_star(t, r));
    return lex_repeat(t, r, (uint32_t)n, (uint32_t)m);
}

static int read_int(parser_t *ps, long *v)
{
    size_t s = ps->pos;
    long x = 0;
    while (ps->pos < ps->len && ps->p[ps->pos] >= '0' && ps->p[ps->pos] <= '9') {
        if (x < 100000000)
            x = x * 10 + (ps->p[ps->pos] - '0');
        ps->pos++;
    }
    *v = x;
    return ps->pos > s;
}

/* A {n}, {n,}, {n,m} at ps->pos: 1 if read (into n, m), 0 if the brace is
 * a literal (as PCRE reads a brace that starts no bound), -1 on error. */
static int parse_bound(parser_t *ps, long *n, long *m)
{
    size_t save = ps->pos;
    ps->pos++;
    if (!read_int(ps, n)) {
        ps->pos = save;
        return 0;
    }
    *m = *n;
    if (ps->pos < ps->len && ps->p[ps->pos] == ',') {
        ps->pos++;
        if (!read_int(ps, m))
            *m = -1;
    }
    if (ps->pos >= ps->len || ps->p[ps->pos] != '}') {
        ps->pos = save;
        return 0;
    }
    ps->pos++;
    char num[64];
    if (*n > LEX_MAX_REPEAT || *m > LEX_MAX_REPEAT) {
        snprintf(num, sizeof num, "%ld", *n > LEX_MAX_REPEAT ? *n : *m);
        snprintf(num + strlen(num), sizeof num - strlen(num), " is above the limit of %d",
                 LEX_MAX_REPEAT);
        return perr(ps, save, "repetition bound %s", num);
    }
    if (*m >= 0 && *m < *n)
        return perr(ps, save, "repetition bounds out of order", NULL);
    return 1;
}

/* A group after '(' ; ps->pos is past the '('. */
static int parse_group(parser_t *ps, anch_t *out)
{
    size_t at = ps->pos - 1;
    int saved_icase = ps->icase;
    if (ps->pos < ps->len && ps->p[ps->pos] == '?') {
        ps->pos++;
        char c = ps->pos < ps->len ? ps->p[ps->pos] : 0;
        int look = c == '=' || c == '!' ||
                   (c == '<' && ps->pos + 1 < ps->len &&
                    (ps->p[ps->pos + 1] == '=' || ps->p[ps->pos + 1] == '!'));
        if (look && !ps->t->lookahead)
            return perr(ps, at, "look-around assertions are not supported", NULL);
        if (c == '=' || c == '!') /* at the top level parse_seq took it */
            return perr(ps, at, "a look-ahead inside a group is not supported", NULL);
        if ((c == '<' && ps->pos + 1 < ps->len &&
                         (ps->p[ps->pos + 1] == '=' || ps->p[ps->pos + 1] == '!')))
            return perr(ps, at, "look-behind is not supported", NULL);
        if (c == ':') {
            ps->pos++;
        } else if (c == '<' || (c == 'P' && ps->pos + 1 < ps->len && ps->p[ps->pos + 1] == '<')) {
            /* A named group: the name does not change the language. */
            while (ps->pos < ps->len && ps->p[ps->pos] != '>')
                ps->pos++;
            if (ps->pos >= ps->len)
                return perr(ps, at, "unterminated group name", NULL);
            ps->pos++;
        } else if (c == 'i' || c == '-') {
            int on = 1;
            for (; ps->pos < ps->len; ps->pos++) {
                c = ps->p[ps->pos];
                /* The folding table is loaded here so that a missing
                 * CaseFolding.txt is reported where (?i) is. */
                if (c == 'i' && on && load_folding(ps->err))
                    return perr_wrap(ps, at);
                if (c == 'i')
                    ps->icase = on;
                else if (c == '-')
                    on = 0;
                else
                    break;
            }
            if (c == ')') {
                /* (?i) alone: the flag holds to the end of the enclosing
                 * group, so the caller keeps it; nothing is matched. */
                ps->pos++;
                *out = plain(LEX_EPSILON);
                return 2;
            }
            if (c != ':')
                return perr(ps, at, "unsupported group flags", NULL);
            ps->pos++;
        } else
            return perr(ps, at, "unsupported group syntax (?%s", (char[]){c, 0});
    }
    if (++ps->depth > LEX_MAX_NEST)
        return perr(ps, at, "groups nested too deeply", NULL);
    if (ps->depth > ps->deepest)
        ps->deepest = ps->depth;
    size_t outer = ps->open_at;
    ps->open_at = at;
    if (parse_alt(ps, out))
        return -1;
    ps->depth--;
    ps->open_at = outer;
    if (ps->pos >= ps->len || ps->p[ps->pos] != ')')
        return perr(ps, at, "unbalanced parenthesis", NULL);
    ps->pos++;
    ps->icase = saved_icase;
    return 0;
}

/* ---- the group memo ---------------------------------------------------------- */

/*
 * A lexer's lexemes spell the same characters and classes again and again
 * (a JSON string's escapes, each letter of each property name in several
 * lexemes), so a group's text, once parsed, maps to its terms: open
 * addressing on the text's hash; an entry points into the pattern it was
 * read from (text NULL: a free slot).  The same text parses to the same
 * terms under the same (?i) state, at any depth where its own nesting
 * (`height`: the group and the groups inside it) stays within the limit:
 * a list of names nests the same groups ever deeper, each node a level
 * further down (when entries served only their own depth or less, every
 * node parsed the same classes again).  A short group is kept only where
 * its parse ended at the ')' that the scan below pairs with its '(', so a
 * scan that pairs them wrongly only loses hits; a long one is kept with
 * the end its parse found.
 */
typedef struct {
    uint64_t hash;
    const char *text;
    uint32_t len, height;
    int icase;
    anch_t a;
} group_entry_t;

struct lex_group_memo {
    group_entry_t *e;
    size_t cap, n;
};

int lex_regex_memo_begin(lex_terms_t *t)
{
    t->groups = calloc(1, sizeof *t->groups);
    return t->groups ? 0 : -1;
}

void lex_regex_memo_end(lex_terms_t *t)
{
    if (t->groups)
        free(t->groups->e);
    free(t->groups);
    t->groups = NULL;
}

static group_entry_t *group_slot(struct lex_group_memo *m, const char *text, uint32_t len,
                                 int icase, uint64_t h)
{
    for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        group_entry_t *e = &m->e[i];
        if (!e->text || (e->hash == h && e->len == len && e->icase == icase &&
                         !memcmp(e->text, text, len)))
            return e;
    }
}

/* Remembers a group (a failed allocation only forgets). */
static void group_remember(struct lex_group_memo *m, const group_entry_t *g)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 256;
        group_entry_t *e = calloc(cap, sizeof *e), *old = m->e;
        if (!e)
            return;
        for (size_t i = 0; i < m->cap; i++)
            if (old[i].text) {
                size_t j = old[i].hash & (cap - 1);
                while (e[j].text)
                    j = (j + 1) & (cap - 1);
                e[j] = old[i];
            }
        free(old);
        m->e = e;
        m->cap = cap;
    }
    group_entry_t *slot = group_slot(m, g->text, g->len, g->icase, g->hash);
    if (!slot->text)
        m->n++;
    *slot = *g;
}

/* A group is looked up by its first GROUP_KEY bytes, or by its whole text
 * when it is no longer: a long group's end is not looked for before the
 * memo is asked.  Pairing every parenthesis of a pattern first cost a scan
 * of the whole text at each parse, and a schema's lexemes are long texts
 * (hundreds of kilobytes for the other names of a large object, 2.2 MB
 * for Kubernetes---kb_261's 391) made mostly of groups the memo holds. */
#define GROUP_KEY 64

/* The ']' that closes a class whose members start at i (`len` when none
 * before it): the first ']' after an even run of backslashes. */
static size_t class_end(const uint8_t *p, size_t i, size_t len)
{
    for (size_t from = i; from < len;) {
        const uint8_t *q = memchr(p + from, ']', len - from);
        if (!q)
            return len;
        size_t at = (size_t)(q - p), k = at;
        while (k > i && p[k - 1] == '\\')
            k--;
        if ((at - k) % 2 == 0)
            return at;
        from = at + 1;
    }
    return len;
}

/* Past the ')' that closes the group at `at` (a '('), skipping escapes and
 * classes as the parser reads them, if that is within GROUP_KEY bytes; 0
 * otherwise (a long group). */
static size_t short_group_end(const parser_t *ps, size_t at)
{
    const uint8_t *p = (const uint8_t *)ps->p;
    size_t lim = ps->len - at > GROUP_KEY ? at + GROUP_KEY : ps->len;
    unsigned depth = 0;
    for (size_t i = at; i < lim; i++) {
        if (p[i] == '\\') {
            i++;
        } else if (p[i] == '[') {
            i += 1 + (i + 1 < lim && p[i + 1] == '^');
            if (i < lim && p[i] == ']')
                i++; /* a ']' first is a member */
            i = class_end(p, i, lim);
        } else if (p[i] == '(') {
            depth++;
        } else if (p[i] == ')' && --depth == 0) {
            return i + 1;
        }
    }
    return 0;
}

/* The remembered group at text (room bytes to the pattern's end): of
 * length len, or with len 0 a long group whose whole text stands there
 * (it ends where it did: the same bytes pair the same way). */
static const group_entry_t *group_find(const struct lex_group_memo *m, const char *text,
                                       size_t room, uint32_t len, int icase, uint64_t h)
{
    for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        const group_entry_t *e = &m->e[i];
        if (!e->text)
            return NULL;
        if (e->hash == h && e->icase == icase &&
            (len ? e->len == len : e->len > GROUP_KEY && e->len <= room) &&
            !memcmp(e->text, text, e->len))
            return e;
    }
}

/* A group at ps->pos (a '('), from the memo or parsed (and remembered):
 * as parse_group, whose return values it keeps. */
static int memo_group(parser_t *ps, anch_t *out)
{
    size_t at = ps->pos;
    uint32_t end = (uint32_t)short_group_end(ps, at);
    group_entry_t g = {.text = ps->p + at, .icase = ps->icase};
    g.len = end ? end - (uint32_t)at : 0;
    int keyed = end || ps->len - at > GROUP_KEY;
    g.hash = keyed ? tb_hash(g.text, end ? g.len : GROUP_KEY) : 0;
    if (keyed && ps->memo->cap) {
        const group_entry_t *e = group_find(ps->memo, g.text, ps->len - at, g.len, g.icase,
                                            g.hash);
        if (e && ps->depth + e->height <= LEX_MAX_NEST) {
            *out = e->a;
            ps->pos = at + e->len;
            return 0;
        }
    }
    ps->pos++;
    unsigned outer = ps->deepest;
    ps->deepest = ps->depth;
    int rc = parse_group(ps, out);
    /* a long group is remembered with the end the parser found */
    if (rc == 0 && keyed && (end ? ps->pos == end : ps->pos - at > GROUP_KEY) &&
        ps->pos - at < UINT32_MAX) {
        g.len = (uint32_t)(ps->pos - at);
        g.a = *out;
        g.height = ps->deepest - ps->depth;
        group_remember(ps->memo, &g);
    }
    if (outer > ps->deepest)
        ps->deepest = outer;
    return rc;
}

/* The term for the code points of s (freed); folded first when `fold`. */
static int cps_term(parser_t *ps, cp_set_t *s, int fold, lex_term_t *out)
{
    int rc = fold && ps->icase ? cps_fold(s, ps->err) : 0;
    if (!rc) {
        cps_norm(s);
        rc = cps_to_term(ps->t, s, out) ? tb_fail(ps->err, "out of memory") : full_check(ps);
    }
    free(s->r);
    s->r = NULL;
    return rc;
}

/* a{n,m} (m < 0: no bound); a repetition of anchors is unrolled. */
static int anch_repeat(parser_t *ps, size_t at, anch_t a, long n, long m, anch_t *out)
{
    lex_terms_t *t = ps->t;
    if (!has_anchor(&a)) {
        *out = plain(repeat(t, a.n, n, m));
        return full_check(ps);
    }
    if ((m < 0 ? n : m) > ANCHOR_UNROLL)
        return perr(ps, at, "a repetition above 16 of a group that holds an anchor is not "
                    "supported", NULL);
    anch_t acc = plain(LEX_EPSILON);
    for (long i = 0; i < n; i++)
        acc = anch_cat(t, acc, a);
    if (m < 0) {
        /* (a)*: n*, s n*, n* e, s n* e | se */
        lex_term_t ns = lex_star(t, a.n);
        anch_t star = {ns, lex_concat(t, a.s, ns), lex_concat(t, ns, a.e),
                       lex_or(t, lex_concat(t, a.s, lex_concat(t, ns, a.e)), a.se)};
        acc = anch_cat(t, acc, star);
    }
    for (long i = n; i < m; i++)
        acc = anch_cat(t, acc, anch_or(t, a, plain(LEX_EPSILON)));
    *out = acc;
    return full_check(ps);
}

/* One atom and its quantifiers; *out = "" for (?i). Returns 1 when the
 * sequence ends here (| or ) or the end). */
static int parse_piece(parser_t *ps, anch_t *out)
{
    if (ps->pos >= ps->len)
        return 1;
    size_t at = ps->pos;
    char c = ps->p[ps->pos];
    cp_set_t s = {0};
    lex_term_t term;
    anch_t atom;
    switch (c) {
    case '|':
    case ')':
        return 1;
    case '*': case '+': case '?':
        return perr(ps, at, "nothing to repeat", NULL);
    case '(': {
        int rc = memo_group(ps, &atom);
        if (rc < 0)
            return -1;
        if (rc == 2) {
            *out = atom;
            return 0;
        }
        break;
    }
    case '[':
        ps->pos++;
        if (parse_class(ps, &s) || cps_term(ps, &s, 0, &term)) {
            free(s.r);
            return -1;
        }
        atom = plain(term);
        break;
    case '.':
        ps->pos++;
        if (cps_add(&s, '\n', '\n') || cps_negate(&s))
            return tb_fail(ps->err, "out of memory");
        if (cps_term(ps, &s, 0, &term))
            return -1;
        atom = plain(term);
        break;
    case '^':
    case '$':
        ps->pos++;
        *out = plain(LEX_NOTHING);
        if (c == '^')
            out->s = LEX_EPSILON;
        else
            out->e = LEX_EPSILON;
        if (ps->pos < ps->len && strchr("*+?", ps->p[ps->pos]))
            return perr(ps, ps->pos, "nothing to repeat", NULL);
        return 0;
    default: {
        uint32_t cp;
        int kind;
        if (c == '\\') {
            ps->pos++;
            kind = parse_escape(ps, &cp, &s);
        } else
            kind = read_literal(ps, &cp);
        if (kind < 0) {
            free(s.r);
            return -1;
        }
        if (kind == 0 && cps_add(&s, cp, cp))
            return tb_fail(ps->err, "out of memory");
        /* A literal folds under (?i); \d, \p{..} and the like do not. */
        if (cps_term(ps, &s, kind == 0, &term))
            return -1;
        atom = plain(term);
    }
    }
    /* Quantifiers. */
    int quantified = 0;
    while (ps->pos < ps->len) {
        size_t qat = ps->pos;
        char q = ps->p[ps->pos];
        long n, m;
        if (q == '*')
            n = 0, m = -1;
        else if (q == '+')
            n = 1, m = -1;
        else if (q == '?')
            n = 0, m = 1;
        else if (q == '{') {
            int rc = parse_bound(ps, &n, &m);
            if (rc < 0)
                return -1;
            if (rc == 0)
                break;
            ps->pos--; /* parse_bound ended past '}'; the common step below */
        } else
            break;
        if (quantified)
            return perr(ps, qat, "a quantifier cannot follow a quantifier", NULL);
        ps->pos++;
        if (ps->pos < ps->len && ps->p[ps->pos] == '+')
            return perr(ps, ps->pos, "possessive quantifiers are not supported", NULL);
        if (ps->pos < ps->len && ps->p[ps->pos] == '?')
            ps->pos++; /* lazy: the same language */
        quantified = 1;
        if (anch_repeat(ps, qat, atom, n, m, &atom))
            return -1;
    }
    *out = atom;
    return 0;
}

static int parse_seq(parser_t *ps, anch_t *out);

static int at_lookahead(const parser_t *ps)
{
    return ps->t->lookahead && ps->depth == 0 && ps->pos + 2 < ps->len &&
           (!memcmp(ps->p + ps->pos, "(?=", 3) || !memcmp(ps->p + ps->pos, "(?!", 3));
}

/*
 * X(?=A)Y at the top level: *rest is Y, each of its anchor paths
 * intersected with (A then anything) | (A through a $), so that the look-ahead
 * constrains the whole rest of the text, as it does in a whole-text match;
 * X(?!A)Y the same with the complement of that.
 */
static int parse_lookahead(parser_t *ps, anch_t *rest)
{
    size_t at = ps->pos, outer = ps->open_at;
    int saved_icase = ps->icase, neg = ps->p[ps->pos + 2] == '!';
    anch_t la, y;
    ps->pos += 3;
    ps->depth++;
    ps->open_at = at;
    if (parse_alt(ps, &la))
        return -1;
    ps->depth--;
    ps->open_at = outer;
    ps->icase = saved_icase;
    if (ps->pos >= ps->len || ps->p[ps->pos] != ')')
        return perr(ps, at, "unbalanced parenthesis", NULL);
    ps->pos++;
    if (la.s != LEX_NOTHING || la.se != LEX_NOTHING)
        return perr(ps, at, "a ^ inside a look-ahead is not supported", NULL);
    if (parse_seq(ps, &y))
        return -1;
    lex_terms_t *t = ps->t;
    lex_term_t any = lex_star(t, lex_byte_range(t, 0, 255));
    lex_term_t a = lex_or(t, lex_concat(t, la.n, any), la.e);
    if (neg)
        a = lex_not(t, a);
    *rest = (anch_t){lex_and(t, a, y.n), lex_and(t, a, y.s), lex_and(t, a, y.e),
                     lex_and(t, a, y.se)};
    return full_check(ps);
}

static int parse_seq(parser_t *ps, anch_t *out)
{
    /* Collected, then folded from the right so concatenations come out
     * right-nested without re-association work. */
    TB_VEC(anch_t) l = {0};
    int rc;
    anch_t piece;
    while ((rc = at_lookahead(ps) ? parse_lookahead(ps, &piece) : parse_piece(ps, &piece)) == 0) {
        if (tb_vec_push(&l, piece)) {
            free(l.data);
            return tb_fail(ps->err, "out of memory");
        }
    }
    if (rc < 0) {
        free(l.data);
        return -1;
    }
    /* "(a|" ran out inside a group: the group is what is wrong. */
    if (!l.len && ps->pos >= ps->len && ps->depth > 0) {
        free(l.data);
        return perr(ps, ps->open_at, "unbalanced parenthesis", NULL);
    }
    /* An empty alternative matches "". */
    anch_t acc = plain(LEX_EPSILON);
    for (size_t i = l.len; i-- > 0;)
        acc = anch_cat(ps->t, l.data[i], acc);
    free(l.data);
    *out = acc;
    return full_check(ps);
}

/* The alternatives are gathered and united once per component (lex_or_n):
 * uniting them one by one would make a new union term for every prefix of
 * the list, quadratic in a long alternation such as an enum's. */
static int parse_alt(parser_t *ps, anch_t *out)
{
    TB_VEC(lex_term_t) part[4] = {{0}, {0}, {0}, {0}};
    int rc = 0;
    do {
        anch_t a = plain(LEX_NOTHING);
        if (part[0].len)
            ps->pos++; /* the '|' */
        rc = parse_seq(ps, &a);
        lex_term_t x[4] = {a.n, a.s, a.e, a.se};
        for (int k = 0; k < 4 && !rc; k++)
            if (x[k] != LEX_NOTHING || k == 0)
                rc = tb_vec_push(&part[k], x[k]) ? tb_fail(ps->err, "out of memory") : 0;
    } while (!rc && ps->pos < ps->len && ps->p[ps->pos] == '|');
    lex_term_t x[4];
    for (int k = 0; k < 4; k++) {
        x[k] = rc || !part[k].len ? LEX_NOTHING : lex_or_n(ps->t, part[k].data, part[k].len);
        free(part[k].data);
    }
    *out = (anch_t){x[0], x[1], x[2], x[3]};
    return rc ? -1 : full_check(ps);
}

int lex_regex_parse(lex_terms_t *t, const char *pattern, size_t len,
                    lex_term_t *out, tb_err_t *err)
{
    struct lex_group_memo own = {0};
    parser_t ps = {.t = t, .p = pattern, .len = len, .err = err,
                   .memo = t->groups ? t->groups : &own};
    anch_t a;
    int rc = parse_alt(&ps, &a);
    free(own.e);
    if (!rc) {
        *out = anch_whole(t, a);
        rc = full_check(&ps);
    }
    if (!rc && ps.pos < len)
        rc = perr(&ps, ps.pos, "unbalanced parenthesis", NULL);
    return rc;
}
