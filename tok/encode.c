/*
 * encode: the encoding pipeline every tokenizer runs (see tok_internal.h),
 * and decoding.
 *
 * Added tokens are found as Hugging Face `tokenizers` finds them: leftmost,
 * then longest, non-overlapping, first in the raw text (tokens with
 * normalized == 0), then in the normalized text of each remaining piece
 * (normalized == 1); lstrip / rstrip widen a match over white space and
 * single_word refuses a match inside a word.  The matcher is `added` itself,
 * sorted once by content: a search narrows a range of the sorted array byte
 * by byte, a trie walk with no extra memory, starting from the range of
 * the tokens of the text's first byte, which keeps it off almost every
 * position of ordinary text and narrows the rest (Gemma 3's 6,415 added
 * tokens include runs of newlines, tabs and U+2581: 31, 31 and 30 of
 * them; a binary search of all of them at each newline and each byte E2,
 * which starts many punctuation marks, was a quarter of an encode).
 *
 * Threads: the tokenizer is only read here; what an encode writes is in a
 * tok_state_t.  tok_encode borrows one of the tokenizer's spare states with
 * an atomic exchange, and makes a fresh one when other calls hold them all.
 */
#include <stdlib.h>
#include <string.h>

#include <unictype.h>

#include "../base/hash.h"
#include "../base/utf8.h"
#include "tok_internal.h"

/* ---- the added-token index ---------------------------------------------- */

static int added_cmp(const void *pa, const void *pb)
{
    const tok_added_t *a = pa, *b = pb;
    if (a->normalized != b->normalized)
        return a->normalized - b->normalized;
    size_t n = a->content.len < b->content.len ? a->content.len : b->content.len;
    int c = n ? memcmp(a->content.data, b->content.data, n) : 0;
    if (c)
        return c;
    if (a->content.len != b->content.len)
        return a->content.len < b->content.len ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

/* The first byte of every token of one kind's ranges (added_at[k]) if
 * they all share it, else -1. */
static int shared_lead(const uint32_t (*at)[2])
{
    int lead = -1, leads = 0;
    for (int b = 0; b < 256; b++)
        if (at[b][0] != at[b][1]) {
            lead = b;
            leads++;
        }
    return leads == 1 ? lead : -1;
}

/* The bytes, up to 8, that the sorted tokens a[lo..hi) all begin with:
 * those of the first and the last (hi > lo). */
static tok_added_prefix_t shared_prefix(const tok_added_t *a, size_t lo, size_t hi)
{
    const tb_buf_t *f = &a[lo].content, *l = &a[hi - 1].content;
    tok_added_prefix_t p = {0, 0};
    for (size_t i = 0; i < 8 && i < f->len && i < l->len && f->data[i] == l->data[i]; i++) {
        p.bytes |= (uint64_t)f->data[i] << 8 * i;
        p.mask |= (uint64_t)0xFF << 8 * i;
    }
    return p;
}

static void build_added_index(tok_tokenizer_t *t)
{
    if (t->added.len)
        qsort(t->added.data, t->added.len, sizeof *t->added.data, added_cmp);
    memset(t->added_at, 0, sizeof t->added_at);
    t->added_norm_from = (uint32_t)t->added.len;
    for (size_t i = 0; i < t->added.len; i++) {
        const tok_added_t *a = &t->added.data[i];
        if (a->normalized && t->added_norm_from == t->added.len)
            t->added_norm_from = (uint32_t)i;
        if (a->content.len) { /* sorted: a first byte's tokens are a run */
            uint32_t *r = t->added_at[a->normalized != 0][a->content.data[0]];
            if (r[0] == r[1])
                r[0] = (uint32_t)i;
            r[1] = (uint32_t)i + 1;
        }
    }
    for (int k = 0; k < 2; k++) {
        t->added_lead[k] = shared_lead(t->added_at[k]);
        for (int b = 0; b < 256; b++) {
            const uint32_t *r = t->added_at[k][b];
            t->added_prefix[k][b] = r[0] != r[1] ? shared_prefix(t->added.data, r[0], r[1])
                                                 : (tok_added_prefix_t){0, 0};
        }
    }
}

/* The first position from pos on where an added token of one kind may
 * start (n: none), given the kind's ranges and shared first byte (at,
 * lead: added_at[k], added_lead[k]).  Most tokenizers' special tokens
 * share a first byte ('<' or '['): a byte-by-byte look at the index cost
 * a first pass of Llama 3 over multi 7 instructions a byte. */
static size_t next_lead(const uint32_t (*at)[2], int lead, const uint8_t *s, size_t n,
                        size_t pos)
{
    if (lead >= 0) {
        const uint8_t *p = memchr(s + pos, lead, n - pos);
        return p ? (size_t)(p - s) : n;
    }
    while (pos < n && at[s[pos]][0] == at[s[pos]][1])
        pos++; /* no token starts with this byte */
    return pos;
}

/* First index in [lo, hi) whose byte k is >= c (all share bytes 0..k-1
 * and are longer than k). */
static size_t lower_at(const tok_added_t *a, size_t lo, size_t hi, size_t k,
                       uint8_t c)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid].content.data[k] < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Longest token of a[lo..hi) that is a prefix of s[0..n): its index, or
 * -1.  The range narrows to the tokens that start with s[0..k+1). */
