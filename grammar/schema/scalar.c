/*
 * scalar: the values of the scalar keywords: enum and const (scalars as
 * one lexeme, arrays and objects as the schema of the values equal to
 * them), JSON equality as JSON Schema has it (sc_same_value), numbers
 * (bounds as exact decimal intervals, grammar/numrange.h; multipleOf
 * 10^-k here, any other in mult.c) and strings (lengths, pattern, format,
 * and what `not` leaves them; grammar/ecma.h).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ecma.h"
#include "../numrange.h"
#include "internal.h"

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
        if (c->big && fabs(json_real_value(v)) >= 9007199254740992.0) {
            if (sc_big_integer(c, json_real_value(v), tmp, sizeof tmp))
                return sc_fail(c, ptr, "the integer %.17g is too large to be exact here",
                               json_real_value(v));
        } else if (c->big && json_real_value(v) == floor(json_real_value(v)))
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
 * and numbers compare by value. */
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
    else if (c->big && fabs(json_real_value(v)) >= 9007199254740992.0) {
        if (sc_big_integer(c, json_real_value(v), d, sizeof d))
            return sc_fail(c, ptr, "the integer %.17g is too large to be exact here",
                           json_real_value(v));
    }
    else if (gr_num_decimal(json_real_value(v), d, sizeof d))
        return sc_fail(c, ptr, "number %.17g out of range", json_real_value(v));
    if (tb_buf_put(re, "(?:", 3) || gr_num_range(re, d, 0, d, 0, integer, c->err) ||
        tb_buf_putc(re, ')'))
        return c->err->msg[0] ? tb_wrap(c->err, "%s", ptr) : sc_oom(c);
    return 0;
}

/* Keywords that apply to each type (checked against enum/const values and
 * refused there). */
static const char *const kw_str[] = {"minLength", "maxLength", "pattern", "format",
                                     NOT_PATTERN, NOT_STRINGS, PATTERNS, NULL};
static const char *const kw_num[] = {"minimum", "maximum", "exclusiveMinimum",
                                     "exclusiveMaximum", "multipleOf", FRACTION, NULL};
static const char *const kw_arr[] = {"items", "prefixItems", "additionalItems", "minItems",
                                     "maxItems", "uniqueItems", "contains", "unevaluatedItems",
                                     NULL};
static const char *const kw_obj[] = {"properties", "required", "additionalProperties",
                                     "patternProperties", "minProperties", "maxProperties",
                                     "propertyNames", "dependencies", "unevaluatedProperties",
                                     SIDES, SOME_MEMBER, NULL};

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

/* What the string lexemes' regexes need of the lexer: gr_ecma_string
 * writes intersections as look-aheads. */
const lex_dfa_opts_t sc_string_opts = {.lookahead = 1};

/* The lexeme of s's string (kind 0) or number (kind 1) keywords, built
 * for the first value of that kind and kept in k for the others.  A DFA
 * that passed its state limit is built again: a value gets the verdict a
 * DFA of its own would give it. */
static int check_dfa(sc_t *c, json_t *s, const char *ptr, int kind, sc_checks_t *k)
{
    if (k->dfa[kind] && !lex_dfa_error(k->dfa[kind], NULL))
        return 0;
    lex_dfa_free(k->dfa[kind]);
    k->dfa[kind] = NULL;
    if (!k->re[kind].len) {
        int r = kind ? sc_number_value(c, s, ptr, 0, NULL, &k->re[kind])
                     : sc_string_value(c, s, ptr, NULL, &k->re[kind]);
        if (r) {
            k->re[kind].len = 0; /* 1: no value of the kind qualifies */
            return r;
        }
    }
    k->dfa[kind] = lex_dfa_new((const char *)k->re[kind].data, &sc_string_opts, c->err);
    return k->dfa[kind] ? 0 : tb_wrap(c->err, "%s", ptr);
}

int sc_value_passes(sc_t *c, sc_checks_t *k, json_t *s, const char *ptr, json_t *v)
{
    int str = json_is_string(v);
    if (!applying(s, str ? T_STR : json_is_number(v) ? T_NUM : 0))
        return 1;
    int r = check_dfa(c, s, ptr, !str, k);
    if (r)
        return r < 0 ? -1 : 0;
    tb_buf_t txt = {0};
    if (scalar_text(c, v, &txt, ptr)) {
        tb_buf_free(&txt);
        return -1;
    }
    lex_dfa_t *d = k->dfa[!str];
    uint32_t st = lex_dfa_feed(d, LEX_START, txt.data, txt.len);
    tb_buf_free(&txt);
    return st != LEX_DEAD && lex_dfa_accepting(d, st);
}

void sc_checks_free(sc_checks_t *k)
{
    for (int i = 0; i < 2; i++) {
        lex_dfa_free(k->dfa[i]);
        tb_buf_free(&k->re[i]);
    }
}

