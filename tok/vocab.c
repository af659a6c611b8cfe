/* vocab: building, checksumming and freeing vocabularies (see vocab.h). */
#include "vocab.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "../base/buf.h"
#include "../base/sha256.h"

/* 16 bytes a token, which a loader's peak holds beside the file (Llama
 * 2's GGUF: 32k of them, 24 bytes each before) where the builder is not
 * direct (below): offsets fit 32 bits, as a vocabulary's do, and a token
 * TOK_TOKEN_MAX_LEN bytes. */
typedef struct {
    uint32_t id;
    uint32_t at; /* offset of the bytes in the builder's pool */
    float score;
    uint16_t len;
    uint8_t kind, special;
} pending_t;

/* A builder that was given bounds (tok_vocab_builder_reserve) writes the
 * tokens straight into the vocabulary's own block, laid out for `cap`
 * ids and `cap_bytes` bytes, for as long as they come in ascending ids
 * within those bounds, as every reserving loader's files give them: no
 * pending_t beside the arrays, and nothing to copy at the end (cl100k's
 * cold peak held 1.6 MB of them beside 1.7 MB of arrays).  The first
 * token out of order or past a bound moves what was written into
 * `tokens` and `pool` (spill), and the builder goes on as one that was
 * not given bounds. */
typedef struct {
    tok_vocab_t v;   /* arrays at capacity: offset[cap + 1], score[cap],
                      * bytes[cap_bytes], kind[cap], special[cap] */
    uint32_t cap, next; /* next: one past the highest id written */
    size_t cap_bytes, nbytes, count;
} direct_t;

struct tok_vocab_builder {
    TB_VEC(pending_t) tokens;
    tb_buf_t pool;
    uint32_t max_id;
    direct_t d; /* d.v.offset NULL: not (or no longer) direct */
};

/* A kind no token has: an id the direct block has not been given. */
enum { NOT_GIVEN = 0 };

tok_vocab_builder_t *tok_vocab_builder_new(void)
{
    return calloc(1, sizeof(tok_vocab_builder_t));
}

void tok_vocab_builder_free(tok_vocab_builder_t *b)
{
    if (!b)
        return;
    free(b->tokens.data);
    tb_buf_free(&b->pool);
    free(b->d.v.offset);
    free(b);
}

/* Points v's arrays into block p laid out for cap ids and cap_bytes bytes
 * (a vocabulary's own layout, alloc_arrays', where the caps are its sizes). */
static void lay_out(tok_vocab_t *v, uint8_t *p, size_t cap, size_t cap_bytes)
{
    v->offset = (uint32_t *)p;
    v->score = (float *)(p + (cap + 1) * sizeof *v->offset);
    v->bytes = (uint8_t *)(v->score + cap);
    v->kind = v->bytes + cap_bytes;
    v->special = v->kind + cap;
}

static size_t block_size(size_t cap, size_t cap_bytes)
{
    return (cap + 1) * sizeof(uint32_t) + cap * sizeof(float) + cap_bytes + 2 * cap;
}

void tok_vocab_builder_reserve(tok_vocab_builder_t *b, size_t tokens,
                               size_t bytes)
{
    direct_t *d = &b->d;
    if (!b->tokens.len && !d->v.offset && bytes && tokens < TOK_VOCAB_MAX_SIZE &&
        bytes <= UINT32_MAX) {
        uint8_t *p = tb_alloc_big(block_size(tokens, bytes));
        if (p) { /* only the pages written are memory */
            lay_out(&d->v, p, tokens, bytes);
            d->cap = (uint32_t)tokens;
            d->cap_bytes = bytes;
            d->v.offset[0] = 0;
            return;
        }
    }
    (void)tb_vec_reserve_big(&b->tokens, tokens);
    (void)tb_vec_reserve_big(&b->pool, bytes);
}

/* What the direct block holds into tokens and pool, reserved to the bounds
 * it was given; the builder is no longer direct. */
