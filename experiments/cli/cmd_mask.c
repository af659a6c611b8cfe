/*
 * cmd_mask: `tokbench mask SPEC --regex R`, one token mask of a regex over a
 * vocabulary's trie, with what it cost: allowed tokens (count and a
 * sample), nodes visited, time per mask and reference cycles per visited
 * node.  The first mask is timed apart, since it also builds the DFA states
 * it reaches; the figures after it are the warm walk the benchmark is about.
 * --slicer adds the sliced mask (lexer/slicer.h) over the same layout,
 * checked equal to the plain one and timed in the same loop; --index
 * builds the precomputed token index (lexer/index.h) from the same state.
 * --grammar runs the same under a grammar (grammar/): the walk, the slicer
 * and the figures are the same, plus what the parser did.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../grammar/load.h"
#include "../../grammar/match.h"
#include "../../lexer/builtin.h"
#include "../../lexer/index.h"
#include "../../lexer/lexemes.h"
#include "../../lexer/rec.h"
#include "../../lexer/slicer.h"
#include "../../tok/tokenizer.h"
#include "../../trie/trie.h"
#include "cli.h"
#include "../counters/counters.h"
#include "../drivers/setup.h"

static int mask_usage(FILE *out)
{
    fprintf(out,
            "usage: tokbench mask SPEC (--regex R | --lexer FILE | --builtin NAME |\n"
            "                     --grammar FILE [--format lark|gbnf|schema]\n"
            "                     [--start RULE] [--semantics default|llguidance|lark] |\n"
            "                     --schema FILE [--format-annotation] [--remote-dir DIR])\n"
            "                     [--layout L] [--after TEXT] [--ids]\n"
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
            "--grammar FILE takes a grammar (docs/grammars.md): Lark-style (.lark),\n"
            "GBNF (.gbnf) or a JSON Schema (.json, or --schema FILE), the format\n"
            "from the extension unless --format says it (--start RULE: a Lark\n"
            "grammar's start rule, start by default).  A token is allowed iff\n"
            "TEXT followed by its bytes is a prefix of a sentence of the grammar.\n"
            "Also prints whether TEXT is a sentence, the bytes the grammar forces\n"
            "next, and what the parser did: table entries computed and those at\n"
            "lexeme boundaries, parser scans and time in the parser, during the\n"
            "cold mask and during the warm ones, and the grammar's states, Earley\n"
            "rows and items.\n\n"
            "--ids prints the allowed token ids, one per line, and nothing else on\n"
            "stdout (to compare a mask with another engine's).\n\n"
            XP_SCHEMA_ARGS_HELP "\n" XP_SEMANTICS_HELP "\n"
            "--slicer splits the tokens into slices (each token goes to the first\n"
            "slice regex it is a prefix of, the rest to a residual trie; 'default'\n"
            "is the JSON string set of lexer/slicer.h; '\\;' is a literal ';') and\n"
            "computes the same mask taking subsumed slices whole: prints slices\n"
            "taken whole and walked, nodes walked, the sliced mask's time beside the\n"
            "plain walk's (same loop), the slicer's build time and bytes.\n"
            "--index (regex and lexer only) builds the precomputed token index\n"
            "from the state after TEXT\n"
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
    const char *spec, *start, *regex, *lexer, *builtin, *grammar, *format, *layout, *after, *slicer;
    unsigned reps, sample;
    size_t max_states, index_states;
    int index, ids;
    int semantics; /* xp_semantics_arg's */
    gr_schema_opts_t schema;
} mask_args_t;

