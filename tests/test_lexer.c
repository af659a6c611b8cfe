/*
 * Tests of lexer/: the regex parser (errors with positions, full matches
 * against PCRE2), the lazy derivative DFA (limits that fail cleanly), and
 * token masks of every trie layout over the llama3 vocabulary against the
 * two oracles of oracle.h, which share nothing with the derivative machinery:
 *   - a Thompson NFA built here from the parsed terms and simulated over
 *     each token's bytes from the NFA state set after the prefix (a token is
 *     allowed iff a state that can still reach the end survives);
 *   - PCRE2 partial matching (PCRE2_PARTIAL_HARD: is prefix + token the
 *     prefix of some match?), for tokens where prefix + token is valid UTF-8.
 * Masks are checked from the start and from states reached by consuming
 * prefixes, for real-world regexes and for random ones, and through each
 * of a walk's paths (the table inline, transitions derived mid-walk as the
 * table grows, a recognizer without a table).  The built-in recognizers
 * (any, utf8, letters, digits) against PCRE2 on every layout.  Last,
 * `tokbench mask` ($BUILD/tokbench) on good and bad input.
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
#include "../lexer/builtin.h"
#include "../lexer/deriv.h"
#include "../lexer/lexemes.h"
#include "../lexer/rec.h"
#include "../lexer/regex.h"
#include "../trie/trie.h"
#include "oracle.h"
#include "support.h"

#define LLAMA3 "data/cache/llama3/tokenizer.json"

/* ---- parser errors -------------------------------------------------------- */

