/*
 * fuzz: a differential fuzzer of tokbench's encoder against the reference
 * programs (reference.h), on text no corpus holds.
 *
 * Seeded lines are generated from pieces that stress pre-tokenizers and
 * normalizers: code points of every plane (assigned or not, recent
 * additions included), combining sequences, whitespace and digit runs of
 * many scripts, contractions in any case, ASCII words and punctuation, the
 * vocabulary's special-token strings, and invalid UTF-8 for the reference
 * that takes bytes (spm_encode; the node references take strings).  Every
 * reference of the vocabulary's format encodes all lines in one run and
 * each line is compared with tokbench's ids.  A line that differs is
 * shrunk: each round offers the reference every copy of the line with one
 * chunk of characters removed (halves, quarters, ... single characters) in
 * one run, and keeps the shortest copy whose ids still differ, until no
 * copy does; that input is printed.
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
#include "../../tok/vocab.h"
#include "../cli/cli.h"
#include "fuzz.h"
#include "reference.h"

typedef TB_VEC(size_t) fuzz_offs_t;

typedef struct {
    const char *spec, *ref_spec, *save;
    char path[PATH_MAX], ref_path[PATH_MAX];
    long lines, show, seed;
    int quiet, silent;
} fuzz_opts_t;

/* One batch of lines: the bytes back to back, line k at
 * text[off[k] .. off[k + 1]). */
typedef struct {
    tb_buf_t text;
    fuzz_offs_t off;
} fuzz_batch_t;

/* ---- generating ------------------------------------------------------ */

typedef struct {
    uint64_t state;
    const tok_vocab_t *vocab;
    fuzz_offs_t specials; /* ids of the vocabulary's special tokens */
    int bytes_ok;         /* the reference takes invalid UTF-8 */
} fuzz_gen_t;

static uint32_t rnd(fuzz_gen_t *g, uint32_t n)
{
    uint64_t x = g->state; /* xorshift64* */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    g->state = x;
    return (uint32_t)(((x * 0x2545F4914F6CDD1DULL) >> 32) % n);
}

static int put_cp(tb_buf_t *b, uint32_t cp)
{
    uint8_t u[4];
    return tb_buf_put(b, u, tb_utf8_encode(cp, u));
}

/* A code point of any plane (planes 0 and 1 favoured), never a surrogate
 * or a newline: assigned, unassigned, private use alike. */
static uint32_t any_cp(fuzz_gen_t *g)
{
    static const uint8_t planes[] = {0, 0, 0, 0, 1, 1, 1, 2, 3, 14, 15, 16};
    uint32_t plane = planes[rnd(g, sizeof planes)];
    uint32_t cp = plane << 16 | rnd(g, 0x10000);
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp == '\n')
        cp = 0x20 + rnd(g, 0x5F);
    return cp;
}

/* Every White_Space character but "\n", and near misses (ZWSP, BOM, the
 * U+180E that was White_Space until Unicode 6.3). */
static const uint32_t spaces[] = {
    ' ', ' ', ' ', ' ', '\t', '\r', 0x0B, 0x0C, 0x85, 0xA0, 0x1680, 0x2000,
    0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009,
    0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0x200B, 0xFEFF, 0x180E};
/* The zero of decimal-digit runs of several scripts, old and recent. */
static const uint32_t zeros[] = {
    '0', '0', '0', 0x660, 0x6F0, 0x966, 0xE50, 0xFF10, 0x1D7CE, 0x104A0,
    0x11F50, 0x1E4F0, 0x10D40, 0x16130};
/* Combining marks: ranges of several blocks, recent ones included. */
static const uint32_t marks[][2] = {
    {0x300, 0x36F}, {0x483, 0x489}, {0x591, 0x5BD}, {0x64B, 0x65F},
    {0x93C, 0x94D}, {0x1AB0, 0x1ACE}, {0x1DC0, 0x1DFF}, {0x20D0, 0x20F0},
    {0xFE20, 0xFE2F}, {0x10D69, 0x10D6D}, {0x1E4EC, 0x1E4EF}, {0x11F00, 0x11F03}};
