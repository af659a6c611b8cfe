/* cmd_tok: the vocabulary commands `vocab`, `encode` and `decode`. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/file.h"
#include "../../tok/tokenizer.h"
#include "cli.h"

static tok_tokenizer_t *load_spec(const char *spec, char *path, size_t size,
                                  tb_err_t *err)
{
    if (xp_resolve_spec(spec, path, size, err))
        return NULL;
    tok_load_opts_t opts = {0};
    tok_tokenizer_t *t = tok_load_ex(path, &opts, err);
    if (opts.note[0])
        fprintf(stderr, "tokbench: %s\n", opts.note);
    return t;
}

/* Prints s with control bytes, backslashes and non-UTF-8 bytes escaped. */
static void print_escaped(FILE *out, const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (c == '\\')
            fputs("\\\\", out);
        else if (c == '\n')
            fputs("\\n", out);
        else if (c == '\t')
            fputs("\\t", out);
        else if (c < 0x20 || c == 0x7F)
            fprintf(out, "\\x%02x", c);
        else
            fputc(c, out);
    }
}

static const char *kind_name(uint8_t k)
{
    switch (k) {
    case TOK_NORMAL: return "normal";
    case TOK_UNKNOWN: return "unknown";
    case TOK_CONTROL: return "control";
    case TOK_USER: return "user-defined";
    case TOK_BYTE: return "byte";
    default: return "unused";
    }
}

static void print_histogram(const tok_vocab_t *v)
{
    enum { EXACT = 17, BUCKETS = EXACT + 2 }; /* 0..16 bytes, 17..32, 33+ */
    uint32_t count[BUCKETS] = {0};
    size_t longest = 0;
    for (uint32_t id = 0; id < v->size; id++) {
        size_t len = v->offset[id + 1] - v->offset[id];
        if (len > longest)
            longest = len;
        count[len < EXACT ? len : len <= 32 ? EXACT : EXACT + 1]++;
    }
    printf("token byte lengths (longest %zu):\n", longest);
    for (int b = 0; b < BUCKETS; b++) {
        if (!count[b])
            continue;
        if (b < EXACT)
            printf("  %7d  %u\n", b, count[b]);
        else
            printf("  %7s  %u\n", b == EXACT ? "17-32" : "33+", count[b]);
    }
}

static void print_specials(const tok_vocab_t *v, unsigned show)
{
    unsigned per_kind[7] = {0}, listed = 0;
    for (uint32_t id = 0; id < v->size; id++)
        per_kind[v->kind[id] < 7 ? v->kind[id] : TOK_UNUSED]++;
    printf("kinds:");
    for (int k = 1; k < 7; k++)
        if (per_kind[k])
            printf(" %s %u", kind_name((uint8_t)k), per_kind[k]);
    printf("\nbos %d  eos %d  unk %d  pad %d\n", v->bos, v->eos, v->unk, v->pad);
    printf("special and control tokens:");
    for (uint32_t id = 0; id < v->size && listed < show; id++) {
        if (!v->special[id] && v->kind[id] != TOK_CONTROL)
            continue;
        size_t len;
        const uint8_t *s = tok_vocab_token(v, id, &len);
        printf("%s%u=", listed++ % 4 ? "  " : "\n  ", id);
        print_escaped(stdout, s, len);
    }
    printf("\n");
}

static int vocab_usage(FILE *out)
{
    fprintf(out, "usage: tokbench vocab SPEC [--specials N]\n\n"
                 "Loads SPEC (a data/manifest name or a file) and prints its format,\n"
                 "model, size, token kinds, BOS/EOS/UNK/PAD ids, the first N special\n"
                 "tokens (default 16), the file's sha256, the vocabulary checksum\n"
                 "(sha256 over ids, kinds and raw token bytes) and a histogram of\n"
                 "token byte lengths.\n");
    return out == stdout ? 0 : 2;
}

int xp_cmd_vocab(int argc, char **argv)
{
    if (xp_wants_help(argc, argv))
        return vocab_usage(stdout);
    unsigned show = 16;
    if (argc == 4 && !strcmp(argv[2], "--specials"))
        show = (unsigned)strtoul(argv[3], NULL, 10);
    else if (argc != 2)
        return vocab_usage(stderr);
    tb_err_t err;
    char path[PATH_MAX], file_sum[65], vocab_sum[65];
    tok_tokenizer_t *t = load_spec(argv[1], path, sizeof path, &err);
    if (!t || tb_file_sha256(path, file_sum, &err)) {
        tok_free(t);
        return xp_die(&err);
    }
    const tok_vocab_t *v = tok_vocab(t);
    tok_vocab_checksum(v, vocab_sum);
    printf("file      %s\nformat    %s\nmodel     %s\nsize      %u ids\n",
           path, tok_format_name(tok_format(t)), tok_model_name(t), v->size);
    printf("sha256    %s (file)\nchecksum  %s (vocabulary)\n", file_sum, vocab_sum);
    print_specials(v, show);
    print_histogram(v);
    tok_free(t);
    return 0;
}

