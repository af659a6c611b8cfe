/*
 * grammar_oracle: Earley on bytes with PCRE2 lexemes (grammar_oracle.h).
 */
#include "grammar_oracle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "../base/buf.h"
#include "../base/utf8.h"

/* dnext[] of a dot at the end of its rule: a value no nonterminal takes
 * (cfg.h keeps symbols below GR_MAX_SYMBOLS) and without GR_LEX. */
#define END_SYM 0x7fffffffu

/* An Earley item: a dotted rule (an index into dnext/dlhs) and the set
 * where the rule began. */
typedef struct {
    uint32_t dot, origin;
} item_t;

/* One Earley set.  `it` is also the set's work list (processed in order);
 * hash holds item index + 1 (0 = free slot; hcap a power of two, at most
 * half full); empty lists the nonterminals completed with this set as
 * origin, i.e. seen to derive the empty string here. */
typedef struct {
    TB_VEC(item_t) it;
    uint32_t *hash;
    size_t hcap;
    TB_VEC(uint32_t) empty;
} set_t;

/* Lexeme l's patterns: all = (?:P) for pcre2_dfa_match (every match end),
 * anch = (?:P)\z for pcre2_match (a full match, or with PCRE2_PARTIAL_HARD
 * a prefix of one).  regex.h's $ asserts the end of the lexeme's match
 * (PCRE2_DOLLAR_ENDONLY at the end of the subject); a $ inside P would
 * assert the end of the whole text after it in pcre2_dfa_match's subject,
 * so such a lexeme (inner_dollar) has its match ends found one candidate
 * end at a time with anch instead. */
typedef struct {
    pcre2_code *all, *anch;
    int inner_dollar;
} lexre_t;

/* What lexeme l's pattern can tell apart among the code points past
 * ASCII, for the completions of a cut character (viable_tail): the code
 * points it names (cuts, sorted: literals, \x{..}, \u.... and \o{..}
 * escapes) and the properties it names (probes: each \p{..} or \P{..}
 * compiled alone).  Two code points that no cut separates and every probe
 * classes alike are matched alike by the pattern, so one of them answers
 * for both.  `every` marks a pattern with a construct this reading does
 * not follow ((?i), \h \v \R \X \b \N \C \Q, back-references, (*VERB)):
 * then every code point is tried. */
typedef struct {
    TB_VEC(uint32_t) cuts;
    TB_VEC(pcre2_code *) probes;
    int every;
} lexchars_t;

/* A lexeme expected at set j that may still be read past the end of
 * go_mask's prefix; on: the bytes that can come next (bit b of on[b / 64]). */
typedef struct {
    uint32_t j, lex;
    uint64_t on[4];
} live_t;

struct go {
    /* G', flattened: dotted rule d has the symbol after its dot in
     * dnext[d] (END_SYM at the end) and its rule's lhs in dlhs[d]; d + 1
     * is the same rule with the dot advanced.  The rules of nonterminal A
     * start at dots first[rbeg[A] .. rbeg[A + 1]). */
    TB_VEC(uint32_t) dnext;
    TB_VEC(uint32_t) dlhs;
    uint32_t *rbeg, *first;
    uint32_t nnt, nlex, start_end; /* start_end: S' -> S IGN . */
    uint32_t start_dot;
    lexre_t *re;
    lexchars_t *chars;
    uint64_t (*begin)[4]; /* per lexeme: the bytes a match can begin with */
    /* Representatives of the completions of a cut character: key lexeme
     * << 32 | bytes << 24 | the bytes -> offset << 32 | count in reps. */
    tb_u64map_t rep_map;
    TB_VEC(uint32_t) reps;
    int exhaustive; /* go_set_exhaustive */
    pcre2_match_data *md, *dmd;
    uint32_t dmd_pairs;
    int *ws;
    size_t wsn;
    /* The chart over text[0..n); text[0..v) is valid UTF-8. */
    tb_buf_t text;
    size_t n, v;
    set_t *sets;
    size_t nsets, used;
    size_t nitems, max_items;
    uint32_t *pmark, *lmark, stamp; /* predicted nonterminals, listed lexemes */
    TB_VEC(uint32_t) exp;           /* expected(): the lexemes of one set */
    TB_VEC(size_t) ends;            /* lex_ends(): match ends */
    TB_VEC(live_t) live;
    tb_buf_t cbuf; /* a subject with its last character completed */
    char err[512];
};

static int fail(go_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int next_bytes(go_t *o, uint32_t l, const uint8_t *s, size_t m, uint64_t on[4]);

static int fail(go_t *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->err, sizeof o->err, fmt, ap);
    va_end(ap);
    return -1;
}

const char *go_error(const go_t *o)
{
    return o->err;
}

int go_set_exhaustive(go_t *o, int on)
{
    o->exhaustive = on != 0;
    for (uint32_t l = 0; l < o->nlex; l++)
        if (next_bytes(o, l, (const uint8_t *)"", 0, o->begin[l]))
            return -1;
    return 0;
}

void go_set_max_items(go_t *o, size_t max_items)
{
    o->max_items = max_items;
}

/* ---- building G' ---------------------------------------------------------------- */

/* Appends rule lhs -> rhs[0..n) as dotted rules; *dot gets its first. */
static int add_rule(go_t *o, uint32_t lhs, const uint32_t *rhs, size_t n, uint32_t *dot)
{
    *dot = (uint32_t)o->dnext.len;
    for (size_t i = 0; i <= n; i++)
        if (tb_vec_push(&o->dnext, i < n ? rhs[i] : END_SYM) || tb_vec_push(&o->dlhs, lhs))
            return fail(o, "out of memory");
    return 0;
}

