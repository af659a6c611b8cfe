/*
 * results: the SQLite store of runs, cases and raw measurements.
 *
 * A run row carries the provenance (xp_prov_t); a case row one suite row
 * and its outcome (ok, failed with its message, or interrupted); a
 * measurement row one repetition of one metric from one counter source,
 * with the bytes and nodes that repetition processed, so per-byte and
 * per-node figures can always be recomputed, and what it counted: the
 * exact event, the native event behind a PAPI preset, and whether it
 * counts user mode only (see counters.h).  Aggregates are views, never
 * stored: metric_stats (min/median/max per case, source, impl, metric and
 * event), measurement_ratios (each repetition per node and per byte),
 * per_node_stats (core cycles over the 13-cycle baseline, and TSC
 * reference cycles over it in a column of their own), throughput
 * (MB/s of every ns and first_ns metric with bytes, its pass warm or
 * first) and reference_ratios (tokbench's MB/s over each reference's, per
 * case and pass).  A run's run_key names it in
 * every database it is copied to (see `tokbench merge`).  The anchors
 * table holds published figures of other machines with their sources
 * (anchors.h), apart from every run.  A run of one shard of a suite
 * (runner.h) records K, N and the key its shards share; `tokbench merge`
 * joins the shards it holds into one run (shard 0).
 *
 * A run is inserted as 'incomplete' and only marked 'complete' after its
 * last case: whatever stops it (Ctrl-C, kill -9, a power cut) leaves a
 * consistent database with the cases measured so far.  Each case is one
 * transaction.  WAL mode and a busy timeout let several runs share a file.
 *
 * Opening refuses, without writing a byte, a file that is not SQLite, a
 * SQLite database of another application (PRAGMA application_id), and one
 * whose schema is newer than this program; older schemas are migrated.
 */
#ifndef XP_RESULTS_H
#define XP_RESULTS_H

#include <sqlite3.h>
#include <stdint.h>

#include "../../base/err.h"
#include "../drivers/driver.h"
#include "provenance.h"
#include "../drivers/suite.h"

#define XP_DB_APP_ID 0x546f6b42 /* "TokB" */
#define XP_DB_SCHEMA 11
#define XP_DB_BUSY_MS 30000

typedef struct {
    sqlite3 *db;
    char path[4096];
} xp_db_t;

/* Opens (creating when `create` and the file is missing or empty) and
 * migrates to XP_DB_SCHEMA.  Returns NULL with err set. */
xp_db_t *xp_db_open(const char *path, int create, tb_err_t *err);
void xp_db_close(xp_db_t *d);

/* For tests of migrations: creates a new database at schema `version`. */
int xp_db_create_at(const char *path, int version, tb_err_t *err);

/* Runs one statement with no result rows. */
int xp_db_exec(xp_db_t *d, const char *sql, tb_err_t *err);

/* Prepares one statement; on failure err (if not NULL) names the database
 * and says why. */
int xp_db_prepare(xp_db_t *d, const char *sql, sqlite3_stmt **st, tb_err_t *err);

/* The same, with `id` (a run's or a case's) bound to ?1. */
int xp_db_prepare_id(xp_db_t *d, const char *sql, int64_t id, sqlite3_stmt **st,
                     tb_err_t *err);

int64_t xp_db_run_begin(xp_db_t *d, const char *suite, const xp_prov_t *p,
                        tb_err_t *err);
/* status: "complete" or "incomplete"; note may be NULL. */
int xp_db_run_end(xp_db_t *d, int64_t run, const char *status,
                  const char *note, tb_err_t *err);
int xp_db_run_inputs(xp_db_t *d, int64_t run, const xp_input_t *in, size_t n,
                     tb_err_t *err);
/* Marks the run as shard `shard` of `shards` of runs that share `key`. */
int xp_db_run_shard(xp_db_t *d, int64_t run, unsigned shard, unsigned shards,
                    const char *key, tb_err_t *err);

typedef struct {
    int64_t run;
    unsigned seq;           /* position in the suite */
    const xp_row_t *row;
    const char *sources;    /* the sources that measured it */
    const char *status;     /* ok, failed, interrupted */
    const char *message;    /* why it failed, or notes; may be NULL */
    const char *started;    /* ISO 8601 UTC */
    int split;              /* ran only its shard's share of its items */
    const xp_env_t *env;    /* measurements and inputs */
} xp_case_rec_t;

/* Writes the case, its measurements and its inputs in one transaction. */
int xp_db_case_write(xp_db_t *d, const xp_case_rec_t *c, tb_err_t *err);

/* Current UTC time, "2026-11-21T23:18:30.123Z". */
void xp_now_iso(char buf[32]);

#endif
