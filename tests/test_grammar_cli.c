/*
 * Tests of `tokbench mask --grammar` and `tokbench accept` on llama3: the
 * ids --ids prints are the library's mask, the figures lines are there,
 * accept's verdicts and exit statuses, and bad input (a grammar with a
 * syntax error, an unknown format, an --after text the grammar refuses, a
 * missing file) fails with a message naming the file, line and column or
 * the byte offset, and a non-zero status.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../grammar/load.h"
#include "../grammar/match.h"
#include "support.h"

#define LLAMA3 "data/cache/llama3/tokenizer.json"
#define JSON_LARK "experiments/grammars/json.lark"

static char out[1 << 21];

static void test_ids_are_the_library_mask(void **state)
{
    (void)state;
    tb_err_t err;
    tok_tokenizer_t *tok = test_load(LLAMA3);
    trie_keys_t keys;
    assert_int_equal(trie_keys_from_vocab(&keys, tok_vocab(tok), TRIE_SPECIALS_OMIT, &err), 0);
    trie_t *t = trie_build(&trie_layout_dfs, &keys, &err);
    gr_cfg_t cfg;
    assert_int_equal(gr_cfg_load(&cfg, JSON_LARK, NULL, &err), 0);
    gr_gram_t *g = gr_gram_new(&cfg, NULL, &err);
    gr_rec_t rec;
    assert_int_equal(gr_rec_init(&rec, g, keys.max_len, &err), 0);
    tb_bitset_t mask;
    assert_int_equal(tb_bitset_init(&mask, trie_mask_bits(t)), 0);
    const char *after = "{\"a\": [1, ";
    uint32_t st = gr_feed(g, GR_START, (const uint8_t *)after, strlen(after), NULL);
    assert_int_equal(gr_mask(t, &rec, st, &mask, NULL, &err), 0);

    assert_int_equal(test_tokbench_mask(LLAMA3 " --grammar " JSON_LARK
                                        " --after '{\"a\": [1, ' --ids --reps 1", out,
                                        sizeof out), 0);
    size_t n = 0;
    for (char *line = out; *line; n++) {
        char *end;
        unsigned long id = strtoul(line, &end, 10);
        assert_true(end > line && *end == '\n');
        assert_true(tb_bitset_get(&mask, id));
        line = end + 1;
    }
    assert_int_equal(n, tb_bitset_count(&mask));
    tb_bitset_free(&mask);
    gr_rec_free(&rec);
    gr_gram_free(g);
    trie_free(t);
    trie_keys_free(&keys);
    tok_free(tok);
}

static void test_mask_report(void **state)
{
    (void)state;
    assert_int_equal(test_tokbench_mask(LLAMA3 " --grammar " JSON_LARK
                                        " --after '{\"a\": \"' --reps 3 --slicer default",
                                        out, sizeof out), 0);
    assert_non_null(strstr(out, "grammar    " JSON_LARK));
    assert_non_null(strstr(out, "parser     cold mask: "));
    assert_non_null(strstr(out, "parser     warm masks: 0 table entries computed"));
    assert_non_null(strstr(out, "3 slices taken whole, 0 walked"));
    assert_non_null(strstr(out, "mask equals the plain walk's"));
    assert_int_equal(test_tokbench_mask(LLAMA3 " --grammar experiments/grammars/json.gbnf "
                                        "--after '{\"a\": {\"b\": ' --reps 1", out, sizeof out), 0);
    assert_non_null(strstr(out, "grammar    experiments/grammars/json.gbnf"));
}

static void test_accept(void **state)
{
    (void)state;
    assert_int_equal(test_tokbench("accept " LLAMA3 " --grammar " JSON_LARK
                                   " '{\"a\": [1, 2.5e3, \"x\"], \"b\": null}' --masks",
                                   out, sizeof out), 0);
    assert_non_null(strstr(out, "the text is a sentence"));
    assert_non_null(strstr(out, "masks      "));
    assert_int_equal(test_tokbench("accept " LLAMA3 " --grammar " JSON_LARK " '{\"a\": [1'",
                                   out, sizeof out), 3);
    assert_non_null(strstr(out, "a prefix of a sentence, not a sentence"));
    /* " 1" after the key: the token ' ' is fine, '1' is not */
    assert_int_equal(test_tokbench("accept " LLAMA3 " --grammar " JSON_LARK " '{\"a\" 1}'",
                                   out, sizeof out), 3);
    assert_non_null(strstr(out, "refused    token #"));
    assert_non_null(strstr(out, "at byte 5 of the text"));
    assert_int_equal(test_tokbench("accept " LLAMA3 " --grammar experiments/grammars/json.gbnf"
                                   " '{\"a\": 1 '", out, sizeof out), 3);
    assert_non_null(strstr(out, "accepted   all"));
    /* --start: json.lark's rule array as the start, and no such rule */
    assert_int_equal(test_tokbench("accept " LLAMA3 " --grammar " JSON_LARK " --start array"
                                   " '[1, {}]'", out, sizeof out), 0);
    assert_int_equal(test_tokbench("accept " LLAMA3 " --grammar " JSON_LARK " --start array"
                                   " '{}'", out, sizeof out), 3);
    assert_int_equal(test_tokbench("accept " LLAMA3 " --grammar " JSON_LARK " --start arr '[]'",
                                   out, sizeof out), 1);
    assert_non_null(strstr(out, "no rule 'arr' (the start rule)"));
    assert_int_equal(test_tokbench("accept " LLAMA3 " --grammar experiments/grammars/json.gbnf"
                                   " --start root '1'", out, sizeof out), 1);
    assert_non_null(strstr(out, "a start rule can be named for a Lark grammar only"));
}

