/*
 * sec_tokenize: tokenizer throughput, tokbench's beside the reference
 * programs measured in the same run and the published encode speeds of
 * other machines (anchors), one group per vocabulary and corpus
 * (grouped.gp).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* Groups (vocabulary and corpus) by series: tokbench and every reference
 * measured, then one mark column per published figure. */
typedef struct {
    names_t groups, series, marks;
    grid_t mbps, published;
} tput_grid_t;

static void put(names_t *names, grid_t v, int group, const char *name, double value)
{
    int k = xp_rp_name_index(names, name);
    if (group >= 0 && k >= 0)
        v[group][k] = value;
}

/* The published encode speeds of the group's vocabulary, as marks. */
static void published_marks(report_t *r, sqlite3_stmt *c, int group, tput_grid_t *g)
{
    sqlite3_stmt *st;
    if (xp_db_prepare(r->db, "SELECT subject, value FROM anchors WHERE"
                             " figure = 'encode_mb_s' AND vocabulary = ? ORDER BY subject",
                      &st, NULL))
        return;
    sqlite3_bind_text(st, 1, xp_rp_col(c, 1), -1, SQLITE_TRANSIENT);
    while (sqlite3_step(st) == SQLITE_ROW) {
        char name[64];
        snprintf(name, sizeof name, "%.40s, published", xp_rp_col(st, 0));
        put(&g->marks, g->published, group, name, sqlite3_column_double(st, 1));
    }
    sqlite3_finalize(st);
}

/* One reference's row of the table and its bar; MB/s from its wall time. */
static int reference_row(section_t *s, const char *label, const stat_t *tb,
                         sqlite3_stmt *refs, int group, tput_grid_t *g, tb_err_t *err)
{
    double bytes = sqlite3_column_double(refs, 4);
    double med = bytes * 1e3 / sqlite3_column_double(refs, 1);
    double fast = bytes * 1e3 / sqlite3_column_double(refs, 2);
    double slow = bytes * 1e3 / sqlite3_column_double(refs, 3);
    double own = tb->bytes * 1e3 / tb->median;
    /* the band: slowest tokbench over fastest reference, and back */
    double lo = tb->bytes * 1e3 / tb->max / fast, hi = tb->bytes * 1e3 / tb->min / slow;
    char rm[64], sp[80];
    snprintf(rm, sizeof rm, "%.2f (%.2f..%.2f)", med, slow, fast);
    snprintf(sp, sizeof sp, "%.2f (%.2f..%.2f)", own / med, lo, hi);
    put(&g->series, g->mbps, group, xp_rp_col(refs, 0), med);
    return xp_rp_tab_row(&s->tab, err, label, "", xp_rp_col(refs, 0), rm, sp);
}

/* One tokenize case: tokbench's row, then each reference's. */
static int tput_case(report_t *r, section_t *s, sqlite3_stmt *st, sqlite3_stmt *refs,
                     tput_grid_t *g, int *rows, tb_err_t *err)
{
    char label[200], mbps[64], why[200];
    snprintf(label, sizeof label, "%s %s", xp_rp_col(st, 1), xp_rp_col(st, 2));
    int64_t id = sqlite3_column_int64(st, 0);
    stat_t tb;
    if (strcmp(xp_rp_col(st, 4), "ok")) {
        xp_rp_failed_text(st, why, sizeof why);
        return xp_rp_tab_row(&s->tab, err, label, NOT_MEASURED, why, "", "");
    }
    if (!xp_rp_get_stat(r, id, "tsc", "tokbench", "ns", &tb) || tb.bytes <= 0 || tb.min <= 0)
        return xp_rp_tab_row(&s->tab, err, label, NOT_MEASURED, "", "", "");
    double own = tb.bytes * 1e3 / tb.median;
    snprintf(mbps, sizeof mbps, "%.2f (%.2f..%.2f)", own, tb.bytes * 1e3 / tb.max,
             tb.bytes * 1e3 / tb.min);
    int group = xp_rp_name_index(&g->groups, label);
    put(&g->series, g->mbps, group, "tokbench", own);
    published_marks(r, st, group, g);
    (*rows)++;
    if (xp_rp_tab_row(&s->tab, err, label, mbps, "", "", ""))
        return -1;
    sqlite3_reset(refs);
    sqlite3_bind_int64(refs, 1, id);
    int rc = 0, nref = 0;
    while (!rc && sqlite3_step(refs) == SQLITE_ROW) {
        rc = reference_row(s, label, &tb, refs, group, g, err);
        nref++;
    }
    return rc || nref ? rc : xp_rp_tab_row(&s->tab, err, label, "", "no reference measured",
                                           "", "");
}

