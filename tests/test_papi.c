/* test_papi: the PAPI path without a PMU, through tests/papi_double.c in
 * place of libpapi: a failing library init, no PMU, a CPU missing from the
 * preset table (perf's generic events instead), what each preset counts on
 * which CPU, presets that conflict in pairs, a positive return code, the
 * kernel's refusal, a failing PAPI_stop, a PAPI_read failing part-way
 * through a pass, and a normal run whose counts the double makes known:
 * the figures stored per repetition and per node, their events, and the
 * run summary's columns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <papi.h>

#include "../experiments/cli/cmd_results.h"
#include "../experiments/counters/counters.h"
#include "../experiments/drivers/driver.h"
#include "../experiments/store/results.h"
#include "../experiments/drivers/runner.h"
#include "papi_double.h"
#include "support.h"

enum { CYC, INS, L1D, L2D, LLC, BRMSP, BRCN };

static int reset(void **state)
{
    (void)state;
    papi_double_reset();
    return 0;
}

/* Every event unusable, with the probe's reason, and no pass. */
static void none_usable(const xp_papi_t *p)
{
    assert_int_equal(p->ok, 0);
    assert_int_equal(p->n_passes, 0);
    assert_int_equal(p->n_events, 7);
    for (int i = 0; i < p->n_events; i++) {
        assert_false(p->ev[i].usable);
        assert_non_null(p->ev[i].preset);
        assert_string_equal(p->ev[i].why, p->why);
    }
}

static void test_library_init_fails(void **state)
{
    (void)state;
    xp_papi_t p;
    papi_double.init_rc = PAPI_ESYS;
    xp_papi_probe(&p);
    none_usable(&p);
    assert_string_equal(p.why, "PAPI_library_init failed: a system call failed");
    assert_string_equal(p.ev[BRMSP].preset, "PAPI_BR_MSP");
    /* a library of another version answers with its own, a positive code */
    papi_double.init_rc = PAPI_VERSION_NUMBER(6, 0, 0, 0);
    xp_papi_probe(&p);
    none_usable(&p);
    assert_non_null(strstr(p.why, "the library is version 6.0, tokbench was built with "
                                  "the header of 7.0"));
}

static void test_no_pmu(void **state)
{
    (void)state;
    xp_papi_t p;
    papi_double.disabled = "Error libpfm4 no default PMU found";
    papi_double.virtualized = 1;
    xp_papi_probe(&p);
    none_usable(&p);
    assert_non_null(strstr(p.why, "perf_event component is disabled: Error libpfm4 no "
                                  "default PMU found"));
    /* the words say why: no PMU in this VM, or the kernel's paranoid level */
    assert_true(strstr(p.why, "no PMU: this virtual machine (DoubleVM)") ||
                strstr(p.why, "perf_event_paranoid is"));
}

/* A CPU newer than the preset table: every preset unavailable, perf's
 * generic events counted instead and named after what they count. */