static int encode_usage(FILE *out)
{
    fprintf(out, "usage: tokbench encode SPEC [--pieces] [--add-special]\n"
                 "                       [--parse-special | --no-parse-special]\n"
                 "                       (TEXT | -f FILE)\n"
                 "       tokbench encode SPEC --lines [--threads N] [--add-special]\n"
                 "                       [--parse-special | --no-parse-special] -f FILE\n"
                 "       tokbench encode SPEC --pair [--types] [--add-special]\n"
                 "                       [--parse-special | --no-parse-special]\n"
                 "                       (TEXT_A TEXT_B | --lines -f FILE)\n\n"
                 "Encodes TEXT, or the bytes of FILE ('-' for standard input), and\n"
                 "prints the ids on one line.  --pieces prints one token per line\n"
                 "instead: id and its bytes, with control bytes escaped.\n"
                 "--lines encodes every line of FILE (its bytes up to the '\\n', which\n"
                 "is not encoded) as a text of its own and prints one line of ids\n"
                 "for each, in the file's order (an empty line for an empty text).\n"
                 "--threads N encodes them on N threads sharing the tokenizer\n"
                 "(default 1; 0: one per CPU); the output is the same.\n"
                 "--pair encodes two texts as one input (a query and a document),\n"
                 "as Hugging Face's encode(A, B): TEXT_A and TEXT_B, or with --lines\n"
                 "each line of FILE cut at its first tab.  --add-special puts the\n"
                 "post-processor's pair rule around them (TemplateProcessing's pair\n"
                 "template; Bert: [CLS] A [SEP] B [SEP]; Roberta: <s> A </s></s> B\n"
                 "</s>; only a tokenizer.json has one); without it, A's ids, then B's.\n"
                 "--types follows each line of ids with a tab and the type ids.\n\n"
                 "--add-special adds what the file's own rule adds (none by default):\n"
                 "  tokenizer.json  its post-processor (TemplateProcessing's single\n"
                 "                  template; Roberta/Bert: <s> </s>, [CLS] [SEP])\n"
                 "  GGUF            BOS if tokenizer.ggml.add_bos_token, EOS if\n"
                 "                  add_eos_token (absent: llama.cpp's default per\n"
                 "                  model); bert: [CLS] and [SEP]\n"
                 "  .model          the model's BOS and EOS (spm_encode bos:eos)\n"
                 "  tiktoken        nothing (no BOS)\n"
                 "--parse-special matches special tokens written in the text;\n"
                 "--no-parse-special leaves their text as text.  The default is the\n"
                 "reference's:\n"
                 "  tokenizer.json  parsed (Hugging Face's default; --no-parse-special\n"
                 "                  is its encode_special_tokens); added tokens not\n"
                 "                  marked special are always matched\n"
                 "  GGUF            not parsed (llama.cpp's parse_special=false):\n"
                 "                  control and unknown tokens; user-defined ones are\n"
                 "                  always matched\n"
                 "  tiktoken        not parsed (encode_ordinary); --parse-special is\n"
                 "                  allowed_special=\"all\"\n"
                 "  .model          never (SentencePiece does not parse control\n"
                 "                  symbols; --parse-special is refused)\n");
    return out == stdout ? 0 : 2;
}

static int read_input(const char *file, uint8_t **data, size_t *len, tb_err_t *err)
{
    if (strcmp(file, "-"))
        return tb_read_file(file, data, len, err);
    tb_buf_t b = {0};
    uint8_t chunk[1 << 16];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0)
        if (tb_buf_put(&b, chunk, n)) {
            tb_buf_free(&b);
            return tb_fail(err, "standard input: out of memory");
        }
    *data = b.data;
    *len = b.len;
    return 0;
}

static void print_ids(const tok_ids_t *ids)
{
    for (size_t i = 0; i < ids->len; i++)
        printf(i ? " %u" : "%u", ids->data[i]);
    putchar('\n');
}

