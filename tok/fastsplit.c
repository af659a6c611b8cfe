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

#include "../base/hash.h"
#include "../base/utf8.h"
#include "tok_internal.h"
#include "uprops.h"

/* Classes: \p{L}, \p{N}, White_Space, and o200k's two letter classes
 * [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] (upper) and [\p{Ll}\p{Lm}\p{Lo}\p{M}]
 * (lower). */
enum { F_L = 1, F_N = 2, F_S = 4, F_U = 8, F_W = 16 };

static const char llama3_pattern[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char qwen2_pattern[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char o200k_pattern[] =
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*"
    "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+"
    "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/* F_* bits of every BMP code point, built once per process. */
static uint8_t bmp_class[0x10000];
static uint32_t mask_l, mask_n, mask_u, mask_w;
static pthread_once_t bmp_once = PTHREAD_ONCE_INIT;

static unsigned class_of_gc(unsigned gc)
{
    return (mask_l >> gc & 1 ? F_L : 0) | (mask_n >> gc & 1 ? F_N : 0) |
           (mask_u >> gc & 1 ? F_U : 0) | (mask_w >> gc & 1 ? F_W : 0);
}

static void build_bmp_class(void)
{
    mask_l = tok_uprops_mask("L", 1);
    mask_n = tok_uprops_mask("N", 1);
    mask_u = tok_uprops_mask("Lu", 2) | tok_uprops_mask("Lt", 2) | tok_uprops_mask("Lm", 2) |
             tok_uprops_mask("Lo", 2) | tok_uprops_mask("M", 1);
    mask_w = tok_uprops_mask("Ll", 2) | tok_uprops_mask("Lm", 2) | tok_uprops_mask("Lo", 2) |
             tok_uprops_mask("M", 1);
    tok_uprops_gc_fill(bmp_class, 0x10000);
    for (uint32_t cp = 0; cp < 0x10000; cp++)
        bmp_class[cp] = (uint8_t)(class_of_gc(bmp_class[cp]) |
                                  (tok_uprops_is_space(cp) ? F_S : 0));
}

tok_fast_t tok_fast_kind(const uint8_t *pattern, size_t len)
{
    tok_fast_t k = TOK_FAST_NONE;
    if (len == strlen(llama3_pattern) && !memcmp(pattern, llama3_pattern, len))
        k = TOK_FAST_LLAMA3;
    else if (len == strlen(qwen2_pattern) && !memcmp(pattern, qwen2_pattern, len))
        k = TOK_FAST_QWEN2;
    else if (len == strlen(o200k_pattern) && !memcmp(pattern, o200k_pattern, len))
        k = TOK_FAST_O200K;
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
    size_t len = tb_utf8_decode_fast(s + i, n - i, cp);
    if (*cp < 0x10000) {
        *cls = bmp_class[*cp];
    } else { /* White_Space is all in the BMP */
        *cls = class_of_gc(tok_uprops_gc(*cp));
    }
    return len;
}

/* The end of the run of at most max characters from j whose class, under
 * mask, is want; 0 at an invalid byte. */
static size_t run_of(const uint8_t *s, size_t n, size_t j, unsigned mask, unsigned want,
                     size_t max)
{
    for (; j < n && max; max--) {
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

/* ASCII letters are most of the bytes of most texts, and a word of them
 * is read 8 bytes at a time: the bytes of x (the first in its low byte)
 * that are ASCII letters set their high bit in the result.  Each byte is
 * folded to lower case in 7 bits, where adding 0x80 - 'a' carries into the
 * high bit from 'a' up and adding 0x80 - '{' from past 'z', and no sum
 * carries out of its byte. */
static inline uint64_t ascii_letters8(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101ull, high = 0x80 * ones;
    uint64_t folded = (x | 0x20 * ones) & ~high;
    uint64_t from_a = folded + (0x80 - 'a') * ones, past_z = folded + (0x80 - '{') * ones;
    return from_a & ~past_z & ~x & high;
}

/* The end of the run of ASCII letters from j.  A word's end within the 8
 * bytes read is one well-predicted branch, where a loop over its letters
 * left by a mispredicted one. */
static inline size_t ascii_letters_from(const uint8_t *s, size_t n, size_t j)
{
    for (; j + 8 <= n; j += 8) {
        uint64_t stop = ~ascii_letters8(tb_load_le64(s + j)) & 0x8080808080808080ull;
        if (stop)
            return j + (size_t)__builtin_ctzll(stop) / 8;
    }
    while (j < n && s[j] < 0x80 && (bmp_class[s[j]] & F_L))
        j++;
    return j;
}

/* The end of \p{L}+ from j (j may be its end already), or 0 at an
 * invalid byte: runs of ASCII letters read by ascii_letters_from, the
 * characters of other scripts one by one. */
static inline __attribute__((always_inline)) size_t letters_from(const uint8_t *s, size_t n,
                                                                   size_t j)
{
    for (;;) {
        j = ascii_letters_from(s, n, j);
        while (j < n && s[j] >= 0x80) {
            unsigned c;
            uint32_t cp;
            size_t len = char_at(s, n, j, &c, &cp);
            if (!len)
                return 0;
            if (!(c & F_L))
                return j;
            j += len;
        }
        if (j == n || !(bmp_class[s[j]] & F_L))
            return j;
    }
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

/* The last alternatives of both patterns at s[i], once no word matched:
 * up to max_digits \p{N}, then ' ?[^\s\p{L}\p{N}]+' followed by line
 * breaks (and '/' when slash), then the white-space ones.  c0/cp0 are the
 * character at i, l1/c1 the next one's length (0: none) and class. */
static size_t match_rest(const uint8_t *s, size_t n, size_t i, size_t l0, unsigned c0,
                         uint32_t cp0, size_t l1, unsigned c1, int max_digits, int slash)
{
    if (c0 & F_N)
        return run_of(s, n, i + l0, F_N, F_N, (size_t)max_digits - 1);
    const unsigned other = F_S | F_L | F_N; /* [^\s\p{L}\p{N}]: none of these */
    size_t from = !(c0 & F_S) ? i : cp0 == ' ' && l1 && !(c1 & other) ? i + 1 : SIZE_MAX;
    if (from == SIZE_MAX)
        return match_space(s, n, i);
    size_t j = run_of(s, n, from, other, 0, SIZE_MAX);
    while (j && j < n && (s[j] == '\r' || s[j] == '\n' || (slash && s[j] == '/')))
        j++;
    return j;
}

static size_t match_llama3(const uint8_t *s, size_t n, size_t i, int max_digits)
{
    unsigned c0, c1 = 0;
    uint32_t cp0, cp1;
    size_t l0 = char_at(s, n, i, &c0, &cp0), l1 = 0, e;
    if (!l0)
        return 0;
    if (cp0 == '\'' && (e = contraction(s, n, i + 1)))
        return e;
    if (c0 & F_L)
        return letters_from(s, n, i + l0);
    if (i + l0 < n && !(l1 = char_at(s, n, i + l0, &c1, &cp1)))
        return 0;
    if (!(c0 & F_N) && cp0 != '\r' && cp0 != '\n' && l1 && (c1 & F_L))
        return letters_from(s, n, i + l0 + l1);
    return match_rest(s, n, i, l0, c0, cp0, l1, c1, max_digits, 0);
}

/* o200k's first two alternatives from i0, after the optional prefix:
 * [upper]*[lower]+ (a1) or [upper]+[lower]* (!a1), then an optional
 * contraction.  1 with *end, 0 when it does not match, -1 at an invalid
 * byte. */
static int cased_word(const uint8_t *s, size_t n, size_t i0, int a1, size_t *end)
{
    size_t j = i0, last_lower = SIZE_MAX, len;
    unsigned c = 0;
    uint32_t cp;
    while (j < n) {
        if (!(len = char_at(s, n, j, &c, &cp)))
            return -1;
        if (!(c & F_U))
            break;
        if (c & F_W)
            last_lower = j;
        j += len;
    }
    size_t k = j; /* where [lower] starts */
    if (a1) {
        /* [upper]* gives back characters until [lower]+ can match one */
        if (j == n || !(c & F_W))
            k = last_lower;
        if (k == SIZE_MAX)
            return 0;
    } else if (j == i0) {
        return 0;
    }
    size_t e = run_of(s, n, k, F_W, F_W, SIZE_MAX);
    if (!e)
        return -1;
    if (e < n && s[e] == '\'' && (k = contraction(s, n, e + 1)))
        e = k;
    *end = e;
    return 1;
}

static size_t match_o200k(const uint8_t *s, size_t n, size_t i)
{
    unsigned c0, c1 = 0;
    uint32_t cp0, cp1;
    size_t l0 = char_at(s, n, i, &c0, &cp0), l1 = 0, e;
    if (!l0 || (i + l0 < n && !(l1 = char_at(s, n, i + l0, &c1, &cp1))))
        return 0;
    int prefix = !(c0 & (F_L | F_N)) && cp0 != '\r' && cp0 != '\n' && l1;
    /* the alternatives in order, each with the prefix before without */
    for (int a1 = 1; a1 >= 0; a1--) {
        for (int with = prefix; with >= 0; with--) {
            int r = cased_word(s, n, with ? i + l0 : i, a1, &e);
            if (r)
                return r < 0 ? 0 : e;
        }
    }
    return match_rest(s, n, i, l0, c0, cp0, l1, c1, 3, 1);
}

static inline size_t fast_match(tok_fast_t kind, const uint8_t *s, size_t n, size_t pos)
{
    switch (kind) {
    case TOK_FAST_LLAMA3:
        return match_llama3(s, n, pos, 3);
    case TOK_FAST_QWEN2:
        return match_llama3(s, n, pos, 1);
    case TOK_FAST_O200K:
        return match_o200k(s, n, pos);
    case TOK_FAST_NONE:
        break;
    }
    return 0;
}

size_t tok_fast_match(tok_fast_t kind, const uint8_t *s, size_t n, size_t pos)
{
    return fast_match(kind, s, n, pos);
}

/* The loop over the matches, made once for each kind (the switches of
 * tok_fast_words call it with a constant): the matcher inlines into it, a
 * call of tok_fast_match and its switch a word were a tenth of the
 * instructions of cutting Llama 3's words. */
static inline __attribute__((always_inline)) size_t
words_of(tok_fast_t kind, const uint8_t *s, size_t n, uint32_t base, tok_spans_t *words)
{
    size_t pos = 0, me;
    while (pos < n && (me = fast_match(kind, s, n, pos))) {
        if (tb_vec_push(words, ((tok_span_t){base + (uint32_t)pos, (uint32_t)(me - pos)})))
            return SIZE_MAX;
        pos = me;
    }
    return pos;
}

size_t tok_fast_words(tok_fast_t kind, const uint8_t *s, size_t n, uint32_t base,
                      tok_spans_t *words)
{
    switch (kind) {
    case TOK_FAST_LLAMA3:
        return words_of(TOK_FAST_LLAMA3, s, n, base, words);
    case TOK_FAST_QWEN2:
        return words_of(TOK_FAST_QWEN2, s, n, base, words);
    case TOK_FAST_O200K:
        return words_of(TOK_FAST_O200K, s, n, base, words);
    case TOK_FAST_NONE:
        break;
    }
    return 0;
}
