/*
 * cmd_mask: `tokbench mask SPEC --regex R`, one token mask of a regex over a
 * vocabulary's trie, with what it cost: allowed tokens (count and a
 * sample), nodes visited, time per mask and reference cycles per visited
 * node.  The first mask is timed apart, since it also builds the DFA states
 * it reaches; the figures after it are the warm walk the benchmark is about.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../lexer/rec.h"
#include "../tok/tokenizer.h"
#include "../trie/trie.h"
#include "cli.h"
#include "counters.h"

static int mask_usage(FILE *out)
{
    fprintf(out,
            "usage: tokbench mask SPEC --regex R [--layout L] [--after TEXT]\n"
            "                     [--reps N] [--sample N] [--max-states N]\n\n"
            "Builds layout L (default dfs) over the tokens of SPEC, feeds TEXT (raw\n"
            "bytes) to the DFA of R, and computes the mask of the tokens that can\n"
            "come next: a token is allowed iff TEXT followed by its bytes is a\n"
            "prefix of a string R matches.  Prints the allowed count, a sample of\n"
            "them (default 10), nodes visited, the time of the first (cold) mask\n"
            "and min/median of N warm ones (default 21), ns and TSC reference\n"
            "cycles per visited node, and the DFA's size.  R is matched whole\n"
            "(JSON-schema and pre-tokenizer syntax, \\p{..} general categories;\n"
            "lexer/regex.h lists what is supported); --max-states caps the lazy\n"
            "DFA (default %d), which fails with an error past it.\n",
            LEX_DEFAULT_MAX_STATES);
    return out == stdout ? 0 : 2;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void print_token(const uint8_t *s, size_t n)
{
    putchar('\'');
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (c == '\\' || c == '\'')
            printf("\\%c", c);
        else if (c == '\n')
            fputs("\\n", stdout);
        else if (c < 0x20 || c == 0x7F)
            printf("\\x%02x", c);
        else
            putchar(c);
    }
    putchar('\'');
}

typedef struct {
    const char *spec, *regex, *layout, *after;
    unsigned reps, sample;
    size_t max_states;
} mask_args_t;

static int parse_args(int argc, char **argv, mask_args_t *a)
{
    *a = (mask_args_t){.layout = "dfs", .after = "", .reps = 21, .sample = 10};
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--regex") && v)
            a->regex = v, i++;
        else if (!strcmp(argv[i], "--layout") && v)
            a->layout = v, i++;
        else if (!strcmp(argv[i], "--after") && v)
            a->after = v, i++;
        else if (!strcmp(argv[i], "--reps") && v)
            a->reps = (unsigned)strtoul(v, NULL, 10), i++;
        else if (!strcmp(argv[i], "--sample") && v)
            a->sample = (unsigned)strtoul(v, NULL, 10), i++;
        else if (!strcmp(argv[i], "--max-states") && v)
            a->max_states = strtoul(v, NULL, 10), i++;
        else if (argv[i][0] != '-' && !a->spec)
            a->spec = argv[i];
        else
            return -1;
    }
    if (!a->spec || !a->regex)
        return -1;
    if (a->reps == 0)
        a->reps = 1;
    return 0;
}

/* The trie of SPEC's tokens in layout `name`; *max_len gets the longest. */
static trie_t *load_trie(const char *spec, const char *name, uint32_t *max_len,
                         tok_tokenizer_t **tok, tb_err_t *err)
{
    const trie_layout_t *layout = trie_layout_find(name);
    if (!layout) {
        tb_fail(err, "no trie layout '%s'", name);
        return NULL;
    }
    char path[PATH_MAX];
    if (xp_resolve_spec(spec, path, sizeof path, err) || !(*tok = tok_load(path, err)))
        return NULL;
    trie_keys_t keys;
    if (trie_keys_from_vocab(&keys, tok_vocab(*tok), TRIE_SPECIALS_OMIT, err))
        return NULL;
    trie_t *t = trie_build(layout, &keys, err);
    *max_len = keys.max_len;
    trie_keys_free(&keys);
    return t;
}

