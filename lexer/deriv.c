/* deriv: derivatives, byte classes and the lazy DFA, over one regex or over
 * the (lexeme, term) pair sets of a lexer (see deriv.h). */
#include "deriv.h"

#include "../base/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEMO_MAX (1u << 20) /* derivative cache entries before it is cleared */

/* ---- derivatives -------------------------------------------------------- */

static uint64_t memo_hash(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

static int memo_get(const lex_dfa_t *d, uint64_t key, lex_term_t *v)
{
    size_t m = d->memo_cap - 1;
    for (size_t h = memo_hash(key) & m; d->memo_key[h] != UINT64_MAX; h = (h + 1) & m)
        if (d->memo_key[h] == key) {
            *v = d->memo_val[h];
            return 1;
        }
    return 0;
}

/* Keeps v for key, in place of the value it had: live() puts again the
 * live term its search ended at, and a key put twice would lengthen the
 * probes of every key hashed near it. */
static void memo_put(lex_dfa_t *d, uint64_t key, lex_term_t v)
{
    if ((d->memo_n + 1) * 2 > d->memo_cap) {
        size_t cap = d->memo_cap * 2;
        uint64_t *k = NULL;
        uint32_t *val = NULL;
        if (cap <= MEMO_MAX) {
            k = malloc(cap * sizeof *k);
            val = malloc(cap * sizeof *val);
        }
        if (!k || !val) {
            /* Too big (or no memory): it is only a cache, start it over. */
            free(k);
            free(val);
            memset(d->memo_key, 0xFF, d->memo_cap * sizeof *d->memo_key);
            d->memo_n = 0;
        } else {
            memset(k, 0xFF, cap * sizeof *k);
            for (size_t i = 0; i < d->memo_cap; i++) {
                if (d->memo_key[i] == UINT64_MAX)
                    continue;
                size_t h = memo_hash(d->memo_key[i]) & (cap - 1);
                while (k[h] != UINT64_MAX)
                    h = (h + 1) & (cap - 1);
                k[h] = d->memo_key[i];
                val[h] = d->memo_val[i];
            }
            free(d->memo_key);
            free(d->memo_val);
            d->memo_key = k;
            d->memo_val = val;
            d->memo_cap = cap;
        }
    }
    size_t m = d->memo_cap - 1, h = memo_hash(key) & m;
    while (d->memo_key[h] != UINT64_MAX && d->memo_key[h] != key)
        h = (h + 1) & m;
    d->memo_n += d->memo_key[h] != key;
    d->memo_key[h] = key;
    d->memo_val[h] = v;
}

/* Memo keys: (term << 10) | (what << 8) | class. */
enum { MEMO_DERIV, MEMO_RAW, MEMO_LIVE };

static int live(lex_dfa_t *d, lex_term_t x);
static int bounded_live(lex_dfa_t *d, lex_term_t x);
static void dfa_fail(lex_dfa_t *d, const char *what);

/* ---- first bytes ---------------------------------------------------------- */

/* Room in the per-term caches (first bytes, finiteness) for every term
 * made so far. */
static int first_room(lex_dfa_t *d)
{
    size_t n = d->terms.n;
    if (n <= d->first_cap)
        return 0;
    size_t cap = d->first_cap ? d->first_cap : 1024;
    while (cap < n)
        cap *= 2;
    uint64_t(*f)[4] = realloc(d->first, cap * sizeof *f);
    if (f)
        d->first = f;
    uint8_t *ok = realloc(d->first_ok, cap);
    if (ok)
        d->first_ok = ok;
    uint8_t *fin = realloc(d->finite, cap);
    if (fin)
        d->finite = fin;
    uint8_t *lift = realloc(d->liftable, cap);
    if (lift)
        d->liftable = lift;
    uint32_t(*lens)[2] = realloc(d->lens, cap * sizeof *lens);
    if (lens)
        d->lens = lens;
    uint32_t *msc = realloc(d->msc, cap * sizeof *msc);
    if (msc)
        d->msc = msc;
    if (!f || !ok || !fin || !lift || !lens || !msc)
        return -1;
    memset(d->first_ok + d->first_cap, 0, cap - d->first_cap);
    memset(d->finite + d->first_cap, 0, cap - d->first_cap);
    memset(d->liftable + d->first_cap, 0, cap - d->first_cap);
    memset(d->lens + d->first_cap, 0xFF, (cap - d->first_cap) * sizeof *lens);
    memset(d->msc + d->first_cap, 0xFF, (cap - d->first_cap) * sizeof *msc);
    d->first_cap = cap;
    return 0;
}

/*
 * Into out, the bytes that a non-empty string of term x may begin with, for
 * x without an AND or a NOT (whose parts may be empty under another id).
 * deriv() answers a byte outside the set with LEX_NOTHING and no memo
 * entry: that is exactly what the constructors would make (they absorb an
 * empty part), and it spares a union of many literals (keys, enum values)
 * one derivative per literal and byte class.  Kept per term once known;
 * -1 (out of memory) leaves out as every byte, so nothing is skipped.
 */
static int first_bytes(lex_dfa_t *d, lex_term_t x, uint64_t out[4])
{
    memset(out, 0xFF, 4 * sizeof *out);
    if (first_room(d))
        return -1;
    if (d->first_ok[x]) {
        memcpy(out, d->first[x], sizeof d->first[x]);
        return 0;
    }
    const lex_terms_t *t = &d->terms;
    const lex_node_t *n = lex_node(t, x);
    uint64_t acc[4] = {0}, part[4];
    switch (n->kind) {
    case LEX_K_BYTES:
        memcpy(acc, n->set, sizeof acc);
        break;
    case LEX_K_STAR:
    case LEX_K_REPEAT:
        if (first_bytes(d, n->a, acc))
            return -1;
        break;
    case LEX_K_CONCAT:
    case LEX_K_OR:
        /* Along the chain: every alternative of a union, a concatenation's
         * parts up to the first that cannot be empty. */
        for (lex_term_t cur = x;;) {
            const lex_node_t *y = lex_node(t, cur);
            int link = y->kind == n->kind;
            lex_term_t part_x = link ? y->a : cur;
            if (first_bytes(d, part_x, part))
                return -1;
            for (int w = 0; w < 4; w++)
                acc[w] |= part[w];
            if (!link || (n->kind == LEX_K_CONCAT && !lex_node(t, part_x)->nullable))
                break;
            cur = lex_node(t, cur)->b;
        }
        break;
    case LEX_K_NOTHING:
    case LEX_K_EPSILON:
        break;
    default: /* AND, NOT: never asked (see above); any byte */
        memset(acc, 0xFF, sizeof acc);
        break;
    }
    memcpy(d->first[x], acc, sizeof acc);
    d->first_ok[x] = 1;
    memcpy(out, acc, sizeof acc);
    return 0;
}

/* Whether a string of term x (without an AND or a NOT) may begin with b. */
static int may_begin(lex_dfa_t *d, lex_term_t x, uint8_t b)
{
    uint64_t f[4];
    const uint64_t *set = f;
    if (x < d->first_cap && d->first_ok[x])
        set = d->first[x];
    else
        first_bytes(d, x, f);
    return (set[b >> 6] >> (b & 63)) & 1;
}

/* ---- length bounds -------------------------------------------------------- */

/*
 * A lower and an upper bound of the lengths of a term's strings, exact
 * without an AND or a NOT.  live() searches toward the shortest completion
 * with the lower bound, and an AND whose one side is longer than the
 * other's longest is empty without a search: a pattern under a maxLength
 * beside it is decided in about as many steps as its completion is long.
 * LEN_INF: no string (a lower bound) or no bound (an upper one).
 */
#define LEN_INF (UINT32_MAX - 1)

static uint32_t len_add(uint32_t a, uint32_t b)
{
    return a >= LEN_INF - b ? LEN_INF : a + b; /* b <= LEN_INF: no wrap */
}

static uint32_t len_mul(uint32_t a, uint32_t k)
{
    if (!a || !k)
        return 0;
    return a >= LEN_INF / k ? LEN_INF : a * k;
}

/* Into out, x's bounds; without memory for the cache, bounds that hold for
 * every term (0, LEN_INF). */
static void term_lens(lex_dfa_t *d, lex_term_t x, uint32_t out[2])
{
    out[0] = 0;
    out[1] = LEN_INF;
    if (first_room(d))
        return;
    if (d->lens[x][0] != UINT32_MAX) {
        out[0] = d->lens[x][0];
        out[1] = d->lens[x][1];
        return;
    }
    const lex_terms_t *t = &d->terms;
    const lex_node_t *n = lex_node(t, x);
    uint32_t lo = 0, hi = 0, a[2], b[2];
    switch (n->kind) {
    case LEX_K_NOTHING:
        lo = LEN_INF;
        break;
    case LEX_K_BYTES:
        lo = hi = 1;
        break;
    case LEX_K_CONCAT:
    case LEX_K_OR: {
        /* Along the chain, as first_bytes goes. */
        int concat = n->kind == LEX_K_CONCAT;
        lo = concat ? 0 : LEN_INF;
        for (lex_term_t cur = x;;) {
            const lex_node_t *y = lex_node(t, cur);
            int link = y->kind == n->kind;
            term_lens(d, link ? y->a : cur, a);
            lo = concat ? len_add(lo, a[0]) : lo < a[0] ? lo : a[0];
            hi = concat ? len_add(hi, a[1]) : hi > a[1] ? hi : a[1];
            if (!link)
                break;
            cur = lex_node(t, cur)->b;
        }
        break;
    }
    case LEX_K_STAR:
        term_lens(d, n->a, a);
        hi = a[0] == LEN_INF || a[1] == 0 ? 0 : LEN_INF;
        break;
    case LEX_K_REPEAT: {
        uint32_t mn = (uint32_t)n->set[0], mx = (uint32_t)n->set[1];
        term_lens(d, n->a, a);
        lo = a[0] == LEN_INF ? (mn ? LEN_INF : 0) : len_mul(a[0], mn);
        hi = a[0] == LEN_INF ? 0 : len_mul(a[1], mx);
        break;
    }
    case LEX_K_AND:
        term_lens(d, n->a, a);
        term_lens(d, n->b, b);
        lo = a[0] > b[0] ? a[0] : b[0];
        hi = a[1] < b[1] ? a[1] : b[1];
        if (lo > hi)
            lo = LEN_INF;
        break;
    case LEX_K_NOT:
        lo = lex_node(t, n->a)->nullable;
        hi = LEN_INF;
        break;
    default: /* EPSILON */
        break;
    }
    if (lo == LEN_INF)
        hi = 0;
    if (!first_room(d)) { /* the parts' terms may have grown the cache */
        d->lens[x][0] = lo;
        d->lens[x][1] = hi;
    }
    out[0] = lo;
    out[1] = hi;
}

/* ---- classes a term tells apart ------------------------------------------ */

/*
 * A derivative reads the byte only in the byte sets at the head of a term:
 * a union's alternatives, a concatenation's parts up to the first that
 * cannot be empty, the body of a repetition, both sides of an AND, what a
 * NOT holds (first_bytes' sets, and may_begin tests their union).  Two
 * classes that each of those sets holds or misses alike have the same
 * derivative: the sets split the classes into blocks, a partition (part_t)
 * that a walk of the heads refines set by set.  A term's own partition is
 * kept (term_part) but an AND's, which is its sides' refined by each other:
 * a lexer state under a maxLength is new at every position of the text,
 * its term the intersection of a pattern's derivative, met at every
 * position again, with a count, and a walk of all its heads per state read
 * the pattern's every time.
 */
typedef struct {
    uint8_t lab[256]; /* class c is in block lab[c] ... */
    uint32_t n;       /* ... of n, numbered in the order of their lowest class */
} part_t;

/* Keys of d->classes_of: what a term's entry in d->classes holds (or, for
 * CLASSES_PART, where its partition's labels are in d->parts). */
enum { CLASSES_REPS, CLASSES_PART };

static uint64_t classes_key(lex_term_t x, int what)
{
    return (uint64_t)what << 32 | x;
}

/* The entry of x for `what` kept in d->classes, or NULL. */
static const lex_classes_t *classes_get(const lex_dfa_t *d, lex_term_t x, int what)
{
    uint64_t at;
    return tb_u64map_get(&d->classes_of, classes_key(x, what), &at) ? &d->classes.data[at]
                                                                     : NULL;
}

/* Keeps v as x's entry for `what` (if memory allows: it is only a cache). */
static void classes_put(lex_dfa_t *d, lex_term_t x, int what, const lex_classes_t *v)
{
    if (!tb_vec_push(&d->classes, *v) &&
        tb_u64map_put(&d->classes_of, classes_key(x, what), d->classes.len - 1) < 0)
        d->classes.len--;
}

/* Into out, every class. */
static void all_classes(const lex_dfa_t *d, lex_classes_t *out)
{
    for (uint32_t w = 0; w < 4; w++)
        out->w[w] = d->ncls >= 64 * (w + 1) ? UINT64_MAX
                    : d->ncls > 64 * w     ? (1ull << (d->ncls - 64 * w)) - 1
                                           : 0;
}

/* A new walk of heads: room in seen for every term made so far, none met. */
static int walk_begin(lex_dfa_t *d)
{
    size_t n = d->terms.n;
    if (n > d->seen_cap) {
        size_t cap = d->seen_cap ? d->seen_cap : 1024;
        while (cap < n)
            cap *= 2;
        uint32_t *s = realloc(d->seen, cap * sizeof *s);
        if (!s)
            return -1;
        memset(s + d->seen_cap, 0, (cap - d->seen_cap) * sizeof *s);
        d->seen = s;
        d->seen_cap = cap;
    }
    if (++d->seen_now == 0) { /* wrapped: stamps of old walks would match */
        memset(d->seen, 0, d->seen_cap * sizeof *d->seen);
        d->seen_now = 1;
    }
    return 0;
}

/* Every class in one block. */
static void part_begin(const lex_dfa_t *d, part_t *p)
{
    memset(p->lab, 0, d->ncls);
    p->n = 1;
}

/* Splits p's blocks by `by` (a label per class, nby labels): two classes
 * stay in one block where both labels are alike.  The new labels are the
 * pairs' in the order of their lowest class: by a table of the pairs where
 * it is small, else by a hash of at most 256 pairs in 512 slots. */
static void part_refine(const lex_dfa_t *d, part_t *p, const uint8_t *by, uint32_t nby)
{
    if (nby == 1)
        return;
    if (p->n == 1) {
        memcpy(p->lab, by, d->ncls);
        p->n = nby;
        return;
    }
    uint32_t n = 0;
    if (p->n * nby <= 1024) {
        int16_t pair[1024];
        memset(pair, 0xFF, p->n * nby * sizeof *pair);
        for (uint32_t c = 0; c < d->ncls; c++) {
            int16_t *v = &pair[p->lab[c] * nby + by[c]];
            if (*v < 0)
                *v = (int16_t)n++;
            p->lab[c] = (uint8_t)*v;
        }
        p->n = n;
        return;
    }
    uint32_t key[512];
    uint8_t val[512];
    memset(key, 0xFF, sizeof key);
    for (uint32_t c = 0; c < d->ncls; c++) {
        uint32_t k = (uint32_t)p->lab[c] << 8 | by[c];
        uint32_t h = (k * 0x9E3779B1u) >> 23;
        while (key[h] != UINT32_MAX && key[h] != k)
            h = (h + 1) & 511;
        if (key[h] == UINT32_MAX) {
            key[h] = k;
            val[h] = (uint8_t)n++;
        }
        p->lab[c] = val[h];
    }
    p->n = n;
}

/* Splits p's blocks by the classes byte set x (a BYTES term) holds. */
static void part_refine_set(const lex_dfa_t *d, part_t *p, lex_term_t x)
{
    const uint64_t *set = lex_node(&d->terms, x)->set;
    uint8_t by[256];
    uint32_t held = 0;
    for (uint32_t c = 0; c < d->ncls; c++) {
        uint8_t b = d->rep[c];
        by[c] = (uint8_t)((set[b >> 6] >> (b & 63)) & 1);
        held += by[c];
    }
    if (held && held < d->ncls) {
        if (by[0]) /* labels in the order of their lowest class */
            for (uint32_t c = 0; c < d->ncls; c++)
                by[c] ^= 1;
        part_refine(d, p, by, 2);
    }
}

/* The byte a set of one byte holds, or -1. */
static int one_byte(const uint64_t *set)
{
    int w = -1;
    for (int i = 0; i < 4; i++)
        if (set[i]) {
            if (w >= 0 || (set[i] & (set[i] - 1)))
                return -1;
            w = i;
        }
    return w < 0 ? -1 : w * 64 + __builtin_ctzll(set[w]);
}

/* Splits p's blocks so that each class marked in alone is a block of its
 * own: what refining by each one's byte set does. */
static void part_refine_alone(const lex_dfa_t *d, part_t *p, const uint8_t *alone)
{
    uint8_t by[256];
    uint32_t k = 0, others = UINT32_MAX; /* labels in the order of their lowest class */
    for (uint32_t c = 0; c < d->ncls; c++) {
        if (!alone[c] && others == UINT32_MAX)
            others = k++;
        by[c] = (uint8_t)(alone[c] ? k++ : others);
    }
    part_refine(d, p, by, k);
}

/* x's kept partition, or NULL: d->parts holds its number of blocks less
 * one, then its labels. */
static const uint8_t *part_kept(const lex_dfa_t *d, lex_term_t x)
{
    uint64_t at;
    return tb_u64map_get(&d->classes_of, classes_key(x, CLASSES_PART), &at)
               ? d->parts.data + at
               : NULL;
}

/* The partition of x (not an AND): a walk of its heads, taking a part's
 * kept partition instead of walking it; kept (as part_kept reads it).
 * NULL out of memory. */
static const uint8_t *term_part(lex_dfa_t *d, lex_term_t x)
{
    const uint8_t *kept = part_kept(d, x);
    if (kept)
        return kept;
    if (walk_begin(d))
        return NULL;
    part_t p;
    part_begin(d, &p);
    d->heads.len = 0;
    d->seen[x] = d->seen_now;
    if (tb_vec_push(&d->heads, x))
        return NULL;
    /* Heads of one byte (a union of names' literals has dozens) each set
     * their class apart: marked here, applied in one refinement after. */
    uint8_t alone[256];
    int any_alone = 0;
    memset(alone, 0, d->ncls);
    while (d->heads.len && p.n < d->ncls) {
        lex_term_t y = d->heads.data[--d->heads.len];
        const uint8_t *below = y != x ? part_kept(d, y) : NULL;
        if (below) {
            part_refine(d, &p, below + 1, below[0] + 1u);
            continue;
        }
        const lex_node_t *nd = lex_node(&d->terms, y);
        lex_term_t part[2] = {LEX_NOTHING, LEX_NOTHING};
        switch (nd->kind) {
        case LEX_K_BYTES: {
            int b = one_byte(nd->set);
            if (b < 0)
                part_refine_set(d, &p, y);
            else
                alone[d->cls[b]] = 1, any_alone = 1;
            break;
        }
        case LEX_K_CONCAT:
            part[0] = nd->a;
            part[1] = lex_node(&d->terms, nd->a)->nullable ? nd->b : LEX_NOTHING;
            break;
        case LEX_K_OR:
        case LEX_K_AND:
            part[0] = nd->a;
            part[1] = nd->b;
            break;
        case LEX_K_STAR:
        case LEX_K_REPEAT:
        case LEX_K_NOT:
            part[0] = nd->a;
            break;
        default: /* NOTHING, EPSILON: no byte read */
            break;
        }
        for (int i = 0; i < 2; i++) {
            lex_term_t z = part[i];
            if (z == LEX_NOTHING || d->seen[z] == d->seen_now)
                continue;
            d->seen[z] = d->seen_now;
            if (tb_vec_push(&d->heads, z))
                return NULL;
        }
    }
    if (any_alone && d->ncls > 1)
        part_refine_alone(d, &p, alone);
    size_t at = d->parts.len;
    if (tb_vec_push(&d->parts, (uint8_t)(p.n - 1)) || tb_vec_append(&d->parts, p.lab, d->ncls) ||
        tb_u64map_put(&d->classes_of, classes_key(x, CLASSES_PART), at) < 0) {
        d->parts.len = at;
        return NULL;
    }
    return d->parts.data + at;
}

/* Refines p by the heads of x: an AND's are its sides'; -1 out of memory. */
static int heads_split(lex_dfa_t *d, lex_term_t x, part_t *p)
{
    const lex_node_t *nd = lex_node(&d->terms, x);
    if (nd->kind == LEX_K_AND) {
        lex_term_t b = nd->b;
        return heads_split(d, nd->a, p) || heads_split(d, b, p);
    }
    if (p->n == d->ncls)
        return 0; /* nothing left to split */
    const uint8_t *tp = term_part(d, x);
    if (!tp)
        return -1;
    part_refine(d, p, tp + 1, tp[0] + 1u);
    return 0;
}

/*
 * Into out, the smallest class of each block of classes alike for x.
 * live() derives by those only: it meets the same terms in the same order
 * (a class left out derives what the smallest of its block, tried before
 * it, did), where a length bound beside a pattern tells apart a few blocks
 * of a lexer's hundred classes.  Kept per term; without memory, every
 * class.
 */
static void class_reps(lex_dfa_t *d, lex_term_t x, lex_classes_t *out)
{
    const lex_classes_t *kept = classes_get(d, x, CLASSES_REPS);
    if (kept) {
        *out = *kept;
        return;
    }
    part_t p;
    part_begin(d, &p);
    if (heads_split(d, x, &p)) {
        all_classes(d, out);
        return;
    }
    memset(out, 0, sizeof *out);
    for (uint32_t c = 0, next = 0; c < d->ncls; c++)
        if (p.lab[c] == next) { /* the lowest class of block `next` */
            out->w[c >> 6] |= 1ull << (c & 63);
            next++;
        }
    classes_put(d, x, CLASSES_REPS, out);
}

/*
 * The derivative of term x by byte class c (b is a byte of that class).
 * Where an intersection comes out empty it is made LEX_NOTHING (live()
 * decides), unless `raw`: live() itself searches the raw derivatives, which
 * have the same languages, so that no search runs inside another.
 */
static lex_term_t deriv(lex_dfa_t *d, lex_term_t x, uint32_t c, uint8_t b, int raw)
{
    lex_terms_t *t = &d->terms;
    const lex_node_t *n = lex_node(t, x);
    switch (n->kind) {
    case LEX_K_NOTHING:
    case LEX_K_EPSILON:
        return LEX_NOTHING;
    case LEX_K_BYTES:
        return (n->set[b >> 6] >> (b & 63)) & 1 ? LEX_EPSILON : LEX_NOTHING;
    case LEX_K_CONCAT: {
        /* A byte set then the rest (every link of a literal): the rest or
         * nothing, without the memo, where a union of many literal keys or
         * enum values would store one entry per literal and class. */
        const lex_node_t *h = lex_node(t, n->a);
        if (h->kind == LEX_K_BYTES)
            return (h->set[b >> 6] >> (b & 63)) & 1 ? n->b : LEX_NOTHING;
        break;
    }
    default:
        break;
    }
    raw = raw && n->has_and; /* without an AND or a NOT both are the same */
    if (!n->has_and && !may_begin(d, x, b))
        return LEX_NOTHING;
    uint64_t key = ((uint64_t)x << 10) | ((uint64_t)(raw ? MEMO_RAW : MEMO_DERIV) << 8) | c;
    lex_term_t r;
    if (memo_get(d, key, &r))
        return r;
    if (n->kind == LEX_K_CONCAT) {
        lex_term_t head = n->a, rest = n->b;
        int nullable = lex_node(t, head)->nullable;
        r = lex_concat(t, deriv(d, head, c, b, raw), rest);
        if (nullable)
            r = lex_or(t, r, deriv(d, rest, c, b, raw));
    } else if (n->kind == LEX_K_STAR) {
        lex_term_t body = n->a;
        r = lex_concat(t, deriv(d, body, c, b, raw), x);
    } else if (n->kind == LEX_K_AND) {
        lex_term_t left = n->a, right = n->b; /* n may move as terms are made */
        lex_term_t dl = deriv(d, left, c, b, raw);
        r = lex_and(t, dl, deriv(d, right, c, b, raw));
        if (!raw && lex_node(t, r)->kind == LEX_K_AND && !live(d, r))
            r = LEX_NOTHING;
    } else if (n->kind == LEX_K_NOT) {
        r = lex_not(t, deriv(d, n->a, c, b, raw));
        if (!raw && lex_node(t, r)->kind == LEX_K_NOT && !live(d, r))
            r = LEX_NOTHING;
    } else if (n->kind == LEX_K_REPEAT) {
        /* one iteration begun, the bounds one less (the body is not
         * nullable: lex_repeat made the minimum 0 if it were) */
        uint32_t mn = (uint32_t)n->set[0], mx = (uint32_t)n->set[1];
        lex_term_t body = n->a;
        r = lex_concat(t, deriv(d, body, c, b, raw),
                       lex_repeat(t, body, mn ? mn - 1 : 0, mx - 1));
    } else {
        /* A union chain: derive every alternative, then one normalizing
         * union (pairwise unions would re-sort the chain at every link).
         * The derivatives go on top of d->alts, where a union inside an
         * alternative puts its own and takes them off before returning. */
        size_t base = d->alts.len;
        for (lex_term_t cur = x;;) {
            const lex_node_t *y = lex_node(t, cur);
            lex_term_t alt = y->kind == LEX_K_OR ? y->a : cur;
            lex_term_t next = y->kind == LEX_K_OR ? y->b : LEX_NOTHING;
            int last = y->kind != LEX_K_OR;
            lex_term_t da = deriv(d, alt, c, b, raw);
            if (da != LEX_NOTHING && tb_vec_push(&d->alts, da)) {
                d->alts.len = base;
                t->full = 1;
                return LEX_NOTHING;
            }
            if (last)
                break;
            cur = next;
        }
        r = d->alts.len > base ? lex_or_n(t, d->alts.data + base, d->alts.len - base)
                               : LEX_NOTHING;
        d->alts.len = base;
    }
    if (!t->full)
        memo_put(d, key, r);
    return r;
}

/*
 * Whether term x (holding an AND) matches some string: a best-first search
 * of its raw derivatives for a nullable one, the next term searched being
 * the one whose path so far plus its shortest completion (term_lens' lower
 * bound) is least, the deeper one first among equals.  A term with no
 * string by its bounds is not searched.  Breadth first, a maxLength of 254
 * beside a pattern met as many terms at each depth as the pattern has
 * states, for every depth up to the completion; the bound leads straight
 * to it.  At most LIVE_MAX_TERMS terms (past that the DFA fails with a
 * message rather than guess).  What the search learns is kept in the memo:
 * every term on the path to a nullable one is live, every term of a search
 * that found none is dead, so the walk's next states, the derivatives of
 * this one, mostly find their answer there.
 */
#define LIVE_MAX_TERMS 200000

static uint64_t live_key(lex_term_t x)
{
    return ((uint64_t)x << 10) | ((uint64_t)MEMO_LIVE << 8);
}

/* live()'s queue: a binary heap, least key first; key = (path length +
 * shortest completion) << 32 | (LIVE_MAX_TERMS - path length). */
typedef struct {
    uint64_t key;
    lex_term_t x;
} live_item_t;

typedef TB_VEC(live_item_t) live_heap_t;

static int live_push(live_heap_t *h, uint64_t key, lex_term_t x)
{
    if (tb_vec_push(h, ((live_item_t){key, x})))
        return -1;
    live_item_t *a = h->data;
    for (size_t i = h->len - 1; i > 0 && a[(i - 1) / 2].key > a[i].key; i = (i - 1) / 2) {
        live_item_t tmp = a[i];
        a[i] = a[(i - 1) / 2];
        a[(i - 1) / 2] = tmp;
    }
    return 0;
}

static live_item_t live_pop(live_heap_t *h)
{
    live_item_t *a = h->data, top = a[0];
    a[0] = a[--h->len];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < h->len && a[l].key < a[m].key)
            m = l;
        if (l + 1 < h->len && a[l + 1].key < a[m].key)
            m = l + 1;
        if (m == i)
            break;
        live_item_t tmp = a[i];
        a[i] = a[m];
        a[m] = tmp;
        i = m;
    }
    return top;
}

