/* Tests of trie/: every layout against a hash-map reference and against each
 * other, on hand-made cases, random vocabularies and the real vocabularies
 * of the manifest (loaded with tok_load); mask walks against a brute-force check of every token;
 * limits and bad keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "../base/hash.h"
#include "../trie/da.h"
#include "../tok/tokenizer.h"
#include "support.h"
#include "../trie/trie.h"

#define NLAYOUTS 5

/* ---- randomness ------------------------------------------------------ */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

/* ---- vocabularies ------------------------------------------------------ */

typedef struct {
    const char *s;
    uint32_t len; /* 0: strlen */
    uint32_t id;
    tok_kind_t kind;
    int special;
} tok_spec_t;

static void make_vocab(tok_vocab_t *v, const tok_spec_t *t, size_t n)
{
    tb_err_t err;
    tok_vocab_builder_t *b = tok_vocab_builder_new();
    for (size_t i = 0; i < n; i++) {
        uint32_t len = t[i].len ? t[i].len : (uint32_t)strlen(t[i].s);
        if (tok_vocab_add(b, t[i].id, (const uint8_t *)t[i].s, len, 0,
                          t[i].kind ? t[i].kind : TOK_NORMAL, t[i].special, &err))
            fail_msg("%s", err.msg);
    }
    if (tok_vocab_finish(b, v, &err))
        fail_msg("%s", err.msg);
}

/* ---- building every layout --------------------------------------------- */

typedef struct {
    trie_t *t[NLAYOUTS];
    tb_err_t err[NLAYOUTS]; /* why a layout refused, where it did */
    double build_ms[NLAYOUTS];
} tries_t;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void build_all(const trie_keys_t *k, tries_t *tr)
{
    for (int i = 0; i < NLAYOUTS; i++) {
        assert_non_null(trie_layouts[i]);
        double start = now_ms();
        tr->t[i] = trie_build(trie_layouts[i], k, &tr->err[i]);
        tr->build_ms[i] = now_ms() - start;
        if (tr->t[i]) {
            tb_err_t err;
            if (trie_validate(tr->t[i], &err))
                fail_msg("%s", err.msg);
        }
    }
    assert_null(trie_layouts[NLAYOUTS]);
}

static void free_all(tries_t *tr)
{
    for (int i = 0; i < NLAYOUTS; i++)
        trie_free(tr->t[i]);
}

/* Every layout builds. */
static void expect_built(tries_t *tr)
{
    for (int i = 0; i < NLAYOUTS; i++)
        if (!tr->t[i])
            fail_msg("%s", tr->err[i].msg);
}

/* ---- agreement with a hash-map reference -------------------------------- */

typedef struct {
    tb_strmap_t map; /* key bytes -> id */
    uint32_t max_len;
} ref_t;

static void ref_init(ref_t *r, const trie_keys_t *k)
{
    assert_int_equal(tb_strmap_init(&r->map, k->n), 0);
    for (size_t i = 0; i < k->n; i++)
        assert_int_equal(tb_strmap_put(&r->map, k->keys[i].s, k->keys[i].len,
                                       (int32_t)k->keys[i].id), 0);
    r->max_len = k->max_len;
}

static void check_query(const ref_t *r, const tries_t *tr, const uint8_t *s,
                        size_t n)
{
    static trie_match_t want[1 << 16], got[1 << 16];
    size_t nwant = 0;
    for (size_t len = 1; len <= n && len <= r->max_len; len++) {
        int32_t id = tb_strmap_get(&r->map, s, len);
        if (id >= 0)
            want[nwant++] = (trie_match_t){.id = (uint32_t)id, .len = (uint32_t)len};
    }
    int32_t exact = n ? tb_strmap_get(&r->map, s, n) : -1;
    for (int i = 0; i < NLAYOUTS; i++) {
        if (!tr->t[i])
            continue;
        if (trie_lookup(tr->t[i], s, n) != exact)
            fail_msg("%s: lookup of a %zu-byte string gives %d, not %d",
                     trie_layouts[i]->name, n, trie_lookup(tr->t[i], s, n), exact);
        size_t ngot = trie_prefixes(tr->t[i], s, n, got, 1 << 16);
        assert_int_equal(ngot, nwant);
        assert_memory_equal(got, want, nwant * sizeof *got);
        if (nwant > 1) /* a short buffer still gets the count and the first */
            assert_int_equal(trie_prefixes(tr->t[i], s, n, got, 1), nwant);
    }
}

/* Every key, then random strings: raw bytes (NUL and 0xFF included), keys
 * with a byte added, changed or dropped. */
static void check_agreement(const trie_keys_t *k, const tries_t *tr, size_t nrandom)
{
    ref_t r;
    ref_init(&r, k);
    for (size_t i = 0; i < k->n; i++)
        check_query(&r, tr, k->keys[i].s, k->keys[i].len);
    uint8_t buf[1 << 16];
    for (size_t q = 0; q < nrandom; q++) {
        size_t n;
        const trie_key_t *key = k->n ? &k->keys[rnd((uint32_t)k->n)] : NULL;
        uint32_t how = key ? rnd(4) : 0;
        if (how == 0) {
            n = rnd(24);
            for (size_t j = 0; j < n; j++)
                buf[j] = (uint8_t)(rnd(4) == 0 ? (rnd(2) ? 0x00 : 0xFF) : rnd(256));
        } else {
            n = key->len < sizeof buf - 1 ? key->len : sizeof buf - 1;
            memcpy(buf, key->s, n);
            if (how == 1)
                buf[n++] = (uint8_t)rnd(256);
            else if (how == 2)
                buf[rnd((uint32_t)n)] ^= (uint8_t)(1 + rnd(255));
            else
                n--;
        }
        check_query(&r, tr, buf, n);
    }
    tb_strmap_free(&r.map);
}

/* ---- recognizers ----------------------------------------------------- */