static const char *const words[] = {
    "the", "and", "Hello", "world", "don", "I", "we", "you", "THE", "int",
    "return", "x", "id", "http", "://", "www", "é", "über", "naïve", "日本語",
    "Привет", "مرحبا", "नमस्ते", "😀", "👍🏽", "🇫🇷", "ﬁ", "Å", "ǅ", "ß"};
static const char *const puncts[] = {
    ".", ",", "!", "?", "...", "--", "->", "()", "{}", "[]", "//", "#",
    "\"", "'", "`", "$", "%", "&&", "<", ">", "=", "_", "@", "\\", "/*"};
static const char *const contractions[] = {"s", "t", "re", "ve", "m", "ll", "d"};

static int put_str(tb_buf_t *b, const char *s)
{
    return tb_buf_put(b, s, strlen(s));
}

static int piece_contraction(fuzz_gen_t *g, tb_buf_t *b)
{
    int rc = rnd(g, 4) ? tb_buf_putc(b, '\'') : put_cp(b, 0x2019);
    for (const char *c = contractions[rnd(g, 7)]; *c && !rc; c++)
        rc = tb_buf_putc(b, (uint8_t)(rnd(g, 3) ? *c : *c - 'a' + 'A'));
    return rc;
}

static int piece_invalid(fuzz_gen_t *g, tb_buf_t *b)
{
    static const char *const bad[] = {"\x80", "\xC3", "\xE2\x82", "\xF0\x9F\x98",
                                      "\xC0\x80", "\xED\xA0\x80", "\xFF",
                                      "\xF4\x90\x80\x80"};
    return put_str(b, bad[rnd(g, sizeof bad / sizeof *bad)]);
}

static int piece(fuzz_gen_t *g, tb_buf_t *b)
{
    uint32_t n = 1 + rnd(g, 6), k = rnd(g, 100);
    int rc = 0;
    if (k < 22)
        for (uint32_t i = 0; i < n && !rc; i++)
            rc = put_cp(b, any_cp(g));
    else if (k < 34) {
        uint32_t base = rnd(g, 2) ? 'a' + rnd(g, 26) : any_cp(g);
        rc = put_cp(b, base);
        for (uint32_t i = 0, m = 1 + rnd(g, 3); i < m && !rc; i++) {
            const uint32_t *r = marks[rnd(g, sizeof marks / sizeof *marks)];
            rc = put_cp(b, r[0] + rnd(g, r[1] - r[0] + 1));
        }
    } else if (k < 46)
        for (uint32_t i = 0; i < n && !rc; i++)
            rc = put_cp(b, spaces[rnd(g, sizeof spaces / sizeof *spaces)]);
    else if (k < 56) {
        uint32_t zero = zeros[rnd(g, sizeof zeros / sizeof *zeros)];
        for (uint32_t i = 0, m = 1 + rnd(g, 7); i < m && !rc; i++)
            rc = put_cp(b, zero + rnd(g, 10));
    } else if (k < 66)
        rc = piece_contraction(g, b);
    else if (k < 84)
        rc = (rnd(g, 2) ? tb_buf_putc(b, ' ') : 0) ||
             put_str(b, words[rnd(g, sizeof words / sizeof *words)]);
    else if (k < 92)
        rc = put_str(b, puncts[rnd(g, sizeof puncts / sizeof *puncts)]);
    else if (k < 97 && g->specials.len) {
        uint32_t id = (uint32_t)g->specials.data[rnd(g, (uint32_t)g->specials.len)];
        rc = tb_buf_put(b, g->vocab->bytes + g->vocab->offset[id],
                        g->vocab->offset[id + 1] - g->vocab->offset[id]);
    } else if (g->bytes_ok)
        rc = piece_invalid(g, b);
    else
        rc = put_cp(b, any_cp(g));
    return rc;
}

/* The vocabulary's special tokens that are text (no newline in them). */
static int collect_specials(fuzz_gen_t *g)
{
    const tok_vocab_t *v = g->vocab;
    for (uint32_t id = 0; id < v->size; id++) {
        uint32_t len = v->offset[id + 1] - v->offset[id];
        if (v->special[id] && len &&
            !memchr(v->bytes + v->offset[id], '\n', len) &&
            tb_vec_push(&g->specials, (size_t)id))
            return -1;
    }
    return 0;
}

