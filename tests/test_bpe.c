/*
 * test_bpe: the BPE merge engine.  Hand-made vocabularies pin down the
 * rules (rank order, leftmost ties, byte fallback, unknowns,
 * ignore_merges); real Llama 3 and Gemma 3 merges are run against
 * reference merge loops written here for clarity, not speed, on long runs
 * of one letter and on the words of real text.  The word cache's keys
 * are checked on their own: a word read whole past its end, or copied
 * out at the end of its text, must be the same key.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../base/file.h"
#include "../tok/tok_internal.h"
#include "../tok/wordcache.h"
#include "support.h"

/* ---- hand-made vocabularies ------------------------------------------ */

typedef struct {
    const char *s;
    tok_kind_t kind;
    size_t len; /* 0: strlen(s) */
} tok_def_t;

/* Tokens get ids in list order; merges are "left right" pairs of token
 * strings, ranked in list order, merging into the concatenation. */
static tok_tokenizer_t *make(const tok_def_t *toks, size_t ntok,
                             const char **merges, size_t nmerge)
{
    tok_tokenizer_t *t = tok_new(TOK_FORMAT_HF_JSON);
    tok_vocab_builder_t *b = tok_vocab_builder_new();
    tb_err_t err;
    for (size_t i = 0; i < ntok; i++) {
        size_t len = toks[i].len ? toks[i].len : strlen(toks[i].s);
        assert_int_equal(tok_vocab_add(b, (uint32_t)i, (const uint8_t *)toks[i].s,
                                       len, 0, toks[i].kind, 0, &err), 0);
    }
    assert_int_equal(tok_vocab_finish(b, &t->vocab, &err), 0);
    for (size_t i = 0; i < nmerge; i++) {
        const char *sp = strchr(merges[i], ' ');
        char both[64];
        size_t ll = (size_t)(sp - merges[i]);
        memcpy(both, merges[i], ll);
        strcpy(both + ll, sp + 1);
        int32_t l = -1, r = -1, m = -1;
        for (size_t k = 0; k < ntok; k++) {
            if (toks[k].kind == TOK_BYTE || toks[k].len)
                continue;
            if (strlen(toks[k].s) == ll && !memcmp(toks[k].s, merges[i], ll))
                l = (int32_t)k;
            if (!strcmp(toks[k].s, sp + 1))
                r = (int32_t)k;
            if (!strcmp(toks[k].s, both))
                m = (int32_t)k;
        }
        assert_true(l >= 0 && r >= 0 && m >= 0);
        assert_int_equal(tok_bpe_add_merge(&t->bpe, (uint32_t)l, (uint32_t)r,
                                           (uint32_t)i, (uint32_t)m), 0);
    }
    return t;
}

/* tok_bpe_word with a state of its own; `prepare` derives the engine's
 * tables first, for a tokenizer made or changed by hand. */
static int word_ids(tok_tokenizer_t *t, int prepare, const uint8_t *w, size_t n,
                    tok_ids_t *ids, tb_err_t *err)
{
    if (prepare && tok_prepare(t, err))
        return -1;
    tok_state_t *st = tok_state_new(t);
    int rc = st ? tok_bpe_word(t, st, w, n, ids, err) : tb_fail(err, "out of memory");
    tok_state_free(st);
    return rc;
}

/* Encodes one word and checks its ids against a -1-terminated list. */
static void expect_ids(tok_tokenizer_t *t, const char *w, size_t n, ...)
{
    tok_ids_t ids = {0};
    tb_err_t err;
    if (word_ids(t, 1, (const uint8_t *)w, n, &ids, &err))
        fail_msg("bpe: %s", err.msg);
    va_list ap;
    va_start(ap, n);
    size_t i = 0;
    for (int id; (id = va_arg(ap, int)) >= 0; i++) {
        if (i >= ids.len)
            fail_msg("\"%.*s\": %zu ids, expected more", (int)n, w, ids.len);
        if (ids.data[i] != (uint32_t)id)
            fail_msg("\"%.*s\": id %zu is %u, expected %d", (int)n, w, i,
                     ids.data[i], id);
    }
    va_end(ap);
    if (ids.len != i)
        fail_msg("\"%.*s\": %zu ids, expected %zu", (int)n, w, ids.len, i);
    free(ids.data);
}

