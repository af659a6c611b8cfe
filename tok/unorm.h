/*
 * unorm: the Unicode normalization forms NFC, NFD, NFKC and NFKD over UTF-8
 * (UAX #15), with the character data of Unicode 9.0, the version the
 * reference tokenizers (Hugging Face `tokenizers`) normalize with; newer
 * characters are left as they are, as the reference leaves them.  The tables
 * are generated at build time by scripts/gen-unorm.pl, which records how the
 * version was measured.
 */
#ifndef TOK_UNORM_H
#define TOK_UNORM_H

#include <stddef.h>
#include <stdint.h>

#include "../base/buf.h"
#include "../base/err.h"

typedef enum {
    TOK_UNORM_NFC,
    TOK_UNORM_NFD,
    TOK_UNORM_NFKC,
    TOK_UNORM_NFKD,
} tok_unorm_form_t;

/* Appends the normalization form of s[0..n) to out.  Returns 0, or -1 with
 * err naming the byte offset of the first invalid UTF-8 sequence (or saying
 * out of memory); out is then as it was. */
int tok_unorm(tok_unorm_form_t form, const uint8_t *s, size_t n,
              tb_buf_t *out, tb_err_t *err);

/* The canonical combining class of cp: 0 for a starter, which canonical
 * ordering never moves. */
unsigned tok_unorm_ccc(uint32_t cp);

/* The Unicode version of the character data, e.g. "9.0". */
const char *tok_unorm_version(void);

#endif
