/*
 * batch: gr_masks_batch, the masks of many matchers computed on several
 * threads, as an engine asks for them between two forward passes.
 *
 * The matchers may share grammars (gram.h, Threads): each thread takes the
 * next matcher from a shared counter, so a slow mask (a cold state, a walk
 * of the whole trie) does not leave the others idle, and writes only that
 * matcher's mask.  The calling thread works too; the others are started
 * for the call and joined before it returns, like tok_encode_batch.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "match.h"

typedef struct {
    gr_matcher_t *const *m;
    const trie_t *t;
    tb_bitset_t *const *masks;
    uint64_t *nodes;
    size_t n;
    atomic_size_t next; /* the next matcher to take */
    atomic_size_t bad;  /* lowest matcher known to fail, SIZE_MAX: none */
} batch_t;

typedef struct {
    batch_t *b;
    size_t bad; /* this worker's first failure, SIZE_MAX: none */
    tb_err_t err;
    pthread_t thread;
} worker_t;

static void *work(void *arg)
{
    worker_t *w = arg;
    batch_t *b = w->b;
    w->bad = SIZE_MAX;
    for (size_t i; (i = atomic_fetch_add(&b->next, 1)) < b->n;) {
        if (!gr_matcher_mask(b->m[i], b->t, b->masks[i], b->nodes ? &b->nodes[i] : NULL,
                             &w->err))
            continue;
        tb_wrap(&w->err, "matcher %zu", i);
        w->bad = i;
        /* keep the lowest failure, as a one-thread run would report it */
        size_t cur = atomic_load(&b->bad);
        while (i < cur && !atomic_compare_exchange_weak(&b->bad, &cur, i))
            ;
        break;
    }
    return NULL;
}

int gr_masks_batch(gr_matcher_t *const *m, size_t n, const trie_t *t, tb_bitset_t *const *masks,
                   uint64_t *nodes, unsigned threads, tb_err_t *err)
{
    if (!threads) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cpus > 0 ? (unsigned)cpus : 1;
    }
    if (threads > n)
        threads = n ? (unsigned)n : 1; /* more would find nothing to do */
    batch_t b = {.m = m, .t = t, .masks = masks, .nodes = nodes, .n = n};
    atomic_init(&b.next, 0);
    atomic_init(&b.bad, SIZE_MAX);
    worker_t *w = calloc(threads, sizeof *w);
    if (!w)
        return tb_fail(err, "mask batch: out of memory for %u threads", threads);
    for (unsigned k = 0; k < threads; k++)
        w[k].b = &b;
    /* A thread that does not start leaves its share to the others. */
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
            rc = -1;
            break;
        }
    free(w);
    return rc;
}
