/*
 * Grammar masks against a second engine: XGrammar 0.1.27 (npm
 * @mlc-ai/web-xgrammar, WebAssembly, run by scripts/ref/xgrammar.js) on
 * Llama 3, for grammars whose lexing is unambiguous: JSON and arithmetic
 * in XGrammar's EBNF (experiments/grammars/xgrammar-*.ebnf), which
 * tokbench reads as GBNF.  At each prefix the two masks must be equal but
 * for the differences explained here, each checked token by token:
 *   - XGrammar's stop tokens (<|end_of_text|>, <|eot_id|>) where the text
 *     may end: tokbench's masks hold no control tokens;
 *   - inside a string, single-byte tokens 0xC0, 0xC1 and 0xF5-0xF7, which
 *     XGrammar takes as lead bytes of a character although no UTF-8 text
 *     has them; tokbench's classes are over code points in valid UTF-8.
 * And a JSON Schema (tests/fixtures/schema_person.json; XGrammar with
 * any_whitespace on, strict mode off), where tokbench allows more, each
 * difference one of:
 *   - whitespace XGrammar's any_whitespace leaves out: carriage returns,
 *     and whitespace before the document or after its end (JSON allows
 *     all three; where the document ends is asked of tokbench's grammar);
 *   - an integer written with a fraction or an exponent (JSON Schema's
 *     "integer" is any number with a zero fractional part, so 1.0 is one):
 *     '.', 'e', 'E' after the digits.
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

static int is_ws(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A schema mask's difference explained in the header, or 0: the token
 * allowed by tokbench only at grammar state st after `after`. */
static int schema_explained(uint32_t id, const char *after, gr_gram_t *g, uint32_t st)
{
    size_t n;
    const uint8_t *s = tok_vocab_token(tok_vocab(tok), id, &n);
    if (memchr(s, '\r', n))
        return 1;
    size_t alen = strlen(after);
    if (alen && after[alen - 1] >= '0' && after[alen - 1] <= '9' &&
        (s[0] == '.' || s[0] == 'e' || s[0] == 'E'))
        return 1;
    if (is_ws(s[0]) && (!alen || gr_accepting(g, st))) /* before or after the document */
        return 1;
    /* the token closes the document and whitespace follows */
    for (size_t k = 0; k + 1 < n; k++) {
        if (s[k] != '}' || !gr_accepting(g, gr_feed(g, st, s, k + 1, NULL)))
            continue;
        size_t j = k + 1;
        while (j < n && is_ws(s[j]))
            j++;
        return j == n;
    }
    return 0;
}

/* A token XGrammar alone allows, explained in the header, or 0. */
static int explained(uint32_t id)
{
    size_t n;
    const uint8_t *s = tok_vocab_token(tok_vocab(tok), id, &n);
    if (trie_lookup(trie, s, n) < 0) /* not in tokbench's trie: a control token */
        return tok_vocab(tok)->kind[id] != TOK_NORMAL;
    return n == 1 && (s[0] == 0xC0 || s[0] == 0xC1 || (s[0] >= 0xF5 && s[0] <= 0xF7));
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
        size_t same = 0, explained_n = 0;
        for (uint32_t id = 0; id < vocab; id++) {
            int a = tb_bitset_get(&ours, id), b = tb_bitset_get(&theirs, id);
            if (a == b) {
                same += a;
                continue;
            }
            if (b ? !explained(id) : !schema || !schema_explained(id, afters[i], g, st)) {
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_arith),
        cmocka_unit_test(test_schema),
    };
    return cmocka_run_group_tests_name("grammar masks against XGrammar", tests, setup,
                                       teardown);
}
