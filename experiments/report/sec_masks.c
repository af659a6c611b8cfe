/*
 * sec_masks: time per mask against vocabulary size (lines.gp), and the
 * walks under the lexer and grammars with the lexer issue's targets
 * (lexer.gp).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

typedef struct {
    char series[96];
    double tokens, median, min, max;
} point_t;

static int point_cmp(const void *a, const void *b)
{
    const point_t *x = a, *y = b;
    int c = strcmp(x->series, y->series);
    return c ? c : (x->tokens > y->tokens) - (x->tokens < y->tokens);
}

int xp_rp_sec_mask_time(report_t *r, tb_err_t *err)
{
    section_t *s = xp_rp_new_section(r, "mask_time", "Time per mask against vocabulary size");
    xp_rp_tab_init(&s->tab, 5, "case", "vocabulary size (ids)", "time per mask (us, median)",
                   "min..max", "nodes visited");
    sqlite3_stmt *st;
    if (xp_rp_run_query(r, WALK_CASES, &st, err))
        return -1;
    TB_VEC(point_t) pts = {0};
    int rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        char label[200], tok[32], med[32], range[64], nodes[32], why[200];
        xp_rp_case_label(st, label, sizeof label);
        stat_t ns;
        int ok = !strcmp(xp_rp_col(st, 4), "ok");
        int have = ok && xp_rp_get_stat(r, sqlite3_column_int64(st, 0), "tsc", "tokbench", "ns", &ns);
        double tokens = xp_rp_vocab_size(r, xp_rp_col(st, 1)); /* known from other walks too */
        xp_rp_fmt(tok, sizeof tok, "%.0f", tokens);
        if (!ok) {
            xp_rp_failed_text(st, why, sizeof why);
            rc = xp_rp_tab_row(&s->tab, err, label, tok, NOT_MEASURED, why, "");
            continue;
        }
        if (!have) {
            rc = xp_rp_tab_row(&s->tab, err, label, tok, NOT_MEASURED, "", "");
            continue;
        }
        xp_rp_fmt(med, sizeof med, "%.1f", ns.median / 1e3);
        snprintf(range, sizeof range, "%.1f..%.1f", ns.min / 1e3, ns.max / 1e3);
        xp_rp_fmt(nodes, sizeof nodes, "%.0f", ns.nodes);
        rc = xp_rp_tab_row(&s->tab, err, label, isfinite(tokens) ? tok :
                           "not measured (no walk recorded the vocabulary's size)", med, range,
                           nodes);
        if (!rc && isfinite(tokens)) {
            point_t p = {.tokens = tokens, .median = ns.median / 1e3,
                         .min = ns.min / 1e3, .max = ns.max / 1e3};
            snprintf(p.series, sizeof p.series, "%s %s", xp_rp_col(st, 2), xp_rp_col(st, 3));
            if (tb_vec_push(&pts, p))
                rc = tb_fail(err, "out of memory");
        }
    }
    sqlite3_finalize(st);
    if (rc) {
        free(pts.data);
        return -1;
    }
    xp_rp_caption(r, s, "time: TSC, converted with the measured TSC frequency");
    int synth = xp_rp_synth_walks(r);
    char synthnote[160] = "";
    if (synth)
        snprintf(s->note, sizeof s->note, "Synthetic vocabularies (synth-*: distinct "
                 "substrings of the multi corpus, up to a million tokens; data/manifest "
                 "kind synth-vocab): %d walk%s measured.", synth, synth == 1 ? "" : "s");
    else {
        snprintf(synthnote, sizeof synthnote,
                 "synthetic vocabularies (up to 1M tokens): " NOT_MEASURED);
        snprintf(s->note, sizeof s->note, "Synthetic vocabularies (up to a million "
                 "tokens): " NOT_MEASURED ", the run has none.");
    }
    snprintf(s->note + strlen(s->note), sizeof s->note - strlen(s->note),
             "  Vocabulary size is the number of ids the walk driver loaded "
             "(specials included); a case that failed (a layout that cannot hold "
             "the vocabulary) is in the table with its reason, not on the plot.");
    if (!pts.len) {
        xp_rp_not_measured(r, s, "the run has no timed walk of a vocabulary of known size.");
        free(pts.data);
        return 0;
    }
    qsort(pts.data, pts.len, sizeof *pts.data, point_cmp);
    FILE *f = xp_rp_open_out(r, s->name, ".dat", err);
    if (!f) {
        free(pts.data);
        return -1;
    }
    int nseries = 0;
    for (size_t i = 0; i < pts.len; i++) {
        if (!i || strcmp(pts.data[i].series, pts.data[i - 1].series)) {
            char q[200];
            xp_rp_dat_label(q, sizeof q, pts.data[i].series);
            fprintf(f, "%s\"%s\"\n", i ? "\n\n" : "", q);
            nseries++;
        }
        fprintf(f, "%.0f %.6g %.6g %.6g\n", pts.data[i].tokens, pts.data[i].median,
                pts.data[i].min, pts.data[i].max);
    }
    free(pts.data);
    if (xp_rp_close_out(r, f, s->name, err))
        return -1;
    tb_buf_t v = {0};
    xp_rp_gp_num(&v, "nseries", nseries);
    xp_rp_gp_str(&v, "xlab", "vocabulary size (ids, log scale)");
    xp_rp_gp_str(&v, "synthnote", synthnote);
    rc = xp_rp_draw(r, s, "lines", "time per mask (microseconds, log scale)", &v, err);
    tb_buf_free(&v);
    return rc;
}

