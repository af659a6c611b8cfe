/*
 * Tests of the regex parser's Unicode support (lexer/regex.h): scripts in
 * \p{..} and (?i) case folding, held to PCRE2 as the oracle (PCRE2_UTF for
 * scripts, PCRE2_UTF | PCRE2_CASELESS for folding), which shares no code
 * and no data file with lexer/regex.c (its tables are compiled in):
 *   - every script of PropertyValueAliases.txt as \p{Name} and \p{sc=Xxxx},
 *     full-matched against the UTF-8 of every code point of planes 0-3 and
 *     14 and every 251st code point above;
 *   - every cased character (any code point in CaseFolding.txt) as a (?i)
 *     literal and class against every cased character and a sample of the
 *     rest, and (?i) ranges, negated classes and escapes against all those
 *     code points;
 *   - random (?i) patterns mixing literals, classes, ranges and negation on
 *     strings drawn from their own characters and those characters' cases
 *     (with one PCRE2 10.42 bug kept out of the generator, see gen_class,
 *     and the parser's answer there checked on its own);
 *   - token masks over the llama3 vocabulary (lex_dfa_new + lex_mask)
 *     against PCRE2 partial matching;
 *   - errors: unknown names with their offsets, missing and malformed data
 *     files named in the message.
 *
 * Unicode versions.  lexer/regex.c reads Debian's unicode-data (15.0 on
 * Debian 12) while PCRE2 10.42 was built with Unicode 14.0, so the two
 * disagree wherever Unicode changed in between.  Only code points whose
 * properties can be the same in both are compared:
 *   - a code point assigned after PCRE2's Unicode version (its Age in
 *     DerivedAge.txt is newer) is unassigned to PCRE2: it is left out of
 *     every comparison, and the test checks that PCRE2 does see it as
 *     unassigned (\p{Cn}) and counts and prints how many were left out;
 *   - a pattern naming such a code point is not generated, and a script
 *     PCRE2 does not know must be made only of such code points (checked
 *     on the whole code space, and printed);
 *   - the older code points are compared exactly.  Case folding of assigned
 *     characters is stable by Unicode policy; Script and Script_Extensions
 *     are not, but no older code point changed them between 14.0 and 15.0
 *     (should a later pair of versions differ there, this test fails and
 *     says which code point and which script).
 * Should PCRE2 ever be built with a newer Unicode than the data, the code
 * points the data leaves unassigned are left out instead (and checked to be
 * \p{Cn} to the parser).  When both sides have the same Unicode version
 * nothing is left out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "../base/file.h"
#include "../base/utf8.h"
#include "../lexer/deriv.h"
#include "../lexer/rec.h"
#include "../lexer/regex.h"
#include "../trie/trie.h"
#include "support.h"

#define LLAMA3 "data/cache/llama3/tokenizer.json"
#define CP_MAX 0x10FFFFu

/* ---- the Unicode data the test reads for itself ------------------------------ */

/* What the test knows about the two Unicode versions and the code space. */
static struct {
    unsigned pcre_ver;    /* PCRE2's Unicode version, major << 8 | minor */
    unsigned data_ver;    /* the data files' version, the same way */
    char pcre_ver_s[64], data_ver_s[64];
    uint16_t *age;        /* DerivedAge.txt: major << 8 | minor, 0 = unassigned */
    uint32_t *sample;     /* the code points compared (see header comment) */
    size_t nsample;
    uint32_t *cased;      /* every code point of CaseFolding.txt, sorted */
    uint32_t *cfold;      /* cased[i]'s simple folding (itself if none) */
    size_t ncased;
    size_t left_out;      /* comparisons skipped as newer than PCRE2 */
} U;

/* A code point that PCRE2's Unicode version has the same properties for. */
static int comparable(uint32_t c)
{
    /* Unassigned in the data (Age 0): PCRE2 knows it if its Unicode is newer. */
    return U.age[c] ? U.age[c] <= U.pcre_ver : U.data_ver >= U.pcre_ver;
}

