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

/* What an encode does besides the ids of the text (flags, or'ed): */
enum {
    /* Add the ids the file's own rule puts around a text: a tokenizer.json's
     * post-processor (TemplateProcessing's single template, Roberta and
     * Bert processing's <s>/</s> or [CLS]/[SEP]); a GGUF's
     * tokenizer.ggml.add_bos_token / add_eos_token, absent keys defaulting
     * as llama.cpp defaults them per model (BERT: [CLS] and [SEP]); a
     * SentencePiece .model's BOS and EOS (spm_encode's
     * --extra_options=bos:eos); nothing for tiktoken, which has no BOS. */
    TOK_ADD_SPECIAL = 1,
    /* Match the special tokens written in the text: Hugging Face's added
     * tokens marked special (without it, as with `encode_special_tokens`,
     * their text is ordinary text; added tokens not marked special are
     * always matched); a GGUF's control and unknown tokens (llama.cpp's
     * parse_special; user-defined tokens are always matched); tiktoken's
     * special tokens (allowed_special="all"; without it, encode_ordinary).
     * Refused for a SentencePiece .model: SentencePiece never parses
     * control symbols in text. */
    TOK_PARSE_SPECIAL = 2,
};

/* The flags under which tok_encode matches its reference's default:
 * TOK_PARSE_SPECIAL for tokenizer.json (Hugging Face matches special added
 * tokens unless told not to), none for the others (llama.cpp's test
 * vectors use parse_special=false; tiktoken's encode_ordinary). */
uint32_t tok_encode_defaults(const tok_tokenizer_t *t);

/* Appends the ids of text[0..len) to out under tok_encode_defaults(t).
 * Invalid UTF-8 is accepted where the reference can take it (byte-level
 * models) and refused with the byte offset elsewhere. */
int tok_encode(tok_tokenizer_t *t, const uint8_t *text, size_t len,
               tok_ids_t *out, tb_err_t *err);
/* The same under explicit flags (TOK_ADD_SPECIAL, TOK_PARSE_SPECIAL). */
int tok_encode_ex(tok_tokenizer_t *t, const uint8_t *text, size_t len,
                  uint32_t flags, tok_ids_t *out, tb_err_t *err);

/* Appends the bytes of ids to out, as the reference decoder produces them
 * (SentencePiece drops the leading space of the first piece, etc.). */
int tok_decode(const tok_tokenizer_t *t, const uint32_t *ids, size_t n,
               tb_buf_t *out, tb_err_t *err);

/* Decode flag: leave out the special tokens, as Hugging Face's
 * decode(ids, skip_special_tokens=True) leaves out the added tokens marked
 * special, llama.cpp's detokenize (unparse_special false) its control and
 * unknown tokens, and, for tiktoken and SentencePiece, the special tokens
 * and control symbols. */
enum { TOK_SKIP_SPECIAL = 1 };
int tok_decode_ex(const tok_tokenizer_t *t, const uint32_t *ids, size_t n,
                  uint32_t flags, tb_buf_t *out, tb_err_t *err);

#endif
