/*
 * sec_machines: the same walks on every machine of the database
 * (grouped.gp), and one run against another (bars.gp).
 */
#include <string.h>

#include "report.h"

#define MAXMACHINES (MAXCOLS - 1)

/* The walk case of run `run` with the same row as the reported run's. */
static int64_t same_case(report_t *r, int64_t run, sqlite3_stmt *walk)
{
    int64_t id = -1;
    sqlite3_stmt *st = xp_rp_figure_query(r, "SELECT id FROM cases WHERE run_id = ? AND"
                                          " experiment = 'walk' AND vocabulary = ? AND"
                                          " layout = ? AND pattern = ? AND status = 'ok'"
                                          " ORDER BY seq LIMIT 1", run);
    if (!st)
        return -1;
    for (int i = 1; i <= 3; i++)
        sqlite3_bind_text(st, i + 1, xp_rp_col(walk, i), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) == SQLITE_ROW)
        id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return id;
}

/* Cycles per node of the reported run's walks on every machine of the
 * database (its latest run there; the reported run for its own machine),
 * as gathered by `tokbench merge`. */
int xp_rp_sec_machines(report_t *r, tb_err_t *err)
{
    section_t *s = xp_rp_new_section(r, "machines", "How do the machines of this database "
                                     "compare, walk by walk?");
    sqlite3_stmt *st;
    if (xp_rp_run_query(r, "WITH me AS (SELECT cpu_model, host FROM runs WHERE id = ?1)"
                           " SELECT CASE WHEN r.cpu_model IS me.cpu_model AND"
                           " r.host IS me.host THEN ?1 ELSE max(r.id) END AS rid,"
                           " r.cpu_model, r.host FROM runs r, me"
                           " GROUP BY r.cpu_model, r.host ORDER BY rid <> ?1, rid",
                    &st, err))
        return -1;
    int64_t run[MAXMACHINES];
    xp_column_t cyc[MAXMACHINES];
    char name[MAXMACHINES][64];
    int n = 0;
    while (n < MAXMACHINES && sqlite3_step(st) == SQLITE_ROW) {
        run[n] = sqlite3_column_int64(st, 0);
        /* a machine's column is its core cycles or its TSC's, and says which */
        xp_pick_column(r->db, run[n], xp_cycles_prefs, 2, NULL, &cyc[n]);
        snprintf(name[n], sizeof name[n], "%.28s, %.12s (run %lld, %s)",
                 *xp_rp_col(st, 1) ? xp_rp_col(st, 1) : "unknown CPU", xp_rp_col(st, 2),
                 (long long)run[n],
                 cyc[n].source && !strcmp(cyc[n].metric, "ref_cycles") ? "TSC ref" : "core");
        n++;
    }
    sqlite3_finalize(st);
    xp_rp_caption(r, s, "cycles per node: core cycles (PAPI) where a machine counts them, "
                  "else TSC reference cycles, from each machine's latest run; each column "
                  "says which");
    if (n < 2)
        return xp_rp_not_measured(r, s, "the database holds runs of one machine only; "
                                  "`tokbench merge` the databases of others to compare "
                                  "machines here.");
    xp_rp_tab_init(&s->tab, n + 1, "case", name[0], n > 1 ? name[1] : "", n > 2 ? name[2] : "",
                   n > 3 ? name[3] : "", n > 4 ? name[4] : "", n > 5 ? name[5] : "",
                   n > 6 ? name[6] : "");
    xp_rp_tab_code(&s->tab, 0);
    FILE *f = xp_rp_open_run_query(r, WALK_CASES, s->name, &st, err);
    if (!f)
        return -1;
    fprintf(f, "case");
    for (int m = 0; m < n; m++) {
        char q[80];
        xp_rp_dat_label(q, sizeof q, name[m]);
        fprintf(f, " \"%s\"", q);
    }
    fprintf(f, "\n");
    int rows = 0, lines = 0, rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        if (strcmp(xp_rp_col(st, 4), "ok"))
            continue;
        char label[200], group[96], bar[200], q[200], cell[MAXMACHINES][48];
        xp_rp_case_label(st, label, sizeof label);
        if (xp_rp_group_label(r, st, group, sizeof group)) {
            rc = tb_fail(err, "out of memory");
            break;
        }
        snprintf(bar, sizeof bar, "%s %s", group, xp_rp_col(st, 2));
        xp_rp_dat_label(q, sizeof q, bar);
        fprintf(f, "\"%s\"", q);
        int have = 0;
        for (int m = 0; m < n; m++) {
            int64_t id = same_case(r, run[m], st);
            stat_t c;
            if (id > 0 && xp_rp_column_stat(r, id, &cyc[m], &c)) {
                snprintf(cell[m], sizeof cell[m], "%.2f", c.median / c.nodes);
                fprintf(f, " %.6g", c.median / c.nodes);
                have += m > 0;
            } else {
                snprintf(cell[m], sizeof cell[m], "%s", NOT_MEASURED);
                fprintf(f, " ?");
            }
        }
        fprintf(f, "\n");
        lines++;
        rows += have > 0;
        rc = xp_rp_tab_row(&s->tab, err, label, cell[0], n > 1 ? cell[1] : "",
                           n > 2 ? cell[2] : "", n > 3 ? cell[3] : "", n > 4 ? cell[4] : "",
                           n > 5 ? cell[5] : "", n > 6 ? cell[6] : "");
    }
    sqlite3_finalize(st);
    if (xp_rp_close_out(r, f, s->name, err) || rc)
        return -1;
    if (!rows)
        return xp_rp_not_measured(r, s, "no other machine ran the walks of this run.");
    snprintf(s->note, sizeof s->note, "TSC reference cycles tick at each machine's "
             "own TSC frequency: compare them across machines with care.");
    tb_buf_t v = {0};
    xp_rp_gp_num(&v, "logy", 1); /* layouts differ by orders of magnitude */
    xp_rp_gp_num(&v, "nser", n);
    xp_rp_gp_num(&v, "nmarks", 0);
    rc = xp_rp_draw_panels(r, s, "grouped", lines, "cycles per visited node (log scale)", &v,
                           err);
    tb_buf_free(&v);
    return rc;
}

