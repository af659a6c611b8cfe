/*
 * not: the complement of a schema, written as a schema
 * (docs/json-schema.md, *not*).
 *
 * A flattened schema is the conjunction of its keywords, each of which
 * holds vacuously on the types it does not speak of; so its complement is
 * the disjunction (anyOf) of "the type keyword fails" and, for each other
 * keyword, "an instance of the type it speaks of that fails it", which is
 * again a keyword: minLength n fails where maxLength n-1 holds, properties
 * {p: P} where p is present with a value of not P, anyOf [A, B] where
 * allOf [not A, not B] holds, and so on.  Subschemas stay under "not"
 * (compiled when reached), so recursion costs nothing until it is used.
 * Where no keyword says the complement exactly (uniqueItems,
 * additionalProperties, propertyNames, ...) it is refused, naming the
 * keyword; never a looser schema.  The complement is only ever read
 * beside `within` (the keywords beside the `not`, or the other oneOf
 * branch), so alternatives of no type within allows are left out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ecma.h"
#include "internal.h"

typedef struct {
    sc_t *c;
    json_t *alts; /* the alternatives of the complement */
    const char *ptr;
    json_t *within; /* the instances are known to satisfy it (NULL: nothing known) */
} comp_t;

/* Whether s (flattened, an object) forbids name p: properties p false, or
 * additionalProperties false with no property p and no patterns. */
static int forbids(json_t *s, const char *p)
{
    json_t *props = json_object_get(s, "properties");
    if (json_is_false(json_object_get(props, p)))
        return 1;
    return json_is_false(json_object_get(s, "additionalProperties")) &&
           !json_object_get(props, p) && !json_object_get(s, "patternProperties");
}

/* Whether the array a holds the string p. */
static int has_name(json_t *a, const char *p)
{
    size_t i;
    json_t *x;
    json_array_foreach(a, i, x) {
        if (json_is_string(x) && !strcmp(json_string_value(x), p))
            return 1;
    }
    return 0;
}

/* Whether alternative a has no instance that k->within allows, as its
 * types, or a name a requires that within forbids, or one within
 * requires that a forbids, or a name a requires with a value of not X
 * where within's property is X, show: the complement is intersected with
 * within, so a need not be there. */
static int outside(comp_t *k, json_t *a)
{
    json_t *w = k->within, *ta = json_object_get(a, "type"), *tw = json_object_get(w, "type"), *x;
    const char *p;
    size_t i;
    if (!json_is_object(w) || !json_is_object(a))
        return 0;
    if (ta && tw && !json_is_true(json_object_get(a, "nullable"))) {
        int mw = sc_type_mask(tw) | (json_is_true(json_object_get(w, "nullable")) ? T_NULL : 0);
        if (mw && !sc_type_and(sc_type_mask(ta), mw))
            return 1;
    }
    if (!json_is_string(ta) || strcmp(json_string_value(ta), "object"))
        return 0; /* the names below are what objects must or must not have */
    json_array_foreach(json_object_get(a, "required"), i, x) {
        if (json_is_string(x) && forbids(w, json_string_value(x)))
            return 1;
    }
    json_object_foreach(json_object_get(a, "properties"), p, x) {
        if (json_is_false(x) && has_name(json_object_get(w, "required"), p))
            return 1;
        /* p present with a value of not X, where within says X of p */
        json_t *nx = json_object_get(x, "not"), *wp = json_object_get(json_object_get(w, "properties"), p);
        if (nx && json_object_size(x) == 1 && wp && json_equal(nx, wp) &&
            has_name(json_object_get(a, "required"), p))
            return 1;
    }
    return 0;
}

static int alt(comp_t *k, json_t *a)
{
    if (a && outside(k, a))
        return json_decref(a), 0;
    if (!a || json_array_append_new(k->alts, a))
        return sc_oom(k->c);
    return 0;
}

/* {"type": t} with the keyword k: v (v stolen); t NULL: no type. */
static json_t *typed(const char *t, const char *k, json_t *v)
{
    json_t *o = json_object();
    if (!o || (t && json_object_set_new(o, "type", json_string(t))) ||
        (k && json_object_set_new(o, k, v)))
        return json_decref(o), NULL;
    return o;
}

