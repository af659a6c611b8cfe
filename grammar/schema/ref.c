/*
 * ref: $ref beyond plain JSON pointers.  Before anything is
 * compiled, every schema location is walked with its base URI ($id, or
 * draft 4's id, resolved against the enclosing one as RFC 3986 5.2 says),
 * registering each resource ($id) and anchor ($anchor, $dynamicAnchor,
 * a "#name" $id before 2019-09) by its absolute URI; then every $ref is
 * resolved against its base and rewritten as the JSON pointer of its
 * target ("#/..."), so that the rest of the compiler reads pointers only
 * (sc_resolve, below).  Remote documents are never fetched from the
 * network: http://localhost:1234/PATH (the JSON Schema Test Suite's
 * remotes) is read from opts.remote_dir/PATH where that is set, grafted
 * under the root's "$tb:docs" array and walked the same way.  A $ref that
 * resolves to nothing is rewritten to "$tb:bad:" and the reason, which
 * sc_resolve turns into the compile error naming the $ref where it is used.
 * A $dynamicRef becomes such a $ref where no dynamic scope can change its
 * target: its target has no $dynamicAnchor of its name, or no other object
 * anywhere has one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define BAD_PREFIX "$tb:bad:"
#define DOCS_KEY "$tb:docs"
#define LOCALHOST "http://localhost:1234/"
#define DEFAULT_BASE "tb:/root.json" /* the base of a root without $id */

/* ---- RFC 3986 references ------------------------------------------------------ */

typedef struct {
    const char *s[5]; /* scheme, authority, path, query, fragment */
    size_t n[5];
    int has[5];
} uri_t;

static void uri_parse(const char *u, uri_t *p)
{
    memset(p, 0, sizeof *p);
    const char *c = u + strcspn(u, ":/?#");
    if (*c == ':' && c > u) {
        p->s[0] = u, p->n[0] = (size_t)(c - u), p->has[0] = 1;
        u = c + 1;
    }
    if (u[0] == '/' && u[1] == '/') {
        u += 2;
        p->s[1] = u, p->n[1] = strcspn(u, "/?#"), p->has[1] = 1;
        u += p->n[1];
    }
    p->s[2] = u, p->n[2] = strcspn(u, "?#"), p->has[2] = 1;
    u += p->n[2];
    if (*u == '?') {
        u++;
        p->s[3] = u, p->n[3] = strcspn(u, "#"), p->has[3] = 1;
        u += p->n[3];
    }
    if (*u == '#') {
        u++;
        p->s[4] = u, p->n[4] = strlen(u), p->has[4] = 1;
    }
}

/* RFC 3986 5.2.4, in place on a NUL-terminated path (the output never
 * overtakes the input). */
static void remove_dots(char *in)
{
    char *r = in;
    size_t o = 0;
    while (*r) {
        if (!strncmp(r, "../", 3))
            r += 3;
        else if (!strncmp(r, "./", 2))
            r += 2;
        else if (!strncmp(r, "/./", 3))
            r += 2;
        else if (!strcmp(r, "/."))
            r[1] = '/', r++;
        else if (!strncmp(r, "/../", 4) || !strcmp(r, "/..")) {
            if (r[3])
                r += 3;
            else
                r[2] = '/', r += 2;
            while (o > 0 && in[--o] != '/')
                ;
        } else if (!strcmp(r, ".") || !strcmp(r, ".."))
            r += strlen(r);
        else {
            do
                in[o++] = *r++;
            while (*r && *r != '/');
        }
    }
    in[o] = 0;
}

