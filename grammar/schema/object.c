/*
 * object: the values of the object keywords: properties, required,
 * additionalProperties and patternProperties (also the sides that allOf
 * branches with patternProperties keep apart), min/maxProperties,
 * propertyNames (through names.c), members in definition order or in any
 * order, and dependencies, dependentRequired and dependentSchemas as two
 * branches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ecma.h"
#include "internal.h"

typedef struct {
    const char *name;
    json_t *schema;
    char *ptr;
    int required;
    gr_sym_t member;
} prop_t;

/* The DFA of a pattern (a search) into *d, NULL when it matches no name:
 * made once per compile (sc_pattern_t), or made again when `again`. */
static int pattern_dfa(sc_t *c, const char *pattern, const char *ptr, int again, lex_dfa_t **d)
{
    size_t len = strlen(pattern);
    int32_t i = tb_strmap_get(&c->pattern_map, (const uint8_t *)pattern, len);
    if (i >= 0 && !again) {
        *d = c->patterns.data[i].dfa;
        return 0;
    }
    tb_buf_t re = {0};
    int r = sc_ecma_string(c, &re, pattern, NULL, 0, GR_NO_MAX);
    *d = NULL;
    if (r == 0 && tb_buf_putc(&re, 0))
        r = sc_oom(c);
    else if (r == 0 && !(*d = lex_dfa_new((const char *)re.data, &sc_string_opts, c->err)))
        r = -1;
    tb_buf_free(&re);
    if (r < 0)
        return tb_wrap(c->err, "%s", ptr);
    if (i >= 0) {
        lex_dfa_free(c->patterns.data[i].dfa);
        c->patterns.data[i].dfa = *d;
        return 0;
    }
    sc_pattern_t e = {.pattern = strdup(pattern), .dfa = *d};
    if (!e.pattern || tb_vec_push(&c->patterns, e)) {
        free(e.pattern);
        lex_dfa_free(*d);
        return sc_oom(c);
    }
    return tb_strmap_put(&c->pattern_map, (const uint8_t *)e.pattern, len,
                         (int32_t)(c->patterns.len - 1)) < 0 ? sc_oom(c) : 0;
}

/* Whether the pattern (a search) matches the property name. */
int sc_pattern_matches(sc_t *c, const char *pattern, const char *name, const char *ptr)
{
    lex_dfa_t *d;
    if (pattern_dfa(c, pattern, ptr, 0, &d))
        return -1;
    if (!d)
        return 0;
    tb_buf_t q = {0};
    if (gr_json_quote(&q, (const uint8_t *)name, strlen(name)))
        return sc_oom(c);
    uint32_t st = lex_dfa_feed(d, LEX_START, q.data, q.len);
    /* the names fed before may have taken the DFA to its state limit,
     * where a DFA of its own would read this one */
    if (lex_dfa_error(d, NULL) && !pattern_dfa(c, pattern, ptr, 1, &d))
        st = lex_dfa_feed(d, LEX_START, q.data, q.len);
    int r = d && st != LEX_DEAD && lex_dfa_accepting(d, st);
    tb_buf_free(&q);
    return r;
}

/* The object keywords of a schema and of the allOf branches merged beside
 * it with patternProperties (SIDES, see merge): each side's
 * additionalProperties applies to the names its own properties and
 * patternProperties do not cover.  The patterns of every side are numbered
 * as gr_ecma_key_classes's bits. */
#define MAX_SIDES 64
#define MAX_PATTERNS 62
typedef struct {
    size_t n, npat;
    json_t *props[MAX_SIDES], *addl[MAX_SIDES];
    const char *pat[MAX_PATTERNS];
    json_t *pat_schema[MAX_PATTERNS];
    size_t pat_side[MAX_PATTERNS];
} sides_t;

static int add_side(sc_t *c, sides_t *sd, json_t *s, const char *ptr)
{
    json_t *props = json_object_get(s, "properties"), *pp = json_object_get(s, "patternProperties"),
           *addl = json_object_get(s, "additionalProperties"), *v;
    const char *k;
    if ((props && !json_is_object(props)) || (pp && !json_is_object(pp)))
        return sc_fail(c, ptr, "'properties' and 'patternProperties' must be objects");
    if (addl && !json_is_boolean(addl) && !json_is_object(addl))
        return sc_fail(c, ptr, "'additionalProperties' must be a schema");
    if (sd->n == MAX_SIDES || sd->npat + json_object_size(pp) > MAX_PATTERNS)
        return sc_fail(c, ptr, "more than %d patternProperties or %d merged objects are not "
                    "supported", MAX_PATTERNS, MAX_SIDES);
    json_object_foreach(pp, k, v) {
        sd->pat[sd->npat] = k;
        sd->pat_schema[sd->npat] = v;
        sd->pat_side[sd->npat++] = sd->n;
    }
    sd->props[sd->n] = props;
    sd->addl[sd->n++] = addl;
    return 0;
}