/* live()'s key of a term met at path length g, or 0 where it has no string. */
static uint64_t live_rank(lex_dfa_t *d, lex_term_t z, uint32_t g)
{
    uint32_t lens[2];
    term_lens(d, z, lens);
    if (lens[0] == LEN_INF)
        return 0;
    return (uint64_t)len_add(g, lens[0]) << 32 | (LIVE_MAX_TERMS - g);
}

static int live(lex_dfa_t *d, lex_term_t x)
{
    lex_term_t r;
    if (memo_get(d, live_key(x), &r))
        return (int)r;
    if (bounded_live(d, x)) {
        memo_put(d, live_key(x), 1);
        return 1;
    }
    live_heap_t queue = {0};
    tb_u64map_t parent; /* every term seen -> the term it was derived from */
    lex_term_t hit = LEX_NOTHING;
    uint64_t rank = live_rank(d, x, 0);
    int over = tb_u64map_init(&parent, 64) != 0;
    if (!over && (tb_u64map_put(&parent, x, x) < 0 || (rank && live_push(&queue, rank, x))))
        over = 1;
    if (lex_node(&d->terms, x)->nullable)
        hit = x;
    while (hit == LEX_NOTHING && !over && queue.len) {
        live_item_t top = live_pop(&queue);
        lex_term_t y = top.x;
        uint32_t g = LIVE_MAX_TERMS - (uint32_t)top.key + 1; /* of y's derivatives */
        lex_classes_t reps;
        class_reps(d, y, &reps);
        for (uint32_t c = 0; c < d->ncls && !over && hit == LEX_NOTHING; c++) {
            uint64_t later = reps.w[c >> 6] >> (c & 63); /* c and the classes after it */
            if (!later) {
                c |= 63; /* none left in this word */
                continue;
            }
            c += (uint32_t)__builtin_ctzll(later);
            lex_term_t z = deriv(d, y, c, d->rep[c], 1);
            uint64_t v;
            if (z == LEX_NOTHING || tb_u64map_get(&parent, z, &v))
                continue;
            int known = memo_get(d, live_key(z), &r);
            if (known && !r)
                continue;
            over = parent.count >= LIVE_MAX_TERMS || d->terms.full ||
                   tb_u64map_put(&parent, z, y) < 0;
            if (over || known || lex_node(&d->terms, z)->nullable) {
                hit = over ? LEX_NOTHING : z;
                continue;
            }
            rank = live_rank(d, z, g);
            over = rank && live_push(&queue, rank, z);
        }
    }
    free(queue.data);
    if (over) {
        tb_u64map_free(&parent);
        char msg[160];
        snprintf(msg, sizeof msg, "deciding whether a look-ahead's intersection is empty "
                 "takes more than %d terms (the limit)", LIVE_MAX_TERMS);
        dfa_fail(d, msg);
        return 1;
    }
    if (hit != LEX_NOTHING) {
        for (lex_term_t y = hit;;) {
            uint64_t up = y;
            memo_put(d, live_key(y), 1);
            if (y == x || !tb_u64map_get(&parent, y, &up))
                break;
            y = (lex_term_t)up;
        }
    } else {
        for (size_t i = 0; i <= parent.mask; i++)
            if (parent.keys[i] != UINT64_MAX)
                memo_put(d, live_key((lex_term_t)parent.keys[i]), 0);
    }
    tb_u64map_free(&parent);
    return hit != LEX_NOTHING;
}

