/* test_maskbench: the maskbench experiment end to end on the MaskBench
 * files of tests/maskbench (one per outcome: passing, a keyword the
 * compiler refuses, an invalid instance refused, a valid-labelled instance
 * the schema refuses, an invalid-labelled one it accepts, a malformed
 * file, a schema that allows no value) through `tokbench run` on Llama 3: the outcomes table row by row,
 * the TTFM and TBM measurements against the outcomes' counts, and the
 * MaskBench table with those counts in `tokbench show` and `tokbench
 * report` (with its distribution plots, compile errors by reason and the
 * failures); a missing data directory is a failed case whose reason the
 * show and the report repeat as "not measured"; XGrammar's sample (node
 * and scripts/ref/xgrammar.js) and llguidance's (`make llguidance-ref`,
 * run on every file here and on 4 files of ../shared/maskbench/data) land
 * under their own impl with the same outcome names, their masks compared
 * with tokbench's; an overlapping oneOf is an invalidation error as anyOf
 * and a compile error under strict_oneof. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "../base/file.h"
#include "support.h"

static char dir[] = "/tmp/tokbench-test-maskbench-XXXXXX";
static char suite[600], db[600];

/* Runs `tokbench ARGS` into out, returning its exit status: 1 MiB, since
 * the mask comparisons list every differing point on stderr before a
 * failure's message. */
static char out[1 << 20];

#define tb(...) test_tokbenchf(out, sizeof out, __VA_ARGS__)

static sqlite3 *open_db(void)
{
    sqlite3 *d;
    if (sqlite3_open_v2(db, &d, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        fail_msg("%s: %s", db, sqlite3_errmsg(d));
    return d;
}

/* Run 1: the six files; run 2: a data directory that is not there. */
static int setup(void **state)
{
    (void)state;
    FILE *f = test_run_dir(dir, suite, db, sizeof suite);
    fprintf(f, "maskbench,llama3,dfs,tests/maskbench,,1,,workers=2\n");
    fclose(f);
    if (tb("run %s --db %s --quiet", suite, db)) {
        fprintf(stderr, "tokbench run failed:\n%s\n", out);
        return -1;
    }
    f = fopen(suite, "w");
    fprintf(f, "experiment,vocabulary,layout,pattern,corpus,repetitions,sources,options\n"
               "maskbench,llama3,dfs,%s/missing,,1,,\n", dir);
    fclose(f);
    tb("run %s --db %s --quiet", suite, db); /* fails: its case fails */
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return test_rm_tree(dir);
}

static void test_outcomes_rows(void **state)
{
    (void)state;
    static const char *const want[][3] = {
        {"a_passing.json", "passing", ""},
        {"b_not.json", "compile error",
         "#/properties/a/not: 'not' of 'uniqueItems' is not supported"},
        {"c_refused.json", "passing", ""},
        {"d_validation.json", "validation error", "instance 0: token "},
        {"e_invalidation.json", "invalidation error", "instance 0 accepted"},
        {"f_malformed.json", "compile error", "tests/maskbench/f_malformed.json:3:"},
        {"g_empty.json", "passing", ""},
    };
    sqlite3 *d = open_db();
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(d, "SELECT item, outcome, ifnull(detail, ''),"
                                           " ttfm_us, masks, tokens FROM outcomes o JOIN"
                                           " cases c ON c.id = o.case_id WHERE c.run_id = 1"
                                           " AND o.impl = 'tokbench' ORDER BY item", -1, &st,
                                        NULL), SQLITE_OK);
    size_t n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        assert_true(n < 7);
        const char *item = (const char *)sqlite3_column_text(st, 0);
        const char *outcome = (const char *)sqlite3_column_text(st, 1);
        const char *detail = (const char *)sqlite3_column_text(st, 2);
        assert_string_equal(item, want[n][0]);
        assert_string_equal(outcome, want[n][1]);
        if (!strstr(detail, want[n][2]))
            fail_msg("%s: detail \"%s\" lacks \"%s\"", item, detail, want[n][2]);
        int compiled = strcmp(outcome, "compile error") != 0;
        int empty = !strcmp(item, "g_empty.json");
        /* compiled schemas have a TTFM and masks; others neither; a schema
         * that allows no value (GR_SCHEMA_EMPTY) has a TTFM (its empty
         * first mask) and no instance to feed */
        assert_int_equal(sqlite3_column_double(st, 3) > 0, compiled);
        assert_int_equal(sqlite3_column_int(st, 4) > 0, compiled && !empty);
        assert_int_equal(sqlite3_column_int(st, 5) > 0, compiled && !empty);
        n++;
    }
    sqlite3_finalize(st);
    assert_int_equal(n, 7);
    /* a refused token is named, of the instance's tokens, and "refused" */
    long long at = test_sql_int(d, "SELECT CAST(substr(detail, 19) AS INTEGER) FROM outcomes"
                                   " WHERE item = 'd_validation.json'");
    assert_true(at > 0);
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM outcomes WHERE item ="
                                     " 'd_validation.json' AND detail LIKE '% refused'"), 1);
    /* one TTFM pair per compiled schema, one TBM pair per mask */
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM measurements WHERE impl ="
                                     " 'tokbench' AND metric = 'ttfm_us'"), 5);
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM measurements WHERE impl ="
                                     " 'tokbench' AND metric = 'ttfm_cpu_us'"), 5);
    long long masks = test_sql_int(d, "SELECT sum(masks) FROM outcomes o JOIN cases c ON"
                                      " c.id = o.case_id WHERE c.run_id = 1");
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM measurements m JOIN cases c ON"
                                     " c.id = m.case_id WHERE c.run_id = 1 AND"
                                     " metric = 'tbm_us'"), masks);
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM measurements m JOIN cases c ON"
                                     " c.id = m.case_id WHERE c.run_id = 1 AND"
                                     " metric = 'tbm_cpu_us'"), masks);
    /* every mask asked the cache once: the TBM masks and the first mask of
     * the four schemas that made a matcher (g_empty has none) */
    assert_int_equal(test_sql_int(d, "SELECT sum(value) FROM measurements WHERE metric IN"
                                     " ('mask_cache_hits', 'mask_cache_misses')"), masks + 4);
    assert_true(test_sql_int(d, "SELECT value FROM measurements WHERE"
                                " metric = 'mask_cache_max_bytes'") > 0);
    sqlite3_close(d);
}

