/*
 * unigram: SentencePiece's Unigram model, Viterbi over normalized text, as
 * sentencepiece 0.1.97 computes it (unigram_model.cc, EncodeOptimized, and
 * the byte fallback / unknown merging of SentencePieceProcessor::Encode):
 *   - the best path ending at each character boundary, positions in order,
 *     candidates at one start shortest first, a later candidate winning only
 *     on a strictly greater float score;
 *   - piece candidates are summed and compared in double precision and
 *     stored as float (SentencePiece's `auto score = user ? double : float`
 *     is a double), unknown candidates in float; this decides near-ties;
 *   - a user-defined piece scores len * max_score - 0.1 (max_score starts
 *     at FLT_MIN, so it is about -0.1: always chosen);
 *   - where no piece covers exactly one character, that character is an
 *     unknown node scoring min_score - 10;
 *   - unknowns become their UTF-8 byte pieces with byte fallback, and runs
 *     of unknowns one unk id without.
 * The prefix search is pluggable (tok_prefix_fn); the default index here is
 * base/da's double array, built at load time.
 */
#include <float.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "tok_internal.h"

/* ---- default prefix index: a double array --------------------------- */

/* Sorts the keys by their bytes, a prefix first, then by value (id), so
 * that of equal pieces the lowest id comes first and is kept. */
static int key_cmp(const void *pa, const void *pb)
{
    const tb_da_key_t *a = pa, *b = pb;
    uint32_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->s, b->s, n);
    if (c)
        return c;
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    return a->value < b->value ? -1 : a->value > b->value;
}

/* Keeps the first of each run of equal keys; returns the count left. */
static size_t drop_duplicates(tb_da_key_t *k, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!m || k[m - 1].len != k[i].len ||
            memcmp(k[m - 1].s, k[i].s, k[i].len))
            k[m++] = k[i];
    return m;
}

/* The search over the array built below: with TB_DA_NUL_FAR (a piece may
 * hold any bytes, NUL too) it is direct below 2^21 units.  The base
 * readers count matches past `max`; tok_prefix_fn returns those written. */
static size_t da_prefixes(const void *index, const uint8_t *s, size_t n,
                          tok_prefix_hit_t *out, size_t max)
{
    const tb_da_t *d = index;
    size_t found = d->direct ? tb_da_prefixes_direct(d, s, n, out, max)
                             : tb_da_prefixes(d, s, n, out, max);
    return found < max ? found : max;
}

int tok_unigram_indexed(const tok_vocab_t *v, uint32_t id)
{
    return (v->kind[id] == TOK_NORMAL || v->kind[id] == TOK_USER) &&
           v->offset[id + 1] > v->offset[id];
}

int tok_unigram_build_index(tok_tokenizer_t *t, tb_err_t *err)
{
    const tok_vocab_t *v = &t->vocab;
    tb_da_key_t *keys = malloc(sizeof *keys * (v->size ? v->size : 1));
    tb_da_t *d = calloc(1, sizeof *d);
    if (!keys || !d) {
        free(keys);
        free(d);
        return tb_fail(err, "unigram: out of memory building the index");
    }
    size_t n = 0;
    for (uint32_t id = 0; id < v->size; id++) {
        size_t len;
        const uint8_t *s = tok_vocab_token(v, id, &len);
        if (tok_unigram_indexed(v, id))
            keys[n++] = (tb_da_key_t){s, (uint32_t)len, id};
    }
    qsort(keys, n, sizeof *keys, key_cmp);
    /* glibc's qsort sorts through a copy of the keys (128 KB for 8,000),
     * whose pages the double array's growth would otherwise add to */
    malloc_trim(0);
    n = drop_duplicates(keys, n);
    int rc = tb_da_build(d, keys, n, TB_DA_NUL_FAR, err);
    free(keys);
    if (rc) {
        free(d);
        return tb_wrap(err, "unigram: building the prefix index");
    }
    tok_unigram_use_index(t, d, 0);
    return 0;
}

void tok_unigram_use_index(tok_tokenizer_t *t, tb_da_t *d, int borrowed)
{
    t->unigram.own_index = d;
    t->unigram.index_borrowed = borrowed;
    t->unigram.prefix_index = d;
    t->unigram.prefix = da_prefixes;
}

void tok_unigram_free(tok_unigram_t *u)
{
    tb_da_t *d = u->own_index;
    if (d && !u->index_borrowed)
        tb_da_free(d);
    free(d);
    u->own_index = NULL;
}

/* ---- Viterbi -------------------------------------------------------- */

typedef struct {
    float score;      /* best path score ending here */
    int32_t start;    /* where the last piece of that path starts, -1: none */
    int32_t id;
} best_t;