static int generate(fuzz_gen_t *g, long lines, fuzz_batch_t *out)
{
    for (long i = 0; i < lines; i++) {
        if (tb_vec_push(&out->off, out->text.len))
            return -1;
        for (uint32_t p = 0, n = 1 + rnd(g, 16); p < n; p++)
            if (piece(g, &out->text))
                return -1;
    }
    return tb_vec_push(&out->off, out->text.len);
}

/* The batch of `lines` lines that `seed` gives. */
static int make_batch(const tok_vocab_t *vocab, int bytes_ok, long lines,
                      long seed, fuzz_batch_t *b, tb_err_t *err)
{
    fuzz_gen_t g = {.state = 0x9E3779B97F4A7C15ULL ^ (uint64_t)seed,
                    .vocab = vocab, .bytes_ok = bytes_ok};
    int rc = collect_specials(&g) || generate(&g, lines, b);
    free(g.specials.data);
    return rc ? tb_fail(err, "out of memory generating %ld lines", lines) : 0;
}

int xp_fuzz_generate(const tok_vocab_t *vocab, int bytes_ok, long lines,
                     long seed, tb_buf_t *text, tb_err_t *err)
{
    fuzz_batch_t b = {0};
    int rc = make_batch(vocab, bytes_ok, lines, seed, &b, err);
    for (size_t k = 0; !rc && k + 1 < b.off.len; k++)
        if (tb_buf_put(text, b.text.data + b.off.data[k],
                       b.off.data[k + 1] - b.off.data[k]) ||
            tb_buf_putc(text, '\n'))
            rc = tb_fail(err, "out of memory generating %ld lines", lines);
    free(b.text.data);
    free(b.off.data);
    return rc;
}

/* ---- running --------------------------------------------------------- */

/* Writes the batch's lines, one per line, to `in`. */
static int write_lines(const fuzz_batch_t *b, const char *in, tb_err_t *err)
{
    FILE *f = fopen(in, "w");
    if (!f)
        return tb_fail(err, "%s: %s", in, strerror(errno));
    for (size_t k = 0; k + 1 < b->off.len; k++) {
        size_t n = b->off.data[k + 1] - b->off.data[k];
        if (fwrite(b->text.data + b->off.data[k], 1, n, f) != n ||
            fputc('\n', f) == EOF)
            break;
    }
    if (ferror(f) | fclose(f))
        return tb_fail(err, "%s: cannot write the lines", in);
    return 0;
}

/* Runs reference k over the batch; *ref receives its output. */
static int reference_ids(xp_ref_kind_t k, const char *ref_path,
                         const fuzz_batch_t *b, tb_buf_t *ref, tb_err_t *err)
{
    char in[PATH_MAX], out[PATH_MAX + 8];
    if (xp_ref_tmpfile("fuzz", in, sizeof in, err))
        return -1;
    snprintf(out, sizeof out, "%s.ids", in);
    free(ref->data);
    *ref = (tb_buf_t){0};
    int rc = write_lines(b, in, err) || xp_ref_run(k, ref_path, in, out, err) ||
             tb_read_file(out, &ref->data, &ref->len, err);
    ref->cap = ref->len;
    unlink(in);
    unlink(out);
    return rc ? -1 : 0;
}

/* Line k of the batch: does tokbench differ from the reference's ids in
 * want?  got receives tokbench's ids (empty when it failed). */
static int differs(tok_tokenizer_t *t, const fuzz_batch_t *b, size_t k,
                   const tok_ids_t *want, tok_ids_t *got)
{
    tb_err_t e;
    got->len = 0;
    if (tok_encode(t, b->text.data + b->off.data[k],
                   b->off.data[k + 1] - b->off.data[k], got, &e)) {
        got->len = 0;
        return 1;
    }
    return !xp_ref_same_ids(got, want);
}