/* A DFA over bytes with a stack of states.  delta[s][b] is the next state,
 * or DEAD.  Its stack is trie_rec_table_t's (trie.h): state s is row
 * (s + 1) * 256, byte b its column (cls is the identity), so that it can
 * hand walks its table in three ways:
 *   DFA_CALLS  no table: the walk calls push_byte and pop_bytes;
 *   DFA_TABLE  the whole table: the walk runs it and never calls push_byte
 *              (counted in `calls`);
 *   DFA_LAZY   every entry TRIE_REC_UNKNOWN at first: push_byte derives the
 *              entry and moves the table to fresh memory each time, so a
 *              walk that kept the old pointer reads freed memory (which
 *              ASan reports) or stale entries (which the masks show).
 * Also notes a pop past the bottom, so that a walk can be checked to leave
 * the stack as it found it. */
#define DEAD 0xFF
enum { DFA_CALLS, DFA_TABLE, DFA_LAZY };
#define DFA_STATES 5
#define DFA_TABLE_LEN ((DFA_STATES + 1) * 256)
typedef struct {
    trie_rec_t rec;
    const uint8_t (*delta)[256];
    uint32_t *table; /* owned; NULL for DFA_CALLS */
    uint8_t cls[256];
    int mode;
    size_t calls, computed;
    int underflow;
} dfa_rec_t;

static uint32_t dfa_row(uint8_t state)
{
    return state == DEAD ? 0 : (state + 1u) * 256u;
}

static int dfa_push(trie_rec_t *r, uint8_t b)
{
    dfa_rec_t *d = (dfa_rec_t *)r;
    trie_rec_table_t *t = &r->tab;
    uint32_t row = t->stack[t->depth];
    uint8_t next = d->delta[row / 256 - 1][b];
    d->calls++;
    if (d->mode == DFA_LAZY && d->table[row + b] == TRIE_REC_UNKNOWN) {
        uint32_t *moved = malloc(DFA_TABLE_LEN * sizeof *moved);
        assert_non_null(moved);
        memcpy(moved, d->table, DFA_TABLE_LEN * sizeof *moved);
        moved[row + b] = dfa_row(next);
        free(d->table);
        d->table = moved;
        t->table = moved;
        d->computed++;
    }
    if (next == DEAD)
        return 0;
    assert_true(t->depth + 1 < t->cap);
    t->stack[++t->depth] = dfa_row(next);
    return 1;
}

static void dfa_pop(trie_rec_t *r, uint32_t n)
{
    dfa_rec_t *d = (dfa_rec_t *)r;
    if (n > r->tab.depth) {
        d->underflow = 1;
        n = (uint32_t)r->tab.depth;
    }
    r->tab.depth -= n;
}

static void dfa_allowed(trie_rec_t *r, uint64_t set[4])
{
    dfa_rec_t *d = (dfa_rec_t *)r;
    uint32_t row = r->tab.stack[r->tab.depth];
    memset(set, 0, 4 * sizeof *set);
    for (int b = 0; b < 256; b++)
        if (d->delta[row / 256 - 1][b] != DEAD)
            set[b >> 6] |= 1ull << (b & 63);
}

static void dfa_init_mode(dfa_rec_t *d, const uint8_t (*delta)[256], int with_hook,
                          int mode)
{
    memset(d, 0, sizeof *d);
    d->rec = (trie_rec_t){.push_byte = dfa_push, .pop_bytes = dfa_pop,
                          .allowed_bytes = with_hook ? dfa_allowed : NULL};
    d->delta = delta;
    d->mode = mode;
    d->rec.tab.cap = 70000;
    d->rec.tab.stack = calloc(d->rec.tab.cap, sizeof *d->rec.tab.stack);
    assert_non_null(d->rec.tab.stack);
    d->rec.tab.stack[0] = dfa_row(0);
    if (mode == DFA_CALLS)
        return;
    d->table = malloc(DFA_TABLE_LEN * sizeof *d->table);
    assert_non_null(d->table);
    for (size_t i = 0; i < DFA_TABLE_LEN; i++)
        d->table[i] = i < 256 ? 0
                    : mode == DFA_LAZY ? TRIE_REC_UNKNOWN
                                       : dfa_row(delta[i / 256 - 1][i % 256]);
    for (int b = 0; b < 256; b++)
        d->cls[b] = (uint8_t)b;
    d->rec.tab.table = d->table;
    d->rec.tab.cls = d->cls;
}

static void dfa_init(dfa_rec_t *d, const uint8_t (*delta)[256], int with_hook)
{
    dfa_init_mode(d, delta, with_hook, DFA_CALLS);
}

static void dfa_free(dfa_rec_t *d)
{
    free(d->rec.tab.stack);
    free(d->table);
}

/* Recognizers for the tests: a table of up to 5 states. */
typedef uint8_t dfa_table_t[DFA_STATES][256];

/* "Allowed bytes = a set, at any depth": one state. */
static void set_dfa(dfa_table_t t, const char *bytes, size_t n)
{
    memset(t, DEAD, sizeof(dfa_table_t));
    for (size_t i = 0; i < n; i++)
        t[0][(uint8_t)bytes[i]] = 0;
}

/* A number as it is typed, after optional spaces: ' '* -? [0-9]+ (. [0-9]+)?
 * States: 0 start, 1 after '-', 2 in the integer, 3 after '.', 4 fraction. */
static void number_dfa(dfa_table_t t)
{
    memset(t, DEAD, sizeof(dfa_table_t));
    t[0][' '] = 0;
    t[0]['-'] = 1;
    for (int c = '0'; c <= '9'; c++) {
        t[0][c] = t[1][c] = t[2][c] = 2;
        t[3][c] = t[4][c] = 4;
    }
    t[2]['.'] = 3;
}

/* The state after s from state q, or DEAD. */
static uint8_t dfa_run(const dfa_table_t t, uint8_t q, const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n && q != DEAD; i++)
        q = t[q][s[i]];
    return q;
}

/* 1 if the DFA accepts every byte of s from its start state. */
static int dfa_accepts(const dfa_table_t t, const uint8_t *s, size_t n)
{
    return dfa_run(t, 0, s, n) != DEAD;
}

