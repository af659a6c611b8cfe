/* suite: the CSV suite reader (see suite.h). */
#include "suite.h"

#include <csv.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/buf.h"
#include "../../base/file.h"

enum { COL_EXPERIMENT, COL_VOCAB, COL_LAYOUT, COL_PATTERN, COL_CORPUS,
       COL_REPS, COL_SOURCES, COL_OPTIONS, NCOLS };

static const char *const col_names[NCOLS] = {
    "experiment", "vocabulary", "layout", "pattern", "corpus",
    "repetitions", "sources", "options",
};

#define MAX_FIELDS 32

/* The parser's state between libcsv callbacks. */
typedef struct {
    const char *name;
    xp_suite_t *suite;
    tb_err_t *err;
    int failed;
    int have_header;
    int col_of_field[MAX_FIELDS]; /* header position -> column, -1 unused */
    size_t nheader;
    char *field[MAX_FIELDS];      /* the current record's fields */
    size_t nfield;
    unsigned newlines;            /* newlines consumed so far */
    unsigned rec_line;            /* line the current record started on */
} parse_t;

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

static void clear_fields(parse_t *p)
{
    for (size_t i = 0; i < p->nfield; i++)
        free(p->field[i]);
    p->nfield = 0;
}

static void on_field(void *data, size_t len, void *arg)
{
    parse_t *p = arg;
    if (p->failed)
        return;
    if (p->nfield == 0)
        p->rec_line = p->newlines + 1;
    for (size_t i = 0; i < len; i++)
        p->newlines += ((char *)data)[i] == '\n';
    if (p->nfield == MAX_FIELDS) {
        p->failed = tb_fail(p->err, "%s:%u: more than %d fields", p->name,
                            p->rec_line, MAX_FIELDS);
        return;
    }
    p->field[p->nfield] = dup_n(data ? data : "", data ? len : 0);
    if (!p->field[p->nfield]) {
        p->failed = tb_fail(p->err, "%s: out of memory", p->name);
        return;
    }
    p->nfield++;
}

static int take_header(parse_t *p)
{
    int seen[NCOLS] = {0};
    for (size_t i = 0; i < p->nfield; i++) {
        int c = -1;
        for (int k = 0; k < NCOLS; k++)
            if (!strcmp(p->field[i], col_names[k]))
                c = k;
        if (c < 0)
            return tb_fail(p->err, "%s:%u: unknown column '%s' (known: experiment, "
                           "vocabulary, layout, pattern, corpus, repetitions, "
                           "sources, options)", p->name, p->rec_line, p->field[i]);
        if (seen[c]++)
            return tb_fail(p->err, "%s:%u: column '%s' given twice", p->name,
                           p->rec_line, p->field[i]);
        p->col_of_field[i] = c;
    }
    if (!seen[COL_EXPERIMENT])
        return tb_fail(p->err, "%s:%u: the header has no 'experiment' column",
                       p->name, p->rec_line);
    p->nheader = p->nfield;
    p->have_header = 1;
    return 0;
}

static int parse_reps(parse_t *p, const char *s, unsigned *reps)
{
    if (!*s) {
        *reps = 0;
        return 0;
    }
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*end || v == 0 || v > 1000000 || *s == '-')
        return tb_fail(p->err, "%s:%u: field 'repetitions': '%s' is not a count "
                       "from 1 to 1000000", p->name, p->rec_line, s);
    *reps = (unsigned)v;
    return 0;
}

static int take_row(parse_t *p)
{
    if (p->nfield > p->nheader)
        return tb_fail(p->err, "%s:%u: %zu fields but the header names %zu",
                       p->name, p->rec_line, p->nfield, p->nheader);
    char *col[NCOLS] = {0};
    for (size_t i = 0; i < p->nfield; i++)
        col[p->col_of_field[i]] = p->field[i];
    if (!col[COL_EXPERIMENT] || !*col[COL_EXPERIMENT])
        return tb_fail(p->err, "%s:%u: field 'experiment' is empty", p->name,
                       p->rec_line);
    xp_row_t r = {0};
    if (parse_reps(p, col[COL_REPS] ? col[COL_REPS] : "", &r.reps))
        return -1;
    const char *f[7] = {col[COL_EXPERIMENT], col[COL_VOCAB], col[COL_LAYOUT],
                        col[COL_PATTERN], col[COL_CORPUS], col[COL_SOURCES],
                        col[COL_OPTIONS]};
    xp_suite_t *s = p->suite;
    void *grown = realloc(s->rows, (s->n + 1) * sizeof *s->rows);
    if (!grown || xp_row_init(&r, f, r.reps)) {
        if (grown)
            s->rows = grown;
        return tb_fail(p->err, "%s: out of memory", p->name);
    }
    s->rows = grown;
    r.line = p->rec_line;
    s->rows[s->n++] = r;
    return 0;
}

