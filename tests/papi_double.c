/* papi_double: PAPI without a PMU, for tests (see papi_double.h). */
#include "papi_double.h"

#include <papi.h>
#include <stdio.h>
#include <string.h>

struct papi_double papi_double;

static const struct {
    const char *name;
    long long rate;
} events[PAPI_DOUBLE_EVENTS] = {
    {"PAPI_TOT_CYC", 13}, {"PAPI_TOT_INS", 40}, {"PAPI_L1_DCM", 2},
    {"PAPI_L2_DCM", 1},   {"PAPI_L3_TCM", 5},   {"PAPI_BR_MSP", 3},
    {"PAPI_BR_CN", 7},
    {"perf::PERF_COUNT_HW_CPU_CYCLES", 17},
    {"perf::PERF_COUNT_HW_INSTRUCTIONS", 41},
    {"perf::PERF_COUNT_HW_CACHE_L1D:READ:MISS", 4},
    {"perf::PERF_COUNT_HW_CACHE_LL:READ:MISS", 6},
    {"perf::PERF_COUNT_HW_BRANCH_MISSES", 9},
};

/* Event codes: presets have the high bit, natives bit 30, as in PAPI. */
#define PRESET_BIT 0x80000000u
#define NATIVE_BIT 0x40000000u

#define MAX_SETS 8
#define MAX_IN_SET 4

static struct {
    int used, running, n;
    int ev[MAX_IN_SET];            /* indexes into events */
    long long val[MAX_IN_SET];
    long long work;                /* units seen since the start */
} sets[MAX_SETS];

static int initialized;

void papi_double_reset(void)
{
    static const char *const haswell[PAPI_DOUBLE_PRESETS] = {
        "CPU_CLK_THREAD_UNHALTED:THREAD_P", "INST_RETIRED:ANY_P", "L1D:REPLACEMENT",
        "LLC_REFERENCES - L2_RQSTS:CODE_RD_MISS", "LLC_MISSES",
        "BR_MISP_RETIRED:CONDITIONAL", "BR_INST_RETIRED:CONDITIONAL",
    };
    memset(&papi_double, 0, sizeof papi_double);
    memcpy(papi_double.native, haswell, sizeof haswell);
    memset(sets, 0, sizeof sets);
    initialized = 0;
}

long long papi_double_rate(const char *name)
{
    for (int i = 0; i < PAPI_DOUBLE_EVENTS; i++)
        if (!strcmp(events[i].name, name))
            return events[i].rate;
    return 0;
}

void papi_double_work(long long units)
{
    for (int s = 0; s < MAX_SETS; s++)
        if (sets[s].running) {
            sets[s].work += units;
            for (int k = 0; k < sets[s].n; k++)
                sets[s].val[k] += units * events[sets[s].ev[k]].rate;
        }
}

/* The index of an event code, or -1. */
static int event_of(int code)
{
    unsigned c = (unsigned)code;
    int i = (int)(c & 0xffff);
    if ((c & PRESET_BIT) && i < PAPI_DOUBLE_PRESETS)
        return i;
    if ((c & NATIVE_BIT) && i >= PAPI_DOUBLE_PRESETS && i < PAPI_DOUBLE_EVENTS)
        return i;
    return -1;
}

/* A preset counts where the CPU has a native event behind it. */
static int countable(int i)
{
    return i >= PAPI_DOUBLE_PRESETS || papi_double.native[i];
}

static int valid_set(int es)
{
    return es >= 0 && es < MAX_SETS && sets[es].used;
}

int PAPI_is_initialized(void)
{
    return initialized ? PAPI_LOW_LEVEL_INITED : PAPI_NOT_INITED;
}

int PAPI_library_init(int version)
{
    if (papi_double.init_rc)
        return papi_double.init_rc;
    initialized = 1;
    return version;
}

char *PAPI_strerror(int rc)
{
    static char *const words[] = {
        "no error", "invalid argument", "out of memory", "a system call failed",
        "not supported by the component", "counters lost", "internal error",
        "no such event", "counter conflict", "event set not running",
        "event set running", "no such event set",
    };
    /* PAPI has no words for a positive code: NULL, as PAPI answers */
    if (rc > 0 || -rc >= (int)(sizeof words / sizeof *words)) {
        if (rc == PAPI_EPERM)
            return "permission denied";
        return NULL;
    }
    return words[-rc];
}

int PAPI_set_cmp_domain(int domain, int cidx)
{
    if (cidx != 0)
        return PAPI_ENOCMP;
    papi_double.domain = domain;
    return PAPI_OK;
}

int PAPI_get_component_index(const char *name)
{
    return strcmp(name, "perf_event") ? PAPI_ENOCMP : 0;
}

const PAPI_component_info_t *PAPI_get_component_info(int cidx)
{
    static PAPI_component_info_t ci;
    if (cidx != 0)
        return NULL;
    memset(&ci, 0, sizeof ci);
    snprintf(ci.name, sizeof ci.name, "perf_event");
    ci.disabled = papi_double.disabled ? PAPI_ECMP : 0;
    snprintf(ci.disabled_reason, sizeof ci.disabled_reason, "%s",
             papi_double.disabled ? papi_double.disabled : "");
    return &ci;
}

const PAPI_hw_info_t *PAPI_get_hardware_info(void)
{
    static PAPI_hw_info_t hw;
    memset(&hw, 0, sizeof hw);
    snprintf(hw.model_string, sizeof hw.model_string, "Double CPU");
    snprintf(hw.virtual_vendor_string, sizeof hw.virtual_vendor_string, "DoubleVM");
    hw.cpuid_family = 25;
    hw.cpuid_model = 97;
    hw.virtualized = papi_double.virtualized;
    return &hw;
}