/* ---- shrinking ------------------------------------------------------- */

/* Every copy of s[0..n) with one chunk of characters removed, for chunk
 * sizes of half the characters down to one (at most about 400 copies). */
static int shrink_candidates(const uint8_t *s, size_t n, fuzz_batch_t *out)
{
    fuzz_offs_t starts = {0};
    int rc = 0;
    for (size_t i = 0; i < n && !rc;) {
        rc = tb_vec_push(&starts, i);
        uint32_t cp;
        size_t l = tb_utf8_decode(s + i, n - i, &cp);
        i += l ? l : 1;
    }
    rc = rc || tb_vec_push(&starts, n);
    size_t m = starts.len - 1;
    out->text.len = out->off.len = 0;
    for (size_t c = m / 2 ? m / 2 : 1; c >= 1 && !rc; c /= 2) {
        if (m / c > 200 && c > 1)
            continue;
        for (size_t i = 0; i < m && !rc; i += c) {
            size_t a = starts.data[i], z = starts.data[i + c < m ? i + c : m];
            if (a == 0 && z == n)
                continue;
            rc = tb_vec_push(&out->off, out->text.len) ||
                 tb_buf_put(&out->text, s, a) ||
                 tb_buf_put(&out->text, s + z, n - z);
        }
        if (c == 1)
            break;
    }
    rc = rc || tb_vec_push(&out->off, out->text.len);
    free(starts.data);
    return rc;
}

/* Shrinks s[0..n), which differs from reference k, into best. */
static int shrink(tok_tokenizer_t *t, xp_ref_kind_t k, const char *ref_path,
                  const uint8_t *s, size_t n, tb_buf_t *best, int *rounds,
                  tb_err_t *err)
{
    fuzz_batch_t cand = {0};
    tb_buf_t ref = {0};
    tok_ids_t got = {0}, want = {0};
    int rc = 0;
    best->len = 0;
    if (tb_buf_put(best, s, n))
        return tb_fail(err, "out of memory shrinking a line");
    for (*rounds = 0; *rounds < 64 && !rc; ++*rounds) {
        if (shrink_candidates(best->data, best->len, &cand)) {
            rc = tb_fail(err, "out of memory shrinking a line");
            break;
        }
        if (cand.off.len < 2 || reference_ids(k, ref_path, &cand, &ref, err)) {
            rc = cand.off.len < 2 ? 0 : -1;
            break;
        }
        size_t at = 0, pick = SIZE_MAX, pick_len = best->len;
        for (size_t c = 0; c + 1 < cand.off.len && !rc; c++) {
            size_t len = cand.off.data[c + 1] - cand.off.data[c];
            rc = xp_ref_next_ids(&ref, &at, c + 1, &want, err);
            if (!rc && len < pick_len && differs(t, &cand, c, &want, &got)) {
                pick = c;
                pick_len = len;
            }
        }
        if (rc || pick == SIZE_MAX)
            break;
        best->len = 0;
        if (tb_buf_put(best, cand.text.data + cand.off.data[pick], pick_len))
            rc = tb_fail(err, "out of memory shrinking a line");
    }
    free(cand.text.data);
    free(cand.off.data);
    free(ref.data);
    free(got.data);
    free(want.data);
    return rc;
}

/* ---- reporting ------------------------------------------------------- */

/* The text with every byte outside printable ASCII as \xNN, and its code
 * points (when it is valid UTF-8 and short). */
static void print_input(const uint8_t *s, size_t n)
{
    printf("  input     \"");
    for (size_t i = 0; i < n; i++)
        printf(s[i] >= 0x20 && s[i] < 0x7F && s[i] != '"' && s[i] != '\\'
                   ? "%c" : "\\x%02x", s[i]);
    printf("\" (%zu bytes)\n", n);
    if (tb_utf8_validate(s, n) != n || n > 96)
        return;
    printf("  chars    ");
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += tb_utf8_decode(s + i, n - i, &cp);
        printf(" U+%04X", cp);
    }
    printf("\n");
}

