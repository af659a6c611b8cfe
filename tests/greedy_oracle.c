/* greedy_oracle: llguidance's lexer and a textbook Earley parser, run
 * literally (see greedy_oracle.h). */
#include "greedy_oracle.h"

#include <stdlib.h>
#include <string.h>

/* An Earley item: rule, dot position in its right side, origin set. */
typedef struct {
    uint32_t rule, dot, origin;
} item_t;

/*
 * The chart: set k holds item[start[k] .. start[k + 1]) (the last set up
 * to nitem); one set per scan, so the sets follow the lexemes read.  The
 * run: text[0..len) fed so far, ls where the lexeme being read began,
 * dead once the lexer or the parser refused a byte.
 */
struct ggo {
    const gr_cfg_t *g;
    go_t *lex;
    int initial_skip;
    item_t *item;
    size_t nitem, item_cap;
    size_t *start;
    size_t nset, set_cap;
    uint8_t *mark; /* per lexeme: scratch set */
    uint8_t *text;
    size_t len, text_cap, ls;
    int dead;
};

static const gr_rule_t *rule_of(const ggo_t *o, uint32_t r)
{
    return &o->g->rule.data[r];
}

/* The symbol after item it's dot, or 0 with *end set when there is none. */
static gr_sym_t next_sym(const ggo_t *o, item_t it, int *end)
{
    const gr_rule_t *r = rule_of(o, it.rule);
    *end = it.dot == r->n;
    return *end ? 0 : o->g->sym.data[r->off + it.dot];
}

static size_t cur_begin(const ggo_t *o)
{
    return o->start[o->nset - 1];
}

/* Adds it to the last set unless it is there. */
static void add(ggo_t *o, item_t it)
{
    for (size_t i = cur_begin(o); i < o->nitem; i++)
        if (!memcmp(&o->item[i], &it, sizeof it))
            return;
    if (o->nitem == o->item_cap) {
        o->item_cap = o->item_cap ? 2 * o->item_cap : 256;
        o->item = realloc(o->item, o->item_cap * sizeof *o->item);
        if (!o->item)
            abort(); /* a test's memory: nothing to recover */
    }
    o->item[o->nitem++] = it;
}

/* Predicts and completes in the last set until nothing is new. */
static void closure(ggo_t *o)
{
    uint32_t cur = (uint32_t)(o->nset - 1);
    for (size_t i = cur_begin(o); i < o->nitem; i++) {
        item_t it = o->item[i];
        int end;
        gr_sym_t s = next_sym(o, it, &end);
        if (!end && !gr_is_lex(s)) {
            for (uint32_t q = 0; q < o->g->rule.len; q++)
                if (rule_of(o, q)->lhs == s)
                    add(o, (item_t){q, 0, cur});
            if (o->g->nt.data[s].nullable) /* Aycock and Horspool */
                add(o, (item_t){it.rule, it.dot + 1, it.origin});
        } else if (end) {
            uint32_t lhs = rule_of(o, it.rule)->lhs;
            size_t b = o->start[it.origin];
            /* the origin's set; the last one grows as it is read */
            for (size_t j = b; j < (it.origin == cur ? o->nitem : o->start[it.origin + 1]); j++) {
                item_t w = o->item[j];
                int wend;
                gr_sym_t ws = next_sym(o, w, &wend);
                if (!wend && !gr_is_lex(ws) && ws == lhs)
                    add(o, (item_t){w.rule, w.dot + 1, w.origin});
            }
        }
    }
}

static void new_set(ggo_t *o)
{
    if (o->nset == o->set_cap) {
        o->set_cap = o->set_cap ? 2 * o->set_cap : 64;
        o->start = realloc(o->start, o->set_cap * sizeof *o->start);
        if (!o->start)
            abort();
    }
    o->start[o->nset++] = o->nitem;
}

/* A new set: the last set's items over the lexemes marked. */
static void scan(ggo_t *o)
{
    size_t b = cur_begin(o), e = o->nitem;
    new_set(o);
    for (size_t i = b; i < e; i++) {
        item_t it = o->item[i];
        int end;
        gr_sym_t s = next_sym(o, it, &end);
        if (!end && gr_is_lex(s) && o->mark[gr_index(s)])
            add(o, (item_t){it.rule, it.dot + 1, it.origin});
    }
    closure(o);
}

static int accepting(const ggo_t *o)
{
    for (size_t i = cur_begin(o); i < o->nitem; i++) {
        item_t it = o->item[i];
        const gr_rule_t *r = rule_of(o, it.rule);
        if (r->lhs == o->g->start && it.dot == r->n && it.origin == 0)
            return 1;
    }
    return 0;
}

/* Whether the last set expects lexeme l (any lexeme: l = UINT32_MAX). */
static int expects(const ggo_t *o, uint32_t l)
{
    for (size_t i = cur_begin(o); i < o->nitem; i++) {
        int end;
        gr_sym_t s = next_sym(o, o->item[i], &end);
        if (!end && gr_is_lex(s) && (l == UINT32_MAX || gr_index(s) == l))
            return 1;
    }
    return 0;
}

