/*
 * drv_tokenize: encode throughput of tokbench's tokenizer on a corpus.
 *
 * Row: vocabulary (manifest name or path), corpus (manifest name or path).
 * One repetition encodes the whole corpus once; bytes = corpus size, items
 * = tokens produced.  A corpus of kilobytes of varied text is its own input
 * variation: a branch predictor cannot learn it between repetitions.
 *
 * Option reference=hf|hf-official|tiktoken|spm|auto also times the reference
 * implementation on the same corpus, stored with source "wallclock" and
 * the implementation's name so a report can give the ratio:
 *   hf        node scripts/ref/ref.js hf VOCAB --bench N < corpus: the
 *             encode calls alone, timed inside node;
 *   hf-official, tiktoken  the same with ref.js hf-official (Hugging
 *             Face's own binding) or ref.js tiktoken;
 *   spm       Debian's spm_encode --output_format=id, timed around the whole
 *             process (model load included: it has no in-process timer).
 *   auto      the one that matches the vocabulary's format.
 * The references inherit the run's CPU pinning, so both sides run on the
 * same single core.
 * The `conform` experiment shares this setup and repetition; its extra
 * step compares every line's ids with the reference (xp_conform_check)
 * and stores the line and mismatch counts with source "conform"; a case
 * with mismatches fails, naming the command that shows them.  Option
 * reference_vocabulary=SPEC takes the reference ids from another
 * vocabulary (as `conform --ref` does), so a wrong pairing can be shown.
 *
 * Option max_bytes=N measures only the corpus's first N bytes, cut at the
 * last line end before N (the references then read that prefix from a
 * temporary file), so that a suite over large corpora stays short.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../base/file.h"
#include "../../tok/tokenizer.h"
#include "../cli/cli.h"
#include "../refs/conform.h"
#include "driver.h"
#include "../refs/reference.h"
#include "setup.h"

typedef struct {
    tok_tokenizer_t *tok;
    uint8_t *text;
    size_t len;
    tok_ids_t ids;
    char vocab_path[PATH_MAX], corpus_path[PATH_MAX];
    char prefix_path[PATH_MAX]; /* temporary file of a max_bytes prefix */
    char ref[32];               /* the reference to time, or "none" */
    unsigned reps;
} tokenize_t;

static void tokenize_teardown(void *state)
{
    tokenize_t *s = state;
    if (!s)
        return;
    if (s->prefix_path[0])
        unlink(s->prefix_path);
    tok_free(s->tok);
    free(s->text);
    free(s->ids.data);
    free(s);
}

static int resolve_input(xp_env_t *env, const char *role, const char *spec,
                         char *path, tb_err_t *err)
{
    if (!spec || !*spec)
        return tb_fail(err, "field '%s' is empty", role);
    if (xp_resolve_spec(spec, path, PATH_MAX, err) ||
        xp_env_input(env, role, path, err))
        return tb_wrap(err, "%s '%s'", role, spec);
    return 0;
}

static int choose_reference(tokenize_t *s, const xp_row_t *row, tb_err_t *err);

/* Cuts the text to option max_bytes (at a line end) and writes the prefix
 * where the reference implementations can read it. */
static int apply_max_bytes(tokenize_t *s, const xp_row_t *row, tb_err_t *err)
{
    uint64_t max;
    if (xp_row_uint(row, "max_bytes", 0, 1, UINT64_MAX, &max, err))
        return -1;
    if (!max || s->len <= max)
        return 0;
    size_t cut = (size_t)max;
    while (cut > 0 && s->text[cut - 1] != '\n')
        cut--;
    s->len = cut ? cut : (size_t)max;
    snprintf(s->prefix_path, sizeof s->prefix_path, "/tmp/tokbench-prefix-XXXXXX");
    int fd = mkstemp(s->prefix_path);
    int ok = fd >= 0 && write(fd, s->text, s->len) == (ssize_t)s->len;
    if (fd >= 0)
        close(fd);
    if (!ok)
        return tb_fail(err, "cannot write the corpus prefix to /tmp: %s", strerror(errno));
    snprintf(s->corpus_path, sizeof s->corpus_path, "%s", s->prefix_path);
    return 0;
}

