/*
 * lexemes: a lexer over several lexemes at once, read from a small spec
 * file, built as a lazy DFA (deriv.h) whose states are sets of
 * (lexeme, remaining term) pairs.
 *
 * Why a lex_dfa_t and not a layer on top of one DFA per lexeme: a lexer
 * state has to answer "which tokens may come next" by a trie walk, and the
 * walk's cost is what a node costs in the recognizer.  Making the lexer
 * state a DFA state of its own (a hash-consed set of pairs) gives the
 * lexer the same dense table, the same recognizer (rec.h) and the same
 * walks over every trie layout as a plain regex, hence the same cost per
 * visited node; the pairs only matter when a transition is first computed.
 * A plain regex is the one-lexeme case.  The price is more states than
 * the single regex of the same language (the pairs keep lexeme identity
 * that the regex forgets), paid once, lazily.
 *
 * Transition on byte b from a set of pairs: every pair (i, t) steps to
 * (i, d_b t) unless that is empty, and every pair whose t is nullable
 * (lexeme i may end here) also starts each lexeme j that may follow i, as
 * (j, d_b root_j).  Both are kept, so a token may span lexeme boundaries
 * wherever they fall, including where a lexeme could end or go on.  Two
 * pairs of one lexeme merge by union (what may follow depends only on the
 * lexeme), which keeps states canonical.  A state accepts when one of its
 * pairs is nullable and its lexeme may end the text.  Lexemes must read at
 * least one byte (otherwise "the lexemes the text is in" has no meaning
 * and boundaries multiply); lexemes that cannot lead to the end of a text
 * are dropped at load, so a live state is always a prefix of some text.
 *
 * The spec format (one directive a line; see docs/lexemes.md):
 *
 *     # a comment; blank lines are ignored
 *     number = -?(0|[1-9][0-9]*)        a lexeme: NAME = REGEX (regex.h)
 *     comma = ,
 *     start: number lbrack              lexemes that may begin the text
 *     end: *                            lexemes that may end it (default *)
 *     number -> comma rbrack ws         what may follow a lexeme
 *     * -> ws                           ... every lexeme
 *
 * NAME is [A-Za-z_][A-Za-z0-9_]*.  The regex is the rest of the line after
 * '=', without the blanks around it (write a trailing blank as [ ] or
 * \x20).  `start:` is required; `*` stands for every lexeme.  A lexeme with
 * no `->` line (and no `* ->` line) may be followed by any lexeme;
 * `NAME ->` with nothing after it means nothing may follow.  Lines may come
 * in any order and the same directive may be repeated (the sets add up).
 * Errors name the file, line and column: unknown or duplicate names, a bad
 * regex (column of the fault inside the pattern), a lexeme that matches
 * the empty string, a missing or empty start line, too many lexemes.
 */
#ifndef LEX_LEXEMES_H
#define LEX_LEXEMES_H

#include <stddef.h>
#include <stdint.h>

#include "../base/bitset.h"
#include "../base/err.h"
#include "deriv.h"

/* Reads a lexer spec file and sets up its DFA (start state LEX_START). */
lex_dfa_t *lex_lexer_load(const char *path, const lex_dfa_opts_t *opts, tb_err_t *err);

/* The same from text[0..len); source names it in errors. */
lex_dfa_t *lex_lexer_parse(const char *text, size_t len, const char *source,
                           const lex_dfa_opts_t *opts, tb_err_t *err);

/*
 * A lexer over n lexemes given as regexes (names[i] names regexes[i] in
 * errors), where every lexeme may begin and end the text and none may
 * follow another: a state only ever continues the lexemes it started
 * with.  For a parser that decides itself what follows a lexeme
 * (grammar/): it starts each lexeme at the state lex_dfa_start_of gives
 * for the lexemes it expects.  Errors name label, the lexeme and the
 * position in its regex.
 */
lex_dfa_t *lex_lexer_from_regexes(const char *const *regexes, const char *const *names,
                                  size_t n, const char *label, const lex_dfa_opts_t *opts,
                                  tb_err_t *err);

/* Lexemes of d (1 for a one-regex DFA, whose lexeme is named "regex"). */
size_t lex_dfa_nlexemes(const lex_dfa_t *d);
const char *lex_dfa_lexeme_name(const lex_dfa_t *d, size_t i);
/* The index of the lexeme called name, or -1. */
long lex_dfa_lexeme_find(const lex_dfa_t *d, const char *name);

/*
 * What state s says, as bitsets over lexeme indices (out must hold
 * lex_dfa_nlexemes bits; it is cleared first):
 *   possible: the lexemes the text's last lexeme may be (at the start
 *             state: those that may begin the text);
 *   ending:   those of them that may end right here (the text so far is a
 *             whole number of lexemes ending with that one);
 *   may_start: the lexemes that may begin at the next byte because an
 *             ending one may be followed by them (at the very start of the
 *             text, where nothing has ended, the beginners are `possible`).
 * The dead state has none.
 */
void lex_dfa_possible(const lex_dfa_t *d, uint32_t s, tb_bitset_t *out);
void lex_dfa_ending(const lex_dfa_t *d, uint32_t s, tb_bitset_t *out);
void lex_dfa_may_start(const lex_dfa_t *d, uint32_t s, tb_bitset_t *out);

#endif
