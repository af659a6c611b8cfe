/*
 * conform: checks, line by line, that tokbench's encoder gives exactly the
 * ids of the reference implementation of a vocabulary's format.
 *
 * The corpus lines that are valid UTF-8 are written to a temporary file,
 * the reference program encodes all of them in one run (one output line of
 * ids per input line), and each line is then encoded here and compared.
 * References: scripts/ref/ref.js (Hugging Face tokenizers, tiktoken) and
 * Debian's spm_encode for SentencePiece models.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../base/buf.h"
#include "../base/file.h"
#include "../base/utf8.h"
#include "../tok/tokenizer.h"
#include "cli.h"
#include "conform.h"

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
        "Encodes every line of FILE with SPEC's tokenizer and with the reference\n"
        "implementation of SPEC's format, and compares the ids:\n"
        "  tokenizer.json       node scripts/ref/ref.js hf (Hugging Face tokenizers)\n"
        "  tiktoken             node scripts/ref/ref.js tiktoken (encode_ordinary)\n"
        "  SentencePiece .model spm_encode --output_format=id\n"
        "  GGUF                 no reference program: refused\n"
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

/* ---- the reference -------------------------------------------------- */

/* Fills argv (room for 8) with the reference command for `path` of format
 * f; `script` receives the path of ref.js. */
static int reference_argv(tok_format_t f, const char *path, char *script,
                          size_t size, const char **argv, tb_err_t *err)
{
    if (f == TOK_FORMAT_GGUF)
        return tb_fail(err, "%s: no reference program for GGUF", path);
    if (f == TOK_FORMAT_SPM_MODEL) {
        const char *a[] = {"spm_encode", "--model", path,
                           "--output_format=id", NULL};
        memcpy(argv, a, sizeof a);
        return 0;
    }
    const char *root = xp_data_root(err);
    if (!root)
        return -1;
    snprintf(script, size, "%s/scripts/ref/ref.js", root);
    if (access(script, R_OK))
        return tb_fail(err, "%s: missing; run 'make setup'", script);
    const char *a[] = {"node", script, f == TOK_FORMAT_HF_JSON ? "hf" : "tiktoken",
                       path, NULL};
    memcpy(argv, a, sizeof a);
    return 0;
}

/* Which reference to start, decided from the file's first bytes as
 * tok_load decides the format, so that the reference can run while the
 * tokenizer loads; the loaded format is checked against the guess. */
static int guess_format(const char *path, tok_format_t *f, tb_err_t *err)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return tb_fail(err, "%s: %s", path, strerror(errno));
    uint8_t d[4096];
    size_t n = fread(d, 1, sizeof d, fp), i = 0;
    fclose(fp);
    if (n >= 3 && d[0] == 0xEF && d[1] == 0xBB && d[2] == 0xBF)
        i = 3;
    while (i < n && (d[i] == ' ' || d[i] == '\n' || d[i] == '\r' || d[i] == '\t'))
        i++;
    if (n >= 4 && !memcmp(d, "GGUF", 4))
        *f = TOK_FORMAT_GGUF;
    else if (i < n && d[i] == '{')
        *f = memmem(d, n, "\"bpe_ranks\"", 11) || memmem(d, n, "\"pat_str\"", 9)
                 ? TOK_FORMAT_TIKTOKEN
                 : TOK_FORMAT_HF_JSON;
    else
        *f = n && d[0] == 0x0A ? TOK_FORMAT_SPM_MODEL : TOK_FORMAT_TIKTOKEN;
    return 0;
}

/* Starts argv with stdin from `input` and stdout into `output`; its
 * stderr is ours. */
static int ref_start(const char **argv, const char *input, const char *output,
                     pid_t *pid, tb_err_t *err)
{
    fflush(stdout);
    fflush(stderr);
    *pid = fork();
    if (*pid < 0)
        return tb_fail(err, "fork: %s", strerror(errno));
    if (*pid == 0) {
        if (!freopen(input, "r", stdin) || !freopen(output, "w", stdout))
            _exit(127);
        execvp(argv[0], (char *const *)argv);
        fprintf(stderr, "tokbench conform: cannot run %s: %s\n", argv[0],
                strerror(errno));
        _exit(127);
    }
    return 0;
}

/* Waits for the reference (stopping it first if `stop`); fails unless it
 * ran and exited 0. */
static int ref_finish(pid_t pid, const char **argv, int stop, tb_err_t *err)
{
    int status;
    if (stop)
        kill(pid, SIGTERM);
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return tb_fail(err, "waiting for %s: %s", argv[0], strerror(errno));
    if (stop)
        return -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status))
        return tb_fail(err, "reference %s %s failed (%s %d)", argv[0], argv[1],
                       WIFEXITED(status) ? "exit status" : "signal",
                       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    return 0;
}

/* ---- the corpus ----------------------------------------------------- */

/* Picks the lines to compare, writes them to a new temp file (name in
 * tmp), and counts the invalid ones in *skipped. */
