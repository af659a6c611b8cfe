/*
 * test_schema: JSON Schema to grammar (grammar/schema.h, ecma.h,
 * numrange.h).
 *
 * Oracles: PCRE2 for ECMA patterns where the two dialects agree (a search
 * on the decoded string, $ at the end only); exact decimal comparison for
 * number ranges; Debian's python3-jsonschema (a validator, run once per
 * test through /usr/bin/python3) for whole instances, which it also writes
 * as json.dumps(ensure_ascii=False) does.  A whole grammar is checked by
 * the test's own Earley recognizer for the language cfg.h defines (on the
 * lexer's DFAs) and by the grammar's parser (grammar/gram.h); a few
 * instances also through `tokbench accept` with masks.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "../base/utf8.h"
#include "../grammar/ecma.h"
#include "../grammar/gram.h"
#include "../grammar/match.h"
#include "../grammar/numrange.h"
#include "../grammar/schema.h"
#include "../lexer/deriv.h"
#include "support.h"

#define DEPTH 4
#define WS "(?:[ \\t\\n\\r]+)?"

/* A lexeme's DFA as the schema's grammar builds it (look-aheads taken). */
static lex_dfa_t *dfa_or_fail(const char *re)
{
    tb_err_t err;
    const lex_dfa_opts_t opts = {.lookahead = 1};
    lex_dfa_t *d = lex_dfa_new(re, &opts, &err);
    if (!d)
        fail_msg("%s", err.msg);
    return d;
}

static int dfa_accepts(lex_dfa_t *d, const char *s, size_t n)
{
    uint32_t st = lex_dfa_feed(d, LEX_START, (const uint8_t *)s, n);
    return st != LEX_DEAD && lex_dfa_accepting(d, st);
}

/* ---- patterns against PCRE2 ---------------------------------------------- */

/* PCRE2 spells ECMA's \uHHHH and \u{H..} as \x{..}. */
static void pcre_spelling(const char *ecma, char *out, size_t size)
{
    size_t o = 0;
    for (const char *p = ecma; *p && o + 12 < size; p++) {
        if (p[0] == '\\' && p[1] == 'u') {
            p += 2;
            size_t n = *p == '{' ? strcspn(++p, "}") : 4;
            o += (size_t)snprintf(out + o, size - o, "\\x{%.*s}", (int)n, p);
            p += n - (p[n] == '}' ? 0 : 1);
            continue;
        }
        if (p[0] == '\\' && p[1])
            out[o++] = *p++;
        out[o++] = *p;
    }
    out[o] = 0;
    if (strlen(out) + 12 >= size)
        fail_msg("pattern too long for the PCRE2 oracle's buffer: %.80s...", ecma);
}

static int pcre_search(const char *ecma, const char *s, size_t n)
{
    int code;
    PCRE2_SIZE off;
    char pattern[4096]; /* a format's regex with IPv6 inside is about 1,500 bytes */
    pcre_spelling(ecma, pattern, sizeof pattern);
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_DOLLAR_ENDONLY, &code, &off, NULL);
    if (!re)
        fail_msg("PCRE2 refuses '%s'", pattern);
    pcre2_match_data *md = pcre2_match_data_create(4, NULL);
    int r = pcre2_match(re, (PCRE2_SPTR)s, n, 0, 0, md, NULL) >= 0;
    pcre2_match_data_free(md);
    pcre2_code_free(re);
    return r;
}

/* The lexeme of (pattern, format, lo, hi) on the JSON text of each decoded
 * string agrees with PCRE2's search of the pattern and of the format's
 * pattern (and with the length in code points). */
static void check_strings_format(const char *pattern, const char *format, uint32_t lo,
                                 uint32_t hi, const char *const *texts, size_t nt)
{
    tb_buf_t re = {0};
    tb_err_t err;
    if (gr_ecma_string(&re, pattern, format, lo, hi, NULL, &err))
        fail_msg("'%s': %s", pattern, err.msg);
    assert_int_equal(tb_buf_putc(&re, 0), 0);
    lex_dfa_t *d = dfa_or_fail((const char *)re.data);
    for (size_t t = 0; t < nt; t++) {
        size_t n = strlen(texts[t]), cps = 0;
        for (size_t i = 0; i < n; i++)
            cps += ((uint8_t)texts[t][i] & 0xC0) != 0x80;
        int want = pcre_search(pattern ? pattern : "", texts[t], n) && cps >= lo && cps <= hi &&
                   (!format || pcre_search(gr_ecma_format(format), texts[t], n));
        tb_buf_t q = {0};
        assert_int_equal(gr_json_quote(&q, (const uint8_t *)texts[t], n), 0);
        if (dfa_accepts(d, (const char *)q.data, q.len) != want)
            fail_msg("'%s' {%u,%u} on %.*s: PCRE2 says %d", pattern, lo, hi, (int)q.len,
                     (char *)q.data, want);
        /* Never the text as a whole lexeme without its quotes. */
        assert_false(dfa_accepts(d, texts[t], n) && n && texts[t][0] != '"');
        tb_buf_free(&q);
    }
    lex_dfa_free(d);
    tb_buf_free(&re);
}

static void check_strings(const char *pattern, uint32_t lo, uint32_t hi,
                          const char *const *texts, size_t nt)
{
    check_strings_format(pattern, NULL, lo, hi, texts, nt);
}

static const char *const texts[] = {
    "", "a", "ab", "abc", "b", "ba", "xaby", "a\"b", "\"", "\\", "a\\b", "\n", "a\nb",
    "\t", "\x01", "\x1f", "é", "aé", "日本", "😀", "12", "123", "1234", "a1", "A_b",
    "x-y", "foo.bar", ",x", "x,", "a,b", "  ", "{{x}}", "/", "a/b", "ab\"cd",
};
#define NT (sizeof texts / sizeof *texts)

static const char *const uuids[] = {
    "123e4567-e89b-12d3-a456-426614174000", "b23e4567-e89b-12d3-a456-426614174000",
    "123e4567-e89b-12d3-a456-42661417400", "123e4567e89b12d3a456426614174000", "", "b",
};
#define NU (sizeof uuids / sizeof *uuids)

static const char *const emails[] = {
    "a@b.c", "ab@b.c", "x@y.zz", "abc@d.ef", "xy@z.com", "a@b", "@b.c", "a b@c.d", "",
};
#define NE (sizeof emails / sizeof *emails)

static void patterns_agree_with_pcre2(void **state)
{
    (void)state;
    static const char *const patterns[] = {
        "a", "^a", "a$", "^a$", "^ab|c$", "^a|b$", "(^|,)x", "x(,|$)", "^$", "b",
        "^[a-z]+$", "[^a]", "^[^\"]*$", "\"", "\\\\", "\\n", "^\\s*$", "\\d{2,3}",
        "^\\d+$", "\\w+", "^\\W", "é", "^.$", "^..$", "[\\u00e0-\\u00ff]", "\\u65e5",
        "^\\x41?a", "(a|)b", "^(ab)?c?$", "a{2}", "^[a-z0-9_-]{1,3}$", "\\{\\{.+}}",
        "^[\\x00-\\x1f]", "\\/", "^(?:a|b)+$", "^a*?b", "[\\d\\w]", "^(?<n>a)b",
        "\\u{1F600}", "^[^\\d\\s]+$", "a]", "^[\\]a]+$", "^\\\\b$",
        /* look-aheads right after the ^ of the only branch */
        "^(?!ab)[a-z]*$", "^(?!a$).*$", "^(?=[^=]+$)(?!\\s+$)(.|\\n)+$", "^(?!^x|y\\.|foo).*",
        "^(?![ab]\\d)", "^(?=a)(?!ab)", "^(?!.*--)[a-z-]+$", "^(?!.*\\\\)\\D+$",
        "^(?!(a|b)$)(?=.{2})", "^(?!\\\"|.*[^a-z])",
        /* unanchored searches: padded once, a padded repetition cut to its minimum */
        "x|ab|b$", "[a-z]{2,5}", "a*b+", "^a|b|c$|x",
    };
    for (size_t p = 0; p < sizeof patterns / sizeof *patterns; p++)
        check_strings(patterns[p], 0, GR_NO_MAX, texts, NT);
}

