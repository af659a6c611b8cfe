/* da: the trie layouts' side of the double array (see da.h): building
 * from trie keys, the child chain, validation and the mask walk. */
#include "da.h"

#include <stdlib.h>
#include <string.h>

/* ---- building ---------------------------------------------------------- */

/* What base/da refuses, checked here first so that the message names the
 * token id (base/da knows only values, which for xcda are pool offsets). */
static int check_keys(const trie_key_t *keys, size_t n, const uint32_t *values,
                      int flags, tb_err_t *err)
{
    for (size_t i = 0; i < n; i++)
        if (values[i] & TB_DA_LEAF_BIT)
            return tb_fail(err, "token id %u: value %u does not fit 31 bits",
                           keys[i].id, values[i]);
    if (flags & TB_DA_NUL_FAR)
        return 0;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *nul = memchr(keys[i].s, 0, keys[i].len);
        if (nul)
            return tb_fail(err, "token id %u has a NUL byte at offset %u, which "
                           "this double array cannot hold", keys[i].id,
                           (unsigned)(nul - keys[i].s));
    }
    return 0;
}

int trie_da_build(trie_da_t *da, const trie_key_t *keys, size_t n,
                  const uint32_t *values, int flags, tb_err_t *err)
{
    memset(da, 0, sizeof *da);
    if (check_keys(keys, n, values, flags, err))
        return -1;
    tb_da_key_t *k = malloc(sizeof *k * (n ? n : 1));
    if (!k)
        return tb_fail(err, "out of memory for %zu keys", n);
    for (size_t i = 0; i < n; i++)
        k[i] = (tb_da_key_t){keys[i].s, keys[i].len, values[i]};
    int rc = tb_da_build(&da->a, k, n, flags, err);
    free(k);
    return rc;
}

void trie_da_free(trie_da_t *da)
{
    tb_da_free(&da->a);
    free(da->chain);
    memset(da, 0, sizeof *da);
}

/* ---- the child chain ------------------------------------------------- */

/* Built from the units alone, after the fact, so that an array that is only
 * looked up carries none (da.h).  Every unit with bit 31 clear but the root
 * is a child, and its label gives its base (slot ^ label); so no walk from
 * the root, and no scan of 256 slots per node (which took twice the build's
 * time on Llama 3), but two passes over the array:
 *   1. per block (the children of a base other than its NUL child share the
 *      base's block), the block's children sorted by label, then linked in
 *      that order to the previous child of the same base, the first one
 *      noted as its base's first non-NUL label;
 *   2. per node, the first label goes into the node's entry, unless a NUL
 *      child (at base ^ TB_DA_NUL_SLOT) comes first: then the NUL child
 *      links on to that label.
 * A child is recognized by the label check that trie_da_walk's probes
 * make, so the chain lists what they find. */
int trie_da_build_chain(trie_da_t *da, tb_err_t *err)
{
    if (da->chain)
        return 0;
    size_t n = da->a.n;
    const uint32_t *units = da->a.units;
    uint16_t *chain = calloc(n ? n : 1, sizeof *chain);
    uint8_t *first = calloc(n ? n : 1, 1); /* per base; 0: no such child */
    if (!chain || !first) {
        free(chain);
        free(first);
        return tb_fail(err, "out of memory for the child chain of %zu units", n);
    }
    for (size_t blk = 0; blk < n; blk += 256) {
        size_t end = blk + 256 < n ? blk + 256 : n;
        uint32_t at[257] = {0}, sorted[256], last[256];
        for (size_t q = blk; q < end; q++) /* at[c + 1]: children labelled c */
            if (q && !(units[q] & TB_DA_LEAF_BIT) && (units[q] & 0xFFu))
                at[(units[q] & 0xFFu) + 1]++;
        for (int c = 1; c <= 256; c++) /* at[c]: where label c's start */
            at[c] += at[c - 1];
        size_t m = at[256];
        for (size_t q = blk; q < end; q++)
            if (q && !(units[q] & TB_DA_LEAF_BIT) && (units[q] & 0xFFu))
                sorted[at[units[q] & 0xFFu]++] = (uint32_t)q;
        memset(last, 0xFF, sizeof last); /* by the base's low byte */
        for (size_t i = 0; i < m; i++) {
            uint32_t q = sorted[i], c = units[q] & 0xFFu, base = q ^ c;
            if (base >= n) /* only in an array of no whole blocks */
                continue;
            uint32_t *prev = &last[base & 0xFFu];
            if (*prev == UINT32_MAX)
                first[base] = (uint8_t)c;
            else /* the next sibling's label; the last child's stays 0 */
                chain[*prev] = (uint16_t)(chain[*prev] | c << 8);
            *prev = q;
        }
    }
    for (size_t p = 0; p < n; p++) {
        uint32_t u = units[p];
        if (u & TB_DA_LEAF_BIT)
            continue;
        uint32_t base = (uint32_t)p ^ tb_da_offset(u);
        if (base >= n)
            continue;
        uint32_t nul = tb_da_slot(&da->a, base, 0);
        if (nul < n && tb_da_label(units[nul]) == 0) /* first label 0 */
            chain[nul] = (uint16_t)(chain[nul] | first[base] << 8);
        else
            chain[p] = (uint16_t)(chain[p] | first[base]);
    }
    free(first);
    da->chain = chain;
    da->root_kids = 0;
    for (unsigned c = 0; c < 256; c++) {
        uint32_t p = tb_da_slot(&da->a, tb_da_offset(units[0]), (uint8_t)c);
        da->root_kids += p < n && tb_da_label(units[p]) == c;
    }
    return 0;
}