#define expect(t, w, ...) expect_ids(t, w, strlen(w), __VA_ARGS__, -1)

static const tok_def_t abc[] = {
    {"a", TOK_NORMAL, 0},  {"b", TOK_NORMAL, 0},   {"c", TOK_NORMAL, 0},
    {"ab", TOK_NORMAL, 0}, {"bc", TOK_NORMAL, 0},  {"abc", TOK_NORMAL, 0},
    {"aa", TOK_NORMAL, 0}, {"aaaa", TOK_NORMAL, 0}, {"aaa", TOK_NORMAL, 0},
};
enum { A, B, C, AB, BC, ABC, AA, AAAA, AAA };

static void test_rank_order(void **state)
{
    (void)state;
    /* (b c) outranks (a b): "abc" merges bc first, then a+bc */
    const char *m1[] = {"b c", "a b", "a bc"};
    tok_tokenizer_t *t = make(abc, 9, m1, 3);
    expect(t, "abc", ABC);
    expect(t, "ab", AB);
    expect(t, "abab", AB, AB);
    tok_free(t);
    /* without (a bc) the word stops at a + bc, though (a b) exists:
     * b is already taken by the better-ranked pair */
    const char *m2[] = {"b c", "a b"};
    t = make(abc, 9, m2, 2);
    expect(t, "abc", A, BC);
    tok_free(t);
}

static void test_leftmost_ties(void **state)
{
    (void)state;
    const char *m[] = {"a a", "aa aa"};
    tok_tokenizer_t *t = make(abc, 9, m, 2);
    /* equal ranks merge leftmost first: "aaa" is aa + a, never a + aa */
    expect(t, "aaa", AA, A);
    expect(t, "aaaa", AAAA);
    expect(t, "aaaaa", AAAA, A);
    expect(t, "aaaaaaa", AAAA, AA, A);
    tok_free(t);
}

/* A pair added twice keeps its first rank. */
static void test_first_merge_wins(void **state)
{
    (void)state;
    const char *m[] = {"b c"};
    tok_tokenizer_t *t = make(abc, 9, m, 1);
    /* (a b) at rank 5, then again at rank 0: rank 5 must stand, so the
     * rank-0 (b c) goes first */
    assert_int_equal(tok_bpe_add_merge(&t->bpe, A, B, 5, AB), 0);
    assert_int_equal(tok_bpe_add_merge(&t->bpe, A, B, 0, AB), 0);
    expect(t, "abc", A, BC);
    tok_free(t);
}

static void test_ignore_merges(void **state)
{
    (void)state;
    const char *m[] = {"a b"};
    tok_tokenizer_t *t = make(abc, 9, m, 1);
    expect(t, "abc", AB, C);
    tok_free(t);
    t = make(abc, 9, m, 1);
    t->bpe.ignore_merges = 1;
    expect(t, "abc", ABC); /* a token as a whole, merges or not */
    expect(t, "abcc", AB, C, C);
    tok_free(t);
}

/* A vocabulary with SentencePiece byte pieces for every byte, placed
 * before the ordinary tokens as SentencePiece files place them. */
static tok_tokenizer_t *with_bytes(const tok_def_t *extra, size_t n,
                                   int fallback)
{
    static char bytes[256][2];
    tok_def_t toks[256 + 16];
    for (int i = 0; i < 256; i++) {
        bytes[i][0] = (char)i;
        toks[i] = (tok_def_t){bytes[i], TOK_BYTE, 1};
    }
    memcpy(toks + 256, extra, n * sizeof *extra);
    tok_tokenizer_t *t = make(toks, 256 + n, NULL, 0);
    t->bpe.byte_fallback = fallback;
    return t;
}

static void test_byte_fallback(void **state)
{
    (void)state;
    tok_def_t extra[] = {{"<unk>", TOK_UNKNOWN, 0}, {"a", TOK_NORMAL, 0},
                         {"\xC3\xA9", TOK_NORMAL, 0}};
    tok_tokenizer_t *t = with_bytes(extra, 3, 1);
    t->bpe.unk = 256;
    /* 'a' is the ordinary token 257, not the byte piece 0x61 */
    expect(t, "a", 257);
    /* é is in the vocabulary; ö is not and falls back to its bytes */
    expect(t, "a\xC3\xA9\xC3\xB6", 257, 258, 0xC3, 0xB6);
    /* an invalid byte is a one-byte character, so it falls back too */
    expect(t, "\xFF" "a", 0xFF, 257);
    tok_free(t);
}

