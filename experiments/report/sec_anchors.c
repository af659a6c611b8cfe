/*
 * sec_anchors: the published figures of other machines that the database
 * holds (`tokbench import`, anchors.h), each with its source: the figures
 * the plots mark apart from this run's measurements.
 */
#include <stdio.h>

#include "report.h"

int xp_rp_sec_anchors(report_t *r, tb_err_t *err)
{
    section_t *s = xp_rp_new_section(r, "anchors", "Published figures: what the "
                                     "measurements here are compared with");
    s->table_only = 1;
    xp_rp_caption(r, s, "anchors table (tokbench import experiments/anchors/published.csv): "
                  "published, other machine; never measured here");
    xp_rp_tab_init(&s->tab, 8, "figure", "subject", "vocabulary", "work", "value",
                   "source (document, location, date)", "machine", "note");
    xp_rp_tab_code(&s->tab, 3);
    sqlite3_stmt *st;
    /* the value as stored, every digit the document gives */
    if (xp_db_prepare(r->db, "SELECT figure, subject, vocabulary, work, CAST(value AS TEXT)"
                             " || ' ' || unit, document || ', ' || location || ', ' || date,"
                             " machine, note FROM anchors ORDER BY figure, vocabulary, subject",
                      &st, err))
        return -1;
    int rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW)
        rc = xp_rp_tab_row(&s->tab, err, xp_rp_col(st, 0), xp_rp_col(st, 1), xp_rp_col(st, 2),
                           xp_rp_col(st, 3), xp_rp_col(st, 4), xp_rp_col(st, 5),
                           xp_rp_col(st, 6), xp_rp_col(st, 7));
    sqlite3_finalize(st);
    if (!rc && !xp_rp_tab_rows(&s->tab))
        snprintf(s->note, sizeof s->note, "None in this database: `tokbench import "
                 "experiments/anchors/published.csv --db FILE` stores them (make bench "
                 "and make report do).");
    return rc;
}