int trie_da_prepare_walk(trie_da_t *da, trie_da_frame_t **frames, tb_err_t *err)
{
    if (!*frames && !(*frames = malloc(sizeof **frames * ((size_t)da->a.max_len + 1))))
        return tb_fail(err, "out of memory for %u walk frames", da->a.max_len + 1);
    return trie_da_build_chain(da, err);
}

size_t trie_da_walk_bytes(const trie_da_t *da, const trie_da_frame_t *frames)
{
    size_t bytes = 0;
    if (da->chain)
        bytes += da->a.n * sizeof *da->chain;
    if (frames)
        bytes += sizeof *frames * ((size_t)da->a.max_len + 1);
    return bytes;
}

/* ---- validation -------------------------------------------------------- */

typedef struct {
    const trie_da_t *da;
    const uint32_t *units;
    size_t n;
    uint32_t value_limit;
    int shared;
    uint8_t *seen;
    uint32_t *stack;
    size_t top, values;
} checker_t;

static int check_leaf(checker_t *c, uint32_t node, uint32_t base, tb_err_t *err)
{
    if (base >= c->n)
        return tb_fail(err, "unit %u: its value unit %u is past the end (%zu "
                       "units)", node, base, c->n);
    uint32_t u = c->units[base];
    if (!(u & TB_DA_LEAF_BIT))
        return tb_fail(err, "unit %u: its value unit %u is no leaf", node, base);
    if (tb_da_value(u) >= c->value_limit)
        return tb_fail(err, "unit %u: value %u is past the limit %u", base,
                       tb_da_value(u), c->value_limit);
    c->values++;
    return 0;
}

static int check_unit(checker_t *c, uint32_t node, tb_err_t *err)
{
    uint32_t u = c->units[node];
    uint32_t base = node ^ tb_da_offset(u);
    size_t kids = 0;
    uint32_t prev = UINT32_MAX; /* the previous child, for the chain */
    const uint16_t *chain = c->da->chain;
    if (tb_da_has_leaf(u) && check_leaf(c, node, base, err))
        return -1;
    for (uint32_t l = 0; l < 256; l++) {
        uint32_t p = tb_da_slot(&c->da->a, base, (uint8_t)l);
        if (p >= c->n || tb_da_label(c->units[p]) != l)
            continue;
        kids++;
        if (chain && prev == UINT32_MAX && (chain[node] & 0xFFu) != l)
            return tb_fail(err, "unit %u: its chain starts at label %u, its "
                           "first child has label %u", node, chain[node] & 0xFFu, l);
        if (chain && prev != UINT32_MAX && chain[prev] >> 8 != l)
            return tb_fail(err, "unit %u: its chain goes on with label %u, the "
                           "next child has label %u", prev, chain[prev] >> 8, l);
        prev = p;
        if (c->seen[p] && c->shared)
            continue;
        if (c->seen[p])
            return tb_fail(err, "unit %u is reached twice (again from unit %u)",
                           p, node);
        c->seen[p] = 1;
        c->stack[c->top++] = p;
    }
    if (!kids && !tb_da_has_leaf(u) && node != 0)
        return tb_fail(err, "unit %u has neither children nor a value", node);
    if (chain && prev != UINT32_MAX && chain[prev] >> 8)
        return tb_fail(err, "unit %u: the last child has a next sibling %u in "
                       "its chain", prev, chain[prev] >> 8);
    return 0;
}