/* first[] and rbeg[]: the k rules (lhs[i], first dot dots[i]) by lhs,
 * a counting sort. */
static int index_rules(go_t *o, const uint32_t *lhs, const uint32_t *dots, size_t k)
{
    for (size_t i = 0; i < k; i++)
        o->rbeg[lhs[i] + 1]++;
    for (uint32_t a = 0; a < o->nnt; a++)
        o->rbeg[a + 1] += o->rbeg[a];
    uint32_t *fill = calloc(o->nnt, sizeof *fill);
    if (!fill)
        return fail(o, "out of memory");
    for (size_t i = 0; i < k; i++)
        o->first[o->rbeg[lhs[i]] + fill[lhs[i]]++] = dots[i];
    free(fill);
    return 0;
}

/* Nonterminals of G': the grammar's, then S' (nnt0), IGN (nnt0 + 1) and
 * pre_L (nnt0 + 2 + L) for every lexeme L (used for those that are not
 * ignored: ignored lexemes appear in no rule, cfg.h). */
static int build_grammar(go_t *o, const gr_cfg_t *g)
{
    uint32_t nnt0 = (uint32_t)g->nt.len, sp = nnt0, ign = nnt0 + 1;
    int has_ign = 0;
    for (size_t l = 0; l < g->lex.len; l++)
        has_ign |= g->lex.data[l].ignore;
    o->nlex = (uint32_t)g->lex.len;
    o->nnt = nnt0 + 2 + o->nlex;
    size_t nrules = g->rule.len + 2 + 2 * o->nlex;
    uint32_t *lhs = malloc(nrules * sizeof *lhs), *dots = malloc(nrules * sizeof *dots);
    uint32_t *rhs = malloc((g->sym.len + 2) * sizeof *rhs);
    o->rbeg = calloc(o->nnt + 1, sizeof *o->rbeg);
    o->first = malloc(nrules * sizeof *o->first);
    int r = -1;
    size_t k = 0;
    if (!lhs || !dots || !rhs || !o->rbeg || !o->first) {
        fail(o, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < g->rule.len; i++) {
        const gr_rule_t *ru = &g->rule.data[i];
        for (uint32_t s = 0; s < ru->n; s++) {
            gr_sym_t x = g->sym.data[ru->off + s];
            rhs[s] = gr_is_lex(x) && has_ign ? nnt0 + 2 + gr_index(x) : x;
        }
        lhs[k] = ru->lhs;
        if (add_rule(o, ru->lhs, rhs, ru->n, &dots[k++]))
            goto out;
    }
    uint32_t top[2] = {g->start, ign};
    lhs[k] = sp;
    if (add_rule(o, sp, top, has_ign ? 2 : 1, &dots[k++]))
        goto out;
    o->start_dot = dots[k - 1];
    o->start_end = o->start_dot + (has_ign ? 2 : 1);
    if (has_ign) {
        lhs[k] = ign;
        if (add_rule(o, ign, NULL, 0, &dots[k++]))
            goto out;
        for (uint32_t l = 0; l < o->nlex; l++) {
            /* IGN -> IGN I for an ignored lexeme I, pre_L -> IGN L for the
             * others. */
            uint32_t pre[2] = {ign, l | GR_LEX};
            lhs[k] = g->lex.data[l].ignore ? ign : nnt0 + 2 + l;
            if (add_rule(o, lhs[k], pre, 2, &dots[k]))
                goto out;
            k++;
        }
    }
    r = index_rules(o, lhs, dots, k);
out:
    free(lhs);
    free(dots);
    free(rhs);
    return r;
}

/* ---- lexemes through PCRE2 ------------------------------------------------------ */

/* A ^ that begins the pattern and a $ that ends it always hold for a
 * whole lexeme; dropped, they need no care when PCRE2 matches inside a
 * longer text. */
static void strip_anchors(const char *re, size_t *b, size_t *e)
{
    size_t n = strlen(re), s = re[0] == '^';
    if (n > s && re[n - 1] == '$') {
        size_t bs = 0;
        while (n - 1 - bs > s && re[n - 2 - bs] == '\\')
            bs++;
        if (bs % 2 == 0)
            n--;
    }
    *b = s;
    *e = n;
}

static pcre2_code *compile(go_t *o, const gr_lexeme_t *lx, const char *fmt)
{
    size_t b, e;
    strip_anchors(lx->regex, &b, &e);
    tb_buf_t pat = {0};
    size_t need = (e - b) + 16;
    if (tb_buf_reserve(&pat, need)) {
        fail(o, "out of memory");
        return NULL;
    }
    snprintf((char *)pat.data, need, fmt, (int)(e - b), lx->regex + b);
    int code;
    PCRE2_SIZE off;
    /* No auto-possessification: it keeps pcre2_dfa_match from listing the
     * shorter match ends. */
    pcre2_code *c = pcre2_compile(pat.data, PCRE2_ZERO_TERMINATED,
                                  PCRE2_UTF | PCRE2_ANCHORED | PCRE2_NO_START_OPTIMIZE |
                                      PCRE2_NO_AUTO_POSSESS | PCRE2_DOLLAR_ENDONLY,
                                  &code, &off, NULL);
    if (!c) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(code, msg, sizeof msg);
        fail(o, "lexeme %s: PCRE2 refuses '%s': %s", lx->name, (char *)pat.data, (char *)msg);
    }
    tb_buf_free(&pat);
    return c;
}

