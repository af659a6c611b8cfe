/*
 * report: what the files of `tokbench report` share (cmd_report.c says
 * how a report is made): the run, its sections and their tables, the
 * store queries and the gnuplot drawing.  Private to experiments/report/;
 * its functions are named xp_rp_.
 */
#ifndef XP_REPORT_H
#define XP_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../../base/buf.h"
#include "../../base/err.h"
#include "../cli/cli.h"
#include "../cli/cmd_results.h"
#include "../store/mbtable.h"

#define MAXCOLS 10
/* Groups of bars in one panel of a grouped plot (grouped.gp): more are
 * drawn in more panels, NAME-p2.png ..., never crowded into one. */
#define XP_RP_GROUPS 12
#define XP_RP_MAXPANELS 16
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
    unsigned code;        /* bit c: column c is verbatim text (a case, a
                           * regex), set in code spans on the page */
} table_t;

typedef struct {
    char name[32];       /* file stem of the plot and its data */
    char title[128];
    char caption[1024];  /* the run, and where the figures come from */
    char note[1024];     /* what is missing and why; may be empty */
    int drawn;           /* NAME.png and NAME.svg were written */
    int npanels;         /* and NAME-p2 ... when its groups need more panels */
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
    int joined;          /* the shards of a run joined by tokbench merge */
    char shards[1100];   /* which shard the run is, or its joined shards
                          * and the missing ones; "" when not sharded */
} run_info_t;

typedef struct {
    xp_db_t *db;
    int64_t run, vs;
    const char *out;
    char plots[4096];    /* the folder of the gnuplot templates */
    char anchors[4096];  /* the published MaskBench figures (mbtable.h) */
    char log[4096];      /* gnuplot's messages */
    run_info_t info, vs_info;
    section_t sec[48];   /* xp_rp_new_section takes the next one (36 drawn) */
    TB_VEC(char *) patterns; /* the long patterns the plots name P1, P2 ... */
    int nsec;
    int failed_plots;
} report_t;

typedef struct {
    double median, min, max, bytes, nodes;
} stat_t;

/* The walk cases of the run that also meet `cond` (SQL, "" for all), in
 * suite order. */
#define CASES_IF(experiment, cond)                                            \
    "SELECT id, vocabulary, layout, pattern, status, ifnull(message, ''),"    \
    " ifnull(options, '')"                                                    \
    " FROM cases WHERE run_id = ? AND experiment = '" experiment "'" cond     \
    " ORDER BY seq"
#define WALK_CASES_IF(cond) CASES_IF("walk", cond)
#define WALK_CASES WALK_CASES_IF("")

/* The targets of the issue "The lexer and token masks" (lexer/), set for
 * its development machine (a 2.0 GHz time stamp counter): Llama 3, the
 * dfs layout, one mask from the lexer's start state.  The only place the
 * report knows them; NAN where the issue sets no target for a figure. */
typedef struct {
    const char *vocab, *layout, *pattern;
    double us_per_mask, ns_per_node;
    double us_sliced; /* the same mask through the slicer (slice cases) */
} lexer_target_t;

/* What a section writes for one successful case: its table row and its
 * line of data.  -1 on error, 0 when the case lacks the figures (nothing
 * written), 1 when written, 2 when written with a target. */
typedef int (*case_row_t)(report_t *r, section_t *s, sqlite3_stmt *c, FILE *f,
                          tb_err_t *err);

#define MAXNAMES 64

typedef struct {
    char name[MAXNAMES][64];
    int n;
} names_t;

typedef double grid_t[MAXNAMES][MAXNAMES];

/* The targets of the issue "The lexer and token masks" (sec_masks.c), of
 * its walks and slice cases. */
extern const lexer_target_t xp_rp_lexer_targets[];
extern const size_t xp_rp_nlexer_targets;


/* --- report.c */

const char *xp_rp_col(sqlite3_stmt *st, int i);
/* A query for one figure, with `id` (a run's or a case's) bound to ?1;
 * NULL if it cannot be prepared, which leaves the figure "not measured". */
sqlite3_stmt *xp_rp_figure_query(report_t *r, const char *sql, int64_t id);
/* The first column of the query's first row, NAN when there is none or
 * it is NULL; finalizes the query. */
double xp_rp_first_number(sqlite3_stmt *st);
/* One metric of one case from metric_stats; 1 if the run has it.  impl
 * NULL: whichever impl recorded it (the first by name), for the static and
 * build figures that the lookup driver files under an external library's
 * name (darts, marisa) and under "tokbench" for tokbench's layouts. */
int xp_rp_get_stat(report_t *r, int64_t case_id, const char *source, const char *impl,
                   const char *metric, stat_t *s);
