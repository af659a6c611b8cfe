/* trie: key preparation, the layout table and the dispatch every caller goes
 * through (see trie.h). */
#include "trie.h"

#include <stdlib.h>
#include <string.h>

const trie_layout_t *const trie_layouts[] = {
    &trie_layout_dfs,
    &trie_layout_dat,
    &trie_layout_xcda,
    &trie_layout_map,
    &trie_layout_cover,
    NULL,
};

const trie_layout_t *trie_layout_find(const char *name)
{
    for (size_t i = 0; trie_layouts[i]; i++)
        if (strcmp(trie_layouts[i]->name, name) == 0)
            return trie_layouts[i];
    return NULL;
}

/* ---- keys ------------------------------------------------------------ */

/* Byte order, a prefix before its extensions, then ascending id so that the
 * lowest id of a repeated string comes first. */
static int key_cmp(const void *a, const void *b)
{
    const trie_key_t *x = a, *y = b;
    uint32_t n = x->len < y->len ? x->len : y->len;
    int c = n ? memcmp(x->s, y->s, n) : 0;
    if (c)
        return c;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static int same_bytes(const trie_key_t *x, const trie_key_t *y)
{
    return x->len == y->len && memcmp(x->s, y->s, x->len) == 0;
}

/* Sorts k->keys, then moves repeats out into the alias list (or refuses
 * them when strict), and fills id_limit and max_len. */
static int finish_keys(trie_keys_t *k, int strict, tb_err_t *err)
{
    qsort(k->keys, k->n, sizeof *k->keys, key_cmp);
    k->alias = malloc(2 * sizeof *k->alias * (k->n ? k->n : 1));
    if (!k->alias)
        return tb_fail(err, "out of memory sorting %zu trie keys", k->n);
    size_t out = 0;
    for (size_t i = 0; i < k->n; i++) {
        trie_key_t *key = &k->keys[i];
        if (key->id >= k->id_limit)
            k->id_limit = key->id + 1;
        if (out && same_bytes(&k->keys[out - 1], key)) {
            if (strict)
                return tb_fail(err, "token ids %u and %u have the same %u "
                               "bytes", k->keys[out - 1].id, key->id, key->len);
            k->alias[2 * k->nalias] = key->id;
            k->alias[2 * k->nalias + 1] = k->keys[out - 1].id;
            k->nalias++;
            continue;
        }
        if (key->len > k->max_len)
            k->max_len = key->len;
        k->keys[out++] = *key;
    }
    k->n = out;
    return 0;
}

static int is_special(const tok_vocab_t *v, uint32_t id)
{
    uint8_t kind = v->kind[id];
    return v->special[id] || kind == TOK_CONTROL || kind == TOK_UNKNOWN ||
           kind == TOK_UNUSED;
}

int trie_keys_from_vocab(trie_keys_t *k, const tok_vocab_t *v,
                         trie_specials_t specials, tb_err_t *err)
{
    memset(k, 0, sizeof *k);
    k->id_limit = v->size;
    k->keys = malloc(sizeof *k->keys * (v->size ? v->size : 1));
    k->pool = malloc(v->offset[v->size] + v->size + 1);
    if (!k->keys || !k->pool) {
        trie_keys_free(k);
        return tb_fail(err, "out of memory for the keys of %u tokens", v->size);
    }
    size_t at = 0;
    for (uint32_t id = 0; id < v->size; id++) {
        size_t len;
        const uint8_t *s = tok_vocab_token(v, id, &len);
        int special = is_special(v, id);
        if (len == 0 && (special || v->kind[id] == TOK_UNUSED))
            continue; /* an id the file leaves out */
        if (len == 0) {
            trie_keys_free(k);
            return tb_fail(err, "token id %u has no bytes", id);
        }
        if (special && specials == TRIE_SPECIALS_OMIT)
            continue;
        trie_key_t *key = &k->keys[k->n++];
        key->s = k->pool + at;
        key->id = id;
        if (special)
            k->pool[at++] = TRIE_SPECIAL_MARKER;
        memcpy(k->pool + at, s, len);
        at += len;
        key->len = (uint32_t)(k->pool + at - key->s);
    }
    if (finish_keys(k, 0, err)) {
        trie_keys_free(k);
        return -1;
    }
    return 0;
}

static int keys_from_list(trie_keys_t *k, const uint8_t *const *strs, const uint32_t *lens,
                          const uint32_t *ids, size_t n, int strict, tb_err_t *err)
{
    memset(k, 0, sizeof *k);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (lens[i] == 0)
            return tb_fail(err, "token id %u has no bytes", ids[i]);
        if (ids[i] >= TOK_VOCAB_MAX_SIZE)
            return tb_fail(err, "token id %u is past the limit of %u ids",
                           ids[i], TOK_VOCAB_MAX_SIZE);
        total += lens[i];
    }
    k->keys = malloc(sizeof *k->keys * (n ? n : 1));
    k->pool = malloc(total ? total : 1);
    if (!k->keys || !k->pool) {
        trie_keys_free(k);
        return tb_fail(err, "out of memory for %zu trie keys", n);
    }
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(k->pool + at, strs[i], lens[i]);
        k->keys[i] = (trie_key_t){.s = k->pool + at, .len = lens[i], .id = ids[i]};
        at += lens[i];
    }
    k->n = n;
    if (finish_keys(k, strict, err)) {
        trie_keys_free(k);
        return -1;
    }
    return 0;
}

int trie_keys_from_list(trie_keys_t *k, const uint8_t *const *strs,
                        const uint32_t *lens, const uint32_t *ids, size_t n,
                        tb_err_t *err)
{
    return keys_from_list(k, strs, lens, ids, n, 1, err);
}

