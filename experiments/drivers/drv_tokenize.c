/*
 * drv_tokenize: encode throughput of tokbench's tokenizer on a corpus,
 * beside the reference implementations on the same pieces of it.
 *
 * Row: vocabulary (manifest name or path), corpus (manifest name or path).
 * The corpus is cut into pieces (option piece=B, default 65536: each piece
 * ends at the last line end within B bytes; a longer line is a piece of its
 * own), and each piece is one encode call, as a runtime encodes documents
 * or requests.  A pass encodes every piece once, one after another on one
 * thread; bytes = corpus size, items = tokens produced.  A corpus of
 * kilobytes of varied text is its own input variation: a branch predictor
 * cannot learn it between repetitions.
 *
 * Two figures per engine, because a tokenizer with a word cache is much
 * faster once it has seen the text's words:
 *   first (metric first_ns, wall clock): a pass with a fresh state (an
 *     empty word cache), repeated reps times, each with a new one;
 *   warm (metric ns): tokbench's repetitions under the runner's sources
 *     (TSC, PAPI), one state kept across them after the warm-up passes;
 *     a reference's warm passes on the tokenizer of its last first pass.
 *
 * Option reference=hf|hf-official|tiktoken|spm|auto also times the reference
 * implementation on the same pieces, stored with source "wallclock" and
 * the implementation's name so a report can give the ratio:
 *   hf        node scripts/ref/ref.js hf VOCAB --bench N --piece B < corpus:
 *             the encode calls alone, timed inside node, each first pass
 *             with a tokenizer loaded afresh (load not timed);
 *   hf-official, tiktoken  the same with ref.js hf-official (Hugging
 *             Face's own binding) or ref.js tiktoken;
 *   spm       SentencePiece in this process (libsentencepiece, through
 *             ext/spm_glue.cc), a fresh processor per first pass; a binary
 *             built without the glue times Debian's spm_encode
 *             --output_format=id as a process instead (model load and line
 *             reading included, impl "spm_encode process+load", warm only);
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
#include "ext/ext.h"
#include "setup.h"

/* SentencePiece in process is in build/tokbench only (ext.h). */
#pragma weak xp_ext_spm_load
#pragma weak xp_ext_spm_free
#pragma weak xp_ext_spm_encode

#define DEFAULT_PIECE 65536

/* What the passes timed here computed, kept so it cannot be optimized away. */
static volatile uint64_t timed_sink;

typedef struct {
    size_t off, len;
} piece_t;

