/*
 * cmd_report: `tokbench report`, the plots and the page of one run.
 *
 * Each section reads the store, writes its data as NAME.dat in the output
 * folder, has gnuplot draw NAME.png and NAME.svg from a template in
 * scripts/plots/, and keeps a short table for the page.  The page is
 * written twice from the same sections: index.html and index.md.  A figure
 * the run does not have is left out of the data and named "not measured"
 * in the table: a missing source is never drawn as zero.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../base/buf.h"
#include "../cli/cli.h"
#include "../cli/cmd_results.h"
#include "../store/mbtable.h"

extern char **environ;

#define MAXCOLS 8
#define NOT_MEASURED "not measured"
#define COLOUR_MAIN 0x4477aa
#define COLOUR_ALT 0x44aa99
#define COLOUR_BAD 0xcc3311
#define COLOUR_GOOD 0x228833
#define COLOUR_SAME 0x999999

typedef struct {
    int ncols;
    char head[MAXCOLS][64];
    TB_VEC(char *) cells; /* row-major, ncols per row */
} table_t;

typedef struct {
    char name[32];       /* file stem of the plot and its data */
    char title[128];
    char caption[1024];  /* the run, and where the figures come from */
    char note[1024];     /* what is missing and why; may be empty */
    int drawn;           /* NAME.png and NAME.svg were written */
    int failed;          /* gnuplot was given data but drew nothing */
    int table_only;      /* a table with no plot to draw */
    table_t tab;
} section_t;

typedef struct {
    int64_t id;
    char status[16], suite[256], started[32], ended[32], commit[48], host[128];
    char cpu[256], sources[64], compiler[128], kernel[128], virt[64];
    int dirty, cores;
    double tsc_hz;
} run_info_t;

typedef struct {
    xp_db_t *db;
    int64_t run, vs;
    const char *out;
    char plots[4096];    /* the folder of the gnuplot templates */
    char anchors[4096];  /* the published MaskBench figures (mbtable.h) */
    char log[4096];      /* gnuplot's messages */
    run_info_t info, vs_info;
    section_t sec[24];
    int nsec;
    int failed_plots;
} report_t;

typedef struct {
    double median, min, max, bytes, nodes;
} stat_t;

/* --- small helpers ------------------------------------------------------ */

static const char *col(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return s ? (const char *)s : "";
}

/* A query for one figure, with `id` (a run's or a case's) bound to ?1;
 * NULL if it cannot be prepared, which leaves the figure "not measured". */
static sqlite3_stmt *figure_query(report_t *r, const char *sql, int64_t id)
{
    sqlite3_stmt *st;
    return xp_db_prepare_id(r->db, sql, id, &st, NULL) ? NULL : st;
}

/* The first column of the query's first row, NAN when there is none or
 * it is NULL; finalizes the query. */