static void lengths_cut_patterns_exactly(void **state)
{
    (void)state;
    static const struct {
        const char *pattern;
        uint32_t lo, hi;
    } cases[] = {
        {NULL, 0, 2}, {NULL, 2, 3}, {NULL, 1, GR_NO_MAX}, {"^[a-z]+$", 2, 3},
        {"^a[0-9]*$", 0, 3}, {"^(ab|abc)$", 3, 3}, {"^x", 0, 2}, {"b$", 2, 4},
        {"^(?:[a-z]{2})+$", 1, 5}, {"^a|b$", 0, 1}, {"a", 1, GR_NO_MAX},
        /* no rewrite: the lexer intersects (a look-ahead) */
        {"^[a-z]+@[a-z]+$", 0, 3}, {"(^a|b)", 0, 2}, {"b", 2, 3}, {"^[^\"]*\\\\", 1, 4},
        {"[0-9]", 3, 4}, {"^(a|\\\\|é)+.", 2, 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_strings(cases[i].pattern, cases[i].lo, cases[i].hi, texts, NT);
    /* A format beside a pattern or bounds: intersected too. */
    check_strings_format("b", "uuid", 0, GR_NO_MAX, uuids, NU);
    check_strings_format(NULL, "uuid", 0, 36, uuids, NU);
    check_strings_format("^[0-9]", "uuid", 0, GR_NO_MAX, uuids, NU);
    check_strings_format(NULL, "email", 5, 7, emails, NE);
    check_strings_format("x", "email", 0, 9, emails, NE);
    tb_buf_t re = {0};
    tb_err_t err;
    assert_int_equal(gr_ecma_string(&re, NULL, NULL, 0, 1000001, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "above the limit"));
    tb_buf_free(&re);
    /* Bounds above 1000 (the lexer's old limit per quantifier) are exact. */
    check_strings(NULL, 999, 2500, texts, NT);
    tb_buf_t big = {0};
    assert_int_equal(gr_ecma_string(&big, NULL, NULL, 1001, 2500, NULL, &err), 0);
    assert_int_equal(tb_buf_putc(&big, 0), 0);
    lex_dfa_t *d = dfa_or_fail((const char *)big.data);
    char s[2600];
    for (size_t n = 999; n <= 2502; n += 1) {
        s[0] = '"';
        memset(s + 1, 'x', n);
        s[n + 1] = '"';
        if (dfa_accepts(d, s, n + 2) != (n >= 1001 && n <= 2500))
            fail_msg("length %zu", n);
        if (n == 1003)
            n = 2495;
    }
    lex_dfa_free(d);
    tb_buf_free(&big);
}

static void pattern_errors_name_the_reason(void **state)
{
    (void)state;
    static const struct {
        const char *pattern, *want;
    } cases[] = {
        {"a(?=b)", "look-ahead assertions are not supported"},
        {"(?<!a)b", "look-behind assertions are not supported"},
        {"\\bword", "word boundary assertions"},
        {"(a)\\1", "back-references are not supported"},
        {"\\p{L}", "Unicode property escapes"},
        {"\\q", "unknown escape"},
        {"a(b", "unbalanced parenthesis"},
        {"[z-a]", "range out of order"},
        {"*a", "nothing to repeat"},
        {"^*", "nothing to repeat"},
        {"(^a){20}", "an anchor inside a repetition above 16"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tb_buf_t re = {0};
        tb_err_t err;
        if (!gr_ecma_string(&re, cases[i].pattern, NULL, 0, GR_NO_MAX, NULL, &err))
            fail_msg("'%s' was accepted", cases[i].pattern);
        if (!strstr(err.msg, cases[i].want) || !strstr(err.msg, cases[i].pattern))
            fail_msg("'%s': got \"%s\"", cases[i].pattern, err.msg);
        tb_buf_free(&re);
    }
}

/* ---- formats --------------------------------------------------------------- */

static void formats_follow_their_rfcs(void **state)
{
    (void)state;
    static const struct {
        const char *format, *text;
        int valid;
    } cases[] = {
        {"date", "2024-02-29", 1}, {"date", "2023-02-29", 0}, {"date", "2000-02-29", 1},
        {"date", "1900-02-29", 0}, {"date", "2023-04-31", 0}, {"date", "2023-12-31", 1},
        {"date", "2023-1-01", 0},
        {"time", "23:59:60Z", 1}, {"time", "12:00:00.123+05:30", 1}, {"time", "24:00:00Z", 0},
        {"time", "12:00:00", 0},
        {"date-time", "1985-04-12T23:20:50.52Z", 1}, {"date-time", "1996-12-19t16:39:57-08:00", 1},
        {"date-time", "1985-04-12 23:20:50Z", 0},
        {"email", "a.b+c@example.com", 1}, {"email", "a..b@example.com", 0},
        {"email", "@example.com", 0}, {"email", "joe@-x.com", 0},
        /* RFC 5321 4.1.2: quoted local parts, address literals */
        {"email", "\"joe bloggs\"@example.com", 1}, {"email", "\"a\\\"b\"@x.org", 1},
        {"email", "\"a\"b\"@x.org", 0}, {"email", "joe@[127.0.0.1]", 1},
        {"email", "joe@[IPv6:::1]", 1}, {"email", "joe@[127.0.0.300]", 0},
        {"email", "joe@[::1]", 0}, {"email", "joe bloggs@example.com", 0},
        {"hostname", "www.example.com", 1}, {"hostname", "-a.com", 0}, {"hostname", "a_b", 0},
        {"ipv4", "192.168.0.1", 1}, {"ipv4", "256.1.1.1", 0}, {"ipv4", "01.1.1.1", 0},
        {"ipv6", "::1", 1}, {"ipv6", "2001:db8::8a2e:370:7334", 1},
        {"ipv6", "::ffff:192.0.2.128", 1}, {"ipv6", "1:2:3:4:5:6:7:8", 1},
        {"ipv6", "1::2::3", 0}, {"ipv6", "12345::", 0},
        {"uuid", "123e4567-e89b-12d3-a456-426614174000", 1}, {"uuid", "123e4567e89b12d3", 0},
        {"uri", "https://example.com/a?b=c#d", 1}, {"uri", "urn:isbn:0451450523", 1},
        {"uri", "/relative/path", 0}, {"uri", "http://exa mple.com", 0},
        {"uri", "ldap://[2001:db8::7]/c=GB?objectClass?one", 1}, {"uri", "http:/[::1]", 0},
        {"uri", "http://example.com:80x/", 0}, {"uri-reference", "//a@b@example.com/", 0},
        {"uri-reference", "/relative/path?x=1", 1}, {"uri-reference", "a b", 0},
        /* RFC 3986 4.2: a relative reference's first segment has no colon */
        {"uri-reference", "://", 0}, {"uri-reference", "a:b/c", 1},
        {"uri-reference", "./a:b", 1}, {"uri-reference", "seg/x:y?q#f", 1},
        {"uri-reference", "", 1}, {"uri-reference", "#frag", 1}, {"uri-reference", ":x", 0},
        {"duration", "P3Y6M4DT12H30M5S", 1}, {"duration", "PT36H", 1}, {"duration", "P", 0},
        {"duration", "P1W", 1}, {"duration", "P1H", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tb_buf_t re = {0}, q = {0};
        tb_err_t err;
        if (gr_ecma_string(&re, NULL, cases[i].format, 0, GR_NO_MAX, NULL, &err))
            fail_msg("%s: %s", cases[i].format, err.msg);
        assert_int_equal(tb_buf_putc(&re, 0), 0);
        lex_dfa_t *d = dfa_or_fail((const char *)re.data);
        assert_int_equal(gr_json_quote(&q, (const uint8_t *)cases[i].text,
                                       strlen(cases[i].text)), 0);
        if (dfa_accepts(d, (const char *)q.data, q.len) != cases[i].valid)
            fail_msg("format %s on \"%s\": want %d", cases[i].format, cases[i].text,
                     cases[i].valid);
        lex_dfa_free(d);
        tb_buf_free(&re);
        tb_buf_free(&q);
    }
}

/* ---- number ranges ----------------------------------------------------------- */

/* The value of a decimal text compared with bound b: exact on the short
 * decimals used here, as doubles. */
static int in_range(const char *t, const char *lo, int sl, const char *hi, int sh)
{
    double v = strtod(t, NULL);
    if (lo && (v < strtod(lo, NULL) || (sl && v == strtod(lo, NULL))))
        return 0;
    if (hi && (v > strtod(hi, NULL) || (sh && v == strtod(hi, NULL))))
        return 0;
    return 1;
}

static void number_ranges_are_exact(void **state)
{
    (void)state;
    static const char *const bounds[] = {NULL, "-1000", "-12.5", "-1", "-0.5", "0", "0.05",
                                         "0.5", "1", "2.25", "9", "10", "99.99", "100", "101"};
    const size_t nb = sizeof bounds / sizeof *bounds;
    char t[64];
    size_t checked = 0;
    for (size_t a = 0; a < nb; a++)
        for (size_t b = 0; b < nb; b++)
            for (int flags = 0; flags < 8; flags++) {
                int sl = flags & 1, sh = (flags >> 1) & 1, integer = flags >> 2;
                const char *lo = bounds[a], *hi = bounds[b];
                if (!lo && !hi)
                    continue;
                if (lo && hi && strtod(lo, NULL) > strtod(hi, NULL))
                    continue;
                tb_buf_t re = {0};
                tb_err_t err;
                if (gr_num_range(&re, lo, sl, hi, sh, integer, &err)) {
                    assert_non_null(strstr(err.msg, "interval"));
                    continue;
                }
                assert_int_equal(tb_buf_putc(&re, 0), 0);
                lex_dfa_t *d = dfa_or_fail((const char *)re.data);
                for (int i = -1100; i <= 1100; i++) {
                    for (int f = 0; f < (integer ? 1 : 6); f++) {
                        static const char *const fr[] = {"", ".0", ".5", ".25", ".05", ".999"};
                        if (i == -1100)
                            snprintf(t, sizeof t, "-0%s", fr[f]);
                        else
                            snprintf(t, sizeof t, "%d%s", i, fr[f]);
                        int want = in_range(t, lo, sl, hi, sh);
                        if (dfa_accepts(d, t, strlen(t)) != want)
                            fail_msg("%s..%s (%d%d) %s on %s: want %d", lo ? lo : "",
                                     hi ? hi : "", sl, sh, integer ? "integer" : "number", t,
                                     want);
                        checked++;
                    }
                    if (i > -990 && i < 990 && (i < -120 || i > 120))
                        i += 7; /* fewer far from the bounds */
                }
                /* Never a leading zero, a bare point or an exponent. */
                assert_false(dfa_accepts(d, "01", 2) || dfa_accepts(d, "1.", 2) ||
                             dfa_accepts(d, ".5", 2));
                lex_dfa_free(d);
                tb_buf_free(&re);
            }
    print_message("%zu number texts checked\n", checked);
}

/* ---- whole instances against python3-jsonschema ---------------------------------- */

/* A small Earley recognizer for the language cfg.h defines, as the test's
 * own reading of it: items (rule, dot, origin) per byte position; a lexeme
 * is scanned by running its DFA from the position (after any ignored
 * whitespace) to every position where it accepts, so lexing is not
 * greedy; nullable nonterminals advance the dot when predicted. */
typedef struct {
    uint32_t rule, dot, origin;
} item_t;

typedef struct {
    const gr_cfg_t *g;
    lex_dfa_t **dfa; /* per lexeme, made when first scanned */
    TB_VEC(item_t) * set;
    size_t n;
    int ws;
} earley_t;

static void add_item(earley_t *e, size_t at, item_t it)
{
    for (size_t i = 0; i < e->set[at].len; i++) {
        item_t *x = &e->set[at].data[i];
        if (x->rule == it.rule && x->dot == it.dot && x->origin == it.origin)
            return;
    }
    assert_int_equal(tb_vec_push(&e->set[at], it), 0);
}

static int is_ws(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }

static void scan(earley_t *e, const char *text, size_t at, item_t it, gr_sym_t lx)
{
    uint32_t k = gr_index(lx);
    if (!e->dfa[k])
        e->dfa[k] = dfa_or_fail(e->g->lex.data[k].regex);
    for (size_t from = at; from < e->n; from++) {
        uint32_t st = LEX_START;
        for (size_t j = from; j < e->n && st != LEX_DEAD; j++) {
            st = lex_dfa_next(e->dfa[k], st, (uint8_t)text[j]);
            if (st != LEX_DEAD && lex_dfa_accepting(e->dfa[k], st))
                add_item(e, j + 1, (item_t){it.rule, it.dot + 1, it.origin});
        }
        if (!e->ws || !is_ws(text[from]))
            break;
    }
}

static int earley_accepts(const gr_cfg_t *g, int ws, const char *text, size_t n)
{
    earley_t e = {.g = g, .n = n, .ws = ws};
    e.dfa = calloc(g->lex.len, sizeof *e.dfa);
    e.set = calloc(n + 1, sizeof *e.set);
    assert_non_null(e.dfa);
    assert_non_null(e.set);
    for (uint32_t r = 0; r < g->rule.len; r++)
        if (g->rule.data[r].lhs == g->start)
            add_item(&e, 0, (item_t){r, 0, 0});
    int ok = 0;
    for (size_t at = 0; at <= n; at++) {
        for (size_t i = 0; i < e.set[at].len; i++) {
            item_t it = e.set[at].data[i];
            const gr_rule_t *ru = &g->rule.data[it.rule];
            if (it.dot == ru->n) { /* complete */
                for (size_t j = 0; j < e.set[it.origin].len; j++) {
                    item_t p = e.set[it.origin].data[j];
                    const gr_rule_t *pr = &g->rule.data[p.rule];
                    if (p.dot < pr->n && g->sym.data[pr->off + p.dot] == ru->lhs)
                        add_item(&e, at, (item_t){p.rule, p.dot + 1, p.origin});
                }
                continue;
            }
            gr_sym_t x = g->sym.data[ru->off + it.dot];
            if (gr_is_lex(x)) {
                scan(&e, text, at, it, x);
                continue;
            }
            for (uint32_t r = 0; r < g->rule.len; r++)
                if (g->rule.data[r].lhs == x)
                    add_item(&e, at, (item_t){r, 0, (uint32_t)at});
            if (g->nt.data[x].nullable)
                add_item(&e, at, (item_t){it.rule, it.dot + 1, it.origin});
        }
    }
    /* accepted: start complete from 0 at some point followed by whitespace */
    for (size_t at = n + 1; at-- > 0 && !ok;) {
        for (size_t i = 0; i < e.set[at].len && !ok; i++) {
            item_t it = e.set[at].data[i];
            ok = it.origin == 0 && g->rule.data[it.rule].lhs == g->start &&
                 it.dot == g->rule.data[it.rule].n;
        }
        if (at > 0 && !(ws && is_ws(text[at - 1])))
            break;
    }
    for (size_t i = 0; i < g->lex.len; i++)
        if (e.dfa[i])
            lex_dfa_free(e.dfa[i]);
    for (size_t i = 0; i <= n; i++)
        free(e.set[i].data);
    free(e.set);
    free(e.dfa);
    return ok;
}

/* The test's own reading of a set nonterminal (cfg.h's gr_set_t), eager
 * where the parser (earley.c) is lazy: every state (a member read yet,
 * members in, count: exact up to max, else saturating at min) made as a
 * nonterminal with its rules, and the set's nonterminal deriving the
 * first.  Small sets only, as the cases here have. */
static void expand_sets(gr_cfg_t *g)
{
    tb_err_t err;
    for (size_t k = 0; k < g->set.len; k++) {
        const gr_set_t st = g->set.data[k];
        assert_true(st.n <= 8);
        uint32_t cap = st.max != GR_UNBOUNDED ? st.max : st.min;
        assert_true(cap <= 16);
        size_t nsub = (size_t)1 << st.n, nstates = 2 * nsub * (cap + 1);
        gr_sym_t *t = malloc(nstates * sizeof *t);
        assert_non_null(t);
        for (size_t i = 0; i < nstates; i++)
            assert_int_equal(gr_cfg_fresh(g, "set", &t[i], &err), 0);
#define T(started, m, c) t[((started) * nsub + (m)) * (cap + 1) + (c)]
        for (size_t started = 0; started < 2; started++)
            for (size_t m = 0; m < nsub; m++)
                for (uint32_t c = 0; c <= cap; c++) {
                    gr_sym_t lhs = T(started, m, c);
                    uint32_t nc = c + 1 <= cap ? c + 1 : cap;
                    int room = st.max == GR_UNBOUNDED || c < st.max, done = c >= st.min;
                    for (uint32_t i = 0; i < st.n; i++) {
                        uint8_t req = g->set_required.data[st.off + i];
                        done &= !req || (m >> i & 1);
                        gr_sym_t seq[3] = {st.sep, g->set_member.data[st.off + i],
                                           T(1, m | (size_t)1 << i, nc)};
                        if (room && !(m >> i & 1))
                            assert_int_equal(gr_cfg_rule(g, lhs, seq + !started,
                                                         3 - !started, (gr_pos_t){0, 0}, &err),
                                             0);
                    }
                    gr_sym_t seq[3] = {st.sep, st.extra, T(1, m, nc)};
                    if (room && st.extra != GR_NO_EXTRA)
                        assert_int_equal(gr_cfg_rule(g, lhs, seq + !started, 3 - !started,
                                                     (gr_pos_t){0, 0}, &err),
                                         0);
                    if (done)
                        assert_int_equal(gr_cfg_rule(g, lhs, NULL, 0, (gr_pos_t){0, 0}, &err),
                                         0);
                    g->nt.data[lhs].nullable = (uint8_t)done;
                }
        assert_int_equal(gr_cfg_rule(g, st.nt, &T(0, 0, 0), 1, (gr_pos_t){0, 0}, &err), 0);
#undef T
        free(t);
    }
}

/* The schema's grammar, sets expanded (expand_sets) for earley_accepts. */
static gr_cfg_t *grammar(const char *schema, int compact)
{
    static gr_cfg_t g;
    tb_err_t err;
    gr_schema_opts_t o = {.compact = compact};
    assert_int_equal(gr_cfg_init(&g, "<test>", &err), 0);
    if (gr_schema_compile(&g, schema, strlen(schema), &o, &err))
        fail_msg("%s: %s", schema, err.msg);
    expand_sets(&g);
    return &g;
}

/* The schema's grammar as the masks run it (grammar/gram.h). */
static gr_gram_t *parser(const char *schema, int compact)
{
    gr_cfg_t *g = malloc(sizeof *g);
    tb_err_t err;
    gr_schema_opts_t o = {.compact = compact};
    assert_non_null(g);
    assert_int_equal(gr_cfg_init(g, "<test>", &err), 0);
    if (gr_schema_compile(g, schema, strlen(schema), &o, &err))
        fail_msg("%s: %s", schema, err.msg);
    gr_gram_t *gram = gr_gram_new(g, NULL, &err);
    free(g);
    if (!gram)
        fail_msg("%s: %s", schema, err.msg);
    return gram;
}

typedef struct {
    const char *schema;
    const char *const *instances; /* NULL-terminated */
} schema_case_t;

#define I(...) (const char *const[]){__VA_ARGS__, NULL}

static const schema_case_t cases[] = {
    {"{\"type\": \"integer\"}", I("0", "-7", "12", "1.5", "\"1\"", "1e2", "-0", "3.0")},
    {"{\"$schema\": \"http://json-schema.org/draft-04/schema#\", \"type\": \"integer\"}",
     I("3", "3.0")},
    {"{\"type\": \"integer\", \"minimum\": 2}", I("2.0", "1.0", "7")},
    {"{\"type\": [\"string\", \"null\"], \"maxLength\": 2}",
     I("\"ab\"", "\"abc\"", "null", "\"\"", "1", "\"\\u00e9\\\"\"")},
    {"{\"type\": \"integer\", \"minimum\": -3, \"exclusiveMaximum\": 12}",
     I("-3", "-4", "11", "12", "0", "5")},
    {"{\"type\": \"number\", \"minimum\": 0.5, \"maximum\": 2.25}",
     I("0.5", "0.49", "2.25", "2.26", "1", "1.75")},
    {"{\"type\": \"number\", \"exclusiveMinimum\": 0}", I("0", "0.0001", "1e-07", "-1", "3")},
    {"{\"$schema\": \"http://json-schema.org/draft-04/schema#\", \"type\": \"integer\", "
     "\"minimum\": 5, \"exclusiveMinimum\": true}", I("5", "6", "4")},
    {"{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}, "
     "\"b\": {\"type\": \"string\"}}, \"required\": [\"a\"]}",
     I("{\"a\": 1}", "{\"a\": 1, \"b\": \"x\"}", "{\"b\": \"x\"}", "{\"a\": \"1\"}",
       "{\"a\": 1, \"c\": [1, {\"d\": null}]}", "{\"c\": 2, \"a\": 1, \"e\": true}",
       "{\"a\": 1, \"b\": 2}", "{}", "[]")},
    {"{\"properties\": {\"a\": {\"const\": 1}}, \"additionalProperties\": false}",
     I("{\"a\": 1}", "{}", "{\"a\": 2}", "{\"a\": 1, \"b\": 1}", "3", "\"s\"")},
    {"{\"type\": \"object\", \"properties\": {\"ab\": {\"type\": \"null\"}}, "
     "\"additionalProperties\": {\"type\": \"integer\"}}",
     I("{\"ab\": null}", "{\"a\": 1, \"abc\": 2, \"ab\": null}", "{\"ab\": 1}",
       "{\"a\": null}", "{\"\": 3, \"b\": 4}", "{\"\\u0061b\": 1}", "{\"\\u0061b\": null}",
       "{\"a\\u0062c\": 1}")},
    {"{\"type\": \"object\", \"patternProperties\": {\"^x-\": {\"type\": \"string\"}}, "
     "\"additionalProperties\": false}",
     I("{\"x-a\": \"s\"}", "{\"x-a\": 1}", "{\"y\": \"s\"}", "{}")},
    {"{\"type\": \"object\", \"patternProperties\": {\".*\": {\"type\": \"integer\"}}, "
     "\"properties\": {\"a\": {\"minimum\": 3}}}",
     I("{\"a\": 3, \"b\": 1}", "{\"a\": 2}", "{\"b\": \"x\"}", "{\"a\": \"x\"}")},
    {"{\"type\": \"object\", \"minProperties\": 1}", I("{}", "{\"a\": 1}")},
    {"{\"type\": \"object\", \"properties\": {\"ab\": {\"type\": \"integer\"}}, "
     "\"patternProperties\": {\"^a\": {\"minimum\": 2}, \"b$\": {\"type\": \"integer\"}}, "
     "\"additionalProperties\": {\"type\": \"string\"}}",
     I("{\"ab\": 3}", "{\"ab\": 1}", "{\"ax\": 5}", "{\"ax\": \"s\"}", "{\"xb\": \"s\"}",
       "{\"zz\": \"s\"}", "{\"zz\": 1}", "{\"ab2\": 1}", "{\"axb\": 1}", "{\"axb\": 2}",
       "{\"axb\": \"s\"}", "{\"\": \"\"}", "{\"b\": 7, \"a\": 2, \"q\": \"r\"}")},
    {"{\"type\": \"object\", \"patternProperties\": {\"\\\"\": {\"type\": \"null\"}, "
     "\"^[a-z]{2}$\": {\"type\": \"boolean\"}}}",
     I("{\"a\\\"b\": null}", "{\"a\\\"b\": 1}", "{\"xy\": true}", "{\"xy\": 1}",
       "{\"xyz\": 1}", "{\"\\\"\\\"\": null}")},
    /* one pattern past 32 states and no defined names: the pattern's own
     * lexeme, and (?!P) before any string for the other names */
    {"{\"type\": \"object\", \"patternProperties\": {\"^[a-z0-9_-]{0,40}$\": {\"type\": \"integer\"}}, "
     "\"additionalProperties\": {\"type\": \"string\"}}",
     I("{\"ab_1\": 1}", "{\"ab_1\": \"s\"}", "{\"\": 1}", "{\"\": \"s\"}", "{\"A\": \"s\"}",
       "{\"A\": 1}", "{\"\\u0061b\": 1}", "{\"\\u0061b\": \"s\"}",
       "{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": 1}",
       "{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": 1}",
       "{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": \"s\"}", "{\"a\\u00e9\": \"s\"}")},
    /* patternProperties past 400 automaton states (look-aheads), anchors inside
     * a pattern, look-aheads at a pattern's start, not-pattern */
    {"{\"type\": \"object\", \"patternProperties\": {\"^[a-z0-9_]{1,450}$\": {\"type\": \"integer\"}}}",
     I("{\"abc\": 1}", "{\"abc\": \"s\"}", "{\"A\": \"s\"}", "{\"\": \"s\"}", "{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": \"s\"}", "{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": \"s\"}", "{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": 1}", "{\"a\\u00e9\": \"s\"}")},
    {"{\"properties\": {\"ab\": {\"type\": \"null\"}}, \"patternProperties\": {\"^[a-z]{1,450}$\": {\"type\": \"integer\"}, \"^a\": {\"minimum\": 5}}, \"additionalProperties\": {\"type\": \"string\"}}",
     I("{\"ab\": null}", "{\"ab\": 1}", "{\"ax\": 6}", "{\"ax\": 3}", "{\"a1\": \"s\"}", "{\"a1\": 3}", "{\"zz\": 2}", "{\"zz\": \"s\"}", "{\"Z\": \"s\"}", "{\"Z\": 1}", "{\"b\": null}")},
    {"{\"type\": \"object\", \"patternProperties\": {\"Red|Blue|Black 2\": {\"type\": \"integer\"}}, \"additionalProperties\": false}",
     I("{\"xRedx\": 1}", "{\"Black 2\": 1}", "{\"Black\": 1}", "{\"Blue\": \"s\"}", "{\"\": 1}")},
    {"{\"type\": \"object\", \"patternProperties\": {\"(^a$)|(^b)\": {\"type\": \"integer\"}}, \"additionalProperties\": {\"type\": \"string\"}}",
     I("{\"a\": 1}", "{\"a\": \"s\"}", "{\"ab\": \"s\"}", "{\"ab\": 1}", "{\"bc\": 1}", "{\"bc\": \"s\"}", "{\"cb\": 1}")},
    {"{\"type\": \"object\", \"patternProperties\": {\"^(?!@@)[@a-z]+$\": {\"type\": \"integer\"}}, \"additionalProperties\": false}",
     I("{\"a@\": 1}", "{\"@@a\": 1}", "{\"@a\": 1}", "{\"a\": \"s\"}", "{\"\": 1}")},
    {"{\"type\": \"string\", \"pattern\": \"^(?!pattern$).*$\"}",
     I("\"pattern\"", "\"patterns\"", "\"\"", "\"xpattern\"")},
    {"{\"type\": \"string\", \"pattern\": \"^(?=[^=]+$)(?!\\\\s+$)(.|\\\\n)+$\", \"maxLength\": 3}",
     I("\"ab\"", "\"a=b\"", "\"  \"", "\" a\"", "\"abcd\"", "\"\"")},
    {"{\"type\": \"string\", \"pattern\": \"^(?!^lucene\\\\.|builtin\\\\.)(?=.*[a-z])\"}",
     I("\"lucene.x\"", "\"builtin.a\"", "\"mylucene.a\"", "\"LUCENE\"", "\"x\"")},
    /* a pattern of 256 bytes or more is translated branch by branch at its
     * top-level '|' (compile.c), not at a '|' escaped, in a class or in a
     * group; and under `not` */
    {"{\"type\": \"string\", \"pattern\": \"^(?:alpha|bravo|charlie|delta|echo|foxtrot|golf|"
     "hotel|india|juliett|kilo|lima|mike|november|oscar|papa|quebec|romeo|sierra|tango|uniform|"
     "victor|whiskey|xray|yankee|zulu)-[0-9]{2}$|^x\\\\|y$|[\\\\]|]q|^(a|b)c(?:d|e)$|^(?:ALPHA|"
     "BRAVO|CHARLIE|DELTA|ECHO|FOXTROT|GOLF|HOTEL|INDIA|JULIETT|KILO|LIMA|MIKE|NOVEMBER|OSCAR|"
     "PAPA|QUEBEC|ROMEO|SIERRA|TANGO|UNIFORM|VICTOR|WHISKEY|XRAY|YANKEE|ZULU)$\"}",
     I("\"delta-07\"", "\"delta-7\"", "\"x|y\"", "\"xy\"", "\"a]q\"", "\"a|q\"", "\"aq\"",
       "\"bce\"", "\"bc\"", "\"ZULU\"", "\"zulu\"", "\"1ZULU\"")},
    {"{\"type\": \"string\", \"not\": {\"pattern\": \"^(?:alpha|bravo|charlie|delta|echo|"
     "foxtrot|golf|hotel|india|juliett|kilo|lima|mike|november|oscar|papa|quebec|romeo|sierra|"
     "tango|uniform|victor|whiskey|xray|yankee|zulu)-[0-9]{2}$|^x\\\\|y$|[\\\\]|]q|^(a|b)c(?:d|"
     "e)$|^(?:ALPHA|BRAVO|CHARLIE|DELTA|ECHO|FOXTROT|GOLF|HOTEL|INDIA|JULIETT|KILO|LIMA|MIKE|"
     "NOVEMBER|OSCAR|PAPA|QUEBEC|ROMEO|SIERRA|TANGO|UNIFORM|VICTOR|WHISKEY|XRAY|YANKEE|ZULU)$\"}}",
     I("\"delta-07\"", "\"delta-7\"", "\"x|y\"", "\"a|q\"", "\"aq\"", "\"bce\"", "\"ZULU\"",
       "\"1ZULU\"")},
    {"{\"type\": \"string\", \"not\": {\"pattern\": \"^[a-z]{1,450}$\"}}",
     I("\"abc\"", "\"ab1\"", "\"\"", "\"A\"")},
    {"{\"type\": \"string\", \"not\": {\"pattern\": \"a\"}, \"minLength\": 2}",
     I("\"ab\"", "\"bb\"", "\"b\"", "\"xyz\"")},
    {"{\"type\": \"array\", \"items\": {\"type\": \"integer\"}, \"minItems\": 1, "
     "\"maxItems\": 3}",
     I("[]", "[1]", "[1, 2, 3]", "[1, 2, 3, 4]", "[1, \"a\"]")},
    {"{\"type\": \"array\", \"prefixItems\": [{\"type\": \"string\"}, {\"type\": "
     "\"integer\"}], \"items\": false}",
     I("[]", "[\"a\"]", "[\"a\", 1]", "[\"a\", 1, 2]", "[1]")},
    {"{\"$schema\": \"http://json-schema.org/draft-07/schema#\", \"type\": \"array\", "
     "\"items\": [{\"type\": \"string\"}], \"additionalItems\": {\"type\": \"boolean\"}, "
     "\"minItems\": 2}",
     I("[\"a\"]", "[\"a\", true]", "[\"a\", true, false]", "[\"a\", 1]")},
    {"{\"enum\": [\"red\", 1, 2.5, null, [1, \"x\"], {\"k\": true}]}",
     I("\"red\"", "1", "2.5", "null", "[1, \"x\"]", "{\"k\": true}", "\"blue\"", "2",
       "[1]")},
    {"{\"type\": \"string\", \"enum\": [\"a\", 1, \"b\\\"c\"]}", I("\"a\"", "1", "\"b\\\"c\"")},
    {"{\"anyOf\": [{\"type\": \"integer\"}, {\"type\": \"string\", \"pattern\": \"^a\"}]}",
     I("1", "\"ab\"", "\"ba\"", "null")},
    {"{\"type\": \"object\", \"properties\": {\"k\": {\"type\": \"string\"}}, "
     "\"oneOf\": [{\"required\": [\"k\"], \"properties\": {\"k\": {\"maxLength\": 1}}}, "
     "{\"properties\": {\"k\": false}}]}",
     I("{\"k\": \"a\"}", "{}", "{\"k\": \"ab\"}", "{\"j\": 1}")},
    {"{\"type\": \"object\", \"properties\": {\"b\": {\"type\": \"integer\"}}, \"oneOf\": "
     "[{\"required\": [\"a\", \"b\"]}, {\"required\": [\"c\"]}, {\"required\": [\"d\"]}]}",
     I("{\"b\": 2, \"a\": 1}", "{\"c\": 1}", "{\"d\": 1}", "{\"c\": 1, \"d\": 1}",
       "{\"b\": 2, \"a\": 1, \"c\": 3}", "{\"c\": 3, \"a\": 1}", "{\"b\": 1, \"d\": 3}", "{}",
       "{\"a\": 1, \"b\": \"x\"}")},
    {"{\"allOf\": [{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}}},"
     " {\"properties\": {\"a\": {\"minimum\": 2}}, \"required\": [\"a\"]}]}",
     I("{\"a\": 2}", "{\"a\": 1}", "{}", "{\"a\": 2, \"b\": 0}")},
    {"{\"$defs\": {\"node\": {\"type\": \"object\", \"properties\": {\"v\": {\"type\": "
     "\"integer\"}, \"next\": {\"$ref\": \"#/$defs/node\"}}, \"additionalProperties\": "
     "false}}, \"$ref\": \"#/$defs/node\"}",
     I("{\"v\": 1}", "{\"v\": 1, \"next\": {\"v\": 2, \"next\": {}}}",
       "{\"next\": {\"v\": \"x\"}}")},
    {"{\"definitions\": {\"s\": {\"type\": \"string\", \"format\": \"date\"}}, \"type\": "
     "\"array\", \"items\": {\"$ref\": \"#/definitions/s\"}}",
     I("[\"2024-01-31\"]", "[]", "[\"x\"]")},
    {"{\"type\": \"string\", \"pattern\": \"\\\\d\"}", I("\"a1\"", "\"a\"", "null")},
    {"{\"$schema\": \"http://json-schema.org/draft-07/schema#\", \"type\": \"object\", "
     "\"properties\": {\"a\": {}, \"b\": {}}, \"dependencies\": {\"a\": [\"b\"], \"c\": "
     "{\"required\": [\"d\"]}}}",
     I("{}", "{\"a\": 1}", "{\"a\": 1, \"b\": 2}", "{\"b\": 2}", "{\"c\": 1}",
       "{\"c\": 1, \"d\": 2}", "{\"a\": 1, \"b\": 2, \"c\": 3, \"d\": 4}")},
    {"{\"type\": \"object\", \"dependentRequired\": {\"a\": [\"b\"]}, \"dependentSchemas\": "
     "{\"b\": {\"properties\": {\"a\": {\"type\": \"string\"}}}}}",
     I("{\"a\": 1}", "{\"a\": \"x\", \"b\": 1}", "{\"a\": 1, \"b\": 1}", "{\"b\": 1}")},
    {"{\"type\": [\"string\", \"null\"], \"pattern\": \"a^\"}", I("null", "\"a\"", "\"\"")},
    {"{\"allOf\": [{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}}, "
     "\"additionalProperties\": false}, {\"properties\": {\"b\": {}}}]}",
     I("{\"a\": 1}", "{\"b\": 1}", "{\"a\": \"x\"}", "{}")},
    {"{\"allOf\": [{\"properties\": {\"a\": {}}, \"additionalProperties\": {\"type\": \"string\"}}, "
     "{\"properties\": {\"b\": {\"type\": \"string\"}}, \"additionalProperties\": {\"maxLength\": 2}}]}",
     I("{\"a\": 5}", "{\"b\": \"xyz\"}", "{\"c\": \"xyz\"}", "{\"c\": \"xy\"}", "{\"b\": 1}",
       "{\"a\": \"long\", \"b\": \"s\", \"c\": \"s\"}")},
    {"{\"properties\": {\"a\": {\"not\": {}}}}", I("{\"a\": 1}", "{}", "3")},
    {"{\"type\": \"object\", \"not\": {\"required\": [\"b\", \"c\"]}}",
     I("{}", "{\"b\": 1}", "{\"b\": 1, \"c\": 2}")},
    {"{\"not\": {\"required\": [\"a\"]}}", I("1", "{}", "{\"a\": 1}")},
    {"{\"not\": {\"type\": \"string\"}}", I("\"x\"", "1", "null", "[]")},
    {"{\"type\": \"string\", \"not\": {\"pattern\": \"^a\"}}", I("\"ab\"", "\"ba\"", "\"\"")},
    {"{\"not\": {\"enum\": [\"x\", \"y\"]}}", I("\"x\"", "\"z\"", "\"xy\"", "1")},
    {"{\"type\": \"string\", \"enum\": [\"a\", \"abc\", \"abcd\"], \"maxLength\": 3}",
     I("\"a\"", "\"abc\"", "\"abcd\"")},
    {"{\"enum\": [1, 5, 10.5, \"x\", \"yz\", null], \"minimum\": 3, \"pattern\": \"^y\"}",
     I("1", "5", "10.5", "\"x\"", "\"yz\"", "null")},
    {"true", I("1", "{\"a\": [null]}", "\"\"")},
    {"{\"type\": \"object\", \"properties\": {\"a\": false}}", I("{}", "{\"a\": 1}", "{\"b\": 1}")},
    {"{\"type\": \"string\", \"pattern\": \"^[^\\\"]*$\", \"minLength\": 1}",
     I("\"\"", "\"a\"", "\"a\\\"\"", "\"\\n\"", "\"\\u00e9\"")},
    /* a custom format is an annotation (jsonschema ignores it too) */
    {"{\"type\": \"string\", \"format\": \"url\", \"maxLength\": 3}",
     I("\"abc\"", "\"a b\"", "\"abcd\"", "1")},
    /* intersections (the lexer's look-ahead): pattern, format and bounds */
    {"{\"type\": \"string\", \"minLength\": 3, \"pattern\": \"^a+b+$\"}",
     I("\"ab\"", "\"aab\"", "\"abbb\"", "\"ba\"", "\"a\"")},
    {"{\"type\": \"string\", \"maxLength\": 4, \"pattern\": \"[0-9]\"}",
     I("\"1\"", "\"ab1c\"", "\"ab1cd\"", "\"abcd\"", "\"\\u00e91\"")},
    {"{\"type\": \"string\", \"format\": \"email\", \"maxLength\": 6}",
     I("\"a@b.cd\"", "\"ab@c.de\"", "\"a@b\"", "\"abcdef\"")},
    {"{\"type\": \"string\", \"format\": \"date\", \"pattern\": \"^2024\"}",
     I("\"2024-01-31\"", "\"2023-01-31\"", "\"2024-13-01\"", "\"2024\"")},
    {"{\"type\": \"string\", \"format\": \"ipv4\", \"pattern\": \"\\\\.1$\", "
     "\"minLength\": 9}",
     I("\"10.0.0.1\"", "\"10.0.10.1\"", "\"192.168.0.1\"", "\"10.0.10.2\"")},
    /* minProperties and maxProperties counted with the additional members */
    {"{\"type\": \"object\", \"maxProperties\": 2}",
     I("{}", "{\"a\": 1, \"b\": 2}", "{\"a\": 1, \"b\": 2, \"c\": 3}", "[1, 2, 3]")},
    {"{\"type\": \"object\", \"properties\": {\"a\": {}}, \"minProperties\": 3, "
     "\"maxProperties\": 3}",
     I("{\"a\": 1, \"b\": 2, \"c\": 3}", "{\"b\": 1, \"c\": 2, \"d\": 3}",
       "{\"a\": 1, \"b\": 2}", "{\"a\": 1, \"b\": 2, \"c\": 3, \"d\": 4}")},
    {"{\"maxProperties\": 0}", I("{}", "{\"a\": 1}", "1")},
    {"{\"type\": \"object\", \"properties\": {\"a\": {}, \"b\": {}, \"c\": {}}, "
     "\"additionalProperties\": false, \"maxProperties\": 1}",
     I("{\"a\": 1}", "{\"a\": 1, \"c\": 2}", "{}")},
    /* an enum beside the complement of another (a not, or if/else) */
    {"{\"properties\": {\"c\": {\"type\": \"string\", \"enum\": [\"abc\", \"ghi\"]}}, "
     "\"if\": {\"properties\": {\"c\": {\"enum\": [\"ghi\"]}}}, \"then\": {\"required\": [\"b\"]}, "
     "\"else\": {\"required\": [\"c\"]}}",
     I("{\"c\": \"ghi\"}", "{\"c\": \"abc\"}", "{\"c\": \"ghi\", \"b\": 1}", "{}")},
    /* a definition that requires itself allows no value: where it is
     * optional, the property cannot appear */
    {"{\"$defs\": {\"A\": {\"type\": \"object\", \"properties\": {\"n\": {\"$ref\": "
     "\"#/$defs/A\"}}, \"required\": [\"n\"]}}, \"properties\": {\"a\": {\"$ref\": "
     "\"#/$defs/A\"}}}",
     I("{}", "1", "{\"a\": {}}", "{\"b\": 2}")},
    /* integers beyond 64 bits, exact as the schema writes them */
    {"{\"type\": \"integer\", \"maximum\": 18446744073709551615}",
     I("18446744073709551615", "18446744073709551616", "5", "-99999999999999999999")},
    {"{\"enum\": [12345678901234567890, \"x\"]}",
     I("12345678901234567890", "12345678901234567891", "\"x\"")},
    /* uniqueItems over an enum: each value at most once, in any order */
    {"{\"type\": \"array\", \"items\": {\"enum\": [\"a\", \"b\", 1, 1.0]}, "
     "\"uniqueItems\": true, \"maxItems\": 2}",
     I("[]", "[\"b\", \"a\"]", "[\"a\", \"a\"]", "[1, 1.0]", "[1, \"a\"]",
       "[\"a\", \"b\", 1]", "[\"c\"]")},
    {"{\"items\": {\"type\": \"boolean\"}, \"uniqueItems\": true, \"minItems\": 2}",
     I("[true, false]", "[false, true]", "[true, true]", "[true]", "\"x\"")},
    /* a NUL character in a pattern (JSON's \u0000), also under not */
    {"{\"type\": \"string\", \"pattern\": \"^/[^\\u0000]+$\"}",
     I("\"/abc\"", "\"/a\\u0000b\"", "\"abc\"")},
    {"{\"type\": \"string\", \"not\": {\"pattern\": \"^a\\u0000\"}}",
     I("\"a\\u0000b\"", "\"ab\"")},
    /* an interval with no integer in it allows no integer */
    {"{\"anyOf\": [{\"type\": \"integer\", \"exclusiveMinimum\": 6379, "
     "\"exclusiveMaximum\": 6380}, {\"type\": \"string\"}]}",
     I("\"x\"", "6379", "6380", "6379.5")},
    /* a branch whose length interval is empty allows no string */
    {"{\"anyOf\": [{\"type\": \"string\", \"minLength\": 5, \"maxLength\": 2}, "
     "{\"type\": \"integer\"}]}",
     I("3", "\"abc\"", "\"abcdef\"")},
    /* multipleOf 1 is arithmetic in draft 4 too: 3.0 is a multiple */
    {"{\"$schema\": \"http://json-schema.org/draft-04/schema#\", \"type\": \"number\", "
     "\"multipleOf\": 1, \"maximum\": 100}",
     I("3", "3.0", "3.5", "101.0")},
    /* seven properties in any order, counted */
    {"{\"properties\": {\"a\": {}, \"b\": {}, \"c\": {}, \"d\": {}, \"e\": {}, \"f\": {}, "
     "\"g\": {\"type\": \"integer\"}}, \"required\": [\"g\"], \"maxProperties\": 3}",
     I("{\"g\": 1, \"a\": 2}", "{\"f\": 1, \"x\": 2, \"g\": 3}", "{\"b\": 1}",
       "{\"a\": 1, \"b\": 2, \"c\": 3, \"g\": 4}", "{\"g\": \"x\"}")},
    /* propertyNames: every name in its string lexeme */
    {"{\"type\": \"object\", \"propertyNames\": {\"maxLength\": 3}}",
     I("{\"abc\": 1}", "{\"abcd\": 1}", "{}", "{\"\u00e9\u00e9\u00e9\": 1}", "{\"a\": 1, \"bcde\": 2}")},
    {"{\"type\": \"object\", \"properties\": {\"long\": {}}, \"propertyNames\": "
     "{\"pattern\": \"^[a-z]{1,3}$\"}}",
     I("{\"long\": 1}", "{\"ab\": 1}", "{\"ab1\": 2}", "{}")},
    {"{\"propertyNames\": {\"enum\": [\"a\", \"b\", 3]}, \"required\": [\"a\"]}",
     I("{\"a\": 1}", "{\"a\": 1, \"b\": 2}", "{\"c\": 1}", "{}", "\"x\"", "{\"a\": 1, \"3\": 1}")},
    {"{\"type\": \"object\", \"propertyNames\": false}", I("{}", "{\"a\": 1}")},
    {"{\"type\": \"object\", \"patternProperties\": {\"^x\": {\"type\": \"integer\"}}, "
     "\"propertyNames\": {\"minLength\": 2, \"type\": \"string\"}}",
     I("{\"xy\": 1}", "{\"x\": 1}", "{\"xy\": \"s\"}", "{\"ab\": \"s\"}")},
    /* $ref by $id base URIs (relative resolution) and by $anchor */
    {"{\"$id\": \"http://example.com/root.json\", \"$defs\": {\"a\": {\"$id\": "
     "\"sub/a.json\", \"type\": \"integer\"}}, \"properties\": {\"x\": {\"$ref\": "
     "\"sub/a.json\"}}}",
     I("{\"x\": 1}", "{\"x\": \"s\"}", "{}")},
    {"{\"$defs\": {\"n\": {\"$anchor\": \"num\", \"type\": \"number\"}}, "
     "\"items\": {\"$ref\": \"#num\"}}",
     I("[1, 2.5]", "[\"a\"]", "[]")},
    {"{\"$schema\": \"http://json-schema.org/draft-07/schema#\", \"definitions\": {\"a\": "
     "{\"$id\": \"#foo\", \"type\": \"null\"}}, \"items\": {\"$ref\": \"#foo\"}}",
     I("[null]", "[1]")},
    {"{\"$id\": \"urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed\", \"$defs\": {\"b\": "
     "{\"type\": \"boolean\"}}, \"prefixItems\": [{\"$ref\": "
     "\"urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed#/$defs/b\"}]}",
     I("[true]", "[1]")},
    /* unevaluatedItems where the evaluated items are known statically */
#define D2020 "\"$schema\": \"https://json-schema.org/draft/2020-12/schema\", "
    /* unevaluatedProperties where the names evaluated are static */
    {"{" D2020 "\"properties\": {\"a\": {}}, \"patternProperties\": {\"^x\": "
     "{\"type\": \"integer\"}}, \"unevaluatedProperties\": {\"type\": \"string\"}}",
     I("{\"a\": 1, \"xy\": 2, \"b\": \"s\"}", "{\"b\": 1}", "{\"xy\": \"s\"}", "{}")},
    {"{" D2020 "\"allOf\": [{\"properties\": {\"a\": {}}}], \"$defs\": {\"r\": "
     "{\"properties\": {\"b\": {}}}}, \"$ref\": \"#/$defs/r\", "
     "\"unevaluatedProperties\": false}",
     I("{\"a\": 1, \"b\": 2}", "{\"a\": 1, \"c\": 2}", "{}")},
    {"{" D2020 "\"properties\": {\"a\": {}}, \"allOf\": [{\"additionalProperties\": "
     "true}], \"unevaluatedProperties\": false}",
     I("{\"a\": 1, \"c\": 2}", "{}")},
    {"{" D2020 "\"properties\": {\"a\": {}}, \"allOf\": [{\"properties\": {\"b\": {}}, "
     "\"unevaluatedProperties\": false}], \"unevaluatedProperties\": false}",
     I("{\"a\": 1}", "{\"b\": 1}", "{\"c\": 1}", "{}")},
    {"{" D2020 "\"properties\": {\"a\": {}}, \"not\": {\"required\": [\"c\"]}, "
     "\"unevaluatedProperties\": false}",
     I("{\"a\": 1}", "{\"c\": 2}", "{\"b\": 1}", "{}", "1")},
    {"{" D2020 "\"if\": {\"properties\": {\"a\": {\"const\": 1}}, \"required\": [\"a\"]}, "
     "\"then\": {\"properties\": {\"b\": {}}}, \"else\": {\"properties\": {\"c\": {}}}, "
     "\"unevaluatedProperties\": false}",
     I("{\"a\": 1, \"b\": 2}", "{\"a\": 1, \"c\": 2}", "{\"c\": 1}", "{\"a\": 2, \"c\": 3}",
       "{\"b\": 1}", "{}")},
    {"{\"$schema\": \"http://json-schema.org/draft-07/schema#\", \"unevaluatedProperties\": "
     "false}", I("{\"a\": 1}", "{}")},
    {"{" D2020 "\"unevaluatedItems\": false}", I("[\"foo\"]", "[]", "1", "{\"a\": 1}")},
    {"{" D2020 "\"prefixItems\": [{\"type\": \"string\"}], \"unevaluatedItems\": false}",
     I("[\"a\"]", "[\"a\", 1]", "[]", "[1]")},
    {"{" D2020 "\"unevaluatedItems\": {\"type\": \"string\"}, \"allOf\": [{\"prefixItems\": "
     "[{\"type\": \"integer\"}]}]}",
     I("[1, \"a\", \"b\"]", "[1, 2]", "[\"a\"]", "[]")},
    {"{" D2020 "\"allOf\": [{\"prefixItems\": [{\"type\": \"string\"}]}, {\"unevaluatedItems\": "
     "true}], \"unevaluatedItems\": false}",
     I("[\"a\", 1]", "[1]")},
    {"{" D2020 "\"allOf\": [{\"prefixItems\": [true]}, {\"unevaluatedItems\": false}]}",
     I("[1]", "[]")},
    {"{" D2020 "\"unevaluatedItems\": false, \"items\": {\"type\": \"integer\"}}",
     I("[1, 2]", "[\"a\"]")},
    /* not: the complement keyword by keyword (grammar/schema/not.c) */
    {"{\"not\": {\"minimum\": 3}}", I("2", "3", "\"x\"", "2.5", "-1")},
    {"{\"not\": {\"type\": \"integer\"}}", I("1", "1.5", "\"a\"", "null", "2.0")},
    {"{\"type\": \"number\", \"not\": {\"multipleOf\": 1}}", I("1", "1.5", "2.0", "-0.25")},
    {"{\"type\": \"number\", \"minimum\": 1, \"not\": {\"multipleOf\": 0.1}}",
     I("1.25", "0.25", "2.05", "0.5")},
    {"{\"not\": {\"properties\": {\"a\": {\"type\": \"string\"}}}}",
     I("{}", "{\"a\": 1}", "{\"a\": \"s\"}", "3")},
    {"{\"not\": {\"enum\": [1, \"a\", true, null]}}",
     I("1", "1.0", "2", "0.5", "\"a\"", "\"b\"", "true", "false", "null", "[]")},
    {"{\"not\": {\"oneOf\": [{\"minimum\": 2}, {\"maximum\": 5}]}}", I("1", "3", "6", "\"x\"")},
    /* not items: some item in the complement (contains), a tuple item by
     * its position */
    {"{\"not\": {\"items\": {\"type\": \"integer\"}}}",
     I("[1, 2]", "[1, \"a\"]", "[]", "\"x\"", "[\"a\"]")},
    {"{" D2020 "\"not\": {\"prefixItems\": [{\"type\": \"integer\"}, {\"type\": \"string\"}]}}",
     I("[1, \"a\"]", "[\"a\"]", "[1, 2]", "[1]", "[]", "3", "[1, \"a\", 2]")},
    {"{\"$schema\": \"http://json-schema.org/draft-07/schema#\", \"type\": \"array\", "
     "\"items\": {\"minimum\": 0}, \"not\": {\"items\": [{\"type\": \"integer\"}], "
     "\"additionalItems\": true}}",
     I("[1]", "[1.5]", "[]", "[1, 2.5]", "[-1]")},
    /* not additionalProperties: an additional member with a value in the
     * complement, where the object can have only the properties beside it
     * (or false beside no property: any member) */
    {"{\"not\": {\"additionalProperties\": false}}", I("{}", "{\"a\": 1}", "3")},
    {"{\"not\": {\"minProperties\": 2, \"maxProperties\": 2}}",
     I("{}", "{\"a\": 1}", "{\"a\": 1, \"b\": 2}", "{\"a\": 1, \"b\": 2, \"c\": 3}", "3")},
    /* strict oneOf shown disjoint: types under a oneOf, items at positions
     * both have (minItems), required versus not required */
    {"{\"oneOf\": [{\"oneOf\": [{\"type\": \"string\"}, {\"type\": \"null\"}]}, "
     "{\"type\": \"object\"}]}", I("\"x\"", "null", "{}", "1")},
    {"{\"properties\": {\"a\": {}, \"b\": {}}, \"additionalProperties\": false, \"not\": "
     "{\"properties\": {\"a\": {}}, \"additionalProperties\": false}}",
     I("{}", "{\"a\": 1}", "{\"b\": 1}", "{\"a\": 1, \"b\": 2}", "{\"c\": 1}")},
    {"{\"properties\": {\"a\": {}, \"b\": {}, \"xc\": {}}, \"additionalProperties\": false, "
     "\"not\": {\"properties\": {\"a\": {}}, \"patternProperties\": {\"^x\": {}}, "
     "\"additionalProperties\": {\"type\": \"string\"}}}",
     I("{\"b\": \"s\"}", "{\"b\": 1}", "{\"xc\": 1}", "{\"a\": 1}", "{}", "{\"a\": 1, \"b\": 2}")},
    {"{\"properties\": {\"ab\": {}, \"c\": {}}, \"additionalProperties\": false, \"not\": "
     "{\"patternProperties\": {\"^a\": {\"type\": \"integer\"}}}}",
     I("{\"ab\": 1}", "{\"ab\": \"x\"}", "{\"c\": \"x\"}", "{}")},
    /* not additionalProperties elsewhere: a member that must be there (a
     * name of the negated schema's additional ones with a value of the
     * complement): one of the object's own names, or another name, with
     * what the object asks of that name too */
    {"{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"string\"}}, \"not\": "
     "{\"properties\": {\"b\": {}}, \"additionalProperties\": {\"type\": \"integer\"}}}",
     I("{}", "{\"b\": \"x\"}", "{\"c\": 1}", "{\"c\": \"x\"}", "{\"c\": 1, \"d\": \"x\"}",
       "{\"a\": \"s\"}", "{\"a\": 1}", "{\"a\": \"s\", \"c\": 1}", "{\"b\": 1, \"c\": 2}",
       "{\"c\": 1, \"b\": [], \"d\": 2}", "3")},
    {"{\"not\": {\"properties\": {\"a\": {}}, \"additionalProperties\": false}}",
     I("{}", "{\"a\": 1}", "{\"b\": 1}", "{\"a\": 1, \"b\": 2}", "3")},
    {"{\"type\": \"object\", \"required\": [\"r\"], \"not\": {\"properties\": {\"a\": {}}, "
     "\"additionalProperties\": false}}",
     I("{\"r\": 1}", "{\"r\": 1, \"a\": 2}", "{}", "{\"a\": 1}", "{\"b\": 1}")},
    {"{\"type\": \"object\", \"properties\": {\"a\": {}}, \"maxProperties\": 1, \"not\": "
     "{\"properties\": {\"a\": {}}, \"additionalProperties\": false}}",
     I("{\"a\": 1}", "{\"b\": 1}", "{\"a\": 1, \"b\": 1}", "{}")},
    /* the object's patterns and the negated schema's split the names */
    {"{\"type\": \"object\", \"properties\": {\"p\": {\"type\": \"string\"}}, "
     "\"patternProperties\": {\"^a\": {\"type\": \"integer\"}}, \"additionalProperties\": "
     "{\"type\": \"boolean\"}, \"not\": {\"properties\": {\"q\": {}}, \"patternProperties\": "
     "{\"b$\": {}}, \"additionalProperties\": {\"type\": \"integer\"}}}",
     I("{\"p\": \"s\"}", "{\"a1\": 1}", "{\"zb\": true}", "{\"z\": true}", "{\"q\": true}",
       "{\"a1\": 1, \"z\": true}", "{\"ab\": 1, \"zb\": false}", "{}", "{\"z\": 1}")},
    /* the not of a recursive $ref: one rule, recursing through itself */
    {"{" D2020 "\"$defs\": {\"t\": {\"type\": \"object\", \"properties\": {\"c\": {\"$ref\": "
     "\"#/$defs/t\"}}, \"additionalProperties\": false}}, \"not\": {\"$ref\": \"#/$defs/t\"}}",
     I("{}", "{\"c\": {}}", "{\"c\": 1}", "{\"c\": {\"c\": 1}}", "{\"c\": {\"d\": 1}}",
       "{\"d\": 1}", "3", "{\"c\": {\"c\": {}}}")},
    /* two of them: one member for both, or one each (own names too) */
    {"{\"allOf\": [{\"not\": {\"properties\": {\"a\": {}}, \"additionalProperties\": false}}, "
     "{\"not\": {\"properties\": {\"b\": {}}, \"additionalProperties\": false}}]}",
     I("{}", "{\"a\": 1}", "{\"c\": 1}", "{\"a\": 1, \"b\": 2}", "{\"b\": 1}", "3")},
    {"{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}}, \"allOf\": "
     "[{\"not\": {\"properties\": {\"a\": {}}, \"additionalProperties\": false}}, {\"not\": "
     "{\"properties\": {\"b\": {}}, \"additionalProperties\": {\"type\": \"integer\"}}}]}",
     I("{\"a\": 1, \"c\": \"x\"}", "{\"a\": 1, \"c\": 1}", "{\"a\": \"x\"}", "{\"c\": \"x\"}",
       "{\"c\": 1, \"d\": \"x\"}", "{\"b\": \"x\"}", "{\"b\": \"x\", \"c\": 1}",
       "{\"b\": 1, \"d\": \"s\"}", "{\"a\": 1}")},
    /* not of allOf branches with patterns kept apart: each side's own */
    {"{\"not\": {\"allOf\": [{\"patternProperties\": {\"^a\": {\"type\": \"integer\"}}, "
     "\"additionalProperties\": {\"type\": \"string\"}}, {\"properties\": {\"b\": {\"maxLength\": 1}}, "
     "\"additionalProperties\": {\"minLength\": 1}}]}}",
     I("{}", "{\"a1\": 1}", "{\"a1\": \"x\"}", "{\"c\": \"s\"}", "{\"c\": 1}", "{\"b\": \"s\"}",
       "{\"b\": 1}", "{\"b\": \"st\"}", "{\"c\": \"\"}", "{\"a1\": 2, \"c\": \"s\"}", "3")},
    /* not patternProperties: a member matching the pattern with a value of
     * the complement, defined names too */
    {"{\"type\": \"object\", \"properties\": {\"xa\": {\"type\": \"integer\"}}, "
     "\"patternProperties\": {\"^y\": {\"type\": \"integer\"}}, \"not\": "
     "{\"patternProperties\": {\"^x|^y\": {\"minimum\": 5}}}}",
     I("{\"xa\": 1}", "{\"xa\": 7}", "{\"xb\": 7}", "{\"xb\": 3}", "{\"y1\": 2}",
       "{\"y1\": \"s\"}", "{\"z\": 1}", "{}", "{\"xa\": 7, \"y\": 3}")},
    /* complements' alternatives that the keywords beside the not exclude
     * (types, required names) left out */
    {"{\"type\": \"string\", \"not\": {\"type\": \"string\", \"maxLength\": 2}}",
     I("\"ab\"", "\"abc\"", "3", "null")},
    {"{\"required\": [\"a\"], \"not\": {\"required\": [\"a\", \"b\"]}}",
     I("{\"a\": 1}", "{\"a\": 1, \"b\": 2}", "{\"b\": 1}", "{}", "3")},
    {"{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"string\"}}, \"not\": "
     "{\"properties\": {\"a\": {\"type\": \"string\"}, \"b\": {\"type\": \"integer\"}}}}",
     I("{\"a\": \"x\"}", "{\"a\": \"x\", \"b\": \"y\"}", "{\"a\": 1}", "{\"b\": 1}",
       "{\"b\": \"s\"}", "{}")},
    /* not format: the strings its pattern does not match; two such merged */
    {"{\"type\": \"string\", \"not\": {\"format\": \"ipv4\"}}",
     I("\"1.2.3.4\"", "\"x\"", "\"1.2.3\"", "\"\"")},
    {"{\"type\": \"string\", \"allOf\": [{\"not\": {\"pattern\": \"^a\"}}, {\"not\": "
     "{\"pattern\": \"b$\"}}]}",
     I("\"ab\"", "\"a\"", "\"b\"", "\"c\"", "\"cb\"", "\"\"")},
    /* anyOf beside oneOf: each anyOf branch with the oneOf */
    {"{\"anyOf\": [{\"minimum\": 5}, {\"maxLength\": 1}], \"oneOf\": [{\"type\": \"integer\"}, "
     "{\"type\": \"string\"}]}",
     I("7", "3", "7.5", "\"x\"", "\"xy\"", "null")},
    /* empty length intervals allow no value of that type */
    {"{\"type\": [\"array\", \"string\", \"null\"], \"minItems\": 3, \"maxItems\": 2, "
     "\"minLength\": 2, \"maxLength\": 1}",
     I("[]", "[1, 2, 3]", "\"\"", "\"ab\"", "null")},
    {"{\"not\": {\"dependentRequired\": {\"a\": [\"b\"]}}}",
     I("{\"a\": 1}", "{\"a\": 1, \"b\": 2}", "{}", "1")},
    {"{\"type\": \"string\", \"not\": {\"anyOf\": [{\"maxLength\": 1}, {\"pattern\": \"x\"}]}}",
     I("\"a\"", "\"ab\"", "\"axb\"", "\"abc\"")},
    {"{\"not\": {\"not\": {\"type\": \"string\", \"minLength\": 2}}}", I("\"ab\"", "\"a\"", "1")},
    /* contains, minContains, maxContains (grammar/schema/array.c) */
    {"{\"contains\": {\"minimum\": 5}}", I("[3, 4, 5]", "[1]", "[]", "\"x\"", "[5, 6]")},
    {"{\"type\": \"array\", \"contains\": {\"type\": \"string\"}, \"minContains\": 2, "
     "\"maxContains\": 3}",
     I("[\"a\"]", "[\"a\", 1, \"b\"]", "[\"a\", \"b\", \"c\", \"d\"]", "[1, 2]",
       "[\"a\", \"b\", \"c\"]")},
    {"{\"prefixItems\": [{\"type\": \"integer\"}], \"items\": {\"type\": \"string\"}, "
     "\"contains\": {\"const\": 1}, \"maxItems\": 2}",
     I("[1]", "[2, \"a\"]", "[1, \"a\"]", "[]", "[1, \"a\", \"b\"]")},
    {"{\"not\": {\"contains\": {\"type\": \"null\"}}}", I("[1, null]", "[1]", "[]", "3")},
    {"{\"contains\": {\"type\": \"null\"}, \"minContains\": 0, \"maxContains\": 1}",
     I("[]", "[null]", "[null, 1, null]", "[1, 2]")},
    /* if/then/else: (if and then) or (not if and else) */
    {"{\"if\": {\"properties\": {\"k\": {\"const\": 1}}, \"required\": [\"k\"]}, \"then\": "
     "{\"required\": [\"a\"]}, \"else\": {\"required\": [\"b\"]}}",
     I("{\"k\": 1, \"a\": 0}", "{\"k\": 1}", "{\"b\": 0}", "{}", "{\"k\": 2, \"b\": 1}", "3")},
    {"{\"type\": \"string\", \"if\": {\"maxLength\": 2}, \"then\": {\"pattern\": \"^a\"}}",
     I("\"ab\"", "\"b\"", "\"bcd\"", "\"\"")},
    {"{\"if\": {\"minimum\": 10}, \"else\": {\"multipleOf\": 1}}", I("10.5", "9.5", "9", "\"s\"")},
    /* const and enum compare JSON values: numbers by value, objects in any
     * member order (JSON-Schema-Test-Suite const.json, enum.json) */
    {"{\"const\": 0}", I("0", "0.0", "-0.0", "false", "1", "0.5")},
    {"{\"const\": -2.0}", I("-2", "-2.0", "2", "-2.5")},
    {"{\"enum\": [0]}", I("0.0", "0", "false", "null")},
    {"{\"enum\": [1, 2.5], \"type\": \"integer\"}", I("1.0", "2.5", "1")},
    {"{\"const\": 9007199254740992}", I("9007199254740992.0", "9007199254740992",
                                          "9007199254740993")},
    {"{\"const\": {\"foo\": \"bar\", \"baz\": \"bax\"}}",
     I("{\"baz\": \"bax\", \"foo\": \"bar\"}", "{\"foo\": \"bar\", \"baz\": \"bax\"}",
       "{\"foo\": \"bar\"}", "{\"foo\": \"bar\", \"baz\": \"bax\", \"x\": 1}")},
    {"{\"enum\": [[0], {\"a\": [1.0, {\"b\": false}]}]}",
     I("[0.0]", "{\"a\": [1, {\"b\": false}]}", "{\"a\": [1]}", "[0, 0]")},
    {"{\"$schema\": \"http://json-schema.org/draft-04/schema#\", \"type\": \"integer\", "
     "\"enum\": [3]}", I("3", "3.0")},
    /* each allOf branch's additionalProperties applies to the names its own
     * properties and patternProperties leave */
    {"{\"allOf\": [{\"additionalProperties\": false}, {\"patternProperties\": {\"^f\": "
     "{\"type\": \"integer\"}}}]}",
     I("{\"foo\": 42}", "{\"fa\": 1, \"fb\": 2}", "{}", "{\"bar\": 1}")},
    {"{\"allOf\": [{\"additionalProperties\": {\"type\": \"string\"}}, {\"patternProperties\": "
     "{\"^f\": {\"type\": \"integer\"}}}]}",
     I("{\"foo\": 42}", "{\"foo\": \"x\"}", "{\"bar\": \"x\"}", "{\"bar\": 1}")},
    {"{\"allOf\": [{\"properties\": {\"a\": {}}, \"patternProperties\": {\"^x\": {\"type\": "
     "\"integer\"}}, \"additionalProperties\": false}, {\"properties\": {\"xb\": {\"minimum\": 2}, "
     "\"c\": {}}, \"patternProperties\": {\"b$\": {\"maximum\": 5}}}]}",
     I("{\"a\": \"s\"}", "{\"xb\": 3}", "{\"xb\": 1}", "{\"xb\": 7}", "{\"c\": 1}",
       "{\"xab\": 6}", "{\"xab\": 4}", "{\"ab\": 1}", "{\"x\": 1.5}")},
    {"{\"patternProperties\": {\"^a\": {\"type\": \"string\"}}, \"allOf\": [{\"properties\": "
     "{\"ab\": {\"maxLength\": 1}}, \"required\": [\"ab\"]}]}",
     I("{\"ab\": \"x\"}", "{\"ab\": 1}", "{\"ab\": \"xy\"}", "{}", "{\"ab\": \"x\", \"ac\": 2}")},
    /* merged item keywords keep their scopes: items after its own prefix */
    {"{" D2020 "\"allOf\": [{\"prefixItems\": [{\"minimum\": 3}]}], \"items\": "
     "{\"minimum\": 5}}",
     I("[3, 5]", "[5, 5]", "[5]", "[3]", "[]")},
    {"{" D2020 "\"allOf\": [{\"prefixItems\": [{\"type\": \"integer\"}], \"items\": false}, "
     "{\"prefixItems\": [true, true]}]}",
     I("[1]", "[1, 2]", "[\"a\"]")},
    {"{\"$schema\": \"http://json-schema.org/draft-07/schema#\", \"allOf\": [{\"additionalItems\": "
     "false}, {\"items\": [{\"type\": \"integer\"}]}]}",
     I("[1, \"x\"]", "[\"x\"]")},
    {"{\"$schema\": \"http://json-schema.org/draft-07/schema#\", \"items\": [{\"minimum\": 2}], "
     "\"additionalItems\": {\"type\": \"string\"}, \"allOf\": [{\"items\": {\"type\": "
     "\"integer\"}}]}",
     I("[2]", "[2, \"x\"]", "[1]", "[2, 3]")},
    /* allOf merges: two not-patterns (not their alternation) */
    {"{\"allOf\": [{\"not\": {\"pattern\": \"^a\"}}, {\"not\": {\"pattern\": \"b$\"}}]}",
     I("\"ax\"", "\"xb\"", "\"xx\"", "\"ab\"", "\"\"", "1")},
    /* two different const of a property: it cannot appear */
    {"{\"allOf\": [{\"properties\": {\"k\": {\"const\": 1}}}, {\"properties\": {\"k\": "
     "{\"const\": 2}}}]}", I("{}", "{\"k\": 1}", "{\"k\": 2}", "{\"j\": 2}")},
    /* two conditionals of any kind: each its own conjunct */
    {"{\"allOf\": [{\"if\": {\"required\": [\"a\"]}, \"then\": {\"required\": [\"b\"]}}, "
     "{\"if\": {\"required\": [\"c\"]}, \"then\": {\"required\": [\"d\"]}, \"else\": "
     "{\"required\": [\"e\"]}}]}",
     I("{}", "{\"e\": 1}", "{\"a\": 1, \"e\": 1}", "{\"a\": 1, \"b\": 1, \"e\": 1}",
       "{\"c\": 1, \"d\": 1}", "{\"c\": 1}", "{\"a\": 1, \"b\": 1, \"c\": 1, \"d\": 1}", "5")},
    /* conditionals on one discriminator property (disjoint values): one
     * branch per value, one for none, one without it, one for non-objects */
    {"{\"allOf\": [{\"if\": {\"properties\": {\"t\": {\"const\": \"x\"}}}, \"then\": "
     "{\"required\": [\"x\"]}}, {\"if\": {\"properties\": {\"t\": {\"const\": \"y\"}}, "
     "\"required\": [\"t\"]}, \"then\": {\"required\": [\"y\"]}, \"else\": {\"properties\": "
     "{\"z\": {\"type\": \"integer\"}}}}, {\"if\": {\"properties\": {\"t\": {\"enum\": "
     "[\"u\", \"v\"]}}}, \"then\": {\"properties\": {\"w\": {\"type\": \"string\"}}}, "
     "\"else\": {\"required\": [\"n\"]}}]}",
     I("{\"x\": 1}", "{}", "{\"x\": 1, \"z\": \"s\"}", "{\"t\": \"x\", \"x\": 1, \"n\": 1}",
       "{\"t\": \"x\", \"x\": 1}", "{\"t\": \"y\", \"y\": 1, \"n\": 1}", "{\"t\": \"y\", "
       "\"n\": 1}", "{\"t\": \"y\", \"y\": 1, \"n\": 1, \"z\": \"s\"}", "{\"t\": \"u\", "
       "\"w\": \"s\"}", "{\"t\": \"v\", \"w\": 1}", "{\"t\": \"q\", \"n\": 1, \"z\": 1}",
       "{\"t\": \"q\", \"n\": 1, \"z\": \"s\"}", "{\"t\": \"q\"}", "{\"t\": 1, \"n\": 1}",
       "5", "\"s\"")},
    {"{\"type\": \"object\", \"required\": [\"kind\"], \"allOf\": [{\"if\": {\"properties\": "
     "{\"kind\": {\"const\": 1}}}, \"then\": {\"properties\": {\"v\": {\"type\": \"string\"}}}}, "
     "{\"if\": {\"properties\": {\"kind\": {\"const\": 2}}}, \"then\": {\"properties\": "
     "{\"v\": {\"type\": \"integer\"}}}}, {\"if\": {\"properties\": {\"kind\": {\"const\": 3}}}, "
     "\"then\": {\"required\": [\"v\"]}}]}",
     I("{\"kind\": 1, \"v\": \"a\"}", "{\"kind\": 1.0, \"v\": 2}", "{\"kind\": 2, \"v\": 2}",
       "{\"kind\": 2, \"v\": \"a\"}", "{\"kind\": 3}", "{\"kind\": 3, \"v\": null}",
       "{\"kind\": 4, \"v\": []}", "{\"v\": 1}")},
    /* two patterns: both, as a look-ahead */
    {"{\"allOf\": [{\"pattern\": \"^a\"}, {\"pattern\": \"b$\"}, {\"pattern\": "
     "\"[0-9]\"}], \"maxLength\": 4}",
     I("\"a1b\"", "\"ab\"", "\"a1\"", "\"1b\"", "\"a12b\"", "\"a123b\"", "7")},
    {"{\"allOf\": [{\"pattern\": \"^a\"}, {\"pattern\": \"b$\"}], \"enum\": [\"ab\", "
     "\"a\", \"b\", \"axb\", 1]}", I("\"ab\"", "\"a\"", "\"axb\"", "1", "\"b\"")},
    /* two propertyNames: every name both */
    {"{\"allOf\": [{\"propertyNames\": {\"maxLength\": 2}}, {\"propertyNames\": "
     "{\"pattern\": \"^a\"}}]}", I("{\"ab\": 1}", "{\"abc\": 1}", "{\"b\": 1}", "{}", "3")},
    /* anyOf beside oneOf: each anyOf branch with the oneOf */
    {"{\"type\": \"object\", \"anyOf\": [{\"required\": [\"a\"]}, {\"required\": [\"b\"]}], "
     "\"oneOf\": [{\"properties\": {\"k\": {\"const\": 1}}, \"required\": [\"k\"]}, "
     "{\"properties\": {\"k\": {\"const\": 2}}, \"required\": [\"k\"]}]}",
     I("{\"a\": 1, \"k\": 1}", "{\"a\": 1}", "{\"b\": 0, \"k\": 2}", "{\"k\": 1}",
       "{\"a\": 1, \"k\": 3}", "{\"a\": 1, \"b\": 2, \"k\": 2}")},
    /* two anyOf whose pairs are mostly contradictory: 81 pairs, 9 kept */
    {"{\"allOf\": [{\"anyOf\": [{\"const\": 1}, {\"const\": 2}, {\"const\": 3}, {\"const\": 4}, "
     "{\"const\": 5}, {\"const\": 6}, {\"const\": 7}, {\"const\": 8}, {\"const\": 9}]}, "
     "{\"anyOf\": [{\"enum\": [1, 10]}, {\"enum\": [2, 10]}, {\"enum\": [3, 10]}, "
     "{\"enum\": [4, 10]}, {\"enum\": [5]}, {\"enum\": [6]}, {\"enum\": [7]}, {\"enum\": [8]}, "
     "{\"enum\": [9]}]}]}", I("1", "9", "10", "0", "\"1\"")},
};

/* Runs python3-jsonschema over every (schema, instance): a line "V TEXT"
 * each, V the verdict and TEXT the instance as json.dumps writes it (with
 * ", " and ": " or compact). */
static char *jsonschema_verdicts(int compact)
{
    const char *in = "test_schema_cases.json", *out = "test_schema_verdicts.txt";
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    fputc('[', f);
    size_t n = 0;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (size_t i = 0; cases[c].instances[i]; i++)
            fprintf(f, "%s[%s, %s]", n++ ? ",\n" : "", cases[c].schema, cases[c].instances[i]);
    fputs("]\n", f);
    fclose(f);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c 'import json, sys, jsonschema\n"
             "for s, x in json.load(open(sys.argv[1])):\n"
             "    k = jsonschema.validators.validator_for(s)\n"
             "    v = k(s, format_checker=k.FORMAT_CHECKER).is_valid(x)\n"
             "    t = json.dumps(x, ensure_ascii=False%s)\n"
             "    print(int(v), t)\n' %s > %s",
             compact ? ", separators=(\",\", \":\")" : "", in, out);
    if (system(cmd) != 0)
        fail_msg("python3-jsonschema failed (run 'make setup': package python3-jsonschema)");
    f = fopen(out, "rb");
    assert_non_null(f);
    static char buf[1 << 16];
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    buf[got] = 0;
    fclose(f);
    remove(in);
    remove(out);
    return buf;
}

static void instances_agree_with_jsonschema(void **state)
{
    (void)state;
    for (int compact = 0; compact < 2; compact++) {
        char *v = jsonschema_verdicts(compact), *line = v;
        size_t valid = 0, invalid = 0;
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
            gr_gram_t *gram = parser(cases[c].schema, compact);
            gr_cfg_t *g = grammar(cases[c].schema, compact);
            for (size_t i = 0; cases[c].instances[i]; i++) {
                char *nl = strchr(line, '\n');
                assert_non_null(nl);
                *nl = 0;
                int want = line[0] == '1';
                const char *text = line + 2;
                if (earley_accepts(g, !compact, text, strlen(text)) != want)
                    fail_msg("%s on %s: jsonschema says %d (compact %d)", cases[c].schema,
                             text, want, compact);
                /* and the grammar's own parser (grammar/gram.h) */
                uint32_t st = gr_feed(gram, GR_START, (const uint8_t *)text, strlen(text), NULL);
                if ((st != GR_DEAD && gr_accepting(gram, st)) != want)
                    fail_msg("%s on %s: gr_gram disagrees with jsonschema's %d (compact %d)",
                             cases[c].schema, text, want, compact);
                *(want ? &valid : &invalid) += 1;
                /* JSON's whitespace where it allows it (not in compact). */
                if (!compact && want && strlen(text) < 200) {
                    char spaced[512];
                    snprintf(spaced, sizeof spaced, " \n%s\t ", text);
                    assert_true(earley_accepts(g, 1, spaced, strlen(spaced)));
                }
                line = nl + 1;
            }
            gr_cfg_free(g);
            gr_gram_free(gram);
        }
        print_message("%zu valid, %zu invalid instances agree (compact %d)\n", valid, invalid,
                      compact);
    }
}

