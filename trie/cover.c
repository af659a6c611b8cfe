/*
 * cover: the dfs node array plus an index of its large subtrees, each with
 * the set of edge bytes below it (its cover), so that a mask walk accepts
 * a whole subtree at once where the recognizer's state loops on every byte
 * of the cover: every node below is then accepted in that same state, and
 * the walk sets the bits of the subtree's tokens from a list instead of
 * stepping the DFA node by node.
 *
 * A state of a DFA over code points loops on no byte past 0x7F, so an
 * entry whose node ends a whole character, with only prefixes of valid
 * UTF-8 below it, is also accepted whole where every character of each
 * lead byte in its cover leads from the state back to it (u8_loop_set).
 *
 * Most of a wide mask is such subtrees: under the JSON-string body's
 * `[^"\\\x00-\x1f]*"` covers decide 89% of the nodes of Llama 3's mask and
 * 91% of Gemma 3's; under `any` 99.8%; under `[0-9]+` the digits'
 * subtrees.  docs/walk-cost.md has the figures.
 *
 * Layout (beside the dfs words of trie/dfs.h, which lookups and the
 * callback walk use unchanged):
 *   top[0..ntop)  one entry per node whose subtree has at least
 *                 COVER_MIN_SUB nodes, in depth-first order (cover_top_t);
 *                 the walk steps through these, and between two entries
 *                 runs the plain dfs loop over the small subtrees there;
 *   ids[0..nids)  the token ids of the nodes in depth-first order (nodes
 *                 that are no token left out), so a subtree's tokens are
 *                 the run ids[tok_lo..tok_hi).
 * The index is derived from the dfs array alone; validate rebuilds it and
 * compares.
 *
 * The walk returns the nodes whose acceptance it decided, the count dfs
 * returns for the same mask: a subtree accepted whole counts all its
 * nodes, though none of them was offered to the recognizer one by one.
 */
#include <stdlib.h>
#include <string.h>

#include "dfs.h"
#include "trie.h"

/* Subtrees smaller than this get no entry: testing them costs more than
 * walking them.  On the JSON-string body, median of 31 masks: Llama 3
 * 108 us at 12, 111 at 16, 114 at 24, 118 to 155 at 32; Gemma 3 206, 210,
 * 217, 233.  24 is within 7% of 12 with 60% of its entries (Llama 3:
 * 9,202 entries, 0.59 MB; docs/walk-cost.md). */
#define COVER_MIN_SUB 24

/* One large subtree.  64 bytes (7 of them padding), one cache line of an
 * array aligned to 64; the walk reads the entries in order, so a skipped
 * subtree's entries are passed over without touching the node array. */
typedef struct {
    uint64_t word;           /* the node's dfs word */
    uint32_t pos;            /* its index in the dfs node array */
    uint32_t ntop;           /* entries in its subtree, itself included */
    uint32_t tok_lo, tok_hi; /* ids[tok_lo..tok_hi): the tokens below it */
    uint64_t cover[4];       /* edge bytes below it: bit b of cover[b / 64] */
    uint8_t probe;           /* the highest byte of the cover, tested first
                                (but for a utf8 entry) */
    uint8_t utf8;            /* 1: the node ends a whole character, every
                                string below it is a prefix of valid UTF-8
                                (RFC 3629) and the cover holds a byte past
                                0x7F: tested against the state's UTF-8 loop
                                set (loop_sets), which takes whole
                                characters */
} cover_top_t;
_Static_assert(sizeof(cover_top_t) == 64, "one entry, one cache line");

typedef struct {
    trie_dfs_t *dfs;
    cover_top_t *top;
    size_t ntop;
    uint32_t *ids;
    size_t nids;
    /* root_top[r]: the first entry in the subtree of the root's child r
     * (dfs->root[r]), root_top[nroot] = ntop: a refused child of the root
     * is skipped from the dfs root index alone, as dfs does, rather than
     * by a chain of jumps across the entries (each waiting for the last). */
    uint32_t root_top[257];
} cover_t;

