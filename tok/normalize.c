/*
 * normalize: the normalizer steps of the encoding pipeline (Unicode
 * normalization forms, lowercasing, prepend, replace, strip, and the
 * SentencePiece charsmap through charsmap.c, BERT's normalizer with
 * bert.c), run in order over a span of text.  Semantics follow Hugging
 * Face `tokenizers`' normalizers: e.g. Prepend leaves an empty string
 * empty, Strip and Lowercase work on Unicode characters, not bytes.
 */
#include <stdlib.h>
#include <string.h>

#include <unicase.h>
#include <unictype.h>

#include "../base/utf8.h"
#include "tok_internal.h"
#include "unorm.h"

static int all_ascii(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] >= 0x80)
            return 0;
    return 1;
}

/* NFC, NFD, NFKC or NFKD through unorm.c, whose Unicode version is the
 * reference's (libunistring's newer tables compose and reorder characters
 * that the reference leaves alone); ASCII is left alone by all four. */
static int unicode_form(tok_norm_kind_t kind, const uint8_t *s, size_t n,
                        tb_buf_t *out, tb_err_t *err)
{
    if (all_ascii(s, n))
        return tb_buf_put(out, s, n) ? tb_fail(err, "out of memory") : 0;
    tok_unorm_form_t nf = kind == TOK_NORM_NFC    ? TOK_UNORM_NFC
                          : kind == TOK_NORM_NFD  ? TOK_UNORM_NFD
                          : kind == TOK_NORM_NFKC ? TOK_UNORM_NFKC
                                                  : TOK_UNORM_NFKD;
    return tok_unorm(nf, s, n, out, err);
}

/* Lowercases character by character, as Rust's char::to_lowercase does
 * (full mappings such as U+0130 -> "i\u0307", no final-sigma context).
 * U+0130 is the one character whose full lowercase mapping is not its
 * simple one (SpecialCasing.txt's unconditional entries; checked against
 * u8_tolower on every code point), so the others take uc_tolower, without
 * u8_tolower's setup per character. */
static int lowercase(const uint8_t *s, size_t n, tb_buf_t *out, tb_err_t *err)
{
    uint8_t small[64];
    for (size_t i = 0; i < n;) {
        if (s[i] < 0x80) {
            uint8_t ch = s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i];
            if (tb_buf_putc(out, ch))
                return tb_fail(err, "out of memory");
            i++;
            continue;
        }
        uint32_t cp;
        size_t k = tb_utf8_decode(s + i, n - i, &cp);
        if (!k)
            return tb_fail(err, "normalizer: invalid UTF-8 at byte %zu of "
                                "the text", i);
        if (cp != 0x130) {
            if (tb_buf_reserve(out, 4))
                return tb_fail(err, "out of memory");
            out->len += tb_utf8_encode(uc_tolower(cp), out->data + out->len);
            i += k;
            continue;
        }
        size_t rlen = sizeof small;
        uint8_t *r = u8_tolower(s + i, k, NULL, NULL, small, &rlen);
        if (!r)
            return tb_fail(err, "normalizer: lowercasing failed at byte %zu", i);
        int bad = tb_buf_put(out, r, rlen);
        if (r != small)
            free(r);
        if (bad)
            return tb_fail(err, "out of memory");
        i += k;
    }
    return 0;
}

/* Replace of one byte (SentencePiece-style files' " " -> U+2581) by a
 * loop over blocks, each with room reserved for its worst case, not a
 * memmem and two copies per hit: a sixth of Mistral's text's bytes are
 * spaces, and that took 14 instructions a byte. */
static int replace_byte(const tok_norm_t *nm, const uint8_t *s, size_t n,
                        tb_buf_t *out, tb_err_t *err)
{
    enum { BLOCK = 4096 };
    const uint8_t c = nm->a.data[0], *b = nm->b.data;
    size_t bl = nm->b.len, grow = bl > 1 ? bl : 1;
    for (size_t at = 0; at < n; at += BLOCK) {
        size_t end = n - at < BLOCK ? n : at + BLOCK;
        if (tb_buf_reserve(out, (end - at) * grow))
            return tb_fail(err, "out of memory");
        uint8_t *o = out->data + out->len;
        for (size_t i = at; i < end; i++) {
            if (s[i] != c) {
                *o++ = s[i];
                continue;
            }
            for (size_t k = 0; k < bl; k++)
                *o++ = b[k];
        }
        out->len = (size_t)(o - out->data);
    }
    return 0;
}

