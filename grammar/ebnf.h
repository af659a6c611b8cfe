/*
 * ebnf: what the grammar file readers (lark.c, gbnf.c) share.
 *
 *  - gr_text_t, a cursor over the file text that knows the line and column
 *    (1-based, columns count bytes) and formats "FILE:L:C: ..." errors;
 *  - gr_ebnf_t, the grammar as read: rules whose bodies are expression trees
 *    of literals, regexes, references, sequences, alternatives and bounded
 *    repetitions, plus the ignored expressions (Lark's %ignore);
 *  - gr_ebnf_lower, which turns that into the CFG of cfg.h.
 *
 * Lowering merges regular pieces into lexemes, because the parser is only
 * consulted where a lexeme ends (docs/grammars.md): within each sequence a
 * maximal run of regular items (literals, regexes, terminals, groups and
 * repetitions of them, references to rules that are regular and not
 * recursive) becomes ONE lexeme.  A run whose regex matches the empty
 * string becomes `R?` over a lexeme R that matches the same strings but
 * the empty one (R is built from the tree, so it is exact); a run that only
 * matches the empty string disappears.  With ignored lexemes (`merge` off)
 * ignored text may stand between two lexemes of a rule, so rules are never
 * merged and each literal, regex or terminal is a lexeme of its own; Lark
 * terminals are always one regex.  Every new lexeme's regex is checked with
 * lex_regex_parse, so the lexer will not refuse it later.
 */
#ifndef GR_EBNF_H
#define GR_EBNF_H

#include <stddef.h>
#include <stdint.h>

#include "../base/buf.h"
#include "../base/err.h"
#include "../base/hash.h"
#include "../lexer/regex.h"
#include "cfg.h"

/* Deepest nesting of groups a reader accepts (the lowering recurses). */
#define GR_MAX_NEST 200
/* Longest regex a merged rule or run may have; a longer rule stays a rule
 * (a terminal that long is an error). */
#define GR_MAX_REGEX (64u << 10)

typedef struct {
    const char *s;
    size_t len, i;
    uint32_t line;
    size_t bol; /* offset of the current line's first byte */
    const char *source;
    tb_err_t *err;
} gr_text_t;

