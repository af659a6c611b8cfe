/* Tests of the lookup experiment (experiments/drivers/drv_lookup.c): its options
 * and static figures in process, where the external libraries are absent
 * and say so, and the Darts and MARISA rows through build/tokbench, whose
 * setup checks both libraries against the dat layout on every Llama 3 key
 * (a row fails if one disagrees).  No timing is checked. */
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
#include <sqlite3.h>

#include "../experiments/drivers/driver.h"
#include "support.h"

#define LLAMA3 "data/cache/llama3/tokenizer.json"

typedef struct {
    xp_row_t row;
    xp_env_t env;
    void *state;
    tb_err_t err;
} one_case_t;

/* Sets up the lookup driver on one row; returns setup's result. */
static int setup_row(one_case_t *c, const char *layout, const char *pattern,
                     const char *corpus, const char *options)
{
    const char *f[7] = {"lookup", "llama3", layout, pattern, corpus, "tsc", options};
    memset(c, 0, sizeof *c);
    assert_int_equal(xp_row_init(&c->row, f, 1), 0);
    const xp_driver_t *d = xp_driver_find("lookup");
    assert_non_null(d);
    return d->setup(&c->row, &c->env, &c->state, &c->err);
}

static void finish_row(one_case_t *c)
{
    if (c->state)
        xp_driver_find("lookup")->teardown(c->state);
    xp_env_free(&c->env);
    xp_row_free(&c->row);
}

/* The value of a recorded static figure, or -1. */
static double figure(const xp_env_t *env, const char *metric, unsigned rep)
{
    for (size_t i = 0; i < env->meas.len; i++)
        if (!strcmp(env->meas.data[i].metric, metric) && env->meas.data[i].rep == rep)
            return env->meas.data[i].value;
    return -1;
}

static void options_and_figures(void **state)
{
    (void)state;
    test_need_file(LLAMA3);
    const xp_driver_t *d = xp_driver_find("lookup");
    one_case_t c;
    assert_int_equal(setup_row(&c, "dat", "exact", "", "order=sideways"), -1);
    assert_non_null(strstr(c.err.msg, "order=sideways: expected random or sorted"));
    finish_row(&c);
    assert_int_equal(setup_row(&c, "dat", "exact", "", "nul=drop"), -1);
    assert_non_null(strstr(c.err.msg, "nul=drop"));
    finish_row(&c);
    assert_int_equal(setup_row(&c, "nosuch", "exact", "", ""), -1);
    assert_non_null(strstr(c.err.msg, "no trie layout or external library 'nosuch'"));
    finish_row(&c);

    /* Sorted and random orders look up the same keys: same sink. */
    uint64_t sink[2];
    const char *orders[2] = {"order=sorted", "order=random"};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(setup_row(&c, "dfs", "exact", "", orders[i]), 0);
        xp_qty_t q = {0};
        assert_int_equal(d->rep(c.state, 0, &q, &c.err), 0);
        sink[i] = q.sink;
        assert_true(q.items > 100000);
        finish_row(&c);
    }
    assert_true(sink[0] == sink[1]);

    /* Llama 3 has one key with a NUL byte; nul=omit leaves it out and the
     * figures say so. */
    assert_int_equal(setup_row(&c, "dfs", "prefixes", "", "nul=omit order=sorted"), 0);
    assert_int_equal(d->extra(c.state, &c.row, &c.env, &c.err), 0);
    double keys = figure(&c.env, "keys", 0), nul = figure(&c.env, "keys_with_nul", 0);
    assert_true(nul >= 1);
    assert_true(figure(&c.env, "keys_left_out", 0) == nul);
    assert_true(figure(&c.env, "trie_nodes", 0) > keys);
    assert_true(figure(&c.env, "bytes_per_key", 0) ==
                figure(&c.env, "trie_bytes", 0) / keys);
    assert_true(figure(&c.env, "build_ns", 2) > 0); /* three builds */
    finish_row(&c);
    assert_int_equal(setup_row(&c, "dfs", "exact", "", ""), 0);
    assert_int_equal(d->extra(c.state, &c.row, &c.env, &c.err), 0);
    assert_true(figure(&c.env, "keys", 0) == keys + nul);
    assert_true(figure(&c.env, "keys_left_out", 0) == 0);
    finish_row(&c);

    /* A lookup row never walks, so dat's bytes are its 4-byte units (and a
     * small header): the child chain a walk adds (2 bytes a unit) is not
     * built.  That is the figure the comparison with Darts is about. */
    assert_int_equal(setup_row(&c, "dat", "exact", "", ""), 0);
    assert_int_equal(d->extra(c.state, &c.row, &c.env, &c.err), 0);
    double units = figure(&c.env, "trie_nodes", 0);
    assert_true(figure(&c.env, "trie_bytes", 0) >= 4 * units);
    assert_true(figure(&c.env, "trie_bytes", 0) < 4 * units + 4096);
    finish_row(&c);
}

/* This program is linked with libtokbench.a alone: no Darts, no MARISA. */
static void externals_absent_from_the_library(void **state)
{
    (void)state;
    test_need_file(LLAMA3);
    one_case_t c;
    assert_int_equal(setup_row(&c, "darts", "exact", "", ""), -1);
    assert_non_null(strstr(c.err.msg, "darts is an external library linked into "
                           "build/tokbench only"));
    finish_row(&c);
    assert_int_equal(setup_row(&c, "marisa", "exact", "", ""), -1);
    assert_non_null(strstr(c.err.msg, "marisa is an external library"));
    finish_row(&c);
}

/* The binary runs Darts and MARISA rows beside dat: every case ok (setup
 * compared both with dat on every key), figures under the libraries'
 * names, measurements from the tsc source. */
static void tokbench_runs_external_rows(void **state)
{
    (void)state;
    test_need_file(LLAMA3);
    char dir[] = "/tmp/tb_lookup_XXXXXX", suite[64], db[64];
    FILE *f = test_run_dir(dir, suite, db, sizeof suite);
    fputs("lookup,llama3,darts,exact,,1,tsc,order=sorted\n"
          "lookup,llama3,marisa,exact,,1,tsc,order=random\n"
          "lookup,llama3,darts,prefixes,multi,1,tsc,max_bytes=20000\n"
          "lookup,llama3,marisa,prefixes,,1,tsc,nul=omit\n"
          "lookup,llama3,dat,exact,,1,tsc,order=random\n", f);
    fclose(f);
    char cmd[256];
    static char out[1 << 16];
    snprintf(cmd, sizeof cmd, "run %s --db %s --quiet", suite, db);
    if (test_tokbench(cmd, out, sizeof out) != 0)
        fail_msg("%s", out);
    sqlite3 *d;
    assert_int_equal(sqlite3_open(db, &d), SQLITE_OK);
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM cases WHERE status = 'ok'"), 5);
    assert_int_equal(test_sql_int(d, "SELECT count(DISTINCT case_id) FROM measurements "
                           "WHERE impl = 'darts' AND metric = 'trie_bytes'"), 2);
    assert_int_equal(test_sql_int(d, "SELECT count(DISTINCT case_id) FROM measurements "
                           "WHERE impl = 'marisa' AND metric = 'build_ns'"), 2);
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM measurements WHERE "
                           "metric = 'keys_left_out' AND value > 0"), 1);
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM measurements WHERE "
                           "source = 'tsc' AND metric = 'ns'"), 5);
    sqlite3_close(d);
    test_run_dir_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(options_and_figures),
        cmocka_unit_test(externals_absent_from_the_library),
        cmocka_unit_test(tokbench_runs_external_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
