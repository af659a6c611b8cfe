/* earley: hash-consed Earley rows over lexemes (see earley.h). */
#include "earley.h"

#include <stdlib.h>
#include <string.h>

#include "../base/sort.h"

static int fail(gr_parser_t *p, const char *msg)
{
    if (!p->failed)
        tb_fail(&p->err, "%s: %s", p->source, msg);
    p->failed = 1;
    return -1;
}

/* ---- the grammar, flattened --------------------------------------------------- */

/* Appends dot (symbol after it, its rule's left side). */
static int dot(gr_parser_t *p, uint32_t after, uint32_t lhs)
{
    if (p->after.len >= GR_END / 2 || p->after.len >= p->max_items)
        return fail(p, "the grammar needs more rule positions than the limit (sets of "
                       "properties in any order reached too many states)");
    if (tb_vec_push(&p->after, after) || tb_vec_push(&p->lhs, lhs))
        return fail(p, "out of memory");
    p->ndots = (uint32_t)p->after.len;
    return 0;
}

/* A new nonterminal with rules not made yet (set states) or pred[lo..hi). */
static int nonterm(gr_parser_t *p, gr_span_t span, uint8_t nullable)
{
    if (tb_vec_push(&p->rules, span) || tb_vec_push(&p->nullable, nullable) ||
        tb_vec_push(&p->pred_gen, 0))
        return fail(p, "out of memory");
    return 0;
}

static int copy_sets(gr_parser_t *p, const gr_cfg_t *g)
{
    p->nsets = g->set.len;
    if (!p->nsets)
        return 0;
    size_t nm = g->set_member.len;
    p->sets = malloc(p->nsets * sizeof *p->sets);
    p->set_member = malloc((nm + 1) * sizeof *p->set_member);
    p->set_required = malloc(nm + 1);
    if (!p->sets || !p->set_member || !p->set_required)
        return fail(p, "out of memory");
    memcpy(p->sets, g->set.data, p->nsets * sizeof *p->sets);
    if (nm) { /* sets without members (objects of additional ones only) have no data */
        memcpy(p->set_member, g->set_member.data, nm * sizeof *p->set_member);
        memcpy(p->set_required, g->set_required.data, nm);
    }
    return 0;
}

static int set_state(gr_parser_t *p, uint32_t set, int started, uint32_t count,
                     const uint64_t *in, uint32_t *out);

/* Each rule's dots in rule order, pred by left side; a set nonterminal k
 * gets the one rule "-> state k", its start state. */
static int flatten(gr_parser_t *p, const gr_cfg_t *g)
{
    p->nnt = (uint32_t)g->nt.len;
    p->nlex = (uint32_t)g->lex.len;
    p->words = (p->nlex + 63) / 64 ? (p->nlex + 63) / 64 : 1;
    uint32_t *count = calloc(p->nnt + 2, sizeof *count);
    if (!count)
        return fail(p, "out of memory");
    for (size_t r = 0; r < g->rule.len; r++)
        count[g->rule.data[r].lhs]++;
    for (size_t k = 0; k < g->set.len; k++)
        count[g->set.data[k].nt]++;
    count[p->nnt] = 1;
    uint32_t at = 0;
    for (uint32_t a = 0; a <= p->nnt; a++) {
        uint8_t nullable = a < p->nnt ? g->nt.data[a].nullable : g->nt.data[g->start].nullable;
        if (nonterm(p, (gr_span_t){at, at}, nullable))
            return free(count), -1;
        at += count[a];
    }
    free(count);
    if (tb_vec_reserve(&p->pred, at))
        return fail(p, "out of memory");
    p->pred.len = at;
    for (size_t r = 0; r < g->rule.len; r++) {
        const gr_rule_t *ru = &g->rule.data[r];
        p->pred.data[p->rules.data[ru->lhs].hi++] = (uint32_t)p->after.len;
        for (uint32_t i = 0; i <= ru->n; i++)
            if (dot(p, i < ru->n ? g->sym.data[ru->off + i] : GR_END, ru->lhs))
                return -1;
    }
    for (uint32_t k = 0; k < g->set.len; k++) {
        uint32_t s = g->set.data[k].nt;
        p->pred.data[p->rules.data[s].hi++] = (uint32_t)p->after.len;
        if (dot(p, p->nnt + 1 + k, s) || dot(p, GR_END, s))
            return -1;
    }
    p->start_dot = (uint32_t)p->after.len;
    p->accept_dot = p->start_dot + 1;
    p->pred.data[p->rules.data[p->nnt].hi++] = p->start_dot;
    if (dot(p, g->start, p->nnt) || dot(p, GR_END, p->nnt))
        return -1;
    /* the sets' start states: nonterminals nnt + 1 + k */
    uint64_t none[1] = {0};
    for (uint32_t k = 0; k < g->set.len; k++) {
        uint32_t v;
        size_t words = ((size_t)g->set.data[k].n + 63) / 64;
        uint64_t *in = words > 1 ? calloc(words, sizeof *in) : none;
        int r = !in ? fail(p, "out of memory") : set_state(p, k, 0, 0, in, &v);
        if (in != none)
            free(in);
        if (r)
            return -1;
    }
    return 0;
}

