/*
 * gbnf: GBNF, the grammar format of llama.cpp (its grammars/README.md), read
 * into the CFG of cfg.h.
 *
 *     root   ::= "[" ws item ("," ws item)* "]"    # the start rule is root
 *     item   ::= [a-z]+ | "x"{2,5} | (item)? | .
 *     ws     ::= [ \t\n]*
 *
 * Rule names are [a-zA-Z0-9-]+.  Literals "..." and classes [a-z] [^...]
 * take the escapes \n \r \t \\ \" \[ \] \xHH \uHHHH \UHHHHHHHH; characters
 * are code points, written as UTF-8.  `.` is any code point.  Postfix ? * +
 * {m} {m,} {m,n}; groups, |, # comments.  A rule goes on over lines until
 * the next `name ::=` (llama.cpp ends it at a newline outside parentheses
 * unless a | or ::= precedes: every file it reads means the same here).
 * Regular runs of each sequence become single lexemes (ebnf.h).
 * Refused with the position: special tokens <...>, empty classes [].
 */
#ifndef GR_GBNF_H
#define GR_GBNF_H

#include <stddef.h>

#include "cfg.h"

/* Reads text[0..len) into g (initialised; g->source names it in errors,
 * which give the line and column); *start is root's nonterminal.  The
 * caller calls gr_cfg_finish. */
int gr_gbnf_read(gr_cfg_t *g, const char *text, size_t len, gr_sym_t *start, tb_err_t *err);

#endif
