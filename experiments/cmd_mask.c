/*
 * cmd_mask: `tokbench mask SPEC --regex R`, one token mask of a regex (or
 * a lexer, or a built-in recognizer: the same lazy DFA and walk) over a
 * vocabulary's trie, with what it cost: allowed tokens (count and a
 * sample), nodes visited, time per mask and reference cycles per visited
 * node.  The first mask is timed apart, since it also builds the DFA states
 * it reaches; the figures after it are the warm walk the benchmark is about.
 * --slicer adds the sliced mask (lexer/slicer.h) over the same layout,
 * checked equal to the plain one and timed in the same loop; --index
 * builds the precomputed token index (lexer/index.h) from the same state.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lexer/builtin.h"
#include "../lexer/index.h"
#include "../lexer/lexemes.h"
#include "../lexer/rec.h"
#include "../lexer/slicer.h"
#include "../tok/tokenizer.h"
#include "../trie/trie.h"
#include "cli.h"
#include "counters.h"
#include "setup.h"

static int mask_usage(FILE *out)
{
    fprintf(out,
            "usage: tokbench mask SPEC (--regex R | --lexer FILE | --builtin NAME)\n"
            "                     [--layout L]\n"
            "                     [--after TEXT]\n"
            "                     [--reps N] [--sample N] [--max-states N]\n"
            "                     [--slicer default|R1;R2;...] [--index]\n\n"
            "Builds layout L (default dfs) over the tokens of SPEC, feeds TEXT (raw\n"
            "bytes) to the DFA of R, and computes the mask of the tokens that can\n"
            "come next: a token is allowed iff TEXT followed by its bytes is a\n"
            "prefix of a string R matches.  Prints the allowed count, a sample of\n"
            "them (default 10), nodes visited, the time of the first (cold) mask\n"
            "and min/median of N warm ones (default 21), ns and TSC reference\n"
            "cycles per visited node, and the DFA's size.  R is matched whole\n"
            "(JSON-schema and pre-tokenizer syntax, \\p{..} general categories and\n"
            "scripts, (?i) with Unicode simple case folding;\n"
            "lexer/regex.h lists what is supported); --max-states caps the lazy\n"
            "DFA (default %d), which fails with an error past it.\n\n"
            "--lexer FILE takes a multi-lexeme lexer spec (docs/lexemes.md)\n"
            "instead of R: a token may span lexeme boundaries; also prints the\n"
            "lexemes possible and ending after TEXT.\n\n"
            "--builtin NAME takes a built-in byte recognizer instead (%s;\n"
            "lexer/builtin.h), the `walk` rows' patterns of the same names.\n\n"
            "--slicer splits the tokens into slices (each token goes to the first\n"
            "slice regex it is a prefix of, the rest to a residual trie; 'default'\n"
            "is the JSON string set of lexer/slicer.h; '\\;' is a literal ';') and\n"
            "computes the same mask taking subsumed slices whole: prints slices\n"
            "taken whole and walked, nodes walked, the sliced mask's time beside the\n"
            "plain walk's (same loop), the slicer's build time and bytes.\n"
            "--index builds the precomputed token index from the state after TEXT\n"
            "(at most --index-states N states, default %d) and prints its build\n"
            "time, states, entries and bytes.\n",
            LEX_DEFAULT_MAX_STATES, lex_builtin_names, LEX_INDEX_DEFAULT_MAX_STATES);
    return out == stdout ? 0 : 2;
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

/* The lexemes possible and ending at state s of a lexer DFA. */
static int print_lexemes(const lex_dfa_t *d, uint32_t s, tb_err_t *err)
{
    tb_bitset_t set;
    if (tb_bitset_init(&set, lex_dfa_nlexemes(d)))
        return tb_fail(err, "out of memory");
    for (int k = 0; k < 2; k++) {
        (k ? lex_dfa_ending : lex_dfa_possible)(d, s, &set);
        printf("%s", k ? "ending    " : "possible  ");
        for (size_t i = 0; i < set.nbits; i++)
            if (tb_bitset_get(&set, i))
                printf(" %s", lex_dfa_lexeme_name(d, i));
        printf("\n");
    }
    tb_bitset_free(&set);
    return 0;
}

typedef struct {
    const char *spec, *regex, *lexer, *builtin, *layout, *after, *slicer;
    unsigned reps, sample;
    size_t max_states, index_states;
    int index;
} mask_args_t;

