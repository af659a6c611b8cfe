/*
 * ext: external trie libraries measured beside tokbench's own layouts, in
 * the benchmark driver only: Darts 0.32 (Debian's `darts`, the original
 * double array) and MARISA 0.2 (libmarisa).  The glue is C++ (both
 * libraries are C++ headers / libraries) and is linked into build/tokbench
 * alone, never into libtokbench.a, so the library and the tests do not
 * depend on them; drv_lookup.c declares these functions weak and says so
 * when a binary lacks them.
 *
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

#ifdef __cplusplus
}
#endif

#endif
