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
 *
 * Shards (runner.h: `tokbench run --shard K/N`) are copied as any run, and
 * then joined: for each group of shard runs that this merge added to (one
 * shard key and N), the run "joined/KEY/N" (shard 0) is built anew from
 * the shards OUT holds, one run of each K (its complete run if it has one,
 * else the latest): the runs' provenance from the first shard (hosts and
 * CPU models from all), every case once in suite order, a case that the
 * shards split (MaskBench's schemas) made of every shard's part, with all
 * their measurements and outcomes.  A shard missing or incomplete leaves
 * the joined run incomplete, its note and the split cases' messages say
 * which; shards of different commits or suites are not joined.
 */
#include <errno.h>
#include <stdarg.h>
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
    " pinned_cpu, host, pid, run_key, shard, shards, shard_key"
#define CASE_COLS                                                             \
    "seq, line, experiment, vocabulary, layout, pattern, corpus, options,"    \
    " reps, sources, status, message, started, ended, split"
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

/* Appends the measurements and outcomes of case `from` of database `db`
 * (src, or main itself) to case `to` of OUT. */
static int copy_case_rows(xp_db_t *out, const char *db, int64_t from, int64_t to,
                          counts_t *n, tb_err_t *err)
{
    char meas[512], outc[512];
    snprintf(meas, sizeof meas, "INSERT INTO main.measurements(case_id, " MEAS_COLS ")"
             " SELECT ?2, " MEAS_COLS " FROM %s.measurements WHERE case_id = ?1 ORDER BY"
             " rowid", db);
    snprintf(outc, sizeof outc, "INSERT INTO main.outcomes(case_id, " OUTCOME_COLS ")"
             " SELECT ?2, " OUTCOME_COLS " FROM %s.outcomes WHERE case_id = ?1 ORDER BY"
             " rowid", db);
    if (insert_select(out, meas, from, to, err) < 0)
        return -1;
    n->meas += sqlite3_changes(out->db);
    return insert_select(out, outc, from, to, err) < 0 ? -1 : 0;
}

/* Copies one run of the attached source "src" with everything under it. */
static int copy_run(xp_db_t *out, int64_t old, counts_t *n, tb_err_t *err)
{
    int64_t run = insert_select(out, "INSERT INTO main.runs(" RUN_COLS ") SELECT "
                                RUN_COLS " FROM src.runs WHERE id = ?1", old, 0, err);
    if (run < 0 ||
        insert_select(out, "INSERT INTO main.inputs(run_id, role, path, sha256) SELECT"
                      " ?2, role, path, sha256 FROM src.inputs WHERE run_id = ?1",
                      old, run, err) < 0 ||
        insert_select(out, "INSERT INTO temp.merged VALUES (?1)", run, 0, err) < 0)
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
        rc = c < 0 ? -1 : copy_case_rows(out, "src", from, c, n, err);
        n->cases += !rc;
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

/* ---- shards joined ------------------------------------------------------- */

/* One group of shard runs: its key and N, and what the join found. */
typedef struct {
    const char *key;
    unsigned shards;
    unsigned present, complete;
    char note[1024];  /* the joined run's: its shards, the missing ones */
    int64_t run;      /* the joined run; 0 when not joined */
} group_t;

/* Prepares sql with the group's key as ?1 and N as ?2. */
static int group_query(xp_db_t *out, const group_t *g, const char *sql, sqlite3_stmt **st,
                       tb_err_t *err)
{
    if (xp_db_prepare(out, sql, st, err))
        return -1;
    sqlite3_bind_text(*st, 1, g->key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(*st, 2, (int)g->shards);
    return 0;
}

/* Runs a write of the group; with `id` bound to ?3 when nonzero. */
static int group_exec(xp_db_t *out, const group_t *g, const char *sql, int64_t id,
                      tb_err_t *err)
{
    sqlite3_stmt *st;
    if (group_query(out, g, sql, &st, err))
        return -1;
    if (id)
        sqlite3_bind_int64(st, 3, id);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : tb_fail(err, "%s: %s", out->path, sqlite3_errmsg(out->db));
}

/* Appends to the note, "; "-separated. */
static void note_add(group_t *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note_add(group_t *g, const char *fmt, ...)
{
    size_t n = strlen(g->note);
    if (n && n + 2 < sizeof g->note)
        n += (size_t)snprintf(g->note + n, sizeof g->note - n, "; ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->note + n, sizeof g->note - n, fmt, ap);
    va_end(ap);
}

/* Fills temp.members with the run taken for each shard K the group has,
 * and the group's note with the shards there, missing and incomplete.
 * 1 when the shards measured different commits or suites (not joined). */
static int pick_members(xp_db_t *out, group_t *g, tb_err_t *err)
{
    if (xp_db_exec(out, "DELETE FROM temp.members", err) ||
        group_exec(out, g, "INSERT INTO temp.members SELECT shard, (SELECT id FROM main.runs x"
                   " WHERE x.shard_key = ?1 AND x.shards = ?2 AND x.shard = r.shard ORDER BY"
                   " x.status = 'complete' DESC, x.started DESC, x.id DESC LIMIT 1), count(*)"
                   " FROM main.runs r WHERE shard_key = ?1 AND shards = ?2 AND shard >= 1"
                   " GROUP BY shard", 0, err))
        return -1;
    sqlite3_stmt *st;
    if (group_query(out, g, "SELECT group_concat(k, ', '), count(*), sum(r.status ="
                      " 'complete'), group_concat(CASE WHEN r.status <> 'complete' THEN k END,"
                      " ', '), group_concat(CASE WHEN m.copies > 1 THEN k END, ', '),"
                      " count(DISTINCT ifnull(r.git_commit, '')), (SELECT count(DISTINCT"
                      " sha256) FROM main.inputs i JOIN temp.members x ON i.run_id = x.run"
                      " WHERE i.role = 'suite'), (WITH RECURSIVE s(k) AS (SELECT 1 UNION ALL"
                      " SELECT k + 1 FROM s WHERE k < ?2) SELECT group_concat(k, ', ') FROM s"
                      " WHERE k NOT IN (SELECT k FROM temp.members)) FROM temp.members m JOIN"
                      " main.runs r ON r.id = m.run", &st, err))
        return -1;
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return tb_fail(err, "%s: %s", out->path, sqlite3_errmsg(out->db));
    }
    g->present = (unsigned)sqlite3_column_int(st, 1);
    g->complete = (unsigned)sqlite3_column_int(st, 2);
    note_add(g, "joined by tokbench merge from shards %s of %u (key %s)",
             sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : "none",
             g->shards, g->key);
    if (g->present < g->shards)
        note_add(g, "missing shards %s of %u: their whole cases are not here, and the "
                 "cases the shards split hold only the other shards' items",
                 (const char *)sqlite3_column_text(st, 7), g->shards);
    if (sqlite3_column_text(st, 3))
        note_add(g, "incomplete shards %s", (const char *)sqlite3_column_text(st, 3));
    if (sqlite3_column_text(st, 4))
        note_add(g, "shards %s ran more than once: the complete run of each taken, else "
                 "the latest",
                 (const char *)sqlite3_column_text(st, 4));
    int mixed = sqlite3_column_int(st, 5) > 1 || sqlite3_column_int(st, 6) > 1;
    sqlite3_finalize(st);
    return mixed;
}

/* The joined run's row: the first shard's provenance, the hosts and CPU
 * models of all, from the first start to the last end. */
static int64_t insert_joined_run(xp_db_t *out, group_t *g, tb_err_t *err)
{
    sqlite3_stmt *st;
    if (group_query(out, g, "INSERT INTO main.runs(" RUN_COLS ") SELECT f.suite, a.started,"
                    " a.ended, ?3, ?4, f.git_commit, a.dirty, f.compiler, f.cflags, a.cpus,"
                    " f.cores, f.tsc_hz, f.kernel, f.virt, f.sources, f.sources_detail, NULL,"
                    " a.hosts, NULL, 'joined/' || ?1 || '/' || ?2, 0, ?2, ?1 FROM"
                    " (SELECT min(r.started) AS started, max(r.ended) AS ended,"
                    " max(r.git_dirty) AS dirty, group_concat(DISTINCT r.cpu_model) AS cpus,"
                    " group_concat(DISTINCT r.host) AS hosts FROM temp.members m JOIN"
                    " main.runs r ON r.id = m.run) a JOIN main.runs f ON f.id = (SELECT run"
                    " FROM temp.members ORDER BY k LIMIT 1)", &st, err))
        return -1;
    int whole = g->present == g->shards && g->complete == g->shards;
    sqlite3_bind_text(st, 3, whole ? "complete" : "incomplete", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, g->note, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return tb_fail(err, "%s: %s", out->path, sqlite3_errmsg(out->db));
    return sqlite3_last_insert_rowid(out->db);
}

/* Every case of the members once, by its place in the suite: a case that
 * several shards ran (their parts of its items) takes the worst status,
 * every part's message, and says whose items it lacks. */
static int insert_joined_cases(xp_db_t *out, group_t *g, tb_err_t *err)
{
    return group_exec(out, g, "INSERT INTO main.cases(run_id, " CASE_COLS ") SELECT ?3,"
                      " c.seq, c.line, c.experiment, c.vocabulary, c.layout, c.pattern,"
                      " c.corpus, c.options, c.reps, c.sources, CASE WHEN sum(c.status ="
                      " 'failed') THEN 'failed' WHEN sum(c.status = 'interrupted') THEN"
                      " 'interrupted' ELSE 'ok' END, nullif(trim(ifnull(CASE WHEN"
                      " count(DISTINCT c.message) <= 1 THEN max(c.message) ELSE"
                      " group_concat('shard ' || m.k || ': ' || c.message, '; ') END, '') ||"
                      " CASE WHEN max(c.split) AND count(*) < ?2 THEN '; the items of shard '"
                      " || group_concat(m.k, ', ') || ' of ' || ?2 || ' only (the others are"
                      " not merged)' ELSE '' END, '; '), ''), min(c.started), max(c.ended),"
                      " max(c.split) AND count(*) < ?2 FROM main.cases c JOIN temp.members m"
                      " ON c.run_id = m.run GROUP BY c.seq ORDER BY c.seq", g->run, err);
}

/* Builds the group's joined run anew from the shard runs OUT holds. */
static int join_group(xp_db_t *out, group_t *g, counts_t *n, tb_err_t *err)
{
    g->run = 0;
    g->note[0] = 0;
    int rc = xp_db_exec(out, "BEGIN IMMEDIATE", err);
    int mixed = rc ? 0 : pick_members(out, g, err);
    rc = mixed < 0 ? -1 : rc;
    sqlite3_stmt *st = NULL;
    if (!rc && !mixed &&
        !group_query(out, g, "SELECT id FROM main.runs WHERE run_key = 'joined/' ||"
                     " ?1 || '/' || ?2", &st, err) && sqlite3_step(st) == SQLITE_ROW)
        rc = delete_run(out, sqlite3_column_int64(st, 0), err);
    sqlite3_finalize(st);
    st = NULL;
    if (!rc && !mixed && (g->run = insert_joined_run(out, g, err)) < 0)
        rc = -1;
    if (!rc && !mixed &&
        (insert_select(out, "INSERT OR IGNORE INTO main.inputs(run_id, role, path, sha256)"
                       " SELECT ?1, role, path, sha256 FROM main.inputs WHERE run_id IN"
                       " (SELECT run FROM temp.members ORDER BY k)", g->run, 0, err) < 0 ||
         insert_joined_cases(out, g, err) ||
         xp_db_prepare_id(out, "SELECT j.id, c.id FROM main.cases j JOIN main.cases c ON"
                          " c.seq = j.seq JOIN temp.members m ON m.run = c.run_id WHERE"
                          " j.run_id = ?1 ORDER BY j.seq, m.k", g->run, &st, err)))
        rc = -1;
    while (!rc && st && sqlite3_step(st) == SQLITE_ROW)
        rc = copy_case_rows(out, "main", sqlite3_column_int64(st, 1),
                            sqlite3_column_int64(st, 0), n, err);
    sqlite3_finalize(st);
    rc = rc ? rc : xp_db_exec(out, "COMMIT", err);
    if (rc)
        sqlite3_exec(out->db, "ROLLBACK", NULL, NULL, NULL);
    return rc ? -1 : mixed;
}

/* Joins every group of shards that this merge added a run to, and says
 * what each joined run holds. */
static int join_merged(xp_db_t *out, tb_err_t *err)
{
    sqlite3_stmt *st;
    if (xp_db_prepare(out, "SELECT DISTINCT shard_key, shards FROM main.runs WHERE shard >= 1"
                      " AND id IN (SELECT run FROM temp.merged) ORDER BY shard_key, shards",
                      &st, err))
        return -1;
    int rc = 0;
    while (rc >= 0 && sqlite3_step(st) == SQLITE_ROW) {
        group_t g = {.key = (const char *)sqlite3_column_text(st, 0),
                     .shards = (unsigned)sqlite3_column_int(st, 1)};
        counts_t n = {0};
        int j = join_group(out, &g, &n, err);
        if (j > 0)
            fprintf(stderr, "tokbench: merge: the shards of key %s of %u measured different "
                    "commits or suites: not joined (run them with their own --shard-key)\n",
                    g.key, g.shards);
        else if (!j)
            printf("run %lld joins shards of %s: %u of %u present, %u complete (%ld "
                   "measurements)%s%s\n", (long long)g.run, g.key, g.present, g.shards,
                   g.complete, n.meas, g.present < g.shards ? ": " : "",
                   g.present < g.shards ? g.note : "");
        rc = j < 0 ? -1 : rc | j;
    }
    sqlite3_finalize(st);
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
                "or has a newer schema, is refused.\n"
                "Shards of one run (tokbench run --shard K/N, same shard key and N) are\n"
                "copied, then joined into one run, built anew when a shard arrives: every\n"
                "case once, a case the shards split (maskbench) with all their outcomes\n"
                "and samples.  A missing or incomplete shard leaves the joined run\n"
                "incomplete and its note says which; shards of different commits or\n"
                "suites are not joined (exit status 1).\n");
        return xp_wants_help(argc, argv) ? 0 : 2;
    }
    tb_err_t err;
    xp_db_t *out = xp_db_open(argv[1], 1, &err);
    if (!out)
        return xp_die(&err);
    /* the runs this merge copies, and the shard runs a join takes */
    if (xp_db_exec(out, "CREATE TEMP TABLE merged(run INTEGER); CREATE TEMP TABLE members("
                   "k INTEGER PRIMARY KEY, run INTEGER, copies INTEGER)", &err)) {
        xp_db_close(out);
        return xp_die(&err);
    }
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
    int joined = join_merged(out, &err);
    if (joined < 0)
        status = xp_die(&err);
    else if (joined)
        status = 1;
    xp_db_close(out);
    return status;
}
