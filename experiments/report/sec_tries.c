/*
 * sec_tries: trie memory per key, build time, and exact lookup and
 * prefix search per key beside Darts and MARISA (grouped.gp).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

typedef struct {
    names_t vocabs, layouts;
    grid_t bytes_per_key, build_ms;
} matrix_t;

/* One case per vocabulary and layout: a lookup case where the run has one
 * (the structure over every token, with nodes and bytes per key and the
 * median of several builds, and the external Darts and MARISA beside
 * tokbench's layouts), else a walk case (one build; specials left out). */
#define MEMORY_CASES                                                          \
    "SELECT id, vocabulary, layout, experiment FROM (SELECT id, vocabulary,"  \
    " layout, experiment, ROW_NUMBER() OVER (PARTITION BY vocabulary, layout" \
    " ORDER BY experiment = 'lookup' DESC, seq) AS k, min(seq) OVER"          \
    " (PARTITION BY vocabulary, layout) AS first FROM cases WHERE run_id = ?" \
    " AND experiment IN ('lookup', 'walk') AND status = 'ok' AND layout <> '')" \
    " WHERE k = 1 ORDER BY first"

int xp_rp_sec_memory(report_t *r, tb_err_t *err)
{
    section_t *mem = xp_rp_new_section(r, "trie_memory", "Which layout holds a vocabulary "
                                       "in the fewest bytes per token?");
    section_t *bld = xp_rp_new_section(r, "build_time", "Which layout builds fastest, per "
                                       "vocabulary?");
    xp_rp_tab_init(&mem->tab, 7, "vocabulary", "layout", "keys", "trie MiB", "bytes/key",
                   "nodes/key", "from");
    xp_rp_tab_init(&bld->tab, 5, "vocabulary", "layout", "build ms (median)", "min..max",
                   "from");
    matrix_t *m = calloc(1, sizeof *m);
    if (!m)
        return tb_fail(err, "out of memory");
    xp_rp_grid_clear(m->bytes_per_key);
    xp_rp_grid_clear(m->build_ms);
    sqlite3_stmt *st;
    if (xp_rp_run_query(r, MEMORY_CASES, &st, err)) {
        free(m);
        return -1;
    }
    int rc = 0, nmem = 0, nbld = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        int lookup = !strcmp(xp_rp_col(st, 3), "lookup");
        stat_t b, n, t, k;
        double keys = NAN, bpk = NAN, npk = NAN, bytes = NAN;
        if (lookup) {
            if (xp_rp_get_stat(r, id, "static", NULL, "keys", &k))
                keys = k.median;
            if (xp_rp_get_stat(r, id, "static", NULL, "bytes_per_key", &b))
                bpk = b.median;
            if (xp_rp_get_stat(r, id, "static", NULL, "nodes_per_key", &n))
                npk = n.median;
            if (xp_rp_get_stat(r, id, "static", NULL, "trie_bytes", &b))
                bytes = b.median;
        } else {
            /* a walk's trie holds what a walk under "any" allows */
            keys = xp_rp_vocab_tokens(r, xp_rp_col(st, 1));
            if (xp_rp_get_stat(r, id, "static", "tokbench", "trie_bytes", &b)) {
                bytes = b.median;
                bpk = b.median / keys;
            }
            if (xp_rp_get_stat(r, id, "static", "tokbench", "trie_nodes", &n))
                npk = n.median / keys;
        }
        int ht = xp_rp_get_stat(r, id, "wallclock", NULL, "build_ns", &t);
        const char *from = lookup ? "lookup (every token)" : "walk (specials left out)";
        char kk[32], mib[32], bp[32], np[32], ms[32], range[64];
        xp_rp_fmt(kk, sizeof kk, "%.0f", keys);
        xp_rp_fmt(mib, sizeof mib, "%.2f", bytes / 1048576.0);
        xp_rp_fmt(bp, sizeof bp, "%.2f", bpk);
        xp_rp_fmt(np, sizeof np, "%.3f", npk);
        xp_rp_fmt(ms, sizeof ms, "%.2f", ht ? t.median / 1e6 : NAN);
        if (ht)
            snprintf(range, sizeof range, "%.2f..%.2f", t.min / 1e6, t.max / 1e6);
        else
            snprintf(range, sizeof range, "%s", "");
        rc = xp_rp_tab_row(&mem->tab, err, xp_rp_col(st, 1), xp_rp_col(st, 2), kk, mib, bp, np,
                           from) ||
             xp_rp_tab_row(&bld->tab, err, xp_rp_col(st, 1), xp_rp_col(st, 2), ms, range,
                           lookup ? "lookup (median of the builds)" : "walk (one build)");
        int vi = xp_rp_name_index(&m->vocabs, xp_rp_col(st, 1));
        int li = xp_rp_name_index(&m->layouts, xp_rp_col(st, 2));
        if (vi < 0 || li < 0)
            continue; /* in the tables, too many to draw */
        if (isfinite(bpk)) {
            m->bytes_per_key[vi][li] = bpk;
            nmem++;
        }
        if (ht) {
            m->build_ms[vi][li] = t.median / 1e6;
            nbld++;
        }
    }
    sqlite3_finalize(st);
    if (rc) {
        free(m);
        return -1;
    }
    xp_rp_caption(r, mem, "bytes: as each structure reports them, from the lookup cases "
                  "(else the walks)");
    xp_rp_caption(r, bld, "build time: wall clock, from the lookup cases (else the walks)");
    if (nmem)
        rc = xp_rp_write_grid(r, mem->name, "vocabulary", &m->vocabs, &m->layouts,
                              m->bytes_per_key, err);
    if (!rc && nbld)
        rc = xp_rp_write_grid(r, bld->name, "vocabulary", &m->vocabs, &m->layouts, m->build_ms,
                              err);
    if (!rc && nmem) {
        snprintf(mem->note, sizeof mem->note, "darts (Darts 0.32) and marisa (libmarisa) "
                 "are external libraries, measured by the lookup driver on the same keys.");
        rc = xp_rp_draw_grid(r, mem, "trie bytes per key", m->layouts.n, 0,
                             m->bytes_per_key, m->vocabs.n, NULL, err);
    } else if (!rc) {
        xp_rp_not_measured(r, mem, "no lookup or walk case of this run has the structure's "
                           "bytes and its number of keys.");
    }
    if (!rc && nbld)
        rc = xp_rp_draw_grid(r, bld, "build time (milliseconds)", m->layouts.n, 0,
                             m->build_ms, m->vocabs.n, NULL, err);
    else if (!rc)
        xp_rp_not_measured(r, bld, "no lookup or walk case of this run timed its build.");
    free(m);
    return rc;
}

