/* jsts: the JSON Schema Test Suite, group by group (see jsts.h). */
#include "jsts.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "../../base/buf.h"
#include "../../grammar/gram.h"
#include "../../grammar/schema.h"
#include "../drivers/pyjson.h"

const char *const xp_jsts_verdicts[XP_JSTS_N] = {"passing", "refused", "wrong", "crash"};

#define VERDICT_EXIT 40 /* a child's exit status: VERDICT_EXIT + verdict */

typedef TB_VEC(char *) names_t;

const char *xp_jsts_draft_dir(const char *draft)
{
    if (!strcmp(draft, "2020-12") || !strcmp(draft, "draft2020-12"))
        return "draft2020-12";
    if (!strcmp(draft, "7") || !strcmp(draft, "draft7"))
        return "draft7";
    return NULL;
}

/* The verdict of one group, in this (child) process; a line of detail
 * (the compile error, the instance at fault) goes to msg. */
static int run_group(json_t *group, const gr_schema_opts_t *opts, char *msg, size_t size)
{
    tb_err_t err;
    gr_cfg_t cfg;
    char *text = json_dumps(json_object_get(group, "schema"), JSON_COMPACT | JSON_ENCODE_ANY);
    if (!text || gr_cfg_init(&cfg, "jsts", &err))
        return snprintf(msg, size, "out of memory"), XP_JSTS_CRASH;
    int rc = gr_schema_compile(&cfg, text, strlen(text), opts, &err);
    free(text);
    if (rc) {
        gr_cfg_free(&cfg);
        snprintf(msg, size, "%.1000s", err.msg);
        if (rc != GR_SCHEMA_EMPTY)
            return XP_JSTS_REFUSED;
        /* the empty language: right iff no instance is valid */
        json_t *t;
        size_t k;
        json_array_foreach(json_object_get(group, "tests"), k, t) {
            if (json_is_true(json_object_get(t, "valid")))
                return snprintf(msg, size, "instance %zu valid, but %.900s", k, err.msg),
                       XP_JSTS_WRONG;
        }
        return XP_JSTS_PASSING;
    }
    gr_gram_t *g = gr_gram_new(&cfg, NULL, &err);
    if (!g) {
        snprintf(msg, size, "%.1000s", err.msg);
        return XP_JSTS_REFUSED;
    }
    json_t *tests = json_object_get(group, "tests"), *t;
    size_t k;
    int verdict = XP_JSTS_PASSING;
    json_array_foreach(tests, k, t) {
        tb_buf_t b = {0};
        int valid = json_is_true(json_object_get(t, "valid"));
        if (xp_py_dumps(json_object_get(t, "data"), &b)) {
            snprintf(msg, size, "instance %zu: out of memory", k);
            verdict = XP_JSTS_CRASH;
            break;
        }
        uint32_t st = gr_feed(g, GR_START, b.data, b.len, NULL);
        int ok = st != GR_DEAD && gr_accepting(g, st);
        if (g->failed) {
            snprintf(msg, size, "instance %zu: %.900s", k, g->err.msg);
            verdict = XP_JSTS_CRASH;
        } else if (ok != valid) {
            const char *desc = json_string_value(json_object_get(t, "description"));
            snprintf(msg, size, "instance %zu (%s) %s: %.*s", k, desc ? desc : "",
                     valid ? "valid, refused" : "invalid, accepted",
                     (int)(b.len > 200 ? 200 : b.len), (const char *)b.data);
            verdict = XP_JSTS_WRONG;
        }
        tb_buf_free(&b);
        if (verdict != XP_JSTS_PASSING)
            break;
    }
    gr_gram_free(g);
    return verdict;
}

/* Runs the group in a child (alarm: timeout); the verdict, msg the
 * detail; -1 with err set when no child can be started. */
