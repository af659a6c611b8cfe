/*
 * llguidance's own grammar tests as conformance: the cases that
 * scripts/extract-llg-tests.py reads out of ../shared/llguidance's
 * parser/tests/test_lark.rs and test_json_*.rs (at test time: that text is
 * another project's and is not kept here) are loaded through the Lark
 * reader and their strings fed to a matcher byte by byte.  Special tokens
 * (<[100-200]>, <|name|>) are read over Llama 2's vocabulary, whose ids
 * are the first 32000 of the Phi-3.5 vocabulary llguidance's tests use.
 *
 * A case is a grammar with what llguidance says of it: it loads; it is
 * refused (with a message); strings that must pass, be refused before
 * their end, be a prefix that is not accepted, or be refused either way
 * (the JSON helpers).  Over bytes these verdicts are exact: llguidance
 * allows a token iff the text with it is a prefix of the language, so a
 * string's tokens all pass iff the string is such a prefix.
 *
 * The counts by outcome are printed; the test asserts that every grammar
 * llguidance refuses is refused here, that no grammar crashes or passes a
 * limit, and that every string of a grammar loaded here gets llguidance's
 * verdict but for the cases of DIFFERENCES, each with its cause.  Grammars
 * llguidance loads that are refused here are counted by message (the
 * construct refused), not failed: docs/grammars.md lists them; with
 * TB_LLG_VERBOSE set in the environment each refusal is printed whole,
 * and each string differing for a known cause.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../base/file.h"
#include "../grammar/load.h"
#include "../grammar/match.h"
#include "support.h"

#define LLG_TESTS "../shared/llguidance/llguidance/parser/tests/test_lark.rs"
/* Llama 2's vocabulary: llama.cpp's own GGUF of it (data/manifest's
 * "llama2" turned out to be Mistral's and was renamed) */
#define LLG_VOCAB "../shared/llama.cpp-vocab/ggml-vocab-llama-spm.gguf"

/* Where the verdict here is not llguidance's, each for a cause:
 * docs/grammars.md lists them.  where is "FILE:LINE" of the call (or
 * "FILE" for every call of the file); text a
 * string's first bytes, or NULL for the grammar itself (llguidance refuses
 * it, it loads here) and every string of it. */
#define LLG_LIMIT "a schema llguidance cannot compile, compiled exactly here"
#define FEB29                                                                               \
    "February 29 of a year that is not a leap year: RFC 3339 refuses it, llguidance's "  \
    "format regex accepts it (its test names the value so)"
static const struct {
    const char *where, *text, *cause;
} DIFFERENCES[] = {
    /* llguidance's helper wants "A" refused before its end, yet it is a
     * prefix of the one sentence "AB": llguidance forces the bytes "AB"
     * as their canonical tokens (LLGuidanceOptions' no_forcing is off),
     * and "AB" is one token, so the token "A" is masked out. */
    {"test_lark.rs:2076", "A",
     "a prefix of the language, wanted refused before its end: llguidance forces the "
     "canonical tokens of forced bytes"},
    {"test_lark.rs:237", NULL, LLG_LIMIT " (if without then or else)"},
    {"test_lark.rs:948", NULL, LLG_LIMIT " (patternProperties that overlap)"},
    {"test_lark.rs:959", NULL, LLG_LIMIT " (patternProperties that overlap)"},
    {"test_lark.rs:970", NULL, LLG_LIMIT " (patternProperties that overlap)"},
    {"test_lark.rs:1247", NULL, LLG_LIMIT " (maxProperties with optional properties)"},
    {"test_lark.rs:1258", NULL, LLG_LIMIT " (minProperties with optional properties)"},
    {"test_json_string_format.rs:470", "\"2021-02-29", FEB29},
    {"test_json_string_format.rs:493", "\"2021-02-29", FEB29},
    {"test_json_string_format.rs:493", "\"1900-02-29", FEB29},
    {"test_json_string_format.rs:493", "\"2100-02-29", FEB29},
    {NULL, NULL, NULL},
};

typedef struct {
    const uint8_t *p, *end;
    const char *path;
} reader_t;