/* ref resolved against the absolute base (malloc'd; NULL on memory). */
static char *uri_resolve(const char *base, const char *ref)
{
    uri_t b, r;
    uri_parse(base, &b);
    uri_parse(ref, &r);
    tb_buf_t t = {0}, path = {0};
    const char *auth = NULL, *query = NULL;
    size_t na = 0, nq = 0;
    int has_a = 0, has_q = 0, e = 0;
    if (r.has[0]) {
        b = r;
        e |= tb_buf_put(&path, r.s[2], r.n[2]);
        auth = r.s[1], na = r.n[1], has_a = r.has[1], query = r.s[3], nq = r.n[3],
        has_q = r.has[3];
    } else {
        if (r.has[1]) {
            auth = r.s[1], na = r.n[1], has_a = 1;
            e |= tb_buf_put(&path, r.s[2], r.n[2]);
            query = r.s[3], nq = r.n[3], has_q = r.has[3];
        } else {
            auth = b.s[1], na = b.n[1], has_a = b.has[1];
            if (!r.n[2]) {
                e |= tb_buf_put(&path, b.s[2], b.n[2]);
                if (r.has[3])
                    query = r.s[3], nq = r.n[3], has_q = 1;
                else
                    query = b.s[3], nq = b.n[3], has_q = b.has[3];
            } else {
                if (r.s[2][0] == '/')
                    e |= tb_buf_put(&path, r.s[2], r.n[2]);
                else {
                    if (b.has[1] && !b.n[2])
                        e |= tb_buf_putc(&path, '/');
                    else {
                        size_t k = b.n[2];
                        while (k && b.s[2][k - 1] != '/')
                            k--;
                        e |= tb_buf_put(&path, b.s[2], k);
                    }
                    e |= tb_buf_put(&path, r.s[2], r.n[2]);
                }
                query = r.s[3], nq = r.n[3], has_q = r.has[3];
            }
        }
    }
    e |= tb_buf_putc(&path, 0);
    if (!e)
        remove_dots((char *)path.data);
    if (b.has[0])
        e |= tb_buf_put(&t, b.s[0], b.n[0]) || tb_buf_putc(&t, ':');
    if (has_a)
        e |= tb_buf_put(&t, "//", 2) || tb_buf_put(&t, auth, na);
    if (!e)
        e |= tb_buf_put(&t, path.data, strlen((char *)path.data));
    if (has_q)
        e |= tb_buf_putc(&t, '?') || tb_buf_put(&t, query, nq);
    if (r.has[4])
        e |= tb_buf_putc(&t, '#') || tb_buf_put(&t, r.s[4], r.n[4]);
    e |= tb_buf_putc(&t, 0);
    tb_buf_free(&path);
    if (e) {
        tb_buf_free(&t);
        return NULL;
    }
    return (char *)t.data;
}

/* ---- the walk ----------------------------------------------------------------- */

typedef struct {
    char *uri, *ptr; /* an absolute URI (a resource, or resource#anchor) -> pointer */
    int dyn;         /* a $dynamicAnchor's */
} name_t;

typedef struct {
    json_t *obj; /* the schema object holding the $ref */
    char *uri;   /* its absolute URI */
    int dynamic; /* a $dynamicRef */
    char *canon; /* a $dynamicRef's static target */
} pending_t;

typedef struct {
    sc_t *c;
    TB_VEC(name_t) names;
    TB_VEC(pending_t) pending;
    TB_VEC(char *) loaded; /* remote documents read (their URIs) */
    json_t *docs;
    int no_validation; /* the root's metaschema leaves the validation vocabulary out */
} walk_t;

/* The keywords of the validation vocabulary (2019-09 and 2020-12). */
static const char *const validation_kw[] = {
    "type", "const", "enum", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems",
    "uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties", "required",
    "dependentRequired", NULL};

static name_t *lookup_name(walk_t *w, const char *uri)
{
    for (size_t i = 0; i < w->names.len; i++)
        if (!strcmp(w->names.data[i].uri, uri))
            return &w->names.data[i];
    return NULL;
}

static const char *lookup(walk_t *w, const char *uri)
{
    name_t *n = lookup_name(w, uri);
    return n ? n->ptr : NULL;
}

/* Registers uri (taken) -> ptr (copied); the first registration wins. */
static int name(walk_t *w, char *uri, const char *ptr)
{
    if (!uri)
        return sc_oom(w->c);
    size_t n = strlen(uri);
    if (n && uri[n - 1] == '#')
        uri[n - 1] = 0; /* "x#" is the resource x */
    if (lookup(w, uri)) {
        free(uri);
        return 0;
    }
    name_t e = {uri, strdup(ptr), 0};
    if (!e.ptr || tb_vec_push(&w->names, e)) {
        free(uri);
        free(e.ptr);
        return sc_oom(w->c);
    }
    return 0;
}

