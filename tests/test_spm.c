/* Tests of the SentencePiece side of tok/: the .model loader, the charsmap
 * reader and normalizer, Unigram and BPE encoding.  Conformance is checked
 * against Debian's sentencepiece programs run from here (spm_encode,
 * spm_normalize, spm_export_vocab) on samples of the corpora; corrupt
 * models and charsmaps are made here from the real files. */
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
#include "../tok/charsmap.h"
#include "../tok/tok_internal.h"
#include "../trie/trie.h"

#define UNIGRAM "data/cache/spm-unigram/spm-unigram.model"
#define BPE "data/cache/spm-bpe/spm-bpe.model"

/* ---- helpers ---------------------------------------------------------- */

static void need_program(const char *prog)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", prog);
    if (system(cmd) != 0)
        fail_msg("%s is missing (package sentencepiece): run `make setup`", prog);
}

typedef struct {
    uint8_t *data; /* the whole file */
    TB_VEC(tok_span_t) lines;
} lines_t;

/* Lines of a corpus: the first `head`, then every `step`-th one, so that a
 * sample reaches every language of the multilingual corpus. */
static void read_lines(const char *path, size_t head, size_t step, lines_t *l)
{
    test_need_file(path);
    size_t len;
    tb_err_t err;
    memset(l, 0, sizeof *l);
    if (tb_read_file(path, &l->data, &len, &err))
        fail_msg("%s", err.msg);
    size_t start = 0, no = 0;
    for (size_t i = 0; i < len; i++) {
        if (l->data[i] != '\n')
            continue;
        if (no < head || no % step == 0) {
            tok_span_t s = {(uint32_t)start, (uint32_t)(i - start)};
            assert_int_equal(tb_vec_push(&l->lines, s), 0);
        }
        no++;
        start = i + 1;
    }
}

static void add_line(lines_t *l, tb_buf_t *extra, const char *s)
{
    /* extra lines live in a buffer of their own, marked by offsets past
     * the file: keep it simple by storing them as separate spans into
     * `extra` and tagging with the high bit */
    tok_span_t sp = {(uint32_t)extra->len | 0x80000000u, (uint32_t)strlen(s)};
    assert_int_equal(tb_buf_put(extra, s, strlen(s)), 0);
    assert_int_equal(tb_vec_push(&l->lines, sp), 0);
}

static const uint8_t *line_at(const lines_t *l, const tb_buf_t *extra, size_t i)
{
    tok_span_t s = l->lines.data[i];
    return s.off & 0x80000000u ? extra->data + (s.off & 0x7FFFFFFFu) : l->data + s.off;
}

/* Runs `cmd < lines` and returns its output lines (malloc'd, n of them). */
static char **run_reference(const char *cmd, const lines_t *l,
                            const tb_buf_t *extra)
{
    char tmp[] = "/tmp/test_spm_XXXXXX";
    int fd = mkstemp(tmp);
    assert_true(fd >= 0);
    FILE *in = fdopen(fd, "wb");
    for (size_t i = 0; i < l->lines.len; i++) {
        fwrite(line_at(l, extra, i), 1, l->lines.data[i].len, in);
        fputc('\n', in);
    }
    fclose(in);
    char full[1024];
    snprintf(full, sizeof full, "%s < %s", cmd, tmp);
    FILE *p = popen(full, "r");
    assert_non_null(p);
    char **out = calloc(l->lines.len + 1, sizeof *out);
    size_t n = 0, cap = 0;
    char *line = NULL;
    ssize_t got;
    while ((got = getline(&line, &cap, p)) >= 0) {
        if (n >= l->lines.len)
            fail_msg("`%s` printed more lines than it was given", cmd);
        if (got && line[got - 1] == '\n')
            line[--got] = 0;
        out[n++] = strdup(line);
    }
    free(line);
    int rc = pclose(p);
    unlink(tmp);
    if (rc != 0 || n != l->lines.len)
        fail_msg("`%s` failed (status %d) or printed %zu of %zu lines", cmd, rc,
                 n, l->lines.len);
    return out;
}

static void free_lines(char **out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(out[i]);
    free(out);
}

/* Encodes every line with t and compares with the reference's ids; returns
 * the number of lines that differ (printing the first few). */
