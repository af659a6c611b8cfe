/*
 * drv_llgtests: llguidance's own grammar tests as an experiment: every
 * grammar of them loaded here, its strings judged as llguidance's test
 * wants, and on each grammar both load the masks compared with
 * llguidance's live, token by token (experiments/refs/llgmasks.h, which
 * tests/test_llg_masks.c runs too).
 *
 * Row: vocabulary = the tokenizer whose ids both engines are fed (llama3);
 * pattern = llguidance's source folder (../shared/llguidance), whose
 * parser/tests/ scripts/extract-llg-tests.py reads; option timeout=S
 * (llguidance's time per grammar, default 30).  Needs tb-llguidance
 * (`make llguidance-ref`); without it or the sources the case fails
 * saying which.
 *
 * Stored: one outcome per grammar, impl "llguidance masks", item the
 * test's FILE:LINE, outcome a verdict of xp_llg_verdicts, masks and
 * tokens the masks compared and equal, detail the strings' verdicts and
 * the differing tokens by cause (or the refusal); one outcome per cause
 * that some token has, impl "llguidance causes", item the cause's name,
 * tokens how many; and, source "static", the counts grammars, loaded,
 * ref_refuses (grammars llguidance's tests want refused), refused_here
 * (grammars they load that tokbench refuses), strings, agree (strings
 * with llguidance's verdict here), compared (grammars whose masks were
 * compared), steps, equal (masks), explained and unexplained (differing
 * tokens), each twice: prefixed lark_ for llguidance's Lark grammars,
 * json_ for its JSON Schemas (`start: %json {...}`).  Any unexplained
 * token fails the case once everything is stored.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../grammar/load.h"
#include "../cli/cli.h"
#include "../refs/llgmasks.h"
#include "driver.h"
#include "setup.h"

/* The counts stored, per kind of grammar: a Lark grammar of llguidance's
 * own, or a JSON Schema (`start: %json {...}`, the JSON tests'). */
enum { GRAMMARS, LOADED, REF_REFUSES, REFUSED_HERE, STRINGS, AGREE, COMPARED, STEPS, EQUAL,
       EXPLAINED, UNEXPLAINED, NCOUNTS };
static const char *const count_names[NCOUNTS] = {
    "grammars", "loaded", "ref_refuses", "refused_here", "strings", "agree", "compared",
    "steps", "equal", "explained", "unexplained"};
static const char *const kinds[2] = {"lark_", "json_"};

typedef struct {
    char src[4096], root[4096], vocab[4096];
    unsigned timeout;
    xp_env_t *env;
    uint64_t n[2][NCOUNTS];
    uint64_t causes[XP_XG_CAUSES];
} llgtests_t;

static void llgtests_teardown(void *state)
{
    free(state);
}

static int llgtests_setup(const xp_row_t *row, xp_env_t *env, void **state, tb_err_t *err)
{
    uint64_t timeout = 0;
    char tests[4200], prog[4200];
    const char *root = xp_data_root(err);
    if (!root || xp_row_uint(row, "timeout", 30, 1, 3600, &timeout, err))
        return -1;
    if (!row->pattern || !row->pattern[0])
        return tb_fail(err, "line %u: field 'pattern': llguidance's source folder "
                       "(../shared/llguidance)", row->line);
    snprintf(tests, sizeof tests, "%s/llguidance/parser/tests/test_lark.rs", row->pattern);
    snprintf(prog, sizeof prog, "%s/build/llguidance/target/release/tb-llguidance", root);
    if (access(tests, R_OK))
        return tb_fail(err, "line %u: no %s: the pattern is not llguidance's sources",
                       row->line, tests);
    if (access(prog, X_OK))
        return tb_fail(err, "no %s (`make llguidance-ref` builds it where cargo and "
                       "../shared/llguidance are)", prog);
    llgtests_t *s = calloc(1, sizeof *s);
    if (!s)
        return tb_fail(err, "out of memory");
    snprintf(s->src, sizeof s->src, "%s", row->pattern);
    snprintf(s->root, sizeof s->root, "%s", root);
    s->timeout = (unsigned)timeout;
    if (xp_row_vocab(row, env, s->vocab, sizeof s->vocab, err) ||
        xp_env_input(env, "suite", tests, err)) {
        free(s);
        return -1;
    }
    *state = s;
    return 0;
}

static void append(char *buf, size_t size, const char *part)
{
    size_t used = strlen(buf);
    snprintf(buf + used, size - used, "%s%s", used ? "; " : "", part);
}

