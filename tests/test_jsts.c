/*
 * test_jsts: the official JSON Schema Test Suite
 * (../shared/json-schema-test-suite, or $JSTS_DIR) as a conformance test
 * of grammar/schema.h, drafts 2020-12 and 7.
 *
 * Every group runs through experiments/refs/jsts.h, the copy the jsts
 * driver runs too (it says how a group is compiled and fed, and what
 * its verdicts passing, refused, wrong and crash mean), each in a child
 * process so that a crash is a verdict, not the end of the test.
 *
 * The test fails on a wrong verdict or a crash in the required groups of
 * either draft, except the groups of known_wrong[] (each with its reason),
 * and on a listed group that no longer goes wrong.  optional/ is counted
 * apart and never fails it.  A suite that is not there skips the test, with
 * a message.  JSTS_VERBOSE=1 prints every group that does not pass, with
 * the compiler's reason or the instance at fault.
 *
 * driver_and_report runs the jsts experiment through `tokbench run` on a
 * tiny suite written here (draft 7: a passing, a wrong and a refused
 * group, and an optional one; no draft 2020-12 folder): the outcome rows,
 * the counts, the report's compliance table and wrong groups, and the
 * missing draft as "not measured" with the case's reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include <cmocka.h>

#include "../experiments/refs/jsts.h"
#include "support.h"

/* Required groups that go wrong, with the reason: none may be added
 * without one, and each is checked to still go wrong. */
static const struct {
    const char *draft, *file, *group, *why;
} known_wrong[] = {
    /* Each: draft, keyword file, group description, reason.  None today. */
    {NULL, NULL, NULL, NULL},
};

enum { V_PASS = XP_JSTS_PASSING, V_REFUSED = XP_JSTS_REFUSED, V_WRONG = XP_JSTS_WRONG,
       V_CRASH = XP_JSTS_CRASH, V_N = XP_JSTS_N };
#define verdict_names xp_jsts_verdicts

typedef struct {
    char name[96];
    int n[V_N], groups;
} tally_t;

#define MAX_FILES 128
typedef struct {
    tally_t files[MAX_FILES];
    size_t nfiles;
    tally_t total, optional;
    int unexpected; /* wrong or crashed required groups not listed */
} draft_tally_t;

static const char *suite_dir(void)
{
    static char dir[1024];
    const char *env = getenv("JSTS_DIR");
    const char *cands[] = {env, "../shared/json-schema-test-suite",
                           "/work/shared/json-schema-test-suite"};
    for (size_t i = 0; i < sizeof cands / sizeof *cands; i++) {
        struct stat st;
        if (!cands[i])
            continue;
        snprintf(dir, sizeof dir, "%s/tests", cands[i]);
        if (!stat(dir, &st) && S_ISDIR(st.st_mode))
            return cands[i];
        if (i == 0)
            return NULL; /* JSTS_DIR names the suite: no fallback */
    }
    return NULL;
}

static int verbose(void)
{
    const char *v = getenv("JSTS_VERBOSE");
    return v && *v && strcmp(v, "0");
}

static int listed(const char *draft, const char *file, const char *group)
{
    for (size_t i = 0; known_wrong[i].draft; i++)
        if (!strcmp(known_wrong[i].draft, draft) && !strcmp(known_wrong[i].file, file) &&
            !strcmp(known_wrong[i].group, group))
            return 1;
    return 0;
}

static void add(tally_t *t, int v)
{
    t->n[v]++;
    t->groups++;
}

/* xp_jsts_run's callback: the tallies, and what the test fails on. */
static int on_group(void *ctx, const xp_jsts_group_t *g, tb_err_t *err)
{
    (void)err;
    draft_tally_t *dt = ctx;
    if (!dt->nfiles || strcmp(dt->files[dt->nfiles - 1].name, g->file)) {
        assert_true(dt->nfiles < MAX_FILES);
        tally_t *ft = &dt->files[dt->nfiles++];
        memset(ft, 0, sizeof *ft);
        snprintf(ft->name, sizeof ft->name, "%s", g->file);
    }
    int v = g->verdict;
    add(&dt->files[dt->nfiles - 1], v);
    add(g->optional ? &dt->optional : &dt->total, v);
    int known = !g->optional && listed(g->draft, g->file, g->description);
    if (!g->optional && (v == V_WRONG || v == V_CRASH) && !known) {
        dt->unexpected++;
        print_message("%s %s \"%s\": %s: %s\n", g->draft, g->file, g->description,
                      verdict_names[v], g->detail);
    } else if (known && v != V_WRONG) {
        dt->unexpected++;
        print_message("%s %s \"%s\": listed as known-wrong but now %s: remove it from "
                      "known_wrong[]\n", g->draft, g->file, g->description, verdict_names[v]);
    } else if (v != V_PASS && verbose()) {
        print_message("%s %s \"%s\": %s: %s\n", g->draft, g->file, g->description,
                      verdict_names[v], g->detail);
    }
    return 0;
}

