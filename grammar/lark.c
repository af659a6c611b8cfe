/*
 * lark: a tokenizer and recursive-descent reader of the Lark-style format
 * (lark.h) building ebnf.h trees.
 *
 * Newlines end definitions, except inside ( ) and [ ] and before a line
 * that starts with |, as in Lark.  A file's imported files are read by the
 * same reader into the same trees, their names namespaced, when the file
 * ends; templates become rules once every file is read, since a use may
 * come before the definition or sit in another file.
 */
#include "lark.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../base/file.h"
#include "../base/jsontext.h"
#include "../base/utf8.h"
#include "../tok/uprops.h"
#include "ebnf.h"
#include "larklook.h"
#include "param.h"
#include "schema.h"
#include "tokids.h"

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

/* A name of an imported module and the name it has in the importer. */
typedef struct {
    char *name, *as;
} alias_t;

/* The names one file imports from one module file (%import .path.NAME). */
typedef struct {
    char *path;   /* the module's dotted path: "csv", "sub.defs" */
    gr_pos_t pos; /* its first import */
    TB_VEC(alias_t) names;
} import_t;

/* A template name{a, b}: body, or a parametric rule name::_: body
 * (param.h); every name in it already namespaced.  In a parametric
 * rule's body an alternative's m is its %if condition's node + 1 (0: none)
 * and a reference name::ARG has m = ARG's node + 1, in lark_ctx_t's pexprs. */
typedef struct {
    char *name;
    gr_pos_t pos;
    TB_VEC(char *) param;
    gr_expr_t *body;
    uint8_t terminal, parametric;
} tmpl_t;

/* %override NAME: body (replace) or %extend NAME: body (one more alternative). */
typedef struct {
    char *name;
    gr_pos_t pos;
    gr_expr_t *body;
    int extend;
} edit_t;

/* What the files of one grammar share. */
typedef struct {
    gr_ebnf_t *e;
    gr_cfg_t *g; /* where special tokens become token-id lexemes */
    TB_VEC(tmpl_t) tmpl;
    gr_pexprs_t pexprs;  /* parametric rules' arguments and conditions */
    unsigned depth;      /* modules being read inside one another */
    unsigned nested;     /* %lark {...} grammars read, */
    gr_pos_t nested_pos; /* and where the first one is */
    /* %json (in the main file): the schema's text, where it was written,
     * and the reference standing for it in the rule (a grammar that is the
     * schema alone) */
    size_t json_at, json_len;
    gr_pos_t json_pos;
    gr_expr_t *json_ref;
} lark_ctx_t;

