/*
 * cfg: building, checking and printing the internal grammar (cfg.h).
 */
#include "cfg.h"

#include <stdlib.h>
#include <string.h>

int gr_cfg_init(gr_cfg_t *g, const char *source, tb_err_t *err)
{
    memset(g, 0, sizeof *g);
    g->source = strdup(source ? source : "<grammar>");
    if (!g->source || tb_strmap_init(&g->lex_by_regex, 64) ||
        tb_strmap_init(&g->nt_by_name, 64)) {
        gr_cfg_free(g);
        return tb_fail(err, "out of memory");
    }
    return 0;
}

void gr_cfg_free(gr_cfg_t *g)
{
    for (size_t i = 0; i < g->lex.len; i++) {
        free(g->lex.data[i].regex);
        free(g->lex.data[i].name);
        free(g->lex.data[i].ids);
    }
    for (size_t i = 0; i < g->nt.len; i++)
        free(g->nt.data[i].name);
    for (size_t i = 0; i < g->keys.len; i++)
        free(g->keys.data[i]);
    free(g->lex.data);
    free(g->nt.data);
    free(g->rule.data);
    free(g->sym.data);
    free(g->set.data);
    free(g->set_member.data);
    free(g->set_required.data);
    free(g->keys.data);
    tb_strmap_free(&g->lex_by_regex);
    tb_strmap_free(&g->nt_by_name);
    free(g->source);
    free(g->json_char);
    memset(g, 0, sizeof *g);
}

static int too_big(const gr_cfg_t *g, tb_err_t *err)
{
    if (g->lex.len + g->nt.len + g->sym.len < GR_MAX_SYMBOLS)
        return 0;
    return tb_fail(err, "%s: grammar too large (more than %u symbols)", g->source,
                   GR_MAX_SYMBOLS);
}

/* The lexeme of regex of kind 'l' (plain), 'i' (ignored), 'z' (lazy) or
 * 't' (token ids; keyed by its name, since all have one regex). */
static int kind_lexeme(gr_cfg_t *g, const char *regex, const char *name, char kind,
                       gr_pos_t pos, gr_sym_t *out, tb_err_t *err)
{
    const char *text = kind == 't' ? name : regex;
    size_t n = strlen(text);
    /* The key is the kind then the regex: one lexeme per pair. */
    char *key = malloc(n + 2);
    if (!key)
        return tb_fail(err, "out of memory");
    key[0] = kind;
    memcpy(key + 1, text, n + 1);
    int32_t found = tb_strmap_get(&g->lex_by_regex, (const uint8_t *)key, n + 1);
    if (found >= 0) {
        free(key);
        *out = (gr_sym_t)found | GR_LEX;
        return 0;
    }
    if (too_big(g, err)) {
        free(key);
        return -1;
    }
    gr_lexeme_t lx = {.regex = strdup(regex), .name = strdup(name ? name : regex),
                      .ignore = kind == 'i', .lazy = kind == 'z', .pos = pos};
    if (!lx.regex || !lx.name || tb_vec_push(&g->keys, key) ||
        tb_vec_push(&g->lex, lx)) {
        if (g->keys.len == 0 || g->keys.data[g->keys.len - 1] != key)
            free(key);
        free(lx.regex);
        free(lx.name);
        return tb_fail(err, "out of memory");
    }
    uint32_t id = (uint32_t)(g->lex.len - 1);
    if (tb_strmap_put(&g->lex_by_regex, (const uint8_t *)key, n + 1, (int32_t)id) < 0)
        return tb_fail(err, "out of memory");
    *out = id | GR_LEX;
    return 0;
}

int gr_cfg_lexeme(gr_cfg_t *g, const char *regex, const char *name, int ignore,
                  gr_pos_t pos, gr_sym_t *out, tb_err_t *err)
{
    return kind_lexeme(g, regex, name, ignore ? 'i' : 'l', pos, out, err);
}

