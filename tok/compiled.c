/*
 * compiled: a loaded tokenizer written as one file, which a later load maps
 * read-only and uses in place, so that loading a vocabulary costs a hash
 * of its source file and a few checks instead of parsing it
 * (docs/tokenizers.md, "The compiled cache", says where the files live).
 *
 * Every table encoding and decoding reads that grows with the vocabulary is
 * a section of the file, laid out as the tokenizer uses it, offsets and
 * ids rather than pointers: the vocabulary's bytes, offsets, scores, kinds
 * and special flags, its index by bytes, the BPE merge table, the table of
 * byte pairs and the character index, and the Unigram double array.  The
 * few things that hold pointers or compiled code (normalizer and
 * pre-tokenizer steps, added tokens, the special-token rule) are short
 * records in the meta section, rebuilt at open (a normalizer's charsmap,
 * not short, is read in place); PCRE2 patterns are compiled again.
 *
 * File layout (little or big endian as the machine that wrote it: the ABI
 * fingerprint tells a foreign file apart):
 *   header_t                magic, format version, ABI fingerprint, the
 *                           file's size, a hash of the header and one of
 *                           all that follows it, the source's identity
 *                           (tok_source_id_t), the sections' (offset,
 *                           length), the build's loader hash
 *   sections, each at a multiple of 64 bytes, in the order of sec_t
 * A file is refused (the caller rebuilds it) unless every one of these
 * agrees, and then its sections are checked against each other (lengths,
 * ids below the vocabulary's size, a free slot in every hash table,
 * monotone offsets, the charsmaps' bounds: tok_charsmap_open_bounded), so
 * that a damaged file whose hash happens to agree still cannot send a read
 * out of bounds or a probe round a full table.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "charsmap.h"
#include "tok_build.h"
#include "tok_internal.h"

/* The layout of header_t, raised only when it changes.  What the loaders
 * put in the sections needs no number of its own: TOK_BUILD_HASH, which
 * the Makefile computes from the sources of tok/ and base/, changes with
 * any of them, so a file written by a build that loaded or laid out a
 * tokenizer differently is refused and rebuilt. */
#define COMPILED_VERSION 5u
#define ALIGN 64

typedef enum {
    SEC_META,
    SEC_BYTES,
    SEC_OFFSET,
    SEC_SCORE,
    SEC_KIND,
    SEC_SPECIAL,
    SEC_BY_BYTES,
    SEC_MERGES,
    SEC_BYTE_PAIRS,
    SEC_CHARS,
    SEC_DA,
    SEC_PAIR_FILTER,
    SEC_PREMERGE,
    SEC_PARTNERS,
    SEC_COUNT
} sec_t;

typedef struct {
    char magic[8];
    uint32_t version, abi;
    uint64_t file_size;
    uint64_t header_hash; /* tb_hash of the header with this field 0 */
    uint64_t body_hash;   /* tb_hash of bytes [sizeof header, file_size) */
    tok_source_id_t source;
    uint64_t sec[SEC_COUNT][2]; /* offset, length */
    uint64_t build;             /* TOK_BUILD_HASH of the writer */
} header_t;

static const char magic[8] = "TBTOKC\r\n";

/* The meta section opens with this; the variable records follow it. */
typedef struct {
    uint32_t format, model;
    uint32_t vocab_size;
    int32_t bos, eos, unk, pad;
    int32_t byte_id[256];
    uint64_t by_bytes_count;
    /* BPE */
    int32_t bpe_unk;
    uint8_t byte_level, byte_fallback, fuse_unk, ignore_merges;
    uint8_t rank_by;   /* tok_rank_t: by bytes, no merges and no filter */
    uint32_t join_max;
    uint64_t merges_count;
    uint8_t has_tables, cut_ok, premerge_bits;
    int32_t ascii[128];
    uint8_t crossable[256];
    uint64_t chars_count;
    /* Unigram */
    int32_t uni_unk, uni_byte_fallback;
    float unk_penalty, max_score;
    uint32_t max_piece_len;
    int32_t byte_piece[256];
    uint8_t has_da, da_nul_far, da_shifted, da_direct;
    uint32_t da_max_len;
    uint64_t da_nkeys;
    tok_wordpiece_t wordpiece;
    uint8_t meta_to_space, match_added, needs_utf8;
    uint32_t decode_flags;
    char model_name[48];
    char add_special_error[160];
    char pair_error[160];
    uint32_t n_norms, n_pres, n_added, n_prefix, n_suffix, n_pair;
} core_t;

/* The layout this build reads and writes: a file written by a build whose
 * structures differ, or by a machine of another byte order, is refused. */