/* The lines of a Unicode data file (modified in place), comments cut. */
static char **data_lines(const char *file, size_t *n, uint8_t **text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", LEX_UNICODE_DIR, file);
    size_t len;
    tb_err_t err;
    if (tb_read_file(path, text, &len, &err))
        fail_msg("%s (install the unicode-data package: scripts/setup.sh)", err.msg);
    size_t cap = 1024;
    char **v = malloc(cap * sizeof *v);
    *n = 0;
    for (char *save = NULL, *l = strtok_r((char *)*text, "\n", &save); l;
         l = strtok_r(NULL, "\n", &save)) {
        if (*l == '#')
            continue;
        if (*n == cap)
            v = realloc(v, (cap *= 2) * sizeof *v);
        v[(*n)++] = l;
    }
    return v;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void load_ages(void)
{
    size_t n;
    uint8_t *text;
    U.age = calloc(CP_MAX + 1, sizeof *U.age);
    char **l = data_lines("DerivedAge.txt", &n, &text);
    for (size_t i = 0; i < n; i++) {
        char *e;
        unsigned long lo = strtoul(l[i], &e, 16), hi = lo;
        if (e[0] == '.' && e[1] == '.')
            hi = strtoul(e + 2, &e, 16);
        char *semi = strchr(e, ';');
        unsigned maj = 0, min = 0; /* fail_msg is not noreturn to clang */
        if (!semi || sscanf(semi + 1, "%u.%u", &maj, &min) != 2 || hi > CP_MAX)
            fail_msg("DerivedAge.txt: cannot read '%s'", l[i]);
        for (unsigned long c = lo; c <= hi; c++)
            U.age[c] = (uint16_t)(maj << 8 | min);
    }
    free(l);
    free(text);
    /* The header names the version: "# DerivedAge-15.0.0.txt". */
    char path[512];
    snprintf(path, sizeof path, "%s/DerivedAge.txt", LEX_UNICODE_DIR);
    FILE *f = fopen(path, "r");
    unsigned maj = 0, min = 0;
    if (!f || fscanf(f, "# DerivedAge-%31[0-9.]", U.data_ver_s) != 1 ||
        sscanf(U.data_ver_s, "%u.%u", &maj, &min) != 2)
        fail_msg("%s: no version in the first line", path);
    fclose(f);
    U.data_ver = maj << 8 | min;
    size_t vl = strlen(U.data_ver_s); /* "15.0.0." before "txt" */
    if (vl && U.data_ver_s[vl - 1] == '.')
        U.data_ver_s[vl - 1] = 0;
}

static void load_cased(void)
{
    size_t n;
    uint8_t *text;
    char **l = data_lines("CaseFolding.txt", &n, &text);
    uint32_t(*pairs)[2] = malloc(2 * n * sizeof *pairs);
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned from, to;
        char status;
        if (sscanf(l[i], "%x; %c; %x", &from, &status, &to) != 3)
            fail_msg("CaseFolding.txt: cannot read '%s'", l[i]);
        int simple = status == 'C' || status == 'S';
        pairs[np][0] = from, pairs[np++][1] = simple ? to : from;
        pairs[np][0] = to, pairs[np++][1] = to;
    }
    free(l);
    free(text);
    /* Sorted by code point, a mapping beating an identity. */
    qsort(pairs, np, sizeof *pairs, cmp_u32);
    U.cased = malloc(np * sizeof *U.cased);
    U.cfold = malloc(np * sizeof *U.cfold);
    U.ncased = 0;
    for (size_t i = 0; i < np; i++) {
        if (U.ncased && U.cased[U.ncased - 1] == pairs[i][0]) {
            if (pairs[i][1] != pairs[i][0])
                U.cfold[U.ncased - 1] = pairs[i][1];
            continue;
        }
        U.cased[U.ncased] = pairs[i][0];
        U.cfold[U.ncased++] = pairs[i][1];
    }
    free(pairs);
}

static int setup(void **state)
{
    (void)state;
    /* The parser is to read the files this test reads. */
    unsetenv("TOKBENCH_UNICODE_DIR");
    unsetenv("TOKBENCH_UNICODE_DATA");
    char v[64];
    if (pcre2_config(PCRE2_CONFIG_UNICODE_VERSION, v) < 0) {
        fprintf(stderr, "PCRE2 has no Unicode support\n");
        return -1;
    }
    unsigned maj, min;
    if (sscanf(v, "%u.%u", &maj, &min) != 2) {
        fprintf(stderr, "PCRE2's Unicode version '%s' is unreadable\n", v);
        return -1;
    }
    U.pcre_ver = maj << 8 | min;
    snprintf(U.pcre_ver_s, sizeof U.pcre_ver_s, "%s", v);
    load_ages();
    load_cased();
    U.sample = malloc((CP_MAX + 1) * sizeof *U.sample);
    for (uint32_t c = 0; c <= CP_MAX; c++)
        if ((c < 0x40000 || (c >= 0xE0000 && c < 0xE1000) || c % 251 == 0) &&
            !(c >= 0xD800 && c <= 0xDFFF))
            U.sample[U.nsample++] = c;
    size_t newer = 0;
    for (uint32_t c = 0; c <= CP_MAX; c++)
        newer += !comparable(c);
    printf("Unicode data %s, PCRE2 built with Unicode %s: %zu code points assigned "
           "in one of the two only are left out of the comparisons\n", U.data_ver_s, v, newer);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    printf("%zu comparisons left out as newer than PCRE2's Unicode\n", U.left_out);
    free(U.age);
    free(U.sample);
    free(U.cased);
    free(U.cfold);
    return 0;
}

/* ---- the two matchers ------------------------------------------------------- */

typedef struct {
    const char *pattern;
    lex_dfa_t *d;
    pcre2_code *re;
    pcre2_match_data *md;
} both_t;

static pcre2_code *pcre_compile(const char *pattern, uint32_t opts, char *why, size_t cap)
{
    int code;
    PCRE2_SIZE off;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_ANCHORED | opts, &code, &off, NULL);
    if (!re) {
        pcre2_get_error_message(code, (PCRE2_UCHAR *)why, cap);
        return NULL;
    }
    pcre2_jit_compile(re, PCRE2_JIT_COMPLETE | PCRE2_JIT_PARTIAL_HARD);
    return re;
}

