/*
 * tiktoken: loads OpenAI tiktoken rank files into a byte-level BPE
 * tokenizer, in both forms that exist:
 *
 *   plain ".tiktoken": one token per line, "BASE64 RANK".  The file carries
 *   no pattern and no special tokens; they come from the encoding's name,
 *   taken from the file name (cl100k_base.tiktoken, ...).
 *
 *   the npm `tiktoken` package's JSON (encoders/NAME.json):
 *   {"pat_str": REGEX, "special_tokens": {TEXT: RANK, ...},
 *    "bpe_ranks": TEXT}.  bpe_ranks is parsed by the package's WASM
 *   constructor (Tiktoken(bpe_ranks, special_tokens, pat_str)) as lines of
 *   either the plain form "BASE64 RANK" or a compact run
 *   "! OFFSET B64_0 B64_1 ...", which gives B64_i the rank OFFSET + i.  The
 *   shipped files are one compact line "! 0 ..." holding every rank (this
 *   reading of the format was checked token by token against the package's
 *   decode_single_token_bytes).
 *
 * tiktoken encodes a regex piece that is itself a token as that token, and
 * otherwise merges, leftmost first, the adjacent pair whose concatenated
 * bytes have the lowest rank.  That is Hugging Face BPE with ignore_merges
 * and, for every token T and every split T = A + B into two tokens, the
 * merge (A, B) -> T with priority rank(T): the encoder finds T by A's and
 * B's bytes in the index by bytes (TOK_RANK_ID), so no table of those
 * merges (2.4 million splits looked up for o200k) is made.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../base/jsontext.h"
#include "tok_internal.h"

/* What the plain form leaves to the encoding's name: the split pattern and
 * the special tokens (values from the npm tiktoken 1.0.22 registry.json). */
typedef struct {
    const char *text;
    uint32_t rank;
} tt_special_t;

typedef struct {
    const char *name;
    const char *pattern;
    tt_special_t specials[6];
} tt_encoding_t;

#define TT_PAT_R50K                                                          \
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+"      \
    "|\\s+(?!\\S)|\\s+"

static const tt_encoding_t tt_encodings[] = {
    {"cl100k_base",
     "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
     "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
     {{"<|endoftext|>", 100257}, {"<|fim_prefix|>", 100258},
      {"<|fim_middle|>", 100259}, {"<|fim_suffix|>", 100260},
      {"<|endofprompt|>", 100276}, {NULL, 0}}},
    {"o200k_base",
     "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*"
     "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
     "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+"
     "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
     "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)"
     "|\\s+",
     {{"<|endoftext|>", 199999}, {"<|endofprompt|>", 200018}, {NULL, 0}}},
    {"p50k_edit", TT_PAT_R50K,
     {{"<|endoftext|>", 50256}, {"<|fim_prefix|>", 50281},
      {"<|fim_middle|>", 50282}, {"<|fim_suffix|>", 50283}, {NULL, 0}}},
    {"p50k_base", TT_PAT_R50K, {{"<|endoftext|>", 50256}, {NULL, 0}}},
    {"r50k_base", TT_PAT_R50K, {{"<|endoftext|>", 50256}, {NULL, 0}}},
    {"gpt2", TT_PAT_R50K, {{"<|endoftext|>", 50256}, {NULL, 0}}},
};

/* The encoding whose name the file's base name starts with, or NULL. */
static const tt_encoding_t *tt_encoding_for(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (size_t i = 0; i < sizeof tt_encodings / sizeof *tt_encodings; i++)
        if (!strncmp(base, tt_encodings[i].name, strlen(tt_encodings[i].name)))
            return &tt_encodings[i];
    return NULL;
}

/* ---- base64 (RFC 4648 standard alphabet, padded) --------------------- */

