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
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "tok_internal.h"

/* Texts per chunk: enough to make the counter's traffic negligible for
 * lines of text, few enough to share out the tail evenly. */
#define CHUNK 16

typedef struct {
    const tok_tokenizer_t *t;
    const uint8_t *const *texts;
    const size_t *lens;
    size_t n;
    uint32_t flags;      /* tok_encode_ex's */
    tok_ids_t *outs;
    atomic_size_t next;  /* first text of the next chunk to take */
    atomic_size_t bad;   /* lowest text known to fail, SIZE_MAX: none */
} batch_t;

typedef struct {
    batch_t *b;
    size_t bad;          /* this worker's first failure, SIZE_MAX: none */
    tb_err_t err;
    pthread_t thread;
} worker_t;

/* Lowers b->bad to i unless it is lower already. */
static void note_bad(batch_t *b, size_t i)
{
    size_t cur = atomic_load(&b->bad);
    while (i < cur && !atomic_compare_exchange_weak(&b->bad, &cur, i))
        ;
}

/* Encodes texts [i, end) with st; on failure notes the text and returns -1. */
static int encode_chunk(worker_t *w, tok_state_t *st, size_t i, size_t end)
{
    batch_t *b = w->b;
    for (; i < end; i++)
        if (tok_encode_with(b->t, st, b->texts[i], b->lens[i], b->flags, &b->outs[i],
                            &w->err)) {
            tb_wrap(&w->err, "text %zu", i);
            w->bad = i;
            note_bad(b, i);
            return -1;
        }
    return 0;
}

/* Encodes chunks until none is left or every text left comes after one
 * known to fail (those cannot be the one reported).  A worker takes its
 * chunks in increasing order, so its first failure is its lowest. */
static void *work(void *arg)
{
    worker_t *w = arg;
    batch_t *b = w->b;
    tok_state_t *st = tok_state_take(b->t);
    w->bad = SIZE_MAX;
    for (;;) {
        size_t i = atomic_fetch_add(&b->next, CHUNK);
        if (i >= b->n || i > atomic_load(&b->bad))
            break;
        if (!st) {
            tb_fail(&w->err, "text %zu: out of memory for an encoding state", i);
            w->bad = i;
            note_bad(b, i);
            break;
        }
        if (encode_chunk(w, st, i, b->n - i < CHUNK ? b->n : i + CHUNK))
            break;
    }
    if (st)
        tok_state_give(b->t, st);
    return NULL;
}

int tok_encode_batch(const tok_tokenizer_t *t, const uint8_t *const *texts,
                     const size_t *lens, size_t n, unsigned threads, uint32_t flags,
                     tok_ids_t *outs, size_t *failed, tb_err_t *err)
{
    if (!threads) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cpus > 0 ? (unsigned)cpus : 1;
    }
    size_t chunks = n / CHUNK + 1;
    if (threads > chunks)
        threads = (unsigned)chunks; /* more would find nothing to do */
    batch_t b = {.t = t, .texts = texts, .lens = lens, .n = n, .flags = flags, .outs = outs};
    atomic_init(&b.next, 0);
    atomic_init(&b.bad, SIZE_MAX);
    worker_t *w = calloc(threads, sizeof *w);
    if (!w)
        return tb_fail(err, "encode batch: out of memory for %u threads", threads);
    /* A thread that does not start leaves its share to the others. */
    for (unsigned k = 0; k < threads; k++)
        w[k].b = &b;
    unsigned started = 1;
    for (; started < threads; started++)
        if (pthread_create(&w[started].thread, NULL, work, &w[started]))
            break;
    work(&w[0]);
    for (unsigned k = 1; k < started; k++)
        pthread_join(w[k].thread, NULL);
    int rc = 0;
    size_t bad = atomic_load(&b.bad);
    for (unsigned k = 0; k < started && bad != SIZE_MAX; k++)
        if (w[k].bad == bad) {
            *err = w[k].err;
            if (failed)
                *failed = bad;
            rc = -1;
            break;
        }
    free(w);
    return rc;
}