static void print_ids(const char *label, const tok_ids_t *ids)
{
    printf("  %-9s", label);
    for (size_t i = 0; i < ids->len && i < 24; i++)
        printf(" %u", ids->data[i]);
    printf("%s\n", ids->len > 24 ? " ..." : ids->len ? "" : " (none)");
}

/* Shrinks a differing line and prints the shortest input found. */
static int report(const fuzz_opts_t *o, tok_tokenizer_t *t, xp_ref_kind_t k,
                  const char *ref_path, const fuzz_batch_t *b, size_t line,
                  tb_err_t *err)
{
    tb_buf_t best = {0};
    int rounds = 0;
    const uint8_t *s = b->text.data + b->off.data[line];
    size_t n = b->off.data[line + 1] - b->off.data[line];
    if (shrink(t, k, ref_path, s, n, &best, &rounds, err)) {
        tb_buf_free(&best);
        return -1;
    }
    fuzz_batch_t one = {.text = best};
    size_t offs[2] = {0, best.len};
    one.off = (fuzz_offs_t){offs, 2, 2};
    tb_buf_t ref = {0};
    tok_ids_t got = {0}, want = {0};
    size_t at = 0;
    int rc = reference_ids(k, ref_path, &one, &ref, err) ||
             xp_ref_next_ids(&ref, &at, 1, &want, err);
    if (!rc) {
        differs(t, &one, 0, &want, &got);
        printf("%s: line %zu (seed %ld) differs from %s; shortest input found "
               "(%zu of %zu bytes, %d rounds):\n",
               o->spec, line + 1, o->seed, xp_ref_name(k), best.len, n, rounds);
        print_input(best.data, best.len);
        print_ids("tokbench", &got);
        print_ids("reference", &want);
    }
    tb_buf_free(&best);
    free(ref.data);
    free(got.data);
    free(want.data);
    return rc ? -1 : 0;
}

/* ---- the command ----------------------------------------------------- */

/* Compares every line with reference k; counts into st. */
static int fuzz_one(const fuzz_opts_t *o, tok_tokenizer_t *t, xp_ref_kind_t k,
                    const fuzz_batch_t *b, xp_fuzz_stats_t *st, tb_err_t *err)
{
    const char *ref_path = o->ref_spec ? o->ref_path : o->path;
    tb_buf_t ref = {0};
    tok_ids_t got = {0}, want = {0};
    size_t at = 0;
    long mism = 0, tokens = 0, lines = (long)b->off.len - 1;
    int rc = reference_ids(k, ref_path, b, &ref, err);
    for (long i = 0; i < lines && !rc; i++) {
        rc = xp_ref_next_ids(&ref, &at, (size_t)i + 1, &want, err);
        tokens += (long)want.len;
        if (!rc && differs(t, b, (size_t)i, &want, &got) && mism++ < o->show &&
            !o->silent)
            rc = report(o, t, k, ref_path, b, (size_t)i, err);
    }
    if (!rc && at < ref.len)
        rc = tb_fail(err, "%s gave more output lines than the %ld input lines",
                     xp_ref_name(k), lines);
    if (!rc && !o->silent)
        printf("fuzz %s against %s: %ld lines (seed %ld), %ld reference tokens, "
               "%ld mismatches\n", o->spec, xp_ref_name(k), lines, o->seed,
               tokens, mism);
    st->lines += lines;
    st->mismatches += mism;
    free(ref.data);
    free(got.data);
    free(want.data);
    return rc ? -1 : 0;
}

static int fuzz_run(fuzz_opts_t *o, xp_fuzz_stats_t *st, tb_err_t *err)
{
    const char *ref_path = o->ref_spec ? o->ref_path : o->path;
    tok_format_t rf;
    xp_ref_kind_t kinds[XP_REF_MAX_PER_FORMAT];
    int nk;
    if (xp_ref_guess_format(ref_path, &rf, err) ||
        (nk = xp_ref_kinds(rf, kinds, err)) < 0)
        return -1;
    tok_tokenizer_t *t = tok_load(o->path, err);
    if (!t)
        return -1;
    fuzz_batch_t b = {0};
    int rc = make_batch(tok_vocab(t), rf == TOK_FORMAT_SPM_MODEL, o->lines,
                        o->seed, &b, err);
    if (!rc && o->save)
        rc = write_lines(&b, o->save, err);
    for (int i = 0; i < nk && !rc; i++)
        rc = fuzz_one(o, t, kinds[i], &b, st, err);
    free(b.text.data);
    free(b.off.data);
    tok_free(t);
    return rc;
}

