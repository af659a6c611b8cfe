/*
 * papi_double: the PAPI functions that tokbench calls, for a machine with
 * no PMU.  tests/test_papi.c links papi_double.c in place of libpapi (see
 * the Makefile) and scripts through `papi_double` what PAPI answers: a
 * failing library init, a disabled perf_event component, a CPU missing
 * from the preset table, events that conflict in pairs, a positive return
 * code, a failing PAPI_stop or PAPI_read.  Counts are known: each running
 * event gains its rate per unit of papi_double_work() and PAPI_DOUBLE_READ
 * per PAPI_read, so the figures a measurement stores can be checked
 * exactly.
 *
 * Like PAPI, one event set counts at a time: starting another, or
 * cleaning up or destroying a set that still counts, is PAPI_EISRUN.
 */
#ifndef PAPI_DOUBLE_H
#define PAPI_DOUBLE_H

/* What every running counter gains per PAPI_read: the cost of a read. */
#define PAPI_DOUBLE_READ 11

/* The events the double knows: the seven presets tokbench asks for, then
 * the perf generic events that stand in for them. */
#define PAPI_DOUBLE_PRESETS 7
#define PAPI_DOUBLE_EVENTS 12

struct papi_double {
    /* the script; papi_double_reset() sets a Haswell: every preset, with
     * the native events of papi_events.csv's hsw section */
    int init_rc;            /* PAPI_library_init's answer; 0: the version */
    const char *disabled;   /* the perf_event component's reason, or NULL */
    int virtualized;        /* the hardware info's "running in a VM" */
    /* per preset (PAPI_TOT_CYC, PAPI_TOT_INS, PAPI_L1_DCM, PAPI_L2_DCM,
     * PAPI_L3_TCM, PAPI_BR_MSP, PAPI_BR_CN), the native event behind it
     * ("A - B": a derived difference); NULL: none on this CPU */
    const char *native[PAPI_DOUBLE_PRESETS];
    int no_perf_events;     /* the perf:: generic events are unknown */
    const char *conflict[4][2]; /* pairs that do not fit one event set */
    int start_rc, stop_rc;  /* non-zero: PAPI_start / PAPI_stop answer it */
    const char *fail_read_event; /* a set with this event fails PAPI_read */
    int fail_read_after;    /* once it has seen this many units of work */
    /* what happened */
    int starts;             /* PAPI_start calls that started a set */
    int domain;             /* as PAPI_set_cmp_domain left perf_event's */
};

extern struct papi_double papi_double;

void papi_double_reset(void);
/* The measured work: every running event gains units * its rate. */
void papi_double_work(long long units);
/* An event's counts per unit of work, by name (0 if unknown). */
long long papi_double_rate(const char *name);

#endif
