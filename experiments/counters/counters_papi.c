/* counters_papi: PAPI presets, or perf's generic events where a preset is
 * missing, probed one by one, named after what they count on this CPU, and
 * grouped into passes of at most two events so that nothing is
 * multiplexed (see counters.h). */
#include "counters.h"

#include <papi.h>
#include <stdio.h>
#include <string.h>

/* What is counted, in pass groups: events of one group share a pass when
 * the counters allow it.  The fallback is the perf_event component's
 * generic event for the same thing, which the kernel maps per CPU. */
static const struct {
    const char *preset, *fallback, *fallback_metric;
    int group;
} wanted[] = {
    {"PAPI_TOT_CYC", "perf::PERF_COUNT_HW_CPU_CYCLES", "cycles", 0},
    {"PAPI_TOT_INS", "perf::PERF_COUNT_HW_INSTRUCTIONS", "instructions", 0},
    {"PAPI_L1_DCM", "perf::PERF_COUNT_HW_CACHE_L1D:READ:MISS", "l1d_load_miss", 1},
    {"PAPI_L2_DCM", NULL, NULL, 1},
    {"PAPI_L3_TCM", "perf::PERF_COUNT_HW_CACHE_LL:READ:MISS", "llc_load_miss", 2},
    {"PAPI_BR_MSP", "perf::PERF_COUNT_HW_BRANCH_MISSES", "br_misp_all", 3},
    {"PAPI_BR_CN", NULL, NULL, 3},
};
#define N_WANTED ((int)(sizeof wanted / sizeof *wanted))
#define N_GROUPS 4

/* What a preset counts, read from the native event that PAPI 7.0's preset
 * table (papi_events.csv) maps it to on this CPU: the first row of the
 * preset whose text occurs in the native event's name.  A native event
 * that no row names keeps the preset's own name ("papi_br_msp"). */
static const struct {
    const char *preset, *native, *metric;
} meaning[] = {
    {"PAPI_TOT_CYC", "", "cycles"}, /* unhalted core cycles on every CPU */
    {"PAPI_TOT_INS", "", "instructions"},
    {"PAPI_BR_MSP", "COND", "br_misp_cond"},                 /* Haswell..Ice Lake */
    {"PAPI_BR_MSP", "ALL_BRANCHES", "br_misp_all"},          /* Sandy, Ivy Bridge */
    {"PAPI_BR_MSP", "RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED", "br_misp_all"}, /* Zen 1-3 */
    {"PAPI_BR_MSP", "RETIRED_MISPREDICTED_BRANCH_INSTRUCTIONS", "br_misp_all"}, /* K8..16h */
    {"PAPI_BR_MSP", "MISPREDICTED_BRANCH_RETIRED", "br_misp_all"}, /* Atom, KNL */
    {"PAPI_BR_CN", "BR_INST_RETIRED:COND", "br_cond"},       /* Sandy Bridge..Ice Lake */
    {"PAPI_BR_CN", "BR_INST_RETIRED:JCC", "br_cond"},        /* Silvermont, KNL */
    {"PAPI_L1_DCM", "L1D:REPL", "l1d_fill"},                 /* Intel L1D:REPLACEMENT */
    {"PAPI_L1_DCM", "REQUESTS_TO_L2_GROUP1", "l1d_fill"},    /* Zen 3 */
    {"PAPI_L1_DCM", "DATA_CACHE_MISSES", "l1d_miss"},        /* K7..16h */
    {"PAPI_L1_DCM", "LD_DCU_MISS", "l1d_load_miss"},         /* KNL */
    {"PAPI_L2_DCM", "L2_CACHE_MISS:DATA", "l2d_miss"},       /* K8..15h */
    {"PAPI_L2_DCM", "LLC_REFERENCES", "l2d_miss"},           /* Intel: less code reads */
    {"PAPI_L2_DCM", "LAST_LEVEL_CACHE_REFERENCES", "l2d_miss"},
    {"PAPI_L2_DCM", "LS_RD_BLK_C", "l2_load_miss"},          /* Zen 1-3 */
    {"PAPI_L3_TCM", "LLC_MISSES", "llc_miss"},               /* Intel */
    {"PAPI_L3_TCM", "LAST_LEVEL_CACHE_MISSES", "llc_miss"},
};

/* PAPI_strerror's words for an error; PAPI has none for a positive code
 * (it returns NULL), which is said in words instead. */
