/*
 * charsmap: reader of SentencePiece's precompiled_charsmap, the
 * normalization table that .model files (and Hugging Face's "Precompiled"
 * normalizer) carry.
 *
 * The blob is a 4-byte little-endian byte size of a unit array, the array
 * of 32-bit little-endian units of a darts-clone XOR-compressed double
 * array, then a pool of NUL-terminated replacement strings.  The double
 * array maps a source byte string to a pool offset.  Unit bits: label 0-7,
 * has-leaf 8, extension 9, offset 10-31 (shifted left by 8 more when the
 * extension bit is set); a leaf unit has bit 31 set and its value in bits
 * 0-30.  A node's child for byte c is node ^ offset ^ c.
 *
 * The reader keeps pointers into the blob (it does not copy it), so the
 * blob must outlive the tok_charsmap_t.  Every walk is bounds-checked, so
 * even a blob that passed no validation is never read out of bounds.
 *
 * Who reads, who builds: this is tokbench's one reader of the format, for
 * the normalizers here and for anything in trie/ or above that reads a
 * blob (tok cannot use trie, trie can use tok).  trie/xcda.h builds blobs
 * (trie_charsmap_build) and holds the `xcda` trie layout over the same
 * units; its tests read what it builds with this reader.
 */
#ifndef TOK_CHARSMAP_H
#define TOK_CHARSMAP_H

#include <stddef.h>
#include <stdint.h>

#include "../base/err.h"

typedef struct {
    const uint8_t *units; /* n_units little-endian 32-bit units */
    uint32_t n_units;
    const uint8_t *pool;  /* replacement strings, each NUL-terminated */
    uint32_t pool_len;
} tok_charsmap_t;

#define TOK_CM_LEAF_BIT (1u << 31)

static inline uint32_t tok_cm_unit(const tok_charsmap_t *cm, uint32_t i)
{
    const uint8_t *p = cm->units + (size_t)i * 4;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}
/* The label compare includes the leaf bit so a leaf never matches a byte. */
static inline uint32_t tok_cm_label(uint32_t u) { return u & (TOK_CM_LEAF_BIT | 0xFF); }
static inline int tok_cm_has_leaf(uint32_t u) { return (u >> 8) & 1; }
static inline uint32_t tok_cm_value(uint32_t u) { return u & (TOK_CM_LEAF_BIT - 1); }
static inline uint32_t tok_cm_offset(uint32_t u)
{
    return (u >> 10) << ((u & (1u << 9)) >> 6);
}

/* Reads the header of blob[0..len) only (the size field): cheap, for hot
 * paths over a blob that tok_charsmap_open accepted before. */
int tok_charsmap_view(tok_charsmap_t *cm, const uint8_t *blob, size_t len,
                      tb_err_t *err);

/* Opens blob[0..len) and validates it: the size field, every node's
 * children offset, every leaf's pool offset, the pool's termination, and
 * that every node reachable from the root (but the root) has children or a
 * value.  An empty blob (len 0) is a valid empty map.  Fails with a message
 * naming the byte offset at fault. */
int tok_charsmap_open(tok_charsmap_t *cm, const uint8_t *blob, size_t len,
                      tb_err_t *err);

/* tok_charsmap_open less the walk from the root: what keeps every lookup
 * inside the blob (the size field, offsets, leaves, the pool's NUL), for
 * a blob whose bytes a hash says are those tok_charsmap_open accepted (a
 * compiled file's).  The walk finds damage, not reads out of bounds, and
 * it was most of a cached load: 3.1M of 5.7M instructions, 132 KB of its
 * 980 KB peak, for a SentencePiece model of 348 KB with nmt_nfkc's 44k
 * units. */
int tok_charsmap_open_bounded(tok_charsmap_t *cm, const uint8_t *blob,
                              size_t len, tb_err_t *err);

/* Longest key that is a prefix of s[0..n): returns its length (0 if none)
 * and stores its pool offset in *value. */
size_t tok_charsmap_longest(const tok_charsmap_t *cm, const uint8_t *s,
                            size_t n, uint32_t *value);

/* Shortest key that is a prefix of s[0..n), as Hugging Face's Precompiled
 * normalizer uses it; same contract as tok_charsmap_longest. */
size_t tok_charsmap_shortest(const tok_charsmap_t *cm, const uint8_t *s,
                             size_t n, uint32_t *value);

/* The replacement string at a pool offset the walks returned, and its
 * length (without the NUL). */
const uint8_t *tok_charsmap_string(const tok_charsmap_t *cm, uint32_t value,
                                   size_t *len);

#endif