const lexer_target_t xp_rp_lexer_targets[] = {
    /* an unconstrained JSON-string body: most of the trie is visited,
     * unless the slicer takes the string's slices whole */
    {"llama3", "dfs", "re:[^\"\\\\\\x00-\\x1f]*\"", 600, 2.2, 25},
    /* a narrow regex */
    {"llama3", "dfs", "re:[0-9]+", 3, NAN, NAN},
};
const size_t xp_rp_nlexer_targets = sizeof xp_rp_lexer_targets / sizeof *xp_rp_lexer_targets;

/* The target of a walk or slice case (columns of CASES_IF); a slice
 * case's pattern may leave out the "re:". */
const lexer_target_t *xp_rp_lexer_target(sqlite3_stmt *c)
{
    const char *pattern = xp_rp_col(c, 3);
    for (size_t i = 0; i < xp_rp_nlexer_targets; i++) {
        const lexer_target_t *t = &xp_rp_lexer_targets[i];
        if (!strcmp(xp_rp_col(c, 1), t->vocab) && !strcmp(xp_rp_col(c, 2), t->layout) &&
            (!strcmp(pattern, t->pattern) ||
             (strncmp(pattern, "re:", 3) && !strcmp(pattern, t->pattern + 3))))
            return t;
    }
    return NULL;
}

/* Appends to buf "at most 600 us per mask: met" and the like, one for
 * each figure the target sets; without the verdict where the figure is
 * NAN (the list of targets in the note). */
static void target_text(const lexer_target_t *t, double us, double per_node, char *buf,
                        size_t n)
{
    const double goal[2] = {t->us_per_mask, t->ns_per_node}, got[2] = {us, per_node};
    static const char *const unit[2] = {"us per mask", "ns per node"};
    for (int k = 0, first = 1; k < 2; k++) {
        size_t used = strlen(buf);
        if (!isfinite(goal[k]) || used + 1 >= n)
            continue;
        const char *verdict = !isfinite(got[k]) ? "" : got[k] <= goal[k] ? ": met" :
                              ": missed";
        snprintf(buf + used, n - used, "%sat most %g %s%s", first ? "" : "; ", goal[k],
                 unit[k], verdict);
        first = 0;
    }
}

/* A bar's colour: against its target where it has one. */
static int target_colour(double v, double target)
{
    return !isfinite(target) ? COLOUR_MAIN : v <= target ? COLOUR_GOOD : COLOUR_BAD;
}

/* One walk's line of lexer.gp's data: label, time per mask median min
 * max (us), the same per node (ns), the two targets ('?': none), the two
 * bars' colours.  A lex: spec or a g: grammar is labelled by its file name
 * alone: the folder would crowd the axis. */
static void lexer_dat_line(FILE *f, sqlite3_stmt *walk, const stat_t *ns,
                           const lexer_target_t *t)
{
    char label[200], q[200];
    const char *pattern = xp_rp_col(walk, 3), *slash = strrchr(pattern, '/');
    /* after=TEXT as "@TEXT": the text is what tells such bars apart */
    const char *opt = xp_rp_col(walk, 6);
    int after = !strncmp(opt, "after=", 6);
    if ((!strncmp(pattern, "lex:", 4) || !strncmp(pattern, "g:", 2)) && slash)
        snprintf(label, sizeof label, "%s %s %.*s%s%s%s", xp_rp_col(walk, 1), xp_rp_col(walk, 2),
                 (int)strcspn(pattern, ":") + 1, pattern, slash + 1,
                 *opt ? (after ? " @" : " ") : "", after ? opt + 6 : opt);
    else
        xp_rp_case_label(walk, label, sizeof label);
    double us = ns->median / 1e3, per_node = ns->median / ns->nodes;
    double goal_us = t ? t->us_per_mask : NAN, goal_node = t ? t->ns_per_node : NAN;
    xp_rp_dat_label(q, sizeof q, label);
    fprintf(f, "\"%s\" %.6g %.6g %.6g %.6g %.6g %.6g", q, us, ns->min / 1e3, ns->max / 1e3,
            per_node, ns->min / ns->nodes, ns->max / ns->nodes);
    xp_rp_dat_num(f, goal_us);
    xp_rp_dat_num(f, goal_node);
    fprintf(f, " 0x%06x 0x%06x\n", target_colour(us, goal_us),
            target_colour(per_node, goal_node));
}

