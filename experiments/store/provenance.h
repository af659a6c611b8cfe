/*
 * provenance: what a run records about where it ran, so that a figure can
 * be traced to the code, compiler, machine and inputs that produced it.
 */
#ifndef XP_PROVENANCE_H
#define XP_PROVENANCE_H

#include "../counters/counters.h"

typedef struct {
    char git_commit[64];   /* "unknown" outside a checkout */
    int git_dirty;         /* -1 unknown */
    char compiler[128];
    char cflags[256];
    char cpu_model[128];
    int cores;
    double tsc_hz;         /* measured; 0 when the TSC is unusable */
    char kernel[256];
    char virt[64];         /* "none", or the hypervisor's name */
    unsigned sources;      /* counter sources that work here */
    char sources_detail[1536]; /* one line per source: works, or why not */
    int pinned_cpu;        /* -1 when not pinned */
    char host[128];
} xp_prov_t;

/* Fills p; never fails (what cannot be found reads "unknown"). `root` is
 * the checkout whose git state is recorded.  The PAPI probe result is
 * returned in *papi for the runner to reuse. */
void xp_prov_collect(xp_prov_t *p, const char *root, xp_papi_t *papi);

/* Pins the calling thread to `cpu` (-1: the CPU it is on now); returns the
 * CPU pinned, or -1 with err set. */
int xp_pin_cpu(int cpu, tb_err_t *err);

#endif
