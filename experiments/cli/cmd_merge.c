/*
 * cmd_merge: `tokbench merge OUT.db A.db B.db ...`, the runs of several
 * results databases (several machines) gathered into one.
 *
 * A run is known by its run_key, which every copy of it keeps; a run that
 * OUT already holds is skipped, so merging the same file twice adds
 * nothing (except where OUT holds a copy taken while the run was still
 * going and the source has more of it: that copy is replaced).  Runs, their inputs, cases and measurements get new row ids in
 * OUT, one transaction per source file.  A source is never written to: it
 * is checked as the store checks what it opens (not SQLite, another
 * application, a newer schema: refused), then copied with SQLite's backup
 * API to a temporary file, where an older schema is migrated.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_results.h"

/* The columns copied, row id and parent id left out: OUT numbers its own. */
#define RUN_COLS                                                              \
    "suite, started, ended, status, note, git_commit, git_dirty, compiler,"   \
    " cflags, cpu_model, cores, tsc_hz, kernel, virt, sources, sources_detail,"\
    " pinned_cpu, host, pid, run_key"
#define CASE_COLS                                                             \
    "seq, line, experiment, vocabulary, layout, pattern, corpus, options,"    \
    " reps, sources, status, message, started, ended"
#define MEAS_COLS                                                             \
    "source, impl, metric, rep, value, overhead, bytes, nodes, items, event,"  \
    " native, user_only"
#define OUTCOME_COLS "impl, item, outcome, detail, ttfm_us, max_us, tokens, masks"

typedef struct {
    long runs, replaced, skipped, cases, meas;
} counts_t;

