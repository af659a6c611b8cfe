/*
 * charsmap: the precompiled_charsmap reader (see charsmap.h) and the two
 * normalizers built on it:
 *   TOK_NORM_SPM       SentencePiece's own normalizer (normalizer.cc in
 *                      sentencepiece 0.1.97): longest charsmap match per
 *                      position, invalid UTF-8 -> U+FFFD one byte at a time,
 *                      then remove_extra_whitespaces, add_dummy_prefix and
 *                      escape_whitespaces as the spec's flags say;
 *   TOK_NORM_CHARSMAP  Hugging Face's "Precompiled" normalizer: per
 *                      extended grapheme cluster, the replacement of the
 *                      shortest charsmap key that prefixes the cluster (for
 *                      clusters under 6 bytes), else per character.
 */
#include <stdlib.h>
#include <string.h>
#include <unigbrk.h>

#include "../base/bitset.h"
#include "../base/utf8.h"
#include "charsmap.h"
#include "tok_internal.h"

int tok_charsmap_view(tok_charsmap_t *cm, const uint8_t *blob, size_t len,
                      tb_err_t *err)
{
    memset(cm, 0, sizeof *cm);
    if (len == 0)
        return 0;
    if (len < 4)
        return tb_fail(err, "charsmap: %zu bytes, too short for the 4-byte "
                            "size at byte 0", len);
    uint32_t size = (uint32_t)blob[0] | (uint32_t)blob[1] << 8 |
                    (uint32_t)blob[2] << 16 | (uint32_t)blob[3] << 24;
    if (size % 4 || size == 0)
        return tb_fail(err, "charsmap: unit array size %u at byte 0 is not a "
                            "positive multiple of 4", size);
    if (size > len - 4)
        return tb_fail(err, "charsmap: unit array size %u at byte 0 runs past "
                            "the end of the %zu-byte blob", size, len);
    if (len - 4 - size > UINT32_MAX)
        return tb_fail(err, "charsmap: string pool over 4 GiB");
    cm->units = blob + 4;
    cm->n_units = size / 4;
    cm->pool = blob + 4 + size;
    cm->pool_len = (uint32_t)(len - 4 - size);
    return 0;
}

/* Every node reachable from the root, but the root, has children or a
 * value.  A node with neither is part of no key: darts-clone and
 * trie_charsmap_build never write one, so one means damaged units (a
 * cleared has-leaf bit, a label that turns an unused unit into a child).
 * Only reachable units are nodes (unused ones hold anything), hence the
 * walk from the root; a unit reached twice is not walked again, since
 * darts-clone shares identical subtries.  Labels 1-255 only: keys are C
 * strings, and a NUL probe lands on a node's own value slot.
 *
 * Probing 255 labels per node cost 7 ms on nmt_nfkc's 44k units, so the
 * walk goes by blocks instead.  Unit p with label c claims to be a child
 * of whichever node has its children at p ^ c (the probe from there is
 * exactly p), which differs from p in its low byte only: a base's
 * children lie in its own block of 256 units.  One pass marks the bases
 * some unit claims (fertile: a node whose base none claims has no
 * children).  Then a reached node wants its base scanned and makes its
 * block due, and a due block's scan reaches every unit claiming a base
 * wanted then; sweeps over the blocks run until none is due.  Each scan
 * follows a newly reached node, so there are at most as many as nodes
 * (darts-clone places children after their parent: one or two sweeps).
 * Four bits a unit: lists of each base's children took 3 bytes a unit and
 * a stack 4 more, 132 KB that a small model's load then kept in its heap,
 * and 3.1M of a cached load's 5.7M instructions (that load no longer
 * walks: tok_charsmap_open_bounded).  Runs after the offset checks, so
 * every node's base is inside the array. */
typedef struct {
    const tok_charsmap_t *cm;
    tb_bitset_t fertile; /* bases some unit claims as its parent's */
    tb_bitset_t reached; /* units reached from the root */
    tb_bitset_t wanted;  /* bases of reached nodes, not scanned since */
    tb_bitset_t due;     /* blocks holding a wanted base */
    uint32_t n_due;
} nodes_walk_t;

/* Unit `node` is reached: fails if it is a node (not the root) with
 * neither children nor a value, else wants its children scanned. */
static int reach(nodes_walk_t *w, uint32_t node, tb_err_t *err)
{
    uint32_t u = tok_cm_unit(w->cm, node), base = node ^ tok_cm_offset(u);
    int kids = base < w->cm->n_units && tb_bitset_get(&w->fertile, base);
    tb_bitset_set(&w->reached, node);
    if (!kids && !tok_cm_has_leaf(u) && node != 0)
        return tb_fail(err, "charsmap: unit %u (byte %zu) is reached from "
                            "the root but has neither children nor a value",
                       node, 4 + (size_t)node * 4);
    if (kids) {
        tb_bitset_set(&w->wanted, base);
        if (!tb_bitset_get(&w->due, base >> 8)) {
            tb_bitset_set(&w->due, base >> 8);
            w->n_due++;
        }
    }
    return 0;
}

