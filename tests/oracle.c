/* oracle: the Thompson NFA and PCRE2 mask oracles (see oracle.h). */
#include <stdlib.h>
#include <string.h>

#include "../lexer/regex.h"
#include "oracle.h"

static void *xrealloc(void *p, size_t size)
{
    p = realloc(p, size);
    if (!p)
        abort();
    return p;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        abort();
    return p;
}

static uint32_t nfa_add(nfa_t *a, int kind)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 256;
        a->s = xrealloc(a->s, a->cap * sizeof *a->s);
    }
    memset(&a->s[a->n], 0, sizeof *a->s);
    a->s[a->n].kind = kind;
    return a->n++;
}

/* Thompson construction in continuation style: the start state of a
 * fragment for term x that continues to `out`. */
static uint32_t nfa_compile(nfa_t *a, const lex_terms_t *t, lex_term_t x, uint32_t out)
{
    const lex_node_t *n = lex_node(t, x);
    switch (n->kind) {
    case LEX_K_NOTHING:
        return nfa_add(a, NFA_DEAD);
    case LEX_K_EPSILON:
        return out;
    case LEX_K_BYTES: {
        uint32_t s = nfa_add(a, NFA_BYTES);
        memcpy(a->s[s].set, n->set, sizeof n->set);
        a->s[s].e1 = out;
        return s;
    }
    case LEX_K_CONCAT: {
        lex_term_t first = n->a, second = n->b;
        uint32_t mid = nfa_compile(a, t, second, out);
        return nfa_compile(a, t, first, mid);
    }
    case LEX_K_OR: {
        lex_term_t l = n->a, r = n->b;
        uint32_t s = nfa_add(a, NFA_SPLIT);
        uint32_t x1 = nfa_compile(a, t, l, out);
        uint32_t x2 = nfa_compile(a, t, r, out);
        a->s[s].e1 = x1;
        a->s[s].e2 = x2;
        return s;
    }
    case LEX_K_REPEAT: { /* body{min} then body? (max - min) times */
        uint32_t mn = (uint32_t)n->set[0], mx = (uint32_t)n->set[1], cur = out;
        for (uint32_t i = mn; i < mx; i++) {
            uint32_t s = nfa_add(a, NFA_SPLIT);
            uint32_t b = nfa_compile(a, t, n->a, cur);
            a->s[s].e1 = b;
            a->s[s].e2 = out;
            cur = s;
        }
        for (uint32_t i = 0; i < mn; i++)
            cur = nfa_compile(a, t, n->a, cur);
        return cur;
    }
    default: { /* STAR: a loop state that enters the body or leaves */
        lex_term_t body = n->a;
        uint32_t loop = nfa_add(a, NFA_SPLIT);
        uint32_t b = nfa_compile(a, t, body, loop);
        a->s[loop].e1 = b;
        a->s[loop].e2 = out;
        return loop;
    }
    }
}

int nfa_build(nfa_t *a, const char *pattern, uint32_t *start, tb_err_t *err)
{
    memset(a, 0, sizeof *a);
    lex_terms_t t;
    lex_term_t root;
    if (lex_terms_init(&t, 1u << 22, err))
        return -1;
    if (lex_regex_parse(&t, pattern, strlen(pattern), &root, err)) {
        lex_terms_free(&t);
        return -1;
    }
    a->match = nfa_add(a, NFA_MATCH);
    *start = nfa_compile(a, &t, root, a->match);
    lex_terms_free(&t);
    /* live: reverse reachability to the match state, by fixpoint. */
    a->live = xcalloc(a->n, 1);
    a->stamp = xcalloc(a->n, sizeof *a->stamp);
    a->work = xcalloc(a->n, sizeof *a->work);
    a->live[a->match] = 1;
    for (int changed = 1; changed;) {
        changed = 0;
        for (uint32_t i = 0; i < a->n; i++) {
            const nfa_state_t *s = &a->s[i];
            int l = a->live[i] || (s->kind == NFA_BYTES && a->live[s->e1]) ||
                    (s->kind == NFA_SPLIT && (a->live[s->e1] || a->live[s->e2]));
            if (l && !a->live[i])
                a->live[i] = 1, changed = 1;
        }
    }
    return 0;
}