static void test_unknown(void **state)
{
    (void)state;
    tok_def_t toks[] = {{"<unk>", TOK_UNKNOWN, 0}, {"a", TOK_NORMAL, 0}, {"b", TOK_NORMAL, 0}};
    tok_tokenizer_t *t = make(toks, 3, NULL, 0);
    t->bpe.unk = 0;
    /* é and ö are unknown: one unk each without fuse_unk */
    expect(t, "a\xC3\xA9\xC3\xB6" "b", 1, 0, 0, 2);
    t->bpe.fuse_unk = 1;
    expect(t, "a\xC3\xA9\xC3\xB6" "b\xC3\xA9", 1, 0, 2, 0);
    tok_free(t);
    /* with no unk token an unknown character is dropped */
    t = make(toks, 3, NULL, 0);
    expect(t, "a\xC3\xA9" "b", 1, 2);
    /* and a word of nothing else has no ids, computed then cached (found by
     * fuzz_tok: appending no ids to an empty list was memcpy from NULL) */
    expect_ids(t, "\xC3\xA9", 2, -1);
    expect_ids(t, "\xC3\xA9", 2, -1);
    tok_free(t);
}

/* A byte-level word decodes back to its bytes, invalid UTF-8 included. */
static void test_byte_level_roundtrip(void **state)
{
    (void)state;
    static char bytes[256][2];
    tok_def_t toks[258];
    for (int i = 0; i < 256; i++) {
        bytes[i][0] = (char)(i ^ 0x55); /* ids not equal to bytes */
        toks[i] = (tok_def_t){bytes[i], TOK_NORMAL, 1};
    }
    toks[256] = (tok_def_t){"\xFF\xFE", TOK_NORMAL, 0};
    toks[257] = (tok_def_t){"\xFF\xFE\xFF\xFE", TOK_NORMAL, 0};
    tok_tokenizer_t *t = make(toks, 258, NULL, 0);
    tb_err_t err;
    t->bpe.byte_level = 1;
    assert_int_equal(tok_bpe_add_merge(&t->bpe, 0xFF ^ 0x55, 0xFE ^ 0x55, 0, 256), 0);
    assert_int_equal(tok_bpe_add_merge(&t->bpe, 256, 256, 1, 257), 0);
    const char w[] = "x\xFF\xFE\xFF\xFE\xFF\xFE\x80";
    tok_ids_t ids = {0};
    assert_int_equal(word_ids(t, 1, (const uint8_t *)w, sizeof w - 1, &ids, &err), 0);
    assert_int_equal(ids.len, 4); /* x, FFFEFFFE, FFFE, 80 */
    tb_buf_t back = {0};
    for (size_t i = 0; i < ids.len; i++) {
        size_t len;
        const uint8_t *s = tok_vocab_token(&t->vocab, ids.data[i], &len);
        tb_buf_put(&back, s, len);
    }
    assert_int_equal(back.len, sizeof w - 1);
    assert_memory_equal(back.data, w, back.len);
    tb_buf_free(&back);
    free(ids.data);
    tok_free(t);
}

/* A byte-level character may start as its token only where no merge
 * ranked below its own inner merge joins it (or its first or last byte)
 * with the bytes next to it.  Here e-acute's bytes merge at rank 4, after
 * " " + its lead byte (0), its last byte + "!" (1) and "x" + it (2), while
 * "w" + "x" (3) lies outside it and "y" + it (5) comes after: ranked by the
 * merge table, or (by_id) as tiktoken ranks, by the id of the token two
 * parts spell, which the ids here follow. */
