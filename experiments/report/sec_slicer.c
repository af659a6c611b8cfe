/*
 * sec_slicer: the slicer against the plain walk and the token index
 * against walking every step, two bars per case (pairs.gp).
 */
#include <math.h>
#include <string.h>

#include "report.h"

/* One case's line of pairs.gp's data: label (vocabulary, layout and the
 * pattern's short name), the two bars' median min max divided by `scale`,
 * the first bar's target ('?': none). */
static int pair_dat_line(report_t *r, FILE *f, sqlite3_stmt *c, const stat_t *a,
                         const stat_t *b, double scale, double target, tb_err_t *err)
{
    char pat[32], label[160], q[200];
    if (xp_rp_short_pattern(r, xp_rp_col(c, 3), pat, sizeof pat))
        return tb_fail(err, "out of memory");
    snprintf(label, sizeof label, "%s %s %s", xp_rp_col(c, 1), xp_rp_col(c, 2), pat);
    xp_rp_dat_label(q, sizeof q, label);
    fprintf(f, "\"%s\" %.6g %.6g %.6g %.6g %.6g %.6g", q, a->median / scale, a->min / scale,
            a->max / scale, b->median / scale, b->min / scale, b->max / scale);
    xp_rp_dat_num(f, target);
    fputc('\n', f);
    return 0;
}

/* Draws a section's pairs.gp plot on a log scale: the two ways differ by
 * orders of magnitude. */
static int draw_pairs(report_t *r, section_t *s, int rows, const char *ylab,
                      const char *title1, const char *title2, int targets, tb_err_t *err)
{
    tb_buf_t v = {0};
    xp_rp_gp_str(&v, "title1", title1);
    xp_rp_gp_str(&v, "title2", title2);
    xp_rp_gp_num(&v, "targets", targets);
    xp_rp_gp_num(&v, "logy", 1);
    int rc = xp_rp_draw_panels(r, s, "pairs", rows, ylab, &v, err);
    tb_buf_free(&v);
    return rc;
}

/* What a section writes for one successful case: its table row and its
 * line of data.  -1 on error, 0 when the case lacks the figures (nothing
 * written), 1 when written, 2 when written with a target. */
typedef int (*case_row_t)(report_t *r, section_t *s, sqlite3_stmt *c, FILE *f,
                          tb_err_t *err);

/* How many cases a section had, drew, and drew with a target. */
typedef struct {
    int cases, rows, targets;
} case_count_t;

/* Runs row() on every case of `sql` (columns of CASES_IF) in suite order,
 * into the section's table and NAME.dat; a failed case, or one without
 * row()'s figures, gets a "not measured" row with its status. */
static int case_rows(report_t *r, section_t *s, const char *sql, case_row_t row,
                     case_count_t *n, tb_err_t *err)
{
    sqlite3_stmt *st;
    FILE *f = xp_rp_open_run_query(r, sql, s->name, &st, err);
    if (!f)
        return -1;
    int rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        char label[200], why[200] = "";
        n->cases++;
        int done = strcmp(xp_rp_col(st, 4), "ok") ? 0 : row(r, s, st, f, err);
        if (done < 0) {
            rc = -1;
        } else if (done) {
            n->rows++;
            n->targets += done == 2;
        } else {
            xp_rp_case_label(st, label, sizeof label);
            if (strcmp(xp_rp_col(st, 4), "ok"))
                xp_rp_failed_text(st, why, sizeof why);
            rc = xp_rp_tab_row(&s->tab, err, label, NOT_MEASURED, why, "", "", "", "", "");
        }
    }
    sqlite3_finalize(st);
    return xp_rp_close_out(r, f, s->name, err) || rc ? -1 : 0;
}

/* A slice case: the sliced mask and the plain walk by wall clock, the
 * gain, the slicer's build and size, its target. */
