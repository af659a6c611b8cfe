/*
 * test_pretok: the pre-tokenizer steps on tricky text.  Expected splits are
 * worked out by hand from the patterns and Hugging Face's split behaviours
 * (the reasoning is in the comments), not taken from a reference run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../base/utf8.h"
#include "../tok/tok_internal.h"
#include "../tok/uprops.h"

static const char llama3_re[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/* Appends one step; Split steps get their pattern compiled. */
static void add_step(tok_tokenizer_t *t, tok_pre_kind_t kind, const char *pat,
                     int literal, tok_split_behavior_t b, int invert,
                     uint32_t flags)
{
    tok_pre_t p = {.kind = kind, .behavior = b, .invert = invert, .flags = flags};
    tb_err_t err;
    if (pat && tok_pre_compile(&p, (const uint8_t *)pat, strlen(pat), literal,
                               &err))
        fail_msg("compile: %s", err.msg);
    assert_int_equal(tb_vec_push(&t->pres, p), 0);
}

/* tok_pretokenize on a whole text (the first piece), with the tokenizer
 * prepared afresh (the cases change its steps) and a state of its own. */
static int pretokenize(tok_tokenizer_t *t, const uint8_t *s, size_t n,
                       tb_buf_t *text, tok_spans_t *words, tb_err_t *err)
{
    if (tok_prepare(t, err))
        return -1;
    tok_state_t *st = tok_state_new(t);
    int rc = st ? tok_pretokenize(t, st, s, n, 1, text, words, err)
                : tb_fail(err, "out of memory");
    tok_state_free(st);
    return rc;
}

static tok_tokenizer_t *one_step(tok_pre_kind_t kind, const char *pat,
                                 int literal, tok_split_behavior_t b,
                                 int invert, uint32_t flags)
{
    tok_tokenizer_t *t = tok_new(TOK_FORMAT_HF_JSON);
    assert_non_null(t);
    add_step(t, kind, pat, literal, b, invert, flags);
    return t;
}

/* Pre-tokenizes s[0..n) and checks the words against a NULL-terminated
 * list (entries are taken with strlen, so none may hold a NUL). */
static void expect_n(tok_tokenizer_t *t, const char *s, size_t n, ...)
{
    tb_buf_t text = {0};
    tok_spans_t words = {0};
    tb_err_t err;
    if (pretokenize(t, (const uint8_t *)s, n, &text, &words, &err))
        fail_msg("pretokenize: %s", err.msg);
    va_list ap;
    va_start(ap, n);
    size_t i = 0;
    for (const char *w; (w = va_arg(ap, const char *)); i++) {
        if (i >= words.len)
            fail_msg("got %zu words, expected more (next \"%s\")", words.len, w);
        tok_span_t sp = words.data[i];
        if (sp.len != strlen(w) || memcmp(text.data + sp.off, w, sp.len))
            fail_msg("word %zu is \"%.*s\", expected \"%s\"", i, (int)sp.len,
                     (const char *)text.data + sp.off, w);
    }
    va_end(ap);
    assert_int_equal(words.len, i);
    tb_buf_free(&text);
    free(words.data);
}

#define expect(t, s, ...) expect_n(t, s, strlen(s), __VA_ARGS__, (char *)NULL)

static void test_llama3_pattern(void **state)
{
    (void)state;
    tok_tokenizer_t *t =
        one_step(TOK_PRE_SPLIT, llama3_re, 0, TOK_SPLIT_ISOLATED, 0, 0);
    /* " 12345": the space cannot join the digits, so \s+ takes it alone;
     * digits go in threes.  "\n\n  y": \s*[\r\n]+ backtracks to the
     * newlines; then \s+(?!\S) keeps one space back for " y".  Trailing
     * spaces are one \s+(?!\S) match. */
    expect(t, "Hello world's 12345 x\n\n  y  ", "Hello", " world", "'s", " ",
           "123", "45", " x", "\n\n", " ", " y", "  ");
    /* contractions are case-insensitive; a letter run eats no apostrophe */
    expect(t, "I'M YOU'LL we've", "I", "'M", " YOU", "'LL", " we", "'ve");
    /* punctuation runs take one leading space and trailing newlines */
    expect(t, "a ...!!\r\nb", "a", " ...!!\r\n", "b");
    /* emoji are neither letters nor numbers: one punctuation-like run */
    expect(t, "hi \xF0\x9F\x98\x80\xF0\x9F\x98\x80!", "hi",
           " \xF0\x9F\x98\x80\xF0\x9F\x98\x80!");
    /* a non-letter prefix (here '$') joins the following letter run */
    expect(t, "$abc", "$abc");
    expect(t, "", NULL);
    tok_free(t);
}

/* U+0085 (NEL) is White_Space for the references' regex engines, so
 * " \u0085" before a letter splits as whitespace, not as punctuation. */
