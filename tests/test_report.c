/* test_report: `tokbench report`, `export` and `merge` on a fixture
 * database made here by running a tiny suite twice (a selftest, two walks
 * of the small Unigram vocabulary, one under callgrind, two walks of it
 * under the lexer's regexes, one sliced mask, one token index, lookups by
 * dat and the external Darts and MARISA, and a tokenize case against
 * SentencePiece in process): every plot is a real
 * PNG and SVG and the page references each, and shows its data (every
 * series' bars or points, as many as its .dat has, inside the plot area
 * and clear of the key, read from the SVG; the run-against-run bars
 * too); mask time is plotted against
 * the vocabulary size the walks record; the lexer section has the regex
 * walks alone, their figures as the store has them, and labels that
 * gnuplot can read; memory and lookup figures come from the lookup cases,
 * with ratios to Darts; the slicer and index tables have the store's
 * figures, the throughput table a first and a warm pass per engine, and
 * the run summary gives a slice case its gain; what a run
 * lacks is "not measured"; real soak and serve cases fill their tables
 * with the store's first and last MiB, peaks and medians, and the soak
 * cases' time and memory are drawn against the position; the CSV export parses
 * back with libcsv to the same values; merging twice adds nothing; an empty database is a clear
 * error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <csv.h>

#include "../experiments/store/results.h"
#include "support.h"

static char dir[] = "/tmp/tokbench-test-report-XXXXXX";
static char fixture[600];   /* two runs of the suite below */
static char smalldb[600];   /* one run of the selftest alone */
static int have_data;

static const char *const suite =
    "experiment,vocabulary,layout,pattern,corpus,repetitions,sources,options\n"
    "selftest,,,,,3,tsc,n=10000\n"
    "walk,spm-unigram,dfs,any,,3,all,\n"
    "walk,spm-unigram,map,any,,3,tsc,\n"
    "walk,spm-unigram,dfs,\"re:[^\"\"\\\\\\x00-\\x1f]*\"\"\",,3,tsc,\n"
    "walk,spm-unigram,map,re:[0-9]+,,3,tsc,\n"
    "slice,spm-unigram,dfs,\"re:[^\"\"\\\\\\x00-\\x1f]*\"\"\",,3,tsc,\n"
    "index,spm-unigram,dfs,\"\\d{3}-\\d{2}-\\d{4}\",,3,tsc,\n"
    "lookup,spm-unigram,dat,exact,,3,tsc,order=random\n"
    "lookup,spm-unigram,darts,exact,,3,tsc,order=random\n"
    "lookup,spm-unigram,dat,prefixes,multi,2,tsc,max_bytes=20000\n"
    "lookup,spm-unigram,marisa,prefixes,multi,2,tsc,max_bytes=20000\n"
    "tokenize,spm-unigram,,,multi,2,tsc,max_bytes=20000 reference=auto\n";

static const char *const plots[] = {
    "cycles_per_node", "misses_per_node", "mask_time", "lexer_masks", "slicer",
    "token_index", "throughput",
    "trie_memory", "build_time", "lookup_time", "compare",
};

static void path_in(const char *name, char *out, size_t size)
{
    snprintf(out, size, "%s/%s", dir, name);
}

/* Runs $BUILD/tokbench with the arguments (NULL-terminated) and returns its
 * exit status; stdout and stderr go to `log` (or /dev/null). */
static int tokbench(const char *log, ...)
{
    char exe[512];
    const char *build = getenv("BUILD");
    snprintf(exe, sizeof exe, "%s/tokbench", build && *build ? build : "build");
    char *argv[32] = {exe};
    int n = 1;
    va_list ap;
    va_start(ap, log);
    for (char *a; n < 31 && (a = va_arg(ap, char *)); )
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(log ? log : "/dev/null", "w", stdout) || dup2(1, 2) < 0)
            _exit(126);
        execv(exe, argv);
        _exit(127);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = 0;
        if (len)
            *len = (size_t)n;
    }
    return buf;
}

static long long db_int(const char *path, const char *sql)
{
    tb_err_t err;
    xp_db_t *d = xp_db_open(path, 0, &err);
    if (!d)
        fail_msg("%s", err.msg);
    long long v = test_sql_int(d->db, sql);
    xp_db_close(d);
    return v;
}