static double first_number(sqlite3_stmt *st)
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
static int get_stat(report_t *r, int64_t case_id, const char *source, const char *impl,
                    const char *metric, stat_t *s)
{
    sqlite3_stmt *st = figure_query(r, "SELECT median, min, max, bytes, nodes FROM"
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

static void tab_init(table_t *t, int ncols, ...)
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
static int tab_row(table_t *t, tb_err_t *err, ...)
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

static size_t tab_rows(const table_t *t)
{
    return t->ncols ? t->cells.len / (size_t)t->ncols : 0;
}

static void tab_free(table_t *t)
{
    for (size_t i = 0; i < t->cells.len; i++)
        free(t->cells.data[i]);
    free(t->cells.data);
}

static section_t *new_section(report_t *r, const char *name, const char *title)
{
    section_t *s = &r->sec[r->nsec++];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    snprintf(s->title, sizeof s->title, "%s", title);
    return s;
}

static void fmt(char *buf, size_t n, const char *f, double v)
{
    if (isfinite(v))
        snprintf(buf, n, f, v);
    else
        snprintf(buf, n, "%s", NOT_MEASURED);
}

/* A label safe inside a gnuplot data file's double quotes. */
static void dat_label(char *dst, size_t n, const char *src)
{
    size_t k = 0;
    for (; *src && k + 1 < n; src++)
        dst[k++] = *src == '"' || *src == '\\' || *src == '\n' ? '\'' : *src;
    dst[k] = 0;
}

static FILE *open_out(report_t *r, const char *name, const char *ext, tb_err_t *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s%s", r->out, name, ext);
    FILE *f = fopen(path, "w");
    if (!f)
        tb_fail(err, "%s: cannot write: %s", path, strerror(errno));
    return f;
}

/* Prepares a query of this run: r->run bound to ?1. */
static int run_query(report_t *r, const char *sql, sqlite3_stmt **st, tb_err_t *err)
{
    return xp_db_prepare_id(r->db, sql, r->run, st, err);
}

/* Prepares `sql` for this run (?1) and opens the section's .dat file:
 * the prologue every plotted section shares.  NULL with nothing left open
 * on failure. */
static FILE *open_run_query(report_t *r, const char *sql, const char *name,
                            sqlite3_stmt **st, tb_err_t *err)
{
    if (run_query(r, sql, st, err))
        return NULL;
    FILE *f = open_out(r, name, ".dat", err);
    if (!f)
        sqlite3_finalize(*st);
    return f;
}


static int close_out(report_t *r, FILE *f, const char *name, tb_err_t *err)
{
    int bad = ferror(f);
    if (fclose(f) || bad)
        return tb_fail(err, "%s/%s: write failed", r->out, name);
    return 0;
}

/* Removes what an earlier report left for a plot this one does not draw. */
static void remove_plot(report_t *r, const char *name)
{
    static const char *const ext[] = {".png", ".svg", ".dat"};
    for (int i = 0; i < 3; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s%s", r->out, name, ext[i]);
        unlink(path);
    }
}

/* A section with nothing to draw: "Not measured: " and why (printf-style)
 * end its note, and what an earlier report drew for it goes.  Returns 0,
 * for `return not_measured(...)`. */
static int not_measured(report_t *r, section_t *s, const char *why, ...)
    __attribute__((format(printf, 3, 4)));

static int not_measured(report_t *r, section_t *s, const char *why, ...)
{
    size_t used = strlen(s->note);
    snprintf(s->note + used, sizeof s->note - used, "%sNot measured: ", used ? "  " : "");
    used = strlen(s->note);
    va_list ap;
    va_start(ap, why);
    vsnprintf(s->note + used, sizeof s->note - used, why, ap);
    va_end(ap);
    remove_plot(r, s->name);
    return 0;
}

/* --- gnuplot ------------------------------------------------------------ */

/* Appends name='value' to a gnuplot -e line; single quotes are doubled,
 * the only escape single-quoted gnuplot strings have. */
static void gp_str(tb_buf_t *b, const char *name, const char *value)
{
    tb_buf_put(b, name, strlen(name));
    tb_buf_put(b, "='", 2);
    for (const char *p = value; *p; p++) {
        if (*p == '\'')
            tb_buf_putc(b, '\'');
        tb_buf_putc(b, *p == '\n' ? ' ' : (uint8_t)*p);
    }
    tb_buf_put(b, "'; ", 3);
}

static void gp_num(tb_buf_t *b, const char *name, double v)
{
    char tmp[96];
    if (isfinite(v))
        snprintf(tmp, sizeof tmp, "%s=%.17g; ", name, v);
    else
        snprintf(tmp, sizeof tmp, "%s=NaN; ", name);
    tb_buf_put(b, tmp, strlen(tmp));
}

/* Runs gnuplot with its messages appended to the log; the exit status, or
 * -1 with err set when it cannot be started. */
static int spawn_gnuplot(const char *log, char *const argv[], tb_err_t *err)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc == ENOENT)
        return tb_fail(err, "gnuplot is not installed: the report needs it "
                       "(Debian package gnuplot-nox; `make setup` installs it)");
    if (rc)
        return tb_fail(err, "cannot start gnuplot: %s", strerror(rc));
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return tb_fail(err, "waiting for gnuplot: %s", strerror(errno));
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static int file_size_ok(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && sb.st_size > 0;
}

/* Draws section s from NAME.dat with TEMPLATE.gp; `vars` holds the
 * template's own variables.  A plot that fails is noted on the page and
 * counted, and the report goes on. */
static int draw(report_t *r, section_t *s, const char *tmpl, const char *ylab,
                tb_buf_t *vars, tb_err_t *err)
{
    char dat[4200], png[4200], svg[4200], gp[4200];
    snprintf(dat, sizeof dat, "%s/%s.dat", r->out, s->name);
    snprintf(png, sizeof png, "%s/%s.png", r->out, s->name);
    snprintf(svg, sizeof svg, "%s/%s.svg", r->out, s->name);
    snprintf(gp, sizeof gp, "%s/%s.gp", r->plots, tmpl);
    unlink(png);
    unlink(svg);
    tb_buf_t e = {0};
    gp_str(&e, "plots", r->plots);
    gp_str(&e, "datafile", dat);
    gp_str(&e, "png", png);
    gp_str(&e, "svg", svg);
    gp_str(&e, "ptitle", s->title);
    /* the run on one line of the title, where its figures come from on
     * the next: long CPU names would not fit on one */
    char run_part[1024];
    snprintf(run_part, sizeof run_part, "%s", s->caption);
    char *cut = strstr(run_part, "; ");
    if (cut)
        *cut = 0;
    gp_str(&e, "caption", run_part);
    gp_str(&e, "csource", cut ? s->caption + (cut - run_part) + 2 : "");
    gp_str(&e, "ylab", ylab);
    if (vars->len)
        tb_buf_put(&e, vars->data, vars->len);
    if (tb_buf_putc(&e, 0)) {
        tb_buf_free(&e);
        return tb_fail(err, "out of memory");
    }
    char *argv[] = {"gnuplot", "-e", (char *)e.data, gp, NULL};
    int rc = spawn_gnuplot(r->log, argv, err);
    tb_buf_free(&e);
    if (rc < 0)
        return -1;
    if (rc == 0 && file_size_ok(png) && file_size_ok(svg)) {
        s->drawn = 1;
        return 0;
    }
    r->failed_plots++;
    s->failed = 1;
    snprintf(s->note + strlen(s->note), sizeof s->note - strlen(s->note),
             "%sgnuplot could not draw this plot from %s (exit %d; see %s).",
             *s->note ? " " : "", gp, rc, r->log);
    return 0;
}

/* --- the run ------------------------------------------------------------ */

static int load_run(report_t *r, int64_t id, run_info_t *ri, tb_err_t *err)
{
    sqlite3_stmt *st;
    if (xp_db_prepare_id(r->db, "SELECT status, suite, started, ifnull(ended, ''),"
                                " git_commit, git_dirty, host, cpu_model, cores, tsc_hz,"
                                " sources, compiler, kernel, virt FROM runs WHERE id = ?",
                         id, &st, err))
        return -1;
    int found = sqlite3_step(st) == SQLITE_ROW;
    if (found) {
        ri->id = id;
        snprintf(ri->status, sizeof ri->status, "%s", col(st, 0));
        snprintf(ri->suite, sizeof ri->suite, "%s", col(st, 1));
        snprintf(ri->started, sizeof ri->started, "%s", col(st, 2));
        snprintf(ri->ended, sizeof ri->ended, "%s", col(st, 3));
        snprintf(ri->commit, sizeof ri->commit, "%s", col(st, 4));
        ri->dirty = sqlite3_column_int(st, 5);
        snprintf(ri->host, sizeof ri->host, "%s", col(st, 6));
        snprintf(ri->cpu, sizeof ri->cpu, "%s", *col(st, 7) ? col(st, 7) : "unknown CPU");
        ri->cores = sqlite3_column_int(st, 8);
        ri->tsc_hz = sqlite3_column_double(st, 9);
        snprintf(ri->sources, sizeof ri->sources, "%s", col(st, 10));
        snprintf(ri->compiler, sizeof ri->compiler, "%s", col(st, 11));
        snprintf(ri->kernel, sizeof ri->kernel, "%s", col(st, 12));
        snprintf(ri->virt, sizeof ri->virt, "%s", col(st, 13));
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

static void caption(report_t *r, section_t *s, const char *sources)
{
    char base[700];
    run_caption(&r->info, base, sizeof base);
    snprintf(s->caption, sizeof s->caption, "%s; %s", base, sources);
}

/* The walk cases of the run that also meet `cond` (SQL, "" for all), in
 * suite order. */
#define CASES_IF(experiment, cond)                                            \
    "SELECT id, vocabulary, layout, pattern, status, ifnull(message, ''),"    \
    " ifnull(options, '')"                                                    \
    " FROM cases WHERE run_id = ? AND experiment = '" experiment "'" cond     \
    " ORDER BY seq"
#define WALK_CASES_IF(cond) CASES_IF("walk", cond)
#define WALK_CASES WALK_CASES_IF("")

/* vocabulary layout pattern, and the options where the row has some
 * (after=TEXT: the same pattern from another state). */
static void case_label(sqlite3_stmt *st, char *buf, size_t n)
{
    const char *opt = col(st, 6);
    snprintf(buf, n, "%s %s %s%s%s", col(st, 1), col(st, 2), col(st, 3), *opt ? " " : "", opt);
}

/* Why a case has no figures: its status and message, shortened. */
static void failed_text(sqlite3_stmt *st, char *buf, size_t n)
{
    const char *msg = col(st, 5);
    snprintf(buf, n, "%s: %.120s%s", col(st, 4), msg, strlen(msg) > 120 ? "..." : "");
}

/* The one number `sql` selects for this run (?1) and a vocabulary (?2),
 * or NAN when the run has none. */
static double run_vocab_number(report_t *r, const char *sql, const char *vocab)
{
    sqlite3_stmt *st = figure_query(r, sql, r->run);
    if (!st)
        return NAN;
    sqlite3_bind_text(st, 2, vocab, -1, SQLITE_STATIC);
    return first_number(st);
}

/* Tokens of a vocabulary: what a walk under "any" allows is every token
 * in the trie; the run has it only if it walked that vocabulary so. */
static double vocab_tokens(report_t *r, const char *vocab)
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
static double vocab_size(report_t *r, const char *vocab)
{
    double size = run_vocab_number(
        r, "SELECT max(s.median) FROM metric_stats s JOIN cases c ON"
           " c.id = s.case_id WHERE c.run_id = ? AND c.experiment = 'walk' AND"
           " c.vocabulary = ? AND c.status = 'ok' AND s.source = 'static' AND"
           " s.metric = 'vocab_size'", vocab);
    return isfinite(size) ? size : vocab_tokens(r, vocab);
}

/* How many walk cases of the run measured a synthetic vocabulary
 * (data/manifest kind synth-vocab, named synth-*). */
static int synth_walks(report_t *r)
{
    sqlite3_stmt *st = figure_query(r, "SELECT count(*) FROM cases WHERE run_id = ? AND"
                                    " experiment = 'walk' AND status = 'ok' AND"
                                    " vocabulary LIKE 'synth-%'", r->run);
    double n = st ? first_number(st) : NAN;
    return isfinite(n) ? (int)n : 0;
}

/* Bars on a log scale when they span more than 30x: else the small ones,
 * often the interesting ones, are flat against the axis. */
static int spread(double lo, double hi)
{
    return lo > 0 && hi / lo > 30;
}

/* --- cycles per node ---------------------------------------------------- */

/* One case's figure of a column (see xp_pick_column); 1 if it has one
 * per node. */
static int column_stat(report_t *r, int64_t id, const xp_column_t *c, stat_t *s)
{
    return c->source && get_stat(r, id, c->source, "tokbench", c->metric, s) &&
           s->nodes > 0;
}

/* Cycles per node: the run's core cycles where it counted them, else its
 * TSC reference cycles, never a mix; the 13-cycle baseline is core
 * cycles, so a TSC figure against it says so wherever it is shown. */
static int sec_cycles(report_t *r, tb_err_t *err)
{
    section_t *s = new_section(r, "cycles_per_node", "Cycles per visited trie node");
    xp_column_t c;
    xp_pick_column(r->db, r->run, xp_cycles_prefs, 2, NULL, &c);
    int core = !c.source || !strcmp(c.metric, "cycles");
    tab_init(&s->tab, 4, "case", core ? "core cycles/node (median)" :
             "TSC reference cycles/node (median)", "min..max",
             core ? "x 13-cycle baseline" : "x 13-cycle baseline (TSC reference cycles "
             "against core cycles)");
    sqlite3_stmt *st;
    /* lex: and g: walks are the lexer section's twins of re: walks (same
     * nodes, same table walk); drawn here too they would double the bars. */
    FILE *f = open_run_query(r, WALK_CASES_IF(" AND substr(pattern, 1, 4) <> 'lex:'"
                                              " AND substr(pattern, 1, 2) <> 'g:'"),
                             s->name, &st, err);
    if (!f)
        return -1;
    int rows = 0, rc = 0;
    double lo = INFINITY, hi = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        char label[200], q[200], med[32], range[64], x13[32], why[200];
        case_label(st, label, sizeof label);
        stat_t v;
        if (strcmp(col(st, 4), "ok") || !column_stat(r, sqlite3_column_int64(st, 0), &c, &v)) {
            if (strcmp(col(st, 4), "ok"))
                failed_text(st, why, sizeof why);
            else
                snprintf(why, sizeof why, "%s", NOT_MEASURED);
            rc = tab_row(&s->tab, err, label, NOT_MEASURED, "", why);
            continue;
        }
        double per = v.median / v.nodes;
        fmt(med, sizeof med, "%.2f", per);
        snprintf(range, sizeof range, "%.2f..%.2f", v.min / v.nodes, v.max / v.nodes);
        fmt(x13, sizeof x13, "%.2f", per / XP_BASELINE_CYCLES_PER_NODE);
        rc = tab_row(&s->tab, err, label, med, range, x13);
        dat_label(q, sizeof q, label);
        fprintf(f, "\"%s\" %.6g %.6g %.6g 0x%06x\n", q, per, v.min / v.nodes,
                v.max / v.nodes, core ? COLOUR_MAIN : COLOUR_ALT);
        rows++;
        lo = fmin(lo, per);
        hi = fmax(hi, per);
    }
    sqlite3_finalize(st);
    if (close_out(r, f, s->name, err) || rc)
        return -1;
    char src[400], says[300];
    snprintf(src, sizeof src, "%s: %s", core ? "core cycles" : "TSC reference cycles, "
             "not core cycles (no core cycles in this run)",
             c.source ? xp_column_says(&c, says, sizeof says) : "");
    caption(r, s, rows ? src : "no cycle counts");
    if (!rows)
        return not_measured(r, s, "the run has no walk case with cycle counts.");
    snprintf(s->note, sizeof s->note, "The dashed line is the published baseline of "
             "the flat depth-first trie: 13 core cycles per node on an AMD EPYC 7V13.%s",
             core ? "" : "  This run has TSC reference cycles only, which tick at the "
             "TSC's fixed rate whatever the core's clock: against the baseline they are "
             "indicative, not a comparison of like with like.");
    tb_buf_t v = {0};
    gp_num(&v, "hline", XP_BASELINE_CYCLES_PER_NODE);
    gp_str(&v, "hlabel", "13-cycle baseline (core cycles, flat DFS trie, EPYC 7V13)");
    gp_num(&v, "logy", spread(lo, hi));
    const char *axis = core ? "core cycles per visited node" :
                       "TSC reference cycles per visited node";
    char ylabel[80];
    snprintf(ylabel, sizeof ylabel, "%s%s", axis, spread(lo, hi) ? " (log scale)" : "");
    rc = draw(r, s, "bars", ylabel, &v, err);
    tb_buf_free(&v);
    return rc;
}

/* --- cache misses and mispredictions per node -------------------------- */

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

static int sec_misses(report_t *r, tb_err_t *err)
{
    static const char *const what[3] = {"L1D misses", "LLC misses", "branch mispredictions"};
    section_t *s = new_section(r, "misses_per_node",
                               "Cache misses and branch mispredictions per node");
    xp_column_t c[3];
    int have_source = miss_columns(r, c);
    const char *source = c[0].source ? c[0].source : c[1].source ? c[1].source : c[2].source;
    int is_sim = have_source && !strcmp(source, "callgrind");
    char head[3][64];
    for (int k = 0; k < 3; k++)
        snprintf(head[k], sizeof head[k], "%s/node", c[k].source ? c[k].metric : what[k]);
    tab_init(&s->tab, 5, "case", "source", head[0], head[1], head[2]);
    sqlite3_stmt *st;
    FILE *f = open_run_query(r, WALK_CASES, s->name, &st, err);
    if (!f)
        return -1;
    fprintf(f, "case \"%s\" \"%s\" \"%s\"\n", head[0], head[1], head[2]);
    int rows = 0, rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        char label[200], q[240], cell[3][32], why[200];
        case_label(st, label, sizeof label);
        int64_t id = sqlite3_column_int64(st, 0);
        stat_t m[3];
        int have[3], any = 0;
        for (int k = 0; k < 3; k++)
            any |= have[k] = column_stat(r, id, &c[k], &m[k]);
        if (strcmp(col(st, 4), "ok") || !any) {
            if (strcmp(col(st, 4), "ok"))
                failed_text(st, why, sizeof why);
            else
                snprintf(why, sizeof why, "no %s counts", have_source ?
                         (is_sim ? "callgrind" : "PAPI") : "PAPI or callgrind");
            rc = tab_row(&s->tab, err, label, why, NOT_MEASURED, NOT_MEASURED,
                         NOT_MEASURED);
            continue;
        }
        for (int k = 0; k < 3; k++)
            fmt(cell[k], sizeof cell[k], "%.4f", have[k] ? m[k].median / m[k].nodes : NAN);
        rc = tab_row(&s->tab, err, label, is_sim ? "callgrind (simulated)" : "PAPI (real)",
                     cell[0], cell[1], cell[2]);
        dat_label(q, sizeof q, label);
        fprintf(f, "\"%s\"", q);
        for (int k = 0; k < 3; k++)
            if (have[k])
                fprintf(f, " %.6g", m[k].median / m[k].nodes);
            else
                fprintf(f, " ?");
        fprintf(f, "\n");
        rows++;
    }
    sqlite3_finalize(st);
    if (close_out(r, f, s->name, err) || rc)
        return -1;
    caption(r, s, !rows ? "no cache or branch counts" : is_sim ?
            "counts: callgrind (simulated caches and branches)" : "counts: PAPI (real hardware)");
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
        return not_measured(r, s, "no walk case of this run has PAPI or callgrind counts "
                            "(the machine has no PMU and no case asked for callgrind, or "
                            "there is no walk case).");
    tb_buf_t v = {0};
    gp_num(&v, "ncols", 4);
    rc = draw(r, s, "clustered", "events per visited node", &v, err);
    tb_buf_free(&v);
    return rc;
}

/* --- time per mask against vocabulary size ------------------------------ */

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

static int sec_mask_time(report_t *r, tb_err_t *err)
{
    section_t *s = new_section(r, "mask_time", "Time per mask against vocabulary size");
    tab_init(&s->tab, 5, "case", "vocabulary size (ids)", "time per mask (us, median)",
             "min..max", "nodes visited");
    sqlite3_stmt *st;
    if (run_query(r, WALK_CASES, &st, err))
        return -1;
    TB_VEC(point_t) pts = {0};
    int rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        char label[200], tok[32], med[32], range[64], nodes[32], why[200];
        case_label(st, label, sizeof label);
        stat_t ns;
        int ok = !strcmp(col(st, 4), "ok");
        int have = ok && get_stat(r, sqlite3_column_int64(st, 0), "tsc", "tokbench", "ns", &ns);
        double tokens = vocab_size(r, col(st, 1)); /* known from other walks too */
        fmt(tok, sizeof tok, "%.0f", tokens);
        if (!ok) {
            failed_text(st, why, sizeof why);
            rc = tab_row(&s->tab, err, label, tok, NOT_MEASURED, why, "");
            continue;
        }
        if (!have) {
            rc = tab_row(&s->tab, err, label, tok, NOT_MEASURED, "", "");
            continue;
        }
        fmt(med, sizeof med, "%.1f", ns.median / 1e3);
        snprintf(range, sizeof range, "%.1f..%.1f", ns.min / 1e3, ns.max / 1e3);
        fmt(nodes, sizeof nodes, "%.0f", ns.nodes);
        rc = tab_row(&s->tab, err, label, isfinite(tokens) ? tok :
                     "not measured (no walk recorded the vocabulary's size)", med, range,
                     nodes);
        if (!rc && isfinite(tokens)) {
            point_t p = {.tokens = tokens, .median = ns.median / 1e3,
                         .min = ns.min / 1e3, .max = ns.max / 1e3};
            snprintf(p.series, sizeof p.series, "%s %s", col(st, 2), col(st, 3));
            if (tb_vec_push(&pts, p))
                rc = tb_fail(err, "out of memory");
        }
    }
    sqlite3_finalize(st);
    if (rc) {
        free(pts.data);
        return -1;
    }
    caption(r, s, "time: TSC, converted with the measured TSC frequency");
    int synth = synth_walks(r);
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
        not_measured(r, s, "the run has no timed walk of a vocabulary of known size.");
        free(pts.data);
        return 0;
    }
    qsort(pts.data, pts.len, sizeof *pts.data, point_cmp);
    FILE *f = open_out(r, s->name, ".dat", err);
    if (!f) {
        free(pts.data);
        return -1;
    }
    int nseries = 0;
    for (size_t i = 0; i < pts.len; i++) {
        if (!i || strcmp(pts.data[i].series, pts.data[i - 1].series)) {
            char q[200];
            dat_label(q, sizeof q, pts.data[i].series);
            fprintf(f, "%s\"%s\"\n", i ? "\n\n" : "", q);
            nseries++;
        }
        fprintf(f, "%.0f %.6g %.6g %.6g\n", pts.data[i].tokens, pts.data[i].median,
                pts.data[i].min, pts.data[i].max);
    }
    free(pts.data);
    if (close_out(r, f, s->name, err))
        return -1;
    tb_buf_t v = {0};
    gp_num(&v, "nseries", nseries);
    gp_str(&v, "xlab", "vocabulary size (ids, log scale)");
    gp_str(&v, "synthnote", synthnote);
    rc = draw(r, s, "lines", "time per mask (microseconds, log scale)", &v, err);
    tb_buf_free(&v);
    return rc;
}