static void test_nel_is_space(void **state)
{
    (void)state;
    tok_tokenizer_t *t =
        one_step(TOK_PRE_WHITESPACE_SPLIT, NULL, 0, TOK_SPLIT_REMOVED, 0, 0);
    expect(t, "  a \tb\xC2\x85" "c\xE3\x80\x80" "d  ", "a", "b", "c", "d");
    tok_free(t);
    t = one_step(TOK_PRE_SPLIT, llama3_re, 0, TOK_SPLIT_ISOLATED, 0, 0);
    /* \s+(?!\S) holds the NEL back for [^\r\n\p{L}\p{N}]?\p{L}+ */
    expect(t, "a \xC2\x85" "b", "a", " ", "\xC2\x85" "b");
    tok_free(t);
}

static void test_behaviors(void **state)
{
    (void)state;
    /* "a-b--c-": matches at 1, 3, 4 and 6 */
    struct {
        tok_split_behavior_t b;
        const char *w[8];
    } cases[] = {
        {TOK_SPLIT_ISOLATED, {"a", "-", "b", "-", "-", "c", "-"}},
        {TOK_SPLIT_REMOVED, {"a", "b", "c"}},
        /* a match joins the piece before it unless that was a match too */
        {TOK_SPLIT_MERGED_WITH_PREVIOUS, {"a-", "b-", "-", "c-"}},
        /* mirror image: a match joins the piece after it */
        {TOK_SPLIT_MERGED_WITH_NEXT, {"a", "-b", "-", "-c", "-"}},
        {TOK_SPLIT_CONTIGUOUS, {"a", "-", "b", "--", "c", "-"}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        tok_tokenizer_t *t = one_step(TOK_PRE_SPLIT, "-", 1, cases[c].b, 0, 0);
        tb_buf_t text = {0};
        tok_spans_t words = {0};
        tb_err_t err;
        assert_int_equal(pretokenize(t, (const uint8_t *)"a-b--c-", 7,
                                         &text, &words, &err), 0);
        size_t n = 0;
        while (n < 8 && cases[c].w[n])
            n++;
        assert_int_equal(words.len, n);
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(words.data[i].len, strlen(cases[c].w[i]));
            assert_memory_equal(text.data + words.data[i].off, cases[c].w[i],
                                words.data[i].len);
        }
        tb_buf_free(&text);
        free(words.data);
        tok_free(t);
    }
}

/* Whitespace pre-tokenizer as tokenizer.json defines it: keep the matches
 * of \w+|[^\w\s]+ (Removed + invert drops what lies between). */
static void test_invert(void **state)
{
    (void)state;
    tok_tokenizer_t *t = one_step(TOK_PRE_SPLIT, "\\w+|[^\\w\\s]+", 0,
                                  TOK_SPLIT_REMOVED, 1, 0);
    expect(t, "hi,  you!", "hi", ",", "you", "!");
    tok_free(t);
}

/* A literal pattern is not a regex: "." matches only a dot. */
static void test_literal(void **state)
{
    (void)state;
    tok_tokenizer_t *t = one_step(TOK_PRE_SPLIT, ".", 1, TOK_SPLIT_REMOVED, 0, 0);
    expect(t, "a.b.c", "a", "b", "c");
    expect(t, "abc", "abc");
    tok_free(t);
}

/* A pattern that can match the empty string: the walk steps over an empty
 * match that touches the previous match, as the references' iterators do,
 * and empty pieces are dropped, so "x*" isolates the x runs. */
static void test_empty_matches(void **state)
{
    (void)state;
    tok_tokenizer_t *t = one_step(TOK_PRE_SPLIT, "x*", 0, TOK_SPLIT_ISOLATED, 0, 0);
    expect(t, "ab", "a", "b");
    expect(t, "axxb", "a", "xx", "b");
    tok_free(t);
    t = one_step(TOK_PRE_SPLIT, "x*", 0, TOK_SPLIT_REMOVED, 0, 0);
    expect(t, "axxb", "a", "b");
    tok_free(t);
}

static void test_byte_level(void **state)
{
    (void)state;
    /* add_prefix_space + use_regex: GPT-2 split of " hello world" */
    tok_tokenizer_t *t = one_step(TOK_PRE_BYTE_LEVEL, NULL, 0, 0, 0, 3);
    expect(t, "hello world", " hello", " world");
    expect(t, " hi", " hi"); /* already has its space */
    expect(t, "it's 42", " it", "'s", " 42");
    tok_free(t);
    /* after a split, every word gets its own prefix space */
    t = one_step(TOK_PRE_SPLIT, "-", 1, TOK_SPLIT_REMOVED, 0, 0);
    add_step(t, TOK_PRE_BYTE_LEVEL, NULL, 0, 0, 0, 1);
    expect(t, "ab-cd", " ab", " cd");
    tok_free(t);
}