int xp_rp_sec_compare(report_t *r, tb_err_t *err)
{
    section_t *s = xp_rp_new_section(r, "compare", "");
    snprintf(s->title, sizeof s->title, "Which cases got slower or faster: run %lld against "
             "run %lld", (long long)r->run, (long long)r->vs);
    char hv[64], hr[64];
    snprintf(hv, sizeof hv, "run %lld median us", (long long)r->vs);
    snprintf(hr, sizeof hr, "run %lld median us", (long long)r->run);
    xp_rp_tab_init(&s->tab, 5, "case", hv, hr, "ratio (noise band)", "verdict");
    xp_rp_tab_code(&s->tab, 0);
    /* the headline of every case: tokbench's time by the TSC */
    sqlite3_stmt *st;
    if (xp_rp_run_query(r,
                        "WITH ca AS (" XP_CASE_KEYS("status = 'ok' AND run_id = ?1") "),"
                        " cb AS (" XP_CASE_KEYS("status = 'ok' AND run_id = ?2") ")"
                        " SELECT ca.k, x.median, x.min, x.max, y.median, y.min, y.max"
                        " FROM ca JOIN cb ON ca.k = cb.k AND ca.occ = cb.occ"
                        " JOIN metric_stats x ON x.case_id = ca.id AND x.source = 'tsc'"
                        "  AND x.impl = 'tokbench' AND x.metric = 'ns'"
                        " JOIN metric_stats y ON y.case_id = cb.id AND y.source = 'tsc'"
                        "  AND y.impl = 'tokbench' AND y.metric = 'ns'"
                        " WHERE x.min > 0 AND y.min > 0 ORDER BY ca.seq", &st, err))
        return -1;
    sqlite3_bind_int64(st, 2, r->vs);
    FILE *f = xp_rp_open_out(r, s->name, ".dat", err);
    if (!f) {
        sqlite3_finalize(st);
        return -1;
    }
    int rows = 0, worse = 0, better = 0, rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        double rm = sqlite3_column_double(st, 1), rmin = sqlite3_column_double(st, 2),
               rmax = sqlite3_column_double(st, 3), vm = sqlite3_column_double(st, 4),
               vmin = sqlite3_column_double(st, 5), vmax = sqlite3_column_double(st, 6);
        /* beyond noise only when the min..max ranges do not overlap, as diff */
        const char *verdict = rmin > vmax ? "REGRESSION (slower)" :
                              rmax < vmin ? "faster" : "within noise";
        double lo = rmin / vmax, hi = rmax / vmin;
        char a[32], b[32], ratio[80], q[300];
        snprintf(a, sizeof a, "%.1f", vm / 1e3);
        snprintf(b, sizeof b, "%.1f", rm / 1e3);
        snprintf(ratio, sizeof ratio, "%.3f (%.3f..%.3f)", rm / vm, lo, hi);
        rc = xp_rp_tab_row(&s->tab, err, xp_rp_col(st, 0), a, b, ratio, verdict);
        xp_rp_dat_label(q, sizeof q, xp_rp_col(st, 0));
        fprintf(f, "\"%.40s\" %.6g %.6g %.6g 0x%06x\n", q, rm / vm, lo, hi,
                *verdict == 'R' ? COLOUR_BAD : *verdict == 'f' ? COLOUR_GOOD : COLOUR_SAME);
        rows++;
        worse += *verdict == 'R';
        better += *verdict == 'f';
    }
    sqlite3_finalize(st);
    if (xp_rp_close_out(r, f, s->name, err) || rc)
        return -1;
    char other[700];
    const run_info_t *o = &r->vs_info;
    snprintf(other, sizeof other, "against run %lld, commit %.10s%s on %s; time: TSC",
             (long long)o->id, *o->commit ? o->commit : "unknown", o->dirty ? "+dirty" : "",
             strcmp(o->cpu, r->info.cpu) ? o->cpu : "the same CPU");
    xp_rp_caption(r, s, other);
    if (!rows)
        return xp_rp_not_measured(r, s, "the two runs have no successful case in common.");
    snprintf(s->note, sizeof s->note, "Ratio: time in run %lld over time in run %lld "
             "(above 1: slower).  The band goes from fastest/slowest to slowest/fastest "
             "repetition; a case is a regression (red) only when its whole range is "
             "slower.  %d regression%s, %d faster (green).", (long long)r->run,
             (long long)r->vs, worse, worse == 1 ? "" : "s", better);
    tb_buf_t v = {0};
    xp_rp_gp_num(&v, "hline", 1);
    xp_rp_gp_str(&v, "hlabel", "no change");
    xp_rp_gp_str(&v, "btitle", "ratio (red: slower, green: faster)");
    xp_rp_gp_num(&v, "logy", 1); /* ratios: twice as slow as far from 1 as twice as fast */
    rc = xp_rp_draw_panels(r, s, "bars", rows, "time ratio (this run / the other, log scale)",
                           &v, err);
    tb_buf_free(&v);
    return rc;
}
