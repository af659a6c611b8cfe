/*
 * grammar_gen: random sentences (grammar_gen.h).
 */
#include "grammar_gen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/utf8.h"
#include "support.h"

#define HEIGHT_INF UINT32_MAX
#define LEX_SOFT 24   /* past this many bytes a lexeme prefers to end */
#define LEX_HARD 512  /* past this many it starts over */
#define LEX_TRIES 50  /* starts over at most this many times */

/* A character of the pool, as UTF-8. */
typedef struct {
    uint8_t b[4];
    uint8_t len;
} gchar_t;

struct gg {
    const gr_cfg_t *g;
    go_t *o;
    uint32_t *height; /* per nonterminal: least derivation height */
    TB_VEC(uint32_t) ign; /* the ignored lexemes */
    gchar_t *pool;        /* per lexeme: ASCII + sample + the pattern's */
    size_t *npool;
    size_t pool_stride;
    TB_VEC(uint64_t) stack; /* symbol << 32 | depth */
    char err[512];
};

static int fail(gg_t *gen, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(gg_t *gen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(gen->err, sizeof gen->err, fmt, ap);
    va_end(ap);
    return -1;
}

const char *gg_error(const gg_t *gen)
{
    return gen->err;
}

size_t gg_cut(size_t n)
{
    return test_rnd((uint32_t)n + 1);
}

/* The height of rule r: 1 + the largest height of its nonterminals. */
static uint32_t rule_height(const gg_t *gen, size_t r)
{
    const gr_rule_t *ru = &gen->g->rule.data[r];
    uint32_t h = 0;
    for (uint32_t i = 0; i < ru->n; i++) {
        gr_sym_t s = gen->g->sym.data[ru->off + i];
        if (!gr_is_lex(s) && gen->height[s] > h)
            h = gen->height[s];
    }
    return h == HEIGHT_INF ? HEIGHT_INF : h + 1;
}

static void heights(gg_t *gen)
{
    for (size_t a = 0; a < gen->g->nt.len; a++)
        gen->height[a] = HEIGHT_INF;
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t r = 0; r < gen->g->rule.len; r++) {
            uint32_t h = rule_height(gen, r), a = gen->g->rule.data[r].lhs;
            if (h < gen->height[a]) {
                gen->height[a] = h;
                changed = 1;
            }
        }
    }
}

/* A few characters of common scripts and categories (letters of both
 * cases, a digit, a combining mark, separators, symbols, private use). */
static const uint32_t sample_cps[] = {
    0xA0,   0xC9,   0xE9,   0xDF,   0x101,  0x301,  0x391,  0x3B1,  0x3A9,   0x416,
    0x436,  0x5D0,  0x627,  0x663,  0x939,  0xE01,  0x2028, 0x20AC, 0x3042,  0x30A2,
    0x4E2D, 0x65E5, 0xD55C, 0xE000, 0xFFFD, 0x1D538, 0x1F600, 0x20000, 0x10FFFD,
};

static void pool_add(gg_t *gen, size_t l, uint32_t cp)
{
    gchar_t c;
    c.len = (uint8_t)tb_utf8_encode(cp, c.b);
    gchar_t *p = gen->pool + l * gen->pool_stride;
    if (!c.len || gen->npool[l] == gen->pool_stride)
        return;
    for (size_t i = 0; i < gen->npool[l]; i++)
        if (p[i].len == c.len && !memcmp(p[i].b, c.b, c.len))
            return;
    p[gen->npool[l]++] = c;
}

/* ASCII, the sample, then the non-ASCII characters the pattern writes
 * (as UTF-8 or as \x{..} / \u.... escapes). */