/* Writes text to dir/name, its path into path. */
static void write_grammar(const char *dir, const char *name, const char *text, char *path,
                          size_t size)
{
    snprintf(path, size, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_bad_input(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_grammar_cli.XXXXXX", path[256], args[512];
    test_tmpdir(dir);
    write_grammar(dir, "bad.lark", "start: value\nvalue: \"a\" | (\"b\"\n", path, sizeof path);
    snprintf(args, sizeof args, LLAMA3 " --grammar %s", path);
    assert_int_equal(test_tokbench_mask(args, out, sizeof out), 1);
    assert_non_null(strstr(out, path));
    assert_non_null(strstr(out, "bad.lark:3:1: expected ')'"));
    snprintf(args, sizeof args, LLAMA3 " --grammar %s --format yaml", path);
    assert_int_equal(test_tokbench_mask(args, out, sizeof out), 1);
    assert_non_null(strstr(out, "yaml"));
    assert_int_equal(test_tokbench_mask(LLAMA3 " --grammar " JSON_LARK " --after '{\"a\" 1'",
                                        out, sizeof out), 1);
    assert_non_null(strstr(out, "refused at byte 5"));
    assert_int_equal(test_tokbench_mask(LLAMA3 " --grammar /nonexistent/g.lark", out,
                                        sizeof out), 1);
    assert_non_null(strstr(out, "/nonexistent/g.lark"));
    assert_int_equal(test_tokbench("accept " LLAMA3 " --grammar " JSON_LARK " -f /nonexistent",
                                   out, sizeof out), 1);
    assert_non_null(strstr(out, "/nonexistent"));
    assert_int_equal(test_tokbench("accept " LLAMA3, out, sizeof out), 2);
    const char *names[] = {"bad.lark"};
    test_rmdir(dir, names, 1);
}

/* --semantics: `aa` is A then B by default, one A under llguidance's
 * greedy lexer (docs/grammars.md), which %llguidance asks for itself. */
static void test_semantics(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_grammar_cli.XXXXXX", path[256], args[512];
    test_tmpdir(dir);
    write_grammar(dir, "ab.lark", "start: A B\nA: /a+/\nB: /a/\n", path, sizeof path);
    snprintf(args, sizeof args, "accept " LLAMA3 " --grammar %s aa", path);
    assert_int_equal(test_tokbench(args, out, sizeof out), 0);
    snprintf(args, sizeof args, "accept " LLAMA3 " --grammar %s --semantics llguidance aa", path);
    assert_int_equal(test_tokbench(args, out, sizeof out), 3);
    assert_non_null(strstr(out, "a prefix of a sentence, not a sentence"));
    snprintf(args, sizeof args, LLAMA3 " --grammar %s --semantics llguidance --after a", path);
    assert_int_equal(test_tokbench_mask(args, out, sizeof out), 0);
    assert_non_null(strstr(out, "; llguidance's semantics"));
    snprintf(args, sizeof args, "accept " LLAMA3 " --grammar %s --semantics greedy aa", path);
    assert_int_equal(test_tokbench(args, out, sizeof out), 2);
    assert_non_null(strstr(out, "--semantics takes default, llguidance or lark, not 'greedy'"));
    write_grammar(dir, "ab.lark", "%llguidance {}\nstart: A B\nA: /a+/\nB: /a/\n", path,
                  sizeof path);
    snprintf(args, sizeof args, "accept " LLAMA3 " --grammar %s aa", path);
    assert_int_equal(test_tokbench(args, out, sizeof out), 3);
    snprintf(args, sizeof args, "accept " LLAMA3 " --grammar %s --semantics default aa", path);
    assert_int_equal(test_tokbench(args, out, sizeof out), 0);
    /* a schema too: llguidance reads 1.0 as no integer */
    write_grammar(dir, "int.json", "{\"type\": \"integer\"}", path, sizeof path);
    snprintf(args, sizeof args, "accept " LLAMA3 " --grammar %s --format schema 1.0", path);
    assert_int_equal(test_tokbench(args, out, sizeof out), 0);
    snprintf(args, sizeof args,
             "accept " LLAMA3 " --grammar %s --format schema --semantics llguidance 1.0", path);
    assert_int_not_equal(test_tokbench(args, out, sizeof out), 0);
    assert_non_null(strstr(out, "refused"));
    const char *names[] = {"ab.lark", "int.json"};
    test_rmdir(dir, names, 2);
}

/* A grammar with special tokens: its ids are llama3's, --ids prints
 * exactly them where only they may come, accept reads them by id (with
 * --masks each in its mask), and one the vocabulary lacks is named. */
static void test_special_tokens(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_grammar_cli.XXXXXX", path[256], args[512];
    test_tmpdir(dir);
    write_grammar(dir, "sp.lark",
                  "start: hd /[a-z ]*/ <|eot_id|>\nhd: <|start_header_id|> | <|end_header_id|>\n",
                  path, sizeof path);
    tok_tokenizer_t *tok = test_load(LLAMA3);
    const tok_vocab_t *v = tok_vocab(tok);
    snprintf(args, sizeof args, LLAMA3 " --grammar %s --ids --reps 1", path);
    assert_int_equal(test_tokbench_mask(args, out, sizeof out), 0);
    size_t n = 0;
    for (char *line = out; *line; n++) {
        char *end;
        unsigned long id = strtoul(line, &end, 10);
        assert_true(end > line && *end == '\n' && id < v->size && v->special[id]);
        size_t len;
        const uint8_t *s = tok_vocab_token(v, (uint32_t)id, &len);
        assert_true((len == 19 && !memcmp(s, "<|start_header_id|>", len)) ||
                    (len == 17 && !memcmp(s, "<|end_header_id|>", len)));
        line = end + 1;
    }
    assert_int_equal(n, 2);
    snprintf(args, sizeof args, "accept " LLAMA3 " --grammar %s --masks "
             "'<|start_header_id|>hello world<|eot_id|>'", path);
    assert_int_equal(test_tokbench(args, out, sizeof out), 0);
    assert_non_null(strstr(out, "the text is a sentence"));
    snprintf(args, sizeof args, "accept " LLAMA3 " --grammar %s '<|eot_id|>hello'", path);
    assert_int_equal(test_tokbench(args, out, sizeof out), 3);
    assert_non_null(strstr(out, "refused    token #0"));
    write_grammar(dir, "sp.lark", "start: \"a\" <|im_end|>\n", path, sizeof path);
    snprintf(args, sizeof args, "accept " LLAMA3 " --grammar %s a", path);
    assert_int_equal(test_tokbench(args, out, sizeof out), 1);
    assert_non_null(strstr(out, "sp.lark:1:12: special token <|im_end|>: unknown special token"));
    tok_free(tok);
    const char *names[] = {"sp.lark"};
    test_rmdir(dir, names, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids_are_the_library_mask),
        cmocka_unit_test(test_mask_report),
        cmocka_unit_test(test_accept),
        cmocka_unit_test(test_semantics),
        cmocka_unit_test(test_special_tokens),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests_name("grammar commands", tests, NULL, NULL);
}
