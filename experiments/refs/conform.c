/*
 * conform: checks, line by line, that tokbench's encoder gives exactly the
 * ids of the reference implementation of a vocabulary's format.
 *
 * The corpus lines that are valid UTF-8 are written to a temporary file,
 * each reference program of the format (reference.h) encodes all of them
 * in one run (one output line of ids per input line), and each line is then
 * encoded here and compared.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../base/buf.h"
#include "../../base/file.h"
#include "../../base/utf8.h"
#include "../../tok/tokenizer.h"
#include "../cli/cli.h"
#include "conform.h"
#include "reference.h"

typedef struct {
    const char *spec, *corpus_spec, *ref_spec;
    char path[PATH_MAX], ref_path[PATH_MAX], corpus[PATH_MAX];
    long limit; /* lines to read, -1 for all */
    long show;  /* mismatches printed in full */
    int quiet;
    int silent; /* print nothing: a driver runs the comparison */
} conform_opts_t;

/* One corpus line that goes to the reference. */
typedef struct {
    size_t off, len;
    long lineno;
} conform_line_t;

typedef TB_VEC(conform_line_t) conform_lines_t;

static void conform_usage(FILE *out)
{
    fprintf(out,
        "usage: tokbench conform SPEC --corpus FILE [--limit N] [--show N]\n"
        "                        [--ref SPEC2] [--quiet]\n\n"
        "Encodes every line of FILE with SPEC's tokenizer and with each reference\n"
        "implementation of SPEC's format, and compares the ids:\n"
        "  tokenizer.json       node scripts/ref/ref.js hf (npm @anush008/tokenizers)\n"
        "                       and ref.js hf-official (npm tokenizers), both\n"
        "  tiktoken             node scripts/ref/ref.js tiktoken (encode_ordinary)\n"
        "  SentencePiece .model spm_encode --output_format=id\n"
        "  GGUF                 no reference program: refused\n"
        "A reference that runs longer than $TOKBENCH_REF_TIMEOUT seconds (600)\n"
        "is killed and reported.\n"
        "Lines are split on \\n only (a \\r stays in the line).  No BOS/EOS is\n"
        "added on either side.  Lines that are not valid UTF-8 are skipped and\n"
        "counted: the references cannot take them.\n\n"
        "SPEC and FILE are data/manifest names or paths.\n"
        "  --corpus FILE  the text, one sample per line (required)\n"
        "  --limit N      read only the first N lines of FILE\n"
        "  --show N       print N mismatches in full (default 5), then count\n"
        "  --ref SPEC2    take the reference ids from SPEC2 instead of SPEC\n"
        "                 (a deliberate wrong pairing, to see mismatches)\n"
        "  --quiet        print only the summary\n\n"
        "Exit status: 0 if every line matches, 1 if any line differs or on an\n"
        "error, 2 on a usage error.\n");
}

static int parse_count(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < 0)
        return -1;
    *out = v;
    return 0;
}

/* Returns 0, or the exit status to stop with. */
static int conform_parse(int argc, char **argv, conform_opts_t *o)
{
    static const struct option longs[] = {
        {"corpus", required_argument, NULL, 'c'},
        {"limit", required_argument, NULL, 'l'},
        {"show", required_argument, NULL, 's'},
        {"ref", required_argument, NULL, 'r'},
        {"quiet", no_argument, NULL, 'q'},
        {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof *o);
    o->limit = -1;
    o->show = 5;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        if (c == 'c')
            o->corpus_spec = optarg;
        else if (c == 'r')
            o->ref_spec = optarg;
        else if (c == 'q')
            o->quiet = 1;
        else if ((c == 'l' && !parse_count(optarg, &o->limit)) ||
                 (c == 's' && !parse_count(optarg, &o->show)))
            continue;
        else {
            if (c == 'l' || c == 's')
                fprintf(stderr, "tokbench conform: want a count, got '%s'\n",
                        optarg);
            conform_usage(stderr);
            return 2;
        }
    }
    if (optind != argc - 1 || !o->corpus_spec) {
        conform_usage(stderr);
        return 2;
    }
    o->spec = argv[optind];
    return 0;
}

/* ---- the corpus ----------------------------------------------------- */

/* Picks the lines to compare, writes them to a new temp file (name in
 * tmp), and counts the invalid ones in *skipped. */
