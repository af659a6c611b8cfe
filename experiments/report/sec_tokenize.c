/*
 * sec_tokenize: tokenizer throughput against the reference programs
 * measured in the same run (bars.gp).
 */
#include <math.h>
#include <string.h>

#include "report.h"

int xp_rp_sec_throughput(report_t *r, tb_err_t *err)
{
    section_t *s = xp_rp_new_section(r, "throughput", "Tokenizer throughput against the references");
    xp_rp_tab_init(&s->tab, 5, "case", "tokbench MB/s", "reference", "reference MB/s",
                   "speedup (min..max)");
    sqlite3_stmt *st, *refs;
    if (xp_rp_run_query(r, "SELECT id, vocabulary, corpus, '', status,"
                           " ifnull(message, '') FROM cases WHERE run_id = ? AND"
                           " experiment = 'tokenize' ORDER BY seq", &st, err))
        return -1;
    if (xp_db_prepare(r->db, "SELECT impl, median, min, max, bytes FROM metric_stats WHERE"
                             " case_id = ? AND source = 'wallclock' AND metric = 'ns' AND"
                             " bytes > 0 AND min > 0 ORDER BY impl", &refs, err)) {
        sqlite3_finalize(st);
        return -1;
    }
    FILE *f = xp_rp_open_out(r, s->name, ".dat", err);
    if (!f) {
        sqlite3_finalize(st);
        sqlite3_finalize(refs);
        return -1;
    }
    int rows = 0, rc = 0;
    double lo_s = INFINITY, hi_s = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        char label[200], mbps[32], why[200];
        snprintf(label, sizeof label, "%s %s", xp_rp_col(st, 1), xp_rp_col(st, 2));
        int64_t id = sqlite3_column_int64(st, 0);
        stat_t tb;
        if (strcmp(xp_rp_col(st, 4), "ok")) {
            xp_rp_failed_text(st, why, sizeof why);
            rc = xp_rp_tab_row(&s->tab, err, label, NOT_MEASURED, why, "", "");
            continue;
        }
        if (!xp_rp_get_stat(r, id, "tsc", "tokbench", "ns", &tb) || tb.bytes <= 0 || tb.min <= 0) {
            rc = xp_rp_tab_row(&s->tab, err, label, NOT_MEASURED, "", "", "");
            continue;
        }
        double own = tb.bytes * 1e3 / tb.median;
        xp_rp_fmt(mbps, sizeof mbps, "%.2f", own);
        sqlite3_reset(refs);
        sqlite3_bind_int64(refs, 1, id);
        int nref = 0;
        while (!rc && sqlite3_step(refs) == SQLITE_ROW) {
            double bytes = sqlite3_column_double(refs, 4);
            double med = bytes * 1e3 / sqlite3_column_double(refs, 1);
            double fast = bytes * 1e3 / sqlite3_column_double(refs, 2);
            double slow = bytes * 1e3 / sqlite3_column_double(refs, 3);
            /* the band: slowest tokbench over fastest reference, and back */
            double lo = tb.bytes * 1e3 / tb.max / fast, hi = tb.bytes * 1e3 / tb.min / slow;
            char ref[64], rm[32], sp[80], q[300], full[300];
            snprintf(ref, sizeof ref, "%s", xp_rp_col(refs, 0));
            xp_rp_fmt(rm, sizeof rm, "%.2f", med);
            snprintf(sp, sizeof sp, "%.2f (%.2f..%.2f)", own / med, lo, hi);
            rc = xp_rp_tab_row(&s->tab, err, label, mbps, ref, rm, sp);
            snprintf(full, sizeof full, "%s vs %s", label, ref);
            xp_rp_dat_label(q, sizeof q, full);
            fprintf(f, "\"%s\" %.6g %.6g %.6g 0x%06x\n", q, own / med, lo, hi,
                    own >= med ? COLOUR_MAIN : COLOUR_BAD);
            nref++;
            rows++;
            lo_s = fmin(lo_s, own / med);
            hi_s = fmax(hi_s, own / med);
        }
        if (!rc && !nref)
            rc = xp_rp_tab_row(&s->tab, err, label, mbps, "no reference measured", "", "");
    }
    sqlite3_finalize(st);
    sqlite3_finalize(refs);
    if (xp_rp_close_out(r, f, s->name, err) || rc)
        return -1;
    xp_rp_caption(r, s, "tokbench: TSC; references: wall clock as each reports it");
    if (!rows)
        return xp_rp_not_measured(r, s, "the run has no tokenize case timed against a "
                                  "reference.");
    snprintf(s->note, sizeof s->note, "Speedup is tokbench's MB/s over the reference's "
             "on the same bytes: above 1, tokbench is faster; red bars are slower.");
    tb_buf_t v = {0};
    xp_rp_gp_num(&v, "hline", 1);
    xp_rp_gp_str(&v, "hlabel", "as fast as the reference");
    xp_rp_gp_num(&v, "logy", xp_rp_spread(lo_s, hi_s));
    rc = xp_rp_draw(r, s, "bars", xp_rp_spread(lo_s, hi_s) ?
                    "speedup (tokbench MB/s / reference MB/s, log scale)" :
                    "speedup (tokbench MB/s / reference MB/s)", &v, err);
    tb_buf_free(&v);
    return rc;
}