static int sides_init(sc_t *c, json_t *s, const char *ptr, sides_t *sd)
{
    json_t *more = json_object_get(s, SIDES), *x;
    size_t i;
    sd->n = sd->npat = 0;
    if (add_side(c, sd, s, ptr))
        return -1;
    json_array_foreach(more, i, x) {
        if (add_side(c, sd, x, ptr))
            return -1;
    }
    return 0;
}

/* The schema of a name (NULL: a name no side defines) matching the
 * patterns in mask: on each side its property and its patterns, or where
 * it has neither its additionalProperties (absent: true); false when a
 * side allows nothing there. */
static json_t *name_schema(sc_t *c, const sides_t *sd, const char *name, uint64_t mask)
{
    json_t *list = json_array(), *one = json_true();
    if (sc_keep(c, list))
        return NULL;
    for (size_t i = 0; i < sd->n; i++) {
        size_t before = json_array_size(list);
        json_t *own = name ? json_object_get(sd->props[i], name) : NULL;
        if (own && json_array_append(list, own))
            return sc_oom(c), NULL;
        for (size_t b = 0; b < sd->npat; b++)
            if (sd->pat_side[b] == i && (mask >> b & 1) &&
                json_array_append(list, sd->pat_schema[b]))
                return sc_oom(c), NULL;
        if (json_array_size(list) == before && sd->addl[i] &&
            json_array_append(list, sd->addl[i]))
            return sc_oom(c), NULL;
    }
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v) {
        if (json_is_false(v))
            return json_false();
    }
    if (json_array_size(list) == 1)
        one = json_array_get(list, 0);
    if (json_array_size(list) <= 1)
        return one;
    json_t *all = json_pack("{s:O}", "allOf", list);
    return sc_keep(c, all) ? NULL : all;
}

/* A defined (or required) name's schema: name_schema with the patterns it
 * matches. */
static int pattern_schemas(sc_t *c, const sides_t *sd, const char *ptr, prop_t *p)
{
    uint64_t mask = 0;
    for (size_t b = 0; b < sd->npat; b++) {
        int m = sc_pattern_matches(c, sd->pat[b], p->name, ptr);
        if (m < 0)
            return -1;
        mask |= (uint64_t)m << b;
    }
    p->schema = name_schema(c, sd, p->name, mask);
    return p->schema ? 0 : -1;
}

/* The schema of patternProperties when one of them matches every name and
 * all have the same schema (then it applies to every property, and
 * additionalProperties to none); NULL otherwise. */
static int pattern_every(sc_t *c, json_t *pp, const char *ptr, json_t **every)
{
    const char *k;
    json_t *v, *first = NULL;
    int all = 0;
    *every = NULL;
    json_object_foreach(pp, k, v) {
        if (first && !json_equal(first, v))
            return 0;
        first = v;
        int m = gr_ecma_matches_all(k, c->err);
        if (m < 0)
            return tb_wrap(c->err, "%s/patternProperties", ptr);
        all |= m;
    }
    *every = all ? first : NULL;
    return 0;
}

/* The lexeme of a string (a property name, an enum or const string) in
 * every spelling JSON has for it (escapes, \u of either case, surrogate
 * pairs: a key "\u0066oo" is the property foo), named by the spelling
 * json.dumps writes, so that dumps read "\"name\"". */
static int name_lexeme(sc_t *c, const char *s, gr_sym_t *out)
{
    tb_buf_t re = {0}, q = {0}, name = {0};
    int r = gr_json_quote_regex(&re, (const uint8_t *)s, strlen(s), c->sets) || tb_buf_putc(&re, 0) ||
            tb_buf_putc(&name, '"') || gr_json_quote(&q, (const uint8_t *)s, strlen(s)) ||
            tb_buf_put(&name, q.data, q.len) || tb_buf_putc(&name, '"') || tb_buf_putc(&name, 0);
    r = r ? sc_oom(c) : sc_lexeme(c, (const char *)re.data, (const char *)name.data, out);
    tb_buf_free(&re);
    tb_buf_free(&q);
    tb_buf_free(&name);
    return r;
}

