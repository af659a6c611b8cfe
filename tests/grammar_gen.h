/*
 * grammar_gen: random sentences of a grammar (grammar/cfg.h), and random
 * cuts of them, for the grammar tests' reachable states.
 *
 * A sentence is a derivation from the start symbol with rules drawn by
 * test_rnd (tests/support.h: seeded, so every run draws the same ones),
 * each lexeme replaced by a random string it matches, and an ignored
 * lexeme's string inserted before a lexeme (or at the end) one time in
 * four.  Depth is bounded: from max_depth on (or once the text passes
 * GG_SOFT_BYTES) only rules of least height are drawn, those closest to a
 * string of lexemes; in the first half of max_depth, half of the draws
 * are among the rules of greatest height, so that sentences nest.
 *
 * A lexeme's string is a random walk checked by PCRE2 through the oracle
 * (go_lexeme_viable, go_lexeme_full), so it stays independent of the
 * lexer: characters are drawn (ASCII, a sample of non-ASCII ones, and the
 * characters the pattern names) and kept while the string is still a
 * prefix of a match; the walk stops at a full match when a coin says so,
 * preferring characters that complete a match once it is long.
 */
#ifndef TESTS_GRAMMAR_GEN_H
#define TESTS_GRAMMAR_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "../base/buf.h"
#include "../grammar/cfg.h"
#include "grammar_oracle.h"

#define GG_SOFT_BYTES 4096

typedef struct gg gg_t;

/* A generator for g (finished), matching lexemes through o (the oracle of
 * the same grammar; borrowed). */
gg_t *gg_new(const gr_cfg_t *g, go_t *o, char *err, size_t errlen);
void gg_free(gg_t *gen);

/* Appends a random sentence to out.  0, or -1 (gg_error says why). */
int gg_sentence(gg_t *gen, uint32_t max_depth, tb_buf_t *out);
/* Appends a random string that lexeme lex matches.  0 or -1. */
int gg_lexeme(gg_t *gen, uint32_t lex, tb_buf_t *out);
const char *gg_error(const gg_t *gen);

/* A random cut point of a text of n bytes, 0..n. */
size_t gg_cut(size_t n);

#endif
