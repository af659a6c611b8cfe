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
 * keyword; never a looser schema.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct {
    sc_t *c;
    json_t *alts; /* the alternatives of the complement */
    const char *ptr;
} comp_t;

static int alt(comp_t *k, json_t *a)
{
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
    if (sc_complement(k->c, fx, k->ptr, &comp))
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
        !strcmp(kw, "maxItems")) {
        double n = json_number_value(v);
        int mn = kw[1] == 'i';
        if (!json_is_number(v) || n < 0 || n != floor(n))
            return sc_fail(c, k->ptr, "'%s' must be a non-negative integer", kw);
        if (mn && n == 0)
            return 0;
        const char *t = strstr(kw, "Length") ? "string" : "array";
        char other[16];
        snprintf(other, sizeof other, "%s%s", mn ? "max" : "min", kw + 3);
        return alt(k, typed(t, other, json_real(mn ? n - 1 : n + 1)));
    }
    if (!strcmp(kw, "pattern"))
        return alt(k, typed("string", NOT_PATTERN, json_incref(v)));
    if (!strcmp(kw, NOT_PATTERN))
        return alt(k, typed("string", "pattern", json_incref(v)));
    if (!strcmp(kw, NOT_STRINGS))
        return alt(k, typed("string", "enum", json_incref(v)));
    if (!strcmp(kw, "format"))
        return json_is_string(v) && !sc_format_asserts(c, json_string_value(v))
                   ? 0
                   : sc_fail(c, k->ptr, "'not' of 'format' is not supported");
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
    if (!strcmp(kw, "unevaluatedProperties") && json_is_true(v))
        return 0;
    return sc_fail(c, k->ptr, "'not' of '%s' is not supported", kw);
}

int sc_complement(sc_t *c, json_t *s, const char *ptr, json_t **out)
{
    *out = NULL;
    if (json_is_true(s) || json_is_false(s)) {
        *out = json_is_true(s) ? json_false() : json_true();
        return 0;
    }
    if (!json_is_object(s))
        return sc_fail(c, ptr, "a schema must be an object or a boolean");
    comp_t k = {.c = c, .alts = json_array(), .ptr = ptr};
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
