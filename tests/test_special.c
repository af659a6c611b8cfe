/* Special tokens: --add-special, --parse-special and skip-special decode,
 * and pairs (tok_encode_pair, encode --pair) against the references.  Hugging Face tokenizers (scripts/ref/ref.js hf:
 * encode with addSpecialTokens, decode with skipSpecialTokens) and
 * tiktoken (ref.js tiktoken: encode_ordinary, and encode(text, "all")) on
 * lines with and without each vocabulary's own special-token texts; the
 * GGUF files of ../shared/llama.cpp-vocab against llama.cpp's rules as its
 * source states them (no live reference): BOS iff add_bos_token or the
 * model's default, control texts parsed only under parse_special.  Data or
 * node missing: the case says so and is skipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "../tok/tok_internal.h"
#include "support.h"

#define LLAMACPP "../shared/llama.cpp-vocab"

/* Lines for one vocabulary: plain ones, and ones around its first special
 * added tokens (sp[0..2]), written as text. */
static size_t make_lines(const tok_tokenizer_t *t, char lines[][256], size_t max)
{
    static char buf[3][64]; /* the texts, for the formats below */
    const char *sp[3] = {"<|endoftext|>", "<s>", "</s>"};
    size_t nsp = 0;
    for (size_t i = 0; i < t->added.len && nsp < 3; i++) {
        const tok_added_t *a = &t->added.data[i];
        if (a->special && a->content.len < 64 &&
            !memchr(a->content.data, '\n', a->content.len)) {
            memcpy(buf[nsp], a->content.data, a->content.len);
            buf[nsp][a->content.len] = 0;
            sp[nsp] = buf[nsp];
            nsp++;
        }
    }
    const char *fmt[] = {"Hello world", "  two  spaces, a tab\tand caf\xc3\xa9",
                         "%s", "a%sb", "x %s y %s z", "%s%s%s",
                         "\xe6\x97\xa5\xe6\x9c\xac %s  end", "%s Hello"};
    size_t n = 0;
    for (size_t i = 0; i < sizeof fmt / sizeof *fmt && n < max; i++)
        snprintf(lines[n++], 256, fmt[i], sp[i % 3], sp[(i + 1) % 3],
                 sp[(i + 2) % 3]);
    return n;
}

static int have_node(void)
{
    return !system("node --version >/dev/null 2>&1") &&
           !access("scripts/ref/node_modules/@anush008/tokenizers", R_OK) &&
           !access("scripts/ref/node_modules/tiktoken", R_OK);
}

/* Runs ref.js ARGS over the lines; its output lines go into out (up to
 * n of them, malloc'd). */
static void run_ref(const char *args, char lines[][256], size_t n, char **out)
{
    char in[] = "/tmp/tb_special_XXXXXX";
    int fd = mkstemp(in);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s\n", lines[i]);
    fclose(f);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "node scripts/ref/ref.js %s < %s", args, in);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char buf[8192];
    size_t k = 0;
    while (k < n && fgets(buf, sizeof buf, p)) {
        buf[strcspn(buf, "\n")] = 0;
        out[k++] = strdup(buf);
    }
    int rc = pclose(p);
    unlink(in);
    if (rc || k != n)
        fail_msg("'%s' failed or gave %zu of %zu lines", cmd, k, n);
}

static void ids_text(const tok_ids_t *ids, char *s, size_t size)
{
    size_t at = 0;
    s[0] = 0;
    for (size_t i = 0; i < ids->len && at < size; i++)
        at += (size_t)snprintf(s + at, size - at, i ? " %u" : "%u", ids->data[i]);
}

/* tokbench's ids of every line under flags equal the reference's. */
static int compare_encode(tok_tokenizer_t *t, const char *name, uint32_t flags,
                          const char *ref_args, char lines[][256], size_t n)
{
    char *want[16];
    run_ref(ref_args, lines, n, want);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        tok_ids_t ids = {0};
        tb_err_t err;
        char got[8192];
        if (tok_encode_ex(t, (const uint8_t *)lines[i], strlen(lines[i]), flags,
                          &ids, &err))
            fail_msg("%s: %s", name, err.msg);
        ids_text(&ids, got, sizeof got);
        if (strcmp(got, want[i])) {
            print_message("%s flags %u line '%s':\n  tokbench  %s\n  reference %s\n",
                          name, flags, lines[i], got, want[i]);
            bad++;
        }
        free(ids.data);
        free(want[i]);
    }
    return bad;
}

