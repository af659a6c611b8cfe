/*
 * drv_lookup: exact lookup and common-prefix search in one trie layout, or
 * in one of the external libraries it is compared with.
 *
 * Row: vocabulary, layout, pattern, options.
 *   layout    a trie_layouts[] name, or an external library: `darts`
 *             (Darts 0.32, the original double array) or `marisa`
 *             (libmarisa's MARISA trie).  Those are other people's code,
 *             linked into build/tokbench only (experiments/drivers/ext/); they are
 *             dispatched through a trie_layout_t of their own, so they run
 *             in the same repetition loop, through the same indirect calls,
 *             under the same counter sources as the layouts.
 *   pattern   exact     every key looked up once per repetition;
 *             prefixes  common-prefix search: with a corpus, at every byte
 *                       offset of it (what Unigram Viterbi asks of its
 *                       trie; option max_bytes=N uses the first N bytes);
 *                       without one, of every key's bytes.
 *   options   order=random (default) or sorted: the order of the keys for
 *             exact and key prefix search.  Sorted order lets caches and
 *             the branch predictor follow the trie; random is a fixed
 *             shuffle.  Each repetition starts the order at another place.
 *             nul=omit: leave out keys with a NUL byte (for a comparison
 *             with a library that cannot hold them; every row of that
 *             comparison must say so); how many were left out is recorded.
 * bytes = bytes searched, items = searches.
 *
 * Setup checks that every key is found with its id, so nothing looks fast
 * by being wrong; for an external library it also checks its prefix search
 * and its misses against the `dat` layout on every key.  extra() records,
 * per layout and vocabulary: build time (wallclock build_ns, BUILD_REPS
 * builds), and (source "static") keys, keys_left_out, keys_with_nul,
 * trie_nodes, trie_bytes, bytes_per_key and nodes_per_key, with impl
 * "tokbench" for a layout and the library's name for an external one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/file.h"
#include "../../trie/trie.h"
#include "../cli/cli.h"
#include "driver.h"
#include "ext/ext.h"
#include "setup.h"

#define MAX_MATCHES 64
#define BUILD_REPS 3

/* The glue is in build/tokbench only: elsewhere (the tests' programs, a
 * program linked with libtokbench.a alone) these are null. */
#pragma weak xp_ext_darts_build
#pragma weak xp_ext_darts_free
#pragma weak xp_ext_darts_lookup
#pragma weak xp_ext_darts_prefixes
#pragma weak xp_ext_darts_bytes
#pragma weak xp_ext_darts_nodes
#pragma weak xp_ext_marisa_build
#pragma weak xp_ext_marisa_free
#pragma weak xp_ext_marisa_lookup
#pragma weak xp_ext_marisa_prefixes
#pragma weak xp_ext_marisa_bytes
#pragma weak xp_ext_marisa_nodes

/* ---- external libraries as layouts -------------------------------------- */

typedef void *(*ext_build_fn)(const uint8_t *const *, const uint32_t *,
                              const uint32_t *, size_t, char *, size_t);

static void *ext_build(const char *name, ext_build_fn build,
                       const trie_keys_t *k, tb_err_t *err)
{
    if (!build) {
        tb_fail(err, "%s is an external library linked into build/tokbench "
                "only (experiments/drivers/ext/); this program lacks it", name);
        return NULL;
    }
    const uint8_t **strs = malloc(sizeof *strs * (k->n ? k->n : 1));
    uint32_t *lens = malloc(sizeof *lens * (k->n ? k->n : 1));
    uint32_t *ids = malloc(sizeof *ids * (k->n ? k->n : 1));
    void *impl = NULL;
    if (!strs || !lens || !ids) {
        tb_fail(err, "out of memory");
    } else {
        for (size_t i = 0; i < k->n; i++) {
            strs[i] = k->keys[i].s;
            lens[i] = k->keys[i].len;
            ids[i] = k->keys[i].id;
        }
        char msg[256] = "";
        if (!(impl = build(strs, lens, ids, k->n, msg, sizeof msg)))
            tb_fail(err, "%s", msg);
    }
    free(strs);
    free(lens);
    free(ids);
    return impl;
}

static void *darts_build(const trie_keys_t *k, tb_err_t *err)
{
    return ext_build("darts", xp_ext_darts_build, k, err);
}

static void *marisa_build(const trie_keys_t *k, tb_err_t *err)
{
    return ext_build("marisa", xp_ext_marisa_build, k, err);
}

