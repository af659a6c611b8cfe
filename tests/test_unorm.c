/* Tests of tok/unorm.c (NFC, NFD, NFKC, NFKD with the reference's Unicode
 * version): Unicode's own conformance file NormalizationTest.txt on every
 * line whose characters all exist in that version, every other code point
 * left alone, and byte-for-byte agreement with the reference normalizers of
 * Hugging Face `tokenizers` (run through node) on the Unicode and
 * multilingual corpora and on every code point in a few contexts. */
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

#include "../base/buf.h"
#include "../base/utf8.h"
#include "../tok/unorm.h"

#define UCD "/usr/share/unicode"

static const char *const form_names[4] = {"NFC", "NFD", "NFKC", "NFKD"};

/* Fails the test unless a Unicode data file is there (say what to install). */
static void need_ucd(const char *path)
{
    if (access(path, R_OK))
        fail_msg("%s is missing: install the unicode-data package (make "
                 "setup)", path);
}

/* "9.0" -> 900, so that versions compare as numbers. */
static int version_number(const char *v)
{
    int major = 0, minor = 0;
    sscanf(v, "%d.%d", &major, &minor);
    return major * 100 + minor;
}

/* Which code points are assigned in the tables' version (DerivedAge.txt):
 * one byte per code point, 1 when assigned then. */
static uint8_t *read_assigned(void)
{
    need_ucd(UCD "/DerivedAge.txt");
    FILE *f = fopen(UCD "/DerivedAge.txt", "r");
    assert_non_null(f);
    int v = version_number(tok_unorm_version());
    uint8_t *old = calloc(0x110000, 1);
    assert_non_null(old);
    char line[512];
    while (fgets(line, sizeof line, f)) {
        unsigned a, b;
        char age[16];
        if (sscanf(line, "%x..%x ; %15s", &a, &b, age) != 3) {
            if (sscanf(line, "%x ; %15s", &a, age) != 2)
                continue;
            b = a;
        }
        if (version_number(age) <= v)
            for (unsigned c = a; c <= b && c < 0x110000; c++)
                old[c] = 1;
    }
    fclose(f);
    return old;
}

/* Up to 12 code points of s[0..n) from byte `from` on, in hex. */
static char *hex(const uint8_t *s, size_t n, size_t from)
{
    static char out[3][160];
    static int k;
    char *o = out[k++ % 3];
    size_t w = 0, i = from;
    o[0] = 0;
    for (size_t m = 0; i < n && m < 12; m++) {
        uint32_t cp;
        size_t len = tb_utf8_decode(s + i, n - i, &cp);
        w += (size_t)snprintf(o + w, sizeof out[0] - w, "%s%04X",
                              i > from ? " " : "", len ? cp : s[i]);
        i += len ? len : 1;
    }
    if (i < n)
        snprintf(o + w, sizeof out[0] - w, " ...");
    return o;
}

/* form(s) must be want; returns 1 (after printing the first few, from the
 * first character that differs) if not. */
static int check(tok_unorm_form_t form, const tb_buf_t *s, const tb_buf_t *want,
                 const char *what, size_t *shown)
{
    tb_buf_t got = {0};
    tb_err_t err;
    if (tok_unorm(form, s->data, s->len, &got, &err))
        fail_msg("%s: %s", what, err.msg);
    int bad = got.len != want->len ||
              (got.len && memcmp(got.data, want->data, got.len));
    if (bad && (*shown)++ < 5) {
        size_t d = 0;
        while (d < got.len && d < want->len && got.data[d] == want->data[d])
            d++;
        while (d && d < got.len && (got.data[d] & 0xC0) == 0x80)
            d--; /* back to the start of that character */
        print_message("%s: %s(%s)\n  from byte %zu: %s\n  want:         %s\n",
                      what, form_names[form], hex(s->data, s->len, 0), d,
                      hex(got.data, got.len, d), hex(want->data, want->len, d));
    }
    tb_buf_free(&got);
    return bad;
}