static void parse_errors_name_the_position(void **state)
{
    (void)state;
    static const struct {
        const char *pattern, *want;
    } cases[] = {
        {"a(b", "unbalanced parenthesis at offset 1"},
        {"a(", "unbalanced parenthesis at offset 1"},
        {"x(a|", "unbalanced parenthesis at offset 1"},
        {"((a)", "unbalanced parenthesis at offset 0"},
        {"ab)", "unbalanced parenthesis at offset 2"},
        {"*a", "nothing to repeat at offset 0"},
        {"a^*", "nothing to repeat at offset 2"},
        {"(^a){17}", "a repetition above 16 of a group that holds an anchor"},
        {"a**", "quantifier cannot follow a quantifier at offset 2"},
        {"a++", "possessive quantifiers are not supported at offset 2"},
        {"(a)\\1", "back-references are not supported at offset 3"},
        {"(?<n>a)\\k<n>", "back-references are not supported at offset 7"},
        {"a(?=b)", "look-around assertions are not supported at offset 1"},
        {"a(?!b)", "look-around assertions are not supported at offset 1"},
        {"(?<=a)b", "look-around assertions are not supported at offset 0"},
        {"a\\bc", "assertion \\b is not supported"},
        {"[abc", "unterminated character class at offset 0"},
        {"[z-a]", "range out of order at offset 1"},
        {"a{1000001}", "repetition bound 1000001 is above the limit of 1000000 at offset 1"},
        {"a{3,2}", "repetition bounds out of order at offset 1"},
        {"\\x4", "expected a hex digit at offset 3"},
        {"\\u{110000}", "code point out of range"},
        {"\\p{Xx}", "unknown or unsupported Unicode property 'Xx' at offset 0"},
        {"ab\\", "trailing backslash at offset 2"},
        {"\\q", "unknown escape \\q at offset 0"},
        {"[[:alpha:]]", "POSIX classes [:name:] are not supported at offset 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        test_regex_refused(cases[i].pattern, cases[i].want);
    /* A group read once near the top is still too deep below 999 others,
     * and fine below 998 (regex.c's memo serves a group wherever its own
     * nesting stays within the limit). */
    char deep[4096];
    for (int outer = 998; outer <= 999; outer++) {
        size_t n = 0;
        memcpy(deep, "((a))", 5), n += 5;
        memset(deep + n, '(', (size_t)outer), n += (size_t)outer;
        memcpy(deep + n, "((a))", 5), n += 5;
        memset(deep + n, ')', (size_t)outer), n += (size_t)outer;
        deep[n] = 0;
        tb_err_t err;
        lex_dfa_t *d = lex_dfa_new(deep, NULL, &err);
        if (outer == 998 && !d)
            fail_msg("%s", err.msg);
        lex_dfa_free(d);
        if (outer == 999)
            test_regex_refused(deep, "groups nested too deeply at offset 1005");
    }
}

/* ---- full matches against PCRE2 ------------------------------------------------ */

static pcre2_code *pcre_compile_or_fail(const char *pattern, uint32_t extra)
{
    int code;
    PCRE2_SIZE off;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_ANCHORED | PCRE2_NO_START_OPTIMIZE | extra, &code, &off, NULL);
    if (!re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(code, msg, sizeof msg);
        fail_msg("PCRE2 refuses '%s': %s", pattern, (char *)msg);
    }
    return re;
}

static int dfa_full_match(lex_dfa_t *d, const char *s, size_t n)
{
    uint32_t st = lex_dfa_feed(d, LEX_START, (const uint8_t *)s, n);
    return st != LEX_DEAD && lex_dfa_accepting(d, st);
}

static int pcre_full_match(pcre2_code *re, pcre2_match_data *md, const char *s, size_t n)
{
    return pcre2_match(re, (PCRE2_SPTR)s, n, 0, 0, md, NULL) >= 0;
}

static void full_matches_agree_with_pcre2(void **state)
{
    (void)state;
    static const char *const patterns[] = {
        "[a-z]+@[a-z]+\\.(com|org)", "\\d{3}-\\d{2}-\\d{4}", "(?i:hello) world",
        "[^\"\\\\\\x00-\\x1f]*\"", "\\p{L}+", "\\P{L}", "\\p{Lu}\\p{Ll}*", "\\p{N}{1,3}",
        "[^\\r\\n\\p{L}\\p{N}]?\\p{L}+", "a{2,4}b{3}c{1,}", ".+", "\\w+\\s\\W\\S\\D",
        "\\x41\\x{e9}\\x{1F600}", "[\\x{e0}-\\x{ff}]+", "colou?r", "(ab|a)(bc|c)",
        "(?i)ab(?-i:c)", "[]a]+", "[a-]+", "^abc$", "(?:x|y){0,3}z", "é+ß",
        "[\\d\\s]+", "\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\\\\\^\\$",
        "(?:ab|c){2,600}d", "a{0,60000}b", "(a{10}){10}",
        /* the same group text under (?i) and not (regex.c's group memo) */
        "(?:k|x)(?i)(?:k|x)(?-i:(?:k|x))", "((?i)k)k((?i)k)k",
    };
    static const char *const texts[] = {
        "", "a", "abc", "joe@site.com", "joe@site.net", "123-45-6789", "12-345-6789",
        "HeLLo world", "hello World", "abc\"", "a\"b\"", "\x01\"", "héllo", "Ωμέγα",
        "1", "123", "1234", "٣", "x", "Xyz", "xYZ", "aab", "aabbbc", "aaaabbbccc",
        "aaaaabbbc", "a\nb", "\n", "a_1 % b", "Aé😀", "àÿ", "color", "colour",
        "abc", "abbc", "ABc", "ABC", "]a]", "a-a", "z", "xyz", "xyxz", "ééß", "ß",
        "1 2\t3", ".*+?()[]{}|\\^$", " hello", "!héllo", "\u00b2", "10", "٣٤",
        "kKk", "kKK", "KKk", "xXx", "kkkk", "KkKk", "kkKk",
    };
    pcre2_match_data *md = pcre2_match_data_create(8, NULL);
    for (size_t p = 0; p < sizeof patterns / sizeof *patterns; p++) {
        tb_err_t err;
        lex_dfa_t *d = lex_dfa_new(patterns[p], NULL, &err);
        if (!d)
            fail_msg("%s", err.msg);
        pcre2_code *re = pcre_compile_or_fail(patterns[p], PCRE2_ENDANCHORED);
        for (size_t t = 0; t < sizeof texts / sizeof *texts; t++) {
            size_t n = strlen(texts[t]);
            int want = pcre_full_match(re, md, texts[t], n);
            if (dfa_full_match(d, texts[t], n) != want)
                fail_msg("'%s' on \"%s\": PCRE2 says %d", patterns[p], texts[t], want);
        }
        pcre2_code_free(re);
        lex_dfa_free(d);
    }
    pcre2_match_data_free(md);
}

/* Anchors anywhere and empty alternatives, against PCRE2 with $ at the end
 * only (PCRE2_DOLLAR_ENDONLY, as regex.h says). */
static void anchors_and_empty_alternatives_agree_with_pcre2(void **state)
{
    (void)state;
    static const char *const patterns[] = {
        "^a|b$", "(^a|b)c", "a(b$|c)", "(a|)", "(|a)b", "x(a||b)y", "()", "", "a|",
        "|a", "a^", "$a", "^$", "$^", "(^)*a", "a($)?", "(^a)?b", "(a$)*", "(?:^|,)x",
        "x(?:,|$)", "^(a|b$)c?", "(^|a)+b", "((^a|b)(c$|d))", "(a|^)(b|$)",
    };
    static const char *const texts[] = {
        "", "a", "b", "c", "ab", "ac", "bc", "abc", "xy", "xay", "xby", "xaby", "x",
        ",x", "x,", "ax", "aa", "ba", "aab", "cd", "bd", "bcd", "acd",
    };
    pcre2_match_data *md = pcre2_match_data_create(8, NULL);
    for (size_t p = 0; p < sizeof patterns / sizeof *patterns; p++) {
        tb_err_t err;
        lex_dfa_t *d = lex_dfa_new(patterns[p], NULL, &err);
        if (!d)
            fail_msg("%s", err.msg);
        pcre2_code *re = pcre_compile_or_fail(patterns[p],
                                              PCRE2_ENDANCHORED | PCRE2_DOLLAR_ENDONLY);
        for (size_t t = 0; t < sizeof texts / sizeof *texts; t++) {
            size_t n = strlen(texts[t]);
            int want = pcre_full_match(re, md, texts[t], n);
            if (dfa_full_match(d, texts[t], n) != want)
                fail_msg("'%s' on \"%s\": PCRE2 says %d", patterns[p], texts[t], want);
        }
        pcre2_code_free(re);
        lex_dfa_free(d);
    }
    pcre2_match_data_free(md);
}


/* Top-level look-aheads (intersections) against PCRE2 on every string of up
 * to 7 symbols over the patterns' alphabet: the same full matches, and,
 * for texts of up to 4, a live state exactly where some text of up to 7
 * that PCRE2 matches goes on from there (so an empty intersection is found
 * dead; every pattern here completes within 3 more symbols).  PCRE2's own
 * partial matching cannot say that: it gives up inside a look-ahead. */
#define LA_SYMS 6
#define LA_MAX 7
#define LA_LIVE 4

/* s[0..len) spelled from index k, first symbol most significant. */
static void la_text(size_t k, size_t len, char *s)
{
    static const char alpha[LA_SYMS] = {'a', 'b', 'x', 'q', '1', '"'};
    for (size_t i = len; i-- > 0; k /= LA_SYMS)
        s[i] = alpha[k % LA_SYMS];
}

static void lookaheads_agree_with_pcre2(void **state)
{
    (void)state;
    static const char *const patterns[] = {
        "(?=[ab]*x)[abx]{2,4}", "q(?=.{0,3}$)[0-9ab]+", "(?=a)(?=.b)[ab]+",
        "(?=(ab)*$)a(ba)*b?", "x(?=a|b)[ab]|y", "(?=a)b", "(?=a{3})a{1,5}",
        "\"(?=[^\"]*1[^\"]*\"$)[^\"]{2,4}\"", "(?=.*b$)a*(?=a?$)[ab]*",
        "(?=[a-x]{3}$)(?:a|bx)+", "q|(?=(aa|bb)$)(ab|ba)", "(?=a(bb)*$)a(b|bbb)(bb)*x?",
        /* negative look-aheads: the complement within the rest */
        "(?!a)[ab]*", "(?!(ab)*$)[ab]*", "(?!ab|ba)(?=.*b)[ab]{1,4}", "x(?!a*$)[ab]*",
        "(?!a)(?!b)[abx]+", "\"(?![^\"]*1[^\"]*\"$)[^\"]{0,4}\"",
        "\"(?=[ab]*\"$)(?!a\"$)(?!b[ab]\"$)[^\"]*\"", "(?![ab]{2})[abx]{0,3}|q",
        "(?!.*b.*b)(?!x)[abx]*", "(?!(a|x)*$)(?=(a|b)*$).*", "(?!.{0,3}$)(?!.*q)[a-x\"]+",
        /* sides whose lengths cannot meet (deriv.c's term_lens) */
        "(?=.{0,3}$)(?:ab|[ab]{5})x?", "(?=[ab]{0,4}$)(?:a+b+|bbbbb+)",
        "(?=(?:a|bb){0,2}$)[ab]*a", "(?!.{0,2}$)(?:ab|[abx]{4})",
    };
    size_t count[LA_MAX + 1];
    uint8_t *match[LA_MAX + 1];
    count[0] = 1;
    for (size_t l = 1; l <= LA_MAX; l++)
        count[l] = count[l - 1] * LA_SYMS;
    const lex_dfa_opts_t look = {.lookahead = 1};
    pcre2_match_data *md = pcre2_match_data_create(8, NULL);
    for (size_t p = 0; p < sizeof patterns / sizeof *patterns; p++) {
        tb_err_t err;
        lex_dfa_t *d = lex_dfa_new(patterns[p], &look, &err);
        if (!d)
            fail_msg("%s", err.msg);
        pcre2_code *re = pcre_compile_or_fail(patterns[p],
                                              PCRE2_ENDANCHORED | PCRE2_DOLLAR_ENDONLY);
        char s[LA_MAX];
        for (size_t l = 0; l <= LA_MAX; l++) {
            match[l] = calloc(count[l], 1);
            for (size_t k = 0; k < count[l]; k++) {
                la_text(k, l, s);
                match[l][k] = (uint8_t)pcre_full_match(re, md, s, l);
                if (dfa_full_match(d, s, l) != match[l][k])
                    fail_msg("'%s' on \"%.*s\": PCRE2 says %d", patterns[p], (int)l, s,
                             match[l][k]);
            }
        }
        for (size_t l = 0; l <= LA_LIVE; l++)
            for (size_t k = 0; k < count[l]; k++) {
                int viable = 0;
                for (size_t m = l; m <= LA_MAX && !viable; m++) {
                    size_t span = count[m - l];
                    for (size_t j = k * span; j < (k + 1) * span && !viable; j++)
                        viable = match[m][j];
                }
                la_text(k, l, s);
                uint32_t st = lex_dfa_feed(d, LEX_START, (const uint8_t *)s, l);
                /* the start of an empty language is a state of its own;
                 * past it, a state is dead iff it is LEX_DEAD */
                const uint64_t *al = st != LEX_DEAD ? lex_dfa_allowed(d, st) : NULL;
                int live = l ? st != LEX_DEAD
                             : al && (lex_dfa_accepting(d, st) || al[0] | al[1] | al[2] | al[3]);
                if (live != viable)
                    fail_msg("'%s' after \"%.*s\": live %d, a match goes on from there: %d",
                             patterns[p], (int)l, s, live, viable);
            }
        for (size_t l = 0; l <= LA_MAX; l++)
            free(match[l]);
        assert_int_equal(lex_dfa_error(d, &err), 0);
        pcre2_code_free(re);
        lex_dfa_free(d);
    }
    pcre2_match_data_free(md);
}

/* Where look-aheads are taken (JSON Schema's lexemes), those the lexer
 * cannot write exactly are refused with their offset. */
static void unsupported_lookaround_is_refused(void **state)
{
    (void)state;
    const lex_dfa_opts_t look = {.lookahead = 1};
    static const struct {
        const char *pattern, *msg;
    } cases[] = {
        {"a(b(?=c))", "a look-ahead inside a group is not supported at offset 3"},
        {"a(b(?!c))", "a look-ahead inside a group is not supported at offset 3"},
        {"(?<=a)b", "look-behind is not supported at offset 0"},
        {"(?<!a)b", "look-behind is not supported at offset 0"},
        {"x(?!^a)a", "a ^ inside a look-ahead is not supported at offset 1"},
        {"x(?=^a)a", "a ^ inside a look-ahead is not supported at offset 1"},
        {"(?=a", "unbalanced parenthesis at offset 0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tb_err_t err;
        lex_dfa_t *d = lex_dfa_new(cases[i].pattern, &look, &err);
        assert_null(d);
        if (!strstr(err.msg, cases[i].msg))
            fail_msg("'%s': %s", cases[i].pattern, err.msg);
    }
}

/* ---- the mask checks ------------------------------------------------------------ */

static test_tries_t fx;

static int setup_vocab(void **state)
{
    (void)state;
    return test_tries_load(&fx, LLAMA3);
}

static int teardown_vocab(void **state)
{
    (void)state;
    test_tries_free(&fx);
    return 0;
}

typedef struct {
    size_t masks, allowed_total, pcre_checked;
} stats_t;

/* Checks every layout's mask after `prefix` against the NFA oracle (all
 * tokens) and, when pcre is given, PCRE2 (tokens completing valid UTF-8). */
static void check_after(const char *pattern, lex_dfa_t *d, nfa_t *a, uint32_t start,
                        pcre2_code *re, pcre2_match_data *md, const uint8_t *prefix,
                        size_t plen, stats_t *st)
{
    uint32_t ds = lex_dfa_feed(d, LEX_START, prefix, plen);
    tb_err_t err;
    if (lex_dfa_error(d, &err))
        fail_msg("%s", err.msg);
    nset_t cur;
    nfa_after(a, start, prefix, plen, &cur);
    if ((ds != LEX_DEAD) != (cur.n != 0))
        fail_msg("'%s' after '%.*s': DFA live %d, oracle live %d", pattern, (int)plen,
                 prefix, ds != LEX_DEAD, cur.n != 0);
    if (ds == LEX_DEAD) {
        free(cur.v);
        return;
    }
    tb_bitset_t want, got;
    assert_int_equal(tb_bitset_init(&want, trie_mask_bits(fx.tries[0])), 0);
    assert_int_equal(tb_bitset_init(&got, trie_mask_bits(fx.tries[0])), 0);
    nfa_mask(a, &cur, &fx.keys, &want);
    for (size_t l = 0; l < fx.ntries; l++) {
        lex_rec_t r;
        assert_int_equal(lex_rec_init(&r, d, fx.keys.max_len, &err), 0);
        uint64_t nodes = 0;
        if (lex_mask(fx.tries[l], &r, ds, &got, &nodes, &err))
            fail_msg("%s", err.msg);
        lex_rec_free(&r);
        if (!tb_bitset_equal(&got, &want)) {
            for (size_t id = 0; id < want.nbits; id++)
                if (tb_bitset_get(&got, id) != tb_bitset_get(&want, id)) {
                    size_t n;
                    const uint8_t *s = tok_vocab_token(tok_vocab(fx.tok), (uint32_t)id, &n);
                    fail_msg("'%s' after '%.*s', layout %s: token %zu '%.*s' is %d, "
                             "oracle says %d", pattern, (int)plen, prefix, fx.names[l], id,
                             (int)n, s, tb_bitset_get(&got, id), tb_bitset_get(&want, id));
                }
        }
        st->masks++;
    }
    st->allowed_total += tb_bitset_count(&want);
    if (re) {
        uint8_t buf[2048];
        const tok_vocab_t *v = tok_vocab(fx.tok);
        for (size_t i = 0; i < fx.keys.n; i++) {
            const trie_key_t *key = &fx.keys.keys[i];
            if (plen + key->len > sizeof buf)
                continue;
            memcpy(buf, prefix, plen);
            memcpy(buf + plen, key->s, key->len);
            if (tb_utf8_validate(buf, plen + key->len) != plen + key->len)
                continue;
            int p = pcre_viable(re, md, buf, plen + key->len);
            if (p != tb_bitset_get(&want, key->id)) {
                (void)v;
                fail_msg("'%s' after '%.*s': token '%.*s' (first byte 0x%02x): PCRE2 "
                         "says %d, mask %d", pattern, (int)plen, prefix, (int)key->len,
                         key->s, key->s[0], p,
                         tb_bitset_get(&want, key->id));
            }
            st->pcre_checked++;
        }
    }
    tb_bitset_free(&want);
    tb_bitset_free(&got);
    free(cur.v);
}

/* A prefix of `len` bytes reached by walking random live bytes of the DFA
 * (the oracle then says independently whether it is live). */
static size_t random_prefix(lex_dfa_t *d, uint8_t *out, size_t len)
{
    uint32_t s = LEX_START;
    size_t n = 0;
    while (n < len) {
        const uint64_t *al = lex_dfa_allowed(d, s);
        uint8_t cand[256];
        unsigned nc = 0;
        for (unsigned b = 0; b < 256; b++)
            if ((al[b >> 6] >> (b & 63)) & 1)
                cand[nc++] = (uint8_t)b;
        if (!nc)
            break;
        out[n++] = cand[test_rnd(nc)];
        s = lex_dfa_next(d, s, out[n - 1]);
    }
    return n;
}

static void check_pattern(const char *pattern, const char *const *prefixes, size_t nprefix,
                          int use_pcre, int random_prefixes, stats_t *st)
{
    tb_err_t err;
    lex_dfa_t *d = lex_dfa_new(pattern, NULL, &err);
    if (!d)
        fail_msg("%s", err.msg);
    nfa_t a;
    uint32_t start;
    if (nfa_build(&a, pattern, &start, &err))
        fail_msg("%s", err.msg);
    /* PCRE2 refuses PCRE2_ENDANCHORED with partial matching; \\z does the
     * same job, and in hard partial mode it counts as partial at the end. */
    char anchored[4096];
    snprintf(anchored, sizeof anchored, "(?:%s)\\z", pattern);
    pcre2_code *re = use_pcre ? pcre_compile_or_fail(anchored, 0) : NULL;
    pcre2_match_data *md = re ? pcre2_match_data_create_from_pattern(re, NULL) : NULL;
    for (size_t i = 0; i < nprefix; i++)
        check_after(pattern, d, &a, start, re, md, (const uint8_t *)prefixes[i],
                    strlen(prefixes[i]), st);
    for (int i = 0; i < random_prefixes; i++) {
        uint8_t p[16];
        size_t n = random_prefix(d, p, 1 + test_rnd(sizeof p));
        /* Random bytes may stop inside a UTF-8 sequence, so PCRE2 (which
         * wants valid UTF-8) only checks the named prefixes. */
        check_after(pattern, d, &a, start, NULL, NULL, p, n, st);
    }
    if (md)
        pcre2_match_data_free(md);
    if (re)
        pcre2_code_free(re);
    nfa_free(&a);
    lex_dfa_free(d);
}

#define WORDS "the|quick|brown|fox|jumps|over|lazy|dog|and|then|there|these|those|" \
              "this|that|what|when|where|which|while|who|whom|whose|why|how|into|" \
              "onto|upon|under|about|above|after|again|against|all|am|an|any|are|" \
              "because|been|before|being|below|between|both|but|by|could|did|do"

static void real_world_regexes(void **state)
{
    (void)state;
    static const struct {
        const char *pattern;
        const char *prefixes[4];
    } cases[] = {
        {"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}",
         {"", "john.doe", "john@exa", "john@example.c"}},
        {"\\(?\\d{3}\\)?[-. ]?\\d{3}[-. ]?\\d{4}", {"", "(555", "(555) 12", "555-123-"}},
        {"\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])", {"", "2024", "2024-1", "2024-12-3"}},
        {"([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d)?", {"", "2", "23:5", "12:34:"}},
        {"((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)",
         {"", "192.", "192.168.2", "10.0.0."}},
        {"https?://[a-zA-Z0-9.-]+(:\\d{1,5})?(/[a-zA-Z0-9._~%!$&'()*+,;=:@-]*)*"
         "(\\?[a-zA-Z0-9._~%&=+-]*)?",
         {"", "http", "https://exa", "http://a.com/x?"}},
        {"\\d{3}-\\d{2}-\\d{4}", {"", "123", "123-4", "123-45-67"}},
        {"\\{\\s*\"name\"\\s*:\\s*\"([^\"\\\\\\x00-\\x1f]|\\\\[\"\\\\/bfnrt]|\\\\u[0-9a-fA-F]{4})*\""
         "\\s*,\\s*\"age\"\\s*:\\s*-?(0|[1-9]\\d*)(\\.\\d+)?([eE][+-]?\\d+)?\\s*\\}",
         {"", "{\"na", "{\"name\": \"Jo", "{\"name\": \"Jo\", \"age\": 4"}},
        {"(" WORDS ")( (" WORDS "))*", {"", "th", "the quick ", "the quick br"}},
        {"\"([^\"\\\\\\x00-\\x1f]|\\\\[\"\\\\/bfnrt]|\\\\u[0-9a-fA-F]{4})*\"",
         {"", "\"", "\"abc\\", "\"\\u00"}},
        {"[^\"\\\\\\x00-\\x1f]*\"", {"", "abc", "héllo"}},
        {"[0-9]+", {"", "1", "007"}},
        {"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}|"
         " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+",
         {"", " ", "'", "12"}},
        {"\\p{Lu}\\p{Ll}+( \\p{Lu}\\p{Ll}+)*", {"", "Émile", "Émile Z"}},
    };
    stats_t st = {0};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t np = 0;
        while (np < 4 && cases[i].prefixes[np])
            np++;
        check_pattern(cases[i].pattern, cases[i].prefixes, np, 1, 2, &st);
    }
    print_message("%zu masks checked against the oracle, %zu allowed tokens in all, "
                  "%zu token verdicts checked against PCRE2\n", st.masks, st.allowed_total,
                  st.pcre_checked);
    assert_true(st.allowed_total > 0);
}

/* ---- random regexes ------------------------------------------------------------------ */

static void gen_regex(char *out, size_t cap, int depth)
{
    static const char *const atoms[] = {
        "a", "e", "t", "s", " ", "th", "in", "er", "[a-z]", "[^a-z]", "\\d", "\\w", "\\s",
        ".", "[aeiou]", "[^aeiou ]", "(?i:t)", "\\x41", "é", "[\\x{e0}-\\x{ff}]",
        "\\p{Lu}", "[0-5]", "\\W",
    };
    char a[512], b[512];
    int k = depth <= 0 ? 0 : (int)test_rnd(7);
    switch (k) {
    case 0:
        snprintf(out, cap, "%s", atoms[test_rnd(sizeof atoms / sizeof *atoms)]);
        return;
    case 1:
    case 2:
        gen_regex(a, sizeof a, depth - 1);
        gen_regex(b, sizeof b, depth - 1);
        snprintf(out, cap, "%s%s", a, b);
        return;
    case 3:
        gen_regex(a, sizeof a, depth - 1);
        gen_regex(b, sizeof b, depth - 1);
        snprintf(out, cap, "(%s|%s)", a, b);
        return;
    default: {
        static const char *const q[] = {"*", "+", "?", "{2}", "{1,3}", "{0,2}", "{2,}"};
        gen_regex(a, sizeof a, depth - 1);
        snprintf(out, cap, "(?:%s)%s", a, q[test_rnd(sizeof q / sizeof *q)]);
        return;
    }
    }
}

static void random_regexes(void **state)
{
    (void)state;
    stats_t st = {0};
    for (int i = 0; i < 40; i++) {
        char pat[2048];
        gen_regex(pat, sizeof pat, 4);
        static const char *const pre[] = {""};
        check_pattern(pat, pre, 1, 1, 2, &st);
    }
    print_message("%zu masks checked, %zu allowed tokens in all, %zu PCRE2 verdicts\n",
                  st.masks, st.allowed_total, st.pcre_checked);
}

/* ---- the walk's three paths ---------------------------------------------------- */

/* lex_rec_t without its table: the same callbacks behind a trie_rec_t whose
 * tab is zero, so that every layout walks through push_byte and pop_bytes
 * (the generic path of recognizers that have no table). */
typedef struct {
    trie_rec_t rec;
    lex_rec_t *inner;
} bare_rec_t;

static int bare_push(trie_rec_t *r, uint8_t b)
{
    trie_rec_t *in = &((bare_rec_t *)r)->inner->rec;
    return in->push_byte(in, b);
}

static void bare_pop(trie_rec_t *r, uint32_t n)
{
    trie_rec_t *in = &((bare_rec_t *)r)->inner->rec;
    in->pop_bytes(in, n);
}

static void bare_allowed(trie_rec_t *r, uint64_t set[4])
{
    trie_rec_t *in = &((bare_rec_t *)r)->inner->rec;
    in->allowed_bytes(in, set);
}

/* The NFA oracle's mask from the start. */
static void oracle_mask(const char *pattern, tb_bitset_t *want)
{
    nfa_t a;
    uint32_t start;
    tb_err_t err;
    if (nfa_build(&a, pattern, &start, &err))
        fail_msg("%s", err.msg);
    nset_t cur;
    nfa_after(&a, start, NULL, 0, &cur);
    tb_bitset_clear_all(want);
    nfa_mask(&a, &cur, &fx.keys, want);
    free(cur.v);
    nfa_free(&a);
}

static void expect_mask(const tb_bitset_t *got, const tb_bitset_t *want,
                        const char *pattern, const char *layout, const char *path)
{
    if (!tb_bitset_equal(got, want))
        fail_msg("'%s', layout %s, %s: %zu tokens, the NFA oracle %zu", pattern,
                 layout, path, tb_bitset_count(got), tb_bitset_count(want));
}

/*
 * Every layout, three ways, against the NFA oracle:
 *   lazy    a fresh DFA, so the walk meets transitions not derived yet and
 *           goes through push_byte mid-walk; the patterns reach more states
 *           than the fresh DFA has room for, so its table is reallocated
 *           during the walk (under ASan, always moved), and the walk must
 *           reload it;
 *   inline  the same DFA again, now complete: the table alone;
 *   calls   a fresh DFA behind a recognizer without a table (bare_rec_t).
 * Each path leaves the recognizer's stack where it found it.
 */
static void walk_paths_agree(void **state)
{
    (void)state;
    static const char *const patterns[] = {
        "[a-z ]*[aeiou][a-z ]{6}", /* 2^7 ways to place the vowels: >100 states */
        "[^\"\\\\\\x00-\\x1f]*\"",
        "[0-9]+",
        "(\\p{L}|[0-9]){2,5}[ .]",
    };
    tb_err_t err;
    tb_bitset_t want, got;
    assert_int_equal(tb_bitset_init(&want, trie_mask_bits(fx.tries[0])), 0);
    assert_int_equal(tb_bitset_init(&got, trie_mask_bits(fx.tries[0])), 0);
    int grew = 0;
    for (size_t i = 0; i < sizeof patterns / sizeof *patterns; i++) {
        oracle_mask(patterns[i], &want);
        for (size_t l = 0; l < fx.ntries; l++) {
            lex_dfa_t *d = lex_dfa_new(patterns[i], NULL, &err);
            assert_non_null(d);
            size_t cap = d->cap, states = d->nstates;
            lex_rec_t r;
            assert_int_equal(lex_rec_init(&r, d, fx.keys.max_len, &err), 0);
            if (lex_mask(fx.tries[l], &r, LEX_START, &got, NULL, &err))
                fail_msg("%s", err.msg);
            expect_mask(&got, &want, patterns[i], fx.names[l], "lazy");
            assert_true(d->nstates > states);
            grew += d->nstates > cap;
            assert_int_equal(r.rec.tab.depth, 0);
            if (lex_mask(fx.tries[l], &r, LEX_START, &got, NULL, &err))
                fail_msg("%s", err.msg);
            expect_mask(&got, &want, patterns[i], fx.names[l], "inline");
            lex_rec_free(&r);
            lex_dfa_free(d);

            d = lex_dfa_new(patterns[i], NULL, &err);
            assert_non_null(d);
            assert_int_equal(lex_rec_init(&r, d, fx.keys.max_len, &err), 0);
            bare_rec_t b = {.rec = {.push_byte = bare_push, .pop_bytes = bare_pop,
                                    .allowed_bytes = bare_allowed},
                            .inner = &r};
            tb_bitset_clear_all(&got);
            assert_true(trie_walk(fx.tries[l], &b.rec, &got) != UINT64_MAX);
            assert_int_equal(lex_dfa_error(d, &err), 0);
            expect_mask(&got, &want, patterns[i], fx.names[l], "calls");
            assert_int_equal(r.rec.tab.depth, 0);
            lex_rec_free(&r);
            lex_dfa_free(d);
        }
    }
    /* The first pattern outgrew the fresh table on every layout. */
    assert_true(grew >= (int)fx.ntries);
    tb_bitset_free(&want);
    tb_bitset_free(&got);
}

/* For utf8 (PCRE2_UTF): whether s[0..n) begins some valid UTF-8 string.
 * PCRE2's check reports a character cut at the end as truncated before it
 * looks at its second byte (surrogates, overlongs, past U+10FFFF), so a
 * truncated one is completed instead, with every second byte it may need
 * and 0x80 after, and checked whole.  s has room for 3 more bytes. */
static int utf8_viable(pcre2_code *re, pcre2_match_data *md, uint8_t *s, size_t n)
{
    int rc = pcre2_match(re, s, n, 0, 0, md, NULL);
    if (rc >= 0)
        return 1;
    if (rc > PCRE2_ERROR_UTF8_ERR1 || rc < PCRE2_ERROR_UTF8_ERR3)
        return 0; /* invalid, not merely cut short */
    size_t missing = (size_t)(PCRE2_ERROR_UTF8_ERR1 - rc) + 1;
    for (unsigned b = 0x80; b <= 0xBF; b++) {
        s[n] = (uint8_t)b;
        for (size_t k = 1; k < missing; k++)
            s[n + k] = 0x80;
        if (pcre2_match(re, s, n + missing, 0, 0, md, NULL) >= 0)
            return 1;
    }
    return 0;
}

/*
 * The built-in recognizers (lexer/builtin.h) on every layout, from the
 * start and after a prefix, against PCRE2 on prefix + token: partial
 * matching in byte mode for `any`, letters and digits, and for `utf8`
 * PCRE2's UTF-8 check (which refuses overlongs, surrogates and code points
 * past U+10FFFF) through utf8_viable.
 */
static void builtins_agree_with_pcre2(void **state)
{
    (void)state;
    static const struct {
        const char *name, *pcre, *after;
        size_t plen;
        uint32_t flags;
    } cases[] = {
        {"any", "(?s).*\\z", "", 0, 0},
        {"any", "(?s).*\\z", "\xff\x00", 2, 0},
        {"utf8", "(?s).*\\z", "", 0, PCRE2_UTF},
        {"utf8", "(?s).*\\z", "a\xe2\x82", 3, PCRE2_UTF}, /* inside a character */
        {"utf8", "(?s).*\\z", "\xf0", 1, PCRE2_UTF},
        {"letters", "[A-Za-z ]*\\z", "", 0, 0},
        {"digits", "[0-9]*\\z", "4", 1, 0},
    };
    tb_err_t err;
    tb_bitset_t want, got;
    assert_int_equal(tb_bitset_init(&want, trie_mask_bits(fx.tries[0])), 0);
    assert_int_equal(tb_bitset_init(&got, trie_mask_bits(fx.tries[0])), 0);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int ec;
        PCRE2_SIZE eo;
        pcre2_code *re = pcre2_compile((PCRE2_SPTR)cases[i].pcre, PCRE2_ZERO_TERMINATED,
                                       PCRE2_ANCHORED | PCRE2_NO_START_OPTIMIZE |
                                           cases[i].flags,
                                       &ec, &eo, NULL);
        assert_non_null(re);
        pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
        uint8_t buf[4096 + 3];
        const uint8_t *prefix = (const uint8_t *)cases[i].after;
        size_t plen = cases[i].plen;
        tb_bitset_clear_all(&want);
        for (size_t k = 0; k < fx.keys.n; k++) {
            const trie_key_t *key = &fx.keys.keys[k];
            assert_true(plen + key->len + 3 <= sizeof buf);
            memcpy(buf, prefix, plen);
            memcpy(buf + plen, key->s, key->len);
            if (cases[i].flags ? utf8_viable(re, md, buf, plen + key->len)
                               : pcre_viable(re, md, buf, plen + key->len))
                tb_bitset_set(&want, key->id);
        }
        for (size_t k = 0; k < fx.keys.nalias; k++)
            if (tb_bitset_get(&want, fx.keys.alias[2 * k + 1]))
                tb_bitset_set(&want, fx.keys.alias[2 * k]);
        if (!tb_bitset_count(&want))
            fail_msg("case %zu: PCRE2 allows no token", i);
        for (size_t l = 0; l < fx.ntries; l++) {
            lex_dfa_t *d = lex_builtin_dfa(cases[i].name, NULL, &err);
            assert_non_null(d);
            lex_rec_t r;
            assert_int_equal(lex_rec_init(&r, d, fx.keys.max_len, &err), 0);
            uint32_t st = lex_dfa_feed(d, LEX_START, prefix, plen);
            assert_int_not_equal(st, LEX_DEAD);
            assert_int_equal(lex_mask(fx.tries[l], &r, st, &got, NULL, &err), 0);
            if (!tb_bitset_equal(&got, &want))
                fail_msg("%s after '%.*s', layout %s: %zu tokens, PCRE2 %zu", cases[i].name,
                         (int)plen, cases[i].after, fx.names[l], tb_bitset_count(&got),
                         tb_bitset_count(&want));
            lex_rec_free(&r);
            lex_dfa_free(d);
        }
        pcre2_match_data_free(md);
        pcre2_code_free(re);
    }
    assert_null(lex_builtin_dfa("json", NULL, &err));
    assert_string_equal(err.msg, "'json' is not a built-in recognizer (any, utf8, "
                                 "letters, digits)");
    tb_bitset_free(&want);
    tb_bitset_free(&got);
}

