/*
 * xcda: the XOR-compressed compact double array as SentencePiece stores its
 * precompiled charsmap (the normalizer's rewrite table), read and written.
 *
 * Blob layout (all integers little-endian):
 *   uint32  size    the byte length of the unit array (4 * units)
 *   uint32  units[size / 4]   darts-clone units (format in da.h); a key is a
 *                             byte string without NUL, its value the offset
 *                             of its replacement in the pool
 *   bytes   pool    replacement strings, each NUL-terminated
 * The reader trusts nothing in a blob: sizes, offsets and strings are
 * checked when it is opened, and every probe is range-checked.
 *
 * The same format is also a trie layout (`xcda`, token ids as values and an
 * empty pool), so that its lookups run through this reader's code; tokens
 * containing NUL cannot be charsmap keys and are refused.
 */
#ifndef TRIE_XCDA_H
#define TRIE_XCDA_H

#include <stddef.h>
#include <stdint.h>

#include "../base/buf.h"
#include "../base/err.h"
#include "da.h"

typedef struct {
    trie_da_t da;          /* units decoded to host order */
    const uint8_t *pool;   /* borrowed from the blob */
    size_t pool_len;
} trie_xcda_t;

/* Opens blob[0..len) (which must outlive x): checks the size field, the
 * unit structure, and that every value points at a NUL-terminated string
 * inside the pool. */
int trie_xcda_open(trie_xcda_t *x, const uint8_t *blob, size_t len,
                   tb_err_t *err);
void trie_xcda_close(trie_xcda_t *x);

/* The longest key that is a prefix of s[0..n): returns its length and sets
 * *to / *to_len to its replacement, or returns 0 if no key matches. */
size_t trie_xcda_longest(const trie_xcda_t *x, const uint8_t *s, size_t n,
                         const uint8_t **to, size_t *to_len);

/* One rewrite: from[0..from_len) becomes to[0..to_len). */
typedef struct {
    const uint8_t *from;
    uint32_t from_len;
    const uint8_t *to;
    uint32_t to_len;
} trie_charsmap_rule_t;

/* Appends the charsmap blob of the rules (in any order) to out.  Fails on an
 * empty or repeated `from`, a NUL byte in either string, or a pool past
 * 2^31 bytes, naming the rule. */
int trie_charsmap_build(const trie_charsmap_rule_t *rules, size_t n,
                        tb_buf_t *out, tb_err_t *err);

#endif
