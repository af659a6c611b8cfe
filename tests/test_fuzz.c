/* The differential fuzzer (`tokbench fuzz`): a small fixed sample of
 * generated lines conforms for every vocabulary in data/manifest that has a
 * reference program, a wrong pairing is shrunk to the one token that
 * differs, a reference past its time limit is a clear error, and the fuzz
 * experiment stores its counts.
 * The binary is $BUILD/tokbench, BUILD as the test runner passes it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "support.h"

/* Output of one fuzz run: a few summaries, or a shrunk mismatch or two. */
static char out[1 << 16];

/* Every vocabulary with a reference gives its ids on 150 generated lines,
 * against each of its references.  All are run before failing. */
static void manifest_vocabularies_fuzz(void **state)
{
    (void)state;
    FILE *m = fopen("data/manifest", "r");
    assert_non_null(m);
    char line[4096];
    int checked = 0, failed = 0;
    while (fgets(line, sizeof line, m)) {
        char name[256], kind[64], args[512];
        if (line[0] == '#' || sscanf(line, "%255s %63s", name, kind) != 2 ||
            (strcmp(kind, "hf-json") && strcmp(kind, "tiktoken") &&
             strcmp(kind, "spm-model")))
            continue;
        snprintf(args, sizeof args, "fuzz %s --lines 150 --seed 20261123", name);
        int rc = test_tokbench(args, out, sizeof out);
        printf("%s", out);
        int refs = 0;
        for (const char *p = out; (p = strstr(p, " mismatches\n")); p++)
            refs++;
        if (rc != 0 || refs < 1 || strstr(out, "differs from")) {
            print_error("fuzz %s: exit status %d\n", name, rc);
            failed++;
        }
        checked++;
    }
    fclose(m);
    assert_true(checked >= 3);
    assert_int_equal(failed, 0);
}

/* cl100k with the ranks of " the" and " and" swapped, against cl100k's
 * reference: every mismatch shrinks to one of those four-byte words. */
static void mismatch_shrinks_to_the_token(void **state)
{
    (void)state;
    char dir[] = "/tmp/tokbench-fuzz.XXXXXX", path[512], args[1024];
    test_tmpdir(dir);
    snprintf(path, sizeof path, "%s/cl100k_base.json", dir);
    test_write_tampered_cl100k(path);
    snprintf(args, sizeof args, "fuzz %s --ref cl100k --lines 200 --show 2", path);
    int rc = test_tokbench(args, out, sizeof out);
    unlink(path);
    rmdir(dir);
    printf("%s", out);
    assert_int_equal(rc, 1);
    int shown = 0;
    for (const char *p = out; (p = strstr(p, "shortest input found")); p++) {
        assert_non_null(strstr(p, "(4 of "));
        const char *in = strstr(p, "input     \"");
        assert_non_null(in);
        assert_true(!strncmp(in + 11, " the\"", 5) || !strncmp(in + 11, " and\"", 5));
        shown++;
    }
    assert_int_equal(shown, 2);
    assert_null(strstr(out, " 0 mismatches"));
}

static void timeout_is_an_error(void **state)
{
    (void)state;
    setenv("TOKBENCH_REF_TIMEOUT", "0.001", 1);
    int rc = test_tokbench("fuzz cl100k --lines 50", out, sizeof out);
    unsetenv("TOKBENCH_REF_TIMEOUT");
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "ref.js tiktoken"));
    assert_non_null(strstr(out, "timed out"));
}

/* The fuzz experiment stores its counts; a bad option fails its case. */
static void experiment_records_counts(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_fuzz.XXXXXX", suite[256], db[256], cmd[600];
    FILE *f = test_run_dir(dir, suite, db, sizeof suite);
    fputs("fuzz,cl100k,,,,1,tsc,lines=200 seed=5\n"
          "fuzz,cl100k,,,,1,tsc,lines=x\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "run %s --db %s", suite, db);
    int rc = test_tokbench(cmd, out, sizeof out);
    if (!strstr(out, "1 ok, 1 failed") || rc != 1)
        fail_msg("exit %d (a failed case exits 1):\n%s", rc, out);
    snprintf(cmd, sizeof cmd, "show 1 --db %s", db);
    assert_int_equal(test_tokbench(cmd, out, sizeof out), 0);
    if (!strstr(out, "mismatch_lines") || !strstr(out, "option lines=x is not a whole number"))
        fail_msg("%s", out);
    test_run_dir_remove(dir);
}

static void usage_errors(void **state)
{
    (void)state;
    assert_int_equal(test_tokbench("fuzz", out, sizeof out), 2);
    assert_int_equal(test_tokbench("fuzz cl100k --lines x", out, sizeof out), 2);
    assert_non_null(strstr(out, "want a count"));
    assert_int_equal(test_tokbench("fuzz --help", out, sizeof out), 0);
    assert_non_null(strstr(out, "shortest input"));
    assert_int_equal(test_tokbench("fuzz no-such-vocab", out, sizeof out), 1);
    assert_non_null(strstr(out, "no-such-vocab"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(usage_errors),
        cmocka_unit_test(timeout_is_an_error),
        long_unit_test(mismatch_shrinks_to_the_token),
        cmocka_unit_test(experiment_records_counts),
        long_unit_test(manifest_vocabularies_fuzz),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
