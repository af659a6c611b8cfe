/*
 * wordpiece: BERT's WordPiece model.  Each word is covered greedily,
 * longest vocabulary piece first: the first piece with the word-start
 * marker (stored as a space, since a GGUF spells it U+2581 and a
 * tokenizer.json's word-start pieces are the bare ones), the others
 * without (a GGUF drops BERT's "##", and hf_json.c drops it at load time).
 * A word that cannot be covered becomes one unknown token.
 *
 * From a GGUF of model "bert" the model also makes the words, as llama.cpp's
 * WPM tokenizer does: the text is cut at white space and around every
 * punctuation mark, ASCII symbol and CJK ideograph (each one a word of its
 * own), control characters are dropped, and letters are lowercased and
 * stripped of accents as the file's flags say.  From a tokenizer.json the
 * pipeline's BertNormalizer and BertPreTokenizer (bert.c) do that, with
 * Hugging Face's character classes.
 *
 * Hugging Face's WordLevel model, the simplest lookup, is here too: a word
 * is its own token or the unknown one.
 */
#include <stdlib.h>
#include <string.h>

#include <unicase.h>
#include <unictype.h>

#include "../base/utf8.h"
#include "tok_internal.h"
#include "unorm.h"
#include "uprops.h"
#include "wordcache.h"

/* The first letter of the general category ('L', 'P', 'C', ...) and,
 * through *mn, whether it is Mn (a non-spacing mark: an accent). */
static char category(uint32_t cp, int *mn)
{
    const char *name = tok_uprops_leaf_name(tok_uprops_gc(cp));
    *mn = name && !strcmp(name, "Mn");
    return name ? name[0] : 'C';
}

/* The unknown token for a word, or nothing (llama.cpp, split_text) or an
 * error (Hugging Face) where the vocabulary has none. */
static int unknown(const tok_tokenizer_t *t, tok_ids_t *out, tb_err_t *err)
{
    if (t->wordpiece.unk < 0)
        return t->wordpiece.split_text
                   ? 0 : tb_fail(err, "%s: a word is unknown and the model has "
                                      "no unk_token", t->model_name);
    return tb_vec_push(out, (uint32_t)t->wordpiece.unk)
               ? tb_fail(err, "out of memory") : 0;
}

/* The id of piece w[i..j), or -1.  Hugging Face steps back a character
 * at a time, so a cut inside one (w[j] a continuation byte) is no piece,
 * and is not looked up: two thirds of the lookups of a CJK word. */
static int32_t find_piece(const tok_vocab_t *v, const uint8_t *w, size_t n,
                          size_t i, size_t j)
{
    if (j < n && (w[j] & 0xC0) == 0x80)
        return -1;
    return tok_vocab_find(v, w + i, j - i);
}

/* Covers one word (word[0] is the marker space) with pieces, the longest
 * first at each position. */
static int cover(const tok_tokenizer_t *t, const uint8_t *w, size_t n,
                 tok_ids_t *out, tb_err_t *err)
{
    const tok_vocab_t *v = &t->vocab;
    size_t mark = out->len;
    for (size_t i = 0; i < n;) {
        size_t j = n - i > t->wordpiece.max_len ? i + t->wordpiece.max_len : n;
        int32_t id = -1;
        while (j > i && (id = find_piece(v, w, n, i, j)) < 0)
            j--;
        if (id < 0) { /* the whole word is unknown */
            out->len = mark;
            return unknown(t, out, err);
        }
        if (tb_vec_push(out, (uint32_t)id))
            return tb_fail(err, "out of memory");
        i = j;
    }
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
        int alone = cat == 'P' || (cp < 0x7F && cat == 'S') || tok_is_cjk(cp);
        rc = add_char(t, &w, cp, alone, out, err);
    }
    if (!rc && w.len > 1)
        rc = cover(t, w.data, w.len, out, err);
    tb_buf_free(&nfd);
    tb_buf_free(&w);
    return rc;
}

/* The state's word cache, made at its first word; NULL if out of memory
 * (the words are covered all the same). */
static tok_wordcache_t *cache_of(tok_state_t *st)
{
    if (!st->wordpiece && (st->wordpiece = malloc(sizeof *st->wordpiece)) &&
        tok_wc_init(st->wordpiece)) {
        free(st->wordpiece);
        st->wordpiece = NULL;
    }
    return st->wordpiece;
}

void tok_wordpiece_state_free(tok_wordcache_t *c)
{
    if (c)
        tok_wc_free(c);
    free(c);
}

/* The characters of valid UTF-8 w[0..n): its bytes but continuations. */
static size_t chars_in(const uint8_t *w, size_t n)
{
    size_t chars = 0;
    for (size_t i = 0; i < n; i++)
        chars += (w[i] & 0xC0) != 0x80;
    return chars;
}

/* Words repeat: a word met before costs a lookup in the state's cache,
 * not the cover's lookups of its pieces (two a word on the multilingual
 * corpus, a dozen for a word of letters the vocabulary has one by one). */
int tok_wordpiece_cover(const tok_tokenizer_t *t, tok_state_t *st,
                        const uint8_t *w, size_t n, tok_ids_t *out,
                        tb_err_t *err)
{
    tok_wordcache_t *cache = cache_of(st);
    tok_wc_key_t k = tok_wc_key(w, n, n);
    int hit = cache ? tok_wc_get(cache, &k, out) : 0;
    if (hit)
        return hit < 0 ? tb_fail(err, "out of memory") : 0;
    size_t mark = out->len;
    int rc;
    if (n > t->wordpiece.max_chars && t->wordpiece.max_chars &&
        chars_in(w, n) > t->wordpiece.max_chars) {
        rc = unknown(t, out, err);
    } else {
        /* st->word is free: meta_to_space, its other user, is never set
         * with WordPiece (hf_json.c) */
        st->word.len = 0;
        rc = tb_buf_putc(&st->word, ' ') || tb_buf_put(&st->word, w, n)
                 ? tb_fail(err, "out of memory")
                 : cover(t, st->word.data, st->word.len, out, err);
    }
    if (!rc && cache)
        tok_wc_put(cache, &k, out->data + mark, out->len - mark);
    return rc;
}

void tok_wordpiece_prepare(tok_tokenizer_t *t)
{
    const tok_vocab_t *v = &t->vocab;
    t->wordpiece.max_len = 0;
    for (uint32_t id = 0; id < v->size; id++)
        if (v->offset[id + 1] - v->offset[id] > t->wordpiece.max_len)
            t->wordpiece.max_len = v->offset[id + 1] - v->offset[id];
}

int tok_wordlevel_word(const tok_tokenizer_t *t, const uint8_t *w, size_t n,
                       tok_ids_t *out, tb_err_t *err)
{
    int32_t id = tok_vocab_find(&t->vocab, w, n);
    if (id < 0)
        return unknown(t, out, err);
    return tb_vec_push(out, (uint32_t)id) ? tb_fail(err, "out of memory") : 0;
}
