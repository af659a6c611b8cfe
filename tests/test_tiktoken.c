/* Tests of the tiktoken loader (tok/tiktoken.c) on the real cl100k and
 * o200k rank files: both file forms give the same vocabulary, the special
 * tokens are where the file says, ids agree with the npm tiktoken package
 * on text built from the vocabulary itself, and corrupt files are refused
 * with a message naming the file and line. */
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
#include <jansson.h>

#include "../base/file.h"
#include "../base/utf8.h"
#include "../tok/tokenizer.h"

#define CL100K "data/cache/cl100k/cl100k_base.json"
#define O200K "data/cache/o200k/o200k_base.json"

static char tmpdir[256];


static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* The npm JSON's bpe_ranks, rewritten in the plain form "BASE64 RANK". */
static void write_plain_form(const char *json_path, const char *out)
{
    json_error_t je;
    json_t *root = json_load_file(json_path, 0, &je);
    assert_non_null(root);
    const char *ranks = json_string_value(json_object_get(root, "bpe_ranks"));
    assert_non_null(ranks);
    FILE *f = fopen(out, "w");
    assert_non_null(f);
    assert_int_equal(strncmp(ranks, "! ", 2), 0);
    char *copy = strdup(ranks + 2), *save = NULL;
    long rank = strtol(strtok_r(copy, " ", &save), NULL, 10);
    for (char *tok = strtok_r(NULL, " ", &save); tok;
         tok = strtok_r(NULL, " ", &save))
        fprintf(f, "%s %ld\n", tok, rank++);
    free(copy);
    fclose(f);
    json_decref(root);
}

static void plain_form_matches_json(const char *json_path, const char *name)
{
    char plain[512], sum_json[65], sum_plain[65];
    snprintf(plain, sizeof plain, "%s/%s.tiktoken", tmpdir, name);
    write_plain_form(json_path, plain);
    tok_tokenizer_t *a = test_load(json_path), *b = test_load(plain);
    assert_int_equal(tok_vocab(a)->size, tok_vocab(b)->size);
    tok_vocab_checksum(tok_vocab(a), sum_json);
    tok_vocab_checksum(tok_vocab(b), sum_plain);
    assert_string_equal(sum_json, sum_plain);
    assert_int_equal(tok_format(b), TOK_FORMAT_TIKTOKEN);
    tok_free(a);
    tok_free(b);
    unlink(plain);
}

static void cl100k_plain_equals_json(void **state)
{
    (void)state;
    plain_form_matches_json(CL100K, "cl100k_base");
}

static void o200k_plain_equals_json(void **state)
{
    (void)state;
    plain_form_matches_json(O200K, "o200k_base");
}

/* Every special token the JSON lists is a control token with its text, and
 * every other id is either unused or an ordinary token; all 256 bytes are
 * tokens (byte-level BPE needs them). */
static void specials_and_bytes(const char *path)
{
    tok_tokenizer_t *t = test_load(path);
    const tok_vocab_t *v = tok_vocab(t);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    json_t *sp = json_object_get(root, "special_tokens");
    const char *text;
    json_t *rank;
    size_t nspecial = 0;
    json_object_foreach(sp, text, rank) {
        uint32_t id = (uint32_t)json_integer_value(rank);
        assert_true(id < v->size);
        assert_int_equal(v->kind[id], TOK_CONTROL);
        size_t len;
        const uint8_t *s = tok_vocab_token(v, id, &len);
        assert_int_equal(len, strlen(text));
        assert_memory_equal(s, text, len);
        nspecial++;
    }
    size_t control = 0;
    for (uint32_t id = 0; id < v->size; id++) {
        control += v->kind[id] == TOK_CONTROL;
        assert_true(v->kind[id] == TOK_NORMAL || v->kind[id] == TOK_CONTROL ||
                    v->kind[id] == TOK_UNUSED);
    }
    assert_int_equal(control, nspecial);
    for (int b = 0; b < 256; b++)
        assert_true(v->byte_id[b] >= 0);
    json_decref(root);
    tok_free(t);
}

static void cl100k_specials(void **state)
{
    (void)state;
    specials_and_bytes(CL100K);
}

static void o200k_specials(void **state)
{
    (void)state;
    specials_and_bytes(O200K);
}

/* Text made of the vocabulary's own tokens, glued together so that the
 * merges have to find them again, encoded here and by the npm package. */