/* xp_llg_masks' callback: the grammar's outcome row and the counts. */
static int on_grammar(void *ctx, const xp_llg_grammar_t *g, tb_err_t *err)
{
    llgtests_t *s = ctx;
    uint64_t *n = s->n[g->json];
    xp_outcome_t o = {0};
    snprintf(o.impl, sizeof o.impl, "llguidance masks");
    snprintf(o.item, sizeof o.item, "%s", g->where);
    snprintf(o.outcome, sizeof o.outcome, "%s", xp_llg_verdicts[g->verdict]);
    o.masks = g->steps;
    o.tokens = g->equal;
    if (g->loaded)
        snprintf(o.detail, sizeof o.detail, "strings: %zu of %zu as llguidance's test wants",
                 g->agree, g->strings);
    for (int k = 0; k < XP_XG_CAUSES; k++) {
        char part[96];
        snprintf(part, sizeof part, "%s: %zu tokens", xp_xg_cause_names[k], g->counts[k]);
        if (g->counts[k])
            append(o.detail, sizeof o.detail, part);
        s->causes[k] += g->counts[k];
        n[k == XP_XG_OURS || k == XP_XG_THEIRS ? UNEXPLAINED : EXPLAINED] += g->counts[k];
    }
    if (g->detail[0])
        append(o.detail, sizeof o.detail, g->detail);
    n[GRAMMARS]++;
    n[LOADED] += g->loaded;
    n[REF_REFUSES] += g->verdict == XP_LLG_REFUSED;
    n[REFUSED_HERE] += g->verdict == XP_LLG_REFUSED_HERE;
    n[STRINGS] += g->strings;
    n[AGREE] += g->agree;
    n[COMPARED] += g->verdict <= XP_LLG_UNEXPLAINED;
    n[STEPS] += g->steps;
    n[EQUAL] += g->equal;
    return xp_env_outcome(s->env, &o, err);
}

static int record(xp_env_t *env, const char *metric, uint64_t v, tb_err_t *err)
{
    xp_meas_t m = {.value = (double)v, .items = v};
    snprintf(m.source, sizeof m.source, "static");
    snprintf(m.impl, sizeof m.impl, "tokbench");
    snprintf(m.metric, sizeof m.metric, "%s", metric);
    return xp_env_record(env, &m, err);
}

/* The comparison proper, in the scratch folder dir. */
static int run(llgtests_t *s, const char *dir, tb_err_t *err)
{
    char cases[4200], cmd[8800], prog[4200], json_path[4200];
    snprintf(cases, sizeof cases, "%s/cases.txt", dir);
    snprintf(prog, sizeof prog, "%s/build/llguidance/target/release/tb-llguidance", s->root);
    snprintf(json_path, sizeof json_path, "%s/experiments/grammars/json.lark", s->root);
    int w = snprintf(cmd, sizeof cmd, "python3 '%s/scripts/extract-llg-tests.py' '%s' '%s' "
                     "2>'%s/cases.log'", s->root, s->src, cases, dir);
    if (w < 0 || (size_t)w >= sizeof cmd)
        return tb_fail(err, "%s: the path is too long", s->src);
    if (system(cmd))
        return tb_fail(err, "scripts/extract-llg-tests.py failed on %s", s->src);
    trie_keys_t keys = {0};
    tok_tokenizer_t *tok = NULL;
    gr_cfg_t cfg;
    gr_gram_t *json = NULL;
    trie_t *trie = xp_load_trie(s->vocab, "dfs", &keys, &tok, err);
    int rc = trie ? 0 : -1;
    if (!rc && (gr_cfg_load(&cfg, json_path, "lark", err) ||
                !(json = gr_gram_new(&cfg, NULL, err))))
        rc = -1;
    xp_llg_run_t r = {.cases = cases, .prog = prog, .dir = dir, .tok = tok, .trie = trie,
                      .max_len = keys.max_len, .timeout = s->timeout, .json = json};
    if (!rc)
        rc = xp_llg_masks(&r, on_grammar, s, err);
    gr_gram_free(json);
    trie_free(trie);
    trie_keys_free(&keys);
    tok_free(tok);
    return rc;
}

static int llgtests_extra(void *state, const xp_row_t *row, xp_env_t *env, tb_err_t *err)
{
    (void)row;
    llgtests_t *s = state;
    s->env = env;
    char dir[] = "/tmp/tokbench-llgtests.XXXXXX", cmd[64];
    if (!mkdtemp(dir))
        return tb_fail(err, "%s: cannot make the scratch folder", dir);
    int rc = run(s, dir, err);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) && !rc)
        rc = tb_fail(err, "%s: cannot remove the scratch folder", dir);
    for (int k = 0; !rc && k < XP_XG_CAUSES; k++) {
        xp_outcome_t o = {0};
        snprintf(o.impl, sizeof o.impl, "llguidance causes");
        snprintf(o.item, sizeof o.item, "%s", xp_xg_cause_names[k]);
        snprintf(o.outcome, sizeof o.outcome, "%s",
                 k == XP_XG_OURS || k == XP_XG_THEIRS ? "unexplained" : "explained");
        o.tokens = s->causes[k];
        if (s->causes[k])
            rc = xp_env_outcome(env, &o, err);
    }
    for (int kind = 0; kind < 2; kind++)
        for (int i = 0; !rc && i < NCOUNTS; i++) {
            char metric[24];
            snprintf(metric, sizeof metric, "%s%s", kinds[kind], count_names[i]);
            rc = record(env, metric, s->n[kind][i], err);
        }
    uint64_t unexplained = s->n[0][UNEXPLAINED] + s->n[1][UNEXPLAINED];
    if (!rc && unexplained)
        rc = tb_fail(err, "%llu differing tokens have no known cause (outcome 'unexplained "
                     "differences': the grammar and its first such token are in its row)",
                     (unsigned long long)unexplained);
    return rc;
}

const xp_driver_t xp_driver_llgtests = {
    .name = "llgtests",
    .summary = "llguidance's grammar tests: each grammar loaded, its strings judged, its masks "
               "compared with llguidance's live (pattern: llguidance's sources; timeout=S)",
    .setup = llgtests_setup,
    .extra = llgtests_extra,
    .teardown = llgtests_teardown,
    .default_reps = 1,
};
