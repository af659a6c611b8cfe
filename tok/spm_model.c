/*
 * spm_model: loader of SentencePiece .model files, a protobuf ModelProto
 * read by hand.  Field numbers are those of sentencepiece_model.proto:
 *   ModelProto      pieces 1, trainer_spec 2, normalizer_spec 3
 *   SentencePiece   piece 1 (string), score 2 (float), type 3 (enum)
 *   TrainerSpec     model_type 3 (1 unigram, 2 bpe, 3 word, 4 char),
 *                   treat_whitespace_as_suffix 24, byte_fallback 35,
 *                   unk_id 40, bos_id 41, eos_id 42, pad_id 43
 *   NormalizerSpec  name 1, precompiled_charsmap 2, add_dummy_prefix 3,
 *                   remove_extra_whitespaces 4, escape_whitespaces 5
 *                   (the three flags default to true)
 * Every read is bounds-checked; a malformed file gives a message naming the
 * file, the field and the byte offset.
 *
 * The tokenizer it builds: one TOK_NORM_SPM normalizer step, no
 * pre-tokenizer (the whole normalized text is one word), then Unigram
 * Viterbi or BPE merges.  User-defined pieces are never split out of the
 * raw text as Hugging Face added tokens are: SentencePiece normalizes the
 * whole text (leaving them as they are), then Unigram gives them a bonus in
 * the lattice and BPE freezes them (see add_user_pieces).
 */
#include <float.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/utf8.h"
#include "charsmap.h"
#include "tok_internal.h"

/* ---- protobuf wire format ------------------------------------------- */

typedef struct {
    const char *path;
    const uint8_t *base; /* start of the file, for byte offsets */
    tb_err_t *err;
} pb_file_t;

typedef struct {
    const uint8_t *p, *end;
} pb_cur_t;

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

static size_t pb_off(const pb_file_t *f, const uint8_t *p)
{
    return (size_t)(p - f->base);
}

static int pb_varint(const pb_file_t *f, pb_cur_t *c, uint64_t *v,
                     const char *field)
{
    const uint8_t *start = c->p;
    uint64_t r = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (c->p >= c->end)
            return tb_fail(f->err, "%s: byte %zu: truncated varint in %s",
                           f->path, pb_off(f, start), field);
        uint8_t b = *c->p++;
        r |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            *v = r;
            return 0;
        }
    }
    return tb_fail(f->err, "%s: byte %zu: varint in %s longer than 10 bytes",
                   f->path, pb_off(f, start), field);
}

/* Reads a tag: field number and wire type. */
static int pb_tag(const pb_file_t *f, pb_cur_t *c, uint32_t *num, uint32_t *wt,
                  const char *msg)
{
    const uint8_t *at = c->p;
    uint64_t tag;
    if (pb_varint(f, c, &tag, msg))
        return -1;
    *num = (uint32_t)(tag >> 3);
    *wt = (uint32_t)(tag & 7);
    if (tag >> 3 == 0 || tag >> 32)
        return tb_fail(f->err, "%s: byte %zu: invalid field number %llu in %s",
                       f->path, pb_off(f, at), (unsigned long long)(tag >> 3),
                       msg);
    return 0;
}

static int pb_expect(const pb_file_t *f, const pb_cur_t *c, uint32_t wt,
                     uint32_t want, const char *field)
{
    if (wt == want)
        return 0;
    return tb_fail(f->err, "%s: byte %zu: %s has wire type %u, expected %u",
                   f->path, pb_off(f, c->p), field, wt, want);
}

/* A length-delimited value: its bytes stay in the file. */
static int pb_bytes(const pb_file_t *f, pb_cur_t *c, pb_cur_t *val,
                    const char *field)
{
    const uint8_t *at = c->p;
    uint64_t n;
    if (pb_varint(f, c, &n, field))
        return -1;
    if (n > (uint64_t)(c->end - c->p))
        return tb_fail(f->err, "%s: byte %zu: length %llu of %s runs past the "
                               "end of its message (%zu bytes left)",
                       f->path, pb_off(f, at), (unsigned long long)n, field,
                       (size_t)(c->end - c->p));
    val->p = c->p;
    val->end = c->p + n;
    c->p += n;
    return 0;
}