static void test_metaspace(void **state)
{
    (void)state;
    tok_tokenizer_t *t = one_step(TOK_PRE_METASPACE, NULL, 0, 0, 0, 3);
    /* prepend the marker, then a word starts at every marker; the
     * marker is a space in tokbench's vocabularies */
    expect(t, "hello world", " hello", " world");
    /* a literal U+2581 in the text is a marker as well */
    expect(t, "a\xE2\x96\x81" "b", " a", " b");
    expect(t, "\xE2\x96\x81" "a", " a"); /* no second prefix */
    /* two spaces: the first stands alone (MergedWithNext of matches) */
    expect(t, "a  b", " a", " ", " b");
    tok_free(t);
    t = one_step(TOK_PRE_METASPACE, NULL, 0, 0, 0, 0); /* neither */
    expect(t, "a b", "a b");
    tok_free(t);
}

static void test_digits(void **state)
{
    (void)state;
    tok_tokenizer_t *t = one_step(TOK_PRE_DIGITS, NULL, 0, 0, 0, 1);
    expect(t, "a123b", "a", "1", "2", "3", "b");
    tok_free(t);
    t = one_step(TOK_PRE_DIGITS, NULL, 0, 0, 0, 0);
    /* U+0663 ARABIC-INDIC DIGIT THREE is numeric too */
    expect(t, "a12\xD9\xA3" "b7", "a", "12\xD9\xA3", "b", "7");
    tok_free(t);
}

/* Sequence: each step re-splits the words of the one before. */
static void test_sequence(void **state)
{
    (void)state;
    tok_tokenizer_t *t = one_step(TOK_PRE_WHITESPACE_SPLIT, NULL, 0, 0, 0, 0);
    add_step(t, TOK_PRE_DIGITS, NULL, 0, 0, 0, 1);
    expect(t, "ab12 c3", "ab", "1", "2", "c", "3");
    tok_free(t);
}

/* Invalid UTF-8 never matches, so it lands in the gaps; nothing is lost. */
static void test_invalid_utf8(void **state)
{
    (void)state;
    tok_tokenizer_t *t =
        one_step(TOK_PRE_SPLIT, llama3_re, 0, TOK_SPLIT_ISOLATED, 0, 0);
    static const char s[] = "ab\xFF\xFE" "cd \xC3 e\xE2\x82 \x80\x80!";
    expect_n(t, s, sizeof s - 1, "ab", "\xFF\xFE", "cd", " ", "\xC3",
             " e", "\xE2\x82", " ", "\x80\x80", "!", (char *)NULL);
    /* whatever the split, the words tile the text */
    const char *junk[] = {"\xFF", "\xC0\x80", ("a\xED\xA0\x80" "b"),
                          "\xF4\x90\x80\x80 x", "\xE2\x96"};
    for (size_t j = 0; j < sizeof junk / sizeof *junk; j++) {
        tb_buf_t text = {0};
        tok_spans_t words = {0};
        tb_err_t err;
        size_t n = strlen(junk[j]);
        assert_int_equal(pretokenize(t, (const uint8_t *)junk[j], n, &text,
                                         &words, &err), 0);
        size_t at = 0;
        for (size_t i = 0; i < words.len; i++) {
            assert_int_equal(words.data[i].off, at);
            at += words.data[i].len;
        }
        assert_int_equal(at, n);
        assert_memory_equal(text.data, junk[j], n);
        tb_buf_free(&text);
        free(words.data);
    }
    tok_free(t);
}

/* 100 000 spaces then "x": \s+(?!\S) leaves one space for " x"; the long
 * backtracking run must not exhaust the JIT stack. */
static void test_long_space_run(void **state)
{
    (void)state;
    size_t n = 100000;
    char *s = malloc(n + 2);
    memset(s, ' ', n);
    s[n] = 'x';
    tok_tokenizer_t *t =
        one_step(TOK_PRE_SPLIT, llama3_re, 0, TOK_SPLIT_ISOLATED, 0, 0);
    tb_buf_t text = {0};
    tok_spans_t words = {0};
    tb_err_t err;
    assert_int_equal(pretokenize(t, (uint8_t *)s, n + 1, &text, &words, &err), 0);
    assert_int_equal(words.len, 2);
    assert_int_equal(words.data[0].len, n - 1);
    assert_int_equal(words.data[1].len, 2);
    tb_buf_free(&text);
    free(words.data);
    tok_free(t);
    free(s);
}

