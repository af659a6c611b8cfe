/* earley: hash-consed Earley rows over lexemes (see earley.h). */
#include "earley.h"

#include <stdlib.h>
#include <string.h>

static int fail(gr_parser_t *p, const char *msg)
{
    if (!p->failed)
        tb_fail(&p->err, "%s: %s", p->source, msg);
    p->failed = 1;
    return -1;
}

/* ---- the grammar, flattened --------------------------------------------------- */

static int flatten(gr_parser_t *p, const gr_cfg_t *g, tb_err_t *err)
{
    size_t ndots = 2;
    for (size_t r = 0; r < g->rule.len; r++)
        ndots += g->rule.data[r].n + 1;
    if (ndots >= GR_END / 2)
        return tb_fail(err, "%s: grammar too large", p->source);
    p->ndots = (uint32_t)ndots;
    p->nnt = (uint32_t)g->nt.len;
    p->nlex = (uint32_t)g->lex.len;
    p->words = (p->nlex + 63) / 64 ? (p->nlex + 63) / 64 : 1;
    p->after = malloc(ndots * sizeof *p->after);
    p->lhs = malloc(ndots * sizeof *p->lhs);
    p->pred_off = calloc(p->nnt + 2, sizeof *p->pred_off);
    p->pred = malloc((g->rule.len + 1) * sizeof *p->pred);
    p->nullable = calloc(p->nnt + 1, 1);
    p->pred_gen = calloc(p->nnt + 1, sizeof *p->pred_gen);
    if (!p->after || !p->lhs || !p->pred_off || !p->pred || !p->nullable || !p->pred_gen)
        return tb_fail(err, "out of memory");
    for (size_t a = 0; a < p->nnt; a++)
        p->nullable[a] = g->nt.data[a].nullable;
    /* pred_off by counting rules per left side, then fill in rule order. */
    for (size_t r = 0; r < g->rule.len; r++)
        p->pred_off[g->rule.data[r].lhs + 1]++;
    p->pred_off[p->nnt + 1] = 1;
    for (size_t a = 0; a <= p->nnt; a++)
        p->pred_off[a + 1] += p->pred_off[a];
    uint32_t *fill = calloc(p->nnt + 1, sizeof *fill);
    if (!fill)
        return tb_fail(err, "out of memory");
    uint32_t d = 0;
    for (size_t r = 0; r < g->rule.len; r++) {
        const gr_rule_t *ru = &g->rule.data[r];
        p->pred[p->pred_off[ru->lhs] + fill[ru->lhs]++] = d;
        for (uint32_t i = 0; i <= ru->n; i++, d++) {
            p->after[d] = i < ru->n ? g->sym.data[ru->off + i] : GR_END;
            p->lhs[d] = ru->lhs;
        }
    }
    free(fill);
    p->start_dot = d;
    p->accept_dot = d + 1;
    p->after[d] = g->start;
    p->after[d + 1] = GR_END;
    p->lhs[d] = p->lhs[d + 1] = p->nnt;
    p->pred[p->pred_off[p->nnt]] = d;
    p->nullable[p->nnt] = p->nullable[g->start];
    return 0;
}

/* ---- one row being made ------------------------------------------------------- */

static void next_generation(gr_parser_t *p)
{
    p->work.len = 0;
    if (++p->gen == 0) { /* wrapped: stamps of 2^32 rows ago would match again */
        memset(p->seen_gen, 0, p->seen_cap * sizeof *p->seen_gen);
        memset(p->pred_gen, 0, (p->nnt + 1) * sizeof *p->pred_gen);
        p->gen = 1;
    }
}

static int seen_insert(gr_parser_t *p, uint64_t key)
{
    size_t m = p->seen_cap - 1;
    for (size_t h = tb_hash_u64(key) & m;; h = (h + 1) & m) {
        if (p->seen_gen[h] != p->gen) {
            p->seen_gen[h] = p->gen;
            p->seen_key[h] = key;
            return 1;
        }
        if (p->seen_key[h] == key)
            return 0;
    }
}

