/*
 * Tests of lexer/slicer: the sliced mask must be exactly the plain walk's
 * mask.  For Llama 3 and Gemma 3 (Gemma has aliases: byte pieces with the
 * same bytes as plain tokens), every layout that builds, real-world regexes
 * from the start and from states after consumed prefixes, custom slice sets
 * and random regexes, each mask is compared with
 *   - lex_mask over the full trie of the same layout, and
 *   - a brute-force oracle: lex_dfa_feed over each token's bytes from the
 *     state, the alias ids following their primary.
 * Both membership rules (by prefix, the default, and by full match) are
 * checked: the parts partition the keys as the rule says, and the masks are
 * exact.  The subsumption verdicts are checked on cases whose answer
 * follows from the languages (a string body with room for 20 characters subsumes the
 * 1..10 slice but not the 1..30 one), and against sampled strings of the
 * slice, and at a key position whose lexer states share their open part.
 * Last, bad slice lists and `tokbench mask --slicer`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../lexer/deriv.h"
#include "../lexer/lexemes.h"
#include "../lexer/rec.h"
#include "../lexer/slicer.h"
#include "../trie/trie.h"
#include "support.h"

#define LLAMA3 "data/cache/llama3/tokenizer.json"
#define GEMMA3 "data/cache/gemma3/tokenizer.json"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t rnd(uint32_t n)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)((rng >> 33) % n);
}

/* One vocabulary: its keys, every layout that builds, and a default slicer
 * over each. */
typedef struct {
    const char *path;
    test_tries_t t;
    lex_slicer_t *slicer[TEST_MAX_LAYOUTS];
} vocab_t;

static vocab_t vocabs[2] = {{.path = LLAMA3}, {.path = GEMMA3}};

static int load_vocab(vocab_t *v)
{
    if (test_tries_load(&v->t, v->path))
        return -1;
    for (size_t i = 0; i < v->t.ntries; i++) {
        tb_err_t err;
        const trie_layout_t *l = trie_layout(v->t.tries[i]);
        if (!(v->slicer[i] = lex_slicer_new(&v->t.keys, l, NULL, 0, &err))) {
            fprintf(stderr, "%s %s slicer: %s\n", v->path, l->name, err.msg);
            return -1;
        }
    }
    return 0;
}

static int setup(void **state)
{
    (void)state;
    for (size_t i = 0; i < 2; i++)
        if (load_vocab(&vocabs[i]))
            return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (size_t i = 0; i < 2; i++) {
        vocab_t *v = &vocabs[i];
        for (size_t l = 0; l < v->t.ntries; l++)
            lex_slicer_free(v->slicer[l]);
        test_tries_free(&v->t);
    }
    return 0;
}

/* The oracle: every key fed through the DFA from `state`; aliases follow
 * their primary id. */
static void oracle_mask(const trie_keys_t *k, lex_dfa_t *d, uint32_t state, tb_bitset_t *m)
{
    tb_bitset_clear_all(m);
    for (size_t i = 0; i < k->n; i++)
        if (lex_dfa_feed(d, state, k->keys[i].s, k->keys[i].len) != LEX_DEAD)
            tb_bitset_set(m, k->keys[i].id);
    for (size_t a = 0; a < k->nalias; a++)
        if (tb_bitset_get(m, k->alias[2 * a + 1]))
            tb_bitset_set(m, k->alias[2 * a]);
}

static void fail_diff(const vocab_t *v, const char *what, const char *pattern, const char *prefix,
                      size_t plen, const tb_bitset_t *got, const tb_bitset_t *want)
{
    for (size_t id = 0; id < want->nbits; id++)
        if (tb_bitset_get(got, id) != tb_bitset_get(want, id)) {
            size_t n = 0;
            const uint8_t *s = id < tok_vocab(v->t.tok)->size
                                   ? tok_vocab_token(tok_vocab(v->t.tok), (uint32_t)id, &n) : NULL;
            fail_msg("%s, '%s' after '%.*s': %s has token %zu '%.*s' %s, the oracle %s",
                     v->path, pattern, (int)plen, prefix, what, id, (int)n, s ? (const char *)s : "",
                     tb_bitset_get(got, id) ? "in" : "out",
                     tb_bitset_get(want, id) ? "in" : "out");
        }
}

typedef struct {
    size_t masks, whole, walked;
} tally_t;

/* Checks plain and sliced masks of every layout of v at the state after
 * prefix against the oracle.  slicers: one per layout (v->slicer when
 * NULL).  Returns the DFA state (LEX_DEAD if the prefix is refused). */
