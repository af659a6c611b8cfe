/* mbtable: the MaskBench table of a run (see mbtable.h). */
#include "mbtable.h"

#include <csv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/buf.h"
#include "../../base/file.h"

#define PUBLISHED (XP_MB_COLS - XP_MB_PUBLISHED) /* engines the anchors CSV may name */
#define ROW_SCHEMAS 16            /* rows[ROW_SCHEMAS] is "schemas" */

typedef enum { MB_TBM, MB_TTFM, MB_TOKENS, MB_SCHEMAS, MB_OUTCOME } mb_kind_t;

/* The published table's rows; the name is also the anchors CSV's metric.
 * q: the quantile, -1 for the average. */
static const struct {
    const char *name;
    mb_kind_t kind;
    double q;
} rows[XP_MB_ROWS] = {
    {"TBM avg", MB_TBM, -1},      {"TBM p25", MB_TBM, .25},    {"TBM p50", MB_TBM, .5},
    {"TBM p75", MB_TBM, .75},     {"TBM p90", MB_TBM, .9},     {"TBM p95", MB_TBM, .95},
    {"TBM p99", MB_TBM, .99},     {"TBM p99.9", MB_TBM, .999}, {"TBM p100", MB_TBM, 1},
    {"TTFM avg", MB_TTFM, -1},    {"TTFM p50", MB_TTFM, .5},   {"TTFM p75", MB_TTFM, .75},
    {"TTFM p90", MB_TTFM, .9},    {"TTFM p99", MB_TTFM, .99},  {"TTFM p100", MB_TTFM, 1},
    {"tokens", MB_TOKENS, 0},     {"schemas", MB_SCHEMAS, 0},  {"passing", MB_OUTCOME, 0},
    {"compile error", MB_OUTCOME, 0}, {"crash", MB_OUTCOME, 0}, {"timeout", MB_OUTCOME, 0},
    {"validation error", MB_OUTCOME, 0}, {"invalidation error", MB_OUTCOME, 0},
};

/* A measured column: whose figures, and which metrics. */
typedef struct {
    const char *impl, *tbm, *ttfm;
    int counts; /* the column also holds the counts */
} measured_t;

static const measured_t measured[XP_MB_PUBLISHED - 1] = {
    {"tokbench", "tbm_us", "ttfm_us", 1},
    {"tokbench", "tbm_cpu_us", "ttfm_cpu_us", 0},
    {"xgrammar", "tbm_us", "ttfm_us", 1},
    {"xgrammar", "tbm_cpu_us", "ttfm_cpu_us", 0},
    {"llguidance", "tbm_us", "ttfm_us", 1},
    {"llguidance", "tbm_cpu_us", "ttfm_cpu_us", 0},
};

/* ---- samples ------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int xp_mb_samples(xp_db_t *db, int64_t case_id, const char *impl, const char *metric,
                  xp_samples_t *s, tb_err_t *err)
{
    sqlite3_stmt *st;
    TB_VEC(double) v = {0};
    if (xp_db_prepare_id(db, "SELECT value FROM measurements WHERE case_id = ? AND"
                             " source = 'wallclock' AND impl = ? AND metric = ?",
                         case_id, &st, err))
        return -1;
    sqlite3_bind_text(st, 2, impl, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, metric, -1, SQLITE_STATIC);
    int rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW)
        if (tb_vec_push(&v, sqlite3_column_double(st, 0)))
            rc = tb_fail(err, "out of memory");
    sqlite3_finalize(st);
    if (v.len)
        qsort(v.data, v.len, sizeof *v.data, cmp_double);
    s->v = v.data;
    s->n = v.len;
    return rc;
}

double xp_mb_quantile(const xp_samples_t *s, double q)
{
    if (!s->n)
        return NAN;
    double pos = q * (double)(s->n - 1);
    size_t lo = (size_t)pos;
    if (lo + 1 >= s->n)
        return s->v[s->n - 1];
    return s->v[lo] + (s->v[lo + 1] - s->v[lo]) * (pos - (double)lo);
}

static double average(const xp_samples_t *s)
{
    double sum = 0;
    for (size_t i = 0; i < s->n; i++)
        sum += s->v[i];
    return s->n ? sum / (double)s->n : NAN;
}

/* ---- the published figures ------------------------------------------------------ */

