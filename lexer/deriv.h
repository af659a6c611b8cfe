/*
 * deriv: a DFA built lazily from a regex by Brzozowski derivatives.
 *
 * A state is a hash-consed term (regex.h); the transition on byte b is the
 * derivative of the term by b, simplified by the term constructors, so that
 * equivalent derivatives usually land on the same state.  States are made
 * on first use and transitions cached in a dense table indexed by
 * [state][byte class]: bytes that no byte set of the pattern tells apart
 * share a class (alphabet compression), which keeps rows short.  The hot
 * path (lex_dfa_next) is two loads; only a missing entry computes a
 * derivative.
 *
 * State 0 is the dead state (the empty language): a byte leading there is
 * refused.  Every other state's language is non-empty, so a live state
 * means "the text so far is a prefix of some string of the language".
 * The number of states (and of terms) is capped: passing the cap makes the
 * step return the dead state and leaves a sticky error naming the pattern,
 * which lex_dfa_error reports; memory stays bounded.
 *
 * The same table also serves a lexer over several lexemes (lexemes.h): there
 * a state is a hash-consed set of (lexeme, term) pairs instead of one term,
 * and only the slow path (lex_dfa_step_slow) knows the difference, so the
 * recognizer and every trie walk run a lexer exactly as they run a regex.
 */
#ifndef LEX_DERIV_H
#define LEX_DERIV_H

#include <stddef.h>
#include <stdint.h>

#include "../base/buf.h"
#include "../base/err.h"
#include "../base/hash.h"
#include "regex.h"

#define LEX_DEAD 0u
#define LEX_START 1u
#define LEX_UNKNOWN UINT32_MAX /* a transition not computed yet */

typedef struct {
    size_t max_states; /* 0: LEX_DEFAULT_MAX_STATES */
    size_t max_terms;  /* 0: LEX_DEFAULT_MAX_TERMS */
    int lookahead;     /* patterns may hold top-level look-aheads (regex.h) */
} lex_dfa_opts_t;

#define LEX_DEFAULT_MAX_STATES 20000
#define LEX_DEFAULT_MAX_TERMS (1u << 19)

/* A set of byte classes (bit c of w[c / 64]). */
typedef struct {
    uint64_t w[4];
} lex_classes_t;

/* One pair of a lexer state: lexeme `lexeme` has read part of its text
 * and `term` is what it may still read (nullable: it may end here). */
typedef struct lex_pair {
    uint32_t lexeme;
    lex_term_t term;
} lex_pair_t;

/*
 * The DFA.  Data layout: trans is nstates rows of ncls uint32 entries, row
 * s at trans[s * ncls]; an entry is the next state's row offset (next *
 * ncls; 0 for the dead state), so that a walk can keep row offsets on its
 * stack and skip a multiply per byte, or LEX_UNKNOWN until computed.
 * cls maps a byte to its class and rep[c] is one byte of class c (the
 * derivative is the same
 * for every byte of a class).  term[s] is state s's term, accept[s] whether
 * it is nullable; allowed[s] caches the bytes leading to live states once
 * allowed_ok[s] is set.  by_term is an open-addressing map term -> state
 * (UINT32_MAX free); memo a cache of derivatives keyed by (term, class),
 * cleared when full.
 */