int xp_cmd_mask(int argc, char **argv)
{
    if (xp_wants_help(argc, argv))
        return mask_usage(stdout);
    mask_args_t a;
    if (parse_args(argc, argv, &a))
        return mask_usage(stderr);
    tb_err_t err;
    /* The pattern first: a bad one fails before the vocabulary loads. */
    lex_dfa_opts_t opts = {.max_states = a.max_states};
    lex_dfa_t *dfa = lex_dfa_new(a.regex, &opts, &err);
    if (!dfa)
        return xp_die(&err);
    tok_tokenizer_t *tok = NULL;
    uint32_t max_len = 0;
    double t0 = now_ns();
    trie_t *trie = load_trie(a.spec, a.layout, &max_len, &tok, &err);
    double build_ms = (now_ns() - t0) / 1e6;
    lex_rec_t rec = {0};
    tb_bitset_t mask = {0};
    uint64_t *ticks = NULL;
    int status = 1;
    if (!trie || lex_rec_init(&rec, dfa, max_len, &err))
        goto out;
    size_t alen = strlen(a.after);
    /* Byte by byte, so that a refusal or a passed limit names its offset. */
    uint32_t state = LEX_START;
    for (size_t i = 0; i < alen; i++) {
        state = lex_dfa_next(dfa, state, (uint8_t)a.after[i]);
        if (lex_dfa_error(dfa, &err)) {
            tb_wrap(&err, "--after, at byte %zu", i);
            goto out;
        }
        if (state == LEX_DEAD) {
            tb_fail(&err, "regex '%s': --after text is refused at byte %zu: it is not "
                    "a prefix of any string the regex matches", a.regex, i);
            goto out;
        }
    }
    ticks = malloc(a.reps * sizeof *ticks);
    if (!ticks || tb_bitset_init(&mask, trie_mask_bits(trie))) {
        tb_fail(&err, "out of memory");
        goto out;
    }
    uint64_t nodes = 0;
    double c0 = now_ns();
    if (lex_mask(trie, &rec, state, &mask, &nodes, &err)) {
        tb_wrap(&err, "mask walk");
        goto out;
    }
    double cold_us = (now_ns() - c0) / 1e3;
    double w0 = now_ns();
    uint64_t tsc_sum = 0;
    for (unsigned r = 0; r < a.reps; r++) {
        uint64_t b = xp_tsc_begin();
        if (lex_mask(trie, &rec, state, &mask, &nodes, &err))
            goto out;
        ticks[r] = xp_tsc_end() - b;
        tsc_sum += ticks[r];
    }
    double wall_per = (now_ns() - w0) / a.reps;
    double hz = xp_tsc_measure_hz(50);
    /* ns per tick from the same loop's wall clock, so a failed frequency
     * measurement still leaves usable times. */
    double ns_per_tick = tsc_sum ? wall_per * a.reps / (double)tsc_sum : 0;
    if (hz > 0)
        ns_per_tick = 1e9 / hz;
    qsort(ticks, a.reps, sizeof *ticks, cmp_u64);
    uint64_t med = ticks[a.reps / 2], min = ticks[0];

    const tok_vocab_t *v = tok_vocab(tok);
    size_t allowed = tb_bitset_count(&mask);
    printf("regex      %s\n", a.regex);
    printf("after      %zu bytes -> state %u%s\n", alen, state,
           lex_dfa_accepting(dfa, state) ? " (accepting)" : "");
    printf("layout     %s: %zu nodes, %zu bytes, built in %.1f ms (with loading)\n",
           a.layout, trie_nodes(trie), trie_bytes(trie), build_ms);
    printf("allowed    %zu of %u tokens\n", allowed, v->size);
    printf("sample    ");
    unsigned shown = 0;
    for (uint32_t id = 0; id < v->size && id < mask.nbits && shown < a.sample; id++)
        if (tb_bitset_get(&mask, id)) {
            size_t n;
            const uint8_t *s = tok_vocab_token(v, id, &n);
            putchar(' ');
            print_token(s, n);
            shown++;
        }
    printf("%s\n", allowed > shown ? " ..." : "");
    printf("visited    %llu nodes\n", (unsigned long long)nodes);
    printf("time       cold %.1f us (builds DFA states); warm over %u: min %.1f us, "
           "median %.1f us\n", cold_us, a.reps, (double)min * ns_per_tick / 1e3,
           (double)med * ns_per_tick / 1e3);
    if (nodes)
        printf("per node   %.2f ns, %.1f TSC cycles (median mask%s)\n",
               (double)med * ns_per_tick / (double)nodes, (double)med / (double)nodes,
               hz > 0 ? "" : "; TSC frequency unknown");
    printf("dfa        %zu states, %u byte classes, %zu terms\n", dfa->nstates,
           dfa->ncls, dfa->terms.n);
    status = 0;
out:
    if (status)
        xp_die(&err);
    free(ticks);
    tb_bitset_free(&mask);
    lex_rec_free(&rec);
    trie_free(trie);
    tok_free(tok);
    lex_dfa_free(dfa);
    return status;
}