/* key escaped for a pointer that sc_resolve decodes ('%' too). */
static char *join(const char *ptr, const char *key)
{
    tb_buf_t b = {0};
    int r = tb_buf_put(&b, ptr, strlen(ptr)) || tb_buf_putc(&b, '/');
    for (const char *k = key; *k && !r; k++)
        r = *k == '~'   ? tb_buf_put(&b, "~0", 2)
            : *k == '/' ? tb_buf_put(&b, "~1", 2)
            : *k == '%' ? tb_buf_put(&b, "%25", 3)
                        : tb_buf_putc(&b, (uint8_t)*k);
    if (r || tb_buf_putc(&b, 0)) {
        tb_buf_free(&b);
        return NULL;
    }
    return (char *)b.data;
}

static int walk(walk_t *w, json_t *s, const char *ptr, const char *base, int depth);

static int walk_at(walk_t *w, json_t *s, const char *ptr, const char *key, const char *base,
                   int depth)
{
    char *p = join(ptr, key);
    if (!p)
        return sc_oom(w->c);
    int r = walk(w, s, p, base, depth);
    free(p);
    return r;
}

static int walk(walk_t *w, json_t *s, const char *ptr, const char *base, int depth)
{
    /* the keywords the walk reads: where the names are (draft 4's id
     * too), then the schemas in one, a list or a map of them (items is
     * either) */
    enum { K_REF, K_ID, K_ID4, K_ANCHOR, K_DYNANCHOR, K_DYNREF, K_ONE, K_LIST = K_ONE + 12,
           K_MAP = K_LIST + 5, K_END = K_MAP + 6 };
    static const char *const kw[K_END + 1] = {
        "$ref", "$id", "id", "$anchor", "$dynamicAnchor", "$dynamicRef",
        "additionalItems", "additionalProperties", "contains", "not", "if", "then", "else",
        "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema", "items",
        "allOf", "anyOf", "oneOf", "prefixItems", "items",
        "properties", "patternProperties", "$defs", "definitions", "dependentSchemas",
        "dependencies", NULL};
    sc_t *c = w->c;
    if (!json_is_object(s))
        return 0;
    if (depth > MAX_DEPTH)
        return sc_fail(c, ptr, "schema nested too deeply");
    for (size_t i = 0; w->no_validation && validation_kw[i]; i++)
        json_object_del(s, validation_kw[i]); /* annotations there: they constrain nothing */
    json_t *m[K_END];
    sc_members(s, kw, m);
    json_t *ref = m[K_REF];
    const char *id = json_string_value(m[c->draft4 ? K_ID4 : K_ID]);
    if (ref && c->ref_alone)
        id = NULL; /* drafts 4 to 7 ignore what stands beside $ref, $id too */
    char *nb = NULL;
    if (id && id[0] == '#' && c->draft <= 7) {
        if (name(w, uri_resolve(base, id), ptr))
            return -1;
    } else if (id) {
        nb = uri_resolve(base, id);
        if (!nb)
            return sc_oom(c);
        char *hash = strchr(nb, '#');
        if (hash && hash[1] && hash[1] != '/' && c->draft <= 7 &&
            name(w, strdup(nb), ptr)) { /* draft 7's "x.json#foo" is an anchor too */
            free(nb);
            return -1;
        }
        if (hash)
            *hash = 0;
        if (name(w, strdup(nb), ptr)) {
            free(nb);
            return -1;
        }
        base = nb;
    }
    int r = 0;
    for (int i = 0; i < 2 && !r && c->draft >= 2019; i++) {
        const char *a = json_string_value(m[K_ANCHOR + i]);
        char *u = NULL;
        if (a && asprintf(&u, "%s#%s", base, a) < 0)
            r = sc_oom(c);
        else if (a && !(r = name(w, u, ptr)) && i == 1) {
            name_t *n = lookup_name(w, w->names.data[w->names.len - 1].uri);
            if (n && !strcmp(n->ptr, ptr))
                n->dyn = 1;
        }
    }
    json_t *dref = m[K_DYNREF];
    if (!r && !ref && json_is_string(dref) && c->draft >= 2020) {
        pending_t p = {s, uri_resolve(base, json_string_value(dref)), 1, NULL};
        if (!p.uri || tb_vec_push(&w->pending, p)) {
            free(p.uri);
            r = sc_oom(c);
        }
    }
    if (!r && json_is_string(ref)) {
        pending_t p = {s, uri_resolve(base, json_string_value(ref)), 0, NULL};
        if (!p.uri || tb_vec_push(&w->pending, p)) {
            free(p.uri);
            r = sc_oom(c);
        }
    }
    for (size_t i = K_ONE; i < K_LIST && !r; i++) {
        if (json_is_object(m[i]))
            r = walk_at(w, m[i], ptr, kw[i], base, depth + 1);
    }
    for (size_t i = K_LIST; i < K_MAP && !r; i++) {
        json_t *v = m[i], *x;
        size_t j;
        if (!json_is_array(v))
            continue;
        char *lp = join(ptr, kw[i]);
        if (!lp) {
            r = sc_oom(c);
            break;
        }
        json_array_foreach(v, j, x) {
            char key[32];
            snprintf(key, sizeof key, "%zu", j);
            if (!r)
                r = walk_at(w, x, lp, key, base, depth + 1);
        }
        free(lp);
    }
    for (size_t i = K_MAP; i < K_END && !r; i++) {
        json_t *v = m[i], *x;
        const char *k;
        if (!json_is_object(v))
            continue;
        char *mp = join(ptr, kw[i]);
        if (!mp) {
            r = sc_oom(c);
            break;
        }
        json_object_foreach(v, k, x) {
            if (!r)
                r = walk_at(w, x, mp, k, base, depth + 1);
        }
        free(mp);
    }
    free(nb);
    return r;
}

