/*
 * index: the precomputed token index of a regex over a vocabulary, the
 * alternative to walking the trie on every decoding step.
 *
 * For every DFA state reachable from a start state through whole tokens,
 * the index holds the allowed tokens and, for each, the DFA state after it.
 * It is built breadth-first: a state's entry comes from one mask walk of
 * the trie (lex_mask), then the state after each allowed token by feeding
 * its bytes to the DFA; states not seen yet are queued.  A decoder then
 * needs no walk at all: mask(s) copies a list, next(s, token) searches one.
 * What that costs up front (build time, memory) against walking per step is
 * what the index experiment measures.
 *
 * The number of states is capped: a regex whose token-reachable states
 * exceed the cap (a long counted repetition, say) fails with an error
 * naming the regex and the cap, rather than using unbounded memory.
 */
#ifndef LEX_INDEX_H
#define LEX_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "../base/bitset.h"
#include "../base/err.h"
#include "../trie/trie.h"
#include "deriv.h"

#define LEX_INDEX_DEFAULT_MAX_STATES 4096
#define LEX_INDEX_NONE UINT32_MAX

/*
 * Data layout: index states are numbered 0..nstates-1 in BFS order (0 is
 * the start).  Entries of index state i are [off[i], off[i+1]): tok[e] a
 * token id (aliases included, ascending), next[e] the index state after it.
 * dfa_state[i] is the DFA state of index state i; of_dfa maps DFA states
 * below nof_dfa back (LEX_INDEX_NONE: not in the index).  A wide state (one
 * whose entries outweigh a bitset: more than mask_bits / 32 of them) also
 * keeps its mask as a bitset, dense[i] = its first word in words[] (else
 * LEX_INDEX_NONE), so that its mask query is one copy rather than a bit
 * set per token.
 */
typedef struct {
    size_t nstates;
    uint32_t *dfa_state;
    uint64_t *off;
    uint32_t *tok;
    uint32_t *next;
    uint32_t *of_dfa;
    size_t nof_dfa;
    uint32_t *dense;
    uint64_t *words;
    size_t ndense;
    size_t mask_bits; /* the trie's mask bits */
    uint64_t walk_nodes; /* nodes the build's walks visited, in all */
} lex_index_t;

/*
 * Builds the index of `dfa` from DFA state `start` over trie t, whose keys
 * are k (the same keys t was built from: the token bytes come from them).
 * max_states 0: LEX_INDEX_DEFAULT_MAX_STATES.  NULL with err naming the
 * regex on a passed cap or DFA limit.
 */
lex_index_t *lex_index_build(const trie_t *t, const trie_keys_t *k, lex_dfa_t *dfa,
                             uint32_t start, size_t max_states, tb_err_t *err);
void lex_index_free(lex_index_t *x);

/* The index state of DFA state s, or LEX_INDEX_NONE. */
static inline uint32_t lex_index_state(const lex_index_t *x, uint32_t s)
{
    return s < x->nof_dfa ? x->of_dfa[s] : LEX_INDEX_NONE;
}

/* Clears mask (of mask_bits bits at least) and sets the allowed tokens of
 * index state i. */
void lex_index_mask(const lex_index_t *x, uint32_t i, tb_bitset_t *mask);

/* The index state after token `tok` from index state i, or LEX_INDEX_NONE
 * if the token is not allowed there. */
uint32_t lex_index_next(const lex_index_t *x, uint32_t i, uint32_t tok);

/* Entries in all (tokens allowed summed over states). */
static inline uint64_t lex_index_entries(const lex_index_t *x)
{
    return x->off[x->nstates];
}

/* Bytes the index holds. */
size_t lex_index_bytes(const lex_index_t *x);

#endif