/* The time per key of a lookup case: TSC median over the keys (or corpus
 * positions) one repetition handles; 1 if the run has it. */
static int per_key(report_t *r, int64_t id, stat_t *ns)
{
    return xp_rp_get_stat(r, id, "tsc", "tokbench", "ns", ns) && ns->min > 0;
}

/* Items of the case's timed metric (keys or positions per repetition). */
static double items_of(report_t *r, int64_t id)
{
    sqlite3_stmt *st = xp_rp_figure_query(r, "SELECT items FROM metric_stats WHERE case_id = ?"
                                          " AND source = 'tsc' AND impl = 'tokbench' AND"
                                          " metric = 'ns'", id);
    double items = st ? xp_rp_first_number(st) : NAN;
    return items > 0 ? items : NAN;
}

/* Time per key of the same work (vocabulary, pattern, options) done by
 * another implementation in this run: NAN when it was not measured. */
static double other_per_key(report_t *r, sqlite3_stmt *c, const char *impl)
{
    double v = NAN;
    sqlite3_stmt *st = xp_rp_figure_query(r, "SELECT id FROM cases WHERE run_id = ? AND"
                                          " experiment = 'lookup' AND status = 'ok' AND"
                                          " vocabulary = ? AND layout = ? AND"
                                          " ifnull(pattern, '') = ? AND ifnull(corpus, '') = ?"
                                          " AND ifnull(options, '') = ? ORDER BY seq LIMIT 1",
                                          r->run);
    if (!st)
        return v;
    sqlite3_bind_text(st, 2, xp_rp_col(c, 1), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, impl, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, xp_rp_col(c, 3), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 5, xp_rp_col(c, 4), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 6, xp_rp_col(c, 5), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        stat_t ns;
        double items = items_of(r, id);
        if (per_key(r, id, &ns) && isfinite(items))
            v = ns.median / items;
    }
    sqlite3_finalize(st);
    return v;
}