static int b64_value(uint8_t c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Decodes s[0..n) into out (room for n bytes); returns the byte count or
 * -1 if s is not padded standard base64. */
static long b64_decode(const uint8_t *s, size_t n, uint8_t *out)
{
    if (n == 0 || n % 4)
        return -1;
    size_t pad = s[n - 1] == '=' ? (s[n - 2] == '=' ? 2 : 1) : 0;
    long len = 0;
    for (size_t i = 0; i < n; i += 4) {
        uint32_t v = 0;
        for (size_t k = 0; k < 4; k++) {
            int d = i + k >= n - pad ? 0 : b64_value(s[i + k]);
            if (d < 0)
                return -1;
            v = v << 6 | (uint32_t)d;
        }
        size_t take = i + 4 < n ? 3 : 3 - pad;
        for (size_t k = 0; k < take; k++)
            out[len++] = (uint8_t)(v >> (16 - 8 * k));
    }
    return len;
}

/* ---- rank lines ----------------------------------------------------- */

/* The tokens go into the vocabulary's builder as they are read (a list of
 * their own beside it held them twice: cold peaks cl100k 8.8 -> 6.0 MiB,
 * o200k 17.8 -> 12.4), and `seen` keeps one bit a rank for the checks
 * that need all of them (twice, gaps).  A message that names a rank's
 * line finds it by reading the ranks again (tt_line_of): a table of every
 * rank's line, kept for messages only, was 4 bytes a token of the peak. */
typedef struct {
    const char *path;
    const char *where; /* "" for the plain file, "bpe_ranks " for JSON */
    tok_tokenizer_t *t;
    const uint8_t *text; /* the rank lines, text_len bytes */
    size_t text_len;
    const uint8_t *released; /* text before this went back (tt_release_read) */
    tok_vocab_builder_t *b;
    TB_VEC(uint64_t) seen; /* bit r: rank r read */
    uint32_t max_rank;     /* the highest rank read */
    size_t count;          /* tokens read */
    uint8_t *scratch; /* decode room: as long as the longest field */
    size_t scratch_len;
    int looking;  /* tt_line_of's pass: find `want`'s line, add nothing */
    uint32_t want, found;
} tt_parser_t;

static void tt_parser_free(tt_parser_t *p)
{
    tok_vocab_builder_free(p->b);
    free(p->seen.data);
    free(p->scratch);
    memset(p, 0, sizeof *p);
}

static int tt_seen(const tt_parser_t *p, uint32_t rank)
{
    return rank / 64 < p->seen.len && (p->seen.data[rank / 64] >> (rank % 64) & 1);
}

/* Marks rank read; -1 out of memory. */
static int tt_mark(tt_parser_t *p, uint32_t rank)
{
    size_t have = p->seen.len, need = (size_t)rank / 64 + 1;
    if (need > have) {
        if (tb_vec_reserve(&p->seen, need - have))
            return -1;
        memset(p->seen.data + have, 0, (need - have) * sizeof *p->seen.data);
        p->seen.len = need;
    }
    p->seen.data[rank / 64] |= (uint64_t)1 << (rank % 64);
    return 0;
}

/* The source's pages that the ranks are read past go back a quarter
 * megabyte at a time, when the ranks are the mapped file's (not a copy):
 * the vocabulary's arrays fill as the file empties, rather than beside
 * all of it (o200k: 2.3 MB). */
static void tt_release_read(tt_parser_t *p, const uint8_t *at)
{
    enum { STEP = 256 << 10 };
    const uint8_t *src = p->t ? p->t->src : NULL;
    if (!src || at < src || at > src + p->t->src_len || at - p->released < STEP)
        return;
    tok_release_source(p->t, (size_t)(p->released - src), (size_t)(at - src));
    p->released = at;
}

/* Parses a decimal rank; fails on anything but digits or a value at or past
 * TOK_VOCAB_MAX_SIZE (a rank is a token id). */
static int tt_parse_rank(const uint8_t *s, size_t n, uint32_t *rank)
{
    if (n == 0 || n > 9)
        return -1;
    uint32_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (uint32_t)(s[i] - '0');
    }
    if (v >= TOK_VOCAB_MAX_SIZE)
        return -1;
    *rank = v;
    return 0;
}

