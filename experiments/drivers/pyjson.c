/* pyjson: JSON text as Python's json.dumps writes it (see pyjson.h). */
#include "pyjson.h"

#include "../../base/file.h"
#include "../../base/jsontext.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int put(tb_buf_t *b, const char *s)
{
    return tb_buf_put(b, s, strlen(s));
}

/* json.dumps escapes '"', '\\' and the C0 controls, nothing else when
 * ensure_ascii is off (not '/', not DEL, not U+2028). */
static int put_string(tb_buf_t *b, const char *s, size_t n)
{
    if (tb_buf_putc(b, '"'))
        return -1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        char u[8];
        switch (c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        default:
            if (c < 0x20) {
                snprintf(u, sizeof u, "\\u%04x", c);
                esc = u;
            }
        }
        if (esc ? put(b, esc) : tb_buf_putc(b, c))
            return -1;
    }
    return tb_buf_putc(b, '"');
}

/* Python's repr of a float: the shortest digits that read back as x, in
 * fixed notation when the decimal exponent is in [-4, 16), else as
 * d.ddde+XX; an integral value in fixed notation keeps ".0". */
int xp_py_float_repr(double x, tb_buf_t *b)
{
    if (isnan(x))
        return put(b, "NaN");
    if (isinf(x))
        return put(b, x < 0 ? "-Infinity" : "Infinity");
    char e[40];
    int p = 1;
    for (; p <= 17; p++) {
        snprintf(e, sizeof e, "%.*e", p - 1, x);
        if (strtod(e, NULL) == x)
            break;
    }
    /* e is [-]d[.ddd]e[+-]XX: split it into sign, digits and exponent. */
    const char *s = e;
    int neg = *s == '-';
    s += neg;
    char digits[24];
    size_t nd = 0;
    for (; *s && *s != 'e'; s++)
        if (*s != '.')
            digits[nd++] = *s;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    int exp10 = atoi(s + 1);
    char out[64];
    size_t o = 0;
    if (neg)
        out[o++] = '-';
    if (exp10 >= -4 && exp10 < 16) {
        if (exp10 < 0) {
            out[o++] = '0';
            out[o++] = '.';
            for (int i = -1; i > exp10; i--)
                out[o++] = '0';
            for (size_t i = 0; i < nd; i++)
                out[o++] = digits[i];
        } else {
            for (int i = 0; i <= exp10; i++)
                out[o++] = (size_t)i < nd ? digits[i] : '0';
            out[o++] = '.';
            if ((size_t)exp10 + 1 < nd)
                for (size_t i = (size_t)exp10 + 1; i < nd; i++)
                    out[o++] = digits[i];
            else
                out[o++] = '0';
        }
    } else {
        out[o++] = digits[0];
        if (nd > 1) {
            out[o++] = '.';
            for (size_t i = 1; i < nd; i++)
                out[o++] = digits[i];
        }
        o += (size_t)snprintf(out + o, sizeof out - o, "e%c%02d", exp10 < 0 ? '-' : '+',
                              exp10 < 0 ? -exp10 : exp10);
    }
    return tb_buf_put(b, out, o);
}

int xp_py_dumps(const json_t *v, tb_buf_t *b)
{
    char num[32];
    switch (json_typeof(v)) {
    case JSON_NULL: return put(b, "null");
    case JSON_TRUE: return put(b, "true");
    case JSON_FALSE: return put(b, "false");
    case JSON_INTEGER:
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return put(b, num);
    case JSON_REAL: return xp_py_float_repr(json_real_value(v), b);
    case JSON_STRING:
        if (!strncmp(json_string_value(v), XP_PY_BIG, strlen(XP_PY_BIG)))
            return put(b, json_string_value(v) + strlen(XP_PY_BIG));
        return put_string(b, json_string_value(v), json_string_length(v));
    case JSON_ARRAY: {
        if (tb_buf_putc(b, '['))
            return -1;
        for (size_t i = 0; i < json_array_size(v); i++)
            if ((i && put(b, ", ")) || xp_py_dumps(json_array_get(v, i), b))
                return -1;
        return tb_buf_putc(b, ']');
    }
    case JSON_OBJECT: {
        if (tb_buf_putc(b, '{'))
            return -1;
        const char *key;
        json_t *val;
        size_t i = 0;
        json_object_foreach((json_t *)v, key, val) {
            if ((i++ && put(b, ", ")) || put_string(b, key, strlen(key)) || put(b, ": ") ||
                xp_py_dumps(val, b))
                return -1;
        }
        return tb_buf_putc(b, '}');
    }
    }
    return -1;
}

/* The text with every integer literal beyond 64 bits outside strings
 * written as the string XP_PY_BIG and its digits (malloc'd). */
static char *quote_big(const char *t, size_t n)
{
    tb_buf_t o = {0};
    size_t at = 0, start, copied = 0;
    int kind, r = 0;
    while (!r && (kind = tb_json_next_number(t, n, &at, &start)) >= 0) {
        errno = 0;
        (void)strtoll(t + start, NULL, 10);
        if (kind != 1 || errno != ERANGE)
            continue;
        r = tb_buf_put(&o, t + copied, start - copied) || put(&o, "\"\\u0001big:") ||
            tb_buf_put(&o, t + start, at - start) || put(&o, "\"");
        copied = at;
    }
    if (r || tb_buf_put(&o, t + copied, n - copied) || tb_buf_putc(&o, 0)) {
        free(o.data);
        return NULL;
    }
    return (char *)o.data;
}

json_t *xp_py_load_file(const char *path, json_error_t *je)
{
    json_t *j = json_load_file(path, JSON_ALLOW_NUL, je);
    if (j || !strstr(je->text, "too big"))
        return j;
    uint8_t *text;
    size_t n;
    tb_err_t err;
    if (tb_read_file(path, &text, &n, &err))
        return NULL;
    char *q = quote_big((const char *)text, n);
    free(text);
    j = q ? json_loads(q, JSON_ALLOW_NUL, je) : NULL;
    free(q);
    return j;
}

void xp_py_unbig(char *text)
{
    static const char mark[] = "\"\\u0001big:";
    char *w = text;
    for (const char *r = text; *r;) {
        if (strncmp(r, mark, sizeof mark - 1)) {
            *w++ = *r++;
            continue;
        }
        r += sizeof mark - 1;
        while (*r && *r != '"')
            *w++ = *r++;
        r += *r == '"';
    }
    *w = 0;
}
