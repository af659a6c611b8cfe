/* cmd_run: `tokbench run [SUITE] [--db FILE] [--shard K/N]` and the hidden
 * `_case` sub-command that the callgrind source re-runs (see runner.h). */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_results.h"
#include "../drivers/driver.h"
#include "../drivers/runner.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    stop_requested = sig;
}

/* No SA_RESTART: a blocking wait for a child must return so the run can
 * stop promptly. */
static void catch_stop_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

static void progress(void *arg, size_t done, size_t total, const xp_row_t *row,
                     const char *status, const char *message)
{
    (void)arg;
    if (!isatty(2))
        return;
    fprintf(stderr, "[%zu/%zu] %s %s %s %s: %s%s%s\n", done, total, row->experiment,
            row->vocab, row->layout, row->corpus, status, message ? " - " : "",
            message ? message : "");
}

static int usage(FILE *out)
{
    fprintf(out,
            "usage: tokbench run [SUITE] [--db FILE] [--reps N] [--cpu N] [--quiet]\n"
            "                    [--shard K/N [--shard-key KEY]]\n"
            "Runs every case of SUITE (default experiments/suites/default.csv) and\n"
            "stores runs, cases and raw repetitions in FILE (default %s).\n"
            "Ctrl-C stops after storing what was measured; the run stays incomplete.\n"
            "Exits 1 when a case failed, unless its options say expect=fail (then a\n"
            "case that ran fails the run instead) or needs=PATH and PATH is absent\n"
            "(the case does not run), 130 when interrupted.\n"
            "--shard K/N runs shard K (1..N) of the suite, so that N processes, on\n"
            "one machine or many, together run it once: the row at position i runs\n"
            "whole in shard i mod N + 1, except a case of many items (maskbench),\n"
            "which every shard runs on the items i of its selection with\n"
            "i mod N = K - 1.  The shards of one run share a key, by default the git\n"
            "commit and the suite's checksum (--shard-key KEY sets it, to tell two\n"
            "sharded runs of one commit apart); `tokbench merge OUT.db r1.db ...`\n"
            "joins them into one run.  On one machine, give each its own CPU:\n"
            "  for k in 1 2; do tokbench run S.csv --shard $k/2 --cpu $((k-1)) --db r$k.db &\n"
            "  done; wait; tokbench merge all.db r1.db r2.db; tokbench report --db all.db --out R\n",
            XP_DEFAULT_DB);
    return out == stdout ? 0 : 2;
}

static int parse_uint(const char *s, unsigned *out)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || v > 1000000)
        return -1;
    *out = (unsigned)v;
    return 0;
}

/* Says once, in words, which counter sources this machine lacks. */
static void say_missing_sources(const char *detail)
{
    for (const char *line = detail; *line;) {
        size_t n = strcspn(line, "\n");
        if (memmem(line, n, ": unavailable", 13))
            fprintf(stderr, "note: %.*s\n", (int)n, line);
        line += n + (line[n] == '\n');
    }
}

/* "K/N" with 1 <= K <= N. */
static int parse_shard(const char *s, xp_run_opts_t *o)
{
    char *end;
    unsigned long k = strtoul(s, &end, 10), n;
    if (end == s || *end != '/' || end[1] < '0' || end[1] > '9')
        return -1;
    n = strtoul(end + 1, &end, 10);
    if (*end || k < 1 || k > n || n > 1000000)
        return -1;
    o->shard = (unsigned)k, o->shards = (unsigned)n;
    return 0;
}

