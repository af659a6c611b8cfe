/*
 * cmd_accept: `tokbench accept SPEC --grammar FILE TEXT`, a text driven
 * through a grammar's matcher (grammar/match.h) token by token, as a
 * decoding loop would: SPEC's tokenizer encodes the text, each token is
 * consumed in turn, and the first refused one is reported with its byte
 * offset.  --masks also computes the mask before every token (and after the
 * last), checks that the token is in it, and times the masks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/file.h"
#include "../../grammar/load.h"
#include "../../grammar/match.h"
#include "cli.h"
#include "../drivers/setup.h"

static int accept_usage(FILE *out)
{
    fprintf(out,
            "usage: tokbench accept SPEC (--grammar FILE [--format lark|gbnf|schema] |\n"
            "                       --schema FILE) (TEXT | -f FILE) [--masks [--slicer]]\n"
            "                       [--layout L] [--times] [--format-annotation] [--remote-dir DIR]\n\n"
            "Encodes TEXT (or the bytes of FILE) with SPEC's tokenizer, no special\n"
            "tokens added, and feeds the tokens one by one to the matcher of the\n"
            "grammar (docs/grammars.md; the format from FILE's extension unless\n"
            "--format says it: .lark, .gbnf, or a JSON Schema .json).  Prints how\n"
            "many tokens were accepted, the first refused token with its byte offset\n"
            "in the text, whether the text is a sentence, and the bytes the grammar\n"
            "forces next.  --masks computes the token mask before every token and\n"
            "after the last over layout L (default dfs), checks each token is in its\n"
            "mask, and prints the masks' times; --slicer computes them through the\n"
            "default JSON string slices (lexer/slicer.h), as the MaskBench driver\n"
            "does; --times prints every mask's time, one line per token.\n"
            XP_SCHEMA_ARGS_HELP "\n"
            "Exit status: 0 the text is a sentence, 3 a token is refused or the text\n"
            "is only a prefix of a sentence, 1 an error, 2 a usage error.\n");
    return out == stdout ? 0 : 2;
}

typedef struct {
    const char *spec, *grammar, *format, *text, *file, *layout;
    int masks, slicer, times;
    gr_schema_opts_t schema;
} accept_args_t;

static int parse_args(int argc, char **argv, accept_args_t *a)
{
    *a = (accept_args_t){.layout = "dfs"};
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int took = xp_schema_arg(argc, argv, i, &a->schema);
        if (took)
            i += took - 1;
        else if (!strcmp(argv[i], "--grammar") && v)
            a->grammar = v, i++;
        else if (!strcmp(argv[i], "--schema") && v)
            a->grammar = v, a->format = "schema", i++;
        else if (!strcmp(argv[i], "--format") && v)
            a->format = v, i++;
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

/* Runs the tokens through the matcher; *refused gets the index of the
 * first refused token (n if none).  With a trie, a mask before each token
 * (and after the last) is checked and timed into us[]. */
static int drive(gr_matcher_t *m, const tok_vocab_t *v, const uint32_t *ids, size_t n,
                 const trie_t *trie, double *us, size_t *refused, size_t *in_token,
                 tb_err_t *err)
{
    tb_bitset_t mask = {0};
    if (trie && tb_bitset_init(&mask, trie_mask_bits(trie)))
        return tb_fail(err, "out of memory");
    int rc = 0;
    *refused = n;
    for (size_t k = 0; k <= n && !rc; k++) {
        if (trie) {
            double t0 = xp_now_ns();
            rc = gr_matcher_mask(m, trie, &mask, NULL, err);
            us[k] = (xp_now_ns() - t0) / 1e3;
        }
        if (rc || k == n)
            break;
        size_t len;
        const uint8_t *s = tok_vocab_token(v, ids[k], &len);
        int r = gr_matcher_consume(m, s, len, in_token, err);
        if (r < 0)
            rc = -1;
        else if (trie && (r == 0) != tb_bitset_get(&mask, ids[k]))
            rc = tb_fail(err, "internal: token #%zu (id %u) is %s by the matcher but %s "
                         "the mask", k, ids[k], r ? "refused" : "accepted",
                         r ? "in" : "not in");
        else if (r == 1) {
            *refused = k;
            break;
        }
    }
    tb_bitset_free(&mask);
    return rc;
}