/* The mask by brute force: every id of the vocabulary whose bytes (behind
 * the marker for a special token, if they are kept) the DFA accepts; with
 * no vocabulary, every key. */
static void brute_mask(const dfa_table_t t, const trie_keys_t *k,
                       const tok_vocab_t *v, trie_specials_t specials,
                       tb_bitset_t *mask)
{
    for (uint32_t id = 0; v && id < v->size; id++) {
        size_t len;
        const uint8_t *s = tok_vocab_token(v, id, &len);
        int special = v->special[id] || v->kind[id] == TOK_CONTROL ||
                      v->kind[id] == TOK_UNKNOWN || v->kind[id] == TOK_UNUSED;
        if (len == 0 || (special && specials == TRIE_SPECIALS_OMIT))
            continue;
        uint8_t q = special ? t[0][TRIE_SPECIAL_MARKER] : 0;
        if (q != DEAD && dfa_run(t, q, s, len) != DEAD)
            tb_bitset_set(mask, id);
    }
    for (size_t i = 0; !v && i < k->n; i++)
        if (dfa_accepts(t, k->keys[i].s, k->keys[i].len))
            tb_bitset_set(mask, k->keys[i].id);
}

/* Every built layout's walk, through each of the recognizer's paths (calls,
 * with and without the allowed-bytes hook; its whole table; its table
 * filled in while walking, with and without the hook), gives the
 * brute-force mask and leaves the recognizer's stack empty.  The table
 * paths call push_byte only for entries not computed yet. */
static void check_walks(const dfa_table_t t, const trie_keys_t *k,
                        const tok_vocab_t *v, trie_specials_t sp,
                        const tries_t *tr, int hookless)
{
    static const struct {
        int mode, hook;
    } paths[] = {{DFA_CALLS, 0}, {DFA_CALLS, 1}, {DFA_TABLE, 1},
                 {DFA_LAZY, 1}, {DFA_LAZY, 0}};
    tb_bitset_t want, got;
    size_t bits = (size_t)k->id_limit + 1;
    assert_int_equal(tb_bitset_init(&want, bits), 0);
    assert_int_equal(tb_bitset_init(&got, bits), 0);
    brute_mask(t, k, v, sp, &want);
    for (int i = 0; i < NLAYOUTS; i++) {
        for (size_t w = hookless ? 0 : 1; w < sizeof paths / sizeof *paths && tr->t[i]; w++) {
            dfa_rec_t d;
            dfa_init_mode(&d, (const uint8_t(*)[256])t, paths[w].hook, paths[w].mode);
            tb_bitset_clear_all(&got);
            uint64_t visited = trie_walk(tr->t[i], &d.rec, &got);
            assert_true(visited <= trie_nodes(tr->t[i]) * 256);
            if (!tb_bitset_equal(&got, &want))
                fail_msg("%s walk (mode %d, hook %d): %zu tokens, brute force %zu",
                         trie_layouts[i]->name, paths[w].mode, paths[w].hook,
                         tb_bitset_count(&got), tb_bitset_count(&want));
            assert_int_equal(d.rec.tab.depth, 0);
            assert_false(d.underflow);
            if (paths[w].mode == DFA_TABLE)
                assert_int_equal(d.calls, 0);
            if (paths[w].mode == DFA_LAZY) {
                assert_int_equal(d.calls, d.computed);
                /* the first byte offered from a state computes its entry */
                assert_int_equal(d.computed > 0, visited > 0);
            }
            dfa_free(&d);
        }
    }
    tb_bitset_free(&want);
    tb_bitset_free(&got);
}

static void check_all_walks(const trie_keys_t *k, const tok_vocab_t *v,
                            trie_specials_t sp, const tries_t *tr, int hookless)
{
    dfa_table_t t;
    number_dfa(t);
    check_walks(t, k, v, sp, tr, hookless);
    set_dfa(t, " abcdefghijklmnopqrstuvwxyz", 27);
    check_walks(t, k, v, sp, tr, hookless);
    set_dfa(t, "a\0\xff", 3);
    check_walks(t, k, v, sp, tr, hookless);
    memset(t, 0, sizeof t); /* every byte, one state */
    check_walks(t, k, v, sp, tr, hookless);
    /* after a walk, `dat` holds its child chain: validate checks it */
    for (int i = 0; i < NLAYOUTS; i++) {
        tb_err_t err;
        if (tr->t[i] && trie_validate(tr->t[i], &err))
            fail_msg("after walks: %s", err.msg);
    }
}

/* ---- hand-made cases ---------------------------------------------------- */