static void make_pool(gg_t *gen, size_t l)
{
    for (uint32_t c = 0; c < 0x80; c++)
        pool_add(gen, l, c);
    for (size_t i = 0; i < sizeof sample_cps / sizeof *sample_cps; i++)
        pool_add(gen, l, sample_cps[i]);
    const char *re = gen->g->lex.data[l].regex;
    size_t n = strlen(re);
    for (size_t i = 0; i < n; i++) {
        uint32_t cp;
        size_t k = (uint8_t)re[i] >= 0x80 ? tb_utf8_decode((const uint8_t *)re + i, n - i, &cp)
                                          : 0;
        if (k) {
            pool_add(gen, l, cp);
            i += k - 1;
        } else if (re[i] == '\\' && i + 2 < n && (re[i + 1] == 'x' || re[i + 1] == 'u')) {
            const char *h = re + i + 2 + (re[i + 2] == '{');
            char *end;
            unsigned long v = strtoul(h, &end, 16);
            if (end > h && v <= 0x10FFFF)
                pool_add(gen, l, (uint32_t)v);
        }
    }
}

gg_t *gg_new(const gr_cfg_t *g, go_t *o, char *err, size_t errlen)
{
    gg_t *gen = calloc(1, sizeof *gen);
    if (!gen) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    gen->g = g;
    gen->o = o;
    gen->pool_stride = 0x80 + sizeof sample_cps / sizeof *sample_cps + 64;
    size_t nl = g->lex.len ? g->lex.len : 1;
    gen->height = malloc((g->nt.len ? g->nt.len : 1) * sizeof *gen->height);
    gen->pool = malloc(nl * gen->pool_stride * sizeof *gen->pool);
    gen->npool = calloc(nl, sizeof *gen->npool);
    if (!gen->height || !gen->pool || !gen->npool) {
        snprintf(err, errlen, "out of memory");
        gg_free(gen);
        return NULL;
    }
    heights(gen);
    for (size_t l = 0; l < g->lex.len; l++) {
        make_pool(gen, l);
        if (g->lex.data[l].ignore && tb_vec_push(&gen->ign, (uint32_t)l)) {
            snprintf(err, errlen, "out of memory");
            gg_free(gen);
            return NULL;
        }
    }
    return gen;
}

void gg_free(gg_t *gen)
{
    if (!gen)
        return;
    free(gen->height);
    free(gen->pool);
    free(gen->npool);
    free(gen->ign.data);
    free(gen->stack.data);
    free(gen);
}

/* 1 if out[from..len) + c is a prefix of a match (full: a match) of l. */
static int try_char(gg_t *gen, uint32_t l, tb_buf_t *out, size_t from, const gchar_t *c,
                    int full)
{
    if (tb_buf_put(out, c->b, c->len))
        return fail(gen, "out of memory");
    const uint8_t *s = out->data + from;
    size_t n = out->len - from;
    int r = full ? go_lexeme_full(gen->o, l, s, n) : go_lexeme_viable(gen->o, l, s, n);
    out->len -= c->len;
    return r < 0 ? fail(gen, "%s", go_error(gen->o)) : r;
}

/* A pool character that keeps out[from..) viable (full: makes it a match)
 * appended, trying a few at random, then all from a random place.  1 if
 * one was found, 0 if none, -1 on failure. */
static int step(gg_t *gen, uint32_t l, tb_buf_t *out, size_t from, int full)
{
    const gchar_t *p = gen->pool + l * gen->pool_stride;
    size_t np = gen->npool[l];
    for (int t = 0; t < 32; t++) {
        /* Printable ASCII most of the time. */
        size_t i = test_rnd(4) ? 0x20 + test_rnd(0x5F) : test_rnd((uint32_t)np);
        int r = try_char(gen, l, out, from, &p[i], full);
        if (r)
            return r < 0 ? -1 : tb_buf_put(out, p[i].b, p[i].len) ? fail(gen, "out of memory") : 1;
    }
    size_t at = test_rnd((uint32_t)np);
    for (size_t k = 0; k < np; k++) {
        const gchar_t *c = &p[(at + k) % np];
        int r = try_char(gen, l, out, from, c, full);
        if (r)
            return r < 0 ? -1 : tb_buf_put(out, c->b, c->len) ? fail(gen, "out of memory") : 1;
    }
    return 0;
}