/* A recognizer promised a shallower trie than it walks: no layout may run
 * its table (the stack would overflow), each calls back, and push_byte
 * refuses what does not fit, so the mask is the oracle's tokens that fit
 * the stack (depth + 1 < cap: lex_rec_init's max_depth + 1 bytes). */
static void shallow_stack_calls_back(void **state)
{
    (void)state;
    const char *pattern = "[^\"\\\\\\x00-\\x1f]*\"";
    const size_t max_depth = 3;
    tb_err_t err;
    tb_bitset_t want, got;
    assert_int_equal(tb_bitset_init(&want, trie_mask_bits(fx.tries[0])), 0);
    assert_int_equal(tb_bitset_init(&got, trie_mask_bits(fx.tries[0])), 0);
    oracle_mask(pattern, &want);
    for (size_t i = 0; i < fx.keys.n; i++)
        if (fx.keys.keys[i].len > max_depth + 1)
            tb_bitset_clear(&want, fx.keys.keys[i].id);
    for (size_t l = 0; l < fx.ntries; l++) {
        lex_dfa_t *d = lex_dfa_new(pattern, NULL, &err);
        assert_non_null(d);
        lex_rec_t r;
        assert_int_equal(lex_rec_init(&r, d, max_depth, &err), 0);
        assert_false(trie_rec_inline(&r.rec, fx.keys.max_len));
        if (lex_mask(fx.tries[l], &r, LEX_START, &got, NULL, &err))
            fail_msg("%s", err.msg);
        expect_mask(&got, &want, pattern, fx.names[l], "shallow stack");
        assert_int_equal(r.rec.tab.depth, 0);
        lex_rec_free(&r);
        lex_dfa_free(d);
    }
    tb_bitset_free(&want);
    tb_bitset_free(&got);
}

