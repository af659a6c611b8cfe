/*
 * sec_suites: the engines' grammar test suites in one table, each against
 * its reference: grammars loaded and refused here, strings with the
 * reference's verdict, masks equal and different (with a cause, or
 * without).  llguidance's tests come from the llgtests case (its static
 * counts), Lark's own files from the larkfiles case (its static counts),
 * the JSON Schema Test Suite from the jsts cases' outcomes (a
 * group is a schema with its instances; its verdict is the suite's
 * labels').  Then the differing tokens of llguidance's tests by cause.
 */
#include <stdio.h>
#include <string.h>

#include "report.h"

/* "k of n", or "-" when nothing was counted. */
static void of(char *buf, size_t size, double k, double n)
{
    if (n > 0)
        snprintf(buf, size, "%.0f of %.0f", k, n);
    else
        snprintf(buf, size, "-");
}

/* A static count of a suite's case: kind's (lark_ or json_ for llgtests,
 * "" for larkfiles) metric. */
static double count(report_t *r, int64_t case_id, const char *kind, const char *metric)
{
    stat_t st;
    char m[32];
    snprintf(m, sizeof m, "%s%s", kind, metric);
    return xp_rp_get_stat(r, case_id, "static", "tokbench", m, &st) ? st.median : 0;
}

/* One row of the llgtests case. */
static int llg_row(report_t *r, section_t *s, int64_t id, const char *name, const char *kind,
                   tb_err_t *err)
{
    double g = count(r, id, kind, "grammars"), loaded = count(r, id, kind, "loaded");
    double steps = count(r, id, kind, "steps"), equal = count(r, id, kind, "equal");
    char a[48], b[48], c[64], d[48], e[64], f[64];
    /* "to refuse": llguidance's tests want them refused */
    snprintf(a, sizeof a, "%.0f (%.0f to refuse)", g, count(r, id, kind, "ref_refuses"));
    snprintf(b, sizeof b, "%.0f", loaded);
    snprintf(c, sizeof c, "%.0f", count(r, id, kind, "refused_here"));
    of(d, sizeof d, count(r, id, kind, "agree"), count(r, id, kind, "strings"));
    snprintf(e, sizeof e, "%.0f of %.0f, %.0f grammars", equal, steps,
             count(r, id, kind, "compared"));
    snprintf(f, sizeof f, "%.0f explained, %.0f not", count(r, id, kind, "explained"),
             count(r, id, kind, "unexplained"));
    return xp_rp_tab_row(&s->tab, err, name, a, b, c, d, e, f);
}

/* The id of the first case of query (CASES_IF) that ran ok into *id, or
 * 0 with why (size 300) saying why there is none. */
static int ok_case(report_t *r, const char *query, int64_t *id, char *why, tb_err_t *err)
{
    sqlite3_stmt *st;
    if (xp_rp_run_query(r, query, &st, err))
        return -1;
    *id = 0;
    snprintf(why, 300, "not in the run (experiments/suites/default.csv has the row)");
    while (!*id && sqlite3_step(st) == SQLITE_ROW) {
        if (!strcmp(xp_rp_col(st, 4), "ok"))
            *id = sqlite3_column_int64(st, 0);
        else
            xp_rp_failed_text(st, why, 300);
    }
    sqlite3_finalize(st);
    return 0;
}

/* The llgtests rows, or why they are missing. */
static int llg_rows(report_t *r, section_t *s, tb_err_t *err)
{
    int64_t id;
    char why[300];
    if (ok_case(r, CASES_IF("llgtests", ""), &id, why, err))
        return -1;
    if (!id)
        return xp_rp_tab_row(&s->tab, err, "llguidance's tests", why, "", "", "", "", "");
    return llg_row(r, s, id, "llguidance's tests, Lark (llguidance 1.8.0 live)", "lark_",
                   err) ||
           llg_row(r, s, id, "llguidance's tests, JSON Schema (%json)", "json_", err);
}

/* The larkfiles case's row (Lark's own grammar files), or why it is
 * missing. */
static int lark_row(report_t *r, section_t *s, tb_err_t *err)
{
    int64_t id;
    char why[300];
    if (ok_case(r, CASES_IF("larkfiles", ""), &id, why, err))
        return -1;
    const char *name = "Lark's own grammar files (python3-lark live)";
    if (!id)
        return xp_rp_tab_row(&s->tab, err, name, why, "", "", "", "", "");
    char a[48], b[32], c[32], d[96];
    /* "to refuse": files Lark refuses as well */
    snprintf(a, sizeof a, "%.0f (%.0f to refuse)", count(r, id, "", "files"),
             count(r, id, "", "ref_refuses"));
    snprintf(b, sizeof b, "%.0f", count(r, id, "", "loaded"));
    snprintf(c, sizeof c, "%.0f", count(r, id, "", "refused_here"));
    of(d, sizeof d, count(r, id, "", "agree"), count(r, id, "", "strings"));
    snprintf(d + strlen(d), sizeof d - strlen(d), " (%.0f differ for a known cause, %.0f not)",
             count(r, id, "", "explained"), count(r, id, "", "differ"));
    return xp_rp_tab_row(&s->tab, err, name, a, b, c, d, "no mask reference", "-");
}

