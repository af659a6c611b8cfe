/*
 * test_jsts: the official JSON Schema Test Suite
 * (../shared/json-schema-test-suite, or $JSTS_DIR) as a conformance test
 * of grammar/schema.h, drafts 2020-12 and 7.
 *
 * Every group {description, schema, tests} is compiled (draft 7's files
 * carry no $schema: compiled with gr_schema_opts_t.draft = 7; `format` an
 * annotation in the required groups, the default of 2019-09 and later and
 * what the suite's required format.json expects, an assertion in
 * optional/format/), then each instance, written as Python's json.dumps
 * writes it (experiments/drivers/pyjson.h), is fed byte by byte through
 * the grammar (grammar/gram.h: no tokenizer needed) and must be accepted
 * iff it is valid.  A group's verdict: passing, refused (a compile error:
 * what the compiler cannot write exactly; GR_SCHEMA_EMPTY, the empty
 * language, is no refusal: it is right when no instance is valid), wrong (a valid instance refused
 * or an invalid one accepted) or crash (a signal, a timeout, or a grammar
 * limit while feeding).  Each group runs in a child process so that a
 * crash is a verdict, not the end of the test.
 *
 * The test fails on a wrong verdict or a crash in the required groups of
 * either draft, except the groups of known_wrong[] (each with its reason),
 * and on a listed group that no longer goes wrong.  optional/ is counted
 * apart and never fails it.  A suite that is not there skips the test, with
 * a message.  JSTS_VERBOSE=1 prints every group that does not pass, with
 * the compiler's reason or the instance at fault.
 */
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "../experiments/drivers/pyjson.h"
#include "../grammar/gram.h"
#include "../grammar/schema.h"
#include "support.h"

/* Required groups that go wrong, with the reason: none may be added
 * without one, and each is checked to still go wrong. */
static const struct {
    const char *draft, *file, *group, *why;
} known_wrong[] = {
    /* Each: draft, keyword file, group description, reason. */
    /* $schema names a metaschema (a remote document) whose $vocabulary
     * leaves out validation, so `minimum` is an annotation there; the
     * compiler reads no metaschema and asserts it. */
    {"draft2020-12", "vocabulary",
     "schema that uses custom metaschema with with no validation vocabulary",
     "a custom metaschema's $vocabulary is not read"},
    {NULL, NULL, NULL, NULL},
};

enum { V_PASS, V_REFUSED, V_WRONG, V_CRASH, V_N };
#define VERDICT_EXIT 40 /* a child's exit status: VERDICT_EXIT + verdict */
static const char *const verdict_names[] = {"passing", "refused", "wrong", "crash"};

typedef struct {
    char name[96];
    int n[V_N], groups;
} tally_t;

#define MAX_FILES 128
typedef struct {
    tally_t files[MAX_FILES];
    size_t nfiles;
    tally_t total, optional;
    int unexpected; /* wrong or crashed required groups not listed */
} draft_tally_t;

static const char *suite_dir(void)
{
    static char dir[1024];
    const char *env = getenv("JSTS_DIR");
    const char *cands[] = {env, "../shared/json-schema-test-suite",
                           "/work/shared/json-schema-test-suite"};
    for (size_t i = 0; i < sizeof cands / sizeof *cands; i++) {
        struct stat st;
        if (!cands[i])
            continue;
        snprintf(dir, sizeof dir, "%s/tests", cands[i]);
        if (!stat(dir, &st) && S_ISDIR(st.st_mode))
            return cands[i];
        if (i == 0)
            return NULL; /* JSTS_DIR names the suite: no fallback */
    }
    return NULL;
}

static int verbose(void)
{
    const char *v = getenv("JSTS_VERBOSE");
    return v && *v && strcmp(v, "0");
}

/* The verdict of one group, in this (child) process; a line of detail
 * (the compile error, the instance at fault) goes to msg. */
