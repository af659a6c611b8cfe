/*
 * runner: runs a suite, case by case, into the results store.
 *
 * Method, for every case: set up the driver (inputs loaded and
 * checksummed), warm up with XP_WARMUP repetitions, then one pass per
 * counter source: the TSC pass and each PAPI event set run the row's
 * repetitions, every repetition recorded, the median cost of an empty
 * measurement subtracted; the callgrind pass re-runs the case in a child
 * (`tokbench _case ...`, one warmed-up repetition under simulation).  The
 * process is pinned to one CPU for the whole run.  A case that fails is
 * stored as failed with its message and the suite goes on (a row whose
 * options say expect=fail is expected to fail: its failure is counted
 * apart, and its success is counted as a failure, so that a suite that
 * no longer describes the code says so; a row with needs=PATH, data that
 * not every machine has, does not run where PATH is absent and is counted
 * as an expected failure with that reason); a stop request
 * (SIGINT/SIGTERM) ends the run after storing what was measured, and the
 * run stays marked incomplete.
 *
 * Shards: with shards = N > 0 the process runs shard K of N of the suite,
 * so that N processes, on one machine or many, under any batch scheduler,
 * together run it exactly once.  The split depends on nothing but the
 * suite: the row at position i (0-based, comment lines not counted) runs
 * whole in shard i mod N + 1, except a row whose driver splits its items
 * (driver.h), which runs in every shard on that shard's share of them.
 * A case keeps its position in the suite as its seq, and the run records
 * K, N and the shard key (by default the git commit and the suite's
 * checksum), so that `tokbench merge` can join the shards into one run.
 */
#ifndef XP_RUNNER_H
#define XP_RUNNER_H

#include <signal.h>
#include <stdint.h>

#include "driver.h"
#include "../store/provenance.h"

#define XP_WARMUP 2

typedef struct {
    const char *suite_path;
    const char *db_path;
    const char *exe;            /* this binary, for callgrind; NULL: no re-runs */
    const char *root;           /* checkout whose git state is recorded */
    int cpu;                    /* CPU to pin to; -1: the current one */
    unsigned reps;              /* overrides every row when nonzero */
    unsigned shard, shards;     /* run shard `shard` (1..shards); shards 0: all */
    const char *shard_key;      /* what the shards of one run share; NULL:
                                 * the git commit and the suite's sha256 */
    volatile sig_atomic_t *stop;
    /* called after every case (library code does not print) */
    void (*progress)(void *arg, size_t done, size_t total, const xp_row_t *row,
                     const char *status, const char *message);
    void *progress_arg;
} xp_run_opts_t;

typedef struct {
    int64_t run;
    size_t ok, failed, total; /* total: the cases this shard runs */
    size_t expected_failures; /* of `failed`: rows marked expect=fail, or
                               * whose needs=PATH is absent */
    size_t unexpected_ok;     /* of `ok`: rows marked expect=fail that ran */
    int interrupted;
    xp_prov_t prov;
} xp_run_result_t;

/* Fails only when nothing could be recorded (unreadable suite, refused
 * database); failing cases are results, not errors. */
int xp_run_suite(const xp_run_opts_t *o, xp_run_result_t *res, tb_err_t *err);

/* Measures one case into env with the sources in env->sources.  Returns -1
 * when the case failed (err says why; measurements so far stay in env).
 * `note` receives remarks such as sources that could not be used. */
int xp_case_measure(const xp_driver_t *d, const xp_row_t *row, unsigned reps,
                    xp_env_t *env, xp_papi_t *papi, tb_err_t *err);

/* The callgrind re-run's side: set up, one warm-up, one measured rep. */
int xp_case_once(const xp_row_t *row, tb_err_t *err);

/* argv for re-running `row` as `exe _case ...` (static storage of row). */
void xp_case_argv(const char *exe, const xp_row_t *row, char *argv[10]);

#endif
