/* Tests of the vocab, encode and decode commands: what they print agrees
 * with the library on a real vocabulary, and bad arguments fail naming
 * what is wrong. */
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

#include "../base/file.h"
#include "support.h"

#define LLAMA3 "data/cache/llama3/tokenizer.json"

static char bin[512];

/* Runs `tokbench ARGS`; returns the exit status, output (malloc'd) in *out. */
static int run(const char *args, char **out)
{
    char cmd[8800];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", bin, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t len = 0, cap = 1 << 20;
    char *buf = malloc(cap);
    assert_non_null(buf);
    size_t n;
    while ((n = fread(buf + len, 1, cap - 1 - len, p)) > 0)
        len += n;
    buf[len] = 0;
    int status = pclose(p);
    *out = buf;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void vocab_agrees_with_the_library(void **state)
{
    (void)state;
    tok_tokenizer_t *t = test_load(LLAMA3);
    const tok_vocab_t *v = tok_vocab(t);
    char sum[65], *out;
    tok_vocab_checksum(v, sum);
    assert_int_equal(run("vocab " LLAMA3, &out), 0);
    unsigned size = 0;
    const char *at = strstr(out, "size ");
    assert_non_null(at);
    assert_int_equal(sscanf(at, "size %u ids", &size), 1);
    assert_int_equal(size, v->size);
    assert_non_null(strstr(out, sum));
    /* The histogram's counts add up to the vocabulary size. */
    unsigned long total = 0, count;
    char label[16];
    for (char *line = strstr(out, "token byte lengths"); line;
         line = strchr(line + 1, '\n'))
        if (sscanf(line + 1, " %15s %lu", label, &count) == 2 &&
            (label[0] >= '0' && label[0] <= '9'))
            total += count;
    assert_int_equal(total, v->size);
    /* The last exact bucket, 16 bytes, is its own line. */
    unsigned long sixteen = 0;
    for (uint32_t id = 0; id < v->size; id++)
        sixteen += v->offset[id + 1] - v->offset[id] == 16;
    char line16[64];
    snprintf(line16, sizeof line16, "\n  %7d  %lu\n", 16, sixteen);
    assert_non_null(strstr(out, line16));
    free(out);
    tok_free(t);
}

static void encode_then_decode_round_trips(void **state)
{
    (void)state;
    const char *text = "Grüße, 世界! 12345 <|begin_of_text|>  tabs\tand spaces";
    tok_tokenizer_t *t = test_load(LLAMA3);
    tok_ids_t ids = {0};
    tb_err_t err;
    assert_int_equal(tok_encode(t, (const uint8_t *)text, strlen(text), &ids, &err), 0);
    char args[8192], *out;
    snprintf(args, sizeof args, "encode " LLAMA3 " '%s'", text);
    assert_int_equal(run(args, &out), 0);
    char want[4096] = {0};
    size_t at = 0;
    for (size_t i = 0; i < ids.len; i++)
        at += (size_t)snprintf(want + at, sizeof want - at, i ? " %u" : "%u", ids.data[i]);
    want[at++] = '\n';
    assert_string_equal(out, want);
    free(out);
    want[at - 1] = 0;
    snprintf(args, sizeof args, "decode " LLAMA3 " %s", want);
    assert_int_equal(run(args, &out), 0);
    assert_string_equal(out, text);
    free(out);
    free(ids.data);
    tok_free(t);
}

/* encode --lines: one line of ids per input line, in order, the same on 2
 * threads as on 1, each line's ids those of tok_encode on that line. */
static void lines_match_the_library(void **state)
{
    (void)state;
    uint8_t *multi;
    size_t len;
    tb_err_t err;
    test_need_file("data/cache/multi/multi.txt");
    if (tb_read_file("data/cache/multi/multi.txt", &multi, &len, &err))
        fail_msg("%s", err.msg);
    /* 400 lines, then an empty line and a last line without its '\n' */
    size_t end = 0;
    for (int k = 0; k < 400 && end < len; k++) {
        const uint8_t *nl = memchr(multi + end, '\n', len - end);
        end = nl ? (size_t)(nl - multi) + 1 : len;
    }
    char path[] = "/tmp/tb-lines.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fwrite(multi, 1, end, f);
    fputs("\nlast line", f);
    fclose(f);
    char args[600], *one, *two;
    snprintf(args, sizeof args, "encode " LLAMA3 " --lines --threads 1 -f %s", path);
    assert_int_equal(run(args, &one), 0);
    snprintf(args, sizeof args, "encode " LLAMA3 " --lines --threads 2 -f %s", path);
    assert_int_equal(run(args, &two), 0);
    assert_string_equal(one, two);
    tok_tokenizer_t *t = test_load(LLAMA3);
    uint8_t *text;
    assert_int_equal(tb_read_file(path, &text, &len, &err), 0);
    const char *at = one;
    size_t lines = 0;
    for (size_t pos = 0; pos < len; lines++) {
        const uint8_t *nl = memchr(text + pos, '\n', len - pos);
        size_t stop = nl ? (size_t)(nl - text) : len;
        tok_ids_t ids = {0};
        assert_int_equal(tok_encode(t, text + pos, stop - pos, &ids, &err), 0);
        for (size_t i = 0; i < ids.len; i++) {
            char *next;
            unsigned long id = strtoul(at, &next, 10);
            if (next == at || id != ids.data[i])
                fail_msg("line %zu, id %zu: got '%.20s', want %u", lines + 1, i,
                         at, ids.data[i]);
            at = next;
        }
        if (*at != '\n')
            fail_msg("line %zu: more ids than tok_encode's: '%.20s'", lines + 1, at);
        at++;
        free(ids.data);
        pos = stop + 1;
    }
    assert_int_equal(lines, 402);
    assert_int_equal(*at, 0);
    free(text);
    tok_free(t);
    free(one);
    free(two);
    unlink(path);
    free(multi);
}

/* A line the tokenizer refuses is named by its number, whatever the
 * threads; gemma3 refuses invalid UTF-8. */
static void lines_name_a_bad_line(void **state)
{
    (void)state;
    const char *gemma3 = "data/cache/gemma3/tokenizer.json";
    test_need_file(gemma3);
    char path[] = "/tmp/tb-lines.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    for (int i = 1; i <= 100; i++)
        fputs(i == 57 || i == 90 ? "bad \xFF\n" : "good\n", f);
    fclose(f);
    char args[600], *out;
    snprintf(args, sizeof args, "encode %s --lines --threads 2 -f %s", gemma3, path);
    assert_int_equal(run(args, &out), 1);
    if (!strstr(out, ", line 57: ") || !strstr(out, "invalid UTF-8 at byte 4"))
        fail_msg("want line 57 named: %s", out);
    free(out);
    unlink(path);
}

static void bad_arguments_are_named(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(run("decode " LLAMA3 " 12 99999999", &out), 1);
    assert_non_null(strstr(out, "'99999999' is not a token id"));
    free(out);
    assert_int_equal(run("decode " LLAMA3 " 12x", &out), 1);
    assert_non_null(strstr(out, "'12x'"));
    free(out);
    assert_int_equal(run("encode no-such-vocabulary hi", &out), 1);
    assert_non_null(strstr(out, "no-such-vocabulary"));
    free(out);
    assert_int_equal(run("encode " LLAMA3 " -f /nonexistent/file", &out), 1);
    assert_non_null(strstr(out, "/nonexistent/file"));
    free(out);
    assert_int_equal(run("vocab tests/test_cli.c", &out), 1);
    assert_non_null(strstr(out, "tests/test_cli.c"));
    free(out);
    assert_int_equal(run("encode", &out), 2);
    assert_non_null(strstr(out, "usage: tokbench encode"));
    free(out);
    assert_int_equal(run("encode --help", &out), 0);
    assert_non_null(strstr(out, "usage: tokbench encode"));
    free(out);
    assert_int_equal(run("encode " LLAMA3 " --lines --threads x -f /dev/null", &out), 1);
    assert_non_null(strstr(out, "--threads: 'x'"));
    free(out);
    /* --threads belongs to --lines, which takes a file */
    assert_int_equal(run("encode " LLAMA3 " --threads 2 hi", &out), 2);
    free(out);
    assert_int_equal(run("encode " LLAMA3 " --lines hi", &out), 2);
    free(out);
}

/* `tokbench run` exits 1 when a case failed, 0 when every failure is one
 * the suite expects (expect=fail, or needs=PATH where PATH is absent: the
 * case does not run), and 1 again when an expect=fail case ran. */
static void run_exit_status_says_whether_a_case_failed(void **state)
{
    (void)state;
    static const struct {
        const char *rows, *says;
        int rc;
    } runs[] = {
        {"selftest,,,,,2,tsc,n=10\n", "1 ok, 0 failed", 0},
        {"selftest,,,,,2,tsc,n=10\nselftest,,,,,2,tsc,fail=rep\n", "1 ok, 1 failed", 1},
        {"selftest,,,,,2,tsc,fail=rep expect=fail\n", "(1 failed as the suite expects)", 0},
        {"selftest,,,,,2,tsc,n=10 expect=fail\n", "1 marked expect=fail ran", 1},
        {"selftest,,,,,2,tsc,n=10 needs=/nonexistent/data\n",
         "(1 failed as the suite expects)", 0},
        {"selftest,,,,,2,tsc,n=10 needs=tests\n", "1 ok, 0 failed", 0},
    };
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        char dir[] = "/tmp/test_cli.XXXXXX", suite[256], db[256], cmd[600], out[8192];
        FILE *f = test_run_dir(dir, suite, db, sizeof suite);
        fputs(runs[i].rows, f);
        fclose(f);
        snprintf(cmd, sizeof cmd, "run %s --db %s --quiet", suite, db);
        int rc = test_tokbench(cmd, out, sizeof out);
        if (rc != runs[i].rc || !strstr(out, runs[i].says))
            fail_msg("suite %zu: exit %d, want %d and '%s':\n%s", i, rc, runs[i].rc,
                     runs[i].says, out);
        test_run_dir_remove(dir);
    }
}

static int setup(void **state)
{
    (void)state;
    const char *build = getenv("BUILD");
    snprintf(bin, sizeof bin, "%s/tokbench", build && *build ? build : "build");
    if (access(bin, X_OK)) {
        fprintf(stderr, "%s is missing: build it first\n", bin);
        return -1;
    }
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(vocab_agrees_with_the_library),
        cmocka_unit_test(encode_then_decode_round_trips),
        cmocka_unit_test(lines_match_the_library),
        cmocka_unit_test(lines_name_a_bad_line),
        cmocka_unit_test(bad_arguments_are_named),
        cmocka_unit_test(run_exit_status_says_whether_a_case_failed),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