static long longest_at(const tok_added_t *a, size_t lo, size_t hi,
                       const uint8_t *s, size_t n)
{
    long best = -1;
    for (size_t k = 0; k < n && lo < hi; k++) {
        /* Tokens of exactly k bytes sort first; they have no byte k. */
        while (lo < hi && a[lo].content.len == k)
            lo++;
        if (lo == hi)
            break;
        /* byte k is sorted over the range: outside its ends, nothing
         * matches; equal to both, all of it does */
        uint8_t first = a[lo].content.data[k], last = a[hi - 1].content.data[k];
        if (s[k] < first || s[k] > last)
            break;
        if (first != s[k])
            lo = lower_at(a, lo, hi, k, s[k]);
        if (last != s[k])
            hi = lower_at(a, lo, hi, k, (uint8_t)(s[k] + 1));
        if (lo < hi && a[lo].content.len == k + 1)
            best = (long)lo;
    }
    return best;
}

/* Rust's char::is_alphanumeric plus '_' (`tokenizers`' word character). */
static int word_char(uint32_t cp)
{
    return cp == '_' || uc_is_alnum(cp);
}

static int ends_with_word(const uint8_t *s, size_t end)
{
    if (!end)
        return 0;
    size_t k = 1;
    while (k < end && k < 4 && (s[end - k] & 0xC0) == 0x80)
        k++;
    uint32_t cp;
    return tb_utf8_decode(s + end - k, k, &cp) == k && word_char(cp);
}

static int starts_with_word(const uint8_t *s, size_t n)
{
    uint32_t cp;
    return n && tb_utf8_decode(s, n, &cp) && word_char(cp);
}

static int space_at(const uint8_t *s, size_t n, size_t *len)
{
    uint32_t cp;
    size_t k = tb_utf8_decode(s, n, &cp);
    *len = k;
    return k && uc_is_property_white_space(cp);
}

/* ---- the pipeline ---------------------------------------------------------- */

static int run_model(const tok_tokenizer_t *t, tok_state_t *sc, const uint8_t *w,
                     size_t n, tok_ids_t *out, tb_err_t *err)
{
    if (t->meta_to_space) {
        /* The vocabulary holds spaces where the file wrote U+2581.  The
         * output pointer is a local so that the loop keeps it in a
         * register (sc->word.len, written a byte at a time, was reloaded
         * after every store: 17 instructions a byte of Mistral's text). */
        sc->word.len = 0;
        if (tb_buf_reserve(&sc->word, n))
            return tb_fail(err, "out of memory");
        uint8_t *o = sc->word.data;
        for (size_t i = 0; i < n; i++) {
            if (w[i] == 0xE2 && i + 2 < n && w[i + 1] == 0x96 && w[i + 2] == 0x81) {
                *o++ = ' ';
                i += 2;
            } else {
                *o++ = w[i];
            }
        }
        w = sc->word.data;
        n = (size_t)(o - sc->word.data);
        sc->word.len = n;
    }
    if (!n)
        return 0;
    if (t->model == TOK_MODEL_WORDPIECE)
        return t->wordpiece.split_text ? tok_wordpiece_word(t, w, n, out, err)
                                       : tok_wordpiece_cover(t, sc, w, n, out, err);
    if (t->model == TOK_MODEL_WORDLEVEL)
        return tok_wordlevel_word(t, w, n, out, err);
    return t->model == TOK_MODEL_UNIGRAM ? tok_unigram_word(t, sc, w, n, out, err)
                                         : tok_bpe_word(t, sc, w, n, out, err);
}