/* One row per jsts case: groups, refused ones, and those whose every
 * instance gets its label. */
static int jsts_rows(report_t *r, section_t *s, tb_err_t *err)
{
    sqlite3_stmt *st;
    if (xp_rp_run_query(r, "SELECT ifnull(c.options, ''), count(*), sum(o.outcome ="
                           " 'refused'), sum(o.outcome = 'passing') FROM cases c JOIN"
                           " outcomes o ON o.case_id = c.id AND o.impl = 'tokbench'"
                           " WHERE c.run_id = ? AND c.experiment = 'jsts' AND"
                           " c.status = 'ok' GROUP BY c.id ORDER BY c.seq", &st, err))
        return -1;
    int rc = 0, n = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        double groups = sqlite3_column_double(st, 1), refused = sqlite3_column_double(st, 2);
        char name[160], a[32], b[32], c[32], d[64];
        const char *opts = xp_rp_col(st, 0), *draft = strstr(opts, "draft=");
        snprintf(name, sizeof name, "JSON Schema Test Suite, draft %.*s%s",
                 draft ? (int)strcspn(draft + 6, " ") : 7, draft ? draft + 6 : "2020-12",
                 strstr(opts, "optional") ? ", optional too" : "");
        snprintf(a, sizeof a, "%.0f", groups);
        snprintf(b, sizeof b, "%.0f", groups - refused);
        snprintf(c, sizeof c, "%.0f", refused);
        of(d, sizeof d, sqlite3_column_double(st, 3), groups);
        strncat(d, " groups", sizeof d - strlen(d) - 1);
        rc = xp_rp_tab_row(&s->tab, err, name, a, b, c, d, "no mask reference", "-");
        n++;
    }
    sqlite3_finalize(st);
    if (!rc && !n)
        rc = xp_rp_tab_row(&s->tab, err, "JSON Schema Test Suite", "not in the run", "", "",
                           "", "", "");
    return rc;
}

/* The differing tokens of llguidance's tests by cause. */
static int causes(report_t *r, tb_err_t *err)
{
    section_t *s = xp_rp_new_section(r, "suites_causes", "llguidance's tests: why do masks "
                                     "differ?");
    s->table_only = 1;
    xp_rp_caption(r, s, "outcomes of the llgtests case, impl 'llguidance causes' "
                  "(experiments/refs/xgdiff.h names each cause and its test)");
    xp_rp_tab_init(&s->tab, 3, "cause", "tokens", "verdict");
    sqlite3_stmt *st;
    if (xp_rp_run_query(r, "SELECT o.item, o.tokens, o.outcome FROM outcomes o JOIN cases c"
                           " ON c.id = o.case_id WHERE c.run_id = ? AND c.experiment ="
                           " 'llgtests' AND o.impl = 'llguidance causes' ORDER BY"
                           " o.tokens DESC", &st, err))
        return -1;
    int rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW)
        rc = xp_rp_tab_row(&s->tab, err, xp_rp_col(st, 0), xp_rp_col(st, 1),
                           xp_rp_col(st, 2));
    sqlite3_finalize(st);
    if (!rc && !xp_rp_tab_rows(&s->tab))
        xp_rp_not_measured(r, s, "the run has no llgtests case with differing tokens.");
    return rc;
}

int xp_rp_sec_suites(report_t *r, tb_err_t *err)
{
    section_t *s = xp_rp_new_section(r, "suites", "The engines' grammar test suites: does "
                                     "tokbench agree with each reference?");
    s->table_only = 1;
    xp_rp_caption(r, s, "static figures of the llgtests case (grammars loaded here, strings "
                  "judged over bytes as llguidance's tests want, masks compared with "
                  "llguidance's live on the passing strings under Llama 3, each differing "
                  "token put down to a cause); outcomes of the jsts cases; static figures "
                  "of the larkfiles case (Lark's own grammar files, walks of each "
                  "automaton and mutants of them judged here and by python3-lark). "
                  "llama.cpp's grammar tests are not in this checkout");
    xp_rp_tab_init(&s->tab, 7, "suite", "grammars", "loaded here",
                   "refused here, loaded by the reference",
                   "strings with the reference's verdict", "masks equal",
                   "differing tokens");
    return llg_rows(r, s, err) || lark_row(r, s, err) || jsts_rows(r, s, err) ||
           causes(r, err);
}
