/*
 * Tests of the grammar oracle (grammar_oracle.h) and the sentence
 * generator (grammar_gen.h), the referees of the grammar layer's tests.
 * The expected answers are derived by hand from the grammars written here
 * (with the builder of grammar/cfg.h): left and right recursion, nullable
 * rules (including the case a naive Earley completer misses), an ambiguous
 * expression grammar, keywords overlapping identifiers with an ignored
 * space, JSON prefixes and non-prefixes, texts cut inside a UTF-8
 * character, 10,000 nested brackets (the sanitizer build checks that
 * nothing recursed), the item limit.  Then random grammars against their
 * short sentences enumerated bottom-up (a method that shares nothing with
 * Earley), the classes of code points that stand for a cut character's
 * completions against trying every code point, go_mask against go_prefix
 * token by token (small vocabularies, tokens spanning lexemes, llama3's),
 * and generated sentences and their cuts accepted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../grammar/cfg.h"
#include "grammar_gen.h"
#include "grammar_oracle.h"
#include "support.h"

#define LLAMA3 "data/cache/llama3/tokenizer.json"

/* ---- building grammars ------------------------------------------------------------ */

static gr_cfg_t G;

static void g_begin(void)
{
    tb_err_t err;
    if (gr_cfg_init(&G, "test", &err))
        fail_msg("%s", err.msg);
}

static gr_sym_t nt(const char *name)
{
    gr_sym_t s;
    tb_err_t err;
    if (gr_cfg_nonterm(&G, name, strlen(name), (gr_pos_t){1, 1}, &s, &err))
        fail_msg("%s", err.msg);
    return s;
}

static gr_sym_t lit(const char *text)
{
    gr_sym_t s;
    tb_err_t err;
    if (gr_cfg_literal(&G, (const uint8_t *)text, strlen(text), (gr_pos_t){1, 1}, &s, &err))
        fail_msg("%s", err.msg);
    return s;
}

static gr_sym_t lexeme(const char *regex, int ignore)
{
    gr_sym_t s;
    tb_err_t err;
    if (gr_cfg_lexeme(&G, regex, NULL, ignore, (gr_pos_t){1, 1}, &s, &err))
        fail_msg("%s", err.msg);
    return s;
}

static void rule_n(gr_sym_t lhs, const gr_sym_t *rhs, size_t n)
{
    tb_err_t err;
    if (gr_cfg_rule(&G, lhs, rhs, n, (gr_pos_t){1, 1}, &err))
        fail_msg("%s", err.msg);
}

#define RULE(lhs, ...)                                                                      \
    rule_n((lhs), (const gr_sym_t[]){__VA_ARGS__},                                          \
           sizeof((const gr_sym_t[]){__VA_ARGS__}) / sizeof(gr_sym_t))
#define EMPTY(lhs) rule_n((lhs), NULL, 0)

/* Finishes G with start symbol `start` and makes its oracle. */
static go_t *g_oracle(gr_sym_t start)
{
    tb_err_t err;
    if (gr_cfg_finish(&G, start, &err))
        fail_msg("%s", err.msg);
    char msg[512];
    go_t *o = go_new(&G, msg, sizeof msg);
    if (!o)
        fail_msg("go_new: %s", msg);
    return o;
}

static void g_end(go_t *o)
{
    go_free(o);
    gr_cfg_free(&G);
}

/* JSON (RFC 8259) with whitespace as an ignored lexeme and a string or a
 * number as one lexeme each. */
static gr_sym_t json_grammar(void)
{
    gr_sym_t value = nt("value"), object = nt("object"), members = nt("members"),
             pair = nt("pair"), array = nt("array"), elements = nt("elements");
    gr_sym_t str =
        lexeme("\"(?:[^\"\\\\\\x00-\\x1F]|\\\\(?:[\"\\\\/bfnrt]|u[0-9a-fA-F]{4}))*\"", 0);
    gr_sym_t num = lexeme("-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?", 0);
    lexeme("[ \\t\\n\\r]+", 1);
    RULE(value, object);
    RULE(value, array);
    RULE(value, str);
    RULE(value, num);
    RULE(value, lit("true"));
    RULE(value, lit("false"));
    RULE(value, lit("null"));
    RULE(object, lit("{"), lit("}"));
    RULE(object, lit("{"), members, lit("}"));
    RULE(members, pair);
    RULE(members, members, lit(","), pair);
    RULE(pair, str, lit(":"), value);
    RULE(array, lit("["), lit("]"));
    RULE(array, lit("["), elements, lit("]"));
    RULE(elements, value);
    RULE(elements, elements, lit(","), value);
    return value;
}

