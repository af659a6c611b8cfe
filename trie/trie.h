/*
 * trie: token tries behind one interface.
 *
 * A trie maps the byte strings of a vocabulary's tokens to their ids and
 * answers what tokenizers and constrained decoders ask of it: exact lookup,
 * common-prefix search (every token that starts a text, shortest first: the
 * candidates of Unigram Viterbi and of longest match), and the mask walk
 * (every token a recognizer accepts byte by byte, as a bitset over ids).
 *
 * Several layouts implement it (`dfs`, `dat`, `xcda`, `map`, `cover`); each is one
 * file plus one entry in trie_layouts[] (trie.c).  Callers pick a layout by
 * name and never see its internals, so that the experiments run the same
 * work over every layout.
 *
 * Keys.  A layout is built from a trie_keys_t: unique, non-empty byte
 * strings sorted in byte order (a prefix before its extensions), each with
 * one token id.  trie_keys_from_vocab() makes one from a vocabulary:
 *   - ids whose bytes repeat an earlier id's bytes (Gemma's byte piece
 *     <0x41> and its plain "A", for instance) become aliases of the lowest
 *     such id: the trie stores the lowest id, lookups return it (as
 *     tok_vocab_find does), and trie_walk() sets the aliases' mask bits
 *     too, since a mask is about bytes, not about which id names them;
 *   - control, unknown, unused-with-bytes and special-flagged tokens are
 *     either left out or kept behind TRIE_SPECIAL_MARKER (0xFF), a byte
 *     that valid UTF-8 never contains, so ordinary text cannot reach them
 *     while a lookup of "\xFF<|eot_id|>" still can.
 */
#ifndef TRIE_TRIE_H
#define TRIE_TRIE_H

#include <stddef.h>
#include <stdint.h>

#include "../base/bitset.h"
#include "../base/da.h"
#include "../base/err.h"
#include "../tok/vocab.h"

#define TRIE_SPECIAL_MARKER 0xFFu

typedef enum {
    TRIE_SPECIALS_OMIT,   /* control and special tokens are left out */
    TRIE_SPECIALS_MARKED, /* kept as TRIE_SPECIAL_MARKER + their bytes */
} trie_specials_t;

typedef struct {
    const uint8_t *s; /* into trie_keys_t.pool */
    uint32_t len;
    uint32_t id;
} trie_key_t;

typedef struct {
    trie_key_t *keys; /* n keys, sorted, unique, non-empty */
    size_t n;
    uint8_t *pool;    /* the keys' bytes */
    uint32_t id_limit; /* every id (key or alias) is below this */
    uint32_t max_len;  /* longest key */
    uint32_t *alias;   /* nalias pairs {id, primary id with the same bytes} */
    size_t nalias;
} trie_keys_t;

/* The keys of a vocabulary's tokens.  Fails (naming the token id) on an
 * ordinary token with no bytes. */
int trie_keys_from_vocab(trie_keys_t *k, const tok_vocab_t *v,
                         trie_specials_t specials, tb_err_t *err);
/* The keys strs[i][0..lens[i]) -> ids[i], in any order.  Strict: an empty
 * string or two ids with the same bytes is an error naming both. */
int trie_keys_from_list(trie_keys_t *k, const uint8_t *const *strs,
                        const uint32_t *lens, const uint32_t *ids, size_t n,
                        tb_err_t *err);
/* The same, but ids whose strings repeat become aliases of the lowest such
 * id, as trie_keys_from_vocab makes them: a walk that allows the string
 * allows them all. */
int trie_keys_from_list_aliased(trie_keys_t *k, const uint8_t *const *strs,
                                const uint32_t *lens, const uint32_t *ids, size_t n,
                                tb_err_t *err);
void trie_keys_free(trie_keys_t *k);

/*
 * The recognizer a mask walk runs under: a stack of states, one per byte of
 * the path from the root.  An implementation embeds trie_rec_t as its first
 * member and casts back in its callbacks.
 *   push_byte     if the state on top accepts byte b, pushes the next state
 *                 and returns 1; otherwise pushes nothing and returns 0;
 *   pop_bytes     drops the top n states;
 *   allowed_bytes optional (may be NULL): the bytes push_byte would accept
 *                 now, as a 256-bit set (bit b of set[b / 64]).  Double
 *                 arrays use it to probe only those labels when they are
 *                 few, and to filter a node's children when they are many.
 */
typedef struct trie_rec trie_rec_t;