/* UTF-8 (RFC 3629) one byte at a time: how many continuation bytes the
 * character under way still needs and the range of the next one; need
 * U8_BAD once the bytes are no prefix of valid UTF-8. */
#define U8_BAD 0xFF
typedef struct {
    uint8_t need, lo, hi;
} u8_state_t;

/* The state after lead byte b (need 0 for ASCII: a character ended). */
static u8_state_t u8_lead(uint8_t b)
{
    if (b < 0x80)
        return (u8_state_t){0, 0, 0};
    if (b >= 0xC2 && b <= 0xDF)
        return (u8_state_t){1, 0x80, 0xBF};
    if (b >= 0xE0 && b <= 0xEF) /* E0: no overlong form; ED: no surrogate */
        return (u8_state_t){2, b == 0xE0 ? 0xA0 : 0x80, b == 0xED ? 0x9F : 0xBF};
    if (b >= 0xF0 && b <= 0xF4) /* F0: no overlong form; F4: to U+10FFFF */
        return (u8_state_t){3, b == 0xF0 ? 0x90 : 0x80, b == 0xF4 ? 0x8F : 0xBF};
    return (u8_state_t){U8_BAD, 0, 0};
}

static u8_state_t u8_step(u8_state_t s, uint8_t b)
{
    if (s.need == U8_BAD)
        return s;
    if (s.need == 0)
        return u8_lead(b);
    if (b < s.lo || b > s.hi)
        return (u8_state_t){U8_BAD, 0, 0};
    return (u8_state_t){(uint8_t)(s.need - 1), 0x80, 0xBF};
}

/* The open nodes along the path while the index is built, by depth. */
typedef struct {
    size_t *top;           /* its entry, or SIZE_MAX for a small subtree */
    uint8_t *byte;
    uint64_t (*acc)[4];    /* the edge bytes below it seen so far */
    u8_state_t *u8;        /* UTF-8 decoding of the path down to it */
    uint8_t *bad;          /* 1: a string below it is no UTF-8 prefix */
} cover_path_t;

/* The node at depth j is complete: its entry takes the cover and the
 * token count, and its parent's cover takes its byte and its cover. */
static void close_node(cover_t *c, cover_path_t *path, uint32_t j, size_t ntok)
{
    if (path->top[j] != SIZE_MAX) {
        cover_top_t *e = &c->top[path->top[j]];
        e->tok_hi = (uint32_t)ntok;
        e->ntop = (uint32_t)(c->ntop - path->top[j]);
        memcpy(e->cover, path->acc[j], sizeof e->cover);
        e->utf8 = path->u8[j].need == 0 && !path->bad[j] &&
                  (e->cover[2] | e->cover[3]);
        for (int w = 3; w >= 0; w--)
            if (e->cover[w]) {
                e->probe = (uint8_t)(64 * w + 63 - __builtin_clzll(e->cover[w]));
                break;
            }
    }
    if (j > 1) {
        for (int w = 0; w < 4; w++)
            path->acc[j - 1][w] |= path->acc[j][w];
        path->acc[j - 1][path->byte[j] >> 6] |= (uint64_t)1 << (path->byte[j] & 63);
        path->bad[j - 1] |= path->bad[j] | (path->u8[j].need == U8_BAD);
    }
}

