/*
 * sec_jsts: the JSON Schema Test Suite's compliance tables (the jsts
 * driver's outcomes), as Bowtie publishes them for validators: per draft,
 * one row per keyword file with its groups and how many were passing,
 * refused at compile time, wrong and crashed; the totals of the required
 * and the optional groups first, then the required files, then the
 * optional ones (their names start with optional/).  Then every wrong or
 * crashed group, with the instance at fault.
 */
#include <stdio.h>
#include <string.h>

#include "../refs/jsts.h"
#include "report.h"

static const struct {
    const char *draft, *name, *title;
} drafts[] = {
    {"2020-12", "jsts_2020_12", "JSON Schema Test Suite, draft 2020-12: how many groups "
                                "pass, per keyword?"},
    {"7", "jsts_7", "JSON Schema Test Suite, draft 7: how many groups pass, per keyword?"},
};

/* The draft a jsts case's options name (draft=D; 2020-12 when absent) is
 * `draft`. */
static int case_draft_is(const char *options, const char *draft)
{
    const char *want = xp_jsts_draft_dir(draft), *p = options;
    char d[32] = "2020-12";
    while ((p = strstr(p, "draft="))) {
        if (p == options || p[-1] == ' ') {
            size_t n = strcspn(p + 6, " ");
            snprintf(d, sizeof d, "%.*s", (int)(n < 31 ? n : 31), p + 6);
        }
        p += 6;
    }
    const char *have = xp_jsts_draft_dir(d);
    return have && !strcmp(have, want);
}

/* "N (P%)" of the groups, or "0". */
static void share(char *buf, size_t n, long long k, long long groups)
{
    if (k && groups)
        snprintf(buf, n, "%lld (%.1f%%)", k, 100.0 * (double)k / (double)groups);
    else
        snprintf(buf, n, "%lld", k);
}

/* Rows of the table from sql (?1: the case): label, groups, passing,
 * refused, wrong, crash; with `totals`, the label column is 0 or 1
 * (required, optional) and is written as words. */
static int count_rows(report_t *r, section_t *s, const char *sql, int64_t case_id, int totals,
                      tb_err_t *err)
{
    sqlite3_stmt *st;
    if (xp_db_prepare_id(r->db, sql, case_id, &st, err))
        return -1;
    int rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        long long groups = sqlite3_column_int64(st, 1);
        char c[XP_JSTS_N][48], g[24];
        for (int v = 0; v < XP_JSTS_N; v++)
            share(c[v], sizeof c[v], sqlite3_column_int64(st, 2 + v), groups);
        snprintf(g, sizeof g, "%lld", groups);
        const char *label = xp_rp_col(st, 0);
        if (totals)
            label = sqlite3_column_int(st, 0) ? "total, optional" : "total, required";
        rc = xp_rp_tab_row(&s->tab, err, label, g, c[0], c[1], c[2], c[3]);
    }
    sqlite3_finalize(st);
    return rc;
}

#define JSTS_COUNTS                                                                      \
    " count(*), sum(outcome = 'passing'), sum(outcome = 'refused'),"                    \
    " sum(outcome = 'wrong'), sum(outcome = 'crash') FROM (SELECT outcome,"              \
    " substr(item, 1, instr(item, '#') - 1) AS file FROM outcomes WHERE case_id = ?"     \
    " AND impl = 'tokbench')"

/* The table of one draft's case. */
static int draft_table(report_t *r, section_t *s, int64_t case_id, tb_err_t *err)
{
    xp_rp_tab_init(&s->tab, 6, "keyword file", "groups", "passing", "refused", "wrong", "crash");
    int rc = count_rows(r, s, "SELECT file LIKE 'optional/%' AS opt," JSTS_COUNTS
                              " GROUP BY opt ORDER BY opt", case_id, 1, err) ||
             count_rows(r, s, "SELECT file," JSTS_COUNTS " GROUP BY file"
                              " ORDER BY file LIKE 'optional/%', file", case_id, 0, err);
    if (!rc && !xp_rp_tab_rows(&s->tab))
        xp_rp_not_measured(r, s, "the jsts case stored no outcome.");
    return rc;
}