static void small_vocabulary(void **state)
{
    (void)state;
    static char spaces[1001];
    memset(spaces, ' ', 1000);
    const tok_spec_t toks[] = {
        {"a", 0, 5, 0, 0},      {"ab", 0, 2, 0, 0},   {"abc", 0, 9, 0, 0},
        {"b", 0, 1, 0, 0},      {"\0", 1, 3, 0, 0},   {"\0x", 2, 4, 0, 0},
        {"\xff", 0, 6, 0, 0},   {"\xff\xfe", 0, 7, 0, 0},
        {spaces, 0, 8, 0, 0},   {" ", 0, 0, 0, 0},    {"ab", 0, 10, TOK_BYTE, 0},
        {"<s>", 0, 11, TOK_CONTROL, 1},
    };
    tok_vocab_t v;
    make_vocab(&v, toks, sizeof toks / sizeof *toks);
    trie_keys_t k;
    tb_err_t err;
    assert_int_equal(trie_keys_from_vocab(&k, &v, TRIE_SPECIALS_OMIT, &err), 0);
    assert_int_equal(k.n, 10);
    assert_int_equal(k.nalias, 1);
    assert_int_equal(k.alias[0], 10);
    assert_int_equal(k.alias[1], 2);
    tries_t tr;
    build_all(&k, &tr);
    for (int i = 0; i < NLAYOUTS; i++) {
        trie_t *t = tr.t[i];
        assert_non_null(t);
        assert_int_equal(trie_lookup(t, (const uint8_t *)"ab", 2), 2);
        assert_int_equal(trie_lookup(t, (const uint8_t *)"\0", 1), 3);
        assert_int_equal(trie_lookup(t, (const uint8_t *)"\0x", 2), 4);
        assert_int_equal(trie_lookup(t, (const uint8_t *)"\0y", 2), -1);
        assert_int_equal(trie_lookup(t, (const uint8_t *)"abcd", 4), -1);
        assert_int_equal(trie_lookup(t, (const uint8_t *)"", 0), -1);
        assert_int_equal(trie_lookup(t, (const uint8_t *)spaces, 1000), 8);
        assert_int_equal(trie_lookup(t, (const uint8_t *)spaces, 999), -1);
        assert_int_equal(trie_lookup(t, (const uint8_t *)"<s>", 3), -1);
        trie_match_t m[4];
        assert_int_equal(trie_prefixes(t, (const uint8_t *)"abcz", 4, m, 4), 3);
        assert_int_equal(m[0].id, 5);
        assert_int_equal(m[0].len, 1);
        assert_int_equal(m[1].id, 2);
        assert_int_equal(m[2].id, 9);
        assert_int_equal(m[2].len, 3);
        assert_int_equal(trie_prefixes(t, (const uint8_t *)spaces, 1000, m, 4), 2);
        assert_int_equal(m[1].len, 1000);
        assert_int_equal(trie_mask_bits(t), 13);
    }
    /* dfs: one node per distinct prefix, the root left out */
    assert_int_equal(trie_nodes(tr.t[0]), 3 + 1 + 2 + 2 + 1000);
    assert_int_equal(trie_bytes(tr.t[0]) >= 8 * trie_nodes(tr.t[0]), 1);
    assert_string_equal(trie_layouts[0]->name, "dfs");
    /* map: the root too */
    assert_int_equal(trie_nodes(tr.t[3]), 3 + 1 + 2 + 2 + 1000 + 1);
    check_agreement(&k, &tr, 2000);
    check_all_walks(&k, &v, TRIE_SPECIALS_OMIT, &tr, 1);
    free_all(&tr);
    trie_keys_free(&k);
    tok_vocab_free(&v);
}

static void walk_sets_aliases_and_skips_specials(void **state)
{
    (void)state;
    const tok_spec_t toks[] = {
        {"ab", 0, 3, 0, 0}, {"ab", 0, 7, TOK_BYTE, 0}, {"a", 0, 1, 0, 0},
        {"<eos>", 0, 0, TOK_CONTROL, 1},
    };
    tok_vocab_t v;
    make_vocab(&v, toks, 4);
    trie_keys_t k;
    tb_err_t err;
    assert_int_equal(trie_keys_from_vocab(&k, &v, TRIE_SPECIALS_MARKED, &err), 0);
    tries_t tr;
    build_all(&k, &tr);
    expect_built(&tr);
    dfa_table_t any;
    memset(any, 0, sizeof any);
    for (int i = 0; i < NLAYOUTS; i++) {
        assert_int_equal(trie_lookup(tr.t[i], (const uint8_t *)"\xff<eos>", 6), 0);
        assert_int_equal(trie_lookup(tr.t[i], (const uint8_t *)"<eos>", 5), -1);
        tb_bitset_t mask;
        assert_int_equal(tb_bitset_init(&mask, trie_mask_bits(tr.t[i])), 0);
        dfa_rec_t d;
        dfa_init(&d, (const uint8_t(*)[256])any, 1);
        trie_walk(tr.t[i], &d.rec, &mask);
        assert_int_equal(tb_bitset_count(&mask), 4); /* 0, 1, 3 and alias 7 */
        assert_true(tb_bitset_get(&mask, 7));
        tb_bitset_clear_all(&mask);
        any[0][0xFF] = DEAD; /* a text recognizer never reaches the specials */
        trie_walk(tr.t[i], &d.rec, &mask);
        any[0][0xFF] = 0;
        assert_int_equal(tb_bitset_count(&mask), 3);
        assert_false(tb_bitset_get(&mask, 0));
        tb_bitset_t small;
        assert_int_equal(tb_bitset_init(&small, 8), 0);
        assert_int_equal(trie_walk(tr.t[i], &d.rec, &small), UINT64_MAX);
        tb_bitset_free(&small);
        tb_bitset_free(&mask);
        dfa_free(&d);
    }
    free_all(&tr);
    trie_keys_free(&k);
    assert_int_equal(trie_keys_from_vocab(&k, &v, TRIE_SPECIALS_OMIT, &err), 0);
    assert_int_equal(k.n, 2);
    trie_keys_free(&k);
    tok_vocab_free(&v);
}

/* ---- random vocabularies ------------------------------------------------ */

/* n random keys over `alpha`, with repeats, prefixes and a few long runs. */
static void random_vocab(tok_vocab_t *v, uint32_t n, const char *alpha,
                         size_t nalpha)
{
    tok_vocab_builder_t *b = tok_vocab_builder_new();
    tb_err_t err;
    uint8_t buf[2048];
    for (uint32_t id = 0; id < n; id++) {
        uint32_t len = 1 + rnd(rnd(8) == 0 ? 14 : 5);
        if (rnd(50) == 0)
            len = 200 + rnd(1200);
        uint8_t run = (uint8_t)alpha[rnd((uint32_t)nalpha)];
        for (uint32_t j = 0; j < len; j++)
            buf[j] = len >= 200 ? run : (uint8_t)alpha[rnd((uint32_t)nalpha)];
        tok_kind_t kind = rnd(10) == 0 ? TOK_BYTE : TOK_NORMAL;
        if (rnd(20) == 0) /* an id left unused */
            continue;
        if (tok_vocab_add(b, 2 * id + rnd(2), buf, len, 0, kind, 0, &err))
            fail_msg("%s", err.msg);
    }
    if (tok_vocab_finish(b, v, &err))
        fail_msg("%s", err.msg);
}

