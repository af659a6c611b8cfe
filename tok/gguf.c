/*
 * gguf: the tokenizer of a GGUF file (llama.cpp's model format), read from
 * its tokenizer.ggml.* metadata, and the inverse: a vocabulary-only GGUF
 * written from a loaded BPE tokenizer (export, and the tests' only source
 * of GGUF files, since no registry the machines reach ships one).
 *
 * Layout (GGUF v2 and v3, little-endian; the format's own specification,
 * ggml's docs/gguf.md): "GGUF", u32 version, u64 tensor count, u64
 * metadata count, then per entry a string key, a u32 value type and the
 * value.  A string is a u64 byte count and the bytes; an array is a u32
 * element type, a u64 count and the elements.  Tensor infos follow the
 * metadata and are not needed here.
 *
 * Every length and count is checked against the bytes that remain before
 * anything is allocated or read, so a truncated or hostile file gives a
 * message naming the file, the key and the byte offset.
 *
 * Models: "llama" is SentencePiece-style BPE (pieces with the U+2581 word
 * marker, <0xNN> byte pieces, merge priority by piece score, as llama.cpp's
 * SPM tokenizer does it); "gpt2" is byte-level BPE with an explicit merge
 * list and the split regexes named by tokenizer.ggml.pre (gguf_pre.c);
 * "bert" is BERT's WordPiece (wordpiece.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../base/utf8.h"
#include "tok_internal.h"

enum {
    GG_U8, GG_I8, GG_U16, GG_I16, GG_U32, GG_I32, GG_F32, GG_BOOL,
    GG_STRING, GG_ARRAY, GG_U64, GG_I64, GG_F64, GG_NTYPES
};

static const uint8_t gg_size[GG_NTYPES] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
static const char *const gg_type_name[GG_NTYPES] = {
    "uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
    "bool", "string", "array", "uint64", "int64", "float64"};

static const char *gg_tname(uint32_t t)
{
    return t < GG_NTYPES ? gg_type_name[t] : "unknown type";
}

/* The keys the loader reads. */
enum {
    K_MODEL, K_PRE, K_TOKENS, K_SCORES, K_TYPES, K_MERGES, K_BOS, K_EOS,
    K_UNK, K_PAD, K_SPACE_PREFIX, K_LOWERCASE, K_STRIP_ACCENTS, K_ADD_BOS,
    K_ADD_EOS, K_SEP, K_NAME, K_N
};

static const char *const gg_keys[K_N] = {
    "tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens",
    "tokenizer.ggml.scores", "tokenizer.ggml.token_type",
    "tokenizer.ggml.merges", "tokenizer.ggml.bos_token_id",
    "tokenizer.ggml.eos_token_id", "tokenizer.ggml.unknown_token_id",
    "tokenizer.ggml.padding_token_id", "tokenizer.ggml.add_space_prefix",
    "tokenizer.ggml.normalizer.lowercase",
    "tokenizer.ggml.normalizer.strip_accents",
    "tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_eos_token",
    "tokenizer.ggml.seperator_token_id", "general.name"};

/* Where a value sits: for an array, the element type, the count and the
 * offset of the first element. */
typedef struct {
    int present;
    uint32_t type, elem;
    uint64_t count;
    size_t at;
} gg_val_t;

typedef struct {
    const uint8_t *d;
    size_t len, pos;
    const char *path;
    const char *key; /* the key being read, NULL in the header */
    tb_err_t *err;
    gg_val_t vals[K_N];
} gg_rd_t;