/* 1 if s[0..n) is a prefix of a match of lexeme l (partial) or a match
 * (!partial); 0 if not; -1 on a PCRE2 error.  s is valid UTF-8 unless
 * check asks PCRE2 to look. */
static int anch_match(go_t *o, uint32_t l, const uint8_t *s, size_t n, int partial, int check)
{
    if (partial && n == 0)
        return 1; /* a lexeme matches some string */
    int rc = pcre2_match(o->re[l].anch, s, n, 0,
                         (partial ? PCRE2_PARTIAL_HARD : 0) | (check ? 0 : PCRE2_NO_UTF_CHECK),
                         o->md, NULL);
    if (rc >= 0 || (partial && rc == PCRE2_ERROR_PARTIAL))
        return 1;
    if (rc == PCRE2_ERROR_NOMATCH || rc == PCRE2_ERROR_PARTIAL)
        return 0;
    return fail(o, "PCRE2 error %d matching lexeme %u", rc, l);
}

int go_lexeme_viable(go_t *o, uint32_t lex, const uint8_t *s, size_t n)
{
    return anch_match(o, lex, s, n, 1, 1);
}

int go_lexeme_full(go_t *o, uint32_t lex, const uint8_t *s, size_t n)
{
    return anch_match(o, lex, s, n, 0, 1);
}

#define GO_PARTIAL (-2)

/* Does p[0..n) hold a $ outside a character class? */
static int has_dollar(const char *p, size_t n)
{
    int in_class = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\\') {
            i++;
        } else if (in_class) {
            in_class = p[i] != ']';
        } else if (p[i] == '[') {
            /* A ] right after [ or [^ is a literal. */
            i += i + 1 < n && p[i + 1] == '^';
            i += i + 1 < n && p[i + 1] == ']';
            in_class = 1;
        } else if (p[i] == '$') {
            return 1;
        }
    }
    return 0;
}

/* lex_ends for a lexeme with an inner $: every candidate end e of
 * text[p..q) at a character boundary, while text[p..e) can begin a match,
 * is tried as a whole match. */
static int lex_ends_each(go_t *o, uint32_t l, size_t p, size_t q, int partial)
{
    const uint8_t *t = o->text.data;
    o->ends.len = 0;
    for (size_t e = p + 1; e <= q; e++) {
        if (e < q && (t[e] & 0xC0) == 0x80)
            continue;
        int r = anch_match(o, l, t + p, e - p, 1, 0);
        if (r <= 0)
            return r < 0 ? -1 : (int)o->ends.len;
        if ((r = anch_match(o, l, t + p, e - p, 0, 0)) < 0)
            return -1;
        if (r && tb_vec_push(&o->ends, e))
            return fail(o, "out of memory");
    }
    return partial ? GO_PARTIAL : (int)o->ends.len;
}

/* The ends of every match of lexeme l in text[p..q) into o->ends (as text
 * positions), returning how many; with partial, GO_PARTIAL instead when
 * the end q is reached while a match may go on.  -1 on failure. */
static int lex_ends(go_t *o, uint32_t l, size_t p, size_t q, int partial)
{
    if (o->re[l].inner_dollar)
        return lex_ends_each(o, l, p, q, partial);
    int rc;
    for (;;) {
        rc = pcre2_dfa_match(o->re[l].all, o->text.data + p, q - p, 0,
                             PCRE2_NO_UTF_CHECK | (partial ? PCRE2_PARTIAL_HARD : 0), o->dmd,
                             NULL, o->ws, o->wsn);
        if (rc == PCRE2_ERROR_DFA_WSSIZE) {
            int *ws = o->wsn < (1u << 24) ? realloc(o->ws, 2 * o->wsn * sizeof *ws) : NULL;
            if (!ws)
                return fail(o, "PCRE2 DFA matching of lexeme %u needs too much memory", l);
            o->ws = ws;
            o->wsn *= 2;
            continue;
        }
        if (rc == 0) { /* more match ends than the match data holds */
            pcre2_match_data *md = pcre2_match_data_create(o->dmd_pairs * 2, NULL);
            if (!md)
                return fail(o, "out of memory");
            pcre2_match_data_free(o->dmd);
            o->dmd = md;
            o->dmd_pairs *= 2;
            continue;
        }
        break;
    }
    if (rc == PCRE2_ERROR_NOMATCH)
        return 0;
    if (rc == PCRE2_ERROR_PARTIAL && partial)
        return GO_PARTIAL;
    if (rc < 0)
        return fail(o, "PCRE2 DFA error %d matching lexeme %u", rc, l);
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(o->dmd);
    o->ends.len = 0;
    for (int i = 0; i < rc; i++)
        if (ov[2 * i + 1] > 0 && tb_vec_push(&o->ends, p + ov[2 * i + 1]))
            return fail(o, "out of memory");
    return (int)o->ends.len;
}

/* ---- a text that ends inside a character ---------------------------------------- */

/* If t[0..k) can begin a character without completing it, the code points
 * that begin so, [*lo, *hi] (a range: UTF-8 keeps code point order). */
static int tail_range(const uint8_t *t, size_t k, uint32_t *lo, uint32_t *hi)
{
    uint8_t c = t[0];
    size_t need = tb_utf8_lead_len(c);
    if (c < 0xC2 || c > 0xF4 || k >= need)
        return 0;
    /* The second byte's range excludes overlong forms, surrogates and
     * code points past U+10FFFF. */
    uint8_t b2lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
    uint8_t b2hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    uint8_t mn[4], mx[4];
    for (size_t i = 0; i < need; i++) {
        uint8_t l = i == 0 ? c : i == 1 ? b2lo : 0x80, h = i == 0 ? c : i == 1 ? b2hi : 0xBF;
        if (i < k && (t[i] < l || t[i] > h))
            return 0;
        mn[i] = i < k ? t[i] : l;
        mx[i] = i < k ? t[i] : h;
    }
    tb_utf8_decode(mn, need, lo);
    tb_utf8_decode(mx, need, hi);
    return 1;
}

