/* counters_callgrind: re-running one case under valgrind's callgrind and
 * reading its simulated counts back (see counters.h). */
#include "counters.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int in_path(const char *prog)
{
    const char *path = getenv("PATH");
    char buf[4096];
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, prog);
        if (n && access(buf, X_OK) == 0)
            return 1;
        p += n + (p[n] == ':');
    }
    return 0;
}

/* gcc says AddressSanitizer with a macro, clang (before 17) with a feature. */
#if defined(__SANITIZE_ADDRESS__)
#define XP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define XP_ASAN 1
#endif
#endif

int xp_callgrind_usable(char *why, size_t size)
{
#ifdef XP_ASAN
    (void)in_path;
    snprintf(why, size, "this tokbench is built with AddressSanitizer, which "
             "cannot run under valgrind; use a build without SANITIZE");
    return 0;
#else
    if (!in_path("valgrind")) {
        snprintf(why, size, "valgrind is not installed (not found in PATH)");
        return 0;
    }
    snprintf(why, size, "valgrind callgrind with cache and branch simulation");
    return 1;
#endif
}

unsigned long long xp_cg_get(const xp_cg_counts_t *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->name[i], name))
            return c->val[i];
    return 0;
}

static int parse_events(char *line, xp_cg_counts_t *c)
{
    c->n = 0;
    for (char *tok = strtok(line, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
        if (c->n == XP_CG_MAX_EVENTS || strlen(tok) >= sizeof c->name[0])
            return -1;
        strcpy(c->name[c->n++], tok);
    }
    return 0;
}

static int parse_values(char *line, xp_cg_counts_t *c)
{
    int i = 0;
    for (char *tok = strtok(line, " \t\r\n"); tok && i < c->n; tok = strtok(NULL, " \t\r\n")) {
        char *end;
        c->val[i++] = strtoull(tok, &end, 10);
        if (*end)
            return -1;
    }
    /* callgrind may leave trailing zero counts out */
    for (; i < c->n; i++)
        c->val[i] = 0;
    return 0;
}

int xp_callgrind_parse(const char *path, xp_cg_counts_t *c, tb_err_t *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return tb_fail(err, "%s: %s", path, strerror(errno));
    memset(c, 0, sizeof *c);
    char line[4096];
    int have_events = 0, have_totals = 0, lineno = 0, rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        if (!strncmp(line, "events:", 7)) {
            rc = parse_events(line + 7, c);
            have_events = 1;
        } else if (have_events && !have_totals &&
                   (!strncmp(line, "totals:", 7) || !strncmp(line, "summary:", 8))) {
            rc = parse_values(strchr(line, ':') + 1, c);
            /* "totals:" comes last and wins over the header's "summary:" */
            have_totals = line[0] == 't';
        }
        if (rc)
            rc = tb_fail(err, "%s:%d: malformed callgrind line", path, lineno);
    }
    fclose(f);
    if (!rc && !have_events)
        rc = tb_fail(err, "%s: no 'events:' line; not a callgrind output file", path);
    return rc;
}

/* Child side: run valgrind with stdout to /dev/null, stderr to errfd. */
static void exec_valgrind(char *const argv[], const char *outfile, int errfd)
{
    char out_opt[4200], toggle[64];
    snprintf(out_opt, sizeof out_opt, "--callgrind-out-file=%s", outfile);
    snprintf(toggle, sizeof toggle, "--toggle-collect=%s", XP_MEASURED_FN);
    size_t n = 0;
    while (argv[n])
        n++;
    char **args = calloc(n + 10, sizeof *args);
    if (!args)
        _exit(127);
    size_t k = 0;
    args[k++] = "valgrind";
    args[k++] = "--tool=callgrind";
    args[k++] = "--cache-sim=yes";
    args[k++] = "--branch-sim=yes";
    args[k++] = "--collect-atstart=no";
    args[k++] = toggle;
    args[k++] = out_opt;
    for (size_t i = 0; i < n; i++)
        args[k++] = argv[i];
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0)
        dup2(devnull, 1);
    dup2(errfd, 2);
    execvp("valgrind", args);
    _exit(127);
}

/* The last few hundred bytes of the child's stderr, for the message. */
static void tail_of(int fd, char *buf, size_t size)
{
    off_t end = lseek(fd, 0, SEEK_END);
    off_t from = end > (off_t)size - 1 ? end - (off_t)size + 1 : 0;
    ssize_t n = pread(fd, buf, size - 1, from);
    buf[n > 0 ? n : 0] = 0;
    for (char *p = buf; *p; p++)
        if (*p == '\n')
            *p = ' ';
}

static int wait_child(pid_t pid, int *status)
{
    for (;;) {
        if (waitpid(pid, status, 0) == pid)
            return 0;
        if (errno != EINTR)
            return -1;
        /* we were interrupted (Ctrl-C): the simulation is not wanted now */
        kill(pid, SIGTERM);
    }
}

int xp_callgrind_run(char *const argv[], xp_cg_counts_t *c, tb_err_t *err)
{
    char outfile[] = "/tmp/tokbench-cg-XXXXXX", errfile[] = "/tmp/tokbench-cgerr-XXXXXX";
    int ofd = mkstemp(outfile);
    int efd = ofd < 0 ? -1 : mkstemp(errfile);
    if (ofd < 0 || efd < 0) {
        if (ofd >= 0)
            close(ofd), unlink(outfile);
        return tb_fail(err, "callgrind: cannot create a file in /tmp: %s", strerror(errno));
    }
    close(ofd);
    int rc = -1, status = 0;
    pid_t pid = fork();
    if (pid == 0)
        exec_valgrind(argv, outfile, efd);
    if (pid < 0)
        tb_fail(err, "callgrind: fork: %s", strerror(errno));
    else if (wait_child(pid, &status))
        tb_fail(err, "callgrind: waitpid: %s", strerror(errno));
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char tail[400];
        tail_of(efd, tail, sizeof tail);
        tb_fail(err, "callgrind run of %s %s (status %d): %s", argv[0],
                WIFEXITED(status) ? "failed" : "was killed",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), tail);
    } else
        rc = xp_callgrind_parse(outfile, c, err);
    close(efd);
    unlink(errfile);
    unlink(outfile);
    return rc;
}
