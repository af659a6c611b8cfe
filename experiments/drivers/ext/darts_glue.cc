/*
 * darts_glue: Darts 0.32 (the original double array, /usr/include/darts.h)
 * behind the functions of ext.h, for the lookup driver's comparison.
 *
 * Darts::DoubleArray has 8-byte units (int base, unsigned check) and
 * stores a value per key.  Given explicit lengths it codes byte b as b + 1
 * and keeps code 0 for the end of a key, so keys with NUL bytes are stored
 * too; the driver still checks every key after the build.  Values must be
 * non-negative ints: token ids are.  Its searches take a length of 0 to
 * mean "call strlen", so the empty string is answered here, not by Darts.
 */
#include <darts.h>

#include <cstdio>
#include <new>
#include <vector>

#include "ext.h"

static_assert(sizeof(xp_ext_match_t) == 8, "xp_ext_match_t is trie_match_t");

namespace {

struct darts_trie {
    Darts::DoubleArray da;
};

} // namespace

extern "C" void *xp_ext_darts_build(const uint8_t *const *keys,
                                    const uint32_t *lens, const uint32_t *ids,
                                    size_t n, char *msg, size_t cap)
{
    darts_trie *t = new (std::nothrow) darts_trie;
    if (!t) {
        std::snprintf(msg, cap, "darts: out of memory");
        return nullptr;
    }
    try {
        std::vector<const char *> k(n);
        std::vector<size_t> l(n);
        std::vector<Darts::DoubleArray::value_type> v(n);
        for (size_t i = 0; i < n; i++) {
            k[i] = reinterpret_cast<const char *>(keys[i]);
            l[i] = lens[i];
            v[i] = static_cast<Darts::DoubleArray::value_type>(ids[i]);
        }
        int rc = t->da.build(n, k.data(), l.data(), v.data());
        if (rc != 0) {
            /* -2: a negative value, -3: keys out of order (darts.h). */
            std::snprintf(msg, cap, "darts: build failed with code %d", rc);
            delete t;
            return nullptr;
        }
    } catch (const std::exception &e) {
        std::snprintf(msg, cap, "darts: %s", e.what());
        delete t;
        return nullptr;
    }
    return t;
}

extern "C" void xp_ext_darts_free(void *impl)
{
    delete static_cast<darts_trie *>(impl);
}

extern "C" int32_t xp_ext_darts_lookup(const void *impl, const uint8_t *s,
                                       size_t n)
{
    if (n == 0)
        return -1;
    const darts_trie *t = static_cast<const darts_trie *>(impl);
    return t->da.exactMatchSearch<Darts::DoubleArray::value_type>(
        reinterpret_cast<const char *>(s), n);
}

extern "C" size_t xp_ext_darts_prefixes(const void *impl, const uint8_t *s,
                                        size_t n, xp_ext_match_t *out,
                                        size_t max)
{
    if (n == 0)
        return 0;
    const darts_trie *t = static_cast<const darts_trie *>(impl);
    /* Darts writes at most `max` pairs of its own type and counts them all;
     * a bounded stack buffer keeps the call free of allocation. */
    Darts::DoubleArray::result_pair_type r[64];
    size_t room = max < 64 ? max : 64;
    size_t found = t->da.commonPrefixSearch(reinterpret_cast<const char *>(s),
                                            r, room, n);
    for (size_t i = 0; i < found && i < room; i++)
        out[i] = xp_ext_match_t{static_cast<uint32_t>(r[i].value),
                                static_cast<uint32_t>(r[i].length)};
    return found;
}

extern "C" size_t xp_ext_darts_bytes(const void *impl)
{
    return static_cast<const darts_trie *>(impl)->da.total_size();
}

extern "C" size_t xp_ext_darts_nodes(const void *impl)
{
    return static_cast<const darts_trie *>(impl)->da.size();
}