typedef struct {
    char engine[PUBLISHED][64];
    double value[PUBLISHED][XP_MB_ROWS];
    int n;
    char field[3][64];
    int nfield, bad;
} anchors_t;

static void on_field(void *s, size_t len, void *data)
{
    anchors_t *a = data;
    if (a->nfield < 3)
        snprintf(a->field[a->nfield], sizeof a->field[0], "%.*s", (int)len, (const char *)s);
    a->nfield++;
}

/* A record engine,metric,value; comments, the header and blank lines pass. */
static void on_record(int c, void *data)
{
    (void)c;
    anchors_t *a = data;
    int n = a->nfield;
    a->nfield = 0;
    if (n == 0 || a->field[0][0] == '#' || !strcmp(a->field[0], "engine"))
        return;
    char *end;
    double v = n == 3 ? strtod(a->field[2], &end) : NAN;
    int e = 0, r = 0;
    while (e < a->n && strcmp(a->engine[e], a->field[0]))
        e++;
    while (r < XP_MB_ROWS && strcmp(rows[r].name, a->field[1]))
        r++;
    if (n != 3 || *end || r == XP_MB_ROWS || (e == a->n && a->n == PUBLISHED)) {
        a->bad = 1;
        return;
    }
    if (e == a->n) {
        snprintf(a->engine[a->n++], sizeof a->engine[0], "%s", a->field[0]);
        for (int k = 0; k < XP_MB_ROWS; k++)
            a->value[e][k] = NAN;
    }
    a->value[e][r] = v;
}

/* Reads the anchors CSV; a file that cannot be read is a note, not an
 * error: the measured columns stand without it. */
static void read_anchors(const char *path, anchors_t *a, char *note, size_t size)
{
    uint8_t *text = NULL;
    size_t len = 0;
    tb_err_t err;
    struct csv_parser p;
    memset(a, 0, sizeof *a);
    if (tb_read_file(path, &text, &len, &err)) {
        snprintf(note, size, "No published figures: %.400s.", err.msg);
        return;
    }
    if (csv_init(&p, CSV_APPEND_NULL) == 0) {
        if (csv_parse(&p, text, len, on_field, on_record, a) != len)
            a->bad = 1;
        csv_fini(&p, on_field, on_record, a);
        csv_free(&p);
    }
    free(text);
    if (a->bad) {
        a->n = 0;
        snprintf(note, size, "No published figures: %s is not engine,metric,value with "
                 "the table's metric names.", path);
    }
}

/* ---- the table ------------------------------------------------------------------ */

static void fmt_us(char *buf, size_t n, double v)
{
    if (!isfinite(v))
        snprintf(buf, n, "not measured");
    else
        snprintf(buf, n, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
}

static void fmt_count(char *buf, size_t n, double v, double schemas, int outcome)
{
    if (!isfinite(v))
        snprintf(buf, n, "%s", "");
    else if (outcome && schemas > 0)
        snprintf(buf, n, "%.0f (%.1f%%)", v, 100 * v / schemas);
    else
        snprintf(buf, n, "%.0f", v);
}

/* The outcome counts of one impl, by row; schemas in the "schemas" row. */
static int counts(xp_db_t *db, int64_t case_id, const char *impl, double c[XP_MB_ROWS],
                  tb_err_t *err)
{
    sqlite3_stmt *st;
    if (xp_db_prepare_id(db, "SELECT outcome, count(*) FROM outcomes WHERE case_id = ?"
                             " AND impl = ? GROUP BY outcome", case_id, &st, err))
        return -1;
    sqlite3_bind_text(st, 2, impl, -1, SQLITE_STATIC);
    for (int r = 0; r < XP_MB_ROWS; r++)
        c[r] = rows[r].kind == MB_OUTCOME || rows[r].kind == MB_SCHEMAS ? 0 : NAN;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *o = (const char *)sqlite3_column_text(st, 0);
        double n = sqlite3_column_double(st, 1);
        for (int r = 0; r < XP_MB_ROWS; r++)
            if (rows[r].kind == MB_SCHEMAS || (o && !strcmp(rows[r].name, o)))
                c[r] += n;
    }
    sqlite3_finalize(st);
    return 0;
}