typedef struct {
    tok_tokenizer_t *tok;
    tok_state_t *st;            /* the warm passes' state */
    uint8_t *text;
    size_t len;
    TB_VEC(piece_t) pieces;
    uint64_t piece_max;         /* option piece= */
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
    tok_state_free(s->st);
    tok_free(s->tok);
    free(s->text);
    free(s->pieces.data);
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

/* Cuts the text into pieces of at most s->piece_max bytes at line ends
 * (ref.js cuts them the same way, and says how many it made). */
static int cut_pieces(tokenize_t *s, tb_err_t *err)
{
    for (size_t start = 0; start < s->len;) {
        size_t end = s->len - start > s->piece_max ? start + s->piece_max : s->len;
        if (end < s->len) {
            size_t k = end;
            while (k > start && s->text[k - 1] != '\n')
                k--;
            if (k > start) {
                end = k;
            } else { /* a line longer than a piece: the whole line */
                const uint8_t *nl = memchr(s->text + end, '\n', s->len - end);
                end = nl ? (size_t)(nl - s->text) + 1 : s->len;
            }
        }
        if (tb_vec_push(&s->pieces, ((piece_t){start, end - start})))
            return tb_fail(err, "out of memory for the corpus's pieces");
        start = end;
    }
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
    if (apply_max_bytes(s, row, err) || choose_reference(s, row, err) ||
        xp_row_uint(row, "piece", DEFAULT_PIECE, 1, UINT32_MAX, &s->piece_max, err) ||
        cut_pieces(s, err))
        goto out;
    if (!(s->st = tok_state_new(s->tok))) {
        tb_fail(err, "out of memory for an encoding state");
        goto out;
    }
    s->reps = row->reps ? row->reps : xp_driver_tokenize.default_reps;
    rc = 0;
out:
    if (rc)
        tokenize_teardown(s);
    else
        *state = s;
    return rc;
}

/* One pass: every piece encoded with st, its ids hashed into *sink. */
static int encode_pass(tokenize_t *s, tok_state_t *st, uint64_t *sink, size_t *nids,
                       tb_err_t *err)
{
    uint32_t flags = tok_encode_defaults(s->tok);
    uint64_t h = 0;
    *nids = 0;
    for (size_t p = 0; p < s->pieces.len; p++) {
        piece_t pc = s->pieces.data[p];
        s->ids.len = 0;
        if (tok_encode_with(s->tok, st, s->text + pc.off, pc.len, flags, &s->ids, err))
            return tb_wrap(err, "encoding %s (bytes %zu..%zu)", s->corpus_path, pc.off,
                           pc.off + pc.len);
        for (size_t i = 0; i < s->ids.len; i++)
            h = h * 31 + s->ids.data[i];
        *nids += s->ids.len;
    }
    *sink ^= h;
    return 0;
}

static int tokenize_rep(void *state, unsigned rep, xp_qty_t *q, tb_err_t *err)
{
    (void)rep;
    tokenize_t *s = state;
    size_t nids;
    if (encode_pass(s, s->st, &q->sink, &nids, err))
        return -1;
    q->bytes = s->len;
    q->items = nids;
    return 0;
}

static int record_wall(xp_env_t *env, const char *impl, const char *metric,
                       unsigned rep, double seconds, uint64_t bytes, tb_err_t *err)
{
    xp_meas_t m = {.rep = rep, .value = seconds * 1e9, .bytes = bytes};
    snprintf(m.source, sizeof m.source, "wallclock");
    snprintf(m.impl, sizeof m.impl, "%s", impl);
    snprintf(m.metric, sizeof m.metric, "%s", metric);
    return xp_env_record(env, &m, err);
}

/* tokbench's first passes: each with a new state, whose making is timed
 * too (a runtime that starts cold pays for it). */
static int tokbench_first(tokenize_t *s, xp_env_t *env, tb_err_t *err)
{
    uint64_t sink = 0;
    int rc = 0;
    for (unsigned i = 0; !rc && i < s->reps && !(env->stop && *env->stop); i++) {
        size_t nids;
        double t0 = xp_now_ns();
        tok_state_t *st = tok_state_new(s->tok);
        rc = st ? encode_pass(s, st, &sink, &nids, err)
                : tb_fail(err, "out of memory for an encoding state");
        double t1 = xp_now_ns();
        tok_state_free(st);
        if (!rc)
            rc = record_wall(env, "tokbench", "first_ns", i, (t1 - t0) / 1e9, s->len, err);
    }
    timed_sink ^= sink;
    return rc;
}

/* Stores one of ref.js's arrays of seconds as metric's repetitions. */
static int record_seconds(xp_env_t *env, const char *impl, const char *metric,
                          json_t *secs, uint64_t bytes, tb_err_t *err)
{
    for (size_t i = 0; i < json_array_size(secs); i++)
        if (record_wall(env, impl, metric, (unsigned)i,
                        json_number_value(json_array_get(secs, i)), bytes, err))
            return -1;
    return 0;
}

/* ref.js --bench prints {"bytes": B, "pieces": P, "first": [..],
 * "seconds": [..]}; its pieces must be ours. */
static int bench_refjs(tokenize_t *s, const char *kind, xp_env_t *env, tb_err_t *err)
{
    const char *root = xp_data_root(err);
    if (!root)
        return -1;
    char script[PATH_MAX], reps[16], piece[24];
    snprintf(script, sizeof script, "%s/scripts/ref/ref.js", root);
    if (access(script, R_OK))
        return tb_fail(err, "reference %s: %s is missing", kind, script);
    snprintf(reps, sizeof reps, "%u", s->reps);
    snprintf(piece, sizeof piece, "%llu", (unsigned long long)s->piece_max);
    char *argv[] = {"node", script, (char *)kind, s->vocab_path, "--bench", reps,
                    "--piece", piece, NULL};
    tb_buf_t out = {0};
    double wall;
    int rc = xp_run_capture(argv, s->corpus_path, &out, &wall, err);
    if (rc)
        tb_wrap(err, "reference %s", kind);
    json_error_t jerr;
    json_t *j = rc ? NULL : json_loads((char *)out.data, 0, &jerr);
    json_t *first = j ? json_object_get(j, "first") : NULL;
    json_t *secs = j ? json_object_get(j, "seconds") : NULL;
    json_int_t pieces = j ? json_integer_value(json_object_get(j, "pieces")) : 0;
    if (!rc && (!json_is_array(secs) || !json_is_array(first)))
        rc = tb_fail(err, "reference %s: ref.js printed no \"first\" and \"seconds\" "
                          "arrays: %.200s", kind, out.data ? (char *)out.data : "");
    else if (!rc && (size_t)pieces != s->pieces.len)
        rc = tb_fail(err, "reference %s: ref.js cut %s into %lld pieces, tokbench into "
                          "%zu: the engines would not encode the same texts",
                     kind, s->corpus_path, (long long)pieces, s->pieces.len);
    json_int_t bytes = j ? json_integer_value(json_object_get(j, "bytes")) : 0;
    char impl[32];
    snprintf(impl, sizeof impl, "ref.js %s", kind);
    uint64_t b = bytes > 0 ? (uint64_t)bytes : s->len;
    if (!rc)
        rc = record_seconds(env, impl, "first_ns", first, b, err) ||
             record_seconds(env, impl, "ns", secs, b, err);
    json_decref(j);
    tb_buf_free(&out);
    return rc;
}

/* One pass of SentencePiece in process over the pieces. */
static int spm_pass(tokenize_t *s, void *sp, double *seconds, tb_err_t *err)
{
    char msg[256];
    uint64_t sum = 0;
    double t0 = xp_now_ns();
    for (size_t p = 0; p < s->pieces.len; p++) {
        piece_t pc = s->pieces.data[p];
        if (xp_ext_spm_encode(sp, s->text + pc.off, pc.len, &sum, msg, sizeof msg) < 0)
            return tb_fail(err, "%s (bytes %zu..%zu of %s)", msg, pc.off, pc.off + pc.len,
                           s->corpus_path);
    }
    *seconds = (xp_now_ns() - t0) / 1e9;
    timed_sink ^= sum;
    return 0;
}

/* SentencePiece in process: reps first passes, each with a processor loaded
 * afresh (not timed), then reps warm passes on the last. */
static int bench_spm_inproc(tokenize_t *s, xp_env_t *env, tb_err_t *err)
{
    const char *impl = "sentencepiece (in process)";
    void *sp = NULL;
    int rc = 0;
    for (unsigned i = 0; !rc && i < 2 * s->reps && !(env->stop && *env->stop); i++) {
        char msg[256];
        double sec = 0;
        if (i < s->reps) {
            xp_ext_spm_free(sp);
            if (!(sp = xp_ext_spm_load(s->vocab_path, msg, sizeof msg))) {
                rc = tb_fail(err, "%s", msg);
                break;
            }
        }
        rc = spm_pass(s, sp, &sec, err) ||
             record_wall(env, impl, i < s->reps ? "first_ns" : "ns", i % s->reps, sec,
                         s->len, err);
    }
    if (sp)
        xp_ext_spm_free(sp);
    return rc ? tb_wrap(err, "reference spm") : 0;
}

static int bench_spm(tokenize_t *s, xp_env_t *env, tb_err_t *err)
{
    if (xp_ext_spm_load)
        return bench_spm_inproc(s, env, err);
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
            rc = record_wall(env, "spm_encode process+load", "ns", i, wall, s->len, err);
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
    if (tokbench_first(s, env, err))
        return -1;
    if (!strcmp(s->ref, "hf") || !strcmp(s->ref, "hf-official") ||
        !strcmp(s->ref, "tiktoken"))
        return bench_refjs(s, s->ref, env, err);
    if (!strcmp(s->ref, "spm"))
        return bench_spm(s, env, err);
    return 0;
}

const xp_driver_t xp_driver_tokenize = {
    .name = "tokenize",
    .summary = "encode throughput on a corpus's pieces, first and warm passes "
               "(reference=hf|hf-official|tiktoken|spm|auto, piece=B)",
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