static int run_group(json_t *group, const gr_schema_opts_t *opts, char *msg, size_t size)
{
    tb_err_t err;
    gr_cfg_t cfg;
    char *text = json_dumps(json_object_get(group, "schema"), JSON_COMPACT | JSON_ENCODE_ANY);
    if (!text || gr_cfg_init(&cfg, "jsts", &err))
        return snprintf(msg, size, "out of memory"), V_CRASH;
    int rc = gr_schema_compile(&cfg, text, strlen(text), opts, &err);
    free(text);
    if (rc) {
        gr_cfg_free(&cfg);
        snprintf(msg, size, "%.1000s", err.msg);
        if (rc != GR_SCHEMA_EMPTY)
            return V_REFUSED;
        /* the empty language: right iff no instance is valid */
        json_t *t;
        size_t k;
        json_array_foreach(json_object_get(group, "tests"), k, t) {
            if (json_is_true(json_object_get(t, "valid")))
                return snprintf(msg, size, "instance %zu valid, but %.900s", k, err.msg),
                       V_WRONG;
        }
        return V_PASS;
    }
    gr_gram_t *g = gr_gram_new(&cfg, NULL, &err);
    if (!g) {
        snprintf(msg, size, "%.1000s", err.msg);
        return V_REFUSED;
    }
    json_t *tests = json_object_get(group, "tests"), *t;
    size_t k;
    int verdict = V_PASS;
    json_array_foreach(tests, k, t) {
        tb_buf_t b = {0};
        int valid = json_is_true(json_object_get(t, "valid"));
        if (xp_py_dumps(json_object_get(t, "data"), &b)) {
            snprintf(msg, size, "instance %zu: out of memory", k);
            verdict = V_CRASH;
            break;
        }
        uint32_t st = gr_feed(g, GR_START, b.data, b.len, NULL);
        int ok = st != GR_DEAD && gr_accepting(g, st);
        if (g->failed) {
            snprintf(msg, size, "instance %zu: %.900s", k, g->err.msg);
            verdict = V_CRASH;
        } else if (ok != valid) {
            snprintf(msg, size, "instance %zu (%s) %s: %.*s", k,
                     json_string_value(json_object_get(t, "description")),
                     valid ? "valid, refused" : "invalid, accepted", (int)(b.len > 200 ? 200 : b.len),
                     (const char *)b.data);
            verdict = V_WRONG;
        }
        tb_buf_free(&b);
        if (verdict != V_PASS)
            break;
    }
    gr_gram_free(g);
    return verdict;
}

