/*
 * Tests of one grammar shared by matchers in several threads (gram.h and
 * match.h, Threads): the grammar is compiled once, cold, and matchers in
 * THREADS threads drive it through the same texts at once (so its tables
 * fill while others walk them), each with a mask cache of its own or none;
 * every mask, every verdict (a token refused, the text a sentence) and
 * the forced bytes must equal those of a run on one thread over a grammar
 * of its own.  A rollback of one token and its token consumed again must
 * give the same mask back.  gr_masks_batch is checked the same way, one
 * matcher per text stepping together, on one pool of THREADS threads
 * woken for every step, fewer texts left than threads at the end.  The grammars are two MaskBench
 * schemas and experiments/grammars/json.lark over their instances, on
 * Llama 3's vocabulary; without ../shared/maskbench the test skips with a
 * message.  Built with `make SANITIZE=thread` too, for ThreadSanitizer.
 */
#include <jansson.h>
#include <pthread.h>
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
#define MB_DIR "../shared/maskbench/data/"
#define THREADS 3
/* Tokens replayed of each text: enough to pass through objects, strings
 * and numbers, few enough for ThreadSanitizer's pace. */
#define MAX_TOKENS 40
#define MAX_TEXTS 8

static const char *const mb_files[] = {"Github_medium---o21080.json",
                                       "Kubernetes---kb_0_Normalized.json"};

static test_tries_t tries;

/* One grammar's texts and what a single thread saw at each token. */
typedef struct {
    gr_cfg_t cfg; /* a copy per grammar made (gr_gram_new takes it) */
    char *schema; /* the schema's text, NULL for json.lark */
    size_t ntexts;
    tok_ids_t ids[MAX_TEXTS];
    size_t ntok[MAX_TEXTS];    /* tokens replayed */
    size_t steps[MAX_TEXTS];   /* masks taken: tokens consumed + 1, or up to the refusal */
    uint64_t *masks[MAX_TEXTS]; /* steps masks of words each */
    uint8_t *verdict[MAX_TEXTS]; /* per step: 1 accepting, 2 the next token refused */
    tb_buf_t forced[MAX_TEXTS];  /* per step, up to 8 forced bytes and a 0xff */
    size_t words;
} case_t;

static int setup(void **state)
{
    (void)state;
    return test_tries_load(&tries, LLAMA3);
}

static int teardown(void **state)
{
    (void)state;
    test_tries_free(&tries);
    return 0;
}

static gr_gram_t *compile(const case_t *c)
{
    gr_cfg_t cfg;
    tb_err_t err;
    int rc = c->schema
                 ? gr_cfg_parse(&cfg, c->schema, strlen(c->schema), "schema.json", "schema", &err)
                 : gr_cfg_load(&cfg, "experiments/grammars/json.lark", NULL, &err);
    gr_gram_t *g = rc ? NULL : gr_gram_new(&cfg, NULL, &err);
    if (!g) {
        print_message("%s\n", err.msg);
        fail();
    }
    return g;
}

/* What one matcher sees at step k: its mask into mask, its verdict and
 * forced bytes appended to forced. */
static uint8_t observe(gr_matcher_t *m, const uint32_t *ids, size_t nids, size_t k,
                       tb_bitset_t *mask, tb_buf_t *forced, int do_mask)
{
    tb_err_t err;
    if (do_mask && gr_matcher_mask(m, tries.tries[0], mask, NULL, &err)) {
        print_message("%s\n", err.msg);
        fail();
    }
    assert_int_equal(gr_matcher_forced(m, 8, forced, &err), 0);
    assert_int_equal(tb_buf_putc(forced, 0xff), 0);
    uint8_t v = (uint8_t)gr_matcher_accepting(m);
    if (k < nids) {
        size_t n;
        const uint8_t *b = tok_vocab_token(tok_vocab(tries.tok), ids[k], &n);
        int rc = gr_matcher_consume(m, b, n, NULL, &err);
        assert_int_not_equal(rc, -1);
        v |= (uint8_t)(rc == 1) << 1;
    }
    return v;
}