/* E: E "+" E | E "*" E | "(" E ")" | NUM */
static gr_sym_t expr_grammar(void)
{
    gr_sym_t e = nt("E");
    RULE(e, e, lit("+"), e);
    RULE(e, e, lit("*"), e);
    RULE(e, lit("("), e, lit(")"));
    RULE(e, lexeme("[0-9]+", 0));
    return e;
}

/* ---- checking ----------------------------------------------------------------------- */

static void check_n(go_t *o, const char *text, size_t n, int prefix, int sentence)
{
    int p = go_prefix(o, (const uint8_t *)text, n);
    int s = go_sentence(o, (const uint8_t *)text, n);
    if (p < 0 || s < 0)
        fail_msg("'%.*s': %s", (int)n, text, go_error(o));
    if (p != prefix || s != sentence)
        fail_msg("'%.*s': prefix %d sentence %d, want %d %d", (int)n, text, p, s, prefix,
                 sentence);
}

/* prefix, sentence: the expected answers. */
static void check(go_t *o, const char *text, int prefix, int sentence)
{
    check_n(o, text, strlen(text), prefix, sentence);
}

/* ---- hand-written cases -------------------------------------------------------------- */

static void left_recursion(void **state)
{
    (void)state;
    g_begin();
    gr_sym_t s = nt("S");
    RULE(s, s, lit("a"));
    RULE(s, lit("b"));
    go_t *o = g_oracle(s);
    check(o, "", 1, 0);
    check(o, "b", 1, 1);
    check(o, "ba", 1, 1);
    check(o, "baaa", 1, 1);
    check(o, "a", 0, 0);
    check(o, "ab", 0, 0);
    check(o, "bab", 0, 0);
    g_end(o);
}

static void right_recursion(void **state)
{
    (void)state;
    g_begin();
    gr_sym_t s = nt("S");
    RULE(s, lit("a"), s);
    RULE(s, lit("b"));
    go_t *o = g_oracle(s);
    check(o, "", 1, 0);
    check(o, "aaa", 1, 0);
    check(o, "aaab", 1, 1);
    check(o, "b", 1, 1);
    check(o, "ba", 0, 0);
    check(o, "abb", 0, 0);
    size_t n = 5001;
    char *long_text = malloc(n + 1);
    memset(long_text, 'a', n - 1);
    long_text[n - 1] = 'b';
    check_n(o, long_text, n, 1, 1);
    check_n(o, long_text, n - 1, 1, 0);
    free(long_text);
    g_end(o);
}

static void nullable_rules(void **state)
{
    (void)state;
    /* S: A A "x", A: E, E: (empty).  A completer that only looks back at
     * the items already in a set misses the second A. */
    g_begin();
    gr_sym_t s = nt("S"), a = nt("A"), e = nt("E");
    RULE(s, a, a, lit("x"));
    RULE(a, e);
    EMPTY(e);
    go_t *o = g_oracle(s);
    check(o, "x", 1, 1);
    check(o, "", 1, 0);
    check(o, "xx", 0, 0);
    g_end(o);

    /* S: A B C, A: "a" | (empty), B: (empty), C: "c" | A A.  The language:
     * (a|)(c||a|aa) = "", a, c, ac, aa, aaa. */
    g_begin();
    s = nt("S");
    a = nt("A");
    gr_sym_t b = nt("B"), c = nt("C");
    RULE(s, a, b, c);
    RULE(a, lit("a"));
    EMPTY(a);
    EMPTY(b);
    RULE(c, lit("c"));
    RULE(c, a, a);
    o = g_oracle(s);
    check(o, "", 1, 1);
    check(o, "a", 1, 1);
    check(o, "c", 1, 1);
    check(o, "ac", 1, 1);
    check(o, "aa", 1, 1);
    check(o, "aaa", 1, 1);
    check(o, "aaaa", 0, 0);
    check(o, "aac", 0, 0);
    check(o, "ca", 0, 0);
    check(o, "cc", 0, 0);
    g_end(o);

    /* The empty language's neighbour: S: (empty), no lexeme at all. */
    g_begin();
    s = nt("S");
    EMPTY(s);
    o = g_oracle(s);
    check(o, "", 1, 1);
    check(o, "a", 0, 0);
    g_end(o);

    /* Hidden left recursion through a nullable: S: N S "a" | "b", N:
     * (empty); the language is b a*.  And L: L X | (empty), X: "x" |
     * (empty): infinitely ambiguous, x*. */
    g_begin();
    s = nt("S");
    gr_sym_t n = nt("N"), l = nt("L"), x = nt("X"), top = nt("top");
    RULE(s, n, s, lit("a"));
    RULE(s, lit("b"));
    EMPTY(n);
    RULE(l, l, x);
    EMPTY(l);
    RULE(x, lit("x"));
    EMPTY(x);
    RULE(top, lit("1"), s);
    RULE(top, lit("2"), l);
    o = g_oracle(top);
    check(o, "1baa", 1, 1);
    check(o, "1b", 1, 1);
    check(o, "1ab", 0, 0);
    check(o, "2", 1, 1);
    check(o, "2xxx", 1, 1);
    check(o, "2xb", 0, 0);
    g_end(o);
}