int trie_keys_from_list_aliased(trie_keys_t *k, const uint8_t *const *strs,
                                const uint32_t *lens, const uint32_t *ids, size_t n,
                                tb_err_t *err)
{
    return keys_from_list(k, strs, lens, ids, n, 0, err);
}

void trie_keys_free(trie_keys_t *k)
{
    free(k->keys);
    free(k->pool);
    free(k->alias);
    memset(k, 0, sizeof *k);
}

/* ---- the trie object ------------------------------------------------- */

struct trie {
    const trie_layout_t *layout;
    void *impl;
    uint32_t id_limit;
    uint32_t max_len; /* the longest key's bytes */
    uint32_t *alias; /* nalias pairs {id, primary}, copied from the keys */
    size_t nalias;
};

trie_t *trie_build(const trie_layout_t *layout, const trie_keys_t *k,
                   tb_err_t *err)
{
    trie_t *t = calloc(1, sizeof *t);
    if (!t) {
        tb_fail(err, "out of memory for a trie");
        return NULL;
    }
    t->layout = layout;
    t->id_limit = k->id_limit;
    t->max_len = k->max_len;
    t->nalias = k->nalias;
    t->alias = malloc(2 * sizeof *t->alias * (k->nalias ? k->nalias : 1));
    if (!t->alias) {
        free(t);
        tb_fail(err, "out of memory for %zu aliases", k->nalias);
        return NULL;
    }
    if (k->nalias)
        memcpy(t->alias, k->alias, 2 * sizeof *t->alias * k->nalias);
    t->impl = layout->build(k, err);
    if (!t->impl) {
        tb_wrap(err, "%s trie", layout->name);
        free(t->alias);
        free(t);
        return NULL;
    }
    return t;
}

void trie_free(trie_t *t)
{
    if (!t)
        return;
    t->layout->free(t->impl);
    free(t->alias);
    free(t);
}

const trie_layout_t *trie_layout(const trie_t *t)
{
    return t->layout;
}

const void *trie_impl(const trie_t *t)
{
    return t->impl;
}

int32_t trie_lookup(const trie_t *t, const uint8_t *s, size_t n)
{
    return t->layout->lookup(t->impl, s, n);
}

size_t trie_prefixes(const trie_t *t, const uint8_t *s, size_t n,
                     trie_match_t *out, size_t max)
{
    return t->layout->prefixes(t->impl, s, n, out, max);
}

size_t trie_mask_bits(const trie_t *t)
{
    return (size_t)t->id_limit + 1;
}

uint32_t trie_max_len(const trie_t *t)
{
    return t->max_len;
}

int trie_prepare_walk(trie_t *t, tb_err_t *err)
{
    if (t->layout->prepare_walk && t->layout->prepare_walk(t->impl, err))
        return tb_wrap(err, "%s trie: preparing walks", t->layout->name);
    return 0;
}

uint64_t trie_walk(const trie_t *t, trie_rec_t *rec, tb_bitset_t *mask)
{
    if (mask->nbits < trie_mask_bits(t))
        return UINT64_MAX;
    /* The lazy build (trie.h): t is const to callers, who only ask for a
     * mask, but impl is the trie's own mutable structure, which the hook
     * may extend; after the first walk the hook returns at once.  No
     * message (tb_fail takes NULL): trie_prepare_walk is there for it. */
    if (t->layout->prepare_walk && t->layout->prepare_walk(t->impl, NULL))
        return UINT64_MAX;
    uint64_t visited = t->layout->walk(t->impl, rec, mask);
    tb_bitset_clear(mask, t->id_limit);
    for (size_t i = 0; i < t->nalias; i++)
        if (tb_bitset_get(mask, t->alias[2 * i + 1]))
            tb_bitset_set(mask, t->alias[2 * i]);
    return visited;
}

size_t trie_nodes(const trie_t *t)
{
    return t->layout->nodes(t->impl);
}

size_t trie_bytes(const trie_t *t)
{
    return t->layout->bytes(t->impl);
}

int trie_validate(const trie_t *t, tb_err_t *err)
{
    if (t->layout->validate(t->impl, err))
        return tb_wrap(err, "%s trie", t->layout->name);
    return 0;
}

static int table_push(trie_rec_t *r, uint8_t b)
{
    trie_rec_table_t *t = &r->tab;
    uint32_t next = trie_rec_entry(t->table, t->stack[t->depth] + t->cls[b]);
    if (__builtin_expect(next == TRIE_REC_UNKNOWN, 0))
        next = r->compute(r, t->stack[t->depth], b);
    /* The depth check cannot fire under a trie no deeper than promised;
     * it keeps a wrong promise from writing past the stack. */
    if (next == 0 || t->depth + 1 >= t->cap) /* row 0: the dead state */
        return 0;
    t->stack[++t->depth] = next;
    return 1;
}

static void table_pop(trie_rec_t *r, uint32_t n)
{
    trie_rec_table_t *t = &r->tab;
    t->depth -= n <= t->depth ? n : t->depth;
}

int trie_rec_table_init(trie_rec_t *r, uint32_t (*compute)(trie_rec_t *, uint32_t, uint8_t),
                        void (*allowed)(trie_rec_t *, uint64_t[4]), size_t max_depth)
{
    *r = (trie_rec_t){.push_byte = table_push, .pop_bytes = table_pop,
                      .allowed_bytes = allowed, .compute = compute};
    r->tab.cap = max_depth + 2;
    r->tab.stack = malloc(r->tab.cap * sizeof *r->tab.stack);
    return r->tab.stack ? 0 : -1;
}

void trie_rec_table_free(trie_rec_t *r)
{
    free(r->tab.stack);
    r->tab = (trie_rec_table_t){0};
}
