/*
 * hf_json: the loader for Hugging Face tokenizer.json files.
 *
 * Reads the model (read_model says which), the normalizer, pre-tokenizer and
 * decoder chains and the added tokens into a tok_tokenizer_t, so that the
 * shared encoder (encode.c) reproduces what the `tokenizers` library does.
 * Token strings become raw bytes here: byte-level files spell bytes in
 * GPT-2's alphabet, SentencePiece-style files write "<0xNN>" byte pieces and
 * U+2581 for a space.  The field names and their meaning follow the JSON
 * that `tokenizers` serializes (its serde layout, version 0.x).
 *
 * The models are BPE, Unigram, WordPiece and WordLevel; WordPiece's pieces
 * become wordpiece.c's: a space before a word-start piece, the continuing
 * prefix ("##") off the others.
 *
 * Every field read is type-checked, and a failure names the file and the
 * JSON path ("model.merges[12]") or the parser's line, column and byte.
 *
 * model.vocab and model.merges, nearly all of the file, and added_tokens
 * are read by a scanner (base/jsontext.h) into the entry, merge and added
 * arrays below, and jansson builds its tree of the rest: a tree of the
 * whole of Gemma 3's file took 2 s and 290 MB.  Whatever the scanner does not take as the
 * common shape (and any error of jansson after it) sends the whole file
 * through jansson instead, whose tree is read the same way, so errors
 * come out as one reader names them.
 */
#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../base/jsontext.h"
#include "charsmap.h"
#include "tok_internal.h"

#define META "\xE2\x96\x81" /* U+2581, SentencePiece's word marker */

/* One model.vocab entry before the vocabulary is built: 24 bytes, the
 * two 4-byte fields side by side (Gemma 3's 262k entries took 8 MB at 32). */
typedef struct {
    const char *s; /* borrowed from the JSON tree */
    size_t len;
    uint32_t id;
    float score;
} entry_t;

/* Merges waiting for their ids: left, right and left+right of merge i
 * are keys[3i ..] and their ids id[3i ..], filled at once where known
 * (short_id, merge_result).  The k others are looked up together at
 * resolve (tb_strmap_get_many): their strings are wait_keys[..k], their
 * places in id[] wait_at[..k]; a left+right among them is in the
 * context's scratch, at wait_cat[j] for the j-th (the scratch may move
 * until then). */
enum { MERGE_BATCH = 64, ID_WAITING = -2 };
typedef struct {
    size_t n, k, ncat;
    int missing; /* a string model.vocab lacks: resolve names the first */
    const uint8_t *keys[3 * MERGE_BATCH];
    size_t lens[3 * MERGE_BATCH];
    int32_t id[3 * MERGE_BATCH];
    const uint8_t *wait_keys[3 * MERGE_BATCH];
    size_t wait_lens[3 * MERGE_BATCH];
    uint16_t wait_at[3 * MERGE_BATCH];
    struct {
        size_t at;     /* in the scratch */
        uint16_t wait; /* its index in wait_keys */
    } wait_cat[MERGE_BATCH];
} merge_batch_t;

/* model.vocab's strings of at most two bytes by their bytes, the id plus
 * one of each (0: none): a fifth to a third of the strings that merges
 * name are that short, and this table (260 KB, its pages faulted only
 * where such strings are) answers them without a hash or a cache miss. */
enum { SHORT_KEYS = 1 + 256 + 65536 };

/* One added_tokens entry (content borrowed from the JSON tree). */
typedef struct {
    uint32_t id;
    const char *s;
    size_t len;
    uint8_t special, lstrip, rstrip, single_word, normalized;
} added_t;

typedef struct {
    const char *path;
    tb_err_t *err;
    tok_tokenizer_t *t;
    int byte_level;    /* strings use GPT-2's byte alphabet */
    int meta;          /* strings use U+2581 for a space */
    int byte_pieces;   /* "<0xNN>" pieces stand for bytes */
    int wordpiece;     /* WordPiece pieces (t->wordpiece.prefix) */
    TB_VEC(entry_t) vocab;
    TB_VEC(tok_merge_t) merges;
    merge_batch_t batch;
    uint32_t *short_id1; /* SHORT_KEYS entries, built with ids */
    int32_t last;      /* id of the last merge's left+right, -1 if unknown */
    int predicted;     /* merge_result found it */
    int scanned;       /* vocab, merges and ids came from the scanner */
    TB_VEC(added_t) added;
    tb_strmap_t ids;   /* BPE: model.vocab string (as written) -> id */
    tb_buf_t scratch;
} ctx_t;

