/*
 * regex: byte-level regular expressions as hash-consed terms, and the parser
 * that turns pattern text (the syntax of JSON-schema and pre-tokenizer
 * patterns) into them.
 *
 * Terms are over bytes, not code points: a Unicode class such as \p{L} or
 * [^"] becomes an alternation of UTF-8 byte sequences, so the DFA built on
 * top (deriv.h) reads token bytes directly, as a trie walk offers them.
 *
 * Every term lives once in a lex_terms_t store: the constructors look a term
 * up before creating it, so structurally equal terms have the same id and
 * comparing terms is comparing ids.  The constructors also simplify (unions
 * are flattened, sorted, deduplicated and their byte sets merged; empty
 * language and empty string are absorbed; every byte string [\x00-\xff]*
 * absorbs a union and its complement is the empty language), which makes
 * many equivalent derivatives the same id and so the same DFA state.
 * Without intersection the empty language has one canonical term,
 * LEX_NOTHING: a term is empty iff its id is LEX_NOTHING.  An intersection
 * (LEX_K_AND, from a look-ahead) may be empty under another id; the DFA
 * (deriv.c) decides that by search wherever one appears, so its states
 * keep the rule: dead iff LEX_NOTHING.
 */
#ifndef LEX_REGEX_H
#define LEX_REGEX_H

#include <stddef.h>
#include <stdint.h>

#include "../base/buf.h"
#include "../base/err.h"

typedef uint32_t lex_term_t;

#define LEX_NOTHING ((lex_term_t)0) /* the empty language */
#define LEX_EPSILON ((lex_term_t)1) /* the empty string only */

typedef enum {
    LEX_K_NOTHING,
    LEX_K_EPSILON,
    LEX_K_BYTES,  /* one byte from set */
    LEX_K_CONCAT, /* a then b; a is never a CONCAT (kept right-nested) */
    LEX_K_OR,     /* a or b; a is never an OR, chains sorted by id */
    LEX_K_STAR,   /* a repeated zero or more times */
    LEX_K_REPEAT, /* a repeated set[0] to set[1] times (a finite bound) */
    LEX_K_AND,    /* both a and b (a < b) */
    LEX_K_NOT,    /* every byte string a does not match (a negative look-ahead) */
} lex_kind_t;

/* One term: 48 bytes.  set is used by LEX_K_BYTES (bit b of set[b / 64])
 * and LEX_K_REPEAT (its bounds), a and b by CONCAT, OR, AND (a, b), STAR,
 * REPEAT and NOT (a).  has_and: an AND or a NOT is in the term (its
 * emptiness then needs a search; without one, only LEX_NOTHING is empty).  A bounded repetition is one term whose derivative is the
 * body's then the repetition with both bounds one less: a{0,100000} costs
 * a term per count that a text reaches, not 100000 up front. */
typedef struct {
    uint8_t kind;
    uint8_t nullable; /* matches the empty string */
    uint8_t has_and;  /* set by the store from the kind and the parts */
    uint32_t a, b;
    uint64_t set[4];
} lex_node_t;

/* The store.  node[id] is term id; table is an open-addressing hash of ids
 * (UINT32_MAX = free slot) keyed by the node's contents.  When max_nodes
 * would be passed the constructors return LEX_NOTHING and set `full`, which
 * the callers check: a pattern or DFA that needs more fails cleanly. */
typedef struct {
    lex_node_t *node;
    size_t n, cap, max_nodes;
    uint32_t *table;
    size_t tcap;
    lex_term_t *scratch; /* lex_or_n's working list */
    size_t scap;
    int full;
    int lookahead; /* the parser takes top-level (?=...) (lex_regex_parse) */
    /* Classes already made into terms (regex.c's cps_to_term), since they
     * recur: every JSON string lexeme holds [^"\\\x00-\x1f].  Open
     * addressing on the ranges' hash; slot ranges at cps_ranges[off ..
     * off + 2n) (lo, hi pairs). */
    struct lex_cps_memo *cps;
    size_t cps_cap, cps_n;
    TB_VEC(uint32_t) cps_ranges;
    struct lex_group_memo *groups; /* lex_regex_memo_begin's, or NULL */
} lex_terms_t;

