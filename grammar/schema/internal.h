/*
 * internal: what the files of the JSON Schema compiler (grammar/schema/)
 * share: compile.c the entry point, the dispatch and the common helpers;
 * merge.c allOf merging; scalar.c enum/const, numbers and strings;
 * array.c arrays and contains; object.c objects and dependencies; oneof.c
 * anyOf/oneOf; not.c complements; ref.c $ref's URIs and pointers;
 * names.c propertyNames; uneval.c unevaluatedProperties; mult.c
 * multipleOf.  Not a public interface (that is grammar/schema.h).
 */
#ifndef GR_SCHEMA_INTERNAL_H
#define GR_SCHEMA_INTERNAL_H

#include <jansson.h>
#include <stdint.h>

#include "../../base/hash.h"
#include "../../base/buf.h"
#include "../../base/err.h"
#include "../../lexer/deriv.h"
#include "../cfg.h"
#include "../ecma.h"
#include "../schema.h"

#define MAX_DEPTH 200      /* nesting of schemas, and of merges through $ref */
#define MAX_ITEMS 100000u  /* largest minItems/maxItems written out */

enum { T_NULL = 1, T_BOOL = 2, T_INT = 4, T_NUM = 8, T_STR = 16, T_ARR = 32, T_OBJ = 64,
       T_ALL = 127 };
static const char *const type_names[] = {"null", "boolean", "integer", "number",
                                         "string", "array", "object"};
/* The position of every rule and lexeme the compiler adds (no source). */
static const gr_pos_t nopos = {0, 0};

#define JSON_INT "-?(?:0|[1-9][0-9]*)"
#define JSON_NUM JSON_INT "(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
/* From draft 6 on an integer is any number without a fractional part:
 * json.dumps writes such floats as "3.0". */
#define JSON_INT6 JSON_INT "(?:\\.0+)?"

typedef struct {
    gr_sym_t sym;
    int state; /* 0 being compiled, 1 done, 2 allows nothing */
} ref_t;

/* A regex kept for the compile: of the strings other than some names
 * (sc_string_except), or of a pattern's strings (sc_ecma_string).  key
 * holds the memo's key (klen bytes), then the regex text; rc is
 * gr_ecma_string's result (0, or 1 where no string qualifies). */
typedef struct {
    tb_buf_t key;
    size_t klen;
    int rc;
} sc_except_t;

/* A patternProperties pattern's DFA, kept for the compile: every property
 * name of an object (and of each object that shares the pattern through
 * $ref and merges) is tested against it.  dfa NULL: it matches no name. */
typedef struct {
    char *pattern;
    lex_dfa_t *dfa;
} sc_pattern_t;

typedef struct {
    gr_cfg_t *g;
    gr_schema_opts_t opts;
    json_t *root;
    int big;             /* integers were read as reals (some were too big) */
    const char *text;    /* the schema's JSON text, len bytes (big integers' digits) */
    size_t len;
    int draft;           /* 4, 6, 7, 2019 or 2020: $schema, else opts.draft */
    int draft4;          /* draft 4: 3.0 is not an integer */
    int ref_alone;       /* $schema names draft 3 to 7: keywords beside $ref are ignored */
    int int_text;        /* an integer is written without a fraction (3.0 is none):
                          * draft 4, and llguidance's reading */
    int llg_order;       /* llguidance's reading: properties in definition order
                          * where its grammar is written (object.c), else any */
    /* llguidance's "x-guidance" options of the root (x_guidance, compile.c): the
     * separators' regexes (NULL: the literals "," and ":"), the ignored
     * whitespace's (NULL: JSON's), unknown formats ignored (lenient). */
    const char *item_sep, *key_sep, *ws;
    int lenient;
    /* How strings that no pattern or format constrains are spelled
     * (GR_SPELL_*, ecma.h): JSON's, or under llguidance's reading its
     * (GR_SPELL_LLG_ANY_U with x-guidance's
     * json_allow_general_unicode_escapes); the others are spelled
     * GR_SPELL_LLG then, and sets keeps the spelling in use. */
    int spell;
    tb_err_t *err;
    tb_strmap_t ref_map; /* target pointer -> index in refs */
    TB_VEC(ref_t) refs;
    TB_VEC(char *) ref_keys;
    TB_VEC(json_t *) owned; /* merged schemas, released at the end */
    gr_sym_t any, any_str;
    int have_any, depth;
    size_t merges; /* sc_merge calls, against MAX_MERGES */
    int probing;   /* inside sc_empty: merges prune nothing */
    tb_strmap_t except_map; /* sc_except_t's keys -> index in excepts */
    gr_ecma_sets_t *sets;   /* the sets' spellings, for every list of names */
    TB_VEC(sc_except_t) excepts;
    tb_strmap_t pattern_map; /* pattern -> index in patterns */
    TB_VEC(sc_pattern_t) patterns;
} sc_t;