static void matches_reference(const char *path)
{
    tok_tokenizer_t *t = test_load(path);
    const tok_vocab_t *v = tok_vocab(t);
    char in[512], cmd[1024];
    snprintf(in, sizeof in, "%s/lines.txt", tmpdir);
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    size_t nlines = 0, k = 0;
    for (uint32_t id = 7; id < v->size; id += 41) {
        size_t len;
        const uint8_t *s = tok_vocab_token(v, id, &len);
        if (v->kind[id] != TOK_NORMAL || tb_utf8_validate(s, len) != len ||
            memchr(s, '\n', len))
            continue;
        fwrite(s, 1, len, f);
        if (++k % 12 == 0) {
            fputc('\n', f);
            nlines++;
        }
    }
    fputc('\n', f);
    nlines++;
    fclose(f);
    snprintf(cmd, sizeof cmd, "node scripts/ref/ref.js tiktoken %s < %s", path,
             in);
    FILE *ref = popen(cmd, "r");
    assert_non_null(ref);
    uint8_t *text;
    size_t len;
    tb_err_t err;
    assert_int_equal(tb_read_file(in, &text, &len, &err), 0);
    char *line = NULL;
    size_t cap = 0, at = 0, checked = 0;
    tok_ids_t ids = {0};
    while (at < len && getline(&line, &cap, ref) > 0) {
        const uint8_t *nl = memchr(text + at, '\n', len - at);
        size_t end = (size_t)(nl - text);
        ids.len = 0;
        if (tok_encode(t, text + at, end - at, &ids, &err))
            fail_msg("%s: line %zu: %s", path, checked + 1, err.msg);
        char *p = line;
        for (size_t i = 0; i < ids.len; i++) {
            char *q;
            unsigned long want = strtoul(p, &q, 10);
            if (q == p || want != ids.data[i])
                fail_msg("%s: line %zu: id %zu is %u, tiktoken gives %s", path,
                         checked + 1, i, ids.data[i], p);
            p = q;
        }
        while (*p == ' ')
            p++;
        if (*p != '\n')
            fail_msg("%s: line %zu: tiktoken gives more ids: %s", path,
                     checked + 1, p);
        at = end + 1;
        checked++;
    }
    assert_int_equal(pclose(ref), 0);
    assert_int_equal(checked, nlines);
    free(line);
    free(ids.data);
    free(text);
    unlink(in);
    tok_free(t);
}

static void cl100k_matches_reference(void **state)
{
    (void)state;
    matches_reference(CL100K);
}

static void o200k_matches_reference(void **state)
{
    (void)state;
    matches_reference(O200K);
}

/* ---- corrupt files -------------------------------------------------- */

/* A small valid plain file: the 256 single bytes, then "ab" and "abc". */
static size_t small_plain(char *buf, size_t size, const char *extra)
{
    static const char b64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = 0;
    for (int b = 0; b < 256; b++)
        n += (size_t)snprintf(buf + n, size - n, "%c%c== %d\n", b64[b >> 2],
                              b64[(b & 3) << 4], b);
    n += (size_t)snprintf(buf + n, size - n, "YWI= 256\nYWJj 257\n%s", extra);
    return n;
}

static void expect_refused(const char *name, const char *body, size_t len,
                           const char *want1, const char *want2)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    write_file(path, body, len);
    tb_err_t err;
    tok_tokenizer_t *t = tok_load(path, &err);
    if (t)
        fail_msg("%s was accepted", name);
    if (!strstr(err.msg, path) || !strstr(err.msg, want1) ||
        (want2 && !strstr(err.msg, want2)))
        fail_msg("%s: message '%s' lacks '%s' / '%s'", name, err.msg, want1,
                 want2 ? want2 : "");
    unlink(path);
}

static void small_valid_file_loads(void **state)
{
    (void)state;
    char buf[8192], path[512];
    size_t n = small_plain(buf, sizeof buf, "");
    snprintf(path, sizeof path, "%s/r50k_base.tiktoken", tmpdir);
    write_file(path, buf, n);
    tok_tokenizer_t *t = test_load(path);
    const tok_vocab_t *v = tok_vocab(t);
    /* 258 ranks, then r50k's <|endoftext|> at 50256 */
    assert_int_equal(v->size, 50257);
    assert_int_equal(tok_vocab_find(v, (const uint8_t *)"abc", 3), 257);
    assert_int_equal(v->kind[50256], TOK_CONTROL);
    assert_int_equal(v->kind[300], TOK_UNUSED);
    tok_free(t);
    unlink(path);
}