/* Prints the verdict; returns the exit status. */
static int report(gr_matcher_t *m, const tok_vocab_t *v, const uint32_t *ids, size_t n,
                  size_t refused, size_t in_token, tb_err_t *err)
{
    size_t off = 0;
    for (size_t k = 0; k < refused; k++) {
        size_t len;
        tok_vocab_token(v, ids[k], &len);
        off += len;
    }
    if (refused < n) {
        size_t len;
        const uint8_t *s = tok_vocab_token(v, ids[refused], &len);
        printf("refused    token #%zu (id %u, ", refused, ids[refused]);
        xp_print_quoted(s, len);
        printf(") at byte %zu of the text (byte %zu of the token); the %zu tokens before "
               "it are a prefix of a sentence\n", off + in_token, in_token, refused);
        return 3;
    }
    tb_buf_t forced = {0};
    if (gr_matcher_forced(m, 256, &forced, err)) {
        tb_buf_free(&forced);
        return xp_die(err);
    }
    int sentence = gr_matcher_accepting(m);
    printf("accepted   all %zu tokens; the text is %s\n", n,
           sentence ? "a sentence" : "a prefix of a sentence, not a sentence");
    printf("forced     ");
    xp_print_quoted(forced.data, forced.len);
    printf(" next\n");
    tb_buf_free(&forced);
    return sentence ? 0 : 3;
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
    if (xp_load_grammar(&cfg, a.grammar, a.format, &a.schema, &err))
        return xp_die(&err);
    gr_gram_t *g = gr_gram_new(&cfg, NULL, &err);
    if (!g)
        return xp_die(&err);
    tb_buf_t text = {0};
    tok_tokenizer_t *tok = NULL;
    trie_keys_t keys = {0};
    trie_t *trie = NULL;
    tok_ids_t ids = {0};
    gr_matcher_t m = {0};
    double *us = NULL;
    lex_slicer_t *slicer = NULL;
    int status = 1;
    if (a.file ? tb_read_file(a.file, &text.data, &text.len, &err)
               : tb_buf_put(&text, a.text, strlen(a.text)) ? tb_fail(&err, "out of memory") : 0)
        goto out;
    if (a.masks)
        trie = xp_load_trie(a.spec, a.layout, &keys, &tok, &err);
    else {
        char path[4096];
        if (!xp_resolve_spec(a.spec, path, sizeof path, &err))
            tok = tok_load(path, &err);
    }
    if (!tok || (a.masks && !trie) ||
        tok_encode(tok, text.data, text.len, &ids, &err) ||
        gr_matcher_init(&m, g, keys.max_len, &err))
        goto out;
    if (a.masks && !(us = malloc((ids.len + 1) * sizeof *us))) {
        tb_fail(&err, "out of memory");
        goto out;
    }
    if (a.slicer && (!(slicer = lex_slicer_new(&keys, trie_layout(trie), NULL, 0, &err)) ||
                     gr_matcher_use_slicer(&m, slicer, &err)))
        goto out;
    size_t refused = 0, in_token = 0;
    if (drive(&m, tok_vocab(tok), ids.data, ids.len, trie, us, &refused, &in_token, &err))
        goto out;
    printf("grammar    %s\ntext       %zu bytes, %zu tokens of %s\n", a.grammar, text.len,
           ids.len, a.spec);
    size_t nmasks = refused < ids.len ? refused + 1 : ids.len + 1;
    for (size_t k = 0; us && a.times && k < nmasks; k++)
        printf("mask %-5zu %.1f us\n", k, us[k]);
    if (us)
        print_times(us, nmasks);
    status = report(&m, tok_vocab(tok), ids.data, ids.len, refused, in_token, &err);
    err.msg[0] = 0;
out:
    if (status == 1 && err.msg[0])
        xp_die(&err);
    free(us);
    gr_matcher_free(&m);
    lex_slicer_free(slicer);
    free(ids.data);
    trie_free(trie);
    trie_keys_free(&keys);
    tok_free(tok);
    tb_buf_free(&text);
    gr_gram_free(g);
    return status;
}