/* ---- sets in any order ----------------------------------------------------- */

static size_t set_words(const gr_set_t *st) { return ((size_t)st->n + 63) / 64 + 1; }

static int has(const uint64_t *in, uint32_t i) { return (int)(in[i >> 6] >> (i & 63) & 1); }

/* Whether a state of set st can still end (what its rules may lead to):
 * the required members not in fit under max, and min is in reach. */
static int set_live(const gr_parser_t *p, const gr_set_t *st, uint32_t count,
                    const uint64_t *in)
{
    uint64_t need = 0, left = 0;
    for (uint32_t i = 0; i < st->n; i++)
        if (!has(in, i)) {
            need += p->set_required[st->off + i];
            left++;
        }
    if (st->max != GR_UNBOUNDED && count + need > st->max)
        return 0;
    return st->extra != GR_NO_EXTRA || count + left >= st->min;
}

/* Whether a state may end here: every required member in, min reached. */
static int set_done(const gr_parser_t *p, const gr_set_t *st, uint32_t count,
                    const uint64_t *in)
{
    for (uint32_t i = 0; i < st->n; i++)
        if (p->set_required[st->off + i] && !has(in, i))
            return 0;
    return count >= st->min;
}

/* Open addressing, both tables: ids at load <= 1/2, 0 free.  Doubles
 * *table (at least min slots) and places ids lo .. hi - 1 by hash_of. */
static int grow_table(gr_parser_t *p, uint32_t **table, size_t *cap, size_t min, uint32_t lo,
                      uint32_t hi, uint64_t (*hash_of)(const gr_parser_t *, uint32_t))
{
    size_t n = *cap ? *cap * 2 : min;
    uint32_t *t = calloc(n, sizeof *t);
    if (!t)
        return fail(p, "out of memory");
    for (uint32_t id = lo; id < hi; id++) {
        size_t h = hash_of(p, id) & (n - 1);
        while (t[h])
            h = (h + 1) & (n - 1);
        t[h] = id;
    }
    free(*table);
    *table = t;
    *cap = n;
    return 0;
}

/* Set state v + 1's key hash (the table holds v + 1). */
static uint64_t state_hash(const gr_parser_t *p, uint32_t id)
{
    const uint64_t *key = p->vkey.data + p->vkey_off.data[id - 1];
    return tb_hash(key, set_words(&p->sets[key[0] >> 33]) * 8);
}

static int vby_grow(gr_parser_t *p)
{
    return grow_table(p, &p->vby_hash, &p->vby_cap, 64, 1, (uint32_t)p->vkey_off.len + 1,
                      state_hash);
}

/* The nonterminal of the state (set, started, count, in), found or made.
 * The key's first word is set << 33 | started << 32 | count. */
static int set_state(gr_parser_t *p, uint32_t set, int started, uint32_t count,
                     const uint64_t *in, uint32_t *out)
{
    const gr_set_t *st = &p->sets[set];
    size_t w = set_words(st), off = p->vkey.len;
    if (tb_vec_reserve(&p->vkey, w))
        return fail(p, "out of memory");
    uint64_t *key = p->vkey.data + off;
    key[0] = (uint64_t)set << 33 | (uint64_t)(started != 0) << 32 | count;
    memcpy(key + 1, in, (w - 1) * sizeof *key);
    size_t m = p->vby_cap - 1, h = tb_hash(key, w * 8) & m;
    for (uint32_t v; (v = p->vby_hash[h]) != 0; h = (h + 1) & m) {
        const uint64_t *k = p->vkey.data + p->vkey_off.data[v - 1];
        if (k[0] == key[0] && !memcmp(k + 1, key + 1, (w - 1) * sizeof *k)) {
            *out = p->nnt + v; /* nnt + 1 + (v - 1) */
            return 0;
        }
    }
    uint32_t v = (uint32_t)p->vkey_off.len;
    if (tb_vec_push(&p->vkey_off, (uint32_t)off))
        return fail(p, "out of memory");
    p->vkey.len += w;
    p->vby_hash[h] = v + 1;
    if (nonterm(p, (gr_span_t){0, GR_END}, (uint8_t)set_done(p, st, count, in)))
        return -1;
    if (p->vkey_off.len * 2 > p->vby_cap && vby_grow(p))
        return -1;
    *out = p->nnt + 1 + v;
    return 0;
}