static int pb_fixed32(const pb_file_t *f, pb_cur_t *c, uint32_t *v,
                      const char *field)
{
    if (c->end - c->p < 4)
        return tb_fail(f->err, "%s: byte %zu: truncated 4-byte value of %s",
                       f->path, pb_off(f, c->p), field);
    *v = (uint32_t)c->p[0] | (uint32_t)c->p[1] << 8 | (uint32_t)c->p[2] << 16 |
         (uint32_t)c->p[3] << 24;
    c->p += 4;
    return 0;
}

/* Skips a field this loader does not use. */
static int pb_skip(const pb_file_t *f, pb_cur_t *c, uint32_t num, uint32_t wt,
                   const char *msg)
{
    uint64_t v;
    pb_cur_t val;
    char field[64];
    snprintf(field, sizeof field, "%s field %u", msg, num);
    switch (wt) {
    case WT_VARINT:
        return pb_varint(f, c, &v, field);
    case WT_LEN:
        return pb_bytes(f, c, &val, field);
    case WT_I32:
    case WT_I64:
        if (c->end - c->p < (wt == WT_I32 ? 4 : 8))
            return tb_fail(f->err, "%s: byte %zu: truncated fixed-size %s",
                           f->path, pb_off(f, c->p), field);
        c->p += wt == WT_I32 ? 4 : 8;
        return 0;
    default:
        return tb_fail(f->err, "%s: byte %zu: %s has unsupported wire type %u",
                       f->path, pb_off(f, c->p), field, wt);
    }
}

/* An int32 field: negative values arrive as 10-byte varints. */
static int pb_int32(const pb_file_t *f, pb_cur_t *c, uint32_t wt, int32_t *v,
                    const char *field)
{
    uint64_t u;
    if (pb_expect(f, c, wt, WT_VARINT, field) || pb_varint(f, c, &u, field))
        return -1;
    *v = (int32_t)(uint32_t)u;
    return 0;
}

/* ---- the messages ---------------------------------------------------- */

typedef struct {
    pb_cur_t piece;
    float score;
    uint32_t type;
    size_t at; /* byte offset of the message, for errors */
} raw_piece_t;

/* A user-defined piece: its bytes in the file and its id. */
typedef struct {
    pb_cur_t piece;
    uint32_t id;
} user_piece_t;

/* The pieces are not kept: build_vocab reads them again from `all`, the
 * ModelProto, so that no copy of their fields (32 bytes a piece) lies
 * beside the vocabulary it builds. */
typedef struct {
    pb_cur_t all;
    size_t n_pieces;
    TB_VEC(user_piece_t) users; /* non-empty ones, by build_vocab */
    int32_t model_type, unk, bos, eos, pad, byte_fallback, ws_suffix;
    pb_cur_t norm_name, charsmap;
    int32_t add_dummy_prefix, remove_extra_ws, escape_ws;
} model_t;

static int read_piece(const pb_file_t *f, pb_cur_t m, raw_piece_t *rp)
{
    rp->piece = (pb_cur_t){m.p, m.p};
    rp->score = 0;
    rp->type = TOK_NORMAL;
    rp->at = pb_off(f, m.p);
    while (m.p < m.end) {
        uint32_t num, wt, bits = 0;
        int32_t type;
        if (pb_tag(f, &m, &num, &wt, "SentencePiece"))
            return -1;
        if (num == 1) {
            if (pb_expect(f, &m, wt, WT_LEN, "SentencePiece.piece") ||
                pb_bytes(f, &m, &rp->piece, "SentencePiece.piece"))
                return -1;
        } else if (num == 2) {
            if (pb_expect(f, &m, wt, WT_I32, "SentencePiece.score") ||
                pb_fixed32(f, &m, &bits, "SentencePiece.score"))
                return -1;
            memcpy(&rp->score, &bits, 4);
        } else if (num == 3) {
            const uint8_t *at = m.p;
            if (pb_int32(f, &m, wt, &type, "SentencePiece.type"))
                return -1;
            if (type < TOK_NORMAL || type > TOK_BYTE)
                return tb_fail(f->err, "%s: byte %zu: SentencePiece.type %d "
                                       "is not a known piece type (1-6)",
                               f->path, pb_off(f, at), type);
            rp->type = (uint32_t)type;
        } else if (pb_skip(f, &m, num, wt, "SentencePiece")) {
            return -1;
        }
    }
    return 0;
}