/* The member symbol "name": value. */
static int member(sc_t *c, gr_sym_t key, gr_sym_t v, gr_sym_t *out)
{
    gr_sym_t colon;
    return sc_colon(c, &colon) || gr_cfg_fresh(c->g, "member", out, c->err) ||
           sc_rule(c, *out, (gr_sym_t[]){key, colon, v}, 3);
}

/* An entry of SOME_MEMBER. */
typedef struct {
    json_t *except, *xpat, *value;
    const char *pattern; /* NULL: none */
} witness_t;

static int witness_read(sc_t *c, json_t *e, const char *ptr, witness_t *w)
{
    json_t *pat = json_object_get(e, "pattern"), *x;
    size_t i;
    w->except = json_object_get(e, "except");
    w->xpat = json_object_get(e, "exceptPatterns");
    w->value = json_object_get(e, "value");
    w->pattern = json_string_value(pat);
    int bad = !w->value || (pat && !w->pattern) || (w->except && !json_is_array(w->except)) ||
              (w->xpat && !json_is_array(w->xpat));
    json_array_foreach(w->except, i, x) bad |= !json_is_string(x);
    json_array_foreach(w->xpat, i, x) bad |= !json_is_string(x);
    return bad ? sc_fail(c, ptr, "'%s' is malformed", SOME_MEMBER) : 0;
}

/* Whether the name is in the witness's class (1, 0, -1). */
static int witness_takes(sc_t *c, const witness_t *w, const char *name, const char *ptr)
{
    size_t i;
    json_t *x;
    json_array_foreach(w->except, i, x) {
        if (!strcmp(json_string_value(x), name))
            return 0;
    }
    json_array_foreach(w->xpat, i, x) {
        int m = sc_pattern_matches(c, json_string_value(x), name, ptr);
        if (m)
            return m < 0 ? -1 : 0;
    }
    return w->pattern ? sc_pattern_matches(c, w->pattern, name, ptr) : 1;
}

/* Entries of SOME_MEMBER that one member witnesses (its name in every
 * class, its value in every schema). */
#define MAX_WITNESS 4
typedef struct {
    size_t n;
    const witness_t *e[MAX_WITNESS];
} group_t;

typedef struct {
    sc_t *c;
    const sides_t *sd;
    json_t *every; /* the schema of every name (pattern_every), or NULL */
    const sc_names_t *names; /* propertyNames */
    const char *ptr;
    /* a witness group's classes: the patterns after the own ones (own of
     * them) are each entry's exceptPatterns and then its pattern */
    const group_t *w;
    size_t own;
    TB_VEC(gr_sym_t) members;
} classes_t;

/* The schema of a class's names: its sides' (or every), and the witness
 * group's values; NULL on an error. */
static json_t *class_schema(classes_t *cl, uint64_t mask)
{
    json_t *sch = cl->every ? cl->every : name_schema(cl->c, cl->sd, NULL, mask);
    for (size_t i = 0; sch && cl->w && !json_is_false(sch) && i < cl->w->n; i++)
        if (sc_keep(cl->c, sch = sc_all_of(sch, cl->w->e[i]->value)))
            return NULL;
    return sch;
}

/* Whether a class's names may appear at all (its schema is not false;
 * for a witness group, its names are in every entry's class). */
static int class_needed(void *ctx, uint64_t mask)
{
    classes_t *cl = ctx;
    for (size_t i = 0, at = cl->own; cl->w && i < cl->w->n; i++) {
        const witness_t *e = cl->w->e[i];
        size_t nx = json_array_size(e->xpat);
        uint64_t hi = mask >> at;
        if ((hi & ((UINT64_C(1) << nx) - 1)) || (e->pattern && !(hi >> nx & 1)))
            return 0;
        at += nx + (e->pattern != NULL);
    }
    if (cl->every)
        return !json_is_false(cl->every);
    json_t *sch = name_schema(cl->c, cl->sd, NULL, mask);
    return !sch || !json_is_false(sch); /* an error: left to add_class */
}

/* One class of names: a member "name": value for it (none when its
 * schema allows nothing). */
