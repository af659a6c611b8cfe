/*
 * reference: running the reference programs (reference.h).
 *
 * The time limit is polled: waitpid(WNOHANG) every 20 ms until the child
 * ends or the deadline passes, so that a hung reference (a node binding
 * deadlocked in its thread pool, say) becomes an error naming it, not a
 * hang of tokbench.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../cli/cli.h"
#include "reference.h"

static const char *const ref_names[] = {
    [XP_REF_HF] = "ref.js hf",
    [XP_REF_HF_OFFICIAL] = "ref.js hf-official",
    [XP_REF_TIKTOKEN] = "ref.js tiktoken",
    [XP_REF_SPM] = "spm_encode",
};

const char *xp_ref_name(xp_ref_kind_t k)
{
    return ref_names[k];
}

int xp_ref_kinds(tok_format_t f, xp_ref_kind_t *out, tb_err_t *err)
{
    switch (f) {
    case TOK_FORMAT_HF_JSON:
        out[0] = XP_REF_HF;
        out[1] = XP_REF_HF_OFFICIAL;
        return 2;
    case TOK_FORMAT_TIKTOKEN:
        out[0] = XP_REF_TIKTOKEN;
        return 1;
    case TOK_FORMAT_SPM_MODEL:
        out[0] = XP_REF_SPM;
        return 1;
    default:
        return tb_fail(err, "no reference program for %s", tok_format_name(f));
    }
}

int xp_ref_guess_format(const char *path, tok_format_t *f, tb_err_t *err)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return tb_fail(err, "%s: %s", path, strerror(errno));
    uint8_t d[4096];
    size_t n = fread(d, 1, sizeof d, fp), i = 0;
    fclose(fp);
    if (n >= 3 && d[0] == 0xEF && d[1] == 0xBB && d[2] == 0xBF)
        i = 3;
    while (i < n && (d[i] == ' ' || d[i] == '\n' || d[i] == '\r' || d[i] == '\t'))
        i++;
    if (n >= 4 && !memcmp(d, "GGUF", 4))
        *f = TOK_FORMAT_GGUF;
    else if (i < n && d[i] == '{')
        *f = memmem(d, n, "\"bpe_ranks\"", 11) || memmem(d, n, "\"pat_str\"", 9)
                 ? TOK_FORMAT_TIKTOKEN
                 : TOK_FORMAT_HF_JSON;
    else
        *f = n && d[0] == 0x0A ? TOK_FORMAT_SPM_MODEL : TOK_FORMAT_TIKTOKEN;
    return 0;
}

/* Fills r->argv with the command of reference k for the file at path. */
static int ref_argv(xp_ref_t *r, xp_ref_kind_t k, const char *path, tb_err_t *err)
{
    r->kind = k;
    if (k == XP_REF_SPM) {
        const char *a[] = {"spm_encode", "--model", path, "--output_format=id",
                           NULL};
        memcpy(r->argv, a, sizeof a);
        return 0;
    }
    const char *root = xp_data_root(err);
    if (!root)
        return -1;
    snprintf(r->script, sizeof r->script, "%s/scripts/ref/ref.js", root);
    if (access(r->script, R_OK))
        return tb_fail(err, "%s: missing; run 'make setup'", r->script);
    const char *a[] = {"node", r->script, ref_names[k] + strlen("ref.js "),
                       path, NULL};
    memcpy(r->argv, a, sizeof a);
    return 0;
}

int xp_ref_start(xp_ref_t *r, xp_ref_kind_t k, const char *path,
                 const char *in, const char *out, tb_err_t *err)
{
    if (ref_argv(r, k, path, err))
        return -1;
    fflush(stdout);
    fflush(stderr);
    r->pid = fork();
    if (r->pid < 0)
        return tb_fail(err, "fork: %s", strerror(errno));
    if (r->pid == 0) {
        if (!freopen(in, "r", stdin) || !freopen(out, "w", stdout))
            _exit(127);
        execvp(r->argv[0], (char *const *)r->argv);
        fprintf(stderr, "tokbench: cannot run %s: %s\n", r->argv[0],
                strerror(errno));
        _exit(127);
    }
    return 0;
}