/* --- lexer masks -------------------------------------------------------- */

/* The targets of the issue "The lexer and token masks" (lexer/), set for
 * its development machine (a 2.0 GHz time stamp counter): Llama 3, the
 * dfs layout, one mask from the lexer's start state.  The only place the
 * report knows them; NAN where the issue sets no target for a figure. */
typedef struct {
    const char *vocab, *layout, *pattern;
    double us_per_mask, ns_per_node;
    double us_sliced; /* the same mask through the slicer (slice cases) */
} lexer_target_t;

static const lexer_target_t lexer_targets[] = {
    /* an unconstrained JSON-string body: most of the trie is visited,
     * unless the slicer takes the string's slices whole */
    {"llama3", "dfs", "re:[^\"\\\\\\x00-\\x1f]*\"", 600, 2.2, 25},
    /* a narrow regex */
    {"llama3", "dfs", "re:[0-9]+", 3, NAN, NAN},
};

/* The target of a walk or slice case (columns of CASES_IF); a slice
 * case's pattern may leave out the "re:". */
static const lexer_target_t *lexer_target(sqlite3_stmt *c)
{
    const char *pattern = col(c, 3);
    for (size_t i = 0; i < sizeof lexer_targets / sizeof *lexer_targets; i++) {
        const lexer_target_t *t = &lexer_targets[i];
        if (!strcmp(col(c, 1), t->vocab) && !strcmp(col(c, 2), t->layout) &&
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

static void dat_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, " %.6g", v);
    else
        fprintf(f, " ?");
}

/* One walk's line of lexer.gp's data: label, time per mask median min
 * max (us), the same per node (ns), the two targets ('?': none), the two
 * bars' colours.  A lex: spec or a g: grammar is labelled by its file name
 * alone: the folder would crowd the axis. */
static void lexer_dat_line(FILE *f, sqlite3_stmt *walk, const stat_t *ns,
                           const lexer_target_t *t)
{
    char label[200], q[200];
    const char *pattern = col(walk, 3), *slash = strrchr(pattern, '/');
    /* after=TEXT as "@TEXT": the text is what tells such bars apart */
    const char *opt = col(walk, 6);
    int after = !strncmp(opt, "after=", 6);
    if ((!strncmp(pattern, "lex:", 4) || !strncmp(pattern, "g:", 2)) && slash)
        snprintf(label, sizeof label, "%s %s %.*s%s%s%s", col(walk, 1), col(walk, 2),
                 (int)strcspn(pattern, ":") + 1, pattern, slash + 1,
                 *opt ? (after ? " @" : " ") : "", after ? opt + 6 : opt);
    else
        case_label(walk, label, sizeof label);
    double us = ns->median / 1e3, per_node = ns->median / ns->nodes;
    double goal_us = t ? t->us_per_mask : NAN, goal_node = t ? t->ns_per_node : NAN;
    dat_label(q, sizeof q, label);
    fprintf(f, "\"%s\" %.6g %.6g %.6g %.6g %.6g %.6g", q, us, ns->min / 1e3, ns->max / 1e3,
            per_node, ns->min / ns->nodes, ns->max / ns->nodes);
    dat_num(f, goal_us);
    dat_num(f, goal_node);
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
    for (size_t i = 0; i < sizeof lexer_targets / sizeof *lexer_targets; i++) {
        const lexer_target_t *t = &lexer_targets[i];
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

static int sec_lexer(report_t *r, tb_err_t *err)
{
    section_t *s = new_section(r, "lexer_masks", "Lexer and grammar masks: time per mask and per node");
    tab_init(&s->tab, 6, "case", "time per mask (us, median)", "min..max", "nodes visited",
             "ns per node (median)", "target of the issue");
    sqlite3_stmt *st;
    FILE *f = open_run_query(r, LEXER_CASES, s->name, &st, err);
    if (!f)
        return -1;
    int rows = 0, cases = 0, rc = 0;
    double lo = INFINITY, hi = 0, lo_node = INFINITY, hi_node = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        char label[200], med[32], range[64], nodes[32], per[32], goal[200];
        case_label(st, label, sizeof label);
        cases++;
        stat_t ns;
        if (strcmp(col(st, 4), "ok")) {
            failed_text(st, goal, sizeof goal);
            rc = tab_row(&s->tab, err, label, NOT_MEASURED, goal, "", "", "");
            continue;
        }
        if (!get_stat(r, sqlite3_column_int64(st, 0), "tsc", "tokbench", "ns", &ns) ||
            ns.nodes <= 0) {
            rc = tab_row(&s->tab, err, label, NOT_MEASURED, "", "", "", "");
            continue;
        }
        const lexer_target_t *t = lexer_target(st);
        double us = ns.median / 1e3, per_node = ns.median / ns.nodes;
        fmt(med, sizeof med, "%.1f", us);
        snprintf(range, sizeof range, "%.1f..%.1f", ns.min / 1e3, ns.max / 1e3);
        fmt(nodes, sizeof nodes, "%.0f", ns.nodes);
        fmt(per, sizeof per, "%.2f", per_node);
        snprintf(goal, sizeof goal, "%s", t ? "" : "none");
        if (t)
            target_text(t, us, per_node, goal, sizeof goal);
        rc = tab_row(&s->tab, err, label, med, range, nodes, per, goal);
        lexer_dat_line(f, st, &ns, t);
        rows++;
        lo = fmin(lo, us);
        hi = fmax(hi, us);
        lo_node = fmin(lo_node, per_node);
        hi_node = fmax(hi_node, per_node);
    }
    sqlite3_finalize(st);
    if (close_out(r, f, s->name, err) || rc)
        return -1;
    caption(r, s, "time: TSC median of the repetitions, one mask from the lexer's start "
            "state each; per node: over the nodes that mask visited");
    if (!rows)
        return not_measured(r, s, "the run has no%s walk under the lexer (pattern re:REGEX "
                            "or lex:SPEC).", cases ? " timed" : "");
    lexer_note(r, s);
    tb_buf_t v = {0};
    gp_num(&v, "logy", spread(lo, hi));
    gp_num(&v, "logy2", spread(lo_node, hi_node));
    gp_str(&v, "ylab2", spread(lo_node, hi_node) ?
           "nanoseconds per visited node (log scale)" : "nanoseconds per visited node");
    rc = draw(r, s, "lexer", spread(lo, hi) ? "time per mask (microseconds, log scale)" :
              "time per mask (microseconds)", &v, err);
    tb_buf_free(&v);
    return rc;
}

/* --- the slicer and the token index ------------------------------------- */

/* One figure's median, NAN when the case has none. */
static double stat_median(report_t *r, int64_t id, const char *source, const char *impl,
                          const char *metric)
{
    stat_t v;
    return get_stat(r, id, source, impl, metric, &v) ? v.median : NAN;
}

/* One case's line of pairs.gp's data: label, the two bars' median min max
 * divided by `scale`, the first bar's target ('?': none). */
static void pair_dat_line(FILE *f, const char *label, const stat_t *a, const stat_t *b,
                          double scale, double target)
{
    char q[200];
    dat_label(q, sizeof q, label);
    fprintf(f, "\"%s\" %.6g %.6g %.6g %.6g %.6g %.6g", q, a->median / scale, a->min / scale,
            a->max / scale, b->median / scale, b->min / scale, b->max / scale);
    dat_num(f, target);
    fputc('\n', f);
}

/* Draws a section's pairs.gp plot on a log scale: the two ways differ by
 * orders of magnitude. */
static int draw_pairs(report_t *r, section_t *s, const char *ylab, const char *title1,
                      const char *title2, int targets, tb_err_t *err)
{
    tb_buf_t v = {0};
    gp_str(&v, "title1", title1);
    gp_str(&v, "title2", title2);
    gp_num(&v, "targets", targets);
    gp_num(&v, "logy", 1);
    int rc = draw(r, s, "pairs", ylab, &v, err);
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
    FILE *f = open_run_query(r, sql, s->name, &st, err);
    if (!f)
        return -1;
    int rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        char label[200], why[200] = "";
        n->cases++;
        int done = strcmp(col(st, 4), "ok") ? 0 : row(r, s, st, f, err);
        if (done < 0) {
            rc = -1;
        } else if (done) {
            n->rows++;
            n->targets += done == 2;
        } else {
            case_label(st, label, sizeof label);
            if (strcmp(col(st, 4), "ok"))
                failed_text(st, why, sizeof why);
            rc = tab_row(&s->tab, err, label, NOT_MEASURED, why, "", "", "", "", "");
        }
    }
    sqlite3_finalize(st);
    return close_out(r, f, s->name, err) || rc ? -1 : 0;
}

/* A slice case: the sliced mask and the plain walk by wall clock, the
 * gain, the slicer's build and size, its target. */
static int slice_row(report_t *r, section_t *s, sqlite3_stmt *c, FILE *f, tb_err_t *err)
{
    int64_t id = sqlite3_column_int64(c, 0);
    stat_t sl, pl;
    if (!get_stat(r, id, "wallclock", "tokbench", "ns", &sl) ||
        !get_stat(r, id, "wallclock", "plain", "ns", &pl))
        return 0;
    char label[200], sliced[32], plain[32], gain[32], build[32], bytes[32], parts[96];
    char goal[96] = "none";
    case_label(c, label, sizeof label);
    fmt(sliced, sizeof sliced, "%.2f", sl.median / 1e3);
    fmt(plain, sizeof plain, "%.2f", pl.median / 1e3);
    fmt(gain, sizeof gain, "%.1f", stat_median(r, id, "static", "tokbench", "slicer_gain"));
    fmt(build, sizeof build, "%.2f",
        stat_median(r, id, "wallclock", "tokbench", "build_ns") / 1e6);
    fmt(bytes, sizeof bytes, "%.0f", stat_median(r, id, "static", "tokbench", "slicer_bytes"));
    snprintf(parts, sizeof parts, "%.0f / %.0f, %.0f",
             stat_median(r, id, "static", "tokbench", "slices_whole"),
             stat_median(r, id, "static", "tokbench", "slices_walked"),
             stat_median(r, id, "static", "tokbench", "residual_tokens"));
    const lexer_target_t *t = lexer_target(c);
    double target = t ? t->us_sliced : NAN;
    if (isfinite(target))
        snprintf(goal, sizeof goal, "at most %g us per mask: %s", target,
                 sl.median / 1e3 <= target ? "met" : "missed");
    pair_dat_line(f, label, &sl, &pl, 1e3, target);
    return tab_row(&s->tab, err, label, sliced, plain, gain, build, bytes, parts, goal) ? -1 :
           isfinite(target) ? 2 : 1;
}

/* The note under the slicer's plot: its targets, and where they come from. */
static void slicer_note(section_t *s)
{
    snprintf(s->note, sizeof s->note, "Targets of the issue \"The lexer and token masks\" "
             "for the sliced mask (red marks), on its development machine:");
    for (size_t i = 0; i < sizeof lexer_targets / sizeof *lexer_targets; i++) {
        const lexer_target_t *t = &lexer_targets[i];
        size_t used = strlen(s->note);
        if (isfinite(t->us_sliced))
            snprintf(s->note + used, sizeof s->note - used, " %s %s %s: at most %g us per "
                     "mask.", t->vocab, t->layout, t->pattern, t->us_sliced);
    }
}

static int sec_slicer(report_t *r, tb_err_t *err)
{
    section_t *s = new_section(r, "slicer", "Slicer: sliced mask against the plain walk");
    tab_init(&s->tab, 8, "case", "sliced (us, median)", "plain walk (us, median)",
             "gain (plain / sliced)", "slicer build (ms)", "slicer bytes",
             "slices whole / walked, residual tokens", "target of the issue");
    case_count_t n = {0};
    if (case_rows(r, s, CASES_IF("slice", ""), slice_row, &n, err))
        return -1;
    caption(r, s, "wall-clock medians, sliced and plain timed alternately, one mask from "
            "the start state; gain: plain over sliced");
    if (!n.rows)
        return not_measured(r, s, "the run has no%s slice case.", n.cases ? " timed" : "");
    slicer_note(s);
    return draw_pairs(r, s, "time per mask (microseconds, log scale)", "sliced mask",
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
        fmt(out, size, "%.0f", be);
}

static int index_row(report_t *r, section_t *s, sqlite3_stmt *c, FILE *f, tb_err_t *err)
{
    int64_t id = sqlite3_column_int64(c, 0);
    stat_t walk, idx, sl;
    if (!get_stat(r, id, "wallclock", "walk", "ns_per_step", &walk) ||
        !get_stat(r, id, "wallclock", "index", "ns_per_step", &idx))
        return 0;
    char label[200], st[32], cl[32], states[80], by[32], per[32], bytes[80], build[32], w[32],
        x[32], slc[32], ew[32], es[32], even[80];
    case_label(c, label, sizeof label);
    double nst = stat_median(r, id, "static", "index", "states"),
           nb = stat_median(r, id, "static", "index", "bytes");
    fmt(st, sizeof st, "%.0f", nst);
    fmt(cl, sizeof cl, "%.0f", stat_median(r, id, "static", "index", "classes"));
    snprintf(states, sizeof states, "%s / %s", st, cl);
    fmt(by, sizeof by, "%.0f", nb);
    fmt(per, sizeof per, "%.0f", nst > 0 ? nb / nst : NAN);
    snprintf(bytes, sizeof bytes, "%s (%s)", by, per);
    fmt(build, sizeof build, "%.2f", stat_median(r, id, "wallclock", "index", "build_ns") / 1e6);
    fmt(w, sizeof w, "%.1f", walk.median);
    fmt(x, sizeof x, "%.1f", idx.median);
    fmt(slc, sizeof slc, "%.1f",
        get_stat(r, id, "wallclock", "slicer", "ns_per_step", &sl) ? sl.median : NAN);
    breakeven_text(ew, sizeof ew, stat_median(r, id, "static", "index", "breakeven_steps"));
    breakeven_text(es, sizeof es,
                   stat_median(r, id, "static", "index", "breakeven_slicer_steps"));
    snprintf(even, sizeof even, "%s / %s", ew, es);
    pair_dat_line(f, label, &walk, &idx, 1, NAN);
    return tab_row(&s->tab, err, label, states, bytes, build, w, slc, x, even) ? -1 : 1;
}

static int sec_index(report_t *r, tb_err_t *err)
{
    section_t *s = new_section(r, "token_index", "Token index: build against walking each step");
    tab_init(&s->tab, 8, "case", "states / token classes", "bytes (per state)",
             "build (ms, median)", "walk per step (ns)", "slicer per step (ns)",
             "index per step (ns)", "break-even steps (walk / slicer)");
    case_count_t n = {0};
    if (case_rows(r, s, CASES_IF("index", ""), index_row, &n, err))
        return -1;
    caption(r, s, "wall-clock medians per step along a sample of the regex; slicer: the "
            "default (JSON string) slices; break-even: build over the per-step saving; "
            "never: the index is no faster");
    if (!n.rows)
        return not_measured(r, s, "the run has no%s index case.", n.cases ? " timed" : "");
    return draw_pairs(r, s, "time per decoding step (nanoseconds, log scale)",
                      "walking the trie", "through the index", 0, err);
}

/* --- tokenizer throughput against the references ------------------------ */

static int sec_throughput(report_t *r, tb_err_t *err)
{
    section_t *s = new_section(r, "throughput", "Tokenizer throughput against the references");
    tab_init(&s->tab, 5, "case", "tokbench MB/s", "reference", "reference MB/s",
             "speedup (min..max)");
    sqlite3_stmt *st, *refs;
    if (run_query(r, "SELECT id, vocabulary, corpus, '', status,"
                     " ifnull(message, '') FROM cases WHERE run_id = ? AND"
                     " experiment = 'tokenize' ORDER BY seq", &st, err))
        return -1;
    if (xp_db_prepare(r->db, "SELECT impl, median, min, max, bytes FROM metric_stats WHERE"
                             " case_id = ? AND source = 'wallclock' AND metric = 'ns' AND"
                             " bytes > 0 AND min > 0 ORDER BY impl", &refs, err)) {
        sqlite3_finalize(st);
        return -1;
    }
    FILE *f = open_out(r, s->name, ".dat", err);
    if (!f) {
        sqlite3_finalize(st);
        sqlite3_finalize(refs);
        return -1;
    }
    int rows = 0, rc = 0;
    double lo_s = INFINITY, hi_s = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        char label[200], mbps[32], why[200];
        snprintf(label, sizeof label, "%s %s", col(st, 1), col(st, 2));
        int64_t id = sqlite3_column_int64(st, 0);
        stat_t tb;
        if (strcmp(col(st, 4), "ok")) {
            failed_text(st, why, sizeof why);
            rc = tab_row(&s->tab, err, label, NOT_MEASURED, why, "", "");
            continue;
        }
        if (!get_stat(r, id, "tsc", "tokbench", "ns", &tb) || tb.bytes <= 0 || tb.min <= 0) {
            rc = tab_row(&s->tab, err, label, NOT_MEASURED, "", "", "");
            continue;
        }
        double own = tb.bytes * 1e3 / tb.median;
        fmt(mbps, sizeof mbps, "%.2f", own);
        sqlite3_reset(refs);
        sqlite3_bind_int64(refs, 1, id);
        int nref = 0;
        while (!rc && sqlite3_step(refs) == SQLITE_ROW) {
            double bytes = sqlite3_column_double(refs, 4);
            double med = bytes * 1e3 / sqlite3_column_double(refs, 1);
            double fast = bytes * 1e3 / sqlite3_column_double(refs, 2);
            double slow = bytes * 1e3 / sqlite3_column_double(refs, 3);
            /* the band: slowest tokbench over fastest reference, and back */
            double lo = tb.bytes * 1e3 / tb.max / fast, hi = tb.bytes * 1e3 / tb.min / slow;
            char ref[64], rm[32], sp[80], q[300], full[300];
            snprintf(ref, sizeof ref, "%s", col(refs, 0));
            fmt(rm, sizeof rm, "%.2f", med);
            snprintf(sp, sizeof sp, "%.2f (%.2f..%.2f)", own / med, lo, hi);
            rc = tab_row(&s->tab, err, label, mbps, ref, rm, sp);
            snprintf(full, sizeof full, "%s vs %s", label, ref);
            dat_label(q, sizeof q, full);
            fprintf(f, "\"%s\" %.6g %.6g %.6g 0x%06x\n", q, own / med, lo, hi,
                    own >= med ? COLOUR_MAIN : COLOUR_BAD);
            nref++;
            rows++;
            lo_s = fmin(lo_s, own / med);
            hi_s = fmax(hi_s, own / med);
        }
        if (!rc && !nref)
            rc = tab_row(&s->tab, err, label, mbps, "no reference measured", "", "");
    }
    sqlite3_finalize(st);
    sqlite3_finalize(refs);
    if (close_out(r, f, s->name, err) || rc)
        return -1;
    caption(r, s, "tokbench: TSC; references: wall clock as each reports it");
    if (!rows)
        return not_measured(r, s, "the run has no tokenize case timed against a "
                            "reference.");
    snprintf(s->note, sizeof s->note, "Speedup is tokbench's MB/s over the reference's "
             "on the same bytes: above 1, tokbench is faster; red bars are slower.");
    tb_buf_t v = {0};
    gp_num(&v, "hline", 1);
    gp_str(&v, "hlabel", "as fast as the reference");
    gp_num(&v, "logy", spread(lo_s, hi_s));
    rc = draw(r, s, "bars", spread(lo_s, hi_s) ?
              "speedup (tokbench MB/s / reference MB/s, log scale)" :
              "speedup (tokbench MB/s / reference MB/s)", &v, err);
    tb_buf_free(&v);
    return rc;
}

/* --- trie memory per token and build time ------------------------------- */

#define MAXNAMES 32

typedef struct {
    char name[MAXNAMES][64];
    int n;
} names_t;

static int name_index(names_t *n, const char *s)
{
    for (int i = 0; i < n->n; i++)
        if (!strcmp(n->name[i], s))
            return i;
    if (n->n == MAXNAMES)
        return -1;
    snprintf(n->name[n->n], sizeof n->name[0], "%s", s);
    return n->n++;
}

typedef double grid_t[MAXNAMES][MAXNAMES];

static void grid_clear(grid_t g)
{
    for (int i = 0; i < MAXNAMES; i++)
        for (int l = 0; l < MAXNAMES; l++)
            g[i][l] = NAN;
}

/* A rows x columns grid as clustered-bar data: '?' where missing. */
static int write_grid(report_t *r, const char *name, const char *corner, const names_t *rows,
                      const names_t *cols, grid_t v, tb_err_t *err)
{
    FILE *f = open_out(r, name, ".dat", err);
    if (!f)
        return -1;
    fprintf(f, "%s", corner);
    for (int l = 0; l < cols->n; l++) {
        char q[80];
        dat_label(q, sizeof q, cols->name[l]);
        fprintf(f, " \"%s\"", q);
    }
    fprintf(f, "\n");
    for (int i = 0; i < rows->n; i++) {
        char q[80];
        dat_label(q, sizeof q, rows->name[i]);
        fprintf(f, "\"%s\"", q);
        for (int l = 0; l < cols->n; l++)
            if (isfinite(v[i][l]))
                fprintf(f, " %.6g", v[i][l]);
            else
                fprintf(f, " ?");
        fprintf(f, "\n");
    }
    return close_out(r, f, name, err);
}

/* The smallest and largest finite values of a grid, for spread(). */
static void grid_range(grid_t v, int nrows, int ncols, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = 0;
    for (int i = 0; i < nrows; i++)
        for (int l = 0; l < ncols; l++)
            if (isfinite(v[i][l])) {
                *lo = fmin(*lo, v[i][l]);
                *hi = fmax(*hi, v[i][l]);
            }
}

typedef struct {
    names_t vocabs, layouts;
    grid_t bytes_per_key, build_ms;
} matrix_t;

/* Draws a grid with the clustered template, on a log scale where it
 * spans orders of magnitude. */
static int draw_grid(report_t *r, section_t *s, const char *ylab, int ncols, grid_t v,
                     int nrows, tb_err_t *err)
{
    double lo, hi;
    grid_range(v, nrows, ncols, &lo, &hi);
    char label[160];
    snprintf(label, sizeof label, "%s%s", ylab, spread(lo, hi) ? " (log scale)" : "");
    tb_buf_t b = {0};
    gp_num(&b, "ncols", ncols + 1);
    gp_num(&b, "logy", spread(lo, hi));
    int rc = draw(r, s, "clustered", label, &b, err);
    tb_buf_free(&b);
    return rc;
}

/* One case per vocabulary and layout: a lookup case where the run has one
 * (the structure over every token, with nodes and bytes per key and the
 * median of several builds, and the external Darts and MARISA beside
 * tokbench's layouts), else a walk case (one build; specials left out). */
#define MEMORY_CASES                                                          \
    "SELECT id, vocabulary, layout, experiment FROM (SELECT id, vocabulary,"  \
    " layout, experiment, ROW_NUMBER() OVER (PARTITION BY vocabulary, layout" \
    " ORDER BY experiment = 'lookup' DESC, seq) AS k, min(seq) OVER"          \
    " (PARTITION BY vocabulary, layout) AS first FROM cases WHERE run_id = ?" \
    " AND experiment IN ('lookup', 'walk') AND status = 'ok' AND layout <> '')" \
    " WHERE k = 1 ORDER BY first"

static int sec_memory(report_t *r, tb_err_t *err)
{
    section_t *mem = new_section(r, "trie_memory", "Trie memory per token");
    section_t *bld = new_section(r, "build_time", "Trie build time");
    tab_init(&mem->tab, 7, "vocabulary", "layout", "keys", "trie MiB", "bytes/key",
             "nodes/key", "from");
    tab_init(&bld->tab, 5, "vocabulary", "layout", "build ms (median)", "min..max",
             "from");
    matrix_t *m = calloc(1, sizeof *m);
    if (!m)
        return tb_fail(err, "out of memory");
    grid_clear(m->bytes_per_key);
    grid_clear(m->build_ms);
    sqlite3_stmt *st;
    if (run_query(r, MEMORY_CASES, &st, err)) {
        free(m);
        return -1;
    }
    int rc = 0, nmem = 0, nbld = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        int lookup = !strcmp(col(st, 3), "lookup");
        stat_t b, n, t, k;
        double keys = NAN, bpk = NAN, npk = NAN, bytes = NAN;
        if (lookup) {
            if (get_stat(r, id, "static", NULL, "keys", &k))
                keys = k.median;
            if (get_stat(r, id, "static", NULL, "bytes_per_key", &b))
                bpk = b.median;
            if (get_stat(r, id, "static", NULL, "nodes_per_key", &n))
                npk = n.median;
            if (get_stat(r, id, "static", NULL, "trie_bytes", &b))
                bytes = b.median;
        } else {
            /* a walk's trie holds what a walk under "any" allows */
            keys = vocab_tokens(r, col(st, 1));
            if (get_stat(r, id, "static", "tokbench", "trie_bytes", &b)) {
                bytes = b.median;
                bpk = b.median / keys;
            }
            if (get_stat(r, id, "static", "tokbench", "trie_nodes", &n))
                npk = n.median / keys;
        }
        int ht = get_stat(r, id, "wallclock", NULL, "build_ns", &t);
        const char *from = lookup ? "lookup (every token)" : "walk (specials left out)";
        char kk[32], mib[32], bp[32], np[32], ms[32], range[64];
        fmt(kk, sizeof kk, "%.0f", keys);
        fmt(mib, sizeof mib, "%.2f", bytes / 1048576.0);
        fmt(bp, sizeof bp, "%.2f", bpk);
        fmt(np, sizeof np, "%.3f", npk);
        fmt(ms, sizeof ms, "%.2f", ht ? t.median / 1e6 : NAN);
        if (ht)
            snprintf(range, sizeof range, "%.2f..%.2f", t.min / 1e6, t.max / 1e6);
        else
            snprintf(range, sizeof range, "%s", "");
        rc = tab_row(&mem->tab, err, col(st, 1), col(st, 2), kk, mib, bp, np, from) ||
             tab_row(&bld->tab, err, col(st, 1), col(st, 2), ms, range,
                     lookup ? "lookup (median of the builds)" : "walk (one build)");
        int vi = name_index(&m->vocabs, col(st, 1)), li = name_index(&m->layouts, col(st, 2));
        if (vi < 0 || li < 0)
            continue; /* in the tables, too many to draw */
        if (isfinite(bpk)) {
            m->bytes_per_key[vi][li] = bpk;
            nmem++;
        }
        if (ht) {
            m->build_ms[vi][li] = t.median / 1e6;
            nbld++;
        }
    }
    sqlite3_finalize(st);
    if (rc) {
        free(m);
        return -1;
    }
    caption(r, mem, "bytes: as each structure reports them, from the lookup cases "
            "(else the walks)");
    caption(r, bld, "build time: wall clock, from the lookup cases (else the walks)");
    if (nmem)
        rc = write_grid(r, mem->name, "vocabulary", &m->vocabs, &m->layouts,
                        m->bytes_per_key, err);
    if (!rc && nbld)
        rc = write_grid(r, bld->name, "vocabulary", &m->vocabs, &m->layouts, m->build_ms,
                        err);
    if (!rc && nmem) {
        snprintf(mem->note, sizeof mem->note, "darts (Darts 0.32) and marisa (libmarisa) "
                 "are external libraries, measured by the lookup driver on the same keys.");
        rc = draw_grid(r, mem, "trie bytes per key", m->layouts.n, m->bytes_per_key,
                       m->vocabs.n, err);
    } else if (!rc) {
        not_measured(r, mem, "no lookup or walk case of this run has the structure's "
                     "bytes and its number of keys.");
    }
    if (!rc && nbld)
        rc = draw_grid(r, bld, "build time (milliseconds)", m->layouts.n, m->build_ms,
                       m->vocabs.n, err);
    else if (!rc)
        not_measured(r, bld, "no lookup or walk case of this run timed its build.");
    free(m);
    return rc;
}