/* The grid's published columns after the measured ones, and the plot. */
static int tput_draw(report_t *r, section_t *s, tput_grid_t *g, tb_err_t *err)
{
    int nser = g->series.n;
    for (int m = 0; m < g->marks.n; m++) {
        int k = xp_rp_name_index(&g->series, g->marks.name[m]);
        for (int i = 0; k >= 0 && i < g->groups.n; i++)
            g->mbps[i][k] = g->published[i][m];
    }
    int nmarks = g->series.n - nser;
    tb_buf_t v = {0};
    xp_rp_gp_str(&v, "markcolours", "#000000 #555555 #999999");
    int rc = xp_rp_write_grid(r, s->name, "case", &g->groups, &g->series, g->mbps, err) ||
             xp_rp_draw_grid(r, s, "MB/s (higher is faster)", nser, nmarks, g->mbps,
                             g->groups.n, &v, err);
    tb_buf_free(&v);
    return rc ? -1 : 0;
}

int xp_rp_sec_throughput(report_t *r, tb_err_t *err)
{
    section_t *s = xp_rp_new_section(r, "throughput", "How fast does tokbench encode, beside "
                                     "the reference tokenizers, per vocabulary?");
    xp_rp_tab_init(&s->tab, 5, "case", "tokbench MB/s (min..max)", "reference",
                   "reference MB/s (min..max)", "speedup (min..max)");
    sqlite3_stmt *st, *refs;
    if (xp_rp_run_query(r, "SELECT id, vocabulary, corpus, '', status,"
                           " ifnull(message, '') FROM cases WHERE run_id = ? AND"
                           " experiment = 'tokenize' ORDER BY seq", &st, err))
        return -1;
    if (xp_db_prepare(r->db, "SELECT impl, median, min, max, bytes FROM metric_stats WHERE"
                             " case_id = ? AND source = 'wallclock' AND metric = 'ns' AND"
                             " bytes > 0 AND min > 0 ORDER BY impl", &refs, err)) {
        sqlite3_finalize(st);
        return -1;
    }
    tput_grid_t *g = calloc(1, sizeof *g);
    int rows = 0, rc = g ? 0 : tb_fail(err, "out of memory");
    if (g) {
        xp_rp_grid_clear(g->mbps);
        xp_rp_grid_clear(g->published);
    }
    while (!rc && sqlite3_step(st) == SQLITE_ROW)
        rc = tput_case(r, s, st, refs, g, &rows, err);
    sqlite3_finalize(st);
    sqlite3_finalize(refs);
    xp_rp_caption(r, s, "tokbench: TSC; references: wall clock as each reports it; "
                  "published: other machines (anchors)");
    if (!rc && !rows)
        xp_rp_not_measured(r, s, "the run has no timed tokenize case.");
    if (!rc && rows) {
        snprintf(s->note, sizeof s->note, "Bars: this run's MB/s, tokbench's and each "
                 "reference program's on the same bytes (a reference's time includes its "
                 "start-up as it reports it).  Black marks across a group: encode speeds "
                 "published for the same vocabulary on other machines and other text (the "
                 "table \"Published figures\" gives each source); never measured here.  "
                 "Speedup: tokbench's MB/s over the reference's.");
        rc = tput_draw(r, s, g, err);
    }
    free(g);
    return rc ? -1 : 0;
}