void gr_text_init(gr_text_t *t, const char *s, size_t len, const char *source, tb_err_t *err);
gr_pos_t gr_text_pos(const gr_text_t *t);
/* The byte at i + k, 0 past the end. */
static inline uint8_t gr_text_at(const gr_text_t *t, size_t k)
{
    return t->i + k < t->len ? (uint8_t)t->s[t->i + k] : 0;
}
/* Moves on n bytes, counting lines. */
void gr_text_skip(gr_text_t *t, size_t n);
/* "FILE:L:C: message" into t->err; returns -1. */
int gr_text_fail(const gr_text_t *t, gr_pos_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Decodes one character of a literal or class at t into *cp: an escape,
 * or a UTF-8 sequence.  escapes lists pairs "cB": \c stands for byte B;
 * \xHH, \uHHHH and \UHHHHHHHH are code points in both formats.  Invalid
 * UTF-8 (named by its byte offset in the file), unknown escapes and code
 * points past U+10FFFF or surrogates are errors. */
int gr_text_char(gr_text_t *t, const char *escapes, uint32_t *cp);
/* Reads the quoted text at t (the opening quote q at t->i, on one line)
 * into out as UTF-8, with gr_text_char's escapes. */
int gr_text_quoted(gr_text_t *t, char q, const char *escapes, tb_buf_t *out);

/* AND and NOT are llguidance's lexeme operators A & B and ~A (strings
 * every kid matches; valid UTF-8 strings the kid does not match), inside
 * terminals only.  They are written as look-aheads at the top of a lexeme
 * (lexer/regex.h), so a lexeme holding one is that terminal alone.  TOKEN
 * is a token-id lexeme (cfg.h) the reader has made already: m is its
 * index, text its name; never regular, refused inside terminals. */
typedef enum {
    GR_X_LIT, GR_X_REGEX, GR_X_REF, GR_X_SEQ, GR_X_ALT, GR_X_REP, GR_X_AND, GR_X_NOT,
    GR_X_TOKEN
} gr_xkind_t;

/* One expression.  text is NUL-terminated: a LIT's bytes (len of them), a
 * REGEX's pattern in regex.h syntax, a REF's name.  show is how a REGEX
 * was written (for lexeme names), NULL for the pattern itself. */
typedef struct gr_expr gr_expr_t;
struct gr_expr {
    gr_xkind_t kind;
    gr_pos_t pos;
    char *text, *show;
    size_t len;
    uint8_t icase;    /* LIT: case-insensitive */
    uint8_t nullable; /* REGEX: matches the empty string */
    uint8_t atom;     /* REGEX: one class, quantifiable as it is */
    uint32_t m, n;    /* REP: kid{m,n}; n = GR_UNBOUNDED for no bound */
    TB_VEC(gr_expr_t *) kid; /* SEQ, ALT, AND: the items; REP, NOT: the one */
};

/* What llguidance's rule attributes make of a rule (lark.c): one lexeme
 * (lazy, stop, suffix, max_tokens, temperature), lazy besides (lazy, a
 * stop or suffix that is not ""), both honoured under GR_SEM_LLGUIDANCE
 * only, which lowers the rule as a terminal. */
#define GR_ATTR_LEXEME 1u
#define GR_ATTR_LAZY 2u

/* A rule as read.  The lowering fills state, regex and info. */
typedef struct {
    char *name;
    gr_pos_t pos;
    gr_expr_t *body;
    uint8_t terminal; /* a Lark terminal: always one regex */
    uint8_t attr;     /* llguidance's attributes: GR_ATTR_* */
    uint8_t state;    /* lowering: new, busy, regular, cfg */
    uint8_t queued;   /* lowering: its nonterminal has rules */
    uint8_t nullable, eps, prec, look; /* of regex (a regular rule) */
    char *regex;
} gr_xrule_t;

typedef struct {
    const char *source;
    TB_VEC(gr_xrule_t) rule;
    tb_strmap_t by_name;
    TB_VEC(gr_expr_t *) ignore; /* %ignore expressions */
    TB_VEC(gr_expr_t *) nodes;  /* every node made, for gr_ebnf_free */
    lex_terms_t terms;          /* for checking regexes */
    int merge;                  /* rules may become lexemes (no %ignore) */
    int llguidance;             /* the grammar asks for llguidance's semantics */
    int initial_skip;           /* and its allow_initial_skip (gr_cfg_t) */
    int ignore_once;            /* and its ignore_once (gr_cfg_t) */
} gr_ebnf_t;

int gr_ebnf_init(gr_ebnf_t *e, const char *source, tb_err_t *err);
void gr_ebnf_free(gr_ebnf_t *e);

/* A new node (text copied from text[0..len) when text is non-NULL). */
gr_expr_t *gr_ebnf_node(gr_ebnf_t *e, gr_xkind_t kind, gr_pos_t pos, const char *text,
                        size_t len, tb_err_t *err);
int gr_ebnf_add(gr_expr_t *parent, gr_expr_t *kid, tb_err_t *err);
/* x{m,n} as a REP node around x (bounds checked against GR_MAX_REPEAT). */
gr_expr_t *gr_ebnf_rep(gr_ebnf_t *e, gr_expr_t *x, uint32_t m, uint32_t n, gr_pos_t pos,
                       tb_err_t *err);
/* Appends code point cp as a member of a regex class (printable ASCII as
 * itself, escaped where a class needs it; others as \x{H}). */
int gr_class_cp(tb_buf_t *b, uint32_t cp);
/* Defines rule name[0..len); a second definition is an error naming both. */
int gr_ebnf_rule(gr_ebnf_t *e, const char *name, size_t len, gr_pos_t pos, int terminal,
                 gr_expr_t *body, tb_err_t *err);
/* Checks pattern[0..len) (written at pos, on one line) with the lexer's
 * parser and sets *nullable; a refusal names the column of the offending
 * byte. */
int gr_ebnf_check_regex(gr_ebnf_t *e, const char *pattern, size_t len, gr_pos_t pos,
                        uint8_t *nullable, tb_err_t *err);

/* Lowers the grammar into g (initialised, not finished) with the rule
 * called `start` as start symbol (*start_sym).  Under g->semantics
 * GR_SEM_LLGUIDANCE nothing is merged (each literal, regex and terminal
 * is a lexeme, as llguidance's are) and rules with GR_ATTR_LEXEME are
 * terminals, their lexemes lazy with GR_ATTR_LAZY. */
int gr_ebnf_lower(gr_ebnf_t *e, gr_cfg_t *g, const char *start, gr_sym_t *start_sym,
                  tb_err_t *err);

#endif