/* The line of `text` that starts with `head` (after blanks), or fails. */
static const char *line_of(const char *text, const char *head)
{
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        const char *q = p + strspn(p, " ");
        if (!strncmp(q, head, strlen(head)))
            return q;
    }
    fail_msg("no line starting \"%s\" in:\n%s", head, text);
    return NULL;
}

/* The counts of run 1 as the MaskBench table writes them. */
static const char *const counts[][2] = {
    {"schemas ", "7"},
    {"passing ", "3 (42.9%)"},
    {"compile error ", "2 (28.6%)"},
    {"crash ", "0 (0.0%)"},
    {"timeout ", "0 (0.0%)"},
    {"validation error ", "1 (14.3%)"},
    {"invalidation error ", "1 (14.3%)"},
};

static void test_show_table(void **state)
{
    (void)state;
    assert_int_equal(tb("show 1 --db %s", db), 0);
    const char *t = strstr(out, "MaskBench (times in us):");
    assert_non_null(t);
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        const char *l = line_of(t, counts[i][0]);
        char cell[32];
        /* the tokbench column follows the row's name */
        const char *v = l + strlen(counts[i][0]) + strspn(l + strlen(counts[i][0]), " ");
        snprintf(cell, sizeof cell, "%.*s", (int)strlen(counts[i][1]), v);
        if (strcmp(cell, counts[i][1]))
            fail_msg("show: row %s: \"%s\", want \"%s\"", counts[i][0], l, counts[i][1]);
    }
    /* times are figures; the published columns are labelled */
    const char *p50 = line_of(t, "TBM p50 ") + strlen("TBM p50 ");
    assert_true(strspn(p50 + strspn(p50, " "), "0123456789.") > 0);
    assert_non_null(strstr(t, "(published, other machine)"));
    assert_int_equal(tb("show 2 --db %s", db), 0);
    assert_non_null(strstr(out, "MaskBench: not measured: MaskBench data directory"));
}

static char *read_page(const char *name)
{
    char p[700];
    uint8_t *text;
    size_t len;
    tb_err_t err;
    snprintf(p, sizeof p, "%s/report/%s", dir, name);
    if (tb_read_file(p, &text, &len, &err))
        fail_msg("%s", err.msg);
    return (char *)text;
}

static void test_report_table(void **state)
{
    (void)state;
    if (tb("report --db %s --run 1 --out %s/report", db, dir))
        fail_msg("report failed:\n%s", out);
    char *md = read_page("index.md");
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        char want[80];
        snprintf(want, sizeof want, "| %s| %s |", counts[i][0], counts[i][1]);
        if (!strstr(md, want))
            fail_msg("index.md lacks \"%s\"", want);
    }
    assert_non_null(strstr(md, "![maskbench](maskbench.png)"));
    assert_non_null(strstr(md, "![maskbench_ttfm](maskbench_ttfm.png)"));
    assert_non_null(strstr(md, "(published, other machine)"));
    /* compile errors grouped, failures listed with their detail */
    assert_non_null(strstr(md, "| tokbench | 'not' of | 1 | b_not.json: "));
    assert_non_null(strstr(md, "| tokbench | d_validation.json | validation error | "
                               "instance 0: token "));
    assert_non_null(strstr(md, "| tokbench | e_invalidation.json | invalidation error | "
                               "instance 0 accepted |"));
    free(md);
    char *html = read_page("index.html");
    assert_non_null(strstr(html, "<img src=\"maskbench.png\""));
    free(html);
    /* the missing directory: the section says why, nothing is drawn */
    if (tb("report --db %s --run 2 --out %s/report", db, dir))
        fail_msg("report failed:\n%s", out);
    md = read_page("index.md");
    assert_non_null(strstr(md, "Not measured: MaskBench data directory"));
    assert_null(strstr(md, "![maskbench](maskbench.png)"));
    free(md);
    char png[700];
    snprintf(png, sizeof png, "%s/report/maskbench.png", dir);
    assert_int_not_equal(access(png, F_OK), 0);
}