static uint32_t tt_line_of(const tt_parser_t *p, uint32_t rank);

static int tt_add_token(tt_parser_t *p, const uint8_t *b64, size_t n,
                        uint32_t rank, uint32_t line, size_t field,
                        tb_err_t *err)
{
    if (p->looking) /* -1 stops the reading at the line sought */
        return rank == p->want ? (p->found = line, -1) : 0;
    tt_release_read(p, b64);
    if (n > p->scratch_len) {
        uint8_t *s = realloc(p->scratch, n);
        if (!s)
            return tb_fail(err, "%s: out of memory", p->path);
        p->scratch = s;
        p->scratch_len = n;
    }
    long len = b64_decode(b64, n, p->scratch);
    if (len < 0)
        return tb_fail(err, "%s: %sline %u, field %zu: bad base64 '%.*s'",
                       p->path, p->where, line, field, n > 40 ? 40 : (int)n,
                       (const char *)b64);
    if (tt_seen(p, rank))
        return tb_fail(err, "%s: %sline %u: rank %u is given twice (first "
                            "on line %u)",
                       p->path, p->where, line, rank, tt_line_of(p, rank));
    if (tt_mark(p, rank))
        return tb_fail(err, "%s: out of memory", p->path);
    if (rank > p->max_rank || !p->count)
        p->max_rank = rank;
    p->count++;
    if (tok_vocab_add(p->b, rank, p->scratch, (size_t)len, -(float)rank,
                      TOK_NORMAL, 0, err))
        return tb_wrap(err, "%s", p->path);
    return 0;
}

/* Splits s[0..n) at spaces into at most `max` fields. */
static size_t tt_fields(const uint8_t *s, size_t n, const uint8_t **f,
                        size_t *flen, size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k < max;) {
        while (i < n && s[i] == ' ')
            i++;
        if (i == n)
            break;
        size_t j = i;
        while (j < n && s[j] != ' ')
            j++;
        f[k] = s + i;
        flen[k++] = j - i;
        i = j;
    }
    return k;
}

/* One line: "BASE64 RANK" or "! OFFSET BASE64...". */
static int tt_parse_line(tt_parser_t *p, const uint8_t *s, size_t n,
                         uint32_t line, tb_err_t *err)
{
    const uint8_t *f[2];
    size_t flen[2];
    size_t k = tt_fields(s, n, f, flen, 2);
    if (k == 0)
        return 0;
    uint32_t rank;
    if (k < 2 || tt_parse_rank(f[1], flen[1], &rank))
        return tb_fail(err, "%s: %sline %u: missing or bad rank (want "
                            "'BASE64 RANK' with RANK below %u)",
                       p->path, p->where, line, TOK_VOCAB_MAX_SIZE);
    const uint8_t *rest = f[1] + flen[1];
    size_t left = (size_t)(s + n - rest);
    if (flen[0] == 1 && f[0][0] == '!') {
        size_t field = 3;
        for (size_t i = 0; i < left; field++) {
            while (i < left && rest[i] == ' ')
                i++;
            if (i == left)
                break;
            size_t j = i;
            while (j < left && rest[j] != ' ')
                j++;
            if ((uint64_t)rank + field - 3 >= TOK_VOCAB_MAX_SIZE)
                return tb_fail(err, "%s: %sline %u, field %zu: rank past %u",
                               p->path, p->where, line, field,
                               TOK_VOCAB_MAX_SIZE);
            if (tt_add_token(p, rest + i, j - i, rank + (uint32_t)(field - 3),
                             line, field, err))
                return -1;
            i = j;
        }
        return 0;
    }
    if (tt_fields(rest, left, f, flen, 1))
        return tb_fail(err, "%s: %sline %u: more than two fields", p->path,
                       p->where, line);
    return tt_add_token(p, s + (f[0] - s), flen[0], rank, line, 1, err);
}