__attribute__((format(printf, 2, 3))) static int fail(ctx_t *c,
                                                      const char *fmt, ...)
{
    char msg[TB_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tb_fail(c->err, "%s: %s", c->path, msg);
}

static const char *type_name(const json_t *j)
{
    if (!j)
        return "nothing";
    switch (json_typeof(j)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

/* ---- typed field access ---------------------------------------------- */

/* Field `key` of object `o` (at JSON path `where`) as a string; absent or
 * null gives *s = NULL when `optional`. */
static int get_str(ctx_t *c, const json_t *o, const char *where,
                   const char *key, int optional, const char **s, size_t *len)
{
    json_t *v = json_object_get(o, key);
    *s = NULL;
    *len = 0;
    if (!v || json_is_null(v)) {
        if (optional)
            return 0;
        return fail(c, "%s.%s: missing (expected a string)", where, key);
    }
    if (!json_is_string(v))
        return fail(c, "%s.%s: expected a string, got %s", where, key,
                    type_name(v));
    *s = json_string_value(v);
    *len = json_string_length(v);
    return 0;
}

/* Boolean field with a default for absent or null. */
static int get_bool(ctx_t *c, const json_t *o, const char *where,
                    const char *key, int dflt, int *b)
{
    json_t *v = json_object_get(o, key);
    *b = dflt;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_boolean(v))
        return fail(c, "%s.%s: expected a boolean, got %s", where, key,
                    type_name(v));
    *b = json_is_true(v);
    return 0;
}

/* Non-negative integer field with a default for absent or null. */
static int get_uint(ctx_t *c, const json_t *o, const char *where,
                    const char *key, long long dflt, long long *n)
{
    json_t *v = json_object_get(o, key);
    *n = dflt;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return fail(c, "%s.%s: expected a non-negative integer, got %s", where,
                    key, type_name(v));
    *n = json_integer_value(v);
    return 0;
}

static int is_type(const json_t *o, const char *name)
{
    const char *s = json_string_value(json_object_get(o, "type"));
    return s && !strcmp(s, name);
}

/* The "type" of a component object, checked. */
static int get_type(ctx_t *c, const json_t *o, const char *where,
                    const char **type)
{
    size_t len;
    if (!json_is_object(o))
        return fail(c, "%s: expected an object, got %s", where, type_name(o));
    return get_str(c, o, where, "type", 0, type, &len);
}

/* A {"String": s} or {"Regex": r} pattern; *regex tells which. */
static int get_pattern(ctx_t *c, const json_t *o, const char *where,
                       const char **s, size_t *len, int *regex)
{
    json_t *p = json_object_get(o, "pattern");
    if (!json_is_object(p))
        return fail(c, "%s.pattern: expected {\"String\": ...} or "
                       "{\"Regex\": ...}, got %s",
                    where, p ? type_name(p) : "nothing");
    *regex = json_object_get(p, "Regex") != NULL;
    char sub[256];
    snprintf(sub, sizeof sub, "%s.pattern", where);
    return get_str(c, p, sub, *regex ? "Regex" : "String", 0, s, len);
}

/* ---- token strings to raw bytes --------------------------------------- */

static int hex_digit(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    return -1;
}

/* The byte of a "<0xNN>" piece, or -1. */
static int byte_piece(const char *s, size_t len)
{
    if (len != 6 || memcmp(s, "<0x", 3) || s[5] != '>')
        return -1;
    int hi = hex_digit(s[3]), lo = hex_digit(s[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

/* Appends s with every U+2581 turned into a space (never longer than s:
 * room is made once, not byte by byte). */
static int put_unmeta(tb_buf_t *out, const char *s, size_t len)
{
    if (tb_buf_reserve(out, len))
        return -1;
    uint8_t *o = out->data + out->len;
    for (size_t i = 0; i < len;) {
        int meta = s[i] == META[0] && len - i >= 3 && s[i + 1] == META[1] &&
                   s[i + 2] == META[2];
        *o++ = meta ? ' ' : (uint8_t)s[i];
        i += meta ? 3 : 1;
    }
    out->len = (size_t)(o - out->data);
    return 0;
}

/* A WordPiece piece into c->scratch: " word" for a word-start piece, the
 * bare rest of a continuation.  A continuation whose rest starts with a
 * space would read as a word-start piece, so it is refused. */
static int wordpiece_bytes(ctx_t *c, const char *s, size_t len, int id)
{
    const tok_wordpiece_t *wp = &c->t->wordpiece;
    int cont = len >= wp->prefix_len && !memcmp(s, wp->prefix, wp->prefix_len);
    if (cont && len > wp->prefix_len && s[wp->prefix_len] == ' ')
        return fail(c, "model.vocab: token \"%.*s\" (id %d) is a continuation "
                       "that starts with a space, which is not supported",
                    len > 60 ? 60 : (int)len, s, id);
    if (cont ? tb_buf_put(&c->scratch, s + wp->prefix_len, len - wp->prefix_len)
             : tb_buf_putc(&c->scratch, ' ') || tb_buf_put(&c->scratch, s, len))
        return fail(c, "out of memory");
    return 0;
}

/* Raw bytes of a model vocabulary string into c->scratch; *kind is set to
 * TOK_BYTE for a byte piece. */
static int model_bytes(ctx_t *c, const char *s, size_t len, int id,
                       tok_kind_t *kind)
{
    c->scratch.len = 0;
    *kind = TOK_NORMAL;
    if (tb_buf_reserve(&c->scratch, len + 1))
        return fail(c, "out of memory");
    if (c->byte_level) {
        long n = tok_gpt2_decode((const uint8_t *)s, len, c->scratch.data);
        /* A string outside the alphabet (Command-R has 1,403, emoji and
         * symbols as plain text) is one no merge builds, so BPE never
         * emits it; the ByteLevel decoder gives its UTF-8, and so does
         * this.  One byte would take that byte's id from the alphabet's
         * token (byte_id keeps the lowest id), so it stays refused. */
        if (n < 0 && len > 1) {
            memcpy(c->scratch.data, s, len);
            n = (long)len;
        }
        if (n < 0)
            return fail(c, "model.vocab: token \"%.*s\" (id %d) has a "
                           "character outside GPT-2's byte alphabet",
                        len > 60 ? 60 : (int)len, s, id);
        c->scratch.len = (size_t)n;
        return 0;
    }
    int b = c->byte_pieces ? byte_piece(s, len) : -1;
    if (b >= 0) {
        *kind = TOK_BYTE;
        c->scratch.data[0] = (uint8_t)b;
        c->scratch.len = 1;
        return 0;
    }
    if (c->meta)
        return put_unmeta(&c->scratch, s, len) ? fail(c, "out of memory") : 0;
    if (c->wordpiece)
        return wordpiece_bytes(c, s, len, id);
    return tb_buf_put(&c->scratch, s, len) ? fail(c, "out of memory") : 0;
}

/* ---- JSON-wide conventions -------------------------------------------- */

/* Looks for a component of type `type` in a component tree (Sequence
 * members are under `list`). */
static int has_component(const json_t *o, const char *list, const char *type)
{
    if (!json_is_object(o))
        return 0;
    if (is_type(o, type))
        return 1;
    json_t *a = json_object_get(o, list);
    size_t i;
    json_t *x;
    json_array_foreach(a, i, x) if (has_component(x, list, type)) return 1;
    return 0;
}

/* Does any model.vocab string contain U+2581? */
static int vocab_uses_meta(const ctx_t *c)
{
    for (size_t i = 0; i < c->vocab.len; i++)
        if (memmem(c->vocab.data[i].s, c->vocab.data[i].len, META, 3))
            return 1;
    return 0;
}

/* ---- the model --------------------------------------------------------- */

static int check_id(ctx_t *c, const char *where, const json_t *v, uint32_t *id)
{
    if (!json_is_integer(v))
        return fail(c, "%s: expected an integer id, got %s", where,
                    type_name(v));
    json_int_t n = json_integer_value(v);
    if (n < 0 || n >= (json_int_t)TOK_VOCAB_MAX_SIZE)
        return fail(c, "%s: id %lld is outside 0 .. %u", where, (long long)n,
                    TOK_VOCAB_MAX_SIZE - 1);
    *id = (uint32_t)n;
    return 0;
}

static int read_bpe_vocab(ctx_t *c, json_t *v)
{
    if (!json_is_object(v))
        return fail(c, "model.vocab: expected an object of token -> id, got %s",
                    type_name(v));
    if (c->scanned)
        return 0;
    if (json_object_size(v) > TOK_VOCAB_MAX_SIZE)
        return fail(c, "model.vocab: %zu tokens, over the limit of %u",
                    json_object_size(v), TOK_VOCAB_MAX_SIZE);
    if (tb_vec_reserve(&c->vocab, json_object_size(v)))
        return fail(c, "out of memory");
    for (void *it = json_object_iter(v); it; it = json_object_iter_next(v, it)) {
        const char *k = json_object_iter_key(it);
        json_t *x = json_object_iter_value(it);
        entry_t e = {.s = k, .len = json_object_iter_key_len(it)};
        char where[96];
        snprintf(where, sizeof where, "model.vocab[\"%.60s\"]", k);
        if (check_id(c, where, x, &e.id))
            return -1;
        c->vocab.data[c->vocab.len++] = e;
    }
    return 0;
}

static int entry_item(const void *arg, size_t i, const uint8_t **key,
                      size_t *len, int32_t *val)
{
    const entry_t *e = (const entry_t *)arg + i;
    *key = (const uint8_t *)e->s;
    *len = e->len;
    *val = (int32_t)e->id;
    return 1;
}

static size_t short_key(const uint8_t *s, size_t len)
{
    return len == 0 ? 0 : len == 1 ? 1 + (size_t)s[0] : 257 + ((size_t)s[0] << 8 | s[1]);
}

/* The short strings' table, keeping the first entry of a string as the
 * map does. */
static int index_short(ctx_t *c)
{
    c->short_id1 = calloc(SHORT_KEYS, sizeof *c->short_id1);
    if (!c->short_id1)
        return -1;
    for (size_t i = 0; i < c->vocab.len; i++) {
        const entry_t *e = &c->vocab.data[i];
        uint32_t *slot = e->len <= 2 ? &c->short_id1[short_key(
                                           (const uint8_t *)e->s, e->len)]
                                     : NULL;
        if (slot && !*slot)
            *slot = e->id + 1;
    }
    return 0;
}

/* The string -> id map that merges are resolved with (faster than
 * jansson's own object lookup, which dominated loading Gemma's 515k
 * merges); returns how many strings were there twice, or -1. */
static long index_entries(ctx_t *c)
{
    c->last = -1;
    c->predicted = 1; /* the first merge's miss resolves it at once */
    if (tb_strmap_init(&c->ids, c->vocab.len) || index_short(c))
        return -1;
    return tb_strmap_put_all(&c->ids, c->vocab.len, entry_item, c->vocab.data);
}

/* The strings' maps have served (merges and unk are ids now). */
static void drop_ids(ctx_t *c)
{
    tb_strmap_free(&c->ids);
    free(c->short_id1);
    c->short_id1 = NULL;
}

static int index_bpe_vocab(ctx_t *c)
{
    if (c->scanned)
        return 0; /* scan_bpe_vocab made it */
    return index_entries(c) < 0 ? fail(c, "out of memory") : 0;
}

static int read_unigram_vocab(ctx_t *c, json_t *v)
{
    if (!json_is_array(v))
        return fail(c, "model.vocab: expected an array of [piece, score], "
                       "got %s", type_name(v));
    if (c->scanned)
        return 0;
    size_t n = json_array_size(v);
    if (n > TOK_VOCAB_MAX_SIZE)
        return fail(c, "model.vocab: %zu pieces, over the limit of %u", n,
                    TOK_VOCAB_MAX_SIZE);
    if (tb_vec_reserve(&c->vocab, n))
        return fail(c, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_t *p = json_array_get(v, i);
        json_t *s = json_array_get(p, 0), *sc = json_array_get(p, 1);
        if (!json_is_array(p) || json_array_size(p) != 2 ||
            !json_is_string(s) || !json_is_number(sc))
            return fail(c, "model.vocab[%zu]: expected [piece, score]", i);
        entry_t e = {.id = (uint32_t)i, .s = json_string_value(s),
                     .len = json_string_length(s),
                     .score = (float)json_number_value(sc)};
        c->vocab.data[c->vocab.len++] = e;
    }
    return 0;
}

static int entry_by_id(const void *a, const void *b)
{
    uint32_t x = ((const entry_t *)a)->id, y = ((const entry_t *)b)->id;
    return (x > y) - (x < y);
}

/* Sorts the entries by id and refuses an id given to two tokens. */
static int check_unique_ids(ctx_t *c)
{
    if (!tb_sorted(c->vocab.data, c->vocab.len, sizeof *c->vocab.data,
                   entry_by_id))
        qsort(c->vocab.data, c->vocab.len, sizeof *c->vocab.data, entry_by_id);
    for (size_t i = 1; i < c->vocab.len; i++)
        if (c->vocab.data[i].id == c->vocab.data[i - 1].id)
            return fail(c, "model.vocab: id %u is given to both \"%.60s\" "
                           "and \"%.60s\"",
                        c->vocab.data[i].id, c->vocab.data[i - 1].s,
                        c->vocab.data[i].s);
    return 0;
}

/* Id of a model.vocab string, or -1. */
static long vocab_id(ctx_t *c, const char *s, size_t len)
{
    return tb_strmap_get(&c->ids, (const uint8_t *)s, len);
}

/* One merge: "left right" or ["left", "right"]. */
static int merge_parts(ctx_t *c, json_t *m, size_t i, const char **l,
                       size_t *ll, const char **r, size_t *rl)
{
    if (json_is_string(m)) {
        const char *s = json_string_value(m);
        size_t len = json_string_length(m);
        const char *sp = memchr(s, ' ', len);
        if (!sp || memchr(sp + 1, ' ', len - (size_t)(sp + 1 - s)))
            return fail(c, "model.merges[%zu]: \"%.60s\" is not two tokens "
                           "separated by one space", i, s);
        *l = s;
        *ll = (size_t)(sp - s);
        *r = sp + 1;
        *rl = len - *ll - 1;
        return 0;
    }
    json_t *a = json_array_get(m, 0), *b = json_array_get(m, 1);
    if (!json_is_array(m) || json_array_size(m) != 2 || !json_is_string(a) ||
        !json_is_string(b))
        return fail(c, "model.merges[%zu]: expected \"a b\" or [\"a\", \"b\"]",
                    i);
    *l = json_string_value(a);
    *ll = json_string_length(a);
    *r = json_string_value(b);
    *rl = json_string_length(b);
    return 0;
}

/* The ids of the waiting merges onto c->merges; a string model.vocab
 * lacks fails, naming the first merge that has one. */
static int resolve_merges(ctx_t *c)
{
    merge_batch_t *b = &c->batch;
    int32_t ids[3 * MERGE_BATCH];
    /* a merge of two empty parts (" ") joins to no byte: the scratch may
     * then hold none, and have no array to point into */
    const uint8_t *joined = c->scratch.len ? c->scratch.data : (const uint8_t *)"";
    for (size_t j = 0; j < b->ncat; j++) {
        const uint8_t *cat = joined + b->wait_cat[j].at;
        b->wait_keys[b->wait_cat[j].wait] = cat;
        b->keys[b->wait_at[b->wait_cat[j].wait]] = cat;
    }
    if (b->k)
        tb_strmap_get_many(&c->ids, b->k, b->wait_keys, b->wait_lens, ids);
    for (size_t j = 0; j < b->k; j++) {
        b->id[b->wait_at[j]] = ids[j];
        b->missing |= ids[j] < 0;
    }
    size_t n = b->n;
    int missing = b->missing;
    b->n = b->k = b->ncat = 0;
    b->missing = 0;
    c->scratch.len = 0;
    for (size_t i = 0; missing && i < 3 * n; i++)
        if (b->id[i] < 0) {
            int len = b->lens[i] > 60 ? 60 : (int)b->lens[i];
            return fail(c, "model.merges[%zu]: token \"%.*s\" is not in "
                           "model.vocab", c->merges.len + i / 3, len,
                        (const char *)b->keys[i]);
        }
    if (tb_vec_reserve(&c->merges, n))
        return fail(c, "out of memory");
    for (size_t i = 0; i < n; i++, c->merges.len++)
        c->merges.data[c->merges.len] =
            (tok_merge_t){(uint32_t)b->id[3 * i], (uint32_t)b->id[3 * i + 1],
                          (uint32_t)b->id[3 * i + 2], (uint32_t)c->merges.len};
    c->last = n ? b->id[3 * n - 1] : c->last;
    return 0;
}

/* The id of a string of at most two bytes, -1 if model.vocab lacks it;
 * ID_WAITING for a longer one. */
static int32_t short_id(const ctx_t *c, const char *s, size_t len)
{
    return len > 2 ? ID_WAITING
                   : (int32_t)c->short_id1[short_key((const uint8_t *)s, len)] - 1;
}

/* The id of left+right if it is the last merge's result or the token
 * after it, else ID_WAITING.  Files rank merges by what they make, so
 * nearly every merge makes one of those two (Llama 3 all 280k, Gemma 3
 * all but 1,396 of 515k); model.vocab's strings are distinct, so the
 * string there is the one the map would find.  The entries are looked
 * at by place: where they are in id order, as files write them. */
static int32_t merge_result(const ctx_t *c, const char *l, size_t ll,
                            const char *r, size_t rl)
{
    for (size_t id = (size_t)c->last; c->last >= 0 && id <= (size_t)c->last + 1 &&
                                      id < c->vocab.len; id++) {
        const entry_t *e = &c->vocab.data[id];
        if (e->len == ll + rl && e->id == id &&
            tb_same_bytes((const uint8_t *)e->s, (const uint8_t *)l, ll) &&
            tb_same_bytes((const uint8_t *)e->s + ll, (const uint8_t *)r, rl))
            return (int32_t)id;
    }
    return ID_WAITING;
}

/* Sets id[i] of the batch to id, or queues key for the lookup. */
static void batch_put(merge_batch_t *b, size_t i, int32_t id,
                      const uint8_t *key)
{
    b->id[i] = id;
    b->missing |= id == -1;
    if (id == ID_WAITING) {
        b->wait_keys[b->k] = key;
        b->wait_lens[b->k] = b->lens[i];
        b->wait_at[b->k++] = (uint16_t)i;
    }
}

/* Queues merge `left right`, resolving the queue when it is full, and
 * when a merge breaks a run of predicted results (merge_result), so that
 * the next one can be predicted from it.  Where predictions keep failing
 * (a file not ranked so) the queue fills as before, lookups overlapping. */
static int push_merge(ctx_t *c, const char *l, size_t ll, const char *r,
                      size_t rl)
{
    merge_batch_t *b = &c->batch;
    size_t i = 3 * b->n;
    int flush = 0;
    b->keys[i] = (const uint8_t *)l;
    b->keys[i + 1] = (const uint8_t *)r;
    b->keys[i + 2] = NULL; /* its scratch copy, where it is looked up */
    b->lens[i] = ll;
    b->lens[i + 1] = rl;
    b->lens[i + 2] = ll + rl;
    batch_put(b, i, short_id(c, l, ll), (const uint8_t *)l);
    batch_put(b, i + 1, short_id(c, r, rl), (const uint8_t *)r);
    int32_t to = merge_result(c, l, ll, r, rl);
    if (to == ID_WAITING) {
        b->wait_cat[b->ncat].at = c->scratch.len;
        b->wait_cat[b->ncat++].wait = (uint16_t)b->k;
        if (tb_buf_put(&c->scratch, l, ll) || tb_buf_put(&c->scratch, r, rl))
            return fail(c, "out of memory");
        flush = c->predicted;
        c->last = -1;
        c->predicted = 0;
    } else {
        c->last = to;
        c->predicted = 1;
    }
    batch_put(b, i + 2, to, NULL);
    return ++b->n == MERGE_BATCH || flush ? resolve_merges(c) : 0;
}

/* model.merges from the tree into c->merges (the scanner fills it
 * itself, and leaves the tree an empty array). */
static int read_merges(ctx_t *c, json_t *merges)
{
    if (!merges || json_is_null(merges))
        return 0;
    if (!json_is_array(merges))
        return fail(c, "model.merges: expected an array, got %s",
                    type_name(merges));
    size_t n = json_array_size(merges);
    if (n >= UINT32_MAX)
        return fail(c, "model.merges: %zu merges, too many", n);
    for (size_t i = 0; i < n; i++) {
        const char *l = NULL, *r = NULL;
        size_t ll = 0, rl = 0;
        if (merge_parts(c, json_array_get(merges, i), i, &l, &ll, &r, &rl)) {
            resolve_merges(c); /* an earlier merge's fault comes first */
            return -1;
        }
        if (push_merge(c, l, ll, r, rl))
            return -1;
    }
    return resolve_merges(c);
}

/* The merges into the model, ranked in file order. */
static int add_merges(ctx_t *c)
{
    if (tok_bpe_add_merges(&c->t->bpe, c->merges.data, c->merges.len))
        return fail(c, "model.merges: out of memory");
    return 0;
}

/* Model options of a BPE model. */
static int read_bpe_options(ctx_t *c, json_t *m)
{
    tok_bpe_t *b = &c->t->bpe;
    int bf, fu, im;
    const char *s;
    size_t len;
    if (get_bool(c, m, "model", "byte_fallback", 0, &bf) ||
        get_bool(c, m, "model", "fuse_unk", 0, &fu) ||
        get_bool(c, m, "model", "ignore_merges", 0, &im))
        return -1;
    b->byte_fallback = bf;
    b->fuse_unk = fu;
    b->ignore_merges = im;
    b->byte_level = c->byte_level;
    if (get_str(c, m, "model", "continuing_subword_prefix", 1, &s, &len))
        return -1;
    if (len)
        return fail(c, "model.continuing_subword_prefix: \"%s\" is not "
                       "supported (only none or \"\")", s);
    if (get_str(c, m, "model", "end_of_word_suffix", 1, &s, &len))
        return -1;
    if (len)
        return fail(c, "model.end_of_word_suffix: \"%s\" is not supported "
                       "(only none or \"\")", s);
    json_t *d = json_object_get(m, "dropout");
    if (d && !json_is_null(d) && json_number_value(d) != 0.0)
        return fail(c, "model.dropout: BPE dropout is not supported");
    if (get_str(c, m, "model", "unk_token", 1, &s, &len))
        return -1;
    if (s) {
        long id = vocab_id(c, s, len);
        b->unk = id < 0 ? -1 : (int32_t)id;
    }
    c->byte_pieces = bf;
    return 0;
}

/* Model options of a WordPiece model. */
static int read_wordpiece_options(ctx_t *c, json_t *m)
{
    tok_wordpiece_t *w = &c->t->wordpiece;
    const char *s;
    size_t len;
    long long max;
    if (get_str(c, m, "model", "continuing_subword_prefix", 1, &s, &len) ||
        get_uint(c, m, "model", "max_input_chars_per_word", 100, &max))
        return -1;
    if (!s) /* `tokenizers`' default */
        s = "##", len = 2;
    if (!len || len > sizeof w->prefix)
        return fail(c, "model.continuing_subword_prefix: \"%s\" is not "
                       "supported (1 to %zu bytes)", s, sizeof w->prefix);
    memcpy(w->prefix, s, len);
    w->prefix_len = (uint8_t)len;
    w->max_chars = max > UINT32_MAX ? UINT32_MAX : (uint32_t)max;
    if (get_str(c, m, "model", "unk_token", 1, &s, &len))
        return -1;
    long id = s ? vocab_id(c, s, len) : -1;
    w->unk = id < 0 ? -1 : (int32_t)id;
    return 0;
}

static int read_model(ctx_t *c, json_t *root)
{
    json_t *m = json_object_get(root, "model");
    if (!json_is_object(m))
        return fail(c, "model: expected an object, got %s",
                    m ? type_name(m) : "nothing");
    json_t *v = json_object_get(m, "vocab");
    if (!v)
        return fail(c, "model.vocab: missing");
    const char *type = json_string_value(json_object_get(m, "type"));
    /* Old files leave "type" out; the vocab's shape tells the model. */
    if (!type)
        type = json_is_array(v) ? "Unigram" : "BPE";
    if (!strcmp(type, "BPE")) {
        c->t->model = TOK_MODEL_BPE;
        if (read_bpe_vocab(c, v) || check_unique_ids(c) ||
            index_bpe_vocab(c) || read_bpe_options(c, m) ||
            read_merges(c, json_object_get(m, "merges")))
            return -1;
        /* the strings' maps have served, and the merges are in the model
         * after: the peaks of memory, the merge table and later the
         * vocabulary's own map, are without them */
        drop_ids(c);
        int rc = add_merges(c);
        free(c->merges.data);
        memset(&c->merges, 0, sizeof c->merges);
        return rc;
    }
    if (!strcmp(type, "Unigram")) {
        c->t->model = TOK_MODEL_UNIGRAM;
        long long unk;
        int bf;
        if (read_unigram_vocab(c, v) || get_uint(c, m, "model", "unk_id", -1, &unk) ||
            get_bool(c, m, "model", "byte_fallback", 0, &bf))
            return -1;
        if (unk >= (long long)c->vocab.len)
            return fail(c, "model.unk_id: %lld is past the %zu pieces", unk,
                        c->vocab.len);
        c->t->unigram.unk = (int32_t)unk;
        c->t->unigram.byte_fallback = bf;
        c->byte_pieces = bf;
        return 0;
    }
    if (!strcmp(type, "WordPiece")) {
        c->t->model = TOK_MODEL_WORDPIECE;
        c->wordpiece = 1;
        if (read_bpe_vocab(c, v) || check_unique_ids(c) || index_bpe_vocab(c) ||
            read_wordpiece_options(c, m))
            return -1;
        drop_ids(c);
        return 0;
    }
    if (!strcmp(type, "WordLevel")) {
        const char *s;
        size_t len;
        c->t->model = TOK_MODEL_WORDLEVEL;
        if (read_bpe_vocab(c, v) || check_unique_ids(c) || index_bpe_vocab(c) ||
            get_str(c, m, "model", "unk_token", 1, &s, &len))
            return -1;
        long id = s ? vocab_id(c, s, len) : -1;
        c->t->wordpiece.unk = id < 0 ? -1 : (int32_t)id;
        drop_ids(c);
        return 0;
    }
    return fail(c, "model.type: \"%s\" is not supported (BPE, Unigram, "
                   "WordPiece or WordLevel)", type);
}

/* ---- normalizers -------------------------------------------------------- */

static int push_norm(ctx_t *c, tok_norm_kind_t kind, tok_norm_t **out)
{
    tok_norm_t n = {.kind = kind};
    if (tb_vec_push(&c->t->norms, n))
        return fail(c, "out of memory");
    *out = &c->t->norms.data[c->t->norms.len - 1];
    return 0;
}

static int b64_value(uint8_t ch)
{
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9') return ch - '0' + 52;
    if (ch == '+') return 62;
    if (ch == '/') return 63;
    return -1;
}

/* Standard base64 (RFC 4648, padding optional) into out. */
static int base64_decode(const char *s, size_t len, tb_buf_t *out, size_t *bad)
{
    uint32_t acc = 0;
    int bits = 0;
    if (tb_buf_reserve(out, len / 4 * 3 + 3))
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '=')
            break;
        int v = b64_value((uint8_t)s[i]);
        if (v < 0) {
            *bad = i;
            return -1;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out->data[out->len++] = (uint8_t)(acc >> bits);
        }
    }
    return 0;
}

typedef int (*component_reader_t)(ctx_t *c, json_t *o, const char *where);

/* A "Sequence" normalizer, pre-tokenizer or decoder: its array `key` of
 * components, each read in order by `read`. */
static int read_sequence(ctx_t *c, json_t *o, const char *where,
                         const char *key, component_reader_t read)
{
    json_t *a = json_object_get(o, key);
    if (!json_is_array(a))
        return fail(c, "%s.%s: expected an array", where, key);
    size_t i;
    json_t *x;
    json_array_foreach(a, i, x)
    {
        char sub[256];
        snprintf(sub, sizeof sub, "%s.%s[%zu]", where, key, i);
        if (read(c, x, sub))
            return -1;
    }
    return 0;
}

static int read_normalizer(ctx_t *c, json_t *o, const char *where);

static int read_norm_replace(ctx_t *c, json_t *o, const char *where)
{
    const char *pat, *rep;
    size_t pl, rl;
    int regex;
    tok_norm_t *n;
    if (get_pattern(c, o, where, &pat, &pl, &regex) ||
        get_str(c, o, where, "content", 0, &rep, &rl))
        return -1;
    if (regex) {
        /* Compiled here only to report a bad pattern at load time. */
        int code;
        PCRE2_SIZE off;
        pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, pl, PCRE2_UTF, &code,
                                       &off, NULL);
        if (!re) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(code, msg, sizeof msg);
            return fail(c, "%s.pattern.Regex: /%.80s/ at offset %zu: %s",
                        where, pat, (size_t)off, (char *)msg);
        }
        pcre2_code_free(re);
    }
    if (push_norm(c, TOK_NORM_REPLACE, &n))
        return -1;
    n->flags = regex ? 1 : 0;
    if (tb_buf_put(&n->a, pat, pl) || tb_buf_put(&n->b, rep, rl))
        return fail(c, "out of memory");
    return 0;
}

static int read_norm_precompiled(ctx_t *c, json_t *o, const char *where)
{
    const char *s;
    size_t len, bad = 0;
    tok_norm_t *n;
    if (get_str(c, o, where, "precompiled_charsmap", 1, &s, &len))
        return -1;
    if (!s || !len) /* an empty charsmap changes nothing */
        return 0;
    if (push_norm(c, TOK_NORM_CHARSMAP, &n))
        return -1;
    if (base64_decode(s, len, &n->blob, &bad))
        return fail(c, "%s.precompiled_charsmap: not base64 at character %zu",
                    where, bad);
    /* Validated here, once, so a corrupt blob is refused at load time
     * rather than silently matching nothing while encoding. */
    tok_charsmap_t cm;
    tb_err_t why;
    if (n->blob.len < 4 || tok_charsmap_open(&cm, n->blob.data, n->blob.len, &why))
        return fail(c, "%s.precompiled_charsmap: %s", where,
                    n->blob.len < 4 ? "too short for a charsmap" : why.msg);
    return 0;
}

static int read_normalizer(ctx_t *c, json_t *o, const char *where)
{
    const char *type;
    tok_norm_t *n;
    if (get_type(c, o, where, &type))
        return -1;
    static const struct {
        const char *name;
        tok_norm_kind_t kind;
    } simple[] = {{"NFC", TOK_NORM_NFC}, {"NFD", TOK_NORM_NFD},
                  {"NFKC", TOK_NORM_NFKC}, {"NFKD", TOK_NORM_NFKD},
                  {"Lowercase", TOK_NORM_LOWERCASE}};
    for (size_t i = 0; i < sizeof simple / sizeof *simple; i++)
        if (!strcmp(type, simple[i].name))
            return push_norm(c, simple[i].kind, &n);
    if (!strcmp(type, "Sequence"))
        return read_sequence(c, o, where, "normalizers", read_normalizer);
    if (!strcmp(type, "Replace"))
        return read_norm_replace(c, o, where);
    if (!strcmp(type, "Precompiled"))
        return read_norm_precompiled(c, o, where);
    if (!strcmp(type, "Prepend")) {
        const char *s;
        size_t len;
        if (get_str(c, o, where, "prepend", 0, &s, &len) ||
            push_norm(c, TOK_NORM_PREPEND, &n))
            return -1;
        return tb_buf_put(&n->a, s, len) ? fail(c, "out of memory") : 0;
    }
    if (!strcmp(type, "BertNormalizer")) {
        int clean, chinese, lower, strip;
        if (get_bool(c, o, where, "clean_text", 1, &clean) ||
            get_bool(c, o, where, "handle_chinese_chars", 1, &chinese) ||
            get_bool(c, o, where, "lowercase", 1, &lower) ||
            /* strip_accents absent or null: as lowercase says */
            get_bool(c, o, where, "strip_accents", lower, &strip) ||
            push_norm(c, TOK_NORM_BERT, &n))
            return -1;
        n->flags = (clean ? TOK_BERT_CLEAN : 0u) | (chinese ? TOK_BERT_CHINESE : 0u) |
                   (strip ? TOK_BERT_STRIP : 0u) | (lower ? TOK_BERT_LOWER : 0u);
        return 0;
    }
    if (!strcmp(type, "Strip")) {
        int l, r;
        if (get_bool(c, o, where, "strip_left", 0, &l) ||
            get_bool(c, o, where, "strip_right", 0, &r) ||
            push_norm(c, TOK_NORM_STRIP, &n))
            return -1;
        n->flags = (l ? 1u : 0u) | (r ? 2u : 0u);
        return 0;
    }
    return fail(c, "%s.type: normalizer \"%s\" is not supported", where, type);
}

/* ---- pre-tokenizers ----------------------------------------------------- */

static int push_pre(ctx_t *c, tok_pre_kind_t kind, tok_pre_t **out)
{
    tok_pre_t p = {.kind = kind};
    if (tb_vec_push(&c->t->pres, p))
        return fail(c, "out of memory");
    *out = &c->t->pres.data[c->t->pres.len - 1];
    return 0;
}

static int split_behavior(ctx_t *c, json_t *o, const char *where,
                          tok_split_behavior_t *b)
{
    static const char *names[] = {"Removed", "Isolated", "MergedWithPrevious",
                                  "MergedWithNext", "Contiguous"};
    const char *s;
    size_t len;
    if (get_str(c, o, where, "behavior", 0, &s, &len))
        return -1;
    for (int i = 0; i < 5; i++)
        if (!strcmp(s, names[i])) {
            *b = (tok_split_behavior_t)i;
            return 0;
        }
    return fail(c, "%s.behavior: \"%s\" is not a split behavior", where, s);
}

static int compile_pre(ctx_t *c, tok_pre_t *p, const char *pat, size_t len,
                       int literal, const char *where)
{
    if (tok_pre_compile(p, (const uint8_t *)pat, len, literal, c->err))
        return tb_wrap(c->err, "%s: %s.pattern", c->path, where);
    return 0;
}

static int read_pre_split(ctx_t *c, json_t *o, const char *where)
{
    const char *pat;
    size_t len;
    int regex, invert;
    tok_split_behavior_t b = TOK_SPLIT_ISOLATED;
    tok_pre_t *p;
    if (get_pattern(c, o, where, &pat, &len, &regex) ||
        split_behavior(c, o, where, &b) ||
        get_bool(c, o, where, "invert", 0, &invert) ||
        push_pre(c, TOK_PRE_SPLIT, &p))
        return -1;
    p->behavior = b;
    p->invert = invert;
    return compile_pre(c, p, pat, len, !regex, where);
}

static int read_pre_metaspace(ctx_t *c, json_t *o, const char *where)
{
    const char *rep, *scheme;
    size_t rl, sl;
    int split, prefix;
    tok_pre_t *p;
    if (get_str(c, o, where, "replacement", 0, &rep, &rl) ||
        get_str(c, o, where, "prepend_scheme", 1, &scheme, &sl) ||
        get_bool(c, o, where, "split", 1, &split) ||
        get_bool(c, o, where, "add_prefix_space", 1, &prefix))
        return -1;
    if (strcmp(rep, META))
        return fail(c, "%s.replacement: only U+2581 is supported", where);
    uint32_t flags = split ? 2 : 0;
    if (!scheme)
        flags |= prefix ? 1 : 0;
    else if (!strcmp(scheme, "always"))
        flags |= 1;
    else if (!strcmp(scheme, "first"))
        flags |= 1 | 4;
    else if (strcmp(scheme, "never"))
        return fail(c, "%s.prepend_scheme: \"%s\" is not always, first or "
                       "never", where, scheme);
    if (push_pre(c, TOK_PRE_METASPACE, &p))
        return -1;
    p->flags = flags;
    return 0;
}

static int read_pretokenizer(ctx_t *c, json_t *o, const char *where)
{
    const char *type;
    tok_pre_t *p;
    if (get_type(c, o, where, &type))
        return -1;
    if (!strcmp(type, "Sequence"))
        return read_sequence(c, o, where, "pretokenizers", read_pretokenizer);
    if (!strcmp(type, "Split"))
        return read_pre_split(c, o, where);
    if (!strcmp(type, "Metaspace"))
        return read_pre_metaspace(c, o, where);
    if (!strcmp(type, "ByteLevel")) {
        int prefix, regex;
        if (get_bool(c, o, where, "add_prefix_space", 1, &prefix) ||
            get_bool(c, o, where, "use_regex", 1, &regex) ||
            push_pre(c, TOK_PRE_BYTE_LEVEL, &p))
            return -1;
        p->flags = (prefix ? 1u : 0u) | (regex ? 2u : 0u);
        return 0;
    }
    if (!strcmp(type, "Digits")) {
        int each;
        if (get_bool(c, o, where, "individual_digits", 0, &each) ||
            push_pre(c, TOK_PRE_DIGITS, &p))
            return -1;
        p->flags = each ? 1 : 0;
        return 0;
    }
    if (!strcmp(type, "WhitespaceSplit"))
        return push_pre(c, TOK_PRE_WHITESPACE_SPLIT, &p);
    if (!strcmp(type, "BertPreTokenizer"))
        return push_pre(c, TOK_PRE_BERT, &p);
    if (!strcmp(type, "Whitespace")) {
        /* `tokenizers` defines it as keeping the matches of this regex. */
        static const char re[] = "\\w+|[^\\w\\s]+";
        if (push_pre(c, TOK_PRE_SPLIT, &p))
            return -1;
        p->behavior = TOK_SPLIT_REMOVED;
        p->invert = 1;
        return compile_pre(c, p, re, sizeof re - 1, 0, where);
    }
    return fail(c, "%s.type: pre-tokenizer \"%s\" is not supported", where,
                type);
}

/* ---- decoders ------------------------------------------------------------ */

static int read_decoder(ctx_t *c, json_t *o, const char *where)
{
    const char *type;
    if (get_type(c, o, where, &type))
        return -1;
    if (!strcmp(type, "Sequence"))
        return read_sequence(c, o, where, "decoders", read_decoder);
    /* Byte-level strings, byte pieces and fusing are undone at load time:
     * the vocabulary already holds the bytes these decoders produce. */
    if (!strcmp(type, "ByteLevel") || !strcmp(type, "ByteFallback") ||
        !strcmp(type, "Fuse"))
        return 0;
    if (!strcmp(type, "Replace")) {
        const char *pat, *rep;
        size_t pl, rl;
        int regex;
        if (get_pattern(c, o, where, &pat, &pl, &regex) ||
            get_str(c, o, where, "content", 0, &rep, &rl))
            return -1;
        if (regex || strcmp(pat, META) || strcmp(rep, " "))
            return fail(c, "%s: only Replace of U+2581 by a space is "
                           "supported", where);
        return 0;
    }
    if (!strcmp(type, "Strip")) {
        const char *s;
        size_t len;
        long long start, stop;
        if (get_str(c, o, where, "content", 0, &s, &len) ||
            get_uint(c, o, where, "start", 0, &start) ||
            get_uint(c, o, where, "stop", 0, &stop))
            return -1;
        if (strcmp(s, " ") || start > 1 || stop)
            return fail(c, "%s: only Strip of one leading space is supported",
                        where);
        if (start)
            c->t->decode_flags |= TOK_DEC_STRIP_LEADING_SPACE;
        return 0;
    }
    if (!strcmp(type, "WordPiece")) {
        const char *s;
        size_t len;
        int cleanup;
        const tok_wordpiece_t *wp = &c->t->wordpiece;
        if (get_str(c, o, where, "prefix", 1, &s, &len) ||
            get_bool(c, o, where, "cleanup", 1, &cleanup))
            return -1;
        if (!s)
            s = "##", len = 2;
        /* wordpiece.c's pieces keep no prefix: the model's is put back */
        if (c->t->model != TOK_MODEL_WORDPIECE || len != wp->prefix_len ||
            memcmp(s, wp->prefix, len))
            return fail(c, "%s: the WordPiece decoder is supported with a "
                           "WordPiece model of the same prefix only", where);
        c->t->decode_flags |= TOK_DEC_WORDPIECE | (cleanup ? TOK_DEC_CLEANUP : 0u);
        return 0;
    }
    if (!strcmp(type, "Metaspace")) {
        const char *scheme;
        size_t sl;
        int prefix;
        if (get_str(c, o, where, "prepend_scheme", 1, &scheme, &sl) ||
            get_bool(c, o, where, "add_prefix_space", 1, &prefix))
            return -1;
        if (scheme ? strcmp(scheme, "never") != 0 : prefix)
            c->t->decode_flags |= TOK_DEC_STRIP_LEADING_SPACE;
        return 0;
    }
    return fail(c, "%s.type: decoder \"%s\" is not supported", where, type);
}

/* ---- added tokens ---------------------------------------------------------- */

/* added_tokens into c->added; `seen` maps the ids read so far, to refuse
 * one given twice (a scan of the list per token took Gemma 3's 6,415
 * tokens 20 million comparisons). */
static int read_added_into(ctx_t *c, json_t *root, tb_u64map_t *seen)
{
    json_t *a = json_object_get(root, "added_tokens");
    if (!a || json_is_null(a))
        return 0;
    if (!json_is_array(a))
        return fail(c, "added_tokens: expected an array, got %s", type_name(a));
    size_t i;
    json_t *x;
    json_array_foreach(a, i, x)
    {
        char where[64];
        snprintf(where, sizeof where, "added_tokens[%zu]", i);
        if (!json_is_object(x))
            return fail(c, "%s: expected an object, got %s", where,
                        type_name(x));
        added_t e = {0};
        int sp, ls, rs, sw, nm;
        char idw[80];
        snprintf(idw, sizeof idw, "%s.id", where);
        if (check_id(c, idw, json_object_get(x, "id"), &e.id) ||
            get_str(c, x, where, "content", 0, &e.s, &e.len) ||
            get_bool(c, x, where, "special", 0, &sp) ||
            get_bool(c, x, where, "lstrip", 0, &ls) ||
            get_bool(c, x, where, "rstrip", 0, &rs) ||
            get_bool(c, x, where, "single_word", 0, &sw) ||
            get_bool(c, x, where, "normalized", !sp, &nm))
            return -1;
        if (!e.len)
            return fail(c, "%s.content: empty", where);
        e.special = (uint8_t)sp;
        e.lstrip = (uint8_t)ls;
        e.rstrip = (uint8_t)rs;
        e.single_word = (uint8_t)sw;
        e.normalized = (uint8_t)nm;
        int twice = tb_u64map_put(seen, e.id, i);
        if (twice < 0)
            return fail(c, "out of memory");
        if (twice)
            return fail(c, "%s.id: %u is given twice", where, e.id);
        if (tb_vec_push(&c->added, e))
            return fail(c, "out of memory");
    }
    return 0;
}

static int read_added(ctx_t *c, json_t *root)
{
    tb_u64map_t seen;
    if (tb_u64map_init(&seen, json_array_size(json_object_get(root, "added_tokens"))))
        return fail(c, "out of memory");
    int rc = read_added_into(c, root, &seen);
    tb_u64map_free(&seen);
    return rc;
}

/* The tokenizer's copy of the added tokens, for the encoder to match.  A
 * normalized token is matched in normalized text, so its content is
 * normalized here as `tokenizers` does when it builds its matcher. */
static int install_added(ctx_t *c)
{
    tok_tokenizer_t *t = c->t;
    if (tb_vec_reserve(&t->added, c->added.len))
        return fail(c, "out of memory");
    for (size_t i = 0; i < c->added.len; i++) {
        const added_t *e = &c->added.data[i];
        tok_added_t a = {.id = e->id, .special = e->special,
                         .lstrip = e->lstrip, .rstrip = e->rstrip,
                         .single_word = e->single_word,
                         .normalized = e->normalized};
        t->added.data[t->added.len++] = a;
        tb_buf_t *dst = &t->added.data[t->added.len - 1].content;
        if (e->normalized && t->norms.len) {
            if (tok_normalize(t, (const uint8_t *)e->s, e->len, dst, c->err))
                return tb_wrap(c->err, "%s: added_tokens[%zu].content",
                               c->path, i);
        } else if (tb_buf_put(dst, e->s, e->len)) {
            return fail(c, "out of memory");
        }
    }
    t->match_added = t->added.len > 0;
    return 0;
}

/* ---- the vocabulary --------------------------------------------------------- */

static int added_by_id(const void *a, const void *b)
{
    uint32_t x = ((const added_t *)a)->id, y = ((const added_t *)b)->id;
    return (x > y) - (x < y);
}

/* The model's unknown token, or -1. */
static int32_t model_unk(const tok_tokenizer_t *t)
{
    return t->model == TOK_MODEL_BPE       ? t->bpe.unk
           : t->model == TOK_MODEL_UNIGRAM ? t->unigram.unk
                                           : t->wordpiece.unk; /* WordLevel's too */
}

/* Adds the added token `e`: its content is its text, except that the
 * SentencePiece-style decoders turn U+2581 into a space in it too. */
static int add_added(ctx_t *c, tok_vocab_builder_t *b, const added_t *e,
                     float score)
{
    c->scratch.len = 0;
    if (c->meta ? put_unmeta(&c->scratch, e->s, e->len)
                : tb_buf_put(&c->scratch, e->s, e->len))
        return fail(c, "out of memory");
    tok_kind_t kind = e->special ? TOK_CONTROL : TOK_USER;
    if ((int32_t)e->id == model_unk(c->t))
        kind = TOK_UNKNOWN;
    if (tok_vocab_add(b, e->id, c->scratch.data, c->scratch.len, score, kind,
                      e->special, c->err))
        return tb_wrap(c->err, "%s: added token \"%.60s\"", c->path, e->s);
    return 0;
}

/* Merges model.vocab and added_tokens (the added token wins an id both
 * name, as `tokenizers` decodes it) into t->vocab. */
static int build_vocab(ctx_t *c)
{
    tok_vocab_builder_t *b = tok_vocab_builder_new();
    if (!b)
        return fail(c, "out of memory");
    if (c->added.len) /* qsort must not see a NULL array */
        qsort(c->added.data, c->added.len, sizeof *c->added.data, added_by_id);
    int32_t unk = model_unk(c->t);
    size_t ai = 0, bytes = 0;
    /* a token's bytes are at most its string's (and WordPiece's space) */
    for (size_t i = 0; i < c->vocab.len; i++)
        bytes += c->vocab.data[i].len + 1;
    for (size_t i = 0; i < c->added.len; i++)
        bytes += c->added.data[i].len;
    tok_vocab_builder_reserve(b, c->vocab.len + c->added.len, bytes);
    for (size_t i = 0; i < c->vocab.len; i++) {
        const entry_t *e = &c->vocab.data[i];
        for (; ai < c->added.len && c->added.data[ai].id < e->id; ai++)
            if (add_added(c, b, &c->added.data[ai], 0))
                goto fail;
        if (ai < c->added.len && c->added.data[ai].id == e->id) {
            if (add_added(c, b, &c->added.data[ai++], e->score))
                goto fail;
            continue;
        }
        tok_kind_t kind;
        if (model_bytes(c, e->s, e->len, (int)e->id, &kind))
            goto fail;
        if ((int32_t)e->id == unk)
            kind = TOK_UNKNOWN;
        if (tok_vocab_add(b, e->id, c->scratch.data, c->scratch.len, e->score,
                          kind, 0, c->err)) {
            tb_wrap(c->err, "%s: model.vocab", c->path);
            goto fail;
        }
    }
    for (; ai < c->added.len; ai++)
        if (add_added(c, b, &c->added.data[ai], 0))
            goto fail;
    free(c->vocab.data); /* in the builder now */
    memset(&c->vocab, 0, sizeof c->vocab);
    if (tok_vocab_finish(b, &c->t->vocab, c->err))
        return tb_wrap(c->err, "%s", c->path);
    return 0;
fail:
    tok_vocab_builder_free(b);
    return -1;
}

/* Id of the added token whose text is `s`, or -1: conventions name
 * special tokens, and e.g. Qwen also has "<s>" as an ordinary token. */
static int32_t find_text(const tok_vocab_t *v, const char *s)
{
    int32_t id = tok_vocab_find(v, (const uint8_t *)s, strlen(s));
    if (id < 0 || v->kind[id] == TOK_NORMAL || v->kind[id] == TOK_BYTE)
        return -1;
    return id;
}

/* BOS from the post-processor's template ([BOS] $A), else by name. */
static void special_ids(ctx_t *c, json_t *root)
{
    tok_vocab_t *v = &c->t->vocab;
    json_t *pp = json_object_get(root, "post_processor");
    /* Llama 3.1-style files wrap the template in a Sequence. */
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(pp, "processors"), i, x)
        if (is_type(x, "TemplateProcessing")) pp = x;
    json_t *single = json_object_get(pp, "single");
    json_t *first = json_object_get(json_array_get(single, 0), "SpecialToken");
    json_t *last = json_object_get(
        json_array_get(single, json_array_size(single) - 1), "SpecialToken");
    json_t *st = json_object_get(pp, "special_tokens");
    if (first) {
        json_t *ids = json_object_get(
            json_object_get(st, json_string_value(json_object_get(first, "id"))),
            "ids");
        json_int_t id = json_integer_value(json_array_get(ids, 0));
        if (json_array_size(ids) && id >= 0 && id < (json_int_t)v->size)
            v->bos = (int32_t)id;
    }
    if (last && json_array_size(single) > 1) {
        json_t *ids = json_object_get(
            json_object_get(st, json_string_value(json_object_get(last, "id"))),
            "ids");
        json_int_t id = json_integer_value(json_array_get(ids, 0));
        if (json_array_size(ids) && id >= 0 && id < (json_int_t)v->size)
            v->eos = (int32_t)id;
    }
    static const char *bos[] = {"<|begin_of_text|>", "<bos>", "<s>"};
    static const char *eos[] = {"<|end_of_text|>", "<eos>", "</s>",
                                "<|endoftext|>"};
    for (i = 0; i < 3 && v->bos < 0; i++)
        v->bos = find_text(v, bos[i]);
    for (i = 0; i < 4 && v->eos < 0; i++)
        v->eos = find_text(v, eos[i]);
    if (v->pad < 0)
        v->pad = find_text(v, "<pad>");
    v->unk = model_unk(c->t);
}

