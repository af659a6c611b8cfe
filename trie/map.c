/*
 * map: the naive trie, one heap node per trie node, each holding an ordered
 * map (a sorted array) from byte to child, as simple tokenizer code builds
 * it.  It is the baseline the compact layouts are measured against: its
 * nodes are scattered over the heap, so a walk chases pointers.
 *
 * Node: the token id (-1 when the node is no token), then `n` children as
 * two parallel arrays, labels in ascending byte order and child pointers.
 * Everything that recurses (free, walk, validate) uses an explicit stack,
 * since tokens of a thousand spaces make chains a thousand nodes deep.
 */
#include <stdlib.h>
#include <string.h>

#include "../base/buf.h"
#include "trie.h"

typedef struct map_node map_node_t;
struct map_node {
    int32_t id;
    uint32_t n, cap;
    uint8_t *labels;
    map_node_t **kids;
};

/* A walk frame: the node and the next child to offer. */
typedef struct {
    const map_node_t *node;
    uint32_t next;
} map_frame_t;

typedef struct {
    map_node_t *root;
    size_t nodes, bytes;
    uint32_t id_limit, max_len;
    map_frame_t *frames; /* max_len + 1 walk frames, scratch */
} map_t;

static map_node_t *new_node(map_t *t)
{
    map_node_t *x = calloc(1, sizeof *x);
    if (x) {
        x->id = -1;
        t->nodes++;
        t->bytes += sizeof *x;
    }
    return x;
}

/* Appends a child: keys arrive sorted, so a new label is always the largest. */
static map_node_t *add_child(map_t *t, map_node_t *x, uint8_t label)
{
    if (x->n == x->cap) {
        uint32_t cap = x->cap ? 2 * x->cap : 1;
        uint8_t *labels = realloc(x->labels, cap);
        if (!labels)
            return NULL;
        x->labels = labels;
        map_node_t **kids = realloc(x->kids, cap * sizeof *kids);
        if (!kids)
            return NULL;
        x->kids = kids;
        t->bytes += (cap - x->cap) * (1 + sizeof *kids);
        x->cap = cap;
    }
    map_node_t *c = new_node(t);
    if (!c)
        return NULL;
    x->labels[x->n] = label;
    x->kids[x->n++] = c;
    return c;
}

static map_node_t *child(const map_node_t *x, uint8_t label)
{
    uint32_t lo = 0, hi = x->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (x->labels[mid] < label)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < x->n && x->labels[lo] == label ? x->kids[lo] : NULL;
}

static void map_free(void *impl)
{
    map_t *t = impl;
    if (!t)
        return;
    map_node_t **stack = malloc(sizeof *stack * (t->nodes + 1));
    size_t top = 0;
    if (stack && t->root)
        stack[top++] = t->root;
    while (top > 0) { /* without a stack the nodes leak: nothing else to do */
        map_node_t *x = stack[--top];
        for (uint32_t i = 0; i < x->n; i++)
            stack[top++] = x->kids[i];
        free(x->labels);
        free(x->kids);
        free(x);
    }
    free(stack);
    free(t->frames);
    free(t);
}

static int insert(map_t *t, const trie_key_t *key)
{
    map_node_t *x = t->root;
    for (uint32_t d = 0; d < key->len; d++) {
        uint8_t c = key->s[d];
        /* Sorted keys: an existing child for c can only be the last one. */
        map_node_t *next = x->n && x->labels[x->n - 1] == c ? x->kids[x->n - 1]
                                                           : add_child(t, x, c);
        if (!next)
            return -1;
        x = next;
    }
    x->id = (int32_t)key->id;
    return 0;
}

static void *map_build(const trie_keys_t *k, tb_err_t *err)
{
    map_t *t = calloc(1, sizeof *t);
    if (!t || !(t->root = new_node(t)) ||
        !(t->frames = malloc(sizeof *t->frames * ((size_t)k->max_len + 1)))) {
        map_free(t);
        tb_fail(err, "out of memory");
        return NULL;
    }
    t->id_limit = k->id_limit;
    t->max_len = k->max_len;
    t->bytes += sizeof *t + sizeof *t->frames * ((size_t)k->max_len + 1);
    for (size_t i = 0; i < k->n; i++)
        if (insert(t, &k->keys[i])) {
            map_free(t);
            tb_fail(err, "out of memory at token id %u", k->keys[i].id);
            return NULL;
        }
    return t;
}

static int32_t map_lookup(const void *impl, const uint8_t *s, size_t n)
{
    const map_node_t *x = ((const map_t *)impl)->root;
    for (size_t i = 0; i < n && x; i++)
        x = child(x, s[i]);
    return n && x ? x->id : -1;
}

static size_t map_prefixes(const void *impl, const uint8_t *s, size_t n,
                           trie_match_t *out, size_t max)
{
    const map_node_t *x = ((const map_t *)impl)->root;
    size_t found = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(x = child(x, s[i])))
            break;
        if (x->id >= 0 && found++ < max)
            out[found - 1] = (trie_match_t){.id = (uint32_t)x->id,
                                            .len = (uint32_t)i + 1};
    }
    return found;
}

