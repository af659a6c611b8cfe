/*
 * sec_serve: grammars as a serving engine uses them (issue 26).  Soak
 * (drv_soak.c): a long document through one matcher, time per token and
 * resident memory drawn against the position (position.gp), one line a
 * case, so that a figure that grows with the position climbs; the table
 * gives the first and last MiB side by side and the case's peak.  Serve
 * (drv_serve.c): masks of many sequences computed together over T
 * threads, a table with the machine that did it, since masks per second
 * mean nothing without its cores.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../drivers/suite.h"
#include "report.h"

/* One soak figure at the first or last position the case recorded (its
 * bytes: the end of the MiB fed), NAN when it has none. */
static double soak_at(report_t *r, int64_t id, const char *metric, int last)
{
    sqlite3_stmt *st = xp_rp_figure_query(
        r, last ? "SELECT value FROM measurements WHERE case_id = ?1 AND metric = ?2"
                  " ORDER BY bytes DESC, rep LIMIT 1"
                : "SELECT value FROM measurements WHERE case_id = ?1 AND metric = ?2"
                  " ORDER BY bytes, rep LIMIT 1", id);
    if (!st)
        return NAN;
    sqlite3_bind_text(st, 2, metric, -1, SQLITE_STATIC);
    return xp_rp_first_number(st);
}

/* Option `key` of a case's options text, or dflt (the driver's default)
 * when the case leaves it out. */
static void case_option(const char *options, const char *key, const char *dflt, char *buf,
                        size_t n)
{
    xp_row_t row = {.options = (char *)options};
    if (!xp_row_option(&row, key, buf, n))
        snprintf(buf, n, "%s", dflt);
}

/* One table row per case of the run that `sql` selects (CASES_IF);
 * the note when there are rows, "Not measured" naming the experiment
 * when there are none. */
static int case_rows(report_t *r, section_t *s, const char *sql, const char *experiment,
                     int (*row)(report_t *, section_t *, sqlite3_stmt *, tb_err_t *),
                     const char *note, tb_err_t *err)
{
    sqlite3_stmt *c;
    if (xp_rp_run_query(r, sql, &c, err))
        return -1;
    int rc = 0;
    while (!rc && sqlite3_step(c) == SQLITE_ROW)
        rc = row(r, s, c, err);
    sqlite3_finalize(c);
    if (!rc && !xp_rp_tab_rows(&s->tab))
        snprintf(s->note, sizeof s->note, "Not measured: the run has no %s case.", experiment);
    else if (!rc)
        snprintf(s->note, sizeof s->note, "%s", note);
    return rc;
}

/* What a soak case's document is (its depth option), into doc. */
static void soak_doc(sqlite3_stmt *c, char *doc, size_t n)
{
    char depth[32];
    case_option(xp_rp_col(c, 6), "depth", "0", depth, sizeof depth);
    if (strcmp(depth, "0"))
        snprintf(doc, n, "objects %s deep", depth);
    else
        snprintf(doc, n, "flat objects");
}

static int soak_case(report_t *r, section_t *s, sqlite3_stmt *c, tb_err_t *err)
{
    int64_t id = sqlite3_column_int64(c, 0);
    char label[300], doc[64], why[200];
    snprintf(label, sizeof label, "%s %s", xp_rp_col(c, 1), xp_rp_col(c, 3));
    soak_doc(c, doc, sizeof doc);
    double fed = soak_at(r, id, "soak_ns_tok", 1);
    if (strcmp(xp_rp_col(c, 4), "ok")) {
        xp_rp_failed_text(c, why, sizeof why);
        return xp_rp_tab_row(&s->tab, err, label, doc, NOT_MEASURED, why, "", "", "", "", "",
                             "");
    }
    if (isnan(fed))
        return xp_rp_tab_row(&s->tab, err, label, doc, NOT_MEASURED, "", "", "", "", "", "",
                             "");
    /* the position is the bytes column, the figure of the last row */
    sqlite3_stmt *st = xp_rp_figure_query(r, "SELECT max(bytes) FROM measurements WHERE"
                                          " case_id = ?1", id);
    double mib = st ? xp_rp_first_number(st) / (1 << 20) : NAN;
    char cells[8][64];
    xp_rp_fmt(cells[0], sizeof cells[0], "%.1f", mib);
    xp_rp_fmt(cells[1], sizeof cells[1], "%.0f", soak_at(r, id, "soak_ns_tok", 0));
    xp_rp_fmt(cells[2], sizeof cells[2], "%.0f", fed);
    xp_rp_fmt(cells[3], sizeof cells[3], "%.1f", soak_at(r, id, "soak_rss_kb", 0) / 1024);
    xp_rp_fmt(cells[4], sizeof cells[4], "%.1f", soak_at(r, id, "soak_rss_kb", 1) / 1024);
    xp_rp_fmt(cells[5], sizeof cells[5], "%.1f", soak_at(r, id, "soak_peak_rss_kb", 1) / 1024);
    xp_rp_fmt(cells[6], sizeof cells[6], "%.0f", soak_at(r, id, "soak_states", 0));
    xp_rp_fmt(cells[7], sizeof cells[7], "%.0f", soak_at(r, id, "soak_states", 1));
    return xp_rp_tab_row(&s->tab, err, label, doc, cells[0], cells[1], cells[2], cells[3],
                         cells[4], cells[5], cells[6], cells[7]);
}

