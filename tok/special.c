/*
 * special: special tokens around the plain encoder, each format by its own
 * reference's rules (tokenizer.h says them per flag).
 *
 * Adding is the loader's reading of the file (special_prefix and
 * special_suffix: the post-processor's template, the GGUF's add_bos_token,
 * ...) put around the ids; parsing is one switch of the added-token split
 * (encode.c), since every format keeps its special tokens as added tokens
 * marked special; skipping on decode is the set of ids each reference's
 * decoder leaves out.
 */
#include "tok_internal.h"

uint32_t tok_encode_defaults(const tok_tokenizer_t *t)
{
    return t->format == TOK_FORMAT_HF_JSON ? TOK_PARSE_SPECIAL : 0;
}

int tok_encode_with(const tok_tokenizer_t *t, tok_state_t *st, const uint8_t *text,
                    size_t len, uint32_t flags, tok_ids_t *out, tb_err_t *err)
{
    if (flags & ~(uint32_t)(TOK_ADD_SPECIAL | TOK_PARSE_SPECIAL))
        return tb_fail(err, "encode: unknown flags 0x%x", flags);
    if ((flags & TOK_PARSE_SPECIAL) && t->format == TOK_FORMAT_SPM_MODEL)
        return tb_fail(err, "encode: a SentencePiece model never matches its "
                            "control symbols in the text; there are no "
                            "special tokens to parse");
    int add = (flags & TOK_ADD_SPECIAL) != 0;
    if (add && t->add_special_error[0])
        return tb_fail(err, "encode: cannot add special tokens: %s",
                       t->add_special_error);
    size_t mark = out->len;
    if (add && tb_vec_append(out, t->special_prefix.data, t->special_prefix.len))
        return tb_fail(err, "out of memory");
    if (tok_encode_text(t, st, text, len, (flags & TOK_PARSE_SPECIAL) != 0, out,
                        err)) {
        out->len = mark;
        return -1;
    }
    if (add && tb_vec_append(out, t->special_suffix.data,
                                 t->special_suffix.len)) {
        out->len = mark;
        return tb_fail(err, "out of memory");
    }
    return 0;
}

int tok_encode_ex(const tok_tokenizer_t *t, const uint8_t *text, size_t len,
                  uint32_t flags, tok_ids_t *out, tb_err_t *err)
{
    tok_state_t *st = tok_state_take(t);
    if (!st)
        return tb_fail(err, "encode: out of memory");
    int rc = tok_encode_with(t, st, text, len, flags, out, err);
    tok_state_give(t, st);
    return rc;
}

int tok_encode(const tok_tokenizer_t *t, const uint8_t *text, size_t len,
               tok_ids_t *out, tb_err_t *err)
{
    return tok_encode_ex(t, text, len, tok_encode_defaults(t), out, err);
}

/* Hugging Face skips the added tokens marked special; llama.cpp renders
 * control and unknown tokens as nothing, the GGUF loader marks those;
 * tiktoken's special tokens are marked too.  SentencePiece marks its
 * unknown piece special but decodes it (as " \u2047 "): only control
 * symbols go. */
int tok_skips_special(const tok_tokenizer_t *t, uint32_t id)
{
    if (t->format == TOK_FORMAT_SPM_MODEL)
        return t->vocab.kind[id] == TOK_CONTROL;
    return t->vocab.special[id] != 0;
}

int tok_decode(const tok_tokenizer_t *t, const uint32_t *ids, size_t n,
               tb_buf_t *out, tb_err_t *err)
{
    return tok_decode_ex(t, ids, n, 0, out, err);
}