static void check_premerged_characters(int by_id)
{
    static char bytes[256][2];
    tok_def_t toks[256 + 6];
    for (int i = 0; i < 256; i++) {
        bytes[i][0] = (char)i;
        toks[i] = (tok_def_t){bytes[i], TOK_NORMAL, 1};
    }
    enum { SPACE_LEAD = 256, LAST_BANG, X_E, W_X, E_ACUTE, Y_E };
    toks[SPACE_LEAD] = (tok_def_t){" \xC3", TOK_NORMAL, 0};
    toks[LAST_BANG] = (tok_def_t){"\xA9!", TOK_NORMAL, 0};
    toks[X_E] = (tok_def_t){"x\xC3\xA9", TOK_NORMAL, 0};
    toks[W_X] = (tok_def_t){"wx", TOK_NORMAL, 0};
    toks[E_ACUTE] = (tok_def_t){"\xC3\xA9", TOK_NORMAL, 0};
    toks[Y_E] = (tok_def_t){"y\xC3\xA9", TOK_NORMAL, 0};
    tok_tokenizer_t *t = make(toks, 256 + 6, NULL, 0);
    t->bpe.byte_level = 1;
    const uint32_t merges[][3] = {{' ', 0xC3, SPACE_LEAD}, {0xA9, '!', LAST_BANG},
                                  {'x', E_ACUTE, X_E},     {'w', 'x', W_X},
                                  {0xC3, 0xA9, E_ACUTE},   {'y', E_ACUTE, Y_E}};
    if (by_id)
        t->bpe.rank_by = TOK_RANK_ID;
    for (uint32_t r = 0; r < 6 && !by_id; r++)
        assert_int_equal(tok_bpe_add_merge(&t->bpe, merges[r][0], merges[r][1], r,
                                           merges[r][2]), 0);
    expect(t, "a\xC3\xA9", 'a', E_ACUTE);
    /* the table holds the character with its partners: " " and "x"
     * before it, "!" after it */
    const bpe_tables_t *tb = t->bpe.tables;
    assert_true(tb->premerge_bits > 0);
    size_t found = 0;
    for (size_t i = 0; i < (size_t)1 << tb->premerge_bits; i++)
        if (tb->premerge[i].cp) {
            assert_int_equal(tb->premerge[i].cp, 0xE9);
            assert_int_equal(tb->premerge[i].id, E_ACUTE);
            assert_int_equal(tb->premerge[i].n_left, 2);
            assert_int_equal(tb->premerge[i].n_right, 1);
            found++;
        }
    assert_int_equal(found, 1);
    /* each partner next to it keeps it bytes, and the merges come out as
     * from bytes: started whole, " é" would be " " + é, "é!" é + "!", and
     * "wxé" w + xé, since x + é (2) would beat w + x (3) */
    expect(t, " \xC3\xA9", SPACE_LEAD, 0xA9);
    expect(t, "\xC3\xA9!", 0xC3, LAST_BANG);
    expect(t, "wx\xC3\xA9", W_X, E_ACUTE);
    expect(t, "x\xC3\xA9", X_E);
    expect(t, "y\xC3\xA9\xC3\xA9", Y_E, E_ACUTE);
    tok_free(t);
}

static void test_premerged_characters(void **state)
{
    (void)state;
    check_premerged_characters(0);
}

/* tiktoken's files have no merges: its premerged characters come from the
 * splits of its tokens (bpe.c, joins_by_bytes). */
static void test_premerged_characters_by_id(void **state)
{
    (void)state;
    check_premerged_characters(1);
}

/* Long words are cut before spaces only where no merge result holds the
 * byte before the space followed by the space: here "a " is a token, so
 * "a b" must still form across the space, while "b a" never can. */
static void test_cut_at_spaces(void **state)
{
    (void)state;
    static const tok_def_t toks[] = {
        {"a", TOK_NORMAL, 0},  {" ", TOK_NORMAL, 0},   {"b", TOK_NORMAL, 0},
        {"a ", TOK_NORMAL, 0}, {"a b", TOK_NORMAL, 0}, {"bb", TOK_NORMAL, 0},
    };
    /* make() splits merges at the first space, so these go in by id */
    tok_tokenizer_t *t = make(toks, 6, NULL, 0);
    assert_int_equal(tok_bpe_add_merge(&t->bpe, 0, 1, 0, 3), 0); /* a+" " */
    assert_int_equal(tok_bpe_add_merge(&t->bpe, 2, 2, 1, 5), 0); /* b+b */
    assert_int_equal(tok_bpe_add_merge(&t->bpe, 3, 2, 2, 4), 0); /* "a "+b */
    char w[121];
    for (int i = 0; i < 30; i++)
        memcpy(w + 4 * i, "a bb", 4); /* "a bba bb..." */
    w[120] = 0;
    tok_ids_t ids = {0};
    tb_err_t err;
    assert_int_equal(word_ids(t, 1, (const uint8_t *)w, 120, &ids, &err), 0);
    /* (a " ") first, then (b b) beats ("a " b): "a " + bb each time */
    assert_int_equal(ids.len, 60);
    for (size_t i = 0; i < ids.len; i += 2) {
        assert_int_equal(ids.data[i], 3);
        assert_int_equal(ids.data[i + 1], 5);
    }
    free(ids.data);
    tok_free(t);
}

