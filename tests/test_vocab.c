/* Tests of tok/vocab: building, lookups, limits, the GPT-2 byte alphabet
 * (checked over every key of the real Llama 3 vocabulary). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "../tok/vocab.h"

static void build_and_look_up(void **state)
{
    (void)state;
    tb_err_t err;
    tok_vocab_builder_t *b = tok_vocab_builder_new();
    assert_int_equal(tok_vocab_add(b, 3, (const uint8_t *)"ab", 2, -1.5f, TOK_NORMAL, 0, &err), 0);
    assert_int_equal(tok_vocab_add(b, 0, (const uint8_t *)"a", 1, 0, TOK_NORMAL, 0, &err), 0);
    assert_int_equal(tok_vocab_add(b, 1, (const uint8_t *)"a", 1, 0, TOK_BYTE, 0, &err), 0);
    assert_int_equal(tok_vocab_add(b, 5, (const uint8_t *)"\0x", 2, 0, TOK_NORMAL, 0, &err), 0);
    tok_vocab_t v;
    assert_int_equal(tok_vocab_finish(b, &v, &err), 0);
    assert_int_equal(v.size, 6);
    assert_int_equal(tok_vocab_find(&v, (const uint8_t *)"a", 1), 0); /* lowest id */
    assert_int_equal(v.byte_id['a'], 1);                              /* byte piece */
    assert_int_equal(tok_vocab_find(&v, (const uint8_t *)"ab", 2), 3);
    assert_int_equal(tok_vocab_find(&v, (const uint8_t *)"\0x", 2), 5);
    assert_int_equal(tok_vocab_find(&v, (const uint8_t *)"b", 1), -1);
    assert_int_equal(v.kind[2], TOK_UNUSED);
    assert_int_equal(v.kind[4], TOK_UNUSED);
    size_t len;
    tok_vocab_token(&v, 2, &len);
    assert_int_equal(len, 0);
    assert_true(v.score[3] == -1.5f);
    tok_vocab_free(&v);
}

static void duplicate_id_and_limits_are_refused(void **state)
{
    (void)state;
    tb_err_t err;
    tok_vocab_builder_t *b = tok_vocab_builder_new();
    assert_int_equal(tok_vocab_add(b, TOK_VOCAB_MAX_SIZE, (const uint8_t *)"x", 1, 0, TOK_NORMAL, 0, &err), -1);
    assert_non_null(strstr(err.msg, "past the limit"));
    static uint8_t big[TOK_TOKEN_MAX_LEN + 1];
    assert_int_equal(tok_vocab_add(b, 1, big, sizeof big, 0, TOK_NORMAL, 0, &err), -1);
    assert_non_null(strstr(err.msg, "over the limit"));
    assert_int_equal(tok_vocab_add(b, 7, (const uint8_t *)"x", 1, 0, TOK_NORMAL, 0, &err), 0);
    assert_int_equal(tok_vocab_add(b, 7, (const uint8_t *)"y", 1, 0, TOK_NORMAL, 0, &err), 0);
    tok_vocab_t v;
    assert_int_equal(tok_vocab_finish(b, &v, &err), -1);
    assert_non_null(strstr(err.msg, "token id 7 is given twice"));
}

/* No tokens, and tokens with no bytes: a vocabulary with no pool (the
 * builder's arrays are NULL; clang UBSan, found by fuzz_tok). */
static void empty_vocabularies(void **state)
{
    (void)state;
    tb_err_t err;
    tok_vocab_t v;
    tok_vocab_builder_t *b = tok_vocab_builder_new();
    assert_int_equal(tok_vocab_finish(b, &v, &err), 0);
    assert_int_equal(v.size, 0);
    tok_vocab_free(&v);
    b = tok_vocab_builder_new();
    assert_int_equal(tok_vocab_add(b, 1, (const uint8_t *)"", 0, 0, TOK_NORMAL, 0, &err), 0);
    assert_int_equal(tok_vocab_add(b, 0, (const uint8_t *)"", 0, 0, TOK_CONTROL, 0, &err), 0);
    assert_int_equal(tok_vocab_finish(b, &v, &err), 0);
    size_t len = 1;
    tok_vocab_token(&v, 1, &len);
    assert_int_equal(v.size, 2);
    assert_int_equal(len, 0);
    assert_int_equal(v.kind[0], TOK_CONTROL);
    tok_vocab_free(&v);
}

/* A builder given bounds writes ascending ids into the vocabulary's own
 * block and spills into its lists at the first id out of order or past a
 * bound: either way the vocabulary (or the refusal) is the one a builder
 * without bounds makes. */
typedef struct {
    uint32_t id;
    const char *s;
    tok_kind_t kind;
} add_t;

static int build(const add_t *adds, size_t n, size_t tokens, size_t bytes,
                 tok_vocab_t *v, tb_err_t *err)
{
    tok_vocab_builder_t *b = tok_vocab_builder_new();
    if (tokens || bytes)
        tok_vocab_builder_reserve(b, tokens, bytes);
    for (size_t i = 0; i < n; i++)
        if (tok_vocab_add(b, adds[i].id, (const uint8_t *)adds[i].s, strlen(adds[i].s),
                          -(float)i, adds[i].kind, adds[i].kind == TOK_CONTROL, err)) {
            tok_vocab_builder_free(b);
            return -1;
        }
    return tok_vocab_finish(b, v, err);
}

