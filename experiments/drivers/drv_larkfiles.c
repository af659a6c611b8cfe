/*
 * drv_larkfiles: Lark's own grammar files against python3-lark as an
 * experiment (experiments/refs/larkfiles.h, which tests/test_lark.c runs
 * too): each file loaded here or refused (and then Lark must refuse it
 * too), a loaded one's strings judged here and by Lark.  The strings are
 * walks of the grammar automaton (xp_lark_walk, so the files whose
 * sentences need a post-lexer's tokens get some too), each followed by a
 * one-byte mutant, and Lark's sample texts with mutants of them.
 *
 * Row: option strings=N (walks per file, default 40; seeded, so every run
 * judges the same strings).  Needs python3-lark and python-lark-doc; the
 * case fails saying so without them.
 *
 * Stored: one outcome per file, impl "lark files", item the file's path,
 * outcome "agree", "explained" (some verdicts differ, each for the file's
 * cause), "differ", "refused, by Lark too" or "refused here only", detail
 * the counts or the refusal; and, source "static", the counts files,
 * loaded, ref_refuses (files Lark refuses), refused_here (files Lark
 * loads that tokbench refuses), strings, agree, explained, differ.  A
 * verdict that differs for no known cause fails the case once everything
 * is stored.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/file.h"
#include "../cli/cli.h"
#include "../refs/larkfiles.h"
#include "driver.h"
#include "setup.h"

#define WALK_LEN 200 /* bytes a walk draws at most before it heads for an end */

enum { FILES, LOADED, REF_REFUSES, REFUSED_HERE, STRINGS, AGREE, EXPLAINED, DIFFER, NCOUNTS };
static const char *const count_names[NCOUNTS] = {"files",   "loaded",    "ref_refuses",
                                                 "refused_here", "strings", "agree",
                                                 "explained", "differ"};

typedef struct {
    char root[4096];
    unsigned walks;
    uint64_t n[NCOUNTS];
    xp_env_t *env;
} larkfiles_t;

/* The file's path as the process reads it: under root unless absolute. */
static void file_path(const larkfiles_t *s, const char *path, char *out, size_t size)
{
    snprintf(out, size, path[0] == '/' ? "%.0s%s" : "%s/%s", s->root, path);
}

static int larkfiles_setup(const xp_row_t *row, xp_env_t *env, void **state, tb_err_t *err)
{
    uint64_t walks = 0;
    const char *root = xp_data_root(err);
    if (!root || xp_row_uint(row, "strings", 40, 1, 10000, &walks, err))
        return -1;
    if (!xp_lark_available())
        return tb_fail(err, "no python3-lark or python-lark-doc (make setup installs them)");
    larkfiles_t *s = calloc(1, sizeof *s);
    if (!s)
        return tb_fail(err, "out of memory");
    snprintf(s->root, sizeof s->root, "%s", root);
    s->walks = (unsigned)walks;
    for (size_t i = 0; i < xp_lark_nfiles; i++) {
        char path[4200];
        file_path(s, xp_lark_files[i].path, path, sizeof path);
        if (xp_env_input(env, "grammar", path, err)) {
            free(s);
            return -1;
        }
    }
    *state = s;
    return 0;
}

static void larkfiles_teardown(void *state)
{
    free(state);
}

/* The strings of g to judge into texts[0..*n) (a walk, then a mutant of
 * it, walks times; then the sample and mutants of it). */
static int make_texts(larkfiles_t *s, gr_gram_t *g, const char *sample, tb_buf_t *texts,
                      size_t max, uint64_t *rng, size_t *n, tb_err_t *err)
{
    *n = 0;
    for (unsigned w = 0; w < s->walks && *n + 1 < max; w++, *n += 2) {
        texts[*n].len = texts[*n + 1].len = 0;
        if (xp_lark_walk(g, rng, WALK_LEN, &texts[*n], err) < 0)
            return -1;
        if (tb_buf_put(&texts[*n + 1], texts[*n].data, texts[*n].len) ||
            xp_lark_mutate(&texts[*n + 1], rng))
            return tb_fail(err, "out of memory");
    }
    if (!sample)
        return 0;
    char path[4200];
    uint8_t *data;
    size_t len;
    file_path(s, sample, path, sizeof path);
    if (tb_read_file(path, &data, &len, err))
        return -1;
    int rc = 0;
    for (size_t i = 0; !rc && *n < max && i <= s->walks; i++, ++*n) {
        texts[*n].len = 0;
        if (tb_buf_put(&texts[*n], data, len) || (i && xp_lark_mutate(&texts[*n], rng)))
            rc = tb_fail(err, "out of memory");
    }
    free(data);
    return rc;
}