/* The draft a document's $schema names (0: none or unknown). */
static int doc_draft(json_t *d)
{
    const char *sv = json_string_value(json_object_get(d, "$schema"));
    return !sv                         ? 0
           : strstr(sv, "draft-04")    ? 4
           : strstr(sv, "draft-06")    ? 6
           : strstr(sv, "draft-07")    ? 7
           : strstr(sv, "2019-09")     ? 2019
           : strstr(sv, "2020-12")     ? 2020
                                       : 0;
}

/* The document at rel (a path under LOCALHOST) in opts.remote_dir, or NULL
 * with why. */
static json_t *read_remote(const sc_t *c, const char *rel, char *why, size_t nwhy)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", c->opts.remote_dir, rel);
    json_error_t je;
    json_t *d = json_load_file(path, JSON_DECODE_ANY, &je);
    if (!d)
        snprintf(why, nwhy, "%.300s: %.150s", path, je.text);
    return d;
}

/* From 2019-09 on, a root whose $schema is a metaschema of the remote
 * folder says by its $vocabulary which keywords assert: without the
 * validation vocabulary, type, enum, minimum... are annotations (w's
 * no_validation); with format-assertion, format asserts.  A vocabulary
 * required (true) that is none of the specification's is refused, as the
 * specification says; an optional one (false) is ignored. */
static int read_vocabularies(walk_t *w)
{
    static const char *const known[] = {"core", "applicator", "unevaluated", "validation",
                                        "meta-data", "format-annotation", "format-assertion",
                                        "content", NULL};
    sc_t *c = w->c;
    const char *sv = json_string_value(json_object_get(c->root, "$schema"));
    char why[512];
    if (c->draft < 2019 || !sv || !c->opts.remote_dir || strncmp(sv, LOCALHOST, strlen(LOCALHOST)))
        return 0;
    json_t *meta = read_remote(c, sv + strlen(LOCALHOST), why, sizeof why);
    json_t *vocab = json_object_get(meta, "$vocabulary"), *on;
    const char *uri;
    int r = 0, validation = !json_is_object(vocab);
    json_object_foreach(json_is_object(vocab) ? vocab : NULL, uri, on) {
        const char *v = strstr(uri, "/vocab/");
        size_t i = 0;
        int spec = v && (!strncmp(uri, "https://json-schema.org/draft/2020-12/", 38) ||
                         !strncmp(uri, "https://json-schema.org/draft/2019-09/", 38));
        while (spec && known[i] && strcmp(v + 7, known[i]))
            i++;
        if ((!spec || !known[i]) && json_is_true(on)) {
            r = sc_fail(c, "#/$schema", "the metaschema requires vocabulary '%s', unknown here",
                        uri);
            break;
        }
        if (spec && known[i] && !strcmp(known[i], "validation"))
            validation = 1;
        if (spec && known[i] && !strcmp(known[i], "format-assertion"))
            c->opts.format_annotation = 0;
    }
    w->no_validation = !validation;
    json_decref(meta);
    return r;
}

/* Reads the remote document uri (no fragment) from opts.remote_dir, grafts
 * and walks it: 0, 1 when there is none to read (why says so), -1. */
