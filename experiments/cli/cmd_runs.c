/* cmd_runs: `tokbench runs`, `show RUN`, `diff RUN_A RUN_B`, and the
 * end-of-run summary; everything here reads the store (see results.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_results.h"
#include "../store/mbtable.h"

const char *xp_take_db_arg(int *argc, char **argv)
{
    const char *db = XP_DEFAULT_DB;
    for (int i = 1; i < *argc; i++)
        if (!strcmp(argv[i], "--db") && i + 1 < *argc) {
            db = argv[i + 1];
            memmove(argv + i, argv + i + 2, (size_t)(*argc - i - 2) * sizeof *argv);
            *argc -= 2;
            i--;
        }
    return db;
}

static const char *col(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return s ? (const char *)s : "";
}

/* Median of one metric of one case (source NULL: papi, else tsc/callgrind
 * preference is the caller's); returns 0 if found. */
typedef struct {
    double median, min, max, bytes, nodes;
    long reps;
} stat_t;

static int get_stat(xp_db_t *db, int64_t case_id, const char *source,
                    const char *impl, const char *metric, stat_t *s)
{
    sqlite3_stmt *st;
    if (xp_db_prepare_id(db, "SELECT median, min, max, bytes, nodes, reps FROM"
                             " metric_stats WHERE case_id = ? AND source = ? AND"
                             " impl = ? AND metric = ?", case_id, &st, NULL))
        return -1;
    sqlite3_bind_text(st, 2, source, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, impl, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, metric, -1, SQLITE_STATIC);
    int found = sqlite3_step(st) == SQLITE_ROW;
    if (found)
        *s = (stat_t){sqlite3_column_double(st, 0), sqlite3_column_double(st, 1),
                      sqlite3_column_double(st, 2), sqlite3_column_double(st, 3),
                      sqlite3_column_double(st, 4), (long)sqlite3_column_int64(st, 5)};
    sqlite3_finalize(st);
    return found ? 0 : -1;
}

const xp_figure_t xp_cycles_prefs[2] = {{"papi", "cycles"}, {"tsc", "ref_cycles"}};
const xp_figure_t xp_l1d_prefs[4] = {
    {"papi", "l1d_miss"}, {"papi", "l1d_load_miss"}, {"papi", "l1d_fill"},
    {"callgrind", "l1d_miss"},
};
const xp_figure_t xp_llc_prefs[3] = {
    {"papi", "llc_miss"}, {"papi", "llc_load_miss"}, {"callgrind", "llc_miss"},
};
const xp_figure_t xp_misp_prefs[3] = {
    {"papi", "br_misp_cond"}, {"papi", "br_misp_all"}, {"callgrind", "br_misp_cond_ind"},
};

int xp_pick_column(xp_db_t *db, int64_t run, const xp_figure_t *prefs, size_t n,
                   const char *only, xp_column_t *c)
{
    memset(c, 0, sizeof *c);
    sqlite3_stmt *st;
    if (xp_db_prepare_id(db, "SELECT ifnull(m.event, ''), ifnull(m.native, ''),"
                             " ifnull(m.user_only, -1) FROM cases c JOIN measurements m"
                             " ON m.case_id = c.id WHERE c.run_id = ? AND m.source = ?"
                             " AND m.impl = 'tokbench' AND m.metric = ? AND m.nodes > 0"
                             " LIMIT 1", run, &st, NULL))
        return 0;
    for (size_t i = 0; i < n && !c->source; i++) {
        if (only && strcmp(only, prefs[i].source))
            continue;
        sqlite3_reset(st);
        sqlite3_bind_text(st, 2, prefs[i].source, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, prefs[i].metric, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_ROW)
            continue;
        c->source = prefs[i].source;
        c->metric = prefs[i].metric;
        snprintf(c->event, sizeof c->event, "%s", col(st, 0));
        snprintf(c->native, sizeof c->native, "%s", col(st, 1));
        c->user_only = sqlite3_column_int(st, 2);
    }
    sqlite3_finalize(st);
    return c->source != NULL;
}

