/*
 * drv_load: what loading a vocabulary costs, the price every `tokbench
 * encode`, `mask` or `accept` pays before its first token: tok_load of the
 * row's vocabulary file and tok_free.
 *
 * Two ways, each its own rows: impl "tokbench" loads from the source with
 * the compiled cache bypassed (tok_load_opts_t.no_cache), impl
 * "tokbench-cached" opens the compiled file (docs/tokenizers.md), which
 * one unmeasured load first writes into a folder of the case's own,
 * removed after.  Row: vocabulary; repetitions (default 5), each one load
 * of either way, alternating which goes first.  Each load runs in a fresh
 * process (`tokbench _load`, forked and exec'd: xp_load_exe), so that its
 * peak memory is its own and no earlier load left the allocator warm: a
 * child only forked from `make bench`'s run, after the cases before it,
 * read Llama 3's peak as 3.58 times its file and Mistral's as 4.38, where
 * a run of the load rows alone read 2.26 and 2.94.  Where there is no
 * such program (the tests), the forked child loads, after giving back the
 * heap pages it inherited (malloc_trim), so that the load cannot reuse
 * them unseen.  The exec'd child runs without address-space randomisation:
 * the kernel maps a program's code 64 KB around each page a load first
 * runs, so where ASLR put the code moved a SentencePiece model's peak by
 * up to 230 KB between loads (15 loads: 944-1176 KB), and fixed it does
 * not move at all.  extra() records per repetition and way, source "rusage":
 *   cpu_ms       user plus system time of tok_load (page faults included);
 *   peak_rss_kb  the child's peak resident set less its resident set just
 *                before the load: the memory the load needed at its peak
 *                (a compiled file's mapped pages count);
 * and once per way, source "static": file_bytes and rss_per_file_byte (the
 * median peak over the source file's size; issue 24 asks for at most 3).
 * items is the vocabulary's size, bytes the file's.  A load that fails, or
 * a cached load that did not open the compiled file, fails the case with
 * the loader's message.
 */
#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../tok/tokenizer.h"
#include "../../tok/vocab.h"
#include "driver.h"
#include "setup.h"

typedef struct {
    char path[4096];
    char cache[64]; /* the case's compiled cache folder */
    uint64_t file_bytes;
} load_t;

/* The two ways of loading, as impl names; WAY_WRITE, the load that writes
 * the compiled file first, is not recorded. */
enum { WAY_SOURCE, WAY_CACHED, WAYS, WAY_WRITE = WAYS };
static const char *const way_impl[WAYS] = {"tokbench", "tokbench-cached"};

/* What a child reports through its pipe. */
typedef struct {
    int ok;
    double cpu_ms;
    double peak_kb;
    uint32_t vocab_size;
    char msg[TB_ERR_MAX];
} child_report_t;

static int load_setup(const xp_row_t *row, xp_env_t *env, void **state,
                      tb_err_t *err)
{
    load_t *s = calloc(1, sizeof *s);
    if (!s)
        return tb_fail(err, "out of memory");
    struct stat st;
    if (xp_row_vocab(row, env, s->path, sizeof s->path, err)) {
        free(s);
        return -1;
    }
    if (stat(s->path, &st)) {
        tb_fail(err, "%s: %s", s->path, strerror(errno));
        free(s);
        return -1;
    }
    s->file_bytes = (uint64_t)st.st_size;
    const char *tmp = getenv("TMPDIR");
    snprintf(s->cache, sizeof s->cache, "%.40s/tokbench-load.XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(s->cache)) {
        tb_fail(err, "%s: %s", s->cache, strerror(errno));
        free(s);
        return -1;
    }
    *state = s;
    return 0;
}

static double cpu_ms(const struct rusage *u)
{
    return (double)(u->ru_utime.tv_sec + u->ru_stime.tv_sec) * 1e3 +
           (double)(u->ru_utime.tv_usec + u->ru_stime.tv_usec) / 1e3;
}

const char *xp_load_exe;

/* The child's side: one load, measured, reported into fd. */
void xp_load_child(const char *path, int way, const char *cache_dir, int fd)
{
    child_report_t r = {0};
    malloc_trim(0);
    /* a forked child's ru_maxrss starts at its parent's peak (measured: a
     * `tokbench run` that had held 355 MB gave every load that peak) */
    int own_peak = !xp_peak_rss_reset();
    double before_kb = xp_rss_kb();
    struct rusage u0, u1;
    getrusage(RUSAGE_SELF, &u0);
    tb_err_t err;
    tok_load_opts_t opts = {.cache_dir = cache_dir, .no_cache = way == WAY_SOURCE};
    tok_tokenizer_t *t = tok_load_ex(path, &opts, &err);
    getrusage(RUSAGE_SELF, &u1);
    if (t && ((way == WAY_CACHED && !opts.cached) || (way == WAY_WRITE && opts.note[0]))) {
        snprintf(r.msg, sizeof r.msg, "%.300s: %s%s%.600s", path,
                 way == WAY_CACHED ? "not opened from the compiled cache"
                                   : "compiled file not written",
                 opts.note[0] ? ": " : "", opts.note);
        tok_free(t);
    } else if (t) {
        r.ok = 1;
        r.cpu_ms = cpu_ms(&u1) - cpu_ms(&u0);
        r.peak_kb = (own_peak ? xp_peak_rss_kb() : (double)u1.ru_maxrss) - before_kb;
        r.vocab_size = tok_vocab(t)->size;
        tok_free(t);
    } else {
        snprintf(r.msg, sizeof r.msg, "%s", err.msg);
    }
    ssize_t w = write(fd, &r, sizeof r);
    _exit(w == (ssize_t)sizeof r ? 0 : 1);
}

