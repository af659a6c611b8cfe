/*
 * cfg: the context-free grammar every grammar format compiles to (the
 * Lark-style format, GBNF, JSON Schema), over lexemes of the lexer.
 *
 * Terminals are lexemes: regexes in lexer/regex.h syntax, each matching at
 * least one byte.  Nonterminals have names; a rule is lhs -> a sequence of
 * symbols (possibly empty).  Ignored lexemes (Lark's %ignore) appear in no
 * rule: they may stand between any two lexemes, before the first and after
 * the last.
 *
 * The language (docs/grammars.md): every byte string obtained by taking the
 * lexeme sequence of a derivation from the start symbol, replacing each
 * lexeme by some string its regex matches, and inserting strings of ignored
 * lexemes anywhere between them.  Lexing is not greedy: where a lexeme may
 * end or go on, both are kept (by default: gr_semantics_t below).  So a regular part of a grammar means the
 * same as a rule or as one lexeme, and a reader may turn a non-recursive
 * rule into a lexeme as an optimisation without changing the language.
 *
 * Readers build a grammar with the functions below and then call
 * gr_cfg_finish, which checks it (undefined and unproductive nonterminals,
 * an empty language) and computes what the parser needs (nullable).
 * Symbols are gr_sym_t: a lexeme is its index with GR_LEX set, a
 * nonterminal its index.  Positions (line, column; 1-based, 0 unknown) are
 * kept so that errors found late still name where in the file.
 */
#ifndef GR_CFG_H
#define GR_CFG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../base/buf.h"
#include "../base/err.h"
#include "../base/hash.h"
#include "../tok/vocab.h"

typedef uint32_t gr_sym_t;
#define GR_LEX 0x80000000u
static inline int gr_is_lex(gr_sym_t s) { return (s & GR_LEX) != 0; }
static inline uint32_t gr_index(gr_sym_t s) { return s & ~GR_LEX; }

typedef struct {
    uint32_t line, col;
} gr_pos_t;

/* A token id range lo..hi (both in). */
typedef struct {
    uint32_t lo, hi;
} gr_idrange_t;

/* A lexeme: regex (regex.h syntax, NUL-terminated), name for messages and
 * dumps (a Lark terminal's name, or the literal as written).
 *
 * A token-id lexeme (llguidance's special tokens <|name|>, <[id]>, <[a-b]>)
 * is read from token ids, not bytes: it is one token whose id is in
 * ids[0..nids) (sorted, disjoint).  Its regex matches nothing, so the
 * byte automaton never enters it; masks and the matcher take it by id
 * (gram.h, match.h). */
typedef struct {
    char *regex;
    char *name;
    int ignore; /* an ignored lexeme: in no rule */
    int lazy;   /* llguidance's lazy lexeme: under GR_SEM_LLGUIDANCE it ends at its
                 * first match (gram.h); the default reading ignores it */
    gr_pos_t pos;
    gr_idrange_t *ids; /* a token-id lexeme's ids, else NULL */
    uint32_t nids;
} gr_lexeme_t;

/* How the text splits into lexemes (docs/grammars.md).  GR_SEM_DEFAULT:
 * every split the grammar allows (the language above).  GR_SEM_LLGUIDANCE:
 * llguidance's lexer, greedy but for lazy lexemes (gram.h says exactly);
 * the readers then keep each literal, regex and terminal a lexeme of its
 * own, as llguidance does, since merging them would move the ends.
 * GR_SEM_LARK: Lark's, the default's but that an ignored lexeme (%ignore)
 * ends only where it cannot go on, as Lark's lexers take an ignored
 * terminal at the one length re.match gives (its longest for the greedy
 * regexes %ignore is written with: a comment runs to its line's end). */
typedef enum { GR_SEM_DEFAULT, GR_SEM_LLGUIDANCE, GR_SEM_LARK } gr_semantics_t;

typedef struct {
    char *name;
    gr_pos_t used;   /* first reference (0 if never referenced) */
    gr_pos_t def;    /* first rule */
    uint32_t nrules;
    uint32_t set; /* 1 + its index in gr_cfg_t.set if a set nonterminal, else 0 */
    uint8_t nullable, productive; /* set by gr_cfg_finish */
} gr_nonterm_t;

