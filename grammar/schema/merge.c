/*
 * merge: allOf, and $ref beside other keywords, merged keyword by keyword
 * into one schema (sc_merge, sc_flatten); the unevaluated keywords of a
 * flattened schema resolved where the merge makes what is evaluated static
 * (unevaluatedItems here, unevaluatedProperties and if in uneval.c); and
 * sc_may_use, which asks whether subschemas may use some keywords.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static double num(json_t *j) { return json_number_value(j); }

/* Whether the pattern may number its groups (a backreference). */
static int backref(const char *x)
{
    for (const char *p = x; p && *p; p++)
        if (*p == '\\' && (p[1] == 'k' || (p[1] >= '1' && p[1] <= '9')))
            return 1;
    return 0;
}

/* The pattern (a search) that matches where pattern a or b does (new),
 * NULL where a group number could change its meaning. */
static json_t *not_patterns(json_t *a, json_t *b)
{
    const char *x = json_string_value(a), *y = json_string_value(b);
    if (!x || !y || backref(x) || backref(y))
        return NULL;
    return json_sprintf("%s|%s", x, y); /* | binds loosest; anchors stay at branch ends */
}

/* {"allOf": [a, b]}, new; a's own list extended where a is an allOf
 * alone (so that many merges of one property stay one flat list). */
static json_t *all_of(json_t *a, json_t *b)
{
    json_t *l = json_object_get(a, "allOf");
    if (json_object_size(a) != 1 || !json_is_array(l))
        return sc_all_of(a, b);
    json_t *n = json_copy(l);
    if (n && json_array_append(n, b))
        return json_decref(n), NULL;
    return n ? json_pack("{s:o}", "allOf", n) : NULL;
}

static json_t *skeleton(sc_t *c, json_t *n);