static int spill(tok_vocab_builder_t *b)
{
    direct_t *d = &b->d;
    /* the bounds, as a builder that was never direct reserves them */
    (void)tb_vec_reserve_big(&b->tokens, d->cap);
    (void)tb_vec_reserve_big(&b->pool, d->cap_bytes);
    if (tb_vec_reserve(&b->tokens, d->count) || tb_vec_reserve(&b->pool, d->nbytes))
        return -1;
    if (d->nbytes)
        memcpy(b->pool.data, d->v.bytes, d->nbytes);
    b->pool.len = d->nbytes;
    d->v.offset[d->next] = (uint32_t)d->nbytes;
    for (uint32_t id = 0; id < d->next; id++)
        if (d->v.kind[id] != NOT_GIVEN)
            b->tokens.data[b->tokens.len++] = (pending_t){
                .id = id, .at = d->v.offset[id], .score = d->v.score[id],
                .len = (uint16_t)(d->v.offset[id + 1] - d->v.offset[id]),
                .kind = d->v.kind[id], .special = d->v.special[id]};
    b->max_id = d->next ? d->next - 1 : 0;
    free(d->v.offset);
    memset(d, 0, sizeof *d);
    return 0;
}

/* Writes the token into the direct block; 1 where it does not go there
 * (an id not above the last, or past a bound). */
static int add_direct(direct_t *d, uint32_t id, const uint8_t *bytes, size_t len,
                      float score, tok_kind_t kind, int special)
{
    if (id < d->next || id >= d->cap || len > d->cap_bytes - d->nbytes)
        return 1;
    tok_vocab_t *v = &d->v;
    for (uint32_t gap = d->next; gap < id; gap++) {
        v->offset[gap] = (uint32_t)d->nbytes;
        v->score[gap] = 0;
        v->kind[gap] = NOT_GIVEN;
        v->special[gap] = 0;
    }
    v->offset[id] = (uint32_t)d->nbytes;
    if (len)
        memcpy(v->bytes + d->nbytes, bytes, len);
    v->score[id] = score;
    v->kind[id] = (uint8_t)kind;
    v->special[id] = (uint8_t)(special != 0);
    d->nbytes += len;
    d->next = id + 1;
    d->count++;
    return 0;
}

int tok_vocab_add(tok_vocab_builder_t *b, uint32_t id, const uint8_t *bytes,
                  size_t len, float score, tok_kind_t kind, int special,
                  tb_err_t *err)
{
    if (id >= TOK_VOCAB_MAX_SIZE)
        return tb_fail(err, "token id %u is past the limit of %u ids", id,
                       TOK_VOCAB_MAX_SIZE);
    if (len > TOK_TOKEN_MAX_LEN)
        return tb_fail(err, "token %u is %zu bytes long, over the limit of %u",
                       id, len, TOK_TOKEN_MAX_LEN);
    if (b->d.v.offset) {
        if (!add_direct(&b->d, id, bytes, len, score, kind, special))
            return 0;
        if (spill(b))
            return tb_fail(err, "out of memory adding token %u", id);
    }
    if (b->pool.len + len > UINT32_MAX)
        return tb_fail(err, "token %u: more than 4 GiB of token bytes", id);
    pending_t t = {.id = id, .at = (uint32_t)b->pool.len, .score = score,
                   .len = (uint16_t)len, .kind = (uint8_t)kind,
                   .special = (uint8_t)(special != 0)};
    if (tb_buf_put(&b->pool, bytes, len) || tb_vec_push(&b->tokens, t))
        return tb_fail(err, "out of memory adding token %u", id);
    if (id > b->max_id)
        b->max_id = id;
    return 0;
}

static int by_id(const void *a, const void *b)
{
    uint32_t x = ((const pending_t *)a)->id, y = ((const pending_t *)b)->id;
    return (x > y) - (x < y);
}

/* The five arrays in one block, offset first (its address is the
 * block's, which tok_vocab_free frees), then score, bytes, kind and
 * special: Llama 3's are 2.3 MB, faulted in 2 MiB pages (tb_alloc_big)
 * rather than 560 of 4 KiB. */
static int alloc_arrays(tok_vocab_t *v, uint32_t size, size_t nbytes)
{
    uint8_t *p = tb_alloc_big(block_size(size, nbytes));
    if (!p)
        return -1;
    v->size = size;
    lay_out(v, p, size, nbytes);
    memset(p, 0, (size_t)(v->bytes - p)); /* offsets and scores */
    memset(v->special, 0, size);
    return 0;
}

/* by_bytes holds every token but the unused empty ones. */
static int indexed(const tok_vocab_t *v, uint32_t id)
{
    return v->kind[id] != TOK_UNUSED || v->offset[id + 1] != v->offset[id];
}

