/*
 * parallel: the items of one job shared out among threads that take them
 * from a counter, and the job's lowest failing item reported as a run on
 * one thread would report it (tok_encode_batch, gr_masks_batch).
 *
 * The calling thread works too, so one thread asked for starts none; a
 * thread that cannot be started leaves its share to the others.
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

/* Runs `run` on `threads` threads (0: one per online CPU), at most `parts`
 * of them (more would find nothing to take).  -1 when an item failed: *err
 * is the lowest failing item's and *failed (may be NULL) that item; `what`
 * names the job in an out-of-memory error. */
int tb_parallel(unsigned threads, size_t parts, tb_par_fn run, void *ctx, const char *what,
                size_t *failed, tb_err_t *err);

#endif