/* Both matchers for a whole-match pattern, or the failure of the test. */
static void both_new(both_t *b, const char *pattern)
{
    tb_err_t err;
    char why[256];
    b->pattern = pattern;
    b->d = lex_dfa_new(pattern, NULL, &err);
    if (!b->d)
        fail_msg("%s", err.msg);
    b->re = pcre_compile(pattern, PCRE2_ENDANCHORED, why, sizeof why);
    if (!b->re)
        fail_msg("PCRE2 refuses '%s': %s", pattern, why);
    b->md = pcre2_match_data_create_from_pattern(b->re, NULL);
}

static void both_free(both_t *b)
{
    lex_dfa_free(b->d);
    pcre2_match_data_free(b->md);
    pcre2_code_free(b->re);
}

static int dfa_match(lex_dfa_t *d, const uint8_t *s, size_t n)
{
    uint32_t st = lex_dfa_feed(d, LEX_START, s, n);
    return st != LEX_DEAD && lex_dfa_accepting(d, st);
}

/* Fails the test when the two disagree on s[0..n); returns the verdict. */
static int both_check(both_t *b, const uint8_t *s, size_t n)
{
    int want = pcre2_match(b->re, s, n, 0, PCRE2_NO_UTF_CHECK, b->md, NULL) >= 0;
    int got = dfa_match(b->d, s, n);
    if (got != want) {
        uint32_t c = 0;
        tb_utf8_decode(s, n, &c);
        fail_msg("'%s' on '%.*s' (first code point U+%04X, %zu bytes): PCRE2 says %d, "
                 "the DFA %d", b->pattern, (int)n, s, c, n, want, got);
    }
    return want;
}

/* Compares b on one code point when comparable; returns the verdict or -1. */
static int both_check_cp(both_t *b, uint32_t c)
{
    if (!comparable(c)) {
        U.left_out++;
        return -1;
    }
    uint8_t u[4];
    size_t n = tb_utf8_encode(c, u);
    return both_check(b, u, n);
}

/* Compares b on every sampled code point; returns how many matched. */
static size_t both_check_sample(both_t *b)
{
    size_t yes = 0;
    for (size_t i = 0; i < U.nsample; i++)
        yes += both_check_cp(b, U.sample[i]) == 1;
    return yes;
}

/* ---- scripts ------------------------------------------------------------------ */

typedef struct {
    char shortn[16], longn[64];
} script_name_t;

static script_name_t *script_names(size_t *count)
{
    size_t n;
    uint8_t *text;
    char **l = data_lines("PropertyValueAliases.txt", &n, &text);
    script_name_t *v = calloc(n, sizeof *v);
    *count = 0;
    for (size_t i = 0; i < n; i++) {
        script_name_t s;
        if (sscanf(l[i], "sc ; %15[^ ;] ; %63[^ ;]", s.shortn, s.longn) == 2)
            v[(*count)++] = s;
    }
    free(l);
    free(text);
    if (*count < 100)
        fail_msg("PropertyValueAliases.txt names only %zu scripts", *count);
    return v;
}

/* A script PCRE2 does not know: the parser must refuse it as well or give
 * it only code points assigned after PCRE2's Unicode version. */
static void script_unknown_to_pcre2(const char *pattern)
{
    tb_err_t err;
    lex_dfa_t *d = lex_dfa_new(pattern, NULL, &err);
    if (!d) {
        if (!strstr(err.msg, "has no characters") && !strstr(err.msg, "unknown"))
            fail_msg("'%s': unexpected error %s", pattern, err.msg);
        printf("  %s: refused by both (%s)\n", pattern, strstr(err.msg, "' ") + 2);
        return;
    }
    size_t mine = 0;
    for (uint32_t c = 0; c <= CP_MAX; c++) {
        if (c == 0xD800)
            c = 0xE000;
        uint8_t u[4];
        size_t n = tb_utf8_encode(c, u);
        if (!dfa_match(d, u, n))
            continue;
        if (comparable(c))
            fail_msg("PCRE2 (Unicode %s) refuses '%s', but it matches U+%04X, assigned in "
                     "Unicode %u.%u", U.pcre_ver_s, pattern, c, U.age[c] >> 8, U.age[c] & 255);
        mine++;
    }
    printf("  %s: unknown to PCRE2's Unicode %s; its %zu code points are all newer\n",
           pattern, U.pcre_ver_s, mine);
    lex_dfa_free(d);
}

static void scripts_agree_with_pcre2(void **state)
{
    (void)state;
    size_t n;
    script_name_t *sc = script_names(&n);
    size_t compared = 0, patterns = 0;
    for (size_t i = 0; i < n; i++) {
        char pats[5][128];
        int np = 0;
        snprintf(pats[np++], sizeof pats[0], "\\p{%s}", sc[i].longn);
        snprintf(pats[np++], sizeof pats[0], "\\p{sc=%s}", sc[i].shortn);
        /* Negations and classes for some, so the whole run stays short. */
        if (i % 7 == 0) {
            snprintf(pats[np++], sizeof pats[0], "\\P{%s}", sc[i].shortn);
            snprintf(pats[np++], sizeof pats[0], "[^\\p{%s}x]", sc[i].longn);
            snprintf(pats[np++], sizeof pats[0], "[\\p{Script_Extensions=%s}\\d]",
                     sc[i].shortn);
        }
        for (int p = 0; p < np; p++) {
            char why[256];
            pcre2_code *re = pcre_compile(pats[p], 0, why, sizeof why);
            if (!re) {
                script_unknown_to_pcre2(pats[p]);
                continue;
            }
            pcre2_code_free(re);
            both_t b;
            both_new(&b, pats[p]);
            both_check_sample(&b);
            both_free(&b);
            compared += U.nsample;
            patterns++;
        }
    }
    free(sc);
    printf("%zu script patterns, %zu code point verdicts compared with PCRE2\n", patterns,
           compared);
}

