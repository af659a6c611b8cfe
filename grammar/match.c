/* match: grammar masks and the matcher (see match.h). */
#include "match.h"

#include <stdlib.h>
#include <string.h>

/* ---- the recognizer ----------------------------------------------------------- */

/* The entry not in the table yet: the grammar's step, which may consult
 * the parser and move the table. */
static uint32_t rec_compute(trie_rec_t *tr, uint32_t row, uint8_t b)
{
    gr_gram_t *g = ((gr_rec_t *)tr)->g;
    uint32_t next = gr_step_slow(g, row / g->ncls, b) * g->ncls;
    tr->tab.table = gr_table(g);
    return next;
}

/* Live classes of the state on top, spread to their bytes. */
static void rec_allowed(trie_rec_t *tr, uint64_t set[4])
{
    gr_rec_t *r = (gr_rec_t *)tr;
    gr_gram_t *g = r->g;
    trie_rec_table_t *t = &tr->tab;
    uint32_t s = t->stack[t->depth] / g->ncls;
    uint8_t live[256];
    for (uint32_t c = 0; c < g->ncls; c++)
        live[c] = gr_step(g, s, g->dfa->rep[c]) != GR_DEAD;
    memset(set, 0, 4 * sizeof *set);
    for (int b = 0; b < 256; b++)
        if (live[g->dfa->cls[b]])
            set[b >> 6] |= 1ull << (b & 63);
    t->table = gr_table(g);
}

int gr_rec_init(gr_rec_t *r, gr_gram_t *g, size_t max_depth, tb_err_t *err)
{
    memset(r, 0, sizeof *r);
    r->g = g;
    if (trie_rec_table_init(&r->rec, rec_compute, rec_allowed, max_depth))
        return tb_fail(err, "out of memory");
    gr_rec_reset(r, GR_START);
    return 0;
}

void gr_rec_free(gr_rec_t *r)
{
    trie_rec_table_free(&r->rec);
}

void gr_rec_reset(gr_rec_t *r, uint32_t state)
{
    trie_rec_table_t *t = &r->rec.tab;
    t->table = gr_table(r->g);
    t->cls = r->g->dfa->cls;
    t->depth = 0;
    t->stack[0] = state * r->g->ncls;
}

int gr_mask(const trie_t *t, gr_rec_t *r, uint32_t state, tb_bitset_t *mask,
            uint64_t *nodes, tb_err_t *err)
{
    if (mask->nbits < trie_mask_bits(t))
        return tb_fail(err, "mask: %zu bits, the trie needs %zu", mask->nbits,
                       trie_mask_bits(t));
    tb_bitset_clear_all(mask);
    gr_rec_reset(r, state);
    uint64_t n = trie_walk(t, &r->rec, mask);
    if (nodes)
        *nodes = n;
    if (n == UINT64_MAX)
        return tb_fail(err, "mask: the trie's walk could not be prepared (memory)");
    return gr_gram_error(r->g, err);
}

static uint64_t walk_part(const trie_t *t, void *ctx, uint32_t from, tb_bitset_t *mask)
{
    gr_rec_t *r = ctx;
    gr_rec_reset(r, from);
    return trie_walk(t, &r->rec, mask);
}

static uint32_t grammar_step(void *ctx, uint32_t from, uint8_t b)
{
    return gr_step(ctx, from, b);
}

int gr_mask_sliced(lex_slicer_t *s, gr_rec_t *r, uint32_t state, const trie_t *all,
                   tb_bitset_t *mask, lex_slice_stats_t *st, tb_err_t *err)
{
    if (s->bound != r->g->dfa)
        return tb_fail(err, "slicer: not bound to the grammar's lexer");
    size_t n;
    const gr_pair_t *p = gr_pairs(r->g, state, &n);
    uint32_t lex[8];
    /* Slices are an optimisation: a state with more pairs than this walks,
     * and so does every state where a lazy lexeme may cut a lexer state
     * short (gram.h: subsumption is the lexer's). */
    size_t k = n <= 8 && !r->g->has_lazy ? n : 0;
    for (size_t i = 0; i < k; i++)
        lex[i] = p[i].lex;
    /* The grammar's byte classes are its lexer's, the DFA bound. */
    uint32_t after_loop = lex_slicer_after_loop(s, grammar_step, r->g, state);
    if (lex_slicer_mask_by(s, lex, k, all, state, after_loop, walk_part, r, mask, st, err))
        return -1;
    return gr_gram_error(r->g, err);
}

/* ---- the matcher -------------------------------------------------------------- */

