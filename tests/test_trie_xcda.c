/* Tests of trie/xcda's charsmap builder against tok/charsmap, the one
 * reader of the format (the one the SentencePiece normalizer uses):
 * building blobs and reading them back, reading the real charsmap of the
 * manifest's spm-unigram model (nmt_nfkc, as spm_train wrote it) and
 * rebuilding it rule for rule, and the reader refusing corrupt blobs
 * without reading out of bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../base/file.h"
#include "../tok/charsmap.h"
#include "../trie/xcda.h"
#include "support.h"

static uint64_t rng_state = 88172645463325252ull;

static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

#define RULE(f, t) {(const uint8_t *)(f), sizeof(f) - 1, (const uint8_t *)(t), sizeof(t) - 1}

static const trie_charsmap_rule_t small_rules[] = {
    RULE("A", "a"),
    RULE("AB", "ab!"),
    RULE("ABC", ""),
    RULE("\xef\xbc\xa1", "A"), /* fullwidth A */
    RULE("\xef\xac\x81", "fi"), /* the fi ligature */
    RULE("\xff\x01", "x"),
};

static void build_small(tb_buf_t *blob)
{
    tb_err_t err;
    if (trie_charsmap_build(small_rules, sizeof small_rules / sizeof *small_rules,
                            blob, &err))
        fail_msg("%s", err.msg);
}

/* The reader's longest match of s: its length, and its replacement in
 * *to / *to_len (left alone if there is none). */
static size_t match(const tok_charsmap_t *cm, const uint8_t *s, size_t n,
                    const uint8_t **to, size_t *to_len)
{
    uint32_t value;
    size_t len = tok_charsmap_longest(cm, s, n, &value);
    if (len)
        *to = tok_charsmap_string(cm, value, to_len);
    return len;
}

/* Longest match of s, as "replacement" or NULL, and its length in *len. */
static const char *longest(const tok_charsmap_t *cm, const char *s, size_t n,
                           size_t *len, char *buf)
{
    const uint8_t *to;
    size_t to_len;
    *len = match(cm, (const uint8_t *)s, n, &to, &to_len);
    if (!*len)
        return NULL;
    memcpy(buf, to, to_len);
    buf[to_len] = 0;
    return buf;
}

static void open_or_fail(tok_charsmap_t *cm, const uint8_t *blob, size_t len)
{
    tb_err_t err;
    if (tok_charsmap_open(cm, blob, len, &err))
        fail_msg("tok/charsmap refuses the blob: %s", err.msg);
}

static void built_blob_reads_back(void **state)
{
    (void)state;
    tb_buf_t blob = {0};
    build_small(&blob);
    /* layout: the size field covers whole units, the pool ends in NUL */
    uint32_t size = blob.data[0] | blob.data[1] << 8 | blob.data[2] << 16 |
                    (uint32_t)blob.data[3] << 24;
    assert_int_equal(size % 4, 0);
    assert_true(size + 4 < blob.len);
    assert_int_equal(blob.data[blob.len - 1], 0);
    tok_charsmap_t x;
    open_or_fail(&x, blob.data, blob.len);
    char buf[64];
    size_t len;
    assert_string_equal(longest(&x, "ABCD", 4, &len, buf), "");
    assert_int_equal(len, 3);
    assert_string_equal(longest(&x, "ABX", 3, &len, buf), "ab!");
    assert_int_equal(len, 2);
    assert_string_equal(longest(&x, "Az", 2, &len, buf), "a");
    assert_int_equal(len, 1);
    assert_null(longest(&x, "B", 1, &len, buf));
    assert_int_equal(len, 0);
    assert_null(longest(&x, "", 0, &len, buf));
    assert_string_equal(longest(&x, "\xef\xbc\xa1!", 4, &len, buf), "A");
    assert_int_equal(len, 3);
    assert_null(longest(&x, "\xef\xbc", 2, &len, buf));
    assert_string_equal(longest(&x, "\xff\x01", 2, &len, buf), "x");
    assert_null(longest(&x, "\0A", 2, &len, buf));
    tb_buf_free(&blob);
}