/* count: how many tokens the file gave (ids may leave gaps) */
static int index_tokens(tok_vocab_t *v, size_t count)
{
    for (int b = 0; b < 256; b++)
        v->byte_id[b] = -1;
    /* Byte pieces win over plain one-byte tokens for byte_id: they are what
     * byte fallback emits. Ascending ids keep the lowest id per byte. */
    for (uint32_t id = 0; id < v->size; id++) {
        size_t len;
        const uint8_t *s = tok_vocab_token(v, id, &len);
        if (len == 1 && (v->byte_id[s[0]] < 0 ||
                         (v->kind[id] == TOK_BYTE &&
                          v->kind[v->byte_id[s[0]]] != TOK_BYTE)))
            v->byte_id[s[0]] = (int32_t)id;
    }
    /* ascending ids: the lowest id of a string stays */
    return tok_index_build(&v->by_bytes, v, count, indexed);
}

/* The direct block made v: each array moved down to follow the one before
 * it at its real size (alloc_arrays' layout), the rest given back; ids
 * never given become TOK_UNUSED.  Frees b. */
static int finish_direct(tok_vocab_builder_t *b, tok_vocab_t *v)
{
    direct_t d = b->d;
    b->d.v.offset = NULL; /* the block is v's now */
    tok_vocab_builder_free(b);
    const tok_vocab_t *at = &d.v; /* where the arrays are now */
    uint32_t size = d.next;
    at->offset[size] = (uint32_t)d.nbytes;
    lay_out(v, (uint8_t *)at->offset, size, d.nbytes);
    /* each goes down, so in this order none overwrites one still to move */
    memmove(v->score, at->score, size * sizeof *v->score);
    memmove(v->bytes, at->bytes, d.nbytes);
    memmove(v->kind, at->kind, size);
    memmove(v->special, at->special, size);
    for (uint32_t id = 0; id < size; id++)
        if (v->kind[id] == NOT_GIVEN)
            v->kind[id] = TOK_UNUSED;
    uint8_t *p = realloc(v->offset, block_size(size, d.nbytes));
    if (p) /* shrinking; where it moved, the arrays came with it */
        lay_out(v, p, size, d.nbytes);
    v->size = size;
    return 0;
}

int tok_vocab_finish_unindexed(tok_vocab_builder_t *b, tok_vocab_t *v,
                               tb_err_t *err)
{
    memset(v, 0, sizeof *v);
    v->bos = v->eos = v->unk = v->pad = -1;
    if (b->d.v.offset)
        return finish_direct(b, v);
    uint32_t size = b->tokens.len ? b->max_id + 1 : 0;
    if (!tb_sorted(b->tokens.data, b->tokens.len, sizeof *b->tokens.data, by_id))
        qsort(b->tokens.data, b->tokens.len, sizeof *b->tokens.data, by_id);
    for (size_t i = 1; i < b->tokens.len; i++)
        if (b->tokens.data[i].id == b->tokens.data[i - 1].id) {
            tb_fail(err, "token id %u is given twice", b->tokens.data[i].id);
            tok_vocab_builder_free(b);
            return -1;
        }
    if (alloc_arrays(v, size, b->pool.len)) {
        tok_vocab_builder_free(b);
        tok_vocab_free(v);
        return tb_fail(err, "out of memory for a vocabulary of %u ids", size);
    }
    memset(v->kind, TOK_UNUSED, size);
    size_t at = 0, next = 0;
    for (uint32_t id = 0; id < size; id++) {
        v->offset[id] = (uint32_t)at;
        if (next < b->tokens.len && b->tokens.data[next].id == id) {
            const pending_t *t = &b->tokens.data[next++];
            if (t->len) /* tokens all empty: no pool at all */
                memcpy(v->bytes + at, b->pool.data + t->at, t->len);
            at += t->len;
            v->score[id] = t->score;
            v->kind[id] = t->kind;
            v->special[id] = t->special;
        }
    }
    v->offset[size] = (uint32_t)at;
    /* The builder goes before the index is made, and its pages back to
     * the system: glibc keeps freed blocks below its mmap threshold, which
     * earlier frees of a load raise to megabytes, so the index would be
     * new memory beside them (Llama 3's peak 30.3 -> 27.4 MB). */
    tok_vocab_builder_free(b);
    malloc_trim(0);
    return 0;
}

