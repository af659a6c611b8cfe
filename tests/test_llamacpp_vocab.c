/* Conformance against llama.cpp's vocabulary tests (../shared/llama.cpp-vocab,
 * or $LLAMACPP_VOCAB_DIR; its SOURCE.md says the format).
 *
 * Every ggml-vocab-NAME.gguf there is loaded with tok_load; where
 * NAME.gguf.inp and .out sit beside it, each input is encoded (no BOS, no
 * special-token parsing, as llama.cpp's test-tokenizer-0 runs) and its ids
 * compared with the expected line.  The sets that come without a GGUF are
 * checked against the tokenizer the project has for the same model (table
 * below), and named as skipped when it has none.  The directory is found
 * by listing it, so a family added there is tried without a change here.
 * The data is read in place, never copied. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "support.h"

#include "../base/file.h"
#include "../tok/tok_internal.h"

#define SEP "__ggml_vocab_test__"

/* Sets without a GGUF, and the vocabulary of data/cache that gives the
 * same ids (Llama 3's, Qwen 3's for Qwen 2, cl100k for DBRX, o200k for
 * GPT-4o, Command R+'s for Command-R, Gemma 3's for Gemma 4: its 262k
 * pieces, not its special tokens, which the vectors do not hold).  Qwen
 * 3.5's vocabulary (248k, no NFC normalizer) has none: Qwen 3's file
 * normalizes the vectors' decomposed accents and fails three. */
static const struct {
    const char *set, *path;
} stand_ins[] = {
    {"llama-bpe", "data/cache/llama3/tokenizer.json"},
    {"qwen2", "data/cache/qwen3/tokenizer.json"},
    {"dbrx", TEST_CL100K},
    {"gpt-4o", "data/cache/o200k/o200k_base.json"},
    {"command-r", "data/cache/command-r-plus/tokenizer.json"},
    {"gemma-4", "data/cache/gemma3/tokenizer.json"},
};

static const char *vocab_dir(void)
{
    const char *env = getenv("LLAMACPP_VOCAB_DIR");
    const char *cands[] = {env, "../shared/llama.cpp-vocab",
                           "/work/shared/llama.cpp-vocab"};
    for (size_t i = 0; i < sizeof cands / sizeof *cands; i++) {
        struct stat st;
        if (cands[i] && !stat(cands[i], &st) && S_ISDIR(st.st_mode))
            return cands[i];
        if (i == 0 && env)
            return NULL; /* the variable names the folder: no fallback */
    }
    return NULL;
}

/* The inputs of a .inp file: each one ends with "\n" SEP "\n", but the
 * last may end the file instead (gemma-4's does, without a newline). */
typedef struct {
    const uint8_t *s;
    size_t n;
} input_t;

static size_t split_inputs(const uint8_t *d, size_t len, input_t *in, size_t max)
{
    const size_t sl = strlen("\n" SEP "\n");
    size_t k = 0, at = 0;
    while (at < len && k < max) {
        const uint8_t *hit = memmem(d + at, len - at, "\n" SEP "\n", sl);
        /* an empty input right at the start has no newline before SEP */
        if (at == 0 && len >= sl - 1 && !memcmp(d, SEP "\n", sl - 1))
            hit = d - 1;
        if (!hit) {
            in[k++] = (input_t){d + at, len - at};
            break;
        }
        in[k++] = (input_t){d + at, (size_t)(hit - (d + at))};
        at = (size_t)(hit - d) + sl;
    }
    return k;
}

/* Parses one .out line of ids; returns the count, or -1 past max. */
static long parse_ids(const char *line, uint32_t *ids, size_t max)
{
    size_t n = 0;
    char *end;
    for (const char *p = line; *p;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p || n == max)
            return -1;
        ids[n++] = (uint32_t)v;
        p = end;
    }
    return (long)n;
}

#define MAX_INPUTS 256
#define MAX_IDS 4096

/* Encodes every input of the set and compares; returns the mismatches
 * (an input that fails to encode counts as one) and says each. */