/* --- lookup and prefix search per key, with ratios to Darts and MARISA -- */

/* The time per key of a lookup case: TSC median over the keys (or corpus
 * positions) one repetition handles; 1 if the run has it. */
static int per_key(report_t *r, int64_t id, stat_t *ns)
{
    return get_stat(r, id, "tsc", "tokbench", "ns", ns) && ns->min > 0;
}

/* Items of the case's timed metric (keys or positions per repetition). */
static double items_of(report_t *r, int64_t id)
{
    sqlite3_stmt *st = figure_query(r, "SELECT items FROM metric_stats WHERE case_id = ?"
                                    " AND source = 'tsc' AND impl = 'tokbench' AND"
                                    " metric = 'ns'", id);
    double items = st ? first_number(st) : NAN;
    return items > 0 ? items : NAN;
}

/* Time per key of the same work (vocabulary, pattern, options) done by
 * another implementation in this run: NAN when it was not measured. */
static double other_per_key(report_t *r, sqlite3_stmt *c, const char *impl)
{
    double v = NAN;
    sqlite3_stmt *st = figure_query(r, "SELECT id FROM cases WHERE run_id = ? AND"
                                    " experiment = 'lookup' AND status = 'ok' AND"
                                    " vocabulary = ? AND layout = ? AND"
                                    " ifnull(pattern, '') = ? AND ifnull(corpus, '') = ?"
                                    " AND ifnull(options, '') = ? ORDER BY seq LIMIT 1",
                                    r->run);
    if (!st)
        return v;
    sqlite3_bind_text(st, 2, col(c, 1), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, impl, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, col(c, 3), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 5, col(c, 4), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 6, col(c, 5), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        stat_t ns;
        double items = items_of(r, id);
        if (per_key(r, id, &ns) && isfinite(items))
            v = ns.median / items;
    }
    sqlite3_finalize(st);
    return v;
}