static int parse_args(int argc, char **argv, mask_args_t *a)
{
    *a = (mask_args_t){.layout = "dfs", .after = "", .reps = 21, .sample = 10};
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int took = xp_schema_arg(argc, argv, i, &a->schema);
        if (!took && (took = xp_semantics_arg(argc, argv, i, &a->semantics)) < 0)
            return -1;
        if (took)
            i += took - 1;
        else if (!strcmp(argv[i], "--regex") && v)
            a->regex = v, i++;
        else if (!strcmp(argv[i], "--lexer") && v)
            a->lexer = v, i++;
        else if (!strcmp(argv[i], "--builtin") && v)
            a->builtin = v, i++;
        else if (!strcmp(argv[i], "--grammar") && v)
            a->grammar = v, i++;
        else if (!strcmp(argv[i], "--schema") && v)
            a->grammar = v, a->format = "schema", i++;
        else if (!strcmp(argv[i], "--format") && v)
            a->format = v, i++;
        else if (!strcmp(argv[i], "--start") && v)
            a->start = v, i++;
        else if (!strcmp(argv[i], "--ids"))
            a->ids = 1;
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
    if (!a->spec || !!a->regex + !!a->lexer + !!a->builtin + !!a->grammar != 1) /* one */
        return -1;
    if ((a->format || a->start) && !a->grammar)
        return -1;
    if (xp_schema_args_set(&a->schema) && (!a->format || strcmp(a->format, "schema")))
        return -1; /* an option of JSON Schemas only */
    if (a->reps == 0)
        a->reps = 1;
    return 0;
}

/* Median of n samples (sorts them). */
static uint64_t median(uint64_t *v, unsigned n)
{
    qsort(v, n, sizeof *v, cmp_u64);
    return v[n / 2];
}

/* What masks are computed under: a DFA (a regex or a lexer spec) with its
 * recognizer, or a grammar with its own; state is the one after TEXT. */
typedef struct {
    lex_dfa_t *dfa; /* the DFA, or the grammar's lexer (owned by g) */
    lex_rec_t lrec;
    gr_gram_t *g;   /* NULL unless --grammar */
    gr_rec_t grec;
    uint32_t state;
} engine_t;

static int engine_mask(engine_t *e, const trie_t *t, tb_bitset_t *mask, uint64_t *nodes,
                       tb_err_t *err)
{
    if (e->g)
        return gr_mask(t, &e->grec, e->state, mask, nodes, err) ||
               gr_mask_token_ids(e->g, e->state, mask, err);
    return lex_mask(t, &e->lrec, e->state, mask, nodes, err);
}

/* A grammar's sliced mask walks t once where no slice is whole, as the
 * matcher's does (gr_mask_sliced). */
static int engine_sliced(engine_t *e, lex_slicer_t *s, const trie_t *t, tb_bitset_t *mask,
                         lex_slice_stats_t *st, tb_err_t *err)
{
    if (!e->g)
        return lex_slicer_mask(s, &e->lrec, e->state, mask, st, err);
    if (!s->bound && lex_slicer_bind(s, e->dfa, err))
        return -1;
    return gr_mask_sliced(s, &e->grec, e->state, t, mask, st, err);
}

/* Whether slice i is taken whole at the engine's state: 1, 0 or -1. */
static int engine_whole(engine_t *e, lex_slicer_t *s, size_t i, tb_err_t *err)
{
    if (!e->g)
        return lex_slicer_subsumes(s, i, e->state, err);
    size_t n;
    const gr_pair_t *p = gr_pairs(e->g, e->state, &n);
    for (size_t k = 0; k < n; k++) {
        int whole = lex_slicer_subsumes(s, i, p[k].lex, err);
        if (whole)
            return whole;
    }
    return 0;
}

/* The sliced mask beside the plain one: built over the same keys and
 * layout, checked equal to `plain`, both timed alternately in one loop so
 * that the ratio is taken under the same conditions. */