/* \p{Greek} is Script_Extensions (PCRE2 10.40+): U+0342 (Script Inherited,
 * extensions Greek) is in it and in \p{Inherited}, not in \p{sc=Greek}.
 * The scan above compares the same thing; this one says it in words. */
static void bare_script_names_are_extensions(void **state)
{
    (void)state;
    static const struct {
        const char *pattern;
        uint32_t cp;
    } cases[] = {
        {"\\p{Greek}", 0x342}, {"\\p{sc=Greek}", 0x342}, {"\\p{scx=Grek}", 0x342},
        {"\\p{Inherited}", 0x342}, {"\\p{Devanagari}", 0x964}, {"\\p{Common}", 0x964},
        {"\\p{sc=Deva}", 0x964}, {"\\p{Han}", 0x3001}, {"\\p{Hiragana}", 0x30FC},
        {"\\p{ Old-italic }", 0x10300}, {"\\p{^Latin}", 'a'}, {"\\P{^latn}", 'a'},
        {"[\\p{Cyrillic}\\p{Arabic}]", 0x0627}, {"\\p{Unknown}", 0x378},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        both_t b;
        both_new(&b, cases[i].pattern);
        both_check_cp(&b, cases[i].cp);
        both_free(&b);
    }
}

/* ---- case folding ----------------------------------------------------------- */

/* Writes code point c as a pattern character: UTF-8, or \x{..} for the
 * characters that mean something in a pattern or a class. */
static size_t put_char(char *out, uint32_t c, int escape)
{
    if (escape || c < 0x20 || strchr("\\[]()|*+?{}.^$-", (int)c))
        return (size_t)sprintf(out, "\\x{%X}", c);
    return tb_utf8_encode(c, (uint8_t *)out);
}

/* The inputs for a single-character pattern: every cased character and
 * every 61st sampled code point. */
static void check_cased_and_some(both_t *b)
{
    for (size_t i = 0; i < U.ncased; i++)
        both_check_cp(b, U.cased[i]);
    for (size_t i = 0; i < U.nsample; i += 61)
        both_check_cp(b, U.sample[i]);
}

static void caseless_single_characters(void **state)
{
    (void)state;
    size_t patterns = 0, matched = 0;
    for (size_t i = 0; i < U.ncased; i++) {
        uint32_t c = U.cased[i];
        if (!comparable(c))
            continue;
        char pat[64], ch[16];
        ch[put_char(ch, c, i % 3 == 0)] = 0;
        const char *forms[] = {"(?i)%s", "(?i)[%s]", "(?i)[^%s]", "(?i:%s)", "(?-i)%s"};
        for (size_t f = 0; f < sizeof forms / sizeof *forms; f++) {
            /* All forms for every 4th character, the literal for all. */
            if (f && i % 4)
                continue;
            snprintf(pat, sizeof pat, forms[f], ch);
            both_t b;
            both_new(&b, pat);
            check_cased_and_some(&b);
            uint8_t u[4];
            matched += both_check(&b, u, tb_utf8_encode(c, u));
            both_free(&b);
            patterns++;
        }
    }
    printf("%zu single-character patterns over %zu cased and %zu other code points\n",
           patterns, U.ncased, U.nsample / 61);
    /* Every (?i) and (?-i) literal matches itself, per PCRE2: the loop
     * above did see positive verdicts (the negated form matches no self). */
    assert_true(matched > 0);
}

static void caseless_classes_over_the_code_space(void **state)
{
    (void)state;
    static const char *const fixed[] = {
        "(?i)[a-zα-ω]", "(?i)[A-Z]", "(?i)[^a-z]", "(?i)[k-s]", "(?i)[^k]", "(?i)\\w",
        "(?i)\\W", "(?i)[\\W]", "(?i)[^\\W]", "(?i)\\p{Lu}", "(?i)[\\p{Ll}]",
        "(?i)[^\\P{Lu}k]", "(?i).", "(?i)\\P{Greek}", "(?i)[\\p{Greek}a-c]",
        "(?i)[^\\p{Latin}σ]", "(?i)[\\x{100}-\\x{17F}]", "(?i)[\\x{10400}-\\x{1044F}]",
        "(?i)[\\x{1E900}-\\x{1E95F}]", "(?i)[\\x{2C00}-\\x{2C5F}]", "(?i)[ǅ]",
        "(?i)[\\x{1F80}-\\x{1FAF}]", "(?i)[^\\x{0}-\\x{7F}\\x{212A}]", "(?i)\\D",
    };
    size_t nfixed = sizeof fixed / sizeof *fixed;
    char pats[40][96];
    size_t np = 0;
    for (; np < nfixed; np++)
        snprintf(pats[np], sizeof pats[np], "%s", fixed[np]);
    /* Random ranges that start on a cased character. */
    while (np < sizeof pats / sizeof *pats) {
        uint32_t lo = U.cased[test_rnd((uint32_t)U.ncased)], hi = lo + test_rnd(400);
        if (hi > CP_MAX || !comparable(lo) || !comparable(hi) ||
            (hi >= 0xD800 && lo <= 0xDFFF))
            continue;
        snprintf(pats[np], sizeof pats[np], np % 2 ? "(?i)[^\\x{%X}-\\x{%X}]"
                 : "(?i)[\\x{%X}-\\x{%X}\\d]", lo, hi);
        np++;
    }
    for (size_t p = 0; p < np; p++) {
        both_t b;
        both_new(&b, pats[p]);
        both_check_sample(&b);
        both_free(&b);
    }
    printf("%zu caseless classes over %zu code points each\n", np, U.nsample);
}

