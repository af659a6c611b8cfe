/* Tests of base/: utf-8 against libunistring, sha256 against sha256sum,
 * the hash maps against a brute-force search, the growable buffers and
 * reserved regions, the JSON scanner against jansson, a thread pool's jobs
 * against the items they were given. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <unistr.h>

#include "../base/buf.h"
#include "../base/file.h"
#include "../base/hash.h"
#include "../base/jsontext.h"
#include "../base/parallel.h"
#include "../base/sha256.h"
#include "../base/sort.h"
#include "../base/utf8.h"

/* Every code point: encode, then decode must give it back; surrogates and
 * values past U+10FFFF must be refused, as libunistring refuses them. */
static void utf8_round_trip_all_code_points(void **state)
{
    (void)state;
    for (uint32_t cp = 0; cp <= 0x110000; cp++) {
        uint8_t buf[4], ref[6];
        size_t n = tb_utf8_encode(cp, buf);
        int ref_n = u8_uctomb(ref, cp, sizeof ref);
        if (ref_n < 0) {
            assert_int_equal(n, 0);
            continue;
        }
        assert_int_equal(n, (size_t)ref_n);
        assert_memory_equal(buf, ref, n);
        uint32_t back;
        assert_int_equal(tb_utf8_decode(buf, n, &back), n);
        assert_int_equal(back, cp);
    }
}

/* Random byte strings: the offset of the first invalid sequence must agree
 * with libunistring's u8_check. */
static void utf8_validate_agrees_with_libunistring(void **state)
{
    (void)state;
    srand(7);
    uint8_t s[64];
    for (int round = 0; round < 200000; round++) {
        size_t n = (size_t)(rand() % 12);
        for (size_t i = 0; i < n; i++) {
            int r = rand() % 4;
            s[i] = r == 0 ? (uint8_t)(rand() % 0x80)
                 : r == 1 ? (uint8_t)(0x80 | rand() % 0x40)
                          : (uint8_t)(0xC0 + rand() % 0x40);
        }
        const uint8_t *bad = u8_check(s, n);
        size_t want = bad ? (size_t)(bad - s) : n;
        assert_int_equal(tb_utf8_validate(s, n), want);
    }
}

/* Token listings: text a reader can quote, every byte accounted for. */
static void utf8_escape_keeps_characters_and_names_bytes(void **state)
{
    (void)state;
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"plain", "plain"},
        {"a'b\\c", "a\\'b\\\\c"},
        {"\n\t\r\x01\x7f", "\\n\\t\\r\\x01\\x7f"},
        {"\xC3\xA9t\xC3\xA9 \xE4\xB8\xAD", "\xC3\xA9t\xC3\xA9 \xE4\xB8\xAD"}, /* été 中 */
        {"\xC3", "\\xc3"},                  /* a character cut short */
        {"\xC2\x85", "\\xc2\\x85"},        /* U+0085, a C1 control */
        {"\xED\xA0\x80", "\\xed\\xa0\\x80"}, /* a surrogate: not UTF-8 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[64];
        size_t n = tb_utf8_escape((const uint8_t *)cases[i].in, strlen(cases[i].in), out,
                                  sizeof out);
        assert_string_equal(out, cases[i].want);
        assert_int_equal(n, strlen(cases[i].want));
    }
    /* a short buffer ends before an escape that does not fit */
    char small[5];
    assert_int_equal(tb_utf8_escape((const uint8_t *)"ab\x01", 3, small, sizeof small), 2);
    assert_string_equal(small, "ab");
    const char *names[] = {"b", "c", "a"};
    qsort(names, 3, sizeof *names, tb_cmp_strs);
    assert_string_equal(names[0], "a");
    assert_string_equal(names[2], "c");
}

/* The digest of the file at path as coreutils' sha256sum gives it. */
static void sha256sum(const char *path, char theirs[65])
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "sha256sum %s", path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    theirs[0] = 0;
    assert_int_equal(fscanf(p, "%64s", theirs), 1);
    pclose(p);
}

/* Makes the temporary file named by the template path: 200,003 random
 * bytes from seed. */
static void random_file(char *path, unsigned seed)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    assert_non_null(f);
    srand(seed);
    for (int i = 0; i < 200003; i++)
        fputc(rand() & 0xFF, f);
    fclose(f);
}

