/*
 * page: the report's page, index.html and index.md, written from the
 * same sections.
 */
#include <string.h>

#include "report.h"

static void html_esc(FILE *f, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
}

/* Markdown table cells and text: pipes and markup characters escaped. */
static void md_esc(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (strchr("|\\*`[]<>", *s))
            fputc('\\', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
}

/* A Markdown code span: the text verbatim between enough backticks (one
 * more than its longest run of them), pipes escaped as a table cell
 * needs even inside code. */
static void md_code(FILE *f, const char *s)
{
    int run = 0, longest = 0;
    for (const char *p = s; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        longest = run > longest ? run : longest;
    }
    int pad = *s == '`' || s[strlen(s) - 1] == '`';
    for (int i = 0; i <= longest; i++)
        fputc('`', f);
    if (pad)
        fputc(' ', f);
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
    if (pad)
        fputc(' ', f);
    for (int i = 0; i <= longest; i++)
        fputc('`', f);
}

static void provenance_rows(const run_info_t *ri, const char *rows[][2], int *n,
                            char bufs[][512])
{
    int k = 0;
    snprintf(bufs[0], 512, "%lld", (long long)ri->id);
    snprintf(bufs[1], 512, "%s%s", ri->status, !strcmp(ri->status, "complete") ? ""
             : ri->joined ? " (shards missing or incomplete: see shards)"
             : " (the suite did not finish: only the cases measured so far)");
    snprintf(bufs[2], 512, "%s%s", *ri->commit ? ri->commit : "unknown",
             ri->dirty ? " (dirty tree)" : "");
    snprintf(bufs[3], 512, "%s, %d cores, TSC %.3f GHz", ri->cpu, ri->cores,
             ri->tsc_hz / 1e9);
    snprintf(bufs[4], 512, "%s .. %s", ri->started, *ri->ended ? ri->ended : "?");
    rows[k][0] = "run"; rows[k++][1] = bufs[0];
    rows[k][0] = "status"; rows[k++][1] = bufs[1];
    rows[k][0] = "suite"; rows[k++][1] = ri->suite;
    rows[k][0] = "commit"; rows[k++][1] = bufs[2];
    rows[k][0] = "machine"; rows[k++][1] = bufs[3];
    rows[k][0] = "host"; rows[k++][1] = ri->host;
    rows[k][0] = "kernel"; rows[k++][1] = ri->kernel;
    rows[k][0] = "virtualization"; rows[k++][1] = *ri->virt ? ri->virt : "none";
    rows[k][0] = "compiler"; rows[k++][1] = ri->compiler;
    rows[k][0] = "counter sources"; rows[k++][1] = ri->sources;
    rows[k][0] = "time"; rows[k++][1] = bufs[4];
    if (*ri->shards) {
        rows[k][0] = "shards";
        rows[k++][1] = ri->shards;
    }
    *n = k;
}

/* A click on a column's head sorts its table by that column, numbers by
 * value ("12.5 (3..20)" by its first number), again the other way. */
static const char sort_script[] =
    "<script>\n"
    "document.querySelectorAll('table.data th').forEach(th =>\n"
    " th.addEventListener('click', () => {\n"
    "  const t = th.closest('table'), i = [...th.parentNode.children].indexOf(th);\n"
    "  const up = th.dataset.up !== '1', rows = [...t.rows].slice(1);\n"
    "  const key = r => { const s = r.cells[i].textContent, v = parseFloat(s);\n"
    "                     return isNaN(v) ? [1, s] : [0, v]; };\n"
    "  rows.sort((a, b) => { const x = key(a), y = key(b);\n"
    "    const c = x[0] - y[0] || (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0);\n"
    "    return up ? c : -c; });\n"
    "  th.dataset.up = up ? '1' : '0';\n"
    "  rows.forEach(r => r.parentNode.appendChild(r));\n"
    "}));\n"
    "</script>\n";

int xp_rp_write_html(report_t *r, tb_err_t *err)
{
    FILE *f = xp_rp_open_out(r, "index", ".html", err);
    if (!f)
        return -1;
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
               "<title>tokbench report: run %lld</title>\n<style>\n"
               "body { font-family: sans-serif; max-width: 1040px; margin: 2em auto; }\n"
               "table { border-collapse: collapse; margin: 0.5em 0 2em; }\n"
               "td, th { border: 1px solid #ccc; padding: 2px 8px; text-align: left; }\n"
               "img { max-width: 100%%; }\n.caption { color: #555; }\n"
               "table.data th { cursor: pointer; }\n"
               "</style>\n</head>\n<body>\n<h1>tokbench report: run %lld</h1>\n",
            (long long)r->run, (long long)r->run);
    const char *prov[16][2];
    char bufs[5][512];
    int n;
    provenance_rows(&r->info, prov, &n, bufs);
    fprintf(f, "<table>\n");
    for (int i = 0; i < n; i++) {
        fprintf(f, "<tr><th>");
        html_esc(f, prov[i][0]);
        fprintf(f, "</th><td>");
        html_esc(f, prov[i][1]);
        fprintf(f, "</td></tr>\n");
    }
    fprintf(f, "</table>\n<ul>\n");
    for (int i = 0; i < r->nsec; i++) {
        fprintf(f, "<li><a href=\"#%s\">", r->sec[i].name);
        html_esc(f, r->sec[i].title);
        fprintf(f, "</a></li>\n");
    }
    fprintf(f, "</ul>\n");
    for (int i = 0; i < r->nsec; i++) {
        const section_t *s = &r->sec[i];
        fprintf(f, "<h2 id=\"%s\">", s->name);
        html_esc(f, s->title);
        fprintf(f, "</h2>\n<p class=\"caption\">");
        html_esc(f, s->caption);
        fprintf(f, "</p>\n");
        for (int p = 0; p < s->npanels; p++) {
            char stem[64];
            xp_rp_panel_stem(s, p, stem, sizeof stem);
            fprintf(f, "<p><a href=\"%s.svg\"><img src=\"%s.png\" alt=\"", stem, stem);
            html_esc(f, s->title);
            fprintf(f, "\"></a><br>\n<a href=\"%s.svg\">SVG</a> &middot; "
                       "<a href=\"%s.dat\">data</a></p>\n", stem, s->name);
        }
        if (s->drawn) {
        } else if (!s->table_only) {
            fprintf(f, "<p><em>No plot: %s.</em></p>\n",
                    s->failed ? "gnuplot failed" : NOT_MEASURED);
        }
        if (*s->note) {
            fprintf(f, "<p>");
            html_esc(f, s->note);
            fprintf(f, "</p>\n");
        }
        const table_t *t = &s->tab;
        if (!xp_rp_tab_rows(t))
            continue;
        fprintf(f, "<table class=\"data\">\n<tr>");
        for (int c = 0; c < t->ncols; c++) {
            fprintf(f, "<th>");
            html_esc(f, t->head[c]);
            fprintf(f, "</th>");
        }
        fprintf(f, "</tr>\n");
        for (size_t row = 0; row < xp_rp_tab_rows(t); row++) {
            fprintf(f, "<tr>");
            for (int c = 0; c < t->ncols; c++) {
                const char *cell = t->cells.data[row * (size_t)t->ncols + (size_t)c];
                int code = t->code >> c & 1 && *cell;
                fprintf(f, code ? "<td><code>" : "<td>");
                html_esc(f, cell);
                fprintf(f, code ? "</code></td>" : "</td>");
            }
            fprintf(f, "</tr>\n");
        }
        fprintf(f, "</table>\n");
    }
    fputs(sort_script, f);
    fprintf(f, "</body>\n</html>\n");
    return xp_rp_close_out(r, f, "index.html", err);
}