/* Decoding the ids of every line (special tokens added and parsed) with
 * and without skip-special equals the reference's decode. */
static int compare_decode(tok_tokenizer_t *t, const char *name,
                          const char *path, char lines[][256], size_t n)
{
    char idl[16][256];
    tok_ids_t ids[16] = {{0}};
    tb_err_t err;
    for (size_t i = 0; i < n; i++) {
        if (tok_encode_ex(t, (const uint8_t *)lines[i], strlen(lines[i]),
                          TOK_ADD_SPECIAL | TOK_PARSE_SPECIAL, &ids[i], &err))
            fail_msg("%s: %s", name, err.msg);
        ids_text(&ids[i], idl[i], sizeof idl[i]);
    }
    int bad = 0;
    for (int skip = 0; skip < 2; skip++) {
        char args[1024], *want[16];
        snprintf(args, sizeof args, "hf '%s' --decode%s", path,
                 skip ? " --skip-special" : "");
        run_ref(args, idl, n, want);
        for (size_t i = 0; i < n; i++) {
            tb_buf_t got = {0};
            if (tok_decode_ex(t, ids[i].data, ids[i].len,
                              skip ? TOK_SKIP_SPECIAL : 0, &got, &err))
                fail_msg("%s: %s", name, err.msg);
            json_t *js = json_loads(want[i], JSON_DECODE_ANY, NULL);
            assert_non_null(js);
            if (json_string_length(js) != got.len ||
                (got.len && memcmp(json_string_value(js), got.data, got.len))) {
                print_message("%s decode%s of '%s': tokbench '%.*s', reference %s\n",
                              name, skip ? " skip-special" : "", idl[i],
                              (int)got.len, (const char *)got.data, want[i]);
                bad++;
            }
            json_decref(js);
            tb_buf_free(&got);
            free(want[i]);
        }
    }
    for (size_t i = 0; i < n; i++)
        free(ids[i].data);
    return bad;
}

/* The HF vocabularies: the default (special tokens parsed), the template
 * added, decode with and without skipping; --no-parse-special has no
 * switch in the node bindings, so it is checked for what it promises: no
 * special added token among the ids. */
static void hf_vocabularies(void **state)
{
    (void)state;
    static const char *names[] = {"llama3", "qwen3", "gemma3", "mistral", "bert",
                                  "command-r-plus"};
    if (!have_node()) {
        print_message("node or scripts/ref/node_modules missing: skipped\n");
        skip();
    }
    int bad = 0, ran = 0;
    for (size_t v = 0; v < sizeof names / sizeof *names; v++) {
        char path[256], args[512], lines[16][256];
        snprintf(path, sizeof path, "data/cache/%s/tokenizer.json", names[v]);
        if (access(path, R_OK)) {
            print_message("%s: %s missing ('make data'): skipped\n", names[v], path);
            continue;
        }
        tok_tokenizer_t *t = test_load(path);
        size_t n = make_lines(t, lines, 16);
        assert_int_equal(tok_encode_defaults(t), TOK_PARSE_SPECIAL);
        snprintf(args, sizeof args, "hf '%s'", path);
        bad += compare_encode(t, names[v], TOK_PARSE_SPECIAL, args, lines, n);
        snprintf(args, sizeof args, "hf '%s' --add-special", path);
        bad += compare_encode(t, names[v], TOK_PARSE_SPECIAL | TOK_ADD_SPECIAL,
                              args, lines, n);
        bad += compare_decode(t, names[v], path, lines, n);
        for (size_t i = 0; i < n; i++) {
            tok_ids_t ids = {0};
            tb_err_t err;
            assert_int_equal(tok_encode_ex(t, (const uint8_t *)lines[i],
                                           strlen(lines[i]), 0, &ids, &err), 0);
            for (size_t k = 0; k < ids.len; k++)
                if (t->vocab.special[ids.data[k]]) {
                    print_message("%s --no-parse-special '%s': special id %u\n",
                                  names[v], lines[i], ids.data[k]);
                    bad++;
                }
            free(ids.data);
        }
        tok_free(t);
        ran++;
    }
    print_message("%d HF vocabularies checked, %d differences\n", ran, bad);
    assert_int_equal(bad, 0);
}