/* ---- the post-processor -------------------------------------------------- */

/* A rule of the file tokbench does not follow, said as "PATH: message" in
 * m[0..n) (add_special_error or pair_error): only the encode that needs
 * the rule fails, so the load goes on.  Returns 1. */
__attribute__((format(printf, 4, 5))) static int refuse(ctx_t *c, char *m, size_t n,
                                                        const char *fmt, ...)
{
    int k = snprintf(m, n, "%s: ", c->path);
    va_list ap;
    va_start(ap, fmt);
    if (k > 0 && (size_t)k < n)
        vsnprintf(m + k, n - (size_t)k, fmt, ap);
    va_end(ap);
    return 1;
}

/* Why TOK_ADD_SPECIAL cannot follow this file (the ids without special
 * tokens do not depend on it), and why a pair cannot be encoded with it
 * (its order and type ids depend on the rule even without them); 0. */
#define unsupported(c, ...)                                                  \
    (refuse((c), (c)->t->add_special_error, sizeof (c)->t->add_special_error, \
            __VA_ARGS__), 0)
#define pair_unsupported(c, ...)                                             \
    (refuse((c), (c)->t->pair_error, sizeof (c)->t->pair_error, __VA_ARGS__), 0)

typedef TB_VEC(tok_pair_item_t) pair_rule_t;