static uint32_t abi_fingerprint(void)
{
    const uint64_t facts[] = {
        COMPILED_VERSION, 0x0102030405060708ULL, sizeof(header_t),
        sizeof(core_t), offsetof(core_t, wordpiece), sizeof(tok_wordpiece_t),
        sizeof(tok_merge_slot_t), sizeof(tok_index_slot_t), sizeof(float),
        sizeof(tok_premerge_slot_t),
        sizeof(size_t), TOK_SPARE_STATES,
    };
    uint8_t bytes[sizeof facts];
    memcpy(bytes, facts, sizeof facts); /* the byte order counts too */
    return (uint32_t)tb_hash(bytes, sizeof bytes);
}

/* ---- writing ---------------------------------------------------------- */

static int put_u32(tb_buf_t *b, uint32_t x) { return tb_buf_put(b, &x, 4); }

static int put_blob(tb_buf_t *b, const void *p, size_t n)
{
    return put_u32(b, (uint32_t)n) || tb_buf_put(b, p, n);
}

static void fill_core(const tok_tokenizer_t *t, core_t *c)
{
    const tok_vocab_t *v = &t->vocab;
    const bpe_tables_t *tb = t->bpe.tables;
    const tb_da_t *d = t->unigram.own_index;
    memset(c, 0, sizeof *c); /* padding too: the file is the same each time */
    c->format = t->format;
    c->model = t->model;
    c->vocab_size = v->size;
    c->bos = v->bos, c->eos = v->eos, c->unk = v->unk, c->pad = v->pad;
    memcpy(c->byte_id, v->byte_id, sizeof c->byte_id);
    c->by_bytes_count = v->by_bytes.count;
    c->bpe_unk = t->bpe.unk;
    c->byte_level = (uint8_t)t->bpe.byte_level;
    c->byte_fallback = (uint8_t)t->bpe.byte_fallback;
    c->fuse_unk = (uint8_t)t->bpe.fuse_unk;
    c->ignore_merges = (uint8_t)t->bpe.ignore_merges;
    c->rank_by = (uint8_t)t->bpe.rank_by;
    c->merges_count = t->bpe.merges.count;
    if (tb) {
        c->has_tables = 1;
        c->join_max = tb->join_max;
        c->cut_ok = (uint8_t)tb->cut_ok;
        memcpy(c->ascii, tb->ascii, sizeof c->ascii);
        memcpy(c->crossable, tb->crossable, sizeof c->crossable);
        c->chars_count = tb->chars.count;
        c->premerge_bits = (uint8_t)tb->premerge_bits;
    }
    c->uni_unk = t->unigram.unk;
    c->uni_byte_fallback = t->unigram.byte_fallback;
    c->unk_penalty = t->unigram.unk_penalty;
    c->max_score = t->unigram.max_score;
    c->max_piece_len = t->unigram.max_piece_len;
    memcpy(c->byte_piece, t->unigram.byte_piece, sizeof c->byte_piece);
    if (d) {
        c->has_da = 1;
        c->da_nul_far = (uint8_t)d->nul_far;
        c->da_shifted = (uint8_t)d->shifted;
        c->da_direct = (uint8_t)d->direct;
        c->da_max_len = d->max_len;
        c->da_nkeys = d->nkeys;
    }
    c->wordpiece = t->wordpiece;
    c->meta_to_space = (uint8_t)t->meta_to_space;
    c->match_added = (uint8_t)t->match_added;
    c->needs_utf8 = (uint8_t)t->needs_utf8;
    c->decode_flags = t->decode_flags;
    memcpy(c->model_name, t->model_name, sizeof c->model_name);
    memcpy(c->add_special_error, t->add_special_error, sizeof c->add_special_error);
    memcpy(c->pair_error, t->pair_error, sizeof c->pair_error);
    c->n_norms = (uint32_t)t->norms.len;
    c->n_pres = (uint32_t)t->pres.len;
    c->n_added = (uint32_t)t->added.len;
    c->n_prefix = (uint32_t)t->special_prefix.len;
    c->n_suffix = (uint32_t)t->special_suffix.len;
    c->n_pair = (uint32_t)t->pair.len;
}

/* Records, in core_t's order: norms (kind, flags, a, b, blob), pre-
 * tokenizers (kind, behavior, invert, flags, literal, compiled, pattern),
 * added tokens (id, five flags, content), then the prefix and suffix ids,
 * then the pair rule's items (what, type). */
