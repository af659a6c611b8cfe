/*
 * lark: a tokenizer and recursive-descent reader of the Lark-style format
 * (lark.h) building ebnf.h trees.
 *
 * Newlines end definitions, except inside ( ) and [ ] and before a line
 * that starts with |, as in Lark.
 */
#include "lark.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../base/jsontext.h"
#include "../base/utf8.h"
#include "../tok/uprops.h"
#include "ebnf.h"
#include "schema.h"

/* Escapes of "..." literals (Python's, as Lark reads them). */
static const char ESCAPES[] = "n\nr\rt\tf\fv\va\ab\b0\0\\\\\"\"''";

typedef enum {
    T_EOF, T_NL, T_NAME, T_STRING, T_REGEX, T_NUMBER, T_DIRECTIVE, T_ARROW, T_DOTDOT, T_PUNCT
} tkind_t;

typedef struct {
    tkind_t kind;
    gr_pos_t pos;
    size_t at, len; /* the token's bytes in the text */
    char c;         /* T_PUNCT: the character */
} tok_t;

typedef struct {
    gr_text_t t;
    gr_ebnf_t *e;
    tok_t cur;
    unsigned nest; /* open ( and [ : newlines inside are blanks */
    unsigned depth;
    /* %json: the schema's text, where it was written, and the reference
     * standing for it in the rule (a grammar that is the schema alone) */
    size_t json_at, json_len;
    gr_pos_t json_pos;
    gr_expr_t *json_ref;
} lark_t;

static int is_name_start(uint8_t c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_name_char(uint8_t c)
{
    return is_name_start(c) || (c >= '0' && c <= '9');
}

/* Blanks and comments; newlines too when `nl` is set. */
static void skip_blank(gr_text_t *t, int nl)
{
    for (;;) {
        uint8_t c = gr_text_at(t, 0);
        if (c == ' ' || c == '\t' || c == '\r' || (nl && c == '\n'))
            gr_text_skip(t, 1);
        else if (c == '#' || (c == '/' && gr_text_at(t, 1) == '/'))
            while (t->i < t->len && gr_text_at(t, 0) != '\n')
                gr_text_skip(t, 1);
        else
            return;
    }
}

/* Scans past a "..." literal (and its i flag) or a /regex/ (and flags):
 * checked later, when the token is used. */
static int scan_quoted(gr_text_t *t, char q, const char *flags)
{
    gr_pos_t open = gr_text_pos(t);
    gr_text_skip(t, 1);
    for (;;) {
        uint8_t c = gr_text_at(t, 0);
        if (t->i >= t->len || c == '\n')
            return gr_text_fail(t, open, q == '"' ? "unterminated literal" : "unterminated regex");
        gr_text_skip(t, c == '\\' && gr_text_at(t, 1) != '\n' ? 2 : 1);
        if (c == (uint8_t)q)
            break;
    }
    while (gr_text_at(t, 0) && strchr(flags, gr_text_at(t, 0)))
        gr_text_skip(t, 1);
    return 0;
}

/* The next token of t into *k. */
static int lex(gr_text_t *t, unsigned nest, tok_t *k)
{
    skip_blank(t, nest > 0);
    *k = (tok_t){.pos = gr_text_pos(t), .at = t->i};
    uint8_t c = gr_text_at(t, 0), d = gr_text_at(t, 1);
    if (t->i >= t->len) {
        k->kind = T_EOF;
    } else if (c == '\n') {
        k->kind = T_NL;
        while (gr_text_at(t, 0) == '\n')
            skip_blank(t, 1);
    } else if (is_name_start(c) || (c == '%' && is_name_start(d))) {
        k->kind = c == '%' ? T_DIRECTIVE : T_NAME;
        gr_text_skip(t, 1);
        /* llguidance allows '-' inside names; "->" stays an arrow. */
        while (is_name_char(gr_text_at(t, 0)) ||
               (gr_text_at(t, 0) == '-' && is_name_char(gr_text_at(t, 1))))
            gr_text_skip(t, 1);
    } else if (c >= '0' && c <= '9') {
        k->kind = T_NUMBER;
        while (gr_text_at(t, 0) >= '0' && gr_text_at(t, 0) <= '9')
            gr_text_skip(t, 1);
    } else if (c == '"' || c == '/') {
        k->kind = c == '"' ? T_STRING : T_REGEX;
        if (scan_quoted(t, (char)c, c == '"' ? "i" : "imslux"))
            return -1;
    } else if (c == '-' && d == '>') {
        k->kind = T_ARROW;
        gr_text_skip(t, 2);
    } else if (c == '.' && d == '.') {
        k->kind = T_DOTDOT;
        gr_text_skip(t, 2);
    } else if (c >= 0x20 && c < 0x7F && strchr(":|()[]{},.~?*+<@&=-!", c)) {
        k->kind = T_PUNCT;
        k->c = (char)c;
        gr_text_skip(t, 1);
    } else if (c < 0x20 || c >= 0x7F) {
        return gr_text_fail(t, k->pos, "unexpected byte 0x%02X", c);
    } else {
        return gr_text_fail(t, k->pos, "unexpected '%c'", c);
    }
    k->len = t->i - k->at;
    return 0;
}

static int next(lark_t *p)
{
    return lex(&p->t, p->nest, &p->cur);
}

/* The token after the current one (the cursor is left as it was). */
static int peek(lark_t *p, tok_t *k)
{
    gr_text_t save = p->t;
    return lex(&save, p->nest, k);
}

static int is_punct(const tok_t *k, char c)
{
    return k->kind == T_PUNCT && k->c == c;
}

static int is_word(const lark_t *p, const tok_t *k, const char *w)
{
    return k->len == strlen(w) && memcmp(p->t.s + k->at, w, k->len) == 0;
}

static int fail_tok(lark_t *p, const char *what)
{
    const tok_t *k = &p->cur;
    if (k->kind == T_EOF)
        return gr_text_fail(&p->t, k->pos, "%s, found the end of the file", what);
    if (k->kind == T_NL)
        return gr_text_fail(&p->t, k->pos, "%s, found the end of the line", what);
    return gr_text_fail(&p->t, k->pos, "%s, found '%.*s'", what, (int)(k->len > 40 ? 40 : k->len),
                        p->t.s + k->at);
}

/* Consumes the punctuation c or fails with `what`. */
static int expect(lark_t *p, char c, const char *what)
{
    if (!is_punct(&p->cur, c))
        return fail_tok(p, what);
    if (c == '(' || c == '[')
        p->nest++;
    if ((c == ')' || c == ']') && p->nest)
        p->nest--;
    return next(p);
}

/* A terminal's name: an upper-case letter first, after leading '_'. */
static int is_terminal_name(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && s[i] == '_')
        i++;
    return i < n && s[i] >= 'A' && s[i] <= 'Z';
}