/* One file: its outcome and counts. */
static int one_file(larkfiles_t *s, const xp_lark_file_t *f, tb_buf_t *texts, int *want,
                    size_t max, uint64_t *rng, tb_err_t *err)
{
    char path[4200];
    file_path(s, f->path, path, sizeof path);
    xp_outcome_t o = {0};
    snprintf(o.impl, sizeof o.impl, "lark files");
    snprintf(o.item, sizeof o.item, "%s", f->path);
    s->n[FILES]++;
    gr_cfg_t cfg;
    tb_err_t here;
    if (xp_lark_load(&cfg, path, f->start, &here)) {
        char msg[400];
        int lr = xp_lark_refuses(s->root, path, f->start, msg, sizeof msg, err);
        if (lr < 0)
            return -1;
        s->n[REF_REFUSES] += (uint64_t)lr;
        s->n[REFUSED_HERE] += (uint64_t)!lr;
        snprintf(o.outcome, sizeof o.outcome, "%s", lr ? "refused, by Lark too"
                                                       : "refused here only");
        snprintf(o.detail, sizeof o.detail, "here: %.240s; Lark: %.240s", here.msg,
                 lr ? msg + 2 : "loads it");
        return xp_env_outcome(s->env, &o, err);
    }
    gr_gram_t *g = gr_gram_new(&cfg, NULL, err);
    if (!g)
        return -1;
    s->n[LOADED]++;
    xp_lark_judged_t j;
    size_t n;
    int rc = make_texts(s, g, f->sample, texts, max, rng, &n, err) ||
             xp_lark_verdicts(s->root, path, f->start, texts, n, want, err) ||
             xp_lark_judge(g, f->path, texts, n, want, &j, err);
    gr_gram_free(g);
    if (rc)
        return -1;
    s->n[STRINGS] += n;
    s->n[AGREE] += n - j.caused - j.differ;
    s->n[EXPLAINED] += j.caused;
    s->n[DIFFER] += j.differ;
    o.tokens = n - j.caused - j.differ; /* strings with Lark's verdict */
    snprintf(o.outcome, sizeof o.outcome, "%s",
             j.differ ? "differ" : j.caused ? "explained" : "agree");
    snprintf(o.detail, sizeof o.detail, "%zu of %zu strings with Lark's verdict (%zu "
             "sentences here)%s%s%s%s", n - j.caused - j.differ, n, j.sentences,
             j.caused ? "; for known causes, the first: " : "", j.caused ? j.cause : "",
             j.differ ? "; first differing " : "", j.differ ? j.first : "");
    return xp_env_outcome(s->env, &o, err);
}

static int larkfiles_extra(void *state, const xp_row_t *row, xp_env_t *env, tb_err_t *err)
{
    (void)row;
    larkfiles_t *s = state;
    s->env = env;
    size_t max = 3 * (size_t)s->walks + 1;
    tb_buf_t *texts = calloc(max, sizeof *texts);
    int *want = calloc(max, sizeof *want);
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    int rc = texts && want ? 0 : tb_fail(err, "out of memory");
    for (size_t i = 0; !rc && i < xp_lark_nfiles; i++)
        rc = one_file(s, &xp_lark_files[i], texts, want, max, &rng, err);
    for (size_t k = 0; texts && k < max; k++)
        tb_buf_free(&texts[k]);
    free(texts);
    free(want);
    for (int i = 0; !rc && i < NCOUNTS; i++) {
        xp_meas_t m = {.value = (double)s->n[i], .items = s->n[i]};
        snprintf(m.source, sizeof m.source, "static");
        snprintf(m.impl, sizeof m.impl, "tokbench");
        snprintf(m.metric, sizeof m.metric, "%s", count_names[i]);
        rc = xp_env_record(env, &m, err);
    }
    if (!rc && (s->n[DIFFER] || s->n[REFUSED_HERE]))
        rc = tb_fail(err, "%llu verdicts differ from Lark's for no known cause, %llu files "
                     "Lark loads are refused here (their rows say which)",
                     (unsigned long long)s->n[DIFFER], (unsigned long long)s->n[REFUSED_HERE]);
    return rc;
}

const xp_driver_t xp_driver_larkfiles = {
    .name = "larkfiles",
    .summary = "Lark's own grammar files against python3-lark: each loaded or refused as Lark "
               "does, walks of its automaton and mutants judged by both (strings=N)",
    .setup = larkfiles_setup,
    .extra = larkfiles_extra,
    .teardown = larkfiles_teardown,
    .default_reps = 1,
};
