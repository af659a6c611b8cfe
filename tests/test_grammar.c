/*
 * Tests of the grammar layer (grammar/gram.h, match.h) on grammars built
 * with the cfg builder: sentences and prefixes accepted and refused
 * (left and right recursion, nullable rules, ambiguity, overlapping
 * lexemes, ignored whitespace, 10,000 levels of nesting), the matcher
 * (consume, roll back, bounded history, accepting, forced bytes), long
 * texts in bounded states, limits, and masks of
 * every trie layout over llama3 against feeding each token's bytes.
 * test_grammar_oracle.c checks masks against an oracle that shares no code
 * with the parser.
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
#include "../grammar/gram.h"
#include "../grammar/match.h"
#include "support.h"

#define LLAMA3 "data/cache/llama3/tokenizer.json"

/* ---- grammars ----------------------------------------------------------------- */

/* Builds a grammar from a tiny notation: one rule a line, "lhs: a b | c",
 * where a quoted word is a literal, /re/ a lexeme regex (no blanks), "-"
 * the empty sequence, anything else a nonterminal; "%ignore /re/" adds an
 * ignored lexeme.  The first rule's left side is the start. */
static gr_gram_t *build(const char *text, const gr_opts_t *opts)
{
    gr_cfg_t cfg;
    tb_err_t err;
    assert_int_equal(gr_cfg_init(&cfg, "<test>", &err), 0);
    char *copy = strdup(text), *save = NULL;
    gr_sym_t start = 0;
    int have_start = 0;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *ws = NULL, *w = strtok_r(line, " ", &ws);
        gr_sym_t sym, lhs;
        if (!strcmp(w, "%ignore")) {
            w = strtok_r(NULL, " ", &ws);
            w[strlen(w) - 1] = 0;
            assert_int_equal(gr_cfg_lexeme(&cfg, w + 1, NULL, 1, (gr_pos_t){0, 0}, &sym, &err), 0);
            continue;
        }
        w[strlen(w) - 1] = 0; /* the colon */
        assert_int_equal(gr_cfg_nonterm(&cfg, w, strlen(w), (gr_pos_t){1, 1}, &lhs, &err), 0);
        if (!have_start)
            start = lhs, have_start = 1;
        gr_sym_t rhs[32];
        size_t n = 0;
        for (;;) {
            w = strtok_r(NULL, " ", &ws);
            if (!w || !strcmp(w, "|")) {
                assert_int_equal(gr_cfg_rule(&cfg, lhs, rhs, n, (gr_pos_t){1, 1}, &err), 0);
                n = 0;
                if (!w)
                    break;
                continue;
            }
            size_t len = strlen(w);
            if (!strcmp(w, "-"))
                continue;
            if (w[0] == '"')
                assert_int_equal(gr_cfg_literal(&cfg, (const uint8_t *)w + 1, len - 2,
                                                (gr_pos_t){1, 1}, &sym, &err), 0);
            else if (w[0] == '/') {
                w[len - 1] = 0;
                assert_int_equal(gr_cfg_lexeme(&cfg, w + 1, NULL, 0, (gr_pos_t){1, 1}, &sym,
                                               &err), 0);
            } else
                assert_int_equal(gr_cfg_nonterm(&cfg, w, len, (gr_pos_t){1, 1}, &sym, &err), 0);
            rhs[n++] = sym;
        }
    }
    free(copy);
    if (gr_cfg_finish(&cfg, start, &err)) {
        print_message("%s\n", err.msg);
        fail();
    }
    gr_gram_t *g = gr_gram_new(&cfg, opts, &err);
    if (!g) {
        print_message("%s\n", err.msg);
        fail();
    }
    return g;
}

#define STR "/\"([^\"\\\\\\x00-\\x1f]|\\\\([\"\\\\/bfnrt]|u[0-9a-fA-F]{4}))*\"/"
#define NUM "/-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?/"

