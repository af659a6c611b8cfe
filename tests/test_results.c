/* test_results: the SQLite store and the runner's reliability: schema and
 * migrations, WAL and busy timeout, refusing files that are not ours
 * without touching them, failing cases recorded, two runs writing one
 * database at once, and Ctrl-C in the middle of a suite. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../base/file.h"
#include "../experiments/counters/counters.h"
#include "../experiments/store/anchors.h"
#include "../experiments/store/results.h"
#include "../experiments/drivers/runner.h"
#include "support.h"

static char dir[] = "/tmp/tokbench-test-results-XXXXXX";

static void db_path(const char *name, char *out, size_t size)
{
    snprintf(out, size, "%s/%s", dir, name);
}

static void q_text(sqlite3 *db, const char *sql, char *out, size_t size)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    out[0] = 0;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(out, size, "%s", sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
}

static void test_fresh_schema_wal_busy(void **state)
{
    (void)state;
    char p[512], mode[16];
    tb_err_t err;
    db_path("fresh.db", p, sizeof p);
    xp_db_t *d = xp_db_open(p, 1, &err);
    assert_non_null(d);
    assert_int_equal(test_sql_int(d->db, "PRAGMA user_version"), XP_DB_SCHEMA);
    assert_int_equal(test_sql_int(d->db, "PRAGMA application_id"), XP_DB_APP_ID);
    assert_int_equal(test_sql_int(d->db, "PRAGMA busy_timeout"), XP_DB_BUSY_MS);
    q_text(d->db, "PRAGMA journal_mode", mode, sizeof mode);
    assert_string_equal(mode, "wal");
    assert_int_equal(test_sql_int(d->db, "SELECT count(*) FROM sqlite_master WHERE name IN"
                                         " ('runs', 'cases', 'measurements', 'inputs',"
                                         " 'metric_stats')"), 5);
    xp_db_close(d);
    /* reopening an up-to-date database changes nothing */
    d = xp_db_open(p, 0, &err);
    assert_non_null(d);
    assert_int_equal(test_sql_int(d->db, "PRAGMA user_version"), XP_DB_SCHEMA);
    xp_db_close(d);
    db_path("missing.db", p, sizeof p);
    assert_null(xp_db_open(p, 0, &err));
    assert_non_null(strstr(err.msg, "no such results database"));
}

/* A database at schema `version` holding one run, one case of
 * `experiment` and the rows that `measurements` (SQL) inserts, written as
 * a tokbench of that schema would, not opened since. */