static int parse_args(int argc, char **argv, mask_args_t *a)
{
    *a = (mask_args_t){.layout = "dfs", .after = "", .reps = 21, .sample = 10};
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--regex") && v)
            a->regex = v, i++;
        else if (!strcmp(argv[i], "--lexer") && v)
            a->lexer = v, i++;
        else if (!strcmp(argv[i], "--builtin") && v)
            a->builtin = v, i++;
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
        else if (!strcmp(argv[i], "--slicer") && v)
            a->slicer = v, i++;
        else if (!strcmp(argv[i], "--index"))
            a->index = 1;
        else if (!strcmp(argv[i], "--index-states") && v)
            a->index_states = strtoul(v, NULL, 10), a->index = 1, i++;
        else if (argv[i][0] != '-' && !a->spec)
            a->spec = argv[i];
        else
            return -1;
    }
    if (!a->spec || !!a->regex + !!a->lexer + !!a->builtin != 1) /* one of the three */
        return -1;
    if (a->reps == 0)
        a->reps = 1;
    return 0;
}

/* The trie of SPEC's tokens in layout `name`; keys gets the keys it was
 * built from (freed by the caller, also on failure). */
static trie_t *load_trie(const char *spec, const char *name, trie_keys_t *keys,
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
    if (trie_keys_from_vocab(keys, tok_vocab(*tok), TRIE_SPECIALS_OMIT, err))
        return NULL;
    return trie_build(layout, keys, err);
}

/* Median of n samples (sorts them). */
static uint64_t median(uint64_t *v, unsigned n)
{
    qsort(v, n, sizeof *v, cmp_u64);
    return v[n / 2];
}

/* The sliced mask beside the plain one: built over the same keys and
 * layout, checked equal to `plain`, both timed alternately in one loop so
 * that the ratio is taken under the same conditions. */
static int run_slicer(const mask_args_t *a, const trie_t *trie, const trie_keys_t *keys,
                      lex_rec_t *rec, uint32_t state, const tb_bitset_t *plain,
                      double ns_per_tick, tb_err_t *err)
{
    char **regexes = NULL;
    size_t n = 0;
    if (lex_slicer_parse_list(a->slicer, &regexes, &n, err))
        return -1;
    double b0 = xp_now_ns();
    lex_slicer_t *sl = lex_slicer_new(keys, trie_layout(trie), (const char *const *)regexes,
                                      n, err);
    double build_ms = (xp_now_ns() - b0) / 1e6;
    tb_bitset_t m = {0}, p = {0};
    uint64_t *ts = malloc(2 * a->reps * sizeof *ts), *tp = ts ? ts + a->reps : NULL;
    int rc = -1;
    lex_slice_stats_t st = {0};
    if (!sl)
        goto out;
    if (!ts || tb_bitset_init(&m, sl->mask_bits) || tb_bitset_init(&p, plain->nbits)) {
        tb_fail(err, "out of memory");
        goto out;
    }
    double c0 = xp_now_ns();
    if (lex_slicer_mask(sl, rec, state, &m, &st, err))
        goto out;
    double cold_us = (xp_now_ns() - c0) / 1e3;
    for (unsigned r = 0; r < a->reps; r++) {
        uint64_t b = xp_tsc_begin();
        if (lex_slicer_mask(sl, rec, state, &m, &st, err))
            goto out;
        ts[r] = xp_tsc_end() - b;
        b = xp_tsc_begin();
        if (lex_mask(trie, rec, state, &p, NULL, err))
            goto out;
        tp[r] = xp_tsc_end() - b;
    }
    int same = tb_bitset_equal(&m, plain);
    double ms = median(ts, a->reps) * ns_per_tick, mp = median(tp, a->reps) * ns_per_tick;
    printf("slicer     %zu slices + residual (%zu tokens), built in %.1f ms, %zu bytes\n",
           sl->nslice, sl->nrest, build_ms, lex_slicer_bytes(sl));
    for (size_t i = 0; i < sl->nslice; i++)
        printf("  slice %zu  %s: %zu tokens, %s\n", i + 1, sl->slice[i].regex,
               sl->slice[i].ntokens, !sl->slice[i].trie ? "empty"
               : lex_slicer_subsumes(sl, i, state, err) > 0 ? "taken whole" : "walked");
    printf("sliced     %u slices taken whole, %u walked, %llu nodes walked; mask %s the "
           "plain walk's\n", st.whole, st.walked, (unsigned long long)st.nodes,
           same ? "equals" : "DIFFERS FROM");
    printf("sliced time cold %.1f us (decides subsumption); warm median %.1f us against "
           "%.1f us plain: %.1fx\n", cold_us, ms / 1e3, mp / 1e3, ms > 0 ? mp / ms : 0);
    rc = same ? 0 : tb_fail(err, "the sliced mask differs from the plain walk's");
out:
    free(ts);
    tb_bitset_free(&m);
    tb_bitset_free(&p);
    lex_slicer_free(sl);
    free(regexes);
    return rc;
}