static void test_cpu_missing_from_table(void **state)
{
    (void)state;
    static const struct {
        int i;
        const char *event, *metric;
    } want[] = {
        {CYC, "perf::PERF_COUNT_HW_CPU_CYCLES", "cycles"},
        {INS, "perf::PERF_COUNT_HW_INSTRUCTIONS", "instructions"},
        {L1D, "perf::PERF_COUNT_HW_CACHE_L1D:READ:MISS", "l1d_load_miss"},
        {LLC, "perf::PERF_COUNT_HW_CACHE_LL:READ:MISS", "llc_load_miss"},
        {BRMSP, "perf::PERF_COUNT_HW_BRANCH_MISSES", "br_misp_all"},
    };
    xp_papi_t p;
    memset(papi_double.native, 0, sizeof papi_double.native);
    xp_papi_probe(&p);
    assert_true(p.ok);
    assert_int_equal(p.user_only, 1);
    assert_int_equal(papi_double.domain, PAPI_DOM_USER);
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
        const xp_papi_event_t *e = &p.ev[want[k].i];
        assert_true(e->usable);
        assert_string_equal(e->event, want[k].event);
        assert_string_equal(e->native, want[k].event);
        assert_string_equal(e->metric, want[k].metric);
        assert_non_null(strstr(e->why, "this CPU (Double CPU family 25 model 97) is missing "
                                       "from PAPI 7.0's preset table; counting perf's "
                                       "generic event instead"));
    }
    /* no generic event stands in for these two */
    assert_false(p.ev[L2D].usable);
    assert_false(p.ev[BRCN].usable);
    assert_non_null(strstr(p.ev[BRCN].why, "PAPI_BR_CN cannot be counted: this CPU"));
    /* cycles+instructions, l1d alone, llc alone, br_misp alone */
    assert_int_equal(p.n_passes, 4);
    /* one preset missing on a CPU the table knows is said otherwise */
    papi_double_reset();
    papi_double.native[BRMSP] = NULL;
    xp_papi_probe(&p);
    assert_string_equal(p.ev[BRMSP].metric, "br_misp_all");
    assert_non_null(strstr(p.ev[BRMSP].why, "PAPI_BR_MSP has no native event on this CPU "
                                            "in PAPI's preset table"));
    /* and without the generic events nothing can be counted, in words */
    papi_double_reset();
    memset(papi_double.native, 0, sizeof papi_double.native);
    papi_double.no_perf_events = 1;
    xp_papi_probe(&p);
    assert_false(p.ok);
    assert_non_null(strstr(p.why, "no event can be counted: PAPI_TOT_CYC cannot be "
                                  "counted: this CPU"));
    assert_non_null(strstr(p.ev[CYC].why, "perf::PERF_COUNT_HW_CPU_CYCLES: PAPI does not "
                                          "know it"));
}

/* One preset, different native events on different CPUs (papi_events.csv):
 * the metric is named after the native event. */
static void test_meaning_per_cpu(void **state)
{
    (void)state;
    static const struct {
        int i;
        const char *native, *metric;
    } cpus[] = {
        {BRMSP, "BR_MISP_RETIRED:CONDITIONAL", "br_misp_cond"},            /* Haswell */
        {BRMSP, "BR_MISP_RETIRED:ALL_BRANCHES", "br_misp_all"},            /* Sandy Bridge */
        {BRMSP, "RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED", "br_misp_all"}, /* Zen 2 */
        {BRMSP, "BR_MISP_EXEC:ANY", "papi_br_msp"},                        /* Nehalem */
        {L1D, "L1D:REPLACEMENT", "l1d_fill"},                              /* Skylake */
        {L1D, "DATA_CACHE_MISSES", "l1d_miss"},                            /* K10 */
        {L2D, "CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C", "l2_load_miss"},
        {BRCN, "BR_INST_RETIRED:COND", "br_cond"},                         /* Ice Lake */
        {CYC, "CYCLES_NOT_IN_HALT", "cycles"},                             /* Zen 2 */
    };
    xp_papi_t p;
    for (size_t k = 0; k < sizeof cpus / sizeof *cpus; k++) {
        papi_double_reset();
        papi_double.native[cpus[k].i] = cpus[k].native;
        xp_papi_probe(&p);
        const xp_papi_event_t *e = &p.ev[cpus[k].i];
        assert_true(e->usable);
        assert_string_equal(e->event, e->preset);
        assert_string_equal(e->native, cpus[k].native);
        assert_string_equal(e->metric, cpus[k].metric);
        assert_string_equal(e->why, "");
    }
    /* a derived preset names both of its terms */
    papi_double_reset();
    xp_papi_probe(&p);
    assert_string_equal(p.ev[L2D].native, "LLC_REFERENCES - L2_RQSTS:CODE_RD_MISS");
    assert_string_equal(p.ev[L2D].metric, "l2d_miss");
    assert_string_equal(p.why, "4 passes");
}