/* ---- limits ---------------------------------------------------------------------- */

static void explosion_fails_cleanly(void **state)
{
    (void)state;
    tb_err_t err;
    lex_dfa_opts_t o = {.max_states = 5000};
    lex_dfa_t *d = lex_dfa_new("(a|b)*a(a|b){20}", &o, &err);
    assert_non_null(d);
    uint8_t s[20000];
    for (size_t i = 0; i < sizeof s; i++)
        s[i] = test_rnd(2) ? 'a' : 'b';
    uint32_t st = lex_dfa_feed(d, LEX_START, s, sizeof s);
    assert_int_equal(st, LEX_DEAD);
    assert_int_equal(lex_dfa_error(d, &err), -1);
    assert_non_null(strstr(err.msg, "regex '(a|b)*a(a|b){20}': the DFA needs more than 5000"));
    assert_true(d->nstates <= 5000);
    /* Sticky: later steps and masks fail too, rather than lie. */
    tb_bitset_t m;
    assert_int_equal(tb_bitset_init(&m, trie_mask_bits(fx.tries[0])), 0);
    lex_rec_t r;
    assert_int_equal(lex_rec_init(&r, d, fx.keys.max_len, &err), 0);
    assert_int_equal(lex_mask(fx.tries[0], &r, LEX_START, &m, NULL, &err), -1);
    lex_rec_free(&r);
    tb_bitset_free(&m);
    lex_dfa_free(d);

    /* A limit passed inside a walk: the mask call fails. */
    o.max_states = 2; /* the dead state and the start */
    d = lex_dfa_new("[a-z]+[0-9]+x", &o, &err);
    assert_non_null(d);
    assert_int_equal(tb_bitset_init(&m, trie_mask_bits(fx.tries[0])), 0);
    assert_int_equal(lex_rec_init(&r, d, fx.keys.max_len, &err), 0);
    assert_int_equal(lex_mask(fx.tries[0], &r, LEX_START, &m, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "more than 2 states"));
    lex_rec_free(&r);
    tb_bitset_free(&m);
    lex_dfa_free(d);

    /* The term limit, on a pattern whose terms alone pass it. */
    o = (lex_dfa_opts_t){.max_terms = 1000};
    d = lex_dfa_new("\\p{L}", &o, &err);
    assert_null(d);
    assert_non_null(strstr(err.msg, "pattern too large"));
}