static void ambiguous_expressions(void **state)
{
    (void)state;
    g_begin();
    go_t *o = g_oracle(expr_grammar());
    check(o, "1+2*3", 1, 1);
    check(o, "(1+2)*3", 1, 1);
    check(o, "12", 1, 1);
    check(o, "((((1))))*2+(3)", 1, 1);
    check(o, "1+", 1, 0);
    check(o, "(1", 1, 0);
    check(o, "(", 1, 0);
    check(o, "", 1, 0);
    check(o, "1)", 0, 0);
    check(o, "+1", 0, 0);
    check(o, "1++", 0, 0);
    check(o, "()", 0, 0);
    check(o, "1 + 2", 0, 0); /* no ignored lexeme here */
    /* 200 terms: the number of parses is a Catalan number, the chart is
     * cubic but finite. */
    char text[400];
    size_t k = 0;
    for (int i = 0; i < 200; i++) {
        text[k++] = (char)('0' + i % 10);
        text[k++] = i % 3 ? '+' : '*';
    }
    check_n(o, text, k - 1, 1, 1);
    check_n(o, text, k, 1, 0);
    /* The item limit fails cleanly. */
    go_set_max_items(o, 2000);
    if (go_prefix(o, (const uint8_t *)text, k - 1) != -1 || !strstr(go_error(o), "limit"))
        fail_msg("the item limit was not reported: '%s'", go_error(o));
    go_set_max_items(o, GO_MAX_ITEMS);
    check(o, "1*(2+3)", 1, 1);
    g_end(o);
}

static void keywords_and_identifiers(void **state)
{
    (void)state;
    /* S: "if" ID | ID "=" ID, ID: [a-z]+, spaces ignored.  Lexing is not
     * greedy: "ifx" is "if" then "x". */
    g_begin();
    gr_sym_t s = nt("S"), id = lexeme("[a-z]+", 0);
    lexeme(" +", 1);
    RULE(s, lit("if"), id);
    RULE(s, id, lit("="), id);
    go_t *o = g_oracle(s);
    check(o, "if x", 1, 1);
    check(o, "ifx", 1, 1);
    check(o, "iff", 1, 1);
    check(o, "if", 1, 0);
    check(o, "i", 1, 0);
    check(o, "if = x", 1, 1);
    check(o, "if =", 1, 0);
    check(o, " x = y ", 1, 1);
    check(o, "x=", 1, 0);
    check(o, "   ", 1, 0);
    check(o, "if x y", 0, 0);
    check(o, "x y", 0, 0);
    check(o, "=", 0, 0);
    check(o, "x==y", 0, 0);
    g_end(o);
}

static void anchors_and_bad_lexemes(void **state)
{
    (void)state;
    /* regex.h gives ^ and $ at the ends of a pattern no meaning. */
    g_begin();
    gr_sym_t s = nt("S"), x = lexeme("^ab$", 0), y = lexeme("c\\$", 0);
    RULE(s, x, x, y);
    go_t *o = g_oracle(s);
    check(o, "ababc$", 1, 1);
    check(o, "abab", 1, 0);
    check(o, "ababc", 1, 0);
    check(o, "abc$", 0, 0);
    g_end(o);

    /* Anchors inside a pattern assert the ends of the lexeme's match
     * (regex.h): x$|xy is x|xy, (^|,)x is x|,x. */
    g_begin();
    s = nt("S");
    x = lexeme("x$|xy", 0);
    y = lexeme("(^|,)x", 0);
    RULE(s, x, lit("yz"));
    RULE(s, lit("#"), y, y);
    o = g_oracle(s);
    check(o, "xyz", 1, 1);
    check(o, "xyyz", 1, 1);
    check(o, "xz", 0, 0);
    check(o, "#xx", 1, 1);
    check(o, "#,x,x", 1, 1);
    check(o, "#x,x", 1, 1);
    check(o, "#,x", 1, 0);
    check(o, "#,,x", 0, 0);
    g_end(o);

    /* A lexeme matching the empty string is refused, by name. */
    g_begin();
    s = nt("S");
    RULE(s, lexeme("a*", 0));
    tb_err_t err;
    assert_int_equal(gr_cfg_finish(&G, s, &err), 0);
    char msg[512];
    assert_null(go_new(&G, msg, sizeof msg));
    if (!strstr(msg, "a*") || !strstr(msg, "empty string"))
        fail_msg("unexpected message '%s'", msg);
    gr_cfg_free(&G);
}