/* The precomputed token index from `state`, checked against the plain mask
 * there. */
static int run_index(const mask_args_t *a, const trie_t *trie, const trie_keys_t *keys,
                     lex_dfa_t *dfa, uint32_t state, const tb_bitset_t *plain, tb_err_t *err)
{
    double b0 = xp_now_ns();
    lex_index_t *x = lex_index_build(trie, keys, dfa, state, a->index_states, err);
    double build_ms = (xp_now_ns() - b0) / 1e6;
    if (!x)
        return -1;
    tb_bitset_t m = {0};
    int rc = tb_bitset_init(&m, plain->nbits) ? tb_fail(err, "out of memory") : 0;
    if (!rc) {
        double t0 = xp_now_ns();
        lex_index_mask(x, 0, &m);
        double q_us = (xp_now_ns() - t0) / 1e3;
        int same = tb_bitset_equal(&m, plain);
        printf("index      built in %.1f ms: %zu states, %llu entries, %zu bytes, %llu nodes "
               "walked; its mask here (%.1f us) %s the walk's\n", build_ms,
               x->nstates, (unsigned long long)lex_index_entries(x), lex_index_bytes(x),
               (unsigned long long)x->walk_nodes, q_us, same ? "equals" : "DIFFERS FROM");
        if (!same)
            rc = tb_fail(err, "the index's mask differs from the plain walk's");
    }
    tb_bitset_free(&m);
    lex_index_free(x);
    return rc;
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
    lex_dfa_t *dfa = a.lexer     ? lex_lexer_load(a.lexer, &opts, &err)
                     : a.builtin ? lex_builtin_dfa(a.builtin, &opts, &err)
                                 : lex_dfa_new(a.regex, &opts, &err);
    if (!dfa)
        return xp_die(&err);
    const char *kind = a.lexer ? "lexer" : a.builtin ? "builtin" : "regex";
    tok_tokenizer_t *tok = NULL;
    trie_keys_t keys = {0};
    double t0 = xp_now_ns();
    trie_t *trie = load_trie(a.spec, a.layout, &keys, &tok, &err);
    double build_ms = (xp_now_ns() - t0) / 1e6;
    lex_rec_t rec = {0};
    tb_bitset_t mask = {0};
    uint64_t *ticks = NULL;
    int status = 1;
    if (!trie || lex_rec_init(&rec, dfa, keys.max_len, &err))
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
            tb_fail(&err, "%s '%s': --after text is refused at byte %zu: it is not "
                    "a prefix of any string the %s matches", kind, dfa->pattern, i, kind);
            goto out;
        }
    }
    ticks = malloc(a.reps * sizeof *ticks);
    if (!ticks || tb_bitset_init(&mask, trie_mask_bits(trie))) {
        tb_fail(&err, "out of memory");
        goto out;
    }
    uint64_t nodes = 0;
    double c0 = xp_now_ns();
    if (lex_mask(trie, &rec, state, &mask, &nodes, &err)) {
        tb_wrap(&err, "mask walk");
        goto out;
    }
    double cold_us = (xp_now_ns() - c0) / 1e3;
    double w0 = xp_now_ns();
    uint64_t tsc_sum = 0;
    for (unsigned r = 0; r < a.reps; r++) {
        uint64_t b = xp_tsc_begin();
        if (lex_mask(trie, &rec, state, &mask, &nodes, &err))
            goto out;
        ticks[r] = xp_tsc_end() - b;
        tsc_sum += ticks[r];
    }
    double wall_per = (xp_now_ns() - w0) / a.reps;
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
    if (a.lexer)
        printf("lexer      %s (%zu lexemes)\n", a.lexer, lex_dfa_nlexemes(dfa));
    else
        printf("%-10s %s\n", kind, dfa->pattern);
    printf("after      %zu bytes -> state %u%s\n", alen, state,
           lex_dfa_accepting(dfa, state) ? " (accepting)" : "");
    if (a.lexer && print_lexemes(dfa, state, &err))
        goto out;
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
    if (a.slicer && run_slicer(&a, trie, &keys, &rec, state, &mask, ns_per_tick, &err))
        goto out;
    if (a.index && run_index(&a, trie, &keys, dfa, state, &mask, &err))
        goto out;
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
    trie_keys_free(&keys);
    tok_free(tok);
    lex_dfa_free(dfa);
    return status;
}