static void logits_and_empty_language(void **state)
{
    (void)state;
    tb_err_t err;
    lex_dfa_t *d = lex_dfa_new("[^\\x00-\\x{10FFFF}]", NULL, &err);
    assert_non_null(d);
    tb_bitset_t m;
    assert_int_equal(tb_bitset_init(&m, trie_mask_bits(fx.tries[0])), 0);
    for (size_t l = 0; l < fx.ntries; l++) {
        lex_rec_t r;
        assert_int_equal(lex_rec_init(&r, d, fx.keys.max_len, &err), 0);
        assert_int_equal(lex_mask(fx.tries[l], &r, LEX_START, &m, NULL, &err), 0);
        assert_int_equal(tb_bitset_count(&m), 0);
        lex_rec_free(&r);
    }
    lex_dfa_free(d);
    d = lex_dfa_new("[0-9]+", NULL, &err);
    lex_rec_t r;
    assert_int_equal(lex_rec_init(&r, d, fx.keys.max_len, &err), 0);
    assert_int_equal(lex_mask(fx.tries[0], &r, LEX_START, &m, NULL, &err), 0);
    size_t n = tok_vocab(fx.tok)->size;
    float *lg = malloc(n * sizeof *lg);
    lex_mask_logits(&m, lg, n);
    int32_t one = tok_vocab_find(tok_vocab(fx.tok), (const uint8_t *)"1", 1);
    int32_t a = tok_vocab_find(tok_vocab(fx.tok), (const uint8_t *)"a", 1);
    assert_true(one >= 0 && a >= 0);
    assert_true(lg[one] == 0.0f);
    assert_true(lg[a] == LEX_LOGIT_BLOCKED);
    size_t zeros = 0;
    for (size_t i = 0; i < n; i++)
        zeros += lg[i] == 0.0f;
    assert_int_equal(zeros, tb_bitset_count(&m));
    free(lg);
    lex_rec_free(&r);
    tb_bitset_free(&m);
    lex_dfa_free(d);
}

