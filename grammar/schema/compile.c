/*
 * compile: JSON Schema to grammar (grammar/schema.h; docs/json-schema.md),
 * the entry point and the dispatch.
 *
 * sc_value() turns a schema into a symbol, or reports that it allows nothing
 * (return 1): the false schema, a required property that cannot appear,
 * an empty enum.  The keywords that combine schemas are rewritten first:
 * allOf (and $ref beside other keywords) by merging keyword by keyword into
 * a new schema object (merge.c), anyOf/oneOf by merging the keywords beside
 * them into each branch (oneof.c), not as the complement (not.c), if/then/
 * else and the dependencies as two branches.  Then each allowed type
 * contributes an alternative built from the keywords that apply to it
 * (scalar.c, array.c, object.c).  A $ref becomes a nonterminal named by its
 * target's pointer, made once, so recursive schemas are recursive rules
 * (ref.c).  Here too: the helpers every module uses (errors, pointers,
 * lexemes, rules, the any-value rules, the keyword and type tables).
 */
#include "../schema.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/jsontext.h"
#include "../ecma.h"
#include "internal.h"

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

/* The members of s named kws[i] (a NULL-terminated list) into v[i], NULL
 * where absent: one pass over s's members (internal.h). */
void sc_members(json_t *s, const char *const *kws, json_t **v)
{
    const char *k;
    json_t *x;
    for (size_t i = 0; kws[i]; i++)
        v[i] = NULL;
    json_object_foreach(s, k, x) {
        for (size_t i = 0; kws[i]; i++)
            if (kws[i][0] == k[0] && !strcmp(kws[i], k))
                v[i] = x;
    }
}

/* ---- lexemes ------------------------------------------------------------ */

int sc_lexeme(sc_t *c, const char *regex, const char *name, gr_sym_t *out)
{
    return gr_cfg_lexeme(c->g, regex, name, 0, nopos, out, c->err);
}

/* A lexeme named "WHAT at POINTER" (for messages and dumps: the regex of
 * an enum or a pattern may be long); ptr NULL: named by its regex. */
int sc_named_lexeme(sc_t *c, const char *regex, const char *what, const char *ptr,
                    gr_sym_t *out)
{
    char *name = NULL;
    if (ptr && asprintf(&name, "%s at %s", what, ptr) < 0)
        return sc_oom(c);
    int r = sc_lexeme(c, regex, name, out);
    free(name);
    return r;
}

int sc_lit(sc_t *c, const char *s, gr_sym_t *out)
{
    return gr_cfg_literal(c->g, (const uint8_t *)s, strlen(s), nopos, out, c->err);
}

int sc_comma(sc_t *c, gr_sym_t *out)
{
    return c->item_sep ? sc_lexeme(c, c->item_sep, "x-guidance item_separator", out)
                       : sc_lit(c, ",", out);
}

int sc_colon(sc_t *c, gr_sym_t *out)
{
    return c->key_sep ? sc_lexeme(c, c->key_sep, "x-guidance key_separator", out)
                      : sc_lit(c, ":", out);
}

int sc_rule(sc_t *c, gr_sym_t lhs, const gr_sym_t *rhs, size_t n)
{
    return gr_cfg_rule(c->g, lhs, rhs, n, nopos, c->err);
}

