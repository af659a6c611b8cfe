/*
 * ecma: JSON Schema string constraints (ECMA-262 `pattern`, `format`,
 * minLength/maxLength) translated into lexer regexes (lexer/regex.h) over
 * the JSON-encoded text of the strings they allow.
 *
 * A schema's pattern speaks of the decoded string; a lexeme reads the bytes
 * of the JSON text.  So the pattern is parsed here into a small AST of
 * code point sets, concatenations, alternations, repetitions and anchors,
 * and each code point set is written out as the alternation of its members'
 * JSON spellings, every one JSON allows (docs/json-schema.md): the UTF-8
 * bytes (not for `"`, `\` and the controls below U+0020), the short escapes
 * \" \\ \/ \b \t \n \f \r, and \uXXXX in either case (a surrogate pair
 * above U+FFFF).  Surrogate code points are in no set (a JSON text in
 * UTF-8 cannot hold them unescaped).
 *
 * Pattern semantics are ECMA-262's with the u flag (code points): a search,
 * so an unanchored pattern may match anywhere in the string; ^ and $ anchor
 * (anywhere they stand: an anchor that cannot hold empties its branch);
 * \d \w are ASCII, \s is ECMA's WhiteSpace and LineTerminator, . is any
 * code point but \n \r U+2028 U+2029.  Look-aheads right after the ^ of
 * a pattern's only branch are the lexer's top-level look-aheads on whole
 * string lexemes.  Refused with the reason and the byte offset: other
 * look-around, \b \B, back-references, \p{..}, unknown letter escapes,
 * quantified anchors with large bounds.
 */
#ifndef GR_ECMA_H
#define GR_ECMA_H

#include <stddef.h>
#include <stdint.h>

#include "../base/buf.h"
#include "../base/err.h"

#define GR_NO_MAX UINT32_MAX
/* Largest string length bound (minLength, maxLength, {n,m} of a pattern)
 * written out: above it a bound is refused as absurd. */
#define GR_MAX_LENGTH 1000000u

/*
 * Appends to out the lexer regex of the JSON string lexemes (quotes
 * included) whose decoded string matches `pattern` (NULL: any string),
 * has `format` (NULL: none; see gr_ecma_format) and has between lo and hi
 * code points (hi = GR_NO_MAX: no bound).  Where length bounds cannot be
 * combined exactly with the pattern or format, an error says so.  Returns
 * 0, 1 (nothing written) when no string qualifies ("a^", "^a{3}$" with
 * maxLength 2), or -1.  Errors
 * name what is wrong ("pattern '...' at offset N: ...") for the caller to
 * prefix with the schema's JSON pointer.
 */
typedef struct gr_ecma_sets gr_ecma_sets_t; /* below */
int gr_ecma_string(tb_buf_t *out, const char *pattern, const char *format, uint32_t lo,
                   uint32_t hi, gr_ecma_sets_t *sets, tb_err_t *err);

/* 1 if the pattern (a search) is found in every string (".*", "^", "a?"),
 * 0 if not or not known to, -1 with err set if it is refused. */
int gr_ecma_matches_all(const char *pattern, tb_err_t *err);

/* The ECMA pattern of a known format (anchored), NULL for an unknown one. */
const char *gr_ecma_format(const char *format);

/* Appends the regex of the JSON spellings (as above, quotes included) of
 * the string s[0..n) (UTF-8).  sets: shared (gr_ecma_sets_t, below), or
 * NULL. */
int gr_json_quote_regex(tb_buf_t *out, const uint8_t *s, size_t n, gr_ecma_sets_t *sets);

/* Appends the JSON encoding of s[0..n) with its quotes (the text itself,
 * not a regex). */
int gr_json_quote(tb_buf_t *out, const uint8_t *s, size_t n);

/* The regexes of code point sets' JSON spellings, kept for the calls
 * that share it: the property names of one schema spell the same letters,
 * and the same letters' complements, at every turn. */
gr_ecma_sets_t *gr_ecma_sets_new(void);
void gr_ecma_sets_free(gr_ecma_sets_t *sets);

/* How the texts written with a gr_ecma_sets_t spell code points, from
 * the call that sets it on (gr_ecma_sets_spell) to the next:
 * GR_SPELL_JSON every spelling JSON allows, as above (the default, and
 * that of calls given no sets); GR_SPELL_LLG llguidance's JSON compiler's
 * (derivre's JSON quoting, its json/compiler.rs): UTF-8 but for '"', '\\',
 * the controls and DEL, the short escapes of its allowed letters (no \/),
 * and \u00XX of the controls and DEL only; GR_SPELL_LLG_ANY_U the same
 * with \u of every code point (a pair above U+FFFF), as llguidance spells
 * strings under json_allow_general_unicode_escapes and the names of
 * additionalProperties beside named properties. */