/* One measured column (k: 1..6) into the table. */
static int fill_measured(xp_db_t *db, xp_mb_table_t *t, int k, tb_err_t *err)
{
    const measured_t *m = &measured[k - 1];
    xp_samples_t tbm = {0}, ttfm = {0};
    double c[XP_MB_ROWS];
    int rc = xp_mb_samples(db, t->case_id, m->impl, m->tbm, &tbm, err) ||
             xp_mb_samples(db, t->case_id, m->impl, m->ttfm, &ttfm, err) ||
             counts(db, t->case_id, m->impl, c, err);
    for (int r = 0; !rc && r < XP_MB_ROWS; r++) {
        const xp_samples_t *s = rows[r].kind == MB_TBM ? &tbm : &ttfm;
        char *cell = t->cell[r][k];
        size_t n = sizeof t->cell[r][k];
        if (rows[r].kind == MB_TBM || rows[r].kind == MB_TTFM)
            fmt_us(cell, n, rows[r].q < 0 ? average(s) : xp_mb_quantile(s, rows[r].q));
        else if (m->counts && c[ROW_SCHEMAS] == 0)
            snprintf(cell, n, "not measured");
        else if (m->counts && rows[r].kind == MB_TOKENS)
            fmt_count(cell, n, (double)tbm.n, 0, 0);
        else if (m->counts)
            fmt_count(cell, n, c[r], c[ROW_SCHEMAS], rows[r].kind == MB_OUTCOME);
    }
    if (!rc && m->counts)
        *(!strcmp(m->impl, "tokbench") ? &t->schemas : !strcmp(m->impl, "xgrammar")
          ? &t->xg_schemas : &t->llg_schemas) = (size_t)c[ROW_SCHEMAS];
    free(tbm.v);
    free(ttfm.v);
    return rc;
}

/* A reference engine's two column heads: wall time over its sample (or
 * why it did not run), and its CPU time (`cpu`: process or thread). */
static void ref_heads(char wall[XP_MB_HEAD], char cpu_head[XP_MB_HEAD], const char *engine,
                      const char *cpu, size_t schemas, const char *option)
{
    if (schemas)
        snprintf(wall, XP_MB_HEAD, "%s, wall (sample of %zu schemas)", engine, schemas);
    else
        snprintf(wall, XP_MB_HEAD, "%s, wall (not run: option %s=N)", engine, option);
    snprintf(cpu_head, XP_MB_HEAD, "%s, %s CPU time", engine, cpu);
}

static void heads(xp_mb_table_t *t, const anchors_t *a)
{
    static const char *const abbr[XP_MB_COLS] = {
        "metric", "tokbench", "tokbench CPU", "XGrammar", "XGrammar CPU", "llguidance",
        "llguidance CPU", "published 1", "published 2",
    };
    snprintf(t->head[0], sizeof t->head[0], "metric (times in us)");
    snprintf(t->head[1], sizeof t->head[1], "tokbench, wall (%zu schemas)", t->schemas);
    snprintf(t->head[2], sizeof t->head[2], "tokbench, thread CPU time");
    ref_heads(t->head[3], t->head[4], "XGrammar 0.1.27", "process", t->xg_schemas,
              "xgrammar");
    ref_heads(t->head[5], t->head[6], "llguidance 1.8.0", "thread", t->llg_schemas,
              "llguidance");
    for (int c = 0; c < XP_MB_COLS; c++)
        snprintf(t->abbr[c], sizeof t->abbr[c], "%s", abbr[c]);
    for (int e = 0; e < a->n; e++) {
        int c = XP_MB_PUBLISHED + e;
        snprintf(t->head[c], sizeof t->head[c], "%s (published, other machine)", a->engine[e]);
        snprintf(t->abbr[c], sizeof t->abbr[c], "%.17s", a->engine[e]);
    }
}

/* The run's first maskbench case: its id, and whether it ran. */
static int find_case(xp_db_t *db, int64_t run, xp_mb_table_t *t, tb_err_t *err)
{
    sqlite3_stmt *st;
    if (xp_db_prepare_id(db, "SELECT id, status, ifnull(message, '') FROM cases WHERE"
                             " run_id = ? AND experiment = 'maskbench' ORDER BY seq LIMIT 1",
                         run, &st, err))
        return -1;
    snprintf(t->why, sizeof t->why, "the run has no maskbench case");
    if (sqlite3_step(st) == SQLITE_ROW) {
        t->case_id = sqlite3_column_int64(st, 0);
        t->measured = !strcmp((const char *)sqlite3_column_text(st, 1), "ok");
        snprintf(t->why, sizeof t->why, "%s", t->measured ? "" :
                 (const char *)sqlite3_column_text(st, 2));
    }
    sqlite3_finalize(st);
    return 0;
}

