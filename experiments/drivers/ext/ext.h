/*
 * ext: external libraries measured beside tokbench's own code, in the
 * benchmark driver only: Darts 0.32 (Debian's `darts`, the original
 * double array) and MARISA 0.2 (libmarisa) beside the trie layouts, and
 * SentencePiece 0.1.97 (libsentencepiece) beside the tokenizer.  The glue
 * is C++ (all three are C++ libraries) and is linked into build/tokbench
 * alone, never into libtokbench.a, so the library and the tests do not
 * depend on them; drv_lookup.c and drv_tokenize.c declare these functions
 * weak and say so when a binary lacks them.
 *
 * The tries: *
 * Every function has the signature of the trie_layout_t operation of the
 * same name, so the lookup driver can dispatch to them through the same
 * indirect calls as to a layout:
 *   build     from n keys sorted in byte order (a prefix before its
 *             extensions), keys[i][0..lens[i]) -> ids[i]; NULL with a
 *             message in msg[0..cap) on failure;
 *   lookup    the id of exactly s[0..n), or -1;
 *   prefixes  ids and lengths of the keys that are prefixes of s[0..n),
 *             shortest first, at most max written, the count returned;
 *   bytes     memory the structure holds for lookups (see each glue file);
 *   nodes     the library's own count of units or nodes.
 */
#ifndef XP_EXT_H
#define XP_EXT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
/* Laid out as trie_match_t (trie/trie.h), which C++ code does not include. */
typedef struct {
    uint32_t id, len;
} xp_ext_match_t;
extern "C" {
#else
#include "../../../trie/trie.h"
typedef trie_match_t xp_ext_match_t;
#endif

void *xp_ext_darts_build(const uint8_t *const *keys, const uint32_t *lens,
                         const uint32_t *ids, size_t n, char *msg, size_t cap);
void xp_ext_darts_free(void *impl);
int32_t xp_ext_darts_lookup(const void *impl, const uint8_t *s, size_t n);
size_t xp_ext_darts_prefixes(const void *impl, const uint8_t *s, size_t n,
                             xp_ext_match_t *out, size_t max);
size_t xp_ext_darts_bytes(const void *impl);
size_t xp_ext_darts_nodes(const void *impl);

void *xp_ext_marisa_build(const uint8_t *const *keys, const uint32_t *lens,
                          const uint32_t *ids, size_t n, char *msg, size_t cap);
void xp_ext_marisa_free(void *impl);
int32_t xp_ext_marisa_lookup(const void *impl, const uint8_t *s, size_t n);
size_t xp_ext_marisa_prefixes(const void *impl, const uint8_t *s, size_t n,
                              xp_ext_match_t *out, size_t max);
size_t xp_ext_marisa_bytes(const void *impl);
size_t xp_ext_marisa_nodes(const void *impl);

/* SentencePiece: a processor loaded from a .model file (NULL with a message
 * on failure); encode gives the number of ids of s[0..n) and folds them
 * into *sum (so the work cannot be optimized away), or -1 with a message. */
void *xp_ext_spm_load(const char *path, char *msg, size_t cap);
void xp_ext_spm_free(void *impl);
long xp_ext_spm_encode(void *impl, const uint8_t *s, size_t n, uint64_t *sum,
                       char *msg, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
