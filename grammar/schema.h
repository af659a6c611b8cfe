/*
 * schema: JSON Schema (drafts 4 to 2020-12) compiled into the grammar of
 * cfg.h: the JSON texts that are valid instances, as Python's json.dumps
 * writes them (docs/json-schema.md has the translation in full).
 *
 * Lexemes: every JSON string and number is ONE lexeme, quotes included, so
 * whitespace (the ignored lexeme [ \t\n\r]+, unless compact) can never
 * enter one; punctuation and true/false/null are lexemes; property names
 * are lexemes of every spelling of "name".  Every string, constrained or
 * not, key or value, is read in every spelling JSON allows (UTF-8, short
 * escapes, \uXXXX in either case, surrogate pairs), or under llguidance's
 * reading in llguidance's (ecma.h's GR_SPELL_LLG*); keywords hold for the
 * decoded string (lengths in characters after unescaping).
 *
 * Supported, exactly (an instance is accepted iff it is valid, up to the
 * notes below and docs/json-schema.md's):
 *   type (also arrays), boolean schemas, nullable (OpenAPI), enum, const
 *     (filtered by type and the string and number keywords beside them);
 *   properties in any order (or in definition order, an option), each at
 *     most once and present unless optional; additional properties (additionalProperties true,
 *     absent or a schema; names other than the defined ones) anywhere;
 *     patternProperties (names split exactly by the patterns they match,
 *     defined names taking their patterns' schemas too);
 *   required, minProperties and maxProperties (counted; in definition
 *     order minProperties up to the number of required properties, or 1,
 *     and maxProperties where redundant),
 *     dependencies, dependentRequired,
 *     dependentSchemas (as two branches: the key absent, or present with
 *     what it needs);
 *   items, prefixItems, additionalItems, minItems, maxItems (<= 100000),
 *     uniqueItems false (true only with maxItems <= 1);
 *   minLength, maxLength (<= 1000000 code points), pattern (ECMA-262, a
 *     search; grammar/ecma.h), format: date-time date time email hostname
 *     ipv4 ipv6 uri uri-reference uuid duration (ecma.c names each RFC);
 *   minimum, maximum, exclusiveMinimum, exclusiveMaximum (draft-4 booleans
 *     and later numbers; exact decimal intervals, grammar/numrange.h),
 *     multipleOf of any decimal whose automaton is small (schema/mult.c);
 *   propertyNames (its string keywords; schema/names.c);
 *   unevaluatedProperties where the names evaluated are static
 *     (schema/uneval.c);
 *   anyOf; oneOf as anyOf (exact where no instance matches two branches,
 *     and for branches of required names only, written exactly;
 *     opts->strict_oneof refuses the others); allOf merged keyword by
 *     keyword (and the keywords beside anyOf/oneOf/$ref merged into each
 *     branch; beside $ref ignored for drafts 4 to 7); $ref, recursive, to
 *     JSON pointers, $id base URIs (resolved as RFC 3986 says), $anchor,
 *     and remote documents read from opts->remote_dir (schema/ref.c);
 *     $dynamicRef where its dynamic anchor is the only one of its name.
 *   not of any schema whose keywords have complements here (schema/not.c:
 *     types, scalar enum/const, lengths, pattern, bounds, multipleOf 10^-k,
 *     required, properties, dependencies, anyOf, oneOf, not, if, contains);
 *   if/then/else as (if and then) or (not if and else); contains with
 *     minContains and maxContains (schema/array.c); strict oneOf exactly.
 *   Annotations and unknown keywords are ignored (title, description,
 *   default, examples, $comment, $schema, $id, readOnly, x-...), but
 *   llguidance's "x-guidance" at the root: its separators (regexes of the
 *   lexemes for "," and ":"), whitespace_flexible, whitespace_pattern (the
 *   ignored lexeme), coerce_one_of, lenient (unknown formats ignored) and
 *   its escape options (applied under llguidance's reading); another
 *   option refused.
 * A grammar g set up with llguidance's semantics (cfg.h), or opts'
 * llguidance, reads the schema as llguidance does: integers without a
 * fraction, properties in definition order (in any order where
 * min/maxProperties go beyond what the ordered grammar writes), strings
 * spelled as llguidance spells them, whitespace at most once between two
 * lexemes (gr_cfg_t.ignore_once).
 *   unevaluatedItems where allOf/$ref make the items evaluated static.
 * Refused with "POINTER: reason" naming the keyword: nots of the other
 * keywords, propertyNames with anyOf/oneOf/not/if, unevaluatedProperties
 * and unevaluatedItems beside instance-dependent applicators,
 * $dynamicRef to a competing dynamic anchor, draft 3, other min/maxProperties, multipleOf whose
 * automaton would be too big, unknown formats, uniqueItems
 * true, patterns the ECMA translation refuses (look-around, \b,
 * back-references, \p), pattern or format combined with length bounds
 * where the intersection is not written exactly, allOf branches that
 * cannot be merged, $refs that resolve to nothing, absurd bounds.
 * Where JSON Schema treats a keyword as applying to one type only
 * (minLength to strings...), it is checked only when that type is allowed.
 */
