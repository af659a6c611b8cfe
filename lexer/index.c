/* index: the precomputed token index, built in breadth-first rounds of
 * vectors of DFA states stepped along the sorted keys (see index.h).
 *
 * A round's batch is the m index states found by the previous round.  A
 * vector is, for each batch state, the DFA state after some prefix; the
 * walk runs the keys in byte order with one vector per depth on a stack, so
 * that a key reuses what it shares with the previous key and a prefix dead
 * from every batch state ends every key below it at once.  The vector a
 * key ends on is the key's round class.  A token's class in the index is
 * the sequence of its round classes: a chain of links (parent class, round,
 * vector), hash-consed per round, so that tokens share a class exactly when
 * they lead to the same state from every indexed state.
 *
 * When the states that bytes reach from the start are few (the search for
 * dead bytes finds them all), one round takes them all as its batch: one
 * walk instead of one per breadth-first level, and the states whole tokens
 * reach are then found by stepping class vectors, not keys.  Tokens that
 * differ only in states no token reaches may then fall in two classes,
 * which costs a column, never an answer. */
#include "index.h"

#include <stdlib.h>
#include <string.h>

#include "../base/buf.h"
#include "../base/hash.h"

#define UNSET UINT32_MAX
/* Most byte-reachable states that one round takes as a batch: a vector is
 * that many states wide. */
#define WHOLE_MAX 256

/* One round's vectors.  Vector v is st[v * m .. + m) (vector 0: all dead);
 * slot is an open-addressing set of vector ids keyed by contents (UNSET
 * free, slot_mask + 1 slots); memo[v * ncls + c] is the vector after byte
 * class c from v (UNSET: not stepped yet).  Only st outlives the round. */
typedef struct {
    uint32_t *batch, m; /* the batch: m DFA states */
    TB_VEC(uint32_t) st;
    uint32_t nvec;
    uint32_t *slot;
    size_t slot_mask;
    TB_VEC(uint32_t) memo;
} round_t;

/* A class: the class it refines (0: allowed nowhere so far), and the
 * round and vector that its tokens reach there. */
typedef struct {
    uint32_t parent, round, vec;
} link_t;

typedef struct {
    lex_index_t *x;
    lex_dfa_t *dfa;
    const trie_keys_t *k;
    size_t max_states, dfa_state_cap;
    uint32_t *live;  /* indices into k->keys of the keys with no dead byte */
    size_t nlive;
    uint32_t *lcp;   /* lcp[j]: bytes live key j shares with live key j - 1 */
    uint32_t *stack; /* vector ids along the current key: max_len + 1 */
    uint32_t *cls;   /* per live key: its class so far (a link) */
    uint32_t *vec;   /* per live key: this round's vector (0: dead) */
    TB_VEC(uint32_t) lid; /* the ids of a class other than 0, aliases too */
    uint32_t *tmp;   /* a vector being stepped */
    TB_VEC(uint32_t) reach; /* the states bytes reach from start, if all found */
    TB_VEC(link_t) link;
    TB_VEC(round_t) round;
} build_t;

static int oom(tb_err_t *err)
{
    return tb_fail(err, "out of memory for the index");
}

/* The index state of DFA state s, adding it to the queue if new. */
static uint32_t state_for(build_t *b, uint32_t s, tb_err_t *err)
{
    lex_index_t *x = b->x;
    if (s >= x->nof_dfa) {
        size_t old = x->nof_dfa, cap = old;
        if (tb_grow((void **)&x->of_dfa, &cap, old, (size_t)s + 1 - old, sizeof *x->of_dfa)) {
            oom(err);
            return LEX_INDEX_NONE;
        }
        for (size_t i = old; i < cap; i++)
            x->of_dfa[i] = LEX_INDEX_NONE;
        x->nof_dfa = cap;
    }
    if (x->of_dfa[s] != LEX_INDEX_NONE)
        return x->of_dfa[s];
    if (x->nstates >= b->max_states) {
        tb_fail(err, "index of regex '%s': more than %zu DFA states are reachable "
                "through whole tokens (the index's state cap)", b->dfa->pattern, b->max_states);
        return LEX_INDEX_NONE;
    }
    if (x->nstates == b->dfa_state_cap &&
        tb_grow((void **)&x->dfa_state, &b->dfa_state_cap, x->nstates, 1,
                sizeof *x->dfa_state)) {
        oom(err);
        return LEX_INDEX_NONE;
    }
    x->dfa_state[x->nstates] = s;
    x->of_dfa[s] = (uint32_t)x->nstates;
    return (uint32_t)x->nstates++;
}