static void sha256_agrees_with_sha256sum(void **state)
{
    (void)state;
    char path[] = "/tmp/tokbench-sha-XXXXXX";
    random_file(path, 11); /* not a multiple of the block size */
    char ours[65], theirs[65];
    tb_err_t err;
    assert_int_equal(tb_file_sha256(path, ours, &err), 0);
    sha256sum(path, theirs);
    remove(path);
    assert_string_equal(ours, theirs);
}

/* Every padding case (lengths around the 56- and 64-byte marks) against
 * sha256sum, and the digest the same however the bytes are fed: whole
 * blocks go to the compression straight from the input, the rest through
 * the block buffer (and SHA extensions, where the CPU has them). */
static void sha256_pads_and_feeds_alike(void **state)
{
    (void)state;
    static const size_t lens[] = {0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000};
    uint8_t data[1000];
    srand(5);
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)rand();
    for (size_t k = 0; k < sizeof lens / sizeof *lens; k++) {
        char path[] = "/tmp/tokbench-sha-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_true(write(fd, data, lens[k]) == (ssize_t)lens[k]);
        close(fd);
        char ours[65], theirs[65];
        sha256sum(path, theirs);
        remove(path);
        tb_sha256_hex(data, lens[k], ours);
        assert_string_equal(ours, theirs);
        for (size_t step = 1; step < 200; step = step * 3 + 1) {
            tb_sha256_t h;
            uint8_t d[32];
            tb_sha256_init(&h);
            for (size_t at = 0; at < lens[k]; at += step)
                tb_sha256_update(&h, data + at, lens[k] - at < step ? lens[k] - at : step);
            tb_sha256_final(&h, d);
            tb_hex(d, 32, ours);
            assert_string_equal(ours, theirs);
        }
    }
}

/* A mapping whose pages were given back, in part or whole, reads the
 * file's bytes again, and the NUL after them. */
static void released_map_reads_the_file_again(void **state)
{
    (void)state;
    char path[] = "/tmp/tokbench-map-XXXXXX";
    random_file(path, 13); /* not a multiple of the page size */
    uint8_t *want;
    const uint8_t *got;
    size_t want_len, len;
    tb_err_t err;
    assert_int_equal(tb_read_file(path, &want, &want_len, &err), 0);
    assert_int_equal(tb_map_file(path, &got, &len, &err), 0);
    remove(path);
    assert_int_equal(len, want_len);
    static const size_t cuts[][2] = {{5000, 150000}, {0, 4095}, {70000, 200003}, {0, 200003}};
    for (size_t c = 0; c < sizeof cuts / sizeof *cuts; c++) {
        tb_release_map(got, len, cuts[c][0], cuts[c][1]);
        assert_memory_equal(got, want, len);
        assert_int_equal(got[len], 0);
    }
    tb_unmap_file(got, len);
    free(want);
}

static void read_file_names_the_missing_file(void **state)
{
    (void)state;
    uint8_t *data;
    size_t len;
    tb_err_t err;
    assert_int_equal(tb_read_file("/nonexistent/x.json", &data, &len, &err), -1);
    assert_non_null(strstr(err.msg, "/nonexistent/x.json"));
}

static void strmap_matches_brute_force(void **state)
{
    (void)state;
    enum { N = 5000 };
    static uint8_t keys[N][8];
    static size_t lens[N];
    tb_strmap_t m;
    assert_int_equal(tb_strmap_init(&m, 4), 0); /* forces rehashing */
    srand(3);
    for (int i = 0; i < N; i++) {
        lens[i] = (size_t)(rand() % 5); /* short keys: many repeats, one empty */
        for (size_t j = 0; j < lens[i]; j++)
            keys[i][j] = (uint8_t)(rand() % 3);
        int first = -1;
        for (int k = 0; k < i && first < 0; k++)
            if (lens[k] == lens[i] && !memcmp(keys[k], keys[i], lens[i]))
                first = k;
        assert_int_equal(tb_strmap_put(&m, keys[i], lens[i], i), first >= 0 ? 1 : 0);
        assert_int_equal(tb_strmap_get(&m, keys[i], lens[i]), first >= 0 ? first : i);
    }
    uint8_t absent[8] = {9, 9, 9};
    assert_int_equal(tb_strmap_get(&m, absent, 3), -1);
    tb_strmap_free(&m);
}

struct items {
    const uint8_t *const *keys;
    const size_t *lens;
    const int32_t *vals;
    size_t first; /* the index of keys[0] in the whole list */
};