int trie_da_validate(const trie_da_t *da, size_t nkeys, uint32_t value_limit,
                     int shared, tb_err_t *err)
{
    size_t n = da->a.n;
    if (n == 0)
        return tb_fail(err, "the double array has no units");
    checker_t c = {.da = da, .units = da->a.units, .n = n,
                   .value_limit = value_limit,
                   .shared = shared,
                   .seen = calloc(n, 1), .stack = malloc(sizeof(uint32_t) * n)};
    int rc = c.seen && c.stack ? 0 : tb_fail(err, "out of memory");
    if (!rc) {
        c.seen[0] = 1;
        c.stack[c.top++] = 0;
    }
    while (!rc && c.top > 0)
        rc = check_unit(&c, c.stack[--c.top], err);
    if (!rc && nkeys != (size_t)-1 && c.values != nkeys)
        rc = tb_fail(err, "%zu values are reachable, %zu keys were built",
                     c.values, nkeys);
    free(c.seen);
    free(c.stack);
    return rc;
}

/* ---- reading ----------------------------------------------------------- */

/* From this many allowed bytes on, a node with a chain lists its children
 * along it instead of probing each allowed label: most nodes have a few
 * children, so probing 256 labels under a permissive recognizer cost ~100
 * times a flat-trie step, while the chain costs one read per child. */
#define CHAIN_FROM 8

/* Whether the set has CHAIN_FROM bits or more.  A full popcount is a
 * libgcc call per word where the target has no popcnt instruction, and it
 * cost more than the rest of a node's work; so first the OR of the words
 * (never more bits than the set) loses its lowest bits one by one, which
 * settles the common case of a permissive recognizer in a few operations,
 * and only a sparse set is counted word by word. */
static int chain_pays(const uint64_t set[4])
{
    uint64_t x = set[0] | set[1] | set[2] | set[3];
    for (int i = 1; i < CHAIN_FROM; i++)
        x &= x - 1;
    if (x)
        return 1;
    int n = CHAIN_FROM;
    for (int w = 0; w < 4; w++)
        for (uint64_t bits = set[w]; bits; bits &= bits - 1)
            if (--n == 0)
                return 1;
    return 0;
}

static void enter(const trie_da_t *da, trie_da_frame_t *f, uint32_t node,
                  uint32_t base, trie_rec_t *rec)
{
    f->node = node;
    f->base = base;
    f->next = 0;
    f->chained = 0;
    f->esc = 0;
    if (rec->allowed_bytes && !da->a.shifted) /* a set of bytes, not of labels */
        rec->allowed_bytes(rec, f->allowed);
    else
        memset(f->allowed, 0xFF, sizeof f->allowed);
    if (!da->chain || (!da->a.shifted && !chain_pays(f->allowed)))
        return;
    f->chained = 1;
    /* A first label 0 is also what a node without children holds: the
     * probe tells them apart. */
    uint32_t c = da->chain[node] & 0xFFu;
    uint32_t p = tb_da_slot(&da->a, base, (uint8_t)c);
    f->next = p < da->a.n && tb_da_label(da->a.units[p]) == c ? c : 256;
}

/* The next allowed label from f->next on that has a child, or -1; moves
 * f->next past it. */
static int next_probed(const trie_da_t *da, trie_da_frame_t *f)
{
    for (uint32_t w = f->next >> 6; w < 4; w++) {
        uint64_t bits = f->allowed[w];
        if (w == f->next >> 6)
            bits &= ~0ull << (f->next & 63);
        for (; bits; bits &= bits - 1) {
            uint32_t c = w * 64 + (uint32_t)__builtin_ctzll(bits);
            uint32_t p = tb_da_slot(&da->a, f->base, (uint8_t)c);
            if (p < da->a.n && tb_da_label(da->a.units[p]) == c) {
                f->next = c + 1;
                return (int)c;
            }
        }
    }
    f->next = 256;
    return -1;
}

/* The next child along the chain that the recognizer allows, or -1. */
static int next_chained(const trie_da_t *da, trie_da_frame_t *f)
{
    while (f->next < 256) {
        uint32_t c = f->next;
        uint32_t sib = da->chain[tb_da_slot(&da->a, f->base, (uint8_t)c)] >> 8;
        f->next = sib ? sib : 256;
        if ((f->allowed[c >> 6] >> (c & 63)) & 1)
            return (int)c;
    }
    return -1;
}