static size_t compare_ids(tok_tokenizer_t *t, const char *name, char **ref,
                          const lines_t *l, const tb_buf_t *extra)
{
    tok_ids_t ids = {0};
    tb_buf_t text = {0};
    size_t bad = 0;
    for (size_t i = 0; i < l->lines.len; i++) {
        tb_err_t err;
        ids.len = 0;
        text.len = 0;
        if (tok_encode(t, line_at(l, extra, i), l->lines.data[i].len, &ids, &err))
            fail_msg("%s: line %zu: %s", name, i, err.msg);
        for (size_t k = 0; k < ids.len; k++) {
            char num[16];
            int w = snprintf(num, sizeof num, k ? " %u" : "%u", ids.data[k]);
            tb_buf_put(&text, num, (size_t)w);
        }
        tb_buf_putc(&text, 0);
        if (strcmp((char *)text.data, ref[i])) {
            if (bad++ < 3)
                fprintf(stderr, "%s: sample line %zu differs:\n  text: %.*s\n"
                                "  ours: %.300s\n  spm:  %.300s\n",
                        name, i, (int)(l->lines.data[i].len < 200 ? l->lines.data[i].len : 200),
                        line_at(l, extra, i), text.data, ref[i]);
        }
    }
    fprintf(stderr, "%s: %zu of %zu lines identical to spm_encode\n", name,
            l->lines.len - bad, l->lines.len);
    free(ids.data);
    tb_buf_free(&text);
    return bad;
}

static char **spm_encode_ids(const char *model, const lines_t *l,
                             const tb_buf_t *extra)
{
    need_program("spm_encode");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "spm_encode --model=%s --output_format=id", model);
    return run_reference(cmd, l, extra);
}

static size_t conform(const char *model, const lines_t *l, const tb_buf_t *extra)
{
    char **ref = spm_encode_ids(model, l, extra);
    tok_tokenizer_t *t = test_load(model);
    size_t bad = compare_ids(t, model, ref, l, extra);
    free_lines(ref, l->lines.len);
    tok_free(t);
    return bad;
}

static void free_sample(lines_t *l, tb_buf_t *extra)
{
    free(l->data);
    free(l->lines.data);
    tb_buf_free(extra);
}

/* ---- conformance ------------------------------------------------------ */

static void conform_corpus(const char *model, const char *corpus, size_t head,
                           size_t step, int user_lines)
{
    lines_t l;
    tb_buf_t extra = {0};
    read_lines(corpus, head, step, &l);
    if (user_lines) { /* user-defined pieces inside text */
        add_line(&l, &extra, "a <sep> b<cls>c");
        add_line(&l, &extra, "<sep>");
        add_line(&l, &extra, "  <cls><sep>  x  ");
        add_line(&l, &extra, "Größe<sep>½");
    }
    size_t bad = conform(model, &l, &extra);
    if (bad)
        fail_msg("%s on %s: %zu of %zu lines differ from spm_encode", model,
                 corpus, bad, l.lines.len);
    free_sample(&l, &extra);
}

static void unigram_multi(void **s) { (void)s; conform_corpus(UNIGRAM, "data/cache/multi/multi.txt", 300, 250, 1); }
static void unigram_unicode(void **s) { (void)s; conform_corpus(UNIGRAM, "data/cache/unicode/unicode.txt", 300, 100, 0); }
static void unigram_stress(void **s) { (void)s; conform_corpus(UNIGRAM, "data/cache/stress/stress.txt", 1000000, 1, 0); }
static void unigram_invalid(void **s) { (void)s; conform_corpus(UNIGRAM, "data/cache/invalid/invalid.txt", 1000000, 1, 0); }
static void bpe_multi(void **s) { (void)s; conform_corpus(BPE, "data/cache/multi/multi.txt", 300, 250, 1); }
static void bpe_unicode(void **s) { (void)s; conform_corpus(BPE, "data/cache/unicode/unicode.txt", 300, 100, 0); }
static void bpe_stress(void **s) { (void)s; conform_corpus(BPE, "data/cache/stress/stress.txt", 1000000, 1, 0); }
static void bpe_invalid(void **s) { (void)s; conform_corpus(BPE, "data/cache/invalid/invalid.txt", 1000000, 1, 0); }