static int run_set(const char *set, tok_tokenizer_t *t, const char *inp,
                   const char *out, size_t *total)
{
    uint8_t *id = NULL, *od = NULL;
    size_t il, ol;
    tb_err_t err;
    if (tb_read_file(inp, &id, &il, &err) || tb_read_file(out, &od, &ol, &err))
        fail_msg("%s", err.msg);
    static input_t in[MAX_INPUTS];
    static uint32_t want[MAX_IDS];
    size_t n = split_inputs(id, il, in, MAX_INPUTS);
    tok_ids_t got = {0};
    int bad = 0;
    char *lines = (char *)od;
    size_t k = 0;
    /* an empty line is an input with no ids */
    char *p = lines;
    for (; k < n && p < lines + ol; k++) {
        char *nl = memchr(p, '\n', (size_t)(lines + ol - p));
        if (nl)
            *nl = 0;
        long m = parse_ids(p, want, MAX_IDS);
        if (m < 0)
            fail_msg("%s: line %zu: not a list of at most %d ids", out, k + 1,
                     MAX_IDS);
        got.len = 0;
        if (tok_encode(t, in[k].s, in[k].n, &got, &err)) {
            print_message("%s: input %zu: encode failed: %s\n", set, k + 1, err.msg);
            bad++;
        } else if (got.len != (size_t)m ||
                   memcmp(got.data, want, got.len * sizeof *want)) {
            size_t at = 0;
            while (at < got.len && at < (size_t)m && got.data[at] == want[at])
                at++;
            print_message("%s: input %zu \"%.*s\": ids differ at position %zu "
                          "(got %ld, want %ld; %zu against %ld ids)\n",
                          set, k + 1, (int)(in[k].n > 60 ? 60 : in[k].n),
                          (const char *)in[k].s, at,
                          at < got.len ? (long)got.data[at] : -1L,
                          at < (size_t)m ? (long)want[at] : -1L, got.len, m);
            bad++;
        }
        p = nl ? nl + 1 : lines + ol;
    }
    if (k != n || n == 0 || p < lines + ol)
        fail_msg("%s: %zu inputs in %s but not as many lines of ids in %s",
                 set, n, inp, out);
    *total = n;
    free(got.data);
    free(id);
    free(od);
    return bad;
}

static int has_suffix(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a > b && !strcmp(s + a - b, suf);
}

/* Every ggml-vocab-*.gguf loads; every set with inputs passes. */
static void every_set(void **state)
{
    (void)state;
    const char *dir = vocab_dir();
    if (!dir) {
        print_message("llama.cpp vocabulary tests not found ($LLAMACPP_VOCAB_DIR, "
                      "../shared/llama.cpp-vocab): skipped\n");
        skip();
    }
    struct dirent **ents;
    int nents = scandir(dir, &ents, NULL, alphasort);
    assert_true(nents >= 0);
    int failed = 0, sets = 0;
    for (int ei = 0; ei < nents; ei++) {
        const char *name = ents[ei]->d_name;
        int is_gguf = has_suffix(name, ".gguf");
        if (strncmp(name, "ggml-vocab-", 11) || (!is_gguf && !has_suffix(name, ".gguf.inp")))
            continue;
        char set[128], gguf[1024], inp[1100], out[1100];
        snprintf(set, sizeof set, "%.*s", (int)(strcspn(name + 11, ".")), name + 11);
        snprintf(gguf, sizeof gguf, "%s/ggml-vocab-%s.gguf", dir, set);
        snprintf(inp, sizeof inp, "%s.inp", gguf);
        snprintf(out, sizeof out, "%s.out", gguf);
        int have_gguf = !access(gguf, R_OK), have_inp = !access(inp, R_OK);
        if (!is_gguf && have_gguf)
            continue; /* the .gguf entry runs this set */
        const char *path = have_gguf ? gguf : NULL;
        for (size_t i = 0; !path && i < sizeof stand_ins / sizeof *stand_ins; i++)
            if (!strcmp(stand_ins[i].set, set))
                path = stand_ins[i].path;
        if (!path) {
            print_message("%-14s skipped: no GGUF and no tokenizer of the project "
                          "for this model\n", set);
            continue;
        }
        tb_err_t err;
        test_need_file(path);
        tok_tokenizer_t *t = tok_load(path, &err);
        sets++;
        if (!t) {
            print_message("%-14s does not load: %s\n", set, err.msg);
            failed++;
            continue;
        }
        if (!have_inp) {
            print_message("%-14s loads (%s, %u tokens); no inputs to compare\n", set,
                          tok_model_name(t), tok_vocab(t)->size);
        } else {
            size_t total = 0;
            int bad = run_set(set, t, inp, out, &total);
            print_message("%-14s %zu/%zu inputs pass (%s)\n", set, total - (size_t)bad,
                          total, have_gguf ? "GGUF" : path);
            failed += bad > 0;
        }
        tok_free(t);
    }
    for (int ei = 0; ei < nents; ei++)
        free(ents[ei]);
    free(ents);
    assert_true(sets > 0);
    if (failed)
        fail_msg("%d of %d llama.cpp vocabulary sets fail (listed above)", failed, sets);
}