static int put_meta(const tok_tokenizer_t *t, tb_buf_t *b)
{
    core_t c;
    fill_core(t, &c);
    int r = tb_buf_put(b, &c, sizeof c);
    for (size_t i = 0; i < t->norms.len && !r; i++) {
        const tok_norm_t *n = &t->norms.data[i];
        r = put_u32(b, n->kind) || put_u32(b, n->flags) ||
            put_blob(b, n->a.data, n->a.len) || put_blob(b, n->b.data, n->b.len) ||
            put_blob(b, n->blob.data, n->blob.len);
    }
    for (size_t i = 0; i < t->pres.len && !r; i++) {
        const tok_pre_t *p = &t->pres.data[i];
        r = put_u32(b, p->kind) || put_u32(b, p->behavior) ||
            put_u32(b, (uint32_t)p->invert) || put_u32(b, p->flags) ||
            put_u32(b, (uint32_t)p->literal) || put_u32(b, p->re != NULL) ||
            put_blob(b, p->pattern.data, p->pattern.len);
    }
    for (size_t i = 0; i < t->added.len && !r; i++) {
        const tok_added_t *a = &t->added.data[i];
        uint8_t f[5] = {a->special, a->lstrip, a->rstrip, a->single_word,
                        a->normalized};
        r = put_u32(b, a->id) || tb_buf_put(b, f, 5) ||
            put_blob(b, a->content.data, a->content.len);
    }
    if (!r && t->special_prefix.len)
        r = tb_buf_put(b, t->special_prefix.data, t->special_prefix.len * 4);
    if (!r && t->special_suffix.len)
        r = tb_buf_put(b, t->special_suffix.data, t->special_suffix.len * 4);
    for (size_t i = 0; i < t->pair.len && !r; i++)
        r = put_u32(b, (uint32_t)t->pair.data[i].what) || put_u32(b, t->pair.data[i].type);
    return r;
}

/* The sections of t, each (pointer, length). */
static void sections_of(const tok_tokenizer_t *t, const tb_buf_t *meta,
                        const void *p[SEC_COUNT], size_t n[SEC_COUNT])
{
    const tok_vocab_t *v = &t->vocab;
    const bpe_tables_t *tb = t->bpe.tables;
    const tb_da_t *d = t->unigram.own_index;
    memset(n, 0, SEC_COUNT * sizeof *n);
    p[SEC_META] = meta->data, n[SEC_META] = meta->len;
    p[SEC_BYTES] = v->bytes, n[SEC_BYTES] = v->offset[v->size];
    p[SEC_OFFSET] = v->offset, n[SEC_OFFSET] = ((size_t)v->size + 1) * 4;
    p[SEC_SCORE] = v->score, n[SEC_SCORE] = (size_t)v->size * 4;
    p[SEC_KIND] = v->kind, n[SEC_KIND] = v->size;
    p[SEC_SPECIAL] = v->special, n[SEC_SPECIAL] = v->size;
    p[SEC_BY_BYTES] = v->by_bytes.slots;
    n[SEC_BY_BYTES] = v->by_bytes.size * sizeof(tok_index_slot_t);
    p[SEC_MERGES] = t->bpe.merges.slots;
    n[SEC_MERGES] = t->bpe.merges.slots
                        ? t->bpe.merges.size * sizeof(tok_merge_slot_t)
                        : 0;
    p[SEC_BYTE_PAIRS] = tb ? tb->byte_pairs : NULL;
    n[SEC_BYTE_PAIRS] = tb && tb->byte_pairs ? 65536 * sizeof(uint64_t) : 0;
    p[SEC_PAIR_FILTER] = tb ? tb->filter : NULL;
    n[SEC_PAIR_FILTER] = tb && tb->filter ? ((size_t)8 << tb->filter_shift) : 0;
    p[SEC_PREMERGE] = tb ? tb->premerge : NULL;
    n[SEC_PREMERGE] = tb && tb->premerge_bits
                          ? sizeof(tok_premerge_slot_t) << tb->premerge_bits
                          : 0;
    p[SEC_PARTNERS] = tb ? tb->partners : NULL;
    n[SEC_PARTNERS] = tb ? tb->n_partners * sizeof(uint64_t) : 0;
    p[SEC_CHARS] = tb ? tb->chars.slots : NULL;
    n[SEC_CHARS] = tb ? tb->chars.size * sizeof(tok_index_slot_t) : 0;
    p[SEC_DA] = d ? d->units : NULL;
    n[SEC_DA] = d ? d->n * sizeof(uint32_t) : 0;
}