/* ---- dead bytes ------------------------------------------------------------ */

/* dead[c] = 1 for the byte classes that no DFA state reachable from start
 * by bytes can read (whole tokens reach a subset of those states), and
 * b->reach those states.  The search stops, leaving every class alive and
 * reach empty, past max_states states or when the DFA might pass its own
 * cap: dropping dead-byte tokens is a shortcut, never needed for the
 * answer. */
static int dead_classes(build_t *b, uint32_t start, uint8_t dead[256], tb_err_t *err)
{
    lex_dfa_t *d = b->dfa;
    uint8_t *seen = NULL;
    size_t nseen = 0;
    int rc = -1, stopped = 0;
    memset(dead, 1, 256);
    if (tb_vec_push(&b->reach, start))
        goto out;
    for (size_t h = 0; h < b->reach.len && !stopped; h++) {
        if (b->reach.len > b->max_states || d->nstates + d->ncls >= d->max_states) {
            stopped = 1;
            break;
        }
        for (uint32_t c = 0; c < d->ncls; c++) {
            uint32_t n = lex_dfa_next(d, b->reach.data[h], d->rep[c]);
            if (n == LEX_DEAD)
                continue;
            dead[c] = 0;
            if (n >= nseen) {
                size_t old = nseen;
                if (tb_grow((void **)&seen, &nseen, old, n + 1 - old, 1))
                    goto out;
                memset(seen + old, 0, nseen - old);
            }
            if (n != start && !seen[n] && (seen[n] = 1, tb_vec_push(&b->reach, n)))
                goto out;
        }
    }
    if (stopped) {
        memset(dead, 0, 256);
        b->reach.len = 0;
    }
    rc = 0;
out:
    if (rc)
        oom(err);
    free(seen);
    return rc ? rc : lex_dfa_error(d, err);
}

/* The keys without a dead byte, and what each shares with the one before. */
static int live_keys(build_t *b, uint32_t start, tb_err_t *err)
{
    const trie_keys_t *k = b->k;
    uint8_t dead[256];
    if (dead_classes(b, start, dead, err))
        return -1;
    size_t n = k->n ? k->n : 1;
    b->live = malloc(n * sizeof *b->live);
    b->lcp = malloc(n * sizeof *b->lcp);
    b->cls = calloc(n, sizeof *b->cls);
    b->vec = malloc(n * sizeof *b->vec);
    b->stack = malloc(((size_t)k->max_len + 1) * sizeof *b->stack);
    if (!b->live || !b->lcp || !b->cls || !b->vec || !b->stack)
        return oom(err);
    uint8_t deadb[256];
    for (unsigned c = 0; c < 256; c++)
        deadb[c] = dead[b->dfa->cls[c]];
    /* A key that shares the previous key's bytes up to and including its
     * first dead byte (at fd; its length if none) is dead there too:
     * sorted keys mostly do.  The bytes it shares before fd are live. */
    const trie_key_t *prev = NULL, *last = NULL;
    uint32_t fd = 0;
    for (size_t i = 0; i < k->n; i++) {
        const trie_key_t *key = &k->keys[i];
        uint32_t j = 0;
        while (last && j <= fd && j < key->len && j < last->len && last->s[j] == key->s[j])
            j++;
        uint32_t shared = j;
        if (j > fd)
            j = fd;
        else
            while (j < key->len && !deadb[key->s[j]])
                j++;
        int last_live = last && last == prev;
        last = key;
        fd = j;
        if (j < key->len) {
            b->x->dead_tokens++;
            continue;
        }
        /* after a live key, shared is their common prefix */
        uint32_t l = last_live ? shared : 0;
        while (!last_live && prev && l < prev->len && l < key->len && prev->s[l] == key->s[l])
            l++;
        b->lcp[b->nlive] = l;
        b->live[b->nlive++] = (uint32_t)i;
        prev = key;
    }
    return 0;
}