#ifndef GR_SCHEMA_H
#define GR_SCHEMA_H

#include <stddef.h>

#include "../base/err.h"
#include "cfg.h"

typedef struct {
    /* 0 (default): whitespace as JSON allows it, the ignored lexeme
     * [ \t\n\r]+; 1: none at all (the grammar reads json.dumps(...,
     * separators=(",", ":")) output only). */
    int compact;
    /* 0 (default): oneOf compiled as anyOf; 1: oneOf refused unless its
     * branches are shown pairwise disjoint. */
    int strict_oneof;
    /* 1: every object in the order of `properties` (the default: any
     * order, each property at most once, as a set nonterminal of cfg.h). */
    int definition_order;
    /* 0 (default): `format` asserts (the regexes of ecma.h; formats JSON
     * Schema defines with no regex here refused); 1: `format` is an
     * annotation and constrains nothing, JSON Schema 2019-09 and 2020-12's
     * default (the Format-Annotation vocabulary). */
    int format_annotation;
    /* The draft of a schema whose root has no $schema: 4, 6, 7, 2019
     * (2019-09) or 2020 (2020-12); 0: 2020-12.  A root $schema naming a
     * draft overrides it. */
    int draft;
    /* 1: the schema read as llguidance reads it (integers without a
     * fraction, properties in definition order where that grammar writes
     * min/maxProperties); also when g's semantics is llguidance's. */
    int llguidance;
    /* A folder that $refs to http://localhost:1234/PATH read as
     * remote_dir/PATH (the JSON Schema Test Suite's remotes/); NULL: no
     * remote document is read.  Nothing is ever fetched from the network. */
    const char *remote_dir;
} gr_schema_opts_t;


/*
 * Compiles the JSON Schema json[0..len) into g, which must be freshly set
 * up with gr_cfg_init (the caller frees it, also on failure), and finishes
 * it (gr_cfg_finish).  opts NULL: the defaults.  Errors: malformed JSON
 * (line and column), "#/pointer: reason" for what cannot be compiled
 * exactly, and gr_cfg_finish's (a $ref cycle with no base case is a rule
 * that derives no finite string, named by the pointer).  GR_SCHEMA_EMPTY
 * (with err "#: the schema allows no value", g not finished) when the
 * schema is exactly the empty language (false, an empty enum, not {}...):
 * every instance is invalid, and there is no grammar to build.
 */
#define GR_SCHEMA_EMPTY 1
int gr_schema_compile(gr_cfg_t *g, const char *json, size_t len,
                      const gr_schema_opts_t *opts, tb_err_t *err);

/*
 * The same in two steps, for a caller that times the compile of a schema
 * already read (as MaskBench's protocol times llguidance's, from a parsed
 * JSON value): gr_schema_parse reads json[0..len), which must outlive doc
 * (a bound beyond 2^53 is read again from its digits), naming `source` in
 * a malformed-JSON error; gr_schema_compile_doc compiles it into g as
 * gr_schema_compile does.
 */
typedef struct {
    void *root;       /* the parsed JSON (jansson's json_t, kept opaque here) */
    int big;          /* integers were read as reals: some were beyond 64 bits */
    const char *text; /* json, borrowed */
    size_t len;
} gr_schema_doc_t;

int gr_schema_parse(const char *json, size_t len, const char *source, gr_schema_doc_t *doc,
                    tb_err_t *err);
void gr_schema_doc_free(gr_schema_doc_t *doc);
int gr_schema_compile_doc(gr_cfg_t *g, const gr_schema_doc_t *doc,
                          const gr_schema_opts_t *opts, tb_err_t *err);

#endif
