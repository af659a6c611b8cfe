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
 * refuses, runs with them to show it.  Special tokens (token-id lexemes)
 * are compared on grammars of our own after llguidance's test_ll.rs
 * traces, every id of every mask, since its test_lark.rs grammars with
 * them have no string.  Skips, saying why, without llguidance's sources in
 * ../shared or its reference build (`make llguidance-ref`).
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

#include <jansson.h>

#include "../experiments/refs/llgmasks.h"
#include "../grammar/load.h"
#include "../grammar/match.h"
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

/* ---- special tokens, live ---- */

/* Grammars with special tokens (llguidance's test_ll.rs traces, named as
 * Llama 3's tokens) and a text for each: pieces between '~' are a special
 * token's name where they start with '<', else text tokenized. */
static const struct {
    const char *lark, *text;
} SPECIAL[] = {
    {"start: <|start_header_id|> /[a-z ]*/\n", "<|start_header_id|>~hello world"},
    {"start: hd /[a-z ]*/\nhd: <|start_header_id|> | <|end_header_id|>\n",
     "<|end_header_id|>~foo bar"},
    {"start: /[a-z ]*/ <|eot_id|>\n", "foo bar~<|eot_id|>"},
    {"start: (\"a\" <|eot_id|>)+ \"b\"\n", "a~<|eot_id|>~a~<|eot_id|>~b"},
    {"start: <[128000-128010]> /[a-z]+/\n", "<|eot_id|>~abc"},
    {"start: <[^128000-128255]> \"x\"\n", "y~x"},
};

/* The ids of SPECIAL[i]'s text over tok, into ids. */
static void special_ids(tok_tokenizer_t *tok, const char *text, tok_ids_t *ids)
{
    const tok_vocab_t *v = tok_vocab(tok);
    tb_err_t err;
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "~");
        if (*p == '<') {
            assert_int_equal(tb_vec_push(ids, test_special_id(v, p, n)), 0);
        } else if (tok_encode(tok, (const uint8_t *)p, n, ids, &err)) {
            fail_msg("%s", err.msg);
        }
        p += n + (p[n] == '~');
    }
}

/* llguidance's masks (one output line) against tokbench's matcher over
 * the same ids: every id equal, the end-of-text token allowed by
 * llguidance also where tokbench's text may end. */
static void compare_special(size_t i, json_t *line, tok_tokenizer_t *tok, const trie_t *trie,
                            size_t max_len, size_t *masks)
{
    const tok_vocab_t *v = tok_vocab(tok);
    tb_err_t err;
    gr_cfg_t cfg;
    gr_load_opts_t o = {.format = "lark", .semantics = 1 + GR_SEM_LLGUIDANCE, .vocab = v};
    if (gr_cfg_parse_opts(&cfg, SPECIAL[i].lark, strlen(SPECIAL[i].lark), "g.lark", &o, &err))
        fail_msg("%s", err.msg);
    gr_gram_t *g = gr_gram_new(&cfg, NULL, &err);
    gr_matcher_t m;
    assert_non_null(g);
    assert_int_equal(gr_matcher_init(&m, g, max_len, &err), 0);
    const char *outcome = json_string_value(json_object_get(line, "outcome"));
    if (!outcome || strcmp(outcome, "pass"))
        fail_msg("%s: llguidance: %s", SPECIAL[i].lark, json_dumps(line, 0));
    json_t *in = json_array_get(json_object_get(line, "instances"), 0);
    json_t *hexes = json_object_get(in, "masks"), *ids = json_object_get(in, "ids");
    tb_bitset_t ours, theirs;
    assert_int_equal(tb_bitset_init(&ours, trie_mask_bits(trie)), 0);
    assert_int_equal(tb_bitset_init(&theirs, v->size), 0);
    for (size_t k = 0; k < json_array_size(hexes); k++) {
        const char *hex = json_string_value(json_array_get(hexes, k));
        if (!hex || xp_xg_read_hex(hex, &theirs, &err) ||
            gr_matcher_mask(&m, trie, &ours, NULL, &err))
            fail_msg("%s", err.msg);
        for (uint32_t id = 0; id < v->size; id++) {
            int here = tb_bitset_get(&ours, id) ||
                       (id == (uint32_t)v->eos && gr_matcher_accepting(&m));
            if (here != tb_bitset_get(&theirs, id))
                fail_msg("%s%s: before token %zu, id %u allowed by %s only", SPECIAL[i].lark,
                         SPECIAL[i].text, k, id, here ? "tokbench" : "llguidance");
        }
        ++*masks;
        if (k < json_array_size(ids)) {
            uint32_t id = (uint32_t)json_integer_value(json_array_get(ids, k));
            size_t n;
            const uint8_t *s = tok_vocab_token(v, id, &n);
            assert_int_equal(gr_matcher_consume_id(&m, id, s, n, NULL, &err), 0);
        }
    }
    assert_true(gr_matcher_accepting(&m));
    tb_bitset_free(&ours);
    tb_bitset_free(&theirs);
    gr_matcher_free(&m);
    gr_gram_free(g);
}