/* The mask cache's figures (drv_maskbench's mask_cache_* measurements)
 * appended to the note; nothing where the run has none (maskcache=0, or
 * a run older than the cache).  A case joined from shards (`tokbench
 * merge`) holds one figure per shard: the counts add up, the bytes take
 * the largest. */
static int note_cache(xp_db_t *db, xp_mb_table_t *t, tb_err_t *err)
{
    static const char *const metric[4] = {"mask_cache_hits", "mask_cache_misses",
                                          "mask_cache_flushes", "mask_cache_max_bytes"};
    double v[4];
    for (int i = 0; i < 4; i++) {
        xp_samples_t s;
        if (xp_mb_samples(db, t->case_id, "tokbench", metric[i], &s, err))
            return -1;
        v[i] = s.n ? 0 : NAN;
        for (size_t k = 0; k < s.n; k++)
            v[i] = i < 3 ? v[i] + s.v[k] : s.v[k]; /* sorted: the last is the largest */
        free(s.v);
    }
    if (!isfinite(v[0]) || !isfinite(v[1]) || v[0] + v[1] == 0)
        return 0;
    size_t used = strlen(t->note);
    snprintf(t->note + used, sizeof t->note - used, "%stokbench's mask cache: %.0f of %.0f "
             "masks (%.1f%%) copied from it, %.0f flushes, at most %.1f MB for a schema.",
             used ? " " : "", v[0], v[0] + v[1], 100 * v[0] / (v[0] + v[1]), v[2],
             v[3] / (1 << 20));
    return 0;
}

int xp_mb_table(xp_db_t *db, int64_t run, const char *anchors, xp_mb_table_t *t,
                tb_err_t *err)
{
    memset(t, 0, sizeof *t);
    if (find_case(db, run, t, err))
        return -1;
    if (!t->measured)
        return 0;
    anchors_t a;
    read_anchors(anchors, &a, t->note, sizeof t->note);
    t->nrows = XP_MB_ROWS;
    t->ncols = XP_MB_PUBLISHED + a.n;
    for (int r = 0; r < XP_MB_ROWS; r++) {
        snprintf(t->cell[r][0], sizeof t->cell[r][0], "%s", rows[r].name);
        for (int e = 0; e < a.n; e++) {
            int outcome = rows[r].kind == MB_OUTCOME, c = XP_MB_PUBLISHED + e;
            if (outcome || rows[r].kind == MB_SCHEMAS || rows[r].kind == MB_TOKENS)
                fmt_count(t->cell[r][c], sizeof t->cell[r][c], a.value[e][r],
                          a.value[e][ROW_SCHEMAS], outcome);
            else if (isfinite(a.value[e][r]))
                snprintf(t->cell[r][c], sizeof t->cell[r][c], "%.15g", a.value[e][r]);
        }
    }
    for (int k = 1; k < XP_MB_PUBLISHED; k++)
        if (fill_measured(db, t, k, err))
            return -1;
    heads(t, &a);
    if (!t->note[0] && a.n)
        snprintf(t->note, sizeof t->note, "Published columns: %s (other machine, other "
                 "schema set; empty: not published).", anchors);
    size_t used = strlen(t->note);
    snprintf(t->note + used, sizeof t->note - used, "%stokens: the TBM samples; "
             "percentiles interpolated between ranks.", used ? " " : "");
    return note_cache(db, t, err);
}

void xp_mb_reason_group(const char *reason, char *buf, size_t size)
{
    const char *p = reason;
    /* a JSON pointer (#/...) or a file position (/path:line:col) first */
    const char *colon = *p == '#' || *p == '/' ? strstr(p, ": ") : NULL;
    if (colon)
        p = colon + 2;
    size_t k = 0;
    buf[0] = 0;
    for (int word = 0; word < 2 && *p; word++) {
        while (*p == ' ')
            p++;
        size_t len = strcspn(p, " ");
        /* a quoted value after a bare keyword: format 'uri', pattern '^a' */
        int value = word == 1 && (*p == '\'' || *p == '"') && buf[0] != '\'';
        k += (size_t)snprintf(buf + k, k < size ? size - k : 0, "%s%.*s", word ? " " : "",
                              value ? 5 : (int)len, value ? "'...'" : p);
        if (k >= size)
            break;
        p += len;
    }
}