static uint32_t check_masks(vocab_t *v, lex_slicer_t **slicers, const char *pattern,
                            const char *prefix, size_t plen, tally_t *t)
{
    tb_err_t err;
    lex_dfa_t *d = lex_dfa_new(pattern, NULL, &err);
    if (!d)
        fail_msg("%s", err.msg);
    uint32_t state = lex_dfa_feed(d, LEX_START, (const uint8_t *)prefix, plen);
    if (state == LEX_DEAD) {
        lex_dfa_free(d);
        return LEX_DEAD;
    }
    tb_bitset_t want, got;
    assert_int_equal(tb_bitset_init(&want, v->t.keys.id_limit + 1), 0);
    assert_int_equal(tb_bitset_init(&got, v->t.keys.id_limit + 1), 0);
    oracle_mask(&v->t.keys, d, state, &want);
    for (size_t l = 0; l < v->t.ntries; l++) {
        lex_slicer_t *s = slicers ? slicers[l] : v->slicer[l];
        lex_rec_t r;
        assert_int_equal(lex_rec_init(&r, d, v->t.keys.max_len, &err), 0);
        if (lex_mask(v->t.tries[l], &r, state, &got, NULL, &err))
            fail_msg("%s", err.msg);
        if (!tb_bitset_equal(&got, &want))
            fail_diff(v, v->t.names[l], pattern, prefix, plen, &got, &want);
        lex_slice_stats_t st;
        if (lex_slicer_bind(s, d, &err) || lex_slicer_mask(s, &r, state, &got, &st, &err))
            fail_msg("%s", err.msg);
        if (!tb_bitset_equal(&got, &want)) {
            char what[64];
            snprintf(what, sizeof what, "sliced %s", v->t.names[l]);
            fail_diff(v, what, pattern, prefix, plen, &got, &want);
        }
        /* Again, now from cached verdicts. */
        assert_int_equal(lex_slicer_mask(s, &r, state, &got, NULL, &err), 0);
        assert_true(tb_bitset_equal(&got, &want));
        lex_rec_free(&r);
        t->masks++;
        t->whole += st.whole;
        t->walked += st.walked;
    }
    tb_bitset_free(&want);
    tb_bitset_free(&got);
    lex_dfa_free(d);
    return state;
}

#define JSON_BODY "[^\"\\\\\\x00-\\x1f]*\""
#define JSON_STRING "\"([^\"\\\\\\x00-\\x1f]|\\\\[\"\\\\/bfnrt]|\\\\u[0-9a-fA-F]{4})*\""
#define JSON_OBJECT                                                                         \
    "\\{\\s*\"name\"\\s*:\\s*\"([^\"\\\\\\x00-\\x1f]|\\\\[\"\\\\/bfnrt]|\\\\u[0-9a-fA-F]{4})*\"" \
    "\\s*,\\s*\"age\"\\s*:\\s*-?(0|[1-9]\\d*)(\\.\\d+)?([eE][+-]?\\d+)?\\s*\\}"

static const struct {
    const char *pattern;
    const char *prefixes[4];
} real_world[] = {
    {JSON_BODY, {"", "abc", "h\xc3\xa9llo"}},
    {JSON_STRING, {"", "\"", "\"abc\\", "\"\\u00"}},
    {JSON_OBJECT, {"", "{\"name\": \"Jo", "{\"name\": \"Jo\", \"age\": 4"}},
    {"[^\"\\\\\\x00-\\x1f]{0,20}\"", {"", "abcdefghijklmn"}},
    {"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}", {"", "john.doe", "john@example.c"}},
    {"\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])", {"", "2024-1"}},
    {"[0-9]+", {"", "12"}},
    {"\\p{L}+( \\p{L}+)*", {"", "caf\xc3\xa9 "}},
    {"(.|\\n)*", {""}},
};

static void real_world_regexes(void **state)
{
    (void)state;
    tally_t t = {0};
    for (size_t vi = 0; vi < 2; vi++)
        for (size_t i = 0; i < sizeof real_world / sizeof *real_world; i++)
            for (size_t p = 0; p < 4 && real_world[i].prefixes[p]; p++) {
                const char *pre = real_world[i].prefixes[p];
                if (check_masks(&vocabs[vi], NULL, real_world[i].pattern, pre, strlen(pre),
                                &t) == LEX_DEAD)
                    fail_msg("'%s': prefix '%s' is refused", real_world[i].pattern, pre);
            }
    print_message("%zu masks equal to the plain walk and the oracle; slices taken whole "
                  "%zu times, walked %zu\n", t.masks, t.whole, t.walked);
    /* Both ways of answering must have been exercised. */
    assert_true(t.whole > 0 && t.walked > 0);
}

/* The verdict of every default slice at the state after prefix. */
static void verdicts(const char *pattern, const char *prefix, int v[3])
{
    tb_err_t err;
    lex_dfa_t *d = lex_dfa_new(pattern, NULL, &err);
    assert_non_null(d);
    uint32_t s = lex_dfa_feed(d, LEX_START, (const uint8_t *)prefix, strlen(prefix));
    assert_int_not_equal(s, LEX_DEAD);
    lex_slicer_t *sl = vocabs[0].slicer[0];
    assert_int_equal(lex_slicer_bind(sl, d, &err), 0);
    for (size_t i = 0; i < 3; i++)
        v[i] = lex_slicer_subsumes(sl, i, s, &err);
    lex_dfa_free(d);
}

/* A random string of slice i's language, at most max bytes: random live
 * bytes of its DFA, stopping at an accepting state. */
static size_t slice_sample(lex_dfa_t *d, uint8_t *out, size_t max)
{
    for (;;) {
        uint32_t s = LEX_START;
        size_t n = 0;
        while (n < max) {
            const uint64_t *al = lex_dfa_allowed(d, s);
            uint8_t c[256];
            unsigned nc = 0;
            for (unsigned b = 0; b < 256; b++)
                if ((al[b >> 6] >> (b & 63)) & 1)
                    c[nc++] = (uint8_t)b;
            if (!nc)
                break;
            out[n++] = c[rnd(nc)];
            s = lex_dfa_next(d, s, out[n - 1]);
            if (lex_dfa_accepting(d, s) && rnd(4) == 0)
                return n;
        }
        if (n && lex_dfa_accepting(d, s))
            return n;
    }
}