static int tokenize_setup(const xp_row_t *row, xp_env_t *env, void **state,
                          tb_err_t *err)
{
    tokenize_t *s = calloc(1, sizeof *s);
    if (!s)
        return tb_fail(err, "out of memory");
    int rc = -1;
    if (resolve_input(env, "vocabulary", row->vocab, s->vocab_path, err) ||
        resolve_input(env, "corpus", row->corpus, s->corpus_path, err))
        goto out;
    if (!(s->tok = tok_load(s->vocab_path, err)))
        goto out;
    if (tb_read_file(s->corpus_path, &s->text, &s->len, err))
        goto out;
    if (apply_max_bytes(s, row, err) || choose_reference(s, row, err))
        goto out;
    s->reps = row->reps ? row->reps : xp_driver_tokenize.default_reps;
    rc = 0;
out:
    if (rc)
        tokenize_teardown(s);
    else
        *state = s;
    return rc;
}

static int tokenize_rep(void *state, unsigned rep, xp_qty_t *q, tb_err_t *err)
{
    (void)rep;
    tokenize_t *s = state;
    s->ids.len = 0;
    if (tok_encode(s->tok, s->text, s->len, &s->ids, err))
        return tb_wrap(err, "encoding %s", s->corpus_path);
    uint64_t h = 0;
    for (size_t i = 0; i < s->ids.len; i++)
        h = h * 31 + s->ids.data[i];
    q->bytes = s->len;
    q->items = s->ids.len;
    q->sink ^= h;
    return 0;
}

static int record_wall(xp_env_t *env, const char *impl, unsigned rep,
                       double seconds, uint64_t bytes, tb_err_t *err)
{
    xp_meas_t m = {.rep = rep, .value = seconds * 1e9, .bytes = bytes};
    snprintf(m.source, sizeof m.source, "wallclock");
    snprintf(m.impl, sizeof m.impl, "%s", impl);
    snprintf(m.metric, sizeof m.metric, "ns");
    return xp_env_record(env, &m, err);
}

/* ref.js --bench prints {"bytes": B, "seconds": [t1, ...]}. */
static int bench_refjs(tokenize_t *s, const char *kind, xp_env_t *env, tb_err_t *err)
{
    const char *root = xp_data_root(err);
    if (!root)
        return -1;
    char script[PATH_MAX], reps[16];
    snprintf(script, sizeof script, "%s/scripts/ref/ref.js", root);
    if (access(script, R_OK))
        return tb_fail(err, "reference %s: %s is missing", kind, script);
    snprintf(reps, sizeof reps, "%u", s->reps);
    char *argv[] = {"node", script, (char *)kind, s->vocab_path, "--bench", reps, NULL};
    tb_buf_t out = {0};
    double wall;
    int rc = xp_run_capture(argv, s->corpus_path, &out, &wall, err);
    if (rc)
        tb_wrap(err, "reference %s", kind);
    json_error_t jerr;
    json_t *j = rc ? NULL : json_loads((char *)out.data, 0, &jerr);
    json_t *secs = j ? json_object_get(j, "seconds") : NULL;
    if (!rc && !json_is_array(secs))
        rc = tb_fail(err, "reference %s: ref.js printed no \"seconds\" array: %.200s",
                     kind, out.data ? (char *)out.data : "");
    json_int_t bytes = j ? json_integer_value(json_object_get(j, "bytes")) : 0;
    char impl[32];
    snprintf(impl, sizeof impl, "ref.js %s", kind);
    for (size_t i = 0; !rc && i < json_array_size(secs); i++)
        rc = record_wall(env, impl, (unsigned)i,
                         json_number_value(json_array_get(secs, i)),
                         bytes > 0 ? (uint64_t)bytes : s->len, err);
    json_decref(j);
    tb_buf_free(&out);
    return rc;
}

