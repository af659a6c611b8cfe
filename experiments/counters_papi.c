/* counters_papi: PAPI presets, probed one by one and grouped into passes of
 * at most two events so that nothing is multiplexed (see counters.h). */
#include "counters.h"

#include <papi.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *preset, *metric;
    int group; /* events of one group share a pass when they fit together */
} wanted[] = {
    {"PAPI_TOT_CYC", "cycles", 0},      {"PAPI_TOT_INS", "instructions", 0},
    {"PAPI_L1_DCM", "l1d_miss", 1},     {"PAPI_L2_DCM", "l2d_miss", 1},
    {"PAPI_L3_TCM", "llc_miss", 2},     {"PAPI_BR_MSP", "br_misp", 3},
    {"PAPI_BR_CN", "branches", 3},
};
#define N_WANTED ((int)(sizeof wanted / sizeof *wanted))
#define N_GROUPS 4

/* Adds, starts and stops the events as one set: the only honest probe, as
 * PAPI_query_event can say yes for an event the kernel then refuses. */
static int try_set(const int *codes, int n, char *why, size_t size)
{
    int es = PAPI_NULL;
    long long v[2];
    int rc = PAPI_create_eventset(&es);
    for (int i = 0; rc == PAPI_OK && i < n; i++)
        rc = PAPI_add_event(es, codes[i]);
    if (rc == PAPI_OK && (rc = PAPI_start(es)) == PAPI_OK)
        rc = PAPI_stop(es, v);
    if (es != PAPI_NULL) {
        PAPI_cleanup_eventset(es);
        PAPI_destroy_eventset(&es);
    }
    if (rc != PAPI_OK)
        snprintf(why, size, "%s", PAPI_strerror(rc));
    return rc == PAPI_OK;
}

static int paranoid_level(void)
{
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    int level = -100;
    if (f) {
        if (fscanf(f, "%d", &level) != 1)
            level = -100;
        fclose(f);
    }
    return level;
}

static void probe_event(xp_papi_event_t *e)
{
    if (PAPI_event_name_to_code((char *)e->preset, &e->code) != PAPI_OK) {
        snprintf(e->why, sizeof e->why, "unknown to this PAPI");
        return;
    }
    if (PAPI_query_event(e->code) != PAPI_OK) {
        snprintf(e->why, sizeof e->why, "no native event behind it on this CPU");
        return;
    }
    e->usable = try_set(&e->code, 1, e->why, sizeof e->why);
}

static void add_pass(xp_papi_t *p, const int *idx, int n)
{
    if (p->n_passes == XP_PAPI_MAX_PASSES)
        return;
    for (int i = 0; i < n; i++)
        p->pass_ev[p->n_passes][i] = idx[i];
    p->pass_len[p->n_passes++] = n;
}

static void plan_passes(xp_papi_t *p)
{
    for (int g = 0; g < N_GROUPS; g++) {
        int idx[2], n = 0;
        for (int i = 0; i < p->n_events; i++)
            if (wanted[i].group == g && p->ev[i].usable && n < 2)
                idx[n++] = i;
        if (n == 2) {
            int codes[2] = {p->ev[idx[0]].code, p->ev[idx[1]].code};
            char why[160];
            if (!try_set(codes, 2, why, sizeof why)) {
                add_pass(p, idx, 1);
                add_pass(p, idx + 1, 1);
                continue;
            }
        }
        if (n)
            add_pass(p, idx, n);
    }
}

static void explain_none(xp_papi_t *p)
{
    const PAPI_component_info_t *ci = PAPI_get_component_info(0);
    const PAPI_hw_info_t *hw = PAPI_get_hardware_info();
    int paranoid = paranoid_level();
    if (ci && ci->disabled)
        snprintf(p->why, sizeof p->why, "PAPI component %.64s is disabled: %.200s",
                 ci->name, ci->disabled_reason);
    else if (paranoid > 2)
        snprintf(p->why, sizeof p->why, "no preset can be counted: "
                 "perf_event_paranoid is %d (needs 2 or less for user-space "
                 "counting)", paranoid);
    else if (hw && hw->virtualized)
        snprintf(p->why, sizeof p->why, "no preset can be counted: this is a "
                 "virtual machine (%.64s) that exposes no performance-monitoring "
                 "unit; %.150s", hw->virtual_vendor_string, p->ev[0].why);
    else
        snprintf(p->why, sizeof p->why, "no preset can be counted (no PMU?): "
                 "%.150s", p->ev[0].why);
}

void xp_papi_probe(xp_papi_t *p)
{
    memset(p, 0, sizeof *p);
    p->eventset = PAPI_NULL;
    if (!PAPI_is_initialized()) {
        int v = PAPI_library_init(PAPI_VER_CURRENT);
        if (v != PAPI_VER_CURRENT) {
            snprintf(p->why, sizeof p->why, "PAPI_library_init failed: %s",
                     v < 0 ? PAPI_strerror(v) : "library and header versions differ");
            return;
        }
    }
    p->n_events = N_WANTED;
    for (int i = 0; i < N_WANTED; i++) {
        p->ev[i].preset = wanted[i].preset;
        p->ev[i].metric = wanted[i].metric;
        probe_event(&p->ev[i]);
        p->ok |= p->ev[i].usable;
    }
    if (!p->ok) {
        explain_none(p);
        return;
    }
    plan_passes(p);
    snprintf(p->why, sizeof p->why, "%d pass%s", p->n_passes,
             p->n_passes == 1 ? "" : "es");
}

int xp_papi_pass_begin(xp_papi_t *p, int pass, tb_err_t *err)
{
    if (pass < 0 || pass >= p->n_passes)
        return tb_fail(err, "PAPI pass %d does not exist", pass);
    int es = PAPI_NULL, rc = PAPI_create_eventset(&es);
    for (int i = 0; rc == PAPI_OK && i < p->pass_len[pass]; i++)
        rc = PAPI_add_event(es, p->ev[p->pass_ev[pass][i]].code);
    if (rc == PAPI_OK)
        rc = PAPI_start(es);
    if (rc != PAPI_OK) {
        if (es != PAPI_NULL) {
            PAPI_cleanup_eventset(es);
            PAPI_destroy_eventset(&es);
        }
        return tb_fail(err, "PAPI pass %d (%s): %s", pass,
                       p->ev[p->pass_ev[pass][0]].preset, PAPI_strerror(rc));
    }
    p->eventset = es;
    return 0;
}

int xp_papi_read(xp_papi_t *p, long long vals[2], tb_err_t *err)
{
    vals[0] = vals[1] = 0;
    int rc = PAPI_read(p->eventset, vals);
    if (rc != PAPI_OK)
        return tb_fail(err, "PAPI_read: %s", PAPI_strerror(rc));
    return 0;
}

void xp_papi_pass_end(xp_papi_t *p)
{
    if (p->eventset == PAPI_NULL)
        return;
    long long v[2];
    PAPI_stop(p->eventset, v);
    PAPI_cleanup_eventset(p->eventset);
    PAPI_destroy_eventset(&p->eventset);
    p->eventset = PAPI_NULL;
}
