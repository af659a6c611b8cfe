/* rec: the DFA recognizer stack and the token mask (see rec.h). */
#include "rec.h"

#include <stdlib.h>
#include <string.h>

static int rec_push(trie_rec_t *tr, uint8_t b)
{
    lex_rec_t *r = (lex_rec_t *)tr;
    uint32_t next = lex_dfa_next(r->dfa, r->stack[r->depth], b);
    /* The depth check cannot fire under a trie no deeper than promised;
     * it keeps a wrong promise from writing past the stack. */
    if (next == LEX_DEAD || r->depth + 1 >= r->cap)
        return 0;
    r->stack[++r->depth] = next;
    return 1;
}

static void rec_pop(trie_rec_t *tr, uint32_t n)
{
    lex_rec_t *r = (lex_rec_t *)tr;
    r->depth -= n <= r->depth ? n : r->depth;
}

static void rec_allowed(trie_rec_t *tr, uint64_t set[4])
{
    lex_rec_t *r = (lex_rec_t *)tr;
    memcpy(set, lex_dfa_allowed(r->dfa, r->stack[r->depth]), 4 * sizeof *set);
}

int lex_rec_init(lex_rec_t *r, lex_dfa_t *dfa, size_t max_depth, tb_err_t *err)
{
    memset(r, 0, sizeof *r);
    r->rec = (trie_rec_t){.push_byte = rec_push, .pop_bytes = rec_pop,
                          .allowed_bytes = rec_allowed};
    r->dfa = dfa;
    r->cap = max_depth + 2;
    r->stack = malloc(r->cap * sizeof *r->stack);
    if (!r->stack)
        return tb_fail(err, "out of memory");
    r->stack[0] = LEX_START;
    return 0;
}

void lex_rec_free(lex_rec_t *r)
{
    free(r->stack);
    r->stack = NULL;
    r->cap = r->depth = 0;
}

void lex_rec_reset(lex_rec_t *r, uint32_t state)
{
    r->depth = 0;
    r->stack[0] = state;
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