/* ---- states ---------------------------------------------------------------- */

static void dfa_fail(lex_dfa_t *d, const char *what)
{
    if (!d->failed)
        tb_fail(&d->err, "%s '%.300s': %s", d->lx ? "lexer" : "regex", d->pattern, what);
    d->failed = 1;
}

/* The hash of a lexer state's pair set. */
static uint64_t pairs_hash(const lex_pair_t *p, size_t n)
{
    uint64_t h = n;
    for (size_t i = 0; i < n; i++)
        h = memo_hash(h ^ (((uint64_t)p[i].lexeme << 32) | p[i].term)) + i;
    return h;
}

/* The key that by_term hashes state s by: its term, or its pair set. */
static uint64_t state_hash(const lex_dfa_t *d, size_t s)
{
    if (!d->lx)
        return memo_hash(d->term[s]);
    return pairs_hash(d->pair.data + d->pair_off[s], d->pair_n[s]);
}

static uint32_t by_term_find(const lex_dfa_t *d, lex_term_t x, size_t *slot)
{
    size_t m = d->by_cap - 1;
    size_t h = memo_hash(x) & m;
    for (; d->by_term[h] != UINT32_MAX; h = (h + 1) & m)
        if (d->term[d->by_term[h]] == x)
            return d->by_term[h];
    *slot = h;
    return UINT32_MAX;
}