static int batch_item(const void *arg, size_t i, const uint8_t **key,
                      size_t *len, int32_t *val)
{
    const struct items *it = arg;
    *key = it->keys[i];
    *len = it->lens[i];
    *val = it->vals[i];
    return (it->first + i) % 3 != 0;
}

/* The batched lookups and puts answer as one at a time does, duplicates
 * and the empty key included, across the rehashes of a growing map. */
static void strmap_batches_match_single_calls(void **state)
{
    (void)state;
    enum { N = 20000 };
    static uint8_t bytes[N][6];
    static const uint8_t *keys[N];
    static size_t lens[N];
    static int32_t vals[N], got[N];
    tb_strmap_t one, many;
    assert_int_equal(tb_strmap_init(&one, 4), 0);
    assert_int_equal(tb_strmap_init(&many, 4), 0);
    srand(7);
    for (int i = 0; i < N; i++) {
        lens[i] = (size_t)(rand() % 7);
        for (size_t j = 0; j < lens[i]; j++)
            bytes[i][j] = (uint8_t)(rand() % 4);
        keys[i] = bytes[i];
        vals[i] = i;
    }
    /* in uneven slices, so that batches end anywhere; every third key is
     * left out of its batch and put alone after it, in both maps */
    long twice = 0;
    for (size_t at = 0, k = 1; at < N; at += k, k = k * 3 % 97 + 1) {
        size_t n = N - at < k ? N - at : k;
        struct items it = {keys + at, lens + at, vals + at, at};
        long r = tb_strmap_put_all(&many, n, batch_item, &it);
        assert_true(r >= 0);
        twice -= r;
        for (int pass = 0; pass < 2; pass++)
            for (size_t i = at; i < at + n; i++)
                if ((i % 3 == 0) == pass) {
                    int one_r = tb_strmap_put(&one, keys[i], lens[i], vals[i]);
                    assert_true(one_r >= 0);
                    twice += one_r;
                    if (pass)
                        twice -= tb_strmap_put(&many, keys[i], lens[i], vals[i]);
                }
    }
    assert_int_equal(twice, 0);
    assert_int_equal(one.count, many.count);
    tb_strmap_get_many(&many, N, keys, lens, got);
    for (int i = 0; i < N; i++)
        assert_int_equal(got[i], tb_strmap_get(&one, keys[i], lens[i]));
    static const uint8_t absent[] = {9, 9};
    const uint8_t *ak[] = {absent};
    size_t al[] = {2};
    tb_strmap_get_many(&many, 1, ak, al, got);
    assert_int_equal(got[0], -1);
    tb_strmap_free(&one);
    tb_strmap_free(&many);
}

/* tb_hash of a short string, read in place at every offset of a buffer
 * (its overlapping loads), is tb_hash_short of the string zero-padded
 * into two little-endian words, as wordcache.h hashes a word; and a
 * string one byte apart, or one byte longer, hashes otherwise. */
static void short_hash_agrees_with_padded_words(void **state)
{
    (void)state;
    uint8_t buf[64];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 37 + 11);
    for (size_t len = 0; len <= 16; len++)
        for (size_t at = 0; at + len <= sizeof buf; at++) {
            uint64_t w[2] = {0, 0};
            for (size_t i = 0; i < len; i++)
                w[i / 8] |= (uint64_t)buf[at + i] << (8 * (i % 8));
            uint64_t h = tb_hash(buf + at, len);
            assert_true(h == tb_hash_short(w[0], w[1], len));
            if (at + len < sizeof buf)
                assert_true(h != tb_hash(buf + at, len + 1));
            for (size_t i = 0; i < len; i++) {
                uint8_t other[16];
                memcpy(other, buf + at, len);
                other[i] ^= 0x40;
                assert_true(h != tb_hash(other, len));
            }
        }
}

static void u64map_keeps_first_value(void **state)
{
    (void)state;
    tb_u64map_t m;
    assert_int_equal(tb_u64map_init(&m, 1), 0);
    for (uint64_t k = 0; k < 100000; k++)
        assert_int_equal(tb_u64map_put(&m, k * 0x100000001ULL, k), 0);
    assert_int_equal(tb_u64map_put(&m, 5 * 0x100000001ULL, 77), 1);
    for (uint64_t k = 0; k < 100000; k++) {
        uint64_t v;
        assert_int_equal(tb_u64map_get(&m, k * 0x100000001ULL, &v), 1);
        assert_int_equal(v, k);
    }
    uint64_t v;
    assert_int_equal(tb_u64map_get(&m, 3, &v), 0);
    tb_u64map_free(&m);
}

