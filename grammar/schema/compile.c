/*
 * compile: JSON Schema to grammar (schema.h; docs/json-schema.md).
 *
 * sc_value() turns a schema into a symbol, or reports that it allows nothing
 * (return 1): the false schema, a required property that cannot appear,
 * an empty enum.  The keywords that combine schemas are rewritten first:
 * allOf (and $ref beside other keywords) by merging keyword by keyword into
 * a new schema object, anyOf/oneOf by merging the keywords beside them into
 * each branch.  Then each allowed type contributes an alternative built
 * from the keywords that apply to it.  A $ref becomes a nonterminal named
 * by its target's pointer, made once, so recursive schemas are recursive
 * rules.
 */
#include "../schema.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lexer/deriv.h"
#include "../ecma.h"
#include "../numrange.h"
#include "internal.h"

static const gr_pos_t nopos = {0, 0};

__attribute__((format(printf, 3, 4))) int sc_fail(sc_t *c, const char *ptr,
                                                      const char *f, ...)
{
    char msg[TB_ERR_MAX];
    va_list ap;
    va_start(ap, f);
    vsnprintf(msg, sizeof msg, f, ap);
    va_end(ap);
    return tb_fail(c->err, "%s: %s", ptr, msg);
}

int sc_oom(sc_t *c) { return tb_fail(c->err, "out of memory"); }

/* ptr + "/" + key (with ~ and / escaped as JSON Pointer says); malloc'd. */
char *sc_ptr_join(const char *ptr, const char *key)
{
    tb_buf_t b = {0};
    int r = tb_buf_put(&b, ptr, strlen(ptr)) || tb_buf_putc(&b, '/');
    for (const char *k = key; *k && !r; k++)
        r = *k == '~' ? tb_buf_put(&b, "~0", 2) : *k == '/' ? tb_buf_put(&b, "~1", 2)
                                                           : tb_buf_putc(&b, (uint8_t)*k);
    if (r || tb_buf_putc(&b, 0)) {
        tb_buf_free(&b);
        return NULL;
    }
    return (char *)b.data;
}

char *sc_ptr_index(const char *ptr, const char *key, size_t i)
{
    char *s = NULL;
    if (asprintf(&s, "%s/%s/%zu", ptr, key, i) < 0)
        return NULL;
    return s;
}

/* ---- lexemes ------------------------------------------------------------ */

static int lexeme(sc_t *c, const char *regex, const char *name, gr_sym_t *out)
{
    return gr_cfg_lexeme(c->g, regex, name, 0, nopos, out, c->err);
}

/* A lexeme named "WHAT at POINTER" (for messages and dumps: the regex of
 * an enum or a pattern may be long); ptr NULL: named by its regex. */
static int named_lexeme(sc_t *c, const char *regex, const char *what, const char *ptr,
                        gr_sym_t *out)
{
    char *name = NULL;
    if (ptr && asprintf(&name, "%s at %s", what, ptr) < 0)
        return sc_oom(c);
    int r = lexeme(c, regex, name, out);
    free(name);
    return r;
}

/* The lexeme of a string (a property name, an enum or const string) in
 * every spelling JSON has for it (escapes, \u of either case, surrogate
 * pairs: a key "\u0066oo" is the property foo), named by the spelling
 * json.dumps writes, so that dumps read "\"name\"". */
static int name_lexeme(sc_t *c, const char *s, gr_sym_t *out)
{
    tb_buf_t re = {0}, q = {0}, name = {0};
    int r = gr_json_quote_regex(&re, (const uint8_t *)s, strlen(s)) || tb_buf_putc(&re, 0) ||
            tb_buf_putc(&name, '"') || gr_json_quote(&q, (const uint8_t *)s, strlen(s)) ||
            tb_buf_put(&name, q.data, q.len) || tb_buf_putc(&name, '"') || tb_buf_putc(&name, 0);
    r = r ? sc_oom(c) : lexeme(c, (const char *)re.data, (const char *)name.data, out);
    tb_buf_free(&re);
    tb_buf_free(&q);
    tb_buf_free(&name);
    return r;
}

int sc_lit(sc_t *c, const char *s, gr_sym_t *out)
{
    return gr_cfg_literal(c->g, (const uint8_t *)s, strlen(s), nopos, out, c->err);
}

int sc_rule(sc_t *c, gr_sym_t lhs, const gr_sym_t *rhs, size_t n)
{
    return gr_cfg_rule(c->g, lhs, rhs, n, nopos, c->err);
}

#define JSON_INT "-?(?:0|[1-9][0-9]*)"
#define JSON_NUM JSON_INT "(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
/* From draft 6 on an integer is any number without a fractional part:
 * json.dumps writes such floats as "3.0". */
#define JSON_INT6 JSON_INT "(?:\\.0+)?"

/* The rules of any JSON value, made once. */
int sc_any_value(sc_t *c, gr_sym_t *out)
{
    if (c->have_any) {
        *out = c->any;
        return 0;
    }
    gr_sym_t v, obj, arr, mem, mems, elems, s, n, k, lb, rb, ls, rs, co, cm;
    if (gr_cfg_nonterm(c->g, "json_value", 10, nopos, &v, c->err) ||
        gr_cfg_nonterm(c->g, "json_object", 11, nopos, &obj, c->err) ||
        gr_cfg_nonterm(c->g, "json_array", 10, nopos, &arr, c->err) ||
        gr_cfg_nonterm(c->g, "json_member", 11, nopos, &mem, c->err) ||
        gr_cfg_nonterm(c->g, "json_members", 12, nopos, &mems, c->err) ||
        gr_cfg_nonterm(c->g, "json_elements", 13, nopos, &elems, c->err) ||
        lexeme(c, GR_JSON_ANY_STRING, "STRING", &s) || lexeme(c, JSON_NUM, "NUMBER", &n) ||
        lexeme(c, "true|false|null", "true|false|null", &k) || sc_lit(c, "{", &lb) ||
        sc_lit(c, "}", &rb) || sc_lit(c, "[", &ls) || sc_lit(c, "]", &rs) || sc_lit(c, ":", &co) ||
        sc_lit(c, ",", &cm))
        return -1;
    c->any = v;
    c->any_str = s;
    c->have_any = 1;
    *out = v;
    return sc_rule(c, v, &obj, 1) || sc_rule(c, v, &arr, 1) || sc_rule(c, v, &s, 1) ||
           sc_rule(c, v, &n, 1) || sc_rule(c, v, &k, 1) ||
           sc_rule(c, obj, (gr_sym_t[]){lb, rb}, 2) || sc_rule(c, obj, (gr_sym_t[]){lb, mems, rb}, 3) ||
           sc_rule(c, mems, &mem, 1) || sc_rule(c, mems, (gr_sym_t[]){mems, cm, mem}, 3) ||
           sc_rule(c, mem, (gr_sym_t[]){s, co, v}, 3) || sc_rule(c, arr, (gr_sym_t[]){ls, rs}, 2) ||
           sc_rule(c, arr, (gr_sym_t[]){ls, elems, rs}, 3) || sc_rule(c, elems, &v, 1) ||
           sc_rule(c, elems, (gr_sym_t[]){elems, cm, v}, 3);
}

/* ---- $ref ----------------------------------------------------------------- */

static int unhex(char ch)
{
    return ch >= '0' && ch <= '9' ? ch - '0' : (ch | 0x20) >= 'a' && (ch | 0x20) <= 'f'
                                                   ? (ch | 0x20) - 'a' + 10 : -1;
}

/* The schema a $ref names, and its canonical pointer ("#/...", malloc'd;
 * NULL on failure, so that callers may free it either way). */
static int resolve(sc_t *c, const char *ref, const char *ptr, json_t **out, char **canon)
{
    const char *r = ref;
    *canon = NULL;
    const char *bad = sc_ref_bad(ref);
    if (bad)
        return sc_fail(c, ptr, "%s", bad);
    if (!*r)
        r = "#";
    if (r[0] != '#' || (r[1] && r[1] != '/'))
        return sc_fail(c, ptr, "$ref '%s' cannot be resolved", ref);
    json_t *at = c->root;
    const char *p = r + 1;
    tb_buf_t key = {0};
    while (*p == '/') {
        p++;
        key.len = 0;
        for (; *p && *p != '/'; p++) {
            char ch = *p;
            if (ch == '~' && (p[1] == '0' || p[1] == '1'))
                ch = *++p == '0' ? '~' : '/';
            else if (ch == '%' && unhex(p[1]) >= 0 && unhex(p[2]) >= 0)
                ch = (char)(unhex(p[1]) * 16 + unhex(p[2])), p += 2;
            if (tb_buf_putc(&key, (uint8_t)ch)) {
                tb_buf_free(&key);
                return sc_oom(c);
            }
        }
        if (tb_buf_putc(&key, 0)) {
            tb_buf_free(&key);
            return sc_oom(c);
        }
        const char *k = (const char *)key.data;
        char *end;
        if (json_is_object(at))
            at = json_object_get(at, k);
        else if (json_is_array(at) && *k >= '0' && *k <= '9' && (k[0] != '0' || !k[1])) {
            at = json_array_get(at, strtoul(k, &end, 10));
            if (*end)
                at = NULL;
        } else
            at = NULL;
        if (!at) {
            tb_buf_free(&key);
            return sc_fail(c, ptr, "$ref '%s' cannot be resolved", ref);
        }
    }
    tb_buf_free(&key);
    *out = at;
    *canon = strdup(r);
    return *canon ? 0 : sc_oom(c);
}


