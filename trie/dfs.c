/*
 * dfs: the flat depth-first token trie (the published reference layout, as
 * described in the seed document on toktree walks).
 *
 * Every node but the root is one 64-bit word, nodes in depth-first order,
 * siblings in byte order:
 *   bits  0-7   edge byte (the last byte of the node's string)
 *   bits  8-30  subtree size (23 bits), the node itself included
 *   bits 31-44  depth (14 bits): the length of the node's string
 *   bits 45-63  token id (19 bits); `none` (= the keys' id_limit) marks a
 *               node that is no token, so that the walk can set its mask bit
 *               without a branch and the caller clears that scratch bit
 * Limits that follow: ids below 2^19 - 1 (a 262144-token vocabulary fits
 * twice), 2^23 - 1 nodes under any first byte, tokens of up to 16383 bytes
 * (the longest runs of spaces in real vocabularies are about 1000).
 *
 * The published layout stores num_parents = depth(node) - depth(next) + 1
 * (next: the node after the subtree) where this one stores the depth; the
 * two say the same, but with the depth a walk finds the state of a node's
 * parent at stack[depth - 1] from the node alone, where num_parents makes
 * every node's stack position wait for the previous node's (walk_range).
 * The id sits in the top bits so that its mask word is one shift (x >> 51)
 * and its bit another (the shift count's low 6 bits of x >> 45).
 *
 * The walk is one forward pass: an accepted byte pushes its state at its
 * depth and moves to the next node; a refused byte skips its subtree.
 */
#include <stdlib.h>
#include <string.h>

#include "../base/buf.h"
#include "trie.h"

#define DFS_ID_BITS 19
#define DFS_SUB_BITS 23
#define DFS_DEPTH_BITS 14
#define DFS_ID_MAX ((1u << DFS_ID_BITS) - 1)
#define DFS_SUB_MAX ((1u << DFS_SUB_BITS) - 1)
#define DFS_DEPTH_MAX ((1u << DFS_DEPTH_BITS) - 1)

typedef struct {
    uint64_t *nodes;
    size_t n;
    uint32_t none;    /* the id of nodes that are no token */
    uint32_t max_len; /* the deepest node's depth: what a walk pushes */
    /* root[0..nroot): where each first byte's subtree starts, so that a
     * walk tests the root's children from this 1 KB array instead of
     * chasing subtree sizes across the whole node array (one dependent
     * load each, most of a narrow mask's time: see walk_table). */
    uint32_t nroot;
    uint32_t root[256];
} dfs_t;

static inline uint8_t n_byte(uint64_t x) { return (uint8_t)x; }
static inline uint32_t n_sub(uint64_t x) { return (uint32_t)(x >> 8) & DFS_SUB_MAX; }
static inline uint32_t n_depth(uint64_t x) { return (uint32_t)(x >> 31) & DFS_DEPTH_MAX; }
static inline uint32_t n_id(uint64_t x) { return (uint32_t)(x >> 45); }

static uint64_t pack(uint8_t byte, uint32_t id, uint32_t sub, uint32_t depth)
{
    return (uint64_t)byte | (uint64_t)sub << 8 | (uint64_t)depth << 31 |
           (uint64_t)id << 45;
}

/* The node fields before packing, while the subtree sizes are open. */
typedef struct {
    uint8_t byte;
    uint32_t id, sub, depth;
} dfs_tmp_t;

typedef TB_VEC(dfs_tmp_t) dfs_tmp_vec_t;

static int check_limits(const trie_keys_t *k, tb_err_t *err)
{
    if (k->id_limit > DFS_ID_MAX)
        return tb_fail(err, "token id %u is past the limit of %u ids (%d-bit "
                       "id field)", k->id_limit - 1, DFS_ID_MAX, DFS_ID_BITS);
    for (size_t i = 0; i < k->n; i++)
        if (k->keys[i].len > DFS_DEPTH_MAX)
            return tb_fail(err, "token id %u is %u bytes long, past the depth "
                           "limit of %u (%d-bit depth field)",
                           k->keys[i].id, k->keys[i].len, DFS_DEPTH_MAX,
                           DFS_DEPTH_BITS);
    return 0;
}

/* Closes the open nodes below depth `keep`: their subtrees end here. */
static void close_path(dfs_tmp_vec_t *v, size_t *path, uint32_t from,
                       uint32_t keep)
{
    for (uint32_t d = from; d > keep; d--)
        v->data[path[d - 1]].sub = (uint32_t)(v->len - path[d - 1]);
}