static int load_remote(walk_t *w, const char *uri, char *why, size_t nwhy)
{
    sc_t *c = w->c;
    for (size_t i = 0; i < w->loaded.len; i++)
        if (!strcmp(w->loaded.data[i], uri))
            return snprintf(why, nwhy, "no schema there"), 1;
    if (!c->opts.remote_dir || strncmp(uri, LOCALHOST, strlen(LOCALHOST)))
        return snprintf(why, nwhy, "%s",
                        c->opts.remote_dir ? "no such document (only " LOCALHOST
                                             "... is read, from the remote folder)"
                                           : "no such document (no remote folder given)"),
               1;
    char *u = strdup(uri);
    if (!u || tb_vec_push(&w->loaded, u)) {
        free(u);
        return sc_oom(c);
    }
    const char *rel = uri + strlen(LOCALHOST);
    if (strstr(rel, "..") || strchr(rel, '?'))
        return snprintf(why, nwhy, "not a file of the remote folder"), 1;
    json_t *d = read_remote(c, rel, why, nwhy);
    if (!d)
        return 1;
    int dd = doc_draft(d);
    if (dd && dd != c->draft) {
        json_decref(d);
        return snprintf(why, nwhy, "%s is a document of another draft (%d, not supported)",
                        uri, dd),
               1;
    }
    if (!w->docs) {
        w->docs = json_array();
        if (!w->docs || json_object_set_new(c->root, DOCS_KEY, w->docs)) {
            json_decref(d);
            return sc_oom(c);
        }
    }
    size_t i = json_array_size(w->docs);
    if (json_array_append_new(w->docs, d))
        return sc_oom(c);
    char ptr[64];
    snprintf(ptr, sizeof ptr, "#/%s/%zu", DOCS_KEY, i);
    if (name(w, strdup(uri), ptr))
        return -1;
    return walk(w, d, ptr, uri, 0) ? -1 : 0;
}

/* The pointer of the target of the absolute uri (malloc'd), or NULL with
 * why (r -1: an error). */
static char *target(walk_t *w, const char *uri, char *why, size_t nwhy, int *r)
{
    *r = 0;
    const char *hash = strchr(uri, '#');
    size_t nr = hash ? (size_t)(hash - uri) : strlen(uri);
    const char *frag = hash ? hash + 1 : "";
    char *res = strndup(uri, nr);
    if (!res)
        return *r = sc_oom(w->c), NULL;
    const char *p = lookup(w, res);
    if (!p) {
        int l = load_remote(w, res, why, nwhy);
        if (l < 0) {
            free(res);
            return *r = -1, NULL;
        }
        p = lookup(w, res);
    }
    free(res);
    if (!p)
        return NULL;
    char *out = NULL;
    if (!*frag || frag[0] == '/') {
        if (asprintf(&out, "%s%s", p, frag) < 0)
            return *r = sc_oom(w->c), NULL;
        return out;
    }
    const char *a = lookup(w, uri);
    if (!a) {
        snprintf(why, nwhy, "no anchor '%s' there", frag);
        return NULL;
    }
    out = strdup(a);
    if (!out)
        *r = sc_oom(w->c);
    return out;
}

/* Objects anywhere in j with "$dynamicAnchor": name (anything may be
 * reached by a JSON pointer, so no location is left out). */
static size_t count_dynamic(json_t *j, const char *name, int depth)
{
    size_t n = 0, i;
    const char *k;
    json_t *x;
    if (depth > 4 * MAX_DEPTH)
        return 2; /* too deep to know: as if there were more */
    if (json_is_object(j)) {
        const char *a = json_string_value(json_object_get(j, "$dynamicAnchor"));
        n += a && !strcmp(a, name);
        json_object_foreach(j, k, x) n += count_dynamic(x, name, depth + 1);
    } else if (json_is_array(j)) {
        json_array_foreach(j, i, x) n += count_dynamic(x, name, depth + 1);
    }
    return n;
}