/* [X] and [^X] split the code space whatever X holds, where PCRE2 10.42
 * does not (see gen_class): checked on every code point, on the DFA alone. */
static void negated_classes_are_complements(void **state)
{
    (void)state;
    static const char *const items[] = {"\\p{Lu}\\W", "\\D\\P{Nd}", "\\p{Greek}\\S",
                                        "(?i)k\\p{Ll}\\W"};
    for (size_t i = 0; i < sizeof items / sizeof *items; i++) {
        const char *body = items[i];
        char flags[8] = "", pos[64], neg[64];
        if (!strncmp(body, "(?i)", 4)) {
            strcpy(flags, "(?i)");
            body += 4;
        }
        snprintf(pos, sizeof pos, "%s[%s]", flags, body);
        snprintf(neg, sizeof neg, "%s[^%s]", flags, body);
        tb_err_t err;
        lex_dfa_t *a = lex_dfa_new(pos, NULL, &err), *b = a ? lex_dfa_new(neg, NULL, &err) : NULL;
        if (!b)
            fail_msg("%s", err.msg);
        for (uint32_t c = 0; c <= CP_MAX; c++) {
            if (c == 0xD800)
                c = 0xE000;
            uint8_t u[4];
            size_t n = tb_utf8_encode(c, u);
            if (dfa_match(a, u, n) == dfa_match(b, u, n))
                fail_msg("U+%04X: '%s' and '%s' both say %d", c, pos, neg, dfa_match(a, u, n));
        }
        lex_dfa_free(a);
        lex_dfa_free(b);
    }
}

/* ---- random patterns ---------------------------------------------------------- */

typedef struct {
    uint32_t *v;
    size_t n;
} pool_t;

static void pool_add(pool_t *p, uint32_t c)
{
    if (comparable(c) && p->n < 512)
        p->v[p->n++] = c;
}

/* Adds c and every character of the same simple case folding (from
 * CaseFolding.txt: which of them PCRE2 matches is its own business). */
static void pool_add_cases(pool_t *p, uint32_t c)
{
    pool_add(p, c);
    uint32_t f = c;
    uint32_t *hit = bsearch(&c, U.cased, U.ncased, sizeof c, cmp_u32);
    if (hit)
        f = U.cfold[hit - U.cased];
    for (size_t i = 0; i < U.ncased; i++)
        if (U.cfold[i] == f && U.cased[i] != c)
            pool_add(p, U.cased[i]);
}

/* A cased character that PCRE2 knows, or an ASCII one. */
static uint32_t some_char(void)
{
    for (;;) {
        uint32_t c = test_rnd(3) ? U.cased[test_rnd((uint32_t)U.ncased)] : 0x20 + test_rnd(0x5F);
        if (comparable(c))
            return c;
    }
}

/*
 * A random class.  A negated one never mixes \p{..} with \W: PCRE2 10.42
 * then ignores \W above U+00FF (it matches U+ABA7 with [^\p{Lu}\W], which
 * [\p{Lu}\W] matches too: PCRE2 issue #497, fixed in 10.45), and the
 * parser keeps set semantics (checked in negated_classes_are_complements).
 */
static size_t gen_class(char *o, pool_t *pool)
{
    size_t n = 0;
    o[n++] = '[';
    int neg = test_rnd(3) == 0;
    if (neg)
        o[n++] = '^';
    for (int k = 1 + (int)test_rnd(3); k-- > 0;) {
        uint32_t a = some_char();
        pool_add_cases(pool, a);
        switch (test_rnd(5)) {
        case 0: n += (size_t)sprintf(o + n, "\\p{%s}", test_rnd(2) ? "Greek" : "Lu"); break;
        case 1: n += (size_t)sprintf(o + n, "%s", test_rnd(2) || neg ? "\\d" : "\\W"); break;
        case 2: {
            uint32_t b = a + 1 + test_rnd(40);
            if (comparable(b) && !(b >= 0xD800 && a <= 0xDFFF)) {
                n += put_char(o + n, a, 0);
                o[n++] = '-';
                n += put_char(o + n, b, 0);
                pool_add_cases(pool, b);
                pool_add_cases(pool, a + (b - a) / 2);
                break;
            }
        } /* fall through */
        default: n += put_char(o + n, a, test_rnd(4) == 0);
        }
    }
    o[n++] = ']';
    return n;
}