int PAPI_event_name_to_code(const char *name, int *code)
{
    for (int i = 0; i < PAPI_DOUBLE_EVENTS; i++)
        if (!strcmp(events[i].name, name)) {
            if (i >= PAPI_DOUBLE_PRESETS && papi_double.no_perf_events)
                break;
            *code = (int)((i < PAPI_DOUBLE_PRESETS ? PRESET_BIT : NATIVE_BIT) | (unsigned)i);
            return PAPI_OK;
        }
    return PAPI_ENOEVNT;
}

int PAPI_query_event(int code)
{
    int i = event_of(code);
    return i >= 0 && countable(i) ? PAPI_OK : PAPI_ENOEVNT;
}

int PAPI_get_event_info(int code, PAPI_event_info_t *info)
{
    int i = event_of(code);
    if (i < 0)
        return PAPI_ENOEVNT;
    memset(info, 0, sizeof *info);
    snprintf(info->symbol, sizeof info->symbol, "%s", events[i].name);
    if (i >= PAPI_DOUBLE_PRESETS || !papi_double.native[i])
        return PAPI_OK;
    /* a preset: its native terms, "A - B" a derived difference */
    const char *n = papi_double.native[i], *minus = strstr(n, " - ");
    snprintf(info->derived, sizeof info->derived, minus ? "DERIVED_SUB" : "NOT_DERIVED");
    info->count = minus ? 2 : 1;
    snprintf(info->name[0], sizeof info->name[0], "%.*s",
             (int)(minus ? (size_t)(minus - n) : strlen(n)), n);
    if (minus)
        snprintf(info->name[1], sizeof info->name[1], "%s", minus + 3);
    return PAPI_OK;
}

int PAPI_create_eventset(int *es)
{
    if (*es != PAPI_NULL)
        return PAPI_EINVAL;
    for (int s = 0; s < MAX_SETS; s++)
        if (!sets[s].used) {
            memset(&sets[s], 0, sizeof sets[s]);
            sets[s].used = 1;
            *es = s;
            return PAPI_OK;
        }
    return PAPI_ENOMEM;
}

static int conflicts(int a, int b)
{
    for (int k = 0; k < 4 && papi_double.conflict[k][0]; k++) {
        const char *x = papi_double.conflict[k][0], *y = papi_double.conflict[k][1];
        if ((!strcmp(events[a].name, x) && !strcmp(events[b].name, y)) ||
            (!strcmp(events[a].name, y) && !strcmp(events[b].name, x)))
            return 1;
    }
    return 0;
}

int PAPI_add_event(int es, int code)
{
    if (!valid_set(es))
        return PAPI_ENOEVST;
    if (sets[es].running)
        return PAPI_EISRUN;
    int i = event_of(code);
    if (i < 0 || !countable(i))
        return PAPI_ENOEVNT;
    if (sets[es].n == MAX_IN_SET)
        return PAPI_ECNFLCT;
    for (int k = 0; k < sets[es].n; k++)
        if (conflicts(sets[es].ev[k], i))
            return PAPI_ECNFLCT;
    sets[es].ev[sets[es].n++] = i;
    return PAPI_OK;
}

int PAPI_start(int es)
{
    if (!valid_set(es))
        return PAPI_ENOEVST;
    for (int s = 0; s < MAX_SETS; s++)
        if (sets[s].running)
            return PAPI_EISRUN;
    if (papi_double.start_rc)
        return papi_double.start_rc;
    sets[es].running = 1;
    sets[es].work = 0;
    memset(sets[es].val, 0, sizeof sets[es].val);
    papi_double.starts++;
    return PAPI_OK;
}

int PAPI_stop(int es, long long *v)
{
    if (!valid_set(es))
        return PAPI_ENOEVST;
    if (!sets[es].running)
        return PAPI_ENOTRUN;
    if (papi_double.stop_rc)
        return papi_double.stop_rc; /* and the set goes on counting */
    sets[es].running = 0;
    memcpy(v, sets[es].val, (size_t)sets[es].n * sizeof *v);
    return PAPI_OK;
}

/* 1 if the script makes this read of the set fail. */
static int read_fails(int es)
{
    const char *name = papi_double.fail_read_event;
    for (int k = 0; name && k < sets[es].n; k++)
        if (!strcmp(events[sets[es].ev[k]].name, name))
            return sets[es].work >= papi_double.fail_read_after;
    return 0;
}

int PAPI_read(int es, long long *v)
{
    if (!valid_set(es))
        return PAPI_ENOEVST;
    if (!sets[es].running)
        return PAPI_ENOTRUN;
    if (read_fails(es))
        return PAPI_ESYS;
    for (int k = 0; k < sets[es].n; k++)
        v[k] = sets[es].val[k] += PAPI_DOUBLE_READ;
    return PAPI_OK;
}

int PAPI_cleanup_eventset(int es)
{
    if (!valid_set(es))
        return PAPI_ENOEVST;
    if (sets[es].running)
        return PAPI_EISRUN;
    sets[es].n = 0;
    return PAPI_OK;
}

int PAPI_destroy_eventset(int *es)
{
    if (!valid_set(*es))
        return PAPI_ENOEVST;
    if (sets[*es].running)
        return PAPI_EISRUN;
    if (sets[*es].n)
        return PAPI_EINVAL; /* PAPI destroys empty sets only */
    sets[*es].used = 0;
    *es = PAPI_NULL;
    return PAPI_OK;
}