static void test_missing_directory(void **state)
{
    (void)state;
    sqlite3 *d = open_db();
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM cases WHERE run_id = 2 AND"
                                     " status = 'failed' AND message LIKE"
                                     " 'MaskBench data directory ''%/missing'': No such file%'"),
                     1);
    sqlite3_close(d);
}

/* XGrammar on every 2nd file (b, d, f): its outcomes under impl
 * "xgrammar", with the outcome names of tokbench's; its masks compared
 * with tokbench's under impl "xgrammar masks". */
static void test_xgrammar_sample(void **state)
{
    (void)state;
    test_need_file("scripts/ref/node_modules/@mlc-ai/web-xgrammar/package.json");
    FILE *f = fopen(suite, "w");
    fprintf(f, "experiment,vocabulary,layout,pattern,corpus,repetitions,sources,options\n"
               "maskbench,llama3,dfs,tests/maskbench,,1,,xgrammar=2 xgtimeout=60 xgmasks=3\n");
    fclose(f);
    if (tb("run %s --db %s --quiet", suite, db))
        fail_msg("run failed:\n%s", out);
    sqlite3 *d = open_db();
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM outcomes WHERE impl = 'xgrammar'"
                                     " AND item IN ('b_not.json', 'd_validation.json',"
                                     " 'f_malformed.json') AND outcome IN ('passing',"
                                     " 'compile error', 'validation error', 'invalidation"
                                     " error', 'timeout', 'crash')"), 3);
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM outcomes WHERE impl = 'xgrammar'"),
                     3);
    /* a file that is not JSON is a compile error for both */
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM outcomes WHERE impl = 'xgrammar'"
                                     " AND item = 'f_malformed.json' AND outcome ="
                                     " 'compile error'"), 1);
    /* the schema refuses the instance whatever the engine */
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM outcomes WHERE impl = 'xgrammar'"
                                     " AND item = 'd_validation.json' AND outcome ="
                                     " 'validation error'"), 1);
    assert_true(test_sql_int(d, "SELECT count(*) FROM measurements WHERE impl = 'xgrammar'"
                                " AND metric = 'tbm_us'") > 0);
    /* masks against XGrammar's where both engines compiled: d only (b's
     * `not` and f are compile errors here); its differences are all known
     * ones (whitespace JSON allows and any_whitespace leaves out; other
     * names before the required n, which XGrammar wants first), and both
     * refuse 12 at the same token: the 5 masks up to it are compared */
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM outcomes WHERE"
                                     " impl = 'xgrammar masks'"), 1);
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM outcomes WHERE"
                                     " impl = 'xgrammar masks' AND item = 'd_validation.json'"
                                     " AND outcome = 'explained differences' AND masks = 5"
                                     " AND detail LIKE '%carriage return%property order%'"), 1);
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM cases WHERE run_id = 3 AND"
                                     " status = 'ok' AND ifnull(message, '') NOT LIKE '%xgrammar%'"), 1);
    sqlite3_close(d);
    assert_int_equal(tb("show 3 --db %s", db), 0);
    assert_non_null(strstr(out, "XGrammar 0.1.27, wall (sample of 3 schemas)"));
}

/* llguidance on every file and on the first 4 of every 200th MaskBench file
 * (limit=4), with
 * masks: outcomes under impl "llguidance" with thread CPU
 * samples, and masks compared where both engines ran.  Skipped, saying
 * why, without the built reference or the data. */