static void test_conflicting_pairs(void **state)
{
    (void)state;
    xp_papi_t p;
    papi_double.conflict[0][0] = "PAPI_TOT_CYC";
    papi_double.conflict[0][1] = "PAPI_TOT_INS";
    papi_double.conflict[1][0] = "PAPI_BR_CN";
    papi_double.conflict[1][1] = "PAPI_BR_MSP";
    xp_papi_probe(&p);
    assert_true(p.ok);
    /* cycles, instructions, l1d+l2d, llc, br_misp, br_cond */
    assert_int_equal(p.n_passes, 6);
    static const int len[6] = {1, 1, 2, 1, 1, 1};
    for (int k = 0; k < 6; k++)
        assert_int_equal(p.pass_len[k], len[k]);
    assert_string_equal(p.ev[CYC].why, "counted in a pass of its own: with PAPI_TOT_INS, "
                                       "counter conflict (PAPI_add_event: counter conflict)");
    assert_non_null(strstr(p.ev[BRCN].why, "with PAPI_BR_MSP, counter conflict"));
    assert_string_equal(p.ev[L1D].why, "");
}

/* A positive code has no words in PAPI (PAPI_strerror gives NULL): the
 * message says what came back; the kernel's refusal names the paranoid
 * level. */
static void test_odd_codes(void **state)
{
    (void)state;
    xp_papi_t p;
    papi_double.start_rc = 1;
    xp_papi_probe(&p);
    assert_false(p.ok);
    assert_non_null(strstr(p.ev[BRCN].why, "PAPI_start: PAPI returned 1, which is not one "
                                           "of its error codes"));
    papi_double_reset();
    papi_double.start_rc = PAPI_EPERM;
    xp_papi_probe(&p);
    assert_false(p.ok);
    assert_non_null(strstr(p.ev[L2D].why, "the kernel refuses to count (PAPI_start: "
                                          "permission denied): perf_event_paranoid is"));
    /* and when a pass starts */
    papi_double_reset();
    xp_papi_probe(&p);
    assert_true(p.ok);
    papi_double.start_rc = 3;
    tb_err_t err;
    assert_int_equal(xp_papi_pass_begin(&p, 0, &err), -1);
    assert_string_equal(err.msg, "PAPI pass 0 (PAPI_TOT_CYC): PAPI returned 3, which is "
                                 "not one of its error codes");
}

/* --- measuring through the double -------------------------------------- */

/* A driver whose repetition `rep` visits 100 + nodes_step * rep nodes and
 * does that much work on the double's counters. */
static unsigned nodes_step = 10;

static int work_setup(const xp_row_t *row, xp_env_t *env, void **state, tb_err_t *err)
{
    (void)row, (void)env, (void)err;
    *state = NULL;
    return 0;
}

static int work_rep(void *state, unsigned rep, xp_qty_t *q, tb_err_t *err)
{
    (void)state, (void)err;
    q->nodes = 100 + nodes_step * rep;
    q->sink = rep;
    papi_double_work((long long)q->nodes);
    return 0;
}

static const xp_driver_t work_driver = {.name = "work", .setup = work_setup, .rep = work_rep};

static void measure(xp_papi_t *p, unsigned reps, xp_env_t *env)
{
    const char *f[7] = {"selftest"};
    xp_row_t r;
    tb_err_t err;
    assert_int_equal(xp_row_init(&r, f, 1), 0);
    env->sources = XP_SRC_PAPI;
    if (xp_case_measure(&work_driver, &r, reps, env, p, &err))
        fail_msg("%s", err.msg);
    xp_row_free(&r);
}

/* The figures of one metric: reps of them, each the repetition's nodes
 * times the event's rate, the read's cost subtracted as overhead. */