static int by_term_grow(lex_dfa_t *d)
{
    size_t cap = d->by_cap ? d->by_cap * 2 : 256;
    uint32_t *tab = malloc(cap * sizeof *tab);
    if (!tab)
        return -1;
    memset(tab, 0xFF, cap * sizeof *tab);
    for (size_t s = 0; s < d->nstates; s++) {
        size_t h = state_hash(d, s) & (cap - 1);
        while (tab[h] != UINT32_MAX)
            h = (h + 1) & (cap - 1);
        tab[h] = (uint32_t)s;
    }
    free(d->by_term);
    d->by_term = tab;
    d->by_cap = cap;
    return 0;
}

static int grow_states(lex_dfa_t *d);

/* A new state of term x, accepting or not, entered into by_term at slot;
 * LEX_DEAD with the sticky error set if the state limit is reached. */
static uint32_t state_add(lex_dfa_t *d, lex_term_t x, int accept, size_t slot)
{
    if (d->nstates >= d->max_states) {
        char msg[128];
        snprintf(msg, sizeof msg, "the DFA needs more than %zu states (the limit)",
                 d->max_states);
        dfa_fail(d, msg);
        return LEX_DEAD;
    }
    if (d->nstates == d->cap && grow_states(d)) {
        dfa_fail(d, "out of memory");
        return LEX_DEAD;
    }
    uint32_t s = (uint32_t)d->nstates++;
    d->term[s] = x;
    d->accept[s] = (uint8_t)accept;
    d->allowed_ok[s] = 0;
    d->alias[(size_t)s * d->ncls] = 0xFF;
    for (size_t c = 0; c < d->ncls; c++)
        d->trans[(size_t)s * d->ncls + c] = s == LEX_DEAD ? LEX_DEAD : LEX_UNKNOWN;
    d->by_term[slot] = s;
    return s;
}

/* The state of term x, made if new; LEX_DEAD with the sticky error set if
 * the state limit is reached. */
static uint32_t state_of(lex_dfa_t *d, lex_term_t x)
{
    if (x == LEX_NOTHING && d->nstates > 0)
        return LEX_DEAD;
    size_t slot = 0;
    uint32_t s = by_term_find(d, x, &slot);
    if (s != UINT32_MAX)
        return s;
    s = state_add(d, x, lex_node(&d->terms, x)->nullable, slot);
    if (d->failed)
        return LEX_DEAD;
    if (d->nstates * 2 > d->by_cap && by_term_grow(d))
        dfa_fail(d, "out of memory");
    return s;
}

/*
 * The transition and alias tables grow by realloc while small, then move
 * once into address space for every state the DFA may make (tb_reserve),
 * where they grow in place: doubled by realloc, a lexer's tables of tens
 * of megabytes were copied, and their new pages faulted 4 KiB at a time,
 * within one mask (a string under a maxLength makes new states at every
 * position: Github_ultra---o62059's slowest masks faulted 1,000-2,000
 * pages each).
 */
#define TABLES_MAPPED_FROM (1u << 20) /* bytes of transitions */

static int grow_tables(lex_dfa_t *d, size_t cap)
{
    if (d->map_rows)
        return 0; /* room for every state already */
    size_t row = d->ncls * sizeof *d->trans;
    if (cap * row >= TABLES_MAPPED_FROM) {
        uint32_t *tr = tb_reserve(d->max_states * row);
        uint8_t *as = tr ? tb_reserve(d->max_states * d->ncls) : NULL;
        if (as) {
            memcpy(tr, d->trans, d->nstates * row);
            memcpy(as, d->alias, d->nstates * d->ncls);
            free(d->trans);
            free(d->alias);
            d->trans = tr;
            d->alias = as;
            d->map_rows = d->max_states;
            return 0;
        }
        tb_unreserve(tr, d->max_states * row); /* not mapped: realloc them */
    }
    uint32_t *tr = realloc(d->trans, cap * row);
    if (tr)
        d->trans = tr;
    uint8_t *as = realloc(d->alias, cap * d->ncls);
    if (as)
        d->alias = as;
    return !tr || !as ? -1 : 0;
}

