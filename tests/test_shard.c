/* test_shard: `tokbench run --shard K/N` and `tokbench merge` joining the
 * shards.  The suite tests/fixtures/xp_shards.csv (selftest rows around a
 * MaskBench case on the files of tests/maskbench, Llama 3) runs whole and
 * as two shards: each whole row runs in exactly one shard and the MaskBench
 * schemas split by their index (XGrammar's sample, every 3rd, too, where
 * node and its package are installed); the merged database holds one
 * joined run whose cases, outcomes and sample counts are the whole run's
 * (its mask cache figures too, added up over the shards), and a report of
 * it builds.  A missing shard leaves the joined run incomplete and says
 * which; the shard that arrives later completes it; merging again adds
 * nothing; shards of different commits are not joined; a bad --shard is a
 * usage error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "support.h"

#define SUITE "tests/fixtures/xp_shards.csv"

static char dir[] = "/tmp/tokbench-test-shard-XXXXXX";
static char out[1 << 16];

#define tb(...) test_tokbenchf(out, sizeof out, __VA_ARGS__)

/* The path of `name` in the test's folder. */
static const char *at(const char *name)
{
    static char p[4][600];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

/* Opens `name` with the whole run's database attached as "u". */
static sqlite3 *open_with_whole(const char *name)
{
    sqlite3 *d;
    if (sqlite3_open_v2(at(name), &d, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
        fail_msg("%s: %s", name, sqlite3_errmsg(d));
    char sql[800];
    snprintf(sql, sizeof sql, "ATTACH '%s' AS u", at("whole.db"));
    assert_int_equal(sqlite3_exec(d, sql, NULL, NULL, NULL), SQLITE_OK);
    return d;
}

/* The whole suite, then its two shards, one after the other. */
static int setup(void **state)
{
    (void)state;
    test_tmpdir(dir);
    if (tb("run " SUITE " --db %s --quiet", at("whole.db")) ||
        tb("run " SUITE " --shard 1/2 --db %s --quiet", at("r1.db")) ||
        tb("run " SUITE " --shard 2/2 --db %s --quiet", at("r2.db"))) {
        fprintf(stderr, "tokbench run failed:\n%s\n", out);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return test_rm_tree(dir);
}

/* Each shard runs whole rows i with i mod 2 == K - 1 and the MaskBench
 * schemas of the same rule by their sorted index; together, everything
 * once. */
static void test_split(void **state)
{
    (void)state;
    for (int k = 1; k <= 2; k++) {
        char name[8];
        snprintf(name, sizeof name, "r%d.db", k);
        sqlite3 *d = open_with_whole(name);
        assert_int_equal(test_sql_int(d, "SELECT shard * 10 + shards FROM runs"), k * 10 + 2);
        char sql[600];
        /* whole rows: 0 and 2 of the selftests' positions 0, 1, 3 */
        snprintf(sql, sizeof sql, "SELECT count(*) FROM cases WHERE experiment = 'selftest'"
                 " AND seq %% 2 <> %d", k - 1);
        assert_int_equal(test_sql_int(d, sql), 0);
        assert_int_equal(test_sql_int(d, "SELECT count(*) FROM cases WHERE experiment ="
                                         " 'maskbench' AND split = 1 AND status = 'ok'"), 1);
        /* the schemas: rank r in the whole run's sorted list, r mod 2 */
        snprintf(sql, sizeof sql, "SELECT count(*) FROM outcomes o WHERE (SELECT count(*)"
                 " FROM u.outcomes w WHERE w.impl = o.impl AND w.item < o.item) %% 2 <> %d"
                 " AND o.impl = 'tokbench'", k - 1);
        assert_int_equal(test_sql_int(d, sql), 0);
        assert_true(test_sql_int(d, "SELECT count(*) FROM outcomes") > 0);
        sqlite3_close(d);
    }
    sqlite3 *d = open_with_whole("r1.db");
    snprintf(out, sizeof out, "ATTACH '%s' AS r2", at("r2.db"));
    assert_int_equal(sqlite3_exec(d, out, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM (SELECT seq FROM cases UNION ALL"
                                     " SELECT seq FROM r2.cases WHERE experiment <>"
                                     " 'maskbench')"), test_sql_int(d, "SELECT count(*) FROM"
                                                                       " u.cases"));
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM (SELECT impl, item FROM outcomes"
                                     " UNION SELECT impl, item FROM r2.outcomes)"),
                     test_sql_int(d, "SELECT count(*) FROM u.outcomes"));
    sqlite3_close(d);
}

/* Rows of `a` not in `b` plus rows of `b` not in `a`. */
static long long differing(sqlite3 *d, const char *a, const char *b)
{
    char sql[2000];
    snprintf(sql, sizeof sql, "SELECT (SELECT count(*) FROM (%s EXCEPT %s)) + (SELECT"
             " count(*) FROM (%s EXCEPT %s))", a, b, b, a);
    return test_sql_int(d, sql);
}

/* The joined run: the whole run's cases, outcomes and sample counts. */
static void test_joined_equals_whole(void **state)
{
    (void)state;
    assert_int_equal(tb("merge %s %s %s", at("all.db"), at("r1.db"), at("r2.db")), 0);
    assert_non_null(strstr(out, "2 of 2 present, 2 complete"));
    sqlite3 *d = open_with_whole("all.db");
    long long run = test_sql_int(d, "SELECT id FROM runs WHERE shard = 0");
    assert_true(run > 0);
    assert_int_equal(test_sql_int(d, "SELECT max(id) FROM runs"), run);
    assert_int_equal(test_sql_int(d, "SELECT status = 'complete' AND note LIKE 'joined by"
                                     " tokbench merge from shards 1, 2 of 2%' FROM runs"
                                     " WHERE shard = 0"), 1);
    static const char *const pairs[][2] = {
        {"SELECT seq, line, experiment, status, split FROM cases WHERE run_id ="
         " (SELECT id FROM runs WHERE shard = 0)",
         "SELECT seq, line, experiment, status, split FROM u.cases"},
        {"SELECT impl, item, outcome, detail, tokens, masks FROM outcomes o JOIN cases c ON"
         " c.id = o.case_id JOIN runs r ON r.id = c.run_id WHERE r.shard = 0",
         "SELECT impl, item, outcome, detail, tokens, masks FROM u.outcomes"},
        /* the samples; a case's totals (the mask cache's) are one row a
         * shard, which their reader adds up (below) */
        {"SELECT c.seq, source, impl, metric, count(*) FROM measurements m JOIN cases c ON"
         " c.id = m.case_id JOIN runs r ON r.id = c.run_id WHERE r.shard = 0 AND metric NOT"
         " LIKE 'mask\\_cache%' ESCAPE '\\' GROUP BY c.seq, source, impl, metric",
         "SELECT c.seq, source, impl, metric, count(*) FROM u.measurements m JOIN u.cases c"
         " ON c.id = m.case_id WHERE metric NOT LIKE 'mask\\_cache%' ESCAPE '\\' GROUP BY"
         " c.seq, source, impl, metric"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
        if (differing(d, pairs[i][0], pairs[i][1]))
            fail_msg("joined and whole runs differ: %s", pairs[i][1]);
    assert_true(test_sql_int(d, "SELECT count(*) FROM u.outcomes") > 4);
    char want[400];
    assert_int_equal(tb("show 1 --db %s", at("whole.db")), 0);
    const char *cache = strstr(out, "mask cache:");
    assert_non_null(cache);
    snprintf(want, sizeof want, "%.*s", (int)strcspn(cache, "\n"), cache);
    assert_int_equal(tb("show %lld --db %s", run, at("all.db")), 0);
    if (!strstr(out, want))
        fail_msg("the joined run's MaskBench note lacks \"%s\"", want);
    sqlite3_close(d);
    /* the report takes the joined run, the latest, and says so */
    assert_int_equal(tb("report --db %s --out %s", at("all.db"), at("report")), 0);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "grep -q '| shards | joined by tokbench merge from shards 1, 2 of"
             " 2' '%s/index.md'", at("report"));
    assert_int_equal(system(cmd), 0);
    /* merging the same files again adds nothing and joins nothing */
    assert_int_equal(tb("merge %s %s %s", at("all.db"), at("r1.db"), at("r2.db")), 0);
    assert_null(strstr(out, "joins"));
    d = open_with_whole("all.db");
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM runs"), 3);
    sqlite3_close(d);
}

/* Shard 2 missing: an incomplete joined run that names it, a MaskBench
 * case that says whose items it holds; then shard 2 completes it. */
static void test_missing_shard(void **state)
{
    (void)state;
    assert_int_equal(tb("merge %s %s", at("part.db"), at("r1.db")), 0);
    assert_non_null(strstr(out, "1 of 2 present"));
    sqlite3 *d = open_with_whole("part.db");
    assert_int_equal(test_sql_int(d, "SELECT status = 'incomplete' AND note LIKE '%missing"
                                     " shards 2 of 2%' FROM runs WHERE shard = 0"), 1);
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM cases c JOIN runs r ON r.id ="
                                     " c.run_id WHERE r.shard = 0 AND c.split = 1 AND"
                                     " c.message LIKE '%the items of shard 1 of 2 only%'"), 1);
    sqlite3_close(d);
    assert_int_equal(tb("report --db %s --out %s", at("part.db"), at("report-part")), 0);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "grep -q 'missing shards 2 of 2' '%s/index.md'",
             at("report-part"));
    assert_int_equal(system(cmd), 0);
    assert_int_equal(tb("merge %s %s", at("part.db"), at("r2.db")), 0);
    d = open_with_whole("part.db");
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM runs WHERE shard = 0"), 1);
    assert_int_equal(test_sql_int(d, "SELECT status = 'complete' FROM runs WHERE shard = 0"), 1);
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM outcomes o JOIN cases c ON c.id ="
                                     " o.case_id JOIN runs r ON r.id = c.run_id WHERE"
                                     " r.shard = 0"),
                     test_sql_int(d, "SELECT count(*) FROM u.outcomes"));
    sqlite3_close(d);
}