static int sec_lookup(report_t *r, tb_err_t *err)
{
    section_t *s = new_section(r, "lookup_time",
                               "Exact lookup and prefix search: time per key");
    tab_init(&s->tab, 6, "work", "implementation", "ns per key (median)", "min..max",
             "x darts", "x marisa");
    sqlite3_stmt *st;
    if (run_query(r, "SELECT id, vocabulary, layout, pattern, corpus, options,"
                     " status, ifnull(message, '') FROM cases WHERE run_id = ? AND"
                     " experiment = 'lookup' ORDER BY seq", &st, err))
        return -1;
    names_t *works = calloc(1, sizeof *works), *impls = calloc(1, sizeof *impls);
    double (*grid)[MAXNAMES] = malloc(sizeof(grid_t));
    if (!works || !impls || !grid) {
        free(works);
        free(impls);
        free(grid);
        sqlite3_finalize(st);
        return tb_fail(err, "out of memory");
    }
    grid_clear(grid);
    int rc = 0, cases = 0, drawn = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        char work[200], med[32], range[64], xd[32], xm[32];
        /* "llama3 exact order=random", "gemma3 prefixes multi max_bytes=200000" */
        snprintf(work, sizeof work, "%s %s%s%s%s%s", col(st, 1), col(st, 3),
                 *col(st, 4) ? " " : "", col(st, 4), *col(st, 5) ? " " : "", col(st, 5));
        cases++;
        if (strcmp(col(st, 6), "ok")) {
            char why[200];
            snprintf(why, sizeof why, "%s: %.120s", col(st, 6), col(st, 7));
            rc = tab_row(&s->tab, err, work, col(st, 2), NOT_MEASURED, why, "", "");
            continue;
        }
        int64_t id = sqlite3_column_int64(st, 0);
        stat_t ns;
        double items = items_of(r, id);
        if (!per_key(r, id, &ns) || !isfinite(items)) {
            rc = tab_row(&s->tab, err, work, col(st, 2), NOT_MEASURED, "", "", "");
            continue;
        }
        double own = ns.median / items;
        double darts = other_per_key(r, st, "darts"), marisa = other_per_key(r, st, "marisa");
        fmt(med, sizeof med, "%.1f", own);
        snprintf(range, sizeof range, "%.1f..%.1f", ns.min / items, ns.max / items);
        fmt(xd, sizeof xd, "%.2f", own / darts);
        fmt(xm, sizeof xm, "%.2f", own / marisa);
        rc = tab_row(&s->tab, err, work, col(st, 2), med, range, xd, xm);
        int wi = name_index(works, work), li = name_index(impls, col(st, 2));
        if (wi >= 0 && li >= 0) {
            grid[wi][li] = own;
            drawn++;
        }
    }
    sqlite3_finalize(st);
    caption(r, s, "time: TSC median over the keys (exact) or corpus positions (prefixes) "
            "of one repetition");
    if (!rc && drawn) {
        snprintf(s->note, sizeof s->note, "x darts, x marisa: time per key over that of "
                 "Darts 0.32 / libmarisa on the same keys in the same loop (below 1: "
                 "faster than the library).  exact looks every token up; prefixes runs "
                 "a common-prefix search at every byte of the corpus.");
        rc = write_grid(r, s->name, "work", works, impls, grid, err);
        if (!rc)
            rc = draw_grid(r, s, "nanoseconds per key", impls->n, grid, works->n, err);
    } else if (!rc) {
        not_measured(r, s, "the run has no lookup case%s.",
                     cases ? " with a timed repetition" : "");
    }
    free(works);
    free(impls);
    free(grid);
    return rc;
}

