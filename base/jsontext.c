/* jsontext: number literals of JSON text, and a scanner (see jsontext.h). */
#include "jsontext.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

static int digit(char ch) { return ch >= '0' && ch <= '9'; }

int tb_json_next_number(const char *t, size_t n, size_t *at, size_t *start)
{
    int in = 0; /* inside a string */
    for (size_t i = *at; i < n; i++) {
        char ch = t[i];
        if (in || (ch != '-' && !digit(ch))) {
            i += in && ch == '\\'; /* an escape's next character is no quote */
            in ^= ch == '"';
            continue;
        }
        size_t j = i + (ch == '-');
        int integer = 1;
        for (; j < n && (digit(t[j]) || (t[j] && strchr(".eE+-", t[j]))); j++)
            integer &= digit(t[j]);
        *start = i;
        *at = j;
        return integer;
    }
    *at = n;
    return -1;
}

/* ---- the scanner ------------------------------------------------------- */

static int is_ws(char ch)
{
    return ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t';
}

/* Vocabulary files are megabytes of short strings, and pretty-printed
 * ones indent each: the two loops of the scanner, the white space between
 * values and the plain bytes of a string, look at 16 bytes at once where
 * SSE2 is there (on every x86-64). */
#ifdef __SSE2__
static unsigned bytes_eq(__m128i v, char ch)
{
    return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(ch)));
}
#endif

/* Length of the plain string bytes at the start of p[0..n): up to a quote,
 * a backslash or a control character.  *high is set if one of them is past
 * ASCII. */
static size_t plain_run(const char *p, size_t n, int *high)
{
    size_t i = 0;
#ifdef __SSE2__
    for (; n - i >= 16; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        /* signed: bytes past ASCII are negative, controls 0 .. 31 */
        __m128i ctl = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(-1)),
                                    _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
        unsigned stop = bytes_eq(v, '"') | bytes_eq(v, '\\') |
                        (unsigned)_mm_movemask_epi8(ctl);
        unsigned hi = (unsigned)_mm_movemask_epi8(v);
        if (stop) {
            unsigned before = (1u << __builtin_ctz(stop)) - 1;
            *high |= (hi & before) != 0;
            return i + (size_t)__builtin_ctz(stop);
        }
        *high |= hi != 0;
    }
#endif
    for (; i < n && p[i] != '"' && p[i] != '\\' && (unsigned char)p[i] >= 0x20; i++)
        *high |= (unsigned char)p[i] >= 0x80;
    return i;
}

int tb_json_peek_past_ws(tb_json_scan_t *s)
{
    const char *t = s->t;
    size_t at = s->at, n = s->n;
#ifdef __SSE2__
    for (; n - at >= 16; at += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(t + at));
        unsigned other = ~(bytes_eq(v, ' ') | bytes_eq(v, '\n') |
                           bytes_eq(v, '\r') | bytes_eq(v, '\t')) & 0xFFFF;
        if (other) {
            s->at = at + (size_t)__builtin_ctz(other);
            return (unsigned char)t[s->at];
        }
    }
#endif
    while (at < n && is_ws(t[at]))
        at++;
    s->at = at;
    return at < n ? (unsigned char)t[at] : -1;
}

static int hex4(const char *p, uint32_t *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char ch = p[i];
        int d = digit(ch) ? ch - '0'
              : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
              : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        *v = *v << 4 | (uint32_t)d;
    }
    return 0;
}

/* The code point of the \u escape at p (the backslash), surrogate pairs
 * joined; its length in *used, or 0 for a bad or lone surrogate. */
static uint32_t unicode_escape(const char *p, size_t room, size_t *used)
{
    uint32_t hi, lo;
    *used = 0;
    if (room < 6 || hex4(p + 2, &hi))
        return 0;
    if (hi < 0xD800 || hi > 0xDFFF) {
        *used = 6;
        return hi;
    }
    if (hi > 0xDBFF || room < 12 || p[6] != '\\' || p[7] != 'u' ||
        hex4(p + 8, &lo) || lo < 0xDC00 || lo > 0xDFFF)
        return 0;
    *used = 12;
    return 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
}

/* Unescapes the rest of a string whose first escape is at t[i] into out;
 * *end is the offset of the closing quote.  0 or -1. */
static int unescape(tb_json_scan_t *s, size_t start, size_t i, size_t *end)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    size_t o = s->out_len;
    if (s->out_cap - o < i - start)
        return -1;
    memcpy(s->out + o, s->t + start, i - start);
    o += i - start;
    while (i < s->n && s->t[i] != '"') {
        char ch = s->t[i];
        if ((unsigned char)ch < 0x20 || o >= s->out_cap)
            return -1;
        if (ch != '\\') {
            s->out[o++] = ch;
            i++;
            continue;
        }
        const char *k = i + 1 < s->n && s->t[i + 1] ? strchr(from, s->t[i + 1]) : NULL;
        if (k) {
            s->out[o++] = to[k - from];
            i += 2;
            continue;
        }
        size_t used = 0;
        uint8_t u[4];
        uint32_t cp = s->t[i + 1] == 'u' ? unicode_escape(s->t + i, s->n - i, &used) : 0;
        size_t w = used ? tb_utf8_encode(cp, u) : 0;
        if (!w || s->out_cap - o < w)
            return -1;
        memcpy(s->out + o, u, w);
        o += w;
        i += used;
    }
    *end = i;
    s->out_len = o;
    return i < s->n ? 0 : -1;
}

