/* runner: the suite runner and the measurement method (see runner.h). */
#include "runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../counters/counters.h"
#include "../store/results.h"
#include "../../base/file.h"

/* Where measured results are folded so no repetition is dead code. */
volatile uint64_t xp_sink;

static int empty_rep(void *state, unsigned rep, xp_qty_t *q, tb_err_t *err)
{
    (void)state, (void)rep, (void)q, (void)err;
    return 0;
}

static const xp_driver_t empty_driver = {.name = "empty", .rep = empty_rep};

#define OVERHEAD_SAMPLES 63

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int stopped(const xp_env_t *env)
{
    return env->stop && *env->stop;
}

/* What a stored figure counted (see counters.h): its source, metric and
 * exact event. */
typedef struct {
    const char *source, *metric, *event, *native;
    int user_only;
} what_t;

static int record(xp_env_t *env, const what_t *w, unsigned rep, double value,
                  double overhead, const xp_qty_t *q, tb_err_t *err)
{
    xp_meas_t m = {.rep = rep, .value = value, .overhead = overhead,
                   .user_only = w->user_only, .bytes = q->bytes, .nodes = q->nodes,
                   .items = q->items};
    snprintf(m.source, sizeof m.source, "%s", w->source);
    snprintf(m.impl, sizeof m.impl, "tokbench");
    snprintf(m.metric, sizeof m.metric, "%s", w->metric);
    snprintf(m.event, sizeof m.event, "%s", w->event);
    snprintf(m.native, sizeof m.native, "%s", w->native ? w->native : "");
    return xp_env_record(env, &m, err);
}

/* Median cost of measuring nothing, in TSC ticks. */
static double tsc_overhead(void)
{
    double s[OVERHEAD_SAMPLES];
    xp_qty_t q;
    for (int i = 0; i < OVERHEAD_SAMPLES; i++) {
        uint64_t t0 = xp_tsc_begin();
        xp_measured_rep(&empty_driver, NULL, 0, &q, NULL);
        s[i] = (double)(xp_tsc_end() - t0);
    }
    return median(s, OVERHEAD_SAMPLES);
}

/* The TSC counts every cycle of the wall clock: kernel and halted time
 * too.  The event names the instruction that ended the region. */
static const what_t ref_cycles = {"tsc", "ref_cycles", "rdtscp", NULL, 0};
static const what_t tsc_ns = {"tsc", "ns", "rdtscp / measured TSC Hz", NULL, 0};
static const what_t ref_cycles_rdtsc = {"tsc", "ref_cycles", "lfence; rdtsc", NULL, 0};
static const what_t tsc_ns_rdtsc = {"tsc", "ns", "lfence; rdtsc / measured TSC Hz", NULL, 0};

static int pass_tsc(const xp_driver_t *d, void *st, unsigned reps, xp_env_t *env,
                    tb_err_t *err)
{
    double over = tsc_overhead(), ns_per_tick = 1e9 / env->tsc_hz;
    const what_t *cycles = xp_tsc_rdtscp ? &ref_cycles : &ref_cycles_rdtsc;
    const what_t *ns = xp_tsc_rdtscp ? &tsc_ns : &tsc_ns_rdtsc;
    for (unsigned i = 0; i < reps && !stopped(env); i++) {
        xp_qty_t q = {0};
        uint64_t t0 = xp_tsc_begin();
        int rc = xp_measured_rep(d, st, i, &q, err);
        uint64_t t1 = xp_tsc_end();
        if (rc)
            return -1;
        xp_sink ^= q.sink;
        double ticks = (double)(t1 - t0) - over;
        if (ticks < 0)
            ticks = 0;
        if (record(env, cycles, i, ticks, over, &q, err) ||
            record(env, ns, i, ticks * ns_per_tick, over * ns_per_tick, &q, err))
            return -1;
    }
    return 0;
}