static gr_expr_t *node(lark_t *p, gr_xkind_t kind, gr_pos_t pos, const char *text, size_t len)
{
    return gr_ebnf_node(p->e, kind, pos, text, len, p->t.err);
}

static int parse_number(lark_t *p, uint32_t *v)
{
    if (p->cur.kind != T_NUMBER)
        return fail_tok(p, "expected a number");
    uint64_t n = 0;
    for (size_t i = 0; i < p->cur.len && n <= GR_MAX_REPEAT; i++)
        n = n * 10 + (uint64_t)(p->t.s[p->cur.at + i] - '0');
    if (n > GR_MAX_REPEAT)
        return gr_text_fail(&p->t, p->cur.pos, "repetition bound above %u", GR_MAX_REPEAT);
    *v = (uint32_t)n;
    return next(p);
}

/* ---- literals and regexes ---- */

/* The current T_STRING decoded into b (*icase: the i flag). */
static int string_value(lark_t *p, tb_buf_t *b, int *icase)
{
    gr_text_t t = p->t;
    t.i = p->cur.at;
    t.line = p->cur.pos.line;
    t.bol = p->cur.at - (p->cur.pos.col - 1);
    if (gr_text_quoted(&t, '"', ESCAPES, b))
        return -1;
    *icase = t.i < p->cur.at + p->cur.len;
    return 0;
}

/* Pattern s[0..n) with flag s where `on` (the /.../s flag) or inside
 * (?s: ... ) and after (?s) in a group: there every '.' outside classes
 * and escapes matches any code point, \n included (the lexer's '.'
 * leaves out \n), and the (?s ...) syntax, which the lexer does not read,
 * is gone.  stack keeps the flag of each open group. */
static int dot_all(const char *s, size_t n, int on, tb_buf_t *b)
{
    tb_buf_t stack = {0};
    int in_class = 0, rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        char c = s[i];
        if (c == '\\' && i + 1 < n) {
            rc = tb_buf_put(b, s + i, 2);
            i++;
        } else if (in_class) {
            in_class = c != ']';
            rc = tb_buf_putc(b, (uint8_t)c);
        } else if (c == '.' && on) {
            rc = tb_buf_put(b, "(?:.|\\n)", 8);
        } else if (c == '(' && n - i >= 4 && !memcmp(s + i, "(?s)", 4)) {
            on = 1;
            i += 3;
        } else if (c == '(') {
            int sflag = n - i >= 4 && !memcmp(s + i, "(?s:", 4);
            rc = tb_buf_putc(&stack, (uint8_t)on) || tb_buf_put(b, sflag ? "(?:" : "(", sflag ? 3 : 1);
            on |= sflag;
            i += sflag ? 3 : 0;
        } else if (c == ')' && stack.len) {
            on = stack.data[--stack.len];
            rc = tb_buf_putc(b, ')');
        } else if (c == '[') {
            in_class = 1;
            /* a ']' first in a class (after an optional '^') is a member */
            size_t k = i + 1 < n && s[i + 1] == '^' ? i + 2 : i + 1;
            k = k < n && s[k] == ']' ? k : i;
            rc = tb_buf_put(b, s + i, k + 1 - i);
            i = k;
        } else {
            rc = tb_buf_putc(b, (uint8_t)c);
        }
    }
    tb_buf_free(&stack);
    return rc ? -1 : 0;
}

/* Whether s[0..n) holds "(?s" (an inline s flag, for dot_all). */
static int has_inline_s(const char *s, size_t n)
{
    for (size_t i = 0; i + 3 <= n; i++)
        if (!memcmp(s + i, "(?s", 3))
            return 1;
    return 0;
}

/* Checks body[0..n) with the lexer's parser (gr_ebnf_check_regex), its
 * inline s flags read as i flags of the same length: the lexer does not
 * read (?s, and either leaves the syntax and the positions the same. */
static int check_body(lark_t *p, const char *body, size_t n, gr_pos_t pos, uint8_t *nullable)
{
    if (!has_inline_s(body, n))
        return gr_ebnf_check_regex(p->e, body, n, pos, nullable, p->t.err);
    char *copy = strndup(body, n);
    if (!copy)
        return tb_fail(p->t.err, "out of memory");
    for (char *q = copy; (q = strstr(q, "(?s")); q += 3)
        q[2] = 'i';
    int rc = gr_ebnf_check_regex(p->e, copy, n, pos, nullable, p->t.err);
    free(copy);
    return rc;
}

/* Whether pattern s[0..n) is one class or one escaped character, which a
 * quantifier may follow as it is. */
static int regex_is_atom(const char *s, size_t n)
{
    if ((n == 2 && s[0] == '\\') || (n == 1 && !strchr("^$.|?*+()[]{}\\", s[0])))
        return 1;
    if (n < 2 || s[0] != '[')
        return 0;
    size_t i = s[1] == '^' ? 2 : 1;
    if (i < n && s[i] == ']')
        i++;
    for (; i < n && s[i] != ']'; i++)
        i += s[i] == '\\';
    return i == n - 1;
}