static void vec_grows_and_keeps_contents(void **state)
{
    (void)state;
    TB_VEC(uint32_t) v = {0};
    for (uint32_t i = 0; i < 100000; i++)
        assert_int_equal(tb_vec_push(&v, i * 3), 0);
    for (uint32_t i = 0; i < 100000; i++)
        assert_int_equal(v.data[i], i * 3);
    free(v.data);
}

/* A reserved region given back is the next reservation of its size class,
 * with what was written in it (its pages kept), but for what lies past
 * the bytes a spare keeps backed (buf.c: 64 MiB), which read as zeros
 * again; another size class is another region. */
static void reserved_region_comes_back_with_its_pages(void **state)
{
    (void)state;
    size_t big = (size_t)100 << 20, far = (size_t)90 << 20;
    unsigned char *a = tb_reserve(big);
    assert_non_null(a);
    a[0] = 7;
    a[(size_t)1 << 20] = 8;
    a[far] = 9;
    tb_unreserve(a, big);
    unsigned char *other = tb_reserve((size_t)1 << 20);
    assert_non_null(other);
    assert_ptr_not_equal(other, a);
    unsigned char *b = tb_reserve(big - 4096); /* the same class */
    assert_ptr_equal(b, a);
    assert_int_equal(b[0], 7);
    assert_int_equal(b[(size_t)1 << 20], 8);
    assert_int_equal(b[far], 0);
    tb_unreserve(b, big - 4096);
    tb_unreserve(other, (size_t)1 << 20);
}

/* Number literals outside strings, as written: digits, quotes and
 * escaped quotes inside strings are no numbers. */
static void json_numbers_outside_strings(void **state)
{
    (void)state;
    const char *t = "{\"a1\": -12, \"b\": [1.5e3, 99999999999999999999], "
                    "\"c\": \"7 \\\" 8\", \"d\": 0}";
    static const struct {
        const char *text;
        int integer;
    } want[] = {{"-12", 1}, {"1.5e3", 0}, {"99999999999999999999", 1}, {"0", 1}};
    size_t at = 0, start, n = strlen(t), k = 0;
    int kind;
    while ((kind = tb_json_next_number(t, n, &at, &start)) >= 0) {
        assert_true(k < sizeof want / sizeof *want);
        assert_int_equal(at - start, strlen(want[k].text));
        assert_memory_equal(t + start, want[k].text, at - start);
        assert_int_equal(kind, want[k].integer);
        k++;
    }
    assert_int_equal(k, sizeof want / sizeof *want);
    assert_int_equal(at, n);
}

/* A random JSON string literal body from the characters that matter:
 * quotes, escapes, hex digits, controls, valid and broken UTF-8. */
static size_t random_literal(char *out, size_t room)
{
    static const char *const parts[] = {
        "a", "\\", "\\\"", "\\n", "\\/", "\\u00e9", "\\ud83d", "\\ude00",
        "\\u0000", "\\uD83D\\uDE00", "\\x", "\\u12", "\x01", "\x1f",
        "\xc3\xa9", "\xc3", "\xe2\x96\x81", "\xed\xa0\x80", "\xff", " ", "\"",
        "0", "F",
    };
    size_t n = 0, k = (size_t)(rand() % 6);
    out[n++] = '"';
    for (size_t i = 0; i < k; i++) {
        const char *p = parts[rand() % (int)(sizeof parts / sizeof *parts)];
        size_t len = strlen(p);
        if (n + len + 2 >= room)
            break;
        memcpy(out + n, p, len);
        n += len;
    }
    if (rand() % 8)
        out[n++] = '"';
    out[n] = 0;
    return n;
}

/* Strings: the scanner takes what jansson takes (with NUL allowed), and
 * reads the same bytes; it takes nothing jansson refuses. */
