/*
 * fastsplit: hand-written matchers for the split patterns most models use,
 * giving exactly the match PCRE2 gives for the same pattern (pretok.c
 * compiles every pattern with PCRE2 all the same and falls back to it).
 *
 * The Llama 3 pattern (cl100k's too, and Qwen2's with \p{N} for
 * \p{N}{1,3}) is seven alternatives tried in order at each position:
 *   1 (?i:'s|'t|'re|'ve|'m|'ll|'d)   2 [^\r\n\p{L}\p{N}]?\p{L}+
 *   3 \p{N}{1,3}   4 ' ?[^\s\p{L}\p{N}]+[\r\n]*'   5 \s*[\r\n]+
 *   6 \s+(?!\S)    7 \s+
 * and every character starts a match of one of them, so a match always
 * starts where the last one ended.  PCRE2's JIT spent half of a warm
 * encode of Llama 3 there; a match here is a few table lookups per
 * character.  The classes are pretok.c's (uprops.h: \p{..} at the
 * references' Unicode version, \s = White_Space), and PCRE2's caseless
 * matching of the contractions puts U+017F (long s) with 's'.
 *
 * Invalid UTF-8: PCRE2_MATCH_INVALID_UTF makes an invalid byte a place no
 * match can cross, with lookarounds of its own; rather than mirror that,
 * a matcher that meets one returns 0 and the caller asks PCRE2.
 */
#include <pthread.h>
#include <string.h>

#include "../base/utf8.h"
#include "tok_internal.h"
#include "uprops.h"

enum { F_L = 1, F_N = 2, F_S = 4 };