/* One soak case's `metric` (over scale) against the position in MiB, as a
 * block of position.gp's data, its range into lo..hi; 1 if it has rows. */
static int soak_block(report_t *r, FILE *f, sqlite3_stmt *c, const char *metric, double scale,
                      double *lo, double *hi)
{
    sqlite3_stmt *st = xp_rp_figure_query(r, "SELECT bytes, value FROM measurements WHERE"
                                          " case_id = ?1 AND metric = ?2 ORDER BY bytes, rep",
                                          sqlite3_column_int64(c, 0));
    if (!st)
        return 0;
    sqlite3_bind_text(st, 2, metric, -1, SQLITE_STATIC);
    int rows = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (!rows++) {
            char doc[64], title[400], q[400];
            const char *pattern = xp_rp_col(c, 3), *slash = strrchr(pattern, '/');
            soak_doc(c, doc, sizeof doc);
            snprintf(title, sizeof title, "%s %s, %s", xp_rp_col(c, 1),
                     slash ? slash + 1 : pattern, doc);
            xp_rp_dat_label(q, sizeof q, title);
            fprintf(f, "\"%s\"\n", q);
        }
        double v = sqlite3_column_double(st, 1) / scale;
        fprintf(f, "%.6g", sqlite3_column_double(st, 0) / (1 << 20));
        xp_rp_dat_num(f, v);
        fprintf(f, "\n");
        *lo = fmin(*lo, v);
        *hi = fmax(*hi, v);
    }
    sqlite3_finalize(st);
    if (rows)
        fprintf(f, "\n\n");
    return rows > 0;
}

/* Section s's plot: `metric` of every soak case that finished against
 * the position; nothing drawn (and nothing left of an earlier report's)
 * when no case has it. */
static int soak_plot(report_t *r, section_t *s, const char *metric, double scale,
                     const char *ylab, int *nseries, tb_err_t *err)
{
    sqlite3_stmt *c;
    FILE *f = xp_rp_open_run_query(r, CASES_IF("soak", " AND status = 'ok'"), s->name, &c,
                                   err);
    if (!f)
        return -1;
    double lo = INFINITY, hi = 0;
    *nseries = 0;
    while (sqlite3_step(c) == SQLITE_ROW)
        *nseries += soak_block(r, f, c, metric, scale, &lo, &hi);
    sqlite3_finalize(c);
    if (xp_rp_close_out(r, f, s->name, err))
        return -1;
    if (!*nseries) {
        xp_rp_remove_plot(r, s);
        return 0;
    }
    int logy = xp_rp_spread(lo, hi);
    char label[160];
    snprintf(label, sizeof label, "%s%s", ylab, logy ? " (log scale)" : "");
    tb_buf_t v = {0};
    xp_rp_gp_str(&v, "xlab", "position in the document (MiB fed)");
    xp_rp_gp_num(&v, "nseries", *nseries);
    xp_rp_gp_num(&v, "logy", logy);
    int rc = xp_rp_draw_panels(r, s, "position", *nseries, label, &v, err);
    tb_buf_free(&v);
    return rc;
}