/* Pre-tokenizes normalized text and runs the model over every word. */
static int encode_words(const tok_tokenizer_t *t, tok_state_t *sc,
                        const uint8_t *s, size_t n, int first, tok_ids_t *out,
                        tb_err_t *err)
{
    if (!n)
        return 0;
    if (!t->pres.len)
        return run_model(t, sc, s, n, out, err);
    sc->pre.len = 0;
    sc->words.len = 0;
    if (tok_pretokenize(t, sc, s, n, first, &sc->pre, &sc->words, err))
        return -1;
    for (size_t i = 0; i < sc->words.len; i++) {
        tok_span_t w = sc->words.data[i];
        if (w.off > sc->pre.len || w.len > sc->pre.len - w.off)
            return tb_fail(err, "pre-tokenizer: word %zu is outside its text", i);
    }
    /* a BPE model takes its words at once, to look each up ahead of its turn
     * (not one whose words need their U+2581s made spaces first) */
    if (t->model == TOK_MODEL_BPE && !t->meta_to_space)
        return tok_bpe_words(t, sc, sc->pre.data, sc->pre.len, sc->words.data, sc->words.len,
                             out, err);
    for (size_t i = 0; i < sc->words.len; i++)
        if (run_model(t, sc, sc->pre.data + sc->words.data[i].off,
                      sc->words.data[i].len, out, err))
            return -1;
    return 0;
}

/* What to do with the text between matches. */
typedef int (*gap_fn)(const tok_tokenizer_t *t, tok_state_t *sc,
                      const uint8_t *s, size_t n, int first, tok_ids_t *out,
                      tb_err_t *err);

/* Splits s[0..n) around the added tokens of one kind (normalized or not),
 * emitting their ids and handing the text between to `gap`. */
static int split_added(const tok_tokenizer_t *t, tok_state_t *sc, int normalized,
                       const uint8_t *s, size_t n, int first, gap_fn gap,
                       tok_ids_t *out, tb_err_t *err)
{
    size_t lo = normalized ? t->added_norm_from : 0;
    size_t hi = normalized ? t->added.len : t->added_norm_from;
    const uint32_t(*at)[2] = t->added_at[normalized];
    int lead = t->added_lead[normalized];
    size_t start_offset = 0, pos = 0;
    while (lo < hi && pos < n) {
        pos = next_lead(at, lead, s, n, pos);
        if (pos == n)
            break;
        /* the bytes its tokens share first: Gemma 3's runs of newlines and
         * of U+2581 begin with two, where text mostly has one (and its
         * every E2, of punctuation and box drawing, started a search) */
        const tok_added_prefix_t *p = &t->added_prefix[normalized][s[pos]];
        if (n - pos >= 8 && (tb_load_le64(s + pos) & p->mask) != p->bytes) {
            pos++;
            continue;
        }
        const uint32_t *r = at[s[pos]];
        long m = longest_at(t->added.data, r[0], r[1], s + pos, n - pos);
        if (m < 0) {
            pos++;
            continue;
        }
        const tok_added_t *a = &t->added.data[m];
        size_t start = pos, stop = pos + a->content.len, k;
        pos = stop; /* the next search starts after this match */
        /* An unparsed special token is text, and the search goes on after
         * it, as `tokenizers` skips a match under encode_special_tokens. */
        if (a->special && !sc->parse_special)
            continue;
        if (a->single_word && (ends_with_word(s, start) ||
                               starts_with_word(s + stop, n - stop)))
            continue;
        if (a->lstrip) {
            size_t b = start;
            while (b > start_offset) {
                size_t back = 1;
                while (back < b && back < 4 && (s[b - back] & 0xC0) == 0x80)
                    back++;
                if (!space_at(s + b - back, back, &k) || k != back)
                    break;
                b -= back;
            }
            start = b;
        }
        if (a->rstrip)
            while (stop < n && space_at(s + stop, n - stop, &k))
                stop += k;
        if (start_offset < start &&
            gap(t, sc, s + start_offset, start - start_offset,
                first && start_offset == 0, out, err))
            return -1;
        if (tb_vec_push(out, a->id))
            return tb_fail(err, "out of memory");
        start_offset = stop;
    }
    if (start_offset < n)
        return gap(t, sc, s + start_offset, n - start_offset,
                   first && start_offset == 0, out, err);
    return 0;
}

/* A piece of raw text between non-normalized added tokens: normalize it,
 * then split it around the normalized added tokens. */
static int encode_piece(const tok_tokenizer_t *t, tok_state_t *sc,
                        const uint8_t *s, size_t n, int first, tok_ids_t *out,
                        tb_err_t *err)
{
    /* With no normalizer the text is its own normalized text, and the
     * caller's, which nothing of the call writes: a copy of it was 1M
     * instructions and 16 fresh pages of a first pass over a megabyte. */
    if (!t->norms.len)
        return split_added(t, sc, 1, s, n, first, encode_words, out, err);
    /* The normalized text outlives the words cut from it: a buffer of its
     * own, which nothing else of the call writes. */
    tb_buf_t *norm = &sc->norm;
    norm->len = 0;
    if (tok_normalize_with(t, &sc->norm_scratch, s, n, norm, err))
        return -1;
    return split_added(t, sc, 1, norm->data, norm->len, first, encode_words,
                       out, err);
}