/* One field of NormalizationTest.txt ("1E0A 0323") into UTF-8; returns 0
 * if a code point is not assigned in the tables' version. */
static int parse_field(const char *f, const uint8_t *old, tb_buf_t *out)
{
    out->len = 0;
    for (;;) {
        char *end;
        unsigned long cp = strtoul(f, &end, 16);
        if (end == f)
            return 1;
        if (cp >= 0x110000 || !old[cp])
            return 0;
        uint8_t u[4];
        size_t k = tb_utf8_encode((uint32_t)cp, u);
        assert_true(k > 0);
        assert_int_equal(tb_buf_put(out, u, k), 0);
        f = end;
    }
}

/* UAX #15's conformance invariants on NormalizationTest.txt (columns c1..c5):
 *   c2 == NFC(c1) == NFC(c2) == NFC(c3),   c4 == NFC(c4) == NFC(c5)
 *   c3 == NFD(c1) == NFD(c2) == NFD(c3),   c5 == NFD(c4) == NFD(c5)
 *   c4 == NFKC(c1..c5),                    c5 == NFKD(c1..c5)
 * on every line whose characters all exist in the tables' version; then
 * every such code point that Part 1 does not list is its own normalization,
 * and so is every code point the version does not have. */
static void normalization_test_conformance(void **state)
{
    (void)state;
    uint8_t *old = read_assigned();
    need_ucd(UCD "/NormalizationTest.txt.bz2");
    FILE *p = popen("bzcat " UCD "/NormalizationTest.txt.bz2", "r");
    assert_non_null(p);
    uint8_t *listed = calloc(0x110000, 1);
    assert_non_null(listed);
    char *line = NULL;
    size_t cap = 0, checked = 0, skipped = 0, bad = 0, shown = 0;
    int part1 = 0;
    tb_buf_t c[5] = {{0}};
    static const int nfc_of[5] = {1, 1, 1, 3, 3}, nfd_of[5] = {2, 2, 2, 4, 4};
    while (getline(&line, &cap, p) >= 0) {
        if (line[0] == '@') {
            part1 = !strncmp(line, "@Part1", 6);
            continue;
        }
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char *f = line;
        int ok = 1;
        for (int k = 0; k < 5; k++) {
            ok &= parse_field(f, old, &c[k]);
            f = strchr(f, ';');
            assert_non_null(f);
            f++;
        }
        if (part1) {
            unsigned long cp = strtoul(line, NULL, 16);
            listed[cp] = 1;
        }
        if (!ok) {
            skipped++;
            continue;
        }
        checked++;
        char what[64];
        snprintf(what, sizeof what, "NormalizationTest line %zu", checked + skipped);
        for (int k = 0; k < 5; k++) {
            bad += check(TOK_UNORM_NFC, &c[k], &c[nfc_of[k]], what, &shown);
            bad += check(TOK_UNORM_NFD, &c[k], &c[nfd_of[k]], what, &shown);
            bad += check(TOK_UNORM_NFKC, &c[k], &c[3], what, &shown);
            bad += check(TOK_UNORM_NFKD, &c[k], &c[4], what, &shown);
        }
    }
    int status = pclose(p);
    if (status != 0 || checked < 15000)
        fail_msg("bzcat " UCD "/NormalizationTest.txt.bz2 gave %zu usable "
                 "lines (status %d): is bzip2 installed?", checked, status);
    size_t identity = 0;
    for (uint32_t cp = 0x80; cp < 0x110000; cp++) {
        if ((cp >= 0xD800 && cp < 0xE000) || listed[cp])
            continue;
        uint8_t u[4];
        tb_buf_t s = {u, tb_utf8_encode(cp, u), 4};
        for (int form = 0; form < 4; form++)
            bad += check((tok_unorm_form_t)form, &s, &s, "unlisted code point",
                         &shown);
        identity++;
    }
    print_message("Unicode %s: %zu NormalizationTest lines checked, %zu with "
                  "younger characters skipped, %zu other code points left "
                  "alone, %zu failures\n", tok_unorm_version(), checked,
                  skipped, identity, bad);
    for (int k = 0; k < 5; k++)
        tb_buf_free(&c[k]);
    free(line);
    free(listed);
    free(old);
    assert_int_equal(bad, 0);
}