int gr_cfg_token_lexeme(gr_cfg_t *g, const char *name, const gr_idrange_t *ids, size_t n,
                        gr_pos_t pos, gr_sym_t *out, tb_err_t *err)
{
    size_t before = g->lex.len;
    if (kind_lexeme(g, GR_TOKEN_REGEX, name, 't', pos, out, err))
        return -1;
    if (g->lex.len == before)
        return 0;
    gr_lexeme_t *lx = &g->lex.data[g->lex.len - 1];
    if (!(lx->ids = malloc(n * sizeof *ids)))
        return tb_fail(err, "out of memory");
    memcpy(lx->ids, ids, n * sizeof *ids);
    lx->nids = (uint32_t)n;
    g->ntoken_lexemes++;
    return 0;
}

int gr_cfg_lazy_lexeme(gr_cfg_t *g, const char *regex, const char *name, gr_pos_t pos,
                       gr_sym_t *out, tb_err_t *err)
{
    return kind_lexeme(g, regex, name, 'z', pos, out, err);
}

int gr_regex_escape(tb_buf_t *b, const uint8_t *s, size_t n)
{
    static const char meta[] = "\\^$.|?*+()[]{}/-";
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        int r;
        if (c < 0x20 || c == 0x7F) {
            char hex[5];
            snprintf(hex, sizeof hex, "\\x%02X", c);
            r = tb_buf_put(b, hex, 4);
        } else if (c < 0x80 && strchr(meta, c)) {
            uint8_t e[2] = {'\\', c};
            r = tb_buf_put(b, e, 2);
        } else {
            r = tb_buf_putc(b, c);
        }
        if (r)
            return -1;
    }
    return 0;
}

int gr_cfg_literal(gr_cfg_t *g, const uint8_t *s, size_t n, gr_pos_t pos,
                   gr_sym_t *out, tb_err_t *err)
{
    if (n == 0)
        return tb_fail(err, "%s:%u:%u: empty literal (a lexeme reads at least one byte)",
                       g->source, pos.line, pos.col);
    tb_buf_t re = {0}, name = {0};
    int r = -1;
    if (gr_regex_escape(&re, s, n) || tb_buf_putc(&re, 0) || tb_buf_putc(&name, '"') ||
        tb_buf_put(&name, s, n) || tb_buf_put(&name, "\"", 2))
        tb_fail(err, "out of memory");
    else
        r = gr_cfg_lexeme(g, (char *)re.data, (char *)name.data, 0, pos, out, err);
    tb_buf_free(&re);
    tb_buf_free(&name);
    return r;
}

static int nonterm_add(gr_cfg_t *g, char *name, gr_pos_t used, gr_sym_t *out, tb_err_t *err)
{
    if (too_big(g, err)) {
        free(name);
        return -1;
    }
    gr_nonterm_t nt = {.name = name, .used = used};
    if (tb_vec_push(&g->nt, nt)) {
        free(name);
        return tb_fail(err, "out of memory");
    }
    uint32_t id = (uint32_t)(g->nt.len - 1);
    if (tb_strmap_put(&g->nt_by_name, (const uint8_t *)name, strlen(name), (int32_t)id) < 0)
        return tb_fail(err, "out of memory");
    *out = id;
    return 0;
}

int gr_cfg_nonterm(gr_cfg_t *g, const char *name, size_t len, gr_pos_t pos,
                   gr_sym_t *out, tb_err_t *err)
{
    int32_t found = tb_strmap_get(&g->nt_by_name, (const uint8_t *)name, len);
    if (found >= 0) {
        gr_nonterm_t *nt = &g->nt.data[found];
        if (!nt->used.line && pos.line)
            nt->used = pos;
        *out = (gr_sym_t)found;
        return 0;
    }
    char *copy = strndup(name, len);
    if (!copy)
        return tb_fail(err, "out of memory");
    return nonterm_add(g, copy, pos, out, err);
}