/*
 * A set nonterminal (gr_cfg_set): its members in any order, each at most
 * once, and `extra` (if not GR_NO_EXTRA) any number of times, separated
 * by `sep`: x1 sep x2 sep ... xk, k >= 0.  The sequence may end once every
 * required member is in and min <= k <= max.  What JSON objects whose
 * properties come in any order need, and what no context-free grammar
 * writes without 2^n nonterminals: the parser (earley.h) makes the
 * nonterminal of each (members in, count) lazily, when some text reaches
 * it.  Members: member[off .. off + n), required[off .. off + n).
 */
typedef struct {
    uint32_t nt, off, n;
    gr_sym_t sep, extra;
    uint32_t min, max; /* max GR_UNBOUNDED: no bound */
} gr_set_t;
#define GR_NO_EXTRA UINT32_MAX

/* rule r: lhs -> sym[off .. off + n) */
typedef struct {
    uint32_t lhs, off, n;
    gr_pos_t pos;
} gr_rule_t;

typedef struct {
    char *source; /* the file (or "<schema>", ...) for messages */
    TB_VEC(gr_lexeme_t) lex;
    TB_VEC(gr_nonterm_t) nt;
    TB_VEC(gr_rule_t) rule;
    TB_VEC(gr_sym_t) sym;
    TB_VEC(gr_set_t) set;
    TB_VEC(gr_sym_t) set_member;
    TB_VEC(uint8_t) set_required;
    uint32_t start;  /* nonterminal; valid after gr_cfg_finish */
    int finished;
    tb_strmap_t lex_by_regex, nt_by_name; /* keys point into the vectors' strings */
    TB_VEC(char *) keys; /* the strings those maps borrow (owned) */
    uint32_t fresh;      /* counter for gr_cfg_fresh names */
    /* Lexeme regexes may hold top-level look-aheads (lexer/regex.h): set by
     * the JSON Schema compiler, whose intersections are written so; never
     * by the grammar readers, whose users' look-aheads would look past the
     * lexeme. */
    int lookahead;
    /* Set by the grammar readers where they write a look-ahead of their
     * own (ebnf.c: & and ~, a nullable regex made non-empty): such an
     * intersection may hold anything, so masks keep every one
     * (gr_lifted, gram.h).  The JSON Schema compiler's hold JSON string
     * characters then the quote, or numbers. */
    int user_lookahead;
    /* The regex of one character of a JSON string's body as the JSON
     * Schema compiler writes a length bound (gr_ecma_any_char), or NULL:
     * gr_lifted (gram.h) recognises a length bound by it.  Owned. */
    char *json_char;
    /* Set before reading by the caller (load.h; semantics_fixed then) or
     * by the grammar (Lark's %llguidance). */
    gr_semantics_t semantics;
    int semantics_fixed;
    /* llguidance's allow_initial_skip: under GR_SEM_LLGUIDANCE ignored
     * lexemes may begin the text only with it, as in llguidance. */
    int initial_skip;
    /* llguidance's ignore_once (its SkipSpec::once, which its JSON
     * compiler always uses): at most one ignored lexeme between two of the
     * grammar's. */
    int ignore_once;
    /* Set before reading by the caller (load.h): the vocabulary that
     * token-id lexemes name their tokens in (NULL: a grammar with one is
     * refused).  Not owned, and not used once the grammar is read. */
    const tok_vocab_t *vocab;
    uint32_t ntoken_lexemes; /* token-id lexemes among lex */
} gr_cfg_t;

/* Bounds that keep a grammar (and the memory its reader allocates) small
 * whatever the input says. */
#define GR_MAX_SYMBOLS (1u << 24)  /* lexemes + nonterminals + rhs symbols */
#define GR_MAX_REPEAT 100000u      /* m and n of x{m,n} */
#define GR_UNBOUNDED UINT32_MAX

int gr_cfg_init(gr_cfg_t *g, const char *source, tb_err_t *err);
void gr_cfg_free(gr_cfg_t *g);

/* The lexeme of `regex` (made if new; one lexeme per distinct regex and
 * ignore flag).  name: NULL uses the regex. */
int gr_cfg_lexeme(gr_cfg_t *g, const char *regex, const char *name, int ignore,
                  gr_pos_t pos, gr_sym_t *out, tb_err_t *err);
/* The same for a lazy lexeme (one per distinct regex, apart from the
 * greedy lexeme of that regex). */
int gr_cfg_lazy_lexeme(gr_cfg_t *g, const char *regex, const char *name, gr_pos_t pos,
                       gr_sym_t *out, tb_err_t *err);