/* {"not": s}, a new reference. */
static json_t *not_of(json_t *s) { return json_pack("{s:O}", "not", s); }

/* The complement of subschema x, now (a new reference): allOf of
 * several {"not": ...} would merge them back into the not of an anyOf. */
static json_t *not_now(comp_t *k, json_t *x)
{
    json_t *fx = x, *comp;
    if (json_is_object(x) && sc_flatten(k->c, x, k->ptr, &fx))
        return NULL;
    if (sc_complement(k->c, fx, k->within, k->ptr, &comp))
        return NULL;
    return json_incref(comp);
}

/* A number bound on o: the lower (lo) or upper one, strict or not, as the
 * draft spells it. */
static int set_bound(comp_t *k, json_t *o, int lo, json_t *v, int strict)
{
    if (k->c->draft4) {
        if (json_object_set(o, lo ? "minimum" : "maximum", v) ||
            (strict && json_object_set_new(o, lo ? "exclusiveMinimum" : "exclusiveMaximum",
                                           json_true())))
            return sc_oom(k->c);
        return 0;
    }
    const char *kw = lo ? (strict ? "exclusiveMinimum" : "minimum")
                        : (strict ? "exclusiveMaximum" : "maximum");
    return json_object_set(o, kw, v) ? sc_oom(k->c) : 0;
}

/* Numbers below (lo 0) or above v, strict or not. */
static int number_beyond(comp_t *k, json_t *v, int above, int strict)
{
    json_t *o = typed("number", NULL, NULL);
    if (!o || set_bound(k, o, above, v, strict))
        return json_decref(o), sc_oom(k->c);
    return alt(k, o);
}

static int cmp_num(const void *a, const void *b)
{
    double x = json_number_value(*(json_t *const *)a), y = json_number_value(*(json_t *const *)b);
    return x < y ? -1 : x > y;
}

/* The values of no type in mask: {"type": [the others]} (integer goes
 * with number: a mask with integer but not number leaves the numbers that
 * are no integers, "$tb:fraction" 0). */
static int other_types(comp_t *k, int mask)
{
    int left = T_ALL & ~mask;
    if (mask & T_NUM)
        left &= ~T_INT;
    else if (mask & T_INT) {
        left &= ~T_NUM & ~T_INT;
        if (alt(k, typed("number", FRACTION, json_integer(0))))
            return -1;
    }
    return left ? alt(k, json_pack("{s:o}", "type", sc_type_json(left))) : 0;
}

/* The values other than those of vals (enum, or const as [const]). */
static int not_values(comp_t *k, json_t *vals, const char *kw)
{
    int vt = 0, t_true = 0, t_false = 0;
    size_t i;
    json_t *v, *strs = json_array(), *nums = json_array();
    if (sc_keep(k->c, strs) || sc_keep(k->c, nums))
        return -1;
    json_array_foreach(vals, i, v) {
        vt |= sc_json_type_of(v);
        if (json_is_array(v) || json_is_object(v))
            return sc_fail(k->c, k->ptr, "'not' of an array or object in '%s' is not supported",
                           kw);
        if ((json_is_string(v) && json_array_append(strs, v)) ||
            (json_is_number(v) && json_array_append(nums, v)))
            return sc_oom(k->c);
        t_true |= json_is_true(v);
        t_false |= json_is_false(v);
    }
    if (vt & T_INT)
        vt |= T_NUM; /* the other numbers come below */
    if (other_types(k, vt))
        return -1;
    if (json_array_size(strs) &&
        alt(k, typed("string", NOT_STRINGS, json_incref(strs))))
        return -1;
    if (t_true != t_false && alt(k, json_pack("{s:b}", "const", !t_true)))
        return -1;
    size_t n = json_array_size(nums);
    if (!n)
        return 0;
    json_t **sorted = malloc(n * sizeof *sorted);
    if (!sorted)
        return sc_oom(k->c);
    json_array_foreach(nums, i, v) sorted[i] = v;
    qsort(sorted, n, sizeof *sorted, cmp_num);
    int r = number_beyond(k, sorted[0], 0, 1) || number_beyond(k, sorted[n - 1], 1, 1);
    for (i = 0; i + 1 < n && !r; i++) {
        if (json_number_value(sorted[i]) == json_number_value(sorted[i + 1]))
            continue;
        json_t *o = typed("number", NULL, NULL);
        r = !o || set_bound(k, o, 1, sorted[i], 1) || set_bound(k, o, 0, sorted[i + 1], 1) ||
            alt(k, o);
    }
    free(sorted);
    return r ? -1 : 0;
}