static int run_slicer(const mask_args_t *a, const trie_t *trie, const trie_keys_t *keys,
                      engine_t *e, const tb_bitset_t *plain, double ns_per_tick,
                      tb_err_t *err)
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
    if (engine_sliced(e, sl, trie, &m, &st, err))
        goto out;
    double cold_us = (xp_now_ns() - c0) / 1e3;
    for (unsigned r = 0; r < a->reps; r++) {
        uint64_t b = xp_tsc_begin();
        if (engine_sliced(e, sl, trie, &m, &st, err))
            goto out;
        ts[r] = xp_tsc_end() - b;
        b = xp_tsc_begin();
        if (engine_mask(e, trie, &p, NULL, err))
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
               : engine_whole(e, sl, i, err) > 0 ? "taken whole" : "walked");
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
        lex_index_mem_t mem;
        lex_index_mem(x, &mem);
        printf("index      built in %.1f ms: %zu states, %llu entries, %zu bytes, %llu nodes "
               "walked; its mask here (%.1f us) %s the walk's\n", build_ms,
               x->nstates, (unsigned long long)lex_index_entries(x), mem.total,
               (unsigned long long)x->walk_nodes, q_us, same ? "equals" : "DIFFERS FROM");
        printf("index      %u token classes, %zu distinct masks, %u rounds, %zu tokens with a "
               "dead byte; bytes: masks %zu, classes %zu, next states %zu, states %zu\n",
               x->nclasses, x->nsets, x->rounds, x->dead_tokens, mem.masks, mem.classes,
               mem.next, mem.states);
        if (!same)
            rc = tb_fail(err, "the index's mask differs from the plain walk's");
    }
    tb_bitset_free(&m);
    lex_index_free(x);
    return rc;
}

/* The DFA or the grammar; v, the vocabulary a grammar's special tokens
 * name ids of, is NULL before it loads (so that a bad DFA fails first). */
static int engine_open(engine_t *e, const mask_args_t *a, const tok_vocab_t *v, tb_err_t *err)
{
    lex_dfa_opts_t opts = {.max_states = a->max_states};
    if (a->grammar) {
        gr_cfg_t cfg;
        if (xp_load_grammar_start(&cfg, a->grammar, a->format, a->start, a->semantics,
                                  &a->schema, v, err))
            return -1;
        gr_opts_t go = {.lexer = opts};
        if (!(e->g = gr_gram_new(&cfg, &go, err)))
            return -1;
        e->dfa = e->g->dfa;
        return 0;
    }
    e->dfa = a->lexer     ? lex_lexer_load(a->lexer, &opts, err)
             : a->builtin ? lex_builtin_dfa(a->builtin, &opts, err)
                          : lex_dfa_new(a->regex, &opts, err);
    return e->dfa ? 0 : -1;
}

static int engine_rec(engine_t *e, size_t max_len, tb_err_t *err)
{
    return e->g ? gr_rec_init(&e->grec, e->g, max_len, err)
                : lex_rec_init(&e->lrec, e->dfa, max_len, err);
}

static void engine_close(engine_t *e)
{
    if (e->g) {
        gr_rec_free(&e->grec);
        gr_gram_free(e->g);
    } else {
        lex_rec_free(&e->lrec);
        lex_dfa_free(e->dfa);
    }
}

/* Feeds TEXT byte by byte, so that a refusal or a passed limit names its
 * offset. */
static int engine_after(engine_t *e, const mask_args_t *a, tb_err_t *err)
{
    const char *what = a->grammar ? "grammar" : a->lexer ? "lexer" : a->builtin ? "builtin"
                                                                           : "regex";
    const char *name = a->grammar ? a->grammar : a->lexer ? a->lexer : a->builtin ? a->builtin
                                                                                  : a->regex;
    size_t alen = strlen(a->after);
    e->state = e->g ? GR_START : LEX_START;
    for (size_t i = 0; i < alen; i++) {
        uint8_t b = (uint8_t)a->after[i];
        e->state = e->g ? gr_step(e->g, e->state, b) : lex_dfa_next(e->dfa, e->state, b);
        if (e->g ? gr_gram_error(e->g, err) : lex_dfa_error(e->dfa, err))
            return tb_wrap(err, "--after, at byte %zu", i);
        if (e->state == 0)
            return tb_fail(err, "%s '%s': --after text is refused at byte %zu: it is not a "
                           "prefix of any %s", what, name, i,
                           e->g ? "sentence of the grammar" : "string it matches");
    }
    return 0;
}