/* The rules of any JSON value, made once. */
int sc_any_value(sc_t *c, gr_sym_t *out)
{
    if (c->have_any) {
        *out = c->any;
        return 0;
    }
    gr_sym_t v, obj, arr, mem, mems, elems, s, n, k, lb, rb, ls, rs, co, cm;
    sc_spell(c, 1);
    const char *any_string = gr_ecma_any_string(c->sets);
    sc_spell(c, 0);
    if (!any_string)
        return sc_oom(c);
    if (gr_cfg_nonterm(c->g, "json_value", 10, nopos, &v, c->err) ||
        gr_cfg_nonterm(c->g, "json_object", 11, nopos, &obj, c->err) ||
        gr_cfg_nonterm(c->g, "json_array", 10, nopos, &arr, c->err) ||
        gr_cfg_nonterm(c->g, "json_member", 11, nopos, &mem, c->err) ||
        gr_cfg_nonterm(c->g, "json_members", 12, nopos, &mems, c->err) ||
        gr_cfg_nonterm(c->g, "json_elements", 13, nopos, &elems, c->err) ||
        sc_lexeme(c, any_string, "STRING", &s) || sc_lexeme(c, JSON_NUM, "NUMBER", &n) ||
        sc_lexeme(c, "true|false|null", "true|false|null", &k) || sc_lit(c, "{", &lb) ||
        sc_lit(c, "}", &rb) || sc_lit(c, "[", &ls) || sc_lit(c, "]", &rs) || sc_colon(c, &co) ||
        sc_comma(c, &cm))
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

/* ---- keywords and types --------------------------------------------------- */

int sc_keep(sc_t *c, json_t *j)
{
    if (!j || tb_vec_push(&c->owned, j)) {
        json_decref(j);
        return sc_oom(c);
    }
    return 0;
}

/* The memo's key of names: each name's length in decimal, ':', its bytes
 * (no two lists of names share a key). */
static int except_key(tb_buf_t *k, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char len[24];
        size_t l = strlen(names[i]);
        int m = snprintf(len, sizeof len, "%zu:", l);
        if (tb_buf_put(k, len, (size_t)m) || tb_buf_put(k, names[i], l))
            return -1;
    }
    return 0;
}

void sc_spell(sc_t *c, int plain)
{
    gr_ecma_sets_spell(c->sets, plain || c->spell == GR_SPELL_JSON ? c->spell : GR_SPELL_LLG);
}

/* The text kept under key k (which it takes) appended to out: its rc, or
 * -2 when there is none yet. */
static int memo_get(sc_t *c, tb_buf_t *k, tb_buf_t *out)
{
    int32_t i = tb_strmap_get(&c->except_map, k->data, k->len);
    if (i < 0)
        return -2;
    const sc_except_t *e = &c->excepts.data[i];
    tb_buf_free(k);
    return tb_buf_put(out, e->key.data + e->klen, e->key.len - e->klen) ? sc_oom(c) : e->rc;
}

/* Keeps out's text from `at` under key k (which it takes), with rc. */
static int memo_put(sc_t *c, tb_buf_t *k, const tb_buf_t *out, size_t at, int rc)
{
    /* the key's buffer takes the text after the key; the map borrows it */
    sc_except_t e = {.key = *k, .klen = k->len, .rc = rc};
    *k = (tb_buf_t){0};
    /* nothing written (rc 1) may leave out without a buffer at all */
    if ((out->len > at && tb_buf_put(&e.key, out->data + at, out->len - at)) ||
        tb_vec_push(&c->excepts, e)) {
        tb_buf_free(&e.key);
        return sc_oom(c);
    }
    return tb_strmap_put(&c->except_map, e.key.data, e.klen, (int32_t)(c->excepts.len - 1)) < 0
               ? sc_oom(c)
               : rc;
}

int sc_string_except(sc_t *c, tb_buf_t *out, const char *const *names, size_t n)
{
    tb_buf_t k = {0};
    if (except_key(&k, names, n))
        return sc_oom(c);
    int r = memo_get(c, &k, out);
    if (r != -2)
        return r;
    size_t at = out->len;
    sc_spell(c, 1);
    r = gr_ecma_string_except(out, names, n, c->sets, c->err);
    sc_spell(c, 0);
    if (r) {
        tb_buf_free(&k);
        return -1;
    }
    return memo_put(c, &k, out, at, 0);
}

int sc_other_names(sc_t *c, tb_buf_t *out, const char *const *names, size_t n)
{
    if (gr_ecma_names_lookahead(out, names, n, c->sets))
        return sc_oom(c);
    if (!n || c->spell == GR_SPELL_JSON)
        return sc_string_except(c, out, NULL, 0);
    gr_ecma_sets_spell(c->sets, GR_SPELL_LLG_ANY_U);
    const char *any = gr_ecma_any_string(c->sets);
    sc_spell(c, 0);
    return !any || tb_buf_put(out, any, strlen(any)) ? sc_oom(c) : 0;
}

