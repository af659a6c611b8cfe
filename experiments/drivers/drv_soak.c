/*
 * drv_soak: a very long generated JSON document through a grammar's
 * matcher, as a decoding loop that never stops would feed it, recording
 * over the position how long a token takes and how much memory the
 * process holds (docs/grammars.md, "What memory grows with").
 *
 * Row: vocab (the tokenizer), pattern (a .lark/.gbnf grammar or a JSON
 * Schema .json that the document satisfies), options mb=M (the document's
 * size, default 100) and depth=D (0, the default: an array of small flat
 * objects; D: an array of objects nested D deep, {"a": {"a": ... i}}).
 * The document is made, encoded and fed a MiB piece at a time, so only the
 * grammar's states can grow; per piece one row each of metric soak_ns_tok
 * (nanoseconds per token), soak_rss_kb (resident memory after it) and
 * soak_states (grammar states), with bytes the position at its end; after
 * the last piece soak_peak_rss_kb, the case's peak.  A document the
 * grammar does not accept fails the case.
 *
 * The memory is the case's own, as a fresh `tokbench accept` would hold
 * it less the runner's: the heap earlier cases freed is given back first
 * (malloc_trim), the process's resident set then is the case's zero, and
 * its peak (VmHWM) is reset there (xp_peak_rss_reset); where that reset
 * is refused no peak is recorded, since it would be the run's.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../grammar/match.h"
#include "../../tok/tokenizer.h"
#include "../cli/cli.h"
#include "driver.h"
#include "setup.h"

#define PIECE (1u << 20)

typedef struct {
    tok_tokenizer_t *tok;
    gr_gram_t *g;
    uint64_t bytes, depth;
    double base_kb; /* resident memory before the case: its zero */
    int own_peak;   /* VmHWM was reset at base_kb */
} soak_t;

static void soak_teardown(void *state)
{
    soak_t *s = state;
    if (!s)
        return;
    tok_free(s->tok);
    gr_gram_free(s->g);
    free(s);
}

static int soak_setup(const xp_row_t *row, xp_env_t *env, void **state, tb_err_t *err)
{
    uint64_t mb, depth;
    char path[4096];
    if (xp_row_uint(row, "mb", 100, 1, 1u << 20, &mb, err) ||
        xp_row_uint(row, "depth", 0, 0, 1u << 24, &depth, err))
        return -1;
    if (!row->pattern || !row->pattern[0])
        return tb_fail(err, "line %u: field 'pattern': the grammar or JSON Schema file",
                       row->line);
    malloc_trim(0);
    double base_kb = xp_rss_kb();
    int own_peak = !xp_peak_rss_reset();
    soak_t *s = calloc(1, sizeof *s);
    if (!s)
        return tb_fail(err, "out of memory");
    *state = s;
    s->base_kb = base_kb;
    s->own_peak = own_peak;
    s->bytes = mb << 20;
    s->depth = depth;
    gr_cfg_t cfg;
    if (xp_resolve_spec(row->vocab, path, sizeof path, err) ||
        xp_env_input(env, "vocabulary", path, err) || !(s->tok = tok_load(path, err)) ||
        xp_env_input(env, "grammar", row->pattern, err) ||
        xp_load_grammar(&cfg, row->pattern, NULL, NULL, err) ||
        !(s->g = gr_gram_new(&cfg, NULL, err)))
        return -1;
    return 0;
}

/* Appends array elements from *next on until buf holds a piece; the
 * closing bracket once the document's size is reached.  1: the last piece. */
