/*
 * parallel: a pool of threads woken per job, and the lowest failure of a
 * job picked (parallel.h).
 *
 * A job is handed over under the pool's mutex: the caller stores it and
 * bumps `job`, the workers, asleep on `wake` until `job` changes, run it
 * and count themselves out of `busy`; the last one out signals `done`.
 * The mutex orders everything a job's threads write before it ends
 * against the caller's reading of it afterwards.
 */
#include "parallel.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

/* One thread's part in the current job; w[0] is the caller's. */
typedef struct {
    tb_pool_t *pool;
    unsigned index;
    unsigned long seen; /* the last job this worker took part in */
    size_t bad;         /* its failure in that job, SIZE_MAX: none */
    tb_err_t err;
    pthread_t thread;
} worker_t;

struct tb_pool {
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    unsigned nthreads;  /* w[0..nthreads): the caller's and those started */
    unsigned active;    /* threads that take part in the current job */
    unsigned busy;      /* of those started, still in the current job */
    unsigned long job;  /* bumped per job; workers wait for it to change */
    int quit;
    tb_par_fn run;      /* the current job */
    void *ctx;
    tb_par_t par;
    worker_t *w;
};

void tb_par_fail(tb_par_t *par, size_t i)
{
    size_t cur = atomic_load(&par->bad);
    while (i < cur && !atomic_compare_exchange_weak(&par->bad, &cur, i))
        ;
}

static void *worker(void *arg)
{
    worker_t *w = arg;
    tb_pool_t *p = w->pool;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->quit && w->seen == p->job)
            pthread_cond_wait(&p->wake, &p->mu);
        if (p->quit)
            break;
        w->seen = p->job;
        if (w->index >= p->active)
            continue; /* a job of fewer parts than threads */
        pthread_mutex_unlock(&p->mu);
        w->bad = p->run(p->ctx, &p->par, &w->err);
        pthread_mutex_lock(&p->mu);
        if (!--p->busy)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

tb_pool_t *tb_pool_new(unsigned threads, tb_err_t *err)
{
    if (!threads) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cpus > 0 ? (unsigned)cpus : 1;
    }
    tb_pool_t *p = calloc(1, sizeof *p);
    worker_t *w = calloc(threads, sizeof *w);
    if (!p || !w) {
        free(p);
        free(w);
        tb_fail(err, "out of memory for a pool of %u threads", threads);
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    p->w = w;
    p->nthreads = 1;
    w[0] = (worker_t){.pool = p};
    for (unsigned k = 1; k < threads; k++) {
        w[k] = (worker_t){.pool = p, .index = k};
        if (pthread_create(&w[k].thread, NULL, worker, &w[k]))
            break;
        p->nthreads++;
    }
    return p;
}

unsigned tb_pool_threads(const tb_pool_t *p)
{
    return p->nthreads;
}

/* A job on the caller's thread alone: its failure is the lowest. */
static int run_alone(tb_par_fn run, void *ctx, size_t *failed, tb_err_t *err)
{
    tb_par_t par;
    atomic_init(&par.next, 0);
    atomic_init(&par.bad, SIZE_MAX);
    size_t bad = run(ctx, &par, err);
    if (bad == SIZE_MAX)
        return 0;
    if (failed)
        *failed = bad;
    return -1;
}

int tb_pool_run(tb_pool_t *p, size_t parts, tb_par_fn run, void *ctx, size_t *failed,
                tb_err_t *err)
{
    if (!p)
        return run_alone(run, ctx, failed, err);
    unsigned active = parts < p->nthreads ? (parts ? (unsigned)parts : 1) : p->nthreads;
    atomic_init(&p->par.next, 0);
    atomic_init(&p->par.bad, SIZE_MAX);
    for (unsigned k = 0; k < active; k++)
        p->w[k].bad = SIZE_MAX;
    if (active > 1) {
        pthread_mutex_lock(&p->mu);
        p->run = run;
        p->ctx = ctx;
        p->active = active;
        p->busy = active - 1;
        p->job++;
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->mu);
    }
    p->w[0].bad = run(ctx, &p->par, &p->w[0].err);
    if (active > 1) {
        pthread_mutex_lock(&p->mu);
        while (p->busy)
            pthread_cond_wait(&p->done, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
    size_t bad = atomic_load(&p->par.bad);
    for (unsigned k = 0; k < active && bad != SIZE_MAX; k++)
        if (p->w[k].bad == bad) {
            *err = p->w[k].err;
            if (failed)
                *failed = bad;
            return -1;
        }
    return 0;
}

void tb_pool_free(tb_pool_t *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (unsigned k = 1; k < p->nthreads; k++)
        pthread_join(p->w[k].thread, NULL);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
    free(p->w);
    free(p);
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
    tb_pool_t *p = tb_pool_new(threads, err);
    if (!p)
        return tb_wrap(err, "%s", what);
    int rc = tb_pool_run(p, parts, run, ctx, failed, err);
    tb_pool_free(p);
    return rc;
}
