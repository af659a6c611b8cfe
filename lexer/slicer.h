/*
 * slicer: token masks that skip the parts of the vocabulary a lexer state
 * is known to allow whole.
 *
 * A mask in an unconstrained context (inside a JSON string, a comment)
 * allows most of the vocabulary, and a plain walk visits most of the trie.
 * The slicer splits the vocabulary once, at build time, into slices
 * described by regexes and a residual part:
 *   - the slices are taken in the order given; a token belongs to the first
 *     slice whose language has a string that starts with the token's bytes
 *     (the token is a prefix of the slice: full matches included, and also
 *     a token that ends inside a UTF-8 character the slice allows, which no
 *     code-point regex can match whole), so each token is in exactly one
 *     slice or in the residual.  LEX_SLICE_FULL asks for full matches
 *     instead (a token the slice's regex matches whole), for comparison;
 *   - every slice gets its own trie (in the layout asked for) over its
 *     tokens and a precomputed mask: the bits of its tokens and of their
 *     aliases (trie.h), over the full vocabulary's ids;
 *   - the residual (tokens no slice matches) gets a trie too.
 * The mask at lexer state s is then, for each slice, its precomputed mask
 * if s subsumes the slice (every string of the slice's language, appended
 * to the text so far, keeps the lexer's DFA live), else the walk of the
 * slice's trie; plus the walk of the residual trie.  It is exactly the mask
 * of a plain walk of the full trie: a subsumed slice's tokens are all
 * allowed, and a walked slice answers token by token.
 *
 * Subsumption is decided by exploring the product of the slice's DFA and
 * the lexer's DFA from (slice start, s) over the joint byte classes of the
 * two, breadth first, as deep as the slice's longest token: s subsumes the
 * slice's tokens iff no pair within that depth has a live slice state and
 * a dead lexer state (a live slice state always has a string of the slice
 * below it, deriv.h).  That covers every prefix of the slice's strings up
 * to that length, not only the strings, which is why membership by prefix
 * is exact: a member token's path through the slice's DFA stays live, so
 * the product visits it, so the lexer is live after it.  The exploration
 * stops after a budget of pairs (or of new lexer DFA states and terms,
 * which outlive it) and then answers "not subsumed", which only costs a
 * walk.  Verdicts are cached per lexer state, so the product is explored
 * once per state.
 *
 * The default slices, for JSON-ish use (a string body excludes '"', '\\'
 * and the control characters; 0x7F is left out as well):
 *   [^"\\\x00-\x1F\x7F]{1,10}   short string pieces (most tokens)
 *   [^"\\\x00-\x1F\x7F]{1,30}   with first-match order: lengths 11..30
 *   [^"\\\x00-\x1F\x7F]+        the longer ones
 * The bounded slices are subsumed by a string body with a maxLength of at
 * least 10 (30) characters left, not only by an unbounded one.  Since every
 * prefix of {1,10} is one of {1,30}, and of {1,30} one of the unbounded
 * slice, a state that subsumes the wider slice subsumes the narrower one:
 * the wider is decided first (its DFA has no count, so exploring it is
 * cheap) and, where it is whole, the narrower ones are never explored.
 */
#ifndef LEX_SLICER_H
#define LEX_SLICER_H

#include <stddef.h>
#include <stdint.h>

#include "../base/bitset.h"
#include "../base/err.h"
#include "../trie/trie.h"
#include "deriv.h"
#include "rec.h"

/* The default slice regexes, in order, NULL-terminated. */
extern const char *const lex_slicer_default[];

/* One slice.  trie is NULL when no token falls in the slice. */
typedef struct {
    char *regex;
    lex_dfa_t *dfa;   /* the slice's own DFA */
    trie_t *trie;
    tb_bitset_t mask; /* its tokens and their aliases */
    size_t ntokens;   /* keys in the slice (aliases not counted) */
    size_t max_len;   /* bytes of its longest key: the depth its verdicts explore */
    /* Explorations of the slice that ran out of budget in a row, and the
     * new states to answer "walk" for before exploring again (slicer.c's
     * subsumes): under a maxLength every position of a string is a new
     * lexer state, and a slice the budget cannot decide there made half
     * of Github_easy---o21053's lexer states, each time to no verdict. */
    uint32_t spent, skip;
    uint64_t within;  /* bit j: every prefix of this slice's language is one
                       * of slice j's, and its keys are no longer than j's,
                       * so the slice is whole wherever j is
                       * (slices 0..63; of two equal languages, only the
                       * later one's bit is set, so the relation has no
                       * cycle) */
} lex_slice_t;

/* Per lexer state and slice: not decided yet, subsumed, or not. */
enum { LEX_SLICE_UNKNOWN = 0, LEX_SLICE_WHOLE = 1, LEX_SLICE_WALK = 2 };

/*
 * The slicer.  verdict is a grid of nverdict_states rows of nslice bytes
 * (row = lexer DFA state), grown as states appear; it belongs to the lexer
 * DFA `bound` (lex_slicer_bind).  jrep lists one byte per joint class of
 * (slice DFA class, lexer DFA class), per slice, computed at bind time:
 * jrep[i][0..njrep[i]).
 */