static int group_verdict(json_t *group, const gr_schema_opts_t *opts, unsigned timeout,
                         char *msg, size_t size, tb_err_t *err)
{
    int fd[2];
    msg[0] = 0;
    fflush(stdout);
    fflush(stderr);
    if (pipe(fd))
        return tb_fail(err, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return tb_fail(err, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fd[0]);
        alarm(timeout);
        char m[1024] = "";
        int v = run_group(group, opts, m, sizeof m);
        size_t n = strlen(m);
        if (write(fd[1], m, n) != (ssize_t)n)
            _exit(100);
        _exit(VERDICT_EXIT + v); /* apart from a sanitizer's exit code 1 */
    }
    close(fd[1]);
    size_t got = 0;
    ssize_t r;
    while (got + 1 < size && (r = read(fd[0], msg + got, size - 1 - got)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        got += (size_t)r;
    }
    msg[got] = 0;
    close(fd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return tb_fail(err, "waitpid: %s", strerror(errno));
    if (WIFSIGNALED(status)) {
        snprintf(msg, size, "signal %d%s", WTERMSIG(status),
                 WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
        return XP_JSTS_CRASH;
    }
    int code = WEXITSTATUS(status);
    if (code >= VERDICT_EXIT && code < VERDICT_EXIT + XP_JSTS_N)
        return code - VERDICT_EXIT;
    snprintf(msg + strlen(msg), size - strlen(msg), " (exit %d)", code);
    return XP_JSTS_CRASH;
}

/* The *.json names in dir, sorted, each prefixed with `prefix`, appended
 * to *names; a missing dir adds none. */
static int json_files(const char *dir, const char *prefix, names_t *names, tb_err_t *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t first = names->len;
    int rc = 0;
    for (struct dirent *e; !rc && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json"))
            continue;
        char *p = malloc(strlen(prefix) + len + 1);
        if (!p || tb_vec_push(names, p)) {
            free(p);
            rc = tb_fail(err, "out of memory");
            break;
        }
        sprintf(p, "%s%s", prefix, e->d_name);
    }
    closedir(d);
    if (!rc)
        qsort(names->data + first, names->len - first, sizeof *names->data, tb_cmp_strs);
    return rc;
}

static json_t *load_groups(const char *path, tb_err_t *err)
{
    json_error_t je;
    json_t *groups = json_load_file(path, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    if (!groups) /* integers beyond 64 bits (optional/bignum.json) */
        groups = json_load_file(path, JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL,
                                &je);
    if (!groups)
        return tb_fail(err, "%s:%d: %s", path, je.line, je.text), NULL;
    if (!json_is_array(groups)) {
        json_decref(groups);
        return tb_fail(err, "%s: not an array of test groups", path), NULL;
    }
    return groups;
}

/* The groups of one keyword file (rel: its path under the draft's folder). */
static int run_file(const char *dir, const char *draft, const char *rel, int optional,
                    unsigned timeout, volatile sig_atomic_t *stop, xp_jsts_cb_t cb, void *ctx,
                    tb_err_t *err)
{
    char path[4096], file[512];
    snprintf(path, sizeof path, "%.3500s/%.500s", dir, rel);
    json_t *groups = load_groups(path, err);
    if (!groups)
        return -1;
    snprintf(file, sizeof file, "%.*s", (int)(strlen(rel) - 5), rel);
    /* what http://localhost:1234/ means in the suite: remotes/ beside tests/ */
    char remotes[4200];
    snprintf(remotes, sizeof remotes, "%.4000s/../../remotes", dir);
    gr_schema_opts_t opts = {
        .remote_dir = remotes,
        .draft = !strcmp(draft, "draft7") ? 7 : 2020,
        .strict_oneof = 1, /* oneOf as anyOf would accept what two branches match */
        .format_annotation = strncmp(rel, "optional/format/", 16) != 0,
    };
    int rc = 0;
    size_t i;
    json_t *g;
    json_array_foreach(groups, i, g) {
        if (rc || (stop && *stop))
            break;
        char msg[1024];
        int v = group_verdict(g, &opts, timeout, msg, sizeof msg, err);
        if (v < 0) {
            rc = -1;
            break;
        }
        const char *desc = json_string_value(json_object_get(g, "description"));
        xp_jsts_group_t r = {.draft = draft, .file = file, .index = i,
                             .description = desc ? desc : "", .optional = optional,
                             .verdict = v, .detail = msg};
        rc = cb(ctx, &r, err);
    }
    json_decref(groups);
    return rc;
}

int xp_jsts_check(const char *tests, const char *draft, tb_err_t *err)
{
    const char *name = xp_jsts_draft_dir(draft);
    if (!name)
        return tb_fail(err, "JSON Schema Test Suite: draft '%s' is not run (2020-12 or 7)",
                       draft);
    char dir[4000];
    struct stat st;
    snprintf(dir, sizeof dir, "%.3900s/%s", tests, name);
    if (stat(dir, &st) || !S_ISDIR(st.st_mode))
        return tb_fail(err, "JSON Schema Test Suite folder '%s': %s (the suite's tests/ "
                       "folder: ../shared/json-schema-test-suite/tests; see docs/json-schema.md)", dir,
                       stat(dir, &st) ? strerror(errno) : "not a folder");
    return 0;
}

int xp_jsts_run(const char *tests, const char *draft, int optional, unsigned timeout,
                volatile sig_atomic_t *stop, xp_jsts_cb_t cb, void *ctx, tb_err_t *err)
{
    const char *name = xp_jsts_draft_dir(draft);
    char dir[4000], sub[4100];
    if (xp_jsts_check(tests, draft, err))
        return -1;
    snprintf(dir, sizeof dir, "%.3900s/%s", tests, name);
    static const char *const subs[] = {"", "optional/", "optional/format/"};
    names_t names = {0};
    size_t nreq = 0;
    int rc = 0;
    for (size_t s = 0; !rc && s < (optional ? 3u : 1u); s++) {
        snprintf(sub, sizeof sub, "%s/%s", dir, subs[s]);
        rc = json_files(sub, subs[s], &names, err);
        if (!s)
            nreq = names.len;
    }
    if (!rc && !nreq)
        rc = tb_fail(err, "JSON Schema Test Suite folder '%s' holds no keyword file (*.json)",
                     dir);
    for (size_t i = 0; !rc && i < names.len && !(stop && *stop); i++)
        rc = run_file(dir, name, names.data[i], i >= nreq, timeout, stop, cb, ctx, err);
    for (size_t i = 0; i < names.len; i++)
        free(names.data[i]);
    free(names.data);
    return rc;
}