const char *xp_column_says(const xp_column_t *c, char *buf, size_t size)
{
    /* a perf generic event is its own native event */
    int native = c->native[0] && strcmp(c->native, c->event);
    snprintf(buf, size, "%s %s%s%s%s", c->source,
             c->event[0] ? c->event : "(event not recorded)", native ? " = " : "",
             native ? c->native : "", c->user_only == 1 ? ", user mode only" :
             c->user_only == 0 ? ", kernel and halted time included" : "");
    return buf;
}

/* One case's median per node in the column, or NAN. */
static double per_node(xp_db_t *db, int64_t id, const xp_column_t *c)
{
    stat_t s;
    if (c->source && !get_stat(db, id, c->source, "tokbench", c->metric, &s) && s.nodes > 0)
        return s.median / s.nodes;
    return NAN;
}

/* "%.Nf" of v, or "-" where there is none. */
static void figure(char *buf, size_t n, int prec, double v)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.*f", prec, v);
}

/* The first wallclock reference of the case: its name and MB/s.  Only a
 * measurement over bytes is a throughput: the slice driver's plain walk is
 * a wallclock ns too, over no bytes. */
static int reference_mbps(xp_db_t *db, int64_t id, char *impl, size_t n, double *mbps)
{
    sqlite3_stmt *st;
    if (xp_db_prepare_id(db, "SELECT impl, median, bytes FROM metric_stats WHERE"
                             " case_id = ? AND source = 'wallclock' AND metric = 'ns'"
                             " AND bytes > 0 ORDER BY impl LIMIT 1", id, &st, NULL))
        return -1;
    int found = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_double(st, 1) > 0;
    if (found) {
        snprintf(impl, n, "%s", col(st, 0));
        *mbps = sqlite3_column_double(st, 2) * 1e3 / sqlite3_column_double(st, 1);
    }
    sqlite3_finalize(st);
    return found ? 0 : -1;
}

/* The run's per-node columns: cycles, L1D misses, mispredictions. */
typedef struct {
    xp_column_t cyc, l1d, misp;
} columns_t;

static void summary_line(FILE *out, xp_db_t *db, const columns_t *cols, sqlite3_stmt *st)
{
    int64_t id = sqlite3_column_int64(st, 0);
    char name[96], mbps[16] = "-", us[16] = "-", cyc[16], x13[16];
    char l1[16], misp[16];
    char ref[40] = "-", ratio[16] = "-";
    snprintf(name, sizeof name, "%s %s%s%s%s%s", col(st, 1), col(st, 2),
             *col(st, 3) ? " " : "", col(st, 3), *col(st, 4) ? " " : "", col(st, 4));
    stat_t ns;
    double own = 0, other;
    if (!get_stat(db, id, "tsc", "tokbench", "ns", &ns) && ns.bytes > 0 && ns.median > 0) {
        own = ns.bytes * 1e3 / ns.median;
        snprintf(mbps, sizeof mbps, "%.2f", own);
    }
    if (!get_stat(db, id, "tsc", "tokbench", "ns", &ns) && ns.nodes > 0)
        snprintf(us, sizeof us, "%.1f", ns.median / 1e3);
    double c = per_node(db, id, &cols->cyc);
    figure(cyc, sizeof cyc, 2, c);
    figure(x13, sizeof x13, 2, c / XP_BASELINE_CYCLES_PER_NODE);
    figure(l1, sizeof l1, 3, per_node(db, id, &cols->l1d));
    figure(misp, sizeof misp, 3, per_node(db, id, &cols->misp));
    char impl[32];
    if (!reference_mbps(db, id, impl, sizeof impl, &other)) {
        snprintf(ref, sizeof ref, "%.2f %s", other, impl);
        if (own > 0)
            snprintf(ratio, sizeof ratio, "%.2f", own / other);
    }
    /* a slice case has no reference throughput; its speedup is the
     * slicer's gain over the plain walk */
    stat_t gain;
    if (!get_stat(db, id, "static", "tokbench", "slicer_gain", &gain) && gain.median > 0)
        snprintf(ratio, sizeof ratio, "%.2f", gain.median);
    fprintf(out, "%-34.34s %-8s %8s %-26s %8s %10s %11s %7s %13s %16s\n", name, col(st, 5),
            mbps, ref, ratio, us, cyc, x13, l1, misp);
}

/* The footer's words for one column. */
static void column_note(FILE *out, const char *head, const xp_column_t *c, const char *what,
                        const char *aside)
{
    char says[300];
    if (c->source)
        fprintf(out, "%s: %s per visited node%s (%s).\n", head, what, aside,
                xp_column_says(c, says, sizeof says));
}