static int write_all(int fd, const void *p, size_t n)
{
    const uint8_t *s = p;
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The file's image: header, then the sections padded to ALIGN. */
static int build_image(const tok_tokenizer_t *t, const tok_source_id_t *src,
                       tb_buf_t *img)
{
    tb_buf_t meta = {0};
    const void *p[SEC_COUNT];
    size_t n[SEC_COUNT];
    header_t h = {0};
    memcpy(h.magic, magic, sizeof magic);
    h.version = COMPILED_VERSION;
    h.abi = abi_fingerprint();
    h.build = TOK_BUILD_HASH;
    h.source = *src;
    if (put_meta(t, &meta)) {
        tb_buf_free(&meta);
        return -1;
    }
    sections_of(t, &meta, p, n);
    size_t at = (sizeof h + ALIGN - 1) / ALIGN * ALIGN;
    for (int s = 0; s < SEC_COUNT; s++) {
        h.sec[s][0] = at;
        h.sec[s][1] = n[s];
        at += (n[s] + ALIGN - 1) / ALIGN * ALIGN;
    }
    h.file_size = at;
    int r = tb_buf_reserve(img, at);
    if (!r) {
        memset(img->data, 0, at);
        for (int s = 0; s < SEC_COUNT; s++)
            if (n[s])
                memcpy(img->data + h.sec[s][0], p[s], n[s]);
        h.body_hash = tb_hash(img->data + sizeof h, at - sizeof h);
        h.header_hash = tb_hash(&h, sizeof h);
        memcpy(img->data, &h, sizeof h);
        img->len = at;
    }
    tb_buf_free(&meta);
    return r;
}

int tok_compiled_write(const tok_tokenizer_t *t, const char *path,
                       const tok_source_id_t *src, tb_err_t *err)
{
    tb_buf_t img = {0};
    if (build_image(t, src, &img)) {
        tb_buf_free(&img);
        return tb_fail(err, "%s: out of memory writing the compiled tokenizer", path);
    }
    /* written whole under a name of this process's, then renamed over the
     * file's own name: a reader sees the old file, the new one or none */
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = fd < 0 || write_all(fd, img.data, img.len) ? -1 : 0;
    int e = errno;
    if (fd >= 0 && close(fd) && !rc) {
        rc = -1;
        e = errno;
    }
    if (!rc && rename(tmp, path)) {
        rc = -1;
        e = errno;
    }
    if (rc) {
        unlink(tmp);
        tb_fail(err, "%s: %s", fd < 0 ? tmp : path, strerror(e));
    }
    tb_buf_free(&img);
    return rc;
}

/* ---- reading ---------------------------------------------------------- */

/* A bounds-checked cursor over the meta records. */
typedef struct {
    const uint8_t *p, *end;
    int bad;
} rd_t;

static uint32_t get_u32(rd_t *r)
{
    uint32_t x = 0;
    if (r->end - r->p < 4)
        r->bad = 1;
    else
        memcpy(&x, r->p, 4), r->p += 4;
    return x;
}

static const uint8_t *get_bytes(rd_t *r, size_t n)
{
    if ((size_t)(r->end - r->p) < n) {
        r->bad = 1;
        return NULL;
    }
    const uint8_t *s = r->p;
    r->p += n;
    return s;
}

static int get_blob(rd_t *r, tb_buf_t *b)
{
    uint32_t n = get_u32(r);
    const uint8_t *s = get_bytes(r, n);
    return !s || tb_buf_put(b, s, n) ? -1 : 0;
}

/* A blob read in place: b points into the mapping (read-only). */
static int get_view(rd_t *r, tb_buf_t *b)
{
    uint32_t n = get_u32(r);
    const uint8_t *s = get_bytes(r, n);
    *b = (tb_buf_t){(uint8_t *)(uintptr_t)s, s ? n : 0, 0};
    return s ? 0 : -1;
}

/* id is a token of a vocabulary of `size` ids, or -1 where allowed. */
static int id_ok(int64_t id, uint32_t size, int none_ok)
{
    return (id >= 0 && id < size) || (none_ok && id == -1);
}

static int ids_ok(const int32_t *ids, size_t n, uint32_t size)
{
    for (size_t i = 0; i < n; i++)
        if (!id_ok(ids[i], size, 1))
            return 0;
    return 1;
}

/* A hash index of `bytes` bytes: count of its slots used (so at least one
 * is free: a probe ends), every id in the vocabulary. */
static int index_ok(const tok_index_slot_t *s, size_t bytes, uint64_t count,
                    uint32_t size)
{
    size_t n = bytes / sizeof *s;
    if (!n || bytes % sizeof *s || count >= n)
        return 0;
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == TOK_INDEX_EMPTY)
            continue;
        if (tok_index_slot_id(s[i]) >= size)
            return 0;
        used++;
    }
    return used == count;
}

static int merges_ok(const tok_merge_slot_t *s, size_t n, uint64_t count,
                     uint32_t size)
{
    if (!n)
        return count == 0;
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i].key == UINT64_MAX)
            continue;
        used++;
        if ((s[i].key >> 32) >= size || (uint32_t)s[i].key >= size ||
            (uint32_t)s[i].val >= size)
            return 0;
    }
    return used == count && used < n;
}