typedef struct {
    lex_terms_t terms;
    lex_term_t root;
    char *pattern;
    uint8_t cls[256];
    uint8_t rep[256];
    uint32_t ncls;
    uint32_t *trans;
    lex_term_t *term;
    uint8_t *accept;
    uint64_t (*allowed)[4];
    uint8_t *allowed_ok;
    /* alias[s * ncls + c]: the smallest class that leads from s where c
     * does (deriv.c's alias_row); alias[s * ncls] is 0xFF until the row is
     * made, on the first step from s. */
    uint8_t *alias;
    size_t nstates, cap, max_states;
    size_t map_rows; /* trans and alias mapped for this many states, or 0 (deriv.c) */
    uint32_t *by_term;
    size_t by_cap;
    uint64_t *memo_key;
    uint32_t *memo_val;
    size_t memo_cap, memo_n;
    /* first[x]: the bytes term x may begin with, once first_ok[x] (deriv.c);
     * first_cap entries of each, of finite, liftable and lens. */
    uint64_t (*first)[4];
    uint8_t *first_ok;
    uint8_t *finite; /* 0 unknown, 1 x's language is finite, 2 not */
    uint8_t *liftable; /* 0 unknown, 1 x has a count lex_dfa_lifted may lift, 2 not */
    /* lens[x]: a lower and an upper bound of the lengths of x's strings
     * (deriv.c's term_lens), UINT32_MAX until known. */
    uint32_t (*lens)[2];
    /* msc[x]: deriv.c's term_msc of x, UINT32_MAX until known. */
    uint32_t *msc;
    size_t first_cap;
    /* Classes kept per term (deriv.c): what live() derives a term by (one
     * class of each block of classes it cannot tell apart) and the term's
     * partition of the classes; classes_of maps (what << 32 | term) to the
     * index of the one in classes, or of the other in parts.  seen[x] ==
     * seen_now marks the terms that one walk of heads has met (seen_cap
     * entries); heads is its stack. */
    tb_u64map_t classes_of;
    TB_VEC(lex_classes_t) classes;
    uint32_t *seen;
    size_t seen_cap;
    uint32_t seen_now;
    TB_VEC(lex_term_t) heads;
    TB_VEC(uint8_t) parts; /* term partitions' labels, ncls each (deriv.c) */
    /* The derivatives of a union's alternatives, a stack (deriv.c). */
    TB_VEC(lex_term_t) alts;
    /* One JSON string character (a term of the grammar's json_char) where
     * every intersection holds JSON string characters then the quote on
     * both sides, as the JSON Schema compiler's do (set by the grammar,
     * gram.c), else LEX_NOTHING: lex_dfa_lifted drops a length bound by
     * it, and deriv.c's bounded_live decides an intersection with one
     * live without a search. */
    lex_term_t string_char;
    int failed; /* sticky: a limit was passed */
    tb_err_t err;
    /* A lexer DFA (lexemes.h) only; lx is NULL for a one-regex DFA.  State
     * s's pairs are pair.data[pair_off[s] .. + pair_n[s]), sorted by
     * lexeme, one pair per lexeme (two remainders of one lexeme are merged
     * by union: what may follow depends on the lexeme only).  There term[s]
     * is LEX_NOTHING, unused (the union of the pairs' terms cost a sort of
     * every remainder of a big enum per state), and by_term is keyed by
     * pair sets. */
    struct lex_lexemes *lx;
    uint32_t *pair_off, *pair_n;
    TB_VEC(lex_pair_t) pair;
    size_t max_pairs; /* LEX_PAIRS_PER_TERM * max_terms, below 2^32 */
} lex_dfa_t;

/*
 * The lexemes of a lexer DFA.  root[i] is lexeme i's term (never nullable,
 * never empty), name[i] its name; start, end and the rows of follow are
 * bitsets of n bits in words of 64 (row i at follow[i * words]): the
 * lexemes that may begin the text, may end it, and may come right after
 * lexeme i.  Lexemes that cannot lead to the end of a text are left out of
 * all three, so that every live state is a prefix of some text.
 */
typedef struct lex_lexemes {
    size_t n, words;
    lex_term_t *root;
    char **name;
    uint64_t *start, *end, *follow;
    /* Scratch of one transition (owned by the DFA): acc[i] gathers lexeme
     * i's next term (n entries), touched is the set of lexemes with one
     * (words words, clear between transitions). */
    lex_term_t *acc;
    uint64_t *touched;
    lex_pair_t *next;
} lex_lexemes_t;

/* Most lexemes a lexer may have.  The pairs of all states together are
 * capped at LEX_PAIRS_PER_TERM times the term limit, so that memory stays
 * bounded when many lexemes stay possible in many states. */
#define LEX_MAX_LEXEMES 4096
#define LEX_PAIRS_PER_TERM 8

/* Sets up a lexer DFA over lexemes whose terms live in *terms; takes
 * ownership of both (on failure too).  label names the lexer in errors (its
 * file).  NULL with err set on failure. */
lex_dfa_t *lex_dfa_new_lexer(lex_terms_t *terms, lex_lexemes_t *lx, const char *label,
                             const lex_dfa_opts_t *opts, tb_err_t *err);
void lex_lexemes_free(lex_lexemes_t *lx);
/* The state where the lexemes of `set` (a bitset over lexeme indices, in
 * words of 64) may begin and nothing has been read: a parser over lexemes
 * (grammar/) starts the lexer here at every lexeme boundary with the
 * lexemes it expects.  LEX_DEAD for an empty set, or with the sticky error
 * set when a limit is passed.  A one-regex DFA has one lexeme: bit 0. */
uint32_t lex_dfa_start_of(lex_dfa_t *d, const uint64_t *set);
/* The state of a lexer DFA that holds only those pairs of state s whose
 * term may still read strings of any length (a lexeme for one property
 * name, a keyword, has a finite rest and is left out), made if new; s
 * itself if every pair may, LEX_DEAD if none may or a limit was passed
 * (the sticky error then set).  Its language is part of s's, and it stays
 * the same while s's finite lexemes come and go: a grammar's key position
 * holds a lexeme per property name not seen yet beside those for any
 * other name, so verdicts about it (slicer.h) serve a run of states. */