static int replace_literal(const tok_norm_t *nm, const uint8_t *s, size_t n,
                           tb_buf_t *out, tb_err_t *err)
{
    const uint8_t *pat = nm->a.data;
    size_t pl = nm->a.len, i = 0;
    if (!pl)
        return tb_buf_put(out, s, n) ? tb_fail(err, "out of memory") : 0;
    if (pl == 1)
        return replace_byte(nm, s, n, out, err);
    while (i < n) {
        const uint8_t *hit = memmem(s + i, n - i, pat, pl);
        size_t end = hit ? (size_t)(hit - s) : n;
        if (tb_buf_put(out, s + i, end - i))
            return tb_fail(err, "out of memory");
        if (!hit)
            break;
        if (tb_buf_put(out, nm->b.data, nm->b.len))
            return tb_fail(err, "out of memory");
        i = end + pl;
    }
    return 0;
}

/* Regex Replace: compiled per call, because the pattern has no slot for
 * compiled code in tok_norm_t; only rare files use it. */
static int replace_regex(const tok_norm_t *nm, const uint8_t *s, size_t n,
                         tb_buf_t *out, tb_err_t *err)
{
    int code;
    PCRE2_SIZE eoff;
    pcre2_code *re = pcre2_compile(nm->a.data ? nm->a.data : (PCRE2_SPTR) "",
                                   nm->a.len, PCRE2_UTF, &code, &eoff, NULL);
    if (!re)
        return tb_fail(err, "normalizer: Replace regex /%.*s/ does not compile",
                       (int)nm->a.len, (const char *)nm->a.data);
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    int rc = md ? 0 : tb_fail(err, "out of memory");
    size_t at = 0, from = 0;
    while (!rc && from <= n) {
        int m = pcre2_match(re, s, n, from, 0, md, NULL);
        if (m < 0)
            break;
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        if (tb_buf_put(out, s + at, ov[0] - at) ||
            tb_buf_put(out, nm->b.data, nm->b.len)) {
            rc = tb_fail(err, "out of memory");
            break;
        }
        at = ov[1];
        /* An empty match moves on by one character. */
        from = ov[1] > ov[0] ? ov[1] : ov[1] + (ov[1] < n ? tb_utf8_lead_len(s[ov[1]]) : 1);
    }
    if (!rc && tb_buf_put(out, s + at, n - at))
        rc = tb_fail(err, "out of memory");
    pcre2_match_data_free(md);
    pcre2_code_free(re);
    return rc;
}

/* Length of the character ending at s[end] (UTF-8 continuation bytes
 * back to the lead). */
static size_t char_before(const uint8_t *s, size_t end)
{
    size_t k = 1;
    while (k < end && k < 4 && (s[end - k] & 0xC0) == 0x80)
        k++;
    return k;
}

static int is_space_at(const uint8_t *s, size_t n, size_t *len)
{
    uint32_t cp;
    size_t k = tb_utf8_decode(s, n, &cp);
    *len = k ? k : 1;
    return k && uc_is_property_white_space(cp);
}

/* Strip: Unicode White_Space off the left (flags & 1) and right (& 2). */
static int strip(const tok_norm_t *nm, const uint8_t *s, size_t n,
                 tb_buf_t *out, tb_err_t *err)
{
    size_t b = 0, e = n, k;
    if (nm->flags & 1)
        while (b < e && is_space_at(s + b, e - b, &k))
            b += k;
    if (nm->flags & 2)
        while (e > b) {
            size_t back = char_before(s, e);
            if (back > e - b || !is_space_at(s + e - back, back, &k) || k != back)
                break;
            e -= back;
        }
    return tb_buf_put(out, s + b, e - b) ? tb_fail(err, "out of memory") : 0;
}

/* BertNormalizer's steps over a run of ASCII, where they reduce to a
 * byte map: clean_text drops the controls (Cc) but tab, newline and
 * return, which become spaces; no ASCII character is CJK, decomposes or is
 * an accent; lowercase maps A-Z. */
static int bert_ascii(uint32_t flags, const uint8_t *s, size_t n, tb_buf_t *out)
{
    if (tb_buf_reserve(out, n))
        return -1;
    uint8_t *o = out->data + out->len;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if ((flags & TOK_BERT_CLEAN) && (c < 0x20 || c == 0x7F)) {
            if (c != '\t' && c != '\n' && c != '\r')
                continue;
            c = ' ';
        }
        if ((flags & TOK_BERT_LOWER) && c >= 'A' && c <= 'Z')
            c += 32;
        *o++ = c;
    }
    out->len = (size_t)(o - out->data);
    return 0;
}

