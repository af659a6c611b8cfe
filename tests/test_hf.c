/* Tests of the Hugging Face tokenizer.json loader, the normalizers and the
 * encode/decode pipeline: loading the real manifest vocabularies (checked
 * against the JSON itself), round trips, conformance with the reference
 * `tokenizers` library run through scripts/ref/ref.js, the added-token
 * matcher on a generated vocabulary, and corrupt fixtures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "support.h"
#include <jansson.h>

#include "../base/file.h"
#include "../base/utf8.h"
#include "../tok/tok_internal.h"
#include "../tok/unorm.h"

static const char *const vocabs[] = {"llama3", "qwen3", "gemma3", "mistral"};
#define NVOCABS (sizeof vocabs / sizeof *vocabs)
/* The BPE vocabularies above and BERT's WordPiece, for the reference. */
static const char *const ref_vocabs[] = {"llama3", "qwen3", "gemma3", "mistral", "bert"};
#define NREF (sizeof ref_vocabs / sizeof *ref_vocabs)

static void vocab_path(const char *name, char *path, size_t size)
{
    snprintf(path, size, "data/cache/%s/tokenizer.json", name);
}

static tok_tokenizer_t *load_vocab(const char *name)
{
    char path[256];
    vocab_path(name, path, sizeof path);
    return test_load(path);
}

static json_t *load_json(const char *path)
{
    test_need_file(path);
    json_error_t jerr;
    json_t *j = json_load_file(path, 0, &jerr);
    if (!j)
        fail_msg("%s: %s", path, jerr.text);
    return j;
}

static int32_t find(const tok_tokenizer_t *t, const char *s)
{
    return tok_vocab_find(tok_vocab(t), (const uint8_t *)s, strlen(s));
}

/* ---- loading ----------------------------------------------------------- */

/* Size, added tokens and merges agree with the JSON as jansson reads it. */
static void loads_every_vocabulary_as_the_json_says(void **state)
{
    (void)state;
    for (size_t i = 0; i < NVOCABS; i++) {
        char path[256];
        vocab_path(vocabs[i], path, sizeof path);
        json_t *j = load_json(path);
        json_t *model = json_object_get(j, "model");
        json_t *added = json_object_get(j, "added_tokens");
        json_int_t max_id = -1;
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(model, "vocab"), k, v)
            if (json_integer_value(v) > max_id) max_id = json_integer_value(v);
        size_t ai;
        json_array_foreach(added, ai, v)
        {
            json_int_t id = json_integer_value(json_object_get(v, "id"));
            if (id > max_id)
                max_id = id;
        }
        tok_tokenizer_t *t = load_vocab(vocabs[i]);
        const tok_vocab_t *voc = tok_vocab(t);
        assert_int_equal(voc->size, (uint32_t)max_id + 1);
        assert_int_equal(t->added.len, json_array_size(added));
        assert_int_equal(t->bpe.merges.count,
                         json_array_size(json_object_get(model, "merges")));
        assert_int_equal(t->model, TOK_MODEL_BPE);
        /* every added token has its id, its text and its kind */
        json_array_foreach(added, ai, v)
        {
            uint32_t id = (uint32_t)json_integer_value(json_object_get(v, "id"));
            int special = json_is_true(json_object_get(v, "special"));
            assert_int_equal(voc->special[id], special);
            if (special && (int32_t)id != voc->unk)
                assert_int_equal(voc->kind[id], TOK_CONTROL);
            if (!special)
                assert_int_equal(voc->kind[id], TOK_USER);
        }
        tok_free(t);
        json_decref(j);
    }
}

static void byte_level_vocabularies_hold_raw_bytes(void **state)
{
    (void)state;
    const char *names[] = {"llama3", "qwen3"};
    for (size_t i = 0; i < 2; i++) {
        tok_tokenizer_t *t = load_vocab(names[i]);
        const tok_vocab_t *v = tok_vocab(t);
        assert_string_equal(tok_model_name(t), "byte-level bpe");
        assert_true(t->bpe.byte_level);
        assert_false(t->meta_to_space);
        for (int b = 0; b < 256; b++) /* GPT-2's alphabet covers every byte */
            assert_true(v->byte_id[b] >= 0);
        /* "Ġthe" in the file is " the"; "Ċ" is a newline */
        assert_true(find(t, " the") >= 0);
        assert_true(find(t, "\n") >= 0);
        assert_int_equal(find(t, "\xC4\xA0the"), -1);
        tok_free(t);
    }
    tok_tokenizer_t *t = load_vocab("llama3");
    assert_int_equal(tok_vocab(t)->bos, find(t, "<|begin_of_text|>"));
    assert_int_equal(tok_vocab(t)->eos, find(t, "<|end_of_text|>"));
    assert_true(t->bpe.ignore_merges);
    tok_free(t);
    t = load_vocab("qwen3");
    assert_int_equal(t->norms.len, 1);
    assert_int_equal(t->norms.data[0].kind, TOK_NORM_NFC);
    tok_free(t);
}

/* SentencePiece-style files: <0xNN> pieces are bytes, U+2581 is a space. */
static void sentencepiece_style_vocabularies(void **state)
{
    (void)state;
    const char *names[] = {"gemma3", "mistral"};
    for (size_t i = 0; i < 2; i++) {
        char path[256];
        vocab_path(names[i], path, sizeof path);
        json_t *j = load_json(path);
        json_t *jv = json_object_get(json_object_get(j, "model"), "vocab");
        tok_tokenizer_t *t = load_vocab(names[i]);
        const tok_vocab_t *v = tok_vocab(t);
        assert_string_equal(tok_model_name(t), "bpe+byte-fallback");
        assert_true(t->meta_to_space);
        assert_true(t->bpe.byte_fallback);
        assert_true(t->decode_flags == (i == 1 ? TOK_DEC_STRIP_LEADING_SPACE : 0));
        for (int b = 0; b < 256; b++) {
            char piece[8];
            snprintf(piece, sizeof piece, "<0x%02X>", b);
            int32_t id = (int32_t)json_integer_value(json_object_get(jv, piece));
            assert_int_equal(v->byte_id[b], id);
            assert_int_equal(v->kind[id], TOK_BYTE);
            size_t len;
            const uint8_t *s = tok_vocab_token(v, (uint32_t)id, &len);
            assert_int_equal(len, 1);
            assert_int_equal(s[0], b);
        }
        int32_t the = (int32_t)json_integer_value(json_object_get(jv, "\xE2\x96\x81the"));
        assert_int_equal(find(t, " the"), the);
        assert_int_equal(v->unk, find(t, "<unk>"));
        assert_int_equal(v->kind[v->unk], TOK_UNKNOWN);
        tok_free(t);
        json_decref(j);
    }
}

/* ---- encoding on real vocabularies ---------------------------------------- */

static void encode_one(tok_tokenizer_t *t, const char *s, tok_ids_t *ids)
{
    tb_err_t err;
    ids->len = 0;
    if (tok_encode(t, (const uint8_t *)s, strlen(s), ids, &err))
        fail_msg("encoding \"%s\": %s", s, err.msg);
}

