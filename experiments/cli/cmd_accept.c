/*
 * cmd_accept: `tokbench accept SPEC --grammar FILE TEXT`, a text driven
 * through a grammar's matcher (grammar/match.h) token by token, as a
 * decoding loop would: SPEC's tokenizer encodes the text, each token is
 * consumed in turn, and the first refused one is reported with its byte
 * offset.  --masks also computes the mask before every token (and after the
 * last), checks that the token is in it, and times the masks.
 *
 * A file is read, encoded and fed in pieces (PIECE bytes, cut before a
 * space that ends a word, as byte-level pre-tokenizers split), and the
 * matcher keeps only the history it could roll back over: a text of any
 * length goes through in the memory its grammar's states need.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../base/file.h"
#include "../../grammar/load.h"
#include "../../grammar/match.h"
#include "cli.h"
#include "../drivers/setup.h"

static int accept_usage(FILE *out)
{
    fprintf(out,
            "usage: tokbench accept SPEC (--grammar FILE [--format lark|gbnf|schema]\n"
            "                       [--start RULE] [--semantics default|llguidance|lark] |\n"
            "                       --schema FILE) (TEXT | -f FILE) [--masks [--slicer]]\n"
            "                       [--layout L] [--times] [--format-annotation] [--remote-dir DIR]\n\n"
            "Encodes TEXT (or the bytes of FILE) with SPEC's tokenizer, no special\n"
            "tokens added, and feeds the tokens one by one to the matcher of the\n"
            "grammar (docs/grammars.md; the format from FILE's extension unless\n"
            "--format says it: .lark, .gbnf, or a JSON Schema .json; --start names\n"
            "a Lark grammar's start rule, start by default).  Prints how\n"
            "many tokens were accepted, the first refused token with its byte offset\n"
            "in the text, whether the text is a sentence, and the bytes the grammar\n"
            "forces next.  --masks computes the token mask before every token and\n"
            "after the last over layout L (default dfs), checks each token is in its\n"
            "mask, and prints the masks' times; --slicer computes them through the\n"
            "default JSON string slices (lexer/slicer.h), as the MaskBench driver\n"
            "does; --times prints every mask's time, one line per token.  A FILE\n"
            "over 1 MiB is read and encoded a piece at a time (cut before a space\n"
            "after a word): the tokens at a cut may differ from the whole text's.\n"
            "A Lark grammar's special tokens (<|name|>, <[ids]>) are ids of SPEC's\n"
            "vocabulary: a token where the grammar takes one of them is read by id.\n"
            XP_SCHEMA_ARGS_HELP "\n" XP_SEMANTICS_HELP "\n"
            "Exit status: 0 the text is a sentence, 3 a token is refused or the text\n"
            "is only a prefix of a sentence, 1 an error, 2 a usage error.\n");
    return out == stdout ? 0 : 2;
}

typedef struct {
    const char *spec, *start, *grammar, *format, *text, *file, *layout;
    int masks, slicer, times;
    int semantics; /* xp_semantics_arg's */
    gr_schema_opts_t schema;
} accept_args_t;

static int parse_args(int argc, char **argv, accept_args_t *a)
{
    *a = (accept_args_t){.layout = "dfs"};
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int took = xp_schema_arg(argc, argv, i, &a->schema);
        if (!took && (took = xp_semantics_arg(argc, argv, i, &a->semantics)) < 0)
            return -1;
        if (took)
            i += took - 1;
        else if (!strcmp(argv[i], "--grammar") && v)
            a->grammar = v, i++;
        else if (!strcmp(argv[i], "--schema") && v)
            a->grammar = v, a->format = "schema", i++;
        else if (!strcmp(argv[i], "--format") && v)
            a->format = v, i++;
        else if (!strcmp(argv[i], "--start") && v)
            a->start = v, i++;
        else if (!strcmp(argv[i], "-f") && v)
            a->file = v, i++;
        else if (!strcmp(argv[i], "--layout") && v)
            a->layout = v, i++;
        else if (!strcmp(argv[i], "--masks"))
            a->masks = 1;
        else if (!strcmp(argv[i], "--slicer"))
            a->slicer = a->masks = 1;
        else if (!strcmp(argv[i], "--times"))
            a->times = a->masks = 1;
        else if (argv[i][0] != '-' && !a->spec)
            a->spec = argv[i];
        else if (argv[i][0] != '-' && !a->text)
            a->text = argv[i];
        else
            return -1;
    }
    if (xp_schema_args_set(&a->schema) && (!a->format || strcmp(a->format, "schema")))
        return -1; /* an option of JSON Schemas only */
    return a->spec && a->grammar && !a->text != !a->file ? 0 : -1;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The masks' times, microseconds: first, then median, p99 and max of all. */