static const char json_grammar[] =
    "value: object | array | " STR " | " NUM " | \"true\" | \"false\" | \"null\"\n"
    "object: \"{\" \"}\" | \"{\" members \"}\"\n"
    "members: pair | members \",\" pair\n"
    "pair: " STR " \":\" value\n"
    "array: \"[\" \"]\" | \"[\" elements \"]\"\n"
    "elements: value | elements \",\" value\n"
    "%ignore /[\\x20\\t\\n\\r]+/\n";

/* 1 if text is a sentence, 0 if a prefix only, -1 if refused. */
static int judge(gr_gram_t *g, const char *text)
{
    uint32_t s = gr_feed(g, GR_START, (const uint8_t *)text, strlen(text), NULL);
    if (s == GR_DEAD)
        return -1;
    return gr_accepting(g, s);
}

static void test_json_sentences(void **state)
{
    (void)state;
    gr_gram_t *g = build(json_grammar, NULL);
    assert_int_equal(judge(g, "{\"a\": [1, 2.5e3, true, null, \"x\\n\"]}"), 1);
    assert_int_equal(judge(g, "  [ ]  "), 1);
    assert_int_equal(judge(g, "{\"a\":"), 0);
    assert_int_equal(judge(g, "[1,"), 0);
    assert_int_equal(judge(g, "[12"), 0); /* a prefix: "]" must come */
    assert_int_equal(judge(g, "12"), 1);          /* a number may end here */
    assert_int_equal(judge(g, "1 2"), -1);
    assert_int_equal(judge(g, "{\"a\" 1}"), -1);
    assert_int_equal(judge(g, "[1,]"), -1);
    assert_int_equal(judge(g, "tru"), 0);
    assert_int_equal(judge(g, "truex"), -1);
    assert_int_equal(judge(g, "\"\x01\""), -1);
    assert_int_equal(judge(g, ""), 0);
    size_t at = 0;
    assert_int_equal(gr_feed(g, GR_START, (const uint8_t *)"{\"a\" 1}", 7, &at), GR_DEAD);
    assert_int_equal(at, 5);
    gr_gram_free(g);
}

/* No recursion in the parser or the steps: 10,000 levels open and close. */
static void test_deep_nesting(void **state)
{
    (void)state;
    gr_gram_t *g = build(json_grammar, NULL);
    enum { DEPTH = 10000 };
    char *text = malloc(2 * DEPTH + 2);
    memset(text, '[', DEPTH);
    text[DEPTH] = '1';
    memset(text + DEPTH + 1, ']', DEPTH);
    text[2 * DEPTH + 1] = 0;
    assert_int_equal(judge(g, text), 1);
    text[2 * DEPTH] = 0;
    assert_int_equal(judge(g, text), 0);
    text[2 * DEPTH] = ']';
    text[2 * DEPTH + 1] = ']';
    uint32_t s = gr_feed(g, GR_START, (const uint8_t *)text, 2 * DEPTH + 2, NULL);
    assert_int_equal(s, GR_DEAD);
    free(text);
    gr_gram_free(g);
}

static void test_recursion_and_ambiguity(void **state)
{
    (void)state;
    /* ambiguous, left recursive */
    gr_gram_t *g = build("e: e \"+\" e | e \"*\" e | \"(\" e \")\" | /[0-9]+/\n", NULL);
    assert_int_equal(judge(g, "1+2*3"), 1);
    assert_int_equal(judge(g, "(1+2)*3+(4)"), 1);
    assert_int_equal(judge(g, "1+"), 0);
    assert_int_equal(judge(g, "1+*"), -1);
    assert_int_equal(judge(g, "((1)"), 0);
    assert_int_equal(judge(g, "(1))"), -1);
    gr_gram_free(g);
    /* right recursive */
    g = build("s: \"a\" s | \"b\"\n", NULL);
    assert_int_equal(judge(g, "aaab"), 1);
    assert_int_equal(judge(g, "aaa"), 0);
    assert_int_equal(judge(g, "aba"), -1);
    gr_gram_free(g);
    /* nullable rules, a nullable start */
    g = build("s: a b c\na: \"a\" | -\nb: \"b\" | -\nc: a b\n", NULL);
    assert_int_equal(judge(g, ""), 1);
    assert_int_equal(judge(g, "ab"), 1);
    assert_int_equal(judge(g, "b"), 1);
    assert_int_equal(judge(g, "abab"), 1);
    assert_int_equal(judge(g, "aa"), 1);
    assert_int_equal(judge(g, "abba"), -1);
    assert_int_equal(judge(g, "ababa"), -1);
    gr_gram_free(g);
}