/* Median cost of an empty measurement for each event of the open pass. */
static int papi_overhead(xp_papi_t *p, int pass, double over[2], tb_err_t *err)
{
    double s[2][OVERHEAD_SAMPLES];
    xp_qty_t q;
    for (int i = 0; i < OVERHEAD_SAMPLES; i++) {
        long long a[2], b[2];
        if (xp_papi_read(p, a, err))
            return -1;
        xp_measured_rep(&empty_driver, NULL, 0, &q, NULL);
        if (xp_papi_read(p, b, err))
            return -1;
        for (int k = 0; k < p->pass_len[pass]; k++)
            s[k][i] = (double)(b[k] - a[k]);
    }
    for (int k = 0; k < p->pass_len[pass]; k++)
        over[k] = median(s[k], OVERHEAD_SAMPLES);
    return 0;
}

/* Returns 0; -1 when PAPI fails (err says how); -2 when the case fails:
 * its own repetition, or storing a figure. */
static int papi_reps(const xp_driver_t *d, void *st, unsigned reps, xp_env_t *env,
                     xp_papi_t *p, int pass, tb_err_t *err)
{
    double over[2] = {0, 0};
    if (papi_overhead(p, pass, over, err))
        return -1;
    what_t w[2];
    for (int k = 0; k < p->pass_len[pass]; k++) {
        const xp_papi_event_t *e = &p->ev[p->pass_ev[pass][k]];
        w[k] = (what_t){"papi", e->metric, e->event, e->native, p->user_only};
    }
    for (unsigned i = 0; i < reps && !stopped(env); i++) {
        xp_qty_t q = {0};
        long long a[2], b[2];
        if (xp_papi_read(p, a, err))
            return -1;
        if (xp_measured_rep(d, st, i, &q, err))
            return -2;
        if (xp_papi_read(p, b, err))
            return -1;
        xp_sink ^= q.sink;
        for (int k = 0; k < p->pass_len[pass]; k++) {
            double v = (double)(b[k] - a[k]) - over[k];
            if (record(env, &w[k], i, v < 0 ? 0 : v, over[k], &q, err))
                return -2;
        }
    }
    return 0;
}

/* Appends to the case's note, "; "-separated. */
static void note(xp_env_t *env, const char *source, const char *how, const tb_err_t *e)
{
    size_t n = strlen(env->note);
    snprintf(env->note + n, sizeof env->note - n, "%s%s%s: %.300s", n ? "; " : "", source,
             how, e->msg);
}

static void add_note(xp_env_t *env, const char *source, const tb_err_t *e)
{
    note(env, source, " failed, the case went on without it", e);
}

/* The metrics of a pass, "cycles+instructions". */
static const char *pass_metrics(const xp_papi_t *p, int pass, char *buf, size_t size)
{
    snprintf(buf, size, "%s%s%s", p->ev[p->pass_ev[pass][0]].metric,
             p->pass_len[pass] > 1 ? "+" : "",
             p->pass_len[pass] > 1 ? p->ev[p->pass_ev[pass][1]].metric : "");
    return buf;
}

/* One pass: 0, -1 when PAPI failed (the note says how; the pass's figures
 * are dropped, so that no metric keeps part of its repetitions), -2 when
 * the case failed. */
static int papi_pass(const xp_driver_t *d, void *st, unsigned reps, xp_env_t *env,
                     xp_papi_t *p, int pass, tb_err_t *err)
{
    size_t kept = env->meas.len;
    char names[64];
    pass_metrics(p, pass, names, sizeof names);
    tb_err_t perr, serr;
    int rc = xp_papi_pass_begin(p, pass, &perr) ? -1 : 0;
    if (!rc)
        rc = papi_reps(d, st, reps, env, p, pass, &perr);
    /* a stop that fails after complete reads keeps the figures: they
     * were read while the set counted; PAPI is off from here on */
    int stop_failed = xp_papi_pass_end(p, &serr) != 0;
    if (rc == -2) {
        *err = perr;
        return -2;
    }
    if (rc) {
        env->meas.len = kept;
        tb_wrap(&perr, "pass %s, its figures dropped", names);
        add_note(env, "papi", &perr);
    }
    if (stop_failed)
        note(env, "papi", " (the figures read before it are kept)", &serr);
    return rc || stop_failed ? -1 : 0;
}

/* A PAPI failure (counters taken by another tool, a pass the kernel
 * refuses) loses that source's figures, not the case: it becomes a note.
 * Only a failing repetition of the case itself, or the store, fails the
 * case. */