double xp_ref_timeout_s(void)
{
    const char *s = getenv("TOKBENCH_REF_TIMEOUT");
    double t = s ? atof(s) : 0;
    return t > 0 ? t : 600;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int xp_ref_finish(xp_ref_t *r, int stop, tb_err_t *err)
{
    int status, timed_out = 0;
    double limit = xp_ref_timeout_s(), deadline = now_s() + limit;
    if (stop)
        kill(r->pid, SIGTERM);
    for (;;) {
        pid_t w = waitpid(r->pid, &status, WNOHANG);
        if (w == r->pid)
            break;
        if (w < 0 && errno != EINTR)
            return tb_fail(err, "waiting for %s: %s", ref_names[r->kind],
                           strerror(errno));
        if (!timed_out && now_s() > deadline) {
            timed_out = 1;
            kill(r->pid, SIGKILL);
        }
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    }
    if (stop)
        return -1;
    if (timed_out)
        return tb_fail(err, "reference %s %s timed out after %g s "
                            "(TOKBENCH_REF_TIMEOUT) and was killed",
                       ref_names[r->kind], r->argv[r->kind == XP_REF_SPM ? 2 : 3],
                       limit);
    if (!WIFEXITED(status) || WEXITSTATUS(status))
        return tb_fail(err, "reference %s %s failed (%s %d)", ref_names[r->kind],
                       r->argv[r->kind == XP_REF_SPM ? 2 : 3],
                       WIFEXITED(status) ? "exit status" : "signal",
                       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    return 0;
}

int xp_ref_run(xp_ref_kind_t k, const char *path, const char *in,
               const char *out, tb_err_t *err)
{
    xp_ref_t r;
    return xp_ref_start(&r, k, path, in, out, err) ? -1
                                                   : xp_ref_finish(&r, 0, err);
}

/* Parses one output line of space-separated ids into ids. */
static int parse_ids(const uint8_t *s, size_t n, tok_ids_t *ids)
{
    ids->len = 0;
    for (size_t i = 0; i < n;) {
        if (s[i] == ' ' || s[i] == '\r') {
            i++;
            continue;
        }
        uint64_t v = 0;
        size_t start = i;
        while (i < n && s[i] >= '0' && s[i] <= '9' && v <= UINT32_MAX)
            v = v * 10 + (uint64_t)(s[i++] - '0');
        if (i == start || v > UINT32_MAX || tb_vec_push(ids, (uint32_t)v))
            return -1;
    }
    return 0;
}

int xp_ref_next_ids(const tb_buf_t *ref, size_t *at, size_t lineno,
                    tok_ids_t *ids, tb_err_t *err)
{
    const uint8_t *nl = *at < ref->len ? memchr(ref->data + *at, '\n', ref->len - *at)
                                       : NULL;
    if (!nl)
        return tb_fail(err, "the reference gave %zu output lines for more "
                            "input lines", lineno - 1);
    size_t end = (size_t)(nl - ref->data);
    if (parse_ids(ref->data + *at, end - *at, ids))
        return tb_fail(err, "reference output line %zu is not a list of ids",
                       lineno);
    *at = end + 1;
    return 0;
}

int xp_ref_tmpfile(const char *stem, char *path, size_t size, tb_err_t *err)
{
    snprintf(path, size, "%s/tokbench-%s-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", stem);
    int fd = mkstemp(path);
    if (fd < 0)
        return tb_fail(err, "%s: cannot create: %s", path, strerror(errno));
    close(fd);
    return 0;
}

int xp_ref_same_ids(const tok_ids_t *a, const tok_ids_t *b)
{
    return a->len == b->len &&
           (!a->len || !memcmp(a->data, b->data, a->len * sizeof *a->data));
}
