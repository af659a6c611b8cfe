/* gram: the grammar's lexer x parser automaton (see gram.h). */
#include "gram.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../base/quad.h"
#include "../lexer/lexemes.h"

/* failed is set with a release store, after err: gr_gram_error reads it
 * without the lock. */
static uint32_t fail(gr_gram_t *g, const char *msg)
{
    if (!g->failed) {
        tb_fail(&g->err, "%s: %s", g->cfg.source, msg);
        __atomic_store_n(&g->failed, 1, __ATOMIC_RELEASE);
    }
    return GR_DEAD;
}

/* Takes the lexer's or the parser's sticky error as the grammar's own. */
static uint32_t check_parts(gr_gram_t *g)
{
    tb_err_t e;
    if (!g->failed && (lex_dfa_error(g->dfa, &e) || gr_parser_error(&g->parser, &e))) {
        g->err = e;
        __atomic_store_n(&g->failed, 1, __ATOMIC_RELEASE);
    }
    return g->failed;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- states ------------------------------------------------------------------- */

static uint64_t pairs_hash(const gr_pair_t *p, size_t n)
{
    return tb_hash(p, n * sizeof *p);
}

/* Whether s is a state after a token-id lexeme (gram.h); *row its row. */
static int token_row(const gr_gram_t *g, uint32_t s, uint64_t *row)
{
    return g->tokenlex && tb_u64map_get(&g->token_row, s, row);
}

static int by_hash_grow(gr_gram_t *g)
{
    size_t cap = g->by_cap ? g->by_cap * 2 : 1024;
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    uint64_t row;
    for (uint32_t s = GR_START + 1; s < gr_nstates(g); s++) {
        if (token_row(g, s, &row))
            continue; /* out of the hash, as GR_START */
        size_t h = pairs_hash(g->pair.data + g->pair_off.data[s], g->pair_n.data[s]) & (cap - 1);
        while (t[h])
            h = (h + 1) & (cap - 1);
        t[h] = s;
    }
    free(g->by_hash);
    g->by_hash = t;
    g->by_cap = cap;
    return 0;
}

/* From this many bytes on, the table is mapped for every state the limit
 * allows (tb_reserve: pages backed where touched) and grows in place.
 * Doubled as a copy, a table of tens of megabytes was copied, and its new
 * pages faulted in, within one mask: Github_ultra---o62059's slowest mask
 * (4M to 8M entries, about 12 ms of its 13). */
#define TABLE_MAPPED_FROM (1u << 20)

/* Room for extra more entries in the table.  A larger table is a copy,
 * published once complete; the old one stays for walks that still read it
 * (gram.h, Threads).  A mapped table has room for every state already. */
static int trans_reserve(gr_gram_t *g, size_t extra)
{
    if (g->trans.cap - g->trans.len >= extra)
        return 0;
    size_t cap = g->trans.cap ? g->trans.cap * 2 : 4096;
    while (cap - g->trans.len < extra)
        cap *= 2;
    size_t all = g->max_states * g->ncls;
    uint32_t *t = NULL;
    int mapped = cap * sizeof *t >= TABLE_MAPPED_FROM && (t = tb_reserve(all * sizeof *t));
    if (mapped)
        cap = all;
    else
        t = malloc(cap * sizeof *t);
    if (!t || tb_vec_reserve(&g->retired, 1)) {
        if (mapped)
            tb_unreserve(t, all * sizeof *t);
        else
            free(t);
        return -1;
    }
    if (g->trans.len)
        memcpy(t, g->trans.data, g->trans.len * sizeof *t);
    if (g->trans.data) {
        g->retired.data[g->retired.len++] = g->trans.data;
        g->retired_cap += g->trans.cap;
    }
    __atomic_store_n(&g->trans.data, t, __ATOMIC_RELEASE);
    g->trans.cap = cap;
    g->trans_mapped = mapped;
    return 0;
}

/* A new state of pairs p[0..n) (sorted), its table row all unknown. */
static uint32_t state_add(gr_gram_t *g, const gr_pair_t *p, size_t n)
{
    size_t s = gr_nstates(g);
    if (s >= g->max_states)
        return fail(g, "the grammar needs more states than the limit");
    if (tb_vec_reserve(&g->pair, n ? n : 1) || tb_vec_reserve(&g->pair_off, 1) ||
        tb_vec_reserve(&g->pair_n, 1) || trans_reserve(g, g->ncls))
        return fail(g, "out of memory");
    g->pair_off.data[g->pair_off.len++] = (uint32_t)g->pair.len;
    g->pair_n.data[g->pair_n.len++] = (uint32_t)n;
    if (n)
        memcpy(g->pair.data + g->pair.len, p, n * sizeof *p);
    g->pair.len += n;
    /* TRIE_REC_UNKNOWN is all ones: the row is filled bytewise */
    memset(g->trans.data + g->trans.len, s == GR_DEAD ? 0 : 0xFF, g->ncls * sizeof(uint32_t));
    g->trans.len += g->ncls;
    return (uint32_t)s;
}

static uint32_t state_of(gr_gram_t *g, const gr_pair_t *p, size_t n)
{
    if (n == 0)
        return GR_DEAD;
    size_t m = g->by_cap - 1, slot = pairs_hash(p, n) & m;
    for (uint32_t s; (s = g->by_hash[slot]) != 0; slot = (slot + 1) & m)
        if (g->pair_n.data[s] == n &&
            !memcmp(g->pair.data + g->pair_off.data[s], p, n * sizeof *p))
            return s;
    uint32_t s = state_add(g, p, n);
    if (s == GR_DEAD)
        return GR_DEAD;
    g->by_hash[slot] = s;
    if (gr_nstates(g) * 2 > g->by_cap && by_hash_grow(g))
        return fail(g, "out of memory");
    return s;
}

/* ---- the parser's side -------------------------------------------------------- */

/* The lexer state where the lexemes row expects begin, and the ignored
 * ones unless noskip. */
static uint32_t lexstart(gr_gram_t *g, uint32_t row, int noskip)
{
    while (g->lexstart.len < 2 * (size_t)g->parser.rows.len)
        if (tb_vec_push(&g->lexstart, UINT32_MAX))
            return fail(g, "out of memory");
    uint32_t *l = &g->lexstart.data[2 * (size_t)row + (noskip != 0)];
    if (*l != UINT32_MAX)
        return *l;
    const uint64_t *ex = gr_parser_expect(&g->parser, row);
    uint64_t any = 0;
    for (size_t w = 0; w < g->parser.words; w++)
        any |= ex[w];
    /* llguidance skips only where the grammar goes on */
    uint64_t skip = (g->llg && !any) || noskip ? 0 : ~0ull;
    for (size_t w = 0; w < g->parser.words; w++)
        g->ending[w] = ex[w] | (g->ignore[w] & skip);
    return *l = lex_dfa_start_of(g->dfa, g->ending);
}

/* Which kinds of lexeme end in lexer state l: bit 0 an ignored one, bit 1
 * one of the grammar's; g->ending keeps the latter.  Under llg, bit 2: a
 * lazy one, which is then all that ends (g->ending the lazy ones); else an
 * ignored one ends alone. */
#define ENDS_IGNORED 1
#define ENDS_LEXEME 2
#define ENDS_LAZY 4
static int ending_kinds(gr_gram_t *g, uint32_t l)
{
    if (l == LEX_DEAD || !lex_dfa_accepting(g->dfa, l))
        return 0;
    lex_dfa_ending(g->dfa, l, &g->ending_set);
    int kinds = 0, lazy = 0;
    for (size_t w = 0; w < g->parser.words; w++) {
        uint64_t e = g->ending_set.words[w];
        kinds |= (e & g->ignore[w]) ? ENDS_IGNORED : 0;
        g->ending[w] = e & ~g->ignore[w];
        kinds |= g->ending[w] ? ENDS_LEXEME : 0;
        lazy |= (e & g->lazy[w]) != 0;
    }
    if (lazy) {
        for (size_t w = 0; w < g->parser.words; w++)
            g->ending[w] &= g->lazy[w];
        return ENDS_LEXEME | ENDS_LAZY;
    }
    return g->llg && (kinds & ENDS_IGNORED) ? ENDS_IGNORED : kinds;
}

/* Under Lark's reading: whether every ignored lexeme ending in the lexer
 * state ending_kinds read goes on in lexer state on, the next byte's (Lark's
 * lexers take an ignored terminal at its longest match). */
static int ignored_goes_on(gr_gram_t *g, uint32_t on)
{
    lex_dfa_possible(g->dfa, on, &g->going_on);
    for (size_t w = 0; w < g->parser.words; w++)
        if (g->ending_set.words[w] & g->ignore[w] & ~g->going_on.words[w])
            return 0;
    return 1;
}

/* The row after row reads the grammar lexemes ending in lexer state l. */
static uint32_t scan(gr_gram_t *g, uint32_t row, uint32_t l)
{
    uint64_t key = (uint64_t)row << 32 | l, v;
    if (tb_u64map_get(&g->scan_memo, key, &v))
        return (uint32_t)v;
    uint64_t t0 = now_ns();
    uint32_t next = gr_parser_scan(&g->parser, row, g->ending);
    g->stats.parser_ns += now_ns() - t0;
    g->stats.scans++;
    if (tb_u64map_put(&g->scan_memo, key, next) < 0)
        return fail(g, "out of memory");
    return next;
}

/* ---- steps -------------------------------------------------------------------- */

static int cmp_pair(const void *x, const void *y)
{
    const gr_pair_t *a = x, *b = y;
    if (a->lex != b->lex)
        return a->lex < b->lex ? -1 : 1;
    return a->row < b->row ? -1 : a->row > b->row;
}

static int push(gr_gram_t *g, uint32_t row, uint32_t lex)
{
    if (tb_vec_push(&g->scratch, ((gr_pair_t){row, lex})))
        return fail(g, "out of memory"), -1;
    return 0;
}

/* Sorts the scratch pairs and merges those of one lexer state. */
static size_t normalize(gr_gram_t *g)
{
    gr_pair_t *p = g->scratch.data;
    size_t n = g->scratch.len, out = 0;
    if (n > 1) /* n == 0: no array at all yet */
        qsort(p, n, sizeof *p, cmp_pair);
    for (size_t i = 0; i < n; i++) {
        if (out && p[out - 1].lex == p[i].lex) {
            uint64_t t0 = now_ns();
            p[out - 1].row = gr_parser_union(&g->parser, p[out - 1].row, p[i].row);
            g->stats.parser_ns += now_ns() - t0;
        } else {
            p[out++] = p[i];
        }
    }
    return out;
}

/* Notes that a step read lexer state l's entry for its byte. */
static int consult(gr_gram_t *g, uint32_t l)
{
    if (tb_vec_push(&g->consulted, l))
        return fail(g, "out of memory"), -1;
    return 0;
}

/* The pairs that pair (row, l) leads to on byte b, into scratch. */
static int step_pair(gr_gram_t *g, uint32_t row, uint32_t l, uint8_t b, int *boundary)
{
    uint32_t on = lex_dfa_next(g->dfa, l, b);
    int kinds = ending_kinds(g, l);
    if (kinds & ENDS_LAZY)
        on = LEX_DEAD; /* a lazy lexeme ends at its first match */
    else if (g->llg && on != LEX_DEAD)
        kinds = 0; /* greedy: a lexeme that can go on does not end */
    else if (g->lark && (kinds & ENDS_IGNORED) && on != LEX_DEAD && ignored_goes_on(g, on))
        kinds &= ~ENDS_IGNORED; /* an ignored lexeme that goes on does not end */
    if (consult(g, l) || (on != LEX_DEAD && push(g, row, on)))
        return -1;
    uint32_t targets[2];
    int nt = 0;
    if (kinds & ENDS_IGNORED)
        targets[nt++] = row; /* an ignored lexeme ended: the row stays */
    if (kinds & ENDS_LEXEME)
        targets[nt++] = scan(g, row, l);
    *boundary |= kinds != 0;
    for (int i = 0; i < nt; i++) {
        if (targets[i] == GR_ROW_DEAD)
            continue;
        /* targets[0] after an ignored lexeme: no other one under ignore_once */
        uint32_t l0 = lexstart(g, targets[i],
                               g->cfg.ignore_once && i == 0 && (kinds & ENDS_IGNORED));
        if (l0 == LEX_DEAD)
            continue;
        uint32_t next = lex_dfa_next(g->dfa, l0, b);
        if (consult(g, l0) || (next != LEX_DEAD && push(g, targets[i], next)))
            return -1;
    }
    return 0;
}

/*
 * After state s's entry for class c was set to next: the same entry for
 * every class the lexer states the step read (consulted) cannot tell from
 * c, since a step depends on its byte only through those states' entries.
 * Their entries are known for the classes the lexer filled with c (its
 * alias rows), which is where this pays: a walk from a state new to the
 * parser (a row with one more property seen) would otherwise compute the
 * step again for each letter that goes on with the same lexer states.
 */
#define FILL_MAX_CONSULTED 8 /* a step that read more fills nothing */

/* Whether c's step fills class k: k's entry unknown, and every consulted
 * lexer state's entry for k the one it has for c; alike_quad for the four
 * classes from k, one lane each. */
static int alike(const uint32_t *row, const uint32_t *const *lr, const uint32_t *want,
                 size_t nx, uint32_t k)
{
    int same = row[k] == TRIE_REC_UNKNOWN;
    for (size_t i = 0; i < nx; i++)
        same &= lr[i][k] == want[i];
    return same;
}

/* Four classes at a time: MaskBench's grammars have 80 to 110 classes, and
 * the scan of every class, one at a time, was a quarter of the time of a
 * new entry (the cycles of steps in masks near TBM p90). */
static tb_quad_t alike_quad(const uint32_t *row, const uint32_t *const *lr,
                            const uint32_t *want, size_t nx, uint32_t k)
{
    /* nx >= 1: a step consults the lexer state of each of its pairs */
    tb_quad_t same = (tb_quad_t)(tb_quad_at(row + k) == TRIE_REC_UNKNOWN) &
                     (tb_quad_t)(tb_quad_at(lr[0] + k) == want[0]);
    for (size_t i = 1; i < nx; i++)
        same &= (tb_quad_t)(tb_quad_at(lr[i] + k) == want[i]);
    return same;
}

static void fill_alike(gr_gram_t *g, uint32_t s, uint32_t c, uint32_t next)
{
    const uint32_t ncls = g->ncls;
    size_t nx = g->consulted.len;
    if (nx > FILL_MAX_CONSULTED)
        return;
    const uint32_t *lr[FILL_MAX_CONSULTED];
    uint32_t want[FILL_MAX_CONSULTED];
    for (size_t i = 0; i < nx; i++) {
        lr[i] = g->dfa->trans + (size_t)g->consulted.data[i] * ncls;
        want[i] = lr[i][c];
    }
    uint32_t *row = g->trans.data + (size_t)s * ncls;
    const uint32_t fill = next * ncls;
    /* An entry not known yet (LEX_UNKNOWN) never equals c's, which is.
     * Stores stay one atomic entry each: walks on other threads read them. */
    uint32_t k = 0;
    for (; k + 4 <= ncls; k += 4) {
        tb_quad_t same = alike_quad(row, lr, want, nx, k);
        for (unsigned lanes = tb_quad_lanes(same); lanes; lanes &= lanes - 1)
            __atomic_store_n(&row[k + (uint32_t)__builtin_ctz(lanes)], fill, __ATOMIC_RELEASE);
    }
    for (; k < ncls; k++)
        if (alike(row, lr, want, nx, k))
            __atomic_store_n(&row[k], fill, __ATOMIC_RELEASE);
}

/* gr_step_slow under the lock, the entry still unknown. */
static uint32_t step_locked(gr_gram_t *g, uint32_t s, uint8_t b)
{
    if (g->failed || s == GR_DEAD)
        return GR_DEAD;
    g->scratch.len = 0;
    g->consulted.len = 0;
    int boundary = 0;
    for (uint32_t k = 0; k < g->pair_n.data[s]; k++) {
        gr_pair_t p = g->pair.data[g->pair_off.data[s] + k];
        if (step_pair(g, p.row, p.lex, b, &boundary))
            return GR_DEAD;
    }
    size_t n = normalize(g);
    uint32_t next = check_parts(g) ? GR_DEAD : state_of(g, g->scratch.data, n);
    if (g->failed)
        return GR_DEAD;
    /* release: a walk that reads the entry finds next's row filled */
    __atomic_store_n(&g->trans.data[(size_t)s * g->ncls + g->dfa->cls[b]], next * g->ncls,
                     __ATOMIC_RELEASE);
    fill_alike(g, s, g->dfa->cls[b], next);
    g->stats.steps++;
    g->stats.boundaries += (uint64_t)boundary;
    return next;
}

uint32_t gr_step_slow(gr_gram_t *g, uint32_t s, uint8_t b)
{
    pthread_mutex_lock(&g->lock);
    /* another thread may have computed it since the caller looked */
    uint32_t e = g->trans.data[(size_t)s * g->ncls + g->dfa->cls[b]];
    uint32_t next = e != TRIE_REC_UNKNOWN ? e / g->ncls : step_locked(g, s, b);
    pthread_mutex_unlock(&g->lock);
    return next;
}

uint32_t gr_feed(gr_gram_t *g, uint32_t from, const uint8_t *s, size_t n,
                 size_t *refused_at)
{
    uint32_t st = from;
    for (size_t i = 0; i < n; i++) {
        st = gr_step(g, st, s[i]);
        if (st == GR_DEAD) {
            if (refused_at)
                *refused_at = i;
            return GR_DEAD;
        }
    }
    return st;
}

static int accepting_locked(gr_gram_t *g, uint32_t s)
{
    uint64_t row;
    if (s == GR_START)
        return gr_parser_accepting(&g->parser, GR_ROW_START);
    if (token_row(g, s, &row))
        return gr_parser_accepting(&g->parser, (uint32_t)row);
    for (uint32_t k = 0; k < g->pair_n.data[s]; k++) {
        gr_pair_t p = g->pair.data[g->pair_off.data[s] + k];
        int kinds = ending_kinds(g, p.lex);
        if ((kinds & ENDS_IGNORED) && gr_parser_accepting(&g->parser, p.row))
            return 1;
        if ((kinds & ENDS_LEXEME) && gr_parser_accepting(&g->parser, scan(g, p.row, p.lex)))
            return 1;
    }
    return 0;
}

int gr_accepting(gr_gram_t *g, uint32_t s)
{
    pthread_mutex_lock(&g->lock);
    int yes = accepting_locked(g, s);
    pthread_mutex_unlock(&g->lock);
    return yes;
}

/* ---- lifted states (masks only) ------------------------------------------------ */

/* gr_lifted under the lock: s's pairs with their lexer states lifted into
 * scratch, sorted; s itself unless some changed and no two became one
 * (their rows would need a union: left as they are). */
static uint32_t lifted_locked(gr_gram_t *g, uint32_t s, uint32_t longest, uint32_t floor,
                              uint32_t *exact)
{
    g->scratch.len = 0;
    int changed = 0;
    uint32_t least = longest;
    for (uint32_t k = 0; k < g->pair_n.data[s]; k++) {
        gr_pair_t p = g->pair.data[g->pair_off.data[s] + k];
        uint32_t room, l = lex_dfa_lifted(g->dfa, p.lex, longest, floor, &room);
        changed |= l != p.lex;
        least = room < least ? room : least;
        if (push(g, p.row, l))
            return s;
    }
    if (!changed || check_parts(g))
        return s;
    gr_pair_t *p = g->scratch.data;
    size_t n = g->scratch.len;
    qsort(p, n, sizeof *p, cmp_pair);
    for (size_t i = 1; i < n; i++)
        if (p[i].lex == p[i - 1].lex)
            return s;
    uint32_t t = state_of(g, p, n);
    if (g->failed)
        return s;
    *exact = least;
    return t;
}

uint32_t gr_lifted(gr_gram_t *g, uint32_t s, uint32_t longest, uint32_t floor,
                   uint32_t *exact)
{
    uint64_t row;
    *exact = longest;
    if ((g->dfa->string_char == LEX_NOTHING && !g->counts) || s == GR_START || s == GR_DEAD ||
        token_row(g, s, &row))
        return s;
    pthread_mutex_lock(&g->lock);
    uint32_t t = lifted_locked(g, s, longest, floor, exact);
    pthread_mutex_unlock(&g->lock);
    return t;
}

/* ---- token-id lexemes --------------------------------------------------------- */

/* The rows where state s's text has read whole lexemes (a token-id lexeme
 * may be read next from them), into scratch's rows. */
static int flushed_rows(gr_gram_t *g, uint32_t s)
{
    uint64_t row;
    g->scratch.len = 0;
    if (s == GR_START || token_row(g, s, &row))
        return push(g, s == GR_START ? GR_ROW_START : (uint32_t)row, 0);
    for (uint32_t k = 0; k < g->pair_n.data[s]; k++) {
        gr_pair_t p = g->pair.data[g->pair_off.data[s] + k];
        int kinds = ending_kinds(g, p.lex);
        uint32_t after = kinds & ENDS_LEXEME ? scan(g, p.row, p.lex) : GR_ROW_DEAD;
        if (((kinds & ENDS_IGNORED) && push(g, p.row, 0)) ||
            (after != GR_ROW_DEAD && push(g, after, 0)))
            return -1;
    }
    return 0;
}

int gr_token_lexemes(gr_gram_t *g, uint32_t s, uint64_t *out)
{
    size_t words = g->parser.words;
    memset(out, 0, words * sizeof *out);
    if (!g->tokenlex || s == GR_DEAD)
        return 0;
    pthread_mutex_lock(&g->lock);
    if (!g->failed && !flushed_rows(g, s))
        for (size_t i = 0; i < g->scratch.len; i++) {
            const uint64_t *ex = gr_parser_expect(&g->parser, g->scratch.data[i].row);
            for (size_t w = 0; w < words; w++)
                out[w] |= ex[w] & g->tokenlex[w];
        }
    int rc = check_parts(g) ? -1 : 0;
    pthread_mutex_unlock(&g->lock);
    return rc;
}

/* The state after a token-id lexeme left the parser at row. */
static uint32_t token_state(gr_gram_t *g, uint32_t row)
{
    uint64_t s;
    if (tb_u64map_get(&g->token_state, row, &s))
        return (uint32_t)s;
    gr_pair_t p = {row, lexstart(g, row, 0)};
    uint32_t made = g->failed ? GR_DEAD : state_add(g, &p, 1);
    if (made != GR_DEAD && (tb_u64map_put(&g->token_state, row, made) < 0 ||
                            tb_u64map_put(&g->token_row, made, row) < 0))
        return fail(g, "out of memory");
    return made;
}

/* The token-id lexemes holding id, into g->ending; whether there is one. */
static int lexemes_of_id(gr_gram_t *g, uint32_t id)
{
    int any = 0;
    memset(g->ending, 0, g->parser.words * sizeof *g->ending);
    for (size_t i = 0; i < g->cfg.lex.len; i++) {
        const gr_lexeme_t *lx = &g->cfg.lex.data[i];
        for (uint32_t k = 0; k < lx->nids && id >= lx->ids[k].lo; k++)
            if (id <= lx->ids[k].hi) {
                g->ending[i >> 6] |= 1ull << (i & 63);
                any = 1;
                break;
            }
    }
    return any;
}

static uint32_t step_token_locked(gr_gram_t *g, uint32_t s, uint32_t id)
{
    if (g->failed || s == GR_DEAD || flushed_rows(g, s) || !lexemes_of_id(g, id))
        return GR_DEAD;
    /* every reading kept: the rows after the lexemes, in one row (nothing
     * of the next lexeme is read, so one lexer state serves them all) */
    uint32_t row = GR_ROW_DEAD;
    for (size_t i = 0; i < g->scratch.len; i++) {
        uint32_t r = gr_parser_scan(&g->parser, g->scratch.data[i].row, g->ending);
        if (r != GR_ROW_DEAD)
            row = row == GR_ROW_DEAD ? r : gr_parser_union(&g->parser, row, r);
    }
    if (check_parts(g) || row == GR_ROW_DEAD)
        return GR_DEAD;
    return token_state(g, row);
}

uint32_t gr_step_token(gr_gram_t *g, uint32_t s, uint32_t id)
{
    if (!g->tokenlex)
        return GR_DEAD;
    pthread_mutex_lock(&g->lock);
    uint32_t next = step_token_locked(g, s, id);
    pthread_mutex_unlock(&g->lock);
    return next;
}

/* The token-id lexemes' set and the maps of the states after them, where
 * the grammar has some. */
static int make_token_tables(gr_gram_t *g)
{
    if (!g->cfg.ntoken_lexemes)
        return 0;
    if (!(g->tokenlex = calloc(g->parser.words, sizeof *g->tokenlex)) ||
        tb_u64map_init(&g->token_state, 64) || tb_u64map_init(&g->token_row, 64))
        return -1;
    for (size_t i = 0; i < g->cfg.lex.len; i++)
        if (g->cfg.lex.data[i].ids)
            g->tokenlex[i >> 6] |= 1ull << (i & 63);
    return 0;
}

/* ---- making and freeing ------------------------------------------------------- */

static int make_lexer(gr_gram_t *g, const gr_opts_t *opts, tb_err_t *err)
{
    size_t n = g->cfg.lex.len;
    if (n == 0)
        return tb_fail(err, "%s: the grammar has no lexemes", g->cfg.source);
    const char **re = malloc(n * sizeof *re), **names = malloc(n * sizeof *names);
    if (!re || !names) {
        free(re);
        free(names);
        return tb_fail(err, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        re[i] = g->cfg.lex.data[i].regex;
        names[i] = g->cfg.lex.data[i].name;
    }
    lex_dfa_opts_t lo = opts ? opts->lexer : (lex_dfa_opts_t){0};
    lo.lookahead = g->cfg.lookahead;
    /* An intersection's states are products (a pattern's words counted
     * against maxLength 5000): room for ten times the usual number. */
    if (lo.lookahead && !lo.max_states)
        lo.max_states = 10 * LEX_DEFAULT_MAX_STATES;
    g->dfa = lex_lexer_from_regexes(re, names, n, g->cfg.source, &lo, err);
    free(re);
    free(names);
    if (!g->dfa)
        return -1;
    /* what a JSON string's length bound is recognised by (deriv.h), where
     * every intersection is the JSON Schema compiler's (none if the
     * grammar has none or it cannot be made: masks are then walked as
     * they are, and emptiness always searched) */
    const char *c = g->cfg.json_char;
    tb_err_t ignored;
    if (!c || !g->cfg.lookahead || g->cfg.user_lookahead ||
        lex_regex_parse(&g->dfa->terms, c, strlen(c), &g->dfa->string_char, &ignored))
        g->dfa->string_char = LEX_NOTHING;
    for (size_t i = 0; i < g->dfa->terms.n && !g->counts; i++) {
        const lex_node_t *x = lex_node(&g->dfa->terms, (lex_term_t)i);
        g->counts = x->kind == LEX_K_REPEAT && x->set[1] - x->set[0] >= 2;
    }
    return 0;
}

/* The lexer state the text begins in: the start row's, but under llg
 * without the ignored lexemes unless the grammar allows an initial skip. */
static uint32_t first_lexstart(gr_gram_t *g)
{
    return lexstart(g, GR_ROW_START, g->llg && !g->cfg.initial_skip);
}

static int make_tables(gr_gram_t *g, tb_err_t *err)
{
    size_t words = g->parser.words;
    g->ignore = calloc(words, sizeof *g->ignore);
    g->lazy = calloc(words, sizeof *g->lazy);
    g->ending = calloc(words, sizeof *g->ending);
    if (!g->ignore || !g->lazy || !g->ending || tb_bitset_init(&g->ending_set, words * 64) ||
        tb_bitset_init(&g->going_on, words * 64) ||
        tb_u64map_init(&g->scan_memo, 1024) || by_hash_grow(g) || make_token_tables(g))
        return tb_fail(err, "out of memory");
    g->llg = g->cfg.semantics == GR_SEM_LLGUIDANCE;
    g->lark = g->cfg.semantics == GR_SEM_LARK;
    for (size_t i = 0; i < g->cfg.lex.len; i++) {
        if (g->cfg.lex.data[i].ignore)
            g->ignore[i >> 6] |= 1ull << (i & 63);
        if (g->llg && g->cfg.lex.data[i].lazy) {
            g->lazy[i >> 6] |= 1ull << (i & 63);
            g->has_lazy = 1;
        }
    }
    g->ncls = g->dfa->ncls;
    for (int b = 0; b < 256; b++)
        g->class_size[g->dfa->cls[b]]++;
    state_add(g, NULL, 0); /* GR_DEAD */
    gr_pair_t start = {GR_ROW_START, 0};
    start.lex = first_lexstart(g);
    if (state_add(g, &start, 1) != GR_START || check_parts(g))
        return tb_fail(err, "%s", g->err.msg);
    return 0;
}

/* Makes the lexer, the parser and the start states from g->cfg. */
static int build(gr_gram_t *g, tb_err_t *err)
{
    if (pthread_mutex_init(&g->lock, NULL))
        return tb_fail(err, "%s: no mutex for the grammar", g->cfg.source);
    g->has_lock = 1;
    return make_lexer(g, &g->opts, err) ||
           gr_parser_init(&g->parser, &g->cfg, g->opts.max_items, err) || make_tables(g, err);
}

/* Frees all build() made, and zeroes it. */
static void release(gr_gram_t *g)
{
    if (g->dfa)
        lex_dfa_free(g->dfa);
    gr_parser_free(&g->parser);
    free(g->ignore);
    free(g->lazy);
    free(g->ending);
    tb_bitset_free(&g->ending_set);
    tb_bitset_free(&g->going_on);
    if (g->trans_mapped)
        tb_unreserve(g->trans.data, g->trans.cap * sizeof *g->trans.data);
    else
        free(g->trans.data);
    for (size_t i = 0; i < g->retired.len; i++)
        free(g->retired.data[i]);
    free(g->retired.data);
    free(g->pair.data);
    free(g->pair_off.data);
    free(g->pair_n.data);
    free(g->lexstart.data);
    free(g->scratch.data);
    free(g->consulted.data);
    free(g->by_hash);
    tb_u64map_free(&g->scan_memo);
    if (g->tokenlex) {
        free(g->tokenlex);
        tb_u64map_free(&g->token_state);
        tb_u64map_free(&g->token_row);
    }
    if (g->has_lock)
        pthread_mutex_destroy(&g->lock);
    gr_cfg_t cfg = g->cfg;
    gr_opts_t opts = g->opts;
    size_t max_states = g->max_states;
    uint32_t epoch = g->epoch;
    memset(g, 0, sizeof *g);
    g->epoch = epoch;
    g->cfg = cfg;
    g->opts = opts;
    g->max_states = max_states;
}

gr_gram_t *gr_gram_new(gr_cfg_t *cfg, const gr_opts_t *opts, tb_err_t *err)
{
    gr_gram_t *g = calloc(1, sizeof *g);
    if (!g) {
        gr_cfg_free(cfg);
        tb_fail(err, "out of memory");
        return NULL;
    }
    g->cfg = *cfg;
    memset(cfg, 0, sizeof *cfg);
    if (opts)
        g->opts = *opts;
    g->max_states = g->opts.max_states ? g->opts.max_states : GR_DEFAULT_MAX_STATES;
    if (g->max_states < 4)
        g->max_states = 4;
    if (!g->cfg.finished)
        tb_fail(err, "%s: internal: grammar not finished", g->cfg.source);
    else if (!build(g, err))
        return g;
    gr_gram_free(g);
    return NULL;
}

void gr_gram_free(gr_gram_t *g)
{
    if (!g)
        return;
    release(g);
    gr_cfg_free(&g->cfg);
    free(g);
}

int gr_gram_reset(gr_gram_t *g, tb_err_t *err)
{
    release(g);
    g->epoch++;
    return build(g, err);
}

int gr_gram_lexer_half_full(const gr_gram_t *g)
{
    return g->dfa && g->dfa->nstates > g->dfa->max_states / 2;
}

size_t gr_gram_bytes(const gr_gram_t *g)
{
    const gr_parser_t *p = &g->parser;
    size_t table = g->trans_mapped ? g->trans.len : g->trans.cap; /* mapped: the rows made */
    return (table + g->retired_cap) * sizeof(uint32_t) + g->pair.cap * sizeof(gr_pair_t) +
           (g->pair_off.cap + g->pair_n.cap + g->lexstart.cap + g->by_cap) * sizeof(uint32_t) +
           (p->items.cap + p->by_after.cap) * sizeof(gr_item_t) + p->rows.cap * sizeof(gr_row_t) +
           p->expect.cap * sizeof(uint64_t) + p->by_cap * sizeof(uint32_t) +
           g->dfa->nstates * g->dfa->ncls * sizeof(uint32_t);
}

int gr_gram_error(const gr_gram_t *g, tb_err_t *err)
{
    if (!__atomic_load_n(&g->failed, __ATOMIC_ACQUIRE))
        return 0;
    return tb_fail(err, "%s", g->err.msg);
}
