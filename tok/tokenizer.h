/*
 * tokenizer: the public face of tok/.  Load any supported file, encode text
 * to ids exactly as the file's reference implementation does, decode ids to
 * bytes.
 *
 * Formats, chosen by content (the name is only a hint):
 *   Hugging Face tokenizer.json (BPE and Unigram models), SentencePiece
 *   .model (Unigram and BPE), tiktoken rank files (plain "base64 rank" lines
 *   or the npm package's JSON), GGUF (tokenizer.ggml.* keys).
 */
#ifndef TOK_TOKENIZER_H
#define TOK_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "../base/buf.h"
#include "../base/err.h"
#include "vocab.h"

typedef struct tok_tokenizer tok_tokenizer_t;

typedef TB_VEC(uint32_t) tok_ids_t;

typedef enum {
    TOK_FORMAT_HF_JSON,
    TOK_FORMAT_SPM_MODEL,
    TOK_FORMAT_TIKTOKEN,
    TOK_FORMAT_GGUF,
} tok_format_t;

/* Loads `path`, sniffing the format from its first bytes. */
tok_tokenizer_t *tok_load(const char *path, tb_err_t *err);
void tok_free(tok_tokenizer_t *t);

const tok_vocab_t *tok_vocab(const tok_tokenizer_t *t);
tok_format_t tok_format(const tok_tokenizer_t *t);
const char *tok_format_name(tok_format_t f);
/* "bpe" or "unigram", plus the variant: "byte-level bpe", "bpe+byte-fallback" */
const char *tok_model_name(const tok_tokenizer_t *t);

/* Appends the ids of text[0..len) to out.  Special/added tokens written in
 * the text are matched as the reference matches them (Hugging Face matches
 * added tokens; tiktoken's encode_ordinary does not).  No BOS/EOS is added.
 * Invalid UTF-8 is accepted where the reference can take it (byte-level
 * models) and refused with the byte offset elsewhere. */
int tok_encode(tok_tokenizer_t *t, const uint8_t *text, size_t len,
               tok_ids_t *out, tb_err_t *err);

/* Appends the bytes of ids to out, as the reference decoder produces them
 * (SentencePiece drops the leading space of the first piece, etc.). */
int tok_decode(const tok_tokenizer_t *t, const uint32_t *ids, size_t n,
               tb_buf_t *out, tb_err_t *err);

#endif
