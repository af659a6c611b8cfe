/* slicer: per-slice tries and precomputed masks, taken whole where the lexer
 * state subsumes the slice (see slicer.h). */
#include "slicer.h"

#include <stdlib.h>
#include <string.h>

#include "../base/hash.h"

const char *const lex_slicer_default[] = {
    "[^\"\\\\\\x00-\\x1F\\x7F]{1,10}",
    "[^\"\\\\\\x00-\\x1F\\x7F]{1,30}",
    "[^\"\\\\\\x00-\\x1F\\x7F]+",
    NULL,
};

#define GROUP_NONE UINT16_MAX

/* ---- building ------------------------------------------------------------ */

/* The slice (index < n) that claims key (the first it is a prefix of, or
 * the first that matches it whole), n for the residual, or -1 with err if a
 * slice DFA passed its limits. */
static long slice_of(lex_slicer_t *s, const trie_key_t *key, tb_err_t *err)
{
    for (size_t i = 0; i < s->nslice; i++) {
        lex_dfa_t *d = s->slice[i].dfa;
        uint32_t st = lex_dfa_feed(d, LEX_START, key->s, key->len);
        if (lex_dfa_error(d, err))
            return -1;
        if (st != LEX_DEAD && (s->prefixes || lex_dfa_accepting(d, st)))
            return (long)i;
    }
    return (long)s->nslice;
}

/* The keys of group g (group[] per key of k), with k's id limit so that
 * every trie's mask has the full vocabulary's bits, and the aliases whose
 * primary id is in the group.  Sets the group's bits in mask. */
static int subset_keys(const trie_keys_t *k, const uint16_t *group, const uint16_t *id_group,
                       uint16_t g, trie_keys_t *out, tb_bitset_t *mask, tb_err_t *err)
{
    memset(out, 0, sizeof *out);
    size_t n = 0, bytes = 0;
    for (size_t i = 0; i < k->n; i++)
        if (group[i] == g)
            n++, bytes += k->keys[i].len;
    out->keys = malloc((n ? n : 1) * sizeof *out->keys);
    out->pool = malloc(bytes ? bytes : 1);
    out->alias = malloc((k->nalias ? k->nalias : 1) * 2 * sizeof *out->alias);
    if (!out->keys || !out->pool || !out->alias) {
        trie_keys_free(out);
        return tb_fail(err, "out of memory for a slice's %zu keys", n);
    }
    out->id_limit = k->id_limit;
    size_t at = 0;
    for (size_t i = 0; i < k->n; i++) {
        const trie_key_t *key = &k->keys[i];
        if (group[i] != g)
            continue;
        memcpy(out->pool + at, key->s, key->len);
        out->keys[out->n++] = (trie_key_t){.s = out->pool + at, .len = key->len, .id = key->id};
        at += key->len;
        if (key->len > out->max_len)
            out->max_len = key->len;
        tb_bitset_set(mask, key->id);
    }
    for (size_t a = 0; a < k->nalias; a++)
        if (id_group[k->alias[2 * a + 1]] == g) {
            out->alias[2 * out->nalias] = k->alias[2 * a];
            out->alias[2 * out->nalias + 1] = k->alias[2 * a + 1];
            out->nalias++;
            tb_bitset_set(mask, k->alias[2 * a]);
        }
    return 0;
}

/* The trie over group g's keys (NULL in *t when the group is empty). */
static int group_trie(const trie_keys_t *k, const trie_layout_t *layout, const uint16_t *group,
                      const uint16_t *id_group, uint16_t g, trie_t **t, size_t *ntokens,
                      size_t *max_len, tb_bitset_t *mask, tb_err_t *err)
{
    trie_keys_t sub;
    if (subset_keys(k, group, id_group, g, &sub, mask, err))
        return -1;
    *ntokens = sub.n;
    *max_len = sub.max_len;
    *t = NULL;
    int rc = 0;
    if (sub.n) {
        *t = trie_build(layout, &sub, err);
        rc = !*t || trie_prepare_walk(*t, err) ? -1 : 0;
    }
    trie_keys_free(&sub);
    return rc;
}

/* Which group every key and every id falls in. */
static int assign_groups(lex_slicer_t *s, const trie_keys_t *k, uint16_t *group,
                         uint16_t *id_group, tb_err_t *err)
{
    for (size_t i = 0; i < k->id_limit; i++)
        id_group[i] = GROUP_NONE;
    for (size_t i = 0; i < k->n; i++) {
        long g = slice_of(s, &k->keys[i], err);
        if (g < 0)
            return -1;
        group[i] = (uint16_t)g;
        id_group[k->keys[i].id] = (uint16_t)g;
    }
    return 0;
}

/* Where key's tail begins: after its longest prefix of loop bytes, but
 * no further than its last byte (a trie key is not empty). */
static uint32_t tail_start(const trie_key_t *key)
{
    uint32_t i = 0;
    while (i + 1 < key->len && lex_slicer_loop_byte(key->s[i]))
        i++;
    return i;
}

/* The trie of the residual's tokens (group `rest`, aliases included)
 * whose tail starts after their first byte (tails = 1), keyed by the tail,
 * or of the others (tails = 0), keyed by their bytes; NULL in *out if
 * there are none. */