static size_t gen_seq(char *o, pool_t *pool, int depth)
{
    size_t n = 0;
    for (int k = 1 + (int)test_rnd(3); k-- > 0;) {
        uint32_t r = test_rnd(10);
        if (r < 4) {
            uint32_t c = some_char();
            pool_add_cases(pool, c);
            n += put_char(o + n, c, test_rnd(4) == 0);
        } else if (r < 7) {
            n += gen_class(o + n, pool);
        } else if (depth < 2) {
            static const char *const open[] = {"(", "(?:", "(?i:", "(?-i:"};
            n += (size_t)sprintf(o + n, "%s", open[test_rnd(4)]);
            n += gen_seq(o + n, pool, depth + 1);
            o[n++] = '|';
            n += gen_seq(o + n, pool, depth + 1);
            o[n++] = ')';
        } else
            n += (size_t)sprintf(o + n, "\\x{%X}", some_char());
        static const char *const q[] = {"", "", "", "?", "*", "+", "{1,2}"};
        n += (size_t)sprintf(o + n, "%s", q[test_rnd(7)]);
    }
    o[n] = 0;
    return n;
}

static void random_caseless_patterns(void **state)
{
    (void)state;
    uint32_t pv[512];
    size_t yes = 0, total = 0;
    for (int p = 0; p < 300; p++) {
        pool_t pool = {pv, 0};
        char pat[2048] = "(?i)";
        gen_seq(pat + 4, &pool, 0);
        for (int k = 0; k < 8; k++)
            pool_add(&pool, U.sample[test_rnd((uint32_t)U.nsample)]);
        both_t b;
        both_new(&b, pat);
        for (int s = 0; s < 400; s++) {
            uint8_t str[64];
            size_t n = 0;
            for (int len = (int)test_rnd(6); len-- > 0;)
                n += tb_utf8_encode(pool.v[test_rnd((uint32_t)pool.n)], str + n);
            yes += both_check(&b, str, n);
            total++;
        }
        both_free(&b);
    }
    printf("%zu strings on 300 random (?i) patterns, %zu matched\n", total, yes);
    assert_true(yes > 0);
}

/* ---- token masks ----------------------------------------------------------------- */

/* Is every code point of s (valid UTF-8) known to PCRE2's Unicode? */
static int text_comparable(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint32_t c;
        size_t l = tb_utf8_decode(s + i, n - i, &c);
        if (!l || !comparable(c))
            return 0;
        i += l;
    }
    return 1;
}

static void masks_over_llama3(void **state)
{
    (void)state;
    static const struct {
        const char *pattern, *after;
    } cases[] = {
        {"(?i)[a-zα-ω]+", ""}, {"(?i)[a-zα-ω]+", "ΣΙΣΥΦΟΣ"}, {"\\p{Greek}+", ""},
        {"\\p{Han}+", ""}, {"\\p{Han}+", "漢字"}, {"(?i)(?:straße|[^\\p{Latin}\\s\\d])+", ""},
        {"(?i)[^\\p{Cyrillic}k]+", "x"}, {"\\p{Arabic}[\\p{Arabic}\\s]*", "ال"},
    };
    tb_err_t err;
    tok_tokenizer_t *tok = test_load(LLAMA3);
    trie_keys_t keys;
    assert_int_equal(trie_keys_from_vocab(&keys, tok_vocab(tok), TRIE_SPECIALS_OMIT, &err), 0);
    trie_t *trie = trie_build(trie_layout_find("dfs"), &keys, &err);
    if (!trie)
        fail_msg("%s", err.msg);
    size_t checked = 0, allowed = 0, not_utf8 = 0, newer = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        lex_dfa_t *d = lex_dfa_new(cases[i].pattern, NULL, &err);
        if (!d)
            fail_msg("%s", err.msg);
        char anchored[512], why[256];
        /* PCRE2 refuses ENDANCHORED with partial matching; \z does it. */
        snprintf(anchored, sizeof anchored, "(?:%s)\\z", cases[i].pattern);
        pcre2_code *re = pcre_compile(anchored, 0, why, sizeof why);
        if (!re)
            fail_msg("PCRE2 refuses '%s': %s", anchored, why);
        pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
        size_t plen = strlen(cases[i].after);
        uint32_t st = lex_dfa_feed(d, LEX_START, (const uint8_t *)cases[i].after, plen);
        if (st == LEX_DEAD)
            fail_msg("'%s' refuses '%s'", cases[i].pattern, cases[i].after);
        tb_bitset_t mask;
        assert_int_equal(tb_bitset_init(&mask, trie_mask_bits(trie)), 0);
        lex_rec_t r;
        assert_int_equal(lex_rec_init(&r, d, keys.max_len, &err), 0);
        if (lex_mask(trie, &r, st, &mask, NULL, &err))
            fail_msg("%s", err.msg);
        lex_rec_free(&r);
        uint8_t buf[4096];
        for (size_t k = 0; k < keys.n; k++) {
            const trie_key_t *key = &keys.keys[k];
            if (plen + key->len > sizeof buf)
                continue;
            memcpy(buf, cases[i].after, plen);
            memcpy(buf + plen, key->s, key->len);
            size_t n = plen + key->len;
            if (tb_utf8_validate(buf, n) != n) {
                not_utf8++; /* PCRE2 cannot judge; tests/test_lexer.c's NFA does */
                continue;
            }
            if (!text_comparable(buf, n)) {
                newer++;
                continue;
            }
            int rc = pcre2_match(re, buf, n, 0, PCRE2_PARTIAL_HARD, md, NULL);
            int want = rc >= 0 || rc == PCRE2_ERROR_PARTIAL;
            int got = tb_bitset_get(&mask, key->id);
            if (want != got)
                fail_msg("'%s' after '%s': token %u '%.*s': PCRE2 says %d, the mask %d",
                         cases[i].pattern, cases[i].after, key->id, (int)key->len, key->s,
                         want, got);
            checked++;
            allowed += (size_t)got;
        }
        tb_bitset_free(&mask);
        pcre2_match_data_free(md);
        pcre2_code_free(re);
        lex_dfa_free(d);
    }
    U.left_out += newer;
    printf("%zu token verdicts checked against PCRE2 (%zu allowed); left out: %zu not valid "
           "UTF-8, %zu with code points newer than PCRE2's Unicode\n", checked, allowed,
           not_utf8, newer);
    assert_true(allowed > 0);
    trie_free(trie);
    trie_keys_free(&keys);
    tok_free(tok);
}

