/*
 * oneof: anyOf and oneOf as alternatives, each branch merged with the
 * keywords beside it; for oneOf, whether branches are disjoint (types,
 * enum/const values, required versus forbidden properties), branches of
 * required names only rewritten exactly, and (strict) overlapping
 * branches rewritten as each one and the complement of the others.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The types a flattened schema allows, its enum/const values' included. */
static int schema_types(json_t *s)
{
    int m = sc_type_mask(json_object_get(s, "type"));
    if (json_is_true(json_object_get(s, "nullable")))
        m |= T_NULL;
    json_t *cst = json_object_get(s, "const"), *en = json_object_get(s, "enum");
    if (cst || en) {
        int vt = cst ? sc_json_type_of(cst) : 0;
        size_t i;
        json_t *v;
        json_array_foreach(en, i, v) vt |= sc_json_type_of(v);
        m = sc_type_and(m, vt);
    }
    return m;
}

/* Whether s allows no property p. */
static int forbids(json_t *s, const char *p)
{
    json_t *props = json_object_get(s, "properties"), *v = json_object_get(props, p);
    if (v)
        return json_is_false(v);
    return json_is_false(json_object_get(s, "additionalProperties")) &&
           !json_object_get(s, "patternProperties");
}

static int in_array(json_t *a, json_t *x)
{
    size_t i;
    json_t *y;
    json_array_foreach(a, i, y) {
        if (json_equal(x, y))
            return 1;
    }
    return 0;
}

static int disjoint(sc_t *c, json_t *a, json_t *b, int depth);

/* Whether every branch of s's anyOf or oneOf (each a superset of s's
 * instances' union) is disjoint from o. */
static int branches_disjoint(sc_t *c, json_t *s, json_t *o, int depth)
{
    json_t *br = json_object_get(s, "anyOf"), *x;
    size_t i;
    br = br ? br : json_object_get(s, "oneOf");
    if (!json_is_array(br) || !json_array_size(br))
        return 0;
    json_array_foreach(br, i, x) {
        if (!disjoint(c, x, o, depth + 1))
            return 0;
    }
    return 1;
}

/* The values of enum or const (a new reference), NULL without either. */
static json_t *values(json_t *s)
{
    json_t *cst = json_object_get(s, "const"), *en = json_object_get(s, "enum");
    return cst ? json_pack("[O]", cst) : json_is_array(en) ? json_incref(en) : NULL;
}

/* Whether s requires every name of the array r. */
static int requires_all(json_t *s, json_t *r)
{
    json_t *req = json_object_get(s, "required"), *x;
    size_t i;
    if (!json_is_array(r) || !json_array_size(r))
        return 0;
    json_array_foreach(r, i, x) {
        if (!json_is_string(x) || !in_array(req, x))
            return 0;
    }
    return 1;
}

/* The item schema of s at position i (NULL: any), draft-neutral as
 * array.c reads it: array items are the tuple. */
static json_t *item_at(json_t *s, size_t i)
{
    json_t *items = json_object_get(s, "items"), *prefix = json_object_get(s, "prefixItems");
    json_t *rest = items;
    if (json_is_array(items)) {
        prefix = items;
        rest = json_object_get(s, "additionalItems");
    }
    return i < json_array_size(prefix) ? json_array_get(prefix, i) : rest;
}

/* Whether no instance can match both a and b, as far as types, enum/const
 * values, the branches of an anyOf/oneOf, required versus forbidden or
 * disjoint properties, and disjoint items at positions both must have
 * show it (0 when not shown).  Every test reads keywords that each hold
 * of all the instances, so it is sound whatever else is beside them. */