/* Lexing is not greedy: "aa" may be two lexemes /a+/; a keyword and an
 * identifier overlap. */
static void test_overlapping_lexemes(void **state)
{
    (void)state;
    gr_gram_t *g = build("s: w w\nw: /a+/\n", NULL);
    assert_int_equal(judge(g, "a"), 0);
    assert_int_equal(judge(g, "aa"), 1);
    assert_int_equal(judge(g, "aaaa"), 1);
    gr_gram_free(g);
    g = build("s: stmt | s \";\" stmt\nstmt: \"if\" id | id \"=\" id\nid: /[a-z]+/\n"
              "%ignore /[\\x20]+/\n", NULL);
    assert_int_equal(judge(g, "if x"), 1);
    assert_int_equal(judge(g, "ifx = y"), 1);  /* "ifx" is an identifier */
    assert_int_equal(judge(g, "ifx"), 1);      /* ... or "if" "x" */
    assert_int_equal(judge(g, "if = x"), 1);   /* "if" is an identifier too */
    assert_int_equal(judge(g, "x = y; if z"), 1);
    assert_int_equal(judge(g, "x = "), 0);
    assert_int_equal(judge(g, "x y"), -1);
    gr_gram_free(g);
}

static void test_matcher(void **state)
{
    (void)state;
    gr_gram_t *g = build("s: \"{\"name\":\" /[\\x20]/ " STR " \"}\"\n", NULL);
    gr_matcher_t m;
    tb_err_t err;
    assert_int_equal(gr_matcher_init(&m, g, 64, &err), 0);
    tb_buf_t forced = {0};
    assert_int_equal(gr_matcher_forced(&m, 100, &forced, &err), 0);
    assert_int_equal(forced.len, 10);
    assert_memory_equal(forced.data, "{\"name\": \"", 10);
    size_t at = 0;
    assert_int_equal(gr_matcher_consume(&m, (const uint8_t *)"{\"na", 4, &at, &err), 0);
    assert_int_equal(gr_matcher_consume(&m, (const uint8_t *)"mx", 2, &at, &err), 1);
    assert_int_equal(at, 1);
    assert_int_equal(gr_matcher_tokens(&m), 1);
    assert_int_equal(gr_matcher_consume(&m, (const uint8_t *)"me\": \"Bo", 8, &at, &err), 0);
    assert_int_equal(gr_matcher_accepting(&m), 0);
    forced.len = 0;
    assert_int_equal(gr_matcher_forced(&m, 100, &forced, &err), 0);
    assert_int_equal(forced.len, 0); /* the string may go on or end */
    assert_int_equal(gr_matcher_consume(&m, (const uint8_t *)"b\"", 2, &at, &err), 0);
    forced.len = 0;
    assert_int_equal(gr_matcher_forced(&m, 100, &forced, &err), 0);
    assert_int_equal(forced.len, 1);
    assert_int_equal(forced.data[0], '}');
    assert_int_equal(gr_matcher_consume(&m, (const uint8_t *)"}", 1, &at, &err), 0);
    assert_int_equal(gr_matcher_accepting(&m), 1);
    assert_int_equal(gr_matcher_rollback(&m, 2), 0);
    assert_int_equal(gr_matcher_tokens(&m), 2);
    assert_int_equal(gr_matcher_accepting(&m), 0);
    assert_int_equal(gr_matcher_rollback(&m, 3), -1);
    assert_int_equal(gr_matcher_consume(&m, (const uint8_t *)"\"}", 2, &at, &err), 0);
    assert_int_equal(gr_matcher_accepting(&m), 1);
    tb_buf_free(&forced);
    gr_matcher_free(&m);
    gr_gram_free(g);
}