/* ---- one round ------------------------------------------------------------- */

/* The id of vector v (m states), adding it if new; UNSET when out of
 * memory. */
static uint32_t intern(round_t *r, const uint32_t *v, uint32_t ncls)
{
    size_t bytes = (size_t)r->m * sizeof *v;
    uint64_t h = tb_hash(v, bytes);
    size_t i = (size_t)h & r->slot_mask;
    for (; r->slot[i] != UNSET; i = (i + 1) & r->slot_mask)
        if (!memcmp(r->st.data + (size_t)r->slot[i] * r->m, v, bytes))
            return r->slot[i];
    if (r->nvec == UNSET - 1 || tb_vec_reserve(&r->st, r->m) ||
        tb_vec_reserve(&r->memo, ncls))
        return UNSET;
    uint32_t id = r->nvec++;
    memcpy(r->st.data + r->st.len, v, bytes);
    r->st.len += r->m;
    memset(r->memo.data + r->memo.len, 0xFF, ncls * sizeof *r->memo.data);
    r->memo.len += ncls;
    r->slot[i] = id;
    if ((size_t)r->nvec * 2 > r->slot_mask) {
        size_t cap = (r->slot_mask + 1) * 2;
        uint32_t *s = malloc(cap * sizeof *s);
        if (!s)
            return UNSET;
        memset(s, 0xFF, cap * sizeof *s);
        for (uint32_t u = 0; u < r->nvec; u++) {
            size_t j = (size_t)tb_hash(r->st.data + (size_t)u * r->m, bytes) & (cap - 1);
            while (s[j] != UNSET)
                j = (j + 1) & (cap - 1);
            s[j] = u;
        }
        free(r->slot);
        r->slot = s;
        r->slot_mask = cap - 1;
    }
    return id;
}

/* The vector after byte class c from vector v; UNSET with err on failure. */
static uint32_t step(build_t *b, round_t *r, uint32_t v, uint32_t c, tb_err_t *err)
{
    lex_dfa_t *d = b->dfa;
    size_t at = (size_t)v * d->ncls + c;
    if (r->memo.data[at] != UNSET)
        return r->memo.data[at];
    const uint32_t *from = r->st.data + (size_t)v * r->m;
    for (uint32_t p = 0; p < r->m; p++)
        b->tmp[p] = from[p] == LEX_DEAD ? LEX_DEAD : lex_dfa_next(d, from[p], d->rep[c]);
    if (lex_dfa_error(d, err))
        return UNSET;
    uint32_t w = intern(r, b->tmp, d->ncls);
    if (w == UNSET)
        oom(err);
    else
        r->memo.data[at] = w;
    return w;
}

/* Every live key run from the batch: vec[j] the vector key j ends on. */
static int walk(build_t *b, round_t *r, uint32_t first, tb_err_t *err)
{
    const trie_keys_t *k = b->k;
    uint32_t top = 0; /* stack[0..top]: the previous key's path */
    b->stack[0] = first;
    for (size_t j = 0; j < b->nlive; j++) {
        const trie_key_t *key = &k->keys[b->live[j]];
        uint32_t d = b->lcp[j] < top ? b->lcp[j] : top, v = b->stack[d];
        for (; v && d < key->len; d++) {
            if ((v = step(b, r, v, b->dfa->cls[key->s[d]], err)) == UNSET)
                return -1;
            b->stack[d + 1] = v;
            b->x->walk_nodes++;
        }
        top = d;
        b->vec[j] = v;
    }
    return 0;
}

