/*
 * names: propertyNames.  Names are strings, so propertyNames is
 * the string schema every name of an object must meet: the keywords that
 * apply to strings (type, enum, const, minLength, maxLength, pattern,
 * format) as one string lexeme N.  A defined or required name that N
 * rejects cannot appear (a required one: no object qualifies); the
 * lexemes of the other names (additional and pattern classes) are
 * intersected with N as a top-level look-ahead "(?=(?:N)$)", the
 * intersection the lexer writes for the schema's lexemes.
 */
#include <stdlib.h>
#include <string.h>

#include "../../lexer/deriv.h"
#include "../ecma.h"
#include "internal.h"

static const lex_dfa_opts_t names_opts = {.lookahead = 1};

void sc_names_free(sc_names_t *n)
{
    lex_dfa_free(n->dfa);
    tb_buf_free(&n->re);
    memset(n, 0, sizeof *n);
}

int sc_names_init(sc_t *c, json_t *s, const char *ptr, sc_names_t *n)
{
    static const char *const refused[] = {"anyOf", "oneOf", "not", "if", "$dynamicRef",
                                          "$recursiveRef", "dependentSchemas", NULL};
    memset(n, 0, sizeof *n);
    json_t *pn = json_object_get(s, "propertyNames");
    if (!pn || json_is_true(pn))
        return 0;
    n->on = 1;
    char *p = sc_ptr_join(ptr, "propertyNames");
    if (!p)
        return sc_oom(c);
    int r = 0;
    if (json_is_object(pn) && sc_flatten(c, pn, p, &pn))
        r = -1;
    else if (json_is_false(pn) || (json_is_object(pn) && json_object_get(pn, "type") &&
                                   !(sc_type_mask(json_object_get(pn, "type")) & T_STR)))
        n->none = 1;
    else if (json_is_true(pn))
        n->on = 0;
    else if (!json_is_object(pn))
        r = sc_fail(c, p, "a schema must be an object or a boolean");
    for (size_t i = 0; !r && n->on && !n->none && refused[i]; i++)
        if (json_object_get(pn, refused[i]))
            r = sc_fail(c, ptr, "'propertyNames' with '%s' is not supported", refused[i]);
    json_t *en = r || !n->on || n->none ? NULL : json_object_get(pn, "enum");
    json_t *cn = r || !n->on || n->none ? NULL : json_object_get(pn, "const");
    if (!r && n->on && !n->none && (en || cn)) {
        /* the strings of enum and const that the string keywords admit */
        json_t *vals = cn ? json_pack("[O]", cn) : json_incref(en);
        size_t i, got = 0;
        json_t *v;
        if (!vals || !json_is_array(vals))
            r = vals ? sc_fail(c, p, "'enum' must be an array") : sc_oom(c);
        int e = r || tb_buf_put(&n->re, "(?:", 3);
        sc_checks_t checks = {0};
        json_array_foreach(vals, i, v) {
            if (e || !json_is_string(v) || (en && cn && !sc_in_enum(en, v)))
                continue;
            int ok = sc_value_passes(c, &checks, pn, p, v);
            if (ok < 0) {
                r = -1;
                break;
            }
            if (ok)
                e |= (got++ && tb_buf_putc(&n->re, '|')) ||
                     gr_json_quote_regex(&n->re, (const uint8_t *)json_string_value(v),
                                         json_string_length(v), c->sets);
        }
        sc_checks_free(&checks);
        json_decref(vals);
        if (!r && (e || tb_buf_put(&n->re, ")", 1) || tb_buf_putc(&n->re, 0)))
            r = sc_oom(c);
        if (!r && !got)
            n->none = 1;
    } else if (!r && n->on && !n->none) {
        r = sc_string_regex(c, pn, p, &n->re);
        if (r == 1)
            n->none = 1, r = 0;
    }
    if (!r && n->on && !n->none) {
        n->dfa = lex_dfa_new((const char *)n->re.data, &names_opts, c->err);
        if (!n->dfa)
            r = tb_wrap(c->err, "%s", p);
    }
    free(p);
    if (r)
        sc_names_free(n);
    return r ? -1 : 0;
}

int sc_names_allow(sc_t *c, const sc_names_t *n, const char *name)
{
    if (!n->on)
        return 1;
    if (n->none)
        return 0;
    tb_buf_t q = {0};
    if (gr_json_quote(&q, (const uint8_t *)name, strlen(name))) { /* quotes included */
        tb_buf_free(&q);
        return sc_oom(c);
    }
    uint32_t st = lex_dfa_feed(n->dfa, LEX_START, q.data, q.len);
    tb_buf_free(&q);
    return st != LEX_DEAD && lex_dfa_accepting(n->dfa, st);
}

int sc_names_restrict(sc_t *c, const sc_names_t *n, const char *regex, tb_buf_t *out)
{
    out->len = 0;
    int e = 0;
    if (n->on && !n->none)
        e = tb_buf_put(out, "(?=(?:", 6) || tb_buf_put(out, n->re.data, n->re.len - 1) ||
            tb_buf_put(out, ")$)", 3);
    e = e || tb_buf_put(out, regex, strlen(regex)) || tb_buf_putc(out, 0);
    return e ? sc_oom(c) : 0;
}