int gr_cfg_fresh(gr_cfg_t *g, const char *base, gr_sym_t *out, tb_err_t *err)
{
    /* '#' never appears in a reader's names, so a fresh name is unique.
     * Written by hand: snprintf was a thousand instructions a name, and a
     * schema makes a thousand names (Kubernetes---kb_148). */
    size_t n = strlen(base);
    char digits[16], *name = malloc(n + sizeof digits + 1);
    if (!name)
        return tb_fail(err, "out of memory");
    size_t d = sizeof digits;
    for (unsigned v = ++g->fresh; d == sizeof digits || v; v /= 10)
        digits[--d] = (char)('0' + v % 10);
    memcpy(name, base, n);
    name[n] = '#';
    memcpy(name + n + 1, digits + d, sizeof digits - d);
    name[n + 1 + sizeof digits - d] = 0;
    return nonterm_add(g, name, (gr_pos_t){0, 0}, out, err);
}

int gr_cfg_rule(gr_cfg_t *g, gr_sym_t lhs, const gr_sym_t *rhs, size_t n,
                gr_pos_t pos, tb_err_t *err)
{
    if (gr_is_lex(lhs) || lhs >= g->nt.len)
        return tb_fail(err, "%s: internal: rule for a non-nonterminal", g->source);
    if (too_big(g, err))
        return -1;
    if (tb_vec_reserve(&g->sym, n ? n : 1) || tb_vec_reserve(&g->rule, 1))
        return tb_fail(err, "out of memory");
    gr_rule_t r = {.lhs = lhs, .off = (uint32_t)g->sym.len, .n = (uint32_t)n, .pos = pos};
    if (n)
        memcpy(g->sym.data + g->sym.len, rhs, n * sizeof *rhs);
    g->sym.len += n;
    g->rule.data[g->rule.len++] = r;
    gr_nonterm_t *nt = &g->nt.data[lhs];
    if (!nt->nrules++)
        nt->def = pos;
    return 0;
}

int gr_cfg_opt(gr_cfg_t *g, gr_sym_t x, const char *base, gr_sym_t *out, tb_err_t *err)
{
    gr_pos_t p = {0, 0};
    if (gr_cfg_fresh(g, base, out, err) || gr_cfg_rule(g, *out, &x, 1, p, err) ||
        gr_cfg_rule(g, *out, NULL, 0, p, err))
        return -1;
    return 0;
}

int gr_cfg_star(gr_cfg_t *g, gr_sym_t x, const char *base, gr_sym_t *out, tb_err_t *err)
{
    gr_pos_t p = {0, 0};
    if (gr_cfg_fresh(g, base, out, err))
        return -1;
    gr_sym_t rec[2] = {*out, x};
    if (gr_cfg_rule(g, *out, rec, 2, p, err) || gr_cfg_rule(g, *out, NULL, 0, p, err))
        return -1;
    return 0;
}

int gr_cfg_plus(gr_cfg_t *g, gr_sym_t x, const char *base, gr_sym_t *out, tb_err_t *err)
{
    gr_pos_t p = {0, 0};
    if (gr_cfg_fresh(g, base, out, err))
        return -1;
    gr_sym_t rec[2] = {*out, x};
    if (gr_cfg_rule(g, *out, rec, 2, p, err) || gr_cfg_rule(g, *out, &x, 1, p, err))
        return -1;
    return 0;
}

/* x{m,n}: m copies of x, then x{0,n-m} as nested optionals (or x* when
 * unbounded).  Size grows with n, hence GR_MAX_REPEAT. */
