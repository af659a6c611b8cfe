/*
 * gbnf: a recursive-descent reader of GBNF (gbnf.h) building ebnf.h trees.
 */
#include "gbnf.h"

#include <string.h>

#include "../base/utf8.h"
#include "ebnf.h"

/* \c escapes of literals and classes, as pairs "c<byte>". */
static const char ESCAPES[] = "n\nr\rt\t\\\\\"\"[[]]";
/* Any code point (GBNF's `.`, and [^]). */
static const char ANY[] = "[\\x{0}-\\x{10FFFF}]";

typedef struct {
    gr_text_t t;
    gr_ebnf_t *e;
    unsigned depth;
} gbnf_t;

static int is_name(uint8_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-';
}

/* Skips blanks, newlines and # comments. */
static void skip_space(gbnf_t *p)
{
    for (;;) {
        uint8_t c = gr_text_at(&p->t, 0);
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            gr_text_skip(&p->t, 1);
        else if (c == '#')
            while (p->t.i < p->t.len && gr_text_at(&p->t, 0) != '\n')
                gr_text_skip(&p->t, 1);
        else
            return;
    }
}

static size_t name_len(const gbnf_t *p, size_t at)
{
    size_t n = 0;
    while (at + n < p->t.len && is_name((uint8_t)p->t.s[at + n]))
        n++;
    return n;
}

/* Whether a rule head `name ::=` starts at t (blanks but no newline
 * between the name and ::=, as llama.cpp has it). */
static int at_rule_head(const gbnf_t *p)
{
    size_t i = p->t.i + name_len(p, p->t.i);
    if (i == p->t.i)
        return 0;
    while (i < p->t.len && (p->t.s[i] == ' ' || p->t.s[i] == '\t'))
        i++;
    return p->t.len - i >= 3 && memcmp(p->t.s + i, "::=", 3) == 0;
}

static int fail_here(gbnf_t *p, const char *what)
{
    uint8_t c = gr_text_at(&p->t, 0);
    if (p->t.i >= p->t.len)
        return gr_text_fail(&p->t, gr_text_pos(&p->t), "%s, found the end of the file", what);
    if (c < 0x20 || c >= 0x7F)
        return gr_text_fail(&p->t, gr_text_pos(&p->t), "%s, found byte 0x%02X", what, c);
    return gr_text_fail(&p->t, gr_text_pos(&p->t), "%s, found '%c'", what, c);
}

static gr_expr_t *node(gbnf_t *p, gr_xkind_t kind, gr_pos_t pos, const char *text, size_t len)
{
    return gr_ebnf_node(p->e, kind, pos, text, len, p->t.err);
}

/* The ranges of a class up to its ']' into body (\x{..} escapes). */
static int class_body(gbnf_t *p, gr_pos_t open, tb_buf_t *body)
{
    while (gr_text_at(&p->t, 0) != ']') {
        uint32_t lo, hi;
        gr_pos_t at = gr_text_pos(&p->t);
        if (p->t.i >= p->t.len || gr_text_at(&p->t, 0) == '\n')
            return gr_text_fail(&p->t, open, "unterminated character class");
        if (gr_text_char(&p->t, ESCAPES, &lo))
            return -1;
        hi = lo;
        if (gr_text_at(&p->t, 0) == '-' && gr_text_at(&p->t, 1) != ']' &&
            p->t.i + 1 < p->t.len) {
            gr_text_skip(&p->t, 1);
            if (gr_text_char(&p->t, ESCAPES, &hi))
                return -1;
            if (hi < lo)
                return gr_text_fail(&p->t, at, "range out of order in a character class");
        }
        if (gr_class_cp(body, lo) || (hi != lo && (tb_buf_putc(body, '-') || gr_class_cp(body, hi))))
            return tb_fail(p->t.err, "out of memory");
    }
    gr_text_skip(&p->t, 1);
    return 0;
}