static int slice_row(report_t *r, section_t *s, sqlite3_stmt *c, FILE *f, tb_err_t *err)
{
    int64_t id = sqlite3_column_int64(c, 0);
    stat_t sl, pl;
    if (!xp_rp_get_stat(r, id, "wallclock", "tokbench", "ns", &sl) ||
        !xp_rp_get_stat(r, id, "wallclock", "plain", "ns", &pl))
        return 0;
    char label[200], sliced[100], plain[100], gain[32], build[32], bytes[32], parts[96];
    char goal[96] = "none";
    xp_rp_case_label(c, label, sizeof label);
    xp_rp_fmt_range(sliced, sizeof sliced, "%.2f", &sl, 1e3);
    xp_rp_fmt_range(plain, sizeof plain, "%.2f", &pl, 1e3);
    xp_rp_fmt(gain, sizeof gain, "%.1f",
              xp_rp_stat_median(r, id, "static", "tokbench", "slicer_gain"));
    xp_rp_fmt(build, sizeof build, "%.2f",
              xp_rp_stat_median(r, id, "wallclock", "tokbench", "build_ns") / 1e6);
    xp_rp_fmt(bytes, sizeof bytes, "%.0f",
              xp_rp_stat_median(r, id, "static", "tokbench", "slicer_bytes"));
    snprintf(parts, sizeof parts, "%.0f / %.0f, %.0f",
             xp_rp_stat_median(r, id, "static", "tokbench", "slices_whole"),
             xp_rp_stat_median(r, id, "static", "tokbench", "slices_walked"),
             xp_rp_stat_median(r, id, "static", "tokbench", "residual_tokens"));
    const lexer_target_t *t = xp_rp_lexer_target(c);
    double target = t ? t->us_sliced : NAN;
    if (isfinite(target))
        snprintf(goal, sizeof goal, "at most %g us per mask: %s", target,
                 sl.median / 1e3 <= target ? "met" : "missed");
    if (pair_dat_line(r, f, c, &sl, &pl, 1e3, target, err))
        return -1;
    return xp_rp_tab_row(&s->tab, err, label, sliced, plain, gain, build, bytes, parts, goal) ? -1 :
           isfinite(target) ? 2 : 1;
}

/* The note under the slicer's plot: its targets, and where they come from. */
static void slicer_note(section_t *s)
{
    snprintf(s->note, sizeof s->note, "Targets of the issue \"The lexer and token masks\" "
             "for the sliced mask (red marks), on its development machine:");
    for (size_t i = 0; i < xp_rp_nlexer_targets; i++) {
        const lexer_target_t *t = &xp_rp_lexer_targets[i];
        size_t used = strlen(s->note);
        if (isfinite(t->us_sliced))
            snprintf(s->note + used, sizeof s->note - used, " %s %s %s: at most %g us per "
                     "mask.", t->vocab, t->layout, t->pattern, t->us_sliced);
    }
}

int xp_rp_sec_slicer(report_t *r, tb_err_t *err)
{
    section_t *s = xp_rp_new_section(r, "slicer", "How much faster is the sliced mask than "
                                     "the plain walk, per case?");
    xp_rp_tab_init(&s->tab, 8, "case", "sliced (us, wall clock: median (min..max))",
                   "plain walk (us, wall clock: median (min..max))",
                   "gain (plain / sliced)", "slicer build (ms)", "slicer bytes",
                   "slices whole / walked, residual tokens", "target of the issue");
    xp_rp_tab_code(&s->tab, 0);
    case_count_t n = {0};
    if (case_rows(r, s, CASES_IF("slice", ""), slice_row, &n, err))
        return -1;
    xp_rp_caption(r, s, "wall-clock medians, sliced and plain timed alternately, one mask from "
                  "the start state; gain: plain over sliced");
    if (!n.rows)
        return xp_rp_not_measured(r, s, "the run has no%s slice case.", n.cases ? " timed" : "");
    slicer_note(s);
    return draw_pairs(r, s, n.rows, "time per mask (microseconds, log scale)", "sliced mask",
                      "plain walk", n.targets > 0, err);
}

/* An index case: its size and build, the cost of a step by walking and
 * through the index, and the steps that pay for the build. */
