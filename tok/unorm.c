/*
 * unorm: NFC, NFD, NFKC and NFKD (UAX #15) over UTF-8, with the Unicode 9.0
 * character data of the reference tokenizers; see unorm.h.
 *
 * The text is cut into segments that normalize independently: a segment
 * starts at a character whose decomposition starts with a starter that
 * composes with nothing before it (canonical ordering never moves a mark
 * across a starter, and composition never reaches back past one).  Each
 * segment is decomposed into a code point array (full decompositions come
 * precomputed from the tables), put in canonical order (a stable sort of
 * each run of non-starters by combining class), then, for NFC and NFKC,
 * recomposed with the canonical composition algorithm (UAX #15 section
 * 1.3, D117), and written out as UTF-8.  A segment of one character that
 * is its own normal form (a Chinese character before another) and a run
 * of ASCII are copied as they are: most text is its normal form already.
 */
#include "unorm.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../base/hash.h"
#include "../base/utf8.h"

/* One record per distinct set of properties; the generated tables map each
 * code point to one.  Decompositions are full (already recursive) and sit
 * in unorm_pool as ccc << 24 | code point; compat_len is 0 when the
 * compatibility decomposition is the canonical one. */
typedef struct {
    uint8_t ccc, flags, canon_len, compat_len;
    uint16_t canon_off, compat_off;
} unorm_info_t;

#include "unorm_tables.h"

enum {
    F_SECOND = 1,       /* may compose with a preceding starter */
    F_CANON_JOINS = 2,  /* NFD / NFC: no segment may start here */
    F_COMPAT_JOINS = 4, /* NFKD / NFKC: likewise */
};

#define CP_MASK 0x1FFFFFu
#define CCC(x) ((x) >> 24)

/* Hangul syllables decompose and compose by arithmetic (Unicode 3.12). */
enum {
    S_BASE = 0xAC00, L_BASE = 0x1100, V_BASE = 0x1161, T_BASE = 0x11A7,
    L_COUNT = 19, V_COUNT = 21, T_COUNT = 28, S_COUNT = 11172,
};

static inline const unorm_info_t *info_of(uint32_t cp)
{
    uint32_t block = unorm_stage1[cp >> UNORM_SHIFT];
    uint32_t low = cp & ((1u << UNORM_SHIFT) - 1);
    return &unorm_info[unorm_stage2[(block << UNORM_SHIFT) | low]];
}

