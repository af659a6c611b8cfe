/* Conformance: runs the real `tokbench conform` on the committed sample for
 * every vocabulary in data/manifest that has a reference program
 * (hf-json, tiktoken, spm-model), and checks that a wrong pairing (a
 * tampered copy of cl100k, another vocabulary's reference) is caught and
 * that GGUF, which has no reference, is refused.
 * The binary is $BUILD/tokbench, BUILD as the test runner passes it. */
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
#include <jansson.h>

#include "../tok/tok_internal.h"
#include "support.h"

#define SAMPLE "data/fixtures/conform-sample.txt"

static char bin[512];
static char tmpdir[256];

/* Runs `tokbench ARGS`; returns its exit status and its stdout and stderr
 * (malloc'd) in *out. */
static int run_tokbench(const char *args, char **out)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", bin, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    assert_non_null(buf);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len < 1024) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
    }
    buf[len] = 0;
    int status = pclose(p);
    *out = buf;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static int run_conform(const char *args, char **out)
{
    char cmd[3072];
    snprintf(cmd, sizeof cmd, "conform %s", args);
    return run_tokbench(cmd, out);
}

static void need(const char *path, const char *hint)
{
    if (access(path, R_OK))
        fail_msg("%s is missing: %s", path, hint);
}

/* Every vocabulary of a kind with a reference conforms on the sample.  All
 * are run before failing, so one report names every broken vocabulary. */
static void manifest_vocabularies_conform(void **state)
{
    (void)state;
    need(SAMPLE, "it is committed; is this the repository root?");
    FILE *m = fopen("data/manifest", "r");
    assert_non_null(m);
    char line[4096];
    int checked = 0, failed = 0;
    while (fgets(line, sizeof line, m)) {
        char name[256], kind[64];
        if (line[0] == '#' || sscanf(line, "%255s %63s", name, kind) != 2)
            continue;
        if (!strcmp(kind, "synth-vocab")) {
            /* generated tokens with no merges: no reference program
             * tokenizes with them, so there is nothing to conform to */
            printf("conform %s: skipped: synthetic vocabulary (kind synth-vocab), "
                   "no reference tokenizer\n", name);
            continue;
        }
        if (strcmp(kind, "hf-json") && strcmp(kind, "tiktoken") &&
            strcmp(kind, "spm-model"))
            continue;
        char args[1024], *out;
        snprintf(args, sizeof args, "%s --corpus %s --show 3", name, SAMPLE);
        int rc = run_conform(args, &out);
        printf("%s", out);
        fflush(stdout);
        if (rc != 0) {
            print_error("conform %s: exit status %d%s\n", name, rc,
                        strstr(out, "make data") ? " (run 'make data')" : "");
            failed++;
        } else if (!strstr(out, " 0 mismatches")) {
            print_error("conform %s: exit 0 without a clean summary\n", name);
            failed++;
        }
        free(out);
        checked++;
    }
    fclose(m);
    assert_true(checked >= 3);
    assert_int_equal(failed, 0);
}

/* The tampered copy conforms to itself (the reference really reads the
 * given file) but not to the original's reference. */
static void tampered_vocabulary_is_caught(void **state)
{
    (void)state;
    char path[512], args[1024], *out;
    snprintf(path, sizeof path, "%s/cl100k_base.json", tmpdir);
    test_write_tampered_cl100k(path);
    snprintf(args, sizeof args, "%s --corpus %s --quiet", path, SAMPLE);
    int rc = run_conform(args, &out);
    if (rc != 0)
        fail_msg("tampered copy against itself: exit %d\n%s", rc, out);
    free(out);
    snprintf(args, sizeof args, "%s --ref cl100k --corpus %s --show 2", path,
             SAMPLE);
    rc = run_conform(args, &out);
    printf("%s", out);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "ids differ at position"));
    assert_non_null(strstr(out, "more mismatches"));
    free(out);
    unlink(path);
}

static void other_reference_is_caught(void **state)
{
    (void)state;
    char args[1024], *out;
    snprintf(args, sizeof args, "cl100k --ref o200k --corpus %s --show 1",
             SAMPLE);
    int rc = run_conform(args, &out);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "cl100k: line 1: ids differ at position 0"));
    assert_null(strstr(out, "line 2: ids differ"));
    free(out);
}

/* GGUF has no reference program: conform says so instead of comparing. */
static void gguf_is_refused(void **state)
{
    (void)state;
    const char *json = "data/cache/mistral/tokenizer.json";
    need(json, "run 'make data'");
    char path[512], args[1024], *out;
    snprintf(path, sizeof path, "%s/mistral.gguf", tmpdir);
    tb_err_t err;
    tok_tokenizer_t *t = tok_load(json, &err);
    if (!t || tok_gguf_write(t, path, NULL, &err))
        fail_msg("%s", err.msg);
    tok_free(t);
    snprintf(args, sizeof args, "%s --corpus %s", path, SAMPLE);
    int rc = run_conform(args, &out);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "no reference program for GGUF"));
    free(out);
    unlink(path);
}