typedef struct {
    gr_text_t t;
    gr_ebnf_t *e;
    tok_t cur;
    unsigned nest; /* open ( and [ : newlines inside are blanks */
    unsigned depth;
    uint8_t in_param; /* reading a parametric rule's body */
    uint8_t nested;   /* reading a %lark {...} grammar */
    lark_ctx_t *ctx;
    /* Namespace: a module's names are prefixed "path." (nested modules
     * "a.b."), except those its importer names, which take the importer's
     * name for them (as Lark does, so %override reaches inside). */
    const char *prefix;
    const alias_t *alias;
    size_t nalias;
    TB_VEC(import_t) imports;
    TB_VEC(edit_t) edits;
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

/* The name token k stands for in the grammar (see lark_t's namespace)
 * into b, NUL-terminated (b->len leaves the NUL out). */
static int name_of(lark_t *p, const tok_t *k, tb_buf_t *b)
{
    const char *s = p->t.s + k->at, *as = NULL;
    for (size_t i = 0; i < p->nalias && !as; i++)
        if (strlen(p->alias[i].name) == k->len && !memcmp(p->alias[i].name, s, k->len))
            as = p->alias[i].as;
    b->len = 0;
    int rc = as ? tb_buf_put(b, as, strlen(as))
                : tb_buf_put(b, p->prefix, strlen(p->prefix)) || tb_buf_put(b, s, k->len);
    if (rc || tb_buf_putc(b, 0))
        return tb_fail(p->t.err, "out of memory");
    b->len--;
    return 0;
}

/* A REF node to the name token k stands for. */
static gr_expr_t *ref_node(lark_t *p, const tok_t *k)
{
    tb_buf_t b = {0};
    gr_expr_t *x = name_of(p, k, &b) ? NULL : node(p, GR_X_REF, k->pos, (char *)b.data, b.len);
    tb_buf_free(&b);
    return x;
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
    /* n bytes, not a string: the body may hold a NUL (the lexer names it
     * at its offset), where strndup and strstr would stop short. */
    char *copy = malloc(n + 1);
    if (!copy)
        return tb_fail(p->t.err, "out of memory");
    memcpy(copy, body, n);
    copy[n] = 0;
    for (size_t i = 0; i + 3 <= n; i++)
        if (!memcmp(copy + i, "(?s", 3))
            copy[i + 2] = 'i';
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
    tb_buf_t re = {0}, look = {0};
    dotall |= has_inline_s(body, blen);
    /* Lark's look-around idioms as the tokens Lark reads (larklook.h) */
    int rc = gr_larklook_rewrite(body, blen, dotall, &look);
    if (rc > 0) {
        body = (const char *)look.data;
        blen = look.len;
    }
    if (rc >= 0 && check_body(p, body, blen, bpos, &nullable)) {
        tb_buf_free(&look);
        return NULL;
    }
    rc = rc < 0 || (icase && tb_buf_put(&re, "(?i:", 4)) ||
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
    tb_buf_free(&look);
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
static gr_expr_t *parse_nested(lark_t *p);
static gr_expr_t *parse_not(lark_t *p);

static gr_expr_t *unsupported(lark_t *p, const char *what)
{
    gr_text_fail(&p->t, p->cur.pos, "%s not supported", what);
    return NULL;
}

/* %json SCHEMA (the current token is %json): the JSON value is skipped
 * here and compiled by compile_json, when the grammar is this one rule. */
static gr_expr_t *parse_json(lark_t *p)
{
    gr_pos_t pos = p->cur.pos;
    lark_ctx_t *ctx = p->ctx;
    if (*p->prefix)
        return unsupported(p, "an inline JSON schema (%json) in an imported file is");
    if (ctx->json_ref)
        return unsupported(p, "a second inline JSON schema (%json) is");
    tb_json_scan_t js = {.t = p->t.s, .n = p->t.len, .at = p->t.i};
    int c = tb_json_peek(&js);
    size_t at = js.at; /* the value's first byte, after its blanks */
    if (c < 0 || tb_json_skip(&js)) {
        gr_text_fail(&p->t, pos, "expected a JSON schema after %%json");
        return NULL;
    }
    ctx->json_at = at;
    ctx->json_len = js.at - at;
    ctx->json_pos = pos;
    gr_text_skip(&p->t, js.at - p->t.i);
    ctx->json_ref = node(p, GR_X_REF, pos, "%json", 5);
    return ctx->json_ref && !next(p) ? ctx->json_ref : NULL;
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

/* Whether "::" follows the current token (a parametric rule's name):
 * if so *after is the cursor past it. */
static int double_colon(lark_t *p, gr_text_t *after)
{
    tok_t a, b;
    *after = p->t;
    if (lex(after, p->nest, &a) || lex(after, p->nest, &b))
        return -1;
    return is_punct(&a, ':') && is_punct(&b, ':') && a.at + 1 == b.at;
}

/* name::ARG, a use of a parametric rule (the current token is the name,
 * *after the cursor past the "::"): a REF whose m is ARG's node + 1. */
static gr_expr_t *param_ref(lark_t *p, const tok_t *k, const gr_text_t *after)
{
    uint32_t id;
    gr_expr_t *x = ref_node(p, k);
    p->t = *after;
    if (!x || gr_param_read(&p->t, &p->ctx->pexprs, 0, &id) || next(p))
        return NULL;
    x->m = id + 1;
    return x;
}

/* %if COND ending an alternative x of a parametric rule's body (the
 * current token is %if): x->m is COND's node + 1. */
static int param_cond(lark_t *p, gr_expr_t *x)
{
    uint32_t id;
    if (!p->in_param || p->depth != 1)
        return gr_text_fail(&p->t, p->cur.pos, "%%if ends an alternative of a parametric "
                            "rule (name::_: ...)");
    if (gr_param_read(&p->t, &p->ctx->pexprs, 1, &id))
        return -1;
    x->m = id + 1;
    return next(p);
}

/* <name>, <[ids]> (the current token is '<'): a TOKEN node of the
 * token-id lexeme its ids in the vocabulary make (tokids.h).  As in
 * llguidance, the text runs to the next '>' without blanks or '<'. */
static gr_expr_t *special_token(lark_t *p)
{
    gr_pos_t pos = p->cur.pos;
    size_t at = p->cur.at, n = 1;
    while (at + n < p->t.len && !strchr("<> \t\r\n", p->t.s[at + n]))
        n++;
    const char *s = p->t.s + at;
    if (at + n >= p->t.len || s[n] != '>' || n == 1)
        return gr_text_fail(&p->t, pos, "a special token is <name> or <[ids]>, with no blank "
                            "inside"), NULL;
    n++;
    const tok_vocab_t *v = p->ctx->g->vocab;
    if (!v)
        return gr_text_fail(&p->t, pos, "special token %.*s: token ids need a vocabulary, and "
                            "the grammar was read without one", (int)n, s), NULL;
    tb_buf_t ids = {0}, name = {0};
    tb_err_t why;
    gr_sym_t sym;
    gr_expr_t *x = NULL;
    if (gr_token_ids(v, s, n, &ids, &why))
        gr_text_fail(&p->t, pos, "special token %.*s: %s", (int)n, s, why.msg);
    else if (tb_buf_put(&name, s, n) || tb_buf_putc(&name, 0))
        tb_fail(p->t.err, "out of memory");
    else if (!gr_cfg_token_lexeme(p->ctx->g, (char *)name.data, (gr_idrange_t *)ids.data,
                                  ids.len / sizeof(gr_idrange_t), pos, &sym, p->t.err) &&
             (x = node(p, GR_X_TOKEN, pos, s, n)))
        x->m = gr_index(sym);
    tb_buf_free(&ids);
    tb_buf_free(&name);
    if (!x)
        return NULL;
    gr_text_skip(&p->t, at + n - p->t.i);
    return next(p) ? NULL : x;
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
        gr_text_t after;
        int dc = double_colon(p, &after);
        if (dc)
            return dc < 0 ? NULL : param_ref(p, &k, &after);
        gr_expr_t *x = ref_node(p, &k);
        return x && !next(p) ? x : NULL;
    }
    if (is_punct(&k, '~'))
        return parse_not(p);
    if (is_punct(&k, '<'))
        return special_token(p);
    if (is_punct(&k, '@'))
        return unsupported(p, "grammar references (@name) are");
    if (k.kind == T_DIRECTIVE && is_word(p, &k, "%json"))
        return parse_json(p);
    if (k.kind == T_DIRECTIVE && is_word(p, &k, "%regex"))
        return parse_regex_directive(p);
    if (k.kind == T_DIRECTIVE && is_word(p, &k, "%lark"))
        return parse_nested(p);
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

static gr_expr_t *parse_expr(lark_t *p);

/* The arguments of a template's use name{a, b} (the current token is the
 * first one) as the kids of x, the REF to the template: instantiate()
 * makes the rule it stands for once the whole grammar is read. */
static gr_expr_t *parse_template_use(lark_t *p, gr_expr_t *x)
{
    for (;;) {
        gr_expr_t *arg = parse_expr(p);
        if (!arg || gr_ebnf_add(x, arg, p->t.err))
            return NULL;
        if (is_punct(&p->cur, '}'))
            return next(p) ? NULL : x;
        if (expect(p, ',', "expected ',' or '}' after a template's argument"))
            return NULL;
    }
}

/* {m}, {m,}, {,n}, {m,n} after x, or a template's use name{a, b} (the
 * current token is '{'). */
static gr_expr_t *parse_braces(lark_t *p, gr_expr_t *x)
{
    gr_pos_t pos = p->cur.pos;
    uint32_t m = 0, n;
    if (next(p))
        return NULL;
    if (p->cur.kind != T_NUMBER && !is_punct(&p->cur, ',')) {
        if (x->kind != GR_X_REF || x->kid.len)
            return fail_tok(p, "expected a repetition bound"), NULL;
        return parse_template_use(p, x);
    }
    if (p->cur.kind == T_NUMBER && parse_number(p, &m))
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
            is_punct(k, ')') || is_punct(k, ']') || is_punct(k, '&') ||
            (k->kind == T_DIRECTIVE && is_word(p, k, "%if")))
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
    if (seq && p->cur.kind == T_DIRECTIVE && is_word(p, &p->cur, "%if") && param_cond(p, seq))
        return NULL;
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

/* The parameters of a template's definition name{a, b} (the current
 * token is '{') into t->param, namespaced as the body's names are. */
static int parse_params(lark_t *p, tmpl_t *t)
{
    if (next(p))
        return -1;
    for (;;) {
        tb_buf_t b = {0};
        if (p->cur.kind != T_NAME)
            return fail_tok(p, "expected a template parameter's name");
        char *name = name_of(p, &p->cur, &b) ? NULL : (char *)b.data;
        if (!name || tb_vec_push(&t->param, name)) {
            free(name);
            return name ? tb_fail(p->t.err, "out of memory") : -1;
        }
        if (next(p))
            return -1;
        if (is_punct(&p->cur, '}'))
            return next(p);
        if (expect(p, ',', "expected ',' or '}' after a template parameter"))
            return -1;
    }
}

/* name::_ starting a parametric rule (the current token is the first ':'
 * after the name): 1 past the "_", 0 if this is not one. */
static int parametric_def(lark_t *p, const tok_t *name, int terminal)
{
    tok_t k;
    if (peek(p, &k))
        return -1;
    if (!is_punct(&k, ':') || k.at != p->cur.at + 1)
        return 0;
    if (terminal)
        return gr_text_fail(&p->t, name->pos, "a terminal cannot be parametric (name::_ is "
                            "a rule's)");
    if (next(p) || next(p))
        return -1;
    if (p->cur.kind != T_NAME || !is_word(p, &p->cur, "_"))
        return fail_tok(p, "expected '_' after a parametric rule's '::'");
    return next(p) ? -1 : 1;
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
 * follows anyway).  *attr says what llguidance's lexer makes of the rule
 * (GR_ATTR_*): under GR_SEM_LLGUIDANCE it is one lexeme, lazy where
 * llguidance's is; the default (non-greedy) reading keeps both ends of a
 * lexeme anyway.  max_tokens and temperature steer sampling, and capture
 * names output; docs/grammars.md says so.
 */
static int parse_attributes(lark_t *p, gr_expr_t **then, uint8_t *attr)
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
        if (i != CAPTURE && i != STOP_CAPTURE)
            *attr |= GR_ATTR_LEXEME;
        /* stop="" is greedy: it ends at the end of the text (llguidance's
         * is_lazy) */
        if (i == LAZY || ((i == STOP || i == SUFFIX) &&
                          !(p->cur.kind == T_STRING && p->cur.len == 2)))
            *attr |= GR_ATTR_LAZY;
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

static void tmpl_free(tmpl_t *t)
{
    free(t->name);
    for (size_t i = 0; i < t->param.len; i++)
        free(t->param.data[i]);
    free(t->param.data);
}

/* What a definition defines: a rule or terminal (attr: GR_ATTR_* of its
 * attributes), a template (params), or the change of one (%override,
 * %extend). */
static int define(lark_t *p, const tok_t *name, int terminal, uint8_t attr, tmpl_t *t,
                  int edit, gr_expr_t *body)
{
    tb_buf_t b = {0};
    if (name_of(p, name, &b))
        return -1;
    char *full = (char *)b.data;
    int rc;
    if ((t->param.len || t->parametric) && edit) {
        rc = gr_text_fail(&p->t, name->pos, "%%override and %%extend of a template or a "
                          "parametric rule are not supported");
    } else if (t->param.len || t->parametric) {
        *t = (tmpl_t){full, name->pos, t->param, body, (uint8_t)terminal, t->parametric};
        full = NULL;
        rc = tb_vec_push(&p->ctx->tmpl, *t) ? tb_fail(p->t.err, "out of memory") : 0;
        if (rc)
            tmpl_free(t);
        return rc;
    } else if (edit) {
        edit_t d = {full, name->pos, body, edit == 2};
        rc = tb_vec_push(&p->edits, d) ? tb_fail(p->t.err, "out of memory") : 0;
        full = rc ? full : NULL;
    } else {
        rc = gr_ebnf_rule(p->e, full, b.len, name->pos, terminal, body, p->t.err);
        if (!rc)
            p->e->rule.data[p->e->rule.len - 1].attr = attr;
    }
    free(full);
    tmpl_free(t);
    return rc;
}

/* [?!]name[{params}][.priority]: expansions; edit: 0, or 1 after
 * %override, 2 after %extend. */
static int parse_definition(lark_t *p, int edit)
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
    tmpl_t t = {0};
    if (next(p) || (is_punct(&p->cur, '{') && parse_params(p, &t))) {
        tmpl_free(&t);
        return -1;
    }
    gr_expr_t *body = NULL, *then = NULL;
    uint8_t attr = 0;
    int param = is_punct(&p->cur, ':') && !t.param.len ? parametric_def(p, &name, terminal) : 0;
    if (param < 0 || (is_punct(&p->cur, '[') && parse_attributes(p, &then, &attr)))
        goto fail;
    t.parametric = (uint8_t)param;
    /* a priority orders Lark's choices among parses or terminals: the
     * language, and so every mask, is the same */
    if (is_punct(&p->cur, '.') &&
        (next(p) || (is_punct(&p->cur, '-') && next(p)) ||
         (p->cur.kind != T_NUMBER ? fail_tok(p, "expected a priority number after '.'")
                                  : next(p))))
        goto fail;
    p->in_param = t.parametric;
    if (expect(p, ':', "expected ':' after the rule name") || !(body = parse_expansions(p)) ||
        end_of_line(p))
        goto fail;
    p->in_param = 0;
    if (then) { /* the rule's stop or suffix after its body */
        gr_expr_t *seq = node(p, GR_X_SEQ, name.pos, NULL, 0);
        if (!seq || gr_ebnf_add(seq, body, p->t.err) || gr_ebnf_add(seq, then, p->t.err))
            goto fail;
        body = seq;
    }
    return define(p, &name, terminal, attr, &t, edit, body);
fail:
    tmpl_free(&t);
    return -1;
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
static int import_common(lark_t *p, const tok_t *name, const tok_t *as)
{
    const char *s = p->t.s + name->at;
    for (size_t i = 0; i < sizeof COMMON / sizeof COMMON[0]; i++) {
        if (strlen(COMMON[i].name) != name->len || memcmp(COMMON[i].name, s, name->len))
            continue;
        gr_expr_t *x = node(p, GR_X_REGEX, name->pos, COMMON[i].regex, strlen(COMMON[i].regex));
        if (!x)
            return -1;
        x->atom = (uint8_t)regex_is_atom(x->text, x->len);
        tb_buf_t b = {0};
        int rc = name_of(p, as ? as : name, &b) ||
                 gr_ebnf_rule(p->e, (char *)b.data, b.len, name->pos, 1, x, p->t.err);
        tb_buf_free(&b);
        return rc;
    }
    return gr_text_fail(&p->t, name->pos, "common has no terminal '%.*s' (it has WS, "
                        "WS_INLINE, NEWLINE, NUMBER, SIGNED_NUMBER, INT, SIGNED_INT, DECIMAL, "
                        "FLOAT, ESCAPED_STRING, CNAME, WORD, LETTER, DIGIT, HEXDIGIT, ...)",
                        (int)name->len, s);
}

/* Records that name (as `as`, or its own name) comes from the module at
 * dotted path[0..n): read when this file ends (read_imports). */
static int import_module(lark_t *p, const char *path, size_t n, gr_pos_t pos, const tok_t *name,
                         const tok_t *as)
{
    import_t *m = NULL;
    for (size_t i = 0; i < p->imports.len && !m; i++)
        if (strlen(p->imports.data[i].path) == n && !memcmp(p->imports.data[i].path, path, n))
            m = &p->imports.data[i];
    if (!m) {
        import_t fresh = {.path = strndup(path, n), .pos = pos};
        if (!fresh.path || tb_vec_push(&p->imports, fresh)) {
            free(fresh.path);
            return tb_fail(p->t.err, "out of memory");
        }
        m = &p->imports.data[p->imports.len - 1];
    }
    tb_buf_t b = {0};
    alias_t a = {strndup(p->t.s + name->at, name->len), NULL};
    if (!name_of(p, as ? as : name, &b))
        a.as = (char *)b.data;
    if (!a.name || !a.as || tb_vec_push(&m->names, a)) {
        free(a.name);
        free(a.as);
        return tb_fail(p->t.err, "out of memory");
    }
    return 0;
}

/* One imported name: from common, or from a module file. */
static int import_name(lark_t *p, int relative, const char *path, size_t n, gr_pos_t pos,
                       const tok_t *name, const tok_t *as)
{
    if (as && is_terminal_name(p->t.s + as->at, as->len) !=
                  is_terminal_name(p->t.s + name->at, name->len))
        return gr_text_fail(&p->t, as->pos, "an alias must be a terminal's name (upper case) "
                            "where the name imported is one, a rule's where it is a rule");
    if (relative)
        return import_module(p, path, n, pos, name, as);
    if (n == 6 && !memcmp(path, "common", 6))
        return import_common(p, name, as);
    return gr_text_fail(&p->t, pos, "%%import %.*s: only common's terminals and grammar files "
                        "relative to this one (%%import .FILE.NAME) can be imported",
                        (int)n, path);
}

/* %import [.]a.b.NAME [-> ALIAS] | %import [.]a.b (A, B, ...): the dotted
 * path names common (built in) or, after a '.', a file relative to this
 * one (a/b.lark). */
static int parse_import(lark_t *p)
{
    gr_pos_t pos = p->cur.pos;
    int relative = is_punct(&p->cur, '.');
    if (relative && next(p))
        return -1;
    tb_buf_t path = {0};
    tok_t last = p->cur;
    int rc = 0;
    for (;;) {
        if (p->cur.kind != T_NAME) {
            rc = fail_tok(p, "expected a name in the import's path");
            break;
        }
        last = p->cur;
        if (path.len && tb_buf_putc(&path, '.'))
            rc = tb_fail(p->t.err, "out of memory");
        if (rc || tb_buf_put(&path, p->t.s + last.at, last.len) || next(p)) {
            rc = -1;
            break;
        }
        if (!is_punct(&p->cur, '.'))
            break;
        if (next(p)) {
            rc = -1;
            break;
        }
    }
    const char *ps = (const char *)path.data;
    if (!rc && is_punct(&p->cur, '(')) { /* the whole path is the module */
        rc = expect(p, '(', "");
        while (!rc) {
            tok_t name = p->cur;
            if (name.kind != T_NAME) {
                rc = fail_tok(p, "expected a name to import");
                break;
            }
            rc = next(p) || import_name(p, relative, ps, path.len, pos, &name, NULL);
            if (rc || is_punct(&p->cur, ')'))
                break;
            rc = expect(p, ',', "expected ',' or ')'");
        }
        rc = rc || expect(p, ')', "expected ')'") || end_of_line(p);
    } else if (!rc) { /* the path's last name is the one imported */
        size_t n = path.len > last.len ? path.len - last.len - 1 : 0;
        tok_t as = {0};
        if (!n)
            rc = gr_text_fail(&p->t, last.pos, "expected a module before '%.*s' (common.NAME "
                              "or .FILE.NAME)", (int)last.len, p->t.s + last.at);
        else if (p->cur.kind == T_ARROW && !(rc = next(p))) {
            as = p->cur;
            rc = as.kind != T_NAME ? fail_tok(p, "expected a name after ->") : next(p);
        }
        rc = rc || import_name(p, relative, ps, n, pos, &last, as.len ? &as : NULL) ||
             end_of_line(p);
    }
    tb_buf_free(&path);
    return rc ? -1 : 0;
}

/* A regex that matches nothing. */
static gr_expr_t *nothing(lark_t *p, gr_pos_t pos)
{
    gr_expr_t *x = node(p, GR_X_REGEX, pos, "[^\\x00-\\x{10FFFF}]", 18);
    if (x)
        x->atom = 1;
    return x;
}

/* %declare NAME...: terminals that a Lark post-lexer would make (python's
 * _INDENT); with no post-lexer here, each matches nothing. */
static int parse_declare(lark_t *p)
{
    if (p->cur.kind != T_NAME)
        return fail_tok(p, "expected a name after %declare");
    while (p->cur.kind == T_NAME) {
        gr_expr_t *x = nothing(p, p->cur.pos);
        tb_buf_t b = {0};
        int rc = !x || name_of(p, &p->cur, &b) ||
                 gr_ebnf_rule(p->e, (char *)b.data, b.len, p->cur.pos,
                              is_terminal_name(p->t.s + p->cur.at, p->cur.len), x, p->t.err);
        tb_buf_free(&b);
        if (rc || next(p))
            return -1;
    }
    return end_of_line(p);
}

/*
 * %llguidance {...}: llguidance's grammar options (its api.rs and Lark
 * compiler), each true or false, merged over several directives.  Read
 * as they change the language here: no_forcing steers how forced bytes
 * are tokenized, not which tokens a mask allows; allow_initial_skip lets
 * ignored text come first under llguidance's semantics, as the default
 * reading always does (gr_cfg_t.initial_skip); ignore_once allows one
 * ignored lexeme at most between two others (gr_cfg_t.ignore_once);
 * allow_invalid_utf8 would change the language and is refused when set.
 * An unknown option is refused by name.
 */
static const struct {
    const char *name;
    uint8_t honoured;
} OPTIONS[] = {
    {"no_forcing", 1}, {"allow_initial_skip", 1}, {"allow_invalid_utf8", 0}, {"ignore_once", 1},
};

static int check_option(lark_t *p, gr_pos_t pos, const char *key, json_t *v)
{
    size_t i = 0, n = sizeof OPTIONS / sizeof OPTIONS[0];
    while (i < n && strcmp(OPTIONS[i].name, key))
        i++;
    if (i == n)
        return gr_text_fail(&p->t, pos, "%%llguidance option '%s' is unknown (llguidance's "
                            "are no_forcing, allow_initial_skip, allow_invalid_utf8, "
                            "ignore_once)", key);
    if (!json_is_boolean(v))
        return gr_text_fail(&p->t, pos, "%%llguidance option '%s' must be true or false", key);
    if (json_is_true(v) && !OPTIONS[i].honoured)
        return gr_text_fail(&p->t, pos, "%%llguidance option '%s' is not supported", key);
    if (!strcmp(key, "allow_initial_skip"))
        p->e->initial_skip = json_is_true(v);
    if (!strcmp(key, "ignore_once"))
        p->e->ignore_once = json_is_true(v);
    return 0;
}

static int parse_options(lark_t *p)
{
    gr_pos_t pos = p->cur.pos;
    tb_json_scan_t js = {.t = p->t.s, .n = p->t.len, .at = p->cur.at};
    json_error_t je;
    json_t *o = is_punct(&p->cur, '{') && !tb_json_skip(&js)
                    ? json_loadb(p->t.s + p->cur.at, js.at - p->cur.at, 0, &je)
                    : NULL;
    if (!json_is_object(o)) {
        json_decref(o);
        return fail_tok(p, "expected a JSON object after %llguidance");
    }
    const char *key;
    json_t *v;
    int rc = 0;
    json_object_foreach(o, key, v) {
        if (!rc)
            rc = check_option(p, pos, key, v);
    }
    json_decref(o);
    if (rc)
        return -1;
    gr_text_skip(&p->t, js.at - p->t.i);
    return next(p) || end_of_line(p) ? -1 : 0;
}

static int parse_directive(lark_t *p)
{
    tok_t d = p->cur;
    if (next(p))
        return -1;
    if (is_word(p, &d, "%ignore")) {
        gr_expr_t *x = parse_expansions(p);
        if (!x)
            return -1;
        if (p->nested)
            return gr_text_fail(&p->t, d.pos, "%%ignore in a nested %%lark grammar is not "
                                "supported (it would hold in the whole grammar)");
        if (*p->prefix) /* as Lark: an imported file's %ignore is its own */
            return end_of_line(p);
        if (tb_vec_push(&p->e->ignore, x))
            return tb_fail(p->t.err, "out of memory");
        p->e->merge = 0; /* ignored text may stand between any two lexemes */
        return end_of_line(p);
    }
    if (is_word(p, &d, "%import"))
        return parse_import(p);
    if (is_word(p, &d, "%declare"))
        return parse_declare(p);
    if (is_word(p, &d, "%override") || is_word(p, &d, "%extend"))
        return parse_definition(p, is_word(p, &d, "%extend") ? 2 : 1);
    if (is_word(p, &d, "%llguidance")) {
        p->e->llguidance = 1; /* llguidance's own reading, unless the caller chose */
        return parse_options(p);
    }
    return gr_text_fail(&p->t, d.pos, "%.*s is not supported (supported: %%ignore, %%import, "
                        "%%declare, %%override, %%extend, %%llguidance {})", (int)d.len,
                        p->t.s + d.at);
}

/* ---- files, modules and templates ---- */

static int read_file(lark_ctx_t *c, const char *text, size_t len, const char *source,
                     const char *prefix, const alias_t *alias, size_t nalias, tb_err_t *err);

/* Reads the modules this file imports, each once with every name it was
 * asked for; a name the module does not define is an error at the import. */
static int read_imports(lark_t *p)
{
    const char *src = p->t.source, *slash = strrchr(src, '/');
    for (size_t i = 0; i < p->imports.len; i++) {
        const import_t *m = &p->imports.data[i];
        tb_buf_t path = {0}, prefix = {0};
        int rc = slash && tb_buf_put(&path, src, (size_t)(slash - src) + 1);
        for (const char *c = m->path; !rc && *c; c++)
            rc = tb_buf_putc(&path, *c == '.' ? '/' : (uint8_t)*c);
        rc = rc || tb_buf_put(&path, ".lark", 6) || tb_buf_put(&prefix, p->prefix,
             strlen(p->prefix)) || tb_buf_put(&prefix, m->path, strlen(m->path)) ||
             tb_buf_put(&prefix, ".", 2);
        uint8_t *data = NULL;
        size_t len;
        tb_err_t why;
        if (rc)
            rc = tb_fail(p->t.err, "out of memory");
        else if (++p->ctx->depth > 16)
            rc = gr_text_fail(&p->t, m->pos, "imports nested more than 16 deep (a cycle?)");
        else if (tb_read_file((char *)path.data, &data, &len, &why))
            rc = gr_text_fail(&p->t, m->pos, "%%import .%s: %s", m->path, why.msg);
        else
            rc = read_file(p->ctx, (char *)data, len, (char *)path.data, (char *)prefix.data,
                           m->names.data, m->names.len, p->t.err);
        p->ctx->depth--;
        for (size_t k = 0; !rc && k < m->names.len; k++) {
            const char *as = m->names.data[k].as;
            if (tb_strmap_get(&p->e->by_name, (const uint8_t *)as, strlen(as)) < 0)
                rc = gr_text_fail(&p->t, m->pos, "%%import: %s defines no '%s'",
                                  (char *)path.data, m->names.data[k].name);
        }
        free(data);
        tb_buf_free(&path);
        tb_buf_free(&prefix);
        if (rc)
            return -1;
    }
    return 0;
}

/* Applies this file's %override and %extend, once its imports are read. */
static int apply_edits(lark_t *p)
{
    for (size_t i = 0; i < p->edits.len; i++) {
        edit_t *d = &p->edits.data[i];
        int32_t r = tb_strmap_get(&p->e->by_name, (const uint8_t *)d->name, strlen(d->name));
        if (r < 0)
            return gr_text_fail(&p->t, d->pos, "%s '%s': no such rule or terminal",
                                d->extend ? "%extend" : "%override", d->name);
        gr_xrule_t *x = &p->e->rule.data[r];
        if (!d->extend) {
            x->body = d->body;
            continue;
        }
        gr_expr_t *alt = node(p, GR_X_ALT, d->pos, NULL, 0);
        if (!alt || gr_ebnf_add(alt, x->body, p->t.err) || gr_ebnf_add(alt, d->body, p->t.err))
            return -1;
        x->body = alt;
    }
    return 0;
}

static void lark_free(lark_t *p)
{
    for (size_t i = 0; i < p->imports.len; i++) {
        import_t *m = &p->imports.data[i];
        for (size_t k = 0; k < m->names.len; k++) {
            free(m->names.data[k].name);
            free(m->names.data[k].as);
        }
        free(m->names.data);
        free(m->path);
    }
    for (size_t i = 0; i < p->edits.len; i++)
        free(p->edits.data[i].name);
    free(p->imports.data);
    free(p->edits.data);
}

/* Reads p's text to its end: its definitions, the modules it imports,
 * then its edits. */
static int read_items(lark_t *p)
{
    int rc = next(p);
    while (!rc && p->cur.kind != T_EOF) {
        if (p->cur.kind == T_NL)
            rc = next(p);
        else if (p->cur.kind == T_DIRECTIVE)
            rc = parse_directive(p);
        else
            rc = parse_definition(p, 0);
    }
    rc = rc || read_imports(p) || apply_edits(p);
    lark_free(p);
    return rc ? -1 : 0;
}

/* Reads one file of the grammar (the main one: prefix "", no aliases). */
static int read_file(lark_ctx_t *c, const char *text, size_t len, const char *source,
                     const char *prefix, const alias_t *alias, size_t nalias, tb_err_t *err)
{
    lark_t p = {.e = c->e, .ctx = c, .prefix = prefix, .alias = alias, .nalias = nalias};
    gr_text_init(&p.t, text, len, source, err);
    return read_items(&p);
}

/*
 * %lark {...} (the current token is %lark): llguidance's grammar nested in
 * a rule, read in place with its names in a namespace of their own
 * ("%lark1."), as a reference to its start rule.  llguidance gives it a
 * lexeme class of its own, whose %ignore holds inside it alone and where
 * the enclosing one's does not; with one class here, a nested grammar is
 * read where neither it nor the grammar around it has an %ignore, which
 * keeps the language.
 */
static gr_expr_t *parse_nested(lark_t *p)
{
    gr_pos_t pos = p->cur.pos;
    if (next(p))
        return NULL;
    if (!is_punct(&p->cur, '{'))
        return fail_tok(p, "expected '{' after %lark"), NULL;
    /* its end: braces counted over tokens (not inside literals, regexes) */
    gr_text_t scan = p->t;
    tok_t k;
    unsigned depth = 1;
    do {
        if (lex(&scan, 1, &k))
            return NULL;
        depth += (unsigned)is_punct(&k, '{') - (unsigned)is_punct(&k, '}');
    } while (k.kind != T_EOF && depth);
    if (depth)
        return gr_text_fail(&p->t, pos, "%%lark: no '}' closes the nested grammar"), NULL;
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%.200s%%lark%u.", p->prefix, ++p->ctx->nested);
    if (p->ctx->nested == 1)
        p->ctx->nested_pos = pos;
    lark_t q = {.e = p->e, .ctx = p->ctx, .prefix = prefix, .nested = 1, .t = p->t};
    q.t.len = k.at;
    tb_buf_t b = {0};
    int rc = read_items(&q) || tb_buf_put(&b, prefix, strlen(prefix)) ||
             tb_buf_put(&b, "start", 6);
    if (!rc && tb_strmap_get(&p->e->by_name, b.data, b.len - 1) < 0)
        rc = gr_text_fail(&p->t, pos, "%%lark: the nested grammar has no rule 'start'");
    gr_expr_t *x = rc ? NULL : node(p, GR_X_REF, pos, (char *)b.data, b.len - 1);
    tb_buf_free(&b);
    p->t = scan;
    return x && !next(p) ? x : NULL;
}

/* How a template's argument reads in the name of the rule it makes. */
static int show_expr(const gr_expr_t *x, tb_buf_t *b)
{
    int rc = 0;
    switch (x->kind) {
    case GR_X_LIT:
        rc = tb_buf_putc(b, '"') || tb_buf_put(b, x->text, x->len) || tb_buf_putc(b, '"') ||
             (x->icase && tb_buf_putc(b, 'i'));
        break;
    case GR_X_REGEX:
        rc = x->show ? tb_buf_put(b, x->show, strlen(x->show))
                     : tb_buf_putc(b, '/') || tb_buf_put(b, x->text, x->len) || tb_buf_putc(b, '/');
        break;
    case GR_X_REF:
    case GR_X_TOKEN:
        rc = tb_buf_put(b, x->text, x->len);
        break;
    case GR_X_REP:
        rc = show_expr(x->kid.data[0], b);
        if (!rc) {
            char q[32];
            int n = x->n == GR_UNBOUNDED ? snprintf(q, sizeof q, "{%u,}", x->m)
                                         : snprintf(q, sizeof q, "{%u,%u}", x->m, x->n);
            rc = tb_buf_put(b, q, (size_t)n);
        }
        break;
    default: /* SEQ, ALT, AND, NOT */
        rc = (x->kind == GR_X_NOT && tb_buf_putc(b, '~')) || tb_buf_putc(b, '(');
        for (size_t i = 0; !rc && i < x->kid.len; i++)
            rc = (i && tb_buf_putc(b, x->kind == GR_X_ALT   ? '|'
                                      : x->kind == GR_X_AND ? '&'
                                                            : ' ')) ||
                 show_expr(x->kid.data[i], b);
        rc = rc || tb_buf_putc(b, ')');
    }
    return rc;
}

/* A copy of x with every reference to t's parameter i replaced by a copy
 * of args[i] (t NULL: a plain copy), and, given pv, each use of a
 * parametric rule's argument replaced by its value for *pv. */
static gr_expr_t *clone(lark_t *p, const gr_expr_t *x, const tmpl_t *t, gr_expr_t *const *args,
                        const uint64_t *pv)
{
    for (size_t i = 0; t && x->kind == GR_X_REF && !x->kid.len && i < t->param.len; i++)
        if (!strcmp(x->text, t->param.data[i]))
            return clone(p, args[i], NULL, NULL, NULL);
    gr_expr_t *y = node(p, x->kind, x->pos, x->text, x->len);
    if (!y)
        return NULL;
    char *text = y->text;
    *y = *x;
    y->text = text;
    y->kid.data = NULL;
    y->kid.len = y->kid.cap = 0;
    if (x->show && !(y->show = strdup(x->show))) {
        tb_fail(p->t.err, "out of memory");
        return NULL;
    }
    uint32_t v;
    if (pv && x->kind == GR_X_REF && x->m) {
        if (gr_param_number(&p->ctx->pexprs, gr_param_eval(&p->ctx->pexprs, x->m - 1, *pv), &v))
            return tb_fail(p->t.err, "out of memory"), NULL;
        y->m = v + 1;
    }
    for (size_t i = 0; i < x->kid.len; i++) {
        gr_expr_t *k = clone(p, x->kid.data[i], t, args, pv);
        if (!k || gr_ebnf_add(y, k, p->t.err))
            return NULL;
    }
    return y;
}

/* Most rules that templates may make, and the longest name of one (which
 * bounds its arguments' size): a template whose uses nest ever deeper
 * (t{x}: x | t{(x x)}) would not stop, and its arguments double each time. */
#define MAX_INSTANCES 10000
#define MAX_INSTANCE_NAME 4096

static const tmpl_t *find_tmpl(lark_t *p, const char *name, int parametric)
{
    for (size_t i = 0; i < p->ctx->tmpl.len; i++)
        if (!strcmp(p->ctx->tmpl.data[i].name, name) && p->ctx->tmpl.data[i].parametric == parametric)
            return &p->ctx->tmpl.data[i];
    return NULL;
}

/* The body of parametric rule t for parameter v: the alternatives whose
 * %if holds, their uses' arguments computed (nothing if none holds). */
static gr_expr_t *param_body(lark_t *p, const tmpl_t *t, uint64_t v)
{
    const gr_expr_t *b = t->body;
    size_t n = b->kind == GR_X_ALT ? b->kid.len : 1;
    gr_expr_t *alt = node(p, GR_X_ALT, b->pos, NULL, 0), *one = NULL;
    for (size_t i = 0; alt && i < n; i++) {
        const gr_expr_t *a = b->kind == GR_X_ALT ? b->kid.data[i] : b;
        if (a->m && !gr_param_eval(&p->ctx->pexprs, a->m - 1, v))
            continue;
        gr_expr_t *k = clone(p, a, NULL, NULL, &v);
        if (!k || gr_ebnf_add(alt, k, p->t.err))
            return NULL;
        k->m = 0;
        one = k;
    }
    return !alt ? NULL : alt->kid.len > 1 ? alt : alt->kid.len ? one : nothing(p, t->pos);
}

/* A use name::N (x, outside parametric rules' bodies) as a reference to
 * the rule name::0xN, made from name::_ the first time. */
static int instantiate_param(lark_t *p, gr_expr_t *x, size_t *made)
{
    uint64_t v;
    const tmpl_t *t = find_tmpl(p, x->text, 1);
    if (!gr_param_const(&p->ctx->pexprs, x->m - 1, &v))
        return gr_text_fail(&p->t, x->pos, "'%s::' takes a number outside a parametric "
                            "rule", x->text);
    if (!t)
        return gr_text_fail(&p->t, x->pos, "no parametric rule '%s::_'", x->text);
    char num[32];
    tb_buf_t b = {0};
    int n = snprintf(num, sizeof num, "::0x%llx", (unsigned long long)v);
    if (tb_buf_put(&b, x->text, x->len) || tb_buf_put(&b, num, (size_t)n + 1))
        return tb_buf_free(&b), tb_fail(p->t.err, "out of memory");
    b.len--;
    int rc = 0;
    if (tb_strmap_get(&p->e->by_name, b.data, b.len) < 0) {
        gr_expr_t *body = ++*made > MAX_INSTANCES
                              ? (gr_text_fail(&p->t, x->pos, "parametric rules made more "
                                              "than %d rules", MAX_INSTANCES), NULL)
                              : param_body(p, t, v);
        rc = !body || gr_ebnf_rule(p->e, (char *)b.data, b.len, t->pos, 0, body, p->t.err);
    }
    if (rc) {
        tb_buf_free(&b);
        return -1;
    }
    free(x->text);
    x->text = (char *)b.data;
    x->len = b.len;
    x->m = 0;
    return 0;
}

/* Replaces each use name{a, b} under x by a reference to the rule it
 * stands for, made from the template the first time; likewise each use
 * of a parametric rule. */
static int instantiate(lark_t *p, gr_expr_t *x, size_t *made)
{
    for (size_t i = 0; i < x->kid.len; i++)
        if (instantiate(p, x->kid.data[i], made))
            return -1;
    if (x->kind == GR_X_REF && x->m)
        return instantiate_param(p, x, made);
    if (x->kind != GR_X_REF || !x->kid.len)
        return 0;
    const tmpl_t *t = find_tmpl(p, x->text, 0);
    if (!t)
        return gr_text_fail(&p->t, x->pos, "no template '%s'", x->text);
    if (t->param.len != x->kid.len)
        return gr_text_fail(&p->t, x->pos, "template '%s' takes %zu arguments, given %zu",
                            x->text, t->param.len, x->kid.len);
    tb_buf_t b = {0};
    int rc = tb_buf_put(&b, x->text, x->len) || tb_buf_putc(&b, '{');
    for (size_t i = 0; !rc && i < x->kid.len; i++)
        rc = (i && tb_buf_put(&b, ", ", 2)) || show_expr(x->kid.data[i], &b);
    if (rc || tb_buf_putc(&b, '}') || tb_buf_putc(&b, 0)) {
        tb_buf_free(&b);
        return tb_fail(p->t.err, "out of memory");
    }
    b.len--;
    if (tb_strmap_get(&p->e->by_name, b.data, b.len) < 0) {
        gr_expr_t *body = ++*made > MAX_INSTANCES || b.len > MAX_INSTANCE_NAME
                              ? (gr_text_fail(&p->t, x->pos, "templates made more than %d "
                                              "rules or one with arguments over %d bytes (a "
                                              "use that nests without end?)", MAX_INSTANCES,
                                              MAX_INSTANCE_NAME), NULL)
                              : clone(p, t->body, t, x->kid.data, NULL);
        rc = !body || gr_ebnf_rule(p->e, (char *)b.data, b.len, t->pos, t->terminal, body,
                                   p->t.err);
    }
    if (!rc) {
        free(x->text);
        x->text = (char *)b.data;
        x->len = b.len;
        x->kid.len = 0;
    } else {
        tb_buf_free(&b);
    }
    return rc ? -1 : 0;
}

/* A grammar whose one rule is `start: %json SCHEMA` (or the rule named
 * the start) is that schema, compiled by schema.h (which finishes g) with
 * its default options: JSON whitespace between the lexemes of the value.
 * Inside a larger grammar the schema's ignored whitespace would be ignored
 * in the rest of it too, so that is refused.  p reads the main file. */
static int compile_json(lark_t *p, gr_cfg_t *g, const char *start_name)
{
    const gr_ebnf_t *e = p->e;
    const lark_ctx_t *c = p->ctx;
    const gr_expr_t *body = e->rule.len == 1 ? e->rule.data[0].body : NULL;
    if (!body || strcmp(e->rule.data[0].name, start_name) || e->ignore.len ||
        body->kind != GR_X_SEQ || body->kid.len != 1 || body->kid.data[0] != c->json_ref)
        return gr_text_fail(&p->t, c->json_pos, "an inline JSON schema (%%json) is supported as "
                            "a whole grammar only (start: %%json {...})");
    tb_err_t sub = {0};
    if (!gr_schema_compile(g, p->t.s + c->json_at, c->json_len, NULL, &sub))
        return 0;
    /* the compiler's message names the source, and the line and column in
     * the schema's own text: the %json's position stands before them */
    const char *msg = sub.msg;
    if (!strncmp(msg, g->source, strlen(g->source)) && msg[strlen(g->source)] == ':')
        msg += strlen(g->source) + 1;
    return gr_text_fail(&p->t, c->json_pos, "%%json: %s", msg);
}

int gr_lark_read_start(gr_cfg_t *g, const char *text, size_t len, const char *start_name,
                       gr_sym_t *start, tb_err_t *err)
{
    gr_ebnf_t e;
    if (gr_ebnf_init(&e, g->source, err))
        return -1;
    lark_ctx_t c = {.e = &e, .g = g};
    int rc = read_file(&c, text, len, g->source, "", NULL, 0, err);
    /* the rules templates make are appended: the loop reaches them too */
    lark_t p = {.e = &e, .ctx = &c};
    gr_text_init(&p.t, text, len, g->source, err);
    size_t made = 0;
    if (!rc && c.nested && e.ignore.len)
        rc = gr_text_fail(&p.t, c.nested_pos, "a nested %%lark grammar in a grammar with "
                          "%%ignore is not supported (the %%ignore would hold inside it)");
    for (size_t i = 0; !rc && i < e.rule.len; i++)
        rc = instantiate(&p, e.rule.data[i].body, &made);
    for (size_t i = 0; !rc && i < e.ignore.len; i++)
        rc = instantiate(&p, e.ignore.data[i], &made);
    start_name = start_name ? start_name : "start";
    if (e.llguidance && !g->semantics_fixed)
        g->semantics = GR_SEM_LLGUIDANCE;
    if (e.initial_skip)
        g->initial_skip = 1;
    if (e.ignore_once)
        g->ignore_once = 1;
    if (!rc && c.json_ref)
        rc = compile_json(&p, g, start_name);
    else if (!rc)
        rc = gr_ebnf_lower(&e, g, start_name, start, err);
    for (size_t i = 0; i < c.tmpl.len; i++)
        tmpl_free(&c.tmpl.data[i]);
    free(c.tmpl.data);
    free(c.pexprs.data);
    gr_ebnf_free(&e);
    return rc;
}

int gr_lark_read(gr_cfg_t *g, const char *text, size_t len, gr_sym_t *start, tb_err_t *err)
{
    return gr_lark_read_start(g, text, len, NULL, start, err);
}
