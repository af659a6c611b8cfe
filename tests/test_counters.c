/* test_counters: source names, the TSC frequency against the monotonic
 * clock, the PAPI probe (whatever this machine has), the callgrind reader,
 * callgrind counts of the selftest loop, the runner's per-node figures,
 * and the rows of the load experiment. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cmocka.h>

#include "../experiments/counters/counters.h"
#include "../experiments/drivers/driver.h"
#include "../experiments/drivers/runner.h"
#include "../tok/tokenizer.h"
#include "../tok/vocab.h"

static void test_sources_parse(void **state)
{
    (void)state;
    unsigned m;
    tb_err_t err;
    char buf[64];
    assert_int_equal(xp_sources_parse("tsc+callgrind", &m, &err), 0);
    assert_int_equal(m, XP_SRC_TSC | XP_SRC_CALLGRIND);
    assert_int_equal(xp_sources_parse(" papi tsc", &m, &err), 0);
    assert_int_equal(m, XP_SRC_TSC | XP_SRC_PAPI);
    assert_int_equal(xp_sources_parse("all", &m, &err), 0);
    assert_string_equal(xp_sources_format(m, buf, sizeof buf), "tsc+papi+callgrind");
    assert_int_equal(xp_sources_parse("", &m, &err), 0);
    assert_int_equal(m, XP_SRC_TSC); /* the default */
    assert_int_equal(xp_sources_parse("tsc+perf", &m, &err), -1);
    assert_non_null(strstr(err.msg, "unknown counter source 'perf'"));
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The measured frequency must convert a later, independent interval of
 * TSC ticks into the time the monotonic clock saw (no speed asserted). */
static void test_tsc_frequency(void **state)
{
    (void)state;
    char why[256];
    if (!xp_tsc_usable(why, sizeof why))
        skip(); /* not x86-64 with an invariant TSC */
    double hz = xp_tsc_measure_hz(50);
    assert_true(hz > 0);
    double t0 = mono();
    uint64_t c0 = xp_tsc_begin();
    struct timespec nap = {0, 200000000L};
    nanosleep(&nap, NULL);
    uint64_t c1 = xp_tsc_end();
    double t1 = mono();
    double by_tsc = (double)(c1 - c0) / hz, by_clock = t1 - t0;
    assert_true(c1 > c0);
    if (by_tsc < by_clock * 0.95 || by_tsc > by_clock * 1.05)
        fail_msg("TSC says %.6f s, the monotonic clock %.6f s", by_tsc, by_clock);
}

static void test_papi_probe(void **state)
{
    (void)state;
    xp_papi_t p;
    xp_papi_probe(&p);
    assert_true(p.why[0] != 0); /* always says something in words */
    assert_int_equal(p.n_events, 7);
    if (!p.ok) {
        /* nothing usable: every event explains itself, no passes planned;
         * a machine without a PMU says so, not "no native event" */
        for (int i = 0; i < p.n_events; i++)
            assert_true(!p.ev[i].usable && p.ev[i].why[0]);
        assert_int_equal(p.n_passes, 0);
        if (strstr(p.why, "no default PMU"))
            assert_non_null(strstr(p.why, "no PMU"));
        return;
    }
    /* a machine with a PMU: every pass is small, starts, and counts */
    for (int k = 0; k < p.n_passes; k++) {
        tb_err_t err;
        long long a[2], b[2];
        assert_true(p.pass_len[k] >= 1 && p.pass_len[k] <= 2);
        assert_int_equal(xp_papi_pass_begin(&p, k, &err), 0);
        assert_int_equal(xp_papi_read(&p, a, &err), 0);
        volatile uint64_t x = 0;
        for (int i = 0; i < 100000; i++)
            x += (uint64_t)i * i;
        (void)x; /* a read, for clang's -Wunused-but-set-variable */
        assert_int_equal(xp_papi_read(&p, b, &err), 0);
        assert_int_equal(xp_papi_pass_end(&p, &err), 0);
        assert_true(b[0] >= a[0]);
    }
}