int xp_rp_sec_soak(report_t *r, tb_err_t *err)
{
    section_t *s = xp_rp_new_section(r, "soak", "Does a grammar's matcher slow down over a "
                                     "very long document?");
    xp_rp_caption(r, s, "soak cases: wall clock per MiB fed; resident memory (VmRSS) and "
                  "peak (VmHWM) less the case's start; grammar states");
    xp_rp_tab_init(&s->tab, 10, "case", "document", "MiB fed", "ns/token, first MiB",
                   "ns/token, last MiB", "RSS MiB, first", "RSS MiB, last", "RSS MiB, peak",
                   "states, first", "states, last");
    xp_rp_tab_code(&s->tab, 0);
    int nseries;
    if (soak_plot(r, s, "soak_ns_tok", 1, "nanoseconds per token, each MiB", &nseries, err))
        return -1;
    return case_rows(r, s, CASES_IF("soak", ""), "soak", soak_case,
                     "A generated JSON array that the grammar accepts, made, encoded and "
                     "fed a MiB at a time to one matcher that keeps its whole history, as a "
                     "decoding loop that never stops would; only the grammar's states can "
                     "grow.  First and last MiB: the figures after the first and the last "
                     "piece; equal figures mean the matcher holds its speed and memory.", err);
}

int xp_rp_sec_soak_memory(report_t *r, tb_err_t *err)
{
    section_t *s = xp_rp_new_section(r, "soak_memory", "Does a grammar's matcher grow over a "
                                     "very long document?");
    xp_rp_caption(r, s, "soak cases: resident memory (VmRSS) after each MiB fed, less the "
                  "resident memory before the case");
    int nseries;
    if (soak_plot(r, s, "soak_rss_kb", 1024, "resident memory (MiB)", &nseries, err))
        return -1;
    if (!nseries)
        return xp_rp_not_measured(r, s, "the run has no soak case that finished.");
    snprintf(s->note, sizeof s->note, "The case's memory: its tokenizer, its grammar with "
             "the states it made, and the matcher; a line that stays flat after the first "
             "MiB is memory that does not grow with the document's length.");
    return 0;
}

static int serve_case(report_t *r, section_t *s, sqlite3_stmt *c, tb_err_t *err)
{
    int64_t id = sqlite3_column_int64(c, 0);
    char label[300], t[32], b[32], why[200], cells[4][64];
    snprintf(label, sizeof label, "%s %s", xp_rp_col(c, 1), xp_rp_col(c, 3));
    /* drv_serve.c's defaults */
    case_option(xp_rp_col(c, 6), "threads", "1", t, sizeof t);
    case_option(xp_rp_col(c, 6), "batch", "16", b, sizeof b);
    if (strcmp(xp_rp_col(c, 4), "ok")) {
        xp_rp_failed_text(c, why, sizeof why);
        return xp_rp_tab_row(&s->tab, err, label, t, b, NOT_MEASURED, why, "", "");
    }
    xp_rp_fmt(cells[0], sizeof cells[0], "%.0f",
              xp_rp_stat_median(r, id, "wallclock", "tokbench", "serve_masks_s"));
    xp_rp_fmt(cells[1], sizeof cells[1], "%.1f",
              xp_rp_stat_median(r, id, "wallclock", "tokbench", "serve_batch_p50_us"));
    xp_rp_fmt(cells[2], sizeof cells[2], "%.1f",
              xp_rp_stat_median(r, id, "wallclock", "tokbench", "serve_batch_p99_us"));
    xp_rp_fmt(cells[3], sizeof cells[3], "%.1f",
              xp_rp_stat_median(r, id, "wallclock", "tokbench", "serve_peak_rss_kb") / 1024);
    return xp_rp_tab_row(&s->tab, err, label, t, b, cells[0], cells[1], cells[2], cells[3]);
}

int xp_rp_sec_serve(report_t *r, tb_err_t *err)
{
    section_t *s = xp_rp_new_section(r, "serve", "How many masks a second does a batch of "
                                     "sequences get, on how many threads?");
    s->table_only = 1;
    char sources[400];
    snprintf(sources, sizeof sources, "serve cases on %d cores%s%s: wall clock of each "
             "round's gr_masks_batch call; peak resident memory (VmHWM)", r->info.cores,
             *r->info.virt ? ", " : "", r->info.virt);
    xp_rp_caption(r, s, sources);
    xp_rp_tab_init(&s->tab, 7, "case", "threads T", "batch B", "masks/s",
                   "batch p50 us", "batch p99 us", "peak RSS MiB");
    xp_rp_tab_code(&s->tab, 0);
    return case_rows(r, s, CASES_IF("serve", ""), "serve", serve_case,
                     "MaskBench instances replayed as B concurrent sequences on schemas "
                     "compiled once and shared; a round computes every sequence's mask at "
                     "once over T threads, as an engine does between two forward passes.  "
                     "The grammars' tables are filled by an untimed replay first: these are "
                     "a warm engine's figures.  Masks/s: masks over the rounds' time; "
                     "p50/p99: one round's latency.", err);
}
