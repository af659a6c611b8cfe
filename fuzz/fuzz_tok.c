/*
 * fuzz_tok: every tokenizer format through tok_load (the input is the
 * file; the format is sniffed from its bytes as for any file), then, when
 * it loads, an encode and a decode of a few fixed texts and of the input's
 * last bytes, and a decode of the first ids and of ids past the vocabulary.
 * The scratch file is named after a tiktoken encoding, which the plain
 * tiktoken form needs for its split pattern (the last byte picks which).
 * Each input goes through the compiled cache (tok/compiled.c) in a scratch
 * folder: the load writes the compiled file, a second load must open it
 * and is encoded and decoded the same way, then the file, with one byte
 * the input picks flipped, must be refused or opened without harm.
 * Seeds: fuzz/corpus/tok/ (small files of each format and model kind: HF
 * BPE byte-level, with byte fallback, Unigram with a charsmap, WordPiece with
 * the BERT steps, WordLevel without a decoder; SentencePiece
 * Unigram, BPE, byte fallback, a charsmap; both tiktoken forms).
 * Dictionary: fuzz/tok.dict.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static void exercise(tok_tokenizer_t *t, const uint8_t *data, size_t size);

/* The one compiled file in the scratch cache folder, its path into out;
 * with `remove` set, it is deleted instead.  Returns 1 if there was one. */
static int compiled_file(const char *dir, char *out, size_t n, int remove)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(out, n, "%s/%s", dir, e->d_name);
            found = 1;
            if (remove)
                unlink(out);
        }
    if (d)
        closedir(d);
    return found;
}

/* Flips the byte at `at` (modulo the file's size) of the file at path. */
static void flip(const char *path, size_t at)
{
    FILE *f = fopen(path, "r+b");
    struct stat st;
    if (!f || fstat(fileno(f), &st) || !st.st_size) {
        if (f)
            fclose(f);
        return;
    }
    long pos = (long)(at % (size_t)st.st_size);
    int c = fseek(f, pos, SEEK_SET) ? EOF : fgetc(f);
    if (c != EOF && !fseek(f, pos, SEEK_SET))
        fputc(c ^ 0x5A, f);
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"-cl100k_base.tiktoken", "-o200k_base.tiktoken",
                                        "-gpt2.tiktoken", "-p50k_edit.tiktoken"};
    const char *name = names[size ? data[size - 1] % 4 : 0];
    tb_err_t err;
    char dir[4096], file[4096];
    snprintf(dir, sizeof dir, "%s", fuzz_scratch_path("-compiled"));
    mkdir(dir, 0700);
    compiled_file(dir, file, sizeof file, 1);
    const char *path = fuzz_scratch(name, data, size);
    tok_load_opts_t opts = {.cache_dir = dir};
    tok_tokenizer_t *t = tok_load_ex(path, &opts, &err);
    if (t) {
        exercise(t, data, size);
        tok_free(t);
        t = tok_load_ex(path, &opts, &err);
        if (!t || !opts.cached)
            abort(); /* what was just written must open */
        exercise(t, data, size);
        tok_free(t);
        if (compiled_file(dir, file, sizeof file, 0)) {
            flip(file, size ? (size_t)data[0] << 8 | data[size / 2] : 0);
            t = tok_load_ex(path, &opts, &err);
            if (t)
                exercise(t, data, size);
            tok_free(t);
        }
    }
    compiled_file(dir, file, sizeof file, 1);
    rmdir(dir);
    fuzz_scratch_remove(name);
    return 0;
}

/* Encodes and decodes fixed texts and the input's tail with t. */
static void exercise(tok_tokenizer_t *t, const uint8_t *data, size_t size)
{
    static const char *const texts[] = {
        "", "a", "\n", " ", "Hello, world!  It's 2024.\n", "h\xc3\xa9llo \xe2\x96\x81x",
        "\xf0\x9f\x98\x80 \xe4\xb8\xad\xe6\x96\x87", "<s></s><unk><|endoftext|>", "\xff\xfe",
    };
    tb_err_t err;
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
}
