/*
 * Grammar masks against a second engine: XGrammar 0.1.27 (npm
 * @mlc-ai/web-xgrammar, WebAssembly, run by scripts/ref/xgrammar.js) on
 * Llama 3, for grammars whose lexing is unambiguous: JSON and arithmetic
 * in XGrammar's EBNF (experiments/grammars/xgrammar-*.ebnf), which
 * tokbench reads as GBNF, and a JSON Schema (tests/fixtures/schema_person.json;
 * XGrammar with any_whitespace on, strict mode off).  At each prefix the
 * two masks must be equal but for the known differences between the two
 * engines (experiments/refs/xgdiff.h: stop tokens, lead bytes that are not
 * UTF-8, and for the schema whitespace outside any_whitespace and integers
 * written 1.0 or 1e2), each decided token by token by xp_xg_cause.
 * Any other difference fails, naming the token.
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
#include "../experiments/refs/xgdiff.h"
#include "../grammar/match.h"
#include "support.h"

#define LLAMA3 "data/cache/llama3/tokenizer.json"
#define XGRAMMAR "scripts/ref/node_modules/@mlc-ai/web-xgrammar/package.json"

static tok_tokenizer_t *tok;
static trie_keys_t keys;
static trie_t *trie;

static int setup(void **state)
{
    (void)state;
    tb_err_t err;
    test_need_file(XGRAMMAR);
    tok = test_load(LLAMA3);
    if (trie_keys_from_vocab(&keys, tok_vocab(tok), TRIE_SPECIALS_OMIT, &err) ||
        !(trie = trie_build(&trie_layout_dfs, &keys, &err))) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    trie_free(trie);
    trie_keys_free(&keys);
    tok_free(tok);
    return 0;
}

/* XGrammar's mask after `after` into set (ids it allows): for an EBNF
 * grammar, or with schema set, for that JSON Schema. */
static void xgrammar_mask(const char *grammar, const char *after, int schema, tb_bitset_t *set)
{
    char cmd[1024], q[256];
    size_t k = 0;
    for (const char *p = after; *p && k + 5 < sizeof q; p++) { /* shell single quotes */
        if (*p == '\'') {
            memcpy(q + k, "'\\''", 4);
            k += 4;
        } else
            q[k++] = *p;
    }
    q[k] = 0;
    snprintf(cmd, sizeof cmd, "node scripts/ref/xgrammar.js mask --vocab " LLAMA3
             " %s %s --after '%s'", schema ? "--any-whitespace --schema" : "--ebnf", grammar, q);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    tb_bitset_clear_all(set);
    unsigned long id;
    while (fscanf(p, "%lu", &id) == 1) {
        assert_true(id < set->nbits);
        tb_bitset_set(set, id);
    }
    assert_int_equal(pclose(p), 0);
}

static void compare(const char *grammar, int schema, const char *const *afters, size_t n)
{
    tb_err_t err;
    gr_cfg_t cfg;
    assert_int_equal(gr_cfg_load(&cfg, grammar, schema ? "schema" : "gbnf", &err), 0);
    gr_gram_t *g = gr_gram_new(&cfg, NULL, &err);
    assert_non_null(g);
    gr_rec_t rec;
    assert_int_equal(gr_rec_init(&rec, g, keys.max_len, &err), 0);
    size_t vocab = tok_vocab(tok)->size;
    tb_bitset_t ours, theirs;
    assert_int_equal(tb_bitset_init(&ours, trie_mask_bits(trie) > vocab ? trie_mask_bits(trie)
                                                                         : vocab), 0);
    assert_int_equal(tb_bitset_init(&theirs, ours.nbits), 0);
    for (size_t i = 0; i < n; i++) {
        uint32_t st = gr_feed(g, GR_START, (const uint8_t *)afters[i], strlen(afters[i]), NULL);
        assert_int_not_equal(st, GR_DEAD);
        assert_int_equal(gr_mask(trie, &rec, st, &ours, NULL, &err), 0);
        xgrammar_mask(grammar, afters[i], schema, &theirs);
        xp_xg_ctx_t ctx = {.vocab = tok_vocab(tok), .trie = trie, .g = g, .schema = schema};
        size_t same = 0, explained_n = 0;
        for (uint32_t id = 0; id < vocab; id++) {
            int a = tb_bitset_get(&ours, id), b = tb_bitset_get(&theirs, id);
            if (a == b) {
                same += a;
                continue;
            }
            xp_xg_cause_t why = xp_xg_cause(&ctx, (const uint8_t *)afters[i],
                                            strlen(afters[i]), st, id, a);
            if (why == XP_XG_OURS || why == XP_XG_THEIRS) {
                size_t len;
                const uint8_t *s = tok_vocab_token(tok_vocab(tok), id, &len);
                print_message("%s after '%s': token %u '%.*s' allowed by %s only\n", grammar,
                              afters[i], id, (int)len, (const char *)s,
                              a ? "tokbench" : "XGrammar");
                fail();
            }
            explained_n++;
        }
        print_message("%s after '%s': %zu tokens allowed by both, %zu explained differences\n",
                      grammar, afters[i], same, explained_n);
        assert_true(same > 0 || gr_accepting(g, st)); /* at the end: stop tokens only */
    }
    tb_bitset_free(&ours);
    tb_bitset_free(&theirs);
    gr_rec_free(&rec);
    gr_gram_free(g);
}