static void added_tokens_are_matched_in_the_text(void **state)
{
    (void)state;
    tok_ids_t ids = {0};
    tok_tokenizer_t *t = load_vocab("llama3");
    encode_one(t, "hi<|eot_id|><|begin_of_text|>", &ids);
    assert_true(ids.len >= 3);
    assert_int_equal(ids.data[ids.len - 2], find(t, "<|eot_id|>"));
    assert_int_equal(ids.data[ids.len - 1], find(t, "<|begin_of_text|>"));
    tok_free(t);
    t = load_vocab("gemma3");
    /* Gemma's newline runs are added tokens: the longest one wins */
    encode_one(t, "a\n\n\nb<start_of_turn>", &ids);
    assert_int_equal(ids.len, 4);
    assert_int_equal(ids.data[1], find(t, "\n\n\n"));
    assert_int_equal(ids.data[3], find(t, "<start_of_turn>"));
    tok_free(t);
    free(ids.data);
}

static void invalid_utf8_is_refused_with_its_offset(void **state)
{
    (void)state;
    tok_tokenizer_t *t = load_vocab("mistral");
    tok_ids_t ids = {0};
    tb_err_t err;
    assert_int_equal(tok_encode(t, (const uint8_t *)"abc\xFFz", 5, &ids, &err), -1);
    assert_non_null(strstr(err.msg, "byte 3"));
    assert_int_equal(ids.len, 0);
    tok_free(t);
    free(ids.data);
}

/* Reads `path` into lines (without their "\n"); every `every`-th line. */
static char **read_lines(const char *path, size_t every, size_t *n)
{
    test_need_file(path);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char **lines = NULL, *line = NULL;
    size_t cap = 0, count = 0, no = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) >= 0) {
        if (no++ % every)
            continue;
        if (len && line[len - 1] == '\n')
            line[--len] = 0;
        lines = realloc(lines, (count + 1) * sizeof *lines);
        lines[count++] = strdup(line);
    }
    free(line);
    fclose(f);
    *n = count;
    return lines;
}

static void free_lines(char **lines, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    free(lines);
}

/* What decode(encode(x)) gives back: x itself, NFC for Qwen, and U+2581
 * as a space for the SentencePiece-style files; NULL where the pipeline is
 * lossy in another way (Mistral prepends a space after each added token). */
static char *expected_round_trip(const char *name, const char *s)
{
    size_t n = strlen(s);
    if (!strcmp(name, "qwen3")) {
        tb_buf_t r = {0};
        tb_err_t err;
        if (tok_unorm(TOK_UNORM_NFC, (const uint8_t *)s, n, &r, &err) ||
            tb_buf_putc(&r, 0))
            fail_msg("NFC of \"%s\": %s", s, err.msg);
        return (char *)r.data;
    }
    if (!strcmp(name, "mistral") && strchr(s, '<'))
        return NULL;
    char *out = malloc(n + 1);
    size_t k = 0;
    int meta = !strcmp(name, "gemma3") || !strcmp(name, "mistral");
    for (size_t i = 0; i < n; i++) {
        if (meta && !strncmp(s + i, "\xE2\x96\x81", 3)) {
            out[k++] = ' ';
            i += 2;
        } else {
            out[k++] = s[i];
        }
    }
    out[k] = 0;
    return out;
}

static void decode_inverts_encode(void **state)
{
    (void)state;
    size_t n;
    char **lines = read_lines("data/cache/multi/multi.txt", 25, &n);
    tok_ids_t ids = {0};
    tb_buf_t out = {0};
    tb_err_t err;
    for (size_t v = 0; v < NVOCABS; v++) {
        tok_tokenizer_t *t = load_vocab(vocabs[v]);
        for (size_t i = 0; i < n; i++) {
            char *want = expected_round_trip(vocabs[v], lines[i]);
            if (!want)
                continue;
            encode_one(t, lines[i], &ids);
            out.len = 0;
            assert_int_equal(tok_decode(t, ids.data, ids.len, &out, &err), 0);
            if (out.len != strlen(want) || memcmp(out.data, want, out.len))
                fail_msg("%s: decode(encode(\"%s\")) gave \"%.*s\"", vocabs[v],
                         lines[i], (int)out.len, out.data);
            free(want);
        }
        uint32_t past = tok_vocab(t)->size;
        assert_int_equal(tok_decode(t, &past, 1, &out, &err), -1);
        assert_non_null(strstr(err.msg, "past the vocabulary"));
        tok_free(t);
    }
    free(ids.data);
    tb_buf_free(&out);
    free_lines(lines, n);
}

/* ---- conformance with the reference ---------------------------------------- */

static void need_reference(void)
{
    if (system("node --version >/dev/null 2>&1"))
        fail_msg("node is not installed: the reference tokenizer needs it "
                 "(run `make setup`)");
    if (access("scripts/ref/ref.js", R_OK))
        fail_msg("scripts/ref/ref.js is missing");
    if (access("scripts/ref/node_modules/@anush008/tokenizers", R_OK))
        fail_msg("scripts/ref/node_modules/@anush008/tokenizers is missing: "
                 "run `make setup`");
}

/* Writes lines to a temporary file; returns its path (static buffer). */
static const char *write_sample(char **lines, size_t n)
{
    static char path[] = "/tmp/tokbench-test-hf-XXXXXX";
    strcpy(path, "/tmp/tokbench-test-hf-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s\n", lines[i]);
    fclose(f);
    return path;
}

/* Runs the reference over the sample and compares its ids with ours, line
 * by line; returns the number of lines that differ. */
static size_t compare_with_reference(const char *vocab_file, char **lines,
                                     size_t n, size_t *compared)
{
    const char *sample = write_sample(lines, n);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "node scripts/ref/ref.js hf '%s' < '%s'",
             vocab_file, sample);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    tb_err_t err;
    tok_tokenizer_t *t = tok_load(vocab_file, &err);
    if (!t)
        fail_msg("loading %s: %s", vocab_file, err.msg);
    tok_ids_t ids = {0};
    char *line = NULL;
    size_t cap = 0, i = 0, bad = 0;
    ssize_t len;
    tb_buf_t mine = {0};
    while (i < n && (len = getline(&line, &cap, p)) >= 0) {
        if (len && line[len - 1] == '\n')
            line[--len] = 0;
        ids.len = 0;
        mine.len = 0;
        if (tok_encode(t, (const uint8_t *)lines[i], strlen(lines[i]), &ids, &err))
            fail_msg("%s line %zu: %s", vocab_file, i + 1, err.msg);
        for (size_t k = 0; k < ids.len; k++) {
            char num[16];
            int w = snprintf(num, sizeof num, k ? " %u" : "%u", ids.data[k]);
            tb_buf_put(&mine, num, (size_t)w);
        }
        if (mine.len != (size_t)len || (len && memcmp(mine.data, line, mine.len))) {
            if (bad++ < 3)
                print_message("%s: line %zu \"%.80s\"\n  reference: %.200s\n  "
                              "tokbench:  %.*s\n", vocab_file, i + 1, lines[i],
                              line, (int)(mine.len < 200 ? mine.len : 200),
                              mine.data);
        }
        i++;
    }
    int status = pclose(p);
    unlink(sample);
    free(line);
    free(ids.data);
    tb_buf_free(&mine);
    tok_free(t);
    if (status != 0 || i != n)
        fail_msg("the reference (%s) stopped after %zu of %zu lines (status "
                 "%d)", cmd, i, n, status);
    *compared = i;
    return bad;
}

/* Lines that exercise the edges: added tokens, whitespace runs, digits,
 * contractions, U+2581 written in the text, scripts without spaces. */