/* The single-thread run: every text's masks, verdicts and forced bytes. */
static void reference(case_t *c)
{
    gr_gram_t *g = compile(c);
    tb_bitset_t mask;
    assert_int_equal(tb_bitset_init(&mask, trie_mask_bits(tries.tries[0])), 0);
    c->words = tb_bitset_words(mask.nbits);
    for (size_t t = 0; t < c->ntexts; t++) {
        gr_matcher_t m;
        tb_err_t err;
        assert_int_equal(gr_matcher_init(&m, g, tries.keys.max_len, &err), 0);
        size_t n = c->ntok[t] = c->ids[t].len < MAX_TOKENS ? c->ids[t].len : MAX_TOKENS;
        c->masks[t] = malloc((n + 1) * c->words * sizeof(uint64_t));
        c->verdict[t] = malloc(n + 1);
        size_t k = 0;
        for (; k <= n; k++) {
            uint8_t v = observe(&m, c->ids[t].data, n, k, &mask, &c->forced[t], 1);
            memcpy(c->masks[t] + k * c->words, mask.words, c->words * sizeof(uint64_t));
            c->verdict[t][k] = v;
            if (v & 2)
                break; /* refused: the text ends here */
        }
        c->steps[t] = k < n ? k + 1 : n + 1;
        gr_matcher_free(&m);
    }
    tb_bitset_free(&mask);
    gr_gram_free(g);
}

typedef struct {
    const case_t *c;
    gr_gram_t *g;
    unsigned id;
    size_t checked;
} worker_t;

static void check_mask(const case_t *c, size_t t, size_t k, const tb_bitset_t *mask)
{
    if (memcmp(c->masks[t] + k * c->words, mask->words, c->words * sizeof(uint64_t))) {
        print_message("text %zu, token %zu: the mask differs from one thread's\n", t, k);
        fail();
    }
}

/* One thread's run over every text, in an order of its own; odd threads
 * keep a mask cache.  cmocka's checks are not thread-safe for failing,
 * but a failure ends the test anyway. */
static void *work(void *arg)
{
    worker_t *w = arg;
    const case_t *c = w->c;
    tb_bitset_t mask;
    gr_maskcache_t cache;
    tb_buf_t forced = {0};
    tb_err_t err;
    assert_int_equal(tb_bitset_init(&mask, trie_mask_bits(tries.tries[0])), 0);
    gr_maskcache_init(&cache, w->g, mask.nbits, 0);
    for (size_t i = 0; i < c->ntexts; i++) {
        size_t t = (i + w->id) % c->ntexts;
        gr_matcher_t m;
        assert_int_equal(gr_matcher_init(&m, w->g, tries.keys.max_len, &err), 0);
        if (w->id & 1)
            gr_matcher_use_cache(&m, &cache);
        forced.len = 0;
        for (size_t k = 0; k < c->steps[t]; k++) {
            uint8_t v = observe(&m, c->ids[t].data, c->ntok[t], k, &mask, &forced, 1);
            check_mask(c, t, k, &mask);
            assert_int_equal(v, c->verdict[t][k]);
            w->checked++;
            if ((k + w->id) % 5 == 4 && !(v & 2) && k + 1 < c->steps[t]) {
                /* undo the token just consumed and take it again */
                size_t at = forced.len;
                assert_int_equal(gr_matcher_rollback(&m, 1), 0);
                observe(&m, c->ids[t].data, c->ntok[t], k, &mask, &forced, 1);
                check_mask(c, t, k, &mask);
                forced.len = at;
            }
        }
        assert_int_equal(forced.len, c->forced[t].len);
        assert_memory_equal(forced.data, c->forced[t].data, forced.len);
        gr_matcher_free(&m);
    }
    tb_buf_free(&forced);
    gr_maskcache_free(&cache);
    tb_bitset_free(&mask);
    return NULL;
}

static void check_threads(const case_t *c)
{
    gr_gram_t *g = compile(c);
    worker_t w[THREADS];
    pthread_t th[THREADS];
    for (unsigned k = 0; k < THREADS; k++) {
        w[k] = (worker_t){.c = c, .g = g, .id = k};
        assert_int_equal(pthread_create(&th[k], NULL, work, &w[k]), 0);
    }
    size_t checked = 0;
    for (unsigned k = 0; k < THREADS; k++) {
        pthread_join(th[k], NULL);
        checked += w[k].checked;
    }
    assert_int_equal(gr_gram_error(g, &(tb_err_t){0}), 0);
    gr_gram_free(g);
    print_message("%zu masks in %d threads as one thread's\n", checked, THREADS);
}