/* ---- reference merge loops ------------------------------------------- */

/* The definition, literally: merge the lowest-ranked, leftmost pair, then
 * look again.  O(n^2). */
static void naive_merge(const tok_merges_t *m, uint32_t *sym, size_t *k)
{
    for (;;) {
        size_t best = SIZE_MAX;
        uint32_t best_rank = UINT32_MAX, best_id = 0, rank, merged;
        for (size_t i = 0; i + 1 < *k; i++)
            if (tok_bpe_merge_get(m, sym[i], sym[i + 1], &rank, &merged) &&
                rank < best_rank) {
                best = i;
                best_rank = rank;
                best_id = merged;
            }
        if (best == SIZE_MAX)
            return;
        sym[best] = best_id;
        memmove(sym + best + 1, sym + best + 2, (*k - best - 2) * sizeof *sym);
        (*k)--;
    }
}

/* The same choices as naive_merge, in whole passes: find the lowest rank r,
 * then sweep left to right merging pairs of rank r.  The sweep may go on
 * after a merge only while the naive loop would pick the next rank-r pair
 * of the sweep as well, i.e. while neither pair the merge created ranks
 * below r (or at r, for the pair on the left, which lies before the sweep).
 * Otherwise the pass stops merging and the next one looks again. */
static void pass_merge(const tok_merges_t *m, uint32_t *sym, size_t *k)
{
    uint32_t *out = malloc(*k * sizeof *out);
    for (;;) {
        uint32_t r = UINT32_MAX, rank, merged;
        for (size_t i = 0; i + 1 < *k; i++)
            if (tok_bpe_merge_get(m, sym[i], sym[i + 1], &rank, &merged) && rank < r)
                r = rank;
        if (r == UINT32_MAX)
            break;
        size_t n = 0;
        int sweeping = 1;
        for (size_t i = 0; i < *k; i++) {
            if (sweeping && n &&
                tok_bpe_merge_get(m, out[n - 1], sym[i], &rank, &merged) && rank == r) {
                out[n - 1] = merged;
                if (n >= 2 && tok_bpe_merge_get(m, out[n - 2], merged, &rank, &merged) &&
                    rank <= r)
                    sweeping = 0;
                if (i + 1 < *k &&
                    tok_bpe_merge_get(m, out[n - 1], sym[i + 1], &rank, &merged) &&
                    rank < r)
                    sweeping = 0;
                continue;
            }
            out[n++] = sym[i];
        }
        memcpy(sym, out, n * sizeof *sym);
        *k = n;
    }
    free(out);
}

static tok_tokenizer_t *load(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "data/cache/%s/tokenizer.json", name);
    return test_load(path);
}

/* Real text: the fortunes file, or the test fails saying what to fetch. */
static uint8_t *read_fortunes(size_t *len)
{
    uint8_t *text;
    tb_err_t err;
    if (tb_read_file("/usr/share/games/fortunes/fortunes", &text, len, &err))
        fail_msg("%s (the fortunes package: run `make data`)", err.msg);
    return text;
}

/* The engine's ids for the n bytes w are the naive loop's merge of sym,
 * the k symbols w starts as. */
static void engine_matches_naive(tok_tokenizer_t *t, const uint8_t *w, size_t n,
                                 uint32_t *sym, size_t k)
{
    naive_merge(&t->bpe.merges, sym, &k);
    tok_ids_t ids = {0};
    tb_err_t err;
    assert_int_equal(word_ids(t, 0, w, n, &ids, &err), 0);
    assert_int_equal(ids.len, k);
    assert_memory_equal(ids.data, sym, k * sizeof *sym);
    free(ids.data);
}