static const char *const edge_lines[] = {
    "", " ", "  leading and trailing  ", "\t\ttabs\tand  spaces ",
    "<|begin_of_text|>Hello<|eot_id|> <|im_start|>user", "<s>a</s> <unk>",
    "<start_of_turn>model<end_of_turn>", "x<bos>y<eos>", "1234567890 3.14159 1,000,000",
    "I'm you'll they'RE", "\xE2\x96\x81marker\xE2\x96\x81\xE2\x96\x81here",
    "\xE4\xBD\xA0\xE5\xA5\xBD\xE4\xB8\x96\xE7\x95\x8C", "caf\x65\xCC\x81 na\xC3\xAFve",
    "\xF0\x9F\x98\x80\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD emoji", "<h1>title</h1><table>",
    "a               b", "\xC2\xA0nbsp\xE3\x80\x80ideographic",
};

static void ids_match_the_reference(void **state)
{
    (void)state;
    need_reference();
    size_t n1, n2;
    char **multi = read_lines("data/cache/multi/multi.txt", 60, &n1);
    char **uni = read_lines("data/cache/unicode/unicode.txt", 100, &n2);
    size_t ne = sizeof edge_lines / sizeof *edge_lines, n = ne + n1 + n2;
    char **lines = malloc(n * sizeof *lines);
    for (size_t i = 0; i < ne; i++)
        lines[i] = (char *)edge_lines[i];
    memcpy(lines + ne, multi, n1 * sizeof *lines);
    memcpy(lines + ne + n1, uni, n2 * sizeof *lines);
    size_t total_bad = 0;
    for (size_t v = 0; v < NREF; v++) {
        char path[256];
        vocab_path(ref_vocabs[v], path, sizeof path);
        test_need_file(path);
        size_t compared = 0;
        size_t bad = compare_with_reference(path, lines, n, &compared);
        print_message("%s: %zu lines compared, %zu differ\n", ref_vocabs[v],
                      compared, bad);
        total_bad += bad;
    }
    free(lines);
    free_lines(multi, n1);
    free_lines(uni, n2);
    assert_int_equal(total_bad, 0);
}

/* Decoding against the reference's decode(ids, skip_special_tokens =
 * false): our bytes, made valid UTF-8 the way the reference's Rust
 * String::from_utf8_lossy does (one U+FFFD per maximal invalid prefix),
 * must equal its string. */
static const char decode_js[] =
    "const {Tokenizer}=require('./scripts/ref/node_modules/@anush008/tokenizers');"
    "const fs=require('fs');(async()=>{"
    "const t=Tokenizer.fromFile(process.argv[1]);"
    "const ls=fs.readFileSync(process.argv[2],'utf8').split('\\n');ls.pop();"
    "for(const l of ls){const ids=l.length?l.split(' ').map(Number):[];"
    "process.stdout.write(JSON.stringify(await t.decode(ids,false))+'\\n');}})();";

/* Bytes of the longest prefix of a valid UTF-8 sequence at s (at least 1). */
static size_t invalid_prefix(const uint8_t *s, size_t n)
{
    uint8_t c = s[0];
    size_t want = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
                : c >= 0xF0 && c <= 0xF4 ? 4 : 1;
    uint8_t lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
    uint8_t hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    size_t k = 1;
    if (want > 1 && k < n && s[k] >= lo && s[k] <= hi)
        for (k = 2; k < want && k < n && (s[k] & 0xC0) == 0x80; k++)
            ;
    return k;
}

static void lossy_utf8(const uint8_t *s, size_t n, tb_buf_t *out)
{
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = tb_utf8_decode(s + i, n - i, &cp);
        if (k) {
            tb_buf_put(out, s + i, k);
            i += k;
        } else {
            tb_buf_put(out, "\xEF\xBF\xBD", 3);
            i += invalid_prefix(s + i, n - i);
        }
    }
}

static void decode_matches_the_reference(void **state)
{
    (void)state;
    need_reference();
    unsigned seed = 20261121;
    for (size_t v = 0; v < NREF; v++) {
        tok_tokenizer_t *t = load_vocab(ref_vocabs[v]);
        char path[256], ids_path[] = "/tmp/tokbench-test-hf-ids-XXXXXX";
        vocab_path(ref_vocabs[v], path, sizeof path);
        int fd = mkstemp(ids_path);
        FILE *f = fdopen(fd, "w");
        TB_VEC(tok_ids_t) seqs = {0};
        size_t ne = sizeof edge_lines / sizeof *edge_lines;
        for (size_t i = 0; i < ne + 200; i++) {
            tok_ids_t ids = {0};
            if (i < ne) {
                encode_one(t, edge_lines[i], &ids);
            } else { /* any ids at all: specials, byte pieces, unused */
                for (int k = rand_r(&seed) % 12 + 1; k > 0; k--)
                    tb_vec_push(&ids, (uint32_t)rand_r(&seed) % tok_vocab(t)->size);
            }
            for (size_t k = 0; k < ids.len; k++)
                fprintf(f, k ? " %u" : "%u", ids.data[k]);
            fputc('\n', f);
            tb_vec_push(&seqs, ids);
        }
        fclose(f);
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "node -e \"%s\" '%s' '%s'", decode_js, path,
                 ids_path);
        FILE *p = popen(cmd, "r");
        char *line = NULL;
        size_t cap = 0, i = 0, bad = 0;
        ssize_t len;
        tb_buf_t mine = {0}, lossy = {0};
        tb_err_t err;
        while (i < seqs.len && (len = getline(&line, &cap, p)) >= 0) {
            json_error_t jerr;
            json_t *js = json_loads(line, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
            assert_non_null(js);
            mine.len = lossy.len = 0;
            assert_int_equal(tok_decode(t, seqs.data[i].data, seqs.data[i].len,
                                        &mine, &err), 0);
            lossy_utf8(mine.data, mine.len, &lossy);
            if (lossy.len != json_string_length(js) ||
                (lossy.len && memcmp(lossy.data, json_string_value(js), lossy.len)))
                if (bad++ < 3)
                    print_message("%s: ids line %zu decode differs: reference "
                                  "%.100s", ref_vocabs[v], i + 1, line);
            json_decref(js);
            i++;
        }
        int status = pclose(p);
        unlink(ids_path);
        for (size_t k = 0; k < seqs.len; k++)
            free(seqs.data[k].data);
        free(seqs.data);
        free(line);
        tb_buf_free(&mine);
        tb_buf_free(&lossy);
        tok_free(t);
        print_message("%s: %zu id sequences decoded, %zu differ\n", ref_vocabs[v],
                      i, bad);
        assert_int_equal(status, 0);
        assert_int_equal(i, ne + 200);
        assert_int_equal(bad, 0);
    }
}

/* A generated vocabulary with added tokens of every flavour (lstrip, rstrip,
 * single_word, normalized, longest match) against the reference. */
