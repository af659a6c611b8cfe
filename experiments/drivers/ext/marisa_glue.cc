/*
 * marisa_glue: a MARISA trie (libmarisa 0.2, recursive LOUDS tries with
 * default settings) behind the functions of ext.h, for the lookup
 * driver's comparison.
 *
 * MARISA numbers its keys itself (key ids 0 .. n-1 in its own order), so
 * a lookup here is MARISA's lookup plus one read of a key id -> token id
 * array; that array is part of what a tokenizer would hold and bytes()
 * counts it beside MARISA's own total_size().  Searches go through one
 * Agent kept with the trie (MARISA's query state), which makes a trie
 * usable by one thread at a time, as the driver uses it.  MARISA reports
 * errors by exceptions; none escape into C.
 */
#include <marisa.h>

#include <cstdio>
#include <new>
#include <vector>

#include "ext.h"

static_assert(sizeof(xp_ext_match_t) == 8, "xp_ext_match_t is trie_match_t");

namespace {

struct marisa_glue {
    marisa::Trie trie;
    std::vector<uint32_t> token; /* MARISA key id -> token id */
    mutable marisa::Agent agent;
};

} // namespace

extern "C" void *xp_ext_marisa_build(const uint8_t *const *keys,
                                     const uint32_t *lens, const uint32_t *ids,
                                     size_t n, char *msg, size_t cap)
{
    marisa_glue *t = new (std::nothrow) marisa_glue;
    if (!t) {
        std::snprintf(msg, cap, "marisa: out of memory");
        return nullptr;
    }
    try {
        marisa::Keyset ks;
        for (size_t i = 0; i < n; i++)
            ks.push_back(reinterpret_cast<const char *>(keys[i]), lens[i]);
        t->trie.build(ks);
        if (t->trie.num_keys() != n) {
            std::snprintf(msg, cap, "marisa: %zu keys built from %zu",
                          t->trie.num_keys(), n);
            delete t;
            return nullptr;
        }
        /* After build() each keyset entry carries the id MARISA gave it. */
        t->token.assign(n, 0);
        for (size_t i = 0; i < n; i++)
            t->token[ks[i].id()] = ids[i];
    } catch (const std::exception &e) {
        std::snprintf(msg, cap, "marisa: %s", e.what());
        delete t;
        return nullptr;
    }
    return t;
}

extern "C" void xp_ext_marisa_free(void *impl)
{
    delete static_cast<marisa_glue *>(impl);
}

extern "C" int32_t xp_ext_marisa_lookup(const void *impl, const uint8_t *s,
                                        size_t n)
{
    const marisa_glue *t = static_cast<const marisa_glue *>(impl);
    if (n == 0)
        return -1;
    try {
        t->agent.set_query(reinterpret_cast<const char *>(s), n);
        if (!t->trie.lookup(t->agent))
            return -1;
        return static_cast<int32_t>(t->token[t->agent.key().id()]);
    } catch (const std::exception &) {
        return -1;
    }
}

extern "C" size_t xp_ext_marisa_prefixes(const void *impl, const uint8_t *s,
                                         size_t n, xp_ext_match_t *out,
                                         size_t max)
{
    const marisa_glue *t = static_cast<const marisa_glue *>(impl);
    size_t found = 0;
    try {
        t->agent.set_query(reinterpret_cast<const char *>(s), n);
        while (t->trie.common_prefix_search(t->agent)) {
            if (found < max)
                out[found] = xp_ext_match_t{t->token[t->agent.key().id()],
                                            static_cast<uint32_t>(
                                                t->agent.key().length())};
            found++;
        }
    } catch (const std::exception &) {
        return found;
    }
    return found;
}

extern "C" size_t xp_ext_marisa_bytes(const void *impl)
{
    const marisa_glue *t = static_cast<const marisa_glue *>(impl);
    return t->trie.total_size() + t->token.size() * sizeof(uint32_t);
}

extern "C" size_t xp_ext_marisa_nodes(const void *impl)
{
    return static_cast<const marisa_glue *>(impl)->trie.num_nodes();
}