/* The note under the plot: every target, and where it comes from. */
static void lexer_note(report_t *r, section_t *s)
{
    snprintf(s->note, sizeof s->note, "Targets of the issue \"The lexer and token "
             "masks\" (red marks; a green bar meets its target, a red one misses it), "
             "for a mask from the start state on its development machine (2.0 GHz TSC; "
             "this run's ticks at %.3f GHz):", r->info.tsc_hz / 1e9);
    for (size_t i = 0; i < xp_rp_nlexer_targets; i++) {
        const lexer_target_t *t = &xp_rp_lexer_targets[i];
        size_t used = strlen(s->note);
        snprintf(s->note + used, sizeof s->note - used, " %s %s %s: ", t->vocab, t->layout,
                 t->pattern);
        target_text(t, NAN, NAN, s->note, sizeof s->note);
        used = strlen(s->note);
        snprintf(s->note + used, sizeof s->note - used, ".");
    }
}

/* The walks under the lexer: re:REGEX, lex:SPEC for several lexemes, and
 * g:GRAMMAR (the lexer driven by a parser). */
#define LEXER_CASES                                                           \
    WALK_CASES_IF(" AND (substr(pattern, 1, 3) = 're:' OR"                    \
                  " substr(pattern, 1, 4) = 'lex:' OR substr(pattern, 1, 2) = 'g:')")

int xp_rp_sec_lexer(report_t *r, tb_err_t *err)
{
    section_t *s = xp_rp_new_section(r, "lexer_masks", "Lexer and grammar masks: time per mask and per node");
    xp_rp_tab_init(&s->tab, 6, "case", "time per mask (us, median)", "min..max", "nodes visited",
                   "ns per node (median)", "target of the issue");
    sqlite3_stmt *st;
    FILE *f = xp_rp_open_run_query(r, LEXER_CASES, s->name, &st, err);
    if (!f)
        return -1;
    int rows = 0, cases = 0, rc = 0;
    double lo = INFINITY, hi = 0, lo_node = INFINITY, hi_node = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        char label[200], med[32], range[64], nodes[32], per[32], goal[200];
        xp_rp_case_label(st, label, sizeof label);
        cases++;
        stat_t ns;
        if (strcmp(xp_rp_col(st, 4), "ok")) {
            xp_rp_failed_text(st, goal, sizeof goal);
            rc = xp_rp_tab_row(&s->tab, err, label, NOT_MEASURED, goal, "", "", "");
            continue;
        }
        if (!xp_rp_get_stat(r, sqlite3_column_int64(st, 0), "tsc", "tokbench", "ns", &ns) ||
            ns.nodes <= 0) {
            rc = xp_rp_tab_row(&s->tab, err, label, NOT_MEASURED, "", "", "", "");
            continue;
        }
        const lexer_target_t *t = xp_rp_lexer_target(st);
        double us = ns.median / 1e3, per_node = ns.median / ns.nodes;
        xp_rp_fmt(med, sizeof med, "%.1f", us);
        snprintf(range, sizeof range, "%.1f..%.1f", ns.min / 1e3, ns.max / 1e3);
        xp_rp_fmt(nodes, sizeof nodes, "%.0f", ns.nodes);
        xp_rp_fmt(per, sizeof per, "%.2f", per_node);
        snprintf(goal, sizeof goal, "%s", t ? "" : "none");
        if (t)
            target_text(t, us, per_node, goal, sizeof goal);
        rc = xp_rp_tab_row(&s->tab, err, label, med, range, nodes, per, goal);
        lexer_dat_line(f, st, &ns, t);
        rows++;
        lo = fmin(lo, us);
        hi = fmax(hi, us);
        lo_node = fmin(lo_node, per_node);
        hi_node = fmax(hi_node, per_node);
    }
    sqlite3_finalize(st);
    if (xp_rp_close_out(r, f, s->name, err) || rc)
        return -1;
    xp_rp_caption(r, s, "time: TSC median of the repetitions, one mask from the lexer's start "
                  "state each; per node: over the nodes that mask visited");
    if (!rows)
        return xp_rp_not_measured(r, s, "the run has no%s walk under the lexer (pattern re:REGEX "
                                  "or lex:SPEC).", cases ? " timed" : "");
    lexer_note(r, s);
    tb_buf_t v = {0};
    xp_rp_gp_num(&v, "logy", xp_rp_spread(lo, hi));
    xp_rp_gp_num(&v, "logy2", xp_rp_spread(lo_node, hi_node));
    xp_rp_gp_str(&v, "ylab2", xp_rp_spread(lo_node, hi_node) ?
                 "nanoseconds per visited node (log scale)" : "nanoseconds per visited node");
    rc = xp_rp_draw(r, s, "lexer", xp_rp_spread(lo, hi) ? "time per mask (microseconds, log scale)" :
                    "time per mask (microseconds)", &v, err);
    tb_buf_free(&v);
    return rc;
}