int gr_matcher_init(gr_matcher_t *m, gr_gram_t *g, size_t max_depth, tb_err_t *err)
{
    memset(m, 0, sizeof *m);
    m->g = g;
    if (gr_rec_init(&m->rec, g, max_depth, err))
        return -1;
    if (tb_vec_push(&m->hist, GR_START)) {
        gr_rec_free(&m->rec);
        return tb_fail(err, "out of memory");
    }
    return 0;
}

void gr_matcher_free(gr_matcher_t *m)
{
    gr_rec_free(&m->rec);
    free(m->hist.data);
    memset(m, 0, sizeof *m);
}

int gr_matcher_use_slicer(gr_matcher_t *m, lex_slicer_t *s, tb_err_t *err)
{
    if (lex_slicer_bind(s, m->g->dfa, err))
        return -1;
    m->slicer = s;
    return 0;
}

void gr_matcher_use_cache(gr_matcher_t *m, gr_maskcache_t *c)
{
    m->cache = c;
}

/* State s's mask walked; *in_string set where some slice was taken whole
 * (the lexer is inside a string's body). */
static int walk_mask(gr_matcher_t *m, uint32_t s, const trie_t *t, tb_bitset_t *mask,
                     uint64_t *nodes, int *in_string, tb_err_t *err)
{
    *in_string = 0;
    if (!m->slicer)
        return gr_mask(t, &m->rec, s, mask, nodes, err);
    lex_slice_stats_t st;
    int rc = gr_mask_sliced(m->slicer, &m->rec, s, t, mask, &st, err);
    if (nodes)
        *nodes = st.nodes;
    *in_string = st.whole > 0;
    return rc;
}

/* The longest token's bytes: the slicer's keys are the vocabulary's, and
 * t may then be NULL. */
static uint32_t longest_token(const gr_matcher_t *m, const trie_t *t)
{
    return m->slicer ? m->slicer->max_len : trie_max_len(t);
}

/* The mask at state s, kept in and taken from the cache. */
static int state_mask(gr_matcher_t *m, uint32_t s, const trie_t *t, tb_bitset_t *mask,
                      uint64_t *nodes, tb_err_t *err)
{
    /* A mask inside a string is mostly the slices' union (maskcache.h). */
    const tb_bitset_t *base = m->slicer ? &m->slicer->all : NULL;
    if (m->cache && gr_maskcache_get(m->cache, s, mask, base)) {
        if (nodes)
            *nodes = 0;
        return 0;
    }
    int in_string;
    uint64_t walked = 0;
    if (walk_mask(m, s, t, mask, &walked, &in_string, err))
        return -1;
    if (nodes)
        *nodes = walked;
    /* A token inside a string's body mostly leaves the state where it was,
     * and a walk of more nodes than a quarter of the mask's words costs
     * more than keeping the mask (a pass over its words, maskcache.h)
     * even if the state comes back only once, as an object's states do in
     * the next instance of a schema: either mask is kept at once rather
     * than on the state's second miss.  (At twice the words, when keeping
     * meant listing ids: every 10th MaskBench file 189,501 hits, now
     * 220,049; TBM p75 about 14% lower, the largest cache the same.) */
    int now = in_string || walked > (uint64_t)tb_bitset_words(mask->nbits) / 4;
    if (m->cache && gr_maskcache_put(m->cache, s, mask, base, now))
        return tb_fail(err, "out of memory");
    return 0;
}

/* Clears from mask, taken at a state lifted for texts of at most `exact`
 * bytes, the slicer's long keys of `exact` bytes or more (a token and one
 * byte more than it) that state s itself refuses. */
static int refuse_long_keys(gr_matcher_t *m, uint32_t s, uint32_t exact, tb_bitset_t *mask,
                            tb_err_t *err)
{
    const lex_slicer_t *sl = m->slicer;
    for (size_t i = 0; i < sl->nlong; i++) {
        const trie_key_t *k = &sl->long_keys[i];
        if (k->len + 1 > exact && tb_bitset_get(mask, k->id) &&
            gr_feed(m->g, s, k->s, k->len, NULL) == GR_DEAD)
            tb_bitset_clear(mask, k->id);
    }
    return gr_gram_error(m->g, err);
}

/* The mask of the tokens' bytes (gr_matcher_mask but token-id lexemes). */
static int byte_mask(gr_matcher_t *m, const trie_t *t, tb_bitset_t *mask, uint64_t *nodes,
                     tb_err_t *err)
{
    /* The lifted state's mask is the state's for a token's bytes and one
     * more (a character begun before it), and a long string's positions
     * share it.  Through a slicer it may be lifted below the longest
     * token, down to the slicer's long keys, which are then asked of the
     * state itself: a string under a maxLength of 120 is lifted while
     * about 110 characters are left, not only 129 (Llama 3's longest
     * token and one), and its positions share a lifted state instead of
     * each walking a product of its pattern and its characters left. */
    uint32_t longest = longest_token(m, t) + 1, exact, at = gr_matcher_state(m);
    uint32_t floor = m->slicer ? m->slicer->long_min : longest;
    uint32_t s = gr_lifted(m->g, at, longest, floor, &exact);
    if (state_mask(m, s, t, mask, nodes, err))
        return -1;
    return exact < longest ? refuse_long_keys(m, at, exact, mask, err) : 0;
}