/* Refuses, reading only, what the store would refuse to open. */
static int check_source(const char *path, sqlite3 *src, tb_err_t *err)
{
    sqlite3_stmt *st;
    long long v[3] = {0, 0, 0};
    static const char *const q[3] = {"SELECT count(*) FROM sqlite_master",
                                      "PRAGMA application_id", "PRAGMA user_version"};
    for (int i = 0; i < 3; i++) {
        if (sqlite3_prepare_v2(src, q[i], -1, &st, NULL) != SQLITE_OK ||
            sqlite3_step(st) != SQLITE_ROW) {
            sqlite3_finalize(st);
            return tb_fail(err, "%s: not a tokbench results database (is it a SQLite "
                           "file?): %s", path, sqlite3_errmsg(src));
        }
        v[i] = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    if (v[1] != XP_DB_APP_ID && (v[1] != 0 || v[0] != 0))
        return tb_fail(err, "%s: a SQLite database of another application "
                       "(application_id 0x%08llx), not a tokbench results database",
                       path, v[1]);
    if (v[2] > XP_DB_SCHEMA)
        return tb_fail(err, "%s: results schema version %lld is newer than this "
                       "tokbench understands (%d); use a newer tokbench", path, v[2],
                       XP_DB_SCHEMA);
    return 0;
}

/* A migrated private copy of the source in `tmp` (a mkstemp template). */
static int snapshot(const char *path, char *tmp, tb_err_t *err)
{
    struct stat sb;
    if (stat(path, &sb))
        return tb_fail(err, "%s: no such results database", path);
    sqlite3 *src = NULL, *dst = NULL;
    if (sqlite3_open_v2(path, &src, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        tb_fail(err, "%s: %s", path, src ? sqlite3_errmsg(src) : "cannot open");
        sqlite3_close(src);
        return -1;
    }
    sqlite3_busy_timeout(src, XP_DB_BUSY_MS);
    int rc = check_source(path, src, err);
    int fd = rc ? -1 : mkstemp(tmp);
    if (!rc && fd < 0)
        rc = tb_fail(err, "%s: cannot create a temporary copy: %s", tmp, strerror(errno));
    if (fd >= 0)
        close(fd);
    if (!rc && sqlite3_open(tmp, &dst) != SQLITE_OK)
        rc = tb_fail(err, "%s: %s", tmp, sqlite3_errmsg(dst));
    if (!rc) {
        sqlite3_backup *b = sqlite3_backup_init(dst, "main", src, "main");
        int brc = b ? sqlite3_backup_step(b, -1) : SQLITE_ERROR;
        if (b)
            sqlite3_backup_finish(b);
        if (brc != SQLITE_DONE)
            rc = tb_fail(err, "%s: cannot copy it: %s", path, sqlite3_errmsg(dst));
    }
    sqlite3_close(dst);
    sqlite3_close(src);
    if (!rc) {
        xp_db_t *d = xp_db_open(tmp, 0, err); /* migrates the copy */
        if (!d)
            rc = tb_wrap(err, "%s", path);
        xp_db_close(d);
    }
    return rc;
}

/* Runs one write with ?1 = a, ?2 = b; the new row id. */
static int64_t insert_select(xp_db_t *out, const char *sql, int64_t a, int64_t b,
                             tb_err_t *err)
{
    sqlite3_stmt *st;
    if (xp_db_prepare_id(out, sql, a, &st, err))
        return -1;
    sqlite3_bind_int64(st, 2, b);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return tb_fail(err, "%s: %s", out->path, sqlite3_errmsg(out->db));
    return sqlite3_last_insert_rowid(out->db);
}

/* Copies one run of the attached source "src" with everything under it. */
static int copy_run(xp_db_t *out, int64_t old, counts_t *n, tb_err_t *err)
{
    int64_t run = insert_select(out, "INSERT INTO main.runs(" RUN_COLS ") SELECT "
                                RUN_COLS " FROM src.runs WHERE id = ?1", old, 0, err);
    if (run < 0 ||
        insert_select(out, "INSERT INTO main.inputs(run_id, role, path, sha256) SELECT"
                      " ?2, role, path, sha256 FROM src.inputs WHERE run_id = ?1",
                      old, run, err) < 0)
        return -1;
    sqlite3_stmt *st;
    if (xp_db_prepare_id(out, "SELECT id FROM src.cases WHERE run_id = ? ORDER BY id", old,
                         &st, err))
        return -1;
    int rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        int64_t from = sqlite3_column_int64(st, 0);
        int64_t c = insert_select(out, "INSERT INTO main.cases(run_id, " CASE_COLS ")"
                                  " SELECT ?2, " CASE_COLS " FROM src.cases WHERE id = ?1",
                                  from, run, err);
        if (c < 0 ||
            insert_select(out, "INSERT INTO main.measurements(case_id, " MEAS_COLS ")"
                          " SELECT ?2, " MEAS_COLS " FROM src.measurements WHERE"
                          " case_id = ?1 ORDER BY rowid", from, c, err) < 0) {
            rc = -1;
            break;
        }
        n->meas += sqlite3_changes(out->db);
        if (insert_select(out, "INSERT INTO main.outcomes(case_id, " OUTCOME_COLS ")"
                          " SELECT ?2, " OUTCOME_COLS " FROM src.outcomes WHERE"
                          " case_id = ?1 ORDER BY rowid", from, c, err) < 0)
            rc = -1;
        n->cases++;
    }
    sqlite3_finalize(st);
    return rc;
}

/* Removes a run and everything under it from OUT. */
static int delete_run(xp_db_t *out, int64_t run, tb_err_t *err)
{
    static const char *const sql[] = {
        ("DELETE FROM main.measurements WHERE case_id IN (SELECT id FROM main.cases"
         " WHERE run_id = ?1)"),
        ("DELETE FROM main.outcomes WHERE case_id IN (SELECT id FROM main.cases"
         " WHERE run_id = ?1)"),
        "DELETE FROM main.cases WHERE run_id = ?1",
        "DELETE FROM main.inputs WHERE run_id = ?1",
        "DELETE FROM main.runs WHERE id = ?1",
    };
    for (size_t i = 0; i < sizeof sql / sizeof *sql; i++)
        if (insert_select(out, sql[i], run, 0, err) < 0)
            return -1;
    return 0;
}

/* Every run of the snapshot that OUT lacks, in one transaction. */
static int merge_one(xp_db_t *out, const char *tmp, counts_t *n, tb_err_t *err)
{
    char *sql = sqlite3_mprintf("ATTACH %Q AS src", tmp);
    int rc = sql ? xp_db_exec(out, sql, err) : tb_fail(err, "out of memory");
    sqlite3_free(sql);
    if (rc)
        return -1;
    rc = xp_db_exec(out, "BEGIN IMMEDIATE", err);
    sqlite3_stmt *st = NULL;
    /* a run OUT holds is skipped, unless OUT's copy was taken while it ran
     * and the source has more of it: then the source's copy replaces it */
    if (!rc)
        rc = xp_db_prepare(out, "SELECT s.id, m.id, m.status = 'incomplete'"
                                " AND (s.status = 'complete' OR (SELECT count(*) FROM"
                                " src.cases c WHERE c.run_id = s.id) > (SELECT count(*)"
                                " FROM main.cases c WHERE c.run_id = m.id)) FROM"
                                " src.runs s LEFT JOIN main.runs m ON m.run_key ="
                                " s.run_key ORDER BY s.id", &st, err);
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        int held = sqlite3_column_type(st, 1) != SQLITE_NULL;
        if (held && !sqlite3_column_int(st, 2)) {
            n->skipped++;
            continue;
        }
        if (held) {
            rc = delete_run(out, sqlite3_column_int64(st, 1), err);
            n->replaced += !rc;
        }
        if (!rc)
            rc = copy_run(out, sqlite3_column_int64(st, 0), n, err);
        n->runs += !rc && !held;
    }
    sqlite3_finalize(st);
    /* the published figures too (anchors.h): the same row replaces its copy */
    if (!rc)
        rc = xp_db_exec(out, "INSERT OR REPLACE INTO main.anchors SELECT * FROM src.anchors;"
                        " COMMIT", err);
    if (rc)
        sqlite3_exec(out->db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_exec(out->db, "DETACH src", NULL, NULL, NULL);
    return rc;
}

static void remove_tmp(const char *tmp)
{
    char p[4200];
    unlink(tmp);
    snprintf(p, sizeof p, "%s-wal", tmp);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", tmp);
    unlink(p);
}

int xp_cmd_merge(int argc, char **argv)
{
    if (xp_wants_help(argc, argv) || argc < 3) {
        fprintf(argc < 3 && !xp_wants_help(argc, argv) ? stderr : stdout,
                "usage: tokbench merge OUT.db A.db [B.db ...]\n"
                "Copies every run of A.db, B.db, ... (with its inputs, cases and\n"
                "measurements) into OUT.db, created if missing, so that reports can\n"
                "compare machines side by side.  A run OUT.db already holds (same run\n"
                "key) is skipped: merging a file twice adds nothing; a copy OUT.db took\n"
                "while the run was still going is replaced by the finished run.  The\n"
                "sources are only read; one that is not a tokbench results database,\n"
                "or has a newer schema, is refused.\n");
        return xp_wants_help(argc, argv) ? 0 : 2;
    }
    tb_err_t err;
    xp_db_t *out = xp_db_open(argv[1], 1, &err);
    if (!out)
        return xp_die(&err);
    int status = 0;
    for (int i = 2; i < argc; i++) {
        const char *dir = getenv("TMPDIR");
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s/tokbench-merge-XXXXXX", dir && *dir ? dir : "/tmp");
        counts_t n = {0};
        int rc = snapshot(argv[i], tmp, &err);
        if (!rc)
            rc = merge_one(out, tmp, &n, &err);
        if (strcmp(tmp + strlen(tmp) - 6, "XXXXXX"))
            remove_tmp(tmp);
        if (rc) {
            status = xp_die(&err);
            continue;
        }
        printf("%s: %ld run%s added, %ld replaced (%ld cases, %ld measurements), %ld "
               "already in %s\n", argv[i], n.runs, n.runs == 1 ? "" : "s", n.replaced,
               n.cases, n.meas, n.skipped, argv[1]);
    }
    xp_db_close(out);
    return status;
}