/* Merges key k of b into the merged object m (which holds a's keywords). */
static int merge_key(sc_t *c, json_t *m, const char *k, json_t *bv, const char *ptr)
{
    json_t *av = json_object_get(m, k);
    if (!av || sc_annotation(c, k))
        return av ? 0 : json_object_set(m, k, bv) ? sc_oom(c) : 0;
    if (json_equal(av, bv))
        return 0;
    json_t *n = NULL;
    if (!strcmp(k, "properties") && json_is_object(av) && json_is_object(bv)) {
        n = json_copy(av);
        const char *pk;
        json_t *pv;
        json_object_foreach(bv, pk, pv) {
            json_t *old = json_object_get(n, pk);
            if (n && json_object_set_new(n, pk, old && !json_equal(old, pv) ? all_of(old, pv)
                                                                          : json_incref(pv)))
                return json_decref(n), sc_oom(c);
        }
    } else if (!strcmp(k, "required") && json_is_array(av) && json_is_array(bv)) {
        n = json_copy(av);
        size_t i, j;
        json_t *x, *y;
        json_array_foreach(bv, i, x) {
            int dup = 0;
            json_array_foreach(av, j, y) dup |= json_equal(x, y);
            if (n && !dup && json_array_append(n, x))
                return json_decref(n), sc_oom(c);
        }
    } else if (!strcmp(k, "type")) {
        n = sc_type_json(sc_type_and(sc_type_mask(av), sc_type_mask(bv)));
    } else if (!strcmp(k, "enum") && json_is_array(av) && json_is_array(bv)) {
        n = json_array();
        size_t i, j;
        json_t *x, *y;
        json_array_foreach(av, i, x) {
            int in = 0;
            json_array_foreach(bv, j, y) in |= sc_same_value(x, y);
            if (n && in && json_array_append(n, x))
                return json_decref(n), sc_oom(c);
        }
    } else if (json_is_number(av) && json_is_number(bv) &&
               (!strncmp(k, "min", 3) || !strncmp(k, "max", 3) ||
                !strncmp(k, "exclusiveM", 10))) {
        int take_max = !strncmp(k, "min", 3) || !strcmp(k, "exclusiveMinimum");
        n = json_incref((num(av) > num(bv)) == take_max ? av : bv);
    } else if (!strcmp(k, "const")) {
        if (sc_same_value(av, bv))
            return 0;
        return 1; /* two values: nothing is both */
    } else if (!strcmp(k, "oneOf") && json_is_array(av) && json_is_array(bv)) {
        /* (oneOf A) and X is oneOf [a and X, ...]: where X holds, exactly
         * one a and X holds iff exactly one a does; where it fails none */
        n = json_array();
        size_t i;
        json_t *x;
        json_array_foreach(av, i, x) {
            if (n && json_array_append_new(n, json_pack("{s:[O,{s:O}]}", "allOf", x, "oneOf", bv)))
                return json_decref(n), sc_oom(c);
        }
    } else if (!strcmp(k, NOT_STRINGS) && json_is_array(av) && json_is_array(bv)) {
        n = json_copy(av); /* neither of them */
        if (n && json_array_extend(n, bv))
            return json_decref(n), sc_oom(c);
    } else if (!strcmp(k, SOME_MEMBER) && json_is_array(av) && json_is_array(bv)) {
        n = json_copy(av); /* a member for each */
        if (n && json_array_extend(n, bv))
            return json_decref(n), sc_oom(c);
    } else if (!strcmp(k, NOT_PATTERN) && (n = not_patterns(av, bv))) {
        /* matching neither: not matching either */
    } else if (!strcmp(k, FRACTION)) {
        n = json_incref(json_integer_value(av) > json_integer_value(bv) ? av : bv);
    } else if (!strcmp(k, "not")) {
        n = json_pack("{s:[O,O]}", "anyOf", av, bv); /* not A and not B */
    } else if (!strcmp(k, "anyOf") && json_is_array(av) && json_is_array(bv)) {
        /* (a1 | a2) & (b1 | b2): every pair that may allow something
         * beside the keywords merged so far */
        n = json_array();
        if (sc_keep(c, n))
            return -1;
        json_t *skel = c->probing ? NULL : skeleton(c, m);
        size_t i, j;
        json_t *x, *y;
        json_array_foreach(av, i, x) json_array_foreach(bv, j, y) {
            json_t *pair = sc_all_of(x, y),
                   *t = skel ? json_pack("{s:[O,O,O]}", "allOf", skel, x, y) : NULL;
            if (sc_keep(c, pair) || (skel && sc_keep(c, t)))
                return -1;
            if (!c->probing && sc_empty(c, skel ? t : pair, 0))
                continue;
            if (json_array_size(n) >= MAX_PAIRS)
                return sc_fail(c, ptr, "allOf: two 'anyOf' of more than %d pairs of branches "
                               "that may both match", MAX_PAIRS);
            if (json_array_append(n, pair))
                return sc_oom(c);
        }
        if (!json_array_size(n))
            return 1; /* no pair allows anything */
        json_incref(n);
    } else if (!strcmp(k, "pattern") && json_is_string(av) && json_is_string(bv)) {
        /* both: the second among the other patterns */
        json_t *more = json_object_get(m, PATTERNS);
        more = more ? json_copy(more) : json_array();
        if (sc_keep(c, more) || json_array_append(more, bv) ||
            json_object_set(m, PATTERNS, more))
            return sc_oom(c);
        return 0;
    } else if (!strcmp(k, PATTERNS) && json_is_array(av) && json_is_array(bv)) {
        n = json_copy(av); /* all of them */
        if (n && json_array_extend(n, bv))
            return json_decref(n), sc_oom(c);
    } else if (!strcmp(k, "propertyNames")) {
        n = all_of(av, bv); /* every name both */
    } else if (!strcmp(k, "nullable")) {
        n = json_false();
    } else if (!strcmp(k, "additionalProperties") &&
               (json_is_object(av) || json_is_boolean(av)) &&
               (json_is_object(bv) || json_is_boolean(bv))) {
        n = sc_all_of(av, bv);
    } else if (!strcmp(k, "multipleOf") && (n = sc_multiple_lcm(av, bv))) {
        /* multiples of both: of their least common multiple */
    } else {
        return sc_fail(c, ptr, "allOf: cannot merge two different '%s'", k);
    }
    if (!n || json_object_set_new(m, k, n))
        return sc_oom(c);
    return 0;
}


/* Whether s surely allows nothing, as types, enum/const values and
 * required properties that cannot appear show it (0 when not shown). */