static int pair_push(ctx_t *c, pair_rule_t *rule, int32_t what, uint32_t type)
{
    tok_pair_item_t it = {what, type};
    return tb_vec_push(rule, it) ? fail(c, "out of memory") : 0;
}

/* Bert's and Roberta's fixed pair rules around their cls and sep ids:
 * [CLS] A [SEP] B [SEP] with B's part of type 1; <s> A </s></s> B </s>,
 * all of type 0 (RoBERTa has one type). */
static int pp_pair_fixed(ctx_t *c, int roberta, const tok_ids_t *cls,
                         const tok_ids_t *sep, pair_rule_t *rule)
{
    if (cls->len != 1 || sep->len != 1)
        return pair_unsupported(c, "post_processor: want cls and sep ids");
    int32_t k = (int32_t)cls->data[0], s = (int32_t)sep->data[0];
    uint32_t b = roberta ? 0 : 1;
    return pair_push(c, rule, k, 0) || pair_push(c, rule, TOK_PAIR_A, 0) ||
           pair_push(c, rule, s, 0) || (roberta && pair_push(c, rule, s, 0)) ||
           pair_push(c, rule, TOK_PAIR_B, b) || pair_push(c, rule, s, b);
}

/* Appends one id named by a processor (x: an integer) to `to`. */
static int pp_id(ctx_t *c, json_t *x, const char *where, tok_ids_t *to)
{
    json_int_t id = json_integer_value(x);
    if (!json_is_integer(x) || id < 0 || id >= (json_int_t)c->t->vocab.size)
        return unsupported(c, "%s: want an id of the vocabulary", where);
    return tb_vec_push(to, (uint32_t)id) ? fail(c, "out of memory") : 0;
}