static int gg_fail(gg_rd_t *r, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int gg_fail(gg_rd_t *r, size_t at, const char *fmt, ...)
{
    char msg[TB_ERR_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->key)
        return tb_fail(r->err, "%s: key '%.200s', byte %zu: %s", r->path,
                       r->key, at, msg);
    return tb_fail(r->err, "%s: byte %zu: %s", r->path, at, msg);
}

/* ---- primitive reads ------------------------------------------------ */

static int gg_need(gg_rd_t *r, uint64_t n, const char *what)
{
    if (n > r->len - r->pos)
        return gg_fail(r, r->pos, "%s needs %llu bytes but only %zu remain "
                                  "(truncated file?)",
                       what, (unsigned long long)n, r->len - r->pos);
    return 0;
}

static uint64_t gg_le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

static int gg_u32(gg_rd_t *r, uint32_t *v, const char *what)
{
    if (gg_need(r, 4, what))
        return -1;
    *v = (uint32_t)gg_le(r->d + r->pos, 4);
    r->pos += 4;
    return 0;
}

static int gg_u64(gg_rd_t *r, uint64_t *v, const char *what)
{
    if (gg_need(r, 8, what))
        return -1;
    *v = gg_le(r->d + r->pos, 8);
    r->pos += 8;
    return 0;
}

static int gg_str(gg_rd_t *r, const uint8_t **s, uint64_t *n, const char *what)
{
    size_t at = r->pos;
    if (gg_u64(r, n, what))
        return -1;
    if (*n > r->len - r->pos)
        return gg_fail(r, at, "%s of %llu bytes is longer than the %zu bytes "
                              "left in the file",
                       what, (unsigned long long)*n, r->len - r->pos);
    *s = r->d + r->pos;
    r->pos += (size_t)*n;
    return 0;
}

/* ---- walking the metadata ------------------------------------------- */

/* Skips a value of type `type`; arrays of arrays are allowed, two deep. */
static int gg_skip(gg_rd_t *r, uint32_t type, int depth)
{
    const uint8_t *s;
    uint64_t n;
    if (type >= GG_NTYPES)
        return gg_fail(r, r->pos, "unknown value type %u", type);
    if (type == GG_STRING)
        return gg_str(r, &s, &n, "string");
    if (type != GG_ARRAY) {
        if (gg_need(r, gg_size[type], gg_type_name[type]))
            return -1;
        r->pos += gg_size[type];
        return 0;
    }
    if (depth >= 2)
        return gg_fail(r, r->pos, "arrays nested more than two deep");
    uint32_t elem;
    size_t at = r->pos;
    if (gg_u32(r, &elem, "array element type") || gg_u64(r, &n, "array count"))
        return -1;
    if (elem >= GG_NTYPES)
        return gg_fail(r, at, "array of unknown element type %u", elem);
    /* The smallest an element can be: a string is at least its length. */
    uint64_t least = elem == GG_STRING ? 8 : elem == GG_ARRAY ? 12 : gg_size[elem];
    if (n > (r->len - r->pos) / least)
        return gg_fail(r, at, "array of %llu %s elements cannot fit in the "
                              "%zu bytes left",
                       (unsigned long long)n, gg_type_name[elem],
                       r->len - r->pos);
    if (gg_size[elem]) {
        r->pos += (size_t)n * gg_size[elem];
        return 0;
    }
    for (uint64_t i = 0; i < n; i++)
        if (gg_skip(r, elem, depth + 1))
            return -1;
    return 0;
}

/* Notes where a wanted key's value is, then skips it. */
static int gg_entry(gg_rd_t *r, char *keybuf, size_t keysize)
{
    const uint8_t *k;
    uint64_t klen;
    r->key = NULL;
    if (gg_str(r, &k, &klen, "metadata key"))
        return -1;
    snprintf(keybuf, keysize, "%.*s", (int)(klen < keysize ? klen : keysize - 1),
             (const char *)k);
    r->key = keybuf;
    uint32_t type;
    if (gg_u32(r, &type, "value type"))
        return -1;
    for (int i = 0; i < K_N; i++) {
        if (klen != strlen(gg_keys[i]) || memcmp(k, gg_keys[i], klen))
            continue;
        gg_val_t *v = &r->vals[i];
        if (v->present)
            return gg_fail(r, r->pos, "the key is given twice");
        *v = (gg_val_t){.present = 1, .type = type, .at = r->pos};
        if (type == GG_ARRAY && r->len - r->pos >= 12) {
            v->elem = (uint32_t)gg_le(r->d + r->pos, 4);
            v->count = gg_le(r->d + r->pos + 4, 8);
            v->at = r->pos + 12;
        }
    }
    return gg_skip(r, type, 0);
}

static int gg_header(gg_rd_t *r, uint64_t *nkv)
{
    uint32_t version;
    uint64_t ntensors;
    if (gg_need(r, 4, "magic") || memcmp(r->d, "GGUF", 4))
        return gg_fail(r, 0, "not a GGUF file (no GGUF magic)");
    r->pos = 4;
    if (gg_u32(r, &version, "version"))
        return -1;
    if (version == 1)
        return gg_fail(r, 4, "GGUF version 1 (32-bit counts) is not "
                             "supported; want version 2 or 3");
    if (version == 0x02000000u || version == 0x03000000u)
        return gg_fail(r, 4, "big-endian GGUF is not supported");
    if (version != 2 && version != 3)
        return gg_fail(r, 4, "GGUF version %u is not supported; want 2 or 3",
                       version);
    if (gg_u64(r, &ntensors, "tensor count") || gg_u64(r, nkv, "metadata count"))
        return -1;
    /* An entry is at least a key length, a type and one byte of value. */
    if (*nkv > (r->len - r->pos) / 13)
        return gg_fail(r, 16, "metadata count %llu cannot fit in the %zu "
                              "bytes left",
                       (unsigned long long)*nkv, r->len - r->pos);
    return 0;
}

/* ---- typed access to the recorded values ---------------------------- */

static const gg_val_t *gg_val(gg_rd_t *r, int k)
{
    r->key = gg_keys[k];
    return r->vals[k].present ? &r->vals[k] : NULL;
}

static int gg_get_str(gg_rd_t *r, int k, const uint8_t **s, uint64_t *n)
{
    const gg_val_t *v = gg_val(r, k);
    if (!v)
        return gg_fail(r, r->len, "missing");
    if (v->type != GG_STRING)
        return gg_fail(r, v->at, "want a string, found %s", gg_tname(v->type));
    r->pos = v->at;
    return gg_str(r, s, n, "string");
}

/* An array of `elem` (GG_I32 also accepts uint32), positioned at its first
 * element; fails if it is absent and `required`. */
static int gg_get_array(gg_rd_t *r, int k, uint32_t elem, int required,
                        const gg_val_t **out)
{
    const gg_val_t *v = gg_val(r, k);
    *out = NULL;
    if (!v)
        return required ? gg_fail(r, r->len, "missing") : 0;
    int ok = v->type == GG_ARRAY &&
             (v->elem == elem || (elem == GG_I32 && v->elem == GG_U32));
    if (!ok)
        return gg_fail(r, v->at, "want an array of %s, found %s%s%s",
                       gg_type_name[elem], gg_tname(v->type),
                       v->type == GG_ARRAY ? " of " : "",
                       v->type == GG_ARRAY ? gg_tname(v->elem) : "");
    r->pos = v->at;
    *out = v;
    return 0;
}

/* An optional integer id: -1 if absent. */
static int gg_get_id(gg_rd_t *r, int k, uint32_t size, int32_t *id)
{
    const gg_val_t *v = gg_val(r, k);
    *id = -1;
    if (!v)
        return 0;
    int is_int = v->type <= GG_I32 || v->type == GG_U64 || v->type == GG_I64;
    if (!is_int)
        return gg_fail(r, v->at, "want an integer, found %s", gg_tname(v->type));
    uint64_t x = gg_le(r->d + v->at, gg_size[v->type]);
    int neg = (v->type == GG_I8 || v->type == GG_I16 || v->type == GG_I32 ||
               v->type == GG_I64) &&
              (x >> (8 * gg_size[v->type] - 1)) & 1;
    if (neg || x >= size)
        return gg_fail(r, v->at, "token id %s%llu is not in the vocabulary of "
                                 "%u tokens",
                       neg ? "(negative) " : "", (unsigned long long)x, size);
    *id = (int32_t)x;
    return 0;
}

/* An optional bool: *b is left as it is if the key is absent. */
static int gg_get_bool(gg_rd_t *r, int k, int *b)
{
    const gg_val_t *v = gg_val(r, k);
    if (!v)
        return 0;
    if (v->type != GG_BOOL)
        return gg_fail(r, v->at, "want a bool, found %s", gg_tname(v->type));
    *b = r->d[v->at] != 0;
    return 0;
}

/* ---- tokens --------------------------------------------------------- */

static const char META[] = "\xe2\x96\x81"; /* U+2581, SentencePiece's space */

/* "<0xNN>" -> NN, or -1. */
static int gg_byte_piece(const uint8_t *s, size_t n)
{
    if (n != 6 || memcmp(s, "<0x", 3) || s[5] != '>')
        return -1;
    int v = 0;
    for (int i = 3; i < 5; i++) {
        int c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0'
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
              : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* How a model's file spells its tokens: GPT-2's byte alphabet, or text
 * with U+2581 for a space (SentencePiece, with <0xNN> byte pieces; BERT,
 * whose word-start pieces llama.cpp's converter marks so). */
enum { GG_FORM_BPE, GG_FORM_SPM, GG_FORM_WPM };

/* The raw bytes of token `id` (file string s[0..n)) into out. */
static int gg_token_bytes(gg_rd_t *r, int form, uint32_t id, tok_kind_t kind,
                          const uint8_t *s, uint64_t n, size_t at, tb_buf_t *out)
{
    out->len = 0;
    if (tb_buf_reserve(out, (size_t)n + 1))
        return tb_fail(r->err, "%s: out of memory", r->path);
    if (form == GG_FORM_SPM && kind == TOK_BYTE) {
        int b = gg_byte_piece(s, (size_t)n);
        if (b < 0)
            return gg_fail(r, at, "token %u is a byte token but not <0xNN>: "
                                  "\"%.40s\"",
                           id, (const char *)s);
        out->data[out->len++] = (uint8_t)b;
        return 0;
    }
    if (form != GG_FORM_BPE) { /* the word marker stands for a space */
        for (size_t i = 0; i < n;) {
            int m = n - i >= 3 && !memcmp(s + i, META, 3);
            out->data[out->len++] = m ? ' ' : s[i];
            i += m ? 3 : 1;
        }
        return 0;
    }
    if (kind == TOK_CONTROL || kind == TOK_USER || kind == TOK_UNKNOWN) {
        memcpy(out->data, s, (size_t)n); /* added tokens are plain text */
        out->len = (size_t)n;
        return 0;
    }
    long k = tok_gpt2_decode(s, (size_t)n, out->data);
    if (k < 0)
        return gg_fail(r, at, "token %u \"%.40s\" has a character outside "
                              "GPT-2's byte alphabet",
                       id, (const char *)s);
    out->len = (size_t)k;
    return 0;
}

static int gg_kind(gg_rd_t *r, const gg_val_t *types, uint32_t id,
                   tok_kind_t *kind)
{
    *kind = TOK_NORMAL;
    if (!types)
        return 0;
    size_t at = types->at + 4 * (size_t)id;
    int32_t k = (int32_t)gg_le(r->d + at, 4);
    if (k < TOK_NORMAL || k > TOK_BYTE) {
        r->key = gg_keys[K_TYPES];
        return gg_fail(r, at, "token %u has type %d; want 1 to 6", id, k);
    }
    *kind = (tok_kind_t)k;
    return 0;
}

static float gg_score(gg_rd_t *r, const gg_val_t *scores, uint32_t id)
{
    if (!scores)
        return 0;
    uint32_t bits = (uint32_t)gg_le(r->d + scores->at + 4 * (size_t)id, 4);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Texts llama.cpp takes for control tokens whatever the file's type says
 * (its end-of-generation, end-of-turn and fill-in-the-middle names). */
static const char *const gg_control_texts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
    "<|eom_id|>", "<EOT>",
    "<\xef\xbd\x9c" "end\xe2\x96\x81" "of\xe2\x96\x81" "sentence\xef\xbd\x9c>",
    "<|fim_prefix|>", "<fim-prefix>", "<PRE>", "<|fim_suffix|>", "<fim-suffix>",
    "<SUF>", "<|fim_middle|>", "<fim-middle>", "<MID>", "<|fim_pad|>",
    "<fim-pad>", "<PAD>", "<|fim_repo|>", "<|repo_name|>", "<fim-repo>",
    "<REPO>", "<|file_sep|>"};

static int gg_control_like(const uint8_t *s, uint64_t n)
{
    if (n < 5 || s[0] != '<' || s[n - 1] != '>')
        return 0;
    for (size_t i = 0; i < sizeof gg_control_texts / sizeof *gg_control_texts; i++)
        if (n == strlen(gg_control_texts[i]) && !memcmp(s, gg_control_texts[i], n))
            return 1;
    return 0;
}

/* Special as llama.cpp treats it: parsed only under parse_special and
 * rendered as nothing by a detokenize without unparse_special. */
static int gg_special(tok_kind_t kind, const uint8_t *s, uint64_t n)
{
    return kind == TOK_CONTROL || kind == TOK_UNKNOWN || gg_control_like(s, n);
}

/* tokens, scores and token_type into t->vocab. */
static int gg_vocab(gg_rd_t *r, tok_tokenizer_t *t, int form)
{
    const gg_val_t *tokens, *scores, *types;
    if (gg_get_array(r, K_SCORES, GG_F32, form == GG_FORM_SPM, &scores) ||
        gg_get_array(r, K_TYPES, GG_I32, 0, &types) ||
        gg_get_array(r, K_TOKENS, GG_STRING, 1, &tokens))
        return -1;
    uint64_t n = tokens->count;
    if (n == 0 || n > TOK_VOCAB_MAX_SIZE)
        return gg_fail(r, tokens->at - 8, "%llu tokens; want 1 to %u",
                       (unsigned long long)n, TOK_VOCAB_MAX_SIZE);
    if (scores && scores->count != n)
        return gg_fail(r, scores->at - 8, "%llu scores for %llu tokens",
                       (unsigned long long)scores->count, (unsigned long long)n);
    if (types && types->count != n)
        return gg_fail(r, types->at - 8, "%llu token types for %llu tokens",
                       (unsigned long long)types->count, (unsigned long long)n);
    tok_vocab_builder_t *b = tok_vocab_builder_new();
    tb_buf_t raw = {0};
    if (!b)
        return tb_fail(r->err, "%s: out of memory", r->path);
    /* sized once, not doubled by copies beside the mapped file (about 6
     * bytes a token in the vocabularies seen: past 16 it grows as usual) */
    tok_vocab_builder_reserve(b, (size_t)n, (size_t)n * 16);
    r->pos = tokens->at;
    for (uint32_t id = 0; id < n; id++) {
        const uint8_t *s;
        uint64_t len;
        tok_kind_t kind;
        size_t at = r->pos;
        r->key = gg_keys[K_TOKENS];
        if (gg_str(r, &s, &len, "token") || gg_kind(r, types, id, &kind) ||
            gg_token_bytes(r, form, id, kind, s, len, at, &raw) ||
            tok_vocab_add(b, id, raw.data, raw.len, gg_score(r, scores, id),
                          kind, gg_special(kind, s, len), r->err)) {
            if (!strstr(r->err->msg, r->path))
                tb_wrap(r->err, "%s: key '%s', byte %zu", r->path,
                        gg_keys[K_TOKENS], at);
            tb_buf_free(&raw);
            tok_vocab_builder_free(b);
            return -1;
        }
    }
    tb_buf_free(&raw);
    /* the builder holds the tokens: their part of the file, and the
     * scores' and the types', go before the vocabulary's arrays come */
    tok_release_source(t, tokens->at, r->pos);
    if (scores)
        tok_release_source(t, scores->at, scores->at + 4 * n);
    if (types)
        tok_release_source(t, types->at, types->at + 4 * n);
    if (tok_vocab_finish(b, &t->vocab, r->err))
        return tb_wrap(r->err, "%s", r->path);
    return 0;
}

static int gg_special_ids(gg_rd_t *r, tok_vocab_t *v)
{
    return gg_get_id(r, K_BOS, v->size, &v->bos) ||
           gg_get_id(r, K_EOS, v->size, &v->eos) ||
           gg_get_id(r, K_UNK, v->size, &v->unk) ||
           gg_get_id(r, K_PAD, v->size, &v->pad);
}

/* ---- the pipeline --------------------------------------------------- */

/* 1 if general.name names a Phi-3 model (llama.cpp's test, lowercased). */
static int gg_is_phi3(gg_rd_t *r)
{
    const uint8_t *s;
    uint64_t n;
    if (!r->vals[K_NAME].present || gg_get_str(r, K_NAME, &s, &n))
        return 0;
    for (uint64_t i = 0; i + 4 <= n; i++)
        if (!strncasecmp((const char *)s + i, "phi3", 4) ||
            (i + 5 <= n && !strncasecmp((const char *)s + i, "phi-3", 5)))
            return 1;
    return 0;
}

/* Control, user-defined and unknown tokens (and the texts llama.cpp takes
 * for control tokens) are matched verbatim in the text, the special ones
 * only under TOK_PARSE_SPECIAL, as llama.cpp's parse_special.  Phi-3's
 * special tokens swallow the white space after them, as llama.cpp sets
 * them (its RSTRIP attribute), all but <unk>, <s> and <|endoftext|>. */
static int gg_added(gg_rd_t *r, tok_tokenizer_t *t)
{
    const tok_vocab_t *v = &t->vocab;
    int phi3 = gg_is_phi3(r);
    for (uint32_t id = 0; id < v->size; id++) {
        uint8_t k = v->kind[id];
        size_t len;
        const uint8_t *s = tok_vocab_token(v, id, &len);
        if (k != TOK_CONTROL && k != TOK_USER && k != TOK_UNKNOWN &&
            !gg_control_like(s, len))
            continue;
        tok_added_t a;
        memset(&a, 0, sizeof a);
        a.id = id;
        a.special = v->special[id];
        a.rstrip = phi3 && !(len == 5 && !memcmp(s, "<unk>", 5)) &&
                   !(len == 3 && !memcmp(s, "<s>", 3)) &&
                   !(len == 13 && !memcmp(s, "<|endoftext|>", 13));
        if (!len)
            continue;
        if (tb_buf_put(&a.content, s, len) || tb_vec_push(&t->added, a)) {
            tb_buf_free(&a.content);
            return tb_fail(r->err, "%s: out of memory", r->path);
        }
    }
    t->match_added = t->added.len > 0;
    return 0;
}

static int gg_norm(tok_tokenizer_t *t, tok_norm_kind_t kind, const char *a,
                   const char *b)
{
    tok_norm_t n;
    memset(&n, 0, sizeof n);
    n.kind = kind;
    if ((a && tb_buf_put(&n.a, a, strlen(a))) ||
        (b && tb_buf_put(&n.b, b, strlen(b))) || tb_vec_push(&t->norms, n)) {
        tb_buf_free(&n.a);
        tb_buf_free(&n.b);
        return -1;
    }
    return 0;
}

/* One split step of an isolated regex. */
static int gg_split(gg_rd_t *r, tok_tokenizer_t *t, const char *pattern)
{
    tok_pre_t pre;
    memset(&pre, 0, sizeof pre);
    pre.kind = TOK_PRE_SPLIT;
    pre.behavior = TOK_SPLIT_ISOLATED;
    int rc = tok_pre_compile(&pre, (const uint8_t *)pattern, strlen(pattern),
                             0, r->err);
    if (rc)
        tb_wrap(r->err, "%s: %s", r->path, gg_keys[K_PRE]);
    else if (tb_vec_push(&t->pres, pre))
        rc = tb_fail(r->err, "%s: out of memory", r->path);
    if (rc) {
        tb_buf_free(&pre.pattern);
        pcre2_code_free(pre.re);
    }
    return rc;
}

/* tokenizer.ggml.pre: the split regexes of the named family (gguf_pre.c);
 * absent, GPT-2's. */
static int gg_pretokenizer(gg_rd_t *r, tok_tokenizer_t *t)
{
    const uint8_t *s = (const uint8_t *)"default";
    uint64_t n = 7;
    if (r->vals[K_PRE].present && gg_get_str(r, K_PRE, &s, &n))
        return -1;
    tok_gguf_pre_t p;
    if (tok_gguf_pre(s, (size_t)n, &p, r->err))
        return tb_wrap(r->err, "%s: key '%s', byte %zu", r->path,
                       gg_keys[K_PRE], r->vals[K_PRE].at);
    t->bpe.ignore_merges = p.ignore_merges;
    if (p.nfc && gg_norm(t, TOK_NORM_NFC, NULL, NULL))
        return tb_fail(r->err, "%s: out of memory", r->path);
    for (size_t i = 0; p.patterns[i]; i++)
        if (gg_split(r, t, p.patterns[i]))
            return -1;
    return 0;
}

/* tokenizer.ggml.merges: "LEFT RIGHT" in GPT-2's alphabet, by rank. */
static int gg_merges(gg_rd_t *r, tok_tokenizer_t *t)
{
    const gg_val_t *m;
    if (gg_get_array(r, K_MERGES, GG_STRING, 1, &m))
        return -1;
    const tok_vocab_t *v = &t->vocab;
    uint8_t *raw = NULL;
    size_t room = 0;
    /* one table for them all (the count is checked against the file) */
    if (tok_bpe_reserve_merges(&t->bpe, (size_t)m->count))
        return tb_fail(r->err, "%s: out of memory for %llu merges", r->path,
                       (unsigned long long)m->count);
    for (uint64_t i = 0; i < m->count; i++) {
        const uint8_t *s;
        uint64_t n;
        size_t at = r->pos;
        if (gg_str(r, &s, &n, "merge"))
            goto fail;
        const uint8_t *sp = memchr(s, ' ', (size_t)n);
        if (n + 1 > room) {
            room = (size_t)n + 64;
            uint8_t *p = realloc(raw, room);
            if (!p) {
                tb_fail(r->err, "%s: out of memory", r->path);
                goto fail;
            }
            raw = p;
        }
        long ln = sp ? tok_gpt2_decode(s, (size_t)(sp - s), raw) : -1;
        long rn = ln >= 0 ? tok_gpt2_decode(sp + 1, (size_t)(s + n - sp - 1),
                                            raw + ln)
                          : -1;
        int32_t l = ln > 0 ? tok_vocab_find(v, raw, (size_t)ln) : -1;
        int32_t rr = rn > 0 ? tok_vocab_find(v, raw + ln, (size_t)rn) : -1;
        int32_t to = l >= 0 && rr >= 0
                         ? tok_vocab_find(v, raw, (size_t)(ln + rn)) : -1;
        if (to < 0) {
            gg_fail(r, at, "merge %llu \"%.60s\" does not join two tokens "
                           "into a token",
                    (unsigned long long)i, (const char *)s);
            goto fail;
        }
        if (tok_bpe_add_merge(&t->bpe, (uint32_t)l, (uint32_t)rr,
                              (uint32_t)i, (uint32_t)to)) {
            tb_fail(r->err, "%s: out of memory adding merges", r->path);
            goto fail;
        }
    }
    free(raw);
    return 0;
fail:
    free(raw);
    return -1;
}

/* Byte-level BPE: GPT-2 style. */
static int gg_setup_gpt2(gg_rd_t *r, tok_tokenizer_t *t)
{
    t->bpe.byte_level = 1;
    if (gg_merges(r, t) || gg_pretokenizer(r, t) ||
        gg_added(r, t))
        return -1;
    /* as for tokenizer.json: a byte-level model takes any bytes unless a
     * normalizer needs characters */
    t->needs_utf8 = t->norms.len > 0;
    snprintf(t->model_name, sizeof t->model_name, "byte-level bpe");
    return 0;
}

/* SentencePiece-style BPE as llama.cpp runs it and as Llama 2's
 * tokenizer.json spells it: a marker before the text, spaces as markers,
 * no pre-tokenizer, byte fallback. */
static int gg_setup_llama(gg_rd_t *r, tok_tokenizer_t *t)
{
    int prefix = 1;
    if (gg_get_bool(r, K_SPACE_PREFIX, &prefix))
        return -1;
    const tok_vocab_t *v = &t->vocab;
    for (uint32_t id = 0; id < v->size; id++)
        t->bpe.byte_fallback |= v->kind[id] == TOK_BYTE;
    t->bpe.fuse_unk = 1;
    t->bpe.unk = v->unk;
    if ((prefix && gg_norm(t, TOK_NORM_PREPEND, META, NULL)) ||
        gg_norm(t, TOK_NORM_REPLACE, " ", META))
        return tb_fail(r->err, "%s: out of memory", r->path);
    t->meta_to_space = 1;
    t->needs_utf8 = 1;
    if (prefix)
        t->decode_flags |= TOK_DEC_STRIP_LEADING_SPACE;
    snprintf(t->model_name, sizeof t->model_name, "%s",
             t->bpe.byte_fallback ? "bpe+byte-fallback" : "bpe");
    /* the file has no merges: a pair merges into the normal piece its two
     * normal parts spell, the best score first (llama.cpp's rule) */
    t->bpe.rank_by = TOK_RANK_SCORE;
    return gg_added(r, t);
}

/* BERT's WordPiece as llama.cpp runs it (wordpiece.c), with its defaults:
 * lowercase unless the file says not, accents stripped as lowercase is
 * unless the file says otherwise. */
static int gg_setup_bert(gg_rd_t *r, tok_tokenizer_t *t)
{
    tok_wordpiece_t *w = &t->wordpiece;
    w->lowercase = 1;
    if (gg_get_bool(r, K_LOWERCASE, &w->lowercase))
        return -1;
    w->strip_accents = w->lowercase;
    if (gg_get_bool(r, K_STRIP_ACCENTS, &w->strip_accents))
        return -1;
    w->unk = t->vocab.unk;
    w->split_text = 1;
    t->model = TOK_MODEL_WORDPIECE;
    t->needs_utf8 = 1;
    t->decode_flags |= TOK_DEC_STRIP_LEADING_SPACE;
    snprintf(t->model_name, sizeof t->model_name, "wordpiece");
    return gg_added(r, t);
}

/* One id TOK_ADD_SPECIAL adds: the key's, else llama.cpp's default for the
 * model, or the reason there is none in t->add_special_error. */
static int gg_add_id(gg_rd_t *r, tok_tokenizer_t *t, int k, int32_t dflt,
                     tok_ids_t *to)
{
    int32_t id;
    if (gg_get_id(r, k, t->vocab.size, &id))
        return -1;
    if (id < 0)
        id = dflt;
    if (id < 0 || (uint32_t)id >= t->vocab.size) {
        snprintf(t->add_special_error, sizeof t->add_special_error,
                 "%s: no '%s' and no default id in the vocabulary", r->path,
                 gg_keys[k]);
        return 0;
    }
    return tb_vec_push(to, (uint32_t)id)
               ? tb_fail(r->err, "%s: out of memory", r->path) : 0;
}

/* What llama.cpp's tokenize adds under add_special: BERT always [CLS] and
 * [SEP]; the others BOS if add_bos, EOS if add_eos, from the keys, else
 * llama.cpp's defaults (llama: BOS; gpt2: BOS for the pre-tokenizers that
 * set it, none otherwise).  Absent ids default as llama.cpp's do. */
static int gg_add_special(gg_rd_t *r, tok_tokenizer_t *t, int form)
{
    static const char *const bos_pres[] = {"llama3", "llama-v3", "llama-bpe",
                                           "falcon3", "tekken", "chameleon"};
    if (form == GG_FORM_WPM)
        return gg_add_id(r, t, K_BOS, 101, &t->special_prefix) ||
               gg_add_id(r, t, K_SEP, 102, &t->special_suffix);
    int add_bos = form == GG_FORM_SPM, add_eos = 0;
    const uint8_t *pre;
    uint64_t n;
    if (form == GG_FORM_BPE && r->vals[K_PRE].present &&
        !gg_get_str(r, K_PRE, &pre, &n))
        for (size_t i = 0; i < sizeof bos_pres / sizeof *bos_pres; i++)
            add_bos |= n == strlen(bos_pres[i]) && !memcmp(pre, bos_pres[i], n);
    if (gg_get_bool(r, K_ADD_BOS, &add_bos) ||
        gg_get_bool(r, K_ADD_EOS, &add_eos))
        return -1;
    int spm = form == GG_FORM_SPM;
    return (add_bos && gg_add_id(r, t, K_BOS, spm ? 1 : 11, &t->special_prefix)) ||
           (add_eos && gg_add_id(r, t, K_EOS, spm ? 2 : 11, &t->special_suffix));
}

int tok_load_gguf(tok_tokenizer_t *t, const char *path, const uint8_t *data,
                  size_t len, tb_err_t *err)
{
    gg_rd_t r = {.d = data, .len = len, .path = path, .err = err};
    uint64_t nkv;
    char key[256];
    if (gg_header(&r, &nkv))
        return -1;
    for (uint64_t i = 0; i < nkv; i++)
        if (gg_entry(&r, key, sizeof key))
            return -1;
    const uint8_t *model;
    uint64_t mlen;
    if (gg_get_str(&r, K_MODEL, &model, &mlen))
        return -1;
    int form = mlen == 5 && !memcmp(model, "llama", 5) ? GG_FORM_SPM
               : mlen == 4 && !memcmp(model, "bert", 4)  ? GG_FORM_WPM
               : mlen == 4 && !memcmp(model, "gpt2", 4)  ? GG_FORM_BPE : -1;
    if (form < 0)
        return gg_fail(&r, r.vals[K_MODEL].at, "tokenizer model '%.*s' is not "
                                               "supported (want llama, gpt2 "
                                               "or bert)",
                       (int)(mlen > 60 ? 60 : mlen), (const char *)model);
    t->model = TOK_MODEL_BPE;
    if (gg_vocab(&r, t, form) || gg_special_ids(&r, &t->vocab))
        return -1;
    int rc = form == GG_FORM_SPM ? gg_setup_llama(&r, t)
             : form == GG_FORM_WPM ? gg_setup_bert(&r, t)
                                   : gg_setup_gpt2(&r, t);
    return rc ? rc : gg_add_special(&r, t, form);
}

/* ---- writing -------------------------------------------------------- */

typedef struct {
    tb_buf_t b;
    int oom;
} gg_wr_t;

static void gw_put(gg_wr_t *w, const void *p, size_t n)
{
    w->oom |= tb_buf_put(&w->b, p, n);
}

static void gw_le(gg_wr_t *w, uint64_t v, size_t n)
{
    uint8_t x[8];
    for (size_t i = 0; i < n; i++)
        x[i] = (uint8_t)(v >> (8 * i));
    gw_put(w, x, n);
}

static void gw_str(gg_wr_t *w, const void *s, size_t n)
{
    gw_le(w, n, 8);
    gw_put(w, s, n);
}

static void gw_key(gg_wr_t *w, const char *key, uint32_t type)
{
    gw_str(w, key, strlen(key));
    gw_le(w, type, 4);
}

static void gw_array(gg_wr_t *w, const char *key, uint32_t elem, uint64_t n)
{
    gw_key(w, key, GG_ARRAY);
    gw_le(w, elem, 4);
    gw_le(w, n, 8);
}

/* Token id as the file spells it (the inverse of gg_token_bytes). */
static void gw_token(gg_wr_t *w, const tok_vocab_t *v, uint32_t id, int spm,
                     tb_buf_t *tmp)
{
    size_t n;
    const uint8_t *s = tok_vocab_token(v, id, &n);
    uint8_t k = v->kind[id];
    tmp->len = 0;
    if (spm && k == TOK_BYTE) {
        char piece[8];
        snprintf(piece, sizeof piece, "<0x%02X>", s[0]);
        w->oom |= tb_buf_put(tmp, piece, 6);
    } else if (spm) {
        for (size_t i = 0; i < n; i++)
            w->oom |= s[i] == ' ' ? tb_buf_put(tmp, META, 3)
                                  : tb_buf_putc(tmp, s[i]);
    } else if (k == TOK_CONTROL || k == TOK_USER || k == TOK_UNKNOWN) {
        w->oom |= tb_buf_put(tmp, s, n);
    } else {
        for (size_t i = 0; i < n; i++) {
            uint8_t u[4];
            w->oom |= tb_buf_put(tmp, u, tb_utf8_encode(tok_gpt2_byte_to_cp(s[i]), u));
        }
    }
    gw_str(w, tmp->data, tmp->len);
}

typedef struct {
    uint32_t rank, left, right, to;
} gg_merge_t;

static int gg_by_rank(const void *a, const void *b)
{
    const gg_merge_t *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The merge table in rank order (malloc'd into *out). */
static size_t gg_collect_merges(const tok_bpe_t *m, gg_merge_t **out)
{
    *out = malloc((m->merges.count ? m->merges.count : 1) * sizeof **out);
    if (!*out)
        return 0;
    size_t n = 0;
    for (size_t i = 0; m->merges.slots && i < m->merges.size; i++) {
        uint64_t k = m->merges.slots[i].key;
        if (k == UINT64_MAX)
            continue;
        uint64_t val = m->merges.slots[i].val;
        (*out)[n++] = (gg_merge_t){(uint32_t)(val >> 32), (uint32_t)(k >> 32),
                                   (uint32_t)k, (uint32_t)val};
    }
    qsort(*out, n, sizeof **out, gg_by_rank);
    return n;
}

static void gw_merges(gg_wr_t *w, const tok_tokenizer_t *t, const gg_merge_t *m,
                      size_t n, tb_buf_t *tmp)
{
    gw_array(w, gg_keys[K_MERGES], GG_STRING, n);
    for (size_t i = 0; i < n; i++) {
        tmp->len = 0;
        uint32_t side[2] = {m[i].left, m[i].right};
        for (int k = 0; k < 2; k++) {
            size_t len;
            const uint8_t *s = tok_vocab_token(&t->vocab, side[k], &len);
            for (size_t j = 0; j < len; j++) {
                uint8_t u[4];
                w->oom |= tb_buf_put(tmp, u, tb_utf8_encode(tok_gpt2_byte_to_cp(s[j]), u));
            }
            if (!k)
                w->oom |= tb_buf_putc(tmp, ' ');
        }
        gw_str(w, tmp->data, tmp->len);
    }
}

/* Scores for a SentencePiece-style file: a piece that a merge makes
 * scores minus its best merge rank, so score order is merge order; other
 * normal pieces come after every merge. */
static float *gg_spm_scores(const tok_tokenizer_t *t, const gg_merge_t *m,
                            size_t n)
{
    const tok_vocab_t *v = &t->vocab;
    float *sc = calloc(v->size ? v->size : 1, sizeof *sc);
    uint32_t *best = malloc((v->size ? v->size : 1) * sizeof *best);
    if (!sc || !best) {
        free(sc);
        free(best);
        return NULL;
    }
    uint32_t top = 0;
    for (uint32_t id = 0; id < v->size; id++)
        best[id] = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        uint32_t to = m[i].to;
        if (m[i].rank < best[to])
            best[to] = m[i].rank;
        if (m[i].rank + 1 > top)
            top = m[i].rank + 1;
    }
    for (uint32_t id = 0; id < v->size; id++)
        if (v->kind[id] == TOK_NORMAL)
            sc[id] = -(float)(best[id] != UINT32_MAX ? best[id] : top + id);
    free(best);
    return sc;
}

static size_t gg_count_kv(const tok_tokenizer_t *t, int spm, const char *pre)
{
    const tok_vocab_t *v = &t->vocab;
    return 5 + (size_t)(spm ? 1 : 1 + (pre != NULL)) + (v->bos >= 0) +
           (v->eos >= 0) + (v->unk >= 0) + (v->pad >= 0);
}

static void gw_body(gg_wr_t *w, const tok_tokenizer_t *t, int spm,
                    const char *pre, const gg_merge_t *m, size_t nm,
                    const float *scores)
{
    const tok_vocab_t *v = &t->vocab;
    tb_buf_t tmp = {0};
    gw_put(w, "GGUF", 4);
    gw_le(w, 3, 4);
    gw_le(w, 0, 8);
    gw_le(w, gg_count_kv(t, spm, pre), 8);
    gw_key(w, "general.architecture", GG_STRING);
    gw_str(w, "llama", 5);
    gw_key(w, gg_keys[K_MODEL], GG_STRING);
    gw_str(w, spm ? "llama" : "gpt2", spm ? 5 : 4);
    if (!spm && pre) {
        gw_key(w, gg_keys[K_PRE], GG_STRING);
        gw_str(w, pre, strlen(pre));
    }
    gw_array(w, gg_keys[K_TOKENS], GG_STRING, v->size);
    for (uint32_t id = 0; id < v->size; id++)
        gw_token(w, v, id, spm, &tmp);
    gw_array(w, gg_keys[K_SCORES], GG_F32, v->size);
    for (uint32_t id = 0; id < v->size; id++) {
        uint32_t bits;
        float f = scores ? scores[id] : v->score[id];
        memcpy(&bits, &f, 4);
        gw_le(w, bits, 4);
    }
    gw_array(w, gg_keys[K_TYPES], GG_I32, v->size);
    for (uint32_t id = 0; id < v->size; id++)
        gw_le(w, v->kind[id], 4);
    if (spm) {
        gw_key(w, gg_keys[K_SPACE_PREFIX], GG_BOOL);
        gw_le(w, 1, 1);
    } else {
        gw_merges(w, t, m, nm, &tmp);
    }
    int32_t ids[4] = {v->bos, v->eos, v->unk, v->pad};
    for (int i = 0; i < 4; i++)
        if (ids[i] >= 0) {
            gw_key(w, gg_keys[K_BOS + i], GG_U32);
            gw_le(w, (uint32_t)ids[i], 4);
        }
    tb_buf_free(&tmp);
}

int tok_gguf_write(const tok_tokenizer_t *t, const char *path, const char *pre,
                   tb_err_t *err)
{
    if (t->model != TOK_MODEL_BPE)
        return tb_fail(err, "%s: GGUF export supports BPE tokenizers only, "
                            "not %s",
                       path, t->model_name);
    if (t->bpe.rank_by == TOK_RANK_ID)
        return tb_fail(err, "%s: GGUF export needs merges, and a tiktoken "
                            "vocabulary has none",
                       path);
    int spm = !t->bpe.byte_level;
    /* a model ranked by scores (a GGUF's) keeps its own; one with merges
     * gets scores in their order */
    int own = t->bpe.rank_by == TOK_RANK_SCORE;
    gg_merge_t *m;
    size_t nm = gg_collect_merges(&t->bpe, &m);
    float *scores = m && spm && !own ? gg_spm_scores(t, m, nm) : NULL;
    int ready = m && (!spm || own || scores);
    gg_wr_t w = {0};
    if (ready)
        gw_body(&w, t, spm, pre, m, nm, scores);
    int rc = 0;
    if (!ready || w.oom)
        rc = tb_fail(err, "%s: out of memory", path);
    free(m);
    free(scores);
    FILE *f = rc ? NULL : fopen(path, "wb");
    if (!rc && !f)
        rc = tb_fail(err, "%s: cannot create", path);
    if (f) {
        size_t put = fwrite(w.b.data, 1, w.b.len, f);
        if (fclose(f) || put != w.b.len)
            rc = tb_fail(err, "%s: write failed", path);
    }
    tb_buf_free(&w.b);
    return rc;
}