static void json_texts(void **state)
{
    (void)state;
    g_begin();
    go_t *o = g_oracle(json_grammar());
    check(o, "{\"a\": [1, 2", 1, 0);
    check(o, "{\"a\"", 1, 0);
    check(o, "{\"a\": [1, 2]}", 1, 1);
    check(o, "  {\n\t\"a\" :\r 1 }  ", 1, 1);
    check(o, "\" a }\"", 1, 1);
    check(o, "{\"a}", 1, 0);
    check(o, "{\"a\":-", 1, 0);
    check(o, "{\"a\":1.", 1, 0);
    check(o, "[1e", 1, 0);
    check(o, "[\"\\u12", 1, 0);
    check(o, "tru", 1, 0);
    check(o, "true", 1, 1);
    check(o, "[true,false,null]", 1, 1);
    check(o, ":", 0, 0);
    check(o, "{\"a\": [1, 2]}}", 0, 0);
    check(o, "{\"a\" 1", 0, 0);
    check(o, "[1 2", 0, 0);
    check(o, "{\"a\":01", 0, 0);
    check(o, "{\"a\":1.e", 0, 0);
    check(o, "[\"\\x\"]", 0, 0);
    check(o, "[\"\\u12g", 0, 0);
    check(o, "{1:2}", 0, 0);
    check(o, "[1,]", 0, 0);
    check(o, "truee", 0, 0);
    check_n(o, "[\"a\x01", 4, 0, 0); /* a control character in a string */
    /* Texts cut inside a character: a prefix iff some completion makes
     * one. */
    check(o, "[\"\xC3", 1, 0);
    check(o, "\"\xF0", 1, 0);
    check(o, "\"\xF0\x9F\x98", 1, 0);
    check(o, "[\"\xC3\xA9\"]", 1, 1);
    check(o, "[\xC3", 0, 0);
    check(o, "[1\xE4", 0, 0);
    check(o, "\xF0", 0, 0);
    check(o, "[\"\xC3\x28", 0, 0);  /* invalid: no continuation byte */
    check(o, "[\"\xED\xA0", 0, 0);  /* a surrogate */
    check(o, "[\"\xC0", 0, 0);      /* an overlong lead */
    check(o, "[\"\xF4\x90", 0, 0);  /* past U+10FFFF */
    check(o, "[\"\xE9\"]", 0, 0);   /* a Latin-1 byte alone */
    g_end(o);
}

static void utf8_completions(void **state)
{
    (void)state;
    /* S: "é" "x" | "\U0001F600" (😀): completions are tried one by one,
     * so the text is a prefix only through the right character. */
    g_begin();
    gr_sym_t s = nt("S");
    RULE(s, lit("\xC3\xA9"), lit("x"));
    RULE(s, lit("\xF0\x9F\x98\x80"));
    go_t *o = g_oracle(s);
    check(o, "\xC3", 1, 0);
    check(o, "\xC3\xA9", 1, 0);
    check(o, "\xC3\xA9x", 1, 1);
    check(o, "\xF0", 1, 0);
    check(o, "\xF0\x9F", 1, 0);
    check(o, "\xF0\x9F\x98\x80", 1, 1);
    check(o, "\xC4", 0, 0);
    check(o, "\xF1", 0, 0);
    check(o, "\xF0\x9F\x99", 0, 0);
    g_end(o);
}

static void deep_nesting(void **state)
{
    (void)state;
    g_begin();
    go_t *o = g_oracle(json_grammar());
    const size_t depth = 10000;
    /* [[[...[1]...]]], then {"a":{"a":...1...}} */
    char *t = malloc(6 * depth + 8);
    size_t n = 0;
    for (size_t i = 0; i < depth; i++)
        t[n++] = '[';
    t[n++] = '1';
    for (size_t i = 0; i < depth; i++)
        t[n++] = ']';
    check_n(o, t, n, 1, 1);
    check_n(o, t, n - 1, 1, 0);
    t[n] = ']';
    check_n(o, t, n + 1, 0, 0);
    n = 0;
    for (size_t i = 0; i < depth; i++) {
        memcpy(t + n, "{\"a\":", 5);
        n += 5;
    }
    t[n++] = '1';
    for (size_t i = 0; i < depth; i++)
        t[n++] = '}';
    check_n(o, t, n, 1, 1);
    check_n(o, t, 5 * depth, 1, 0);
    free(t);
    g_end(o);
}

/* ---- random grammars against their languages enumerated ---------------------------- */

/* Strings over {a, b} of length at most SHORT_MAX, string s of length k
 * with bits v (a = 0) numbered 2^k - 1 + v; a set of them is a bitset. */
#define SHORT_MAX 7
#define SHORT_N ((1u << (SHORT_MAX + 1)) - 1)
#define SET_WORDS ((SHORT_N + 63) / 64)

