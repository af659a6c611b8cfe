/* da: building and checking darts-clone double arrays (see da.h). */
#include "da.h"

#include <stdlib.h>
#include <string.h>

#define BLOCK 256u
/* Blocks whose free units are still offered to new nodes; older blocks are
 * closed so that the search for a base stays short (darts-clone keeps a
 * similar window). */
#define OPEN_BLOCKS 16u
/* Offsets below 2^21 are stored as they are, larger ones need their low 8
 * bits clear and must stay below 2^29 (the darts-clone encoding). */
#define OFFSET_DIRECT (1u << 21)
#define OFFSET_MAX (1u << 29)

typedef struct {
    trie_da_t *da;
    size_t cap;
    uint8_t *used, *used_base;
    uint8_t *in_list;     /* 1 while a unit is on the free list */
    int32_t *next, *prev; /* free list over the open blocks, -1 ends it */
    int32_t head, tail;
    size_t open_from;     /* first open block */
} builder_t;

/* One pending node: its unit and the keys [lo, hi) that pass through it,
 * all sharing their first `depth` bytes. */
typedef struct {
    uint32_t node;
    size_t lo, hi;
    uint32_t depth;
} frame_t;

static void unlink_free(builder_t *b, int32_t p)
{
    if (b->prev[p] >= 0)
        b->next[b->prev[p]] = b->next[p];
    else
        b->head = b->next[p];
    if (b->next[p] >= 0)
        b->prev[b->next[p]] = b->prev[p];
    else
        b->tail = b->prev[p];
    b->prev[p] = b->next[p] = -1;
    b->in_list[p] = 0;
}

static void link_free(builder_t *b, int32_t p)
{
    b->prev[p] = b->tail;
    b->next[p] = -1;
    if (b->tail >= 0)
        b->next[b->tail] = p;
    else
        b->head = p;
    b->tail = p;
    b->in_list[p] = 1;
}

static int grow(builder_t *b, size_t need)
{
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? 2 * b->cap : 4 * BLOCK;
    while (cap < need)
        cap *= 2;
    uint32_t *units = realloc(b->da->units, cap * sizeof *units);
    if (units)
        b->da->units = units;
    uint8_t *used = realloc(b->used, cap), *used_base = realloc(b->used_base, cap);
    if (used)
        b->used = used;
    if (used_base)
        b->used_base = used_base;
    int32_t *next = realloc(b->next, cap * sizeof *next);
    if (next)
        b->next = next;
    int32_t *prev = realloc(b->prev, cap * sizeof *prev);
    if (prev)
        b->prev = prev;
    uint8_t *in_list = realloc(b->in_list, cap);
    if (in_list)
        b->in_list = in_list;
    if (!units || !used || !used_base || !next || !prev || !in_list)
        return -1;
    b->cap = cap;
    return 0;
}

/* Appends a block of free units, closing the oldest open block if there are
 * too many: its free units stay free for good. */
static int add_block(builder_t *b, tb_err_t *err)
{
    size_t start = b->da->n;
    if (start + BLOCK > OFFSET_MAX || grow(b, start + BLOCK))
        return tb_fail(err, "double array of %zu units: out of memory or past "
                       "the %u units its offsets can address", start + BLOCK,
                       OFFSET_MAX);
    for (size_t p = start; p < start + BLOCK; p++) {
        b->da->units[p] = TRIE_DA_FREE;
        b->used[p] = b->used_base[p] = 0;
        link_free(b, (int32_t)p);
    }
    b->da->n += BLOCK;
    if (b->da->n / BLOCK - b->open_from > OPEN_BLOCKS) {
        for (size_t p = b->open_from * BLOCK; p < (b->open_from + 1) * BLOCK; p++)
            if (!b->used[p])
                unlink_free(b, (int32_t)p);
        b->open_from++;
    }
    return 0;
}

static int encodable(uint32_t offset)
{
    return offset < OFFSET_DIRECT || ((offset & 0xFF) == 0 && offset < OFFSET_MAX);
}

/* Bases 0 and 0x100 stay unused: a probe from them for byte 0 would land
 * on the root, whose label bits are 0. */