/* A warm second call reuses the caller's buffers without growing them. */
static void test_reuses_buffers(void **state)
{
    (void)state;
    tok_tokenizer_t *t =
        one_step(TOK_PRE_SPLIT, llama3_re, 0, TOK_SPLIT_ISOLATED, 0, 0);
    add_step(t, TOK_PRE_BYTE_LEVEL, NULL, 0, 0, 0, 1);
    const char *s = "some words, then 123 more words\n";
    tb_buf_t text = {0};
    tok_spans_t words = {0};
    tb_err_t err;
    assert_int_equal(pretokenize(t, (const uint8_t *)s, strlen(s), &text,
                                     &words, &err), 0);
    uint8_t *td = text.data;
    tok_span_t *wd = words.data;
    size_t tc = text.cap, wc = words.cap, nw = words.len;
    assert_int_equal(pretokenize(t, (const uint8_t *)s, strlen(s), &text,
                                     &words, &err), 0);
    assert_ptr_equal(text.data, td);
    assert_ptr_equal(words.data, wd);
    assert_int_equal(text.cap, tc);
    assert_int_equal(words.cap, wc);
    assert_int_equal(words.len, nw);
    tb_buf_free(&text);
    free(words.data);
    tok_free(t);
}

/* Is cp in the category set `mask` per uprops's tables? */
static int in_mask(uint32_t mask, uint32_t cp)
{
    return !!(mask & (1u << tok_uprops_gc(cp)));
}

/* The compiled classes follow uprops's tables, not PCRE2's own, on every
 * code point: each pattern below matches exactly the characters that the
 * table puts in its categories (the references' Unicode version; how it
 * was measured is in uprops.h). */
static void test_classes_follow_tables(void **state)
{
    (void)state;
    uint32_t L = tok_uprops_mask("L", 1), N = tok_uprops_mask("Number", 6);
    uint32_t lu = tok_uprops_mask("lu", 2), nd = tok_uprops_mask("Nd", 2);
    uint32_t mn = tok_uprops_mask("Nonspacing Mark", 15);
    assert_true(L && N && lu && nd && mn && !tok_uprops_mask("Han", 3));
    assert_true((lu & L) == lu && !(L & N));
    struct {
        const char *re;
        uint32_t mask;
        int negate;
    } cases[] = {
        {"\\p{L}", L, 0},          {"\\pN", N, 0},
        {"\\p{Lu}", lu, 0},        {"\\P{L}", L, 1},
        {"\\p{^Letter}", L, 1},    {"\\d", nd, 0},
        {"[\\p{L}\\p{N}]", L | N, 0}, {"[^\\p{L}\\p{N}]", L | N, 1},
        /* written out in full: negated inside a class, and Mn, which
         * U+1171E left for Mc after PCRE2 10.42's Unicode 14.0 */
        {"[\\P{L}]", L, 1},        {"\\p{Mn}", mn, 0},
        {"[^\\P{Mn}]", mn, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tok_pre_t p = {0};
        tb_err_t err;
        if (tok_pre_compile(&p, (const uint8_t *)cases[k].re,
                            strlen(cases[k].re), 0, &err))
            fail_msg("compile %s: %s", cases[k].re, err.msg);
        pcre2_match_data *md = pcre2_match_data_create(1, NULL);
        long wrong = 0;
        for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
            if (cp >= 0xD800 && cp <= 0xDFFF)
                continue;
            uint8_t u[4];
            size_t n = tb_utf8_encode(cp, u);
            int m = pcre2_match(p.re, u, n, 0, 0, md, NULL) >= 0; /* one char */
            if (m != (in_mask(cases[k].mask, cp) != cases[k].negate) &&
                wrong++ < 3)
                print_error("%s: U+%04X %s\n", cases[k].re, cp,
                            m ? "matched" : "not matched");
        }
        assert_int_equal(wrong, 0);
        pcre2_match_data_free(md);
        pcre2_code_free(p.re);
        tb_buf_free(&p.pattern);
    }
}

static void test_bad_pattern(void **state)
{
    (void)state;
    tok_pre_t p = {.kind = TOK_PRE_SPLIT};
    tb_err_t err;
    assert_int_equal(tok_pre_compile(&p, (const uint8_t *)"ab(c", 4, 0, &err), -1);
    assert_non_null(strstr(err.msg, "ab(c"));
    assert_null(p.re);
    tb_buf_free(&p.pattern);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llama3_pattern),
        cmocka_unit_test(test_nel_is_space),
        cmocka_unit_test(test_behaviors),
        cmocka_unit_test(test_invert),
        cmocka_unit_test(test_literal),
        cmocka_unit_test(test_empty_matches),
        cmocka_unit_test(test_byte_level),
        cmocka_unit_test(test_metaspace),
        cmocka_unit_test(test_digits),
        cmocka_unit_test(test_sequence),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_long_space_run),
        cmocka_unit_test(test_reuses_buffers),
        cmocka_unit_test(test_bad_pattern),
        cmocka_unit_test(test_classes_follow_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
