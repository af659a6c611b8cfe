/*
 * sec_walk: the report's sections on the trie walks: cycles per visited
 * node and cache misses and branch mispredictions per node, cases grouped
 * by vocabulary and pattern (grouped.gp).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* The rows and columns of the cycles plot: groups (vocabulary and
 * pattern) by layouts. */
typedef struct {
    names_t groups, layouts;
    grid_t v;
} cycles_grid_t;

/* One walk case's row of the table and its bar: 1 drawn, 0 not, -1 error. */
static int cycles_row(report_t *r, section_t *s, sqlite3_stmt *st, const xp_column_t *c,
                      cycles_grid_t *g, tb_err_t *err)
{
    char label[200], group[96], med[32], range[64], x13[32], why[200];
    xp_rp_case_label(st, label, sizeof label);
    const char *source = c->source ? c->source : "";
    stat_t v;
    int ok = !strcmp(xp_rp_col(st, 4), "ok");
    if (!ok || !xp_rp_column_stat(r, sqlite3_column_int64(st, 0), c, &v)) {
        if (!ok)
            xp_rp_failed_text(st, why, sizeof why);
        else
            snprintf(why, sizeof why, "%s", NOT_MEASURED);
        return xp_rp_tab_row(&s->tab, err, label, source, NOT_MEASURED, "", why) ? -1 : 0;
    }
    double per = v.median / v.nodes;
    xp_rp_fmt(med, sizeof med, "%.2f", per);
    snprintf(range, sizeof range, "%.2f..%.2f", v.min / v.nodes, v.max / v.nodes);
    xp_rp_fmt(x13, sizeof x13, "%.2f", per / XP_BASELINE_CYCLES_PER_NODE);
    if (xp_rp_tab_row(&s->tab, err, label, source, med, range, x13) ||
        xp_rp_group_label(r, st, group, sizeof group))
        return tb_fail(err, "out of memory");
    int gi = xp_rp_name_index(&g->groups, group), li = xp_rp_name_index(&g->layouts,
                                                                           xp_rp_col(st, 2));
    if (gi < 0 || li < 0)
        return 0; /* in the table; too many to draw */
    g->v[gi][li] = per;
    return 1;
}

/* Cycles per node: the run's core cycles where it counted them, else its
 * TSC reference cycles, never a mix; the 13-cycle baseline is core
 * cycles, so a TSC figure against it says so wherever it is shown. */
int xp_rp_sec_cycles(report_t *r, tb_err_t *err)
{
    section_t *s = xp_rp_new_section(r, "cycles_per_node", "Which trie layout visits a node "
                                     "in the fewest cycles, per vocabulary and pattern?");
    xp_column_t c;
    xp_pick_column(r->db, r->run, xp_cycles_prefs, 2, NULL, &c);
    int core = !c.source || !strcmp(c.metric, "cycles");
    xp_rp_tab_init(&s->tab, 5, "case", "counter source", core ? "core cycles/node (median)" :
                   "TSC reference cycles/node (median)", "min..max",
                   core ? "x 13-cycle baseline" : "x 13-cycle baseline (TSC reference cycles "
                   "against core cycles)");
    xp_rp_tab_code(&s->tab, 0);
    cycles_grid_t *g = calloc(1, sizeof *g);
    if (!g)
        return tb_fail(err, "out of memory");
    xp_rp_grid_clear(g->v);
    sqlite3_stmt *st;
    /* lex: and g: walks are the lexer section's twins of re: walks (same
     * nodes, same table walk); drawn here too they would double the bars. */
    int rows = 0, rc = xp_rp_run_query(r, WALK_CASES_IF(" AND substr(pattern, 1, 4) <> 'lex:'"
                                                        " AND substr(pattern, 1, 2) <> 'g:'"),
                                       &st, err);
    if (!rc) {
        while (!rc && sqlite3_step(st) == SQLITE_ROW) {
            int done = cycles_row(r, s, st, &c, g, err);
            rc = done < 0;
            rows += done > 0;
        }
        sqlite3_finalize(st);
    }
    char src[400], says[300];
    snprintf(src, sizeof src, "%s: %s", core ? "core cycles" : "TSC reference cycles, "
             "not core cycles (no core cycles in this run)",
             c.source ? xp_column_says(&c, says, sizeof says) : "");
    xp_rp_caption(r, s, rows ? src : "no cycle counts");
    if (!rc && !rows)
        xp_rp_not_measured(r, s, "the run has no walk case with cycle counts.");
    if (!rc && rows) {
        snprintf(s->note, sizeof s->note, "The dashed line is a published figure of "
                 "another machine, not a measurement of this run: 13 core cycles per node "
                 "for the flat depth-first trie on an AMD EPYC 7V13 (the anchors table "
                 "gives its source).  Bars: medians; the table gives min..max.%s",
                 core ? "" : "  This run has TSC reference cycles only, which tick at the "
                 "TSC's fixed rate whatever the core's clock: against the baseline they are "
                 "indicative, not a comparison of like with like.");
        tb_buf_t v = {0};
        xp_rp_gp_num(&v, "hline", XP_BASELINE_CYCLES_PER_NODE);
        xp_rp_gp_str(&v, "hlabel", "published: 13 cycles, EPYC 7V13");
        rc = xp_rp_write_grid(r, s->name, "case", &g->groups, &g->layouts, g->v, err) ||
             xp_rp_draw_grid(r, s, core ? "core cycles per visited node" :
                             "TSC reference cycles per visited node", g->layouts.n, 0, g->v,
                             g->groups.n, &v, err);
        tb_buf_free(&v);
    }
    free(g);
    return rc ? -1 : 0;
}

