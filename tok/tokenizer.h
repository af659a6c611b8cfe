/*
 * tokenizer: the public face of tok/.  Load any supported file, encode text
 * to ids exactly as the file's reference implementation does, decode ids to
 * bytes.
 *
 * Formats, chosen by content (the name is only a hint):
 *   Hugging Face tokenizer.json (BPE, Unigram and WordPiece models),
 *   SentencePiece .model (Unigram and BPE), tiktoken rank files (plain
 *   "base64 rank" lines or the npm package's JSON), GGUF (tokenizer.ggml.*
 *   keys).
 *
 * Threads: a loaded tokenizer is immutable and may be shared by any number
 * of threads.  Everything an encode writes (scratch buffers, the BPE word
 * cache, PCRE2's match data) lives in a tok_state_t, which one thread at a
 * time may use.  So, from several threads at once, on one tokenizer:
 *   - tok_encode, tok_decode, tok_encode_batch and the getters are safe;
 *   - tok_encode_with is safe when each thread passes its own state;
 *   - tok_free, and anything that changes the tokenizer, is not: it must
 *     happen-before or happen-after every other use.
 * tok_encode and tok_encode_batch borrow states the tokenizer keeps (a
 * few, each with its warm word cache) and put them back; a call that finds
 * none free encodes with a fresh state, cold and freed after.  So a thread
 * that encodes often may as well keep a state of its own (tok_encode_with).
 */
#ifndef TOK_TOKENIZER_H
#define TOK_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "../base/buf.h"
#include "../base/err.h"
#include "vocab.h"

typedef struct tok_tokenizer tok_tokenizer_t;
/* Working memory of encoding (see Threads above): a few buffers and, for
 * BPE models, a word cache of up to about 10 MB. */
typedef struct tok_state tok_state_t;

typedef TB_VEC(uint32_t) tok_ids_t;

typedef enum {
    TOK_FORMAT_HF_JSON,
    TOK_FORMAT_SPM_MODEL,
    TOK_FORMAT_TIKTOKEN,
    TOK_FORMAT_GGUF,
} tok_format_t;

/* Loads `path`, sniffing the format from its first bytes, through the
 * compiled cache as tok_load_ex does with no options. */
tok_tokenizer_t *tok_load(const char *path, tb_err_t *err);

/* The compiled cache (docs/tokenizers.md): a loaded tokenizer is written
 * once as a file named by a hash of its source, which later loads map
 * read-only and use in place after checking it (format version, the
 * build's layout and loader sources, the source's size and hash, its
 * own checksum, then its tables' bounds).  A file that fails a check is rebuilt from the
 * source, never trusted; one that cannot be written only costs the next
 * load its speed. */
typedef struct {
    /* The folder of compiled files.  NULL: $TOKBENCH_CACHE, else
     * $XDG_CACHE_HOME/tokbench, else $HOME/.cache/tokbench; "" or "off":
     * no cache (as no_cache). */
    const char *cache_dir;
    int no_cache;          /* load from the source alone */
    /* Set by the load: */
    int cached;            /* 1: opened from a compiled file */
    char note[TB_ERR_MAX]; /* one line when a compiled file was refused
                              and rebuilt, or could not be written */
} tok_load_opts_t;

/* tok_load under opts (NULL: the defaults above, notes dropped). */
tok_tokenizer_t *tok_load_ex(const char *path, tok_load_opts_t *opts,
                             tb_err_t *err);
void tok_free(tok_tokenizer_t *t);

const tok_vocab_t *tok_vocab(const tok_tokenizer_t *t);
tok_format_t tok_format(const tok_tokenizer_t *t);
const char *tok_format_name(tok_format_t f);
/* "bpe", "unigram" or "wordpiece", plus the variant: "byte-level bpe",
 * "bpe+byte-fallback" */
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
int tok_encode(const tok_tokenizer_t *t, const uint8_t *text, size_t len,
               tok_ids_t *out, tb_err_t *err);
/* The same under explicit flags (TOK_ADD_SPECIAL, TOK_PARSE_SPECIAL). */
int tok_encode_ex(const tok_tokenizer_t *t, const uint8_t *text, size_t len,
                  uint32_t flags, tok_ids_t *out, tb_err_t *err);

/* A state for encoding with t (and no other tokenizer); NULL when out of
 * memory. */
tok_state_t *tok_state_new(const tok_tokenizer_t *t);
void tok_state_free(tok_state_t *st);
/* tok_encode_ex with the caller's state. */
int tok_encode_with(const tok_tokenizer_t *t, tok_state_t *st, const uint8_t *text,
                    size_t len, uint32_t flags, tok_ids_t *out, tb_err_t *err);

/* Encodes a pair of texts (a question and its passage, a query and a
 * document) as Hugging Face's encode(a, b) does: each text alone under
 * flags' TOK_PARSE_SPECIAL, then, under TOK_ADD_SPECIAL, the
 * post-processor's pair rule around them (TemplateProcessing's `pair`,
 * BertProcessing's [CLS] A [SEP] B [SEP], RobertaProcessing's
 * <s> A </s></s> B </s>), else A's ids and then B's.  `types`, if not
 * NULL, gets each appended id's type id: the rule's (A 0 and B 1 where the
 * file has none; all 0 under RobertaProcessing), with or without the
 * special tokens.  Only a tokenizer.json has a pair rule: TOK_ADD_SPECIAL
 * on a pair of another format is refused. */
int tok_encode_pair(const tok_tokenizer_t *t, const uint8_t *a, size_t alen,
                    const uint8_t *b, size_t blen, uint32_t flags, tok_ids_t *out,
                    tok_ids_t *types, tb_err_t *err);

/* Encodes n texts, texts[i][0..lens[i]), on up to `threads` threads (0:
 * one per online CPU; the calling thread is one of them), appending the
 * ids of text i to outs[i], exactly as tok_encode_ex would under flags.  On failure
 * returns -1, sets *failed (if not NULL) to the lowest-numbered text that
 * failed, and err says why; the outs of other texts may then be filled or
 * not. */
int tok_encode_batch(const tok_tokenizer_t *t, const uint8_t *const *texts,
                     const size_t *lens, size_t n, unsigned threads, uint32_t flags,
                     tok_ids_t *outs, size_t *failed, tb_err_t *err);

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
