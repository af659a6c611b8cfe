/*
 * fuzz_mask: differential.  The input drives a small random regex (atoms,
 * concatenation, alternation, repetition, case folding, Unicode classes),
 * a small random vocabulary over an alphabet chosen to meet them (ASCII,
 * é, Greek sigma, the Kelvin sign, NUL, 0xFF) and a prefix.  Every trie
 * layout's token mask after the prefix (on a fresh lazy DFA, then again on
 * the completed table) must equal the Thompson-NFA oracle's (tests/oracle.h),
 * and the oracle must agree with PCRE2 partial matching on every token that
 * leaves valid UTF-8.  Any difference aborts with the pattern, prefix and
 * token.  Seeds: fuzz/corpus/mask/ (random bytes: every input is valid).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/utf8.h"
#include "../lexer/deriv.h"
#include "../lexer/rec.h"
#include "../tests/oracle.h"
#include "../trie/trie.h"

typedef struct {
    const uint8_t *p;
    size_t n;
} input_t;

static unsigned take(input_t *in, unsigned n)
{
    if (!in->n)
        return 0;
    in->n--;
    return *in->p++ % n;
}

#define COUNT(a) (sizeof a / sizeof *a)

static void gen_regex(input_t *in, char *out, size_t cap, int depth)
{
    static const char *const atoms[] = {
        "a", "b", "k", " ", "ab", "[a-c]", "[^a]", ".", "\\d", "\\w", "\\s", "\\W",
        "é", "σ", "(?i:k)", "(?i:σ)", "(?i)é", "\\x{212a}", "[\\x{e0}-\\x{ff}]", "\\p{Greek}",
        "\\x00", "[^\\x00-\\x1f]", "0", "[0-9]", "\\n", "[ab]{2}",
    };
    static const char *const q[] = {"*", "+", "?", "{2}", "{1,3}", "{0,2}", "{2,}", "*?"};
    char a[1024], b[1024];
    switch (depth <= 0 ? 0 : take(in, 7)) {
    case 0:
        snprintf(out, cap, "%s", atoms[take(in, COUNT(atoms))]);
        return;
    case 1:
    case 2:
        gen_regex(in, a, sizeof a, depth - 1);
        gen_regex(in, b, sizeof b, depth - 1);
        snprintf(out, cap, "%s%s", a, b);
        return;
    case 3:
        gen_regex(in, a, sizeof a, depth - 1);
        gen_regex(in, b, sizeof b, depth - 1);
        snprintf(out, cap, "(%s|%s)", a, b);
        return;
    default:
        gen_regex(in, a, sizeof a, depth - 1);
        snprintf(out, cap, "(?:%s)%s", a, q[take(in, COUNT(q))]);
        return;
    }
}

/* Bytes the tokens are made of: single characters and the pieces of
 * multi-byte ones, so that tokens may split a character. */
static const char *const alphabet[] = {
    "a", "b", "c", "k", "K", " ", "0", "9", "\n", "\xc3\xa9", "\xc3", "\xa9",
    "\xcf\x83", "\xcf\x82", "\xce\xa3", "\xe2\x84\xaa", "\xe2\x84", "\xaa", "\0", "\xff",
};

#define MAX_KEYS 48
#define MAX_KEY 12

typedef struct {
    uint8_t s[MAX_KEYS][MAX_KEY];
    uint32_t len[MAX_KEYS];
    size_t n;
    int has_nul;
} vocab_t;

static size_t gen_bytes(input_t *in, uint8_t *out, size_t max_pieces)
{
    size_t n = 0, pieces = take(in, (unsigned)max_pieces + 1);
    for (size_t i = 0; i < pieces; i++) {
        unsigned k = take(in, COUNT(alphabet));
        size_t l = k == COUNT(alphabet) - 2 ? 1 : strlen(alphabet[k]); /* the NUL */
        if (n + l > MAX_KEY)
            break;
        memcpy(out + n, alphabet[k], l);
        n += l;
    }
    return n;
}

static void gen_vocab(input_t *in, vocab_t *v)
{
    size_t want = 1 + take(in, MAX_KEYS);
    v->n = 0;
    v->has_nul = 0;
    while (v->n < want && in->n) {
        uint8_t s[MAX_KEY];
        size_t l = gen_bytes(in, s, 4);
        int dup = !l;
        for (size_t i = 0; i < v->n && !dup; i++)
            dup = v->len[i] == l && !memcmp(v->s[i], s, l);
        if (dup)
            continue;
        memcpy(v->s[v->n], s, l);
        v->len[v->n++] = (uint32_t)l;
        v->has_nul |= memchr(s, 0, l) != NULL;
    }
}

static void differ(const char *what, const char *pattern, const uint8_t *prefix, size_t plen,
                   const uint8_t *tok, size_t tlen, int got, int want)
{
    fprintf(stderr, "fuzz_mask: %s differs for '%s' after", what, pattern);
    for (size_t i = 0; i < plen; i++)
        fprintf(stderr, " %02x", prefix[i]);
    fprintf(stderr, ", token");
    for (size_t i = 0; i < tlen; i++)
        fprintf(stderr, " %02x", tok[i]);
    fprintf(stderr, ": %d, the NFA oracle %d\n", got, want);
    abort();
}

