/* da: building and reading darts-clone double arrays (see da.h). */
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

/* The free list holds units of the open blocks only, at most
 * OPEN_BLOCKS + 1 consecutive blocks, so its links live in a ring of RING
 * units, a unit p at p % RING, not in arrays as long as the double array:
 * 9 bytes a unit less while a Unigram index is built. */
#define RING (32u * BLOCK)

typedef struct {
    tb_da_t *da;
    size_t cap;
    uint8_t *used, *used_base;
    /* by unit % RING: */
    uint8_t *in_list;     /* 1 while the unit is on the free list */
    int32_t *next, *prev; /* free list over the open blocks, -1 ends it */
    int32_t head, tail;
    size_t open_from;     /* first open block */
} builder_t;

static uint32_t ring(int32_t p)
{
    return (uint32_t)p % RING;
}

/* One pending node: its unit and the keys [lo, hi) that pass through it,
 * all sharing their first `depth` bytes. */
typedef struct {
    uint32_t node;
    size_t lo, hi;
    uint32_t depth;
} frame_t;

static void unlink_free(builder_t *b, int32_t p)
{
    int32_t prev = b->prev[ring(p)], next = b->next[ring(p)];
    if (prev >= 0)
        b->next[ring(prev)] = next;
    else
        b->head = next;
    if (next >= 0)
        b->prev[ring(next)] = prev;
    else
        b->tail = prev;
    b->prev[ring(p)] = b->next[ring(p)] = -1;
    b->in_list[ring(p)] = 0;
}

static void link_free(builder_t *b, int32_t p)
{
    b->prev[ring(p)] = b->tail;
    b->next[ring(p)] = -1;
    if (b->tail >= 0)
        b->next[ring(b->tail)] = p;
    else
        b->head = p;
    b->tail = p;
    b->in_list[ring(p)] = 1;
}

/* Whether unit p is on the free list: a unit of a closed block never is,
 * whatever its ring slot, which a later block may use, says. */
static int listed(const builder_t *b, uint32_t p)
{
    return p / BLOCK >= b->open_from && b->in_list[ring((int32_t)p)];
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
    if (!units || !used || !used_base)
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
        b->da->units[p] = TB_DA_FREE;
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
    if (base == 0 || base == TB_DA_NUL_SLOT ||
        (base < n && b->used_base[base]) || !encodable(node ^ base))
        return 0;
    for (size_t i = 0; i < nl; i++) {
        uint32_t p = base ^ labels[i];
        if (p < n && b->used[p])
            return 0;
        if (labels[i] == TB_DA_NUL_SLOT && p < n && b->used_base[p])
            return 0;
    }
    return 1;
}

/* A base for the children `labels` of `node`: the first fitting one among
 * the open blocks' free units, else one in a new block. */
