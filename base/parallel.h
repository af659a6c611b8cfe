/*
 * parallel: the items of one job shared out among threads that take them
 * from a counter, and the job's lowest failing item reported as a run on
 * one thread would report it (tok_encode_batch, gr_masks_batch).
 *
 * A pool's threads are started once and woken for each job, for callers
 * that run many small jobs (an engine's mask batches, one between two
 * forward passes: starting threads would cost as much as the batch);
 * tb_parallel starts a pool for one job and joins it.  The calling thread
 * works too, so a pool of one thread starts none; a thread that cannot be
 * started leaves its share to the others.
 */
#ifndef TB_PARALLEL_H
#define TB_PARALLEL_H

#include <stdatomic.h>
#include <stddef.h>

#include "err.h"

/* What the threads of one job share. */
typedef struct {
    atomic_size_t next; /* the first item no thread has taken */
    atomic_size_t bad;  /* the lowest item known to fail, SIZE_MAX: none */
} tb_par_t;

/* One thread's part: takes items from par->next (atomic_fetch_add) until
 * none is left or every one left comes after par->bad, and returns
 * SIZE_MAX, or the first item it failed on (its lowest: items are taken in
 * order) with err saying why, after tb_par_fail. */
typedef size_t (*tb_par_fn)(void *ctx, tb_par_t *par, tb_err_t *err);

/* Lowers par->bad to item i unless it is lower already. */
void tb_par_fail(tb_par_t *par, size_t i);

typedef struct tb_pool tb_pool_t;

/* A pool of `threads` threads (0: one per online CPU), the caller's among
 * them; NULL with err when out of memory.  Fewer may run if the system
 * refuses to start some (tb_pool_threads says how many). */
tb_pool_t *tb_pool_new(unsigned threads, tb_err_t *err);

/* The threads a job of the pool runs on, the caller's included. */
unsigned tb_pool_threads(const tb_pool_t *p);

/* Runs `run` on the pool's threads (at most `parts` of them take part:
 * more would find nothing to take; p NULL: the caller's thread alone) and
 * returns when all have finished.
 * -1 when an item failed: *err is the lowest failing item's and *failed
 * (may be NULL) that item.  One job at a time: a pool is not to be run
 * from two threads at once. */
int tb_pool_run(tb_pool_t *p, size_t parts, tb_par_fn run, void *ctx, size_t *failed,
                tb_err_t *err);

/* Ends the pool's threads (joined) and frees it; NULL is allowed. */
void tb_pool_free(tb_pool_t *p);

/* tb_pool_run on a pool of `threads` (at most `parts`) started for this
 * one job; `what` names the job in an out-of-memory error. */
int tb_parallel(unsigned threads, size_t parts, tb_par_fn run, void *ctx, const char *what,
                size_t *failed, tb_err_t *err);

#endif