/* One "WORD [N]\n" header line into word; *n = N (or 0); -1 at the end. */
static int header(reader_t *r, char *word, size_t size, size_t *n)
{
    if (r->p >= r->end)
        return -1;
    const uint8_t *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
    assert_non_null(nl);
    size_t len = (size_t)(nl - r->p);
    unsigned long long v = 0;
    char line[256];
    assert_true(len < sizeof line);
    memcpy(line, r->p, len);
    line[len] = 0;
    r->p = nl + 1;
    *n = 0;
    if (sscanf(line, "%63s %llu", word, &v) == 2 && strcmp(word, "case"))
        *n = (size_t)v;
    else
        snprintf(word, size, "%s", line);
    return 0;
}

/* N bytes and their newline. */
static const uint8_t *payload(reader_t *r, size_t n)
{
    const uint8_t *s = r->p;
    assert_true((size_t)(r->end - r->p) >= n + 1 && s[n] == '\n');
    r->p += n + 1;
    return s;
}

typedef struct {
    unsigned grammars, llg_refuses, refused_too, loaded_known, loaded_not_refused;
    unsigned llg_loads, load_here, refused_here;
    unsigned strings, agree, differ_known, differ, not_run;
    unsigned changed; /* strings whose verdict the default reading changes */
    char reasons[64][160];
    unsigned reason_n[64], nreasons;
    const char *causes[16]; /* the known causes met, each with its count */
    unsigned cause_n[16], ncauses;
} tally_t;

/* The message of a refusal of grammar `where` without its "WHERE:L:C: "
 * prefix: what the refusal is counted under. */
static void count_reason(tally_t *t, const char *where, const char *msg)
{
    const char *s = msg;
    if (!strncmp(s, where, strlen(where)))
        s += strlen(where);
    while (*s == ':' || *s == ' ' || (*s >= '0' && *s <= '9'))
        s++;
    for (unsigned i = 0; i < t->nreasons; i++)
        if (!strcmp(t->reasons[i], s)) {
            t->reason_n[i]++;
            return;
        }
    if (t->nreasons < 64) {
        snprintf(t->reasons[t->nreasons], sizeof t->reasons[0], "%.150s", s);
        t->reason_n[t->nreasons++] = 1;
    }
}

/* One more string differing for a known cause. */
static void count_cause(tally_t *t, const char *cause)
{
    unsigned i = 0;
    while (i < t->ncauses && strcmp(t->causes[i], cause))
        i++;
    if (i == t->ncauses) {
        assert_true(i < 16);
        t->causes[t->ncauses++] = cause;
    }
    t->cause_n[i]++;
}

/* The cause of a difference at case `where` on string s[0..n) (s NULL:
 * on the grammar), or NULL. */
static const char *known_cause(const char *where, const uint8_t *s, size_t n)
{
    for (size_t i = 0; DIFFERENCES[i].where; i++) {
        const char *text = DIFFERENCES[i].text, *w = DIFFERENCES[i].where;
        size_t n_w = strlen(w);
        if (strncmp(w, where, n_w) || (where[n_w] && where[n_w] != ':'))
            continue; /* "FILE:LINE", or "FILE" for all its cases */
        if (!text || (s && strlen(text) <= n && !memcmp(text, s, strlen(text))))
            return DIFFERENCES[i].cause;
    }
    return NULL;
}

/* Feeds s[0..n) to a new matcher: 'p' accepted, 'f' refused before its
 * end, 'x' a prefix not accepted. */
static char verdict(gr_gram_t *g, const uint8_t *s, size_t n)
{
    gr_matcher_t m;
    tb_err_t err = {0};
    assert_int_equal(gr_matcher_init(&m, g, n + 1, &err), 0);
    char v = 'p';
    for (size_t i = 0; i < n && v == 'p'; i++) {
        int rc = gr_matcher_consume(&m, s + i, 1, NULL, &err);
        if (rc < 0)
            print_message("%s\n", err.msg);
        assert_true(rc >= 0);
        if (rc)
            v = 'f';
    }
    if (v == 'p' && !gr_matcher_accepting(&m))
        v = 'x';
    gr_matcher_free(&m);
    return v;
}