static json_t *added_fixture(void)
{
    json_t *vocab = json_object();
    int id = 0;
    char ch[2] = {0};
    for (int c = 0x20; c < 0x7F; c++) {
        ch[0] = (char)c;
        json_object_set_new(vocab, ch, json_integer(id++));
    }
    json_object_set_new(vocab, "<unk>", json_integer(id++));
    json_object_set_new(vocab, "th", json_integer(id++));
    json_object_set_new(vocab, "the", json_integer(id++));
    json_t *merges = json_pack("[ss]", "t h", "th e");
    json_t *model = json_pack("{s:s, s:o, s:o, s:s}", "type", "BPE", "vocab",
                              vocab, "merges", merges, "unk_token", "<unk>");
    const struct {
        const char *content;
        int special, lstrip, rstrip, single_word, normalized;
    } added[] = {
        {"[A]", 1, 0, 0, 0, 0}, {"[AB]", 1, 0, 0, 0, 0}, {"<L>", 0, 1, 0, 0, 0},
        {"<R>", 0, 0, 1, 0, 0}, {"word", 0, 0, 0, 1, 0}, {"Hi", 0, 0, 0, 0, 1},
        {"<LR>", 1, 1, 1, 0, 0},
    };
    json_t *list = json_array();
    for (size_t i = 0; i < sizeof added / sizeof *added; i++)
        json_array_append_new(
            list, json_pack("{s:i, s:s, s:b, s:b, s:b, s:b, s:b}", "id", id++,
                            "content", added[i].content, "special",
                            added[i].special, "lstrip", added[i].lstrip,
                            "rstrip", added[i].rstrip, "single_word",
                            added[i].single_word, "normalized",
                            added[i].normalized));
    return json_pack("{s:s, s:o, s:{s:s}, s:n, s:n, s:o}", "version", "1.0",
                     "added_tokens", list, "normalizer", "type", "Lowercase",
                     "pre_tokenizer", "decoder", "model", model);
}

/* Writes a generated tokenizer.json (root, which it frees) to a new
 * temporary file named from the mkstemp template path. */
static void dump_fixture(json_t *root, char *path)
{
    assert_non_null(root);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(json_dump_file(root, path, 0), 0);
    json_decref(root);
}

/* Every line gets the same ids from us and from the reference with the
 * fixture at path, which is removed. */
static void lines_match_reference(const char *path, const char *const *lines, size_t n)
{
    size_t compared = 0;
    size_t bad = compare_with_reference(path, (char **)lines, n, &compared);
    unlink(path);
    assert_int_equal(compared, n);
    assert_int_equal(bad, 0);
}

static void added_token_flags_match_the_reference(void **state)
{
    (void)state;
    need_reference();
    char path[] = "/tmp/tokbench-test-hf-added-XXXXXX";
    dump_fixture(added_fixture(), path);
    static const char *const lines[] = {
        "x[AB]y[A]z[ABC]", "a  <L>  b", "a  <R>  b", "  <L><R>  ", "<R>\t\t<L>",
        "sword word words word_ word", "word", "HI there hi Hi", "[A][AB][A",
        "The the THE", "a \xC2\xA0<LR>\xE3\x80\x80 b", "<L>", "", "x<LR>",
    };
    lines_match_reference(path, lines, sizeof lines / sizeof *lines);
}

/* A generated Unigram vocabulary (Metaspace pre-tokenizer, byte fallback,
 * a Precompiled-free NFKC normalizer) against the reference. */
static json_t *unigram_fixture(void)
{
    static const struct {
        const char *piece;
        double score;
    } pieces[] = {
        {"<unk>", 0}, {"\xE2\x96\x81", -2.0}, {"a", -3.0}, {"b", -3.1},
        {"c", -3.2}, {"d", -3.3}, {"e", -3.4}, {"ab", -2.5}, {"\xE2\x96\x81" "ab", -2.2},
        {"abc", -4.0}, {"bc", -3.0}, {"cde", -3.5}, {"\xE2\x96\x81" "c", -2.9},
        {"de", -2.8}, {"\xE2\x96\x81" "dead", -5.0}, {"ea", -3.3},
    };
    json_t *vocab = json_array();
    for (size_t i = 0; i < sizeof pieces / sizeof *pieces; i++)
        json_array_append_new(vocab, json_pack("[sf]", pieces[i].piece,
                                               pieces[i].score));
    for (int b = 0; b < 256; b++) {
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", b);
        json_array_append_new(vocab, json_pack("[sf]", name, 0.0));
    }
    return json_pack(
        "{s:s, s:[], s:{s:s}, s:{s:s, s:s, s:s, s:b}, s:{s:s, s:s, s:s, s:b},"
        " s:{s:s, s:i, s:o, s:b}}",
        "version", "1.0", "added_tokens", "normalizer", "type", "NFKC",
        "pre_tokenizer", "type", "Metaspace", "replacement", "\xE2\x96\x81",
        "prepend_scheme", "always", "split", 1, "decoder", "type", "Metaspace",
        "replacement", "\xE2\x96\x81", "prepend_scheme", "always", "split", 1,
        "model", "type", "Unigram", "unk_id", 0, "vocab", vocab,
        "byte_fallback", 1);
}

static void unigram_matches_the_reference(void **state)
{
    (void)state;
    need_reference();
    char path[] = "/tmp/tokbench-test-hf-unigram-XXXXXX";
    dump_fixture(unigram_fixture(), path);
    tb_err_t err;
    tok_tokenizer_t *t = tok_load(path, &err);
    if (!t)
        fail_msg("%s", err.msg);
    assert_string_equal(tok_model_name(t), "unigram+byte-fallback");
    assert_int_equal(t->model, TOK_MODEL_UNIGRAM);
    assert_int_equal(tok_vocab(t)->kind[0], TOK_UNKNOWN);
    assert_true(tok_vocab(t)->score[2] == -3.0f);
    tok_free(t);
    static const char *const lines[] = {
        "abc", "ab ab", "abcde dead", " cde  ea", "xyz", "a\xC3\xA9" "b",
        "\xEF\xAC\x81" "de", "deadbeef", "", "e a d",
    };
    lines_match_reference(path, lines, sizeof lines / sizeof *lines);
}

/* ---- BERT: WordPiece, BertNormalizer, BertPreTokenizer ----------------------- */

/* The bert file with its normalizer's fields replaced by those of the JSON
 * object `set` (NULL: as it is), written to a new file from template path. */
static void bert_variant(const char *set, char *path)
{
    json_t *root = load_json("data/cache/bert/tokenizer.json");
    if (set) {
        json_t *fields = json_loads(set, 0, NULL);
        assert_non_null(fields);
        assert_int_equal(json_object_update(json_object_get(root, "normalizer"), fields), 0);
        json_decref(fields);
    }
    dump_fixture(root, path);
}

/* The normalizer settings the BERT tests try: the file's own (lowercase,
 * accents stripped as lowercase says), and each step off or alone. */
static const char *const bert_settings[] = {
    NULL,
    "{\"lowercase\": false, \"strip_accents\": null}",
    "{\"lowercase\": false, \"strip_accents\": true}",
    "{\"lowercase\": true, \"strip_accents\": false}",
    "{\"clean_text\": false, \"handle_chinese_chars\": false}",
};

/* Lines for BERT's steps: accents, CJK, control characters (\v, \f and
 * U+0085 are dropped, not white space), private use, U+FFFD, U+0130
 * (lowercased to i and a combining dot), punctuation of Unicode 8 and a
 * later one (U+2E43, a letter to BERT), marks of Unicode 8 and later
 * (U+1DF6), words of 100 and 101 characters (the model's longest is 100),
 * unknown words, contractions, the special tokens' text. */