/* Every wrong or crashed group of the run's jsts cases. */
static int failures(report_t *r, tb_err_t *err)
{
    section_t *s = xp_rp_new_section(r, "jsts_failures", "JSON Schema Test Suite: the wrong "
                                     "and crashed groups");
    s->table_only = 1;
    xp_rp_caption(r, s, "outcomes table of the jsts cases; wrong: a valid instance refused or "
                  "an invalid one accepted (the first such instance); crash: a signal, a "
                  "timeout or a grammar limit");
    xp_rp_tab_init(&s->tab, 4, "case", "group (file#index)", "outcome", "detail");
    xp_rp_tab_code(&s->tab, 1);
    sqlite3_stmt *st;
    if (xp_rp_run_query(r, "SELECT c.seq + 1, ifnull(c.options, ''), o.item, o.outcome,"
                           " ifnull(o.detail, '') FROM outcomes o JOIN cases c ON"
                           " c.id = o.case_id WHERE c.run_id = ? AND c.experiment = 'jsts'"
                           " AND o.outcome IN ('wrong', 'crash') ORDER BY c.seq,"
                           " o.item LIKE 'optional/%', o.rowid", &st, err))
        return -1;
    int rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        char what[160], detail[260];
        const char *d = xp_rp_col(st, 4);
        snprintf(what, sizeof what, "%s: %s", xp_rp_col(st, 0), xp_rp_col(st, 1));
        snprintf(detail, sizeof detail, "%.240s%s", d, strlen(d) > 240 ? "..." : "");
        rc = xp_rp_tab_row(&s->tab, err, what, xp_rp_col(st, 2), xp_rp_col(st, 3), detail);
    }
    sqlite3_finalize(st);
    if (!rc && !xp_rp_tab_rows(&s->tab)) {
        /* "None." only where a jsts case ran */
        sqlite3_stmt *q = xp_rp_figure_query(r, "SELECT count(*) FROM cases WHERE run_id = ?"
                                                " AND experiment = 'jsts' AND status = 'ok'",
                                             r->run);
        double ran = q ? xp_rp_first_number(q) : 0;
        snprintf(s->note, sizeof s->note, "%s", ran > 0 ? "None." : "Not measured: the run "
                 "has no jsts case that ran.");
    }
    return rc;
}

int xp_rp_sec_jsts(report_t *r, tb_err_t *err)
{
    int rc = 0;
    for (size_t d = 0; !rc && d < sizeof drafts / sizeof *drafts; d++) {
        section_t *s = xp_rp_new_section(r, drafts[d].name, drafts[d].title);
        s->table_only = 1;
        xp_rp_caption(r, s, "outcomes table of the jsts case (experiments/refs/jsts.h): "
                      "a verdict per group; refused: a compile error, what the compiler "
                      "cannot write exactly; wrong: an instance accepted or refused against "
                      "its label; shares of the file's groups");
        sqlite3_stmt *st;
        if (xp_rp_run_query(r, CASES_IF("jsts", ""), &st, err))
            return -1;
        int64_t case_id = 0;
        char why[300] = "";
        while (!case_id && sqlite3_step(st) == SQLITE_ROW) {
            if (!case_draft_is(xp_rp_col(st, 6), drafts[d].draft))
                continue;
            if (!strcmp(xp_rp_col(st, 4), "ok"))
                case_id = sqlite3_column_int64(st, 0);
            else if (!*why)
                xp_rp_failed_text(st, why, sizeof why);
        }
        sqlite3_finalize(st);
        if (case_id)
            rc = draft_table(r, s, case_id, err);
        else
            xp_rp_not_measured(r, s, "%s", *why ? why : "the run has no jsts case of this "
                               "draft (experiments/suites/default.csv has one).");
    }
    return rc || failures(r, err);
}
