/*
 * report: what every section of `tokbench report` shares: figures read
 * from the store (metric_stats), the section's table, its caption (the run
 * and the counter source) and its "not measured" note.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

const char *xp_rp_col(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return s ? (const char *)s : "";
}

/* A query for one figure, with `id` (a run's or a case's) bound to ?1;
 * NULL if it cannot be prepared, which leaves the figure "not measured". */
sqlite3_stmt *xp_rp_figure_query(report_t *r, const char *sql, int64_t id)
{
    sqlite3_stmt *st;
    return xp_db_prepare_id(r->db, sql, id, &st, NULL) ? NULL : st;
}

/* The first column of the query's first row, NAN when there is none or
 * it is NULL; finalizes the query. */
double xp_rp_first_number(sqlite3_stmt *st)
{
    double v = NAN;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Reads median, min, max, bytes, nodes from the query's first row and
 * finalizes it; 1 if there was a row with a median. */
static int stat_row(sqlite3_stmt *st, stat_t *s)
{
    int found = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL;
    if (found)
        *s = (stat_t){sqlite3_column_double(st, 0), sqlite3_column_double(st, 1),
                      sqlite3_column_double(st, 2), sqlite3_column_double(st, 3),
                      sqlite3_column_double(st, 4)};
    sqlite3_finalize(st);
    return found;
}

/* One metric of one case from metric_stats; 1 if the run has it.  impl
 * NULL: whichever impl recorded it (the first by name), for the static and
 * build figures that the lookup driver files under an external library's
 * name (darts, marisa) and under "tokbench" for tokbench's layouts. */
int xp_rp_get_stat(report_t *r, int64_t case_id, const char *source, const char *impl,
                   const char *metric, stat_t *s)
{
    sqlite3_stmt *st = xp_rp_figure_query(r, "SELECT median, min, max, bytes, nodes FROM"
                                          " metric_stats WHERE case_id = ?1 AND source = ?2 AND"
                                          " (?3 IS NULL OR impl = ?3) AND metric = ?4"
                                          " ORDER BY impl LIMIT 1", case_id);
    if (!st)
        return 0;
    sqlite3_bind_text(st, 2, source, -1, SQLITE_STATIC);
    if (impl)
        sqlite3_bind_text(st, 3, impl, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, metric, -1, SQLITE_STATIC);
    return stat_row(st, s);
}

void xp_rp_tab_init(table_t *t, int ncols, ...)
{
    va_list ap;
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    va_start(ap, ncols);
    for (int i = 0; i < ncols; i++)
        snprintf(t->head[i], sizeof t->head[i], "%s", va_arg(ap, const char *));
    va_end(ap);
}

/* Appends one row of t->ncols strings (copied). */
int xp_rp_tab_row(table_t *t, tb_err_t *err, ...)
{
    va_list ap;
    int rc = 0;
    va_start(ap, err);
    for (int i = 0; i < t->ncols; i++) {
        const char *s = va_arg(ap, const char *);
        char *copy = strdup(s ? s : "");
        if (!copy || tb_vec_push(&t->cells, copy)) {
            free(copy);
            rc = tb_fail(err, "out of memory");
            break;
        }
    }
    va_end(ap);
    return rc;
}

size_t xp_rp_tab_rows(const table_t *t)
{
    return t->ncols ? t->cells.len / (size_t)t->ncols : 0;
}

void xp_rp_tab_free(table_t *t)
{
    for (size_t i = 0; i < t->cells.len; i++)
        free(t->cells.data[i]);
    free(t->cells.data);
}

section_t *xp_rp_new_section(report_t *r, const char *name, const char *title)
{
    section_t *s = &r->sec[r->nsec++];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    snprintf(s->title, sizeof s->title, "%s", title);
    return s;
}

void xp_rp_fmt(char *buf, size_t n, const char *f, double v)
{
    if (isfinite(v))
        snprintf(buf, n, f, v);
    else
        snprintf(buf, n, "%s", NOT_MEASURED);
}

/* "median (min..max)" of a figure over `scale`, each number in format f. */
void xp_rp_fmt_range(char *buf, size_t n, const char *f, const stat_t *s, double scale)
{
    char med[32], lo[32], hi[32];
    xp_rp_fmt(med, sizeof med, f, s->median / scale);
    xp_rp_fmt(lo, sizeof lo, f, s->min / scale);
    xp_rp_fmt(hi, sizeof hi, f, s->max / scale);
    snprintf(buf, n, "%s (%s..%s)", med, lo, hi);
}

/* A label safe inside a gnuplot data file's double quotes. */
void xp_rp_dat_label(char *dst, size_t n, const char *src)
{
    size_t k = 0;
    for (; *src && k + 1 < n; src++)
        dst[k++] = *src == '"' || *src == '\\' || *src == '\n' ? '\'' : *src;
    dst[k] = 0;
}

FILE *xp_rp_open_out(report_t *r, const char *name, const char *ext, tb_err_t *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s%s", r->out, name, ext);
    FILE *f = fopen(path, "w");
    if (!f)
        tb_fail(err, "%s: cannot write: %s", path, strerror(errno));
    return f;
}

/* Prepares a query of this run: r->run bound to ?1. */
int xp_rp_run_query(report_t *r, const char *sql, sqlite3_stmt **st, tb_err_t *err)
{
    return xp_db_prepare_id(r->db, sql, r->run, st, err);
}

/* Prepares `sql` for this run (?1) and opens the section's .dat file:
 * the prologue every plotted section shares.  NULL with nothing left open
 * on failure. */
FILE *xp_rp_open_run_query(report_t *r, const char *sql, const char *name,
                           sqlite3_stmt **st, tb_err_t *err)
{
    if (xp_rp_run_query(r, sql, st, err))
        return NULL;
    FILE *f = xp_rp_open_out(r, name, ".dat", err);
    if (!f)
        sqlite3_finalize(*st);
    return f;
}

int xp_rp_close_out(report_t *r, FILE *f, const char *name, tb_err_t *err)
{
    int bad = ferror(f);
    if (fclose(f) || bad)
        return tb_fail(err, "%s/%s: write failed", r->out, name);
    return 0;
}

int xp_rp_load_run(report_t *r, int64_t id, run_info_t *ri, tb_err_t *err)
{
    sqlite3_stmt *st;
    if (xp_db_prepare_id(r->db, "SELECT status, suite, started, ifnull(ended, ''),"
                                " git_commit, git_dirty, host, cpu_model, cores, tsc_hz,"
                                " sources, compiler, kernel, virt, shard, shards, shard_key,"
                                " ifnull(note, '') FROM runs WHERE id = ?",
                         id, &st, err))
        return -1;
    int found = sqlite3_step(st) == SQLITE_ROW;
    if (found) {
        ri->id = id;
        snprintf(ri->status, sizeof ri->status, "%s", xp_rp_col(st, 0));
        snprintf(ri->suite, sizeof ri->suite, "%s", xp_rp_col(st, 1));
        snprintf(ri->started, sizeof ri->started, "%s", xp_rp_col(st, 2));
        snprintf(ri->ended, sizeof ri->ended, "%s", xp_rp_col(st, 3));
        snprintf(ri->commit, sizeof ri->commit, "%s", xp_rp_col(st, 4));
        ri->dirty = sqlite3_column_int(st, 5);
        snprintf(ri->host, sizeof ri->host, "%s", xp_rp_col(st, 6));
        snprintf(ri->cpu, sizeof ri->cpu, "%s",
                 *xp_rp_col(st, 7) ? xp_rp_col(st, 7) : "unknown CPU");
        ri->cores = sqlite3_column_int(st, 8);
        ri->tsc_hz = sqlite3_column_double(st, 9);
        snprintf(ri->sources, sizeof ri->sources, "%s", xp_rp_col(st, 10));
        snprintf(ri->compiler, sizeof ri->compiler, "%s", xp_rp_col(st, 11));
        snprintf(ri->kernel, sizeof ri->kernel, "%s", xp_rp_col(st, 12));
        snprintf(ri->virt, sizeof ri->virt, "%s", xp_rp_col(st, 13));
        int shard = sqlite3_column_int(st, 14), sharded = sqlite3_column_type(st, 14) !=
                                                           SQLITE_NULL;
        ri->joined = sharded && shard == 0;
        /* a joined run's note names its shards and the missing ones */
        if (ri->joined)
            snprintf(ri->shards, sizeof ri->shards, "%s", xp_rp_col(st, 17));
        else if (sharded)
            snprintf(ri->shards, sizeof ri->shards, "shard %d of %d (key %s): tokbench merge "
                     "joins it with the others", shard, sqlite3_column_int(st, 15),
                     xp_rp_col(st, 16));
        else
            ri->shards[0] = 0;
    }
    sqlite3_finalize(st);
    if (!found)
        return tb_fail(err, "%s: no run %lld (see tokbench runs)", r->db->path,
                       (long long)id);
    return 0;
}

/* "run 3 (complete), AMD EPYC 7V13 on host, commit 1a2b3c4d5e+dirty" */
static void run_caption(const run_info_t *ri, char *buf, size_t n)
{
    snprintf(buf, n, "run %lld (%s), %s on %s, commit %.10s%s", (long long)ri->id,
             ri->status, ri->cpu, *ri->host ? ri->host : "unknown host",
             *ri->commit ? ri->commit : "unknown", ri->dirty ? "+dirty" : "");
}

void xp_rp_caption(report_t *r, section_t *s, const char *sources)
{
    char base[700];
    run_caption(&r->info, base, sizeof base);
    snprintf(s->caption, sizeof s->caption, "%s; %s", base, sources);
}

/* vocabulary layout pattern, and the options where the row has some
 * (after=TEXT: the same pattern from another state). */
void xp_rp_case_label(sqlite3_stmt *st, char *buf, size_t n)
{
    const char *opt = xp_rp_col(st, 6);
    snprintf(buf, n, "%s %s %s%s%s", xp_rp_col(st, 1), xp_rp_col(st, 2), xp_rp_col(st, 3),
             *opt ? " " : "", opt);
}

/* Why a case has no figures: its status and message, shortened. */
void xp_rp_failed_text(sqlite3_stmt *st, char *buf, size_t n)
{
    const char *msg = xp_rp_col(st, 5);
    snprintf(buf, n, "%s: %.120s%s", xp_rp_col(st, 4), msg, strlen(msg) > 120 ? "..." : "");
}

/* The one number `sql` selects for this run (?1) and a vocabulary (?2),
 * or NAN when the run has none. */
static double run_vocab_number(report_t *r, const char *sql, const char *vocab)
{
    sqlite3_stmt *st = xp_rp_figure_query(r, sql, r->run);
    if (!st)
        return NAN;
    sqlite3_bind_text(st, 2, vocab, -1, SQLITE_STATIC);
    return xp_rp_first_number(st);
}

/* Tokens of a vocabulary: what a walk under "any" allows is every token
 * in the trie; the run has it only if it walked that vocabulary so. */
double xp_rp_vocab_tokens(report_t *r, const char *vocab)
{
    return run_vocab_number(
        r, "SELECT max(s.median) FROM metric_stats s JOIN cases c ON"
           " c.id = s.case_id WHERE c.run_id = ? AND c.experiment = 'walk' AND"
           " c.vocabulary = ? AND c.pattern = 'any' AND c.status = 'ok' AND"
           " s.metric = 'tokens_allowed'", vocab);
}

/* Ids of a vocabulary, as its walks record them (metric vocab_size,
 * whatever the pattern); runs from before that metric fall back to
 * vocab_tokens.  NAN when the run has neither. */
double xp_rp_vocab_size(report_t *r, const char *vocab)
{
    double size = run_vocab_number(
        r, "SELECT max(s.median) FROM metric_stats s JOIN cases c ON"
           " c.id = s.case_id WHERE c.run_id = ? AND c.experiment = 'walk' AND"
           " c.vocabulary = ? AND c.status = 'ok' AND s.source = 'static' AND"
           " s.metric = 'vocab_size'", vocab);
    return isfinite(size) ? size : xp_rp_vocab_tokens(r, vocab);
}

/* How many walk cases of the run measured a synthetic vocabulary
 * (data/manifest kind synth-vocab, named synth-*). */
int xp_rp_synth_walks(report_t *r)
{
    sqlite3_stmt *st = xp_rp_figure_query(r, "SELECT count(*) FROM cases WHERE run_id = ? AND"
                                          " experiment = 'walk' AND status = 'ok' AND"
                                          " vocabulary LIKE 'synth-%'", r->run);
    double n = st ? xp_rp_first_number(st) : NAN;
    return isfinite(n) ? (int)n : 0;
}

/* Bars on a log scale when they span more than 30x: else the small ones,
 * often the interesting ones, are flat against the axis. */
int xp_rp_spread(double lo, double hi)
{
    return lo > 0 && hi / lo > 30;
}

/* One case's figure of a column (see xp_pick_column); 1 if it has one
 * per node. */
int xp_rp_column_stat(report_t *r, int64_t id, const xp_column_t *c, stat_t *s)
{
    return c->source && xp_rp_get_stat(r, id, c->source, "tokbench", c->metric, s) &&
           s->nodes > 0;
}

/* One figure's median, NAN when the case has none. */
double xp_rp_stat_median(report_t *r, int64_t id, const char *source, const char *impl,
                         const char *metric)
{
    stat_t v;
    return xp_rp_get_stat(r, id, source, impl, metric, &v) ? v.median : NAN;
}

void xp_rp_tab_code(table_t *t, int c)
{
    t->code |= 1u << c;
}

/* Short enough to label a group in a plot as it is. */
#define SHORT_PATTERN 18

int xp_rp_short_pattern(report_t *r, const char *pattern, char *buf, size_t n)
{
    const char *slash = strrchr(pattern, '/');
    size_t kind = strcspn(pattern, ":");
    int file = slash && (!strncmp(pattern, "lex:", 4) || !strncmp(pattern, "g:", 2));
    if (file && kind + 1 + strlen(slash + 1) <= SHORT_PATTERN) {
        snprintf(buf, n, "%.*s%s", (int)kind + 1, pattern, slash + 1);
        return 0;
    }
    /* quotes and backslashes cannot be written verbatim in gnuplot's data */
    if (strlen(pattern) <= SHORT_PATTERN && !strpbrk(pattern, "\"\\")) {
        snprintf(buf, n, "%s", pattern);
        return 0;
    }
    size_t i = 0;
    while (i < r->patterns.len && strcmp(r->patterns.data[i], pattern))
        i++;
    if (i == r->patterns.len) {
        char *copy = strdup(pattern);
        if (!copy || tb_vec_push(&r->patterns, copy)) {
            free(copy);
            return -1;
        }
    }
    snprintf(buf, n, "P%zu", i + 1);
    return 0;
}

int xp_rp_group_label(report_t *r, sqlite3_stmt *walk, char *buf, size_t n)
{
    char pat[32];
    if (xp_rp_short_pattern(r, xp_rp_col(walk, 3), pat, sizeof pat))
        return -1;
    const char *opt = xp_rp_col(walk, 6);
    int after = !strncmp(opt, "after=", 6);
    snprintf(buf, n, "%s %s%s%s", xp_rp_col(walk, 1), pat, *opt ? (after ? " @" : " ") : "",
             after ? opt + 6 : opt);
    return 0;
}

int xp_rp_sec_patterns(report_t *r, tb_err_t *err)
{
    section_t *s = xp_rp_new_section(r, "patterns", "Patterns: the short names in the plots");
    s->table_only = 1;
    xp_rp_caption(r, s, "the plots name a pattern longer than 18 characters PN; here it is "
                  "verbatim, as the suite gives it");
    xp_rp_tab_init(&s->tab, 2, "short name", "pattern");
    xp_rp_tab_code(&s->tab, 1);
    int rc = 0;
    for (size_t i = 0; !rc && i < r->patterns.len; i++) {
        char name[32];
        snprintf(name, sizeof name, "P%zu", i + 1);
        rc = xp_rp_tab_row(&s->tab, err, name, r->patterns.data[i]);
    }
    if (!rc && !r->patterns.len)
        snprintf(s->note, sizeof s->note, "Every pattern of this run is short enough to be "
                 "named by itself.");
    return rc;
}