/* Room for twice the states (and their pair lists in a lexer DFA). */
static int grow_states(lex_dfa_t *d)
{
    size_t cap = d->cap ? d->cap * 2 : 64;
    if (cap > d->max_states)
        cap = d->max_states; /* state_add refuses a state past it */
    if (grow_tables(d, cap))
        return -1;
    lex_term_t *te = realloc(d->term, cap * sizeof *te);
    if (te)
        d->term = te;
    uint8_t *ac = realloc(d->accept, cap);
    if (ac)
        d->accept = ac;
    uint64_t(*al)[4] = realloc(d->allowed, cap * sizeof *al);
    if (al)
        d->allowed = al;
    uint8_t *ok = realloc(d->allowed_ok, cap);
    if (ok)
        d->allowed_ok = ok;
    if (!te || !ac || !al || !ok)
        return -1;
    if (d->lx) {
        uint32_t *po = realloc(d->pair_off, cap * sizeof *po);
        if (po)
            d->pair_off = po;
        uint32_t *pn = realloc(d->pair_n, cap * sizeof *pn);
        if (pn)
            d->pair_n = pn;
        if (!po || !pn)
            return -1;
    }
    d->cap = cap;
    return 0;
}

/* ---- lexer states --------------------------------------------------------------- */

static uint32_t by_pairs_find(const lex_dfa_t *d, const lex_pair_t *p, size_t n,
                              size_t *slot)
{
    size_t m = d->by_cap - 1;
    size_t h = pairs_hash(p, n) & m;
    for (; d->by_term[h] != UINT32_MAX; h = (h + 1) & m) {
        uint32_t s = d->by_term[h];
        if (d->pair_n[s] == n && (!n || !memcmp(d->pair.data + d->pair_off[s], p, n * sizeof *p)))
            return s;
    }
    *slot = h;
    return UINT32_MAX;
}

/* The state of the sorted pair set p[0..n), made if new (state 0, the dead
 * one, is the empty set); LEX_DEAD with the sticky error set on failure. */
static uint32_t state_of_pairs(lex_dfa_t *d, const lex_pair_t *p, size_t n)
{
    if (n == 0 && d->nstates > 0)
        return LEX_DEAD;
    size_t slot = 0;
    uint32_t s = by_pairs_find(d, p, n, &slot);
    if (s != UINT32_MAX)
        return s;
    if (d->pair.len + n > d->max_pairs) {
        char msg[128];
        snprintf(msg, sizeof msg, "the lexer states need more than %zu (lexeme, term) "
                 "pairs (the limit)", d->max_pairs);
        dfa_fail(d, msg);
        return LEX_DEAD;
    }
    /* At least one, so that even the dead state's pointer is not null. */
    if (tb_vec_reserve(&d->pair, n ? n : 1)) {
        dfa_fail(d, "out of memory");
        return LEX_DEAD;
    }
    int accept = 0;
    for (size_t i = 0; i < n; i++)
        accept |= lex_node(&d->terms, p[i].term)->nullable &&
                  ((d->lx->end[p[i].lexeme >> 6] >> (p[i].lexeme & 63)) & 1);
    s = state_add(d, LEX_NOTHING, accept, slot); /* the pairs are the state */
    if (d->failed)
        return LEX_DEAD;
    d->pair_off[s] = (uint32_t)d->pair.len;
    d->pair_n[s] = (uint32_t)n;
    if (n)
        memcpy(d->pair.data + d->pair.len, p, n * sizeof *p);
    d->pair.len += n;
    if (d->nstates * 2 > d->by_cap && by_term_grow(d))
        dfa_fail(d, "out of memory");
    return s;
}

/* Adds term x to lexeme i's next term. */
static void acc_add(lex_dfa_t *d, size_t *nt, uint32_t i, lex_term_t x)
{
    lex_lexemes_t *lx = d->lx;
    if (x == LEX_NOTHING)
        return;
    if (lx->acc[i] == LEX_NOTHING) {
        lx->touched[i >> 6] |= 1ull << (i & 63);
        (*nt)++;
        lx->acc[i] = x;
    } else
        lx->acc[i] = lex_or(&d->terms, lx->acc[i], x);
}

/* The pair set after reading a byte of class c from state s: each lexeme
 * reads on, and each one that may end here also hands over to the lexemes
 * that may follow it (both are kept: ending and going on). */
static size_t lexer_next_pairs(lex_dfa_t *d, uint32_t s, uint32_t c)
{
    lex_lexemes_t *lx = d->lx;
    uint8_t b = d->rep[c];
    size_t nt = 0;
    for (uint32_t k = 0; k < d->pair_n[s]; k++) {
        lex_pair_t p = d->pair.data[d->pair_off[s] + k];
        acc_add(d, &nt, p.lexeme, deriv(d, p.term, c, b, 0));
        if (!lex_node(&d->terms, p.term)->nullable)
            continue;
        const uint64_t *row = lx->follow + (size_t)p.lexeme * lx->words;
        for (size_t w = 0; w < lx->words; w++)
            for (uint64_t bits = row[w]; bits; bits &= bits - 1) {
                uint32_t j = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(bits));
                acc_add(d, &nt, j, deriv(d, lx->root[j], c, b, 0));
            }
    }
    /* in lexeme order, by the touched set's bits (a sort of the lexemes
     * by qsort was a tenth of a cold mask at a key position of a big
     * schema) */
    size_t k = 0;
    for (size_t w = 0; w < lx->words && k < nt; w++) {
        for (uint64_t bits = lx->touched[w]; bits; bits &= bits - 1) {
            uint32_t i = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(bits));
            lx->next[k++] = (lex_pair_t){.lexeme = i, .term = lx->acc[i]};
            lx->acc[i] = LEX_NOTHING;
        }
        lx->touched[w] = 0;
    }
    return nt;
}

/*
 * Row s of alias (deriv.h), made on the first step from s: the blocks of
 * classes that the heads of s's terms (and, after a pair that may end, of
 * the lexemes that may follow it) cannot tell apart lead to one state, so
 * a step computes one class of a block and fills the others' entries,
 * which the walks of a cold mask then find in the table.  NULL without
 * memory (each class computed alone).
 */
static const uint8_t *alias_row(lex_dfa_t *d, uint32_t s)
{
    uint8_t *row = d->alias + (size_t)s * d->ncls;
    if (row[0] != 0xFF)
        return row;
    part_t p;
    part_begin(d, &p);
    int oom = !d->lx && heads_split(d, d->term[s], &p);
    for (uint32_t i = 0; !oom && d->lx && i < d->pair_n[s]; i++) {
        lex_pair_t pr = d->pair.data[d->pair_off[s] + i];
        oom = heads_split(d, pr.term, &p);
        if (oom || !lex_node(&d->terms, pr.term)->nullable)
            continue;
        const uint64_t *follow = d->lx->follow + (size_t)pr.lexeme * d->lx->words;
        for (size_t w = 0; w < d->lx->words && !oom; w++)
            for (uint64_t bits = follow[w]; bits && !oom; bits &= bits - 1)
                oom = heads_split(d, d->lx->root[w * 64 + (size_t)__builtin_ctzll(bits)], &p);
    }
    if (oom)
        return NULL;
    uint8_t low[256]; /* block -> its lowest class */
    for (uint32_t c = 0, next = 0; c < d->ncls; c++) {
        if (p.lab[c] == next)
            low[next++] = (uint8_t)c;
        row[c] = low[p.lab[c]];
    }
    return row;
}

/* The state after class c from s, by the derivatives of its terms. */
static uint32_t next_state(lex_dfa_t *d, uint32_t s, uint32_t c)
{
    uint32_t ns;
    if (d->lx) {
        size_t n = lexer_next_pairs(d, s, c);
        if (d->terms.full) {
            dfa_fail(d, "the derivatives need more terms than the limit");
            return LEX_DEAD;
        }
        ns = state_of_pairs(d, d->lx->next, n);
    } else {
        lex_term_t x = deriv(d, d->term[s], c, d->rep[c], 0);
        if (d->terms.full) {
            dfa_fail(d, "the derivatives need more terms than the limit");
            return LEX_DEAD;
        }
        ns = state_of(d, x);
    }
    return d->failed ? LEX_DEAD : ns;
}

uint32_t lex_dfa_step_slow(lex_dfa_t *d, uint32_t s, uint32_t c)
{
    if (d->failed)
        return LEX_DEAD;
    const uint8_t *row = alias_row(d, s);
    uint32_t r = row ? row[c] : c;
    uint32_t ns = next_state(d, s, r);
    if (d->failed)
        return LEX_DEAD;
    /* Making states may have moved the rows. */
    row = row ? d->alias + (size_t)s * d->ncls : NULL;
    uint32_t *tr = d->trans + (size_t)s * d->ncls;
    for (uint32_t k = r; k < d->ncls; k++)
        if (row ? row[k] == r : k == r)
            tr[k] = ns * d->ncls;
    return ns;
}

uint32_t lex_dfa_feed(lex_dfa_t *d, uint32_t from, const uint8_t *s, size_t n)
{
    uint32_t st = from;
    for (size_t i = 0; i < n && st != LEX_DEAD; i++)
        st = lex_dfa_next(d, st, s[i]);
    return st;
}

const uint64_t *lex_dfa_allowed(lex_dfa_t *d, uint32_t s)
{
    if (!d->allowed_ok[s]) {
        uint64_t set[4] = {0};
        for (unsigned b = 0; b < 256; b++)
            if (lex_dfa_next(d, s, (uint8_t)b) != LEX_DEAD)
                set[b >> 6] |= 1ull << (b & 63);
        /* Computing the row may have grown (moved) the arrays. */
        memcpy(d->allowed[s], set, sizeof set);
        d->allowed_ok[s] = !d->failed;
    }
    return d->allowed[s];
}