static int seen_grow(gr_parser_t *p)
{
    size_t cap = p->seen_cap ? p->seen_cap * 2 : 256;
    uint64_t *k = malloc(cap * sizeof *k);
    uint32_t *g = calloc(cap, sizeof *g);
    if (!k || !g) {
        free(k);
        free(g);
        return fail(p, "out of memory");
    }
    free(p->seen_key);
    free(p->seen_gen);
    p->seen_key = k;
    p->seen_gen = g;
    p->seen_cap = cap;
    /* Re-stamp what the row holds so far under the current generation. */
    for (size_t i = 0; i < p->work.len; i++)
        seen_insert(p, (uint64_t)p->work.data[i].dot << 32 | p->work.data[i].origin);
    return 0;
}

/* Adds item (dot, origin) to the row being made unless it is there. */
static int add(gr_parser_t *p, uint32_t dot, uint32_t origin)
{
    if ((p->work.len + 1) * 2 > p->seen_cap && seen_grow(p))
        return -1;
    if (!seen_insert(p, (uint64_t)dot << 32 | origin))
        return 0;
    if (p->work.len >= p->max_items)
        return fail(p, "an Earley row needs more items than the limit");
    if (tb_vec_push(&p->work, ((gr_item_t){dot, origin})))
        return fail(p, "out of memory");
    return 0;
}

/* Completes and predicts until the row is closed; the row's items are the
 * worklist itself. */
static int closure(gr_parser_t *p)
{
    for (size_t i = 0; i < p->work.len; i++) {
        gr_item_t it = p->work.data[i];
        uint32_t a = p->after[it.dot];
        if (a == GR_END) {
            if (it.origin == GR_SELF)
                continue; /* nullable: advanced when predicted */
            uint32_t lhs = p->lhs[it.dot];
            const gr_row_t *o = &p->rows.data[it.origin];
            for (uint32_t k = 0; k < o->n; k++) {
                gr_item_t x = p->items.data[o->off + k];
                if (p->after[x.dot] == lhs &&
                    add(p, x.dot + 1, x.origin == GR_SELF ? it.origin : x.origin))
                    return -1;
            }
        } else if (!gr_is_lex(a)) {
            if (p->pred_gen[a] != p->gen) {
                p->pred_gen[a] = p->gen;
                for (uint32_t k = p->pred_off[a]; k < p->pred_off[a + 1]; k++)
                    if (add(p, p->pred[k], GR_SELF))
                        return -1;
            }
            if (p->nullable[a] && add(p, it.dot + 1, it.origin))
                return -1;
        }
    }
    return 0;
}

static int cmp_item(const void *x, const void *y)
{
    const gr_item_t *a = x, *b = y;
    if (a->dot != b->dot)
        return a->dot < b->dot ? -1 : 1;
    return a->origin < b->origin ? -1 : a->origin > b->origin;
}

static int by_hash_grow(gr_parser_t *p)
{
    size_t cap = p->by_cap ? p->by_cap * 2 : 1024;
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t)
        return fail(p, "out of memory");
    for (uint32_t r = 1; r < p->rows.len; r++) {
        size_t h = p->rows.data[r].hash & (cap - 1);
        while (t[h])
            h = (h + 1) & (cap - 1);
        t[h] = r;
    }
    free(p->by_hash);
    p->by_hash = t;
    p->by_cap = cap;
    return 0;
}

/* The row holding the work items: found by content or made. */
static uint32_t intern(gr_parser_t *p)
{
    size_t n = p->work.len;
    qsort(p->work.data, n, sizeof *p->work.data, cmp_item);
    uint64_t h = tb_hash(p->work.data, n * sizeof *p->work.data);
    size_t m = p->by_cap - 1, slot = h & m;
    for (uint32_t r; (r = p->by_hash[slot]) != 0; slot = (slot + 1) & m) {
        const gr_row_t *row = &p->rows.data[r];
        if (row->hash == h && row->n == n &&
            !memcmp(p->items.data + row->off, p->work.data, n * sizeof *p->work.data))
            return r;
    }
    if (p->items.len + n > p->max_items) {
        fail(p, "the Earley rows need more items than the limit (a grammar or text "
                "too ambiguous for it)");
        return GR_ROW_DEAD;
    }
    if (tb_vec_reserve(&p->items, n) || tb_vec_reserve(&p->rows, 1) ||
        tb_vec_reserve(&p->expect, p->words)) {
        fail(p, "out of memory");
        return GR_ROW_DEAD;
    }
    uint32_t r = (uint32_t)p->rows.len;
    gr_row_t row = {.off = (uint32_t)p->items.len, .n = (uint32_t)n, .hash = h};
    uint64_t *ex = p->expect.data + p->expect.len;
    memset(ex, 0, p->words * sizeof *ex);
    for (size_t i = 0; i < n; i++) {
        gr_item_t it = p->work.data[i];
        uint32_t a = p->after[it.dot];
        if (a != GR_END && gr_is_lex(a))
            ex[gr_index(a) >> 6] |= 1ull << (gr_index(a) & 63);
        row.accept |= it.dot == p->accept_dot;
    }
    memcpy(p->items.data + p->items.len, p->work.data, n * sizeof *p->work.data);
    p->items.len += n;
    p->expect.len += p->words;
    p->rows.data[p->rows.len++] = row;
    p->by_hash[slot] = r;
    if (p->rows.len * 2 > p->by_cap && by_hash_grow(p))
        return GR_ROW_DEAD;
    return r;
}