static int load_once(const load_t *s, int way, child_report_t *r, tb_err_t *err)
{
    int fds[2];
    if (pipe(fds))
        return tb_fail(err, "load: pipe: %s", strerror(errno));
    fflush(NULL); /* the child must not write the parent's buffers again */
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return tb_fail(err, "load: fork: %s", strerror(errno));
    }
    if (pid == 0) {
        char w[16], fd[16];
        close(fds[0]);
        if (!xp_load_exe)
            xp_load_child(s->path, way, s->cache, fds[1]);
        snprintf(w, sizeof w, "%d", way);
        snprintf(fd, sizeof fd, "%d", fds[1]);
        personality(ADDR_NO_RANDOMIZE); /* unsupported: randomised, as before */
        execl(xp_load_exe, "tokbench", "_load", s->path, w, s->cache, fd, (char *)NULL);
        child_report_t r = {0};
        snprintf(r.msg, sizeof r.msg, "load: exec %.200s: %s", xp_load_exe, strerror(errno));
        _exit(write(fds[1], &r, sizeof r) == (ssize_t)sizeof r ? 0 : 1);
    }
    close(fds[1]);
    size_t got = 0;
    while (got < sizeof *r) {
        ssize_t n = read(fds[0], (char *)r + got, sizeof *r - got);
        if (n <= 0 && !(n < 0 && errno == EINTR))
            break;
        got += n > 0 ? (size_t)n : 0;
    }
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (got != sizeof *r)
        return tb_fail(err, "%s: the loading process ended without a report "
                            "(status %d)", s->path, status);
    if (!r->ok)
        return tb_fail(err, "%s", r->msg);
    return 0;
}

static int record(xp_env_t *env, const load_t *s, int way, const char *source,
                  const char *metric, unsigned rep, double value,
                  uint32_t vocab_size, tb_err_t *err)
{
    xp_meas_t m = {.rep = rep, .value = value, .bytes = s->file_bytes,
                   .items = vocab_size};
    snprintf(m.source, sizeof m.source, "%s", source);
    snprintf(m.impl, sizeof m.impl, "%s", way_impl[way]);
    snprintf(m.metric, sizeof m.metric, "%s", metric);
    return xp_env_record(env, &m, err);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median peak of a way over the file's size, and the file's size. */
static int record_static(xp_env_t *env, const load_t *s, int way, double *peaks,
                         unsigned n, uint32_t vocab_size, tb_err_t *err)
{
    qsort(peaks, n, sizeof *peaks, by_value);
    double per_byte =
        s->file_bytes ? peaks[n / 2] * 1024.0 / (double)s->file_bytes : 0;
    return record(env, s, way, "static", "file_bytes", 0, (double)s->file_bytes,
                  vocab_size, err) ||
                   record(env, s, way, "static", "rss_per_file_byte", 0, per_byte,
                          vocab_size, err)
               ? -1
               : 0;
}

static int load_extra(void *state, const xp_row_t *row, xp_env_t *env,
                      tb_err_t *err)
{
    const load_t *s = state;
    unsigned reps = row->reps ? row->reps : 5;
    double *peaks = calloc(2 * (size_t)reps, sizeof *peaks);
    if (!peaks)
        return tb_fail(err, "out of memory");
    child_report_t r = {0};
    /* the compiled file written in a child too, so that this process's
     * heap stays as it was for the children forked after */
    int rc = load_once(s, WAY_WRITE, &r, err);
    for (unsigned i = 0; i < reps && !rc; i++)
        for (int k = 0; k < WAYS && !rc; k++) {
            int way = (int)(i + k) % WAYS; /* who goes first alternates */
            rc = load_once(s, way, &r, err) ||
                 record(env, s, way, "rusage", "cpu_ms", i, r.cpu_ms,
                        r.vocab_size, err) ||
                 record(env, s, way, "rusage", "peak_rss_kb", i, r.peak_kb,
                        r.vocab_size, err);
            peaks[way * reps + i] = r.peak_kb;
        }
    for (int way = 0; way < WAYS && !rc; way++)
        rc = record_static(env, s, way, peaks + way * reps, reps, r.vocab_size, err);
    free(peaks);
    return rc ? -1 : 0;
}

/* Removes the case's cache folder and the compiled files in it. */
static void load_teardown(void *state)
{
    load_t *s = state;
    DIR *d = opendir(s->cache);
    struct dirent *e;
    char file[4096];
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.' &&
            snprintf(file, sizeof file, "%s/%s", s->cache, e->d_name) < (int)sizeof file)
            unlink(file);
    if (d)
        closedir(d);
    rmdir(s->cache);
    free(s);
}

const xp_driver_t xp_driver_load = {
    .name = "load",
    .summary = "tok_load of the row's vocabulary in a fresh child per repetition, "
               "from the source and from the compiled cache: CPU ms and peak "
               "resident memory of the load",
    .setup = load_setup,
    .extra = load_extra,
    .teardown = load_teardown,
    .default_reps = 5,
};
