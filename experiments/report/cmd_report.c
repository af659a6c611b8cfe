/*
 * cmd_report: `tokbench report`, the plots and the page of one run.
 *
 * Each section (sec_*.c) reads the store, writes its data as NAME.dat in
 * the output folder, has gnuplot draw NAME.png and NAME.svg from a
 * template beside it in this folder (*.gp), and keeps a short table for
 * the page (page.c), written twice from the same sections: index.html and
 * index.md.  A figure the run does not have is left out of the data and
 * named "not measured" in the table: a missing source is never drawn as
 * zero.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../base/file.h"
#include "report.h"

/* The run to report: the one named, else the latest. */
static int pick_run(report_t *r, int64_t *run, tb_err_t *err)
{
    if (*run > 0)
        return 0;
    sqlite3_stmt *st;
    if (xp_db_prepare(r->db, "SELECT max(id) FROM runs", &st, err))
        return -1;
    int found = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL;
    if (found)
        *run = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (!found)
        return tb_fail(err, "%s: the database has no runs to report; run a suite first "
                       "(tokbench run experiments/suites/default.csv --db %s)",
                       r->db->path, r->db->path);
    return 0;
}

static int parse_id(const char *opt, const char *s, int64_t *v)
{
    char *end;
    long long x = s ? strtoll(s, &end, 10) : 0;
    if (!s || !*s || *end || x <= 0) {
        fprintf(stderr, "tokbench report: %s needs a run number (see tokbench runs)\n", opt);
        return -1;
    }
    *v = x;
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tokbench report [--db FILE] [--run ID] [--vs ID] --out DIR\n"
            "Draws the plots of one run with gnuplot (PNG and SVG, templates in\n"
            "experiments/report/, data next to each plot as NAME.dat) and one page that\n"
            "shows them with a short table under each: DIR/index.html and DIR/index.md.\n"
            "Bars are grouped by case (vocabulary and pattern), one colour per layout or\n"
            "engine, at most 12 groups a panel (NAME.png, NAME-p2.png, ...), the key\n"
            "outside the plot; a pattern longer than 18 characters is named PN in the\n"
            "plots and given verbatim in the Patterns table.  Published figures of other\n"
            "machines (tokbench import) are drawn as marks of their own, never as bars.\n"
            "  cycles_per_node  cycles per visited node of every walk but lex: and g: (see\n"
            "                   lexer_masks) per layout, with the published 13-cycle\n"
            "                   figure (PAPI core cycles, else TSC reference cycles,\n"
            "                   labelled as such)\n"
            "  misses_per_node  L1D and LLC misses and branch mispredictions per node\n"
            "                   (PAPI, else callgrind's simulation; one source and one\n"
            "                   event per column, named after what it counts)\n"
            "  mask_time        time per mask against vocabulary size, a line per layout\n"
            "                   and pattern (masks from the start state)\n"
            "  lexer_masks      walks under the lexer and grammars (re:, lex:, g:): time\n"
            "                   per mask per layout, with the lexer issue's targets\n"
            "  slicer           slice cases: the sliced mask against the plain walk, the\n"
            "                   gain, the slicer's build time and bytes, the sliced target\n"
            "  token_index      index cases: states, entries, bytes, build time, per-step\n"
            "                   cost walking and through the index, break-even steps\n"
            "  throughput       tokenizer MB/s beside each reference program's and the\n"
            "                   published encode speeds; speedups in the table\n"
            "  trie_memory      trie bytes per key, per vocabulary and layout (the lookup\n"
            "                   cases' figures, Darts and MARISA included; else the walks')\n"
            "  build_time       trie build time, per vocabulary and layout\n"
            "  lookup_time      exact lookup and prefix search, ns per key per\n"
            "                   implementation, with ratios to Darts and MARISA\n"
            "  maskbench        the MaskBench table (TBM and TTFM percentiles, outcomes) of\n"
            "                   tokbench and XGrammar beside the published columns\n"
            "                   (experiments/anchors/maskbench.csv); the TBM distribution\n"
            "  maskbench_ttfm   the TTFM distribution; then compile errors by reason and\n"
            "                   every validation and invalidation error (tables)\n"
            "  jsts_2020_12     the JSON Schema Test Suite per keyword file, draft 2020-12\n"
            "  jsts_7           and draft 7: groups passing, refused, wrong, crashed\n"
            "                   (tables; totals first); then the wrong and crashed groups\n"
            "  soak             ns per token against the position in a long document, a\n"
            "                   line per soak case; first and last MiB and peak memory\n"
            "  soak_memory      the soak cases' resident memory against the position\n"
            "  serve            masks/s and batch p50/p99 per threads T and batch B (table)\n"
            "  machines         cycles per node of the same walks on every machine in\n"
            "                   the database (see tokbench merge)\n"
            "  compare          with --vs: time of each case over the other run's, with\n"
            "                   its noise band; regressions in red\n"
            "  anchors          the published figures in the database, with sources\n"
            "  patterns         the short names of the plots, each pattern verbatim\n"
            "--db FILE  the results database (default %s)\n"
            "--run ID   the run to report (default: the latest, complete or not)\n"
            "--vs ID    also compare the run with run ID\n"
            "A figure the run does not have is written as \"not measured\", never\n"
            "drawn as zero.  Needs gnuplot (Debian package gnuplot-nox).\n",
            XP_DEFAULT_DB);
}

