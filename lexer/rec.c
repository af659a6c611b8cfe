/* rec: the DFA recognizer stack and the token mask (see rec.h). */
#include "rec.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(LEX_UNKNOWN == TRIE_REC_UNKNOWN && LEX_DEAD == 0,
               "the DFA's table is a trie_rec_table_t as it stands");

/* The transition not in the table yet: derive it (which may move the
 * table). */
static uint32_t rec_compute(trie_rec_t *tr, uint32_t row, uint8_t b)
{
    lex_rec_t *r = (lex_rec_t *)tr;
    uint32_t s = lex_dfa_step_slow(r->dfa, row / r->ncls, r->dfa->cls[b]);
    tr->tab.table = r->dfa->trans;
    return s * r->ncls;
}

static void rec_allowed(trie_rec_t *tr, uint64_t set[4])
{
    lex_rec_t *r = (lex_rec_t *)tr;
    trie_rec_table_t *t = &tr->tab;
    memcpy(set, lex_dfa_allowed(r->dfa, t->stack[t->depth] / r->ncls), 4 * sizeof *set);
    t->table = r->dfa->trans;
}

int lex_rec_init(lex_rec_t *r, lex_dfa_t *dfa, size_t max_depth, tb_err_t *err)
{
    memset(r, 0, sizeof *r);
    r->dfa = dfa;
    if (trie_rec_table_init(&r->rec, rec_compute, rec_allowed, max_depth))
        return tb_fail(err, "out of memory");
    lex_rec_reset(r, LEX_START);
    return 0;
}

void lex_rec_free(lex_rec_t *r)
{
    trie_rec_table_free(&r->rec);
}

void lex_rec_reset(lex_rec_t *r, uint32_t state)
{
    trie_rec_table_t *t = &r->rec.tab;
    t->table = r->dfa->trans;
    t->cls = r->dfa->cls;
    r->ncls = r->dfa->ncls;
    t->depth = 0;
    t->stack[0] = state * r->ncls;
}

int lex_mask(const trie_t *t, lex_rec_t *r, uint32_t state, tb_bitset_t *mask,
             uint64_t *nodes, tb_err_t *err)
{
    tb_bitset_clear_all(mask);
    lex_rec_reset(r, state);
    uint64_t n = trie_walk(t, &r->rec, mask);
    if (n == UINT64_MAX)
        return tb_fail(err, "mask: %zu bits, the trie needs %zu", mask->nbits,
                       trie_mask_bits(t));
    if (nodes)
        *nodes = n;
    return lex_dfa_error(r->dfa, err);
}

void lex_mask_logits(const tb_bitset_t *mask, float *logits, size_t n)
{
    for (size_t i = 0; i < n; i++)
        logits[i] = i < mask->nbits && tb_bitset_get(mask, i) ? 0.0f : LEX_LOGIT_BLOCKED;
}