static int add_class(void *ctx, uint64_t mask, const char *regex)
{
    classes_t *cl = ctx;
    sc_t *c = cl->c;
    json_t *sch = class_schema(cl, mask);
    char *p = sc_ptr_join(cl->ptr, mask ? "patternProperties" : "additionalProperties");
    gr_sym_t key, val, m;
    int r = !sch || !p ? (c->err->msg[0] ? -1 : sc_oom(c)) : sc_value(c, sch, p, &val);
    free(p);
    if (r)
        return r == 1 ? 0 : -1;
    if (cl->names->none)
        return 0; /* propertyNames allows no name */
    tb_buf_t re = {0};
    r = sc_names_restrict(c, cl->names, regex, &re) ||
                sc_named_lexeme(c, (const char *)re.data,
                                cl->w ? "some name" : mask ? "pattern name" : "other name",
                                cl->ptr, &key) ||
                member(c, key, val, &m) || tb_vec_push(&cl->members, m)
            ? -1
            : 0;
    tb_buf_free(&re);
    return r;
}

/* The additional members (w NULL): names other than the defined ones,
 * split by the patterns they match, each with its value; or the member
 * that witness w needs: names in its class other than the defined ones,
 * split likewise, each with its value and the witness's.  1 when there
 * are none. */
static int class_member(sc_t *c, const sides_t *sd, const char *ptr, prop_t *pr, size_t n,
                        json_t *every, const sc_names_t *pn, const group_t *w, gr_sym_t *out)
{
    size_t own = every ? 0 : sd->npat, npat = own, nex = 0;
    for (size_t i = 0; w && i < w->n; i++) {
        npat += json_array_size(w->e[i]->xpat) + (w->e[i]->pattern != NULL);
        nex += json_array_size(w->e[i]->except);
    }
    if (npat > MAX_PATTERNS)
        return sc_fail(c, ptr, "more than %d patternProperties (with those of a 'not') are not "
                       "supported", MAX_PATTERNS);
    const char **names = malloc((n + nex + 1) * sizeof *names),
               **pats = malloc((npat + 1) * sizeof *pats);
    classes_t cl = {.c = c, .sd = sd, .every = every, .ptr = ptr, .names = pn, .w = w,
                    .own = own};
    int r = names && pats ? 0 : sc_oom(c);
    size_t nn = n, np = own;
    for (size_t j = 0; !r && j < n; j++)
        names[j] = pr[j].name;
    for (size_t j = 0; !r && j < own; j++)
        pats[j] = sd->pat[j];
    for (size_t i = 0; !r && w && i < w->n; i++) {
        const witness_t *e = w->e[i];
        json_t *x;
        size_t j;
        json_array_foreach(e->except, j, x) names[nn++] = json_string_value(x);
        json_array_foreach(e->xpat, j, x) pats[np++] = json_string_value(x);
        if (e->pattern)
            pats[np++] = e->pattern;
    }
    if (!r && npat) {
        r = gr_ecma_key_classes(pats, npat, names, nn, class_needed, add_class, &cl, c->sets,
                                c->err);
        if (r)
            tb_wrap(c->err, "%s/patternProperties", ptr);
    } else if (!r && class_needed(&cl, 0)) {
        tb_buf_t re = {0};
        /* the other names as a look-ahead of the defined ones: their trie's
         * complement spelled every other code point at each of its letters,
         * 2 MB of lexemes for a Kubernetes schema's objects, written,
         * hashed and parsed in TTFM */
        r = sc_other_names(c, &re, names, nn) || tb_buf_putc(&re, 0) ||
            add_class(&cl, 0, (const char *)re.data);
        tb_buf_free(&re);
    }
    free(names);
    free(pats);
    if (!r && cl.members.len == 1)
        *out = cl.members.data[0];
    else if (!r && cl.members.len > 1)
        r = gr_cfg_fresh(c->g, w ? "some" : "extra", out, c->err);
    for (size_t j = 0; !r && cl.members.len > 1 && j < cl.members.len; j++)
        r = sc_rule(c, *out, &cl.members.data[j], 1);
    size_t got = cl.members.len;
    free(cl.members.data);
    return r ? -1 : got == 0;
}

/* The properties in order, with the additional members anywhere between
 * them: T_i -> sep A T_i | U_i ; U_i -> sep M_i T_{i+1} | U_{i+1} (M_i
 * optional) ; U_n -> empty.  sep is "," except before the first member.
 * Additional members come before the next present property only, which
 * keeps the grammar unambiguous. */
