/*
 * cmd_results: printing shared by the results commands (run, runs, show,
 * diff).  Command code: these print to the stream they are given.
 */
#ifndef XP_CMD_RESULTS_H
#define XP_CMD_RESULTS_H

#include <stdint.h>
#include <stdio.h>

#include "../store/results.h"

/* The published cost of the flat trie walk, the reports' baseline. */
#define XP_BASELINE_CYCLES_PER_NODE 13.0

#define XP_DEFAULT_DB "results/tokbench.db"

/* The cases that the SQL condition `where` selects (one run's), each with
 * a key k made of its suite row's fields and occ, its occurrence among
 * repeated rows: a case of one run is the same case of another when k and
 * occ are equal.  Columns: id, k, occ, seq.  For diff and report --vs. */
#define XP_CASE_KEYS(where)                                                   \
    "SELECT id, experiment || ifnull(' ' || nullif(vocabulary, ''), '') ||"  \
    " ifnull(' ' || nullif(layout, ''), '') || ifnull(' ' || nullif(pattern,"\
    " ''), '') || ifnull(' ' || nullif(corpus, ''), '') || ifnull(' ' ||"    \
    " nullif(options, ''), '') AS k, ROW_NUMBER() OVER (PARTITION BY"         \
    " experiment, vocabulary, layout, pattern, corpus, options ORDER BY seq)" \
    " AS occ, seq FROM cases WHERE " where

/* A column of per-node figures holds one source's one metric for a whole
 * run, never a mix (see counters.h): a run picks the first of a list of
 * preferences that it has, and the column is named after it. */
typedef struct {
    const char *source, *metric;
} xp_figure_t;

typedef struct {
    const char *source, *metric; /* NULL: the run has none of the list */
    char event[64];              /* what it counted in this run */
    char native[160];
    int user_only;               /* 1, 0, or -1 unknown */
} xp_column_t;

/* Core cycles, else the TSC's reference cycles: never both in one column. */
extern const xp_figure_t xp_cycles_prefs[2];
/* Cache misses and mispredictions, real counts before simulated ones. */
extern const xp_figure_t xp_l1d_prefs[4], xp_llc_prefs[3], xp_misp_prefs[3];

/* The first preference (of source `only`, unless NULL) that some case of
 * `run` has with nodes; 1 if found, else 0 with col->source NULL. */
int xp_pick_column(xp_db_t *db, int64_t run, const xp_figure_t *prefs, size_t n,
                   const char *only, xp_column_t *col);
/* What the column counted in words: "papi PAPI_TOT_CYC = X, user mode only". */
const char *xp_column_says(const xp_column_t *col, char *buf, size_t size);

/* The end-of-run table: one line per case with its headline figures. */
int xp_print_summary(FILE *out, xp_db_t *db, int64_t run, tb_err_t *err);

/* Parses "--db FILE" out of argv (removing it); returns the path. */
const char *xp_take_db_arg(int *argc, char **argv);

#endif