/* ---- the interface ------------------------------------------------------------ */

int gr_parser_init(gr_parser_t *p, const gr_cfg_t *g, size_t max_items, tb_err_t *err)
{
    memset(p, 0, sizeof *p);
    p->source = g->source;
    p->max_items = max_items ? max_items : GR_DEFAULT_MAX_ITEMS;
    if (!g->finished)
        return tb_fail(err, "%s: internal: grammar not finished", g->source);
    if (flatten(p, g, err) || by_hash_grow(p) || seen_grow(p) ||
        tb_vec_reserve(&p->rows, 1) || tb_vec_reserve(&p->expect, p->words)) {
        if (p->failed)
            tb_fail(err, "%s", p->err.msg);
        gr_parser_free(p);
        return -1;
    }
    /* Row 0: the dead row, empty. */
    p->rows.data[p->rows.len++] = (gr_row_t){0};
    memset(p->expect.data, 0, p->words * sizeof *p->expect.data);
    p->expect.len = p->words;
    next_generation(p);
    if (add(p, p->start_dot, GR_SELF) || closure(p) || intern(p) != GR_ROW_START) {
        gr_parser_error(p, err);
        gr_parser_free(p);
        return -1;
    }
    return 0;
}

void gr_parser_free(gr_parser_t *p)
{
    free(p->after);
    free(p->lhs);
    free(p->pred_off);
    free(p->pred);
    free(p->nullable);
    free(p->pred_gen);
    free(p->items.data);
    free(p->rows.data);
    free(p->expect.data);
    free(p->by_hash);
    free(p->work.data);
    free(p->seen_key);
    free(p->seen_gen);
    memset(p, 0, sizeof *p);
}

uint32_t gr_parser_scan(gr_parser_t *p, uint32_t r, const uint64_t *lexemes)
{
    if (r == GR_ROW_DEAD || p->failed)
        return GR_ROW_DEAD;
    next_generation(p);
    const gr_row_t row = p->rows.data[r];
    for (uint32_t k = 0; k < row.n; k++) {
        gr_item_t it = p->items.data[row.off + k];
        uint32_t a = p->after[it.dot];
        if (a == GR_END || !gr_is_lex(a) ||
            !((lexemes[gr_index(a) >> 6] >> (gr_index(a) & 63)) & 1))
            continue;
        if (add(p, it.dot + 1, it.origin == GR_SELF ? r : it.origin))
            return GR_ROW_DEAD;
    }
    if (p->work.len == 0 || closure(p))
        return GR_ROW_DEAD;
    return intern(p);
}

uint32_t gr_parser_union(gr_parser_t *p, uint32_t a, uint32_t b)
{
    if (p->failed)
        return GR_ROW_DEAD;
    if (a == b || b == GR_ROW_DEAD)
        return a;
    if (a == GR_ROW_DEAD)
        return b;
    next_generation(p);
    uint32_t both[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        const gr_row_t row = p->rows.data[both[i]];
        for (uint32_t k = 0; k < row.n; k++)
            if (add(p, p->items.data[row.off + k].dot, p->items.data[row.off + k].origin))
                return GR_ROW_DEAD;
    }
    return intern(p);
}

int gr_parser_error(const gr_parser_t *p, tb_err_t *err)
{
    if (!p->failed)
        return 0;
    return tb_fail(err, "%s", p->err.msg);
}