/* A pattern is split at its top-level '|' where it is this long and has
 * at most this many branches: `not` of a oneOf's other branches joins their
 * patterns so (Github_hard---o46658's 3.7 kB pattern translated within 9
 * such unions), and a search matches the union where a branch matches. */
#define SPLIT_MIN_LEN 256
#define SPLIT_MAX_BRANCHES 16

/* The offsets of pattern's top-level '|' (outside groups, classes and
 * escapes) into bar; their number, 0 where there are none, too many, or a
 * look-around (a branch's lexeme would then begin with one, which no group
 * may hold). */
static size_t top_bars(const char *p, size_t *bar)
{
    size_t n = 0, depth = 0;
    for (size_t i = 0; p[i]; i++) {
        if (p[i] == '\\') {
            if (!p[++i])
                break;
        } else if (p[i] == '[') {
            /* ECMA-262: the first unescaped ']' closes the class */
            for (i++; p[i] && p[i] != ']'; i++)
                if (p[i] == '\\' && p[i + 1])
                    i++;
            if (!p[i])
                break;
        } else if (p[i] == '(') {
            if (p[i + 1] == '?' && p[i + 2] != ':')
                return 0;
            depth++;
        } else if (p[i] == ')') {
            depth -= depth > 0;
        } else if (p[i] == '|' && !depth) {
            if (n == SPLIT_MAX_BRANCHES - 1)
                return 0;
            bar[n++] = i;
        }
    }
    return n;
}

/* The strings some branch of pattern (split at its n top-level bars)
 * matches: the union of the branches' lexemes, each from the memo, in
 * out.  -2 where a branch fails or its lexeme begins with a look-ahead:
 * the caller translates the whole, which reports errors as the pattern's. */
static int union_string(sc_t *c, tb_buf_t *out, const char *pattern, const size_t *bar,
                        size_t n)
{
    size_t at = out->len, from = 0;
    int none = 1;
    tb_buf_t piece = {0}, re = {0};
    for (size_t b = 0; b <= n; b++) {
        size_t end = b < n ? bar[b] : strlen(pattern);
        piece.len = re.len = 0;
        if (tb_buf_put(&piece, pattern + from, end - from) || tb_buf_putc(&piece, 0)) {
            out->len = at;
            tb_buf_free(&piece);
            return sc_oom(c);
        }
        from = end + 1;
        int r = sc_ecma_string(c, &re, (const char *)piece.data, NULL, 0, GR_NO_MAX);
        if (r == 1)
            continue;
        if (r < 0 || (re.len >= 3 && !memcmp(re.data, "(?", 2) && re.data[2] != ':')) {
            c->err->msg[0] = 0;
            out->len = at;
            tb_buf_free(&piece);
            tb_buf_free(&re);
            return -2;
        }
        if (tb_buf_put(out, none ? "(?:" : "|", none ? 3 : 1) ||
            tb_buf_put(out, re.data, re.len)) {
            tb_buf_free(&piece);
            tb_buf_free(&re);
            return sc_oom(c);
        }
        none = 0;
    }
    tb_buf_free(&piece);
    tb_buf_free(&re);
    return none ? 1 : tb_buf_put(out, ")", 1) ? sc_oom(c) : 0;
}