int sc_empty(sc_t *c, json_t *s, int depth)
{
    if (json_is_false(s))
        return 1;
    if (!json_is_object(s) || depth > 3)
        return 0;
    char saved[TB_ERR_MAX];
    snprintf(saved, sizeof saved, "%s", c->err->msg);
    int d = c->depth;
    c->probing++; /* no emptiness checks within this one's merges */
    int r = sc_flatten(c, s, "#", &s);
    c->probing--;
    if (r) {
        snprintf(c->err->msg, sizeof c->err->msg, "%s", saved);
        c->depth = d;
        return 0;
    }
    if (json_is_false(s))
        return 1;
    if (!json_is_object(s))
        return 0;
    int types = sc_type_mask(json_object_get(s, "type"));
    if (json_is_true(json_object_get(s, "nullable")))
        types |= T_NULL;
    json_t *cst = json_object_get(s, "const"), *en = json_object_get(s, "enum"), *v;
    size_t i;
    if (cst && json_is_array(en) && !sc_in_enum(en, cst))
        return 1;
    if (cst || json_is_array(en)) {
        int vt = cst ? sc_json_type_of(cst) : 0;
        json_array_foreach(en, i, v) vt |= sc_json_type_of(v);
        types = sc_type_and(types, vt);
    }
    if (!types)
        return 1;
    if (types != T_OBJ)
        return 0;
    json_t *props = json_object_get(s, "properties"), *req = json_object_get(s, "required");
    int closed = json_is_false(json_object_get(s, "additionalProperties")) &&
                 !json_object_get(s, "patternProperties") && !json_object_get(s, SIDES);
    json_array_foreach(req, i, v) {
        json_t *p = json_string_value(v) ? json_object_get(props, json_string_value(v)) : NULL;
        if (json_string_value(v) && ((!p && closed) || (p && sc_empty(c, p, depth + 1))))
            return 1;
    }
    return 0;
}

/* The keywords of n that sc_empty reads (kept; NULL when none, or with
 * patternProperties, whose sides it does not read). */
static json_t *skeleton(sc_t *c, json_t *n)
{
    static const char *const kws[] = {"type", "enum", "const", "required", "properties",
                                      "additionalProperties", "nullable", NULL};
    json_t *skel, *x;
    if (json_object_get(n, "patternProperties") || json_object_get(n, SIDES) ||
        c->depth > MAX_DEPTH / 2 || !(skel = json_object()))
        return NULL;
    for (size_t i = 0; kws[i]; i++)
        if ((x = json_object_get(n, kws[i])) && json_object_set(skel, kws[i], x))
            return json_decref(skel), NULL;
    if (!json_object_size(skel) || sc_keep(c, skel))
        return json_decref(skel), NULL;
    return skel;
}

/* Whether every object n allows meets x, where x is a complement's
 * {type: object, required: [p], properties: {p: {not: X}}}: n allows
 * objects only, requires p, and its schema for p allows no value of X. */
static int implied(sc_t *c, json_t *n, json_t *x)
{
    const char *k, *p = NULL;
    json_t *v, *np, *xp = NULL;
    if (!json_is_object(x) || sc_type_mask(json_object_get(n, "type")) != T_OBJ ||
        json_object_get(n, "nullable") || json_object_get(n, "patternProperties") ||
        json_object_get(n, SIDES))
        return 0;
    json_object_foreach(x, k, v) {
        if (!strcmp(k, "type") ? !json_is_string(v) || strcmp(json_string_value(v), "object")
            : !strcmp(k, "required") ? json_array_size(v) != 1
            : !strcmp(k, "properties") ? json_object_size(v) != 1
            : !sc_annotation(c, k))
            return 0;
    }
    json_object_foreach(json_object_get(x, "properties"), k, v) p = k, xp = v;
    if (!p || !json_is_string(json_array_get(json_object_get(x, "required"), 0)) ||
        strcmp(json_string_value(json_array_get(json_object_get(x, "required"), 0)), p) ||
        !json_is_object(xp) || json_object_size(xp) != 1 || !json_object_get(xp, "not") ||
        !sc_in_enum(json_object_get(n, "required"), json_array_get(json_object_get(x, "required"), 0)) ||
        !(np = json_object_get(json_object_get(n, "properties"), p)))
        return 0;
    json_t *both = sc_all_of(np, json_object_get(xp, "not"));
    if (sc_keep(c, both))
        return 0;
    return sc_empty(c, both, 0);
}

/* Whether some branch of the anyOf any is implied by n (then the anyOf
 * says nothing beside n). */
static int any_implied(sc_t *c, json_t *n, json_t *any)
{
    size_t i;
    json_t *x;
    json_array_foreach(any, i, x) if (implied(c, n, x)) return 1;
    return 0;
}