static int base_fits(const builder_t *b, uint32_t node, uint32_t base,
                     const uint16_t *labels, size_t nl)
{
    size_t n = b->da->n;
    if (base == 0 || base == TRIE_DA_NUL_SLOT ||
        (base < n && b->used_base[base]) || !encodable(node ^ base))
        return 0;
    for (size_t i = 0; i < nl; i++) {
        uint32_t p = base ^ labels[i];
        if (p < n && b->used[p])
            return 0;
        if (labels[i] == TRIE_DA_NUL_SLOT && p < n && b->used_base[p])
            return 0;
    }
    return 1;
}

/* A base for the children `labels` of `node`: the first fitting one among
 * the open blocks' free units, else one in a new block. */
static int find_base(builder_t *b, uint32_t node, const uint16_t *labels,
                     size_t nl, uint32_t *base, tb_err_t *err)
{
    for (int32_t f = b->head; f >= 0; f = b->next[f]) {
        *base = (uint32_t)f ^ labels[0];
        if (base_fits(b, node, *base, labels, nl))
            return 0;
    }
    /* A fresh block: every base in it fits unless reserved or too far
     * (then the one with node's low byte encodes), or unless its NUL slot
     * falls in the full block before it: then the next block is fresh. */
    for (int tries = 0; tries < 2; tries++) {
        uint32_t start = (uint32_t)b->da->n;
        if (add_block(b, err))
            return -1;
        for (uint32_t x = 0; x < 256; x++) {
            *base = start | (x ^ (node & 0xFF));
            if (base_fits(b, node, *base, labels, nl))
                return 0;
        }
    }
    return tb_fail(err, "no encodable offset for unit %u", node);
}

static void set_offset(uint32_t *u, uint32_t offset)
{
    *u &= TRIE_DA_LEAF_BIT | (1u << 8) | 0xFFu;
    if (offset < OFFSET_DIRECT)
        *u |= offset << 10;
    else
        *u |= (offset << 2) | (1u << 9);
}

static void take(builder_t *b, uint32_t p)
{
    b->used[p] = 1;
    if (b->in_list[p]) /* not if its block was closed meanwhile */
        unlink_free(b, (int32_t)p);
}

/* Collects the labels below frame f: 0 (the value unit) first if a key
 * ends there, then the distinct next bytes, a NUL byte as TRIE_DA_NUL_SLOT. */
static int labels_of(const trie_da_t *da, const trie_key_t *keys,
                     const frame_t *f, uint16_t *labels, size_t *nl, int *leaf,
                     tb_err_t *err)
{
    size_t i = f->lo;
    *nl = 0;
    *leaf = keys[i].len == f->depth;
    if (*leaf) {
        labels[(*nl)++] = 0;
        i++;
    }
    for (; i < f->hi; i++) {
        uint16_t c = keys[i].s[f->depth];
        if (c == 0 && !da->nul_far)
            return tb_fail(err, "token id %u has a NUL byte at offset %u, which "
                           "this double array cannot hold", keys[i].id, f->depth);
        if (c == 0)
            c = TRIE_DA_NUL_SLOT;
        if (*nl == (size_t)*leaf || labels[*nl - 1] != c)
            labels[(*nl)++] = c;
    }
    return 0;
}

/* Adds blocks until base itself (whose used_base mark must not be lost to a
 * later block) and every child slot lie inside the array; the NUL slot and
 * the base may sit a block apart. */
static int reach(builder_t *b, uint32_t base, const uint16_t *labels, size_t nl,
                 tb_err_t *err)
{
    while (base >= b->da->n)
        if (add_block(b, err))
            return -1;
    for (size_t i = 0; i < nl; i++)
        while ((base ^ labels[i]) >= b->da->n)
            if (add_block(b, err))
                return -1;
    return 0;
}