int gr_cfg_repeat(gr_cfg_t *g, gr_sym_t x, uint32_t m, uint32_t n, const char *base,
                  gr_pos_t pos, gr_sym_t *out, tb_err_t *err)
{
    if (m > GR_MAX_REPEAT || (n != GR_UNBOUNDED && (n > GR_MAX_REPEAT || m > n)))
        return tb_fail(err, "%s:%u:%u: repetition {%u,%u} out of range (0 <= m <= n <= %u)",
                       g->source, pos.line, pos.col, m, n == GR_UNBOUNDED ? 0 : n,
                       GR_MAX_REPEAT);
    gr_sym_t tail;
    if (n == GR_UNBOUNDED) {
        if (gr_cfg_star(g, x, base, &tail, err))
            return -1;
    } else {
        /* tail_k -> x tail_{k-1} | empty, built from k = 1 up. */
        gr_sym_t prev = 0;
        int have = 0;
        for (uint32_t k = 0; k < n - m; k++) {
            gr_sym_t t;
            if (gr_cfg_fresh(g, base, &t, err))
                return -1;
            gr_sym_t seq[2] = {x, prev};
            if (gr_cfg_rule(g, t, seq, have ? 2 : 1, pos, err) ||
                gr_cfg_rule(g, t, NULL, 0, pos, err))
                return -1;
            prev = t;
            have = 1;
        }
        if (!have && gr_cfg_fresh(g, base, &prev, err))
            return -1;
        if (!have && gr_cfg_rule(g, prev, NULL, 0, pos, err))
            return -1;
        tail = prev;
    }
    if (gr_cfg_fresh(g, base, out, err))
        return -1;
    gr_sym_t *seq = malloc(((size_t)m + 1) * sizeof *seq);
    if (!seq)
        return tb_fail(err, "out of memory");
    for (uint32_t i = 0; i < m; i++)
        seq[i] = x;
    seq[m] = tail;
    int r = gr_cfg_rule(g, *out, seq, (size_t)m + 1, pos, err);
    free(seq);
    return r;
}

int gr_cfg_set(gr_cfg_t *g, const char *base, const gr_sym_t *members, const uint8_t *required,
               size_t n, gr_sym_t sep, gr_sym_t extra, uint32_t min, uint32_t max,
               gr_sym_t *out, tb_err_t *err)
{
    if (too_big(g, err) || gr_cfg_fresh(g, base, out, err))
        return -1;
    gr_set_t st = {.nt = *out, .off = (uint32_t)g->set_member.len, .n = (uint32_t)n,
                   .sep = sep, .extra = extra, .min = min, .max = max};
    if (tb_vec_append(&g->set_member, members, n) ||
        tb_vec_append(&g->set_required, required, n) || tb_vec_push(&g->set, st))
        return tb_fail(err, "out of memory");
    g->nt.data[*out].set = (uint32_t)g->set.len;
    return 0;
}

const char *gr_sym_name(const gr_cfg_t *g, gr_sym_t s)
{
    return gr_is_lex(s) ? g->lex.data[gr_index(s)].name : g->nt.data[s].name;
}

static int sym_productive(const gr_cfg_t *g, gr_sym_t s)
{
    return gr_is_lex(s) || g->nt.data[s].productive;
}

/* A set derives the empty sequence if nothing is required and min is 0;
 * some sequence if its required members do, they fit under max, and
 * enough members and extras derive something to reach min.  1 if that
 * changed its nonterminal. */
static int set_fixpoint(gr_cfg_t *g, const gr_set_t *st, int nullable)
{
    gr_nonterm_t *nt = &g->nt.data[st->nt];
    uint64_t need = 0, can = 0;
    int ok = 1;
    for (uint32_t i = 0; i < st->n; i++) {
        int live = sym_productive(g, g->set_member.data[st->off + i]);
        need += g->set_required.data[st->off + i];
        can += (uint64_t)live;
        ok &= live || !g->set_required.data[st->off + i];
    }
    if (st->extra != GR_NO_EXTRA && sym_productive(g, st->extra))
        can = UINT64_MAX;
    if (nullable ? nt->nullable || need || st->min : nt->productive || !ok ||
                                                       need > st->max || can < st->min ||
                                                       st->min > st->max)
        return 0;
    *(nullable ? &nt->nullable : &nt->productive) = 1;
    return 1;
}

/* Fixpoints: a nonterminal is nullable (productive) if some rule's every
 * symbol is nullable (productive); lexemes are productive, never nullable. */