static void summary_footer(FILE *out, const columns_t *c)
{
    fprintf(out, "MB/s: tokbench, TSC median.  speedup: tokbench MB/s over the "
                 "reference's; for a slice case, the slicer's gain (plain walk over "
                 "sliced mask, wall-clock medians).\nmask us: one walk, TSC median.\n");
    int core = c->cyc.source && !strcmp(c->cyc.metric, "cycles");
    column_note(out, core ? "cyc/node" : "refcyc/node", &c->cyc,
                core ? "core cycles" : "TSC reference cycles", core ? "" : ", not core cycles");
    if (c->cyc.source)
        fprintf(out, "%s\n", core ? "x13cyc: cyc/node over the 13-cycle baseline (core "
                "cycles)." : "x13ref: refcyc/node over the 13-cycle baseline, which is "
                "core cycles: reference cycles run at the TSC's rate, so this is only "
                "indicative.");
    column_note(out, c->l1d.metric ? c->l1d.metric : "", &c->l1d, "L1D misses", "");
    column_note(out, c->misp.metric ? c->misp.metric : "", &c->misp,
                "branch mispredictions", "");
}

int xp_print_summary(FILE *out, xp_db_t *db, int64_t run, tb_err_t *err)
{
    columns_t c;
    xp_pick_column(db, run, xp_cycles_prefs, 2, NULL, &c.cyc);
    xp_pick_column(db, run, xp_l1d_prefs, 4, NULL, &c.l1d);
    xp_pick_column(db, run, xp_misp_prefs, 3, NULL, &c.misp);
    sqlite3_stmt *st;
    if (xp_db_prepare_id(db, "SELECT id, experiment, vocabulary,"
                             " trim(layout || ' ' || pattern), corpus, status, message"
                             " FROM cases WHERE run_id = ? ORDER BY seq", run, &st, err))
        return -1;
    int core = c.cyc.source && !strcmp(c.cyc.metric, "cycles");
    fprintf(out, "%-34s %-8s %8s %-26s %8s %10s %11s %7s %13s %16s\n", "case", "status",
            "MB/s", "reference MB/s", "speedup", "mask us", core ? "cyc/node" : "refcyc/node",
            core ? "x13cyc" : "x13ref", c.l1d.metric ? c.l1d.metric : "l1d/node",
            c.misp.metric ? c.misp.metric : "misp/node");
    while (sqlite3_step(st) == SQLITE_ROW) {
        summary_line(out, db, &c, st);
        if (strcmp(col(st, 5), "ok") && *col(st, 6))
            fprintf(out, "    %s\n", col(st, 6));
    }
    sqlite3_finalize(st);
    summary_footer(out, &c);
    return 0;
}

static int open_or_die(const char *path, xp_db_t **db)
{
    tb_err_t err;
    *db = xp_db_open(path, 0, &err);
    return *db ? 0 : xp_die(&err);
}

int xp_cmd_runs(int argc, char **argv)
{
    const char *path = xp_take_db_arg(&argc, argv);
    if (xp_wants_help(argc, argv) || argc > 1) {
        fprintf(argc > 1 ? stderr : stdout, "usage: tokbench runs [--db FILE]\n");
        return argc > 1 ? 2 : 0;
    }
    xp_db_t *db;
    if (open_or_die(path, &db))
        return 1;
    sqlite3_stmt *st;
    tb_err_t err;
    if (xp_db_prepare(db, "SELECT r.id, r.started, r.status, substr(r.git_commit, 1, 10),"
                          " r.git_dirty, r.suite, (SELECT count(*) FROM cases c WHERE"
                          " c.run_id = r.id AND c.status = 'ok'), (SELECT count(*) FROM"
                          " cases c WHERE c.run_id = r.id AND c.status <> 'ok'),"
                          " r.cpu_model, CASE WHEN r.shard = 0 THEN ' (shards joined, of '"
                          " || r.shards || ')' WHEN r.shard > 0 THEN ' (shard ' || r.shard ||"
                          " '/' || r.shards || ')' ELSE '' END FROM runs r ORDER BY r.id",
                      &st, &err)) {
        xp_db_close(db);
        return xp_die(&err);
    }
    printf("%4s  %-24s %-10s %-12s %4s %6s  %s\n", "run", "started", "status",
           "commit", "ok", "failed", "suite / cpu");
    while (sqlite3_step(st) == SQLITE_ROW)
        printf("%4lld  %-24s %-10s %-10s%-2s %4d %6d  %s%s / %s\n",
               (long long)sqlite3_column_int64(st, 0), col(st, 1), col(st, 2), col(st, 3),
               sqlite3_column_int(st, 4) ? "+" : "", sqlite3_column_int(st, 6),
               sqlite3_column_int(st, 7), col(st, 5), col(st, 9), col(st, 8));
    sqlite3_finalize(st);
    xp_db_close(db);
    return 0;
}