/* The id of the ordinary (not byte-piece) token spelled s. */
static uint32_t plain_id(const tok_vocab_t *v, const char *s)
{
    for (uint32_t id = 0; id < v->size; id++) {
        size_t len;
        const uint8_t *b = tok_vocab_token(v, id, &len);
        if (v->kind[id] != TOK_BYTE && len == strlen(s) && !memcmp(b, s, len))
            return id;
    }
    fail_msg("no token \"%s\"", s);
    return 0;
}

/* A run of n copies of one letter through the engine and through
 * pass_merge; the ids must agree and spell the run. */
static void check_run(tok_tokenizer_t *t, char letter, size_t n)
{
    char *w = malloc(n);
    memset(w, letter, n);
    uint32_t *sym = malloc(n * sizeof *sym);
    char one[2] = {letter, 0};
    uint32_t id = t->bpe.byte_level ? (uint32_t)t->vocab.byte_id[(uint8_t)letter]
                                    : plain_id(&t->vocab, one);
    for (size_t i = 0; i < n; i++)
        sym[i] = id;
    size_t k = n;
    pass_merge(&t->bpe.merges, sym, &k);
    tok_ids_t ids = {0};
    tb_err_t err;
    assert_int_equal(word_ids(t, 0, (const uint8_t *)w, n, &ids, &err), 0);
    assert_int_equal(ids.len, k);
    assert_memory_equal(ids.data, sym, k * sizeof *sym);
    size_t total = 0;
    for (size_t i = 0; i < ids.len; i++) {
        size_t len;
        const uint8_t *s = tok_vocab_token(&t->vocab, ids.data[i], &len);
        for (size_t j = 0; j < len; j++)
            assert_int_equal(s[j], (uint8_t)letter);
        total += len;
    }
    assert_int_equal(total, n);
    assert_true(k < n); /* real merges did happen */
    free(ids.data);
    free(sym);
    free(w);
}

/* pass_merge itself against the literal definition, on short runs */
static void check_pass_merge(tok_tokenizer_t *t, char letter)
{
    char one[2] = {letter, 0};
    uint32_t id = t->bpe.byte_level ? (uint32_t)t->vocab.byte_id[(uint8_t)letter]
                                    : plain_id(&t->vocab, one);
    for (size_t n = 1; n < 400; n += 37) {
        uint32_t a[400], b[400];
        for (size_t i = 0; i < n; i++)
            a[i] = b[i] = id;
        size_t ka = n, kb = n;
        naive_merge(&t->bpe.merges, a, &ka);
        pass_merge(&t->bpe.merges, b, &kb);
        assert_int_equal(ka, kb);
        assert_memory_equal(a, b, ka * sizeof *a);
    }
}

static void test_long_runs_llama3(void **state)
{
    (void)state;
    tok_tokenizer_t *t = load("llama3");
    assert_true(t->bpe.byte_level);
    check_pass_merge(t, 'a');
    check_run(t, 'a', 100000);
    check_run(t, '=', 100000);
    check_run(t, 'a', 4097);
    tok_free(t);
}

static void test_long_runs_gemma3(void **state)
{
    (void)state;
    tok_tokenizer_t *t = load("gemma3");
    assert_false(t->bpe.byte_level);
    check_pass_merge(t, 'a');
    check_run(t, 'a', 100000);
    check_run(t, 'z', 33333);
    tok_free(t);
}

/* Every word of text[0..len) through the engine and the naive loop (with
 * ignore_merges honoured as Llama 3 asks), twice with one state: the
 * second round hits the word cache.  Returns how many words there were. */