static void fixpoint(gr_cfg_t *g, int nullable)
{
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t r = 0; r < g->rule.len; r++) {
            const gr_rule_t *ru = &g->rule.data[r];
            gr_nonterm_t *lhs = &g->nt.data[ru->lhs];
            if (nullable ? lhs->nullable : lhs->productive)
                continue;
            int all = 1;
            for (uint32_t i = 0; i < ru->n && all; i++) {
                gr_sym_t s = g->sym.data[ru->off + i];
                if (gr_is_lex(s))
                    all = !nullable;
                else
                    all = nullable ? g->nt.data[s].nullable : g->nt.data[s].productive;
            }
            if (all) {
                if (nullable)
                    lhs->nullable = 1;
                else
                    lhs->productive = 1;
                changed = 1;
            }
        }
        for (size_t k = 0; k < g->set.len; k++)
            changed |= set_fixpoint(g, &g->set.data[k], nullable);
    }
}

/* Marks the nonterminals reachable from start in seen[]: a search over
 * the rules indexed by left side (by[at[a] .. at[a + 1]) are a's rules). */
static int reachable(const gr_cfg_t *g, uint32_t start, uint8_t *seen, tb_err_t *err)
{
    size_t nnt = g->nt.len, nr = g->rule.len;
    uint32_t *todo = malloc((nnt + 1) * sizeof *todo), *at = calloc(nnt + 2, sizeof *at),
             *by = malloc((nr + 1) * sizeof *by);
    if (!todo || !at || !by) {
        free(todo);
        free(at);
        free(by);
        return tb_fail(err, "out of memory");
    }
    for (size_t r = 0; r < nr; r++)
        at[g->rule.data[r].lhs + 2]++;
    for (size_t a = 2; a < nnt + 2; a++)
        at[a] += at[a - 1];
    for (size_t r = 0; r < nr; r++) /* at[a + 1] is a's next free place */
        by[at[g->rule.data[r].lhs + 1]++] = (uint32_t)r;
    size_t n = 0;
    todo[n++] = start;
    seen[start] = 1;
#define VISIT(s)                                                                  \
    do {                                                                          \
        if (!gr_is_lex(s) && (s) != GR_NO_EXTRA && !seen[s]) {                    \
            seen[s] = 1;                                                          \
            todo[n++] = (s);                                                      \
        }                                                                         \
    } while (0)
    while (n) {
        uint32_t a = todo[--n];
        for (uint32_t k = at[a]; k < at[a + 1]; k++) {
            const gr_rule_t *ru = &g->rule.data[by[k]];
            for (uint32_t i = 0; i < ru->n; i++)
                VISIT(g->sym.data[ru->off + i]);
        }
        if (g->nt.data[a].set) {
            const gr_set_t *st = &g->set.data[g->nt.data[a].set - 1];
            for (uint32_t i = 0; i < st->n; i++)
                VISIT(g->set_member.data[st->off + i]);
            VISIT(st->extra);
        }
    }
#undef VISIT
    free(todo);
    free(at);
    free(by);
    return 0;
}

int gr_cfg_prune(gr_cfg_t *g, gr_sym_t start)
{
    fixpoint(g, 0);
    size_t kept = 0;
    uint32_t sym_end = 0;
    for (size_t r = 0; r < g->rule.len; r++) {
        gr_rule_t ru = g->rule.data[r];
        int live = 1;
        for (uint32_t i = 0; i < ru.n && live; i++) {
            gr_sym_t s = g->sym.data[ru.off + i];
            live = gr_is_lex(s) || g->nt.data[s].productive;
        }
        if (!live && g->nt.data[ru.lhs].productive) {
            g->nt.data[ru.lhs].nrules--;
            continue;
        }
        /* rules are appended in order, so their symbols move down only */
        if (ru.n)
            memmove(g->sym.data + sym_end, g->sym.data + ru.off, ru.n * sizeof *g->sym.data);
        ru.off = sym_end;
        sym_end += ru.n;
        g->rule.data[kept++] = ru;
    }
    g->rule.len = kept;
    g->sym.len = sym_end;
    /* a set's optional members and extra that derive nothing cannot appear */
    for (size_t k = 0; k < g->set.len; k++) {
        gr_set_t *st = &g->set.data[k];
        uint32_t n = 0;
        for (uint32_t i = 0; i < st->n; i++) {
            gr_sym_t m = g->set_member.data[st->off + i];
            if (!sym_productive(g, m) && !g->set_required.data[st->off + i])
                continue;
            g->set_member.data[st->off + n] = m;
            g->set_required.data[st->off + n++] = g->set_required.data[st->off + i];
        }
        st->n = n;
        if (st->extra != GR_NO_EXTRA && !sym_productive(g, st->extra))
            st->extra = GR_NO_EXTRA;
    }
    return !g->nt.data[start].productive;
}