static int read_trainer(const pb_file_t *f, pb_cur_t m, model_t *md)
{
    static const struct {
        uint32_t num;
        const char *name;
        size_t off;
    } fields[] = {
        {3, "TrainerSpec.model_type", offsetof(model_t, model_type)},
        {24, "TrainerSpec.treat_whitespace_as_suffix", offsetof(model_t, ws_suffix)},
        {35, "TrainerSpec.byte_fallback", offsetof(model_t, byte_fallback)},
        {40, "TrainerSpec.unk_id", offsetof(model_t, unk)},
        {41, "TrainerSpec.bos_id", offsetof(model_t, bos)},
        {42, "TrainerSpec.eos_id", offsetof(model_t, eos)},
        {43, "TrainerSpec.pad_id", offsetof(model_t, pad)},
    };
    while (m.p < m.end) {
        uint32_t num, wt;
        if (pb_tag(f, &m, &num, &wt, "TrainerSpec"))
            return -1;
        size_t k = 0;
        while (k < sizeof fields / sizeof *fields && fields[k].num != num)
            k++;
        if (k == sizeof fields / sizeof *fields) {
            if (pb_skip(f, &m, num, wt, "TrainerSpec"))
                return -1;
            continue;
        }
        int32_t *dst = (int32_t *)((char *)md + fields[k].off);
        if (pb_int32(f, &m, wt, dst, fields[k].name))
            return -1;
    }
    return 0;
}

static int read_normalizer(const pb_file_t *f, pb_cur_t m, model_t *md)
{
    while (m.p < m.end) {
        uint32_t num, wt;
        if (pb_tag(f, &m, &num, &wt, "NormalizerSpec"))
            return -1;
        int32_t *flag = num == 3   ? &md->add_dummy_prefix
                        : num == 4 ? &md->remove_extra_ws
                        : num == 5 ? &md->escape_ws
                                   : NULL;
        int rc;
        if (num == 1)
            rc = pb_expect(f, &m, wt, WT_LEN, "NormalizerSpec.name") ||
                 pb_bytes(f, &m, &md->norm_name, "NormalizerSpec.name");
        else if (num == 2)
            rc = pb_expect(f, &m, wt, WT_LEN,
                           "NormalizerSpec.precompiled_charsmap") ||
                 pb_bytes(f, &m, &md->charsmap,
                          "NormalizerSpec.precompiled_charsmap");
        else if (flag)
            rc = pb_int32(f, &m, wt, flag, num == 3   ? "NormalizerSpec.add_dummy_prefix"
                                           : num == 4 ? "NormalizerSpec.remove_extra_whitespaces"
                                                      : "NormalizerSpec.escape_whitespaces");
        else
            rc = pb_skip(f, &m, num, wt, "NormalizerSpec");
        if (rc)
            return -1;
    }
    return 0;
}

static int read_model(const pb_file_t *f, pb_cur_t m, model_t *md)
{
    while (m.p < m.end) {
        uint32_t num, wt;
        pb_cur_t val;
        if (pb_tag(f, &m, &num, &wt, "ModelProto"))
            return -1;
        if (num < 1 || num > 3) {
            if (pb_skip(f, &m, num, wt, "ModelProto"))
                return -1;
            continue;
        }
        const char *name = num == 1 ? "ModelProto.pieces"
                           : num == 2 ? "ModelProto.trainer_spec"
                                      : "ModelProto.normalizer_spec";
        if (pb_expect(f, &m, wt, WT_LEN, name) || pb_bytes(f, &m, &val, name))
            return -1;
        if (num == 1) {
            if (md->n_pieces++ >= TOK_VOCAB_MAX_SIZE)
                return tb_fail(f->err, "%s: byte %zu: more than %u pieces",
                               f->path, pb_off(f, val.p), TOK_VOCAB_MAX_SIZE);
        } else if (num == 2 ? read_trainer(f, val, md)
                            : read_normalizer(f, val, md)) {
            return -1;
        }
    }
    return 0;
}

/* The next piece at or after c, read_model having checked the fields
 * around it: 1 with the piece in rp, 0 past the last, -1 on an error. */