static int residual_part(const trie_keys_t *k, const trie_layout_t *layout,
                         const uint16_t *id_group, uint16_t rest, int tails,
                         const trie_key_t **of_id, trie_t **out, tb_err_t *err)
{
    size_t cap = k->n + k->nalias, n = 0;
    const uint8_t **strs = malloc((cap ? cap : 1) * sizeof *strs);
    uint32_t *lens = malloc((cap ? cap : 1) * sizeof *lens);
    uint32_t *ids = malloc((cap ? cap : 1) * sizeof *ids);
    trie_keys_t part = {0};
    int rc = -1;
    *out = NULL;
    if (!strs || !lens || !ids) {
        tb_fail(err, "out of memory for the residual's tails");
        goto out;
    }
    for (size_t i = 0; i < cap; i++) {
        uint32_t id = i < k->n ? k->keys[i].id : k->alias[2 * (i - k->n)];
        uint32_t primary = i < k->n ? id : k->alias[2 * (i - k->n) + 1];
        if (id_group[primary] != rest)
            continue;
        const trie_key_t *key = of_id[primary];
        uint32_t at = tail_start(key);
        if ((at > 0) != tails)
            continue;
        strs[n] = key->s + at;
        lens[n] = key->len - at;
        ids[n++] = id;
    }
    rc = 0;
    if (n) {
        rc = trie_keys_from_list_aliased(&part, strs, lens, ids, n, err);
        part.id_limit = k->id_limit; /* masks have the vocabulary's bits */
        *out = rc ? NULL : trie_build(layout, &part, err);
        rc = !*out || trie_prepare_walk(*out, err) ? -1 : 0;
    }
out:
    trie_keys_free(&part);
    free(strs);
    free(lens);
    free(ids);
    return rc;
}

/* The residual's heads and tails (lex_slicer_t). */
static int build_tails(lex_slicer_t *s, const trie_keys_t *k, const trie_layout_t *layout,
                       const uint16_t *group, const uint16_t *id_group, uint16_t rest,
                       tb_err_t *err)
{
    const trie_key_t **of_id = calloc(k->id_limit ? k->id_limit : 1, sizeof *of_id);
    if (!of_id)
        return tb_fail(err, "out of memory for the residual's tails");
    for (size_t i = 0; i < k->n; i++)
        if (group[i] == rest)
            of_id[k->keys[i].id] = &k->keys[i];
    int rc = residual_part(k, layout, id_group, rest, 0, of_id, &s->heads, err) ||
             residual_part(k, layout, id_group, rest, 1, of_id, &s->tails, err);
    free(of_id);
    return rc ? -1 : 0;
}

static int build_parts(lex_slicer_t *s, const trie_keys_t *k, const trie_layout_t *layout,
                       tb_err_t *err)
{
    uint16_t *group = malloc((k->n ? k->n : 1) * sizeof *group);
    uint16_t *id_group = malloc((k->id_limit ? k->id_limit : 1) * sizeof *id_group);
    tb_bitset_t rest_mask = {0};
    int rc = -1;
    if (!group || !id_group || tb_bitset_init(&rest_mask, s->mask_bits)) {
        tb_fail(err, "out of memory for the slicer over %zu keys", k->n);
        goto out;
    }
    if (assign_groups(s, k, group, id_group, err))
        goto out;
    for (size_t i = 0; i < s->nslice; i++) {
        lex_slice_t *sl = &s->slice[i];
        if (group_trie(k, layout, group, id_group, (uint16_t)i, &sl->trie, &sl->ntokens,
                       &sl->max_len, &sl->mask, err)) {
            tb_wrap(err, "slice %zu '%s'", i + 1, sl->regex);
            goto out;
        }
    }
    size_t rest_len;
    if (group_trie(k, layout, group, id_group, (uint16_t)s->nslice, &s->rest, &s->nrest,
                   &rest_len, &rest_mask, err) ||
        build_tails(s, k, layout, group, id_group, (uint16_t)s->nslice, err)) {
        tb_wrap(err, "the slicer's residual tokens");
        goto out;
    }
    rc = 0;
out:
    free(group);
    free(id_group);
    tb_bitset_free(&rest_mask);
    return rc;
}

/* Computes every state and transition of a slice's DFA now: subsumption
 * explores them all sooner or later, and would otherwise pay for them in
 * some mask (in every process forked from this one, each its own copy). */
static int complete_dfa(lex_dfa_t *d, tb_err_t *err)
{
    for (size_t st = 1; st < d->nstates; st++)
        for (uint32_t c = 0; c < d->ncls; c++)
            lex_dfa_next(d, (uint32_t)st, d->rep[c]);
    return lex_dfa_error(d, err);
}

/* Whether every prefix of a's language is a prefix of b's (both DFAs
 * complete): no pair reachable from the two starts has a live state of a
 * and the dead state of b.  1, 0, or -1 on memory. */
