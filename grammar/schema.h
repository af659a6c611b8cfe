/*
 * schema: JSON Schema (drafts 4 to 2020-12) compiled into the grammar of
 * cfg.h: the JSON texts that are valid instances, as Python's json.dumps
 * writes them (docs/json-schema.md has the translation in full).
 *
 * Lexemes: every JSON string and number is ONE lexeme, quotes included, so
 * whitespace (the ignored lexeme [ \t\n\r]+, unless compact) can never
 * enter one; punctuation and true/false/null are lexemes; property names
 * are literal lexemes "name".  Strings that a keyword constrains (pattern,
 * format, minLength, maxLength, enum, const, property names) are read in
 * the encoding of json.dumps(ensure_ascii=False): " \ and the controls
 * escaped (\b \t \n \f \r, else \u00xx), every other character as its
 * UTF-8 bytes; unconstrained strings accept any JSON escape.
 *
 * Supported, exactly (an instance is accepted iff it is valid, up to the
 * encodings above and the notes below):
 *   type (also arrays), boolean schemas, nullable (OpenAPI), enum, const
 *     (with type; other keywords beside them must not apply to the values);
 *   properties in definition order, each present or (if not required)
 *     absent; additional properties (additionalProperties true, absent or
 *     a schema; names other than the defined ones) anywhere between them;
 *     patternProperties (names split exactly by the patterns they match,
 *     defined names taking their patterns' schemas too);
 *   required, minProperties up to the number of required properties (or
 *     1), maxProperties where redundant, dependencies, dependentRequired,
 *     dependentSchemas (as two branches: the key absent, or present with
 *     what it needs);
 *   items, prefixItems, additionalItems, minItems, maxItems (<= 100000),
 *     uniqueItems false (true only with maxItems <= 1);
 *   minLength, maxLength (<= 1000000 code points), pattern (ECMA-262, a
 *     search; grammar/ecma.h), format: date-time date time email hostname
 *     ipv4 ipv6 uri uri-reference uuid duration (ecma.c names each RFC);
 *   minimum, maximum, exclusiveMinimum, exclusiveMaximum (draft-4 booleans
 *     and later numbers; exact decimal intervals, grammar/numrange.h),
 *     multipleOf 1;
 *   anyOf; oneOf as anyOf (exact where no instance matches two branches,
 *     and for branches of required names only, written exactly;
 *     opts->strict_oneof refuses the others); allOf merged keyword by
 *     keyword (and the keywords beside anyOf/oneOf/$ref merged into each
 *     branch; beside $ref ignored for drafts 4 to 7); $ref to "#",
 *     "#/json/pointer" (through $defs, definitions or anywhere in the
 *     document; the root's $id as a prefix), recursive.
 *   Annotations and unknown keywords are ignored (title, description,
 *   default, examples, $comment, $schema, $id, readOnly, x-...).
 * Refused with "POINTER: reason" naming the keyword: not, if/then/else,
 * propertyNames, unevaluated*, contains, other min/maxProperties,
 * multipleOf other than 1, unknown formats, uniqueItems true, patterns the ECMA translation refuses
 * (look-around, \b, back-references, \p), pattern or format combined with
 * length bounds where the intersection is not written exactly, allOf
 * branches that cannot be merged, external or anchor $refs, absurd bounds.
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
    /* 0 (default): oneOf compiled as anyOf; 1: oneOf refused unless the
     * types its branches allow are pairwise disjoint. */
    int strict_oneof;
} gr_schema_opts_t;

/*
 * Compiles the JSON Schema json[0..len) into g, which must be freshly set
 * up with gr_cfg_init (the caller frees it, also on failure), and finishes
 * it (gr_cfg_finish).  opts NULL: the defaults.  Errors: malformed JSON
 * (line and column), "#/pointer: reason" for what cannot be compiled
 * exactly, and gr_cfg_finish's (a $ref cycle with no base case is a rule
 * that derives no finite string, named by the pointer).
 */
int gr_schema_compile(gr_cfg_t *g, const char *json, size_t len,
                      const gr_schema_opts_t *opts, tb_err_t *err);

#endif