/* With c->big, the digits of the integer literal of the schema's text that
 * reads as d (|d| >= 2^53, where a double is no longer exact) into buf;
 * 0, or -1 when no literal or two different ones read as d. */
int sc_big_integer(const sc_t *c, double d, char *buf, size_t n);

/* What `not` leaves to the string branch: a pattern strings must not
 * match, strings they must not be (internal keywords, '$' keeps them apart
 * from a schema's own). */
#define NOT_PATTERN "$tb:notPattern"
#define NOT_STRINGS "$tb:notStrings"
/* Patterns a string must match besides `pattern` (an allOf of several):
 * an array of them. */
#define PATTERNS "$tb:patterns"
/* The properties, patternProperties and additionalProperties of allOf
 * branches merged beside a schema's own where patternProperties make a
 * merge into one set of them inexact: an array of objects, each holding
 * one branch's three (sc_object_value's sides). */
#define SIDES "$tb:objectSides"
/* Numbers with a non-zero digit after the first k of the fraction (the
 * complement of multipleOf 10^-k; 0: the numbers that are no integers),
 * written without an exponent. */
#define FRACTION "$tb:fraction"
/* An annotation on a flattened schema: its keywords evaluate every property
 * name (for the unevaluatedProperties of a schema it is merged into). */
#define EVALUATED "$tb:allNamesEvaluated"
/* What `not` of additionalProperties or patternProperties leaves: the
 * object has a member whose name is in a class and whose value is in a
 * schema.  An array (allOf merges append) of objects {"except": [names],
 * "exceptPatterns": [patterns], "pattern": pattern, "value": schema}: the
 * names none of except, matching none of exceptPatterns and, where
 * "pattern" is there, matching it (sc_object_value). */
#define SOME_MEMBER "$tb:someMember"


__attribute__((format(printf, 3, 4))) int sc_fail(sc_t *c, const char *ptr, const char *f, ...);
int sc_oom(sc_t *c);
/* Sets the spelling of the strings written next (sc_t.spell): of those no
 * pattern or format constrains (plain), or of the others. */
void sc_spell(sc_t *c, int plain);
/* gr_ecma_string_except of names into out, written once per compile for
 * each list of names: a `not` or an object's other names recur through
 * $ref and merges (and the list of none, any string, everywhere). */
int sc_string_except(sc_t *c, tb_buf_t *out, const char *const *names, size_t n);
/* The names of an object other than names[0..n) into out: a look-ahead
 * of theirs, then any string (gr_ecma_names_lookahead).  Under
 * llguidance's reading, where there are names, spelled as llguidance
 * spells additionalProperties' names then, with \u of every code point,
 * beside the names' own spellings. */
int sc_other_names(sc_t *c, tb_buf_t *out, const char *const *names, size_t n);
/* gr_ecma_string into out, written once per compile for each pattern,
 * format and bounds: a pattern recurs through $ref, merges and the
 * complements of its schema (o90971: 39 translations of 2 patterns, 60%
 * of its compile).  Errors are not kept: each call reports its own. */
int sc_ecma_string(sc_t *c, tb_buf_t *out, const char *pattern, const char *format,
                   uint32_t lo, uint32_t hi);
/* Keeps j (a new reference) until the end of the compile; -1 on memory. */
int sc_keep(sc_t *c, json_t *j);
/* The members of s named kws[i] (a NULL-terminated list) into v[i], NULL
 * where absent: one pass over s's members, where looking each keyword up
 * hashed it (the walk of ref.c asks 29 of every schema: 2.9M instructions
 * of a Kubernetes schema's; sc_value up to 13). */
void sc_members(json_t *s, const char *const *kws, json_t **v);
char *sc_ptr_join(const char *ptr, const char *key);
char *sc_ptr_index(const char *ptr, const char *key, size_t i);
/* The lexeme of regex named name (compile.c). */
int sc_lexeme(sc_t *c, const char *regex, const char *name, gr_sym_t *out);
/* A lexeme named "WHAT at POINTER" (ptr NULL: named by its regex). */
int sc_named_lexeme(sc_t *c, const char *regex, const char *what, const char *ptr,
                    gr_sym_t *out);
