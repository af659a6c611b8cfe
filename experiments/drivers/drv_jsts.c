/*
 * drv_jsts: the official JSON Schema Test Suite as an experiment: a
 * compliance table per draft and keyword, as Bowtie publishes for
 * validators (experiments/refs/jsts.h runs the groups; tests/test_jsts.c
 * runs the same copy).
 *
 * Row: pattern = the suite's tests/ folder
 * (../shared/json-schema-test-suite/tests); options draft=2020-12|7
 * (default 2020-12), optional (optional/ and optional/format/ too) and
 * timeout=S (a group's child is killed after S seconds, default 20).  No
 * vocabulary: instances are fed byte by byte through the grammar.
 *
 * Stored: one outcome per group, item "keyword-file#index" (index from 0
 * in the file; optional files keep their folder, "optional/format/date#0"),
 * outcome passing, refused, wrong or crash, detail the compiler's message
 * or the instance at fault; and, source "static", the counts groups,
 * passing, refused, wrong and crash of the required groups and the same
 * prefixed "opt_" of the optional ones.  Every keyword file read is an
 * input of the run.  A crash is a verdict, contained in its child: it is
 * counted, and fails the case after every outcome is stored.  Without the suite's folder the
 * case fails saying so, and the report's section is "not measured" with
 * that reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../refs/jsts.h"
#include "driver.h"

typedef struct {
    char tests[4096];
    char draft[16];
    int optional;
    unsigned timeout;
    /* counts: [0] required, [1] optional; groups in [.][XP_JSTS_N] */
    uint64_t n[2][XP_JSTS_N + 1];
    char last_file[512];
    xp_env_t *env;
} jsts_t;

static void jsts_teardown(void *state)
{
    free(state);
}

static int jsts_setup(const xp_row_t *row, xp_env_t *env, void **state, tb_err_t *err)
{
    (void)env;
    uint64_t timeout = 0;
    char draft[16] = "2020-12", buf[8];
    if (xp_row_uint(row, "timeout", 20, 1, 3600, &timeout, err))
        return -1;
    if (!xp_row_option(row, "draft", draft, sizeof draft))
        snprintf(draft, sizeof draft, "2020-12");
    if (!xp_jsts_draft_dir(draft))
        return tb_fail(err, "line %u: option draft=%s: 2020-12 or 7", row->line, draft);
    if (!row->pattern || !row->pattern[0])
        return tb_fail(err, "line %u: field 'pattern': the JSON Schema Test Suite's tests/ "
                       "folder (../shared/json-schema-test-suite/tests)", row->line);
    if (xp_jsts_check(row->pattern, draft, err))
        return -1;
    jsts_t *s = calloc(1, sizeof *s);
    if (!s)
        return tb_fail(err, "out of memory");
    snprintf(s->tests, sizeof s->tests, "%s", row->pattern);
    snprintf(s->draft, sizeof s->draft, "%s", draft);
    s->optional = xp_row_option(row, "optional", buf, sizeof buf) != NULL;
    s->timeout = (unsigned)timeout;
    *state = s;
    return 0;
}

/* xp_jsts_run's callback: the group's outcome row, the counts, and each
 * keyword file as an input. */
static int on_group(void *ctx, const xp_jsts_group_t *g, tb_err_t *err)
{
    jsts_t *s = ctx;
    if (strcmp(s->last_file, g->file)) {
        char path[4700];
        snprintf(s->last_file, sizeof s->last_file, "%s", g->file);
        snprintf(path, sizeof path, "%s/%s/%s.json", s->tests, g->draft, g->file);
        if (xp_env_input(s->env, "suite", path, err))
            return -1;
    }
    xp_outcome_t o = {0};
    snprintf(o.impl, sizeof o.impl, "tokbench");
    snprintf(o.item, sizeof o.item, "%s#%zu", g->file, g->index);
    snprintf(o.outcome, sizeof o.outcome, "%s", xp_jsts_verdicts[g->verdict]);
    snprintf(o.detail, sizeof o.detail, "%s", g->detail);
    s->n[g->optional][g->verdict]++;
    s->n[g->optional][XP_JSTS_N]++;
    return xp_env_outcome(s->env, &o, err);
}

static int record(xp_env_t *env, const char *prefix, const char *metric, uint64_t v,
                  tb_err_t *err)
{
    xp_meas_t m = {.value = (double)v, .items = v};
    snprintf(m.source, sizeof m.source, "static");
    snprintf(m.impl, sizeof m.impl, "tokbench");
    snprintf(m.metric, sizeof m.metric, "%s%s", prefix, metric);
    return xp_env_record(env, &m, err);
}

static int jsts_extra(void *state, const xp_row_t *row, xp_env_t *env, tb_err_t *err)
{
    (void)row;
    jsts_t *s = state;
    s->env = env;
    if (xp_jsts_run(s->tests, s->draft, s->optional, s->timeout, env->stop, on_group, s, err))
        return -1;
    for (int o = 0; o < 1 + s->optional; o++) {
        const char *prefix = o ? "opt_" : "";
        if (record(env, prefix, "groups", s->n[o][XP_JSTS_N], err))
            return -1;
        for (int v = 0; v < XP_JSTS_N; v++)
            if (record(env, prefix, xp_jsts_verdicts[v], s->n[o][v], err))
                return -1;
    }
    /* as maskbench: a crash of the compiler or matcher fails the case once
     * every outcome is stored, so that `tokbench run` exits non-zero */
    uint64_t crashes = s->n[0][XP_JSTS_CRASH] + s->n[1][XP_JSTS_CRASH];
    if (crashes)
        return tb_fail(err, "%llu groups crashed (outcome 'crash': the group and its signal "
                       "are in its row)", (unsigned long long)crashes);
    return 0;
}

const xp_driver_t xp_driver_jsts = {
    .name = "jsts",
    .summary = "JSON Schema Test Suite: every group compiled and its instances fed, verdict "
               "passing/refused/wrong/crash per group (pattern: the suite's tests folder; "
               "draft=2020-12|7 optional timeout=S)",
    .setup = jsts_setup,
    .extra = jsts_extra,
    .teardown = jsts_teardown,
    .default_reps = 1,
};