/* Drops the anyOf branches of n that allow nothing beside its types,
 * values and required properties; 1 when none is left. */
static int prune_any(sc_t *c, json_t *n, const char *ptr)
{
    json_t *any = json_object_get(n, "anyOf"), *skel, *x;
    if (c->probing || !json_is_array(any) || !(skel = skeleton(c, n)))
        return 0;
    if (any_implied(c, n, any)) {
        json_object_del(n, "anyOf");
        return 0;
    }
    json_t *kept = json_array();
    if (sc_keep(c, kept))
        return -1;
    size_t i;
    json_array_foreach(any, i, x) {
        json_t *t = sc_all_of(skel, x);
        if (sc_keep(c, t))
            return -1;
        if (!sc_empty(c, t, 0) && json_array_append(kept, x))
            return sc_oom(c);
    }
    (void)ptr;
    if (!json_array_size(kept))
        return 1;
    if (json_array_size(kept) < json_array_size(any) && json_object_set(n, "anyOf", kept))
        return sc_oom(c);
    return 0;
}

/* x and y both (NULL: no constraint), new reference or NULL. */
static json_t *both(json_t *x, json_t *y)
{
    if (!x || !y || json_equal(x, y))
        return x ? json_incref(x) : y ? json_incref(y) : NULL;
    return all_of(x, y);
}

/* properties and additionalProperties of a and b into n (no
 * patternProperties on either side): a name either defines gets the
 * schema each side gives it (its property, else its additionalProperties),
 * other names both additionalProperties. */
static int merge_properties(sc_t *c, json_t *n, json_t *a, json_t *b)
{
    json_t *pa = json_object_get(a, "properties"), *pb = json_object_get(b, "properties");
    json_t *xa = json_object_get(a, "additionalProperties"),
           *xb = json_object_get(b, "additionalProperties");
    xa = json_is_true(xa) ? NULL : xa;
    xb = json_is_true(xb) ? NULL : xb;
    json_t *props = json_object(), *x;
    if (sc_keep(c, props))
        return -1;
    const char *k;
    json_t *v;
    for (int side = 0; side < 2; side++) {
        json_object_foreach(side ? pb : pa, k, v) {
            if (json_object_get(props, k))
                continue;
            json_t *sa = json_object_get(pa, k), *sb = json_object_get(pb, k);
            x = both(sa ? sa : xa, sb ? sb : xb);
            if (json_object_set_new(props, k, x ? x : json_true()))
                return sc_oom(c);
        }
    }
    x = both(xa, xb);
    if ((json_object_size(props) && json_object_set(n, "properties", props)) ||
        (x && json_object_set_new(n, "additionalProperties", x)))
        return sc_oom(c);
    return 0;
}

/* A schema's items as prefix schemas and the schema of the items after
 * them (either NULL when absent): prefixItems and items (2020-12), or an
 * array items and additionalItems (drafts to 2019-09). */
static void item_parts(json_t *s, json_t **prefix, json_t **rest)
{
    json_t *items = json_object_get(s, "items");
    int tuple = json_is_array(items);
    *prefix = tuple ? items : json_object_get(s, "prefixItems");
    *rest = tuple ? json_object_get(s, "additionalItems") : items;
}

static int has_items(json_t *s)
{
    return json_object_get(s, "items") || json_object_get(s, "prefixItems") ||
           json_object_get(s, "additionalItems");
}

/* The item keywords of a and b into n, each keeping its scope: index i
 * takes a's prefix schema i, or a's rest where a's prefix is shorter, and
 * b's likewise; the rest is both rests.  (Merging items with items alone
 * would put one side's items under the other's prefixItems.)  A rest is
 * present when either side has one, so the merged items evaluate the union
 * of the indices each side evaluates (what unevaluatedItems reads). */
static int merge_items(sc_t *c, json_t *n, json_t *a, json_t *b)
{
    json_t *pa, *ra, *pb, *rb;
    item_parts(a, &pa, &ra);
    item_parts(b, &pb, &rb);
    size_t ka = json_array_size(pa), kb = json_array_size(pb);
    json_t *prefix = json_array(), *rest = both(ra, rb);
    if (sc_keep(c, prefix) || (rest && sc_keep(c, rest)))
        return -1;
    for (size_t i = 0; i < (ka > kb ? ka : kb); i++) {
        json_t *x = both(i < ka ? json_array_get(pa, i) : ra, i < kb ? json_array_get(pb, i) : rb);
        if (json_array_append_new(prefix, x ? x : json_true()))
            return sc_oom(c);
    }
    json_object_del(n, "items");
    json_object_del(n, "prefixItems");
    json_object_del(n, "additionalItems");
    if ((json_array_size(prefix) && json_object_set(n, "prefixItems", prefix)) ||
        (rest && json_object_set(n, "items", rest)))
        return sc_oom(c);
    return 0;
}