/* Places the children of one node and queues the inner ones. */
static int place(builder_t *b, const trie_key_t *keys, const uint32_t *values,
                 const frame_t *f, frame_t *stack, size_t *top, tb_err_t *err)
{
    uint16_t labels[257];
    size_t nl;
    int leaf;
    uint32_t base;
    if (labels_of(b->da, keys, f, labels, &nl, &leaf, err) ||
        find_base(b, f->node, labels, nl, &base, err) ||
        reach(b, base, labels, nl, err))
        return -1;
    uint32_t *units = b->da->units;
    b->used_base[base] = 1;
    set_offset(&units[f->node], f->node ^ base);
    if (leaf) {
        units[f->node] |= 1u << 8;
        take(b, base);
        units[base] = TRIE_DA_LEAF_BIT | values[f->lo];
    }
    size_t i = f->lo + (size_t)leaf;
    for (size_t l = (size_t)leaf; l < nl; l++) {
        uint32_t c = base ^ labels[l];
        uint8_t byte = (uint8_t)labels[l];
        take(b, c);
        if (labels[l] == TRIE_DA_NUL_SLOT)
            b->used_base[c] = 1; /* so no node probes it as its value unit */
        units[c] = byte;
        size_t j = i;
        while (j < f->hi && keys[j].s[f->depth] == byte)
            j++;
        stack[(*top)++] = (frame_t){.node = c, .lo = i, .hi = j,
                                    .depth = f->depth + 1};
        i = j;
    }
    return 0;
}

static int check_values(const trie_key_t *keys, size_t n, const uint32_t *values,
                        tb_err_t *err)
{
    for (size_t i = 0; i < n; i++)
        if (values[i] & TRIE_DA_LEAF_BIT)
            return tb_fail(err, "token id %u: value %u does not fit 31 bits",
                           keys[i].id, values[i]);
    return 0;
}

static int run(builder_t *b, const trie_key_t *keys, size_t n,
               const uint32_t *values, tb_err_t *err)
{
    /* Each queued frame is a distinct trie node: the key bytes bound them. */
    size_t room = 1;
    for (size_t i = 0; i < n; i++)
        room += keys[i].len;
    frame_t *stack = malloc(sizeof *stack * room);
    if (!stack)
        return tb_fail(err, "out of memory for %zu pending nodes", room);
    if (add_block(b, err)) {
        free(stack);
        return -1;
    }
    take(b, 0); /* the root */
    b->da->units[0] = 0;
    size_t top = 0;
    if (n)
        stack[top++] = (frame_t){.node = 0, .lo = 0, .hi = n, .depth = 0};
    int rc = 0;
    while (!rc && top > 0) {
        frame_t f = stack[--top];
        rc = place(b, keys, values, &f, stack, &top, err);
    }
    free(stack);
    return rc;
}

int trie_da_build(trie_da_t *da, const trie_key_t *keys, size_t n,
                  const uint32_t *values, int flags, tb_err_t *err)
{
    memset(da, 0, sizeof *da);
    da->nul_far = (flags & TRIE_DA_NUL_FAR) != 0;
    if (check_values(keys, n, values, err))
        return -1;
    builder_t b = {.da = da, .head = -1, .tail = -1};
    int rc = run(&b, keys, n, values, err);
    /* An even number of blocks puts every NUL slot (base ^ 0x100, the
     * neighbouring block) inside the array, so the direct readers need no
     * range check. */
    if (!rc && da->nul_far && (da->n / BLOCK) % 2)
        rc = add_block(&b, err);
    free(b.used);
    free(b.used_base);
    free(b.next);
    free(b.prev);
    free(b.in_list);
    if (rc) {
        trie_da_free(da);
        return -1;
    }
    da->nkeys = n;
    /* Offsets are XORs of two unit indexes, so below 2^21 units none is
     * extended. */
    da->direct = da->nul_far && da->n <= OFFSET_DIRECT && (da->n / BLOCK) % 2 == 0;
    for (size_t i = 0; i < n; i++)
        if (keys[i].len > da->max_len)
            da->max_len = keys[i].len;
    return 0;
}

