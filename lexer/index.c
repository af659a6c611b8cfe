/* index: the precomputed token index, built breadth-first over the DFA
 * states that whole tokens reach (see index.h). */
#include "index.h"

#include <stdlib.h>
#include <string.h>

#include "../base/buf.h"
#include "rec.h"

/* The growing parts of an index under construction. */
typedef struct {
    lex_index_t *x;
    size_t dfa_state_cap, off_cap, tok_cap, next_cap, dense_cap, words_cap, max_states;
    uint64_t nentries;
    uint32_t *key_of; /* token id -> index into k->keys (aliases: their primary's) */
    lex_dfa_t *dfa;
} build_t;

/* Room for `need` elements in *p: base/buf's doubling growth, asked in the
 * "at least this many" form the index's arrays want. */
static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    return need <= *cap ? 0 : tb_grow(p, cap, *cap, need - *cap, size);
}

/* The index state of DFA state s, adding it to the queue if new. */
static uint32_t state_for(build_t *b, uint32_t s, tb_err_t *err)
{
    lex_index_t *x = b->x;
    if (s >= x->nof_dfa) {
        size_t old = x->nof_dfa, cap = old;
        if (grow((void **)&x->of_dfa, &cap, (size_t)s + 1, sizeof *x->of_dfa)) {
            tb_fail(err, "out of memory for the index");
            return LEX_INDEX_NONE;
        }
        for (size_t i = old; i < cap; i++)
            x->of_dfa[i] = LEX_INDEX_NONE;
        x->nof_dfa = cap;
    }
    if (x->of_dfa[s] != LEX_INDEX_NONE)
        return x->of_dfa[s];
    if (x->nstates >= b->max_states) {
        tb_fail(err, "index of regex '%s': more than %zu DFA states are reachable "
                "through whole tokens (the index's state cap)", b->dfa->pattern, b->max_states);
        return LEX_INDEX_NONE;
    }
    if (grow((void **)&x->dfa_state, &b->dfa_state_cap, x->nstates + 1,
             sizeof *x->dfa_state) ||
        grow((void **)&x->dense, &b->dense_cap, x->nstates + 1, sizeof *x->dense) ||
        grow((void **)&x->off, &b->off_cap, x->nstates + 2, sizeof *x->off)) {
        tb_fail(err, "out of memory for the index");
        return LEX_INDEX_NONE;
    }
    x->dfa_state[x->nstates] = s;
    x->of_dfa[s] = (uint32_t)x->nstates;
    return (uint32_t)x->nstates++;
}

static int add_entry(build_t *b, uint32_t tok, uint32_t next, tb_err_t *err)
{
    lex_index_t *x = b->x;
    uint64_t e = b->nentries;
    if (grow((void **)&x->tok, &b->tok_cap, e + 1, sizeof *x->tok) ||
        grow((void **)&x->next, &b->next_cap, e + 1, sizeof *x->next))
        return tb_fail(err, "out of memory for %llu index entries", (unsigned long long)e);
    x->tok[e] = tok;
    x->next[e] = next;
    b->nentries = e + 1;
    return 0;
}

/* A wide state keeps its mask as a bitset too (see index.h). */
static int keep_dense(build_t *b, const tb_bitset_t *mask, uint32_t i, tb_err_t *err)
{
    lex_index_t *x = b->x;
    size_t nw = tb_bitset_words(mask->nbits);
    x->dense[i] = LEX_INDEX_NONE;
    if ((x->off[i + 1] - x->off[i]) * 32 <= mask->nbits)
        return 0;
    if (x->ndense >= UINT32_MAX / nw ||
        grow((void **)&x->words, &b->words_cap, (x->ndense + 1) * nw, sizeof *x->words))
        return tb_fail(err, "out of memory for the index's dense masks");
    x->dense[i] = (uint32_t)(x->ndense * nw);
    memcpy(x->words + x->dense[i], mask->words, nw * sizeof *x->words);
    x->ndense++;
    return 0;
}