static void bert_matches_the_reference(void **state)
{
    (void)state;
    need_reference();
    tok_tokenizer_t *t = load_vocab("bert");
    char path0[256];
    vocab_path("bert", path0, sizeof path0);
    json_t *j = load_json(path0);
    json_t *jv = json_object_get(json_object_get(j, "model"), "vocab");
    assert_string_equal(tok_model_name(t), "wordpiece");
    assert_int_equal(t->model, TOK_MODEL_WORDPIECE);
    assert_false(t->wordpiece.split_text);
    assert_int_equal(t->wordpiece.max_chars, 100);
    assert_int_equal(t->decode_flags, TOK_DEC_WORDPIECE | TOK_DEC_CLEANUP);
    /* a word-start piece holds its space, a continuation drops its "##" */
    assert_int_equal(find(t, " the"), json_integer_value(json_object_get(jv, "the")));
    assert_int_equal(find(t, "ing"), json_integer_value(json_object_get(jv, "##ing")));
    assert_int_equal(tok_vocab(t)->unk, find(t, "[UNK]"));
    assert_int_equal(tok_vocab(t)->kind[tok_vocab(t)->unk], TOK_UNKNOWN);
    json_decref(j);
    tok_free(t);

    char w100[128], w101[128], accents[256];
    memset(w100, 'a', 100);
    w100[100] = 0;
    memcpy(w101, w100, 100);
    memcpy(w101 + 100, "a", 2);
    snprintf(accents, sizeof accents, "%.96s\xC3\xA9", w100); /* 97 chars */
    const char *lines[] = {
        "Hello, World! HELLO na\xC3\xAFve Caf\xC3\xA9 \xC3\x85ngstr\xC3\xB6m",
        "e\xCC\x81t\xC3\xA9 \xE1\xB8\x80 \xC4\xB0stanbul \xC4\xB1 \xCE\xA3\xCE\xA3",
        "\xE4\xBD\xA0\xE5\xA5\xBD\xE4\xB8\x96\xE7\x95\x8C abc\xE4\xB8\xAD" "def \xE3\x81\x93\xE3\x82\x93",
        "a\x01" "b\x7F" "c\x0B" "d\x0C" "e\xC2\x85" "f\xC2\xA0" "g\xE2\x80\x8B" "h",
        "tab\there\rcr \xEF\xBF\xBD \xEE\x80\x80 \xEE\x80\x81 \xF3\xB0\x80\x81 x",
        "\xE2\xB9\x83 a\xE2\xB9\x83" "b \xC2\xBF\xC2\xA1 \xE3\x80\x82 \xE2\x80\x94",
        "a\xE1\xB7\xB6" "b \xE0\xA4\x95\xE0\xA5\x8D\xE0\xA4\xB7 \xD8\xA7\xD9\x84\xD8\xB9",
        w100, w101, accents, "xq\xC3\xA9zzz qqqqjjjj",
        "don't I'm we've they're it's a . b ? c ! d , e ' f",
        "[CLS] hi [SEP] [MASK][PAD]x[UNK]", "  ", "", "\xF0\x9F\x98\x80\xF0\x9F\xA5\xB0!",
        "$5 + 3 = 8; a<b>c ^_^ ~`|",
    };
    size_t n = sizeof lines / sizeof *lines;
    for (size_t v = 0; v < sizeof bert_settings / sizeof *bert_settings; v++) {
        char path[] = "/tmp/tokbench-test-hf-bert-XXXXXX";
        bert_variant(bert_settings[v], path);
        lines_match_reference(path, lines, n);
    }
}

/* Every code point but the newline and the surrogates, each in a line
 * "x<c>ab\u0301<c>" (alone, after a letter, after a combining mark), under
 * the file's own normalizer, lowercase without accent stripping, and no
 * clean-up: the character classes of tok/bert.c as the reference has them. */
static void bert_every_code_point(void **state)
{
    (void)state;
    need_reference();
    size_t n = 0;
    char **lines = malloc(0x110000 * sizeof *lines);
    assert_non_null(lines);
    for (uint32_t c = 1; c <= 0x10FFFF; c++) {
        if (c == '\n' || (c >= 0xD800 && c <= 0xDFFF))
            continue;
        uint8_t u[4];
        size_t k = tb_utf8_encode(c, u);
        char *l = malloc(2 * k + 8);
        assert_non_null(l);
        size_t at = 0;
        l[at++] = 'x';
        memcpy(l + at, u, k);
        at += k;
        memcpy(l + at, "ab\xCC\x81", 4);
        at += 4;
        memcpy(l + at, u, k);
        l[at + k] = 0;
        lines[n++] = l;
    }
    const size_t pick[] = {0, 3, 4};
    for (size_t v = 0; v < sizeof pick / sizeof *pick; v++) {
        char path[] = "/tmp/tokbench-test-hf-bert-XXXXXX";
        bert_variant(bert_settings[pick[v]], path);
        size_t compared = 0, bad = compare_with_reference(path, lines, n, &compared);
        unlink(path);
        print_message("bert %s: %zu code points, %zu differ\n",
                      bert_settings[pick[v]] ? bert_settings[pick[v]] : "as is",
                      compared, bad);
        assert_int_equal(bad, 0);
    }
    free_lines(lines, n);
}

/* A generated WordPiece file: another prefix, a 4-character word limit,
 * no normalizer, the decoder without cleanup; against the reference. */
static json_t *wordpiece_fixture(const char *unk)
{
    static const char *const pieces[] = {"[UNK]", "a", "b", "ab", "@@b", "@@c",
                                         "@@bc", "x", "@@x", "!", "@@!", "."};
    json_t *vocab = json_object();
    for (size_t i = 0; i < sizeof pieces / sizeof *pieces; i++)
        json_object_set_new(vocab, pieces[i], json_integer((json_int_t)i));
    json_t *model = json_pack("{s:s, s:o, s:s, s:i}", "type", "WordPiece", "vocab",
                              vocab, "continuing_subword_prefix", "@@",
                              "max_input_chars_per_word", 4);
    if (unk)
        json_object_set_new(model, "unk_token", json_string(unk));
    return json_pack("{s:s, s:[], s:n, s:{s:s}, s:{s:s, s:s, s:b}, s:o}",
                     "version", "1.0", "added_tokens", "normalizer",
                     "pre_tokenizer", "type", "BertPreTokenizer", "decoder",
                     "type", "WordPiece", "prefix", "@@", "cleanup", 0,
                     "model", model);
}

static void wordpiece_fixture_matches_the_reference(void **state)
{
    (void)state;
    need_reference();
    char path[] = "/tmp/tokbench-test-hf-wordpiece-XXXXXX";
    dump_fixture(wordpiece_fixture("[UNK]"), path);
    tok_tokenizer_t *t = test_load(path);
    tb_buf_t out = {0};
    tb_err_t err;
    /* the decoder as the reference's: "@@" kept on a first continuation,
     * no cleanup of " !" or " ." */
    static const uint32_t ids[] = {4, 3, 5, 9, 10, 0, 11};
    static const char want[] = "@@b abc !! [UNK] .";
    assert_int_equal(tok_decode(t, ids, 7, &out, &err), 0);
    assert_int_equal(out.len, strlen(want));
    assert_memory_equal(out.data, want, out.len);
    tb_buf_free(&out);
    tok_free(t);
    static const char *const lines[] = {
        "ab abc abbc", "abbbc", "abcx!", "aaaa aaaaa", "x!x . ", "zz ab", "",
    };
    lines_match_reference(path, lines, sizeof lines / sizeof *lines);
}

