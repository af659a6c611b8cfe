/*
 * parallel: threads started for one job and joined, and the lowest
 * failure picked (parallel.h).
 */
#include "parallel.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct {
    tb_par_fn run;
    void *ctx;
    tb_par_t *par;
    size_t bad; /* this thread's failure, SIZE_MAX: none */
    tb_err_t err;
    pthread_t thread;
} worker_t;

void tb_par_fail(tb_par_t *par, size_t i)
{
    size_t cur = atomic_load(&par->bad);
    while (i < cur && !atomic_compare_exchange_weak(&par->bad, &cur, i))
        ;
}

static void *work(void *arg)
{
    worker_t *w = arg;
    w->bad = w->run(w->ctx, w->par, &w->err);
    return NULL;
}

int tb_parallel(unsigned threads, size_t parts, tb_par_fn run, void *ctx, const char *what,
                size_t *failed, tb_err_t *err)
{
    if (!threads) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cpus > 0 ? (unsigned)cpus : 1;
    }
    if (threads > parts)
        threads = parts ? (unsigned)parts : 1;
    tb_par_t par;
    atomic_init(&par.next, 0);
    atomic_init(&par.bad, SIZE_MAX);
    worker_t *w = calloc(threads, sizeof *w);
    if (!w)
        return tb_fail(err, "%s: out of memory for %u threads", what, threads);
    for (unsigned k = 0; k < threads; k++)
        w[k] = (worker_t){.run = run, .ctx = ctx, .par = &par};
    unsigned started = 1;
    for (; started < threads; started++)
        if (pthread_create(&w[started].thread, NULL, work, &w[started]))
            break;
    work(&w[0]);
    for (unsigned k = 1; k < started; k++)
        pthread_join(w[k].thread, NULL);
    int rc = 0;
    size_t bad = atomic_load(&par.bad);
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
