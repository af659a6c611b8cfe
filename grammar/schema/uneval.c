/*
 * uneval: unevaluatedProperties where the properties evaluated are
 * known statically.  After allOf and $ref are merged into a schema (each
 * branch's own unevaluatedProperties resolved first, in its own scope),
 * the names its properties, patternProperties and additionalProperties
 * evaluate are those of the merged keywords: with an additionalProperties
 * every name is evaluated and unevaluatedProperties says nothing; without
 * one, unevaluatedProperties is exactly additionalProperties (the names
 * no property and no pattern takes).  Where an applicator whose subschemas
 * may evaluate properties depends on the instance (anyOf, oneOf, if,
 * dependentSchemas, dynamic references), or branches with patterns were
 * kept apart (SIDES), the evaluated names are not known here: refused.
 */
#include <string.h>

#include "internal.h"

/* The keywords by which a subschema may evaluate properties (any property
 * keyword or reference). */
static const char *const property_kws[] = {"properties", "patternProperties",
                                           "additionalProperties", "unevaluatedProperties",
                                           "dependencies", SIDES, "$ref", "$dynamicRef",
                                           "$recursiveRef", NULL};

int sc_unevaluated_properties(sc_t *c, json_t *s, const char *ptr, json_t **out)
{
    static const char *const dyn[] = {"anyOf", "oneOf", "if", "then", "else",
                                      "dependentSchemas", "$dynamicRef", "$recursiveRef", NULL};
    json_t *u = json_object_get(s, "unevaluatedProperties");
    json_t *ap = json_object_get(s, "additionalProperties");
    *out = s;
    if (!u) {
        /* an additionalProperties that says nothing (true, {}) vanishes
         * in a merge: the mark keeps that it evaluated every name */
        if (!ap || json_object_get(s, EVALUATED) ||
            !(json_is_true(ap) || (json_is_object(ap) && !json_object_size(ap))))
            return 0;
        json_t *n = json_copy(s);
        if (sc_keep(c, n) || json_object_set(n, EVALUATED, json_true()))
            return sc_oom(c);
        *out = n;
        return 0;
    }
    if (c->draft <= 7) {
        /* no keyword before 2019-09: ignored, as unknown keywords are */
        json_t *n = json_copy(s);
        if (sc_keep(c, n))
            return -1;
        json_object_del(n, "unevaluatedProperties");
        *out = n;
        return 0;
    }
    if (json_object_get(s, "enum") || json_object_get(s, "const"))
        return 0; /* refused beside them, naming it */
    /* whether s's keywords evaluate every name: asked only here, where
     * most schemas (no unevaluatedProperties) have returned */
    int all = ap || json_object_get(s, EVALUATED);
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(s, SIDES), i, x) all |=
        json_object_get(x, "additionalProperties") != NULL;
    if (!json_is_object(u) && !json_is_boolean(u))
        return sc_fail(c, ptr, "'unevaluatedProperties' must be a schema");
    if (!json_is_true(u) && !all) {
        for (size_t k = 0; dyn[k]; k++) {
            json_t *v = json_object_get(s, dyn[k]);
            if (v && (dyn[k][0] == '$' || sc_subschemas_use(dyn[k], v, property_kws, 0)))
                return sc_fail(c, ptr, "'unevaluatedProperties' beside '%s' is not supported "
                               "(the properties it evaluates depend on the instance)", dyn[k]);
        }
        if (json_object_get(s, SIDES))
            return sc_fail(c, ptr, "'unevaluatedProperties' beside allOf branches with "
                           "'patternProperties' is not supported");
    }
    json_t *n = json_copy(s);
    if (sc_keep(c, n))
        return -1;
    json_object_del(n, "unevaluatedProperties");
    if (json_object_set(n, EVALUATED, json_true()))
        return sc_oom(c);
    /* also unevaluatedProperties: true, which evaluates every name for the
     * unevaluatedProperties of a schema this one is merged into (with
     * SIDES: a side of its own, which constrains no name) */
    json_t *sides = json_object_get(s, SIDES);
    if (!all && sides) {
        json_t *ns = json_copy(sides);
        if (sc_keep(c, ns) || json_array_append_new(ns, json_pack("{s:b}",
                                                                  "additionalProperties", 1)) ||
            json_object_set(n, SIDES, ns))
            return sc_oom(c);
    } else if (!all && json_object_set(n, "additionalProperties", u))
        return sc_oom(c);
    *out = n;
    return 0;
}

/* Whether an unevaluated keyword of s says something. */
static int has_unevaluated(json_t *s)
{
    json_t *p = json_object_get(s, "unevaluatedProperties"),
           *i = json_object_get(s, "unevaluatedItems");
    return (p && !json_is_true(p)) || (i && !json_is_true(i));
}

int sc_unevaluated_if(sc_t *c, json_t *s, const char *ptr, json_t **out)
{
    (void)ptr;
    *out = s;
    json_t *f = json_object_get(s, "if");
    if (c->draft < 2019 || !has_unevaluated(s) || json_object_get(s, "anyOf") ||
        json_object_get(s, "oneOf") || json_object_get(s, "enum") ||
        json_object_get(s, "const"))
        return 0;
    if (!f && !json_object_get(s, "then") && !json_object_get(s, "else"))
        return 0;
    /* (if and then) or (not if and else), each with the unevaluated
     * keywords, which then see the annotations of the branch taken: the
     * two are disjoint, so exactly one collects them */
    json_t *rest = json_copy(s), *ue = json_object();
    if (sc_keep(c, rest) || sc_keep(c, ue))
        return -1;
    static const char *const kws[] = {"if", "then", "else", "unevaluatedProperties",
                                      "unevaluatedItems", NULL};
    for (size_t i = 0; kws[i]; i++) {
        json_t *v = json_object_get(s, kws[i]);
        if (v && i >= 3 && json_object_set(ue, kws[i], v))
            return sc_oom(c);
        json_object_del(rest, kws[i]);
    }
    if (!f) { /* then and else alone say nothing */
        if (json_object_update(rest, ue))
            return sc_oom(c);
        *out = rest;
        return 0;
    }
    json_t *th = json_object_get(s, "then"), *el = json_object_get(s, "else");
    json_t *b1 = json_pack("{s:[O,O,O]}", "allOf", rest, f, th ? th : json_true());
    json_t *b2 = json_pack("{s:[O,{s:O},O]}", "allOf", rest, "not", f, el ? el : json_true());
    if (sc_keep(c, b1) || sc_keep(c, b2) || json_object_update(b1, ue) ||
        json_object_update(b2, ue))
        return sc_oom(c);
    json_t *n = json_pack("{s:[O,O]}", "anyOf", b1, b2);
    if (sc_keep(c, n))
        return -1;
    *out = n;
    return 0;
}