static int select_lines(const uint8_t *text, size_t len, long limit,
                        conform_lines_t *lines, long *skipped, char *tmp,
                        tb_err_t *err)
{
    snprintf(tmp, PATH_MAX, "%s/tokbench-conform-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    int fd = mkstemp(tmp);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (!f) {
        if (fd >= 0)
            close(fd);
        return tb_fail(err, "%s: cannot create: %s", tmp, strerror(errno));
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

/* Parses one output line of space-separated ids into ids. */
static int parse_ids(const uint8_t *s, size_t n, tok_ids_t *ids)
{
    ids->len = 0;
    for (size_t i = 0; i < n;) {
        if (s[i] == ' ' || s[i] == '\r') {
            i++;
            continue;
        }
        uint64_t v = 0;
        size_t start = i;
        while (i < n && s[i] >= '0' && s[i] <= '9' && v <= UINT32_MAX)
            v = v * 10 + (uint64_t)(s[i++] - '0');
        if (i == start || v > UINT32_MAX || tb_vec_push(ids, (uint32_t)v))
            return -1;
    }
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

static int same_ids(const tok_ids_t *a, const tok_ids_t *b)
{
    return a->len == b->len &&
           (!a->len || !memcmp(a->data, b->data, a->len * sizeof *a->data));
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
        const uint8_t *nl = at < ref->len ? memchr(ref->data + at, '\n', ref->len - at)
                                          : NULL;
        if (!nl) {
            rc = tb_fail(err, "the reference gave %zu output lines for %zu "
                              "input lines", k, lines->len);
            break;
        }
        size_t end = (size_t)(nl - ref->data);
        if (parse_ids(ref->data + at, end - at, &want)) {
            rc = tb_fail(err, "reference output line %zu is not a list of ids",
                         k + 1);
            break;
        }
        at = end + 1;
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
        } else if (!same_ids(&got, &want)) {
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
                          tok_format_t rf, const char *ref_path,
                          const conform_stats_t *st)
{
    if (st->mismatches > o->show && !o->quiet)
        printf("... and %ld more mismatches\n", st->mismatches - o->show);
    printf("conform %s (%s, %s) against %s %s: %ld lines, %ld reference "
           "tokens, %ld mismatches (%ld encode errors), %ld skipped (invalid "
           "UTF-8)\n",
           o->spec, tok_format_name(tok_format(t)), tok_model_name(t),
           rf == TOK_FORMAT_SPM_MODEL ? "spm_encode --model"
           : rf == TOK_FORMAT_HF_JSON ? "ref.js hf"
                                      : "ref.js tiktoken",
           ref_path, st->lines, st->tokens, st->mismatches, st->errors,
           st->skipped);
}

/* Loads the tokenizer while the reference runs, then compares.  Returns
 * 0 (all match), 1 (mismatches) or -1 (error, in err). */
static int compare_with(conform_opts_t *o, const char **argv, tok_format_t rf,
                        const char *ref_path, const uint8_t *text,
                        const conform_lines_t *lines, const char *in,
                        const char *out, conform_stats_t *st, tb_err_t *err)
{
    pid_t pid;
    if (ref_start(argv, in, out, &pid, err))
        return -1;
    tok_tokenizer_t *t = tok_load(o->path, err);
    if (!t || (!o->ref_spec && tok_format(t) != rf)) {
        if (t)
            tb_fail(err, "%s: loaded as %s, not the %s its first bytes "
                         "suggested", o->path, tok_format_name(tok_format(t)),
                    tok_format_name(rf));
        tok_free(t);
        ref_finish(pid, argv, 1, NULL);
        return -1;
    }
    uint8_t *ids = NULL;
    size_t len = 0;
    int rc = ref_finish(pid, argv, 0, err);
    if (!rc)
        rc = tb_read_file(out, &ids, &len, err);
    if (!rc) {
        tb_buf_t ref = {ids, len, len};
        rc = compare_all(o, t, text, lines, &ref, st, err);
    }
    if (!rc) {
        if (!o->silent)
            print_summary(o, t, rf, ref_path, st);
        rc = st->mismatches ? 1 : 0;
    }
    free(ids);
    tok_free(t);
    return rc;
}

static int conform_run(conform_opts_t *o, conform_stats_t *st, tb_err_t *err)
{
    const char *ref_path = o->ref_spec ? o->ref_path : o->path;
    tok_format_t rf;
    const char *argv[8];
    char script[PATH_MAX], in[PATH_MAX], out[PATH_MAX + 8];
    if (guess_format(ref_path, &rf, err) ||
        reference_argv(rf, ref_path, script, sizeof script, argv, err))
        return -1;
    uint8_t *text;
    size_t len;
    if (tb_read_file(o->corpus, &text, &len, err))
        return -1;
    conform_lines_t lines = {0};
    int rc = select_lines(text, len, o->limit, &lines, &st->skipped, in, err);
    if (!rc) {
        snprintf(out, sizeof out, "%s.ids", in);
        rc = compare_with(o, argv, rf, ref_path, text, &lines, in, out, st,
                          err);
        unlink(in);
        unlink(out);
    }
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
