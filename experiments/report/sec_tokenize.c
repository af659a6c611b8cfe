/*
 * sec_tokenize: tokenizer throughput, tokbench's beside the reference
 * programs measured in the same run and the published encode speeds of
 * other machines (anchors), one group per vocabulary and corpus
 * (grouped.gp).  Every engine has two figures (drv_tokenize.c): its first
 * pass over the corpus's pieces with a fresh tokenizer or state, and its
 * warm passes; the table gives both, the bars the warm ones.
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

/* "median (min..max)" MB/s of a stat, or "-" when not measured. */
static void mbps_cell(char *buf, size_t n, const stat_t *st, int ok)
{
    if (!ok || st->bytes <= 0 || st->min <= 0)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.2f (%.2f..%.2f)", st->bytes * 1e3 / st->median,
                 st->bytes * 1e3 / st->max, st->bytes * 1e3 / st->min);
}

/* tokbench's MB/s over the reference's, medians, or "-". */
static void ratio_cell(char *buf, size_t n, const stat_t *own, int own_ok,
                       const stat_t *ref, int ref_ok)
{
    if (!own_ok || !ref_ok || own->median <= 0 || ref->median <= 0 || ref->bytes <= 0)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.1fx", own->bytes / own->median / (ref->bytes / ref->median));
}

/* One engine's row: first and warm pass, and tokbench's speedup on each. */
static int engine_row(report_t *r, section_t *s, const char *label, int64_t id,
                      const char *impl, const stat_t *tb_first, int tbf_ok,
                      const stat_t *tb_warm, tb_err_t *err)
{
    int own = !strcmp(impl, "tokbench");
    stat_t first, warm;
    int f_ok = xp_rp_get_stat(r, id, "wallclock", impl, "first_ns", &first);
    int w_ok = xp_rp_get_stat(r, id, own ? "tsc" : "wallclock", impl, "ns", &warm);
    char fc[64], wc[64], fr[16], wr[16];
    mbps_cell(fc, sizeof fc, &first, f_ok);
    mbps_cell(wc, sizeof wc, &warm, w_ok);
    if (own) {
        snprintf(fr, sizeof fr, "%s", "");
        snprintf(wr, sizeof wr, "%s", "");
    } else {
        ratio_cell(fr, sizeof fr, tb_first, tbf_ok, &first, f_ok);
        ratio_cell(wr, sizeof wr, tb_warm, 1, &warm, w_ok);
    }
    return xp_rp_tab_row(&s->tab, err, label, impl, fc, wc, fr, wr);
}

/* One tokenize case: tokbench's row, then each reference's. */
static int tput_case(report_t *r, section_t *s, sqlite3_stmt *st, sqlite3_stmt *refs,
                     tput_grid_t *g, int *rows, tb_err_t *err)
{
    char label[200], why[200];
    snprintf(label, sizeof label, "%s %s", xp_rp_col(st, 1), xp_rp_col(st, 2));
    int64_t id = sqlite3_column_int64(st, 0);
    stat_t tb, tbf;
    if (strcmp(xp_rp_col(st, 4), "ok")) {
        xp_rp_failed_text(st, why, sizeof why);
        return xp_rp_tab_row(&s->tab, err, label, "", NOT_MEASURED, why, "", "");
    }
    if (!xp_rp_get_stat(r, id, "tsc", "tokbench", "ns", &tb) || tb.bytes <= 0 || tb.min <= 0)
        return xp_rp_tab_row(&s->tab, err, label, "tokbench", NOT_MEASURED, "", "", "");
    int tbf_ok = xp_rp_get_stat(r, id, "wallclock", "tokbench", "first_ns", &tbf);
    int group = xp_rp_name_index(&g->groups, label);
    put(&g->series, g->mbps, group, "tokbench", tb.bytes * 1e3 / tb.median);
    published_marks(r, st, group, g);
    (*rows)++;
    if (engine_row(r, s, label, id, "tokbench", &tbf, tbf_ok, &tb, err))
        return -1;
    sqlite3_reset(refs);
    sqlite3_bind_int64(refs, 1, id);
    int rc = 0, nref = 0;
    while (!rc && sqlite3_step(refs) == SQLITE_ROW) {
        stat_t warm;
        const char *impl = xp_rp_col(refs, 0);
        if (xp_rp_get_stat(r, id, "wallclock", impl, "ns", &warm) && warm.median > 0)
            put(&g->series, g->mbps, group, impl, warm.bytes * 1e3 / warm.median);
        rc = engine_row(r, s, label, id, impl, &tbf, tbf_ok, &tb, err);
        nref++;
    }
    return rc || nref ? rc : xp_rp_tab_row(&s->tab, err, label, "no reference measured",
                                           "", "", "", "");
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
    xp_rp_tab_init(&s->tab, 6, "case", "engine", "first pass MB/s (min..max)",
                   "warm MB/s (min..max)", "tokbench speedup, first",
                   "tokbench speedup, warm");
    sqlite3_stmt *st, *refs;
    if (xp_rp_run_query(r, "SELECT id, vocabulary, corpus, '', status,"
                           " ifnull(message, '') FROM cases WHERE run_id = ? AND"
                           " experiment = 'tokenize' ORDER BY seq", &st, err))
        return -1;
    if (xp_db_prepare(r->db, "SELECT DISTINCT impl FROM metric_stats WHERE case_id = ?"
                             " AND source = 'wallclock' AND metric IN ('ns', 'first_ns')"
                             " AND impl <> 'tokbench' AND bytes > 0 AND min > 0"
                             " ORDER BY impl", &refs, err)) {
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
    xp_rp_caption(r, s, "warm passes; tokbench: TSC; references: wall clock as each "
                  "reports it; published: other machines (anchors)");
    if (!rc && !rows)
        xp_rp_not_measured(r, s, "the run has no timed tokenize case.");
    if (!rc && rows) {
        snprintf(s->note, sizeof s->note, "Timed: every engine encodes the same pieces "
                 "of the corpus (64 KiB unless the case's piece= says otherwise, cut at "
                 "line ends), one call per piece, one after another on one pinned core.  "
                 "First pass: a tokenizer loaded afresh (tokbench: a fresh state), so "
                 "word caches start empty; load not timed (tokbench's state is).  Warm: "
                 "later passes on the same tokenizer.  In process: tokbench and "
                 "SentencePiece (libsentencepiece) in tokbench's process, Hugging Face "
                 "tokenizers and tiktoken inside node (ref.js), the calls alone; "
                 "\"spm_encode process+load\" is a whole process over the whole text.  "
                 "Bars: warm MB/s.  Black marks across a group: encode speeds "
                 "published for the same vocabulary on other machines and other text (the "
                 "table \"Published figures\" gives each source); never measured here.  "
                 "Speedup: tokbench's MB/s over the reference's.");
        rc = tput_draw(r, s, g, err);
    }
    free(g);
    return rc ? -1 : 0;
}