static int prefixes_within(lex_dfa_t *a, lex_dfa_t *b)
{
    size_t nb = b->nstates, cells = a->nstates * nb;
    uint8_t *seen = calloc(cells, 1);
    uint64_t *todo = malloc(cells * sizeof *todo);
    if (!seen || !todo) {
        free(seen);
        free(todo);
        return -1;
    }
    size_t top = 0;
    int within = 1;
    todo[top++] = (uint64_t)LEX_START << 32 | LEX_START;
    seen[LEX_START * nb + LEX_START] = 1;
    while (top && within) {
        uint64_t pair = todo[--top];
        uint32_t p = (uint32_t)(pair >> 32), q = (uint32_t)pair;
        for (unsigned c = 0; c < 256; c++) {
            uint32_t p2 = lex_dfa_next(a, p, (uint8_t)c), q2;
            if (p2 == LEX_DEAD)
                continue;
            if ((q2 = lex_dfa_next(b, q, (uint8_t)c)) == LEX_DEAD) {
                within = 0;
                break;
            }
            if (!seen[(size_t)p2 * nb + q2]) {
                seen[(size_t)p2 * nb + q2] = 1;
                todo[top++] = (uint64_t)p2 << 32 | q2;
            }
        }
    }
    free(seen);
    free(todo);
    return within;
}

/* Sets each slice's `within` (lex_slice_t). */
static int slices_within(lex_slicer_t *s, tb_err_t *err)
{
    for (size_t i = 0; i < s->nslice && i < 64; i++)
        for (size_t j = 0; j < s->nslice && j < 64; j++) {
            if (i == j)
                continue;
            int in = prefixes_within(s->slice[i].dfa, s->slice[j].dfa);
            int back = in == 1 && j < i ? prefixes_within(s->slice[j].dfa, s->slice[i].dfa) : 0;
            if (in < 0 || back < 0)
                return tb_fail(err, "out of memory for the slicer");
            /* j's verdict covers its tokens' lengths only (explore) */
            if (in && !back && s->slice[i].max_len <= s->slice[j].max_len)
                s->slice[i].within |= (uint64_t)1 << j;
        }
    return 0;
}

lex_slicer_t *lex_slicer_new(const trie_keys_t *k, const trie_layout_t *layout,
                             const char *const *regexes, size_t n, tb_err_t *err)
{
    return lex_slicer_new_as(k, layout, regexes, n, LEX_SLICE_PREFIX, err);
}

/* The keys of at least long_min bytes and their aliases into s->long_keys
 * (lex_slicer_t says which). */
static int keep_long_keys(lex_slicer_t *s, const trie_keys_t *k, tb_err_t *err)
{
    size_t *by_len = calloc((size_t)k->max_len + 2, sizeof *by_len), n = 0, bytes = 0;
    if (!by_len)
        return tb_fail(err, "out of memory for the slicer");
    for (size_t i = 0; i < k->n; i++)
        by_len[k->keys[i].len]++;
    uint32_t min = k->max_len + 1;
    while (min > 1 && n + by_len[min - 1] <= LEX_SLICER_LONG)
        n += by_len[--min];
    free(by_len);
    s->long_min = min;
    s->long_keys = malloc((n + k->nalias + 1) * sizeof *s->long_keys);
    s->long_pool = malloc((size_t)LEX_SLICER_LONG * k->max_len + 1);
    if (!s->long_keys || !s->long_pool)
        return tb_fail(err, "out of memory for the slicer");
    for (size_t i = 0; i < k->n; i++) {
        const trie_key_t *key = &k->keys[i];
        if (key->len < min)
            continue;
        memcpy(s->long_pool + bytes, key->s, key->len);
        s->long_keys[s->nlong++] = (trie_key_t){s->long_pool + bytes, key->len, key->id};
        bytes += key->len;
    }
    for (size_t a = 0, kept = s->nlong; a < k->nalias; a++)
        for (size_t j = 0; j < kept; j++)
            if (s->long_keys[j].id == k->alias[2 * a + 1]) {
                s->long_keys[s->nlong] = s->long_keys[j];
                s->long_keys[s->nlong++].id = k->alias[2 * a];
            }
    return 0;
}

lex_slicer_t *lex_slicer_new_as(const trie_keys_t *k, const trie_layout_t *layout,
                                const char *const *regexes, size_t n, int membership,
                                tb_err_t *err)
{
    if (!regexes)
        for (regexes = lex_slicer_default, n = 0; regexes[n]; n++)
            ;
    if (n >= GROUP_NONE) {
        tb_fail(err, "slicer: %zu slices, at most %u", n, GROUP_NONE - 1);
        return NULL;
    }
    lex_slicer_t *s = calloc(1, sizeof *s);
    if (!s || !(s->slice = calloc(n ? n : 1, sizeof *s->slice))) {
        free(s);
        tb_fail(err, "out of memory for the slicer");
        return NULL;
    }
    s->nslice = n;
    s->mask_bits = (size_t)k->id_limit + 1;
    s->max_len = k->max_len;
    s->budget = LEX_SLICER_DEFAULT_BUDGET;
    s->term_budget = LEX_SLICER_TERMS;
    s->prefixes = membership == LEX_SLICE_PREFIX;
    for (size_t i = 0; i < n; i++) {
        lex_slice_t *sl = &s->slice[i];
        sl->regex = strdup(regexes[i]);
        if (!sl->regex || tb_bitset_init(&sl->mask, s->mask_bits)) {
            tb_fail(err, "out of memory for the slicer");
            goto fail;
        }
        if (!(sl->dfa = lex_dfa_new(regexes[i], NULL, err))) {
            tb_wrap(err, "slice %zu", i + 1);
            goto fail;
        }
    }
    if (tb_bitset_init(&s->all, s->mask_bits)) {
        tb_fail(err, "out of memory for the slicer");
        goto fail;
    }
    if (build_parts(s, k, layout, err) || keep_long_keys(s, k, err))
        goto fail;
    for (size_t i = 0; i < n; i++)
        if (complete_dfa(s->slice[i].dfa, err)) {
            tb_wrap(err, "slice %zu", i + 1);
            goto fail;
        }
    if (slices_within(s, err))
        goto fail;
    for (size_t i = 0; i < n; i++)
        for (size_t w = 0; w < tb_bitset_words(s->mask_bits); w++)
            s->all.words[w] |= s->slice[i].mask.words[w];
    return s;
fail:
    lex_slicer_free(s);
    return NULL;
}

