/* xcda: the builder of SentencePiece charsmap blobs and the `xcda` trie
 * layout over the same units (see xcda.h).  tok/charsmap reads the blobs. */
#include "xcda.h"

#include "../base/hash.h"
#include "da.h"

#include <stdlib.h>
#include <string.h>

static int put_le32(tb_buf_t *b, uint32_t v)
{
    uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
                     (uint8_t)(v >> 24)};
    return tb_buf_put(b, le, 4);
}

/* ---- building ---------------------------------------------------------- */

static int check_rule(const trie_charsmap_rule_t *r, size_t i, tb_err_t *err)
{
    const uint8_t *nul = memchr(r->from, 0, r->from_len);
    if (nul)
        return tb_fail(err, "charsmap rule %zu: its key has a NUL byte at "
                       "offset %td", i, nul - r->from);
    nul = r->to_len ? memchr(r->to, 0, r->to_len) : NULL;
    if (nul)
        return tb_fail(err, "charsmap rule %zu: its replacement has a NUL "
                       "byte at offset %td", i, nul - r->to);
    return 0;
}

/* The pool (each distinct replacement plus NUL, in order of first use) and
 * each rule's offset in it.  Replacements repeat a lot (NFKC maps many
 * keys to one letter), so sharing them keeps the pool small. */
static int make_pool(const trie_charsmap_rule_t *rules, size_t n, tb_buf_t *pool,
                     uint32_t *at, tb_err_t *err)
{
    tb_strmap_t seen;
    if (tb_strmap_init(&seen, n))
        return tb_fail(err, "out of memory for %zu charsmap rules", n);
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        const trie_charsmap_rule_t *r = &rules[i];
        int32_t old = r->to_len ? tb_strmap_get(&seen, r->to, r->to_len) : -1;
        if ((rc = check_rule(r, i, err)) || old >= 0) {
            at[i] = (uint32_t)old;
            continue;
        }
        if (pool->len + r->to_len + 1 > TB_DA_LEAF_BIT) {
            rc = tb_fail(err, "charsmap rule %zu: the pool passes 2^31 bytes", i);
            break;
        }
        at[i] = (uint32_t)pool->len;
        if (tb_buf_put(pool, r->to, r->to_len) || tb_buf_putc(pool, 0) ||
            (r->to_len && tb_strmap_put(&seen, r->to, r->to_len, (int32_t)at[i]) < 0))
            rc = tb_fail(err, "out of memory at charsmap rule %zu", i);
    }
    tb_strmap_free(&seen);
    return rc;
}

static int serialize(const trie_da_t *da, const tb_buf_t *pool, tb_buf_t *out,
                     tb_err_t *err)
{
    int rc = put_le32(out, (uint32_t)(da->a.n * 4));
    for (size_t i = 0; !rc && i < da->a.n; i++)
        rc = put_le32(out, da->a.units[i]);
    if (rc || tb_buf_put(out, pool->data, pool->len))
        return tb_fail(err, "out of memory writing a charsmap");
    return 0;
}

/* The double array over keys whose ids index `at`: values are at[id], or
 * the ids themselves without `at` (the trie layout).  Both the blobs and
 * the layout are this format, so both are held to its 32-bit size field. */
static int build_units(const trie_keys_t *k, const uint32_t *at, trie_da_t *da,
                       tb_err_t *err)
{
    uint32_t *values = malloc(sizeof *values * (k->n ? k->n : 1));
    if (!values)
        return tb_fail(err, "out of memory");
    for (size_t i = 0; i < k->n; i++)
        values[i] = at ? at[k->keys[i].id] : k->keys[i].id;
    int rc = trie_da_build(da, k->keys, k->n, values, 0, err);
    free(values);
    if (!rc && da->a.n > UINT32_MAX / 4)
        rc = tb_fail(err, "%zu units do not fit the 32-bit size field", da->a.n);
    return rc;
}

int trie_charsmap_build(const trie_charsmap_rule_t *rules, size_t n,
                        tb_buf_t *out, tb_err_t *err)
{
    if (n == 0) /* the empty map (see xcda.h) */
        return 0;
    const uint8_t **from = malloc(sizeof *from * n);
    uint32_t *lens = malloc(sizeof *lens * n);
    uint32_t *ids = malloc(sizeof *ids * n);
    uint32_t *at = malloc(sizeof *at * n);
    tb_buf_t pool = {0};
    trie_keys_t k = {0};
    trie_da_t da = {0};
    int rc = from && lens && ids && at ? 0 : tb_fail(err, "out of memory");
    for (size_t i = 0; !rc && i < n; i++) {
        from[i] = rules[i].from;
        lens[i] = rules[i].from_len;
        ids[i] = (uint32_t)i;
    }
    if (!rc && (make_pool(rules, n, &pool, at, err) ||
                trie_keys_from_list(&k, from, lens, ids, n, err) ||
                build_units(&k, at, &da, err) || serialize(&da, &pool, out, err)))
        rc = tb_wrap(err, "charsmap");
    trie_da_free(&da);
    trie_keys_free(&k);
    tb_buf_free(&pool);
    free(from);
    free(lens);
    free(ids);
    free(at);
    return rc;
}

/* ---- the trie layout --------------------------------------------------- */

