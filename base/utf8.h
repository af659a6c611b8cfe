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