void trie_da_free(trie_da_t *da)
{
    free(da->units);
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
 *      child (at base ^ TRIE_DA_NUL_SLOT) comes first: then the NUL child
 *      links on to that label.
 * A child is recognized by the label check that trie_da_walk's probes
 * make, so the chain lists what they find. */
int trie_da_build_chain(trie_da_t *da, tb_err_t *err)
{
    if (da->chain)
        return 0;
    size_t n = da->n;
    const uint32_t *units = da->units;
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
            if (q && !(units[q] & TRIE_DA_LEAF_BIT) && (units[q] & 0xFFu))
                at[(units[q] & 0xFFu) + 1]++;
        for (int c = 1; c <= 256; c++) /* at[c]: where label c's start */
            at[c] += at[c - 1];
        size_t m = at[256];
        for (size_t q = blk; q < end; q++)
            if (q && !(units[q] & TRIE_DA_LEAF_BIT) && (units[q] & 0xFFu))
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
        if (u & TRIE_DA_LEAF_BIT)
            continue;
        uint32_t base = (uint32_t)p ^ trie_da_offset(u);
        if (base >= n)
            continue;
        uint32_t nul = trie_da_slot(da, base, 0);
        if (nul < n && trie_da_label(units[nul]) == 0) /* first label 0 */
            chain[nul] = (uint16_t)(chain[nul] | first[base] << 8);
        else
            chain[p] = (uint16_t)(chain[p] | first[base]);
    }
    free(first);
    da->chain = chain;
    da->root_kids = 0;
    for (unsigned c = 0; c < 256; c++) {
        uint32_t p = trie_da_slot(da, trie_da_offset(units[0]), (uint8_t)c);
        da->root_kids += p < n && trie_da_label(units[p]) == c;
    }
    return 0;
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
    if (!(u & TRIE_DA_LEAF_BIT))
        return tb_fail(err, "unit %u: its value unit %u is no leaf", node, base);
    if (trie_da_value(u) >= c->value_limit)
        return tb_fail(err, "unit %u: value %u is past the limit %u", base,
                       trie_da_value(u), c->value_limit);
    c->values++;
    return 0;
}

static int check_unit(checker_t *c, uint32_t node, tb_err_t *err)
{
    uint32_t u = c->units[node];
    uint32_t base = node ^ trie_da_offset(u);
    size_t kids = 0;
    uint32_t prev = UINT32_MAX; /* the previous child, for the chain */
    const uint16_t *chain = c->da->chain;
    if (trie_da_has_leaf(u) && check_leaf(c, node, base, err))
        return -1;
    for (uint32_t l = 0; l < 256; l++) {
        uint32_t p = trie_da_slot(c->da, base, (uint8_t)l);
        if (p >= c->n || trie_da_label(c->units[p]) != l)
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
    if (!kids && !trie_da_has_leaf(u) && node != 0)
        return tb_fail(err, "unit %u has neither children nor a value", node);
    if (chain && prev != UINT32_MAX && chain[prev] >> 8)
        return tb_fail(err, "unit %u: the last child has a next sibling %u in "
                       "its chain", prev, chain[prev] >> 8);
    return 0;
}

int trie_da_validate(const trie_da_t *da, size_t nkeys, uint32_t value_limit,
                     int shared, tb_err_t *err)
{
    size_t n = da->n;
    if (n == 0)
        return tb_fail(err, "the double array has no units");
    checker_t c = {.da = da, .units = da->units, .n = n,
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

/* What byte c flips in a base to give its slot (see da.h). */
const uint16_t trie_da_xor_of[256] = {
    TRIE_DA_NUL_SLOT,
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
    22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39,
    40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57,
    58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75,
    76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93,
    94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109,
    110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124,
    125, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139,
    140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154,
    155, 156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168, 169,
    170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183, 184,
    185, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197, 198, 199,
    200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214,
    215, 216, 217, 218, 219, 220, 221, 222, 223, 224, 225, 226, 227, 228, 229,
    230, 231, 232, 233, 234, 235, 236, 237, 238, 239, 240, 241, 242, 243, 244,
    245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255,
};

/* The unit reached from `node` (whose unit is u) along byte c, or 0 (the
 * root, never a child) if there is none; *u becomes the child's unit.
 * Carrying the unit from one step to the next leaves one dependent load
 * per byte, as in Darts' 8-byte units, instead of re-reading the node for
 * its offset. */
static inline uint32_t step(const trie_da_t *da, uint32_t node, uint32_t *u,
                            uint8_t c)
{
    uint32_t p = trie_da_slot(da, node ^ trie_da_offset(*u), c);
    if (p >= da->n)
        return 0;
    uint32_t v = da->units[p];
    if (trie_da_label(v) != c)
        return 0;
    *u = v;
    return p;
}

/* The value of the node whose unit is u, or -1. */
static inline int64_t value_of(const trie_da_t *da, uint32_t node, uint32_t u)
{
    uint32_t p = node ^ trie_da_offset(u);
    if (!trie_da_has_leaf(u) || p >= da->n)
        return -1;
    return trie_da_value(da->units[p]);
}

int64_t trie_da_lookup(const trie_da_t *da, const uint8_t *s, size_t n)
{
    uint32_t node = 0, u = da->units[0];
    for (size_t i = 0; i < n; i++)
        if (!(node = step(da, node, &u, s[i])))
            return -1;
    return n ? value_of(da, node, u) : -1;
}

size_t trie_da_prefixes(const trie_da_t *da, const uint8_t *s, size_t n,
                        trie_match_t *out, size_t max)
{
    uint32_t node = 0, u = da->units[0];
    size_t found = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(node = step(da, node, &u, s[i])))
            break;
        int64_t v = value_of(da, node, u);
        if (v >= 0 && found++ < max)
            out[found - 1] = (trie_match_t){.id = (uint32_t)v,
                                            .len = (uint32_t)i + 1};
    }
    return found;
}

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
    if (rec->allowed_bytes)
        rec->allowed_bytes(rec, f->allowed);
    else
        memset(f->allowed, 0xFF, sizeof f->allowed);
    if (!da->chain || !chain_pays(f->allowed))
        return;
    f->chained = 1;
    /* A first label 0 is also what a node without children holds: the
     * probe tells them apart. */
    uint32_t c = da->chain[node] & 0xFFu;
    uint32_t p = trie_da_slot(da, base, (uint8_t)c);
    f->next = p < da->n && trie_da_label(da->units[p]) == c ? c : 256;
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
            uint32_t p = trie_da_slot(da, f->base, (uint8_t)c);
            if (p < da->n && trie_da_label(da->units[p]) == c) {
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
        uint32_t sib = da->chain[trie_da_slot(da, f->base, (uint8_t)c)] >> 8;
        f->next = sib ? sib : 256;
        if ((f->allowed[c >> 6] >> (c & 63)) & 1)
            return (int)c;
    }
    return -1;
}

