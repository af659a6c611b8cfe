/*
 * ebnf: the readers' text cursor, expression trees, and their lowering into
 * the CFG with regular runs merged into lexemes (ebnf.h).
 */
#include "ebnf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/utf8.h"
#include "../lexer/deriv.h"

/* ---- text cursor ---- */

void gr_text_init(gr_text_t *t, const char *s, size_t len, const char *source, tb_err_t *err)
{
    *t = (gr_text_t){.s = s, .len = len, .line = 1, .source = source, .err = err};
}

gr_pos_t gr_text_pos(const gr_text_t *t)
{
    return (gr_pos_t){t->line, (uint32_t)(t->i - t->bol + 1)};
}

void gr_text_skip(gr_text_t *t, size_t n)
{
    for (; n && t->i < t->len; n--) {
        if (t->s[t->i++] == '\n') {
            t->line++;
            t->bol = t->i;
        }
    }
}

int gr_text_fail(const gr_text_t *t, gr_pos_t pos, const char *fmt, ...)
{
    char msg[TB_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tb_fail(t->err, "%s:%u:%u: %s", t->source, pos.line, pos.col, msg);
}

static int hex_val(uint8_t c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
        return (c | 0x20) - 'a' + 10;
    return -1;
}

/* The code point of the hex escape at t (\x, \u or \U; t->i at '\\'). */
static int hex_escape(gr_text_t *t, size_t digits, uint32_t *cp)
{
    gr_pos_t at = gr_text_pos(t);
    uint32_t v = 0;
    for (size_t k = 0; k < digits; k++) {
        int h = hex_val(gr_text_at(t, 2 + k));
        if (h < 0)
            return gr_text_fail(t, at, "escape \\%c needs %zu hex digits", t->s[t->i + 1],
                                digits);
        v = v * 16 + (uint32_t)h;
    }
    if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return gr_text_fail(t, at, "escape \\%c: code point U+%X out of range (or a "
                            "surrogate)", t->s[t->i + 1], v);
    gr_text_skip(t, 2 + digits);
    *cp = v;
    return 0;
}

int gr_text_char(gr_text_t *t, const char *escapes, uint32_t *cp)
{
    uint8_t c = gr_text_at(t, 0);
    if (c == '\\') {
        uint8_t e = gr_text_at(t, 1);
        if (t->i + 1 >= t->len)
            return gr_text_fail(t, gr_text_pos(t), "a backslash ends the file");
        if (e == 'x' || e == 'u' || e == 'U')
            return hex_escape(t, e == 'x' ? 2 : e == 'u' ? 4 : 8, cp);
        for (const char *p = escapes; e && p[0]; p += 2) {
            if ((uint8_t)p[0] == e) {
                *cp = (uint8_t)p[1];
                gr_text_skip(t, 2);
                return 0;
            }
        }
        if (e < 0x20 || e >= 0x7F)
            return gr_text_fail(t, gr_text_pos(t), "unknown escape (backslash before byte "
                                "0x%02X)", e);
        return gr_text_fail(t, gr_text_pos(t), "unknown escape \\%c", e);
    }
    size_t n = tb_utf8_decode((const uint8_t *)t->s + t->i, t->len - t->i, cp);
    if (!n)
        return gr_text_fail(t, gr_text_pos(t), "invalid UTF-8 at byte offset %zu", t->i);
    gr_text_skip(t, n);
    return 0;
}

int gr_text_quoted(gr_text_t *t, char q, const char *escapes, tb_buf_t *out)
{
    gr_pos_t open = gr_text_pos(t);
    gr_text_skip(t, 1);
    for (;;) {
        uint8_t c = gr_text_at(t, 0);
        if (t->i >= t->len || c == '\n' || c == '\r')
            return gr_text_fail(t, open, "unterminated literal (a literal ends on its line)");
        if (c == (uint8_t)q) {
            gr_text_skip(t, 1);
            return 0;
        }
        uint32_t cp;
        uint8_t u[4];
        if (gr_text_char(t, escapes, &cp))
            return -1;
        if (tb_buf_put(out, u, tb_utf8_encode(cp, u)))
            return tb_fail(t->err, "out of memory");
    }
}

/* ---- trees ---- */

int gr_ebnf_init(gr_ebnf_t *e, const char *source, tb_err_t *err)
{
    memset(e, 0, sizeof *e);
    e->source = source;
    e->merge = 1;
    if (tb_strmap_init(&e->by_name, 64))
        return tb_fail(err, "out of memory");
    if (lex_terms_init(&e->terms, LEX_DEFAULT_MAX_TERMS, err)) {
        tb_strmap_free(&e->by_name);
        return -1;
    }
    return 0;
}

void gr_ebnf_free(gr_ebnf_t *e)
{
    for (size_t i = 0; i < e->nodes.len; i++) {
        gr_expr_t *x = e->nodes.data[i];
        free(x->text);
        free(x->show);
        free(x->kid.data);
        free(x);
    }
    for (size_t i = 0; i < e->rule.len; i++) {
        free(e->rule.data[i].name);
        free(e->rule.data[i].regex);
    }
    free(e->nodes.data);
    free(e->rule.data);
    free(e->ignore.data);
    tb_strmap_free(&e->by_name);
    lex_terms_free(&e->terms);
    memset(e, 0, sizeof *e);
}

gr_expr_t *gr_ebnf_node(gr_ebnf_t *e, gr_xkind_t kind, gr_pos_t pos, const char *text,
                        size_t len, tb_err_t *err)
{
    gr_expr_t *x = calloc(1, sizeof *x);
    if (!x || tb_vec_push(&e->nodes, x)) {
        free(x);
        tb_fail(err, "out of memory");
        return NULL;
    }
    x->kind = kind;
    x->pos = pos;
    if (text) {
        x->text = malloc(len + 1);
        if (!x->text) {
            tb_fail(err, "out of memory");
            return NULL;
        }
        memcpy(x->text, text, len);
        x->text[len] = 0;
        x->len = len;
    }
    return x;
}

int gr_ebnf_add(gr_expr_t *parent, gr_expr_t *kid, tb_err_t *err)
{
    return tb_vec_push(&parent->kid, kid) ? tb_fail(err, "out of memory") : 0;
}

gr_expr_t *gr_ebnf_rep(gr_ebnf_t *e, gr_expr_t *x, uint32_t m, uint32_t n, gr_pos_t pos,
                       tb_err_t *err)
{
    if (m > GR_MAX_REPEAT || (n != GR_UNBOUNDED && (n > GR_MAX_REPEAT || m > n))) {
        tb_fail(err, "%s:%u:%u: repetition {%u,%u} out of range (0 <= m <= n <= %u)",
                e->source, pos.line, pos.col, m, n, GR_MAX_REPEAT);
        return NULL;
    }
    gr_expr_t *r = gr_ebnf_node(e, GR_X_REP, pos, NULL, 0, err);
    if (!r || gr_ebnf_add(r, x, err))
        return NULL;
    r->m = m;
    r->n = n;
    return r;
}

int gr_class_cp(tb_buf_t *b, uint32_t cp)
{
    if ((cp >= '0' && cp <= '9') || ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') || cp == ' ')
        return tb_buf_putc(b, (uint8_t)cp);
    if (cp > 0x20 && cp < 0x7F) {
        uint8_t e[2] = {'\\', (uint8_t)cp};
        return tb_buf_put(b, e, 2);
    }
    char hex[16];
    int n = snprintf(hex, sizeof hex, "\\x{%X}", cp);
    return tb_buf_put(b, hex, (size_t)n);
}

int gr_ebnf_rule(gr_ebnf_t *e, const char *name, size_t len, gr_pos_t pos, int terminal,
                 gr_expr_t *body, tb_err_t *err)
{
    int32_t found = tb_strmap_get(&e->by_name, (const uint8_t *)name, len);
    if (found >= 0) {
        gr_pos_t first = e->rule.data[found].pos;
        return tb_fail(err, "%s:%u:%u: '%.*s' is defined twice (first at %u:%u)", e->source,
                       pos.line, pos.col, (int)len, name, first.line, first.col);
    }
    gr_xrule_t r = {.pos = pos, .body = body, .terminal = (uint8_t)terminal};
    r.name = malloc(len + 1);
    if (!r.name || tb_vec_push(&e->rule, r)) {
        free(r.name);
        return tb_fail(err, "out of memory");
    }
    memcpy(r.name, name, len);
    r.name[len] = 0;
    if (tb_strmap_put(&e->by_name, (const uint8_t *)r.name, len, (int32_t)(e->rule.len - 1)) < 0)
        return tb_fail(err, "out of memory");
    return 0;
}

int gr_ebnf_check_regex(gr_ebnf_t *e, const char *pattern, size_t len, gr_pos_t pos,
                        uint8_t *nullable, tb_err_t *err)
{
    lex_term_t t;
    if (lex_regex_parse(&e->terms, pattern, len, &t, err) == 0) {
        *nullable = lex_node(&e->terms, t)->nullable;
        return 0;
    }
    /* regex.h's errors end with "at offset N" (a byte offset in the
     * pattern): turned into the column of that byte in the file. */
    const char *at = NULL;
    for (const char *p = strstr(err->msg, " at offset "); p; p = strstr(p + 1, " at offset "))
        at = p;
    uint32_t col = pos.col;
    if (at) {
        unsigned long off = strtoul(at + 11, NULL, 10);
        if (off <= len)
            col += (uint32_t)off;
    }
    return tb_wrap(err, "%s:%u:%u", e->source, pos.line, col);
}

/* ---- regexes of regular expressions ----
 *
 * A piece of regex is kept with its precedence, so that groups are added
 * only where needed: an atom takes a quantifier as it is, a quantified atom
 * must be grouped before another quantifier (x?+ would be possessive), a
 * concatenation inside a concatenation needs nothing, an alternation needs
 * a group everywhere but alone. */

enum { P_ATOM, P_QUANT, P_SEQ, P_ALT };
enum { RULE_NEW, RULE_BUSY, RULE_REGULAR, RULE_CFG };

/* look: the piece has look-aheads at its top (& or ~): it may only stand
 * alone in a lexeme, or as one of the alternatives that make it up. */
typedef struct {
    uint8_t nullable, eps, prec, look;
} rx_info_t;

typedef struct {
    gr_ebnf_t *e;
    gr_cfg_t *g;
    tb_err_t *err;
    TB_VEC(uint32_t) queue; /* rules whose nonterminal needs its rules */
    unsigned depth;         /* rules being turned into regexes, nested */
} lower_t;

/* Deepest chain of rules inlined into one regex (the recursion's bound). */
#define MAX_INLINE_DEPTH 1000

static int oom(lower_t *L)
{
    return tb_fail(L->err, "out of memory");
}

static int fail_at(lower_t *L, gr_pos_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_at(lower_t *L, gr_pos_t pos, const char *fmt, ...)
{
    char msg[TB_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tb_fail(L->err, "%s:%u:%u: %s", L->e->source, pos.line, pos.col, msg);
}

/* Appends piece p (of precedence prec) to b, grouped if it is above max. */
static int put_piece(tb_buf_t *b, const char *p, size_t n, uint8_t prec, uint8_t max)
{
    if (prec <= max)
        return tb_buf_put(b, p, n);
    return tb_buf_put(b, "(?:", 3) || tb_buf_put(b, p, n) || tb_buf_putc(b, ')');
}

static int put_quant(tb_buf_t *b, uint32_t m, uint32_t n)
{
    char q[32];
    if (m == 0 && n == 1)
        strcpy(q, "?");
    else if (m == 0 && n == GR_UNBOUNDED)
        strcpy(q, "*");
    else if (m == 1 && n == GR_UNBOUNDED)
        strcpy(q, "+");
    else if (m == n)
        snprintf(q, sizeof q, "{%u}", m);
    else if (n == GR_UNBOUNDED)
        snprintf(q, sizeof q, "{%u,}", m);
    else
        snprintf(q, sizeof q, "{%u,%u}", m, n);
    return tb_buf_put(b, q, strlen(q));
}

static gr_xrule_t *find_rule(gr_ebnf_t *e, const char *name)
{
    int32_t i = tb_strmap_get(&e->by_name, (const uint8_t *)name, strlen(name));
    return i < 0 ? NULL : &e->rule.data[i];
}

static int rx_emit(lower_t *L, const gr_expr_t *x, int term, tb_buf_t *b, rx_info_t *in);

/* The regex of a rule (memoised): 1 if it is regular, 0 if not, -1 on an
 * error.  Only terminals make irregularity an error. */
static int rule_regex(lower_t *L, gr_xrule_t *r, tb_buf_t *b, rx_info_t *in)
{
    if (r->state == RULE_CFG)
        return 0;
    if (r->state == RULE_BUSY) {
        if (r->terminal)
            return fail_at(L, r->pos, "terminal '%s' is recursive (terminals are regular "
                           "expressions: use a lower-case rule)", r->name);
        return 0;
    }
    if (r->state == RULE_NEW) {
        if (L->depth >= MAX_INLINE_DEPTH)
            return r->terminal ? fail_at(L, r->pos, "terminal '%s' nests terminals more than "
                                         "%d deep", r->name, MAX_INLINE_DEPTH)
                               : 0;
        tb_buf_t own = {0};
        rx_info_t info;
        r->state = RULE_BUSY;
        L->depth++;
        int rc = rx_emit(L, r->body, r->terminal, &own, &info);
        L->depth--;
        if (rc == 1 && own.len > GR_MAX_REGEX) {
            rc = r->terminal ? fail_at(L, r->pos, "terminal '%s' is too large (its regex "
                                       "passes %u bytes)", r->name, GR_MAX_REGEX)
                             : 0;
        }
        if (rc == 1 && tb_buf_putc(&own, 0))
            rc = oom(L);
        if (rc < 0) {
            tb_buf_free(&own);
            r->state = RULE_NEW;
            return -1;
        }
        r->state = rc ? RULE_REGULAR : RULE_CFG;
        r->regex = rc ? (char *)own.data : NULL;
        if (!rc)
            tb_buf_free(&own);
        r->nullable = info.nullable;
        r->eps = info.eps;
        r->prec = info.prec;
        r->look = info.look;
        if (!rc)
            return 0;
    }
    *in = (rx_info_t){r->nullable, r->eps, r->prec, r->look};
    return tb_buf_put(b, r->regex, strlen(r->regex)) ? oom(L) : 1;
}

static int emit_ref(lower_t *L, const gr_expr_t *x, int term, tb_buf_t *b, rx_info_t *in)
{
    gr_xrule_t *r = find_rule(L->e, x->text);
    if (!r)
        return 0; /* undefined: reported by check_refs */
    if (term && !r->terminal)
        return fail_at(L, x->pos, "rule '%s' used inside a terminal (a terminal is one "
                       "regex: it may only use literals, regexes and terminals)", x->text);
    if (!r->terminal && !L->e->merge)
        return 0;
    return rule_regex(L, r, b, in);
}

/* x, a piece with & or ~, would not be alone in its lexeme: inside a
 * terminal a refusal; in a rule (term 0) x is not regular, so the rule
 * stays a rule and the piece is a lexeme of its own. */
static int alone(lower_t *L, const gr_expr_t *x, int term)
{
    if (!term)
        return 0;
    return fail_at(L, x->pos, "a terminal with & or ~ must stand alone: not repeated, and "
                   "not in a sequence with other items (it becomes a look-ahead at the top "
                   "of its lexeme)");
}

/* A SEQ or ALT: its items emitted, those that only match "" left out; a
 * lone piece is not grouped. */
static int emit_list(lower_t *L, const gr_expr_t *x, int term, tb_buf_t *b, rx_info_t *in)
{
    int seq = x->kind == GR_X_SEQ, has_eps = 0, rc = 1;
    size_t kept = 0, start = b->len;
    tb_buf_t first = {0};
    *in = (rx_info_t){seq, 1, P_ATOM, 0};
    for (size_t k = 0; k < x->kid.len && rc == 1; k++) {
        tb_buf_t piece = {0};
        rx_info_t ki;
        rc = rx_emit(L, x->kid.data[k], term, &piece, &ki);
        if (rc == 1 && seq && !ki.eps && (ki.look || in->look) && kept)
            rc = alone(L, x->kid.data[k], term);
        if (rc == 1 && !ki.eps && kept == 0) {
            first = piece; /* written once a second piece shows it needs a group */
            piece = (tb_buf_t){0};
            in->prec = ki.prec;
        } else if (rc == 1 && !ki.eps) {
            uint8_t max = seq ? P_SEQ : P_ALT;
            if ((kept == 1 && put_piece(b, (char *)first.data, first.len, in->prec, max)) ||
                (!seq && tb_buf_putc(b, '|')) ||
                put_piece(b, (char *)piece.data, piece.len, ki.prec, max))
                rc = oom(L);
            in->prec = max;
        }
        tb_buf_free(&piece);
        if (rc != 1)
            break;
        kept += !ki.eps;
        has_eps |= ki.eps;
        in->look |= ki.look;
        if (seq)
            in->nullable &= ki.nullable;
        else if (!ki.eps)
            in->nullable |= ki.nullable; /* an empty alternative counted below */
        in->eps &= ki.eps;
    }
    if (rc == 1 && kept == 1 && tb_buf_put(b, first.data, first.len))
        rc = oom(L);
    tb_buf_free(&first);
    if (rc != 1)
        return rc;
    if (!seq && kept && has_eps && !in->nullable && in->look)
        return alone(L, x, term);
    if (!seq && kept && has_eps && !in->nullable) {
        /* An empty alternative beside others that all need a byte: the
         * others made optional. */
        tb_buf_t opt = {0};
        rc = put_piece(&opt, (char *)b->data + start, b->len - start, in->prec, P_ATOM) ||
             tb_buf_putc(&opt, '?');
        if (!rc) {
            b->len = start;
            rc = tb_buf_put(b, opt.data, opt.len);
        }
        tb_buf_free(&opt);
        if (rc)
            return oom(L);
        in->prec = P_QUANT;
    }
    if (!seq)
        in->nullable |= has_eps;
    return 1;
}

static int emit_rep(lower_t *L, const gr_expr_t *x, int term, tb_buf_t *b, rx_info_t *in)
{
    if ((x->n != GR_UNBOUNDED && x->n > LEX_MAX_REPEAT) || x->m > LEX_MAX_REPEAT) {
        if (term)
            return fail_at(L, x->pos, "repetition bound above %d in a terminal (the lexer's "
                           "limit; use a rule)", LEX_MAX_REPEAT);
        return 0;
    }
    tb_buf_t piece = {0};
    rx_info_t ki;
    int rc = rx_emit(L, x->kid.data[0], term, &piece, &ki);
    if (rc == 1 && ki.look && !ki.eps && (x->m != 1 || x->n != 1))
        rc = alone(L, x, term);
    if (rc == 1) {
        *in = (rx_info_t){x->m == 0 || ki.nullable, ki.eps || x->n == 0, P_QUANT, ki.look};
        if (!in->eps && (x->m != 1 || x->n != 1)) {
            if (put_piece(b, (char *)piece.data, piece.len, ki.prec, P_ATOM) ||
                put_quant(b, x->m, x->n))
                rc = oom(L);
        } else if (!in->eps) {
            in->prec = ki.prec;
            if (tb_buf_put(b, piece.data, piece.len))
                rc = oom(L);
        }
    }
    tb_buf_free(&piece);
    return rc;
}

static const gr_expr_t *unwrap(const gr_expr_t *x);

/* Appends operand x of & or ~ as the look-ahead (?=(?:R)$) or, negated,
 * (?!(?:R)$): the rest of the lexeme's text matches R, or does not. */
static int put_look(lower_t *L, const gr_expr_t *x, int neg, tb_buf_t *b, uint8_t *nullable)
{
    tb_buf_t r = {0};
    rx_info_t in;
    int rc = rx_emit(L, x, 1, &r, &in);
    if (rc == 1 && in.look)
        rc = fail_at(L, x->pos, "& and ~ nested inside an operand of & or ~ are not "
                     "supported");
    if (rc == 1 && (tb_buf_put(b, neg ? "(?!(?:" : "(?=(?:", 6) || tb_buf_put(b, r.data, r.len) ||
                    tb_buf_put(b, ")$)", 3)))
        rc = oom(L);
    *nullable = (uint8_t)(neg ? !in.nullable : in.nullable);
    tb_buf_free(&r);
    return rc;
}

/* A & B & ~C (AND) or ~C (NOT): each operand a look-ahead, then any text
 * ([\s\S]*, or [\s\S]+ when nonnull asks for the non-empty strings), so
 * that the operands hold for the lexeme's whole text.  Only in terminals. */
static int emit_and(lower_t *L, const gr_expr_t *x, int term, int nonnull, tb_buf_t *b,
                    rx_info_t *in)
{
    if (!term)
        return fail_at(L, x->pos, "& and ~ (lexeme intersection and complement) are "
                       "supported inside terminals only, not in rules");
    gr_expr_t *const *ops = x->kind == GR_X_AND ? x->kid.data : (gr_expr_t *const *)&x;
    size_t n = x->kind == GR_X_AND ? x->kid.len : 1;
    *in = (rx_info_t){1, 0, P_SEQ, 1};
    L->g->lookahead = 1; /* the lexer reads top-level look-aheads */
    L->g->user_lookahead = 1;
    L->e->terms.lookahead = 1;
    for (size_t i = 0; i < n; i++) {
        const gr_expr_t *op = unwrap(ops[i]);
        int neg = op->kind == GR_X_NOT;
        uint8_t nullable;
        if (put_look(L, neg ? op->kid.data[0] : op, neg, b, &nullable) != 1)
            return -1;
        in->nullable &= nullable;
    }
    return tb_buf_put(b, nonnull ? "[\\s\\S]+" : "[\\s\\S]*", 7) ? oom(L) : 1;
}

/* Appends the regex of x to b: 1 if x is regular (in->nullable, eps: it
 * matches the empty string, only that), 0 if it is not, -1 on an error.
 * term: x is inside a terminal. */
static int rx_emit(lower_t *L, const gr_expr_t *x, int term, tb_buf_t *b, rx_info_t *in)
{
    switch (x->kind) {
    case GR_X_LIT: {
        *in = (rx_info_t){x->len == 0, x->len == 0, P_SEQ, 0};
        if (x->icase && x->len && tb_buf_put(b, "(?i:", 4))
            return oom(L);
        if (gr_regex_escape(b, (const uint8_t *)x->text, x->len))
            return oom(L);
        if (x->icase && x->len && tb_buf_putc(b, ')'))
            return oom(L);
        if (x->icase || (x->len && x->len == tb_utf8_lead_len((uint8_t)x->text[0])))
            in->prec = P_ATOM; /* one code point */
        return 1;
    }
    case GR_X_REGEX:
        *in = (rx_info_t){x->nullable, 0, x->atom ? P_ATOM : P_ALT, 0};
        return tb_buf_put(b, x->text, x->len) ? oom(L) : 1;
    case GR_X_REF:
        return emit_ref(L, x, term, b, in);
    case GR_X_SEQ:
    case GR_X_ALT:
        return emit_list(L, x, term, b, in);
    case GR_X_REP:
        return emit_rep(L, x, term, b, in);
    case GR_X_AND:
    case GR_X_NOT:
        return emit_and(L, x, term, 0, b, in);
    case GR_X_TOKEN:
        return term ? fail_at(L, x->pos, "special tokens (like %s) cannot be used in "
                              "terminals: they are token ids, a terminal is bytes", x->text)
                    : 0;
    }
    return 0;
}

/* ---- the strings of a regular expression but the empty one ---- */

static int rx_nonnull(lower_t *L, const gr_expr_t *x, int term, tb_buf_t *b);

/* items[0..n) all nullable, all regular: the union over i of
 * nonnull(item i) followed by items i+1..n-1 (the first non-empty one). */
static int nonnull_seq(lower_t *L, gr_expr_t *const *items, size_t n, int term, tb_buf_t *b)
{
    size_t alts = 0;
    for (size_t i = 0; i < n; i++) {
        tb_buf_t piece = {0};
        rx_info_t ki;
        int rc = rx_emit(L, items[i], term, &piece, &ki);
        tb_buf_free(&piece);
        if (rc != 1)
            return rc < 0 ? -1 : fail_at(L, items[i]->pos, "internal: irregular item");
        if (ki.eps)
            continue;
        tb_buf_t alt = {0};
        rc = rx_nonnull(L, items[i], term, &alt);
        for (size_t k = i + 1; rc == 1 && k < n; k++) {
            tb_buf_t p = {0};
            rx_info_t pi;
            rc = rx_emit(L, items[k], term, &p, &pi);
            if (rc == 1 && !pi.eps && put_piece(&alt, (char *)p.data, p.len, pi.prec, P_SEQ))
                rc = oom(L);
            tb_buf_free(&p);
        }
        if (rc == 1 && ((alts++ && tb_buf_putc(b, '|')) ||
                        put_piece(b, (char *)alt.data, alt.len, P_SEQ, P_SEQ)))
            rc = oom(L);
        tb_buf_free(&alt);
        if (rc != 1)
            return rc;
    }
    return 1;
}

/* Appends a regex for L(x) minus the empty string (x regular, nullable,
 * not only empty), written as an alternation-level piece.  1, or -1 where
 * that cannot be written (a /regex/ of the file that matches ""). */
static int rx_nonnull(lower_t *L, const gr_expr_t *x, int term, tb_buf_t *b)
{
    tb_buf_t piece = {0};
    rx_info_t in;
    int rc = rx_emit(L, x, term, &piece, &in);
    if (rc == 1 && !in.nullable) {
        rc = put_piece(b, (char *)piece.data, piece.len, in.prec, P_ALT) ? oom(L) : 1;
        tb_buf_free(&piece);
        return rc;
    }
    tb_buf_free(&piece);
    if (rc != 1)
        return -1;
    switch (x->kind) {
    case GR_X_REGEX:
        return fail_at(L, x->pos, "regex %s matches the empty string, and a lexeme must "
                       "read at least one byte (make it non-empty and optional: /x+/? for "
                       "/x*/)", x->show ? x->show : x->text);
    case GR_X_REF: {
        gr_xrule_t *r = find_rule(L->e, x->text);
        return rx_nonnull(L, r->body, r->terminal, b);
    }
    case GR_X_SEQ:
        return nonnull_seq(L, x->kid.data, x->kid.len, term, b);
    case GR_X_ALT: {
        size_t alts = 0;
        for (size_t k = 0; k < x->kid.len; k++) {
            tb_buf_t p = {0};
            rx_info_t ki;
            rc = rx_emit(L, x->kid.data[k], term, &p, &ki);
            tb_buf_free(&p);
            if (rc != 1)
                return -1;
            if (ki.eps)
                continue;
            if (alts++ && tb_buf_putc(b, '|'))
                return oom(L);
            if (rx_nonnull(L, x->kid.data[k], term, b) != 1)
                return -1;
        }
        return 1;
    }
    case GR_X_REP: {
        /* x{m,n} with x nullable (or m == 0) is nonnull(x){1,n}. */
        tb_buf_t p = {0};
        rx_info_t ki;
        rc = rx_emit(L, x->kid.data[0], term, &p, &ki);
        if (rc == 1 && ki.nullable) {
            p.len = 0;
            ki.prec = P_ALT;
            rc = rx_nonnull(L, x->kid.data[0], term, &p);
        }
        if (rc == 1 && (put_piece(b, (char *)p.data, p.len, ki.prec, P_ATOM) ||
                        (x->n != 1 && put_quant(b, 1, x->n))))
            rc = oom(L);
        tb_buf_free(&p);
        return rc;
    }
    case GR_X_AND:
    case GR_X_NOT:
        return emit_and(L, x, term, 1, b, &in);
    case GR_X_LIT:
    case GR_X_TOKEN: /* never regular */
        break;
    }
    return fail_at(L, x->pos, "internal: empty literal");
}

/* ---- lowering into the CFG ---- */

#define NAME_MAX_SHOW 80

/* Writes x roughly as the file had it (for lexeme names). */
static int show(const gr_expr_t *x, tb_buf_t *b, int nested)
{
    if (b->len > NAME_MAX_SHOW)
        return 0;
    switch (x->kind) {
    case GR_X_LIT:
        return tb_buf_putc(b, '"') || tb_buf_put(b, x->text, x->len) || tb_buf_putc(b, '"') ||
               (x->icase && tb_buf_putc(b, 'i'));
    case GR_X_REGEX: {
        const char *s = x->show ? x->show : x->text;
        return tb_buf_put(b, s, strlen(s));
    }
    case GR_X_REF:
    case GR_X_TOKEN:
        return tb_buf_put(b, x->text, x->len);
    case GR_X_SEQ:
    case GR_X_ALT: {
        if (x->kid.len == 1)
            return show(x->kid.data[0], b, nested);
        int group = nested || x->kind == GR_X_ALT;
        if (group && tb_buf_putc(b, '('))
            return -1;
        for (size_t k = 0; k < x->kid.len; k++) {
            if (k && tb_buf_put(b, x->kind == GR_X_ALT ? " | " : " ", x->kind == GR_X_ALT ? 3 : 1))
                return -1;
            if (show(x->kid.data[k], b, 1))
                return -1;
        }
        return group && tb_buf_putc(b, ')');
    }
    case GR_X_REP:
        return show(x->kid.data[0], b, 1) || put_quant(b, x->m, x->n);
    case GR_X_AND:
        for (size_t k = 0; k < x->kid.len; k++)
            if ((k && tb_buf_put(b, " & ", 3)) || show(x->kid.data[k], b, 1))
                return -1;
        return 0;
    case GR_X_NOT:
        return tb_buf_putc(b, '~') || show(x->kid.data[0], b, 1);
    }
    return 0;
}

/* The name of the lexeme made of items[0..n), NUL-terminated, cut to
 * about NAME_MAX_SHOW bytes (at a character boundary). */
static char *lexeme_name(gr_expr_t *const *items, size_t n)
{
    tb_buf_t b = {0};
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        rc = (i && tb_buf_putc(&b, ' ')) || show(items[i], &b, n > 1);
    if (!rc && b.len > NAME_MAX_SHOW) {
        b.len = NAME_MAX_SHOW;
        while (b.len && (b.data[b.len] & 0xC0) == 0x80)
            b.len--;
        rc = tb_buf_put(&b, "...", 3);
    }
    if (rc || tb_buf_putc(&b, 0)) {
        tb_buf_free(&b);
        return NULL;
    }
    return (char *)b.data;
}

/* x without the sequences of one item around it. */
static const gr_expr_t *unwrap(const gr_expr_t *x)
{
    while (x->kind == GR_X_SEQ && x->kid.len == 1)
        x = x->kid.data[0];
    return x;
}

/* The lexeme of regex (NUL-terminated); a new one is checked with the
 * lexer's parser. */
static int new_lexeme(lower_t *L, const char *regex, gr_expr_t *const *items, size_t n,
                      int ignore, gr_sym_t *out)
{
    char *name = lexeme_name(items, n);
    if (!name)
        return oom(L);
    size_t before = L->g->lex.len;
    gr_pos_t pos = items[0]->pos;
    const gr_expr_t *x = unwrap(items[0]);
    const gr_xrule_t *r = n == 1 && x->kind == GR_X_REF ? find_rule(L->e, x->text) : NULL;
    int rc = r && (r->attr & GR_ATTR_LAZY) && L->g->semantics == GR_SEM_LLGUIDANCE
                 ? gr_cfg_lazy_lexeme(L->g, regex, name, pos, out, L->err)
                 : gr_cfg_lexeme(L->g, regex, name, ignore, pos, out, L->err);
    if (!rc && L->g->lex.len > before) {
        lex_term_t t;
        if (lex_regex_parse(&L->e->terms, regex, strlen(regex), &t, L->err))
            rc = tb_wrap(L->err, "%s:%u:%u: lexeme %s", L->e->source, pos.line, pos.col, name);
        else if (lex_node(&L->e->terms, t)->nullable)
            rc = fail_at(L, pos, "internal: lexeme %s matches the empty string", name);
    }
    free(name);
    return rc;
}

/* 1 if x may join a run of merged items (its regex length in *len), 0 if
 * not, -1 on an error.  Without merging only single lexemes qualify. */
static int mergeable(lower_t *L, const gr_expr_t *x, rx_info_t *in, size_t *len)
{
    x = unwrap(x);
    if (!L->e->merge && x->kind != GR_X_LIT && x->kind != GR_X_REGEX) {
        gr_xrule_t *r = x->kind == GR_X_REF ? find_rule(L->e, x->text) : NULL;
        if (!r || !r->terminal)
            return 0;
    }
    tb_buf_t b = {0};
    int rc = rx_emit(L, x, 0, &b, in);
    *len = b.len;
    tb_buf_free(&b);
    return rc;
}

/* The one item of items[0..n) that is not only empty, looked for through
 * sequences and references, if it is a /regex/ (nullable: the run is),
 * else NULL.  depth bounds the references followed. */
static const gr_expr_t *lone_regex(lower_t *L, gr_expr_t *const *items, size_t n, int depth)
{
    const gr_expr_t *one = NULL;
    for (size_t i = 0; i < n; i++) {
        tb_buf_t b = {0};
        rx_info_t in;
        int rc = rx_emit(L, items[i], 0, &b, &in);
        tb_buf_free(&b);
        if (rc != 1 || (!in.eps && one))
            return NULL;
        one = in.eps ? one : items[i];
    }
    const gr_xrule_t *r = one && one->kind == GR_X_REF ? find_rule(L->e, one->text) : NULL;
    if (r && depth < GR_MAX_NEST)
        return lone_regex(L, &r->body, 1, depth + 1);
    if (one && one->kind == GR_X_SEQ)
        return lone_regex(L, one->kid.data, one->kid.len, depth);
    return one && one->kind == GR_X_REGEX ? one : NULL;
}

/* The strings of a nullable /regex/ R but the empty one, where no
 * expression tree says how to write them: (?=[\s\S])(?:R), a top-level
 * look-ahead that asks for one byte (llguidance reads such a regex as a
 * lexeme that may be empty; made optional it is the same language). */
static int nonnull_regex(lower_t *L, const gr_expr_t *x, tb_buf_t *b)
{
    L->g->lookahead = 1;
    L->g->user_lookahead = 1;
    L->e->terms.lookahead = 1;
    return tb_buf_put(b, "(?=[\\s\\S])(?:", 13) || tb_buf_put(b, x->text, x->len) ||
                   tb_buf_putc(b, ')')
               ? oom(L)
               : 1;
}

/* items[0..n) (regular) as one lexeme appended to syms, made optional
 * when the run matches the empty string; nothing when only that. */
static int emit_run(lower_t *L, gr_expr_t **items, size_t n, const char *base, tb_buf_t *syms)
{
    /* The run as a sequence node that borrows the items. */
    gr_expr_t run = {.kind = GR_X_SEQ, .pos = items[0]->pos};
    run.kid.data = items;
    run.kid.len = n;
    tb_buf_t re = {0};
    rx_info_t in;
    gr_sym_t s;
    int rc = rx_emit(L, &run, 0, &re, &in) == 1 ? 0 : -1;
    if (!rc && !in.eps && in.nullable) {
        const gr_expr_t *lone = lone_regex(L, items, n, 0);
        re.len = 0;
        rc = (lone ? nonnull_regex(L, lone, &re) : nonnull_seq(L, items, n, 0, &re)) == 1 ? 0 : -1;
    }
    if (!rc && !in.eps) {
        if (tb_buf_putc(&re, 0))
            rc = oom(L);
        if (!rc)
            rc = new_lexeme(L, (char *)re.data, items, n, 0, &s);
        if (!rc && in.nullable)
            rc = gr_cfg_opt(L->g, s, base, &s, L->err);
        if (!rc && tb_buf_put(syms, &s, sizeof s))
            rc = oom(L);
    }
    tb_buf_free(&re);
    return rc;
}

static int lower_alts(lower_t *L, const gr_expr_t *x, gr_sym_t lhs, const char *base,
                      gr_pos_t pos);

/* The nonterminal of the rule that x refers to, queued for its rules. */
static int ref_sym(lower_t *L, const gr_expr_t *x, gr_sym_t *out)
{
    gr_xrule_t *r = find_rule(L->e, x->text);
    if (gr_cfg_nonterm(L->g, x->text, x->len, x->pos, out, L->err))
        return -1;
    if (r && !r->queued) {
        r->queued = 1;
        if (tb_vec_push(&L->queue, (uint32_t)(r - L->e->rule.data)))
            return oom(L);
    }
    return 0;
}

/* x (not mergeable) as one symbol: a rule's nonterminal, or a fresh one
 * holding x's alternatives. */
static int item_sym(lower_t *L, const gr_expr_t *x, const char *base, gr_sym_t *out)
{
    if (x->kind == GR_X_REF)
        return ref_sym(L, x, out);
    if (x->kind == GR_X_TOKEN) {
        *out = x->m | GR_LEX;
        return 0;
    }
    /* One that was mergeable became a lexeme: this one refers to a rule a
     * terminal cannot hold, and its alternatives would be itself again. */
    if (x->kind == GR_X_AND || x->kind == GR_X_NOT)
        return fail_at(L, x->pos, "& and ~ (lexeme intersection and complement) take operands "
                       "a terminal can hold: no rule that refers to rules without end");
    if (gr_cfg_fresh(L->g, base, out, L->err))
        return -1;
    return lower_alts(L, x, *out, base, x->pos);
}

/* x{m,n} whose x is not merged with its neighbours: EBNF sugar of cfg.h
 * over x's symbol (a lexeme when x is regular but the bounds are above the
 * lexer's, or when merging is off). */
static int lower_rep(lower_t *L, const gr_expr_t *x, const char *base, tb_buf_t *syms)
{
    const gr_expr_t *k = unwrap(x->kid.data[0]);
    uint32_t m = x->m, n = x->n;
    rx_info_t in;
    size_t len;
    gr_sym_t s;
    int rc = mergeable(L, k, &in, &len);
    if (rc < 0 || n == 0 || (rc == 1 && in.eps))
        return rc < 0 ? -1 : 0;
    if (rc == 1) {
        tb_buf_t re = {0};
        rc = in.nullable ? rx_nonnull(L, k, 0, &re) : rx_emit(L, k, 0, &re, &in);
        if (in.nullable)
            m = 0; /* x{m,n} with x nullable: nonnull(x){0,n} */
        if (rc == 1 && tb_buf_putc(&re, 0))
            rc = oom(L);
        gr_expr_t *named = (gr_expr_t *)k;
        rc = rc == 1 ? new_lexeme(L, (char *)re.data, &named, 1, 0, &s) : -1;
        tb_buf_free(&re);
    } else {
        rc = item_sym(L, k, base, &s);
    }
    if (rc)
        return -1;
    if (m == 0 && n == 1)
        rc = gr_cfg_opt(L->g, s, base, &s, L->err);
    else if (m == 0 && n == GR_UNBOUNDED)
        rc = gr_cfg_star(L->g, s, base, &s, L->err);
    else if (m == 1 && n == GR_UNBOUNDED)
        rc = gr_cfg_plus(L->g, s, base, &s, L->err);
    else if (m != 1 || n != 1)
        rc = gr_cfg_repeat(L->g, s, m, n, base, x->pos, &s, L->err);
    if (!rc && tb_buf_put(syms, &s, sizeof s))
        rc = oom(L);
    return rc;
}

/* Nested sequences spliced into one list of items. */
static int flatten(const gr_expr_t *x, tb_buf_t *items)
{
    if (x->kind != GR_X_SEQ)
        return tb_buf_put(items, &x, sizeof x);
    for (size_t k = 0; k < x->kid.len; k++)
        if (flatten(x->kid.data[k], items))
            return -1;
    return 0;
}

/* The symbols of sequence x appended to syms (a buffer of gr_sym_t):
 * maximal runs of mergeable items as lexemes, other items as symbols. */
static int lower_seq(lower_t *L, const gr_expr_t *x, const char *base, tb_buf_t *syms)
{
    tb_buf_t ib = {0};
    if (flatten(x, &ib)) {
        tb_buf_free(&ib);
        return oom(L);
    }
    gr_expr_t **items = (gr_expr_t **)ib.data;
    size_t n = ib.len / sizeof *items;
    int rc = 0;
    for (size_t i = 0; i < n && !rc;) {
        size_t j = i, total = 0;
        while (j < n && (j == i || L->e->merge)) {
            rx_info_t in;
            size_t len;
            int m = mergeable(L, items[j], &in, &len);
            if (m < 0)
                rc = -1;
            if (m != 1 || (j > i && (total + len > GR_MAX_REGEX || in.look)))
                break;
            total += len;
            j++;
            if (in.look) /* a lexeme of its own */
                break;
        }
        if (rc)
            break;
        if (j > i) {
            rc = emit_run(L, items + i, j - i, base, syms);
            i = j;
            continue;
        }
        gr_sym_t s;
        if (items[i]->kind == GR_X_REP)
            rc = lower_rep(L, items[i], base, syms);
        else if ((rc = item_sym(L, items[i], base, &s)) == 0 && tb_buf_put(syms, &s, sizeof s))
            rc = oom(L);
        i++;
    }
    tb_buf_free(&ib);
    return rc;
}

/* One rule lhs -> ... for each alternative of x. */
static int lower_alts(lower_t *L, const gr_expr_t *x, gr_sym_t lhs, const char *base,
                      gr_pos_t pos)
{
    size_t nalt = x->kind == GR_X_ALT ? x->kid.len : 1;
    for (size_t a = 0; a < nalt; a++) {
        const gr_expr_t *alt = x->kind == GR_X_ALT ? x->kid.data[a] : x;
        tb_buf_t syms = {0};
        int rc = lower_seq(L, alt, base, &syms);
        if (!rc)
            rc = gr_cfg_rule(L->g, lhs, (gr_sym_t *)syms.data, syms.len / sizeof(gr_sym_t), pos,
                             L->err);
        tb_buf_free(&syms);
        if (rc)
            return -1;
    }
    return 0;
}

/* Every reference names a rule (also in rules the start never reaches). */
static int check_refs(lower_t *L, const gr_expr_t *x)
{
    if (x->kind == GR_X_REF && !find_rule(L->e, x->text))
        return fail_at(L, x->pos, "undefined rule '%s'", x->text);
    for (size_t k = 0; k < x->kid.len; k++)
        if (check_refs(L, x->kid.data[k]))
            return -1;
    return 0;
}

/* The ignored lexeme of %ignore x. */
static int lower_ignore(lower_t *L, gr_expr_t *x)
{
    tb_buf_t re = {0};
    rx_info_t in;
    gr_sym_t s;
    int rc = rx_emit(L, x, 1, &re, &in) == 1 ? 0 : -1;
    if (!rc && in.eps)
        rc = fail_at(L, x->pos, "%%ignore matches only the empty string");
    if (!rc && in.nullable) {
        re.len = 0;
        rc = rx_nonnull(L, x, 1, &re) == 1 ? 0 : -1;
    }
    if (!rc && tb_buf_putc(&re, 0))
        rc = oom(L);
    if (!rc)
        rc = new_lexeme(L, (char *)re.data, &x, 1, 1, &s);
    tb_buf_free(&re);
    return rc;
}

static int lower_all(lower_t *L, const char *start, gr_sym_t *start_sym)
{
    gr_ebnf_t *e = L->e;
    if (L->g->semantics == GR_SEM_LLGUIDANCE) {
        e->merge = 0; /* a merged run would move where lexemes end */
        for (size_t i = 0; i < e->rule.len; i++)
            e->rule.data[i].terminal |= (e->rule.data[i].attr & GR_ATTR_LEXEME) != 0;
    }
    for (size_t i = 0; i < e->rule.len; i++)
        if (check_refs(L, e->rule.data[i].body))
            return -1;
    for (size_t i = 0; i < e->ignore.len; i++)
        if (check_refs(L, e->ignore.data[i]))
            return -1;
    /* Terminals are checked even where nothing uses them. */
    for (size_t i = 0; i < e->rule.len; i++) {
        tb_buf_t b = {0};
        rx_info_t in;
        int rc = e->rule.data[i].terminal ? rule_regex(L, &e->rule.data[i], &b, &in) : 0;
        tb_buf_free(&b);
        if (rc < 0)
            return -1;
    }
    for (size_t i = 0; i < e->ignore.len; i++)
        if (lower_ignore(L, e->ignore.data[i]))
            return -1;
    gr_xrule_t *r = find_rule(e, start);
    if (!r || r->terminal)
        return tb_fail(L->err, "%s: no rule '%s' (the start rule)", e->source, start);
    gr_expr_t ref = {.kind = GR_X_REF, .pos = r->pos, .text = r->name, .len = strlen(r->name)};
    if (ref_sym(L, &ref, start_sym))
        return -1;
    for (size_t q = 0; q < L->queue.len; q++) { /* in the order of first use */
        r = &e->rule.data[L->queue.data[q]];
        gr_sym_t lhs;
        if (gr_cfg_nonterm(L->g, r->name, strlen(r->name), (gr_pos_t){0, 0}, &lhs, L->err) ||
            lower_alts(L, r->body, lhs, r->name, r->pos))
            return -1;
    }
    return 0;
}

int gr_ebnf_lower(gr_ebnf_t *e, gr_cfg_t *g, const char *start, gr_sym_t *start_sym,
                  tb_err_t *err)
{
    lower_t L = {.e = e, .g = g, .err = err};
    int rc = lower_all(&L, start, start_sym);
    free(L.queue.data);
    return rc;
}