static int parse_run(const char *s, int64_t *run)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || v <= 0) {
        fprintf(stderr, "tokbench: '%s' is not a run number (see tokbench runs)\n", s);
        return -1;
    }
    *run = v;
    return 0;
}

static int show_provenance(xp_db_t *db, int64_t run)
{
    static const char *const names[] = {
        "suite", "started", "ended", "status", "note", "git_commit", "git_dirty",
        "compiler", "cflags", "cpu_model", "cores", "tsc_hz", "kernel", "virt",
        "sources", "pinned_cpu", "host", "sources_detail", "shard", "shards", "shard_key",
    };
    sqlite3_stmt *st;
    tb_err_t err;
    if (xp_db_prepare_id(db, "SELECT suite, started, ended, status, note, git_commit,"
                             " git_dirty, compiler, cflags, cpu_model, cores, tsc_hz,"
                             " kernel, virt, sources, pinned_cpu, host, sources_detail,"
                             " shard, shards, shard_key FROM runs WHERE id = ?", run, &st, &err))
        return xp_die(&err);
    int found = sqlite3_step(st) == SQLITE_ROW;
    for (int i = 0; found && i < (int)(sizeof names / sizeof *names); i++)
        printf("%-15s %s\n", names[i], col(st, i));
    sqlite3_finalize(st);
    if (!found)
        fprintf(stderr, "tokbench: %s: no run %lld\n", db->path, (long long)run);
    return found ? 0 : 1;
}

static void show_inputs(xp_db_t *db, int64_t run)
{
    sqlite3_stmt *st;
    if (xp_db_prepare_id(db, "SELECT role, sha256, path FROM inputs WHERE run_id = ?"
                             " ORDER BY role, path", run, &st, NULL))
        return;
    printf("\ninputs:\n");
    while (sqlite3_step(st) == SQLITE_ROW)
        printf("  %-10s %.16s  %s\n", col(st, 0), col(st, 1), col(st, 2));
    sqlite3_finalize(st);
}

static void show_case_stats(xp_db_t *db, int64_t case_id)
{
    sqlite3_stmt *st;
    if (xp_db_prepare_id(db, "SELECT source, impl, metric, reps, min, median, max, bytes,"
                             " nodes, event, native, user_only FROM metric_stats WHERE"
                             " case_id = ? AND metric NOT LIKE 'cg\\_%' ESCAPE '\\'"
                             " ORDER BY source, impl, metric", case_id, &st, NULL))
        return;
    while (sqlite3_step(st) == SQLITE_ROW) {
        double med = sqlite3_column_double(st, 5), bytes = sqlite3_column_double(st, 7),
               nodes = sqlite3_column_double(st, 8);
        printf("    %-9s %-18s %-16s %3d  %14.1f %14.1f %14.1f", col(st, 0), col(st, 1),
               col(st, 2), sqlite3_column_int(st, 3), sqlite3_column_double(st, 4), med,
               sqlite3_column_double(st, 6));
        if (nodes > 0)
            printf("  %.3f/node", med / nodes);
        if (bytes > 0)
            printf("  %.3f/byte", med / bytes);
        if (*col(st, 9))
            printf("  [%s%s%s%s]", col(st, 9), *col(st, 10) ? " = " : "", col(st, 10),
                   sqlite3_column_type(st, 11) == SQLITE_NULL ? ""
                   : sqlite3_column_int(st, 11) ? ", user mode" : ", not user mode only");
        printf("\n");
    }
    sqlite3_finalize(st);
}