/* Copies the database `from` to `to` and runs `sql` on the copy. */
static void copy_db_edited(const char *from, const char *to, const char *sql)
{
    char cmd[1400];
    tb_err_t err;
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
    assert_int_equal(system(cmd), 0);
    xp_db_t *d = xp_db_open(to, 0, &err);
    if (!d)
        fail_msg("%s", err.msg);
    if (xp_db_exec(d, sql, &err))
        fail_msg("%s", err.msg);
    xp_db_close(d);
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    char csv[600], log[600];
    path_in("suite.csv", csv, sizeof csv);
    path_in("run.log", log, sizeof log);
    FILE *f = fopen(csv, "w");
    if (!f || fputs(suite, f) < 0 || fclose(f))
        return -1;
    path_in("fixture.db", fixture, sizeof fixture);
    path_in("small.db", smalldb, sizeof smalldb);
    /* the walks and the tokenizer need the generated Unigram model */
    have_data = access("data/cache/spm-unigram/spm-unigram.model", R_OK) == 0;
    if (have_data && (tokbench(log, "run", csv, "--db", fixture, "--quiet", NULL) ||
                      tokbench(log, "run", csv, "--db", fixture, "--quiet", NULL))) {
        fprintf(stderr, "fixture run failed; see %s\n", log);
        return -1;
    }
    return tokbench(NULL, "run", "experiments/suites/selftest.csv", "--db", smalldb,
                    "--quiet", NULL) ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* The report's two pages in out, read whole (to be freed). */
static void read_pages(const char *out, char **html, char **md)
{
    char p[700];
    snprintf(p, sizeof p, "%s/index.html", out);
    *html = slurp(p, NULL);
    snprintf(p, sizeof p, "%s/index.md", out);
    *md = slurp(p, NULL);
    assert_non_null(*html);
    assert_non_null(*md);
}

/* NAME.png is a PNG, NAME.svg an SVG, and both pages show them. */
static void plot_is_shown(const char *out, const char *name, const char *html,
                          const char *md)
{
    char p[700], ref[128];
    size_t n = 0;
    snprintf(p, sizeof p, "%s/%s.png", out, name);
    char *png = slurp(p, &n);
    if (!png)
        fail_msg("%s was not written", p);
    assert_true(n > 100);
    assert_memory_equal(png, "\x89PNG\r\n\x1a\n", 8);
    free(png);
    snprintf(p, sizeof p, "%s/%s.svg", out, name);
    char *svg = slurp(p, &n);
    if (!svg)
        fail_msg("%s was not written", p);
    assert_non_null(strstr(svg, "<svg"));
    assert_non_null(strstr(svg, "</svg>"));
    free(svg);
    snprintf(ref, sizeof ref, "src=\"%s.png\"", name);
    if (!strstr(html, ref))
        fail_msg("index.html does not show %s.png", name);
    snprintf(ref, sizeof ref, "href=\"%s.svg\"", name);
    assert_non_null(strstr(html, ref));
    snprintf(ref, sizeof ref, "(%s.png)", name);
    assert_non_null(strstr(md, ref));
}

/* --- a plot shows its data ------------------------------------------------
 * Read from the SVG that svg.gp writes (gnuplot's svg terminal with mouse):
 * the plot area is gnuplot_svg.plot_xmin .. plot_ytop; each plot clause is
 * a group <g id="gnuplot_plot_N">, whose key entry (gnuplot_plot_N_keyentry)
 * holds its title; its points are <use> marks and its bars <polygon>s.
 * The key's box spans every entry's text and sample.  A shape with every
 * vertex in the key's box is a key sample; every other shape is data, and
 * must lie inside the plot area and outside the key's box. */

typedef struct {
    double x0, y0, x1, y1;
} box_t;

#define MAXSERIES 64

typedef struct {
    char title[MAXSERIES][128];
    int shapes[MAXSERIES];
    int n;
} shown_t;

static int in_box(const box_t *b, double x, double y, double slack)
{
    return x >= b->x0 - slack && x <= b->x1 + slack && y >= b->y0 - slack &&
           y <= b->y1 + slack;
}

static double svg_number(const char *svg, const char *name)
{
    const char *p = strstr(svg, name);
    if (!p)
        fail_msg("the SVG has no %s (svg.gp draws with `mouse`)", name);
    return strtod(p + strlen(name), NULL);
}

/* The text of the key entry that starts at p, into title; 0 if the entry
 * holds no text (a sample of its own). */
static int key_title(const char *p, char *title, size_t n)
{
    const char *end = strstr(p, "</g>"), *t = strstr(p, "<text>");
    if (!t || !end || t > end)
        return 0;
    const char *e = strstr(t, "</text>");
    assert_non_null(e);
    snprintf(title, n, "%.*s", (int)(e - t - 6), t + 6);
    return 1;
}

/* The vertices of the shape at p (a polygon's points, a <use>'s place). */
static int shape_vertices(const char *p, double *xy, int max)
{
    int n = 0;
    if (!strncmp(p, "<use", 4)) {
        const char *x = strstr(p, " x='"), *tr = strstr(p, "translate("),
                   *end = strchr(p, '>');
        if (x && x < end && sscanf(x, " x='%lf' y='%lf'", &xy[0], &xy[1]) == 2)
            return 1;
        if (tr && tr < end && sscanf(tr, "translate(%lf,%lf)", &xy[0], &xy[1]) == 2)
            return 1;
        fail_msg("a <use> without its place: %.80s", p);
    }
    const char *q = strstr(p, "points = '");
    assert_non_null(q);
    q += 10;
    int used;
    while (n < max && sscanf(q, "%lf,%lf %n", &xy[2 * n], &xy[2 * n + 1], &used) == 2) {
        n++;
        q += used;
    }
    return n;
}

/* The box of the key's entries: its texts (right-aligned at their place,
 * about 6.5 px a character) and samples (up to 50 px right of the text,
 * or the marks an entry of their own holds). */
static box_t key_box(const char *svg)
{
    box_t k = {1e9, 1e9, -1e9, -1e9};
    for (const char *p = svg; (p = strstr(p, "_keyentry\" visibility")); p++) {
        const char *end = strstr(p, "</g>"), *t = strstr(p, "<text>");
        assert_non_null(end);
        double xy[64];
        char title[128];
        if (key_title(p, title, sizeof title)) {
            /* the text's place: the last translate( before it */
            const char *tr = NULL;
            for (const char *q = p; (q = strstr(q, "translate(")) && q < t; q++)
                tr = q;
            assert_non_null(tr);
            assert_int_equal(sscanf(tr, "translate(%lf,%lf)", &xy[0], &xy[1]), 2);
            k.x0 = fmin(k.x0, xy[0] - 6.5 * (double)strlen(title));
            k.x1 = fmax(k.x1, xy[0] + 50);
            k.y0 = fmin(k.y0, xy[1] - 12);
            k.y1 = fmax(k.y1, xy[1] + 6);
            continue;
        }
        for (const char *q = p; (q = strstr(q, "<use")) && q < end; q++) {
            shape_vertices(q, xy, 32);
            k.x0 = fmin(k.x0, xy[0] - 4);
            k.x1 = fmax(k.x1, xy[0] + 4);
            k.y0 = fmin(k.y0, xy[1] - 4);
            k.y1 = fmax(k.y1, xy[1] + 4);
        }
    }
    return k;
}

/* The next plot clause's group at or after p (not a key entry), or NULL. */
static const char *next_clause(const char *p)
{
    static const char prefix[] = "<g id=\"gnuplot_plot_";
    while ((p = strstr(p, prefix))) {
        p += sizeof prefix - 1;
        p += strspn(p, "0123456789");
        if (*p == '"')
            return p;
    }
    return NULL;
}

/* Counts each series' data shapes in one SVG into shown, checking each. */
static void svg_shown(const char *path, shown_t *shown)
{
    char *svg = slurp(path, NULL);
    if (!svg)
        fail_msg("%s was not written", path);
    box_t area = {svg_number(svg, "gnuplot_svg.plot_xmin = "),
                  svg_number(svg, "gnuplot_svg.plot_ytop = "),
                  svg_number(svg, "gnuplot_svg.plot_xmax = "),
                  svg_number(svg, "gnuplot_svg.plot_ybot = ")};
    box_t key = key_box(svg);
    /* the key beside the plot area, not over it */
    if (key.x0 < area.x1 && key.x1 > area.x0 && key.y0 < area.y1 && key.y1 > area.y0)
        fail_msg("%s: the key (%g..%g, %g..%g) is over the plot area (%g..%g, %g..%g)", path,
                 key.x0, key.x1, key.y0, key.y1, area.x0, area.x1, area.y0, area.y1);
    for (const char *g = next_clause(svg), *next; g; g = next) {
        next = next_clause(g);
        const char *entry = strstr(g, "_keyentry\" visibility");
        char title[128];
        if (entry && (!next || entry < next) && key_title(entry, title, sizeof title)) {
            int k = 0;
            while (k < shown->n && strcmp(shown->title[k], title))
                k++;
            if (k == shown->n) {
                assert_true(shown->n < MAXSERIES);
                snprintf(shown->title[shown->n++], sizeof shown->title[0], "%s", title);
            }
            for (const char *p = g; (p = strpbrk(p, "<")) && (!next || p < next); p++) {
                if (strncmp(p, "<polygon", 8) && strncmp(p, "<use", 4))
                    continue;
                double xy[64];
                int nv = shape_vertices(p, xy, 32), sample = 1;
                for (int v = 0; v < nv; v++)
                    sample &= in_box(&key, xy[2 * v], xy[2 * v + 1], 0);
                if (sample)
                    continue;
                for (int v = 0; v < nv; v++) {
                    if (!in_box(&area, xy[2 * v], xy[2 * v + 1], 1))
                        fail_msg("%s: a point of '%s' at %g,%g is outside the plot area",
                                 path, title, xy[2 * v], xy[2 * v + 1]);
                    if (in_box(&key, xy[2 * v], xy[2 * v + 1], 0))
                        fail_msg("%s: a point of '%s' is under the key", path, title);
                }
                shown->shapes[k]++;
            }
        }
    }
    free(svg);
}

/* The values of each column of a grouped plot's .dat (header: the label
 * column's title, then each series' and mark's in quotes) that a log or
 * linear axis draws: numbers above 0. */
static int dat_columns(const char *dat, shown_t *want)
{
    const char *p = strchr(dat, '"');
    const char *eol = strchr(dat, '\n');
    want->n = 0;
    while (p && p < eol) {
        const char *e = strchr(p + 1, '"');
        snprintf(want->title[want->n], sizeof want->title[0], "%.*s", (int)(e - p - 1), p + 1);
        want->shapes[want->n++] = 0;
        p = strchr(e + 1, '"');
    }
    int rows = 0;
    for (const char *l = eol + 1; *l; l = strchr(l, '\n') + 1, rows++) {
        const char *v = strchr(l + 1, '"') + 1;
        for (int c = 0; c < want->n; c++) {
            char *end;
            double x = strtod(v, &end);
            want->shapes[c] += end != v && x > 0;
            v = end != v ? end : strchr(v + 1, '?') + 1;
        }
    }
    return rows;
}

/* A grouped plot (grouped.gp) shows its data: over its panels NAME.svg,
 * NAME-p2.svg ..., every series of NAME.dat has one group of bars, or of
 * marks, with one shape per value, each inside the plot area and clear of
 * the key. */
static void grouped_plot_shows_data(const char *out, const char *name)
{
    char p[700];
    snprintf(p, sizeof p, "%s/%s.dat", out, name);
    char *dat = slurp(p, NULL);
    assert_non_null(dat);
    shown_t want, got = {0};
    int rows = dat_columns(dat, &want);
    free(dat);
    int panels = (rows + 11) / 12;
    assert_true(panels > 0);
    for (int i = 0; i < panels; i++) {
        if (i)
            snprintf(p, sizeof p, "%s/%s-p%d.svg", out, name, i + 1);
        else
            snprintf(p, sizeof p, "%s/%s.svg", out, name);
        svg_shown(p, &got);
    }
    for (int c = 0; c < want.n; c++) {
        int k = 0;
        while (k < got.n && strcmp(got.title[k], want.title[c]))
            k++;
        if (k == got.n && want.shapes[c])
            fail_msg("%s: series '%s' has no key entry", name, want.title[c]);
        if (want.shapes[c] != (k < got.n ? got.shapes[k] : 0))
            fail_msg("%s: series '%s' shows %d of its %d values", name, want.title[c],
                     k < got.n ? got.shapes[k] : 0, want.shapes[c]);
    }
}

/* A pairs plot (pairs.gp) shows its data: over its panels, the two bars
 * of each line of NAME.dat (label, then the first bar's median min max,
 * the second's) under the key's two titles, inside the plot area. */
static void pairs_plot_shows_data(const char *out, const char *name, const char *title1,
                                  const char *title2)
{
    char p[700];
    snprintf(p, sizeof p, "%s/%s.dat", out, name);
    char *dat = slurp(p, NULL);
    assert_non_null(dat);
    shown_t got = {0};
    int rows = 0, want[2] = {0, 0};
    for (const char *l = dat; *l; l = strchr(l, '\n') + 1, rows++) {
        double v[4];
        assert_int_equal(sscanf(strchr(l + 1, '"') + 1, "%lf %*f %*f %lf", &v[0], &v[1]), 2);
        want[0] += v[0] > 0;
        want[1] += v[1] > 0;
    }
    free(dat);
    for (int i = 0; i < (rows + 11) / 12; i++) {
        if (i)
            snprintf(p, sizeof p, "%s/%s-p%d.svg", out, name, i + 1);
        else
            snprintf(p, sizeof p, "%s/%s.svg", out, name);
        svg_shown(p, &got);
    }
    const char *title[2] = {title1, title2};
    for (int t = 0; t < 2; t++) {
        int k = 0;
        while (k < got.n && strcmp(got.title[k], title[t]))
            k++;
        assert_true(k < got.n);
        if (got.shapes[k] != want[t])
            fail_msg("%s: '%s' shows %d of its %d bars", name, title[t], got.shapes[k],
                     want[t]);
    }
}

/* The run-against-run plot (bars.gp) shows its data: over its panels, one
 * bar under the key's `title` for each line of NAME.dat (label, ratio, its
 * band, colour), inside the plot area and clear of the key. */
static void bars_plot_shows_data(const char *out, const char *name, const char *title)
{
    char p[700];
    snprintf(p, sizeof p, "%s/%s.dat", out, name);
    char *dat = slurp(p, NULL);
    assert_non_null(dat);
    shown_t got = {0};
    int rows = 0, want = 0;
    for (const char *l = dat; *l; l = strchr(l, '\n') + 1, rows++)
        want += strtod(strchr(l + 1, '"') + 1, NULL) > 0;
    free(dat);
    for (int i = 0; i < (rows + 11) / 12; i++) {
        if (i)
            snprintf(p, sizeof p, "%s/%s-p%d.svg", out, name, i + 1);
        else
            snprintf(p, sizeof p, "%s/%s.svg", out, name);
        svg_shown(p, &got);
    }
    int k = 0;
    while (k < got.n && strcmp(got.title[k], title))
        k++;
    if (k == got.n)
        fail_msg("%s: no key entry '%s'", name, title);
    if (got.shapes[k] != want)
        fail_msg("%s: '%s' shows %d of its %d bars", name, title, got.shapes[k], want);
}

/* The lines plot (lines.gp, and position.gp alike) shows its data: each
 * block of NAME.dat
 * (a title line, then one row per point) is one series with one mark per
 * row, inside the plot area and clear of the key; twelve series a panel
 * (NAME.svg, NAME-p2.svg, ...), the published marks (the blocks after the
 * series, titled "..., published") in every panel. */
static void lines_plot_shows_data(const char *out, const char *name)
{
    char p[700];
    snprintf(p, sizeof p, "%s/%s.dat", out, name);
    char *dat = slurp(p, NULL);
    assert_non_null(dat);
    shown_t all = {0};
    for (const char *l = dat; *l; l = strchr(l, '\n') + 1) {
        if (*l == '"') {
            const char *e = strchr(l + 1, '"');
            snprintf(all.title[all.n++], sizeof all.title[0], "%.*s", (int)(e - l - 1),
                     l + 1);
        } else if (*l != '\n') {
            all.shapes[all.n - 1]++;
        }
    }
    free(dat);
    int nseries = 0;
    while (nseries < all.n && !strstr(all.title[nseries], ", published"))
        nseries++;
    for (int first = 0, panel = 0; first < nseries; first += 12, panel++) {
        shown_t want = {0}, got = {0};
        for (int c = 0; c < all.n; c++)
            if (c >= nseries || (c >= first && c < first + 12)) {
                memcpy(want.title[want.n], all.title[c], sizeof all.title[c]);
                want.shapes[want.n++] = all.shapes[c];
            }
        if (panel)
            snprintf(p, sizeof p, "%s/%s-p%d.svg", out, name, panel + 1);
        else
            snprintf(p, sizeof p, "%s/%s.svg", out, name);
        svg_shown(p, &got);
        assert_int_equal(got.n, want.n);
        for (int c = 0; c < want.n; c++) {
            assert_string_equal(got.title[c], want.title[c]);
            if (got.shapes[c] != want.shapes[c])
                fail_msg("%s panel %d: series '%s' shows %d of its %d points", name,
                         panel + 1, want.title[c], got.shapes[c], want.shapes[c]);
        }
    }
}

static void test_report_every_plot(void **state)
{
    (void)state;
    if (!have_data)
        fail_msg("data/cache/spm-unigram is missing: run 'make data'");
    char out[600], log[600], p[700];
    path_in("report", out, sizeof out);
    path_in("report.log", log, sizeof log);
    assert_int_equal(tokbench(log, "report", "--db", fixture, "--run", "2", "--vs", "1",
                              "--out", out, NULL), 0);
    char *html, *md;
    read_pages(out, &html, &md);
    /* a sanitized tokbench cannot run under valgrind: no simulated counts */
    int simulated = db_int(fixture, "SELECT count(*) FROM measurements WHERE"
                           " source = 'callgrind'") > 0;
    for (size_t i = 0; i < sizeof plots / sizeof *plots; i++) {
        if (!simulated && !strcmp(plots[i], "misses_per_node")) {
            assert_non_null(strstr(html, "no PAPI or callgrind counts"));
            continue;
        }
        plot_is_shown(out, plots[i], html, md);
        if (!strcmp(plots[i], "mask_time"))
            lines_plot_shows_data(out, plots[i]);
        else if (!strcmp(plots[i], "compare"))
            bars_plot_shows_data(out, plots[i], "ratio (red: slower, green: faster)");
        else if (strcmp(plots[i], "slicer") && strcmp(plots[i], "token_index") &&
                 strcmp(plots[i], "compare"))
            grouped_plot_shows_data(out, plots[i]);
    }
    /* mask time is drawn at the vocabulary size the walk recorded */
    long long ids = db_int(fixture, "SELECT CAST(median AS INTEGER) FROM metric_stats"
                           " WHERE run_id = 2 AND source = 'static' AND"
                           " metric = 'vocab_size' LIMIT 1");
    assert_true(ids > 1000);
    assert_true(ids >= db_int(fixture, "SELECT CAST(max(median) AS INTEGER) FROM"
                              " metric_stats WHERE run_id = 2 AND"
                              " metric = 'tokens_allowed'"));
    char want[64];
    snprintf(p, sizeof p, "%s/mask_time.dat", out);
    char *dat = slurp(p, NULL);
    assert_non_null(dat);
    snprintf(want, sizeof want, "\n%lld ", ids);
    if (!strstr(dat, want))
        fail_msg("mask_time.dat has no point at %lld ids:\n%s", ids, dat);
    free(dat);
    assert_non_null(strstr(html, "Synthetic vocabularies (up to a million tokens): "
                           "not measured, the run has none."));
    /* memory from the lookup cases, Darts beside dat */
    assert_non_null(strstr(html, "lookup (every token)"));
    snprintf(p, sizeof p, "%s/trie_memory.dat", out);
    dat = slurp(p, NULL);
    assert_non_null(dat);
    assert_non_null(strstr(dat, "\"darts\""));
    assert_non_null(strstr(dat, "\"marisa\""));
    free(dat);
    /* lookup time per key: both kinds of work, every implementation, and
     * the ratio columns; darts against itself is 1 */
    snprintf(p, sizeof p, "%s/lookup_time.dat", out);
    dat = slurp(p, NULL);
    assert_non_null(dat);
    assert_non_null(strstr(dat, "\"spm-unigram exact order=random\""));
    assert_non_null(strstr(dat, "\"spm-unigram prefixes multi max_bytes=20000\""));
    assert_non_null(strstr(dat, "work \"dat\" \"darts\" \"marisa\""));
    free(dat);
    assert_non_null(strstr(html, "<th>x darts</th><th>x marisa</th>"));
    assert_non_null(strstr(html, "<td>spm-unigram exact order=random</td><td>darts</td>"));
    assert_non_null(strstr(md, "| spm-unigram prefixes multi max_bytes=20000 | marisa |"));
    /* provenance in the page: the run, its status and the machine */
    assert_non_null(strstr(html, "run 2 (complete)"));
    assert_non_null(strstr(html, "13-cycle baseline"));
    if (simulated)
        assert_non_null(strstr(html, "callgrind (simulated)"));
    free(html);
    free(md);
}

/* The report of the fixture's second run in the folder `name`, and its
 * two pages (to be freed). */
static void report_run2(const char *name, char *out, size_t size, char **html, char **md)
{
    path_in(name, out, size);
    assert_int_equal(tokbench(NULL, "report", "--db", fixture, "--run", "2", "--out", out,
                              NULL), 0);
    read_pages(out, html, md);
}

/* The lines of a .dat, each checked to have one label that gnuplot reads
 * as one quoted string: no quote or backslash inside. */
static long long plain_label_lines(const char *dat)
{
    long long lines = 0;
    for (const char *l = dat; *l; l = strchr(l, '\n') + 1, lines++) {
        const char *end = strchr(l, '\n');
        assert_non_null(end);
        int quotes = 0;
        for (const char *c = l; c < end; c++) {
            quotes += *c == '"';
            assert_int_not_equal(*c, '\\');
        }
        assert_int_equal(quotes, 2);
    }
    return lines;
}

/* The walks under the lexer's regexes, and only those, with the store's
 * figures; patterns full of quotes and backslashes reach gnuplot as
 * plain labels and the page as escaped text. */
static void test_report_lexer_masks(void **state)
{
    (void)state;
    if (!have_data)
        fail_msg("data/cache/spm-unigram is missing: run 'make data'");
    char out[600], p[700], *html, *md;
    report_run2("lexer-report", out, sizeof out, &html, &md);
    plot_is_shown(out, "lexer_masks", html, md);
    assert_non_null(strstr(html, "<td><code>spm-unigram dfs"
                           " re:[^&quot;\\\\\\x00-\\x1f]*&quot;</code></td>"));
    assert_non_null(strstr(html, "<td><code>spm-unigram map re:[0-9]+</code></td>"));
    assert_non_null(strstr(html, "The lexer and token masks"));
    /* one group per vocabulary and pattern, one column per layout: the
     * JSON-string regex (quotes, backslashes) by its short name, whose
     * pattern the Patterns table gives verbatim */
    snprintf(p, sizeof p, "%s/lexer_masks.dat", out);
    char *dat = slurp(p, NULL);
    assert_non_null(dat);
    long long walks = db_int(fixture, "SELECT count(*) FROM cases WHERE run_id = 2 AND"
                             " experiment = 'walk' AND pattern LIKE 're:%'");
    assert_int_equal(walks, 2);
    assert_int_equal(strncmp(dat, "case \"dfs\" \"map\"\n\"spm-unigram P1\" ", 33), 0);
    assert_non_null(strstr(dat, "\n\"spm-unigram re:[0-9]+\" ? "));
    assert_non_null(strstr(html, "<td>P1</td><td><code>re:[^&quot;\\\x00-\x1f]*&quot;"
                           "</code></td>"));
    assert_non_null(strstr(md, "| P1 | `re:[^\"\\\x00-\x1f]*\"` |"));
    /* the dfs walk's time per mask, as the store has it */
    double us;
    assert_int_equal(sscanf(dat + 33, "%lf", &us), 1);
    long long want_ns = db_int(fixture, "SELECT CAST(round(s.median) AS INTEGER) FROM"
                               " metric_stats s JOIN cases c ON c.id = s.case_id WHERE"
                               " c.run_id = 2 AND c.layout = 'dfs' AND c.pattern LIKE"
                               " 're:%' AND s.source = 'tsc' AND s.metric = 'ns'");
    assert_true(want_ns > 0);
    assert_true(fabs(us * 1000 - (double)want_ns) <= 1 + want_ns * 1e-5);
    grouped_plot_shows_data(out, "lexer_masks");
    free(dat);
    free(html);
    free(md);
}

/* The figures of section's table row of `label` (a case, escaped, in a
 * code span), one double per cell after the label; the number of cells
 * read. */
static int row_figures(const char *html, const char *section, const char *label, double *v,
                       int n)
{
    char cell[300];
    snprintf(cell, sizeof cell, "<h2 id=\"%s\">", section);
    const char *p = strstr(html, cell);
    assert_non_null(p);
    snprintf(cell, sizeof cell, "<tr><td><code>%s</code></td>", label);
    p = strstr(p, cell);
    if (!p)
        fail_msg("no table row for %s", label);
    p += strlen(cell);
    int got = 0;
    for (; got < n && sscanf(p, "<td>%lf</td>", &v[got]) == 1; got++)
        p = strstr(p, "</td>") + 5;
    return got;
}

/* One figure of the run's single case of `experiment`, from metric_stats,
 * times `scale` and rounded. */
static long long case_figure(const char *experiment, const char *source, const char *impl,
                             const char *metric, double scale)
{
    char sql[600];
    snprintf(sql, sizeof sql, "SELECT CAST(round(s.median * %g) AS INTEGER) FROM"
             " metric_stats s JOIN cases c ON c.id = s.case_id WHERE c.run_id = 2 AND"
             " c.experiment = '%s' AND s.source = '%s' AND s.impl = '%s' AND"
             " s.metric = '%s'", scale, experiment, source, impl, metric);
    return db_int(fixture, sql);
}

/* NAME.dat has one line per case, each with a plain quoted label. */
static void pairs_dat_is_plain(const char *out, const char *name, long long cases)
{
    char p[700];
    snprintf(p, sizeof p, "%s/%s.dat", out, name);
    char *dat = slurp(p, NULL);
    assert_non_null(dat);
    assert_int_equal(plain_label_lines(dat), cases);
    free(dat);
}

/* The slice and index cases: their plots, and table figures as the store
 * has them (to the precision printed). */
static void test_report_slicer_and_index(void **state)
{
    (void)state;
    if (!have_data)
        fail_msg("data/cache/spm-unigram is missing: run 'make data'");
    char out[600], *html, *md;
    report_run2("slicer-report", out, sizeof out, &html, &md);
    plot_is_shown(out, "slicer", html, md);
    plot_is_shown(out, "token_index", html, md);
    pairs_plot_shows_data(out, "slicer", "sliced mask", "plain walk");
    pairs_plot_shows_data(out, "token_index", "walking the trie", "through the index");
    pairs_dat_is_plain(out, "slicer", db_int(fixture, "SELECT count(*) FROM cases WHERE"
                                             " run_id = 2 AND experiment = 'slice'"));
    pairs_dat_is_plain(out, "token_index", db_int(fixture, "SELECT count(*) FROM cases"
                                                  " WHERE run_id = 2 AND"
                                                  " experiment = 'index'"));
    /* sliced us, plain us, gain, build ms, bytes */
    double v[7];
    assert_int_equal(row_figures(html, "slicer",
                                 "spm-unigram dfs re:[^&quot;\\\\\\x00-\\x1f]*&quot;", v, 5),
                     5);
    assert_true(fabs(v[0] * 1e3 - case_figure("slice", "wallclock", "tokbench", "ns", 1)) <=
                6);
    assert_true(fabs(v[1] * 1e3 - case_figure("slice", "wallclock", "plain", "ns", 1)) <= 6);
    assert_true(fabs(v[2] * 10 - case_figure("slice", "static", "tokbench", "slicer_gain",
                                             10)) <= 1);
    assert_true(v[1] / v[0] > 1);
    assert_true(fabs(v[3] * 1e3 - case_figure("slice", "wallclock", "tokbench", "build_ns",
                                              1e-3)) <= 6);
    assert_int_equal((long long)v[4],
                     case_figure("slice", "static", "tokbench", "slicer_bytes", 1));
    /* states / classes, bytes (per state), build ms, walk ns, slicer ns,
     * index ns, break-even steps (walk / slicer): the first figure of each
     * cell, then the cells with two whole */
    assert_int_equal(row_figures(html, "token_index", "spm-unigram dfs \\d{3}-\\d{2}-\\d{4}",
                                 v, 7),
                     7);
    long long states = case_figure("index", "static", "index", "states", 1),
              bytes = case_figure("index", "static", "index", "bytes", 1);
    assert_int_equal((long long)v[0], states);
    assert_int_equal((long long)v[1], bytes);
    assert_true(fabs(v[2] * 1e3 - case_figure("index", "wallclock", "index", "build_ns",
                                              1e-3)) <= 6);
    assert_true(fabs(v[3] * 10 - case_figure("index", "wallclock", "walk", "ns_per_step",
                                             10)) <= 1);
    assert_true(fabs(v[4] * 10 - case_figure("index", "wallclock", "slicer", "ns_per_step",
                                             10)) <= 1);
    assert_true(fabs(v[5] * 10 - case_figure("index", "wallclock", "index", "ns_per_step",
                                             10)) <= 1);
    assert_true(fabs(v[6] - case_figure("index", "static", "index", "breakeven_steps", 1)) <=
                1);
    char cell[120];
    snprintf(cell, sizeof cell, "<td>%lld / %lld</td>", states,
             case_figure("index", "static", "index", "classes", 1));
    if (!strstr(html, cell))
        fail_msg("no cell %s", cell);
    snprintf(cell, sizeof cell, "<td>%lld (%.0f)</td>", bytes, (double)bytes / (double)states);
    if (!strstr(html, cell))
        fail_msg("no cell %s", cell);
    free(html);
    free(md);
}

/* The tokenize case: tokbench and SentencePiece (in process) each have a
 * first pass per repetition and warm passes, and the throughput table
 * prints the store's medians as MB/s, first and warm, on the engine's row. */
static void test_report_throughput_passes(void **state)
{
    (void)state;
    if (!have_data)
        fail_msg("data/cache/spm-unigram is missing: run 'make data'");
    const char *sp = "sentencepiece (in process)";
    const char *engines[][3] = {{"tokbench", "wallclock", "tsc"},
                                {sp, "wallclock", "wallclock"}};
    char *html, *md, out[600], sql[400], row[300];
    report_run2("throughput-report", out, sizeof out, &html, &md);
    for (size_t e = 0; e < 2; e++) {
        double mbps[2];
        const char *metric[2] = {"first_ns", "ns"};
        for (int k = 0; k < 2; k++) {
            snprintf(sql, sizeof sql, "SELECT count(*) FROM measurements m JOIN cases c ON"
                     " c.id = m.case_id WHERE c.run_id = 2 AND c.experiment = 'tokenize'"
                     " AND m.impl = '%s' AND m.metric = '%s' AND m.source = '%s'",
                     engines[e][0], metric[k], engines[e][1 + k]);
            assert_int_equal(db_int(fixture, sql), 2);
            snprintf(sql, sizeof sql, "SELECT CAST(round(mb_per_s * 100) AS INTEGER) FROM"
                     " throughput t JOIN cases c ON c.id = t.case_id WHERE c.run_id = 2"
                     " AND c.experiment = 'tokenize' AND t.impl = '%s' AND t.pass = '%s'",
                     engines[e][0], k ? "warm" : "first");
            mbps[k] = (double)db_int(fixture, sql) / 100;
        }
        snprintf(row, sizeof row, "| spm-unigram multi | %s | %.2f (", engines[e][0], mbps[0]);
        if (!strstr(md, row))
            fail_msg("no row starting '%s' in the throughput table", row);
        const char *warm = strstr(md, row) + strlen(row);
        snprintf(row, sizeof row, ") | %.2f (", mbps[1]);
        const char *eol = strchr(warm, '\n');
        const char *at = strstr(warm, row);
        if (!at || (eol && at > eol))
            fail_msg("%s's warm MB/s is not %.2f", engines[e][0], mbps[1]);
    }
    assert_non_null(strstr(md, "First pass: a tokenizer loaded afresh"));
    free(html);
    free(md);
}

/* The run summary (here by `show`): a slice case has no reference
 * throughput (its plain walk is timed over no bytes), and its speedup
 * column is the slicer's gain as the store has it. */
static void test_summary_slice_gain(void **state)
{
    (void)state;
    if (!have_data)
        fail_msg("data/cache/spm-unigram is missing: run 'make data'");
    char log[600];
    path_in("show.log", log, sizeof log);
    assert_int_equal(tokbench(log, "show", "2", "--db", fixture, NULL), 0);
    char *said = slurp(log, NULL);
    assert_non_null(said);
    const char *line = strstr(said, "\nslice spm-unigram dfs ");
    assert_non_null(line);
    char status[16], mbps[16], ref[16];
    double gain;
    /* the case's name fills the first 34 columns */
    assert_int_equal(sscanf(line + 1 + 35, "%15s %15s %15s %lf", status, mbps, ref, &gain), 4);
    assert_string_equal(status, "ok");
    assert_string_equal(ref, "-");
    assert_true(fabs(gain * 100 - case_figure("slice", "static", "tokbench", "slicer_gain",
                                              100)) <= 1);
    assert_non_null(strstr(said, "for a slice case, the slicer's gain"));
    free(said);
}

/* The latest run by default; what it lacks is named, not drawn. */
static void test_report_not_measured(void **state)
{
    (void)state;
    char out[600], log[600], p[700];
    path_in("small-report", out, sizeof out);
    path_in("small-report.log", log, sizeof log);
    assert_int_equal(tokbench(log, "report", "--db", smalldb, "--out", out, NULL), 0);
    char *said = slurp(log, NULL);
    assert_non_null(said);
    assert_non_null(strstr(said, "report of run 1 (complete)"));
    free(said);
    path_in("small-report/index.html", p, sizeof p);
    char *html = slurp(p, NULL);
    assert_non_null(html);
    assert_non_null(strstr(html, "not measured"));
    assert_null(strstr(html, "cycles_per_node.png"));
    /* no lookup rows: the lookup plot is named, not drawn */
    assert_non_null(strstr(html, "<h2 id=\"lookup_time\">"));
    assert_non_null(strstr(html, "Not measured: the run has no lookup case."));
    assert_null(strstr(html, "lookup_time.png"));
    assert_non_null(strstr(html, "<h2 id=\"lexer_masks\">"));
    assert_non_null(strstr(html, "Not measured: the run has no walk under the lexer"));
    assert_null(strstr(html, "lexer_masks.png"));
    assert_non_null(strstr(html, "Not measured: the run has no slice case."));
    assert_null(strstr(html, "slicer.png"));
    assert_non_null(strstr(html, "Not measured: the run has no index case."));
    assert_null(strstr(html, "token_index.png"));
    free(html);
    path_in("small-report/cycles_per_node.png", p, sizeof p);
    assert_int_not_equal(access(p, F_OK), 0);
    path_in("small-report/lookup_time.png", p, sizeof p);
    assert_int_not_equal(access(p, F_OK), 0);
}

/* The figure that `sql` selects from db, printed in `fmt` over `scale`. */
static void db_cell(const char *db, const char *sql, const char *fmt, double scale, char *buf,
                    size_t n)
{
    tb_err_t err;
    xp_db_t *d = xp_db_open(db, 0, &err);
    if (!d)
        fail_msg("%s", err.msg);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(d->db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    snprintf(buf, n, fmt, sqlite3_column_double(st, 0) / scale);
    sqlite3_finalize(st);
    xp_db_close(d);
}

/* Real soak and serve cases on tiny inputs: one table row per case with
 * the store's first and last MiB, the case's peak and the serve medians,
 * the machine named; the soak cases' ns per token and resident memory
 * drawn against the position, a point per MiB; a run without them says
 * so and draws nothing. */
static void test_report_soak_serve(void **state)
{
    (void)state;
    if (!have_data)
        fail_msg("data/cache/spm-unigram is missing: run 'make data'");
    char csv[600], db[600], out[600], log[600], row[700], c[8][64], *html, *md;
    const char *drawn[] = {"soak", "soak_memory"};
    path_in("soak.csv", csv, sizeof csv);
    path_in("soak.db", db, sizeof db);
    path_in("soak-report", out, sizeof out);
    path_in("soak.log", log, sizeof log);
    FILE *f = fopen(csv, "w");
    assert_non_null(f);
    fputs("experiment,vocabulary,layout,pattern,corpus,repetitions,sources,options\n"
          "soak,spm-unigram,,experiments/grammars/json.lark,,1,,mb=2\n"
          "serve,spm-unigram,,tests/maskbench,,1,,threads=2 batch=4 masks=100\n", f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(tokbench(log, "run", csv, "--db", db, "--quiet", NULL), 0);
    assert_int_equal(tokbench(NULL, "report", "--db", db, "--out", out, NULL), 0);
    read_pages(out, &html, &md);
    const char *soak = "SELECT value FROM measurements WHERE metric = '%s' ORDER BY bytes %s";
    const char *figs[][3] = {{"soak_ns_tok", "", "%.0f"}, {"soak_ns_tok", "DESC", "%.0f"},
                             {"soak_rss_kb", "", "%.1f"}, {"soak_rss_kb", "DESC", "%.1f"},
                             {"soak_peak_rss_kb", "", "%.1f"},
                             {"soak_states", "", "%.0f"}, {"soak_states", "DESC", "%.0f"}};
    char sql[300];
    for (int k = 0; k < 7; k++) {
        snprintf(sql, sizeof sql, soak, figs[k][0], figs[k][1]);
        db_cell(db, sql, figs[k][2], k >= 2 && k <= 4 ? 1024 : 1, c[k], sizeof c[k]);
    }
    snprintf(row, sizeof row, "| `spm-unigram experiments/grammars/json.lark` | flat objects"
             " | 2.0 | %s | %s | %s | %s | %s | %s | %s |", c[0], c[1], c[2], c[3], c[4], c[5],
             c[6]);
    if (!strstr(md, row))
        fail_msg("no soak row '%s'", row);
    /* the case's peak is at least what it held after any MiB */
    assert_true(atof(c[4]) >= atof(c[3]));
    for (int k = 0; k < 2; k++) {
        plot_is_shown(out, drawn[k], html, md);
        lines_plot_shows_data(out, drawn[k]);
    }
    const char *metrics[] = {"serve_masks_s", "serve_batch_p50_us", "serve_batch_p99_us",
                             "serve_peak_rss_kb"};
    for (int k = 0; k < 4; k++) {
        snprintf(sql, sizeof sql, "SELECT median FROM metric_stats WHERE metric = '%s'",
                 metrics[k]);
        db_cell(db, sql, k ? "%.1f" : "%.0f", k == 3 ? 1024 : 1, c[k], sizeof c[k]);
    }
    snprintf(row, sizeof row, "| `spm-unigram tests/maskbench` | 2 | 4 | %s | %s | %s | %s |",
             c[0], c[1], c[2], c[3]);
    if (!strstr(md, row))
        fail_msg("no serve row '%s'", row);
    const char *sec = strstr(html, "<h2 id=\"serve\">");
    assert_non_null(sec);
    assert_non_null(strstr(sec, " cores"));
    free(html);
    free(md);
    path_in("small-report/index.html", row, sizeof row);
    html = slurp(row, NULL);
    assert_non_null(html);
    assert_non_null(strstr(html, "Not measured: the run has no soak case."));
    assert_non_null(strstr(html, "Not measured: the run has no soak case that finished."));
    assert_non_null(strstr(html, "Not measured: the run has no serve case."));
    for (int k = 0; k < 2; k++) {
        snprintf(row, sizeof row, "src=\"%s.png\"", drawn[k]);
        assert_null(strstr(html, row));
    }
    free(html);
}

/* Two machines in one database (as merge gathers them): side by side. */
static void test_report_machines(void **state)
{
    (void)state;
    if (!have_data)
        fail_msg("data/cache/spm-unigram is missing: run 'make data'");
    char db[600], out[600];
    path_in("machines.db", db, sizeof db);
    path_in("machines-report", out, sizeof out);
    copy_db_edited(fixture, db, "UPDATE runs SET cpu_model = 'Intel Xeon <test>',"
                   " host = 'xeon' WHERE id = 1");
    assert_int_equal(tokbench(NULL, "report", "--db", db, "--out", out, NULL), 0);
    char *html, *md;
    read_pages(out, &html, &md);
    plot_is_shown(out, "machines", html, md);
    /* the CPU name is escaped, not markup */
    assert_non_null(strstr(html, "Intel Xeon &lt;test&gt;"));
    assert_null(strstr(html, "<test>"));
    free(html);
    free(md);
}

/* Published figures imported into the database are listed with their
 * sources, the regex of a work verbatim in a code span, and marked as
 * another machine's; without them the page says how to import them. */
static void test_report_anchors(void **state)
{
    (void)state;
    char db[600], out[600], *html, *md;
    path_in("anchors.db", db, sizeof db);
    path_in("anchors-report", out, sizeof out);
    copy_db_edited(smalldb, db, "SELECT 1");
    assert_int_equal(tokbench(NULL, "report", "--db", db, "--out", out, NULL), 0);
    read_pages(out, &html, &md);
    assert_non_null(strstr(html, "None in this database: `tokbench import"));
    free(html);
    free(md);
    assert_int_equal(tokbench(NULL, "import", "experiments/anchors/published.csv", "--db", db,
                              NULL), 0);
    assert_int_equal(tokbench(NULL, "report", "--db", db, "--out", out, NULL), 0);
    read_pages(out, &html, &md);
    const char *sec = strstr(html, "<h2 id=\"anchors\">");
    assert_non_null(sec);
    assert_non_null(strstr(sec, "published, other machine"));
    assert_non_null(strstr(sec, "<td>13.0 core cycles per node</td>"));
    assert_non_null(strstr(sec, "<td>AMD EPYC 7V13</td>"));
    assert_non_null(strstr(sec, "<td><code>(https?:\\/\\/)?([\\da-z\\.-]+)"));
    assert_non_null(strstr(md, "| `(https?:\\/\\/)?([\\da-z\\.-]+)"));
    free(html);
    free(md);
}

static void test_report_empty_database(void **state)
{
    (void)state;
    char db[600], out[600], log[600];
    tb_err_t err;
    path_in("empty.db", db, sizeof db);
    path_in("empty-report", out, sizeof out);
    path_in("empty.log", log, sizeof log);
    xp_db_t *d = xp_db_open(db, 1, &err);
    assert_non_null(d);
    xp_db_close(d);
    assert_int_equal(tokbench(log, "report", "--db", db, "--out", out, NULL), 1);
    char *said = slurp(log, NULL);
    assert_non_null(said);
    assert_non_null(strstr(said, "no runs to report"));
    free(said);
}

/* --- export ------------------------------------------------------------- */

typedef struct {
    char **field;
    size_t n, cap, rows, cols_first_row, bad_rows;
    size_t row_start;
} parsed_t;

static void on_field(void *s, size_t len, void *data)
{
    parsed_t *p = data;
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 256;
        p->field = realloc(p->field, p->cap * sizeof *p->field);
        assert_non_null(p->field);
    }
    char *copy = malloc(len + 1);
    assert_non_null(copy);
    memcpy(copy, s ? s : "", len);
    copy[len] = 0;
    p->field[p->n++] = copy;
}

static void on_row(int c, void *data)
{
    (void)c;
    parsed_t *p = data;
    size_t cols = p->n - p->row_start;
    if (!p->rows)
        p->cols_first_row = cols;
    else if (cols != p->cols_first_row)
        p->bad_rows++;
    p->rows++;
    p->row_start = p->n;
}

static void parse_csv(const char *path, parsed_t *p)
{
    size_t n;
    char *text = slurp(path, &n);
    assert_non_null(text);
    struct csv_parser cp;
    assert_int_equal(csv_init(&cp, CSV_STRICT | CSV_STRICT_FINI), 0);
    memset(p, 0, sizeof *p);
    assert_int_equal(csv_parse(&cp, text, n, on_field, on_row, p), n);
    assert_int_equal(csv_fini(&cp, on_field, on_row, p), 0);
    csv_free(&cp);
    free(text);
}

static void parsed_free(parsed_t *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->field[i]);
    free(p->field);
}

/* Every field of the CSV equals the database's value (NULL: empty). */
static void check_round_trip(const char *db, const char *table, const char *sql)
{
    char csv[700];
    snprintf(csv, sizeof csv, "%s/%s.csv", dir, table);
    assert_int_equal(tokbench(NULL, "export", "--db", db, table, "-o", csv, NULL), 0);
    parsed_t p;
    parse_csv(csv, &p);
    tb_err_t err;
    xp_db_t *d = xp_db_open(db, 0, &err);
    assert_non_null(d);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(d->db, sql, -1, &st, NULL), SQLITE_OK);
    size_t cols = (size_t)sqlite3_column_count(st), k = 0;
    assert_int_equal(p.cols_first_row, cols);
    assert_int_equal(p.bad_rows, 0);
    for (size_t c = 0; c < cols; c++)
        assert_string_equal(p.field[k++], sqlite3_column_name(st, (int)c));
    size_t rows = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        rows++;
        for (size_t c = 0; c < cols; c++, k++) {
            assert_true(k < p.n);
            const char *f = p.field[k];
            switch (sqlite3_column_type(st, (int)c)) {
            case SQLITE_NULL:
                assert_string_equal(f, "");
                break;
            case SQLITE_FLOAT:
                assert_true(strtod(f, NULL) == sqlite3_column_double(st, (int)c));
                break;
            default:
                assert_string_equal(f, (const char *)sqlite3_column_text(st, (int)c));
            }
        }
    }
    sqlite3_finalize(st);
    xp_db_close(d);
    assert_int_equal(p.rows, rows + 1);
    assert_true(rows > 0);
    parsed_free(&p);
}