int sc_string_regex(sc_t *c, json_t *s, const char *ptr, tb_buf_t *re)
{
    return sc_string_value(c, s, ptr, NULL, re);
}

int sc_in_enum(json_t *en, json_t *v)
{
    size_t i;
    json_t *x;
    json_array_foreach(en, i, x) if (sc_same_value(x, v)) return 1;
    return 0;
}

int sc_enum_value(sc_t *c, json_t *s, const char *ptr, int types, gr_sym_t *out)
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
    sc_checks_t checks = {0};
    json_array_foreach(vals, i, v) {
        int in = sc_value_passes(c, &checks, s, ptr, v);
        if (in < 0 || (in && json_array_append(kept, v))) {
            sc_checks_free(&checks);
            return in < 0 ? -1 : sc_oom(c);
        }
    }
    sc_checks_free(&checks);
    vals = kept;
    if (!json_array_size(vals))
        return 1;
    /* Scalars as one lexeme (one regex alternation), the rest as rules. */
    tb_buf_t re = {0}, txt = {0};
    gr_sym_t alt;
    int r = gr_cfg_fresh(c->g, "enum", &alt, c->err), nsc = 0;
    int integer = c->int_text && !(types & T_NUM);
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
                                                       json_string_length(v), c->sets)
                                 : scalar_text(c, v, &txt, ptr) ||
                                       gr_regex_escape(&re, txt.data, txt.len));
    }
    gr_sym_t x;
    if (!r && nsc)
        r = tb_buf_putc(&re, 0) || sc_named_lexeme(c, (const char *)re.data, "enum", ptr, &x) ||
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
        return sc_big_integer(c, d, buf, n)
                   ? sc_fail(c, ptr, "'%s': %.17g is too large to be exact here", k, d)
                   : 1;
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
int sc_number_value(sc_t *c, json_t *s, const char *ptr, int integer, gr_sym_t *out,
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
    /* integer 1: integer texts (draft 4's type integer, llguidance's); 2: numbers with a
     * zero fraction too, as later drafts' integers and, in every draft,
     * multiples of 1 (3.0 is one) */
    if (integer && !c->int_text)
        integer = 2;
    if (mo && !places && !general && decimal_places(num(mo)) != UINT32_MAX && !integer)
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
        if (strstr(c->err->msg, "is empty") || strstr(c->err->msg, "lies in the interval")) {
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
        r = hl || hh || fr || general
                ? sc_named_lexeme(c, (const char *)re.data, "number", ptr, out)
                : sc_lexeme(c, (const char *)re.data, integer ? "INTEGER" : "NUMBER", out);
    tb_buf_free(&re);
    return r;
}

/* A non-negative integer keyword (absent: dflt). */
int sc_count(sc_t *c, json_t *s, const char *k, const char *ptr, uint64_t dflt, uint64_t *out)
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
/* A pattern as the ECMA translation reads it, NUL-terminated: a NUL
 * character in it (JSON's \u0000) spelled \x00, in tmp; NULL when p is
 * no string or memory ran out. */
static const char *pattern_text(json_t *p, tb_buf_t *tmp)
{
    const char *s = json_string_value(p);
    size_t n = json_string_length(p);
    if (!s || strlen(s) == n)
        return s;
    tmp->len = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] ? tb_buf_putc(tmp, (uint8_t)s[i]) : tb_buf_put(tmp, "\\x00", 4))
            return NULL;
    return tb_buf_putc(tmp, 0) ? NULL : (const char *)tmp->data;
}

/* The regex (NUL-terminated, in re) of the strings that are none of the
 * strings ns; 1 when no string qualifies. */
static int not_string(sc_t *c, json_t *ns, const char *ptr, tb_buf_t *re)
{
    int r;
    {
        size_t n = json_array_size(ns), i;
        const char **names = malloc((n + 1) * sizeof *names);
        json_t *v;
        r = names ? 0 : sc_oom(c);
        json_array_foreach(ns, i, v) if (names) names[i] = json_string_value(v);
        r = r || sc_string_except(c, re, names, n) || tb_buf_putc(re, 0);
        free(names);
    }
    if (r)
        return tb_wrap(c->err, "%s/not", ptr);
    return re->len ? 0 : 1; /* every string matches */
}

/* The lexeme of strings under s's keywords (or, with regex_out, only its
 * regex there); 1 when no string qualifies. */