/* Checks one string's verdict against llguidance's `want`. */
static void check_string(tally_t *t, gr_gram_t *g, const char *where, const char *want,
                         const uint8_t *s, size_t n)
{
    char v = verdict(g, s, n);
    int ok = !strcmp(want, "pass")     ? v == 'p'
             : !strcmp(want, "fail")   ? v == 'f'
             : !strcmp(want, "final")  ? v == 'x'
                                       : v != 'p'; /* reject */
    t->strings++;
    if (ok) {
        t->agree++;
        return;
    }
    const char *cause = known_cause(where, s, n);
    if (cause) {
        t->differ_known++;
        count_cause(t, cause);
        if (getenv("TB_LLG_VERBOSE"))
            print_message("%s: %s string \"%.*s\" (%.40s)\n", where, want,
                          (int)(n > 80 ? 80 : n), (const char *)s, cause);
        return;
    }
    t->differ++;
    print_message("%s: %s string \"%.*s\": here %s\n", where, want, (int)(n > 80 ? 80 : n),
                  (const char *)s,
                  v == 'p' ? "accepted" : v == 'f' ? "refused before its end"
                                                   : "a prefix, not accepted");
}

/* One case from "grammar" on (its header line read); v names the ids of
 * special tokens. */
static void run_case(tally_t *t, reader_t *r, const char *where, const tok_vocab_t *v)
{
    char word[64];
    size_t n;
    assert_int_equal(header(r, word, sizeof word, &n), 0);
    assert_string_equal(word, "grammar");
    const uint8_t *text = payload(r, n);
    gr_cfg_t cfg;
    tb_err_t err = {0};
    gr_load_opts_t llg = {.format = "lark", .semantics = 1 + GR_SEM_LLGUIDANCE, .vocab = v},
                   plain = {.format = "lark", .semantics = 1 + GR_SEM_DEFAULT, .vocab = v};
    int loaded = gr_cfg_parse_opts(&cfg, (const char *)text, n, where, &llg, &err) == 0;
    gr_gram_t *g = NULL, *g0 = NULL;
    if (loaded) {
        g = gr_gram_new(&cfg, NULL, &err);
        loaded = g != NULL;
    }
    /* the default reading beside it, to count the verdicts the option changes */
    if (loaded && gr_cfg_parse_opts(&cfg, (const char *)text, n, where, &plain, &err) == 0)
        g0 = gr_gram_new(&cfg, NULL, &err);
    t->grammars++;
    int refuses = 0;
    while (header(r, word, sizeof word, &n) == 0 && strcmp(word, "end")) {
        const uint8_t *s = strcmp(word, "load") ? payload(r, n) : NULL;
        if (!strcmp(word, "refuse")) {
            refuses = 1;
            continue;
        }
        if (strcmp(word, "load") && loaded) {
            check_string(t, g, where, word, s, n);
            t->changed += g0 && verdict(g0, s, n) != verdict(g, s, n);
        }
        else if (strcmp(word, "load"))
            t->not_run++;
    }
    if (refuses) {
        t->llg_refuses++;
        if (loaded && known_cause(where, NULL, 0)) {
            t->loaded_known++;
        } else if (loaded) {
            t->loaded_not_refused++;
            print_message("%s: llguidance refuses this grammar, it loads here\n", where);
        } else {
            t->refused_too++;
        }
    } else {
        t->llg_loads++;
        if (loaded) {
            t->load_here++;
        } else {
            t->refused_here++;
            count_reason(t, where, err.msg);
            if (getenv("TB_LLG_VERBOSE")) /* every refusal, to see the constructs */
                print_message("refused: %s\n", err.msg);
        }
    }
    gr_gram_free(g);
    gr_gram_free(g0);
}