void xp_rp_tab_init(table_t *t, int ncols, ...);
/* Appends one row of t->ncols strings (copied). */
int xp_rp_tab_row(table_t *t, tb_err_t *err, ...);
size_t xp_rp_tab_rows(const table_t *t);
void xp_rp_tab_free(table_t *t);
section_t *xp_rp_new_section(report_t *r, const char *name, const char *title);
void xp_rp_fmt(char *buf, size_t n, const char *f, double v);
/* "median (min..max)" of a figure over `scale`, each number in format f. */
void xp_rp_fmt_range(char *buf, size_t n, const char *f, const stat_t *s, double scale);
/* A label safe inside a gnuplot data file's double quotes. */
void xp_rp_dat_label(char *dst, size_t n, const char *src);
FILE *xp_rp_open_out(report_t *r, const char *name, const char *ext, tb_err_t *err);
/* Prepares a query of this run: r->run bound to ?1. */
int xp_rp_run_query(report_t *r, const char *sql, sqlite3_stmt **st, tb_err_t *err);
/* Prepares `sql` for this run (?1) and opens the section's .dat file:
 * the prologue every plotted section shares.  NULL with nothing left open
 * on failure. */
FILE *xp_rp_open_run_query(report_t *r, const char *sql, const char *name,
                           sqlite3_stmt **st, tb_err_t *err);
int xp_rp_close_out(report_t *r, FILE *f, const char *name, tb_err_t *err);
int xp_rp_load_run(report_t *r, int64_t id, run_info_t *ri, tb_err_t *err);
void xp_rp_caption(report_t *r, section_t *s, const char *sources);
/* vocabulary layout pattern, and the options where the row has some
 * (after=TEXT: the same pattern from another state). */
void xp_rp_case_label(sqlite3_stmt *st, char *buf, size_t n);
/* Why a case has no figures: its status and message, shortened. */
void xp_rp_failed_text(sqlite3_stmt *st, char *buf, size_t n);
/* Tokens of a vocabulary: what a walk under "any" allows is every token
 * in the trie; the run has it only if it walked that vocabulary so. */
double xp_rp_vocab_tokens(report_t *r, const char *vocab);
/* Ids of a vocabulary, as its walks record them (metric vocab_size,
 * whatever the pattern); runs from before that metric fall back to
 * vocab_tokens.  NAN when the run has neither. */
double xp_rp_vocab_size(report_t *r, const char *vocab);
/* How many walk cases of the run measured a synthetic vocabulary
 * (data/manifest kind synth-vocab, named synth-*). */
int xp_rp_synth_walks(report_t *r);
/* Bars on a log scale when they span more than 30x: else the small ones,
 * often the interesting ones, are flat against the axis. */
int xp_rp_spread(double lo, double hi);
/* One case's figure of a column (see xp_pick_column); 1 if it has one
 * per node. */
int xp_rp_column_stat(report_t *r, int64_t id, const xp_column_t *c, stat_t *s);
/* One figure's median, NAN when the case has none. */
double xp_rp_stat_median(report_t *r, int64_t id, const char *source, const char *impl,
                         const char *metric);

/* A walk's group label in a plot: vocabulary, the pattern's short name
 * (xp_rp_short_pattern) and "@TEXT" for after=TEXT (other options as
 * they are). */
int xp_rp_group_label(report_t *r, sqlite3_stmt *walk, char *buf, size_t n);
/* A pattern as a plot names it: itself when short, a lexer spec or
 * grammar by its file name, else "PN", N its place in r->patterns (the
 * Patterns table of the page gives each in full). */
int xp_rp_short_pattern(report_t *r, const char *pattern, char *buf, size_t n);
/* The table-only section that gives each short name's pattern verbatim. */
int xp_rp_sec_patterns(report_t *r, tb_err_t *err);
/* Marks column c of a table as verbatim text (a case, a pattern). */
void xp_rp_tab_code(table_t *t, int c);

/* --- plot.c: gnuplot's side, standing on report.c (report.c calls
 * nothing here) */

/* Appends name='value' to a gnuplot -e line; single quotes are doubled,
 * the only escape single-quoted gnuplot strings have. */
void xp_rp_gp_str(tb_buf_t *b, const char *name, const char *value);
void xp_rp_gp_num(tb_buf_t *b, const char *name, double v);
/* Runs gnuplot with its messages appended to the log; the exit status, or
 * -1 with err set when it cannot be started. */
int xp_rp_spawn_gnuplot(const char *log, char *const argv[], tb_err_t *err);
/* Draws section s from NAME.dat with TEMPLATE.gp; `vars` holds the
 * template's own variables.  A plot that fails is noted on the page and
 * counted, and the report goes on. */
int xp_rp_draw(report_t *r, section_t *s, const char *tmpl, const char *ylab,
               tb_buf_t *vars, tb_err_t *err);