int gr_cfg_finish(gr_cfg_t *g, gr_sym_t start, tb_err_t *err)
{
    if (gr_is_lex(start) || start >= g->nt.len)
        return tb_fail(err, "%s: no start rule", g->source);
    for (size_t i = 0; i < g->nt.len; i++) {
        const gr_nonterm_t *nt = &g->nt.data[i];
        if (!nt->nrules && !nt->set)
            return tb_fail(err, "%s:%u:%u: undefined rule '%s'", g->source, nt->used.line,
                           nt->used.col, nt->name);
    }
    fixpoint(g, 1);
    fixpoint(g, 0);
    uint8_t *seen = calloc(g->nt.len, 1);
    if (!seen)
        return tb_fail(err, "out of memory");
    if (reachable(g, start, seen, err)) {
        free(seen);
        return -1;
    }
    if (!g->nt.data[start].productive) {
        free(seen);
        return tb_fail(err, "%s: the grammar's language is empty (rule '%s' derives no "
                       "string)", g->source, g->nt.data[start].name);
    }
    for (size_t i = 0; i < g->nt.len; i++) {
        const gr_nonterm_t *nt = &g->nt.data[i];
        if (seen[i] && !nt->productive) {
            free(seen);
            return tb_fail(err, "%s:%u:%u: rule '%s' derives no finite string "
                           "(every alternative recurses into itself)", g->source,
                           nt->def.line, nt->def.col, nt->name);
        }
    }
    free(seen);
    g->start = start;
    g->finished = 1;
    return 0;
}

void gr_cfg_print(const gr_cfg_t *g, FILE *f)
{
    for (size_t r = 0; r < g->rule.len; r++) {
        const gr_rule_t *ru = &g->rule.data[r];
        fprintf(f, "%s ->", g->nt.data[ru->lhs].name);
        for (uint32_t i = 0; i < ru->n; i++)
            fprintf(f, " %s", gr_sym_name(g, g->sym.data[ru->off + i]));
        fputs(ru->n ? "\n" : " (empty)\n", f);
    }
    for (size_t k = 0; k < g->set.len; k++) {
        const gr_set_t *st = &g->set.data[k];
        fprintf(f, "%s -> any order of", g->nt.data[st->nt].name);
        for (uint32_t i = 0; i < st->n; i++)
            fprintf(f, " %s%s", gr_sym_name(g, g->set_member.data[st->off + i]),
                    g->set_required.data[st->off + i] ? "" : "?");
        if (st->extra != GR_NO_EXTRA)
            fprintf(f, " %s*", gr_sym_name(g, st->extra));
        fprintf(f, " separated by %s, %u to ", gr_sym_name(g, st->sep), st->min);
        if (st->max == GR_UNBOUNDED)
            fputs("any number\n", f);
        else
            fprintf(f, "%u\n", st->max);
    }
    for (size_t i = 0; i < g->lex.len; i++) {
        const gr_lexeme_t *lx = &g->lex.data[i];
        if (lx->ids) {
            fprintf(f, "lexeme %s = token ids", lx->name);
            for (uint32_t k = 0; k < lx->nids; k++)
                fprintf(f, k ? ",%u-%u" : " %u-%u", lx->ids[k].lo, lx->ids[k].hi);
            fputc('\n', f);
            continue;
        }
        fprintf(f, "lexeme %s%s = %s\n", lx->name,
                lx->ignore ? " (ignored)" : lx->lazy ? " (lazy)" : "", lx->regex);
    }
}
