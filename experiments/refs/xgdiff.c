/*
 * xgdiff: tokbench's masks against XGrammar's, token by token, each
 * difference put down to its cause (xgdiff.h).
 */
#include "xgdiff.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/buf.h"
#include "../../base/utf8.h"

const char *const xp_xg_cause_names[XP_XG_CAUSES] = {
    [XP_XG_STOP] = "the reference's stop tokens",
    [XP_XG_UTF8] = "not UTF-8",
    [XP_XG_CR] = "carriage return",
    [XP_XG_AROUND] = "whitespace around the document",
    [XP_XG_INTEGER] = "integer as 1.0 or 1e2",
    [XP_XG_ORDER] = "property order",
    [XP_XG_ESCAPE] = "\\/ or \\u in a constrained string",
    [XP_XG_CONTROL] = "raw control character in a string",
    [XP_XG_NOTJSON] = "not JSON",
    [XP_XG_STRESC] = "escape the reference refuses",
    [XP_XG_DEL] = "raw DEL in a string",
    [XP_XG_NEGZERO] = "-0 where the minimum is 0",
    [XP_XG_LOOSE] = "XGrammar's strictMode off",
    [XP_XG_NAMED] = "named property read as additional",
    [XP_XG_NONASCII] = "non-ASCII XGrammar's regex refuses",
    [XP_XG_TZ] = "date-time's t or z in lower case",
    [XP_XG_LEAP] = "leap second 60",
    [XP_XG_LABEL] = "host label past 63 characters",
    [XP_XG_GREEDY] = "greedy lexing",
    [XP_XG_LEADING] = "ignored text before the first lexeme",
    [XP_XG_FEB29] = "February 29 of a common year",
    [XP_XG_ADDRLIT] = "e-mail IPv6 or general address literal",
    [XP_XG_DOTCR] = "'.' matching a carriage return",
    [XP_XG_BOUND] = "number at the schema's bounds",
    [XP_XG_SPACE] = "U+FEFF or U+0085 as \\s",
    [XP_XG_OURS] = "unexplained, tokbench only",
    [XP_XG_THEIRS] = "unexplained, reference only",
};

static int is_ws(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int is_digit(uint8_t c)
{
    return c >= '0' && c <= '9';
}

/* Where a JSON text is, as far as property names go: which open
 * containers are objects (deeper than 64 levels: unknown) and which lie in
 * the value of a member the schema names, inside a string (a name or not),
 * or where a name may start. */
typedef struct {
    const xp_xg_ctx_t *c; /* its names; NULL: none */
    uint8_t object[64], named[64];
    size_t depth;
    int deep, in_string, escaped, name, want_name;
    int key_named;  /* the member whose value this is has a name the schema defines */
    char key[64];   /* that member's name, while it is read */
    size_t key_len;
} json_pos_t;

static int is_named(const xp_xg_ctx_t *c, const char *key)
{
    return c && c->n_names && bsearch(&key, c->names, c->n_names, sizeof *c->names, tb_cmp_strs);
}

static void in_string_step(json_pos_t *p, uint8_t ch)
{
    if (p->escaped) {
        p->escaped = 0;
    } else if (ch == '\\') {
        p->escaped = 1;
    } else if (ch == '"') {
        if (p->name)
            p->key_named = is_named(p->c, p->key);
        p->in_string = p->name = 0;
        return;
    }
    if (p->name && p->key_len + 1 < sizeof p->key) {
        p->key[p->key_len++] = (char)ch;
        p->key[p->key_len] = 0;
    }
}

static void json_step(json_pos_t *p, uint8_t ch)
{
    if (p->in_string) {
        in_string_step(p, ch);
        return;
    }
    if (ch == '"') {
        p->in_string = 1;
        p->name = p->want_name;
        p->want_name = 0;
        if (p->name)
            p->key[p->key_len = 0] = 0;
    } else if (ch == '{' || ch == '[') {
        if (p->depth == sizeof p->object) {
            p->deep = 1;
        } else {
            p->named[p->depth] = p->key_named || (p->depth && p->named[p->depth - 1]);
            p->object[p->depth++] = ch == '{';
        }
        p->want_name = ch == '{';
        p->key_named = 0;
    } else if (ch == '}' || ch == ']') {
        p->depth -= p->depth > 0;
        p->want_name = p->key_named = 0;
    } else if (ch == ',') {
        p->want_name = p->depth && p->object[p->depth - 1];
        p->key_named = 0;
    } else if (ch == ':') {
        p->want_name = 0;
    }
}

static int json_at_name(const json_pos_t *p)
{
    return !p->deep && (p->in_string ? p->name : p->want_name);
}

static void json_scan(json_pos_t *p, const xp_xg_ctx_t *c, const uint8_t *s, size_t n)
{
    memset(p, 0, sizeof *p);
    p->c = c;
    for (size_t i = 0; i < n; i++)
        json_step(p, s[i]);
}

int xp_xg_at_name(const uint8_t *prefix, size_t plen)
{
    json_pos_t p;
    json_scan(&p, NULL, prefix, plen);
    return json_at_name(&p);
}

/* 1 if the token s[0..n) starts or goes on at a property name from p. */
static int through_name(json_pos_t p, const uint8_t *s, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        if (json_at_name(&p))
            return 1;
        json_step(&p, s[k]);
    }
    return json_at_name(&p); /* a ',' that opens one more property */
}