/* Room for the tokens of s[0..n) in the builder and `seen`, counted by
 * their separators (a field or more a token), so that neither grows by
 * copies; the specials come after, with a little room of their own. */
static int tt_reserve(tt_parser_t *p, const uint8_t *s, size_t n)
{
    enum { SLACK = 256 };
    size_t fields = 1;
    for (size_t i = 0; i < n; i++)
        fields += s[i] == ' ' || s[i] == '\n';
    tok_vocab_builder_reserve(p->b, fields + SLACK, n / 4 * 3 + 4096);
    return tb_vec_reserve(&p->seen, fields / 64 + 1);
}

/* Every line of p->text in turn, to the first that fails. */
static int tt_read_lines(tt_parser_t *p, tb_err_t *err)
{
    const uint8_t *s = p->text;
    size_t n = p->text_len;
    uint32_t line = 1;
    for (size_t i = 0; i < n; line++) {
        const uint8_t *nl = memchr(s + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - s) : n;
        size_t stop = end > i && s[end - 1] == '\r' ? end - 1 : end;
        if (tt_parse_line(p, s + i, stop - i, line, err))
            return -1;
        i = end + 1;
    }
    return 0;
}

/* The line that gives rank first, read again from the text: the lines
 * before the one a message is about were read without fault once. */
static uint32_t tt_line_of(const tt_parser_t *p, uint32_t rank)
{
    tt_parser_t q = {.path = p->path, .where = p->where, .text = p->text,
                     .text_len = p->text_len, .looking = 1, .want = rank};
    tb_err_t ignored;
    (void)tt_read_lines(&q, &ignored);
    return q.found;
}

static int tt_parse_lines(tt_parser_t *p, const uint8_t *s, size_t n,
                          tb_err_t *err)
{
    if (!(p->b = tok_vocab_builder_new()) || tt_reserve(p, s, n))
        return tb_fail(err, "%s: out of memory", p->path);
    p->text = p->released = s;
    p->text_len = n;
    if (tt_read_lines(p, err))
        return -1;
    if (p->count == 0)
        return tb_fail(err, "%s: %sno tokens", p->path, p->where);
    return 0;
}

/* ---- checks and the vocabulary -------------------------------------- */

/* Ranks must be exactly 0..n-1 with no special token among them. */
static int tt_check_ranks(const tt_parser_t *p, const tt_special_t *sp,
                          size_t nsp, tb_err_t *err)
{
    uint32_t max = p->max_rank;
    for (uint32_t r = 0; p->count != (size_t)max + 1 && r <= max; r++)
        if (!tt_seen(p, r))
            return tb_fail(err, "%s: %srank %u is missing (ranks must run "
                                "0..%u without gaps)",
                           p->path, p->where, r, max);
    for (size_t i = 0; i < nsp; i++)
        if (sp[i].rank <= max)
            return tb_fail(err, "%s: special token '%s' has rank %u, which "
                                "line %u already gives an ordinary token",
                           p->path, sp[i].text, sp[i].rank,
                           tt_line_of(p, sp[i].rank));
    return 0;
}

/* The read tokens and the specials into t->vocab (the builder goes). */
static int tt_build_vocab(tok_tokenizer_t *t, tt_parser_t *p,
                          const tt_special_t *sp, size_t nsp, tb_err_t *err)
{
    for (size_t i = 0; i < nsp; i++)
        if (tok_vocab_add(p->b, sp[i].rank, (const uint8_t *)sp[i].text,
                          strlen(sp[i].text), 0, TOK_CONTROL, 1, err))
            return tb_wrap(err, "%s", p->path);
    tok_vocab_builder_t *b = p->b;
    p->b = NULL;
    return tok_vocab_finish(b, &t->vocab, err) ? tb_wrap(err, "%s", p->path)
                                               : 0;
}

/* Two ranks with the same bytes would make tiktoken's encoder and decoder
 * disagree; refuse them, naming both lines. */