static int is_item_kw(const char *k)
{
    return !strcmp(k, "items") || !strcmp(k, "prefixItems") || !strcmp(k, "additionalItems");
}

static int is_object_kw(const char *k)
{
    return !strcmp(k, "properties") || !strcmp(k, "additionalProperties") ||
           !strcmp(k, "patternProperties") || !strcmp(k, SIDES);
}

/* b's object keywords (and its sides) as sides of n, which holds a's: each
 * keeps its additionalProperties to the names its own properties and
 * patterns leave, which one set of the three cannot say once patterns
 * are on either side. */
static int merge_sides(sc_t *c, json_t *n, json_t *b)
{
    json_t *old = json_object_get(n, SIDES), *sides = old ? json_copy(old) : json_array();
    json_t *own = json_object(), *x;
    if (sc_keep(c, sides) || sc_keep(c, own))
        return -1;
    static const char *const kws[] = {"properties", "patternProperties",
                                      "additionalProperties", NULL};
    for (size_t i = 0; kws[i]; i++)
        if ((x = json_object_get(b, kws[i])) && json_object_set(own, kws[i], x))
            return sc_oom(c);
    size_t i;
    if (json_object_size(own) && json_array_append(sides, own))
        return sc_oom(c);
    json_array_foreach(json_object_get(b, SIDES), i, x) {
        if (json_array_append(sides, x))
            return sc_oom(c);
    }
    return json_array_size(sides) && json_object_set(n, SIDES, sides) ? sc_oom(c) : 0;
}

/* *m := sc_merge(*m, b), both flattened. */
int sc_merge(sc_t *c, json_t **m, json_t *b, const char *ptr)
{
    if (json_is_false(b) || json_is_false(*m)) {
        *m = json_false();
        return 0;
    }
    if (json_is_true(b))
        return 0;
    if (json_is_true(*m)) {
        *m = b;
        return 0;
    }
    if (!json_is_object(b) || !json_is_object(*m))
        return sc_fail(c, ptr, "allOf: a schema must be an object or a boolean");
    if (++c->merges > MAX_MERGES)
        return sc_fail(c, ptr, "allOf: more than %d merges (the products of anyOf, oneOf "
                       "and if branches grow too large)", MAX_MERGES);
    int pat = json_object_get(*m, "patternProperties") || json_object_get(b, "patternProperties") ||
              json_object_get(*m, SIDES) || json_object_get(b, SIDES);
    int items = has_items(*m) && has_items(b);
    json_t *n = json_copy(*m);
    if (sc_keep(c, n))
        return -1;
    /* then and else without if say nothing: none of them may meet
     * another side's if */
    if (!json_object_get(b, "if") && (json_object_get(b, "then") || json_object_get(b, "else"))) {
        json_t *bc = json_copy(b);
        if (sc_keep(c, bc))
            return -1;
        json_object_del(bc, "then");
        json_object_del(bc, "else");
        b = bc;
    }
    if (!json_object_get(n, "if")) {
        json_object_del(n, "then");
        json_object_del(n, "else");
    }
    /* a second if/then/else stays a conjunct of its own: the anyOf of one
     * branch (merged with the other anyOfs into their pairs) */
    json_t *cond = NULL;
    if (json_object_get(b, "if") && json_object_get(n, "if")) {
        static const char *const ite[] = {"if", "then", "else"};
        int same = 1;
        for (int i = 0; i < 3; i++) {
            json_t *x = json_object_get(n, ite[i]), *y = json_object_get(b, ite[i]);
            same &= (!x && !y) || (x && y && json_equal(x, y));
        }
        if (!same) {
            json_t *one = json_object(), *bc = json_copy(b);
            cond = json_pack("[o]", one);
            if (sc_keep(c, cond) || sc_keep(c, bc))
                return -1;
            for (int i = 0; i < 3; i++) {
                json_t *y = json_object_get(b, ite[i]);
                if (y && json_object_set(one, ite[i], y))
                    return sc_oom(c);
                json_object_del(bc, ite[i]);
            }
            b = bc;
        }
    }
    if ( (pat ? merge_sides(c, n, b) : merge_properties(c, n, *m, b)) ||
        (items && merge_items(c, n, *m, b)))
        return -1;
    const char *k;
    json_t *v;
    json_object_foreach(b, k, v) {
        if (is_object_kw(k))
            continue;
        if ((items && is_item_kw(k)) || !strcmp(k, "anyOf"))
            continue;
        int r = merge_key(c, n, k, v, ptr);
        if (r == 1) {
            *m = json_false(); /* contradictory: allows nothing */
            return 0;
        }
        if (r)
            return -1;
    }
    /* the anyOfs last, so that their pairs are pruned against the rest */
    json_t *bany = json_object_get(b, "anyOf");
    if (json_is_array(bany) && !c->probing && any_implied(c, n, bany))
        bany = NULL; /* n says it already */
    int r = bany ? merge_key(c, n, "anyOf", bany, ptr) : 0;
    if (r == 0 && cond)
        r = merge_key(c, n, "anyOf", cond, ptr);
    if (r == 0 && json_object_get(n, "anyOf") &&
        (cond || json_object_get(b, "anyOf") || json_object_get(b, "type") ||
         json_object_get(b, "enum") || json_object_get(b, "const") ||
         json_object_get(b, "required") || json_object_get(b, "properties")))
        r = prune_any(c, n, ptr);
    if (r == 1) {
        *m = json_false();
        return 0;
    }
    if (r)
        return -1;
    *m = n;
    return 0;
}