static void corrupt_files_refused(void **state)
{
    (void)state;
    char buf[8192];
    size_t n;
    n = small_plain(buf, sizeof buf, "Y*Jj 258\n");
    expect_refused("cl100k_base.badb64", buf, n, "line 259", "base64");
    n = small_plain(buf, sizeof buf, "YWJjZA==\n");
    expect_refused("cl100k_base.norank", buf, n, "line 259", "rank");
    n = small_plain(buf, sizeof buf, "YWJjZA== 12x\n");
    expect_refused("cl100k_base.badrank", buf, n, "line 259", "rank");
    n = small_plain(buf, sizeof buf, "YWJjZA== 257\n");
    expect_refused("cl100k_base.duprank", buf, n, "line 259", "twice");
    n = small_plain(buf, sizeof buf, "YWJjZA== 300\n");
    expect_refused("cl100k_base.gap", buf, n, "rank 258 is missing", NULL);
    n = small_plain(buf, sizeof buf, "YWJjZA== 1152921504606846976\n");
    expect_refused("cl100k_base.huge", buf, n, "line 259", "rank");
    n = small_plain(buf, sizeof buf, "YWJj 258\n");
    expect_refused("cl100k_base.dupbytes", buf, n, "line 259", "already");
    n = small_plain(buf, sizeof buf, "");
    expect_refused("mystery.tiktoken", buf, n, "name it after its encoding",
                   NULL);
    const char *j1 = "{\"pat_str\": 5, \"bpe_ranks\": \"! 0 YQ==\"}";
    expect_refused("j1.json", j1, strlen(j1), "pat_str", NULL);
    const char *j2 = "{\"pat_str\": \".\", \"special_tokens\": {\"<x>\": 0},"
                     " \"bpe_ranks\": \"! 0 YQ== Yg==\"}";
    expect_refused("j2.json", j2, strlen(j2), "special token '<x>'", "rank 0");
    const char *j3 = "{\"pat_str\": \".\", \"bpe_ranks\": \"! 0 YQ== Y!==\"}";
    expect_refused("j3.json", j3, strlen(j3), "bpe_ranks line 1, field 4",
                   "base64");
    const char *j4 = "{\"pat_str\": \"(\", \"bpe_ranks\": \"! 0 YQ==\"}";
    expect_refused("j4.json", j4, strlen(j4), "pat_str", NULL);
    /* what the scanner leaves to jansson is refused as jansson says */
    const char *j5 = "{\"pat_str\": \".\", \"bpe_ranks\": \"! 0 YQ==\","
                     " \"bpe_ranks\": 3}";
    expect_refused("j5.json", j5, strlen(j5), "bpe_ranks is missing", NULL);
    const char *j6 = "{\"pat_str\": \".\\u0000\", \"bpe_ranks\": \"! 0 YQ==\"}";
    expect_refused("j6.json", j6, strlen(j6), "byte 21", "JSON_ALLOW_NUL");
    const char *j7 = "{\"pat_str\": \".\", \"special_tokens\": null,"
                     " \"bpe_ranks\": \"! 0 YQ==\"}";
    expect_refused("j7.json", j7, strlen(j7), "special_tokens is not an object",
                   NULL);
}

/* The npm JSON read by the scanner and the same read by jansson (a key
 * the scanner does not take sends it there) give the same tokenizer:
 * escapes in a special token's text and the pattern, the ranks in two
 * lines. */
static void json_scanned_as_the_tree_reads_it(void **state)
{
    (void)state;
    static const char *const keys[] = {"", "\"x\": [1, {}], "};
    tok_tokenizer_t *t[2];
    for (int i = 0; i < 2; i++) {
        char body[512], path[512];
        snprintf(body, sizeof body,
                 "{%s\"pat_str\": \"\\\\p{L}+|\\u0020?\\\\d\", "
                 "\"special_tokens\": {\"<|\\u00e9|>\": 4, \"<\\\"q>\": 5},\n"
                 " \"bpe_ranks\": \"! 0 YQ== Yg==\\nYWI= 2\\r\\nYWJh 3\"}",
                 keys[i]);
        snprintf(path, sizeof path, "%s/s%d.json", tmpdir, i);
        write_file(path, body, strlen(body));
        t[i] = test_load(path);
        unlink(path);
    }
    const tok_vocab_t *a = tok_vocab(t[0]), *b = tok_vocab(t[1]);
    assert_int_equal(a->size, 6);
    assert_int_equal(b->size, 6);
    assert_memory_equal(a->bytes, b->bytes, a->offset[a->size]);
    assert_memory_equal(a->offset, b->offset, (a->size + 1) * sizeof *a->offset);
    size_t len;
    const uint8_t *sp = tok_vocab_token(a, 4, &len);
    assert_true(len == 6 && !memcmp(sp, "<|\xC3\xA9|>", 6));
    sp = tok_vocab_token(a, 5, &len);
    assert_true(len == 4 && !memcmp(sp, "<\"q>", 4));
    tok_ids_t ids[2] = {{0}, {0}};
    tb_err_t err;
    for (int i = 0; i < 2; i++)
        assert_int_equal(tok_encode(t[i], (const uint8_t *)"abab", 4, &ids[i], &err), 0);
    assert_int_equal(ids[0].len, ids[1].len);
    assert_memory_equal(ids[0].data, ids[1].data, ids[0].len * sizeof *ids[0].data);
    for (int i = 0; i < 2; i++) {
        free(ids[i].data);
        tok_free(t[i]);
    }
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tokbench-tt-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

/* A failed assertion skips a test's own clean-up: remove what it left. */
static int teardown(void **state)
{
    (void)state;
    char p[512];
    snprintf(p, sizeof p, "%s/lines.txt", tmpdir);
    unlink(p);
    return rmdir(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cl100k_plain_equals_json),
        cmocka_unit_test(o200k_plain_equals_json),
        cmocka_unit_test(cl100k_specials),
        cmocka_unit_test(o200k_specials),
        cmocka_unit_test(small_valid_file_loads),
        cmocka_unit_test(corrupt_files_refused),
        cmocka_unit_test(json_scanned_as_the_tree_reads_it),
        cmocka_unit_test(cl100k_matches_reference),
        cmocka_unit_test(o200k_matches_reference),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