static int next_piece(const pb_file_t *f, pb_cur_t *c, raw_piece_t *rp)
{
    while (c->p < c->end) {
        uint32_t num, wt;
        pb_cur_t val;
        if (pb_tag(f, c, &num, &wt, "ModelProto"))
            return -1;
        if (num != 1) {
            if (pb_skip(f, c, num, wt, "ModelProto"))
                return -1;
            continue;
        }
        if (pb_bytes(f, c, &val, "ModelProto.pieces") || read_piece(f, val, rp))
            return -1;
        return 1;
    }
    return 0;
}

/* ---- building the tokenizer ------------------------------------------ */

static int hexval(uint8_t c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                  : -1;
}

/* A piece's raw bytes: "<0xNN>" byte pieces become the byte, U+2581 a
 * space (when the model escapes whitespace). */
static int piece_bytes(const pb_file_t *f, const raw_piece_t *rp, int escape,
                       tb_buf_t *out)
{
    const uint8_t *s = rp->piece.p;
    size_t n = (size_t)(rp->piece.end - s);
    out->len = 0;
    if (rp->type == TOK_BYTE) {
        int hi = n == 6 ? hexval(s[3]) : -1, lo = n == 6 ? hexval(s[4]) : -1;
        if (n != 6 || memcmp(s, "<0x", 3) || s[5] != '>' || hi < 0 || lo < 0)
            return tb_fail(f->err, "%s: byte %zu: byte piece '%.*s' is not "
                                   "of the form <0xNN>",
                           f->path, rp->at, (int)(n < 16 ? n : 16), s);
        return tb_buf_putc(out, (uint8_t)(hi * 16 + lo));
    }
    for (size_t i = 0; i < n; i++) {
        if (escape && i + 2 < n && s[i] == 0xE2 && s[i + 1] == 0x96 &&
            s[i + 2] == 0x81) {
            if (tb_buf_putc(out, ' '))
                return -1;
            i += 2;
        } else if (tb_buf_putc(out, s[i])) {
            return -1;
        }
    }
    return 0;
}

/* The vocabulary from the pieces, in file order; the user-defined ones
 * also go to md->users. */
static int build_vocab(const pb_file_t *f, model_t *md, tok_vocab_t *v)
{
    tok_vocab_builder_t *b = tok_vocab_builder_new();
    tb_buf_t tmp = {0};
    if (!b)
        return tb_fail(f->err, "%s: out of memory", f->path);
    /* no piece decodes to more bytes than its text, and the texts lie in
     * the file: its size bounds them all (tok_vocab_builder_reserve
     * touches only what the pieces fill) */
    tok_vocab_builder_reserve(b, md->n_pieces, (size_t)(md->all.end - md->all.p));
    pb_cur_t c = md->all;
    raw_piece_t rp;
    int rc;
    for (uint32_t i = 0; (rc = next_piece(f, &c, &rp)) > 0; i++) {
        int special = rp.type == TOK_CONTROL || rp.type == TOK_UNKNOWN;
        if (piece_bytes(f, &rp, md->escape_ws, &tmp) ||
            tok_vocab_add(b, i, tmp.data ? tmp.data : (const uint8_t *)"",
                          tmp.len, rp.score, (tok_kind_t)rp.type, special,
                          f->err)) {
            rc = tb_wrap(f->err, "%s: piece %u (byte %zu)", f->path, i, rp.at);
            break;
        }
        if (rp.type == TOK_USER && rp.piece.end > rp.piece.p &&
            tb_vec_push(&md->users, ((user_piece_t){rp.piece, i}))) {
            rc = tb_fail(f->err, "%s: out of memory", f->path);
            break;
        }
    }
    tb_buf_free(&tmp);
    if (rc < 0) {
        tok_vocab_builder_free(b);
        return -1;
    }
    /* its index by bytes comes after the model's tables (tok_load_spm_model) */
    if (tok_vocab_finish_unindexed(b, v, f->err))
        return tb_wrap(f->err, "%s", f->path);
    int32_t n = (int32_t)v->size;
    v->unk = md->unk >= 0 && md->unk < n ? md->unk : -1;
    v->bos = md->bos >= 0 && md->bos < n ? md->bos : -1;
    v->eos = md->eos >= 0 && md->eos < n ? md->eos : -1;
    v->pad = md->pad >= 0 && md->pad < n ? md->pad : -1;
    return 0;
}