static void old_db(const char *p, int version, const char *experiment,
                   const char *measurements)
{
    tb_err_t err;
    assert_int_equal(xp_db_create_at(p, version, &err), 0);
    sqlite3 *raw;
    char sql[2048];
    snprintf(sql, sizeof sql,
             "INSERT INTO runs(id, suite, started, status) VALUES (1, 's', 't', 'complete');"
             "INSERT INTO cases(id, run_id, seq, experiment, status) VALUES"
             " (1, 1, 0, '%s', 'ok'); %s", experiment, measurements);
    assert_int_equal(sqlite3_open(p, &raw), SQLITE_OK);
    assert_int_equal(test_sql_int(raw, "PRAGMA user_version"), version);
    assert_int_equal(sqlite3_exec(raw, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);
}

static void test_migration_keeps_data(void **state)
{
    (void)state;
    char p[512];
    tb_err_t err;
    db_path("v1.db", p, sizeof p);
    old_db(p, 1, "selftest",
           "INSERT INTO measurements(case_id, source, impl, metric, rep, value) VALUES"
           " (1, 'tsc', 'tokbench', 'ref_cycles', 0, 30), (1, 'tsc', 'tokbench', 'ref_cycles',"
           " 1, 10), (1, 'tsc', 'tokbench', 'ref_cycles', 2, 20);");
    sqlite3 *raw;
    assert_int_equal(sqlite3_open(p, &raw), SQLITE_OK);
    assert_int_equal(test_sql_int(raw, "SELECT count(*) FROM sqlite_master WHERE name ="
                                       " 'metric_stats'"), 0);
    sqlite3_close(raw);
    xp_db_t *d = xp_db_open(p, 0, &err);
    assert_non_null(d);
    assert_int_equal(test_sql_int(d->db, "PRAGMA user_version"), XP_DB_SCHEMA);
    /* the v2 view computes the median of the rows stored under v1 */
    assert_int_equal(test_sql_int(d->db, "SELECT median FROM metric_stats WHERE"
                                         " case_id = 1"), 20);
    assert_int_equal(test_sql_int(d->db, "SELECT min FROM metric_stats WHERE"
                                         " case_id = 1"), 10);
    /* and the v3 views exist over it */
    assert_int_equal(test_sql_int(d->db, "SELECT count(*) FROM reference_ratios"), 0);
    assert_int_equal(test_sql_int(d->db, "SELECT count(*) FROM per_node_stats"), 0);
    xp_db_close(d);
}

/* Schema 4 stored no event: migrating gives each old figure what its
 * source fixed, renames callgrind's br_misp (conditional plus indirect)
 * and branches (conditional), and gives old PAPI figures whose event
 * differs per CPU their preset's name, so that no column mixes them with
 * new ones. */
static void test_migration_names_events(void **state)
{
    (void)state;
    char p[512], text[256];
    tb_err_t err;
    db_path("v4.db", p, sizeof p);
    old_db(p, 4, "walk",
           "INSERT INTO measurements(case_id, source, impl, metric, rep, value, nodes) VALUES"
           " (1, 'callgrind', 'tokbench', 'br_misp', 0, 30, 10),"
           " (1, 'callgrind', 'tokbench', 'branches', 0, 90, 10),"
           " (1, 'callgrind', 'tokbench', 'cg_Bim', 0, 4, 10),"
           " (1, 'papi', 'tokbench', 'br_misp', 0, 20, 10),"
           " (1, 'papi', 'tokbench', 'cycles', 0, 130, 10),"
           " (1, 'tsc', 'tokbench', 'ref_cycles', 0, 150, 10);");
    xp_db_t *d = xp_db_open(p, 0, &err);
    assert_non_null(d);
    q_text(d->db, "SELECT group_concat(source || ' ' || metric || ' ' || event || ' ' ||"
                  " user_only, '; ') FROM (SELECT * FROM measurements ORDER BY rowid)",
           text, sizeof text);
    assert_string_equal(text, "callgrind br_misp_cond_ind Bcm+Bim 1; callgrind br_cond Bc 1;"
                              " callgrind cg_Bim Bim 1; papi papi_br_msp PAPI_BR_MSP 1;"
                              " papi cycles PAPI_TOT_CYC 1; tsc ref_cycles rdtscp 0");
    /* the 13-cycle baseline: core cycles in its column, TSC in its own */
    assert_int_equal(test_sql_int(d->db, "SELECT vs_13_cycle_baseline FROM per_node_stats"
                                         " WHERE metric = 'cycles'"), 1);
    assert_int_equal(test_sql_int(d->db, "SELECT count(*) FROM per_node_stats WHERE"
                                         " metric = 'ref_cycles' AND vs_13_cycle_baseline"
                                         " IS NULL AND tsc_ref_cycles_vs_13_core_cycle_baseline"
                                         " > 1.15"), 1);
    q_text(d->db, "SELECT event FROM metric_stats WHERE metric = 'br_misp_cond_ind'", text,
           sizeof text);
    assert_string_equal(text, "Bcm+Bim");
    xp_db_close(d);
}

/* Opening must fail with `want` in the message and leave the bytes as
 * they were, with no WAL or journal file beside them. */
static void refused_untouched(const char *p, const char *want)
{
    uint8_t *before, *after;
    size_t nb, na;
    tb_err_t err;
    assert_int_equal(tb_read_file(p, &before, &nb, &err), 0);
    assert_null(xp_db_open(p, 1, &err));
    if (!strstr(err.msg, want))
        fail_msg("message '%s' does not say '%s'", err.msg, want);
    assert_non_null(strstr(err.msg, p)); /* names the file */
    assert_int_equal(tb_read_file(p, &after, &na, &err), 0);
    assert_int_equal(na, nb);
    assert_memory_equal(before, after, nb);
    char side[600];
    struct stat sb;
    snprintf(side, sizeof side, "%s-wal", p);
    assert_int_not_equal(stat(side, &sb), 0);
    free(before);
    free(after);
}

static void test_refuses_corrupt_file(void **state)
{
    (void)state;
    char p[512];
    db_path("corrupt.db", p, sizeof p);
    FILE *f = fopen(p, "wb");
    for (int i = 0; i < 5000; i++)
        fputc((i * 7919) & 0xff, f);
    fclose(f);
    refused_untouched(p, "not a tokbench results database");
}

static void test_refuses_foreign_db(void **state)
{
    (void)state;
    char p[512];
    db_path("foreign.db", p, sizeof p);
    sqlite3 *raw;
    assert_int_equal(sqlite3_open(p, &raw), SQLITE_OK);
    assert_int_equal(sqlite3_exec(raw, "CREATE TABLE runs(x); INSERT INTO runs VALUES (1);",
                                  NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);
    refused_untouched(p, "another application");
}

static void test_refuses_newer_schema(void **state)
{
    (void)state;
    char p[512];
    tb_err_t err;
    db_path("newer.db", p, sizeof p);
    xp_db_t *d = xp_db_open(p, 1, &err);
    assert_non_null(d);
    assert_int_equal(xp_db_exec(d, "PRAGMA user_version = 99", &err), 0);
    assert_int_equal(xp_db_exec(d, "PRAGMA journal_mode = DELETE", &err), 0);
    xp_db_close(d);
    refused_untouched(p, "schema version 99 is newer");
}

static void test_failing_cases_recorded(void **state)
{
    (void)state;
    char p[512], msg[1024];
    tb_err_t err;
    db_path("failing.db", p, sizeof p);
    xp_run_opts_t o = {.suite_path = "tests/fixtures/xp_failing.csv", .db_path = p,
                       .root = ".", .cpu = -1};
    xp_run_result_t res;
    if (xp_run_suite(&o, &res, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(res.total, 5);
    assert_int_equal(res.ok, 2);
    assert_int_equal(res.failed, 3);
    assert_false(res.interrupted);
    xp_db_t *d = xp_db_open(p, 0, &err);
    assert_non_null(d);
    q_text(d->db, "SELECT status FROM runs", msg, sizeof msg);
    assert_string_equal(msg, "complete");
    q_text(d->db, "SELECT group_concat(status, ' ') FROM (SELECT status FROM cases ORDER BY seq)",
           msg, sizeof msg);
    assert_string_equal(msg, "ok failed failed failed ok");
    q_text(d->db, "SELECT message FROM cases WHERE seq = 1", msg, sizeof msg);
    assert_string_equal(msg, "no such experiment 'xp_no_such_experiment'");
    q_text(d->db, "SELECT message FROM cases WHERE seq = 2", msg, sizeof msg);
    assert_non_null(strstr(msg, "xp_no_such_vocab.json"));
    q_text(d->db, "SELECT message FROM cases WHERE seq = 3", msg, sizeof msg);
    assert_non_null(strstr(msg, "fail=rep"));
    /* the cases after the failures were measured in full: 4 reps, 2 metrics */
    assert_int_equal(test_sql_int(d->db, "SELECT count(*) FROM measurements m JOIN cases c"
                                         " ON c.id = m.case_id WHERE c.seq = 4 AND m.source"
                                         " = 'tsc'"), 8);
    assert_int_equal(test_sql_int(d->db, "SELECT min(nodes) FROM measurements"), 1000);
    /* the suite file's checksum is part of the run */
    char want[65];
    assert_int_equal(tb_file_sha256(o.suite_path, want, &err), 0);
    q_text(d->db, "SELECT sha256 FROM inputs WHERE role = 'suite'", msg, sizeof msg);
    assert_string_equal(msg, want);
    xp_db_close(d);
}

static pid_t spawn_run(const char *suite, const char *db)
{
    char exe[512];
    const char *build = getenv("BUILD");
    snprintf(exe, sizeof exe, "%s/tokbench", build && *build ? build : "build");
    pid_t pid = fork();
    if (pid == 0) {
        freopen("/dev/null", "w", stdout);
        freopen("/dev/null", "w", stderr);
        execl(exe, exe, "run", suite, "--db", db, "--quiet", (char *)NULL);
        _exit(127);
    }
    assert_true(pid > 0);
    return pid;
}

static int exit_status(pid_t pid)
{
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_two_runs_at_once(void **state)
{
    (void)state;
    char p[512];
    tb_err_t err;
    db_path("shared.db", p, sizeof p);
    pid_t a = spawn_run("tests/fixtures/xp_small.csv", p);
    pid_t b = spawn_run("tests/fixtures/xp_small.csv", p);
    assert_int_equal(exit_status(a), 0);
    assert_int_equal(exit_status(b), 0);
    xp_db_t *d = xp_db_open(p, 0, &err);
    assert_non_null(d);
    assert_int_equal(test_sql_int(d->db, "SELECT count(*) FROM runs WHERE status ="
                                         " 'complete'"), 2);
    /* each run: 2 cases; 5 + 3 repetitions of 2 TSC metrics */
    assert_int_equal(test_sql_int(d->db, "SELECT count(*) FROM cases WHERE status ="
                                         " 'ok'"), 4);
    assert_int_equal(test_sql_int(d->db, "SELECT count(*) FROM measurements m JOIN cases c"
                                         " ON c.id = m.case_id WHERE c.run_id = 1"), 16);
    assert_int_equal(test_sql_int(d->db, "SELECT count(*) FROM measurements m JOIN cases c"
                                         " ON c.id = m.case_id WHERE c.run_id = 2"), 16);
    xp_db_close(d);
}

static void test_interrupt_keeps_finished_cases(void **state)
{
    (void)state;
    char p[512], note[256];
    tb_err_t err;
    db_path("interrupted.db", p, sizeof p);
    pid_t pid = spawn_run("tests/fixtures/xp_slow.csv", p);
    /* wait until the first case is stored (each takes ~0.75 s of sleep) */
    long long stored = 0;
    for (int i = 0; i < 600 && stored < 1; i++) {
        usleep(100000);
        xp_db_t *d = xp_db_open(p, 0, &err);
        if (d)
            stored = test_sql_int(d->db, "SELECT count(*) FROM cases");
        xp_db_close(d);
    }
    assert_true(stored >= 1);
    assert_int_equal(kill(pid, SIGINT), 0);
    assert_int_equal(exit_status(pid), 130);
    xp_db_t *d = xp_db_open(p, 0, &err);
    assert_non_null(d);
    q_text(d->db, "SELECT status FROM runs", note, sizeof note);
    assert_string_equal(note, "incomplete");
    q_text(d->db, "SELECT note FROM runs", note, sizeof note);
    assert_non_null(strstr(note, "by a signal"));
    assert_int_equal(test_sql_int(d->db, "SELECT ended IS NOT NULL FROM runs"), 1);
    long long cases = test_sql_int(d->db, "SELECT count(*) FROM cases");
    assert_true(cases >= 1 && cases < 8);
    /* the first case is whole: 3 repetitions of 2 metrics */
    assert_int_equal(test_sql_int(d->db, "SELECT status = 'ok' FROM cases WHERE seq"
                                         " = 0"), 1);
    assert_int_equal(test_sql_int(d->db, "SELECT count(*) FROM measurements m JOIN cases c"
                                         " ON c.id = m.case_id WHERE c.seq = 0"), 6);
    char ok[16];
    q_text(d->db, "PRAGMA integrity_check", ok, sizeof ok);
    assert_string_equal(ok, "ok");
    xp_db_close(d);
}

/* diff flags a change only where the min..max ranges do not overlap. */
static void test_diff_flags_beyond_noise(void **state)
{
    (void)state;
    char p[512], args[700], out[8192];
    tb_err_t err;
    db_path("diff.db", p, sizeof p);
    xp_db_t *d = xp_db_open(p, 1, &err);
    assert_non_null(d);
    assert_int_equal(xp_db_exec(d,
        "INSERT INTO runs(id, suite, started, status) VALUES (1, 's', 't', 'complete'),"
        " (2, 's', 't', 'complete');"
        "INSERT INTO cases(id, run_id, seq, experiment, vocabulary, status) VALUES"
        " (1, 1, 0, 'selftest', 'a', 'ok'), (2, 1, 1, 'selftest', 'b', 'ok'),"
        " (3, 2, 0, 'selftest', 'a', 'ok'), (4, 2, 1, 'selftest', 'b', 'ok'),"
        " (5, 2, 2, 'selftest', 'c', 'ok');"
        "INSERT INTO measurements(case_id, source, impl, metric, rep, value) VALUES"
        " (1, 'tsc', 'tokbench', 'ref_cycles', 0, 100), (1, 'tsc', 'tokbench', 'ref_cycles', 1, 110),"
        " (3, 'tsc', 'tokbench', 'ref_cycles', 0, 200), (3, 'tsc', 'tokbench', 'ref_cycles', 1, 220),"
        " (2, 'tsc', 'tokbench', 'ref_cycles', 0, 100), (2, 'tsc', 'tokbench', 'ref_cycles', 1, 140),"
        " (4, 'tsc', 'tokbench', 'ref_cycles', 0, 130), (4, 'tsc', 'tokbench', 'ref_cycles', 1, 150);"
        /* one metric, two events (two CPUs): not compared */
        "INSERT INTO measurements(case_id, source, impl, metric, rep, value, event) VALUES"
        " (1, 'papi', 'tokbench', 'br_misp_all', 0, 5, 'PAPI_BR_MSP'),"
        " (3, 'papi', 'tokbench', 'br_misp_all', 0, 50,"
        " 'perf::PERF_COUNT_HW_BRANCH_MISSES');",
        &err), 0);
    xp_db_close(d);
    snprintf(args, sizeof args, "diff 1 2 --db %s", p);
    assert_int_equal(test_tokbench(args, out, sizeof out), 0);
    /* case a doubled beyond its spread; case b moved inside it */
    assert_non_null(strstr(out, "2.000  HIGHER"));
    assert_non_null(strstr(out, "1.167  \n"));
    assert_non_null(strstr(out, "only in run B: selftest c"));
    assert_non_null(strstr(out, "1 figure changed beyond the measured noise"));
    assert_non_null(strstr(out, "-  not compared: A counted PAPI_BR_MSP, B "
                                "perf::PERF_COUNT_HW_BRANCH_MISSES\n"));
    assert_non_null(strstr(out, "1 figure not compared: the runs counted them with "
                                "different events"));
    snprintf(args, sizeof args, "diff 1 9 --db %s", p);
    assert_int_equal(test_tokbench(args, out, sizeof out), 1);
    assert_non_null(strstr(out, "no run 9"));
}

/* The callgrind source through the whole path: re-run, parse, store. */
static void test_callgrind_rows_stored(void **state)
{
    (void)state;
    char p[512], why[256];
    tb_err_t err;
    if (!xp_callgrind_usable(why, sizeof why))
        skip(); /* SANITIZE=1 build: valgrind cannot run it */
    db_path("callgrind.db", p, sizeof p);
    assert_int_equal(exit_status(spawn_run("tests/fixtures/xp_callgrind.csv", p)), 0);
    xp_db_t *d = xp_db_open(p, 0, &err);
    assert_non_null(d);
    char msg[512];
    q_text(d->db, "SELECT ifnull(message, '') FROM cases", msg, sizeof msg);
    assert_string_equal(msg, "");
    long long ins = test_sql_int(d->db, "SELECT value FROM measurements WHERE source ="
                                        " 'callgrind' AND metric = 'instructions'");
    long long ir = test_sql_int(d->db, "SELECT value FROM measurements WHERE metric ="
                                       " 'cg_Ir'");
    assert_int_equal(ins, ir);
    assert_true(ins > 30000 * 4 && ins < 30000 * 64);
    assert_int_equal(test_sql_int(d->db, "SELECT nodes FROM measurements WHERE metric ="
                                         " 'cg_Ir'"), 30000);
    long long misp = test_sql_int(d->db, "SELECT value FROM measurements WHERE source ="
                                         " 'callgrind' AND metric = 'br_misp_cond_ind'");
    assert_true(misp > 30000 / 4 && misp < 30000);
    /* each figure names the events it sums, all user mode */
    char event[64];
    q_text(d->db, "SELECT event FROM measurements WHERE metric = 'br_misp_cond_ind'", event,
           sizeof event);
    assert_string_equal(event, "Bcm+Bim");
    assert_int_equal(test_sql_int(d->db, "SELECT count(*) FROM measurements WHERE source ="
                                         " 'callgrind' AND (event IS NULL OR user_only"
                                         " <> 1)"), 0);
    assert_int_equal(test_sql_int(d->db, "SELECT value FROM measurements WHERE metric ="
                                         " 'br_misp_cond'"),
                     test_sql_int(d->db, "SELECT value FROM measurements WHERE metric ="
                                         " 'cg_Bcm'"));
    xp_db_close(d);
}

/* runs, show and counters print what the store and the machine hold. */
static void test_listing_commands(void **state)
{
    (void)state;
    char p[512], args[700], out[16384];
    db_path("shared.db", p, sizeof p); /* written by test_two_runs_at_once */
    snprintf(args, sizeof args, "runs --db %s", p);
    assert_int_equal(test_tokbench(args, out, sizeof out), 0);
    assert_non_null(strstr(out, "complete"));
    assert_non_null(strstr(out, "tests/fixtures/xp_small.csv"));
    snprintf(args, sizeof args, "show 2 --db %s", p);
    assert_int_equal(test_tokbench(args, out, sizeof out), 0);
    assert_non_null(strstr(out, "tsc_hz"));
    assert_non_null(strstr(out, "git_commit"));
    assert_non_null(strstr(out, "ref_cycles"));
    assert_non_null(strstr(out, "/node"));
    assert_int_equal(test_tokbench("counters", out, sizeof out), 0);
    assert_non_null(strstr(out, "\ntsc "));
    assert_non_null(strstr(out, "\npapi "));
    /* where PAPI cannot count, each event says so too, never "no PMU?" */
    if (strstr(out, "\npapi       UNAVAILABLE: "))
        assert_non_null(strstr(out, "\n  PAPI_BR_MSP or perf::PERF_COUNT_HW_BRANCH_MISSES "
                                    "not counted: "));
    assert_null(strstr(out, "PMU?"));
    assert_non_null(strstr(out, "\ncallgrind "));
    assert_non_null(strstr(out, "sources available: "));
}

static int setup_dir(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* The committed anchors file imports whole, marked as published figures
 * of another machine, each with its source; importing twice replaces
 * rather than adds; bad input names the file, line and column and stores
 * nothing. */
static void test_anchors_import(void **state)
{
    (void)state;
    char p[512];
    tb_err_t err;
    db_path("anchors.db", p, sizeof p);
    xp_db_t *d = xp_db_open(p, 1, &err);
    assert_non_null(d);
    uint8_t *text;
    size_t len;
    int n = 0;
    if (tb_read_file("experiments/anchors/published.csv", &text, &len, &err))
        fail_msg("%s", err.msg);
    for (int i = 0; i < 2; i++) {
        if (xp_anchors_import(d, "published.csv", (const char *)text, len, &n, &err))
            fail_msg("%s", err.msg);
        assert_true(n >= 9);
        assert_int_equal(test_sql_int(d->db, "SELECT count(*) FROM anchors"), n);
    }
    free(text);
    assert_int_equal(test_sql_int(d->db, "SELECT count(*) FROM anchors WHERE kind <>"
                                  " 'published, other machine' OR document = '' OR"
                                  " machine = '' OR date = '' OR location = ''"), 0);
    assert_int_equal(test_sql_int(d->db, "SELECT count(*) FROM anchors WHERE"
                                  " figure = 'cycles_per_node' AND value = 13 AND"
                                  " machine = 'AMD EPYC 7V13'"), 1);
    static const struct {
        const char *csv, *says;
    } bad[] = {
        {"# a \"comment\"\nfigure,subject\nx,y\n", "bad.csv:2: the header has no column 'value'"},
        {"figure,subject,vocabulary,work,value,unit,document,location,date,machine,note\n"
         "\nf,s,,,1.5e,u,d,l,2025,m,\n", "bad.csv:3: column 'value': '1.5e' is not a number"},
        {"figure,subject,vocabulary,work,value,unit,document,location,date,machine,note\n"
         "f,s,,,1,u,,l,2025,m,\n", "bad.csv:2: column 'document' is empty"},
        {"figure,subject,value,unit,document,location,date,machine,colour\n",
         "bad.csv:1: column 9: unknown column 'colour'"},
        {"figure,subject,vocabulary,work,value,unit,document,location,date,machine,note\n"
         "f,s,,,1,u,d,l,2025,m\n", "bad.csv:2: 10 fields, the header has 11"},
        {"figure,subject,vocabulary,work,value,unit,document,location,date,machine,note\n"
         "f,\"s,,,1,u,d,l,2025,m,\n", "bad.csv: line 2: malformed CSV at the end"},
        {"", "bad.csv: no header record"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int m = -1;
        assert_int_equal(xp_anchors_import(d, "bad.csv", bad[i].csv, strlen(bad[i].csv), &m,
                                           &err), -1);
        if (!strstr(err.msg, bad[i].says))
            fail_msg("case %zu: '%s' does not say '%s'", i, err.msg, bad[i].says);
        assert_int_equal(m, -1);
        assert_int_equal(test_sql_int(d->db, "SELECT count(*) FROM anchors"), n);
    }
    xp_db_close(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fresh_schema_wal_busy),
        cmocka_unit_test(test_migration_keeps_data),
        cmocka_unit_test(test_migration_names_events),
        cmocka_unit_test(test_refuses_corrupt_file),
        cmocka_unit_test(test_refuses_foreign_db),
        cmocka_unit_test(test_refuses_newer_schema),
        cmocka_unit_test(test_failing_cases_recorded),
        cmocka_unit_test(test_two_runs_at_once),
        cmocka_unit_test(test_interrupt_keeps_finished_cases),
        cmocka_unit_test(test_diff_flags_beyond_noise),
        cmocka_unit_test(test_callgrind_rows_stored),
        cmocka_unit_test(test_listing_commands),
        cmocka_unit_test(test_anchors_import),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