int lex_terms_init(lex_terms_t *t, size_t max_nodes, tb_err_t *err);
void lex_terms_free(lex_terms_t *t);

lex_term_t lex_bytes(lex_terms_t *t, const uint64_t set[4]);
lex_term_t lex_byte_range(lex_terms_t *t, uint8_t lo, uint8_t hi);
lex_term_t lex_concat(lex_terms_t *t, lex_term_t a, lex_term_t b);
lex_term_t lex_or(lex_terms_t *t, lex_term_t a, lex_term_t b);
/* The union of terms[0..n) (terms may be overwritten). */
lex_term_t lex_or_n(lex_terms_t *t, const lex_term_t *terms, size_t n);
lex_term_t lex_star(lex_terms_t *t, lex_term_t a);
/* a{min,max} (min <= max, max finite). */
lex_term_t lex_repeat(lex_terms_t *t, lex_term_t a, uint32_t min, uint32_t max);
/* The strings both a and b match (may be empty under an id other than
 * LEX_NOTHING: see the top of this file). */
lex_term_t lex_and(lex_terms_t *t, lex_term_t a, lex_term_t b);
/* The complement of a among all byte strings (~~a is a; may be empty under
 * an id other than LEX_NOTHING, as an AND may).  Only ever under an AND
 * that bounds it, as the negative look-ahead below makes it. */
lex_term_t lex_not(lex_terms_t *t, lex_term_t a);

static inline const lex_node_t *lex_node(const lex_terms_t *t, lex_term_t id)
{
    return &t->node[id];
}

/* Limits the parser enforces (each failure names the position). */
/* Largest bound in {n}, {n,}, {n,m} (JSON Schema's maxLength reaches
 * hundreds of thousands; a bound costs a term per count reached). */
#define LEX_MAX_REPEAT 1000000
#define LEX_MAX_NEST 1000   /* deepest group nesting */