int xp_rp_sec_lookup(report_t *r, tb_err_t *err)
{
    section_t *s = xp_rp_new_section(r, "lookup_time", "Which structure looks keys up "
                                     "fastest, beside Darts and MARISA?");
    xp_rp_tab_init(&s->tab, 6, "work", "implementation", "ns per key (median)", "min..max",
                   "x darts", "x marisa");
    sqlite3_stmt *st;
    if (xp_rp_run_query(r, "SELECT id, vocabulary, layout, pattern, corpus, options,"
                           " status, ifnull(message, '') FROM cases WHERE run_id = ? AND"
                           " experiment = 'lookup' ORDER BY seq", &st, err))
        return -1;
    names_t *works = calloc(1, sizeof *works), *impls = calloc(1, sizeof *impls);
    double (*grid)[MAXNAMES] = malloc(sizeof(grid_t));
    if (!works || !impls || !grid) {
        free(works);
        free(impls);
        free(grid);
        sqlite3_finalize(st);
        return tb_fail(err, "out of memory");
    }
    xp_rp_grid_clear(grid);
    int rc = 0, cases = 0, drawn = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        char work[200], med[32], range[64], xd[32], xm[32];
        /* "llama3 exact order=random", "gemma3 prefixes multi max_bytes=200000" */
        snprintf(work, sizeof work, "%s %s%s%s%s%s", xp_rp_col(st, 1), xp_rp_col(st, 3),
                 *xp_rp_col(st, 4) ? " " : "", xp_rp_col(st, 4), *xp_rp_col(st, 5) ? " " : "",
                 xp_rp_col(st, 5));
        cases++;
        if (strcmp(xp_rp_col(st, 6), "ok")) {
            char why[200];
            snprintf(why, sizeof why, "%s: %.120s", xp_rp_col(st, 6), xp_rp_col(st, 7));
            rc = xp_rp_tab_row(&s->tab, err, work, xp_rp_col(st, 2), NOT_MEASURED, why, "", "");
            continue;
        }
        int64_t id = sqlite3_column_int64(st, 0);
        stat_t ns;
        double items = items_of(r, id);
        if (!per_key(r, id, &ns) || !isfinite(items)) {
            rc = xp_rp_tab_row(&s->tab, err, work, xp_rp_col(st, 2), NOT_MEASURED, "", "", "");
            continue;
        }
        double own = ns.median / items;
        double darts = other_per_key(r, st, "darts"), marisa = other_per_key(r, st, "marisa");
        xp_rp_fmt(med, sizeof med, "%.1f", own);
        snprintf(range, sizeof range, "%.1f..%.1f", ns.min / items, ns.max / items);
        xp_rp_fmt(xd, sizeof xd, "%.2f", own / darts);
        xp_rp_fmt(xm, sizeof xm, "%.2f", own / marisa);
        rc = xp_rp_tab_row(&s->tab, err, work, xp_rp_col(st, 2), med, range, xd, xm);
        int wi = xp_rp_name_index(works, work), li = xp_rp_name_index(impls, xp_rp_col(st, 2));
        if (wi >= 0 && li >= 0) {
            grid[wi][li] = own;
            drawn++;
        }
    }
    sqlite3_finalize(st);
    xp_rp_caption(r, s, "time: TSC median over the keys (exact) or corpus positions (prefixes) "
                  "of one repetition");
    if (!rc && drawn) {
        snprintf(s->note, sizeof s->note, "x darts, x marisa: time per key over that of "
                 "Darts 0.32 / libmarisa on the same keys in the same loop (below 1: "
                 "faster than the library).  exact looks every token up; prefixes runs "
                 "a common-prefix search at every byte of the corpus.");
        rc = xp_rp_write_grid(r, s->name, "work", works, impls, grid, err);
        if (!rc)
            rc = xp_rp_draw_grid(r, s, "nanoseconds per key", impls->n, 0, grid, works->n,
                                 NULL, err);
    } else if (!rc) {
        xp_rp_not_measured(r, s, "the run has no lookup case%s.",
                           cases ? " with a timed repetition" : "");
    }
    free(works);
    free(impls);
    free(grid);
    return rc;
}