int sc_subschemas_use(const char *kw, json_t *v, const char *const *kws, int depth)
{
    json_t *x;
    size_t i;
    const char *k;
    if (json_is_array(v)) {
        json_array_foreach(v, i, x) if (sc_may_use(x, kws, depth + 1)) return 1;
    } else if (!strcmp(kw, "dependentSchemas") && json_is_object(v)) {
        json_object_foreach(v, k, x) if (sc_may_use(x, kws, depth + 1)) return 1;
    } else {
        return sc_may_use(v, kws, depth + 1);
    }
    return 0;
}

int sc_may_use(json_t *s, const char *const *kws, int depth)
{
    static const char *const sub[] = {"allOf", "anyOf", "oneOf", "if", "then", "else",
                                      "dependentSchemas", NULL};
    if (!json_is_object(s))
        return 0;
    if (depth > MAX_DEPTH)
        return 1;
    for (size_t i = 0; kws[i]; i++)
        if (json_object_get(s, kws[i]))
            return 1;
    for (size_t i = 0; sub[i]; i++) {
        json_t *v = json_object_get(s, sub[i]);
        if (v && sc_subschemas_use(sub[i], v, kws, depth))
            return 1;
    }
    return 0;
}

/* The keywords by which a subschema may evaluate array items (any item
 * keyword or reference). */
static const char *const item_kws[] = {"items", "prefixItems", "additionalItems", "contains",
                                       "unevaluatedItems", "$ref", "$dynamicRef",
                                       "$recursiveRef", NULL};

/* unevaluatedItems of a schema whose allOf and $ref are merged in: the
 * items its own keywords and those merged evaluate are the prefix (when
 * no rest schema is there) or all, so it becomes the rest schema, or
 * says nothing.  Where an applicator that may evaluate items depends on
 * the instance (anyOf, oneOf, if, dependentSchemas, contains), the
 * evaluated items are not known statically: refused. */
static int resolve_unevaluated_items(sc_t *c, json_t *s, const char *ptr, json_t **out);

/* Both unevaluated keywords of a flattened schema. */
static int resolve_unevaluated(sc_t *c, json_t *s, const char *ptr, json_t **out)
{
    json_t *m, *x;
    if (sc_unevaluated_if(c, s, ptr, &x))
        return -1;
    if (x != s && json_object_get(x, "anyOf"))
        return *out = x, 0; /* its branches resolve them */
    return sc_unevaluated_properties(c, x, ptr, &m) ||
           resolve_unevaluated_items(c, m, ptr, out);
}