/* Marks that strip_accents keeps (U+1D165 and U+1D16D, class Mc, of
 * combining classes 216 and 226) come out of its NFD in canonical order,
 * whatever order the text had them in: a character's output is not its own
 * there.  The vocabulary holds both orders as words, so only the reordered
 * one matches the reference. */
static void bert_normalizer_reorders_kept_marks(void **state)
{
    (void)state;
    need_reference();
    json_t *root = wordpiece_fixture("[UNK]");
    json_t *vocab = json_object_get(json_object_get(root, "model"), "vocab");
    json_object_set_new(vocab, "e\xF0\x9D\x85\xA5\xF0\x9D\x85\xAD", json_integer(12));
    json_object_set_new(vocab, "e\xF0\x9D\x85\xAD\xF0\x9D\x85\xA5", json_integer(13));
    json_object_set_new(vocab, "@@\xF0\x9D\x85\xA5\xF0\x9D\x85\xAD", json_integer(14));
    json_object_set_new(vocab, "@@\xF0\x9D\x85\xAD\xF0\x9D\x85\xA5", json_integer(15));
    json_object_set_new(root, "normalizer",
                        json_pack("{s:s, s:b, s:b, s:b, s:b}", "type", "BertNormalizer",
                                  "clean_text", 1, "handle_chinese_chars", 1,
                                  "strip_accents", 1, "lowercase", 1));
    char path[] = "/tmp/tokbench-test-hf-wordpiece-XXXXXX";
    dump_fixture(root, path);
    static const char *const lines[] = {
        "\xC3\xA9\xF0\x9D\x85\xAD\xF0\x9D\x85\xA5",         /* é, 226, 216 */
        "E\xF0\x9D\x85\xAD\xCC\x81\xF0\x9D\x85\xA5",        /* an accent between */
        "x\xF0\x9D\x85\xAD\xF0\x9D\x85\xA5 e\xF0\x9D\x85\xA5\xF0\x9D\x85\xAD",
    };
    lines_match_reference(path, lines, sizeof lines / sizeof *lines);
}

/* Every id line decoded (skip: without special tokens) by us and by the
 * reference (ref.js hf --decode) with the file at path: the same text. */
static void decodes_match_reference(const char *path, const char *const *id_lines,
                                    size_t n, int skip)
{
    const char *sample = write_sample((char **)id_lines, n);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "node scripts/ref/ref.js hf '%s' --decode%s < '%s'",
             path, skip ? " --skip-special" : "", sample);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    tok_tokenizer_t *t = test_load(path);
    char line[4096];
    size_t i = 0;
    for (; i < n && fgets(line, sizeof line, p); i++) {
        tok_ids_t ids = {0};
        tb_buf_t got = {0};
        tb_err_t err;
        for (const char *q = id_lines[i]; *q;) {
            char *end;
            uint32_t id = (uint32_t)strtoul(q, &end, 10);
            assert_int_equal(tb_vec_push(&ids, id), 0);
            q = end + strspn(end, " ");
        }
        assert_int_equal(tok_decode_ex(t, ids.data, ids.len, skip ? TOK_SKIP_SPECIAL : 0,
                                       &got, &err), 0);
        json_t *js = json_loads(line, JSON_DECODE_ANY, NULL);
        assert_non_null(js);
        if (json_string_length(js) != got.len ||
            (got.len && memcmp(json_string_value(js), got.data, got.len)))
            fail_msg("%s: decode of \"%s\": tokbench \"%.*s\", reference %s", path,
                     id_lines[i], (int)got.len, (const char *)got.data, line);
        json_decref(js);
        tb_buf_free(&got);
        free(ids.data);
    }
    tok_free(t);
    assert_int_equal(pclose(p), 0);
    unlink(sample);
    assert_int_equal(i, n);
}

/* With no decoder, Hugging Face joins the token strings with spaces: a
 * generated WordLevel file, and the WordPiece one without its decoder. */
static void wordlevel_and_no_decoder_match_the_reference(void **state)
{
    (void)state;
    need_reference();
    static const char *const words[] = {"[UNK]", "hello", "world", ",", "!", "<s>"};
    json_t *vocab = json_object();
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        json_object_set_new(vocab, words[i], json_integer((json_int_t)i));
    json_t *root = json_pack(
        "{s:s, s:[{s:i, s:s, s:b, s:b, s:b, s:b, s:b}], s:{s:s}, s:{s:s}, s:n,"
        " s:{s:s, s:o, s:s}}",
        "version", "1.0", "added_tokens", "id", 5, "content", "<s>", "special", 1,
        "normalized", 0, "single_word", 0, "lstrip", 0, "rstrip", 0, "normalizer", "type", "Lowercase", "pre_tokenizer",
        "type", "Whitespace", "decoder", "model", "type", "WordLevel", "vocab",
        vocab, "unk_token", "[UNK]");
    char wl[] = "/tmp/tokbench-test-hf-wordlevel-XXXXXX";
    dump_fixture(root, wl);
    tok_tokenizer_t *t = test_load(wl);
    assert_string_equal(tok_model_name(t), "wordlevel");
    tok_free(t);
    static const char *const ids[] = {"1 3 2 4", "5 1 0 2", "", "4"};
    for (int skip = 0; skip < 2; skip++)
        decodes_match_reference(wl, ids, 4, skip);
    static const char *const lines[] = {"Hello, World!", "hello<s>xyz  world", ""};
    lines_match_reference(wl, lines, 3);

    char wp[] = "/tmp/tokbench-test-hf-wordpiece-XXXXXX";
    root = wordpiece_fixture("[UNK]");
    json_object_set_new(root, "decoder", json_null());
    dump_fixture(root, wp);
    static const char *const wp_ids[] = {"4 3 5 9 10 0 11", "3 6", ""};
    decodes_match_reference(wp, wp_ids, 3, 0);
    unlink(wp);
}

/* What the WordPiece reading refuses, and an unknown word with no
 * unk_token (Hugging Face's MissingUnkToken): errors, not crashes. */
static void wordpiece_errors(void **state)
{
    (void)state;
    char path[] = "/tmp/tokbench-test-hf-wordpiece-XXXXXX";
    char path2[] = "/tmp/tokbench-test-hf-wordpiece-XXXXXX";
    char path3[] = "/tmp/tokbench-test-hf-wordpiece-XXXXXX";
    dump_fixture(wordpiece_fixture(NULL), path);
    tok_tokenizer_t *t = test_load(path);
    tok_ids_t ids = {0};
    tb_err_t err;
    assert_int_equal(tok_encode(t, (const uint8_t *)"ab", 2, &ids, &err), 0);
    assert_int_equal(tok_encode(t, (const uint8_t *)"ab zz", 5, &ids, &err), -1);
    assert_non_null(strstr(err.msg, "no unk_token"));
    free(ids.data);
    tok_free(t);
    unlink(path);

    json_t *root = wordpiece_fixture("[UNK]");
    json_object_set_new(json_object_get(json_object_get(root, "model"), "vocab"),
                        "@@ z", json_integer(12));
    dump_fixture(root, path2);
    assert_null(tok_load(path2, &err));
    assert_non_null(strstr(err.msg, "model.vocab: token \"@@ z\" (id 12) is a continuation"));
    unlink(path2);

    root = wordpiece_fixture("[UNK]");
    json_object_set_new(json_object_get(root, "decoder"), "prefix", json_string("##"));
    dump_fixture(root, path3);
    assert_null(tok_load(path3, &err));
    assert_non_null(strstr(err.msg, "decoder: the WordPiece decoder is supported"));
    unlink(path3);
}

