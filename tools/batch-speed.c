/*
 * batch-speed: throughput of tok_encode_batch over the lines of a file, at
 * each thread count given, run by hand (make build/batch-speed):
 *
 *   build/batch-speed TOKENIZER FILE [--reps R] THREADS...
 *
 * Every repetition encodes every line once per thread count, the counts
 * taking turns so that a change in the machine's load falls on all of
 * them.  One batch at the largest count comes first, so every state the
 * tokenizer keeps has a warm word cache.  Prints, per count, wall-clock
 * MB/s (best and median of the repetitions) and the process's CPU seconds
 * per batch (median): on a machine other work keeps busy the wall clock
 * says little about scaling, while equal CPU seconds at every count say
 * the threads add no work of their own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "../base/file.h"
#include "../tok/tokenizer.h"

#define MAX_COUNTS 16
#define MAX_REPS 101

typedef struct {
    TB_VEC(const uint8_t *) text;
    TB_VEC(size_t) len;
    size_t bytes;
} lines_t;

static double now(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int split_lines(const uint8_t *data, size_t len, lines_t *l)
{
    for (size_t at = 0; at < len;) {
        const uint8_t *nl = memchr(data + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - data) : len;
        if (tb_vec_push(&l->text, data + at) || tb_vec_push(&l->len, end - at))
            return -1;
        l->bytes += end - at;
        at = end + 1;
    }
    return 0;
}

/* One batch on `threads` threads: wall and CPU seconds, or -1. */
static int one_batch(const tok_tokenizer_t *t, const lines_t *l, unsigned threads,
                     double *wall, double *cpu, tb_err_t *err)
{
    tok_ids_t *outs = calloc(l->text.len + 1, sizeof *outs);
    if (!outs)
        return tb_fail(err, "out of memory");
    double w0 = now(CLOCK_MONOTONIC), c0 = cpu_seconds();
    int rc = tok_encode_batch(t, l->text.data, l->len.data, l->text.len,
                              threads, tok_encode_defaults(t), outs, NULL, err);
    *wall = now(CLOCK_MONOTONIC) - w0;
    *cpu = cpu_seconds() - c0;
    for (size_t i = 0; i < l->text.len; i++)
        free(outs[i].data);
    free(outs);
    return rc;
}

static int usage(void)
{
    fprintf(stderr, "usage: batch-speed TOKENIZER FILE [--reps R] THREADS...\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return usage();
    unsigned reps = 5, counts[MAX_COUNTS], ncounts = 0;
    for (int i = 3; i < argc; i++) {
        char *end;
        unsigned long v = strtoul(argv[i], &end, 10);
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = (unsigned)strtoul(argv[++i], &end, 10);
            if (*end || reps < 1 || reps > MAX_REPS)
                return usage();
        } else if (*end || end == argv[i] || v < 1 || v > 1024 ||
                   ncounts == MAX_COUNTS) {
            return usage();
        } else {
            counts[ncounts++] = (unsigned)v;
        }
    }
    if (!ncounts)
        return usage();
    tb_err_t err;
    tok_tokenizer_t *t = tok_load(argv[1], &err);
    uint8_t *data = NULL;
    size_t len;
    lines_t l = {0};
    int rc = 1;
    if (!t || tb_read_file(argv[2], &data, &len, &err))
        goto out;
    if (split_lines(data, len, &l)) {
        tb_fail(&err, "out of memory for the lines of %s", argv[2]);
        goto out;
    }
    unsigned most = 0;
    for (unsigned k = 0; k < ncounts; k++)
        most = counts[k] > most ? counts[k] : most;
    double wall[MAX_COUNTS][MAX_REPS], cpu[MAX_COUNTS][MAX_REPS], w, c;
    if (one_batch(t, &l, most, &w, &c, &err))
        goto out;
    for (unsigned r = 0; r < reps; r++)
        for (unsigned k = 0; k < ncounts; k++)
            if (one_batch(t, &l, counts[k], &wall[k][r], &cpu[k][r], &err))
                goto out;
    printf("%s: %zu lines, %.2f MB, %u repetitions\n", argv[2], l.text.len,
           (double)l.bytes / 1e6, reps);
    printf("threads  best MB/s  median MB/s  CPU s/batch\n");
    for (unsigned k = 0; k < ncounts; k++) {
        qsort(wall[k], reps, sizeof **wall, cmp_double);
        qsort(cpu[k], reps, sizeof **cpu, cmp_double);
        printf("%7u  %9.2f  %11.2f  %11.3f\n", counts[k],
               (double)l.bytes / 1e6 / wall[k][0],
               (double)l.bytes / 1e6 / wall[k][reps / 2], cpu[k][reps / 2]);
    }
    rc = 0;
out:
    if (rc)
        fprintf(stderr, "batch-speed: %s\n", err.msg);
    free(l.text.data);
    free(l.len.data);
    free(data);
    tok_free(t);
    return rc;
}