static int offsets_ok(const uint32_t *off, uint32_t size, size_t nbytes)
{
    if (off[0] != 0 || off[size] != nbytes)
        return 0;
    for (uint32_t i = 0; i < size; i++)
        if (off[i + 1] < off[i] || off[i + 1] - off[i] > TOK_TOKEN_MAX_LEN)
            return 0;
    return 1;
}

/* The double array's readers trust `direct` arrays not to need range
 * checks: an even number of 256-unit blocks, no extended offset, and the
 * children of every node (the block pair at node ^ offset) in the array. */
static int da_ok(const uint32_t *u, size_t n, int direct)
{
    if (n < 256 || n % 256)
        return 0;
    if (direct) {
        if (n % 512 || n > (1u << 21))
            return 0;
        for (size_t i = 0; i < n; i++)
            if (!(u[i] & TB_DA_LEAF_BIT) &&
                ((u[i] & (1u << 9)) || ((i ^ tb_da_offset(u[i])) | 0x1FF) >= n))
                return 0;
    }
    return 1;
}

/* The premerged characters: as many slots as premerge_bits says, a free
 * one among them
 * (a probe ends), every id in the vocabulary, every slot's partners in
 * the partner array, each 1-7 bytes long, and every slot's neighbours
 * those of its partners. */
static int premerge_ok(const core_t *c, const uint8_t *base, const uint64_t (*sec)[2])
{
    size_t n = sec[SEC_PREMERGE][1] / sizeof(tok_premerge_slot_t),
           np = sec[SEC_PARTNERS][1] / 8;
    const tok_premerge_slot_t *s = (const void *)(base + sec[SEC_PREMERGE][0]);
    const uint64_t *p = (const void *)(base + sec[SEC_PARTNERS][0]);
    if (!c->premerge_bits)
        return !n && !np;
    if (c->premerge_bits > 31 || n != (size_t)1 << c->premerge_bits ||
        sec[SEC_PARTNERS][1] % 8)
        return 0;
    for (size_t i = 0; i < np; i++)
        if (p[i] >> 56 > 7 || !(p[i] >> 56))
            return 0;
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        if (!s[i].cp)
            continue;
        used++;
        /* wrong neighbours would let a partner by unchecked */
        if (!id_ok(s[i].id, c->vocab_size, 0) || s[i].first > np ||
            s[i].n_left + s[i].n_right > np - s[i].first ||
            s[i].neighbours != tok_premerge_neighbours(p + s[i].first, s[i].n_left, s[i].n_right))
            return 0;
    }
    return used < n;
}

/* The pair filter's length: a power of two of 8-byte words, 64 at least
 * (bpe.c's FILTER_MIN_SHIFT). */
static int filter_ok(uint64_t len)
{
    return len >= 64 * 8 && !(len & (len - 1));
}

/* The section checks: each length as the core says, each table sound. */
static const char *check_sections(const core_t *c, const uint8_t *base,
                                  const header_t *h)
{
    const uint64_t(*sec)[2] = h->sec;
    uint32_t size = c->vocab_size;
    if (size > TOK_VOCAB_MAX_SIZE)
        return "vocabulary size";
    if (sec[SEC_OFFSET][1] != ((uint64_t)size + 1) * 4 ||
        !offsets_ok((const uint32_t *)(base + sec[SEC_OFFSET][0]), size,
                    sec[SEC_BYTES][1]))
        return "token offsets";
    if (sec[SEC_SCORE][1] != (uint64_t)size * 4 || sec[SEC_KIND][1] != size ||
        sec[SEC_SPECIAL][1] != size)
        return "section lengths";
    if (!index_ok((const tok_index_slot_t *)(base + sec[SEC_BY_BYTES][0]),
                  sec[SEC_BY_BYTES][1], c->by_bytes_count, size))
        return "index by bytes";
    if (sec[SEC_MERGES][1] % sizeof(tok_merge_slot_t) ||
        !merges_ok((const tok_merge_slot_t *)(base + sec[SEC_MERGES][0]),
                   sec[SEC_MERGES][1] / sizeof(tok_merge_slot_t),
                   c->merges_count, size))
        return "merge table";
    /* ranked by bytes: no merge table and no filter; else both */
    int by_bytes = c->rank_by != TOK_RANK_MERGES;
    if (c->rank_by > TOK_RANK_SCORE || c->join_max > TOK_TOKEN_MAX_LEN ||
        (by_bytes && (sec[SEC_MERGES][1] || sec[SEC_PAIR_FILTER][1])))
        return "pair ranking";
    if (c->has_tables &&
        ((sec[SEC_BYTE_PAIRS][1] && sec[SEC_BYTE_PAIRS][1] != 65536 * 8) ||
         (!by_bytes && (!filter_ok(sec[SEC_PAIR_FILTER][1]) || !sec[SEC_MERGES][1])) ||
         !ids_ok(c->ascii, 128, size) || !premerge_ok(c, base, sec) ||
         !index_ok((const tok_index_slot_t *)(base + sec[SEC_CHARS][0]),
                   sec[SEC_CHARS][1], c->chars_count, size)))
        return "BPE tables";
    if (c->has_da && (sec[SEC_DA][1] % 4 ||
                      !da_ok((const uint32_t *)(base + sec[SEC_DA][0]),
                             sec[SEC_DA][1] / 4, c->da_direct)))
        return "Unigram index";
    if (!ids_ok(c->byte_id, 256, size) || !ids_ok(c->byte_piece, 256, size) ||
        !id_ok(c->bos, size, 1) || !id_ok(c->eos, size, 1) ||
        !id_ok(c->unk, size, 1) || !id_ok(c->pad, size, 1) ||
        !id_ok(c->bpe_unk, size, 1) || !id_ok(c->uni_unk, size, 1) ||
        !id_ok(c->wordpiece.unk, size, 1) || c->model > TOK_MODEL_WORDLEVEL ||
        c->format > TOK_FORMAT_GGUF || c->wordpiece.prefix_len > 16)
        return "ids or kinds";
    return NULL;
}