/* The token-id lexeme called name (made if new: one per name) of the
 * ids ids[0..n) (n > 0, sorted, disjoint; copied). */
int gr_cfg_token_lexeme(gr_cfg_t *g, const char *name, const gr_idrange_t *ids, size_t n,
                        gr_pos_t pos, gr_sym_t *out, tb_err_t *err);
/* The regex of a token-id lexeme: it matches no bytes. */
#define GR_TOKEN_REGEX "a^"
/* The lexeme matching exactly the bytes s[0..n) (n > 0), its regex escaped
 * here; named by the literal in double quotes. */
int gr_cfg_literal(gr_cfg_t *g, const uint8_t *s, size_t n, gr_pos_t pos,
                   gr_sym_t *out, tb_err_t *err);
/* Appends to b the regex that matches exactly s[0..n). */
int gr_regex_escape(tb_buf_t *b, const uint8_t *s, size_t n);

/* The nonterminal called name[0..len) (made on first use, pos recorded as
 * where it was first referenced unless it is 0). */
int gr_cfg_nonterm(gr_cfg_t *g, const char *name, size_t len, gr_pos_t pos,
                   gr_sym_t *out, tb_err_t *err);
/* A new nonterminal named after base ("value" -> "value#3"), for groups
 * and repetitions. */
int gr_cfg_fresh(gr_cfg_t *g, const char *base, gr_sym_t *out, tb_err_t *err);
/* lhs -> rhs[0..n) (lhs a nonterminal). */
int gr_cfg_rule(gr_cfg_t *g, gr_sym_t lhs, const gr_sym_t *rhs, size_t n,
                gr_pos_t pos, tb_err_t *err);

/* A new set nonterminal named after base (see gr_set_t): members[0..n)
 * with required[0..n) (1: must be in), sep, extra (GR_NO_EXTRA: none),
 * min and max (GR_UNBOUNDED) on the number of members and extras read. */
int gr_cfg_set(gr_cfg_t *g, const char *base, const gr_sym_t *members, const uint8_t *required,
               size_t n, gr_sym_t sep, gr_sym_t extra, uint32_t min, uint32_t max,
               gr_sym_t *out, tb_err_t *err);

/* EBNF sugar, each a fresh nonterminal named after base: x?, x*, x+ (left
 * recursive, the cheap case for Earley), x{m,n} (n = GR_UNBOUNDED for
 * x{m,}; m <= n <= GR_MAX_REPEAT or an error naming pos). */
int gr_cfg_opt(gr_cfg_t *g, gr_sym_t x, const char *base, gr_sym_t *out, tb_err_t *err);
int gr_cfg_star(gr_cfg_t *g, gr_sym_t x, const char *base, gr_sym_t *out, tb_err_t *err);
int gr_cfg_plus(gr_cfg_t *g, gr_sym_t x, const char *base, gr_sym_t *out, tb_err_t *err);
int gr_cfg_repeat(gr_cfg_t *g, gr_sym_t x, uint32_t m, uint32_t n, const char *base,
                  gr_pos_t pos, gr_sym_t *out, tb_err_t *err);

/*
 * Checks the grammar and freezes it with `start` as its start symbol:
 * every referenced nonterminal has a rule ("FILE:L:C: undefined rule
 * 'x'"), every nonterminal reachable from start derives some string (an
 * unproductive one is named with the position of its first rule), the
 * language is not empty.  Computes nullable and productive.  Left
 * recursion, nullable rules and ambiguity are fine.
 */
int gr_cfg_finish(gr_cfg_t *g, gr_sym_t start, tb_err_t *err);

/* Drops every rule that uses a nonterminal deriving no finite string (a
 * JSON Schema's definition that requires itself allows no value, which is
 * no error where it is optional); such nonterminals keep their own rules.
 * 1 when start itself derives none (the language is empty), else 0. */
int gr_cfg_prune(gr_cfg_t *g, gr_sym_t start);

/* Writes the grammar in a readable form (one rule a line, lexemes by name,
 * then the lexemes' regexes), for `--dump` and for tests. */
void gr_cfg_print(const gr_cfg_t *g, FILE *f);

/* The name of symbol s (a lexeme's or a nonterminal's). */
const char *gr_sym_name(const gr_cfg_t *g, gr_sym_t s);

#endif