/* No rules: the empty blob, which the reader takes as the empty map. */
static void no_rules_build_the_empty_map(void **state)
{
    (void)state;
    tb_buf_t blob = {0};
    tb_err_t err;
    assert_int_equal(trie_charsmap_build(small_rules, 0, &blob, &err), 0);
    assert_int_equal(blob.len, 0);
    tok_charsmap_t x;
    open_or_fail(&x, (const uint8_t *)"", 0);
    char buf[64];
    size_t len;
    assert_null(longest(&x, "A", 1, &len, buf));
    assert_int_equal(len, 0);
}

static void bad_rules_are_refused(void **state)
{
    (void)state;
    tb_buf_t blob = {0};
    tb_err_t err;
    trie_charsmap_rule_t r[] = {RULE("a", "b"), RULE("c\0d", "e"), RULE("a", "z")};
    assert_int_equal(trie_charsmap_build(r + 1, 1, &blob, &err), -1);
    assert_string_equal(err.msg, "charsmap: charsmap rule 0: its key has a NUL "
                        "byte at offset 1");
    assert_int_equal(trie_charsmap_build(r, 3, &blob, &err), -1);
    r[1] = (trie_charsmap_rule_t)RULE("x", "y\0");
    assert_int_equal(trie_charsmap_build(r, 2, &blob, &err), -1);
    assert_non_null(strstr(err.msg, "its replacement has a NUL byte at offset 1"));
    r[1] = (trie_charsmap_rule_t)RULE("", "y");
    assert_int_equal(trie_charsmap_build(r, 2, &blob, &err), -1);
    assert_non_null(strstr(err.msg, "token id 1 has no bytes"));
    r[1] = (trie_charsmap_rule_t)RULE("q", "y");
    assert_int_equal(trie_charsmap_build(r, 3, &blob, &err), -1);
    assert_non_null(strstr(err.msg, "token ids 0 and 2 have the same 1 bytes"));
    assert_int_equal(blob.len, 0);
    tb_buf_free(&blob);
}

/* ---- corrupt blobs ------------------------------------------------------ */