/* A text of n array elements (each a small object, or an object nested
 * depth deep), malloc'd. */
static char *json_list(size_t n, size_t depth, size_t *len)
{
    size_t cap = n * (40 + 7 * depth) + 3, at = 0;
    char *t = malloc(cap);
    t[at++] = '[';
    for (size_t i = 0; i < n; i++) {
        if (i)
            t[at++] = ',';
        if (!depth) {
            at += (size_t)sprintf(t + at, "{\"id\": %zu, \"name\": \"i%zu\"}", i, i);
            continue;
        }
        for (size_t d = 0; d < depth; d++)
            at += (size_t)sprintf(t + at, "{\"a\": ");
        at += (size_t)sprintf(t + at, "%zu", i);
        memset(t + at, '}', depth);
        at += depth;
    }
    t[at++] = ']';
    t[at] = 0;
    *len = at;
    return t;
}

/* A list's rows repeat from its second element on, so a long array goes
 * through under a state limit a few of its elements would pass before
 * rows dropped their completed items; nested elements need states for
 * their depth, once.  Left recursion (the lists above, Lark's and GBNF's
 * repetitions) stays flat; a right-recursive list is nesting to the
 * parser and grows. */
static void test_long_texts(void **state)
{
    (void)state;
    gr_opts_t o = {.max_states = 256};
    gr_gram_t *g = build(json_grammar, &o);
    size_t len;
    char *text = json_list(100000, 0, &len); /* 3.3 MB */
    uint32_t s = gr_feed(g, GR_START, (const uint8_t *)text, len / 2, NULL);
    size_t half = gr_nstates(g), rows = g->parser.rows.len;
    s = gr_feed(g, s, (const uint8_t *)text + len / 2, len - len / 2, NULL);
    assert_int_not_equal(s, GR_DEAD);
    assert_int_equal(gr_accepting(g, s), 1);
    assert_true(gr_nstates(g) <= half + 2); /* the end's states */
    assert_int_equal(g->parser.rows.len, rows + 1);
    free(text);
    gr_gram_free(g);

    g = build(json_grammar, NULL);
    text = json_list(2, 1000, &len);
    s = gr_feed(g, GR_START, (const uint8_t *)text, len / 2, NULL);
    size_t one = gr_nstates(g);
    assert_true(one > 1000); /* a state per level at least */
    free(text);
    text = json_list(200, 1000, &len);
    s = gr_feed(g, GR_START, (const uint8_t *)text, len, NULL);
    assert_int_equal(gr_accepting(g, s), 1);
    assert_true(gr_nstates(g) < 2 * one);
    free(text);
    gr_gram_free(g);

    g = build("s: \"[\" l \"]\"\nl: /[0-9]/ | /[0-9]/ \",\" l\n", NULL);
    s = gr_feed(g, GR_START, (const uint8_t *)"[1,2,3,4,5,6,7,8,9", 18, NULL);
    size_t nine = gr_nstates(g);
    s = gr_feed(g, s, (const uint8_t *)",1,2,3,4,5,6,7,8,9", 18, NULL);
    assert_true(gr_nstates(g) > nine + 9);
    gr_gram_free(g);
}

/* gr_matcher_keep bounds the history: rollback within it returns to the
 * states a matcher keeping everything returns to; beyond it is refused. */
