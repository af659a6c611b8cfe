/* results: the SQLite results store (see results.h). */
#include "results.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* migrations[v] takes a database from schema v to v + 1. */
static const char *const migrations[XP_DB_SCHEMA] = {
    /* 0 -> 1: the tables */
    "CREATE TABLE runs("
    " id INTEGER PRIMARY KEY, suite TEXT NOT NULL,"
    " started TEXT NOT NULL, ended TEXT,"
    " status TEXT NOT NULL CHECK(status IN ('incomplete','complete')),"
    " note TEXT, git_commit TEXT, git_dirty INTEGER, compiler TEXT, cflags TEXT,"
    " cpu_model TEXT, cores INTEGER, tsc_hz REAL, kernel TEXT, virt TEXT,"
    " sources TEXT, sources_detail TEXT, pinned_cpu INTEGER, host TEXT,"
    " pid INTEGER);"
    "CREATE TABLE inputs("
    " run_id INTEGER NOT NULL REFERENCES runs(id), role TEXT NOT NULL,"
    " path TEXT NOT NULL, sha256 TEXT NOT NULL, PRIMARY KEY(run_id, path));"
    "CREATE TABLE cases("
    " id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),"
    " seq INTEGER NOT NULL, line INTEGER, experiment TEXT NOT NULL,"
    " vocabulary TEXT, layout TEXT, pattern TEXT, corpus TEXT, options TEXT,"
    " reps INTEGER, sources TEXT,"
    " status TEXT NOT NULL CHECK(status IN ('ok','failed','interrupted')),"
    " message TEXT, started TEXT, ended TEXT);"
    "CREATE TABLE measurements("
    " case_id INTEGER NOT NULL REFERENCES cases(id), source TEXT NOT NULL,"
    " impl TEXT NOT NULL, metric TEXT NOT NULL, rep INTEGER NOT NULL,"
    " value REAL NOT NULL, overhead REAL NOT NULL DEFAULT 0,"
    " bytes INTEGER, nodes INTEGER, items INTEGER);",
    /* 1 -> 2: an index for per-case reads and the aggregate views */
    "CREATE INDEX measurements_case ON measurements(case_id, source, impl, metric);"
    "CREATE INDEX cases_run ON cases(run_id, seq);"
    "CREATE VIEW measurement_ratios AS"
    " SELECT m.*, value / NULLIF(nodes, 0) AS per_node,"
    "  value / NULLIF(bytes, 0) AS per_byte FROM measurements m;"
    "CREATE VIEW metric_stats AS"
    " WITH ranked AS (SELECT m.*, ROW_NUMBER() OVER (PARTITION BY case_id, source,"
    "  impl, metric ORDER BY value) AS k, COUNT(*) OVER (PARTITION BY case_id,"
    "  source, impl, metric) AS n FROM measurements m)"
    " SELECT c.run_id, r.case_id, r.source, r.impl, r.metric, r.n AS reps,"
    "  MIN(r.value) AS min,"
    "  AVG(CASE WHEN r.k IN ((r.n + 1) / 2, (r.n + 2) / 2) THEN r.value END) AS median,"
    "  MAX(r.value) AS max, MAX(r.bytes) AS bytes, MAX(r.nodes) AS nodes,"
    "  MAX(r.items) AS items"
    " FROM ranked r JOIN cases c ON c.id = r.case_id"
    " GROUP BY r.case_id, r.source, r.impl, r.metric;",
    /* 2 -> 3: per-node figures, throughput and the ratio to references */
    "CREATE VIEW per_node_stats AS"
    " SELECT run_id, case_id, source, impl, metric, nodes,"
    "  min / nodes AS min_per_node, median / nodes AS median_per_node,"
    "  max / nodes AS max_per_node,"
    "  CASE WHEN metric IN ('cycles', 'ref_cycles') THEN median / nodes / 13.0 END"
    "   AS vs_13_cycle_baseline"
    " FROM metric_stats WHERE nodes > 0;"
    "CREATE VIEW throughput AS"
    " SELECT run_id, case_id, source, impl, median AS median_ns, bytes,"
    "  bytes * 1e3 / median AS mb_per_s"
    " FROM metric_stats WHERE metric = 'ns' AND bytes > 0 AND median > 0;"
    "CREATE VIEW reference_ratios AS"
    " SELECT o.run_id, o.case_id, r.impl AS reference,"
    "  o.mb_per_s AS tokbench_mb_per_s, r.mb_per_s AS reference_mb_per_s,"
    "  o.mb_per_s / r.mb_per_s AS speedup"
    " FROM throughput o JOIN throughput r ON r.case_id = o.case_id"
    "  AND r.source = 'wallclock'"
    " WHERE o.source = 'tsc' AND o.impl = 'tokbench';",
    /* 3 -> 4: a run key that a copy of the run keeps in any database, so
     * that merging databases can tell a run it already holds.  Old runs get
     * one from their provenance (the same in every copy); new ones add
     * random bits, since host names of containers repeat. */
    "ALTER TABLE runs ADD COLUMN run_key TEXT;"
    "UPDATE runs SET run_key = ifnull(host, '') || '/' || started || '/' ||"
    " ifnull(pid, '');"
    "CREATE UNIQUE INDEX runs_key ON runs(run_key);"
    "CREATE TRIGGER runs_key_new AFTER INSERT ON runs WHEN NEW.run_key IS NULL"
    " BEGIN UPDATE runs SET run_key = ifnull(NEW.host, '') || '/' || NEW.started"
    "  || '/' || ifnull(NEW.pid, '') || '/' || lower(hex(randomblob(8)))"
    "  WHERE id = NEW.id; END;",
    /* 4 -> 5: what each figure counted (counters.h): the exact event, the
     * native event behind a PAPI preset, user mode only or not.  Older
     * figures get what their source fixed: callgrind's sums and the TSC
     * never changed; callgrind's br_misp was conditional plus indirect,
     * its branches conditional.  Old PAPI figures recorded no native
     * event, and all but cycles and instructions count different events
     * on different CPUs: they take their preset's name, which no report
     * column lines up with another's. */
    "ALTER TABLE measurements ADD COLUMN event TEXT;"
    "ALTER TABLE measurements ADD COLUMN native TEXT;"
    "ALTER TABLE measurements ADD COLUMN user_only INTEGER;"
    "UPDATE measurements SET metric = CASE metric WHEN 'br_misp' THEN 'br_misp_cond_ind'"
    " WHEN 'branches' THEN 'br_cond' ELSE metric END WHERE source = 'callgrind';"
    "UPDATE measurements SET user_only = 1, event = CASE"
    " WHEN metric LIKE 'cg\\_%' ESCAPE '\\' THEN substr(metric, 4)"
    " WHEN metric = 'instructions' THEN 'Ir' WHEN metric = 'data_reads' THEN 'Dr'"
    " WHEN metric = 'data_writes' THEN 'Dw' WHEN metric = 'l1d_miss' THEN 'D1mr+D1mw'"
    " WHEN metric = 'llc_miss' THEN 'ILmr+DLmr+DLmw' WHEN metric = 'br_cond' THEN 'Bc'"
    " WHEN metric = 'br_misp_cond_ind' THEN 'Bcm+Bim' END WHERE source = 'callgrind';"
    "UPDATE measurements SET user_only = 0, event = CASE metric WHEN 'ref_cycles'"
    " THEN 'rdtscp' WHEN 'ns' THEN 'rdtscp / measured TSC Hz' END WHERE source = 'tsc';"
    "UPDATE measurements SET user_only = 1, event = CASE metric"
    " WHEN 'cycles' THEN 'PAPI_TOT_CYC' WHEN 'instructions' THEN 'PAPI_TOT_INS'"
    " WHEN 'l1d_miss' THEN 'PAPI_L1_DCM' WHEN 'l2d_miss' THEN 'PAPI_L2_DCM'"
    " WHEN 'llc_miss' THEN 'PAPI_L3_TCM' WHEN 'br_misp' THEN 'PAPI_BR_MSP'"
    " WHEN 'branches' THEN 'PAPI_BR_CN' END WHERE source = 'papi';"
    "UPDATE measurements SET metric = 'papi_' || lower(substr(event, 6))"
    " WHERE source = 'papi' AND metric NOT IN ('cycles', 'instructions');"
    /* the views again, with the event, and the 13-cycle baseline (core
     * cycles) apart from the TSC's reference cycles; throughput and
     * reference_ratios read metric_stats by name and need no change */
    "DROP VIEW per_node_stats; DROP VIEW metric_stats;"
    "CREATE VIEW metric_stats AS"
    " WITH ranked AS (SELECT m.*, ROW_NUMBER() OVER (PARTITION BY case_id, source,"
    "  impl, metric, event ORDER BY value) AS k, COUNT(*) OVER (PARTITION BY case_id,"
    "  source, impl, metric, event) AS n FROM measurements m)"
    " SELECT c.run_id, r.case_id, r.source, r.impl, r.metric, r.event, r.native,"
    "  r.user_only, r.n AS reps, MIN(r.value) AS min,"
    "  AVG(CASE WHEN r.k IN ((r.n + 1) / 2, (r.n + 2) / 2) THEN r.value END) AS median,"
    "  MAX(r.value) AS max, MAX(r.bytes) AS bytes, MAX(r.nodes) AS nodes,"
    "  MAX(r.items) AS items"
    " FROM ranked r JOIN cases c ON c.id = r.case_id"
    " GROUP BY r.case_id, r.source, r.impl, r.metric, r.event;"
    "CREATE VIEW per_node_stats AS"
    " SELECT run_id, case_id, source, impl, metric, event, nodes,"
    "  min / nodes AS min_per_node, median / nodes AS median_per_node,"
    "  max / nodes AS max_per_node,"
    "  CASE WHEN metric = 'cycles' THEN median / nodes / 13.0 END"
    "   AS vs_13_cycle_baseline,"
    "  CASE WHEN metric = 'ref_cycles' THEN median / nodes / 13.0 END"
    "   AS tsc_ref_cycles_vs_13_core_cycle_baseline"
    " FROM metric_stats WHERE nodes > 0;",
    /* 5 -> 6: the outcome of each item of a case that runs many (a
     * MaskBench schema: passing, compile error with its reason, ...) */
    "CREATE TABLE outcomes("
    " case_id INTEGER NOT NULL REFERENCES cases(id), item TEXT NOT NULL,"
    " outcome TEXT NOT NULL, detail TEXT, ttfm_us REAL, max_us REAL,"
    " tokens INTEGER, masks INTEGER);"
    "CREATE INDEX outcomes_case ON outcomes(case_id, outcome);",
    /* 6 -> 7: whose outcome it is: tokbench's, or a reference engine's
     * measured in the same case (MaskBench's XGrammar sample) */
    "ALTER TABLE outcomes ADD COLUMN impl TEXT NOT NULL DEFAULT 'tokbench';",
    /* 7 -> 8: the same views, computed per group: a window over the whole
     * table cannot take a case's filter (SQLite 3.40), so every query of
     * one case ranked every measurement, and MaskBench stores one per mask
     * (200,000 in a default run: 1.4 s a query, 7 ms now) */
    "DROP VIEW per_node_stats; DROP VIEW metric_stats;"
    "CREATE VIEW metric_stats AS"
    " SELECT c.run_id, g.case_id, g.source, g.impl, g.metric, g.event, g.native,"
    "  g.user_only, g.reps, g.min,"
    "  (SELECT AVG(value) FROM (SELECT value, ROW_NUMBER() OVER (ORDER BY value) AS k"
    "    FROM measurements x WHERE x.case_id = g.case_id AND x.source = g.source"
    "     AND x.impl = g.impl AND x.metric = g.metric AND x.event IS g.event)"
    "   WHERE k IN ((g.reps + 1) / 2, (g.reps + 2) / 2)) AS median,"
    "  g.max, g.bytes, g.nodes, g.items"
    " FROM (SELECT case_id, source, impl, metric, event, MAX(native) AS native,"
    "   MAX(user_only) AS user_only, COUNT(*) AS reps, MIN(value) AS min,"
    "   MAX(value) AS max, MAX(bytes) AS bytes, MAX(nodes) AS nodes, MAX(items) AS items"
    "   FROM measurements GROUP BY case_id, source, impl, metric, event) g"
    " JOIN cases c ON c.id = g.case_id;"
    "CREATE VIEW per_node_stats AS"
    " SELECT run_id, case_id, source, impl, metric, event, nodes,"
    "  min / nodes AS min_per_node, median / nodes AS median_per_node,"
    "  max / nodes AS max_per_node,"
    "  CASE WHEN metric = 'cycles' THEN median / nodes / 13.0 END"
    "   AS vs_13_cycle_baseline,"
    "  CASE WHEN metric = 'ref_cycles' THEN median / nodes / 13.0 END"
    "   AS tsc_ref_cycles_vs_13_core_cycle_baseline"
    " FROM metric_stats WHERE nodes > 0;",
    /* 8 -> 9: published figures of other machines with their sources
     * (anchors.h, `tokbench import`), apart from every run's */
    "CREATE TABLE anchors("
    " figure TEXT NOT NULL, subject TEXT NOT NULL, vocabulary TEXT NOT NULL,"
    " work TEXT NOT NULL, value REAL NOT NULL, unit TEXT NOT NULL,"
    " document TEXT NOT NULL, location TEXT NOT NULL, date TEXT NOT NULL,"
    " machine TEXT NOT NULL, note TEXT NOT NULL,"
    " kind TEXT NOT NULL DEFAULT 'published, other machine',"
    " UNIQUE(figure, subject, vocabulary, work, document));",
    /* 9 -> 10: shards (runner.h): a run that is shard K of N of a suite
     * says so, with the key its shards share; a run that `tokbench merge`
     * joined from them has shard 0.  A case of a shard that ran only that
     * shard's share of its items is marked split. */
    "ALTER TABLE runs ADD COLUMN shard INTEGER;"
    "ALTER TABLE runs ADD COLUMN shards INTEGER;"
    "ALTER TABLE runs ADD COLUMN shard_key TEXT;"
    "ALTER TABLE cases ADD COLUMN split INTEGER NOT NULL DEFAULT 0;",
    /* 10 -> 11: the tokenize experiment times each engine's first pass
     * (a fresh tokenizer or state, metric first_ns) apart from its warm
     * passes (ns): throughput says which pass a figure is, and a ratio
     * compares the same pass of tokbench and the reference (tokbench's
     * first pass is on the wall clock, like the references') */
    "DROP VIEW reference_ratios; DROP VIEW throughput;"
    "CREATE VIEW throughput AS"
    " SELECT run_id, case_id, source, impl,"
    "  CASE metric WHEN 'ns' THEN 'warm' ELSE 'first' END AS pass,"
    "  median AS median_ns, bytes, bytes * 1e3 / median AS mb_per_s"
    " FROM metric_stats WHERE metric IN ('ns', 'first_ns') AND bytes > 0"
    "  AND median > 0;"
    "CREATE VIEW reference_ratios AS"
    " SELECT o.run_id, o.case_id, o.pass, r.impl AS reference,"
    "  o.mb_per_s AS tokbench_mb_per_s, r.mb_per_s AS reference_mb_per_s,"
    "  o.mb_per_s / r.mb_per_s AS speedup"
    " FROM throughput o JOIN throughput r ON r.case_id = o.case_id"
    "  AND r.pass = o.pass AND r.source = 'wallclock' AND r.impl <> 'tokbench'"
    " WHERE o.impl = 'tokbench' AND (o.source = 'tsc' OR o.pass = 'first');",
};