static void print_times(double *us, size_t n)
{
    double first = us[0];
    qsort(us, n, sizeof *us, cmp_double);
    printf("masks      %zu: first %.1f us; median %.1f us, p99 %.1f us, max %.1f us\n", n,
           first, us[n / 2], us[(size_t)((double)(n - 1) * 0.99)], us[n - 1]);
}

/* How far the text has gone through the matcher. */
typedef struct {
    size_t tokens, bytes; /* consumed */
    int refused;          /* the token at `tokens` was refused ... */
    uint32_t id;          /* ... this one, */
    size_t in_token;      /* at this byte of it */
    size_t encoded;       /* tokens of the pieces read */
    TB_VEC(double) us;    /* with --masks: every mask's time, microseconds */
} progress_t;

/* Runs a piece's tokens through the matcher, stopping at a refused one.
 * With a trie, a mask before each token (and after the last, if the piece
 * is the last) is checked and timed. */
static int drive(gr_matcher_t *m, const tok_vocab_t *v, const uint32_t *ids, size_t n,
                 int last, const trie_t *trie, progress_t *p, tb_err_t *err)
{
    tb_bitset_t mask = {0};
    if (trie && (tb_bitset_init(&mask, trie_mask_bits(trie)) ||
                 tb_vec_reserve(&p->us, n + 1)))
        return tb_fail(err, "out of memory");
    p->encoded += n;
    int rc = 0;
    for (size_t k = 0; k <= n && !rc; k++) {
        if (trie && (k < n || last)) {
            double t0 = xp_now_ns();
            rc = gr_matcher_mask(m, trie, &mask, NULL, err);
            p->us.data[p->us.len++] = (xp_now_ns() - t0) / 1e3;
        }
        if (rc || k == n)
            break;
        size_t len;
        const uint8_t *s = tok_vocab_token(v, ids[k], &len);
        int r = gr_matcher_consume_id(m, ids[k], s, len, &p->in_token, err);
        if (r < 0)
            rc = -1;
        else if (trie && (r == 0) != tb_bitset_get(&mask, ids[k]))
            rc = tb_fail(err, "internal: token #%zu (id %u) is %s by the matcher but %s "
                         "the mask", p->tokens, ids[k], r ? "refused" : "accepted",
                         r ? "in" : "not in");
        else if (r == 1) {
            p->refused = 1;
            p->id = ids[k];
            break;
        } else {
            p->tokens++;
            p->bytes += len;
        }
    }
    tb_bitset_free(&mask);
    return rc;
}

/* Prints the verdict; returns the exit status. */
static int report(gr_matcher_t *m, const tok_vocab_t *v, const progress_t *p, tb_err_t *err)
{
    if (p->refused) {
        size_t len;
        const uint8_t *s = tok_vocab_token(v, p->id, &len);
        printf("refused    token #%zu (id %u, ", p->tokens, p->id);
        xp_print_quoted(s, len);
        printf(") at byte %zu of the text (byte %zu of the token); the %zu tokens before "
               "it are a prefix of a sentence\n", p->bytes + p->in_token, p->in_token,
               p->tokens);
        return 3;
    }
    tb_buf_t forced = {0};
    if (gr_matcher_forced(m, 256, &forced, err)) {
        tb_buf_free(&forced);
        return xp_die(err);
    }
    int sentence = gr_matcher_accepting(m);
    printf("accepted   all %zu tokens; the text is %s\n", p->tokens,
           sentence ? "a sentence" : "a prefix of a sentence, not a sentence");
    printf("forced     ");
    xp_print_quoted(forced.data, forced.len);
    printf(" next\n");
    tb_buf_free(&forced);
    return sentence ? 0 : 3;
}

/* The text: the command line's whole, or a file's a piece at a time.
 * buf.data[0..cut) is the piece; the bytes after the cut begin the next. */
#define PIECE (1u << 20)

typedef struct {
    FILE *f; /* NULL: the text is all in buf */
    const char *path;
    tb_buf_t buf;
    size_t cut, read; /* read: bytes of the pieces so far */
    size_t size;      /* of the whole text */
} source_t;

/* Where to end a piece of buf: before a space that follows a word and
 * precedes one, where a byte-level pre-tokenizer splits too; the end if
 * there is none. */
