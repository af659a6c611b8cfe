/*
 * drv_walk: the token-mask walk of one trie layout under a recognizer, the
 * workbench's headline figure (cycles per visited node, against the
 * 13-cycle flat-trie baseline).
 *
 * Row: vocabulary (manifest name or path), layout (a trie_layouts[] name),
 * pattern, every one a lazy DFA walked through the lexer's recognizer
 * (lexer/rec.h) and its table, as `tokbench mask` walks it:
 *   any, utf8, letters, digits
 *            the built-in byte recognizers (lexer/builtin.h); `any` visits
 *            the whole trie (the worst case a mask can cost, "most of the
 *            trie visited" in the baseline), `utf8` is a JSON string body
 *            without escapes;
 *   re:R     the regex R, from its start state;
 *   lex:FILE the multi-lexeme lexer of spec FILE (lexer/lexemes.h, e.g.
 *            experiments/lexers/json.lex) through the same recognizer, from
 *            its start state: side by side with a re: row of the same
 *            language it gives the cost of lexeme bookkeeping per node;
 *   g:FILE   the grammar FILE (grammar/: .lark, .gbnf, or a JSON Schema
 *            .json) through its own table recognizer (grammar/match.h):
 *            beside lex: and re: rows of the same lexemes it gives what
 *            the parser costs per node.
 * Option after=TEXT (re:, lex: and g: rows; no blanks or ';' in TEXT) walks
 * from the state after TEXT instead, e.g. inside a string after=["
 * One repetition walks once: nodes = what trie_walk reports it offered to
 * the recognizer, items = tokens allowed.  A walk over a real vocabulary is
 * hundreds of thousands of branches, far more than a predictor can learn
 * between repetitions, so the input is not varied.  extra() records the
 * trie's node count and bytes, its build time, and the vocabulary's size
 * (ids), which the report plots mask time against whatever the pattern.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/bitset.h"
#include "../../grammar/load.h"
#include "../../grammar/match.h"
#include "../../lexer/builtin.h"
#include "../../lexer/lexemes.h"
#include "../../lexer/rec.h"
#include "../../trie/trie.h"
#include "driver.h"
#include "setup.h"

typedef struct {
    trie_t *trie;
    tb_bitset_t mask;
    lex_dfa_t *dfa;
    lex_rec_t lex;
    gr_gram_t *gram;    /* for g: patterns, walked by grec */
    gr_rec_t grec;
    uint32_t from;      /* the DFA or grammar state the walk starts from (after=) */
    uint64_t allowed;   /* tokens one walk allows: the same every time */
    double build_ns;
    double vocab_size;  /* ids in the vocabulary, specials included */
} walk_t;

static void walk_teardown(void *state)
{
    walk_t *s = state;
    if (!s)
        return;
    trie_free(s->trie);
    tb_bitset_free(&s->mask);
    lex_rec_free(&s->lex);
    lex_dfa_free(s->dfa);
    gr_rec_free(&s->grec);
    gr_gram_free(s->gram);
    free(s);
}

/* Loads the vocabulary and builds the layout over its keys. */
static int build_trie(walk_t *s, const xp_row_t *row, xp_env_t *env, size_t *max_len,
                      tb_err_t *err)
{
    const trie_layout_t *layout = trie_layout_find(row->layout);
    if (!layout)
        return tb_fail(err, "field 'layout': no trie layout '%s'", row->layout);
    trie_keys_t keys;
    size_t vocab_size = 0;
    int rc = xp_row_keys(row, env, &keys, &vocab_size, err);
    s->vocab_size = (double)vocab_size;
    if (rc)
        return -1;
    s->trie = xp_build_timed(layout, &keys, &s->build_ns, err);
    *max_len = keys.max_len;
    trie_keys_free(&keys);
    return s->trie ? 0 : -1;
}

/* The state after the row's after= text (the start state without one). */
static int walk_from(walk_t *s, const xp_row_t *row, tb_err_t *err)
{
    char after[1024];
    s->from = s->gram ? GR_START : LEX_START;
    if (!xp_row_option(row, "after", after, sizeof after))
        return 0;
    for (size_t i = 0; after[i]; i++) {
        uint8_t b = (uint8_t)after[i];
        s->from = s->gram ? gr_step(s->gram, s->from, b) : lex_dfa_next(s->dfa, s->from, b);
        if (s->gram ? gr_gram_error(s->gram, err) : lex_dfa_error(s->dfa, err))
            return tb_wrap(err, "option after, at byte %zu", i);
        if (s->from == 0)
            return tb_fail(err, "option after: '%s' is refused at byte %zu by '%s'", after, i,
                           row->pattern);
    }
    return 0;
}