static int tt_check_unique(const tok_tokenizer_t *t, const tt_parser_t *p,
                           tb_err_t *err)
{
    const tok_vocab_t *v = &t->vocab;
    for (uint32_t r = 0; r <= p->max_rank; r++) {
        size_t len;
        const uint8_t *s = tok_vocab_token(v, r, &len);
        int32_t first = tok_vocab_find(v, s, len);
        if (first != (int32_t)r)
            return tb_fail(err, "%s: %sline %u: the bytes of rank %u are "
                                "already rank %d",
                           p->path, p->where, tt_line_of(p, r), r, first);
    }
    return 0;
}

static int tt_add_pretokenizer(tok_tokenizer_t *t, const char *path,
                               const char *pattern, tb_err_t *err)
{
    tok_pre_t pre;
    memset(&pre, 0, sizeof pre);
    pre.kind = TOK_PRE_SPLIT;
    pre.behavior = TOK_SPLIT_ISOLATED;
    pre.invert = 0;
    int rc = 0;
    if (tok_pre_compile(&pre, (const uint8_t *)pattern, strlen(pattern), 0,
                        err))
        rc = tb_wrap(err, "%s: pat_str", path);
    else if (tb_vec_push(&t->pres, pre))
        rc = tb_fail(err, "%s: out of memory", path);
    if (rc) { /* the step is not in t->pres: free what compiling made */
        tb_buf_free(&pre.pattern);
        pcre2_code_free(pre.re);
    }
    return rc;
}

/* Special tokens are added tokens marked special: matched in the text only
 * under TOK_PARSE_SPECIAL (allowed_special="all"), plain text otherwise
 * (encode_ordinary).  tiktoken has no BOS: nothing to add. */
static int tt_add_specials(tok_tokenizer_t *t, const char *path,
                           const tt_special_t *sp, size_t nsp, tb_err_t *err)
{
    for (size_t i = 0; i < nsp; i++) {
        tok_added_t a;
        memset(&a, 0, sizeof a);
        a.id = sp[i].rank;
        a.special = 1;
        if (tb_buf_put(&a.content, sp[i].text, strlen(sp[i].text)) ||
            tb_vec_push(&t->added, a)) {
            tb_buf_free(&a.content);
            return tb_fail(err, "%s: out of memory", path);
        }
        if (!strcmp(sp[i].text, "<|endoftext|>"))
            t->vocab.eos = (int32_t)sp[i].rank;
    }
    return 0;
}

/* Everything after the token list is read, the same for both forms. */
static int tt_finish(tok_tokenizer_t *t, tt_parser_t *p, const char *pattern,
                     const tt_special_t *sp, size_t nsp, tb_err_t *err)
{
    /* The ranks are in the builder and the pattern and the specials' texts
     * are copies (or static): the file's pages go before the vocabulary's
     * arrays come, so that the peak does not hold both (cl100k's 1.1 MB). */
    tok_release_source(t, 0, t->src_len);
    if (tt_check_ranks(p, sp, nsp, err) || tt_build_vocab(t, p, sp, nsp, err) ||
        tt_check_unique(t, p, err))
        return -1;
    t->model = TOK_MODEL_BPE;
    t->bpe.byte_level = 1;
    t->bpe.ignore_merges = 1; /* a piece that is a token stays whole */
    t->bpe.rank_by = TOK_RANK_ID;
    t->bpe.unk = -1;
    t->match_added = 1;
    /* encode_ordinary takes a Unicode string: invalid UTF-8 has no
     * reference behaviour to match. */
    t->needs_utf8 = 1;
    snprintf(t->model_name, sizeof t->model_name, "byte-level bpe");
    if (tt_add_specials(t, p->path, sp, nsp, err) ||
        tt_add_pretokenizer(t, p->path, pattern, err))
        return -1;
    return 0;
}

/* ---- the two forms -------------------------------------------------- */