/*
 * The walk over the recognizer's table (trie_rec_table_t): per child
 * offered, its label, class and transition entry; if accepted, the child
 * pointer and the child's id and child count (one line of the child: the
 * pointer chase the layout is measured for), the mask word (the id, or the
 * scratch bit id_limit for a node that is no token) and the stack slot; a
 * child with children of its own is entered, its parent and next index
 * saved in a frame.  The node being read (its child count, label and child
 * arrays, the next index) stays in registers; frames are written on the way
 * down and read on the way up only.  stack[depth] is the row of the node
 * at that depth.
 */
static uint64_t walk_table(const map_t *t, trie_rec_t *rec, tb_bitset_t *mask)
{
    map_frame_t *f = t->frames;
    size_t d0 = rec->tab.depth, top = 0;
    uint32_t *stack = rec->tab.stack + d0;
    const uint32_t *table = rec->tab.table;
    const uint8_t *cls = rec->tab.cls;
    uint64_t visited = 0;
    const map_node_t *x = t->root;
    uint32_t i = 0, n = x->n, row = stack[0];
    for (;;) {
        if (i == n) {
            if (top == 0)
                break;
            top--;
            x = f[top].node;
            i = f[top].next;
            n = x->n;
            row = stack[top];
            continue;
        }
        visited++;
        uint8_t b = x->labels[i++];
        uint32_t next = trie_rec_entry(table, row + cls[b]);
        if (__builtin_expect(next == TRIE_REC_UNKNOWN, 0)) {
            next = trie_rec_compute(rec, d0 + top, b);
            table = rec->tab.table;
            cls = rec->tab.cls;
        }
        if (!next)
            continue;
        const map_node_t *c = x->kids[i - 1];
        tb_bitset_set(mask, c->id >= 0 ? (size_t)c->id : t->id_limit);
        if (c->n == 0)
            continue;
        f[top++] = (map_frame_t){.node = x, .next = i};
        stack[top] = row = next;
        x = c;
        i = 0;
        n = c->n;
    }
    rec->tab.depth = d0;
    return visited;
}

static uint64_t map_walk(const void *impl, trie_rec_t *rec, tb_bitset_t *mask)
{
    const map_t *t = impl;
    if (trie_rec_inline(rec, t->max_len))
        return walk_table(t, rec, mask);
    map_frame_t *f = t->frames;
    size_t top = 0;
    uint64_t visited = 0;
    f[0] = (map_frame_t){.node = t->root, .next = 0};
    for (;;) {
        const map_node_t *x = f[top].node;
        if (f[top].next == x->n) {
            if (top == 0)
                break;
            rec->pop_bytes(rec, 1);
            top--;
            continue;
        }
        uint32_t i = f[top].next++;
        visited++;
        if (!rec->push_byte(rec, x->labels[i]))
            continue;
        const map_node_t *c = x->kids[i];
        if (c->id >= 0)
            tb_bitset_set(mask, (size_t)c->id);
        f[++top] = (map_frame_t){.node = c, .next = 0};
    }
    return visited;
}

static size_t map_nodes(const void *impl)
{
    return ((const map_t *)impl)->nodes;
}

static size_t map_bytes(const void *impl)
{
    return ((const map_t *)impl)->bytes;
}

static int check_node(const map_t *t, const map_node_t *x, size_t seen,
                      tb_err_t *err)
{
    if (x->id >= (int32_t)t->id_limit)
        return tb_fail(err, "node %zu: token id %d is past the id limit %u",
                       seen, x->id, t->id_limit);
    if (x->n == 0 && x->id < 0 && x != t->root)
        return tb_fail(err, "node %zu: a leaf that is no token", seen);
    for (uint32_t i = 1; i < x->n; i++)
        if (x->labels[i] <= x->labels[i - 1])
            return tb_fail(err, "node %zu: child bytes 0x%02x and 0x%02x are "
                           "out of order", seen, x->labels[i - 1], x->labels[i]);
    for (uint32_t i = 0; i < x->n; i++)
        if (!x->kids[i])
            return tb_fail(err, "node %zu: child 0x%02x is missing", seen,
                           x->labels[i]);
    return 0;
}

/* Visits every node once; more nodes than were built means a cycle. */
static int map_validate(const void *impl, tb_err_t *err)
{
    const map_t *t = impl;
    const map_node_t **stack = malloc(sizeof *stack * (t->nodes + 1));
    if (!stack)
        return tb_fail(err, "out of memory");
    size_t top = 0, seen = 0;
    int rc = 0;
    stack[top++] = t->root;
    while (!rc && top > 0) {
        const map_node_t *x = stack[--top];
        rc = check_node(t, x, seen, err);
        if (!rc && (++seen > t->nodes || top + x->n > t->nodes))
            rc = tb_fail(err, "more than the %zu nodes built are reachable",
                         t->nodes);
        for (uint32_t i = 0; !rc && i < x->n; i++)
            stack[top++] = x->kids[i];
    }
    if (!rc && seen != t->nodes)
        rc = tb_fail(err, "%zu of the %zu nodes built are reachable", seen,
                     t->nodes);
    free(stack);
    return rc;
}

const trie_layout_t trie_layout_map = {
    .name = "map",
    .about = "naive heap trie, one node per prefix, sorted child arrays",
    .build = map_build,
    .free = map_free,
    .lookup = map_lookup,
    .prefixes = map_prefixes,
    .walk = map_walk,
    .nodes = map_nodes,
    .bytes = map_bytes,
    .validate = map_validate,
};