/* ---- the walk over a recognizer's table --------------------------------- */

/*
 * With a table (trie_rec_table_t) the walk runs the transitions itself and
 * needs the recognizer's allowed bytes only to choose, per node, between
 * probing them and following the chain; that choice and the set depend on
 * the state alone, so they are cached per state (row offset) for the walk:
 * a JSON-string body has a handful of states, and its nodes then cost no
 * callback at all.  Direct-mapped, by a multiplicative hash of the row;
 * row 0 (the dead state) marks a free entry, never a state pushed.
 */
#define ALLOW_CACHE_BITS 4

typedef struct {
    uint32_t row, count; /* count: bytes in allowed */
    uint64_t allowed[4];
} da_allow_t;

static const da_allow_t *allowed_of(trie_rec_t *rec, size_t depth,
                                    da_allow_t *cache)
{
    uint32_t row = rec->tab.stack[depth];
    da_allow_t *e = &cache[(row * 0x9E3779B1u) >> (32 - ALLOW_CACHE_BITS)];
    if (e->row == row)
        return e;
    e->row = row;
    if (rec->allowed_bytes) {
        rec->tab.depth = depth;
        rec->allowed_bytes(rec, e->allowed);
    } else
        memset(e->allowed, 0xFF, sizeof e->allowed);
    e->count = 0;
    for (int w = 0; w < 4; w++)
        for (uint64_t bits = e->allowed[w]; bits; bits &= bits - 1)
            e->count++;
    return e;
}

/* enter() for a table walk: the state is the row at stack[depth].  A
 * probe per allowed byte or a step per child: the root's children are
 * counted (every first byte, where a narrow state such as digits allows
 * ten), other nodes have a few, so from CHAIN_FROM allowed bytes on the
 * chain is the shorter way.  In chain mode the frame needs no set: each
 * child's transition says. */
static void enter_table(const trie_da_t *da, trie_da_frame_t *f, uint32_t node,
                        uint32_t base, trie_rec_t *rec, size_t depth,
                        da_allow_t *cache)
{
    f->node = node;
    f->base = base;
    uint32_t first = 256;
    if (da->chain) {
        /* The first child along the chain, if any: a node without
         * children (a leaf, most of the nodes entered) needs no state. */
        uint32_t c = da->chain[node] & 0xFFu;
        uint32_t p = trie_da_slot(da, base, (uint8_t)c);
        if (p < da->n && trie_da_label(da->units[p]) == c)
            first = c;
        else {
            f->chained = 1;
            f->next = 256;
            return;
        }
    }
    const da_allow_t *a = allowed_of(rec, depth, cache);
    f->chained = da->chain && a->count >= (node == 0 ? da->root_kids : CHAIN_FROM);
    if (!f->chained) {
        memcpy(f->allowed, a->allowed, sizeof f->allowed);
        f->next = 0;
        return;
    }
    f->next = first;
}

