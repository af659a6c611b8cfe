/*
 * test_fastsplit: the hand-written matchers of fastsplit.c against PCRE2
 * on the same pattern.  Two one-step tokenizers hold the same compiled
 * Split step, one with its matcher switched off, and must cut every text
 * into the same words: the data cache's corpora (multi, unicode, stress,
 * invalid) in 64 KiB pieces, and generated texts of the characters where
 * the alternatives meet (apostrophes and the long s, line breaks among
 * other white space, digits of several scripts, marks, emoji, invalid
 * bytes).
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
#include "support.h"

static const char llama3_re[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char qwen2_re[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char o200k_re[] =
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*"
    "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+"
    "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

typedef struct {
    tok_tokenizer_t *t;
    tok_state_t *st;
    tb_buf_t text;
    tok_spans_t words;
} splitter_t;

/* A tokenizer of one Split step (Isolated) of pattern, its matcher on or
 * off. */
static void splitter_init(splitter_t *s, const char *pattern, int fast)
{
    memset(s, 0, sizeof *s);
    s->t = tok_new(TOK_FORMAT_HF_JSON);
    assert_non_null(s->t);
    tok_pre_t p = {.kind = TOK_PRE_SPLIT, .behavior = TOK_SPLIT_ISOLATED};
    tb_err_t err;
    if (tok_pre_compile(&p, (const uint8_t *)pattern, strlen(pattern), 0, &err))
        fail_msg("compile: %s", err.msg);
    assert_int_not_equal(p.fast, TOK_FAST_NONE); /* the pattern is recognized */
    /* pretok.c's match_at answers "no match" at a word's end without PCRE2,
     * which holds only while the pattern cannot match the empty string */
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    assert_int_equal(pcre2_match(p.re, (PCRE2_SPTR) "", 0, 0, 0, md, NULL),
                     PCRE2_ERROR_NOMATCH);
    pcre2_match_data_free(md);
    if (!fast) { /* PCRE2 alone, JIT-compiled as a pattern without a matcher is */
        p.fast = TOK_FAST_NONE;
        pcre2_jit_compile(p.re, PCRE2_JIT_COMPLETE);
    }
    assert_int_equal(tb_vec_push(&s->t->pres, p), 0);
    if (tok_prepare(s->t, &err))
        fail_msg("prepare: %s", err.msg);
    s->st = tok_state_new(s->t);
    assert_non_null(s->st);
}

static void splitter_free(splitter_t *s)
{
    tok_state_free(s->st);
    tok_free(s->t);
    tb_buf_free(&s->text);
    free(s->words.data);
}

static void split(splitter_t *s, const uint8_t *text, size_t n)
{
    tb_err_t err;
    if (tok_pretokenize(s->t, s->st, text, n, 1, &s->text, &s->words, &err))
        fail_msg("pretokenize: %s", err.msg);
}

/* Both splitters cut text[0..n) alike; `where` names the text. */
static void same_words(splitter_t *fast, splitter_t *slow, const uint8_t *text, size_t n,
                       const char *where, size_t off)
{
    split(fast, text, n);
    split(slow, text, n);
    size_t k = fast->words.len < slow->words.len ? fast->words.len : slow->words.len;
    for (size_t i = 0; i <= k; i++) {
        if (i == k && fast->words.len == slow->words.len)
            return;
        tok_span_t a = i < fast->words.len ? fast->words.data[i] : (tok_span_t){0, 0};
        tok_span_t b = i < slow->words.len ? slow->words.data[i] : (tok_span_t){0, 0};
        if (i == k || a.off != b.off || a.len != b.len)
            fail_msg("%s, byte %zu: word %zu is [%u, +%u) by the matcher, [%u, +%u) by "
                     "PCRE2 (\"%.*s\")", where, off + (i < k ? a.off : 0), i, a.off, a.len,
                     b.off, b.len, (int)(b.len > 40 ? 40 : b.len),
                     (const char *)text + b.off);
    }
}

/* Both splitters on the corpora, in 64 KiB pieces. */
static void corpora(const char *pattern)
{
    static const char *const files[] = {
        "data/cache/multi/multi.txt", "data/cache/unicode/unicode.txt",
        "data/cache/stress/stress.txt", "data/cache/invalid/invalid.txt"};
    splitter_t fast, slow;
    splitter_init(&fast, pattern, 1);
    splitter_init(&slow, pattern, 0);
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        test_need_file(files[f]);
        uint8_t *text;
        size_t len;
        tb_err_t err;
        if (tb_read_file(files[f], &text, &len, &err))
            fail_msg("%s", err.msg);
        for (size_t at = 0; at < len; at += 65536)
            same_words(&fast, &slow, text + at, len - at < 65536 ? len - at : 65536,
                       files[f], at);
        free(text);
    }
    splitter_free(&fast);
    splitter_free(&slow);
}