static int is_control(uint8_t c)
{
    return c < 0x20;
}

static int is_backslash(uint8_t c)
{
    return c == '\\';
}

static int is_del(uint8_t c)
{
    return c == 0x7F;
}

static int is_non_ascii(uint8_t c)
{
    return c >= 0x80;
}

/* 1 if some byte of the token s[0..n), read on from p, is in a string (not
 * escaped) and is what `is` asks. */
static int in_string_byte(json_pos_t p, const uint8_t *s, size_t n, int (*is)(uint8_t))
{
    for (size_t k = 0; k < n; k++) {
        if (p.in_string && !p.escaped && is(s[k]))
            return 1;
        json_step(&p, s[k]);
    }
    return 0;
}

/* 1 if the token s[0..n) can follow prefix[0..plen) in UTF-8 text: the
 * prefix's unfinished character, then the token, are valid UTF-8 up to an
 * unfinished character that some continuation bytes finish. */
static int utf8_continues(const uint8_t *prefix, size_t plen, const uint8_t *s, size_t n)
{
    uint8_t buf[512 + 8];
    size_t tail = 0;
    for (size_t k = 1; k <= 3 && k <= plen; k++) {
        uint8_t c = prefix[plen - k];
        if ((c & 0xC0) != 0x80) { /* the last character's first byte */
            tail = tb_utf8_lead_len(c) > k ? k : 0;
            break;
        }
    }
    if (tail + n + 3 > sizeof buf)
        return 1; /* not a token any vocabulary here holds; say nothing */
    memcpy(buf, prefix + plen - tail, tail);
    memcpy(buf + tail, s, n);
    size_t len = tail + n, ok = tb_utf8_validate(buf, len);
    if (ok == len)
        return 1;
    size_t need = tb_utf8_lead_len(buf[ok]);
    if (buf[ok] < 0xC2 || buf[ok] > 0xF4 || len - ok >= need)
        return 0;
    static const uint8_t fill[] = {0x80, 0x90, 0xA0};
    for (size_t f = 0; f < sizeof fill; f++) {
        memset(buf + len, fill[f], need - (len - ok));
        if (tb_utf8_validate(buf + ok, need) == need)
            return 1;
    }
    return 0;
}

/* 1 if p is in the value of a member whose name the schema defines, or
 * anywhere inside one. */
static int in_named_value(const json_pos_t *p)
{
    return !p->name && (p->key_named || (p->depth && p->named[p->depth - 1]));
}

/* 1 if the token s[0..n), read on from p, goes into such a value. */
static int through_named_value(json_pos_t p, const uint8_t *s, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        if (in_named_value(&p))
            return 1;
        json_step(&p, s[k]);
    }
    return in_named_value(&p);
}

/* 1 if the text ends in a time's "hh:mm:" inside a string: the seconds
 * come next. */
static int before_seconds(const json_pos_t *p, const uint8_t *prefix, size_t plen)
{
    static const char shape[] = "00:00:";
    if (!p->in_string || plen < 6)
        return 0;
    for (size_t k = 0; k < 6; k++) {
        uint8_t ch = prefix[plen - 6 + k];
        if (shape[k] == ':' ? ch != ':' : !is_digit(ch))
            return 0;
    }
    return 1;
}