static void test_matcher_keep(void **state)
{
    (void)state;
    gr_gram_t *g = build(json_grammar, NULL);
    gr_matcher_t all, few;
    tb_err_t err;
    assert_int_equal(gr_matcher_init(&all, g, 64, &err), 0);
    assert_int_equal(gr_matcher_init(&few, g, 64, &err), 0);
    gr_matcher_keep(&few, 5);
    size_t len;
    char *text = json_list(300, 2, &len);
    size_t rolled = 0; /* the offset of the last rollback, not to loop */
    for (size_t i = 0; i < len; i += 3) {
        size_t n = len - i < 3 ? len - i : 3;
        assert_int_equal(gr_matcher_consume(&all, (const uint8_t *)text + i, n, NULL, &err), 0);
        assert_int_equal(gr_matcher_consume(&few, (const uint8_t *)text + i, n, NULL, &err), 0);
        assert_int_equal(gr_matcher_tokens(&few), gr_matcher_tokens(&all));
        assert_true(few.hist.len <= 11);
        if (i % 33 == 30 && i > rolled) {
            rolled = i;
            assert_int_equal(gr_matcher_rollback(&few, 5), 0);
            assert_int_equal(gr_matcher_rollback(&all, 5), 0);
            assert_int_equal(gr_matcher_state(&few), gr_matcher_state(&all));
            i -= 15;
        }
    }
    assert_int_equal(gr_matcher_accepting(&few), 1);
    assert_int_equal(gr_matcher_rollback(&few, 11), -1);
    assert_int_equal(gr_matcher_rollback(&all, 11), 0);
    free(text);
    gr_matcher_free(&all);
    gr_matcher_free(&few);
    gr_gram_free(g);
}

/* A grammar past its state or item limit fails with a message, and steps
 * after it are refused rather than wrong. */
static void test_limits(void **state)
{
    (void)state;
    gr_opts_t o = {.max_items = 200};
    gr_gram_t *g = build(json_grammar, &o);
    uint32_t s = gr_feed(g, GR_START, (const uint8_t *)"[[[[[[[[[[[[[[[[[[[[[[", 22, NULL);
    assert_int_equal(s, GR_DEAD);
    tb_err_t err;
    assert_int_equal(gr_gram_error(g, &err), -1);
    assert_non_null(strstr(err.msg, "more items than the limit"));
    assert_non_null(strstr(err.msg, "<test>"));
    gr_gram_free(g);
    o = (gr_opts_t){.max_states = 8};
    g = build(json_grammar, &o);
    s = gr_feed(g, GR_START, (const uint8_t *)"{\"a\": [1, 2]}", 13, NULL);
    assert_int_equal(s, GR_DEAD);
    assert_int_equal(gr_gram_error(g, &err), -1);
    assert_non_null(strstr(err.msg, "more states than the limit"));
    gr_gram_free(g);
}

/* gr_gram_reset drops what texts built (memory back to a fresh grammar's)
 * and clears a limit's sticky error; the language stays. */
static void test_reset(void **state)
{
    (void)state;
    gr_opts_t o = {.max_states = 16, .lexer = {.max_states = 64}};
    gr_gram_t *g = build(json_grammar, &o);
    size_t fresh = gr_gram_bytes(g);
    assert_false(gr_gram_lexer_half_full(g));
    const char *doc = "{\"a\": [1, 2.5e3, true, null, \"x\\n\"], \"b\": {\"c\": -0.5}}";
    assert_int_equal(judge(g, doc), -1); /* past the 16 states */
    tb_err_t err;
    assert_int_equal(gr_gram_error(g, &err), -1);
    assert_true(gr_gram_bytes(g) > fresh);
    assert_int_equal(gr_gram_reset(g, &err), 0);
    assert_int_equal(gr_gram_error(g, &err), 0);
    assert_int_equal(gr_gram_bytes(g), fresh);
    assert_int_equal(judge(g, "[1]"), 1);
    assert_int_equal(judge(g, "[1"), 0);
    gr_gram_free(g);
    /* a lexer of a few states fills past half with a long string */
    o = (gr_opts_t){.lexer = {.max_states = 12}};
    g = build("s: /a{1,30}/\n", &o);
    assert_false(gr_gram_lexer_half_full(g));
    assert_int_equal(judge(g, "aaaaaaaa"), 1);
    assert_true(gr_gram_lexer_half_full(g));
    assert_int_equal(gr_gram_reset(g, &err), 0);
    assert_false(gr_gram_lexer_half_full(g));
    gr_gram_free(g);
}

