/*
 * plot: gnuplot for the report's sections: the templates' variables,
 * the drawing of NAME.png and NAME.svg from NAME.dat, and the grid data
 * of the grouped plots.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report.h"

extern char **environ;

/* Appends name='value' to a gnuplot -e line; single quotes are doubled,
 * the only escape single-quoted gnuplot strings have. */
void xp_rp_gp_str(tb_buf_t *b, const char *name, const char *value)
{
    tb_buf_put(b, name, strlen(name));
    tb_buf_put(b, "='", 2);
    for (const char *p = value; *p; p++) {
        if (*p == '\'')
            tb_buf_putc(b, '\'');
        tb_buf_putc(b, *p == '\n' ? ' ' : (uint8_t)*p);
    }
    tb_buf_put(b, "'; ", 3);
}

void xp_rp_gp_num(tb_buf_t *b, const char *name, double v)
{
    char tmp[96];
    if (isfinite(v))
        snprintf(tmp, sizeof tmp, "%s=%.17g; ", name, v);
    else
        snprintf(tmp, sizeof tmp, "%s=NaN; ", name);
    tb_buf_put(b, tmp, strlen(tmp));
}

/* Runs gnuplot with its messages appended to the log; the exit status, or
 * -1 with err set when it cannot be started. */
int xp_rp_spawn_gnuplot(const char *log, char *const argv[], tb_err_t *err)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc == ENOENT)
        return tb_fail(err, "gnuplot is not installed: the report needs it "
                       "(Debian package gnuplot-nox; `make setup` installs it)");
    if (rc)
        return tb_fail(err, "cannot start gnuplot: %s", strerror(rc));
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return tb_fail(err, "waiting for gnuplot: %s", strerror(errno));
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static int file_size_ok(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && sb.st_size > 0;
}

/* The file stem of a section's panel: NAME for the first, NAME-pN after. */
void xp_rp_panel_stem(const section_t *s, int panel, char *buf, size_t n)
{
    if (panel)
        snprintf(buf, n, "%s-p%d", s->name, panel + 1);
    else
        snprintf(buf, n, "%s", s->name);
}

/* Removes what an earlier report drew for one panel of a section. */
void xp_rp_remove_panel(report_t *r, const section_t *s, int panel)
{
    static const char *const ext[] = {".png", ".svg"};
    char stem[64];
    xp_rp_panel_stem(s, panel, stem, sizeof stem);
    for (int i = 0; i < 2; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s%s", r->out, stem, ext[i]);
        unlink(path);
    }
}

/* Removes what an earlier report left for a plot this one does not draw. */
void xp_rp_remove_plot(report_t *r, const section_t *s)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.dat", r->out, s->name);
    unlink(path);
    for (int p = 0; p < XP_RP_MAXPANELS; p++)
        xp_rp_remove_panel(r, s, p);
}

/* A section with nothing to draw: "Not measured: " and why (printf-style)
 * end its note, and what an earlier report drew for it goes.  Returns 0,
 * for `return xp_rp_not_measured(...)`. */
int xp_rp_not_measured(report_t *r, section_t *s, const char *why, ...)
{
    size_t used = strlen(s->note);
    snprintf(s->note + used, sizeof s->note - used, "%sNot measured: ", used ? "  " : "");
    used = strlen(s->note);
    va_list ap;
    va_start(ap, why);
    vsnprintf(s->note + used, sizeof s->note - used, why, ap);
    va_end(ap);
    xp_rp_remove_plot(r, s);
    return 0;
}

/* Where the figures come from, as csource and, when it is too long for
 * one line of the title, csource2 (cut at the last space that fits). */
static void caption_lines(tb_buf_t *e, const char *src)
{
    enum { WIDTH = 140 };
    char first[WIDTH + 1];
    size_t n = strlen(src);
    if (n <= WIDTH) {
        xp_rp_gp_str(e, "csource", src);
        xp_rp_gp_str(e, "csource2", "");
        return;
    }
    size_t cut = WIDTH;
    while (cut > 0 && src[cut] != ' ')
        cut--;
    if (!cut)
        cut = WIDTH;
    snprintf(first, sizeof first, "%.*s", (int)cut, src);
    xp_rp_gp_str(e, "csource", first);
    xp_rp_gp_str(e, "csource2", src + cut + (src[cut] == ' '));
}

