/*
 * Tests of lexer/index: the precomputed token index over Llama 3 must
 * answer what walking would, for a set of real-world regexes (email, phone,
 * date, time, IPv4, URL, SSN, a JSON object with string and number fields,
 * a long alternation of words; the outlines benchmark set: digits, phone,
 * date, IPv4, email, URL; the JSON string body), from the start and from a
 * state after a consumed prefix:
 *   - over every trie layout, the mask of every indexed state equals
 *     lex_mask's walk of that layout there;
 *   - the mask equals a brute-force oracle (lex_dfa_feed over each token's
 *     bytes), and next(s, t) of every token is the DFA state feeding its
 *     bytes reaches (LEX_INDEX_NONE outside the mask): the token classes
 *     lose nothing;
 *   - the indexed states are closed: every next state is indexed.
 * Then the state cap fails cleanly, naming the regex, `tokbench mask
 * --index` prints what it built, and the slice and index experiments run
 * through `tokbench run` and store their figures.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../lexer/deriv.h"
#include "../lexer/index.h"
#include "../lexer/rec.h"
#include "../trie/trie.h"
#include "support.h"

#define LLAMA3 "data/cache/llama3/tokenizer.json"

static test_tries_t tt;

static int setup(void **state)
{
    (void)state;
    return test_tries_load(&tt, LLAMA3);
}

static int teardown(void **state)
{
    (void)state;
    test_tries_free(&tt);
    return 0;
}

#define WORDS "the|quick|brown|fox|jumps|over|lazy|dog|and|then|there|these|those|" \
              "this|that|what|when|where|which|while|who|whom|whose|why|how|into|" \
              "onto|upon|under|about|above|after|again|against|all|am|an|any|are|" \
              "because|been|before|being|below|between|both|but|by|could|did|do"
#define JSON_STRING_BODY "([^\"\\\\\\x00-\\x1f]|\\\\[\"\\\\/bfnrt]|\\\\u[0-9a-fA-F]{4})*"

static const struct {
    const char *pattern, *prefix;
} cases[] = {
    {"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}", "john@"},
    {"\\(?\\d{3}\\)?[-. ]?\\d{3}[-. ]?\\d{4}", "(555) "},
    {"\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])", "2024-"},
    {"([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d)?", "12:"},
    {"((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)",
     "192.168."},
    {"https?://[a-zA-Z0-9.-]+(:\\d{1,5})?(/[a-zA-Z0-9._~%!$&'()*+,;=:@-]*)*"
     "(\\?[a-zA-Z0-9._~%&=+-]*)?", "https://"},
    {"\\d{3}-\\d{2}-\\d{4}", "123-"},
    {"\\{\\s*\"name\"\\s*:\\s*\"" JSON_STRING_BODY "\""
     "\\s*,\\s*\"age\"\\s*:\\s*-?(0|[1-9]\\d*)(\\.\\d+)?([eE][+-]?\\d+)?\\s*\\}",
     "{\"name\": \"Jo"},
    {"(" WORDS ")( (" WORDS "))*", "the quick "},
    /* the outlines benchmark set (its tests/benchmark regex samples) */
    {"[0-9]+", "12"},
    {"\\+?\\d{1,4}?[-.\\s]?\\(?\\d{1,3}?\\)?[-.\\s]?\\d{1,4}[-.\\s]?\\d{1,4}[-.\\s]?\\d{1,9}",
     "+1 (555"},
    {"([1-9]|0[1-9]|1[0-9]|2[0-9]|3[0-1])(\\.|-|/)([1-9]|0[1-9]|1[0-2])(\\.|-|/)"
     "([0-9][0-9]|19[0-9][0-9]|20[0-9][0-9])|([0-9][0-9]|19[0-9][0-9]|20[0-9][0-9])"
     "(\\.|-|/)([1-9]|0[1-9]|1[0-2])(\\.|-|/)([1-9]|0[1-9]|1[0-9]|2[0-9]|3[0-1])", "19/"},
    {"(?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\\.){3}"
     "(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)", "10.0"},
    {"[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@"
     "(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?", "jo.doe@"},
    {"(https?:\\/\\/)?([\\da-z\\.-]+)\\.([a-z\\.]{2,6})([\\/\\w \\.-]*)*\\/?", "htt"},
    {JSON_STRING_BODY, "ab\\u00"},
    /* more byte-reachable states than one round takes: built level by level */
    {"[0-9a-f]{0,300}x", "0a"},
};

/* What the checked indexes held: masks as bitsets and as id lists, class
 * maps as arrays and as sorted lists, next states as full rows and as
 * pairs.  Every kind must be exercised. */
static size_t dense_sets, list_sets, class_arrays, class_lists, full_rows, pair_rows;
/* Builds in one round (few byte-reachable states) and in several. */
static size_t one_round, by_levels;

