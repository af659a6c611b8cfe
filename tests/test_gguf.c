/* Tests of the GGUF reader and writer (tok/gguf.c).
 *
 * No real GGUF file can be fetched here, so real vocabularies (Llama 3,
 * Mistral 7B, Qwen 3 tokenizer.json) are written as GGUF with tok_gguf_write
 * and read back: the vocabulary checksum, the special ids and the ids of
 * every line of the conformance sample must equal the source tokenizer's.
 * Small GGUF files built byte by byte here check the decoding of both
 * models and that every kind of corruption (each truncation, absurd
 * lengths and counts, wrong types) is refused with the file, key and
 * byte offset named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "support.h"

#include "../base/file.h"
#include "../base/utf8.h"
#include "../tok/tok_internal.h"

#define SAMPLE "data/fixtures/conform-sample.txt"

static char tmpdir[256];


/* ---- round trips of real vocabularies ------------------------------- */

static void same_ids_on_sample(tok_tokenizer_t *a, tok_tokenizer_t *b,
                               const char *name)
{
    test_need_file(SAMPLE);
    uint8_t *text;
    size_t len;
    tb_err_t err;
    assert_int_equal(tb_read_file(SAMPLE, &text, &len, &err), 0);
    tok_ids_t x = {0}, y = {0};
    size_t lineno = 0, compared = 0;
    for (size_t i = 0; i < len; lineno++) {
        const uint8_t *nl = memchr(text + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - text) : len;
        const uint8_t *s = text + i;
        size_t n = end - i;
        i = end + 1;
        if (tb_utf8_validate(s, n) != n)
            continue;
        x.len = y.len = 0;
        /* Special-token text is parsed by both: the default of
         * tokenizer.json, asked of the GGUF (llama.cpp's default is not). */
        if (tok_encode_ex(a, s, n, TOK_PARSE_SPECIAL, &x, &err))
            fail_msg("%s json: line %zu: %s", name, lineno + 1, err.msg);
        if (tok_encode_ex(b, s, n, TOK_PARSE_SPECIAL, &y, &err))
            fail_msg("%s gguf: line %zu: %s", name, lineno + 1, err.msg);
        if (x.len != y.len || memcmp(x.data, y.data, x.len * sizeof *x.data))
            fail_msg("%s: line %zu: GGUF ids differ from tokenizer.json's",
                     name, lineno + 1);
        compared++;
    }
    assert_true(compared > 100);
    free(x.data);
    free(y.data);
    free(text);
}

static void round_trip(const char *json, const char *pre, const char *name)
{
    char path[512], a_sum[65], b_sum[65];
    snprintf(path, sizeof path, "%s/%s.gguf", tmpdir, name);
    tok_tokenizer_t *a = test_load(json);
    tb_err_t err;
    if (tok_gguf_write(a, path, pre, &err))
        fail_msg("%s", err.msg);
    tok_tokenizer_t *b = test_load(path);
    assert_int_equal(tok_format(b), TOK_FORMAT_GGUF);
    const tok_vocab_t *va = tok_vocab(a), *vb = tok_vocab(b);
    assert_int_equal(va->size, vb->size);
    tok_vocab_checksum(va, a_sum);
    tok_vocab_checksum(vb, b_sum);
    assert_string_equal(a_sum, b_sum);
    assert_int_equal(va->bos, vb->bos);
    assert_int_equal(va->eos, vb->eos);
    assert_int_equal(va->unk, vb->unk);
    assert_int_equal(va->pad, vb->pad);
    assert_string_equal(tok_model_name(a), tok_model_name(b));
    same_ids_on_sample(a, b, name);
    tok_free(a);
    tok_free(b);
    unlink(path);
}

static void llama3_round_trip(void **state)
{
    (void)state;
    round_trip("data/cache/llama3/tokenizer.json", "llama-bpe", "llama3");
}

static void mistral_round_trip(void **state)
{
    (void)state;
    round_trip("data/cache/mistral/tokenizer.json", NULL, "mistral");
}