int lex_dfa_error(const lex_dfa_t *d, tb_err_t *err)
{
    if (!d->failed)
        return 0;
    if (err)
        *err = d->err;
    return -1;
}

/* ---- setup ------------------------------------------------------------------- */

/* Splits the bytes into classes no byte set of the pattern tells apart.
 * Every later term's byte sets are unions of the pattern's (derivatives
 * only take parts of terms, and unions merge sets), so the classes stay
 * valid for every state. */
static void byte_classes(lex_dfa_t *d)
{
    /* Refined 64 bits at a time: each byte set splits every class it cuts
     * in two (a byte at a time, each set cost some 2,000 instructions, a
     * tenth of a typical schema's set-up).  ncls <= 256: a class is never
     * empty. */
    uint64_t part[256][4] = {{~0ull, ~0ull, ~0ull, ~0ull}};
    uint32_t n = 1;
    for (size_t i = 0; i < d->terms.n; i++) {
        const lex_node_t *x = &d->terms.node[i];
        if (x->kind != LEX_K_BYTES)
            continue;
        for (uint32_t c = 0, m = n; c < m; c++) {
            uint64_t in[4], out[4], any_in = 0, any_out = 0;
            for (int w = 0; w < 4; w++) {
                in[w] = part[c][w] & x->set[w];
                out[w] = part[c][w] & ~x->set[w];
                any_in |= in[w];
                any_out |= out[w];
            }
            if (any_in && any_out) {
                memcpy(part[c], out, sizeof out);
                memcpy(part[n++], in, sizeof in);
            }
        }
    }
    /* Numbered by their smallest bytes, in order (alias_row's "smallest
     * class" and the tables' layout rely on a fixed numbering). */
    uint16_t id[256]; /* old number -> new, 0xFFFF until seen */
    memset(id, 0xFF, sizeof id);
    for (uint32_t c = 0; c < n; c++)
        for (int w = 0; w < 4; w++)
            for (uint64_t bits = part[c][w]; bits; bits &= bits - 1)
                d->cls[w * 64 + __builtin_ctzll(bits)] = (uint8_t)c;
    uint32_t next = 0;
    for (unsigned b = 0; b < 256; b++) {
        uint8_t c = d->cls[b];
        if (id[c] == 0xFFFF)
            id[c] = (uint16_t)next++;
        d->cls[b] = (uint8_t)id[c];
    }
    d->ncls = n;
    for (int b = 255; b >= 0; b--)
        d->rep[d->cls[b]] = (uint8_t)b;
}

/* Byte classes, the derivative cache and the state map, once the terms of
 * every pattern are in the store. */
static int dfa_tables(lex_dfa_t *d, tb_err_t *err)
{
    byte_classes(d);
    /* Table entries are row offsets (state * ncls), which must fit. */
    if (d->max_states > (UINT32_MAX - 1) / d->ncls)
        d->max_states = (UINT32_MAX - 1) / d->ncls;
    d->memo_cap = 1024;
    d->memo_key = malloc(d->memo_cap * sizeof *d->memo_key);
    d->memo_val = malloc(d->memo_cap * sizeof *d->memo_val);
    if (!d->memo_key || !d->memo_val || by_term_grow(d))
        return tb_fail(err, "out of memory");
    memset(d->memo_key, 0xFF, d->memo_cap * sizeof *d->memo_key);
    if (tb_u64map_init(&d->classes_of, 64))
        return tb_fail(err, "out of memory");
    return 0;
}

/* x, or LEX_NOTHING where an intersection in it leaves it empty. */
static lex_term_t live_or_nothing(lex_dfa_t *d, lex_term_t x)
{
    return lex_node(&d->terms, x)->has_and && !live(d, x) ? LEX_NOTHING : x;
}

/* State 1 for an empty language: the start is dead too, but it needs its
 * own number; a fresh dead row does it (state 0 exists, so there is room). */
static void dead_start(lex_dfa_t *d)
{
    if (d->failed || (d->nstates == d->cap && grow_states(d))) {
        dfa_fail(d, "out of memory");
        return;
    }
    d->nstates++;
    d->term[1] = LEX_NOTHING;
    d->accept[1] = 0;
    d->allowed_ok[1] = 0;
    d->alias[d->ncls] = 0xFF;
    if (d->lx) {
        d->pair_off[1] = (uint32_t)d->pair.len;
        d->pair_n[1] = 0;
    }
    for (size_t c = 0; c < d->ncls; c++)
        d->trans[d->ncls + c] = LEX_DEAD;
}

/* The tables and the first states of a DFA whose terms and root are set:
 * state 0 must be the dead state and 1 the start, whatever the root.
 * Frees d on failure. */
static lex_dfa_t *dfa_start(lex_dfa_t *d, tb_err_t *err)
{
    if (dfa_tables(d, err)) {
        lex_dfa_free(d);
        return NULL;
    }
    d->root = live_or_nothing(d, d->root);
    state_of(d, LEX_NOTHING);
    if (d->root == LEX_NOTHING)
        dead_start(d);
    else
        state_of(d, d->root);
    if (lex_dfa_error(d, err)) {
        lex_dfa_free(d);
        return NULL;
    }
    return d;
}

/* A DFA with its limits and label set, terms and root not yet. */
static lex_dfa_t *dfa_alloc(const char *label, const lex_dfa_opts_t *opts, tb_err_t *err)
{
    lex_dfa_t *d = calloc(1, sizeof *d);
    if (d && !(d->pattern = strdup(label))) {
        free(d);
        d = NULL;
    }
    if (!d) {
        tb_fail(err, "out of memory");
        return NULL;
    }
    d->max_states = opts && opts->max_states ? opts->max_states : LEX_DEFAULT_MAX_STATES;
    if (d->max_states < 2)
        d->max_states = 2;
    return d;
}

lex_dfa_t *lex_dfa_new(const char *pattern, const lex_dfa_opts_t *opts, tb_err_t *err)
{
    size_t max_terms = opts && opts->max_terms ? opts->max_terms : LEX_DEFAULT_MAX_TERMS;
    lex_dfa_t *d = dfa_alloc(pattern, opts, err);
    if (!d)
        return NULL;
    if (lex_terms_init(&d->terms, max_terms, err)) {
        free(d->pattern);
        free(d);
        return NULL;
    }
    d->terms.lookahead = opts && opts->lookahead;
    if (lex_regex_parse(&d->terms, pattern, strlen(pattern), &d->root, err)) {
        lex_dfa_free(d);
        return NULL;
    }
    return dfa_start(d, err);
}

lex_dfa_t *lex_dfa_new_term(lex_terms_t *terms, lex_term_t root, const char *label,
                            const lex_dfa_opts_t *opts, tb_err_t *err)
{
    lex_dfa_t *d = dfa_alloc(label, opts, err);
    if (!d) {
        lex_terms_free(terms);
        return NULL;
    }
    d->terms = *terms;
    d->root = root;
    return dfa_start(d, err);
}

/* Marks lexemes that cannot lead to the end of a text (empty, or no
 * follower leads there) and removes them from start, end and follow. */
static void prune_lexemes(lex_lexemes_t *lx)
{
    size_t w = lx->words;
    uint64_t *useful = calloc(w, sizeof *useful);
    if (!useful)
        return; /* then nothing is pruned: masks stay right, only liveness is loose */
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < lx->n; i++) {
            if ((useful[i >> 6] >> (i & 63)) & 1 || lx->root[i] == LEX_NOTHING)
                continue;
            int u = (lx->end[i >> 6] >> (i & 63)) & 1;
            for (size_t k = 0; k < w && !u; k++)
                u = (lx->follow[i * w + k] & useful[k]) != 0;
            if (u) {
                useful[i >> 6] |= 1ull << (i & 63);
                changed = 1;
            }
        }
    }
    for (size_t k = 0; k < w; k++) {
        lx->start[k] &= useful[k];
        lx->end[k] &= useful[k];
        for (size_t i = 0; i < lx->n; i++)
            lx->follow[i * w + k] &= useful[k];
    }
    free(useful);
}

lex_dfa_t *lex_dfa_new_lexer(lex_terms_t *terms, lex_lexemes_t *lx, const char *label,
                             const lex_dfa_opts_t *opts, tb_err_t *err)
{
    lex_dfa_t *d = dfa_alloc(label, opts, err);
    if (!d) {
        lex_terms_free(terms);
        lex_lexemes_free(lx);
        return NULL;
    }
    d->terms = *terms;
    d->lx = lx;
    d->max_pairs = LEX_PAIRS_PER_TERM * d->terms.max_nodes;
    if (d->max_pairs > UINT32_MAX) /* pair_off entries are 32 bits */
        d->max_pairs = UINT32_MAX;
    if (dfa_tables(d, err)) {
        lex_dfa_free(d);
        return NULL;
    }
    for (size_t i = 0; i < lx->n; i++)
        lx->root[i] = live_or_nothing(d, lx->root[i]);
    for (size_t i = 0; i < lx->n; i++)
        if (lex_node(&d->terms, lx->root[i])->nullable) {
            tb_fail(err, "lexer '%s': lexeme '%s' matches the empty string", label,
                    lx->name[i]);
            lex_dfa_free(d);
            return NULL;
        }
    lx->acc = malloc((lx->n + 1) * sizeof *lx->acc);
    lx->touched = calloc(lx->words ? lx->words : 1, sizeof *lx->touched);
    lx->next = malloc((lx->n + 1) * sizeof *lx->next);
    if (!lx->acc || !lx->touched || !lx->next) {
        tb_fail(err, "out of memory");
        lex_dfa_free(d);
        return NULL;
    }
    for (size_t i = 0; i <= lx->n; i++)
        lx->acc[i] = LEX_NOTHING;
    prune_lexemes(lx);
    state_of_pairs(d, NULL, 0);
    size_t n = 0;
    for (uint32_t i = 0; i < lx->n; i++)
        if ((lx->start[i >> 6] >> (i & 63)) & 1)
            lx->next[n++] = (lex_pair_t){.lexeme = i, .term = lx->root[i]};
    if (n == 0)
        dead_start(d);
    else
        state_of_pairs(d, lx->next, n);
    if (lex_dfa_error(d, err)) {
        lex_dfa_free(d);
        return NULL;
    }
    return d;
}