static void on_record(int c, void *arg)
{
    parse_t *p = arg;
    if (c == '\n')
        p->newlines++;
    if (p->failed)
        return;
    int skip = p->nfield == 0 || (p->nfield == 1 && !*p->field[0]) ||
               p->field[0][0] == '#';
    if (!skip)
        p->failed = p->have_header ? take_row(p) : take_header(p);
    clear_fields(p);
}

/* Turns comment lines (a '#' first on a line outside quotes) into blanks,
 * keeping their newlines so line numbers stay right: strict libcsv would
 * otherwise reject a quote inside a comment.  Counting quotes is exact for
 * valid CSV, where quotes only open, close or double inside a field. */
void xp_csv_blank_comments(char *t, size_t len)
{
    int quoted = 0;
    for (size_t i = 0; i < len; i++) {
        int line_start = i == 0 || t[i - 1] == '\n';
        if (!quoted && line_start && t[i] == '#') {
            for (; i < len && t[i] != '\n'; i++)
                t[i] = ' ';
            if (i > 0 && t[i - 1] == '\r')
                t[i - 1] = ' ';
            continue;
        }
        quoted ^= t[i] == '"';
    }
}

int xp_suite_parse(const char *name, const char *text, size_t len,
                   xp_suite_t *s, tb_err_t *err)
{
    memset(s, 0, sizeof *s);
    struct csv_parser csv;
    char *copy = malloc(len + 1);
    if (!copy || csv_init(&csv, CSV_STRICT | CSV_STRICT_FINI | CSV_REPALL_NL |
                                    CSV_APPEND_NULL)) {
        free(copy);
        return tb_fail(err, "%s: out of memory", name);
    }
    memcpy(copy, text, len);
    xp_csv_blank_comments(copy, len);
    parse_t p = {.name = name, .suite = s, .err = err};
    size_t done = csv_parse(&csv, copy, len, on_field, on_record, &p);
    if (!p.failed && done != len)
        p.failed = tb_fail(err, "%s: byte %zu (line %u): malformed CSV: %s",
                           name, done, p.newlines + 1,
                           csv_strerror(csv_error(&csv)));
    if (!p.failed && csv_fini(&csv, on_field, on_record, &p))
        p.failed = tb_fail(err, "%s: line %u: malformed CSV at end of file "
                           "(unterminated quote?)", name, p.rec_line);
    clear_fields(&p);
    csv_free(&csv);
    free(copy);
    if (!p.failed && !p.have_header)
        p.failed = tb_fail(err, "%s: empty suite: no header record", name);
    if (p.failed) {
        xp_suite_free(s);
        return -1;
    }
    return 0;
}

int xp_suite_load(const char *path, xp_suite_t *s, tb_err_t *err)
{
    uint8_t *data;
    size_t len;
    if (tb_read_file(path, &data, &len, err))
        return -1;
    int rc = xp_suite_parse(path, (const char *)data, len, s, err);
    free(data);
    return rc;
}

void xp_row_free(xp_row_t *r)
{
    free(r->experiment);
    free(r->vocab);
    free(r->layout);
    free(r->pattern);
    free(r->corpus);
    free(r->sources);
    free(r->options);
    memset(r, 0, sizeof *r);
}

int xp_row_init(xp_row_t *r, const char *const f[7], unsigned reps)
{
    char **dst[7] = {&r->experiment, &r->vocab, &r->layout, &r->pattern,
                     &r->corpus, &r->sources, &r->options};
    memset(r, 0, sizeof *r);
    r->reps = reps;
    for (int i = 0; i < 7; i++) {
        *dst[i] = strdup(f[i] ? f[i] : "");
        if (!*dst[i]) {
            xp_row_free(r);
            return -1;
        }
    }
    return 0;
}

void xp_suite_free(xp_suite_t *s)
{
    for (size_t i = 0; i < s->n; i++)
        xp_row_free(&s->rows[i]);
    free(s->rows);
    s->rows = NULL;
    s->n = 0;
}

int xp_row_uint(const xp_row_t *r, const char *key, uint64_t dflt, uint64_t min,
                uint64_t max, uint64_t *out, tb_err_t *err)
{
    char buf[64], *end;
    const char *v = xp_row_option(r, key, buf, sizeof buf);
    *out = dflt;
    if (!v)
        return 0;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (*end || !*v || *v == '-' || errno || x < min || x > max)
        return tb_fail(err, "line %u: option %s=%s is not a whole number from %llu to %llu",
                       r->line, key, v, (unsigned long long)min, (unsigned long long)max);
    *out = x;
    return 0;
}

const char *xp_row_option(const xp_row_t *r, const char *key, char *buf,
                          size_t size)
{
    size_t klen = strlen(key);
    for (const char *w = r->options; w && *w;) {
        w += strspn(w, " \t;");
        size_t n = strcspn(w, " \t;");
        if (n >= klen && !strncmp(w, key, klen) && (n == klen || w[klen] == '=')) {
            const char *v = n == klen ? "1" : w + klen + 1;
            size_t vn = n == klen ? 1 : n - klen - 1;
            snprintf(buf, size, "%.*s", (int)vn, v);
            return buf;
        }
        w += n;
    }
    return NULL;
}