static int find_base(builder_t *b, uint32_t node, const uint16_t *labels,
                     size_t nl, uint32_t *base, tb_err_t *err)
{
    for (int32_t f = b->head; f >= 0; f = b->next[ring(f)]) {
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
    *u &= TB_DA_LEAF_BIT | (1u << 8) | 0xFFu;
    if (offset < OFFSET_DIRECT)
        *u |= offset << 10;
    else
        *u |= (offset << 2) | (1u << 9);
}

static void take(builder_t *b, uint32_t p)
{
    b->used[p] = 1;
    if (listed(b, p)) /* not if its block was closed meanwhile */
        unlink_free(b, (int32_t)p);
}

/* Collects the labels below frame f: 0 (the value unit) first if a key
 * ends there, then the distinct next bytes, a NUL byte as TB_DA_NUL_SLOT. */
static int labels_of(const tb_da_t *da, const tb_da_key_t *keys,
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
            return tb_fail(err, "the key of value %u has a NUL byte at offset "
                           "%u, which this double array cannot hold",
                           keys[i].value, f->depth);
        if (c == 0)
            c = TB_DA_NUL_SLOT;
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
static int place(builder_t *b, const tb_da_key_t *keys, const frame_t *f,
                 frame_t *stack, size_t *top, tb_err_t *err)
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
        units[base] = TB_DA_LEAF_BIT | keys[f->lo].value;
    }
    size_t i = f->lo + (size_t)leaf;
    for (size_t l = (size_t)leaf; l < nl; l++) {
        uint32_t c = base ^ labels[l];
        uint8_t byte = (uint8_t)labels[l];
        take(b, c);
        if (labels[l] == TB_DA_NUL_SLOT)
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

static int check_values(const tb_da_key_t *keys, size_t n, tb_err_t *err)
{
    for (size_t i = 0; i < n; i++)
        if (keys[i].value & TB_DA_LEAF_BIT)
            return tb_fail(err, "key %zu: value %u does not fit 31 bits", i,
                           keys[i].value);
    return 0;
}

static int run(builder_t *b, const tb_da_key_t *keys, size_t n, tb_err_t *err)
{
    /* Each queued frame is a distinct trie node: the key bytes bound them. */
    size_t room = 1;
    for (size_t i = 0; i < n; i++)
        room += keys[i].len;
    frame_t *stack = malloc(sizeof *stack * room);
    if (!stack)
        return tb_fail(err, "out of memory for %zu pending nodes", room);
    /* as many units as nodes, the usual size, at once: grown by doubling,
     * the arrays were copied and their old pages left on the heap (only
     * the units written are ever touched) */
    if (grow(b, room + BLOCK) || add_block(b, err)) {
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
        rc = place(b, keys, &f, stack, &top, err);
    }
    free(stack);
    return rc;
}

int tb_da_build(tb_da_t *da, const tb_da_key_t *keys, size_t n, int flags,
                tb_err_t *err)
{
    memset(da, 0, sizeof *da);
    da->nul_far = (flags & TB_DA_NUL_FAR) != 0;
    if (check_values(keys, n, err))
        return -1;
    builder_t b = {.da = da, .head = -1, .tail = -1,
                   .in_list = malloc(RING), .next = malloc(RING * sizeof *b.next),
                   .prev = malloc(RING * sizeof *b.prev)};
    int rc = b.in_list && b.next && b.prev
                 ? run(&b, keys, n, err)
                 : tb_fail(err, "out of memory for a double array's free list");
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
        tb_da_free(da);
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

void tb_da_free(tb_da_t *da)
{
    free(da->units);
    memset(da, 0, sizeof *da);
}

/* ---- reading ----------------------------------------------------------- */

/* What byte c flips in a base to give its slot (see da.h). */
const uint16_t tb_da_xor_of[256] = {
    TB_DA_NUL_SLOT,
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
/* tb_da_step for byte c, in the shifted alphabet where the array has it. */
static inline uint32_t step_byte(const tb_da_t *da, uint32_t node, uint32_t *u, uint8_t c)
{
    if (!da->shifted)
        return tb_da_step(da, node, u, c);
    uint8_t l[2];
    unsigned n;
    tb_da_shift(c, l, &n);
    node = tb_da_step(da, node, u, l[0]);
    return node && n == 2 ? tb_da_step(da, node, u, l[1]) : node;
}

int64_t tb_da_lookup(const tb_da_t *da, const uint8_t *s, size_t n)
{
    uint32_t node = 0, u = da->units[0];
    for (size_t i = 0; i < n; i++)
        if (!(node = step_byte(da, node, &u, s[i])))
            return -1;
    return n ? tb_da_value_of(da, node, u) : -1;
}

size_t tb_da_prefixes(const tb_da_t *da, const uint8_t *s, size_t n,
                      tb_da_match_t *out, size_t max)
{
    uint32_t node = 0, u = da->units[0];
    size_t found = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(node = step_byte(da, node, &u, s[i])))
            break;
        int64_t v = tb_da_value_of(da, node, u);
        if (v >= 0 && found++ < max)
            out[found - 1] = (tb_da_match_t){.id = (uint32_t)v,
                                             .len = (uint32_t)i + 1};
    }
    return found;
}

size_t tb_da_longest(const tb_da_t *da, const uint8_t *s, size_t n,
                     uint32_t *value)
{
    uint32_t node = 0, u = da->units[0];
    size_t best = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(node = step_byte(da, node, &u, s[i])))
            break;
        int64_t v = tb_da_value_of(da, node, u);
        if (v >= 0) {
            best = i + 1;
            *value = (uint32_t)v;
        }
    }
    return best;
}
