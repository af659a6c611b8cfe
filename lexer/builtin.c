/* builtin: any, utf8, letters and digits as terms and lazy DFAs (see
 * builtin.h). */
#include "builtin.h"

#include <string.h>

const char lex_builtin_names[] = "any, utf8, letters, digits";

/* The bytes lo..hi, then the sequence of the remaining ranges (pairs
 * lo, hi in r[0..2n)). */
static lex_term_t seq(lex_terms_t *t, const uint8_t *r, size_t n)
{
    lex_term_t x = LEX_EPSILON;
    for (size_t i = n; i-- > 0;)
        x = lex_concat(t, lex_byte_range(t, r[2 * i], r[2 * i + 1]), x);
    return x;
}

/* One UTF-8 character: the RFC 3629 table of well-formed sequences. */
static lex_term_t utf8_char(lex_terms_t *t)
{
    static const uint8_t rows[][8] = {
        {1, 0x00, 0x7F},
        {2, 0xC2, 0xDF, 0x80, 0xBF},
        {3, 0xE0, 0xE0, 0xA0, 0xBF, 0x80, 0xBF},
        {3, 0xE1, 0xEC, 0x80, 0xBF, 0x80, 0xBF},
        {3, 0xED, 0xED, 0x80, 0x9F, 0x80, 0xBF},
        {3, 0xEE, 0xEF, 0x80, 0xBF, 0x80, 0xBF},
        {4, 0xF0, 0xF0, 0x90, 0xBF, 0x80, 0xBF}, /* and a fourth 80-BF */
        {4, 0xF1, 0xF3, 0x80, 0xBF, 0x80, 0xBF},
        {4, 0xF4, 0xF4, 0x80, 0x8F, 0x80, 0xBF},
    };
    lex_term_t any = LEX_NOTHING;
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        uint8_t r[8];
        memcpy(r, rows[i] + 1, 6);
        r[6] = 0x80, r[7] = 0xBF; /* the fourth byte, where there is one */
        any = lex_or(t, any, seq(t, r, rows[i][0]));
    }
    return any;
}

static lex_term_t ascii_letters(lex_terms_t *t)
{
    static const uint8_t r[] = {'A', 'Z', 'a', 'z', ' ', ' '};
    lex_term_t x = LEX_NOTHING;
    for (size_t i = 0; i < sizeof r; i += 2)
        x = lex_or(t, x, lex_byte_range(t, r[i], r[i + 1]));
    return x;
}

/* What the star repeats, or LEX_NOTHING for no such name. */
static lex_term_t unit(lex_terms_t *t, const char *name)
{
    if (!strcmp(name, "any"))
        return lex_byte_range(t, 0x00, 0xFF);
    if (!strcmp(name, "utf8"))
        return utf8_char(t);
    if (!strcmp(name, "letters"))
        return ascii_letters(t);
    if (!strcmp(name, "digits"))
        return lex_byte_range(t, '0', '9');
    return LEX_NOTHING;
}

lex_dfa_t *lex_builtin_dfa(const char *name, const lex_dfa_opts_t *opts, tb_err_t *err)
{
    lex_terms_t t;
    size_t max_terms = opts && opts->max_terms ? opts->max_terms : LEX_DEFAULT_MAX_TERMS;
    if (lex_terms_init(&t, max_terms, err))
        return NULL;
    lex_term_t u = unit(&t, name), root = lex_star(&t, u);
    if (u == LEX_NOTHING || t.full) {
        if (t.full)
            tb_fail(err, "built-in recognizer '%s': more than %zu terms", name,
                    t.max_nodes);
        else
            tb_fail(err, "'%s' is not a built-in recognizer (%s)", name,
                    lex_builtin_names);
        lex_terms_free(&t);
        return NULL;
    }
    return lex_dfa_new_term(&t, root, name, opts, err);
}
