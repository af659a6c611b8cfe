/* cmd_counters: `tokbench counters`: which counter sources work on this
 * machine, and in words why the others do not. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "provenance.h"

static void print_papi(const xp_papi_t *p)
{
    printf("papi       %s: %s\n", p->ok ? "works" : "UNAVAILABLE", p->why);
    for (int i = 0; i < p->n_events; i++)
        printf("  %-13s %-13s %s\n", p->ev[i].preset, p->ev[i].metric,
               p->ev[i].usable ? "counts" : p->ev[i].why);
    for (int i = 0; i < p->n_passes; i++) {
        printf("  pass %d:", i + 1);
        for (int k = 0; k < p->pass_len[i]; k++)
            printf(" %s", p->ev[p->pass_ev[i][k]].preset);
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