/* The file stem of a section's panel: NAME for the first, NAME-pN after. */
void xp_rp_panel_stem(const section_t *s, int panel, char *buf, size_t n);
/* Removes what an earlier report left for a plot this one does not draw. */
void xp_rp_remove_plot(report_t *r, const section_t *s);
/* Removes what an earlier report drew for one panel of a section. */
void xp_rp_remove_panel(report_t *r, const section_t *s, int panel);
/* A section with nothing to draw: "Not measured: " and why end its note,
 * and what an earlier report drew for it goes (returns 0). */
int xp_rp_not_measured(report_t *r, section_t *s, const char *why, ...)
    __attribute__((format(printf, 3, 4)));
/* Draws NAME.dat's nrows groups (data lines after a header) with
 * TEMPLATE.gp, XP_RP_GROUPS a panel: the template gets the panel's first
 * and last rows; `vars` holds its other variables. */
int xp_rp_draw_panels(report_t *r, section_t *s, const char *tmpl, int nrows,
                      const char *ylab, tb_buf_t *vars, tb_err_t *err);
void xp_rp_dat_num(FILE *f, double v);
int xp_rp_name_index(names_t *n, const char *s);
void xp_rp_grid_clear(grid_t g);
/* A rows x columns grid as grouped.gp's data: '?' where missing. */
int xp_rp_write_grid(report_t *r, const char *name, const char *corner, const names_t *rows,
                     const names_t *cols, grid_t v, tb_err_t *err);
/* Draws a grid with grouped.gp: its rows are the groups, its first nser
 * columns the series, the next nmarks the reference marks; on a log scale
 * where the values span orders of magnitude.  vars: more of grouped.gp's
 * variables, or NULL. */
int xp_rp_draw_grid(report_t *r, section_t *s, const char *ylab, int nser, int nmarks,
                    grid_t v, int nrows, tb_buf_t *vars, tb_err_t *err);

/* --- sec_walk.c */

/* Cycles per node: the run's core cycles where it counted them, else its
 * TSC reference cycles, never a mix; the 13-cycle baseline is core
 * cycles, so a TSC figure against it says so wherever it is shown. */
int xp_rp_sec_cycles(report_t *r, tb_err_t *err);
int xp_rp_sec_misses(report_t *r, tb_err_t *err);

/* --- sec_masks.c */

int xp_rp_sec_mask_time(report_t *r, tb_err_t *err);
/* The target of a walk or slice case (columns of CASES_IF); a slice
 * case's pattern may leave out the "re:". */
const lexer_target_t *xp_rp_lexer_target(sqlite3_stmt *c);
int xp_rp_sec_lexer(report_t *r, tb_err_t *err);

/* --- sec_slicer.c */

int xp_rp_sec_slicer(report_t *r, tb_err_t *err);
int xp_rp_sec_index(report_t *r, tb_err_t *err);

/* --- sec_tokenize.c */

int xp_rp_sec_throughput(report_t *r, tb_err_t *err);

/* --- sec_tries.c */

int xp_rp_sec_memory(report_t *r, tb_err_t *err);
int xp_rp_sec_lookup(report_t *r, tb_err_t *err);

/* --- sec_maskbench.c */

/* The MaskBench table (mbtable.h) under the TBM plot, the TTFM plot, the
 * compile errors by reason and the failures. */
int xp_rp_sec_maskbench(report_t *r, tb_err_t *err);

/* --- sec_jsts.c */

/* The JSON Schema Test Suite's compliance table per draft (the jsts
 * cases' outcomes): keyword file x groups, passing, refused, wrong,
 * crash; then the wrong and crashed groups. */
int xp_rp_sec_jsts(report_t *r, tb_err_t *err);

/* --- sec_suites.c */

/* The engines' grammar test suites against their references (the
 * llgtests case, the jsts cases): grammars loaded and refused, strings
 * with the reference's verdict, masks equal; then llguidance's
 * differing tokens by cause. */
int xp_rp_sec_suites(report_t *r, tb_err_t *err);

/* --- sec_serve.c */

/* Soak cases: ns per token against the position (position.gp), and a
 * table of each case's first and last MiB (ns per token, resident memory,
 * grammar states) and its peak memory. */
int xp_rp_sec_soak(report_t *r, tb_err_t *err);
/* Soak cases: resident memory against the position. */
int xp_rp_sec_soak_memory(report_t *r, tb_err_t *err);
/* A serve case's masks per second and batch latency per T and B. */
int xp_rp_sec_serve(report_t *r, tb_err_t *err);

/* --- sec_machines.c */

/* Cycles per node of the reported run's walks on every machine of the
 * database (its latest run there; the reported run for its own machine),
 * as gathered by `tokbench merge`. */
int xp_rp_sec_machines(report_t *r, tb_err_t *err);
int xp_rp_sec_compare(report_t *r, tb_err_t *err);

/* --- sec_anchors.c */

int xp_rp_sec_anchors(report_t *r, tb_err_t *err);

/* --- page.c */

int xp_rp_write_html(report_t *r, tb_err_t *err);
int xp_rp_write_md(report_t *r, tb_err_t *err);

#endif