/* The normalizer alone against spm_normalize with the model's own spec. */
static void normalizer_matches_spm_normalize(void **state)
{
    (void)state;
    need_program("spm_normalize");
    const char *corpora[] = {"data/cache/multi/multi.txt", "data/cache/unicode/unicode.txt",
                             "data/cache/stress/stress.txt", "data/cache/invalid/invalid.txt"};
    tok_tokenizer_t *t = test_load(UNIGRAM);
    assert_int_equal(t->norms.len, 1);
    const tok_norm_t *nm = &t->norms.data[0];
    assert_int_equal(nm->kind, TOK_NORM_SPM);
    for (size_t c = 0; c < 4; c++) {
        lines_t l;
        tb_buf_t extra = {0}, out = {0};
        read_lines(corpora[c], 200, 97, &l);
        add_line(&l, &extra, "x <sep>  <cls> y");
        char **ref = run_reference("spm_normalize --use_internal_normalization "
                                   "--model=" UNIGRAM, &l, &extra);
        size_t bad = 0;
        for (size_t i = 0; i < l.lines.len; i++) {
            tb_err_t err;
            out.len = 0;
            assert_int_equal(tok_spm_normalize(nm, line_at(&l, &extra, i),
                                               l.lines.data[i].len, &out, &err), 0);
            if (out.len != strlen(ref[i]) || memcmp(out.data, ref[i], out.len))
                if (bad++ < 3)
                    fprintf(stderr, "normalize %s line %zu:\n  ours: %.*s\n  spm:  %s\n",
                            corpora[c], i, (int)out.len, out.data, ref[i]);
        }
        if (bad)
            fail_msg("%s: %zu of %zu lines normalize differently", corpora[c], bad,
                     l.lines.len);
        free_lines(ref, l.lines.len);
        tb_buf_free(&out);
        free_sample(&l, &extra);
    }
    tok_free(t);
}

/* Every trie layout plugged into the Unigram prefix search gives the ids
 * spm_encode gives (tok_internal.h's tok_prefix_fn contract). */
static size_t trie_prefix(const void *index, const uint8_t *s, size_t n,
                          tok_prefix_hit_t *out, size_t max)
{
    trie_match_t m[64];
    size_t got = trie_prefixes(index, s, n, m, max < 64 ? max : 64);
    got = got < max ? got : max;
    got = got < 64 ? got : 64;
    for (size_t i = 0; i < got; i++)
        out[i] = (tok_prefix_hit_t){(int32_t)m[i].id, m[i].len};
    return got;
}

static void unigram_on_trie_layouts(void **state)
{
    (void)state;
    tok_tokenizer_t *t = test_load(UNIGRAM);
    const tok_vocab_t *v = &t->vocab;
    const uint8_t **strs = calloc(v->size, sizeof *strs);
    uint32_t *lens = calloc(v->size, sizeof *lens), *ids = calloc(v->size, sizeof *ids);
    size_t nk = 0;
    for (uint32_t id = 0; id < v->size; id++) {
        if (!tok_unigram_indexed(v, id))
            continue;
        size_t len;
        strs[nk] = tok_vocab_token(v, id, &len);
        lens[nk] = (uint32_t)len;
        ids[nk++] = id;
    }
    trie_keys_t keys;
    tb_err_t err;
    if (trie_keys_from_list(&keys, strs, lens, ids, nk, &err))
        fail_msg("trie keys: %s", err.msg);
    lines_t l;
    tb_buf_t extra = {0};
    read_lines("data/cache/multi/multi.txt", 100, 500, &l);
    add_line(&l, &extra, "a <sep> b<cls>c");
    char **ref = spm_encode_ids(UNIGRAM, &l, &extra);
    tok_prefix_fn own = t->unigram.prefix;
    const void *own_index = t->unigram.prefix_index;
    size_t layouts = 0;
    for (size_t i = 0; trie_layouts[i]; i++, layouts++) {
        trie_t *tr = trie_build(trie_layouts[i], &keys, &err);
        if (!tr)
            fail_msg("layout %s: %s", trie_layouts[i]->name, err.msg);
        t->unigram.prefix = trie_prefix;
        t->unigram.prefix_index = tr;
        char name[64];
        snprintf(name, sizeof name, "unigram on trie %s", trie_layouts[i]->name);
        size_t bad = compare_ids(t, name, ref, &l, &extra);
        t->unigram.prefix = own;
        t->unigram.prefix_index = own_index;
        trie_free(tr);
        if (bad)
            fail_msg("%s: %zu of %zu lines differ from spm_encode", name, bad, l.lines.len);
    }
    assert_true(layouts >= 1);
    free_lines(ref, l.lines.len);
    free_sample(&l, &extra);
    trie_keys_free(&keys);
    free(strs);
    free(lens);
    free(ids);
    tok_free(t);
}

/* Models with the other normalizer settings and no byte fallback, trained
 * here on a slice of the multi corpus (spm_train takes a second or two):
 * identity normalization (no charsmap), no dummy prefix, extra whitespace
 * kept, runs of unknown characters as one unk. */
