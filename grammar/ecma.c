/*
 * ecma: ECMA-262 patterns, formats and length bounds as regexes over JSON
 * string lexemes (ecma.h).
 *
 * A pattern is parsed into an AST (ast_t nodes in an arena), optionally
 * cut to a length range, and written out as a regex.  Anchors are written
 * away with four languages per subpattern (anch_t): the strings it matches
 * along paths that pass no anchor (N), a ^ only (S), a $ only (E) or both
 * (SE).  A ^ holds only where everything before it matched nothing, a $
 * only where everything after it does, so concatenation keeps a path
 * through an anchor only when the other side can be empty; the search then
 * pads N with any string on both sides, S on the right, E on the left.
 */
#include "ecma.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/hash.h"
#include "../base/utf8.h"
#include "../lexer/deriv.h"
#include "../lexer/regex.h"
#include "cfg.h"

#define CP_MAX 0x10FFFFu
#define ANCHOR_UNROLL 16 /* largest bound of a repetition holding an anchor */

/* ---- code point sets: sorted, disjoint [lo, hi] pairs ------------------ */

typedef TB_VEC(uint32_t) cps_t;

static int cps_add(cps_t *s, uint32_t lo, uint32_t hi)
{
    if (tb_vec_reserve(s, 2))
        return -1;
    s->data[s->len++] = lo;
    s->data[s->len++] = hi;
    return 0;
}