static void subsumption_verdicts(void **state)
{
    (void)state;
    int v[3];
    /* An unbounded string body takes every slice. */
    verdicts(JSON_BODY, "", v);
    assert_true(v[0] == 1 && v[1] == 1 && v[2] == 1);
    /* Room for 20 characters: 1..10 fits, 1..30 and 1.. do not. */
    verdicts("[^\"\\\\\\x00-\\x1f]{0,20}\"", "", v);
    assert_true(v[0] == 1 && v[1] == 0 && v[2] == 0);
    /* 14 used, 6 left: not even 1..10. */
    verdicts("[^\"\\\\\\x00-\\x1f]{0,20}\"", "abcdefghijklmn", v);
    assert_true(v[0] == 0);
    /* Inside the object's string: yes; before its opening quote: no. */
    verdicts(JSON_OBJECT, "{\"name\": \"Jo", v);
    assert_true(v[0] == 1 && v[1] == 1 && v[2] == 1);
    verdicts(JSON_OBJECT, "{\"name\": ", v);
    assert_true(v[0] == 0 && v[1] == 0 && v[2] == 0);
    verdicts("[0-9]+", "", v);
    assert_true(v[0] == 0 && v[2] == 0);
    /* A whole verdict holds for sampled strings of the slice, beyond the
     * vocabulary's tokens: they keep the lexer live. */
    tb_err_t err;
    lex_dfa_t *d = lex_dfa_new("[^\"\\\\\\x00-\\x1f]{0,20}\"", NULL, &err);
    lex_dfa_t *slice = vocabs[0].slicer[0]->slice[0].dfa;
    for (int i = 0; i < 2000; i++) {
        uint8_t buf[64];
        size_t n = slice_sample(slice, buf, 40);
        assert_int_not_equal(lex_dfa_feed(d, LEX_START, buf, n), LEX_DEAD);
    }
    lex_dfa_free(d);
}

/* Which slices' prefixes another's hold, with keys no longer
 * (lex_slice_t.within): the default three nest, {1,10} in {1,30} in the
 * unbounded one; a slice left without keys (first match took them) covers
 * none; verdicts through the relation are the explored ones. */
static void slices_within(void **state)
{
    (void)state;
    lex_slicer_t *sl = vocabs[0].slicer[0];
    assert_int_equal(sl->slice[0].within, 6);
    assert_int_equal(sl->slice[1].within, 4);
    assert_int_equal(sl->slice[2].within, 0);
    tb_err_t err;
    static const char *const three[] = {"[a-z]{1,4}", "[a-z]+", "[a-z]+"};
    lex_slicer_t *s = lex_slicer_new(&vocabs[0].t.keys, &trie_layout_dfs, three, 3, &err);
    assert_non_null(s);
    assert_int_equal(s->slice[0].max_len, 4);
    assert_true(s->slice[1].max_len > 4);
    assert_int_equal(s->slice[2].ntokens, 0);
    assert_int_equal(s->slice[0].within, 2);
    assert_int_equal(s->slice[1].within, 0);
    assert_int_equal(s->slice[2].within, 0);
    lex_dfa_t *d = lex_dfa_new("[a-z]{0,6}", NULL, &err);
    assert_non_null(d);
    assert_int_equal(lex_slicer_bind(s, d, &err), 0);
    /* room for 6 letters: the keys of at most 4 are whole, the longer not */
    assert_int_equal(lex_slicer_subsumes(s, 0, LEX_START, &err), 1);
    assert_int_equal(lex_slicer_subsumes(s, 1, LEX_START, &err), 0);
    lex_dfa_free(d);
    d = lex_dfa_new("[a-z]*", NULL, &err);
    assert_int_equal(lex_slicer_bind(s, d, &err), 0);
    for (size_t i = 0; i < 2; i++)
        assert_int_equal(lex_slicer_subsumes(s, i, LEX_START, &err), 1);
    lex_dfa_free(d);
    lex_slicer_free(s);
}

/* A budget too small to finish the product answers "walk", and the mask
 * stays exact. */
static void small_budget_walks(void **state)
{
    (void)state;
    vocab_t *v = &vocabs[0];
    lex_slicer_t *s[TEST_MAX_LAYOUTS];
    size_t keep[TEST_MAX_LAYOUTS];
    for (size_t l = 0; l < v->t.ntries; l++) {
        s[l] = v->slicer[l];
        keep[l] = s[l]->budget;
        s[l]->budget = 3;
    }
    tally_t t = {0};
    check_masks(v, s, JSON_BODY, "", 0, &t);
    /* Every slice's product with the string body has more than 3 pairs. */
    assert_int_equal(t.whole, 0);
    assert_int_equal(t.walked, 3 * v->t.ntries);
    for (size_t l = 0; l < v->t.ntries; l++)
        s[l]->budget = keep[l];
    /* Raised again: the next bind resizes the scratch, and slices are taken
     * whole again. */
    tally_t again = {0};
    check_masks(v, s, JSON_BODY, "", 0, &again);
    assert_int_equal(again.whole, 3 * v->t.ntries);
}