/* ---- the left-out code points are unassigned to PCRE2 --------------------------- */

static void left_out_code_points_are_new_to_pcre2(void **state)
{
    (void)state;
    char why[256];
    pcre2_code *cn = pcre_compile("\\p{Cn}\\z", 0, why, sizeof why);
    assert_non_null(cn);
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(cn, NULL);
    tb_err_t err;
    lex_dfa_t *mine = lex_dfa_new("\\p{Cn}", NULL, &err);
    if (!mine)
        fail_msg("%s", err.msg);
    size_t n = 0;
    for (uint32_t c = 0; c <= CP_MAX; c++) {
        if (comparable(c) || (c >= 0xD800 && c <= 0xDFFF))
            continue;
        uint8_t u[4];
        size_t l = tb_utf8_encode(c, u);
        /* Assigned in the data only (PCRE2 older), or in PCRE2 only. */
        if (U.age[c] && pcre2_match(cn, u, l, 0, 0, md, NULL) < 0)
            fail_msg("U+%04X (Unicode %u.%u) is left out of the comparisons, but PCRE2 "
                     "has it assigned", c, U.age[c] >> 8, U.age[c] & 255);
        if (!U.age[c] && !dfa_match(mine, u, l))
            fail_msg("U+%04X is left out of the comparisons as unassigned in the data, "
                     "but the parser has it assigned", c);
        n++;
    }
    lex_dfa_free(mine);
    printf("%zu left-out code points, each unassigned on the side with the older "
           "Unicode\n", n);
    pcre2_match_data_free(md);
    pcre2_code_free(cn);
}

/* ---- errors --------------------------------------------------------------------- */

static void unknown_names_are_errors(void **state)
{
    (void)state;
    test_regex_refused("ab\\p{Gruk}", "unknown or unsupported Unicode property 'Gruk' at offset 2");
    test_regex_refused("[a\\P{Latn}\\p{Nope}]", "property 'Nope' at offset 10");
    test_regex_refused("\\p{sc=Lu}", "property 'sc=Lu' at offset 0");
    test_regex_refused("x\\p{bogus=Greek}", "property 'bogus=Greek' at offset 1");
    test_regex_refused("\\p{IsGreek}", "property 'IsGreek' at offset 0");
    test_regex_refused("\\p{Hrkt}", "Unicode script 'Hrkt' has no characters at offset 0");
    test_regex_refused("(?i)[\\p{Greek}-z]", "a class cannot start a range at offset 5");
    test_regex_refused("[a-\\d]", "a class cannot end a range at offset 1");
    test_regex_refused("\\p{Greek", "unterminated \\p{ at offset 0");
}

/* Writes a file (name under dir) with the given text. */
static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Copies a real data file into dir. */
static void copy_file(const char *dir, const char *name)
{
    char path[512];
    uint8_t *data;
    size_t len;
    tb_err_t err;
    snprintf(path, sizeof path, "%s/%s", LEX_UNICODE_DIR, name);
    assert_int_equal(tb_read_file(path, &data, &len, &err), 0);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fwrite(data, 1, len, f);
    fclose(f);
    free(data);
}

