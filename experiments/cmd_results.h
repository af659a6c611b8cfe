/*
 * cmd_results: printing shared by the results commands (run, runs, show,
 * diff).  Command code: these print to the stream they are given.
 */
#ifndef XP_CMD_RESULTS_H
#define XP_CMD_RESULTS_H

#include <stdint.h>
#include <stdio.h>

#include "results.h"

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

/* The end-of-run table: one line per case with its headline figures. */
int xp_print_summary(FILE *out, xp_db_t *db, int64_t run, tb_err_t *err);

/* Parses "--db FILE" out of argv (removing it); returns the path. */
const char *xp_take_db_arg(int *argc, char **argv);

#endif