static int select_lines(const uint8_t *text, size_t len, long limit,
                        conform_lines_t *lines, long *skipped, char *tmp,
                        tb_err_t *err)
{
    if (xp_ref_tmpfile("conform", tmp, PATH_MAX, err))
        return -1;
    FILE *f = fopen(tmp, "w");
    if (!f) {
        unlink(tmp);
        return tb_fail(err, "%s: cannot write: %s", tmp, strerror(errno));
    }
    long lineno = 0;
    for (size_t i = 0; i < len && (limit < 0 || lineno < limit);) {
        const uint8_t *nl = memchr(text + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - text) : len;
        conform_line_t l = {i, end - i, ++lineno};
        i = end + 1;
        if (tb_utf8_validate(text + l.off, l.len) != l.len) {
            (*skipped)++;
            continue;
        }
        if (tb_vec_push(lines, l) || fwrite(text + l.off, 1, l.len, f) != l.len ||
            fputc('\n', f) == EOF) {
            fclose(f);
            return tb_fail(err, "%s: cannot write the lines", tmp);
        }
    }
    if (fclose(f))
        return tb_fail(err, "%s: cannot write the lines", tmp);
    return 0;
}

/* ---- comparing ------------------------------------------------------ */

typedef xp_conform_stats_t conform_stats_t;

/* Prints ids around position `at` (the first difference, in brackets). */
static void print_ids(const char *label, const tok_ids_t *ids, size_t at)
{
    size_t from = at > 4 ? at - 4 : 0;
    size_t to = at + 8 < ids->len ? at + 8 : ids->len;
    printf("  %-9s (%zu ids) %s", label, ids->len, from ? "... " : "");
    for (size_t i = from; i < to; i++)
        printf(i == at ? "[%u]%s" : "%u%s", ids->data[i], i + 1 < to ? " " : "");
    printf("%s%s\n", at >= ids->len ? " [end]" : "", to < ids->len ? " ..." : "");
}

/* The line itself, cut to 100 bytes at a character boundary, with tabs,
 * carriage returns and backslashes escaped so that it stays one line. */
static void print_text(const uint8_t *s, size_t n)
{
    size_t cut = n;
    if (cut > 100) {
        cut = 100;
        while (cut > 0 && (s[cut] & 0xC0) == 0x80)
            cut--;
    }
    printf("  text      \"");
    for (size_t i = 0; i < cut; i++) {
        if (s[i] == '\t' || s[i] == '\r' || s[i] == '\\' || s[i] == '"')
            printf("\\%c", s[i] == '\t' ? 't' : s[i] == '\r' ? 'r' : s[i]);
        else
            putchar(s[i]);
    }
    printf("\"%s\n", cut < n ? " ..." : "");
}

static void report_mismatch(const conform_opts_t *o, long lineno,
                            const uint8_t *text, size_t len,
                            const tok_ids_t *got, const tok_ids_t *want)
{
    size_t at = 0;
    while (at < got->len && at < want->len && got->data[at] == want->data[at])
        at++;
    printf("%s: line %ld: ids differ at position %zu\n", o->spec, lineno, at);
    print_text(text, len);
    print_ids("tokbench", got, at);
    print_ids("reference", want, at);
}

static int compare_all(const conform_opts_t *o, tok_tokenizer_t *t,
                       const uint8_t *text, const conform_lines_t *lines,
                       const tb_buf_t *ref, conform_stats_t *st, tb_err_t *err)
{
    tok_ids_t got = {0}, want = {0};
    size_t at = 0;
    int rc = 0;
    for (size_t k = 0; k < lines->len && !rc; k++) {
        const conform_line_t *l = &lines->data[k];
        if ((rc = xp_ref_next_ids(ref, &at, k + 1, &want, err)))
            break;
        got.len = 0;
        tb_err_t e;
        st->lines++;
        st->tokens += (long)want.len;
        if (tok_encode(t, text + l->off, l->len, &got, &e)) {
            if (!o->quiet && st->mismatches < o->show)
                printf("%s: line %ld: tokbench failed: %s\n", o->spec, l->lineno,
                       e.msg);
            st->mismatches++;
            st->errors++;
        } else if (!xp_ref_same_ids(&got, &want)) {
            if (!o->quiet && st->mismatches < o->show)
                report_mismatch(o, l->lineno, text + l->off, l->len, &got, &want);
            st->mismatches++;
        }
    }
    if (!rc && at < ref->len)
        rc = tb_fail(err, "the reference gave more output lines than the %zu "
                          "input lines", lines->len);
    free(got.data);
    free(want.data);
    return rc;
}

/* ---- the command ---------------------------------------------------- */

static void print_summary(const conform_opts_t *o, const tok_tokenizer_t *t,
                          xp_ref_kind_t k, const char *ref_path,
                          const conform_stats_t *st)
{
    if (st->mismatches > o->show && !o->quiet)
        printf("... and %ld more mismatches\n", st->mismatches - o->show);
    printf("conform %s (%s, %s) against %s %s: %ld lines, %ld reference "
           "tokens, %ld mismatches (%ld encode errors), %ld skipped (invalid "
           "UTF-8)\n",
           o->spec, tok_format_name(tok_format(t)), tok_model_name(t),
           xp_ref_name(k), ref_path, st->lines, st->tokens, st->mismatches,
           st->errors, st->skipped);
}

