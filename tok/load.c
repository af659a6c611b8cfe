/* load: format sniffing, the compiled cache, construction and destruction
 * of tokenizers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

/* Parses the mapped source data[0..len) of path into a prepared tokenizer. */
static tok_tokenizer_t *load_source(const char *path, const uint8_t *data,
                                    size_t len, tb_err_t *err)
{
    tok_format_t f;
    if (sniff(data, len, &f)) {
        tb_fail(err, "%s: not a tokenizer.json, SentencePiece .model, tiktoken "
                     "or GGUF file (first byte 0x%02x)",
                path, len ? data[0] : 0);
        return NULL;
    }
    tok_tokenizer_t *t = tok_new(f);
    if (!t) {
        tb_fail(err, "%s: out of memory", path);
        return NULL;
    }
    t->src = data;
    t->src_len = len;
    int rc;
    if (f == TOK_FORMAT_HF_JSON)
        rc = tok_load_hf_json(t, path, data, len, err);
    else if (f == TOK_FORMAT_SPM_MODEL)
        rc = tok_load_spm_model(t, path, data, len, err);
    else if (f == TOK_FORMAT_TIKTOKEN)
        rc = tok_load_tiktoken(t, path, data, len, err);
    else
        rc = tok_load_gguf(t, path, data, len, err);
    t->src = NULL;
    if (!rc && tok_prepare(t, err))
        rc = tb_wrap(err, "%s", path);
    if (rc) {
        tok_free(t);
        return NULL;
    }
    return t;
}

void tok_release_source(tok_tokenizer_t *t, size_t from, size_t to)
{
    tb_release_map(t->src, t->src_len, from, to);
}

/* The cache folder opts name (see tok_load_opts_t) into dir; 0 if none. */
static int cache_dir(const tok_load_opts_t *opts, char *dir, size_t size)
{
    const char *d = opts ? opts->cache_dir : NULL, *home;
    if (opts && opts->no_cache)
        return 0;
    if (!d)
        d = getenv("TOKBENCH_CACHE");
    if (d)
        return *d && strcmp(d, "off") && snprintf(dir, size, "%s", d) < (int)size;
    if ((home = getenv("XDG_CACHE_HOME")) && *home)
        return snprintf(dir, size, "%s/tokbench", home) < (int)size;
    if ((home = getenv("HOME")) && *home)
        return snprintf(dir, size, "%s/.cache/tokbench", home) < (int)size;
    return 0;
}

static void note(tok_load_opts_t *opts, const char *what, const char *why)
{
    /* a long path cut short is still the message */
    if (opts && snprintf(opts->note, sizeof opts->note, "%s%s", what, why) < 0)
        opts->note[0] = 0;
}

tok_tokenizer_t *tok_load_ex(const char *path, tok_load_opts_t *opts,
                             tb_err_t *err)
{
    const uint8_t *data;
    size_t len;
    char dir[4096], file[4200];
    tok_source_id_t src = {.path_hash = tb_hash(path, strlen(path))};
    if (opts) {
        opts->cached = 0;
        opts->note[0] = 0;
    }
    if (tb_map_file(path, &data, &len, err))
        return NULL;
    int use = cache_dir(opts, dir, sizeof dir);
    if (use) {
        src.sum = tb_hash(data, len);
        src.size = len;
        snprintf(file, sizeof file, "%s/%016llx-%016llx.tbc", dir,
                 (unsigned long long)src.sum, (unsigned long long)src.path_hash);
        /* the source's pages go before the compiled file's come in, so
         * that the peak holds one of them */
        tb_unmap_file(data, len);
        tok_tokenizer_t *t;
        tb_err_t why;
        int rc = tok_compiled_open(file, &src, &t, &why);
        if (!rc) {
            if (opts)
                opts->cached = 1;
            return t;
        }
        if (rc < 0)
            note(opts, why.msg, "; rebuilt from the source");
        if (tb_map_file(path, &data, &len, err))
            return NULL;
    }
    tok_tokenizer_t *t = load_source(path, data, len, err);
    tb_unmap_file(data, len);
    tb_err_t why;
    if (t && use && (tb_mkdirs(dir, &why) || tok_compiled_write(t, file, &src, &why)))
        note(opts, "compiled cache not written: ", why.msg);
    return t;
}

tok_tokenizer_t *tok_load(const char *path, tb_err_t *err)
{
    return tok_load_ex(path, NULL, err);
}

void tok_free(tok_tokenizer_t *t)
{
    if (!t)
        return;
    tok_state_drop_spares(t);
    if (t->map) /* the tables in it are the mapping's, not the heap's */
        munmap((void *)(uintptr_t)t->map, t->map_len);
    else
        tok_vocab_free(&t->vocab);
    tok_bpe_free(&t->bpe);
    tok_unigram_free(&t->unigram);
    for (size_t i = 0; i < t->norms.len; i++) {
        tb_buf_free(&t->norms.data[i].a);
        tb_buf_free(&t->norms.data[i].b);
        if (!t->norms.data[i].blob_mapped)
            tb_buf_free(&t->norms.data[i].blob);
    }
    for (size_t i = 0; i < t->pres.len; i++) {
        tb_buf_free(&t->pres.data[i].pattern);
        pcre2_code_free(t->pres.data[i].re);
        pcre2_code_free(atomic_load(&t->pres.data[i].jit));
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