/* \xHH \x{H..} \uHHHH \u{H..} \o{O..} at p[i] (the letter after the
 * backslash): the code point it names. */
static unsigned long escaped_cp(const char *p, size_t n, size_t i)
{
    int brace = i + 1 < n && p[i + 1] == '{';
    size_t len = brace ? 12 : p[i] == 'x' ? 2 : 4;
    char num[16] = {0};
    for (size_t m = 0; m < len && i + 1 + brace + m < n && p[i + 1 + brace + m] != '}'; m++)
        num[m] = p[i + 1 + brace + m];
    return strtoul(num, NULL, p[i] == 'o' ? 8 : 16);
}

/* The escape whose letter is p[i] (after a backslash), for read_chars:
 * a named code point is a cut, a property a probe.  Returns where reading
 * goes on, or 0 on failure. */
static size_t read_escape(go_t *o, lexchars_t *lc, const char *p, size_t n, size_t i)
{
    if (strchr("xuo", p[i])) {
        unsigned long v = escaped_cp(p, n, i);
        if (v >= 0x80 && tb_vec_push(&lc->cuts, (uint32_t)v))
            return fail(o, "out of memory"), 0;
        return i + 1;
    }
    if (p[i] == 'p' || p[i] == 'P') {
        const char *end = i + 1 < n && p[i + 1] == '{' ? memchr(p + i, '}', n - i) : p + i + 1;
        pcre2_code *pr = NULL;
        int code;
        PCRE2_SIZE off;
        if (end && end < p + n)
            pr = pcre2_compile((PCRE2_SPTR)p + i - 1, (size_t)(end - p) + 2 - i,
                               PCRE2_UTF | PCRE2_ANCHORED, &code, &off, NULL);
        if (!pr || tb_vec_push(&lc->probes, pr)) {
            pcre2_code_free(pr);
            lc->every = 1; /* a property this reading cannot follow */
        }
        return end && end < p + n ? (size_t)(end - p) + 1 : n;
    }
    if (strchr("hHvVRXbBNCQkg0123456789", p[i]))
        lc->every = 1;
    /* Other escapes are ASCII; an escaped non-ASCII character is read as
     * a literal next. */
    return i + ((uint8_t)p[i] < 0x80);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Reads lexeme l's pattern p[0..n) into o->chars[l] (lexchars_t). */
static int read_chars(go_t *o, uint32_t l, const char *p, size_t n)
{
    lexchars_t *lc = &o->chars[l];
    for (size_t i = 0; i < n && !lc->every;) {
        uint32_t cp;
        if ((uint8_t)p[i] >= 0x80) {
            size_t k = tb_utf8_decode((const uint8_t *)p + i, n - i, &cp);
            if (!k)
                return fail(o, "lexeme %u: invalid UTF-8 in its pattern", l);
            if (tb_vec_push(&lc->cuts, cp))
                return fail(o, "out of memory");
            i += k;
        } else if (p[i] == '(' && i + 1 < n && p[i + 1] == '*') {
            lc->every = 1; /* (*UCP) and other verbs */
        } else if (p[i] == '(' && i + 1 < n && p[i + 1] == '?') {
            /* Option letters: (?i) folds case, which cuts cannot follow. */
            for (i += 2; i < n && (strchr("-^", p[i]) || (unsigned)((p[i] | 0x20) - 'a') < 26u);
                 i++)
                lc->every |= p[i] == 'i';
        } else if (p[i] == '\\' && i + 1 < n) {
            if (!(i = read_escape(o, lc, p, n, i + 1)))
                return -1;
        } else {
            i++;
        }
    }
    if (lc->probes.len > 64)
        lc->every = 1;
    if (lc->cuts.len)
        qsort(lc->cuts.data, lc->cuts.len, sizeof *lc->cuts.data, cmp_u32);
    return 0;
}

/* Which of lexeme l's probes code point cp has (bit i: probe i). */
static uint64_t signature(go_t *o, uint32_t l, uint32_t cp)
{
    uint8_t u[4];
    size_t len = tb_utf8_encode(cp, u);
    uint64_t sig = 0;
    const lexchars_t *lc = &o->chars[l];
    for (size_t i = 0; i < lc->probes.len; i++)
        if (pcre2_match(lc->probes.data[i], u, len, 0, 0, o->md, NULL) >= 0)
            sig |= 1ull << i;
    return sig;
}

static int rep_push(go_t *o, uint32_t cp)
{
    return tb_vec_push(&o->reps, cp) ? fail(o, "out of memory") : 0;
}

/* The code points that stand for all completions of the cut character
 * t[0..k) in lexeme l's eyes: *first and *count in o->reps (cached). */
static int reps(go_t *o, uint32_t l, const uint8_t *t, size_t k, size_t *first, size_t *count)
{
    uint64_t key = (uint64_t)o->exhaustive << 62 | (uint64_t)l << 32 | (uint64_t)k << 24, val;
    for (size_t i = 0; i < k; i++)
        key |= (uint64_t)t[i] << (8 * (2 - i));
    if (tb_u64map_get(&o->rep_map, key, &val)) {
        *first = val >> 32;
        *count = val & 0xffffffffu;
        return 0;
    }
    uint32_t lo, hi;
    tail_range(t, k, &lo, &hi);
    const lexchars_t *lc = &o->chars[l];
    size_t start = o->reps.len, c = 0;
    for (uint32_t cp = lo; cp <= hi;) {
        while (c < lc->cuts.len && lc->cuts.data[c] < cp)
            c++;
        if (lc->every || o->exhaustive || (c < lc->cuts.len && lc->cuts.data[c] == cp)) {
            if (rep_push(o, cp++))
                return -1;
            continue;
        }
        /* cp..end: no cut inside; a new representative where the
         * probes' verdict changes. */
        uint32_t end = c < lc->cuts.len && lc->cuts.data[c] <= hi ? lc->cuts.data[c] - 1 : hi;
        uint64_t sig = signature(o, l, cp);
        if (rep_push(o, cp))
            return -1;
        for (uint32_t x = cp + 1; lc->probes.len && x <= end; x++) {
            uint64_t sx = signature(o, l, x);
            if (sx != sig && rep_push(o, x))
                return -1;
            sig = sx;
        }
        cp = end + 1;
    }
    *first = start;
    *count = o->reps.len - start;
    if (tb_u64map_put(&o->rep_map, key, (uint64_t)start << 32 | *count) < 0)
        return fail(o, "out of memory");
    return 0;
}

/* Is s[0..m) (valid UTF-8) followed by some completion of the cut
 * character t[0..k) a prefix of a match of lexeme l?  k == 0: is s. */
static int viable_tail(go_t *o, uint32_t l, const uint8_t *s, size_t m, const uint8_t *t,
                       size_t k)
{
    int r = anch_match(o, l, s, m, 1, 0);
    if (k == 0 || r <= 0)
        return r;
    size_t first, count;
    if (reps(o, l, t, k, &first, &count))
        return -1;
    o->cbuf.len = 0;
    if (tb_buf_reserve(&o->cbuf, m + 4))
        return fail(o, "out of memory");
    memcpy(o->cbuf.data, s, m);
    for (size_t i = 0; i < count; i++) {
        size_t len = tb_utf8_encode(o->reps.data[first + i], o->cbuf.data + m);
        if ((r = anch_match(o, l, o->cbuf.data, m + len, 1, 0)) != 0)
            return r;
    }
    return 0;
}

/* Is text[j..n) a prefix of a match of lexeme l? */
static int viable_end(go_t *o, uint32_t l, size_t j)
{
    return viable_tail(o, l, o->text.data + j, o->v - j, o->text.data + o->v, o->n - o->v);
}

/* The bytes that can follow s[0..m) (valid UTF-8) in a match of lexeme l,
 * into on[]: ASCII, and the lead bytes of characters that can. */
static int next_bytes(go_t *o, uint32_t l, const uint8_t *s, size_t m, uint64_t on[4])
{
    memset(on, 0, 4 * sizeof *on);
    tb_buf_t b = {0};
    if (tb_buf_reserve(&b, m + 1))
        return fail(o, "out of memory");
    memcpy(b.data, s, m);
    for (unsigned c = 0; c < 0xF5; c++) {
        if (c >= 0x80 && c < 0xC2)
            continue;
        b.data[m] = (uint8_t)c;
        int r = c < 0x80 ? anch_match(o, l, b.data, m + 1, 1, 0)
                         : viable_tail(o, l, b.data, m, b.data + m, 1);
        if (r < 0) {
            tb_buf_free(&b);
            return -1;
        }
        on[c / 64] |= (uint64_t)r << (c % 64);
    }
    tb_buf_free(&b);
    return 0;
}

static int compile_lexemes(go_t *o, const gr_cfg_t *g)
{
    size_t nl = o->nlex ? o->nlex : 1;
    o->re = calloc(nl, sizeof *o->re);
    o->chars = calloc(nl, sizeof *o->chars);
    o->begin = calloc(nl, sizeof *o->begin);
    if (!o->re || !o->chars || !o->begin || tb_u64map_init(&o->rep_map, 256))
        return fail(o, "out of memory");
    for (uint32_t l = 0; l < o->nlex; l++) {
        const gr_lexeme_t *lx = &g->lex.data[l];
        size_t b, e;
        strip_anchors(lx->regex, &b, &e);
        o->re[l].inner_dollar = has_dollar(lx->regex + b, e - b);
        if (!(o->re[l].all = compile(o, lx, "(?:%.*s)")) ||
            !(o->re[l].anch = compile(o, lx, "(?:%.*s)\\z")) ||
            read_chars(o, l, lx->regex + b, e - b) ||
            next_bytes(o, l, (const uint8_t *)"", 0, o->begin[l]))
            return -1;
        int empty = anch_match(o, l, (const uint8_t *)"", 0, 0, 0);
        if (empty)
            return empty < 0 ? -1
                             : fail(o, "lexeme %s (/%s/) matches the empty string", lx->name,
                                    lx->regex);
    }
    return 0;
}

go_t *go_new(const gr_cfg_t *g, char *err, size_t errlen)
{
    go_t *o = calloc(1, sizeof *o);
    if (!o) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    o->max_items = GO_MAX_ITEMS;
    o->dmd_pairs = 64;
    o->wsn = 1000;
    o->md = pcre2_match_data_create(1, NULL);
    o->dmd = pcre2_match_data_create(o->dmd_pairs, NULL);
    o->ws = malloc(o->wsn * sizeof *o->ws);
    if (!g->finished)
        fail(o, "%s: the grammar is not finished (gr_cfg_finish)", g->source);
    else if (!o->md || !o->dmd || !o->ws)
        fail(o, "out of memory");
    else if (!build_grammar(o, g) && !compile_lexemes(o, g)) {
        o->pmark = calloc(o->nnt, sizeof *o->pmark);
        o->lmark = calloc(o->nlex ? o->nlex : 1, sizeof *o->lmark);
        if (o->pmark && o->lmark)
            return o;
        fail(o, "out of memory");
    }
    snprintf(err, errlen, "%s", o->err);
    go_free(o);
    return NULL;
}

void go_free(go_t *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->nsets; i++) {
        free(o->sets[i].it.data);
        free(o->sets[i].hash);
        free(o->sets[i].empty.data);
    }
    free(o->sets);
    for (uint32_t l = 0; o->re && l < o->nlex; l++) {
        pcre2_code_free(o->re[l].all);
        pcre2_code_free(o->re[l].anch);
    }
    for (uint32_t l = 0; o->chars && l < o->nlex; l++) {
        for (size_t i = 0; i < o->chars[l].probes.len; i++)
            pcre2_code_free(o->chars[l].probes.data[i]);
        free(o->chars[l].probes.data);
        free(o->chars[l].cuts.data);
    }
    free(o->re);
    free(o->chars);
    free(o->begin);
    free(o->reps.data);
    if (o->rep_map.keys)
        tb_u64map_free(&o->rep_map);
    pcre2_match_data_free(o->md);
    pcre2_match_data_free(o->dmd);
    free(o->ws);
    free(o->dnext.data);
    free(o->dlhs.data);
    free(o->rbeg);
    free(o->first);
    free(o->pmark);
    free(o->lmark);
    free(o->exp.data);
    free(o->ends.data);
    free(o->live.data);
    tb_buf_free(&o->text);
    tb_buf_free(&o->cbuf);
    free(o);
}