/* The current T_REGEX as a REGEX node: its body checked by the lexer's
 * parser where it stands in the file, then the flags applied. */
static gr_expr_t *regex_node(lark_t *p)
{
    const tok_t *k = &p->cur;
    const char *s = p->t.s + k->at;
    size_t end = k->len - 1;
    while (s[end] != '/')
        end--;
    const char *body = s + 1, *flags = s + end + 1; /* "//" is a comment: blen > 0 */
    size_t blen = end - 1, nflags = k->len - end - 1;
    gr_pos_t bpos = {k->pos.line, k->pos.col + 1};
    int icase = 0, dotall = 0, flag_s = 0;
    for (size_t i = 0; i < nflags; i++) {
        if (flags[i] == 'i')
            icase = 1;
        else if (flags[i] == 's')
            dotall = flag_s = 1;
        else if (flags[i] != 'u') {
            gr_text_fail(&p->t, (gr_pos_t){k->pos.line, k->pos.col + (uint32_t)(end + 1 + i)},
                         "regex flag '%c' is not supported (i, s and u are)", flags[i]);
            return NULL;
        }
    }
    uint8_t nullable;
    if (check_body(p, body, blen, bpos, &nullable))
        return NULL;
    tb_buf_t re = {0};
    dotall |= has_inline_s(body, blen);
    int rc = (icase && tb_buf_put(&re, "(?i:", 4)) ||
             (dotall ? dot_all(body, blen, flag_s, &re) : tb_buf_put(&re, body, blen)) ||
             (icase && tb_buf_putc(&re, ')'));
    gr_expr_t *x = rc ? NULL : node(p, GR_X_REGEX, k->pos, (char *)re.data, re.len);
    tb_buf_free(&re);
    if (rc)
        tb_fail(p->t.err, "out of memory");
    if (x && !(x->show = strndup(s, k->len))) {
        tb_fail(p->t.err, "out of memory");
        x = NULL;
    }
    if (x) {
        x->nullable = nullable;
        x->atom = (uint8_t)(icase || (!dotall && regex_is_atom(body, blen)));
    }
    return x;
}

/* The one code point of a range end "c" (the current T_STRING). */
static int range_end(lark_t *p, uint32_t *cp)
{
    tb_buf_t b = {0};
    int icase, rc = string_value(p, &b, &icase);
    if (!rc && (b.len == 0 || tb_utf8_decode(b.data, b.len, cp) != b.len || icase))
        rc = gr_text_fail(&p->t, p->cur.pos, "a range \"a\"..\"z\" needs one character at "
                          "each end (no flag)");
    tb_buf_free(&b);
    return rc ? -1 : next(p);
}

/* "a".."z" (the current token is the first string, followed by ..). */
static gr_expr_t *range_node(lark_t *p)
{
    gr_pos_t pos = p->cur.pos;
    uint32_t lo, hi;
    if (range_end(p, &lo) || next(p))
        return NULL;
    if (p->cur.kind != T_STRING) {
        fail_tok(p, "expected a string after ..");
        return NULL;
    }
    gr_pos_t hpos = p->cur.pos;
    if (range_end(p, &hi))
        return NULL;
    if (hi < lo) {
        gr_text_fail(&p->t, hpos, "range out of order");
        return NULL;
    }
    tb_buf_t re = {0};
    gr_expr_t *x = NULL;
    if (tb_buf_putc(&re, '[') || gr_class_cp(&re, lo) || tb_buf_putc(&re, '-') ||
        gr_class_cp(&re, hi) || tb_buf_putc(&re, ']'))
        tb_fail(p->t.err, "out of memory");
    else if ((x = node(p, GR_X_REGEX, pos, (char *)re.data, re.len)))
        x->atom = 1;
    tb_buf_free(&re);
    return x;
}

/* ---- expansions ---- */

static gr_expr_t *parse_expansions(lark_t *p);
static gr_expr_t *parse_not(lark_t *p);

static gr_expr_t *unsupported(lark_t *p, const char *what)
{
    gr_text_fail(&p->t, p->cur.pos, "%s not supported", what);
    return NULL;
}

/* %json SCHEMA (the current token is %json): the JSON value is skipped
 * here and compiled by gr_lark_read, when the grammar is this one rule. */
static gr_expr_t *parse_json(lark_t *p)
{
    gr_pos_t pos = p->cur.pos;
    if (p->json_ref)
        return unsupported(p, "a second inline JSON schema (%json) is");
    tb_json_scan_t js = {.t = p->t.s, .n = p->t.len, .at = p->t.i};
    int c = tb_json_peek(&js);
    size_t at = js.at; /* the value's first byte, after its blanks */
    if (c < 0 || tb_json_skip(&js)) {
        gr_text_fail(&p->t, pos, "expected a JSON schema after %%json");
        return NULL;
    }
    p->json_at = at;
    p->json_len = js.at - at;
    p->json_pos = pos;
    gr_text_skip(&p->t, js.at - p->t.i);
    p->json_ref = node(p, GR_X_REF, pos, "%json", 5);
    return p->json_ref && !next(p) ? p->json_ref : NULL;
}

/* ---- %regex { "substring_...": ... } ---- */

/* The class of code point cp where substring_words cuts words, as
 * llguidance's substring.rs does: white space, word (letters, numbers and
 * '_'), other.  Rust's is_alphanumeric also counts the few marks that are
 * Other_Alphabetic: here the general categories L* and N* are. */
static int word_class(uint32_t cp)
{
    if (tok_uprops_is_space(cp))
        return 0;
    const char *gc = tok_uprops_leaf_name(tok_uprops_gc(cp));
    return cp == '_' || gc[0] == 'L' || gc[0] == 'N' ? 1 : 2;
}