/* --lines: the lines of data[0..len) encoded as a batch, printed in order. */
static int encode_lines(const tok_tokenizer_t *t, const char *file,
                        const uint8_t *data, size_t len, unsigned threads,
                        uint32_t flags, tb_err_t *err)
{
    TB_VEC(const uint8_t *) texts = {0};
    TB_VEC(size_t) lens = {0};
    int rc = 0;
    for (size_t at = 0; at < len && !rc;) {
        const uint8_t *nl = memchr(data + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - data) : len;
        if (tb_vec_push(&texts, data + at) || tb_vec_push(&lens, end - at))
            rc = tb_fail(err, "out of memory for the lines");
        at = end + 1;
    }
    tok_ids_t *outs = rc ? NULL : calloc(texts.len + 1, sizeof *outs);
    if (!rc && !outs)
        rc = tb_fail(err, "out of memory for %zu lines' ids", texts.len);
    size_t bad;
    if (!rc && tok_encode_batch(t, texts.data, lens.data, texts.len, threads, flags,
                                outs, &bad, err))
        rc = tb_wrap(err, "%s, line %zu", file, bad + 1);
    for (size_t i = 0; !rc && i < texts.len; i++)
        print_ids(&outs[i]);
    for (size_t i = 0; outs && i < texts.len; i++)
        free(outs[i].data);
    free(outs);
    free(texts.data);
    free(lens.data);
    return rc;
}

/* Prints ids, then a tab and their type ids if asked. */
static void print_pair(const tok_ids_t *ids, const tok_ids_t *types, int show_types)
{
    for (size_t i = 0; i < ids->len; i++)
        printf(i ? " %u" : "%u", ids->data[i]);
    for (size_t i = 0; show_types && i < types->len; i++)
        printf(i ? " %u" : "\t%u", types->data[i]);
    if (show_types && !types->len)
        putchar('\t');
    putchar('\n');
}

/* --pair: one pair (two texts), or with --lines each line's, cut at its
 * first tab. */
static int encode_pairs(const tok_tokenizer_t *t, const char *file,
                        const uint8_t *data, size_t len, const char *a,
                        const char *b, uint32_t flags, int show_types, tb_err_t *err)
{
    tok_ids_t ids = {0}, types = {0};
    int rc = 0;
    if (!file) {
        rc = tok_encode_pair(t, (const uint8_t *)a, strlen(a), (const uint8_t *)b,
                             strlen(b), flags, &ids, &types, err);
        if (!rc)
            print_pair(&ids, &types, show_types);
    }
    for (size_t at = 0, line = 1; file && at < len && !rc; line++) {
        const uint8_t *nl = memchr(data + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - data) : len;
        const uint8_t *tab = memchr(data + at, '\t', end - at);
        if (!tab)
            rc = tb_fail(err, "%s, line %zu: no tab between the two texts", file,
                         line);
        else if (tok_encode_pair(t, data + at, (size_t)(tab - (data + at)), tab + 1,
                                 (size_t)(data + end - tab - 1), flags, &ids, &types,
                                 err))
            rc = tb_wrap(err, "%s, line %zu", file, line);
        else
            print_pair(&ids, &types, show_types);
        ids.len = types.len = 0;
        at = end + 1;
    }
    free(ids.data);
    free(types.data);
    return rc;
}

/* --threads N: a count of threads, 0 for one per CPU. */
static int parse_threads(const char *s, unsigned *threads, tb_err_t *err)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v > 1024)
        return tb_fail(err, "--threads: '%s' is not a number of threads (0..1024)", s);
    *threads = (unsigned)v;
    return 0;
}