static void test_llg_cases(void **state)
{
    (void)state;
    if (access(LLG_TESTS, R_OK) || access(LLG_VOCAB, R_OK)) {
        print_message("skipped: no %s or %s (in ../shared)\n", LLG_TESTS, LLG_VOCAB);
        skip();
    }
    const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
    char out[512], cmd[2048];
    snprintf(out, sizeof out, "%s/llg-cases.txt", build);
    snprintf(cmd, sizeof cmd,
             "python3 scripts/extract-llg-tests.py ../shared/llguidance %s 2>%s/llg-cases.log",
             out, build);
    if (system(cmd)) {
        print_message("%s failed (see %s/llg-cases.log)\n", cmd, build);
        fail();
    }
    uint8_t *data;
    size_t len;
    tb_err_t err = {0};
    assert_int_equal(tb_read_file(out, &data, &len, &err), 0);
    reader_t r = {data, data + len, out};
    /* llguidance's tests name token ids of Phi-3.5-mini-instruct's
     * vocabulary, whose first 32000 ids are Llama 2's: the ids they use
     * (below 4003, and <[*]>, <[^...]> over the whole vocabulary) are in
     * Llama 2's too */
    tok_tokenizer_t *vt = test_load(LLG_VOCAB);
    tally_t *t = calloc(1, sizeof *t);
    assert_non_null(t);
    char word[256];
    size_t n;
    while (header(&r, word, sizeof word, &n) == 0) {
        char where[256], helper[64];
        assert_int_equal(sscanf(word, "case %255s %63s", where, helper), 2);
        run_case(t, &r, where, tok_vocab(vt));
    }
    print_message("llguidance's tests: %u grammars (%s/llg-cases.log: calls not extracted)\n"
                  "  llguidance refuses %u: refused here %u, loaded here for a known cause %u, "
                  "loaded here %u\n"
                  "  llguidance loads %u: loaded here %u, refused here %u\n"
                  "  strings of grammars loaded here %u: verdict as llguidance's %u, "
                  "differing for a known cause %u, differing %u; strings not run %u\n"
                  "  (read under --semantics llguidance; the default reading gives %u of "
                  "them another verdict)\n",
                  t->grammars, build, t->llg_refuses, t->refused_too, t->loaded_known,
                  t->loaded_not_refused,
                  t->llg_loads, t->load_here, t->refused_here, t->strings, t->agree,
                  t->differ_known, t->differ, t->not_run, t->changed);
    for (unsigned i = 0; i < t->ncauses; i++)
        print_message("  differing for a known cause: %3u  %.100s\n", t->cause_n[i],
                      t->causes[i]);
    for (unsigned i = 0; i < t->nreasons; i++)
        print_message("  refused here, llguidance loads: %3u  %s\n", t->reason_n[i],
                      t->reasons[i]);
    assert_int_equal(t->loaded_not_refused, 0);
    assert_int_equal(t->differ, 0);
    free(t);
    free(data);
    tok_free(vt);
}

/* The dialect's constructs on grammars of our own (run without
 * ../shared): each string's verdict as docs/syntax.md of llguidance
 * defines the construct. */
static void test_dialect(void **state)
{
    (void)state;
    static const struct {
        const char *grammar, *text;
        char want; /* 'p' accepted, 'f' refused before its end, 'x' a prefix only */
    } CASES[] = {
        {"start: T\nT: /[a-z]+/ & /[abcABC]+/\n", "cab", 'p'},
        {"start: T\nT: /[a-z]+/ & /[abcABC]+/\n", "cad", 'f'},
        {"start: T\nT: /[a-z]+/ & /[abcABC]+/\n", "A", 'f'},
        {"start: \"x\" T\nT: /[ab]+/ | /[cd]+/ & /[def]+/\n", "xab", 'p'},
        {"start: \"x\" T\nT: /[ab]+/ | /[cd]+/ & /[def]+/\n", "xdd", 'p'},
        {"start: \"x\" T\nT: /[ab]+/ | /[cd]+/ & /[def]+/\n", "xc", 'f'},
        {"start: T \"!\"\nT: /[a-z]+/ & ~/[a-z]*q[a-z]*/\n", "abc!", 'p'},
        {"start: T \"!\"\nT: /[a-z]+/ & ~/[a-z]*q[a-z]*/\n", "abq!", 'f'},
        {"start: T+ \"!\"\nT: /[a-z]+/ & ~/b+/\n", "ab!", 'p'},
        {"start: T+ \"!\"\nT: /[a-z]+/ & ~/b+/\n", "bb!", 'f'},
        {"start: l+\nl: \"<\" T \">\"\nT: /[a-z]+/ & ~/b+/\n", "<a><ab>", 'p'},
        {"start: l+\nl: \"<\" T \">\"\nT: /[a-z]+/ & ~/b+/\n", "<a><b>", 'f'},
        {"start: /a(?s:.)b./\n", "a\nbc", 'p'},
        {"start: /a(?s:.)b./\n", "a\nb\n", 'f'},
        {"start: /(?s)a./\n", "a\n", 'p'},
        {"start: T\nT: ~/a+/\n", "ab", 'p'},
        {"start: T\nT: ~/a+/\n", "aa", 'x'},
        {"start: \"<\" %regex {\"substring_words\": \"foo bar, baz\"} \">\"\n", "<bar, baz>",
         'p'},
        {"start: \"<\" %regex {\"substring_words\": \"foo bar, baz\"} \">\"\n", "<>", 'p'},
        {"start: \"<\" %regex {\"substring_words\": \"foo bar, baz\"} \">\"\n", "<ar>", 'f'},
        {"start: \"<\" %regex {\"substring_chars\": \"héllo\"} \">\"\n", "<él>", 'p'},
        {"start: \"<\" %regex {\"substring_chunks\": [\"ab\", \"cd\"]} \">\"\n", "<bc>", 'f'},
        {"start: foo \"x\"\nfoo[stop=\";\", max_tokens=3]: /[a-z]+/\n", "ab;x", 'p'},
        {"start: foo \"x\"\nfoo[stop=\";\", max_tokens=3]: /[a-z]+/\n", "ab!", 'f'},
        {"start: foo\nfoo[suffix=END, lazy]: /[a-z]+/\nEND: \"!\"\n", "a!", 'p'},
        {"start: %json {\"type\": \"integer\", \"minimum\": 10}\n", "12", 'p'},
        {"start: %json {\"type\": \"integer\", \"minimum\": 10}\n", "9", 'x'},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        gr_cfg_t cfg;
        tb_err_t err;
        const char *gtext = CASES[i].grammar;
        if (gr_cfg_parse(&cfg, gtext, strlen(gtext), "g.lark", "lark", &err))
            fail_msg("%s\n%s", gtext, err.msg);
        gr_gram_t *g = gr_gram_new(&cfg, NULL, &err);
        assert_non_null(g);
        char v = verdict(g, (const uint8_t *)CASES[i].text, strlen(CASES[i].text));
        if (v != CASES[i].want)
            fail_msg("%s%s: got %c, want %c", gtext, CASES[i].text, v, CASES[i].want);
        gr_gram_free(g);
    }
}