/* ---- structure and errors ---------------------------------------------------- */

static char *dump(const char *schema, int compact)
{
    gr_cfg_t g;
    tb_err_t err;
    gr_schema_opts_t o = {.compact = compact};
    assert_int_equal(gr_cfg_init(&g, "<test>", &err), 0);
    if (gr_schema_compile(&g, schema, strlen(schema), &o, &err))
        fail_msg("%s", err.msg);
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    gr_cfg_print(&g, f);
    fclose(f);
    gr_cfg_free(&g);
    return text;
}

static int parses_opts(const char *schema, const gr_schema_opts_t *o, const char *text);

/* strict_oneof: disjoint branches kept, overlapping ones written exactly
 * where their complements are (refused where not). */
static void strict_oneof_refuses_overlaps(void **state)
{
    (void)state;
    gr_schema_opts_t o = {.strict_oneof = 1};
    static const char *const ok[] = {
        "{\"oneOf\": [{\"type\": \"string\"}, {\"type\": \"integer\"}]}",
        "{\"oneOf\": [{\"const\": 1}, {\"enum\": [2, 3]}]}",
        "{\"type\": \"object\", \"oneOf\": [{\"properties\": {\"k\": {\"const\": \"a\"}}, "
        "\"required\": [\"k\"]}, {\"properties\": {\"k\": {\"const\": \"b\"}}, \"required\": "
        "[\"k\"]}]}",
        "{\"type\": \"object\", \"oneOf\": [{\"required\": [\"a\"]}, {\"required\": [\"b\"]}]}",
        /* shown disjoint (propertyNames and uniqueItems have no complement
         * here): types under a oneOf, items both must have, required
         * versus not required */
        "{\"oneOf\": [{\"oneOf\": [{\"type\": \"string\"}, {\"type\": \"null\"}]}, "
        "{\"type\": \"object\", \"propertyNames\": {\"maxLength\": 2}}]}",
        "{\"oneOf\": [{\"type\": \"array\", \"maxItems\": 1, \"uniqueItems\": true, "
        "\"items\": {\"type\": \"string\"}}, {\"type\": \"array\", \"minItems\": 1, "
        "\"items\": {\"type\": \"integer\"}}]}",
        "{\"oneOf\": [{\"type\": \"object\", \"required\": [\"a\", \"b\"], \"propertyNames\": "
        "{\"maxLength\": 2}}, {\"not\": {\"required\": [\"a\"]}, \"propertyNames\": "
        "{\"maxLength\": 2}}]}",
    };
    /* overlapping, and no complement of an object constant here */
    static const char *const bad[] = {
        "{\"oneOf\": [{\"const\": {\"a\": 1, \"b\": 2}}, {\"enum\": [{\"b\": 2, \"a\": 1}]}]}",
        /* [] is in both */
        "{\"oneOf\": [{\"type\": \"array\", \"maxItems\": 1, \"uniqueItems\": true, "
        "\"items\": {\"type\": \"string\"}}, {\"type\": \"array\", \"items\": "
        "{\"type\": \"integer\"}}]}",
    };
    /* overlapping branches, written exactly: branch i and not the others */
    static const struct {
        const char *schema, *text;
        int ok;
    } exact[] = {
        {"{\"oneOf\": [{\"type\": \"number\"}, {\"type\": \"integer\"}]}", "1.5", 1},
        {"{\"oneOf\": [{\"type\": \"number\"}, {\"type\": \"integer\"}]}", "2", 0},
        {"{\"oneOf\": [{\"type\": \"number\"}, {\"type\": \"integer\"}]}", "2.0", 0},
        {"{\"oneOf\": [{\"minimum\": 1}, {\"maximum\": 5}]}", "0", 1},
        {"{\"oneOf\": [{\"minimum\": 1}, {\"maximum\": 5}]}", "3", 0},
        {"{\"oneOf\": [{\"minimum\": 1}, {\"maximum\": 5}]}", "6", 1},
        {"{\"oneOf\": [{\"minimum\": 1}, {\"maximum\": 5}]}", "\"x\"", 0},
        /* complements of additionalProperties, items, format */
        {"{\"oneOf\": [{\"properties\": {\"foo\": {}}, \"additionalProperties\": false}, {\"properties\": {\"bar\": {}}, \"additionalProperties\": false}]}", "{}", 0},
        {"{\"oneOf\": [{\"properties\": {\"foo\": {}}, \"additionalProperties\": false}, {\"properties\": {\"bar\": {}}, \"additionalProperties\": false}]}", "{\"foo\": 1}", 1},
        {"{\"oneOf\": [{\"properties\": {\"foo\": {}}, \"additionalProperties\": false}, {\"properties\": {\"bar\": {}}, \"additionalProperties\": false}]}", "{\"bar\": 1}", 1},
        {"{\"oneOf\": [{\"properties\": {\"foo\": {}}, \"additionalProperties\": false}, {\"properties\": {\"bar\": {}}, \"additionalProperties\": false}]}", "{\"foo\": 1, \"bar\": 1}", 0},
        /* a name the one branch forbids: the other's complement there left out */
        {"{\"oneOf\": [{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"string\"}}, \"required\": [\"a\"], \"additionalProperties\": false}, {\"type\": \"object\", \"properties\": {\"b\": {\"type\": \"integer\"}}}]}", "{\"a\": \"x\"}", 0},
        {"{\"oneOf\": [{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"string\"}}, \"required\": [\"a\"], \"additionalProperties\": false}, {\"type\": \"object\", \"properties\": {\"b\": {\"type\": \"integer\"}}}]}", "{\"a\": \"x\", \"b\": 1}", 1},
        {"{\"oneOf\": [{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"string\"}}, \"required\": [\"a\"], \"additionalProperties\": false}, {\"type\": \"object\", \"properties\": {\"b\": {\"type\": \"integer\"}}}]}", "{\"b\": \"s\"}", 0},
        {"{\"oneOf\": [{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"string\"}}, \"required\": [\"a\"], \"additionalProperties\": false}, {\"type\": \"object\", \"properties\": {\"b\": {\"type\": \"integer\"}}}]}", "{\"c\": 1}", 1},
        {"{\"oneOf\": [{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"string\"}}, \"required\": [\"a\"], \"additionalProperties\": false}, {\"type\": \"object\", \"properties\": {\"b\": {\"type\": \"integer\"}}}]}", "{}", 1},
        {"{\"oneOf\": [{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"string\"}}, \"required\": [\"a\"], \"additionalProperties\": false}, {\"type\": \"object\", \"properties\": {\"b\": {\"type\": \"integer\"}}}]}", "\"x\"", 0},
        /* the other branch's additionalProperties: an additional member */
        {"{\"oneOf\": [{\"properties\": {\"a\": {\"type\": \"string\"}}}, {\"properties\": {\"b\": {}}, \"additionalProperties\": false}]}", "{}", 0},
        {"{\"oneOf\": [{\"properties\": {\"a\": {\"type\": \"string\"}}}, {\"properties\": {\"b\": {}}, \"additionalProperties\": false}]}", "{\"b\": 1}", 0},
        {"{\"oneOf\": [{\"properties\": {\"a\": {\"type\": \"string\"}}}, {\"properties\": {\"b\": {}}, \"additionalProperties\": false}]}", "{\"a\": \"s\"}", 1},
        {"{\"oneOf\": [{\"properties\": {\"a\": {\"type\": \"string\"}}}, {\"properties\": {\"b\": {}}, \"additionalProperties\": false}]}", "{\"a\": 1}", 0},
        {"{\"oneOf\": [{\"properties\": {\"a\": {\"type\": \"string\"}}}, {\"properties\": {\"b\": {}}, \"additionalProperties\": false}]}", "{\"c\": 1}", 1},
        {"{\"oneOf\": [{\"properties\": {\"a\": {\"type\": \"string\"}}}, {\"properties\": {\"b\": {}}, \"additionalProperties\": false}]}", "{\"b\": 1, \"c\": 2}", 1},
        {"{\"oneOf\": [{\"properties\": {\"a\": {\"type\": \"string\"}}}, {\"properties\": {\"b\": {}}, \"additionalProperties\": false}]}", "{\"a\": 1, \"c\": 2}", 0},
        {"{\"oneOf\": [{\"type\": \"array\", \"items\": {\"type\": \"number\"}}, {\"type\": \"array\", \"items\": {\"type\": \"array\"}}]}", "[]", 0},
        {"{\"oneOf\": [{\"type\": \"array\", \"items\": {\"type\": \"number\"}}, {\"type\": \"array\", \"items\": {\"type\": \"array\"}}]}", "[1]", 1},
        {"{\"oneOf\": [{\"type\": \"array\", \"items\": {\"type\": \"number\"}}, {\"type\": \"array\", \"items\": {\"type\": \"array\"}}]}", "[[1]]", 1},
        {"{\"oneOf\": [{\"type\": \"array\", \"items\": {\"type\": \"number\"}}, {\"type\": \"array\", \"items\": {\"type\": \"array\"}}]}", "[1, [1]]", 0},
        {"{\"type\": \"string\", \"oneOf\": [{\"format\": \"ipv4\"}, {\"pattern\": \"^1\"}]}", "\"1.2.3.4\"", 0},
        {"{\"type\": \"string\", \"oneOf\": [{\"format\": \"ipv4\"}, {\"pattern\": \"^1\"}]}", "\"2.2.3.4\"", 1},
        {"{\"type\": \"string\", \"oneOf\": [{\"format\": \"ipv4\"}, {\"pattern\": \"^1\"}]}", "\"1x\"", 1},
        {"{\"type\": \"string\", \"oneOf\": [{\"format\": \"ipv4\"}, {\"pattern\": \"^1\"}]}", "\"x\"", 0},
        /* anyOf beside an overlapping oneOf: exclusivity is the oneOf's */
#define AO "{\"anyOf\": [{\"type\": \"integer\"}, {\"type\": \"string\"}], " \
           "\"oneOf\": [{\"minimum\": 1}, {\"maximum\": 5}]}"
        {AO, "3", 0}, {AO, "6", 1}, {AO, "0", 1}, {AO, "\"x\"", 0}, {AO, "1.5", 0},
        /* two overlapping oneOf in an allOf: exactly one of each */
#define OO "{\"allOf\": [{\"oneOf\": [{\"minimum\": 1}, {\"maximum\": 5}]}, " \
           "{\"oneOf\": [{\"type\": \"integer\"}, {\"minimum\": 3}]}]}"
        {OO, "0", 1}, {OO, "4", 0}, {OO, "6", 0}, {OO, "6.5", 1}, {OO, "0.5", 0},
        {OO, "\"x\"", 0},
        /* overlapping tagged branches: B's complement is implied by A's tag */
#define TG "{\"type\": \"object\", \"oneOf\": [{\"required\": [\"k\", \"a\"], " \
           "\"properties\": {\"k\": {\"enum\": [\"A\"]}}}, {\"required\": [\"k\", " \
           "\"b\"], \"properties\": {\"k\": {\"enum\": [\"B\"]}}}, {\"required\": " \
           "[\"c\"], \"properties\": {\"c\": {\"type\": \"string\"}}}]}"
        {TG, "{\"k\": \"A\", \"a\": 1}", 1}, {TG, "{\"k\": \"A\", \"a\": 1, \"c\": \"s\"}", 0},
        {TG, "{\"k\": \"A\", \"a\": 1, \"c\": 1}", 1}, {TG, "{\"c\": \"s\"}", 1},
        {TG, "{\"k\": \"B\", \"b\": 1, \"c\": \"s\"}", 0}, {TG, "{\"k\": \"B\", \"b\": 1}", 1},
        {TG, "{}", 0}, {TG, "{\"k\": \"A\", \"b\": 1}", 0},
#undef AO
#undef OO
#undef TG
    };
    for (size_t i = 0; i < sizeof exact / sizeof *exact; i++)
        if (parses_opts(exact[i].schema, &o, exact[i].text) != exact[i].ok)
            fail_msg("%s on %s: want %d", exact[i].schema, exact[i].text, exact[i].ok);
    /* equal as JSON values, whatever their text: nothing is in exactly one */
    gr_cfg_t e;
    tb_err_t eerr;
    const char *same = "{\"oneOf\": [{\"const\": 1}, {\"const\": 1.0}]}";
    assert_int_equal(gr_cfg_init(&e, "<test>", &eerr), 0);
    assert_int_equal(gr_schema_compile(&e, same, strlen(same), &o, &eerr), GR_SCHEMA_EMPTY);
    gr_cfg_free(&e);
    for (size_t i = 0; i < sizeof ok / sizeof *ok + sizeof bad / sizeof *bad; i++) {
        int good = i < sizeof ok / sizeof *ok;
        const char *sch = good ? ok[i] : bad[i - sizeof ok / sizeof *ok];
        gr_cfg_t g;
        tb_err_t err;
        assert_int_equal(gr_cfg_init(&g, "<test>", &err), 0);
        int r = gr_schema_compile(&g, sch, strlen(sch), &o, &err);
        if (good ? r != 0 : r == 0 || !strstr(err.msg, "may both match"))
            fail_msg("%s: %s", sch, r ? err.msg : "accepted");
        gr_cfg_free(&g);
    }
}