static void test_export_round_trip(void **state)
{
    (void)state;
    char db[600];
    path_in("tricky.db", db, sizeof db);
    /* what CSV must quote: a comma, quotes, a line break, a lone CR */
    copy_db_edited(smalldb, db, "UPDATE cases SET message = 'a, \"b\"\nc\rd' WHERE id = 1");
    check_round_trip(db, "cases", "SELECT * FROM cases");
    check_round_trip(db, "metric_stats", "SELECT * FROM metric_stats");
    check_round_trip(db, "runs", "SELECT * FROM runs");
}

static void test_export_refuses_unknown(void **state)
{
    (void)state;
    char log[600];
    path_in("export.log", log, sizeof log);
    assert_int_equal(tokbench(log, "export", "--db", smalldb, "no_such_view", NULL), 1);
    char *said = slurp(log, NULL);
    assert_non_null(said);
    assert_non_null(strstr(said, "no table or view 'no_such_view'"));
    assert_non_null(strstr(said, "metric_stats"));
    free(said);
}

/* --- merge -------------------------------------------------------------- */

static void test_merge_twice_adds_nothing(void **state)
{
    (void)state;
    char out[600], junk[600];
    path_in("merged.db", out, sizeof out);
    const char *a = have_data ? fixture : smalldb;
    assert_int_equal(tokbench(NULL, "merge", out, a, smalldb, NULL), 0);
    long long runs = db_int(out, "SELECT count(*) FROM runs");
    long long meas = db_int(out, "SELECT count(*) FROM measurements");
    assert_int_equal(runs, db_int(a, "SELECT count(*) FROM runs") +
                               db_int(smalldb, "SELECT count(*) FROM runs"));
    assert_int_equal(meas, db_int(a, "SELECT count(*) FROM measurements") +
                               db_int(smalldb, "SELECT count(*) FROM measurements"));
    /* the same files again, in the other order: nothing new */
    assert_int_equal(tokbench(NULL, "merge", out, smalldb, a, NULL), 0);
    assert_int_equal(db_int(out, "SELECT count(*) FROM runs"), runs);
    assert_int_equal(db_int(out, "SELECT count(*) FROM measurements"), meas);
    assert_int_equal(db_int(out, "SELECT count(*) FROM cases"),
                     db_int(a, "SELECT count(*) FROM cases") +
                         db_int(smalldb, "SELECT count(*) FROM cases"));
    assert_int_equal(db_int(out, "SELECT count(DISTINCT run_key) FROM runs"), runs);
    /* not a results database: refused, and the file is left alone */
    path_in("junk.db", junk, sizeof junk);
    FILE *f = fopen(junk, "w");
    assert_non_null(f);
    fputs("not a database\n", f);
    fclose(f);
    assert_int_equal(tokbench(NULL, "merge", out, junk, NULL), 1);
    char *text = slurp(junk, NULL);
    assert_string_equal(text, "not a database\n");
    free(text);
    assert_int_equal(db_int(out, "SELECT count(*) FROM runs"), runs);
}