static void random_case(const char *alpha, size_t nalpha, uint32_t n)
{
    tok_vocab_t v;
    random_vocab(&v, n, alpha, nalpha);
    trie_keys_t k;
    tb_err_t err;
    if (trie_keys_from_vocab(&k, &v, TRIE_SPECIALS_OMIT, &err))
        fail_msg("%s", err.msg);
    tries_t tr;
    build_all(&k, &tr);
    expect_built(&tr);
    check_agreement(&k, &tr, 3000);
    check_all_walks(&k, &v, TRIE_SPECIALS_OMIT, &tr, n < 300);
    free_all(&tr);
    trie_keys_free(&k);
    tok_vocab_free(&v);
}

static void random_vocabularies_agree(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 30; seed++) {
        rng_state = seed * 0x9E3779B97F4A7C15ull;
        random_case("abc", 3, 50 + rnd(300));
        random_case("ab\0\xff", 4, 50 + rnd(300));
        random_case("abcdefghijklmnopqrstuvwxyz .-0123456789\xff", 40, 2000);
    }
}

/* ---- real vocabularies -------------------------------------------------- */

/* Nodes each layout offers the recognizer in one walk, for the report: a
 * set of lowercase letters and space (much of the trie), and the number
 * DFA (a thin slice). */
static void report_walks(const char *name, const tries_t *tr)
{
    dfa_table_t t[2];
    set_dfa(t[0], " abcdefghijklmnopqrstuvwxyz", 27);
    number_dfa(t[1]);
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < NLAYOUTS; i++) {
            if (!tr->t[i])
                continue;
            tb_bitset_t mask;
            assert_int_equal(tb_bitset_init(&mask, trie_mask_bits(tr->t[i])), 0);
            dfa_rec_t d;
            dfa_init(&d, (const uint8_t(*)[256])t[r], 1);
            uint64_t visited = trie_walk(tr->t[i], &d.rec, &mask);
            print_message("%-11s %-4s walk %-7s %8llu nodes offered, %6zu "
                          "tokens allowed\n", name, trie_layouts[i]->name,
                          r ? "number" : "letters", (unsigned long long)visited,
                          tb_bitset_count(&mask));
            dfa_free(&d);
            tb_bitset_free(&mask);
        }
}

/* Every layout over a real vocabulary, specials kept behind the marker:
 * agreement on every token and on random strings, walks against brute
 * force, and the figures the report quotes. */
static void check_real_vocabulary(const char *name, const tok_vocab_t *v)
{
    trie_keys_t k;
    tb_err_t err;
    if (trie_keys_from_vocab(&k, v, TRIE_SPECIALS_MARKED, &err))
        fail_msg("%s: %s", name, err.msg);
    rng_state = 0x1234567u;
    tries_t tr;
    build_all(&k, &tr);
    expect_built(&tr);
    check_agreement(&k, &tr, 20000);
    check_all_walks(&k, v, TRIE_SPECIALS_MARKED, &tr, 0);
    for (int i = 0; i < NLAYOUTS; i++)
        if (tr.t[i])
            print_message("%-11s %-4s %6u ids %6zu keys %7zu nodes (%.2f per "
                          "key) %9zu bytes (%.2f per key), built in %.0f ms\n",
                          name, trie_layouts[i]->name, v->size, k.n,
                          trie_nodes(tr.t[i]),
                          (double)trie_nodes(tr.t[i]) / (double)k.n,
                          trie_bytes(tr.t[i]),
                          (double)trie_bytes(tr.t[i]) / (double)k.n,
                          tr.build_ms[i]);
    report_walks(name, &tr);
    free_all(&tr);
    trie_keys_free(&k);
}

/* data/cache/NAME/FILE for every vocabulary line of data/manifest (FILE is
 * the last component of the member column).  Synthetic vocabularies are
 * left to the walk experiment: synth-1m is past dfs's id limit, which
 * dfs_limits_are_clear_errors checks, and checking a million tokens on
 * every layout would dominate the test run. */
static void every_manifest_vocabulary(void **state)
{
    (void)state;
    FILE *f = fopen("data/manifest", "r");
    assert_non_null(f);
    char line[1024];
    int seen = 0;
    while (fgets(line, sizeof line, f)) {
        char name[64], kind[64], source[256], member[256];
        if (line[0] == '#' ||
            sscanf(line, "%63s %63s %255s %255s", name, kind, source, member) != 4 ||
            strcmp(kind, "corpus") == 0 || strcmp(kind, "synth-vocab") == 0 ||
            strcmp(kind, "ucd") == 0)
            continue;
        const char *file = strrchr(member, '/') ? strrchr(member, '/') + 1 : member;
        char path[512];
        snprintf(path, sizeof path, "data/cache/%s/%s", name, file);
        tb_err_t err;
        tok_tokenizer_t *t = tok_load(path, &err);
        if (!t)
            fail_msg("%s: %s (run 'make data')", path, err.msg);
        check_real_vocabulary(name, tok_vocab(t));
        tok_free(t);
        seen++;
    }
    fclose(f);
    assert_true(seen >= 8);
}

/* ---- limits and bad keys ------------------------------------------------ */

static void bad_key_lists_are_refused(void **state)
{
    (void)state;
    trie_keys_t k;
    tb_err_t err;
    const uint8_t *strs[] = {(const uint8_t *)"ab", (const uint8_t *)"",
                             (const uint8_t *)"ab"};
    uint32_t lens[] = {2, 0, 2}, ids[] = {4, 5, 6};
    assert_int_equal(trie_keys_from_list(&k, strs, lens, ids, 2, &err), -1);
    assert_string_equal(err.msg, "token id 5 has no bytes");
    strs[1] = (const uint8_t *)"ab";
    lens[1] = 2;
    assert_int_equal(trie_keys_from_list(&k, strs, lens, ids, 3, &err), -1);
    assert_string_equal(err.msg, "token ids 4 and 5 have the same 2 bytes");
    ids[0] = TOK_VOCAB_MAX_SIZE;
    assert_int_equal(trie_keys_from_list(&k, strs, lens, ids, 1, &err), -1);
    assert_non_null(strstr(err.msg, "past the limit"));
    const tok_spec_t toks[] = {{"a", 0, 0, 0, 0}, {"", 0, 1, 0, 0}};
    tok_vocab_t v;
    make_vocab(&v, toks, 2);
    assert_int_equal(trie_keys_from_vocab(&k, &v, TRIE_SPECIALS_OMIT, &err), -1);
    assert_string_equal(err.msg, "token id 1 has no bytes");
    tok_vocab_free(&v);
}