static void usage_errors(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(run_conform("cl100k", &out), 2);
    assert_non_null(strstr(out, "--corpus"));
    free(out);
    assert_int_equal(run_conform("cl100k --corpus " SAMPLE " --limit x", &out), 2);
    free(out);
    assert_int_equal(run_conform("--help", &out), 0);
    assert_non_null(strstr(out, "spm_encode"));
    free(out);
    assert_int_equal(run_conform("no-such-vocab --corpus " SAMPLE, &out), 1);
    assert_non_null(strstr(out, "no-such-vocab"));
    free(out);
}

/* The conform experiment stores line and mismatch counts in the results
 * store; a right pairing passes, a wrong one fails its case with the
 * count and the command that shows the lines. */
static void conform_experiment_records_counts(void **state)
{
    (void)state;
    char suite[512], db[512], args[2048], *out;
    snprintf(suite, sizeof suite, "%s/conform.csv", tmpdir);
    snprintf(db, sizeof db, "%s/conform.db", tmpdir);
    FILE *f = fopen(suite, "w");
    assert_non_null(f);
    /* The unicode corpus: valid UTF-8 throughout, which tiktoken needs. */
    fprintf(f, "experiment,vocabulary,corpus,repetitions,sources,options\n"
               "conform,cl100k,unicode,1,tsc,max_bytes=100000\n"
               "conform,cl100k,unicode,1,tsc,max_bytes=100000 "
               "reference_vocabulary=o200k\n");
    fclose(f);
    snprintf(args, sizeof args, "run %s --db %s", suite, db);
    int rc = run_tokbench(args, &out);
    if (!strstr(out, "1 ok, 1 failed"))
        fail_msg("tokbench %s: exit %d\n%s", args, rc, out);
    free(out);
    snprintf(args, sizeof args,
             "sqlite3 %s \"SELECT c.status, m.metric, m.value FROM cases c JOIN "
             "measurements m ON m.case_id = c.id WHERE m.source = 'conform' "
             "ORDER BY c.id, m.metric\" 2>&1", db);
    FILE *p = popen(args, "r");
    assert_non_null(p);
    char rows[8][128];
    int nrows = 0;
    while (nrows < 8 && fgets(rows[nrows], sizeof rows[0], p))
        nrows++;
    pclose(p);
    assert_int_equal(nrows, 6);
    long lines;
    assert_int_equal(sscanf(rows[0], "ok|lines|%ld", &lines), 1);
    assert_true(lines > 100);
    assert_string_equal(rows[1], "ok|mismatch_lines|0.0\n");
    long wrong;
    assert_int_equal(sscanf(rows[4], "failed|mismatch_lines|%ld", &wrong), 1);
    assert_true(wrong > 0 && wrong <= lines);
    snprintf(args, sizeof args,
             "sqlite3 %s \"SELECT message FROM cases WHERE status = 'failed'\"", db);
    p = popen(args, "r");
    assert_non_null(p);
    char msg[1024] = {0};
    assert_non_null(fgets(msg, sizeof msg, p));
    pclose(p);
    assert_non_null(strstr(msg, "lines differ from the reference"));
    assert_non_null(strstr(msg, "tokbench conform cl100k --corpus unicode"));
    unlink(suite);
    unlink(db);
}

static int setup(void **state)
{
    (void)state;
    const char *build = getenv("BUILD");
    snprintf(bin, sizeof bin, "%s/tokbench", build && *build ? build : "build");
    if (access(bin, X_OK)) {
        fprintf(stderr, "%s is missing: build it first (make BUILD=...)\n", bin);
        return -1;
    }
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tokbench-conform-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

/* A failed assertion skips a test's own clean-up: remove what it left. */
static int teardown(void **state)
{
    (void)state;
    char p[512];
    snprintf(p, sizeof p, "%s/cl100k_base.json", tmpdir);
    unlink(p);
    snprintf(p, sizeof p, "%s/mistral.gguf", tmpdir);
    unlink(p);
    return rmdir(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(usage_errors),
        cmocka_unit_test(gguf_is_refused),
        cmocka_unit_test(other_reference_is_caught),
        cmocka_unit_test(tampered_vocabulary_is_caught),
        long_unit_test(manifest_vocabularies_conform),
        cmocka_unit_test(conform_experiment_records_counts),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