static uint32_t unit_at(const tb_buf_t *blob, size_t i)
{
    const uint8_t *p = blob->data + 4 + 4 * i;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

/* The first unit with has_leaf among the units of blob. */
static size_t first_leaf_owner(const tb_buf_t *blob)
{
    for (size_t i = 1; 4 + 4 * i + 4 <= blob->len; i++) {
        uint32_t u = unit_at(blob, i);
        if (!(u & TOK_CM_LEAF_BIT) && tok_cm_has_leaf(u))
            return i;
    }
    fail_msg("no unit with a value");
    return 0;
}

static void corrupt_blobs_are_refused(void **state)
{
    (void)state;
    tb_buf_t blob = {0};
    build_small(&blob);
    uint8_t *b = malloc(blob.len);
    test_charsmap_refused(blob.data, 3, "too short for the 4-byte size at byte 0");
    memcpy(b, blob.data, blob.len);
    b[1] = 0x40; /* size field 16384 + the real low byte */
    test_charsmap_refused(b, blob.len, "runs past the end");
    memcpy(b, blob.data, blob.len);
    b[0] |= 2;
    test_charsmap_refused(b, blob.len, "not a positive multiple of 4");
    /* an offset that sends a value unit past the end */
    memcpy(b, blob.data, blob.len);
    size_t at = 4 + 4 * first_leaf_owner(&blob);
    uint32_t u;
    memcpy(&u, b + at, 4);
    u = (u & 0x3FF) | (0x1FFFFFu << 10);
    memcpy(b + at, &u, 4);
    test_charsmap_refused(b, blob.len, "has its children offset at unit");
    test_charsmap_refused(b, blob.len, "past the");
    /* the pool without its last NUL: the last replacement is unterminated */
    test_charsmap_refused(blob.data, blob.len - 1, "does not end with a NUL");
    test_charsmap_refused(blob.data, blob.len - 1, "unterminated");
    /* an empty pool: every value is out of range */
    uint32_t size;
    memcpy(&size, blob.data, 4);
    test_charsmap_refused(blob.data, 4 + size, "empty string pool");
    /* a value pointing past the pool (bit 31 kept: still a leaf unit) */
    memcpy(b, blob.data, blob.len);
    size_t owner = first_leaf_owner(&blob);
    size_t leaf = owner ^ tok_cm_offset(unit_at(&blob, owner));
    uint32_t pool_len = (uint32_t)(blob.len - 4 - size);
    u = TOK_CM_LEAF_BIT | pool_len;
    memcpy(b + 4 + 4 * leaf, &u, 4);
    test_charsmap_refused(b, blob.len, "points at pool offset");
    test_charsmap_refused(b, blob.len, "past the");
    /* the value unit without bit 31: no leaf */
    memcpy(b, blob.data, blob.len);
    u = unit_at(&blob, leaf) & ~TOK_CM_LEAF_BIT;
    memcpy(b + 4 + 4 * leaf, &u, 4);
    test_charsmap_refused(b, blob.len, "which is not a leaf unit");
    free(b);
    tb_buf_free(&blob);
}

/* A node reached from the root with neither children nor a value (here the
 * has-leaf bit cleared on the one key's node) is refused, naming its byte;
 * the bounded opener (a compiled file's, whose hash vouches for its bytes)
 * lets it through, and the key is then simply not there. */
static void dangling_nodes_are_refused(void **state)
{
    (void)state;
    static const trie_charsmap_rule_t one[] = {RULE("A", "a")};
    tb_buf_t blob = {0};
    tb_err_t err;
    if (trie_charsmap_build(one, 1, &blob, &err))
        fail_msg("%s", err.msg);
    tok_charsmap_t x;
    open_or_fail(&x, blob.data, blob.len);
    size_t owner = first_leaf_owner(&blob);
    blob.data[4 + 4 * owner + 1] &= (uint8_t)~1u; /* bit 8: has-leaf */
    char want[96];
    snprintf(want, sizeof want, "unit %zu (byte %zu) is reached from the root "
             "but has neither children nor a value", owner, 4 + 4 * owner);
    test_charsmap_refused(blob.data, blob.len, want);
    assert_int_equal(tok_charsmap_open_bounded(&x, blob.data, blob.len, &err), 0);
    uint32_t value;
    assert_int_equal(tok_charsmap_longest(&x, (const uint8_t *)"A", 1, &value), 0);
    tb_buf_free(&blob);
}

/* Random damage: whatever the bounded opener lets through (a superset of
 * what tok_charsmap_open does) must then answer without reading outside
 * the blob (the sanitizer build checks that). */
static void damaged_blobs_never_crash(void **state)
{
    (void)state;
    tb_buf_t blob = {0};
    build_small(&blob);
    size_t opened = 0;
    for (int round = 0; round < 5000; round++) {
        uint8_t *b = malloc(blob.len);
        memcpy(b, blob.data, blob.len);
        for (uint32_t flips = 1 + rnd(4); flips; flips--)
            b[4 + rnd((uint32_t)blob.len - 4)] ^= (uint8_t)(1u << rnd(8));
        size_t len = blob.len - rnd(3);
        tok_charsmap_t x;
        tb_err_t err;
        if (tok_charsmap_open_bounded(&x, b, len, &err) == 0) {
            opened++;
            for (int q = 0; q < 50; q++) {
                uint8_t s[8];
                for (int i = 0; i < 8; i++)
                    s[i] = rnd(2) ? (uint8_t)"ABC\xef\xbc\xa1\xff"[rnd(7)] : (uint8_t)rnd(256);
                /* both walks: the normalizers use the longest and the
                 * shortest match; a replacement ends with its NUL inside
                 * the pool */
                for (int first = 0; first < 2; first++) {
                    uint32_t value;
                    size_t n = first ? tok_charsmap_shortest(&x, s, 8, &value)
                                     : tok_charsmap_longest(&x, s, 8, &value);
                    assert_true(n <= 8);
                    if (!n)
                        continue;
                    assert_true(value < x.pool_len);
                    size_t to_len;
                    const uint8_t *to = tok_charsmap_string(&x, value, &to_len);
                    assert_true(to >= x.pool && to + to_len < x.pool + x.pool_len);
                    assert_int_equal(to[to_len], 0);
                }
            }
        } else {
            assert_true(strlen(err.msg) > 0);
        }
        free(b);
    }
    assert_true(opened > 0); /* flips in unused units keep some blobs valid */
    tb_buf_free(&blob);
}

/* ---- the real charsmap -------------------------------------------------- */

static int varint(const uint8_t *b, size_t n, size_t *at, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; *at < n && shift < 64; shift += 7) {
        uint8_t c = b[(*at)++];
        *v |= (uint64_t)(c & 0x7F) << shift;
        if (!(c & 0x80))
            return 0;
    }
    return -1;
}

