/*
 * array: the values of the array keywords: items, prefixItems,
 * additionalItems, minItems, maxItems, uniqueItems (up to one item, or
 * over items of few known values), and
 * arrays with `contains` (and minContains, maxContains).
 *
 * With `contains`, the items are read left to right by a nonterminal per
 * (position, items that matched C so far): W(i, n).  Each item is either
 * one that counts, (its item schema and C), or one that does not: its
 * item schema alone where there is no maxContains (an item that matches C
 * but is read as not counted only lowers the count, and the count only
 * has to reach minContains), and its item schema and not C where there is
 * one (then the count is exact).  The count is kept up to minContains (no
 * maxContains) or maxContains; the position up to the prefix, minItems
 * and maxItems, the last one looping where the length is not bounded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ecma.h"
#include "internal.h"

#define MAX_STATES 100000u

/* ---- contains ---------------------------------------------------------------- */

/* The count keyword k (internal $tb:k first; minContains and maxContains
 * are keywords from 2019-09 on). */
static int contains_count(sc_t *c, json_t *s, const char *k, const char *ptr, uint64_t dflt,
                          uint64_t *out)
{
    char internal[32];
    snprintf(internal, sizeof internal, "$tb:%s", k);
    json_t *v = json_object_get(s, internal);
    if (!v && c->draft >= 2019)
        v = json_object_get(s, k);
    *out = dflt;
    if (!v)
        return 0;
    double d = json_number_value(v);
    if (!json_is_number(v) || d < 0 || d != (double)(uint64_t)d)
        return sc_fail(c, ptr, "'%s' must be a non-negative integer", k);
    *out = d > 1e15 ? (uint64_t)1e15 : (uint64_t)d;
    return 0;
}

typedef struct {
    gr_sym_t yes, no;
    int has_yes, has_no;
} item_t;

/* The two readings of an item of schema is (NULL: any value). */
static int item_syms(sc_t *c, json_t *is, json_t *cs, int exact, const char *ptr, item_t *it)
{
    json_t *i = is ? is : json_true();
    json_t *y = json_pack("{s:[O,O]}", "allOf", i, cs);
    json_t *n = exact ? json_pack("{s:[O,{s:O}]}", "allOf", i, "not", cs) : json_incref(i);
    if (sc_keep(c, y) || sc_keep(c, n))
        return -1;
    int r = sc_value(c, y, ptr, &it->yes);
    if (r < 0)
        return -1;
    it->has_yes = r == 0;
    r = sc_value(c, n, ptr, &it->no);
    if (r < 0)
        return -1;
    it->has_no = r == 0;
    return 0;
}

/* An array under s's keywords that has `contains`, its length within
 * [mn, mx] (mx GR_NO_MAX: unbounded); 1 when none can be. */