static void other_settings(void **state)
{
    (void)state;
    need_program("spm_train");
    test_need_file("data/cache/multi/multi.txt");
    char dir[] = "/tmp/test_spm_train_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "awk 'NR %% 50 == 0' data/cache/multi/multi.txt > %s/train.txt && cd %s && "
             "spm_train --input=train.txt --model_prefix=u --model_type=unigram "
             "--vocab_size=600 --normalization_rule_name=identity "
             "--add_dummy_prefix=false --remove_extra_whitespaces=false "
             "--character_coverage=0.98 --num_threads=1 --minloglevel=2 >log 2>&1 && "
             "spm_train --input=train.txt --model_prefix=b --model_type=bpe "
             "--vocab_size=600 --remove_extra_whitespaces=false "
             "--character_coverage=0.98 --num_threads=1 --minloglevel=2 >>log 2>&1",
             dir, dir);
    if (system(cmd) != 0)
        fail_msg("spm_train failed: see %s/log", dir);
    const char *corpora[] = {"data/cache/multi/multi.txt", "data/cache/unicode/unicode.txt",
                             "data/cache/stress/stress.txt", "data/cache/invalid/invalid.txt"};
    const char *models[] = {"u.model", "b.model"};
    for (int m = 0; m < 2; m++) {
        char model[128];
        snprintf(model, sizeof model, "%s/%s", dir, models[m]);
        tok_tokenizer_t *t = test_load(model);
        assert_int_equal(t->decode_flags & TOK_DEC_STRIP_LEADING_SPACE, m ? TOK_DEC_STRIP_LEADING_SPACE : 0);
        assert_int_equal(t->norms.data[0].blob.len == 0, m == 0); /* identity: no charsmap */
        tok_free(t);
        for (int c = 0; c < 4; c++) {
            lines_t l;
            tb_buf_t extra = {0};
            read_lines(corpora[c], 200, 200, &l);
            add_line(&l, &extra, "  two  spaces\tand tab  ");
            size_t bad = conform(model, &l, &extra);
            if (bad)
                fail_msg("%s on %s: %zu of %zu lines differ from spm_encode", model,
                         corpora[c], bad, l.lines.len);
            free_sample(&l, &extra);
        }
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- Hugging Face's Precompiled normalizer ---------------------------- */

static char *base64(const uint8_t *p, size_t n)
{
    static const char a[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *o = malloc(4 * ((n + 2) / 3) + 1), *q = o;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        *q++ = a[v >> 18];
        *q++ = a[v >> 12 & 63];
        *q++ = i + 1 < n ? a[v >> 6 & 63] : '=';
        *q++ = i + 2 < n ? a[v & 63] : '=';
    }
    *q = 0;
    return o;
}

/* A tokenizer.json whose model turns every character into its UTF-8 byte
 * pieces (a Unigram with byte fallback and no other piece), so that the
 * reference's ids minus one are the bytes its Precompiled normalizer
 * produced from our charsmap. */
static void write_precompiled_json(const tb_buf_t *blob, const char *path)
{
    json_t *vocab = json_array();
    json_array_append_new(vocab, json_pack("[s, f]", "<unk>", 0.0));
    for (int b = 0; b < 256; b++) {
        char piece[8];
        snprintf(piece, sizeof piece, "<0x%02X>", b);
        json_array_append_new(vocab, json_pack("[s, f]", piece, 0.0));
    }
    char *b64 = base64(blob->data, blob->len);
    json_t *j = json_pack("{s:s, s:[], s:{s:s, s:s}, s:n, s:n, s:n, s:{s:s, s:i, s:o, s:b}}",
                          "version", "1.0", "added_tokens", "normalizer", "type",
                          "Precompiled", "precompiled_charsmap", b64, "pre_tokenizer",
                          "post_processor", "decoder", "model", "type", "Unigram",
                          "unk_id", 0, "vocab", vocab, "byte_fallback", 1);
    assert_non_null(j);
    assert_int_equal(json_dump_file(j, path, 0), 0);
    json_decref(j);
    free(b64);
}

static void precompiled_matches_hf(void **state)
{
    (void)state;
    test_need_file("scripts/ref/node_modules/@anush008/tokenizers/package.json");
    need_program("node");
    tok_tokenizer_t *t = test_load(UNIGRAM);
    tok_norm_t nm = {.kind = TOK_NORM_CHARSMAP, .blob = t->norms.data[0].blob};
    char json[] = "/tmp/test_spm_pc_XXXXXX";
    int fd = mkstemp(json);
    assert_true(fd >= 0);
    close(fd);
    write_precompiled_json(&nm.blob, json);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "node scripts/ref/ref.js hf %s", json);
    const char *corpora[] = {"data/cache/multi/multi.txt", "data/cache/unicode/unicode.txt",
                             "data/cache/stress/stress.txt"};
    for (size_t c = 0; c < 3; c++) {
        lines_t l;
        tb_buf_t extra = {0}, out = {0}, want = {0};
        read_lines(corpora[c], 200, 97, &l);
        char **ref = run_reference(cmd, &l, &extra);
        size_t bad = 0;
        for (size_t i = 0; i < l.lines.len; i++) {
            tb_err_t err;
            out.len = want.len = 0;
            assert_int_equal(tok_spm_normalize(&nm, line_at(&l, &extra, i),
                                               l.lines.data[i].len, &out, &err), 0);
            for (char *p = ref[i], *e; *p; p = e) {
                long id = strtol(p, &e, 10);
                assert_true(e != p && id >= 1 && id <= 256);
                tb_buf_putc(&want, (uint8_t)(id - 1));
            }
            if (out.len != want.len || memcmp(out.data, want.data, out.len))
                if (bad++ < 3)
                    fprintf(stderr, "precompiled %s line %zu:\n  ours: %.*s\n  hf:   %.*s\n",
                            corpora[c], i, (int)out.len, out.data, (int)want.len, want.data);
        }
        fprintf(stderr, "precompiled on %s: %zu of %zu lines as Hugging Face's\n",
                corpora[c], l.lines.len - bad, l.lines.len);
        if (bad)
            fail_msg("%s: %zu of %zu lines normalize differently from Hugging Face's "
                     "Precompiled", corpora[c], bad, l.lines.len);
        free_lines(ref, l.lines.len);
        tb_buf_free(&out);
        tb_buf_free(&want);
        free_sample(&l, &extra);
    }
    unlink(json);
    tok_free(t);
}