uint32_t lex_dfa_start_of(lex_dfa_t *d, const uint64_t *set)
{
    lex_lexemes_t *lx = d->lx;
    if (!lx)
        return set[0] & 1 ? LEX_START : LEX_DEAD;
    size_t n = 0;
    for (uint32_t i = 0; i < lx->n; i++)
        if ((set[i >> 6] >> (i & 63)) & 1 && lx->root[i] != LEX_NOTHING)
            lx->next[n++] = (lex_pair_t){.lexeme = i, .term = lx->root[i]};
    return state_of_pairs(d, lx->next, n);
}

/* 1 if term x matches finitely many strings (no star in it), 0 if it may
 * not: a term nested deeper than FINITE_DEPTH counts as open, which only
 * costs a verdict that could have been shared.  Kept per term (finite[x]:
 * 0 unknown, 1 finite, 2 open); every term is in the caches' room. */
#define FINITE_DEPTH 256
static int finite_term(lex_dfa_t *d, lex_term_t x, int depth)
{
    if (d->finite[x])
        return d->finite[x] == 1;
    const lex_node_t *n = lex_node(&d->terms, x);
    int fin;
    switch (n->kind) {
    case LEX_K_NOTHING:
    case LEX_K_EPSILON:
    case LEX_K_BYTES:
        fin = 1;
        break;
    case LEX_K_CONCAT:
    case LEX_K_OR:
    case LEX_K_AND:
        fin = depth < FINITE_DEPTH && finite_term(d, n->a, depth + 1) &&
              finite_term(d, n->b, depth + 1);
        break;
    case LEX_K_REPEAT:
        fin = depth < FINITE_DEPTH && finite_term(d, n->a, depth + 1);
        break;
    default:
        fin = 0;
    }
    d->finite[x] = fin ? 1 : 2;
    return fin;
}

uint32_t lex_dfa_open_part(lex_dfa_t *d, uint32_t s)
{
    if (!d->lx)
        return s;
    if (first_room(d)) {
        dfa_fail(d, "out of memory");
        return LEX_DEAD;
    }
    size_t n = 0;
    for (uint32_t k = 0; k < d->pair_n[s]; k++) {
        lex_pair_t p = d->pair.data[d->pair_off[s] + k];
        if (!finite_term(d, p.term, 0))
            d->lx->next[n++] = p;
    }
    if (n == d->pair_n[s])
        return s;
    return n ? state_of_pairs(d, d->lx->next, n) : LEX_DEAD;
}

/* ---- lifted states (masks only) ------------------------------------------- */

static uint32_t len_max(uint32_t a, uint32_t b)
{
    return a > b ? a : b;
}

/*
 * An upper bound, in bytes, of the shortest completion of every state
 * reachable from x (x itself and each derivative of it that is not empty):
 * from the parts' own bounds and shortest lengths, without exploring
 * states.  A CONCAT x.y's states are x's followed by y, or y's; a
 * repetition's are a part of one copy followed by the copies still owed,
 * or whole copies.  LEN_INF for a term with an AND or a NOT (whose
 * emptiness needs a search) or nested deeper than FINITE_DEPTH (as
 * finite_term).  Kept per term in msc[x].
 */
static uint32_t term_msc(lex_dfa_t *d, lex_term_t x, int depth)
{
    if (first_room(d))
        return LEN_INF;
    if (d->msc[x] != UINT32_MAX)
        return d->msc[x];
    lex_node_t n = *lex_node(&d->terms, x);
    uint32_t m = 0, lens[2];
    if (n.has_and || depth >= FINITE_DEPTH) {
        m = LEN_INF;
    } else if (n.kind == LEX_K_BYTES) {
        m = 1;
    } else if (n.kind == LEX_K_CONCAT) {
        term_lens(d, n.b, lens);
        m = len_max(len_add(term_msc(d, n.a, depth + 1), lens[0]),
                    term_msc(d, n.b, depth + 1));
    } else if (n.kind == LEX_K_OR) {
        m = len_max(term_msc(d, n.a, depth + 1), term_msc(d, n.b, depth + 1));
    } else if (n.kind == LEX_K_STAR) {
        m = term_msc(d, n.a, depth + 1);
    } else if (n.kind == LEX_K_REPEAT) {
        uint32_t lo = (uint32_t)n.set[0];
        term_lens(d, n.a, lens);
        m = len_max(len_add(term_msc(d, n.a, depth + 1), len_mul(lens[0], lo ? lo - 1 : 0)),
                    len_mul(lens[0], lo));
    } /* NOTHING, EPSILON: 0 */
    if (!first_room(d))
        d->msc[x] = m;
    return m;
}

uint32_t lex_dfa_msc(lex_dfa_t *d, lex_term_t x)
{
    return term_msc(d, x, 0);
}

/* Whether x is the one byte '"'. */
static int is_quote(const lex_terms_t *t, lex_term_t x)
{
    const lex_node_t *n = lex_node(t, x);
    return n->kind == LEX_K_BYTES && n->set[0] == 1ull << '"' && !n->set[1] && !n->set[2] &&
           !n->set[3];
}

/* r if b is c{0,r}" after the rest of a c (a concatenation chain ending
 * in a repetition of c from 0, then the quote): a JSON string's length
 * bound with its minimum met and r characters left; 0 if b has another
 * shape.  c is every character of a JSON string (chr, or a union that
 * holds it), so that the strings of the other side, which are made of
 * them, fall under b but for their number of characters. */
static uint32_t chars_left(lex_terms_t *t, lex_term_t b, lex_term_t chr)
{
    for (lex_term_t x = b; lex_node(t, x)->kind == LEX_K_CONCAT; x = lex_node(t, x)->b) {
        lex_node_t rep = *lex_node(t, lex_node(t, x)->a);
        if (rep.kind != LEX_K_REPEAT || !is_quote(t, lex_node(t, x)->b))
            continue;
        int any = rep.a == chr || lex_or(t, rep.a, chr) == rep.a;
        return !rep.set[0] && any && chr != LEX_NOTHING ? (uint32_t)rep.set[1] : 0;
    }
    return 0;
}

/* Where bound is a JSON string's length bound with its minimum met and r
 * characters left (chars_left) and other's strings are JSON string
 * characters then the quote: r less other's shortest completion bound
 * (term_msc), the bytes of text other alone answers as the intersection
 * does; INT64_MIN where bound is no such bound or msc is not known. */
static int64_t room_beside(lex_dfa_t *d, lex_term_t bound, lex_term_t other)
{
    uint32_t r = chars_left(&d->terms, bound, d->string_char);
    uint32_t msc = r ? term_msc(d, other, 0) : LEN_INF;
    return msc < LEN_INF ? (int64_t)r - msc : INT64_MIN;
}

/*
 * Whether x, an AND, is live by a length bound alone, without live()'s
 * search: one side a JSON string's c{0,r}" (chars_left) and the other,
 * whose strings are JSON string characters then the quote (d->string_char
 * set), with a completion of at most r + 1 bytes (term_msc): at most r
 * characters then the quote, which the bound accepts.  The rest of a
 * character begun is on both sides alike.  0 where it cannot tell (the
 * search then decides); half of a cold mask's time went to the search on
 * a pattern's words counted under a maxLength (MaskBench's
 * Github_ultra---o62059).
 */
static int bounded_live(lex_dfa_t *d, lex_term_t x)
{
    if (d->string_char == LEX_NOTHING || lex_node(&d->terms, x)->kind != LEX_K_AND)
        return 0;
    lex_term_t side[2] = {lex_node(&d->terms, x)->a, lex_node(&d->terms, x)->b};
    for (int i = 0; i < 2; i++)
        if (side[!i] != LEX_NOTHING && room_beside(d, side[i], side[!i]) >= -1)
            return 1;
    return 0;
}

/* What lifting a state needs (lex_dfa_lifted): a lift must answer texts
 * of at least `floor` bytes alike; `exact` is the most bytes every lift
 * made so far answers alike (at most the longest text asked about). */
typedef struct {
    uint32_t floor, exact;
} lift_t;

/* Whether a lift that answers texts of at most `room` bytes alike may be
 * made; if so, exact notes it. */
static int lift_room(lift_t *l, uint64_t room)
{
    if (room < l->floor)
        return 0;
    if (room < l->exact)
        l->exact = (uint32_t)room;
    return 1;
}

/* The side of AND x that decides the bytes of texts short enough alone
 * (see lex_dfa_lifted), or x. */