static void qwen3_round_trip(void **state)
{
    (void)state;
    round_trip("data/cache/qwen3/tokenizer.json", "qwen2", "qwen3");
}

/* ---- small files built here ----------------------------------------- */

enum { T_U32 = 4, T_I32 = 5, T_F32 = 6, T_BOOL = 7, T_STR = 8, T_ARR = 9 };

typedef struct {
    uint8_t d[1 << 16];
    size_t n, nkv_at;
    uint64_t nkv;
    size_t tokens_at; /* offset of the tokens array's element type */
} gb_t;

static void gb_put(gb_t *g, const void *p, size_t n)
{
    assert_true(g->n + n <= sizeof g->d);
    memcpy(g->d + g->n, p, n);
    g->n += n;
}

static void gb_le(gb_t *g, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t b = (uint8_t)(v >> (8 * i));
        gb_put(g, &b, 1);
    }
}

static void gb_str(gb_t *g, const char *s, size_t n)
{
    gb_le(g, n, 8);
    gb_put(g, s, n);
}

static void gb_key(gb_t *g, const char *key, uint32_t type)
{
    gb_str(g, key, strlen(key));
    gb_le(g, type, 4);
    g->nkv++;
}

static void gb_patch(gb_t *g, size_t at, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        g->d[at + i] = (uint8_t)(v >> (8 * i));
}

/* GPT-2 alphabet spelling of raw bytes. */
static size_t gpt2_spell(const uint8_t *s, size_t n, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += tb_utf8_encode(tok_gpt2_byte_to_cp(s[i]), (uint8_t *)out + k);
    return k;
}

typedef struct {
    uint32_t version;
    const char *model;       /* "gpt2" or "llama" */
    const char *pre;         /* NULL: no key */
    const char *merge;       /* the one merge of the gpt2 model */
    int tokens_as_int32;     /* wrong element type for the tokens */
    int64_t eos;             /* -1: no key */
} small_t;

static const small_t GPT2 = {3, "gpt2", "gpt-2", "a b", 0, 256};
static const small_t LLAMA = {3, "llama", NULL, NULL, 0, 2};

/* gpt2: the 256 bytes, then "ab" (id 256).  llama: <unk> <s> </s>, the 256
 * byte pieces (ids 3..258), then ▁ a b ab ▁ab (ids 259..263) scored so
 * that "ab" merges before "▁ab". */
static void build_small(gb_t *g, const small_t *o)
{
    memset(g, 0, sizeof *g);
    int spm = !strcmp(o->model, "llama");
    gb_put(g, "GGUF", 4);
    gb_le(g, o->version, 4);
    gb_le(g, 0, 8);
    g->nkv_at = g->n;
    gb_le(g, 0, 8);
    gb_key(g, "general.architecture", T_STR);
    gb_str(g, "llama", 5);
    gb_key(g, "tokenizer.ggml.model", T_STR);
    gb_str(g, o->model, strlen(o->model));
    if (o->pre) {
        gb_key(g, "tokenizer.ggml.pre", T_STR);
        gb_str(g, o->pre, strlen(o->pre));
    }
    static const char *const spm_words[] = {"\xe2\x96\x81", "a", "b", "ab",
                                            ("\xe2\x96\x81" "ab")};
    uint32_t n = spm ? 3 + 256 + 5 : 257;
    uint32_t types[300];
    float scores[300];
    gb_key(g, "tokenizer.ggml.tokens", T_ARR);
    g->tokens_at = g->n;
    gb_le(g, o->tokens_as_int32 ? T_I32 : T_STR, 4);
    gb_le(g, n, 8);
    for (uint32_t id = 0; id < n; id++) {
        char buf[64];
        size_t len;
        types[id] = 1;
        scores[id] = 0;
        if (spm && id < 3) {
            static const char *const ctl[] = {"<unk>", "<s>", "</s>"};
            len = (size_t)snprintf(buf, sizeof buf, "%s", ctl[id]);
            types[id] = id ? 3 : 2;
        } else if (spm && id < 259) {
            len = (size_t)snprintf(buf, sizeof buf, "<0x%02X>", id - 3);
            types[id] = 6;
        } else if (spm) {
            len = (size_t)snprintf(buf, sizeof buf, "%s", spm_words[id - 259]);
            scores[id] = id == 262 ? -1.0f : id == 263 ? -2.0f : -10.0f;
        } else {
            uint8_t raw[2] = {(uint8_t)id, 'b'};
            len = id < 256 ? gpt2_spell(raw, 1, buf) : gpt2_spell((const uint8_t *)"ab", 2, buf);
        }
        if (o->tokens_as_int32)
            gb_le(g, id, 4);
        else
            gb_str(g, buf, len);
    }
    if (spm) {
        gb_key(g, "tokenizer.ggml.scores", T_ARR);
        gb_le(g, T_F32, 4);
        gb_le(g, n, 8);
        for (uint32_t id = 0; id < n; id++) {
            uint32_t bits;
            memcpy(&bits, &scores[id], 4);
            gb_le(g, bits, 4);
        }
    }
    gb_key(g, "tokenizer.ggml.token_type", T_ARR);
    gb_le(g, T_I32, 4);
    gb_le(g, n, 8);
    for (uint32_t id = 0; id < n; id++)
        gb_le(g, types[id], 4);
    if (o->merge) {
        gb_key(g, "tokenizer.ggml.merges", T_ARR);
        gb_le(g, T_STR, 4);
        gb_le(g, 1, 8);
        gb_str(g, o->merge, strlen(o->merge));
    }
    if (o->eos >= 0) {
        gb_key(g, "tokenizer.ggml.eos_token_id", T_U32);
        gb_le(g, (uint64_t)o->eos, 4);
    }
    gb_patch(g, g->nkv_at, g->nkv, 8);
}