typedef struct {
    uint64_t w[SET_WORDS];
} strset_t;

static uint32_t short_len(uint32_t i)
{
    uint32_t k = 0;
    while ((1u << (k + 1)) - 1 <= i)
        k++;
    return k;
}

static void short_text(uint32_t i, char *out)
{
    uint32_t k = short_len(i), v = i - ((1u << k) - 1);
    for (uint32_t j = 0; j < k; j++)
        out[j] = (v >> (k - 1 - j)) & 1 ? 'b' : 'a';
    out[k] = 0;
}

static int set_has(const strset_t *s, uint32_t i)
{
    return (int)(s->w[i / 64] >> (i % 64)) & 1;
}

/* x := x + every concatenation of a string of a with one of b that fits;
 * returns whether x grew. */
static int concat_into(strset_t *x, const strset_t *a, const strset_t *b)
{
    int grew = 0;
    for (uint32_t i = 0; i < SHORT_N; i++) {
        if (!set_has(a, i))
            continue;
        uint32_t ki = short_len(i), vi = i - ((1u << ki) - 1);
        for (uint32_t j = 0; j < SHORT_N; j++) {
            uint32_t kj = short_len(j);
            if (ki + kj > SHORT_MAX || !set_has(b, j))
                continue;
            uint32_t vj = j - ((1u << kj) - 1), r = (1u << (ki + kj)) - 1 + (vi << kj | vj);
            grew |= !set_has(x, r);
            x->w[r / 64] |= 1ull << (r % 64);
        }
    }
    return grew;
}

/* The language of G up to SHORT_MAX bytes, per nonterminal, by a fixpoint
 * over the rules: lang(A) grows by the concatenation of its rules'
 * symbols' languages (a lexeme's: the strings PCRE2 matches whole). */
static void enumerate_language(go_t *o, strset_t *lang)
{
    strset_t *lex = calloc(G.lex.len, sizeof *lex);
    char t[SHORT_MAX + 1];
    for (size_t l = 0; l < G.lex.len; l++)
        for (uint32_t i = 0; i < SHORT_N; i++) {
            short_text(i, t);
            if (go_lexeme_full(o, (uint32_t)l, (const uint8_t *)t, strlen(t)) == 1)
                lex[l].w[i / 64] |= 1ull << (i % 64);
        }
    memset(lang, 0, G.nt.len * sizeof *lang);
    for (int grew = 1; grew;) {
        grew = 0;
        for (size_t r = 0; r < G.rule.len; r++) {
            const gr_rule_t *ru = &G.rule.data[r];
            strset_t acc = {{1}}, next; /* {""} */
            for (uint32_t k = 0; k < ru->n; k++) {
                gr_sym_t x = G.sym.data[ru->off + k];
                memset(&next, 0, sizeof next);
                concat_into(&next, &acc, gr_is_lex(x) ? &lex[gr_index(x)] : &lang[x]);
                acc = next;
            }
            grew |= concat_into(&lang[ru->lhs], &acc, &(strset_t){{1}});
        }
    }
    free(lex);
}

/* A random grammar over a few lexemes on {a, b}: 4 nonterminals, 1 to 3
 * rules each of 0 to 3 symbols.  Returns the start, or fails to finish
 * (undefined or unproductive rules): then -1. */
static int64_t random_grammar(void)
{
    static const char *const lexemes[] = {"a", "b", "ab", "a+", "(?:ab)+", "b[ab]?"};
    gr_sym_t nts[4];
    char name[4] = "N0";
    for (int i = 0; i < 4; i++) {
        name[1] = (char)('0' + i);
        nts[i] = nt(name);
    }
    for (int i = 0; i < 4; i++)
        for (uint32_t r = 0, nr = 1 + test_rnd(3); r < nr; r++) {
            gr_sym_t rhs[3];
            uint32_t n = test_rnd(4);
            for (uint32_t k = 0; k < n; k++)
                rhs[k] = test_rnd(2) ? nts[test_rnd(4)] : lexeme(lexemes[test_rnd(6)], 0);
            rule_n(nts[i], rhs, n);
        }
    tb_err_t err;
    return gr_cfg_finish(&G, nts[0], &err) ? -1 : (int64_t)nts[0];
}