/* ---- the walk over a recognizer's table --------------------------------- */

/*
 * With a table (trie_rec_table_t) the walk runs the transitions itself and
 * follows the chain everywhere but, for a narrow recognizer, at the root:
 * there it probes the allowed bytes when they are fewer than the root's
 * children (digits: 10 probes instead of 246 children), which needs the
 * recognizer's allowed_bytes once per walk.  Below the root a node has a
 * few children, and the chain lists them at one read each.
 */
static void enter_root(const trie_da_t *da, trie_da_frame_t *f, trie_rec_t *rec)
{
    f->node = 0;
    f->base = tb_da_offset(da->a.units[0]);
    f->esc = 0;
    f->chained = 1;
    uint32_t c = da->chain[0] & 0xFFu, p = tb_da_slot(&da->a, f->base, (uint8_t)c);
    f->next = (uint16_t)(p < da->a.n && tb_da_label(da->a.units[p]) == c ? c : 256);
    if (da->a.shifted || !rec->allowed_bytes)
        return;
    rec->allowed_bytes(rec, f->allowed);
    uint32_t count = 0;
    for (int w = 0; w < 4; w++)
        count += (uint32_t)__builtin_popcountll(f->allowed[w]);
    if (count < da->root_kids) {
        f->chained = 0;
        f->next = 0;
    }
}

/* The byte a label of a shifted array's frame f stands for (TB_DA_ESC
 * outside an escape node is no byte: the caller enters the escape node). */
static inline uint8_t unshift(const trie_da_frame_t *f, int c)
{
    return (uint8_t)(f->esc ? c + 0xFD : c - 1);
}

static inline int is_escape(const trie_da_frame_t *f, int c)
{
    return c == TB_DA_ESC && !f->esc;
}

/* The frame of the node `child` (chain entry e, children at base) above
 * frame f: its first child's label, or 256 if it has none (a first label
 * of 0 is also what a node without children holds: the probe tells them
 * apart).  Returns whether it has children.  Branch free: the probe reads
 * unit 0 (never a child) when the slot is out of range. */
static inline int enter_child(const trie_da_t *da, trie_da_frame_t *f, uint32_t base,
                              uint16_t e)
{
    uint32_t first = e & 0xFFu;
    uint32_t g = base ^ tb_da_xor_of[first]; /* a NUL past this array: range, label */
    int in = g < da->a.n;
    int kids = in & (tb_da_label(da->a.units[in ? g : 0]) == first) & (g != 0);
    f->base = base;
    f->next = (uint16_t)(kids ? first : 256);
    f->esc = 0;
    return kids;
}

/* One child offered (label c of frame fr, chain entry e) at stack slot
 * top: its transition; if accepted, its value's mask bit (the scratch bit
 * for a node without a value, as in dfs: no branch on it) and the frame
 * above.  Returns how far the walk goes up: 1 if the child has children
 * and was accepted, else 0.  *visited counts the child unless it is an
 * escape node. */
static inline __attribute__((always_inline)) size_t
offer(const trie_da_t *da, trie_da_frame_t *f, size_t top, int c, uint32_t child, uint16_t e,
      trie_rec_t *rec, uint32_t *stack, size_t d0, uint64_t *words, uint32_t scratch,
      uint64_t *visited, const int shifted)
{
    uint32_t u = da->a.units[child], base = child ^ tb_da_offset(u);
    uint8_t b = (uint8_t)c;
    if (shifted) {
        if (is_escape(&f[top], c)) {
            stack[top + 1] = stack[top];
            enter_child(da, &f[top + 1], base, e);
            f[top + 1].esc = 1;
            return 1;
        }
        b = unshift(&f[top], c);
    }
    ++*visited;
    uint32_t next = trie_rec_entry(rec->tab.table, stack[top] + rec->tab.cls[b]);
    if (__builtin_expect(next + 1u < 2u, 0)) {
        if (next == TRIE_REC_UNKNOWN)
            next = trie_rec_compute(rec, d0 + top, b);
        if (!next)
            return 0;
    }
    uint32_t v = da->a.units[base];
    uint32_t id = tb_da_has_leaf(u) ? tb_da_value(v) : scratch;
    words[id >> 6] |= (uint64_t)1 << (id & 63);
    stack[top + 1] = next;
    return (size_t)enter_child(da, &f[top + 1], base, e);
}