int sc_lit(sc_t *c, const char *s, gr_sym_t *out);
/* The lexemes between array items or members and between a name and its
 * value: "," and ":" unless x-guidance says otherwise. */
int sc_comma(sc_t *c, gr_sym_t *out);
int sc_colon(sc_t *c, gr_sym_t *out);
int sc_rule(sc_t *c, gr_sym_t lhs, const gr_sym_t *rhs, size_t n);
int sc_any_value(sc_t *c, gr_sym_t *out);
/* A schema's symbol: 0, 1 when it allows nothing, -1 with c->err. */
int sc_value(sc_t *c, json_t *s, const char *ptr, gr_sym_t *out);
/* s with allOf and $ref merged into its keywords (merge.c). */
int sc_flatten(sc_t *c, json_t *s, const char *ptr, json_t **out);
/* *m and b (both flattened) merged keyword by keyword into *m (merge.c). */
int sc_merge(sc_t *c, json_t **m, json_t *b, const char *ptr);
/* Whether schema s surely allows nothing (types, enum/const values,
 * required properties that cannot appear); 0 when not shown (merge.c). */
int sc_empty(sc_t *c, json_t *s, int depth);
/* The most pairs of branches two anyOf merged in an allOf may keep. */
#define MAX_PAIRS 256
/* The most merges one compile may make: conditionals and anyOfs whose
 * products grow past it are refused rather than exhaust memory. */
#define MAX_MERGES 200000
/* anyOf/oneOf: each branch merged with the keywords beside it (oneof.c). */
int sc_alternatives(sc_t *c, json_t *s, const char *ptr, gr_sym_t *out);
/* enum and const: their values of the given types that s's other
 * keywords allow; 1 when none (scalar.c). */
int sc_enum_value(sc_t *c, json_t *s, const char *ptr, int types, gr_sym_t *out);
/* The lexeme of numbers (integers with integer set) under s's keywords,
 * or with regex_out only its regex there (scalar.c). */
int sc_number_value(sc_t *c, json_t *s, const char *ptr, int integer, gr_sym_t *out,
                    tb_buf_t *regex_out);
/* The lexeme of strings under s's keywords, or with regex_out only its
 * regex there; 1 when no string qualifies (scalar.c). */
int sc_string_value(sc_t *c, json_t *s, const char *ptr, gr_sym_t *out, tb_buf_t *regex_out);
/* What the string lexemes' regexes need of the lexer (scalar.c). */
extern const lex_dfa_opts_t sc_string_opts;
/* A non-negative integer keyword k of s (absent: dflt) (scalar.c). */
int sc_count(sc_t *c, json_t *s, const char *k, const char *ptr, uint64_t dflt, uint64_t *out);
/* The array value under s's keywords; 1 when none qualifies (array.c). */
int sc_array_value(sc_t *c, json_t *s, const char *ptr, gr_sym_t *out);
/* The object value under s's keywords; 1 when none qualifies (object.c). */
int sc_object_value(sc_t *c, json_t *s, const char *ptr, gr_sym_t *out);
/* Whether the pattern (an ECMA search) matches the name, -1 on an error (object.c). */
int sc_pattern_matches(sc_t *c, const char *pattern, const char *name, const char *ptr);
/* dependencies, dependentRequired or dependentSchemas (kw) as two
 * branches: the first key absent, or present with what it needs
 * (object.c). */
int sc_dependencies(sc_t *c, json_t *s, const char *kw, const char *ptr, gr_sym_t *out);
/* Whether a subschema may use one of kws (a NULL-terminated list), in
 * place or through the in-place applicators (allOf, anyOf, oneOf, if,
 * then, else, dependentSchemas; `not` evaluates nothing); conservatively
 * yes past MAX_DEPTH.  sc_subschemas_use asks it of keyword kw's value: a
 * schema, an array of them, or dependentSchemas' object of them.  What
 * unevaluatedItems and unevaluatedProperties ask of their neighbours. */
int sc_may_use(json_t *s, const char *const *kws, int depth);
int sc_subschemas_use(const char *kw, json_t *v, const char *const *kws, int depth);
int sc_annotation(const sc_t *c, const char *k);
json_t *sc_all_of(json_t *a, json_t *b);
int sc_type_mask(json_t *t);
json_t *sc_type_json(int m);
int sc_type_and(int a, int b);
int sc_same_value(json_t *a, json_t *b);
int sc_json_type_of(json_t *v);
/* k for multipleOf 10^-k (1 -> 0, 0.01 -> 2), -1 for other numbers. */
int sc_decimal_places(double n);
/* Whether `format` name asserts under the options (a custom format or
 * format_annotation: no). */