/* Equivalent derivatives share a state: a{0,3} after one byte and after
 * none differ, but x*x* and x* reach the same number of states. */
static void simplification_shares_states(void **state)
{
    (void)state;
    tb_err_t err;
    lex_dfa_t *d = lex_dfa_new("(x|y)*(x|y)*z", NULL, &err);
    assert_non_null(d);
    uint32_t s1 = lex_dfa_feed(d, LEX_START, (const uint8_t *)"xyxy", 4);
    uint32_t s2 = lex_dfa_feed(d, LEX_START, (const uint8_t *)"yyyyyyxxx", 9);
    assert_int_equal(s1, s2);
    assert_true(d->nstates <= 4);
    lex_dfa_free(d);
    /* \u escapes (PCRE2 spells them \x{...}, so they are checked here). */
    d = lex_dfa_new("\\u0041\\u00e9\\u{1F600}[\\u0030-\\u0039]", NULL, &err);
    assert_non_null(d);
    assert_true(dfa_full_match(d, "A\xc3\xa9\xf0\x9f\x98\x80" "7", 8));
    assert_false(dfa_full_match(d, "A\xc3\xa9\xf0\x9f\x98\x80" "x", 8));
    lex_dfa_free(d);
}

/* ---- tokbench mask ------------------------------------------------------------- */

static void mask_command(void **state)
{
    (void)state;
    static char out[1 << 16];
    /* The count it prints is the library's mask count. */
    tb_err_t err;
    lex_dfa_t *d = lex_dfa_new("[0-9]+", NULL, &err);
    lex_rec_t r;
    tb_bitset_t m;
    assert_int_equal(tb_bitset_init(&m, trie_mask_bits(fx.tries[0])), 0);
    assert_int_equal(lex_rec_init(&r, d, fx.keys.max_len, &err), 0);
    uint32_t st = lex_dfa_feed(d, LEX_START, (const uint8_t *)"12", 2);
    assert_int_equal(lex_mask(fx.tries[0], &r, st, &m, NULL, &err), 0);
    char want[64];
    snprintf(want, sizeof want, "allowed    %zu of %u tokens", tb_bitset_count(&m),
             tok_vocab(fx.tok)->size);
    lex_rec_free(&r);
    lex_dfa_free(d);
    tb_bitset_free(&m);
    assert_int_equal(test_tokbench_mask(LLAMA3 " --regex '[0-9]+' --after 12 --layout map --reps 2",
                              out, sizeof out), 0);
    if (!strstr(out, want) || !strstr(out, "visited") || !strstr(out, "per node"))
        fail_msg("want \"%s\" in:\n%s", want, out);
    /* --builtin walks the built-in recognizer's DFA */
    assert_int_equal(test_tokbench_mask(LLAMA3 " --builtin any --reps 2", out, sizeof out), 0);
    snprintf(want, sizeof want, "allowed    %zu of %u tokens", fx.keys.n + fx.keys.nalias,
             tok_vocab(fx.tok)->size);
    if (!strstr(out, want) || !strstr(out, "builtin    any"))
        fail_msg("want \"%s\" in:\n%s", want, out);
    assert_int_equal(test_tokbench_mask(LLAMA3 " --builtin json", out, sizeof out), 1);
    assert_non_null(strstr(out, "'json' is not a built-in recognizer"));
    /* Bad input: a message naming the pattern and position, exit 1. */
    assert_int_equal(test_tokbench_mask(LLAMA3 " --regex 'a{1000001}'", out, sizeof out), 1);
    assert_non_null(strstr(out, "regex 'a{1000001}': repetition bound 1000001"));
    assert_int_equal(test_tokbench_mask(LLAMA3 " --regex 'ab(?=c)'", out, sizeof out), 1);
    assert_non_null(strstr(out, "look-around assertions are not supported at offset 2"));
    assert_int_equal(test_tokbench_mask(LLAMA3 " --regex '[0-9]+' --after 12x", out, sizeof out),
                     1);
    assert_non_null(strstr(out, "refused at byte 2"));
    char args[1000];
    int n = snprintf(args, sizeof args, "%s --max-states 300 --regex '(a|b)*a(a|b){20}' "
                     "--after ", LLAMA3);
    for (int i = 0; i < 800; i++) /* each new 21-byte window: a new state */
        args[n++] = test_rnd(2) ? 'a' : 'b';
    args[n] = 0;
    assert_int_equal(test_tokbench_mask(args, out, sizeof out), 1);
    assert_non_null(strstr(out, "the DFA needs more than 300 states"));
}