static const char llama3_pattern[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char qwen2_pattern[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/* F_* bits of every BMP code point, built once per process. */
static uint8_t bmp_class[0x10000];
static uint32_t mask_l, mask_n;
static pthread_once_t bmp_once = PTHREAD_ONCE_INIT;

static void build_bmp_class(void)
{
    mask_l = tok_uprops_mask("L", 1);
    mask_n = tok_uprops_mask("N", 1);
    tok_uprops_gc_fill(bmp_class, 0x10000);
    for (uint32_t cp = 0; cp < 0x10000; cp++) {
        unsigned gc = bmp_class[cp];
        bmp_class[cp] = (uint8_t)((mask_l >> gc & 1 ? F_L : 0) | (mask_n >> gc & 1 ? F_N : 0) |
                                  (tok_uprops_is_space(cp) ? F_S : 0));
    }
}

tok_fast_t tok_fast_kind(const uint8_t *pattern, size_t len)
{
    tok_fast_t k = TOK_FAST_NONE;
    if (len == strlen(llama3_pattern) && !memcmp(pattern, llama3_pattern, len))
        k = TOK_FAST_LLAMA3;
    else if (len == strlen(qwen2_pattern) && !memcmp(pattern, qwen2_pattern, len))
        k = TOK_FAST_QWEN2;
    if (k != TOK_FAST_NONE)
        pthread_once(&bmp_once, build_bmp_class);
    return k;
}

/* The character at s[i] (i < n): its length and F_* class, or 0 if the
 * bytes there are not valid UTF-8. */
static inline size_t char_at(const uint8_t *s, size_t n, size_t i, unsigned *cls,
                             uint32_t *cp)
{
    if (s[i] < 0x80) {
        *cp = s[i];
        *cls = bmp_class[s[i]];
        return 1;
    }
    size_t len = tb_utf8_decode(s + i, n - i, cp);
    if (*cp < 0x10000) {
        *cls = bmp_class[*cp];
    } else { /* White_Space is all in the BMP */
        unsigned gc = tok_uprops_gc(*cp);
        *cls = (mask_l >> gc & 1 ? F_L : 0) | (mask_n >> gc & 1 ? F_N : 0);
    }
    return len;
}

/* The end of the run of characters from j whose class, under mask, is
 * want; 0 at an invalid byte. */
static size_t run_of(const uint8_t *s, size_t n, size_t j, unsigned mask, unsigned want)
{
    while (j < n) {
        unsigned c;
        uint32_t cp;
        size_t len = char_at(s, n, j, &c, &cp);
        if (!len)
            return 0;
        if ((c & mask) != want)
            break;
        j += len;
    }
    return j;
}

/* Alternative 1 after the apostrophe at k - 1: the end, or 0.  b | 0x20
 * is a given lower-case ASCII letter exactly for that letter and its
 * capital. */
static size_t contraction(const uint8_t *s, size_t n, size_t k)
{
    if (k >= n)
        return 0;
    uint8_t b = s[k] | 0x20, b2 = k + 1 < n ? s[k + 1] | 0x20 : 0;
    if (b == 's' || b == 't' || b == 'm' || b == 'd')
        return k + 1;
    if (s[k] == 0xC5 && k + 1 < n && s[k + 1] == 0xBF) /* U+017F folds to s */
        return k + 2;
    if (((b == 'r' || b == 'v') && b2 == 'e') || (b == 'l' && b2 == 'l'))
        return k + 2;
    return 0;
}

/* Alternatives 5-7 at the white space s[i]. */
static size_t match_space(const uint8_t *s, size_t n, size_t i)
{
    size_t j = i, last = i, after_nl = 0;
    while (j < n) {
        unsigned c;
        uint32_t cp;
        size_t len = char_at(s, n, j, &c, &cp);
        if (!len)
            return 0;
        if (!(c & F_S))
            break;
        if (cp == '\r' || cp == '\n')
            after_nl = j + len;
        last = j;
        j += len;
    }
    if (after_nl) /* \s*[\r\n]+ backs off to the run's last line break */
        return after_nl;
    /* \s+(?!\S) leaves the last space for the word after it */
    return j == n || last == i ? j : last;
}

static size_t match_llama3(const uint8_t *s, size_t n, size_t i, int max_digits)
{
    unsigned c0, c1;
    uint32_t cp0, cp1;
    size_t l0 = char_at(s, n, i, &c0, &cp0), l1 = 0, e;
    if (!l0)
        return 0;
    if (cp0 == '\'' && (e = contraction(s, n, i + 1)))
        return e;
    if (c0 & F_L)
        return run_of(s, n, i + l0, F_L, F_L);
    if (i + l0 < n && !(l1 = char_at(s, n, i + l0, &c1, &cp1)))
        return 0;
    if (!(c0 & F_N) && cp0 != '\r' && cp0 != '\n' && l1 && (c1 & F_L))
        return run_of(s, n, i + l0 + l1, F_L, F_L);
    if (c0 & F_N) {
        size_t j = i + l0;
        for (int k = 1; k < max_digits && j < n; k++) {
            unsigned c;
            uint32_t cp;
            size_t len = char_at(s, n, j, &c, &cp);
            if (!len)
                return 0;
            if (!(c & F_N))
                break;
            j += len;
        }
        return j;
    }
    const unsigned other = F_S | F_L | F_N; /* [^\s\p{L}\p{N}]: none of these */
    size_t from = !(c0 & F_S) ? i : cp0 == ' ' && l1 && !(c1 & other) ? i + 1 : SIZE_MAX;
    if (from == SIZE_MAX)
        return match_space(s, n, i);
    size_t j = run_of(s, n, from, other, 0);
    while (j && j < n && (s[j] == '\r' || s[j] == '\n'))
        j++;
    return j;
}

size_t tok_fast_match(tok_fast_t kind, const uint8_t *s, size_t n, size_t pos)
{
    switch (kind) {
    case TOK_FAST_LLAMA3:
        return match_llama3(s, n, pos, 3);
    case TOK_FAST_QWEN2:
        return match_llama3(s, n, pos, 1);
    case TOK_FAST_NONE:
        break;
    }
    return 0;
}
