/*
 * grammar_oracle: the tests' referee for grammar membership, sharing no
 * code with grammar/ (beyond reading the gr_cfg_t it is given) nor with
 * lexer/.  It runs Earley's algorithm directly on bytes: an item expecting
 * a lexeme L at byte position p is advanced to every position e where
 * text[p..e) is a full match of L, and PCRE2 (pcre2_dfa_match, which lists
 * every match end) decides those matches.  The text is a prefix of the
 * language iff some lexeme expected at some position p can still read
 * text[p..end) as the start of a match (PCRE2_PARTIAL_HARD), or the chart
 * reaches the end itself.
 *
 * Semantics (grammar/cfg.h): a sentence is the lexeme sequence of a
 * derivation with each lexeme replaced by a string its regex matches and
 * ignored-lexeme strings inserted before, between and after the lexemes.
 * The oracle makes that literal: it runs on the grammar G' in which every
 * occurrence of a lexeme L is a nonterminal  pre_L -> IGN L,  IGN ->
 * (empty) | IGN I  for each ignored lexeme I, and the start is  S' -> S
 * IGN  (no change without ignored lexemes).  Lexing is therefore not
 * greedy: every segmentation counts.
 *
 * Nullable rules: a completed item whose origin is its own set records its
 * nonterminal as "empty at this set", and an item expecting that
 * nonterminal, added to the set later, is advanced over it at once (the
 * fix Aycock and Horspool describe for Earley's completer).  Left and right
 * recursion and ambiguity need nothing more: sets are deduplicated.  No
 * recursion anywhere (a work list per set), so 10,000 nested brackets need
 * only memory.
 *
 * UTF-8: lexemes are PCRE2 UTF patterns, so every sentence is valid UTF-8.
 * A text with an invalid sequence is no prefix; a text that ends inside a
 * character is a prefix iff some completion of that character makes one.
 * Trying all of them (up to 262,144 for a lone 4-byte lead) would cost
 * seconds per mask, so the oracle tries one code point per class that the
 * lexeme's pattern can tell apart: the pattern is read for the code points
 * it names and the \p{..} properties it names (each class a run of code
 * points between named ones on which every named property agrees, found
 * with PCRE2 itself); a pattern with a construct that reading does not
 * follow ((?i), \h, \v, ...) gets every code point.  go_set_exhaustive
 * turns the classes off, and the tests check both ways agree.
 *
 * Costs (n bytes, k items per set): a chart is
 * O(n k) items, each completion scanning its origin set (O(n k^2) time; an
 * ambiguous grammar has k growing with n, hence cubic), plus one PCRE2 run
 * per expected lexeme per set.  go_mask builds the prefix's chart once and
 * keeps the "live" lexemes (those started before the end of the prefix
 * whose match may still go on); each token costs one PCRE2 run per live
 * lexeme over the text from where that lexeme began, and Earley steps only
 * where a lexeme ends inside the token; the sets the token made are then
 * dropped.  Two filters spare PCRE2 runs bound to fail: the bytes each
 * lexeme can begin with, and for each live lexeme the bytes that can come
 * next.  Memory is bounded by go_set_max_items (items of the chart).
 * Measured on llama3's 128,000 keys with JSON grammars (the test's own and
 * experiments/grammars/json.lark), 14 states each (8 written, 6 generated
 * sentences cut at random): 6 to 250 ms per mask, 37 to 67 ms on average
 * (the machine was shared and loaded), slowest inside a string (where
 * nearly every token is allowed and each costs a PCRE2 run from the
 * string's opening quote); one core of an AMD EPYC.
 *
 * Known differences from the lexer, whose dialect is PCRE2's: PCRE2 10.42
 * uses Unicode 14 tables, the lexer reads the unicode-data package
 * (Unicode 15), so \p{..} disagree on characters new in 15.0; \v is
 * U+000B alone to the lexer, vertical space to PCRE2 (\n \x0B \f \r
 * \x85 U+2028 U+2029).  A $ followed by a required character (a$b, a
 * language the lexer empties) reads as a possible prefix in PCRE2's hard
 * partial mode.
 */
#ifndef TESTS_GRAMMAR_ORACLE_H
#define TESTS_GRAMMAR_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include "../base/bitset.h"
#include "../grammar/cfg.h"
#include "../trie/trie.h"

typedef struct go go_t;

/* The oracle of g (finished by gr_cfg_finish).  NULL with a message in err
 * when a lexeme's pattern is refused by PCRE2 or matches the empty string. */
go_t *go_new(const gr_cfg_t *g, char *err, size_t errlen);
void go_free(go_t *o);

/* Items the chart may hold before a call fails (default GO_MAX_ITEMS). */
#define GO_MAX_ITEMS ((size_t)1 << 23)
void go_set_max_items(go_t *o, size_t max_items);

/* on: every completion of a cut character is tried, not one code point
 * per class the lexeme's pattern can tell apart (for testing those
 * classes).  0, or -1 on failure. */
int go_set_exhaustive(go_t *o, int on);

/* 1 if s[0..n) is a prefix of a sentence, 0 if not, -1 on failure (the
 * item limit, a PCRE2 error: go_error says which). */
int go_prefix(go_t *o, const uint8_t *s, size_t n);
/* 1 if s[0..n) is a sentence, 0 if not, -1 on failure. */
int go_sentence(go_t *o, const uint8_t *s, size_t n);

/* allowed_out[i] = go_prefix(prefix + tokens[i][0..lens[i])) for each of
 * the ntok tokens (1 or 0).  Returns 0, or -1 on failure. */
int go_mask(go_t *o, const uint8_t *prefix, size_t n, const uint8_t *const *tokens,
            const uint32_t *lens, size_t ntok, uint8_t *allowed_out);

/* go_mask over a vocabulary's keys, as a trie walk reports a mask: out
 * (cleared first; nbits >= keys->id_limit) gets the id of every allowed
 * key and of its aliases.  0, or -1 on failure. */
int go_mask_keys(go_t *o, const uint8_t *prefix, size_t n, const trie_keys_t *keys,
                 tb_bitset_t *out);

/* The message of the last failure. */
const char *go_error(const go_t *o);

/* Lexeme lex of the grammar against s[0..n) (valid UTF-8): 1 if s is a
 * prefix of a match (or a match), resp. a match; 0 if not; -1 on a PCRE2
 * error.  For the sentence generator (grammar_gen.h). */
int go_lexeme_viable(go_t *o, uint32_t lex, const uint8_t *s, size_t n);
int go_lexeme_full(go_t *o, uint32_t lex, const uint8_t *s, size_t n);

#endif
