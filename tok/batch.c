/*
 * batch: tok_encode_batch, many texts encoded on several threads that share
 * one tokenizer, each with a tok_state_t of its own.
 *
 * Threads take chunks of consecutive texts from a shared counter, so a few
 * long texts do not leave the others idle, and write only the outs of their
 * own chunks, so the output needs no locking and keeps the input's order.
 * The calling thread works too: one thread asked for runs no other.  The
 * workers borrow the tokenizer's spare states, so a batch starts with the
 * word caches earlier calls warmed.
 */
#include <stdint.h>

#include "../base/parallel.h"
#include "tok_internal.h"

/* Texts per chunk: enough to make the counter's traffic negligible for
 * lines of text, few enough to share out the tail evenly. */
#define CHUNK 16

typedef struct {
    const tok_tokenizer_t *t;
    const uint8_t *const *texts;
    const size_t *lens;
    size_t n;
    uint32_t flags; /* tok_encode_ex's */
    tok_ids_t *outs;
} batch_t;

/* Encodes texts [i, end) with st: SIZE_MAX, or the text that failed. */
static size_t encode_chunk(const batch_t *b, tok_state_t *st, size_t i, size_t end,
                           tb_err_t *err)
{
    for (; i < end; i++)
        if (tok_encode_with(b->t, st, b->texts[i], b->lens[i], b->flags, &b->outs[i], err)) {
            tb_wrap(err, "text %zu", i);
            return i;
        }
    return SIZE_MAX;
}

/* One thread's chunks (tb_par_fn), encoded with a state borrowed from the
 * tokenizer's spares. */
static size_t work(void *ctx, tb_par_t *par, tb_err_t *err)
{
    const batch_t *b = ctx;
    tok_state_t *st = tok_state_take(b->t);
    size_t bad = SIZE_MAX;
    for (;;) {
        size_t i = atomic_fetch_add(&par->next, CHUNK);
        if (i >= b->n || i > atomic_load(&par->bad))
            break;
        if (!st) {
            tb_fail(err, "text %zu: out of memory for an encoding state", i);
            bad = i;
        } else {
            bad = encode_chunk(b, st, i, b->n - i < CHUNK ? b->n : i + CHUNK, err);
        }
        if (bad != SIZE_MAX) {
            tb_par_fail(par, bad);
            break;
        }
    }
    if (st)
        tok_state_give(b->t, st);
    return bad;
}

int tok_encode_batch(const tok_tokenizer_t *t, const uint8_t *const *texts,
                     const size_t *lens, size_t n, unsigned threads, uint32_t flags,
                     tok_ids_t *outs, size_t *failed, tb_err_t *err)
{
    batch_t b = {.t = t, .texts = texts, .lens = lens, .n = n, .flags = flags, .outs = outs};
    return tb_parallel(threads, n / CHUNK + 1, work, &b, "encode batch", failed, err);
}