/* A key position's lexer: regexes re[0..n) named name[], bound to the
 * first slicer of vocabs[0], with a recognizer and two masks over it. */
typedef struct {
    vocab_t *v;
    lex_slicer_t *sl;
    lex_dfa_t *d;
    lex_rec_t r;
    tb_bitset_t want, got;
} keys_t;

static void keys_open(keys_t *k, const char *const *re, const char *const *name, size_t n,
                      const lex_dfa_opts_t *opts)
{
    tb_err_t err;
    k->d = lex_lexer_from_regexes(re, name, n, "keys", opts, &err);
    if (!k->d)
        fail_msg("%s", err.msg);
    k->v = &vocabs[0];
    k->sl = k->v->slicer[0];
    assert_int_equal(lex_slicer_bind(k->sl, k->d, &err), 0);
    assert_int_equal(lex_rec_init(&k->r, k->d, k->v->t.keys.max_len, &err), 0);
    assert_int_equal(tb_bitset_init(&k->want, k->v->t.keys.id_limit + 1), 0);
    assert_int_equal(tb_bitset_init(&k->got, k->v->t.keys.id_limit + 1), 0);
}

static void keys_close(keys_t *k)
{
    tb_bitset_free(&k->want);
    tb_bitset_free(&k->got);
    lex_rec_free(&k->r);
    lex_dfa_free(k->d);
}

/* A key position as the schema compiler makes it: a lexeme per property
 * name not taken yet beside two for any other name, split by first byte
 * as a pattern's classes split them, so that neither alone takes a slice
 * whole but the two do.  Each subset of names gives another lexer state
 * with the same open part (the two), whose verdicts serve them all; every
 * mask stays the oracle's. */
#define KEY_BODY "[^\"\\\\\\x00-\\x1f]*\""
static void open_parts_share_verdicts(void **state)
{
    (void)state;
    static const char *const re[] = {"\"alpha\"", "\"beta\"", "\"gamma\"", "\"delta\"",
                                     "\"/" KEY_BODY, "\"[^/\"\\\\\\x00-\\x1f]" KEY_BODY};
    static const char *const name[] = {"alpha", "beta", "gamma", "delta", "slash", "other"};
    enum { NAMES = 4, N = 6 };
    tb_err_t err;
    keys_t k;
    keys_open(&k, re, name, N, NULL);
    lex_dfa_t *d = k.d;
    lex_slicer_t *sl = k.sl;
    uint32_t open = LEX_DEAD;
    for (unsigned taken = 0; taken < 1u << NAMES; taken++) {
        uint64_t set = (1u << N) - 1 - taken;
        uint32_t s = lex_dfa_feed(d, lex_dfa_start_of(d, &set), (const uint8_t *)"\"", 1);
        assert_int_not_equal(s, LEX_DEAD);
        uint32_t o = lex_dfa_open_part(d, s);
        assert_int_equal(d->pair_n[o], 2); /* the two open lexemes */
        if (open == LEX_DEAD)
            open = o;
        assert_int_equal(o, open);
        lex_slice_stats_t st;
        assert_int_equal(lex_slicer_mask(sl, &k.r, s, &k.got, &st, &err), 0);
        oracle_mask(&k.v->t.keys, d, s, &k.want);
        if (!tb_bitset_equal(&k.got, &k.want))
            fail_diff(k.v, "sliced key position", re[N - 1], "\"", 1, &k.got, &k.want);
        /* Whatever the open part takes whole, the state takes whole: the
         * short pieces at least, here and in every state of the run. */
        for (size_t i = 0; i < sl->nslice; i++)
            if (lex_slicer_subsumes(sl, i, o, &err) == 1)
                assert_int_equal(lex_slicer_subsumes(sl, i, s, &err), 1);
        assert_int_equal(lex_slicer_subsumes(sl, 0, s, &err), 1);
        assert_true(st.whole >= 1);
    }
    /* Either open lexeme alone leaves keys out: the verdicts need both. */
    for (int k = 4; k < N; k++) {
        uint64_t one = 1u << k;
        uint32_t s = lex_dfa_feed(d, lex_dfa_start_of(d, &one), (const uint8_t *)"\"", 1);
        assert_int_equal(lex_slicer_subsumes(sl, 0, s, &err), 0);
    }
    /* Names alone have no open part: the state stands for itself. */
    uint64_t names = (1u << NAMES) - 1;
    uint32_t s = lex_dfa_feed(d, lex_dfa_start_of(d, &names), (const uint8_t *)"\"", 1);
    assert_int_equal(lex_dfa_open_part(d, s), LEX_DEAD);
    assert_int_equal(lex_slicer_subsumes(sl, 0, s, &err), 0);
    keys_close(&k);
}

static uint32_t dfa_step(void *ctx, uint32_t from, uint8_t b)
{
    return lex_dfa_next(ctx, from, b);
}

/* Inside a JSON string every loop byte leads to the state inside it, which
 * stays: the residual is walked as its heads from the state and its tails
 * from there, fewer nodes than the residual itself, and the masks are the
 * oracle's (check_masks).  Where the loop bytes part ways (after an
 * object's brace) or a byte leaves the loop (a string at its length
 * bound), the residual is walked whole. */
