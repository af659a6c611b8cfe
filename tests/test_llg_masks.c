/*
 * Grammar masks against llguidance's, live, on llguidance's own test
 * grammars (experiments/refs/llgmasks.h): every grammar its tests load
 * that loads here is run on its passing strings, tokenized by Llama 3,
 * and tokbench's mask compared with llguidance's before every token.  Each
 * differing token must have a cause (xgdiff.h): llguidance's end-of-text
 * token, bytes that are not UTF-8, greedy lexing, and on %json grammars
 * the JSON Schema causes; any other fails, naming the grammar, the text
 * and the token.  The figures (grammars, masks, differences by cause, the
 * time taken) are printed.  tokbench reads them under llguidance's
 * semantics (--semantics llguidance), so greedy lexing and ignored text
 * before the first lexeme must explain nothing: a grammar of our own,
 * where the default reading allows what llguidance's greedy lexer
 * refuses, runs with them to show it.  Skips, saying why, without llguidance's
 * sources in ../shared or its reference build (`make llguidance-ref`).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../experiments/refs/llgmasks.h"
#include "../grammar/load.h"
#include "support.h"

#define LLAMA3 "data/cache/llama3/tokenizer.json"
#define LLG_TESTS "../shared/llguidance/llguidance/parser/tests/test_lark.rs"
#define LLG_PROG "build/llguidance/target/release/tb-llguidance"
/* A then B where A may go on into B ("aab": A = "a", B = "ab"). */
#define GREEDY_LARK "start: A B\nA: /a+/\nB: \"ab\"\n%ignore \" \"\n"

typedef struct {
    size_t by[XP_LLG_N], steps, equal, counts[XP_XG_CAUSES], strings, agree;
} tally_t;

static int on_grammar(void *ctx, const xp_llg_grammar_t *g, tb_err_t *err)
{
    (void)err;
    tally_t *t = ctx;
    t->by[g->verdict]++;
    t->steps += g->steps;
    t->equal += g->equal;
    t->strings += g->strings;
    t->agree += g->agree;
    for (int k = 0; k < XP_XG_CAUSES; k++)
        t->counts[k] += g->counts[k];
    if (g->verdict == XP_LLG_UNEXPLAINED || g->verdict == XP_LLG_REF_FAILED ||
        getenv("TB_LLG_VERBOSE"))
        print_message("%s: %s, %zu of %zu masks equal; %s\n", g->where,
                      xp_llg_verdicts[g->verdict], g->equal, g->steps, g->detail);
    return 0;
}