static void dfs_limits_are_clear_errors(void **state)
{
    (void)state;
    trie_keys_t k;
    tb_err_t err;
    const uint8_t *strs[] = {(const uint8_t *)"a", (const uint8_t *)"b"};
    uint32_t lens[] = {1, 1}, ids[] = {0, 524287};
    assert_int_equal(trie_keys_from_list(&k, strs, lens, ids, 2, &err), 0);
    assert_null(trie_build(&trie_layout_dfs, &k, &err));
    assert_string_equal(err.msg, "dfs trie: token id 524287 is past the limit of "
                        "524287 ids (19-bit id field)");
    trie_t *t = trie_build(&trie_layout_map, &k, &err);
    assert_non_null(t);
    assert_int_equal(trie_lookup(t, (const uint8_t *)"b", 1), 524287);
    trie_free(t);
    trie_keys_free(&k);
    ids[1] = 524286; /* the largest id that fits beside the no-token marker */
    assert_int_equal(trie_keys_from_list(&k, strs, lens, ids, 2, &err), 0);
    t = trie_build(&trie_layout_dfs, &k, &err);
    assert_non_null(t);
    assert_int_equal(trie_lookup(t, (const uint8_t *)"b", 1), 524286);
    trie_free(t);
    trie_keys_free(&k);

    uint8_t *deep = malloc(16384);
    memset(deep, ' ', 16384);
    strs[0] = deep;
    lens[0] = 16384;
    ids[1] = 1;
    assert_int_equal(trie_keys_from_list(&k, strs, lens, ids, 2, &err), 0);
    assert_null(trie_build(&trie_layout_dfs, &k, &err));
    assert_string_equal(err.msg, "dfs trie: token id 0 is 16384 bytes long, past "
                        "the depth limit of 16383 (14-bit depth field)");
    trie_keys_free(&k);
    lens[0] = 16383;
    assert_int_equal(trie_keys_from_list(&k, strs, lens, ids, 2, &err), 0);
    tries_t tr;
    build_all(&k, &tr);
    expect_built(&tr);
    check_agreement(&k, &tr, 100);
    check_all_walks(&k, NULL, TRIE_SPECIALS_OMIT, &tr, 1);
    free_all(&tr);
    trie_keys_free(&k);
    free(deep);
}

static void double_array_nul_rules(void **state)
{
    (void)state;
    trie_keys_t k;
    tb_err_t err;
    /* NUL first, NUL after a token end (o200k has "\0" and "\0\0"), NUL
     * after a node with no value, and a byte on from a NUL; for xcda's
     * shifted alphabet also the bytes around its escape (0xFD is the last
     * plain label, 0xFE and 0xFF take two) */
    const uint8_t *strs[] = {(const uint8_t *)"\0", (const uint8_t *)"\0\0",
                             (const uint8_t *)"a\0b", (const uint8_t *)"ab\0",
                             (const uint8_t *)"ab", (const uint8_t *)"\0\0\0x",
                             (const uint8_t *)"\xfd", (const uint8_t *)"\xfe",
                             (const uint8_t *)"\xff\x01", (const uint8_t *)"\xff\xfe\0",
                             (const uint8_t *)"\x01"};
    enum { N = sizeof strs / sizeof *strs };
    uint32_t lens[N] = {1, 2, 3, 3, 2, 4, 1, 1, 2, 3, 1}, ids[N];
    for (uint32_t i = 0; i < N; i++)
        ids[i] = i;
    assert_int_equal(trie_keys_from_list(&k, strs, lens, ids, N, &err), 0);
    const trie_layout_t *with_nul[] = {&trie_layout_dat, &trie_layout_xcda};
    for (int l = 0; l < 2; l++) {
        trie_t *t = trie_build(with_nul[l], &k, &err);
        assert_non_null(t);
        assert_int_equal(trie_validate(t, &err), 0);
        for (int i = 0; i < N; i++)
            assert_int_equal(trie_lookup(t, strs[i], lens[i]), ids[i]);
        assert_int_equal(trie_lookup(t, (const uint8_t *)"a\0", 2), -1);
        assert_int_equal(trie_lookup(t, (const uint8_t *)"\0\0\0", 3), -1);
        assert_int_equal(trie_lookup(t, (const uint8_t *)"ab\0\0", 4), -1);
        assert_int_equal(trie_lookup(t, (const uint8_t *)"\xff", 1), -1);
        assert_int_equal(trie_lookup(t, (const uint8_t *)"\xff\xfe", 2), -1);
        assert_int_equal(trie_lookup(t, (const uint8_t *)"\x02", 1), -1);
        trie_match_t m[4];
        assert_int_equal(trie_prefixes(t, (const uint8_t *)"\0\0\0x", 4, m, 4), 3);
        assert_int_equal(m[1].id, 1);
        assert_int_equal(m[2].len, 4);
        assert_int_equal(trie_prefixes(t, (const uint8_t *)"\xff\xfe\0z", 4, m, 4), 1);
        assert_int_equal(m[0].id, 9);
        assert_int_equal(m[0].len, 3);
        trie_free(t);
    }
    /* the charsmap blobs keep SentencePiece's bytes: no NUL there */
    trie_da_t da;
    uint32_t values[N] = {0};
    assert_int_equal(trie_da_build(&da, k.keys, k.n, values, 0, &err), -1);
    assert_string_equal(err.msg, "token id 0 has a NUL byte at offset 0, which "
                        "this double array cannot hold");
    trie_keys_free(&k);
}