/* Indexes the states that tokens reach from index states `from` on whose
 * DFA state is in the batch (and from the states so found, while they are
 * in it too). */
static int expand(build_t *b, round_t *r, size_t from, tb_err_t *err)
{
    lex_index_t *x = b->x;
    uint32_t top = 0;
    for (uint32_t p = 0; p < r->m; p++)
        top = r->batch[p] > top ? r->batch[p] : top;
    uint8_t *used = calloc(r->nvec, 1);
    uint32_t *pos = malloc(((size_t)top + 1) * sizeof *pos);
    int rc = -1;
    if (!used || !pos) {
        oom(err);
        goto out;
    }
    memset(pos, 0xFF, ((size_t)top + 1) * sizeof *pos);
    for (uint32_t p = 0; p < r->m; p++)
        pos[r->batch[p]] = p;
    for (size_t j = 0; j < b->nlive; j++)
        used[b->vec[j]] = 1;
    for (size_t i = from; i < x->nstates; i++) {
        uint32_t s = x->dfa_state[i], p = s <= top ? pos[s] : UNSET;
        for (uint32_t v = 1; p != UNSET && v < r->nvec; v++) {
            uint32_t t = r->st.data[(size_t)v * r->m + p];
            if (used[v] && t != LEX_DEAD && state_for(b, t, err) == LEX_INDEX_NONE)
                goto out;
        }
    }
    rc = 0;
out:
    free(used);
    free(pos);
    return rc;
}

/* Refines each token's class by its vector of round ri. */
static int refine(build_t *b, uint32_t ri, tb_err_t *err)
{
    tb_u64map_t pair = {0};
    if (tb_u64map_init(&pair, 1024))
        return oom(err);
    for (size_t j = 0; j < b->nlive; j++) {
        if (!b->vec[j])
            continue;
        uint64_t key = (uint64_t)b->cls[j] << 32 | b->vec[j], id = b->link.len;
        int got = tb_u64map_put(&pair, key, id);
        if (got < 0 || (!got && tb_vec_push(&b->link, ((link_t){b->cls[j], ri, b->vec[j]})))) {
            tb_u64map_free(&pair);
            return oom(err);
        }
        if (got)
            tb_u64map_get(&pair, key, &id);
        b->cls[j] = (uint32_t)id;
    }
    tb_u64map_free(&pair);
    return 0;
}

/* The batch's m DFA states as one round; from: the first index state the
 * round expands. */
static int run_round(build_t *b, const uint32_t *batch, uint32_t m, size_t from, tb_err_t *err)
{
    if (tb_vec_reserve(&b->round, 1))
        return oom(err);
    round_t *r = &b->round.data[b->round.len++];
    memset(r, 0, sizeof *r);
    r->m = m;
    r->slot_mask = 63;
    free(b->tmp);
    if (!(b->tmp = calloc(m, sizeof *b->tmp)) || !(r->batch = malloc(m * sizeof *r->batch)) ||
        !(r->slot = malloc((r->slot_mask + 1) * sizeof *r->slot)))
        return oom(err);
    memcpy(r->batch, batch, m * sizeof *batch);
    memset(r->slot, 0xFF, (r->slot_mask + 1) * sizeof *r->slot);
    uint32_t first;
    if (intern(r, b->tmp, b->dfa->ncls) == UNSET ||
        (first = intern(r, r->batch, b->dfa->ncls)) == UNSET)
        return oom(err);
    int rc = walk(b, r, first, err) || expand(b, r, from, err) ||
             refine(b, (uint32_t)(b->round.len - 1), err);
    free(r->slot);
    free(r->memo.data);
    r->slot = NULL;
    r->memo.data = NULL;
    return rc ? -1 : 0;
}