static lex_term_t uncapped_side(lex_dfa_t *d, lex_term_t x, lift_t *l)
{
    const lex_node_t *n = lex_node(&d->terms, x);
    if (n->kind != LEX_K_AND)
        return x;
    lex_term_t side[2] = {n->a, n->b};
    for (int i = 0; i < 2; i++) {
        int64_t room = room_beside(d, side[i], side[!i]);
        if (room >= 0 && lift_room(l, (uint64_t)room))
            return side[!i];
    }
    return x;
}

/* Where repetition r (its node) has a count that a text short enough may
 * not reach, the shortest length of an iteration, else 0: at least two
 * more iterations allowed than required, each of a bounded, non-zero
 * shortest length. */
static uint32_t lift_step(lex_dfa_t *d, lex_node_t r)
{
    uint32_t lens[2];
    term_lens(d, r.a, lens);
    return r.set[1] - r.set[0] >= 2 && lens[0] != LEN_INF ? lens[0] : 0;
}

/* Whether x holds such a count that uncounted reaches (through unions and
 * concatenations, with no AND or NOT above it); x and its parts in the
 * caches' room (first_room).  Kept per term
 * (liftable[x]: 0 unknown, 1 yes, 2 no), so that a term without one, a
 * key position's union of names, is passed over at once: walked whole on
 * every mask's lift, those took half of some masks' instructions. */
static int liftable_term(lex_dfa_t *d, lex_term_t x, int depth)
{
    if (d->liftable[x])
        return d->liftable[x] == 1;
    lex_node_t n = *lex_node(&d->terms, x);
    int yes = 0;
    if (n.has_and || depth >= FINITE_DEPTH)
        yes = 0;
    else if (n.kind == LEX_K_REPEAT)
        yes = lift_step(d, n) != 0;
    else if (n.kind == LEX_K_OR || n.kind == LEX_K_CONCAT)
        yes = liftable_term(d, n.a, depth + 1) || liftable_term(d, n.b, depth + 1);
    d->liftable[x] = yes ? 1 : 2;
    return yes;
}

/* x{lo,hi} as x{lo} x* where no text short enough reaches the count (see
 * lex_dfa_lifted), else x{lo,hi} itself; r is the repetition's node. */
static lex_term_t uncounted_repeat(lex_dfa_t *d, lex_term_t x, lex_node_t r, lift_t *l)
{
    lex_terms_t *t = &d->terms;
    uint32_t lo = (uint32_t)r.set[0], hi = (uint32_t)r.set[1], step = lift_step(d, r);
    if (!step || !lift_room(l, (uint64_t)(hi - lo - 1) * step))
        return x;
    lex_term_t star = lex_star(t, r.a);
    lex_term_t lifted = lo ? lex_concat(t, lex_repeat(t, r.a, lo, lo), star) : star;
    return t->full ? x : lifted;
}

/*
 * x with every count uncounted_repeat lifts so lifted, through x's unions
 * and concatenations: a text short enough reads no more of a count deeper
 * in a concatenation than at its head, and each side of a union answers
 * for itself.  Not under an AND or a NOT, where a larger language is not
 * one that answers alike (their other side or complement may need its
 * completions).  Inside a pattern's word the count of words is past the
 * word's rest (Github_ultra---o62059's `(?:\S+\s+){0,49}\S+`, read as
 * \S* \s+ (\S+\s+){0,k} \S+ | \S*), so a head-only lift left every
 * position of such a string a state of its own.
 */
static lex_term_t uncounted(lex_dfa_t *d, lex_term_t x, lift_t *l, int depth)
{
    lex_terms_t *t = &d->terms;
    if (!liftable_term(d, x, depth))
        return x;
    lex_node_t n = *lex_node(t, x);
    if (n.kind == LEX_K_REPEAT)
        return uncounted_repeat(d, x, n, l);
    /* a union or a concatenation (liftable_term's other yes) */
    lex_term_t a = uncounted(d, n.a, l, depth + 1), b = uncounted(d, n.b, l, depth + 1);
    if (a == n.a && b == n.b)
        return x;
    lex_term_t r = n.kind == LEX_K_OR ? lex_or(t, a, b) : lex_concat(t, a, b);
    return t->full ? x : r;
}

/* The state of s's pairs with each term x made map(d, x, ctx), made if
 * new; s itself where no term changed.  The mask-only states (lifted,
 * relaxed) are made so. */
static uint32_t mapped_state(lex_dfa_t *d, uint32_t s,
                             lex_term_t (*map)(lex_dfa_t *, lex_term_t, void *), void *ctx)
{
    int changed = 0;
    for (uint32_t k = 0; k < d->pair_n[s]; k++) {
        lex_pair_t p = d->pair.data[d->pair_off[s] + k];
        lex_term_t to = map(d, p.term, ctx);
        changed |= to != p.term;
        d->lx->next[k] = (lex_pair_t){.lexeme = p.lexeme, .term = to};
    }
    return changed ? state_of_pairs(d, d->lx->next, d->pair_n[s]) : s;
}

static lex_term_t lifted_term(lex_dfa_t *d, lex_term_t x, void *lift)
{
    lex_term_t side = uncapped_side(d, x, lift);
    return first_room(d) ? side : uncounted(d, side, lift, 0);
}

uint32_t lex_dfa_lifted(lex_dfa_t *d, uint32_t s, uint32_t longest, uint32_t floor,
                        uint32_t *exact)
{
    *exact = longest;
    if (!d->lx || s == LEX_DEAD)
        return s;
    lift_t l = {floor < longest ? floor : longest, longest};
    uint32_t lifted = mapped_state(d, s, lifted_term, &l);
    if (lifted != s)
        *exact = l.exact;
    return lifted;
}

/* ---- relaxed states (the slicer only) -------------------------------------- */

/* x less its intersections with complements of finite languages, through
 * its top unions and intersections: AND(y, NOT(f)) with f finite becomes
 * y.  Each such f taken out is finite, so what x matches and the result
 * does not is finite too.  Deeper than FINITE_DEPTH, x as it is. */
static lex_term_t relax(lex_dfa_t *d, lex_term_t x, int depth)
{
    lex_terms_t *t = &d->terms;
    lex_node_t n = *lex_node(t, x);
    if (!n.has_and || depth >= FINITE_DEPTH ||
        (n.kind != LEX_K_AND && n.kind != LEX_K_OR))
        return x;
    lex_term_t side[2] = {n.a, n.b};
    for (int i = 0; n.kind == LEX_K_AND && i < 2; i++) {
        const lex_node_t *m = lex_node(t, side[i]);
        if (m->kind == LEX_K_NOT && finite_term(d, m->a, 0))
            return relax(d, side[!i], depth + 1);
    }
    lex_term_t a = relax(d, n.a, depth + 1), b = relax(d, n.b, depth + 1);
    if (a == n.a && b == n.b)
        return x;
    lex_term_t r = n.kind == LEX_K_AND ? lex_and(t, a, b) : lex_or(t, a, b);
    return t->full ? x : r;
}

static lex_term_t relaxed_term(lex_dfa_t *d, lex_term_t x, void *unused)
{
    (void)unused;
    return relax(d, x, 0);
}

uint32_t lex_dfa_relaxed(lex_dfa_t *d, uint32_t s)
{
    if (!d->lx || s == LEX_DEAD)
        return s;
    if (first_room(d)) { /* finite_term's cache */
        dfa_fail(d, "out of memory");
        return LEX_DEAD;
    }
    return mapped_state(d, s, relaxed_term, NULL);
}

int lex_dfa_surely_infinite(lex_dfa_t *d, uint32_t s)
{
    if (!d->lx || s == LEX_DEAD)
        return 0;
    for (uint32_t k = 0; k < d->pair_n[s]; k++) {
        lex_term_t x = d->pair.data[d->pair_off[s] + k].term;
        uint32_t lens[2];
        term_lens(d, x, lens);
        /* exact without an AND or a NOT: strings of unbounded length */
        if (!lex_node(&d->terms, x)->has_and && lens[0] != LEN_INF && lens[1] == LEN_INF)
            return 1;
    }
    return 0;
}

void lex_lexemes_free(lex_lexemes_t *lx)
{
    if (!lx)
        return;
    for (size_t i = 0; lx->name && i < lx->n; i++)
        free(lx->name[i]);
    free(lx->name);
    free(lx->root);
    free(lx->start);
    free(lx->end);
    free(lx->follow);
    free(lx->acc);
    free(lx->touched);
    free(lx->next);
    free(lx);
}

void lex_dfa_free(lex_dfa_t *d)
{
    if (!d)
        return;
    lex_terms_free(&d->terms);
    free(d->pattern);
    if (d->map_rows) {
        tb_unreserve(d->trans, d->map_rows * d->ncls * sizeof *d->trans);
        tb_unreserve(d->alias, d->map_rows * d->ncls);
    } else {
        free(d->trans);
        free(d->alias);
    }
    free(d->term);
    free(d->accept);
    free(d->allowed);
    free(d->allowed_ok);
    free(d->by_term);
    free(d->memo_key);
    free(d->memo_val);
    free(d->first);
    free(d->first_ok);
    free(d->finite);
    free(d->liftable);
    free(d->lens);
    free(d->msc);
    tb_u64map_free(&d->classes_of);
    free(d->classes.data);
    free(d->seen);
    free(d->heads.data);
    free(d->parts.data);
    free(d->alts.data);
    lex_lexemes_free(d->lx);
    free(d->pair_off);
    free(d->pair_n);
    free(d->pair.data);
    free(d);
}