static void fill_index(cover_t *c, cover_path_t *path)
{
    const trie_dfs_t *t = c->dfs;
    uint32_t open = 0;
    for (size_t p = 0; p < t->n; p++) {
        uint64_t x = t->nodes[p];
        uint32_t k = trie_dfs_depth(x);
        for (; open >= k; open--)
            close_node(c, path, open, c->nids);
        open = k;
        path->byte[k] = trie_dfs_byte(x);
        memset(path->acc[k], 0, sizeof path->acc[k]);
        path->u8[k] = u8_step(path->u8[k - 1], path->byte[k]);
        path->bad[k] = 0;
        if (trie_dfs_id(x) != t->none)
            c->ids[c->nids++] = trie_dfs_id(x);
        path->top[k] = SIZE_MAX;
        if (trie_dfs_sub(x) >= COVER_MIN_SUB) {
            path->top[k] = c->ntop;
            c->top[c->ntop++] = (cover_top_t){.word = x, .pos = (uint32_t)p,
                                              .tok_lo = (uint32_t)c->nids};
        }
    }
    for (; open > 0; open--)
        close_node(c, path, open, c->nids);
    size_t i = 0;
    for (uint32_t r = 0; r < t->nroot; r++) {
        while (i < c->ntop && c->top[i].pos < t->root[r])
            i++;
        c->root_top[r] = (uint32_t)i;
    }
    c->root_top[t->nroot] = (uint32_t)c->ntop;
}

/* Builds c->top and c->ids from c->dfs. */
static int build_index(cover_t *c, tb_err_t *err)
{
    const trie_dfs_t *t = c->dfs;
    if (t->n > UINT32_MAX)
        return tb_fail(err, "%zu nodes, past the limit of %u (32-bit node "
                       "index in the subtree entries)", t->n, UINT32_MAX);
    size_t ntop = 0, ntok = 0;
    for (size_t p = 0; p < t->n; p++) {
        ntop += trie_dfs_sub(t->nodes[p]) >= COVER_MIN_SUB;
        ntok += trie_dfs_id(t->nodes[p]) != t->none;
    }
    size_t depth = (size_t)t->max_len + 1;
    cover_path_t path = {malloc(depth * sizeof *path.top), malloc(depth),
                         malloc(depth * sizeof *path.acc),
                         malloc(depth * sizeof *path.u8), malloc(depth)};
    c->top = aligned_alloc(64, (ntop ? ntop : 1) * sizeof *c->top);
    c->ids = malloc((ntok ? ntok : 1) * sizeof *c->ids);
    int rc = 0;
    if (!path.top || !path.byte || !path.acc || !path.u8 || !path.bad ||
        !c->top || !c->ids)
        rc = tb_fail(err, "out of memory for the index of %zu subtrees and "
                     "%zu tokens", ntop, ntok);
    else {
        path.u8[0] = (u8_state_t){0, 0, 0}; /* the root: no character begun */
        fill_index(c, &path);
    }
    free(path.top);
    free(path.u8);
    free(path.bad);
    free(path.byte);
    free(path.acc);
    return rc;
}

static void cover_free(void *impl)
{
    cover_t *c = impl;
    if (!c)
        return;
    if (c->dfs)
        trie_layout_dfs.free(c->dfs);
    free(c->top);
    free(c->ids);
    free(c);
}

static void *cover_build(const trie_keys_t *k, tb_err_t *err)
{
    cover_t *c = calloc(1, sizeof *c);
    if (!c) {
        tb_fail(err, "out of memory");
        return NULL;
    }
    c->dfs = trie_layout_dfs.build(k, err);
    if (!c->dfs || build_index(c, err)) {
        cover_free(c);
        return NULL;
    }
    return c;
}

static int32_t cover_lookup(const void *impl, const uint8_t *s, size_t n)
{
    return trie_layout_dfs.lookup(((const cover_t *)impl)->dfs, s, n);
}

static size_t cover_prefixes(const void *impl, const uint8_t *s, size_t n,
                             trie_match_t *out, size_t max)
{
    return trie_layout_dfs.prefixes(((const cover_t *)impl)->dfs, s, n, out, max);
}