/* A subschema that every value satisfies ({} or true). */
static int trivial(json_t *x) { return json_is_true(x) || (json_is_object(x) && !json_object_size(x)); }

/* The names an object under k->within can have when it can have no other
 * (additionalProperties false, no patternProperties): its properties;
 * NULL when it is not known to be so bounded. */
static json_t *within_names(comp_t *k)
{
    json_t *w = k->within, *props;
    if (!json_is_object(w) || !json_is_false(json_object_get(w, "additionalProperties")) ||
        json_object_get(w, "patternProperties"))
        return NULL;
    props = json_object_get(w, "properties");
    return json_is_object(props) ? props : json_false(); /* no member at all */
}

/* An object with name p present and its value in the complement of x. */
static int member_not(comp_t *k, const char *p, json_t *x)
{
    return alt(k, json_pack("{s:s,s:[s],s:{s:o}}", "type", "object", "required", p,
                            "properties", p, not_of(x)));
}

/* An object with a member in the class of entry e (SOME_MEMBER, e
 * stolen). */
static int some_member(comp_t *k, json_t *e)
{
    return alt(k, e ? json_pack("{s:s,s:[o]}", "type", "object", SOME_MEMBER, e) : NULL);
}

/* The keys of object o as an array (new). */
static json_t *keys_of(json_t *o)
{
    json_t *a = json_array(), *v;
    const char *p;
    json_object_foreach(o, p, v) {
        if (a && json_array_append_new(a, json_string(p)))
            return json_decref(a), NULL;
    }
    return a;
}

/* not additionalProperties x (or, pp set, not patternProperties pp) of s:
 * some member that is additional for s (a name neither in s's properties
 * nor matching its patterns; of pp: matching a pattern) has a value in the
 * complement.  Written where the instances can only have the properties
 * of k->within (a member each), for additionalProperties false beside no
 * property and no pattern as minProperties 1, and otherwise as SOME_MEMBER
 * (a member that must be there, sc_object_value). */
static int not_members(comp_t *k, json_t *s, json_t *x, json_t *pp)
{
    json_t *props = json_object_get(s, "properties"), *mine = json_object_get(s, "patternProperties");
    json_t *names = within_names(k), *y;
    const char *p, *q;
    if (!pp && trivial(x))
        return 0;
    if (!pp && json_is_false(x) && !json_object_size(props) && !json_object_size(mine))
        return alt(k, json_pack("{s:s,s:i}", "type", "object", "minProperties", 1));
    if (!names && pp) {
        json_object_foreach(pp, q, x) {
            if (!trivial(x) &&
                some_member(k, json_pack("{s:s,s:o}", "pattern", q, "value", not_of(x))))
                return -1;
        }
        return 0;
    }
    if (!names) {
        json_t *ex = keys_of(props), *xp = keys_of(mine);
        return some_member(k, ex && xp ? json_pack("{s:o,s:o,s:o}", "except", ex,
                                                   "exceptPatterns", xp, "value",
                                                   json_is_false(x) ? json_true() : not_of(x))
                                       : (json_decref(ex), json_decref(xp), NULL));
    }
    json_object_foreach(json_is_object(names) ? names : NULL, p, y) {
        if (json_is_false(y))
            continue; /* never present */
        if (pp) {
            json_object_foreach(pp, q, x) {
                int m = trivial(x) ? 0 : sc_pattern_matches(k->c, q, p, k->ptr);
                if (m < 0 || (m && member_not(k, p, x)))
                    return -1;
            }
            continue;
        }
        if (json_object_get(props, p))
            continue; /* not additional */
        int matched = 0;
        json_object_foreach(mine, q, y) {
            int m = sc_pattern_matches(k->c, q, p, k->ptr);
            if (m < 0)
                return -1;
            matched |= m;
        }
        if (!matched && member_not(k, p, x))
            return -1;
    }
    return 0;
}