static int pass_papi(const xp_driver_t *d, void *st, unsigned reps, xp_env_t *env,
                     xp_papi_t *p, tb_err_t *err)
{
    if (!p->ok) {
        tb_err_t why;
        snprintf(why.msg, sizeof why.msg, "%s", p->why);
        add_note(env, "papi", &why);
        return 0;
    }
    for (int pass = 0; pass < p->n_passes && !stopped(env); pass++) {
        int rc = papi_pass(d, st, reps, env, p, pass, err);
        if (rc == -2)
            return -1;
        if (rc)
            return 0;
    }
    return 0;
}

void xp_case_argv(const char *exe, const xp_row_t *row, char *argv[10])
{
    size_t k = 0;
    argv[k++] = (char *)exe;
    argv[k++] = "_case";
    argv[k++] = row->experiment;
    argv[k++] = row->vocab;
    argv[k++] = row->layout;
    argv[k++] = row->pattern;
    argv[k++] = row->corpus;
    argv[k++] = row->options;
    argv[k] = NULL;
}

/* Stores callgrind's counts: each raw event, and the metrics they make
 * (see counters.h); the event recorded is the sum taken. */
static int record_cg(xp_env_t *env, const xp_cg_counts_t *c, const xp_qty_t *q,
                     tb_err_t *err)
{
    static const struct {
        const char *metric, *ev[3];
    } map[] = {
        {"instructions", {"Ir"}},          {"data_reads", {"Dr"}},
        {"data_writes", {"Dw"}},           {"l1d_miss", {"D1mr", "D1mw"}},
        {"l1d_load_miss", {"D1mr"}},       {"llc_miss", {"ILmr", "DLmr", "DLmw"}},
        {"llc_load_miss", {"DLmr"}},       {"br_cond", {"Bc"}},
        {"br_misp_cond", {"Bcm"}},         {"br_misp_cond_ind", {"Bcm", "Bim"}},
    };
    for (int i = 0; i < c->n; i++) {
        char name[24];
        snprintf(name, sizeof name, "cg_%s", c->name[i]);
        what_t w = {"callgrind", name, c->name[i], NULL, 1};
        if (record(env, &w, 0, (double)c->val[i], 0, q, err))
            return -1;
    }
    for (size_t i = 0; i < sizeof map / sizeof *map; i++) {
        unsigned long long sum = 0;
        char event[32] = "";
        for (int k = 0; k < 3 && map[i].ev[k]; k++) {
            sum += xp_cg_get(c, map[i].ev[k]);
            size_t n = strlen(event);
            snprintf(event + n, sizeof event - n, "%s%s", k ? "+" : "", map[i].ev[k]);
        }
        what_t w = {"callgrind", map[i].metric, event, NULL, 1};
        if (record(env, &w, 0, (double)sum, 0, q, err))
            return -1;
    }
    return 0;
}

static int pass_callgrind(const xp_row_t *row, xp_env_t *env, const xp_qty_t *q0,
                          tb_err_t *err)
{
    if (!env->exe)
        return tb_fail(err, "callgrind: no tokbench binary to re-run");
    char *argv[10];
    xp_case_argv(env->exe, row, argv);
    xp_cg_counts_t c;
    if (xp_callgrind_run(argv, &c, err))
        return -1;
    return record_cg(env, &c, q0, err);
}

int xp_case_measure(const xp_driver_t *d, const xp_row_t *row, unsigned reps,
                    xp_env_t *env, xp_papi_t *papi, tb_err_t *err)
{
    void *st = NULL;
    if (d->setup(row, env, &st, err))
        return -1;
    int rc = 0;
    xp_qty_t q0 = {0};
    if (!d->rep)
        env->sources = 0; /* the driver measures in extra() */
    /* warm-up: caches, page faults, lazily built tables; rep 0's
     * quantities stand for the callgrind re-run of rep 0 */
    for (unsigned i = 0; !rc && d->rep && i < XP_WARMUP; i++) {
        xp_qty_t q = {0};
        rc = d->rep(st, 0, &q, err);
        xp_sink ^= q.sink;
        if (i == 0)
            q0 = q;
    }
    if (!rc && env->sources & XP_SRC_TSC)
        rc = pass_tsc(d, st, reps, env, err);
    if (!rc && env->sources & XP_SRC_PAPI && !stopped(env))
        rc = pass_papi(d, st, reps, env, papi, err);
    tb_err_t cg_err;
    /* the case already ran natively: a failed simulation is a note */
    if (!rc && env->sources & XP_SRC_CALLGRIND && !stopped(env) &&
        pass_callgrind(row, env, &q0, &cg_err))
        add_note(env, "callgrind", &cg_err);
    if (!rc && d->extra && !stopped(env))
        rc = d->extra(st, row, env, err);
    if (d->teardown)
        d->teardown(st);
    return rc;
}