static void figures_exact(const xp_env_t *env, const xp_papi_event_t *e, unsigned reps)
{
    unsigned seen = 0;
    for (size_t i = 0; i < env->meas.len; i++) {
        const xp_meas_t *m = &env->meas.data[i];
        if (strcmp(m->metric, e->metric))
            continue;
        assert_string_equal(m->source, "papi");
        assert_string_equal(m->event, e->event);
        assert_string_equal(m->native, e->native);
        assert_int_equal(m->user_only, 1);
        assert_int_equal(m->rep, seen);
        assert_int_equal(m->nodes, 100 + nodes_step * m->rep);
        assert_true(m->value == (double)(m->nodes * papi_double_rate(e->event)));
        assert_true(m->overhead == PAPI_DOUBLE_READ);
        seen++;
    }
    if (seen != reps)
        fail_msg("%s: %u figures, not %u", e->metric, seen, reps);
}

static int64_t new_run(xp_db_t *d)
{
    tb_err_t err;
    xp_prov_t prov;
    memset(&prov, 0, sizeof prov);
    int64_t run = xp_db_run_begin(d, "double.csv", &prov, &err);
    assert_true(run > 0);
    return run;
}

static void store_case(xp_db_t *d, int64_t run, unsigned seq, const xp_env_t *env)
{
    tb_err_t err;
    const char *f[7] = {"walk", "v", "dfs", seq ? "fixed" : "growing"};
    xp_row_t r;
    assert_int_equal(xp_row_init(&r, f, 1), 0);
    xp_case_rec_t rec = {.run = run, .seq = seq, .row = &r, .sources = "papi",
                         .status = "ok", .started = "t", .env = env};
    if (xp_db_case_write(d, &rec, &err))
        fail_msg("%s", err.msg);
    xp_row_free(&r);
}

static double sql_double(xp_db_t *d, const char *sql)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(d->db));
    double v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_double(st, 0) : -1;
    sqlite3_finalize(st);
    return v;
}

/* The summary of the run, in a buffer to free. */
static char *summary(xp_db_t *d, int64_t run)
{
    char *text;
    size_t len;
    tb_err_t err;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(xp_print_summary(f, d, run, &err), 0);
    fclose(f);
    return text;
}

/* Two cases, one whose repetitions visit more nodes each time, one with
 * the same nodes every time: every figure is its repetition's nodes times
 * the event's rate, per repetition in the store, per node in its views,
 * and in the run summary. */
static void test_counts_exact(void **state)
{
    (void)state;
    xp_papi_t p;
    xp_papi_probe(&p);
    assert_true(p.ok);
    char path[] = "/tmp/tokbench-test-papi-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    tb_err_t err;
    xp_db_t *d = xp_db_open(path, 1, &err);
    assert_non_null(d);
    int64_t run = new_run(d);
    for (unsigned seq = 0; seq < 2; seq++) {
        nodes_step = seq ? 0 : 10;
        xp_env_t env = {0};
        measure(&p, 5, &env);
        assert_string_equal(env.note, "");
        for (int i = 0; i < p.n_events; i++)
            figures_exact(&env, &p.ev[i], 5);
        assert_int_equal(env.meas.len, 7 * 5);
        store_case(d, run, seq, &env);
        xp_env_free(&env);
    }
    nodes_step = 10;
    assert_true(sql_double(d, "SELECT count(*) FROM measurement_ratios WHERE source ="
                              " 'papi' AND metric = 'br_misp_cond' AND per_node = 3") == 10);
    assert_true(sql_double(d, "SELECT count(*) FROM measurements WHERE source = 'papi' AND"
                              " metric = 'l1d_fill' AND event = 'PAPI_L1_DCM' AND native ="
                              " 'L1D:REPLACEMENT' AND user_only = 1") == 10);
    assert_true(sql_double(d, "SELECT median_per_node FROM per_node_stats s JOIN cases c ON"
                              " c.id = s.case_id WHERE c.seq = 1 AND metric = 'cycles'") == 13);
    assert_true(sql_double(d, "SELECT vs_13_cycle_baseline FROM per_node_stats s JOIN cases"
                              " c ON c.id = s.case_id WHERE c.seq = 1 AND metric ="
                              " 'cycles'") == 1);
    /* the summary's columns: core cycles, the L1D and misprediction
     * events by name, and the footer says which events they are */
    char *text = summary(d, run);
    if (!strstr(text, "cyc/node  x13cyc      l1d_fill     br_misp_cond\n") ||
        !strstr(text, "13.00    1.00         2.000            3.000\n") ||
        !strstr(text, "cyc/node: core cycles per visited node (papi PAPI_TOT_CYC = "
                      "CPU_CLK_THREAD_UNHALTED:THREAD_P, user mode only)") ||
        !strstr(text, "br_misp_cond: branch mispredictions per visited node (papi "
                      "PAPI_BR_MSP = BR_MISP_RETIRED:CONDITIONAL, user mode only)"))
        fail_msg("summary:\n%s", text);
    free(text);
    xp_db_close(d);
    unlink(path);
}