/*
 * The layout keeps the units trie_da_build made, in host order, instead of
 * serializing them and decoding the blob again: the values are the same
 * either way, and reading blobs is tok/charsmap's job, not the layout's.
 * Its keys are the tokens' bytes in the shifted alphabet (base/da.h: byte
 * b is label b + 1 up to 0xFD; 0xFE and 0xFF are TB_DA_ESC then 1 or 2),
 * so no label is NUL and every vocabulary fits the charsmap format: the
 * units are a blob tok_charsmap_open accepts, whose keys are the encoded
 * tokens.  A token of n bytes takes n labels plus one per 0xFE or 0xFF byte
 * (the special marker, and byte tokens that no UTF-8 holds); lookups
 * encode as they step, walks decode (trie_da_walk), and both count bytes,
 * not labels.  The walk follows the child chain, built on the first walk
 * as for `dat`.
 */
typedef struct {
    trie_da_t da;            /* the blob's units (token ids as values) */
    uint32_t id_limit;
    trie_da_frame_t *frames; /* a.max_len + 1 walk frames (the encoded
                              * length), scratch; NULL until prepare_walk */
} xcda_t;

static void xcda_free(void *impl)
{
    xcda_t *t = impl;
    if (!t)
        return;
    trie_da_free(&t->da);
    free(t->frames);
    free(t);
}

/* The keys in the shifted alphabet, in the same order (the code keeps it),
 * into e (its own pool). */
static int shift_keys(const trie_keys_t *k, trie_keys_t *e, tb_err_t *err)
{
    size_t bytes = 0;
    for (size_t i = 0; i < k->n; i++)
        for (uint32_t j = 0; j < k->keys[i].len; j++)
            bytes += 1u + (k->keys[i].s[j] >= 0xFE);
    memset(e, 0, sizeof *e);
    e->keys = malloc(sizeof *e->keys * (k->n ? k->n : 1));
    e->pool = malloc(bytes ? bytes : 1);
    if (!e->keys || !e->pool)
        return tb_fail(err, "out of memory for %zu shifted keys", k->n);
    e->n = k->n;
    e->id_limit = k->id_limit;
    uint8_t *w = e->pool;
    for (size_t i = 0; i < k->n; i++) {
        const trie_key_t *key = &k->keys[i];
        e->keys[i] = (trie_key_t){.s = w, .id = key->id};
        for (uint32_t j = 0; j < key->len; j++) {
            unsigned n;
            tb_da_shift(key->s[j], w, &n);
            w += n;
        }
        e->keys[i].len = (uint32_t)(w - e->keys[i].s);
        if (e->keys[i].len > e->max_len)
            e->max_len = e->keys[i].len;
    }
    return 0;
}

static void *xcda_build(const trie_keys_t *k, tb_err_t *err)
{
    xcda_t *t = calloc(1, sizeof *t);
    trie_keys_t e;
    if (!t) {
        tb_fail(err, "out of memory");
        return NULL;
    }
    t->id_limit = k->id_limit;
    int rc = shift_keys(k, &e, err) || build_units(&e, NULL, &t->da, err);
    free(e.keys);
    free(e.pool);
    if (rc) {
        xcda_free(t);
        return NULL;
    }
    t->da.a.shifted = 1;
    return t;
}

static int32_t xcda_lookup(const void *impl, const uint8_t *s, size_t n)
{
    return (int32_t)tb_da_lookup(&((const xcda_t *)impl)->da.a, s, n);
}

static size_t xcda_prefixes(const void *impl, const uint8_t *s, size_t n,
                            trie_match_t *out, size_t max)
{
    return tb_da_prefixes(&((const xcda_t *)impl)->da.a, s, n, out, max);
}

/* The frames and the chain, once (as for dat). */
static int xcda_prepare_walk(void *impl, tb_err_t *err)
{
    xcda_t *t = impl;
    return trie_da_prepare_walk(&t->da, &t->frames, err);
}

static uint64_t xcda_walk(const void *impl, trie_rec_t *rec, tb_bitset_t *mask)
{
    const xcda_t *t = impl;
    return trie_da_walk(&t->da, t->frames, rec, mask, t->id_limit);
}

static size_t xcda_nodes(const void *impl)
{
    return ((const xcda_t *)impl)->da.a.n;
}

/* The format's size: the blob's 4-byte size field and its units (the pool
 * is empty), which the host-order units held here take too; once walked,
 * the chain and the frames as well. */
static size_t xcda_bytes(const void *impl)
{
    const xcda_t *t = impl;
    return sizeof *t + 4 + t->da.a.n * sizeof(uint32_t) +
           trie_da_walk_bytes(&t->da, t->frames);
}

static int xcda_validate(const void *impl, tb_err_t *err)
{
    const xcda_t *t = impl;
    return trie_da_validate(&t->da, t->da.a.nkeys, t->id_limit, 0, err);
}

const trie_layout_t trie_layout_xcda = {
    .name = "xcda",
    .about = "SentencePiece charsmap double array (its units, token ids as values, "
             "keys in a shifted alphabet without NUL)",
    .build = xcda_build,
    .free = xcda_free,
    .lookup = xcda_lookup,
    .prefixes = xcda_prefixes,
    .walk = xcda_walk,
    .prepare_walk = xcda_prepare_walk,
    .nodes = xcda_nodes,
    .bytes = xcda_bytes,
    .validate = xcda_validate,
};
