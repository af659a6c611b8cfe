/* utf8: see utf8.h. */
#include "utf8.h"

#include <string.h>

size_t tb_utf8_decode(const uint8_t *s, size_t n, uint32_t *cp)
{
    uint8_t c = s[0];
    *cp = c;
    if (c < 0x80)
        return 1;
    size_t len;
    uint32_t v, min;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2; v = c & 0x1F; min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3; v = c & 0x0F; min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4; v = c & 0x07; min = 0x10000;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return len;
}

size_t tb_utf8_encode(uint32_t cp, uint8_t out[4])
{
    if (cp < 0x80) {
        out[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (uint8_t)(0xC0 | cp >> 6);
        out[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp >= 0xD800 && cp <= 0xDFFF)
        return 0;
    if (cp < 0x10000) {
        out[0] = (uint8_t)(0xE0 | cp >> 12);
        out[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    if (cp > 0x10FFFF)
        return 0;
    out[0] = (uint8_t)(0xF0 | cp >> 18);
    out[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

size_t tb_utf8_validate(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        /* two bytes, the commonest (GPT-2's byte alphabet is all U+00A1 to
         * U+0143): a C2-DF lead can only start a valid pair */
        if (s[i] >= 0xC2 && s[i] <= 0xDF && i + 1 < n && (s[i + 1] & 0xC0) == 0x80) {
            i += 2;
            continue;
        }
        /* three bytes under a lead that admits every continuation (E0
         * bars overlong forms, ED surrogates): U+2581, CJK, most of a
         * SentencePiece vocabulary's letters past Latin */
        if (s[i] >= 0xE1 && s[i] <= 0xEF && s[i] != 0xED && i + 2 < n &&
            (s[i + 1] & 0xC0) == 0x80 && (s[i + 2] & 0xC0) == 0x80) {
            i += 3;
            continue;
        }
        uint32_t cp;
        size_t len = tb_utf8_decode(s + i, n - i, &cp);
        if (!len)
            return i;
        i += len;
    }
    return n;
}

size_t tb_utf8_escape(const uint8_t *s, size_t n, char *out, size_t size)
{
    static const char hex[] = "0123456789abcdef";
    size_t k = 0;
    for (size_t i = 0; i < n && size;) {
        uint32_t cp;
        size_t len = tb_utf8_decode(s + i, n - i, &cp);
        char esc[4];
        const char *put = (const char *)s + i;
        size_t m = len;
        if (cp == '\\' || cp == '\'' || cp == '\n' || cp == '\r' || cp == '\t') {
            esc[0] = '\\', esc[1] = cp == '\n' ? 'n' : cp == '\r' ? 'r' : cp == '\t' ? 't' : (char)cp;
            put = esc, m = 2;
        } else if (!len || cp < 0x20 || (cp >= 0x7F && cp < 0xA0)) {
            esc[0] = '\\', esc[1] = 'x', esc[2] = hex[s[i] >> 4], esc[3] = hex[s[i] & 15];
            put = esc, m = 4, len = 1;
        }
        if (k + m >= size)
            break;
        memcpy(out + k, put, m);
        k += m;
        i += len;
    }
    if (size)
        out[k] = 0;
    return k;
}