/* [...] or [^...] as a REGEX node; [^] is any code point. */
static gr_expr_t *parse_class(gbnf_t *p)
{
    gr_pos_t pos = gr_text_pos(&p->t);
    tb_buf_t re = {0};
    gr_expr_t *x = NULL;
    gr_text_skip(&p->t, 1);
    int neg = gr_text_at(&p->t, 0) == '^';
    gr_text_skip(&p->t, (size_t)neg);
    if (tb_buf_put(&re, neg ? "[^" : "[", neg ? 2 : 1)) {
        tb_fail(p->t.err, "out of memory");
        return NULL;
    }
    if (!class_body(p, pos, &re)) {
        int empty = re.len == (size_t)(neg ? 2 : 1);
        if (empty && !neg)
            gr_text_fail(&p->t, pos, "empty character class [] (it matches nothing)");
        else if (empty)
            x = node(p, GR_X_REGEX, pos, ANY, strlen(ANY));
        else if (tb_buf_putc(&re, ']'))
            tb_fail(p->t.err, "out of memory");
        else
            x = node(p, GR_X_REGEX, pos, (char *)re.data, re.len);
        if (x)
            x->atom = 1;
    }
    tb_buf_free(&re);
    return x;
}

static gr_expr_t *parse_literal(gbnf_t *p)
{
    gr_pos_t pos = gr_text_pos(&p->t);
    tb_buf_t b = {0};
    gr_expr_t *x = NULL;
    if (!gr_text_quoted(&p->t, '"', ESCAPES, &b))
        x = node(p, GR_X_LIT, pos, (char *)b.data, b.len);
    tb_buf_free(&b);
    return x;
}

/* A number of a {m,n} bound; above GR_MAX_REPEAT is an error. */
static int parse_int(gbnf_t *p, uint32_t *v)
{
    gr_pos_t pos = gr_text_pos(&p->t);
    uint8_t c = gr_text_at(&p->t, 0);
    if (c < '0' || c > '9')
        return fail_here(p, "expected a number");
    uint64_t n = 0;
    while ((c = gr_text_at(&p->t, 0)) >= '0' && c <= '9') {
        if (n <= GR_MAX_REPEAT)
            n = n * 10 + (c - '0');
        gr_text_skip(&p->t, 1);
    }
    if (n > GR_MAX_REPEAT)
        return gr_text_fail(&p->t, pos, "repetition bound above %u", GR_MAX_REPEAT);
    *v = (uint32_t)n;
    return 0;
}

/* {m} {m,} {m,n} at t (at '{'). */
static gr_expr_t *parse_braces(gbnf_t *p, gr_expr_t *x)
{
    gr_pos_t pos = gr_text_pos(&p->t);
    uint32_t m, n;
    gr_text_skip(&p->t, 1);
    skip_space(p);
    if (parse_int(p, &m))
        return NULL;
    skip_space(p);
    n = m;
    if (gr_text_at(&p->t, 0) == ',') {
        gr_text_skip(&p->t, 1);
        skip_space(p);
        n = GR_UNBOUNDED;
        if (gr_text_at(&p->t, 0) != '}' && parse_int(p, &n))
            return NULL;
        skip_space(p);
    }
    if (gr_text_at(&p->t, 0) != '}') {
        fail_here(p, "expected '}' closing a repetition");
        return NULL;
    }
    gr_text_skip(&p->t, 1);
    return gr_ebnf_rep(p->e, x, m, n, pos, p->t.err);
}

static gr_expr_t *parse_alternates(gbnf_t *p, gr_pos_t pos);

static gr_expr_t *parse_primary(gbnf_t *p)
{
    gr_pos_t pos = gr_text_pos(&p->t);
    uint8_t c = gr_text_at(&p->t, 0);
    if (c == '"')
        return parse_literal(p);
    if (c == '[')
        return parse_class(p);
    if (c == '.') {
        gr_text_skip(&p->t, 1);
        gr_expr_t *x = node(p, GR_X_REGEX, pos, ANY, strlen(ANY));
        if (x && !(x->show = strdup(".")))
            x = NULL, tb_fail(p->t.err, "out of memory");
        if (x)
            x->atom = 1;
        return x;
    }
    if (c == '(') {
        gr_text_skip(&p->t, 1);
        gr_expr_t *x = parse_alternates(p, pos);
        if (x && gr_text_at(&p->t, 0) != ')') {
            fail_here(p, "expected ')'");
            return NULL;
        }
        gr_text_skip(&p->t, 1);
        return x;
    }
    if (is_name(c)) {
        size_t n = name_len(p, p->t.i);
        gr_expr_t *x = node(p, GR_X_REF, pos, p->t.s + p->t.i, n);
        gr_text_skip(&p->t, n);
        return x;
    }
    if (c == '<') {
        gr_text_fail(&p->t, pos, "special tokens (<...>) are not supported");
        return NULL;
    }
    fail_here(p, "expected a literal, a class, '.', '(' or a rule name");
    return NULL;
}