static void residual_tails_inside_strings(void **state)
{
    (void)state;
    /* A string that may not be empty: its quote and its inside differ. */
    static const char nonempty[] = "\"[^\"\\\\\\x00-\\x1f]+\"";
    vocab_t *v = &vocabs[0];
    lex_slicer_t *sl = v->slicer[0];
    tally_t t = {0};
    tb_err_t err;
    uint32_t quote = check_masks(v, NULL, nonempty, "\"", 1, &t);
    uint32_t inside = check_masks(v, NULL, nonempty, "\"a", 2, &t);
    assert_int_not_equal(quote, inside);
    check_masks(v, NULL, JSON_STRING, "\"", 1, &t);
    lex_dfa_t *d = lex_dfa_new(nonempty, NULL, &err);
    assert_non_null(d);
    assert_int_equal(lex_slicer_bind(sl, d, &err), 0);
    quote = lex_dfa_feed(d, LEX_START, (const uint8_t *)"\"", 1);
    inside = lex_dfa_feed(d, LEX_START, (const uint8_t *)"\"a", 2);
    assert_int_equal(lex_slicer_after_loop(sl, dfa_step, d, quote), inside);
    assert_int_equal(lex_slicer_after_loop(sl, dfa_step, d, inside), inside);
    lex_rec_t r;
    tb_bitset_t got;
    assert_int_equal(lex_rec_init(&r, d, v->t.keys.max_len, &err), 0);
    assert_int_equal(tb_bitset_init(&got, v->t.keys.id_limit + 1), 0);
    lex_slice_stats_t st;
    assert_int_equal(lex_slicer_mask(sl, &r, quote, &got, &st, &err), 0);
    assert_int_equal(st.walked, 0);
    lex_rec_reset(&r, quote);
    uint64_t whole_residual = trie_walk(sl->rest, &r.rec, &got);
    assert_true(st.nodes * 3 < whole_residual);
    lex_rec_free(&r);
    tb_bitset_free(&got);
    lex_dfa_free(d);
    d = lex_dfa_new(JSON_OBJECT, NULL, &err);
    assert_non_null(d);
    assert_int_equal(lex_slicer_bind(sl, d, &err), 0);
    uint32_t s = lex_dfa_feed(d, LEX_START, (const uint8_t *)"{", 1);
    assert_int_equal(lex_slicer_after_loop(sl, dfa_step, d, s), LEX_SLICE_NO_LOOP);
    lex_dfa_free(d);
    /* A bounded string leaves its state at every byte. */
    static const char bounded[] = "[^\"\\\\\\x00-\\x1f]{0,3}\"";
    d = lex_dfa_new(bounded, NULL, &err);
    assert_non_null(d);
    assert_int_equal(lex_slicer_bind(sl, d, &err), 0);
    assert_int_equal(lex_slicer_after_loop(sl, dfa_step, d, LEX_START), LEX_SLICE_NO_LOOP);
    lex_dfa_free(d);
    check_masks(v, NULL, bounded, "ab", 2, &t);
}

/* The key position of the n lexemes re (a name's each, the last for every
 * other name, `other`), all expected: its open part takes every slice
 * whole, nothing is walked, and the mask is the oracle's.  Returns the
 * lexer states the mask made; the open part into *open, with k left open
 * for the caller's checks. */
static size_t key_position_whole(keys_t *k, const char *const *re, const char *const *name,
                                 size_t n, const char *what, uint32_t *open)
{
    lex_dfa_opts_t opts = {.lookahead = 1};
    tb_err_t err;
    keys_open(k, re, name, n, &opts);
    lex_dfa_t *d = k->d;
    lex_slicer_t *sl = k->sl;
    uint64_t all = ~0ull >> (64 - n);
    uint32_t s = lex_dfa_feed(d, lex_dfa_start_of(d, &all), (const uint8_t *)"\"", 1);
    uint32_t o = lex_dfa_open_part(d, s);
    assert_int_not_equal(o, LEX_DEAD);
    size_t before = d->nstates;
    lex_slice_stats_t st;
    assert_int_equal(lex_slicer_mask(sl, &k->r, s, &k->got, &st, &err), 0);
    size_t made = d->nstates - before;
    for (size_t i = 0; i < sl->nslice; i++)
        if (sl->slice[i].trie)
            assert_int_equal(lex_slicer_subsumes(sl, i, o, &err), 1);
    assert_int_equal(st.walked, 0);
    oracle_mask(&k->v->t.keys, d, s, &k->want);
    if (!tb_bitset_equal(&k->got, &k->want))
        fail_diff(k->v, what, re[n - 1], "\"", 1, &k->got, &k->want);
    *open = o;
    return made;
}

/* The key position of an object with many properties and any other name
 * allowed, as the schema compiler writes it: a lexeme per name and one for
 * every other name (a negative look-ahead over the names).  The open part,
 * that last lexeme, meets a lexer state per first letter of the names as
 * soon as it is explored; its verdicts serve every key position of the
 * object, so it is explored to the end: every slice whole, nothing walked,
 * and the mask is the oracle's. */