/* ---- the scanner against the tree -------------------------------------------- */

/* A BPE file whose strings need every kind of escape: quotes,
 * backslashes, \u of one and of two UTF-16 units (json_dumps writes
 * everything past ASCII so), merges in both spellings. */
static json_t *escapes_fixture(void)
{
    static const char *const tokens[] = {
        "\"", "\\", "\"\\", "\xC3\xA9", "\"\xC3\xA9", "\xF0\x9F\x98\x80",
        "\\\xF0\x9F\x98\x80", "/", "\"/",
    };
    json_t *vocab = json_object();
    for (size_t i = 0; i < sizeof tokens / sizeof *tokens; i++)
        json_object_set_new(vocab, tokens[i], json_integer((json_int_t)i));
    json_t *merges = json_pack("[s, [s, s], [s, s], s]", "\" \\", "\"",
                               "\xC3\xA9", "\\", "\xF0\x9F\x98\x80", "\" /");
    /* added tokens in other key orders, with flags left out (normalized's
     * default is !special) and a key the loader does not know */
    json_t *added = json_pack(
        "[{s:i, s:s, s:b}, {s:s, s:b, s:i, s:[i, {s:n}], s:b, s:b},"
        " {s:i, s:s, s:b, s:b}]",
        "id", 9, "content", "<\"x\">", "special", 1,
        "content", "\xC3\xA9\n", "normalized", 1, "id", 10, "extra", 1, "a",
        "rstrip", 1, "single_word", 0,
        "id", 11, "content", "z", "special", 0, "lstrip", 1);
    return json_pack("{s:s, s:o, s:n, s:n, s:n, s:{s:s, s:o, s:o}}", "version",
                     "1.0", "added_tokens", added, "normalizer", "pre_tokenizer",
                     "decoder", "model", "type", "BPE", "vocab", vocab,
                     "merges", merges);
}

/* path's text with "vocab": {} put first in its model object: the scanner
 * refuses a key given twice, and jansson keeps the last, so the tree reads
 * the same tokenizer alone.  Written to a new file from template out. */
static void tree_only_copy(const char *path, char *out)
{
    uint8_t *text;
    size_t len;
    tb_err_t err;
    if (tb_read_file(path, &text, &len, &err))
        fail_msg("%s", err.msg);
    const char *m = strstr((const char *)text, "\"model\"");
    assert_non_null(m);
    const char *open = strchr(m, '{');
    assert_non_null(open);
    size_t head = (size_t)(open + 1 - (const char *)text);
    int fd = mkstemp(out);
    assert_true(fd >= 0);
    static const char dup[] = "\"vocab\": {}, ";
    assert_true(write(fd, text, head) == (ssize_t)head);
    assert_true(write(fd, dup, sizeof dup - 1) == (ssize_t)(sizeof dup - 1));
    assert_true(write(fd, text + head, len - head) == (ssize_t)(len - head));
    close(fd);
    free(text);
}

static void same_tokenizer(const tok_tokenizer_t *a, const tok_tokenizer_t *b)
{
    const tok_vocab_t *x = tok_vocab(a), *y = tok_vocab(b);
    char cx[65], cy[65];
    tok_vocab_checksum(x, cx);
    tok_vocab_checksum(y, cy);
    assert_string_equal(cx, cy);
    assert_memory_equal(x->score, y->score, x->size * sizeof *x->score);
    assert_memory_equal(x->special, y->special, x->size);
    assert_int_equal(a->model, b->model);
    assert_int_equal(a->bpe.unk, b->bpe.unk);
    assert_int_equal(a->unigram.unk, b->unigram.unk);
    assert_int_equal(a->added.len, b->added.len);
    for (size_t i = 0; i < a->added.len; i++) {
        const tok_added_t *p = &a->added.data[i], *q = &b->added.data[i];
        assert_int_equal(p->id, q->id);
        assert_int_equal(p->content.len, q->content.len);
        assert_memory_equal(p->content.data, q->content.data, p->content.len);
        assert_int_equal(p->special << 4 | p->lstrip << 3 | p->rstrip << 2 |
                             p->single_word << 1 | p->normalized,
                         q->special << 4 | q->lstrip << 3 | q->rstrip << 2 |
                             q->single_word << 1 | q->normalized);
    }
    const tok_merges_t *ma = &a->bpe.merges, *mb = &b->bpe.merges;
    assert_int_equal(ma->count, mb->count);
    for (size_t i = 0; ma->slots && i < ma->size; i++) {
        uint64_t k = ma->slots[i].key;
        uint32_t rank, merged;
        if (k == UINT64_MAX)
            continue;
        assert_int_equal(tok_bpe_merge_get(mb, (uint32_t)(k >> 32), (uint32_t)k,
                                           &rank, &merged), 1);
        assert_int_equal((uint64_t)rank << 32 | merged, ma->slots[i].val);
    }
}

/* model.vocab and model.merges read by the scanner give the tokenizer that
 * jansson's tree of the whole file gives, on generated files full of
 * escapes and on real vocabularies. */
static void the_scanner_reads_what_the_tree_reads(void **state)
{
    (void)state;
    char esc[] = "/tmp/tokbench-test-hf-escapes-XXXXXX";
    char uni[] = "/tmp/tokbench-test-hf-unigram-XXXXXX";
    dump_fixture(escapes_fixture(), esc);
    dump_fixture(unigram_fixture(), uni);
    const char *paths[] = {esc, uni, "tests/fixtures/hf_tiny.json",
                           "data/cache/mistral/tokenizer.json",
                           "data/cache/llama3/tokenizer.json"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        char tree[] = "/tmp/tokbench-test-hf-tree-XXXXXX";
        test_need_file(paths[i]);
        tree_only_copy(paths[i], tree);
        tok_tokenizer_t *a = test_load(paths[i]), *b = test_load(tree);
        same_tokenizer(a, b);
        if (i == 0) { /* the escapes decoded: '"' + '\' is a token */
            assert_int_equal(find(a, "\"\\"), 2);
            assert_int_equal(a->bpe.merges.count, 4);
        }
        tok_free(a);
        tok_free(b);
        unlink(tree);
    }
    unlink(esc);
    unlink(uni);
}

/* ---- normalizers --------------------------------------------------------------- */

static tok_norm_t *add_norm(tok_tokenizer_t *t, tok_norm_kind_t kind,
                            const char *a, const char *b, uint32_t flags)
{
    tok_norm_t n = {.kind = kind, .flags = flags};
    assert_int_equal(tb_vec_push(&t->norms, n), 0);
    tok_norm_t *p = &t->norms.data[t->norms.len - 1];
    if (a)
        tb_buf_put(&p->a, a, strlen(a));
    if (b)
        tb_buf_put(&p->b, b, strlen(b));
    return p;
}

static void check_norm(tok_tokenizer_t *t, const char *in, const char *want)
{
    tb_buf_t out = {0};
    tb_err_t err;
    if (tok_normalize(t, (const uint8_t *)in, strlen(in), &out, &err))
        fail_msg("normalizing \"%s\": %s", in, err.msg);
    if (out.len != strlen(want) || (out.len && memcmp(out.data, want, out.len)))
        fail_msg("normalizing \"%s\": got \"%.*s\", want \"%s\"", in,
                 (int)out.len, out.data, want);
    tb_buf_free(&out);
}