static void test_llguidance_sample(void **state)
{
    (void)state;
    static const char bin[] = "build/llguidance/target/release/tb-llguidance";
    if (access(bin, X_OK) || access("../shared/maskbench/data", R_OK)) {
        fprintf(stderr, "test_llguidance_sample: skipped: no %s (make llguidance-ref) or no "
                "../shared/maskbench/data\n", access(bin, X_OK) ? bin : "data");
        skip();
    }
    char db2[760];
    snprintf(db2, sizeof db2, "%s/llg.db", dir);
    FILE *f = fopen(suite, "w");
    fprintf(f, "experiment,vocabulary,layout,pattern,corpus,repetitions,sources,options\n"
               "maskbench,llama3,dfs,tests/maskbench,,1,,llguidance=1 llgtimeout=60 llgmasks=7\n"
               "maskbench,llama3,dfs,../shared/maskbench/data,,1,,every=200 limit=4"
               " strict_oneof llguidance=1 llgmasks=4\n");
    fclose(f);
    if (tb("run %s --db %s --quiet", suite, db2))
        fail_msg("run failed:\n%s", out);
    sqlite3 *d;
    assert_int_equal(sqlite3_open_v2(db2, &d, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    /* every file measured, under the outcome names of tokbench's */
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM outcomes o JOIN cases c ON"
                                     " o.case_id = c.id WHERE c.seq = 0 AND impl = 'llguidance'"
                                     " AND outcome IN ('passing', 'compile error', 'validation"
                                     " error', 'invalidation error')"), 7);
    /* not JSON: a compile error for both; the instance the schema refuses */
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM outcomes WHERE impl = 'llguidance'"
                                     " AND item = 'f_malformed.json' AND outcome ="
                                     " 'compile error'"), 1);
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM outcomes WHERE impl = 'llguidance'"
                                     " AND item = 'd_validation.json' AND outcome ="
                                     " 'validation error'"), 1);
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM outcomes WHERE impl = 'llguidance'"
                                     " AND item LIKE '%---%'"), 4);
    /* a thread CPU sample beside each wall one */
    int wall = test_sql_int(d, "SELECT count(*) FROM measurements WHERE impl = 'llguidance'"
                               " AND metric = 'tbm_us'");
    assert_true(wall > 0);
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM measurements WHERE"
                                     " impl = 'llguidance' AND metric = 'tbm_cpu_us'"), wall);
    /* masks compared wherever both engines ran, none unexplained on these */
    assert_true(test_sql_int(d, "SELECT count(*) FROM outcomes WHERE impl = 'llguidance masks'"
                                " AND masks > 0") >= 3);
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM outcomes WHERE"
                                     " impl = 'llguidance masks' AND outcome NOT IN ('same',"
                                     " 'explained differences', 'not compared')"), 0);
    sqlite3_close(d);
}

/* A oneOf whose branches overlap (1 is an integer and a number >= 0):
 * read as anyOf by default, so an instance matching both branches, which
 * oneOf forbids, is accepted (an invalidation error); strict_oneof writes
 * it exactly instead (each branch and not the other), so it passes. */
static void test_strict_oneof(void **state)
{
    (void)state;
    char data[700], file[760], suite2[760], db2[760];
    snprintf(data, sizeof data, "%s/oneof", dir);
    snprintf(file, sizeof file, "%s/g_oneof.json", data);
    snprintf(suite2, sizeof suite2, "%s/oneof.csv", dir);
    assert_int_equal(mkdir(data, 0755), 0);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fputs("{\"schema\": {\"oneOf\": [{\"type\": \"integer\"}, {\"type\": \"number\","
          " \"minimum\": 0}]},\n \"tests\": [{\"valid\": false, \"data\": 1},"
          " {\"valid\": true, \"data\": -1}]}\n", f);
    fclose(f);
    static const char *const opts[] = {"", "strict_oneof"};
    static const char *const want[][2] = {
        {"invalidation error", "instance 0 accepted"},
        {"passing", ""},
    };
    for (int k = 0; k < 2; k++) {
        snprintf(db2, sizeof db2, "%s/oneof-%d.db", dir, k);
        f = fopen(suite2, "w");
        assert_non_null(f);
        fprintf(f, "experiment,vocabulary,layout,pattern,corpus,repetitions,sources,options\n"
                   "maskbench,llama3,dfs,%s,,1,,%s\n", data, opts[k]);
        fclose(f);
        if (tb("run %s --db %s --quiet", suite2, db2))
            fail_msg("run failed:\n%s", out);
        sqlite3 *d;
        assert_int_equal(sqlite3_open_v2(db2, &d, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
        char q[300];
        snprintf(q, sizeof q, "SELECT count(*) FROM outcomes WHERE item = 'g_oneof.json' AND"
                              " outcome = '%s' AND ifnull(detail, '') LIKE '%%%s%%'", want[k][0], want[k][1]);
        if (test_sql_int(d, q) != 1)
            fail_msg("%s: want %s (%s)", opts[k][0] ? opts[k] : "default", want[k][0],
                     want[k][1]);
        sqlite3_close(d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_outcomes_rows),
        cmocka_unit_test(test_show_table),
        cmocka_unit_test(test_report_table),
        cmocka_unit_test(test_missing_directory),
        cmocka_unit_test(test_xgrammar_sample),
        cmocka_unit_test(test_llguidance_sample),
        cmocka_unit_test(test_strict_oneof),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
