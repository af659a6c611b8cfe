/*
 * wordpiece: BERT's tokenizer as llama.cpp runs a GGUF of model "bert"
 * (its WPM tokenizer): the text is cut into words at white space and
 * around every punctuation mark, ASCII symbol and CJK ideograph (each one a
 * word of its own), control characters are dropped, and letters are
 * lowercased and stripped of accents as the file's flags say.  Each word
 * is then covered greedily, longest vocabulary piece first: the first
 * piece with the word-start marker (stored as a space, since the GGUF
 * spells it U+2581), the others without (the GGUF drops BERT's "##").  A
 * word that cannot be covered becomes one unknown token.
 */
#include <string.h>

#include <unicase.h>
#include <unictype.h>

#include "../base/utf8.h"
#include "tok_internal.h"
#include "unorm.h"
#include "uprops.h"

/* CJK ideographs as BERT's tokenizer lists them (one word each). */
static int is_cjk(uint32_t c)
{
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
           (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
           (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

/* The first letter of the general category ('L', 'P', 'C', ...) and,
 * through *mn, whether it is Mn (a non-spacing mark: an accent). */
static char category(uint32_t cp, int *mn)
{
    const char *name = tok_uprops_leaf_name(tok_uprops_gc(cp));
    *mn = name && !strcmp(name, "Mn");
    return name ? name[0] : 'C';
}

/* Covers one word (word[0] is the marker space) with pieces. */
static int cover(const tok_tokenizer_t *t, const uint8_t *w, size_t n,
                 tok_ids_t *out, tb_err_t *err)
{
    const tok_vocab_t *v = &t->vocab;
    size_t mark = out->len;
    for (size_t i = 0; i < n;) {
        size_t j = n - i > t->wordpiece.max_len ? i + t->wordpiece.max_len : n;
        int32_t id = -1;
        while (j > i && (id = tok_vocab_find(v, w + i, j - i)) < 0)
            j--;
        if (id < 0) { /* the whole word is unknown */
            out->len = mark;
            break;
        }
        if (tb_vec_push(out, (uint32_t)id))
            return tb_fail(err, "out of memory");
        i = j;
    }
    if (out->len == mark && t->wordpiece.unk >= 0 &&
        tb_vec_push(out, (uint32_t)t->wordpiece.unk))
        return tb_fail(err, "out of memory");
    return 0;
}

/* Appends code point cp to the word in *w; ends the word first (and after)
 * when cp is a word of its own. */
static int add_char(const tok_tokenizer_t *t, tb_buf_t *w, uint32_t cp,
                    int alone, tok_ids_t *out, tb_err_t *err)
{
    if (alone && w->len > 1 && cover(t, w->data, w->len, out, err))
        return -1;
    if (alone)
        w->len = 1;
    uint8_t u[4];
    if (tb_buf_put(w, u, tb_utf8_encode(cp, u)))
        return tb_fail(err, "out of memory");
    if (alone) {
        int rc = cover(t, w->data, w->len, out, err);
        w->len = 1;
        return rc;
    }
    return 0;
}

int tok_wordpiece_word(const tok_tokenizer_t *t, const uint8_t *s, size_t n,
                       tok_ids_t *out, tb_err_t *err)
{
    tb_buf_t nfd = {0}, w = {0};
    int rc = 0;
    if (t->wordpiece.strip_accents) {
        if (tok_unorm(TOK_UNORM_NFD, s, n, &nfd, err))
            return -1;
        s = nfd.data;
        n = nfd.len;
    }
    if (tb_buf_putc(&w, ' '))
        rc = tb_fail(err, "out of memory");
    for (size_t i = 0; i < n && !rc;) {
        uint32_t cp;
        size_t k = tb_utf8_decode(s + i, n - i, &cp);
        if (!k) {
            rc = tb_fail(err, "wordpiece: invalid UTF-8 at byte %zu", i);
            break;
        }
        i += k;
        int mn;
        char cat = category(cp, &mn);
        if (uc_is_property_white_space(cp)) {
            if (w.len > 1)
                rc = cover(t, w.data, w.len, out, err);
            w.len = 1;
            continue;
        }
        if (cp == 0 || cp == 0xFFFD || cat == 'C' ||
            (t->wordpiece.strip_accents && mn))
            continue;
        if (t->wordpiece.lowercase)
            cp = uc_tolower(cp);
        int alone = cat == 'P' || (cp < 0x7F && cat == 'S') || is_cjk(cp);
        rc = add_char(t, &w, cp, alone, out, err);
    }
    if (!rc && w.len > 1)
        rc = cover(t, w.data, w.len, out, err);
    tb_buf_free(&nfd);
    tb_buf_free(&w);
    return rc;
}