static int array_contains(sc_t *c, json_t *s, const char *ptr, uint64_t mn, uint64_t mx,
                          gr_sym_t *out)
{
    json_t *cs = json_object_get(s, "contains");
    uint64_t lo, hi;
    char *p = sc_ptr_join(ptr, "contains");
    if (!p)
        return sc_oom(c);
    if (contains_count(c, s, "minContains", ptr, 1, &lo) ||
        contains_count(c, s, "maxContains", ptr, UINT64_MAX, &hi)) {
        free(p);
        return -1;
    }
    json_t *items = json_object_get(s, "items"), *prefix = json_object_get(s, "prefixItems");
    json_t *rest = items;
    if (json_is_array(items)) {
        prefix = items;
        rest = json_object_get(s, "additionalItems");
    }
    size_t k = json_array_size(prefix);
    int exact = hi != UINT64_MAX;
    uint64_t cap = exact ? hi : lo;
    uint64_t len = k > mn ? k : mn;
    if (mx != GR_NO_MAX && mx > len)
        len = mx;
    if (!len && mx)
        len = 1; /* the looping state is past the first item (commas) */
    if (lo > hi || lo > mx) {
        free(p);
        return 1;
    }
    if ((len + 1) * (cap + 1) > MAX_STATES) {
        free(p);
        return sc_fail(c, ptr, "'contains' with more than %u (position, count) states is not "
                       "supported", MAX_STATES);
    }
    /* item readings: one per prefix position, one for the rest */
    item_t *it = calloc(k + 1, sizeof *it);
    gr_sym_t *w = calloc((size_t)((len + 1) * (cap + 1)), sizeof *w);
    gr_sym_t lb, rb, comma;
    int r = !it || !w ? sc_oom(c) : sc_lit(c, "[", &lb) || sc_lit(c, "]", &rb) ||
                                         sc_comma(c, &comma);
    for (size_t i = 0; i <= k && !r; i++)
        r = i < k || !json_is_false(rest)
                ? item_syms(c, i < k ? json_array_get(prefix, i) : rest, cs, exact, p, &it[i])
                : 0;
#define W(i, n) w[(i) * (cap + 1) + (n)]
#define PROD(i, n) prod[(i) * (cap + 1) + (n)]
    /* Backwards (positions and counts only grow, but for the loop at the
     * last position), so that rules lead to states that can end only. */
    char *prod = r ? NULL : calloc((size_t)((len + 1) * (cap + 1)), 1);
    if (!r && !prod)
        r = sc_oom(c);
    for (uint64_t i = len + 1; i-- > 0 && !r;) {
        for (uint64_t n = cap + 1; n-- > 0 && !r;) {
            const item_t *t = &it[i < k ? i : k];
            uint64_t next = i < len ? i + 1 : len; /* the last loops */
            uint64_t ny = n < cap ? n + 1 : cap;
            int more = mx == GR_NO_MAX || i < mx;
            int ends = i >= mn && n >= lo;
            int yes = more && t->has_yes && (!exact || n < hi) &&
                      (PROD(next, ny) || (next == i && ny == n));
            int no = more && t->has_no && (PROD(next, n) || (next == i));
            int self_only = (!yes || (next == i && ny == n)) && (!no || next == i);
            if (!ends && self_only)
                continue; /* nothing ends from here */
            PROD(i, n) = 1;
            r = gr_cfg_fresh(c->g, "contains", &W(i, n), c->err);
            if (!r && ends)
                r = sc_rule(c, W(i, n), NULL, 0);
            gr_sym_t seq[3] = {comma, 0, 0};
            if (!r && yes) {
                seq[1] = t->yes;
                seq[2] = W(next, ny);
                r = sc_rule(c, W(i, n), i ? seq : seq + 1, i ? 3 : 2);
            }
            if (!r && no) {
                seq[1] = t->no;
                seq[2] = W(next, n);
                r = sc_rule(c, W(i, n), i ? seq : seq + 1, i ? 3 : 2);
            }
        }
    }
    int prod0 = prod && prod[0];
    free(prod);
#undef PROD
    int empty = !r && !prod0;
    if (!r && !empty)
        r = gr_cfg_fresh(c->g, "array", out, c->err) ||
            sc_rule(c, *out, (gr_sym_t[]){lb, W(0, 0), rb}, 3);
#undef W
    free(it);
    free(w);
    free(p);
    return r ? -1 : empty;
}

/* ---- arrays ------------------------------------------------------------------ */

/* The values an item schema allows when they are few and known: its
 * enum's or const's members (the booleans under type boolean alone), each
 * once; NULL (not refused yet) otherwise. */
static json_t *item_domain(sc_t *c, json_t *items)
{
    json_t *en = json_object_get(items, "enum"), *cst = json_object_get(items, "const");
    json_t *d = json_array(), *v;
    if (!d || sc_keep(c, d))
        return NULL;
    if (cst)
        json_array_append(d, cst);
    else if (json_is_array(en))
        json_array_extend(d, en);
    else if (json_is_string(json_object_get(items, "type")) &&
             !strcmp(json_string_value(json_object_get(items, "type")), "boolean"))
        json_array_append_new(d, json_true()), json_array_append_new(d, json_false());
    else
        return NULL;
    /* equal values once (1 and 1.0 are one) */
    json_t *once = json_array();
    size_t i;
    if (!once || sc_keep(c, once))
        return NULL;
    json_array_foreach(d, i, v) if (!sc_in_enum(once, v)) json_array_append(once, v);
    return once;
}