/* The double-array checker notices a broken array. */
static void double_array_validate_catches_damage(void **state)
{
    (void)state;
    trie_keys_t k;
    tb_err_t err;
    const uint8_t *strs[] = {(const uint8_t *)"ab", (const uint8_t *)"ac",
                             (const uint8_t *)"b"};
    uint32_t lens[] = {2, 2, 1}, ids[] = {0, 1, 2}, values[] = {0, 1, 2};
    assert_int_equal(trie_keys_from_list(&k, strs, lens, ids, 3, &err), 0);
    trie_da_t da;
    assert_int_equal(trie_da_build(&da, k.keys, k.n, values, 1, &err), 0);
    assert_int_equal(trie_da_validate(&da, 3, 3, 0, &err), 0);
    assert_int_equal(trie_da_validate(&da, 3, 2, 0, &err), -1);
    assert_non_null(strstr(err.msg, "value 2 is past the limit 2"));
    assert_int_equal(trie_da_validate(&da, 4, 3, 0, &err), -1);
    assert_string_equal(err.msg, "3 values are reachable, 4 keys were built");
    /* drop the has_leaf bit of "b": its value is lost and it dangles */
    uint32_t root_base = tb_da_offset(da.a.units[0]);
    uint32_t b = root_base ^ 'b';
    da.a.units[b] &= ~(1u << 8);
    assert_int_equal(trie_da_validate(&da, 3, 3, 0, &err), -1);
    assert_non_null(strstr(err.msg, "neither children nor a value"));
    trie_da_free(&da);
    trie_keys_free(&k);
}

/* The dat layout's child chain: validate checks it, and a walk under a
 * permissive recognizer (which follows the chain) and under a narrow one
 * (which probes) both give the brute-force mask, NUL children included,
 * offering only edges that exist: as many as the flat trie offers. */