/* --- MaskBench ---------------------------------------------------------- */

/* The series of the distribution plots: mbtable's measured columns. */
static const struct {
    const char *impl, *tbm, *ttfm, *title;
} mb_series[] = {
    {"tokbench", "tbm_us", "ttfm_us", "tokbench, wall"},
    {"tokbench", "tbm_cpu_us", "ttfm_cpu_us", "tokbench, thread CPU time"},
    {"xgrammar", "tbm_us", "ttfm_us", "XGrammar 0.1.27, wall (its sample)"},
    {"xgrammar", "tbm_cpu_us", "ttfm_cpu_us", "XGrammar 0.1.27, process CPU time"},
};

/* One series of cdf.gp: the share of samples slower than x at 300 points
 * evenly spaced on the log of that share, down to one sample, the slowest
 * drawn at that share. */
static void survival_block(FILE *f, const char *title, const xp_samples_t *s)
{
    char q[200];
    dat_label(q, sizeof q, title);
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
    for (int c = 5; c < t->ncols; c++) {
        char q[200];
        dat_label(q, sizeof q, t->head[c]);
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
    FILE *f = open_out(r, s->name, ".dat", err);
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
    if (close_out(r, f, s->name, err) || rc)
        return -1;
    if (!series)
        return not_measured(r, s, "the maskbench case has no %s samples.", what);
    char xlab[96];
    snprintf(xlab, sizeof xlab, "%s (microseconds, log scale)",
             strcmp(what, "TBM") ? "time to first mask" : "time per mask");
    tb_buf_t v = {0};
    gp_str(&v, "xlab", xlab);
    gp_num(&v, "nseries", series);
    gp_num(&v, "nmarks", marks);
    rc = draw(r, s, "cdf", "share of samples slower (log scale)", &v, err);
    tb_buf_free(&v);
    return rc;
}

/* Compile errors grouped by the first words of their reason, per engine,
 * the most frequent first, with one schema of each. */
static int mb_reasons(report_t *r, const xp_mb_table_t *t, tb_err_t *err)
{
    section_t *s = new_section(r, "maskbench_errors", "MaskBench: compile errors by reason");
    s->table_only = 1;
    caption(r, s, "outcomes table, compile errors grouped by the first words of the reason");
    tab_init(&s->tab, 4, "engine", "reason (first words)", "schemas", "example");
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
        xp_mb_reason_group(col(st, 1), grp, sizeof grp);
        sqlite3_reset(ins);
        sqlite3_bind_text(ins, 1, col(st, 0), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ins, 2, grp, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ins, 3, col(st, 2), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ins, 4, col(st, 1), -1, SQLITE_TRANSIENT);
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
            snprintf(example, sizeof example, "%.160s%s", col(st, 3),
                     strlen(col(st, 3)) > 160 ? "..." : "");
            rc = tab_row(&s->tab, err, col(st, 0), col(st, 1), col(st, 2), example);
        }
        sqlite3_finalize(st);
    }
    if (!rc && !tab_rows(&s->tab))
        snprintf(s->note, sizeof s->note, "No compile errors.");
    return rc;
}

/* Every validation and invalidation error (and crash and timeout), with
 * its detail: the instance and token at fault. */
static int mb_failures(report_t *r, const xp_mb_table_t *t, tb_err_t *err)
{
    section_t *s = new_section(r, "maskbench_failures",
                               "MaskBench: validation and invalidation errors, crashes, timeouts");
    s->table_only = 1;
    caption(r, s, "outcomes table; validation error: a valid instance refused (the "
            "instance and token); invalidation error: an invalid instance accepted whole");
    tab_init(&s->tab, 4, "engine", "schema", "outcome", "detail");
    sqlite3_stmt *st;
    if (xp_db_prepare_id(r->db, "SELECT impl, item, outcome, ifnull(detail, '') FROM outcomes"
                                " WHERE case_id = ? AND outcome IN ('validation error',"
                                " 'invalidation error', 'crash', 'timeout') ORDER BY"
                                " impl <> 'tokbench', impl, outcome DESC, item",
                         t->case_id, &st, err))
        return -1;
    int rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW)
        rc = tab_row(&s->tab, err, col(st, 0), col(st, 1), col(st, 2), col(st, 3));
    sqlite3_finalize(st);
    if (!rc && !tab_rows(&s->tab))
        snprintf(s->note, sizeof s->note, "None.");
    return rc;
}

/* The MaskBench table (mbtable.h) under the TBM plot, the TTFM plot, the
 * compile errors by reason and the failures. */
static int sec_maskbench(report_t *r, tb_err_t *err)
{
    section_t *s = new_section(r, "maskbench", "MaskBench: JSON Schema masks (TBM) and "
                               "outcomes against the published results");
    section_t *ttfm = new_section(r, "maskbench_ttfm", "MaskBench: time to first mask (TTFM)");
    xp_mb_table_t *t = malloc(sizeof *t);
    if (!t)
        return tb_fail(err, "out of memory");
    int rc = xp_mb_table(r->db, r->run, r->anchors, t, err);
    const char *how = "lines: measured here (outcomes and measurements); marks: "
                      "published percentiles, other machine";
    caption(r, s, how);
    caption(r, ttfm, how);
    if (!rc && !t->measured) {
        not_measured(r, s, "%s", t->why);
        not_measured(r, ttfm, "%s", t->why);
    }
    if (!rc && t->measured) {
        tab_init(&s->tab, t->ncols, t->head[0], t->head[1], t->head[2], t->head[3],
                 t->head[4], t->ncols > 5 ? t->head[5] : "", t->ncols > 6 ? t->head[6] : "");
        for (int i = 0; !rc && i < t->nrows; i++)
            rc = tab_row(&s->tab, err, t->cell[i][0], t->cell[i][1], t->cell[i][2],
                         t->cell[i][3], t->cell[i][4], t->cell[i][5], t->cell[i][6]);
        snprintf(s->note, sizeof s->note, "%s", t->note);
        rc = rc || draw_survival(r, s, t, "TBM", err) || draw_survival(r, ttfm, t, "TTFM", err) ||
             mb_reasons(r, t, err) || mb_failures(r, t, err);
    }
    free(t);
    return rc;
}

