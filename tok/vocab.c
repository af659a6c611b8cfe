/* vocab: building, checksumming and freeing vocabularies (see vocab.h). */
#include "vocab.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "../base/buf.h"
#include "../base/sha256.h"

/* 16 bytes a token, which a loader's peak holds beside the file (Llama
 * 2's GGUF: 32k of them, 24 bytes each before): offsets fit 32 bits, as
 * a vocabulary's do, and a token TOK_TOKEN_MAX_LEN bytes. */
typedef struct {
    uint32_t id;
    uint32_t at; /* offset of the bytes in the builder's pool */
    float score;
    uint16_t len;
    uint8_t kind, special;
} pending_t;

struct tok_vocab_builder {
    TB_VEC(pending_t) tokens;
    tb_buf_t pool;
    uint32_t max_id;
};

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
    free(b);
}

void tok_vocab_builder_reserve(tok_vocab_builder_t *b, size_t tokens,
                               size_t bytes)
{
    (void)tb_vec_reserve_big(&b->tokens, tokens);
    (void)tb_vec_reserve_big(&b->pool, bytes);
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
    size_t words = ((size_t)size + 1) * sizeof *v->offset + size * sizeof *v->score;
    uint8_t *p = tb_alloc_big(words + nbytes + 2 * (size_t)size);
    if (!p)
        return -1;
    v->size = size;
    v->offset = (uint32_t *)p;
    v->score = (float *)(p + ((size_t)size + 1) * sizeof *v->offset);
    v->bytes = p + words;
    v->kind = v->bytes + nbytes;
    v->special = v->kind + size;
    memset(p, 0, words);
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

int tok_vocab_finish_unindexed(tok_vocab_builder_t *b, tok_vocab_t *v,
                               tb_err_t *err)
{
    memset(v, 0, sizeof *v);
    v->bos = v->eos = v->unk = v->pad = -1;
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
    size_t count = b->tokens.len;
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

int32_t tok_index_get(const tok_index_t *x, const tok_vocab_t *v,
                      const uint8_t *s, size_t n)
{
    uint64_t h = tb_hash(s, n);
    tok_index_slot_t slot = *index_find(x, v, s, n, h, tok_index_first(x, h));
    return slot == TOK_INDEX_EMPTY ? -1 : (int32_t)tok_index_slot_id(slot);
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