int xp_fuzz_check(const char *vocab_path, long lines, long seed,
                  xp_fuzz_stats_t *st, tb_err_t *err)
{
    fuzz_opts_t o = {.spec = vocab_path, .lines = lines, .seed = seed,
                     .silent = 1};
    snprintf(o.path, sizeof o.path, "%s", vocab_path);
    memset(st, 0, sizeof *st);
    return fuzz_run(&o, st, err);
}

static void fuzz_usage(FILE *out)
{
    fprintf(out,
        "usage: tokbench fuzz SPEC [--lines N] [--seed S] [--show N] [--ref SPEC2]\n"
        "                     [--save FILE]\n\n"
        "Generates N lines of text (seeded: every plane, combining sequences,\n"
        "whitespace and digit runs, contractions, special-token strings, and\n"
        "invalid UTF-8 for spm_encode, which takes bytes) and compares SPEC's ids\n"
        "with those of every reference program of its format (as conform does).\n"
        "A line that differs is shrunk to the shortest input found that still\n"
        "differs, which is printed with both id lists.\n\n"
        "  --lines N    lines to generate (default 1000)\n"
        "  --seed S     generator seed (default 1); a seed gives the same lines\n"
        "  --show N     shrink and print N mismatches per reference (default 3)\n"
        "  --ref SPEC2  take the reference ids from SPEC2 (a deliberate wrong\n"
        "               pairing, to see the shrinking work)\n"
        "  --save FILE  also write the generated lines to FILE (a corpus for\n"
        "               'tokbench conform', or for another build)\n\n"
        "Exit status: 0 if every line matches, 1 if any differs or on an error,\n"
        "2 on a usage error.\n");
}

static int fuzz_parse(int argc, char **argv, fuzz_opts_t *o)
{
    static const struct option longs[] = {
        {"lines", required_argument, NULL, 'l'},
        {"seed", required_argument, NULL, 's'},
        {"show", required_argument, NULL, 'w'},
        {"ref", required_argument, NULL, 'r'},
        {"save", required_argument, NULL, 'o'},
        {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof *o);
    o->lines = 1000;
    o->seed = 1;
    o->show = 3;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        long *dst = c == 'l' ? &o->lines : c == 's' ? &o->seed
                  : c == 'w' ? &o->show : NULL;
        char *end;
        if (c == 'r' || c == 'o') {
            *(c == 'r' ? &o->ref_spec : &o->save) = optarg;
            continue;
        }
        if (dst) {
            errno = 0;
            *dst = strtol(optarg, &end, 10);
            if (!errno && *optarg && !*end && *dst >= 0)
                continue;
            fprintf(stderr, "tokbench fuzz: want a count, got '%s'\n", optarg);
        }
        fuzz_usage(stderr);
        return 2;
    }
    if (optind != argc - 1) {
        fuzz_usage(stderr);
        return 2;
    }
    o->spec = argv[optind];
    return 0;
}

int xp_cmd_fuzz(int argc, char **argv)
{
    if (xp_wants_help(argc, argv)) {
        fuzz_usage(stdout);
        return 0;
    }
    fuzz_opts_t o;
    int rc = fuzz_parse(argc, argv, &o);
    if (rc)
        return rc;
    tb_err_t err;
    if (xp_resolve_spec(o.spec, o.path, sizeof o.path, &err) ||
        (o.ref_spec &&
         xp_resolve_spec(o.ref_spec, o.ref_path, sizeof o.ref_path, &err)))
        return xp_die(&err);
    xp_fuzz_stats_t st = {0};
    if (fuzz_run(&o, &st, &err))
        return xp_die(&err);
    return st.mismatches ? 1 : 0;
}
