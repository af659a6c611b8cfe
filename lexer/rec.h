/*
 * rec: the recognizer stack that a trie walk runs under, over a lazy DFA
 * (deriv.h), and the token mask it produces.
 *
 * lex_rec_t implements trie_rec_t: push_byte looks up the transition of the
 * state on top (two loads when cached) and pushes the next state unless it
 * is dead; pop_bytes only moves the top.  It also hands the walks its DFA
 * as a dense table (trie_rec_table_t): the DFA's entries already are next
 * row offsets with 0 for the dead state and LEX_UNKNOWN (= TRIE_REC_UNKNOWN)
 * for a transition not derived yet, so a trie walk runs the table inline
 * and calls push_byte only to derive a missing entry.  A token is allowed
 * iff the text so far followed by its bytes is a prefix of some string of
 * the language, which is exactly "every push along its path succeeded"
 * since the DFA's only empty-language state is the dead one.
 */
#ifndef LEX_REC_H
#define LEX_REC_H

#include <stddef.h>
#include <stdint.h>

#include "../base/bitset.h"
#include "../base/err.h"
#include "../trie/trie.h"
#include "deriv.h"

/* The stack lives in rec.tab (trie.h): tab.stack[0..tab.depth] are the
 * states along the walk's path as row offsets into the DFA's table (state
 * * ncls, see deriv.h), tab.stack[0] the state the walk started from;
 * tab.cap bounds depth + 1.  tab.table and tab.cls copy the DFA's trans
 * and cls pointers so that neither push_byte nor a walk goes through dfa;
 * they are refreshed whenever this recognizer grows the DFA, and by
 * lex_rec_reset (so grow the DFA elsewhere only between a reset and the
 * next walk). */
typedef struct {
    trie_rec_t rec; /* first, so the callbacks can cast back */
    uint32_t ncls;
    lex_dfa_t *dfa; /* not owned */
} lex_rec_t;

/* A recognizer over dfa for walks at most max_depth bytes deep (the trie's
 * longest key).  Starts at LEX_START. */
int lex_rec_init(lex_rec_t *r, lex_dfa_t *dfa, size_t max_depth, tb_err_t *err);
void lex_rec_free(lex_rec_t *r);
/* Empties the stack down to one state. */
void lex_rec_reset(lex_rec_t *r, uint32_t state);

/*
 * The token mask at DFA state `state`: clears mask, walks the trie and sets
 * the bit of every allowed token.  *nodes receives the nodes the walk
 * offered to the recognizer.  -1 with err set if the mask is too small for
 * the trie or the DFA passed a limit during the walk (then the mask is
 * incomplete).
 */
int lex_mask(const trie_t *t, lex_rec_t *r, uint32_t state, tb_bitset_t *mask,
             uint64_t *nodes, tb_err_t *err);

/* The logits form of a mask: 0 for an allowed id, LEX_LOGIT_BLOCKED for the
 * others, for ids [0, n). */
#define LEX_LOGIT_BLOCKED (-1e30f)
void lex_mask_logits(const tb_bitset_t *mask, float *logits, size_t n);

#endif
