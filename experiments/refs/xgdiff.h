/*
 * xgdiff: tokbench's grammar and JSON Schema masks against XGrammar's
 * (scripts/ref/xgrammar.js), token by token.  A token that one engine
 * allows and the other refuses is put down to the first known difference
 * between the two engines whose test holds for it, else counted as
 * unexplained: test_xgrammar fails on any; the MaskBench driver's
 * xgmasks=N lists them.  The known differences:
 *   - XGrammar's stop tokens where the text may end: tokbench's masks hold
 *     no control tokens;
 *   - tokens that cannot go on the text as UTF-8 (single bytes 0xC0, 0xC1,
 *     0xF5-0xF7, which XGrammar takes as lead bytes; a continuation byte
 *     where a character starts): XGrammar allows some;
 *   - for JSON Schemas, whitespace XGrammar's any_whitespace leaves out and
 *     JSON allows: carriage returns, whitespace before the document or after
 *     its end;
 *   - for JSON Schemas, '.', 'e' or 'E' right after digits: an integer
 *     written 1.0 or 1e2 (JSON Schema's "integer" is any number whose
 *     fraction is zero), which XGrammar refuses;
 *   - for JSON Schemas, at a property name (inside one, or where one may
 *     start), tokens tokbench alone allows: tokbench takes the named
 *     properties in any order and additional ones anywhere, XGrammar the
 *     named ones in schema order and additional ones after them;
 *   - for JSON Schemas, tokens holding \/ or \u that XGrammar alone
 *     allows: spellings json.dumps never writes, which tokbench refuses in
 *     strings a keyword constrains, property names included
 *     (docs/json-schema.md, "String encodings");
 * and where XGrammar is looser or tighter than JSON and JSON Schema:
 *   - tokens with a raw control character (below 0x20) inside a string,
 *     which XGrammar allows and JSON forbids;
 *   - other tokens XGrammar allows that make the text something no JSON
 *     document starts with (decided by experiments/grammars/json.lark, RFC
 *     8259, through tokbench's grammar layer): a property name pattern
 *     such as ".*" that takes in '"', for one;
 *   - tokens that begin an escape inside a string, which tokbench allows
 *     and XGrammar refuses there (in length-bounded strings, for one);
 *   - tokens that XGrammar allows only because its strictMode is off:
 *     refused by its strict mask of the same point;
 *   - tokens XGrammar allows in the value of a property the schema names
 *     (a name under any "properties" of it), or anywhere inside such a
 *     value: XGrammar also reads a named
 *     property as an additional one, with any value, where additional
 *     properties are allowed (checked by hand on the MaskBench sample; the
 *     test here is by name only);
 *   - non-ASCII characters in a string that tokbench allows and XGrammar
 *     refuses (ECMA-262's \s, \W and negated classes hold them);
 *   - a date-time's 't' or 'z' in lower case (RFC 3339 5.6 allows it),
 *     where XGrammar allows the same token in upper case;
 *   - a leap second, 60 after "hh:mm:" in a string (RFC 3339 5.6 allows
 *     it; XGrammar's seconds stop at 59).
 * llguidance (scripts/ref/llguidance, ctx.llguidance) is compared the same
 * way, with the causes known for it: its end-of-text token where the text
 * may end; whitespace around the document, escapes in property names and
 * in formatted strings, property order, an integer as 1.0 or 1e2, all of
 * which it refuses; a raw DEL (0x7F) in a string, which JSON allows and
 * it refuses; a '-' where only -0 can follow (a minimum of 0, which -0
 * meets); tokens it allows that no JSON text starts with.  The rest,
 * XGrammar's regexes, looser strings and strict mode, are not counted for
 * it.  On grammars (not schemas) llguidance's causes are its end-of-text
 * token, bytes that are not UTF-8, and its greedy lexing: a token tokbench
 * alone allows where some state on the way through the text and the token
 * holds two readings that end a lexeme at different places
 * (docs/grammars.md, "Lexing is not greedy"); where the grammar reader
 * merged a regular rule into one lexeme, its readings are one state and
 * such a token stays unexplained; and whitespace before the first lexeme
 * of a grammar with %ignore, which tokbench allows (docs/grammars.md: ignored
 * strings before the first lexeme too) and llguidance refuses.  On llguidance's %json test
 * grammars also: February 29 of a common year, which llguidance's date format allows; an
 * e-mail address literal other than IPv4 ("@[IPv6:..."), which RFC 5321
 * allows and llguidance's e-mail format does not; the escape \r where a
 * pattern's '.' stands (ECMA-262's dot leaves out line terminators,
 * llguidance's only \n); a continued escape (after a backslash or in a
 * \u's digits), as a token holding one; U+FEFF's or U+0085's bytes where a
 * pattern's \s stands (ECMA-262's \s holds the first, llguidance's the
 * second); and number bytes
 * at the schema's bounds (llguidance decides some bounds later, and gets
 * exclusiveMinimum 0 with maximum 1 wrong: it allows 0 and refuses 1).
 */