/* The bytes on which each state seen in this walk stays where it is (a
 * self-loop), by row offset, in a table probed linearly from the row's
 * hash; row 0 (the dead state's, never tested) marks an empty slot.  With
 * more rows than slots, the last slot probed is recomputed for the new row.
 * An entry not computed yet counts as no loop: the set may be smaller than
 * the state's, never larger, and the table's known entries do not change.
 * u8set, computed when a utf8 entry first asks (has_u8): the ASCII bytes of
 * set, every continuation byte (0x80-0xBF), and each lead byte all of
 * whose characters lead from the row back to it (char_loops). */
#define COVER_LOOPS 32
typedef struct {
    uint32_t row[COVER_LOOPS];
    uint8_t has_u8[COVER_LOOPS];
    uint64_t set[COVER_LOOPS][4];
    uint64_t u8set[COVER_LOOPS][4];
} cover_loops_t;

static size_t loop_slot(cover_loops_t *l, const trie_rec_t *rec, uint32_t row)
{
    size_t s = (uint32_t)(row * 2654435761u) >> 27; /* 5 bits: 32 slots */
    for (size_t probe = 0; probe < 4 && l->row[s] && l->row[s] != row; probe++)
        s = (s + 1) % COVER_LOOPS;
    if (l->row[s] != row) {
        const uint32_t *next = rec->tab.table + row;
        const uint8_t *cls = rec->tab.cls;
        uint64_t *set = l->set[s];
        memset(set, 0, sizeof l->set[s]);
        for (unsigned b = 0; b < 256; b++)
            set[b >> 6] |= (uint64_t)(trie_rec_entry(next, cls[b]) == row) << (b & 63);
        l->row[s] = row;
        l->has_u8[s] = 0;
    }
    return s;
}

static const uint64_t *loop_set(cover_loops_t *l, const trie_rec_t *rec, uint32_t row)
{
    return l->set[loop_slot(l, rec, row)];
}

/* Whether every character lead byte b begins (each continuation byte its
 * range allows) leads from row back to row, through no refused or
 * uncomputed entry.  The states along the way are kept as a set of at
 * most 8; more counts as no. */
static int char_loops(const trie_rec_t *rec, uint32_t row, uint8_t b)
{
    const uint32_t *table = rec->tab.table;
    const uint8_t *cls = rec->tab.cls;
    uint32_t cur[8], nxt[8];
    size_t ncur = 1;
    cur[0] = trie_rec_entry(table, row + cls[b]);
    if (cur[0] + 1u < 2u)
        return 0;
    for (u8_state_t u = u8_lead(b); u.need; u = u8_step(u, u.lo)) {
        size_t n = 0;
        for (size_t i = 0; i < ncur; i++)
            for (unsigned c = u.lo; c <= u.hi; c++) {
                if (c > u.lo && cls[c] == cls[c - 1])
                    continue; /* the same column: the same t */
                uint32_t t = trie_rec_entry(table, cur[i] + cls[c]);
                size_t j = 0;
                while (j < n && nxt[j] != t)
                    j++;
                if (t + 1u < 2u || (j == n && n == 8))
                    return 0;
                if (j == n)
                    nxt[n++] = t;
            }
        memcpy(cur, nxt, n * sizeof *cur);
        ncur = n;
    }
    return ncur == 1 && cur[0] == row;
}

static const uint64_t *u8_loop_set(cover_loops_t *l, const trie_rec_t *rec, uint32_t row)
{
    size_t s = loop_slot(l, rec, row);
    if (!l->has_u8[s]) {
        uint64_t *u = l->u8set[s];
        u[0] = l->set[s][0];
        u[1] = l->set[s][1];
        u[2] = ~(uint64_t)0; /* 0x80-0xBF */
        u[3] = 0;
        /* A lead byte in the column of the one before, with the same
         * continuation ranges, has its answer. */
        u8_state_t prev = {U8_BAD, 0, 0};
        uint64_t loops = 0;
        for (unsigned b = 0xC2; b <= 0xF4; b++) {
            u8_state_t lead = u8_lead((uint8_t)b);
            if (rec->tab.cls[b] != rec->tab.cls[b - 1] || lead.need != prev.need ||
                lead.lo != prev.lo || lead.hi != prev.hi)
                loops = (uint64_t)char_loops(rec, row, (uint8_t)b);
            u[b >> 6] |= loops << (b & 63);
            prev = lead;
        }
        l->has_u8[s] = 1;
    }
    return l->u8set[s];
}

