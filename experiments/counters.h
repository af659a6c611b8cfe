/*
 * counters: where every measured number comes from.  One interface, three
 * sources, and each stored figure names its source:
 *
 *   tsc        the time stamp counter, read with fenced rdtscp: reference
 *              cycles at the TSC frequency, which is measured against the
 *              monotonic clock (not trusted from /proc) and recorded.
 *   papi       PAPI presets in small event sets, one set per pass so that
 *              nothing is multiplexed; each preset is probed by really adding
 *              and starting it, and what cannot be counted is reported.
 *   callgrind  the same case re-run under valgrind's callgrind with cache
 *              and branch simulation, collection on only inside
 *              xp_measured_rep(); deterministic, and the only source of cache
 *              and branch figures on a machine without a PMU.
 *
 * Metric names are shared between sources so that reports can line them up:
 *   metric        papi            callgrind (event sums)   tsc
 *   cycles        PAPI_TOT_CYC    -                        -
 *   ref_cycles    -               -                        rdtscp delta
 *   ns            -               -                        ref_cycles / Hz
 *   instructions  PAPI_TOT_INS    Ir                       -
 *   l1d_miss      PAPI_L1_DCM     D1mr + D1mw              -
 *   l2d_miss      PAPI_L2_DCM     -                        -
 *   llc_miss      PAPI_L3_TCM     ILmr + DLmr + DLmw       -
 *   branches      PAPI_BR_CN      Bc (conditional)         -
 *   br_misp       PAPI_BR_MSP     Bcm + Bim                -
 *   data_reads    -               Dr                       -
 *   data_writes   -               Dw                       -
 * Callgrind's simulated "LL" is the last-level cache, so it maps to
 * llc_miss; its I1/D1 are first-level.  Every raw callgrind event is also
 * stored under its own name ("cg_Ir", "cg_Bcm", ...).
 */
#ifndef XP_COUNTERS_H
#define XP_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "../base/err.h"

enum {
    XP_SRC_TSC = 1,
    XP_SRC_PAPI = 2,
    XP_SRC_CALLGRIND = 4,
    XP_SRC_ALL = 7,
};

/* Parses "tsc+papi", "tsc papi", "all" (empty or NULL: tsc). */
int xp_sources_parse(const char *s, unsigned *mask, tb_err_t *err);
/* "tsc+papi+callgrind" form of a mask, into buf. */
const char *xp_sources_format(unsigned mask, char *buf, size_t size);

/* --- time stamp counter ------------------------------------------------ */

/* Start of a measured region: lfence keeps earlier instructions from
 * drifting past the read; end: rdtscp waits for the region, the trailing
 * lfence keeps later ones from starting before it. */
#if defined(__x86_64__)
static inline uint64_t xp_tsc_begin(void)
{
    uint32_t lo, hi;
    __asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi)::"memory");
    return (uint64_t)hi << 32 | lo;
}

static inline uint64_t xp_tsc_end(void)
{
    uint32_t lo, hi, aux;
    __asm__ volatile("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux)::"memory");
    return (uint64_t)hi << 32 | lo;
}
#else
/* Elsewhere the "TSC" is the monotonic clock in ns, and xp_tsc_usable
 * says so: the figures stay honest, only coarser. */
#include <time.h>
static inline uint64_t xp_tsc_begin(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#define xp_tsc_end xp_tsc_begin
#endif

/* 1 if this CPU has rdtscp and an invariant TSC; else 0 and why. */
int xp_tsc_usable(char *why, size_t size);

/* Measures the TSC frequency in Hz over `ms` milliseconds of the monotonic
 * raw clock (taking the best of three so that a preemption in the middle
 * shows as an outlier, not as the answer).  Returns <= 0 on failure. */
double xp_tsc_measure_hz(unsigned ms);

/* --- PAPI -------------------------------------------------------------- */

#define XP_PAPI_MAX_EVENTS 8
#define XP_PAPI_MAX_PASSES 8

typedef struct {
    const char *preset;   /* "PAPI_TOT_CYC" */
    const char *metric;   /* shared metric name, see the table above */
    int code;
    int usable;
    char why[160];        /* why not, when !usable */
} xp_papi_event_t;

typedef struct {
    int ok;                /* at least one preset can be counted */
    char why[512];         /* in words, when !ok (or which presets are out) */
    int n_events;
    xp_papi_event_t ev[XP_PAPI_MAX_EVENTS];
    /* passes: indexes into ev; each pass is one event set started alone */
    int n_passes;
    int pass_len[XP_PAPI_MAX_PASSES];
    int pass_ev[XP_PAPI_MAX_PASSES][2];
    int eventset;          /* the set of the open pass, or -1 */
} xp_papi_t;

/* Initializes PAPI and probes every preset.  Never fails: what does not
 * work is written into p->why and the events' why. */
void xp_papi_probe(xp_papi_t *p);
/* Creates and starts the event set of one pass. */
int xp_papi_pass_begin(xp_papi_t *p, int pass, tb_err_t *err);
/* Reads the running counters of the open pass (values in pass order). */
int xp_papi_read(xp_papi_t *p, long long vals[2], tb_err_t *err);
void xp_papi_pass_end(xp_papi_t *p);

/* --- callgrind ------------------------------------------------------- */

#define XP_CG_MAX_EVENTS 24

typedef struct {
    int n;
    char name[XP_CG_MAX_EVENTS][16];
    unsigned long long val[XP_CG_MAX_EVENTS];
} xp_cg_counts_t;

/* 1 if valgrind can be run on this binary; else 0 and why (not installed,
 * binary built with AddressSanitizer). */
int xp_callgrind_usable(char *why, size_t size);

/* Runs `argv` (argv[0] the program) under callgrind with cache and branch
 * simulation, collection toggled on inside xp_measured_rep only, and reads
 * the totals back.  The program's stdout/stderr go to /dev/null unless it
 * fails, when the tail of its stderr ends up in err. */
int xp_callgrind_run(char *const argv[], xp_cg_counts_t *c, tb_err_t *err);

/* Parses a callgrind.out file's "events:" and "totals:"/"summary:" lines. */
int xp_callgrind_parse(const char *path, xp_cg_counts_t *c, tb_err_t *err);

/* Value of one event (0 if absent), and the sum of a few. */
unsigned long long xp_cg_get(const xp_cg_counts_t *c, const char *name);

/* The function whose calls callgrind collects; see driver.h. */
#define XP_MEASURED_FN "xp_measured_rep"

#endif