/* The chunks of s[0..n) into *cuts (offsets, the last n): each character
 * (words 0), or each run of characters of one word_class (words 1). */
static int cut_chunks(const char *s, size_t n, int words, tb_buf_t *cuts)
{
    int last = -1;
    for (size_t i = 0; i < n;) {
        uint32_t cp = 0;
        size_t k = tb_utf8_decode((const uint8_t *)s + i, n - i, &cp);
        int c = word_class(cp);
        if (i && (!words || c != last) && tb_buf_put(cuts, &i, sizeof i))
            return -1;
        last = c;
        i += k ? k : 1;
    }
    return n && tb_buf_put(cuts, &n, sizeof n);
}

/* The regex of the non-empty concatenations chunk[a..b) (a < b): for each
 * a, chunk a followed by an optional continuation, nested.  Its size is
 * quadratic in the number of chunks. */
static int substring_regex(const char *s, const size_t *end, size_t n, tb_buf_t *re)
{
    for (size_t a = 0; a < n; a++) {
        if (a && tb_buf_putc(re, '|'))
            return -1;
        for (size_t b = a; b < n; b++) {
            size_t from = b ? end[b - 1] : 0;
            if ((b > a && tb_buf_put(re, "(?:", 3)) ||
                gr_regex_escape(re, (const uint8_t *)s + from, end[b] - from))
                return -1;
        }
        for (size_t b = a + 1; b < n; b++)
            if (tb_buf_put(re, ")?", 2))
                return -1;
        if (re->len > GR_MAX_REGEX)
            return 1;
    }
    return 0;
}

/* The chunks of a %regex object's one field, joined into text with the
 * end offset of each in cuts. */
static int substring_chunks(lark_t *p, gr_pos_t pos, json_t *o, tb_buf_t *text, tb_buf_t *cuts)
{
    const char *key = NULL;
    json_t *v = NULL;
    if (json_object_size(o) != 1)
        return gr_text_fail(&p->t, pos, json_object_size(o) ? "only one field can be set on "
                            "%%regex" : "no field set on %%regex");
    key = json_object_iter_key(json_object_iter(o));
    v = json_object_get(o, key);
    if (!strcmp(key, "substring_chunks") && json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *c = json_array_get(v, i);
            if (!json_is_string(c))
                return gr_text_fail(&p->t, pos, "%%regex: substring_chunks must be strings");
            size_t n = json_string_length(c);
            if (n && (tb_buf_put(text, json_string_value(c), n) ||
                      tb_buf_put(cuts, &text->len, sizeof text->len)))
                return tb_fail(p->t.err, "out of memory");
        }
        return 0;
    }
    int words = !strcmp(key, "substring_words");
    if ((words || !strcmp(key, "substring_chars")) && json_is_string(v))
        return tb_buf_put(text, json_string_value(v), json_string_length(v)) ||
                       cut_chunks(json_string_value(v), json_string_length(v), words, cuts)
                   ? tb_fail(p->t.err, "out of memory")
                   : 0;
    return gr_text_fail(&p->t, pos, "%%regex: expected one field substring_words or "
                        "substring_chars (a string) or substring_chunks (an array of "
                        "strings), found '%s'", key);
}

/* %regex {...} (the current token): llguidance's substring regexes, as a
 * REGEX of the non-empty substrings made optional. */
static gr_expr_t *parse_regex_directive(lark_t *p)
{
    gr_pos_t pos = p->cur.pos;
    tb_json_scan_t js = {.t = p->t.s, .n = p->t.len, .at = p->t.i};
    int c = tb_json_peek(&js);
    size_t at = js.at;
    json_error_t je;
    json_t *o = c == '{' && !tb_json_skip(&js) ? json_loadb(p->t.s + at, js.at - at, 0, &je)
                                               : NULL;
    if (!o) {
        gr_text_fail(&p->t, pos, "expected a JSON object after %%regex");
        return NULL;
    }
    tb_buf_t text = {0}, cuts = {0}, re = {0};
    gr_expr_t *x = NULL;
    int rc = substring_chunks(p, pos, o, &text, &cuts);
    json_decref(o);
    size_t n = cuts.len / sizeof(size_t);
    int big = !rc && n ? substring_regex((const char *)text.data, (const size_t *)cuts.data,
                                         n, &re)
                       : 0;
    if (big)
        rc = big > 0 ? gr_text_fail(&p->t, pos, "%%regex: the substrings' regex passes %u "
                                    "bytes", GR_MAX_REGEX)
                     : tb_fail(p->t.err, "out of memory");
    if (!rc && !n)
        x = node(p, GR_X_LIT, pos, "", 0); /* only the empty string */
    else if (!rc && (x = node(p, GR_X_REGEX, pos, (char *)re.data, re.len)))
        x = gr_ebnf_rep(p->e, x, 0, 1, pos, p->t.err);
    tb_buf_free(&text);
    tb_buf_free(&cuts);
    tb_buf_free(&re);
    if (!x)
        return NULL;
    gr_text_skip(&p->t, js.at - p->t.i);
    return next(p) ? NULL : x;
}

/* Whether the current name is followed by "::" (llguidance's parametric
 * rules, name::param with %if conditions): if so, the refusal is in
 * p->t.err and -1 is returned. */
static int parametric(lark_t *p)
{
    tok_t a, b;
    gr_text_t save = p->t;
    int rc = lex(&save, p->nest, &a) || lex(&save, p->nest, &b);
    if (rc || !is_punct(&a, ':') || !is_punct(&b, ':') || a.at + 1 != b.at)
        return rc ? -1 : 0;
    return gr_text_fail(&p->t, p->cur.pos, "parametric rules (name::param, %%if) are not "
                        "supported");
}

