/*
 * drv_fuzz: the differential fuzzer (fuzz.c) as an experiment.
 *
 * Row: vocabulary (manifest name or path), no corpus; options lines=N
 * (default 100000) and seed=S (default 1).  Setup generates the lines that
 * `tokbench fuzz VOCAB --lines N --seed S` compares; one repetition
 * encodes each of them with tokbench (bytes = their size, items = tokens).
 * The extra step runs every reference of the vocabulary's format over the
 * same lines (xp_fuzz_check) and stores the counts, source "fuzz", metrics
 * lines and mismatch_lines (added up over the references); a case with
 * mismatches fails, naming the command that shrinks and prints them.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tok/tokenizer.h"
#include "driver.h"
#include "../refs/fuzz.h"
#include "setup.h"

typedef struct {
    tok_tokenizer_t *tok;
    tb_buf_t text; /* the lines, each ended by "\n" */
    tok_ids_t ids;
    long lines, seed;
    char vocab_path[PATH_MAX];
} fuzz_state_t;

static void fuzz_teardown(void *state)
{
    fuzz_state_t *s = state;
    if (!s)
        return;
    tok_free(s->tok);
    tb_buf_free(&s->text);
    free(s->ids.data);
    free(s);
}

static int fuzz_setup(const xp_row_t *row, xp_env_t *env, void **state,
                      tb_err_t *err)
{
    uint64_t lines, seed;
    if (xp_row_uint(row, "lines", 100000, 1, LONG_MAX, &lines, err) ||
        xp_row_uint(row, "seed", 1, 1, LONG_MAX, &seed, err))
        return -1;
    fuzz_state_t *s = calloc(1, sizeof *s);
    if (!s)
        return tb_fail(err, "out of memory");
    s->lines = (long)lines, s->seed = (long)seed;
    if (xp_row_vocab(row, env, s->vocab_path, sizeof s->vocab_path, err) ||
        !(s->tok = tok_load(s->vocab_path, err)) ||
        xp_fuzz_generate(tok_vocab(s->tok),
                         tok_format(s->tok) == TOK_FORMAT_SPM_MODEL, s->lines,
                         s->seed, &s->text, err)) {
        fuzz_teardown(s);
        return -1;
    }
    *state = s;
    return 0;
}

static int fuzz_rep(void *state, unsigned rep, xp_qty_t *q, tb_err_t *err)
{
    (void)rep;
    fuzz_state_t *s = state;
    uint64_t h = 0, tokens = 0;
    for (size_t at = 0; at < s->text.len;) {
        const uint8_t *nl = memchr(s->text.data + at, '\n', s->text.len - at);
        size_t end = (size_t)(nl - s->text.data);
        s->ids.len = 0;
        if (tok_encode(s->tok, s->text.data + at, end - at, &s->ids, err))
            return tb_wrap(err, "encoding generated line at byte %zu", at);
        for (size_t i = 0; i < s->ids.len; i++)
            h = h * 31 + s->ids.data[i];
        tokens += s->ids.len;
        at = end + 1;
    }
    q->bytes = s->text.len;
    q->items = tokens;
    q->sink ^= h;
    return 0;
}

static int record(xp_env_t *env, const char *metric, long value, tb_err_t *err)
{
    xp_meas_t m = {.value = (double)value};
    snprintf(m.source, sizeof m.source, "fuzz");
    snprintf(m.impl, sizeof m.impl, "tokbench");
    snprintf(m.metric, sizeof m.metric, "%s", metric);
    return xp_env_record(env, &m, err);
}

static int fuzz_extra(void *state, const xp_row_t *row, xp_env_t *env,
                      tb_err_t *err)
{
    fuzz_state_t *s = state;
    xp_fuzz_stats_t st;
    if (xp_fuzz_check(s->vocab_path, s->lines, s->seed, &st, err) ||
        record(env, "lines", st.lines, err) ||
        record(env, "mismatch_lines", st.mismatches, err))
        return -1;
    if (st.mismatches)
        return tb_fail(err, "%ld of %ld generated lines differ from the "
                            "references: see 'tokbench fuzz %s --lines %ld "
                            "--seed %ld'",
                       st.mismatches, st.lines, row->vocab, s->lines, s->seed);
    return 0;
}

const xp_driver_t xp_driver_fuzz = {
    .name = "fuzz",
    .summary = "generated lines against every reference (lines=N seed=S)",
    .setup = fuzz_setup,
    .rep = fuzz_rep,
    .extra = fuzz_extra,
    .teardown = fuzz_teardown,
    .default_reps = 1,
};