/* ---- masks over llama3 -------------------------------------------------------- */

static test_tries_t tries;

static int setup_tries(void **state)
{
    (void)state;
    return test_tries_load(&tries, LLAMA3);
}

static int teardown_tries(void **state)
{
    (void)state;
    test_tries_free(&tries);
    return 0;
}

/* Every layout's mask at the state after `after` equals feeding each
 * key's bytes from that state (aliases follow their primary id). */
static void check_masks(gr_gram_t *g, const char *after)
{
    tb_err_t err;
    uint32_t st = gr_feed(g, GR_START, (const uint8_t *)after, strlen(after), NULL);
    assert_int_not_equal(st, GR_DEAD);
    tb_bitset_t want, got;
    assert_int_equal(tb_bitset_init(&want, tries.keys.id_limit + 1), 0);
    assert_int_equal(tb_bitset_init(&got, tries.keys.id_limit + 1), 0);
    for (size_t i = 0; i < tries.keys.n; i++) {
        const trie_key_t *k = &tries.keys.keys[i];
        if (gr_feed(g, st, k->s, k->len, NULL) != GR_DEAD)
            tb_bitset_set(&want, k->id);
    }
    for (size_t i = 0; i < tries.keys.nalias; i++)
        if (tb_bitset_get(&want, tries.keys.alias[2 * i + 1]))
            tb_bitset_set(&want, tries.keys.alias[2 * i]);
    size_t allowed = tb_bitset_count(&want);
    for (size_t l = 0; l < tries.ntries; l++) {
        gr_rec_t rec;
        assert_int_equal(gr_rec_init(&rec, g, tries.keys.max_len, &err), 0);
        uint64_t nodes = 0;
        assert_int_equal(gr_mask(tries.tries[l], &rec, st, &got, &nodes, &err), 0);
        if (!tb_bitset_equal(&want, &got)) {
            print_message("layout %s after '%s': %zu allowed, %zu wanted\n", tries.names[l],
                          after, tb_bitset_count(&got), allowed);
            fail();
        }
        gr_rec_free(&rec);
    }
    tb_bitset_free(&want);
    tb_bitset_free(&got);
}

static void test_json_masks(void **state)
{
    (void)state;
    gr_gram_t *g = build(json_grammar, NULL);
    const char *afters[] = {"", "{", "{\"a\"", "{\"a\":", "{\"a\": \"x", "[1", "[1.5e",
                            "{\"a\": [true, nu", "[\"\\u00", "{\"k\": {\"j\": [[", "[1, "};
    for (size_t i = 0; i < sizeof afters / sizeof *afters; i++)
        check_masks(g, afters[i]);
    gr_gram_free(g);
}

/* The sliced mask equals the plain walk's, inside strings (every slice
 * taken whole) and elsewhere; the matcher masks through it too. */