/* ---- the chart -------------------------------------------------------------------- */

static size_t item_hash(uint32_t dot, uint32_t origin, size_t mask)
{
    uint64_t h = ((uint64_t)dot << 32 | origin) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 32) & mask;
}

static int rehash(go_t *o, set_t *s)
{
    size_t cap = s->hcap ? s->hcap * 2 : 16;
    uint32_t *h = calloc(cap, sizeof *h);
    if (!h)
        return fail(o, "out of memory");
    for (size_t i = 0; i < s->it.len; i++) {
        size_t k = item_hash(s->it.data[i].dot, s->it.data[i].origin, cap - 1);
        while (h[k])
            k = (k + 1) & (cap - 1);
        h[k] = (uint32_t)i + 1;
    }
    free(s->hash);
    s->hash = h;
    s->hcap = cap;
    return 0;
}

/* Adds item (dot, origin) to set e unless it is there. */
static int add(go_t *o, size_t e, uint32_t dot, uint32_t origin)
{
    set_t *s = &o->sets[e];
    if (2 * (s->it.len + 1) > s->hcap && rehash(o, s))
        return -1;
    size_t k = item_hash(dot, origin, s->hcap - 1);
    for (; s->hash[k]; k = (k + 1) & (s->hcap - 1)) {
        const item_t *x = &s->it.data[s->hash[k] - 1];
        if (x->dot == dot && x->origin == origin)
            return 0;
    }
    if (o->nitems >= o->max_items)
        return fail(o, "the Earley chart passed its limit of %zu items (at byte %zu)",
                    o->max_items, e);
    item_t it = {dot, origin};
    if (tb_vec_push(&s->it, it))
        return fail(o, "out of memory");
    s->hash[k] = (uint32_t)s->it.len;
    o->nitems++;
    return 0;
}