static int members(sc_t *c, prop_t *pr, size_t n, int have_a, gr_sym_t a, int need_one,
                   gr_sym_t *out)
{
    gr_sym_t comma, t_next[2] = {0, 0}, u_next[2] = {0, 0};
    int u_ok[2] = {1, 1}; /* U_{i+1} exists (not when it would derive nothing) */
    if (sc_comma(c, &comma))
        return -1;
    for (size_t i = n + 1; i-- > 0;) {
        gr_sym_t t[2], u[2];
        int ok[2] = {1, 1};
        for (int f = 0; f < 2; f++) { /* f: no member before (no comma) */
            /* minProperties 1: the end is reached only after a member */
            ok[f] = !(i == n && f == 1 && need_one);
            if (ok[f] && gr_cfg_fresh(c->g, "props", &u[f], c->err))
                return -1;
            gr_sym_t seq[3] = {comma, i < n ? pr[i].member : 0, t_next[0]};
            if (ok[f] && (i == n ? sc_rule(c, u[f], NULL, 0)
                                 : sc_rule(c, u[f], seq + f, 3 - (size_t)f) ||
                                       (!pr[i].required && u_ok[f] &&
                                        sc_rule(c, u[f], &u_next[f], 1))))
                return -1;
            t[f] = u[f];
            if (!have_a)
                continue;
            if (gr_cfg_fresh(c->g, "props", &t[f], c->err) ||
                (ok[f] && sc_rule(c, t[f], &u[f], 1)))
                return -1;
            gr_sym_t extra[3] = {comma, a, t[0]}; /* after a member, commas follow */
            if (sc_rule(c, t[f], extra + f, 3 - (size_t)f))
                return -1;
        }
        memcpy(t_next, t, sizeof t);
        memcpy(u_next, u, sizeof u);
        u_ok[0] = ok[0];
        u_ok[1] = ok[1];
    }
    *out = t_next[1];
    return !u_ok[1] && !have_a; /* nothing at all: no member could come first */
}

/* The members in any order, each defined property at most once, additional
 * members anywhere, minProperties and maxProperties counted: a set
 * nonterminal (cfg.h's gr_set_t), whose states the parser makes as a text
 * reaches them.  1 when no object qualifies. */
static int members_any_order(sc_t *c, prop_t *pr, size_t n, int have_a, gr_sym_t a,
                             const gr_sym_t *wit, size_t nw, uint64_t minp, uint64_t maxp,
                             gr_sym_t *out)
{
    uint64_t nr = nw;
    for (size_t i = 0; i < n; i++)
        nr += pr[i].required;
    if (nr > maxp || (!have_a && minp > n + nw))
        return 1;
    gr_sym_t comma, *m = malloc((n + nw + 1) * sizeof *m);
    uint8_t *req = malloc(n + nw + 1);
    int r = !m || !req ? sc_oom(c) : sc_comma(c, &comma);
    for (size_t i = 0; !r && i < n; i++) {
        m[i] = pr[i].member;
        req[i] = (uint8_t)pr[i].required;
    }
    for (size_t i = 0; !r && i < nw; i++) {
        m[n] = wit[i]; /* members that must be there */
        req[n++] = 1;
    }
    /* counts beyond 2^32 - 1 bound nothing a parser reads */
    uint32_t min = minp < GR_UNBOUNDED ? (uint32_t)minp : GR_UNBOUNDED - 1,
             max = maxp < GR_UNBOUNDED ? (uint32_t)maxp : GR_UNBOUNDED;
    if (!r)
        r = gr_cfg_set(c->g, "props", m, req, n, comma, have_a ? a : GR_NO_EXTRA, min, max,
                       out, c->err);
    free(m);
    free(req);
    return r;
}

/* The object value under s's keywords, with a member for each witness
 * group of gs[0..ng); 1 when no object qualifies. */
