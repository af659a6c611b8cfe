/*
 * sec_maskbench: the MaskBench table (mbtable.h) beside the published
 * columns, the TBM and TTFM distributions (cdf.gp), compile errors by
 * reason and every validation and invalidation error.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* The series of the distribution plots: mbtable's measured columns. */
static const struct {
    const char *impl, *tbm, *ttfm, *title;
} mb_series[] = {
    {"tokbench", "tbm_us", "ttfm_us", "tokbench, wall"},
    {"tokbench", "tbm_cpu_us", "ttfm_cpu_us", "tokbench, thread CPU time"},
    {"xgrammar", "tbm_us", "ttfm_us", "XGrammar 0.1.27, wall (its sample)"},
    {"xgrammar", "tbm_cpu_us", "ttfm_cpu_us", "XGrammar 0.1.27, process CPU time"},
    {"llguidance", "tbm_us", "ttfm_us", "llguidance 1.8.0, wall (its sample)"},
    {"llguidance", "tbm_cpu_us", "ttfm_cpu_us", "llguidance 1.8.0, thread CPU time"},
};

/* One series of cdf.gp: the share of samples slower than x at 300 points
 * evenly spaced on the log of that share, down to one sample, the slowest
 * drawn at that share. */
static void survival_block(FILE *f, const char *title, const xp_samples_t *s)
{
    char q[200];
    xp_rp_dat_label(q, sizeof q, title);
    fprintf(f, "\"%s\"\n", q);
    double lo = log10((double)s->n);
    for (int j = 0; j <= 300; j++) {
        double share = pow(10, -lo * j / 300);
        fprintf(f, "%.6g %.6g\n", xp_mb_quantile(s, j < 300 ? 1 - share : 1), share);
    }
    fprintf(f, "\n\n");
}

/* The published percentiles of `what` (TBM, TTFM) as cdf.gp marks, one
 * block per engine; p100 and the averages have no place on the axis.
 * Returns the number of blocks. */
static int published_marks(FILE *f, const xp_mb_table_t *t, const char *what)
{
    int blocks = 0;
    for (int c = XP_MB_PUBLISHED; c < t->ncols; c++) {
        char q[200];
        xp_rp_dat_label(q, sizeof q, t->head[c]);
        fprintf(f, "\"%s\"\n", q);
        for (int r = 0; r < t->nrows; r++) {
            const char *name = t->cell[r][0];
            size_t n = strlen(what);
            double p = strncmp(name, what, n) || strncmp(name + n, " p", 2) ? NAN
                       : atof(name + n + 2) / 100;
            if (isfinite(p) && p < 1 && *t->cell[r][c])
                fprintf(f, "%s %.6g\n", t->cell[r][c], 1 - p);
        }
        fprintf(f, "\n\n");
        blocks++;
    }
    return blocks;
}

/* Draws section s: the distribution of `what` (TBM or TTFM) for every
 * measured series, the published percentiles as marks. */
static int draw_survival(report_t *r, section_t *s, const xp_mb_table_t *t, const char *what,
                         tb_err_t *err)
{
    FILE *f = xp_rp_open_out(r, s->name, ".dat", err);
    if (!f)
        return -1;
    int series = 0, rc = 0;
    for (size_t i = 0; !rc && i < sizeof mb_series / sizeof *mb_series; i++) {
        xp_samples_t v;
        rc = xp_mb_samples(r->db, t->case_id, mb_series[i].impl,
                           strcmp(what, "TBM") ? mb_series[i].ttfm : mb_series[i].tbm, &v, err);
        if (!rc && v.n > 1) {
            survival_block(f, mb_series[i].title, &v);
            series++;
        }
        free(v.v);
    }
    int marks = rc ? 0 : published_marks(f, t, what);
    if (xp_rp_close_out(r, f, s->name, err) || rc)
        return -1;
    if (!series)
        return xp_rp_not_measured(r, s, "the maskbench case has no %s samples.", what);
    char xlab[96];
    snprintf(xlab, sizeof xlab, "%s (microseconds, log scale)",
             strcmp(what, "TBM") ? "time to first mask" : "time per mask");
    tb_buf_t v = {0};
    xp_rp_gp_str(&v, "xlab", xlab);
    xp_rp_gp_num(&v, "nseries", series);
    xp_rp_gp_num(&v, "nmarks", marks);
    rc = xp_rp_draw(r, s, "cdf", "share of samples slower (log scale)", &v, err);
    tb_buf_free(&v);
    return rc;
}