/* ---- lifted states (deriv.h's lex_dfa_lifted) ------------------------------ */

#define LIFT_STATES 4096

/* The longest of the shortest completions of the states reachable from
 * d's start, from all of them explored (at most LIFT_STATES). */
static uint32_t worst_completion(lex_dfa_t *d)
{
    static uint32_t queue[LIFT_STATES], dist[LIFT_STATES];
    static uint8_t seen[LIFT_STATES];
    memset(seen, 0, sizeof seen);
    size_t n = 0;
    queue[n++] = LEX_START;
    seen[LEX_START] = 1;
    for (size_t i = 0; i < n; i++)
        for (uint32_t c = 0; c < d->ncls; c++) {
            uint32_t t = lex_dfa_next(d, queue[i], d->rep[c]);
            assert_true(t < LIFT_STATES);
            if (t != LEX_DEAD && !seen[t]) {
                seen[t] = 1;
                queue[n++] = t;
            }
        }
    for (size_t i = 0; i < n; i++)
        dist[queue[i]] = lex_dfa_accepting(d, queue[i]) ? 0 : UINT32_MAX;
    for (int changed = 1; changed;) { /* relax until every distance is known */
        changed = 0;
        for (size_t i = 0; i < n; i++)
            for (uint32_t c = 0; c < d->ncls; c++) {
                uint32_t s = queue[i], t = lex_dfa_next(d, s, d->rep[c]);
                if (t != LEX_DEAD && dist[t] != UINT32_MAX && dist[t] + 1 < dist[s]) {
                    dist[s] = dist[t] + 1;
                    changed = 1;
                }
            }
    }
    uint32_t worst = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_not_equal(dist[queue[i]], UINT32_MAX); /* live: a completion */
        worst = dist[queue[i]] > worst ? dist[queue[i]] : worst;
    }
    return worst;
}

/* lex_dfa_msc bounds the shortest completion of every reachable state, as
 * a search of them all finds it. */
static void msc_bounds_every_completion(void **state)
{
    (void)state;
    static const char *const patterns[] = {
        "(?:[a-c]+ +){0,9}[a-c]+\"", "a{3,5}b", "(?:ab|c)*d", "[a-z]{2,4}(?:x|yz)?",
        "\\d{3}-\\d{4}", "(?:ab){2,3}c*", "x(?:y{2}|z)*w", "(?:a{2,3}b){2,4}",
        "(?:\\S+\\s+){0,5}\\S+\"", "(?:[^\"\\\\]|\\\\u[0-9a-f]{4}){0,3}x", "(?:a|bcd){3,}e",
        "(?:(?:ab){0,2}c){2}", "é{2,3}|[a-z]{4}",
    };
    for (size_t p = 0; p < sizeof patterns / sizeof *patterns; p++) {
        tb_err_t err;
        lex_dfa_t *d = lex_dfa_new(patterns[p], NULL, &err);
        if (!d)
            fail_msg("%s", err.msg);
        uint32_t msc = lex_dfa_msc(d, d->root), worst = worst_completion(d);
        if (msc < worst || msc >= UINT32_MAX - 1)
            fail_msg("'%s': msc %u, a state's shortest completion %u", patterns[p], msc, worst);
        lex_dfa_free(d);
    }
}

/* Whether every text of at most len bytes over alpha is live and accepted
 * from a as from b. */
static int same_within(lex_dfa_t *d, uint32_t a, uint32_t b, const char *alpha, size_t len)
{
    size_t k = strlen(alpha);
    if (lex_dfa_accepting(d, a) != lex_dfa_accepting(d, b))
        return 0;
    for (size_t i = 0; len && i < k; i++) {
        uint32_t x = lex_dfa_next(d, a, (uint8_t)alpha[i]);
        uint32_t y = lex_dfa_next(d, b, (uint8_t)alpha[i]);
        if ((x == LEX_DEAD) != (y == LEX_DEAD) ||
            (x != LEX_DEAD && !same_within(d, x, y, alpha, len - 1)))
            return 0;
    }
    return 1;
}

#define LIFT_CHAR "(?:[^\"\\\\\\x00-\\x1F]|\\\\[\"\\\\/bfnrt]|\\\\u[0-9A-Fa-f]{4})"

/* The lexer of one lexeme, with LIFT_CHAR as its string character
 * (deriv.h's string_char) if `strings`. */
static lex_dfa_t *lift_lexer(const char *lexeme, int strings)
{
    const char *name = "s";
    const lex_dfa_opts_t look = {.lookahead = 1};
    tb_err_t err;
    lex_term_t chr;
    lex_dfa_t *d = lex_lexer_from_regexes(&lexeme, &name, 1, "lift", &look, &err);
    if (!d || lex_regex_parse(&d->terms, LIFT_CHAR, strlen(LIFT_CHAR), &chr, &err))
        fail_msg("%s", err.msg);
    d->string_char = strings ? chr : LEX_NOTHING;
    return d;
}

/* A JSON string's pattern under a length bound: the lifted state (the
 * bound dropped) answers every text of at most `longest` bytes as the
 * state does while enough characters are left, and is the state itself
 * once too few are, or where the repetition is not of every character.
 * Lifted below the room (a floor under `longest`), it answers alike the
 * texts as long as the exactness it reports, never under the floor. */
static void lifted_states_answer_short_texts_alike(void **state)
{
    (void)state;
    lex_dfa_t *d = lift_lexer("\"(?=(?:[a-c]+ +){0,3}[a-c]+\"$)" LIFT_CHAR "{0,12}\"", 1);
    const uint64_t one = 1;
    uint32_t s = lex_dfa_next(d, lex_dfa_start_of(d, &one), '"'), exact;
    const uint32_t longest = 4;
    assert_int_equal(lex_dfa_lifted(d, s, 11, 11, &exact), s); /* 12 left: too few for 11 */
    assert_int_equal(exact, 11);
    int lifted = 0, kept = 0, below = 0;
    for (int i = 0; i < 12 && s != LEX_DEAD; i++) {
        for (uint32_t floor = 2; floor <= longest; floor += longest - 2) {
            uint32_t l = lex_dfa_lifted(d, s, longest, floor, &exact);
            assert_true(exact >= floor && exact <= longest && (l != s || exact == longest));
            lifted += l != s && floor == longest;
            kept += l == s && floor == longest;
            below += l != s && exact < longest;
            assert_true(same_within(d, s, l, "ab \"\\u0", exact));
        }
        s = lex_dfa_next(d, s, i % 3 == 2 ? ' ' : 'a');
    }
    assert_true(lifted > 0 && kept > 0 && below > 0);
    tb_err_t err;
    assert_int_equal(lex_dfa_error(d, &err), 0);
    lex_dfa_free(d);
    /* [a-c]{0,30}" is not a length bound: dropping it would allow z */
    d = lift_lexer("\"(?=[a-z]*\"$)[a-c]{0,30}\"", 1);
    s = lex_dfa_next(d, lex_dfa_start_of(d, &one), '"');
    assert_int_equal(lex_dfa_lifted(d, s, longest, 1, &exact), s);
    lex_dfa_free(d);
}

/* Whether every text of at most len bytes over alpha is live and accepted
 * from state a of d as from state b of e. */
static int same_across(lex_dfa_t *d, uint32_t a, lex_dfa_t *e, uint32_t b, const char *alpha,
                       size_t len)
{
    if (lex_dfa_accepting(d, a) != lex_dfa_accepting(e, b))
        return 0;
    for (size_t i = 0; len && alpha[i]; i++) {
        uint32_t x = lex_dfa_next(d, a, (uint8_t)alpha[i]);
        uint32_t y = lex_dfa_next(e, b, (uint8_t)alpha[i]);
        if ((x == LEX_DEAD) != (y == LEX_DEAD) ||
            (x != LEX_DEAD && !same_across(d, x, e, y, alpha, len - 1)))
            return 0;
    }
    return 1;
}