void lex_slicer_free(lex_slicer_t *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nslice; i++) {
        free(s->slice[i].regex);
        lex_dfa_free(s->slice[i].dfa);
        trie_free(s->slice[i].trie);
        tb_bitset_free(&s->slice[i].mask);
    }
    free(s->slice);
    free(s->long_keys);
    free(s->long_pool);
    tb_bitset_free(&s->all);
    trie_free(s->rest);
    trie_free(s->heads);
    trie_free(s->tails);
    free(s->verdict);
    free(s->open_of);
    free(s->jrep);
    free(s->njrep);
    free(s->seen);
    free(s->todo);
    free(s->used);
    free(s);
}

int lex_slicer_parse_list(const char *spec, char ***out, size_t *n, tb_err_t *err)
{
    *out = NULL;
    *n = 0;
    if (!strcmp(spec, "default"))
        spec = "[^\"\\\\\\x00-\\x1F\\x7F]{1,10};[^\"\\\\\\x00-\\x1F\\x7F]{1,30};"
               "[^\"\\\\\\x00-\\x1F\\x7F]+";
    size_t len = strlen(spec), parts = 1;
    for (size_t i = 0; i < len; i++)
        if (spec[i] == ';' && !(i && spec[i - 1] == '\\'))
            parts++;
    /* One block: the pointers, then the strings. */
    char **v = malloc(parts * sizeof *v + len + parts);
    if (!v)
        return tb_fail(err, "out of memory");
    char *w = (char *)(v + parts);
    size_t k = 0;
    v[k] = w;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && spec[i] == '\\' && spec[i + 1] == ';')
            continue; /* "\;" is a literal ';' */
        if (i == len || (spec[i] == ';' && !(i && spec[i - 1] == '\\'))) {
            *w++ = 0;
            if (!*v[k]) {
                free(v);
                return tb_fail(err, "slicer list '%s': slice %zu is empty", spec, k + 1);
            }
            if (i < len)
                v[++k] = w;
            continue;
        }
        *w++ = spec[i];
    }
    *out = v;
    *n = k + 1;
    return 0;
}

/* ---- subsumption ------------------------------------------------------------ */

int lex_slicer_bind(lex_slicer_t *s, lex_dfa_t *d, tb_err_t *err)
{
    /* Always from scratch: a new DFA may sit at a freed one's address. */
    free(s->verdict);
    free(s->open_of);
    s->verdict = NULL;
    s->open_of = NULL;
    s->nverdict_states = 0;
    for (size_t i = 0; i < s->nslice; i++)
        s->slice[i].spent = s->slice[i].skip = 0;
    if (!s->jrep) {
        s->jrep = malloc((s->nslice ? s->nslice : 1) * sizeof *s->jrep);
        s->njrep = malloc((s->nslice ? s->nslice : 1) * sizeof *s->njrep);
        if (!s->jrep || !s->njrep)
            return tb_fail(err, "out of memory for the slicer's verdicts");
    }
    /* The exploration's scratch, sized for the budget as it is now. */
    if (s->scratch_for != s->budget || !s->seen) {
        free(s->seen);
        free(s->todo);
        free(s->used);
        s->seen_cap = 1;
        while (s->seen_cap < 2 * s->budget + 2)
            s->seen_cap <<= 1;
        s->seen = calloc(s->seen_cap, sizeof *s->seen);
        s->todo = malloc((s->budget + 1) * sizeof *s->todo);
        s->used = malloc((s->budget + 1) * sizeof *s->used);
        s->nused = 0;
        s->scratch_for = s->budget;
        if (!s->seen || !s->todo || !s->used) {
            s->scratch_for = 0;
            return tb_fail(err, "out of memory for the slicer's verdicts");
        }
    }
    /* One representative byte per joint class: bytes that neither DFA tells
     * apart lead both to the same places. */
    for (size_t i = 0; i < s->nslice; i++) {
        const lex_dfa_t *sd = s->slice[i].dfa;
        static _Thread_local uint8_t seen[256 * 256 / 8];
        memset(seen, 0, sizeof seen);
        s->njrep[i] = 0;
        for (unsigned b = 0; b < 256; b++) {
            unsigned key = sd->cls[b] * 256u + d->cls[b];
            if (seen[key >> 3] & (1u << (key & 7)))
                continue;
            seen[key >> 3] |= (uint8_t)(1u << (key & 7));
            s->jrep[i][s->njrep[i]++] = (uint8_t)b;
        }
    }
    /* A loop byte per class of d: whether a state stays itself on every
     * loop byte is asked of these alone. */
    uint8_t class_seen[256] = {0};
    s->nloop_rep = 0;
    for (unsigned b = 0; b < 256; b++)
        if (lex_slicer_loop_byte((uint8_t)b) && !class_seen[d->cls[b]]) {
            class_seen[d->cls[b]] = 1;
            s->loop_rep[s->nloop_rep++] = (uint8_t)b;
        }
    s->bound = d;
    return 0;
}