/* A PAPI_read that fails part-way through a pass: none of that pass's
 * figures are kept (no metric with part of its repetitions), the passes
 * before it are whole, and the case goes on with a note. */
static void test_failing_pass_dropped(void **state)
{
    (void)state;
    xp_papi_t p;
    xp_papi_probe(&p);
    papi_double.fail_read_event = "PAPI_L1_DCM";
    papi_double.fail_read_after = 100 + 110 + 120; /* in the fourth repetition */
    xp_env_t env = {0};
    measure(&p, 5, &env);
    figures_exact(&env, &p.ev[CYC], 5);
    figures_exact(&env, &p.ev[INS], 5);
    assert_int_equal(env.meas.len, 2 * 5);
    assert_string_equal(env.note, "papi failed, the case went on without it: pass "
                                  "l1d_fill+l2d_miss, its figures dropped: PAPI_read: a "
                                  "system call failed");
    xp_env_free(&env);
}

/* A PAPI_stop that fails leaves its set counting, and PAPI could start no
 * other (PAPI_EISRUN): the pass's figures, read while it counted, are
 * kept; PAPI is off from then on, said in words, never tried again. */
static void test_stop_fails(void **state)
{
    (void)state;
    xp_papi_t p;
    xp_papi_probe(&p);
    papi_double.stop_rc = PAPI_ESYS;
    int starts = papi_double.starts;
    xp_env_t env = {0};
    measure(&p, 3, &env);
    assert_int_equal(papi_double.starts, starts + 1);
    figures_exact(&env, &p.ev[CYC], 3);
    figures_exact(&env, &p.ev[INS], 3);
    assert_int_equal(env.meas.len, 2 * 3);
    assert_string_equal(env.note, "papi (the figures read before it are kept): PAPI_stop "
                                  "failed (a system call failed): its event set may still be "
                                  "counting and no other can start, so PAPI is off for the "
                                  "rest of this run");
    assert_false(p.ok);
    xp_env_free(&env);
    /* the next case: no attempt, the same words */
    xp_env_t next = {0};
    measure(&p, 3, &next);
    assert_int_equal(papi_double.starts, starts + 1);
    assert_int_equal(next.meas.len, 0);
    assert_non_null(strstr(next.note, "PAPI is off for the rest of this run"));
    assert_null(strstr(next.note, "running"));
    xp_env_free(&next);
    /* a probe whose set will not stop tries nothing after it */
    papi_double_reset();
    papi_double.stop_rc = PAPI_ESYS;
    xp_papi_probe(&p);
    none_usable(&p);
    assert_int_equal(papi_double.starts, 1);
    assert_string_equal(p.why, "PAPI could not stop a probe's event set (PAPI_stop: a "
                               "system call failed), which may still be counting: no other "
                               "set can start, so PAPI is off");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_library_init_fails, reset),
        cmocka_unit_test_setup(test_no_pmu, reset),
        cmocka_unit_test_setup(test_cpu_missing_from_table, reset),
        cmocka_unit_test_setup(test_meaning_per_cpu, reset),
        cmocka_unit_test_setup(test_conflicting_pairs, reset),
        cmocka_unit_test_setup(test_odd_codes, reset),
        cmocka_unit_test_setup(test_counts_exact, reset),
        cmocka_unit_test_setup(test_failing_pass_dropped, reset),
        cmocka_unit_test_setup(test_stop_fails, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