/* Every layout's mask after prefix, against the oracle's `want`. */
static void check_layouts(const char *pattern, const trie_keys_t *k, const vocab_t *v,
                          const uint8_t *prefix, size_t plen, const tb_bitset_t *want)
{
    tb_err_t err;
    for (size_t l = 0; trie_layouts[l]; l++) {
        trie_t *t = trie_build(trie_layouts[l], k, &err);
        if (!t) {
            if (v->has_nul && !strcmp(trie_layouts[l]->name, "xcda"))
                continue; /* xcda refuses NUL bytes, as its format must */
            fprintf(stderr, "fuzz_mask: layout %s: %s\n", trie_layouts[l]->name, err.msg);
            abort();
        }
        lex_dfa_t *d = lex_dfa_new(pattern, NULL, &err);
        tb_bitset_t got;
        if (!d || tb_bitset_init(&got, trie_mask_bits(t)))
            abort();
        uint32_t ds = lex_dfa_feed(d, LEX_START, prefix, plen);
        for (int pass = 0; pass < 2; pass++) { /* lazy, then the table inline */
            lex_rec_t r;
            uint64_t nodes;
            if (lex_rec_init(&r, d, k->max_len, &err) ||
                lex_mask(t, &r, ds, &got, &nodes, &err)) {
                fprintf(stderr, "fuzz_mask: '%s': %s\n", pattern, err.msg);
                abort();
            }
            lex_rec_free(&r);
            for (size_t i = 0; i < k->n; i++) {
                uint32_t id = k->keys[i].id;
                if (tb_bitset_get(&got, id) != tb_bitset_get(want, id))
                    differ(trie_layouts[l]->name, pattern, prefix, plen, v->s[id], v->len[id],
                           tb_bitset_get(&got, id), tb_bitset_get(want, id));
            }
        }
        tb_bitset_free(&got);
        lex_dfa_free(d);
        trie_free(t);
    }
}

/* PCRE2 partial matching against the oracle, where prefix + token is
 * valid UTF-8. */
static void check_pcre(const char *pattern, const vocab_t *v, const uint8_t *prefix,
                       size_t plen, int live, const tb_bitset_t *want)
{
    char anchored[4200];
    snprintf(anchored, sizeof anchored, "(?:%s)\\z", pattern);
    int code;
    PCRE2_SIZE off;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)anchored, PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_ANCHORED, &code, &off, NULL);
    if (!re) {
        fprintf(stderr, "fuzz_mask: PCRE2 refuses '%s' (error %d at %zu)\n", anchored,
                code, (size_t)off);
        abort();
    }
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    uint8_t buf[64];
    /* PCRE2 finds no partial match in an empty subject: no prefix check then. */
    if (plen && tb_utf8_validate(prefix, plen) == plen &&
        pcre_viable(re, md, prefix, plen) != live)
        differ("PCRE2", pattern, prefix, plen, NULL, 0, !live, live);
    for (size_t i = 0; live && i < v->n; i++) {
        memcpy(buf, prefix, plen);
        memcpy(buf + plen, v->s[i], v->len[i]);
        size_t n = plen + v->len[i];
        if (tb_utf8_validate(buf, n) == n && pcre_viable(re, md, buf, n) != tb_bitset_get(want, i))
            differ("PCRE2", pattern, prefix, plen, v->s[i], v->len[i],
                   !tb_bitset_get(want, i), tb_bitset_get(want, i));
    }
    pcre2_match_data_free(md);
    pcre2_code_free(re);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input_t in = {data, size};
    char pattern[4096];
    gen_regex(&in, pattern, sizeof pattern, 4);
    uint8_t prefix[MAX_KEY];
    size_t plen = gen_bytes(&in, prefix, 3);
    static vocab_t v;
    gen_vocab(&in, &v);
    if (!v.n)
        return 0;
    const uint8_t *strs[MAX_KEYS];
    uint32_t ids[MAX_KEYS];
    for (size_t i = 0; i < v.n; i++)
        strs[i] = v.s[i], ids[i] = (uint32_t)i;
    tb_err_t err;
    nfa_t a;
    uint32_t start;
    trie_keys_t k;
    if (nfa_build(&a, pattern, &start, &err)) {
        fprintf(stderr, "fuzz_mask: '%s' refused: %s\n", pattern, err.msg);
        abort();
    }
    if (trie_keys_from_list(&k, strs, v.len, ids, v.n, &err))
        abort();
    nset_t cur;
    nfa_after(&a, start, prefix, plen, &cur);
    tb_bitset_t want;
    if (tb_bitset_init(&want, v.n + 1))
        abort();
    nfa_mask(&a, &cur, &k, &want);
    lex_dfa_t *d = lex_dfa_new(pattern, NULL, &err);
    if (!d)
        abort();
    int live = lex_dfa_feed(d, LEX_START, prefix, plen) != LEX_DEAD;
    lex_dfa_free(d);
    if (live != (cur.n != 0))
        differ("DFA liveness", pattern, prefix, plen, NULL, 0, live, cur.n != 0);
    if (live)
        check_layouts(pattern, &k, &v, prefix, plen, &want);
    check_pcre(pattern, &v, prefix, plen, live, &want);
    tb_bitset_free(&want);
    free(cur.v);
    trie_keys_free(&k);
    nfa_free(&a);
    return 0;
}