/* Pairs "A\tB" from the lines: A is line i with its tabs made spaces, B
 * line i + 1; then an empty A and an empty B. */
static size_t make_pairs(char lines[][256], size_t n, char pairs[][256])
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++, k++) {
        snprintf(pairs[k], 256, "%s\t%s", lines[i], lines[(i + 1) % n]);
        for (char *p = pairs[k]; *p && p < pairs[k] + strlen(lines[i]); p++)
            if (*p == '\t')
                *p = ' ';
    }
    snprintf(pairs[k++], 256, "\t%s", lines[0]);
    snprintf(pairs[k++], 256, "%s\t", lines[0]);
    return k;
}

/* tok_encode_pair's ids and type ids of every pair, with and without the
 * special tokens, equal encode(A, B)'s through ref.js hf --pair. */
static int compare_pairs(tok_tokenizer_t *t, const char *name, const char *path,
                         char pairs[][256], size_t n)
{
    int bad = 0;
    for (int add = 0; add < 2; add++) {
        char args[512], *want[16];
        snprintf(args, sizeof args, "hf '%s' --pair%s", path,
                 add ? " --add-special" : "");
        run_ref(args, pairs, n, want);
        for (size_t i = 0; i < n; i++) {
            tok_ids_t ids = {0}, types = {0};
            tb_err_t err;
            char got[8192];
            const char *tab = strchr(pairs[i], '\t');
            uint32_t flags = TOK_PARSE_SPECIAL | (add ? TOK_ADD_SPECIAL : 0);
            if (tok_encode_pair(t, (const uint8_t *)pairs[i], (size_t)(tab - pairs[i]),
                                (const uint8_t *)tab + 1, strlen(tab + 1), flags,
                                &ids, &types, &err))
                fail_msg("%s: %s", name, err.msg);
            assert_int_equal(ids.len, types.len);
            ids_text(&ids, got, sizeof got);
            size_t at = strlen(got);
            got[at++] = '\t';
            ids_text(&types, got + at, sizeof got - at);
            if (strcmp(got, want[i])) {
                print_message("%s pair%s '%s':\n  tokbench  %s\n  reference %s\n",
                              name, add ? " add-special" : "", pairs[i], got, want[i]);
                bad++;
            }
            free(ids.data);
            free(types.data);
            free(want[i]);
        }
    }
    return bad;
}

/* bert's tokenizer.json with its post_processor replaced by `pp` (JSON),
 * written to a temporary file whose name goes to path. */