/* Inserts pair into the visited set; 1 if it was new.  New slots are
 * listed in used[] so that the next exploration clears only those. */
static int seen_insert(lex_slicer_t *s, uint64_t pair)
{
    size_t m = s->seen_cap - 1;
    for (size_t h = tb_hash_u64(pair) & m;; h = (h + 1) & m) {
        if (s->seen[h] == pair + 1)
            return 0;
        if (!s->seen[h]) {
            s->seen[h] = pair + 1;
            s->used[s->nused++] = (uint32_t)h;
            return 1;
        }
    }
}

/* Whose verdict an exploration decides: a state's own, or an open part's,
 * which every state sharing it reads. */
typedef enum { FOR_OWN, FOR_OPEN_PART } explore_for_t;

/* The pairs an exploration of slice i may visit: the slicer's budget, but
 * no more than LEX_SLICER_PAIRS_PER_TOKEN per token of the slice, since
 * walking a small slice costs less than an exploration that runs to the
 * budget (a string lexeme counting to maxLength 1024 against the unbounded
 * slice of 187 tokens made 256 lexer states per new state, then walked).
 * An open part gets the whole budget of pairs: its verdict
 * is paid once and read at every key position of its object (the names
 * not taken yet make the lexer states an exploration meets: 16 new ones
 * cut the unbounded slice's at 187 pairs, and its 2,871 nodes were walked
 * at each key of Github_hard---o60038 after, where 40 decide it); but no
 * exploration makes more than LEX_SLICER_NEW_STATES new lexer states: an
 * open part's 256 on the budget cost 10M instructions in
 * Github_hard---o47197's slowest mask and decided nothing, and a string
 * counting fifty words in 500 characters made 257 against the slice of
 * 1-30 characters, which decided nothing either, in Github_ultra---o62059's
 * slowest masks (a fifth of their 41M instructions, with the pairs). */
static size_t slice_budget(const lex_slicer_t *s, size_t i, explore_for_t whose)
{
    if (whose == FOR_OPEN_PART)
        return s->budget;
    size_t cap = LEX_SLICER_PAIRS_PER_TOKEN * s->slice[i].ntokens;
    if (cap < LEX_SLICER_MIN_BUDGET)
        cap = LEX_SLICER_MIN_BUDGET;
    return cap < s->budget ? cap : s->budget;
}

/* The product of slice i's DFA and the lexer's from (start, state),
 * breadth first to the depth of the slice's longest token (no token of the
 * slice is longer, so deeper pairs decide nothing: a lexeme that excludes
 * a few hundred keys would otherwise be explored down every key): WALK as
 * soon as a live slice state meets a dead lexer state or the budget runs
 * out, WHOLE when every pair within that depth is live on the lexer's
 * side.  The pairs met stay in s->todo[0..*met). */
static uint8_t product(lex_slicer_t *s, size_t i, uint32_t state, explore_for_t whose,
                       int *spent, size_t *met)
{
    lex_dfa_t *sd = s->slice[i].dfa, *ld = s->bound;
    const uint8_t *rep = s->jrep[i];
    unsigned nrep = s->njrep[i];
    size_t head = 0, tail = 0, level_end, depth = 0, born = ld->nstates;
    size_t terms_before = ld->terms.n;
    size_t budget = slice_budget(s, i, whose);
    size_t max_states = budget / LEX_SLICER_PAIRS_PER_STATE;
    if (max_states > LEX_SLICER_NEW_STATES)
        max_states = LEX_SLICER_NEW_STATES;
    s->todo[tail++] = (uint64_t)LEX_START << 32 | state;
    seen_insert(s, s->todo[0]);
    level_end = tail;
    uint8_t verdict = LEX_SLICE_WHOLE;
    while (head < tail && verdict == LEX_SLICE_WHOLE) {
        if (head == level_end) { /* the pairs of the next depth */
            depth++;
            level_end = tail;
        }
        if (depth >= s->slice[i].max_len)
            break; /* every pair left is as deep as the longest token */
        /* The lexer's states outlive the verdict: a lexeme that counts
         * (a string of at most 2048 characters against an unbounded slice)
         * would make a new one per pair, each with its terms, before the
         * budget says "walk"; and a few states of intersected patterns
         * may cost thousands of terms. */
        if (ld->nstates - born > max_states || ld->terms.n - terms_before > s->term_budget) {
            verdict = LEX_SLICE_WALK;
            *spent = 1;
            break;
        }
        uint64_t pair = s->todo[head++];
        uint32_t p = (uint32_t)(pair >> 32), q = (uint32_t)pair;
        for (unsigned c = 0; c < nrep; c++) {
            uint32_t p2 = lex_dfa_next(sd, p, rep[c]);
            if (p2 == LEX_DEAD)
                continue;
            uint32_t q2 = lex_dfa_next(ld, q, rep[c]);
            if (q2 == LEX_DEAD) {
                verdict = LEX_SLICE_WALK;
                break;
            }
            uint64_t np = (uint64_t)p2 << 32 | q2;
            if (seen_insert(s, np)) {
                if (s->nused > budget) {
                    verdict = LEX_SLICE_WALK;
                    *spent = 1;
                    break;
                }
                s->todo[tail++] = np;
            }
        }
    }
    for (size_t u = 0; u < s->nused; u++)
        s->seen[s->used[u]] = 0;
    s->nused = 0;
    *met = tail;
    return verdict;
}

