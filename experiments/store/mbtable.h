/*
 * mbtable: the MaskBench table of a run, in the rows of the published one
 * (../shared/maskbench/README.md): TBM and TTFM percentiles, tokens,
 * schemas and the outcome counts, for tokbench (wall and thread CPU time)
 * and the reference engines measured in the same case on their samples
 * (XGrammar: wall and process CPU time; llguidance: wall and thread CPU
 * time), beside the
 * published columns read from experiments/anchors/maskbench.csv.  Shared
 * by `tokbench show` and `tokbench report`, which only lay it out.
 */
#ifndef XP_MBTABLE_H
#define XP_MBTABLE_H

#include <stddef.h>
#include <stdint.h>

#include "results.h"

#define XP_MB_COLS 9  /* the row's name, then the columns below */
#define XP_MB_HEAD 96 /* bytes of a column head */
#define XP_MB_PUBLISHED 7 /* the first published column (after six measured ones) */
#define XP_MB_ROWS 23

typedef struct {
    double *v; /* sorted ascending */
    size_t n;
} xp_samples_t;

typedef struct {
    int64_t case_id;   /* the run's first maskbench case; 0: none */
    int measured;      /* the case ran (status ok) */
    char why[600];     /* when not measured: the case's failure, or "no case" */
    char head[XP_MB_COLS][XP_MB_HEAD]; /* full column names, "published, other machine" */
    char abbr[XP_MB_COLS][20];  /* short ones for a terminal */
    char cell[XP_MB_ROWS][XP_MB_COLS][40]; /* cell[r][0]: the row's name */
    int nrows, ncols;
    char note[512];    /* where the published figures come from */
    size_t schemas, xg_schemas, llg_schemas; /* tokbench's, XGrammar's, llguidance's
                                              * outcome rows */
} xp_mb_table_t;

/* Fills t for `run`; anchors is the published figures' CSV (header
 * engine,metric,value; '#' lines are comments); a missing or bad file
 * leaves those columns out and says why in t->note.  -1 only on database
 * or memory errors. */
int xp_mb_table(xp_db_t *db, int64_t run, const char *anchors, xp_mb_table_t *t,
                tb_err_t *err);

/* The wallclock values of one metric of one impl in a case, sorted. */
int xp_mb_samples(xp_db_t *db, int64_t case_id, const char *impl, const char *metric,
                  xp_samples_t *s, tb_err_t *err);

/* Quantile q (0..1) of sorted samples, interpolated linearly between the
 * closest ranks (numpy's default); NAN when there are none. */
double xp_mb_quantile(const xp_samples_t *s, double q);

/* The group of a compile error's reason: its JSON pointer or file
 * position dropped and its first two words kept, a quoted value after a
 * keyword written '...' ("#/a: format 'uri-reference' is ..." ->
 * "format '...'"). */
void xp_mb_reason_group(const char *reason, char *buf, size_t size);

#endif