/* A shard of another commit under the same key is not joined. */
static void test_other_commit_not_joined(void **state)
{
    (void)state;
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && sqlite3 '%s' \"UPDATE runs SET git_commit ="
             " 'elsewhere', run_key = run_key || '-x'\"", at("r2.db"), at("r2x.db"),
             at("r2x.db"));
    assert_int_equal(system(cmd), 0);
    assert_int_equal(tb("merge %s %s %s", at("mixed.db"), at("r1.db"), at("r2x.db")), 1);
    assert_non_null(strstr(out, "different commits or suites: not joined"));
    sqlite3 *d = open_with_whole("mixed.db");
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM runs WHERE shard = 0"), 0);
    sqlite3_close(d);
}

static void test_bad_shard(void **state)
{
    (void)state;
    static const char *const bad[] = {"3/2", "0/2", "1/0", "a/2", "2", "1/2x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(tb("run " SUITE " --shard %s --db %s", bad[i], at("bad.db")), 2);
        assert_non_null(strstr(out, "--shard"));
    }
    assert_int_equal(tb("run " SUITE " --shard-key k --db %s", at("bad.db")), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_joined_equals_whole),
        cmocka_unit_test(test_missing_shard),
        cmocka_unit_test(test_other_commit_not_joined),
        cmocka_unit_test(test_bad_shard),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