static void test_callgrind_parse(void **state)
{
    (void)state;
    xp_cg_counts_t c;
    tb_err_t err;
    assert_int_equal(xp_callgrind_parse("tests/fixtures/xp_callgrind.out", &c, &err), 0);
    assert_int_equal(c.n, 13);
    /* totals win over the header summary; missing trailing counts are 0 */
    assert_int_equal(xp_cg_get(&c, "Ir"), 120015);
    assert_int_equal(xp_cg_get(&c, "Bc"), 20000);
    assert_int_equal(xp_cg_get(&c, "Bcm"), 9987);
    assert_int_equal(xp_cg_get(&c, "Bim"), 0);
    assert_int_equal(xp_cg_get(&c, "nonesuch"), 0);
    assert_int_equal(xp_callgrind_parse("tests/fixtures/xp_small.csv", &c, &err), -1);
    assert_non_null(strstr(err.msg, "not a callgrind output file"));
}

static int selftest_row(xp_row_t *r, const char *options)
{
    const char *f[7] = {"selftest", NULL, NULL, NULL, NULL, NULL, options};
    return xp_row_init(r, f, 1);
}

static void callgrind_selftest(const char *exe, const char *options, xp_cg_counts_t *c)
{
    xp_row_t r;
    char *argv[10];
    tb_err_t err;
    assert_int_equal(selftest_row(&r, options), 0);
    xp_case_argv(exe, &r, argv);
    if (xp_callgrind_run(argv, c, &err))
        fail_msg("%s", err.msg);
    xp_row_free(&r);
}

/* Collection covers the measured repetition only: doubling the loop
 * doubles the instructions and conditional branches to within the few
 * instructions of the call itself. */
static void test_callgrind_scales(void **state)
{
    (void)state;
    char why[256], exe[512];
    if (!xp_callgrind_usable(why, sizeof why))
        skip(); /* SANITIZE=1 build or no valgrind: said in `tokbench counters` */
    const char *build = getenv("BUILD");
    snprintf(exe, sizeof exe, "%s/tokbench", build && *build ? build : "build");
    xp_cg_counts_t one, two;
    callgrind_selftest(exe, "n=20000", &one);
    callgrind_selftest(exe, "n=40000", &two);
    unsigned long long i1 = xp_cg_get(&one, "Ir"), i2 = xp_cg_get(&two, "Ir");
    assert_true(i1 >= 20000 * 4);             /* at least a few per step */
    assert_true(i1 < 20000 * 64);             /* and not the whole program */
    assert_true(i2 > i1 * 2 - 200 && i2 < i1 * 2 + 200);
    unsigned long long b1 = xp_cg_get(&one, "Bc"), b2 = xp_cg_get(&two, "Bc");
    assert_true(b1 >= 20000 && b2 > b1 * 2 - 50 && b2 < b1 * 2 + 50);
    /* the unpredictable branch: about half mispredicted */
    unsigned long long m1 = xp_cg_get(&one, "Bcm");
    assert_true(m1 > 20000 / 4 && m1 < 20000);
}

/* The runner's TSC pass records every repetition with the exact node count
 * the driver reported, and the empty-measurement overhead it subtracted. */
static void test_measure_records_reps(void **state)
{
    (void)state;
    xp_row_t r;
    tb_err_t err;
    assert_int_equal(selftest_row(&r, "n=3000"), 0);
    double hz = xp_tsc_measure_hz(20);
    xp_env_t env = {.sources = XP_SRC_TSC, .tsc_hz = hz > 0 ? hz : 1e9};
    xp_papi_t papi = {0};
    assert_int_equal(xp_case_measure(&xp_driver_selftest, &r, 7, &env, &papi, &err), 0);
    assert_int_equal(env.meas.len, 14); /* ref_cycles and ns per repetition */
    for (size_t i = 0; i < env.meas.len; i++) {
        const xp_meas_t *m = &env.meas.data[i];
        assert_string_equal(m->source, "tsc");
        assert_int_equal(m->nodes, 3000);
        assert_int_equal(m->rep, i / 2);
        assert_true(m->value >= 0 && m->overhead >= 0);
    }
    xp_env_free(&env);
    /* a simulation that cannot run loses its figures, not the case */
    xp_env_t env3 = {.sources = XP_SRC_TSC | XP_SRC_CALLGRIND, .tsc_hz = 1e9,
                     .exe = "/nonexistent/tokbench"};
    assert_int_equal(xp_case_measure(&xp_driver_selftest, &r, 2, &env3, &papi, &err), 0);
    assert_int_equal(env3.meas.len, 4);
    assert_non_null(strstr(env3.note, "callgrind failed, the case went on"));
    xp_env_free(&env3);
    /* a failing repetition is an error naming it */
    xp_row_free(&r);
    assert_int_equal(selftest_row(&r, "fail=rep"), 0);
    xp_env_t env2 = {.sources = XP_SRC_TSC, .tsc_hz = 1e9};
    assert_int_equal(xp_case_measure(&xp_driver_selftest, &r, 3, &env2, &papi, &err), -1);
    assert_non_null(strstr(err.msg, "fail=rep"));
    xp_env_free(&env2);
    xp_row_free(&r);
}

