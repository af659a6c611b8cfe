/*
 * fuzz_tok: every tokenizer format through tok_load (the input is the
 * file; the format is sniffed from its bytes as for any file), then, when
 * it loads, an encode and a decode of a few fixed texts and of the input's
 * last bytes, and a decode of the first ids and of ids past the vocabulary.
 * The scratch file is named after a tiktoken encoding, which the plain
 * tiktoken form needs for its split pattern (the last byte picks which).
 * Seeds: fuzz/corpus/tok/ (small files of each format and model kind: HF
 * BPE byte-level, with byte fallback, Unigram with a charsmap, WordPiece with
 * the BERT steps, WordLevel without a decoder; SentencePiece
 * Unigram, BPE, byte fallback, a charsmap; both tiktoken forms).
 * Dictionary: fuzz/tok.dict.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../tok/tokenizer.h"
#include "support.h"

static void encode_decode(tok_tokenizer_t *t, const uint8_t *text, size_t n)
{
    tok_ids_t ids = {0};
    tb_buf_t out = {0};
    tb_err_t err;
    if (!tok_encode(t, text, n, &ids, &err))
        tok_decode(t, ids.data, ids.len, &out, &err);
    free(ids.data);
    tb_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const texts[] = {
        "", "a", "\n", " ", "Hello, world!  It's 2024.\n", "h\xc3\xa9llo \xe2\x96\x81x",
        "\xf0\x9f\x98\x80 \xe4\xb8\xad\xe6\x96\x87", "<s></s><unk><|endoftext|>", "\xff\xfe",
    };
    static const char *const names[] = {"-cl100k_base.tiktoken", "-o200k_base.tiktoken",
                                        "-gpt2.tiktoken", "-p50k_edit.tiktoken"};
    const char *name = names[size ? data[size - 1] % 4 : 0];
    tb_err_t err;
    tok_tokenizer_t *t = tok_load(fuzz_scratch(name, data, size), &err);
    fuzz_scratch_remove(name);
    if (!t)
        return 0;
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
        encode_decode(t, (const uint8_t *)texts[i], strlen(texts[i]));
    encode_decode(t, (const uint8_t *)"\n", 2); /* "\n\0" */
    size_t tail = size < 64 ? size : 64;
    encode_decode(t, data + size - tail, tail);
    uint32_t ids[260];
    uint32_t size_ids = tok_vocab(t)->size;
    for (uint32_t i = 0; i < 256; i++)
        ids[i] = i;
    ids[256] = size_ids, ids[257] = size_ids ? size_ids - 1 : 0, ids[258] = UINT32_MAX;
    ids[259] = 0;
    tb_buf_t out = {0};
    tok_decode(t, ids, size_ids < 256 ? size_ids : 256, &out, &err);
    for (int i = 256; i < 260; i++) {
        out.len = 0;
        tok_decode(t, ids + i, 1, &out, &err);
    }
    tb_buf_free(&out);
    tok_free(t);
    return 0;
}
