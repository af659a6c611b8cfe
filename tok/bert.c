/*
 * bert: BERT's text steps as Hugging Face tokenizers runs them from a
 * tokenizer.json: the BertNormalizer step's clean-up and accent stripping
 * (normalize.c runs the step and lowercases after), and the test
 * BertPreTokenizer splits on (pretok.c).
 *
 * Its character classes are General_Category at Unicode 8.0.0, the
 * version of the unicode_categories crate `tokenizers` asks (tables by
 * scripts/gen-bertprops.pl), not uprops.c's 16.0: a punctuation mark or an
 * accent of a later Unicode is a letter to it.  White space is Rust's
 * char::is_whitespace, Unicode's White_Space of today (tab, newline and
 * return among it).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../base/utf8.h"
#include "bertprops_tables.h"
#include "tok_internal.h"
#include "unorm.h"
#include "uprops.h"

#define NRANGES(r) (sizeof r / sizeof r[0])

int tok_is_cjk(uint32_t c)
{
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
           (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
           (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

int tok_bert_is_punct(uint32_t c, tok_ranges_memo_t *m)
{
    /* Rust's is_ascii_punctuation: every printable ASCII symbol too */
    if (c < 0x80)
        return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) ||
               (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
    return tok_uprops_in_ranges_memo(bert_punct, NRANGES(bert_punct), c, m);
}

/* What clean_text drops: NUL, U+FFFD, and "other" characters (Cc, Cf, Co)
 * but tab, newline and return, which are white space to it, though \v, \f
 * and U+0085 are not. */
static int bert_dropped(uint32_t c, tok_ranges_memo_t *m)
{
    if (c == 0 || c == 0xFFFD)
        return 1;
    if (c == '\t' || c == '\n' || c == '\r')
        return 0;
    return tok_uprops_in_ranges_memo(bert_other, NRANGES(bert_other), c, m);
}

int tok_bert_clean(uint32_t flags, const uint8_t *s, size_t n, tb_buf_t *out,
                   tb_err_t *err)
{
    tok_ranges_memo_t other = TOK_RANGES_MEMO_EMPTY;
    for (size_t i = 0; i < n;) {
        uint32_t c;
        size_t k = tb_utf8_decode(s + i, n - i, &c);
        if (!k)
            return tb_fail(err, "BertNormalizer: invalid UTF-8 at byte %zu of "
                                "the text", i);
        int rc;
        if ((flags & TOK_BERT_CLEAN) && bert_dropped(c, &other))
            rc = 0;
        else if ((flags & TOK_BERT_CLEAN) && tok_uprops_is_space(c))
            rc = tb_buf_putc(out, ' ');
        else if ((flags & TOK_BERT_CHINESE) && tok_is_cjk(c))
            rc = tb_buf_putc(out, ' ') || tb_buf_put(out, s + i, k) ||
                 tb_buf_putc(out, ' ');
        else
            rc = tb_buf_put(out, s + i, k);
        if (rc)
            return tb_fail(err, "out of memory");
        i += k;
    }
    return 0;
}

/* Decomposes into out and then drops the accents (Mn) there, in place:
 * no buffer of its own to allocate on every call. */
int tok_bert_strip_accents(const uint8_t *s, size_t n, tb_buf_t *out,
                           tb_err_t *err)
{
    size_t mark = out->len;
    if (tok_unorm(TOK_UNORM_NFD, s, n, out, err))
        return -1;
    uint8_t *d = out->data;
    size_t w = mark;
    tok_ranges_memo_t mn = TOK_RANGES_MEMO_EMPTY;
    for (size_t i = mark; i < out->len;) {
        uint32_t c = d[i];
        size_t k = 1; /* ASCII (a letter an accent came off) is no accent */
        if (c >= 0x80 && !(k = tb_utf8_decode(d + i, out->len - i, &c)))
            return tb_fail(err, "BertNormalizer: invalid UTF-8 at byte %zu of "
                                "the decomposed text", i - mark);
        if (c < 0x80 || !tok_uprops_in_ranges_memo(bert_mn, NRANGES(bert_mn), c, &mn)) {
            memmove(d + w, d + i, k);
            w += k;
        }
        i += k;
    }
    out->len = w;
    return 0;
}