int xp_cmd_report(int argc, char **argv)
{
    const char *path = xp_take_db_arg(&argc, argv);
    if (xp_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    report_t *r = calloc(1, sizeof *r);
    if (!r) {
        fprintf(stderr, "tokbench: out of memory\n");
        return 1;
    }
    for (int i = 1; i < argc; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--out") && next) {
            r->out = next;
            i++;
        } else if (!strcmp(argv[i], "--run") || !strcmp(argv[i], "--vs")) {
            if (parse_id(argv[i], next, !strcmp(argv[i], "--run") ? &r->run : &r->vs)) {
                free(r);
                return 2;
            }
            i++;
        } else {
            fprintf(stderr, "tokbench report: unexpected argument '%s'\n", argv[i]);
            usage(stderr);
            free(r);
            return 2;
        }
    }
    if (!r->out) {
        fprintf(stderr, "tokbench report: --out DIR is required\n");
        usage(stderr);
        free(r);
        return 2;
    }
    tb_err_t err;
    const char *root = xp_data_root(&err);
    int rc = root ? 0 : -1;
    if (!rc) {
        snprintf(r->plots, sizeof r->plots, "%s/experiments/report", root);
        snprintf(r->anchors, sizeof r->anchors, "%s/experiments/anchors/maskbench.csv", root);
        snprintf(r->log, sizeof r->log, "%s/gnuplot.log", r->out);
        r->db = xp_db_open(path, 0, &err);
        rc = r->db ? 0 : -1;
    }
    if (!rc)
        rc = pick_run(r, &r->run, &err) || xp_rp_load_run(r, r->run, &r->info, &err) ||
             (r->vs && xp_rp_load_run(r, r->vs, &r->vs_info, &err)) || tb_mkdirs(r->out, &err);
    if (!rc) {
        unlink(r->log);
        /* gnuplot is needed for every plot: say so once, up front */
        char *argv_v[] = {"gnuplot", "--version", NULL};
        rc = xp_rp_spawn_gnuplot(r->log, argv_v, &err) < 0 ? -1 : 0;
    }
    if (!rc)
        rc = xp_rp_sec_cycles(r, &err) || xp_rp_sec_misses(r, &err) ||
             xp_rp_sec_mask_time(r, &err) || xp_rp_sec_lexer(r, &err) ||
             xp_rp_sec_slicer(r, &err) || xp_rp_sec_index(r, &err) ||
             xp_rp_sec_throughput(r, &err) || xp_rp_sec_memory(r, &err) ||
             xp_rp_sec_lookup(r, &err) || xp_rp_sec_maskbench(r, &err) ||
             xp_rp_sec_jsts(r, &err) || xp_rp_sec_suites(r, &err) || xp_rp_sec_soak(r, &err) ||
             xp_rp_sec_soak_memory(r, &err) || xp_rp_sec_serve(r, &err) ||
             xp_rp_sec_machines(r, &err) || (r->vs && xp_rp_sec_compare(r, &err)) ||
             xp_rp_sec_anchors(r, &err) || xp_rp_sec_patterns(r, &err);
    if (!rc && !r->vs) {
        static const section_t compare = {.name = "compare"};
        xp_rp_remove_plot(r, &compare);
    }
    if (!rc)
        rc = xp_rp_write_html(r, &err) || xp_rp_write_md(r, &err);
    for (int i = 0; i < r->nsec; i++)
        xp_rp_tab_free(&r->sec[i].tab);
    for (size_t i = 0; i < r->patterns.len; i++)
        free(r->patterns.data[i]);
    free(r->patterns.data);
    xp_db_close(r->db);
    if (rc) {
        free(r);
        return xp_die(&err);
    }
    int drawn = 0;
    for (int i = 0; i < r->nsec; i++)
        drawn += r->sec[i].drawn;
    printf("report of run %lld (%s%s) in %s/index.html and index.md: %d plot%s",
           (long long)r->run, r->info.status,
           strcmp(r->info.status, "complete") ? ": the suite did not finish" : "",
           r->out, drawn, drawn == 1 ? "" : "s");
    for (int i = 0, first = 1; i < r->nsec; i++)
        if (!r->sec[i].drawn && !r->sec[i].table_only) {
            printf("%s%s", first ? "; not measured: " : ", ", r->sec[i].name);
            first = 0;
        }
    printf("\n");
    int failed = r->failed_plots;
    if (failed)
        fprintf(stderr, "tokbench: gnuplot failed on %d plot%s; see %s\n", failed,
                failed == 1 ? "" : "s", r->log);
    free(r);
    return failed ? 1 : 0;
}
