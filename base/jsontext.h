/*
 * jsontext: JSON text scanned without building a tree.
 *
 * Two uses: jansson reads an integer beyond 64 bits as a double or not at
 * all, so the few who need its digits find its literal here; and the big
 * arrays and objects of vocabulary files (hundreds of thousands of
 * strings) are read here in one pass, without the node, hash entry and
 * string copy per value that a tree costs.
 *
 * The scanner is strict where it reads (RFC 8259 strings, numbers and
 * punctuation, strings valid UTF-8 without lone surrogates) and reports
 * only that something is off, not what: its callers fall back to a full
 * parser, whose message then names the fault.
 */
#ifndef TB_JSONTEXT_H
#define TB_JSONTEXT_H

#include <stddef.h>
#include <stdint.h>

/* The next number literal of JSON text t[0..n) from *at on, outside
 * strings (*at must not be inside one): its span is [*start, *at) after
 * the call.  1 for an integer (no fraction, no exponent), 0 for another
 * number, -1 when none is left. */
int tb_json_next_number(const char *t, size_t n, size_t *at, size_t *start);

/* A read position in JSON text t[0..n).  A string with escapes is
 * unescaped into out[out_len..out_cap); out_cap as large as the text read
 * always suffices (an escape is never shorter than what it stands for),
 * so strings already read stay where they are. */
typedef struct {
    const char *t;
    size_t n, at;
    char *out;
    size_t out_len, out_cap;
} tb_json_scan_t;

/* tb_json_peek where white space comes first. */
int tb_json_peek_past_ws(tb_json_scan_t *s);

/* Skips white space; the next character, or -1 at the end.  Inline: a
 * vocabulary file calls it a few times per token, mostly where no white
 * space is. */
static inline int tb_json_peek(tb_json_scan_t *s)
{
    if (s->at < s->n && (unsigned char)s->t[s->at] > ' ')
        return (unsigned char)s->t[s->at];
    return tb_json_peek_past_ws(s);
}

/* Consumes the character ch after white space: 1 if it was there, else 0. */
static inline int tb_json_eat(tb_json_scan_t *s, char ch)
{
    if (tb_json_peek(s) != (unsigned char)ch)
        return 0;
    s->at++;
    return 1;
}

/* Reads a string after white space: *str points into the text (no escapes)
 * or into out.  0, or -1 on anything but a valid string. */
int tb_json_string(tb_json_scan_t *s, const char **str, size_t *len);
/* tb_json_string without checking that the string is UTF-8 (escapes and
 * control characters are still checked): for a caller that only compares
 * it with strings that were checked, so that one not UTF-8 matches none. */
int tb_json_string_unchecked(tb_json_scan_t *s, const char **str, size_t *len);
/* Reads an integer 0 .. max written in plain digits: 0 or -1. */
int tb_json_uint(tb_json_scan_t *s, uint32_t max, uint32_t *v);
/* Reads true or false into *v: 0, or -1 if it is neither. */
int tb_json_bool(tb_json_scan_t *s, int *v);
/* Reads a number as strtod does: 0, or -1 if it is none or too large for
 * a double. */
int tb_json_double(tb_json_scan_t *s, double *v);
/* Skips one value after white space, counting brackets outside strings
 * without checking what is between them: 0, or -1 if the text ends
 * first. */
int tb_json_skip(tb_json_scan_t *s);

#endif