/* ---- preparing and states ------------------------------------------------ */

int tok_prepare_steps(tok_tokenizer_t *t, tb_err_t *err)
{
    build_added_index(t);
    for (size_t i = 0; i < t->pres.len; i++)
        if (tok_pre_prepare(&t->pres.data[i], err))
            return -1;
    return 0;
}

int tok_prepare(tok_tokenizer_t *t, tb_err_t *err)
{
    if (tok_prepare_steps(t, err) ||
        (t->model == TOK_MODEL_BPE && tok_bpe_prepare(t, err)))
        return -1;
    if (t->model == TOK_MODEL_WORDPIECE)
        tok_wordpiece_prepare(t);
    tok_state_drop_spares(t);
    t->ready = 1;
    return 0;
}

tok_state_t *tok_state_new(const tok_tokenizer_t *t)
{
    tok_state_t *st = calloc(1, sizeof *st);
    if (st)
        st->tok = t;
    return st;
}

void tok_state_free(tok_state_t *st)
{
    if (!st)
        return;
    tb_buf_free(&st->pre);
    tb_buf_free(&st->word);
    tb_buf_free(&st->norm);
    tok_norm_scratch_free(&st->norm_scratch);
    free(st->words.data);
    pcre2_match_data_free(st->md);
    tok_bpe_state_free(st->bpe);
    tok_wordpiece_state_free(st->wordpiece);
    free(st->viterbi);
    free(st);
}

int tok_encode_text(const tok_tokenizer_t *t, tok_state_t *st, const uint8_t *text,
                    size_t len, int parse_special, tok_ids_t *out, tb_err_t *err)
{
    if (!t->ready)
        return tb_fail(err, "encode: the tokenizer was never prepared (tok_prepare)");
    if (st->tok != t)
        return tb_fail(err, "encode: the state was made for another tokenizer");
    if (t->needs_utf8) {
        size_t bad = tb_utf8_validate(text, len);
        if (bad != len)
            return tb_fail(err, "encode: invalid UTF-8 at byte %zu", bad);
    }
    st->parse_special = parse_special;
    size_t mark = out->len;
    int rc = t->match_added
                 ? split_added(t, st, 0, text, len, 1, encode_piece, out, err)
                 : encode_piece(t, st, text, len, 1, out, err);
    if (rc)
        out->len = mark;
    return rc;
}

/* The spare slots are the one field encoding writes; a tokenizer is
 * allocated writable, so casting its const away there is sound. */
static _Atomic(tok_state_t *) *spares(const tok_tokenizer_t *t)
{
    return ((tok_tokenizer_t *)t)->spare;
}

tok_state_t *tok_state_take(const tok_tokenizer_t *t)
{
    _Atomic(tok_state_t *) *s = spares(t);
    for (size_t i = 0; i < TOK_SPARE_STATES; i++) {
        tok_state_t *st;
        /* a plain load first: an empty slot costs no exclusive cache line */
        if (atomic_load_explicit(&s[i], memory_order_relaxed) &&
            (st = atomic_exchange_explicit(&s[i], NULL, memory_order_acquire)))
            return st;
    }
    return tok_state_new(t);
}

void tok_state_give(const tok_tokenizer_t *t, tok_state_t *st)
{
    _Atomic(tok_state_t *) *s = spares(t);
    for (size_t i = 0; i < TOK_SPARE_STATES; i++) {
        tok_state_t *none = NULL;
        if (atomic_compare_exchange_strong_explicit(&s[i], &none, st,
                                                    memory_order_release,
                                                    memory_order_relaxed))
            return;
    }
    tok_state_free(st);
}

void tok_state_drop_spares(tok_tokenizer_t *t)
{
    for (size_t i = 0; i < TOK_SPARE_STATES; i++)
        tok_state_free(atomic_exchange(&t->spare[i], NULL));
}


/* ---- decoding ----------------------------------------------------------- */

/* Hugging Face's WordPiece cleanup of one token's text out[mark..]: each
 * pair in turn, every match left to right, as Rust's str::replace; none
 * lengthens the text, so it is rewritten in place. */