/* Whether lexeme l may be read now: expected by the last set, or ignored
 * where the parser expects some lexeme (but not before the first one
 * without initial_skip). */
static int allowed(const ggo_t *o, uint32_t l)
{
    if (o->g->lex.data[l].ignore)
        return (o->nset > 1 || o->initial_skip) && expects(o, UINT32_MAX);
    return expects(o, l);
}

static int ascii(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] >= 0x80)
            return 0;
    return 1;
}

/* Some allowed lexeme can still match text[from..to) (full: matches it
 * whole; lazy_only: lazy lexemes only); marks them. */
static int mark_lexemes(ggo_t *o, size_t from, size_t to, int full, int lazy_only)
{
    int any = 0;
    const uint8_t *s = o->text + from;
    for (uint32_t l = 0; l < o->g->lex.len; l++) {
        o->mark[l] = 0;
        if ((lazy_only && !o->g->lex.data[l].lazy) || !ascii(s, to - from) || !allowed(o, l))
            continue;
        int m = full ? go_lexeme_full(o->lex, l, s, to - from)
                     : go_lexeme_viable(o->lex, l, s, to - from);
        o->mark[l] = m == 1;
        any |= m == 1;
    }
    return any;
}

/* Ends the lexeme text[ls..to): every allowed lexeme that matches it
 * whole, a skip alone.  0 if none does. */
static int end_lexeme(ggo_t *o, size_t to)
{
    if (to == o->ls || !mark_lexemes(o, o->ls, to, 1, 0))
        return 0;
    for (uint32_t l = 0; l < o->g->lex.len; l++)
        if (o->mark[l] && o->g->lex.data[l].ignore)
            return 1; /* a skip: the parser stays */
    scan(o);
    return 1;
}

static void feed(ggo_t *o, uint8_t b)
{
    if (o->dead)
        return;
    if (o->len == o->text_cap) {
        o->text_cap = o->text_cap ? 2 * o->text_cap : 256;
        o->text = realloc(o->text, o->text_cap);
        if (!o->text)
            abort();
    }
    o->text[o->len++] = b;
    size_t i = o->len - 1;
    if (!mark_lexemes(o, o->ls, i + 1, 0, 0)) { /* greedy: ends only here */
        if (!end_lexeme(o, i)) {
            o->dead = 1;
            return;
        }
        o->ls = i; /* the byte begins the next lexeme */
        if (!mark_lexemes(o, i, i + 1, 0, 0)) {
            o->dead = 1;
            return;
        }
    }
    if (mark_lexemes(o, o->ls, i + 1, 1, 1)) { /* lazy: ends at its first match */
        scan(o);
        o->ls = i + 1;
    }
}

ggo_t *ggo_new(const gr_cfg_t *g, go_t *lex, int initial_skip)
{
    if (g->set.len)
        return NULL;
    ggo_t *o = calloc(1, sizeof *o);
    if (!o || !(o->mark = calloc(g->lex.len + 1, 1))) {
        free(o);
        return NULL;
    }
    o->g = g;
    o->lex = lex;
    o->initial_skip = initial_skip;
    return o;
}

void ggo_free(ggo_t *o)
{
    if (!o)
        return;
    free(o->item);
    free(o->start);
    free(o->mark);
    free(o->text);
    free(o);
}

static void restart(ggo_t *o)
{
    o->nitem = o->nset = o->len = o->ls = 0;
    o->dead = 0;
    new_set(o);
    for (uint32_t q = 0; q < o->g->rule.len; q++)
        if (rule_of(o, q)->lhs == o->g->start)
            add(o, (item_t){q, 0, 0});
    closure(o);
}

/* Whether the run so far is a sentence: the lexeme being read ends with
 * the text (the chart is left as it was). */
static int sentence(ggo_t *o)
{
    if (o->dead)
        return 0;
    if (o->ls == o->len)
        return accepting(o);
    size_t nset = o->nset, nitem = o->nitem;
    int yes = end_lexeme(o, o->len) && accepting(o);
    o->nset = nset;
    o->nitem = nitem;
    return yes;
}

int ggo_run(ggo_t *o, const uint8_t *s, size_t n, int *is_sentence)
{
    restart(o);
    for (size_t i = 0; i < n; i++)
        feed(o, s[i]);
    if (is_sentence)
        *is_sentence = sentence(o);
    return !o->dead;
}

void ggo_mask(ggo_t *o, const uint8_t *prefix, size_t n, const uint8_t *const *tokens,
              const uint32_t *lens, size_t ntok, uint8_t *allowed_out)
{
    int alive = ggo_run(o, prefix, n, NULL);
    size_t nset = o->nset, nitem = o->nitem, ls = o->ls;
    for (size_t t = 0; t < ntok; t++) {
        for (uint32_t k = 0; alive && k < lens[t] && !o->dead; k++)
            feed(o, tokens[t][k]);
        allowed_out[t] = alive && !o->dead;
        o->nset = nset;
        o->nitem = nitem;
        o->ls = ls;
        o->len = n;
        o->dead = !alive;
    }
}