int xp_rp_write_md(report_t *r, tb_err_t *err)
{
    FILE *f = xp_rp_open_out(r, "index", ".md", err);
    if (!f)
        return -1;
    fprintf(f, "# tokbench report: run %lld\n\n| | |\n| --- | --- |\n", (long long)r->run);
    const char *prov[16][2];
    char bufs[5][512];
    int n;
    provenance_rows(&r->info, prov, &n, bufs);
    for (int i = 0; i < n; i++) {
        fprintf(f, "| ");
        md_esc(f, prov[i][0]);
        fprintf(f, " | ");
        md_esc(f, prov[i][1]);
        fprintf(f, " |\n");
    }
    for (int i = 0; i < r->nsec; i++) {
        const section_t *s = &r->sec[i];
        fprintf(f, "\n## ");
        md_esc(f, s->title);
        fprintf(f, "\n\n");
        md_esc(f, s->caption);
        fprintf(f, "\n\n");
        for (int p = 0; p < s->npanels; p++) {
            char stem[64];
            xp_rp_panel_stem(s, p, stem, sizeof stem);
            fprintf(f, "![%s](%s.png)\n\n[SVG](%s.svg) · [data](%s.dat)\n\n", stem, stem,
                    stem, s->name);
        }
        if (!s->drawn && !s->table_only)
            fprintf(f, "No plot: %s.\n\n", s->failed ? "gnuplot failed" : NOT_MEASURED);
        if (*s->note) {
            md_esc(f, s->note);
            fprintf(f, "\n\n");
        }
        const table_t *t = &s->tab;
        if (!xp_rp_tab_rows(t))
            continue;
        for (int c = 0; c < t->ncols; c++) {
            fprintf(f, "| ");
            md_esc(f, t->head[c]);
            fprintf(f, " ");
        }
        fprintf(f, "|\n");
        for (int c = 0; c < t->ncols; c++)
            fprintf(f, "| --- ");
        fprintf(f, "|\n");
        for (size_t row = 0; row < xp_rp_tab_rows(t); row++) {
            for (int c = 0; c < t->ncols; c++) {
                const char *cell = t->cells.data[row * (size_t)t->ncols + (size_t)c];
                fprintf(f, "| ");
                if (t->code >> c & 1 && *cell)
                    md_code(f, cell);
                else
                    md_esc(f, cell);
                fprintf(f, " ");
            }
            fprintf(f, "|\n");
        }
    }
    return xp_rp_close_out(r, f, "index.md", err);
}
