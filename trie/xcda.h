/*
 * xcda: the XOR-compressed compact double array as SentencePiece stores its
 * precompiled charsmap (the normalizer's rewrite table): the builder of such
 * blobs, and a trie layout over the same units.
 *
 * Blob layout (all integers little-endian):
 *   uint32  size    the byte length of the unit array (4 * units)
 *   uint32  units[size / 4]   darts-clone units (format in da.h); a key is a
 *                             byte string without NUL, its value the offset
 *                             of its replacement in the pool
 *   bytes   pool    replacement strings, each NUL-terminated
 *
 * Who reads, who builds: tok/charsmap.h (tok_charsmap_open, _longest,
 * _string) is the one reader of this format, the one the Unigram
 * normalizer uses and the one that checks a blob from a file; since trie
 * may use tok but not the other way round, the reader lives there and this
 * module only writes the format.  What trie_charsmap_build writes is read
 * back with tok's reader in the tests.
 *
 * The same format is also a trie layout (`xcda`: token ids as values and an
 * empty pool).  It holds the units trie_da_build makes, in host order,
 * without NUL children, as a charsmap's units must be; so that tokens with
 * NUL bytes (every real vocabulary has one) fit, the layout's keys are the
 * tokens in the shifted alphabet of base/da.h (xcda.c says how), while the
 * charsmap blobs built here keep their rules' bytes as SentencePiece
 * stores them and refuse NUL.
 */
#ifndef TRIE_XCDA_H
#define TRIE_XCDA_H

#include <stddef.h>
#include <stdint.h>

#include "../base/buf.h"
#include "../base/err.h"

/* One rewrite: from[0..from_len) becomes to[0..to_len). */
typedef struct {
    const uint8_t *from;
    uint32_t from_len;
    const uint8_t *to;
    uint32_t to_len;
} trie_charsmap_rule_t;

/* Appends the charsmap blob of the rules (in any order) to out, a blob that
 * tok_charsmap_open accepts; no rules append nothing, the empty blob being
 * the format's empty map (a unit array of no keys would have an empty
 * pool, which the reader refuses).  Fails on an empty or repeated `from`, a
 * NUL byte in either string, or a pool past 2^31 bytes, naming the rule. */
int trie_charsmap_build(const trie_charsmap_rule_t *rules, size_t n,
                        tb_buf_t *out, tb_err_t *err);

#endif