/* The rule a -> [sep] x next, where next is the state after x. */
static int set_rule(gr_parser_t *p, uint32_t a, const gr_set_t *st, int started, gr_sym_t x,
                    uint32_t next)
{
    if (tb_vec_push(&p->pred, (uint32_t)p->after.len))
        return fail(p, "out of memory");
    return (started && dot(p, st->sep, a)) || dot(p, x, a) || dot(p, next, a) ||
           dot(p, GR_END, a);
}

/* Makes the rules of set state a: each member not in and the extra, while
 * count is under max, each to the state after it where that can end. */
static int set_expand(gr_parser_t *p, uint32_t a)
{
    uint32_t v = a - p->nnt - 1;
    const uint64_t *key = p->vkey.data + p->vkey_off.data[v];
    uint32_t set = (uint32_t)(key[0] >> 33), count = (uint32_t)key[0];
    int started = (int)(key[0] >> 32 & 1);
    const gr_set_t *st = &p->sets[set];
    size_t w = set_words(st) - 1;
    uint64_t *in = malloc((w + 1) * sizeof *in);
    if (!in)
        return fail(p, "out of memory");
    memcpy(in, key + 1, w * sizeof *in);
    uint32_t lo = (uint32_t)p->pred.len;
    int r = 0;
    if (st->max == GR_UNBOUNDED || count < st->max) {
        /* the count saturates at min where nothing bounds it from above */
        uint32_t next_count = st->max != GR_UNBOUNDED || count < st->min ? count + 1 : count;
        for (uint32_t i = 0; i < st->n && !r; i++) {
            if (has(in, i))
                continue;
            in[i >> 6] |= 1ull << (i & 63);
            uint32_t next;
            if (set_live(p, st, next_count, in))
                r = set_state(p, set, 1, next_count, in, &next) ||
                    set_rule(p, a, st, started, p->set_member[st->off + i], next);
            in[i >> 6] &= ~(1ull << (i & 63));
        }
        uint32_t next;
        if (!r && st->extra != GR_NO_EXTRA && set_live(p, st, next_count, in))
            r = set_state(p, set, 1, next_count, in, &next) ||
                set_rule(p, a, st, started, st->extra, next);
    }
    free(in);
    if (r)
        return -1;
    p->rules.data[a] = (gr_span_t){lo, (uint32_t)p->pred.len};
    return 0;
}

/* ---- one row being made ------------------------------------------------------- */