static int object_value(sc_t *c, json_t *s, const char *ptr, const group_t *gs, size_t ng,
                        gr_sym_t *out)
{
    static const char *const refused[] = {"unevaluatedProperties", NULL};
    for (size_t i = 0; refused[i]; i++)
        if (json_object_get(s, refused[i]) &&
            !(!strcmp(refused[i], "unevaluatedProperties") &&
              json_is_true(json_object_get(s, refused[i]))))
            return sc_fail(c, ptr, "'%s' is not supported", refused[i]);
    json_t *req = json_object_get(s, "required"), *pp = json_object_get(s, "patternProperties");
    if (req && !json_is_array(req))
        return sc_fail(c, ptr, "'required' must be an array");
    sides_t *sd = malloc(sizeof *sd);
    if (!sd)
        return sc_oom(c);
    if (sides_init(c, s, ptr, sd))
        return free(sd), -1;
    size_t n = 0, nreq = json_array_size(req);
    for (size_t i = 0; i < sd->n; i++)
        n += json_object_size(sd->props[i]);
    prop_t *pr = calloc(n + nreq + 1, sizeof *pr);
    if (!pr)
        return free(sd), sc_oom(c);
    int r = 0;
    const char *k;
    json_t *v;
    size_t np = 0;
    /* the names any side defines, once each (their schemas: pattern_schemas) */
    for (size_t i = 0; i < sd->n; i++) {
        json_object_foreach(sd->props[i], k, v) {
            size_t j = 0;
            while (j < np && strcmp(pr[j].name, k))
                j++;
            if (j == np)
                pr[np++] = (prop_t){.name = k};
        }
    }
    /* Required names that properties does not define: additional members
     * that must be there. */
    for (size_t i = 0; i < nreq && !r; i++) {
        const char *name = json_string_value(json_array_get(req, i));
        if (!name) {
            r = sc_fail(c, ptr, "'required' must hold strings");
            break;
        }
        size_t j = 0;
        while (j < np && strcmp(pr[j].name, name))
            j++;
        if (j == np) {
            /* its schema: additionalProperties', or the patterns' below */
            pr[np++] = (prop_t){.name = name, .schema = NULL};
        }
        pr[j].required = 1;
    }
    uint64_t minp, maxp;
    size_t nr = 0;
    for (size_t j = 0; j < np; j++)
        nr += (size_t)pr[j].required;
    if (!r && (sc_count(c, s, "minProperties", ptr, 0, &minp) ||
               sc_count(c, s, "maxProperties", ptr, GR_NO_MAX, &maxp)))
        r = -1;
    json_t *every = NULL;
    if (!r && sd->n == 1 && pp && json_object_size(pp) && pattern_every(c, pp, ptr, &every))
        r = -1;
    for (size_t j = 0; j < np && !r; j++)
        r = pattern_schemas(c, sd, ptr, &pr[j]);
    sc_names_t pn = {0};
    if (!r && sc_names_init(c, s, ptr, &pn))
        r = -1;
    /* Members, dropping optional properties that allow nothing (or whose
     * name propertyNames rejects). */
    size_t kept = 0;
    for (size_t j = 0; j < np && !r; j++) {
        gr_sym_t key, val;
        int named = sc_names_allow(c, &pn, pr[j].name);
        if (named < 0) {
            r = -1;
            break;
        }
        char *p = sc_ptr_join(ptr, "properties"), *pj = p ? sc_ptr_join(p, pr[j].name) : NULL;
        free(p);
        r = !pj ? sc_oom(c) : !named ? 1 : sc_value(c, pr[j].schema, pj, &val);
        free(pj);
        if (r == 1 && !pr[j].required) {
            r = 0;
            continue;
        }
        if (!r)
            r = name_lexeme(c, pr[j].name, &key) || member(c, key, val, &pr[j].member);
        /* kept first; the dropped stay behind them, still names to exclude */
        prop_t keep_p = pr[j];
        pr[j] = pr[kept];
        pr[kept++] = keep_p;
    }
    gr_sym_t a = 0, body, lb, rb, wm[MAX_WITNESS];
    int have_a = 0;
    if (!r) {
        /* every name (also dropped ones) is excluded from the extra keys */
        r = class_member(c, sd, ptr, pr, np, every, &pn, NULL, &a);
        have_a = r == 0;
        if (r == 1)
            r = 0;
    }
    for (size_t i = 0; !r && i < ng; i++) /* likewise from the witnesses' */
        r = class_member(c, sd, ptr, pr, np, every, &pn, &gs[i], &wm[i]);
    /* In definition order, minProperties and maxProperties only where the
     * order's grammar writes them; llguidance's reading, which writes more
     * of them in order, takes the others in any order. */
    int fits = !(minp > nr && minp > 1) && !(maxp < (have_a ? GR_NO_MAX : kept));
    int ordered = c->opts.definition_order || (c->llg_order && fits);
    if (!r && ordered && minp > nr && minp > 1)
        r = sc_fail(c, ptr, "'minProperties' above the number of required properties (and 1) "
                 "is not supported in definition order");
    if (!r && ordered && maxp < (have_a ? GR_NO_MAX : kept))
        r = sc_fail(c, ptr, "'maxProperties' below the number of properties that may appear is "
                 "not supported in definition order");
    if (!r)
        r = ordered ? members(c, pr, kept, have_a, a, minp > nr, &body)
                    : members_any_order(c, pr, kept, have_a, a, wm, ng, minp, maxp, &body);
    if (!r)
        r = sc_lit(c, "{", &lb) || sc_lit(c, "}", &rb) ||
            gr_cfg_fresh(c->g, "object", out, c->err) ||
            sc_rule(c, *out, (gr_sym_t[]){lb, body, rb}, 3);
    sc_names_free(&pn);
    free(pr);
    free(sd);
    return r;
}

