/*
 * drv_slice: what the slicer (lexer/slicer.h) and the precomputed token
 * index (lexer/index.h) buy against the plain mask walk.
 *
 * slice   Row: vocabulary, layout (a trie_layouts[] name), pattern (the
 *         regex, "re:" optional), options: slices=R1;R2;... (default: the
 *         JSON string set of slicer.h), membership=prefix (default) or full
 *         (a token joins the first slice it is a prefix of, or only one it
 *         matches whole: slicer.h).  One repetition computes the sliced
 *         mask at the regex's start state: nodes = nodes the walks of the
 *         walked slices and the residual offered, items = tokens allowed.
 *         Setup checks the sliced mask equals the plain walk's.  extra()
 *         times, alternately in one loop, the sliced mask (impl tokbench)
 *         and the plain walk of the full trie (impl plain) by wall clock
 *         (metric ns), and records the gain (plain median / sliced median),
 *         the slicer's build time and bytes, slices taken whole and walked,
 *         the residual's tokens and the plain walk's nodes.
 * index   Row: vocabulary, layout, pattern (the regex).  A sample string of
 *         the regex is cut into tokens by longest match;
 *         the decoding steps are the states before each token.  (The sample:
 *         SAMPLE_MIN random live bytes from a fixed seed, then a shortest
 *         way to an accepting state.)  One
 *         repetition walks a mask at every step, the cost the index saves:
 *         nodes = nodes summed, items = steps.  extra() builds the index
 *         from the start state (wallclock build_ns, several builds) and
 *         records its states, entries, token classes, distinct masks,
 *         dead-byte tokens and bytes (in all and by structure: bytes_masks,
 *         bytes_classes, bytes_next, bytes_states), the per-step cost by
 *         wall clock of walking (impl walk), of the default slicer's mask
 *         (impl slicer, built in setup) and of the index's mask and
 *         next-state query (impl index), and the steps after which the
 *         build has paid for itself (build / (walk - index per step):
 *         breakeven_steps; against the slicer: breakeven_slicer_steps).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/bitset.h"
#include "../../lexer/index.h"
#include "../../lexer/rec.h"
#include "../../lexer/slicer.h"
#include "../../trie/trie.h"
#include "driver.h"
#include "setup.h"

#define TIMED_REPS 9
#define BUILD_REPS 5

/* What both experiments hold: the vocabulary's keys, the full trie, the
 * regex's DFA and a recognizer over it. */
typedef struct {
    trie_keys_t keys;
    trie_t *trie;
    lex_dfa_t *dfa;
    lex_rec_t rec;
    tb_bitset_t mask, check;
    /* slice */
    lex_slicer_t *slicer;
    double slicer_ns; /* what building it took */
    lex_slice_stats_t st;
    uint64_t allowed, plain_nodes;
    /* index */
    uint32_t *steps; /* DFA state before each token of the sample */
    uint32_t *toks;  /* the sample's tokens */
    size_t nsteps, sample_len;
} slice_t;

static void slice_teardown(void *state)
{
    slice_t *s = state;
    if (!s)
        return;
    lex_slicer_free(s->slicer);
    lex_rec_free(&s->rec);
    lex_dfa_free(s->dfa);
    trie_free(s->trie);
    trie_keys_free(&s->keys);
    tb_bitset_free(&s->mask);
    tb_bitset_free(&s->check);
    free(s->steps);
    free(s->toks);
    free(s);
}

/* Keys, trie, DFA and recognizer for the row. */
static int common_setup(slice_t *s, const xp_row_t *row, xp_env_t *env, tb_err_t *err)
{
    const trie_layout_t *layout = trie_layout_find(row->layout);
    if (!layout)
        return tb_fail(err, "field 'layout': no trie layout '%s'", row->layout);
    const char *re = !strncmp(row->pattern, "re:", 3) ? row->pattern + 3 : row->pattern;
    if (!*re)
        return tb_fail(err, "field 'pattern': a regex is needed");
    if (!(s->dfa = lex_dfa_new(re, NULL, err)))
        return tb_wrap(err, "field 'pattern'");
    if (xp_row_keys(row, env, &s->keys, NULL, err) ||
        !(s->trie = trie_build(layout, &s->keys, err)) || trie_prepare_walk(s->trie, err) ||
        lex_rec_init(&s->rec, s->dfa, s->keys.max_len, err))
        return -1;
    if (tb_bitset_init(&s->mask, trie_mask_bits(s->trie)) ||
        tb_bitset_init(&s->check, trie_mask_bits(s->trie)))
        return tb_fail(err, "out of memory");
    return 0;
}

