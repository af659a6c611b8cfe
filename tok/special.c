/*
 * special: special tokens around the plain encoder, each format by its own
 * reference's rules (tokenizer.h says them per flag).
 *
 * Adding is the loader's reading of the file (special_prefix and
 * special_suffix: the post-processor's template, the GGUF's add_bos_token,
 * ...) put around the ids; parsing is one switch of the added-token split
 * (encode.c), since every format keeps its special tokens as added tokens
 * marked special; skipping on decode is the set of ids each reference's
 * decoder leaves out.  A pair is each text encoded alone, then put
 * together by the post-processor's pair rule.
 */
#include "tok_internal.h"

uint32_t tok_encode_defaults(const tok_tokenizer_t *t)
{
    return t->format == TOK_FORMAT_HF_JSON ? TOK_PARSE_SPECIAL : 0;
}

static int check_flags(const tok_tokenizer_t *t, uint32_t flags, tb_err_t *err)
{
    if (flags & ~(uint32_t)(TOK_ADD_SPECIAL | TOK_PARSE_SPECIAL))
        return tb_fail(err, "encode: unknown flags 0x%x", flags);
    if ((flags & TOK_PARSE_SPECIAL) && t->format == TOK_FORMAT_SPM_MODEL)
        return tb_fail(err, "encode: a SentencePiece model never matches its "
                            "control symbols in the text; there are no "
                            "special tokens to parse");
    return 0;
}

int tok_encode_with(const tok_tokenizer_t *t, tok_state_t *st, const uint8_t *text,
                    size_t len, uint32_t flags, tok_ids_t *out, tb_err_t *err)
{
    if (check_flags(t, flags, err))
        return -1;
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

/* Appends one run of a pair's output: n ids, each of type `type`. */
static int pair_put(tok_ids_t *out, tok_ids_t *types, const uint32_t *ids,
                    size_t n, uint32_t type)
{
    if (tb_vec_append(out, ids, n))
        return -1;
    for (size_t i = 0; types && i < n; i++)
        if (tb_vec_push(types, type))
            return -1;
    return 0;
}

int tok_encode_pair(const tok_tokenizer_t *t, const uint8_t *a, size_t alen,
                    const uint8_t *b, size_t blen, uint32_t flags, tok_ids_t *out,
                    tok_ids_t *types, tb_err_t *err)
{
    static const tok_pair_item_t plain[] = {{TOK_PAIR_A, 0}, {TOK_PAIR_B, 1}};
    int add = (flags & TOK_ADD_SPECIAL) != 0;
    if (check_flags(t, flags, err))
        return -1;
    if (t->pair_error[0])
        return tb_fail(err, "encode: cannot encode a pair: %s", t->pair_error);
    if (add && t->format != TOK_FORMAT_HF_JSON)
        return tb_fail(err, "encode: no rule adds the special tokens of a "
                            "pair in a %s file (a tokenizer.json's "
                            "post-processor has one)", tok_format_name(t->format));
    const tok_pair_item_t *rule = t->pair.len ? t->pair.data : plain;
    size_t nrule = t->pair.len ? t->pair.len : 2;
    tok_ids_t ids[2] = {{0}};
    size_t mark = out->len, tmark = types ? types->len : 0;
    tok_state_t *st = tok_state_take(t);
    int rc = st ? 0 : tb_fail(err, "encode: out of memory");
    uint32_t plain_flags = flags & ~(uint32_t)TOK_ADD_SPECIAL;
    if (!rc && (tok_encode_with(t, st, a, alen, plain_flags, &ids[0], err) ||
                tok_encode_with(t, st, b, blen, plain_flags, &ids[1], err)))
        rc = -1;
    if (st)
        tok_state_give(t, st);
    for (size_t i = 0; !rc && i < nrule; i++) {
        const tok_pair_item_t *it = &rule[i];
        uint32_t id = (uint32_t)it->what;
        if (it->what >= 0 ? add && pair_put(out, types, &id, 1, it->type)
                          : pair_put(out, types, ids[it->what == TOK_PAIR_B].data,
                                     ids[it->what == TOK_PAIR_B].len, it->type))
            rc = tb_fail(err, "encode: out of memory");
    }
    if (rc) {
        out->len = mark;
        if (types)
            types->len = tmark;
    }
    free(ids[0].data);
    free(ids[1].data);
    return rc;
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