/*
 * Optional: the recognizer as a dense table, which a walk may run itself
 * instead of calling push_byte and pop_bytes for every byte (two indirect
 * calls per node were most of a walk's cost: dfs's callback walk runs 53
 * instructions per node where its table walk runs 23, docs/walk-cost.md).  Every recognizer of this project has one: the regex
 * and lexer DFAs and the built-in ones (lexer/rec.h, lexer/builtin.h), and
 * one of your own gets the same speed by describing itself this way, its
 * entries computed lazily by push_byte if it cannot list them up front.  Generic: the trie knows
 * rows and offsets, not what a state means.  A state is a row offset r
 * into `table`; byte b leads to
 *     next = table[r + cls[b]]
 *     next == 0                 b is refused (so row offset 0 is never a
 *                               live state: it is the dead state's row)
 *     next == TRIE_REC_UNKNOWN  not computed yet: the walk sets `depth`
 *                               and calls push_byte(b), which computes it
 *                               (it may reallocate the table: the walk
 *                               reloads table and cls after every callback)
 *                               and pushes as usual;
 *     otherwise                 the next state's row offset, pushed as
 *                               stack[depth + 1].
 * stack[0..depth] are the states along the path, stack[depth] on top;
 * stack has `cap` entries.  A recognizer with a table keeps its own state
 * in these fields, so its callbacks and a table walk see one stack.  While
 * a table walk runs, `depth` is up to date only when a callback is called
 * and when the walk returns.  A walk uses the table only where its deepest
 * path fits (depth + max key length < cap); otherwise it calls back, and
 * push_byte refuses what would overflow.  With a table, allowed_bytes
 * must depend on the row on top alone: a walk may keep its answer per row
 * for the length of the walk (dat asks once a walk, at the root).
 */
#define TRIE_REC_UNKNOWN UINT32_MAX
typedef struct {
    const uint32_t *table; /* NULL: no table, callbacks only */
    const uint8_t *cls;    /* 256 entries: byte -> column */
    uint32_t *stack;
    size_t depth, cap;
} trie_rec_table_t;

struct trie_rec {
    int (*push_byte)(trie_rec_t *r, uint8_t b);
    void (*pop_bytes)(trie_rec_t *r, uint32_t n);
    void (*allowed_bytes)(trie_rec_t *r, uint64_t set[4]);
    trie_rec_table_t tab; /* zeroed (no table) unless the recognizer has one */
    /* Recognizers set up by trie_rec_table_init only: the entry of row
     * offset `row` for byte b, computed (the next row offset, 0 if b is
     * refused); it may move the table and then updates tab.table. */
    uint32_t (*compute)(trie_rec_t *r, uint32_t row, uint8_t b);
};

/*
 * A recognizer whose every state is a row of its table (a lexer DFA, a
 * grammar) needs nothing of its own but `compute` (and allowed_bytes,
 * which may be NULL): this gives it push_byte (the table entry, computed
 * where unknown), pop_bytes and a stack for walks at most max_depth bytes
 * deep.  The caller fills tab.table, tab.cls and stack[0] before a walk.
 * -1 on memory.
 */
int trie_rec_table_init(trie_rec_t *r, uint32_t (*compute)(trie_rec_t *, uint32_t, uint8_t),
                        void (*allowed)(trie_rec_t *, uint64_t[4]), size_t max_depth);
void trie_rec_table_free(trie_rec_t *r);

/* Entry i of a recognizer's table.  Read atomically because a table may
 * be shared between threads that fill it while others walk it (a grammar's,
 * grammar/gram.h: entries are published with release stores); on x86 and
 * ARMv8 an acquire load is a plain load. */
static inline uint32_t trie_rec_entry(const uint32_t *table, size_t i)
{
    return __atomic_load_n(&table[i], __ATOMIC_ACQUIRE);
}

/* Whether a walk whose paths are at most max_len bytes long may run rec's
 * table itself (see trie_rec_table_t). */
static inline int trie_rec_inline(const trie_rec_t *rec, size_t max_len)
{
    return rec->tab.table && rec->tab.depth + max_len < rec->tab.cap;
}

/* A table walk's slow path: the entry for b was TRIE_REC_UNKNOWN.  Calls
 * push_byte at `depth` and answers the next row offset (0: refused); the
 * callback's push is undone, the caller pushes itself.  Reload tab.table
 * and tab.cls after it. */
static inline uint32_t trie_rec_compute(trie_rec_t *rec, size_t depth, uint8_t b)
{
    rec->tab.depth = depth;
    if (!rec->push_byte(rec, b))
        return 0;
    rec->tab.depth = depth;
    return rec->tab.stack[depth + 1];
}

/* A token found in a text: `id` the token, `len` its length (it is
 * text[0..len)); base/da's match type, so that the double array writes
 * matches for the layouts directly. */
typedef tb_da_match_t trie_match_t;