int sc_refs_prepare(sc_t *c)
{
    if (!json_is_object(c->root))
        return 0;
    walk_t w = {.c = c};
    int r = read_vocabularies(&w) || walk(&w, c->root, "#", DEFAULT_BASE, 0);
    w.no_validation = 0; /* the documents $refs reach have metaschemas of their own */
    /* The root is itself at its base, $id or not. */
    if (!r && !lookup(&w, DEFAULT_BASE))
        r = name(&w, strdup(DEFAULT_BASE), "#");
    for (size_t i = 0; i < w.pending.len && !r; i++) {
        pending_t *p = &w.pending.data[i];
        json_t *ref = json_object_get(p->obj, "$ref");
        char why[1024] = "";
        char *t = target(&w, p->uri, why, sizeof why, &r);
        if (r)
            break;
        p = &w.pending.data[i]; /* target may have grown the vector */
        if (p->dynamic) {
            p->canon = t; /* decided once every document is read */
            continue;
        }
        char *bad = NULL;
        if (!t && asprintf(&bad, BAD_PREFIX "$ref '%s' cannot be resolved (%s: %s)",
                           json_string_value(ref), p->uri, why[0] ? why : "no such schema") < 0)
            r = sc_oom(c);
        else if (json_object_set_new(p->obj, "$ref", json_string(t ? t : bad)))
            r = sc_oom(c);
        free(t);
        free(bad);
        p = &w.pending.data[i]; /* target may have grown the vector */
    }
    /* A $dynamicRef is a $ref where its target has no $dynamicAnchor of
     * its fragment's name, or where no other schema anywhere has one (then
     * every dynamic scope finds that one); otherwise it stays refused. */
    for (size_t i = 0; i < w.pending.len && !r; i++) {
        pending_t *p = &w.pending.data[i];
        if (!p->dynamic || !p->canon)
            continue;
        const char *frag = strchr(p->uri, '#');
        frag = frag ? frag + 1 : "";
        name_t *n = *frag && *frag != '/' ? lookup_name(&w, p->uri) : NULL;
        if (n && n->dyn && count_dynamic(c->root, frag, 0) != 1)
            continue;
        if (json_object_set_new(p->obj, "$ref", json_string(p->canon)) ||
            json_object_del(p->obj, "$dynamicRef"))
            r = sc_oom(c);
    }
    for (size_t i = 0; i < w.names.len; i++)
        free(w.names.data[i].uri), free(w.names.data[i].ptr);
    for (size_t i = 0; i < w.pending.len; i++)
        free(w.pending.data[i].uri), free(w.pending.data[i].canon);
    for (size_t i = 0; i < w.loaded.len; i++)
        free(w.loaded.data[i]);
    free(w.names.data);
    free(w.pending.data);
    free(w.loaded.data);
    return r;
}

const char *sc_ref_bad(const char *ref)
{
    return strncmp(ref, BAD_PREFIX, strlen(BAD_PREFIX)) ? NULL : ref + strlen(BAD_PREFIX);
}

/* ---- pointers: the targets of the rewritten $refs -------------------------- */

static int unhex(char ch)
{
    return ch >= '0' && ch <= '9' ? ch - '0' : (ch | 0x20) >= 'a' && (ch | 0x20) <= 'f'
                                                   ? (ch | 0x20) - 'a' + 10 : -1;
}

/* The schema a $ref names, and its canonical pointer ("#/...", malloc'd;
 * NULL on failure, so that callers may free it either way). */
int sc_resolve(sc_t *c, const char *ref, const char *ptr, json_t **out, char **canon)
{
    const char *r = ref;
    *canon = NULL;
    const char *bad = sc_ref_bad(ref);
    if (bad)
        return sc_fail(c, ptr, "%s", bad);
    if (!*r)
        r = "#";
    if (r[0] != '#' || (r[1] && r[1] != '/'))
        return sc_fail(c, ptr, "$ref '%s' cannot be resolved", ref);
    json_t *at = c->root;
    const char *p = r + 1;
    tb_buf_t key = {0};
    while (*p == '/') {
        p++;
        key.len = 0;
        for (; *p && *p != '/'; p++) {
            char ch = *p;
            if (ch == '~' && (p[1] == '0' || p[1] == '1'))
                ch = *++p == '0' ? '~' : '/';
            else if (ch == '%' && unhex(p[1]) >= 0 && unhex(p[2]) >= 0)
                ch = (char)(unhex(p[1]) * 16 + unhex(p[2])), p += 2;
            if (tb_buf_putc(&key, (uint8_t)ch)) {
                tb_buf_free(&key);
                return sc_oom(c);
            }
        }
        if (tb_buf_putc(&key, 0)) {
            tb_buf_free(&key);
            return sc_oom(c);
        }
        const char *k = (const char *)key.data;
        char *end;
        if (json_is_object(at))
            at = json_object_get(at, k);
        else if (json_is_array(at) && *k >= '0' && *k <= '9' && (k[0] != '0' || !k[1])) {
            at = json_array_get(at, strtoul(k, &end, 10));
            if (*end)
                at = NULL;
        } else
            at = NULL;
        if (!at) {
            tb_buf_free(&key);
            return sc_fail(c, ptr, "$ref '%s' cannot be resolved", ref);
        }
    }
    tb_buf_free(&key);
    *out = at;
    *canon = strdup(r);
    return *canon ? 0 : sc_oom(c);
}