static void random_grammars(void **state)
{
    (void)state;
    int tested = 0;
    for (int g = 0; tested < 40 && g < 1000; g++) {
        g_begin();
        int64_t start = random_grammar();
        char msg[512];
        go_t *o = start < 0 ? NULL : go_new(&G, msg, sizeof msg);
        if (!o) {
            gr_cfg_free(&G);
            continue;
        }
        tested++;
        strset_t *lang = malloc(G.nt.len * sizeof *lang);
        enumerate_language(o, lang);
        const strset_t *sent = &lang[start];
        char t[SHORT_MAX + 1], u[SHORT_MAX + 1];
        for (uint32_t i = 0; i < SHORT_N; i++) {
            short_text(i, t);
            size_t n = strlen(t);
            int s = go_sentence(o, (const uint8_t *)t, n), p = go_prefix(o, (const uint8_t *)t, n);
            /* Sentences are exact; a prefix of a short sentence must be a
             * prefix (one of a longer sentence only, the enumeration
             * cannot see). */
            int extends = 0;
            for (uint32_t j = 0; j < SHORT_N && !extends; j++) {
                short_text(j, u);
                extends = set_has(sent, j) && !strncmp(u, t, n);
            }
            if (s != set_has(sent, i) || (extends && p != 1) || (s && !p)) {
                gr_cfg_print(&G, stderr);
                fail_msg("'%s': sentence %d, prefix %d; enumerated: sentence %d, prefix of "
                         "one %d", t, s, p, set_has(sent, i), extends);
            }
        }
        free(lang);
        g_end(o);
    }
    assert_int_equal(tested, 40);
}

/* ---- masks -------------------------------------------------------------------------- */

/* go_mask after prefix[0..n) equals go_prefix of prefix + token, token by
 * token; returns how many tokens were allowed. */
static size_t mask_agrees(go_t *o, const uint8_t *prefix, size_t n, const uint8_t *const *tok,
                          const uint32_t *len, size_t ntok, const uint32_t *sample,
                          size_t nsample)
{
    uint8_t *allowed = malloc(ntok);
    if (go_mask(o, prefix, n, tok, len, ntok, allowed))
        fail_msg("go_mask: %s", go_error(o));
    size_t count = 0;
    uint8_t *buf = malloc(n + 4096);
    memcpy(buf, prefix, n);
    for (size_t k = 0; k < (sample ? nsample : ntok); k++) {
        size_t i = sample ? sample[k] : k;
        assert_true(len[i] <= 4096);
        memcpy(buf + n, tok[i], len[i]);
        int want = go_prefix(o, buf, n + len[i]);
        if (want < 0)
            fail_msg("go_prefix: %s", go_error(o));
        if (want != allowed[i])
            fail_msg("after '%.*s': token '%.*s': mask %d, go_prefix %d", (int)n, prefix,
                     (int)len[i], tok[i], allowed[i], want);
    }
    for (size_t i = 0; i < ntok; i++)
        count += allowed[i];
    free(buf);
    free(allowed);
    return count;
}

/* Every printable ASCII byte, then strings spanning lexemes and cut
 * characters. */
static const char *const extra_tokens[] = {
    "\":", "\": [", "], \"", "\"}", "1, 2", "}]", "{\"", " {\"a\": 1}", "\"\xC3", "\xA9\"",
    "\xE4\xB8", "\xF0", "\xF0\x9F", "\x9F\x98\x80\"", "\xC3", "\"\xC3\xA9\"", "\n", "  ",
    "0.", "e+", "true", "tr", "ue", "null,", ",\"", "\":[", "\":]", "\"\x01", "\xFF", "\\u00",
    "e9\"", "]]", "[[", "1]", "\"a\"", "2]}", "  }",
};

static void small_vocab_masks(void **state)
{
    (void)state;
    g_begin();
    go_t *o = g_oracle(json_grammar());
    const uint8_t *tok[256];
    uint32_t len[256];
    char ascii[95][2];
    size_t ntok = 0;
    for (int c = 0x20; c < 0x7F; c++) {
        ascii[c - 0x20][0] = (char)c;
        tok[ntok] = (const uint8_t *)ascii[c - 0x20];
        len[ntok++] = 1;
    }
    for (size_t i = 0; i < sizeof extra_tokens / sizeof *extra_tokens; i++) {
        tok[ntok] = (const uint8_t *)extra_tokens[i];
        len[ntok++] = (uint32_t)strlen(extra_tokens[i]);
    }
    static const char *const prefixes[] = {
        "", "{", "{\"a", "{\"a\"", "{\"a\": [1, 2", "{\"a\": [1, 2]", "[\"\xC3", "[1",
        "[\"\xF0\x9F", "[\"\\u0", "{\"a\":1}", "  ", "[1e", "x",
    };
    for (size_t p = 0; p < sizeof prefixes / sizeof *prefixes; p++)
        mask_agrees(o, (const uint8_t *)prefixes[p], strlen(prefixes[p]), tok, len, ntok,
                    NULL, 0);
    /* By hand, after {"a: inside the string, ":[ and } are allowed, ":]
     * is not. */
    uint8_t allowed[256];
    assert_int_equal(go_mask(o, (const uint8_t *)"{\"a", 3, tok, len, ntok, allowed), 0);
    for (size_t i = 0; i < ntok; i++) {
        int want = -1;
        if (len[i] == 3 && !memcmp(tok[i], "\":[", 3))
            want = 1;
        if (len[i] == 3 && !memcmp(tok[i], "\":]", 3))
            want = 0;
        if (len[i] == 1 && tok[i][0] == '}')
            want = 1;
        if (want >= 0 && allowed[i] != want)
            fail_msg("token '%.*s' after {\"a: %d", (int)len[i], tok[i], allowed[i]);
    }
    /* From generated sentences cut at random points. */
    char msg[512];
    gg_t *gen = gg_new(&G, o, msg, sizeof msg);
    assert_non_null(gen);
    tb_buf_t text = {0};
    for (int k = 0; k < 40; k++) {
        text.len = 0;
        if (gg_sentence(gen, 8, &text))
            fail_msg("%s", gg_error(gen));
        mask_agrees(o, text.data, gg_cut(text.len), tok, len, ntok, NULL, 0);
    }
    tb_buf_free(&text);
    gg_free(gen);
    g_end(o);
}

