/*
 * fuzz_results: `tokbench runs`, `show` and `diff` on a damaged results
 * database.  Two kinds of input:
 *   - a SQLite file ("SQLite format 3\0..."): opened as it is, so that
 *     damaged pages and headers meet tokbench's opening code;
 *   - otherwise "V" then SQL: a fresh database at schema version V (1 to
 *     XP_DB_SCHEMA: older ones are migrated on open) is damaged by the SQL
 *     (rows with NULLs, wrong types, huge or negative numbers, dropped
 *     tables or columns, a changed user_version), then opened.  ATTACH and
 *     VACUUM INTO (which could write elsewhere) are refused, and the SQL's work
 *     and lengths are bounded so that the damage step itself cannot hang.
 * Seeds: fuzz/corpus/results/ (a small real database, and SQL that fills
 * a run as `tokbench run` does, then breaks it).  Dictionary:
 * fuzz/results.dict.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../experiments/cli/cli.h"
#include "../experiments/store/results.h"
#include "support.h"

static int stop_after(void *arg)
{
    return ++*(unsigned *)arg > 2000; /* x 1000 virtual machine steps */
}

/* Runs the damaging SQL on the database at path (errors are part of the
 * game and ignored). */
static void damage(const char *path, const char *sql)
{
    sqlite3 *db;
    unsigned steps = 0;
    if (sqlite3_open(path, &db) == SQLITE_OK) {
        sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 20);
        sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
        sqlite3_progress_handler(db, 1000, stop_after, &steps);
        sqlite3_exec(db, sql, NULL, NULL, NULL);
    }
    sqlite3_close(db);
}

static void commands(const char *path)
{
    char db[4096];
    snprintf(db, sizeof db, "%s", path);
    char *runs[] = {"runs", "--db", db, NULL};
    char *show1[] = {"show", "1", "--db", db, NULL};
    char *show2[] = {"show", "2", "--db", db, NULL};
    char *diff[] = {"diff", "1", "2", "--db", db, NULL};
    xp_cmd_runs(3, runs);
    xp_cmd_show(4, show1);
    xp_cmd_show(4, show2);
    xp_cmd_diff(5, diff);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char magic[16] = "SQLite format 3";
    tb_err_t err;
    if (size >= sizeof magic && !memcmp(data, magic, sizeof magic)) {
        commands(fuzz_scratch(".db", data, size));
    } else if (size >= 1 && data[0] >= '1' && data[0] < '1' + XP_DB_SCHEMA) {
        char *sql = fuzz_strndup(data + 1, size - 1);
        const char *path = fuzz_scratch_path(".db");
        if (!strcasestr(sql, "vacuum") &&
            !xp_db_create_at(path, data[0] - '0', &err)) {
            damage(path, sql);
            commands(path);
        }
        free(sql);
    }
    fuzz_scratch_remove(".db");
    return 0;
}
