/*
 * drv_lookup: exact lookup and common-prefix search in one trie layout.
 *
 * Row: vocabulary, layout, pattern:
 *   exact     every token's bytes looked up once per repetition, in a
 *             shuffled order (a sorted order would let caches and the
 *             branch predictor follow the trie); each repetition starts
 *             the order at a different place;
 *   prefixes  common-prefix search at every byte offset of the corpus
 *             (what Unigram Viterbi asks of its trie); needs a corpus;
 *             option max_bytes=N uses the first N bytes.
 * bytes = bytes looked up, items = lookups.  Setup checks once that every
 * token is found with its id, so a layout cannot look fast by being wrong.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/file.h"
#include "../tok/tokenizer.h"
#include "../trie/trie.h"
#include "cli.h"
#include "driver.h"

#define MAX_MATCHES 64

typedef struct {
    trie_t *trie;
    trie_keys_t keys;
    uint32_t *order;   /* a permutation of the keys */
    uint8_t *text;     /* the corpus, for prefixes */
    size_t len;
    int prefixes;
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

static int load_keys(lookup_t *s, const xp_row_t *row, xp_env_t *env, tb_err_t *err)
{
    char path[4096];
    if (!row->vocab[0])
        return tb_fail(err, "field 'vocabulary' is empty");
    if (xp_resolve_spec(row->vocab, path, sizeof path, err) ||
        xp_env_input(env, "vocabulary", path, err))
        return tb_wrap(err, "vocabulary '%s'", row->vocab);
    tok_tokenizer_t *tok = tok_load(path, err);
    if (!tok)
        return -1;
    int rc = trie_keys_from_vocab(&s->keys, tok_vocab(tok), TRIE_SPECIALS_OMIT, err);
    tok_free(tok);
    return rc;
}

/* A fixed shuffle (xorshift, Fisher-Yates): the same order every run. */
static int shuffle_keys(lookup_t *s, tb_err_t *err)
{
    s->order = malloc((s->keys.n ? s->keys.n : 1) * sizeof *s->order);
    if (!s->order)
        return tb_fail(err, "out of memory");
    for (size_t i = 0; i < s->keys.n; i++)
        s->order[i] = (uint32_t)i;
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

static int check_exact(const lookup_t *s, const char *layout, tb_err_t *err)
{
    for (size_t i = 0; i < s->keys.n; i++) {
        const trie_key_t *k = &s->keys.keys[i];
        int32_t id = trie_lookup(s->trie, k->s, k->len);
        if (id != (int32_t)k->id)
            return tb_fail(err, "layout %s: key %zu (token id %u, %u bytes) looked "
                           "up as %d", layout, i, k->id, k->len, id);
    }
    return 0;
}

static int load_corpus(lookup_t *s, const xp_row_t *row, xp_env_t *env, tb_err_t *err)
{
    char path[4096], buf[32];
    if (!row->corpus[0])
        return tb_fail(err, "pattern 'prefixes' needs a corpus");
    if (xp_resolve_spec(row->corpus, path, sizeof path, err) ||
        xp_env_input(env, "corpus", path, err) ||
        tb_read_file(path, &s->text, &s->len, err))
        return tb_wrap(err, "corpus '%s'", row->corpus);
    const char *max = xp_row_option(row, "max_bytes", buf, sizeof buf);
    if (max && strtoull(max, NULL, 10) > 0 && strtoull(max, NULL, 10) < s->len)
        s->len = (size_t)strtoull(max, NULL, 10);
    return 0;
}

static int lookup_setup(const xp_row_t *row, xp_env_t *env, void **state, tb_err_t *err)
{
    const trie_layout_t *layout = trie_layout_find(row->layout);
    if (!layout)
        return tb_fail(err, "field 'layout': no trie layout '%s'", row->layout);
    int prefixes = !strcmp(row->pattern, "prefixes");
    if (!prefixes && strcmp(row->pattern, "exact"))
        return tb_fail(err, "field 'pattern': '%s' is not exact or prefixes", row->pattern);
    lookup_t *s = calloc(1, sizeof *s);
    if (!s)
        return tb_fail(err, "out of memory");
    s->prefixes = prefixes;
    int rc = load_keys(s, row, env, err);
    if (!rc && !(s->trie = trie_build(layout, &s->keys, err)))
        rc = -1;
    if (!rc)
        rc = check_exact(s, layout->name, err);
    if (!rc)
        rc = prefixes ? load_corpus(s, row, env, err) : shuffle_keys(s, err);
    if (rc)
        lookup_teardown(s);
    else
        *state = s;
    return rc;
}

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

static void rep_prefixes(lookup_t *s, xp_qty_t *q)
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
    if (s->prefixes)
        rep_prefixes(s, q);
    else
        rep_exact(s, rep, q);
    return 0;
}

const xp_driver_t xp_driver_lookup = {
    .name = "lookup",
    .summary = "exact lookup of every token, or prefix search over a corpus, per layout",
    .setup = lookup_setup,
    .rep = lookup_rep,
    .teardown = lookup_teardown,
    .default_reps = 11,
};