/* not items (prefixItems, additionalItems) of s: some item in the
 * complement of its item schema.  A tuple item i as prefixItems of i
 * trues and not its schema, minItems i + 1; the items after no tuple as
 * contains of the complement; items after a tuple refused. */
static int not_items(comp_t *k, json_t *s, const char *kw, json_t *v)
{
    json_t *items = json_object_get(s, "items"), *prefix = json_object_get(s, "prefixItems");
    json_t *tuple = json_is_array(items) ? items : prefix, *x;
    size_t i, j;
    if ((!strcmp(kw, "additionalItems") && !json_is_array(items)) ||
        (!strcmp(kw, "prefixItems") && json_is_array(items)))
        return 0; /* applies to nothing (array items are the tuple, array.c) */
    if (json_is_array(v)) {
        json_array_foreach(v, i, x) {
            if (trivial(x))
                continue;
            json_t *pre = json_array(), *o;
            for (j = 0; pre && j < i; j++)
                if (json_array_append_new(pre, json_true()))
                    return json_decref(pre), sc_oom(k->c);
            if (!pre || json_array_append_new(pre, not_of(x)))
                return json_decref(pre), sc_oom(k->c);
            o = json_pack("{s:s,s:o,s:I}", "type", "array", "prefixItems", pre, "minItems",
                          (json_int_t)i + 1);
            if (alt(k, o))
                return -1;
        }
        return 0;
    }
    if (trivial(v))
        return 0;
    if (json_array_size(tuple) && json_is_array(tuple))
        return sc_fail(k->c, k->ptr, "'not' of '%s' after a tuple of items is not supported", kw);
    return alt(k, json_pack("{s:s,s:o}", "type", "array", "contains", not_of(v)));
}