/* Invalid UTF-8 is refused with its byte offset, and out is left as it
 * was (here: holding "keep"). */
static void invalid_utf8_is_refused_with_its_offset(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        size_t off;
    } cases[] = {
        {"abc\xC3", 3}, {"e\xCC\x81\xFF", 3}, {"\xE2\x82", 0},
        {"a\xED\xA0\x80", 1}, {"\xC3\xA9 \xC0\xAF", 3}, {"xy\xF4\x90\x80\x80", 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (int form = 0; form < 4; form++) {
            tb_buf_t out = {0};
            tb_buf_put(&out, "keep", 4);
            tb_err_t err;
            int rc = tok_unorm((tok_unorm_form_t)form, (const uint8_t *)cases[i].s,
                               strlen(cases[i].s), &out, &err);
            assert_int_equal(rc, -1);
            char want[64];
            snprintf(want, sizeof want, "at byte %zu ", cases[i].off);
            if (!strstr(err.msg, want))
                fail_msg("case %zu: \"%s\" does not say \"%s\"", i, err.msg, want);
            assert_int_equal(out.len, 4);
            assert_memory_equal(out.data, "keep", 4);
            tb_buf_free(&out);
        }
}

/* Long runs of marks take the counting-sort path; the result must still be
 * a stable sort by class, and composition must skip the blocked marks. */
static void long_mark_runs_are_ordered_stably(void **state)
{
    (void)state;
    tb_buf_t s = {0}, want = {0}, got = {0};
    tb_err_t err;
    tb_buf_put(&s, "a", 1);
    for (int i = 0; i < 500; i++) /* acute (230), dot below (220) */
        tb_buf_put(&s, "\xCC\x81\xCC\xA3", 4);
    /* NFC: a + dot below composes to U+1EA1; no precomposed character
     * carries a dot below and an acute, so the acutes stay. */
    tb_buf_put(&want, "\xE1\xBA\xA1", 3);
    for (int i = 0; i < 499; i++)
        tb_buf_put(&want, "\xCC\xA3", 2);
    for (int i = 0; i < 500; i++)
        tb_buf_put(&want, "\xCC\x81", 2);
    assert_int_equal(tok_unorm(TOK_UNORM_NFC, s.data, s.len, &got, &err), 0);
    assert_int_equal(got.len, want.len);
    assert_memory_equal(got.data, want.data, want.len);
    tb_buf_free(&s);
    tb_buf_free(&want);
    tb_buf_free(&got);
}

/* Writes `lines` (valid UTF-8, no "\n") to a temporary file; returns its
 * name. */
static const char *write_lines(char **lines, size_t n)
{
    static char path[64];
    strcpy(path, "/tmp/tokbench-test-unorm-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    assert_non_null(f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s\n", lines[i]);
    assert_int_equal(fclose(f), 0);
    return path;
}

static void add_line(char ***lines, size_t *n, size_t *cap, const char *s, size_t len)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 1024;
        *lines = realloc(*lines, *cap * sizeof **lines);
        assert_non_null(*lines);
    }
    char *c = malloc(len + 1);
    assert_non_null(c);
    memcpy(c, s, len);
    c[len] = 0;
    (*lines)[(*n)++] = c;
}

/* Every `every`-th valid UTF-8 line of a corpus file; "\r" is dropped so
 * that the reference's line splitting cannot differ from ours. */
static void add_corpus(const char *path, size_t every, char ***lines,
                       size_t *n, size_t *cap)
{
    test_need_file(path);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *line = NULL;
    size_t lcap = 0, k = 0;
    ssize_t len;
    while ((len = getline(&line, &lcap, f)) >= 0) {
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        if (k++ % every || memchr(line, '\r', (size_t)len) ||
            tb_utf8_validate((const uint8_t *)line, (size_t)len) != (size_t)len)
            continue;
        add_line(lines, n, cap, line, (size_t)len);
    }
    free(line);
    fclose(f);
}