/*
 * One layout.  `impl` is the layout's own structure.  The operations:
 *   build     from sorted keys; fails with a message naming the key or
 *             limit at fault (ids, depth, size, bytes the format refuses);
 *   lookup    id of exactly s[0..n), or -1;
 *   prefixes  tokens that are prefixes of s[0..n), shortest first: writes
 *             at most max of them and returns how many there are;
 *   walk      sets in mask the bit of every token whose bytes the
 *             recognizer accepts (the mask has at least id_limit + 1 bits:
 *             bit id_limit is scratch), returns the nodes it offered to the
 *             recognizer; runs only after prepare_walk (if any) succeeded;
 *   bytes     what the layout holds now: with a prepare_walk, the walk's
 *             own structures count only once they have been built;
 *   validate  checks the layout's invariants, naming the node at fault;
 *   prepare_walk  optional (NULL: nothing to prepare): builds what only
 *             walks need (`dat`: the child chain and the walk frames), so
 *             that a trie that is only looked up never holds it.  Called
 *             before every walk by trie_walk, so it must be cheap and do
 *             nothing once done; fails only for memory.
 *
 * Why a separate hook rather than a walk that builds on first use (or a
 * non-const walk): walk takes `const void *`, as lookups do, and is the
 * measured loop; building inside it would mean casting const away in each
 * layout that builds, and no way to report a failure (walk returns a node
 * count), while making walk non-const would change trie_walk and every
 * caller's const trie_t.  The hook is the one place that mutates, takes a
 * non-const impl and a tb_err_t, and can be called on its own
 * (trie_prepare_walk) before a timed region or before threads share the
 * trie; walk stays a reader of what was prepared (bar its scratch frames).
 */
typedef struct {
    const char *name;
    const char *about;
    void *(*build)(const trie_keys_t *k, tb_err_t *err);
    void (*free)(void *impl);
    int32_t (*lookup)(const void *impl, const uint8_t *s, size_t n);
    size_t (*prefixes)(const void *impl, const uint8_t *s, size_t n,
                       trie_match_t *out, size_t max);
    uint64_t (*walk)(const void *impl, trie_rec_t *rec, tb_bitset_t *mask);
    size_t (*nodes)(const void *impl);
    size_t (*bytes)(const void *impl);
    int (*validate)(const void *impl, tb_err_t *err);
    int (*prepare_walk)(void *impl, tb_err_t *err);
} trie_layout_t;

/* Every layout, NULL-terminated. */
extern const trie_layout_t *const trie_layouts[];
/* The layout called `name`, or NULL. */
const trie_layout_t *trie_layout_find(const char *name);

typedef struct trie trie_t;

/* Builds `layout` over the keys (the trie copies what it needs from k). */
trie_t *trie_build(const trie_layout_t *layout, const trie_keys_t *k,
                   tb_err_t *err);
void trie_free(trie_t *t);

const trie_layout_t *trie_layout(const trie_t *t);
/* The layout's own structure, for experiments that call it directly. */
const void *trie_impl(const trie_t *t);

int32_t trie_lookup(const trie_t *t, const uint8_t *s, size_t n);
size_t trie_prefixes(const trie_t *t, const uint8_t *s, size_t n,
                     trie_match_t *out, size_t max);
/* Bits a mask for trie_walk needs: the id limit plus one scratch bit. */
size_t trie_mask_bits(const trie_t *t);
/* The longest key's bytes: no walk goes deeper. */
uint32_t trie_max_len(const trie_t *t);
/* Builds what the layout's walks need and its lookups do not (its
 * prepare_walk; nothing for layouts without one), if not built yet.
 * trie_walk does this itself on the first walk; call it first to pay the
 * cost outside a timed region, to see why it failed (memory), or before
 * other threads may touch the trie.  trie_bytes() counts these structures
 * once they are built, so it grows here. */
int trie_prepare_walk(trie_t *t, tb_err_t *err);
/* ORs the allowed tokens (aliases included) into mask; the scratch bit is
 * left clear.  Returns the nodes offered to the recognizer, or UINT64_MAX
 * without walking if the mask has fewer than trie_mask_bits(t) bits or the
 * walk's structures could not be built (trie_prepare_walk says why).
 * A walk writes inside the trie although `t` is const: scratch memory on
 * every walk, and on the first walk the structures of trie_prepare_walk.
 * So one walk per trie at a time, and until the first walk (or
 * trie_prepare_walk) has returned, nothing else may walk the trie or call
 * trie_bytes or trie_validate on it; lookups and prefix searches read none
 * of what a walk writes and may run alongside. */
uint64_t trie_walk(const trie_t *t, trie_rec_t *rec, tb_bitset_t *mask);
size_t trie_nodes(const trie_t *t);
/* The bytes the layout holds now: for `dat`, the units alone until the
 * first walk (or trie_prepare_walk), units, child chain and walk frames
 * after (see trie_layout_t.bytes). */
size_t trie_bytes(const trie_t *t);
int trie_validate(const trie_t *t, tb_err_t *err);

/* The layouts (each in its own file). */
extern const trie_layout_t trie_layout_dfs;
extern const trie_layout_t trie_layout_dat;
extern const trie_layout_t trie_layout_xcda;
extern const trie_layout_t trie_layout_map;
extern const trie_layout_t trie_layout_cover;

#endif