/* The primary composite of a and b, or 0 if they do not compose. */
static uint32_t compose_pair(uint32_t a, uint32_t b)
{
    if (a - L_BASE < L_COUNT && b - V_BASE < V_COUNT)
        return S_BASE + ((a - L_BASE) * V_COUNT + (b - V_BASE)) * T_COUNT;
    if (a - S_BASE < S_COUNT && (a - S_BASE) % T_COUNT == 0 &&
        b - T_BASE - 1 < T_COUNT - 1)
        return a + (b - T_BASE);
    uint64_t key = (uint64_t)a << 21 | b;
    size_t lo = 0, hi = sizeof unorm_pairs / sizeof *unorm_pairs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t k = unorm_pairs[mid] >> 21;
        if (k == key)
            return (uint32_t)(unorm_pairs[mid] & CP_MASK);
        if (k < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

typedef TB_VEC(uint32_t) u32_vec_t;

typedef struct {
    u32_vec_t seg, tmp;
    int compose;
} state_t;

/* Stable sort of a run of non-starters by combining class: insertion for
 * the usual short runs; a counting sort keeps long runs (stress text of
 * thousands of marks) linear. */
static int sort_run(state_t *st, uint32_t *r, size_t n)
{
    if (n <= 16) {
        for (size_t i = 1; i < n; i++) {
            uint32_t x = r[i];
            size_t j = i;
            for (; j > 0 && CCC(r[j - 1]) > CCC(x); j--)
                r[j] = r[j - 1];
            r[j] = x;
        }
        return 0;
    }
    st->tmp.len = 0;
    if (tb_vec_reserve(&st->tmp, n))
        return -1;
    size_t at[257] = {0};
    for (size_t i = 0; i < n; i++)
        at[CCC(r[i]) + 1]++;
    for (size_t c = 1; c < 257; c++)
        at[c] += at[c - 1];
    for (size_t i = 0; i < n; i++)
        st->tmp.data[at[CCC(r[i])]++] = r[i];
    memcpy(r, st->tmp.data, n * sizeof *r);
    return 0;
}

/* Orders, composes if asked, and writes out the pending segment. */
static int flush(state_t *st, tb_buf_t *out)
{
    uint32_t *seg = st->seg.data;
    size_t n = st->seg.len;
    for (size_t i = 0; i < n;) {
        if (!CCC(seg[i])) {
            i++;
            continue;
        }
        size_t j = i + 1;
        while (j < n && CCC(seg[j]))
            j++;
        if (j - i > 1 && sort_run(st, seg + i, j - i))
            return -1;
        i = j;
    }
    if (st->compose) {
        /* starter: where the last starter sits in the output (written
         * back into seg); last: the class of the last character kept.
         * A character is blocked from the starter unless it follows it
         * directly or every character between has a lower class. */
        size_t w = 0, starter = SIZE_MAX;
        uint32_t last = 0;
        for (size_t r = 0; r < n; r++) {
            uint32_t c = seg[r], cc = CCC(c), cp = c & CP_MASK;
            if (starter != SIZE_MAX && (w == starter + 1 || last < cc) &&
                (info_of(cp)->flags & F_SECOND)) {
                uint32_t comp = compose_pair(seg[starter] & CP_MASK, cp);
                if (comp) {
                    seg[starter] = (uint32_t)info_of(comp)->ccc << 24 | comp;
                    continue;
                }
            }
            if (!cc)
                starter = w;
            seg[w++] = c;
            last = cc;
        }
        n = w;
    }
    if (tb_buf_reserve(out, 4 * n))
        return -1;
    for (size_t i = 0; i < n; i++)
        out->len += tb_utf8_encode(seg[i] & CP_MASK, out->data + out->len);
    st->seg.len = 0;
    return 0;
}

static int push(state_t *st, uint32_t x)
{
    return tb_vec_push(&st->seg, x);
}

/* The end of the run of ASCII from i, eight bytes at a time: a run's end
 * within them is found with no loop over its bytes. */
static size_t ascii_end(const uint8_t *s, size_t n, size_t i)
{
    for (; i + 8 <= n; i += 8) {
        uint64_t high = tb_load_le64(s + i) & 0x8080808080808080ull;
        if (high)
            return i + (size_t)__builtin_ctzll(high) / 8;
    }
    while (i < n && s[i] < 0x80)
        i++;
    return i;
}

/* Whether a character (info in) is its own normal form whatever comes
 * before it: a starter with no decomposition (in the form's sense) that
 * composes with no character before it. */
static int stands_alone(const unorm_info_t *in, int compat)
{
    return !in->ccc && !in->canon_len && !(compat && in->compat_len) &&
           !(in->flags & F_SECOND);
}

/* A character decoded ahead: its place (SIZE_MAX: none), code point and
 * length, which the loop then takes instead of decoding it again. */
typedef struct {
    size_t at, len;
    uint32_t cp;
} ahead_t;

/* Whether s[i..n) starts a segment (nothing there joins what is before it,
 * joins being the form's flag): at the end, ASCII, a character without
 * the flag, or a byte that is no character (which the caller reports). */
static int starts_segment(const uint8_t *s, size_t n, size_t i, uint8_t joins, ahead_t *a)
{
    if (i == n || s[i] < 0x80 || !(a->len = tb_utf8_decode_fast(s + i, n - i, &a->cp)))
        return 1;
    a->at = i;
    return a->cp - S_BASE < S_COUNT || !(info_of(a->cp)->flags & joins);
}

int tok_unorm(tok_unorm_form_t form, const uint8_t *s, size_t n,
              tb_buf_t *out, tb_err_t *err)
{
    int compat = form == TOK_UNORM_NFKC || form == TOK_UNORM_NFKD;
    uint8_t joins = compat ? F_COMPAT_JOINS : F_CANON_JOINS;
    state_t st = {.compose = form == TOK_UNORM_NFC || form == TOK_UNORM_NFKC};
    size_t start = out->len, i = 0;
    ahead_t ahead = {SIZE_MAX, 0, 0};
    int rc = 0, oom = 0;
    while (i < n && !oom) {
        if (s[i] < 0x80) {
            /* ASCII is a starter that nothing before it composes with;
             * followed by ASCII (or the end) it meets nothing at all: a
             * run goes out as it is, but for its last byte when a
             * character follows, which may compose with it. */
            if (st.seg.len && flush(&st, out)) {
                oom = 1;
                break;
            }
            size_t end = ascii_end(s, n, i), keep = end == n ? end : end - 1;
            oom = (keep > i && tb_buf_put(out, s + i, keep - i)) ||
                  (keep < end && push(&st, s[keep]));
            i = end;
            continue;
        }
        uint32_t cp = ahead.cp;
        size_t k = i == ahead.at ? ahead.len : tb_utf8_decode_fast(s + i, n - i, &cp);
        if (!k) {
            rc = tb_fail(err, "normalizer: invalid UTF-8 at byte %zu of the "
                              "text", i);
            break;
        }
        i += k;
        if (cp - S_BASE < S_COUNT) {
            uint32_t x = cp - S_BASE;
            if (st.seg.len && flush(&st, out)) {
                oom = 1;
                break;
            }
            oom = push(&st, L_BASE + x / (V_COUNT * T_COUNT)) ||
                  push(&st, V_BASE + x % (V_COUNT * T_COUNT) / T_COUNT) ||
                  (x % T_COUNT && push(&st, T_BASE + x % T_COUNT));
            continue;
        }
        const unorm_info_t *in = info_of(cp);
        if (!(in->flags & joins) && st.seg.len && flush(&st, out)) {
            oom = 1;
            break;
        }
        /* a segment of this character alone (most of Chinese text, where
         * a segment a character cost 50 instructions): as it is */
        if (stands_alone(in, compat) && starts_segment(s, n, i, joins, &ahead)) {
            if ((oom = tb_buf_reserve(out, 4)))
                break;
            /* four bytes where they are there, no call of memcpy */
            if (n - (i - k) >= 4)
                memcpy(out->data + out->len, s + i - k, 4);
            else
                memcpy(out->data + out->len, s + i - k, k);
            out->len += k;
            continue;
        }
        size_t len = in->canon_len, off = in->canon_off;
        if (compat && in->compat_len)
            len = in->compat_len, off = in->compat_off;
        if (!len) {
            oom = push(&st, (uint32_t)in->ccc << 24 | cp);
            continue;
        }
        if (tb_vec_reserve(&st.seg, len)) {
            oom = 1;
            break;
        }
        memcpy(st.seg.data + st.seg.len, unorm_pool + off, len * sizeof(uint32_t));
        st.seg.len += len;
    }
    if (!rc && !oom && st.seg.len && flush(&st, out))
        oom = 1;
    if (oom)
        rc = tb_fail(err, "normalizer: out of memory");
    if (rc)
        out->len = start;
    free(st.seg.data);
    free(st.tmp.data);
    return rc;
}

unsigned tok_unorm_ccc(uint32_t cp)
{
    return info_of(cp)->ccc;
}

const char *tok_unorm_version(void)
{
    return UNORM_VERSION;
}