/* A pattern's intersection with a length bound, found live by the bound
 * (deriv.c's bounded_live) where the lexer knows its string character:
 * every text is dead or accepted as where emptiness is always searched,
 * near the bound (too few characters left for the pattern) too. */
static void bounded_liveness_answers_as_the_search(void **state)
{
    (void)state;
    static const char *const lexemes[] = {
        "\"(?=(?:[a-c]+ +){0,3}[a-c]+\"$)" LIFT_CHAR "{0,6}\"",
        "\"(?=[a-c]{3}(?: [a-c]{3})*\"$)" LIFT_CHAR "{0,9}\"",
        "\"(?=(?:ab|c)+ ?\"$)" LIFT_CHAR "{2,7}\"",
    };
    const uint64_t one = 1;
    for (size_t k = 0; k < sizeof lexemes / sizeof *lexemes; k++) {
        lex_dfa_t *bound = lift_lexer(lexemes[k], 1), *searched = lift_lexer(lexemes[k], 0);
        uint32_t a = lex_dfa_next(bound, lex_dfa_start_of(bound, &one), '"');
        uint32_t b = lex_dfa_next(searched, lex_dfa_start_of(searched, &one), '"');
        if (!same_across(bound, a, searched, b, "abc \"", 10))
            fail_msg("'%s': the bound and the search disagree", lexemes[k]);
        tb_err_t err;
        assert_int_equal(lex_dfa_error(bound, &err), 0);
        lex_dfa_free(bound);
        lex_dfa_free(searched);
    }
}

/* A count that no text of at most `longest` bytes can reach (a name's
 * {1,40}, a string's maxLength, a pattern's count of words, which inside
 * a word lies past the word's rest): the lifted state reads it as a star
 * and answers those texts as the state does, a few lifted states serve
 * every position more than a token from the bound, and near the bound, or
 * where an iteration may be empty, the state is its own. */
static void counted_states_answer_short_texts_alike(void **state)
{
    (void)state;
    static const char *const lexemes[] = {"\"[a-z_]{1,40}\"", "\"" LIFT_CHAR "{0,20}\"",
                                          "\"(?:ab|c){2,30}x\"",
                                          "\"(?:[a-c]+ +){0,14}[a-c]+\""};
    static const char *const texts[] = {"a", "a", "abc", "ab "};
    const uint64_t one = 1;
    const uint32_t longest = 5;
    for (size_t k = 0; k < sizeof lexemes / sizeof *lexemes; k++) {
        lex_dfa_t *d = lift_lexer(lexemes[k], 0);
        uint32_t s = lex_dfa_next(d, lex_dfa_start_of(d, &one), '"');
        uint32_t seen[40];
        int lifted = 0, kept = 0, distinct = 0;
        for (int i = 0; i < 40 && s != LEX_DEAD; i++) {
            uint32_t exact, l = lex_dfa_lifted(d, s, longest, longest, &exact);
            lifted += l != s;
            kept += l == s;
            assert_true(same_within(d, s, l, "abc_x \"\\u0", longest));
            int j = 0;
            while (l != s && j < distinct && seen[j] != l)
                j++;
            if (l != s && j == distinct)
                seen[distinct++] = l;
            s = lex_dfa_next(d, s, (uint8_t)texts[k][i % strlen(texts[k])]);
        }
        /* lifted states are shared by positions, and the last ones kept */
        assert_true(lifted > 0 && kept > 0 && distinct < lifted / 4);
        lex_dfa_free(d);
    }
    lex_dfa_t *d = lift_lexer("\"(?:a?b?){0,20}\"", 0); /* an iteration may be empty */
    uint32_t s = lex_dfa_next(d, lex_dfa_start_of(d, &one), '"');
    uint32_t exact;
    assert_int_equal(lex_dfa_lifted(d, s, longest, longest, &exact), s);
    lex_dfa_free(d);
}

/* Every text over alphabet of at most `depth` bytes from s and from its
 * relaxed state r: the relaxed state reads every text s reads, and where
 * its language after a text is surely infinite, s's after it is not empty.
 * Counts the texts after which it was into *infinite. */
static void relaxed_holds(lex_dfa_t *d, uint32_t s, uint32_t r, const char *alphabet,
                          int depth, size_t *infinite)
{
    if (s != LEX_DEAD)
        assert_int_not_equal(r, LEX_DEAD);
    if (lex_dfa_surely_infinite(d, r)) {
        assert_int_not_equal(s, LEX_DEAD);
        ++*infinite;
    }
    for (const char *c = alphabet; depth > 0 && *c && r != LEX_DEAD; c++)
        relaxed_holds(d, lex_dfa_next(d, s, (uint8_t)*c), lex_dfa_next(d, r, (uint8_t)*c),
                      alphabet, depth - 1, infinite);
}

/* An object's other names as the schema compiler spells them, a string
 * that is none of the defined names (whole strings: a look-ahead through
 * $), relaxed to the string alone, whose states are few; and a look-ahead
 * of a prefix (an infinite language), which relaxing must keep. */
static void relaxed_states_keep_what_they_drop_finite(void **state)
{
    (void)state;
    static const struct {
        const char *lexeme;
        int relaxed;  /* whether the relaxed state is another */
        int infinite; /* whether it is surely infinite after some texts */
    } cases[] = {
        {"\"(?!(?:ab|abc|b|\"\"\\\"\")\"$)" LIFT_CHAR "*\"", 1, 1},
        /* a pattern's look-ahead stays: its AND cannot be told infinite */
        {"\"(?!(?:a|c)\"$)(?=[a-c]*\"$)" LIFT_CHAR "*\"", 1, 0},
        {"\"(?!a)" LIFT_CHAR "*\"", 0, 1}, /* infinite past its first byte */
        {"\"(?!(?:ab|b)\"$)" LIFT_CHAR "{0,3}\"", 1, 0},
    };
    const uint64_t one = 1;
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        lex_dfa_t *d = lift_lexer(cases[k].lexeme, 0);
        uint32_t s = lex_dfa_next(d, lex_dfa_start_of(d, &one), '"');
        uint32_t r = lex_dfa_relaxed(d, s);
        if ((r != s) != cases[k].relaxed)
            fail_msg("'%s': relaxed %s", cases[k].lexeme, r != s ? "wrongly" : "not");
        size_t infinite = 0;
        relaxed_holds(d, s, r, "abc\"\\", 6, &infinite);
        if ((infinite > 0) != cases[k].infinite)
            fail_msg("'%s': surely infinite after %zu texts", cases[k].lexeme, infinite);
        tb_err_t err;
        assert_int_equal(lex_dfa_error(d, &err), 0);
        lex_dfa_free(d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_errors_name_the_position),
        cmocka_unit_test(full_matches_agree_with_pcre2),
        cmocka_unit_test(anchors_and_empty_alternatives_agree_with_pcre2),
        cmocka_unit_test(lookaheads_agree_with_pcre2),
        cmocka_unit_test(unsupported_lookaround_is_refused),
        cmocka_unit_test(simplification_shares_states),
        cmocka_unit_test(real_world_regexes),
        long_unit_test(random_regexes),
        cmocka_unit_test(walk_paths_agree),
        cmocka_unit_test(builtins_agree_with_pcre2),
        cmocka_unit_test(shallow_stack_calls_back),
        cmocka_unit_test(explosion_fails_cleanly),
        cmocka_unit_test(logits_and_empty_language),
        cmocka_unit_test(msc_bounds_every_completion),
        cmocka_unit_test(lifted_states_answer_short_texts_alike),
        cmocka_unit_test(bounded_liveness_answers_as_the_search),
        cmocka_unit_test(counted_states_answer_short_texts_alike),
        cmocka_unit_test(relaxed_states_keep_what_they_drop_finite),
        cmocka_unit_test(mask_command),
    };
    return cmocka_run_group_tests(tests, setup_vocab, teardown_vocab);
}