static void test_llama3_corpora(void **state)
{
    (void)state;
    corpora(llama3_re);
}

static void test_qwen2_corpora(void **state)
{
    (void)state;
    corpora(qwen2_re);
}

static void test_o200k_corpora(void **state)
{
    (void)state;
    corpora(o200k_re);
}

/* Random strings of the pieces where the alternatives meet. */
static void generated(const char *pattern)
{
    static const char *const bits[] = {
        "'", "s", "S", "t", "re", "RE", "vE", "ll", "Ll", "m", "D", "\xC5\xBF", /* long s */
        "\xC5\x9F", " ", "  ", "\t", "\r", "\n", "\r\n", "\xC2\x85", "\xC2\xA0",
        "\xE3\x80\x80", "\xE2\x80\xA8", "\x0B", "\x0C", "a", "Z", "\xC3\xA9", "\xD0\x96",
        "\xE4\xB8\xAD", "\xCC\x81", /* combining acute */ "1", "23", "\xD9\xA3", /* Arabic 3 */
        "\xE2\x85\xA7", /* Roman 8, Nl */ "\xC2\xB2", "\xF0\x9D\x9F\x8E", /* math 0 */
        "\xF0\x90\x90\x80", /* Deseret letter */ "\xF0\x9F\x98\x80", "!", "...", "$", "/",
        "_", "\xC7\x85", /* Lt */ "\xCA\xB0", /* Lm */ "\xE0\xA4\x95\xE0\xA4\xBF",
        /* Devanagari ka + vowel sign i (Mc) */ "A", "BC", "\xD0\xB4", "\x80", "\xC3", "\xE4\xB8", "\xFF", "\xED\xA0\x80", /* surrogate */
    };
    const size_t nbits = sizeof bits / sizeof *bits;
    splitter_t fast, slow;
    splitter_init(&fast, pattern, 1);
    splitter_init(&slow, pattern, 0);
    uint8_t buf[256];
    for (int i = 0; i < 100000; i++) {
        size_t n = 0, parts = 1 + test_rnd(10);
        for (size_t k = 0; k < parts; k++) {
            const char *b = bits[test_rnd((uint32_t)nbits)];
            memcpy(buf + n, b, strlen(b));
            n += strlen(b);
        }
        char where[40];
        snprintf(where, sizeof where, "generated text %d", i);
        same_words(&fast, &slow, buf, n, where, 0);
    }
    splitter_free(&fast);
    splitter_free(&slow);
}

static void test_llama3_generated(void **state)
{
    (void)state;
    generated(llama3_re);
}

static void test_qwen2_generated(void **state)
{
    (void)state;
    generated(qwen2_re);
}

static void test_o200k_generated(void **state)
{
    (void)state;
    generated(o200k_re);
}

/* The vocabularies' own patterns get their matcher. */
static void test_vocabularies_use_it(void **state)
{
    (void)state;
    static const struct {
        const char *path;
        tok_fast_t want;
    } v[] = {{"data/cache/llama3/tokenizer.json", TOK_FAST_LLAMA3},
             {TEST_CL100K, TOK_FAST_LLAMA3},
             {"data/cache/qwen3/tokenizer.json", TOK_FAST_QWEN2},
             {"data/cache/o200k/o200k_base.json", TOK_FAST_O200K}};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        tok_tokenizer_t *t = test_load(v[i].path);
        tok_fast_t got = TOK_FAST_NONE;
        for (size_t k = 0; k < t->pres.len; k++)
            if (t->pres.data[k].fast)
                got = t->pres.data[k].fast;
        if (got != v[i].want)
            fail_msg("%s: matcher %d, expected %d", v[i].path, (int)got, (int)v[i].want);
        tok_free(t);
    }
}

/* Another pattern, or the same one with a byte changed, is PCRE2's. */
static void test_other_patterns_not_matched(void **state)
{
    (void)state;
    char changed[sizeof llama3_re];
    memcpy(changed, llama3_re, sizeof changed);
    changed[sizeof changed - 2] = '*';
    assert_int_equal(tok_fast_kind((const uint8_t *)changed, strlen(changed)), TOK_FAST_NONE);
    assert_int_equal(tok_fast_kind((const uint8_t *)"\\s+", 3), TOK_FAST_NONE);
    assert_int_equal(tok_fast_kind((const uint8_t *)llama3_re, strlen(llama3_re)),
                     TOK_FAST_LLAMA3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llama3_generated),
        cmocka_unit_test(test_qwen2_generated),
        cmocka_unit_test(test_o200k_generated),
        cmocka_unit_test(test_vocabularies_use_it),
        cmocka_unit_test(test_other_patterns_not_matched),
        long_unit_test(test_llama3_corpora),
        long_unit_test(test_qwen2_corpora),
        long_unit_test(test_o200k_corpora),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