static void oracle_mask(lex_dfa_t *d, uint32_t state, tb_bitset_t *m)
{
    tb_bitset_clear_all(m);
    for (size_t i = 0; i < tt.keys.n; i++)
        if (lex_dfa_feed(d, state, tt.keys.keys[i].s, tt.keys.keys[i].len) != LEX_DEAD)
            tb_bitset_set(m, tt.keys.keys[i].id);
    for (size_t a = 0; a < tt.keys.nalias; a++)
        if (tb_bitset_get(m, tt.keys.alias[2 * a + 1]))
            tb_bitset_set(m, tt.keys.alias[2 * a]);
}

/* Every state's mask and next states against the oracle (x built over the
 * first trie). */
static void check_oracle(lex_dfa_t *d, const lex_index_t *x)
{
    tb_bitset_t got, want;
    assert_int_equal(tb_bitset_init(&got, trie_mask_bits(tt.tries[0])), 0);
    assert_int_equal(tb_bitset_init(&want, trie_mask_bits(tt.tries[0])), 0);
    for (uint32_t i = 0; i < x->nstates; i++) {
        uint32_t s = x->dfa_state[i];
        assert_int_equal(lex_index_state(x, s), i);
        lex_index_mask(x, i, &got);
        oracle_mask(d, s, &want);
        if (!tb_bitset_equal(&got, &want))
            fail_msg("'%s' index state %u (DFA %u): mask differs (index %zu, oracle %zu "
                     "tokens)", d->pattern, i, s, tb_bitset_count(&got),
                     tb_bitset_count(&want));
        for (size_t k = 0; k < tt.keys.n; k++) {
            const trie_key_t *key = &tt.keys.keys[k];
            uint32_t n = lex_index_next(x, i, key->id);
            if (!tb_bitset_get(&want, key->id)) {
                assert_int_equal(n, LEX_INDEX_NONE);
                continue;
            }
            assert_true(n < x->nstates);
            uint32_t fed = lex_dfa_feed(d, s, key->s, key->len);
            if (x->dfa_state[n] != fed)
                fail_msg("'%s' state %u token '%.*s': index says DFA state %u, feeding %u",
                         d->pattern, i, (int)key->len, key->s, x->dfa_state[n], fed);
        }
        for (size_t a = 0; a < tt.keys.nalias; a++)
            assert_int_equal(lex_index_next(x, i, tt.keys.alias[2 * a]),
                             lex_index_next(x, i, tt.keys.alias[2 * a + 1]));
    }
    tb_bitset_free(&got);
    tb_bitset_free(&want);
}

/* Every state's mask against lex_mask's walk of trie t. */
static void check_walk(lex_dfa_t *d, const trie_t *t, const char *layout, const lex_index_t *x)
{
    tb_err_t err;
    tb_bitset_t got, walk;
    lex_rec_t r;
    assert_int_equal(tb_bitset_init(&got, trie_mask_bits(t)), 0);
    assert_int_equal(tb_bitset_init(&walk, trie_mask_bits(t)), 0);
    assert_int_equal(lex_rec_init(&r, d, tt.keys.max_len, &err), 0);
    for (uint32_t i = 0; i < x->nstates; i++) {
        lex_index_mask(x, i, &got);
        assert_int_equal(lex_mask(t, &r, x->dfa_state[i], &walk, NULL, &err), 0);
        if (!tb_bitset_equal(&got, &walk))
            fail_msg("'%s' %s index state %u: mask differs (index %zu, walk %zu tokens)",
                     d->pattern, layout, i, tb_bitset_count(&got), tb_bitset_count(&walk));
    }
    lex_rec_free(&r);
    tb_bitset_free(&got);
    tb_bitset_free(&walk);
}

/* Builds the index from the state after prefix over every layout and checks
 * every state. */
static void check_index(const char *pattern, const char *prefix, size_t *states,
                        size_t *entries, size_t *classes)
{
    tb_err_t err;
    lex_dfa_t *d = lex_dfa_new(pattern, NULL, &err);
    if (!d)
        fail_msg("%s", err.msg);
    uint32_t start = lex_dfa_feed(d, LEX_START, (const uint8_t *)prefix, strlen(prefix));
    assert_int_not_equal(start, LEX_DEAD);
    for (size_t l = 0; l < tt.ntries; l++) {
        lex_index_t *x = lex_index_build(tt.tries[l], &tt.keys, d, start, 0, &err);
        if (!x)
            fail_msg("'%s': %s", pattern, err.msg);
        assert_int_equal(lex_index_state(x, start), 0);
        check_walk(d, tt.tries[l], tt.names[l], x);
        if (l == 0) {
            check_oracle(d, x);
            *states += x->nstates;
            *entries += lex_index_entries(x);
            *classes += x->nclasses;
            lex_index_mem_t m;
            lex_index_mem(x, &m);
            assert_int_equal(m.total, lex_index_bytes(x));
            assert_true(m.total > m.masks + m.classes + m.next + m.states);
            for (size_t i = 0; i < x->nsets; i++)
                *(x->set[i].dense ? &dense_sets : &list_sets) += 1;
            *(x->class_of ? &class_arrays : &class_lists) += 1;
            for (size_t i = 0; i < x->nstates; i++)
                *(x->row[i].n == LEX_INDEX_NONE ? &full_rows : &pair_rows) += 1;
            *(x->rounds > 1 ? &by_levels : &one_round) += 1;
        }
        lex_index_free(x);
    }
    lex_dfa_free(d);
}

