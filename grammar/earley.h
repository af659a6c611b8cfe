/*
 * earley: an Earley recognizer over lexemes whose sets are immutable and
 * hash-consed, so that a parser state is one 32-bit row id.
 *
 * Why immutable rows: a mask walk tries every token from one parser state,
 * crossing lexeme boundaries down one trie branch and abandoning them when
 * it climbs back.  With rows that never change once made, "push a row at a
 * boundary, pop it on the way up" costs nothing (the walk keeps ids), the
 * same scan from the same row is the same row (computed once, then found by
 * content), and rows made in one mask are reused by the next.  An item is
 * (dot, origin): dot indexes the flat array of rule positions, origin the
 * row its rule was predicted in.  An item predicted in the row that holds
 * it has origin GR_SELF, so that a row's content does not depend on where
 * it was made: two rows with equal items behave identically from then on
 * and are one row.
 *
 * Nullable nonterminals follow Aycock and Horspool: predicting a nullable
 * B also moves the predicting item past B, and an item completed in the
 * row it was predicted in is not completed again.  Left recursion,
 * ambiguity and nullable rules need nothing else; no function recurses,
 * so nesting depth costs heap, not stack.
 *
 * Memory is bounded: items (all rows together) are capped, passing the cap
 * makes every later scan fail and leaves a sticky error.
 */
#ifndef GR_EARLEY_H
#define GR_EARLEY_H

#include <stddef.h>
#include <stdint.h>

#include "../base/buf.h"
#include "../base/err.h"
#include "cfg.h"

#define GR_SELF UINT32_MAX /* origin: the row holding the item */
#define GR_END UINT32_MAX  /* after[dot] at the end of a rule */
#define GR_ROW_DEAD 0u     /* the empty row: a refused scan */
#define GR_ROW_START 1u    /* the row before any lexeme */

typedef struct {
    uint32_t dot, origin;
} gr_item_t;

/* Row r: items[off .. off + n), sorted by (dot, origin); expect: the row's
 * expected lexemes at expect[r * words]; accept: the start rule is
 * complete (the lexemes so far are a sentence); by_after: 1 + where its
 * items sorted by the symbol after their dot begin in the parser's
 * by_after, 0 until made (earley.c's row_by_after: long rows only). */
typedef struct {
    uint32_t off, n;
    uint64_t hash;
    uint8_t accept;
    uint32_t by_after;
} gr_row_t;

/*
 * The parser.  The grammar, flattened: a dot position d is a place in a
 * rule, after[d] the symbol after it (a gr_sym_t) or GR_END, lhs[d] the
 * rule's left side; the dots where nonterminal a's rules start are
 * pred[rules[a].lo .. rules[a].hi).  Nonterminal nnt (one past the
 * grammar's) is the added start S' -> S, whose two dots are start_dot and
 * accept_dot.
 *
 * Set nonterminals (cfg.h's gr_set_t) are read through nonterminals made
 * here as a text reaches them: nonterminal nnt + 1 + v is the state v of
 * some set, keyed by (set, whether a member was read, count, members in)
 * at vkey[vkey_off[v] ..]; its rules (one per member not yet in, one for
 * the extra, each leading to the state after it) are appended the first
 * time it is predicted (rules[a].hi == GR_END until then).  A set of n
 * members has up to 2^n such states, but a text reaches n + 1 of them, and
 * a mask at one place the states one member further: memory grows with
 * what is parsed, not with 2^n.  Set k's start is state k.  Only states
 * from which the set can still end are made, so every expected lexeme
 * leads somewhere.
 */
typedef struct {
    uint32_t lo, hi;
} gr_span_t;

typedef struct {
    uint32_t ndots, nnt, nlex;
    TB_VEC(uint32_t) after, lhs, pred;
    TB_VEC(gr_span_t) rules;   /* per nonterminal */
    TB_VEC(uint8_t) nullable;  /* per nonterminal */
    TB_VEC(uint32_t) pred_gen; /* per nonterminal: generation it was predicted in */
    uint32_t start_dot, accept_dot;
    size_t words; /* words of a lexeme bitset */
    /* the sets, copied from the grammar, and their states */
    gr_set_t *sets;
    gr_sym_t *set_member;
    uint8_t *set_required;
    size_t nsets;
    TB_VEC(uint32_t) vkey_off;
    TB_VEC(uint64_t) vkey;
    uint32_t *vby_hash; /* open addressing: state + 1, 0 free */
    size_t vby_cap;
    TB_VEC(gr_item_t) items;
    TB_VEC(gr_row_t) rows;
    TB_VEC(gr_item_t) by_after; /* long rows' items by the symbol after the dot */
    TB_VEC(uint64_t) expect;
    uint32_t *by_hash; /* open addressing: row ids, 0 free (row 0 is never looked up) */
    size_t by_cap;
    /* scratch of one row being made: its items (the worklist), a set of
     * them stamped by generation, nonterminals predicted */
    TB_VEC(gr_item_t) work;
    TB_VEC(uint64_t) keys; /* sort keys of the items being ordered, and room */
    uint64_t *seen_key;
    uint32_t *seen_gen;
    size_t seen_cap;
    uint32_t gen;
    size_t max_items;
    int failed;
    tb_err_t err;
    const char *source;
} gr_parser_t;

#define GR_DEFAULT_MAX_ITEMS (1u << 23)

/* Flattens finished grammar g (gr_cfg_finish) and makes GR_ROW_START.
 * max_items 0: GR_DEFAULT_MAX_ITEMS. */
int gr_parser_init(gr_parser_t *p, const gr_cfg_t *g, size_t max_items, tb_err_t *err);
void gr_parser_free(gr_parser_t *p);

/* The row after row r reads one lexeme of the set `lexemes` (a bitset of
 * p->words words): items expecting any of them move on.  GR_ROW_DEAD if
 * none expects one, or (sticky error) if a limit was passed. */
uint32_t gr_parser_scan(gr_parser_t *p, uint32_t r, const uint64_t *lexemes);

/* The row holding the items of rows a and b, both made at the same place
 * of the text (two readings of the same bytes). */
uint32_t gr_parser_union(gr_parser_t *p, uint32_t a, uint32_t b);

static inline const uint64_t *gr_parser_expect(const gr_parser_t *p, uint32_t r)
{
    return p->expect.data + (size_t)r * p->words;
}

static inline int gr_parser_accepting(const gr_parser_t *p, uint32_t r)
{
    return p->rows.data[r].accept;
}

/* -1 with the sticky error in err if a limit was passed. */
int gr_parser_error(const gr_parser_t *p, tb_err_t *err);

#endif