int xp_case_once(const xp_row_t *row, tb_err_t *err)
{
    const xp_driver_t *d = xp_driver_find(row->experiment);
    if (!d)
        return tb_fail(err, "no such experiment '%s'", row->experiment);
    if (!d->rep)
        return tb_fail(err, "experiment '%s' has no repetition to run alone", row->experiment);
    xp_env_t env = {.skip_checksums = 1};
    void *st = NULL;
    int rc = d->setup(row, &env, &st, err);
    if (!rc) {
        xp_qty_t warm = {0}, q = {0};
        /* warms the simulated caches outside the collected function */
        rc = d->rep(st, 0, &warm, err);
        if (!rc)
            rc = xp_measured_rep(d, st, 0, &q, err);
        xp_sink ^= warm.sink ^ q.sink;
        if (d->teardown)
            d->teardown(st);
    }
    xp_env_free(&env);
    return rc;
}

/* Which of the row's sources run here; the others are named in `note`. */
static int case_sources(const xp_row_t *row, const xp_prov_t *prov,
                        unsigned *mask, char *note, size_t size, tb_err_t *err)
{
    unsigned want;
    if (xp_sources_parse(row->sources, &want, err))
        return tb_wrap(err, "field 'sources'");
    *mask = want & prov->sources;
    unsigned missing = want & ~prov->sources;
    note[0] = 0;
    if (missing) {
        char names[64];
        snprintf(note, size, "skipped sources not available here: %s (see "
                 "'tokbench counters')", xp_sources_format(missing, names, sizeof names));
    }
    return 0;
}

static unsigned case_reps(const xp_run_opts_t *o, const xp_row_t *row,
                          const xp_driver_t *d)
{
    if (o->reps)
        return o->reps;
    if (row->reps)
        return row->reps;
    return d->default_reps ? d->default_reps : 5;
}

/* Appends part to the message, "; "-separated. */
static void append_part(char *msg, size_t size, const char *part)
{
    size_t n = strlen(msg);
    if (*part)
        snprintf(msg + n, size - n, "%s%s", n ? "; " : "", part);
}

/* Measures and stores one row, the done-th this process runs.  Returns -1
 * only when the store fails. */
static int run_row(const xp_run_opts_t *o, xp_db_t *db, xp_run_result_t *res,
                   xp_papi_t *papi, size_t seq, size_t done, const xp_row_t *row,
                   tb_err_t *err)
{
    char started[32], note[256], srcs[64] = "";
    xp_now_iso(started);
    xp_env_t env = {.exe = o->exe, .tsc_hz = res->prov.tsc_hz, .stop = o->stop};
    tb_err_t cerr = {{0}};
    const char *status = "ok";
    const xp_driver_t *d = xp_driver_find(row->experiment);
    if (d && d->splits)
        env.shard = o->shard, env.shards = o->shards;
    note[0] = 0;
    char needs[512];
    int absent = xp_row_option(row, "needs", needs, sizeof needs) && access(needs, F_OK);
    if (absent) {
        tb_fail(&cerr, "%s is absent: the row needs it (needs=%s), so it did not run", needs,
                needs);
        status = "failed";
    } else if (!d) {
        tb_fail(&cerr, "no such experiment '%s'", row->experiment);
        status = "failed";
    } else if (case_sources(row, &res->prov, &env.sources, note, sizeof note, &cerr) ||
               xp_case_measure(d, row, case_reps(o, row, d), &env, papi, &cerr)) {
        status = "failed";
    } else if (o->stop && *o->stop) {
        status = "interrupted";
    }
    if (!strcmp(status, "failed") && o->stop && *o->stop)
        status = "interrupted";
    char msg[TB_ERR_MAX + 1100] = "";
    append_part(msg, sizeof msg, strcmp(status, "ok") ? cerr.msg : "");
    append_part(msg, sizeof msg, note);
    append_part(msg, sizeof msg, env.note);
    xp_case_rec_t rec = {.run = res->run, .seq = (unsigned)seq, .row = row,
                         .sources = xp_sources_format(env.sources, srcs, sizeof srcs),
                         .status = status, .message = msg[0] ? msg : NULL,
                         .started = started, .split = env.shards > 0, .env = &env};
    int rc = xp_db_case_write(db, &rec, err);
    xp_env_free(&env);
    char expect[16];
    int xfail = absent ||
                (xp_row_option(row, "expect", expect, sizeof expect) && !strcmp(expect, "fail"));
    if (!strcmp(status, "ok"))
        res->ok++, res->unexpected_ok += xfail;
    else if (!strcmp(status, "failed"))
        res->failed++, res->expected_failures += xfail;
    if (o->progress)
        o->progress(o->progress_arg, done + 1, res->total, row, status, rec.message);
    return rc;
}