/* A primary and its postfix operators. */
static gr_expr_t *parse_item(gbnf_t *p)
{
    gr_expr_t *x = parse_primary(p);
    for (;;) {
        if (!x)
            return NULL;
        skip_space(p);
        gr_pos_t pos = gr_text_pos(&p->t);
        uint8_t c = gr_text_at(&p->t, 0);
        if (c == '{') {
            x = parse_braces(p, x);
            continue;
        }
        if (c != '?' && c != '*' && c != '+')
            return x;
        gr_text_skip(&p->t, 1);
        x = gr_ebnf_rep(p->e, x, c == '+', c == '?' ? 1 : GR_UNBOUNDED, pos, p->t.err);
    }
}

/* Items up to '|', ')', the next rule head or the end. */
static gr_expr_t *parse_sequence(gbnf_t *p)
{
    skip_space(p);
    gr_expr_t *seq = node(p, GR_X_SEQ, gr_text_pos(&p->t), NULL, 0);
    while (seq) {
        skip_space(p);
        uint8_t c = gr_text_at(&p->t, 0);
        if (p->t.i >= p->t.len || c == '|' || c == ')' || at_rule_head(p))
            return seq;
        gr_expr_t *x = parse_item(p);
        if (!x || gr_ebnf_add(seq, x, p->t.err))
            return NULL;
    }
    return NULL;
}

/* Sequences separated by '|': an ALT when there are several. */
static gr_expr_t *parse_alternates(gbnf_t *p, gr_pos_t pos)
{
    if (++p->depth > GR_MAX_NEST) {
        gr_text_fail(&p->t, pos, "groups nested more than %d deep", GR_MAX_NEST);
        return NULL;
    }
    gr_expr_t *first = parse_sequence(p), *alt = NULL;
    while (first && gr_text_at(&p->t, 0) == '|') {
        gr_text_skip(&p->t, 1);
        if (!alt && (!(alt = node(p, GR_X_ALT, pos, NULL, 0)) ||
                     gr_ebnf_add(alt, first, p->t.err)))
            return NULL;
        gr_expr_t *next = parse_sequence(p);
        if (!next || gr_ebnf_add(alt, next, p->t.err))
            return NULL;
    }
    p->depth--;
    return alt ? alt : first;
}

static int parse_rule(gbnf_t *p)
{
    gr_pos_t pos = gr_text_pos(&p->t);
    if (!is_name(gr_text_at(&p->t, 0)))
        return fail_here(p, "expected a rule name");
    if (!at_rule_head(p)) {
        gr_text_skip(&p->t, name_len(p, p->t.i));
        while (gr_text_at(&p->t, 0) == ' ' || gr_text_at(&p->t, 0) == '\t')
            gr_text_skip(&p->t, 1);
        return fail_here(p, "expected '::='");
    }
    size_t n = name_len(p, p->t.i);
    const char *name = p->t.s + p->t.i;
    gr_text_skip(&p->t, n);
    while (gr_text_at(&p->t, 0) != ':')
        gr_text_skip(&p->t, 1);
    gr_text_skip(&p->t, 3);
    gr_expr_t *body = parse_alternates(p, gr_text_pos(&p->t));
    if (!body)
        return -1;
    if (gr_text_at(&p->t, 0) == ')')
        return fail_here(p, "unbalanced parenthesis: expected a rule or the end");
    return gr_ebnf_rule(p->e, name, n, pos, 0, body, p->t.err);
}

int gr_gbnf_read(gr_cfg_t *g, const char *text, size_t len, gr_sym_t *start, tb_err_t *err)
{
    gr_ebnf_t e;
    if (gr_ebnf_init(&e, g->source, err))
        return -1;
    gbnf_t p = {.e = &e};
    gr_text_init(&p.t, text, len, g->source, err);
    int rc = 0;
    for (skip_space(&p); !rc && p.t.i < p.t.len; skip_space(&p))
        rc = parse_rule(&p);
    if (!rc)
        rc = gr_ebnf_lower(&e, g, "root", start, err);
    gr_ebnf_free(&e);
    return rc;
}