/* What TOK_ADD_SPECIAL adds: the model's BOS and EOS, where it has them,
 * as spm_encode --extra_options=bos:eos adds them. */
static int add_bos_eos(tok_tokenizer_t *t, const pb_file_t *f)
{
    const tok_vocab_t *v = &t->vocab;
    if ((v->bos >= 0 && tb_vec_push(&t->special_prefix, (uint32_t)v->bos)) ||
        (v->eos >= 0 && tb_vec_push(&t->special_suffix, (uint32_t)v->eos)))
        return tb_fail(f->err, "%s: out of memory", f->path);
    return 0;
}

/* Copies the charsmap a piece at a time, each piece's pages of the file
 * given back once copied, so that the copy and the file's pages are not
 * both whole at once (nmt_nfkc's: 241 KB, two thirds of a small model). */
static int copy_charsmap(tok_tokenizer_t *t, const pb_file_t *f,
                         const model_t *md, tb_buf_t *blob)
{
    enum { PIECE = 64 << 10 };
    size_t at = (size_t)(md->charsmap.p - f->base),
           end = (size_t)(md->charsmap.end - f->base);
    if (tb_buf_reserve(blob, end - at))
        return -1;
    for (size_t n; at < end; at += n) {
        n = end - at < PIECE ? end - at : PIECE;
        tb_buf_put(blob, f->base + at, n); /* reserved: cannot fail */
        tok_release_source(t, at, at + n);
    }
    return 0;
}

/* The normalizer step; user-defined pieces go in `a`, NUL-separated, as
 * the SentencePiece normalizer leaves them as they are.  Its charsmap is
 * checked later (check_charsmap). */
static int add_normalizer(tok_tokenizer_t *t, const pb_file_t *f,
                          const model_t *md)
{
    tok_norm_t nm = {.kind = TOK_NORM_SPM};
    nm.flags = (md->add_dummy_prefix ? TOK_SPM_ADD_DUMMY_PREFIX : 0) |
               (md->remove_extra_ws ? TOK_SPM_REMOVE_EXTRA_WHITESPACES : 0) |
               (md->escape_ws ? TOK_SPM_ESCAPE_WHITESPACES : 0);
    int rc = md->charsmap.p ? copy_charsmap(t, f, md, &nm.blob) : 0;
    for (size_t i = 0; i < md->users.len && !rc; i++) {
        const pb_cur_t *u = &md->users.data[i].piece;
        rc = tb_buf_put(&nm.a, u->p, (size_t)(u->end - u->p)) || tb_buf_putc(&nm.a, 0);
    }
    if (rc || tb_vec_push(&t->norms, nm)) {
        tb_buf_free(&nm.blob);
        tb_buf_free(&nm.a);
        return tb_fail(f->err, "%s: out of memory", f->path);
    }
    return 0;
}

/* The checks of the normalizer's charsmap, run on its copy once the
 * file's pages are given back: they take 13 bytes a unit of their own
 * (nmt_nfkc's 44k units), which need not lie beside the file. */
static int check_charsmap(const tok_tokenizer_t *t, const pb_file_t *f,
                          const model_t *md)
{
    const tb_buf_t *blob = &t->norms.data[t->norms.len - 1].blob;
    tok_charsmap_t cm;
    if (tok_charsmap_open(&cm, blob->data, blob->len, f->err))
        return tb_wrap(f->err, "%s: NormalizerSpec.precompiled_charsmap at "
                               "byte %zu", f->path, pb_off(f, md->charsmap.p));
    return 0;
}

/* User-defined pieces become added tokens that are matched in the
 * normalized text only (match_added stays 0: never in the raw text).  For
 * BPE that is SentencePiece's rule exactly: a user piece is a frozen
 * symbol, taken greedily left to right, that never merges, so BPE runs on
 * the text between.  Unigram leaves them unmatched: its lattice gives them
 * SentencePiece's own bonus instead (unigram.c). */
static int add_user_pieces(tok_tokenizer_t *t, const pb_file_t *f,
                           const model_t *md)
{
    for (size_t i = 0; i < md->users.len; i++) {
        const user_piece_t *u = &md->users.data[i];
        tok_added_t a = {.id = u->id, .normalized = md->model_type == 2};
        if (tb_buf_put(&a.content, u->piece.p, (size_t)(u->piece.end - u->piece.p)) ||
            tb_vec_push(&t->added, a)) {
            tb_buf_free(&a.content);
            return tb_fail(f->err, "%s: out of memory", f->path);
        }
    }
    return 0;
}