/*
 * Parses pattern[0..len) into *out.  The whole pattern must match (as in
 * JSON schema's implicit anchoring for a lexeme).  ^ and $ may stand
 * anywhere and assert the start and the end of that whole match (^a|b$ is
 * a|b; a^ and $a match nothing; (^|,)x is x|,x); $ is the end only, as
 * with PCRE2_DOLLAR_ENDONLY, not also before a final newline.  A group
 * that holds an anchor may be repeated at most 16 times ((^a)?b, not
 * (^a){17}).  An empty alternative matches the empty string: (a|), (|a),
 * (), and the empty pattern.  The dialect is PCRE2's
 * with PCRE2_UTF (and without PCRE2_UCP); tests/test_regex_unicode.c holds
 * the Unicode parts to PCRE2 10.42 code point by code point.  Supported:
 *  - literals (UTF-8 in the pattern), escapes \xHH \x{H..} \uHHHH \u{H..}
 *    \n \r \t \f \v \0 \e \a and escaped punctuation;
 *  - classes [...] with ranges and negation; . (any code point but \n);
 *    \d \w \s \D \W \S (ASCII, as PCRE2 without UCP);
 *  - \p{..} \P{..} \pL \p{^..}, also inside classes, with names matched
 *    loosely (case, spaces, '-' and '_' ignored, as PCRE2 does):
 *      general categories L Lu Ll Lt Lm Lo M Mn Mc Me N Nd Nl No P Pc Pd
 *      Ps Pe Pi Pf Po S Sm Sc Sk So Z Zs Zl Zp C Cc Cf Cs Co Cn, L& (= LC),
 *      Any, from UnicodeData.txt;
 *      scripts by long or short name (\p{Greek}, \p{Grek}, \p{Han},
 *      \p{Old_Italic}, \p{Unknown}...: any script that
 *      PropertyValueAliases.txt names and Scripts.txt gives to some
 *      character).  A bare name, scx=Name and Script_Extensions=Name match
 *      what PCRE2 10.40 and later match for a bare name: the characters
 *      whose Script is Name plus those whose Script_Extensions
 *      (ScriptExtensions.txt) list Name, so \p{Greek} has U+0342 (Script
 *      Inherited, extensions Greek) and \p{Inherited} keeps it too;
 *      sc=Name and Script=Name are the Script property alone;
 *  - groups ( ), (?: ), (?<name> ), (?P<name> ), | * + ? {n} {n,} {n,m}
 *    and lazy quantifiers (same language);
 *  - where t->lookahead is set (the JSON Schema compiler's lexemes; a
 *    user's pattern is refused, since there a look-ahead would look past
 *    the match), a positive look-ahead (?=A) outside every group: X(?=A)Y matches the
 *    strings of X then a string of Y that also begins with a match of A
 *    (a $ in A is the end of the text), exactly, as an intersection: the
 *    lexers built from JSON Schema use it for a pattern under length
 *    bounds or beside a format; and likewise a negative look-ahead (?!A)
 *    outside every group: X(?!A)Y matches the strings of X then a string
 *    of Y that does not begin with a match of A (Y and the complement of
 *    A then anything), which the compiler's property names use for the
 *    names a pattern does not match;
 *  - (?i) (to the end of the enclosing group), (?-i), (?i: ) and (?-i: ):
 *    Unicode simple case folding as PCRE2 does it in UTF mode: a literal,
 *    and each literal and range of a class, also match every character
 *    with the same simple case folding (CaseFolding.txt statuses C and S:
 *    k K and U+212A KELVIN SIGN; s S and U+017F LONG S; Greek sigma in its
 *    three forms); not the Turkic or the full (multi-character) foldings.
 *    Escaped classes (\d \w \s \p{..} and their negations) and . are not
 *    folded, as in PCRE2: (?i)\p{Lu} matches upper case letters only.  A
 *    negated class is folded before it is negated: (?i)[^k] refuses U+212A.
 * Errors (position = byte offset in the pattern): back-references,
 * look-behind, a look-ahead inside a group or holding
 * a ^, \b and other assertions, possessive quantifiers, a
 * quantifier right after an anchor, an anchor in a group repeated more than
 * 16 times, bounds above LEX_MAX_REPEAT, a class at either end of a
 * range, unknown property or script names, a pattern whose terms pass the
 * store's limit, and a Unicode data file that is missing or malformed (the
 * message names the file, and the line).
 *
 * The Unicode data is read when a pattern first needs it and kept for the
 * process (read again if its path changes), so this function is not
 * thread-safe.  The files come from the unicode-data package:
 *   $TOKBENCH_UNICODE_DIR (default LEX_UNICODE_DIR) is the directory of
 *     UnicodeData.txt (\p{<category>}), PropertyValueAliases.txt,
 *     Scripts.txt and ScriptExtensions.txt (\p{<script>}) and
 *     CaseFolding.txt ((?i));
 *   $TOKBENCH_UNICODE_DATA, when set, is the path of UnicodeData.txt
 *     itself, over the directory (kept from before the directory variable).
 * Debian 12 ships Unicode 15.0 data while its PCRE2 10.42 was built with
 * Unicode 14.0: the characters assigned in 15.0 are unassigned to PCRE2.
 */
int lex_regex_parse(lex_terms_t *t, const char *pattern, size_t len,
                    lex_term_t *out, tb_err_t *err);

/* Many patterns into one store (a lexer's lexemes): from
 * lex_regex_memo_begin to lex_regex_memo_end, a group whose text
 * lex_regex_parse has read before, in any of those patterns, is taken from
 * a memo rather than parsed again (each call keeps one of its own
 * otherwise).  The memo points into the patterns: they must stay alive
 * and unchanged until lex_regex_memo_end. */
int lex_regex_memo_begin(lex_terms_t *t);
void lex_regex_memo_end(lex_terms_t *t);

#define LEX_UNICODE_DIR "/usr/share/unicode"
/* Where the general categories are read from unless $TOKBENCH_UNICODE_DATA
 * or $TOKBENCH_UNICODE_DIR says otherwise. */
#define LEX_UNICODE_DATA LEX_UNICODE_DIR "/UnicodeData.txt"

#endif