typedef struct {
    lex_slice_t *slice;
    size_t nslice;
    tb_bitset_t all;   /* the union of the slices' masks: copied in one pass
                        * when every slice is taken whole (the common case
                        * inside a string) instead of clearing and OR-ing */
    trie_t *rest;      /* the residual tokens; NULL if none */
    size_t nrest;
    trie_t *heads;     /* the residual split in two: its tokens that begin */
    trie_t *tails;     /* with a loop byte (lex_slicer_loop_byte) keyed by
                        * their tail, what follows their longest prefix of
                        * loop bytes (or their last byte if that is all), the
                        * tokens of one tail aliases of each other; the
                        * others, the heads, keyed by their bytes.  Either
                        * NULL if it has no token */
    uint8_t loop_rep[256]; /* a loop byte per class of the bound DFA among */
    uint16_t nloop_rep;    /* them: [0..nloop_rep), set at bind time */
    size_t mask_bits;  /* bits of every mask (the full trie's) */
    uint32_t max_len;  /* the longest key, for recognizers */
    /* Every key of at least long_min bytes, the least length that at most
     * LEX_SLICER_LONG keys reach (their aliases beside them, with the same
     * bytes; long_min is max_len + 1 where the longest alone are more):
     * a mask walked from a lifted state (gram.h's gr_lifted) answers the
     * tokens longer than it is exact for from the state itself, and
     * these are all it needs (match.c). */
    trie_key_t *long_keys;
    size_t nlong;
    uint8_t *long_pool;
    uint32_t long_min;
    size_t budget;     /* product pairs explored per verdict at most; a
                        * change takes effect at the next lex_slicer_bind */
    size_t scratch_for; /* the budget the exploration's scratch is sized for */
    size_t term_budget; /* new lexer terms an exploration may make before it
                         * answers "walk" (LEX_SLICER_TERMS) */
    int prefixes;      /* membership by prefix (LEX_SLICE_PREFIX) */
    lex_dfa_t *bound;
    uint8_t *verdict;
    uint32_t *open_of;  /* per lexer state: its open part + 1 (deriv.h's
                         * lex_dfa_open_part), 0 until asked */
    size_t nverdict_states;
    uint8_t (*jrep)[256];
    uint16_t *njrep;
    /* scratch of the product exploration: a set of visited pairs (pair + 1
     * per slot, 0 free), the slots it filled (cleared after each
     * exploration, so that clearing costs what was visited, not the set's
     * size) and a stack of pairs still to expand (pair = slice state << 32
     * | lexer state) */
    uint64_t *seen;
    size_t seen_cap;
    uint32_t *used;
    size_t nused;
    uint64_t *todo;
} lex_slicer_t;

/* What one sliced mask did. */
typedef struct {
    uint32_t whole;  /* slices OR-ed in from their precomputed mask */
    uint32_t walked; /* slices walked */
    uint64_t nodes;  /* nodes the walks offered (residual included) */
} lex_slice_stats_t;

#define LEX_SLICER_DEFAULT_BUDGET 4096
/* The most keys kept as long_keys. */
#define LEX_SLICER_LONG 16
/* An exploration may also make at most budget / this many new states of
 * the lexer's DFA (which stay), else it answers "not subsumed". */
#define LEX_SLICER_PAIRS_PER_STATE 16
/* and at most this many, whoever asks (an open part, on the whole
 * budget, or a state on a slice of thousands of tokens). */
#define LEX_SLICER_NEW_STATES 128
/* and at most this many new terms of the lexer's DFA (term_budget),
 * whoever asks.  A lexer state costs its terms to make (about 6,000 cycles
 * each where pattern properties' key classes meet: JSON string patterns
 * under AND and NOT), so a verdict bought with many of them costs more
 * than the walks it saves: at Github_medium---o83286's first key of
 * "devices", 11,847 terms and 27 ms to find a name of 14 characters that
 * no key class takes.  The bound is checked between pairs, so the step
 * that passes it finishes.  On every 10th MaskBench file no exploration
 * that answered "whole" made more than 1,008. */
#define LEX_SLICER_TERMS 1024
/* A slice's exploration visits at most this many pairs per token of the
 * slice (and at least LEX_SLICER_MIN_BUDGET), within the budget: deciding
 * must not cost more than walking the slice would. */
#define LEX_SLICER_PAIRS_PER_TOKEN 1
#define LEX_SLICER_MIN_BUDGET 64

/*
 * Builds the slicer over keys k (the whole vocabulary's, as for the full
 * trie) with `layout` for every trie.  regexes: n slice patterns (NULL, 0:
 * the default set).  NULL with err naming the slice regex on failure (bad
 * pattern, a slice DFA past its limits, a trie that cannot be built).
 */
lex_slicer_t *lex_slicer_new(const trie_keys_t *k, const trie_layout_t *layout,
                             const char *const *regexes, size_t n, tb_err_t *err);