/* The records of the meta section into t; NULL or what is wrong. */
static const char *read_records(tok_tokenizer_t *t, const core_t *c, rd_t *r)
{
    for (uint32_t i = 0; i < c->n_norms && !r->bad; i++) {
        /* a charsmap, the size of a small file, is not copied */
        tok_norm_t n = {.blob_mapped = 1};
        n.kind = (tok_norm_kind_t)get_u32(r);
        n.flags = get_u32(r);
        int bad = get_blob(r, &n.a) || get_blob(r, &n.b) || get_view(r, &n.blob) ||
                  n.kind > TOK_NORM_BERT || tb_vec_push(&t->norms, n);
        if (bad) {
            tb_buf_free(&n.a), tb_buf_free(&n.b);
            return "normalizer records";
        }
        tok_charsmap_t cm;
        tb_err_t why;
        if ((n.kind == TOK_NORM_CHARSMAP || n.kind == TOK_NORM_SPM) &&
            n.blob.len &&
            tok_charsmap_open_bounded(&cm, n.blob.data, n.blob.len, &why))
            return "charsmap";
    }
    for (uint32_t i = 0; i < c->n_pres && !r->bad; i++) {
        tok_pre_t p = {0};
        p.kind = (tok_pre_kind_t)get_u32(r);
        p.behavior = (tok_split_behavior_t)get_u32(r);
        p.invert = (int)get_u32(r);
        p.flags = get_u32(r);
        p.literal = (int)get_u32(r);
        uint32_t compiled = get_u32(r);
        tb_err_t why;
        int bad = get_blob(r, &p.pattern) || p.kind > TOK_PRE_BERT ||
                  p.behavior > TOK_SPLIT_CONTIGUOUS ||
                  (compiled && tok_pre_compile(&p, p.pattern.data, p.pattern.len,
                                               p.literal, &why)) ||
                  tb_vec_push(&t->pres, p);
        if (bad) {
            tb_buf_free(&p.pattern);
            pcre2_code_free(p.re);
            return "pre-tokenizer records";
        }
    }
    for (uint32_t i = 0; i < c->n_added && !r->bad; i++) {
        tok_added_t a = {0};
        a.id = get_u32(r);
        const uint8_t *f = get_bytes(r, 5);
        if (f)
            a.special = f[0], a.lstrip = f[1], a.rstrip = f[2],
            a.single_word = f[3], a.normalized = f[4];
        if (get_blob(r, &a.content) || a.id >= c->vocab_size ||
            tb_vec_push(&t->added, a)) {
            tb_buf_free(&a.content);
            return "added tokens";
        }
    }
    const uint8_t *pre = get_bytes(r, (size_t)c->n_prefix * 4);
    const uint8_t *suf = get_bytes(r, (size_t)c->n_suffix * 4);
    for (uint32_t i = 0; i < c->n_pair && !r->bad; i++) {
        tok_pair_item_t it = {.what = (int32_t)get_u32(r), .type = get_u32(r)};
        if (it.what != TOK_PAIR_A && it.what != TOK_PAIR_B &&
            (it.what < 0 || (uint32_t)it.what >= c->vocab_size))
            return "pair rule";
        if (tb_vec_push(&t->pair, it))
            return "out of memory";
    }
    if (r->bad || r->p != r->end)
        return "meta section length";
    if ((c->n_prefix && tb_vec_reserve(&t->special_prefix, c->n_prefix)) ||
        (c->n_suffix && tb_vec_reserve(&t->special_suffix, c->n_suffix)))
        return "out of memory";
    if (c->n_prefix)
        memcpy(t->special_prefix.data, pre, (size_t)c->n_prefix * 4);
    if (c->n_suffix)
        memcpy(t->special_suffix.data, suf, (size_t)c->n_suffix * 4);
    t->special_prefix.len = c->n_prefix;
    t->special_suffix.len = c->n_suffix;
    if (!ids_ok((const int32_t *)t->special_prefix.data, c->n_prefix, c->vocab_size) ||
        !ids_ok((const int32_t *)t->special_suffix.data, c->n_suffix, c->vocab_size))
        return "special-token rule";
    return NULL;
}

