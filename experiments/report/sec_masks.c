/*
 * sec_masks: time per mask against vocabulary size (lines.gp), and the
 * walks under the lexer and grammars with the lexer issue's targets
 * (grouped.gp).
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

/* The published masks' times (anchors, figure mask_us) as blocks after the
 * series, each at its vocabulary's size in this run: marks, not lines. */
static int published_masks(report_t *r, FILE *f, int *nmarks)
{
    sqlite3_stmt *st;
    if (xp_db_prepare(r->db, "SELECT subject, vocabulary, value FROM anchors WHERE"
                             " figure = 'mask_us' ORDER BY subject", &st, NULL))
        return 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        double ids = xp_rp_vocab_size(r, xp_rp_col(st, 1));
        if (!isfinite(ids))
            continue;
        char title[200], q[200];
        snprintf(title, sizeof title, "%.40s, published", xp_rp_col(st, 0));
        xp_rp_dat_label(q, sizeof q, title);
        fprintf(f, "\n\n\"%s\"\n%.0f %.6g\n", q, ids, sqlite3_column_double(st, 2));
        (*nmarks)++;
    }
    sqlite3_finalize(st);
    return 0;
}

/* mask_time.dat: one block per series (a title line, then vocabulary size,
 * median, min, max per point), then the published marks' blocks. */
static int mask_time_dat(report_t *r, section_t *s, const point_t *pts, size_t n,
                         int *nseries, int *nmarks, tb_err_t *err)
{
    FILE *f = xp_rp_open_out(r, s->name, ".dat", err);
    if (!f)
        return -1;
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && !strcmp(pts[i].series, pts[j].series); j++)
            ;
        char q[200];
        xp_rp_dat_label(q, sizeof q, pts[i].series);
        fprintf(f, "%s\"%s\"\n", (*nseries)++ ? "\n\n" : "", q);
        for (size_t k = i; k < j; k++)
            fprintf(f, "%.0f %.6g %.6g %.6g\n", pts[k].tokens, pts[k].median, pts[k].min,
                    pts[k].max);
    }
    if (*nseries)
        published_masks(r, f, nmarks);
    return xp_rp_close_out(r, f, s->name, err);
}

