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
            if (n && json_object_set_new(n, pk, old && !json_equal(old, pv) ? sc_all_of(old, pv)
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
        /* (a1 | a2) & (b1 | b2): every pair */
        if (json_array_size(av) * json_array_size(bv) > 64)
            return sc_fail(c, ptr, "allOf: two 'anyOf' of more than 64 pairs of branches");
        n = json_array();
        size_t i, j;
        json_t *x, *y;
        json_array_foreach(av, i, x) json_array_foreach(bv, j, y) {
            if (n && json_array_append_new(n, sc_all_of(x, y)))
                return json_decref(n), sc_oom(c);
        }
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


/* x and y both (NULL: no constraint), new reference or NULL. */
static json_t *both(json_t *x, json_t *y)
{
    if (!x || !y || json_equal(x, y))
        return x ? json_incref(x) : y ? json_incref(y) : NULL;
    return sc_all_of(x, y);
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
    if ( (pat ? merge_sides(c, n, b) : merge_properties(c, n, *m, b)) ||
        (items && merge_items(c, n, *m, b)))
        return -1;
    const char *k;
    json_t *v;
    json_object_foreach(b, k, v) {
        if (is_object_kw(k))
            continue;
        if (items && is_item_kw(k))
            continue;
        if (merge_key(c, n, k, v, ptr))
            return -1;
    }
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