static int setup_unigram(tok_tokenizer_t *t, const pb_file_t *f)
{
    const tok_vocab_t *v = &t->vocab;
    tok_unigram_t *u = &t->unigram;
    float min = 0, max = FLT_MIN; /* SentencePiece starts max at FLT_MIN */
    int any = 0;
    for (uint32_t id = 0; id < v->size; id++) {
        size_t len = v->offset[id + 1] - v->offset[id];
        if (tok_unigram_indexed(v, id) && len > u->max_piece_len)
            u->max_piece_len = (uint32_t)len;
        if (v->kind[id] != TOK_NORMAL)
            continue;
        min = !any || v->score[id] < min ? v->score[id] : min;
        max = v->score[id] > max ? v->score[id] : max;
        any = 1;
    }
    u->unk_penalty = min - 10.0f;
    u->max_score = max;
    u->unk = v->unk;
    if (u->unk < 0 || v->kind[u->unk] != TOK_UNKNOWN)
        return tb_fail(f->err, "%s: TrainerSpec.unk_id does not name an "
                               "unknown piece", f->path);
    return tok_unigram_build_index(t, f->err) ? tb_wrap(f->err, "%s", f->path) : 0;
}

typedef struct {
    float score;
    uint32_t id;
} by_score_t;

static int cmp_score(const void *a, const void *b)
{
    const by_score_t *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* SentencePiece's piece table: byte, control and unknown pieces live
 * apart and never take part in merges. */
static int merge_piece(const tok_vocab_t *v, uint32_t id)
{
    uint8_t k = v->kind[id];
    return (k == TOK_NORMAL || k == TOK_USER || k == TOK_UNUSED) &&
           v->offset[id + 1] > v->offset[id];
}

typedef TB_VEC(tok_merge_t) merges_t;

/* Every split of piece `id` into two pieces of `pieces`, as a merge onto
 * `out`. */
static int add_splits(const tok_vocab_t *v, const tok_index_t *pieces,
                      uint32_t id, uint32_t rank, merges_t *out)
{
    size_t len;
    const uint8_t *s = tok_vocab_token(v, id, &len);
    for (size_t k = tb_utf8_lead_len(s[0]); k < len; k += tb_utf8_lead_len(s[k])) {
        int32_t l = tok_index_get(pieces, v, s, k),
                r = tok_index_get(pieces, v, s + k, len - k);
        if (l >= 0 && r >= 0 &&
            tb_vec_push(out, ((tok_merge_t){(uint32_t)l, (uint32_t)r, id, rank})))
            return -1;
    }
    return 0;
}

/* Merge ranks from scores: the merged piece's score, descending; equal
 * scores share a rank so that ties go to the leftmost pair, as
 * SentencePiece's agenda orders them (score, then left position).  Every
 * split of a piece into two pieces of the vocabulary is a merge, since
 * SentencePiece merges any adjacent pair whose concatenation is a piece. */
static int setup_bpe(tok_tokenizer_t *t, const pb_file_t *f)
{
    const tok_vocab_t *v = &t->vocab;
    /* the pieces by their bytes, the lowest id of a string kept: 8 bytes
     * a slot (a tag and an id), where a string map's are 24 */
    tok_index_t pieces = {0};
    /* the merges are listed first, then put into a table sized for them
     * once: grown by doubling, it was a third larger, and held its old
     * slots beside the new while it grew */
    merges_t merges = {0};
    by_score_t *order = malloc((v->size ? v->size : 1) * sizeof *order);
    int rc = -1;
    if (!order || tb_vec_reserve(&merges, v->size))
        goto out;
    size_t n = 0;
    for (uint32_t id = 0; id < v->size; id++)
        if (merge_piece(v, id))
            order[n++] = (by_score_t){v->score[id], id};
    if (tok_index_build(&pieces, v, n, merge_piece))
        goto out;
    qsort(order, n, sizeof *order, cmp_score);
    uint32_t rank = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && order[i].score != order[i - 1].score)
            rank++;
        if (add_splits(v, &pieces, order[i].id, rank, &merges))
            goto out;
    }
    tok_index_free(&pieces);
    free(order);
    order = NULL;
    if (tok_bpe_add_merges(&t->bpe, merges.data, merges.len))
        goto out;
    t->bpe.byte_level = 0;
    t->bpe.byte_fallback = t->unigram.byte_fallback;
    t->bpe.fuse_unk = !t->unigram.byte_fallback; /* one unk per unknown run */
    t->bpe.ignore_merges = 0;
    t->bpe.unk = v->unk;
    rc = 0;