/* A copy taken mid-run is replaced by the finished run, not kept beside it. */
static void test_merge_replaces_unfinished_copy(void **state)
{
    (void)state;
    char part[600], out[600];
    path_in("partial.db", part, sizeof part);
    path_in("merged-partial.db", out, sizeof out);
    copy_db_edited(smalldb, part, "UPDATE runs SET status = 'incomplete';"
                   " DELETE FROM measurements WHERE case_id IN (SELECT id FROM cases"
                   " WHERE seq > 0); DELETE FROM cases WHERE seq > 0");
    assert_int_equal(tokbench(NULL, "merge", out, part, NULL), 0);
    assert_int_equal(db_int(out, "SELECT count(*) FROM cases"), 1);
    assert_int_equal(tokbench(NULL, "merge", out, smalldb, part, NULL), 0);
    assert_int_equal(db_int(out, "SELECT count(*) FROM runs"), 1);
    assert_int_equal(db_int(out, "SELECT count(*) FROM runs WHERE status = 'complete'"), 1);
    assert_int_equal(db_int(out, "SELECT count(*) FROM measurements"),
                     db_int(smalldb, "SELECT count(*) FROM measurements"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_every_plot),
        cmocka_unit_test(test_report_lexer_masks),
        cmocka_unit_test(test_report_slicer_and_index),
        cmocka_unit_test(test_report_throughput_passes),
        cmocka_unit_test(test_summary_slice_gain),
        cmocka_unit_test(test_report_not_measured),
        cmocka_unit_test(test_report_soak_serve),
        cmocka_unit_test(test_report_machines),
        cmocka_unit_test(test_report_anchors),
        cmocka_unit_test(test_report_empty_database),
        cmocka_unit_test(test_export_round_trip),
        cmocka_unit_test(test_export_refuses_unknown),
        cmocka_unit_test(test_merge_twice_adds_nothing),
        cmocka_unit_test(test_merge_replaces_unfinished_copy),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