/* The complement of one keyword k: v of the flattened schema s. */
static int not_keyword(comp_t *k, json_t *s, const char *kw, json_t *v)
{
    sc_t *c = k->c;
    size_t i;
    json_t *x;
    if (!strcmp(kw, "type") || !strcmp(kw, "nullable"))
        return 0; /* with the types, see sc_complement */
    if (!strcmp(kw, "enum") || !strcmp(kw, "const")) {
        json_t *vals = !strcmp(kw, "const") ? json_pack("[O]", v) : v;
        if (!json_is_array(vals) || (vals != v && sc_keep(c, vals)))
            return sc_fail(c, k->ptr, "'enum' must be an array");
        return not_values(k, vals, kw);
    }
    if (!strcmp(kw, "minLength") || !strcmp(kw, "maxLength") || !strcmp(kw, "minItems") ||
        !strcmp(kw, "maxItems") || !strcmp(kw, "minProperties") || !strcmp(kw, "maxProperties")) {
        double n = json_number_value(v);
        int mn = kw[1] == 'i';
        if (!json_is_number(v) || n < 0 || n != floor(n))
            return sc_fail(c, k->ptr, "'%s' must be a non-negative integer", kw);
        if (mn && n == 0)
            return 0;
        const char *t = strstr(kw, "Length") ? "string" : strstr(kw, "Items") ? "array" : "object";
        char other[24];
        snprintf(other, sizeof other, "%s%s", mn ? "max" : "min", kw + 3);
        return alt(k, typed(t, other, json_real(mn ? n - 1 : n + 1)));
    }
    if (!strcmp(kw, "pattern"))
        return alt(k, typed("string", NOT_PATTERN, json_incref(v)));
    if (!strcmp(kw, NOT_PATTERN))
        return alt(k, typed("string", "pattern", json_incref(v)));
    if (!strcmp(kw, NOT_STRINGS))
        return alt(k, typed("string", "enum", json_incref(v)));
    if (!strcmp(kw, "format")) {
        /* a format is the strings of its pattern (grammar/ecma.h) */
        const char *fp = json_is_string(v) ? gr_ecma_format(json_string_value(v)) : NULL;
        if (json_is_string(v) && !sc_format_asserts(c, json_string_value(v)))
            return 0;
        if (!fp)
            return sc_fail(c, k->ptr, "'not' of 'format' is not supported");
        return alt(k, typed("string", NOT_PATTERN, json_string(fp)));
    }
    if (!strcmp(kw, "minimum") || !strcmp(kw, "maximum")) {
        if (!json_is_number(v))
            return sc_fail(c, k->ptr, "'%s' must be a number", kw);
        int lo = kw[1] == 'i';
        int strict = c->draft4 && json_is_true(json_object_get(s, lo ? "exclusiveMinimum"
                                                                      : "exclusiveMaximum"));
        return number_beyond(k, v, !lo, !strict);
    }
    if (!strcmp(kw, "exclusiveMinimum") || !strcmp(kw, "exclusiveMaximum")) {
        if (json_is_boolean(v))
            return 0; /* draft 4: with minimum/maximum */
        if (!json_is_number(v))
            return sc_fail(c, k->ptr, "'%s' must be a number", kw);
        return number_beyond(k, v, kw[10] == 'a', 0);
    }
    if (!strcmp(kw, "multipleOf")) {
        int places = json_is_number(v) ? sc_decimal_places(json_number_value(v)) : -1;
        if (places < 0)
            return sc_fail(c, k->ptr, "'not' of 'multipleOf' other than 1 or 0.1, 0.01, ... "
                           "is not supported");
        return alt(k, typed("number", FRACTION, json_integer(places)));
    }
    if (!strcmp(kw, FRACTION)) {
        json_int_t p = json_integer_value(v);
        if (!p)
            return alt(k, typed("integer", NULL, NULL));
        return alt(k, typed("number", "multipleOf", json_real(pow(10, -(double)p))));
    }
    if (!strcmp(kw, "required")) {
        json_array_foreach(v, i, x) {
            if (!json_is_string(x))
                return sc_fail(c, k->ptr, "'required' must hold strings");
            if (alt(k, json_pack("{s:s,s:{s:b}}", "type", "object", "properties",
                                 json_string_value(x), 0)))
                return -1;
        }
        return 0;
    }
    if (!strcmp(kw, "properties")) {
        const char *p;
        json_object_foreach(v, p, x) {
            if (json_is_true(x) || (json_is_object(x) && !json_object_size(x)))
                continue;
            if (alt(k, json_pack("{s:s,s:[s],s:{s:o}}", "type", "object", "required", p,
                                 "properties", p, not_of(x))))
                return -1;
        }
        return 0;
    }
    if (!strcmp(kw, "dependentRequired") || !strcmp(kw, "dependencies")) {
        const char *p;
        json_object_foreach(v, p, x) {
            size_t j;
            json_t *r;
            if (json_is_array(x)) {
                json_array_foreach(x, j, r) {
                    if (!json_is_string(r))
                        return sc_fail(c, k->ptr, "'%s' must hold strings", kw);
                    if (alt(k, json_pack("{s:s,s:[s],s:{s:b}}", "type", "object", "required", p,
                                         "properties", json_string_value(r), 0)))
                        return -1;
                }
            } else if (alt(k, json_pack("{s:[{s:s,s:[s]},o]}", "allOf", "type", "object",
                                        "required", p, not_of(x)))) {
                return -1;
            }
        }
        return 0;
    }
    if (!strcmp(kw, "dependentSchemas")) {
        const char *p;
        json_object_foreach(v, p, x) {
            if (alt(k, json_pack("{s:[{s:s,s:[s]},o]}", "allOf", "type", "object", "required",
                                 p, not_of(x))))
                return -1;
        }
        return 0;
    }
    if (!strcmp(kw, "anyOf") || !strcmp(kw, "oneOf")) {
        /* none of them (for oneOf: or two of them) */
        json_t *all = json_array(), *y, *nx;
        if (sc_keep(c, all))
            return -1;
        json_array_foreach(v, i, x) {
            if (!(nx = not_now(k, x)))
                return -1;
            if (json_array_append_new(all, nx))
                return sc_oom(c);
        }
        if (!strcmp(kw, "anyOf"))
            return alt(k, json_pack("{s:O}", "allOf", all));
        if (alt(k, json_pack("{s:O}", "allOf", all)))
            return -1;
        size_t j;
        json_array_foreach(v, i, x) {
            json_array_foreach(v, j, y) {
                if (j > i && alt(k, json_pack("{s:[O,O]}", "allOf", x, y)))
                    return -1;
            }
        }
        return 0;
    }
    if (!strcmp(kw, "not"))
        return alt(k, json_incref(v));
    if (!strcmp(kw, "if")) {
        json_t *th = json_object_get(s, "then"), *el = json_object_get(s, "else");
        if (th && alt(k, json_pack("{s:[O,o]}", "allOf", v, not_of(th))))
            return -1;
        if (el && alt(k, json_pack("{s:[o,o]}", "allOf", not_of(v), not_of(el))))
            return -1;
        return 0;
    }
    if (!strcmp(kw, "then") || !strcmp(kw, "else"))
        return 0; /* with if; alone they say nothing */
    if (!strcmp(kw, "contains")) {
        /* fewer than minContains, or more than maxContains */
        json_t *mnv = json_object_get(s, c->draft >= 2019 ? "minContains" : "$tb:minContains");
        json_t *mxv = json_object_get(s, c->draft >= 2019 ? "maxContains" : "$tb:maxContains");
        mnv = mnv ? mnv : json_object_get(s, "$tb:minContains");
        mxv = mxv ? mxv : json_object_get(s, "$tb:maxContains");
        json_int_t lo = mnv ? (json_int_t)json_number_value(mnv) : 1;
        if (lo > 0 && alt(k, json_pack("{s:s,s:O,s:i,s:I}", "type", "array", "contains", v,
                                       "$tb:minContains", 0, "$tb:maxContains", lo - 1)))
            return -1;
        if (mxv && alt(k, json_pack("{s:s,s:O,s:I}", "type", "array", "contains", v,
                                    "$tb:minContains",
                                    (json_int_t)json_number_value(mxv) + 1)))
            return -1;
        return 0;
    }
    if (!strcmp(kw, "minContains") || !strcmp(kw, "maxContains") ||
        !strcmp(kw, "$tb:minContains") || !strcmp(kw, "$tb:maxContains"))
        return 0; /* with contains */
    if (!strcmp(kw, "uniqueItems") && json_is_false(v))
        return 0;
    if (!strcmp(kw, "items") || !strcmp(kw, "prefixItems") || !strcmp(kw, "additionalItems"))
        return not_items(k, s, kw, v);
    if (!strcmp(kw, "additionalProperties"))
        return not_members(k, s, v, NULL);
    if (!strcmp(kw, "patternProperties"))
        return json_is_object(v) ? not_members(k, s, NULL, v)
                                 : sc_fail(c, k->ptr, "'patternProperties' must be an object");
    if (!strcmp(kw, SIDES)) {
        /* some side's properties, patternProperties or additionalProperties
         * fails, each read with its own side's */
        json_array_foreach(v, i, x) {
            const char *sk;
            json_t *sv;
            if (!json_is_object(x))
                return sc_fail(c, k->ptr, "'%s' is malformed", SIDES);
            json_object_foreach(x, sk, sv) {
                if (not_keyword(k, x, sk, sv))
                    return -1;
            }
        }
        return 0;
    }
    if (!strcmp(kw, "unevaluatedProperties") && json_is_true(v))
        return 0;
    return sc_fail(c, k->ptr, "'not' of '%s' is not supported", kw);
}