/* Whether the row at position i of the suite runs in this process. */
static int in_shard(const xp_run_opts_t *o, size_t i, const xp_row_t *row)
{
    const xp_driver_t *d = xp_driver_find(row->experiment);
    return !o->shards || (d && d->splits) || i % o->shards == o->shard - 1;
}

/* Records the suite's checksum and, for a shard, K/N and the shard key. */
static int record_suite(const xp_run_opts_t *o, xp_db_t *db, int64_t run,
                        const xp_prov_t *prov, tb_err_t *err)
{
    xp_input_t in = {.role = "suite"};
    snprintf(in.path, sizeof in.path, "%s", o->suite_path);
    if (tb_file_sha256(o->suite_path, in.sha256, err) || xp_db_run_inputs(db, run, &in, 1, err))
        return -1;
    if (!o->shards)
        return 0;
    char key[128];
    snprintf(key, sizeof key, "%s/%.16s", prov->git_commit, in.sha256);
    return xp_db_run_shard(db, run, o->shard, o->shards, o->shard_key ? o->shard_key : key,
                           err);
}

int xp_run_suite(const xp_run_opts_t *o, xp_run_result_t *res, tb_err_t *err)
{
    memset(res, 0, sizeof *res);
    if (o->shards && (o->shard < 1 || o->shard > o->shards))
        return tb_fail(err, "shard %u/%u: K/N wants 1 <= K <= N", o->shard, o->shards);
    xp_suite_t suite;
    if (xp_suite_load(o->suite_path, &suite, err))
        return -1;
    for (size_t i = 0; i < suite.n; i++)
        res->total += in_shard(o, i, &suite.rows[i]);
    xp_papi_t papi;
    xp_prov_collect(&res->prov, o->root, &papi);
    tb_err_t pin_err;
    res->prov.pinned_cpu = xp_pin_cpu(o->cpu, &pin_err);
    xp_db_t *db = xp_db_open(o->db_path, 1, err);
    int rc = -1;
    if (!db)
        goto out;
    res->run = xp_db_run_begin(db, o->suite_path, &res->prov, err);
    if (res->run < 0 || record_suite(o, db, res->run, &res->prov, err))
        goto out;
    size_t done = 0;
    rc = 0;
    for (size_t i = 0; !rc && i < suite.n && !(o->stop && *o->stop); i++)
        if (in_shard(o, i, &suite.rows[i]))
            rc = run_row(o, db, res, &papi, i, done++, &suite.rows[i], err);
    res->interrupted = done < res->total || (o->stop && *o->stop);
    char note[128];
    snprintf(note, sizeof note, "stopped after %zu of %zu cases%s", done, res->total,
             o->stop && *o->stop ? " by a signal" : "");
    tb_err_t end_err;
    if (xp_db_run_end(db, res->run, res->interrupted || rc ? "incomplete" : "complete",
                      res->interrupted || rc ? note : NULL, rc ? &end_err : err) && !rc)
        rc = -1;
out:
    xp_db_close(db);
    xp_suite_free(&suite);
    return rc;
}