/* --- machines side by side -------------------------------------------- */

#define MAXMACHINES (MAXCOLS - 1)

/* The walk case of run `run` with the same row as the reported run's. */
static int64_t same_case(report_t *r, int64_t run, sqlite3_stmt *walk)
{
    int64_t id = -1;
    sqlite3_stmt *st = figure_query(r, "SELECT id FROM cases WHERE run_id = ? AND"
                                    " experiment = 'walk' AND vocabulary = ? AND"
                                    " layout = ? AND pattern = ? AND status = 'ok'"
                                    " ORDER BY seq LIMIT 1", run);
    if (!st)
        return -1;
    for (int i = 1; i <= 3; i++)
        sqlite3_bind_text(st, i + 1, col(walk, i), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) == SQLITE_ROW)
        id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return id;
}

/* Cycles per node of the reported run's walks on every machine of the
 * database (its latest run there; the reported run for its own machine),
 * as gathered by `tokbench merge`. */
static int sec_machines(report_t *r, tb_err_t *err)
{
    section_t *s = new_section(r, "machines", "Machines side by side");
    sqlite3_stmt *st;
    if (run_query(r, "WITH me AS (SELECT cpu_model, host FROM runs WHERE id = ?1)"
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
                 *col(st, 1) ? col(st, 1) : "unknown CPU", col(st, 2), (long long)run[n],
                 cyc[n].source && !strcmp(cyc[n].metric, "ref_cycles") ? "TSC ref" : "core");
        n++;
    }
    sqlite3_finalize(st);
    caption(r, s, "cycles per node: core cycles (PAPI) where a machine counts them, "
            "else TSC reference cycles, from each machine's latest run; each column "
            "says which");
    if (n < 2)
        return not_measured(r, s, "the database holds runs of one machine only; "
                            "`tokbench merge` the databases of others to compare "
                            "machines here.");
    tab_init(&s->tab, n + 1, "case", name[0], n > 1 ? name[1] : "", n > 2 ? name[2] : "",
             n > 3 ? name[3] : "", n > 4 ? name[4] : "", n > 5 ? name[5] : "",
             n > 6 ? name[6] : "");
    FILE *f = open_run_query(r, WALK_CASES, s->name, &st, err);
    if (!f)
        return -1;
    fprintf(f, "case");
    for (int m = 0; m < n; m++) {
        char q[80];
        dat_label(q, sizeof q, name[m]);
        fprintf(f, " \"%s\"", q);
    }
    fprintf(f, "\n");
    int rows = 0, rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        if (strcmp(col(st, 4), "ok"))
            continue;
        char label[200], q[200], cell[MAXMACHINES][48];
        case_label(st, label, sizeof label);
        dat_label(q, sizeof q, label);
        fprintf(f, "\"%s\"", q);
        int have = 0;
        for (int m = 0; m < n; m++) {
            int64_t id = same_case(r, run[m], st);
            stat_t c;
            if (id > 0 && column_stat(r, id, &cyc[m], &c)) {
                snprintf(cell[m], sizeof cell[m], "%.2f", c.median / c.nodes);
                fprintf(f, " %.6g", c.median / c.nodes);
                have += m > 0;
            } else {
                snprintf(cell[m], sizeof cell[m], "%s", NOT_MEASURED);
                fprintf(f, " ?");
            }
        }
        fprintf(f, "\n");
        rows += have > 0;
        rc = tab_row(&s->tab, err, label, cell[0], n > 1 ? cell[1] : "",
                     n > 2 ? cell[2] : "", n > 3 ? cell[3] : "", n > 4 ? cell[4] : "",
                     n > 5 ? cell[5] : "", n > 6 ? cell[6] : "");
    }
    sqlite3_finalize(st);
    if (close_out(r, f, s->name, err) || rc)
        return -1;
    if (!rows)
        return not_measured(r, s, "no other machine ran the walks of this run.");
    snprintf(s->note, sizeof s->note, "TSC reference cycles tick at each machine's "
             "own TSC frequency: compare them across machines with care.");
    tb_buf_t v = {0};
    gp_num(&v, "ncols", n + 1);
    gp_num(&v, "logy", 1); /* layouts differ by orders of magnitude */
    rc = draw(r, s, "clustered", "cycles per visited node (log scale)", &v, err);
    tb_buf_free(&v);
    return rc;
}

/* --- one run against another -------------------------------------------- */

static int sec_compare(report_t *r, tb_err_t *err)
{
    section_t *s = new_section(r, "compare", "");
    snprintf(s->title, sizeof s->title, "Run %lld against run %lld", (long long)r->run,
             (long long)r->vs);
    char hv[64], hr[64];
    snprintf(hv, sizeof hv, "run %lld median us", (long long)r->vs);
    snprintf(hr, sizeof hr, "run %lld median us", (long long)r->run);
    tab_init(&s->tab, 5, "case", hv, hr, "ratio (noise band)", "verdict");
    /* the headline of every case: tokbench's time by the TSC */
    sqlite3_stmt *st;
    if (run_query(r,
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
    FILE *f = open_out(r, s->name, ".dat", err);
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
        rc = tab_row(&s->tab, err, col(st, 0), a, b, ratio, verdict);
        dat_label(q, sizeof q, col(st, 0));
        fprintf(f, "\"%.40s\" %.6g %.6g %.6g 0x%06x\n", q, rm / vm, lo, hi,
                *verdict == 'R' ? COLOUR_BAD : *verdict == 'f' ? COLOUR_GOOD : COLOUR_SAME);
        rows++;
        worse += *verdict == 'R';
        better += *verdict == 'f';
    }
    sqlite3_finalize(st);
    if (close_out(r, f, s->name, err) || rc)
        return -1;
    char other[700];
    const run_info_t *o = &r->vs_info;
    snprintf(other, sizeof other, "against run %lld, commit %.10s%s on %s; time: TSC",
             (long long)o->id, *o->commit ? o->commit : "unknown", o->dirty ? "+dirty" : "",
             strcmp(o->cpu, r->info.cpu) ? o->cpu : "the same CPU");
    caption(r, s, other);
    if (!rows)
        return not_measured(r, s, "the two runs have no successful case in common.");
    snprintf(s->note, sizeof s->note, "Ratio: time in run %lld over time in run %lld "
             "(above 1: slower).  The band goes from fastest/slowest to slowest/fastest "
             "repetition; a case is a regression (red) only when its whole range is "
             "slower.  %d regression%s, %d faster (green).", (long long)r->run,
             (long long)r->vs, worse, worse == 1 ? "" : "s", better);
    tb_buf_t v = {0};
    gp_num(&v, "hline", 1);
    gp_str(&v, "hlabel", "no change");
    gp_num(&v, "logy", 1); /* ratios: twice as slow as far from 1 as twice as fast */
    rc = draw(r, s, "bars", "time ratio (this run / the other, log scale)", &v, err);
    tb_buf_free(&v);
    return rc;
}

/* --- the page ----------------------------------------------------------- */

static void html_esc(FILE *f, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
}

/* Markdown table cells and text: pipes and markup characters escaped. */
static void md_esc(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (strchr("|\\*`[]<>", *s))
            fputc('\\', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
}

static void provenance_rows(const run_info_t *ri, const char *rows[][2], int *n,
                            char bufs[][512])
{
    int k = 0;
    snprintf(bufs[0], 512, "%lld", (long long)ri->id);
    snprintf(bufs[1], 512, "%s%s", ri->status, strcmp(ri->status, "complete") ?
             " (the suite did not finish: only the cases measured so far)" : "");
    snprintf(bufs[2], 512, "%s%s", *ri->commit ? ri->commit : "unknown",
             ri->dirty ? " (dirty tree)" : "");
    snprintf(bufs[3], 512, "%s, %d cores, TSC %.3f GHz", ri->cpu, ri->cores,
             ri->tsc_hz / 1e9);
    snprintf(bufs[4], 512, "%s .. %s", ri->started, *ri->ended ? ri->ended : "?");
    rows[k][0] = "run"; rows[k++][1] = bufs[0];
    rows[k][0] = "status"; rows[k++][1] = bufs[1];
    rows[k][0] = "suite"; rows[k++][1] = ri->suite;
    rows[k][0] = "commit"; rows[k++][1] = bufs[2];
    rows[k][0] = "machine"; rows[k++][1] = bufs[3];
    rows[k][0] = "host"; rows[k++][1] = ri->host;
    rows[k][0] = "kernel"; rows[k++][1] = ri->kernel;
    rows[k][0] = "virtualization"; rows[k++][1] = *ri->virt ? ri->virt : "none";
    rows[k][0] = "compiler"; rows[k++][1] = ri->compiler;
    rows[k][0] = "counter sources"; rows[k++][1] = ri->sources;
    rows[k][0] = "time"; rows[k++][1] = bufs[4];
    *n = k;
}

static int write_html(report_t *r, tb_err_t *err)
{
    FILE *f = open_out(r, "index", ".html", err);
    if (!f)
        return -1;
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
               "<title>tokbench report: run %lld</title>\n<style>\n"
               "body { font-family: sans-serif; max-width: 1040px; margin: 2em auto; }\n"
               "table { border-collapse: collapse; margin: 0.5em 0 2em; }\n"
               "td, th { border: 1px solid #ccc; padding: 2px 8px; text-align: left; }\n"
               "img { max-width: 100%%; }\n.caption { color: #555; }\n"
               "</style>\n</head>\n<body>\n<h1>tokbench report: run %lld</h1>\n",
            (long long)r->run, (long long)r->run);
    const char *prov[16][2];
    char bufs[5][512];
    int n;
    provenance_rows(&r->info, prov, &n, bufs);
    fprintf(f, "<table>\n");
    for (int i = 0; i < n; i++) {
        fprintf(f, "<tr><th>");
        html_esc(f, prov[i][0]);
        fprintf(f, "</th><td>");
        html_esc(f, prov[i][1]);
        fprintf(f, "</td></tr>\n");
    }
    fprintf(f, "</table>\n");
    for (int i = 0; i < r->nsec; i++) {
        const section_t *s = &r->sec[i];
        fprintf(f, "<h2 id=\"%s\">", s->name);
        html_esc(f, s->title);
        fprintf(f, "</h2>\n<p class=\"caption\">");
        html_esc(f, s->caption);
        fprintf(f, "</p>\n");
        if (s->drawn)
            fprintf(f, "<p><a href=\"%s.svg\"><img src=\"%s.png\" alt=\"", s->name, s->name);
        if (s->drawn) {
            html_esc(f, s->title);
            fprintf(f, "\"></a><br>\n<a href=\"%s.svg\">SVG</a> &middot; "
                       "<a href=\"%s.dat\">data</a></p>\n", s->name, s->name);
        } else if (!s->table_only) {
            fprintf(f, "<p><em>No plot: %s.</em></p>\n",
                    s->failed ? "gnuplot failed" : NOT_MEASURED);
        }
        if (*s->note) {
            fprintf(f, "<p>");
            html_esc(f, s->note);
            fprintf(f, "</p>\n");
        }
        const table_t *t = &s->tab;
        if (!tab_rows(t))
            continue;
        fprintf(f, "<table>\n<tr>");
        for (int c = 0; c < t->ncols; c++) {
            fprintf(f, "<th>");
            html_esc(f, t->head[c]);
            fprintf(f, "</th>");
        }
        fprintf(f, "</tr>\n");
        for (size_t row = 0; row < tab_rows(t); row++) {
            fprintf(f, "<tr>");
            for (int c = 0; c < t->ncols; c++) {
                fprintf(f, "<td>");
                html_esc(f, t->cells.data[row * (size_t)t->ncols + (size_t)c]);
                fprintf(f, "</td>");
            }
            fprintf(f, "</tr>\n");
        }
        fprintf(f, "</table>\n");
    }
    fprintf(f, "</body>\n</html>\n");
    return close_out(r, f, "index.html", err);
}

static int write_md(report_t *r, tb_err_t *err)
{
    FILE *f = open_out(r, "index", ".md", err);
    if (!f)
        return -1;
    fprintf(f, "# tokbench report: run %lld\n\n| | |\n| --- | --- |\n", (long long)r->run);
    const char *prov[16][2];
    char bufs[5][512];
    int n;
    provenance_rows(&r->info, prov, &n, bufs);
    for (int i = 0; i < n; i++) {
        fprintf(f, "| ");
        md_esc(f, prov[i][0]);
        fprintf(f, " | ");
        md_esc(f, prov[i][1]);
        fprintf(f, " |\n");
    }
    for (int i = 0; i < r->nsec; i++) {
        const section_t *s = &r->sec[i];
        fprintf(f, "\n## ");
        md_esc(f, s->title);
        fprintf(f, "\n\n");
        md_esc(f, s->caption);
        fprintf(f, "\n\n");
        if (s->drawn)
            fprintf(f, "![%s](%s.png)\n\n[SVG](%s.svg) · [data](%s.dat)\n\n", s->name,
                    s->name, s->name, s->name);
        else if (!s->table_only)
            fprintf(f, "No plot: %s.\n\n", s->failed ? "gnuplot failed" : NOT_MEASURED);
        if (*s->note) {
            md_esc(f, s->note);
            fprintf(f, "\n\n");
        }
        const table_t *t = &s->tab;
        if (!tab_rows(t))
            continue;
        for (int c = 0; c < t->ncols; c++) {
            fprintf(f, "| ");
            md_esc(f, t->head[c]);
            fprintf(f, " ");
        }
        fprintf(f, "|\n");
        for (int c = 0; c < t->ncols; c++)
            fprintf(f, "| --- ");
        fprintf(f, "|\n");
        for (size_t row = 0; row < tab_rows(t); row++) {
            for (int c = 0; c < t->ncols; c++) {
                fprintf(f, "| ");
                md_esc(f, t->cells.data[row * (size_t)t->ncols + (size_t)c]);
                fprintf(f, " ");
            }
            fprintf(f, "|\n");
        }
    }
    return close_out(r, f, "index.md", err);
}

/* --- the command -------------------------------------------------------- */

static int mkdirs(const char *path, tb_err_t *err)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; ; s++) {
        if (*s == '/' || !*s) {
            char c = *s;
            *s = 0;
            if (mkdir(p, 0755) && errno != EEXIST)
                return tb_fail(err, "%s: cannot create the folder: %s", p, strerror(errno));
            *s = c;
            if (!c)
                break;
        }
    }
    return 0;
}