static int engine_accepting(engine_t *e)
{
    return e->g ? gr_accepting(e->g, e->state) : lex_dfa_accepting(e->dfa, e->state);
}

static void print_stats(const char *label, const gr_stats_t *from, const gr_stats_t *to)
{
    printf("parser     %s: %llu table entries computed (%llu at lexeme boundaries), "
           "%llu parser scans, %.1f us in the parser\n", label,
           (unsigned long long)(to->steps - from->steps),
           (unsigned long long)(to->boundaries - from->boundaries),
           (unsigned long long)(to->scans - from->scans),
           (double)(to->parser_ns - from->parser_ns) / 1e3);
}

/* The grammar's lines: its size, the forced bytes after TEXT, what the
 * parser did in the cold mask and in the warm ones. */
static int print_grammar(engine_t *e, const mask_args_t *a, const gr_stats_t st[3],
                         tb_err_t *err)
{
    const gr_gram_t *g = e->g;
    size_t ignored = 0;
    for (size_t i = 0; i < g->cfg.lex.len; i++)
        ignored += (size_t)g->cfg.lex.data[i].ignore;
    printf("grammar    %s: %zu rules, %zu nonterminals, %zu lexemes (%zu ignored)%s\n",
           a->grammar, g->cfg.rule.len, g->cfg.nt.len, g->cfg.lex.len, ignored,
           g->llg ? "; llguidance's semantics" : g->lark ? "; Lark's semantics" : "");
    gr_matcher_t m;
    tb_buf_t forced = {0};
    if (gr_matcher_init(&m, e->g, 1, err))
        return -1;
    m.hist.data[0] = e->state;
    int rc = gr_matcher_forced(&m, 256, &forced, err);
    gr_matcher_free(&m);
    if (rc) {
        tb_buf_free(&forced);
        return -1;
    }
    printf("forced     ");
    xp_print_quoted(forced.data, forced.len);
    printf(" (%zu bytes)\n", forced.len);
    tb_buf_free(&forced);
    print_stats("cold mask", &st[0], &st[1]);
    print_stats("warm masks", &st[1], &st[2]);
    printf("grammar    %zu states, %zu Earley rows, %zu items, %zu bytes\n", gr_nstates(g),
           g->parser.rows.len, g->parser.items.len, gr_gram_bytes(g));
    return 0;
}

static void print_ids(const tb_bitset_t *mask, uint32_t vocab_size)
{
    for (uint32_t id = 0; id < vocab_size && id < mask->nbits; id++)
        if (tb_bitset_get(mask, id))
            printf("%u\n", id);
}