/* No walk and no validate: the driver never asks for them. */
static const trie_layout_t ext_darts = {
    .name = "darts",
    .about = "Darts 0.32 double array (external library, Debian darts)",
    .build = darts_build,
    .free = xp_ext_darts_free,
    .lookup = xp_ext_darts_lookup,
    .prefixes = xp_ext_darts_prefixes,
    .nodes = xp_ext_darts_nodes,
    .bytes = xp_ext_darts_bytes,
};

static const trie_layout_t ext_marisa = {
    .name = "marisa",
    .about = "MARISA trie (external library, libmarisa)",
    .build = marisa_build,
    .free = xp_ext_marisa_free,
    .lookup = xp_ext_marisa_lookup,
    .prefixes = xp_ext_marisa_prefixes,
    .nodes = xp_ext_marisa_nodes,
    .bytes = xp_ext_marisa_bytes,
};

static const trie_layout_t *const ext_layouts[] = {&ext_darts, &ext_marisa, NULL};

/* ---- state ---------------------------------------------------------------- */

typedef struct {
    const trie_layout_t *layout;
    int external;
    trie_t *trie;
    trie_keys_t keys;
    size_t left_out, with_nul; /* keys with a NUL byte: left out, in all */
    uint32_t *order;   /* a permutation of the keys */
    uint8_t *text;     /* the corpus, for prefixes */
    size_t len;
    int prefixes;
    double build_ns;
} lookup_t;

static void lookup_teardown(void *state)
{
    lookup_t *s = state;
    if (!s)
        return;
    trie_free(s->trie);
    trie_keys_free(&s->keys);
    free(s->order);
    free(s->text);
    free(s);
}

/* Drops the keys with a NUL byte when asked to, counting them either way;
 * the keys stay sorted. */
static void filter_nul(lookup_t *s, int omit)
{
    size_t out = 0;
    for (size_t i = 0; i < s->keys.n; i++) {
        const trie_key_t *k = &s->keys.keys[i];
        int nul = memchr(k->s, 0, k->len) != NULL;
        s->with_nul += (size_t)nul;
        if (nul && omit)
            continue;
        s->keys.keys[out++] = *k;
    }
    s->left_out = s->keys.n - out;
    s->keys.n = out;
}

static int load_keys(lookup_t *s, const xp_row_t *row, xp_env_t *env, tb_err_t *err)
{
    char path[4096], buf[16];
    if (xp_row_vocab(row, env, path, sizeof path, err))
        return -1;
    const char *nul = xp_row_option(row, "nul", buf, sizeof buf);
    if (nul && strcmp(nul, "omit") && strcmp(nul, "keep"))
        return tb_fail(err, "option nul=%s: expected omit or keep", nul);
    int rc = xp_vocab_keys(path, &s->keys, NULL, err);
    if (!rc)
        filter_nul(s, nul && !strcmp(nul, "omit"));
    return rc;
}

/* The keys in sorted order or in a fixed shuffle (xorshift, Fisher-Yates):
 * the same order every run. */
static int order_keys(lookup_t *s, const xp_row_t *row, tb_err_t *err)
{
    char buf[16];
    const char *order = xp_row_option(row, "order", buf, sizeof buf);
    if (order && strcmp(order, "random") && strcmp(order, "sorted"))
        return tb_fail(err, "option order=%s: expected random or sorted", order);
    s->order = malloc((s->keys.n ? s->keys.n : 1) * sizeof *s->order);
    if (!s->order)
        return tb_fail(err, "out of memory");
    for (size_t i = 0; i < s->keys.n; i++)
        s->order[i] = (uint32_t)i;
    if (order && !strcmp(order, "sorted"))
        return 0;
    uint64_t x = 0x2545F4914F6CDD1DULL;
    for (size_t i = s->keys.n; i > 1; i--) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t j = (size_t)(x % i);
        uint32_t t = s->order[i - 1];
        s->order[i - 1] = s->order[j];
        s->order[j] = t;
    }
    return 0;
}

static int check_exact(const lookup_t *s, tb_err_t *err)
{
    for (size_t i = 0; i < s->keys.n; i++) {
        const trie_key_t *k = &s->keys.keys[i];
        int32_t id = trie_lookup(s->trie, k->s, k->len);
        if (id != (int32_t)k->id)
            return tb_fail(err, "layout %s: key %zu (token id %u, %u bytes) looked "
                           "up as %d", s->layout->name, i, k->id, k->len, id);
    }
    return 0;
}