static void test_sliced_masks(void **state)
{
    (void)state;
    tb_err_t err;
    gr_gram_t *g = build(json_grammar, NULL);
    lex_slicer_t *sl = lex_slicer_new(&tries.keys, trie_layout(tries.tries[0]), NULL, 0, &err);
    assert_non_null(sl);
    assert_int_equal(lex_slicer_bind(sl, g->dfa, &err), 0);
    gr_rec_t rec;
    assert_int_equal(gr_rec_init(&rec, g, tries.keys.max_len, &err), 0);
    tb_bitset_t plain, sliced;
    assert_int_equal(tb_bitset_init(&plain, trie_mask_bits(tries.tries[0])), 0);
    assert_int_equal(tb_bitset_init(&sliced, trie_mask_bits(tries.tries[0])), 0);
    const char *afters[] = {"{\"a\": \"", "[\"x", "{\"a\": \"\\n", "", "{\"a\":", "[1"};
    for (size_t i = 0; i < sizeof afters / sizeof *afters; i++) {
        uint32_t st = gr_feed(g, GR_START, (const uint8_t *)afters[i], strlen(afters[i]), NULL);
        lex_slice_stats_t ss;
        assert_int_equal(gr_mask(tries.tries[0], &rec, st, &plain, NULL, &err), 0);
        /* with the whole trie, a state where no slice is whole walks it once */
        for (int with_all = 0; with_all < 2; with_all++) {
            const trie_t *all = with_all ? tries.tries[0] : NULL;
            assert_int_equal(gr_mask_sliced(sl, &rec, st, all, &sliced, &ss, &err), 0);
            assert_true(tb_bitset_equal(&plain, &sliced));
            if (i < 3) /* inside a string: every slice is taken whole */
                assert_int_equal(ss.walked, 0);
        }
    }
    gr_matcher_t m;
    assert_int_equal(gr_matcher_init(&m, g, tries.keys.max_len, &err), 0);
    assert_int_equal(gr_matcher_use_slicer(&m, sl, &err), 0);
    assert_int_equal(gr_matcher_consume(&m, (const uint8_t *)"[\"", 2, NULL, &err), 0);
    assert_int_equal(gr_matcher_mask(&m, NULL, &sliced, NULL, &err), 0);
    uint32_t st = gr_feed(g, GR_START, (const uint8_t *)"[\"", 2, NULL);
    assert_int_equal(gr_mask(tries.tries[0], &rec, st, &plain, NULL, &err), 0);
    assert_true(tb_bitset_equal(&plain, &sliced));
    gr_matcher_free(&m);
    tb_bitset_free(&plain);
    tb_bitset_free(&sliced);
    gr_rec_free(&rec);
    lex_slicer_free(sl);
    gr_gram_free(g);
}

/* Masks taken through a matcher's cache (maskcache.h) equal the walked
 * ones at every byte of a text, three times over: kept ones (a state is
 * kept on its second miss; a string's body reaches one state again and
 * again; as the words that differ from zeros), after flushes (a cache
 * smaller than a few masks, where a mask past the first is kept in a
 * smaller form), never kept (smaller than one), after the grammar's reset
 * renumbered its states, and through a slicer, whose union of slices is
 * the base masks inside strings are kept against. */