static int is_label(uint8_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '-';
}

/* The token runs a host name's label (after '@' or '.') past 63
 * characters, which RFC 1034 section 3.1 forbids and llguidance's email
 * format allows. */
static int long_label(const uint8_t *prefix, size_t plen, const uint8_t *s, size_t n)
{
    size_t run = 0, k = plen;
    for (; k > 0 && is_label(prefix[k - 1]); k--)
        run++;
    if (k == 0 || (prefix[k - 1] != '@' && prefix[k - 1] != '.'))
        return 0;
    for (size_t i = 0; i < n && is_label(s[i]); i++)
        if (++run > 63)
            return 1;
    return 0;
}

/* 1 if the token s[0..n), after prefix[0..plen) inside a string, gives
 * "YYYY-02-29" with YYYY not a leap year. */
static int common_feb29(const json_pos_t *p, const uint8_t *prefix, size_t plen,
                        const uint8_t *s, size_t n)
{
    static const char shape[] = "0000-02-29";
    uint8_t text[10];
    size_t k = 0;
    if (!p->in_string || n > 10 || plen + n < 10)
        return 0;
    for (; k < 10; k++) {
        size_t at = plen + n - 10 + k;
        text[k] = at < plen ? prefix[at] : s[at - plen];
        if (shape[k] == '0' ? !is_digit(text[k]) : text[k] != (uint8_t)shape[k])
            return 0;
    }
    unsigned y = (text[0] - '0') * 1000u + (text[1] - '0') * 100u + (text[2] - '0') * 10u +
                 (text[3] - '0');
    return y % 4 || (y % 100 == 0 && y % 400);
}

/* 1 if the token escapes a carriage return (\r) in a string, or finishes
 * that escape: ECMA-262's '.' (tokbench's patterns) leaves out line
 * terminators, llguidance's only \n. */
static int escaped_cr(const json_pos_t *p, const uint8_t *s, size_t n)
{
    if (p->in_string && p->escaped && s[0] == 'r')
        return 1;
    for (size_t k = 0; p->in_string && k + 1 < n; k++)
        if (s[k] == '\\' && s[k + 1] == 'r')
            return 1;
    return 0;
}

/* 1 if the token, outside any string, holds only what a number holds and
 * keeps the text JSON: a number whose bound llguidance checks later than
 * the first digit that breaks it. */
static int number_bytes(const xp_xg_ctx_t *c, const json_pos_t *p, const uint8_t *s, size_t n)
{
    if (p->in_string || !c->json || gr_feed(c->json, c->json_state, s, n, NULL) == GR_DEAD)
        return 0;
    for (size_t k = 0; k < n; k++)
        if (!is_digit(s[k]) && s[k] != '-' && s[k] != '.' && s[k] != 'e' && s[k] != 'E' &&
            s[k] != '+')
            return 0;
    return 1;
}

/* 1 if the token, inside a string, goes on with the UTF-8 bytes c[0..len)
 * of one character from where the text's bytes of it end. */
static int goes_on_with(const json_pos_t *p, const uint8_t *prefix, size_t plen,
                        const uint8_t *s, size_t n, const uint8_t *c, size_t len)
{
    size_t q = len - 1; /* how many of c's bytes the text ends with */
    while (q > 0 && (plen < q || memcmp(prefix + plen - q, c, q)))
        q--;
    return p->in_string && !p->escaped && !memcmp(s, c + q, n < len - q ? n : len - q);
}

/* ECMA-262's \s (tokbench's patterns) holds U+FEFF and not U+0085;
 * llguidance's (Unicode's White_Space) the other way round. */
static const uint8_t FEFF[] = {0xEF, 0xBB, 0xBF}, NEL[] = {0xC2, 0x85};

