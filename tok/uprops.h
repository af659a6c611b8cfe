/*
 * uprops: the General_Category of every code point at the Unicode version
 * of the reference tokenizers' regex engines (Hugging Face tokenizers and
 * tiktoken both use Unicode 16.0.0), for the pre-tokenizer's \p{..}
 * classes.  PCRE2 has the property tables of its own release (Unicode 14.0
 * in Debian 12's 10.42), so pretok.c rewrites each category into class
 * items that match exactly these tables' set before PCRE2 compiles the
 * pattern.
 * The tables are generated at build time by scripts/gen-uprops.pl from the
 * data/manifest entry ucd-V; scripts/ref/probe-unicode.js measures V.
 */
#ifndef TOK_UPROPS_H
#define TOK_UPROPS_H

#include <stddef.h>
#include <stdint.h>

#include "../base/buf.h"

/* The Unicode version of the tables, e.g. "16.0.0". */
const char *tok_uprops_version(void);

/* The leaf category (index into the leaves, in PropertyValueAliases order:
 * Cc Cf Cn Co Cs Ll ... Zs) of code point cp; cp past U+10FFFF is Cn. */
unsigned tok_uprops_gc(uint32_t cp);

/* out[cp] = tok_uprops_gc(cp) for every cp < n, in one pass over the runs
 * (a table for the BMP costs microseconds, not a search per code point). */
void tok_uprops_gc_fill(uint8_t *out, uint32_t n);

/* 1 if cp is White_Space (the references' \s). */
int tok_uprops_is_space(uint32_t cp);

/* 1 if c lies in one of the n sorted, disjoint ranges r[k][0]..r[k][1]. */
int tok_uprops_in_ranges(const uint32_t (*r)[2], size_t n, uint32_t c);

/* The same, remembering in *m the run of code points around c with c's
 * answer (its range, or the gap between two), so that the next ones in it
 * (the letters of one script, mostly) are answered without a search.  A
 * memo serves one table; TOK_RANGES_MEMO_EMPTY starts it. */
typedef struct {
    uint32_t lo, hi;
    int in;
} tok_ranges_memo_t;
#define TOK_RANGES_MEMO_EMPTY ((tok_ranges_memo_t){1, 0, 0})
int tok_uprops_in_ranges_memo(const uint32_t (*r)[2], size_t n, uint32_t c,
                              tok_ranges_memo_t *m);
/* tok_uprops_is_space through a memo of the White_Space ranges. */
int tok_uprops_is_space_memo(uint32_t cp, tok_ranges_memo_t *m);

/* The set of leaf categories that a category name stands for (bit k for
 * leaf k): a short or long name, leaf or group ("L", "Lu", "Letter",
 * "Uppercase_Letter"), matched as PCRE2 and Oniguruma match names: case,
 * spaces, '-' and '_' ignored.  0 for a name that is no category. */
uint32_t tok_uprops_mask(const char *name, size_t len);

/* The short name of leaf k ("Lu"), or NULL past the last leaf. */
const char *tok_uprops_leaf_name(unsigned k);

/* Appends the code points whose leaf category is in `mask` (or, with
 * `negate`, is not) as PCRE2 class items with no brackets: PCRE2's own
 * \p{..} plus the ranges where its tables lack them ("\p{L}\x{1c89}-..."),
 * or, where that cannot be exact (negate, a category PCRE2 puts a code point
 * in that these tables take out of it, another PCRE2 than the build's),
 * every range ("\x{41}-\x{5a}...").  Surrogates are left out, since UTF-8
 * text holds none and PCRE2 refuses them in a UTF pattern.  Returns 0, or
 * -1 when out of memory. */
int tok_uprops_class_items(uint32_t mask, int negate, tb_buf_t *out);

/* The same for White_Space (the references' \s), or with `negate` every
 * other code point (\S), surrogates left out. */
int tok_uprops_space_items(int negate, tb_buf_t *out);

#endif
