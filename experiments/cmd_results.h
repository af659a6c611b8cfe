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

/* The end-of-run table: one line per case with its headline figures. */
int xp_print_summary(FILE *out, xp_db_t *db, int64_t run, tb_err_t *err);

/* Parses "--db FILE" out of argv (removing it); returns the path. */
const char *xp_take_db_arg(int *argc, char **argv);

#endif