int sc_string_value(sc_t *c, json_t *s, const char *ptr, gr_sym_t *out, tb_buf_t *regex_out)
{
    uint64_t lo, hi;
    json_t *pat = json_object_get(s, "pattern"), *fmt = json_object_get(s, "format");
    if (sc_count(c, s, "minLength", ptr, 0, &lo) ||
        sc_count(c, s, "maxLength", ptr, GR_NO_MAX, &hi))
        return -1;
    if ((pat && !json_is_string(pat)) || (fmt && !json_is_string(fmt)))
        return sc_fail(c, ptr, "'pattern' and 'format' must be strings");
    if (lo > GR_MAX_LENGTH || (hi != GR_NO_MAX && hi > GR_MAX_LENGTH))
        return sc_fail(c, ptr, "'%s' %llu is above the limit of %u",
                    lo > GR_MAX_LENGTH ? "minLength" : "maxLength",
                    (unsigned long long)(lo > GR_MAX_LENGTH ? lo : hi), GR_MAX_LENGTH);
    if (hi < lo)
        return 1; /* no length qualifies: the branch allows no string */
    tb_buf_t pat_nul = {0};
    const char *ps = pattern_text(pat, &pat_nul), *fs = json_string_value(fmt);
    if (pat && !ps)
        return sc_oom(c);
    if (c->opts.format_annotation)
        fs = NULL; /* see gr_schema_opts_t */
    if (fs && !gr_ecma_format(fs)) {
        if (spec_format(fs) && !c->lenient) {
            tb_buf_free(&pat_nul);
            return sc_fail(c, ptr, "format '%s' is not supported", fs);
        }
        fs = NULL; /* an annotation, see spec_format; or x-guidance's lenient */
    }
    json_t *np = json_object_get(s, NOT_PATTERN), *ns = json_object_get(s, NOT_STRINGS);
    tb_buf_t re = {0};
    int r = sc_ecma_string(c, &re, ps, fs, (uint32_t)lo, (uint32_t)hi);
    if (r < 0)
        tb_wrap(c->err, "%s", ptr);
    /* not pattern, not these strings: as look-aheads before the rest (or
     * alone, where nothing else constrains the string) */
    int plain = !pat && !fs && !lo && hi == GR_NO_MAX;
    tb_buf_free(&pat_nul);
    for (int k = 0; k < 2 && r == 0; k++) {
        json_t *x = k ? ns : np;
        tb_buf_t nr = {0}, both = {0};
        if (!x)
            continue;
        if (!k) {
            /* not a pattern: (?!P) before the rest, P the pattern's JSON
             * string lexeme (a lexeme that begins with a whole one is that
             * one), the rest any string without lone surrogates where
             * nothing else constrains it, as the classes of names are */
            tb_buf_t nul = {0};
            const char *p = pattern_text(x, &nul);
            r = !p ? sc_oom(c) : sc_ecma_string(c, &nr, p, NULL, 0, GR_NO_MAX);
            tb_buf_free(&nul);
            if (r < 0) {
                tb_wrap(c->err, "%s/not", ptr);
                break;
            }
            size_t need = gr_ecma_lookahead_len((const char *)nr.data, nr.len, c->sets);
            if (r == 0 && (tb_buf_put(&both, "(?!", 3) || tb_buf_put(&both, nr.data, need) ||
                           tb_buf_put(&both, ")", 1)))
                r = sc_oom(c);
            tb_buf_t rest = {0};
            if (plain && r >= 0 && (rest.len = 0, sc_string_except(c, &rest, NULL, 0)))
                r = -1;
            if (r >= 0 && tb_buf_put(&both, plain ? rest.data : re.data, plain ? rest.len : re.len))
                r = sc_oom(c);
            r = r > 0 ? 0 : r; /* a pattern that matches nothing excludes nothing */
            tb_buf_free(&rest);
            tb_buf_free(&nr);
            tb_buf_free(&re);
            re = both;
            plain = 0;
            continue;
        }
        r = not_string(c, x, ptr, &nr);
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
    /* the other patterns of an allOf: look-aheads likewise */
    json_t *more = json_object_get(s, PATTERNS), *mp;
    size_t mi;
    json_array_foreach(more, mi, mp) {
        tb_buf_t pr = {0}, both = {0};
        if (r != 0)
            break;
        if (!json_is_string(mp)) {
            r = sc_fail(c, ptr, "'pattern' must be a string");
            break;
        }
        r = sc_ecma_string(c, &pr, json_string_value(mp), NULL, 0, GR_NO_MAX);
        if (r < 0)
            tb_wrap(c->err, "%s", ptr);
        if (r == 0 && (tb_buf_put(&both, "(?=(?:", 6) || tb_buf_put(&both, pr.data, pr.len) ||
                       tb_buf_put(&both, ")$)", 3) || tb_buf_put(&both, re.data, re.len)))
            r = sc_oom(c);
        tb_buf_free(&pr);
        tb_buf_free(&re);
        re = both;
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
        r = ps || fs || lo || hi != GR_NO_MAX || np || ns || more
                ? sc_named_lexeme(c, (const char *)re.data, "string", ptr, out)
                : sc_lexeme(c, (const char *)re.data, "STRING", out);
    tb_buf_free(&re);
    return r;
}