/* ---- the loader ------------------------------------------------------- */

/* Every piece and score as spm_export_vocab lists them, with the byte and
 * U+2581 conventions decoded as tok/vocab.h promises. */
static void vocab_matches_export(const char *model)
{
    need_program("spm_export_vocab");
    tok_tokenizer_t *t = test_load(model);
    const tok_vocab_t *v = &t->vocab;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "spm_export_vocab --model=%s", model);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    uint32_t id = 0;
    while ((got = getline(&line, &cap, p)) > 0) {
        char *tab = strrchr(line, '\t');
        assert_non_null(tab);
        *tab = 0;
        float score = strtof(tab + 1, NULL);
        assert_true(id < v->size);
        uint8_t want[256];
        size_t wn = 0;
        unsigned byte;
        if (v->kind[id] == TOK_BYTE) {
            assert_int_equal(sscanf(line, "<0x%2X>", &byte), 1);
            want[wn++] = (uint8_t)byte;
        } else {
            for (const char *s = line; *s; s++) {
                if (!strncmp(s, "\xE2\x96\x81", 3)) {
                    want[wn++] = ' ';
                    s += 2;
                } else {
                    want[wn++] = (uint8_t)*s;
                }
            }
        }
        size_t len;
        const uint8_t *tok = tok_vocab_token(v, id, &len);
        if (len != wn || memcmp(tok, want, wn))
            fail_msg("%s: id %u: piece '%s' loaded as %zu other bytes", model, id, line, len);
        assert_true(score - v->score[id] < 1e-3f && v->score[id] - score < 1e-3f);
        id++;
    }
    free(line);
    assert_int_equal(pclose(p), 0);
    assert_int_equal(id, v->size);
    assert_int_equal(v->size, 8000);
    assert_int_equal(v->unk, 0);
    assert_int_equal(v->bos, 1);
    assert_int_equal(v->eos, 2);
    assert_int_equal(v->pad, -1);
    assert_int_equal(v->kind[3], TOK_USER); /* <sep>, from train-spm.sh */
    for (int b = 0; b < 256; b++)
        assert_int_equal(v->kind[t->unigram.byte_piece[b]], TOK_BYTE);
    assert_int_equal(t->decode_flags & TOK_DEC_STRIP_LEADING_SPACE,
                     TOK_DEC_STRIP_LEADING_SPACE);
    assert_true(t->meta_to_space);
    tok_free(t);
}

static void unigram_vocab(void **s)
{
    (void)s;
    vocab_matches_export(UNIGRAM);
    tok_tokenizer_t *t = test_load(UNIGRAM);
    assert_string_equal(tok_model_name(t), "unigram+byte-fallback");
    tok_free(t);
}

static void bpe_vocab(void **s)
{
    (void)s;
    vocab_matches_export(BPE);
    tok_tokenizer_t *t = test_load(BPE);
    assert_string_equal(tok_model_name(t), "bpe+byte-fallback");
    tok_free(t);
}

/* Loads data[0..len) as a model and returns the error text ("" if it
 * loaded). */