static void next_generation(gr_parser_t *p)
{
    p->work.len = 0;
    if (++p->gen == 0) { /* wrapped: stamps of 2^32 rows ago would match again */
        memset(p->seen_gen, 0, p->seen_cap * sizeof *p->seen_gen);
        memset(p->pred_gen.data, 0, p->pred_gen.len * sizeof *p->pred_gen.data);
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

/* Rows this long are read through their index by the symbol after the
 * dot when an item completes into them. */
#define GR_ROW_INDEXED 64

/*
 * Row r's items sorted by the symbol after their dot (in row order among
 * equals), made the first time an item completes into r; NULL where that
 * would pass the item cap or memory (the caller reads the row whole).  An
 * object's key position in a big schema holds thousands of items, and
 * reading it whole for each completion into it was two thirds of
 * tmlanguage's slowest masks.
 */
static const gr_item_t *row_by_after(gr_parser_t *p, uint32_t r)
{
    gr_row_t *row = &p->rows.data[r];
    if (row->by_after)
        return p->by_after.data + row->by_after - 1;
    p->keys.len = 0;
    if (p->items.len + p->by_after.len + row->n > p->max_items ||
        tb_vec_reserve(&p->by_after, row->n) || tb_vec_reserve(&p->keys, 2 * (size_t)row->n))
        return NULL;
    uint64_t *key = p->keys.data;
    const gr_item_t *in = p->items.data + row->off;
    for (uint32_t k = 0; k < row->n; k++)
        key[k] = (uint64_t)p->after.data[in[k].dot] << 32 | k;
    tb_sort_u64(key, key + row->n, row->n);
    gr_item_t *out = p->by_after.data + p->by_after.len;
    for (uint32_t k = 0; k < row->n; k++)
        out[k] = in[(uint32_t)key[k]];
    row->by_after = (uint32_t)p->by_after.len + 1;
    p->by_after.len += row->n;
    return out;
}

/* The items of row r that expect nonterminal lhs (in row order), into
 * *first: how many. */
static uint32_t expecting(gr_parser_t *p, uint32_t r, uint32_t lhs, const gr_item_t **first)
{
    const gr_row_t *o = &p->rows.data[r];
    const gr_item_t *x = o->n >= GR_ROW_INDEXED ? row_by_after(p, r) : NULL;
    if (!x) {
        *first = p->items.data + o->off;
        return o->n;
    }
    uint32_t lo = 0, hi = o->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (p->after.data[x[mid].dot] < lhs)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t end = lo;
    while (end < o->n && p->after.data[x[end].dot] == lhs)
        end++;
    *first = x + lo;
    return end - lo;
}

/* Completes and predicts until the row is closed; the row's items are the
 * worklist itself. */
static int closure(gr_parser_t *p)
{
    for (size_t i = 0; i < p->work.len; i++) {
        gr_item_t it = p->work.data[i];
        uint32_t a = p->after.data[it.dot];
        if (a == GR_END) {
            if (it.origin == GR_SELF)
                continue; /* nullable: advanced when predicted */
            uint32_t lhs = p->lhs.data[it.dot];
            const gr_item_t *from;
            uint32_t n = expecting(p, it.origin, lhs, &from);
            for (uint32_t k = 0; k < n; k++) {
                gr_item_t x = from[k];
                if (p->after.data[x.dot] == lhs &&
                    add(p, x.dot + 1, x.origin == GR_SELF ? it.origin : x.origin))
                    return -1;
            }
        } else if (!gr_is_lex(a)) {
            if (p->pred_gen.data[a] != p->gen) {
                p->pred_gen.data[a] = p->gen;
                if (p->rules.data[a].hi == GR_END && set_expand(p, a))
                    return -1;
                gr_span_t sp = p->rules.data[a];
                for (uint32_t k = sp.lo; k < sp.hi; k++)
                    if (add(p, p->pred.data[k], GR_SELF))
                        return -1;
            }
            if (p->nullable.data[a] && add(p, it.dot + 1, it.origin))
                return -1;
        }
    }
    return 0;
}

/* Sorts the work items by (dot, origin); -1 out of memory. */
static int sort_work(gr_parser_t *p)
{
    size_t n = p->work.len;
    p->keys.len = 0;
    if (tb_vec_reserve(&p->keys, 2 * n))
        return -1;
    uint64_t *key = p->keys.data;
    for (size_t i = 0; i < n; i++)
        key[i] = (uint64_t)p->work.data[i].dot << 32 | p->work.data[i].origin;
    tb_sort_u64(key, key + n, n);
    for (size_t i = 0; i < n; i++)
        p->work.data[i] = (gr_item_t){(uint32_t)(key[i] >> 32), (uint32_t)key[i]};
    return 0;
}

static uint64_t row_hash(const gr_parser_t *p, uint32_t r) { return p->rows.data[r].hash; }

static int by_hash_grow(gr_parser_t *p)
{
    return grow_table(p, &p->by_hash, &p->by_cap, 1024, 1, (uint32_t)p->rows.len, row_hash);
}

/*
 * Drops the closed row's completed items but the accepting one.  They did
 * their work in closure(); nothing reads them later (scans and completions
 * look for items expecting a symbol), yet their origins name the row where
 * the finished rule began.  Kept, they make the row after the k-th element
 * of a list differ from the row after the (k+1)-th (each completes the
 * element begun in the row before), so every element of a flat JSON array
 * made new rows and new grammar states: memory grew with the length of the
 * text.  Without them a row holds what can still happen, and a list's
 * rows repeat from its second element on.
 */
static void drop_completed(gr_parser_t *p)
{
    size_t out = 0;
    for (size_t i = 0; i < p->work.len; i++) {
        gr_item_t it = p->work.data[i];
        if (p->after.data[it.dot] != GR_END || it.dot == p->accept_dot)
            p->work.data[out++] = it;
    }
    p->work.len = out;
}

/* The row holding the work items: found by content or made. */
static uint32_t intern(gr_parser_t *p)
{
    drop_completed(p);
    size_t n = p->work.len;
    if (n == 0) /* nothing can follow and the text is no sentence */
        return GR_ROW_DEAD;
    if (sort_work(p)) {
        fail(p, "out of memory");
        return GR_ROW_DEAD;
    }
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
        uint32_t a = p->after.data[it.dot];
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
    if (copy_sets(p, g) || (p->nsets && vby_grow(p)) || flatten(p, g) || by_hash_grow(p) ||
        seen_grow(p) || tb_vec_reserve(&p->rows, 1) || tb_vec_reserve(&p->expect, p->words)) {
        if (!p->failed)
            fail(p, "out of memory");
        gr_parser_error(p, err);
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
    free(p->after.data);
    free(p->lhs.data);
    free(p->pred.data);
    free(p->rules.data);
    free(p->nullable.data);
    free(p->pred_gen.data);
    free(p->sets);
    free(p->set_member);
    free(p->set_required);
    free(p->vkey_off.data);
    free(p->vkey.data);
    free(p->vby_hash);
    free(p->items.data);
    free(p->rows.data);
    free(p->by_after.data);
    free(p->expect.data);
    free(p->by_hash);
    free(p->work.data);
    free(p->keys.data);
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
        uint32_t a = p->after.data[it.dot];
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