static int cmp_pair(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Sorts and merges the pairs, and drops the surrogates: in place, but where
 * a range holds surrogates (a pattern's set of one letter went through two
 * new vectors, 740 instructions, 19M of Github_hard---o46658's patterns). */
static int cps_norm(cps_t *s)
{
    /* most sets come in order already (a class's ranges, a DFA's atoms) */
    size_t at = 2;
    while (at < s->len && s->data[at] >= s->data[at - 2])
        at += 2;
    if (at < s->len)
        qsort(s->data, s->len / 2, 2 * sizeof(uint32_t), cmp_pair);
    size_t n = 0, sur = 0;
    for (size_t i = 0; i < s->len; i += 2) {
        uint32_t lo = s->data[i], hi = s->data[i + 1];
        if (n && lo <= s->data[n - 1] + 1) {
            if (hi > s->data[n - 1])
                s->data[n - 1] = hi;
        } else {
            s->data[n++] = lo;
            s->data[n++] = hi;
        }
    }
    s->len = n;
    for (size_t i = 0; i < s->len; i += 2)
        sur |= s->data[i] <= 0xDFFF && s->data[i + 1] >= 0xD800;
    if (!sur)
        return 0;
    cps_t t = {0};
    for (size_t i = 0; i < s->len; i += 2) {
        uint32_t lo = s->data[i], hi = s->data[i + 1];
        int r = 0;
        if (lo < 0xD800)
            r |= cps_add(&t, lo, hi < 0xD800 ? hi : 0xD7FF);
        if (hi > 0xDFFF)
            r |= cps_add(&t, lo > 0xDFFF ? lo : 0xE000, hi);
        if (r) {
            free(t.data);
            return -1;
        }
    }
    free(s->data);
    *s = t;
    return 0;
}

/* The complement of a normalized set within [0, CP_MAX]. */
static int cps_negate(cps_t *s)
{
    cps_t o = {0};
    uint32_t next = 0;
    int r = 0;
    for (size_t i = 0; i < s->len; i += 2) {
        if (s->data[i] > next)
            r |= cps_add(&o, next, s->data[i] - 1);
        next = s->data[i + 1] + 1;
    }
    if (next <= CP_MAX)
        r |= cps_add(&o, next, CP_MAX);
    free(s->data);
    *s = o;
    return r ? -1 : cps_norm(s);
}

/* ---- the AST ------------------------------------------------------------ */

enum { A_SET, A_CAT, A_ALT, A_REP, A_BOL, A_EOL };

typedef struct ast {
    int kind;
    struct ast **kid; /* A_CAT, A_ALT: nkid children; A_REP: kid[0] */
    size_t nkid, kcap;
    uint32_t min, max; /* A_REP, max GR_NO_MAX for no bound */
    cps_t set;         /* A_SET */
} ast_t;

typedef struct {
    const char *p;
    size_t len, pos;
    TB_VEC(ast_t *) all; /* arena: every node, freed together */
    tb_err_t *err;
    const char *what;  /* "pattern" or "format" for messages */
    const char *label; /* what messages quote: the pattern, or the format's name */
    int depth;
    int len_inexact; /* restrict_len met a shape it does not rewrite */
    gr_ecma_sets_t *sets; /* the compile's kept sets' spellings, or NULL */
} parser_t;

static int perr(parser_t *ps, size_t at, const char *why)
{
    return tb_fail(ps->err, "%s '%s' at offset %zu: %s", ps->what, ps->label,
                   at, why);
}

static ast_t *node(parser_t *ps, int kind)
{
    ast_t *a = calloc(1, sizeof *a);
    if (!a || tb_vec_push(&ps->all, a)) {
        free(a);
        tb_fail(ps->err, "out of memory");
        return NULL;
    }
    a->kind = kind;
    return a;
}

static int add_kid(parser_t *ps, ast_t *a, ast_t *k)
{
    /* doubled: a sequence has a kid per letter */
    if (a->nkid == a->kcap &&
        tb_grow((void **)&a->kid, &a->kcap, a->nkid, 1, sizeof *a->kid))
        return tb_fail(ps->err, "out of memory");
    a->kid[a->nkid++] = k;
    return 0;
}

static void arena_free(parser_t *ps)
{
    for (size_t i = 0; i < ps->all.len; i++) {
        free(ps->all.data[i]->kid);
        free(ps->all.data[i]->set.data);
        free(ps->all.data[i]);
    }
    free(ps->all.data);
    ps->all.data = NULL;
    ps->all.len = ps->all.cap = 0;
}

/* \d \w \s and their negations into s; 0 when c names none of them. */
static int class_escape(cps_t *s, char c, int *r)
{
    cps_t t = {0};
    int neg = c == 'D' || c == 'W' || c == 'S';
    switch (c) {
    case 'd': case 'D':
        *r = cps_add(&t, '0', '9');
        break;
    case 'w': case 'W':
        *r = cps_add(&t, '0', '9') | cps_add(&t, 'A', 'Z') | cps_add(&t, 'a', 'z') |
             cps_add(&t, '_', '_');
        break;
    case 's': case 'S':
        /* ECMA-262 WhiteSpace and LineTerminator (Unicode 15 Zs). */
        *r = cps_add(&t, 0x09, 0x0D) | cps_add(&t, 0x20, 0x20) | cps_add(&t, 0xA0, 0xA0) |
             cps_add(&t, 0x1680, 0x1680) | cps_add(&t, 0x2000, 0x200A) |
             cps_add(&t, 0x2028, 0x2029) | cps_add(&t, 0x202F, 0x202F) |
             cps_add(&t, 0x205F, 0x205F) | cps_add(&t, 0x3000, 0x3000) |
             cps_add(&t, 0xFEFF, 0xFEFF);
        break;
    default:
        return 0;
    }
    if (!*r && neg)
        *r = cps_norm(&t) || cps_negate(&t);
    for (size_t i = 0; !*r && i < t.len; i += 2)
        *r = cps_add(s, t.data[i], t.data[i + 1]);
    free(t.data);
    return 1;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* n hex digits at ps->pos into *cp; 0 if they are not there. */
static int read_hex(parser_t *ps, size_t n, uint32_t *cp)
{
    if (ps->pos + n > ps->len)
        return 0;
    uint32_t v = 0;
    for (size_t i = 0; i < n; i++) {
        int h = hexval(ps->p[ps->pos + i]);
        if (h < 0)
            return 0;
        v = v * 16 + (uint32_t)h;
    }
    ps->pos += n;
    *cp = v;
    return 1;
}

/* \u escapes: \uHHHH (a surrogate pair of two is one code point) and
 * \u{H...}.  ps->pos is past the 'u'. */
static int read_u(parser_t *ps, size_t at, uint32_t *cp)
{
    if (ps->pos < ps->len && ps->p[ps->pos] == '{') {
        ps->pos++;
        uint32_t v = 0;
        size_t n = 0;
        int h;
        while (ps->pos < ps->len && (h = hexval(ps->p[ps->pos])) >= 0 && v <= CP_MAX) {
            v = v * 16 + (uint32_t)h;
            ps->pos++;
            n++;
        }
        if (!n || v > CP_MAX || ps->pos >= ps->len || ps->p[ps->pos] != '}')
            return perr(ps, at, "bad \\u{...} escape");
        ps->pos++;
        *cp = v;
        return 0;
    }
    if (!read_hex(ps, 4, cp))
        return perr(ps, at, "bad \\u escape");
    uint32_t lo;
    size_t save = ps->pos;
    if (*cp >= 0xD800 && *cp <= 0xDBFF && ps->pos + 1 < ps->len && ps->p[ps->pos] == '\\' &&
        ps->p[ps->pos + 1] == 'u') {
        ps->pos += 2;
        if (read_hex(ps, 4, &lo) && lo >= 0xDC00 && lo <= 0xDFFF)
            *cp = 0x10000 + ((*cp - 0xD800) << 10) + (lo - 0xDC00);
        else
            ps->pos = save;
    }
    return 0;
}

/* An escape after '\' (ps->pos past it): a code point into *cp (returns
 * 0), a class added to s (returns 1), or -1. */
static int parse_escape(parser_t *ps, int in_class, uint32_t *cp, cps_t *s)
{
    size_t at = ps->pos - 1;
    if (ps->pos >= ps->len)
        return perr(ps, at, "pattern ends with a backslash");
    char c = ps->p[ps->pos++];
    int r = 0;
    if (class_escape(s, c, &r))
        return r ? tb_fail(ps->err, "out of memory") : 1;
    switch (c) {
    case 't': *cp = '\t'; return 0;
    case 'n': *cp = '\n'; return 0;
    case 'v': *cp = '\v'; return 0;
    case 'f': *cp = '\f'; return 0;
    case 'r': *cp = '\r'; return 0;
    case 'b':
        if (in_class) {
            *cp = '\b';
            return 0;
        }
        return perr(ps, at, "word boundary assertions (\\b, \\B) are not supported");
    case 'B':
        return perr(ps, at, "word boundary assertions (\\b, \\B) are not supported");
    case '0':
        if (ps->pos < ps->len && ps->p[ps->pos] >= '0' && ps->p[ps->pos] <= '9')
            return perr(ps, at, "octal escapes are not supported");
        *cp = 0;
        return 0;
    case 'c':
        if (ps->pos < ps->len && ((ps->p[ps->pos] | 0x20) >= 'a' && (ps->p[ps->pos] | 0x20) <= 'z')) {
            *cp = (uint32_t)(ps->p[ps->pos++] % 32);
            return 0;
        }
        return perr(ps, at, "bad \\c escape");
    case 'x':
        if (!read_hex(ps, 2, cp))
            return perr(ps, at, "bad \\x escape");
        return 0;
    case 'u':
        return read_u(ps, at, cp);
    case 'p': case 'P':
        return perr(ps, at, "Unicode property escapes (\\p, \\P) are not supported");
    case 'k':
        return perr(ps, at, "back-references are not supported");
    default:
        if (c >= '1' && c <= '9')
            return perr(ps, at, "back-references are not supported");
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
            return perr(ps, at, "unknown escape");
        ps->pos--;
        break;
    }
    /* An identity escape: the (possibly multi-byte) character itself. */
    size_t n = tb_utf8_decode((const uint8_t *)ps->p + ps->pos, ps->len - ps->pos, cp);
    if (!n)
        return perr(ps, ps->pos, "invalid UTF-8");
    ps->pos += n;
    return 0;
}

static int read_literal(parser_t *ps, uint32_t *cp)
{
    size_t n = tb_utf8_decode((const uint8_t *)ps->p + ps->pos, ps->len - ps->pos, cp);
    if (!n)
        return perr(ps, ps->pos, "invalid UTF-8");
    ps->pos += n;
    return 0;
}

/* A class after '[' (ps->pos past it) into s (normalized). */
static int parse_class(parser_t *ps, cps_t *s)
{
    size_t at = ps->pos - 1;
    int neg = 0;
    if (ps->pos < ps->len && ps->p[ps->pos] == '^') {
        neg = 1;
        ps->pos++;
    }
    while (1) {
        if (ps->pos >= ps->len)
            return perr(ps, at, "unterminated character class");
        if (ps->p[ps->pos] == ']') {
            ps->pos++;
            break;
        }
        uint32_t lo, hi;
        int k;
        size_t item = ps->pos;
        if (ps->p[ps->pos] == '\\') {
            ps->pos++;
            k = parse_escape(ps, 1, &lo, s);
        } else
            k = read_literal(ps, &lo);
        if (k < 0)
            return -1;
        if (k == 1) {
            if (ps->pos + 1 < ps->len && ps->p[ps->pos] == '-' && ps->p[ps->pos + 1] != ']')
                return perr(ps, item, "a class escape cannot start a range");
            continue;
        }
        hi = lo;
        if (ps->pos + 1 < ps->len && ps->p[ps->pos] == '-' && ps->p[ps->pos + 1] != ']') {
            ps->pos++;
            cps_t none = {0};
            if (ps->p[ps->pos] == '\\') {
                ps->pos++;
                k = parse_escape(ps, 1, &hi, &none);
            } else
                k = read_literal(ps, &hi);
            free(none.data);
            if (k < 0)
                return -1;
            if (k == 1)
                return perr(ps, item, "a class escape cannot end a range");
            if (hi < lo)
                return perr(ps, item, "range out of order in character class");
        }
        if (cps_add(s, lo, hi))
            return tb_fail(ps->err, "out of memory");
    }
    if (cps_norm(s) || (neg && cps_negate(s)))
        return tb_fail(ps->err, "out of memory");
    return 0;
}

/* {n}, {n,}, {n,m} at ps->pos: 1 and the bounds when there, 0 when the
 * brace is a literal (Annex B), -1 on error. */
static int parse_bound(parser_t *ps, uint32_t *n, uint32_t *m)
{
    size_t at = ps->pos, i = ps->pos + 1;
    uint64_t a = 0, b = 0;
    size_t da = 0, db = 0;
    while (i < ps->len && ps->p[i] >= '0' && ps->p[i] <= '9' && a <= GR_MAX_LENGTH)
        a = a * 10 + (uint64_t)(ps->p[i++] - '0'), da++;
    int comma = i < ps->len && ps->p[i] == ',';
    if (comma)
        for (i++; i < ps->len && ps->p[i] >= '0' && ps->p[i] <= '9' && b <= GR_MAX_LENGTH;)
            b = b * 10 + (uint64_t)(ps->p[i++] - '0'), db++;
    if (!da || i >= ps->len || ps->p[i] != '}')
        return 0;
    if (a > GR_MAX_LENGTH || b > GR_MAX_LENGTH)
        return perr(ps, at, "repetition bound above the limit of 1000000");
    *n = (uint32_t)a;
    *m = !comma ? (uint32_t)a : db ? (uint32_t)b : GR_NO_MAX;
    if (*m < *n)
        return perr(ps, at, "repetition bounds out of order");
    ps->pos = i + 1;
    return 1;
}

static ast_t *parse_alt(parser_t *ps);

static int is_anchor(const ast_t *a) { return a->kind == A_BOL || a->kind == A_EOL; }

/* One atom with its quantifier; NULL with *end set at | ) or the end. */
static ast_t *parse_piece(parser_t *ps, int *end)
{
    *end = 0;
    if (ps->pos >= ps->len || ps->p[ps->pos] == '|' || ps->p[ps->pos] == ')') {
        *end = 1;
        return NULL;
    }
    size_t at = ps->pos;
    char c = ps->p[ps->pos];
    ast_t *a = NULL;
    if (c == '*' || c == '+' || c == '?') {
        perr(ps, at, "nothing to repeat");
        return NULL;
    }
    if (c == '(') {
        ps->pos++;
        if (ps->pos < ps->len && ps->p[ps->pos] == '?') {
            const char *q = ps->p + ps->pos + 1;
            size_t left = ps->len - ps->pos - 1;
            if (left && (q[0] == '=' || q[0] == '!'))
                return perr(ps, at, "look-ahead assertions are not supported"), NULL;
            if (left > 1 && q[0] == '<' && (q[1] == '=' || q[1] == '!'))
                return perr(ps, at, "look-behind assertions are not supported"), NULL;
            if (left && q[0] == ':') {
                ps->pos += 2;
            } else if (left && q[0] == '<') {
                while (ps->pos < ps->len && ps->p[ps->pos] != '>')
                    ps->pos++;
                if (ps->pos >= ps->len)
                    return perr(ps, at, "unterminated group name"), NULL;
                ps->pos++;
            } else
                return perr(ps, at, "unsupported group syntax"), NULL;
        }
        if (++ps->depth > 200)
            return perr(ps, at, "groups nested too deeply"), NULL;
        a = parse_alt(ps);
        ps->depth--;
        if (!a)
            return NULL;
        if (ps->pos >= ps->len || ps->p[ps->pos] != ')')
            return perr(ps, at, "unbalanced parenthesis"), NULL;
        ps->pos++;
    } else if (c == '^' || c == '$') {
        ps->pos++;
        if (!(a = node(ps, c == '^' ? A_BOL : A_EOL)))
            return NULL;
    } else {
        if (!(a = node(ps, A_SET)))
            return NULL;
        uint32_t cp;
        int k = 0;
        if (c == '[') {
            ps->pos++;
            k = parse_class(ps, &a->set) ? -1 : 2;
        } else if (c == '.') {
            ps->pos++;
            k = cps_add(&a->set, '\n', '\n') || cps_add(&a->set, '\r', '\r') ||
                        cps_add(&a->set, 0x2028, 0x2029) || cps_norm(&a->set) ||
                        cps_negate(&a->set)
                    ? tb_fail(ps->err, "out of memory")
                    : 2;
        } else if (c == '\\') {
            ps->pos++;
            k = parse_escape(ps, 0, &cp, &a->set);
        } else
            k = read_literal(ps, &cp);
        if (k < 0)
            return NULL;
        if (k == 0 && cps_add(&a->set, cp, cp))
            return tb_fail(ps->err, "out of memory"), NULL;
        if (k != 2 && cps_norm(&a->set))
            return tb_fail(ps->err, "out of memory"), NULL;
    }
    /* One quantifier (and a lazy '?', the same language). */
    if (ps->pos >= ps->len)
        return a;
    size_t qat = ps->pos;
    char q = ps->p[ps->pos];
    uint32_t n, m;
    if (q == '*')
        n = 0, m = GR_NO_MAX, ps->pos++;
    else if (q == '+')
        n = 1, m = GR_NO_MAX, ps->pos++;
    else if (q == '?')
        n = 0, m = 1, ps->pos++;
    else if (q == '{') {
        int rc = parse_bound(ps, &n, &m);
        if (rc < 0)
            return NULL;
        if (rc == 0)
            return a;
    } else
        return a;
    if (is_anchor(a))
        return perr(ps, qat, "nothing to repeat"), NULL;
    if (ps->pos < ps->len && ps->p[ps->pos] == '?')
        ps->pos++;
    if (ps->pos < ps->len && ps->p[ps->pos] && strchr("*+?{", ps->p[ps->pos]) &&
        !(ps->p[ps->pos] == '{' && parse_bound(ps, &(uint32_t){0}, &(uint32_t){0}) == 0))
        return perr(ps, ps->pos, "nothing to repeat"), NULL;
    ast_t *r = node(ps, A_REP);
    if (!r || add_kid(ps, r, a))
        return NULL;
    r->min = n;
    r->max = m;
    return r;
}

static ast_t *parse_seq(parser_t *ps)
{
    ast_t *cat = node(ps, A_CAT);
    if (!cat)
        return NULL;
    int end;
    ast_t *p;
    while ((p = parse_piece(ps, &end)))
        if (add_kid(ps, cat, p))
            return NULL;
    return end ? cat : NULL;
}

static ast_t *parse_alt(parser_t *ps)
{
    ast_t *alt = node(ps, A_ALT), *s;
    if (!alt || !(s = parse_seq(ps)) || add_kid(ps, alt, s))
        return NULL;
    while (ps->pos < ps->len && ps->p[ps->pos] == '|') {
        ps->pos++;
        if (!(s = parse_seq(ps)) || add_kid(ps, alt, s))
            return NULL;
    }
    return alt;
}

static ast_t *parse(parser_t *ps)
{
    ast_t *a = parse_alt(ps);
    if (a && ps->pos < ps->len) {
        perr(ps, ps->pos, "unbalanced parenthesis");
        return NULL;
    }
    return a;
}

/* ---- lengths and cutting to a length range ------------------------------ */

static uint32_t sat_add(uint32_t a, uint32_t b)
{
    return a == GR_NO_MAX || b == GR_NO_MAX || (uint64_t)a + b >= GR_NO_MAX ? GR_NO_MAX : a + b;
}

static uint32_t sat_mul(uint32_t a, uint32_t b)
{
    if (!a || !b)
        return 0;
    return a == GR_NO_MAX || b == GR_NO_MAX || (uint64_t)a * b >= GR_NO_MAX ? GR_NO_MAX : a * b;
}

/* The shortest and longest match (anchors are empty); min GR_NO_MAX for
 * the empty language. */
static void lengths(const ast_t *a, uint32_t *lo, uint32_t *hi)
{
    uint32_t l, h;
    switch (a->kind) {
    case A_SET:
        *lo = a->set.len ? 1 : GR_NO_MAX;
        *hi = 1;
        return;
    case A_CAT:
        *lo = *hi = 0;
        for (size_t i = 0; i < a->nkid; i++) {
            lengths(a->kid[i], &l, &h);
            *lo = sat_add(*lo, l);
            *hi = sat_add(*hi, h);
        }
        return;
    case A_ALT:
        *lo = GR_NO_MAX;
        *hi = 0;
        for (size_t i = 0; i < a->nkid; i++) {
            lengths(a->kid[i], &l, &h);
            *lo = l < *lo ? l : *lo;
            *hi = h > *hi ? h : *hi;
        }
        return;
    case A_REP:
        lengths(a->kid[0], &l, &h);
        *lo = l == GR_NO_MAX ? (a->min ? GR_NO_MAX : 0) : sat_mul(l, a->min);
        *hi = sat_mul(h, a->max);
        return;
    default:
        *lo = *hi = 0;
    }
}

static int has_anchor(const ast_t *a)
{
    if (is_anchor(a))
        return 1;
    for (size_t i = 0; i < a->nkid; i++)
        if (has_anchor(a->kid[i]))
            return 1;
    return 0;
}

/* a restricted to matches of lo..hi code points; NULL with err set (out of
 * memory) or with ps->len_inexact set where the cases below do not write
 * that exactly. */
static ast_t *restrict_len(parser_t *ps, ast_t *a, uint32_t lo, uint32_t hi)
{
    uint32_t l, h;
    lengths(a, &l, &h);
    if (l >= lo && h <= hi)
        return a;
    if (l == GR_NO_MAX || l > hi || h < lo)
        return node(ps, A_SET); /* nothing */
    if (a->kind == A_ALT) {
        ast_t *o = node(ps, A_ALT), *k;
        for (size_t i = 0; o && i < a->nkid; i++)
            if (!(k = restrict_len(ps, a->kid[i], lo, hi)) || add_kid(ps, o, k))
                return NULL;
        return o;
    }
    if (a->kind == A_REP) {
        uint32_t kl, kh;
        lengths(a->kid[0], &kl, &kh);
        if (kl == kh && kl > 0) {
            ast_t *o = node(ps, A_REP);
            if (!o || add_kid(ps, o, a->kid[0]))
                return NULL;
            uint32_t mn = (lo + kl - 1) / kl, mx = hi == GR_NO_MAX ? GR_NO_MAX : hi / kl;
            o->min = mn > a->min ? mn : a->min;
            o->max = mx < a->max ? mx : a->max;
            return o->min <= o->max ? o : node(ps, A_SET);
        }
    }
    if (a->kind == A_CAT) {
        size_t var = a->nkid;
        uint32_t fixed = 0;
        for (size_t i = 0; i < a->nkid; i++) {
            uint32_t kl, kh;
            lengths(a->kid[i], &kl, &kh);
            if (kl == kh) {
                fixed = sat_add(fixed, kl);
            } else if (var == a->nkid) {
                var = i;
            } else {
                var = a->nkid + 1;
                break;
            }
        }
        if (var < a->nkid) {
            ast_t *o = node(ps, A_CAT), *k;
            uint32_t klo = lo > fixed ? lo - fixed : 0;
            uint32_t khi = hi == GR_NO_MAX ? GR_NO_MAX : hi - fixed;
            if (!o || !(k = restrict_len(ps, a->kid[var], klo, khi)))
                return NULL;
            for (size_t i = 0; i < a->nkid; i++)
                if (add_kid(ps, o, i == var ? k : a->kid[i]))
                    return NULL;
            return o;
        }
    }
    ps->len_inexact = 1; /* the caller intersects instead */
    return NULL;
}

/* ---- writing regexes ----------------------------------------------------- */

/* One language: (eps ? {""} : {}) + (has ? L(re) : {}); renul: re matches
 * "".  The regex text never needs to spell the empty string. */
typedef struct {
    int eps, has, renul;
    int alt; /* re has a top-level '|': it needs a group to be concatenated */
    tb_buf_t re;
} comp_t;

typedef struct {
    comp_t c[4]; /* N, S, E, SE */
} anch_t;

enum { QN, QS, QE, QSE };

static int put(tb_buf_t *b, const char *s) { return tb_buf_put(b, s, strlen(s)); }

static int nul(const comp_t *c) { return c->eps || (c->has && c->renul); }
static int is_empty(const comp_t *c) { return !c->eps && !c->has; }

static void comp_free(comp_t *c)
{
    tb_buf_free(&c->re);
    memset(c, 0, sizeof *c);
}

static void quad_free(anch_t *q)
{
    for (int i = 0; i < 4; i++)
        comp_free(&q->c[i]);
}

/* c as an atom of a concatenation ("" when it is {""} only). */
static int put_atom(tb_buf_t *b, const comp_t *c)
{
    if (!c->has)
        return 0;
    int opt = c->eps && !c->renul;
    if (!opt && !c->alt) /* a sequence concatenates as it is */
        return tb_buf_put(b, c->re.data, c->re.len);
    return put(b, "(?:") || tb_buf_put(b, c->re.data, c->re.len) || put(b, opt ? ")?" : ")");
}

static int comp_cat(const comp_t *a, const comp_t *b, comp_t *o)
{
    memset(o, 0, sizeof *o);
    if (is_empty(a) || is_empty(b))
        return 0;
    if (put_atom(&o->re, a) || put_atom(&o->re, b))
        return -1;
    if (o->re.len) {
        o->has = 1;
        o->renul = nul(a) && nul(b);
    } else
        o->eps = 1;
    return 0;
}

/* a |= b */
static int comp_alt(comp_t *a, const comp_t *b)
{
    a->eps |= b->eps;
    if (!b->has)
        return 0;
    if (a->has && put(&a->re, "|"))
        return -1;
    if (tb_buf_put(&a->re, b->re.data, b->re.len))
        return -1;
    a->alt = a->has || b->alt;
    a->renul = a->has ? a->renul || b->renul : b->renul;
    a->has = 1;
    return 0;
}

/* a |= x . y, the concatenation written straight after a's text (comp_cat
 * into a new text, then comp_alt, copied it twice: the state elimination
 * of a long chain of states does this for every pair of states); *len:
 * the concatenation's length. */
static int comp_alt_cat(comp_t *a, const comp_t *x, const comp_t *y, size_t *len)
{
    *len = 0;
    if (is_empty(x) || is_empty(y))
        return 0;
    size_t at = a->re.len;
    if (a->has && put(&a->re, "|"))
        return -1;
    size_t start = a->re.len;
    if (put_atom(&a->re, x) || put_atom(&a->re, y))
        return -1;
    *len = a->re.len - start;
    if (!*len) { /* x . y is {""} only */
        a->re.len = at;
        a->eps = 1;
        return 0;
    }
    int renul = nul(x) && nul(y);
    a->alt = a->has;
    a->renul = a->has ? a->renul || renul : renul;
    a->has = 1;
    return 0;
}

static int put_quant(tb_buf_t *b, uint32_t m, uint32_t n)
{
    char q[48];
    if (m == 0 && n == GR_NO_MAX)
        snprintf(q, sizeof q, "*");
    else if (m == 1 && n == GR_NO_MAX)
        snprintf(q, sizeof q, "+");
    else if (m == 0 && n == 1)
        snprintf(q, sizeof q, "?");
    else if (m == n)
        snprintf(q, sizeof q, "{%u}", m);
    else if (n == GR_NO_MAX)
        snprintf(q, sizeof q, "{%u,}", m);
    else
        snprintf(q, sizeof q, "{%u,%u}", m, n);
    return put(b, q);
}

/* atom{m,n} (n > 0): one quantifier, which the lexer reads as one term
 * (a bounded repetition costs a term per count reached). */
_Static_assert(GR_MAX_LENGTH <= LEX_MAX_REPEAT, "length bounds fit one quantifier");
static int put_repeat(tb_buf_t *b, const tb_buf_t *atom, uint32_t m, uint32_t n)
{
    int r = tb_buf_put(b, atom->data, atom->len);
    return r || (m == 1 && n == 1) ? r : put_quant(b, m, n);
}

static int comp_rep(const comp_t *a, uint32_t m, uint32_t n, comp_t *o)
{
    memset(o, 0, sizeof *o);
    if (n == 0 || !a->has) {
        o->eps = n == 0 || m == 0 || a->eps;
        return 0;
    }
    if (a->eps)
        m = 0;
    tb_buf_t atom = {0};
    int r = put(&atom, "(?:") || tb_buf_put(&atom, a->re.data, a->re.len) || put(&atom, ")") ||
            put_repeat(&o->re, &atom, m, n);
    tb_buf_free(&atom);
    o->has = 1;
    o->renul = m == 0 || a->renul;
    return r;
}

/* ---- spellings ---------------------------------------------------------- */

/* A set's text is kept under a key of its spelling then its ranges, each a
 * uint32_t (the map borrows the key). */
typedef struct {
    uint32_t *key;  /* the spelling, then the set's ranges */
    size_t at, len; /* its text in gr_ecma_sets_t.text */
} set_entry_t;

struct gr_ecma_sets {
    tb_strmap_t map; /* keys' bytes -> index in entries */
    TB_VEC(set_entry_t) entries;
    tb_buf_t text;
    int spelling;     /* GR_SPELL_*, of the texts written next */
    char escapes[16]; /* llguidance's allowed escape letters */
    char *any[3];     /* gr_ecma_any_string's texts, by spelling */
    char *open_end;   /* "(?:C)*\"" under JSON's spelling (gr_ecma_lookahead_len) */
    /* the entry of each ASCII code point's set by spelling, plus one (0:
     * none yet): names are spelled a letter at a time, and each letter's
     * set was a vector made, hashed and freed */
    int32_t ascii[3][128];
};

/* The letters a spelling allows after '\\' (u: \u escapes). */
static const char *allowed_escapes(const gr_ecma_sets_t *m)
{
    return m && m->spelling != GR_SPELL_JSON ? m->escapes : "\"\\/bfnrtu";
}

int gr_ecma_sets_spell(gr_ecma_sets_t *m, int spelling)
{
    int was = m->spelling;
    m->spelling = spelling;
    return was;
}

int gr_ecma_sets_escapes(gr_ecma_sets_t *m, const char *letters, tb_err_t *err)
{
    size_t n = 0;
    for (const char *l = letters; *l; l++) {
        if (!strchr("nrbtf\\\"u", *l))
            return tb_fail(err, "'%c' is not an escape letter (those of JSON, but /, are "
                           "n r b t f \\ \" u)", *l);
        if (!memchr(m->escapes, *l, n))
            m->escapes[n++] = *l;
    }
    m->escapes[n] = 0;
    return 0;
}

/* A code point inside a class: ASCII letters and digits as themselves. */
/* c as a class member: itself if alphanumeric, else \x{HEX} (written by
 * hand: snprintf here was a tenth of a large schema's compile). */
static int put_cp(tb_buf_t *b, uint32_t c)
{
    if ((c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'))
        return tb_buf_putc(b, (uint8_t)c);
    char tmp[16] = "\\x{";
    size_t n = 3, digits = 1;
    while (digits < 8 && c >> (4 * digits))
        digits++;
    while (digits--)
        tmp[n++] = "0123456789ABCDEF"[(c >> (4 * digits)) & 15];
    tmp[n++] = '}';
    return tb_buf_put(b, tmp, n);
}

static int put_ranges(tb_buf_t *b, const cps_t *s)
{
    int r = 0;
    for (size_t i = 0; i < s->len && !r; i += 2)
        r = put_cp(b, s->data[i]) ||
            (s->data[i + 1] > s->data[i] &&
             ((s->data[i + 1] > s->data[i] + 1 && put(b, "-")) || put_cp(b, s->data[i + 1])));
    return r;
}

/* Adds to o the parts of [lo, hi] that JSON writes as themselves: not the
 * controls, '"', '\\' or the surrogates, nor DEL where del_escaped
 * (llguidance's spellings; ranges come in order, so o stays sorted and
 * disjoint without cps_norm). */
static int add_plain(cps_t *o, uint32_t lo, uint32_t hi, int del_escaped)
{
    static const uint32_t cut[][2] = {{0, 0x1F}, {'"', '"'}, {'\\', '\\'}, {0x7F, 0x7F},
                                      {0xD800, 0xDFFF}};
    for (size_t k = 0; k < sizeof cut / sizeof *cut && lo <= hi; k++) {
        if (hi < cut[k][0] || lo > cut[k][1] || (cut[k][0] == 0x7F && !del_escaped))
            continue;
        if (lo < cut[k][0] && cps_add(o, lo, cut[k][0] - 1))
            return -1;
        if (hi <= cut[k][1])
            return 0;
        lo = cut[k][1] + 1;
    }
    return lo <= hi ? cps_add(o, lo, hi) : 0;
}

/* The plain code points of s (those JSON writes as themselves) as a
 * class, or negated where that is shorter; one alone as itself.  s is
 * normalized: p (its plain members) and q (the other plain code points,
 * between its ranges) are read off it in one pass each. */
static int put_plain(tb_buf_t *b, const cps_t *s, int del_escaped)
{
    cps_t p = {0}, q = {0};
    int r = 0;
    uint32_t next = 0;
    for (size_t i = 0; i < s->len && !r; i += 2) {
        r = add_plain(&p, s->data[i], s->data[i + 1], del_escaped) ||
            (s->data[i] > next && add_plain(&q, next, s->data[i] - 1, del_escaped));
        next = s->data[i + 1] + 1;
    }
    r = r || (next <= CP_MAX && add_plain(&q, next, CP_MAX, del_escaped));
    if (!r && p.len == 2 && p.data[0] == p.data[1]) {
        r = put_cp(b, p.data[0]); /* one code point: no class (a name's letters) */
    } else if (!r && p.len) {
        tb_buf_t pos = {0}, neg = {0};
        r = put(&pos, "[") || put_ranges(&pos, &p) || put(&pos, "]") ||
            put(&neg, del_escaped ? "[^\\x00-\\x1F\\x7F\"\\\\" : "[^\\x00-\\x1F\"\\\\") ||
            put_ranges(&neg, &q) || put(&neg, "]");
        const tb_buf_t *w = neg.len < pos.len ? &neg : &pos;
        r = r || tb_buf_put(b, w->data, w->len);
        tb_buf_free(&pos);
        tb_buf_free(&neg);
    }
    free(p.data);
    free(q.data);
    return r;
}

/* Hex digits (bit d: digit d) as a class, letters in either case (JSON's
 * \uXXXX takes both): "0-7bef" -> "0-7be-fBE-F".  A run never crosses
 * from 9 to a, which ASCII does not keep adjacent.  A lone decimal digit
 * is written bare, the commonest case (every \u escape of an ASCII
 * name's letters starts 00), which the lexer reads without a class. */
static int put_nibbles(tb_buf_t *b, unsigned bits)
{
    static const char *const hex[2] = {"0123456789abcdef", "0123456789ABCDEF"};
    if (bits && !(bits & (bits - 1)) && bits < 1u << 10) /* one decimal digit: itself */
        return tb_buf_putc(b, (uint8_t)hex[0][__builtin_ctz(bits)]);
    int r = put(b, "[");
    for (int pass = 0; pass < 2; pass++)
        for (int d = pass ? 10 : 0; d < 16 && !r;) {
            if (!(bits >> d & 1)) {
                d++;
                continue;
            }
            int e = d;
            while (e + 1 < 16 && e != 9 && (bits >> (e + 1) & 1))
                e++;
            r = tb_buf_putc(b, (uint8_t)hex[pass][d]) ||
                (e > d && (put(b, "-") || tb_buf_putc(b, (uint8_t)hex[pass][e])));
            d = e + 1;
        }
    return r || put(b, "]");
}

static int put_hexdigits(tb_buf_t *b, unsigned d0, unsigned d1)
{
    return put_nibbles(b, ((2u << d1) - 1) & ~((1u << d0) - 1));
}

/* A first digit from d0 to d1, then any ndig - 1 digits. */
static int put_hex_block(tb_buf_t *b, unsigned d0, unsigned d1, unsigned ndig)
{
    char q[16] = "";
    if (ndig > 2)
        snprintf(q, sizeof q, "{%u}", ndig - 1);
    return put_hexdigits(b, d0, d1) || (ndig > 1 && (put(b, "[0-9a-fA-F]") || put(b, q)));
}

/* The ndig-digit hex texts of the values lo..hi (classic digit ranges). */
static int put_hex_range(tb_buf_t *b, uint32_t lo, uint32_t hi, unsigned ndig)
{
    if (!ndig)
        return 0;
    unsigned sh = 4 * (ndig - 1), tl = lo >> sh, th = hi >> sh;
    uint32_t full = (1u << sh) - 1, rl = lo & full, rh = hi & full;
    if (tl == th)
        return put_hexdigits(b, tl, tl) || put_hex_range(b, rl, rh, ndig - 1);
    if (!rl && rh == full) /* whole blocks: one alternative, no group */
        return put_hex_block(b, tl, th, ndig);
    unsigned from = rl ? tl + 1 : tl, to = rh != full ? th - 1 : th;
    int r = put(b, "(?:"), alts = 0;
    if (rl)
        r = r || put_hexdigits(b, tl, tl) || put_hex_range(b, rl, full, ndig - 1), alts++;
    if (from <= to)
        r = r || (alts++ && put(b, "|")) || put_hex_block(b, from, to, ndig);
    if (rh != full)
        r = r || (alts && put(b, "|")) || put_hexdigits(b, th, th) ||
            put_hex_range(b, 0, rh, ndig - 1);
    return r || put(b, ")");
}

/* The \uXXXX spellings of the members of s from 0x100 up: the BMP ones
 * but surrogates as one escape, the others as their UTF-16 surrogate pair.
 * Appends alternatives to b, a '|' before each when *alts. */
static int put_u_high(tb_buf_t *b, const cps_t *s, int *alts)
{
    int r = 0;
    for (size_t i = 0; i < s->len && !r; i += 2) {
        uint32_t lo = s->data[i] > 0x100 ? s->data[i] : 0x100, hi = s->data[i + 1];
        for (int part = 0; part < 2 && !r; part++) { /* below and above the surrogates */
            uint32_t a = part ? (lo > 0xE000 ? lo : 0xE000) : lo;
            uint32_t z = part ? (hi < 0xFFFF ? hi : 0xFFFF) : (hi < 0xD7FF ? hi : 0xD7FF);
            if (a <= z)
                r = put(b, (*alts)++ ? "|\\\\u" : "\\\\u") || put_hex_range(b, a, z, 4);
        }
        uint32_t a = lo > 0x10000 ? lo : 0x10000;
        while (a <= hi && !r) { /* one high surrogate, or a run of full ones */
            uint32_t h = 0xD800 + ((a - 0x10000) >> 10), l0 = 0xDC00 + ((a - 0x10000) & 0x3FF);
            uint32_t end = a | 0x3FF, h1 = h; /* the last code point under h */
            if (l0 == 0xDC00 && end <= hi)
                while (end + 0x400 <= hi)
                    end += 0x400, h1++;
            if (end > hi)
                end = hi;
            uint32_t l1 = 0xDC00 + ((end - 0x10000) & 0x3FF);
            r = put(b, (*alts)++ ? "|\\\\u" : "\\\\u") || put_hex_range(b, h, h1, 4) ||
                put(b, "\\\\u") || put_hex_range(b, h1 > h ? 0xDC00 : l0, h1 > h ? 0xDFFF : l1, 4);
            a = end + 1;
        }
    }
    return r;
}

/* The \uXXXX spellings of the members of s, as alternatives appended to b
 * ('|' before each when *alts): \u00XX for those below 0x100, then those
 * above as one group.  The split keeps the second part's text the same
 * for every set that holds all of 0x100 up (the complement of a set of
 * letters, at each node of a list of names), so that the lexer parses it
 * once (regex.h, lex_regex_memo_begin) rather than once per set. */
static int put_u_escapes(tb_buf_t *b, const cps_t *s, int *alts)
{
    int r = 0;
    for (size_t i = 0; i < s->len && s->data[i] < 0x100 && !r; i += 2) {
        uint32_t z = s->data[i + 1] < 0xFF ? s->data[i + 1] : 0xFF;
        r = put(b, (*alts)++ ? "|\\\\u00" : "\\\\u00") || put_hex_range(b, s->data[i], z, 2);
    }
    tb_buf_t high = {0};
    int n = 0;
    r = r || put_u_high(&high, s, &n);
    if (!r && n)
        r = put(b, (*alts)++ ? "|" : "") || (n > 1 && put(b, "(?:")) ||
            tb_buf_put(b, high.data, high.len) || (n > 1 && put(b, ")"));
    tb_buf_free(&high);
    return r;
}

/* The members of s that llguidance spells as \u00XX without its general
 * \u escapes: the controls and DEL. */
static int controls_of(const cps_t *s, cps_t *o)
{
    int r = 0;
    for (size_t i = 0; i < s->len && !r; i += 2) {
        if (s->data[i] <= 0x1F)
            r = cps_add(o, s->data[i], s->data[i + 1] < 0x1F ? s->data[i + 1] : 0x1F);
        if (s->data[i] <= 0x7F && s->data[i + 1] >= 0x7F)
            r = r || cps_add(o, 0x7F, 0x7F);
    }
    return r;
}

/* The class of set written as its members' JSON encodings in m's spelling
 * (NULL: JSON's, every one JSON allows): the plain code points as a class,
 * then the short escapes (\" \\ \/ \b \t \n \f \r, those allowed) as one
 * escape class, then the members that have one as \uXXXX (or a surrogate
 * pair), hex digits in either case.  Returns 1 if no member has a
 * spelling (nothing written), as where llguidance's allowed escapes leave
 * a control without one. */
static int put_set(tb_buf_t *b, const cps_t *s, const gr_ecma_sets_t *m)
{
    static const char shortesc[32] = {[8] = 'b', [9] = 't', [10] = 'n', [12] = 'f', [13] = 'r'};
    const char *allowed = allowed_escapes(m);
    int llg = m && m->spelling != GR_SPELL_JSON;
    tb_buf_t cls = {0}, esc = {0};
    int r = put_plain(&cls, s, llg);
    for (size_t i = 0; i < s->len && !r; i += 2)
        for (uint32_t c = s->data[i]; c <= s->data[i + 1] && c < 0x60 && !r; c++) {
            char letter = c < 0x20 ? shortesc[c] : c == '"' || c == '\\' || c == '/' ? (char)c : 0;
            if (!letter || !strchr(allowed, letter))
                continue;
            r = letter == '\\' ? put(&esc, "\\\\") : tb_buf_putc(&esc, (uint8_t)letter);
        }
    int alts = 0;
    if (!r && cls.len)
        r = tb_buf_put(b, cls.data, cls.len), alts++;
    if (!r && esc.len)
        r = put(b, alts++ ? "|\\\\[" : "\\\\[") || tb_buf_put(b, esc.data, esc.len) ||
            put(b, "]");
    if (!r && strchr(allowed, 'u')) {
        cps_t ctl = {0};
        int some = !llg || m->spelling == GR_SPELL_LLG_ANY_U;
        r = (!some && controls_of(s, &ctl)) || put_u_escapes(b, some ? s : &ctl, &alts);
        free(ctl.data);
    }
    tb_buf_free(&cls);
    tb_buf_free(&esc);
    return r ? -1 : !alts;
}

/* What matches no text (a set put_set spells in no way). */
#define NO_TEXT "[^\\x00-\\x{10FFFF}]"

/* s in JSON's spelling (patterns compiled without kept sets). */
static int comp_set(const cps_t *s, comp_t *o)
{
    memset(o, 0, sizeof *o);
    int r = s->len ? put_set(&o->re, s, NULL) : 1;
    o->has = r == 0;
    o->alt = o->re.len && memchr(o->re.data, '|', o->re.len); /* several parts */
    return r < 0 ? r : 0;
}

/* s in a group ("(?:...)"): the lexer parses a group's text once
 * (regex.h, lex_regex_memo_begin), and the sets of except's nodes recur
 * (each node with one next letter has the same). */
static int put_set_group(tb_buf_t *b, const cps_t *s, const gr_ecma_sets_t *m)
{
    if (put(b, "(?:"))
        return -1;
    int r = put_set(b, s, m);
    return r < 0 || (r == 1 && put(b, NO_TEXT)) || put(b, ")") ? -1 : 0;
}

/*
 * put_set_group's text by set (ecma.h's gr_ecma_sets_t), for except(): a
 * node's first code points that no name continues with, and each name's
 * next code point, recur all over the lists of names of a schema (every
 * node whose one next letter is 'e'), and writing their \\u escapes anew
 * at each node was most of a large object's compile (a Kubernetes schema:
 * 1.9 MB of such text over 88 lists of names).
 */
gr_ecma_sets_t *gr_ecma_sets_new(void)
{
    gr_ecma_sets_t *m = calloc(1, sizeof *m);
    if (m && tb_strmap_init(&m->map, 64)) {
        free(m);
        return NULL;
    }
    if (m)
        strcpy(m->escapes, "nrbtf\\\"u"); /* llguidance's default: all it knows */
    return m;
}

void gr_ecma_sets_free(gr_ecma_sets_t *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->entries.len; i++)
        free(m->entries.data[i].key);
    for (size_t i = 0; i < sizeof m->any / sizeof *m->any; i++)
        free(m->any[i]);
    free(m->open_end);
    free(m->entries.data);
    tb_strmap_free(&m->map);
    tb_buf_free(&m->text);
    free(m);
}

char *gr_ecma_any_char(gr_ecma_sets_t *m)
{
    cps_t all = {0};
    tb_buf_t b = {0};
    int r = cps_add(&all, 0, CP_MAX) || cps_norm(&all) || put_set_group(&b, &all, m) ||
            tb_buf_putc(&b, 0);
    free(all.data);
    if (r)
        tb_buf_free(&b);
    return r ? NULL : (char *)b.data;
}

const char *gr_ecma_any_string(gr_ecma_sets_t *m)
{
    if (m->spelling == GR_SPELL_JSON)
        return GR_JSON_ANY_STRING;
    char **any = &m->any[m->spelling];
    if (*any)
        return *any;
    cps_t all = {0};
    tb_buf_t b = {0};
    int r = cps_add(&all, 0, CP_MAX) || cps_norm(&all) || put(&b, "\"") ||
            put_set_group(&b, &all, m) || put(&b, "*\"") || tb_buf_putc(&b, 0);
    free(all.data);
    if (r)
        tb_buf_free(&b);
    return *any = r ? NULL : (char *)b.data;
}

/* Appends put_set_group(s) in m's spelling to o (s normalized and never
 * empty). */
/* The entry of set s's text, made if new; -1 on memory. */
static int32_t memo_entry(gr_ecma_sets_t *m, const cps_t *s)
{
    /* the key looked up on the stack when small: most sets are found */
    uint32_t small[64];
    size_t kb = (s->len + 1) * sizeof *s->data;
    uint32_t *key = s->len < 64 ? small : malloc(kb);
    if (!key)
        return -1;
    key[0] = (uint32_t)m->spelling;
    memcpy(key + 1, s->data, kb - sizeof *s->data);
    int32_t i = tb_strmap_get(&m->map, (const uint8_t *)key, kb);
    if (i < 0) {
        set_entry_t e = {.key = key == small ? malloc(kb) : key, .at = m->text.len};
        if (!e.key)
            return -1;
        if (key == small)
            memcpy(e.key, small, kb);
        int r = put_set_group(&m->text, s, m) ||
                (e.len = m->text.len - e.at, tb_vec_push(&m->entries, e));
        if (r || tb_strmap_put(&m->map, (const uint8_t *)e.key, kb,
                               (int32_t)(m->entries.len - 1)) < 0) {
            if (r)
                free(e.key);
            return -1;
        }
        i = (int32_t)(m->entries.len - 1);
    } else if (key != small) {
        free(key);
    }
    return i;
}

static int put_entry(const gr_ecma_sets_t *m, int32_t i, tb_buf_t *o)
{
    return i < 0 ? -1 : tb_buf_put(o, m->text.data + m->entries.data[i].at,
                                   m->entries.data[i].len);
}

static int put_memo_group(gr_ecma_sets_t *m, const cps_t *s, tb_buf_t *o)
{
    return put_entry(m, memo_entry(m, s), o);
}

/* put_memo_group of the set of code point cp alone. */
static int put_memo_cp(gr_ecma_sets_t *m, uint32_t cp, tb_buf_t *o)
{
    int32_t *seen = cp < 128 ? &m->ascii[m->spelling][cp] : NULL;
    if (seen && *seen)
        return put_entry(m, *seen - 1, o);
    uint32_t pair[2] = {cp, cp};
    int32_t i = memo_entry(m, &(cps_t){pair, 2, 2});
    if (seen && i >= 0)
        *seen = i + 1;
    return put_entry(m, i, o);
}

/* comp_set of s (normalized, not empty) from the kept sets, as a group:
 * a length-bounded pattern's DFA is a chain of states whose edges spell
 * the same sets ({0,250} of a class: 250 edges alike, and writing each
 * one's \u escapes was a quarter of the compile). */
static int comp_kept_set(gr_ecma_sets_t *sets, const cps_t *s, comp_t *o)
{
    memset(o, 0, sizeof *o);
    o->has = 1;
    return put_memo_group(sets, s, &o->re);
}

static int quad_cat(const anch_t *a, const anch_t *b, anch_t *o)
{
    memset(o, 0, sizeof *o);
    int before = nul(&a->c[QN]) || nul(&a->c[QS]); /* a can be empty through no $ */
    int after = nul(&b->c[QN]) || nul(&b->c[QE]);  /* b can be empty through no ^ */
    int r = comp_cat(&a->c[QN], &b->c[QN], &o->c[QN]) ||
            comp_cat(&a->c[QS], &b->c[QN], &o->c[QS]) ||
            (before && comp_alt(&o->c[QS], &b->c[QS])) ||
            comp_cat(&a->c[QN], &b->c[QE], &o->c[QE]) ||
            (after && comp_alt(&o->c[QE], &a->c[QE])) ||
            comp_cat(&a->c[QS], &b->c[QE], &o->c[QSE]) ||
            (before && comp_alt(&o->c[QSE], &b->c[QSE])) ||
            (after && comp_alt(&o->c[QSE], &a->c[QSE]));
    if ((nul(&a->c[QE]) || nul(&a->c[QSE])) && (nul(&b->c[QS]) || nul(&b->c[QSE])))
        o->c[QSE].eps = 1; /* "$^" with nothing around */
    return r;
}

static int quad_alt(anch_t *a, const anch_t *b)
{
    for (int i = 0; i < 4; i++)
        if (comp_alt(&a->c[i], &b->c[i]))
            return -1;
    return 0;
}

static int anchored(const anch_t *q)
{
    return !is_empty(&q->c[QS]) || !is_empty(&q->c[QE]) || !is_empty(&q->c[QSE]);
}

static int emit(parser_t *ps, const ast_t *a, anch_t *o);

/* *a = *a . b in place, where a's text is a sequence that concatenates as
 * it is (comp_cat's result, without the copy of a's text); 1 when a's text
 * needs a group first (comp_cat then). */
static int comp_then(comp_t *a, const comp_t *b)
{
    if (a->has && (a->alt || (a->eps && !a->renul)))
        return 1;
    if (is_empty(a) || is_empty(b)) {
        comp_free(a);
        return 0;
    }
    int renul = nul(a) && nul(b);
    if (!a->has)
        a->re.len = 0; /* {""} only: nothing to spell */
    if (put_atom(&a->re, b))
        return -1;
    a->alt = 0;
    a->has = a->re.len > 0;
    a->renul = a->has && renul;
    a->eps = !a->has;
    return 0;
}

/* Folds *acc = *acc . q: in place where neither holds an anchor (a
 * concatenation of many pieces copied the text so far at each piece:
 * quadratic in a long sequence). */
static int quad_then(anch_t *acc, const anch_t *q)
{
    if (!anchored(acc) && !anchored(q)) {
        int r = comp_then(&acc->c[QN], &q->c[QN]);
        if (r <= 0)
            return r;
    }
    anch_t t;
    int r = quad_cat(acc, q, &t);
    quad_free(acc);
    *acc = t;
    return r;
}

static int emit_rep(parser_t *ps, const ast_t *a, anch_t *o)
{
    anch_t k = {0};
    int r = emit(ps, a->kid[0], &k);
    memset(o, 0, sizeof *o);
    if (!r && !anchored(&k)) {
        r = comp_rep(&k.c[QN], a->min, a->max, &o->c[QN]);
    } else if (!r && (a->max == GR_NO_MAX ? a->min : a->max) > ANCHOR_UNROLL) {
        r = tb_fail(ps->err, "%s '%s': an anchor inside a repetition above %u",
                    ps->what, ps->label, ANCHOR_UNROLL);
    } else if (!r) {
        /* k{m} then k? (n - m) times, or (k*) when unbounded. */
        o->c[QN].eps = 1;
        anch_t opt = {0};
        r = quad_alt(&opt, &k);
        opt.c[QN].eps = 1;
        for (uint32_t i = 0; !r && i < a->min; i++)
            r = quad_then(o, &k);
        if (!r && a->max == GR_NO_MAX) {
            anch_t star = {0};
            /* N* ; S N* ; N* E ; S N* E | SE */
            comp_t ns = {0}, t = {0};
            r = comp_rep(&k.c[QN], 0, GR_NO_MAX, &ns) || comp_alt(&star.c[QN], &ns) ||
                comp_cat(&k.c[QS], &ns, &star.c[QS]) || comp_cat(&ns, &k.c[QE], &star.c[QE]) ||
                comp_cat(&star.c[QS], &k.c[QE], &t) || comp_alt(&star.c[QSE], &t) ||
                comp_alt(&star.c[QSE], &k.c[QSE]) || quad_then(o, &star);
            comp_free(&ns);
            comp_free(&t);
            quad_free(&star);
        }
        for (uint32_t i = a->min; !r && a->max != GR_NO_MAX && i < a->max; i++)
            r = quad_then(o, &opt);
        quad_free(&opt);
    }
    quad_free(&k);
    return r;
}

static int emit(parser_t *ps, const ast_t *a, anch_t *o)
{
    memset(o, 0, sizeof *o);
    int r = 0;
    switch (a->kind) {
    case A_SET:
        return (ps->sets && a->set.len ? comp_kept_set(ps->sets, &a->set, &o->c[QN])
                                       : comp_set(&a->set, &o->c[QN]))
                   ? tb_fail(ps->err, "out of memory")
                   : 0;
    case A_BOL:
        o->c[QS].eps = 1;
        return 0;
    case A_EOL:
        o->c[QE].eps = 1;
        return 0;
    case A_CAT:
        o->c[QN].eps = 1;
        for (size_t i = 0; !r && i < a->nkid; i++) {
            anch_t k;
            r = emit(ps, a->kid[i], &k) || quad_then(o, &k);
            quad_free(&k);
        }
        return r;
    case A_ALT:
        for (size_t i = 0; !r && i < a->nkid; i++) {
            anch_t k;
            r = emit(ps, a->kid[i], &k) || quad_alt(o, &k);
            quad_free(&k);
        }
        return r;
    default:
        return emit_rep(ps, a, o);
    }
}

/* ---- the search, length bounds and the lexeme ---------------------------- */

static ast_t *any_star(parser_t *ps)
{
    ast_t *s = node(ps, A_SET), *r = node(ps, A_REP);
    if (!s || !r || cps_add(&s->set, 0, CP_MAX) || cps_norm(&s->set) || add_kid(ps, r, s))
        return NULL;
    r->max = GR_NO_MAX;
    return r;
}

/* The pattern as the language of whole strings when its anchors stand
 * only at the ends of its top-level branches: the branches grouped by the
 * sides they are anchored on, each group padded with any string on the
 * sides it is not anchored (one padding per group, not per branch: .*(a|b).*
 * keeps one automaton state where .*a.*|.*b.* keeps one per set of branches
 * found); branches anchored at both ends stay as they are.  NULL (no error)
 * otherwise. */
static ast_t *as_whole(parser_t *ps, ast_t *top)
{
    ast_t *alt = node(ps, A_ALT), *group[3] = {NULL, NULL, NULL};
    for (size_t b = 0; alt && b < top->nkid; b++) {
        ast_t *br = top->kid[b];
        size_t i = 0, j = br->nkid;
        int bol = 0, eol = 0;
        while (i < j && br->kid[i]->kind == A_BOL)
            i++, bol = 1;
        while (j > i && br->kid[j - 1]->kind == A_EOL)
            j--, eol = 1;
        ast_t *cat = node(ps, A_CAT), *pad;
        if (!cat)
            return NULL;
        uint32_t lo = 0, hi, l;
        for (size_t k = i; k < j; k++) {
            if (has_anchor(br->kid[k]))
                return NULL;
            lengths(br->kid[k], &l, &hi);
            lo = sat_add(lo, l);
        }
        if (lo == 0 && (!bol || !eol)) {
            /* found in every string (at the unanchored end) */
            if (!(pad = any_star(ps)) || add_kid(ps, cat, pad) || add_kid(ps, alt, cat))
                return NULL;
            continue;
        }
        /* at a padded end a repetition needs only its minimum: .*a{2,5}
         * is .*a{2}, .*a* is .* */
        while (!bol && i < j && br->kid[i]->kind == A_REP && !br->kid[i]->min)
            i++;
        while (!eol && j > i && br->kid[j - 1]->kind == A_REP && !br->kid[j - 1]->min)
            j--;
        for (size_t k = i; k < j; k++) {
            ast_t *x = br->kid[k];
            if (((k == i && !bol) || (k + 1 == j && !eol)) && x->kind == A_REP &&
                x->max != x->min) {
                ast_t *y = node(ps, A_REP);
                if (!y || add_kid(ps, y, x->kid[0]))
                    return NULL;
                y->min = y->max = x->min;
                x = y;
            }
            if (add_kid(ps, cat, x))
                return NULL;
        }
        int g = bol * 2 + eol;
        if (g == 3) { /* anchored at both ends: as it is (restrict_len reads these) */
            if (add_kid(ps, alt, cat))
                return NULL;
            continue;
        }
        if (!group[g] && !(group[g] = node(ps, A_ALT)))
            return NULL;
        if (add_kid(ps, group[g], cat))
            return NULL;
    }
    for (int g = 0; alt && g < 3; g++) {
        if (!group[g])
            continue;
        ast_t *cat = node(ps, A_CAT), *pad;
        if (!cat || (!(g & 2) && (!(pad = any_star(ps)) || add_kid(ps, cat, pad))) ||
            add_kid(ps, cat, group[g]) ||
            (!(g & 1) && (!(pad = any_star(ps)) || add_kid(ps, cat, pad))) ||
            add_kid(ps, alt, cat))
            return NULL;
    }
    return alt;
}

/* The search of a pattern with anchors anywhere: .*N.* | S.* | .*E | SE */
static int search(parser_t *ps, ast_t *top, comp_t *o)
{
    anch_t q;
    comp_t any = {0}, t = {0}, u = {0};
    ast_t *star = any_star(ps);
    anch_t sq;
    if (!star || emit(ps, star, &sq))
        return -1;
    comp_alt(&any, &sq.c[QN]);
    quad_free(&sq);
    int r = emit(ps, top, &q);
    memset(o, 0, sizeof *o);
    if (!r)
        r = comp_cat(&any, &q.c[QN], &t) || comp_cat(&t, &any, &u) || comp_alt(o, &u);
    comp_free(&t);
    comp_free(&u);
    if (!r)
        r = comp_cat(&q.c[QS], &any, &t) || comp_alt(o, &t);
    comp_free(&t);
    if (!r)
        r = comp_cat(&any, &q.c[QE], &t) || comp_alt(o, &t) || comp_alt(o, &q.c[QSE]);
    comp_free(&t);
    comp_free(&any);
    quad_free(&q);
    return r;
}

/* The JSON-encoded content regex (no quotes) into *o, restricted to lo..hi
 * code points where a rewrite of the pattern says that exactly; where not,
 * *len_left is set and the bounds are the caller's to apply. */
static int content(parser_t *ps, uint32_t lo, uint32_t hi, comp_t *o, int *len_left)
{
    ast_t *top = parse(ps), *whole;
    if (!top)
        return -1;
    int bounded = lo || hi != GR_NO_MAX;
    *len_left = 0;
    whole = as_whole(ps, top);
    if (!whole) {
        uint32_t l, h;
        lengths(top, &l, &h);
        *len_left = lo > l || hi != GR_NO_MAX;
        return search(ps, top, o);
    }
    if (bounded) {
        ast_t *cut = restrict_len(ps, whole, lo, hi);
        if (!cut && !ps->len_inexact)
            return -1;
        *len_left = !cut;
        whole = cut ? cut : whole;
    }
    anch_t q;
    if (emit(ps, whole, &q))
        return -1;
    *o = q.c[QN];
    memset(&q.c[QN], 0, sizeof q.c[QN]);
    quad_free(&q);
    return 0;
}

/* The content of `pattern` (a search) or of `format` (whichever is given),
 * bounded where that can be written exactly (*len_left otherwise). */
static int constraint(const char *pattern, const char *format, uint32_t lo, uint32_t hi,
                      comp_t *o, int *len_left, gr_ecma_sets_t *sets, tb_err_t *err)
{
    const char *p = pattern ? pattern : format ? gr_ecma_format(format) : "^[^]*$";
    if (!p)
        return tb_fail(err, "unknown format '%s'", format);
    parser_t ps = {.p = p, .len = strlen(p), .err = err,
                   .what = format ? "format" : pattern ? "pattern" : "string",
                   .label = format ? format : p, .sets = sets};
    int r = content(&ps, lo, hi, o, len_left);
    arena_free(&ps);
    return r;
}

/* ---- look-aheads at the start ---------------------------------------------
 *
 * ^(?=A)(?!B)Y (one branch, the look-aheads right after its ^) matches the
 * strings that ^(?:Y) matches, that ^(?:A) matches and that ^(?:B) does
 * not: a look-ahead at the start of the string asks whether the string
 * begins with a match of it (a $ in it the end).  Each is a JSON string
 * lexeme, and the lexer's top-level look-aheads intersect whole lexemes
 * (lexer/regex.h): "(?=A')(?!B')Y'" with A' B' Y' their lexemes.
 */

#define LA_MAX 16

typedef struct {
    size_t n;
    size_t at[LA_MAX], len[LA_MAX]; /* the bodies */
    int neg[LA_MAX];
    size_t rest;                    /* where Y begins */
} leading_t;

/* The end of the group opened at p[i] ('('), past its ')'; 0 if unbalanced. */
static size_t group_end(const char *p, size_t len, size_t i)
{
    int depth = 0, in_class = 0;
    for (; i < len; i++) {
        char c = p[i];
        if (c == '\\') {
            i++;
        } else if (in_class) {
            in_class = c != ']';
        } else if (c == '[') {
            in_class = 1;
        } else if (c == '(') {
            depth++;
        } else if (c == ')' && --depth == 0) {
            return i + 1;
        }
    }
    return 0;
}

/* Whether p[i..len) has a | outside its groups (and classes). */
static int bar_outside_groups(const char *p, size_t i, size_t len)
{
    int depth = 0, in_class = 0;
    for (; i < len; i++) {
        char c = p[i];
        if (c == '\\')
            i++;
        else if (in_class)
            in_class = c != ']';
        else if (c == '[')
            in_class = 1;
        else if (c == '(')
            depth++;
        else if (c == ')')
            depth--;
        else if (c == '|' && depth == 0)
            return 1;
    }
    return 0;
}

/* 1 with *la filled when the pattern is ^, look-aheads, then Y with no |
 * outside its groups; 0 otherwise. */
static int leading_lookaheads(const char *p, leading_t *la)
{
    size_t len = strlen(p), i = 1;
    if (len < 4 || p[0] != '^')
        return 0;
    la->n = 0;
    while (i + 2 < len && p[i] == '(' && p[i + 1] == '?' && (p[i + 2] == '=' || p[i + 2] == '!')) {
        size_t e = group_end(p, len, i);
        if (!e || la->n == LA_MAX)
            return 0;
        la->at[la->n] = i + 3;
        la->len[la->n] = e - 1 - (i + 3);
        la->neg[la->n++] = p[i + 2] == '!';
        i = e;
    }
    if (!la->n)
        return 0;
    la->rest = i;
    return !bar_outside_groups(p, i, len);
}

size_t gr_ecma_lookahead_len(const char *lex, size_t len, gr_ecma_sets_t *sets)
{
    if (!sets || sets->spelling != GR_SPELL_JSON)
        return len;
    if (!sets->open_end) {
        char *c = gr_ecma_any_char(sets);
        size_t n = c ? strlen(c) : 0;
        sets->open_end = c ? malloc(n + 7) : NULL;
        if (sets->open_end)
            snprintf(sets->open_end, n + 7, "(?:%s)*\"", c);
        free(c);
        if (!sets->open_end)
            return len; /* out of memory: the whole lexeme, as exact */
    }
    size_t n = strlen(sets->open_end);
    if (len <= n || memcmp(lex + len - n, sets->open_end, n) || bar_outside_groups(lex, 0, len))
        return len;
    return len - n;
}

/* "^(?:" p[at .. at + n) ")" as a NUL-terminated string (malloc'd). */
static char *anchored_group(const char *p, size_t at, size_t n)
{
    char *s = malloc(n + 6);
    if (s) {
        memcpy(s, "^(?:", 4);
        memcpy(s + 4, p + at, n);
        memcpy(s + 4 + n, ")", 2);
    }
    return s;
}

static int string_leading(tb_buf_t *out, const char *pattern, const leading_t *la,
                          const char *format, uint32_t lo, uint32_t hi, gr_ecma_sets_t *sets,
                          tb_err_t *err)
{
    tb_buf_t acc = {0}, one = {0};
    int r = 0;
    for (size_t i = 0; !r && i <= la->n; i++) {
        int last = i == la->n;
        char *sub = last ? anchored_group(pattern, la->rest, strlen(pattern) - la->rest)
                         : anchored_group(pattern, la->at[i], la->len[i]);
        one.len = 0;
        r = !sub ? tb_fail(err, "out of memory")
                 : gr_ecma_string(&one, sub, last ? format : NULL, last ? lo : 0,
                                  last ? hi : GR_NO_MAX, sets, err);
        free(sub);
        if (r < 0)
            break;
        if (r == 1) { /* nothing matches: a (?!) of it says nothing */
            r = last || !la->neg[i] ? 1 : 0;
            continue;
        }
        size_t need = last ? one.len : gr_ecma_lookahead_len((const char *)one.data, one.len, sets);
        if (!last && (put(&acc, la->neg[i] ? "(?!" : "(?=") || tb_buf_put(&acc, one.data, need) ||
                      put(&acc, ")")))
            r = tb_fail(err, "out of memory");
        if (last && tb_buf_put(&acc, one.data, one.len))
            r = tb_fail(err, "out of memory");
    }
    if (!r && tb_buf_put(out, acc.data, acc.len))
        r = tb_fail(err, "out of memory");
    tb_buf_free(&acc);
    tb_buf_free(&one);
    return r;
}

/*
 * Several constraints on one string (a pattern, a format, length bounds
 * that neither can be rewritten to hold) are intersected by the lexer:
 * "(?=A"$)(?=B"$)C" matches the strings of C that A and B match too (see
 * lexer/regex.h on look-ahead).  Each is written on its own when alone.
 */
int gr_ecma_string(tb_buf_t *out, const char *pattern, const char *format, uint32_t lo,
                   uint32_t hi, gr_ecma_sets_t *sets, tb_err_t *err)
{
    if ((hi != GR_NO_MAX && hi > GR_MAX_LENGTH) || lo > GR_MAX_LENGTH)
        return tb_fail(err, "length bound %u is above the limit of %u",
                       lo > GR_MAX_LENGTH ? lo : hi, GR_MAX_LENGTH);
    if (hi < lo)
        return tb_fail(err, "minLength %u is above maxLength %u", lo, hi);
    if (!pattern && !format && !lo && hi == GR_NO_MAX) {
        const char *any = sets ? gr_ecma_any_string(sets) : GR_JSON_ANY_STRING;
        return !any || put(out, any) ? tb_fail(err, "out of memory") : 0;
    }
    leading_t la;
    if (pattern && leading_lookaheads(pattern, &la))
        return string_leading(out, pattern, &la, format, lo, hi, sets, err);
    comp_t part[3] = {{0}};
    size_t n = 0;
    int len_left = 1, r = 0, left;
    /* The bounds go to the first constraint that takes them exactly. */
    if (pattern && !(r = constraint(pattern, NULL, lo, hi, &part[n++], &left, sets, err)))
        len_left = left;
    if (!r && format &&
        !(r = constraint(NULL, format, len_left ? lo : 0, len_left ? hi : GR_NO_MAX,
                         &part[n++], &left, sets, err)))
        len_left = len_left && left;
    if (!r && len_left)
        r = constraint(NULL, NULL, lo, hi, &part[n++], &left, sets, err);
    int none = 0;
    for (size_t i = 0; i < n; i++)
        none |= is_empty(&part[i]);
    if (!r && !none) {
        r = put(out, "\"");
        for (size_t i = 0; !r && i + 1 < n; i++)
            r = put(out, "(?=") || put_atom(out, &part[i]) || put(out, "\"$)");
        r = r || put_atom(out, &part[n - 1]) || put(out, "\"");
        if (r)
            r = tb_fail(err, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        comp_free(&part[i]);
    return r ? r : none; /* none: no string qualifies, not an error */
}

int gr_ecma_matches_all(const char *pattern, tb_err_t *err)
{
    leading_t la;
    if (leading_lookaheads(pattern, &la))
        return 0; /* not known to */
    parser_t ps = {.p = pattern, .len = strlen(pattern), .err = err, .what = "pattern",
                   .label = pattern};
    ast_t *top = parse(&ps);
    anch_t q;
    int r = !top || emit(&ps, top, &q) ? -1 : 0;
    if (!r) {
        /* .*N.* with "" in N, S.* with "" in S, .*E with "" in E */
        r = nul(&q.c[QN]) || nul(&q.c[QS]) || nul(&q.c[QE]);
        quad_free(&q);
    }
    arena_free(&ps);
    return r;
}

int gr_json_quote(tb_buf_t *out, const uint8_t *s, size_t n)
{
    int r = tb_buf_putc(out, '"');
    for (size_t i = 0; i < n && !r; i++) {
        uint8_t c = s[i];
        char tmp[8];
        if (c == '"' || c == '\\') {
            r = tb_buf_putc(out, '\\') || tb_buf_putc(out, c);
        } else if (c < 0x20) {
            const char *sh = c == 8 ? "\\b" : c == 9 ? "\\t" : c == 10 ? "\\n" : c == 12 ? "\\f"
                           : c == 13 ? "\\r" : NULL;
            if (!sh)
                snprintf(tmp, sizeof tmp, "\\u%04x", c);
            r = put(out, sh ? sh : tmp);
        } else
            r = tb_buf_putc(out, c);
    }
    return r || tb_buf_putc(out, '"');
}

int gr_json_quote_regex(tb_buf_t *out, const uint8_t *s, size_t n, gr_ecma_sets_t *sets)
{
    gr_ecma_sets_t *own = sets ? NULL : gr_ecma_sets_new(), *memo = sets ? sets : own;
    int r = !memo || put(out, "\"");
    for (size_t at = 0; at < n && !r;) {
        uint32_t cp;
        size_t k = tb_utf8_decode(s + at, n - at, &cp);
        if (!k) /* not UTF-8: the byte itself, as before */
            r = gr_regex_escape(out, s + at, 1), at++;
        else
            r = put_memo_cp(memo, cp, out), at += k;
    }
    gr_ecma_sets_free(own);
    return r || put(out, "\"");
}

/* ---- strings other than given names -------------------------------------- */

typedef struct {
    uint32_t *cp;
    size_t n;
} name_t;

static int cmp_name(const void *a, const void *b)
{
    const name_t *x = a, *y = b;
    for (size_t i = 0; i < x->n && i < y->n; i++)
        if (x->cp[i] != y->cp[i])
            return x->cp[i] < y->cp[i] ? -1 : 1;
    return (x->n > y->n) - (x->n < y->n);
}

/*
 * Appends the continuations after the common prefix (depth d) of the
 * sorted names nm[0..k) that spell none of them, as an atom: "" unless a
 * name ends here, a first code point no name has here then anything
 * (`any`, written once by the caller), or a name's next code point then
 * the same for the names that share it.  The trie is walked once, each
 * node's part appended in place.  (Written instead as three trees, of the
 * exits, the paths and the non-names, the text was a third as long but
 * the lexer's states at keys, unions of three parts, cost up to three
 * times as much to build.)
 */
static int except(const name_t *nm, size_t k, size_t d, const tb_buf_t *any,
                  gr_ecma_sets_t *memo, tb_buf_t *o)
{
    size_t i = 0;
    while (i < k && nm[i].n == d) /* sorted: the names ending here come first */
        i++;
    int is_name = i > 0;
    cps_t other = {0}; /* never empty: the names have finitely many next code points */
    int r = 0;
    for (size_t j = i; j < k && !r; j++)
        r = cps_add(&other, nm[j].cp[d], nm[j].cp[d]);
    r = r || cps_norm(&other) || cps_negate(&other) || put(o, "(?:") ||
        put_memo_group(memo, &other, o) || tb_buf_put(o, any->data, any->len);
    free(other.data);
    while (!r && i < k) {
        size_t j = i + 1;
        while (j < k && nm[j].cp[d] == nm[i].cp[d])
            j++;
        r = put(o, "|") || put_memo_cp(memo, nm[i].cp[d], o) ||
            except(nm + i, j - i, d + 1, any, memo, o);
        i = j;
    }
    return r || put(o, is_name ? ")" : ")?");
}

int gr_ecma_string_except(tb_buf_t *out, const char *const *names, size_t n,
                          gr_ecma_sets_t *sets, tb_err_t *err)
{
    name_t *nm = calloc(n ? n : 1, sizeof *nm);
    int r = nm ? 0 : -1;
    for (size_t i = 0; i < n && !r; i++) {
        size_t len = strlen(names[i]);
        nm[i].cp = malloc((len + 1) * sizeof(uint32_t));
        r = nm[i].cp ? 0 : -1;
        for (size_t at = 0; !r && at < len;) {
            size_t k = tb_utf8_decode((const uint8_t *)names[i] + at, len - at,
                                      &nm[i].cp[nm[i].n++]);
            if (!k)
                r = tb_fail(err, "property name '%s' is not UTF-8", names[i]);
            at += k;
        }
    }
    /* Duplicates do no harm: they sort next to each other. */
    cps_t all = {0};
    tb_buf_t any = {0};
    gr_ecma_sets_t *own = sets ? NULL : gr_ecma_sets_new(), *memo = sets ? sets : own;
    if (!r) {
        if (n)
            qsort(nm, n, sizeof *nm, cmp_name);
        r = !memo || cps_add(&all, 0, CP_MAX) || cps_norm(&all) || put_set_group(&any, &all, memo) ||
            put(&any, "*") || put(out, "\"") || except(nm, n, 0, &any, memo, out) ||
            put(out, "\"");
    }
    gr_ecma_sets_free(own);
    for (size_t i = 0; nm && i < n; i++)
        free(nm[i].cp);
    free(nm);
    free(all.data);
    tb_buf_free(&any);
    return r && !err->msg[0] ? tb_fail(err, "out of memory") : r;
}

/* ---- formats ------------------------------------------------------------- */

/* RFC 3339 section 5.6 full-date, with the days of each month and 29
 * February in leap years only (Gregorian rule). */
#define F_DATE                                                                  \
    "(?:\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-"     \
    "(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8]))|(?:\\d\\d(?:0[48]|"         \
    "[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)"
/* RFC 3339 section 5.6 full-time (leap second 60 allowed at any minute). */
#define F_TIME                                                                  \
    "(?:[01]\\d|2[0-3]):[0-5]\\d:(?:[0-5]\\d|60)(?:\\.\\d+)?(?:[Zz]|[+-]"        \
    "(?:[01]\\d|2[0-3]):[0-5]\\d)"
/* RFC 1123 section 2.1 host name labels (the 253-byte total unchecked). */
#define F_LABEL "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
#define F_HOST F_LABEL "(?:\\." F_LABEL ")*"
/* RFC 3986 section 3.2.2 dec-octet, IPv4address, h16, ls32, IPv6address. */
#define F_OCTET "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)"
#define F_V4 F_OCTET "(?:\\." F_OCTET "){3}"
#define F_H "[0-9A-Fa-f]{1,4}"
#define F_LS32 "(?:" F_H ":" F_H "|" F_V4 ")"
#define F_V6                                                                    \
    "(?:(?:" F_H ":){6}" F_LS32 "|::(?:" F_H ":){5}" F_LS32 "|(?:" F_H ")?::(?:"  \
    F_H ":){4}" F_LS32 "|(?:(?:" F_H ":){0,1}" F_H ")?::(?:" F_H ":){3}" F_LS32  \
    "|(?:(?:" F_H ":){0,2}" F_H ")?::(?:" F_H ":){2}" F_LS32 "|(?:(?:" F_H       \
    ":){0,3}" F_H ")?::" F_H ":" F_LS32 "|(?:(?:" F_H ":){0,4}" F_H ")?::" F_LS32 \
    "|(?:(?:" F_H ":){0,5}" F_H ")?::" F_H "|(?:(?:" F_H ":){0,6}" F_H ")?::)"
/* RFC 3986 sections 2 and 3: pchar (unreserved, sub-delims, ":", "@",
 * pct-encoded); an authority of userinfo, a host (an IP literal in
 * brackets, IPv6 or IPvFuture, or a reg-name, which IPv4 addresses are
 * too) and a port; the hier-part's four forms (an authority and a
 * path-abempty, a path-absolute, a path-rootless, or nothing); query and
 * fragment.  `first` is the first segment's characters: pchar, or, in a
 * relative reference (section 4.2's path-noscheme), pchar but ":". */
#define F_UNRES_SUB "A-Za-z0-9\\-._~!$&'()*+,;="
#define F_PCT "%[0-9A-Fa-f]{2}"
#define F_PCHAR "(?:[" F_UNRES_SUB ":@]|" F_PCT ")"
#define F_IPLIT "\\[(?:" F_V6 "|v[0-9A-Fa-f]+\\.[" F_UNRES_SUB ":]+)\\]"
#define F_AUTHORITY                                                            \
    "(?:(?:[" F_UNRES_SUB ":]|" F_PCT ")*@)?(?:" F_IPLIT "|(?:[" F_UNRES_SUB     \
    "]|" F_PCT ")*)(?::[0-9]*)?"
#define F_ABEMPTY "(?:/" F_PCHAR "*)*"
#define F_HIER(first)                                                          \
    "(?://" F_AUTHORITY F_ABEMPTY "|/(?:" F_PCHAR "+" F_ABEMPTY ")?|" first    \
    "+" F_ABEMPTY "|)(?:\\?(?:" F_PCHAR "|[/?])*)?(?:#(?:" F_PCHAR "|[/?])*)?"
#define F_NOCOLON "(?:[" F_UNRES_SUB "@]|" F_PCT ")"
#define F_SCHEME "[A-Za-z][A-Za-z0-9+\\-.]*:"
/* RFC 5321 section 4.1.2 Mailbox, as JSON Schema's email format names it:
 * a dot-atom or quoted-string local part (qtextSMTP, quoted-pairSMTP), and
 * an RFC 1123 host name or an IPv4 or IPv6 address literal (section 4.1.3)
 * as the domain; the General-address-literal is left out. */
#define F_ATEXT "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\-]+"
#define F_QUOTED "\"(?:[ !#-\\[\\]-~]|\\\\[ -~])*\""
#define F_MAILBOX                                                              \
    "(?:" F_ATEXT "(?:\\." F_ATEXT ")*|" F_QUOTED ")@(?:" F_HOST "|\\[" F_V4 "\\]|"  \
    "\\[IPv6:" F_V6 "\\])"
/* RFC 3339 appendix A duration. */
#define F_DUR_T "T(?:\\d+H(?:\\d+M(?:\\d+S)?)?|\\d+M(?:\\d+S)?|\\d+S)"
#define F_DUR_D "(?:\\d+Y(?:\\d+M(?:\\d+D)?)?|\\d+M(?:\\d+D)?|\\d+D)"

static const struct {
    const char *name, *pattern;
} formats[] = {
    {"date", "^" F_DATE "$"},
    {"time", "^" F_TIME "$"},
    {"date-time", "^" F_DATE "[Tt]" F_TIME "$"},
    {"hostname", "^" F_HOST "$"},
    {"ipv4", "^" F_V4 "$"},
    {"ipv6", "^" F_V6 "$"},
    {"email", "^" F_MAILBOX "$"},
    /* RFC 4122 section 3 string representation. */
    {"uuid", "^[0-9A-Fa-f]{8}-(?:[0-9A-Fa-f]{4}-){3}[0-9A-Fa-f]{12}$"},
    /* RFC 3986 section 3 URI and section 4.1 URI-reference (a URI or a
     * relative reference: no scheme, a first segment with no colon). */
    {"uri", "^" F_SCHEME F_HIER(F_PCHAR) "$"},
    {"uri-reference", "^(?:" F_SCHEME F_HIER(F_PCHAR) "|" F_HIER(F_NOCOLON) ")$"},
    {"duration", "^P(?:\\d+W|" F_DUR_D "(?:" F_DUR_T ")?|" F_DUR_T ")$"},
};

const char *gr_ecma_format(const char *format)
{
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++)
        if (!strcmp(formats[i].name, format))
            return formats[i].pattern;
    return NULL;
}

/* ---- property names by the patterns they match ----------------------------
 *
 * patternProperties beside additionalProperties split the names into
 * classes: the names that match exactly the patterns of a set S (their
 * values must satisfy all of S's schemas), and the names that match none
 * (additionalProperties).  Each class is a regular language but needs
 * intersections and complements, so it is built as an automaton: a
 * Thompson NFA of all patterns (as whole-string languages) and the defined
 * names, tagged by what each accepts; the subset construction over
 * "atoms" (the code point intervals no set splits), completed with a dead
 * state; and, per class, state elimination back to a regex.
 */

#define KEY_MAX_STATES 400   /* DFA states (elimination keeps a square of them) */
#define KEY_MAX_REGEX (1u << 20)
/* The texts an elimination writes, all told, before it gives up: on
 * MaskBench (every 10th file) those that end write 45 KB at most, and
 * bitbucket-pipelines' one that did not wrote 16 MiB, freshly faulted
 * heap in every compile (6,000 page faults, most of its TTFM), to fall
 * back to the look-aheads anyway. */
#define KEY_MAX_WRITTEN (2u << 20)
/* DFA states for finding which classes have names at all; past
 * KEY_MAX_STATES (or where elimination passes KEY_MAX_REGEX) a class is
 * written with look-aheads instead (see lookahead_class). */
#define KEY_MAX_FIND 20000
/* One pattern and no defined names: past this many states the classes are
 * the pattern's own lexeme and its look-ahead complement, not eliminated.
 * A bounded repetition ({0,250}) is a chain of states, and eliminating it
 * copies the text of the chain's tail once per state before it: 43M
 * instructions for ^[a-zA-Z0-9_-]{0,250}$, where its lexeme is written
 * with the bound as it stands. */
#define KEY_ONE_PATTERN_STATES 32
/* Past KEY_MAX_FIND, or for patterns whose anchors the automaton does not
 * take, up to this many patterns have each of their 2^n classes written
 * with look-aheads and kept if the lexer finds a name in it. */
#define KEY_MAX_ENUM 5

typedef struct {
    int32_t set;     /* index of the label's set, -1 for epsilon states */
    uint32_t to[2];  /* labelled: to[0]; epsilon: to[0], to[1] (n of them) */
    int n;
    int32_t tag;     /* accepting for pattern tag (-1 none; names use npat) */
} nstate_t;

typedef struct {
    TB_VEC(nstate_t) st;
    TB_VEC(const cps_t *) sets;
    tb_err_t *err;
} nfa_t;

static int nfa_add(nfa_t *a, nstate_t s, uint32_t *id)
{
    if (a->st.len >= 200000 || tb_vec_push(&a->st, s))
        return tb_fail(a->err, "patternProperties: automaton too large");
    *id = (uint32_t)a->st.len - 1;
    return 0;
}

static int nfa_split(nfa_t *a, uint32_t x, uint32_t y, uint32_t *id)
{
    return nfa_add(a, (nstate_t){.set = -1, .to = {x, y}, .n = 2, .tag = -1}, id);
}

/* The start of a fragment for ast a that continues to `out`. */
static int nfa_build(nfa_t *a, const ast_t *t, uint32_t out, uint32_t *start)
{
    uint32_t cur = out, s;
    switch (t->kind) {
    case A_SET:
        if (tb_vec_push(&a->sets, &t->set))
            return tb_fail(a->err, "out of memory");
        return nfa_add(a, (nstate_t){.set = (int32_t)a->sets.len - 1, .to = {out}, .n = 1,
                                     .tag = -1}, start);
    case A_CAT:
        for (size_t i = t->nkid; i-- > 0;)
            if (nfa_build(a, t->kid[i], cur, &cur))
                return -1;
        *start = cur;
        return 0;
    case A_ALT:
        if (!t->nkid) /* nothing: a state with no way on */
            return nfa_add(a, (nstate_t){.set = -1, .n = 0, .tag = -1}, start);
        if (nfa_build(a, t->kid[0], out, &cur))
            return -1;
        for (size_t i = 1; i < t->nkid; i++)
            if (nfa_build(a, t->kid[i], out, &s) || nfa_split(a, cur, s, &cur))
                return -1;
        *start = cur;
        return 0;
    case A_REP:
        if (t->max == GR_NO_MAX) {
            /* loop: L -> k L | out */
            uint32_t loop;
            if (nfa_split(a, 0, out, &loop) || nfa_build(a, t->kid[0], loop, &s))
                return -1;
            a->st.data[loop].to[0] = s;
            cur = loop;
        } else {
            for (uint32_t i = t->min; i < t->max; i++)
                if (nfa_build(a, t->kid[0], cur, &s) || nfa_split(a, s, out, &cur))
                    return -1;
        }
        for (uint32_t i = 0; i < t->min; i++)
            if (nfa_build(a, t->kid[0], cur, &cur))
                return -1;
        *start = cur;
        return 0;
    default:
        return tb_fail(a->err, "patternProperties: internal: anchor in a whole pattern");
    }
}

/* An edge of the elimination: to state `to`, the words along it.  Each
 * state keeps its edges out as a list and the states with an edge into it
 * (those eliminated since included) as another: the DFA of a few patterns
 * beside some tens of property names has hundreds of states and about one
 * edge each, and a square matrix of them (ninjs-1.3's 302 states: 3.6 MB
 * zeroed per class of names) cost more than the elimination itself. */
typedef struct {
    uint32_t to;
    comp_t c;
} edge_t;

typedef TB_VEC(edge_t) edges_t;
typedef TB_VEC(uint32_t) preds_t;

typedef struct {
    nfa_t nfa;
    uint32_t start;
    uint32_t *bound; /* atoms: [bound[i], bound[i + 1]) */
    size_t natoms;
    uint64_t *label; /* per set: atoms bitset (words per set) */
    size_t words;
    /* DFA: states as sorted NFA state lists, transitions per atom */
    TB_VEC(uint32_t *) dset;
    TB_VEC(size_t) dlen;
    TB_VEC(uint32_t) delta; /* state * natoms + atom, UINT32_MAX for none */
    TB_VEC(uint64_t) tags;  /* per DFA state: bit p for pattern p, bit 63 for a name */
    edges_t *edges;         /* per DFA state, its edges (dfa_edges), or NULL */
    int too_large;          /* eliminate failed on KEY_MAX_REGEX */
    int too_many;           /* subsets passed KEY_MAX_FIND */
    gr_ecma_sets_t *sets;   /* eliminate's edge sets' spellings, kept */
} keys_t;

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The epsilon closure of list[0..*n) (room for all NFA states), sorted. */
static void closure(keys_t *k, uint32_t *list, size_t *n, uint8_t *mark)
{
    for (size_t i = 0; i < *n; i++)
        mark[list[i]] = 1;
    for (size_t i = 0; i < *n; i++) {
        const nstate_t *s = &k->nfa.st.data[list[i]];
        for (int e = 0; s->set < 0 && e < s->n; e++)
            if (!mark[s->to[e]]) {
                mark[s->to[e]] = 1;
                list[(*n)++] = s->to[e];
            }
    }
    for (size_t i = 0; i < *n; i++)
        mark[list[i]] = 0;
    if (*n)
        qsort(list, *n, sizeof *list, cmp_u32);
}

static int atoms(keys_t *k)
{
    TB_VEC(uint32_t) b = {0};
    int r = tb_vec_push(&b, 0) || tb_vec_push(&b, CP_MAX + 1) || tb_vec_push(&b, 0xD800) ||
            tb_vec_push(&b, 0xE000);
    for (size_t i = 0; !r && i < k->nfa.sets.len; i++)
        for (size_t j = 0; !r && j < k->nfa.sets.data[i]->len; j += 2)
            r = tb_vec_push(&b, k->nfa.sets.data[i]->data[j]) ||
                tb_vec_push(&b, k->nfa.sets.data[i]->data[j + 1] + 1);
    if (r) {
        free(b.data);
        return tb_fail(k->nfa.err, "out of memory");
    }
    qsort(b.data, b.len, sizeof *b.data, cmp_u32);
    size_t n = 0;
    for (size_t i = 0; i < b.len; i++)
        if (!n || b.data[i] != b.data[n - 1])
            b.data[n++] = b.data[i];
    k->bound = b.data;
    k->natoms = n - 1;
    k->words = (k->natoms + 63) / 64;
    k->label = calloc(k->nfa.sets.len * k->words + 1, sizeof *k->label);
    if (!k->label)
        return tb_fail(k->nfa.err, "out of memory");
    for (size_t i = 0; i < k->nfa.sets.len; i++) {
        const cps_t *s = k->nfa.sets.data[i];
        for (size_t a = 0, j = 0; a < k->natoms; a++) {
            while (j < s->len && s->data[j + 1] < k->bound[a])
                j += 2;
            if (j < s->len && s->data[j] <= k->bound[a])
                k->label[i * k->words + a / 64] |= 1ull << (a % 64);
        }
    }
    return 0;
}

static int is_surrogate_atom(const keys_t *k, size_t a) { return k->bound[a] == 0xD800; }

/* The DFA state of the sorted list (made if new). */
static int dstate(keys_t *k, tb_strmap_t *by, uint32_t *list, size_t n, uint32_t npat,
                  uint32_t *id)
{
    int32_t f = tb_strmap_get(by, (const uint8_t *)list, n * sizeof *list);
    if (f >= 0) {
        *id = (uint32_t)f;
        return 0;
    }
    if (k->dset.len >= KEY_MAX_FIND && (k->too_many = 1))
        return tb_fail(k->nfa.err, "patternProperties: more than %d automaton states",
                       KEY_MAX_FIND);
    uint32_t *copy = malloc((n ? n : 1) * sizeof *copy);
    uint64_t tag = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t t = k->nfa.st.data[list[i]].tag;
        if (t >= 0)
            tag |= (uint32_t)t == npat ? 1ull << 63 : 1ull << t;
    }
    if (!copy || tb_vec_push(&k->dset, copy) || tb_vec_push(&k->dlen, n) ||
        tb_vec_push(&k->tags, tag) || tb_vec_reserve(&k->delta, k->natoms)) {
        free(copy);
        return tb_fail(k->nfa.err, "out of memory");
    }
    if (n)
        memcpy(copy, list, n * sizeof *copy);
    for (size_t a = 0; a < k->natoms; a++)
        k->delta.data[k->delta.len++] = UINT32_MAX;
    *id = (uint32_t)k->dset.len - 1;
    if (tb_strmap_put(by, (const uint8_t *)copy, n * sizeof *copy, (int32_t)*id) < 0)
        return tb_fail(k->nfa.err, "out of memory");
    return 0;
}

static int subsets(keys_t *k, uint32_t npat)
{
    size_t ns = k->nfa.st.len;
    uint32_t *list = malloc((ns + 1) * sizeof *list);
    uint8_t *mark = calloc(ns + 1, 1);
    tb_strmap_t by;
    int r = !list || !mark || tb_strmap_init(&by, 256) ? tb_fail(k->nfa.err, "out of memory")
                                                       : 0;
    size_t n = 1;
    uint32_t id;
    if (!r) {
        list[0] = k->start;
        closure(k, list, &n, mark);
        r = dstate(k, &by, list, n, npat, &id);
    }
    for (size_t d = 0; !r && d < k->dset.len; d++) {
        for (size_t a = 0; !r && a < k->natoms; a++) {
            if (is_surrogate_atom(k, a))
                continue;
            n = 0;
            for (size_t i = 0; i < k->dlen.data[d]; i++) {
                const nstate_t *s = &k->nfa.st.data[k->dset.data[d][i]];
                if (s->set >= 0 && (k->label[(size_t)s->set * k->words + a / 64] >> (a % 64) & 1) &&
                    !mark[s->to[0]]) {
                    mark[s->to[0]] = 1;
                    list[n++] = s->to[0];
                }
            }
            for (size_t i = 0; i < n; i++)
                mark[list[i]] = 0;
            closure(k, list, &n, mark);
            /* the empty list is the dead state: kept, names that leave
             * every pattern still belong to the class of none */
            r = dstate(k, &by, list, n, npat, &id);
            k->delta.data[d * k->natoms + a] = id;
        }
    }
    if (mark)
        tb_strmap_free(&by);
    free(list);
    free(mark);
    return r;
}


/* The edge from list out to state j, or NULL. */
static edge_t *edge_to(edges_t *out, uint32_t j)
{
    for (size_t e = 0; e < out->len; e++)
        if (out->data[e].to == j)
            return &out->data[e];
    return NULL;
}

/* The DFA's edges, each state's atoms gathered by the state they lead
 * to: the same for every class, made at the first elimination. */
static int dfa_edges(keys_t *k)
{
    size_t n = k->dset.len;
    k->edges = calloc(n ? n : 1, sizeof *k->edges);
    cps_t *to = calloc(n ? n : 1, sizeof *to);
    uint32_t *hit = malloc((k->natoms + 1) * sizeof *hit); /* the j reached */
    int r = !k->edges || !to || !hit ? -1 : 0;
    for (size_t i = 0; !r && i < n; i++) {
        size_t nhit = 0;
        for (size_t a = 0; !r && a < k->natoms; a++) {
            uint32_t j = k->delta.data[i * k->natoms + a];
            if (j >= n)
                continue;
            if (!to[j].len)
                hit[nhit++] = j;
            r = cps_add(&to[j], k->bound[a], k->bound[a + 1] - 1);
        }
        for (size_t h = 0; h < nhit; h++) {
            cps_t *t = &to[hit[h]];
            edge_t e = {.to = hit[h]};
            if (!r)
                r = cps_norm(t) || comp_kept_set(k->sets, t, &e.c) ||
                    tb_vec_push(&k->edges[i], e);
            if (r)
                comp_free(&e.c);
            free(t->data);
            memset(t, 0, sizeof *t);
        }
    }
    free(hit);
    free(to);
    return r ? tb_fail(k->nfa.err, "out of memory") : 0;
}

/* Adds the edge i -> j (not there yet), a copy of c, to the lists. */
static int edge_add(edges_t *out, preds_t *pred, uint32_t i, uint32_t j, const comp_t *c)
{
    edge_t e = {.to = j, .c = *c};
    memset(&e.c.re, 0, sizeof e.c.re);
    if ((c->re.len && tb_buf_put(&e.c.re, c->re.data, c->re.len)) || tb_vec_push(&out[i], e)) {
        tb_buf_free(&e.c.re);
        return -1;
    }
    return i != j && tb_vec_push(&pred[j], i) ? -1 : 0;
}

/* State elimination: the regex of the words from state 0 to the states
 * whose tags are `want` (never a defined name). */
static int eliminate(keys_t *k, uint64_t want, comp_t *o)
{
    size_t n = k->dset.len, m = n + 2;
    uint32_t s = (uint32_t)n, f = (uint32_t)n + 1;
    memset(o, 0, sizeof *o);
    int r = !k->edges ? dfa_edges(k) : 0;
    edges_t *out = calloc(m, sizeof *out);
    preds_t *pred = calloc(m, sizeof *pred);
    uint8_t *gone = calloc(m, 1);
    /* nin[c], nout[c]: the states left (c aside) with an edge into c, out
     * of c; kept up to date, since counting them afresh at every step made
     * the elimination cubic ({0,254} in a pattern is 256 states). */
    size_t *nin = calloc(m, sizeof *nin), *nout = calloc(m, sizeof *nout);
    if (!r && (!out || !pred || !gone || !nin || !nout))
        r = tb_fail(k->nfa.err, "out of memory");
    const comp_t eps = {.eps = 1};
    for (uint32_t i = 0; !r && i < n; i++)
        for (size_t e = 0; !r && e < k->edges[i].len; e++)
            r = edge_add(out, pred, i, k->edges[i].data[e].to, &k->edges[i].data[e].c);
    if (!r)
        r = edge_add(out, pred, s, 0, &eps);
    for (uint32_t i = 0; !r && i < n; i++)
        if (k->tags.data[i] == want)
            r = edge_add(out, pred, i, f, &eps);
    if (r && !k->nfa.err->msg[0])
        r = tb_fail(k->nfa.err, "out of memory");
    for (size_t x = 0; !r && x < m; x++)
        for (size_t e = 0; e < out[x].len; e++)
            if (out[x].data[e].to != x)
                nout[x]++, nin[out[x].data[e].to]++;
    size_t total = 0;
    for (size_t step = 0; !r && step < n; step++) {
        /* the state with the fewest paths through it goes first */
        uint32_t q = s;
        size_t best = SIZE_MAX;
        for (uint32_t c = 0; c < n; c++)
            if (!gone[c] && nin[c] * nout[c] < best)
                best = nin[c] * nout[c], q = c;
        comp_t star, none = {0};
        edge_t *self = edge_to(&out[q], q);
        r = comp_rep(self ? &self->c : &none, 0, GR_NO_MAX, &star);
        gone[q] = 1;
        for (size_t e = 0; e < out[q].len; e++)
            if (!gone[out[q].data[e].to])
                nin[out[q].data[e].to]--;
        for (size_t p = 0; p < pred[q].len; p++)
            if (!gone[pred[q].data[p]])
                nout[pred[q].data[p]]--;
        /* R[i][j] |= R[i][q] R[q][q]* R[q][j] for the states i before q and
         * j after it that are left; each pair is written once a step, so
         * the order of the pairs does not change the text */
        for (size_t p = 0; !r && p < pred[q].len; p++) {
            uint32_t i = pred[q].data[p];
            if (gone[i])
                continue;
            comp_t left;
            r = comp_cat(&edge_to(&out[i], q)->c, &star, &left);
            for (size_t e = 0; !r && e < out[q].len; e++) {
                uint32_t j = out[q].data[e].to;
                if (gone[j])
                    continue;
                edge_t *ij = edge_to(&out[i], j);
                if (!ij) {
                    r = edge_add(out, pred, i, j, &(comp_t){0});
                    if (r) {
                        r = tb_fail(k->nfa.err, "out of memory");
                        break;
                    }
                    if (i != j)
                        nout[i]++, nin[j]++;
                    ij = &out[i].data[out[i].len - 1];
                }
                size_t len = 0;
                r = comp_alt_cat(&ij->c, &left, &out[q].data[e].c, &len);
                total += len;
                if (!r && total > KEY_MAX_WRITTEN) {
                    k->too_large = 1;
                    r = tb_fail(k->nfa.err, "patternProperties: the names' regex is too large");
                }
            }
            comp_free(&left);
        }
        comp_free(&star);
    }
    edge_t *sf = r ? NULL : edge_to(&out[s], f);
    if (sf) {
        *o = sf->c;
        memset(&sf->c, 0, sizeof sf->c);
        if (o->re.len > KEY_MAX_REGEX) {
            k->too_large = 1;
            r = tb_fail(k->nfa.err, "patternProperties: the names' regex is too large");
        }
    }
    for (size_t x = 0; out && x < m; x++) {
        for (size_t e = 0; e < out[x].len; e++)
            free(out[x].data[e].c.re.data);
        free(out[x].data);
    }
    for (size_t x = 0; pred && x < m; x++)
        free(pred[x].data);
    free(out);
    free(pred);
    free(gone);
    free(nin);
    free(nout);
    return r;
}

/* A name as an AST (one set per code point). */
static ast_t *name_ast(parser_t *ps, const char *name)
{
    ast_t *cat = node(ps, A_CAT);
    size_t len = strlen(name);
    for (size_t at = 0; cat && at < len;) {
        uint32_t cp;
        size_t k = tb_utf8_decode((const uint8_t *)name + at, len - at, &cp);
        ast_t *s = k ? node(ps, A_SET) : NULL;
        if (!s || cps_add(&s->set, cp, cp) || add_kid(ps, cat, s))
            return NULL;
        at += k;
    }
    return cat;
}

/*
 * The class of the names matching exactly the patterns of mask, written
 * with top-level look-aheads (lexer/regex.h): the JSON string lexeme of
 * the first pattern in mask, or where there is none of the names other
 * than the defined ones (except); before it (?=P) for each other pattern
 * in mask, (?!P) for each pattern not in it, and with a pattern as the
 * base (?!N) for the defined names N (their spellings, `named`).  P is the
 * pattern's JSON string lexeme (gr_ecma_string, lex[p]; empty where no
 * string matches it), up to its match (its first la[p] bytes,
 * gr_ecma_lookahead_len).  A look-ahead (?=A) asks that the lexeme begin with
 * a match of A; A's strings are whole JSON string lexemes, and a lexeme
 * that begins with one, closing quote included, is that one, so (?!P) is
 * exactly the lexemes that spell no name P matches.  With a pattern p as
 * the base, a (?!P) is left out for the patterns q not in meet, which the
 * caller knows no name matches beside p (bit 63: the defined names).
 * Appends to re; 1 when a pattern of mask matches nothing.
 */
static int lookahead_class(const tb_buf_t *lex, const size_t *la, size_t npat, uint64_t mask,
                           uint64_t meet, const tb_buf_t *except, const tb_buf_t *named,
                           tb_buf_t *re)
{
    size_t base = npat;
    for (size_t p = 0; p < npat && base == npat; p++)
        if (mask >> p & 1)
            base = p;
    if (base == npat)
        meet = UINT64_MAX;
    for (size_t p = 0; p < npat; p++) {
        int in = (int)(mask >> p & 1);
        if (!lex[p].len) {
            if (in)
                return 1;
            continue;
        }
        if (p == base || (!in && !(meet >> p & 1)))
            continue;
        if (put(re, in ? "(?=" : "(?!") || tb_buf_put(re, lex[p].data, la[p]) || put(re, ")"))
            return -1;
    }
    if (base == npat)
        return tb_buf_put(re, except->data, except->len) ? -1 : 0;
    return (named->len && (meet >> 63 & 1) && (put(re, "(?!(?:") || tb_buf_put(re, named->data, named->len) ||
                           put(re, ")$)"))) ||
                   tb_buf_put(re, lex[base].data, lex[base].len)
               ? -1
               : 0;
}

/* The alternation of the names' JSON spellings, as a look-ahead holds them. */
static int put_named(tb_buf_t *named, const char *const *names, size_t n, gr_ecma_sets_t *sets)
{
    for (size_t i = 0; i < n; i++)
        if ((i && put(named, "|")) ||
            gr_json_quote_regex(named, (const uint8_t *)names[i], strlen(names[i]), sets))
            return -1;
    return 0;
}

int gr_ecma_names_lookahead(tb_buf_t *out, const char *const *names, size_t n,
                            gr_ecma_sets_t *sets)
{
    return n && (put(out, "(?!(?:") || put_named(out, names, n, sets) || put(out, ")$)")) ? -1
                                                                                            : 0;
}

/* The look-ahead parts: except the names other than names[0..nnames),
 * named the alternation of their spellings, lex[p] pattern p's JSON string
 * lexeme (empty where it matches nothing).  Under llguidance's spellings
 * except is spelled as it spells additionalProperties' names, with \u of
 * every code point, and the patterns' lexemes as the patterns are, so the
 * names of no pattern are the spellings no pattern's lexeme reads, as in
 * llguidance (not the names no pattern matches once decoded). */
static int lookahead_parts(const char *const *patterns, size_t npat, const char *const *names,
                           size_t nnames, tb_buf_t **lex, size_t **la, tb_buf_t *except,
                           tb_buf_t *named, gr_ecma_sets_t *sets, tb_err_t *err)
{
    *lex = calloc(npat ? npat : 1, sizeof **lex);
    *la = calloc(npat ? npat : 1, sizeof **la);
    int spelled = sets->spelling;
    if (spelled != GR_SPELL_JSON)
        gr_ecma_sets_spell(sets, GR_SPELL_LLG_ANY_U);
    int r = !*lex || !*la ? tb_fail(err, "out of memory")
                          : gr_ecma_string_except(except, names, nnames, sets, err);
    gr_ecma_sets_spell(sets, spelled);
    if (!r && put_named(named, names, nnames, sets))
        r = tb_fail(err, "out of memory");
    for (size_t p = 0; !r && p < npat; p++) {
        tb_buf_t *x = &(*lex)[p];
        r = gr_ecma_string(x, patterns[p], NULL, 0, GR_NO_MAX, sets, err) < 0 ? -1 : 0;
        (*la)[p] = r ? 0 : gr_ecma_lookahead_len((const char *)x->data, x->len, sets);
    }
    return r;
}

/* Every class of the 2^npat sets written with look-aheads, those the lexer
 * finds a name in passed to fn (KEY_MAX_ENUM). */
static int enumerate_classes(const char *const *patterns, size_t npat, const char *const *names,
                             size_t nnames, gr_key_class_need_fn need, gr_key_class_fn fn,
                             void *ctx, gr_ecma_sets_t *sets, tb_err_t *err)
{
    tb_buf_t *lex = NULL, except = {0}, named = {0}, re = {0};
    size_t *la = NULL;
    int r = lookahead_parts(patterns, npat, names, nnames, &lex, &la, &except, &named, sets, err);
    const lex_dfa_opts_t opts = {.lookahead = 1};
    for (uint64_t m = 0; !r && m < (1ull << npat); m++) {
        if (need && !need(ctx, m))
            continue;
        re.len = 0;
        int e = lookahead_class(lex, la, npat, m, UINT64_MAX, &except, &named, &re);
        if (e < 0 || (!e && tb_buf_putc(&re, 0))) {
            r = tb_fail(err, "out of memory");
            break;
        }
        if (e)
            continue;
        lex_dfa_t *d = lex_dfa_new((const char *)re.data, &opts, err);
        if (!d) {
            r = -1;
            break;
        }
        const uint64_t *al = lex_dfa_allowed(d, LEX_START);
        int some = lex_dfa_accepting(d, LEX_START) || (al && (al[0] | al[1] | al[2] | al[3]));
        r = lex_dfa_error(d, err);
        lex_dfa_free(d);
        if (!r && some)
            r = fn(ctx, m, (const char *)re.data);
    }
    for (size_t p = 0; lex && p < npat; p++)
        tb_buf_free(&lex[p]);
    free(lex);
    free(la);
    tb_buf_free(&except);
    tb_buf_free(&named);
    tb_buf_free(&re);
    return r;
}

int gr_ecma_key_classes(const char *const *patterns, size_t npat, const char *const *names,
                        size_t nnames, gr_key_class_need_fn need, gr_key_class_fn fn, void *ctx,
                        gr_ecma_sets_t *sets, tb_err_t *err)
{
    if (npat > 62)
        return tb_fail(err, "patternProperties: more than 62 patterns");
    gr_ecma_sets_t *own = sets ? NULL : gr_ecma_sets_new();
    parser_t ps = {.err = err, .what = "pattern", .sets = sets ? sets : own};
    keys_t k = {.nfa = {.err = err}, .sets = ps.sets};
    uint32_t acc = 0, cur;
    int r = k.sets ? 0 : tb_fail(err, "out of memory");
    TB_VEC(uint32_t) starts = {0};
    int enumerate = 0;
    for (size_t i = 0; !r && i < npat + nnames; i++) {
        ast_t *a;
        if (i < npat) {
            leading_t la;
            if (leading_lookaheads(patterns[i], &la) && npat <= KEY_MAX_ENUM) {
                enumerate = 1; /* gr_ecma_string takes them */
                break;
            }
            ps.p = ps.label = patterns[i];
            ps.len = strlen(patterns[i]);
            ps.pos = 0;
            a = parse(&ps);
            a = a ? as_whole(&ps, a) : NULL;
            if (!a && !err->msg[0] && npat <= KEY_MAX_ENUM) {
                enumerate = 1; /* gr_ecma_string takes anchors anywhere */
                break;
            }
            if (!a && !err->msg[0])
                tb_fail(err, "pattern '%s': anchors inside it are not supported in "
                        "patternProperties", patterns[i]);
        } else
            a = name_ast(&ps, names[i - npat]);
        uint32_t tag = i < npat ? (uint32_t)i : (uint32_t)npat;
        r = !a || nfa_add(&k.nfa, (nstate_t){.set = -1, .n = 0, .tag = (int32_t)tag}, &acc) ||
            nfa_build(&k.nfa, a, acc, &cur) || tb_vec_push(&starts, cur);
        if (r && !err->msg[0])
            tb_fail(err, "out of memory");
    }
    /* the start: a split over every branch */
    if (!r && !enumerate) {
        cur = starts.data[0];
        for (size_t i = 1; !r && i < starts.len; i++)
            r = nfa_split(&k.nfa, cur, starts.data[i], &cur);
        k.start = cur;
    }
    r = r || (!enumerate && (atoms(&k) || subsets(&k, (uint32_t)npat)));
    if (r && k.too_many && npat <= KEY_MAX_ENUM) {
        err->msg[0] = 0;
        r = 0;
        enumerate = 1;
    }
    if (!r && enumerate)
        r = enumerate_classes(patterns, npat, names, nnames, need, fn, ctx, k.sets, err);
    /* one class per tag set some state has (names' states excluded) */
    TB_VEC(uint64_t) done = {0};
    tb_buf_t *lex = NULL, except = {0}, named = {0}; /* the look-ahead form's parts */
    size_t *la = NULL;
    int none_seen = 0;
    for (size_t d = 0; !r && !enumerate && d <= k.tags.len; d++) {
        uint64_t t = d < k.tags.len ? k.tags.data[d] : 0;
        if (d == k.tags.len && none_seen)
            break;
        none_seen |= t == 0;
        int dup = (t >> 63) & 1;
        for (size_t j = 0; j < done.len && !dup; j++)
            dup = done.data[j] == t;
        if (dup)
            continue;
        if (need && !need(ctx, t)) {
            r = tb_vec_push(&done, t) ? tb_fail(err, "out of memory") : 0;
            continue;
        }
        comp_t c = {0};
        tb_buf_t re = {0};
        int look = k.dset.len > KEY_MAX_STATES ||
                   (npat == 1 && !nnames && k.dset.len > KEY_ONE_PATTERN_STATES);
        /* llguidance's names of no pattern: those its spellings of the
         * patterns do not match (lookahead_parts) */
        look |= !t && k.sets->spelling != GR_SPELL_JSON;
        r = tb_vec_push(&done, t) ? tb_fail(err, "out of memory") : 0;
        if (!r && !look && eliminate(&k, t, &c)) {
            /* too large a regex: the look-aheads below say it in a line */
            if (!k.too_large)
                r = -1;
            else
                err->msg[0] = 0;
            look = 1;
            k.too_large = 0;
            comp_free(&c);
        }
        if (!r && look && !lex)
            r = lookahead_parts(patterns, npat, names, nnames, &lex, &la, &except, &named,
                                k.sets, err);
        if (!r && look) {
            /* the patterns and names some name matches beside the base */
            uint64_t meet = 0, b = t & (0 - t);
            for (size_t d2 = 0; d2 < k.tags.len; d2++)
                if (k.tags.data[d2] & b)
                    meet |= k.tags.data[d2];
            int e = lookahead_class(lex, la, npat, t, meet, &except, &named, &re);
            r = e < 0 || (!e && tb_buf_putc(&re, 0))
                    ? tb_fail(err, "out of memory")
                    : e ? 0 : fn(ctx, t, (const char *)re.data);
        } else if (!r && !is_empty(&c)) {
            r = put(&re, "\"") || put_atom(&re, &c) || put(&re, "\"") || tb_buf_putc(&re, 0);
            r = r ? tb_fail(err, "out of memory") : fn(ctx, t, (const char *)re.data);
        }
        comp_free(&c);
        tb_buf_free(&re);
    }
    for (size_t p = 0; lex && p < npat; p++)
        tb_buf_free(&lex[p]);
    free(lex);
    free(la);
    tb_buf_free(&except);
    tb_buf_free(&named);
    gr_ecma_sets_free(own);
    free(done.data);
    for (size_t i = 0; i < k.dset.len; i++)
        free(k.dset.data[i]);
    free(k.dset.data);
    free(k.dlen.data);
    free(k.delta.data);
    free(k.tags.data);
    free(k.bound);
    free(k.label);
    for (size_t i = 0; k.edges && i < k.dset.len; i++) {
        for (size_t e = 0; e < k.edges[i].len; e++)
            comp_free(&k.edges[i].data[e].c);
        free(k.edges[i].data);
    }
    free(k.edges);
    free(k.nfa.st.data);
    free(k.nfa.sets.data);
    free(starts.data);
    arena_free(&ps);
    return r;
}