int xp_cmd_mask(int argc, char **argv)
{
    if (xp_wants_help(argc, argv))
        return mask_usage(stdout);
    mask_args_t a;
    if (parse_args(argc, argv, &a))
        return mask_usage(stderr);
    tb_err_t err;
    engine_t e = {0};
    if (a.grammar && a.index) {
        tb_fail(&err, "--index works with --regex and --lexer only");
        return xp_die(&err);
    }
    if (!a.grammar && engine_open(&e, &a, NULL, &err))
        return xp_die(&err);
    tok_tokenizer_t *tok = NULL;
    trie_keys_t keys = {0};
    double t0 = xp_now_ns();
    trie_t *trie = xp_load_trie(a.spec, a.layout, &keys, &tok, &err);
    double build_ms = (xp_now_ns() - t0) / 1e6;

    tb_bitset_t mask = {0};
    uint64_t *ticks = NULL;
    int status = 1;
    gr_stats_t st[3] = {{0}};
    if (!trie || (a.grammar && engine_open(&e, &a, tok_vocab(tok), &err)) ||
        engine_rec(&e, keys.max_len, &err) || engine_after(&e, &a, &err))
        goto out;
    ticks = malloc(a.reps * sizeof *ticks);
    if (!ticks || tb_bitset_init(&mask, trie_mask_bits(trie))) {
        tb_fail(&err, "out of memory");
        goto out;
    }
    uint64_t nodes = 0;
    if (e.g)
        st[0] = e.g->stats;
    double c0 = xp_now_ns();
    if (engine_mask(&e, trie, &mask, &nodes, &err)) {
        tb_wrap(&err, "mask walk");
        goto out;
    }
    double cold_us = (xp_now_ns() - c0) / 1e3;
    if (e.g)
        st[1] = e.g->stats;
    double w0 = xp_now_ns();
    uint64_t tsc_sum = 0;
    for (unsigned r = 0; r < a.reps; r++) {
        uint64_t b = xp_tsc_begin();
        if (engine_mask(&e, trie, &mask, &nodes, &err))
            goto out;
        ticks[r] = xp_tsc_end() - b;
        tsc_sum += ticks[r];
    }
    double wall_per = (xp_now_ns() - w0) / a.reps;
    if (e.g)
        st[2] = e.g->stats;
    const tok_vocab_t *v = tok_vocab(tok);
    if (a.ids) {
        print_ids(&mask, v->size);
        status = 0;
        goto out;
    }
    double hz = xp_tsc_measure_hz(50);
    /* ns per tick from the same loop's wall clock, so a failed frequency
     * measurement still leaves usable times. */
    double ns_per_tick = tsc_sum ? wall_per * a.reps / (double)tsc_sum : 0;
    if (hz > 0)
        ns_per_tick = 1e9 / hz;
    qsort(ticks, a.reps, sizeof *ticks, cmp_u64);
    uint64_t med = ticks[a.reps / 2], min = ticks[0];

    size_t allowed = tb_bitset_count(&mask);
    if (e.g && print_grammar(&e, &a, st, &err))
        goto out;
    else if (a.lexer)
        printf("lexer      %s (%zu lexemes)\n", a.lexer, lex_dfa_nlexemes(e.dfa));
    else if (a.builtin)
        printf("builtin    %s\n", a.builtin);
    else if (!e.g)
        printf("regex      %s\n", a.regex);
    printf("after      %zu bytes -> state %u%s\n", strlen(a.after), e.state,
           engine_accepting(&e) ? (e.g ? " (a sentence)" : " (accepting)") : "");
    if (a.lexer && print_lexemes(e.dfa, e.state, &err))
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
            xp_print_quoted(s, n);
            shown++;
        }
    printf("%s\n", allowed > shown ? " ..." : "");
    printf("visited    %llu nodes\n", (unsigned long long)nodes);
    printf("time       cold %.1f us (builds %s states); warm over %u: min %.1f us, "
           "median %.1f us\n", cold_us, e.g ? "grammar" : "DFA", a.reps,
           (double)min * ns_per_tick / 1e3, (double)med * ns_per_tick / 1e3);
    if (nodes)
        printf("per node   %.2f ns, %.1f TSC cycles (median mask%s)\n",
               (double)med * ns_per_tick / (double)nodes, (double)med / (double)nodes,
               hz > 0 ? "" : "; TSC frequency unknown");
    if (a.slicer && run_slicer(&a, trie, &keys, &e, &mask, ns_per_tick, &err))
        goto out;
    if (a.index && run_index(&a, trie, &keys, e.dfa, e.state, &mask, &err))
        goto out;
    printf("dfa        %zu states, %u byte classes, %zu terms\n", e.dfa->nstates,
           e.dfa->ncls, e.dfa->terms.n);
    status = 0;
out:
    if (status)
        xp_die(&err);
    free(ticks);
    tb_bitset_free(&mask);
    trie_free(trie);
    trie_keys_free(&keys);
    tok_free(tok);
    engine_close(&e);
    return status;
}
