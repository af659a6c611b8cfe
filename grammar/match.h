/*
 * match: token masks under a grammar, and the matcher a decoding loop
 * drives (mask, consume, roll back, accepting, forced bytes).
 *
 * gr_rec_t is the trie recognizer over a grammar (gram.h): its table is the
 * grammar's state table, which every trie layout runs inline; push_byte is
 * called only for an entry not computed yet (where the parser may be
 * consulted).  A token is allowed iff the text so far followed by the
 * token's bytes is a prefix of a sentence (cfg.h's non-greedy lexing):
 * every step along its path is live, since a live state always has a
 * sentence ahead (every rule is productive and every lexeme non-empty).
 *
 * The matcher keeps the state after each consumed token, so rolling back is
 * popping; states and parser rows never change once made, so nothing else
 * needs undoing.  That history is 4 bytes a token: a matcher that runs for
 * millions of tokens keeps only the last ones it may roll back over
 * (gr_matcher_keep).
 *
 * Threads (gram.h says what the grammar allows): matchers of one grammar
 * may run in different threads at once, a matcher in one thread at a
 * time.  gr_matcher_mask (without a slicer), gr_matcher_consume,
 * gr_matcher_consume_id, gr_mask_token_ids, gr_matcher_rollback,
 * gr_matcher_keep, gr_matcher_accepting and gr_matcher_forced are safe so; a mask cache is one thread's (each
 * matcher its own, or matchers that one thread drives), and the trie,
 * read only, may be shared.  A slicer extends the grammar's lexer, so
 * matchers that use one must keep their grammar to one thread.
 */
#ifndef GR_MATCH_H
#define GR_MATCH_H

#include <stddef.h>
#include <stdint.h>

#include "../base/bitset.h"
#include "../base/buf.h"
#include "../base/err.h"
#include "../base/parallel.h"
#include "../lexer/slicer.h"
#include "../trie/trie.h"
#include "gram.h"
#include "maskcache.h"

typedef struct {
    trie_rec_t rec; /* first, so the callbacks can cast back */
    gr_gram_t *g;   /* not owned */
} gr_rec_t;

/* A recognizer over g for walks at most max_depth bytes deep (the trie's
 * longest key); starts at GR_START. */
int gr_rec_init(gr_rec_t *r, gr_gram_t *g, size_t max_depth, tb_err_t *err);
void gr_rec_free(gr_rec_t *r);
void gr_rec_reset(gr_rec_t *r, uint32_t state);

/* The mask at grammar state `state`: clears mask, walks t, sets every
 * allowed token.  *nodes: nodes offered.  -1 with err if the mask is too
 * small or the grammar passed a limit (the mask is then incomplete). */
int gr_mask(const trie_t *t, gr_rec_t *r, uint32_t state, tb_bitset_t *mask,
            uint64_t *nodes, tb_err_t *err);

/* Adds to mask the ids of the token-id lexemes (cfg.h) that may be read
 * at `state`: exactly their ids, set directly (no walk).  Nothing for a
 * grammar without them.  gr_matcher_mask does it itself; callers of
 * gr_mask and gr_mask_sliced call it after. */
int gr_mask_token_ids(gr_gram_t *g, uint32_t state, tb_bitset_t *mask, tb_err_t *err);

/* The same through a slicer bound to g's lexer DFA (lex_slicer_bind): the
 * slices some lexer state of `state` subsumes are taken whole; where none
 * is, `all` (the trie over every key, may be NULL) is walked once
 * (lex_slicer_mask_by). */
int gr_mask_sliced(lex_slicer_t *s, gr_rec_t *r, uint32_t state, const trie_t *all,
                   tb_bitset_t *mask, lex_slice_stats_t *st, tb_err_t *err);

typedef struct {
    gr_gram_t *g; /* not owned */
    gr_rec_t rec;
    TB_VEC(uint32_t) hist; /* hist.data[k]: the state after forgot + k tokens */
    size_t forgot;         /* tokens whose states were dropped (gr_matcher_keep) */
    size_t keep;           /* 0: every state kept; else at least the last keep */
    lex_slicer_t *slicer;  /* not owned; NULL: masks walk the whole trie */
    gr_maskcache_t *cache; /* not owned; NULL: every mask is walked */
} gr_matcher_t;