/* Draws one panel of section s from NAME.dat with TEMPLATE.gp into its
 * stem's .png and .svg; `vars` holds the template's own variables.  0 when
 * drawn, 1 when gnuplot failed (noted on the page, counted), -1 on error. */
static int draw_panel(report_t *r, section_t *s, int panel, const char *tmpl,
                      const char *title, const char *ylab, const tb_buf_t *vars,
                      tb_err_t *err)
{
    char stem[64], dat[4200], png[4200], svg[4200], gp[4200];
    xp_rp_panel_stem(s, panel, stem, sizeof stem);
    snprintf(dat, sizeof dat, "%s/%s.dat", r->out, s->name);
    snprintf(png, sizeof png, "%s/%s.png", r->out, stem);
    snprintf(svg, sizeof svg, "%s/%s.svg", r->out, stem);
    snprintf(gp, sizeof gp, "%s/%s.gp", r->plots, tmpl);
    unlink(png);
    unlink(svg);
    tb_buf_t e = {0};
    xp_rp_gp_str(&e, "plots", r->plots);
    xp_rp_gp_str(&e, "datafile", dat);
    xp_rp_gp_str(&e, "png", png);
    xp_rp_gp_str(&e, "svg", svg);
    xp_rp_gp_str(&e, "ptitle", title);
    /* the run on one line of the title, where its figures come from on
     * the next: long CPU names would not fit on one */
    char run_part[1024];
    snprintf(run_part, sizeof run_part, "%s", s->caption);
    char *cut = strstr(run_part, "; ");
    if (cut)
        *cut = 0;
    xp_rp_gp_str(&e, "caption", run_part);
    caption_lines(&e, cut ? s->caption + (cut - run_part) + 2 : "");
    xp_rp_gp_str(&e, "ylab", ylab);
    if (vars->len)
        tb_buf_put(&e, vars->data, vars->len);
    if (tb_buf_putc(&e, 0)) {
        tb_buf_free(&e);
        return tb_fail(err, "out of memory");
    }
    char *argv[] = {"gnuplot", "-e", (char *)e.data, gp, NULL};
    int rc = xp_rp_spawn_gnuplot(r->log, argv, err);
    tb_buf_free(&e);
    if (rc < 0)
        return -1;
    if (rc == 0 && file_size_ok(png) && file_size_ok(svg))
        return 0;
    r->failed_plots++;
    s->failed = 1;
    snprintf(s->note + strlen(s->note), sizeof s->note - strlen(s->note),
             "%sgnuplot could not draw %s from %s (exit %d; see %s).",
             *s->note ? " " : "", stem, gp, rc, r->log);
    return 1;
}

int xp_rp_draw(report_t *r, section_t *s, const char *tmpl, const char *ylab,
               tb_buf_t *vars, tb_err_t *err)
{
    int rc = draw_panel(r, s, 0, tmpl, s->title, ylab, vars, err);
    s->drawn = rc == 0;
    s->npanels = rc == 0;
    return rc < 0 ? -1 : 0;
}