/* The same steps over a run of non-ASCII characters, through bert.c and
 * lowercase, with the scratch's run buffers.  *local (where not NULL) says
 * whether the stripped text holds no non-starter: then canonical ordering
 * had nothing to move, and each character's output is its own. */
static int bert_wide(uint32_t flags, const uint8_t *s, size_t n,
                     tok_norm_scratch_t *sc, tb_buf_t *out, int *local,
                     tb_err_t *err)
{
    tb_buf_t *a = &sc->run[0], *b = &sc->run[1];
    a->len = b->len = 0;
    int rc = tok_bert_clean(flags, s, n, a, err);
    if (!rc && (flags & TOK_BERT_STRIP) && a->len) {
        rc = tok_bert_strip_accents(a->data, a->len, b, err);
        tb_buf_t swap = *a;
        *a = *b;
        *b = swap;
    }
    if (!rc && local) {
        *local = 1;
        for (size_t i = 0, k; i < a->len && (flags & TOK_BERT_STRIP); i += k) {
            uint32_t cp;
            k = tb_utf8_decode(a->data + i, a->len - i, &cp);
            if (tok_unorm_ccc(cp))
                *local = 0;
        }
    }
    if (!rc && a->len)
        rc = flags & TOK_BERT_LOWER
                 ? lowercase(a->data, a->len, out, err)
                 : (tb_buf_put(out, a->data, a->len) ? tb_fail(err, "out of memory") : 0);
    return rc;
}

/* The BertNormalizer's output for each non-ASCII character a state has met,
 * in a direct-mapped table by code point: the steps above cost about 200
 * instructions a character, and a text repeats its characters (the
 * multilingual corpus: 400 KB of them, a few thousand distinct).  A
 * character whose output is not its own alone (a non-starter survives the
 * stripping: a few marks of class Mc) or is longer than a slot is marked
 * slow, and a run holding one takes the steps whole. */
enum { BERT_MEMO_BITS = 12, BERT_MEMO_BYTES = 11, BERT_SLOW = 0xFF };

typedef struct {
    uint32_t cp;                   /* 0: empty (U+0000 is never looked up) */
    uint8_t len;                   /* bytes of out, or BERT_SLOW */
    uint8_t out[BERT_MEMO_BYTES];
} bert_memo_slot_t;

struct tok_bert_memo {
    uint32_t flags; /* the step's, whose outputs the slots hold */
    bert_memo_slot_t slot[1u << BERT_MEMO_BITS];
};

static bert_memo_slot_t *bert_memo_slot(struct tok_bert_memo *m, uint32_t cp)
{
    return &m->slot[(cp * 0x9E3779B1u) >> (32 - BERT_MEMO_BITS)];
}

/* Fills the slot of character s[0..k) = cp; -1 on an error of the steps. */
static int bert_memo_fill(uint32_t flags, const uint8_t *s, size_t k,
                          uint32_t cp, tok_norm_scratch_t *sc,
                          bert_memo_slot_t *slot, tb_err_t *err)
{
    tb_buf_t one = {0};
    int local;
    int rc = bert_wide(flags, s, k, sc, &one, &local, err);
    if (!rc) {
        slot->cp = cp;
        slot->len = local && one.len <= BERT_MEMO_BYTES ? (uint8_t)one.len
                                                         : BERT_SLOW;
        if (slot->len != BERT_SLOW && one.len)
            memcpy(slot->out, one.data, one.len);
    }
    tb_buf_free(&one);
    return rc;
}

/* A run of non-ASCII characters through the memo; the steps whole where a
 * character is slow or the run is not valid UTF-8 (they name the byte). */
static int bert_memo_run(uint32_t flags, const uint8_t *s, size_t n,
                         tok_norm_scratch_t *sc, tb_buf_t *out, tb_err_t *err)
{
    if (!sc->bert && !(sc->bert = calloc(1, sizeof *sc->bert)))
        return tb_fail(err, "out of memory");
    if (sc->bert->flags != flags) { /* another BertNormalizer step's */
        memset(sc->bert, 0, sizeof *sc->bert);
        sc->bert->flags = flags;
    }
    /* a character is 2 bytes at least, its output BERT_MEMO_BYTES at most */
    if (tb_buf_reserve(out, n / 2 * BERT_MEMO_BYTES))
        return tb_fail(err, "out of memory");
    uint8_t *o = out->data + out->len;
    size_t i = 0, k;
    uint32_t cp;
    for (; i < n && (k = tb_utf8_decode(s + i, n - i, &cp)); i += k) {
        bert_memo_slot_t *slot = bert_memo_slot(sc->bert, cp);
        if (slot->cp != cp &&
            bert_memo_fill(flags, s + i, k, cp, sc, slot, err))
            return -1;
        if (slot->len == BERT_SLOW)
            break;
        memcpy(o, slot->out, BERT_MEMO_BYTES);
        o += slot->len;
    }
    if (i == n) {
        out->len = (size_t)(o - out->data);
        return 0;
    }
    return bert_wide(flags, s, n, sc, out, NULL, err);
}