/* Special tokens as llguidance masks them: SPECIAL's grammars run by
 * tb-llguidance (Llama 3's vocabulary, its special tokens 0xFF-marked as
 * toktrie keeps them, so llguidance finds them by name) and by tokbench,
 * each mask before every token compared whole. */
static void test_special_live(void **state)
{
    (void)state;
    if (access(LLG_PROG, X_OK)) {
        print_message("skipped: no " LLG_PROG " (make llguidance-ref)\n");
        skip();
    }
    char dir[] = "/tmp/tb-llgspecial-XXXXXX", tokens[64], jobs[64], out[64], cmd[512];
    test_tmpdir(dir);
    snprintf(tokens, sizeof tokens, "%s/tokens", dir);
    snprintf(jobs, sizeof jobs, "%s/jobs", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    tb_err_t err;
    tok_tokenizer_t *tok = test_load(LLAMA3);
    trie_keys_t keys;
    trie_t *trie = NULL;
    if (xp_llg_write_tokens(tok_vocab(tok), tokens, &err) ||
        trie_keys_from_vocab(&keys, tok_vocab(tok), TRIE_SPECIALS_OMIT, &err) ||
        !(trie = trie_build(&trie_layout_dfs, &keys, &err)))
        fail_msg("%s", err.msg);
    FILE *f = fopen(jobs, "w");
    assert_non_null(f);
    size_t n = sizeof SPECIAL / sizeof SPECIAL[0];
    for (size_t i = 0; i < n; i++) {
        tok_ids_t ids = {0};
        special_ids(tok, SPECIAL[i].text, &ids);
        json_t *arr = json_array();
        for (size_t k = 0; k < ids.len; k++)
            json_array_append_new(arr, json_integer(ids.data[k]));
        json_t *job = json_pack("{s:s, s:s, s:[{s:i, s:b, s:o}]}", "name", SPECIAL[i].text,
                                "lark", SPECIAL[i].lark, "instances", "index", 0, "valid", 1,
                                "ids", arr);
        char *line = json_dumps(job, JSON_COMPACT);
        fprintf(f, "%s\n", line);
        free(line);
        json_decref(job);
        free(ids.data);
    }
    assert_int_equal(fclose(f), 0);
    snprintf(cmd, sizeof cmd, LLG_PROG " maskbench --masks --tokens %s --eos %d %s > %s 2>/dev/null",
             tokens, tok_vocab(tok)->eos, jobs, out);
    assert_int_equal(system(cmd), 0);
    f = fopen(out, "r");
    assert_non_null(f);
    char *line = NULL;
    size_t cap = 0, i = 0, masks = 0;
    for (; getline(&line, &cap, f) > 0; i++) {
        json_error_t je;
        json_t *j = json_loads(line, 0, &je);
        assert_non_null(j);
        assert_true(i < n);
        compare_special(i, j, tok, trie, keys.max_len, &masks);
        json_decref(j);
    }
    free(line);
    fclose(f);
    assert_int_equal(i, n);
    print_message("special tokens: %zu grammars, %zu masks equal to llguidance's\n", n, masks);
    test_rm_tree(dir);
    trie_free(trie);
    trie_keys_free(&keys);
    tok_free(tok);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_greedy_cause),
                                       cmocka_unit_test(test_special_live),
                                       cmocka_unit_test(test_llg_masks)};
    return cmocka_run_group_tests_name("grammar masks against llguidance", tests, NULL, NULL);
}