int tok_vocab_index(tok_vocab_t *v, size_t count, tb_err_t *err)
{
    if (index_tokens(v, count)) {
        tok_vocab_free(v);
        return tb_fail(err, "out of memory for a vocabulary of %u ids", v->size);
    }
    return 0;
}

int tok_vocab_finish(tok_vocab_builder_t *b, tok_vocab_t *v, tb_err_t *err)
{
    size_t count = b->d.v.offset ? b->d.count : b->tokens.len;
    return tok_vocab_finish_unindexed(b, v, err) ? -1
                                                 : tok_vocab_index(v, count, err);
}

void tok_vocab_free(tok_vocab_t *v)
{
    free(v->offset); /* the block of all five arrays (alloc_arrays) */
    tok_index_free(&v->by_bytes);
    memset(v, 0, sizeof *v);
}

/* ---- the index by bytes --------------------------------------------- */

enum { STEP = 32 }; /* tokens of a batch, whose cache misses overlap */

/* A key's tag, from the hash's low bits (its high bits choose the first
 * slot), never 0xFF, so that no slot is all ones but an empty one. */
static inline uint32_t index_tag(uint64_t h)
{
    uint32_t t = (uint32_t)h & 0xFF;
    return (t == 0xFF ? 0xFE : t) << 24;
}

static int slot_holds(tok_index_slot_t s, const tok_vocab_t *v,
                      const uint8_t *key, size_t len, uint32_t tag)
{
    if ((s & TOK_INDEX_TAG_MASK) != tag)
        return 0;
    size_t n;
    const uint8_t *b = tok_vocab_token(v, tok_index_slot_id(s), &n);
    return n == len && tb_same_bytes(b, key, len);
}

/* The slot of key (hash h), or the empty slot where it would go, probing
 * from slot i on. */
static tok_index_slot_t *index_find(const tok_index_t *x, const tok_vocab_t *v,
                                    const uint8_t *key, size_t len,
                                    uint64_t h, size_t i)
{
    uint32_t tag = index_tag(h);
    for (;; i = i + 1 < x->size ? i + 1 : 0) {
        tok_index_slot_t *s = &x->slots[i];
        if (*s == TOK_INDEX_EMPTY || slot_holds(*s, v, key, len, tag))
            return s;
    }
}

int tok_index_build(tok_index_t *x, const tok_vocab_t *v, size_t expected,
                    int (*keep)(const tok_vocab_t *v, uint32_t id))
{
    size_t n = expected + expected / 2 + 2; /* at most 2/3 full, one free */
    x->slots = tb_alloc_big(n * sizeof *x->slots);
    x->size = n;
    x->count = 0;
    if (!x->slots)
        return -1;
    memset(x->slots, 0xFF, n * sizeof *x->slots);
    uint32_t ids[STEP];
    uint64_t h[STEP];
    for (uint32_t at = 0; at < v->size;) {
        size_t k = 0;
        for (; k < STEP && at < v->size; at++)
            if (keep(v, at))
                ids[k++] = at;
        for (size_t i = 0; i < k; i++) {
            size_t len;
            const uint8_t *s = tok_vocab_token(v, ids[i], &len);
            h[i] = tb_hash(s, len);
            __builtin_prefetch(&x->slots[tok_index_first(x, h[i])]);
        }
        for (size_t i = 0; i < k; i++) {
            if (x->count == expected)
                return -1; /* more than `expected`: a caller's mistake */
            size_t len;
            const uint8_t *s = tok_vocab_token(v, ids[i], &len);
            tok_index_slot_t *slot = index_find(x, v, s, len, h[i], tok_index_first(x, h[i]));
            if (*slot == TOK_INDEX_EMPTY) {
                *slot = index_tag(h[i]) | ids[i];
                x->count++;
            }
        }
    }
    return 0;
}

void tok_index_free(tok_index_t *x)
{
    free(x->slots);
    x->slots = NULL;
}

int32_t tok_index_get_hashed(const tok_index_t *x, const tok_vocab_t *v,
                             const uint8_t *s, size_t n, uint64_t h)
{
    tok_index_slot_t slot = *index_find(x, v, s, n, h, tok_index_first(x, h));
    return slot == TOK_INDEX_EMPTY ? -1 : (int32_t)tok_index_slot_id(slot);
}

int32_t tok_index_get(const tok_index_t *x, const tok_vocab_t *v,
                      const uint8_t *s, size_t n)
{
    return tok_index_get_hashed(x, v, s, n, tb_hash(s, n));
}