static void index_matches_walks(void **state)
{
    (void)state;
    size_t states = 0, entries = 0, classes = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        check_index(cases[i].pattern, "", &states, &entries, &classes);
        check_index(cases[i].pattern, cases[i].prefix, &states, &entries, &classes);
    }
    print_message("%zu index states, %zu token classes, %zu entries checked against the "
                  "walks of %zu layouts and the oracle; masks: %zu bitsets, %zu lists; class "
                  "maps: %zu arrays, %zu lists; next states: %zu full rows, %zu as pairs; "
                  "%zu built in one round, %zu by levels\n", states, classes, entries,
                  tt.ntries, dense_sets, list_sets, class_arrays, class_lists, full_rows,
                  pair_rows, one_round, by_levels);
    assert_true(states > 2 * sizeof cases / sizeof *cases);
    assert_true(dense_sets && list_sets && class_arrays && class_lists);
    assert_true(one_round && by_levels && full_rows && pair_rows);
}

static void state_cap_fails_cleanly(void **state)
{
    (void)state;
    tb_err_t err;
    lex_dfa_t *d = lex_dfa_new("[0-9]{0,300}x", NULL, &err);
    assert_non_null(d);
    lex_index_t *x = lex_index_build(tt.tries[0], &tt.keys, d, LEX_START, 20, &err);
    assert_null(x);
    assert_non_null(strstr(err.msg, "[0-9]{0,300}x"));
    assert_non_null(strstr(err.msg, "more than 20 DFA states"));
    /* With room enough it builds, and the cap was the only problem. */
    x = lex_index_build(tt.tries[0], &tt.keys, d, LEX_START, 1000, &err);
    assert_non_null(x);
    assert_true(x->nstates > 20);
    lex_index_free(x);
    lex_dfa_free(d);
}

/* The slice and index experiments run through the runner and store their
 * figures (setup checks the sliced mask against the plain walk and the
 * index against the DFA along the sample). */
static void experiments_run(void **state)
{
    (void)state;
    static char out[1 << 16];
    char dir[] = "/tmp/test_index.XXXXXX", suite[256], db[256], cmd[600];
    FILE *f = test_run_dir(dir, suite, db, sizeof suite);
    fputs("slice,llama3,dfs,\"re:[^\"\"\\\\\\x00-\\x1f]*\"\"\",,2,tsc,\n"
          "index,llama3,dfs,\"\\d{3}-\\d{2}-\\d{4}\",,2,tsc,\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "run %s --db %s", suite, db);
    int rc = test_tokbench(cmd, out, sizeof out);
    if (rc != 0 || !strstr(out, "2 ok, 0 failed"))
        fail_msg("exit %d:\n%s", rc, out);
    snprintf(cmd, sizeof cmd, "show 1 --db %s", db);
    assert_int_equal(test_tokbench(cmd, out, sizeof out), 0);
    if (!strstr(out, "slicer_gain") || !strstr(out, "breakeven_steps") ||
        !strstr(out, "ns_per_step"))
        fail_msg("%s", out);
    test_run_dir_remove(dir);
}

static void mask_command(void **state)
{
    (void)state;
    static char out[1 << 16];
    assert_int_equal(test_tokbench_mask(LLAMA3 " --regex '\\d{3}-\\d{2}-\\d{4}' --index "
                                        "--reps 2", out, sizeof out), 0);
    if (!strstr(out, "index      built in") || !strstr(out, "equals the walk"))
        fail_msg("%s", out);
    assert_int_equal(test_tokbench_mask(LLAMA3 " --regex '[0-9]{0,300}x' --index-states 5 "
                                        "--reps 2", out, sizeof out), 1);
    if (!strstr(out, "more than 5 DFA states"))
        fail_msg("%s", out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        long_unit_test(index_matches_walks),
        cmocka_unit_test(state_cap_fails_cleanly),
        cmocka_unit_test(mask_command),
        cmocka_unit_test(experiments_run),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