/* SentencePiece's OneCharLen: the length the lead byte announces. */
static inline size_t one_char_len(uint8_t c)
{
    static const uint8_t len[16] = {1, 1, 1, 1, 1, 1, 1, 1,
                                    1, 1, 1, 1, 2, 2, 3, 4};
    return len[c >> 4];
}

static inline void relax(best_t *b, float cand, int32_t start, int32_t id)
{
    if (b->start < 0 || cand > b->score)
        *b = (best_t){cand, start, id};
}

static void viterbi(const tok_tokenizer_t *t, const uint8_t *w, size_t n,
                    best_t *best, tok_prefix_hit_t *hits, size_t max_hits)
{
    const tok_unigram_t *u = &t->unigram;
    const float *score = t->vocab.score;
    const uint8_t *kind = t->vocab.kind;
    for (size_t i = 0; i <= n; i++)
        best[i] = (best_t){0, -1, -1};
    for (size_t at = 0; at < n;) {
        size_t mblen = one_char_len(w[at]);
        if (mblen > n - at)
            mblen = n - at;
        const float here = best[at].score;
        size_t window = n - at < u->max_piece_len ? n - at : u->max_piece_len;
        size_t nh = u->prefix(u->prefix_index, w + at, window, hits, max_hits);
        int single = 0;
        for (size_t h = 0; h < nh; h++) {
            best_t *b = &best[at + hits[h].len];
            int32_t id = hits[h].id;
            /* SentencePiece's `cond ? double : float` makes every piece
             * score a double, so candidates are summed and compared in
             * double and stored as float; that decides near-ties. */
            double sc = kind[id] == TOK_USER
                            ? (double)((float)hits[h].len * u->max_score) - 0.1
                            : (double)score[id];
            double cand = sc + (double)here;
            if (b->start < 0 || cand > (double)b->score)
                *b = (best_t){(float)cand, (int32_t)at, id};
            single |= hits[h].len == mblen;
        }
        if (!single)
            relax(&best[at + mblen], here + u->unk_penalty, (int32_t)at, u->unk);
        at += mblen;
    }
}

/* Appends the ids of the best path: backtracked into (start, id) pairs,
 * then emitted forwards. */
static int emit(const tok_tokenizer_t *t, const uint8_t *w, size_t n,
                best_t *best, tok_ids_t *out)
{
    const tok_unigram_t *u = &t->unigram;
    size_t count = 0;
    for (size_t end = n; end > 0; end = (size_t)best[end].start)
        count++;
    int32_t (*path)[2] = malloc((count ? count : 1) * sizeof *path);
    if (!path)
        return -1;
    size_t k = count;
    for (size_t end = n; end > 0; end = (size_t)best[end].start) {
        k--;
        path[k][0] = best[end].start;
        path[k][1] = best[end].id;
    }
    int prev_unk = 0, rc = 0;
    for (size_t i = 0; i < count && rc == 0; i++) {
        size_t start = (size_t)path[i][0];
        size_t end = i + 1 < count ? (size_t)path[i + 1][0] : n;
        int32_t id = path[i][1];
        int is_unk = id == u->unk;
        if (is_unk && u->byte_fallback) {
            for (size_t j = start; j < end && rc == 0; j++)
                rc = tb_vec_push(out, (uint32_t)u->byte_piece[w[j]]);
        } else if (!(is_unk && prev_unk)) {
            rc = tb_vec_push(out, (uint32_t)id);
        }
        prev_unk = is_unk;
    }
    free(path);
    return rc;
}

int tok_unigram_word(const tok_tokenizer_t *t, tok_state_t *st, const uint8_t *w,
                     size_t n, tok_ids_t *out, tb_err_t *err)
{
    const tok_unigram_t *u = &t->unigram;
    if (!u->prefix)
        return tb_fail(err, "unigram: no prefix index (model not loaded)");
    if (n == 0)
        return 0;
    if (n >= INT32_MAX)
        return tb_fail(err, "unigram: a %zu-byte word is too long", n);
    size_t max_hits = u->max_piece_len + 1;
    size_t need = (n + 1) * sizeof(best_t) + max_hits * sizeof(tok_prefix_hit_t);
    if (need > st->viterbi_cap) {
        void *p = realloc(st->viterbi, need);
        if (!p)
            return tb_fail(err, "unigram: out of memory for a %zu-byte word", n);
        st->viterbi = p;
        st->viterbi_cap = need;
    }
    best_t *best = st->viterbi;
    tok_prefix_hit_t *hits = (tok_prefix_hit_t *)(best + n + 1);
    viterbi(t, w, n, best, hits, max_hits);
    if (emit(t, w, n, best, out))
        return tb_fail(err, "unigram: out of memory");
    return 0;
}