/* The next child along the chain, or -1. */
static int next_child(const trie_da_t *da, trie_da_frame_t *f)
{
    if (f->next >= 256)
        return -1;
    uint32_t c = f->next;
    uint32_t sib = da->chain[trie_da_slot(da, f->base, (uint8_t)c)] >> 8;
    f->next = sib ? sib : 256;
    return (int)c;
}

/* Per child offered: its label's class and transition entry from the
 * table; if accepted, its unit (the value unit too when it has one), the
 * mask word and the stack slot, then the new frame.  Nodes offered: each
 * probe that found a child and each child along a chain. */
static uint64_t walk_table(const trie_da_t *da, trie_da_frame_t *f,
                           trie_rec_t *rec, tb_bitset_t *mask)
{
    da_allow_t cache[1u << ALLOW_CACHE_BITS];
    for (size_t i = 0; i < sizeof cache / sizeof *cache; i++)
        cache[i].row = 0;
    size_t d0 = rec->tab.depth, top = 0;
    uint32_t *stack = rec->tab.stack + d0;
    const uint32_t *units = da->units;
    uint64_t visited = 0;
    enter_table(da, &f[0], 0, trie_da_offset(units[0]), rec, d0, cache);
    for (;;) {
        int c = f[top].chained ? next_child(da, &f[top]) : next_probed(da, &f[top]);
        if (c < 0) {
            if (top == 0)
                break;
            top--;
            continue;
        }
        visited++;
        uint32_t next = rec->tab.table[stack[top] + rec->tab.cls[c]];
        if (__builtin_expect(next == TRIE_REC_UNKNOWN, 0))
            next = trie_rec_compute(rec, d0 + top, (uint8_t)c);
        if (!next)
            continue;
        uint32_t node = trie_da_slot(da, f[top].base, (uint8_t)c);
        uint32_t u = units[node];
        int64_t v = value_of(da, node, u);
        if (v >= 0)
            tb_bitset_set(mask, (size_t)v);
        stack[top + 1] = next;
        enter_table(da, &f[top + 1], node, node ^ trie_da_offset(u), rec,
                    d0 + top + 1, cache);
        top++;
    }
    rec->tab.depth = d0;
    return visited;
}

uint64_t trie_da_walk(const trie_da_t *da, trie_da_frame_t *f, trie_rec_t *rec,
                      tb_bitset_t *mask)
{
    if (trie_rec_inline(rec, da->max_len))
        return walk_table(da, f, rec, mask);
    size_t top = 0;
    uint64_t visited = 0;
    enter(da, &f[0], 0, trie_da_offset(da->units[0]), rec);
    for (;;) {
        int c = f[top].chained ? next_chained(da, &f[top])
                               : next_probed(da, &f[top]);
        if (c < 0) {
            if (top == 0)
                break;
            rec->pop_bytes(rec, 1);
            top--;
            continue;
        }
        visited++;
        if (!rec->push_byte(rec, (uint8_t)c))
            continue;
        uint32_t node = trie_da_slot(da, f[top].base, (uint8_t)c);
        uint32_t u = da->units[node];
        int64_t v = value_of(da, node, u);
        if (v >= 0)
            tb_bitset_set(mask, (size_t)v);
        enter(da, &f[top + 1], node, node ^ trie_da_offset(u), rec);
        top++;
    }
    return visited;
}

size_t trie_da_longest(const trie_da_t *da, const uint8_t *s, size_t n,
                       uint32_t *value)
{
    uint32_t node = 0, u = da->units[0];
    size_t best = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(node = step(da, node, &u, s[i])))
            break;
        int64_t v = value_of(da, node, u);
        if (v >= 0) {
            best = i + 1;
            *value = (uint32_t)v;
        }
    }
    return best;
}