static int tt_load_plain(tok_tokenizer_t *t, tt_parser_t *p,
                         const uint8_t *data, size_t len, tb_err_t *err)
{
    const tt_encoding_t *enc = tt_encoding_for(p->path);
    if (!enc)
        return tb_fail(err, "%s: a plain tiktoken file has no split pattern; "
                            "name it after its encoding (cl100k_base, "
                            "o200k_base, p50k_base, p50k_edit, r50k_base, "
                            "gpt2) so the pattern can be chosen",
                       p->path);
    if (tt_parse_lines(p, data, len, err))
        return -1;
    size_t nsp = 0;
    while (enc->specials[nsp].text)
        nsp++;
    return tt_finish(t, p, enc->pattern, enc->specials, nsp, err);
}

/* special_tokens: {TEXT: RANK}; texts borrowed from the JSON tree. */
static int tt_json_specials(json_t *obj, const char *path, tt_special_t **out,
                            size_t *n, tb_err_t *err)
{
    *n = 0;
    *out = NULL;
    if (!obj)
        return 0;
    if (!json_is_object(obj))
        return tb_fail(err, "%s: special_tokens is not an object", path);
    *out = calloc(json_object_size(obj) + 1, sizeof **out);
    if (!*out)
        return tb_fail(err, "%s: out of memory", path);
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val) {
        json_int_t r = json_is_integer(val) ? json_integer_value(val) : -1;
        if (r < 0 || r >= (json_int_t)TOK_VOCAB_MAX_SIZE)
            return tb_fail(err, "%s: special_tokens.%s: want a rank from 0 "
                                "to %u",
                           path, key, TOK_VOCAB_MAX_SIZE - 1);
        (*out)[(*n)++] = (tt_special_t){key, (uint32_t)r};
    }
    return 0;
}

/* The JSON form read by jansson: the scanner's way (tt_scan_json) refused
 * the text, and the messages here name what is wrong with it. */
static int tt_load_tree(tok_tokenizer_t *t, tt_parser_t *p,
                        const uint8_t *data, size_t len, tb_err_t *err)
{
    json_error_t je;
    json_t *root = json_loadb((const char *)data, len, 0, &je);
    if (!root)
        return tb_fail(err, "%s: byte %d (line %d): %s", p->path, je.position,
                       je.line, je.text);
    int rc = -1;
    tt_special_t *sp = NULL;
    size_t nsp = 0;
    json_t *pat = json_object_get(root, "pat_str");
    json_t *ranks = json_object_get(root, "bpe_ranks");
    if (!json_is_string(pat))
        tb_fail(err, "%s: pat_str is missing or not a string", p->path);
    else if (!json_is_string(ranks))
        tb_fail(err, "%s: bpe_ranks is missing or not a string", p->path);
    else if (!tt_json_specials(json_object_get(root, "special_tokens"),
                               p->path, &sp, &nsp, err)) {
        p->where = "bpe_ranks ";
        rc = tt_parse_lines(p, (const uint8_t *)json_string_value(ranks),
                            json_string_length(ranks), err);
        if (!rc)
            rc = tt_finish(t, p, json_string_value(pat), sp, nsp, err);
    }
    free(sp);
    json_decref(root);
    return rc;
}

/* What tt_scan_json reads: the pattern and the specials' texts copied
 * with a NUL after them (tt_finish takes C strings), the ranks in place. */
enum { TT_SCAN_SPECIALS = 64 };
typedef struct {
    const char *pat;
    const char *ranks;
    size_t ranks_len;
    tt_special_t sp[TT_SCAN_SPECIALS];
    size_t nsp;
} tt_scanned_t;

/* The string at the read position copied to *names with a NUL after it
 * (never longer than its JSON text, so a buffer the text's size holds
 * them all); NULL for one holding a NUL, which jansson refuses. */
static const char *tt_scan_text(tb_json_scan_t *s, char **names)
{
    const char *str;
    size_t n;
    if (tb_json_string(s, &str, &n) || memchr(str, 0, n))
        return NULL;
    char *d = *names;
    memcpy(d, str, n);
    d[n] = 0;
    *names += n + 1;
    return d;
}

