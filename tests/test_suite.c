/* test_suite: the CSV suite reader on quoting edge cases and bad input,
 * row options, and the shipped suites naming only known experiments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../experiments/drivers/driver.h"
#include "../experiments/drivers/suite.h"

static int parse(const char *text, xp_suite_t *s, tb_err_t *err)
{
    return xp_suite_parse("t.csv", text, strlen(text), s, err);
}

/* Parsing that must fail; returns the message. */
static const char *parse_fails(const char *text, tb_err_t *err)
{
    xp_suite_t s;
    assert_int_equal(parse(text, &s, err), -1);
    assert_null(s.rows);
    return err->msg;
}

static void test_quoting_fixture(void **state)
{
    (void)state;
    xp_suite_t s;
    tb_err_t err;
    assert_int_equal(xp_suite_load("tests/fixtures/xp_quoting.csv", &s, &err), 0);
    assert_int_equal(s.n, 2);
    xp_row_t *r = &s.rows[0];
    assert_string_equal(r->experiment, "tokenize");
    assert_string_equal(r->vocab, "data/a,b.json");           /* quoted comma */
    assert_string_equal(r->pattern, "say \"hi\", then\nstop"); /* "" and newline */
    assert_string_equal(r->options, "reference=hf n=2");
    assert_int_equal(r->reps, 7);
    assert_int_equal(r->line, 2);
    /* CRLF endings, a blank line and a comment before it; spaces trimmed;
     * the quoted newline counts as a line */
    r = &s.rows[1];
    assert_string_equal(r->experiment, "selftest");
    assert_string_equal(r->options, "spaced");
    assert_string_equal(r->vocab, ""); /* missing trailing fields are empty */
    assert_int_equal(r->reps, 0);
    assert_int_equal(r->line, 6);
    xp_suite_free(&s);
}

static void test_columns_any_order(void **state)
{
    (void)state;
    xp_suite_t s;
    tb_err_t err;
    assert_int_equal(parse("corpus,experiment\nmulti,tokenize\n\"a\n#b\",selftest\n"
                           "# a comment \"quoted\nx,", &s, &err), -1);
    /* the quote in the comment is ignored; '#' inside quotes is data */
    assert_non_null(strstr(err.msg, "t.csv:6: field 'experiment' is empty"));
    assert_int_equal(parse("corpus,experiment\nmulti,tokenize\n\"a\n#b\",selftest", &s, &err), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.rows[1].corpus, "a\n#b");
    assert_string_equal(s.rows[0].corpus, "multi");
    assert_string_equal(s.rows[0].experiment, "tokenize");
    assert_string_equal(s.rows[1].experiment, "selftest"); /* no final newline */
    xp_suite_free(&s);
}

static void test_errors_name_the_fault(void **state)
{
    (void)state;
    tb_err_t err;
    assert_non_null(strstr(parse_fails("experiment,vocab\n", &err), "unknown column 'vocab'"));
    assert_non_null(strstr(parse_fails("vocabulary\nx\n", &err), "no 'experiment' column"));
    assert_non_null(strstr(parse_fails("experiment,experiment\n", &err), "given twice"));
    assert_non_null(strstr(parse_fails("experiment\nselftest,extra\n", &err),
                           "t.csv:2: 2 fields but the header names 1"));
    assert_non_null(strstr(parse_fails("experiment,repetitions\nselftest,0\n", &err),
                           "t.csv:2: field 'repetitions': '0'"));
    assert_non_null(strstr(parse_fails("experiment,repetitions\nselftest,3x\n", &err),
                           "'3x' is not a count"));
    assert_non_null(strstr(parse_fails("experiment,corpus\n,multi\n", &err),
                           "t.csv:2: field 'experiment' is empty"));
    assert_non_null(strstr(parse_fails("experiment\n\"selftest\n", &err),
                           "unterminated quote"));
    assert_non_null(strstr(parse_fails("experiment\n\"self\"test\n", &err),
                           "malformed CSV"));
    assert_non_null(strstr(parse_fails("", &err), "no header"));
}

static void test_options(void **state)
{
    (void)state;
    xp_suite_t s;
    tb_err_t err;
    char buf[32];
    assert_int_equal(parse("experiment,options\nselftest,n=5 reference=hf;quick\n", &s, &err), 0);
    xp_row_t *r = &s.rows[0];
    assert_string_equal(xp_row_option(r, "n", buf, sizeof buf), "5");
    assert_string_equal(xp_row_option(r, "reference", buf, sizeof buf), "hf");
    assert_string_equal(xp_row_option(r, "quick", buf, sizeof buf), "1");
    assert_null(xp_row_option(r, "ref", buf, sizeof buf)); /* no prefix match */
    assert_null(xp_row_option(r, "sleep_us", buf, sizeof buf));
    xp_suite_free(&s);
}

/* The one parser of numeric options: a default, the bounds, and an error
 * that names the line, the option and the value. */
static void test_numeric_options(void **state)
{
    (void)state;
    xp_suite_t s;
    tb_err_t err;
    uint64_t v;
    assert_int_equal(parse("experiment,options\nselftest,n=5 big=99 neg=-1 junk=4x huge="
                           "99999999999999999999999\n", &s, &err), 0);
    xp_row_t *r = &s.rows[0];
    assert_int_equal(xp_row_uint(r, "n", 7, 1, 10, &v, &err), 0);
    assert_int_equal(v, 5);
    assert_int_equal(xp_row_uint(r, "absent", 7, 1, 10, &v, &err), 0);
    assert_int_equal(v, 7);
    const char *bad[] = {"big", "neg", "junk", "huge"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(xp_row_uint(r, bad[i], 7, 1, 10, &v, &err), -1);
        assert_non_null(strstr(err.msg, "line 2: option "));
        assert_non_null(strstr(err.msg, bad[i]));
        assert_non_null(strstr(err.msg, "from 1 to 10"));
    }
    xp_suite_free(&s);
}

static void test_shipped_suites_name_known_experiments(void **state)
{
    (void)state;
    const char *suites[] = {"experiments/suites/default.csv",
                            "experiments/suites/selftest.csv",
                            "experiments/suites/maskbench.csv",
                            "tests/fixtures/xp_small.csv"};
    for (size_t i = 0; i < sizeof suites / sizeof *suites; i++) {
        xp_suite_t s;
        tb_err_t err;
        if (xp_suite_load(suites[i], &s, &err))
            fail_msg("%s", err.msg);
        assert_true(s.n > 0);
        for (size_t k = 0; k < s.n; k++)
            if (!xp_driver_find(s.rows[k].experiment))
                fail_msg("%s:%u: no experiment '%s'", suites[i], s.rows[k].line,
                         s.rows[k].experiment);
        xp_suite_free(&s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quoting_fixture),
        cmocka_unit_test(test_columns_any_order),
        cmocka_unit_test(test_errors_name_the_fault),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_numeric_options),
        cmocka_unit_test(test_shipped_suites_name_known_experiments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