/* A TemplateProcessing template (`key`: "single" or "pair") into rule:
 * its texts, $A then (pair) $B, once each, and the ids of its special
 * tokens, each item with its type_id.  A template tokbench does not follow
 * is said in m[0..n) (add_special_error or pair_error) and returns 1. */
static int read_template(ctx_t *c, json_t *pp, const char *key, const char *where,
                         pair_rule_t *rule, char *m, size_t n)
{
    json_t *tmpl = json_object_get(pp, key);
    json_t *st = json_object_get(pp, "special_tokens");
    int want = strcmp(key, "pair") ? 1 : 2, texts = 0;
    size_t i, j;
    json_t *item, *id;
    if (!json_is_array(tmpl))
        return refuse(c, m, n, "%s.%s: want an array", where, key);
    json_array_foreach(tmpl, i, item)
    {
        json_t *seq = json_object_get(item, "Sequence");
        json_t *x = seq ? seq : json_object_get(item, "SpecialToken");
        const char *name = json_string_value(json_object_get(x, "id"));
        json_t *ty = json_object_get(x, "type_id");
        json_int_t type = json_integer_value(ty);
        if (!name || !json_is_integer(ty) || type < 0 || type > UINT32_MAX)
            return refuse(c, m, n, "%s.%s[%zu]: want a Sequence or a "
                                   "SpecialToken with an id and a type_id",
                          where, key, i);
        if (seq) {
            if (texts == want || strcmp(name, texts ? "B" : "A"))
                return refuse(c, m, n, "%s.%s[%zu]: want %s", where, key, i,
                              want == 1 ? "$A once" : "$A, then $B, once each");
            if (pair_push(c, rule, texts++ ? TOK_PAIR_B : TOK_PAIR_A,
                          (uint32_t)type))
                return -1;
            continue;
        }
        json_t *ids = json_object_get(json_object_get(st, name), "ids");
        if (!json_is_array(ids))
            return refuse(c, m, n, "%s.%s[%zu]: \"%s\" is not in special_tokens",
                          where, key, i, name);
        json_array_foreach(ids, j, id)
        {
            json_int_t v = json_integer_value(id);
            if (!json_is_integer(id) || v < 0 || v >= (json_int_t)c->t->vocab.size)
                return refuse(c, m, n, "%s.%s[%zu]: want ids of the vocabulary",
                              where, key, i);
            if (pair_push(c, rule, (int32_t)v, (uint32_t)type))
                return -1;
        }
    }
    return texts == want ? 0 : refuse(c, m, n, "%s.%s: no $%c", where, key,
                                      "AB"[texts]);
}