static xp_xg_cause_t theirs_only(const xp_xg_ctx_t *c, const json_pos_t *pos,
                                 const uint8_t *prefix, size_t plen, uint32_t id)
{
    size_t n;
    const uint8_t *s = tok_vocab_token(c->vocab, id, &n);
    if (trie_lookup(c->trie, s, n) < 0 && c->vocab->kind[id] != TOK_NORMAL)
        return XP_XG_STOP;
    if (!utf8_continues(prefix, plen, s, n))
        return XP_XG_UTF8;
    if (!c->schema)
        return XP_XG_THEIRS;
    if (c->llguidance) /* XGrammar's looser strings and names are not llguidance's */
        return c->json && gr_feed(c->json, c->json_state, s, n, NULL) == GR_DEAD
                   ? XP_XG_NOTJSON
               : long_label(prefix, plen, s, n)           ? XP_XG_LABEL
               : common_feb29(pos, prefix, plen, s, n)    ? XP_XG_FEB29
               : escaped_cr(pos, s, n)                    ? XP_XG_DOTCR
               : goes_on_with(pos, prefix, plen, s, n, NEL, sizeof NEL) ? XP_XG_SPACE
               : number_bytes(c, pos, s, n)               ? XP_XG_BOUND
                                                          : XP_XG_THEIRS;
    for (size_t k = 0; k + 1 < n; k++)
        if (s[k] == '\\' && (s[k + 1] == '/' || s[k + 1] == 'u'))
            return XP_XG_ESCAPE;
    if (in_string_byte(*pos, s, n, is_control))
        return XP_XG_CONTROL;
    if (c->json && gr_feed(c->json, c->json_state, s, n, NULL) == GR_DEAD)
        return XP_XG_NOTJSON;
    if (c->strict && id < c->strict->nbits && !tb_bitset_get(c->strict, id))
        return XP_XG_LOOSE;
    if (through_named_value(*pos, s, n))
        return XP_XG_NAMED;
    return XP_XG_THEIRS;
}

/* The token closes the document (a prefix of it reaches an accepting
 * state) and only whitespace follows in it. */
static int ends_then_space(const xp_xg_ctx_t *c, uint32_t st, const uint8_t *s, size_t n)
{
    for (size_t k = 0; k + 1 < n; k++) {
        if (s[k] != '}' && s[k] != ']' && s[k] != '"' && !is_digit(s[k]))
            continue;
        if (!is_ws(s[k + 1]) || !gr_accepting(c->g, gr_feed(c->g, st, s, k + 1, NULL)))
            continue;
        size_t j = k + 1;
        while (j < n && is_ws(s[j]))
            j++;
        return j == n;
    }
    return 0;
}

/* 1 if the token with its t and z in upper case is one XGrammar allows. */
static int upper_tz_allowed(const xp_xg_ctx_t *c, const uint8_t *s, size_t n)
{
    uint8_t up[256];
    int changed = 0;
    if (!c->theirs || n > sizeof up)
        return 0;
    for (size_t k = 0; k < n; k++) {
        up[k] = s[k] == 't' ? 'T' : s[k] == 'z' ? 'Z' : s[k];
        changed |= up[k] != s[k];
    }
    int32_t id = changed ? trie_lookup(c->trie, up, n) : -1;
    return id >= 0 && (size_t)id < c->theirs->nbits && tb_bitset_get(c->theirs, (size_t)id);
}

/* 1 if the token s[0..n) starts a number with '-' (after whitespace) where
 * at st it may only be zero ("-0", "-0.0"): the schema's minimum is 0,
 * which -0 meets. */
static int only_zero_negative(const xp_xg_ctx_t *c, uint32_t st, const uint8_t *s, size_t n)
{
    size_t w = 0;
    while (w < n && is_ws(s[w]))
        w++;
    if (w == n || s[w] != '-' || (st = gr_feed(c->g, st, s, w, NULL)) == GR_DEAD)
        return 0;
    char neg[] = "-1";
    for (neg[1] = '1'; neg[1] <= '9'; neg[1]++)
        if (gr_feed(c->g, st, (const uint8_t *)neg, 2, NULL) != GR_DEAD)
            return 0;
    return gr_feed(c->g, st, (const uint8_t *)"-0", 2, NULL) != GR_DEAD;
}

/* 1 if some state on the way through prefix and then s holds two readings
 * of the text, which split it into lexemes at different places (two lexer
 * states: one where a lexeme ended, one where it went on), so that a
 * greedy lexer, which keeps only the longest, may refuse what follows. */