/* The alternatives of SOME_MEMBER, each entry's witness chosen in turn. */
typedef struct {
    sc_t *c;
    const char *ptr;
    witness_t e[MAX_WITNESS];
    size_t n;
    group_t g[MAX_WITNESS]; /* the members of names s does not define */
    size_t ng, tried;
    TB_VEC(gr_sym_t) alts;
} some_t;

/* The names s defines or requires, as the keys of an object (kept). */
static json_t *own_names(sc_t *c, json_t *s)
{
    json_t *names = json_object(), *x, *v;
    const char *k;
    size_t i;
    int r = sc_keep(c, names);
    json_object_foreach(json_object_get(s, "properties"), k, v) r |= json_object_set(names, k, v);
    json_array_foreach(json_object_get(s, SIDES), i, x) {
        json_object_foreach(json_object_get(x, "properties"), k, v)
            r |= json_object_set(names, k, v);
    }
    json_array_foreach(json_object_get(s, "required"), i, x) {
        if (json_is_string(x))
            r |= json_object_set(names, json_string_value(x), x);
    }
    return r ? (sc_oom(c), NULL) : names;
}

/* s with name k required and its value in v too (a side of its own). */
static json_t *with_member(sc_t *c, json_t *s, const char *k, json_t *v)
{
    json_t *req = json_object_get(s, "required"), *sides = json_object_get(s, SIDES);
    json_t *sp = json_copy(s);
    req = json_is_array(req) ? json_copy(req) : json_array();
    sides = json_is_array(sides) ? json_copy(sides) : json_array();
    if (sc_keep(c, sp) || sc_keep(c, req) || sc_keep(c, sides))
        return NULL;
    if (json_array_append_new(req, json_string(k)) ||
        json_array_append_new(sides, json_pack("{s:{s:O}}", "properties", k, v)) ||
        json_object_set(sp, "required", req) || json_object_set(sp, SIDES, sides))
        return sc_oom(c), NULL;
    return sp;
}

/* The alternatives where entries i.. find their witnesses in s: a name s
 * defines or requires (required there, with both values), a member of
 * another name that an earlier entry's group has, or a member of its own. */
static int some_from(some_t *st, json_t *s, size_t i)
{
    sc_t *c = st->c;
    gr_sym_t sym;
    int r;
    if (++st->tried > 256)
        return sc_fail(c, st->ptr, "'not' of 'additionalProperties' or 'patternProperties': "
                       "more than 256 ways to have their members are not supported");
    if (i == st->n) {
        r = object_value(c, s, st->ptr, st->g, st->ng, &sym);
        return r ? (r < 0 ? -1 : 0) : tb_vec_push(&st->alts, sym) ? sc_oom(c) : 0;
    }
    const witness_t *e = &st->e[i];
    json_t *names = own_names(c, s), *v;
    const char *k;
    if (!names)
        return -1;
    json_object_foreach(names, k, v) {
        json_t *sp;
        r = witness_takes(c, e, k, st->ptr);
        if (r < 0 || (r && (!(sp = with_member(c, s, k, e->value)) || some_from(st, sp, i + 1))))
            return -1;
    }
    for (size_t j = 0; j < st->ng; j++) {
        group_t *g = &st->g[j];
        g->e[g->n++] = e;
        r = some_from(st, s, i + 1);
        g->n--;
        if (r)
            return -1;
    }
    st->g[st->ng++] = (group_t){.n = 1, .e = {e}};
    r = some_from(st, s, i + 1);
    st->ng--;
    return r;
}

