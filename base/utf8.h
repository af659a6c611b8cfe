/*
 * utf8: decoding and encoding of UTF-8 as RFC 3629 defines it (no surrogates,
 * no overlong forms, nothing past U+10FFFF).
 */
#ifndef TB_UTF8_H
#define TB_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Decodes the code point at s[0..n).  Returns its length in bytes (1-4) and
 * stores it in *cp, or returns 0 if the bytes there are not valid UTF-8 (then
 * *cp is the first byte's value). n must be at least 1. */
size_t tb_utf8_decode(const uint8_t *s, size_t n, uint32_t *cp);

/* tb_utf8_decode with the one-, two- and three-byte characters of most
 * scripts decoded inline, for hot loops over text: the call, which checks
 * every form, was 7% of the instructions of a first pass of Llama 3 over
 * the multi corpus.  A lead C2-DF, E1-EC or EE-EF takes any continuation
 * bytes (no overlong form, no surrogate), so those need no check but
 * theirs; the rest goes to tb_utf8_decode. */
static inline size_t tb_utf8_decode_fast(const uint8_t *s, size_t n, uint32_t *cp)
{
    uint8_t c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF && n >= 2 && (s[1] & 0xC0) == 0x80) {
        *cp = (uint32_t)(c & 0x1F) << 6 | (s[1] & 0x3F);
        return 2;
    }
    if (c >= 0xE1 && c <= 0xEF && c != 0xED && n >= 3 && (s[1] & 0xC0) == 0x80 &&
        (s[2] & 0xC0) == 0x80) {
        *cp = (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F);
        return 3;
    }
    return tb_utf8_decode(s, n, cp);
}

/* Writes cp as UTF-8 into out (4 bytes room) and returns the length, or 0
 * for a surrogate or a value past U+10FFFF. */
size_t tb_utf8_encode(uint32_t cp, uint8_t out[4]);

/* Offset of the first invalid sequence in s[0..n), or n if all is valid. */
size_t tb_utf8_validate(const uint8_t *s, size_t n);

/* Writes s[0..n) into out (size bytes, NUL-terminated) as one line a
 * reader can quote between single quotes: printable ASCII and valid UTF-8
 * characters from U+00A0 on as they are; backslash, quote, \n, \r and \t
 * escaped as in C; every other byte (controls, DEL, C1 controls, bytes of
 * no valid character) as \xNN.  Stops before an escape or character that
 * does not fit; returns the length written.  4n + 1 bytes always suffice. */
size_t tb_utf8_escape(const uint8_t *s, size_t n, char *out, size_t size);

/* Length of the sequence a lead byte announces (1-4), 1 for stray bytes. */
static inline size_t tb_utf8_lead_len(uint8_t c)
{
    return c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : c < 0xF8 ? 4 : 1;
}

#endif