/* ---- the index from the classes ------------------------------------------- */

/* Runs `body` for every link of chain c (its round r, its vector v) and
 * every batch position p whose DFA state is index state i and from which
 * the chain's tokens lead to a live state, v[p]. */
#define EACH_INDEXED(b, c, body)                                                         \
    for (uint32_t l_ = (c); l_; l_ = (b)->link.data[l_].parent) {                        \
        const round_t *r = &(b)->round.data[(b)->link.data[l_].round];                   \
        const uint32_t *v = r->st.data + (size_t)(b)->link.data[l_].vec * r->m;          \
        for (uint32_t p = 0; p < r->m; p++) {                                            \
            uint32_t i = lex_index_state((b)->x, r->batch[p]);                           \
            if (i != LEX_INDEX_NONE && v[p] != LEX_DEAD)                                 \
                body;                                                                    \
        }                                                                                \
    }

/* Whether the tokens of chain c are allowed in some index state. */
static int allowed_somewhere(const build_t *b, uint32_t c)
{
    EACH_INDEXED(b, c, return 1);
    return 0;
}

/* class_of and the next-state table from the links the keys ended on. */
static int classes(build_t *b, tb_err_t *err)
{
    lex_index_t *x = b->x;
    uint32_t *num = malloc((b->link.len ? b->link.len : 1) * sizeof *num);
    if (!num || !(x->class_of = calloc(x->mask_bits, sizeof *x->class_of))) {
        free(num);
        return oom(err);
    }
    memset(num, 0xFF, b->link.len * sizeof *num);
    num[0] = 0;
    x->nclasses = 1;
    for (size_t j = 0; j < b->nlive; j++) {
        uint32_t c = b->cls[j], id = b->k->keys[b->live[j]].id;
        if (num[c] == UNSET)
            num[c] = allowed_somewhere(b, c) ? x->nclasses++ : 0;
        if (id >= x->mask_bits) {
            free(num);
            return tb_fail(err, "index: token id %u is past the trie's %zu mask bits", id,
                           x->mask_bits);
        }
        x->class_of[id] = num[c];
        if (num[c] && tb_vec_push(&b->lid, id)) {
            free(num);
            return oom(err);
        }
    }
    for (size_t a = 0; a < b->k->nalias; a++) {
        uint32_t id = b->k->alias[2 * a], of = b->k->alias[2 * a + 1];
        if (id < x->mask_bits && of < x->mask_bits && (x->class_of[id] = x->class_of[of]) &&
            tb_vec_push(&b->lid, id)) {
            free(num);
            return oom(err);
        }
    }
    size_t n = x->nstates * x->nclasses;
    if (!(x->next = malloc((n ? n : 1) * sizeof *x->next))) {
        free(num);
        return oom(err);
    }
    memset(x->next, 0xFF, n * sizeof *x->next);
    for (uint32_t c = 1; c < b->link.len; c++)
        if (num[c] != UNSET && num[c])
            EACH_INDEXED(b, c, x->next[(size_t)i * x->nclasses + num[c]] = x->of_dfa[v[p]]);
    free(num);
    return 0;
}

/* Turns the full table of classes() into rows: a state that allows fewer
 * than half the classes keeps (class, next) pairs, the others full rows. */