/* Runs the group in a child (alarm: 20 s); the verdict, msg the detail. */
static int group_verdict(json_t *group, const gr_schema_opts_t *opts, char *msg, size_t size)
{
    int fd[2];
    msg[0] = 0;
    fflush(stdout);
    fflush(stderr);
    if (pipe(fd))
        fail_msg("pipe failed");
    pid_t pid = fork();
    if (pid < 0)
        fail_msg("fork failed");
    if (pid == 0) {
        close(fd[0]);
        alarm(20);
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
    while (got + 1 < size && (r = read(fd[0], msg + got, size - 1 - got)) > 0)
        got += (size_t)r;
    msg[got] = 0;
    close(fd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        ;
    if (WIFSIGNALED(status)) {
        snprintf(msg, size, "signal %d%s", WTERMSIG(status),
                 WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
        return V_CRASH;
    }
    int code = WEXITSTATUS(status);
    if (code >= VERDICT_EXIT && code < VERDICT_EXIT + V_N)
        return code - VERDICT_EXIT;
    snprintf(msg + strlen(msg), size - strlen(msg), " (exit %d)", code);
    return V_CRASH;
}

static int listed(const char *draft, const char *file, const char *group)
{
    for (size_t i = 0; known_wrong[i].draft; i++)
        if (!strcmp(known_wrong[i].draft, draft) && !strcmp(known_wrong[i].file, file) &&
            !strcmp(known_wrong[i].group, group))
            return 1;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.json names in dir, sorted (malloc'd; *n of them). */
static char **json_files(const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    char **names = NULL;
    *n = 0;
    if (!d)
        return NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json"))
            continue;
        names = realloc(names, (*n + 1) * sizeof *names);
        assert_non_null(names);
        names[(*n)++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, *n, sizeof *names, cmp_str);
    return names;
}

static void add(tally_t *t, int v)
{
    t->n[v]++;
    t->groups++;
}

/* The groups of one file (rel: its path under the draft's folder). */
static void run_file(const char *root, const char *draft, const char *rel, int optional,
                     draft_tally_t *dt)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/tests/%s/%s", root, draft, rel);
    json_error_t je;
    json_t *groups = json_load_file(path, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    if (!groups) /* integers beyond 64 bits (optional/bignum.json) */
        groups = json_load_file(path, JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &je);
    if (!json_is_array(groups))
        fail_msg("%s: %s", path, je.text);
    assert_true(dt->nfiles < MAX_FILES);
    tally_t *ft = &dt->files[dt->nfiles++];
    memset(ft, 0, sizeof *ft);
    snprintf(ft->name, sizeof ft->name, "%.*s", (int)(strlen(rel) - 5), rel);
    char remotes[2048];
    snprintf(remotes, sizeof remotes, "%s/remotes", root);
    gr_schema_opts_t opts = {
        .remote_dir = remotes, /* what http://localhost:1234/ means in the suite */
        .draft = !strcmp(draft, "draft7") ? 7 : 2020,
        .strict_oneof = 1, /* oneOf as anyOf would accept what two branches match */
        .format_annotation = strncmp(rel, "optional/format/", 16) != 0,
    };
    size_t i;
    json_t *g;
    json_array_foreach(groups, i, g) {
        char msg[1024];
        const char *desc = json_string_value(json_object_get(g, "description"));
        int v = group_verdict(g, &opts, msg, sizeof msg);
        add(ft, v);
        add(optional ? &dt->optional : &dt->total, v);
        int known = !optional && listed(draft, ft->name, desc);
        if (!optional && (v == V_WRONG || v == V_CRASH) && !known) {
            dt->unexpected++;
            print_message("%s %s \"%s\": %s: %s\n", draft, ft->name, desc, verdict_names[v],
                          msg);
        } else if (known && v != V_WRONG) {
            dt->unexpected++;
            print_message("%s %s \"%s\": listed as known-wrong but now %s: remove it from "
                          "known_wrong[]\n", draft, ft->name, desc, verdict_names[v]);
        } else if (v != V_PASS && verbose()) {
            print_message("%s %s \"%s\": %s: %s\n", draft, ft->name, desc, verdict_names[v],
                          msg);
        }
    }
    json_decref(groups);
}

static void print_tally(const char *what, const tally_t *t)
{
    print_message("%-44s %4d groups %4d passing %4d refused %3d wrong %3d crash\n", what,
                  t->groups, t->n[V_PASS], t->n[V_REFUSED], t->n[V_WRONG], t->n[V_CRASH]);
}

static void run_draft(const char *draft)
{
    const char *root = suite_dir();
    if (!root) {
        print_message("JSON Schema Test Suite not found ($JSTS_DIR, "
                      "../shared/json-schema-test-suite): skipped\n");
        skip();
    }
    static draft_tally_t dt;
    memset(&dt, 0, sizeof dt);
    static const char *const subs[] = {"", "optional/", "optional/format/"};
    for (size_t s = 0; s < 3; s++) {
        char dir[2048];
        size_t n;
        snprintf(dir, sizeof dir, "%s/tests/%s/%s", root, draft, subs[s]);
        char **names = json_files(dir, &n);
        if (!s && !n)
            fail_msg("%s: no test files", dir);
        for (size_t i = 0; i < n; i++) {
            char rel[512];
            snprintf(rel, sizeof rel, "%s%s", subs[s], names[i]);
            run_file(root, draft, rel, s > 0, &dt);
            free(names[i]);
        }
        free(names);
    }
    print_message("%s, per keyword file:\n", draft);
    for (size_t i = 0; i < dt.nfiles; i++)
        print_tally(dt.files[i].name, &dt.files[i]);
    char what[128];
    snprintf(what, sizeof what, "%s required", draft);
    print_tally(what, &dt.total);
    snprintf(what, sizeof what, "%s optional", draft);
    print_tally(what, &dt.optional);
    if (dt.unexpected)
        fail_msg("%s: %d required groups wrong or crashed beyond known_wrong[] (above)", draft,
                 dt.unexpected);
}

static void draft2020_12(void **state)
{
    (void)state;
    run_draft("draft2020-12");
}

static void draft7(void **state)
{
    (void)state;
    run_draft("draft7");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(draft2020_12),
        cmocka_unit_test(draft7),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