/* Block b's scan: every unit claiming a base wanted now is reached (a
 * base wanted during the scan makes the block due again). */
static int scan_block(nodes_walk_t *w, uint32_t b, tb_err_t *err)
{
    const uint32_t n = w->cm->n_units;
    uint64_t now[4]; /* the block's 256 bases, as wanted.words holds them */
    memcpy(now, w->wanted.words + 4 * (size_t)b, sizeof now);
    memset(w->wanted.words + 4 * (size_t)b, 0, sizeof now);
    tb_bitset_clear(&w->due, b);
    w->n_due--;
    for (uint32_t p = b << 8; p < n && p < (b + 1) << 8; p++) {
        uint32_t c = tok_cm_label(tok_cm_unit(w->cm, p)), low = (p ^ c) & 0xFF;
        if (c - 1 < 255 && (now[low >> 6] >> (low & 63) & 1) &&
            !tb_bitset_get(&w->reached, p) && reach(w, p, err))
            return -1;
    }
    return 0;
}

static int check_nodes(const tok_charsmap_t *cm, tb_err_t *err)
{
    const uint32_t n = cm->n_units;
    if (n == 0) /* the empty map: no root */
        return 0;
    uint32_t blocks = (uint32_t)(((size_t)n + 255) / 256);
    size_t span = (size_t)blocks * 256;
    nodes_walk_t w = {.cm = cm};
    int rc = tb_bitset_init(&w.fertile, span) || tb_bitset_init(&w.reached, span) ||
                     tb_bitset_init(&w.wanted, span) || tb_bitset_init(&w.due, blocks)
                 ? tb_fail(err, "charsmap: out of memory checking %u units", n)
                 : 0;
    for (uint32_t p = 0; !rc && p < n; p++) {
        uint32_t c = tok_cm_label(tok_cm_unit(cm, p));
        if (c - 1 < 255 && (p ^ c) < n)
            tb_bitset_set(&w.fertile, p ^ c);
    }
    if (!rc)
        rc = reach(&w, 0, err);
    while (!rc && w.n_due)
        for (uint32_t b = 0; !rc && b < blocks; b++)
            if (tb_bitset_get(&w.due, b))
                rc = scan_block(&w, b, err);
    tb_bitset_free(&w.fertile);
    tb_bitset_free(&w.reached);
    tb_bitset_free(&w.wanted);
    tb_bitset_free(&w.due);
    return rc;
}

int tok_charsmap_open_bounded(tok_charsmap_t *cm, const uint8_t *blob,
                              size_t len, tb_err_t *err)
{
    if (tok_charsmap_view(cm, blob, len, err))
        return -1;
    if (cm->pool_len && cm->pool[cm->pool_len - 1] != 0)
        return tb_fail(err, "charsmap: string pool does not end with a NUL "
                            "(byte %zu): unterminated replacement string",
                       len - 1);
    if (len && cm->pool_len == 0)
        return tb_fail(err, "charsmap: empty string pool after the %u units "
                            "(byte %zu)", cm->n_units, len);
    /* Every node's children offset must stay inside the array, and a node
     * that claims a leaf must point at a leaf unit whose value is an offset
     * inside the pool; then no lookup can leave the pool, as the pool ends
     * with a NUL. */
    for (uint32_t i = 0; i < cm->n_units; i++) {
        uint32_t u = tok_cm_unit(cm, i);
        if (u & TOK_CM_LEAF_BIT)
            continue;
        uint32_t j = i ^ tok_cm_offset(u);
        /* darts-clone keeps a node's children (and its leaf) in the array;
         * unused units have offset 0 */
        if (j >= cm->n_units)
            return tb_fail(err, "charsmap: unit %u (byte %zu) has its children "
                                "offset at unit %u, past the %u units",
                           i, 4 + (size_t)i * 4, j, cm->n_units);
        if (!tok_cm_has_leaf(u))
            continue;
        uint32_t leaf = tok_cm_unit(cm, j);
        if (!(leaf & TOK_CM_LEAF_BIT))
            return tb_fail(err, "charsmap: unit %u (byte %zu) has a leaf at "
                                "unit %u, which is not a leaf unit",
                           i, 4 + (size_t)i * 4, j);
        if (tok_cm_value(leaf) >= cm->pool_len)
            return tb_fail(err, "charsmap: leaf unit %u (byte %zu) points at "
                                "pool offset %u, past the %u-byte pool",
                           j, 4 + (size_t)j * 4, tok_cm_value(leaf),
                           cm->pool_len);
    }
    return 0;
}