static void data_file_errors_name_the_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/tokbench-unicode-XXXXXX";
    test_tmpdir(dir);
    setenv("TOKBENCH_UNICODE_DIR", dir, 1);
    char want[600];
    /* Missing files: named, with the pattern and where it needed them. */
    snprintf(want, sizeof want, "regex '\\p{Greek}' at offset 0: \\p{<script>} needs the "
             "Unicode data file %s/PropertyValueAliases.txt", dir);
    test_regex_refused("\\p{Greek}", want);
    snprintf(want, sizeof want, "at offset 1: (?i) (caseless matching) needs the Unicode "
             "data file %s/CaseFolding.txt", dir);
    test_regex_refused("a(?i)b", want);
    snprintf(want, sizeof want, "%s/UnicodeData.txt", dir);
    test_regex_refused("\\p{Lu}", want);
    /* Malformed files: named, with the line or the code point at fault.  A
     * row without a pattern writes a good file that later rows rely on. */
    static const struct {
        const char *file, *text, *pattern, *want;
    } bad[] = {
        {"Scripts.txt", "# a comment\n0041..005A ; Latin\n0061 ;; Latin\n", "\\p{Latin}",
         "Scripts.txt, line 3"},
        {"Scripts.txt", "0041..005A ; Latin\n0370 ; Klingon\n", "\\p{Latin}",
         "Scripts.txt, line 2: a script that"},
        {"Scripts.txt", "0041..005A ; Latin\n0391..03A9 ; Greek\n0050 ; Greek\n", "\\p{Latin}",
         "Scripts.txt: U+0050 is given twice"},
        {"Scripts.txt", "0041..005A ; Latin\n0391..03A9 ; Greek\n", NULL, NULL},
        {"ScriptExtensions.txt", "0342 ; Grek\n0343 ; Grek Xyzw\n", "\\p{Latin}",
         "ScriptExtensions.txt, line 2"},
        {"CaseFolding.txt", "0041; C; 0061; # A\n004B; C; 006B 212A;\n", "(?i)k",
         "CaseFolding.txt, line 2"},
        {"UnicodeData.txt", "0041;LATIN CAPITAL LETTER A;Lu;0;L;;;;;N;;;;0061;\n"
         "0042;B;Xx;0;L;;;;;N;;;;0062;\n", "\\p{L}", "UnicodeData.txt, line 2"},
    };
    copy_file(dir, "PropertyValueAliases.txt");
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        write_file(dir, bad[i].file, bad[i].text);
        if (!bad[i].pattern)
            continue;
        snprintf(want, sizeof want, "malformed Unicode data file %s/%s", dir, bad[i].want);
        test_regex_refused(bad[i].pattern, want);
    }
    /* Good small files from the directory are used (not the cached real
     * tables), and the real ones come back when the variable goes. */
    write_file(dir, "ScriptExtensions.txt", "0342 ; Grek\n");
    write_file(dir, "CaseFolding.txt", "0041; C; 0061; # A\n");
    tb_err_t err;
    lex_dfa_t *d = lex_dfa_new("(?i)[k\\p{Greek}]", NULL, &err);
    if (!d)
        fail_msg("%s", err.msg);
    assert_true(dfa_match(d, (const uint8_t *)"\xcd\x82", 2));  /* U+0342 */
    assert_false(dfa_match(d, (const uint8_t *)"K", 1));        /* no K/k folding */
    assert_false(dfa_match(d, (const uint8_t *)"\xce\xb1", 2)); /* α: not in the file */
    lex_dfa_free(d);
    unsetenv("TOKBENCH_UNICODE_DIR");
    d = lex_dfa_new("(?i)[k\\p{Greek}]", NULL, &err);
    if (!d)
        fail_msg("%s", err.msg);
    assert_true(dfa_match(d, (const uint8_t *)"K", 1));
    assert_true(dfa_match(d, (const uint8_t *)"\xce\xb1", 2));
    lex_dfa_free(d);
    /* $TOKBENCH_UNICODE_DATA names UnicodeData.txt itself. */
    char ud[600];
    snprintf(ud, sizeof ud, "%s/ud.txt", dir);
    write_file(dir, "ud.txt", "0041;LATIN CAPITAL LETTER A;Lu;0;L;;;;;N;;;;0061;\n");
    setenv("TOKBENCH_UNICODE_DATA", ud, 1);
    for (int real = 0; real < 2; real++) {
        d = lex_dfa_new("\\p{Lu}", NULL, &err);
        if (!d)
            fail_msg("%s", err.msg);
        assert_true(dfa_match(d, (const uint8_t *)"A", 1));
        assert_int_equal(dfa_match(d, (const uint8_t *)"B", 1), real);
        lex_dfa_free(d);
        unsetenv("TOKBENCH_UNICODE_DATA");
    }
    static const char *const names[] = {"PropertyValueAliases.txt", "Scripts.txt",
                                        "ScriptExtensions.txt", "CaseFolding.txt",
                                        "UnicodeData.txt", "ud.txt"};
    test_rmdir(dir, names, sizeof names / sizeof *names);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(left_out_code_points_are_new_to_pcre2),
        cmocka_unit_test(bare_script_names_are_extensions),
        cmocka_unit_test(scripts_agree_with_pcre2),
        cmocka_unit_test(caseless_single_characters),
        cmocka_unit_test(caseless_classes_over_the_code_space),
        cmocka_unit_test(negated_classes_are_complements),
        cmocka_unit_test(random_caseless_patterns),
        cmocka_unit_test(masks_over_llama3),
        cmocka_unit_test(unknown_names_are_errors),
        cmocka_unit_test(data_file_errors_name_the_file),
    };
    test_rng = 0x2545f4914f6cdd1dull;
    return cmocka_run_group_tests(tests, setup, teardown);
}