/* An external library against the dat layout, on every key: its prefix
 * search, and the lookup of the key less its last byte and of the key with
 * one byte more (mostly misses). */
static int check_against_dat(const lookup_t *s, tb_err_t *err)
{
    trie_t *ref = trie_build(&trie_layout_dat, &s->keys, err);
    if (!ref)
        return -1;
    trie_match_t a[MAX_MATCHES], b[MAX_MATCHES];
    uint8_t *probe = malloc((size_t)s->keys.max_len + 1);
    int rc = probe ? 0 : tb_fail(err, "out of memory");
    for (size_t i = 0; !rc && i < s->keys.n; i++) {
        const trie_key_t *k = &s->keys.keys[i];
        size_t na = trie_prefixes(s->trie, k->s, k->len, a, MAX_MATCHES);
        size_t nb = trie_prefixes(ref, k->s, k->len, b, MAX_MATCHES);
        size_t m = na < MAX_MATCHES ? na : MAX_MATCHES;
        if (na != nb || memcmp(a, b, m * sizeof *a))
            rc = tb_fail(err, "layout %s: prefix search of key %zu (token id %u) "
                         "gives %zu matches, dat gives %zu%s", s->layout->name, i,
                         k->id, na, nb, na == nb ? " (others)" : "");
        memcpy(probe, k->s, k->len);
        probe[k->len] = (uint8_t)(k->id * 131u);
        for (size_t n = k->len - 1; !rc && n <= (size_t)k->len + 1; n++)
            if (trie_lookup(s->trie, probe, n) != trie_lookup(ref, probe, n))
                rc = tb_fail(err, "layout %s: %zu bytes near key %zu (token id "
                             "%u) look up as %d, in dat as %d", s->layout->name,
                             n, i, k->id, trie_lookup(s->trie, probe, n),
                             trie_lookup(ref, probe, n));
    }
    free(probe);
    trie_free(ref);
    return rc;
}

static int load_corpus(lookup_t *s, const xp_row_t *row, xp_env_t *env, tb_err_t *err)
{
    char path[4096];
    if (xp_resolve_spec(row->corpus, path, sizeof path, err) ||
        xp_env_input(env, "corpus", path, err) ||
        tb_read_file(path, &s->text, &s->len, err))
        return tb_wrap(err, "corpus '%s'", row->corpus);
    uint64_t max;
    if (xp_row_uint(row, "max_bytes", 0, 1, UINT64_MAX, &max, err))
        return -1;
    if (max && max < s->len)
        s->len = (size_t)max;
    return 0;
}

static const trie_layout_t *find_layout(const char *name, int *external)
{
    *external = 0;
    const trie_layout_t *l = trie_layout_find(name);
    for (size_t i = 0; !l && ext_layouts[i]; i++)
        if (!strcmp(ext_layouts[i]->name, name)) {
            l = ext_layouts[i];
            *external = 1;
        }
    return l;
}

static int lookup_setup(const xp_row_t *row, xp_env_t *env, void **state, tb_err_t *err)
{
    int external;
    const trie_layout_t *layout = find_layout(row->layout, &external);
    if (!layout)
        return tb_fail(err, "field 'layout': no trie layout or external library "
                       "'%s' (darts, marisa)", row->layout);
    int prefixes = !strcmp(row->pattern, "prefixes");
    if (!prefixes && strcmp(row->pattern, "exact"))
        return tb_fail(err, "field 'pattern': '%s' is not exact or prefixes", row->pattern);
    lookup_t *s = calloc(1, sizeof *s);
    if (!s)
        return tb_fail(err, "out of memory");
    s->layout = layout;
    s->external = external;
    s->prefixes = prefixes;
    int rc = load_keys(s, row, env, err);
    if (!rc) {
        if (!(s->trie = xp_build_timed(layout, &s->keys, &s->build_ns, err)))
            rc = -1;
    }
    if (!rc)
        rc = check_exact(s, err);
    if (!rc && external)
        rc = check_against_dat(s, err);
    if (!rc)
        rc = prefixes && row->corpus[0] ? load_corpus(s, row, env, err)
                                        : order_keys(s, row, err);
    if (rc)
        lookup_teardown(s);
    else
        *state = s;
    return rc;
}

/* ---- the measured work ---------------------------------------------------- */