int sc_ecma_string(sc_t *c, tb_buf_t *out, const char *pattern, const char *format,
                   uint32_t lo, uint32_t hi)
{
    /* 'P', the bounds, the format's length and text, then '+' and the
     * pattern or '-' for none: no list of names' key begins with 'P' */
    tb_buf_t k = {0};
    char head[64];
    int m = snprintf(head, sizeof head, "P%u:%u:%zu:", lo, hi, format ? strlen(format) : 0);
    if (tb_buf_put(&k, head, (size_t)m) || (format && tb_buf_put(&k, format, strlen(format))) ||
        tb_buf_put(&k, pattern ? "+" : "-", 1) ||
        (pattern && tb_buf_put(&k, pattern, strlen(pattern)))) {
        tb_buf_free(&k);
        return sc_oom(c);
    }
    int r = memo_get(c, &k, out);
    if (r != -2)
        return r;
    size_t at = out->len, bar[SPLIT_MAX_BRANCHES], nbar;
    if (pattern && !format && !lo && hi == GR_NO_MAX && strlen(pattern) >= SPLIT_MIN_LEN &&
        (nbar = top_bars(pattern, bar)) && (r = union_string(c, out, pattern, bar, nbar)) != -2) {
        if (r < 0) {
            tb_buf_free(&k);
            return -1;
        }
        return memo_put(c, &k, out, at, r);
    }
    /* the key tells plain strings (no pattern, no format) apart */
    sc_spell(c, !pattern && !format);
    r = gr_ecma_string(out, pattern, format, lo, hi, c->sets, c->err);
    sc_spell(c, 0);
    if (r < 0) {
        tb_buf_free(&k);
        return -1;
    }
    return memo_put(c, &k, out, at, r);
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
        NOT_PATTERN, NOT_STRINGS, PATTERNS, SIDES, FRACTION, "$tb:minContains", "$tb:maxContains",
        SOME_MEMBER,
        NULL};
    for (size_t i = 0; a[i]; i++)
        if (a[i][0] == k[0] && !strcmp(a[i], k)) /* most keywords differ at once */
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

/* ---- the dispatch ---------------------------------------------------------- */