/* The reference's four normalizers over a file of lines: four output lines
 * (NFC, NFD, NFKC, NFKD) per input line. */
static const char ref_js[] =
    "const T=require(process.cwd()+'/scripts/ref/node_modules/@anush008/tokenizers');"
    "const fs=require('fs');"
    "const f=[T.nfcNormalizer(),T.nfdNormalizer(),T.nfkcNormalizer(),T.nfkdNormalizer()];"
    "const ls=fs.readFileSync(process.argv[1],'utf8').split('\\n');ls.pop();"
    "const o=[];for(const l of ls)for(const n of f)o.push(n.normalizeString(l));"
    "fs.writeSync(1,o.length?o.join('\\n')+'\\n':'');";

static void agrees_with_the_reference(void **state)
{
    (void)state;
    if (system("command -v node >/dev/null 2>&1"))
        fail_msg("node is missing: install nodejs (make setup)");
    test_need_file("scripts/ref/node_modules/@anush008/tokenizers/package.json");
    char **lines = NULL;
    size_t n = 0, cap = 0;
    add_corpus("data/cache/unicode/unicode.txt", 1, &lines, &n, &cap);
    add_corpus("data/cache/multi/multi.txt", 10, &lines, &n, &cap);
    /* Every scalar value of planes 0-2 and the variation selectors of plane
     * 14 in contexts that show its class (marks on either side), its
     * decomposition, and whether it composes with a base or a mark. */
    for (uint32_t cp = 0x80; cp < 0x30000 || (cp >= 0xE0000 && cp < 0xE01F0); cp++) {
        if (cp == 0x30000)
            cp = 0xE0000;
        if (cp >= 0xD800 && cp < 0xE000)
            continue;
        uint8_t x[4];
        size_t k = tb_utf8_encode(cp, x);
        char s[64];
        int w = snprintf(s, sizeof s,
                         "%.*s a%.*s\xCC\x81 %.*s\xCC\x81\xCC\x96 "
                         "\xE0\xA4\x95%.*s\xE0\xA4\xBC",
                         (int)k, x, (int)k, x, (int)k, x, (int)k, x);
        add_line(&lines, &n, &cap, s, (size_t)w);
    }
    const char *path = write_lines(lines, n);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "node -e \"$(cat <<'EOF'\n%s\nEOF\n)\" '%s'",
             ref_js, path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char *ref = NULL;
    size_t rcap = 0, i = 0, got_lines = 0, bad = 0, shown = 0;
    ssize_t len;
    int form = 0;
    while ((len = getline(&ref, &rcap, p)) >= 0 && i < n) {
        if (len && ref[len - 1] == '\n')
            ref[--len] = 0;
        tb_buf_t s = {(uint8_t *)lines[i], strlen(lines[i]), 0};
        tb_buf_t want = {(uint8_t *)ref, (size_t)len, 0};
        char what[64];
        snprintf(what, sizeof what, "reference line %zu", i + 1);
        bad += check((tok_unorm_form_t)form, &s, &want, what, &shown);
        got_lines++;
        if (++form == 4) {
            form = 0;
            i++;
        }
    }
    int status = pclose(p);
    unlink(path);
    free(ref);
    for (size_t j = 0; j < n; j++)
        free(lines[j]);
    free(lines);
    if (status != 0 || got_lines != 4 * n)
        fail_msg("the reference normalizers (node) gave %zu of %zu lines "
                 "(status %d)", got_lines, 4 * n, status);
    print_message("%zu lines in 4 forms compared with the reference, %zu "
                  "differ\n", n, bad);
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(normalization_test_conformance),
        cmocka_unit_test(invalid_utf8_is_refused_with_its_offset),
        cmocka_unit_test(long_mark_runs_are_ordered_stably),
        cmocka_unit_test(agrees_with_the_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