/* BertNormalizer: clean_text, handle_chinese_chars, strip_accents and
 * lowercase, in that order, as the flags say.  Each step works character
 * by character, but for the canonical reordering of strip_accents' NFD,
 * which moves only accents (non-starters) and never across an ASCII
 * character (a starter), so the text is run through them in alternating
 * runs of ASCII and non-ASCII bytes, the ASCII ones by a byte map: 40% of
 * the multilingual corpus, and most of English text. */
static int bert(const tok_norm_t *nm, const uint8_t *s, size_t n,
                tok_norm_scratch_t *sc, tb_buf_t *out, tb_err_t *err)
{
    for (size_t i = 0, j; i < n; i = j) {
        int ascii = s[i] < 0x80;
        for (j = i + 1; j < n && (s[j] < 0x80) == ascii; j++)
            ;
        if (ascii) {
            if (bert_ascii(nm->flags, s + i, j - i, out))
                return tb_fail(err, "out of memory");
        } else if (bert_memo_run(nm->flags, s + i, j - i, sc, out, err))
            return tb_wrap(err, "BertNormalizer: in bytes %zu..%zu", i, j);
    }
    return 0;
}

static int step(const tok_norm_t *nm, const uint8_t *s, size_t n,
                tok_norm_scratch_t *sc, tb_buf_t *out, tb_err_t *err)
{
    switch (nm->kind) {
    case TOK_NORM_NFC:
    case TOK_NORM_NFKC:
    case TOK_NORM_NFD:
    case TOK_NORM_NFKD:
        return unicode_form(nm->kind, s, n, out, err);
    case TOK_NORM_LOWERCASE:
        return lowercase(s, n, out, err);
    case TOK_NORM_PREPEND:
        if (n && tb_buf_put(out, nm->a.data, nm->a.len))
            return tb_fail(err, "out of memory");
        return tb_buf_put(out, s, n) ? tb_fail(err, "out of memory") : 0;
    case TOK_NORM_REPLACE:
        return nm->flags & 1 ? replace_regex(nm, s, n, out, err)
                             : replace_literal(nm, s, n, out, err);
    case TOK_NORM_STRIP:
        return strip(nm, s, n, out, err);
    case TOK_NORM_CHARSMAP:
    case TOK_NORM_SPM:
        return tok_spm_normalize(nm, s, n, out, err);
    case TOK_NORM_BERT:
        return bert(nm, s, n, sc, out, err);
    }
    return tb_fail(err, "normalizer: unknown step kind %d", (int)nm->kind);
}

/* Each step reads the previous step's output; two buffers take turns. */
int tok_normalize_with(const tok_tokenizer_t *t, tok_norm_scratch_t *sc,
                       const uint8_t *s, size_t n, tb_buf_t *out, tb_err_t *err)
{
    if (t->norms.len == 0)
        return tb_buf_put(out, s, n) ? tb_fail(err, "out of memory") : 0;
    const uint8_t *in = s;
    size_t in_len = n;
    int rc = 0;
    for (size_t i = 0; i < t->norms.len && !rc; i++) {
        tb_buf_t *dst = &sc->step[i & 1];
        dst->len = 0;
        rc = step(&t->norms.data[i], in, in_len, sc, dst, err);
        /* A step that wrote nothing leaves dst->data NULL; the next steps
         * do pointer arithmetic on their input and hand it to PCRE2. */
        in = dst->data ? dst->data : (const uint8_t *)"";
        in_len = dst->len;
    }
    if (!rc && tb_buf_put(out, in, in_len))
        rc = tb_fail(err, "out of memory");
    return rc;
}

void tok_norm_scratch_free(tok_norm_scratch_t *sc)
{
    for (int i = 0; i < 2; i++) {
        tb_buf_free(&sc->step[i]);
        tb_buf_free(&sc->run[i]);
    }
    free(sc->bert);
    sc->bert = NULL;
}

int tok_normalize(const tok_tokenizer_t *t, const uint8_t *s, size_t n,
                  tb_buf_t *out, tb_err_t *err)
{
    tok_norm_scratch_t sc = {0};
    int rc = tok_normalize_with(t, &sc, s, n, out, err);
    tok_norm_scratch_free(&sc);
    return rc;
}