static const char *try_load(const uint8_t *data, size_t len, tb_err_t *err)
{
    tok_tokenizer_t *t = tok_new(TOK_FORMAT_SPM_MODEL);
    int rc = tok_load_spm_model(t, "corrupt.model", data, len, err);
    tok_free(t);
    if (rc == 0)
        err->msg[0] = 0;
    return err->msg;
}

static void expect_error(const uint8_t *data, size_t len, const char *want)
{
    tb_err_t err;
    const char *msg = try_load(data, len, &err);
    if (!strstr(msg, want) || !strstr(msg, "corrupt.model"))
        fail_msg("expected an error containing '%s', got '%s'", want, msg);
}

static void corrupt_models(void **state)
{
    (void)state;
    test_need_file(UNIGRAM);
    uint8_t *d;
    size_t n;
    tb_err_t err;
    assert_int_equal(tb_read_file(UNIGRAM, &d, &n, &err), 0);
    /* The file opens with piece 0: 0A len 0A 05 "<unk>" 15 score 18 02. */
    assert_int_equal(d[0], 0x0A);
    assert_int_equal(d[2], 0x0A);
    assert_int_equal(d[3], 5);
    uint8_t *c = malloc(n);

    /* truncated inside the first piece */
    expect_error(d, 6, "length");
    expect_error(d, 6, "runs past the end");
    /* truncated in the middle of the big charsmap */
    expect_error(d, n - 1000, "runs past the end");
    /* a truncated varint: the first tag's length byte cut off */
    expect_error(d, 1, "truncated varint");

    /* a flipped length: the piece string claims 0x70 bytes */
    memcpy(c, d, n);
    c[3] = 0x70;
    expect_error(c, n, "length 112 of SentencePiece.piece runs past the end");
    expect_error(c, n, "byte 3");

    /* a bad wire type: pieces (field 1) as a fixed32 */
    memcpy(c, d, n);
    c[0] = 0x0D;
    expect_error(c, n, "ModelProto.pieces has wire type 5, expected 2");
    /* ... the piece string as a group (wire type 3) */
    memcpy(c, d, n);
    c[2] = 0x0B;
    expect_error(c, n, "SentencePiece.piece has wire type 3, expected 2");
    /* ... and a group in a field the loader skips */
    memcpy(c, d, n);
    c[2] = 0x23; /* field 4, wire type 3 */
    expect_error(c, n, "SentencePiece field 4 has unsupported wire type 3");

    /* a varint longer than 10 bytes */
    static const uint8_t longv[] = {0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                    0xFF, 0xFF, 0xFF, 0xFF, 0x01};
    expect_error(longv, sizeof longv, "longer than 10 bytes");
    /* one empty piece, "\n\0": a vocabulary with no token bytes at all,
     * whose pool is NULL (clang UBSan, found by fuzz_tok) */
    expect_error((const uint8_t *)"\n", 2, "TrainerSpec.unk_id does not name an unknown piece");

    /* random byte flips: a message or a model, never a crash */
    uint32_t x = 12345;
    for (int i = 0; i < 40; i++) {
        memcpy(c, d, n);
        for (int k = 0; k < 4; k++) {
            x = x * 1103515245u + 12345u;
            c[(x >> 8) % 4096] ^= (uint8_t)(x >> 24 | 1);
        }
        try_load(c, n, &err);
    }
    free(c);
    free(d);
}

/* A small model written here: pieces given as (string, type). */
static size_t put_piece(uint8_t *o, const char *s, int type)
{
    size_t k = strlen(s), n = 0;
    o[n++] = 0x0A;
    o[n++] = (uint8_t)(2 + k + 5 + 2);
    o[n++] = 0x0A;
    o[n++] = (uint8_t)k;
    memcpy(o + n, s, k);
    n += k;
    o[n++] = 0x15;
    memset(o + n, 0, 4);
    n += 4;
    o[n++] = 0x18;
    o[n++] = (uint8_t)type;
    return n;
}