static void write_bytes(const char *path, const uint8_t *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(d, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static tok_tokenizer_t *load_bytes(const uint8_t *d, size_t n, char *path,
                                   tb_err_t *err)
{
    snprintf(path, 512, "%s/small.gguf", tmpdir);
    write_bytes(path, d, n);
    return tok_load(path, err);
}

static void encode_is(tok_tokenizer_t *t, const char *text,
                      const uint32_t *want, size_t n)
{
    tok_ids_t ids = {0};
    tb_err_t err;
    if (tok_encode(t, (const uint8_t *)text, strlen(text), &ids, &err))
        fail_msg("encode \"%s\": %s", text, err.msg);
    if (ids.len != n || memcmp(ids.data, want, n * sizeof *want)) {
        char got[256] = "";
        for (size_t i = 0; i < ids.len && strlen(got) < 200; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), " %u",
                     ids.data[i]);
        fail_msg("encode \"%s\" gave%s", text, got);
    }
    free(ids.data);
}

/* Builds the small file of `o`, writes it to `path` and loads it; fails
 * the test with the loader's message if it is refused. */
static tok_tokenizer_t *load_small(const small_t *o, char *path)
{
    gb_t *g = malloc(sizeof *g);
    assert_non_null(g);
    build_small(g, o);
    tb_err_t err;
    tok_tokenizer_t *t = load_bytes(g->d, g->n, path, &err);
    free(g);
    if (!t)
        fail_msg("%s", err.msg);
    return t;
}

static void small_gpt2_file(void **state)
{
    (void)state;
    char path[512];
    tok_tokenizer_t *t = load_small(&GPT2, path);
    const tok_vocab_t *v = tok_vocab(t);
    assert_int_equal(v->size, 257);
    assert_int_equal(tok_vocab_find(v, (const uint8_t *)"ab", 2), 256);
    assert_int_equal(tok_vocab_find(v, (const uint8_t *)" ", 1), ' ');
    assert_int_equal(v->eos, 256);
    const uint32_t want[] = {256, 256, ' ', 256, 'c'};
    encode_is(t, "abab abc", want, 5);
    tok_free(t);
    unlink(path);
}

static void small_llama_file(void **state)
{
    (void)state;
    char path[512];
    tok_tokenizer_t *t = load_small(&LLAMA, path);
    const tok_vocab_t *v = tok_vocab(t);
    assert_int_equal(v->size, 264);
    assert_int_equal(v->kind[0], TOK_UNKNOWN);
    assert_int_equal(v->kind[3 + 'a'], TOK_BYTE);
    assert_int_equal(tok_vocab_find(v, (const uint8_t *)" ab", 3), 263);
    const uint32_t two[] = {263, 263};
    encode_is(t, "ab ab", two, 2);
    const uint32_t fallback[] = {259, 3 + 'c'};
    encode_is(t, "c", fallback, 2);
    /* written again, with its own scores (it has no merges): the same ids */
    char again[512];
    snprintf(again, sizeof again, "%s/again.gguf", tmpdir);
    tb_err_t err;
    if (tok_gguf_write(t, again, NULL, &err))
        fail_msg("%s", err.msg);
    tok_tokenizer_t *b = test_load(again);
    encode_is(b, "ab ab", two, 2);
    encode_is(b, "c", fallback, 2);
    tok_free(b);
    tok_free(t);
    unlink(again);
    unlink(path);
}

/* A tiktoken vocabulary has no merges for a GGUF file to list. */
static void tiktoken_not_exported(void **state)
{
    (void)state;
    test_need_file(TEST_CL100K);
    tok_tokenizer_t *t = test_load(TEST_CL100K);
    char path[512];
    snprintf(path, sizeof path, "%s/cl100k.gguf", tmpdir);
    tb_err_t err;
    assert_int_equal(tok_gguf_write(t, path, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "has none"));
    assert_int_equal(access(path, F_OK), -1);
    tok_free(t);
}

/* Every proper prefix of a valid file is refused, naming file and byte. */
static void every_truncation_refused(void **state)
{
    (void)state;
    gb_t *g = malloc(sizeof *g);
    build_small(g, &LLAMA);
    for (size_t n = 0; n < g->n; n += n < 400 ? 1 : 7) {
        char path[512];
        tb_err_t err;
        tok_tokenizer_t *t = load_bytes(g->d, n, path, &err);
        if (t)
            fail_msg("a prefix of %zu of %zu bytes was accepted", n, g->n);
        if (!strstr(err.msg, path))
            fail_msg("prefix %zu: message lacks the file: %s", n, err.msg);
        if (n > 24 && !strstr(err.msg, "byte"))
            fail_msg("prefix %zu: message lacks the offset: %s", n, err.msg);
    }
    free(g);
}

/* Random byte corruptions of a valid file: each load either succeeds or
 * fails with a message naming the file; under SANITIZE=1 nothing may read
 * out of bounds. */
static void random_corruptions(void **state)
{
    (void)state;
    gb_t *g = malloc(sizeof *g), *c = malloc(sizeof *c);
    srand(20261121);
    int refused = 0;
    for (int round = 0; round < 1500; round++) {
        build_small(g, round % 2 ? &LLAMA : &GPT2);
        memcpy(c, g, sizeof *g);
        for (int k = 0, n = 1 + rand() % 4; k < n; k++) {
            size_t at = (size_t)rand() % c->n;
            /* mostly small changes of length and count bytes */
            c->d[at] = (uint8_t)(rand() % 3 ? c->d[at] ^ (1u << (rand() % 8))
                                            : (unsigned)rand() % 256u);
        }
        char path[512];
        tb_err_t err;
        tok_tokenizer_t *t = load_bytes(c->d, c->n, path, &err);
        if (!t && !strstr(err.msg, path))
            fail_msg("round %d: message lacks the file: %s", round, err.msg);
        refused += !t;
        tok_free(t);
    }
    assert_true(refused > 100);
    free(g);
    free(c);
}

static void expect_refused(gb_t *g, const char *what, const char *want1,
                           const char *want2)
{
    char path[512];
    tb_err_t err;
    tok_tokenizer_t *t = load_bytes(g->d, g->n, path, &err);
    if (t)
        fail_msg("%s: accepted", what);
    if (!strstr(err.msg, path) || !strstr(err.msg, want1) ||
        (want2 && !strstr(err.msg, want2)))
        fail_msg("%s: message '%s' lacks '%s' / '%s'", what, err.msg, want1,
                 want2 ? want2 : "");
}

static void corrupt_files_refused(void **state)
{
    (void)state;
    gb_t *g = malloc(sizeof *g);
    small_t o;

    build_small(g, &GPT2); /* first token's length: 2^60 */
    gb_patch(g, g->tokens_at + 12, (uint64_t)1 << 60, 8);
    expect_refused(g, "huge string", "key 'tokenizer.ggml.tokens', byte",
                   "1152921504606846976 bytes");

    build_small(g, &GPT2); /* token count: 2^60 */
    gb_patch(g, g->tokens_at + 4, (uint64_t)1 << 60, 8);
    expect_refused(g, "huge array", "key 'tokenizer.ggml.tokens', byte",
                   "cannot fit");

    build_small(g, &GPT2);
    gb_patch(g, g->nkv_at, (uint64_t)1 << 60, 8);
    expect_refused(g, "huge metadata count", "byte 16", "cannot fit");

    build_small(g, &GPT2);
    gb_patch(g, g->tokens_at, 77, 4);
    expect_refused(g, "bad element type", "tokenizer.ggml.tokens",
                   "unknown element type 77");

    o = GPT2;
    o.tokens_as_int32 = 1;
    build_small(g, &o);
    expect_refused(g, "int tokens", "key 'tokenizer.ggml.tokens', byte",
                   "want an array of string, found array of int32");

    o = GPT2;
    o.model = "rwkv";
    build_small(g, &o);
    expect_refused(g, "model", "tokenizer.ggml.model", "'rwkv' is not supported");

    o = GPT2;
    o.pre = "mystery";
    build_small(g, &o);
    expect_refused(g, "pre", "tokenizer.ggml.pre", "'mystery' is not supported");

    o = GPT2;
    o.merge = "a c";
    build_small(g, &o);
    expect_refused(g, "merge", "key 'tokenizer.ggml.merges', byte",
                   "does not join");

    o = GPT2;
    o.eos = 999;
    build_small(g, &o);
    expect_refused(g, "eos", "tokenizer.ggml.eos_token_id", "999 is not in");

    o = GPT2;
    o.version = 1;
    build_small(g, &o);
    expect_refused(g, "v1", "byte 4", "version 1");
    o.version = 0x03000000;
    build_small(g, &o);
    expect_refused(g, "big-endian", "byte 4", "big-endian");

    o = LLAMA;
    build_small(g, &o); /* byte piece <0x00> spelled <0xZZ> */
    uint8_t *p = memmem(g->d, g->n, "<0x00>", 6);
    assert_non_null(p);
    memcpy(p, "<0xZZ>", 6);
    expect_refused(g, "byte piece", "key 'tokenizer.ggml.tokens', byte",
                   "not <0xNN>");

    build_small(g, &LLAMA); /* a token type of 9 */
    p = memmem(g->d, g->n, "tokenizer.ggml.token_type", 25);
    assert_non_null(p);
    gb_patch(g, (size_t)(p - g->d) + 25 + 4 + 12, 9, 4);
    expect_refused(g, "token type", "key 'tokenizer.ggml.token_type', byte",
                   "type 9");
    char path[512];
    snprintf(path, sizeof path, "%s/small.gguf", tmpdir);
    unlink(path);
    free(g);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tokbench-gguf-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

/* A failed assertion skips a test's own clean-up: remove what it left. */
static int teardown(void **state)
{
    (void)state;
    static const char *const names[] = {"small.gguf", "llama3.gguf",
                                        "mistral.gguf", "qwen3.gguf"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", tmpdir, names[i]);
        unlink(p);
    }
    return rmdir(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(small_gpt2_file),
        cmocka_unit_test(small_llama_file),
        cmocka_unit_test(tiktoken_not_exported),
        long_unit_test(every_truncation_refused),
        cmocka_unit_test(corrupt_files_refused),
        cmocka_unit_test(random_corruptions),
        cmocka_unit_test(llama3_round_trip),
        cmocka_unit_test(mistral_round_trip),
        cmocka_unit_test(qwen3_round_trip),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