static void show_cases(xp_db_t *db, int64_t run)
{
    sqlite3_stmt *st;
    if (xp_db_prepare_id(db, "SELECT id, seq, experiment, vocabulary, layout, pattern,"
                             " corpus, options, status, message, sources FROM cases WHERE"
                             " run_id = ? ORDER BY seq", run, &st, NULL))
        return;
    printf("\ncases (source impl metric reps min median max [event]):\n");
    while (sqlite3_step(st) == SQLITE_ROW) {
        printf("  #%d %s vocab=%s layout=%s pattern=%s corpus=%s options=%s [%s] %s\n",
               sqlite3_column_int(st, 1), col(st, 2), col(st, 3), col(st, 4), col(st, 5),
               col(st, 6), col(st, 7), col(st, 10), col(st, 8));
        if (*col(st, 9))
            printf("    %s\n", col(st, 9));
        show_case_stats(db, sqlite3_column_int64(st, 0));
    }
    sqlite3_finalize(st);
}

/* The MaskBench table of the run's maskbench case, if it has one. */
static int show_maskbench(xp_db_t *db, int64_t run, tb_err_t *err)
{
    const char *root = xp_data_root(err);
    char anchors[4200];
    snprintf(anchors, sizeof anchors, "%s/experiments/anchors/maskbench.csv", root ? root : ".");
    xp_mb_table_t *t = malloc(sizeof *t);
    if (!t)
        return tb_fail(err, "out of memory");
    int rc = xp_mb_table(db, run, anchors, t, err);
    if (!rc && t->case_id && !t->measured)
        printf("\nMaskBench: not measured: %s\n", t->why);
    if (!rc && t->measured) {
        printf("\nMaskBench (times in us):\n");
        for (int r = -1; r < t->nrows; r++) {
            for (int c = 0; c < t->ncols; c++)
                printf(c ? " %17s" : "  %-18s", r < 0 ? t->abbr[c] : t->cell[r][c]);
            printf("\n");
        }
        for (int c = 1; c < t->ncols; c++)
            printf("  %s: %s\n", t->abbr[c], t->head[c]);
        if (t->note[0])
            printf("  %s\n", t->note);
    }
    free(t);
    return rc;
}

int xp_cmd_show(int argc, char **argv)
{
    const char *path = xp_take_db_arg(&argc, argv);
    int64_t run;
    if (xp_wants_help(argc, argv) || argc != 2) {
        fprintf(argc != 2 ? stderr : stdout, "usage: tokbench show RUN [--db FILE]\n");
        return argc != 2 ? 2 : 0;
    }
    if (parse_run(argv[1], &run))
        return 2;
    xp_db_t *db;
    if (open_or_die(path, &db))
        return 1;
    int rc = show_provenance(db, run);
    if (!rc) {
        show_inputs(db, run);
        show_cases(db, run);
        tb_err_t err;
        if (show_maskbench(db, run, &err))
            rc = xp_die(&err);
        printf("\n");
        if (!rc && xp_print_summary(stdout, db, run, &err))
            rc = xp_die(&err);
    }
    xp_db_close(db);
    return rc;
}

/* A change counts only when the two runs' [min, max] ranges do not
 * overlap: inside the measured spread it is noise. */
static const char *verdict(double amin, double amax, double bmin, double bmax)
{
    if (bmin > amax)
        return "HIGHER";
    if (bmax < amin)
        return "LOWER";
    return "";
}