/* One state's entries: its mask, then where each allowed token leads. */
static int index_state(build_t *b, const trie_t *t, const trie_keys_t *k, lex_rec_t *r,
                       tb_bitset_t *mask, uint32_t i, tb_err_t *err)
{
    lex_index_t *x = b->x;
    uint32_t s = x->dfa_state[i];
    uint64_t nodes = 0;
    if (lex_mask(t, r, s, mask, &nodes, err))
        return -1;
    x->walk_nodes += nodes;
    for (size_t w = 0; w < tb_bitset_words(mask->nbits); w++)
        for (uint64_t bits = mask->words[w]; bits; bits &= bits - 1) {
            uint32_t id = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(bits));
            const trie_key_t *key = &k->keys[b->key_of[id]];
            uint32_t ns = lex_dfa_feed(b->dfa, s, key->s, key->len);
            if (lex_dfa_error(b->dfa, err))
                return -1;
            uint32_t ni = state_for(b, ns, err);
            if (ni == LEX_INDEX_NONE || add_entry(b, id, ni, err))
                return -1;
        }
    /* off[i + 1] may not exist before state i + 1 is queued: store after
     * state_for grew it, i.e. now. */
    x->off[i + 1] = b->nentries;
    return keep_dense(b, mask, i, err);
}

static uint32_t *key_index(const trie_keys_t *k)
{
    uint32_t *key_of = malloc((k->id_limit ? k->id_limit : 1) * sizeof *key_of);
    if (!key_of)
        return NULL;
    for (size_t i = 0; i < k->n; i++)
        key_of[k->keys[i].id] = (uint32_t)i;
    for (size_t a = 0; a < k->nalias; a++)
        key_of[k->alias[2 * a]] = key_of[k->alias[2 * a + 1]];
    return key_of;
}

lex_index_t *lex_index_build(const trie_t *t, const trie_keys_t *k, lex_dfa_t *dfa,
                             uint32_t start, size_t max_states, tb_err_t *err)
{
    build_t b = {.max_states = max_states ? max_states : LEX_INDEX_DEFAULT_MAX_STATES,
                 .dfa = dfa};
    lex_index_t *x = b.x = calloc(1, sizeof *x);
    lex_rec_t r = {0};
    tb_bitset_t mask = {0};
    int rc = -1;
    if (!x || !(b.key_of = key_index(k)) || tb_bitset_init(&mask, trie_mask_bits(t))) {
        tb_fail(err, "out of memory for the index");
        goto out;
    }
    x->mask_bits = trie_mask_bits(t);
    if (lex_rec_init(&r, dfa, k->max_len, err) || state_for(&b, start, err) == LEX_INDEX_NONE)
        goto out;
    /* The queue is the index itself: states are appended as found and
     * indexed in that order, so state i's entries follow state i - 1's. */
    x->off[0] = 0;
    for (uint32_t i = 0; i < x->nstates; i++)
        if (index_state(&b, t, k, &r, &mask, i, err))
            goto out;
    rc = 0;
out:
    free(b.key_of);
    lex_rec_free(&r);
    tb_bitset_free(&mask);
    if (rc) {
        lex_index_free(x);
        return NULL;
    }
    return x;
}

void lex_index_free(lex_index_t *x)
{
    if (!x)
        return;
    free(x->dfa_state);
    free(x->off);
    free(x->tok);
    free(x->next);
    free(x->of_dfa);
    free(x->dense);
    free(x->words);
    free(x);
}

void lex_index_mask(const lex_index_t *x, uint32_t i, tb_bitset_t *mask)
{
    if (x->dense[i] != LEX_INDEX_NONE) {
        size_t nw = tb_bitset_words(x->mask_bits);
        memcpy(mask->words, x->words + x->dense[i], nw * sizeof *mask->words);
        if (tb_bitset_words(mask->nbits) > nw)
            memset(mask->words + nw, 0, (tb_bitset_words(mask->nbits) - nw) * sizeof *mask->words);
        return;
    }
    tb_bitset_clear_all(mask);
    for (uint64_t e = x->off[i]; e < x->off[i + 1]; e++)
        tb_bitset_set(mask, x->tok[e]);
}

uint32_t lex_index_next(const lex_index_t *x, uint32_t i, uint32_t tok)
{
    uint64_t lo = x->off[i], hi = x->off[i + 1];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (x->tok[mid] < tok)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < x->off[i + 1] && x->tok[lo] == tok ? x->next[lo] : LEX_INDEX_NONE;
}

size_t lex_index_bytes(const lex_index_t *x)
{
    uint64_t e = lex_index_entries(x);
    return sizeof *x + x->nstates * (sizeof *x->dfa_state + sizeof *x->off) +
           sizeof *x->off + (size_t)e * (sizeof *x->tok + sizeof *x->next) +
           x->nof_dfa * sizeof *x->of_dfa + x->nstates * sizeof *x->dense +
           x->ndense * tb_bitset_words(x->mask_bits) * sizeof *x->words;
}