int xp_cmd_encode(int argc, char **argv)
{
    if (xp_wants_help(argc, argv))
        return encode_usage(stdout);
    int pieces = 0, lines = 0, at = 2, add = 0, parse = -1; /* -1: the default */
    int pair = 0, show_types = 0;
    unsigned threads = 1;
    const char *threads_arg = NULL;
    for (; at < argc && !strncmp(argv[at], "--", 2); at++) {
        if (!strcmp(argv[at], "--pieces"))
            pieces = 1;
        else if (!strcmp(argv[at], "--lines"))
            lines = 1;
        else if (!strcmp(argv[at], "--threads") && at + 1 < argc)
            threads_arg = argv[++at];
        else if (!strcmp(argv[at], "--add-special"))
            add = 1;
        else if (!strcmp(argv[at], "--parse-special"))
            parse = 1;
        else if (!strcmp(argv[at], "--no-parse-special"))
            parse = 0;
        else if (!strcmp(argv[at], "--pair"))
            pair = 1;
        else if (!strcmp(argv[at], "--types"))
            show_types = 1;
        else
            return encode_usage(stderr);
    }
    const char *file = NULL, *text = NULL, *text_b = NULL;
    if (argc - at == 2 && !strcmp(argv[at], "-f") && (lines || !pair))
        file = argv[at + 1];
    else if (argc - at == 1 && !lines && !pair)
        text = argv[at];
    else if (argc - at == 2 && !lines && pair) {
        text = argv[at];
        text_b = argv[at + 1];
    } else
        return encode_usage(stderr);
    if ((threads_arg && (!lines || pair)) || (lines && pieces) ||
        (pair && pieces) || (show_types && !pair))
        return encode_usage(stderr);
    tb_err_t err;
    if (threads_arg && parse_threads(threads_arg, &threads, &err))
        return xp_die(&err);
    char path[PATH_MAX];
    tok_tokenizer_t *t = load_spec(argv[1], path, sizeof path, &err);
    if (!t)
        return xp_die(&err);
    uint8_t *data = NULL;
    size_t len = text ? strlen(text) : 0;
    tok_ids_t ids = {0};
    int rc = 0;
    if (file && read_input(file, &data, &len, &err))
        rc = xp_die(&err);
    else {
        uint32_t flags = tok_encode_defaults(t);
        if (parse >= 0)
            flags = parse ? flags | TOK_PARSE_SPECIAL : flags & ~(uint32_t)TOK_PARSE_SPECIAL;
        if (add)
            flags |= TOK_ADD_SPECIAL;
        if (pair ? encode_pairs(t, file, data, len, text, text_b, flags,
                                show_types, &err)
            : lines ? encode_lines(t, file, data, len, threads, flags, &err)
                    : tok_encode_ex(t, data ? data : (const uint8_t *)text, len,
                                    flags, &ids, &err))
            rc = xp_die(&err);
    }
    for (size_t i = 0; !rc && i < ids.len; i++) {
        if (pieces) {
            size_t n;
            const uint8_t *s = tok_vocab_token(tok_vocab(t), ids.data[i], &n);
            printf("%u\t", ids.data[i]);
            print_escaped(stdout, s, n);
            putchar('\n');
        } else {
            printf(i ? " %u" : "%u", ids.data[i]);
        }
    }
    if (!rc && !pieces && !lines && !pair)
        putchar('\n');
    free(ids.data);
    free(data);
    tok_free(t);
    return rc;
}

static int decode_usage(FILE *out)
{
    fprintf(out, "usage: tokbench decode SPEC [--skip-special] ID...\n\n"
                 "Decodes the ids (decimal, as arguments or '-' to read them from\n"
                 "standard input) and writes the resulting bytes to standard output\n"
                 "as the reference decoder produces them.  --skip-special leaves out\n"
                 "the special tokens: Hugging Face's added tokens marked special\n"
                 "(decode with skip_special_tokens), a GGUF's control and unknown\n"
                 "tokens (llama.cpp's detokenize without unparse_special), tiktoken's\n"
                 "special tokens, a SentencePiece model's control symbols.\n");
    return out == stdout ? 0 : 2;
}

/* Parses one decimal id; fails naming the argument. */
static int parse_id(const char *s, uint32_t size, tok_ids_t *ids, tb_err_t *err)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v >= size)
        return tb_fail(err, "'%s' is not a token id of this vocabulary (0..%u)", s,
                       size ? size - 1 : 0);
    if (tb_vec_push(ids, (uint32_t)v))
        return tb_fail(err, "out of memory");
    return 0;
}

static int read_ids(FILE *in, uint32_t size, tok_ids_t *ids, tb_err_t *err)
{
    char word[32];
    while (fscanf(in, "%31s", word) == 1)
        if (parse_id(word, size, ids, err))
            return tb_wrap(err, "standard input");
    return 0;
}

int xp_cmd_decode(int argc, char **argv)
{
    if (xp_wants_help(argc, argv))
        return decode_usage(stdout);
    int skip = argc > 2 && !strcmp(argv[2], "--skip-special");
    if (argc < 3 + skip)
        return decode_usage(stderr);
    tb_err_t err;
    char path[PATH_MAX];
    tok_tokenizer_t *t = load_spec(argv[1], path, sizeof path, &err);
    if (!t)
        return xp_die(&err);
    uint32_t size = tok_vocab(t)->size;
    tok_ids_t ids = {0};
    tb_buf_t out = {0};
    int rc = 0;
    for (int i = 2 + skip; !rc && i < argc; i++)
        rc = strcmp(argv[i], "-") ? parse_id(argv[i], size, &ids, &err)
                                  : read_ids(stdin, size, &ids, &err);
    if (!rc)
        rc = tok_decode_ex(t, ids.data, ids.len, skip ? TOK_SKIP_SPECIAL : 0,
                           &out, &err);
    if (rc)
        rc = xp_die(&err);
    else
        fwrite(out.data, 1, out.len, stdout);
    free(ids.data);
    tb_buf_free(&out);
    tok_free(t);
    return rc;
}