/* Grammar text's verdict on text read with semantics sem (1 + a
 * gr_semantics_t; 0: as the grammar says), initial_skip as given. */
static char verdict_as(const char *gtext, const char *text, int sem, int initial_skip)
{
    gr_cfg_t cfg;
    tb_err_t err;
    gr_load_opts_t o = {.format = "lark", .semantics = sem};
    if (gr_cfg_parse_opts(&cfg, gtext, strlen(gtext), "g.lark", &o, &err))
        fail_msg("%s\n%s", gtext, err.msg);
    cfg.initial_skip = initial_skip;
    gr_gram_t *g = gr_gram_new(&cfg, NULL, &err);
    assert_non_null(g);
    char v = verdict(g, (const uint8_t *)text, strlen(text));
    gr_gram_free(g);
    return v;
}

/* Where llguidance's lexer (greedy, lazy where declared) and the default
 * reading part, on grammars of our own: each llg verdict is what
 * llguidance's docs/syntax.md and its lexer (parser/src/earley/lexer.rs,
 * regexvec.rs: a lexeme ends where the lexer's next state is dead, a lazy
 * one at its first match, a skip alone) give. */
static void test_semantics(void **state)
{
    (void)state;
    static const struct {
        const char *grammar, *text;
        char dflt, llg; /* as test_dialect's want */
    } CASES[] = {
        /* A eats every a: B never comes */
        {"start: A B\nA: /a+/\nB: /a/\n", "aa", 'p', 'x'},
        {"start: A B\nA: /a+/\nB: /b/\n", "aab", 'p', 'p'},
        /* one WORD takes both words unless a space ends it */
        {"start: WORD WORD\nWORD: /[a-z]+/\n%ignore \" \"\n", "abcd", 'p', 'x'},
        {"start: WORD WORD\nWORD: /[a-z]+/\n%ignore \" \"\n", "ab cd", 'p', 'p'},
        /* syntax.md: foo[lazy]: /[0-9]+/ matches a single digit */
        {"start: foo \"x\"\nfoo[lazy]: /[0-9]+/\n", "1x", 'p', 'p'},
        {"start: foo \"x\"\nfoo[lazy]: /[0-9]+/\n", "12x", 'p', 'f'},
        /* syntax.md: a stop= rule on "foo<end>bar<end>" matches "foo<end>" */
        {"start: foo\nfoo[stop=\"<end>\"]: /.*/\n", "foo<end>", 'p', 'p'},
        {"start: foo\nfoo[stop=\"<end>\"]: /.*/\n", "foo<end>bar<end>", 'p', 'f'},
        {"start: foo \"!\"\nfoo[suffix=\"<end>\"]: /.*/\n", "a<end>!", 'p', 'p'},
        /* stop="" is not lazy: the body is greedy */
        {"start: foo \"!\"\nfoo[stop=\"\"]: /[a-z!]+/\n", "ab!", 'p', 'x'},
        /* a lazy lexeme that ends cuts the others short */
        {"start: foo | B\nfoo[lazy]: /a+/\nB: /aab/\n", "aab", 'p', 'f'},
        /* the longest match, then both lexemes of that length */
        {"start: \"if\" \"(\" | ID \"=\"\nID: /[a-z]+/\n", "if(", 'p', 'p'},
        {"start: \"if\" \"(\" | ID \"=\"\nID: /[a-z]+/\n", "if=", 'p', 'p'},
        {"start: \"if\" \"(\" | ID \"=\"\nID: /[a-z]+/\n", "iffy=", 'p', 'p'},
        /* a skip and a lexeme ending together: only the skip */
        {"start: \"a\" B\nB: \" \"\n%ignore \" \"\n", "a ", 'p', 'x'},
        /* no skip before the first lexeme (allow_initial_skip off) */
        {"start: \"a\" \"b\"\n%ignore \" \"\n", " ab", 'p', 'f'},
        {"start: \"a\" \"b\"\n%ignore \" \"\n", "a b", 'p', 'p'},
        /* no skip once the grammar is done (llguidance's parser adds the
         * skip to a row's lexemes only where it expects one) */
        {"start: \"a\" \"b\"\n%ignore \" \"\n", "a b ", 'p', 'f'},
        {"start: WORD\nWORD: /[a-z]+/\n%ignore /[ ]+/\n", "ab ", 'p', 'f'},
        {"start: WORD \"!\"?\nWORD: /[a-z]+/\n%ignore /[ ]+/\n", "ab  !", 'p', 'p'},
        /* ignore_once: one skip at most between two lexemes (test_ll.rs) */
        {"%llguidance {\"ignore_once\": true}\nstart: \"A\" \"!\"\n%ignore /[ \\t]{1,2}/\n",
         "A  !", 'p', 'p'},
        {"%llguidance {\"ignore_once\": true}\nstart: \"A\" \"!\"\n%ignore /[ \\t]{1,2}/\n",
         "A   !", 'f', 'f'},
        {"start: \"A\" \"!\"\n%ignore /[ \\t]/\n", "A   !", 'p', 'p'},
        /* rules are not merged into one lexeme: the greedy ends stay */
        {"start: a b\na: /x+/\nb: \"x\" \"y\"\n", "xxy", 'p', 'f'},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        const char *gt = CASES[i].grammar, *text = CASES[i].text;
        char d = verdict_as(gt, text, 0, 0), l = verdict_as(gt, text, 1 + GR_SEM_LLGUIDANCE, 0);
        if (d != CASES[i].dflt || l != CASES[i].llg)
            fail_msg("%s%s: got %c/%c, want %c/%c", gt, text, d, l, CASES[i].dflt,
                     CASES[i].llg);
    }
    /* %llguidance asks for llguidance's reading; --semantics default overrides it */
    const char *marked = "%llguidance {}\nstart: A B\nA: /a+/\nB: /a/\n";
    assert_int_equal(verdict_as(marked, "aa", 0, 0), 'x');
    assert_int_equal(verdict_as(marked, "aa", 1 + GR_SEM_DEFAULT, 0), 'p');
    /* Lark's semantics: an ignored lexeme goes on while it can, so the
     * comment swallows the colon (as in lark.lark: "a //c:" is no rule) */
    const char *commented = "start: A \":\"\nA: /a/\nC: /\\/\\/[^\\n]*/\n%ignore C\n"
                            "%ignore /[ \\n]/\n";
    assert_int_equal(verdict_as(commented, "a //c:", 0, 0), 'p');
    assert_int_equal(verdict_as(commented, "a //c:", 1 + GR_SEM_LARK, 0), 'x');
    assert_int_equal(verdict_as(commented, "a //c\n:", 1 + GR_SEM_LARK, 0), 'p');
    /* allow_initial_skip lets the text begin with a skip */
    assert_int_equal(verdict_as("start: \"a\"\n%ignore \" \"\n", " a", 1 + GR_SEM_LLGUIDANCE, 1),
                     'p');
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_dialect),
                                       cmocka_unit_test(test_semantics),
                                       cmocka_unit_test(test_llg_cases)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