static int disjoint(sc_t *c, json_t *a, json_t *b, int depth)
{
    if (json_is_false(a) || json_is_false(b))
        return 1;
    if (!json_is_object(a) || !json_is_object(b) || depth > 8 || sc_flatten(c, a, "#", &a) ||
        sc_flatten(c, b, "#", &b)) {
        c->err->msg[0] = 0;
        return 0;
    }
    int both = sc_type_and(schema_types(a), schema_types(b));
    if (!both)
        return 1;
    json_t *la = values(a), *lb = values(b);
    if (la && lb) {
        size_t i, j;
        json_t *x, *y;
        int common = 0;
        json_array_foreach(la, i, x) json_array_foreach(lb, j, y) common |= sc_same_value(x, y);
        json_decref(la);
        json_decref(lb);
        if (!common)
            return 1;
    } else {
        json_decref(la);
        json_decref(lb);
    }
    if (branches_disjoint(c, a, b, depth) || branches_disjoint(c, b, a, depth))
        return 1;
    if (both == T_ARR) {
        /* positions below the larger minItems are in every instance */
        uint64_t na = 0, nb = 0, xa = UINT64_MAX, xb = UINT64_MAX;
        if (sc_count(c, a, "minItems", "#", 0, &na) || sc_count(c, b, "minItems", "#", 0, &nb) ||
            sc_count(c, a, "maxItems", "#", UINT64_MAX, &xa) ||
            sc_count(c, b, "maxItems", "#", UINT64_MAX, &xb)) {
            c->err->msg[0] = 0;
            return 0;
        }
        if (na > xb || nb > xa)
            return 1;
        uint64_t n = na > nb ? na : nb;
        for (size_t i = 0; i < n && i < 16; i++) {
            json_t *ia = item_at(a, i), *ib = item_at(b, i);
            if (ia && ib && disjoint(c, ia, ib, depth + 1))
                return 1;
        }
        return 0;
    }
    if (both & ~T_OBJ)
        return 0;
    json_t *ra = json_object_get(a, "required"), *rb = json_object_get(b, "required");
    /* required names that the other's not {required: ...} forbids together */
    if (requires_all(a, json_object_get(json_object_get(b, "not"), "required")) ||
        requires_all(b, json_object_get(json_object_get(a, "not"), "required")))
        return 1;
    size_t i, j;
    json_t *x, *y;
    json_array_foreach(ra, i, x) {
        const char *p = json_string_value(x);
        if (p && forbids(b, p))
            return 1;
        json_array_foreach(rb, j, y) {
            if (p && json_equal(x, y) &&
                disjoint(c, json_object_get(json_object_get(a, "properties"), p),
                         json_object_get(json_object_get(b, "properties"), p), depth + 1))
                return 1;
        }
    }
    json_array_foreach(rb, i, x) {
        if (json_string_value(x) && forbids(a, json_string_value(x)))
            return 1;
    }
    return 0;
}

/* The names a branch of only `required` (and annotations) requires; NULL
 * for other branches. */
static json_t *required_only(const sc_t *c, json_t *b)
{
    const char *k;
    json_t *v;
    if (!json_is_object(b) || !json_is_array(json_object_get(b, "required")))
        return NULL;
    json_object_foreach(b, k, v) {
        if (strcmp(k, "required") && !sc_annotation(c, k))
            return NULL;
    }
    return json_object_get(b, "required");
}

/* oneOf of branches that only require names, exactly: branch i holds and
 * every other branch j fails, i.e. some name of R_j that R_i does not
 * require is absent.  One branch per choice of those names (at most 64 in
 * all); *out NULL when the branches are not all of that kind. */
static int oneof_required(sc_t *c, json_t *br, const char *ptr, json_t **out)
{
    size_t n = json_array_size(br), i, j;
    json_t *v;
    *out = NULL;
    json_array_foreach(br, i, v) {
        if (!required_only(c, v))
            return 0;
    }
    json_t *list = json_array();
    if (sc_keep(c, list))
        return -1;
    for (i = 0; i < n; i++) {
        json_t *ri = required_only(c, json_array_get(br, i));
        size_t total = 1; /* one absent name chosen in each other R_j */
        int ok = n <= 64;
        for (j = 0; j < n && ok; j++) {
            size_t free_names = 0, k;
            json_t *x;
            json_array_foreach(required_only(c, json_array_get(br, j)), k, x)
                free_names += !in_array(ri, x);
            if (j != i)
                total *= free_names, ok = free_names > 0; /* R_j within R_i: i never alone */
        }
        if (!ok)
            continue;
        if (total > 64)
            return sc_fail(c, ptr, "'oneOf' of required names needs more than 64 branches");
        for (size_t t = 0; t < total; t++) {
            json_t *props = json_object(), *b = json_pack("{s:O,s:o}", "required", ri,
                                                          "properties", props);
            if (!props || sc_keep(c, b))
                return sc_oom(c);
            size_t rest = t;
            for (j = 0; j < n; j++) {
                if (j == i)
                    continue;
                json_t *rj = required_only(c, json_array_get(br, j)), *x, *pick = NULL;
                size_t nfree = 0, k;
                json_array_foreach(rj, k, x) nfree += !in_array(ri, x);
                size_t want = rest % nfree, seen_free = 0;
                rest /= nfree;
                json_array_foreach(rj, k, x) {
                    if (!in_array(ri, x) && seen_free++ == want)
                        pick = x;
                }
                if (json_is_string(pick) && json_object_set(props, json_string_value(pick),
                                                            json_false()))
                    return sc_oom(c);
            }
            if (json_array_append(list, b))
                return sc_oom(c);
        }
    }
    *out = list;
    return 0;
}

/* oneOf whose branches (merged with rest unless plain) may overlap, as
 * branches that cannot: branch i and the complement of every other one
 * (not.c).  *out NULL when they are shown disjoint already; an
 * error when some complement is not written here. */