/* The nonterminal of a $ref's target (compiled on first use). */
int sc_ref_symbol(sc_t *c, const char *ref, const char *ptr, gr_sym_t *out)
{
    json_t *target;
    char *canon;
    if (sc_resolve(c, ref, ptr, &target, &canon))
        return -1;
    int32_t i = tb_strmap_get(&c->ref_map, (const uint8_t *)canon, strlen(canon));
    if (i >= 0) {
        free(canon);
        *out = c->refs.data[i].sym;
        return c->refs.data[i].state == 2;
    }
    /* A chain of bare $refs that comes back to itself has no base case. */
    json_t *hop = target;
    for (int n = 0; json_is_object(hop) && json_object_size(hop) == 1 && n <= MAX_DEPTH; n++) {
        const char *next = json_string_value(json_object_get(hop, "$ref"));
        json_t *t2;
        char *c2;
        if (!next || sc_resolve(c, next, canon, &t2, &c2))
            break;
        int loop = t2 == target || n == MAX_DEPTH;
        free(c2);
        if (loop) {
            int r = sc_fail(c, ptr, "$ref '%s' is a cycle of $refs with no base case", ref);
            free(canon);
            return r;
        }
        hop = t2;
    }
    return sc_keyed_symbol(c, canon, sc_value, target, canon, out);
}

int sc_keyed_symbol(sc_t *c, char *key, sc_compile_fn fn, json_t *s, const char *ptr,
                    gr_sym_t *out)
{
    int32_t i = tb_strmap_get(&c->ref_map, (const uint8_t *)key, strlen(key));
    if (i >= 0) {
        free(key);
        *out = c->refs.data[i].sym;
        return c->refs.data[i].state == 2;
    }
    ref_t rf = {0};
    if (gr_cfg_nonterm(c->g, key, strlen(key), nopos, &rf.sym, c->err) ||
        tb_vec_push(&c->ref_keys, key) || tb_vec_push(&c->refs, rf) ||
        tb_strmap_put(&c->ref_map, (const uint8_t *)key, strlen(key),
                      (int32_t)(c->refs.len - 1)) < 0) {
        if (!c->ref_keys.len || c->ref_keys.data[c->ref_keys.len - 1] != key)
            free(key);
        return c->err->msg[0] ? -1 : sc_oom(c);
    }
    size_t idx = c->refs.len - 1;
    gr_sym_t x;
    int r = fn(c, s, ptr, &x);
    if (r < 0)
        return -1;
    c->refs.data[idx].state = r == 1 ? 2 : 1;
    *out = c->refs.data[idx].sym;
    /* A schema that allows nothing keeps a rule that derives nothing, so
     * that the grammar has no undefined rule (it is never reached). */
    return r == 1 ? sc_rule(c, *out, out, 1) ? -1 : 1 : sc_rule(c, *out, &x, 1);
}

/* Whether the keywords beside a $ref say nothing its target does not (then
 * the $ref stays a shared, possibly recursive, rule). */
int sc_ref_siblings_redundant(sc_t *c, json_t *s, const char *ptr)
{
    json_t *t, *ft, *m;
    char *canon;
    const char *ref = json_string_value(json_object_get(s, "$ref"));
    if (!ref || sc_resolve(c, ref, ptr, &t, &canon))
        return 0;
    int r = 0;
    if (json_is_object(t) && !json_object_get(t, "allOf") && !json_object_get(t, "$ref")) {
        json_t *sib = json_copy(s);
        ft = t;
        m = t;
        if (!sc_keep(c, sib)) {
            json_object_del(sib, "$ref");
            r = !sc_merge(c, &m, sib, ptr) && json_equal(m, ft);
        }
    }
    free(canon);
    c->err->msg[0] = 0; /* a merge that fails is no error here */
    return r;
}
