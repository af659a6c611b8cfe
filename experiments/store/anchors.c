/* anchors: published figures read from CSV into the store (anchors.h). */
#include "anchors.h"

#include <csv.h>
#include <stdlib.h>
#include <string.h>

#include "../drivers/suite.h"

enum { A_FIGURE, A_SUBJECT, A_VOCAB, A_WORK, A_VALUE, A_UNIT, A_DOCUMENT, A_LOCATION, A_DATE,
       A_MACHINE, A_NOTE, A_NCOLS };

static const char *const anchor_cols[A_NCOLS] = {
    "figure", "subject", "vocabulary", "work", "value", "unit", "document", "location",
    "date", "machine", "note",
};

/* Columns a row must fill. */
static const unsigned required = 1u << A_FIGURE | 1u << A_SUBJECT | 1u << A_VALUE |
                                 1u << A_UNIT | 1u << A_DOCUMENT | 1u << A_LOCATION |
                                 1u << A_DATE | 1u << A_MACHINE;

#define A_MAXFIELDS 16

/* The reader's state between libcsv's callbacks. */
typedef struct {
    const char *name;
    xp_db_t *db;
    sqlite3_stmt *ins;
    tb_err_t *err;
    int failed, rows;
    int col[A_MAXFIELDS];      /* field position -> column, -1 unknown */
    int nheader;               /* 0 until the header is read */
    char *field[A_MAXFIELDS];
    int nfield;
    unsigned line, rec_line;   /* newlines read; the record's first line */
} reader_t;

static void field_cb(void *data, size_t len, void *arg)
{
    reader_t *r = arg;
    if (r->failed)
        return;
    if (!r->nfield)
        r->rec_line = r->line + 1;
    for (size_t i = 0; i < len; i++)
        r->line += ((char *)data)[i] == '\n';
    if (r->nfield == A_MAXFIELDS) {
        r->failed = tb_fail(r->err, "%s:%u: more than %d fields", r->name, r->rec_line,
                            A_MAXFIELDS);
        return;
    }
    r->field[r->nfield] = strndup(data ? data : "", data ? len : 0);
    if (!r->field[r->nfield])
        r->failed = tb_fail(r->err, "%s: out of memory", r->name);
    else
        r->nfield++;
}

static int read_header(reader_t *r)
{
    unsigned seen = 0;
    for (int i = 0; i < r->nfield; i++) {
        r->col[i] = -1;
        for (int c = 0; c < A_NCOLS; c++)
            if (!strcmp(r->field[i], anchor_cols[c]))
                r->col[i] = c;
        if (r->col[i] < 0)
            return tb_fail(r->err, "%s:%u: column %d: unknown column '%s'", r->name,
                           r->rec_line, i + 1, r->field[i]);
        seen |= 1u << r->col[i];
    }
    for (int c = 0; c < A_NCOLS; c++)
        if (required >> c & 1 && !(seen >> c & 1))
            return tb_fail(r->err, "%s:%u: the header has no column '%s'", r->name,
                           r->rec_line, anchor_cols[c]);
    r->nheader = r->nfield;
    return 0;
}

static int store_row(reader_t *r)
{
    if (r->nfield != r->nheader)
        return tb_fail(r->err, "%s:%u: %d fields, the header has %d", r->name, r->rec_line,
                       r->nfield, r->nheader);
    const char *v[A_NCOLS] = {0};
    for (int i = 0; i < r->nfield; i++)
        v[r->col[i]] = r->field[i];
    for (int c = 0; c < A_NCOLS; c++)
        if (required >> c & 1 && !*v[c])
            return tb_fail(r->err, "%s:%u: column '%s' is empty", r->name, r->rec_line,
                           anchor_cols[c]);
    char *end;
    double value = strtod(v[A_VALUE], &end);
    if (*end || end == v[A_VALUE])
        return tb_fail(r->err, "%s:%u: column 'value': '%s' is not a number", r->name,
                       r->rec_line, v[A_VALUE]);
    sqlite3_reset(r->ins);
    for (int c = 0; c < A_NCOLS; c++)
        if (c != A_VALUE)
            sqlite3_bind_text(r->ins, c + 1, v[c] ? v[c] : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(r->ins, A_VALUE + 1, value);
    if (sqlite3_step(r->ins) != SQLITE_DONE)
        return tb_fail(r->err, "%s: %s", r->db->path, sqlite3_errmsg(r->db->db));
    r->rows++;
    return 0;
}

static void record_cb(int c, void *arg)
{
    reader_t *r = arg;
    if (c == '\n')
        r->line++;
    int blank = !r->nfield || (r->nfield == 1 && !*r->field[0]);
    if (!r->failed && !blank)
        r->failed = r->nheader ? store_row(r) : read_header(r);
    for (int i = 0; i < r->nfield; i++)
        free(r->field[i]);
    r->nfield = 0;
}

static int read_csv(reader_t *r, char *text, size_t len)
{
    struct csv_parser csv;
    if (csv_init(&csv, CSV_STRICT | CSV_STRICT_FINI | CSV_REPALL_NL | CSV_APPEND_NULL))
        return tb_fail(r->err, "%s: out of memory", r->name);
    xp_csv_blank_comments(text, len);
    size_t done = csv_parse(&csv, text, len, field_cb, record_cb, r);
    if (!r->failed && done != len)
        r->failed = tb_fail(r->err, "%s: line %u: malformed CSV: %s", r->name, r->line + 1,
                            csv_strerror(csv_error(&csv)));
    if (!r->failed && csv_fini(&csv, field_cb, record_cb, r))
        r->failed = tb_fail(r->err, "%s: line %u: malformed CSV at the end (an unclosed "
                            "quote?)", r->name, r->rec_line);
    record_cb(-1, r); /* frees what a failed record left */
    csv_free(&csv);
    if (!r->failed && !r->nheader)
        r->failed = tb_fail(r->err, "%s: no header record", r->name);
    return r->failed ? -1 : 0;
}

int xp_anchors_import(xp_db_t *db, const char *name, const char *text, size_t len, int *n,
                      tb_err_t *err)
{
    reader_t r = {.name = name, .db = db, .err = err};
    char *copy = malloc(len + 1);
    if (!copy)
        return tb_fail(err, "%s: out of memory", name);
    memcpy(copy, text, len);
    int rc = xp_db_exec(db, "BEGIN IMMEDIATE", err);
    if (!rc)
        rc = xp_db_prepare(db, "INSERT OR REPLACE INTO anchors(figure, subject, vocabulary,"
                               " work, value, unit, document, location, date, machine, note)"
                               " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", &r.ins, err);
    if (!rc)
        rc = read_csv(&r, copy, len);
    sqlite3_finalize(r.ins);
    free(copy);
    if (!rc)
        rc = xp_db_exec(db, "COMMIT", err);
    if (rc) {
        tb_err_t ignore;
        xp_db_exec(db, "ROLLBACK", &ignore);
        return -1;
    }
    *n = r.rows;
    return 0;
}