int xp_rp_draw_panels(report_t *r, section_t *s, const char *tmpl, int nrows,
                      const char *ylab, tb_buf_t *vars, tb_err_t *err)
{
    int npanels = (nrows + XP_RP_GROUPS - 1) / XP_RP_GROUPS, rc = 0;
    s->npanels = 0;
    for (int p = 0; p < npanels && !rc; p++) {
        tb_buf_t v = {0};
        char title[200];
        /* one panel spans its groups; more keep twelve slots each */
        int first = p * XP_RP_GROUPS;
        int last = npanels > 1 ? first + XP_RP_GROUPS - 1 : nrows - 1;
        if (npanels > 1)
            snprintf(title, sizeof title, "%s (groups %d-%d of %d)", s->title, first + 1,
                     last < nrows ? last + 1 : nrows, nrows);
        else
            snprintf(title, sizeof title, "%s", s->title);
        xp_rp_gp_num(&v, "first", first);
        xp_rp_gp_num(&v, "last", last);
        if (vars->len)
            tb_buf_put(&v, vars->data, vars->len);
        rc = draw_panel(r, s, p, tmpl, title, ylab, &v, err);
        tb_buf_free(&v);
        s->npanels += rc == 0;
    }
    s->drawn = s->npanels == npanels && npanels > 0;
    for (int p = npanels; p < XP_RP_MAXPANELS; p++)
        xp_rp_remove_panel(r, s, p);
    return rc < 0 ? -1 : 0;
}

void xp_rp_dat_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, " %.6g", v);
    else
        fprintf(f, " ?");
}

int xp_rp_name_index(names_t *n, const char *s)
{
    for (int i = 0; i < n->n; i++)
        if (!strcmp(n->name[i], s))
            return i;
    if (n->n == MAXNAMES)
        return -1;
    snprintf(n->name[n->n], sizeof n->name[0], "%s", s);
    return n->n++;
}

void xp_rp_grid_clear(grid_t g)
{
    for (int i = 0; i < MAXNAMES; i++)
        for (int l = 0; l < MAXNAMES; l++)
            g[i][l] = NAN;
}

/* A rows x columns grid as grouped.gp's data: '?' where missing. */
int xp_rp_write_grid(report_t *r, const char *name, const char *corner, const names_t *rows,
                     const names_t *cols, grid_t v, tb_err_t *err)
{
    FILE *f = xp_rp_open_out(r, name, ".dat", err);
    if (!f)
        return -1;
    fprintf(f, "%s", corner);
    for (int l = 0; l < cols->n; l++) {
        char q[80];
        xp_rp_dat_label(q, sizeof q, cols->name[l]);
        fprintf(f, " \"%s\"", q);
    }
    fprintf(f, "\n");
    for (int i = 0; i < rows->n; i++) {
        char q[80];
        xp_rp_dat_label(q, sizeof q, rows->name[i]);
        fprintf(f, "\"%s\"", q);
        for (int l = 0; l < cols->n; l++)
            if (isfinite(v[i][l]))
                fprintf(f, " %.6g", v[i][l]);
            else
                fprintf(f, " ?");
        fprintf(f, "\n");
    }
    return xp_rp_close_out(r, f, name, err);
}

/* The smallest and largest finite values of a grid, for xp_rp_spread(). */
static void grid_range(grid_t v, int nrows, int ncols, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = 0;
    for (int i = 0; i < nrows; i++)
        for (int l = 0; l < ncols; l++)
            if (isfinite(v[i][l])) {
                *lo = fmin(*lo, v[i][l]);
                *hi = fmax(*hi, v[i][l]);
            }
}

/* Draws a grid with grouped.gp: its rows are the groups, its first nser
 * columns the series, the next nmarks the reference marks; on a log scale
 * where the values span orders of magnitude. */
int xp_rp_draw_grid(report_t *r, section_t *s, const char *ylab, int nser, int nmarks,
                    grid_t v, int nrows, tb_buf_t *vars, tb_err_t *err)
{
    double lo, hi;
    grid_range(v, nrows, nser + nmarks, &lo, &hi);
    char label[160];
    snprintf(label, sizeof label, "%s%s", ylab, xp_rp_spread(lo, hi) ? " (log scale)" : "");
    tb_buf_t b = {0};
    xp_rp_gp_num(&b, "logy", xp_rp_spread(lo, hi));
    xp_rp_gp_num(&b, "nser", nser);
    xp_rp_gp_num(&b, "nmarks", nmarks);
    if (vars && vars->len)
        tb_buf_put(&b, vars->data, vars->len);
    int rc = xp_rp_draw_panels(r, s, "grouped", nrows, label, &b, err);
    tb_buf_free(&b);
    return rc;
}