/* The run's three columns, all of one source: PAPI's real counts where
 * the run has any, else callgrind's simulation; 0 if neither. */
static int miss_columns(report_t *r, xp_column_t c[3])
{
    static const char *const sources[2] = {"papi", "callgrind"};
    for (int k = 0; k < 2; k++) {
        int any = xp_pick_column(r->db, r->run, xp_l1d_prefs, 4, sources[k], &c[0]);
        any |= xp_pick_column(r->db, r->run, xp_llc_prefs, 3, sources[k], &c[1]);
        any |= xp_pick_column(r->db, r->run, xp_misp_prefs, 3, sources[k], &c[2]);
        if (any)
            return 1;
    }
    return 0;
}

int xp_rp_sec_misses(report_t *r, tb_err_t *err)
{
    static const char *const what[3] = {"L1D misses", "LLC misses", "branch mispredictions"};
    section_t *s = xp_rp_new_section(r, "misses_per_node", "Where does a walk wait: cache "
                                     "misses and branch mispredictions per node, per case?");
    xp_column_t c[3];
    int have_source = miss_columns(r, c);
    const char *source = c[0].source ? c[0].source : c[1].source ? c[1].source : c[2].source;
    int is_sim = have_source && !strcmp(source, "callgrind");
    char head[3][64];
    for (int k = 0; k < 3; k++)
        snprintf(head[k], sizeof head[k], "%s/node", c[k].source ? c[k].metric : what[k]);
    char th[3][64];
    for (int k = 0; k < 3; k++)
        snprintf(th[k], sizeof th[k], "%.30s median (min..max)", head[k]);
    xp_rp_tab_init(&s->tab, 5, "case", "counter source", th[0], th[1], th[2]);
    xp_rp_tab_code(&s->tab, 0);
    sqlite3_stmt *st;
    FILE *f = xp_rp_open_run_query(r, WALK_CASES, s->name, &st, err);
    if (!f)
        return -1;
    fprintf(f, "case \"%s\" \"%s\" \"%s\"\n", head[0], head[1], head[2]);
    int rows = 0, rc = 0;
    double lo = INFINITY, hi = 0; /* the bars drawn, for the axis */
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        char label[200], q[240], cell[3][100], why[200];
        xp_rp_case_label(st, label, sizeof label);
        int64_t id = sqlite3_column_int64(st, 0);
        stat_t m[3];
        int have[3], any = 0;
        for (int k = 0; k < 3; k++)
            any |= have[k] = xp_rp_column_stat(r, id, &c[k], &m[k]);
        if (strcmp(xp_rp_col(st, 4), "ok") || !any) {
            if (strcmp(xp_rp_col(st, 4), "ok"))
                xp_rp_failed_text(st, why, sizeof why);
            else
                snprintf(why, sizeof why, "no %s counts", have_source ?
                         (is_sim ? "callgrind" : "PAPI") : "PAPI or callgrind");
            rc = xp_rp_tab_row(&s->tab, err, label, why, NOT_MEASURED, NOT_MEASURED,
                               NOT_MEASURED);
            continue;
        }
        for (int k = 0; k < 3; k++)
            if (have[k])
                xp_rp_fmt_range(cell[k], sizeof cell[k], "%.3g", &m[k], m[k].nodes);
            else
                snprintf(cell[k], sizeof cell[k], "%s", NOT_MEASURED);
        rc = xp_rp_tab_row(&s->tab, err, label, is_sim ? "callgrind (simulated)" : "PAPI (real)",
                           cell[0], cell[1], cell[2]);
        char group[96];
        if (xp_rp_group_label(r, st, group, sizeof group)) {
            rc = tb_fail(err, "out of memory");
            break;
        }
        snprintf(label, sizeof label, "%s %s", group, xp_rp_col(st, 2));
        xp_rp_dat_label(q, sizeof q, label);
        fprintf(f, "\"%s\"", q);
        for (int k = 0; k < 3; k++)
            if (have[k]) {
                double per = m[k].median / m[k].nodes;
                fprintf(f, " %.6g", per);
                lo = per > 0 ? fmin(lo, per) : lo;
                hi = fmax(hi, per);
            } else
                fprintf(f, " ?");
        fprintf(f, "\n");
        rows++;
    }
    sqlite3_finalize(st);
    if (xp_rp_close_out(r, f, s->name, err) || rc)
        return -1;
    xp_rp_caption(r, s, !rows ? "no cache or branch counts" : is_sim ?
                  "counts: callgrind (simulated caches and branches)" :
                  "counts: PAPI (real hardware)");
    /* what each column counted, under the plot */
    size_t used = 0;
    for (int k = 0; k < 3 && rows && used < sizeof s->note; k++) {
        char says[300];
        if (c[k].source)
            used += (size_t)snprintf(s->note + used, sizeof s->note - used, "%s%s: %s.",
                                     used ? "  " : "", c[k].metric,
                                     xp_column_says(&c[k], says, sizeof says));
    }
    if (!rows)
        return xp_rp_not_measured(r, s, "no walk case of this run has PAPI or callgrind counts "
                                  "(the machine has no PMU and no case asked for callgrind, or "
                                  "there is no walk case).");
    /* LLC misses run orders of magnitude under L1D misses: on a linear
     * axis their bars are flat against it */
    int logy = xp_rp_spread(lo, hi);
    tb_buf_t v = {0};
    xp_rp_gp_num(&v, "nser", 3);
    xp_rp_gp_num(&v, "nmarks", 0);
    xp_rp_gp_num(&v, "logy", logy);
    rc = xp_rp_draw_panels(r, s, "grouped", rows, logy ? "events per visited node (log scale)"
                           : "events per visited node", &v, err);
    tb_buf_free(&v);
    return rc;
}