enum { GR_SPELL_JSON, GR_SPELL_LLG, GR_SPELL_LLG_ANY_U };
/* Sets the spelling of the next texts; returns the one before. */
int gr_ecma_sets_spell(gr_ecma_sets_t *sets, int spelling);
/* The escape letters llguidance's spellings allow after '\\' (its
 * json_allowed_escapes: of n r b t f \\ " u; its default is all eight).
 * Returns -1 with err set for another letter. */
int gr_ecma_sets_escapes(gr_ecma_sets_t *sets, const char *letters, tb_err_t *err);
/* The regex of every string lexeme in sets' spelling (quotes included):
 * GR_JSON_ANY_STRING under JSON's; text owned by sets (NULL: out of
 * memory). */
const char *gr_ecma_any_string(gr_ecma_sets_t *sets);
/*
 * How much of a JSON string lexeme (lex[0..len), written here) a
 * look-ahead (lexer/regex.h) needs: under JSON's spelling, where it ends
 * "(?:C)*\"" (C any character, as a pattern not anchored at its end
 * ends) with no | outside its groups, the text before that, else all of
 * it.  A lexeme whose body is C's characters, as every one this file
 * writes under JSON's spelling, begins with a match of the one iff it
 * begins with a match of the other (the rest of its body is C's and its
 * closing quote comes next); and a look-ahead whose text has been read
 * is then [\x00-\xff]*, which ends the lexer's NOT at once and drops out
 * of its AND (regex.c), where the whole lexeme kept both to the quote: a
 * string that held a word one pattern forbids took a search of every
 * state the rest could reach to be shown dead.
 */
size_t gr_ecma_lookahead_len(const char *lex, size_t len, gr_ecma_sets_t *sets);
/* The regex of one character of a string's body in sets' spelling, any
 * code point, as a length bound repeats it (malloc'd; NULL: out of
 * memory). */
char *gr_ecma_any_char(gr_ecma_sets_t *sets);

/* Appends the regex of the JSON string lexemes whose decoded string is
 * none of names[0..n) (each UTF-8, NUL-terminated).  sets: shared with
 * other calls, or NULL for one of this call's own. */
int gr_ecma_string_except(tb_buf_t *out, const char *const *names, size_t n,
                          gr_ecma_sets_t *sets, tb_err_t *err);

/* Appends the negative look-ahead of the names' spellings,
 * (?!(?:"a"|"b")$) (nothing for no names; -1 on memory): before any JSON
 * string (regex.h: top-level only, so at the start of a lexeme) the same
 * strings as gr_ecma_string_except, in text in proportion to the names,
 * where gr_ecma_string_except spells at each letter of each name every
 * other code point in every JSON spelling.  A JSON string ends at its first
 * unquoted '"', so none has a name as a proper prefix and the $ changes
 * no string; with it the look-ahead is the complement of a finite
 * language, which the slicer explores without (lex_dfa_relaxed). */
int gr_ecma_names_lookahead(tb_buf_t *out, const char *const *names, size_t n,
                            gr_ecma_sets_t *sets);

/* Called by gr_ecma_key_classes for each class of names: mask has bit p
 * set for each pattern p the names match (0: none); regex is the class's
 * JSON string lexeme.  Returns 0, or -1 with the caller's error set. */
typedef int (*gr_key_class_fn)(void *ctx, uint64_t mask, const char *regex);
/* Whether the class of mask is wanted (0: its names are refused anyway, so
 * its regex is never built); NULL wants every class. */
typedef int (*gr_key_class_need_fn)(void *ctx, uint64_t mask);

/*
 * The property names other than names[0..nnames) split by the set of
 * patterns[0..npat) (ECMA, searches; npat <= 62) they match: fn is called
 * once for each set that some name has, with the regex of exactly those
 * names, the empty set (names matching no pattern) included, unless
 * need says the set is not wanted.  The classes are found by an automaton
 * (subset construction) and written by state elimination up to 400 states
 * (32 for one pattern and no names) and a 1 MiB regex, otherwise as
 * top-level look-aheads ((?=P), (?!Q) on
 * the patterns' string lexemes); past 20000 states, or for patterns with
 * anchors inside or leading look-aheads, up to 5 patterns have each of
 * their 2^n classes tried with the lexer; refused beyond that.
 */
int gr_ecma_key_classes(const char *const *patterns, size_t npat, const char *const *names,
                        size_t nnames, gr_key_class_need_fn need, gr_key_class_fn fn, void *ctx,
                        gr_ecma_sets_t *sets, tb_err_t *err);

/* The regex of any JSON string in any of JSON's encodings. */
#define GR_JSON_ANY_STRING "\"(?:[^\"\\\\\\x00-\\x1F]|\\\\[\"\\\\/bfnrt]|\\\\u[0-9A-Fa-f]{4})*\""

#endif
