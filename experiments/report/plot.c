/*
 * plot: gnuplot for the report's sections: the templates' variables,
 * the drawing of NAME.png and NAME.svg from NAME.dat, and the grid data
 * of the clustered plots.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
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

/* Draws section s from NAME.dat with TEMPLATE.gp; `vars` holds the
 * template's own variables.  A plot that fails is noted on the page and
 * counted, and the report goes on. */
int xp_rp_draw(report_t *r, section_t *s, const char *tmpl, const char *ylab,
               tb_buf_t *vars, tb_err_t *err)
{
    char dat[4200], png[4200], svg[4200], gp[4200];
    snprintf(dat, sizeof dat, "%s/%s.dat", r->out, s->name);
    snprintf(png, sizeof png, "%s/%s.png", r->out, s->name);
    snprintf(svg, sizeof svg, "%s/%s.svg", r->out, s->name);
    snprintf(gp, sizeof gp, "%s/%s.gp", r->plots, tmpl);
    unlink(png);
    unlink(svg);
    tb_buf_t e = {0};
    xp_rp_gp_str(&e, "plots", r->plots);
    xp_rp_gp_str(&e, "datafile", dat);
    xp_rp_gp_str(&e, "png", png);
    xp_rp_gp_str(&e, "svg", svg);
    xp_rp_gp_str(&e, "ptitle", s->title);
    /* the run on one line of the title, where its figures come from on
     * the next: long CPU names would not fit on one */
    char run_part[1024];
    snprintf(run_part, sizeof run_part, "%s", s->caption);
    char *cut = strstr(run_part, "; ");
    if (cut)
        *cut = 0;
    xp_rp_gp_str(&e, "caption", run_part);
    xp_rp_gp_str(&e, "csource", cut ? s->caption + (cut - run_part) + 2 : "");
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
    if (rc == 0 && file_size_ok(png) && file_size_ok(svg)) {
        s->drawn = 1;
        return 0;
    }
    r->failed_plots++;
    s->failed = 1;
    snprintf(s->note + strlen(s->note), sizeof s->note - strlen(s->note),
             "%sgnuplot could not draw this plot from %s (exit %d; see %s).",
             *s->note ? " " : "", gp, rc, r->log);
    return 0;
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

/* A rows x columns grid as clustered-bar data: '?' where missing. */
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

/* Draws a grid with the clustered template, on a log scale where it
 * spans orders of magnitude. */
int xp_rp_draw_grid(report_t *r, section_t *s, const char *ylab, int ncols, grid_t v,
                    int nrows, tb_err_t *err)
{
    double lo, hi;
    grid_range(v, nrows, ncols, &lo, &hi);
    char label[160];
    snprintf(label, sizeof label, "%s%s", ylab, xp_rp_spread(lo, hi) ? " (log scale)" : "");
    tb_buf_t b = {0};
    xp_rp_gp_num(&b, "ncols", ncols + 1);
    xp_rp_gp_num(&b, "logy", xp_rp_spread(lo, hi));
    int rc = xp_rp_draw(r, s, "clustered", label, &b, err);
    tb_buf_free(&b);
    return rc;
}