#ifndef XP_XGDIFF_H
#define XP_XGDIFF_H

#include <stddef.h>
#include <stdint.h>

#include "../../base/bitset.h"
#include "../../base/err.h"
#include "../../grammar/gram.h"
#include "../../tok/vocab.h"
#include "../../trie/trie.h"

typedef enum {
    XP_XG_STOP,    /* XGrammar only */
    XP_XG_UTF8,    /* XGrammar only */
    XP_XG_CR,      /* tokbench only */
    XP_XG_AROUND,  /* tokbench only */
    XP_XG_INTEGER, /* tokbench only */
    XP_XG_ORDER,   /* tokbench only */
    XP_XG_ESCAPE,  /* XGrammar only */
    XP_XG_CONTROL, /* XGrammar only */
    XP_XG_NOTJSON, /* XGrammar only */
    XP_XG_STRESC,  /* tokbench only */
    XP_XG_DEL,     /* tokbench only */
    XP_XG_NEGZERO, /* tokbench only */
    XP_XG_LOOSE,   /* XGrammar only */
    XP_XG_NAMED,   /* XGrammar only */
    XP_XG_NONASCII, /* tokbench only */
    XP_XG_TZ,      /* tokbench only */
    XP_XG_LEAP,    /* tokbench only */
    XP_XG_LABEL,   /* llguidance only */
    XP_XG_GREEDY,  /* tokbench only, llguidance on grammars */
    XP_XG_LEADING, /* tokbench only, llguidance on grammars */
    XP_XG_FEB29,   /* llguidance only */
    XP_XG_ADDRLIT, /* tokbench only, llguidance */
    XP_XG_DOTCR,   /* llguidance only */
    XP_XG_BOUND,   /* either, llguidance */
    XP_XG_SPACE,   /* either, llguidance */
    XP_XG_OURS,    /* tokbench only, unexplained */
    XP_XG_THEIRS,  /* XGrammar only, unexplained */
    XP_XG_CAUSES
} xp_xg_cause_t;

/* Short names, for listings and the results store. */
extern const char *const xp_xg_cause_names[XP_XG_CAUSES];

typedef struct {
    const tok_vocab_t *vocab;
    const trie_t *trie; /* tokbench's: a token it does not hold is a control token */
    gr_gram_t *g;
    int schema;         /* g is a JSON Schema's: the JSON causes apply */
    const tb_bitset_t *strict; /* XGrammar's strict mask at the point, or NULL */
    const tb_bitset_t *theirs; /* XGrammar's mask at the point (xp_xg_diff sets it) */
    gr_gram_t *json;           /* RFC 8259 JSON (json.lark), or NULL */
    int llguidance;            /* the other engine is llguidance, not XGrammar */
    int ignores;               /* the grammar has %ignore (Lark) */
    uint32_t json_state;       /* json's state after the point's text (set here) */
    char *const *names;        /* the property names the schema defines, sorted */
    size_t n_names;
} xp_xg_ctx_t;

/* Why token id is allowed by one engine only (ours: by tokbench) at
 * grammar state st, reached after the bytes prefix[0..plen). */
xp_xg_cause_t xp_xg_cause(const xp_xg_ctx_t *c, const uint8_t *prefix, size_t plen,
                          uint32_t st, uint32_t id, int ours);

/* 1 if the JSON text prefix[0..plen) ends inside a property name or
 * where one may start (after '{' or a ',' in an object). */
int xp_xg_at_name(const uint8_t *prefix, size_t plen);

/* Compares tokbench's mask with XGrammar's at one point (as xp_xg_cause):
 * adds each differing token to counts[cause]; returns how many differ.
 * *unexplained: the lowest unexplained id (allowed by tokbench only if it
 * is in ours), or UINT32_MAX. */
size_t xp_xg_diff(const xp_xg_ctx_t *c, const tb_bitset_t *ours, const tb_bitset_t *theirs,
                  const uint8_t *prefix, size_t plen, uint32_t st,
                  size_t counts[XP_XG_CAUSES], uint32_t *unexplained);

/* Why the engines disagree on whether the text prefix[0..plen) may end
 * there (ours: tokbench says it may, the other engine's end-of-text token
 * is not allowed; else the other way round): greedy lexing where the text
 * has two readings (a greedy lexer may have kept the one that cannot end),
 * x-guidance options, a JSON text ending in -0 (which a minimum of 0
 * allows); else unexplained. */
xp_xg_cause_t xp_xg_end_cause(const xp_xg_ctx_t *c, const uint8_t *prefix, size_t plen,
                              int ours);

/* Reads xgrammar.js's hex mask (maskbench --masks: 8 digits per 32-bit
 * word, word 0 first) into set, cleared first; ids past set's size must be
 * clear.  -1 with err on a malformed string. */
int xp_xg_read_hex(const char *hex, tb_bitset_t *set, tb_err_t *err);

#endif