static int resolve_unevaluated_items(sc_t *c, json_t *s, const char *ptr, json_t **out)
{
    static const char *const dyn[] = {"anyOf", "oneOf", "if", "then", "else",
                                      "dependentSchemas", "contains", "$dynamicRef",
                                      "$recursiveRef", NULL};
    json_t *u = json_object_get(s, "unevaluatedItems"), *prefix, *rest;
    *out = s;
    if (!u)
        return 0;
    if (!json_is_object(u) && !json_is_boolean(u))
        return sc_fail(c, ptr, "'unevaluatedItems' must be a schema");
    for (size_t i = 0; dyn[i]; i++) {
        json_t *v = json_object_get(s, dyn[i]);
        int dynamic = v && (!strcmp(dyn[i], "contains") || dyn[i][0] == '$' ||
                            sc_subschemas_use(dyn[i], v, item_kws, 0));
        if (dynamic && !json_is_true(u))
            return sc_fail(c, ptr, "'unevaluatedItems' beside '%s' is not supported (the items "
                        "it evaluates depend on the instance)", dyn[i]);
    }
    json_t *n = json_copy(s);
    if (sc_keep(c, n))
        return -1;
    json_object_del(n, "unevaluatedItems");
    item_parts(s, &prefix, &rest);
    /* also unevaluatedItems: true, which evaluates every item for the
     * unevaluatedItems of a schema this one is merged into */
    if (!rest &&
        json_object_set(n, json_is_array(json_object_get(s, "items")) ? "additionalItems"
                                                                       : "items", u))
        return sc_oom(c);
    *out = n;
    return 0;
}

/* The values an if tests property *p against (a new array), where the if
 * is {properties: {p: {const or enum}}} with required absent or [p]
 * (*req set) and annotations only; NULL for other ifs. */
static json_t *tested_values(const sc_t *c, json_t *i, const char **p, int *req)
{
    const char *k, *pk = NULL;
    json_t *v, *ps = NULL, *vals = NULL;
    *req = 0;
    if (!json_is_object(i))
        return NULL;
    json_object_foreach(i, k, v) {
        if (!strcmp(k, "properties") && json_is_object(v) && json_object_size(v) == 1)
            continue;
        if (!strcmp(k, "required") && json_is_array(v) && json_array_size(v) == 1 &&
            json_is_string(json_array_get(v, 0))) {
            *req = 1;
            continue;
        }
        if (!sc_annotation(c, k))
            return NULL;
    }
    json_object_foreach(json_object_get(i, "properties"), k, v) pk = k, ps = v;
    if (!pk || !json_is_object(ps) ||
        (*req && strcmp(json_string_value(json_array_get(json_object_get(i, "required"), 0)), pk)))
        return NULL;
    json_object_foreach(ps, k, v) {
        if (!strcmp(k, "const") && !vals)
            vals = json_pack("[O]", v);
        else if (!strcmp(k, "enum") && json_is_array(v) && !vals)
            vals = json_copy(v);
        else if (!sc_annotation(c, k))
            return json_decref(vals), NULL;
    }
    *p = pk;
    return vals;
}

/* allOf's conditionals that test one property against disjoint values
 * (if {properties: {p: {const: v_k}}}, the discriminator of tagged
 * schemas), replaced by one anyOf of disjoint branches instead of their
 * 2^n products: not an object (every if holds: every then), an object
 * without p (then where the if does not require p, else where it does),
 * p of the values of if k (then k, every other else), p of none of them
 * (every else).  *out the new allOf array, or all itself. */
