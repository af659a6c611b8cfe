/*
 * dfs: the flat depth-first node array of the `dfs` layout (trie/dfs.c
 * describes the node word) and its table walk over a range of nodes, for
 * the layouts built on it (`cover`, trie/cover.c).  Not for use outside
 * trie/.
 */
#ifndef TRIE_DFS_H
#define TRIE_DFS_H

#include <stddef.h>
#include <stdint.h>

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
     * load each, most of a narrow mask's time: see walk_table); and
     * root_node[k] the node word at root[k], so that the children the
     * walk refuses cost no load from the node array at all (one cache
     * line each, 256 of them a walk, mostly missed once other work has
     * run between two masks). */
    uint32_t nroot;
    uint32_t root[256];
    uint64_t root_node[256];
} trie_dfs_t;

static inline uint8_t trie_dfs_byte(uint64_t x) { return (uint8_t)x; }
static inline uint32_t trie_dfs_sub(uint64_t x) { return (uint32_t)(x >> 8) & DFS_SUB_MAX; }
static inline uint32_t trie_dfs_depth(uint64_t x) { return (uint32_t)(x >> 31) & DFS_DEPTH_MAX; }
static inline uint32_t trie_dfs_id(uint64_t x) { return (uint32_t)(x >> 45); }

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
static inline void trie_dfs_walk_range(const trie_dfs_t *t, trie_rec_t *rec,
                                       uint64_t *words, size_t p, size_t end,
                                       uint32_t *base, uint64_t *skipped)
{
    const uint64_t *nodes = t->nodes;
    const uint32_t *table = rec->tab.table;
    const uint8_t *cls = rec->tab.cls;
    while (p < end) {
        uint64_t x = nodes[p];
        size_t k = trie_dfs_depth(x); /* size_t: base[k - 1] is one address */
        size_t row = base[k - 1];
        uint32_t next = trie_rec_entry(table, row + cls[trie_dfs_byte(x)]);
        if (__builtin_expect(next + 1u < 2u, 0)) {
            if (next == TRIE_REC_UNKNOWN) {
                next = trie_rec_compute(rec, (size_t)(base - rec->tab.stack) + k - 1,
                                        trie_dfs_byte(x));
                table = rec->tab.table;
                cls = rec->tab.cls;
            }
            if (!next) {
                p += trie_dfs_sub(x);
                *skipped += trie_dfs_sub(x) - 1;
                continue;
            }
        }
        words[x >> 51] |= (uint64_t)1 << ((x >> 45) & 63);
        base[k] = next;
        p++;
    }
}

#endif