/* The nonterminal of a $ref's target (compiled on first use). */
static int ref_symbol(sc_t *c, const char *ref, const char *ptr, gr_sym_t *out)
{
    json_t *target;
    char *canon;
    if (resolve(c, ref, ptr, &target, &canon))
        return -1;
    int32_t i = tb_strmap_get(&c->ref_map, (const uint8_t *)canon, strlen(canon));
    if (i >= 0) {
        free(canon);
        *out = c->refs.data[i].sym;
        return c->refs.data[i].state == 2;
    }
    /* A chain of bare $refs that comes back to itself has no base case. */
    json_t *hop = target;
    for (int n = 0; json_is_object(hop) && json_object_size(hop) == 1 && n <= MAX_DEPTH; n++) {
        const char *next = json_string_value(json_object_get(hop, "$ref"));
        json_t *t2;
        char *c2;
        if (!next || resolve(c, next, canon, &t2, &c2))
            break;
        int loop = t2 == target || n == MAX_DEPTH;
        free(c2);
        if (loop) {
            int r = sc_fail(c, ptr, "$ref '%s' is a cycle of $refs with no base case", ref);
            free(canon);
            return r;
        }
        hop = t2;
    }
    ref_t rf = {0};
    if (gr_cfg_nonterm(c->g, canon, strlen(canon), nopos, &rf.sym, c->err) ||
        tb_vec_push(&c->ref_keys, canon) || tb_vec_push(&c->refs, rf) ||
        tb_strmap_put(&c->ref_map, (const uint8_t *)canon, strlen(canon),
                      (int32_t)(c->refs.len - 1)) < 0) {
        if (!c->ref_keys.len || c->ref_keys.data[c->ref_keys.len - 1] != canon)
            free(canon);
        return c->err->msg[0] ? -1 : sc_oom(c);
    }
    size_t idx = c->refs.len - 1;
    gr_sym_t x;
    int r = sc_value(c, target, canon, &x);
    if (r < 0)
        return -1;
    c->refs.data[idx].state = r == 1 ? 2 : 1;
    *out = c->refs.data[idx].sym;
    /* A target that allows nothing keeps a rule that derives nothing, so
     * that the grammar has no undefined rule (it is never reached). */
    return r == 1 ? sc_rule(c, *out, out, 1) ? -1 : 1 : sc_rule(c, *out, &x, 1);
}

/* ---- merging (allOf) ------------------------------------------------------ */

int sc_keep(sc_t *c, json_t *j)
{
    if (!j || tb_vec_push(&c->owned, j)) {
        json_decref(j);
        return sc_oom(c);
    }
    return 0;
}

/* Keywords that never constrain an instance: all but the assertions and
 * applicators below (JSON Schema ignores unknown keywords). */
static int is_annotation(const char *k)
{
    static const char *const a[] = {
        "type", "enum", "const", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
        "$ref", "$dynamicRef", "$recursiveRef", "properties", "required",
        "additionalProperties", "patternProperties", "minProperties", "maxProperties",
        "dependencies", "dependentRequired", "dependentSchemas", "propertyNames",
        "unevaluatedProperties", "unevaluatedItems", "items", "prefixItems", "additionalItems",
        "minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains",
        "minLength", "maxLength", "pattern", "format", "minimum", "maximum",
        "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "nullable",
        NOT_PATTERN, NOT_STRINGS, SIDES, FRACTION, "$tb:minContains", "$tb:maxContains",
        NULL};
    for (size_t i = 0; a[i]; i++)
        if (!strcmp(a[i], k))
            return 0;
    return 1;
}

/* is_annotation, and format where the options make it one. */
int sc_annotation(const sc_t *c, const char *k)
{
    return is_annotation(k) || (c->opts.format_annotation && !strcmp(k, "format"));
}

/* {"allOf": [a, b]}, new. */
json_t *sc_all_of(json_t *a, json_t *b)
{
    return json_pack("{s:[O,O]}", "allOf", a, b);
}

int sc_type_mask(json_t *t)
{
    if (!t)
        return T_ALL;
    int m = 0;
    for (size_t i = 0; i < (json_is_array(t) ? json_array_size(t) : 1); i++) {
        const char *s = json_string_value(json_is_array(t) ? json_array_get(t, i) : t);
        for (int k = 0; s && k < 7; k++)
            if (!strcmp(s, type_names[k]))
                m |= 1 << k;
    }
    return m;
}

json_t *sc_type_json(int m)
{
    json_t *a = json_array();
    for (int k = 0; a && k < 7; k++)
        if ((m & (1 << k)) && json_array_append_new(a, json_string(type_names[k])))
            return json_decref(a), NULL;
    return a;
}

/* The intersection of two type masks (integer is a number). */
int sc_type_and(int a, int b)
{
    int m = a & b;
    if ((a & T_NUM) && (b & T_INT))
        m |= T_INT;
    if ((b & T_NUM) && (a & T_INT))
        m |= T_INT;
    return m;
}

static double num(json_t *j) { return json_number_value(j); }

/* Whether two JSON values are equal as JSON Schema compares them: numbers
 * by value (1 is 1.0), objects whatever their members' order. */
int sc_same_value(json_t *a, json_t *b)
{
    size_t i;
    const char *k;
    json_t *x;
    if (json_is_integer(a) && json_is_integer(b))
        return json_integer_value(a) == json_integer_value(b);
    if (json_is_number(a) && json_is_number(b)) {
        json_t *r = json_is_real(a) ? a : b, *o = r == a ? b : a;
        double d = json_real_value(r);
        /* an integer beside a real: exact where the real is an int64 */
        if (json_is_integer(o))
            return d == floor(d) && fabs(d) < 9.2e18 && (json_int_t)d == json_integer_value(o);
        return d == json_real_value(o);
    }
    if (json_is_array(a) && json_is_array(b)) {
        if (json_array_size(a) != json_array_size(b))
            return 0;
        json_array_foreach(a, i, x) if (!sc_same_value(x, json_array_get(b, i))) return 0;
        return 1;
    }
    if (json_is_object(a) && json_is_object(b)) {
        if (json_object_size(a) != json_object_size(b))
            return 0;
        json_object_foreach(a, k, x) {
            json_t *y = json_object_get(b, k);
            if (!y || !sc_same_value(x, y))
                return 0;
        }
        return 1;
    }
    return json_equal(a, b);
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
        int r = resolve(c, json_string_value(ref), ptr, &t, &canon) ||
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

/* Whether the keywords beside a $ref say nothing its target does not (then
 * the $ref stays a shared, possibly recursive, rule). */
static int ref_siblings_redundant(sc_t *c, json_t *s, const char *ptr)
{
    json_t *t, *ft, *m;
    char *canon;
    const char *ref = json_string_value(json_object_get(s, "$ref"));
    if (!ref || resolve(c, ref, ptr, &t, &canon))
        return 0;
    int r = 0;
    if (json_is_object(t) && !json_object_get(t, "allOf") && !json_object_get(t, "$ref")) {
        json_t *sib = json_copy(s);
        ft = t;
        m = t;
        if (!sc_keep(c, sib)) {
            json_object_del(sib, "$ref");
            r = !sc_merge(c, &m, sib, ptr) && json_equal(m, ft);
        }
    }
    free(canon);
    c->err->msg[0] = 0; /* a merge that fails is no error here */
    return r;
}

/* ---- enum and const --------------------------------------------------------- */

/* Python's repr of a float (json.dumps writes floats so). */
static int py_float(double v, char *buf, size_t size)
{
    char e[40];
    int p;
    for (p = 1; p <= 17; p++) {
        snprintf(e, sizeof e, "%.*e", p - 1, v);
        if (strtod(e, NULL) == v)
            break;
    }
    long x = strtol(strchr(e, 'e') + 1, NULL, 10);
    if (x < -4 || x >= 16) {
        /* mantissa digits, then e+XX / e-XX as Python writes them */
        char *ep = strchr(e, 'e');
        *ep = 0;
        char *dot = strchr(e, '.');
        if (dot) {
            char *z = e + strlen(e);
            while (z > dot + 1 && z[-1] == '0')
                *--z = 0;
            if (z == dot + 1)
                *dot = 0;
        }
        return snprintf(buf, size, "%se%c%02ld", e, x < 0 ? '-' : '+', labs(x)) >= (int)size;
    }
    if (gr_num_decimal(v, buf, size - 2))
        return -1;
    if (!strchr(buf, '.'))
        strcat(buf, ".0");
    return 0;
}

/* The JSON text of a scalar as json.dumps writes it, into b. */
static int scalar_text(sc_t *c, json_t *v, tb_buf_t *b, const char *ptr)
{
    char tmp[512];
    if (json_is_string(v))
        return gr_json_quote(b, (const uint8_t *)json_string_value(v), json_string_length(v));
    if (json_is_integer(v))
        snprintf(tmp, sizeof tmp, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_real(v)) {
        if (c->big && fabs(json_real_value(v)) >= 9007199254740992.0)
            return sc_fail(c, ptr, "the integer %.17g is too large to be exact here",
                        json_real_value(v));
        if (c->big && json_real_value(v) == floor(json_real_value(v)))
            snprintf(tmp, sizeof tmp, "%.0f", json_real_value(v));
        else if (py_float(json_real_value(v), tmp, sizeof tmp))
            return sc_fail(c, ptr, "number out of range");
    } else
        snprintf(tmp, sizeof tmp, "%s", json_is_true(v) ? "true" : json_is_false(v) ? "false"
                                                                                  : "null");
    return tb_buf_put(b, tmp, strlen(tmp));
}

int sc_json_type_of(json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_NULL: return T_NULL;
    case JSON_TRUE: case JSON_FALSE: return T_BOOL;
    case JSON_INTEGER: return T_INT | T_NUM;
    case JSON_REAL: return json_real_value(v) == floor(json_real_value(v)) ? T_INT | T_NUM
                                                                           : T_NUM;
    case JSON_STRING: return T_STR;
    case JSON_ARRAY: return T_ARR;
    default: return T_OBJ;
    }
}