static void json_scanner_strings_agree_with_jansson(void **state)
{
    (void)state;
    srand(11);
    char lit[128], doc[160], out[160];
    unsigned taken = 0;
    for (int i = 0; i < 200000; i++) {
        size_t n = random_literal(lit, sizeof lit);
        snprintf(doc, sizeof doc, "[%s]", lit);
        json_error_t jerr;
        json_t *j = json_loadb(doc, strlen(doc), JSON_ALLOW_NUL, &jerr);
        tb_json_scan_t s = {.t = lit, .n = n, .out = out, .out_cap = sizeof out};
        const char *str;
        size_t len;
        int ok = tb_json_string(&s, &str, &len) == 0 && tb_json_peek(&s) < 0;
        if (ok != (j != NULL))
            fail_msg("%s: scanner %s, jansson %s", lit, ok ? "takes it" : "refuses it",
                     j ? "takes it" : jerr.text);
        if (j) {
            json_t *v = json_array_get(j, 0);
            assert_int_equal(len, json_string_length(v));
            assert_memory_equal(str, json_string_value(v), len);
            taken++;
        }
        json_decref(j);
    }
    assert_true(taken > 10000); /* the generator is not all refusals */
}

/* Numbers as jansson reads them; tb_json_uint only plain integers in range. */
static void json_scanner_numbers_agree_with_jansson(void **state)
{
    (void)state;
    static const char chars[] = "-0123456789.eE+";
    srand(13);
    char lit[16], doc[24];
    for (int i = 0; i < 100000; i++) {
        size_t n = 1 + (size_t)(rand() % 10);
        for (size_t k = 0; k < n; k++)
            lit[k] = chars[rand() % (int)(sizeof chars - 1)];
        lit[n] = 0;
        snprintf(doc, sizeof doc, "[%s]", lit);
        json_t *j = json_loadb(doc, strlen(doc), 0, NULL);
        json_t *v = json_array_get(j, 0);
        tb_json_scan_t s = {.t = lit, .n = n};
        double d;
        int ok = tb_json_double(&s, &d) == 0 && s.at == n;
        if (ok != (j != NULL))
            fail_msg("%s: scanner %s, jansson %s", lit, ok ? "takes it" : "refuses it",
                     j ? "takes it" : "refuses it");
        if (ok)
            assert_true(d == json_number_value(v));
        uint32_t u;
        s.at = 0;
        ok = tb_json_uint(&s, 1000000, &u) == 0 && s.at == n;
        int want = json_is_integer(v) && json_integer_value(v) >= 0 &&
                   json_integer_value(v) <= 1000000 && lit[0] != '-';
        assert_int_equal(ok, want);
        if (ok)
            assert_int_equal(u, json_integer_value(v));
        json_decref(j);
    }
}

/* Skipping a value stops right after it, whatever its strings hold. */
static void json_scanner_skips_whole_values(void **state)
{
    (void)state;
    static const char *const values[] = {
        "{\"a\": [1, {\"b\": \"]}\\\"\"}], \"c\": null}", "[[], {}, \"[\"]",
        "\"x\\\\\"", "-1.5e3", "true", "null",
    };
    for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
        char doc[128];
        snprintf(doc, sizeof doc, "  %s , 7", values[i]);
        tb_json_scan_t s = {.t = doc, .n = strlen(doc)};
        assert_int_equal(tb_json_skip(&s), 0);
        assert_int_equal(s.at, 2 + strlen(values[i]));
        assert_true(tb_json_eat(&s, ','));
    }
    tb_json_scan_t s = {.t = "[1, \"]", .n = 6};
    assert_int_equal(tb_json_skip(&s), -1);
}

/* true and false, after white space; anything else, cut short included,
 * is refused where it stands. */
static void json_scanner_reads_booleans(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int ok, v;
    } cases[] = {{" true", 1, 1}, {"\n\tfalse,", 1, 0}, {"tru", 0, 0},
                 {"fals", 0, 0}, {"null", 0, 0}, {"True", 0, 0}, {"", 0, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tb_json_scan_t s = {.t = cases[i].text, .n = strlen(cases[i].text)};
        int v = -1;
        assert_int_equal(tb_json_bool(&s, &v) == 0, cases[i].ok);
        if (cases[i].ok)
            assert_int_equal(v, cases[i].v);
    }
}

/* A pool job: item i writes its square plus the job's number into out[i];
 * items from `fails` on, every `every`th of them, fail. */
typedef struct {
    size_t n, fails, every;
    uint64_t job, *out;
} square_t;

static size_t square(void *ctx, tb_par_t *par, tb_err_t *err)
{
    square_t *q = ctx;
    for (size_t i; (i = atomic_fetch_add(&par->next, 1)) < q->n &&
                   i <= atomic_load(&par->bad);) {
        if (i >= q->fails && (i - q->fails) % q->every == 0) {
            tb_fail(err, "item %zu", i);
            tb_par_fail(par, i);
            return i;
        }
        q->out[i] = (uint64_t)i * i + q->job;
    }
    return SIZE_MAX;
}

