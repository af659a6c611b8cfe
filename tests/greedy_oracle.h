/*
 * greedy_oracle: the tests' referee for llguidance's semantics
 * (grammar/cfg.h, GR_SEM_LLGUIDANCE), sharing no code with grammar/ or
 * lexer/ (it reads the gr_cfg_t it is given; PCRE2 decides the lexemes,
 * through grammar_oracle.h's go_lexeme_viable and go_lexeme_full).
 *
 * It runs llguidance's lexer as its documentation and code describe it,
 * literally, one byte at a time over the text: the lexemes allowed are
 * those the Earley set of the lexemes read so far expects, plus the
 * ignored ones where it expects some (but not before the first lexeme
 * unless initial_skip); the
 * lexeme being read goes on while some allowed lexeme can still match the
 * bytes from its start (PCRE2's hard partial match); when none can, every
 * allowed lexeme those bytes match whole ends (a skip alone if one of
 * them is ignored), the parser scans them all at once, and the byte
 * starts the next lexeme; right after a byte, a lazy lexeme that matches
 * whole ends at once, with the other lazy ones that do.  Given the
 * grammar, each of these choices is forced, so the text has one run: no
 * backtracking, no sets of readings, which is what makes it an oracle
 * independent of the automaton in grammar/gram.c.
 *
 * The Earley recognizer over lexeme ids is the textbook one, with
 * Aycock and Horspool's fix for nullable rules; grammars with set
 * nonterminals (JSON Schema objects) are refused.  Lexemes are taken to
 * match ASCII only: a byte from 0x80 on ends the run (the grammars of the
 * tests that use it are ASCII).
 */
#ifndef TESTS_GREEDY_ORACLE_H
#define TESTS_GREEDY_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include "../grammar/cfg.h"
#include "grammar_oracle.h"

typedef struct ggo ggo_t;

/* The oracle of g (finished) with lex deciding its lexemes (go_new of the
 * same g); NULL if g has set nonterminals or memory runs out. */
ggo_t *ggo_new(const gr_cfg_t *g, go_t *lex, int initial_skip);
void ggo_free(ggo_t *o);

/* Feeds s[0..n) from the start: 1 if the lexer and the parser are alive
 * after it, 0 if not; *sentence (may be NULL) whether it is a sentence. */
int ggo_run(ggo_t *o, const uint8_t *s, size_t n, int *sentence);

/* allowed_out[i] = ggo_run(prefix + tokens[i][0..lens[i])) for each of
 * the ntok tokens, the prefix run once. */
void ggo_mask(ggo_t *o, const uint8_t *prefix, size_t n, const uint8_t *const *tokens,
              const uint32_t *lens, size_t ntok, uint8_t *allowed_out);

#endif