/* TemplateProcessing: the single template's special tokens before $A go
 * to pre, those after to suf; the pair template is the pair rule. */
static int pp_template(ctx_t *c, json_t *pp, const char *where, tok_ids_t *pre,
                       tok_ids_t *suf, pair_rule_t *pair)
{
    pair_rule_t single = {0};
    tok_tokenizer_t *t = c->t;
    int rc = read_template(c, pp, "single", where, &single,
                           t->add_special_error, sizeof t->add_special_error);
    int after = 0;
    for (size_t i = 0; !rc && i < single.len; i++) {
        const tok_pair_item_t *it = &single.data[i];
        if (it->what == TOK_PAIR_A)
            after = 1;
        else if (tb_vec_push(after ? suf : pre, (uint32_t)it->what))
            rc = fail(c, "out of memory");
    }
    free(single.data);
    if (rc < 0 || read_template(c, pp, "pair", where, pair, t->pair_error,
                                sizeof t->pair_error) < 0)
        return -1;
    return 0;
}

/* Adds a processor's wrapping around what the earlier ones added (a
 * Sequence applies its processors in turn, each to the previous result). */
static int post_processor(ctx_t *c, json_t *pp, const char *where)
{
    tok_tokenizer_t *t = c->t;
    tok_ids_t pre = {0}, suf = {0};
    pair_rule_t pair = {0};
    const char *type = json_string_value(json_object_get(pp, "type"));
    char sub[96];
    size_t i;
    json_t *x;
    int rc = 0;
    if (!type)
        rc = unsupported(c, "%s: want an object with a type", where) ||
             pair_unsupported(c, "%s: want an object with a type", where);
    else if (!strcmp(type, "Sequence"))
        json_array_foreach(json_object_get(pp, "processors"), i, x)
        {
            snprintf(sub, sizeof sub, "%s.processors[%zu]", where, i);
            if ((rc = post_processor(c, x, sub)))
                break;
        }
    else if (!strcmp(type, "TemplateProcessing"))
        rc = pp_template(c, pp, where, &pre, &suf, &pair);
    else if (!strcmp(type, "RobertaProcessing") || !strcmp(type, "BertProcessing"))
        rc = pp_id(c, json_array_get(json_object_get(pp, "cls"), 1), where, &pre) ||
             pp_id(c, json_array_get(json_object_get(pp, "sep"), 1), where, &suf) ||
             pp_pair_fixed(c, type[0] == 'R', &pre, &suf, &pair);
    else if (strcmp(type, "ByteLevel")) /* ByteLevel adds no ids */
        rc = unsupported(c, "%s: post-processor \"%s\" is not supported",
                         where, type) ||
             pair_unsupported(c, "%s: post-processor \"%s\" is not supported",
                              where, type);
    /* A Sequence applies each rule to what the one before made of the
     * pair; two rules that both place the texts are not followed here. */
    if (!rc && pair.len && t->pair.len)
        rc = pair_unsupported(c, "%s: a second pair rule in a Sequence is not "
                                 "supported", where);
    else if (!rc && pair.len) {
        t->pair.data = pair.data;
        t->pair.len = pair.len;
        t->pair.cap = pair.cap;
        memset(&pair, 0, sizeof pair);
    }
    free(pair.data);
    if (!rc && pre.len) {
        rc = tb_vec_reserve(&t->special_prefix, pre.len);
        if (!rc) {
            memmove(t->special_prefix.data + pre.len, t->special_prefix.data,
                    t->special_prefix.len * sizeof *pre.data);
            memcpy(t->special_prefix.data, pre.data, pre.len * sizeof *pre.data);
            t->special_prefix.len += pre.len;
        }
    }
    if (!rc)
        rc = tb_vec_append(&t->special_suffix, suf.data, suf.len);
    free(pre.data);
    free(suf.data);
    return rc ? fail(c, "out of memory") : 0;
}