static gr_expr_t *parse_atom(lark_t *p)
{
    tok_t k = p->cur;
    if (is_punct(&k, '(') || is_punct(&k, '[')) {
        if (expect(p, k.c, "") != 0)
            return NULL;
        gr_expr_t *x = parse_expansions(p);
        if (!x || expect(p, k.c == '(' ? ')' : ']', k.c == '(' ? "expected ')'" : "expected ']'"))
            return NULL;
        return k.c == '(' ? x : gr_ebnf_rep(p->e, x, 0, 1, k.pos, p->t.err);
    }
    if (k.kind == T_STRING) {
        tok_t after;
        if (peek(p, &after))
            return NULL;
        if (after.kind == T_DOTDOT)
            return range_node(p);
        tb_buf_t b = {0};
        int icase;
        gr_expr_t *x = NULL;
        if (!string_value(p, &b, &icase) && (x = node(p, GR_X_LIT, k.pos, (char *)b.data, b.len)))
            x->icase = (uint8_t)icase;
        tb_buf_free(&b);
        return x && !next(p) ? x : NULL;
    }
    if (k.kind == T_REGEX) {
        gr_expr_t *x = regex_node(p);
        return x && !next(p) ? x : NULL;
    }
    if (k.kind == T_NAME) {
        if (parametric(p))
            return NULL;
        gr_expr_t *x = node(p, GR_X_REF, k.pos, p->t.s + k.at, k.len);
        return x && !next(p) ? x : NULL;
    }
    if (is_punct(&k, '~'))
        return parse_not(p);
    if (is_punct(&k, '<'))
        return unsupported(p, "special tokens (<|name|>, <[id]>: token ids of a vocabulary, "
                           "where a grammar here is over bytes) are");
    if (is_punct(&k, '@'))
        return unsupported(p, "grammar references (@name) are");
    if (k.kind == T_DIRECTIVE && is_word(p, &k, "%json"))
        return parse_json(p);
    if (k.kind == T_DIRECTIVE && is_word(p, &k, "%regex"))
        return parse_regex_directive(p);
    if (k.kind == T_DIRECTIVE && is_word(p, &k, "%lark"))
        return unsupported(p, "nested grammars (%lark {...}) are");
    if (k.kind == T_DIRECTIVE) {
        gr_text_fail(&p->t, k.pos, "%.*s inside a rule is not supported (%%json and %%regex "
                     "are)", (int)k.len, p->t.s + k.at);
        return NULL;
    }
    fail_tok(p, "expected a literal, a regex, a name, '(' or '['");
    return NULL;
}

/* ~x, llguidance's complement of a lexeme (the current token is '~'): it
 * binds tighter than the postfix operators, ~x+ is (~x)+. */
static gr_expr_t *parse_not(lark_t *p)
{
    gr_pos_t pos = p->cur.pos;
    if (next(p))
        return NULL;
    gr_expr_t *x = parse_atom(p), *neg = x ? node(p, GR_X_NOT, pos, NULL, 0) : NULL;
    return neg && !gr_ebnf_add(neg, x, p->t.err) ? neg : NULL;
}

/* {m}, {m,}, {m,n} after x (the current token is '{'). */
static gr_expr_t *parse_braces(lark_t *p, gr_expr_t *x)
{
    gr_pos_t pos = p->cur.pos;
    uint32_t m, n;
    if (next(p))
        return NULL;
    if (p->cur.kind != T_NUMBER && x->kind == GR_X_REF)
        return unsupported(p, "templates (name{...}) are");
    if (parse_number(p, &m))
        return NULL;
    n = m;
    if (is_punct(&p->cur, ',')) {
        if (next(p))
            return NULL;
        n = GR_UNBOUNDED;
        if (!is_punct(&p->cur, '}') && parse_number(p, &n))
            return NULL;
    }
    if (expect(p, '}', "expected '}' closing a repetition"))
        return NULL;
    return gr_ebnf_rep(p->e, x, m, n, pos, p->t.err);
}

/* x ~ m or x ~ m..n (the current token is '~'). */
static gr_expr_t *parse_tilde(lark_t *p, gr_expr_t *x)
{
    gr_pos_t pos = p->cur.pos;
    uint32_t m, n;
    if (next(p) || parse_number(p, &m))
        return NULL;
    n = m;
    if (p->cur.kind == T_DOTDOT && (next(p) || parse_number(p, &n)))
        return NULL;
    return gr_ebnf_rep(p->e, x, m, n, pos, p->t.err);
}

static gr_expr_t *parse_expr(lark_t *p)
{
    gr_expr_t *x = parse_atom(p);
    while (x) {
        const tok_t *k = &p->cur;
        if (is_punct(k, '{')) {
            x = parse_braces(p, x);
        } else if (is_punct(k, '~')) {
            tok_t after;
            if (peek(p, &after))
                return NULL;
            if (after.kind != T_NUMBER) /* ~ starting the next item: a complement */
                return x;
            x = parse_tilde(p, x);
        } else if (is_punct(k, '?') || is_punct(k, '*') || is_punct(k, '+')) {
            char c = k->c;
            x = gr_ebnf_rep(p->e, x, c == '+', c == '?' ? 1 : GR_UNBOUNDED, k->pos, p->t.err);
            if (x && next(p))
                return NULL;
        } else {
            return x;
        }
    }
    return NULL;
}

/* Items up to '&', '|', a closing bracket, an alias, the end of the line. */
static gr_expr_t *parse_items(lark_t *p)
{
    gr_expr_t *seq = node(p, GR_X_SEQ, p->cur.pos, NULL, 0);
    while (seq) {
        const tok_t *k = &p->cur;
        if (k->kind == T_EOF || k->kind == T_NL || k->kind == T_ARROW || is_punct(k, '|') ||
            is_punct(k, ')') || is_punct(k, ']') || is_punct(k, '&'))
            break;
        gr_expr_t *x = parse_expr(p);
        if (!x || gr_ebnf_add(seq, x, p->t.err))
            return NULL;
    }
    return seq;
}