static const char *papi_error(int rc, char *buf, size_t size)
{
    const char *s = rc < 0 ? PAPI_strerror(rc) : NULL;
    if (s)
        return s;
    snprintf(buf, size, "PAPI returned %d, which is not one of its error codes", rc);
    return buf;
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

/* Why an event set would not add, start or stop, in words. */
static void set_failure(int rc, const char *step, char *why, size_t size)
{
    char buf[96];
    if (rc == PAPI_EPERM)
        snprintf(why, size, "the kernel refuses to count (%s: %s): perf_event_paranoid "
                 "is %d, user-space counting needs 2 or less", step,
                 papi_error(rc, buf, sizeof buf), paranoid_level());
    else if (rc == PAPI_ECNFLCT)
        snprintf(why, size, "counter conflict (%s: %s)", step, papi_error(rc, buf, sizeof buf));
    else
        snprintf(why, size, "%s: %s", step, papi_error(rc, buf, sizeof buf));
}

/* Adds, starts and stops the events as one set: the only honest probe, as
 * PAPI_query_event can say yes for an event the kernel then refuses.
 * Returns 1 if it counts, 0 if not, -1 if PAPI could not stop it (the set
 * may still be counting, and no other set could start). */
static int try_set(const int *codes, int n, char *why, size_t size)
{
    int es = PAPI_NULL, stuck = 0;
    long long v[2];
    const char *step = "PAPI_create_eventset";
    int rc = PAPI_create_eventset(&es);
    for (int i = 0; rc == PAPI_OK && i < n; i++) {
        step = "PAPI_add_event";
        rc = PAPI_add_event(es, codes[i]);
    }
    if (rc == PAPI_OK) {
        step = "PAPI_start";
        rc = PAPI_start(es);
    }
    if (rc == PAPI_OK) {
        step = "PAPI_stop";
        rc = PAPI_stop(es, v);
        stuck = rc != PAPI_OK;
    }
    if (es != PAPI_NULL) {
        PAPI_cleanup_eventset(es);
        PAPI_destroy_eventset(&es);
    }
    if (rc != PAPI_OK)
        set_failure(rc, step, why, size);
    return stuck ? -1 : rc == PAPI_OK;
}

/* The native event(s) behind a preset, or a native event's full name. */
static void native_of(int code, char *out, size_t size)
{
    PAPI_event_info_t info;
    out[0] = 0;
    if (PAPI_get_event_info(code, &info) != PAPI_OK)
        return;
    /* a native event's terms describe registers, not events */
    if (!IS_PRESET(code) || !info.count) {
        snprintf(out, size, "%.159s", info.symbol);
        return;
    }
    const char *op = !strcmp(info.derived, "DERIVED_SUB") ? " - " :
                     !strcmp(info.derived, "DERIVED_ADD") ? " + " : ", ";
    size_t used = 0;
    for (unsigned i = 0; i < info.count && i < PAPI_MAX_INFO_TERMS && used < size; i++)
        used += (size_t)snprintf(out + used, size - used, "%s%.150s", i ? op : "",
                                 info.name[i]);
    if (used < size && strcmp(info.derived, "NOT_DERIVED") && *op == ',')
        snprintf(out + used, size - used, " (%.20s %.60s)", info.derived, info.postfix);
}

/* The metric a preset counts on this CPU, from its native event. */
static void name_metric(xp_papi_event_t *e)
{
    for (size_t i = 0; i < sizeof meaning / sizeof *meaning; i++)
        if (!strcmp(meaning[i].preset, e->preset) && strstr(e->native, meaning[i].native)) {
            snprintf(e->metric, sizeof e->metric, "%s", meaning[i].metric);
            return;
        }
    snprintf(e->metric, sizeof e->metric, "papi_%s", e->preset + 5);
    for (char *c = e->metric; *c; c++)
        *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
}

/* Sets every event's reason to the same words (a failure before any
 * event could be tried), and the probe's. */
static void none_can(xp_papi_t *p, const char *why)
{
    snprintf(p->why, sizeof p->why, "%s", why);
    for (int i = 0; i < p->n_events; i++) {
        p->ev[i].usable = 0;
        snprintf(p->ev[i].why, sizeof p->ev[i].why, "%.255s", why);
    }
    p->n_passes = 0;
    p->ok = 0;
}

/* The perf_event component is PAPI's way to the PMU: disabled, nothing
 * can be counted, and its reason says why (no PMU, paranoid level).
 * Enabled, its new event sets count user mode only: its default, set
 * here so that it is known. */
static int component_usable(xp_papi_t *p)
{
    int cidx = PAPI_get_component_index("perf_event");
    if (cidx < 0)
        cidx = 0;
    const PAPI_component_info_t *ci = PAPI_get_component_info(cidx);
    if (!ci || !ci->disabled) {
        if (PAPI_set_cmp_domain(PAPI_DOM_USER, cidx) == PAPI_OK)
            p->user_only = 1;
        return 1;
    }
    const PAPI_hw_info_t *hw = PAPI_get_hardware_info();
    int paranoid = paranoid_level();
    char why[512];
    if (paranoid > 2)
        snprintf(why, sizeof why, "perf_event_paranoid is %d (user-space counting needs 2 "
                 "or less), and PAPI's %.32s component is disabled: %.200s", paranoid,
                 ci->name, ci->disabled_reason);
    else if (hw && hw->virtualized)
        snprintf(why, sizeof why, "no PMU: this virtual machine (%.64s) exposes no "
                 "performance-monitoring unit, and PAPI's %.32s component is disabled: "
                 "%.200s", hw->virtual_vendor_string, ci->name, ci->disabled_reason);
    else
        snprintf(why, sizeof why, "no PMU: PAPI's %.32s component is disabled: %.200s",
                 ci->name, ci->disabled_reason);
    none_can(p, why);
    return 0;
}

/* Tries the perf generic event that stands in for a missing preset;
 * `why` says what was wrong with the preset. */
static int try_fallback(xp_papi_event_t *e, int i, const char *why)
{
    char fwhy[160];
    int code, rc = 0;
    if (PAPI_event_name_to_code(wanted[i].fallback, &code) != PAPI_OK)
        snprintf(fwhy, sizeof fwhy, "PAPI does not know it");
    else if ((rc = try_set(&code, 1, fwhy, sizeof fwhy)) == 1) {
        e->code = code;
        e->usable = 1;
        snprintf(e->event, sizeof e->event, "%s", wanted[i].fallback);
        native_of(code, e->native, sizeof e->native);
        snprintf(e->metric, sizeof e->metric, "%s", wanted[i].fallback_metric);
        snprintf(e->why, sizeof e->why, "%.16s %.180s; counting perf's generic event "
                 "instead", e->preset, why);
        return 1;
    }
    snprintf(e->why, sizeof e->why, "%.16s %.110s; %.40s: %.80s", e->preset, why,
             wanted[i].fallback, fwhy);
    return rc;
}

/* One event: the preset if this CPU counts it, else its fallback.
 * `table_knows_cpu`: some preset has a native event here.  Returns -1 if
 * a set could not be stopped. */
static int probe_event(xp_papi_t *p, int i, int table_knows_cpu)
{
    xp_papi_event_t *e = &p->ev[i];
    char why[200];
    int rc = 0;
    if (PAPI_event_name_to_code(e->preset, &e->code) != PAPI_OK)
        snprintf(why, sizeof why, "is unknown to this PAPI");
    else if (PAPI_query_event(e->code) != PAPI_OK) {
        const PAPI_hw_info_t *hw = PAPI_get_hardware_info();
        if (table_knows_cpu)
            snprintf(why, sizeof why, "has no native event on this CPU in PAPI's preset table");
        else
            snprintf(why, sizeof why, "cannot be counted: this CPU (%.40s family %d model "
                     "%d) is missing from PAPI %d.%d's preset table", hw ? hw->model_string
                     : "?", hw ? hw->cpuid_family : 0, hw ? hw->cpuid_model : 0,
                     PAPI_VERSION_MAJOR(PAPI_VERSION), PAPI_VERSION_MINOR(PAPI_VERSION));
    } else if ((rc = try_set(&e->code, 1, e->why, sizeof e->why)) == 1) {
        e->usable = 1;
        native_of(e->code, e->native, sizeof e->native);
        name_metric(e);
        e->why[0] = 0;
        return 0;
    } else
        snprintf(why, sizeof why, "%s", e->why);
    if (rc < 0)
        return -1;
    if (!wanted[i].fallback) {
        snprintf(e->why, sizeof e->why, "%s %s", e->preset, why);
        return 0;
    }
    return try_fallback(e, i, why) < 0 ? -1 : 0;
}

/* 1 if some preset has a native event on this CPU. */
static int table_knows_cpu(const xp_papi_t *p)
{
    for (int i = 0; i < p->n_events; i++) {
        int code;
        if (PAPI_event_name_to_code(p->ev[i].preset, &code) == PAPI_OK &&
            PAPI_query_event(code) == PAPI_OK)
            return 1;
    }
    return 0;
}

static void add_pass(xp_papi_t *p, const int *idx, int n)
{
    if (p->n_passes == XP_PAPI_MAX_PASSES)
        return;
    for (int i = 0; i < n; i++)
        p->pass_ev[p->n_passes][i] = idx[i];
    p->pass_len[p->n_passes++] = n;
}

/* Two events of a group that do not fit together get a pass each, and
 * each says with which event it conflicts.  -1 if a set would not stop. */
static int plan_passes(xp_papi_t *p)
{
    for (int g = 0; g < N_GROUPS; g++) {
        int idx[2], n = 0;
        for (int i = 0; i < p->n_events; i++)
            if (wanted[i].group == g && p->ev[i].usable && n < 2)
                idx[n++] = i;
        if (n == 2) {
            int codes[2] = {p->ev[idx[0]].code, p->ev[idx[1]].code};
            char why[160];
            int rc = try_set(codes, 2, why, sizeof why);
            if (rc < 0)
                return -1;
            if (!rc) {
                char other[2][64];
                for (int k = 0; k < 2; k++)
                    memcpy(other[k], p->ev[idx[!k]].event, sizeof other[k]);
                for (int k = 0; k < 2; k++) {
                    xp_papi_event_t *e = &p->ev[idx[k]];
                    size_t used = strlen(e->why);
                    snprintf(e->why + used, sizeof e->why - used, "%scounted in a pass of "
                             "its own: with %s, %s", used ? "; " : "", other[k], why);
                }
                add_pass(p, idx, 1);
                add_pass(p, idx + 1, 1);
                continue;
            }
        }
        if (n)
            add_pass(p, idx, n);
    }
    return 0;
}

static void init_events(xp_papi_t *p)
{
    p->n_events = N_WANTED;
    for (int i = 0; i < N_WANTED; i++) {
        xp_papi_event_t *e = &p->ev[i];
        e->preset = wanted[i].preset;
        e->fallback = wanted[i].fallback;
        snprintf(e->event, sizeof e->event, "%s", e->preset);
    }
}

/* PAPI itself: initialized once, same version as the header. */
static int library_usable(xp_papi_t *p)
{
    if (PAPI_is_initialized())
        return 1;
    int v = PAPI_library_init(PAPI_VER_CURRENT);
    if (v == PAPI_VER_CURRENT)
        return 1;
    char why[256], buf[96];
    if (v > 0)
        snprintf(why, sizeof why, "PAPI_library_init: the library is version %d.%d, "
                 "tokbench was built with the header of %d.%d", PAPI_VERSION_MAJOR(v),
                 PAPI_VERSION_MINOR(v), PAPI_VERSION_MAJOR(PAPI_VER_CURRENT),
                 PAPI_VERSION_MINOR(PAPI_VER_CURRENT));
    else
        snprintf(why, sizeof why, "PAPI_library_init failed: %s", papi_error(v, buf, sizeof buf));
    none_can(p, why);
    return 0;
}

static void stuck(xp_papi_t *p)
{
    char why[512];
    snprintf(why, sizeof why, "PAPI could not stop a probe's event set (%.300s), which "
             "may still be counting: no other set can start, so PAPI is off", p->why);
    none_can(p, why);
}

void xp_papi_probe(xp_papi_t *p)
{
    memset(p, 0, sizeof *p);
    p->eventset = PAPI_NULL;
    p->user_only = -1;
    init_events(p);
    if (!library_usable(p) || !component_usable(p))
        return;
    int knows = table_knows_cpu(p);
    for (int i = 0; i < N_WANTED; i++) {
        if (probe_event(p, i, knows)) {
            snprintf(p->why, sizeof p->why, "%s", p->ev[i].why);
            stuck(p);
            return;
        }
        p->ok |= p->ev[i].usable;
    }
    if (!p->ok) {
        snprintf(p->why, sizeof p->why, "no event can be counted: %.400s", p->ev[0].why);
        return;
    }
    if (plan_passes(p)) {
        snprintf(p->why, sizeof p->why, "a pair of events would not stop");
        stuck(p);
        return;
    }
    snprintf(p->why, sizeof p->why, "%d pass%s", p->n_passes, p->n_passes == 1 ? "" : "es");
}

int xp_papi_pass_begin(xp_papi_t *p, int pass, tb_err_t *err)
{
    if (!p->ok || pass < 0 || pass >= p->n_passes)
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
        char buf[96];
        return tb_fail(err, "PAPI pass %d (%s): %s", pass,
                       p->ev[p->pass_ev[pass][0]].event, papi_error(rc, buf, sizeof buf));
    }
    p->eventset = es;
    return 0;
}

int xp_papi_read(xp_papi_t *p, long long vals[2], tb_err_t *err)
{
    vals[0] = vals[1] = 0;
    int rc = PAPI_read(p->eventset, vals);
    char buf[96];
    if (rc != PAPI_OK)
        return tb_fail(err, "PAPI_read: %s", papi_error(rc, buf, sizeof buf));
    return 0;
}

int xp_papi_pass_end(xp_papi_t *p, tb_err_t *err)
{
    if (p->eventset == PAPI_NULL)
        return 0;
    long long v[2];
    int rc = PAPI_stop(p->eventset, v);
    PAPI_cleanup_eventset(p->eventset);
    PAPI_destroy_eventset(&p->eventset);
    p->eventset = PAPI_NULL;
    if (rc == PAPI_OK)
        return 0;
    char buf[96], why[256];
    snprintf(why, sizeof why, "PAPI_stop failed (%s): its event set may still be counting "
             "and no other can start, so PAPI is off for the rest of this run",
             papi_error(rc, buf, sizeof buf));
    none_can(p, why);
    return tb_fail(err, "%s", why);
}