static int open_grammar(walk_t *s, const char *path, xp_env_t *env, size_t max_len,
                        tb_err_t *err)
{
    gr_cfg_t cfg;
    if (xp_env_input(env, "grammar", path, err) || gr_cfg_load(&cfg, path, NULL, err))
        return -1;
    s->gram = gr_gram_new(&cfg, NULL, err);
    return s->gram ? gr_rec_init(&s->grec, s->gram, max_len, err) : -1;
}

static int walk_setup(const xp_row_t *row, xp_env_t *env, void **state, tb_err_t *err)
{
    walk_t *s = calloc(1, sizeof *s);
    if (!s)
        return tb_fail(err, "out of memory");
    size_t max_len = 0;
    int rc = build_trie(s, row, env, &max_len, err);
    if (!rc && !strncmp(row->pattern, "re:", 3))
        s->dfa = lex_dfa_new(row->pattern + 3, NULL, err);
    else if (!rc && !strncmp(row->pattern, "lex:", 4)) {
        rc = xp_env_input(env, "lexer", row->pattern + 4, err);
        s->dfa = rc ? NULL : lex_lexer_load(row->pattern + 4, NULL, err);
    } else if (!rc && !strncmp(row->pattern, "g:", 2)) {
        rc = open_grammar(s, row->pattern + 2, env, max_len, err);
    } else if (!rc && !(s->dfa = lex_builtin_dfa(row->pattern, NULL, err)))
        tb_wrap(err, "field 'pattern'");
    if (!rc && !s->dfa && !s->gram)
        rc = -1;
    if (!rc && !s->gram)
        rc = lex_rec_init(&s->lex, s->dfa, max_len, err);
    if (!rc && tb_bitset_init(&s->mask, trie_mask_bits(s->trie)))
        rc = tb_fail(err, "out of memory");
    if (!rc)
        rc = walk_from(s, row, err);
    if (!rc && s->gram)
        rc = gr_mask(s->trie, &s->grec, s->from, &s->mask, NULL, err);
    else if (!rc)
        rc = lex_mask(s->trie, &s->lex, s->from, &s->mask, NULL, err);
    if (!rc)
        s->allowed = tb_bitset_count(&s->mask);
    if (rc)
        walk_teardown(s);
    else
        *state = s;
    return rc;
}

static int walk_rep(void *state, unsigned rep, xp_qty_t *q, tb_err_t *err)
{
    (void)rep;
    walk_t *s = state;
    uint64_t nodes = 0;
    if (s->gram ? gr_mask(s->trie, &s->grec, s->from, &s->mask, &nodes, err)
                : lex_mask(s->trie, &s->lex, s->from, &s->mask, &nodes, err))
        return -1;
    q->nodes = nodes;
    q->items = s->allowed;
    q->sink ^= nodes ^ s->mask.words[0];
    return 0;
}

static int record_static(xp_env_t *env, const char *source, const char *metric,
                         double value, tb_err_t *err)
{
    xp_meas_t m = {.value = value};
    snprintf(m.source, sizeof m.source, "%s", source);
    snprintf(m.impl, sizeof m.impl, "tokbench");
    snprintf(m.metric, sizeof m.metric, "%s", metric);
    return xp_env_record(env, &m, err);
}

static int walk_extra(void *state, const xp_row_t *row, xp_env_t *env, tb_err_t *err)
{
    (void)row;
    walk_t *s = state;
    if (record_static(env, "static", "trie_nodes", (double)trie_nodes(s->trie), err) ||
        record_static(env, "static", "trie_bytes", (double)trie_bytes(s->trie), err) ||
        record_static(env, "static", "tokens_allowed", (double)s->allowed, err) ||
        record_static(env, "static", "vocab_size", s->vocab_size, err))
        return -1;
    return record_static(env, "wallclock", "build_ns", s->build_ns, err);
}

const xp_driver_t xp_driver_walk = {
    .name = "walk",
    .summary = "token-mask walk of one trie layout (pattern: any|utf8|letters|digits|re:REGEX|lex:FILE|g:GRAMMAR)",
    .setup = walk_setup,
    .rep = walk_rep,
    .extra = walk_extra,
    .teardown = walk_teardown,
    .default_reps = 11,
};
