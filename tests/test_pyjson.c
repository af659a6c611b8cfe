/*
 * Tests of experiments/drivers/pyjson (JSON as Python's json.dumps writes it, the
 * MaskBench serialization) against Python itself: random JSON values
 * (floats across the exponent range, integers, strings with escapes,
 * control characters and non-ASCII, nested arrays and objects) are written
 * to a file one per line, python3 reads each and writes json.dumps(v,
 * ensure_ascii=False), and every line must equal tokbench's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../base/file.h"
#include "../experiments/drivers/pyjson.h"
#include "support.h"

static double random_double(void)
{
    /* Mantissas and exponents from all over: short decimals, halves,
     * integral values, tiny and huge magnitudes. */
    switch (test_rnd(5)) {
    case 0:
        return (double)test_rnd(100000) / 1000.0;
    case 1:
        return (double)test_rnd(1u << 30) * (test_rnd(2) ? 1 : -1);
    case 2: {
        uint64_t bits = ((uint64_t)test_rnd(1u << 31) << 33) ^ ((uint64_t)test_rnd(1u << 31) << 2);
        double d;
        bits &= ~(0x7FFull << 52);
        bits |= (uint64_t)(1023 - 60 + test_rnd(120)) << 52;
        memcpy(&d, &bits, sizeof d);
        return d;
    }
    case 3:
        return (double)test_rnd(1000) * 1e-7;
    default:
        return (double)test_rnd(1000) * 1e14;
    }
}

static json_t *random_string(void)
{
    static const char *const pieces[] = {"a", "Zz", " ", "\"", "\\", "/", "\n", "\t", "\r",
                                         "\b", "\f", "\x01", "\x1f", "\x7f", "é", "中文",
                                         "\xe2\x80\xa8", "😀", "ü"};
    char buf[128] = "";
    size_t n = test_rnd(8);
    for (size_t i = 0; i < n; i++)
        strcat(buf, pieces[test_rnd(sizeof pieces / sizeof *pieces)]);
    return json_string(buf);
}

static json_t *random_value(int depth)
{
    switch (depth > 3 ? test_rnd(5) : test_rnd(7)) {
    case 0: return json_null();
    case 1: return test_rnd(2) ? json_true() : json_false();
    case 2: return json_integer((json_int_t)test_rnd(1u << 31) * (test_rnd(2) ? 1 : -1) *
                                (test_rnd(4) ? 1 : 100000));
    case 3: return json_real(random_double());
    case 4: return random_string();
    case 5: {
        json_t *a = json_array();
        for (uint32_t i = test_rnd(4); i; i--)
            json_array_append_new(a, random_value(depth + 1));
        return a;
    }
    default: {
        json_t *o = json_object();
        for (uint32_t i = test_rnd(4); i; i--) {
            char key[16];
            snprintf(key, sizeof key, "k%u\"%u", test_rnd(100), i);
            json_object_set_new(o, key, random_value(depth + 1));
        }
        return o;
    }
    }
}

static void test_against_python(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_pyjson.XXXXXX";
    test_tmpdir(dir);
    char in[256], out[256], cmd[1024];
    snprintf(in, sizeof in, "%s/in.jsonl", dir);
    snprintf(out, sizeof out, "%s/out.jsonl", dir);
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    enum { N = 3000 };
    tb_buf_t *ours = calloc(N, sizeof *ours);
    for (int i = 0; i < N; i++) {
        json_t *v = random_value(0);
        /* jansson writes reals with 17 digits: exact input for Python */
        char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
        fprintf(f, "%s\n", text);
        free(text);
        assert_int_equal(xp_py_dumps(v, &ours[i]), 0);
        json_decref(v);
    }
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "python3 -c 'import json,sys\n"
             "for l in open(sys.argv[1], encoding=\"utf-8\"):\n"
             "  sys.stdout.write(json.dumps(json.loads(l), indent=None, ensure_ascii=False)+\"\\n\")'"
             " %s > %s", in, out);
    assert_int_equal(system(cmd), 0);
    f = fopen(out, "r");
    assert_non_null(f);
    char *line = NULL;
    size_t cap = 0;
    for (int i = 0; i < N; i++) {
        ssize_t n = getline(&line, &cap, f);
        assert_true(n > 0);
        line[n - 1] = 0;
        tb_buf_putc(&ours[i], 0);
        if (strcmp(line, (char *)ours[i].data)) {
            print_message("line %d: python %s\n          tokbench %s\n", i, line,
                          (char *)ours[i].data);
            fail();
        }
        tb_buf_free(&ours[i]);
    }
    free(line);
    free(ours);
    fclose(f);
    const char *names[] = {"in.jsonl", "out.jsonl"};
    test_rmdir(dir, names, 2);
}