static int next_rows(lex_index_t *x)
{
    uint32_t *full = x->next, k = x->nclasses;
    size_t nfull = 0, npairs = 0;
    if (!(x->row = malloc((x->nstates ? x->nstates : 1) * sizeof *x->row)))
        return -1;
    for (size_t i = 0; i < x->nstates; i++) {
        uint32_t n = 0;
        for (uint32_t c = 1; c < k; c++)
            n += full[i * k + c] != LEX_INDEX_NONE;
        x->row[i].n = (size_t)n * 2 < k ? n : LEX_INDEX_NONE;
        x->row[i].at = x->row[i].n == LEX_INDEX_NONE ? nfull : npairs;
        *(x->row[i].n == LEX_INDEX_NONE ? &nfull : &npairs) +=
            x->row[i].n == LEX_INDEX_NONE ? k : n;
    }
    x->next = malloc((nfull ? nfull : 1) * sizeof *x->next);
    x->pair_class = malloc((npairs ? npairs : 1) * sizeof *x->pair_class);
    x->pair_next = malloc((npairs ? npairs : 1) * sizeof *x->pair_next);
    if (!x->next || !x->pair_class || !x->pair_next) {
        free(full);
        return -1;
    }
    for (size_t i = 0; i < x->nstates; i++) {
        const uint32_t *r = full + i * k;
        if (x->row[i].n == LEX_INDEX_NONE) {
            memcpy(x->next + x->row[i].at, r, k * sizeof *r);
            continue;
        }
        for (uint32_t c = 1, e = 0; c < k; c++)
            if (r[c] != LEX_INDEX_NONE) {
                x->pair_class[x->row[i].at + e] = c;
                x->pair_next[x->row[i].at + e++] = r[c];
            }
    }
    x->nnext = nfull;
    x->npairs = npairs;
    free(full);
    return 0;
}