/* Lays the sorted keys out depth first: each key adds the nodes past its
 * common prefix with the key before it. */
static int lay_out(const trie_keys_t *k, dfs_tmp_vec_t *v, tb_err_t *err)
{
    size_t *path = malloc(sizeof *path * (k->max_len + 1));
    if (!path)
        return tb_fail(err, "out of memory for a path of %u nodes", k->max_len);
    uint32_t open = 0;
    const trie_key_t *prev = NULL;
    for (size_t i = 0; i < k->n; i++) {
        const trie_key_t *key = &k->keys[i];
        uint32_t lcp = 0;
        while (prev && lcp < prev->len && lcp < key->len &&
               prev->s[lcp] == key->s[lcp])
            lcp++;
        close_path(v, path, open, lcp);
        if (tb_vec_reserve(v, key->len - lcp)) {
            free(path);
            return tb_fail(err, "out of memory at token id %u", key->id);
        }
        for (uint32_t d = lcp; d < key->len; d++) {
            path[d] = v->len;
            v->data[v->len++] = (dfs_tmp_t){.byte = key->s[d], .id = k->id_limit,
                                            .depth = d + 1};
        }
        v->data[path[key->len - 1]].id = key->id;
        open = key->len;
        prev = key;
    }
    close_path(v, path, open, 0);
    free(path);
    return 0;
}

static int pack_nodes(dfs_t *t, const dfs_tmp_vec_t *v, tb_err_t *err)
{
    t->n = v->len;
    t->nodes = malloc(sizeof *t->nodes * (v->len ? v->len : 1));
    if (!t->nodes)
        return tb_fail(err, "out of memory for %zu nodes", v->len);
    for (size_t i = 0; i < v->len; i++) {
        const dfs_tmp_t *x = &v->data[i];
        if (x->sub > DFS_SUB_MAX)
            return tb_fail(err, "node %zu (byte 0x%02x at depth %u) has %u "
                           "nodes under it, past the limit of %u (%d-bit "
                           "subtree size)", i, x->byte, x->depth, x->sub,
                           DFS_SUB_MAX, DFS_SUB_BITS);
        t->nodes[i] = pack(x->byte, x->id, x->sub, x->depth);
    }
    for (size_t p = 0; p < t->n; p += n_sub(t->nodes[p]))
        t->root[t->nroot++] = (uint32_t)p; /* at most 256: bytes differ */
    return 0;
}

static void dfs_free(void *impl)
{
    dfs_t *t = impl;
    if (!t)
        return;
    free(t->nodes);
    free(t);
}

static void *dfs_build(const trie_keys_t *k, tb_err_t *err)
{
    if (check_limits(k, err))
        return NULL;
    dfs_t *t = calloc(1, sizeof *t);
    dfs_tmp_vec_t v = {0};
    if (!t) {
        tb_fail(err, "out of memory");
        return NULL;
    }
    t->none = k->id_limit;
    t->max_len = k->max_len;
    if (lay_out(k, &v, err) || pack_nodes(t, &v, err)) {
        free(v.data);
        dfs_free(t);
        return NULL;
    }
    free(v.data);
    return t;
}

/* The child of the node spanning (p - 1, end) whose byte is c, or (size_t)-1.
 * Siblings are in byte order, so the scan stops at the first larger byte. */
static size_t find_child(const dfs_t *t, size_t p, size_t end, uint8_t c)
{
    while (p < end) {
        uint64_t x = t->nodes[p];
        if (n_byte(x) == c)
            return p;
        if (n_byte(x) > c)
            break;
        p += n_sub(x);
    }
    return (size_t)-1;
}

static int32_t dfs_lookup(const void *impl, const uint8_t *s, size_t n)
{
    const dfs_t *t = impl;
    size_t p = 0, end = t->n, at = (size_t)-1;
    for (size_t i = 0; i < n; i++) {
        at = find_child(t, p, end, s[i]);
        if (at == (size_t)-1)
            return -1;
        p = at + 1;
        end = at + n_sub(t->nodes[at]);
    }
    if (at == (size_t)-1 || n_id(t->nodes[at]) == t->none)
        return -1;
    return (int32_t)n_id(t->nodes[at]);
}