static int has(const set_t *s, uint32_t dot, uint32_t origin)
{
    if (!s->hcap)
        return 0;
    for (size_t k = item_hash(dot, origin, s->hcap - 1); s->hash[k];
         k = (k + 1) & (s->hcap - 1)) {
        const item_t *x = &s->it.data[s->hash[k] - 1];
        if (x->dot == dot && x->origin == origin)
            return 1;
    }
    return 0;
}

static int is_empty_at(const set_t *s, uint32_t a)
{
    for (size_t i = 0; i < s->empty.len; i++)
        if (s->empty.data[i] == a)
            return 1;
    return 0;
}

static void clear_sets(go_t *o, size_t from, size_t to)
{
    for (size_t e = from; e < to && e < o->nsets; e++) {
        set_t *s = &o->sets[e];
        o->nitems -= s->it.len;
        s->it.len = 0;
        s->empty.len = 0;
        if (s->hcap)
            memset(s->hash, 0, s->hcap * sizeof *s->hash);
    }
}

/* Room for sets 0..n, all empty; the text is s[0..n) with room for
 * `extra` more bytes. */
static int start(go_t *o, const uint8_t *s, size_t n, size_t extra)
{
    clear_sets(o, 0, o->used);
    o->used = 0;
    o->err[0] = 0;
    size_t want = n + extra + 1;
    if (want > o->nsets) {
        set_t *ns = realloc(o->sets, want * sizeof *ns);
        if (!ns)
            return fail(o, "out of memory");
        memset(ns + o->nsets, 0, (want - o->nsets) * sizeof *ns);
        o->sets = ns;
        o->nsets = want;
    }
    o->used = want;
    o->text.len = 0;
    if (tb_buf_reserve(&o->text, n + extra + 1) || tb_buf_put(&o->text, s, n))
        return fail(o, "out of memory");
    o->n = n;
    o->v = tb_utf8_validate(s, n);
    return 0;
}

