/*
 * test_jsts: the official JSON Schema Test Suite
 * (../shared/json-schema-test-suite, or $JSTS_DIR) as a conformance test
 * of grammar/schema.h, drafts 2020-12 and 7.
 *
 * Every group runs through experiments/refs/jsts.h, the copy the jsts
 * driver runs too (it says how a group is compiled and fed, and what
 * its verdicts passing, refused, wrong and crash mean), each in a child
 * process so that a crash is a verdict, not the end of the test.
 *
 * The test fails on a wrong verdict or a crash in the required groups of
 * either draft, except the groups of known_wrong[] (each with its reason),
 * and on a listed group that no longer goes wrong.  optional/ is counted
 * apart and never fails it.  A suite that is not there skips the test, with
 * a message.  JSTS_VERBOSE=1 prints every group that does not pass, with
 * the compiler's reason or the instance at fault.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "../experiments/refs/jsts.h"
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

enum { V_PASS = XP_JSTS_PASSING, V_REFUSED = XP_JSTS_REFUSED, V_WRONG = XP_JSTS_WRONG,
       V_CRASH = XP_JSTS_CRASH, V_N = XP_JSTS_N };
#define verdict_names xp_jsts_verdicts

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

static int listed(const char *draft, const char *file, const char *group)
{
    for (size_t i = 0; known_wrong[i].draft; i++)
        if (!strcmp(known_wrong[i].draft, draft) && !strcmp(known_wrong[i].file, file) &&
            !strcmp(known_wrong[i].group, group))
            return 1;
    return 0;
}

static void add(tally_t *t, int v)
{
    t->n[v]++;
    t->groups++;
}

/* xp_jsts_run's callback: the tallies, and what the test fails on. */
static int on_group(void *ctx, const xp_jsts_group_t *g, tb_err_t *err)
{
    (void)err;
    draft_tally_t *dt = ctx;
    if (!dt->nfiles || strcmp(dt->files[dt->nfiles - 1].name, g->file)) {
        assert_true(dt->nfiles < MAX_FILES);
        tally_t *ft = &dt->files[dt->nfiles++];
        memset(ft, 0, sizeof *ft);
        snprintf(ft->name, sizeof ft->name, "%s", g->file);
    }
    int v = g->verdict;
    add(&dt->files[dt->nfiles - 1], v);
    add(g->optional ? &dt->optional : &dt->total, v);
    int known = !g->optional && listed(g->draft, g->file, g->description);
    if (!g->optional && (v == V_WRONG || v == V_CRASH) && !known) {
        dt->unexpected++;
        print_message("%s %s \"%s\": %s: %s\n", g->draft, g->file, g->description,
                      verdict_names[v], g->detail);
    } else if (known && v != V_WRONG) {
        dt->unexpected++;
        print_message("%s %s \"%s\": listed as known-wrong but now %s: remove it from "
                      "known_wrong[]\n", g->draft, g->file, g->description, verdict_names[v]);
    } else if (v != V_PASS && verbose()) {
        print_message("%s %s \"%s\": %s: %s\n", g->draft, g->file, g->description,
                      verdict_names[v], g->detail);
    }
    return 0;
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
    char tests[1100];
    snprintf(tests, sizeof tests, "%s/tests", root);
    tb_err_t err;
    if (xp_jsts_run(tests, draft, 1, 20, NULL, on_group, &dt, &err))
        fail_msg("%s", err.msg);
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