static int oneof_exact(sc_t *c, json_t *br, json_t *rest, int plain, const char *ptr,
                       json_t **out)
{
    size_t n = json_array_size(br), i, j;
    json_t **f = calloc(n + 1, sizeof *f);
    int r = f ? 0 : sc_oom(c), overlap = 0;
    *out = NULL;
    for (i = 0; i < n && !r; i++) {
        json_t *v = json_array_get(br, i), *m = rest;
        f[i] = v;
        if (json_is_object(v) && sc_flatten(c, v, ptr, &f[i]))
            r = -1;
        else if (!plain && sc_merge(c, &m, f[i], ptr))
            r = -1;
        else if (!plain)
            f[i] = m;
        for (j = 0; j < i && !r && !overlap; j++)
            overlap = !disjoint(c, f[j], f[i], 0);
    }
    json_t *list = r || !overlap ? NULL : json_array();
    if (list && sc_keep(c, list))
        r = -1;
    for (i = 0; list && i < n && !r; i++) {
        json_t *all = json_pack("[O]", json_array_get(br, i)), *comp;
        for (j = 0; j < n && !r && all; j++) {
            json_t *v = json_array_get(br, j), *fv = v;
            if (j == i)
                continue;
            if ((json_is_object(v) && sc_flatten(c, v, ptr, &fv)) ||
                sc_complement(c, fv, f[i], ptr, &comp))
                r = -1;
            else if (json_array_append(all, comp))
                r = sc_oom(c);
        }
        json_t *b = NULL;
        if (r)
            json_decref(all);
        else if (!all)
            r = sc_oom(c);
        else
            b = json_pack("{s:o}", "allOf", all); /* steals all */
        if (!r && (sc_keep(c, b) || json_array_append(list, b)))
            r = -1;
    }
    free(f);
    if (r && c->err->msg[0] && overlap) {
        char why[TB_ERR_MAX];
        snprintf(why, sizeof why, "%s", c->err->msg);
        return sc_fail(c, ptr, "'oneOf' branches may both match (strict), and %.900s", why);
    }
    *out = r ? NULL : list;
    return r;
}

/* anyOf/oneOf: each branch merged with the keywords beside it (anyOf
 * first where both are there: oneOf is then one of those keywords). */
int sc_alternatives(sc_t *c, json_t *s, const char *ptr, gr_sym_t *out)
{
    json_t *any = json_object_get(s, "anyOf"), *one = json_object_get(s, "oneOf");
    if (any)
        one = NULL;
    const char *kw = any ? "anyOf" : "oneOf";
    json_t *br = any ? any : one;
    if (!json_is_array(br) || !json_array_size(br))
        return sc_fail(c, ptr, "'%s' must be a non-empty array", kw);
    json_t *rest = json_copy(s);
    if (sc_keep(c, rest))
        return -1;
    json_object_del(rest, kw);
    int plain = 1;
    const char *k;
    json_t *v;
    json_object_foreach(rest, k, v) plain &= sc_annotation(c, k);
    TB_VEC(gr_sym_t) alts = {0};
    TB_VEC(json_t *) seen = {0}; /* the branches as compiled, for strict oneOf */
    int r = 0;
    size_t i;
    json_t *exact = NULL;
    if (one && (r = oneof_required(c, br, ptr, &exact)) == 0 && exact)
        br = exact; /* branches now disjoint by construction */
    if (!r && one && !exact && c->opts.strict_oneof && (r = oneof_exact(c, br, rest, plain, ptr,
                                                                        &exact)) == 0 && exact)
        br = exact;
    json_array_foreach(br, i, v) {
        if (r)
            break;
        char *p = sc_ptr_index(ptr, kw, i);
        json_t *m = rest, *fv = v;
        gr_sym_t x;
        if (!p) {
            r = sc_oom(c);
            break;
        }
        if (json_is_object(v))
            r = sc_flatten(c, v, p, &fv);
        if (!r && !plain)
            r = sc_merge(c, &m, fv, p);
        if (!r && !plain && sc_empty(c, m, 0)) {
            free(p);
            continue; /* allows nothing */
        }
        if (!r && one && !exact && c->opts.strict_oneof) {
            json_t *b = plain ? fv : m;
            for (size_t j = 0; j < seen.len && !r; j++)
                if (!disjoint(c, seen.data[j], b, 0))
                    r = sc_fail(c, ptr, "'oneOf' branches %zu and %zu may both match (strict)", j, i);
            if (!r && tb_vec_push(&seen, b))
                r = sc_oom(c);
        }
        if (!r)
            r = sc_value(c, plain ? v : m, p, &x);
        free(p);
        if (r == 1) {
            r = 0;
            continue;
        }
        if (r || tb_vec_push(&alts, x)) {
            r = r ? r : sc_oom(c);
            break;
        }
    }
    /* one nonterminal for several branches; none when they allow nothing */
    if (!r && alts.len == 1)
        *out = alts.data[0];
    else if (!r && alts.len > 1)
        r = gr_cfg_fresh(c->g, kw, out, c->err);
    for (size_t j = 0; !r && alts.len > 1 && j < alts.len; j++)
        r = sc_rule(c, *out, &alts.data[j], 1);
    free(alts.data);
    free(seen.data);
    return r ? r : alts.len == 0;
}
