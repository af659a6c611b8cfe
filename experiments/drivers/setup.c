/* setup: see setup.h. */
#include "setup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../tok/tokenizer.h"
#include "../cli/cli.h"
#include "../refs/reference.h"

int xp_row_vocab(const xp_row_t *row, xp_env_t *env, char *path, size_t size,
                 tb_err_t *err)
{
    if (!row->vocab[0])
        return tb_fail(err, "field 'vocabulary' is empty");
    if (xp_resolve_spec(row->vocab, path, size, err) ||
        xp_env_input(env, "vocabulary", path, err))
        return tb_wrap(err, "vocabulary '%s'", row->vocab);
    return 0;
}

int xp_vocab_keys(const char *path, trie_keys_t *keys, size_t *vocab_size, tb_err_t *err)
{
    tok_tokenizer_t *tok = tok_load(path, err);
    if (!tok)
        return -1;
    int rc = trie_keys_from_vocab(keys, tok_vocab(tok), TRIE_SPECIALS_OMIT, err);
    if (vocab_size)
        *vocab_size = tok_vocab(tok)->size;
    tok_free(tok);
    return rc;
}

int xp_row_keys(const xp_row_t *row, xp_env_t *env, trie_keys_t *keys, size_t *vocab_size,
                tb_err_t *err)
{
    char path[4096];
    if (xp_row_vocab(row, env, path, sizeof path, err))
        return -1;
    return xp_vocab_keys(path, keys, vocab_size, err);
}

trie_t *xp_build_timed(const trie_layout_t *layout, const trie_keys_t *keys, double *ns,
                       tb_err_t *err)
{
    double t0 = xp_now_ns();
    trie_t *t = trie_build(layout, keys, err);
    *ns = xp_now_ns() - t0;
    return t;
}

trie_t *xp_load_trie(const char *spec, const char *name, trie_keys_t *keys,
                     tok_tokenizer_t **tok, tb_err_t *err)
{
    const trie_layout_t *layout = trie_layout_find(name);
    if (!layout) {
        tb_fail(err, "no trie layout '%s'", name);
        return NULL;
    }
    char path[PATH_MAX];
    if (xp_resolve_spec(spec, path, sizeof path, err) || !(*tok = tok_load(path, err)))
        return NULL;
    if (trie_keys_from_vocab(keys, tok_vocab(*tok), TRIE_SPECIALS_OMIT, err))
        return NULL;
    return trie_build(layout, keys, err);
}

/* Child side: stdin from `in`, stdout to outfd, stderr discarded. */
static void exec_child(char *const argv[], const char *in, int outfd)
{
    int fd = open(in, O_RDONLY);
    int null = open("/dev/null", O_WRONLY);
    if (fd < 0 || null < 0)
        _exit(126);
    dup2(fd, 0);
    dup2(outfd, 1);
    dup2(null, 2);
    execvp(argv[0], argv);
    _exit(127);
}

int xp_run_capture(char *const argv[], const char *in, tb_buf_t *out, double *seconds,
                   tb_err_t *err)
{
    int pfd[2];
    if (pipe(pfd))
        return tb_fail(err, "pipe: %s", strerror(errno));
    double t0 = xp_now_ns();
    pid_t pid = fork();
    if (pid == 0) {
        close(pfd[0]);
        exec_child(argv, in, pfd[1]);
    }
    close(pfd[1]);
    if (pid < 0) {
        close(pfd[0]);
        return tb_fail(err, "fork: %s", strerror(errno));
    }
    char chunk[4096];
    ssize_t n = 1;
    int rc = 0;
    double limit = xp_ref_timeout_s();
    struct pollfd pf = {.fd = pfd[0], .events = POLLIN};
    while (n > 0 || (n < 0 && errno == EINTR)) {
        double left_ms = limit * 1e3 - (xp_now_ns() - t0) * 1e-6;
        if (left_ms <= 0) {
            kill(pid, SIGKILL);
            rc = tb_fail(err, "%s timed out after %g s (TOKBENCH_REF_TIMEOUT) "
                              "and was killed", argv[0], limit);
            break;
        }
        if (poll(&pf, 1, left_ms > 1e6 ? 1000000 : (int)left_ms + 1) <= 0)
            continue;
        n = read(pfd[0], chunk, sizeof chunk);
        if (n > 0 && tb_buf_put(out, chunk, (size_t)n))
            rc = tb_fail(err, "out of memory");
    }
    close(pfd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    *seconds = (xp_now_ns() - t0) * 1e-9;
    if (rc)
        return rc;
    if (tb_buf_putc(out, 0))
        rc = tb_fail(err, "out of memory");
    if (!rc && (!WIFEXITED(status) || WEXITSTATUS(status)))
        rc = tb_fail(err, "%s exited with status %d%s", argv[0],
                     WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
                     WIFEXITED(status) && WEXITSTATUS(status) == 127 ? " (not found)" : "");
    return rc;
}

double xp_rss_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size, resident = 0;
    if (f) {
        if (fscanf(f, "%lu %lu", &size, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return (double)resident * (double)sysconf(_SC_PAGESIZE) / 1024.0;
}

double xp_peak_rss_kb(void)
{
    char line[256];
    double kb = 0;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6))
            kb = strtod(line + 6, NULL);
    if (f)
        fclose(f);
    return kb;
}

int xp_peak_rss_reset(void)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY);
    int ok = fd >= 0 && write(fd, "5", 1) == 1;
    if (fd >= 0)
        close(fd);
    return ok ? 0 : -1;
}
