/*
 * driver: the experiment table.  An experiment is one file defining an
 * xp_driver_t plus one line in driver.c's table; the runner gives it a
 * suite row and a case context (xp_env_t), and measures its repetitions with
 * every counter source the row asks for and the machine has.
 *
 * Contract of a driver:
 *   setup     loads what the row names (recording each input file with
 *             xp_env_input so its checksum lands in the run), builds the
 *             state; fails with a message naming the file or field at fault.
 *   rep       one repetition of exactly the measured work.  `rep` numbers
 *             the repetition so a driver can vary its inputs where a branch
 *             predictor would otherwise learn them; it fills the quantities
 *             it processed (bytes, nodes visited as counted by the walk,
 *             items such as tokens) and folds its result into q->sink so the
 *             work cannot be optimized away.  Must be deterministic in
 *             (state, rep): the callgrind re-run relies on it.
 *   extra     optional: measurements that are not counter passes over rep,
 *             e.g. a reference implementation timed by wall clock; they are
 *             recorded with xp_env_record.
 *   teardown  frees the state.
 * A driver whose case is many independent items (MaskBench's schemas)
 * sets `splits`: under `tokbench run --shard K/N` its setup takes only
 * the items of its selection whose index i has i mod N == K - 1
 * (env->shard, env->shards), so that every shard runs a part of the case
 * and `tokbench merge` joins the parts; a case of any other driver runs
 * whole in one shard (runner.h).
 */
#ifndef XP_DRIVER_H
#define XP_DRIVER_H

#include <signal.h>
#include <stdint.h>

#include "../../base/buf.h"
#include "../../base/err.h"
#include "suite.h"

typedef struct {
    uint64_t bytes, nodes, items; /* what one repetition processed */
    uint64_t sink;                /* a value depending on all the work */
} xp_qty_t;

/* One stored figure: one repetition of one metric from one source. */
typedef struct {
    char source[16];  /* tsc, papi, callgrind, wallclock */
    char impl[32];    /* tokbench, or the reference measured by extra() */
    char metric[24];  /* see counters.h */
    /* what was counted (see counters.h); event "" for figures that come
     * from no counter, which store event, native and user_only as NULL */
    char event[64];   /* PAPI_BR_MSP, perf::PERF_COUNT_HW_CPU_CYCLES, Bcm+Bim, rdtscp */
    char native[160]; /* the native event(s) behind a PAPI preset, or "" */
    int user_only;    /* 1: user mode only; 0: kernel and halted time too */
    unsigned rep;
    double value;     /* overhead already subtracted */
    double overhead;  /* what was subtracted: the empty measurement */
    uint64_t bytes, nodes, items;
} xp_meas_t;

/* The outcome of one item of a case that runs many (a MaskBench schema):
 * what happened to it and why, with its own figures. */
typedef struct {
    char impl[32];    /* whose outcome: "" or tokbench, or the reference's name */
    char item[256];   /* e.g. the schema's file name */
    char outcome[24]; /* passing, compile error, validation error, ... */
    char detail[512]; /* the reason, the instance and token at fault */
    double ttfm_us;   /* time to first mask, 0 if none */
    double max_us;    /* the slowest mask after it */
    uint64_t tokens, masks;
} xp_outcome_t;

typedef struct {
    char role[16];    /* vocabulary, corpus, suite, reference, ... */
    char path[4096];
    char sha256[65];
} xp_input_t;

/* The context of one case: what the runner offers, what the case records. */
typedef struct {
    const char *exe;        /* this tokbench binary, for re-runs; may be NULL */
    unsigned sources;       /* the sources that will measure this case */
    double tsc_hz;
    volatile sig_atomic_t *stop; /* set by SIGINT/SIGTERM; may be NULL */
    int skip_checksums;     /* the callgrind re-run: inputs are not recorded */
    unsigned shard, shards; /* a splitting driver's part: items i with i mod
                             * shards == shard - 1; shards 0: every item */
    char note[768];         /* a source that failed while the case went on */
    TB_VEC(xp_meas_t) meas;
    TB_VEC(xp_input_t) inputs;
    TB_VEC(xp_outcome_t) outcomes;
} xp_env_t;

int xp_env_record(xp_env_t *env, const xp_meas_t *m, tb_err_t *err);
int xp_env_outcome(xp_env_t *env, const xp_outcome_t *o, tb_err_t *err);
/* Resolves nothing: `path` must be the file read.  Computes its sha256. */
int xp_env_input(xp_env_t *env, const char *role, const char *path, tb_err_t *err);
void xp_env_free(xp_env_t *env);

typedef struct {
    const char *name;
    const char *summary;
    int (*setup)(const xp_row_t *row, xp_env_t *env, void **state, tb_err_t *err);
    int (*rep)(void *state, unsigned rep, xp_qty_t *q, tb_err_t *err); /* NULL: no
             * counter passes, extra measures everything itself */
    int (*extra)(void *state, const xp_row_t *row, xp_env_t *env, tb_err_t *err);
    void (*teardown)(void *state);
    unsigned default_reps;
    int splits;       /* setup honours env->shard (see above) */
} xp_driver_t;

/* NULL-terminated table, and lookup by name. */
extern const xp_driver_t *const xp_drivers[];
const xp_driver_t *xp_driver_find(const char *name);

/* Runs one repetition; the one function callgrind collects inside, so it is
 * never inlined and the counter reads stay outside it. */
int xp_measured_rep(const xp_driver_t *d, void *state, unsigned rep,
                    xp_qty_t *q, tb_err_t *err);

/* The load experiment's measured load (drv_load.c), run by `tokbench
 * _load` in a process of its own: loads path one way (0 from the source,
 * 1 from the compiled cache in cache_dir, 2 writing it) and writes its
 * report to fd; does not return. */
void xp_load_child(const char *path, int way, const char *cache_dir, int fd);
/* The program whose `_load` runs that load (tokbench's main sets it to
 * itself); NULL: the forked child loads in place, where what the parent
 * did before can show in the child's peak. */
extern const char *xp_load_exe;

extern const xp_driver_t xp_driver_selftest;
extern const xp_driver_t xp_driver_tokenize;
extern const xp_driver_t xp_driver_conform;
extern const xp_driver_t xp_driver_fuzz;
extern const xp_driver_t xp_driver_walk;
extern const xp_driver_t xp_driver_lookup;
extern const xp_driver_t xp_driver_slice;
extern const xp_driver_t xp_driver_index;
extern const xp_driver_t xp_driver_maskbench;
extern const xp_driver_t xp_driver_jsts;
extern const xp_driver_t xp_driver_llgtests;
extern const xp_driver_t xp_driver_larkfiles;
extern const xp_driver_t xp_driver_load;
extern const xp_driver_t xp_driver_soak;
extern const xp_driver_t xp_driver_serve;

#endif
