/*
 * dat: a double array of 32-bit darts-clone units (format in da.h) with
 * token ids as values, built from the sorted keys.
 *
 * A lookup is one unit read per byte.  The walk is depth first with an
 * explicit stack; at each node it offers only children that exist and that
 * the recognizer allows (its allowed_bytes hook; all 256 without one), so
 * unlike `dfs` it never offers a byte that has no child.  Where few bytes
 * are allowed it probes them; where many are, it follows the child chain
 * (da.h), 2 bytes per unit beside the 4-byte units.  NUL bytes, which
 * darts-clone cannot hold, are labels here too: their child sits in the
 * neighbouring block (see da.h).
 *
 * The chain and the walk's frames serve walks only, so the build makes
 * neither: dat_prepare_walk does, on the first trie_walk (or an explicit
 * trie_prepare_walk).  A trie that is only looked up, as a tokenizer's is,
 * holds the 4-byte units alone, which is what its comparison with Darts
 * (8-byte units, no walk) is about.
 */
#include <stdlib.h>
#include <string.h>

#include "da.h"
#include "trie.h"

/* What trie_bytes counts (dat_bytes): this struct and the units, and once
 * a walk has been prepared, the chain (2 bytes per unit) and the frames
 * too.  So a trie's bytes grow on its first walk: figures taken before any
 * walk are the lookup structure's, figures taken after are what a walking
 * trie holds.  The fields that prepare_walk fills (da.chain, frames) are
 * not read by lookup or prefixes, so lookups from other threads may run
 * while the first walk builds them; a walk, bytes or validate may not. */
typedef struct {
    trie_da_t da;
    uint32_t id_limit;
    trie_da_frame_t *frames; /* max_len + 1 walk frames, scratch; NULL
                              * until prepare_walk */
} dat_t;

static void dat_free(void *impl)
{
    dat_t *t = impl;
    if (!t)
        return;
    trie_da_free(&t->da);
    free(t->frames);
    free(t);
}

static void *dat_build(const trie_keys_t *k, tb_err_t *err)
{
    dat_t *t = calloc(1, sizeof *t);
    uint32_t *ids = malloc(sizeof *ids * (k->n ? k->n : 1));
    if (!t || !ids) {
        free(t);
        free(ids);
        tb_fail(err, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < k->n; i++)
        ids[i] = k->keys[i].id;
    int rc = trie_da_build(&t->da, k->keys, k->n, ids, TB_DA_NUL_FAR, err);
    free(ids);
    if (rc) {
        free(t);
        return NULL;
    }
    t->id_limit = k->id_limit;
    return t;
}

static int32_t dat_lookup(const void *impl, const uint8_t *s, size_t n)
{
    const tb_da_t *da = &((const dat_t *)impl)->da.a;
    return (int32_t)(da->direct ? tb_da_lookup_direct(da, s, n)
                                : tb_da_lookup(da, s, n));
}

static size_t dat_prefixes(const void *impl, const uint8_t *s, size_t n,
                           trie_match_t *out, size_t max)
{
    const tb_da_t *da = &((const dat_t *)impl)->da.a;
    return da->direct ? tb_da_prefixes_direct(da, s, n, out, max)
                      : tb_da_prefixes(da, s, n, out, max);
}

/* The frames and the chain, once; later calls check two pointers.  On
 * failure the trie is left as it was (a later call tries again). */
static int dat_prepare_walk(void *impl, tb_err_t *err)
{
    dat_t *t = impl;
    return trie_da_prepare_walk(&t->da, &t->frames, err);
}

/* Only after dat_prepare_walk (trie_walk sees to it): frames are needed. */
static uint64_t dat_walk(const void *impl, trie_rec_t *rec, tb_bitset_t *mask)
{
    const dat_t *t = impl;
    return trie_da_walk(&t->da, t->frames, rec, mask, t->id_limit);
}

static size_t dat_nodes(const void *impl)
{
    return ((const dat_t *)impl)->da.a.n;
}

static size_t dat_bytes(const void *impl)
{
    const dat_t *t = impl;
    return sizeof *t + t->da.a.n * sizeof *t->da.a.units +
           trie_da_walk_bytes(&t->da, t->frames);
}

/* The chain is checked where it has been built (trie_da_validate reads it
 * whenever it is there). */
static int dat_validate(const void *impl, tb_err_t *err)
{
    const dat_t *t = impl;
    if (t->da.a.n % 256)
        return tb_fail(err, "%zu units is no whole number of blocks", t->da.a.n);
    return trie_da_validate(&t->da, t->da.a.nkeys, t->id_limit, 0, err);
}

const trie_layout_t trie_layout_dat = {
    .name = "dat",
    .about = "darts-clone double array, 32-bit units, child chain built on the first walk",
    .build = dat_build,
    .free = dat_free,
    .lookup = dat_lookup,
    .prefixes = dat_prefixes,
    .walk = dat_walk,
    .prepare_walk = dat_prepare_walk,
    .nodes = dat_nodes,
    .bytes = dat_bytes,
    .validate = dat_validate,
};