static void same_vocabulary(const tok_vocab_t *a, const tok_vocab_t *b)
{
    assert_int_equal(a->size, b->size);
    for (uint32_t id = 0; id < a->size; id++) {
        size_t la, lb;
        const uint8_t *sa = tok_vocab_token(a, id, &la), *sb = tok_vocab_token(b, id, &lb);
        assert_int_equal(la, lb);
        assert_memory_equal(sa, sb, la);
        assert_true(a->score[id] == b->score[id]);
        assert_int_equal(a->kind[id], b->kind[id]);
        assert_int_equal(a->special[id], b->special[id]);
        assert_int_equal(tok_vocab_find(a, sa, la), tok_vocab_find(b, sb, lb));
    }
    for (int c = 0; c < 256; c++)
        assert_int_equal(a->byte_id[c], b->byte_id[c]);
}

static void reserved_builders_agree(void **state)
{
    (void)state;
    static const add_t ascending[] = {{0, "a", TOK_NORMAL}, {1, "", TOK_UNUSED},
                                      {3, "bc", TOK_NORMAL}, {4, "a", TOK_BYTE},
                                      {9, "<s>", TOK_CONTROL}};
    static const add_t unordered[] = {{0, "a", TOK_NORMAL}, {3, "bc", TOK_NORMAL},
                                      {2, "d", TOK_NORMAL}, {5, "ef", TOK_NORMAL}};
    static const add_t twice[] = {{0, "a", TOK_NORMAL}, {3, "bc", TOK_NORMAL},
                                  {3, "d", TOK_NORMAL}};
    static const add_t twice_later[] = {{0, "a", TOK_NORMAL}, {3, "bc", TOK_NORMAL},
                                        {1, "d", TOK_NORMAL}, {3, "e", TOK_NORMAL}};
    const struct {
        const add_t *adds;
        size_t n;
    } cases[] = {{ascending, 5}, {unordered, 4}, {twice, 3}, {twice_later, 4},
                 {ascending, 0}};
    /* room for all, too few ids (9 is past 8), too few bytes */
    const size_t bounds[][2] = {{16, 64}, {8, 64}, {16, 3}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        tb_err_t e0, e1;
        tok_vocab_t v0, v1;
        int rc0 = build(cases[c].adds, cases[c].n, 0, 0, &v0, &e0);
        for (size_t k = 0; k < sizeof bounds / sizeof *bounds; k++) {
            int rc1 = build(cases[c].adds, cases[c].n, bounds[k][0], bounds[k][1], &v1, &e1);
            assert_int_equal(rc0, rc1);
            if (rc0) {
                assert_string_equal(e0.msg, e1.msg);
                continue;
            }
            same_vocabulary(&v0, &v1);
            tok_vocab_free(&v1);
        }
        if (!rc0)
            tok_vocab_free(&v0);
    }
}

static void checksum_depends_on_bytes_and_kinds(void **state)
{
    (void)state;
    tb_err_t err;
    char sums[3][65];
    for (int variant = 0; variant < 3; variant++) {
        tok_vocab_builder_t *b = tok_vocab_builder_new();
        tok_vocab_add(b, 0, (const uint8_t *)(variant == 1 ? "ab" : "ac"), 2, 0,
                      variant == 2 ? TOK_CONTROL : TOK_NORMAL, 0, &err);
        tok_vocab_t v;
        assert_int_equal(tok_vocab_finish(b, &v, &err), 0);
        tok_vocab_checksum(&v, sums[variant]);
        tok_vocab_free(&v);
    }
    assert_string_not_equal(sums[0], sums[1]);
    assert_string_not_equal(sums[0], sums[2]);
}

static void gpt2_alphabet_is_a_bijection(void **state)
{
    (void)state;
    int seen[0x200] = {0};
    for (int b = 0; b < 256; b++) {
        uint32_t cp = tok_gpt2_byte_to_cp((uint8_t)b);
        assert_true(cp < 0x200);
        assert_int_equal(seen[cp]++, 0);
        assert_int_equal(tok_gpt2_cp_to_byte(cp), b);
    }
    assert_int_equal(tok_gpt2_byte_to_cp('A'), 'A');
    assert_int_equal(tok_gpt2_byte_to_cp(' '), 0x120); /* the familiar Ġ */
}

/* Every Llama 3 vocabulary key is in the GPT-2 alphabet, and the 256
 * single-byte strings all occur among the decoded keys. */
static void llama3_keys_decode_to_raw_bytes(void **state)
{
    (void)state;
    const char *path = "data/cache/llama3/tokenizer.json";
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root)
        fail_msg("%s: %s (run 'make data')", path, jerr.text);
    json_t *vocab = json_object_get(json_object_get(root, "model"), "vocab");
    assert_true(json_is_object(vocab));
    int single[256] = {0};
    const char *key;
    json_t *val;
    json_object_foreach(vocab, key, val) {
        uint8_t out[256];
        size_t n = strlen(key);
        assert_true(n <= sizeof out);
        long got = tok_gpt2_decode((const uint8_t *)key, n, out);
        if (got < 0)
            fail_msg("key '%s' is outside the GPT-2 alphabet", key);
        if (got == 1)
            single[out[0]] = 1;
    }
    for (int b = 0; b < 256; b++)
        assert_int_equal(single[b], 1);
    json_decref(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(build_and_look_up),
        cmocka_unit_test(duplicate_id_and_limits_are_refused),
        cmocka_unit_test(empty_vocabularies),
        cmocka_unit_test(reserved_builders_agree),
        cmocka_unit_test(checksum_depends_on_bytes_and_kinds),
        cmocka_unit_test(gpt2_alphabet_is_a_bijection),
        cmocka_unit_test(llama3_keys_decode_to_raw_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