static uint32_t next_stamp(go_t *o)
{
    if (++o->stamp == 0) {
        memset(o->pmark, 0, o->nnt * sizeof *o->pmark);
        memset(o->lmark, 0, (o->nlex ? o->nlex : 1) * sizeof *o->lmark);
        o->stamp = 1;
    }
    return o->stamp;
}

/* Completer: B, begun at set origin, is complete at set e. */
static int complete(go_t *o, size_t e, uint32_t b, uint32_t origin)
{
    set_t *s = &o->sets[e];
    if (origin == e && !is_empty_at(s, b) && tb_vec_push(&s->empty, b))
        return fail(o, "out of memory");
    /* By index: when origin == e, adding grows the set being read. */
    for (size_t k = 0; k < o->sets[origin].it.len; k++) {
        item_t y = o->sets[origin].it.data[k];
        if (o->dnext.data[y.dot] == b && add(o, e, y.dot + 1, y.origin))
            return -1;
    }
    return 0;
}

/* Predictor and completer to a fixpoint over set e (its items are the
 * work list). */
static int closure(go_t *o, size_t e)
{
    uint32_t stamp = next_stamp(o);
    for (size_t k = 0; k < o->sets[e].it.len; k++) {
        item_t it = o->sets[e].it.data[k];
        uint32_t x = o->dnext.data[it.dot];
        if (x == END_SYM) {
            if (complete(o, e, o->dlhs.data[it.dot], it.origin))
                return -1;
        } else if (!gr_is_lex(x)) {
            if (o->pmark[x] != stamp) {
                o->pmark[x] = stamp;
                for (uint32_t r = o->rbeg[x]; r < o->rbeg[x + 1]; r++)
                    if (add(o, e, o->first[r], (uint32_t)e))
                        return -1;
            }
            /* x already derived the empty string here (Aycock-Horspool). */
            if (is_empty_at(&o->sets[e], x) && add(o, e, it.dot + 1, it.origin))
                return -1;
        }
    }
    return 0;
}

/* The distinct lexemes items of set e expect, into o->exp. */
static int expected(go_t *o, size_t e)
{
    uint32_t stamp = next_stamp(o);
    o->exp.len = 0;
    const set_t *s = &o->sets[e];
    for (size_t k = 0; k < s->it.len; k++) {
        uint32_t x = o->dnext.data[s->it.data[k].dot];
        if (x == END_SYM || !gr_is_lex(x) || o->lmark[gr_index(x)] == stamp)
            continue;
        o->lmark[gr_index(x)] = stamp;
        if (tb_vec_push(&o->exp, gr_index(x)))
            return fail(o, "out of memory");
    }
    return 0;
}

/* Scanner: the items of set j expecting lexeme l, advanced to set f. */
static int advance(go_t *o, size_t j, uint32_t l, size_t f)
{
    const set_t *s = &o->sets[j];
    for (size_t k = 0; k < s->it.len; k++) {
        item_t it = s->it.data[k];
        if (o->dnext.data[it.dot] == (l | GR_LEX) && add(o, f, it.dot + 1, it.origin))
            return -1;
    }
    return 0;
}

/* Can a match of lexeme l begin with text[j] (1 at the end of the text)?
 * A filter that spares PCRE2 runs bound to fail. */
static int can_begin(const go_t *o, uint32_t l, size_t j)
{
    if (j >= o->n)
        return 1;
    uint8_t b = o->text.data[j];
    return (int)(o->begin[l][b / 64] >> (b % 64)) & 1;
}

/* Advances set j over every match of lexeme l in text[j..v) that ends
 * after byte `after`. */
static int scan_ends(go_t *o, size_t j, uint32_t l, size_t after)
{
    if (!can_begin(o, l, j))
        return 0;
    int k = lex_ends(o, l, j, o->v, 0);
    for (int i = 0; i < k; i++)
        if (o->ends.data[i] > after && advance(o, j, l, o->ends.data[i]))
            return -1;
    return k < 0 ? -1 : 0;
}

/* The chart of sets from..o->v: closure, then scanning, set by set. */
static int build(go_t *o, size_t from)
{
    if (from == 0 && add(o, 0, o->start_dot, 0))
        return -1;
    for (size_t e = from; e <= o->v; e++) {
        if (!o->sets[e].it.len)
            continue;
        if (closure(o, e) || expected(o, e))
            return -1;
        for (size_t i = 0; i < o->exp.len; i++)
            if (scan_ends(o, e, o->exp.data[i], e))
                return -1;
    }
    return 0;
}

/* Loads s[0..n) (room for `extra` more bytes); 0 if it cannot begin a
 * sentence because its UTF-8 is invalid, 1 if it may. */
static int load(go_t *o, const uint8_t *s, size_t n, size_t extra)
{
    if (start(o, s, n, extra))
        return -1;
    uint32_t lo, hi;
    return o->v == n || tail_range(s + o->v, n - o->v, &lo, &hi);
}

/* ---- the three questions ------------------------------------------------------------- */

int go_sentence(go_t *o, const uint8_t *s, size_t n)
{
    int r = load(o, s, n, 0);
    if (r <= 0 || o->v < n)
        return r < 0 ? -1 : 0;
    if (build(o, 0))
        return -1;
    return has(&o->sets[n], o->start_end, 0);
}

int go_prefix(go_t *o, const uint8_t *s, size_t n)
{
    int r = load(o, s, n, 0);
    if (r <= 0)
        return r;
    if (build(o, 0))
        return -1;
    if (o->v == n && o->sets[n].it.len)
        return 1;
    for (size_t j = 0; j <= o->v; j++) {
        if (!o->sets[j].it.len)
            continue;
        if (expected(o, j))
            return -1;
        for (size_t i = 0; i < o->exp.len; i++)
            if ((r = viable_end(o, o->exp.data[i], j)) != 0)
                return r;
    }
    return 0;
}