void nfa_free(nfa_t *a)
{
    free(a->s);
    free(a->live);
    free(a->stamp);
    free(a->work);
}

static void nfa_closure(nfa_t *a, nset_t *out, uint32_t s0)
{
    uint32_t top = 0;
    a->work[top++] = s0;
    while (top) {
        uint32_t s = a->work[--top];
        if (a->stamp[s] == a->gen || !a->live[s])
            continue;
        a->stamp[s] = a->gen;
        if (a->s[s].kind == NFA_SPLIT) {
            a->work[top++] = a->s[s].e2;
            a->work[top++] = a->s[s].e1;
        } else
            out->v[out->n++] = s;
    }
}

static void nfa_step(nfa_t *a, const nset_t *in, uint8_t b, nset_t *out)
{
    a->gen++;
    out->n = 0;
    for (uint32_t i = 0; i < in->n; i++) {
        const nfa_state_t *s = &a->s[in->v[i]];
        if (s->kind == NFA_BYTES && ((s->set[b >> 6] >> (b & 63)) & 1))
            nfa_closure(a, out, s->e1);
    }
}

void nfa_after(nfa_t *a, uint32_t start, const uint8_t *text, size_t n, nset_t *out)
{
    nset_t nxt = {xcalloc(a->n + 1, sizeof(uint32_t)), 0};
    *out = (nset_t){xcalloc(a->n + 1, sizeof(uint32_t)), 0};
    a->gen++;
    nfa_closure(a, out, start);
    for (size_t i = 0; i < n; i++) {
        nfa_step(a, out, text[i], &nxt);
        nset_t t = *out;
        *out = nxt;
        nxt = t;
    }
    free(nxt.v);
}

/* The oracle's mask: token k allowed iff its bytes keep a live state from
 * `from`.  Keys are sorted, so the sets along the previous key's bytes are
 * reused for the shared prefix (the same function, computed once per
 * prefix rather than once per token). */
void nfa_mask(nfa_t *a, const nset_t *from, const trie_keys_t *k, tb_bitset_t *mask)
{
    uint32_t depth = k->max_len + 1;
    nset_t *lv = xcalloc(depth, sizeof *lv);
    for (uint32_t i = 0; i < depth; i++)
        lv[i].v = xcalloc(a->n, sizeof *lv[i].v);
    memcpy(lv[0].v, from->v, from->n * sizeof *from->v);
    lv[0].n = from->n;
    const uint8_t *prev = NULL;
    uint32_t prev_len = 0;
    tb_bitset_clear_all(mask);
    for (size_t i = 0; i < k->n; i++) {
        const trie_key_t *key = &k->keys[i];
        uint32_t same = 0;
        while (same < prev_len && same < key->len && prev[same] == key->s[same])
            same++;
        for (uint32_t j = same; j < key->len; j++)
            nfa_step(a, &lv[j], key->s[j], &lv[j + 1]);
        if (lv[key->len].n)
            tb_bitset_set(mask, key->id);
        prev = key->s;
        prev_len = key->len;
    }
    for (size_t i = 0; i < k->nalias; i++)
        if (tb_bitset_get(mask, k->alias[2 * i + 1]))
            tb_bitset_set(mask, k->alias[2 * i]);
    for (uint32_t i = 0; i < depth; i++)
        free(lv[i].v);
    free(lv);
}
int pcre_viable(pcre2_code *re, pcre2_match_data *md, const uint8_t *s, size_t n)
{
    int rc = pcre2_match(re, s, n, 0, PCRE2_PARTIAL_HARD, md, NULL);
    return rc >= 0 || rc == PCRE2_ERROR_PARTIAL;
}