static size_t dfs_prefixes(const void *impl, const uint8_t *s, size_t n,
                           trie_match_t *out, size_t max)
{
    const dfs_t *t = impl;
    size_t p = 0, end = t->n, found = 0;
    for (size_t i = 0; i < n; i++) {
        size_t at = find_child(t, p, end, s[i]);
        if (at == (size_t)-1)
            break;
        uint32_t id = n_id(t->nodes[at]);
        if (id != t->none && found++ < max)
            out[found - 1] = (trie_match_t){.id = id, .len = (uint32_t)i + 1};
        p = at + 1;
        end = at + n_sub(t->nodes[at]);
    }
    return found;
}

/* The walk through the recognizer's callbacks, for recognizers without a
 * table (and tables too shallow for the trie): before a node at depth k,
 * the stack goes back to its parent, k - 1 states above where it began. */
static uint64_t walk_calls(const dfs_t *t, trie_rec_t *rec, tb_bitset_t *mask)
{
    const uint64_t *nodes = t->nodes;
    size_t p = 0, n = t->n;
    uint32_t pushed = 0;
    uint64_t visited = 0;
    while (p < n) {
        uint64_t x = nodes[p];
        uint32_t k = n_depth(x);
        rec->pop_bytes(rec, pushed + 1 - k); /* pushed >= k - 1: the parent's */
        pushed = k - 1;
        visited++;
        if (rec->push_byte(rec, n_byte(x))) {
            tb_bitset_set(mask, n_id(x));
            pushed = k;
            p++;
        } else
            p += n_sub(x);
    }
    if (pushed)
        rec->pop_bytes(rec, pushed);
    return visited;
}

/*
 * The walk over the recognizer's table (trie_rec_table_t), the hot loop of
 * a token mask.  Per node: the node word (a forward stream), the row of its
 * parent from the stack slot its depth names, the class of its byte, the
 * transition entry, then either
 *   accepted: the mask word (the bit of the id, or of the scratch id for a
 *             node that is no token: no branch) and the stack slot at the
 *             node's depth (its children read it);
 *   refused:  skip the subtree.
 * Nothing carries from one node to the next but p: the parent's row comes
 * from a slot the node names itself, so only a child waits for its
 * parent's transition (through the store), while siblings and the nodes
 * after a leaf read slots written earlier and overlap.  (Keeping the top
 * row in a register, or a depth updated from num_parents, chains every
 * node to the one before: 3.4 ns a node on Llama 3's JSON-string mask,
 * against 2.1 with num_parents and a stack read, and less here.)  The test
 * of `next` is the one data-dependent branch: a select would make the next
 * node's address wait for the transition.  0 and TRIE_REC_UNKNOWN share
 * one test (next + 1 < 2), an entry not computed yet going to push_byte
 * (trie_rec_compute) on the refused side.  *skipped adds up sub - 1 over
 * refused nodes: the nodes offered are the range's size less those.
 * Walks [p, end), whole subtrees of nodes deeper than 1 whose states go at
 * base[depth]; base[1] is the state their first byte leaves.
 */
static inline void walk_range(const dfs_t *t, trie_rec_t *rec, uint64_t *words,
                              size_t p, size_t end, uint32_t *base,
                              uint64_t *skipped)
{
    const uint64_t *nodes = t->nodes;
    const uint32_t *table = rec->tab.table;
    const uint8_t *cls = rec->tab.cls;
    while (p < end) {
        uint64_t x = nodes[p];
        size_t k = n_depth(x); /* size_t: base[k - 1] is one address */
        size_t row = base[k - 1];
        uint32_t next = table[row + cls[n_byte(x)]];
        if (__builtin_expect(next + 1u < 2u, 0)) {
            if (next == TRIE_REC_UNKNOWN) {
                next = trie_rec_compute(rec, (size_t)(base - rec->tab.stack) + k - 1,
                                        n_byte(x));
                table = rec->tab.table;
                cls = rec->tab.cls;
            }
            if (!next) {
                p += n_sub(x);
                *skipped += n_sub(x) - 1;
                continue;
            }
        }
        words[x >> 51] |= (uint64_t)1 << ((x >> 45) & 63);
        base[k] = next;
        p++;
    }
}

/* The root's children come from t->root, each tested from the start row;
 * only an accepted one with children walks its subtree (walk_range). */