static size_t cut_at(const tb_buf_t *b)
{
    for (size_t i = b->len - 1; i > 0; i--)
        if (b->data[i] == ' ' && b->data[i - 1] != ' ' && i + 1 < b->len &&
            b->data[i + 1] != ' ')
            return i;
    return b->len;
}

/* The next piece into src->buf[0..cut); 0 with none left, -1 on a read
 * error. */
static int next_piece(source_t *src, int *last, tb_err_t *err)
{
    size_t rest = src->buf.len - src->cut;
    if (rest) /* the first piece has no buffer yet */
        memmove(src->buf.data, src->buf.data + src->cut, rest);
    src->buf.len = rest;
    src->cut = 0;
    if (src->f) {
        if (tb_buf_reserve(&src->buf, PIECE))
            return tb_fail(err, "out of memory");
        src->buf.len += fread(src->buf.data + rest, 1, PIECE, src->f);
        if (ferror(src->f))
            return tb_fail(err, "%s: read error at byte %zu", src->path, src->read + rest);
    }
    *last = !src->f || feof(src->f);
    if (src->buf.len == 0)
        return 0;
    src->cut = *last ? src->buf.len : cut_at(&src->buf);
    src->read += src->cut;
    return 1;
}

int xp_cmd_accept(int argc, char **argv)
{
    if (xp_wants_help(argc, argv))
        return accept_usage(stdout);
    accept_args_t a;
    if (parse_args(argc, argv, &a))
        return accept_usage(stderr);
    tb_err_t err = {{0}};
    gr_cfg_t cfg;
    gr_gram_t *g = NULL;
    source_t src = {.path = a.file};
    tok_tokenizer_t *tok = NULL;
    trie_keys_t keys = {0};
    trie_t *trie = NULL;
    tok_ids_t ids = {0};
    gr_matcher_t m = {0};
    progress_t p = {0};
    lex_slicer_t *slicer = NULL;
    int status = 1;
    struct stat st;
    if (a.file ? (!(src.f = fopen(a.file, "rb")) || fstat(fileno(src.f), &st)) &&
                     tb_fail(&err, "%s: %s", a.file, strerror(errno))
               : tb_buf_put(&src.buf, a.text, strlen(a.text)) ? tb_fail(&err, "out of memory") : 0)
        goto out;
    src.size = a.file ? (size_t)st.st_size : src.buf.len;
    if (a.masks)
        trie = xp_load_trie(a.spec, a.layout, &keys, &tok, &err);
    else {
        char path[4096];
        if (!xp_resolve_spec(a.spec, path, sizeof path, &err))
            tok = tok_load(path, &err);
    }
    /* the grammar after the vocabulary: its special tokens are ids of it */
    if (!tok || (a.masks && !trie) ||
        xp_load_grammar_start(&cfg, a.grammar, a.format, a.start, a.semantics, &a.schema,
                              tok_vocab(tok), &err) ||
        !(g = gr_gram_new(&cfg, NULL, &err)) || gr_matcher_init(&m, g, keys.max_len, &err))
        goto out;
    gr_matcher_keep(&m, 1); /* nothing here rolls back */
    if (a.slicer && (!(slicer = lex_slicer_new(&keys, trie_layout(trie), NULL, 0, &err)) ||
                     gr_matcher_use_slicer(&m, slicer, &err)))
        goto out;
    int more = 0, last = 0;
    while (!p.refused && (more = next_piece(&src, &last, &err)) > 0) {
        ids.len = 0;
        if (tok_encode(tok, src.buf.data, src.cut, &ids, &err) ||
            drive(&m, tok_vocab(tok), ids.data, ids.len, last, trie, &p, &err))
            goto out;
    }
    if (more < 0)
        goto out;
    printf("grammar    %s\ntext       %zu bytes, %zu tokens of %s%s\n", a.grammar, src.size,
           p.encoded, a.spec, src.read < src.size ? " (encoded up to the refused one)" : "");
    for (size_t k = 0; a.times && k < p.us.len; k++)
        printf("mask %-5zu %.1f us\n", k, p.us.data[k]);
    if (p.us.len)
        print_times(p.us.data, p.us.len);
    status = report(&m, tok_vocab(tok), &p, &err);
    err.msg[0] = 0;
out:
    if (status == 1 && err.msg[0])
        xp_die(&err);
    free(p.us.data);
    gr_matcher_free(&m);
    lex_slicer_free(slicer);
    free(ids.data);
    trie_free(trie);
    trie_keys_free(&keys);
    tok_free(tok);
    if (src.f)
        fclose(src.f);
    tb_buf_free(&src.buf);
    gr_gram_free(g);
    return status;
}