/* One walk repetition over a 10-token vocabulary (11 trie nodes: a b c 1
 * 2 ab abc 12 a1 and the two bytes of "é"): the nodes stored are exactly
 * those the walk offered to the recognizer, the items the tokens allowed. */
static void walk_case(const char *layout, const char *pattern, uint64_t *nodes,
                      uint64_t *items)
{
    const char *f[7] = {"walk", "tests/fixtures/xp_tiny_tokenizer.json", layout,
                        pattern, NULL, NULL, NULL};
    xp_row_t r;
    tb_err_t err;
    assert_int_equal(xp_row_init(&r, f, 2), 0);
    xp_env_t env = {.sources = XP_SRC_TSC, .tsc_hz = 1e9};
    xp_papi_t papi = {0};
    if (xp_case_measure(&xp_driver_walk, &r, 2, &env, &papi, &err))
        fail_msg("%s %s: %s", layout, pattern, err.msg);
    assert_true(env.meas.len >= 4);
    *nodes = env.meas.data[0].nodes;
    *items = env.meas.data[0].items;
    assert_int_equal(env.meas.data[3].nodes, *nodes); /* every repetition */
    xp_env_free(&env);
    xp_row_free(&r);
}

static void test_walk_counts_nodes(void **state)
{
    (void)state;
    static const struct {
        const char *pattern;
        uint64_t nodes, items;
    } want[] = {
        {"any", 11, 10},    /* everything offered, every token allowed */
        {"utf8", 11, 10},   /* é is well-formed */
        {"digits", 7, 3},   /* 6 root children + "12"; 1, 2, 12 */
        {"letters", 9, 5},  /* 6 + ab, a1 + abc; a b c ab abc */
    };
    const char *layouts[] = {"dfs", "map"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        for (size_t k = 0; k < 2; k++) {
            uint64_t nodes, items;
            walk_case(layouts[k], want[i].pattern, &nodes, &items);
            if (nodes != want[i].nodes || items != want[i].items)
                fail_msg("%s %s: %llu nodes, %llu tokens", layouts[k], want[i].pattern,
                         (unsigned long long)nodes, (unsigned long long)items);
        }
    /* the double array probes only the labels the recognizer allows:
     * never more nodes, the same tokens */
    uint64_t nodes, items;
    walk_case("dat", "digits", &nodes, &items);
    assert_int_equal(items, 3);
    assert_true(nodes <= 7);
    tb_err_t err;
    xp_row_t r;
    const char *bad[7] = {"walk", "tests/fixtures/xp_tiny_tokenizer.json", "dfs", "json"};
    assert_int_equal(xp_row_init(&r, bad, 1), 0);
    xp_env_t env = {.sources = XP_SRC_TSC, .tsc_hz = 1e9};
    assert_int_equal(xp_case_measure(&xp_driver_walk, &r, 1, &env, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "'json' is not a built-in recognizer"));
    xp_env_free(&env);
    xp_row_free(&r);
}

/* Exact lookups of the tiny vocabulary: every token once per repetition. */
static void test_lookup_counts(void **state)
{
    (void)state;
    const char *layouts[] = {"dfs", "dat", "map"};
    for (size_t k = 0; k < 3; k++) {
        const char *f[7] = {"lookup", "tests/fixtures/xp_tiny_tokenizer.json", layouts[k],
                            "exact", NULL, NULL, NULL};
        xp_row_t r;
        tb_err_t err;
        assert_int_equal(xp_row_init(&r, f, 3), 0);
        xp_env_t env = {.sources = XP_SRC_TSC, .tsc_hz = 1e9};
        if (xp_case_measure(&xp_driver_lookup, &r, 3, &env, NULL, &err))
            fail_msg("%s: %s", layouts[k], err.msg);
        /* The timed repetitions (3 reps of ns and ref_cycles from the TSC);
         * the structure's own figures follow with other sources. */
        size_t timed = 0;
        for (size_t i = 0; i < env.meas.len; i++) {
            const xp_meas_t *m = &env.meas.data[i];
            if (strcmp(m->source, "tsc"))
                continue;
            timed++;
            assert_int_equal(m->items, 10);
            assert_int_equal(m->bytes, 16); /* 5 x 1 + 4 x 2 + 3 */
        }
        assert_int_equal(timed, 6);
        xp_env_free(&env);
        xp_row_free(&r);
    }
    const char *f[7] = {"lookup", "tests/fixtures/xp_tiny_tokenizer.json", "dfs",
                        "prefixes", NULL, NULL, NULL};
    xp_row_t r;
    tb_err_t err;
    assert_int_equal(xp_row_init(&r, f, 1), 0);
    xp_env_t env = {.sources = XP_SRC_TSC, .tsc_hz = 1e9};
    /* Without a corpus, prefix search runs over every key once. */
    if (xp_case_measure(&xp_driver_lookup, &r, 1, &env, NULL, &err))
        fail_msg("prefixes: %s", err.msg);
    size_t timed = 0;
    for (size_t i = 0; i < env.meas.len; i++)
        if (!strcmp(env.meas.data[i].source, "tsc")) {
            timed++;
            assert_int_equal(env.meas.data[i].items, 10);
            assert_int_equal(env.meas.data[i].bytes, 16);
        }
    assert_int_equal(timed, 2);
    xp_env_free(&env);
    xp_row_free(&r);
}

/* The load experiment: a row per repetition of each figure, from the
 * source (impl tokbench) and from the compiled cache (tokbench-cached),
 * each loading the whole vocabulary (items its size, bytes the file's); a
 * file that does not load fails the case with the loader's message. */
static void test_load_records_each_load(void **state)
{
    (void)state;
    const char *path = "tests/fixtures/xp_tiny_tokenizer.json";
    tb_err_t err;
    tok_tokenizer_t *t = tok_load(path, &err);
    if (!t)
        fail_msg("%s", err.msg);
    uint32_t size = tok_vocab(t)->size;
    tok_free(t);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    const char *f[7] = {"load", path, NULL, NULL, NULL, NULL, NULL};
    xp_row_t r;
    assert_int_equal(xp_row_init(&r, f, 3), 0);
    xp_env_t env = {.sources = XP_SRC_TSC, .tsc_hz = 1e9};
    if (xp_case_measure(&xp_driver_load, &r, 3, &env, NULL, &err))
        fail_msg("%s", err.msg);
    size_t cpu[2] = {0}, rss[2] = {0}, file[2] = {0};
    for (size_t i = 0; i < env.meas.len; i++) {
        const xp_meas_t *m = &env.meas.data[i];
        assert_int_equal(m->items, size);
        assert_int_equal(m->bytes, (uint64_t)st.st_size);
        assert_true(m->value >= 0);
        int cached = !strcmp(m->impl, "tokbench-cached");
        assert_true(cached || !strcmp(m->impl, "tokbench"));
        cpu[cached] += !strcmp(m->metric, "cpu_ms") && !strcmp(m->source, "rusage");
        rss[cached] += !strcmp(m->metric, "peak_rss_kb") && !strcmp(m->source, "rusage");
        if (!strcmp(m->metric, "file_bytes")) {
            file[cached]++;
            assert_true(m->value == (double)st.st_size);
        }
    }
    for (int k = 0; k < 2; k++) {
        assert_int_equal(cpu[k], 3);
        assert_int_equal(rss[k], 3);
        assert_int_equal(file[k], 1);
    }
    xp_env_free(&env);
    xp_row_free(&r);

    const char *bad[7] = {"load", "tests/fixtures/hf_truncated.json", NULL, NULL, NULL,
                          NULL, NULL};
    assert_int_equal(xp_row_init(&r, bad, 1), 0);
    xp_env_t env2 = {.sources = XP_SRC_TSC, .tsc_hz = 1e9};
    assert_int_equal(xp_case_measure(&xp_driver_load, &r, 1, &env2, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "hf_truncated.json"));
    assert_non_null(strstr(err.msg, "JSON error"));
    xp_env_free(&env2);
    xp_row_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sources_parse),
        cmocka_unit_test(test_tsc_frequency),
        cmocka_unit_test(test_papi_probe),
        cmocka_unit_test(test_callgrind_parse),
        cmocka_unit_test(test_callgrind_scales),
        cmocka_unit_test(test_measure_records_reps),
        cmocka_unit_test(test_walk_counts_nodes),
        cmocka_unit_test(test_lookup_counts),
        cmocka_unit_test(test_load_records_each_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
