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
 * a plain double array (base + label, check) built at load time.
 */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "tok_internal.h"

/* ---- default prefix index: a double array --------------------------- */

typedef struct {
    int32_t base;  /* children of this node are at base + byte */
    int32_t check; /* parent node, -1 for a free cell */
    int32_t value; /* piece id ending here, or -1 */
} da_cell_t;

typedef struct {
    da_cell_t *cell;
    uint32_t size;
} da_t;

/* A temporary linked trie the double array is laid out from. */
typedef struct {
    int32_t child, sibling, value;
    uint8_t label;
} lt_node_t;
typedef TB_VEC(lt_node_t) lt_t;

static int lt_insert(lt_t *t, const uint8_t *s, size_t n, int32_t id)
{
    int32_t node = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t c = t->data[node].child;
        while (c >= 0 && t->data[c].label != s[i])
            c = t->data[c].sibling;
        if (c < 0) {
            lt_node_t nn = {-1, t->data[node].child, -1, s[i]};
            if (tb_vec_push(t, nn))
                return -1;
            c = (int32_t)t->len - 1;
            t->data[node].child = c;
        }
        node = c;
    }
    if (t->data[node].value < 0) /* the lowest id wins, as in SentencePiece */
        t->data[node].value = id;
    return 0;
}

/* The builder: the array being filled, and for every cell the smallest
 * free cell at or after it (a union-find with path halving), so that the
 * search for a base only ever looks at free cells. */
typedef struct {
    da_t *d;
    uint32_t *next_free;
} da_builder_t;

static int da_reserve(da_builder_t *bd, uint32_t need)
{
    da_t *d = bd->d;
    if (need <= d->size)
        return 0;
    uint32_t cap = d->size ? d->size : 1024;
    while (cap < need)
        cap *= 2;
    da_cell_t *c = realloc(d->cell, (size_t)cap * sizeof *c);
    if (!c)
        return -1;
    d->cell = c;
    uint32_t *nf = realloc(bd->next_free, (size_t)(cap + 1) * sizeof *nf);
    if (!nf)
        return -1;
    bd->next_free = nf;
    for (uint32_t i = d->size; i < cap; i++) {
        c[i] = (da_cell_t){0, -1, -1};
        nf[i] = i;
    }
    nf[cap] = cap; /* past the end: free, grown on demand */
    d->size = cap;
    return 0;
}

static uint32_t da_free_from(da_builder_t *bd, uint32_t i)
{
    uint32_t *nf = bd->next_free;
    while (nf[i] != i) {
        nf[i] = nf[nf[i]];
        i = nf[i];
    }
    return i;
}

static void da_occupy(da_builder_t *bd, uint32_t i, da_cell_t cell)
{
    bd->d->cell[i] = cell;
    bd->next_free[i] = i + 1;
}

/* Finds a base where every child label of lt node `n` lands on a free
 * cell, trying only bases that put the smallest label on a free cell. */
static int da_place(da_builder_t *bd, const lt_t *t, int32_t n, int32_t *base)
{
    uint8_t min = 255;
    for (int32_t c = t->data[n].child; c >= 0; c = t->data[c].sibling)
        min = t->data[c].label < min ? t->data[c].label : min;
    for (uint32_t p = da_free_from(bd, (uint32_t)min + 1);;
         p = da_free_from(bd, p + 1)) {
        uint32_t b = p - min;
        if (da_reserve(bd, b + 256))
            return -1;
        int ok = 1;
        for (int32_t c = t->data[n].child; ok && c >= 0; c = t->data[c].sibling)
            ok = bd->d->cell[b + t->data[c].label].check < 0;
        if (ok) {
            *base = (int32_t)b;
            return 0;
        }
    }
}