static int record(xp_env_t *env, const char *source, const char *impl, const char *metric,
                  unsigned rep, double value, uint64_t nodes, uint64_t items, tb_err_t *err)
{
    xp_meas_t m = {.value = value, .rep = rep, .nodes = nodes, .items = items};
    snprintf(m.source, sizeof m.source, "%s", source);
    snprintf(m.impl, sizeof m.impl, "%s", impl);
    snprintf(m.metric, sizeof m.metric, "%s", metric);
    return xp_env_record(env, &m, err);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* ---- slice ------------------------------------------------------------------ */

static int slice_setup(const xp_row_t *row, xp_env_t *env, void **state, tb_err_t *err)
{
    slice_t *s = calloc(1, sizeof *s);
    if (!s)
        return tb_fail(err, "out of memory");
    char spec[2048];
    char **regexes = NULL;
    size_t n = 0;
    int rc = common_setup(s, row, env, err);
    if (!rc && xp_row_option(row, "slices", spec, sizeof spec))
        rc = lex_slicer_parse_list(spec, &regexes, &n, err) ? tb_wrap(err, "option 'slices'") : 0;
    char how[16] = "prefix";
    xp_row_option(row, "membership", how, sizeof how);
    if (!rc && strcmp(how, "prefix") && strcmp(how, "full"))
        rc = tb_fail(err, "option 'membership': '%s' is not prefix or full", how);
    double t0 = xp_now_ns();
    if (!rc && !(s->slicer = lex_slicer_new_as(&s->keys, trie_layout(s->trie),
                                               (const char *const *)regexes, n,
                                               strcmp(how, "full") ? LEX_SLICE_PREFIX
                                                                   : LEX_SLICE_FULL,
                                               err)))
        rc = -1;
    s->slicer_ns = xp_now_ns() - t0;
    free(regexes);
    if (!rc)
        rc = lex_mask(s->trie, &s->rec, LEX_START, &s->check, &s->plain_nodes, err);
    if (!rc)
        rc = lex_slicer_mask(s->slicer, &s->rec, LEX_START, &s->mask, &s->st, err);
    if (!rc && !tb_bitset_equal(&s->mask, &s->check))
        rc = tb_fail(err, "regex '%s': the sliced mask differs from the plain walk's",
                     s->dfa->pattern);
    s->allowed = tb_bitset_count(&s->mask);
    if (rc)
        slice_teardown(s);
    else
        *state = s;
    return rc;
}

static int slice_rep(void *state, unsigned rep, xp_qty_t *q, tb_err_t *err)
{
    (void)rep;
    slice_t *s = state;
    if (lex_slicer_mask(s->slicer, &s->rec, LEX_START, &s->mask, &s->st, err))
        return -1;
    q->nodes = s->st.nodes;
    q->items = s->allowed;
    q->sink ^= s->st.nodes ^ s->mask.words[0];
    return 0;
}

static int slice_extra(void *state, const xp_row_t *row, xp_env_t *env, tb_err_t *err)
{
    (void)row;
    slice_t *s = state;
    double sliced[TIMED_REPS], plain[TIMED_REPS];
    for (unsigned r = 0; r < TIMED_REPS; r++) {
        double t0 = xp_now_ns();
        if (lex_slicer_mask(s->slicer, &s->rec, LEX_START, &s->mask, NULL, err))
            return -1;
        double t1 = xp_now_ns();
        if (lex_mask(s->trie, &s->rec, LEX_START, &s->check, NULL, err))
            return -1;
        sliced[r] = t1 - t0;
        plain[r] = xp_now_ns() - t1;
        if (record(env, "wallclock", "tokbench", "ns", r, sliced[r], s->st.nodes, s->allowed,
                   err) ||
            record(env, "wallclock", "plain", "ns", r, plain[r], s->plain_nodes, s->allowed,
                   err))
            return -1;
    }
    double ms = median(sliced, TIMED_REPS), mp = median(plain, TIMED_REPS);
    return record(env, "static", "tokbench", "slicer_gain", 0, ms > 0 ? mp / ms : 0, 0, 0,
                  err) ||
                   record(env, "wallclock", "tokbench", "build_ns", 0, s->slicer_ns, 0,
                          0, err) ||
                   record(env, "static", "tokbench", "slicer_bytes", 0,
                          (double)lex_slicer_bytes(s->slicer), 0, 0, err) ||
                   record(env, "static", "tokbench", "slices_whole", 0, s->st.whole, 0, 0,
                          err) ||
                   record(env, "static", "tokbench", "slices_walked", 0, s->st.walked, 0, 0,
                          err) ||
                   record(env, "static", "tokbench", "residual_tokens", 0,
                          (double)s->slicer->nrest, 0, 0, err) ||
                   record(env, "static", "plain", "nodes", 0, (double)s->plain_nodes, 0, 0,
                          err) ||
                   record(env, "static", "tokbench", "tokens_allowed", 0, (double)s->allowed,
                          0, 0, err)
               ? -1
               : 0;
}

const xp_driver_t xp_driver_slice = {
    .name = "slice",
    .summary = "sliced token mask against the plain walk (pattern: REGEX; options: "
               "slices=R1;R2;.. membership=prefix|full)",
    .setup = slice_setup,
    .rep = slice_rep,
    .extra = slice_extra,
    .teardown = slice_teardown,
    .default_reps = 11,
};

/* ---- index ------------------------------------------------------------------ */

#define SAMPLE_MIN 24
#define SAMPLE_MAX 2048

/* Appends to out[*n..] the bytes of a shortest path from st to an
 * accepting state (breadth-first over bytes; states numbered by the DFA).
 * -1 with err if none within SAMPLE_MAX bytes or the search's bound. */
static int complete_sample(lex_dfa_t *d, uint32_t st, uint8_t *out, size_t *n, tb_err_t *err)
{
    enum { MAX_NODES = 1 << 16 };
    typedef struct {
        uint32_t state, parent;
        uint8_t byte;
    } node_t;
    node_t *q = malloc(MAX_NODES * sizeof *q);
    uint8_t *seen = calloc(LEX_DEFAULT_MAX_STATES + 1, 1);
    int rc = -1;
    if (!q || !seen) {
        rc = tb_fail(err, "out of memory");
        goto out;
    }
    size_t head = 0, tail = 0;
    q[tail++] = (node_t){st, UINT32_MAX, 0};
    while (head < tail) {
        node_t cur = q[head++];
        if (lex_dfa_accepting(d, cur.state)) {
            uint8_t rev[SAMPLE_MAX];
            size_t m = 0;
            for (uint32_t i = (uint32_t)head - 1; q[i].parent != UINT32_MAX && m < SAMPLE_MAX;
                 i = q[i].parent)
                rev[m++] = q[i].byte;
            for (; m && *n < SAMPLE_MAX; m--)
                out[(*n)++] = rev[m - 1];
            rc = 0;
            goto out;
        }
        for (unsigned b = 0; b < 256 && tail < MAX_NODES; b++) {
            uint32_t nx = lex_dfa_next(d, cur.state, (uint8_t)b);
            if (nx == LEX_DEAD || nx > LEX_DEFAULT_MAX_STATES || seen[nx])
                continue;
            seen[nx] = 1;
            q[tail++] = (node_t){nx, (uint32_t)head - 1, (uint8_t)b};
        }
    }
    rc = tb_fail(err, "regex '%s': no accepting state found to end a sample string",
                 d->pattern);
out:
    free(q);
    free(seen);
    return rc;
}

/* A string of the regex: SAMPLE_MIN random live bytes (fixed seed), then
 * the shortest way to an accepting state. */
static int sample_string(lex_dfa_t *d, uint8_t *out, size_t *len, tb_err_t *err)
{
    uint64_t rng = 0x853c49e6748fea9bull;
    uint32_t st = LEX_START;
    size_t n = 0;
    while (n < SAMPLE_MIN) {
        const uint64_t *al = lex_dfa_allowed(d, st);
        unsigned nc = 0;
        uint8_t c[256];
        for (unsigned b = 0; b < 256; b++)
            if ((al[b >> 6] >> (b & 63)) & 1)
                c[nc++] = (uint8_t)b;
        if (!nc)
            break; /* a finite language: this string is complete */
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        out[n] = c[(rng >> 33) % nc];
        st = lex_dfa_next(d, st, out[n++]);
    }
    if (complete_sample(d, st, out, &n, err))
        return -1;
    *len = n;
    return lex_dfa_error(d, err);
}

/* The sample cut into tokens by longest match, and the state before each. */
static int sample_steps(slice_t *s, tb_err_t *err)
{
    uint8_t text[SAMPLE_MAX];
    size_t len = 0;
    if (sample_string(s->dfa, text, &len, err))
        return -1;
    s->steps = malloc((len ? len : 1) * sizeof *s->steps);
    s->toks = malloc((len ? len : 1) * sizeof *s->toks);
    if (!s->steps || !s->toks)
        return tb_fail(err, "out of memory");
    trie_match_t m[64];
    uint32_t st = LEX_START;
    for (size_t at = 0; at < len;) {
        size_t nm = trie_prefixes(s->trie, text + at, len - at, m, 64);
        if (!nm)
            return tb_fail(err, "sample of '%s': no token starts at byte %zu", s->dfa->pattern,
                           at);
        trie_match_t best = m[(nm < 64 ? nm : 64) - 1];
        s->steps[s->nsteps] = st;
        s->toks[s->nsteps++] = best.id;
        st = lex_dfa_feed(s->dfa, st, text + at, best.len);
        at += best.len;
    }
    s->sample_len = len;
    return 0;
}

static int index_setup(const xp_row_t *row, xp_env_t *env, void **state, tb_err_t *err)
{
    slice_t *s = calloc(1, sizeof *s);
    if (!s)
        return tb_fail(err, "out of memory");
    int rc = common_setup(s, row, env, err);
    if (!rc)
        rc = sample_steps(s, err);
    if (!rc && !(s->slicer = lex_slicer_new(&s->keys, trie_layout(s->trie), NULL, 0, err)))
        rc = -1;
    if (rc)
        slice_teardown(s);
    else
        *state = s;
    return rc;
}

/* A mask walked at every step of the sample. */
static int index_rep(void *state, unsigned rep, xp_qty_t *q, tb_err_t *err)
{
    (void)rep;
    slice_t *s = state;
    uint64_t total = 0;
    for (size_t i = 0; i < s->nsteps; i++) {
        uint64_t nodes;
        if (lex_mask(s->trie, &s->rec, s->steps[i], &s->mask, &nodes, err))
            return -1;
        total += nodes;
        q->sink ^= s->mask.words[0];
    }
    q->nodes = total;
    q->items = s->nsteps;
    q->bytes = s->sample_len;
    q->sink ^= total;
    return 0;
}

/* The default slicer's mask at every step of the sample. */
static int slicer_steps(slice_t *s, tb_err_t *err)
{
    for (size_t i = 0; i < s->nsteps; i++)
        if (lex_slicer_mask(s->slicer, &s->rec, s->steps[i], &s->mask, NULL, err))
            return -1;
    return 0;
}

/* The index's answers along the sample: the mask and the next state at
 * every step.  -1 if they disagree with walking and feeding. */
static int index_steps(slice_t *s, const lex_index_t *x, tb_err_t *err)
{
    uint32_t i = 0;
    for (size_t k = 0; k < s->nsteps; k++) {
        lex_index_mask(x, i, &s->mask);
        i = lex_index_next(x, i, s->toks[k]);
        if (i == LEX_INDEX_NONE || (k + 1 < s->nsteps && x->dfa_state[i] != s->steps[k + 1]))
            return tb_fail(err, "index of '%s': step %zu disagrees with the DFA",
                           s->dfa->pattern, k);
    }
    return 0;
}

/* What the index holds, in all and by structure. */
static int index_static(xp_env_t *env, const lex_index_t *x, tb_err_t *err)
{
    lex_index_mem_t m;
    lex_index_mem(x, &m);
    const struct {
        const char *metric;
        double value;
    } fig[] = {
        {"states", (double)x->nstates},       {"entries", (double)lex_index_entries(x)},
        {"classes", (double)x->nclasses},     {"masks", (double)x->nsets},
        {"dead_tokens", (double)x->dead_tokens}, {"bytes", (double)m.total},
        {"bytes_masks", (double)m.masks},     {"bytes_classes", (double)m.classes},
        {"bytes_next", (double)m.next},       {"bytes_states", (double)m.states},
    };
    for (size_t i = 0; i < sizeof fig / sizeof *fig; i++)
        if (record(env, "static", "index", fig[i].metric, 0, fig[i].value, 0, 0, err))
            return -1;
    return 0;
}

/* Steps after which a build of b ns pays for itself against a per-step
 * cost of `other` (-1: the index is no faster). */
static double breakeven(double b, double other, double ix)
{
    return other > ix ? b / (other - ix) : -1;
}

static int index_extra(void *state, const xp_row_t *row, xp_env_t *env, tb_err_t *err)
{
    (void)row;
    slice_t *s = state;
    lex_index_t *x = NULL;
    double build[BUILD_REPS], walk[TIMED_REPS], sliced[TIMED_REPS], idx[TIMED_REPS];
    for (unsigned r = 0; r < BUILD_REPS; r++) {
        lex_index_free(x);
        double t0 = xp_now_ns();
        if (!(x = lex_index_build(s->trie, &s->keys, s->dfa, LEX_START, 0, err)))
            return -1;
        build[r] = xp_now_ns() - t0;
        if (record(env, "wallclock", "index", "build_ns", r, build[r], x->walk_nodes,
                   x->nstates, err))
            goto fail;
    }
    for (unsigned r = 0; r < TIMED_REPS; r++) {
        xp_qty_t q = {0};
        double t0 = xp_now_ns();
        if (index_rep(s, r, &q, err))
            goto fail;
        double t1 = xp_now_ns();
        if (slicer_steps(s, err))
            goto fail;
        double t2 = xp_now_ns();
        if (index_steps(s, x, err))
            goto fail;
        walk[r] = (t1 - t0) / (double)s->nsteps;
        sliced[r] = (t2 - t1) / (double)s->nsteps;
        idx[r] = (xp_now_ns() - t2) / (double)s->nsteps;
        /* per step: nodes are one step's average, items one step */
        if (record(env, "wallclock", "walk", "ns_per_step", r, walk[r], q.nodes / s->nsteps, 1,
                   err) ||
            record(env, "wallclock", "slicer", "ns_per_step", r, sliced[r], 0, 1, err) ||
            record(env, "wallclock", "index", "ns_per_step", r, idx[r], 0, 1, err))
            goto fail;
    }
    double b = median(build, BUILD_REPS), w = median(walk, TIMED_REPS),
           sl = median(sliced, TIMED_REPS), ix = median(idx, TIMED_REPS);
    if (index_static(env, x, err) ||
        record(env, "static", "index", "steps", 0, (double)s->nsteps, 0, 0, err) ||
        record(env, "static", "index", "breakeven_steps", 0, breakeven(b, w, ix), 0, 0, err) ||
        record(env, "static", "index", "breakeven_slicer_steps", 0, breakeven(b, sl, ix), 0, 0,
               err))
        goto fail;
    lex_index_free(x);
    return 0;
fail:
    lex_index_free(x);
    return -1;
}

const xp_driver_t xp_driver_index = {
    .name = "index",
    .summary = "precomputed token index build (states, classes, bytes by structure) against "
               "a mask walk and the slicer per step along a sample of the regex "
               "(pattern: REGEX)",
    .setup = index_setup,
    .rep = index_rep,
    .extra = index_extra,
    .teardown = slice_teardown,
    .default_reps = 5,
};