/* Points t's tables at the mapped sections (read-only: never written). */
static const char *adopt_sections(tok_tokenizer_t *t, const core_t *c,
                                  const uint8_t *base, const header_t *h)
{
    tok_vocab_t *v = &t->vocab;
#define SEC(s, type) ((type)(uintptr_t)(base + h->sec[s][0]))
    v->size = c->vocab_size;
    v->bytes = SEC(SEC_BYTES, uint8_t *);
    v->offset = SEC(SEC_OFFSET, uint32_t *);
    v->score = SEC(SEC_SCORE, float *);
    v->kind = SEC(SEC_KIND, uint8_t *);
    v->special = SEC(SEC_SPECIAL, uint8_t *);
    v->by_bytes.slots = SEC(SEC_BY_BYTES, tok_index_slot_t *);
    v->by_bytes.size = h->sec[SEC_BY_BYTES][1] / sizeof(tok_index_slot_t);
    v->by_bytes.count = c->by_bytes_count;
    memcpy(v->byte_id, c->byte_id, sizeof v->byte_id);
    v->bos = c->bos, v->eos = c->eos, v->unk = c->unk, v->pad = c->pad;
    if (h->sec[SEC_MERGES][1]) {
        t->bpe.merges.slots = SEC(SEC_MERGES, tok_merge_slot_t *);
        t->bpe.merges.size = h->sec[SEC_MERGES][1] / sizeof(tok_merge_slot_t);
        t->bpe.merges.count = c->merges_count;
        t->bpe.merges_borrowed = 1;
    }
    if (c->has_tables) {
        bpe_tables_t *tb = calloc(1, sizeof *tb);
        if (!tb)
            return "out of memory";
        tb->borrowed = 1;
        tb->mt = t->bpe.merges.slots;
        tb->mt_size = t->bpe.merges.size;
        tb->rank_by = (tok_rank_t)c->rank_by;
        tb->vocab = v;
        tb->join_max = c->join_max;
        tb->byte_pairs = h->sec[SEC_BYTE_PAIRS][1] ? SEC(SEC_BYTE_PAIRS, uint64_t *)
                                                   : NULL;
        tb->filter = h->sec[SEC_PAIR_FILTER][1] ? SEC(SEC_PAIR_FILTER, uint64_t *)
                                                : NULL;
        tb->premerge_bits = c->premerge_bits;
        tb->premerge = c->premerge_bits ? SEC(SEC_PREMERGE, tok_premerge_slot_t *) : NULL;
        tb->partners = SEC(SEC_PARTNERS, uint64_t *);
        tb->n_partners = h->sec[SEC_PARTNERS][1] / 8;
        while ((size_t)8 << tb->filter_shift < h->sec[SEC_PAIR_FILTER][1])
            tb->filter_shift++;
        memcpy(tb->ascii, c->ascii, sizeof tb->ascii);
        tb->chars.slots = SEC(SEC_CHARS, tok_index_slot_t *);
        tb->chars.size = h->sec[SEC_CHARS][1] / sizeof(tok_index_slot_t);
        tb->chars.count = c->chars_count;
        tb->cut_ok = c->cut_ok;
        memcpy(tb->crossable, c->crossable, sizeof tb->crossable);
        t->bpe.tables = tb;
    }
    if (c->has_da) {
        tb_da_t *d = calloc(1, sizeof *d);
        if (!d)
            return "out of memory";
        d->units = SEC(SEC_DA, uint32_t *);
        d->n = h->sec[SEC_DA][1] / 4;
        d->max_len = c->da_max_len;
        d->nkeys = c->da_nkeys;
        d->nul_far = c->da_nul_far;
        d->shifted = c->da_shifted;
        d->direct = c->da_direct;
        tok_unigram_use_index(t, d, 1);
    }
#undef SEC
    return NULL;
}