static void small_models(void **state)
{
    (void)state;
    uint8_t m[256];
    size_t n = put_piece(m, "<unk>", 2);
    n += put_piece(m + n, "<0x41>", 6);
    n += put_piece(m + n, "\xE2\x96\x81" "a", 1);
    n += put_piece(m + n, "<u>", 4);
    tb_err_t err;
    tok_tokenizer_t *t = tok_new(TOK_FORMAT_SPM_MODEL);
    assert_int_equal(tok_load_spm_model(t, "small.model", m, n, &err), 0);
    assert_int_equal(tok_prepare(t, &err), 0);
    size_t len;
    assert_memory_equal(tok_vocab_token(&t->vocab, 1, &len), "A", 1);
    assert_int_equal(t->vocab.kind[1], TOK_BYTE);
    assert_memory_equal(tok_vocab_token(&t->vocab, 2, &len), " a", 2);
    assert_string_equal(tok_model_name(t), "unigram");
    tok_ids_t ids = {0};
    /* Normalized "\u2581a\u2581bb": the piece "\u2581a", then the marker,
     * b and b are unknown characters (no byte fallback), and a run of
     * unknowns is one unk. */
    assert_int_equal(tok_encode(t, (const uint8_t *)"a bb", 4, &ids, &err), 0);
    assert_int_equal(ids.len, 2);
    assert_int_equal(ids.data[0], 2);
    assert_int_equal(ids.data[1], 0);
    ids.len = 0;
    assert_int_equal(tok_encode(t, (const uint8_t *)"a b a", 5, &ids, &err), 0);
    assert_int_equal(ids.len, 3);
    assert_int_equal(ids.data[0], 2);
    assert_int_equal(ids.data[1], 0);
    assert_int_equal(ids.data[2], 2);
    /* a user-defined piece inside a word is kept whole */
    ids.len = 0;
    assert_int_equal(tok_encode(t, (const uint8_t *)"a<u>b", 5, &ids, &err), 0);
    assert_int_equal(ids.len, 3);
    assert_int_equal(ids.data[0], 2);
    assert_int_equal(ids.data[1], 3);
    assert_int_equal(ids.data[2], 0);
    free(ids.data);
    tok_free(t);

    /* a malformed byte piece */
    n = put_piece(m, "<unk>", 2);
    n += put_piece(m + n, "<0xZZ>", 6);
    expect_error(m, n, "byte piece '<0xZZ>' is not of the form <0xNN>");
    /* an unknown piece type */
    n = put_piece(m, "<unk>", 9);
    expect_error(m, n, "SentencePiece.type 9 is not a known piece type");
    /* model_type word */
    n = put_piece(m, "<unk>", 2);
    m[n++] = 0x12; m[n++] = 2; m[n++] = 0x18; m[n++] = 3;
    expect_error(m, n, "model_type 3 (word) is not supported");
    /* unk_id (TrainerSpec field 40) as a string */
    n = put_piece(m, "<unk>", 2);
    m[n++] = 0x12; m[n++] = 4; m[n++] = 0xC2; m[n++] = 0x02; m[n++] = 1; m[n++] = 'x';
    expect_error(m, n, "TrainerSpec.unk_id has wire type 2, expected 0");
    /* a 3-byte charsmap in the NormalizerSpec */
    n = put_piece(m, "<unk>", 2);
    m[n++] = 0x1A; m[n++] = 5; m[n++] = 0x12; m[n++] = 3; m[n++] = 'a'; m[n++] = 'b'; m[n++] = 'c';
    expect_error(m, n, "NormalizerSpec.precompiled_charsmap at byte");
    expect_error(m, n, "too short for the 4-byte size");
    /* no pieces at all */
    expect_error(m, 0, "no pieces");
}

/* ---- the charsmap ----------------------------------------------------- */

static const tb_buf_t *real_blob(tok_tokenizer_t *t)
{
    assert_int_equal(t->norms.len, 1);
    return &t->norms.data[0].blob;
}

static void expect_map(const tok_charsmap_t *cm, const char *from, const char *to)
{
    uint32_t value;
    size_t n = strlen(from);
    assert_int_equal(tok_charsmap_longest(cm, (const uint8_t *)from, n, &value), n);
    size_t len;
    const uint8_t *s = tok_charsmap_string(cm, value, &len);
    assert_int_equal(len, strlen(to));
    assert_memory_equal(s, to, len);
}

static void charsmap_real_blob(void **state)
{
    (void)state;
    tok_tokenizer_t *t = test_load(UNIGRAM);
    const tb_buf_t *b = real_blob(t);
    tok_charsmap_t cm;
    tb_err_t err;
    assert_int_equal(tok_charsmap_open(&cm, b->data, b->len, &err), 0);
    assert_true(cm.n_units > 1000);
    /* NFKC facts (Unicode's decomposition mappings) */
    expect_map(&cm, "\xEF\xBD\x86", "f");        /* U+FF46 fullwidth f */
    expect_map(&cm, "\xEF\xAC\x81", "fi");       /* U+FB01 ligature fi */
    expect_map(&cm, "\xE2\x84\xAB", "\xC3\x85"); /* U+212B Angstrom -> U+00C5 */
    uint32_t value;
    assert_int_equal(tok_charsmap_longest(&cm, (const uint8_t *)"a", 1, &value), 0);
    /* every replacement of every BMP character is valid UTF-8 */
    for (uint32_t cp = 1; cp < 0x10000; cp++) {
        uint8_t u[4];
        size_t k = tb_utf8_encode(cp, u);
        if (!k || !tok_charsmap_longest(&cm, u, k, &value))
            continue;
        size_t len;
        const uint8_t *s = tok_charsmap_string(&cm, value, &len);
        assert_int_equal(tb_utf8_validate(s, len), len);
    }
    tok_free(t);
}