int xp_db_exec(xp_db_t *d, const char *sql, tb_err_t *err)
{
    char *msg = NULL;
    if (sqlite3_exec(d->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        tb_fail(err, "%s: %s", d->path, msg ? msg : sqlite3_errmsg(d->db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

/* One integer from a one-row query (a PRAGMA or a count). */
static int query_int(xp_db_t *d, const char *sql, long long *out, tb_err_t *err)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(d->db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        *out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
        rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
    }
    if (rc != SQLITE_OK)
        tb_fail(err, "%s: %s", d->path, sqlite3_errmsg(d->db));
    sqlite3_finalize(st);
    return rc == SQLITE_OK ? 0 : -1;
}

/* Refuses what is not ours; says what the file is.  Reads only. */
static int check_identity(xp_db_t *d, long long *version, tb_err_t *err)
{
    long long app, objects;
    if (query_int(d, "SELECT count(*) FROM sqlite_master", &objects, err))
        return tb_wrap(err, "not a tokbench results database (is it a SQLite "
                       "file?); refusing to touch it");
    if (query_int(d, "PRAGMA application_id", &app, err) ||
        query_int(d, "PRAGMA user_version", version, err))
        return -1;
    if (app != XP_DB_APP_ID && (app != 0 || objects != 0))
        return tb_fail(err, "%s: a SQLite database of another application "
                       "(application_id 0x%08llx, %lld schema objects), not a "
                       "tokbench results database; refusing to touch it",
                       d->path, app, objects);
    if (*version > XP_DB_SCHEMA)
        return tb_fail(err, "%s: results schema version %lld is newer than this "
                       "tokbench understands (%d); use a newer tokbench; the "
                       "file was not changed", d->path, *version, XP_DB_SCHEMA);
    return 0;
}

/* WAL cannot be switched on while another connection is mid-transaction,
 * so the first runs on a fresh file may have to wait their turn. */
static int enable_wal(xp_db_t *d, tb_err_t *err)
{
    for (int tries = 0; tries < 200; tries++) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(d->db, "PRAGMA journal_mode=WAL", -1, &st, NULL) != SQLITE_OK)
            return tb_fail(err, "%s: %s", d->path, sqlite3_errmsg(d->db));
        int ok = sqlite3_step(st) == SQLITE_ROW &&
                 !strcmp((const char *)sqlite3_column_text(st, 0), "wal");
        sqlite3_finalize(st);
        if (ok)
            return 0;
        usleep(50000);
    }
    return tb_fail(err, "%s: cannot switch to WAL mode: %s", d->path,
                   sqlite3_errmsg(d->db));
}

static int migrate_to(xp_db_t *d, int target, tb_err_t *err)
{
    if (xp_db_exec(d, "BEGIN IMMEDIATE", err))
        return -1;
    long long v;
    /* re-read inside the write lock: another process may have migrated */
    int rc = query_int(d, "PRAGMA user_version", &v, err);
    for (; !rc && v < target; v++)
        rc = xp_db_exec(d, migrations[v], err);
    char sql[96];
    snprintf(sql, sizeof sql, "PRAGMA application_id=%d; PRAGMA user_version=%lld",
             XP_DB_APP_ID, v);
    if (!rc)
        rc = xp_db_exec(d, sql, err);
    if (!rc)
        rc = xp_db_exec(d, "COMMIT", err);
    if (rc)
        sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
    return rc ? tb_wrap(err, "migrating to schema %d", target) : 0;
}

static xp_db_t *open_raw(const char *path, int create, tb_err_t *err)
{
    struct stat sb;
    int exists = stat(path, &sb) == 0;
    if (!exists && !create) {
        tb_fail(err, "%s: no such results database", path);
        return NULL;
    }
    xp_db_t *d = calloc(1, sizeof *d);
    if (!d) {
        tb_fail(err, "out of memory");
        return NULL;
    }
    snprintf(d->path, sizeof d->path, "%s", path);
    int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
    if (sqlite3_open_v2(path, &d->db, flags, NULL) != SQLITE_OK) {
        tb_fail(err, "%s: %s", path, d->db ? sqlite3_errmsg(d->db) : "cannot open");
        xp_db_close(d);
        return NULL;
    }
    sqlite3_busy_timeout(d->db, XP_DB_BUSY_MS);
    sqlite3_extended_result_codes(d->db, 1);
    return d;
}

static xp_db_t *open_at(const char *path, int create, int target, tb_err_t *err)
{
    xp_db_t *d = open_raw(path, create, err);
    if (!d)
        return NULL;
    long long version;
    if (check_identity(d, &version, err) || enable_wal(d, err) ||
        xp_db_exec(d, "PRAGMA foreign_keys=ON", err) ||
        (version < target && migrate_to(d, target, err))) {
        xp_db_close(d);
        return NULL;
    }
    return d;
}

xp_db_t *xp_db_open(const char *path, int create, tb_err_t *err)
{
    return open_at(path, create, XP_DB_SCHEMA, err);
}

int xp_db_create_at(const char *path, int version, tb_err_t *err)
{
    if (version < 1 || version > XP_DB_SCHEMA)
        return tb_fail(err, "no schema version %d", version);
    xp_db_t *d = open_at(path, 1, version, err);
    if (!d)
        return -1;
    xp_db_close(d);
    return 0;
}

void xp_db_close(xp_db_t *d)
{
    if (!d)
        return;
    sqlite3_close(d->db);
    free(d);
}

void xp_now_iso(char buf[32])
{
    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    size_t n = strftime(buf, 32, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, 32 - n, ".%03ldZ", (long)(tv.tv_usec / 1000));
}

int xp_db_prepare(xp_db_t *d, const char *sql, sqlite3_stmt **st, tb_err_t *err)
{
    if (sqlite3_prepare_v2(d->db, sql, -1, st, NULL) != SQLITE_OK)
        return tb_fail(err, "%s: %s", d->path, sqlite3_errmsg(d->db));
    return 0;
}

int xp_db_prepare_id(xp_db_t *d, const char *sql, int64_t id, sqlite3_stmt **st,
                     tb_err_t *err)
{
    if (xp_db_prepare(d, sql, st, err))
        return -1;
    sqlite3_bind_int64(*st, 1, id);
    return 0;
}

/* Steps a write statement and finalizes it. */
static int step_done(xp_db_t *d, sqlite3_stmt *st, tb_err_t *err)
{
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return tb_fail(err, "%s: %s", d->path, sqlite3_errmsg(d->db));
    return 0;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
    sqlite3_bind_text(st, i, s ? s : "", -1, SQLITE_TRANSIENT);
}

/* For what may be absent (a run's note, a case's message): NULL, not "". */
static void bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
    if (s)
        bind_text(st, i, s);
    else
        sqlite3_bind_null(st, i);
}

int64_t xp_db_run_begin(xp_db_t *d, const char *suite, const xp_prov_t *p,
                        tb_err_t *err)
{
    sqlite3_stmt *st;
    char now[32], sources[64];
    xp_now_iso(now);
    if (xp_db_prepare(d,
                      "INSERT INTO runs(suite, started, status, git_commit, git_dirty,"
                      " compiler, cflags, cpu_model, cores, tsc_hz, kernel, virt, sources,"
                      " sources_detail, pinned_cpu, host, pid) VALUES"
                      " (?, ?, 'incomplete', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      &st, err))
        return -1;
    bind_text(st, 1, suite);
    bind_text(st, 2, now);
    bind_text(st, 3, p->git_commit);
    if (p->git_dirty < 0)
        sqlite3_bind_null(st, 4);
    else
        sqlite3_bind_int(st, 4, p->git_dirty);
    bind_text(st, 5, p->compiler);
    bind_text(st, 6, p->cflags);
    bind_text(st, 7, p->cpu_model);
    sqlite3_bind_int(st, 8, p->cores);
    sqlite3_bind_double(st, 9, p->tsc_hz);
    bind_text(st, 10, p->kernel);
    bind_text(st, 11, p->virt);
    bind_text(st, 12, xp_sources_format(p->sources, sources, sizeof sources));
    bind_text(st, 13, p->sources_detail);
    sqlite3_bind_int(st, 14, p->pinned_cpu);
    bind_text(st, 15, p->host);
    sqlite3_bind_int64(st, 16, (sqlite3_int64)getpid());
    if (step_done(d, st, err))
        return -1;
    return sqlite3_last_insert_rowid(d->db);
}

int xp_db_run_end(xp_db_t *d, int64_t run, const char *status,
                  const char *note, tb_err_t *err)
{
    sqlite3_stmt *st;
    char now[32];
    xp_now_iso(now);
    if (xp_db_prepare(d, "UPDATE runs SET ended = ?, status = ?, note = ? WHERE id = ?",
                      &st, err))
        return -1;
    bind_text(st, 1, now);
    bind_text(st, 2, status);
    bind_text_or_null(st, 3, note);
    sqlite3_bind_int64(st, 4, run);
    return step_done(d, st, err);
}

int xp_db_run_shard(xp_db_t *d, int64_t run, unsigned shard, unsigned shards,
                    const char *key, tb_err_t *err)
{
    sqlite3_stmt *st;
    if (xp_db_prepare(d, "UPDATE runs SET shard = ?, shards = ?, shard_key = ? WHERE id = ?",
                      &st, err))
        return -1;
    sqlite3_bind_int(st, 1, (int)shard);
    sqlite3_bind_int(st, 2, (int)shards);
    bind_text(st, 3, key);
    sqlite3_bind_int64(st, 4, run);
    return step_done(d, st, err);
}

static int insert_inputs(xp_db_t *d, int64_t run, const xp_input_t *in, size_t n,
                         tb_err_t *err)
{
    for (size_t i = 0; i < n; i++) {
        sqlite3_stmt *st;
        if (xp_db_prepare(d, "INSERT OR IGNORE INTO inputs(run_id, role, path, sha256)"
                          " VALUES (?, ?, ?, ?)", &st, err))
            return -1;
        sqlite3_bind_int64(st, 1, run);
        bind_text(st, 2, in[i].role);
        bind_text(st, 3, in[i].path);
        bind_text(st, 4, in[i].sha256);
        if (step_done(d, st, err))
            return -1;
    }
    return 0;
}

int xp_db_run_inputs(xp_db_t *d, int64_t run, const xp_input_t *in, size_t n,
                     tb_err_t *err)
{
    if (xp_db_exec(d, "BEGIN IMMEDIATE", err))
        return -1;
    if (insert_inputs(d, run, in, n, err) || xp_db_exec(d, "COMMIT", err)) {
        sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    return 0;
}

static int64_t insert_case(xp_db_t *d, const xp_case_rec_t *c, tb_err_t *err)
{
    sqlite3_stmt *st;
    char now[32];
    xp_now_iso(now);
    if (xp_db_prepare(d,
                      "INSERT INTO cases(run_id, seq, line, experiment, vocabulary, layout,"
                      " pattern, corpus, options, reps, sources, status, message, started,"
                      " ended, split) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      &st, err))
        return -1;
    const xp_row_t *r = c->row;
    sqlite3_bind_int64(st, 1, c->run);
    sqlite3_bind_int(st, 2, (int)c->seq);
    sqlite3_bind_int(st, 3, (int)r->line);
    bind_text(st, 4, r->experiment);
    bind_text(st, 5, r->vocab);
    bind_text(st, 6, r->layout);
    bind_text(st, 7, r->pattern);
    bind_text(st, 8, r->corpus);
    bind_text(st, 9, r->options);
    sqlite3_bind_int(st, 10, (int)r->reps);
    bind_text(st, 11, c->sources);
    bind_text(st, 12, c->status);
    bind_text_or_null(st, 13, c->message);
    bind_text(st, 14, c->started);
    bind_text(st, 15, now);
    sqlite3_bind_int(st, 16, c->split);
    if (step_done(d, st, err))
        return -1;
    return sqlite3_last_insert_rowid(d->db);
}

/* What a figure counted, from ?i on; NULL for figures of no counter. */
static void bind_event(sqlite3_stmt *st, int i, const xp_meas_t *m)
{
    if (!m->event[0]) {
        for (int k = 0; k < 3; k++)
            sqlite3_bind_null(st, i + k);
        return;
    }
    bind_text(st, i, m->event);
    bind_text_or_null(st, i + 1, m->native[0] ? m->native : NULL);
    if (m->user_only < 0)
        sqlite3_bind_null(st, i + 2);
    else
        sqlite3_bind_int(st, i + 2, m->user_only);
}

static int insert_measurements(xp_db_t *d, int64_t case_id, const xp_env_t *env,
                               tb_err_t *err)
{
    sqlite3_stmt *st;
    if (xp_db_prepare(d,
                      "INSERT INTO measurements(case_id, source, impl, metric, rep, value,"
                      " overhead, bytes, nodes, items, event, native, user_only)"
                      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", &st, err))
        return -1;
    int rc = 0;
    for (size_t i = 0; !rc && i < env->meas.len; i++) {
        const xp_meas_t *m = &env->meas.data[i];
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, case_id);
        bind_text(st, 2, m->source);
        bind_text(st, 3, m->impl);
        bind_text(st, 4, m->metric);
        sqlite3_bind_int(st, 5, (int)m->rep);
        sqlite3_bind_double(st, 6, m->value);
        sqlite3_bind_double(st, 7, m->overhead);
        sqlite3_bind_int64(st, 8, (sqlite3_int64)m->bytes);
        sqlite3_bind_int64(st, 9, (sqlite3_int64)m->nodes);
        sqlite3_bind_int64(st, 10, (sqlite3_int64)m->items);
        bind_event(st, 11, m);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = tb_fail(err, "%s: %s", d->path, sqlite3_errmsg(d->db));
    }
    sqlite3_finalize(st);
    return rc;
}

static int insert_outcomes(xp_db_t *d, int64_t case_id, const xp_env_t *env, tb_err_t *err)
{
    if (!env->outcomes.len)
        return 0;
    sqlite3_stmt *st;
    if (xp_db_prepare(d,
                      "INSERT INTO outcomes(case_id, item, outcome, detail, ttfm_us, max_us,"
                      " tokens, masks, impl) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", &st, err))
        return -1;
    int rc = 0;
    for (size_t i = 0; !rc && i < env->outcomes.len; i++) {
        const xp_outcome_t *o = &env->outcomes.data[i];
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, case_id);
        bind_text(st, 2, o->item);
        bind_text(st, 3, o->outcome);
        bind_text_or_null(st, 4, o->detail[0] ? o->detail : NULL);
        sqlite3_bind_double(st, 5, o->ttfm_us);
        sqlite3_bind_double(st, 6, o->max_us);
        sqlite3_bind_int64(st, 7, (sqlite3_int64)o->tokens);
        sqlite3_bind_int64(st, 8, (sqlite3_int64)o->masks);
        bind_text(st, 9, o->impl[0] ? o->impl : "tokbench");
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = tb_fail(err, "%s: %s", d->path, sqlite3_errmsg(d->db));
    }
    sqlite3_finalize(st);
    return rc;
}

int xp_db_case_write(xp_db_t *d, const xp_case_rec_t *c, tb_err_t *err)
{
    if (xp_db_exec(d, "BEGIN IMMEDIATE", err))
        return -1;
    int64_t id = insert_case(d, c, err);
    int rc = id < 0 ? -1 : 0;
    if (!rc && c->env)
        rc = insert_measurements(d, id, c->env, err) ||
             insert_outcomes(d, id, c->env, err) ||
             insert_inputs(d, c->run, c->env->inputs.data, c->env->inputs.len, err);
    if (!rc)
        rc = xp_db_exec(d, "COMMIT", err);
    if (rc)
        sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
    return rc ? -1 : 0;
}