/* The length-delimited field `want` of a protobuf message, or -1. */
static int pb_field(const uint8_t *b, size_t n, uint64_t want,
                    const uint8_t **out, size_t *out_len)
{
    size_t at = 0;
    uint64_t tag, v;
    while (at < n) {
        if (varint(b, n, &at, &tag))
            return -1;
        switch (tag & 7) {
        case 0: if (varint(b, n, &at, &v)) return -1; break;
        case 1: at += 8; break;
        case 5: at += 4; break;
        case 2:
            if (varint(b, n, &at, &v) || v > n - at)
                return -1;
            if (tag >> 3 == want) {
                *out = b + at;
                *out_len = (size_t)v;
                return 0;
            }
            at += (size_t)v;
            break;
        default: return -1;
        }
    }
    return -1;
}

/* ModelProto.normalizer_spec (3) . precompiled_charsmap (2) */
static void read_real_charsmap(uint8_t **file, const uint8_t **blob, size_t *len)
{
    const char *path = "data/cache/spm-unigram/spm-unigram.model";
    size_t n, spec_len;
    tb_err_t err;
    if (tb_read_file(path, file, &n, &err))
        fail_msg("%s (run 'make data')", err.msg);
    const uint8_t *spec;
    assert_int_equal(pb_field(*file, n, 3, &spec, &spec_len), 0);
    assert_int_equal(pb_field(spec, spec_len, 2, blob, len), 0);
}

typedef struct {
    trie_charsmap_rule_t *r;
    size_t n, cap;
} rules_t;

/* Every key of an opened charsmap with its replacement, depth first (a
 * subtrie that darts-clone shares is listed under each of its parents). */
static void collect_rules(const tok_charsmap_t *x, uint32_t node, uint8_t *path,
                          uint32_t depth, rules_t *out)
{
    uint32_t u = tok_cm_unit(x, node);
    uint32_t base = node ^ tok_cm_offset(u);
    if (node && tok_cm_has_leaf(u)) {
        if (out->n == out->cap) {
            out->cap = out->cap ? 2 * out->cap : 1024;
            out->r = realloc(out->r, out->cap * sizeof *out->r);
        }
        uint8_t *from = malloc(depth);
        memcpy(from, path, depth);
        size_t to_len;
        const uint8_t *to = tok_charsmap_string(
            x, tok_cm_value(tok_cm_unit(x, base)), &to_len);
        out->r[out->n++] = (trie_charsmap_rule_t){
            .from = from, .from_len = depth, .to = to,
            .to_len = (uint32_t)to_len};
    }
    for (uint32_t c = 1; c < 256; c++) {
        uint32_t p = base ^ c;
        if (p < x->n_units && tok_cm_label(tok_cm_unit(x, p)) == c) {
            path[depth] = (uint8_t)c;
            collect_rules(x, p, path, depth + 1, out);
        }
    }
}

static void same_answer(const tok_charsmap_t *a, const tok_charsmap_t *b,
                        const uint8_t *s, size_t n)
{
    const uint8_t *ta, *tb;
    size_t la = 0, lb = 0;
    size_t na = match(a, s, n, &ta, &la);
    size_t nb = match(b, s, n, &tb, &lb);
    assert_int_equal(na, nb);
    if (na) {
        assert_int_equal(la, lb);
        assert_memory_equal(ta, tb, la);
    }
}

/* The reader's answer for s is what the rules say: the longest `from` that
 * prefixes s, and its `to` (keys are unique, so there is one). */
static void rules_agree(const tok_charsmap_t *cm, const trie_charsmap_rule_t *r,
                        size_t nrules, const uint8_t *s, size_t n)
{
    const trie_charsmap_rule_t *best = NULL;
    for (size_t i = 0; i < nrules; i++)
        if (r[i].from_len <= n && !memcmp(r[i].from, s, r[i].from_len) &&
            (!best || r[i].from_len > best->from_len))
            best = &r[i];
    const uint8_t *to;
    size_t to_len = 0, got = match(cm, s, n, &to, &to_len);
    assert_int_equal(got, best ? best->from_len : 0);
    if (best) {
        assert_int_equal(to_len, best->to_len);
        assert_memory_equal(to, best->to, to_len);
    }
}