/* The classes of code points that stand for a cut character's
 * completions (grammar_oracle.h) answer as trying every code point does:
 * masks over tokens that are cut characters (every lead byte, and the
 * lead bytes with a second byte), both ways, after texts that leave each
 * lexeme expecting its next character. */
static void completion_classes(void **state)
{
    (void)state;
    g_begin();
    gr_sym_t s = nt("S"), x = nt("X"), list;
    static const char *const res[] = {
        "\\p{Greek}+", "[\\x{1F600}-\\x{1F64F}]+!", "a[^\\p{L}\\p{N}]", "[é-ü]+x",
        "\\p{Han}{2}", "(?i)straße", "b\\P{Lu}", "c[\\x{10000}-\\x{10FFFF}]",
    };
    for (size_t i = 0; i < sizeof res / sizeof *res; i++)
        RULE(x, lexeme(res[i], 0));
    tb_err_t err;
    assert_int_equal(gr_cfg_star(&G, x, "xs", &list, &err), 0);
    RULE(s, list);
    go_t *o = g_oracle(s);
    uint8_t bytes[4096][2];
    const uint8_t *tok[4096];
    uint32_t len[4096];
    size_t ntok = 0;
    for (unsigned c = 0xC0; c < 0x100; c++) {
        bytes[ntok][0] = (uint8_t)c;
        tok[ntok] = bytes[ntok];
        len[ntok++] = 1;
        for (unsigned d = 0x80; d < 0xC0; d += 1 + test_rnd(8)) {
            bytes[ntok][0] = (uint8_t)c;
            bytes[ntok][1] = (uint8_t)d;
            tok[ntok] = bytes[ntok];
            len[ntok++] = 2;
        }
    }
    static const char *const prefixes[] = {"", "\xCE\xB1", "a", "\xC3\xA9", "b", "c", "STRA",
                                           "\xE4\xB8\xAD", "\xF0\x9F\x98\x80"};
    uint8_t *fast = malloc(ntok), *slow = malloc(ntok);
    for (size_t p = 0; p < sizeof prefixes / sizeof *prefixes; p++) {
        const uint8_t *pre = (const uint8_t *)prefixes[p];
        size_t n = strlen(prefixes[p]);
        assert_int_equal(go_set_exhaustive(o, 0), 0);
        assert_int_equal(go_mask(o, pre, n, tok, len, ntok, fast), 0);
        assert_int_equal(go_set_exhaustive(o, 1), 0);
        assert_int_equal(go_mask(o, pre, n, tok, len, ntok, slow), 0);
        size_t allowed = 0;
        for (size_t i = 0; i < ntok; i++) {
            if (fast[i] != slow[i])
                fail_msg("after '%s': token %02x %02x: classes say %d, every code point %d",
                         prefixes[p], tok[i][0], len[i] > 1 ? tok[i][1] : 0, fast[i], slow[i]);
            allowed += fast[i];
        }
        assert_true(allowed > 0);
    }
    free(fast);
    free(slow);
    g_end(o);
}

/* ---- generated sentences ------------------------------------------------------------- */

static void generated_sentences_are_accepted(go_t *o, int count, uint32_t depth)
{
    char msg[512];
    gg_t *gen = gg_new(&G, o, msg, sizeof msg);
    if (!gen)
        fail_msg("%s", msg);
    tb_buf_t text = {0};
    for (int k = 0; k < count; k++) {
        text.len = 0;
        if (gg_sentence(gen, depth, &text))
            fail_msg("%s", gg_error(gen));
        int s = go_sentence(o, text.data, text.len);
        if (s != 1)
            fail_msg("generated '%.*s' is not a sentence (%d: %s)", (int)text.len, text.data,
                     s, go_error(o));
        size_t cut = gg_cut(text.len);
        if (go_prefix(o, text.data, cut) != 1)
            fail_msg("'%.*s', a cut of '%.*s', is not a prefix", (int)cut, text.data,
                     (int)text.len, text.data);
    }
    tb_buf_free(&text);
    gg_free(gen);
}

