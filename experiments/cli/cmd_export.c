/*
 * cmd_export: `tokbench export`, one table or view of the results store as
 * CSV for people who plot elsewhere.  Text fields go through libcsv's
 * csv_fwrite, so commas, quotes and newlines inside them survive; numbers
 * are written bare and full precision; NULL is an empty, unquoted field.
 */
#include <csv.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/buf.h"
#include "cli.h"
#include "cmd_results.h"

/* The tables and views of the store, comma-separated, into buf. */
static int known_names(xp_db_t *db, tb_buf_t *buf, const char *want, int *found,
                       tb_err_t *err)
{
    sqlite3_stmt *st;
    if (xp_db_prepare(db, "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"
                          " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY type, name",
                      &st, err))
        return -1;
    *found = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        if (buf->len)
            tb_buf_put(buf, ", ", 2);
        tb_buf_put(buf, name, strlen(name));
        *found |= !strcmp(name, want);
    }
    sqlite3_finalize(st);
    if (tb_buf_putc(buf, 0))
        return tb_fail(err, "out of memory");
    return 0;
}

/* 1 if the table or view has the column. */
static int has_column(xp_db_t *db, const char *table, const char *column)
{
    char *sql = sqlite3_mprintf("SELECT 1 FROM pragma_table_info(%Q) WHERE name = %Q",
                                table, column);
    sqlite3_stmt *st;
    int yes = 0;
    if (sql && sqlite3_prepare_v2(db->db, sql, -1, &st, NULL) == SQLITE_OK) {
        yes = sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
    }
    sqlite3_free(sql);
    return yes;
}

static void put_text(FILE *out, const char *s, size_t n)
{
    csv_fwrite(out, s, n);
}

/* Writes `table` (restricted to one run when run > 0) as CSV to out. */
static int export_csv(xp_db_t *db, const char *table, int64_t run, FILE *out,
                      tb_err_t *err)
{
    char *sql;
    if (run <= 0)
        sql = sqlite3_mprintf("SELECT * FROM \"%w\"", table);
    else if (!strcmp(table, "runs"))
        sql = sqlite3_mprintf("SELECT * FROM runs WHERE id = %lld", (long long)run);
    else if (has_column(db, table, "run_id"))
        sql = sqlite3_mprintf("SELECT * FROM \"%w\" WHERE run_id = %lld", table,
                              (long long)run);
    else if (has_column(db, table, "case_id"))
        sql = sqlite3_mprintf("SELECT * FROM \"%w\" WHERE case_id IN (SELECT id FROM"
                              " cases WHERE run_id = %lld)", table, (long long)run);
    else
        return tb_fail(err, "%s: table '%s' has no run to select by; export it "
                       "without --run", db->path, table);
    sqlite3_stmt *st;
    if (!sql)
        return tb_fail(err, "out of memory");
    int rc = sqlite3_prepare_v2(db->db, sql, -1, &st, NULL);
    sqlite3_free(sql);
    if (rc != SQLITE_OK)
        return tb_fail(err, "%s: table '%s': %s", db->path, table, sqlite3_errmsg(db->db));
    int ncol = sqlite3_column_count(st);
    for (int i = 0; i < ncol; i++) {
        const char *name = sqlite3_column_name(st, i);
        if (i)
            fputc(',', out);
        put_text(out, name, strlen(name));
    }
    fputc('\n', out);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 0; i < ncol; i++) {
            if (i)
                fputc(',', out);
            switch (sqlite3_column_type(st, i)) {
            case SQLITE_NULL:
                break;
            case SQLITE_INTEGER:
                fprintf(out, "%lld", (long long)sqlite3_column_int64(st, i));
                break;
            case SQLITE_FLOAT:
                fprintf(out, "%.17g", sqlite3_column_double(st, i));
                break;
            default: {
                const void *p = sqlite3_column_blob(st, i);
                put_text(out, p ? p : "", (size_t)sqlite3_column_bytes(st, i));
            }
            }
        }
        fputc('\n', out);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return tb_fail(err, "%s: reading table '%s': %s", db->path, table,
                       sqlite3_errmsg(db->db));
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tokbench export [--db FILE] TABLE_OR_VIEW [--run ID] [-o FILE]\n"
            "Writes one table or view of the results database as CSV (a header line,\n"
            "then one line per row; text quoted by libcsv, NULL as an empty field).\n"
            "Tables: runs, cases, measurements, inputs; views: metric_stats,\n"
            "per_node_stats, throughput, reference_ratios, measurement_ratios.\n"
            "--db FILE  the results database (default %s)\n"
            "--run ID   only the rows of that run\n"
            "-o FILE    write there instead of standard output\n", XP_DEFAULT_DB);
}

int xp_cmd_export(int argc, char **argv)
{
    const char *path = xp_take_db_arg(&argc, argv);
    if (xp_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    const char *table = NULL, *outpath = NULL;
    int64_t run = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--run") && i + 1 < argc) {
            char *end;
            run = strtoll(argv[++i], &end, 10);
            if (*end || run <= 0) {
                fprintf(stderr, "tokbench export: '%s' is not a run number\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            outpath = argv[++i];
        } else if (argv[i][0] != '-' && !table) {
            table = argv[i];
        } else {
            fprintf(stderr, "tokbench export: unexpected argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (!table) {
        usage(stderr);
        return 2;
    }
    tb_err_t err;
    xp_db_t *db = xp_db_open(path, 0, &err);
    if (!db)
        return xp_die(&err);
    tb_buf_t names = {0};
    int found = 0, rc = known_names(db, &names, table, &found, &err);
    if (!rc && !found)
        rc = tb_fail(&err, "%s: no table or view '%s'; known: %s", path, table,
                     (const char *)names.data);
    tb_buf_free(&names);
    FILE *out = stdout;
    if (!rc && outpath && !(out = fopen(outpath, "w")))
        rc = tb_fail(&err, "%s: cannot write: %s", outpath, strerror(errno));
    if (!rc)
        rc = export_csv(db, table, run, out, &err);
    if (out && out != stdout) {
        int bad = ferror(out);
        if (fclose(out) || bad) {
            if (!rc)
                rc = tb_fail(&err, "%s: write failed", outpath);
        }
    } else if (out && fflush(out) && !rc)
        rc = tb_fail(&err, "standard output: write failed");
    xp_db_close(db);
    return rc ? xp_die(&err) : 0;
}