int gr_matcher_mask(gr_matcher_t *m, const trie_t *t, tb_bitset_t *mask, uint64_t *nodes,
                    tb_err_t *err)
{
    if (byte_mask(m, t, mask, nodes, err))
        return -1;
    return m->g->tokenlex ? gr_mask_token_ids(m->g, gr_matcher_state(m), mask, err) : 0;
}

/* Moves the matcher to state s, its next token's. */
static int push_state(gr_matcher_t *m, uint32_t s, tb_err_t *err)
{
    if (m->keep && m->hist.len > 2 * m->keep) {
        /* the last keep states, and the one before them that rolling back
         * over all keep tokens returns to; moved once every keep tokens */
        size_t drop = m->hist.len - m->keep - 1;
        memmove(m->hist.data, m->hist.data + drop, (m->keep + 1) * sizeof *m->hist.data);
        m->hist.len -= drop;
        m->forgot += drop;
    }
    if (tb_vec_push(&m->hist, s))
        return tb_fail(err, "out of memory");
    return 0;
}

int gr_matcher_consume(gr_matcher_t *m, const uint8_t *bytes, size_t n, size_t *refused_at,
                       tb_err_t *err)
{
    size_t at = 0;
    uint32_t s = gr_feed(m->g, gr_matcher_state(m), bytes, n, &at);
    if (gr_gram_error(m->g, err))
        return -1;
    if (s == GR_DEAD) {
        if (refused_at)
            *refused_at = at;
        return 1;
    }
    return push_state(m, s, err);
}

void gr_matcher_keep(gr_matcher_t *m, size_t k)
{
    m->keep = k;
}

int gr_matcher_rollback(gr_matcher_t *m, size_t k)
{
    if (k >= m->hist.len)
        return -1;
    m->hist.len -= k;
    return 0;
}

int gr_matcher_accepting(gr_matcher_t *m)
{
    return gr_accepting(m->g, gr_matcher_state(m));
}

int gr_matcher_forced(gr_matcher_t *m, size_t max, tb_buf_t *out, tb_err_t *err)
{
    gr_gram_t *g = m->g;
    uint32_t s = gr_matcher_state(m);
    for (size_t k = 0; k < max && !gr_accepting(g, s); k++) {
        uint32_t only = GR_DEAD, nlive = 0;
        uint8_t byte = 0;
        for (uint32_t c = 0; c < g->ncls && nlive < 2; c++) {
            uint32_t next = gr_step(g, s, g->dfa->rep[c]);
            if (next == GR_DEAD)
                continue;
            nlive += g->class_size[c];
            only = next;
            byte = g->dfa->rep[c];
        }
        if (nlive != 1)
            break;
        if (tb_buf_putc(out, byte))
            return tb_fail(err, "out of memory");
        s = only;
    }
    return gr_gram_error(g, err);
}

/* ---- token-id lexemes (grammars with special tokens only) --------------------- */

int gr_mask_token_ids(gr_gram_t *g, uint32_t state, tb_bitset_t *mask, tb_err_t *err)
{
    if (!g->tokenlex)
        return 0;
    uint64_t *may = malloc(g->parser.words * sizeof *may);
    if (!may)
        return tb_fail(err, "out of memory");
    int rc = gr_token_lexemes(g, state, may) ? gr_gram_error(g, err) : 0;
    for (size_t i = 0; !rc && i < g->cfg.lex.len; i++) {
        if (!(may[i >> 6] >> (i & 63) & 1))
            continue;
        const gr_lexeme_t *lx = &g->cfg.lex.data[i];
        for (uint32_t k = 0; k < lx->nids; k++)
            for (uint64_t id = lx->ids[k].lo; id <= lx->ids[k].hi && id < mask->nbits; id++)
                tb_bitset_set(mask, (size_t)id);
    }
    free(may);
    return rc;
}

int gr_matcher_consume_id(gr_matcher_t *m, uint32_t id, const uint8_t *bytes, size_t n,
                          size_t *refused_at, tb_err_t *err)
{
    uint32_t s = gr_step_token(m->g, gr_matcher_state(m), id);
    if (gr_gram_error(m->g, err))
        return -1;
    return s != GR_DEAD ? push_state(m, s, err) : gr_matcher_consume(m, bytes, n, refused_at, err);
}