/* The most steps of a probe (probe_refutes). */
#define PROBE_STEPS 64

static int on_path(const uint32_t *path, size_t n, uint32_t q)
{
    for (size_t k = 0; k < n; k++)
        if (path[k] == q)
            return 1;
    return 0;
}

/* Whether one path down slice i from (start, state) meets a dead lexer
 * state, to the depth of the slice's longest token: at each step the
 * first class, from the one after the last step's, that takes the lexer
 * to a state not on the path yet.  A lexeme that counts (the words of a
 * pattern) dies only past its count, deep in the product, which breadth
 * first reaches after every shallower pair: Github_ultra---o62059's ten
 * words of at most 120 characters, 2,580 pairs and 217 new lexer states
 * for a "walk" that a path of twenty bytes finds, words and spaces in
 * turn.  A dead pair anywhere is a verdict. */
static int probe_refutes(lex_slicer_t *s, size_t i, uint32_t state)
{
    lex_dfa_t *sd = s->slice[i].dfa, *ld = s->bound;
    const uint8_t *rep = s->jrep[i];
    unsigned nrep = s->njrep[i], from = 0;
    uint32_t path[PROBE_STEPS + 1], p = LEX_START, q = state;
    size_t n = 0;
    path[n++] = q;
    while (n <= PROBE_STEPS && n <= s->slice[i].max_len) {
        uint32_t next_p = LEX_DEAD, next_q = LEX_DEAD;
        for (unsigned j = 0, c = from; j < nrep && next_q == LEX_DEAD; j++, c = (c + 1) % nrep) {
            uint32_t p2 = lex_dfa_next(sd, p, rep[c]);
            if (p2 == LEX_DEAD)
                continue;
            uint32_t q2 = lex_dfa_next(ld, q, rep[c]);
            if (q2 == LEX_DEAD)
                return 1;
            if (!on_path(path, n, q2)) {
                next_p = p2;
                next_q = q2;
                from = (c + 1) % nrep;
            }
        }
        if (next_q == LEX_DEAD)
            return 0;
        p = next_p;
        q = next_q;
        path[n++] = q;
    }
    return 0;
}

/* Whether every lexer state of the pairs s->todo[0..n) surely matches
 * infinitely many strings. */
static int all_infinite(lex_slicer_t *s, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (!lex_dfa_surely_infinite(s->bound, (uint32_t)s->todo[k]))
            return 0;
    return 1;
}

/* The verdict of slice i for a lexer state.  An open part is first
 * explored relaxed (lex_dfa_relaxed: an object's other names without the
 * complement of its defined ones), whose states are the string's few
 * rather than one per prefix of a name (Snowplow---sp_0_Normalized's 91
 * names: 388 new states, three explorations out of budget at its first
 * key): a dead pair there is one of the state's too; and where every pair
 * is live and its lexer state's language infinite, every token is a
 * prefix of one of the state's strings. */
static uint8_t explore(lex_slicer_t *s, size_t i, uint32_t state, explore_for_t whose,
                       int *spent)
{
    size_t met;
    if (whose == FOR_OPEN_PART) {
        uint32_t relaxed = lex_dfa_relaxed(s->bound, state);
        if (relaxed != state && relaxed != LEX_DEAD) {
            int out = 0;
            uint8_t v = product(s, i, relaxed, whose, &out, &met);
            if (!out && (v == LEX_SLICE_WALK || all_infinite(s, met)))
                return v;
        }
    }
    if (probe_refutes(s, i, state))
        return LEX_SLICE_WALK;
    return product(s, i, state, whose, spent, &met);
}

/* Makes room for verdicts of states below `need`. */
static int grow_verdicts(lex_slicer_t *s, size_t need, tb_err_t *err)
{
    if (need <= s->nverdict_states)
        return 0;
    size_t n = s->nverdict_states ? s->nverdict_states : 64;
    while (n < need)
        n *= 2;
    uint8_t *v = realloc(s->verdict, n * (s->nslice ? s->nslice : 1));
    if (v)
        s->verdict = v;
    uint32_t *o = v ? realloc(s->open_of, n * sizeof *o) : NULL;
    if (!o)
        return tb_fail(err, "out of memory for the slicer's verdicts");
    s->open_of = o;
    memset(v + s->nverdict_states * s->nslice, LEX_SLICE_UNKNOWN,
           (n - s->nverdict_states) * s->nslice);
    memset(o + s->nverdict_states, 0, (n - s->nverdict_states) * sizeof *o);
    s->nverdict_states = n;
    return 0;
}