static void test_mask_cache(void **state)
{
    (void)state;
    tb_err_t err;
    gr_gram_t *g = build(json_grammar, NULL);
    const trie_t *t = tries.tries[0];
    size_t nbits = trie_mask_bits(t);
    lex_slicer_t *sl = lex_slicer_new(&tries.keys, trie_layout(t), NULL, 0, &err);
    assert_non_null(sl);
    const char *doc = "{\"text\": \"a long string of words, one after another\", "
                      "\"n\": [1, 22, 333], \"o\": {\"p\": \"q\"}}";
    /* default, a few masks, none, default (the reset), default (sliced) */
    size_t caps[5] = {0, 3 * (nbits / 8 + 64), 64, 0, 0};
    tb_bitset_t walked, cached;
    assert_int_equal(tb_bitset_init(&walked, nbits), 0);
    assert_int_equal(tb_bitset_init(&cached, nbits), 0);
    for (int round = 0; round < 5; round++) {
        gr_maskcache_t c;
        gr_maskcache_init(&c, g, nbits, caps[round]);
        for (int pass = 0; pass < 3; pass++) {
            if (round == 3 && pass == 2)
                assert_int_equal(gr_gram_reset(g, &err), 0); /* state ids start over */
            gr_matcher_t plain, m;
            assert_int_equal(gr_matcher_init(&plain, g, tries.keys.max_len, &err), 0);
            assert_int_equal(gr_matcher_init(&m, g, tries.keys.max_len, &err), 0);
            if (round == 4)
                assert_int_equal(gr_matcher_use_slicer(&m, sl, &err), 0);
            gr_matcher_use_cache(&m, &c);
            for (size_t i = 0; i <= strlen(doc); i++) {
                uint64_t hits = c.stats.hits;
                assert_int_equal(gr_matcher_mask(&plain, t, &walked, NULL, &err), 0);
                assert_int_equal(gr_matcher_mask(&m, t, &cached, NULL, &err), 0);
                /* the start's mask, kept in pass 1, is there in pass 2, unless
                 * flushed, never kept, or gone with the reset */
                if (pass == 2 && i == 0 && round != 1)
                    assert_int_equal(c.stats.hits - hits, round == 0 || round == 4 ? 1 : 0);
                if (!tb_bitset_equal(&walked, &cached)) {
                    print_message("round %d pass %d: the mask after %zu bytes differs\n",
                                  round, pass, i);
                    fail();
                }
                if (i < strlen(doc)) {
                    const uint8_t *b = (const uint8_t *)doc + i;
                    assert_int_equal(gr_matcher_consume(&plain, b, 1, NULL, &err), 0);
                    assert_int_equal(gr_matcher_consume(&m, b, 1, NULL, &err), 0);
                }
            }
            gr_matcher_free(&plain);
            gr_matcher_free(&m);
        }
        size_t n = strlen(doc) + 1;
        assert_int_equal(c.stats.hits + c.stats.misses, 3 * n);
        if (round == 0 || round == 4) /* the string's body, and the whole third pass */
            assert_true(c.stats.hits > n + 20);
        if (round == 1)
            assert_true(c.stats.flushes > 0 && c.stats.hits > 0);
        if (round == 2)
            assert_int_equal(c.stats.hits, 0);
        /* only masks walked through the slicer have a base */
        assert_true(round == 4 ? c.stats.against_base > 0 : c.stats.against_base == 0);
        gr_maskcache_free(&c);
    }
    tb_bitset_free(&walked);
    tb_bitset_free(&cached);
    lex_slicer_free(sl);
    gr_gram_free(g);
}

static void test_ambiguous_masks(void **state)
{
    (void)state;
    gr_gram_t *g = build("e: e \"+\" e | e \"*\" e | \"(\" e \")\" | /[0-9]+/ | id\n"
                         "id: /[a-z]+/ | \"if\"\n%ignore /[\\x20]+/\n", NULL);
    const char *afters[] = {"", "(", "1 + ", "(a", "if", "(1+2)*"};
    for (size_t i = 0; i < sizeof afters / sizeof *afters; i++)
        check_masks(g, afters[i]);
    gr_gram_free(g);
}

int main(void)
{
    const struct CMUnitTest unit[] = {
        cmocka_unit_test(test_json_sentences),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_recursion_and_ambiguity),
        cmocka_unit_test(test_overlapping_lexemes),
        cmocka_unit_test(test_matcher),
        cmocka_unit_test(test_long_texts),
        cmocka_unit_test(test_matcher_keep),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_reset),
    };
    const struct CMUnitTest masks[] = {
        cmocka_unit_test(test_json_masks),
        cmocka_unit_test(test_ambiguous_masks),
        cmocka_unit_test(test_sliced_masks),
        cmocka_unit_test(test_mask_cache),
    };
    int rc = cmocka_run_group_tests_name("grammar", unit, NULL, NULL);
    return rc | cmocka_run_group_tests_name("grammar masks", masks, setup_tries,
                                            teardown_tries);
}