static int discriminate(sc_t *c, json_t *s, json_t *all, json_t **out)
{
    *out = all;
    const char *p = NULL, *q = NULL;
    size_t n = json_array_size(all), i, j, k;
    json_t *x, *v, *y;
    int req = 0;
    json_t *conds = json_array(), *rest = json_array(), *vals = json_array(), *reqs = json_array();
    if (sc_keep(c, conds) || sc_keep(c, rest) || sc_keep(c, vals) || sc_keep(c, reqs))
        return -1;
    (void)s;
    for (i = 0; i < n; i++) {
        x = json_array_get(all, i);
        json_t *tv = json_is_object(x) && json_object_get(x, "if")
                         ? tested_values(c, json_object_get(x, "if"), &q, &req) : NULL;
        int ok = tv && (!p || !strcmp(p, q));
        size_t keys = 0;
        const char *kk;
        json_object_foreach(x, kk, v) keys += !sc_annotation(c, kk);
        ok &= keys == 1 + (size_t)!!json_object_get(x, "then") + (size_t)!!json_object_get(x, "else");
        /* values disjoint from every other conditional's */
        json_array_foreach(vals, j, y) {
            size_t a, b;
            json_t *u, *w;
            json_array_foreach(y, a, u) json_array_foreach(tv, b, w) ok &= !sc_same_value(u, w);
        }
        if (!ok) {
            json_decref(tv);
            if (json_array_append(rest, x))
                return sc_oom(c);
            continue;
        }
        p = q;
        if (json_array_append(conds, x) || json_array_append_new(vals, tv) ||
            json_array_append_new(reqs, json_boolean(req)))
            return sc_oom(c);
    }
    n = json_array_size(conds);
    if (n < 2)
        return 0;
    json_t *any = json_array(), *union_v = json_array();
    if (sc_keep(c, any) || sc_keep(c, union_v))
        return -1;
    json_array_foreach(vals, i, y) {
        if (json_array_extend(union_v, y))
            return sc_oom(c);
    }
    /* branch -3: not an object; -2: no p; -1: p of no value; k: p of
     * if k's values */
    for (long b = -3; b < (long)n; b++) {
        json_t *br = json_array(), *head;
        if (sc_keep(c, br))
            return -1;
        if (b == -3)
            head = json_pack("{s:[s,s,s,s,s]}", "type", "null", "boolean", "number", "string",
                             "array");
        else if (b == -2)
            head = json_pack("{s:s,s:{s:b}}", "type", "object", "properties", p, 0);
        else
            head = json_pack("{s:s,s:[s],s:{s:o}}", "type", "object", "required", p,
                             "properties", p,
                             b == -1 ? json_pack("{s:{s:O}}", "not", "enum", union_v)
                                     : json_pack("{s:O}", "enum",
                                                 json_array_get(vals, (size_t)b)));
        if (!head || json_array_append_new(br, head))
            return sc_oom(c);
        for (k = 0; k < n; k++) {
            x = json_array_get(conds, k);
            int holds = b == -3 || (b == -2 && !json_is_true(json_array_get(reqs, k))) ||
                        b == (long)k;
            json_t *part = json_object_get(x, holds ? "then" : "else");
            if (part && json_array_append(br, part))
                return sc_oom(c);
        }
        if (json_array_append_new(any, json_pack("{s:O}", "allOf", br)))
            return sc_oom(c);
    }
    if (json_array_append_new(rest, json_pack("{s:O}", "anyOf", any)))
        return sc_oom(c);
    *out = rest;
    return 0;
}

/* s without allOf and $ref: their schemas merged into its keywords (and
 * unevaluatedItems resolved where the merge makes it static). */
int sc_flatten(sc_t *c, json_t *s, const char *ptr, json_t **out)
{
    *out = s;
    json_t *all = json_object_get(s, "allOf"), *ref = json_object_get(s, "$ref");
    if (!all && !ref)
        return resolve_unevaluated(c, s, ptr, out);
    if (++c->depth > MAX_DEPTH)
        return sc_fail(c, ptr, "allOf/$ref nested too deeply (a $ref cycle through allOf?)");
    json_t *m = json_copy(s);
    if (sc_keep(c, m))
        return -1;
    json_object_del(m, "allOf");
    json_object_del(m, "$ref");
    if (all && !json_is_array(all)) {
        return sc_fail(c, ptr, "'allOf' must be an array");
    }
    if (ref) {
        if (!json_is_string(ref))
            return sc_fail(c, ptr, "'$ref' must be a string");
        json_t *t, *ft;
        char *canon;
        int r = sc_resolve(c, json_string_value(ref), ptr, &t, &canon) ||
                (json_is_object(t) && sc_flatten(c, t, canon, &ft)) ||
                sc_merge(c, &m, json_is_object(t) ? ft : t, ptr);
        free(canon);
        if (r)
            return -1;
    }
    size_t i;
    json_t *x;
    if (json_is_array(all) && discriminate(c, s, all, &all))
        return -1;
    json_array_foreach(all, i, x) {
        json_t *fx = x;
        if (json_is_object(x) && sc_flatten(c, x, ptr, &fx))
            return -1;
        if (sc_merge(c, &m, fx, ptr))
            return -1;
    }
    c->depth--;
    return json_is_object(m) ? resolve_unevaluated(c, m, ptr, out) : (*out = m, 0);
}