static int covered(const uint64_t cover[4], const uint64_t loop[4])
{
    return !((cover[0] & ~loop[0]) | (cover[1] & ~loop[1]) |
             (cover[2] & ~loop[2]) | (cover[3] & ~loop[3]));
}

static void set_ids(uint64_t *words, const uint32_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        words[ids[i] >> 6] |= (uint64_t)1 << (ids[i] & 63);
}

/*
 * The table walk over one child of the root, nodes [p, end) with entries
 * [i, iend), its states from stack[d + 1] on (d: the walk's starting
 * depth; rec->tab.depth moves with every push_byte): the entries in order, the dfs loop over the small subtrees
 * between them.  Per entry: its word's transition from its parent's row
 * (stack slot at its depth - 1, as dfs); refused, the walk skips its
 * subtree and its entries; accepted, its bit and stack slot, then the
 * cover test against the new state's loop set: covered, its tokens' bits
 * and a skip; else into its children.
 */
static void walk_child(const cover_t *c, trie_rec_t *rec, uint64_t *words,
                       size_t p, size_t end, size_t i, size_t iend, size_t d,
                       cover_loops_t *loops, uint64_t *skipped)
{
    const trie_dfs_t *t = c->dfs;
    uint32_t *base = rec->tab.stack + d;
    while (i < iend) {
        const cover_top_t *e = &c->top[i];
        trie_dfs_walk_range(t, rec, words, p, e->pos, base, skipped);
        uint64_t x = e->word;
        size_t k = trie_dfs_depth(x);
        uint32_t next = trie_rec_entry(rec->tab.table, base[k - 1] + rec->tab.cls[trie_dfs_byte(x)]);
        if (next == TRIE_REC_UNKNOWN)
            next = trie_rec_compute(rec, d + k - 1, trie_dfs_byte(x));
        if (!next) {
            *skipped += trie_dfs_sub(x) - 1;
            p = e->pos + trie_dfs_sub(x);
            i += e->ntop;
            continue;
        }
        words[x >> 51] |= (uint64_t)1 << ((x >> 45) & 63);
        base[k] = next;
        /* A plain entry tests its probe byte first: most failing covers
         * fail there, without a loop set (computed once per state and
         * walk, 256 entries).  A utf8 entry tries the loop set (enough
         * under `any`), then the UTF-8 loop set (computed once per state
         * and walk where asked: the characters of 51 lead bytes, 15 us
         * for `any`'s 256 columns). */
        int whole = e->utf8 ? covered(e->cover, loop_set(loops, rec, next)) ||
                                  covered(e->cover, u8_loop_set(loops, rec, next))
                            : trie_rec_entry(rec->tab.table, next + rec->tab.cls[e->probe]) == next &&
                                  covered(e->cover, loop_set(loops, rec, next));
        if (whole) {
            set_ids(words, c->ids + e->tok_lo, e->tok_hi - e->tok_lo);
            p = e->pos + trie_dfs_sub(x);
            i += e->ntop;
        } else {
            p = e->pos + 1;
            i++;
        }
    }
    trie_dfs_walk_range(t, rec, words, p, end, base, skipped);
}

/* The root's children from the dfs root index, each tested from the start
 * row first (a refused one costs its word and no entry), then walked. */