/* One matcher per text, their masks asked for together at every step. */
static void check_batch(const case_t *c)
{
    gr_gram_t *g = compile(c);
    gr_matcher_t m[MAX_TEXTS], *mp[MAX_TEXTS];
    tb_bitset_t masks[MAX_TEXTS], *maskp[MAX_TEXTS];
    tb_buf_t forced = {0};
    tb_err_t err;
    size_t longest = 0;
    tb_pool_t *pool = tb_pool_new(THREADS, &err);
    assert_non_null(pool);
    for (size_t t = 0; t < c->ntexts; t++) {
        assert_int_equal(gr_matcher_init(&m[t], g, tries.keys.max_len, &err), 0);
        assert_int_equal(tb_bitset_init(&masks[t], trie_mask_bits(tries.tries[0])), 0);
        mp[t] = &m[t];
        maskp[t] = &masks[t];
        longest = c->steps[t] > longest ? c->steps[t] : longest;
    }
    for (size_t k = 0; k < longest; k++) {
        /* the texts still going, first */
        size_t n = 0;
        size_t which[MAX_TEXTS];
        for (size_t t = 0; t < c->ntexts; t++)
            if (k < c->steps[t]) {
                which[n] = t;
                mp[n] = &m[t];
                maskp[n++] = &masks[t];
            }
        if (gr_masks_batch(mp, n, tries.tries[0], maskp, NULL, pool, &err)) {
            print_message("%s\n", err.msg);
            fail();
        }
        for (size_t i = 0; i < n; i++) {
            size_t t = which[i];
            check_mask(c, t, k, maskp[i]);
            uint8_t v = observe(mp[i], c->ids[t].data, c->ntok[t], k, maskp[i], &forced, 0);
            assert_int_equal(v, c->verdict[t][k]);
        }
    }
    for (size_t t = 0; t < c->ntexts; t++) {
        gr_matcher_free(&m[t]);
        tb_bitset_free(&masks[t]);
    }
    tb_pool_free(pool);
    tb_buf_free(&forced);
    gr_gram_free(g);
}

/* The case of MaskBench file f: its schema (or json.lark) and its
 * instances tokenized.  0: the file is absent. */
static int load_case(case_t *c, const char *f, int lark)
{
    char path[512];
    snprintf(path, sizeof path, MB_DIR "%s", f);
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    if (!doc)
        return 0;
    memset(c, 0, sizeof *c);
    if (!lark)
        c->schema = json_dumps(json_object_get(doc, "schema"), JSON_ENCODE_ANY);
    size_t k;
    json_t *t;
    json_array_foreach(json_object_get(doc, "tests"), k, t) {
        if (c->ntexts == MAX_TEXTS)
            break;
        char *text = json_dumps(json_object_get(t, "data"), JSON_ENCODE_ANY);
        tb_err_t err;
        assert_non_null(text);
        assert_int_equal(tok_encode(tries.tok, (const uint8_t *)text, strlen(text),
                                    &c->ids[c->ntexts++], &err),
                         0);
        free(text);
    }
    json_decref(doc);
    return 1;
}

static void free_case(case_t *c)
{
    for (size_t t = 0; t < c->ntexts; t++) {
        free(c->ids[t].data);
        free(c->masks[t]);
        free(c->verdict[t]);
        tb_buf_free(&c->forced[t]);
    }
    free(c->schema);
}

static void run(int lark)
{
    size_t done = 0;
    for (size_t i = 0; i < sizeof mb_files / sizeof *mb_files; i++) {
        case_t c;
        if (!load_case(&c, mb_files[i], lark))
            continue;
        reference(&c);
        check_threads(&c);
        check_batch(&c);
        free_case(&c);
        done++;
    }
    if (!done) {
        print_message("skipped: no MaskBench files in " MB_DIR "\n");
        skip();
    }
}

static void test_schemas(void **state)
{
    (void)state;
    run(0);
}

static void test_json_lark(void **state)
{
    (void)state;
    run(1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schemas),
        cmocka_unit_test(test_json_lark),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