static void print_tally(const char *what, const tally_t *t)
{
    print_message("%-44s %4d groups %4d passing %4d refused %3d wrong %3d crash\n", what,
                  t->groups, t->n[V_PASS], t->n[V_REFUSED], t->n[V_WRONG], t->n[V_CRASH]);
}

static void run_draft(const char *draft)
{
    const char *root = suite_dir();
    if (!root) {
        print_message("JSON Schema Test Suite not found ($JSTS_DIR, "
                      "../shared/json-schema-test-suite): skipped\n");
        skip();
    }
    static draft_tally_t dt;
    memset(&dt, 0, sizeof dt);
    char tests[1100];
    snprintf(tests, sizeof tests, "%s/tests", root);
    tb_err_t err;
    if (xp_jsts_run(tests, draft, 1, 20, NULL, on_group, &dt, &err))
        fail_msg("%s", err.msg);
    print_message("%s, per keyword file:\n", draft);
    for (size_t i = 0; i < dt.nfiles; i++)
        print_tally(dt.files[i].name, &dt.files[i]);
    char what[128];
    snprintf(what, sizeof what, "%s required", draft);
    print_tally(what, &dt.total);
    snprintf(what, sizeof what, "%s optional", draft);
    print_tally(what, &dt.optional);
    if (dt.unexpected)
        fail_msg("%s: %d required groups wrong or crashed beyond known_wrong[] (above)", draft,
                 dt.unexpected);
}

static void draft2020_12(void **state)
{
    (void)state;
    run_draft("draft2020-12");
}

static void draft7(void **state)
{
    (void)state;
    run_draft("draft7");
}