/* Runs reference k and compares; the tokenizer is loaded into *t (while
 * the first reference runs) when it is not yet.  Returns 0 (all match), 1
 * (mismatches) or -1 (error, in err); the counts are added to st. */
static int compare_with(conform_opts_t *o, tok_tokenizer_t **t, xp_ref_kind_t k,
                        tok_format_t rf, const char *ref_path,
                        const uint8_t *text, const conform_lines_t *lines,
                        const char *in, const char *out, conform_stats_t *st,
                        tb_err_t *err)
{
    xp_ref_t r;
    if (xp_ref_start(&r, k, ref_path, in, out, err))
        return -1;
    if (!*t && (!(*t = tok_load(o->path, err)) ||
                (!o->ref_spec && tok_format(*t) != rf))) {
        if (*t)
            tb_fail(err, "%s: loaded as %s, not the %s its first bytes "
                         "suggested", o->path, tok_format_name(tok_format(*t)),
                    tok_format_name(rf));
        xp_ref_finish(&r, 1, NULL);
        return -1;
    }
    uint8_t *ids = NULL;
    size_t len = 0;
    conform_stats_t one = {.skipped = st->skipped};
    int rc = xp_ref_finish(&r, 0, err);
    if (!rc)
        rc = tb_read_file(out, &ids, &len, err);
    if (!rc) {
        tb_buf_t ref = {ids, len, len};
        rc = compare_all(o, *t, text, lines, &ref, &one, err);
    }
    if (!rc) {
        if (!o->silent)
            print_summary(o, *t, k, ref_path, &one);
        rc = one.mismatches ? 1 : 0;
        st->lines += one.lines;
        st->tokens += one.tokens;
        st->mismatches += one.mismatches;
        st->errors += one.errors;
    }
    free(ids);
    return rc;
}

/* Every reference of the format in turn; 1 if any line differs. */
static int conform_run(conform_opts_t *o, conform_stats_t *st, tb_err_t *err)
{
    const char *ref_path = o->ref_spec ? o->ref_path : o->path;
    tok_format_t rf;
    xp_ref_kind_t kinds[XP_REF_MAX_PER_FORMAT];
    int nk;
    char in[PATH_MAX], out[PATH_MAX + 8];
    if (xp_ref_guess_format(ref_path, &rf, err) ||
        (nk = xp_ref_kinds(rf, kinds, err)) < 0)
        return rf == TOK_FORMAT_GGUF ? tb_fail(err, "%s: no reference program "
                                                    "for GGUF", ref_path)
                                     : -1;
    uint8_t *text;
    size_t len;
    if (tb_read_file(o->corpus, &text, &len, err))
        return -1;
    conform_lines_t lines = {0};
    tok_tokenizer_t *t = NULL;
    int rc = select_lines(text, len, o->limit, &lines, &st->skipped, in, err);
    if (!rc) {
        snprintf(out, sizeof out, "%s.ids", in);
        for (int i = 0; i < nk && rc >= 0; i++) {
            int r = compare_with(o, &t, kinds[i], rf, ref_path, text, &lines,
                                 in, out, st, err);
            rc = r < 0 ? -1 : rc | r;
        }
        unlink(in);
        unlink(out);
    }
    tok_free(t);
    free(text);
    free(lines.data);
    return rc;
}

int xp_conform_check(const char *vocab_path, const char *ref_path,
                     const char *corpus_path, xp_conform_stats_t *st,
                     tb_err_t *err)
{
    conform_opts_t o = {.spec = vocab_path, .corpus_spec = corpus_path,
                        .ref_spec = ref_path, .limit = -1, .quiet = 1,
                        .silent = 1};
    snprintf(o.path, sizeof o.path, "%s", vocab_path);
    if (ref_path)
        snprintf(o.ref_path, sizeof o.ref_path, "%s", ref_path);
    snprintf(o.corpus, sizeof o.corpus, "%s", corpus_path);
    memset(st, 0, sizeof *st);
    return conform_run(&o, st, err) < 0 ? -1 : 0;
}

int xp_cmd_conform(int argc, char **argv)
{
    if (xp_wants_help(argc, argv)) {
        conform_usage(stdout);
        return 0;
    }
    conform_opts_t o;
    int rc = conform_parse(argc, argv, &o);
    if (rc)
        return rc;
    tb_err_t err;
    if (xp_resolve_spec(o.spec, o.path, sizeof o.path, &err) ||
        xp_resolve_spec(o.corpus_spec, o.corpus, sizeof o.corpus, &err) ||
        (o.ref_spec &&
         xp_resolve_spec(o.ref_spec, o.ref_path, sizeof o.ref_path, &err)))
        return xp_die(&err);
    conform_stats_t st = {0};
    rc = conform_run(&o, &st, &err);
    if (rc < 0)
        return xp_die(&err);
    return rc;
}