static void bert_with(const char *pp, char *path)
{
    json_error_t je;
    json_t *root = json_load_file("data/cache/bert/tokenizer.json", 0, &je);
    assert_non_null(root);
    assert_int_equal(json_object_set_new(root, "post_processor",
                                         json_loads(pp, 0, &je)), 0);
    strcpy(path, "/tmp/tb_pair_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(json_dump_file(root, path, JSON_COMPACT), 0);
    json_decref(root);
}

/* Pairs: every HF vocabulary's own rule (templates: bert, gemma3,
 * mistral, command-r-plus; none: llama3, qwen3), then bert under
 * BertProcessing, RobertaProcessing, and a Sequence whose template has
 * types 0 to 3 and a special token of two ids; the CLI; what is refused. */
static void pairs(void **state)
{
    (void)state;
    static const char *names[] = {"bert", "llama3", "qwen3", "gemma3", "mistral",
                                  "command-r-plus"};
    static const char *pps[] = {
        "{\"type\": \"BertProcessing\", \"sep\": [\"[SEP]\", 102], "
        "\"cls\": [\"[CLS]\", 101]}",
        "{\"type\": \"RobertaProcessing\", \"sep\": [\"[SEP]\", 102], "
        "\"cls\": [\"[CLS]\", 101], \"trim_offsets\": true, "
        "\"add_prefix_space\": false}",
        "{\"type\": \"Sequence\", \"processors\": [{\"type\": \"ByteLevel\", "
        "\"add_prefix_space\": true, \"trim_offsets\": false, \"use_regex\": true}, "
        "{\"type\": \"TemplateProcessing\", "
        "\"single\": [{\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}], "
        "\"pair\": [{\"SpecialToken\": {\"id\": \"[CLS]\", \"type_id\": 0}}, "
        "{\"Sequence\": {\"id\": \"A\", \"type_id\": 2}}, "
        "{\"SpecialToken\": {\"id\": \"[SEP]\", \"type_id\": 1}}, "
        "{\"Sequence\": {\"id\": \"B\", \"type_id\": 3}}], "
        "\"special_tokens\": {\"[CLS]\": {\"id\": \"[CLS]\", \"ids\": [101], "
        "\"tokens\": [\"[CLS]\"]}, \"[SEP]\": {\"id\": \"[SEP]\", "
        "\"ids\": [102, 103], \"tokens\": [\"[SEP]\", \"[MASK]\"]}}}]}",
        /* $B before $A: refused */
        "{\"type\": \"TemplateProcessing\", "
        "\"single\": [{\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}], "
        "\"pair\": [{\"Sequence\": {\"id\": \"B\", \"type_id\": 0}}, "
        "{\"Sequence\": {\"id\": \"A\", \"type_id\": 1}}], "
        "\"special_tokens\": {}}"};
    if (!have_node()) {
        print_message("node or scripts/ref/node_modules missing: skipped\n");
        skip();
    }
    int bad = 0, ran = 0;
    char path[256], lines[16][256], prs[16][256], out[4096];
    for (size_t v = 0; v < sizeof names / sizeof *names; v++) {
        snprintf(path, sizeof path, "data/cache/%s/tokenizer.json", names[v]);
        if (access(path, R_OK)) {
            print_message("%s: %s missing ('make data'): skipped\n", names[v], path);
            continue;
        }
        tok_tokenizer_t *t = test_load(path);
        size_t n = make_pairs(lines, make_lines(t, lines, 14), prs);
        bad += compare_pairs(t, names[v], path, prs, n);
        tok_free(t);
        ran++;
    }
    if (access("data/cache/bert/tokenizer.json", R_OK) == 0) {
        for (size_t k = 0; k < sizeof pps / sizeof *pps; k++) {
            bert_with(pps[k], path);
            tok_tokenizer_t *t = test_load(path);
            size_t n = make_pairs(lines, make_lines(t, lines, 14), prs);
            if (k < 3) {
                bad += compare_pairs(t, pps[k] + 10, path, prs, n);
            } else {
                tok_ids_t ids = {0};
                tb_err_t err;
                assert_int_equal(tok_encode_pair(t, (const uint8_t *)"a", 1,
                                                 (const uint8_t *)"b", 1, 0, &ids,
                                                 NULL, &err), -1);
                assert_non_null(strstr(err.msg, "want $A, then $B"));
                assert_non_null(strstr(err.msg, "post_processor.pair[0]"));
            }
            tok_free(t);
            unlink(path);
        }
        assert_int_equal(test_tokbench("encode bert --pair --types --add-special "
                                       "'Hello world' 'How are you'", out, sizeof out), 0);
        assert_string_equal(out, "101 7592 2088 102 2129 2024 2017 102\t"
                                 "0 0 0 0 1 1 1 1\n");
    }
    print_message("%d vocabularies' pairs checked, %d differences\n", ran, bad);
    assert_int_equal(bad, 0);
    /* Other formats have no pair rule: refused with the special tokens. */
    assert_int_not_equal(test_tokbench("encode cl100k --pair --add-special a b", out,
                                       sizeof out), 0);
    assert_non_null(strstr(out, "no rule adds the special tokens of a pair"));
    assert_int_equal(test_tokbench("encode cl100k --pair --types a b", out,
                                   sizeof out), 0);
    assert_string_equal(out, "64 65\t0 1\n");
}

/* tiktoken: encode_ordinary by default, allowed_special="all" under
 * TOK_PARSE_SPECIAL, nothing added. */
static void tiktoken_vocabularies(void **state)
{
    (void)state;
    static const char *names[] = {"cl100k", "o200k"};
    if (!have_node()) {
        print_message("node or scripts/ref/node_modules missing: skipped\n");
        skip();
    }
    int bad = 0;
    for (size_t v = 0; v < 2; v++) {
        char path[256], args[512], lines[16][256];
        snprintf(path, sizeof path, "data/cache/%s/%s_base.json", names[v], names[v]);
        if (access(path, R_OK)) {
            print_message("%s: %s missing ('make data'): skipped\n", names[v], path);
            continue;
        }
        tok_tokenizer_t *t = test_load(path);
        size_t n = make_lines(t, lines, 16);
        snprintf(args, sizeof args, "tiktoken '%s'", path);
        bad += compare_encode(t, names[v], 0, args, lines, n);
        bad += compare_encode(t, names[v], TOK_ADD_SPECIAL, args, lines, n);
        snprintf(args, sizeof args, "tiktoken '%s' --allowed-special all", path);
        bad += compare_encode(t, names[v], TOK_PARSE_SPECIAL, args, lines, n);
        tok_free(t);
    }
    assert_int_equal(bad, 0);
}

static int has_id(const tok_ids_t *ids, uint32_t id)
{
    for (size_t i = 0; i < ids->len; i++)
        if (ids->data[i] == id)
            return 1;
    return 0;
}

/* llama.cpp's rules on its own files: what add_special puts around the
 * plain ids (the files' add_bos_token, or the model's default), control
 * texts parsed only when asked, and skip-special dropping them again. */
static void gguf_rules(void **state)
{
    (void)state;
    static const struct {
        const char *set, *ctl; /* a control token's text in the file */
        int32_t bos, eos;      /* added ids, -1: none */
    } cases[] = {
        {"llama-spm", "</s>", 1, -1},       /* add_bos_token true */
        {"phi-3", "<|end|>", 1, -1},        /* add_bos_token true */
        {"gpt-2", "<|endoftext|>", -1, -1}, /* no key: gpt2 adds none */
        {"bert-bge", "[MASK]", 101, 102},   /* bert: [CLS] ... [SEP] */
    };
    int ran = 0;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char path[512], text[256];
        snprintf(path, sizeof path, LLAMACPP "/ggml-vocab-%s.gguf", cases[c].set);
        if (access(path, R_OK)) {
            print_message("%s missing: skipped\n", path);
            continue;
        }
        tok_tokenizer_t *t = test_load(path);
        int32_t ctl = tok_vocab_find(&t->vocab, (const uint8_t *)cases[c].ctl,
                                     strlen(cases[c].ctl));
        assert_true(ctl >= 0 && t->vocab.special[ctl]);
        snprintf(text, sizeof text, "Hello %s world", cases[c].ctl);
        size_t len = strlen(text);
        tok_ids_t plain = {0}, add = {0}, parsed = {0};
        tb_buf_t dec = {0};
        tb_err_t err;
        assert_int_equal(tok_encode(t, (const uint8_t *)text, len, &plain, &err), 0);
        assert_int_equal(tok_encode_ex(t, (const uint8_t *)text, len,
                                       TOK_ADD_SPECIAL, &add, &err), 0);
        assert_int_equal(tok_encode_ex(t, (const uint8_t *)text, len,
                                       TOK_PARSE_SPECIAL, &parsed, &err), 0);
        /* BOS and EOS around exactly the plain ids. */
        size_t pre = cases[c].bos >= 0, post = cases[c].eos >= 0;
        assert_int_equal(add.len, plain.len + pre + post);
        if (pre)
            assert_int_equal(add.data[0], cases[c].bos);
        if (post)
            assert_int_equal(add.data[add.len - 1], cases[c].eos);
        assert_memory_equal(add.data + pre, plain.data, plain.len * sizeof *plain.data);
        /* The control text is text by default, a token when parsed. */
        assert_false(has_id(&plain, (uint32_t)ctl));
        assert_true(has_id(&parsed, (uint32_t)ctl));
        /* Skipped, the parsed token leaves the text around it. */
        assert_int_equal(tok_decode_ex(t, parsed.data, parsed.len,
                                       TOK_SKIP_SPECIAL, &dec, &err), 0);
        assert_null(memmem(dec.data, dec.len, cases[c].ctl, strlen(cases[c].ctl)));
        tb_buf_free(&dec);
        assert_int_equal(tok_decode_ex(t, parsed.data, parsed.len, 0, &dec, &err), 0);
        assert_non_null(memmem(dec.data, dec.len, cases[c].ctl, strlen(cases[c].ctl)));
        tb_buf_free(&dec);
        free(plain.data);
        free(add.data);
        free(parsed.data);
        tok_free(t);
        ran++;
    }
    if (!ran) {
        print_message("no GGUF in " LLAMACPP ": skipped\n");
        skip();
    }
}