static int tt_scan_specials(tb_json_scan_t *s, tt_scanned_t *r, char **names)
{
    if (!tb_json_eat(s, '{'))
        return -1;
    if (tb_json_eat(s, '}'))
        return 0;
    do {
        const char *text = tt_scan_text(s, names);
        uint32_t rank;
        if (!text || !tb_json_eat(s, ':') ||
            tb_json_uint(s, TOK_VOCAB_MAX_SIZE - 1, &rank) ||
            r->nsp == TT_SCAN_SPECIALS)
            return -1;
        for (size_t i = 0; i < r->nsp; i++)
            if (!strcmp(r->sp[i].text, text))
                return -1; /* given twice: the tree keeps the last */
        r->sp[r->nsp++] = (tt_special_t){text, rank};
    } while (tb_json_eat(s, ','));
    return tb_json_eat(s, '}') ? 0 : -1;
}

/* The npm file read by the scanner (base/jsontext.h), as the package
 * writes it: pat_str, bpe_ranks and special_tokens (which may be left
 * out), each once, nothing else.  jansson took 150 instructions a byte
 * over cl100k's megabyte of ranks, a third of its load.  out and names
 * have len bytes and len + 1.  0, or -1 where the tree must read it. */
static int tt_scan_json(const uint8_t *data, size_t len, char *out,
                        char *names, tt_scanned_t *r)
{
    tb_json_scan_t s = {.t = (const char *)data, .n = len, .out = out,
                        .out_cap = len};
    unsigned seen = 0;
    if (!tb_json_eat(&s, '{'))
        return -1;
    do {
        const char *k;
        size_t kl;
        if (tb_json_string(&s, &k, &kl) || !tb_json_eat(&s, ':'))
            return -1;
        unsigned which = kl == 7 && !memcmp(k, "pat_str", 7)           ? 1
                         : kl == 9 && !memcmp(k, "bpe_ranks", 9)       ? 2
                         : kl == 14 && !memcmp(k, "special_tokens", 14) ? 4
                                                                        : 0;
        if (!which || (seen & which))
            return -1;
        seen |= which;
        int bad = which == 1 ? !(r->pat = tt_scan_text(&s, &names))
                  : which == 4
                      ? tt_scan_specials(&s, r, &names)
                      : tb_json_string(&s, &r->ranks, &r->ranks_len) ||
                            memchr(r->ranks, 0, r->ranks_len);
        if (bad)
            return -1;
    } while (tb_json_eat(&s, ','));
    return tb_json_eat(&s, '}') && tb_json_peek(&s) < 0 && (seen & 3) == 3 ? 0 : -1;
}

static int tt_load_json(tok_tokenizer_t *t, tt_parser_t *p,
                        const uint8_t *data, size_t len, tb_err_t *err)
{
    char *buf = malloc(2 * len + 1); /* pages only where strings go */
    tt_scanned_t r = {0};
    int rc;
    if (buf && !tt_scan_json(data, len, buf, buf + len, &r)) {
        p->where = "bpe_ranks ";
        rc = tt_parse_lines(p, (const uint8_t *)r.ranks, r.ranks_len, err) ||
                     tt_finish(t, p, r.pat, r.sp, r.nsp, err)
                 ? -1
                 : 0;
    } else {
        rc = tt_load_tree(t, p, data, len, err);
    }
    free(buf);
    return rc;
}

int tok_load_tiktoken(tok_tokenizer_t *t, const char *path,
                      const uint8_t *data, size_t len, tb_err_t *err)
{
    tt_parser_t p;
    memset(&p, 0, sizeof p);
    p.path = path;
    p.where = "";
    p.t = t;
    size_t i = 0;
    while (i < len && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' ||
                       data[i] == '\t'))
        i++;
    int rc = i < len && data[i] == '{' ? tt_load_json(t, &p, data, len, err)
                                       : tt_load_plain(t, &p, data, len, err);
    tt_parser_free(&p);
    return rc;
}