/* An array or object constant: the schema of the values equal to it, each
 * member or item a constant in turn, so that members come in any order
 * (objects of at most any_order members; larger ones in their order) and
 * numbers compare by value. */
static int composite_const(sc_t *c, json_t *v, const char *ptr, gr_sym_t *out)
{
    json_t *sub = json_array(), *names = json_array(), *props = json_object(), *e, *sch;
    const char *k;
    size_t i;
    if (sc_keep(c, sub) || sc_keep(c, names) || sc_keep(c, props))
        return -1;
    json_object_foreach(json_is_object(v) ? v : NULL, k, e) {
        if (json_object_set_new(props, k, json_pack("{s:O}", "const", e)) ||
            json_array_append_new(names, json_string(k)))
            return sc_oom(c);
    }
    json_array_foreach(json_is_array(v) ? v : NULL, i, e) {
        if (json_array_append_new(sub, json_pack("{s:O}", "const", e)))
            return sc_oom(c);
    }
    sch = json_is_object(v)
              ? json_pack("{s:s,s:O,s:O,s:b}", "type", "object", "properties", props,
                          "required", names, "additionalProperties", 0)
              : json_pack("{s:s,s:O,s:b,s:I}", "type", "array", "prefixItems", sub, "items", 0,
                          "minItems", (json_int_t)json_array_size(v));
    if (sc_keep(c, sch))
        return -1;
    return sc_value(c, sch, ptr, out);
}

/* The regex of the JSON number texts equal to the number v: its decimal
 * as an interval of one point ("0" also reads "0.0", "-0", "0.00"; no
 * exponent, as for every bounded number); integers only (draft 4's
 * integer type, which 3.0 is not) with integer set. */
