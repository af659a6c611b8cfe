/*
 * builtin: the byte-level recognizers that a regex cannot write, as lazy
 * DFAs (deriv.h), so that a walk runs them through the same table and the
 * same recognizer (rec.h) as a regex or a lexer:
 *   any      every byte: every token is allowed, the whole trie visited
 *            (the worst case a mask can cost);
 *   utf8     well-formed UTF-8 (RFC 3629: no overlongs, no surrogates,
 *            nothing past U+10FFFF), as a JSON string body without escapes
 *            allows; raw bytes, so invalid sequences are refused, which a
 *            code-point regex (lexer/regex.h) cannot say of byte tokens;
 *   letters  ASCII letters and space;
 *   digits   0-9.
 * Each is the star of its byte sequences: a token is allowed iff its bytes
 * continue a string of the language.
 */
#ifndef LEX_BUILTIN_H
#define LEX_BUILTIN_H

#include "../base/err.h"
#include "deriv.h"

/* The names, for messages: "any, utf8, letters, digits". */
extern const char lex_builtin_names[];

/* The DFA of built-in recognizer `name`; NULL with err naming it if there
 * is no such recognizer. */
lex_dfa_t *lex_builtin_dfa(const char *name, const lex_dfa_opts_t *opts, tb_err_t *err);

#endif