static void open_part_explored_to_the_end(void **state)
{
    (void)state;
    static const char *const word[] = {"alpha",  "bravo",    "charlie", "delta", "echo",
                                       "foxtrot", "golf",    "hotel",   "india", "juliett",
                                       "kilo",   "lima",     "mike",    "november", "oscar",
                                       "papa",   "quebec",   "romeo",   "sierra", "tango"};
    enum { NAMES = sizeof word / sizeof *word, N = NAMES + 1 };
    char lexeme[NAMES][32], other[512] = "\"(?!(";
    const char *re[N], *name[N];
    for (size_t i = 0; i < NAMES; i++) {
        snprintf(lexeme[i], sizeof lexeme[i], "\"%s\"", word[i]);
        re[i] = name[i] = lexeme[i];
        snprintf(other + strlen(other), sizeof other - strlen(other), "%s%s", i ? "|" : "",
                 word[i]);
    }
    snprintf(other + strlen(other), sizeof other - strlen(other), ")\")%s", KEY_BODY);
    re[NAMES] = other;
    name[NAMES] = "other";
    keys_t k;
    uint32_t o;
    size_t made = key_position_whole(&k, re, name, N, "key position of twenty names", &o);
    assert_int_equal(k.d->pair_n[o], 1);
    /* More new lexer states than a slice's own budget allows its product. */
    assert_true(made > 16);
    keys_close(&k);
}

/* The same key position with the other names spelled as the schema
 * compiler spells them now, whole strings (a look-ahead through $), and
 * sixty names: the open part is explored relaxed (lex_dfa_relaxed), the
 * string without the names, in a few lexer states where the names' own
 * prefixes would be hundreds; every slice is whole, nothing is walked, and
 * the mask is the oracle's. */
static void open_part_relaxed_to_the_string(void **state)
{
    (void)state;
    enum { NAMES = 60, N = NAMES + 1 };
    static char lexeme[NAMES][32], other[2048];
    const char *re[N], *name[N];
    strcpy(other, "\"(?!(?:");
    for (size_t i = 0; i < NAMES; i++) {
        /* names apart from their first letter on, as a schema's are */
        snprintf(lexeme[i], sizeof lexeme[i], "\"%c%c_field_%zu\"", 'a' + (int)(i % 26),
                 'a' + (int)(i * 7 % 26), i);
        re[i] = name[i] = lexeme[i];
        snprintf(other + strlen(other), sizeof other - strlen(other), "%s%.*s", i ? "|" : "",
                 (int)strlen(lexeme[i]) - 2, lexeme[i] + 1);
    }
    snprintf(other + strlen(other), sizeof other - strlen(other), ")\"$)%s", KEY_BODY);
    re[NAMES] = other;
    name[NAMES] = "other";
    keys_t k;
    uint32_t o;
    size_t made = key_position_whole(&k, re, name, N, "key position of sixty names", &o);
    assert_int_not_equal(lex_dfa_relaxed(k.d, o), o);
    assert_true(made <= 16);
    keys_close(&k);
}

/* The key position of pattern properties, as the schema compiler writes
 * it: a lexeme per class of names (those one pattern matches and the
 * others do not, and the names none matches), each a JSON string body
 * under positive and negative look-aheads.  Their lexer states are costly
 * in terms, so an exploration stops once it has made the slicer's term
 * budget of them (give or take the step that passed it) and answers
 * "walk"; the mask stays the oracle's either way. */
#define NOT_NETDIR "(?![^\"]*netdir_(projects|work))"
#define NOT_NETDRV "(?![^\"]*netdrv_[a-z])"
#define NOT_NET "(?![^\"]*net_[a-z]+[0-9])"
static void term_budget_bounds_explorations(void **state)
{
    (void)state;
    static const char *const re[] = {
        "\"(?=[^\"]*netdir_(projects|work))" NOT_NETDRV NOT_NET KEY_BODY,
        "\"(?=[^\"]*netdrv_[a-z])" NOT_NETDIR NOT_NET KEY_BODY,
        "\"(?=[^\"]*net_[a-z]+[0-9])" NOT_NETDIR NOT_NETDRV KEY_BODY,
        "\"" NOT_NETDIR NOT_NETDRV NOT_NET KEY_BODY,
    };
    static const char *const name[] = {"netdir", "netdrv", "net", "other"};
    enum { N = sizeof re / sizeof *re };
    lex_dfa_opts_t opts = {.lookahead = 1};
    uint64_t all = (1ull << N) - 1;
    size_t made = 0;
    for (int cut = 0; cut < 2; cut++) {
        tb_err_t err;
        keys_t k;
        keys_open(&k, re, name, N, &opts);
        lex_slicer_t *sl = k.sl;
        size_t keep = sl->term_budget;
        sl->term_budget = cut ? made / 8 : SIZE_MAX;
        uint32_t s = lex_dfa_feed(k.d, lex_dfa_start_of(k.d, &all), (const uint8_t *)"\"", 1);
        size_t whole = 0, before = k.d->terms.n;
        /* widest first, so that each call explores its own slice alone */
        for (size_t i = sl->nslice; i-- > 0;) {
            size_t at = k.d->terms.n;
            int r = lex_slicer_subsumes(sl, i, s, &err);
            assert_true(r >= 0);
            whole += (size_t)r;
            if (cut) /* the step that passes the budget makes a few dozen */
                assert_true(k.d->terms.n - at <= sl->term_budget + 64);
        }
        if (!cut)
            made = k.d->terms.n - before;
        /* uncut, a slice is whole; cut, every exploration stops first */
        assert_true(cut ? whole == 0 : whole > 0);
        lex_slice_stats_t st;
        assert_int_equal(lex_slicer_mask(sl, &k.r, s, &k.got, &st, &err), 0);
        oracle_mask(&k.v->t.keys, k.d, s, &k.want);
        if (!tb_bitset_equal(&k.got, &k.want))
            fail_diff(k.v, "key classes of three patterns", re[0], "\"", 1, &k.got, &k.want);
        sl->term_budget = keep;
        keys_close(&k);
    }
}