/* Adds x (NULL: a failure) to *list, a node of kind AND or ALT made on the
 * first call holding `first` before it: the operands of a OP b OP c. */
static int chain(lark_t *p, gr_xkind_t kind, gr_pos_t pos, gr_expr_t **list, gr_expr_t *first,
                 gr_expr_t *x)
{
    if (!*list && (!(*list = node(p, kind, pos, NULL, 0)) || gr_ebnf_add(*list, first, p->t.err)))
        return -1;
    return x && !gr_ebnf_add(*list, x, p->t.err) ? 0 : -1;
}

/* Sequences joined by llguidance's '&' (looser than a sequence, tighter
 * than '|'), then an optional alias. */
static gr_expr_t *parse_expansion(lark_t *p)
{
    gr_pos_t pos = p->cur.pos;
    gr_expr_t *seq = parse_items(p), *and = NULL;
    while (seq && is_punct(&p->cur, '&')) {
        if (next(p) || chain(p, GR_X_AND, pos, &and, seq, parse_items(p)))
            return NULL;
    }
    if (and)
        seq = and;
    if (seq && p->cur.kind == T_ARROW) { /* an alias names a tree node only */
        if (next(p))
            return NULL;
        if (p->cur.kind != T_NAME) {
            fail_tok(p, "expected a name after ->");
            return NULL;
        }
        if (next(p))
            return NULL;
    }
    return seq;
}

/* Whether a newline is followed by a line starting with '|' (it goes on);
 * if so the newline is consumed. */
static int continues(lark_t *p, int *yes)
{
    tok_t k;
    *yes = 0;
    if (p->cur.kind != T_NL)
        return 0;
    if (peek(p, &k))
        return -1;
    if (!is_punct(&k, '|'))
        return 0;
    *yes = 1;
    return next(p);
}

static gr_expr_t *parse_expansions(lark_t *p)
{
    gr_pos_t pos = p->cur.pos;
    if (++p->depth > GR_MAX_NEST) {
        gr_text_fail(&p->t, pos, "groups nested more than %d deep", GR_MAX_NEST);
        return NULL;
    }
    gr_expr_t *first = parse_expansion(p), *alt = NULL;
    for (;;) {
        int more;
        if (!first || continues(p, &more))
            return NULL;
        if (!is_punct(&p->cur, '|'))
            break;
        if (next(p) || chain(p, GR_X_ALT, pos, &alt, first, parse_expansion(p)))
            return NULL;
    }
    p->depth--;
    return alt ? alt : first;
}

/* ---- definitions and directives ---- */

/* The end of a definition: a newline or the end of the file. */
static int end_of_line(lark_t *p)
{
    if (p->cur.kind == T_NL)
        return next(p);
    if (p->cur.kind != T_EOF)
        return fail_tok(p, "expected the end of the line");
    return 0;
}

/* name::param: (the current token is the first ':' after the name). */
static int parametric_def(lark_t *p, const tok_t *name)
{
    tok_t k;
    if (peek(p, &k))
        return -1;
    if (!is_punct(&k, ':') || k.at != p->cur.at + 1)
        return 0;
    return gr_text_fail(&p->t, name->pos, "parametric rules (name::param, %%if) are not "
                        "supported");
}

/* An attribute's value: a number, with a fraction when `real`. */
static int attribute_number(lark_t *p, int real)
{
    if (p->cur.kind != T_NUMBER)
        return fail_tok(p, "expected a number");
    if (next(p))
        return -1;
    if (real && is_punct(&p->cur, '.')) {
        if (next(p))
            return -1;
        if (p->cur.kind != T_NUMBER)
            return fail_tok(p, "expected the digits of a fraction");
        return next(p);
    }
    return 0;
}

/*
 * llguidance's rule attributes, name[a, b=value, ...] (the current token
 * is '['): capture[="name"], lazy, max_tokens=N, temperature=X,
 * stop=T, suffix=T, stop_capture="name", T a literal, a regex or a
 * terminal.  stop and suffix change the language: the rule's text is its
 * body's followed by T's (*then; stop="" is the end of the text, which
 * follows anyway).  The others are checked and read only: lazy steers
 * llguidance's greedy lexer, which this (non-greedy) reading keeps both
 * ends of anyway, max_tokens and temperature steer sampling, and capture
 * names output; docs/grammars.md says so.
 */
static int parse_attributes(lark_t *p, gr_expr_t **then)
{
    enum { CAPTURE, LAZY, MAX_TOKENS, TEMPERATURE, STOP, SUFFIX, STOP_CAPTURE, NATTR };
    static const char *const NAMES[NATTR] = {"capture", "lazy",   "max_tokens",  "temperature",
                                             "stop",    "suffix", "stop_capture"};
    if (expect(p, '[', ""))
        return -1;
    for (;;) {
        if (p->cur.kind != T_NAME)
            return fail_tok(p, "expected an attribute name");
        tok_t a = p->cur;
        int i = 0;
        while (i < NATTR && !is_word(p, &a, NAMES[i]))
            i++;
        if (i == NATTR)
            return gr_text_fail(&p->t, a.pos, "unknown rule attribute '%.*s' (llguidance's "
                                "are capture, lazy, max_tokens, temperature, stop, suffix, "
                                "stop_capture)", (int)a.len, p->t.s + a.at);
        if (next(p))
            return -1;
        int valued = is_punct(&p->cur, '=');
        if (valued && next(p))
            return -1;
        if (!valued && i != CAPTURE && i != LAZY)
            return gr_text_fail(&p->t, a.pos, "rule attribute '%s' needs a value", NAMES[i]);
        if (valued && i == LAZY)
            return gr_text_fail(&p->t, a.pos, "rule attribute 'lazy' takes no value");
        if (valued && (i == CAPTURE || i == STOP_CAPTURE) &&
            (p->cur.kind != T_STRING ? fail_tok(p, "expected a quoted name") : next(p)))
            return -1;
        if ((i == MAX_TOKENS || i == TEMPERATURE) && attribute_number(p, i == TEMPERATURE))
            return -1;
        if (i == STOP || i == SUFFIX) {
            if (*then)
                return gr_text_fail(&p->t, a.pos, "a rule has one stop or suffix");
            if (p->cur.kind != T_STRING && p->cur.kind != T_REGEX && p->cur.kind != T_NAME)
                return fail_tok(p, "expected a literal, a regex or a terminal");
            if (!(*then = parse_atom(p)))
                return -1;
        }
        if (is_punct(&p->cur, ']'))
            return expect(p, ']', "");
        if (expect(p, ',', "expected ',' or ']' after a rule attribute"))
            return -1;
    }
}