out:
    tok_index_free(&pieces);
    free(order);
    free(merges.data);
    return rc ? tb_fail(f->err, "%s: out of memory deriving BPE merges", f->path) : 0;
}

static int setup_model(tok_tokenizer_t *t, const pb_file_t *f, const model_t *md)
{
    tok_unigram_t *u = &t->unigram;
    u->byte_fallback = md->byte_fallback != 0;
    for (int b = 0; b < 256; b++)
        u->byte_piece[b] = t->vocab.unk;
    for (uint32_t id = 0; id < t->vocab.size; id++)
        if (t->vocab.kind[id] == TOK_BYTE)
            u->byte_piece[t->vocab.bytes[t->vocab.offset[id]]] = (int32_t)id;
    const char *fb = u->byte_fallback ? "+byte-fallback" : "";
    if (md->model_type == 1) {
        t->model = TOK_MODEL_UNIGRAM;
        snprintf(t->model_name, sizeof t->model_name, "unigram%s", fb);
        return setup_unigram(t, f);
    }
    if (md->model_type == 2) {
        t->model = TOK_MODEL_BPE;
        snprintf(t->model_name, sizeof t->model_name, "bpe%s", fb);
        return setup_bpe(t, f);
    }
    return tb_fail(f->err, "%s: TrainerSpec.model_type %d (%s) is not supported "
                           "(unigram and bpe are)",
                   f->path, md->model_type,
                   md->model_type == 3 ? "word" : md->model_type == 4 ? "char" : "unknown");
}

int tok_load_spm_model(tok_tokenizer_t *t, const char *path,
                       const uint8_t *data, size_t len, tb_err_t *err)
{
    pb_file_t f = {path, data, err};
    model_t md = {.all = {data, data + len}, .model_type = 1, .unk = 0, .bos = 1, .eos = 2, .pad = -1,
                  .add_dummy_prefix = 1, .remove_extra_ws = 1, .escape_ws = 1};
    int rc = -1;
    if (read_model(&f, md.all, &md))
        goto out;
    if (md.n_pieces == 0) {
        tb_fail(err, "%s: no pieces (ModelProto field 1)", path);
        goto out;
    }
    if (md.ws_suffix) {
        tb_fail(err, "%s: TrainerSpec.treat_whitespace_as_suffix is not supported",
                path);
        goto out;
    }
    if (build_vocab(&f, &md, &t->vocab))
        goto out;
    /* the pieces are copied: their pages go before the charsmap's copy
     * comes in (a ModelProto writes its pieces first and its normalizer
     * spec after them; a page read again comes back from the file) */
    tok_release_source(t, 0, md.charsmap.p ? (size_t)(md.charsmap.p - data) : 0);
    if (add_normalizer(t, &f, &md) || add_user_pieces(t, &f, &md))
        goto out;
    /* all that is kept is copied: the charsmap's checks and the Unigram
     * index or the BPE merges, each about the file's size, need not lie
     * beside it */
    tok_release_source(t, 0, len);
    if (check_charsmap(t, &f, &md) || setup_model(t, &f, &md))
        goto out;
    /* the vocabulary's index by bytes, as large as the Unigram index's
     * transient tables or the BPE pieces' index, after them */
    if (tok_vocab_index(&t->vocab, md.n_pieces, err)) {
        tb_wrap(err, "%s", path);
        goto out;
    }
    if (add_bos_eos(t, &f))
        goto out;
    t->format = TOK_FORMAT_SPM_MODEL;
    t->meta_to_space = md.escape_ws != 0;
    t->match_added = 0;  /* user-defined pieces stay in the text: see top */
    t->needs_utf8 = 0;   /* invalid bytes normalize to U+FFFD */
    t->decode_flags = md.add_dummy_prefix ? TOK_DEC_STRIP_LEADING_SPACE : 0;
    rc = 0;
out:
    free(md.users.data);
    return rc;
}