/* The Unigram model's derived numbers and its prefix index. */
static int unigram_tables(ctx_t *c)
{
    tok_tokenizer_t *t = c->t;
    tok_unigram_t *u = &t->unigram;
    float lo = 0, hi = FLT_MIN;
    uint32_t longest = 0;
    for (uint32_t id = 0; id < t->vocab.size; id++) {
        size_t len = t->vocab.offset[id + 1] - t->vocab.offset[id];
        float sc = t->vocab.score[id];
        if (sc < lo)
            lo = sc;
        if (t->vocab.kind[id] == TOK_NORMAL && sc > hi)
            hi = sc;
        if (len > longest)
            longest = (uint32_t)len;
    }
    /* `tokenizers` scores an unknown piece 10 below the worst one. */
    u->unk_penalty = lo - 10.0f;
    u->max_score = hi;
    u->max_piece_len = longest;
    for (int b = 0; b < 256; b++) {
        int32_t id = t->vocab.byte_id[b];
        u->byte_piece[b] = id >= 0 && t->vocab.kind[id] == TOK_BYTE ? id : u->unk;
    }
    return tok_unigram_build_index(t, c->err) ? tb_wrap(c->err, "%s", c->path) : 0;
}

/* ---- entry point ------------------------------------------------------------ */

static void set_model_name(tok_tokenizer_t *t, int byte_level)
{
    const char *name;
    if (t->model == TOK_MODEL_WORDPIECE)
        name = "wordpiece";
    else if (t->model == TOK_MODEL_WORDLEVEL)
        name = "wordlevel";
    else if (t->model == TOK_MODEL_UNIGRAM)
        name = t->unigram.byte_fallback ? "unigram+byte-fallback" : "unigram";
    else if (byte_level)
        name = "byte-level bpe";
    else
        name = t->bpe.byte_fallback ? "bpe+byte-fallback" : "bpe";
    snprintf(t->model_name, sizeof t->model_name, "%s", name);
}

/* Normalizer, pre-tokenizer and decoder, each optional (null). */
static int read_pipeline(ctx_t *c, json_t *root)
{
    json_t *n = json_object_get(root, "normalizer");
    json_t *p = json_object_get(root, "pre_tokenizer");
    json_t *d = json_object_get(root, "decoder");
    if (n && !json_is_null(n) && read_normalizer(c, n, "normalizer"))
        return -1;
    if (p && !json_is_null(p) && read_pretokenizer(c, p, "pre_tokenizer"))
        return -1;
    if (d && !json_is_null(d) && read_decoder(c, d, "decoder"))
        return -1;
    /* no decoder: Hugging Face joins the token strings with spaces, which
     * only these models' pieces spell as text */
    if ((!d || json_is_null(d)) && (c->t->model == TOK_MODEL_WORDPIECE ||
                                    c->t->model == TOK_MODEL_WORDLEVEL))
        c->t->decode_flags |= TOK_DEC_JOIN;
    return 0;
}

static int load(ctx_t *c, json_t *root)
{
    tok_tokenizer_t *t = c->t;
    if (!json_is_object(root))
        return fail(c, "top level: expected an object, got %s",
                    type_name(root));
    json_t *pre = json_object_get(root, "pre_tokenizer");
    json_t *dec = json_object_get(root, "decoder");
    c->byte_level = has_component(pre, "pretokenizers", "ByteLevel") ||
                    has_component(dec, "decoders", "ByteLevel");
    if (read_model(c, root) || read_pipeline(c, root) || read_added(c, root))
        return -1;
    /* WordPiece's word-start pieces are spelt with a space already */
    c->meta = !c->byte_level && !c->wordpiece &&
              (has_component(pre, "pretokenizers", "Metaspace") ||
               has_component(dec, "decoders", "Metaspace") || vocab_uses_meta(c));
    if (has_component(dec, "decoders", "ByteFallback"))
        c->byte_pieces = 1;
    if (build_vocab(c) || install_added(c))
        return -1;
    special_ids(c, root);
    json_t *pp = json_object_get(root, "post_processor");
    if (pp && !json_is_null(pp) && post_processor(c, pp, "post_processor"))
        return -1;
    t->meta_to_space = c->meta;
    t->needs_utf8 = !c->byte_level || t->norms.len > 0;
    if (t->model == TOK_MODEL_UNIGRAM && unigram_tables(c))
        return -1;
    set_model_name(t, c->byte_level);
    return 0;
}

/* ---- the scanner's part ---------------------------------------------------- */

/* A value's text, brackets included: t[at .. end); end 0 if not seen. */
typedef struct {
    size_t at, end;
} span_t;

/* What the scanner looks for: added_tokens, the model object and its
 * vocab and merges (all but the model read as they are found). */
typedef struct {
    ctx_t *c;
    span_t added, model, vocab, merges;
} finder_t;

typedef int (*member_fn)(tb_json_scan_t *s, const char *key, size_t len,
                         finder_t *f);

static int key_is(const char *k, size_t len, const char *name)
{
    return len == strlen(name) && !memcmp(k, name, len);
}

/* The members of the object at the read position: each key in turn to
 * `member`, which reads its value.  0, or -1 if the text is not that. */
static int scan_members(tb_json_scan_t *s, finder_t *f, member_fn member)
{
    if (!tb_json_eat(s, '{'))
        return -1;
    if (tb_json_eat(s, '}'))
        return 0;
    do {
        const char *k;
        size_t len;
        if (tb_json_string(s, &k, &len) || !tb_json_eat(s, ':') ||
            member(s, k, len, f))
            return -1;
    } while (tb_json_eat(s, ','));
    return tb_json_eat(s, '}') ? 0 : -1;
}

/* The entries are reserved for what the rest of the text can hold (each
 * takes 6 bytes at least, "a":1,) as address space faulted 2 MiB at a
 * time (tb_vec_reserve_big), where Llama 3's 128k entries took 1,000
 * faults of 4 KiB.  Only in a text of BIG_TEXT bytes or more: in a
 * smaller one the unused part of the last huge page outweighs the faults
 * saved (Mistral's 1.8 MB: peak 5.6 -> 7.6 MiB, 1.3 ms saved).  Not the
 * merges, whose vector lives on beside the merge table at the load's
 * peak: reserved so, Llama 3's peak was 25.3 MiB, not 23.8.  Failing, the
 * vector grows as usual. */
enum { BIG_TEXT = 4 << 20 };

/* model.vocab of a BPE model: {"token": id, ...}, and the ids map. */
static int scan_bpe_vocab(ctx_t *c, tb_json_scan_t *s)
{
    if (!tb_json_eat(s, '{'))
        return -1;
    if (s->n >= BIG_TEXT)
        (void)tb_vec_reserve_big(&c->vocab, (s->n - s->at) / 6 + 1);
    if (!tb_json_eat(s, '}')) {
        do {
            entry_t e = {0};
            if (tb_json_string(s, &e.s, &e.len) || !tb_json_eat(s, ':') ||
                tb_json_uint(s, TOK_VOCAB_MAX_SIZE - 1, &e.id) ||
                c->vocab.len >= TOK_VOCAB_MAX_SIZE || tb_vec_push(&c->vocab, e))
                return -1;
        } while (tb_json_eat(s, ','));
        if (!tb_json_eat(s, '}'))
            return -1;
    }
    /* a string given twice: the tree would keep only its last id */
    return index_entries(c) ? -1 : 0;
}