static int two_readings(gr_gram_t *g, const uint8_t *prefix, size_t plen, const uint8_t *s,
                        size_t n)
{
    uint32_t st = GR_START;
    for (size_t k = 0; k < plen + n; k++) {
        size_t pairs;
        if ((st = gr_step(g, st, k < plen ? prefix[k] : s[k - plen])) == GR_DEAD)
            return 0;
        gr_pairs(g, st, &pairs);
        if (pairs > 1)
            return 1;
    }
    return 0;
}

/* 1 if the prefix ends inside an escape of a string: after its backslash,
 * or in the hex digits of a \u. */
static int in_escape(const json_pos_t *p, const uint8_t *prefix, size_t plen)
{
    if (!p->in_string)
        return 0;
    if (p->escaped)
        return 1;
    size_t k = plen, hex = 0;
    while (k > 0 && hex < 4 && isxdigit(prefix[k - 1]))
        k--, hex++;
    return hex < 4 && k >= 2 && prefix[k - 1] == 'u' && prefix[k - 2] == '\\';
}

/* 1 if the token, inside a string, goes into or through an e-mail address
 * literal that is not IPv4 ("@[" then a letter: "IPv6:" or a general
 * tag, RFC 5321 section 4.1.3): the current string's bytes, then the
 * token's, are scanned for "@[" and a letter after it. */
static int address_literal(const json_pos_t *p, const uint8_t *prefix, size_t plen,
                           const uint8_t *s, size_t n)
{
    if (!p->in_string)
        return 0;
    size_t k = plen;
    while (k > 0 && prefix[k - 1] != '"')
        k--;
    int open = 0;
    for (size_t j = k; j < plen + n; j++) {
        uint8_t b = j < plen ? prefix[j] : s[j - plen];
        uint8_t before = j == 0 ? 0 : j - 1 < plen ? prefix[j - 1] : s[j - 1 - plen];
        if (before == '@' && b == '[')
            open = 1;
        else if (open && (b | 0x20) >= 'a' && (b | 0x20) <= 'z')
            return 1;
    }
    return 0;
}

static xp_xg_cause_t ours_only(const xp_xg_ctx_t *c, const json_pos_t *pos,
                               const uint8_t *prefix, size_t plen, uint32_t st, uint32_t id)
{
    size_t n;
    const uint8_t *s = tok_vocab_token(c->vocab, id, &n);
    if (!c->schema && c->llguidance && c->ignores && is_ws(s[0])) {
        size_t k = 0;
        while (k < plen && is_ws(prefix[k]))
            k++;
        if (k == plen) /* whitespace only so far: no lexeme yet */
            return XP_XG_LEADING;
    }
    if (!c->schema)
        return c->llguidance && two_readings(c->g, prefix, plen, s, n) ? XP_XG_GREEDY
                                                                       : XP_XG_OURS;
    if (!c->llguidance && memchr(s, '\r', n)) /* llguidance's whitespace has \r */
        return XP_XG_CR;
    if (is_ws(s[0]) && (!plen || gr_accepting(c->g, st)))
        return XP_XG_AROUND;
    if (ends_then_space(c, st, s, n))
        return XP_XG_AROUND;
    if (plen && is_digit(prefix[plen - 1]) && (s[0] == '.' || s[0] == 'e' || s[0] == 'E'))
        return XP_XG_INTEGER;
    if (!pos->in_string && only_zero_negative(c, st, s, n))
        return XP_XG_NEGZERO;
    if (through_name(*pos, s, n))
        return XP_XG_ORDER;
    if (in_string_byte(*pos, s, n, is_backslash) || (c->llguidance && in_escape(pos, prefix, plen)))
        return XP_XG_STRESC;
    if (c->llguidance && address_literal(pos, prefix, plen, s, n))
        return XP_XG_ADDRLIT;
    if (c->llguidance && goes_on_with(pos, prefix, plen, s, n, FEFF, sizeof FEFF))
        return XP_XG_SPACE;
    if (c->llguidance && number_bytes(c, pos, s, n))
        return XP_XG_BOUND;
    if (in_string_byte(*pos, s, n, is_del))
        return XP_XG_DEL;
    if (c->llguidance) /* the causes below are XGrammar's regexes' */
        return XP_XG_OURS;
    if (in_string_byte(*pos, s, n, is_non_ascii))
        return XP_XG_NONASCII;
    if (upper_tz_allowed(c, s, n))
        return XP_XG_TZ;
    if (s[0] == '6' && before_seconds(pos, prefix, plen))
        return XP_XG_LEAP;
    return XP_XG_OURS;
}