static int diff_rows(xp_db_t *db, int64_t a, int64_t b, int *changes, int *unlike)
{
    sqlite3_stmt *st;
    tb_err_t err;
    if (xp_db_prepare_id(db,
                         "WITH ca AS (" XP_CASE_KEYS("run_id = ?1") "),"
                         " cb AS (" XP_CASE_KEYS("run_id = ?2") ")"
                         " SELECT ca.k, x.source, x.impl, x.metric, x.median, x.min,"
                         " x.max, y.median, y.min, y.max, x.reps, y.reps,"
                         " x.event IS y.event, ifnull(x.event, '?'), ifnull(y.event, '?')"
                         " FROM ca JOIN cb"
                         " ON ca.k = cb.k AND ca.occ = cb.occ"
                         " JOIN metric_stats x ON x.case_id = ca.id"
                         " JOIN metric_stats y ON y.case_id = cb.id"
                         " AND y.source = x.source AND y.impl = x.impl"
                         " AND y.metric = x.metric"
                         " WHERE x.metric NOT LIKE 'cg\\_%' ESCAPE '\\'"
                         " ORDER BY ca.id, x.source, x.impl, x.metric", a, &st, &err))
        return xp_die(&err);
    sqlite3_bind_int64(st, 2, b);
    printf("%-40s %-9s %-14s %-12s %14s %14s %8s  %s\n", "case", "source", "impl",
           "metric", "median A", "median B", "B/A", "beyond noise");
    while (sqlite3_step(st) == SQLITE_ROW) {
        double ma = sqlite3_column_double(st, 4), mb = sqlite3_column_double(st, 7);
        char v[160], ratio[16] = "-";
        /* one metric counted by two different events (two CPUs) is no
         * change of the code: it is not compared */
        if (!sqlite3_column_int(st, 12)) {
            snprintf(v, sizeof v, "not compared: A counted %s, B %s", col(st, 13),
                     col(st, 14));
            (*unlike)++;
        } else {
            snprintf(v, sizeof v, "%s", verdict(sqlite3_column_double(st, 5),
                                                sqlite3_column_double(st, 6),
                                                sqlite3_column_double(st, 8),
                                                sqlite3_column_double(st, 9)));
            *changes += *v != 0;
            if (ma != 0)
                snprintf(ratio, sizeof ratio, "%.3f", mb / ma);
        }
        printf("%-40.40s %-9s %-14.14s %-12s %14.1f %14.1f %8s  %s\n", col(st, 0),
               col(st, 1), col(st, 2), col(st, 3), ma, mb, ratio, v);
    }
    sqlite3_finalize(st);
    return 0;
}

/* Cases of run `a` with no counterpart in run `b`. */
static void diff_unmatched(xp_db_t *db, int64_t a, int64_t b, const char *label)
{
    sqlite3_stmt *st;
    if (xp_db_prepare_id(db,
                         "WITH ca AS (" XP_CASE_KEYS("run_id = ?1") "),"
                         " cb AS (" XP_CASE_KEYS("run_id = ?2") ")"
                         " SELECT ca.k FROM ca LEFT JOIN cb"
                         " ON ca.k = cb.k AND ca.occ = cb.occ"
                         " WHERE cb.id IS NULL ORDER BY ca.id", a, &st, NULL))
        return;
    sqlite3_bind_int64(st, 2, b);
    while (sqlite3_step(st) == SQLITE_ROW)
        printf("only in run %s: %s\n", label, col(st, 0));
    sqlite3_finalize(st);
}

static int run_exists(xp_db_t *db, int64_t run)
{
    sqlite3_stmt *st;
    if (xp_db_prepare_id(db, "SELECT 1 FROM runs WHERE id = ?", run, &st, NULL))
        return 0;
    int found = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    if (!found)
        fprintf(stderr, "tokbench: %s: no run %lld\n", db->path, (long long)run);
    return found;
}

int xp_cmd_diff(int argc, char **argv)
{
    const char *path = xp_take_db_arg(&argc, argv);
    int64_t a, b;
    if (xp_wants_help(argc, argv) || argc != 3) {
        fprintf(argc != 3 ? stderr : stdout,
                "usage: tokbench diff RUN_A RUN_B [--db FILE]\n"
                "Compares the two runs case by case: medians, ratio B/A, and a flag\n"
                "where the runs' min..max ranges do not overlap.\n");
        return argc != 3 ? 2 : 0;
    }
    if (parse_run(argv[1], &a) || parse_run(argv[2], &b))
        return 2;
    xp_db_t *db;
    if (open_or_die(path, &db))
        return 1;
    int changes = 0, unlike = 0, rc = 1;
    if (run_exists(db, a) && run_exists(db, b)) {
        rc = diff_rows(db, a, b, &changes, &unlike);
        diff_unmatched(db, a, b, "A");
        diff_unmatched(db, b, a, "B");
        printf("%d figure%s changed beyond the measured noise\n", changes,
               changes == 1 ? "" : "s");
        if (unlike)
            printf("%d figure%s not compared: the runs counted them with different "
                   "events\n", unlike, unlike == 1 ? "" : "s");
    }
    xp_db_close(db);
    return rc;
}