static void charsmap_corrupt(void **state)
{
    (void)state;
    tok_tokenizer_t *t = test_load(UNIGRAM);
    const tb_buf_t *b = real_blob(t);
    uint8_t *c = malloc(b->len);
    uint32_t size = (uint32_t)b->data[0] | (uint32_t)b->data[1] << 8 |
                    (uint32_t)b->data[2] << 16 | (uint32_t)b->data[3] << 24;

    test_charsmap_refused(b->data, 3, "too short");
    /* size past the end */
    memcpy(c, b->data, b->len);
    c[3] = 0x7F;
    test_charsmap_refused(c, b->len, "runs past the end");
    /* size not a multiple of 4 */
    memcpy(c, b->data, b->len);
    c[0] ^= 1;
    test_charsmap_refused(c, b->len, "multiple of 4");
    /* pool cut before its last NUL: an unterminated string */
    test_charsmap_refused(b->data, b->len - 1, "unterminated");
    /* a leaf value pointing past the pool */
    memcpy(c, b->data, b->len);
    tok_charsmap_t cm;
    tb_err_t err;
    assert_int_equal(tok_charsmap_open(&cm, c, b->len, &err), 0);
    uint32_t leaf = 0;
    for (uint32_t i = 0; i < cm.n_units && !leaf; i++)
        if (tok_cm_unit(&cm, i) & TOK_CM_LEAF_BIT)
            leaf = i;
    assert_true(leaf > 0);
    c[4 + leaf * 4 + 2] = 0x7F; /* value bits 16-22 */
    test_charsmap_refused(c, b->len, "past the");
    test_charsmap_refused(c, b->len, "pool");

    /* the root's children offset pointed past the array (extension bit
     * and high offset bits set) */
    memcpy(c, b->data, b->len);
    c[5] |= 0x02;
    c[6] = 0xFF;
    test_charsmap_refused(c, b->len, "unit 0 (byte 4) has its children offset");
    test_charsmap_refused(c, b->len, "past the");

    /* garbage units: walks stay inside the blob whatever they hold */
    uint32_t x = 777;
    for (size_t i = 4; i < 4 + size; i++) {
        x = x * 1103515245u + 12345u;
        c[i] = (uint8_t)(x >> 24);
    }
    assert_int_equal(tok_charsmap_view(&cm, c, b->len, &err), 0);
    const char *texts[] = {"hello", "\xEF\xBD\x86\xEF\xAC\x81", "\xFF\xFE\x00\x01"};
    for (int k = 0; k < 3; k++) {
        uint32_t value;
        size_t got = tok_charsmap_longest(&cm, (const uint8_t *)texts[k], strlen(texts[k]), &value);
        if (got) {
            size_t len;
            tok_charsmap_string(&cm, value, &len);
        }
    }
    tok_norm_t nm = {.kind = TOK_NORM_SPM, .flags = 7};
    nm.blob.data = c;
    nm.blob.len = b->len;
    tb_buf_t out = {0};
    assert_int_equal(tok_spm_normalize(&nm, (const uint8_t *)"a  b\xff", 5, &out, &err), 0);
    tb_buf_free(&out);
    free(c);
    tok_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unigram_vocab),
        cmocka_unit_test(bpe_vocab),
        cmocka_unit_test(corrupt_models),
        cmocka_unit_test(small_models),
        cmocka_unit_test(charsmap_real_blob),
        cmocka_unit_test(charsmap_corrupt),
        cmocka_unit_test(normalizer_matches_spm_normalize),
        cmocka_unit_test(precompiled_matches_hf),
        cmocka_unit_test(unigram_multi),
        cmocka_unit_test(unigram_unicode),
        cmocka_unit_test(unigram_stress),
        cmocka_unit_test(unigram_invalid),
        cmocka_unit_test(unigram_on_trie_layouts),
        cmocka_unit_test(other_settings),
        cmocka_unit_test(bpe_multi),
        cmocka_unit_test(bpe_unicode),
        cmocka_unit_test(bpe_stress),
        cmocka_unit_test(bpe_invalid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