/* [?!]name[.priority]: expansions */
static int parse_definition(lark_t *p)
{
    if (is_punct(&p->cur, '?') || is_punct(&p->cur, '!')) {
        if (next(p))
            return -1;
        if (p->cur.kind != T_NAME)
            return fail_tok(p, "expected a rule name after ? or !");
    }
    if (p->cur.kind != T_NAME)
        return fail_tok(p, "expected a rule, a terminal or a directive");
    tok_t name = p->cur;
    int terminal = is_terminal_name(p->t.s + name.at, name.len);
    if (next(p))
        return -1;
    if (is_punct(&p->cur, '{'))
        return gr_text_fail(&p->t, p->cur.pos, "templates (name{...}) are not supported");
    if (is_punct(&p->cur, ':') && parametric_def(p, &name))
        return -1;
    gr_expr_t *then = NULL;
    if (is_punct(&p->cur, '[') && parse_attributes(p, &then))
        return -1;
    if (is_punct(&p->cur, '.')) { /* a priority: the language is the same */
        if (next(p) || (is_punct(&p->cur, '-') && next(p)))
            return -1;
        if (p->cur.kind != T_NUMBER)
            return fail_tok(p, "expected a priority number after '.'");
        if (next(p))
            return -1;
    }
    if (expect(p, ':', "expected ':' after the rule name"))
        return -1;
    gr_expr_t *body = parse_expansions(p);
    if (!body || end_of_line(p))
        return -1;
    if (then) { /* the rule's stop or suffix after its body */
        gr_expr_t *seq = node(p, GR_X_SEQ, name.pos, NULL, 0);
        if (!seq || gr_ebnf_add(seq, body, p->t.err) || gr_ebnf_add(seq, then, p->t.err))
            return -1;
        body = seq;
    }
    return gr_ebnf_rule(p->e, p->t.s + name.at, name.len, name.pos, terminal, body, p->t.err);
}

/* The terminals of Lark's common.lark, written here as regexes from its
 * definitions (ESCAPED_STRING: a quoted string whose backslashes escape
 * the next character, as Lark's regex with look-behind means). */
static const struct {
    const char *name, *regex;
} COMMON[] = {
    {"DIGIT", "[0-9]"},
    {"HEXDIGIT", "[a-fA-F0-9]"},
    {"INT", "[0-9]+"},
    {"SIGNED_INT", "[+-]?[0-9]+"},
    {"DECIMAL", "[0-9]+\\.[0-9]*|\\.[0-9]+"},
    {"_EXP", "[eE][+-]?[0-9]+"},
    {"FLOAT", "[0-9]+[eE][+-]?[0-9]+|(?:[0-9]+\\.[0-9]*|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?"},
    {"SIGNED_FLOAT", "[+-]?(?:[0-9]+[eE][+-]?[0-9]+|(?:[0-9]+\\.[0-9]*|\\.[0-9]+)"
                     "(?:[eE][+-]?[0-9]+)?)"},
    {"NUMBER", "[0-9]+|[0-9]+[eE][+-]?[0-9]+|(?:[0-9]+\\.[0-9]*|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?"},
    {"SIGNED_NUMBER", "[+-]?(?:[0-9]+|[0-9]+[eE][+-]?[0-9]+|(?:[0-9]+\\.[0-9]*|\\.[0-9]+)"
                      "(?:[eE][+-]?[0-9]+)?)"},
    {"ESCAPED_STRING", "\"(?:[^\"\\\\\\n]|\\\\.)*\""},
    {"LCASE_LETTER", "[a-z]"},
    {"UCASE_LETTER", "[A-Z]"},
    {"LETTER", "[A-Za-z]"},
    {"WORD", "[A-Za-z]+"},
    {"CNAME", "[_A-Za-z][_A-Za-z0-9]*"},
    {"WS_INLINE", "[ \\t]+"},
    {"WS", "[ \\t\\f\\r\\n]+"},
    {"CR", "\\r"},
    {"LF", "\\n"},
    {"NEWLINE", "(?:\\r?\\n)+"},
    {"SH_COMMENT", "#[^\\n]*"},
    {"CPP_COMMENT", "//[^\\n]*"},
    {"C_COMMENT", "/\\*[^*]*\\*+(?:[^/*][^*]*\\*+)*/"},
    {"SQL_COMMENT", "--[^\\n]*"},
};

/* Defines `as` (or `name`) as the common terminal name (tokens). */
static int import_one(lark_t *p, const tok_t *name, const tok_t *as)
{
    const char *s = p->t.s + name->at;
    for (size_t i = 0; i < sizeof COMMON / sizeof COMMON[0]; i++) {
        if (strlen(COMMON[i].name) != name->len || memcmp(COMMON[i].name, s, name->len))
            continue;
        gr_expr_t *x = node(p, GR_X_REGEX, name->pos, COMMON[i].regex, strlen(COMMON[i].regex));
        if (!x)
            return -1;
        x->atom = (uint8_t)regex_is_atom(x->text, x->len);
        const tok_t *n = as ? as : name;
        return gr_ebnf_rule(p->e, p->t.s + n->at, n->len, n->pos, 1, x, p->t.err);
    }
    return gr_text_fail(&p->t, name->pos, "common has no terminal '%.*s' (it has WS, "
                        "WS_INLINE, NEWLINE, NUMBER, SIGNED_NUMBER, INT, SIGNED_INT, DECIMAL, "
                        "FLOAT, ESCAPED_STRING, CNAME, WORD, LETTER, DIGIT, HEXDIGIT, ...)",
                        (int)name->len, s);
}