static void adopt_core(tok_tokenizer_t *t, const core_t *c)
{
    t->format = (tok_format_t)c->format;
    t->model = (tok_model_kind_t)c->model;
    t->bpe.unk = c->bpe_unk;
    t->bpe.byte_level = c->byte_level;
    t->bpe.byte_fallback = c->byte_fallback;
    t->bpe.fuse_unk = c->fuse_unk;
    t->bpe.ignore_merges = c->ignore_merges;
    t->bpe.rank_by = (tok_rank_t)c->rank_by;
    t->unigram.unk = c->uni_unk;
    t->unigram.byte_fallback = c->uni_byte_fallback;
    t->unigram.unk_penalty = c->unk_penalty;
    t->unigram.max_score = c->max_score;
    t->unigram.max_piece_len = c->max_piece_len;
    memcpy(t->unigram.byte_piece, c->byte_piece, sizeof c->byte_piece);
    t->wordpiece = c->wordpiece;
    t->meta_to_space = c->meta_to_space;
    t->match_added = c->match_added;
    t->needs_utf8 = c->needs_utf8;
    t->decode_flags = c->decode_flags;
    memcpy(t->model_name, c->model_name, sizeof t->model_name);
    t->model_name[sizeof t->model_name - 1] = 0;
    memcpy(t->add_special_error, c->add_special_error, sizeof t->add_special_error);
    t->add_special_error[sizeof t->add_special_error - 1] = 0;
    memcpy(t->pair_error, c->pair_error, sizeof t->pair_error);
    t->pair_error[sizeof t->pair_error - 1] = 0;
}

/* The header's checks, cheapest first; NULL or what is wrong. */
static const char *check_header(const header_t *h, const uint8_t *map,
                                size_t len, const tok_source_id_t *src)
{
    if (len < sizeof *h || memcmp(h->magic, magic, sizeof magic))
        return "not a compiled tokenizer";
    if (h->version != COMPILED_VERSION)
        return "another format version";
    if (h->abi != abi_fingerprint())
        return "written by a build of another layout";
    if (h->build != TOK_BUILD_HASH)
        return "written by a build of other loaders";
    if (h->file_size != len)
        return "truncated or extended";
    if (memcmp(&h->source, src, sizeof *src))
        return "made from another source file";
    header_t zero = *h;
    zero.header_hash = 0;
    if (tb_hash(&zero, sizeof zero) != h->header_hash)
        return "header checksum mismatch";
    for (int s = 0; s < SEC_COUNT; s++)
        if (h->sec[s][0] % ALIGN || h->sec[s][0] < sizeof *h ||
            h->sec[s][0] > len || h->sec[s][1] > len - h->sec[s][0])
            return "section out of bounds";
    if (h->sec[SEC_META][1] < sizeof(core_t))
        return "meta section length";
    if (tb_hash(map + sizeof *h, len - sizeof *h) != h->body_hash)
        return "body checksum mismatch";
    return NULL;
}

int tok_compiled_open(const char *path, const tok_source_id_t *src,
                      tok_tokenizer_t **out, tb_err_t *err)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 1 : tb_fail(err, "%s: %s", path, strerror(errno));
    struct stat st;
    void *map = MAP_FAILED;
    if (!fstat(fd, &st) && st.st_size > 0)
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return tb_fail(err, "%s: empty or unreadable", path);
    size_t len = (size_t)st.st_size;
    const uint8_t *base = map;
    header_t h;
    if (len >= sizeof h)
        memcpy(&h, base, sizeof h);
    const char *why = check_header(&h, base, len, src);
    core_t c;
    if (!why) {
        memcpy(&c, base + h.sec[SEC_META][0], sizeof c);
        why = check_sections(&c, base, &h);
    }
    tok_tokenizer_t *t = why ? NULL : tok_new((tok_format_t)c.format);
    if (!why && !t)
        why = "out of memory";
    if (t) {
        t->map = base;
        t->map_len = len;
        adopt_core(t, &c);
        rd_t r = {base + h.sec[SEC_META][0] + sizeof c,
                  base + h.sec[SEC_META][0] + h.sec[SEC_META][1], 0};
        why = adopt_sections(t, &c, base, &h);
        if (!why)
            why = read_records(t, &c, &r);
    }
    tb_err_t e2;
    if (!why && tok_prepare_steps(t, &e2))
        why = "pre-tokenizer patterns";
    if (why) {
        if (t)
            tok_free(t);
        else
            munmap(map, len);
        return tb_fail(err, "%s: %s", path, why);
    }
    t->ready = 1;
    *out = t;
    return 0;
}