/* Many jobs on one pool, of fewer items than threads and of many: each
 * item done once with its job's number; a job with failing items names
 * its lowest; the caller's thread alone (no pool) does the same. */
static void pool_runs_every_item_once_a_job(void **state)
{
    (void)state;
    tb_err_t err;
    uint64_t out[300];
    tb_pool_t *pool = tb_pool_new(3, &err);
    assert_non_null(pool);
    assert_true(tb_pool_threads(pool) >= 1 && tb_pool_threads(pool) <= 3);
    for (uint64_t job = 1; job <= 600; job++) {
        square_t q = {.n = job % 7 == 0 ? 300 : job % 5, .fails = SIZE_MAX, .every = 1,
                      .job = job, .out = out};
        memset(out, 0, sizeof out);
        tb_pool_t *p = job % 50 == 0 ? NULL : pool;
        assert_int_equal(tb_pool_run(p, q.n, square, &q, NULL, &err), 0);
        for (size_t i = 0; i < q.n; i++)
            assert_int_equal(out[i], (uint64_t)i * i + job);
    }
    for (size_t fails = 0; fails < 300; fails += 37) {
        square_t q = {.n = 300, .fails = fails, .every = 13, .job = 0, .out = out};
        size_t failed = 0;
        assert_int_equal(tb_pool_run(pool, q.n, square, &q, &failed, &err), -1);
        assert_int_equal(failed, fails);
        char want[32];
        snprintf(want, sizeof want, "item %zu", fails);
        assert_string_equal(err.msg, want);
    }
    tb_pool_free(pool);
    tb_pool_free(NULL);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* tb_sort_u64 orders as qsort does: short arrays (insertion), long ones
 * (the radix passes) whose keys share bytes (skipped) or differ in all,
 * with repeats, already sorted and reversed. */
static void sort_agrees_with_qsort(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 2, 47, 48, 49, 1000, 4099};
    uint64_t *a = malloc(4099 * sizeof *a), *b = malloc(4099 * sizeof *b),
             *tmp = malloc(4099 * sizeof *tmp);
    assert_true(a && b && tmp);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
        for (int shape = 0; shape < 5; shape++) {
            size_t n = sizes[z];
            for (size_t i = 0; i < n; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                uint64_t v = shape == 0 ? x
                           : shape == 1 ? (x & 0xFFFF) << 32 | 7 /* shared bytes */
                           : shape == 2 ? x % 5                  /* repeats */
                           : shape == 3 ? i : n - i;             /* sorted, reversed */
                a[i] = b[i] = v;
            }
            tb_sort_u64(a, tmp, n);
            qsort(b, n, sizeof *b, cmp_u64);
            if (n && memcmp(a, b, n * sizeof *a))
                fail_msg("%zu keys of shape %d sorted differently", n, shape);
        }
    free(a);
    free(b);
    free(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(utf8_round_trip_all_code_points),
        cmocka_unit_test(utf8_validate_agrees_with_libunistring),
        cmocka_unit_test(utf8_escape_keeps_characters_and_names_bytes),
        cmocka_unit_test(sha256_agrees_with_sha256sum),
        cmocka_unit_test(sha256_pads_and_feeds_alike),
        cmocka_unit_test(released_map_reads_the_file_again),
        cmocka_unit_test(read_file_names_the_missing_file),
        cmocka_unit_test(strmap_matches_brute_force),
        cmocka_unit_test(strmap_batches_match_single_calls),
        cmocka_unit_test(short_hash_agrees_with_padded_words),
        cmocka_unit_test(u64map_keeps_first_value),
        cmocka_unit_test(vec_grows_and_keeps_contents),
        cmocka_unit_test(reserved_region_comes_back_with_its_pages),
        cmocka_unit_test(sort_agrees_with_qsort),
        cmocka_unit_test(json_numbers_outside_strings),
        cmocka_unit_test(json_scanner_strings_agree_with_jansson),
        cmocka_unit_test(json_scanner_numbers_agree_with_jansson),
        cmocka_unit_test(json_scanner_skips_whole_values),
        cmocka_unit_test(json_scanner_reads_booleans),
        cmocka_unit_test(pool_runs_every_item_once_a_job),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