int sc_format_asserts(const sc_t *c, const char *name);
/* Resolves every $ref of the document (and of the remote documents it
 * names) into the JSON pointer of its target (ref.c). */
int sc_refs_prepare(sc_t *c);
/* The reason a $ref was found to resolve to nothing, or NULL. */
const char *sc_ref_bad(const char *ref);
/* The schema a rewritten $ref names and its canonical pointer (malloc'd;
 * NULL on failure) (ref.c). */
int sc_resolve(sc_t *c, const char *ref, const char *ptr, json_t **out, char **canon);
/* The nonterminal of a $ref's target, compiled on first use (ref.c). */
int sc_ref_symbol(sc_t *c, const char *ref, const char *ptr, gr_sym_t *out);
/* The nonterminal named key (malloc'd, taken), its rule fn(c, s, ptr) made
 * on first use (a use while it is made is a recursion through it); 1 when
 * it allows nothing (ref.c). */
typedef int (*sc_compile_fn)(sc_t *c, json_t *s, const char *ptr, gr_sym_t *out);
int sc_keyed_symbol(sc_t *c, char *key, sc_compile_fn fn, json_t *s, const char *ptr,
                    gr_sym_t *out);
/* Whether the keywords beside s's $ref say nothing its target does not
 * (then the $ref stays a shared rule) (ref.c). */
int sc_ref_siblings_redundant(sc_t *c, json_t *s, const char *ptr);
/* propertyNames as the string lexeme every name must be in
 * (names.c). */
typedef struct {
    int on;          /* propertyNames constrains the names */
    int none;        /* no name qualifies */
    tb_buf_t re;     /* the lexeme, NUL-terminated */
    lex_dfa_t *dfa;
} sc_names_t;
int sc_names_init(sc_t *c, json_t *s, const char *ptr, sc_names_t *n);
void sc_names_free(sc_names_t *n);
/* Whether the name is allowed (1, 0; -1 on memory). */
int sc_names_allow(sc_t *c, const sc_names_t *n, const char *name);
/* regex (a key lexeme) intersected with the names allowed, in out. */
int sc_names_restrict(sc_t *c, const sc_names_t *n, const char *regex, tb_buf_t *out);
/* The lexeme of the strings s's string keywords allow, in re
 * (NUL-terminated); 1 when none. */
int sc_string_regex(sc_t *c, json_t *s, const char *ptr, tb_buf_t *re);
/* The lexemes that check values against one schema's string and number
 * keywords, kept across the values of an enum (one parse and one DFA for
 * all of them); zeroed to start, sc_checks_free at the end. */
typedef struct {
    tb_buf_t re[2];     /* [0] the strings' regex, [1] the numbers' (NUL-terminated) */
    lex_dfa_t *dfa[2];  /* their DFAs, built at the first value of the kind */
} sc_checks_t;
/* Whether the string or number v meets s's string or number keywords (1,
 * 0, -1); other values pass. */
int sc_value_passes(sc_t *c, sc_checks_t *k, json_t *s, const char *ptr, json_t *v);
void sc_checks_free(sc_checks_t *k);
/* Whether v is in the array en (JSON equality). */
int sc_in_enum(json_t *en, json_t *v);
/* s with unevaluatedProperties resolved where the properties evaluated are
 * static (uneval.c): dropped, or additionalProperties. */
int sc_unevaluated_properties(sc_t *c, json_t *s, const char *ptr, json_t **out);
/* s with if/then/else beside an unevaluated keyword rewritten as the two
 * disjoint branches (if and then) or (not if and else), each holding the
 * unevaluated keywords (uneval.c); s itself otherwise. */
int sc_unevaluated_if(sc_t *c, json_t *s, const char *ptr, json_t **out);
/* Look-aheads that keep the numbers (no exponent) that are multiples of
 * the decimal mo (mult.c), appended to re (nothing where, with
 * integer, every integer is one); -1 with the reason
 * where the automaton or its regex would be too big. */
int sc_multiple_of(sc_t *c, json_t *mo, const char *ptr, int integer, tb_buf_t *re);
/* The least common multiple of two decimals (new), NULL if not written. */
json_t *sc_multiple_lcm(json_t *a, json_t *b);
/* The complement of the flattened schema s as a schema (kept), or -1 with
 * an error naming the keyword that has none here (not.c). */
int sc_complement(sc_t *c, json_t *s, json_t *within, const char *ptr, json_t **out);

#endif