static int read_string(tb_json_scan_t *s, const char **str, size_t *len,
                       int check)
{
    if (!tb_json_eat(s, '"'))
        return -1;
    size_t start = s->at;
    int high = 0; /* a byte past ASCII: the UTF-8 needs checking */
    const char *t = s->t;
    size_t i = start + plain_run(t + start, s->n - start, &high);
    if (i < s->n && (unsigned char)t[i] < 0x20)
        return -1;
    if (i < s->n && t[i] == '\\') {
        size_t from = s->out_len;
        if (unescape(s, start, i, &i))
            return -1;
        *str = s->out + from;
        *len = s->out_len - from;
        high = 1;
    } else if (i < s->n) {
        *str = t + start;
        *len = i - start;
    } else {
        return -1;
    }
    if (check && high && tb_utf8_validate((const uint8_t *)*str, *len) != *len)
        return -1;
    s->at = i + 1;
    return 0;
}

int tb_json_string(tb_json_scan_t *s, const char **str, size_t *len)
{
    return read_string(s, str, len, 1);
}

int tb_json_string_unchecked(tb_json_scan_t *s, const char **str, size_t *len)
{
    return read_string(s, str, len, 0);
}

/* The span of the number at the read position, as RFC 8259 writes it;
 * 1 if it is an integer, 0 if not, -1 if there is none. */
static int number_span(tb_json_scan_t *s, size_t *end)
{
    const char *t = s->t;
    size_t i = s->at, n = s->n;
    i += i < n && t[i] == '-';
    if (i >= n || !digit(t[i]))
        return -1;
    if (t[i++] != '0')
        while (i < n && digit(t[i]))
            i++;
    int integer = 1;
    if (i < n && t[i] == '.') {
        integer = 0;
        if (++i >= n || !digit(t[i]))
            return -1;
        while (i < n && digit(t[i]))
            i++;
    }
    if (i < n && (t[i] == 'e' || t[i] == 'E')) {
        integer = 0;
        i++;
        i += i < n && (t[i] == '+' || t[i] == '-');
        if (i >= n || !digit(t[i]))
            return -1;
        while (i < n && digit(t[i]))
            i++;
    }
    *end = i;
    return integer;
}

int tb_json_uint(tb_json_scan_t *s, uint32_t max, uint32_t *v)
{
    const char *t = s->t;
    size_t n = s->n;
    if (!digit((char)tb_json_peek(s)))
        return -1;
    /* the digits, then what may follow an integer: a fraction or an
     * exponent makes the number no integer, as does a leading zero
     * followed by more digits (JSON has none); 11 digits are too many */
    size_t at = s->at, i = at + 1;
    uint64_t x = (uint64_t)(t[at] - '0');
    if (x)
        for (; i < n && digit(t[i]) && i - at <= 10; i++)
            x = x * 10 + (uint64_t)(t[i] - '0');
    if (i - at > 10 || x > max ||
        (i < n && (t[i] == '.' || t[i] == 'e' || t[i] == 'E')))
        return -1;
    *v = (uint32_t)x;
    s->at = i;
    return 0;
}

int tb_json_bool(tb_json_scan_t *s, int *v)
{
    int c = tb_json_peek(s);
    size_t len = c == 't' ? 4 : 5;
    if ((c != 't' && c != 'f') || s->n - s->at < len ||
        memcmp(s->t + s->at, c == 't' ? "true" : "false", len))
        return -1;
    s->at += len;
    *v = c == 't';
    return 0;
}

int tb_json_double(tb_json_scan_t *s, double *v)
{
    size_t end;
    char lit[64];
    if (tb_json_peek(s) < 0 || number_span(s, &end) < 0 ||
        end - s->at >= sizeof lit)
        return -1;
    memcpy(lit, s->t + s->at, end - s->at);
    lit[end - s->at] = 0;
    *v = strtod(lit, NULL);
    if (isinf(*v))
        return -1; /* past the largest double, which JSON parsers refuse */
    s->at = end;
    return 0;
}

int tb_json_skip(tb_json_scan_t *s)
{
    size_t depth = 0;
    if (tb_json_peek(s) < 0)
        return -1;
    for (; s->at < s->n; s->at++) {
        char ch = s->t[s->at];
        if (ch == '"') {
            for (s->at++; s->at < s->n && s->t[s->at] != '"'; s->at++)
                s->at += s->t[s->at] == '\\';
            if (s->at >= s->n)
                return -1;
        } else if (ch == '{' || ch == '[') {
            depth++;
        } else if (ch == '}' || ch == ']') {
            if (!depth)
                return 0; /* the enclosing value ends: so did a scalar */
            depth--;
        } else if (!depth && (ch == ',' || ch == ':' || is_ws(ch))) {
            return 0;
        }
        if (!depth && (ch == '"' || ch == '}' || ch == ']')) {
            s->at++;
            return 0;
        }
    }
    return depth ? -1 : 0;
}
