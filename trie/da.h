/*
 * da: what the `dat` and `xcda` layouts add to the double array of
 * base/da.h (whose comment describes the units): building from trie keys,
 * the child chain that the mask walk follows, the walk itself under a
 * trie_rec_t, and structural validation, which checks the chain too.  Not
 * for use outside trie/.
 *
 * Child chain.  trie_da_build_chain() fills `chain` after the build, one
 * 16-bit entry per unit beside the units (2 more bytes per unit, half
 * again the units' size): bits 0-7 the label of the unit's first child,
 * bits 8-15 the label of its next sibling (0: none; children come in label
 * order with NUL first, so a next sibling is never NUL).  A first label of
 * 0 on a node without a NUL child means no children: the probe of that
 * label fails.  The walk follows the chain where the recognizer allows many
 * bytes, so it reads a node's children, not 256 empty slots; lookups never
 * read it.  It is derived from the units alone, so a layout builds it only
 * when it is first walked (the `dat` layout's prepare_walk): an array that
 * is only looked up never pays its bytes.
 */
#ifndef TRIE_DA_H
#define TRIE_DA_H

#include <stddef.h>
#include <stdint.h>

#include "../base/bitset.h"
#include "../base/da.h"
#include "../base/err.h"
#include "trie.h"

typedef struct {
    tb_da_t a;          /* the units; lookups read only these */
    uint16_t *chain;    /* a.n entries once trie_da_build_chain ran, else NULL */
    uint32_t root_kids; /* the root's children, counted with the chain */
} trie_da_t;

/* Builds the units for the sorted, unique keys, key i carrying values[i]
 * (below 2^31); `flags` is 0 or TB_DA_NUL_FAR.  Builds no chain.  Fails
 * on a NUL byte in a key unless TB_DA_NUL_FAR, or on an array too large
 * to encode its offsets; the messages name the token id at fault. */
int trie_da_build(trie_da_t *da, const trie_key_t *keys, size_t n,
                  const uint32_t *values, int flags, tb_err_t *err);
void trie_da_free(trie_da_t *da);

/* Fills da->chain from the units (see "Child chain" above); does nothing if
 * there is one.  For arrays that trie_da_build made (every base owned by one
 * node).  Fails only for memory, leaving no chain. */
int trie_da_build_chain(trie_da_t *da, tb_err_t *err);

/* One level of a walk: the node, where its children are, the next label to
 * try (256: none left) and the labels the recognizer allows there; with
 * `chained` the next label is the next child along the chain, else the next
 * allowed label to probe. */
typedef struct {
    uint32_t node, base;
    uint16_t next;
    uint8_t chained;
    uint8_t esc; /* a shifted array's escape node: its labels decode as 0xFD + l */
    uint64_t allowed[4];
} trie_da_frame_t;

/* What a layout over da builds for its walks (its prepare_walk): the
 * frames (a.max_len + 1) into *frames unless there, and the chain.  Fails
 * only for memory, leaving what was built for a later call. */
int trie_da_prepare_walk(trie_da_t *da, trie_da_frame_t **frames, tb_err_t *err);
/* The bytes of what trie_da_prepare_walk built so far. */
size_t trie_da_walk_bytes(const trie_da_t *da, const trie_da_frame_t *frames);

/* The mask walk (see trie_layout_t.walk), depth first over frames[0 ..
 * a.max_len]; values are the mask bits, and `scratch` (the mask's scratch
 * bit, trie_walk clears it) the bit a table walk sets for a node without a
 * value.  A table walk needs the chain (without it the walk calls back); a
 * `shifted` array needs its chain on both paths (it follows the chain
 * everywhere: the recognizer's allowed bytes are not labels there). */
uint64_t trie_da_walk(const trie_da_t *da, trie_da_frame_t *frames,
                      trie_rec_t *rec, tb_bitset_t *mask, uint32_t scratch);

/* Structural checks from the root: every value unit in range and a leaf
 * with a value below `value_limit`, no node without children or value, the
 * child chain (where there is one) listing exactly each node's children, and
 * (unless nkeys is (size_t)-1) nkeys values in all.  With `shared` 0 every
 * unit must be reached once (a tree, as trie_da_build makes); with 1 units
 * may be reached from several parents, as in the arrays darts-clone builds
 * from a DAWG (SentencePiece's charsmaps share identical subtries). */
int trie_da_validate(const trie_da_t *da, size_t nkeys, uint32_t value_limit,
                     int shared, tb_err_t *err);

#endif