/* %import common.NAME [-> ALIAS] | %import common (A, B, ...) */
static int parse_import(lark_t *p)
{
    if (p->cur.kind != T_NAME || !is_word(p, &p->cur, "common"))
        return gr_text_fail(&p->t, p->cur.pos, "only %%import common is supported");
    if (next(p))
        return -1;
    if (is_punct(&p->cur, '.')) {
        tok_t name, as;
        if (next(p))
            return -1;
        if (p->cur.kind != T_NAME)
            return fail_tok(p, "expected a name after common.");
        name = p->cur;
        if (next(p))
            return -1;
        if (p->cur.kind == T_ARROW) {
            if (next(p))
                return -1;
            if (p->cur.kind != T_NAME)
                return fail_tok(p, "expected a name after ->");
            as = p->cur;
            if (next(p))
                return -1;
            if (!is_terminal_name(p->t.s + as.at, as.len))
                return gr_text_fail(&p->t, as.pos, "a terminal's alias must be upper case");
            return import_one(p, &name, &as) || end_of_line(p) ? -1 : 0;
        }
        return import_one(p, &name, NULL) || end_of_line(p) ? -1 : 0;
    }
    if (expect(p, '(', "expected '.' or '(' after %import common"))
        return -1;
    for (;;) {
        if (p->cur.kind != T_NAME)
            return fail_tok(p, "expected a terminal name");
        tok_t name = p->cur;
        if (next(p) || import_one(p, &name, NULL))
            return -1;
        if (is_punct(&p->cur, ')'))
            break;
        if (expect(p, ',', "expected ',' or ')'"))
            return -1;
    }
    return expect(p, ')', "expected ')'") || end_of_line(p) ? -1 : 0;
}

/* %llguidance {} (options: only none) */
static int parse_options(lark_t *p)
{
    if (!is_punct(&p->cur, '{'))
        return fail_tok(p, "expected '{' after %llguidance");
    tok_t close;
    if (peek(p, &close))
        return -1;
    if (!is_punct(&close, '}'))
        return gr_text_fail(&p->t, close.pos, "%%llguidance options are not supported "
                            "(only an empty {})");
    return next(p) || next(p) || end_of_line(p) ? -1 : 0;
}

static int parse_directive(lark_t *p)
{
    tok_t d = p->cur;
    if (next(p))
        return -1;
    if (is_word(p, &d, "%ignore")) {
        gr_expr_t *x = parse_expansions(p);
        if (!x || tb_vec_push(&p->e->ignore, x))
            return x ? tb_fail(p->t.err, "out of memory") : -1;
        p->e->merge = 0; /* ignored text may stand between any two lexemes */
        return end_of_line(p);
    }
    if (is_word(p, &d, "%import"))
        return parse_import(p);
    if (is_word(p, &d, "%llguidance"))
        return parse_options(p);
    return gr_text_fail(&p->t, d.pos, "%.*s is not supported (supported: %%ignore, "
                        "%%import common, %%llguidance {})", (int)d.len, p->t.s + d.at);
}

/* A grammar whose one rule is `start: %json SCHEMA` is that schema,
 * compiled by schema.h (which finishes g) with its default options: JSON
 * whitespace between the lexemes of the value.  Inside a larger grammar
 * the schema's ignored whitespace would be ignored in the rest of it too,
 * so that is refused. */
static int compile_json(lark_t *p, gr_cfg_t *g)
{
    const gr_ebnf_t *e = p->e;
    const gr_expr_t *body = e->rule.len == 1 ? e->rule.data[0].body : NULL;
    if (!body || strcmp(e->rule.data[0].name, "start") || e->ignore.len ||
        body->kind != GR_X_SEQ || body->kid.len != 1 || body->kid.data[0] != p->json_ref)
        return gr_text_fail(&p->t, p->json_pos, "an inline JSON schema (%%json) is supported as "
                            "a whole grammar only (start: %%json {...})");
    tb_err_t sub = {0};
    if (!gr_schema_compile(g, p->t.s + p->json_at, p->json_len, NULL, &sub))
        return 0;
    /* the compiler's message names the source, and the line and column in
     * the schema's own text: the %json's position stands before them */
    const char *msg = sub.msg;
    if (!strncmp(msg, g->source, strlen(g->source)) && msg[strlen(g->source)] == ':')
        msg += strlen(g->source) + 1;
    return gr_text_fail(&p->t, p->json_pos, "%%json: %s", msg);
}

int gr_lark_read(gr_cfg_t *g, const char *text, size_t len, gr_sym_t *start, tb_err_t *err)
{
    gr_ebnf_t e;
    if (gr_ebnf_init(&e, g->source, err))
        return -1;
    lark_t p = {.e = &e};
    gr_text_init(&p.t, text, len, g->source, err);
    int rc = next(&p);
    while (!rc && p.cur.kind != T_EOF) {
        if (p.cur.kind == T_NL)
            rc = next(&p);
        else if (p.cur.kind == T_DIRECTIVE)
            rc = parse_directive(&p);
        else
            rc = parse_definition(&p);
    }
    if (!rc && p.json_ref)
        rc = compile_json(&p, g);
    else if (!rc)
        rc = gr_ebnf_lower(&e, g, "start", start, err);
    gr_ebnf_free(&e);
    return rc;
}