/* The tokens of each class but 0: ids[off[c] .. off[c + 1]) of lid's n. */
static int class_tokens(const lex_index_t *x, const uint32_t *lid, size_t n, uint32_t **off,
                        uint32_t **ids)
{
    *off = calloc((size_t)x->nclasses + 1, sizeof **off);
    *ids = malloc((n ? n : 1) * sizeof **ids);
    uint32_t *at = malloc(((size_t)x->nclasses + 1) * sizeof *at);
    if (!*off || !*ids || !at) {
        free(at);
        return -1;
    }
    for (size_t t = 0; t < n; t++)
        (*off)[x->class_of[lid[t]] + 1]++;
    for (uint32_t c = 0; c < x->nclasses; c++)
        (*off)[c + 1] += (*off)[c];
    memcpy(at, *off, ((size_t)x->nclasses + 1) * sizeof *at);
    for (size_t t = 0; t < n; t++)
        (*ids)[at[x->class_of[lid[t]]]++] = lid[t];
    free(at);
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Keeps the class map as a sorted list when few tokens (lid's n) are
 * live. */
static int sparse_classes(lex_index_t *x, uint32_t *lid, size_t n)
{
    if (n > x->mask_bits / 16)
        return 0;
    x->live_id = malloc((n ? n : 1) * sizeof *x->live_id);
    x->live_class = malloc((n ? n : 1) * sizeof *x->live_class);
    if (!x->live_id || !x->live_class)
        return -1;
    qsort(lid, n, sizeof *lid, cmp_u32);
    for (size_t t = 0; t < n; t++) {
        x->live_id[t] = lid[t];
        x->live_class[t] = x->class_of[lid[t]];
    }
    x->nlive = n;
    free(x->class_of);
    x->class_of = NULL;
    return 0;
}

/* Appends the mask `words` (n tokens) as a bitset or a list of ids. */
static int add_set(lex_index_t *x, const uint64_t *words, uint32_t n, size_t *wcap,
                   size_t *icap)
{
    size_t nw = tb_bitset_words(x->mask_bits);
    lex_index_set_t *s = &x->set[x->nsets++];
    s->n = n;
    s->dense = (size_t)n * 64 > x->mask_bits;
    if (s->dense) {
        if (tb_grow((void **)&x->words, wcap, x->nwords, nw, sizeof *x->words))
            return -1;
        s->at = x->nwords;
        memcpy(x->words + x->nwords, words, nw * sizeof *words);
        x->nwords += nw;
        return 0;
    }
    if (tb_grow((void **)&x->ids, icap, x->nids, n ? n : 1, sizeof *x->ids))
        return -1;
    s->at = x->nids;
    for (size_t w = 0; w < nw; w++)
        for (uint64_t bits = words[w]; bits; bits &= bits - 1)
            x->ids[x->nids++] = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(bits));
    return 0;
}

/* One mask per distinct set of allowed classes. */
static int masks(build_t *b, tb_err_t *err)
{
    lex_index_t *x = b->x;
    size_t nw = tb_bitset_words(x->mask_bits), cw = tb_bitset_words(x->nclasses);
    uint32_t *off = NULL, *ids = NULL;
    uint64_t *rows = calloc(x->nstates * cw + 1, sizeof *rows);
    uint64_t *words = malloc((nw ? nw : 1) * sizeof *words);
    tb_u64map_t seen = {0};
    size_t wcap = 0, icap = 0;
    int rc = -1;
    if (!rows || !words || class_tokens(x, b->lid.data, b->lid.len, &off, &ids) ||
        tb_u64map_init(&seen, x->nstates) ||
        !(x->mask_of = malloc((x->nstates ? x->nstates : 1) * sizeof *x->mask_of)) ||
        !(x->set = malloc((x->nstates ? x->nstates : 1) * sizeof *x->set)))
        goto out;
    for (size_t i = 0; i < x->nstates; i++) {
        uint64_t *row = rows + i * cw, m;
        for (uint32_t c = 1; c < x->nclasses; c++)
            if (x->next[i * x->nclasses + c] != LEX_INDEX_NONE)
                row[c / 64] |= 1ull << (c % 64);
        uint64_t h = tb_hash(row, cw * sizeof *row) & ~1ull; /* never UINT64_MAX */
        if (tb_u64map_get(&seen, h, &m) &&
            !memcmp(rows + (size_t)m * cw, row, cw * sizeof *row)) {
            x->mask_of[i] = x->mask_of[m];
            x->entries += x->set[x->mask_of[i]].n;
            continue;
        }
        if (tb_u64map_put(&seen, h, i) < 0)
            goto out;
        memset(words, 0, nw * sizeof *words);
        uint32_t n = 0;
        for (uint32_t c = 1; c < x->nclasses; c++)
            if ((row[c / 64] >> (c % 64)) & 1) {
                for (uint32_t e = off[c]; e < off[c + 1]; e++)
                    words[ids[e] / 64] |= 1ull << (ids[e] % 64);
                n += off[c + 1] - off[c];
            }
        x->mask_of[i] = (uint32_t)x->nsets;
        if (add_set(x, words, n, &wcap, &icap))
            goto out;
        x->entries += n;
    }
    rc = sparse_classes(x, b->lid.data, b->lid.len) || next_rows(x) ? -1 : 0;
out:
    free(rows);
    free(words);
    free(off);
    free(ids);
    tb_u64map_free(&seen);
    return rc ? oom(err) : 0;
}

static void build_free(build_t *b)
{
    free(b->live);
    free(b->lcp);
    free(b->stack);
    free(b->cls);
    free(b->vec);
    free(b->tmp);
    for (size_t i = 0; i < b->round.len; i++) {
        free(b->round.data[i].st.data);
        free(b->round.data[i].batch);
        free(b->round.data[i].slot);
        free(b->round.data[i].memo.data);
    }
    free(b->round.data);
    free(b->link.data);
    free(b->reach.data);
    free(b->lid.data);
}

lex_index_t *lex_index_build(const trie_t *t, const trie_keys_t *k, lex_dfa_t *dfa,
                             uint32_t start, size_t max_states, tb_err_t *err)
{
    build_t b = {.max_states = max_states ? max_states : LEX_INDEX_DEFAULT_MAX_STATES,
                 .dfa = dfa, .k = k};
    lex_index_t *x = b.x = calloc(1, sizeof *x);
    int rc = -1;
    if (!x || tb_vec_push(&b.link, ((link_t){0, 0, 0}))) {
        oom(err);
        goto out;
    }
    x->mask_bits = trie_mask_bits(t);
    if (live_keys(&b, start, err) || state_for(&b, start, err) == LEX_INDEX_NONE)
        goto out;
    /* One round over every byte-reachable state if they are few, else
     * each round takes the states the previous one found. */
    if (b.reach.len && b.reach.len <= WHOLE_MAX) {
        if (run_round(&b, b.reach.data, (uint32_t)b.reach.len, 0, err))
            goto out;
        x->rounds = 1;
    }
    for (size_t lo = x->rounds ? x->nstates : 0, hi; lo < x->nstates; lo = hi, x->rounds++) {
        hi = x->nstates;
        if (run_round(&b, x->dfa_state + lo, (uint32_t)(hi - lo), lo, err))
            goto out;
    }
    rc = classes(&b, err) || masks(&b, err) ? -1 : 0;
out:
    build_free(&b);
    if (rc) {
        lex_index_free(x);
        return NULL;
    }
    return x;
}

void lex_index_free(lex_index_t *x)
{
    if (!x)
        return;
    free(x->dfa_state);
    free(x->of_dfa);
    free(x->class_of);
    free(x->live_id);
    free(x->live_class);
    free(x->row);
    free(x->next);
    free(x->pair_class);
    free(x->pair_next);
    free(x->mask_of);
    free(x->set);
    free(x->words);
    free(x->ids);
    free(x);
}

void lex_index_mask(const lex_index_t *x, uint32_t i, tb_bitset_t *mask)
{
    size_t nw = tb_bitset_words(x->mask_bits), have = tb_bitset_words(mask->nbits);
    const lex_index_set_t *s = &x->set[x->mask_of[i]];
    if (s->dense) {
        memcpy(mask->words, x->words + s->at, nw * sizeof *mask->words);
        if (have > nw)
            memset(mask->words + nw, 0, (have - nw) * sizeof *mask->words);
        return;
    }
    tb_bitset_clear_all(mask);
    for (const uint32_t *t = x->ids + s->at, *end = t + s->n; t < end; t++)
        tb_bitset_set(mask, *t);
}

uint32_t lex_index_class(const lex_index_t *x, uint32_t tok)
{
    if (tok >= x->mask_bits)
        return 0;
    if (x->class_of)
        return x->class_of[tok];
    size_t lo = 0, hi = x->nlive;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->live_id[mid] < tok)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < x->nlive && x->live_id[lo] == tok ? x->live_class[lo] : 0;
}