void tok_index_get_many(const tok_index_t *x, const tok_vocab_t *v, size_t n,
                        const uint8_t *const *keys, const size_t *lens,
                        int32_t *ids)
{
    uint64_t h[STEP];
    size_t first[STEP];
    for (size_t at = 0; at < n; at += STEP) {
        size_t k = n - at < STEP ? n - at : STEP;
        for (size_t i = 0; i < k; i++) {
            h[i] = tb_hash(keys[at + i], lens[at + i]);
            __builtin_prefetch(&x->slots[tok_index_first(x, h[i])]);
        }
        /* the first slot with the right tag most likely holds the token:
         * fetch its bytes before any comparison waits on them */
        for (size_t i = 0; i < k; i++) {
            size_t j = tok_index_first(x, h[i]);
            uint32_t tag = index_tag(h[i]);
            while (x->slots[j] != TOK_INDEX_EMPTY && (x->slots[j] & TOK_INDEX_TAG_MASK) != tag)
                j = j + 1 < x->size ? j + 1 : 0;
            if (x->slots[j] != TOK_INDEX_EMPTY)
                __builtin_prefetch(v->bytes + v->offset[tok_index_slot_id(x->slots[j])]);
            first[i] = j;
        }
        for (size_t i = 0; i < k; i++) {
            tok_index_slot_t s = *index_find(x, v, keys[at + i], lens[at + i], h[i], first[i]);
            ids[at + i] = s == TOK_INDEX_EMPTY ? -1 : (int32_t)tok_index_slot_id(s);
        }
    }
}

void tok_vocab_checksum(const tok_vocab_t *v, char hex[65])
{
    tb_sha256_t h;
    tb_sha256_init(&h);
    for (uint32_t id = 0; id < v->size; id++) {
        size_t len;
        const uint8_t *s = tok_vocab_token(v, id, &len);
        uint8_t head[5] = {v->kind[id], (uint8_t)(len >> 24), (uint8_t)(len >> 16),
                           (uint8_t)(len >> 8), (uint8_t)len};
        tb_sha256_update(&h, head, sizeof head);
        tb_sha256_update(&h, s, len);
    }
    uint8_t d[32];
    tb_sha256_final(&h, d);
    tb_hex(d, 32, hex);
}

/* GPT-2 maps the printable Latin-1 bytes (! .. ~, ¡ .. ¬, ® .. ÿ) to
 * themselves and the other 68 bytes, in order, to U+0100 upwards. */
static int gpt2_printable(int b)
{
    return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) ||
           (b >= 0xAE && b <= 0xFF);
}

uint32_t tok_gpt2_byte_to_cp(uint8_t b)
{
    if (gpt2_printable(b))
        return b;
    uint32_t n = 0;
    for (int i = 0; i < b; i++)
        n += !gpt2_printable(i);
    return 0x100 + n;
}

int tok_gpt2_cp_to_byte(uint32_t cp)
{
    if (cp < 0x100)
        return gpt2_printable((int)cp) ? (int)cp : -1;
    uint32_t n = 0;
    for (int b = 0; b < 256; b++)
        if (!gpt2_printable(b) && 0x100 + n++ == cp)
            return b;
    return -1;
}

long tok_gpt2_decode(const uint8_t *s, size_t len, uint8_t *out)
{
    static int16_t table[0x144]; /* code points 0 .. 0x143 cover the alphabet */
    static int ready;
    if (!ready) {
        for (uint32_t cp = 0; cp < 0x144; cp++)
            table[cp] = (int16_t)tok_gpt2_cp_to_byte(cp);
        ready = 1;
    }
    /* The alphabet's characters are one byte, or two with a lead of C2 to
     * C5: any other lead is outside it (or not UTF-8), so no general
     * decoder is needed (it was half of this on Llama 3's 128k tokens). */
    size_t n = 0;
    for (size_t i = 0; i < len; n++) {
        uint32_t cp = s[i];
        if (cp >= 0x80) {
            if (cp < 0xC2 || cp > 0xC5 || i + 1 == len || (s[i + 1] & 0xC0) != 0x80)
                return -1;
            cp = (cp & 0x1F) << 6 | (s[++i] & 0x3F);
        }
        i++;
        if (cp >= 0x144 || table[cp] < 0)
            return -1;
        out[n] = (uint8_t)table[cp];
    }
    return (long)n;
}