/*
 * The open part of lexer state `state` (deriv.h: its pairs that may read
 * strings of any length) where it is smaller than the state and not empty,
 * else the state itself; UINT32_MAX on error.  The open part's language is
 * part of the state's, so a slice it subsumes the state subsumes; and
 * where a grammar's key position holds a lexeme per property name not seen
 * yet beside those for any other name, each property taken makes a new
 * state with the same open part, whose verdict, kept per state like any
 * other, is found again instead of the product being explored anew.
 */
static uint32_t open_part(lex_slicer_t *s, uint32_t state, tb_err_t *err)
{
    if (!s->open_of[state]) {
        /* Open parts and the states their explorations make stay in the
         * DFA: one halfway to its limit is not taken apart. */
        uint32_t open = state;
        if (s->bound->nstates <= s->bound->max_states / 2) {
            open = lex_dfa_open_part(s->bound, state);
            if (lex_dfa_error(s->bound, err))
                return UINT32_MAX;
            if (open == LEX_DEAD)
                open = state;
        }
        s->open_of[state] = open + 1;
    }
    return s->open_of[state] - 1;
}

/* lex_slicer_subsumes for a state that is (is_open) or is not the open
 * part of the states that asked. */
static int subsumes(lex_slicer_t *s, size_t i, uint32_t state, int is_open, tb_err_t *err)
{
    if (grow_verdicts(s, (size_t)state + 1, err))
        return -1;
    size_t at = (size_t)state * s->nslice + i;
    for (size_t j = 0; j < s->nslice && s->verdict[at] == LEX_SLICE_UNKNOWN; j++) {
        if (!(s->slice[i].within >> j & 1))
            continue;
        int wider = subsumes(s, j, state, is_open, err); /* may move s->verdict */
        if (wider < 0)
            return -1;
        if (wider)
            s->verdict[at] = LEX_SLICE_WHOLE;
    }
    uint32_t open = state;
    if (s->verdict[at] == LEX_SLICE_UNKNOWN && !is_open) {
        open = open_part(s, state, err);
        if (open == UINT32_MAX)
            return -1;
        int whole = open != state ? subsumes(s, i, open, 1, err) : 0;
        if (whole < 0) /* subsumes may have moved s->verdict */
            return -1;
        /* An open part that does not subsume the slice leaves the state
         * to walk: the names of the closed part, a finite set, seldom
         * make up what the open part lacks, and exploring the state on
         * its own (with the pairs of one walk of the slice) decided
         * "walk" every time on every 100th MaskBench file (527 times,
         * two fifths of the pairs explored). */
        if (open != state)
            s->verdict[at] = whole ? LEX_SLICE_WHOLE : LEX_SLICE_WALK;
    }
    if (s->verdict[at] == LEX_SLICE_UNKNOWN && s->slice[i].skip) {
        s->slice[i].skip--;
        s->verdict[at] = LEX_SLICE_WALK;
    }
    if (s->verdict[at] == LEX_SLICE_UNKNOWN) {
        int spent = 0;
        uint8_t verdict = explore(s, i, state, is_open ? FOR_OPEN_PART : FOR_OWN, &spent);
        /* A lexer DFA past its limits answers dead: no verdict to keep. */
        if (lex_dfa_error(s->bound, err))
            return -1;
        s->verdict[at] = verdict;
        lex_slice_t *sl = &s->slice[i];
        sl->spent = spent ? sl->spent + 1 : 0;
        if (sl->spent >= 2)
            sl->skip = 1u << (sl->spent < 12 ? sl->spent : 12);
    }
    return s->verdict[at] == LEX_SLICE_WHOLE;
}

int lex_slicer_subsumes(lex_slicer_t *s, size_t i, uint32_t state, tb_err_t *err)
{
    if (!s->bound)
        return tb_fail(err, "slicer: no lexer DFA bound");
    return subsumes(s, i, state, 0, err);
}

/* ---- the mask ----------------------------------------------------------------- */

static void or_words(tb_bitset_t *dst, const tb_bitset_t *src)
{
    size_t n = tb_bitset_words(src->nbits);
    for (size_t w = 0; w < n; w++)
        dst->words[w] |= src->words[w];
}

/* A slice is whole if any of the lexer states subsumes it: 1, 0, or -1. */
static int any_subsumes(lex_slicer_t *s, size_t i, const uint32_t *states, size_t n,
                        tb_err_t *err)
{
    for (size_t k = 0; k < n; k++) {
        int whole = lex_slicer_subsumes(s, i, states[k], err);
        if (whole)
            return whole;
    }
    return 0;
}

uint32_t lex_slicer_after_loop(const lex_slicer_t *s, lex_slice_step_t step, void *ctx,
                               uint32_t from)
{
    uint32_t after = LEX_SLICE_NO_LOOP;
    for (unsigned i = 0; i < s->nloop_rep; i++) {
        uint32_t next = step(ctx, from, s->loop_rep[i]);
        if (after != LEX_SLICE_NO_LOOP && next != after)
            return LEX_SLICE_NO_LOOP;
        after = next;
    }
    for (unsigned i = 0; i < s->nloop_rep; i++)
        if (step(ctx, after, s->loop_rep[i]) != after)
            return LEX_SLICE_NO_LOOP;
    return after;
}