int tok_charsmap_open(tok_charsmap_t *cm, const uint8_t *blob, size_t len,
                      tb_err_t *err)
{
    return tok_charsmap_open_bounded(cm, blob, len, err) || check_nodes(cm, err)
               ? -1
               : 0;
}

/* The common-prefix walk; stops at the first match if `first`. */
static size_t walk(const tok_charsmap_t *cm, const uint8_t *s, size_t n,
                   uint32_t *value, int first)
{
    if (cm->n_units == 0)
        return 0;
    size_t best = 0;
    uint32_t node = tok_cm_offset(tok_cm_unit(cm, 0)); /* root is unit 0 */
    for (size_t i = 0; i < n; i++) {
        node ^= s[i];
        if (node >= cm->n_units)
            break;
        uint32_t u = tok_cm_unit(cm, node);
        if (tok_cm_label(u) != s[i])
            break;
        node ^= tok_cm_offset(u);
        if (tok_cm_has_leaf(u) && node < cm->n_units) {
            uint32_t leaf = tok_cm_unit(cm, node);
            /* Rechecked here so that an unvalidated blob stays safe. */
            if ((leaf & TOK_CM_LEAF_BIT) && tok_cm_value(leaf) < cm->pool_len) {
                *value = tok_cm_value(leaf);
                best = i + 1;
                if (first)
                    break;
            }
        }
    }
    return best;
}

size_t tok_charsmap_longest(const tok_charsmap_t *cm, const uint8_t *s,
                            size_t n, uint32_t *value)
{
    return walk(cm, s, n, value, 0);
}

size_t tok_charsmap_shortest(const tok_charsmap_t *cm, const uint8_t *s,
                             size_t n, uint32_t *value)
{
    return walk(cm, s, n, value, 1);
}

const uint8_t *tok_charsmap_string(const tok_charsmap_t *cm, uint32_t value,
                                   size_t *len)
{
    if (value >= cm->pool_len) {
        *len = 0;
        return (const uint8_t *)"";
    }
    const uint8_t *p = cm->pool + value;
    const uint8_t *z = memchr(p, 0, cm->pool_len - value);
    *len = z ? (size_t)(z - p) : cm->pool_len - value;
    return p;
}

/* ---- SentencePiece's normalizer ------------------------------------- */

typedef struct {
    tok_charsmap_t cm;
    const tb_buf_t *user; /* user-defined pieces, each NUL-terminated */
    uint8_t first[32];    /* bit set of their first bytes */
} spm_norm_t;

/* Longest user-defined piece at s: SentencePiece leaves them unnormalized. */
static size_t user_match(const spm_norm_t *c, const uint8_t *s, size_t n)
{
    if (!(c->first[s[0] >> 3] & (1u << (s[0] & 7))))
        return 0;
    size_t best = 0;
    const uint8_t *p = c->user->data, *end = p + c->user->len;
    while (p < end) {
        size_t k = strnlen((const char *)p, (size_t)(end - p));
        if (k > best && k <= n && !memcmp(p, s, k))
            best = k;
        p += k + 1;
    }
    return best;
}

static const uint8_t replacement_char[] = {0xEF, 0xBF, 0xBD};

/* One normalization step at s: the output piece and the bytes consumed. */
static size_t norm_prefix(const spm_norm_t *c, const uint8_t *s, size_t n,
                          const uint8_t **piece, size_t *plen)
{
    size_t k = c->user ? user_match(c, s, n) : 0;
    if (k) {
        *piece = s;
        *plen = k;
        return k;
    }
    uint32_t value;
    k = tok_charsmap_longest(&c->cm, s, n, &value);
    if (k) {
        *piece = tok_charsmap_string(&c->cm, value, plen);
        return k;
    }
    uint32_t cp;
    k = tb_utf8_decode(s, n, &cp);
    if (k == 0) { /* malformed: U+FFFD for one byte, as SentencePiece does */
        *piece = replacement_char;
        *plen = 3;
        return 1;
    }
    *piece = s;
    *plen = k;
    return k;
}

static const uint8_t meta[] = {0xE2, 0x96, 0x81}; /* U+2581 */

static int put_space(tb_buf_t *out, int escape)
{
    return escape ? tb_buf_put(out, meta, 3) : tb_buf_putc(out, ' ');
}

static int put_piece(tb_buf_t *out, const uint8_t *p, size_t n, int escape)
{
    if (!escape)
        return tb_buf_put(out, p, n);
    for (size_t i = 0; i < n; i++)
        if (p[i] == ' ' ? put_space(out, 1) : tb_buf_putc(out, p[i]))
            return -1;
    return 0;
}