/* Integers beyond 64 bits, which jansson refuses: xp_py_load_file keeps
 * them, xp_py_dumps writes them as Python does (checked against python3),
 * and xp_py_unbig gives them back in a text json_dumps wrote; digits in
 * strings stay strings. */
static void test_big_integers(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_pyjson_big.XXXXXX";
    test_tmpdir(dir);
    char in[256], out[256], cmd[1024];
    snprintf(in, sizeof in, "%s/big.json", dir);
    snprintf(out, sizeof out, "%s/py.txt", dir);
    const char *text = "{\"a\": 12345678901234567890, \"b\": [-99999999999999999999, 7, "
                       "2.5], \"c\": \"18446744073709551616 \\\" 9\", "
                       "\"d\": 9223372036854775807}";
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    json_error_t je;
    json_t *v = xp_py_load_file(in, &je);
    if (!v)
        fail_msg("%s", je.text);
    tb_buf_t ours = {0};
    assert_int_equal(xp_py_dumps(v, &ours), 0);
    assert_int_equal(tb_buf_putc(&ours, 0), 0);
    snprintf(cmd, sizeof cmd,
             "python3 -c 'import json,sys; sys.stdout.write(json.dumps(json.load(open(sys.argv[1])),"
             " ensure_ascii=False))' %s > %s", in, out);
    assert_int_equal(system(cmd), 0);
    uint8_t *py;
    size_t n;
    tb_err_t err;
    assert_int_equal(tb_read_file(out, &py, &n, &err), 0);
    assert_string_equal((char *)ours.data, (char *)py);
    char *dumped = json_dumps(v, JSON_COMPACT);
    xp_py_unbig(dumped);
    assert_string_equal(dumped, "{\"a\":12345678901234567890,\"b\":[-99999999999999999999,7,"
                                "2.5],\"c\":\"18446744073709551616 \\\" 9\","
                                "\"d\":9223372036854775807}");
    free(dumped);
    free(py);
    free(ours.data);
    json_decref(v);
    const char *names[] = {"big.json", "py.txt"};
    test_rmdir(dir, names, 2);
}

/* The boundaries of Python's float repr, decided by its rules rather than
 * by running it: fixed notation for exponents -4..15, else exponent form
 * with at least two digits. */
static void test_float_repr(void **state)
{
    (void)state;
    const struct {
        double x;
        const char *want;
    } cases[] = {{1.0, "1.0"},         {0.1, "0.1"},       {1e16, "1e+16"},
                 {1e15, "1000000000000000.0"}, {0.0001, "0.0001"}, {0.00001, "1e-05"},
                 {-2.5, "-2.5"},       {1.5e300, "1.5e+300"}, {123456789.125, "123456789.125"},
                 {5e-324, "5e-324"},   {-0.0, "-0.0"},     {0.30000000000000004, "0.30000000000000004"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tb_buf_t b = {0};
        assert_int_equal(xp_py_float_repr(cases[i].x, &b), 0);
        tb_buf_putc(&b, 0);
        assert_string_equal((char *)b.data, cases[i].want);
        tb_buf_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float_repr),
        cmocka_unit_test(test_against_python),
        cmocka_unit_test(test_big_integers),
    };
    return cmocka_run_group_tests_name("pyjson", tests, NULL, NULL);
}