static void test_llg_masks(void **state)
{
    (void)state;
    if (access(LLG_TESTS, R_OK) || access(LLG_PROG, X_OK)) {
        print_message("skipped: no %s\n", access(LLG_TESTS, R_OK)
                                              ? LLG_TESTS " (llguidance's sources in ../shared)"
                                              : LLG_PROG " (make llguidance-ref)");
        skip();
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char dir[] = "/tmp/tb-llgmasks-XXXXXX", cases[64], cmd[256];
    test_tmpdir(dir);
    snprintf(cases, sizeof cases, "%s/cases.txt", dir);
    snprintf(cmd, sizeof cmd, "python3 scripts/extract-llg-tests.py ../shared/llguidance %s "
             "2>/dev/null", cases);
    assert_int_equal(system(cmd), 0);
    /* one grammar of our own where greedy lexing shows: llguidance takes
     * "aa" as one A and refuses the "b" tokbench's default reading allows */
    static const char GREEDY[] = GREEDY_LARK;
    FILE *f = fopen(cases, "a");
    assert_non_null(f);
    fprintf(f, "case test_llg_masks.c:greedy lark_str_test\ngrammar %zu\n%s\npass 3\naab\nend\n",
            sizeof GREEDY - 1, GREEDY);
    assert_int_equal(fclose(f), 0);
    tb_err_t err = {{0}};
    tok_tokenizer_t *tok = test_load(LLAMA3);
    trie_keys_t keys;
    trie_t *trie = NULL;
    gr_cfg_t cfg;
    gr_gram_t *json = NULL;
    if (trie_keys_from_vocab(&keys, tok_vocab(tok), TRIE_SPECIALS_OMIT, &err) ||
        !(trie = trie_build(&trie_layout_dfs, &keys, &err)) ||
        gr_cfg_load(&cfg, "experiments/grammars/json.lark", "lark", &err) ||
        !(json = gr_gram_new(&cfg, NULL, &err)))
        fail_msg("%s", err.msg);
    xp_llg_run_t run = {.cases = cases, .prog = LLG_PROG, .dir = dir, .tok = tok, .trie = trie,
                        .max_len = keys.max_len, .timeout = 30, .json = json};
    tally_t t = {0};
    if (xp_llg_masks(&run, on_grammar, &t, &err))
        fail_msg("%s", err.msg);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    size_t grammars = 0, compared = t.by[XP_LLG_SAME] + t.by[XP_LLG_EXPLAINED] +
                                    t.by[XP_LLG_UNEXPLAINED];
    for (int v = 0; v < XP_LLG_N; v++)
        grammars += t.by[v];
    print_message("llguidance's test grammars: %zu; masks compared on %zu (%zu steps, %zu "
                  "equal), %.1f s\n", grammars, compared, t.steps, t.equal,
                  (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    for (int v = 0; v < XP_LLG_N; v++)
        print_message("  %-24s %zu grammars\n", xp_llg_verdicts[v], t.by[v]);
    print_message("  strings of grammars loaded here: %zu, verdict as llguidance's test "
                  "wants %zu\n", t.strings, t.agree);
    for (int k = 0; k < XP_XG_CAUSES; k++)
        if (t.counts[k])
            print_message("  differing tokens, %-28s %zu\n", xp_xg_cause_names[k], t.counts[k]);
    test_rm_tree(dir);
    gr_gram_free(json);
    trie_free(trie);
    trie_keys_free(&keys);
    tok_free(tok);
    assert_true(compared > 0);
    assert_int_equal(t.counts[XP_XG_GREEDY], 0);
    assert_int_equal(t.counts[XP_XG_LEADING], 0);
    assert_int_equal(t.by[XP_LLG_UNEXPLAINED], 0);
    assert_int_equal(t.by[XP_LLG_REF_FAILED], 0);
}

/* The cause xgdiff gives a token of Llama 3 that tokbench alone allows
 * after `after` on a Lark grammar, llguidance being the other engine. */
static xp_xg_cause_t cause_of(tok_tokenizer_t *tok, const trie_t *trie, const char *grammar,
                              const char *after, const char *token)
{
    gr_cfg_t cfg;
    tb_err_t err;
    if (gr_cfg_parse(&cfg, grammar, strlen(grammar), "g.lark", "lark", &err))
        fail_msg("%s", err.msg);
    gr_gram_t *g = gr_gram_new(&cfg, NULL, &err);
    assert_non_null(g);
    int32_t id = trie_lookup(trie, (const uint8_t *)token, strlen(token));
    assert_true(id >= 0);
    xp_xg_ctx_t ctx = {.vocab = tok_vocab(tok), .trie = trie, .g = g, .llguidance = 1,
                       .ignores = strstr(grammar, "%ignore") != NULL};
    uint32_t st = gr_feed(g, GR_START, (const uint8_t *)after, strlen(after), NULL);
    assert_int_not_equal(st, GR_DEAD);
    xp_xg_cause_t why = xp_xg_cause(&ctx, (const uint8_t *)after, strlen(after), st,
                                    (uint32_t)id, 1);
    gr_gram_free(g);
    return why;
}

/* Greedy lexing is the cause only where the text has two readings that
 * end a lexeme at different places: after "aa" under A: /a+/ then
 * B: "ab", tokbench reads A = "a", B = "ab" and allows "b", where a greedy
 * lexer has taken "aa" as A; after "x" in "x" "b" nothing is ambiguous.
 * %ignore keeps A and B apart: without it the reader merges the regular
 * rule into one lexeme, where the two readings are one lexer state, and a
 * greedy difference there would be left unexplained (and fail).  Before
 * any lexeme, a space is ignored text here, which llguidance refuses. */
static void test_greedy_cause(void **state)
{
    (void)state;
    tb_err_t err;
    tok_tokenizer_t *tok = test_load(LLAMA3);
    trie_keys_t keys;
    trie_t *trie = NULL;
    if (trie_keys_from_vocab(&keys, tok_vocab(tok), TRIE_SPECIALS_OMIT, &err) ||
        !(trie = trie_build(&trie_layout_dfs, &keys, &err)))
        fail_msg("%s", err.msg);
    assert_int_equal(cause_of(tok, trie, GREEDY_LARK, "aa", "b"), XP_XG_GREEDY);
    assert_int_equal(cause_of(tok, trie, GREEDY_LARK, "", " "), XP_XG_LEADING);
    assert_int_equal(cause_of(tok, trie, GREEDY_LARK, "a", " "), XP_XG_OURS);
    assert_int_equal(cause_of(tok, trie, "start: \"x\" \"b\"\n", "x", "b"), XP_XG_OURS);
    trie_free(trie);
    trie_keys_free(&keys);
    tok_free(tok);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_greedy_cause),
                                       cmocka_unit_test(test_llg_masks)};
    return cmocka_run_group_tests_name("grammar masks against llguidance", tests, NULL, NULL);
}
