/* lexemes: the lexer spec reader and what a lexer state says (see lexemes.h). */
#include "lexemes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/buf.h"
#include "../base/file.h"

/* One line of the spec, and the reader's position. */
typedef struct {
    const char *s;
    size_t len, no;
} line_t;

/* A lexeme as defined: its name (moved to the lexemes by make_lexemes),
 * term, and line (for duplicate errors). */
typedef struct {
    char *name;
    lex_term_t root;
    size_t line;
} def_t;

typedef struct {
    const char *source;
    tb_err_t *err;
    lex_terms_t terms;
    TB_VEC(def_t) def;
    int seen_start, seen_end;
    uint8_t *has_follow; /* lexeme i has a `->` line of its own (or `* ->`) */
    lex_lexemes_t *lx;
} spec_t;

static int spec_fail(spec_t *sp, const line_t *l, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Fails with "source:line:column: message" (column 1-based, in bytes). */
static int spec_fail(spec_t *sp, const line_t *l, size_t at, const char *fmt, ...)
{
    char msg[TB_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tb_fail(sp->err, "%s:%zu:%zu: %s", sp->source, l->no, at + 1, msg);
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static int name_char(char c, int first)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
           (!first && c >= '0' && c <= '9');
}

static size_t skip_blanks(const line_t *l, size_t i)
{
    while (i < l->len && is_blank(l->s[i]))
        i++;
    return i;
}

/* The end of the name at i (i itself if there is none). */
static size_t name_end(const line_t *l, size_t i)
{
    size_t j = i;
    while (j < l->len && name_char(l->s[j], j == i))
        j++;
    return j;
}

static long find_name(const spec_t *sp, const char *s, size_t n)
{
    for (size_t i = 0; i < sp->def.len; i++) {
        /* make_lexemes moves the names */
        const char *name = sp->lx ? sp->lx->name[i] : sp->def.data[i].name;
        if (strlen(name) == n && !memcmp(name, s, n))
            return (long)i;
    }
    return -1;
}

/* ---- pass 1: lexeme definitions ------------------------------------------------- */

/* The byte offset that a regex error message ends with ("... at offset N"),
 * or 0 if it names none. */
static size_t regex_error_offset(const char *msg)
{
    const char *key = " at offset ", *p = NULL;
    for (const char *q = strstr(msg, key); q; q = strstr(q + 1, key))
        p = q;
    return p ? strtoul(p + strlen(key), NULL, 10) : 0;
}

static int add_lexeme(spec_t *sp, const line_t *l, size_t name_at, size_t name_len,
                      size_t pat_at, size_t pat_len)
{
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(name_len < 255 ? name_len : 255),
             l->s + name_at);
    long dup = find_name(sp, l->s + name_at, name_len);
    if (dup >= 0) {
        return spec_fail(sp, l, name_at, "lexeme '%s' is already defined at line %zu", name,
                         sp->def.data[dup].line);
    }
    if (sp->def.len == LEX_MAX_LEXEMES) {
        return spec_fail(sp, l, name_at, "lexeme '%s': more than %d lexemes", name,
                         LEX_MAX_LEXEMES);
    }
    if (pat_len == 0)
        return spec_fail(sp, l, pat_at, "lexeme '%s' has an empty pattern", name);
    tb_err_t rerr;
    lex_term_t root;
    if (lex_regex_parse(&sp->terms, l->s + pat_at, pat_len, &root, &rerr)) {
        size_t off = regex_error_offset(rerr.msg);
        return spec_fail(sp, l, pat_at + (off <= pat_len ? off : pat_len), "lexeme '%s': %s",
                         name, rerr.msg);
    }
    if (lex_node(&sp->terms, root)->nullable)
        return spec_fail(sp, l, pat_at,
                         "lexeme '%s' matches the empty string; a lexeme must read at "
                         "least one byte (+ rather than *?)", name);
    def_t def = {.name = strndup(l->s + name_at, name_len), .root = root, .line = l->no};
    if (!def.name || tb_vec_push(&sp->def, def)) {
        free(def.name);
        return tb_fail(sp->err, "out of memory");
    }
    return 0;
}

/* What the line is: 0 blank or comment, '=' a definition, ':' start/end,
 * '>' a follow line; -1 with the error set if it is none of them.  *at
 * and *head_end delimit its head (a name or *), *rest is after the
 * operator. */
static int classify(spec_t *sp, const line_t *l, size_t *at, size_t *head_end, size_t *rest)
{
    size_t i = skip_blanks(l, 0);
    *at = i;
    if (i == l->len || l->s[i] == '#')
        return 0;
    size_t j = l->s[i] == '*' ? i + 1 : name_end(l, i);
    if (j == i)
        return spec_fail(sp, l, i, "expected a lexeme name, '*', 'start:' or 'end:'");
    *head_end = j;
    size_t k = skip_blanks(l, j);
    /* A follow line may list several lexemes before its arrow. */
    for (size_t m = 0; k < l->len && (l->s[k] == '*' || (m = name_end(l, k)) > k);) {
        j = l->s[k] == '*' ? k + 1 : m;
        size_t a = skip_blanks(l, j);
        if (!(a + 1 < l->len && l->s[a] == '-' && l->s[a + 1] == '>') &&
            !(a < l->len && (l->s[a] == '*' || name_char(l->s[a], 1))))
            break;
        *head_end = j;
        k = a;
    }
    if (k < l->len && (l->s[k] == '=' || l->s[k] == ':')) {
        *rest = k + 1;
        return l->s[k];
    }
    if (k + 1 < l->len && l->s[k] == '-' && l->s[k + 1] == '>') {
        *rest = k + 2;
        return '>';
    }
    char head[256];
    size_t hl = *head_end - i;
    snprintf(head, sizeof head, "%.*s", (int)(hl < 255 ? hl : 255), l->s + i);
    return spec_fail(sp, l, k, "expected '=', '->' or ':' after '%s'", head);
}

static int pass_definitions(spec_t *sp, const line_t *l)
{
    size_t at, head_end = 0, rest = 0;
    int kind = classify(sp, l, &at, &head_end, &rest);
    if (kind != '=')
        return kind < 0 ? -1 : 0;
    if (l->s[at] == '*')
        return spec_fail(sp, l, at, "'*' cannot be defined (it stands for every lexeme)");
    size_t p = skip_blanks(l, rest), e = l->len;
    while (e > p && is_blank(l->s[e - 1]))
        e--;
    return add_lexeme(sp, l, at, head_end - at, p, e - p);
}

/* ---- pass 2: start, end and follow lines ----------------------------------------- */

static void set_bit(uint64_t *set, size_t i)
{
    set[i >> 6] |= 1ull << (i & 63);
}

/* Adds the names (or *) listed in the line from i on to set. */
static int read_names(spec_t *sp, const line_t *l, size_t i, uint64_t *set)
{
    for (i = skip_blanks(l, i); i < l->len; i = skip_blanks(l, i)) {
        if (l->s[i] == '#')
            break;
        if (l->s[i] == '*') {
            for (size_t k = 0; k < sp->def.len; k++)
                set_bit(set, k);
            i++;
            continue;
        }
        size_t j = name_end(l, i);
        if (j == i || (j < l->len && !is_blank(l->s[j]))) {
            while (j < l->len && !is_blank(l->s[j]))
                j++;
            char bad[256];
            snprintf(bad, sizeof bad, "%.*s", (int)(j - i < 255 ? j - i : 255), l->s + i);
            return spec_fail(sp, l, i, "expected a lexeme name or *, not '%s'", bad);
        }
        long k = find_name(sp, l->s + i, j - i);
        if (k < 0) {
            char bad[256];
            snprintf(bad, sizeof bad, "%.*s", (int)(j - i < 255 ? j - i : 255), l->s + i);
            return spec_fail(sp, l, i, "unknown lexeme '%s'", bad);
        }
        set_bit(set, (size_t)k);
        i = j;
    }
    return 0;
}

static int pass_directives(spec_t *sp, const line_t *l)
{
    lex_lexemes_t *lx = sp->lx;
    size_t at, head_end = 0, rest = 0;
    int kind = classify(sp, l, &at, &head_end, &rest);
    if (kind <= 0 || kind == '=')
        return kind < 0 ? -1 : 0;
    size_t hl = head_end - at;
    const char *h = l->s + at;
    if (kind == ':') {
        int start = hl == 5 && !memcmp(h, "start", 5), end = hl == 3 && !memcmp(h, "end", 3);
        if (!start && !end) {
            char head[256];
            snprintf(head, sizeof head, "%.*s", (int)(hl < 255 ? hl : 255), h);
            return spec_fail(sp, l, at, "unknown directive '%s:' (start: or end:)", head);
        }
        sp->seen_start |= start;
        sp->seen_end |= end;
        return read_names(sp, l, rest, start ? lx->start : lx->end);
    }
    /* NAME... -> NAME...: every lexeme on the left gets the right's set. */
    uint64_t *lhs = calloc(2 * lx->words, sizeof *lhs);
    if (!lhs)
        return tb_fail(sp->err, "out of memory");
    uint64_t *rhs = lhs + lx->words;
    line_t left = *l;
    left.len = head_end;
    int rc = read_names(sp, &left, at, lhs) || read_names(sp, l, rest, rhs);
    for (size_t i = 0; i < lx->n && !rc; i++) {
        if (!((lhs[i >> 6] >> (i & 63)) & 1))
            continue;
        for (size_t w = 0; w < lx->words; w++)
            lx->follow[i * lx->words + w] |= rhs[w];
        sp->has_follow[i] = 1;
    }
    free(lhs);
    return rc ? -1 : 0;
}

/* ---- the whole spec --------------------------------------------------------------- */

static int for_each_line(spec_t *sp, const char *text, size_t len,
                         int (*fn)(spec_t *, const line_t *))
{
    line_t l = {.s = text, .no = 1};
    for (size_t i = 0; i <= len; i++) {
        if (i < len && text[i] != '\n')
            continue;
        l.len = (size_t)(text + i - l.s);
        if (l.len && l.s[l.len - 1] == '\r') /* CRLF files */
            l.len--;
        if (fn(sp, &l))
            return -1;
        l.s = text + i + 1;
        l.no++;
    }
    return 0;
}

static int make_lexemes(spec_t *sp)
{
    lex_lexemes_t *lx = calloc(1, sizeof *lx);
    if (!lx)
        return tb_fail(sp->err, "out of memory");
    sp->lx = lx;
    size_t n = sp->def.len;
    lx->n = n;
    lx->words = (n + 63) / 64;
    lx->root = malloc(n * sizeof *lx->root);
    lx->name = calloc(n, sizeof *lx->name);
    lx->start = calloc(lx->words, sizeof *lx->start);
    lx->end = calloc(lx->words, sizeof *lx->end);
    lx->follow = calloc(n * lx->words, sizeof *lx->follow);
    sp->has_follow = calloc(n, 1);
    if (!lx->root || !lx->name || !lx->start || !lx->end || !lx->follow || !sp->has_follow)
        return tb_fail(sp->err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        lx->root[i] = sp->def.data[i].root;
        lx->name[i] = sp->def.data[i].name;
        sp->def.data[i].name = NULL;
    }
    return 0;
}

/* Defaults for what the spec leaves out: any lexeme may end the text, and
 * may follow a lexeme that has no follow line. */
static void fill_defaults(spec_t *sp)
{
    lex_lexemes_t *lx = sp->lx;
    for (size_t i = 0; i < lx->n; i++) {
        if (!sp->seen_end)
            set_bit(lx->end, i);
        for (size_t j = 0; j < lx->n && !sp->has_follow[i]; j++)
            set_bit(lx->follow + i * lx->words, j);
    }
}

static void spec_free(spec_t *sp)
{
    for (size_t i = 0; i < sp->def.len; i++)
        free(sp->def.data[i].name);
    free(sp->def.data);
    free(sp->has_follow);
    lex_lexemes_free(sp->lx);
    lex_terms_free(&sp->terms);
}

lex_dfa_t *lex_lexer_parse(const char *text, size_t len, const char *source,
                           const lex_dfa_opts_t *opts, tb_err_t *err)
{
    spec_t sp = {.source = source, .err = err};
    size_t max_terms = opts && opts->max_terms ? opts->max_terms : LEX_DEFAULT_MAX_TERMS;
    if (lex_terms_init(&sp.terms, max_terms, err))
        return NULL;
    int rc = for_each_line(&sp, text, len, pass_definitions);
    if (!rc && sp.def.len == 0)
        rc = tb_fail(err, "%s: no lexemes (lines NAME = REGEX)", source);
    if (!rc)
        rc = make_lexemes(&sp);
    if (!rc)
        rc = for_each_line(&sp, text, len, pass_directives);
    if (!rc && !sp.seen_start)
        rc = tb_fail(err, "%s: no 'start:' line (which lexemes may begin the text)", source);
    for (size_t w = 0; !rc && w < sp.lx->words && !sp.lx->start[w]; w++)
        if (w + 1 == sp.lx->words)
            rc = tb_fail(err, "%s: the 'start:' lines list no lexeme", source);
    if (rc) {
        spec_free(&sp);
        return NULL;
    }
    fill_defaults(&sp);
    lex_lexemes_t *lx = sp.lx;
    lex_terms_t terms = sp.terms;
    sp.lx = NULL;
    memset(&sp.terms, 0, sizeof sp.terms);
    spec_free(&sp);
    return lex_dfa_new_lexer(&terms, lx, source, opts, err);
}

lex_dfa_t *lex_lexer_from_regexes(const char *const *regexes, const char *const *names,
                                  size_t n, const char *label, const lex_dfa_opts_t *opts,
                                  tb_err_t *err)
{
    if (n == 0 || n > LEX_MAX_LEXEMES) {
        tb_fail(err, "%s: %zu lexemes (1 to %d)", label, n, LEX_MAX_LEXEMES);
        return NULL;
    }
    spec_t sp = {.source = label, .err = err};
    size_t max_terms = opts && opts->max_terms ? opts->max_terms : LEX_DEFAULT_MAX_TERMS;
    if (lex_terms_init(&sp.terms, max_terms, err))
        return NULL;
    sp.terms.lookahead = opts && opts->lookahead;
    /* the lexemes of a schema spell the same characters many times */
    int rc = lex_regex_memo_begin(&sp.terms) ? tb_fail(err, "out of memory") : 0;
    for (size_t i = 0; i < n && !rc; i++) {
        tb_err_t rerr;
        def_t def = {.name = strdup(names[i])};
        if (!def.name || tb_vec_push(&sp.def, def)) {
            free(def.name);
            rc = tb_fail(err, "out of memory");
        } else if (lex_regex_parse(&sp.terms, regexes[i], strlen(regexes[i]),
                                   &sp.def.data[i].root, &rerr)) {
            rc = tb_fail(err, "%s: lexeme %s: %s", label, names[i], rerr.msg);
        } else if (lex_node(&sp.terms, sp.def.data[i].root)->nullable) {
            rc = tb_fail(err, "%s: lexeme %s matches the empty string; a lexeme must read "
                         "at least one byte", label, names[i]);
        }
    }
    lex_regex_memo_end(&sp.terms);
    if (!rc)
        rc = make_lexemes(&sp);
    if (rc) {
        spec_free(&sp);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        set_bit(sp.lx->start, i);
        set_bit(sp.lx->end, i);
    }
    lex_lexemes_t *lx = sp.lx;
    lex_terms_t terms = sp.terms;
    sp.lx = NULL;
    memset(&sp.terms, 0, sizeof sp.terms);
    spec_free(&sp);
    return lex_dfa_new_lexer(&terms, lx, label, opts, err);
}

lex_dfa_t *lex_lexer_load(const char *path, const lex_dfa_opts_t *opts, tb_err_t *err)
{
    uint8_t *data;
    size_t len;
    if (tb_read_file(path, &data, &len, err))
        return NULL;
    lex_dfa_t *d = lex_lexer_parse((const char *)data, len, path, opts, err);
    free(data);
    return d;
}

/* ---- what a state says ------------------------------------------------------------ */

size_t lex_dfa_nlexemes(const lex_dfa_t *d)
{
    return d->lx ? d->lx->n : 1;
}

const char *lex_dfa_lexeme_name(const lex_dfa_t *d, size_t i)
{
    return d->lx ? d->lx->name[i] : "regex";
}

long lex_dfa_lexeme_find(const lex_dfa_t *d, const char *name)
{
    for (size_t i = 0; i < lex_dfa_nlexemes(d); i++)
        if (!strcmp(lex_dfa_lexeme_name(d, i), name))
            return (long)i;
    return -1;
}

/* Sets the lexemes of s's pairs in out, all of them or the nullable ones;
 * a one-regex DFA has one lexeme, live or accepting with its state. */
static void pair_lexemes(const lex_dfa_t *d, uint32_t s, int nullable_only, tb_bitset_t *out)
{
    tb_bitset_clear_all(out);
    if (!d->lx) {
        if (nullable_only ? d->accept[s] : d->term[s] != LEX_NOTHING)
            tb_bitset_set(out, 0);
        return;
    }
    const lex_pair_t *p = d->pair.data + d->pair_off[s];
    for (uint32_t k = 0; k < d->pair_n[s]; k++)
        if (!nullable_only || lex_node(&d->terms, p[k].term)->nullable)
            tb_bitset_set(out, p[k].lexeme);
}

void lex_dfa_possible(const lex_dfa_t *d, uint32_t s, tb_bitset_t *out)
{
    pair_lexemes(d, s, 0, out);
}

void lex_dfa_ending(const lex_dfa_t *d, uint32_t s, tb_bitset_t *out)
{
    pair_lexemes(d, s, 1, out);
}

void lex_dfa_may_start(const lex_dfa_t *d, uint32_t s, tb_bitset_t *out)
{
    tb_bitset_clear_all(out);
    if (!d->lx)
        return;
    const lex_lexemes_t *lx = d->lx;
    const lex_pair_t *p = d->pair.data + d->pair_off[s];
    for (uint32_t k = 0; k < d->pair_n[s]; k++) {
        if (!lex_node(&d->terms, p[k].term)->nullable)
            continue;
        const uint64_t *row = lx->follow + (size_t)p[k].lexeme * lx->words;
        for (size_t w = 0; w < lx->words; w++)
            out->words[w] |= row[w];
    }
}