static int number_equal_regex(sc_t *c, json_t *v, int integer, const char *ptr, tb_buf_t *re)
{
    char d[1024];
    if (json_is_integer(v))
        snprintf(d, sizeof d, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (c->big && fabs(json_real_value(v)) >= 9007199254740992.0)
        return sc_fail(c, ptr, "the integer %.17g is too large to be exact here", json_real_value(v));
    else if (gr_num_decimal(json_real_value(v), d, sizeof d))
        return sc_fail(c, ptr, "number %.17g out of range", json_real_value(v));
    if (tb_buf_put(re, "(?:", 3) || gr_num_range(re, d, 0, d, 0, integer, c->err) ||
        tb_buf_putc(re, ')'))
        return c->err->msg[0] ? tb_wrap(c->err, "%s", ptr) : sc_oom(c);
    return 0;
}

/* Keywords that apply to each type (checked against enum/const values and
 * refused there). */
static const char *const kw_str[] = {"minLength", "maxLength", "pattern", "format", NULL};
static const char *const kw_num[] = {"minimum", "maximum", "exclusiveMinimum",
                                     "exclusiveMaximum", "multipleOf", FRACTION, NULL};
static const char *const kw_arr[] = {"items", "prefixItems", "additionalItems", "minItems",
                                     "maxItems", "uniqueItems", "contains", "unevaluatedItems",
                                     NULL};
static const char *const kw_obj[] = {"properties", "required", "additionalProperties",
                                     "patternProperties", "minProperties", "maxProperties",
                                     "propertyNames", "dependencies", "unevaluatedProperties",
                                     SIDES, NULL};

static const char *applying(json_t *s, int types)
{
    const char *const *lists[] = {kw_str, kw_num, kw_arr, kw_obj};
    int masks[] = {T_STR, T_INT | T_NUM, T_ARR, T_OBJ};
    for (int l = 0; l < 4; l++)
        for (size_t i = 0; (types & masks[l]) && lists[l][i]; i++)
            if (json_object_get(s, lists[l][i]))
                return lists[l][i];
    return NULL;
}

static int string_value(sc_t *c, json_t *s, const char *ptr, gr_sym_t *out, tb_buf_t *regex_out);
/* What the string lexemes' regexes need of the lexer: gr_ecma_string
 * writes intersections as look-aheads. */
static const lex_dfa_opts_t string_opts = {.lookahead = 1};
static int number_value(sc_t *c, json_t *s, const char *ptr, int integer, gr_sym_t *out,
                        tb_buf_t *regex_out);

/* Whether a string or number value meets s's string or number keywords:
 * its JSON text in their lexeme (1 yes, 0 no, -1 error). */
static int value_passes(sc_t *c, json_t *s, const char *ptr, json_t *v)
{
    int str = json_is_string(v);
    if (!applying(s, str ? T_STR : json_is_number(v) ? T_NUM : 0))
        return 1;
    tb_buf_t re = {0}, txt = {0};
    int r = str ? string_value(c, s, ptr, NULL, &re) : number_value(c, s, ptr, 0, NULL, &re);
    if (r == 0 && scalar_text(c, v, &txt, ptr))
        r = -1;
    if (r == 0) {
        lex_dfa_t *d = lex_dfa_new((const char *)re.data, &string_opts, c->err);
        uint32_t st = d ? lex_dfa_feed(d, LEX_START, txt.data, txt.len) : LEX_DEAD;
        r = !d ? tb_wrap(c->err, "%s", ptr) : st != LEX_DEAD && lex_dfa_accepting(d, st);
        lex_dfa_free(d);
    } else if (r == 1) {
        r = 0; /* no string qualifies */
    }
    tb_buf_free(&re);
    tb_buf_free(&txt);
    return r;
}

int sc_string_regex(sc_t *c, json_t *s, const char *ptr, tb_buf_t *re)
{
    return string_value(c, s, ptr, NULL, re);
}

int sc_string_passes(sc_t *c, json_t *s, const char *ptr, json_t *v)
{
    return value_passes(c, s, ptr, v);
}

int sc_in_enum(json_t *en, json_t *v)
{
    size_t i;
    json_t *x;
    json_array_foreach(en, i, x) if (sc_same_value(x, v)) return 1;
    return 0;
}

static int enum_value(sc_t *c, json_t *s, const char *ptr, int types, gr_sym_t *out)
{
    json_t *cst = json_object_get(s, "const"), *en = json_object_get(s, "enum");
    if (en && !json_is_array(en))
        return sc_fail(c, ptr, "'enum' must be an array");
    json_t *vals = json_array();
    if (sc_keep(c, vals))
        return -1;
    size_t i;
    json_t *v;
    if (cst && (sc_json_type_of(cst) & types) && json_array_append(vals, cst))
        return sc_oom(c);
    json_array_foreach(en, i, v) {
        int in = !cst || sc_same_value(v, cst);
        if (in && (sc_json_type_of(v) & types) && json_array_append(vals, v))
            return sc_oom(c);
    }
    int vt = 0;
    json_array_foreach(vals, i, v) vt |= sc_json_type_of(v);
    const char *k = applying(s, vt & (T_ARR | T_OBJ));
    if (k)
        return sc_fail(c, ptr, "'%s' beside enum/const is not supported", k);
    /* string and number keywords filter the values */
    json_t *kept = json_array();
    if (sc_keep(c, kept))
        return -1;
    json_array_foreach(vals, i, v) {
        int in = value_passes(c, s, ptr, v);
        if (in < 0)
            return -1;
        if (in && json_array_append(kept, v))
            return sc_oom(c);
    }
    vals = kept;
    if (!json_array_size(vals))
        return 1;
    /* Scalars as one lexeme (one regex alternation), the rest as rules. */
    tb_buf_t re = {0}, txt = {0};
    gr_sym_t alt;
    int r = gr_cfg_fresh(c->g, "enum", &alt, c->err), nsc = 0;
    int integer = c->draft4 && !(types & T_NUM);
    json_array_foreach(vals, i, v) {
        gr_sym_t x;
        if (r)
            break;
        if (json_is_array(v) || json_is_object(v)) {
            r = composite_const(c, v, ptr, &x) || sc_rule(c, alt, &x, 1);
            continue;
        }
        txt.len = 0;
        r = (nsc++ && tb_buf_putc(&re, '|')) ||
            (json_is_number(v)   ? number_equal_regex(c, v, integer, ptr, &re)
             : json_is_string(v) ? gr_json_quote_regex(&re, (const uint8_t *)json_string_value(v),
                                                       json_string_length(v))
                                 : scalar_text(c, v, &txt, ptr) ||
                                       gr_regex_escape(&re, txt.data, txt.len));
    }
    gr_sym_t x;
    if (!r && nsc)
        r = tb_buf_putc(&re, 0) || named_lexeme(c, (const char *)re.data, "enum", ptr, &x) ||
            sc_rule(c, alt, &x, 1);
    tb_buf_free(&re);
    tb_buf_free(&txt);
    *out = alt;
    return r && !c->err->msg[0] ? sc_oom(c) : r;
}

/* ---- numbers and strings ---------------------------------------------------- */

/* A bound keyword as a decimal string into buf; 0 absent, 1 present. */
static int bound(sc_t *c, json_t *s, const char *k, const char *ptr, char *buf, size_t n)
{
    json_t *v = json_object_get(s, k);
    if (!v || json_is_boolean(v))
        return 0;
    if (!json_is_number(v))
        return sc_fail(c, ptr, "'%s' must be a number", k);
    if (json_is_integer(v)) {
        snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return 1;
    }
    double d = json_real_value(v);
    if (c->big && fabs(d) >= 9007199254740992.0)
        return sc_fail(c, ptr, "'%s': %.17g is too large to be exact here", k, d);
    if (gr_num_decimal(d, buf, n))
        return sc_fail(c, ptr, "'%s': %.17g is out of range", k, d);
    return 1;
}

/* n as 10^-places (1 -> 0, 0.01 -> 2), UINT32_MAX for other numbers. */
static unsigned decimal_places(double n)
{
    double p = 1;
    for (unsigned k = 0; k <= 12; k++, p /= 10)
        if (n == p || (k && fabs(n - p) < p * 1e-9))
            return k;
    return UINT32_MAX;
}

int sc_decimal_places(double n)
{
    unsigned k = decimal_places(n);
    return k == UINT32_MAX ? -1 : (int)k;
}

/* Compares decimals a and b (as numrange reads them). */
static int dec_less(const char *a, const char *b) { return strtod(a, NULL) < strtod(b, NULL); }

/* The lexeme of numbers under s's keywords (or, with regex_out, only its
 * regex, NUL-terminated, there). */
static int number_value(sc_t *c, json_t *s, const char *ptr, int integer, gr_sym_t *out,
                        tb_buf_t *regex_out)
{
    char lo[1024], hi[1024], xlo[1024], xhi[1024];
    json_t *mo = json_object_get(s, "multipleOf");
    unsigned places = 0; /* multipleOf 10^-places */
    tb_buf_t mre = {0};  /* other multipleOf: look-aheads (mult.c) */
    int general = 0;
    if (mo && !(json_is_number(mo) && (places = decimal_places(num(mo))) != UINT32_MAX)) {
        if (sc_multiple_of(c, mo, ptr, integer, &mre))
            return -1;
        general = mre.len > 0, places = 0;
        if (json_object_get(s, FRACTION)) {
            tb_buf_free(&mre);
            return sc_fail(c, ptr, "'multipleOf' beside the 'not' of another is not supported");
        }
    }
    if (mo && !places && !general && decimal_places(num(mo)) != UINT32_MAX)
        integer = 1;
    if (integer && !c->draft4)
        integer = 2;
    int hl = bound(c, s, "minimum", ptr, lo, sizeof lo),
        hh = bound(c, s, "maximum", ptr, hi, sizeof hi),
        hxl = bound(c, s, "exclusiveMinimum", ptr, xlo, sizeof xlo),
        hxh = bound(c, s, "exclusiveMaximum", ptr, xhi, sizeof xhi);
    if (hl < 0 || hh < 0 || hxl < 0 || hxh < 0)
        return -1;
    /* draft 4: exclusiveMinimum: true makes minimum strict */
    int sl = hl && json_is_true(json_object_get(s, "exclusiveMinimum"));
    int sh = hh && json_is_true(json_object_get(s, "exclusiveMaximum"));
    if (hxl && (!hl || !dec_less(xlo, lo)))
        strcpy(lo, xlo), hl = 1, sl = 1;
    if (hxh && (!hh || !dec_less(hi, xhi)))
        strcpy(hi, xhi), hh = 1, sh = 1;
    tb_buf_t re = {0};
    const char *x = integer == 2 ? JSON_INT6 : integer ? JSON_INT : JSON_NUM;
    int r = 0;
    if (places && !integer && (hl || hh) && !(hl && !hh && !strcmp(lo, "0")) &&
        !(hh && !hl && !strcmp(hi, "0"))) {
        /* 0.01... beside other bounds: the multiples as look-aheads */
        if (json_object_get(s, FRACTION))
            return sc_fail(c, ptr, "'multipleOf' beside the 'not' of another is not supported");
        if (sc_multiple_of(c, mo, ptr, 0, &mre))
            return -1;
        general = 1, places = 0;
    }
    if (places && !integer) {
        /* multiples of 0.01...: no bound, or only 0 */
        int lz = hl && !hh && !strcmp(lo, "0"), hz = hh && !hl && !strcmp(hi, "0");
        if (gr_num_decimals(&re, places, lz, hz, lz ? sl : sh, c->err))
            r = -1;
    } else if (!hl && !hh)
        r = tb_buf_put(&re, x, strlen(x)) ? sc_oom(c) : 0;
    else if (gr_num_range(&re, hl ? lo : NULL, sl, hh ? hi : NULL, sh, integer, c->err)) {
        /* an empty interval (also of a merge, or a not's) allows nothing */
        if (strstr(c->err->msg, "is empty")) {
            c->err->msg[0] = 0;
            tb_buf_free(&re);
            tb_buf_free(&mre);
            return 1;
        }
        r = tb_wrap(c->err, "%s", ptr);
    }
    json_t *fr = json_object_get(s, FRACTION);
    if (!r && fr) {
        /* a non-zero digit after the first k of the fraction (no integer
         * has one), within the bounds: a look-ahead */
        if (integer) {
            tb_buf_free(&re);
            return 1;
        }
        char f[160];
        snprintf(f, sizeof f, "(?=-?(?:0|[1-9][0-9]*)\\.[0-9]{%d}[0-9]*[1-9][0-9]*$)(?:",
                 (int)json_integer_value(fr));
        tb_buf_t both = {0};
        r = tb_buf_put(&both, f, strlen(f)) || tb_buf_put(&both, re.data, re.len) ||
                    tb_buf_putc(&both, ')')
                ? sc_oom(c) : 0;
        tb_buf_free(&re);
        re = both;
    }
    if (!r && general) {
        /* the multiples as look-aheads before the rest */
        r = tb_buf_put(&mre, "(?:", 3) || tb_buf_put(&mre, re.data, re.len) ||
                    tb_buf_putc(&mre, ')')
                ? sc_oom(c) : 0;
        tb_buf_free(&re);
        re = mre;
        mre = (tb_buf_t){0};
    }
    tb_buf_free(&mre);
    if (!r && tb_buf_putc(&re, 0))
        r = sc_oom(c);
    if (!r && regex_out) {
        *regex_out = re;
        return 0;
    }
    if (!r)
        r = hl || hh || fr || general ? named_lexeme(c, (const char *)re.data, "number", ptr, out)
                     : lexeme(c, (const char *)re.data, integer ? "INTEGER" : "NUMBER", out);
    tb_buf_free(&re);
    return r;
}

/* A non-negative integer keyword (absent: dflt). */
static int count(sc_t *c, json_t *s, const char *k, const char *ptr, uint64_t dflt,
                 uint64_t *out)
{
    json_t *v = json_object_get(s, k);
    *out = dflt;
    if (!v)
        return 0;
    double d = num(v);
    if (!json_is_number(v) || d < 0 || d != floor(d))
        return sc_fail(c, ptr, "'%s' must be a non-negative integer", k);
    *out = d > 1e15 ? (uint64_t)1e15 : (uint64_t)d;
    return 0;
}

/*
 * Whether JSON Schema (draft 4 to 2020-12) defines the format.  Those the
 * ECMA module has no regex for are refused; any other name is a custom
 * format, which the specifications make an annotation: "An implementation
 * MUST NOT fail validation or cease processing due to an unknown format
 * attribute" (draft 2019-09, validation 7.2.3; draft 4 to 7 likewise leave
 * custom formats to agreement between parties), so it constrains nothing.
 */
static int spec_format(const char *name)
{
    static const char *const defined[] = {
        "date-time", "date", "time", "duration", "email", "idn-email", "hostname",
        "idn-hostname", "ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference",
        "uuid", "uri-template", "json-pointer", "relative-json-pointer", "regex",
    };
    for (size_t i = 0; i < sizeof defined / sizeof *defined; i++)
        if (!strcmp(name, defined[i]))
            return 1;
    return 0;
}

int sc_format_asserts(const sc_t *c, const char *name)
{
    return !c->opts.format_annotation && (gr_ecma_format(name) || spec_format(name));
}

/* The regex of the names of class 0 (matching no pattern). */
static int class_none(void *ctx, uint64_t mask, const char *regex)
{
    tb_buf_t *b = ctx;
    if (mask)
        return 0;
    return tb_buf_put(b, regex, strlen(regex) + 1);
}

/* The regex (NUL-terminated, in re) of the strings that do not match the
 * pattern np (np NULL: that are none of the strings ns); 1 when no string
 * qualifies. */
static int not_string(sc_t *c, json_t *np, json_t *ns, const char *ptr, tb_buf_t *re)
{
    int r;
    if (np) {
        const char *p = json_string_value(np);
        r = gr_ecma_key_classes(&p, 1, NULL, 0, class_none, re, c->err);
    } else {
        size_t n = json_array_size(ns), i;
        const char **names = malloc((n + 1) * sizeof *names);
        json_t *v;
        r = names ? 0 : sc_oom(c);
        json_array_foreach(ns, i, v) if (names) names[i] = json_string_value(v);
        r = r || gr_ecma_string_except(re, names, n, c->err) || tb_buf_putc(re, 0);
        free(names);
    }
    if (r)
        return tb_wrap(c->err, "%s/not", ptr);
    return re->len ? 0 : 1; /* every string matches */
}

/* The lexeme of strings under s's keywords (or, with regex_out, only its
 * regex there); 1 when no string qualifies. */
static int string_value(sc_t *c, json_t *s, const char *ptr, gr_sym_t *out, tb_buf_t *regex_out)
{
    uint64_t lo, hi;
    json_t *pat = json_object_get(s, "pattern"), *fmt = json_object_get(s, "format");
    if (count(c, s, "minLength", ptr, 0, &lo) || count(c, s, "maxLength", ptr, GR_NO_MAX, &hi))
        return -1;
    if ((pat && !json_is_string(pat)) || (fmt && !json_is_string(fmt)))
        return sc_fail(c, ptr, "'pattern' and 'format' must be strings");
    if (lo > GR_MAX_LENGTH || (hi != GR_NO_MAX && hi > GR_MAX_LENGTH))
        return sc_fail(c, ptr, "'%s' %llu is above the limit of %u",
                    lo > GR_MAX_LENGTH ? "minLength" : "maxLength",
                    (unsigned long long)(lo > GR_MAX_LENGTH ? lo : hi), GR_MAX_LENGTH);
    if (hi < lo)
        return sc_fail(c, ptr, "minLength %llu is above maxLength %llu", (unsigned long long)lo,
                    (unsigned long long)hi);
    const char *ps = json_string_value(pat), *fs = json_string_value(fmt);
    if (c->opts.format_annotation)
        fs = NULL; /* see gr_schema_opts_t */
    if (fs && !gr_ecma_format(fs)) {
        if (spec_format(fs))
            return sc_fail(c, ptr, "format '%s' is not supported", fs);
        fs = NULL; /* an annotation, see spec_format */
    }
    json_t *np = json_object_get(s, NOT_PATTERN), *ns = json_object_get(s, NOT_STRINGS);
    tb_buf_t re = {0};
    int r = gr_ecma_string(&re, ps, fs, (uint32_t)lo, (uint32_t)hi, c->err);
    if (r < 0)
        tb_wrap(c->err, "%s", ptr);
    /* not pattern, not these strings: as look-aheads before the rest (or
     * alone, where nothing else constrains the string) */
    int plain = !ps && !fs && !lo && hi == GR_NO_MAX;
    for (int k = 0; k < 2 && r == 0; k++) {
        json_t *x = k ? ns : np;
        tb_buf_t nr = {0}, both = {0};
        if (!x)
            continue;
        r = not_string(c, k ? NULL : x, k ? x : NULL, ptr, &nr);
        if (r == 0 && plain) {
            tb_buf_free(&re);
            re = nr;
            re.len--; /* its NUL */
            plain = 0;
            continue;
        }
        if (r == 0 && (tb_buf_put(&both, "(?=(?:", 6) || tb_buf_put(&both, nr.data, nr.len - 1) ||
                       tb_buf_put(&both, ")$)", 3) || tb_buf_put(&both, re.data, re.len)))
            r = sc_oom(c);
        tb_buf_free(&nr);
        tb_buf_free(&re);
        re = both;
        plain = 0;
    }
    if (r < 0)
        r = c->err->msg[0] ? -1 : sc_oom(c);
    else if (r == 1)
        ; /* no string qualifies */
    else if (tb_buf_putc(&re, 0))
        r = sc_oom(c);
    else if (regex_out) {
        *regex_out = re;
        return 0;
    } else
        r = ps || fs || lo || hi != GR_NO_MAX || np || ns
                ? named_lexeme(c, (const char *)re.data, "string", ptr, out)
                : lexeme(c, (const char *)re.data, "STRING", out);
    tb_buf_free(&re);
    return r;
}

/* ---- arrays ------------------------------------------------------------------ */

static int array_value(sc_t *c, json_t *s, const char *ptr, gr_sym_t *out)
{
    uint64_t mn, mx;
    if (count(c, s, "minItems", ptr, 0, &mn) || count(c, s, "maxItems", ptr, GR_NO_MAX, &mx))
        return -1;
    if (mn > mx)
        return sc_fail(c, ptr, "minItems %llu is above maxItems %llu", (unsigned long long)mn,
                    (unsigned long long)mx);
    if (mn > MAX_ITEMS || (mx != GR_NO_MAX && mx > MAX_ITEMS))
        return sc_fail(c, ptr, "'%s' is above the limit of %u", mn > MAX_ITEMS ? "minItems"
                    : "maxItems", MAX_ITEMS);
    json_t *ui = json_object_get(s, "uniqueItems");
    if (json_is_true(ui) && mx > 1)
        return sc_fail(c, ptr, "'uniqueItems' is not supported");
    if (json_object_get(s, "contains"))
        return sc_array_contains(c, s, ptr, mn, mx, out);
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
    r = sc_lit(c, "[", &lb) || sc_lit(c, "]", &rb) || sc_lit(c, ",", &comma);
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

/* ---- objects ------------------------------------------------------------------ */

typedef struct {
    const char *name;
    json_t *schema;
    char *ptr;
    int required;
    gr_sym_t member;
} prop_t;

/* Whether the pattern (a search) matches the property name. */
static int pattern_matches(sc_t *c, const char *pattern, const char *name, const char *ptr)
{
    tb_buf_t re = {0}, q = {0};
    int r = gr_ecma_string(&re, pattern, NULL, 0, GR_NO_MAX, c->err);
    if (r < 0) {
        tb_wrap(c->err, "%s", ptr);
    } else if (r == 1) {
        r = 0; /* the pattern matches no name */
    } else if (tb_buf_putc(&re, 0) || gr_json_quote(&q, (const uint8_t *)name, strlen(name))) {
        r = sc_oom(c);
    } else {
        lex_dfa_t *d = lex_dfa_new((const char *)re.data, &string_opts, c->err);
        if (!d) {
            r = tb_wrap(c->err, "%s", ptr);
        } else {
            uint32_t st = lex_dfa_feed(d, LEX_START, q.data, q.len);
            r = st != LEX_DEAD && lex_dfa_accepting(d, st);
            lex_dfa_free(d);
        }
    }
    tb_buf_free(&re);
    tb_buf_free(&q);
    return r;
}

/* The object keywords of a schema and of the allOf branches merged beside
 * it with patternProperties (SIDES, see merge): each side's
 * additionalProperties applies to the names its own properties and
 * patternProperties do not cover.  The patterns of every side are numbered
 * as gr_ecma_key_classes's bits. */
#define MAX_SIDES 64
#define MAX_PATTERNS 62
typedef struct {
    size_t n, npat;
    json_t *props[MAX_SIDES], *addl[MAX_SIDES];
    const char *pat[MAX_PATTERNS];
    json_t *pat_schema[MAX_PATTERNS];
    size_t pat_side[MAX_PATTERNS];
} sides_t;

static int add_side(sc_t *c, sides_t *sd, json_t *s, const char *ptr)
{
    json_t *props = json_object_get(s, "properties"), *pp = json_object_get(s, "patternProperties"),
           *addl = json_object_get(s, "additionalProperties"), *v;
    const char *k;
    if ((props && !json_is_object(props)) || (pp && !json_is_object(pp)))
        return sc_fail(c, ptr, "'properties' and 'patternProperties' must be objects");
    if (addl && !json_is_boolean(addl) && !json_is_object(addl))
        return sc_fail(c, ptr, "'additionalProperties' must be a schema");
    if (sd->n == MAX_SIDES || sd->npat + json_object_size(pp) > MAX_PATTERNS)
        return sc_fail(c, ptr, "more than %d patternProperties or %d merged objects are not "
                    "supported", MAX_PATTERNS, MAX_SIDES);
    json_object_foreach(pp, k, v) {
        sd->pat[sd->npat] = k;
        sd->pat_schema[sd->npat] = v;
        sd->pat_side[sd->npat++] = sd->n;
    }
    sd->props[sd->n] = props;
    sd->addl[sd->n++] = addl;
    return 0;
}

static int sides_init(sc_t *c, json_t *s, const char *ptr, sides_t *sd)
{
    json_t *more = json_object_get(s, SIDES), *x;
    size_t i;
    sd->n = sd->npat = 0;
    if (add_side(c, sd, s, ptr))
        return -1;
    json_array_foreach(more, i, x) {
        if (add_side(c, sd, x, ptr))
            return -1;
    }
    return 0;
}

/* The schema of a name (NULL: a name no side defines) matching the
 * patterns in mask: on each side its property and its patterns, or where
 * it has neither its additionalProperties (absent: true); false when a
 * side allows nothing there. */
static json_t *name_schema(sc_t *c, const sides_t *sd, const char *name, uint64_t mask)
{
    json_t *list = json_array(), *one = json_true();
    if (sc_keep(c, list))
        return NULL;
    for (size_t i = 0; i < sd->n; i++) {
        size_t before = json_array_size(list);
        json_t *own = name ? json_object_get(sd->props[i], name) : NULL;
        if (own && json_array_append(list, own))
            return sc_oom(c), NULL;
        for (size_t b = 0; b < sd->npat; b++)
            if (sd->pat_side[b] == i && (mask >> b & 1) &&
                json_array_append(list, sd->pat_schema[b]))
                return sc_oom(c), NULL;
        if (json_array_size(list) == before && sd->addl[i] &&
            json_array_append(list, sd->addl[i]))
            return sc_oom(c), NULL;
    }
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v) {
        if (json_is_false(v))
            return json_false();
    }
    if (json_array_size(list) == 1)
        one = json_array_get(list, 0);
    if (json_array_size(list) <= 1)
        return one;
    json_t *all = json_pack("{s:O}", "allOf", list);
    return sc_keep(c, all) ? NULL : all;
}

/* A defined (or required) name's schema: name_schema with the patterns it
 * matches. */
static int pattern_schemas(sc_t *c, const sides_t *sd, const char *ptr, prop_t *p)
{
    uint64_t mask = 0;
    for (size_t b = 0; b < sd->npat; b++) {
        int m = pattern_matches(c, sd->pat[b], p->name, ptr);
        if (m < 0)
            return -1;
        mask |= (uint64_t)m << b;
    }
    p->schema = name_schema(c, sd, p->name, mask);
    return p->schema ? 0 : -1;
}

/* The schema of patternProperties when one of them matches every name and
 * all have the same schema (then it applies to every property, and
 * additionalProperties to none); NULL otherwise. */
static int pattern_every(sc_t *c, json_t *pp, const char *ptr, json_t **every)
{
    const char *k;
    json_t *v, *first = NULL;
    int all = 0;
    *every = NULL;
    json_object_foreach(pp, k, v) {
        if (first && !json_equal(first, v))
            return 0;
        first = v;
        int m = gr_ecma_matches_all(k, c->err);
        if (m < 0)
            return tb_wrap(c->err, "%s/patternProperties", ptr);
        all |= m;
    }
    *every = all ? first : NULL;
    return 0;
}

/* The member symbol "name": value. */
static int member(sc_t *c, gr_sym_t key, gr_sym_t v, gr_sym_t *out)
{
    gr_sym_t colon;
    return sc_lit(c, ":", &colon) || gr_cfg_fresh(c->g, "member", out, c->err) ||
           sc_rule(c, *out, (gr_sym_t[]){key, colon, v}, 3);
}

typedef struct {
    sc_t *c;
    const sides_t *sd;
    json_t *every; /* the schema of every name (pattern_every), or NULL */
    const sc_names_t *names; /* propertyNames */
    const char *ptr;
    TB_VEC(gr_sym_t) members;
} classes_t;

/* One class of names: a member "name": value for it (none when its
 * schema allows nothing). */
static int add_class(void *ctx, uint64_t mask, const char *regex)
{
    classes_t *cl = ctx;
    sc_t *c = cl->c;
    json_t *sch = cl->every ? cl->every : name_schema(c, cl->sd, NULL, mask);
    char *p = sc_ptr_join(cl->ptr, mask ? "patternProperties" : "additionalProperties");
    gr_sym_t key, val, m;
    int r = !sch || !p ? (c->err->msg[0] ? -1 : sc_oom(c)) : sc_value(c, sch, p, &val);
    free(p);
    if (r)
        return r == 1 ? 0 : -1;
    if (cl->names->none)
        return 0; /* propertyNames allows no name */
    tb_buf_t re = {0};
    r = sc_names_restrict(c, cl->names, regex, &re) ||
                named_lexeme(c, (const char *)re.data, mask ? "pattern name" : "other name",
                             cl->ptr, &key) ||
                member(c, key, val, &m) || tb_vec_push(&cl->members, m)
            ? -1
            : 0;
    tb_buf_free(&re);
    return r;
}

/* The additional members: names other than the defined ones, split by the
 * patterns they match, each with its value; 1 when there are none. */
static int extra_member(sc_t *c, const sides_t *sd, const char *ptr, prop_t *pr, size_t n,
                        json_t *every, const sc_names_t *pn, gr_sym_t *out)
{
    const char **names = malloc((n + 1) * sizeof *names);
    classes_t cl = {.c = c, .sd = sd, .every = every, .ptr = ptr, .names = pn};
    int r = names ? 0 : sc_oom(c);
    for (size_t j = 0; names && j < n; j++)
        names[j] = pr[j].name;
    json_t *none = every ? every : name_schema(c, sd, NULL, 0);
    if (!r && !none)
        r = -1;
    if (!r && sd->npat && !every) {
        r = gr_ecma_key_classes(sd->pat, sd->npat, names, n, add_class, &cl, c->err);
        if (r)
            tb_wrap(c->err, "%s/patternProperties", ptr);
    } else if (!r && !json_is_false(none)) {
        tb_buf_t re = {0};
        r = gr_ecma_string_except(&re, names, n, c->err) || tb_buf_putc(&re, 0) ||
            add_class(&cl, 0, (const char *)re.data);
        tb_buf_free(&re);
    }
    free(names);
    if (!r && cl.members.len == 1)
        *out = cl.members.data[0];
    else if (!r && cl.members.len > 1)
        r = gr_cfg_fresh(c->g, "extra", out, c->err);
    for (size_t j = 0; !r && cl.members.len > 1 && j < cl.members.len; j++)
        r = sc_rule(c, *out, &cl.members.data[j], 1);
    size_t got = cl.members.len;
    free(cl.members.data);
    return r ? -1 : got == 0;
}

/* The properties in order, with the additional members anywhere between
 * them: T_i -> sep A T_i | U_i ; U_i -> sep M_i T_{i+1} | U_{i+1} (M_i
 * optional) ; U_n -> empty.  sep is "," except before the first member.
 * Additional members come before the next present property only, which
 * keeps the grammar unambiguous. */
static int members(sc_t *c, prop_t *pr, size_t n, int have_a, gr_sym_t a, int need_one,
                   gr_sym_t *out)
{
    gr_sym_t comma, t_next[2] = {0, 0}, u_next[2] = {0, 0};
    int u_ok[2] = {1, 1}; /* U_{i+1} exists (not when it would derive nothing) */
    if (sc_lit(c, ",", &comma))
        return -1;
    for (size_t i = n + 1; i-- > 0;) {
        gr_sym_t t[2], u[2];
        int ok[2] = {1, 1};
        for (int f = 0; f < 2; f++) { /* f: no member before (no comma) */
            /* minProperties 1: the end is reached only after a member */
            ok[f] = !(i == n && f == 1 && need_one);
            if (ok[f] && gr_cfg_fresh(c->g, "props", &u[f], c->err))
                return -1;
            gr_sym_t seq[3] = {comma, i < n ? pr[i].member : 0, t_next[0]};
            if (ok[f] && (i == n ? sc_rule(c, u[f], NULL, 0)
                                 : sc_rule(c, u[f], seq + f, 3 - (size_t)f) ||
                                       (!pr[i].required && u_ok[f] &&
                                        sc_rule(c, u[f], &u_next[f], 1))))
                return -1;
            t[f] = u[f];
            if (!have_a)
                continue;
            if (gr_cfg_fresh(c->g, "props", &t[f], c->err) ||
                (ok[f] && sc_rule(c, t[f], &u[f], 1)))
                return -1;
            gr_sym_t extra[3] = {comma, a, t[0]}; /* after a member, commas follow */
            if (sc_rule(c, t[f], extra + f, 3 - (size_t)f))
                return -1;
        }
        memcpy(t_next, t, sizeof t);
        memcpy(u_next, u, sizeof u);
        u_ok[0] = ok[0];
        u_ok[1] = ok[1];
    }
    *out = t_next[1];
    return !u_ok[1] && !have_a; /* nothing at all: no member could come first */
}

/* The members in any order, each defined property at most once: a
 * nonterminal per set of properties present so far and number of
 * additional members read (2^n * (cap + 1) of them, hence opts.any_order;
 * the count is what minProperties and maxProperties need: up to maxp, or
 * saturating at minp), the end allowed once every required one is in and
 * there are at least minp members, additional members anywhere while
 * there are fewer than maxp.  first is the start, before any member (no
 * comma yet); 1 when no object qualifies. */
static int members_any_order(sc_t *c, prop_t *pr, size_t n, int have_a, gr_sym_t a,
                             uint64_t minp, uint64_t maxp, gr_sym_t *out)
{
    size_t states = (size_t)1 << n;
    size_t cap = !have_a ? 0 : maxp != GR_NO_MAX ? (size_t)maxp : (size_t)minp;
    uint32_t req = 0;
    for (size_t i = 0; i < n; i++)
        req |= (uint32_t)pr[i].required << i;
    gr_sym_t comma, first, *t = malloc(states * (cap + 1) * sizeof *t);
    int r = !t ? sc_oom(c) : sc_lit(c, ",", &comma) || gr_cfg_fresh(c->g, "props", &first, c->err);
    for (size_t m = 0; !r && m < states * (cap + 1); m++)
        r = gr_cfg_fresh(c->g, "props", &t[m], c->err);
#define T(m, x) t[(m) * (cap + 1) + (x)]
    for (size_t m = 0; !r && m < states; m++) {
        uint64_t pc = (uint64_t)__builtin_popcountll((unsigned long long)m);
        for (size_t x = 0; !r && x <= cap; x++) {
            uint64_t total = pc + x; /* x saturates at cap when maxp is unbounded */
            int room = maxp == GR_NO_MAX || total + 1 <= maxp;
            for (size_t p = 0; !r && room && p < n; p++)
                if (!(m >> p & 1))
                    r = sc_rule(c, T(m, x), (gr_sym_t[]){comma, pr[p].member,
                                                         T(m | (size_t)1 << p, x)}, 3) ||
                        (m == 0 && x == 0 &&
                         sc_rule(c, first, (gr_sym_t[]){pr[p].member, T((size_t)1 << p, 0)}, 2));
            size_t nx = x < cap ? x + 1 : cap;
            if (!r && have_a && room)
                r = sc_rule(c, T(m, x), (gr_sym_t[]){comma, a, T(m, nx)}, 3) ||
                    (m == 0 && x == 0 && sc_rule(c, first, (gr_sym_t[]){a, T(0, nx)}, 2));
            if (!r && (m & req) == req && total >= minp)
                r = sc_rule(c, T(m, x), NULL, 0) ||
                    (m == 0 && x == 0 && sc_rule(c, first, NULL, 0));
        }
    }
#undef T
    free(t);
    *out = first;
    return r ? -1 : c->g->nt.data[first].nrules == 0;
}

static int object_value(sc_t *c, json_t *s, const char *ptr, gr_sym_t *out)
{
    static const char *const refused[] = {"unevaluatedProperties", NULL};
    for (size_t i = 0; refused[i]; i++)
        if (json_object_get(s, refused[i]) &&
            !(!strcmp(refused[i], "unevaluatedProperties") &&
              json_is_true(json_object_get(s, refused[i]))))
            return sc_fail(c, ptr, "'%s' is not supported", refused[i]);
    json_t *req = json_object_get(s, "required"), *pp = json_object_get(s, "patternProperties");
    if (req && !json_is_array(req))
        return sc_fail(c, ptr, "'required' must be an array");
    sides_t *sd = malloc(sizeof *sd);
    if (!sd)
        return sc_oom(c);
    if (sides_init(c, s, ptr, sd))
        return free(sd), -1;
    size_t n = 0, nreq = json_array_size(req);
    for (size_t i = 0; i < sd->n; i++)
        n += json_object_size(sd->props[i]);
    prop_t *pr = calloc(n + nreq + 1, sizeof *pr);
    if (!pr)
        return free(sd), sc_oom(c);
    int r = 0;
    const char *k;
    json_t *v;
    size_t np = 0;
    /* the names any side defines, once each (their schemas: pattern_schemas) */
    for (size_t i = 0; i < sd->n; i++) {
        json_object_foreach(sd->props[i], k, v) {
            size_t j = 0;
            while (j < np && strcmp(pr[j].name, k))
                j++;
            if (j == np)
                pr[np++] = (prop_t){.name = k};
        }
    }
    /* Required names that properties does not define: additional members
     * that must be there. */
    for (size_t i = 0; i < nreq && !r; i++) {
        const char *name = json_string_value(json_array_get(req, i));
        if (!name) {
            r = sc_fail(c, ptr, "'required' must hold strings");
            break;
        }
        size_t j = 0;
        while (j < np && strcmp(pr[j].name, name))
            j++;
        if (j == np) {
            /* its schema: additionalProperties', or the patterns' below */
            pr[np++] = (prop_t){.name = name, .schema = NULL};
        }
        pr[j].required = 1;
    }
    uint64_t minp, maxp;
    size_t nr = 0;
    for (size_t j = 0; j < np; j++)
        nr += (size_t)pr[j].required;
    if (!r && (count(c, s, "minProperties", ptr, 0, &minp) ||
               count(c, s, "maxProperties", ptr, GR_NO_MAX, &maxp)))
        r = -1;
    /* members_any_order counts members: any minProperties and
     * maxProperties there, up to 20,000 states */
    int counted = 0;
    json_t *every = NULL;
    if (!r && sd->n == 1 && pp && json_object_size(pp) && pattern_every(c, pp, ptr, &every))
        r = -1;
    for (size_t j = 0; j < np && !r; j++)
        r = pattern_schemas(c, sd, ptr, &pr[j]);
    sc_names_t pn = {0};
    if (!r && sc_names_init(c, s, ptr, &pn))
        r = -1;
    /* Members, dropping optional properties that allow nothing (or whose
     * name propertyNames rejects). */
    size_t kept = 0;
    for (size_t j = 0; j < np && !r; j++) {
        gr_sym_t key, val;
        int named = sc_names_allow(c, &pn, pr[j].name);
        if (named < 0) {
            r = -1;
            break;
        }
        char *p = sc_ptr_join(ptr, "properties"), *pj = p ? sc_ptr_join(p, pr[j].name) : NULL;
        free(p);
        r = !pj ? sc_oom(c) : !named ? 1 : sc_value(c, pr[j].schema, pj, &val);
        free(pj);
        if (r == 1 && !pr[j].required) {
            r = 0;
            continue;
        }
        if (!r)
            r = name_lexeme(c, pr[j].name, &key) || member(c, key, val, &pr[j].member);
        /* kept first; the dropped stay behind them, still names to exclude */
        prop_t keep_p = pr[j];
        pr[j] = pr[kept];
        pr[kept++] = keep_p;
    }
    gr_sym_t a = 0, body, lb, rb;
    int have_a = 0;
    if (!r) {
        /* every name (also dropped ones) is excluded from the extra keys */
        r = extra_member(c, sd, ptr, pr, np, every, &pn, &a);
        have_a = r == 0;
        if (r == 1)
            r = 0;
    }
    if (!r && kept <= c->opts.any_order) {
        uint64_t cap = !have_a ? 0 : maxp != GR_NO_MAX ? maxp : minp;
        counted = cap <= 20000u >> kept;
    }
    if (!r && !counted && minp > nr && minp > 1)
        r = sc_fail(c, ptr, "'minProperties' above the number of required properties (and 1) "
                 "is not supported");
    if (!r && !counted && maxp < (have_a ? GR_NO_MAX : kept))
        r = sc_fail(c, ptr, "'maxProperties' below the number of properties that may appear is "
                 "not supported");
    if (!r)
        r = kept <= c->opts.any_order
                ? members_any_order(c, pr, kept, have_a, a, counted ? minp : minp > nr,
                                    counted ? maxp : GR_NO_MAX, &body)
                : members(c, pr, kept, have_a, a, minp > nr, &body);
    if (!r)
        r = sc_lit(c, "{", &lb) || sc_lit(c, "}", &rb) ||
            gr_cfg_fresh(c->g, "object", out, c->err) ||
            sc_rule(c, *out, (gr_sym_t[]){lb, body, rb}, 3);
    sc_names_free(&pn);
    free(pr);
    free(sd);
    return r;
}

/* ---- the dispatch ---------------------------------------------------------- */

/* A type branch's symbol; 1 when it allows nothing. */
static int type_value(sc_t *c, json_t *s, const char *ptr, int t, gr_sym_t *out)
{
    switch (t) {
    case T_NULL: return sc_lit(c, "null", out);
    case T_BOOL: return lexeme(c, "true|false", "true|false", out);
    case T_INT: return number_value(c, s, ptr, 1, out, NULL);
    case T_NUM: return number_value(c, s, ptr, 0, out, NULL);
    case T_STR: return string_value(c, s, ptr, out, NULL);
    case T_ARR: return array_value(c, s, ptr, out);
    default: return object_value(c, s, ptr, out);
    }
}

/* One alternative per allowed type (the symbol itself when just one). */
static int type_alternatives(sc_t *c, json_t *s, const char *ptr, int types, gr_sym_t *out)
{
    gr_sym_t x[7];
    int n = 0, r = 0;
    for (int t = 1; t <= T_OBJ && !r; t <<= 1) {
        if (!(types & t))
            continue;
        r = type_value(c, s, ptr, t, &x[n]);
        if (r == 0)
            n++;
        else if (r == 1)
            r = 0;
    }
    if (r || n <= 1) {
        *out = x[0];
        return r ? r : !n;
    }
    if (gr_cfg_fresh(c->g, "value", out, c->err))
        return -1;
    for (int i = 0; i < n; i++)
        if (sc_rule(c, *out, &x[i], 1))
            return -1;
    return 0;
}

static int refuse_generic(sc_t *c, json_t *s, const char *ptr)
{
    static const char *const refused[] = {"$dynamicRef", "$recursiveRef", NULL};
    for (size_t i = 0; refused[i]; i++)
        if (json_object_get(s, refused[i])) {
            char *p = sc_ptr_join(ptr, refused[i]);
            int r = sc_fail(c, p ? p : ptr, "'%s' is not supported", refused[i]);
            free(p);
            return r;
        }
    return 0;
}

/* not: rewritten where its complement is written exactly: not {} (or
 * true) allows nothing; not {required: R} is an object with some name of R
 * absent; not {type: T} the other types; not {pattern: P} and not {enum or
 * const of strings} constrain strings only (NOT_PATTERN, NOT_STRINGS). */
static int negate(sc_t *c, json_t *s, const char *ptr, gr_sym_t *out)
{
    json_t *n = json_object_get(s, "not"), *rest = json_copy(s), *fn = n, *comp;
    char *p = sc_ptr_join(ptr, "not");
    int r = !p ? sc_oom(c) : sc_keep(c, rest);
    if (!r && json_is_object(n))
        r = sc_flatten(c, n, p, &fn);
    if (!r)
        r = sc_complement(c, fn, p, &comp);
    free(p);
    if (r)
        return -1;
    json_object_del(rest, "not");
    json_t *all = json_pack("{s:[O,O]}", "allOf", rest, comp);
    if (sc_keep(c, all))
        return -1;
    return sc_value(c, all, ptr, out);
}

/* if/then/else: (if and then) or (not if and else), a missing then or
 * else being true; the keywords beside them merged into both. */
static int conditional(sc_t *c, json_t *s, const char *ptr, gr_sym_t *out)
{
    json_t *rest = json_copy(s);
    if (sc_keep(c, rest))
        return -1;
    json_t *i = json_object_get(s, "if"), *t = json_object_get(s, "then"),
           *e = json_object_get(s, "else");
    json_object_del(rest, "if");
    json_object_del(rest, "then");
    json_object_del(rest, "else");
    json_t *any = json_pack("{s:[{s:[O,O]},{s:[{s:O},O]}]}", "anyOf", "allOf", i,
                            t ? t : json_true(), "allOf", "not", i, e ? e : json_true());
    json_t *all = any ? json_pack("{s:[O,o]}", "allOf", rest, any) : NULL;
    if (sc_keep(c, all))
        return -1;
    return sc_value(c, all, ptr, out);
}

/* The types a schema allows: its type keyword (and nullable). */
static int allowed_types(sc_t *c, json_t *s, const char *ptr, int *out)
{
    json_t *t = json_object_get(s, "type");
    if (t && !json_is_string(t) && !json_is_array(t))
        return sc_fail(c, ptr, "'type' must be a string or an array");
    int m = sc_type_mask(t);
    size_t i;
    json_t *x;
    if (json_is_string(t) && !m)
        return sc_fail(c, ptr, "unknown type '%s'", json_string_value(t));
    json_array_foreach(t, i, x) {
        if (!json_is_string(x) || !sc_type_mask(x))
            return sc_fail(c, ptr, "unknown type in 'type'");
    }
    if (json_is_true(json_object_get(s, "nullable")))
        m |= T_NULL;
    *out = m;
    return 0;
}

/* dependencies (dependentRequired, dependentSchemas): for the first
 * entry k -> D, the instance has no k, or has k and D holds (D's names are
 * required too, or D's schema):  {"anyOf": [s + k: false, s + required k,
 * D]}, the other entries left in both branches. */
static int dependencies(sc_t *c, json_t *s, const char *kw, const char *ptr, gr_sym_t *out)
{
    json_t *deps = json_object_get(s, kw);
    if (!json_is_object(deps))
        return sc_fail(c, ptr, "'%s' must be an object", kw);
    json_t *rest = json_copy(s), *nd = json_copy(deps);
    if (sc_keep(c, rest) || sc_keep(c, nd))
        return -1;
    void *it = json_object_iter(deps);
    const char *k = it ? json_object_iter_key(it) : NULL;
    json_t *d = it ? json_object_iter_value(it) : NULL;
    if (k)
        json_object_del(nd, k);
    if (json_object_size(nd) ? json_object_set(rest, kw, nd) : json_object_del(rest, kw))
        return sc_oom(c);
    if (!k)
        return sc_value(c, rest, ptr, out);
    json_t *b1 = json_copy(rest), *b2 = json_copy(rest);
    json_t *props = json_object_get(rest, "properties"), *req = json_object_get(rest, "required");
    json_t *p1 = props ? json_copy(props) : json_object(), *r2 = req ? json_copy(req) : json_array();
    if (sc_keep(c, b1) || sc_keep(c, b2) || sc_keep(c, p1) || sc_keep(c, r2))
        return -1;
    int r = json_object_set(p1, k, json_false()) || json_object_set(b1, "properties", p1) ||
            json_array_append_new(r2, json_string(k));
    size_t i;
    json_t *x;
    if (json_is_array(d))
        json_array_foreach(d, i, x) r |= json_array_append(r2, x);
    else if (!json_is_object(d) && !json_is_boolean(d))
        return sc_fail(c, ptr, "'%s' of '%s' must be an array or a schema", kw, k);
    r |= json_object_set(b2, "required", r2);
    json_t *second = json_is_array(d) ? json_incref(b2) : sc_all_of(b2, d);
    json_t *any = second ? json_pack("{s:[O,o]}", "anyOf", b1, second) : NULL;
    if (r || sc_keep(c, any))
        return sc_oom(c);
    return sc_value(c, any, ptr, out);
}

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

/* Whether no instance can match both a and b, as far as types, enum/const
 * values and required versus forbidden or disjoint properties show it (0
 * when not shown). */
static int disjoint(sc_t *c, json_t *a, json_t *b, int depth)
{
    if (json_is_false(a) || json_is_false(b))
        return 1;
    if (!json_is_object(a) || !json_is_object(b) || depth > 8 || sc_flatten(c, a, "#", &a) ||
        sc_flatten(c, b, "#", &b) || json_object_get(a, "anyOf") || json_object_get(b, "anyOf") ||
        json_object_get(a, "oneOf") || json_object_get(b, "oneOf")) {
        c->err->msg[0] = 0;
        return 0;
    }
    int both = sc_type_and(schema_types(a), schema_types(b));
    if (!both)
        return 1;
    json_t *va = json_object_get(a, "enum"), *vb = json_object_get(b, "enum");
    json_t *ca = json_object_get(a, "const"), *cb = json_object_get(b, "const");
    if ((va || ca) && (vb || cb)) {
        json_t *la = ca ? json_pack("[O]", ca) : json_incref(va);
        json_t *lb = cb ? json_pack("[O]", cb) : json_incref(vb);
        size_t i, j;
        json_t *x, *y;
        int common = 0;
        json_array_foreach(la, i, x) json_array_foreach(lb, j, y) common |= sc_same_value(x, y);
        json_decref(la);
        json_decref(lb);
        if (!common)
            return 1;
    }
    if (both & ~T_OBJ)
        return 0;
    json_t *ra = json_object_get(a, "required"), *rb = json_object_get(b, "required");
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
                sc_complement(c, fv, ptr, &comp))
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

/* anyOf/oneOf: each branch merged with the keywords beside it. */
static int alternatives(sc_t *c, json_t *s, const char *ptr, gr_sym_t *out)
{
    json_t *any = json_object_get(s, "anyOf"), *one = json_object_get(s, "oneOf");
    if (any && one)
        return sc_fail(c, ptr, "'anyOf' beside 'oneOf' is not supported");
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

int sc_value(sc_t *c, json_t *s, const char *ptr, gr_sym_t *out)
{
    if (json_is_true(s))
        return sc_any_value(c, out);
    if (json_is_false(s))
        return 1;
    if (!json_is_object(s))
        return sc_fail(c, ptr, "a schema must be an object or a boolean");
    if (++c->depth > MAX_DEPTH)
        return sc_fail(c, ptr, "schema nested too deeply");
    int r = 0;
    const char *dep;
    json_t *ref = json_object_get(s, "$ref");
    int only_ref = ref != NULL;
    const char *k;
    json_t *v;
    json_object_foreach(s, k, v) only_ref &= !strcmp(k, "$ref") || sc_annotation(c, k);
    only_ref |= ref && (c->ref_alone || ref_siblings_redundant(c, s, ptr));
    if (c->err->msg[0])
        r = -1;
    else if (only_ref) {
        r = json_is_string(ref) ? ref_symbol(c, json_string_value(ref), ptr, out)
                                : sc_fail(c, ptr, "'$ref' must be a string");
    } else if (ref || json_object_get(s, "allOf") || json_object_get(s, "unevaluatedItems") ||
               (json_object_get(s, "unevaluatedProperties") &&
                !json_is_true(json_object_get(s, "unevaluatedProperties")) &&
                !json_object_get(s, "enum") && !json_object_get(s, "const"))) {
        json_t *m;
        r = sc_flatten(c, s, ptr, &m) ? -1 : sc_value(c, m, ptr, out);
    } else if (json_object_get(s, "not")) {
        r = negate(c, s, ptr, out);
    } else if ((r = refuse_generic(c, s, ptr))) {
    } else if (json_object_get(s, "if") && c->draft >= 7) {
        r = conditional(c, s, ptr, out);
    } else if ((dep = json_object_get(s, "dependencies") ? "dependencies"
                      : json_object_get(s, "dependentRequired") ? "dependentRequired"
                      : json_object_get(s, "dependentSchemas") ? "dependentSchemas" : NULL)) {
        int types = 0;
        r = allowed_types(c, s, ptr, &types);
        if (!r && !(types & T_OBJ)) {
            /* it speaks of objects only */
            json_t *rest = json_copy(s);
            r = sc_keep(c, rest) || json_object_del(rest, dep) ? -1 : sc_value(c, rest, ptr, out);
        } else if (!r)
            r = dependencies(c, s, dep, ptr, out);
    } else if (json_object_get(s, "anyOf") || json_object_get(s, "oneOf")) {
        r = alternatives(c, s, ptr, out);
    } else {
        int types = 0;
        r = allowed_types(c, s, ptr, &types);
        if (!r && types & T_NUM)
            types &= ~T_INT;
        if (!r && (json_object_get(s, "enum") || json_object_get(s, "const"))) {
            r = enum_value(c, s, ptr, types | (types & T_NUM ? T_INT : 0), out);
        } else if (!r) {
            r = type_alternatives(c, s, ptr, types, out);
        }
    }
    c->depth--;
    return r;
}

int gr_schema_compile(gr_cfg_t *g, const char *json, size_t len,
                      const gr_schema_opts_t *opts, tb_err_t *err)
{
    sc_t c = {.g = g, .err = err};
    g->lookahead = 1; /* see string_opts */
    if (opts)
        c.opts = *opts;
    if (!c.opts.any_order)
        c.opts.any_order = GR_SCHEMA_ANY_ORDER;
    if (c.opts.definition_order)
        c.opts.any_order = 0;
    err->msg[0] = 0;
    json_error_t je;
    c.root = json_loadb(json, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    if (!c.root && strstr(je.text, "too big")) {
        c.big = 1;
        c.root = json_loadb(json, len, JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL,
                            &je);
    }
    if (!c.root)
        return tb_fail(err, "%s:%d:%d: malformed JSON: %s", g->source, je.line, je.column,
                       je.text);
    const char *sv = json_string_value(json_object_get(c.root, "$schema"));
    /* Draft 3's own assertions (disallow, extends, divisibleBy, a boolean
     * required) are unknown keywords to the later drafts read here: they
     * would be ignored, so its schemas are refused. */
    if (sv && strstr(sv, "draft-03")) {
        json_decref(c.root);
        return tb_fail(err, "#/$schema: draft 3 is not supported (its disallow, extends, "
                       "divisibleBy and boolean required would be ignored)");
    }
    c.draft = c.opts.draft ? c.opts.draft : 2020;
    if (sv)
        c.draft = strstr(sv, "draft-04")   ? 4
                  : strstr(sv, "draft-06") ? 6
                  : strstr(sv, "draft-07") ? 7
                  : strstr(sv, "2019-09")  ? 2019
                  : strstr(sv, "2020-12")  ? 2020 : c.draft;
    if (c.draft != 4 && c.draft != 6 && c.draft != 7 && c.draft != 2019 && c.draft != 2020) {
        json_decref(c.root);
        return tb_fail(err, "draft %d is not one of 4, 6, 7, 2019, 2020", c.draft);
    }
    c.draft4 = c.draft == 4;
    c.ref_alone = c.draft <= 7;
    gr_sym_t x, start, ws;
    int r = tb_strmap_init(&c.ref_map, 64) ? sc_oom(&c) : sc_refs_prepare(&c);
    if (!r)
        r = sc_value(&c, c.root, "#", &x);
    int empty = r == 1;
    if (empty)
        r = tb_fail(err, "#: the schema allows no value");
    if (!r && !c.opts.compact)
        r = gr_cfg_lexeme(g, "[ \\t\\n\\r]+", "WS", 1, nopos, &ws, err);
    if (!r)
        r = gr_cfg_nonterm(g, "start", 5, nopos, &start, err) || sc_rule(&c, start, &x, 1) ||
            gr_cfg_finish(g, start, err);
    for (size_t i = 0; i < c.owned.len; i++)
        json_decref(c.owned.data[i]);
    for (size_t i = 0; i < c.ref_keys.len; i++)
        free(c.ref_keys.data[i]);
    free(c.owned.data);
    free(c.ref_keys.data);
    free(c.refs.data);
    tb_strmap_free(&c.ref_map);
    json_decref(c.root);
    return empty ? GR_SCHEMA_EMPTY : r ? -1 : 0;
}