int gg_lexeme(gg_t *gen, uint32_t l, tb_buf_t *out)
{
    size_t from = out->len;
    /* out->data + from below: never a NULL pointer, even for "" */
    if (tb_buf_reserve(out, 1))
        return fail(gen, "out of memory");
    for (int attempt = 0; attempt < LEX_TRIES; attempt++) {
        out->len = from;
        for (;;) {
            size_t len = out->len - from;
            int full = go_lexeme_full(gen->o, l, out->data + from, len);
            if (full < 0)
                return fail(gen, "%s", go_error(gen->o));
            if (full && (len >= LEX_SOFT || test_rnd(3) == 0))
                return 0;
            if (len >= LEX_HARD)
                break;
            int r = len >= LEX_SOFT ? step(gen, l, out, from, 1) : 0;
            if (r == 0)
                r = step(gen, l, out, from, 0);
            if (r < 0)
                return -1;
            if (r == 0) {
                if (full)
                    return 0;
                break;
            }
        }
    }
    return fail(gen, "no string of lexeme %s (/%s/) found in %d walks",
                gen->g->lex.data[l].name, gen->g->lex.data[l].regex, LEX_TRIES);
}

/* One time in four, an ignored lexeme's string. */
static int maybe_ignored(gg_t *gen, tb_buf_t *out)
{
    if (!gen->ign.len || test_rnd(4))
        return 0;
    return gg_lexeme(gen, gen->ign.data[test_rnd((uint32_t)gen->ign.len)], out);
}

enum { PICK_ANY, PICK_SHORTEST, PICK_TALLEST };

/* A rule of a, drawn among all, among those of least height or among
 * those of greatest height. */
static size_t pick_rule(const gg_t *gen, uint32_t a, int how)
{
    uint32_t tallest = 0;
    for (size_t r = 0; how == PICK_TALLEST && r < gen->g->rule.len; r++)
        if (gen->g->rule.data[r].lhs == a && rule_height(gen, r) > tallest)
            tallest = rule_height(gen, r);
    size_t cand = 0, pick = 0;
    for (size_t r = 0; r < gen->g->rule.len; r++) {
        if (gen->g->rule.data[r].lhs != a)
            continue;
        if ((how == PICK_SHORTEST && rule_height(gen, r) != gen->height[a]) ||
            (how == PICK_TALLEST && rule_height(gen, r) != tallest))
            continue;
        if (test_rnd((uint32_t)++cand) == 0) /* reservoir sampling */
            pick = r;
    }
    return pick;
}

int gg_sentence(gg_t *gen, uint32_t max_depth, tb_buf_t *out)
{
    size_t from = out->len;
    gen->stack.len = 0;
    if (tb_vec_push(&gen->stack, (uint64_t)gen->g->start << 32))
        return fail(gen, "out of memory");
    while (gen->stack.len) {
        uint64_t top = gen->stack.data[--gen->stack.len];
        gr_sym_t s = (gr_sym_t)(top >> 32);
        uint32_t depth = (uint32_t)top;
        if (gr_is_lex(s)) {
            if (maybe_ignored(gen, out) || gg_lexeme(gen, gr_index(s), out))
                return -1;
            continue;
        }
        int how = depth >= max_depth || out->len - from >= GG_SOFT_BYTES ? PICK_SHORTEST
                  : depth < max_depth / 2 && test_rnd(2)                 ? PICK_TALLEST
                                                                         : PICK_ANY;
        const gr_rule_t *ru = &gen->g->rule.data[pick_rule(gen, s, how)];
        if (tb_vec_reserve(&gen->stack, ru->n))
            return fail(gen, "out of memory");
        for (uint32_t i = ru->n; i-- > 0;)
            gen->stack.data[gen->stack.len++] =
                (uint64_t)gen->g->sym.data[ru->off + i] << 32 | (depth + 1);
    }
    return maybe_ignored(gen, out);
}