/* Every tokenizer.ggml.pre value of llama.cpp's loader (src/llama-vocab.cpp)
 * is known, and each of its regexes compiles, or it is one of the names
 * that llama.cpp runs as a tokenizer of its own and is refused as such. */
static void every_pre_name(void **state)
{
    (void)state;
    static const char *const names[] = {
        "default", "minicpm5", "llama3", "llama-v3", "llama-bpe", "falcon3",
        "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano",
        "deepseek-llm", "deepseek-coder", "deepseek-v3", "spark2_5", "youtu",
        "falcon", "mpt", "starcoder", "gpt-2", "phi-2", "jina-es", "jina-de",
        "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
        "modern-bert", "jais-2", "jina-v1-en", "jina-v2-code", "roberta-bpe",
        "refact", "command-r", "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2",
        "qwen35", "stablelm2", "olmo", "dbrx", "smaug-bpe", "poro-chat",
        "glm4", "chatglm-bpe", "viking", "jais", "tekken", "smollm",
        "codeshell", "bloom", "gpt3-finnish", "exaone", "exaone4",
        "exaone-moe", "chameleon", "minerva-7b", "megrez", "gpt-4o", "llama4",
        "kanana2", "talkie", "granite-embed-multi-97m", "tiny_aya",
        "cohere2moe", "superbpe", "trillion", "granite-docling", "bailingmoe",
        "bailingmoe2", "llada-moe", "seed-coder", "hunyuan", "hunyuan-dense",
        "hy_v4", "joyai-llm", "ufakzeka", "grok-2", "afmoe", "laguna",
        "minimax-m2", "solar-open", "mellum2"};
    static const char *const own[] = {"gemma4", "granite-embed-multi-311m",
                                      "sarvam-moe", "whitespace", "kimi-k2"};
    tb_err_t err;
    tok_gguf_pre_t p;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const char *n = names[i];
        if (tok_gguf_pre((const uint8_t *)n, strlen(n), &p, &err))
            fail_msg("%s: %s", n, err.msg);
        assert_non_null(p.patterns[0]);
        for (size_t k = 0; p.patterns[k]; k++) {
            tok_pre_t pre;
            memset(&pre, 0, sizeof pre);
            const char *pat = p.patterns[k];
            if (tok_pre_compile(&pre, (const uint8_t *)pat, strlen(pat), 0, &err))
                fail_msg("%s, regex %zu: %s", n, k, err.msg);
            tb_buf_free(&pre.pattern);
            pcre2_code_free(pre.re);
        }
    }
    for (size_t i = 0; i < sizeof own / sizeof *own; i++) {
        assert_int_equal(tok_gguf_pre((const uint8_t *)own[i], strlen(own[i]),
                                      &p, &err), -1);
        assert_non_null(strstr(err.msg, "not supported"));
    }
    assert_int_equal(tok_gguf_pre((const uint8_t *)"no-such", 7, &p, &err), -1);
    assert_non_null(strstr(err.msg, "'no-such' is not supported (not a name"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_pre_name),
        cmocka_unit_test(every_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