static int spm_normalize(const spm_norm_t *c, uint32_t flags, const uint8_t *s,
                         size_t n, tb_buf_t *out, tb_err_t *err)
{
    const int remove = !!(flags & TOK_SPM_REMOVE_EXTRA_WHITESPACES);
    const int escape = !!(flags & TOK_SPM_ESCAPE_WHITESPACES);
    const size_t base = out->len;
    const uint8_t *p;
    size_t plen, i = 0;
    if (remove) /* leading whitespace goes */
        while (i < n) {
            size_t k = norm_prefix(c, s + i, n - i, &p, &plen);
            if (plen != 1 || p[0] != ' ')
                break;
            i += k;
        }
    if (i == n)
        return 0;
    if ((flags & TOK_SPM_ADD_DUMMY_PREFIX) && put_space(out, escape))
        goto oom;
    int prev_space = remove;
    while (i < n) {
        i += norm_prefix(c, s + i, n - i, &p, &plen);
        if (prev_space && remove)
            while (plen && p[0] == ' ')
                p++, plen--;
        if (plen) {
            if (put_piece(out, p, plen, escape))
                goto oom;
            prev_space = p[plen - 1] == ' ';
        }
        if (!remove)
            prev_space = 0;
    }
    if (remove) { /* trailing whitespace goes too */
        size_t w = escape ? 3 : 1;
        const uint8_t *sp = escape ? meta : (const uint8_t *)" ";
        while (out->len - base >= w && !memcmp(out->data + out->len - w, sp, w))
            out->len -= w;
    }
    return 0;
oom:
    return tb_fail(err, "spm normalizer: out of memory");
}

/* ---- Hugging Face's Precompiled normalizer -------------------------- */

static int put_shortest(const tok_charsmap_t *cm, const uint8_t *s, size_t n,
                        tb_buf_t *out)
{
    uint32_t value;
    if (tok_charsmap_shortest(cm, s, n, &value)) {
        size_t len;
        const uint8_t *r = tok_charsmap_string(cm, value, &len);
        return tb_buf_put(out, r, len);
    }
    return -2;
}

/* One grapheme cluster g[0..n): whole if short and mapped, else per char. */
static int hf_cluster(const tok_charsmap_t *cm, const uint8_t *g, size_t n,
                      tb_buf_t *out)
{
    int r = n < 6 ? put_shortest(cm, g, n, out) : -2;
    if (r != -2)
        return r;
    for (size_t i = 0; i < n;) {
        size_t k = tb_utf8_lead_len(g[i]);
        if (k > n - i)
            k = n - i;
        r = put_shortest(cm, g + i, k, out);
        if (r == -2)
            r = tb_buf_put(out, g + i, k);
        if (r)
            return r;
        i += k;
    }
    return 0;
}

static int hf_precompiled(const tok_charsmap_t *cm, const uint8_t *s, size_t n,
                          tb_buf_t *out, tb_err_t *err)
{
    size_t bad = tb_utf8_validate(s, n);
    if (bad < n)
        return tb_fail(err, "precompiled normalizer: invalid UTF-8 at byte %zu",
                       bad);
    char *brk = malloc(n ? n : 1);
    if (!brk)
        return tb_fail(err, "precompiled normalizer: out of memory");
    u8_grapheme_breaks(s, n, brk);
    int rc = 0;
    for (size_t a = 0; a < n && rc == 0;) {
        size_t b = a + 1;
        while (b < n && !brk[b])
            b++;
        rc = hf_cluster(cm, s + a, b - a, out);
        a = b;
    }
    free(brk);
    return rc ? tb_fail(err, "precompiled normalizer: out of memory") : 0;
}

int tok_spm_normalize(const tok_norm_t *nm, const uint8_t *s, size_t n,
                      tb_buf_t *out, tb_err_t *err)
{
    spm_norm_t c = {0};
    /* The blob was validated at load; the walk is bounds-checked anyway,
     * so the hot path only reads the header. */
    if (tok_charsmap_view(&c.cm, nm->blob.data, nm->blob.len, err))
        return -1;
    if (nm->kind == TOK_NORM_CHARSMAP)
        return hf_precompiled(&c.cm, s, n, out, err);
    if (nm->kind != TOK_NORM_SPM)
        return tb_fail(err, "tok_spm_normalize: not a charsmap normalizer");
    if (nm->a.len) { /* user-defined pieces, NUL-separated */
        c.user = &nm->a;
        for (size_t i = 0; i < nm->a.len; i++)
            if (i == 0 || nm->a.data[i - 1] == 0)
                c.first[nm->a.data[i] >> 3] |= (uint8_t)(1u << (nm->a.data[i] & 7));
    }
    return spm_normalize(&c, nm->flags, s, n, out, err);
}
