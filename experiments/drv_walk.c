/*
 * drv_walk: the token-mask walk of one trie layout under a recognizer, the
 * workbench's headline figure (cycles per visited node, against the
 * 13-cycle flat-trie baseline).
 *
 * Row: vocabulary (manifest name or path), layout (a trie_layouts[] name),
 * pattern: one of the built-in byte recognizers below, until the lexer's
 * regex recognizers plug in through the same trie_rec_t:
 *   any      every byte: the whole trie is visited (the worst case a mask
 *            can cost, "most of the trie visited" in the baseline);
 *   utf8     well-formed UTF-8 prefixes (RFC 3629), as a JSON string body
 *            without escapes allows;
 *   letters  ASCII letters and space;
 *   digits   0-9;
 *   re:R     the regex R through the lexer's DFA recognizer (lexer/rec.h),
 *            from its start state;
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

#include "../base/bitset.h"
#include "../grammar/load.h"
#include "../grammar/match.h"
#include "../lexer/lexemes.h"
#include "../lexer/rec.h"
#include "../trie/trie.h"
#include "driver.h"
#include "setup.h"

#define DEAD 0xFF
#define MAX_STATES 8

typedef struct {
    trie_rec_t rec;
    uint8_t delta[MAX_STATES][256]; /* next state, or DEAD */
    uint64_t allowed[MAX_STATES][4];
    uint8_t *stack;                 /* states along the path from the root */
    size_t depth;
} table_rec_t;

static int rec_push(trie_rec_t *r, uint8_t b)
{
    table_rec_t *t = (table_rec_t *)r;
    uint8_t next = t->delta[t->stack[t->depth]][b];
    if (next == DEAD)
        return 0;
    t->stack[++t->depth] = next;
    return 1;
}

static void rec_pop(trie_rec_t *r, uint32_t n)
{
    table_rec_t *t = (table_rec_t *)r;
    t->depth -= n <= t->depth ? n : t->depth;
}

static void rec_allowed(trie_rec_t *r, uint64_t set[4])
{
    table_rec_t *t = (table_rec_t *)r;
    memcpy(set, t->allowed[t->stack[t->depth]], 4 * sizeof *set);
}

static void set_range(table_rec_t *t, int from, int lo, int hi, int to)
{
    for (int b = lo; b <= hi; b++)
        t->delta[from][b] = (uint8_t)to;
}

/* UTF-8 as a DFA: 0 between characters, 1-3 = continuation bytes still
 * owed, 4-7 = the restricted second bytes after E0, ED, F0 and F4. */
static void utf8_table(table_rec_t *t)
{
    set_range(t, 0, 0x00, 0x7F, 0);
    set_range(t, 0, 0xC2, 0xDF, 1);
    set_range(t, 0, 0xE1, 0xEC, 2);
    set_range(t, 0, 0xEE, 0xEF, 2);
    set_range(t, 0, 0xE0, 0xE0, 4);
    set_range(t, 0, 0xED, 0xED, 5);
    set_range(t, 0, 0xF1, 0xF3, 3);
    set_range(t, 0, 0xF0, 0xF0, 6);
    set_range(t, 0, 0xF4, 0xF4, 7);
    set_range(t, 1, 0x80, 0xBF, 0);
    set_range(t, 2, 0x80, 0xBF, 1);
    set_range(t, 3, 0x80, 0xBF, 2);
    set_range(t, 4, 0xA0, 0xBF, 1);
    set_range(t, 5, 0x80, 0x9F, 1);
    set_range(t, 6, 0x90, 0xBF, 2);
    set_range(t, 7, 0x80, 0x8F, 2);
}

static int rec_init(table_rec_t *t, const char *pattern, size_t max_depth, tb_err_t *err)
{
    memset(t->delta, DEAD, sizeof t->delta);
    if (!strcmp(pattern, "any"))
        set_range(t, 0, 0x00, 0xFF, 0);
    else if (!strcmp(pattern, "utf8"))
        utf8_table(t);
    else if (!strcmp(pattern, "letters")) {
        set_range(t, 0, 'A', 'Z', 0);
        set_range(t, 0, 'a', 'z', 0);
        set_range(t, 0, ' ', ' ', 0);
    } else if (!strcmp(pattern, "digits"))
        set_range(t, 0, '0', '9', 0);
    else
        return tb_fail(err, "field 'pattern': '%s' is not a built-in recognizer "
                       "(any, utf8, letters, digits)", pattern);
    memset(t->allowed, 0, sizeof t->allowed);
    for (int s = 0; s < MAX_STATES; s++)
        for (int b = 0; b < 256; b++)
            if (t->delta[s][b] != DEAD)
                t->allowed[s][b >> 6] |= 1ull << (b & 63);
    t->rec = (trie_rec_t){.push_byte = rec_push, .pop_bytes = rec_pop,
                          .allowed_bytes = rec_allowed};
    t->stack = calloc(max_depth + 2, 1);
    t->depth = 0;
    return t->stack ? 0 : tb_fail(err, "out of memory");
}

typedef struct {
    trie_t *trie;
    tb_bitset_t mask;
    table_rec_t rec;
    lex_dfa_t *dfa;     /* for re: and lex: patterns, walked by lex instead of rec */
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
    free(s->rec.stack);
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
    if (!rc && !strncmp(row->pattern, "re:", 3)) {
        s->dfa = lex_dfa_new(row->pattern + 3, NULL, err);
        rc = s->dfa ? lex_rec_init(&s->lex, s->dfa, max_len, err) : -1;
    } else if (!rc && !strncmp(row->pattern, "lex:", 4)) {
        rc = xp_env_input(env, "lexer", row->pattern + 4, err);
        s->dfa = rc ? NULL : lex_lexer_load(row->pattern + 4, NULL, err);
        rc = s->dfa ? lex_rec_init(&s->lex, s->dfa, max_len, err) : -1;
    } else if (!rc && !strncmp(row->pattern, "g:", 2)) {
        rc = open_grammar(s, row->pattern + 2, env, max_len, err);
    } else if (!rc)
        rc = rec_init(&s->rec, row->pattern, max_len, err);
    if (!rc && tb_bitset_init(&s->mask, trie_mask_bits(s->trie)))
        rc = tb_fail(err, "out of memory");
    if (!rc && (s->dfa || s->gram))
        rc = walk_from(s, row, err);
    if (!rc && s->gram)
        rc = gr_mask(s->trie, &s->grec, s->from, &s->mask, NULL, err);
    else if (!rc && s->dfa)
        rc = lex_mask(s->trie, &s->lex, s->from, &s->mask, NULL, err);
    else if (!rc)
        trie_walk(s->trie, &s->rec.rec, &s->mask);
    if (!rc) {
        s->allowed = tb_bitset_count(&s->mask);
    }
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
    tb_bitset_clear_all(&s->mask);
    s->rec.depth = 0;
    trie_rec_t *rec = &s->rec.rec;
    if (s->gram) {
        gr_rec_reset(&s->grec, s->from);
        rec = &s->grec.rec;
    } else if (s->dfa) {
        lex_rec_reset(&s->lex, s->from);
        rec = &s->lex.rec;
    }
    uint64_t nodes = trie_walk(s->trie, rec, &s->mask);
    if (nodes == UINT64_MAX)
        return tb_fail(err, "walk: the mask is smaller than the trie needs");
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