/* model.vocab of a Unigram model: [["piece", score], ...]. */
static int scan_unigram_vocab(ctx_t *c, tb_json_scan_t *s)
{
    if (!tb_json_eat(s, '['))
        return -1;
    if (tb_json_eat(s, ']'))
        return 0;
    do {
        entry_t e = {.id = (uint32_t)c->vocab.len};
        double score;
        if (!tb_json_eat(s, '[') || tb_json_string(s, &e.s, &e.len) ||
            !tb_json_eat(s, ',') || tb_json_double(s, &score) ||
            !tb_json_eat(s, ']') || c->vocab.len >= TOK_VOCAB_MAX_SIZE)
            return -1;
        e.score = (float)score;
        if (tb_vec_push(&c->vocab, e))
            return -1;
    } while (tb_json_eat(s, ','));
    return tb_json_eat(s, ']') ? 0 : -1;
}

/* One merge, "left right" or ["left", "right"], onto the queue.  Its
 * strings' UTF-8 is left unchecked: each is looked up among model.vocab's,
 * which were checked, and one not found sends the file to jansson, whose
 * message names what is wrong (a space, ASCII, splits no character). */
static int scan_merge(ctx_t *c, tb_json_scan_t *s)
{
    const char *a, *b;
    size_t al, bl;
    if (tb_json_peek(s) == '"') {
        if (tb_json_string_unchecked(s, &a, &al))
            return -1;
        const char *sp = memchr(a, ' ', al);
        if (!sp || memchr(sp + 1, ' ', al - (size_t)(sp + 1 - a)))
            return -1;
        b = sp + 1;
        bl = al - (size_t)(b - a);
        al = (size_t)(sp - a);
    } else if (!tb_json_eat(s, '[') || tb_json_string_unchecked(s, &a, &al) ||
               !tb_json_eat(s, ',') || tb_json_string_unchecked(s, &b, &bl) ||
               !tb_json_eat(s, ']')) {
        return -1;
    }
    return push_merge(c, a, al, b, bl);
}

/* model.merges, after a BPE vocab (their strings are looked up in it).
 * Their text goes back to the system as it is read, every RELEASE_STEP
 * bytes, where no merge waits in the batch (its strings point into the
 * text): the merges are ids now, and no later step reads their text but
 * jansson, should the scanner give up, which reads the file again.  It
 * was 1 MB of Mistral's 1.8 MB file, held beside the string map. */
enum { RELEASE_STEP = 256 << 10 };

static int scan_merges(ctx_t *c, tb_json_scan_t *s)
{
    if (!c->ids.slots || !tb_json_eat(s, '['))
        return -1;
    if (tb_json_eat(s, ']'))
        return 0;
    size_t from = s->at, done = s->at;
    do {
        if (c->merges.len + c->batch.n >= UINT32_MAX - 1 || scan_merge(c, s))
            return -1;
        if (c->batch.n == 0 && s->at - done >= RELEASE_STEP) {
            tok_release_source(c->t, from, s->at);
            done = s->at;
        }
    } while (tb_json_eat(s, ','));
    if (!tb_json_eat(s, ']') || resolve_merges(c))
        return -1;
    tok_release_source(c->t, from, s->at);
    return 0;
}

/* One added_tokens entry, {"id": N, "content": "...", "special": true,
 * ...}, as read_added_into reads it from the tree.  Anything else (a
 * null, no id or content, an empty content, a key given twice) is the
 * tree's to read, and to name in its message. */
static int scan_added_token(tb_json_scan_t *s, added_t *e)
{
    static const char *const keys[] = {"id", "content", "special", "lstrip",
                                       "rstrip", "single_word", "normalized"};
    enum { N_KEYS = sizeof keys / sizeof *keys };
    int flag[N_KEYS] = {0};
    unsigned seen = 0;
    if (!tb_json_eat(s, '{') || tb_json_eat(s, '}'))
        return -1;
    do {
        const char *k;
        size_t len;
        unsigned which = 0;
        if (tb_json_string(s, &k, &len) || !tb_json_eat(s, ':'))
            return -1;
        while (which < N_KEYS && !key_is(k, len, keys[which]))
            which++;
        if (which < N_KEYS && (seen >> which & 1))
            return -1;
        seen |= 1u << which;
        int r = which == 0   ? tb_json_uint(s, TOK_VOCAB_MAX_SIZE - 1, &e->id)
                : which == 1 ? tb_json_string(s, &e->s, &e->len)
                : which < N_KEYS ? tb_json_bool(s, &flag[which])
                                 : tb_json_skip(s);
        if (r)
            return -1;
    } while (tb_json_eat(s, ','));
    if (!tb_json_eat(s, '}') || (seen & 3) != 3 || !e->len)
        return -1;
    e->special = (uint8_t)flag[2];
    e->lstrip = (uint8_t)flag[3];
    e->rstrip = (uint8_t)flag[4];
    e->single_word = (uint8_t)flag[5];
    e->normalized = (uint8_t)(seen >> 6 & 1 ? flag[6] : !flag[2]);
    return 0;
}

/* added_tokens into c->added (jansson, which Gemma 3's 6,415 took 190M
 * instructions to read, then sees an empty array); an id given twice is
 * left to the tree too. */
static int scan_added(ctx_t *c, tb_json_scan_t *s)
{
    tb_u64map_t seen;
    if (!tb_json_eat(s, '[') || tb_u64map_init(&seen, 64))
        return -1;
    int r = 0;
    if (!tb_json_eat(s, ']')) {
        do {
            added_t e = {0};
            r = scan_added_token(s, &e) || tb_u64map_put(&seen, e.id, 0) ||
                tb_vec_push(&c->added, e);
        } while (!r && tb_json_eat(s, ','));
        r = r || !tb_json_eat(s, ']');
    }
    tb_u64map_free(&seen);
    return r ? -1 : 0;
}

/* Reads the value at the read position with `read` (once) and notes its
 * span. */
static int take(ctx_t *c, tb_json_scan_t *s, span_t *v,
                int (*read)(ctx_t *, tb_json_scan_t *))
{
    if (v->end || tb_json_peek(s) < 0)
        return -1; /* a key given twice: the tree keeps the last one */
    v->at = s->at;
    if (read(c, s))
        return -1;
    v->end = s->at;
    return 0;
}

static int model_member(tb_json_scan_t *s, const char *k, size_t len,
                        finder_t *f)
{
    if (key_is(k, len, "vocab"))
        return take(f->c, s, &f->vocab,
                    tb_json_peek(s) == '{' ? scan_bpe_vocab : scan_unigram_vocab);
    if (key_is(k, len, "merges"))
        return take(f->c, s, &f->merges, scan_merges);
    return tb_json_skip(s);
}

static int top_member(tb_json_scan_t *s, const char *k, size_t len,
                      finder_t *f)
{
    if (key_is(k, len, "added_tokens") && tb_json_peek(s) == '[')
        return take(f->c, s, &f->added, scan_added);
    if (!key_is(k, len, "model"))
        return tb_json_skip(s);
    if (f->model.end || tb_json_peek(s) != '{')
        return -1;
    f->model.at = s->at;
    if (scan_members(s, f, model_member))
        return -1;
    f->model.end = s->at;
    return 0;
}

/* The values the scanner reads, whose insides jansson does not see. */
enum { CUTS = 3 };

/* Reads added_tokens, model.vocab and model.merges with the scanner (their
 * escaped strings into *out, which the caller frees) and gives their spans
 * in cut[], in text order: 0, or -1 where the tree must read the whole
 * file. */
static int scan_model(ctx_t *c, const char *t, size_t n, char **out,
                      span_t cut[CUTS])
{
    finder_t f = {.c = c};
    *out = malloc(n ? n : 1);
    tb_json_scan_t s = {.t = t, .n = n, .out = *out, .out_cap = n};
    if (!*out || scan_members(&s, &f, top_member) || tb_json_peek(&s) >= 0 ||
        !f.vocab.end)
        return -1;
    const span_t found[CUTS] = {f.added, f.vocab, f.merges};
    for (int i = 0; i < CUTS; i++) { /* insertion sort by place */
        int j = i;
        for (; j > 0 && cut[j - 1].at > found[i].at; j--)
            cut[j] = cut[j - 1];
        cut[j] = found[i];
    }
    c->scanned = 1;
    return 0;
}

/* What jansson reads when the scanner has taken its values: the text with
 * the inside of those values left out. */
typedef struct {
    const char *t;
    size_t n, at;
    span_t cut[CUTS];
} feed_t;

static size_t feed(void *buf, size_t size, void *arg)
{
    feed_t *f = arg;
    size_t k = size;
    for (int i = 0; i < CUTS; i++) {
        size_t inside = f->cut[i].at + 1;
        if (!f->cut[i].end)
            continue;
        if (f->at == inside)
            f->at = f->cut[i].end - 1;
        else if (inside > f->at && inside - f->at < k)
            k = inside - f->at;
    }
    if (k > f->n - f->at)
        k = f->n - f->at;
    memcpy(buf, f->t + f->at, k);
    f->at += k;
    return k;
}

/* Forgets what the scanner read, for the tree to read it all. */
static void unscan(ctx_t *c)
{
    c->vocab.len = 0;
    c->merges.len = 0;
    c->added.len = 0;
    memset(&c->batch, 0, sizeof c->batch);
    c->scratch.len = 0;
    c->scanned = 0;
    drop_ids(c);
}

int tok_load_hf_json(tok_tokenizer_t *t, const char *path, const uint8_t *data,
                     size_t len, tb_err_t *err)
{
    json_error_t jerr;
    ctx_t c = {.path = path, .err = err, .t = t};
    feed_t f = {.t = (const char *)data, .n = len};
    char *out;
    json_t *root = NULL;
    if (!scan_model(&c, (const char *)data, len, &out, f.cut))
        root = json_load_callback(feed, &f, JSON_ALLOW_NUL, &jerr);
    if (!root) {
        unscan(&c);
        root = json_loadb((const char *)data, len, JSON_ALLOW_NUL, &jerr);
    }
    int rc = root ? load(&c, root)
                  : tb_fail(err, "%s: JSON error at line %d, column %d (byte %d): %s",
                            path, jerr.line, jerr.column, jerr.position, jerr.text);
    free(out);
    free(c.vocab.data);
    free(c.merges.data);
    free(c.added.data);
    drop_ids(&c);
    tb_buf_free(&c.scratch);
    json_decref(root);
    return rc;
}