static xp_xg_cause_t cause_at(const xp_xg_ctx_t *c, const json_pos_t *pos,
                              const uint8_t *prefix, size_t plen, uint32_t st, uint32_t id,
                              int ours)
{
    return ours ? ours_only(c, pos, prefix, plen, st, id) : theirs_only(c, pos, prefix, plen, id);
}

xp_xg_cause_t xp_xg_cause(const xp_xg_ctx_t *c, const uint8_t *prefix, size_t plen,
                          uint32_t st, uint32_t id, int ours)
{
    xp_xg_ctx_t at = *c;
    if (at.json)
        at.json_state = gr_feed(at.json, GR_START, prefix, plen, NULL);
    json_pos_t pos;
    json_scan(&pos, &at, prefix, plen);
    return cause_at(&at, &pos, prefix, plen, st, id, ours);
}

xp_xg_cause_t xp_xg_end_cause(const xp_xg_ctx_t *c, const uint8_t *prefix, size_t plen,
                              int ours)
{
    if (c->llguidance && ours && two_readings(c->g, prefix, plen, NULL, 0))
        return XP_XG_GREEDY;
    size_t k = plen;
    while (k > 0 && (prefix[k - 1] == '0' || prefix[k - 1] == '.'))
        k--;
    if (c->schema && ours && k > 0 && prefix[k - 1] == '-' && k < plen && prefix[k] == '0')
        return XP_XG_NEGZERO; /* the text ends in -0 (or -0.0): a minimum of 0 holds */
    return ours ? XP_XG_OURS : XP_XG_THEIRS;
}

size_t xp_xg_diff(const xp_xg_ctx_t *c, const tb_bitset_t *ours, const tb_bitset_t *theirs,
                  const uint8_t *prefix, size_t plen, uint32_t st,
                  size_t counts[XP_XG_CAUSES], uint32_t *unexplained)
{
    size_t differ = 0, n = ours->nbits < theirs->nbits ? ours->nbits : theirs->nbits;
    xp_xg_ctx_t at = *c;
    at.theirs = theirs;
    if (at.json)
        at.json_state = gr_feed(at.json, GR_START, prefix, plen, NULL);
    c = &at;
    json_pos_t pos;
    json_scan(&pos, c, prefix, plen);
    *unexplained = UINT32_MAX;
    for (size_t w = 0; w * 64 < n; w++) {
        uint64_t x = ours->words[w] ^ theirs->words[w];
        for (; x; x &= x - 1) {
            uint32_t id = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(x));
            if (id >= n)
                break;
            xp_xg_cause_t why = cause_at(c, &pos, prefix, plen, st, id, tb_bitset_get(ours, id));
            counts[why]++;
            differ++;
            if ((why == XP_XG_OURS || why == XP_XG_THEIRS) && *unexplained == UINT32_MAX)
                *unexplained = id;
        }
    }
    return differ;
}

static int hex_digit(char h)
{
    return h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : -1;
}

int xp_xg_read_hex(const char *hex, tb_bitset_t *set, tb_err_t *err)
{
    size_t len = strlen(hex);
    if (len % 8)
        return tb_fail(err, "XGrammar's mask: %zu hex digits, not whole 32-bit words", len);
    tb_bitset_clear_all(set);
    for (size_t w = 0; w < len / 8; w++) {
        uint32_t word = 0;
        for (size_t k = 0; k < 8; k++) {
            int d = hex_digit(hex[w * 8 + k]);
            if (d < 0)
                return tb_fail(err, "XGrammar's mask: '%c' at digit %zu is not hex",
                               hex[w * 8 + k], w * 8 + k);
            word = word << 4 | (uint32_t)d;
        }
        for (; word; word &= word - 1) {
            size_t id = w * 32 + (size_t)__builtin_ctz(word);
            if (id >= set->nbits)
                return tb_fail(err, "XGrammar's mask allows id %zu, past the vocabulary's %zu",
                               id, set->nbits);
            tb_bitset_set(set, id);
        }
    }
    return 0;
}