static void rep_exact(lookup_t *s, unsigned rep, xp_qty_t *q)
{
    size_t n = s->keys.n, start = n ? ((size_t)rep * 7919) % n : 0;
    uint64_t acc = 0, bytes = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = s->order[(start + i) % n];
        const trie_key_t *key = &s->keys.keys[k];
        acc += (uint32_t)trie_lookup(s->trie, key->s, key->len);
        bytes += key->len;
    }
    q->items = n;
    q->bytes = bytes;
    q->sink ^= acc;
}

static void rep_key_prefixes(lookup_t *s, unsigned rep, xp_qty_t *q)
{
    trie_match_t m[MAX_MATCHES];
    size_t n = s->keys.n, start = n ? ((size_t)rep * 7919) % n : 0;
    uint64_t acc = 0, bytes = 0;
    for (size_t i = 0; i < n; i++) {
        const trie_key_t *key = &s->keys.keys[s->order[(start + i) % n]];
        size_t found = trie_prefixes(s->trie, key->s, key->len, m, MAX_MATCHES);
        acc += found;
        if (found)
            acc ^= m[0].id;
        bytes += key->len;
    }
    q->items = n;
    q->bytes = bytes;
    q->sink ^= acc;
}

static void rep_corpus_prefixes(lookup_t *s, xp_qty_t *q)
{
    trie_match_t m[MAX_MATCHES];
    uint64_t acc = 0;
    size_t window = s->keys.max_len;
    for (size_t i = 0; i < s->len; i++) {
        size_t n = s->len - i < window ? s->len - i : window;
        size_t found = trie_prefixes(s->trie, s->text + i, n, m, MAX_MATCHES);
        acc += found;
        if (found)
            acc ^= m[0].id;
    }
    q->items = s->len;
    q->bytes = s->len;
    q->sink ^= acc;
}

static int lookup_rep(void *state, unsigned rep, xp_qty_t *q, tb_err_t *err)
{
    (void)err;
    lookup_t *s = state;
    if (s->prefixes && s->text)
        rep_corpus_prefixes(s, q);
    else if (s->prefixes)
        rep_key_prefixes(s, rep, q);
    else
        rep_exact(s, rep, q);
    return 0;
}

/* ---- what the structure costs ----------------------------------------- */

static int record(xp_env_t *env, const lookup_t *s, const char *source,
                  const char *metric, unsigned rep, double value, tb_err_t *err)
{
    xp_meas_t m = {.value = value, .rep = rep, .items = s->keys.n};
    snprintf(m.source, sizeof m.source, "%s", source);
    snprintf(m.impl, sizeof m.impl, "%s", s->external ? s->layout->name : "tokbench");
    snprintf(m.metric, sizeof m.metric, "%s", metric);
    return xp_env_record(env, &m, err);
}

static int lookup_extra(void *state, const xp_row_t *row, xp_env_t *env, tb_err_t *err)
{
    (void)row;
    lookup_t *s = state;
    double keys = s->keys.n ? (double)s->keys.n : 1;
    double nodes = (double)trie_nodes(s->trie), bytes = (double)trie_bytes(s->trie);
    if (record(env, s, "static", "keys", 0, (double)s->keys.n, err) ||
        record(env, s, "static", "keys_left_out", 0, (double)s->left_out, err) ||
        record(env, s, "static", "keys_with_nul", 0, (double)s->with_nul, err) ||
        record(env, s, "static", "trie_nodes", 0, nodes, err) ||
        record(env, s, "static", "trie_bytes", 0, bytes, err) ||
        record(env, s, "static", "bytes_per_key", 0, bytes / keys, err) ||
        record(env, s, "static", "nodes_per_key", 0, nodes / keys, err) ||
        record(env, s, "wallclock", "build_ns", 0, s->build_ns, err))
        return -1;
    /* More builds: one is too noisy to compare layouts by. */
    for (unsigned r = 1; r < BUILD_REPS; r++) {
        double t0 = xp_now_ns();
        trie_t *t = trie_build(s->layout, &s->keys, err);
        double ns = xp_now_ns() - t0;
        if (!t)
            return -1;
        trie_free(t);
        if (record(env, s, "wallclock", "build_ns", r, ns, err))
            return -1;
    }
    return 0;
}

const xp_driver_t xp_driver_lookup = {
    .name = "lookup",
    .summary = "exact lookup or prefix search per layout, and Darts / MARISA "
               "(external) on the same keys (options: order=sorted|random, nul=omit)",
    .setup = lookup_setup,
    .rep = lookup_rep,
    .extra = lookup_extra,
    .teardown = lookup_teardown,
    .default_reps = 11,
};