uint32_t lex_dfa_open_part(lex_dfa_t *d, uint32_t s);

/* For the slicer only: the state of a lexer DFA whose pairs drop every
 * intersection with the complement of a finite language (a negative
 * look-ahead of property names, spelled with $: gr_ecma_names_lookahead),
 * made if new; s itself if no pair has one.  Its language holds s's, and
 * what it holds more is a finite set of strings: so a text after which
 * its language is infinite (lex_dfa_surely_infinite) is a prefix of one
 * of s's strings.  The slicer decides an object's open key part on it,
 * by the string's own few states rather than one per prefix of a name. */
uint32_t lex_dfa_relaxed(lex_dfa_t *d, uint32_t s);
/* 1 if state s surely matches infinitely many strings: one of its pairs'
 * terms, without an AND or a NOT, has strings but no longest one; 0 if it
 * may not. */
int lex_dfa_surely_infinite(lex_dfa_t *d, uint32_t s);

/*
 * For masks only, never for a state a text has reached: the state of a
 * lexer DFA whose pairs drop the length side of an intersection, or a
 * count, that no text of at most *exact bytes can bring into play, made
 * if new; s itself if no pair does.  *exact is `longest` (the longest text
 * asked about) where that holds for every text asked about; else less, but
 * at least `floor`: texts longer than *exact must be asked of s itself.  A
 * pair's AND(a, b) becomes a where b is a JSON string's c{0,r}" (the
 * minimum length met, r characters left; c is d->string_char, one JSON
 * string character in every encoding JSON allows, or a union holding it;
 * chars_left in deriv.c) and r - lex_dfa_msc(a) >= floor: then for every
 * text u of at most r - msc(a) bytes, a/u is live iff (a and b)/u is (a
 * completion of a/u of at most msc(a) bytes has at most r characters) and
 * accepts iff it does.  That needs a's strings to be JSON string
 * characters then the quote, which the grammar vouches for by setting
 * d->string_char (gram.h: the JSON Schema compiler's intersections are);
 * LEX_NOTHING there lifts none.  And each x{lo,hi} in a pair's term,
 * through its unions and concatenations (not under an AND or a NOT),
 * becomes x{lo} x* where (hi - lo - 1) times the length of x's shortest
 * string (at least 1) is at least floor: a text of at most that many
 * bytes reads fewer than hi - lo iterations, so the two are live and
 * accept after it alike; that holds for any term.  The lifted
 * states' derivatives no longer count characters, so a string's positions
 * share them.
 */
uint32_t lex_dfa_lifted(lex_dfa_t *d, uint32_t s, uint32_t longest, uint32_t floor,
                        uint32_t *exact);
/* An upper bound, in bytes, of the shortest completion of every state
 * reachable from term x (UINT32_MAX - 1: none known, x holds an AND or a
 * NOT); structural, kept per term. */
uint32_t lex_dfa_msc(lex_dfa_t *d, lex_term_t x);

/* Parses pattern (NUL-terminated) and sets up the DFA with its start
 * state.  NULL with err naming the pattern and position on failure. */
lex_dfa_t *lex_dfa_new(const char *pattern, const lex_dfa_opts_t *opts, tb_err_t *err);
/* The DFA of a term built directly in *terms (see builtin.h), taking
 * ownership of the store (on failure too); label names it in errors. */
lex_dfa_t *lex_dfa_new_term(lex_terms_t *terms, lex_term_t root, const char *label,
                            const lex_dfa_opts_t *opts, tb_err_t *err);
void lex_dfa_free(lex_dfa_t *d);

/* The state reached from s by class c, computing it if needed. */
uint32_t lex_dfa_step_slow(lex_dfa_t *d, uint32_t s, uint32_t c);

static inline uint32_t lex_dfa_next(lex_dfa_t *d, uint32_t s, uint8_t b)
{
    uint32_t c = d->cls[b];
    uint32_t n = d->trans[(size_t)s * d->ncls + c];
    return n != LEX_UNKNOWN ? n / d->ncls : lex_dfa_step_slow(d, s, c);
}

/* The state after feeding s[0..n) from state `from` (LEX_DEAD if refused). */
uint32_t lex_dfa_feed(lex_dfa_t *d, uint32_t from, const uint8_t *s, size_t n);

/* Bytes leading from s to a live state (bit b of set[b / 64]). */
const uint64_t *lex_dfa_allowed(lex_dfa_t *d, uint32_t s);

static inline int lex_dfa_accepting(const lex_dfa_t *d, uint32_t s)
{
    return d->accept[s];
}

/* -1 with the sticky error copied into err if a limit was passed. */
int lex_dfa_error(const lex_dfa_t *d, tb_err_t *err);

#endif