static void generated_sentences(void **state)
{
    (void)state;
    g_begin();
    go_t *o = g_oracle(json_grammar());
    generated_sentences_are_accepted(o, 200, 10);
    g_end(o);
    g_begin();
    o = g_oracle(expr_grammar());
    generated_sentences_are_accepted(o, 200, 8);
    g_end(o);
    /* Identifiers and keywords with ignored spaces, and a lexeme of
     * non-ASCII letters only the pattern names. */
    g_begin();
    gr_sym_t s = nt("S"), id = lexeme("[a-z]+", 0), greek = lexeme("[α-ω]{2,}", 0);
    lexeme(" +", 1);
    gr_sym_t list;
    tb_err_t err;
    assert_int_equal(gr_cfg_star(&G, id, "ids", &list, &err), 0);
    RULE(s, lit("if"), list, greek);
    RULE(s, id, lit("="), id);
    o = g_oracle(s);
    generated_sentences_are_accepted(o, 200, 8);
    g_end(o);
}

/* ---- llama3 ------------------------------------------------------------------------- */

static void llama3_masks(void **state)
{
    (void)state;
    test_need_file(LLAMA3);
    test_tries_t fx = {0};
    if (test_tries_load(&fx, LLAMA3))
        fail_msg("cannot load %s", LLAMA3);
    size_t ntok = fx.keys.n;
    const uint8_t **tok = malloc(ntok * sizeof *tok);
    uint32_t *len = malloc(ntok * sizeof *len);
    for (size_t i = 0; i < ntok; i++) {
        tok[i] = fx.keys.keys[i].s;
        len[i] = fx.keys.keys[i].len;
    }
    /* Every token with a cut character at its end, and a random sample. */
    uint32_t *sample = malloc(ntok * sizeof *sample);
    size_t ns = 0;
    for (size_t i = 0; i < ntok; i++)
        if (len[i] && (tok[i][len[i] - 1] >= 0x80 || test_rnd(200) == 0))
            sample[ns++] = (uint32_t)i;
    g_begin();
    go_t *o = g_oracle(json_grammar());
    static const char *const prefixes[] = {"{\"a\": ", "{\"name\": \"Jo", "[1, 2"};
    for (size_t p = 0; p < sizeof prefixes / sizeof *prefixes; p++) {
        size_t n = mask_agrees(o, (const uint8_t *)prefixes[p], strlen(prefixes[p]), tok, len,
                               ntok, sample, ns);
        assert_true(n > 0 && n < ntok);
    }
    /* By id: after {"a": a value begins, so "[" and " ["
     * are allowed and "}" is not. */
    tb_bitset_t mask;
    assert_int_equal(tb_bitset_init(&mask, fx.keys.id_limit), 0);
    if (go_mask_keys(o, (const uint8_t *)"{\"a\": ", 6, &fx.keys, &mask))
        fail_msg("%s", go_error(o));
    int32_t open = tok_vocab_find(tok_vocab(fx.tok), (const uint8_t *)"[", 1),
            sp_open = tok_vocab_find(tok_vocab(fx.tok), (const uint8_t *)" [", 2),
            close = tok_vocab_find(tok_vocab(fx.tok), (const uint8_t *)"}", 1);
    assert_true(open >= 0 && sp_open >= 0 && close >= 0);
    assert_true(tb_bitset_get(&mask, (size_t)open) && tb_bitset_get(&mask, (size_t)sp_open));
    assert_false(tb_bitset_get(&mask, (size_t)close));
    tb_bitset_free(&mask);
    g_end(o);
    free(sample);
    free(tok);
    free(len);
    test_tries_free(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(left_recursion),
        cmocka_unit_test(right_recursion),
        cmocka_unit_test(nullable_rules),
        cmocka_unit_test(ambiguous_expressions),
        cmocka_unit_test(keywords_and_identifiers),
        cmocka_unit_test(anchors_and_bad_lexemes),
        cmocka_unit_test(json_texts),
        cmocka_unit_test(utf8_completions),
        long_unit_test(completion_classes),
        cmocka_unit_test(deep_nesting),
        cmocka_unit_test(random_grammars),
        cmocka_unit_test(small_vocab_masks),
        cmocka_unit_test(generated_sentences),
        cmocka_unit_test(llama3_masks),
    };
    test_rng = 0x5851f42d4c957f2dull;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