uint32_t lex_index_next(const lex_index_t *x, uint32_t i, uint32_t tok)
{
    uint32_t c = lex_index_class(x, tok);
    const lex_index_row_t *r = &x->row[i];
    if (r->n == LEX_INDEX_NONE)
        return x->next[r->at + c];
    const uint32_t *cls = x->pair_class + r->at;
    uint32_t lo = 0, hi = r->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cls[mid] < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->n && cls[lo] == c ? x->pair_next[r->at + lo] : LEX_INDEX_NONE;
}

void lex_index_mem(const lex_index_t *x, lex_index_mem_t *m)
{
    m->states = x->nstates * (sizeof *x->dfa_state + sizeof *x->mask_of + sizeof *x->row) +
                x->nof_dfa * sizeof *x->of_dfa;
    m->classes = x->class_of ? x->mask_bits * sizeof *x->class_of
                             : x->nlive * (sizeof *x->live_id + sizeof *x->live_class);
    m->next = x->nnext * sizeof *x->next +
              x->npairs * (sizeof *x->pair_class + sizeof *x->pair_next);
    m->masks = x->nsets * sizeof *x->set + x->nwords * sizeof *x->words +
               x->nids * sizeof *x->ids;
    m->total = sizeof *x + m->states + m->classes + m->next + m->masks;
}

size_t lex_index_bytes(const lex_index_t *x)
{
    lex_index_mem_t m;
    lex_index_mem(x, &m);
    return m.total;
}