static size_t words_match_naive(tok_tokenizer_t *t, const uint8_t *text, size_t len)
{
    tb_err_t err;
    tb_buf_t buf = {0};
    tok_spans_t words = {0};
    tok_state_t *st = tok_state_new(t);
    assert_non_null(st);
    assert_int_equal(tok_pretokenize(t, st, text, len, 1, &buf, &words, &err), 0);
    tok_ids_t ids = {0};
    uint32_t *sym = NULL;
    for (int round = 0; round < 2; round++)
        for (size_t i = 0; i < words.len; i++) {
            const uint8_t *w = buf.data + words.data[i].off;
            size_t n = words.data[i].len, k = n;
            sym = realloc(sym, n * sizeof *sym);
            int32_t whole = tok_vocab_find(&t->vocab, w, n);
            if (whole >= 0) {
                sym[0] = (uint32_t)whole;
                k = 1;
            } else {
                for (size_t j = 0; j < n; j++)
                    sym[j] = (uint32_t)t->vocab.byte_id[w[j]];
                naive_merge(&t->bpe.merges, sym, &k);
            }
            ids.len = 0;
            assert_int_equal(tok_bpe_word(t, st, w, n, &ids, &err), 0);
            if (ids.len != k || memcmp(ids.data, sym, k * sizeof *sym))
                fail_msg("round %d: word %zu \"%.*s\" differs", round, i, (int)n,
                         (const char *)w);
        }
    size_t count = words.len;
    free(sym);
    free(ids.data);
    tb_buf_free(&buf);
    free(words.data);
    tok_state_free(st);
    return count;
}

/* Real text's words; those past the engine's short path go through its
 * heap, so both paths are covered. */
static void test_real_words_llama3(void **state)
{
    (void)state;
    size_t len;
    uint8_t *text = read_fortunes(&len);
    tok_tokenizer_t *t = load("llama3");
    assert_true(words_match_naive(t, text, len) > 1000);
    /* a long made-up word exercises the heap on real merges */
    const char *lw = "Pneumonoultramicroscopicsilicovolcanoconiosis"
                     "Supercalifragilisticexpialidocious-antidisestablishment";
    size_t n = strlen(lw);
    uint32_t *sym = malloc(n * sizeof *sym);
    for (size_t j = 0; j < n; j++)
        sym[j] = (uint32_t)t->vocab.byte_id[(uint8_t)lw[j]];
    engine_matches_naive(t, (const uint8_t *)lw, n, sym, n);
    free(sym);
    free(text);
    tok_free(t);
}

/* The words of the multi corpus's first 192 KiB (English, Chinese, box
 * drawing) and of 64 KiB of its Russian, where most characters start
 * whole: the engine must still give the naive loop's ids, which start
 * from bytes. */
static void test_wide_words_llama3(void **state)
{
    (void)state;
    uint8_t *text;
    size_t len;
    tb_err_t err;
    test_need_file("data/cache/multi/multi.txt");
    if (tb_read_file("data/cache/multi/multi.txt", &text, &len, &err))
        fail_msg("%s", err.msg);
    const uint8_t *ru = memmem(text, len, "\xD0\x9F", 2); /* the first П */
    assert_non_null(ru);
    ru = memchr(ru, '\n', len - (size_t)(ru - text));
    assert_true(ru && (size_t)(text + len - ru) > (64u << 10));
    tok_tokenizer_t *t = load("llama3");
    assert_true(t->bpe.tables->premerge_bits > 0);
    assert_true(words_match_naive(t, text, 192u << 10) > 10000);
    assert_true(words_match_naive(t, ru, 64u << 10) > 5000);
    free(text);
    tok_free(t);
}

/* 20,000 different words, far more than a fresh state's word cache first
 * has room for: it grows several times while they go in, and every word
 * found there in the second round must still have its own ids. */
static void test_cache_growth_llama3(void **state)
{
    (void)state;
    tb_buf_t text = {0};
    for (unsigned i = 0; i < 20000; i++) {
        char w[16];
        int n = 0;
        w[n++] = ' ';
        for (unsigned v = i; n < 5; v /= 26) /* " aaaa", " baaa", ... */
            w[n++] = (char)('a' + v % 26);
        assert_int_equal(tb_buf_put(&text, w, (size_t)n), 0);
    }
    tok_tokenizer_t *t = load("llama3");
    assert_int_equal(words_match_naive(t, text.data, text.len), 20000);
    tb_buf_free(&text);
    tok_free(t);
}

/* Gemma 3 sees whole lines as words; the engine cuts them at spaces.  A
 * few thousand bytes of real text, merged whole by the naive loop, must
 * give the same ids. */