static void wordpiece_cleanup(tb_buf_t *out, size_t mark)
{
    static const char *const pairs[][2] = {
        {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"},
        {" n't", "n't"}, {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"},
        {" 've", "'ve"}, {" 're", "'re"},
    };
    for (size_t p = 0; p < sizeof pairs / sizeof *pairs; p++) {
        size_t fl = strlen(pairs[p][0]), tl = strlen(pairs[p][1]);
        size_t r = mark, w = mark;
        while (r < out->len) {
            if (out->len - r >= fl && !memcmp(out->data + r, pairs[p][0], fl)) {
                memmove(out->data + w, pairs[p][1], tl);
                w += tl;
                r += fl;
            } else {
                out->data[w++] = out->data[r++];
            }
        }
        out->len = w;
    }
}

/* One token through Hugging Face's WordPiece decoder: a space before it
 * unless it is the first or a continuation, whose prefix goes (the first
 * keeps it).  A model piece's bytes are already the text it has after the
 * first (" word", or the bare continuation); an added token's are its
 * content.  With no decoder at all (TOK_DEC_JOIN) every token's own string
 * comes after a space, the first's after none. */
static int hf_token(const tok_tokenizer_t *t, uint32_t id, int first,
                    tb_buf_t *out)
{
    const tok_wordpiece_t *wp = &t->wordpiece;
    int join = (t->decode_flags & TOK_DEC_JOIN) != 0;
    int wordpiece = t->model == TOK_MODEL_WORDPIECE;
    size_t len, mark = out->len;
    const uint8_t *s = tok_vocab_token(&t->vocab, id, &len);
    int rc;
    if (wordpiece && len && s[0] == ' ' && t->vocab.kind[id] != TOK_CONTROL &&
        t->vocab.kind[id] != TOK_USER)
        rc = tb_buf_put(out, s + first, len - (size_t)first);
    else if (wordpiece && t->vocab.kind[id] == TOK_NORMAL)
        rc = (join && !first && tb_buf_putc(out, ' ')) ||
             ((first || join) && tb_buf_put(out, wp->prefix, wp->prefix_len)) ||
             tb_buf_put(out, s, len);
    else if (first || join)
        rc = (!first && tb_buf_putc(out, ' ')) || tb_buf_put(out, s, len);
    else if (len >= wp->prefix_len && !memcmp(s, wp->prefix, wp->prefix_len))
        rc = tb_buf_put(out, s + wp->prefix_len, len - wp->prefix_len);
    else
        rc = tb_buf_putc(out, ' ') || tb_buf_put(out, s, len);
    if (!rc && (t->decode_flags & TOK_DEC_CLEANUP))
        wordpiece_cleanup(out, mark);
    return rc;
}

int tok_decode_ex(const tok_tokenizer_t *t, const uint32_t *ids, size_t n,
                  uint32_t flags, tb_buf_t *out, tb_err_t *err)
{
    const tok_vocab_t *v = &t->vocab;
    size_t mark = out->len;
    int strip = (t->decode_flags & TOK_DEC_STRIP_LEADING_SPACE) != 0;
    int first = 1; /* no token decoded yet */
    for (size_t i = 0; i < n; i++) {
        if (ids[i] >= v->size) {
            out->len = mark;
            return tb_fail(err, "decode: id %u (position %zu) is past the "
                                "vocabulary of %u ids", ids[i], i, v->size);
        }
        /* an id no token has: Hugging Face's decoders never see it */
        if ((t->decode_flags & (TOK_DEC_WORDPIECE | TOK_DEC_JOIN)) &&
            v->kind[ids[i]] == TOK_UNUSED)
            continue;
        if ((flags & TOK_SKIP_SPECIAL) && tok_skips_special(t, ids[i])) {
            /* llama.cpp's detokenize spends its strip on the first token
             * even when it renders as nothing; Hugging Face drops the
             * special tokens before its decoder strips. */
            if (i == 0 && t->format == TOK_FORMAT_GGUF)
                strip = 0;
            continue;
        }
        size_t len;
        const uint8_t *s = tok_vocab_token(v, ids[i], &len);
        if (t->decode_flags & (TOK_DEC_WORDPIECE | TOK_DEC_JOIN)
                ? hf_token(t, ids[i], first, out)
                : tb_buf_put(out, s, len)) {
            out->len = mark;
            return tb_fail(err, "out of memory");
        }
        first = 0;
    }
    /* SentencePiece-style decoders strip one space off the whole text. */
    if (strip && out->len > mark &&
        out->data[mark] == ' ') {
        memmove(out->data + mark, out->data + mark + 1, out->len - mark - 1);
        out->len--;
    }
    return 0;
}