/* The same with the membership rule chosen: LEX_SLICE_PREFIX (what
 * lex_slicer_new does) or LEX_SLICE_FULL. */
enum { LEX_SLICE_FULL = 0, LEX_SLICE_PREFIX = 1 };
lex_slicer_t *lex_slicer_new_as(const trie_keys_t *k, const trie_layout_t *layout,
                                const char *const *regexes, size_t n, int membership,
                                tb_err_t *err);
void lex_slicer_free(lex_slicer_t *s);

/* Parses "R1;R2;..." (or "default") into the slicer's regexes: *out gets
 * n malloc'd strings in one block (free(*out) frees them).  A ';' inside a
 * regex is written "\;".  -1 with err on an empty list or empty regex. */
int lex_slicer_parse_list(const char *spec, char ***out, size_t *n, tb_err_t *err);

/* Ties the verdict cache to lexer DFA d and clears it.  Call it whenever
 * the masks are to come from another DFA (a new DFA may reuse a freed one's
 * address, so the slicer cannot tell by itself). */
int lex_slicer_bind(lex_slicer_t *s, lex_dfa_t *d, tb_err_t *err);

/* 1 if lexer state `state` of the bound DFA subsumes slice i (deciding and
 * caching it if needed), 0 if not or not within the budget, -1 with err on
 * a lexer DFA past its limits. */
int lex_slicer_subsumes(lex_slicer_t *s, size_t i, uint32_t state, tb_err_t *err);

/*
 * The mask at lexer state `state`, equal to lex_mask over the full trie:
 * clears mask (of s->mask_bits bits at least), takes or walks every slice,
 * walks the residual.  r must be a recognizer over the bound DFA (r's DFA
 * is bound first if none is), deep enough for s->max_len.  st (may be
 * NULL) gets what was done.  -1 with err if the lexer DFA passed a limit or
 * the mask is too small.
 */
int lex_slicer_mask(lex_slicer_t *s, lex_rec_t *r, uint32_t state, tb_bitset_t *mask,
                    lex_slice_stats_t *st, tb_err_t *err);

/*
 * The same for a recognizer whose state is not one state of the bound DFA
 * (a grammar's state, grammar/gram.h, holds several lexer states, each
 * with the parser's row of its own): slice i is taken whole if any of
 * states[0..n) subsumes it (its strings then go on in that lexer state's
 * lexeme, so the recognizer allows them whatever else it holds), and
 * everything else is walked by walk(trie, ctx, mask), which ORs the
 * allowed tokens of `trie` into mask and returns the nodes it offered.
 * Where no slice is whole and `all` (a trie over every key the slices were
 * made from; may be NULL) is given, it is walked once instead of every
 * slice and the residual apart, which visits fewer nodes: the slices share
 * their first bytes.
 *
 * The recognizer's state is `from` (walk starts every walk there; the
 * slicer reads it as a number and nothing else).  after_loop, where it is
 * not LEX_SLICE_NO_LOOP, is the state every loop byte leads `from` to and
 * that stays itself on every loop byte (lex_slicer_after_loop): then a
 * residual token that begins with loop bytes is allowed iff its tail is
 * from after_loop, and the residual is walked as its heads from `from` and
 * its tails from after_loop.  Inside a JSON string (after its quote or
 * further), where the residual is the tokens with a quote, a backslash or
 * a control byte, that is 702 nodes instead of 4,265 for Llama 3 after
 * `{"name": "` under a schema with one string property.
 */
typedef uint64_t (*lex_slice_walk_t)(const trie_t *t, void *ctx, uint32_t from,
                                     tb_bitset_t *mask);
int lex_slicer_mask_by(lex_slicer_t *s, const uint32_t *states, size_t n,
                       const trie_t *all, uint32_t from, uint32_t after_loop,
                       lex_slice_walk_t walk, void *ctx, tb_bitset_t *mask,
                       lex_slice_stats_t *st, tb_err_t *err);

/* The state after a run of loop bytes from `from`, if every loop byte
 * leads there and it stays itself on each (step(ctx, state, byte) is the
 * recognizer's step; a byte per class of the bound DFA is asked, so the
 * recognizer's classes must be the DFA's or finer in no loop byte), else
 * LEX_SLICE_NO_LOOP. */
#define LEX_SLICE_NO_LOOP UINT32_MAX
typedef uint32_t (*lex_slice_step_t)(void *ctx, uint32_t state, uint8_t b);
uint32_t lex_slicer_after_loop(const lex_slicer_t *s, lex_slice_step_t step, void *ctx,
                               uint32_t from);

/* The bytes a residual token's tail is cut after: printable ASCII but '"'
 * and '\\', the bytes a JSON string's body reads without leaving its state
 * (a byte of a multi-byte character moves a UTF-8 decoder on). */
static inline int lex_slicer_loop_byte(uint8_t b)
{
    return b >= 0x20 && b < 0x7F && b != '"' && b != '\\';
}

/* Bytes the slicer holds: tries, masks, slice DFAs' tables, verdicts. */
size_t lex_slicer_bytes(const lex_slicer_t *s);

#endif
