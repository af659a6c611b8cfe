/*
 * counters: where every measured number comes from.  One interface, three
 * sources, and each stored figure names its source:
 *
 *   tsc        the time stamp counter, read with fenced rdtscp (or lfence;
 *              rdtsc where a hypervisor hides rdtscp): reference
 *              cycles at the TSC frequency, which is measured against the
 *              monotonic clock (not trusted from /proc) and recorded.
 *   papi       PAPI presets (or perf's generic events where a preset is
 *              missing) in small event sets, one set per pass so that
 *              nothing is multiplexed; each event is probed by really adding
 *              and starting it, and what cannot be counted is reported.
 *   callgrind  the same case re-run under valgrind's callgrind with cache
 *              and branch simulation, collection on only inside
 *              xp_measured_rep(); deterministic, and the only source of cache
 *              and branch figures on a machine without a PMU.
 *
 * A metric's name says what was counted, so that one name means one thing
 * on every CPU and in every source; reports put a column together from
 * one source and one metric only.  Every stored figure also records its
 * source, the exact event (a PAPI preset and the native event behind it on
 * that CPU, a perf generic event, a callgrind event sum, rdtscp) and
 * whether it counts user mode only.
 *
 *   metric            what it counts                          sources
 *   cycles            core clock cycles, unhalted, user mode  papi
 *   ref_cycles        TSC ticks: reference cycles at a fixed  tsc
 *                     rate, kernel and halted time included
 *   ns                ref_cycles / the TSC's measured Hz      tsc
 *   instructions      instructions retired                    papi, callgrind Ir
 *   br_cond           conditional branches retired            papi, callgrind Bc
 *   br_misp_cond      conditional branches mispredicted       papi, callgrind Bcm
 *   br_misp_all       every branch kind mispredicted          papi
 *   br_misp_cond_ind  conditional plus indirect mispredicted  callgrind Bcm+Bim
 *   l1d_miss          loads and stores missing the L1D        papi, callgrind D1mr+D1mw
 *   l1d_load_miss     loads missing the L1D                   papi, callgrind D1mr
 *   l1d_fill          lines brought into the L1D (demand      papi
 *                     misses and prefetches)
 *   l2d_miss          data requests missing the L2            papi
 *   l2_load_miss      load-store reads missing the L2         papi
 *   llc_miss          every request missing the last level    papi, callgrind ILmr+DLmr+DLmw
 *   llc_load_miss     loads missing the last level            papi, callgrind DLmr
 *   data_reads        data reads                              callgrind Dr
 *   data_writes       data writes                             callgrind Dw
 *
 * A PAPI preset means different native events on different CPUs (PAPI 7.0's
 * papi_events.csv): PAPI_BR_MSP is BR_MISP_RETIRED:CONDITIONAL on Haswell
 * to Ice Lake but all branches on Sandy Bridge and Zen 1-3, PAPI_L1_DCM is
 * L1D:REPLACEMENT on Intel but DATA_CACHE_MISSES on older AMD.  So the
 * probe reads the native event behind each preset (PAPI_get_event_info)
 * and names the metric after it (counters_papi.c's table); a native event
 * the table does not know keeps the preset's name ("papi_br_msp") and is
 * never put in a column with others.  Where a preset is missing (a CPU
 * newer than the preset table: Zen 4, Sapphire Rapids) the probe counts
 * the perf_event component's generic event instead (perf::PERF_COUNT_HW_*),
 * which the kernel defines per CPU to mean the same thing everywhere.
 * Callgrind's simulated "LL" is the last-level cache; its I1/D1 are first
 * level.  Every raw callgrind event is also stored ("cg_Ir", "cg_Bcm", ...).
 */
#ifndef XP_COUNTERS_H
#define XP_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "../../base/err.h"

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

/* 1 where the CPU has rdtscp (xp_tsc_usable sets it).  Some hypervisors
 * (bhyve among them) hide rdtscp while the TSC itself is invariant: a
 * region then ends with lfence; rdtsc, which likewise waits for every
 * earlier instruction before it reads the counter. */
extern int xp_tsc_rdtscp;

/* Start of a measured region: lfence keeps earlier instructions from
 * drifting past the read; end: rdtscp (or lfence; rdtsc) waits for the
 * region, the trailing lfence keeps later ones from starting before it. */
#if defined(__x86_64__)
static inline uint64_t xp_tsc_begin(void)
{
    uint32_t lo, hi;
    __asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi)::"memory");
    return (uint64_t)hi << 32 | lo;
}

static inline uint64_t xp_tsc_end(void)
{
    if (!xp_tsc_rdtscp)
        return xp_tsc_begin();
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

/* 1 if this CPU has an invariant TSC (read with rdtscp where it has one,
 * see xp_tsc_rdtscp); else 0 and why. */
int xp_tsc_usable(char *why, size_t size);

/* Measures the TSC frequency in Hz over `ms` milliseconds of the monotonic
 * raw clock: the median of three estimates, so that a preemption in the
 * middle of one shows as an outlier, not as the answer.  Returns <= 0 on
 * failure. */
double xp_tsc_measure_hz(unsigned ms);

/* --- PAPI -------------------------------------------------------------- */

#define XP_PAPI_MAX_EVENTS 8
#define XP_PAPI_MAX_PASSES 8

/* One thing to count: a preset, or the perf generic event standing in for
 * it.  Before probing, event is the preset and metric ""; the probe sets
 * both to what will really be counted. */
typedef struct {
    const char *preset;   /* "PAPI_BR_MSP" */
    const char *fallback; /* perf generic event where the preset is missing, or NULL */
    char event[64];       /* what is added to the event set */
    char native[160];     /* the native event(s) behind it on this CPU */
    char metric[24];      /* see the table above */
    int code;
    int usable;
    char why[256];        /* why not when !usable; else a note (a fallback, a
                           * conflict that put it in a pass of its own) or "" */
} xp_papi_event_t;

typedef struct {
    int ok;                /* at least one event can be counted */
    char why[512];         /* in words: why none can, or how many passes */
    int user_only;         /* 1: event sets count user mode only; -1: unknown */
    int n_events;
    xp_papi_event_t ev[XP_PAPI_MAX_EVENTS];
    /* passes: indexes into ev; each pass is one event set started alone */
    int n_passes;
    int pass_len[XP_PAPI_MAX_PASSES];
    int pass_ev[XP_PAPI_MAX_PASSES][2];
    int eventset;          /* the set of the open pass, or PAPI_NULL (-1) */
} xp_papi_t;

/* Initializes PAPI and probes every event.  Never fails: what does not
 * work is written into p->why and into every event's why, whichever step
 * failed (library, component, preset table, kernel, counters). */
void xp_papi_probe(xp_papi_t *p);
/* Creates and starts the event set of one pass. */
int xp_papi_pass_begin(xp_papi_t *p, int pass, tb_err_t *err);
/* Reads the running counters of the open pass (values in pass order). */
int xp_papi_read(xp_papi_t *p, long long vals[2], tb_err_t *err);
/* Stops and frees the open pass.  If PAPI cannot stop it, the set keeps
 * counting and no other set could start: PAPI is then switched off for
 * the rest of the process (p->ok = 0, p->why says why) and -1 returned. */
int xp_papi_pass_end(xp_papi_t *p, tb_err_t *err);

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