/* Lays the linked trie out breadth first; da index of lt node i in map[i]. */
static int da_build(da_t *d, const lt_t *t)
{
    da_builder_t bd = {d, NULL};
    int32_t *map = malloc(t->len * sizeof *map);
    int32_t *queue = malloc(t->len * sizeof *queue);
    int rc = -1;
    if (!map || !queue || da_reserve(&bd, 256))
        goto out;
    da_occupy(&bd, 0, (da_cell_t){0, 0, t->data[0].value});
    map[0] = 0;
    size_t head = 0, tail = 0;
    queue[tail++] = 0;
    while (head < tail) {
        int32_t n = queue[head++];
        if (t->data[n].child < 0)
            continue;
        int32_t base;
        if (da_place(&bd, t, n, &base))
            goto out;
        d->cell[map[n]].base = base;
        for (int32_t c = t->data[n].child; c >= 0; c = t->data[c].sibling) {
            int32_t at = base + t->data[c].label;
            da_occupy(&bd, (uint32_t)at, (da_cell_t){0, map[n], t->data[c].value});
            map[c] = at;
            queue[tail++] = c;
        }
    }
    rc = 0;
out:
    free(bd.next_free);
    free(map);
    free(queue);
    return rc;
}

static size_t da_prefixes(const void *index, const uint8_t *s, size_t n,
                          tok_prefix_hit_t *out, size_t max)
{
    const da_t *d = index;
    const da_cell_t *cell = d->cell;
    size_t hits = 0;
    uint32_t node = 0;
    for (size_t i = 0; i < n && hits < max; i++) {
        uint32_t next = (uint32_t)cell[node].base + s[i];
        if (next >= d->size || cell[next].check != (int32_t)node)
            break;
        node = next;
        if (cell[node].value >= 0)
            out[hits++] = (tok_prefix_hit_t){cell[node].value, (uint32_t)i + 1};
    }
    return hits;
}

int tok_unigram_indexed(const tok_vocab_t *v, uint32_t id)
{
    return (v->kind[id] == TOK_NORMAL || v->kind[id] == TOK_USER) &&
           v->offset[id + 1] > v->offset[id];
}

int tok_unigram_build_index(tok_tokenizer_t *t, tb_err_t *err)
{
    const tok_vocab_t *v = &t->vocab;
    lt_t lt = {0};
    da_t *d = calloc(1, sizeof *d);
    lt_node_t root = {-1, -1, -1, 0};
    int rc = -1;
    if (!d || tb_vec_push(&lt, root))
        goto out;
    for (uint32_t id = 0; id < v->size; id++) {
        size_t len;
        const uint8_t *s = tok_vocab_token(v, id, &len);
        if (tok_unigram_indexed(v, id) && lt_insert(&lt, s, len, (int32_t)id))
            goto out;
    }
    if (da_build(d, &lt))
        goto out;
    t->unigram.own_index = d;
    t->unigram.prefix_index = d;
    t->unigram.prefix = da_prefixes;
    d = NULL;
    rc = 0;
out:
    free(lt.data);
    if (d)
        free(d->cell);
    free(d);
    return rc ? tb_fail(err, "unigram: out of memory building the index") : 0;
}

void tok_unigram_free(tok_unigram_t *u)
{
    da_t *d = u->own_index;
    if (d)
        free(d->cell);
    free(d);
    free(u->scratch);
    u->own_index = u->scratch = NULL;
    u->scratch_cap = 0;
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

int tok_unigram_word(tok_tokenizer_t *t, const uint8_t *w, size_t n,
                     tok_ids_t *out, tb_err_t *err)
{
    tok_unigram_t *u = &t->unigram;
    if (!u->prefix)
        return tb_fail(err, "unigram: no prefix index (model not loaded)");
    if (n == 0)
        return 0;
    if (n >= INT32_MAX)
        return tb_fail(err, "unigram: a %zu-byte word is too long", n);
    size_t max_hits = u->max_piece_len + 1;
    size_t need = (n + 1) * sizeof(best_t) + max_hits * sizeof(tok_prefix_hit_t);
    if (need > u->scratch_cap) {
        void *p = realloc(u->scratch, need);
        if (!p)
            return tb_fail(err, "unigram: out of memory for a %zu-byte word", n);
        u->scratch = p;
        u->scratch_cap = need;
    }
    best_t *best = u->scratch;
    tok_prefix_hit_t *hits = (tok_prefix_hit_t *)(best + n + 1);
    viterbi(t, w, n, best, hits, max_hits);
    if (emit(t, w, n, best, out))
        return tb_fail(err, "unigram: out of memory");
    return 0;
}