/*
 * Per child offered: its chain entry (next sibling, first child), its
 * unit, its label's class and transition entry; if accepted, its value
 * unit (read whatever the leaf bit says), the mask word, the stack slot
 * and the frame above, which the walk enters only if the node has
 * children (top += kids: no branch on leaf or not).  What is left to
 * predict is the transition test and the end of a sibling list.  The
 * root's children come first, in their own loop (probed or chained, see
 * enter_root), each accepted one with children walked along the chain
 * from frame 1 down to it again.  Nodes offered: each probe that found a
 * child and each child along a chain.  With `shifted` (a constant in each
 * instance) labels are decoded first, and an escape node is entered with
 * its parent's state and offers nothing itself: its frame takes a stack
 * slot (a copy of the parent's row), so frames and stack slots stay one to
 * one and trie_rec_inline is asked about the encoded depth.
 */
static inline __attribute__((always_inline)) uint64_t
walk_table(const trie_da_t *da, trie_da_frame_t *f, trie_rec_t *rec, tb_bitset_t *mask,
           uint32_t scratch, const int shifted)
{
    size_t d0 = rec->tab.depth;
    uint32_t *stack = rec->tab.stack + d0;
    const uint16_t *chain = da->chain;
    uint64_t *words = mask->words, visited = 0;
    enter_root(da, &f[0], rec);
    for (;;) {
        int c = f[0].chained ? (f[0].next < 256 ? f[0].next : -1) : next_probed(da, &f[0]);
        if (c < 0)
            break;
        uint32_t child = tb_da_slot(&da->a, f[0].base, (uint8_t)c);
        uint16_t e = chain[child];
        if (f[0].chained)
            f[0].next = (uint16_t)(e >> 8 ? e >> 8 : 256);
        size_t top = offer(da, f, 0, c, child, e, rec, stack, d0, words, scratch, &visited,
                           shifted);
        while (top) {
            trie_da_frame_t *fr = &f[top];
            if (fr->next >= 256) {
                top--;
                continue;
            }
            c = fr->next;
            child = fr->base ^ tb_da_xor_of[c];
            e = chain[child];
            fr->next = (uint16_t)(e >> 8 ? e >> 8 : 256);
            top += offer(da, f, top, c, child, e, rec, stack, d0, words, scratch, &visited,
                         shifted);
        }
    }
    rec->tab.depth = d0;
    return visited;
}

/* The walk through the recognizer's callbacks; an escape node of a
 * shifted array pushes nothing, so leaving it pops nothing. */
static inline __attribute__((always_inline)) uint64_t
walk_calls(const trie_da_t *da, trie_da_frame_t *f, trie_rec_t *rec, tb_bitset_t *mask,
           const int shifted)
{
    size_t top = 0;
    uint64_t visited = 0;
    enter(da, &f[0], 0, tb_da_offset(da->a.units[0]), rec);
    for (;;) {
        int c = f[top].chained ? next_chained(da, &f[top])
                               : next_probed(da, &f[top]);
        if (c < 0) {
            if (top == 0)
                break;
            if (!f[top].esc)
                rec->pop_bytes(rec, 1);
            top--;
            continue;
        }
        uint32_t node = tb_da_slot(&da->a, f[top].base, (uint8_t)c);
        uint8_t b = (uint8_t)c;
        if (shifted) {
            if (is_escape(&f[top], c)) {
                enter(da, &f[top + 1], node, node ^ tb_da_offset(da->a.units[node]), rec);
                f[++top].esc = 1;
                continue;
            }
            b = unshift(&f[top], c);
        }
        visited++;
        if (!rec->push_byte(rec, b))
            continue;
        uint32_t u = da->a.units[node];
        int64_t v = tb_da_value_of(&da->a, node, u);
        if (v >= 0)
            tb_bitset_set(mask, (size_t)v);
        enter(da, &f[top + 1], node, node ^ tb_da_offset(u), rec);
        top++;
    }
    return visited;
}

uint64_t trie_da_walk(const trie_da_t *da, trie_da_frame_t *f, trie_rec_t *rec,
                      tb_bitset_t *mask, uint32_t scratch)
{
    if (trie_rec_inline(rec, da->a.max_len) && da->chain)
        return da->a.shifted ? walk_table(da, f, rec, mask, scratch, 1)
                             : walk_table(da, f, rec, mask, scratch, 0);
    return da->a.shifted ? walk_calls(da, f, rec, mask, 1) : walk_calls(da, f, rec, mask, 0);
}
