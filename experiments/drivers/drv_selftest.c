/*
 * drv_selftest: a known loop, for calibrating the counters and testing the
 * runner without any tokenizer or trie.  Each repetition runs n steps of a
 * xorshift generator with a branch that depends on the generated bit, the
 * seed varying with the repetition so the predictor cannot learn the
 * sequence.  Options: n=STEPS (default 100000), sleep_us=US (sleeps in
 * every repetition: a slow case that costs no CPU, for interruption tests),
 * fail=setup|rep (fails on purpose, to test that failures are recorded).
 * It counts every step as one "node", so per-node figures have a known
 * denominator.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver.h"

typedef struct {
    uint64_t n;
    long sleep_us;
    int fail_rep;
} selftest_t;

static int selftest_setup(const xp_row_t *row, xp_env_t *env, void **state,
                          tb_err_t *err)
{
    (void)env;
    char buf[32];
    const char *fail = xp_row_option(row, "fail", buf, sizeof buf);
    if (fail && !strcmp(fail, "setup"))
        return tb_fail(err, "selftest: failing in setup as the row asks (fail=setup)");
    uint64_t n, us;
    if (xp_row_uint(row, "n", 100000, 0, UINT64_C(1) << 40, &n, err) ||
        xp_row_uint(row, "sleep_us", 0, 0, 10000000, &us, err))
        return -1;
    selftest_t *s = calloc(1, sizeof *s);
    if (!s)
        return tb_fail(err, "out of memory");
    s->n = n;
    s->sleep_us = (long)us;
    s->fail_rep = fail && !strcmp(fail, "rep");
    *state = s;
    return 0;
}

static int selftest_rep(void *state, unsigned rep, xp_qty_t *q, tb_err_t *err)
{
    selftest_t *s = state;
    if (s->fail_rep)
        return tb_fail(err, "selftest: failing in repetition %u as the row asks "
                       "(fail=rep)", rep);
    if (s->sleep_us) {
        struct timespec ts = {s->sleep_us / 1000000, (s->sleep_us % 1000000) * 1000};
        nanosleep(&ts, NULL);
    }
    uint64_t x = 0x9E3779B97F4A7C15ULL * (rep + 1), acc = 0;
    for (uint64_t i = 0; i < s->n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if (x & 1) { /* taken half the time, unpredictably */
            /* the empty asm keeps the compiler from turning the branch
             * into a conditional move: this loop calibrates mispredictions */
            __asm__ volatile("");
            acc += x >> 32;
        } else {
            acc ^= x;
        }
    }
    q->nodes = s->n;
    q->items = s->n;
    q->sink ^= acc;
    return 0;
}

static void selftest_teardown(void *state)
{
    free(state);
}

const xp_driver_t xp_driver_selftest = {
    .name = "selftest",
    .summary = "a known xorshift loop (n=STEPS): calibrates the counters",
    .setup = selftest_setup,
    .rep = selftest_rep,
    .teardown = selftest_teardown,
    .default_reps = 11,
};