int gr_matcher_init(gr_matcher_t *m, gr_gram_t *g, size_t max_depth, tb_err_t *err);
void gr_matcher_free(gr_matcher_t *m);

static inline uint32_t gr_matcher_state(const gr_matcher_t *m)
{
    return m->hist.data[m->hist.len - 1];
}

/* Tokens consumed so far. */
static inline size_t gr_matcher_tokens(const gr_matcher_t *m)
{
    return m->forgot + m->hist.len - 1;
}

/* From now on rollback reaches at least k tokens back, and the states of
 * older tokens are dropped (memory 8k bytes at most, whatever the length);
 * 0: all of them kept, as a new matcher does. */
void gr_matcher_keep(gr_matcher_t *m, size_t k);

/* Masks through slicer s from now on (bound here to the grammar's lexer;
 * s must be built over the keys of the tries the masks walk). */
int gr_matcher_use_slicer(gr_matcher_t *m, lex_slicer_t *s, tb_err_t *err);

/* Masks kept in c from now on and taken from it where their state was
 * seen (maskcache.h): c must be over the matcher's grammar and masks of the
 * trie (or the slicer's keys) the masks walk; several matchers of one
 * grammar may share it (not across threads). */
void gr_matcher_use_cache(gr_matcher_t *m, gr_maskcache_t *c);

/* The mask of the tokens allowed next (see gr_mask): over trie t, or
 * through the slicer if the matcher has one (t, which may then be NULL, is
 * walked only where no slice is whole: gr_mask_sliced); from the
 * cache if the matcher has one and it holds the state's mask (*nodes 0). */
int gr_matcher_mask(gr_matcher_t *m, const trie_t *t, tb_bitset_t *mask, uint64_t *nodes,
                    tb_err_t *err);

/* Consumes one token's bytes.  0: done; 1: refused, nothing consumed,
 * *refused_at (may be NULL) the offset of the first refused byte; -1 with
 * err on a limit or memory. */
int gr_matcher_consume(gr_matcher_t *m, const uint8_t *bytes, size_t n, size_t *refused_at,
                       tb_err_t *err);

/* Consumes token `id` whose bytes are bytes[0..n): as a token-id lexeme
 * where one that holds id may come (as llguidance, that reading alone),
 * else as gr_matcher_consume does its bytes.  Returns as that does. */
int gr_matcher_consume_id(gr_matcher_t *m, uint32_t id, const uint8_t *bytes, size_t n,
                          size_t *refused_at, tb_err_t *err);

/* Undoes the last k tokens; -1 if fewer were consumed, or if some of them
 * were consumed before the states gr_matcher_keep kept. */
int gr_matcher_rollback(gr_matcher_t *m, size_t k);

/* Whether the text so far is a sentence (end of text allowed). */
int gr_matcher_accepting(gr_matcher_t *m);

/* The bytes the grammar forces next: while the state does not accept and
 * exactly one byte value is allowed, that byte (at most max of them).
 * Appended to out; the matcher's state does not change.  -1 with err on a
 * limit or memory. */
int gr_matcher_forced(gr_matcher_t *m, size_t max, tb_buf_t *out, tb_err_t *err);

/* The masks of matchers m[0..n) (gr_matcher_mask over trie t) into
 * masks[i], and the nodes walked into nodes[i] (nodes may be NULL), on the
 * threads of `pool` (base/parallel.h: started once, woken per batch; the
 * caller's thread among them), or on the caller's alone when pool is
 * NULL.  The matchers may share grammars but not mask caches, and must
 * not use slicers (see Threads).  -1 with err naming the lowest matcher
 * that failed; the other masks are then unspecified. */
int gr_masks_batch(gr_matcher_t *const *m, size_t n, const trie_t *t, tb_bitset_t *const *masks,
                   uint64_t *nodes, tb_pool_t *pool, tb_err_t *err);

#endif