static void normalizer_steps(void **state)
{
    (void)state;
    tok_tokenizer_t *t = tok_new(TOK_FORMAT_HF_JSON);
    /* The SentencePiece-style pair (Llama 2, Mistral): Prepend leaves empty text empty */
    add_norm(t, TOK_NORM_PREPEND, "\xE2\x96\x81", NULL, 0);
    add_norm(t, TOK_NORM_REPLACE, " ", "\xE2\x96\x81", 0);
    check_norm(t, "", "");
    check_norm(t, "a b", "\xE2\x96\x81" "a" "\xE2\x96\x81" "b");
    check_norm(t, " ", "\xE2\x96\x81\xE2\x96\x81");
    tok_free(t);

    t = tok_new(TOK_FORMAT_HF_JSON);
    add_norm(t, TOK_NORM_STRIP, NULL, NULL, 3);
    check_norm(t, "\xE3\x80\x80 a b\xC2\xA0\t", "a b"); /* U+3000, U+00A0 */
    check_norm(t, "   ", "");
    t->norms.data[0].flags = 2;
    check_norm(t, "  a  ", "  a");
    tok_free(t);

    t = tok_new(TOK_FORMAT_HF_JSON);
    add_norm(t, TOK_NORM_LOWERCASE, NULL, NULL, 0);
    /* U+0130 lowercases to "i" + U+0307, as Rust's to_lowercase does */
    check_norm(t, "\xC3\x80" "B \xC4\xB0 \xCE\xA3", "\xC3\xA0" "b i\xCC\x87 \xCF\x83");
    tok_free(t);

    t = tok_new(TOK_FORMAT_HF_JSON);
    add_norm(t, TOK_NORM_NFKC, NULL, NULL, 0);
    check_norm(t, "\xEF\xAC\x81\xE2\x91\xA0", "fi1"); /* U+FB01, U+2460 */
    t->norms.data[0].kind = TOK_NORM_NFC;
    check_norm(t, "e\xCC\x81", "\xC3\xA9");
    t->norms.data[0].kind = TOK_NORM_NFD;
    check_norm(t, "\xC3\xA9", "e\xCC\x81");
    tb_buf_t out = {0};
    tb_err_t err;
    assert_int_equal(tok_normalize(t, (const uint8_t *)"\xC3\xA9\xFF", 3, &out, &err), -1);
    assert_non_null(strstr(err.msg, "byte 2"));
    tb_buf_free(&out);
    tok_free(t);

    t = tok_new(TOK_FORMAT_HF_JSON);
    add_norm(t, TOK_NORM_REPLACE, " {2,}", " ", 1);
    check_norm(t, "a   b c  d", "a b c d");
    tok_free(t);
    /* after a Strip that leaves nothing, the regex Replace gets no text at
     * all (found by fuzz_tok: NULL + 0 under clang's UBSan) */
    t = tok_new(TOK_FORMAT_HF_JSON);
    add_norm(t, TOK_NORM_STRIP, NULL, NULL, 3);
    add_norm(t, TOK_NORM_REPLACE, " {2,}", " ", 1);
    check_norm(t, "   ", "");
    tok_free(t);
}

/* ---- corrupt files ---------------------------------------------------------------- */

static void expect_load_error(const char *fixture, const char *what)
{
    char path[256];
    snprintf(path, sizeof path, "tests/fixtures/%s", fixture);
    test_need_file(path);
    tb_err_t err;
    tok_tokenizer_t *t = tok_load(path, &err);
    if (t) {
        tok_free(t);
        fail_msg("%s loaded, but it should fail with \"%s\"", path, what);
    }
    if (!strstr(err.msg, path) || !strstr(err.msg, what))
        fail_msg("%s: message \"%s\" should name the file and \"%s\"", path,
                 err.msg, what);
}

static void corrupt_files_are_refused_with_their_place(void **state)
{
    (void)state;
    tb_err_t err;
    tok_tokenizer_t *t = tok_load("tests/fixtures/hf_tiny.json", &err);
    if (!t)
        fail_msg("the valid fixture does not load: %s", err.msg);
    assert_int_equal(tok_vocab(t)->size, 6);
    assert_int_equal(t->bpe.merges.count, 2);
    assert_int_equal(tok_vocab(t)->kind[5], TOK_CONTROL);
    tok_free(t);
    expect_load_error("hf_truncated.json", "line ");
    expect_load_error("hf_truncated.json", "column ");
    expect_load_error("hf_vocab_string_id.json", "model.vocab[\"b\"]: expected an integer");
    expect_load_error("hf_id_too_large.json", "id 99999999 is outside");
    expect_load_error("hf_dup_id.json", "id 1 is given to both");
    expect_load_error("hf_merge_unknown.json", "model.merges[1]: token \"x\"");
    /* " " is two empty parts, whose joined key has no byte in the
     * scanner's scratch (a fuzz_tok finding under UBSan) */
    expect_load_error("hf_merge_empty.json", "model.merges[0]: token \"\"");
    /* merges are scanned without a UTF-8 check of their own: one that is
     * not UTF-8 is still refused where the text is, as jansson reads it */
    expect_load_error("hf_merge_bad_utf8.json", "line 30, column");
    expect_load_error("hf_model_array.json", "model: expected an object");
    expect_load_error("hf_added_bad.json", "added_tokens[0].special: expected a boolean");
    expect_load_error("hf_bad_regex.json", "normalizer.pattern.Regex");
    expect_load_error("hf_vocab_not_object.json", "model.vocab: expected an object");
    expect_load_error("hf_unknown_pretok.json",
                      "pre_tokenizer.pretokenizers[1].type: pre-tokenizer \"Punctuation\"");
    expect_load_error("hf_added_no_id.json", "added_tokens[0].id: expected an integer id, got nothing");
    expect_load_error("hf_bad_charsmap.json", "normalizer.precompiled_charsmap: charsmap");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(corrupt_files_are_refused_with_their_place),
        cmocka_unit_test(the_scanner_reads_what_the_tree_reads),
        cmocka_unit_test(normalizer_steps),
        long_unit_test(loads_every_vocabulary_as_the_json_says),
        cmocka_unit_test(byte_level_vocabularies_hold_raw_bytes),
        cmocka_unit_test(sentencepiece_style_vocabularies),
        cmocka_unit_test(added_tokens_are_matched_in_the_text),
        cmocka_unit_test(invalid_utf8_is_refused_with_its_offset),
        cmocka_unit_test(decode_inverts_encode),
        cmocka_unit_test(added_token_flags_match_the_reference),
        cmocka_unit_test(unigram_matches_the_reference),
        cmocka_unit_test(bert_matches_the_reference),
        cmocka_unit_test(wordpiece_fixture_matches_the_reference),
        cmocka_unit_test(bert_normalizer_reorders_kept_marks),
        cmocka_unit_test(wordpiece_errors),
        cmocka_unit_test(wordlevel_and_no_decoder_match_the_reference),
        long_unit_test(bert_every_code_point),
        cmocka_unit_test(ids_match_the_reference),
        cmocka_unit_test(decode_matches_the_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
