/* load: format sniffing, construction and destruction of tokenizers. */
#include <stdlib.h>
#include <string.h>

#include "../base/file.h"
#include "tok_internal.h"

tok_tokenizer_t *tok_new(tok_format_t format)
{
    tok_tokenizer_t *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->format = format;
    t->bpe.unk = -1;
    t->unigram.unk = -1;
    t->wordpiece.unk = -1;
    t->vocab.bos = t->vocab.eos = t->vocab.unk = t->vocab.pad = -1;
    return t;
}

/* GGUF opens with its magic; a SentencePiece model is a protobuf whose
 * first field is `repeated SentencePiece pieces = 1` (tag byte 0x0A); JSON
 * opens with '{' (the HF file has "model", tiktoken's npm file "bpe_ranks");
 * a plain tiktoken file is lines of "base64 rank". */
static int sniff(const uint8_t *d, size_t n, tok_format_t *f)
{
    if (n >= 4 && !memcmp(d, "GGUF", 4)) {
        *f = TOK_FORMAT_GGUF;
        return 0;
    }
    size_t i = 0;
    if (n >= 3 && d[0] == 0xEF && d[1] == 0xBB && d[2] == 0xBF)
        i = 3;
    while (i < n && (d[i] == ' ' || d[i] == '\n' || d[i] == '\r' || d[i] == '\t'))
        i++;
    if (i < n && d[i] == '{') {
        size_t probe = n < 4096 ? n : 4096;
        *f = memmem(d, probe, "\"bpe_ranks\"", 11) ||
                     memmem(d, probe, "\"pat_str\"", 9)
                 ? TOK_FORMAT_TIKTOKEN
                 : TOK_FORMAT_HF_JSON;
        return 0;
    }
    if (n > 0 && d[0] == 0x0A) {
        *f = TOK_FORMAT_SPM_MODEL;
        return 0;
    }
    if (i < n && (d[i] == '!' || (d[i] >= '+' && d[i] <= 'z'))) {
        *f = TOK_FORMAT_TIKTOKEN;
        return 0;
    }
    return -1;
}

tok_tokenizer_t *tok_load(const char *path, tb_err_t *err)
{
    const uint8_t *data;
    size_t len;
    if (tb_map_file(path, &data, &len, err))
        return NULL;
    tok_format_t f;
    if (sniff(data, len, &f)) {
        tb_fail(err, "%s: not a tokenizer.json, SentencePiece .model, tiktoken "
                     "or GGUF file (first byte 0x%02x)",
                path, len ? data[0] : 0);
        tb_unmap_file(data, len);
        return NULL;
    }
    tok_tokenizer_t *t = tok_new(f);
    int rc = -1;
    if (!t)
        tb_fail(err, "%s: out of memory", path);
    else if (f == TOK_FORMAT_HF_JSON)
        rc = tok_load_hf_json(t, path, data, len, err);
    else if (f == TOK_FORMAT_SPM_MODEL)
        rc = tok_load_spm_model(t, path, data, len, err);
    else if (f == TOK_FORMAT_TIKTOKEN)
        rc = tok_load_tiktoken(t, path, data, len, err);
    else
        rc = tok_load_gguf(t, path, data, len, err);
    tb_unmap_file(data, len);
    if (!rc && tok_prepare(t, err))
        rc = tb_wrap(err, "%s", path);
    if (rc) {
        tok_free(t);
        return NULL;
    }
    return t;
}


void tok_free(tok_tokenizer_t *t)
{
    if (!t)
        return;
    tok_state_drop_spares(t);
    tok_vocab_free(&t->vocab);
    tok_bpe_free(&t->bpe);
    tok_unigram_free(&t->unigram);
    for (size_t i = 0; i < t->norms.len; i++) {
        tb_buf_free(&t->norms.data[i].a);
        tb_buf_free(&t->norms.data[i].b);
        tb_buf_free(&t->norms.data[i].blob);
    }
    for (size_t i = 0; i < t->pres.len; i++) {
        tb_buf_free(&t->pres.data[i].pattern);
        pcre2_code_free(t->pres.data[i].re);
    }
    for (size_t i = 0; i < t->added.len; i++)
        tb_buf_free(&t->added.data[i].content);
    free(t->norms.data);
    free(t->pres.data);
    free(t->added.data);
    free(t->special_prefix.data);
    free(t->special_suffix.data);
    free(t->pair.data);
    free(t);
}

const tok_vocab_t *tok_vocab(const tok_tokenizer_t *t) { return &t->vocab; }
tok_format_t tok_format(const tok_tokenizer_t *t) { return t->format; }
const char *tok_model_name(const tok_tokenizer_t *t) { return t->model_name; }

const char *tok_format_name(tok_format_t f)
{
    static const char *names[] = {"tokenizer.json", "sentencepiece", "tiktoken",
                                  "gguf"};
    return names[f];
}