static int bench_spm(tokenize_t *s, xp_env_t *env, tb_err_t *err)
{
    char model[PATH_MAX + 16];
    snprintf(model, sizeof model, "--model=%s", s->vocab_path);
    char *argv[] = {"spm_encode", model, "--output_format=id", NULL};
    int rc = 0;
    for (unsigned i = 0; !rc && i < s->reps; i++) {
        if (env->stop && *env->stop)
            break;
        tb_buf_t out = {0};
        double wall;
        rc = xp_run_capture(argv, s->corpus_path, &out, &wall, err);
        tb_buf_free(&out);
        if (!rc)
            rc = record_wall(env, "spm_encode process", i, wall, s->len, err);
    }
    return rc ? tb_wrap(err, "reference spm") : 0;
}

/* Resolves option reference= in setup, so a bad value fails the case
 * before anything is measured. */
static int choose_reference(tokenize_t *s, const xp_row_t *row, tb_err_t *err)
{
    char *ref = s->ref;
    if (!xp_row_option(row, "reference", ref, sizeof s->ref))
        snprintf(ref, sizeof s->ref, "none");
    if (!strcmp(ref, "auto")) {
        tok_format_t f = tok_format(s->tok);
        snprintf(ref, sizeof s->ref, "%s", f == TOK_FORMAT_HF_JSON    ? "hf"
                                          : f == TOK_FORMAT_TIKTOKEN ? "tiktoken"
                                          : f == TOK_FORMAT_SPM_MODEL ? "spm"
                                                                     : "none");
    }
    if (strcmp(ref, "hf") && strcmp(ref, "hf-official") && strcmp(ref, "tiktoken") &&
        strcmp(ref, "spm") && strcmp(ref, "none"))
        return tb_fail(err, "option reference=%s: not hf, hf-official, tiktoken, "
                            "spm, auto or none", ref);
    return 0;
}

static int tokenize_extra(void *state, const xp_row_t *row, xp_env_t *env,
                          tb_err_t *err)
{
    (void)row;
    tokenize_t *s = state;
    if (!strcmp(s->ref, "hf") || !strcmp(s->ref, "hf-official") ||
        !strcmp(s->ref, "tiktoken"))
        return bench_refjs(s, s->ref, env, err);
    if (!strcmp(s->ref, "spm"))
        return bench_spm(s, env, err);
    return 0;
}

const xp_driver_t xp_driver_tokenize = {
    .name = "tokenize",
    .summary = "encode throughput on a corpus (reference=hf|hf-official|tiktoken|spm|auto)",
    .setup = tokenize_setup,
    .rep = tokenize_rep,
    .extra = tokenize_extra,
    .teardown = tokenize_teardown,
    .default_reps = 5,
};

static int record_count(xp_env_t *env, const char *metric, long value,
                        tb_err_t *err)
{
    xp_meas_t m = {.value = (double)value};
    snprintf(m.source, sizeof m.source, "conform");
    snprintf(m.impl, sizeof m.impl, "tokbench");
    snprintf(m.metric, sizeof m.metric, "%s", metric);
    return xp_env_record(env, &m, err);
}

static int conform_extra(void *state, const xp_row_t *row, xp_env_t *env,
                         tb_err_t *err)
{
    tokenize_t *s = state;
    xp_conform_stats_t st;
    char spec[PATH_MAX], ref_path[PATH_MAX];
    int other = xp_row_option(row, "reference_vocabulary", spec, sizeof spec) != NULL;
    if (other && (xp_resolve_spec(spec, ref_path, sizeof ref_path, err) ||
                  xp_env_input(env, "reference", ref_path, err)))
        return -1;
    if (xp_conform_check(s->vocab_path, other ? ref_path : NULL,
                         s->corpus_path, &st, err) ||
        record_count(env, "lines", st.lines, err) ||
        record_count(env, "mismatch_lines", st.mismatches, err) ||
        record_count(env, "skipped_lines", st.skipped, err))
        return -1;
    if (st.mismatches)
        return tb_fail(err, "%ld of %ld lines differ from the reference: see "
                            "'tokbench conform %s --corpus %s'",
                       st.mismatches, st.lines, row->vocab, row->corpus);
    return 0;
}

const xp_driver_t xp_driver_conform = {
    .name = "conform",
    .summary = "ids against the reference on every line of a corpus",
    .setup = tokenize_setup,
    .rep = tokenize_rep,
    .extra = conform_extra,
    .teardown = tokenize_teardown,
    .default_reps = 1,
};