int lex_slicer_mask_by(lex_slicer_t *s, const uint32_t *states, size_t n,
                       const trie_t *all, uint32_t from, uint32_t after_loop,
                       lex_slice_walk_t walk, void *ctx, tb_bitset_t *mask,
                       lex_slice_stats_t *st, tb_err_t *err)
{
    lex_slice_stats_t local = {0};
    if (!s->bound)
        return tb_fail(err, "slicer: no lexer DFA bound");
    if (mask->nbits < s->mask_bits)
        return tb_fail(err, "slicer mask: %zu bits, the vocabulary needs %zu", mask->nbits,
                       s->mask_bits);
    /* Verdicts first: when every slice is whole, one copy of their union
     * replaces the clear and the ORs. */
    size_t nwhole = 0, nparts = 0;
    for (size_t i = 0; i < s->nslice; i++) {
        if (!s->slice[i].trie)
            continue;
        int whole = any_subsumes(s, i, states, n, err);
        if (whole < 0)
            return -1;
        nparts++;
        nwhole += (size_t)whole;
    }
    if (nparts && nwhole == nparts) {
        memcpy(mask->words, s->all.words, tb_bitset_words(s->mask_bits) * sizeof *mask->words);
        if (tb_bitset_words(mask->nbits) > tb_bitset_words(s->mask_bits))
            memset(mask->words + tb_bitset_words(s->mask_bits), 0,
                   (tb_bitset_words(mask->nbits) - tb_bitset_words(s->mask_bits)) *
                       sizeof *mask->words);
        local.whole = (uint32_t)nwhole;
    } else if (nwhole == 0 && all) {
        tb_bitset_clear_all(mask);
        if (st)
            *st = (lex_slice_stats_t){.walked = (uint32_t)nparts,
                                      .nodes = walk(all, ctx, from, mask)};
        return 0;
    } else {
        tb_bitset_clear_all(mask);
        for (size_t i = 0; i < s->nslice; i++) {
            const lex_slice_t *sl = &s->slice[i];
            if (!sl->trie)
                continue;
            if (any_subsumes(s, i, states, n, err) == 1) { /* cached by now */
                or_words(mask, &sl->mask);
                local.whole++;
            } else {
                local.nodes += walk(sl->trie, ctx, from, mask);
                local.walked++;
            }
        }
    }
    if (after_loop == LEX_SLICE_NO_LOOP) {
        if (s->rest)
            local.nodes += walk(s->rest, ctx, from, mask);
    } else {
        if (s->heads)
            local.nodes += walk(s->heads, ctx, from, mask);
        if (s->tails)
            local.nodes += walk(s->tails, ctx, after_loop, mask);
    }
    if (st)
        *st = local;
    return 0;
}

static uint64_t walk_part(const trie_t *t, void *ctx, uint32_t from, tb_bitset_t *mask)
{
    lex_rec_t *r = ctx;
    lex_rec_reset(r, from);
    return trie_walk(t, &r->rec, mask);
}

static uint32_t lexer_step(void *ctx, uint32_t from, uint8_t b)
{
    return lex_dfa_next(ctx, from, b);
}

int lex_slicer_mask(lex_slicer_t *s, lex_rec_t *r, uint32_t state, tb_bitset_t *mask,
                    lex_slice_stats_t *st, tb_err_t *err)
{
    if (!s->bound && lex_slicer_bind(s, r->dfa, err))
        return -1;
    if (r->dfa != s->bound)
        return tb_fail(err, "slicer: the recognizer's DFA is not the one bound");
    uint32_t after_loop = lex_slicer_after_loop(s, lexer_step, r->dfa, state);
    if (lex_slicer_mask_by(s, &state, 1, NULL, state, after_loop, walk_part, r, mask, st, err))
        return -1;
    return lex_dfa_error(r->dfa, err);
}

size_t lex_slicer_bytes(const lex_slicer_t *s)
{
    size_t b = sizeof *s + s->nslice * sizeof *s->slice;
    b += tb_bitset_words(s->all.nbits) * sizeof(uint64_t);
    for (size_t i = 0; i < s->nslice; i++) {
        const lex_slice_t *sl = &s->slice[i];
        b += tb_bitset_words(sl->mask.nbits) * sizeof(uint64_t);
        b += sl->trie ? trie_bytes(sl->trie) : 0;
        b += sl->dfa->nstates * sl->dfa->ncls * sizeof(uint32_t);
    }
    b += s->rest ? trie_bytes(s->rest) : 0;
    b += s->heads ? trie_bytes(s->heads) : 0;
    b += s->tails ? trie_bytes(s->tails) : 0;
    b += s->nverdict_states * (s->nslice + sizeof *s->open_of);
    if (s->jrep)
        b += s->nslice * (sizeof *s->jrep + sizeof *s->njrep) +
             s->seen_cap * sizeof *s->seen +
             (s->scratch_for + 1) * (sizeof *s->todo + sizeof *s->used);
    return b;
}