/* SOME_MEMBER: for each entry the object has a member in the entry's
 * class with a value in its schema.  Each such member is one of s's own
 * names (a branch where the name is required and its value in both
 * schemas, a side of its own), or a name s does not define, which entries
 * may share (a member that must be there in the set nonterminal); every
 * way is an alternative. */
static int some_member(sc_t *c, json_t *s, json_t *list, const char *ptr, gr_sym_t *out)
{
    some_t st = {.c = c, .ptr = ptr, .n = json_array_size(list)};
    if (!json_is_array(list) || !st.n)
        return sc_fail(c, ptr, "'%s' is malformed", SOME_MEMBER);
    if (st.n > MAX_WITNESS)
        return sc_fail(c, ptr, "'not' of 'additionalProperties' or 'patternProperties' of more "
                       "than %d subschemas (merged) is not supported", MAX_WITNESS);
    if (c->opts.definition_order)
        return sc_fail(c, ptr, "'not' of 'additionalProperties' or 'patternProperties' is not "
                       "supported in definition order");
    for (size_t i = 0; i < st.n; i++)
        if (witness_read(c, json_array_get(list, i), ptr, &st.e[i]))
            return -1;
    json_t *s0 = json_copy(s);
    if (sc_keep(c, s0))
        return -1;
    json_object_del(s0, SOME_MEMBER);
    int r = some_from(&st, s0, 0);
    if (!r && st.alts.len == 0)
        r = 1;
    else if (!r && st.alts.len == 1)
        *out = st.alts.data[0];
    else if (!r) {
        r = gr_cfg_fresh(c->g, "object", out, c->err);
        for (size_t i = 0; !r && i < st.alts.len; i++)
            r = sc_rule(c, *out, &st.alts.data[i], 1);
    }
    free(st.alts.data);
    return r;
}

int sc_object_value(sc_t *c, json_t *s, const char *ptr, gr_sym_t *out)
{
    json_t *list = json_object_get(s, SOME_MEMBER);
    return list ? some_member(c, s, list, ptr, out) : object_value(c, s, ptr, NULL, 0, out);
}

/* ---- dependencies ------------------------------------------------------------ */

/* dependencies (dependentRequired, dependentSchemas): for the first
 * entry k -> D, the instance has no k, or has k and D holds (D's names are
 * required too, or D's schema):  {"anyOf": [s + k: false, s + required k,
 * D]}, the other entries left in both branches. */
int sc_dependencies(sc_t *c, json_t *s, const char *kw, const char *ptr, gr_sym_t *out)
{
    json_t *deps = json_object_get(s, kw);
    if (!json_is_object(deps))
        return sc_fail(c, ptr, "'%s' must be an object", kw);
    json_t *rest = json_copy(s), *nd = json_copy(deps);
    if (sc_keep(c, rest) || sc_keep(c, nd))
        return -1;
    void *it = json_object_iter(deps);
    const char *k = it ? json_object_iter_key(it) : NULL;
    json_t *d = it ? json_object_iter_value(it) : NULL;
    if (k)
        json_object_del(nd, k);
    if (json_object_size(nd) ? json_object_set(rest, kw, nd) : json_object_del(rest, kw))
        return sc_oom(c);
    if (!k)
        return sc_value(c, rest, ptr, out);
    json_t *b1 = json_copy(rest), *b2 = json_copy(rest);
    json_t *props = json_object_get(rest, "properties"), *req = json_object_get(rest, "required");
    json_t *p1 = props ? json_copy(props) : json_object(), *r2 = req ? json_copy(req) : json_array();
    if (sc_keep(c, b1) || sc_keep(c, b2) || sc_keep(c, p1) || sc_keep(c, r2))
        return -1;
    int r = json_object_set(p1, k, json_false()) || json_object_set(b1, "properties", p1) ||
            json_array_append_new(r2, json_string(k));
    size_t i;
    json_t *x;
    if (json_is_array(d))
        json_array_foreach(d, i, x) r |= json_array_append(r2, x);
    else if (!json_is_object(d) && !json_is_boolean(d))
        return sc_fail(c, ptr, "'%s' of '%s' must be an array or a schema", kw, k);
    r |= json_object_set(b2, "required", r2);
    json_t *second = json_is_array(d) ? json_incref(b2) : sc_all_of(b2, d);
    json_t *any = second ? json_pack("{s:[O,o]}", "anyOf", b1, second) : NULL;
    if (r || sc_keep(c, any))
        return sc_oom(c);
    return sc_value(c, any, ptr, out);
}