static uint64_t walk_table(const dfs_t *t, trie_rec_t *rec, tb_bitset_t *mask)
{
    size_t d = rec->tab.depth;
    uint32_t *base = rec->tab.stack + d;
    uint64_t *words = mask->words, skipped = 0;
    for (uint32_t k = 0; k < t->nroot; k++) {
        size_t p = t->root[k];
        uint64_t x = t->nodes[p];
        uint32_t next = rec->tab.table[base[0] + rec->tab.cls[n_byte(x)]];
        if (next == TRIE_REC_UNKNOWN)
            next = trie_rec_compute(rec, d, n_byte(x));
        if (!next) {
            skipped += n_sub(x) - 1;
            continue;
        }
        tb_bitset_set(mask, n_id(x));
        if (n_sub(x) == 1)
            continue;
        base[1] = next;
        walk_range(t, rec, words, p + 1, p + n_sub(x), base, &skipped);
    }
    rec->tab.depth = d;
    return t->n - skipped;
}

static uint64_t dfs_walk(const void *impl, trie_rec_t *rec, tb_bitset_t *mask)
{
    const dfs_t *t = impl;
    if (trie_rec_inline(rec, t->max_len))
        return walk_table(t, rec, mask);
    return walk_calls(t, rec, mask);
}

static size_t dfs_nodes(const void *impl)
{
    return ((const dfs_t *)impl)->n;
}

static size_t dfs_bytes(const void *impl)
{
    return sizeof(dfs_t) + ((const dfs_t *)impl)->n * sizeof(uint64_t);
}

/* Checks one node against its parent's extent and its previous sibling. */
static int check_node(const dfs_t *t, size_t p, size_t parent_end, int prev_byte,
                      tb_err_t *err)
{
    uint64_t x = t->nodes[p];
    if (n_sub(x) == 0 || p + n_sub(x) > parent_end)
        return tb_fail(err, "node %zu: subtree size %u runs past its parent's "
                       "end at node %zu", p, n_sub(x), parent_end);
    if ((int)n_byte(x) <= prev_byte)
        return tb_fail(err, "node %zu: byte 0x%02x does not come after its "
                       "previous sibling's 0x%02x", p, n_byte(x), prev_byte);
    if (n_id(x) > t->none)
        return tb_fail(err, "node %zu: token id %u is past the id limit %u",
                       p, n_id(x), t->none);
    if (n_sub(x) == 1 && n_id(x) == t->none)
        return tb_fail(err, "node %zu: a leaf that is no token", p);
    return 0;
}

/* Recomputes every depth from the subtree sizes (a stack of open ends),
 * checking nesting and sibling order, and checks the depth fields and the
 * root index. */
static int dfs_validate(const void *impl, tb_err_t *err)
{
    const dfs_t *t = impl;
    uint32_t *depth = malloc(sizeof *depth * (t->n ? t->n : 1));
    size_t *end = malloc(sizeof *end * (t->n + 1));
    int *last = malloc(sizeof *last * (t->n + 1));
    int rc = depth && end && last ? 0 : tb_fail(err, "out of memory");
    size_t top = 0;
    if (!rc) {
        end[0] = t->n;
        last[0] = -1;
    }
    for (size_t p = 0; !rc && p < t->n; p++) {
        while (top > 0 && end[top] <= p)
            top--;
        rc = check_node(t, p, end[top], last[top], err);
        last[top] = n_byte(t->nodes[p]);
        depth[p] = (uint32_t)top + 1;
        end[++top] = p + n_sub(t->nodes[p]);
        last[top] = -1;
    }
    for (size_t p = 0; !rc && p < t->n; p++)
        if (n_depth(t->nodes[p]) != depth[p])
            rc = tb_fail(err, "node %zu: depth field %u, the subtree sizes "
                         "say %u", p, n_depth(t->nodes[p]), depth[p]);
    size_t r = 0;
    for (size_t p = 0; !rc && p < t->n; p += n_sub(t->nodes[p]), r++)
        if (r >= t->nroot || t->root[r] != p)
            rc = tb_fail(err, "root index: child %zu of the root is node %zu, "
                         "the index says %s", r, p, r < t->nroot ? "another" : "none");
    if (!rc && r != t->nroot)
        rc = tb_fail(err, "root index: %u entries, the root has %zu children",
                     t->nroot, r);
    free(depth);
    free(end);
    free(last);
    return rc;
}

const trie_layout_t trie_layout_dfs = {
    .name = "dfs",
    .about = "flat depth-first trie, 8-byte nodes, forward-scan walk",
    .build = dfs_build,
    .free = dfs_free,
    .lookup = dfs_lookup,
    .prefixes = dfs_prefixes,
    .walk = dfs_walk,
    .nodes = dfs_nodes,
    .bytes = dfs_bytes,
    .validate = dfs_validate,
};