/* uniqueItems: an array of items that are pairwise different, written
 * where the item schema allows few known values (item_domain, at most 256)
 * and nothing else shapes the array (no prefixItems, items array or
 * contains): a set nonterminal (cfg.h) of those values, each at most once,
 * in any order, between minItems and maxItems.  Refused otherwise: items
 * compared with each other is no context-free language. */
static int unique_items(sc_t *c, json_t *s, const char *ptr, uint64_t mn, uint64_t mx,
                        gr_sym_t *out)
{
    json_t *items = json_object_get(s, "items");
    json_t *dom = json_is_object(items) && !json_object_get(s, "prefixItems") &&
                          !json_object_get(s, "contains")
                      ? item_domain(c, items)
                      : NULL;
    if (!dom || json_array_size(dom) > 256)
        return sc_fail(c, ptr, "'uniqueItems' is not supported (only over items of at most 256 "
                               "known values: an enum, a const, booleans)");
    size_t n = 0, i;
    json_t *v;
    gr_sym_t *m = malloc((json_array_size(dom) + 1) * sizeof *m);
    uint8_t *req = calloc(json_array_size(dom) + 1, 1);
    char *p = sc_ptr_join(ptr, "items");
    int r = !m || !req || !p ? sc_oom(c) : 0;
    json_array_foreach(dom, i, v) {
        /* the item schema with this one value */
        json_t *one = r ? NULL : json_deep_copy(items);
        if (one)
            json_object_del(one, "const");
        if (!r && (!one || sc_keep(c, one) ||
                   json_object_set_new(one, "enum", json_pack("[O]", v))))
            r = sc_oom(c);
        int rv = r ? -1 : sc_value(c, one, p, &m[n]);
        if (rv < 0)
            r = -1;
        n += rv == 0;
    }
    gr_sym_t comma, lb, rb, set;
    if (!r && mn > n)
        r = 1; /* fewer different values than minItems */
    if (!r)
        r = sc_comma(c, &comma) || sc_lit(c, "[", &lb) || sc_lit(c, "]", &rb) ||
            gr_cfg_set(c->g, "unique", m, req, n, comma, GR_NO_EXTRA, (uint32_t)mn,
                       mx == GR_NO_MAX ? GR_UNBOUNDED : (uint32_t)mx, &set, c->err) ||
            gr_cfg_fresh(c->g, "array", out, c->err) ||
            sc_rule(c, *out, (gr_sym_t[]){lb, set, rb}, 3);
    free(m);
    free(req);
    free(p);
    return r;
}