#define LLAMA3 "data/cache/llama3/tokenizer.json"

/* `tokbench accept SPEC --schema FILE -f INSTANCE`: token by token through
 * the matcher, with a mask before every token. */
static void accept_command(void **state)
{
    (void)state;
    test_need_file(LLAMA3);
    static const struct {
        const char *instance, *want;
        int rc;
    } cases[] = {
        {"{\"name\": \"Ann \\\"A\\\"\", \"tags\": [\"x\", \"y\"], \"age\": 42}",
         "the text is a sentence", 0},
        {"{\"name\": \"Ann\", \"age\": 200}", "refused    token", 3},
        {"{\"name\": \"\", \"age\": 1}", "refused    token", 3},
        {"{\"tags\": [], \"name\": \"Bo\"}", "the text is a sentence", 0},
        {"{\"name\": \"Bo\", \"name\": \"Al\"}", "refused    token", 3},
    };
    const char *schema = "test_schema_accept.json", *inst = "test_schema_instance.json";
    FILE *f = fopen(schema, "w");
    assert_non_null(f);
    fputs("{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\", "
          "\"minLength\": 1}, \"tags\": {\"type\": \"array\", \"items\": {\"type\": "
          "\"string\"}, \"maxItems\": 3}, \"age\": {\"type\": \"integer\", \"maximum\": 150}}, "
          "\"required\": [\"name\"], \"additionalProperties\": false}", f);
    fclose(f);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        f = fopen(inst, "w");
        assert_non_null(f);
        fputs(cases[i].instance, f);
        fclose(f);
        char args[256], out[4096];
        snprintf(args, sizeof args, "accept %s --schema %s -f %s --masks", LLAMA3, schema, inst);
        int rc = test_tokbench(args, out, sizeof out);
        if (rc != cases[i].rc || !strstr(out, cases[i].want))
            fail_msg("%s: exit %d, want %d and \"%s\" in:\n%s", cases[i].instance, rc,
                     cases[i].rc, cases[i].want, out);
    }
    remove(schema);
    remove(inst);
}

