/*
 * index: the precomputed token index of a regex over a vocabulary, the
 * alternative to walking the trie on every decoding step.
 *
 * For every DFA state reachable from a start state through whole tokens,
 * the index holds the allowed tokens as a bitset (a mask query is one copy)
 * and, for each allowed token, the DFA state after it.  Next states are
 * not stored per token but per token class: two tokens are in one class
 * when they lead to the same state from every indexed state (same string of
 * DFA byte classes is enough, but coarser classes are found: "ab" and "ba"
 * fall together wherever a and b do), so the table is states x classes and
 * a token's class is one lookup.  The classes are exact by construction:
 * a class is the tuple of states its tokens reach, not a guess from the
 * regex's text.
 *
 * The build (index.c) runs every token from many states at once, as one
 * vector of DFA states stepped along the sorted keys; vectors are
 * hash-consed and their steps memoized, so a trie node costs a table
 * lookup whatever the number of states.  When the states that bytes reach
 * from the start are few, one such walk from all of them is enough;
 * otherwise the build goes round by round, breadth-first, each round
 * taking the states the previous one found.  Tokens holding a byte no
 * reachable state can read (a dead byte) leave before the first walk.
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

/* One distinct mask: n tokens, as a bitset (dense: words[at .. at + nw),
 * nw = tb_bitset_words(mask_bits)) or, when that takes at most half the
 * bitset's bytes (n <= mask_bits / 64: a query then sets few bits), as
 * their ids in ascending order (ids[at .. at + n)). */
typedef struct {
    uint64_t at;
    uint32_t n;
    uint32_t dense;
} lex_index_set_t;

/* Index state i's next states: a full row, next[at + c] for class c, when
 * n is LEX_INDEX_NONE; else its n allowed classes in ascending order,
 * pair_class[at .. at + n), with their next states in pair_next beside
 * (a state that allows few classes of many). */
typedef struct {
    uint64_t at;
    uint32_t n;
} lex_index_row_t;

/*
 * Data layout: index states are numbered 0..nstates-1 in BFS order (0 is
 * the start); dfa_state[i] is the DFA state of index state i, and of_dfa
 * maps DFA states below nof_dfa back (LEX_INDEX_NONE: not in the index).
 * Token t's class is class_of[t] for every id t below mask_bits (aliases:
 * their primary's) when class_of is set; when few tokens are allowed
 * anywhere, class_of is NULL and the nlive tokens of a class other than 0
 * are live_id[] (ascending) with live_class[] beside.  Class 0 holds the
 * tokens allowed in no indexed state.  row[i] gives the index state after
 * a token of class c from index state i, or LEX_INDEX_NONE (not allowed:
 * always for class 0), from next or the pairs.  Masks are deduplicated: state
 * i's allowed tokens are set[mask_of[i]], one of nsets.
 */
typedef struct {
    size_t nstates;
    uint32_t *dfa_state;
    uint32_t *of_dfa;
    size_t nof_dfa;
    uint32_t nclasses;
    uint32_t *class_of;
    uint32_t *live_id, *live_class;
    size_t nlive;
    lex_index_row_t *row;
    uint32_t *next;
    size_t nnext;
    uint32_t *pair_class, *pair_next;
    size_t npairs;
    uint32_t *mask_of;
    lex_index_set_t *set;
    size_t nsets;
    uint64_t *words;
    size_t nwords;
    uint32_t *ids;
    size_t nids;
    size_t mask_bits;    /* the trie's mask bits */
    uint64_t entries;    /* (state, allowed token) pairs, aliases included */
    uint64_t walk_nodes; /* vector steps the build's walks took, in all */
    uint32_t rounds;     /* walks the build ran (1: all states at once) */
    size_t dead_tokens;  /* tokens dropped up front for a dead byte */
} lex_index_t;

/* Bytes by structure (lex_index_mem). */
typedef struct {
    size_t states;  /* dfa_state, of_dfa, mask_of, row */
    size_t classes; /* class_of, or live_id and live_class */
    size_t next;    /* the next states: full rows and pairs */
    size_t masks;   /* the distinct masks: set, words, ids */
    size_t total;   /* all of the above and the header */
} lex_index_mem_t;

/*
 * Builds the index of `dfa` from DFA state `start` over trie t, whose keys
 * are k (the same keys t was built from: the token bytes come from them;
 * the trie gives the mask size).  max_states 0:
 * LEX_INDEX_DEFAULT_MAX_STATES.  NULL with err naming the regex on a passed
 * cap or DFA limit.
 */
lex_index_t *lex_index_build(const trie_t *t, const trie_keys_t *k, lex_dfa_t *dfa,
                             uint32_t start, size_t max_states, tb_err_t *err);
void lex_index_free(lex_index_t *x);

/* The index state of DFA state s, or LEX_INDEX_NONE. */
static inline uint32_t lex_index_state(const lex_index_t *x, uint32_t s)
{
    return s < x->nof_dfa ? x->of_dfa[s] : LEX_INDEX_NONE;
}

/* Sets mask (of mask_bits bits at least) to the allowed tokens of index
 * state i: a copy. */
void lex_index_mask(const lex_index_t *x, uint32_t i, tb_bitset_t *mask);

/* Token tok's class (0: allowed nowhere). */
uint32_t lex_index_class(const lex_index_t *x, uint32_t tok);

/* The index state after token `tok` from index state i, or LEX_INDEX_NONE
 * if the token is not allowed there. */
uint32_t lex_index_next(const lex_index_t *x, uint32_t i, uint32_t tok);

/* Entries in all (tokens allowed summed over states). */
static inline uint64_t lex_index_entries(const lex_index_t *x)
{
    return x->entries;
}

/* Bytes the index holds, by structure. */
void lex_index_mem(const lex_index_t *x, lex_index_mem_t *m);
size_t lex_index_bytes(const lex_index_t *x);

#endif