/* A break-even figure: the driver stores -1 when the index is no faster. */
static void breakeven_text(char *out, size_t size, double be)
{
    if (isfinite(be) && be < 0)
        snprintf(out, size, "never");
    else
        xp_rp_fmt(out, size, "%.0f", be);
}

static int index_row(report_t *r, section_t *s, sqlite3_stmt *c, FILE *f, tb_err_t *err)
{
    int64_t id = sqlite3_column_int64(c, 0);
    stat_t walk, idx, sl;
    if (!xp_rp_get_stat(r, id, "wallclock", "walk", "ns_per_step", &walk) ||
        !xp_rp_get_stat(r, id, "wallclock", "index", "ns_per_step", &idx))
        return 0;
    char label[200], st[32], cl[32], states[80], by[32], per[32], bytes[80], build[32], w[100],
        x[100], slc[100], ew[32], es[32], even[80];
    xp_rp_case_label(c, label, sizeof label);
    double nst = xp_rp_stat_median(r, id, "static", "index", "states"),
           nb = xp_rp_stat_median(r, id, "static", "index", "bytes");
    xp_rp_fmt(st, sizeof st, "%.0f", nst);
    xp_rp_fmt(cl, sizeof cl, "%.0f", xp_rp_stat_median(r, id, "static", "index", "classes"));
    snprintf(states, sizeof states, "%s / %s", st, cl);
    xp_rp_fmt(by, sizeof by, "%.0f", nb);
    xp_rp_fmt(per, sizeof per, "%.0f", nst > 0 ? nb / nst : NAN);
    snprintf(bytes, sizeof bytes, "%s (%s)", by, per);
    xp_rp_fmt(build, sizeof build, "%.2f",
              xp_rp_stat_median(r, id, "wallclock", "index", "build_ns") / 1e6);
    xp_rp_fmt_range(w, sizeof w, "%.1f", &walk, 1);
    xp_rp_fmt_range(x, sizeof x, "%.1f", &idx, 1);
    if (xp_rp_get_stat(r, id, "wallclock", "slicer", "ns_per_step", &sl))
        xp_rp_fmt_range(slc, sizeof slc, "%.1f", &sl, 1);
    else
        snprintf(slc, sizeof slc, "%s", NOT_MEASURED);
    breakeven_text(ew, sizeof ew, xp_rp_stat_median(r, id, "static", "index", "breakeven_steps"));
    breakeven_text(es, sizeof es,
                   xp_rp_stat_median(r, id, "static", "index", "breakeven_slicer_steps"));
    snprintf(even, sizeof even, "%s / %s", ew, es);
    if (pair_dat_line(r, f, c, &walk, &idx, 1, NAN, err))
        return -1;
    return xp_rp_tab_row(&s->tab, err, label, states, bytes, build, w, slc, x, even) ? -1 : 1;
}

int xp_rp_sec_index(report_t *r, tb_err_t *err)
{
    section_t *s = xp_rp_new_section(r, "token_index", "When does the token index pay for "
                                     "its build, against walking every step?");
    xp_rp_tab_init(&s->tab, 8, "case", "states / token classes", "bytes (per state)",
                   "build (ms, median)",
                   "walk per step (ns, wall clock: median (min..max))",
                   "slicer per step (ns, median (min..max))",
                   "index per step (ns, median (min..max))", "break-even steps (walk / slicer)");
    xp_rp_tab_code(&s->tab, 0);
    case_count_t n = {0};
    if (case_rows(r, s, CASES_IF("index", ""), index_row, &n, err))
        return -1;
    xp_rp_caption(r, s, "wall-clock medians per step along a sample of the regex; slicer: the "
                  "default (JSON string) slices; break-even: build over the per-step saving; "
                  "never: the index is no faster");
    if (!n.rows)
        return xp_rp_not_measured(r, s, "the run has no%s index case.", n.cases ? " timed" : "");
    return draw_pairs(r, s, n.rows, "time per decoding step (nanoseconds, log scale)",
                      "walking the trie", "through the index", 0, err);
}