/* go_mask's test of lexeme l expected at set j against the text extended
 * past the prefix's end `base`: 1 if the text is a prefix of a match
 * from j (or a match of it reaches the end), else its matches that end
 * past base advance set j's items. */
static int scan_ext(go_t *o, size_t j, uint32_t l, size_t base)
{
    if (!can_begin(o, l, j))
        return 0;
    if (o->v < o->n)
        return scan_ends(o, j, l, base) ? -1 : viable_end(o, l, j);
    int k = lex_ends(o, l, j, o->n, 1);
    if (k == GO_PARTIAL)
        return 1;
    for (int i = 0; i < k; i++) {
        if (o->ends.data[i] == o->n)
            return 1; /* the last set will not be empty */
        if (o->ends.data[i] > base && advance(o, j, l, o->ends.data[i]))
            return -1;
    }
    return k < 0 ? -1 : 0;
}

/* Is the prefix (text[0..base), charted) followed by text[base..n) a
 * prefix of a sentence?  Continues the chart from the live lexemes and
 * through the sets past base. */
static int extend(go_t *o, size_t base)
{
    if (o->n == base && o->v == base && o->sets[base].it.len)
        return 1;
    uint8_t b = o->n > base ? o->text.data[base] : 0;
    for (size_t i = 0; i < o->live.len; i++) {
        const live_t *lv = &o->live.data[i];
        if (o->n > base && !((lv->on[b / 64] >> (b % 64)) & 1))
            continue; /* its match cannot take the token's first byte */
        int r = scan_ext(o, lv->j, lv->lex, base);
        if (r)
            return r;
    }
    for (size_t e = base + 1; e <= o->v; e++) {
        if (!o->sets[e].it.len)
            continue;
        if (e == o->n)
            return 1;
        if (closure(o, e) || expected(o, e))
            return -1;
        for (size_t i = 0; i < o->exp.len; i++) {
            int r = scan_ext(o, e, o->exp.data[i], base);
            if (r)
                return r;
        }
    }
    return 0;
}

/* The live lexemes of the charted prefix text[0..v): those expected at
 * some set j that can still read text[j..v) as the start of a match, with
 * the bytes that can come next (all when the prefix ends inside a
 * character). */
static int find_live(go_t *o)
{
    o->live.len = 0;
    for (size_t j = 0; j <= o->v; j++) {
        if (!o->sets[j].it.len)
            continue;
        if (expected(o, j))
            return -1;
        for (size_t i = 0; i < o->exp.len; i++) {
            live_t lv = {(uint32_t)j, o->exp.data[i], {~0ull, ~0ull, ~0ull, ~0ull}};
            int r = anch_match(o, lv.lex, o->text.data + j, o->v - j, 1, 0);
            if (r > 0 && o->v == o->n)
                r = next_bytes(o, lv.lex, o->text.data + j, o->v - j, lv.on) ? -1 : 1;
            if (r < 0)
                return -1;
            if (r && tb_vec_push(&o->live, lv))
                return fail(o, "out of memory");
        }
    }
    return 0;
}

int go_mask(go_t *o, const uint8_t *prefix, size_t n, const uint8_t *const *tokens,
            const uint32_t *lens, size_t ntok, uint8_t *allowed_out)
{
    size_t maxlen = 0;
    for (size_t i = 0; i < ntok; i++)
        maxlen = lens[i] > maxlen ? lens[i] : maxlen;
    memset(allowed_out, 0, ntok);
    int r = load(o, prefix, n, maxlen);
    if (r <= 0)
        return r;
    if (build(o, 0) || find_live(o))
        return -1;
    size_t v0 = o->v;
    for (size_t i = 0; i < ntok; i++) {
        o->text.len = n;
        if (tb_buf_put(&o->text, tokens[i], lens[i]))
            return fail(o, "out of memory");
        o->n = n + lens[i];
        o->v = v0 + tb_utf8_validate(o->text.data + v0, o->n - v0);
        uint32_t lo, hi;
        r = o->v == o->n || tail_range(o->text.data + o->v, o->n - o->v, &lo, &hi);
        if (r)
            r = extend(o, n);
        clear_sets(o, n + 1, o->n + 1);
        if (r < 0)
            return -1;
        allowed_out[i] = (uint8_t)r;
    }
    return 0;
}

int go_mask_keys(go_t *o, const uint8_t *prefix, size_t n, const trie_keys_t *keys,
                 tb_bitset_t *out)
{
    const uint8_t **tok = malloc((keys->n ? keys->n : 1) * sizeof *tok);
    uint32_t *len = malloc((keys->n ? keys->n : 1) * sizeof *len);
    uint8_t *allowed = malloc(keys->n ? keys->n : 1);
    int r = -1;
    if (!tok || !len || !allowed) {
        fail(o, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < keys->n; i++) {
        tok[i] = keys->keys[i].s;
        len[i] = keys->keys[i].len;
    }
    if (go_mask(o, prefix, n, tok, len, keys->n, allowed))
        goto out;
    tb_bitset_clear_all(out);
    for (size_t i = 0; i < keys->n; i++)
        if (allowed[i])
            tb_bitset_set(out, keys->keys[i].id);
    for (size_t a = 0; a < keys->nalias; a++)
        if (tb_bitset_get(out, keys->alias[2 * a + 1]))
            tb_bitset_set(out, keys->alias[2 * a]);
    r = 0;
out:
    free(tok);
    free(len);
    free(allowed);
    return r;
}