/* ---- custom slices and random regexes ------------------------------------------ */

static void random_regex(char *out, size_t cap, int depth)
{
    static const char *const leaf[] = {
        "[a-z]", "[a-z]+", "\\d", "\\d{1,3}", " ", "[^\"\\\\]", "\\p{L}", "e", "th", "[A-Z]",
        "(.|\\n)", "[^a-z]", "\\s", "ing", ".",
    };
    static const char *const rep[] = {"*", "+", "?", "{0,4}", "{1,12}", "{3}", "{2,}"};
    char a[256], b[256];
    switch (depth > 0 ? rnd(6) : 0) {
    case 0:
        snprintf(out, cap, "%s", leaf[rnd(sizeof leaf / sizeof *leaf)]);
        break;
    case 1:
    case 2:
        random_regex(a, sizeof a, depth - 1);
        random_regex(b, sizeof b, depth - 1);
        snprintf(out, cap, "%s%s", a, b);
        break;
    case 3:
        random_regex(a, sizeof a, depth - 1);
        random_regex(b, sizeof b, depth - 1);
        snprintf(out, cap, "(?:%s|%s)", a, b);
        break;
    default:
        random_regex(a, sizeof a, depth - 1);
        snprintf(out, cap, "(?:%s)%s", a, rep[rnd(sizeof rep / sizeof *rep)]);
    }
}

static void custom_slices_and_random_regexes(void **state)
{
    (void)state;
    static const char *const slices[] = {"[a-z]{1,4}", "[a-z]+", "\\d+", " ?\\p{L}+",
                                         "(.|\\n){1,3}"};
    tb_err_t err;
    tally_t t = {0};
    for (size_t vi = 0; vi < 2; vi++) {
        vocab_t *v = &vocabs[vi];
        lex_slicer_t *s[TEST_MAX_LAYOUTS];
        for (size_t l = 0; l < v->t.ntries; l++)
            if (!(s[l] = lex_slicer_new(&v->t.keys, trie_layout(v->t.tries[l]), slices, 5, &err)))
                fail_msg("%s", err.msg);
        for (int i = 0; i < 12; i++) {
            char pat[1024];
            random_regex(pat, sizeof pat, 4);
            check_masks(v, s, pat, "", 0, &t);
            /* and from a state a few random live bytes in */
            lex_dfa_t *d = lex_dfa_new(pat, NULL, &err);
            assert_non_null(d);
            char pre[8];
            size_t n = 0;
            for (uint32_t st = LEX_START; n < 1 + rnd(6); n++) {
                const uint64_t *al = lex_dfa_allowed(d, st);
                unsigned b = rnd(256), tries = 0;
                while (!((al[b >> 6] >> (b & 63)) & 1) && tries++ < 256)
                    b = (b + 1) & 255;
                if (tries > 256)
                    break;
                pre[n] = (char)b;
                st = lex_dfa_next(d, st, (uint8_t)b);
            }
            lex_dfa_free(d);
            check_masks(v, s, pat, pre, n, &t);
        }
        check_masks(v, s, "[a-z]*", "", 0, &t);
        check_masks(v, s, "(.|\\n)*", "", 0, &t);
        for (size_t l = 0; l < v->t.ntries; l++)
            lex_slicer_free(s[l]);
    }
    print_message("%zu masks; slices taken whole %zu times, walked %zu\n", t.masks, t.whole,
                  t.walked);
    assert_true(t.whole > 0 && t.walked > 0);
}

/* Every token is in exactly one part, the one the membership rule names:
 * the first slice whose DFA is still live after the token's bytes (by
 * prefix), or whose DFA accepts them (full match). */
static void check_partition(const lex_slicer_t *s, const trie_keys_t *k)
{
    size_t in = 0;
    for (size_t i = 0; i < k->n; i++) {
        const trie_key_t *key = &k->keys[i];
        size_t want = s->nslice;
        for (size_t j = 0; j < s->nslice && want == s->nslice; j++) {
            uint32_t st = lex_dfa_feed(s->slice[j].dfa, LEX_START, key->s, key->len);
            if (st != LEX_DEAD && (s->prefixes || lex_dfa_accepting(s->slice[j].dfa, st)))
                want = j;
        }
        for (size_t j = 0; j < s->nslice; j++)
            if (tb_bitset_get(&s->slice[j].mask, key->id) != (j == want))
                fail_msg("token %u '%.*s': slice %zu says %d, it belongs to part %zu",
                         key->id, (int)key->len, key->s, j + 1,
                         tb_bitset_get(&s->slice[j].mask, key->id), want + 1);
        in += want < s->nslice;
    }
    size_t total = s->nrest;
    for (size_t j = 0; j < s->nslice; j++)
        total += s->slice[j].ntokens;
    assert_int_equal(total, k->n);
    assert_int_equal(in + s->nrest, k->n);
}