static int make_piece(const soak_t *s, uint64_t at, uint64_t *next, tb_buf_t *buf)
{
    char el[64];
    buf->len = 0;
    for (;;) {
        if (at + buf->len >= s->bytes)
            return tb_buf_putc(buf, ']') ? -1 : 1;
        if (buf->len >= PIECE)
            return 0;
        if (tb_buf_putc(buf, *next ? ',' : '['))
            return -1;
        if (!s->depth) {
            int n = snprintf(el, sizeof el, "{\"id\": %llu, \"name\": \"item\", \"ok\": true}",
                             (unsigned long long)*next);
            if (tb_buf_put(buf, el, (size_t)n))
                return -1;
        } else {
            for (uint64_t d = 0; d < s->depth; d++)
                if (tb_buf_put(buf, "{\"a\": ", 6))
                    return -1;
            int n = snprintf(el, sizeof el, "%llu", (unsigned long long)*next);
            if (tb_buf_put(buf, el, (size_t)n))
                return -1;
            for (uint64_t d = 0; d < s->depth; d++)
                if (tb_buf_putc(buf, '}'))
                    return -1;
        }
        ++*next;
    }
}

static int record(xp_env_t *env, const char *metric, double v, uint64_t at, uint64_t tokens,
                  tb_err_t *err)
{
    xp_meas_t m = {.value = v, .bytes = at, .items = tokens};
    snprintf(m.source, sizeof m.source, "wallclock");
    snprintf(m.impl, sizeof m.impl, "tokbench");
    snprintf(m.metric, sizeof m.metric, "%s", metric);
    return xp_env_record(env, &m, err);
}

/* Feeds one piece's tokens; 1 if one is refused. */
static int feed(gr_matcher_t *m, const tok_vocab_t *v, const tok_ids_t *ids, tb_err_t *err)
{
    for (size_t k = 0; k < ids->len; k++) {
        size_t len;
        const uint8_t *t = tok_vocab_token(v, ids->data[k], &len);
        int r = gr_matcher_consume(m, t, len, NULL, err);
        if (r)
            return r;
    }
    return 0;
}

static int soak_extra(void *state, const xp_row_t *row, xp_env_t *env, tb_err_t *err)
{
    (void)row;
    soak_t *s = state;
    gr_matcher_t m;
    if (gr_matcher_init(&m, s->g, 0, err))
        return -1;
    gr_matcher_keep(&m, 1);
    tb_buf_t buf = {0};
    tok_ids_t ids = {0};
    uint64_t at = 0, next = 0, tokens = 0;
    int last = 0, rc = 0;
    while (!last && !rc && !(env->stop && *env->stop)) {
        last = make_piece(s, at, &next, &buf);
        ids.len = 0;
        if (last < 0 || tok_encode(s->tok, buf.data, buf.len, &ids, err)) {
            rc = last < 0 ? tb_fail(err, "out of memory") : -1;
            break;
        }
        double t0 = xp_now_ns();
        int r = feed(&m, tok_vocab(s->tok), &ids, err);
        double ns = xp_now_ns() - t0;
        at += buf.len;
        tokens += ids.len;
        if (r)
            rc = r < 0 ? -1 : tb_fail(err, "%s: the generated document is refused in the "
                                      "MiB before byte %llu", row->pattern,
                                      (unsigned long long)at);
        else if (record(env, "soak_ns_tok", ns / (double)(ids.len ? ids.len : 1), at, ids.len,
                        err) ||
                 record(env, "soak_rss_kb", xp_rss_kb() - s->base_kb, at, ids.len, err) ||
                 record(env, "soak_states", (double)gr_nstates(s->g), at, ids.len, err))
            rc = -1;
    }
    if (!rc && last && !gr_matcher_accepting(&m))
        rc = tb_fail(err, "%s: the generated document is not a sentence", row->pattern);
    if (!rc && s->own_peak)
        rc = record(env, "soak_peak_rss_kb", xp_peak_rss_kb() - s->base_kb, at, tokens, err);
    tb_buf_free(&buf);
    free(ids.data);
    gr_matcher_free(&m);
    return rc;
}

const xp_driver_t xp_driver_soak = {
    .name = "soak",
    .summary = "a long generated JSON document through a grammar's matcher: time per token, "
               "resident memory and grammar states per MiB of position, and the case's peak "
               "memory (vocab, pattern: the grammar or schema; mb=M depth=D)",
    .setup = soak_setup,
    .extra = soak_extra,
    .teardown = soak_teardown,
    .default_reps = 1,
};