static void test_text_gemma3(void **state)
{
    (void)state;
    size_t len;
    uint8_t *text = read_fortunes(&len);
    tok_tokenizer_t *t = load("gemma3");
    uint32_t ascii[128];
    for (int c = 32; c < 127; c++) {
        char one[2] = {(char)c, 0};
        ascii[c] = plain_id(&t->vocab, one);
    }
    size_t n = len < 3000 ? len : 3000;
    uint32_t *sym = malloc(n * sizeof *sym);
    for (size_t i = 0; i < n; i++) {
        if (text[i] < 32 || text[i] > 126)
            text[i] = ' '; /* printable ASCII only, for plain_id */
        sym[i] = ascii[text[i]];
    }
    engine_matches_naive(t, text, n, sym, n);
    free(sym);
    free(text);
    tok_free(t);
}

/* ---- the word cache ------------------------------------------------- */

/* The words "a", "ab", ... (each a prefix of the next, up to past
 * TOK_WC_SHORT bytes) with 0-6 ids each: a key read whole from a text
 * whose next bytes differ, and one from an exact copy (read through the
 * copy at a text's end), must agree and find the word's own ids alone. */
static void test_word_cache_keys(void **state)
{
    (void)state;
    enum { LONGEST = TOK_WC_SHORT + 4 };
    uint8_t text[2][LONGEST + TOK_WC_SHORT];
    for (size_t i = 0; i < sizeof text[0]; i++) {
        text[0][i] = (uint8_t)('a' + i % 26);
        text[1][i] = i < LONGEST ? text[0][i] : (uint8_t)('A' + i % 26);
    }
    tok_wordcache_t c;
    assert_int_equal(tok_wc_init(&c), 0);
    uint32_t ids[LONGEST + 1][6];
    for (size_t n = 0; n <= LONGEST; n++) {
        for (size_t j = 0; j < 6; j++)
            ids[n][j] = (uint32_t)(100 * n + j);
        tok_wc_key_t k = tok_wc_key(text[0], n, sizeof text[0]);
        tok_wc_put(&c, &k, ids[n], n % 7);
    }
    tok_ids_t out = {0};
    for (size_t n = 0; n <= LONGEST; n++) {
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, text[1], n);
        tok_wc_key_t read = tok_wc_key(text[1], n, sizeof text[1]), copied = tok_wc_key(copy, n, n);
        assert_true(read.h == copied.h && read.lo == copied.lo && read.hi == copied.hi);
        assert_true(read.h == tb_hash(copy, n)); /* the vocabulary's index hashes so */
        for (int way = 0; way < 2; way++) {
            out.len = 0;
            assert_int_equal(tok_wc_get(&c, way ? &copied : &read, &out), 1);
            assert_int_equal(out.len, n % 7);
            assert_memory_equal(out.data, ids[n], out.len * sizeof *out.data);
        }
        free(copy);
    }
    /* the same length, one byte changed at each place: not cached */
    for (size_t n = 1; n <= LONGEST; n++)
        for (size_t at = 0; at < n; at++) {
            uint8_t other[LONGEST];
            memcpy(other, text[0], n);
            other[at] ^= 1;
            tok_wc_key_t k = tok_wc_key(other, n, n);
            assert_int_equal(tok_wc_get(&c, &k, &out), 0);
        }
    free(out.data);
    tok_wc_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rank_order),
        cmocka_unit_test(test_word_cache_keys),
        cmocka_unit_test(test_leftmost_ties),
        cmocka_unit_test(test_first_merge_wins),
        cmocka_unit_test(test_ignore_merges),
        cmocka_unit_test(test_byte_fallback),
        cmocka_unit_test(test_unknown),
        cmocka_unit_test(test_byte_level_roundtrip),
        cmocka_unit_test(test_cut_at_spaces),
        cmocka_unit_test(test_premerged_characters),
        cmocka_unit_test(test_premerged_characters_by_id),
        cmocka_unit_test(test_text_gemma3),
        cmocka_unit_test(test_long_runs_llama3),
        cmocka_unit_test(test_long_runs_gemma3),
        cmocka_unit_test(test_real_words_llama3),
        cmocka_unit_test(test_wide_words_llama3),
        cmocka_unit_test(test_cache_growth_llama3),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