static void slices_partition_the_keys(void **state)
{
    (void)state;
    tb_err_t err;
    for (size_t vi = 0; vi < 2; vi++) {
        check_partition(vocabs[vi].slicer[0], &vocabs[vi].t.keys);
        lex_slicer_t *full = lex_slicer_new_as(&vocabs[vi].t.keys, &trie_layout_dfs, NULL, 0,
                                               LEX_SLICE_FULL, &err);
        assert_non_null(full);
        check_partition(full, &vocabs[vi].t.keys);
        /* By prefix, the tokens that end inside a character join a slice. */
        assert_true(full->nrest > vocabs[vi].slicer[0]->nrest);
        lex_slicer_free(full);
    }
}

/* Full-match membership gives exact masks too. */
static void full_match_slices(void **state)
{
    (void)state;
    tb_err_t err;
    vocab_t *v = &vocabs[0];
    lex_slicer_t *s[TEST_MAX_LAYOUTS];
    for (size_t l = 0; l < v->t.ntries; l++)
        assert_non_null(s[l] = lex_slicer_new_as(&v->t.keys, trie_layout(v->t.tries[l]), NULL, 0,
                                                 LEX_SLICE_FULL, &err));
    tally_t t = {0};
    check_masks(v, s, JSON_BODY, "", 0, &t);
    check_masks(v, s, JSON_OBJECT, "{\"name\": \"Jo", strlen("{\"name\": \"Jo"), &t);
    check_masks(v, s, "[^\"\\\\\\x00-\\x1f]{0,20}\"", "abc", 3, &t);
    check_masks(v, s, "[0-9]+", "", 0, &t);
    assert_true(t.whole > 0 && t.walked > 0);
    for (size_t l = 0; l < v->t.ntries; l++)
        lex_slicer_free(s[l]);
}

/* ---- bad input ------------------------------------------------------------------- */

static void bad_slice_lists(void **state)
{
    (void)state;
    tb_err_t err;
    char **v;
    size_t n;
    assert_int_equal(lex_slicer_parse_list("a;;b", &v, &n, &err), -1);
    assert_non_null(strstr(err.msg, "slice 2 is empty"));
    assert_int_equal(lex_slicer_parse_list("a\\;b;c", &v, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_string_equal(v[0], "a;b");
    assert_string_equal(v[1], "c");
    free(v);
    assert_int_equal(lex_slicer_parse_list("default", &v, &n, &err), 0);
    assert_int_equal(n, 3);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(v[i], lex_slicer_default[i]);
    free(v);
    const char *bad[] = {"[a-z]+", "a(b"};
    lex_slicer_t *s = lex_slicer_new(&vocabs[0].t.keys, &trie_layout_dfs, bad, 2, &err);
    assert_null(s);
    assert_non_null(strstr(err.msg, "slice 2"));
    assert_non_null(strstr(err.msg, "a(b"));
    assert_non_null(strstr(err.msg, "offset 1"));
}

static void mask_command(void **state)
{
    (void)state;
    static char out[1 << 16];
    assert_int_equal(test_tokbench_mask(LLAMA3 " --regex '[^\"\\\\\\x00-\\x1f]*\"' "
                                        "--slicer default --reps 3", out, sizeof out), 0);
    if (!strstr(out, "3 slices taken whole, 0 walked") || !strstr(out, "equals the plain"))
        fail_msg("%s", out);
    assert_int_equal(test_tokbench_mask(LLAMA3 " --regex '[0-9]+' --layout map --reps 3 "
                                        "--slicer '[a-z]{1,2};\\p{L}+'", out, sizeof out), 0);
    if (!strstr(out, "0 slices taken whole, 2 walked") || !strstr(out, "equals the plain"))
        fail_msg("%s", out);
    /* From the state after --after: inside the object's string value. */
    assert_int_equal(test_tokbench_mask(LLAMA3 " --regex '" JSON_OBJECT "' "
                                        "--after '{\"name\": \"Jo' --slicer default --reps 3",
                                        out, sizeof out), 0);
    if (!strstr(out, "3 slices taken whole, 0 walked") || !strstr(out, "equals the plain"))
        fail_msg("%s", out);
    assert_int_equal(test_tokbench_mask(LLAMA3 " --regex '[0-9]+' --slicer 'a{1,3}b;[x-'",
                                        out, sizeof out), 1);
    if (!strstr(out, "slice 2") || !strstr(out, "[x-"))
        fail_msg("%s", out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slices_partition_the_keys),
        cmocka_unit_test(real_world_regexes),
        cmocka_unit_test(subsumption_verdicts),
        cmocka_unit_test(slices_within),
        cmocka_unit_test(small_budget_walks),
        cmocka_unit_test(open_parts_share_verdicts),
        cmocka_unit_test(open_part_explored_to_the_end),
        cmocka_unit_test(open_part_relaxed_to_the_string),
        cmocka_unit_test(term_budget_bounds_explorations),
        cmocka_unit_test(residual_tails_inside_strings),
        cmocka_unit_test(custom_slices_and_random_regexes),
        cmocka_unit_test(full_match_slices),
        cmocka_unit_test(bad_slice_lists),
        cmocka_unit_test(mask_command),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