static void tok_charsmap_reads_what_we_build(void **state)
{
    (void)state;
    tb_buf_t blob = {0};
    build_small(&blob);
    tok_charsmap_t cm;
    open_or_fail(&cm, blob.data, blob.len);
    const size_t nrules = sizeof small_rules / sizeof *small_rules;
    const char *probes[] = {"ABCD", "ABX", "Az", "B", "", "\xef\xbc\xa1!",
                            "\xef\xbc", "\xff\x01", "\xef\xac\x81"};
    for (size_t i = 0; i < sizeof probes / sizeof *probes; i++)
        rules_agree(&cm, small_rules, nrules, (const uint8_t *)probes[i],
                    strlen(probes[i]));
    for (int q = 0; q < 2000; q++) {
        uint8_t s[6];
        for (int i = 0; i < 6; i++)
            s[i] = rnd(3) ? (uint8_t)"ABC\xef\xbc\xa1\xac\x81\xff\x01"[rnd(10)]
                          : (uint8_t)rnd(256);
        rules_agree(&cm, small_rules, nrules, s, 1 + rnd(6));
    }
    tb_buf_free(&blob);
}

static void real_charsmap_reads_and_rebuilds(void **state)
{
    (void)state;
    uint8_t *file;
    const uint8_t *blob;
    size_t len;
    read_real_charsmap(&file, &blob, &len);
    tok_charsmap_t real, mine;
    tb_err_t err;
    open_or_fail(&real, blob, len);
    char buf[64];
    size_t n;
    assert_string_equal(longest(&real, "\xef\xbc\xa1", 3, &n, buf), "A");
    assert_string_equal(longest(&real, "\xef\xac\x81x", 4, &n, buf), "fi");
    assert_int_equal(n, 3);
    assert_null(longest(&real, "a", 1, &n, buf)); /* ASCII letters stay */
    rules_t rules = {0};
    uint8_t path[256];
    collect_rules(&real, 0, path, 0, &rules);
    assert_true(rules.n > 1000);
    tb_buf_t out = {0};
    if (trie_charsmap_build(rules.r, rules.n, &out, &err))
        fail_msg("%s", err.msg);
    open_or_fail(&mine, out.data, out.len);
    print_message("nmt_nfkc charsmap: %zu rules; spm_train's blob %zu bytes, "
                  "ours %zu bytes\n", rules.n, len, out.len);
    for (size_t i = 0; i < rules.n; i++) {
        same_answer(&real, &mine, rules.r[i].from, rules.r[i].from_len);
        /* rule for rule: the whole key matches, with its replacement (a
         * longer key would be another rule, and keys are unique) */
        const uint8_t *to;
        size_t to_len = 0;
        assert_int_equal(match(&mine, rules.r[i].from, rules.r[i].from_len,
                               &to, &to_len), rules.r[i].from_len);
        assert_int_equal(to_len, rules.r[i].to_len);
        assert_memory_equal(to, rules.r[i].to, to_len);
        uint8_t s[300];
        size_t k = rules.r[i].from_len;
        memcpy(s, rules.r[i].from, k);
        s[k] = (uint8_t)rnd(256);
        same_answer(&real, &mine, s, k + 1);
        s[rnd((uint32_t)k)] ^= (uint8_t)(1 + rnd(255));
        same_answer(&real, &mine, s, k + 1);
    }
    for (size_t i = 0; i < rules.n; i++)
        free((void *)rules.r[i].from);
    free(rules.r);
    tb_buf_free(&out);
    free(file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(built_blob_reads_back),
        cmocka_unit_test(no_rules_build_the_empty_map),
        cmocka_unit_test(bad_rules_are_refused),
        cmocka_unit_test(corrupt_blobs_are_refused),
        cmocka_unit_test(dangling_nodes_are_refused),
        cmocka_unit_test(damaged_blobs_never_crash),
        cmocka_unit_test(tok_charsmap_reads_what_we_build),
        cmocka_unit_test(real_charsmap_reads_and_rebuilds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