/* Compile errors grouped by the first words of their reason, per engine,
 * the most frequent first, with one schema of each. */
static int mb_reasons(report_t *r, const xp_mb_table_t *t, tb_err_t *err)
{
    section_t *s = xp_rp_new_section(r, "maskbench_errors", "MaskBench: compile errors by reason");
    s->table_only = 1;
    xp_rp_caption(r, s, "outcomes table, compile errors grouped by the first words of the reason");
    xp_rp_tab_init(&s->tab, 4, "engine", "reason (first words)", "schemas", "example");
    sqlite3_stmt *st;
    if (xp_db_prepare_id(r->db, "SELECT impl, detail, item FROM outcomes WHERE case_id = ?"
                                " AND outcome = 'compile error'", t->case_id, &st, err))
        return -1;
    /* a temporary table does the grouping and the order */
    int rc = xp_db_exec(r->db, "CREATE TEMP TABLE IF NOT EXISTS mb_groups(impl, grp, item,"
                        " detail); DELETE FROM mb_groups;", err);
    sqlite3_stmt *ins = NULL;
    if (!rc)
        rc = xp_db_prepare(r->db, "INSERT INTO mb_groups VALUES (?, ?, ?, ?)", &ins, err);
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        char grp[96];
        xp_mb_reason_group(xp_rp_col(st, 1), grp, sizeof grp);
        sqlite3_reset(ins);
        sqlite3_bind_text(ins, 1, xp_rp_col(st, 0), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ins, 2, grp, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ins, 3, xp_rp_col(st, 2), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ins, 4, xp_rp_col(st, 1), -1, SQLITE_TRANSIENT);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = tb_fail(err, "%s: %s", r->db->path, sqlite3_errmsg(r->db->db));
    }
    sqlite3_finalize(st);
    sqlite3_finalize(ins);
    if (!rc && !(rc = xp_db_prepare(r->db, "SELECT impl, grp, count(*), min(item) || ': ' ||"
                                    " detail FROM mb_groups GROUP BY impl, grp ORDER BY"
                                    " impl <> 'tokbench', impl, count(*) DESC, grp", &st, err))) {
        while (!rc && sqlite3_step(st) == SQLITE_ROW) {
            char example[200];
            snprintf(example, sizeof example, "%.160s%s", xp_rp_col(st, 3),
                     strlen(xp_rp_col(st, 3)) > 160 ? "..." : "");
            rc = xp_rp_tab_row(&s->tab, err, xp_rp_col(st, 0), xp_rp_col(st, 1),
                               xp_rp_col(st, 2), example);
        }
        sqlite3_finalize(st);
    }
    if (!rc && !xp_rp_tab_rows(&s->tab))
        snprintf(s->note, sizeof s->note, "No compile errors.");
    return rc;
}

/* Rows of four columns from sql (its one parameter: the case) into s's
 * table; `none` as the note when there are none. */
static int outcome_rows(report_t *r, section_t *s, const char *sql, int64_t case_id,
                        const char *none, tb_err_t *err)
{
    sqlite3_stmt *st;
    if (xp_db_prepare_id(r->db, sql, case_id, &st, err))
        return -1;
    int rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW)
        rc = xp_rp_tab_row(&s->tab, err, xp_rp_col(st, 0), xp_rp_col(st, 1), xp_rp_col(st, 2),
                           xp_rp_col(st, 3));
    sqlite3_finalize(st);
    if (!rc && !xp_rp_tab_rows(&s->tab))
        snprintf(s->note, sizeof s->note, "%s", none);
    return rc;
}

/* Every validation and invalidation error (and crash and timeout), with
 * its detail: the instance and token at fault. */