int sc_complement(sc_t *c, json_t *s, json_t *within, const char *ptr, json_t **out)
{
    *out = NULL;
    if (json_is_true(s) || json_is_false(s)) {
        *out = json_is_true(s) ? json_false() : json_true();
        return 0;
    }
    if (!json_is_object(s))
        return sc_fail(c, ptr, "a schema must be an object or a boolean");
    comp_t k = {.c = c, .alts = json_array(), .ptr = ptr, .within = within};
    if (sc_keep(c, k.alts))
        return -1;
    json_t *t = json_object_get(s, "type"), *v;
    if (t || json_is_true(json_object_get(s, "nullable"))) {
        int m = sc_type_mask(t);
        if (json_is_true(json_object_get(s, "nullable")))
            m |= T_NULL;
        if (other_types(&k, m))
            return -1;
    }
    const char *kw;
    json_object_foreach(s, kw, v) {
        if (!sc_annotation(c, kw) && not_keyword(&k, s, kw, v))
            return -1;
    }
    size_t n = json_array_size(k.alts);
    *out = n == 0 ? json_false()
         : n == 1 ? json_incref(json_array_get(k.alts, 0))
                  : json_pack("{s:O}", "anyOf", k.alts);
    return *out && !sc_keep(c, *out) ? 0 : -1;
}