static uint64_t walk_table(const cover_t *c, trie_rec_t *rec, tb_bitset_t *mask)
{
    const trie_dfs_t *t = c->dfs;
    size_t d = rec->tab.depth;
    uint64_t skipped = 0;
    cover_loops_t loops;
    memset(loops.row, 0, sizeof loops.row);
    /* table and cls in locals, reloaded only where they may have moved
     * (a callback): the loop over a narrow mask's refused root children
     * is most of its time. */
    const uint32_t *table = rec->tab.table, row = rec->tab.stack[d];
    const uint8_t *cls = rec->tab.cls;
    for (uint32_t r = 0; r < t->nroot; r++) {
        size_t p = t->root[r];
        uint64_t x = t->root_node[r];
        uint32_t next = trie_rec_entry(table, row + cls[trie_dfs_byte(x)]);
        if (next == TRIE_REC_UNKNOWN) {
            next = trie_rec_compute(rec, d, trie_dfs_byte(x));
            table = rec->tab.table;
            cls = rec->tab.cls;
        }
        if (next) {
            walk_child(c, rec, mask->words, p, p + trie_dfs_sub(x), c->root_top[r],
                       c->root_top[r + 1], d, &loops, &skipped);
            table = rec->tab.table;
            cls = rec->tab.cls;
        } else
            skipped += trie_dfs_sub(x) - 1;
    }
    rec->tab.depth = d;
    return t->n - skipped;
}

static uint64_t cover_walk(const void *impl, trie_rec_t *rec, tb_bitset_t *mask)
{
    const cover_t *c = impl;
    if (trie_rec_inline(rec, c->dfs->max_len))
        return walk_table(c, rec, mask);
    return trie_layout_dfs.walk(c->dfs, rec, mask); /* dfs's callback walk */
}

static size_t cover_nodes(const void *impl)
{
    return ((const cover_t *)impl)->dfs->n;
}

static size_t cover_bytes(const void *impl)
{
    const cover_t *c = impl;
    return sizeof *c + trie_layout_dfs.bytes(c->dfs) + c->ntop * sizeof *c->top +
           c->nids * sizeof *c->ids;
}

static int same_entry(const cover_top_t *a, const cover_top_t *b)
{
    return a->word == b->word && a->pos == b->pos && a->ntop == b->ntop &&
           a->tok_lo == b->tok_lo && a->tok_hi == b->tok_hi &&
           !memcmp(a->cover, b->cover, sizeof a->cover) && a->probe == b->probe &&
           a->utf8 == b->utf8;
}

/* The dfs array's own checks, then the index against one rebuilt from it. */
static int cover_validate(const void *impl, tb_err_t *err)
{
    const cover_t *c = impl;
    if (trie_layout_dfs.validate(c->dfs, err))
        return -1;
    cover_t again = {.dfs = c->dfs};
    int rc = build_index(&again, err);
    if (!rc && (again.ntop != c->ntop || again.nids != c->nids))
        rc = tb_fail(err, "index: %zu subtree entries and %zu token ids, the "
                     "nodes make %zu and %zu", c->ntop, c->nids, again.ntop,
                     again.nids);
    for (size_t i = 0; !rc && i < c->ntop; i++)
        if (!same_entry(&again.top[i], &c->top[i]))
            rc = tb_fail(err, "index: subtree entry %zu (node %u) differs "
                         "from the nodes'", i, c->top[i].pos);
    for (size_t i = 0; !rc && i < c->nids; i++)
        if (again.ids[i] != c->ids[i])
            rc = tb_fail(err, "index: token %zu in depth-first order is id %u, "
                         "the nodes say %u", i, c->ids[i], again.ids[i]);
    free(again.top);
    free(again.ids);
    return rc;
}

const trie_layout_t trie_layout_cover = {
    .name = "cover",
    .about = "dfs nodes plus the byte covers of large subtrees: a subtree "
             "whose bytes (or UTF-8 characters) all loop on the walk's state "
             "is accepted whole",
    .build = cover_build,
    .free = cover_free,
    .lookup = cover_lookup,
    .prefixes = cover_prefixes,
    .walk = cover_walk,
    .nodes = cover_nodes,
    .bytes = cover_bytes,
    .validate = cover_validate,
};