static int mb_failures(report_t *r, const xp_mb_table_t *t, tb_err_t *err)
{
    section_t *s = xp_rp_new_section(r, "maskbench_failures",
                                     "MaskBench: validation and invalidation errors, "
                                     "crashes, timeouts");
    s->table_only = 1;
    xp_rp_caption(r, s, "outcomes table; validation error: a valid instance refused (the "
                  "instance and token); invalidation error: an invalid instance accepted whole");
    xp_rp_tab_init(&s->tab, 4, "engine", "schema", "outcome", "detail");
    return outcome_rows(r, s, "SELECT impl, item, outcome, ifnull(detail, '') FROM outcomes"
                              " WHERE case_id = ? AND outcome IN ('validation error',"
                              " 'invalidation error', 'crash', 'timeout') ORDER BY"
                              " impl <> 'tokbench', impl, outcome DESC, item",
                        t->case_id, "None.", err);
}

/* A reference engine's masks against tokbench's (the driver's xgmasks=N,
 * llgmasks=N): each schema compared, its differing tokens by cause
 * (experiments/refs/xgdiff.h). */
static int mb_refmasks(report_t *r, const xp_mb_table_t *t, const char *impl,
                       const char *engine, const char *option, tb_err_t *err)
{
    char name[64], title[128], caption[400], sql[300], none[160];
    snprintf(name, sizeof name, "maskbench_%s_masks", impl);
    snprintf(title, sizeof title, "MaskBench: where do %s's masks differ from tokbench's, "
             "and why?", engine);
    snprintf(caption, sizeof caption, "outcomes table, impl '%s masks': the masks before every "
             "token of each schema's first instance, compared token by token; each differing "
             "token counted under its cause (experiments/refs/xgdiff.h)", impl);
    snprintf(sql, sizeof sql, "SELECT item, outcome, masks, ifnull(detail, '') FROM outcomes"
             " WHERE case_id = ? AND impl = '%s masks' ORDER BY outcome DESC, item", impl);
    snprintf(none, sizeof none, "Not compared in this run (the maskbench row's option %s=N "
             "compares them).", option);
    section_t *s = xp_rp_new_section(r, name, title);
    s->table_only = 1;
    xp_rp_caption(r, s, caption);
    xp_rp_tab_init(&s->tab, 4, "schema", "outcome", "masks", "differing tokens by cause");
    return outcome_rows(r, s, sql, t->case_id, none, err);
}

/* The MaskBench table (mbtable.h) under the TBM plot, the TTFM plot, the
 * compile errors by reason and the failures. */
int xp_rp_sec_maskbench(report_t *r, tb_err_t *err)
{
    section_t *s = xp_rp_new_section(r, "maskbench", "MaskBench: how fast are JSON Schema "
                                     "masks (TBM), against the published results?");
    section_t *ttfm = xp_rp_new_section(r, "maskbench_ttfm", "MaskBench: how long until the "
                                        "first mask (TTFM), against the published results?");
    xp_mb_table_t *t = malloc(sizeof *t);
    if (!t)
        return tb_fail(err, "out of memory");
    int rc = xp_mb_table(r->db, r->run, r->anchors, t, err);
    const char *how = "lines: measured here (outcomes and measurements); marks: "
                      "published percentiles, other machine";
    xp_rp_caption(r, s, how);
    xp_rp_caption(r, ttfm, how);
    if (!rc && !t->measured) {
        xp_rp_not_measured(r, s, "%s", t->why);
        xp_rp_not_measured(r, ttfm, "%s", t->why);
    }
    if (!rc && t->measured) {
        xp_rp_tab_init(&s->tab, t->ncols, t->head[0], t->head[1], t->head[2], t->head[3],
                       t->head[4], t->head[5], t->head[6], t->head[7], t->head[8]);
        for (int i = 0; !rc && i < t->nrows; i++)
            rc = xp_rp_tab_row(&s->tab, err, t->cell[i][0], t->cell[i][1], t->cell[i][2],
                               t->cell[i][3], t->cell[i][4], t->cell[i][5], t->cell[i][6],
                               t->cell[i][7], t->cell[i][8]);
        snprintf(s->note, sizeof s->note, "%s", t->note);
        rc = rc || draw_survival(r, s, t, "TBM", err) || draw_survival(r, ttfm, t, "TTFM", err) ||
             mb_reasons(r, t, err) || mb_failures(r, t, err) ||
             mb_refmasks(r, t, "xgrammar", "XGrammar", "xgmasks", err) ||
             mb_refmasks(r, t, "llguidance", "llguidance", "llgmasks", err);
    }
    free(t);
    return rc;
}
