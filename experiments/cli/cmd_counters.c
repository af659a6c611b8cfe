/* cmd_counters: `tokbench counters`: which counter sources work on this
 * machine, and in words why the others do not. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "../store/provenance.h"

/* Per event: the metric, the event and the native event it will count
 * on this CPU, or why it cannot be counted. */
static void print_papi(const xp_papi_t *p)
{
    printf("papi       %s: %s\n", p->ok ? "works" : "UNAVAILABLE", p->why);
    for (int i = 0; i < p->n_events; i++) {
        const xp_papi_event_t *e = &p->ev[i];
        if (!e->usable) {
            char tried[96];
            snprintf(tried, sizeof tried, "%s%s%s", e->preset, e->fallback ? " or " : "",
                     e->fallback ? e->fallback : "");
            printf("  %-16s not counted: %s\n", tried,
                   strcmp(e->why, p->why) ? e->why : "the reason above");
            continue;
        }
        printf("  %-16s %s%s%s, %s%s%s\n", e->metric, e->event,
               strcmp(e->event, e->native) ? " = " : "",
               strcmp(e->event, e->native) ? e->native : "",
               p->user_only == 1 ? "user mode only" : "mode unknown",
               e->why[0] ? "; " : "", e->why);
    }
    for (int i = 0; i < p->n_passes; i++) {
        printf("  pass %d:", i + 1);
        for (int k = 0; k < p->pass_len[i]; k++)
            printf(" %s", p->ev[p->pass_ev[i][k]].metric);
        printf("\n");
    }
}

int xp_cmd_counters(int argc, char **argv)
{
    if (xp_wants_help(argc, argv)) {
        printf("usage: tokbench counters\nLists the counter sources (tsc, papi, "
               "callgrind), whether each works here, and why not.\n");
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "usage: tokbench counters\n");
        return 2;
    }
    xp_prov_t p;
    xp_papi_t papi;
    tb_err_t err;
    const char *root = xp_data_root(&err);
    xp_prov_collect(&p, root ? root : ".", &papi);
    char why[512];
    int tsc = xp_tsc_usable(why, sizeof why);
    printf("machine    %s, %d cores, %s, virtualization: %s\n", p.cpu_model,
           p.cores, p.kernel, p.virt);
    printf("tsc        %s: %s; measured %.6f GHz against CLOCK_MONOTONIC_RAW\n",
           tsc && p.tsc_hz > 0 ? "works" : "UNAVAILABLE", why, p.tsc_hz / 1e9);
    print_papi(&papi);
    int cg = xp_callgrind_usable(why, sizeof why);
    printf("callgrind  %s: %s\n", cg ? "works" : "UNAVAILABLE", why);
    char names[64];
    printf("\nsources available: %s\n",
           p.sources ? xp_sources_format(p.sources, names, sizeof names) : "none");
    return 0;
}
