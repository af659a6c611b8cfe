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
 * every node's stack position wait for the previous node's
 * (trie_dfs_walk_range, trie/dfs.h).
 * The id sits in the top bits so that its mask word is one shift (x >> 51)
 * and its bit another (the shift count's low 6 bits of x >> 45).
 *
 * The walk is one forward pass: an accepted byte pushes its state at its
 * depth and moves to the next node; a refused byte skips its subtree.
 */
#include <stdlib.h>
#include <string.h>

#include "../base/buf.h"
#include "dfs.h"
#include "trie.h"

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

static int pack_nodes(trie_dfs_t *t, const dfs_tmp_vec_t *v, tb_err_t *err)
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
    for (size_t p = 0; p < t->n; p += trie_dfs_sub(t->nodes[p])) {
        t->root_node[t->nroot] = t->nodes[p];
        t->root[t->nroot++] = (uint32_t)p; /* at most 256: bytes differ */
    }
    return 0;
}

static void dfs_free(void *impl)
{
    trie_dfs_t *t = impl;
    if (!t)
        return;
    free(t->nodes);
    free(t);
}

static void *dfs_build(const trie_keys_t *k, tb_err_t *err)
{
    if (check_limits(k, err))
        return NULL;
    trie_dfs_t *t = calloc(1, sizeof *t);
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
static size_t find_child(const trie_dfs_t *t, size_t p, size_t end, uint8_t c)
{
    while (p < end) {
        uint64_t x = t->nodes[p];
        if (trie_dfs_byte(x) == c)
            return p;
        if (trie_dfs_byte(x) > c)
            break;
        p += trie_dfs_sub(x);
    }
    return (size_t)-1;
}

static int32_t dfs_lookup(const void *impl, const uint8_t *s, size_t n)
{
    const trie_dfs_t *t = impl;
    size_t p = 0, end = t->n, at = (size_t)-1;
    for (size_t i = 0; i < n; i++) {
        at = find_child(t, p, end, s[i]);
        if (at == (size_t)-1)
            return -1;
        p = at + 1;
        end = at + trie_dfs_sub(t->nodes[at]);
    }
    if (at == (size_t)-1 || trie_dfs_id(t->nodes[at]) == t->none)
        return -1;
    return (int32_t)trie_dfs_id(t->nodes[at]);
}

static size_t dfs_prefixes(const void *impl, const uint8_t *s, size_t n,
                           trie_match_t *out, size_t max)
{
    const trie_dfs_t *t = impl;
    size_t p = 0, end = t->n, found = 0;
    for (size_t i = 0; i < n; i++) {
        size_t at = find_child(t, p, end, s[i]);
        if (at == (size_t)-1)
            break;
        uint32_t id = trie_dfs_id(t->nodes[at]);
        if (id != t->none && found++ < max)
            out[found - 1] = (trie_match_t){.id = id, .len = (uint32_t)i + 1};
        p = at + 1;
        end = at + trie_dfs_sub(t->nodes[at]);
    }
    return found;
}

/* The walk through the recognizer's callbacks, for recognizers without a
 * table (and tables too shallow for the trie): before a node at depth k,
 * the stack goes back to its parent, k - 1 states above where it began. */
static uint64_t walk_calls(const trie_dfs_t *t, trie_rec_t *rec, tb_bitset_t *mask)
{
    const uint64_t *nodes = t->nodes;
    size_t p = 0, n = t->n;
    uint32_t pushed = 0;
    uint64_t visited = 0;
    while (p < n) {
        uint64_t x = nodes[p];
        uint32_t k = trie_dfs_depth(x);
        rec->pop_bytes(rec, pushed + 1 - k); /* pushed >= k - 1: the parent's */
        pushed = k - 1;
        visited++;
        if (rec->push_byte(rec, trie_dfs_byte(x))) {
            tb_bitset_set(mask, trie_dfs_id(x));
            pushed = k;
            p++;
        } else
            p += trie_dfs_sub(x);
    }
    if (pushed)
        rec->pop_bytes(rec, pushed);
    return visited;
}

/* The root's children come from t->root, each tested from the start row;
 * only an accepted one with children walks its subtree (trie_dfs_walk_range). */
static uint64_t walk_table(const trie_dfs_t *t, trie_rec_t *rec, tb_bitset_t *mask)
{
    size_t d = rec->tab.depth;
    uint32_t *base = rec->tab.stack + d;
    uint64_t *words = mask->words, skipped = 0;
    for (uint32_t k = 0; k < t->nroot; k++) {
        size_t p = t->root[k];
        uint64_t x = t->root_node[k];
        uint32_t next = trie_rec_entry(rec->tab.table, base[0] + rec->tab.cls[trie_dfs_byte(x)]);
        if (next == TRIE_REC_UNKNOWN)
            next = trie_rec_compute(rec, d, trie_dfs_byte(x));
        if (!next) {
            skipped += trie_dfs_sub(x) - 1;
            continue;
        }
        tb_bitset_set(mask, trie_dfs_id(x));
        if (trie_dfs_sub(x) == 1)
            continue;
        base[1] = next;
        trie_dfs_walk_range(t, rec, words, p + 1, p + trie_dfs_sub(x), base, &skipped);
    }
    rec->tab.depth = d;
    return t->n - skipped;
}

static uint64_t dfs_walk(const void *impl, trie_rec_t *rec, tb_bitset_t *mask)
{
    const trie_dfs_t *t = impl;
    if (trie_rec_inline(rec, t->max_len))
        return walk_table(t, rec, mask);
    return walk_calls(t, rec, mask);
}

static size_t dfs_nodes(const void *impl)
{
    return ((const trie_dfs_t *)impl)->n;
}

static size_t dfs_bytes(const void *impl)
{
    return sizeof(trie_dfs_t) + ((const trie_dfs_t *)impl)->n * sizeof(uint64_t);
}

/* Checks one node against its parent's extent and its previous sibling. */
static int check_node(const trie_dfs_t *t, size_t p, size_t parent_end, int prev_byte,
                      tb_err_t *err)
{
    uint64_t x = t->nodes[p];
    if (trie_dfs_sub(x) == 0 || p + trie_dfs_sub(x) > parent_end)
        return tb_fail(err, "node %zu: subtree size %u runs past its parent's "
                       "end at node %zu", p, trie_dfs_sub(x), parent_end);
    if ((int)trie_dfs_byte(x) <= prev_byte)
        return tb_fail(err, "node %zu: byte 0x%02x does not come after its "
                       "previous sibling's 0x%02x", p, trie_dfs_byte(x), prev_byte);
    if (trie_dfs_id(x) > t->none)
        return tb_fail(err, "node %zu: token id %u is past the id limit %u",
                       p, trie_dfs_id(x), t->none);
    if (trie_dfs_sub(x) == 1 && trie_dfs_id(x) == t->none)
        return tb_fail(err, "node %zu: a leaf that is no token", p);
    return 0;
}

/* Recomputes every depth from the subtree sizes (a stack of open ends),
 * checking nesting and sibling order, and checks the depth fields and the
 * root index. */
static int dfs_validate(const void *impl, tb_err_t *err)
{
    const trie_dfs_t *t = impl;
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
        last[top] = trie_dfs_byte(t->nodes[p]);
        depth[p] = (uint32_t)top + 1;
        end[++top] = p + trie_dfs_sub(t->nodes[p]);
        last[top] = -1;
    }
    for (size_t p = 0; !rc && p < t->n; p++)
        if (trie_dfs_depth(t->nodes[p]) != depth[p])
            rc = tb_fail(err, "node %zu: depth field %u, the subtree sizes "
                         "say %u", p, trie_dfs_depth(t->nodes[p]), depth[p]);
    size_t r = 0;
    for (size_t p = 0; !rc && p < t->n; p += trie_dfs_sub(t->nodes[p]), r++)
        if (r >= t->nroot || t->root[r] != p || t->root_node[r] != t->nodes[p])
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