static int parses(const char *schema, const char *text);

static void put(tb_buf_t *b, const char *s) { assert_int_equal(tb_buf_put(b, s, strlen(s)), 0); }

/* Properties in any order (each at most once, the required ones in,
 * additional members anywhere), or in the order of `properties` with
 * definition_order; objects of many properties too, whose sets of
 * properties present (2^n) the parser makes only as a text reaches them. */
static void property_order(void **state)
{
    (void)state;
    const char *sch = "{\"type\": \"object\", \"properties\": {\"a\": {}, \"b\": {}}, "
                      "\"required\": [\"b\"]}";
    static const struct {
        int ordered;
        const char *text;
        int ok;
    } cases[] = {
        {0, "{\"b\": 1, \"a\": 2}", 1}, {0, "{\"a\": 1, \"b\": 2}", 1},
        {0, "{\"a\": 1}", 0},           {0, "{\"b\": 1, \"b\": 2}", 0},
        {0, "{\"c\": 0, \"b\": 1, \"x\": 3, \"a\": 2}", 1},
        {1, "{\"b\": 1, \"a\": 2}", 0}, {1, "{\"a\": 1, \"c\": 0, \"b\": 2}", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gr_schema_opts_t o = {.definition_order = cases[i].ordered};
        if (parses_opts(sch, &o, cases[i].text) != cases[i].ok)
            fail_msg("definition_order %d, %s: want %d", cases[i].ordered, cases[i].text,
                     cases[i].ok);
    }
    /* 40 properties, every other one required, written backwards: 2^40
     * states in all, 41 of them on this text's path. */
    tb_buf_t schema = {0}, text = {0}, missing = {0};
    put(&schema, "{\"properties\": {");
    for (int k = 0; k < 40; k++) {
        char p[64];
        snprintf(p, sizeof p, "%s\"p%d\": {\"type\": \"integer\"}", k ? ", " : "", k);
        put(&schema, p);
    }
    put(&schema, "}, \"additionalProperties\": false, \"required\": [");
    for (int k = 0; k < 40; k += 2) {
        char p[16];
        snprintf(p, sizeof p, "%s\"p%d\"", k ? ", " : "", k);
        put(&schema, p);
    }
    put(&schema, "]}");
    assert_int_equal(tb_buf_putc(&schema, 0), 0);
    for (int k = 39; k >= 0; k--) {
        char p[32];
        snprintf(p, sizeof p, "%s\"p%d\": %d", k < 39 ? ", " : "{", k, k);
        put(&text, p);
        if (k != 10)
            put(&missing, p);
    }
    put(&text, "}");
    assert_int_equal(tb_buf_putc(&text, 0), 0);
    put(&missing, "}");
    assert_int_equal(tb_buf_putc(&missing, 0), 0);
    assert_true(parses((const char *)schema.data, (const char *)text.data));
    /* p10 required and absent; p39 twice */
    assert_false(parses((const char *)schema.data, (const char *)missing.data));
    const char *twice = "{\"p39\": 1, \"p39\": 2}";
    assert_false(parses((const char *)schema.data, twice));
    free(schema.data);
    free(text.data);
    free(missing.data);
}

/* Whether the schema's grammar (its own parser) accepts text. */
static int parses(const char *schema, const char *text)
{
    return parses_opts(schema, NULL, text);
}

/* multipleOf 0.01 as exact decimals (MaskBench flags 10.99 valid, which
 * Python's float division does not, so no validator oracle here). */
static void multiple_of_decimals(void **state)
{
    (void)state;
    static const struct {
        const char *schema, *text;
        int ok;
    } cases[] = {
        {"{\"type\": \"number\", \"multipleOf\": 0.01}", "10.99", 1},
        {"{\"type\": \"number\", \"multipleOf\": 0.01}", "10.999", 0},
        {"{\"type\": \"number\", \"multipleOf\": 0.01}", "1.230", 1},
        {"{\"type\": \"number\", \"multipleOf\": 0.01}", "-0.05", 1},
        {"{\"type\": \"number\", \"multipleOf\": 0.01}", "7", 1},
        {"{\"type\": \"number\", \"multipleOf\": 0.1, \"minimum\": 0}", "0", 1},
        {"{\"type\": \"number\", \"multipleOf\": 0.1, \"minimum\": 0}", "-0.1", 0},
        {"{\"type\": \"number\", \"multipleOf\": 0.1, \"minimum\": 0}", "-0.0", 1},
        {"{\"type\": \"number\", \"multipleOf\": 0.01, \"exclusiveMinimum\": 0}", "0.00", 0},
        {"{\"type\": \"number\", \"multipleOf\": 0.01, \"exclusiveMinimum\": 0}", "0.01", 1},
        {"{\"type\": \"number\", \"multipleOf\": 0.01, \"exclusiveMinimum\": 0}", "0.001", 0},
        {"{\"type\": \"number\", \"multipleOf\": 0.01, \"exclusiveMinimum\": 0}", "0.0100", 1},
        {"{\"type\": \"number\", \"multipleOf\": 0.01, \"maximum\": 0}", "-3.5", 1},
        {"{\"type\": \"number\", \"multipleOf\": 0.01, \"maximum\": 0}", "3.5", 0},
        {"{\"type\": \"integer\", \"multipleOf\": 0.01}", "3", 1},
        /* any decimal: remainder automata as look-aheads (grammar/schema/mult.c) */
        {"{\"type\": \"number\", \"multipleOf\": 0.01, \"minimum\": 1}", "1.01", 1},
        {"{\"type\": \"number\", \"multipleOf\": 0.01, \"minimum\": 1}", "0.99", 0},
        {"{\"type\": \"number\", \"multipleOf\": 0.01, \"minimum\": 1}", "1.015", 0},
        {"{\"multipleOf\": 2}", "4", 1},
        {"{\"multipleOf\": 2}", "3", 0},
        {"{\"multipleOf\": 2}", "-6.0", 1},
        {"{\"multipleOf\": 2}", "0", 1},
        {"{\"multipleOf\": 2}", "2.5", 0},
        {"{\"multipleOf\": 2}", "\"x\"", 1},
        {"{\"type\": \"number\", \"multipleOf\": 1.5}", "4.5", 1},
        {"{\"type\": \"number\", \"multipleOf\": 1.5}", "35", 0},
        {"{\"type\": \"number\", \"multipleOf\": 1.5}", "-1.50", 1},
        {"{\"type\": \"number\", \"multipleOf\": 1.5}", "0.75", 0},
        {"{\"type\": \"number\", \"multipleOf\": 3}", "12.0", 1},
        {"{\"type\": \"number\", \"multipleOf\": 3}", "10", 0},
        {"{\"type\": \"number\", \"multipleOf\": 3}", "0.3", 0},
        {"{\"type\": \"integer\", \"multipleOf\": 7}", "700000007", 1},
        {"{\"type\": \"integer\", \"multipleOf\": 7}", "700000008", 0},
        {"{\"type\": \"number\", \"multipleOf\": 0.3}", "3.3", 1},
        {"{\"type\": \"number\", \"multipleOf\": 0.3}", "1", 0},
        {"{\"type\": \"number\", \"multipleOf\": 0.3}", "0.60", 1},
        {"{\"type\": \"number\", \"multipleOf\": 2.5, \"minimum\": 5}", "7.5", 1},
        {"{\"type\": \"number\", \"multipleOf\": 2.5, \"minimum\": 5}", "2.5", 0},
        {"{\"type\": \"number\", \"multipleOf\": 2.5, \"minimum\": 5}", "6", 0},
        {"{\"allOf\": [{\"multipleOf\": 2}, {\"multipleOf\": 3}]}", "12", 1},
        {"{\"allOf\": [{\"multipleOf\": 2}, {\"multipleOf\": 3}]}", "4", 0},
        {"{\"allOf\": [{\"multipleOf\": 0.4}, {\"multipleOf\": 0.6}]}", "2.4", 1},
        {"{\"allOf\": [{\"multipleOf\": 0.4}, {\"multipleOf\": 0.6}]}", "1.8", 0},
        {"{\"type\": \"integer\", \"multipleOf\": 0.5}", "3", 1},
        /* then and else without if say nothing, also merged beside an if */
        {"{\"allOf\": [{\"if\": {\"exclusiveMaximum\": 0}}, {\"then\": {\"minimum\": -10}}]}",
         "-100", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        if (parses(cases[i].schema, cases[i].text) != cases[i].ok)
            fail_msg("%s on %s: want %d", cases[i].schema, cases[i].text, cases[i].ok);
}

/* Nested $id bases (python3-jsonschema 4.10's RefResolver cannot resolve
 * this one; 4.26's referencing agrees with these verdicts).  Remote
 * documents: http://localhost:1234/PATH read from opts.remote_dir, their
 * own $refs resolved against their URI; never the network. */
static void refs_by_uri(void **state)
{
    (void)state;
    const char *nested = "{\"$id\": \"http://example.com/a/b.json\", \"$defs\": {\"c\": "
                         "{\"$id\": \"c/\", \"$defs\": {\"d\": {\"$id\": \"d.json\", "
                         "\"type\": \"string\"}}}}, \"$ref\": \"http://example.com/a/c/d.json\"}";
    assert_true(parses(nested, "\"x\""));
    assert_false(parses(nested, "1"));
    /* $dynamicRef: a $ref where no other $dynamicAnchor of its name exists */
    const char *dyn = "{\"$defs\": {\"n\": {\"$dynamicAnchor\": \"x\", \"type\": "
                      "\"integer\"}}, \"items\": {\"$dynamicRef\": \"#x\"}}";
    assert_true(parses(dyn, "[1, 2]"));
    assert_false(parses(dyn, "[\"a\"]"));
    const char *dyn2 = "{\"$defs\": {\"n\": {\"$dynamicAnchor\": \"x\", \"type\": "
                       "\"integer\"}, \"m\": {\"$id\": \"other\", \"$dynamicAnchor\": "
                       "\"x\"}}, \"items\": {\"$dynamicRef\": \"#x\"}}";
    gr_cfg_t g0;
    tb_err_t err0;
    assert_int_equal(gr_cfg_init(&g0, "<test>", &err0), 0);
    assert_int_not_equal(gr_schema_compile(&g0, dyn2, strlen(dyn2), NULL, &err0), 0);
    assert_non_null(strstr(err0.msg, "'$dynamicRef' is not supported"));
    gr_cfg_free(&g0);
    char dir[] = "/tmp/tb-remotes-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/sub", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/sub/int.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"$defs\": {\"i\": {\"type\": \"integer\"}, \"s\": {\"$ref\": \"str.json\"}}, "
          "\"$ref\": \"#/$defs/i\"}", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/sub/str.json", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"type\": \"string\", \"maxLength\": 2}", f);
    fclose(f);
    gr_schema_opts_t o = {.remote_dir = dir};
    const char *s1 = "{\"items\": {\"$ref\": \"http://localhost:1234/sub/int.json\"}}";
    const char *s2 = "{\"$id\": \"http://localhost:1234/x/y.json\", \"properties\": {\"a\": "
                     "{\"$ref\": \"../sub/int.json#/$defs/s\"}}}";
    assert_true(parses_opts(s1, &o, "[1, 2]"));
    assert_false(parses_opts(s1, &o, "[1.5]"));
    assert_true(parses_opts(s2, &o, "{\"a\": \"ab\"}"));
    assert_false(parses_opts(s2, &o, "{\"a\": \"abc\"}"));
    assert_false(parses_opts(s2, &o, "{\"a\": 1}"));
    /* without the folder, or outside it: a compile error naming the $ref */
    gr_cfg_t g;
    tb_err_t err;
    const char *s3 = "{\"$ref\": \"http://localhost:1234/sub/nope.json\"}";
    assert_int_equal(gr_cfg_init(&g, "<test>", &err), 0);
    assert_int_not_equal(gr_schema_compile(&g, s3, strlen(s3), &o, &err), 0);
    assert_non_null(strstr(err.msg, "$ref 'http://localhost:1234/sub/nope.json' cannot be "
                                    "resolved"));
    gr_cfg_free(&g);
    assert_int_equal(gr_cfg_init(&g, "<test>", &err), 0);
    assert_int_not_equal(gr_schema_compile(&g, s1, strlen(s1), NULL, &err), 0);
    assert_non_null(strstr(err.msg, "no remote folder given"));
    gr_cfg_free(&g);
    snprintf(path, sizeof path, "%s/sub/int.json", dir);
    remove(path);
    snprintf(path, sizeof path, "%s/sub/str.json", dir);
    remove(path);
    snprintf(path, sizeof path, "%s/sub", dir);
    rmdir(path);
    rmdir(dir);
}

/* format as an annotation (gr_schema_opts_t.format_annotation; `tokbench
 * accept/mask --format-annotation`): JSON-Schema-Test-Suite draft2020-12
 * format.json, whose instances that no format holds are valid. */
static void format_annotation_option(void **state)
{
    (void)state;
    static const char *const schemas[] = {
        "{\"format\": \"email\"}", "{\"type\": \"string\", \"format\": \"regex\"}",
        "{\"allOf\": [{\"format\": \"date\"}, {\"format\": \"email\"}]}",
    };
    gr_schema_opts_t o = {.format_annotation = 1};
    for (size_t i = 0; i < sizeof schemas / sizeof *schemas; i++) {
        gr_cfg_t g;
        tb_err_t err;
        assert_int_equal(gr_cfg_init(&g, "<test>", &err), 0);
        if (gr_schema_compile(&g, schemas[i], strlen(schemas[i]), &o, &err))
            fail_msg("%s: %s", schemas[i], err.msg);
        gr_gram_t *gram = gr_gram_new(&g, NULL, &err);
        assert_non_null(gram);
        uint32_t st = gr_feed(gram, GR_START, (const uint8_t *)"\"2 x\"", 5, NULL);
        if (st == GR_DEAD || !gr_accepting(gram, st))
            fail_msg("%s refuses \"2 x\" with format_annotation", schemas[i]);
        gr_gram_free(gram);
        gr_cfg_free(&g);
    }
    /* the default asserts it */
    assert_false(parses("{\"format\": \"email\"}", "\"2 x\""));
    test_need_file(LLAMA3);
    const char *schema = "test_schema_format.json", *inst = "test_schema_format_i.json";
    FILE *f = fopen(schema, "w");
    assert_non_null(f);
    fputs("{\"type\": \"string\", \"format\": \"ipv4\"}", f);
    fclose(f);
    f = fopen(inst, "w");
    assert_non_null(f);
    fputs("\"not an address\"", f);
    fclose(f);
    char args[256], out[4096];
    for (int ann = 0; ann < 2; ann++) {
        snprintf(args, sizeof args, "accept %s --schema %s -f %s --masks%s", LLAMA3, schema,
                 inst, ann ? " --format-annotation" : "");
        int rc = test_tokbench(args, out, sizeof out);
        if (rc != (ann ? 0 : 3))
            fail_msg("%s: exit %d:\n%s", args, rc, out);
    }
    snprintf(args, sizeof args, "accept %s --grammar x.lark --format-annotation -f %s", LLAMA3,
             inst);
    assert_int_equal(test_tokbench(args, out, sizeof out), 2);
    remove(schema);
    remove(inst);
}

/* Every spelling JSON has for a string (escapes, \u of either case,
 * surrogate pairs) in keys and values under any schema, lengths counted
 * in characters after unescaping: each text's verdict against
 * python3-jsonschema's on the value json.loads reads from it. */
static void escapes_spell_the_same_strings(void **state)
{
    (void)state;
    const schema_case_t esc[] = {
        {"{}", I("{\"\\u0041\": 1}", "{\"\\u0041\\u0062\": [\"\\/\\ud83d\\ude00\"]}")},
        {"{\"type\": \"string\", \"maxLength\": 2}",
         I("\"\\u0041\"", "\"\\u0041bc\"", "\"\\ud83d\\ude00x\"", "\"\\ud83d\\ude00xy\"",
           "\"\\/\\/\"", "\"\\n\\u000A\"", "\"\\u00e9\\u00E9\"")},
        {"{\"type\": \"string\", \"minLength\": 2}", I("\"\\ud83d\\ude00\"", "\"\\t\\u0009\"")},
        {"{\"properties\": {\"foo\": {\"type\": \"integer\"}}, \"additionalProperties\": false}",
         I("{\"\\u0066oo\": 1}", "{\"\\u0066oo\": \"x\"}", "{\"\\u0066OO\": 1}",
           "{\"fo\\u006F\": 2}", "{\"foo\": 1, \"b\\u0061r\": 2}")},
        {"{\"properties\": {\"\\u00e9\": {\"type\": \"integer\"}}, \"required\": [\"\\u00e9\"]}",
         I("{\"\\u00e9\": 1}", "{\"\\u00E9\": 1}", "{\"\\u00e9\": \"x\"}", "{\"\\u00c9\": 1}")},
        {"{\"patternProperties\": {\"^a\": {\"type\": \"integer\"}}, \"additionalProperties\": "
         "false}",
         I("{\"\\u0061b\": 1}", "{\"\\u0062\": 1}", "{\"\\u0061\": \"x\"}")},
        {"{\"enum\": [\"A/b\", \"\\u00e9\"]}", I("\"\\u0041\\/b\"", "\"\\u00c9\"", "\"\\u00E9\"")},
        {"{\"const\": \"\\ud83d\\ude00\"}", I("\"\\ud83d\\ude00\"", "\"\\uD83D\\uDE00\"", "\"\\ud83d\"")},
        {"{\"type\": \"string\", \"pattern\": \"^[a-c]+$\"}", I("\"\\u0061\\u0062\"", "\"\\u0064\"")},
        {"{\"type\": \"string\", \"format\": \"date\"}", I("\"2024\\u002d01-31\"")},
        {"{\"required\": [\"a\\\"b\"]}", I("{\"a\\u0022b\": 1}", "{\"a\\\"b\": 1}", "{\"ab\": 1}")},
    };
    const char *in = "test_schema_esc.json", *out = "test_schema_esc.txt";
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    fputc('[', f);
    size_t n = 0;
    for (size_t c = 0; c < sizeof esc / sizeof *esc; c++)
        for (size_t i = 0; esc[c].instances[i]; i++) {
            tb_buf_t q = {0};
            assert_int_equal(gr_json_quote(&q, (const uint8_t *)esc[c].instances[i],
                                           strlen(esc[c].instances[i])), 0);
            fprintf(f, "%s[%s, %.*s]", n++ ? ",\n" : "", esc[c].schema, (int)q.len,
                    (char *)q.data);
            tb_buf_free(&q);
        }
    fputs("]\n", f);
    fclose(f);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c 'import json, sys, jsonschema\n"
             "for s, t in json.load(open(sys.argv[1])):\n"
             "    k = jsonschema.validators.validator_for(s)\n"
             "    print(int(k(s, format_checker=k.FORMAT_CHECKER).is_valid(json.loads(t))))\n'"
             " %s > %s", in, out);
    if (system(cmd) != 0)
        fail_msg("python3-jsonschema failed");
    f = fopen(out, "r");
    assert_non_null(f);
    for (size_t c = 0; c < sizeof esc / sizeof *esc; c++)
        for (size_t i = 0; esc[c].instances[i]; i++) {
            int want = fgetc(f) == '1';
            fgetc(f);
            if (parses(esc[c].schema, esc[c].instances[i]) != want)
                fail_msg("%s on %s: jsonschema says %d", esc[c].schema, esc[c].instances[i],
                         want);
        }
    fclose(f);
    remove(in);
    remove(out);
}

/* Appends the JSON string of s[0..n) (UTF-8) with every character as a
 * \uXXXX escape (a surrogate pair above U+FFFF), hex digits upper case
 * when `upper`. */
static void quote_all_escaped(tb_buf_t *b, const char *s, size_t n, int upper)
{
    put(b, "\"");
    for (size_t at = 0; at < n;) {
        uint32_t cp, u[2];
        size_t k = tb_utf8_decode((const uint8_t *)s + at, n - at, &cp), nu = 1;
        assert_true(k > 0);
        u[0] = cp;
        if (cp > 0xFFFF) {
            u[0] = 0xD800 + ((cp - 0x10000) >> 10);
            u[1] = 0xDC00 + ((cp - 0x10000) & 0x3FF);
            nu = 2;
        }
        for (size_t i = 0; i < nu; i++) {
            char e[8];
            snprintf(e, sizeof e, upper ? "\\u%04X" : "\\u%04x", u[i]);
            put(b, e);
        }
        at += k;
    }
    put(b, "\"");
}

/* The lexeme of the strings other than some names (the names of an object
 * with additional properties) takes a string iff it is none of them, in
 * every JSON spelling: names that are prefixes of others, share prefixes,
 * are empty, escaped or beyond ASCII, against candidates made from the
 * names (each name, its prefixes, one more or one other character). */
static void other_names_are_exact(void **state)
{
    (void)state;
    static const char *const sets[][8] = {
        {NULL},
        {"", NULL},
        {"a", NULL},
        {"a", "ab", "abc", NULL},
        {"count", "created_at", "user_count", "user", NULL},
        {"x\"y", "x\\", "\n", "/", NULL},
        {"\u00e9t\u00e9", "\u00e9", "\U0001F600x", "z", NULL},
        {"\x7f", "\x01", "~", NULL},
    };
    static const char *const extra[] = {"", "a", "b", "~", "\u00e9", "\U0001F600", "\"", "0"};
    for (size_t c = 0; c < sizeof sets / sizeof *sets; c++) {
        size_t n = 0;
        while (sets[c][n])
            n++;
        tb_buf_t re = {0};
        tb_err_t err;
        assert_int_equal(gr_ecma_string_except(&re, sets[c], n, NULL, &err), 0);
        assert_int_equal(tb_buf_putc(&re, 0), 0);
        lex_dfa_t *d = dfa_or_fail((const char *)re.data);
        /* candidates: each name's prefixes, each with one more character */
        for (size_t i = 0; i <= n; i++) {
            const char *name = i < n ? sets[c][i] : "";
            size_t len = strlen(name);
            for (size_t cut = 0; cut <= len; cut++) {
                if (cut < len && ((uint8_t)name[cut] & 0xC0) == 0x80)
                    continue; /* inside a character */
                for (size_t x = 0; x < sizeof extra / sizeof *extra; x++) {
                    char cand[64];
                    snprintf(cand, sizeof cand, "%.*s%s", (int)cut, name, extra[x]);
                    int want = 1;
                    for (size_t j = 0; j < n; j++)
                        want &= strcmp(cand, sets[c][j]) != 0;
                    tb_buf_t q[3] = {{0}, {0}, {0}};
                    assert_int_equal(gr_json_quote(&q[0], (const uint8_t *)cand, strlen(cand)), 0);
                    quote_all_escaped(&q[1], cand, strlen(cand), 0);
                    quote_all_escaped(&q[2], cand, strlen(cand), 1);
                    for (int k = 0; k < 3; k++) {
                        if (dfa_accepts(d, (const char *)q[k].data, q[k].len) != want)
                            fail_msg("names set %zu, %.*s: want %d", c, (int)q[k].len,
                                     (char *)q[k].data, want);
                        tb_buf_free(&q[k]);
                    }
                }
            }
        }
        lex_dfa_free(d);
        tb_buf_free(&re);
    }
}

/* A look-ahead takes a pattern's lexeme up to its match (ecma.h,
 * gr_ecma_lookahead_len): the same strings and the same live prefixes as
 * the whole lexeme, over bases this file's writers make, and the strings
 * PCRE2's searches say (those without escapes); and a string
 * that has read a word a (?!..) forbids is dead with a few terms, where
 * the whole lexeme left a search of every state the rest could reach. */
static void lookaheads_read_to_the_match(void **state)
{
    (void)state;
    static const char *const pats[] = {"SIGNER", "^ab", "a|b", "x$", "[^a]", "", "\\d+"};
    static const char *const bodies[] = {
        "", "SIGNER", "xSIGNERy", "SIGNE", "APPROVER", "APPROVERSIGNER", "\\u0053IGNER",
        "SIG\\u004eER", "ab", "ba", "a", "b", "xa", "x", "7", "12", "\xc3\xa9",
        "\\ud83d\\ude00", "\\ud800", "APPROVER\\\"", "k"};
    gr_ecma_sets_t *sets = gr_ecma_sets_new();
    assert_non_null(sets);
    tb_buf_t base[3] = {{0}, {0}, {0}};
    tb_err_t err;
    const char *const k[] = {"k"};
    assert_int_equal(gr_ecma_string(&base[0], "APPROVER", NULL, 0, GR_NO_MAX, sets, &err), 0);
    assert_int_equal(gr_ecma_string_except(&base[1], k, 1, sets, &err), 0);
    assert_int_equal(gr_ecma_string(&base[2], NULL, NULL, 0, 5, sets, &err), 0);
    for (size_t p = 0; p < sizeof pats / sizeof *pats; p++) {
        tb_buf_t lex = {0};
        assert_int_equal(gr_ecma_string(&lex, pats[p], NULL, 0, GR_NO_MAX, sets, &err), 0);
        size_t need = gr_ecma_lookahead_len((const char *)lex.data, lex.len, sets);
        /* only a pattern anchored at its end keeps its closing part */
        assert_true(strchr(pats[p], '$') ? need == lex.len : need < lex.len);
        for (size_t b = 0; b < 3; b++)
            for (int neg = 0; neg < 2; neg++) {
                char re[2][8192];
                for (int cut = 0; cut < 2; cut++)
                    snprintf(re[cut], sizeof re[cut], "%s%.*s)%.*s", neg ? "(?!" : "(?=",
                             (int)(cut ? need : lex.len), (char *)lex.data, (int)base[b].len,
                             (char *)base[b].data);
                lex_dfa_t *whole = dfa_or_fail(re[0]), *part = dfa_or_fail(re[1]);
                for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) {
                    char q[64];
                    int n = snprintf(q, sizeof q, "\"%s\"", bodies[i]);
                    /* and PCRE2's searches on the string, where it has no escape: the
                     * base's pattern (or name) and the look-ahead's */
                    if (b < 2 && !strchr(bodies[i], '\\')) {
                        const char *x = bodies[i];
                        int in_base = b ? strcmp(x, "k") != 0 : pcre_search("APPROVER", x, strlen(x));
                        int in_la = pcre_search(pats[p], x, strlen(x));
                        if (dfa_accepts(part, q, (size_t)n) != (in_base && in_la != neg))
                            fail_msg("%s of /%s/ on base %zu, %s: PCRE2 says %d", neg ? "(?!)" : "(?=)",
                                     pats[p], b, q, in_base && in_la != neg);
                    }
                    for (int m = 1; m <= n; m++) {
                        uint32_t a = lex_dfa_feed(whole, LEX_START, (const uint8_t *)q, (size_t)m);
                        uint32_t c = lex_dfa_feed(part, LEX_START, (const uint8_t *)q, (size_t)m);
                        if ((a == LEX_DEAD) != (c == LEX_DEAD) ||
                            (a != LEX_DEAD && lex_dfa_accepting(whole, a) != lex_dfa_accepting(part, c)))
                            fail_msg("%s of /%s/ on base %zu, %.*s: whole %s, cut %s",
                                     neg ? "(?!)" : "(?=)", pats[p], b, m, q,
                                     a == LEX_DEAD ? "dead" : "live", c == LEX_DEAD ? "dead" : "live");
                    }
                }
                lex_dfa_free(whole);
                lex_dfa_free(part);
            }
        tb_buf_free(&lex);
    }
    /* "SIGNER" forbidden, "APPROVER" asked: dead after the one */
    size_t made[2];
    for (int cut = 0; cut < 2; cut++) {
        tb_buf_t lex = {0};
        assert_int_equal(gr_ecma_string(&lex, "SIGNER", NULL, 0, GR_NO_MAX, sets, &err), 0);
        size_t need = cut ? gr_ecma_lookahead_len((const char *)lex.data, lex.len, sets) : lex.len;
        char re[8192];
        snprintf(re, sizeof re, "(?!%.*s)%.*s", (int)need, (char *)lex.data, (int)base[0].len,
                 (char *)base[0].data);
        lex_dfa_t *d = dfa_or_fail(re);
        size_t before = d->terms.n;
        assert_int_equal(lex_dfa_feed(d, LEX_START, (const uint8_t *)"\"xSIGNER", 8), LEX_DEAD);
        made[cut] = d->terms.n - before;
        lex_dfa_free(d);
        tb_buf_free(&lex);
    }
    assert_true(made[1] * 4 < made[0]);
    for (size_t b = 0; b < 3; b++)
        tb_buf_free(&base[b]);
    gr_ecma_sets_free(sets);
}