static void double_array_child_chain(void **state)
{
    (void)state;
    trie_keys_t k;
    tb_err_t err;
    const uint8_t *strs[] = {(const uint8_t *)"\0", (const uint8_t *)"\0\0",
                             (const uint8_t *)"a\0b", (const uint8_t *)"ab\0",
                             (const uint8_t *)"ab", (const uint8_t *)"\0\0\0x",
                             (const uint8_t *)"\xff\x01", (const uint8_t *)"zz"};
    uint32_t lens[] = {1, 2, 3, 3, 2, 4, 2, 2}, ids[] = {0, 1, 2, 3, 4, 5, 6, 7};
    assert_int_equal(trie_keys_from_list(&k, strs, lens, ids, 8, &err), 0);
    tries_t tr;
    build_all(&k, &tr);
    assert_non_null(tr.t[1]);
    assert_string_equal(trie_layouts[1]->name, "dat");
    check_all_walks(&k, NULL, TRIE_SPECIALS_OMIT, &tr, 1);
    dfa_table_t t;
    memset(t, 0, sizeof t);
    tb_bitset_t mask;
    assert_int_equal(tb_bitset_init(&mask, trie_mask_bits(tr.t[1])), 0);
    uint64_t visited[2];
    for (int i = 0; i < 2; i++) {
        dfa_rec_t d;
        dfa_init(&d, (const uint8_t(*)[256])t, 1);
        visited[i] = trie_walk(tr.t[i], &d.rec, &mask);
        dfa_free(&d);
    }
    assert_int_equal(visited[1], visited[0]);
    /* 13 edges: \0 \0 \0 x, a \0 b, b \0, \xff \x01, z z */
    assert_int_equal(visited[1], 13);
    tb_bitset_free(&mask);
    free_all(&tr);

    /* A chain that skips a child, or starts at the wrong one, is caught. */
    trie_da_t da;
    uint32_t values[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    assert_int_equal(trie_da_build(&da, k.keys, k.n, values, TB_DA_NUL_FAR,
                                   &err), 0);
    assert_null(da.chain); /* the build makes none: walks ask for it */
    assert_int_equal(trie_da_build_chain(&da, &err), 0);
    assert_non_null(da.chain);
    uint16_t *built = da.chain;
    assert_int_equal(trie_da_build_chain(&da, &err), 0); /* once only */
    assert_ptr_equal(da.chain, built);
    assert_int_equal(trie_da_validate(&da, 8, 8, 0, &err), 0);
    /* an even number of blocks: the direct readers' NUL slots are inside */
    assert_true(da.a.direct);
    assert_int_equal(da.a.n % 512, 0);
    for (size_t i = 0; i < k.n; i++) /* values[i] went to sorted key i */
        assert_int_equal(tb_da_lookup_direct(&da.a, k.keys[i].s, k.keys[i].len), i);
    assert_int_equal(tb_da_lookup_direct(&da.a, (const uint8_t *)"\0\0\0", 3), -1);
    trie_match_t m[4];
    assert_int_equal(tb_da_prefixes_direct(&da.a, (const uint8_t *)"\0\0\0x", 4,
                                           m, 4), 3);
    assert_int_equal(m[2].id, 2); /* "\0\0\0x" is the third key in order */
    uint16_t root = da.chain[0];
    assert_int_equal(root & 0xFF, 0); /* the NUL child comes first */
    da.chain[0] = (uint16_t)((root & 0xFF00) | 'a');
    assert_int_equal(trie_da_validate(&da, 8, 8, 0, &err), -1);
    assert_non_null(strstr(err.msg, "its chain starts at label 97"));
    da.chain[0] = root;
    uint32_t a = tb_da_offset(da.a.units[0]) ^ 'a';
    uint16_t sib = da.chain[a];
    assert_int_equal(sib >> 8, 'z');
    da.chain[a] = (uint16_t)((sib & 0xFF) | (0xFF << 8));
    assert_int_equal(trie_da_validate(&da, 8, 8, 0, &err), -1);
    assert_non_null(strstr(err.msg, "the next child has label 122"));
    trie_da_free(&da);
    trie_keys_free(&k);
}

/* The query strings of lazy_walk_structures: every key, and each key with
 * a byte added, changed and dropped. */
static size_t lazy_queries(const trie_keys_t *k, size_t i, uint8_t *buf)
{
    const trie_key_t *key = &k->keys[i / 4];
    size_t n = key->len;
    memcpy(buf, key->s, n);
    if (i % 4 == 1)
        buf[n++] = (uint8_t)(i * 37);
    else if (i % 4 == 2)
        buf[(i * 7) % n] ^= (uint8_t)(1 + i % 255);
    else if (i % 4 == 3)
        n--;
    return n;
}

/* `dat` builds its child chain and walk frames on the first walk, not with
 * the units: trie_bytes counts the units alone before, and 2 bytes a unit
 * plus the frames more after; lookups and prefix searches answer the same
 * before and after; validate checks the chain once it is there; later
 * walks and trie_prepare_walk add nothing; the other layouts' bytes do not
 * move with a walk. */
static void lazy_walk_structures(void **state)
{
    (void)state;
    rng_state = 0xC0FFEEull;
    tok_vocab_t v;
    random_vocab(&v, 3000, "abc\0\xff xyz.", 10);
    trie_keys_t k;
    tb_err_t err;
    if (trie_keys_from_vocab(&k, &v, TRIE_SPECIALS_OMIT, &err))
        fail_msg("%s", err.msg);
    tries_t tr;
    build_all(&k, &tr);
    expect_built(&tr);
    int d = 1;
    assert_ptr_equal(trie_layouts[d], &trie_layout_dat);
    trie_t *t = tr.t[d];
    size_t before[NLAYOUTS];
    for (int i = 0; i < NLAYOUTS; i++)
        before[i] = tr.t[i] ? trie_bytes(tr.t[i]) : 0;
    size_t units = trie_nodes(t);
    assert_true(before[d] >= units * sizeof(uint32_t));
    assert_true(before[d] < units * (sizeof(uint32_t) + sizeof(uint16_t)));
    assert_int_equal(trie_validate(t, &err), 0);

    size_t nq = 4 * k.n;
    int32_t *ids = malloc(sizeof *ids * nq);
    size_t *npre = malloc(sizeof *npre * nq);
    assert_non_null(ids);
    assert_non_null(npre);
    uint8_t buf[2048];
    trie_match_t m[64];
    for (size_t i = 0; i < nq; i++) {
        size_t n = lazy_queries(&k, i, buf);
        ids[i] = trie_lookup(t, buf, n);
        npre[i] = trie_prefixes(t, buf, n, m, 64);
    }

    dfa_table_t all;
    memset(all, 0, sizeof all); /* every byte: the walk follows the chain */
    tb_bitset_t want, got;
    assert_int_equal(tb_bitset_init(&want, trie_mask_bits(t)), 0);
    assert_int_equal(tb_bitset_init(&got, trie_mask_bits(t)), 0);
    brute_mask(all, &k, &v, TRIE_SPECIALS_OMIT, &want);
    size_t after = 0;
    for (int w = 0; w < 2; w++) {
        dfa_rec_t r;
        dfa_init(&r, (const uint8_t(*)[256])all, 1);
        tb_bitset_clear_all(&got);
        assert_true(trie_walk(t, &r.rec, &got) != UINT64_MAX);
        dfa_free(&r);
        assert_true(tb_bitset_equal(&got, &want));
        if (w == 0)
            after = trie_bytes(t);
        assert_int_equal(trie_bytes(t), after); /* the second walk adds none */
    }
    assert_true(after > before[d]);
    assert_int_equal(after - before[d],
                     units * sizeof(uint16_t) +
                     ((size_t)k.max_len + 1) * sizeof(trie_da_frame_t));
    assert_int_equal(trie_prepare_walk(t, &err), 0);
    assert_int_equal(trie_bytes(t), after);
    assert_int_equal(trie_validate(t, &err), 0);

    for (size_t i = 0; i < nq; i++) {
        size_t n = lazy_queries(&k, i, buf);
        assert_int_equal(trie_lookup(t, buf, n), ids[i]);
        assert_int_equal(trie_prefixes(t, buf, n, m, 64), npre[i]);
    }
    check_agreement(&k, &tr, 3000);
    for (int i = 0; i < NLAYOUTS; i++) {
        if (i == d || !tr.t[i])
            continue;
        dfa_rec_t r;
        dfa_init(&r, (const uint8_t(*)[256])all, 1);
        tb_bitset_clear_all(&got);
        trie_walk(tr.t[i], &r.rec, &got);
        dfa_free(&r);
        if (trie_layouts[i]->prepare_walk) /* xcda: its chain, as dat's */
            assert_true(trie_bytes(tr.t[i]) > before[i]);
        else
            assert_int_equal(trie_bytes(tr.t[i]), before[i]);
    }
    free_all(&tr);

    /* trie_prepare_walk builds the same without a walk. */
    t = trie_build(&trie_layout_dat, &k, &err);
    assert_non_null(t);
    assert_int_equal(trie_bytes(t), before[d]);
    assert_int_equal(trie_prepare_walk(t, &err), 0);
    assert_int_equal(trie_bytes(t), after);
    assert_int_equal(trie_validate(t, &err), 0);
    trie_free(t);

    free(ids);
    free(npre);
    tb_bitset_free(&want);
    tb_bitset_free(&got);
    trie_keys_free(&k);
    tok_vocab_free(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(small_vocabulary),
        cmocka_unit_test(walk_sets_aliases_and_skips_specials),
        cmocka_unit_test(random_vocabularies_agree),
        cmocka_unit_test(bad_key_lists_are_refused),
        cmocka_unit_test(dfs_limits_are_clear_errors),
        cmocka_unit_test(double_array_nul_rules),
        cmocka_unit_test(double_array_validate_catches_damage),
        cmocka_unit_test(double_array_child_chain),
        cmocka_unit_test(lazy_walk_structures),
        long_unit_test(every_manifest_vocabulary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
