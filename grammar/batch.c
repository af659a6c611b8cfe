/*
 * batch: gr_masks_batch, the masks of many matchers computed on several
 * threads, as an engine asks for them between two forward passes.
 *
 * The matchers may share grammars (gram.h, Threads): each thread takes the
 * next matcher from a shared counter, so a slow mask (a cold state, a walk
 * of the whole trie) does not leave the others idle, and writes only that
 * matcher's mask.  The threads are the caller's pool's, started once and
 * woken per batch: a batch of a few warm masks takes less time than
 * starting a thread.  The calling thread works too.
 */
#include <stdint.h>

#include "match.h"

typedef struct {
    gr_matcher_t *const *m;
    const trie_t *t;
    tb_bitset_t *const *masks;
    uint64_t *nodes;
    size_t n;
} batch_t;

/* One thread's matchers (tb_par_fn), taken one at a time. */
static size_t work(void *ctx, tb_par_t *par, tb_err_t *err)
{
    const batch_t *b = ctx;
    for (size_t i; (i = atomic_fetch_add(&par->next, 1)) < b->n && i <= atomic_load(&par->bad);) {
        if (!gr_matcher_mask(b->m[i], b->t, b->masks[i], b->nodes ? &b->nodes[i] : NULL, err))
            continue;
        tb_wrap(err, "matcher %zu", i);
        tb_par_fail(par, i);
        return i;
    }
    return SIZE_MAX;
}

int gr_masks_batch(gr_matcher_t *const *m, size_t n, const trie_t *t, tb_bitset_t *const *masks,
                   uint64_t *nodes, tb_pool_t *pool, tb_err_t *err)
{
    batch_t b = {.m = m, .t = t, .masks = masks, .nodes = nodes, .n = n};
    return tb_pool_run(pool, n, work, &b, NULL, err);
}