/* [false] is not [0]: JSON-Schema-Test-Suite draft2020-12 enum.json groups
 * 10 and 12, where python3-jsonschema 4.26 says otherwise (it compares
 * booleans and numbers apart at the top level only). */
static void enum_booleans_are_not_numbers(void **state)
{
    (void)state;
    assert_false(parses("{\"enum\": [[0]]}", "[false]"));
    assert_true(parses("{\"enum\": [[0]]}", "[0.0]"));
    assert_false(parses("{\"enum\": [[1]]}", "[true]"));
    assert_true(parses("{\"enum\": [[1]]}", "[1.0]"));
}

/* OpenAPI's nullable, which JSON Schema validators do not know. */
static void nullable_adds_null(void **state)
{
    (void)state;
    gr_cfg_t *g = grammar("{\"type\": \"string\", \"nullable\": true, \"maxLength\": 1}", 0);
    assert_true(earley_accepts(g, 1, "null", 4));
    assert_true(earley_accepts(g, 1, "\"a\"", 3));
    assert_false(earley_accepts(g, 1, "\"ab\"", 4));
    assert_false(earley_accepts(g, 1, "0", 1));
    gr_cfg_free(g);
}

/* Whether the grammar of schema, compiled with semantics sem (gr_semantics_t),
 * accepts the whole of text. */