static void write_file(const char *dir, const char *rel, const char *text)
{
    char path[700], cmd[800];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
    assert_int_equal(system(cmd), 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot read %s", path);
    static char buf[1 << 18];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

static void has(const char *text, const char *want)
{
    if (!strstr(text, want))
        fail_msg("the report lacks \"%s\"", want);
}

static void driver_and_report(void **state)
{
    (void)state;
    char dir[] = "/tmp/tokbench-test-jsts-XXXXXX", suite[600], db[600], tests[600];
    FILE *f = test_run_dir(dir, suite, db, sizeof suite);
    snprintf(tests, sizeof tests, "%s/tests", dir);
    fprintf(f, "jsts,,,%s,,1,,draft=7 optional\n", tests);
    fprintf(f, "jsts,,,%s,,1,,draft=2020-12\n", tests);
    fclose(f);
    write_file(tests, "draft7/minimum.json",
               "[{\"description\": \"at least 1\", \"schema\": {\"minimum\": 1},"
               " \"tests\": [{\"description\": \"above\", \"data\": 2, \"valid\": true},"
               " {\"description\": \"below\", \"data\": 0, \"valid\": false}]},"
               " {\"description\": \"mislabelled\", \"schema\": {\"type\": \"integer\"},"
               " \"tests\": [{\"description\": \"a fraction\", \"data\": 1.5, \"valid\": true}]}]");
    write_file(tests, "draft7/not.json",
               "[{\"description\": \"not unique\", \"schema\": {\"not\": {\"uniqueItems\": true}},"
               " \"tests\": [{\"description\": \"dup\", \"data\": [1, 1], \"valid\": true}]}]");
    write_file(tests, "draft7/optional/format/ipv4.json",
               "[{\"description\": \"ipv4\", \"schema\": {\"format\": \"ipv4\"},"
               " \"tests\": [{\"description\": \"ok\", \"data\": \"1.2.3.4\", \"valid\": true},"
               " {\"description\": \"no\", \"data\": \"x\", \"valid\": false}]}]");
    static char out[1 << 16];
    char args[2048];
    snprintf(args, sizeof args, "run %s --db %s --quiet", suite, db);
    /* exit 1: the draft 2020-12 case fails, its folder missing */
    assert_int_equal(test_tokbench(args, out, sizeof out), 1);

    sqlite3 *d;
    assert_int_equal(sqlite3_open_v2(db, &d, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    static const char *const want[][3] = {
        {"minimum#0", "passing", ""},
        {"minimum#1", "wrong", "instance 0 (a fraction) valid, refused: 1.5"},
        {"not#0", "refused", "'not' of 'uniqueItems' is not supported"},
        {"optional/format/ipv4#0", "passing", ""},
    };
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(d, "SELECT item, outcome, ifnull(detail, '') FROM"
                                           " outcomes o JOIN cases c ON c.id = o.case_id"
                                           " WHERE c.seq = 0 ORDER BY o.rowid", -1, &st, NULL),
                     SQLITE_OK);
    size_t n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        assert_true(n < 4);
        assert_string_equal((const char *)sqlite3_column_text(st, 0), want[n][0]);
        assert_string_equal((const char *)sqlite3_column_text(st, 1), want[n][1]);
        const char *detail = (const char *)sqlite3_column_text(st, 2);
        if (!strstr(detail, want[n][2]))
            fail_msg("%s: detail \"%s\" lacks \"%s\"", want[n][0], detail, want[n][2]);
        n++;
    }
    sqlite3_finalize(st);
    assert_int_equal(n, 4);
    assert_int_equal(test_sql_int(d, "SELECT group_concat(metric || '=' || value, ' ') ="
                                     " 'crash=0.0 groups=3.0 opt_crash=0.0 opt_groups=1.0"
                                     " opt_passing=1.0 opt_refused=0.0 opt_wrong=0.0"
                                     " passing=1.0 refused=1.0 wrong=1.0' FROM (SELECT"
                                     " metric, value FROM measurements m JOIN cases c ON"
                                     " c.id = m.case_id WHERE c.seq = 0 AND m.source ="
                                     " 'static' ORDER BY metric)"), 1);
    assert_int_equal(test_sql_int(d, "SELECT count(*) FROM cases WHERE seq = 1 AND status ="
                                     " 'failed' AND message LIKE '%JSON Schema Test Suite"
                                     " folder%draft2020-12%'"), 1);
    sqlite3_close(d);

    char rep[700], md[800];
    snprintf(rep, sizeof rep, "%s/rep", dir);
    snprintf(args, sizeof args, "report --db %s --out %s", db, rep);
    assert_int_equal(test_tokbench(args, out, sizeof out), 0);
    snprintf(md, sizeof md, "%s/index.md", rep);
    const char *page = read_text(md);
    const char *d7 = strstr(page, "## JSON Schema Test Suite, draft 7");
    assert_non_null(d7);
    has(d7, "| keyword file | groups | passing | refused | wrong | crash |");
    has(d7, "| total, required | 3 | 1 (33.3%) | 1 (33.3%) | 1 (33.3%) | 0 |\n"
            "| total, optional | 1 | 1 (100.0%) | 0 | 0 | 0 |\n"
            "| minimum | 2 | 1 (50.0%) | 0 | 1 (50.0%) | 0 |\n"
            "| not | 1 | 0 | 1 (100.0%) | 0 | 0 |\n"
            "| optional/format/ipv4 | 1 | 1 (100.0%) | 0 | 0 | 0 |\n");
    has(d7, "| `minimum#1` | wrong | instance 0 (a fraction) valid, refused: 1.5 |");
    const char *d20 = strstr(page, "## JSON Schema Test Suite, draft 2020-12");
    assert_non_null(d20);
    assert_true(d20 < d7);
    has(d20, "Not measured: failed: JSON Schema Test Suite folder");
    snprintf(args, sizeof args, "rm -rf '%s'", dir);
    assert_int_equal(system(args), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(draft2020_12),
        cmocka_unit_test(draft7),
        cmocka_unit_test(driver_and_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