/* Fills o from argv; returns -1 on a usage error. */
static int parse_args(int argc, char **argv, xp_run_opts_t *o, int *quiet)
{
    unsigned cpu;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--db") && i + 1 < argc)
            o->db_path = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc && !parse_uint(argv[i + 1], &o->reps))
            i++;
        else if (!strcmp(argv[i], "--cpu") && i + 1 < argc && !parse_uint(argv[i + 1], &cpu))
            o->cpu = (int)cpu, i++;
        else if (!strcmp(argv[i], "--shard") && i + 1 < argc) {
            if (parse_shard(argv[++i], o)) {
                fprintf(stderr, "tokbench run: --shard %s: want K/N, 1 <= K <= N\n", argv[i]);
                return -1;
            }
        }
        else if (!strcmp(argv[i], "--shard-key") && i + 1 < argc && argv[i + 1][0])
            o->shard_key = argv[++i];
        else if (!strcmp(argv[i], "--quiet"))
            *quiet = 1;
        else if (argv[i][0] != '-')
            o->suite_path = argv[i];
        else
            return -1;
    }
    return o->shard_key && !o->shards ? -1 : 0;
}

int xp_cmd_run(int argc, char **argv)
{
    if (xp_wants_help(argc, argv))
        return usage(stdout);
    tb_err_t err;
    const char *root = xp_data_root(&err);
    char exe[PATH_MAX], default_suite[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    snprintf(default_suite, sizeof default_suite, "%s/experiments/suites/default.csv",
             root ? root : ".");
    xp_run_opts_t o = {.suite_path = default_suite, .db_path = XP_DEFAULT_DB,
                       .exe = n > 0 ? exe : NULL, .root = root ? root : ".",
                       .cpu = -1, .stop = &stop_requested, .progress = progress};
    int quiet = 0;
    if (parse_args(argc, argv, &o, &quiet))
        return usage(stderr);
    catch_stop_signals();
    xp_run_result_t res;
    if (xp_run_suite(&o, &res, &err))
        return xp_die(&err);
    if (!quiet) {
        xp_db_t *db = xp_db_open(o.db_path, 0, &err);
        if (!db || xp_print_summary(stdout, db, res.run, &err))
            fprintf(stderr, "tokbench: summary: %s\n", err.msg);
        xp_db_close(db);
    }
    fflush(stdout);
    say_missing_sources(res.prov.sources_detail);
    fprintf(stderr, "run %lld %s: %zu ok, %zu failed of %zu cases", (long long)res.run,
            res.interrupted ? "INCOMPLETE (interrupted)" : "complete", res.ok, res.failed,
            res.total);
    if (o.shards)
        fprintf(stderr, " (shard %u/%u)", o.shard, o.shards);
    if (res.expected_failures)
        fprintf(stderr, " (%zu failed as the suite expects)", res.expected_failures);
    if (res.unexpected_ok)
        fprintf(stderr, "; %zu marked expect=fail ran: update the suite", res.unexpected_ok);
    fprintf(stderr, ", in %s\n", o.db_path);
    if (res.interrupted)
        return 130;
    return res.failed > res.expected_failures || res.unexpected_ok ? 1 : 0;
}

/* _case EXPERIMENT VOCAB LAYOUT PATTERN CORPUS OPTIONS */
int xp_cmd_case(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: tokbench _case EXPERIMENT VOCAB LAYOUT PATTERN "
                        "CORPUS OPTIONS (internal: the callgrind re-run)\n");
        return 2;
    }
    xp_row_t row;
    tb_err_t err;
    const char *f[7] = {argv[1], argv[2], argv[3], argv[4], argv[5], NULL, argv[6]};
    if (xp_row_init(&row, f, 1)) {
        fprintf(stderr, "tokbench: out of memory\n");
        return 1;
    }
    int rc = xp_case_once(&row, &err);
    xp_row_free(&row);
    return rc ? xp_die(&err) : 0;
}

/* _load PATH WAY CACHE_DIR FD: the load experiment's child (drv_load.c). */
int xp_cmd_load(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: tokbench _load PATH WAY CACHE_DIR FD (internal: the load "
                        "experiment's fresh process)\n");
        return 2;
    }
    xp_load_child(argv[1], atoi(argv[2]), argv[3], atoi(argv[4]));
    return 1; /* not reached */
}