static int accepts_as(const char *schema, gr_semantics_t sem, const char *text)
{
    gr_cfg_t g;
    tb_err_t err;
    assert_int_equal(gr_cfg_init(&g, "<test>", &err), 0);
    g.semantics = sem;
    if (gr_schema_compile(&g, schema, strlen(schema), NULL, &err))
        fail_msg("%s: %s", schema, err.msg);
    gr_gram_t *gram = gr_gram_new(&g, NULL, &err);
    if (!gram)
        fail_msg("%s: %s", schema, err.msg);
    size_t at = 0;
    uint32_t st = gr_feed(gram, GR_START, (const uint8_t *)text, strlen(text), &at);
    int ok = st != GR_DEAD && gr_accepting(gram, st);
    gr_gram_free(gram);
    return ok;
}

/* llguidance's x-guidance options at the root (its docs/json_schema.md),
 * under either reading, and what its reading changes besides. */
static void x_guidance_options(void **state)
{
    (void)state;
    static const struct {
        const char *schema, *text;
        int want;
    } cases[] = {
        /* fixed separators, no other whitespace: json.dumps's default */
        {"{\"x-guidance\": {\"item_separator\": \", \", \"key_separator\": \": \", "
         "\"whitespace_flexible\": false}}", "{\"a\": 1, \"b\": [1, 2]}", 1},
        {"{\"x-guidance\": {\"item_separator\": \", \", \"key_separator\": \": \", "
         "\"whitespace_flexible\": false}}", "{\"a\":1}", 0},
        {"{\"x-guidance\": {\"item_separator\": \", \", \"key_separator\": \": \", "
         "\"whitespace_flexible\": false}}", "{\"a\": 1 , \"b\": 2}", 0},
        /* separators are regexes; whitespace stays flexible around them */
        {"{\"type\": \"array\", \"x-guidance\": {\"item_separator\": \"\\\\s?;\"}}",
         "[1 ; 2;3]", 1},
        {"{\"type\": \"array\", \"x-guidance\": {\"item_separator\": \"\\\\s?;\"}}",
         "[1, 2]", 0},
        {"{\"x-guidance\": {\"key_separator\": \"=\"}}", "{\"a\" = {\"b\"=[]}}", 1},
        {"{\"x-guidance\": {\"whitespace_flexible\": false}}", "[1,{\"a\":2}]", 1},
        {"{\"x-guidance\": {\"whitespace_flexible\": false}}", "[1, 2]", 0},
        /* whitespace_pattern: the whitespace there is, whatever flexible says */
        {"{\"x-guidance\": {\"whitespace_pattern\": \"\\t\", \"whitespace_flexible\": false}}",
         "[1,\t2]", 1},
        {"{\"x-guidance\": {\"whitespace_pattern\": \"\\t\"}}", "[1, 2]", 0},
        /* lenient: a format this compiler has no regex for is an annotation */
        {"{\"type\": \"string\", \"format\": \"regex\", \"x-guidance\": {\"lenient\": true}}",
         "\"(\"", 1},
        /* not at the root: an unknown keyword, ignored */
        {"{\"items\": {\"x-guidance\": {\"whitespace_flexible\": false}}}", "[ 1 ]", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (int sem = GR_SEM_DEFAULT; sem <= GR_SEM_LLGUIDANCE; sem++)
            if (accepts_as(cases[i].schema, (gr_semantics_t)sem, cases[i].text) != cases[i].want)
                fail_msg("%s on %s (semantics %d): want %d", cases[i].schema, cases[i].text,
                         sem, cases[i].want);
    /* llguidance's reading: properties in the schema's order, and an
     * integer has no fraction (its tests refuse 1.0); JSON Schema's allows
     * both */
    const char *obj = "{\"properties\": {\"a\": {}, \"b\": {}}}";
    assert_true(accepts_as(obj, GR_SEM_DEFAULT, "{\"b\": 1, \"a\": 2}"));
    assert_false(accepts_as(obj, GR_SEM_LLGUIDANCE, "{\"b\": 1, \"a\": 2}"));
    assert_true(accepts_as(obj, GR_SEM_LLGUIDANCE, "{\"a\": 1, \"b\": 2}"));
    assert_true(accepts_as("{\"type\": \"integer\"}", GR_SEM_DEFAULT, "1.0"));
    assert_false(accepts_as("{\"type\": \"integer\"}", GR_SEM_LLGUIDANCE, "1.0"));
    assert_true(accepts_as("{\"type\": \"integer\"}", GR_SEM_LLGUIDANCE, "-10"));
    /* minProperties beyond what the order's grammar writes: any order */
    const char *minp = "{\"properties\": {\"a\": {}, \"b\": {}, \"c\": {}}, "
                       "\"minProperties\": 2}";
    assert_true(accepts_as(minp, GR_SEM_LLGUIDANCE, "{\"c\": 1, \"a\": 2}"));
    assert_false(accepts_as(minp, GR_SEM_LLGUIDANCE, "{\"c\": 1}"));
}

/* How strings are spelled: every spelling JSON allows by default; as
 * llguidance's compiler spells them under its reading (ecma.h's
 * GR_SPELL_LLG*), its x-guidance escape options applied. */
static void llguidance_spellings(void **state)
{
    (void)state;
    static const char *const str = "{\"type\": \"string\"}",
        *general = "{\"type\": \"string\", \"x-guidance\": "
                   "{\"json_allow_general_unicode_escapes\": true}}",
        *only_n = "{\"const\": \"a\\n\\u000bb\", \"x-guidance\": "
                  "{\"json_allowed_escapes\": \"n\"}}",
        *nl = "{\"const\": \"a\\nb\", \"x-guidance\": {\"json_allowed_escapes\": \"n\"}}",
        *extra = "{\"properties\": {\"a\": {}}, \"additionalProperties\": {}}";
    const struct {
        const char *schema, *text;
        int json, llg;
    } cases[] = {
        {str, "\"\u00e9\"", 1, 1},
        {str, "\"\\u00e9\"", 1, 0}, /* \u of controls and DEL only */
        {str, "\"\\u001e\\u001E\\u007f\"", 1, 1},
        {str, "\"\\/\"", 1, 0},
        {str, "\"\x7f\"", 1, 0}, /* DEL escaped, never raw */
        {str, "\"\\uD800\"", 1, 0},
        {"{\"type\": \"string\", \"pattern\": \"^.$\"}", "\"\\u00e9\"", 1, 0},
        {general, "\"\\u00e9\\uD83D\\uDE00\\u0041\"", 1, 1},
        {general, "\"\\uD800\"", 1, 0}, /* a lone surrogate */
        {general, "\"\\/\"", 1, 0},
        /* a control with no allowed spelling: nothing spells the const */
        {only_n, "\"a\\n\\u000bb\"", 1, 0},
        {only_n, "\"a\\u000a\\u000bb\"", 1, 0},
        {nl, "\"a\\nb\"", 1, 1},
        {nl, "\"a\\u000ab\"", 1, 0},
        /* the names of additionalProperties beside named ones: any \u */
        {extra, "{\"\\u00e9\": 1}", 1, 1},
        {extra, "{\"\\uD83D\": 1}", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (int sem = GR_SEM_DEFAULT; sem <= GR_SEM_LLGUIDANCE; sem++)
            if (accepts_as(cases[i].schema, (gr_semantics_t)sem, cases[i].text) !=
                (sem == GR_SEM_DEFAULT ? cases[i].json : cases[i].llg))
                fail_msg("%s on %s (semantics %d): want %d", cases[i].schema, cases[i].text,
                         sem, sem == GR_SEM_DEFAULT ? cases[i].json : cases[i].llg);
}

static void dump_shows_the_translation(void **state)
{
    (void)state;
    char *t = dump("{\"type\": \"object\", \"properties\": {\"zeta\": {\"type\": \"integer\"}, "
                   "\"alpha\": {\"type\": \"boolean\"}}, \"required\": [\"zeta\", \"alpha\"], "
                   "\"additionalProperties\": false}", 0);
    /* properties in definition order, names as literal lexemes, numbers as
     * one lexeme, whitespace ignored */
    char *z = strstr(t, "member#"), *zk = strstr(t, "\"\"zeta\"\" \":\" INTEGER"),
         *ak = strstr(t, "\"\"alpha\"\" \":\" true|false");
    assert_non_null(z);
    assert_non_null(zk);
    assert_non_null(ak);
    assert_true(zk < ak);
    assert_non_null(strstr(t, "lexeme WS (ignored) = [ \\t\\n\\r]+"));
    assert_non_null(strstr(t, "lexeme INTEGER = -?(?:0|[1-9][0-9]*)"));
    assert_null(strstr(t, "OTHER_KEY"));
    free(t);
    t = dump("{\"type\": \"array\", \"items\": {\"type\": \"string\"}}", 1);
    assert_null(strstr(t, "(ignored)"));
    assert_non_null(strstr(t, "lexeme STRING = \""));
    free(t);
    /* recursion is a rule named by the pointer */
    t = dump("{\"$defs\": {\"t\": {\"type\": \"array\", \"items\": {\"$ref\": \"#/$defs/t\"}}},"
             " \"$ref\": \"#/$defs/t\"}", 0);
    assert_non_null(strstr(t, "#/$defs/t -> array#"));
    free(t);
}

/* Whether the schema compiled with opts accepts text (its own parser). */
static int parses_opts(const char *schema, const gr_schema_opts_t *o, const char *text)
{
    gr_cfg_t *g = malloc(sizeof *g);
    tb_err_t err;
    assert_non_null(g);
    assert_int_equal(gr_cfg_init(g, "<test>", &err), 0);
    if (gr_schema_compile(g, schema, strlen(schema), o, &err))
        fail_msg("%s: %s", schema, err.msg);
    gr_gram_t *gram = gr_gram_new(g, NULL, &err);
    free(g);
    if (!gram)
        fail_msg("%s: %s", schema, err.msg);
    uint32_t st = gr_feed(gram, GR_START, (const uint8_t *)text, strlen(text), NULL);
    int ok = st != GR_DEAD && gr_accepting(gram, st);
    gr_gram_free(gram);
    return ok;
}

/* opts.draft is the draft of a schema without $schema (draft 7: keywords
 * beside $ref are ignored); a root $schema overrides it.  A schema that
 * allows nothing is GR_SCHEMA_EMPTY, not a refusal. */
static void draft_option_and_empty_schemas(void **state)
{
    (void)state;
    const char *ref = "{\"$defs\": {\"i\": {\"type\": \"integer\"}}, \"$ref\": \"#/$defs/i\", "
                      "\"minimum\": 5}";
    gr_schema_opts_t d7 = {.draft = 7}, d2020 = {.draft = 2020};
    assert_true(parses_opts(ref, &d7, "3"));
    assert_false(parses_opts(ref, &d2020, "3"));
    assert_false(parses_opts(ref, NULL, "3"));
    assert_true(parses_opts(ref, &d2020, "7"));
    const char *named = "{\"$schema\": \"https://json-schema.org/draft/2020-12/schema\", "
                        "\"$defs\": {\"i\": {\"type\": \"integer\"}}, \"$ref\": \"#/$defs/i\", "
                        "\"minimum\": 5}";
    assert_false(parses_opts(named, &d7, "3"));
    static const char *const empty[] = {"false", "{\"enum\": []}", "{\"not\": {}}",
                                        "{\"allOf\": [true, false]}"};
    for (size_t i = 0; i < sizeof empty / sizeof *empty; i++) {
        gr_cfg_t g;
        tb_err_t err;
        assert_int_equal(gr_cfg_init(&g, "<test>", &err), 0);
        assert_int_equal(gr_schema_compile(&g, empty[i], strlen(empty[i]), NULL, &err),
                         GR_SCHEMA_EMPTY);
        assert_non_null(strstr(err.msg, "allows no value"));
        gr_cfg_free(&g);
    }
    gr_cfg_t g;
    tb_err_t err;
    gr_schema_opts_t bad = {.draft = 5};
    assert_int_equal(gr_cfg_init(&g, "<test>", &err), 0);
    assert_int_equal(gr_schema_compile(&g, "{}", 2, &bad, &err), -1);
    assert_non_null(strstr(err.msg, "draft 5"));
    gr_cfg_free(&g);
}

static void errors_name_pointer_and_keyword(void **state)
{
    (void)state;
    static const struct {
        const char *schema, *want;
    } cases[] = {
        {"{\"properties\": {\"a\": {\"not\": {\"uniqueItems\": true}}}}",
         "#/properties/a/not: 'not' of 'uniqueItems' is not supported"},
        {"{\"type\": \"string\", \"format\": \"regex\"}", "#: format 'regex' is not supported"},
        {"{\"type\": \"object\", \"propertyNames\": {\"anyOf\": [{\"maxLength\": 1}, "
         "{\"pattern\": \"x\"}]}}", "#: 'propertyNames' with 'anyOf' is not supported"},
        {"{\"type\": \"array\", \"uniqueItems\": true}",
         "'uniqueItems' is not supported (only over items of at most 256 known values"},
        {"{\"type\": \"number\", \"multipleOf\": 0.123456789}",
         "#: 'multipleOf' 0.123456789 is not supported: divisibility by 123456789 needs more "
         "states"},
        {"{\"$ref\": \"#/definitions/nope\"}", "#: $ref '#/definitions/nope' cannot be resolved"},
        {"{\"$ref\": \"other.json#/a\"}",
         "#: $ref 'other.json#/a' cannot be resolved (tb:/other.json#/a: no such document "
         "(no remote folder given))"},
        {"{\"$defs\": {\"a\": {\"$anchor\": \"x\"}}, \"$ref\": \"#y\"}",
         "#: $ref '#y' cannot be resolved (tb:/root.json#y: no anchor 'y' there)"},
        {"{\"$defs\": {\"a\": {\"$ref\": \"#/$defs/b\"}, \"b\": {\"$ref\": \"#/$defs/a\"}}, "
         "\"$ref\": \"#/$defs/a\"}", "#: $ref '#/$defs/a' is a cycle of $refs with no base case"},
        {"{\"type\": \"object\", \"properties\": {\"a\": {\"$ref\": \"#\"}}, "
         "\"required\": [\"a\"]}",
         "the schema allows no value"},
        {"{\"type\": \"string\", \"maxLength\": 1000000000000}", "'maxLength' 1000000000000 is above"},
        {"{\"type\": \"array\", \"minItems\": 3, \"maxItems\": 2}", "the schema allows no value"},
        /* the complement of items after a tuple: no keyword says it */
        {"{\"not\": {\"prefixItems\": [{}], \"items\": {\"type\": \"string\"}}}",
         "#/not: 'not' of 'items' after a tuple of items is not supported"},
        {"{\"allOf\": [{\"not\": {\"properties\": {\"a0\": {}}, \"additionalProperties\": false}}, {\"not\": {\"properties\": {\"a1\": {}}, \"additionalProperties\": false}}, {\"not\": {\"properties\": {\"a2\": {}}, \"additionalProperties\": false}}, {\"not\": {\"properties\": {\"a3\": {}}, \"additionalProperties\": false}}, {\"not\": {\"properties\": {\"a4\": {}}, \"additionalProperties\": false}}]}",
         "'not' of 'additionalProperties' or 'patternProperties' of more than 4 subschemas "
         "(merged) is not supported"},
        {"{\"type\": \"string\", \"pattern\": \"a(?=b)\"}", "#: pattern 'a(?=b)' at offset 1: look-ahead"},
        {"{\"allOf\": [{\"format\": \"date\"}, {\"format\": \"email\"}]}",
         "#: allOf: cannot merge two different 'format'"},
        {"{\"not\": {\"allOf\": [{\"pattern\": \"a\"}, {\"pattern\": \"b\"}]}}",
         "#/not: 'not' of '$tb:patterns' is not supported"},
        /* 17 x 17 pairs, none contradictory */
        {"{\"allOf\": [{\"anyOf\": [{\"minimum\": 1}, {\"minimum\": 2}, {\"minimum\": 3}, "
         "{\"minimum\": 4}, {\"minimum\": 5}, {\"minimum\": 6}, {\"minimum\": 7}, {\"minimum\": 8}, "
         "{\"minimum\": 9}, {\"minimum\": 10}, {\"minimum\": 11}, {\"minimum\": 12}, "
         "{\"minimum\": 13}, {\"minimum\": 14}, {\"minimum\": 15}, {\"minimum\": 16}, "
         "{\"minimum\": 17}]}, {\"anyOf\": [{\"maximum\": 1}, {\"maximum\": 2}, {\"maximum\": 3}, "
         "{\"maximum\": 4}, {\"maximum\": 5}, {\"maximum\": 6}, {\"maximum\": 7}, {\"maximum\": 8}, "
         "{\"maximum\": 9}, {\"maximum\": 10}, {\"maximum\": 11}, {\"maximum\": 12}, "
         "{\"maximum\": 13}, {\"maximum\": 14}, {\"maximum\": 15}, {\"maximum\": 16}, "
         "{\"maximum\": 17}]}]}",
         "#: allOf: two 'anyOf' of more than 256 pairs of branches that may both match"},
        {"{\"type\": \"integer\", \"minimum\": 5, \"maximum\": 4}", "allows no value"},
        {"{\"type\": \"object\", \"required\": [\"a\"], \"additionalProperties\": false}",
         "the schema allows no value"},
        {"{\"type\": \"strin\"}", "unknown type 'strin'"},
        {"false", "the schema allows no value"},
        /* a required name that propertyNames rejects: no object qualifies */
        {"{\"type\": \"object\", \"required\": [\"toolong\"], \"propertyNames\": "
         "{\"maxLength\": 3}}", "the schema allows no value"},
        {"{\"type\": \"object\",\n \"properties\": {\"a\": }}", "<test>:2:22: malformed JSON"},
        /* an unresolvable $ref under allOf (JSON-Schema-Test-Suite draft2020-12
         * dynamicRef.json group 16): an error, not a free() of garbage */
        {"{\"$id\": \"http://localhost:1234/x.json\", \"allOf\": [{\"$defs\": {\"e\": "
         "{\"$dynamicAnchor\": \"e\"}}}, {\"$ref\": \"extendible-dynamic-ref.json\"}]}",
         "#: $ref 'extendible-dynamic-ref.json' cannot be resolved"},
        {"{\"allOf\": [{\"$ref\": \"#/nope\"}]}", "#: $ref '#/nope' cannot be resolved"},
        /* unevaluatedItems where the items evaluated depend on the instance */
        {"{\"unevaluatedItems\": false, \"anyOf\": [{\"prefixItems\": [{}]}, true]}",
         "#: 'unevaluatedItems' beside 'anyOf' is not supported"},
        {"{\"unevaluatedItems\": false, \"contains\": {}}",
         "#: 'unevaluatedItems' beside 'contains' is not supported"},
        {"{\"$schema\": \"http://json-schema.org/draft-03/schema#\", \"divisibleBy\": 2}",
         "#/$schema: draft 3 is not supported"},
        {"{\"enum\": [[1]], \"unevaluatedItems\": false}",
         "beside enum/const is not supported"},
        {"{\"unevaluatedProperties\": false, \"anyOf\": [{\"properties\": {\"a\": {}}}, true]}",
         "#: 'unevaluatedProperties' beside 'anyOf' is not supported (the properties it "
         "evaluates depend on the instance)"},
        {"{\"const\": {\"a\": 1}, \"unevaluatedProperties\": false}",
         "'unevaluatedProperties' beside enum/const is not supported"},
        {"{\"$ref\": \"#/$defs/a\", \"minimum\": 1, \"$defs\": {\"a\": {\"$ref\": \"#/x\"}}}",
         "$ref '#/x' cannot be resolved"},
        {"{\"x-guidance\": {\"whitespace_flexibel\": false}}",
         "#/x-guidance: unknown option 'whitespace_flexibel' (llguidance's are item_separator"},
        {"{\"x-guidance\": {\"json_allowed_escapes\": \"n/\"}}",
         "#/x-guidance/json_allowed_escapes: '/' is not an escape letter"},
        {"{\"x-guidance\": {\"item_separator\": 1}}",
         "#/x-guidance: 'item_separator' must be a non-empty string"},
        {"{\"x-guidance\": {\"lenient\": \"yes\"}}", "#/x-guidance: 'lenient' must be true or false"},
        {"{\"x-guidance\": []}", "#/x-guidance: must be an object"},
        {"{\"type\": \"string\", \"format\": \"regex\", \"x-guidance\": {}}",
         "#: format 'regex' is not supported"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gr_cfg_t g;
        tb_err_t err;
        assert_int_equal(gr_cfg_init(&g, "<test>", &err), 0);
        if (!gr_schema_compile(&g, cases[i].schema, strlen(cases[i].schema), NULL, &err))
            fail_msg("%s was accepted", cases[i].schema);
        if (!strstr(err.msg, cases[i].want))
            fail_msg("%s: got \"%s\", want \"%s\"", cases[i].schema, err.msg, cases[i].want);
        gr_cfg_free(&g);
    }
}

/* A string under a maxLength too short for the longest key to be lifted
 * over (gram.h's gr_lifted) is lifted below that room, down to the
 * slicer's long keys, which the state itself then answers: the masks
 * through a slicer and a cache are the state's own walk, key by key, at
 * every position of strings that run into their bound, and some
 * positions were lifted so. */
static void masks_lifted_below_the_room_are_exact(void **state)
{
    (void)state;
    static const char *const schemas[][2] = {
        {"{\"type\": \"string\", \"maxLength\": 26, \"pattern\": \"^(?:\\\\S+\\\\s+){0,6}\\\\S+$\"}",
         "\"ab cd ab cd ab cd abcdefg\""},
        {"{\"type\": \"array\", \"items\": {\"type\": \"string\", \"maxLength\": 24, "
         "\"pattern\": \"^[a-z ]+$\"}}",
         "[\"abc abc abc abc abc abc\", \"ab\"]"},
    };
    static const char *const words[] = {
        "a", "b", "c", "d", "ab", "cd", " ", "\"", "\",", "[\"", "\"]", ", \"", "abc ", "a b",
        "ab cd", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "a a a a a a a a a a a a a",
        "                    ", "abcdefghijklmnopqr", "ab cd ab cd ab cd ab cd a",
        "aaaaaaaaaaaaaaaaaaaaaaa\"", "bbbbbbbbbbbbbbbbbbbbbbbb\"]", "cd ab cd ab cd ab cd\"",
        "abc abc abc abc abc abc", "ab cd ab cd ab cd ab cd ab cd", "zzzzzzzzzzzzzzzzzzzzz",
    };
    size_t n = sizeof words / sizeof *words;
    const uint8_t *strs[sizeof words / sizeof *words];
    uint32_t lens[sizeof words / sizeof *words], ids[sizeof words / sizeof *words];
    for (size_t i = 0; i < n; i++) {
        strs[i] = (const uint8_t *)words[i];
        lens[i] = (uint32_t)strlen(words[i]);
        ids[i] = (uint32_t)i;
    }
    tb_err_t err;
    trie_keys_t keys;
    assert_int_equal(trie_keys_from_list(&keys, strs, lens, ids, n, &err), 0);
    trie_t *t = trie_build(&trie_layout_dfs, &keys, &err);
    assert_non_null(t);
    assert_int_equal(trie_prepare_walk(t, &err), 0);
    for (size_t k = 0; k < sizeof schemas / sizeof *schemas; k++) {
        gr_gram_t *g = parser(schemas[k][0], 0);
        lex_slicer_t *sl = lex_slicer_new(&keys, &trie_layout_dfs, NULL, 0, &err);
        assert_non_null(sl);
        assert_true(sl->long_min <= keys.max_len);
        gr_rec_t rec;
        gr_matcher_t m;
        gr_maskcache_t c;
        assert_int_equal(gr_rec_init(&rec, g, keys.max_len, &err), 0);
        assert_int_equal(gr_matcher_init(&m, g, keys.max_len, &err), 0);
        assert_int_equal(gr_matcher_use_slicer(&m, sl, &err), 0);
        gr_maskcache_init(&c, g, trie_mask_bits(t), 0);
        gr_matcher_use_cache(&m, &c);
        tb_bitset_t walked, got;
        assert_int_equal(tb_bitset_init(&walked, trie_mask_bits(t)), 0);
        assert_int_equal(tb_bitset_init(&got, trie_mask_bits(t)), 0);
        const char *text = schemas[k][1];
        int below = 0;
        for (size_t i = 0; i <= strlen(text); i++) {
            uint32_t at = gr_matcher_state(&m), exact, longest = keys.max_len + 1;
            assert_int_equal(gr_mask(t, &rec, at, &walked, NULL, &err), 0);
            assert_int_equal(gr_matcher_mask(&m, t, &got, NULL, &err), 0);
            if (!tb_bitset_equal(&walked, &got))
                fail_msg("%s: the mask after %zu bytes of %s differs", schemas[k][0], i, text);
            gr_lifted(g, at, longest, sl->long_min, &exact);
            below += exact < longest;
            if (i < strlen(text))
                assert_int_equal(gr_matcher_consume(&m, (const uint8_t *)text + i, 1, NULL, &err), 0);
        }
        assert_true(below > 0);
        tb_bitset_free(&walked);
        tb_bitset_free(&got);
        gr_maskcache_free(&c);
        gr_matcher_free(&m);
        gr_rec_free(&rec);
        lex_slicer_free(sl);
        gr_gram_free(g);
    }
    trie_free(t);
    trie_keys_free(&keys);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(patterns_agree_with_pcre2),
        cmocka_unit_test(lengths_cut_patterns_exactly),
        cmocka_unit_test(pattern_errors_name_the_reason),
        cmocka_unit_test(formats_follow_their_rfcs),
        cmocka_unit_test(number_ranges_are_exact),
        cmocka_unit_test(instances_agree_with_jsonschema),
        cmocka_unit_test(strict_oneof_refuses_overlaps),
        cmocka_unit_test(accept_command),
        cmocka_unit_test(property_order),
        cmocka_unit_test(multiple_of_decimals),
        cmocka_unit_test(refs_by_uri),
        cmocka_unit_test(enum_booleans_are_not_numbers),
        cmocka_unit_test(format_annotation_option),
        cmocka_unit_test(masks_lifted_below_the_room_are_exact),
        cmocka_unit_test(escapes_spell_the_same_strings),
        cmocka_unit_test(other_names_are_exact),
        cmocka_unit_test(lookaheads_read_to_the_match),
        cmocka_unit_test(nullable_adds_null),
        cmocka_unit_test(x_guidance_options),
        cmocka_unit_test(llguidance_spellings),
        cmocka_unit_test(dump_shows_the_translation),
        cmocka_unit_test(errors_name_pointer_and_keyword),
        cmocka_unit_test(draft_option_and_empty_schemas),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