/* The run to report: the one named, else the latest. */
static int pick_run(report_t *r, int64_t *run, tb_err_t *err)
{
    if (*run > 0)
        return 0;
    sqlite3_stmt *st;
    if (xp_db_prepare(r->db, "SELECT max(id) FROM runs", &st, err))
        return -1;
    int found = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL;
    if (found)
        *run = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (!found)
        return tb_fail(err, "%s: the database has no runs to report; run a suite first "
                       "(tokbench run experiments/suites/default.csv --db %s)",
                       r->db->path, r->db->path);
    return 0;
}

static int parse_id(const char *opt, const char *s, int64_t *v)
{
    char *end;
    long long x = s ? strtoll(s, &end, 10) : 0;
    if (!s || !*s || *end || x <= 0) {
        fprintf(stderr, "tokbench report: %s needs a run number (see tokbench runs)\n", opt);
        return -1;
    }
    *v = x;
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tokbench report [--db FILE] [--run ID] [--vs ID] --out DIR\n"
            "Draws the plots of one run with gnuplot (PNG and SVG, templates in\n"
            "scripts/plots/, data next to each plot as NAME.dat) and one page that\n"
            "shows them with a short table under each: DIR/index.html and DIR/index.md.\n"
            "  cycles_per_node  cycles per visited node of every walk but lex: and g: (see\n"
            "                   lexer_masks), with the 13-cycle baseline (PAPI core\n"
            "                   cycles, else TSC reference cycles, labelled as such)\n"
            "  misses_per_node  L1D and LLC misses and branch mispredictions per node\n"
            "                   (PAPI, else callgrind's simulation; one source and one\n"
            "                   event per column, named after what it counts)\n"
            "  mask_time        time per mask against vocabulary size\n"
            "  lexer_masks      walks under the lexer and grammars (re:, lex:, g:): time\n"
            "                   per mask and ns\n"
            "                   per visited node, with the lexer issue's targets\n"
            "  slicer           slice cases: the sliced mask against the plain walk, the\n"
            "                   gain, the slicer's build time and bytes, the sliced target\n"
            "  token_index      index cases: states, entries, bytes, build time, per-step\n"
            "                   cost walking and through the index, break-even steps\n"
            "  throughput       tokenizer MB/s over each reference's\n"
            "  trie_memory      trie bytes per key, per vocabulary and layout (the lookup\n"
            "                   cases' figures, Darts and MARISA included; else the walks')\n"
            "  build_time       trie build time, per vocabulary and layout\n"
            "  lookup_time      exact lookup and prefix search, ns per key per\n"
            "                   implementation, with ratios to Darts and MARISA\n"
            "  maskbench        the MaskBench table (TBM and TTFM percentiles, outcomes) of\n"
            "                   tokbench and XGrammar beside the published columns\n"
            "                   (experiments/anchors/maskbench.csv); the TBM distribution\n"
            "  maskbench_ttfm   the TTFM distribution; then compile errors by reason and\n"
            "                   every validation and invalidation error (tables)\n"
            "  machines         cycles per node of the same walks on every machine in\n"
            "                   the database (see tokbench merge)\n"
            "  compare          with --vs: time of each case over the other run's, with\n"
            "                   its noise band; regressions in red\n"
            "--db FILE  the results database (default %s)\n"
            "--run ID   the run to report (default: the latest, complete or not)\n"
            "--vs ID    also compare the run with run ID\n"
            "A figure the run does not have is written as \"not measured\", never\n"
            "drawn as zero.  Needs gnuplot (Debian package gnuplot-nox).\n",
            XP_DEFAULT_DB);
}

int xp_cmd_report(int argc, char **argv)
{
    const char *path = xp_take_db_arg(&argc, argv);
    if (xp_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    report_t *r = calloc(1, sizeof *r);
    if (!r) {
        fprintf(stderr, "tokbench: out of memory\n");
        return 1;
    }
    for (int i = 1; i < argc; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--out") && next) {
            r->out = next;
            i++;
        } else if (!strcmp(argv[i], "--run") || !strcmp(argv[i], "--vs")) {
            if (parse_id(argv[i], next, !strcmp(argv[i], "--run") ? &r->run : &r->vs)) {
                free(r);
                return 2;
            }
            i++;
        } else {
            fprintf(stderr, "tokbench report: unexpected argument '%s'\n", argv[i]);
            usage(stderr);
            free(r);
            return 2;
        }
    }
    if (!r->out) {
        fprintf(stderr, "tokbench report: --out DIR is required\n");
        usage(stderr);
        free(r);
        return 2;
    }
    tb_err_t err;
    const char *root = xp_data_root(&err);
    int rc = root ? 0 : -1;
    if (!rc) {
        snprintf(r->plots, sizeof r->plots, "%s/scripts/plots", root);
        snprintf(r->anchors, sizeof r->anchors, "%s/experiments/anchors/maskbench.csv", root);
        snprintf(r->log, sizeof r->log, "%s/gnuplot.log", r->out);
        r->db = xp_db_open(path, 0, &err);
        rc = r->db ? 0 : -1;
    }
    if (!rc)
        rc = pick_run(r, &r->run, &err) || load_run(r, r->run, &r->info, &err) ||
             (r->vs && load_run(r, r->vs, &r->vs_info, &err)) || mkdirs(r->out, &err);
    if (!rc) {
        unlink(r->log);
        /* gnuplot is needed for every plot: say so once, up front */
        char *argv_v[] = {"gnuplot", "--version", NULL};
        rc = spawn_gnuplot(r->log, argv_v, &err) < 0 ? -1 : 0;
    }
    if (!rc)
        rc = sec_cycles(r, &err) || sec_misses(r, &err) || sec_mask_time(r, &err) ||
             sec_lexer(r, &err) || sec_slicer(r, &err) || sec_index(r, &err) ||
             sec_throughput(r, &err) || sec_memory(r, &err) ||
             sec_lookup(r, &err) || sec_maskbench(r, &err) || sec_machines(r, &err) ||
             (r->vs && sec_compare(r, &err));
    if (!rc && !r->vs)
        remove_plot(r, "compare");
    if (!rc)
        rc = write_html(r, &err) || write_md(r, &err);
    for (int i = 0; i < r->nsec; i++)
        tab_free(&r->sec[i].tab);
    xp_db_close(r->db);
    if (rc) {
        free(r);
        return xp_die(&err);
    }
    int drawn = 0;
    for (int i = 0; i < r->nsec; i++)
        drawn += r->sec[i].drawn;
    printf("report of run %lld (%s%s) in %s/index.html and index.md: %d plot%s",
           (long long)r->run, r->info.status,
           strcmp(r->info.status, "complete") ? ": the suite did not finish" : "",
           r->out, drawn, drawn == 1 ? "" : "s");
    for (int i = 0, first = 1; i < r->nsec; i++)
        if (!r->sec[i].drawn && !r->sec[i].table_only) {
            printf("%s%s", first ? "; not measured: " : ", ", r->sec[i].name);
            first = 0;
        }
    printf("\n");
    int failed = r->failed_plots;
    if (failed)
        fprintf(stderr, "tokbench: gnuplot failed on %d plot%s; see %s\n", failed,
                failed == 1 ? "" : "s", r->log);
    free(r);
    return failed ? 1 : 0;
}