int sc_array_value(sc_t *c, json_t *s, const char *ptr, gr_sym_t *out)
{
    uint64_t mn, mx;
    if (sc_count(c, s, "minItems", ptr, 0, &mn) ||
        sc_count(c, s, "maxItems", ptr, GR_NO_MAX, &mx))
        return -1;
    if (mn > mx)
        return 1; /* no length qualifies */
    if (mn > MAX_ITEMS || (mx != GR_NO_MAX && mx > MAX_ITEMS))
        return sc_fail(c, ptr, "'%s' is above the limit of %u", mn > MAX_ITEMS ? "minItems"
                    : "maxItems", MAX_ITEMS);
    json_t *ui = json_object_get(s, "uniqueItems");
    if (json_is_true(ui) && mx > 1)
        return unique_items(c, s, ptr, mn, mx, out);
    if (json_object_get(s, "contains"))
        return array_contains(c, s, ptr, mn, mx, out);
    json_t *items = json_object_get(s, "items"), *prefix = json_object_get(s, "prefixItems");
    json_t *rest = items;
    const char *rest_kw = "items";
    if (json_is_array(items)) {
        prefix = items;
        rest = json_object_get(s, "additionalItems");
        rest_kw = "additionalItems";
    }
    size_t k = json_array_size(prefix);
    /* Element symbols; an item that allows nothing caps the length. */
    gr_sym_t *el = calloc(k + 1, sizeof *el);
    if (!el)
        return sc_oom(c);
    int r = 0;
    for (size_t i = 0; i < k && !r; i++) {
        char *p = sc_ptr_index(ptr, prefix == items ? "items" : "prefixItems", i);
        r = p ? sc_value(c, json_array_get(prefix, i), p, &el[i]) : sc_oom(c);
        free(p);
        if (r == 1 && mx > i) {
            mx = i;
            r = 0;
        }
        if (r == 1)
            r = 0;
    }
    int rest_ok = 0;
    gr_sym_t rs = 0;
    if (!r && mx > k) {
        char *p = sc_ptr_join(ptr, rest_kw);
        r = !p ? sc_oom(c) : rest ? sc_value(c, rest, p, &rs) : sc_any_value(c, &rs);
        free(p);
        rest_ok = r == 0;
        if (r == 1)
            r = 0, mx = k;
    }
    if (r < 0 || mn > mx) {
        free(el);
        return r < 0 ? -1 : 1;
    }
    if (k > mx)
        k = (size_t)mx;
    /* W_i: the items from i on (i = 0: no comma before the first). */
    gr_sym_t lb, rb, comma, w_next = 0;
    r = sc_lit(c, "[", &lb) || sc_lit(c, "]", &rb) || sc_comma(c, &comma);
    if (!r) {
        gr_sym_t tail;
        uint64_t rlo = mn > k ? mn - k : 0, rhi = mx == GR_NO_MAX ? GR_NO_MAX : mx - k;
        r = gr_cfg_fresh(c->g, "items", &tail, c->err);
        if (!r && rest_ok && rhi > 0) {
            gr_sym_t cr, reps;
            r = gr_cfg_fresh(c->g, "item", &cr, c->err) ||
                sc_rule(c, cr, (gr_sym_t[]){comma, rs}, 2);
            if (!r && k > 0) {
                r = gr_cfg_repeat(c->g, cr, (uint32_t)rlo,
                                  rhi == GR_NO_MAX ? GR_UNBOUNDED : (uint32_t)rhi, "items",
                                  nopos, &reps, c->err) || sc_rule(c, tail, &reps, 1);
            } else if (!r) {
                /* the first has no comma */
                r = gr_cfg_repeat(c->g, cr, rlo ? (uint32_t)rlo - 1 : 0,
                                  rhi == GR_NO_MAX ? GR_UNBOUNDED : (uint32_t)rhi - 1, "items",
                                  nopos, &reps, c->err) ||
                    sc_rule(c, tail, (gr_sym_t[]){rs, reps}, 2) ||
                    (!rlo && sc_rule(c, tail, NULL, 0));
            }
        } else if (!r && rlo == 0) {
            r = sc_rule(c, tail, NULL, 0);
        }
        w_next = tail;
        for (size_t i = k; i-- > 0 && !r;) {
            gr_sym_t w;
            r = gr_cfg_fresh(c->g, "items", &w, c->err) ||
                (i ? sc_rule(c, w, (gr_sym_t[]){comma, el[i], w_next}, 3)
                   : sc_rule(c, w, (gr_sym_t[]){el[i], w_next}, 2)) ||
                (i >= mn && sc_rule(c, w, NULL, 0));
            w_next = w;
        }
    }
    free(el);
    if (r)
        return -1;
    return gr_cfg_fresh(c->g, "array", out, c->err) ||
           sc_rule(c, *out, (gr_sym_t[]){lb, w_next, rb}, 3);
}