/* A type branch's symbol; 1 when it allows nothing. */
static int type_value(sc_t *c, json_t *s, const char *ptr, int t, gr_sym_t *out)
{
    switch (t) {
    case T_NULL: return sc_lit(c, "null", out);
    case T_BOOL: return sc_lexeme(c, "true|false", "true|false", out);
    case T_INT: return sc_number_value(c, s, ptr, 1, out, NULL);
    case T_NUM: return sc_number_value(c, s, ptr, 0, out, NULL);
    case T_STR: return sc_string_value(c, s, ptr, out, NULL);
    case T_ARR: return sc_array_value(c, s, ptr, out);
    default: return sc_object_value(c, s, ptr, out);
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
    if (!r)
        json_object_del(rest, "not");
    if (!r && json_is_object(n))
        r = sc_flatten(c, n, p, &fn);
    if (!r) /* the instances satisfy rest: the complement may lean on it */
        r = sc_complement(c, fn, rest, p, &comp);
    free(p);
    if (r)
        return -1;
    json_t *all = json_pack("{s:[O,O]}", "allOf", rest, comp);
    if (sc_keep(c, all))
        return -1;
    return sc_value(c, all, ptr, out);
}

/* {"not": {"$ref": R}} alone: one nonterminal for each target R (as for
 * $ref), so that the complement of a recursive schema recurses through
 * it instead of being written out again at every level. */
static int negate_ref(sc_t *c, json_t *s, const char *ref, const char *ptr, gr_sym_t *out)
{
    json_t *target;
    char *canon, *key;
    if (sc_resolve(c, ref, ptr, &target, &canon))
        return -1;
    key = malloc(strlen(canon) + 5);
    if (!key)
        return free(canon), sc_oom(c);
    snprintf(key, strlen(canon) + 5, "not %s", canon);
    free(canon);
    return sc_keyed_symbol(c, key, negate, s, ptr, out);
}

/* The $ref of {"not": {"$ref": R}} alone (annotations aside), or NULL. */
static const char *not_ref(sc_t *c, json_t *s)
{
    json_t *n = json_object_get(s, "not"), *v;
    const char *k, *ref = json_string_value(json_object_get(n, "$ref"));
    if (!ref)
        return NULL;
    json_object_foreach(s, k, v) {
        if (strcmp(k, "not") && !sc_annotation(c, k))
            return NULL;
    }
    json_object_foreach(n, k, v) {
        if (strcmp(k, "$ref") && !sc_annotation(c, k))
            return NULL;
    }
    return ref;
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
    enum { K_REF, K_ALLOF, K_UITEMS, K_UPROPS, K_ENUM, K_CONST, K_NOT, K_IF, K_DEPS, K_DEPREQ,
           K_DEPSCH, K_ANYOF, K_ONEOF, K_END };
    static const char *const kw[K_END + 1] = {
        "$ref", "allOf", "unevaluatedItems", "unevaluatedProperties", "enum", "const", "not",
        "if", "dependencies", "dependentRequired", "dependentSchemas", "anyOf", "oneOf", NULL};
    json_t *m[K_END];
    sc_members(s, kw, m);
    json_t *ref = m[K_REF];
    int only_ref = ref != NULL;
    const char *k;
    json_t *v;
    json_object_foreach(s, k, v) only_ref &= !strcmp(k, "$ref") || sc_annotation(c, k);
    /* a merge with the target says whether the other siblings are redundant
     * (150 merges of whole definitions in a Kubernetes schema): not asked
     * where they are annotations */
    only_ref = only_ref || (ref && (c->ref_alone || sc_ref_siblings_redundant(c, s, ptr)));
    if (c->err->msg[0])
        r = -1;
    else if (only_ref) {
        r = json_is_string(ref) ? sc_ref_symbol(c, json_string_value(ref), ptr, out)
                                : sc_fail(c, ptr, "'$ref' must be a string");
    } else if (ref || m[K_ALLOF] || m[K_UITEMS] ||
               (m[K_UPROPS] && !json_is_true(m[K_UPROPS]) && !m[K_ENUM] && !m[K_CONST])) {
        json_t *f;
        r = sc_flatten(c, s, ptr, &f) ? -1 : sc_value(c, f, ptr, out);
    } else if (m[K_NOT]) {
        const char *nr = not_ref(c, s);
        r = nr ? negate_ref(c, s, nr, ptr, out) : negate(c, s, ptr, out);
    } else if ((r = refuse_generic(c, s, ptr))) {
    } else if (m[K_IF] && c->draft >= 7) {
        r = conditional(c, s, ptr, out);
    } else if ((dep = m[K_DEPS]     ? "dependencies"
                      : m[K_DEPREQ] ? "dependentRequired"
                      : m[K_DEPSCH] ? "dependentSchemas"
                                    : NULL)) {
        int types = 0;
        r = allowed_types(c, s, ptr, &types);
        if (!r && !(types & T_OBJ)) {
            /* it speaks of objects only */
            json_t *rest = json_copy(s);
            r = sc_keep(c, rest) || json_object_del(rest, dep) ? -1 : sc_value(c, rest, ptr, out);
        } else if (!r)
            r = sc_dependencies(c, s, dep, ptr, out);
    } else if (m[K_ANYOF] || m[K_ONEOF]) {
        r = sc_alternatives(c, s, ptr, out);
    } else {
        int types = 0;
        r = allowed_types(c, s, ptr, &types);
        if (!r && types & T_NUM)
            types &= ~T_INT;
        if (!r && (m[K_ENUM] || m[K_CONST])) {
            r = sc_enum_value(c, s, ptr, types | (types & T_NUM ? T_INT : 0), out);
        } else if (!r) {
            r = type_alternatives(c, s, ptr, types, out);
        }
    }
    c->depth--;
    return r;
}

int sc_big_integer(const sc_t *c, double d, char *buf, size_t n)
{
    size_t at = 0, start;
    int kind, found = 0;
    while ((kind = tb_json_next_number(c->text, c->len, &at, &start)) >= 0) {
        size_t len = at - start, digits = len - (c->text[start] == '-');
        if (kind != 1 || digits < 16 || len >= n || strtod(c->text + start, NULL) != d)
            continue;
        if (found && (strlen(buf) != len || memcmp(buf, c->text + start, len)))
            return -1; /* two literals read as d */
        memcpy(buf, c->text + start, len);
        buf[len] = 0;
        found = 1;
    }
    return found ? 0 : -1;
}

int gr_schema_parse(const char *json, size_t len, const char *source, gr_schema_doc_t *doc,
                    tb_err_t *err)
{
    *doc = (gr_schema_doc_t){.text = json, .len = len};
    json_error_t je;
    json_t *root = json_loadb(json, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    if (!root && strstr(je.text, "too big")) {
        doc->big = 1;
        root = json_loadb(json, len, JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL,
                          &je);
    }
    if (!root)
        return tb_fail(err, "%s:%d:%d: malformed JSON: %s", source, je.line, je.column,
                       je.text);
    doc->root = root;
    return 0;
}

void gr_schema_doc_free(gr_schema_doc_t *doc)
{
    json_decref(doc->root);
    doc->root = NULL;
}

int gr_schema_compile(gr_cfg_t *g, const char *json, size_t len,
                      const gr_schema_opts_t *opts, tb_err_t *err)
{
    gr_schema_doc_t doc;
    err->msg[0] = 0;
    if (gr_schema_parse(json, len, g->source, &doc, err))
        return -1;
    int r = gr_schema_compile_doc(g, &doc, opts, err);
    gr_schema_doc_free(&doc);
    return r;
}

/*
 * llguidance's options for its JSON Schema compiler, an object "x-guidance"
 * at the root (llguidance's docs/json_schema.md; anywhere else it is an
 * unknown keyword, ignored): item_separator and key_separator, regexes of
 * the lexemes that stand for "," and ":"; whitespace_flexible false, no
 * whitespace; whitespace_pattern, the ignored whitespace's regex;
 * coerce_one_of, oneOf as anyOf (this compiler's default: no strict_oneof);
 * lenient, unknown formats ignored (the other keywords refused here stay
 * refused), oneOf as anyOf; json_allowed_escapes and
 * json_allow_general_unicode_escapes, how strings are spelled under
 * llguidance's reading (sc_t.spell; the default reading keeps every
 * spelling JSON allows).  Another name is refused.
 */
static int x_guidance(sc_t *c)
{
    json_t *x = json_is_object(c->root) ? json_object_get(c->root, "x-guidance") : NULL;
    if (!x)
        return 0;
    if (!json_is_object(x))
        return sc_fail(c, "#/x-guidance", "must be an object");
    static const char *const strings[] = {"item_separator", "key_separator",
                                          "whitespace_pattern", "json_allowed_escapes"};
    const char *k;
    json_t *v;
    json_object_foreach(x, k, v) {
        int is_string = 0;
        for (size_t i = 0; i < sizeof strings / sizeof *strings; i++)
            is_string |= !strcmp(k, strings[i]);
        if (is_string && (!json_is_string(v) || (!json_string_length(v) &&
                                                 strcmp(k, "json_allowed_escapes"))))
            return sc_fail(c, "#/x-guidance", "'%s' must be a non-empty string", k);
        if (!is_string && strcmp(k, "whitespace_flexible") && strcmp(k, "coerce_one_of") &&
            strcmp(k, "lenient") && strcmp(k, "json_allow_general_unicode_escapes"))
            return sc_fail(c, "#/x-guidance", "unknown option '%s' (llguidance's are "
                           "item_separator, key_separator, whitespace_flexible, "
                           "whitespace_pattern, coerce_one_of, lenient, json_allowed_escapes, "
                           "json_allow_general_unicode_escapes)", k);
        if (!is_string && !json_is_boolean(v))
            return sc_fail(c, "#/x-guidance", "'%s' must be true or false", k);
    }
    c->item_sep = json_string_value(json_object_get(x, "item_separator"));
    c->key_sep = json_string_value(json_object_get(x, "key_separator"));
    c->ws = json_string_value(json_object_get(x, "whitespace_pattern"));
    if (!c->ws && json_is_false(json_object_get(x, "whitespace_flexible")))
        c->opts.compact = 1;
    c->lenient = json_is_true(json_object_get(x, "lenient"));
    if (c->lenient || json_is_true(json_object_get(x, "coerce_one_of")))
        c->opts.strict_oneof = 0;
    if (c->spell != GR_SPELL_JSON &&
        json_is_true(json_object_get(x, "json_allow_general_unicode_escapes")))
        c->spell = GR_SPELL_LLG_ANY_U;
    const char *esc = json_string_value(json_object_get(x, "json_allowed_escapes"));
    return esc && gr_ecma_sets_escapes(c->sets, esc, c->err)
               ? tb_wrap(c->err, "#/x-guidance/json_allowed_escapes")
               : 0;
}

int gr_schema_compile_doc(gr_cfg_t *g, const gr_schema_doc_t *doc,
                          const gr_schema_opts_t *opts, tb_err_t *err)
{
    sc_t c = {.g = g, .err = err, .text = doc->text, .len = doc->len, .big = doc->big,
              .root = json_incref(doc->root)};
    g->lookahead = 1; /* see sc_string_opts */
    if (opts)
        c.opts = *opts;
    err->msg[0] = 0;
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
    /* Read as llguidance reads a schema (its docs/json_schema.md, its
     * tests): properties in the schema's order, integers without a
     * fraction. */
    c.llg_order = c.opts.llguidance || g->semantics == GR_SEM_LLGUIDANCE;
    c.int_text = c.draft4 || c.llg_order;
    c.spell = c.llg_order ? GR_SPELL_LLG : GR_SPELL_JSON;
    if (c.llg_order)
        g->ignore_once = 1; /* as llguidance's whitespace (SkipSpec::once) */
    gr_sym_t x, start, ws;
    c.sets = gr_ecma_sets_new();
    int r = !c.sets || tb_strmap_init(&c.ref_map, 64) || tb_strmap_init(&c.except_map, 16) ||
                        tb_strmap_init(&c.pattern_map, 16)
                ? sc_oom(&c)
                : x_guidance(&c) ? -1 : sc_refs_prepare(&c);
    if (!r)
        sc_spell(&c, 0);
    if (!r)
        r = sc_value(&c, c.root, "#", &x);
    if (!r) { /* the length bounds' character, for masks (gram.h's gr_lifted) */
        free(g->json_char);
        if (!(g->json_char = gr_ecma_any_char(c.sets)))
            r = sc_oom(&c);
    }
    int empty = r == 1;
    if (empty)
        r = tb_fail(err, "#: the schema allows no value");
    if (!r && !c.opts.compact)
        r = gr_cfg_lexeme(g, c.ws ? c.ws : "[ \\t\\n\\r]+", "WS", 1, nopos, &ws, err);
    if (!r)
        r = gr_cfg_nonterm(g, "start", 5, nopos, &start, err) || sc_rule(&c, start, &x, 1);
    /* recursive definitions that require themselves allow no value */
    if (!r && gr_cfg_prune(g, start)) {
        empty = 1;
        r = tb_fail(err, "#: the schema allows no value");
    }
    if (!r)
        r = gr_cfg_finish(g, start, err);
    for (size_t i = 0; i < c.owned.len; i++)
        json_decref(c.owned.data[i]);
    for (size_t i = 0; i < c.ref_keys.len; i++)
        free(c.ref_keys.data[i]);
    free(c.owned.data);
    free(c.ref_keys.data);
    free(c.refs.data);
    for (size_t i = 0; i < c.excepts.len; i++)
        tb_buf_free(&c.excepts.data[i].key);
    free(c.excepts.data);
    tb_strmap_free(&c.except_map);
    for (size_t i = 0; i < c.patterns.len; i++) {
        free(c.patterns.data[i].pattern);
        lex_dfa_free(c.patterns.data[i].dfa);
    }
    free(c.patterns.data);
    tb_strmap_free(&c.pattern_map);
    gr_ecma_sets_free(c.sets);
    tb_strmap_free(&c.ref_map);
    json_decref(c.root);
    return empty ? GR_SCHEMA_EMPTY : r ? -1 : 0;
}