int xp_rp_sec_mask_time(report_t *r, tb_err_t *err)
{
    section_t *s = xp_rp_new_section(r, "mask_time", "How does the time per mask grow with "
                                     "the vocabulary, per layout and pattern?");
    xp_rp_tab_init(&s->tab, 5, "case", "vocabulary size (ids)", "time per mask (us, median)",
                   "min..max", "nodes visited");
    xp_rp_tab_code(&s->tab, 0);
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
        int have = ok && xp_rp_get_stat(r, sqlite3_column_int64(st, 0), "tsc", "tokbench", "ns",
                                        &ns);
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
        /* a line per layout and pattern from the start state (no after=) */
        if (!rc && isfinite(tokens) && !*xp_rp_col(st, 6)) {
            point_t p = {.tokens = tokens, .median = ns.median / 1e3,
                         .min = ns.min / 1e3, .max = ns.max / 1e3};
            char pat[32];
            rc = xp_rp_short_pattern(r, xp_rp_col(st, 3), pat, sizeof pat);
            snprintf(p.series, sizeof p.series, "%s %s", xp_rp_col(st, 2), pat);
            if (rc || tb_vec_push(&pts, p))
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
             "the vocabulary) is in the table with its reason, not on the plot; so are "
             "masks after a text (after=).");
    if (!pts.len) {
        xp_rp_not_measured(r, s, "the run has no timed walk of a vocabulary of known size.");
        free(pts.data);
        return 0;
    }
    qsort(pts.data, pts.len, sizeof *pts.data, point_cmp);
    int nseries = 0, nmarks = 0;
    rc = mask_time_dat(r, s, pts.data, pts.len, &nseries, &nmarks, err);
    free(pts.data);
    if (rc)
        return -1;
    if (!nseries)
        return xp_rp_not_measured(r, s, "the run has no timed walk from the start state.");
    tb_buf_t v = {0};
    xp_rp_gp_num(&v, "nseries", nseries);
    xp_rp_gp_num(&v, "nmarks", nmarks);
    xp_rp_gp_str(&v, "xlab", "vocabulary size (ids, log scale)");
    xp_rp_gp_str(&v, "synthnote", synthnote);
    /* twelve series a panel, each in a colour and mark of its own there */
    rc = xp_rp_draw_panels(r, s, "lines", nseries, "time per mask (microseconds, log scale)",
                           &v, err);
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

/* The note under the plot: every target, and where it comes from. */
static void lexer_note(report_t *r, section_t *s)
{
    snprintf(s->note, sizeof s->note, "Targets of the issue \"The lexer and token "
             "masks\" (red marks across the group; they are set for the dfs bar), for a "
             "mask from the start state on its development machine (2.0 GHz TSC; this "
             "run's ticks at %.3f GHz):", r->info.tsc_hz / 1e9);
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

/* The lexer plot's groups (vocabulary, pattern, text before the mask) by
 * layouts, and the target mark in the column after the layouts. */
typedef struct {
    names_t groups, layouts;
    grid_t us;
    double target[MAXNAMES];
} lexer_grid_t;

/* One timed walk under the lexer into the table and the grid. */
static int lexer_row(report_t *r, section_t *s, sqlite3_stmt *st, const stat_t *ns,
                     lexer_grid_t *g, tb_err_t *err)
{
    char label[200], group[96], med[32], range[64], nodes[32], per[32], goal[200];
    xp_rp_case_label(st, label, sizeof label);
    const lexer_target_t *t = xp_rp_lexer_target(st);
    double us = ns->median / 1e3, per_node = ns->median / ns->nodes;
    xp_rp_fmt(med, sizeof med, "%.1f", us);
    snprintf(range, sizeof range, "%.1f..%.1f", ns->min / 1e3, ns->max / 1e3);
    xp_rp_fmt(nodes, sizeof nodes, "%.0f", ns->nodes);
    xp_rp_fmt(per, sizeof per, "%.2f", per_node);
    snprintf(goal, sizeof goal, "%s", t ? "" : "none");
    if (t)
        target_text(t, us, per_node, goal, sizeof goal);
    if (xp_rp_tab_row(&s->tab, err, label, med, range, nodes, per, goal))
        return -1;
    if (xp_rp_group_label(r, st, group, sizeof group))
        return tb_fail(err, "out of memory");
    int gi = xp_rp_name_index(&g->groups, group);
    int li = xp_rp_name_index(&g->layouts, xp_rp_col(st, 2));
    if (gi >= 0 && li >= 0) {
        g->us[gi][li] = us;
        if (t && isfinite(t->us_per_mask))
            g->target[gi] = t->us_per_mask;
    }
    return 0;
}

/* Draws the grid: the layouts' bars, then the targets' column. */
static int lexer_draw(report_t *r, section_t *s, lexer_grid_t *g, tb_err_t *err)
{
    int nser = g->layouts.n, marks = 0;
    for (int i = 0; i < g->groups.n; i++)
        if (isfinite(g->target[i]))
            marks = 1;
    if (marks) {
        int k = xp_rp_name_index(&g->layouts, "target of the issue (dfs)");
        for (int i = 0; k >= 0 && i < g->groups.n; i++)
            g->us[i][k] = g->target[i];
    }
    tb_buf_t v = {0};
    xp_rp_gp_str(&v, "markcolours", "#cc3311");
    int rc = xp_rp_write_grid(r, s->name, "case", &g->groups, &g->layouts, g->us, err) ||
             xp_rp_draw_grid(r, s, "time per mask (microseconds)", nser, marks, g->us,
                             g->groups.n, &v, err);
    tb_buf_free(&v);
    return rc ? -1 : 0;
}

int xp_rp_sec_lexer(report_t *r, tb_err_t *err)
{
    section_t *s = xp_rp_new_section(r, "lexer_masks", "How long does a mask under a regex, "
                                     "lexer or grammar take, per layout?");
    xp_rp_tab_init(&s->tab, 6, "case", "time per mask (us, TSC median)", "min..max",
                   "nodes visited", "ns per node (median)", "target of the issue");
    xp_rp_tab_code(&s->tab, 0);
    lexer_grid_t *g = calloc(1, sizeof *g);
    if (!g)
        return tb_fail(err, "out of memory");
    xp_rp_grid_clear(g->us);
    for (int i = 0; i < MAXNAMES; i++)
        g->target[i] = NAN;
    sqlite3_stmt *st = NULL;
    int rows = 0, cases = 0, rc = xp_rp_run_query(r, LEXER_CASES, &st, err);
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        char label[200], why[200];
        xp_rp_case_label(st, label, sizeof label);
        cases++;
        stat_t ns;
        if (strcmp(xp_rp_col(st, 4), "ok")) {
            xp_rp_failed_text(st, why, sizeof why);
            rc = xp_rp_tab_row(&s->tab, err, label, NOT_MEASURED, why, "", "", "");
        } else if (!xp_rp_get_stat(r, sqlite3_column_int64(st, 0), "tsc", "tokbench", "ns",
                                   &ns) || ns.nodes <= 0) {
            rc = xp_rp_tab_row(&s->tab, err, label, NOT_MEASURED, "", "", "", "");
        } else {
            rc = lexer_row(r, s, st, &ns, g, err);
            rows++;
        }
    }
    if (st)
        sqlite3_finalize(st);
    xp_rp_caption(r, s, "time: TSC median, one mask from the start state (or after the "
                  "row's text); per node: over the nodes it visited");
    if (!rc && !rows)
        xp_rp_not_measured(r, s, "the run has no%s walk under the lexer (pattern re:REGEX, "
                           "lex:SPEC or g:GRAMMAR).", cases ? " timed" : "");
    if (!rc && rows) {
        lexer_note(r, s);
        rc = lexer_draw(r, s, g, err);
    }
    free(g);
    return rc ? -1 : 0;
}