static void test_json(void **state)
{
    (void)state;
    const char *afters[] = {"", "{\"a\": \"", "{\"a\": [1, 2", "{\"a\": {\"b\": tr",
                            "[\"\\u00"};
    compare("experiments/grammars/xgrammar-json.ebnf", 0, afters, 5);
}

static void test_arith(void **state)
{
    (void)state;
    const char *afters[] = {"", "(1 + 2", "12 * (3 - "};
    compare("experiments/grammars/xgrammar-arith.ebnf", 0, afters, 3);
}

static void test_schema(void **state)
{
    (void)state;
    const char *afters[] = {"", "{\"name\": \"x\", ", "{\"name\": \"x\", \"age\": 1",
                            "{\"name\": \"x\", \"age\": 12, \"tags\": [",
                            "{\"name\": \"x\", \"age\": 12}"};
    compare("tests/fixtures/schema_person.json", 1, afters, 5);
}

/* The cause xgdiff gives token `text` (allowed by tokbench only if ours)
 * after `after`, on the person schema with RFC 8259 JSON at hand. */
static xp_xg_cause_t cause_of(const char *text, const char *after, int ours)
{
    tb_err_t err;
    gr_cfg_t cfg, json_cfg;
    assert_int_equal(gr_cfg_load(&cfg, "tests/fixtures/schema_person.json", "schema", &err), 0);
    assert_int_equal(gr_cfg_load(&json_cfg, "experiments/grammars/json.lark", "lark", &err), 0);
    gr_gram_t *g = gr_gram_new(&cfg, NULL, &err), *json = gr_gram_new(&json_cfg, NULL, &err);
    assert_non_null(g);
    assert_non_null(json);
    int32_t id = trie_lookup(trie, (const uint8_t *)text, strlen(text));
    assert_true(id >= 0);
    char *names[] = {"age", "name", "tags"};
    xp_xg_ctx_t ctx = {.vocab = tok_vocab(tok), .trie = trie, .g = g, .schema = 1,
                       .json = json, .names = names, .n_names = 3};
    uint32_t st = gr_feed(g, GR_START, (const uint8_t *)after, strlen(after), NULL);
    xp_xg_cause_t why = xp_xg_cause(&ctx, (const uint8_t *)after, strlen(after), st,
                                    (uint32_t)id, ours);
    gr_gram_free(g);
    gr_gram_free(json);
    return why;
}

/* Each cause on a token it is meant for, and the same token elsewhere
 * left unexplained. */
static void test_causes(void **state)
{
    (void)state;
    assert_int_equal(cause_of("\r", "{\"name\": \"x\",", 1), XP_XG_CR);
    assert_int_equal(cause_of("!", "{\"", 1), XP_XG_ORDER);
    assert_int_equal(cause_of("!", "{\"name\": \"", 1), XP_XG_OURS);
    assert_int_equal(cause_of("\\n", "{\"name\": \"", 1), XP_XG_STRESC);
    assert_int_equal(cause_of("6", "{\"name\": \"12:00:", 1), XP_XG_LEAP);
    assert_int_equal(cause_of("6", "{\"name\": \"12:00", 1), XP_XG_OURS);
    assert_int_equal(cause_of("\t", "{\"name\": \"", 0), XP_XG_CONTROL);
    assert_int_equal(cause_of("\t", "{\"name\": ", 0), XP_XG_NAMED);
    assert_int_equal(cause_of("\t", "{\"other\": ", 0), XP_XG_THEIRS);
    assert_int_equal(cause_of("\",", "{\"name", 0), XP_XG_NOTJSON);
    assert_int_equal(cause_of("\\/", "{\"name\": \"", 0), XP_XG_ESCAPE);
    assert_int_equal(cause_of("\xA1", "{\"name\": \"", 0), XP_XG_UTF8);
    assert_int_equal(cause_of("\xA1", "{\"name\": \"\xC3", 0), XP_XG_NAMED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_arith),
        cmocka_unit_test(test_schema),
        cmocka_unit_test(test_causes),
    };
    return cmocka_run_group_tests_name("grammar masks against XGrammar", tests, setup,
                                       teardown);
}
