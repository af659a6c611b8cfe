/*
 * lark: the Lark-style grammar format as llguidance documents it
 * (llguidance docs/syntax.md, after the Lark parsing toolkit), read into the
 * CFG of cfg.h.
 *
 *     start: value                     // the start rule is start
 *     ?value: dict | list | STRING | "true"i | /[0-9]+/
 *     dict: "{" [pair ("," pair)*] "}"
 *     STRING: "\"" CHAR* "\""          // upper case: a terminal (one regex)
 *     %import common.WS
 *     %ignore WS
 *
 * Supported: rules `name: a b | c` over lines (a line starting with | goes
 * on), `?name`, `!name` and priorities `name.N` (same language), aliases
 * `-> name` (ignored), ? * + {m} {m,} {,n} {m,n} ~m ~m..n, [x], groups,
 * literals "..." with escapes and the i flag, ranges "a".."z", /regex/
 * with flags i and s (also inline, (?s:...) and (?s)), terminals NAME:
 * ... (their bodies one regex), templates name{a, b}: ..., %ignore,
 * %import common.NAME [-> ALIAS] and %import common (A, B), %import
 * .FILE.NAME [-> ALIAS] and %import .FILE (A, B) of grammar files beside
 * this one (namespaced as Lark does), %declare (terminals that match
 * nothing), %override, %extend, comments // and #, `%llguidance {...}`
 * (its options read where they do not change the language).
 * llguidance's own: `start: %json {...}` as a whole grammar (schema.h),
 * A & B and ~A inside terminals, %regex {"substring_...": ...}, rule
 * attributes name[lazy, stop=T, suffix=T, max_tokens=N, ...] (stop and
 * suffix follow the body; the others are read only), parametric rules
 * name::_ with %if (param.h; each value reached made a rule).
 * Special tokens <|name|>, <[ids]> (tokids.h) in rules, as token-id
 * lexemes (cfg.h) of g->vocab; refused without one, and inside terminals.
 * Refused, named with their position: imports of modules other than
 * common without the '.', %json beside anything else or in an imported
 * file, %lark {...} where it or the grammar around has %ignore (else it
 * is read in a namespace of its own), grammar references @name,
 * look-around (but the idioms of Lark's own files: larklook.h) and the
 * other regex features lexer/regex.h refuses, regex flags other than i s u.
 * Regexes use lexer/regex.h's syntax (PCRE2-like; \d \w \s are ASCII).
 */
#ifndef GR_LARK_H
#define GR_LARK_H

#include <stddef.h>

#include "cfg.h"

/* Reads text[0..len) into g (initialised; g->source names it in errors,
 * which give the line and column); *start is the start rule's
 * nonterminal.  The caller calls gr_cfg_finish. */
int gr_lark_read(gr_cfg_t *g, const char *text, size_t len, gr_sym_t *start, tb_err_t *err);

/* gr_lark_read with the start rule named (NULL: start), as Lark's `start`
 * option.  Relative imports (%import .FILE.NAME) are read from the folder
 * of g->source. */
int gr_lark_read_start(gr_cfg_t *g, const char *text, size_t len, const char *start_name,
                       gr_sym_t *start, tb_err_t *err);

#endif