/* A SentencePiece model: BOS and EOS added when asked (as spm_encode
 * adds them), parsing refused with a message; the CLI's flags reach the
 * library. */
static void spm_and_cli(void **state)
{
    (void)state;
    const char *path = "data/cache/spm-unigram/spm-unigram.model";
    char out[4096];
    if (access(path, R_OK)) {
        print_message("%s missing ('make data'): skipped\n", path);
        skip();
    }
    tok_tokenizer_t *t = test_load(path);
    tok_ids_t plain = {0}, add = {0};
    tb_err_t err;
    assert_int_equal(tok_encode(t, (const uint8_t *)"Hello", 5, &plain, &err), 0);
    assert_int_equal(tok_encode_ex(t, (const uint8_t *)"Hello", 5,
                                   TOK_ADD_SPECIAL, &add, &err), 0);
    assert_int_equal(add.len, plain.len + 2);
    assert_int_equal(add.data[0], t->vocab.bos);
    assert_int_equal(add.data[add.len - 1], t->vocab.eos);
    /* spm_encode --extra_options=bos:eos, where it is installed. */
    FILE *p = popen("echo Hello | spm_encode --model=data/cache/spm-unigram/"
                    "spm-unigram.model --output_format=id "
                    "--extra_options=bos:eos 2>/dev/null", "r");
    char want[256] = "", got[256];
    int read = p && fgets(want, sizeof want, p);
    if (p && pclose(p) == 0 && read) {
        want[strcspn(want, "\n")] = 0;
        ids_text(&add, got, sizeof got);
        assert_string_equal(got, want);
    } else {
        print_message("spm_encode not found: BOS/EOS not compared\n");
    }
    assert_int_equal(tok_encode_ex(t, (const uint8_t *)"Hello", 5,
                                   TOK_PARSE_SPECIAL, &add, &err), -1);
    assert_non_null(strstr(err.msg, "SentencePiece"));
    free(plain.data);
    free(add.data);
    tok_free(t);
    assert_int_not_equal(test_tokbenchf(out, sizeof out, "encode %s --parse-special Hi",
                                        path), 0);
    assert_non_null(strstr(out, "never matches"));
    assert_int_equal(test_tokbench("encode cl100k --parse-special '<|endoftext|>'",
                                   out, sizeof out), 0);
    assert_string_equal(out, "100257\n");
    assert_int_equal(test_tokbench("decode cl100k --skip-special 100257 13347",
                                   out, sizeof out), 0);
    assert_string_equal(out, "Hi");
    assert_int_equal(test_tokbench("encode --help", out, sizeof out), 0);
    assert_non_null(strstr(out, "--add-special"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hf_vocabularies),
        cmocka_unit_test(pairs),
        cmocka_unit_test(tiktoken_vocabularies),
        cmocka_unit_test(gguf_rules),
        cmocka_unit_test(spm_and_cli),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
