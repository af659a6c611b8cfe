/*
 * Grammar masks against the independent oracle (tests/grammar_oracle.h:
 * Earley on bytes with PCRE2 for the lexemes, no code in common with
 * grammar/ or lexer/), on Llama 3's vocabulary and every trie layout, for
 * the committed example grammars (experiments/grammars/: JSON in both
 * formats, an ambiguous left-recursive expression grammar in both,
 * keywords overlapping identifiers, nullable rules under %ignore, right
 * recursion) and llguidance's parametric rules and lone nullable regex
 * (tests/fixtures/lark/llg_dialect.lark).  The states are the start, random sentences of each grammar
 * cut at random points (tests/grammar_gen.h), and a few hand-picked
 * prefixes; at each, every layout's mask must equal the oracle's answer
 * for every token, and whether the text is a sentence must agree.  Random
 * one-byte changes of the sentences check refusals the same way.  Under
 * llguidance's semantics the referee is tests/greedy_oracle.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../grammar/load.h"
#include "../grammar/match.h"
#include "grammar_gen.h"
#include "grammar_oracle.h"
#include "greedy_oracle.h"
#include "support.h"

#define LLAMA3 "data/cache/llama3/tokenizer.json"

static test_tries_t tries;
static const uint8_t **tok_bytes;
static uint32_t *tok_lens;

static int setup(void **state)
{
    (void)state;
    if (test_tries_load(&tries, LLAMA3))
        return -1;
    tok_bytes = malloc(tries.keys.n * sizeof *tok_bytes);
    tok_lens = malloc(tries.keys.n * sizeof *tok_lens);
    for (size_t i = 0; i < tries.keys.n; i++) {
        tok_bytes[i] = tries.keys.keys[i].s;
        tok_lens[i] = tries.keys.keys[i].len;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(tok_bytes);
    free(tok_lens);
    test_tries_free(&tries);
    return 0;
}

typedef struct {
    gr_cfg_t cfg; /* the oracle's copy */
    go_t *oracle;
    gr_gram_t *g;
    gr_rec_t rec;
    tb_bitset_t want, got;
    uint8_t *allowed;
} fixture_t;

static void open_grammar(fixture_t *f, const char *path)
{
    tb_err_t err;
    char msg[512];
    gr_cfg_t cfg;
    if (gr_cfg_load(&f->cfg, path, NULL, &err) || gr_cfg_load(&cfg, path, NULL, &err)) {
        print_message("%s\n", err.msg);
        fail();
    }
    f->oracle = go_new(&f->cfg, msg, sizeof msg);
    if (!f->oracle) {
        print_message("oracle of %s: %s\n", path, msg);
        fail();
    }
    f->g = gr_gram_new(&cfg, NULL, &err);
    assert_non_null(f->g);
    assert_int_equal(gr_rec_init(&f->rec, f->g, tries.keys.max_len, &err), 0);
    assert_int_equal(tb_bitset_init(&f->want, tries.keys.id_limit + 1), 0);
    assert_int_equal(tb_bitset_init(&f->got, tries.keys.id_limit + 1), 0);
    f->allowed = malloc(tries.keys.n);
}

static void close_grammar(fixture_t *f)
{
    free(f->allowed);
    tb_bitset_free(&f->want);
    tb_bitset_free(&f->got);
    gr_rec_free(&f->rec);
    gr_gram_free(f->g);
    go_free(f->oracle);
    gr_cfg_free(&f->cfg);
}

/* The text so far: the grammar and the oracle agree on whether it is a
 * prefix and a sentence; where it is a prefix, every layout's mask equals
 * the oracle's. */
static void check_text(fixture_t *f, const char *path, const uint8_t *s, size_t n)
{
    uint32_t st = gr_feed(f->g, GR_START, s, n, NULL);
    int prefix = go_prefix(f->oracle, s, n);
    assert_true(prefix >= 0);
    if ((st != GR_DEAD) != prefix) {
        print_message("%s: '%.*s' is %sa prefix to the grammar, %sto the oracle\n", path,
                      (int)n, (const char *)s, st != GR_DEAD ? "" : "not ", prefix ? "" : "not ");
        fail();
    }
    if (!prefix)
        return;
    int sentence = go_sentence(f->oracle, s, n);
    assert_true(sentence >= 0);
    if (gr_accepting(f->g, st) != sentence) {
        print_message("%s: '%.*s': sentence %d to the grammar, %d to the oracle\n", path,
                      (int)n, (const char *)s, gr_accepting(f->g, st), sentence);
        fail();
    }
    if (go_mask(f->oracle, s, n, tok_bytes, tok_lens, tries.keys.n, f->allowed)) {
        print_message("oracle: %s\n", go_error(f->oracle));
        fail();
    }
    tb_bitset_clear_all(&f->want);
    for (size_t i = 0; i < tries.keys.n; i++)
        if (f->allowed[i])
            tb_bitset_set(&f->want, tries.keys.keys[i].id);
    for (size_t i = 0; i < tries.keys.nalias; i++)
        if (tb_bitset_get(&f->want, tries.keys.alias[2 * i + 1]))
            tb_bitset_set(&f->want, tries.keys.alias[2 * i]);
    tb_err_t err;
    for (size_t l = 0; l < tries.ntries; l++) {
        assert_int_equal(gr_mask(tries.tries[l], &f->rec, st, &f->got, NULL, &err), 0);
        if (tb_bitset_equal(&f->want, &f->got))
            continue;
        for (size_t i = 0; i < tries.keys.n; i++) {
            uint32_t id = tries.keys.keys[i].id;
            if (tb_bitset_get(&f->want, id) != tb_bitset_get(&f->got, id)) {
                print_message("%s, layout %s, after '%.*s': token '%.*s' %s by the oracle\n",
                              path, tries.names[l], (int)n, (const char *)s, (int)tok_lens[i],
                              (const char *)tok_bytes[i],
                              tb_bitset_get(&f->want, id) ? "allowed" : "refused");
                break;
            }
        }
        fail();
    }
}

static void check_grammar(const char *path, const char *const *extra, size_t nextra)
{
    fixture_t f = {0};
    open_grammar(&f, path);
    char msg[256];
    gg_t *gen = gg_new(&f.cfg, f.oracle, msg, sizeof msg);
    assert_non_null(gen);
    check_text(&f, path, (const uint8_t *)"", 0);
    for (size_t i = 0; i < nextra; i++)
        check_text(&f, path, (const uint8_t *)extra[i], strlen(extra[i]));
    for (int k = 0; k < 4; k++) {
        tb_buf_t s = {0};
        assert_int_equal(gg_sentence(gen, 12, &s), 0);
        assert_int_equal(go_sentence(f.oracle, s.data, s.len), 1);
        check_text(&f, path, s.data, s.len);
        for (int c = 0; c < 2; c++)
            check_text(&f, path, s.data, gg_cut(s.len));
        /* One byte changed: refused or not, both must agree. */
        if (s.len) {
            size_t at = test_rnd((uint32_t)s.len);
            s.data[at] = (uint8_t)" a1{\"]+(;x"[test_rnd(10)];
            uint32_t st = gr_feed(f.g, GR_START, s.data, s.len, NULL);
            assert_int_equal(st != GR_DEAD, go_prefix(f.oracle, s.data, s.len));
        }
        tb_buf_free(&s);
    }
    gg_free(gen);
    close_grammar(&f);
}

static void test_json_lark(void **state)
{
    (void)state;
    const char *extra[] = {"{\"a\": ", "{\"a\": \"x", "[1, 2", "{\"k\": [tr", "[\"\\u00"};
    check_grammar("experiments/grammars/json.lark", extra, 5);
}

static void test_json_gbnf(void **state)
{
    (void)state;
    const char *extra[] = {"{\"a\": ", "{\"a\": \"x", "[1, 2", "{\"k\": [tr", "[\"\\u00"};
    check_grammar("experiments/grammars/json.gbnf", extra, 5);
}

static void test_arith(void **state)
{
    (void)state;
    const char *extra[] = {"(1+", "12*(3", "1+2*3"};
    check_grammar("experiments/grammars/arith.lark", extra, 3);
    check_grammar("experiments/grammars/arith.gbnf", extra, 3);
}

static void test_keywords(void **state)
{
    (void)state;
    const char *extra[] = {"if", "if x then ", "ifx = y", "x = if; if"};
    check_grammar("experiments/grammars/keywords.lark", extra, 4);
}

static void test_nullable_and_right_recursion(void **state)
{
    (void)state;
    const char *extra[] = {"a", "a b", "a c a", "ac"};
    check_grammar("experiments/grammars/nullable.lark", extra, 4);
    check_grammar("experiments/grammars/nullable.gbnf", extra, 0);
    check_grammar("experiments/grammars/rightrec.gbnf", extra, 0);
}

/*
 * Under llguidance's semantics (grammar/cfg.h), against the greedy oracle
 * (tests/greedy_oracle.h): grammars where greedy and lazy lexemes decide
 * what may follow, at texts inside and between lexemes.  Every layout's
 * mask must equal the oracle's, and the two must agree on whether the
 * text is alive and a sentence.
 */
/* Random texts over alphabet, up to 10 bytes: alive and sentence as the
 * oracle says (a cheaper check than masks, over many more texts). */
static void check_llg_random(ggo_t *o, gr_gram_t *g, const char *gtext, const char *alphabet)
{
    size_t na = strlen(alphabet);
    for (int k = 0; k < 2000; k++) {
        uint8_t s[10];
        size_t n = test_rnd(sizeof s + 1);
        for (size_t i = 0; i < n; i++)
            s[i] = (uint8_t)alphabet[test_rnd((uint32_t)na)];
        int sentence, alive = ggo_run(o, s, n, &sentence);
        uint32_t st = gr_feed(g, GR_START, s, n, NULL);
        if ((st != GR_DEAD) != alive || (alive && gr_accepting(g, st) != sentence))
            fail_msg("%s'%.*s': alive %d, sentence %d here; the oracle says %d, %d", gtext,
                     (int)n, (const char *)s, st != GR_DEAD,
                     st != GR_DEAD && gr_accepting(g, st), alive, sentence);
    }
}

static void check_llg(const char *gtext, const char *alphabet, const char *const *texts,
                      size_t ntexts)
{
    gr_load_opts_t lo = {.format = "lark", .semantics = 1 + GR_SEM_LLGUIDANCE};
    gr_cfg_t ocfg, cfg;
    tb_err_t err;
    char msg[256];
    if (gr_cfg_parse_opts(&ocfg, gtext, strlen(gtext), "g.lark", &lo, &err) ||
        gr_cfg_parse_opts(&cfg, gtext, strlen(gtext), "g.lark", &lo, &err))
        fail_msg("%s", err.msg);
    go_t *lex = go_new(&ocfg, msg, sizeof msg);
    assert_non_null(lex);
    ggo_t *o = ggo_new(&ocfg, lex, 0);
    assert_non_null(o);
    gr_gram_t *g = gr_gram_new(&cfg, NULL, &err);
    assert_non_null(g);
    gr_rec_t rec;
    tb_bitset_t want, got;
    uint8_t *allowed = malloc(tries.keys.n);
    assert_int_equal(gr_rec_init(&rec, g, tries.keys.max_len, &err), 0);
    assert_int_equal(tb_bitset_init(&want, tries.keys.id_limit + 1), 0);
    assert_int_equal(tb_bitset_init(&got, tries.keys.id_limit + 1), 0);
    check_llg_random(o, g, gtext, alphabet);
    for (size_t t = 0; t < ntexts; t++) {
        const uint8_t *s = (const uint8_t *)texts[t];
        size_t n = strlen(texts[t]);
        int sentence, alive = ggo_run(o, s, n, &sentence);
        uint32_t st = gr_feed(g, GR_START, s, n, NULL);
        if ((st != GR_DEAD) != alive || (alive && gr_accepting(g, st) != sentence))
            fail_msg("%s'%s': alive %d, sentence %d here; the oracle says %d, %d", gtext,
                     texts[t], st != GR_DEAD, st != GR_DEAD && gr_accepting(g, st), alive,
                     sentence);
        if (!alive)
            continue;
        ggo_mask(o, s, n, tok_bytes, tok_lens, tries.keys.n, allowed);
        tb_bitset_clear_all(&want);
        for (size_t i = 0; i < tries.keys.n; i++)
            if (allowed[i])
                tb_bitset_set(&want, tries.keys.keys[i].id);
        for (size_t i = 0; i < tries.keys.nalias; i++)
            if (tb_bitset_get(&want, tries.keys.alias[2 * i + 1]))
                tb_bitset_set(&want, tries.keys.alias[2 * i]);
        for (size_t l = 0; l < tries.ntries; l++) {
            assert_int_equal(gr_mask(tries.tries[l], &rec, st, &got, NULL, &err), 0);
            for (size_t i = 0; i < tries.keys.n; i++) {
                uint32_t id = tries.keys.keys[i].id;
                if (tb_bitset_get(&want, id) != tb_bitset_get(&got, id))
                    fail_msg("%slayout %s, after '%s': token '%.*s' %s by the oracle", gtext,
                             tries.names[l], texts[t], (int)tok_lens[i],
                             (const char *)tok_bytes[i],
                             tb_bitset_get(&want, id) ? "allowed" : "refused");
            }
        }
    }
    free(allowed);
    tb_bitset_free(&want);
    tb_bitset_free(&got);
    gr_rec_free(&rec);
    gr_gram_free(g);
    ggo_free(o);
    go_free(lex);
    gr_cfg_free(&ocfg);
}

static void test_llguidance_semantics(void **state)
{
    (void)state;
    static const char *const greedy[] = {"", "a", "aa", "aab", "ab", "b"};
    check_llg("start: A B | C\nA: /a+/\nB: /b/ | /a/\nC: /a{2}c/\n", "abc", greedy, 6);
    static const char *const words[] = {"", "ab", "ab ", "ab c", "ab cd e", " "};
    check_llg("start: WORD (\",\" | WORD)*\nWORD: /[a-z]+/\n%ignore /[ ]+/\n", "ab ,", words, 6);
    static const char *const lazy[] = {"", "1", "12", "x<e", "x<end>", "x<end>3", "<end>"};
    check_llg("start: (num | txt)+\nnum[lazy]: /[0-9]+/\ntxt[stop=\"<end>\"]: /[ -~]*/\n",
              "1<end>x", lazy, 7);
    static const char *const keyword[] = {"", "i", "if", "if ", "iffy", "if x", "x = 1"};
    check_llg("start: (\"if\" ID | ID \"=\" NUM)\nID: /[a-z]+/\nNUM: /[0-9]+/\n"
              "%ignore \" \"\n", "if x=1 ", keyword, 7);
    static const char *const skip[] = {"", " ", "a", "a ", "a  b"};
    check_llg("start: \"a\" B* \"b\"?\nB: \" \"\n%ignore \" \"\n", "a b", skip, 5);
    static const char *const cut[] = {"", "a", "aa", "b"};
    check_llg("start: foo | B | foo \"b\"\nfoo[lazy]: /a+/\nB: /aab/\n", "ab", cut, 4);
}

/* llguidance's parametric rules and a nullable /regex/ alone */
static void test_llg_dialect(void **state)
{
    (void)state;
    const char *extra[] = {"ab", "cab;", "abc; x y", "aa", "bca;"};
    check_grammar("tests/fixtures/lark/llg_dialect.lark", extra, 5);
}

/* ---- token-id lexemes (llguidance's special tokens) ---- */

/* A step of a special-token case: before it, the special tokens `allow`
 * names (blank-separated; NULL: the ids lo..hi, hi UINT32_MAX the
 * vocabulary's last) must be exactly the
 * special ids the mask allows, the other ids exactly the trie walk's,
 * and that walk non-empty iff text; then `refuse` (a special token's
 * name, or NULL) is refused, and `take` consumed: a special token by id,
 * else its bytes. */
typedef struct {
    const char *allow;
    uint32_t lo, hi;
    int text;
    const char *refuse, *take;
} sstep_t;

/* Whether allow names special token id (by its text). */
static int names_id(const tok_vocab_t *v, const char *allow, uint32_t id)
{
    size_t n;
    const uint8_t *s = tok_vocab_token(v, id, &n);
    for (const char *p = allow; (p = strchr(p, '<')) != NULL; p++) {
        size_t k = strcspn(p, " ");
        if (k == n && !memcmp(p, s, n))
            return 1;
    }
    return 0;
}

/* Consumes special token `name` by id, its bytes 0xFF-marked as a trie
 * keeps them (TRIE_SPECIALS_MARKED), so that text never takes it. */
static int consume_special(gr_matcher_t *m, const tok_vocab_t *v, const char *name)
{
    uint8_t marked[64] = {TRIE_SPECIAL_MARKER};
    size_t n = strlen(name);
    assert_true(n < sizeof marked);
    memcpy(marked + 1, name, n);
    tb_err_t err;
    int rc = gr_matcher_consume_id(m, test_special_id(v, name, n), marked, n + 1, NULL, &err);
    assert_true(rc >= 0);
    return rc;
}

static void check_special_step(const char *gtext, gr_matcher_t *m, const sstep_t *st,
                               tb_bitset_t *mask, tb_bitset_t *walk)
{
    const tok_vocab_t *v = tok_vocab(tries.tok);
    tb_err_t err;
    for (size_t l = 0; l < tries.ntries; l++) {
        assert_int_equal(gr_matcher_mask(m, tries.tries[l], mask, NULL, &err), 0);
        assert_int_equal(gr_mask(tries.tries[l], &m->rec, gr_matcher_state(m), walk, NULL,
                                 &err), 0);
        assert_int_equal(tb_bitset_count(walk) > 0, st->text);
        for (uint32_t id = 0; id < v->size; id++) {
            int want = st->allow ? v->special[id] && names_id(v, st->allow, id)
                                 : id >= st->lo && (id <= st->hi || st->hi == UINT32_MAX);
            want |= tb_bitset_get(walk, id);
            if (tb_bitset_get(mask, id) != want)
                fail_msg("%slayout %s, before %s: id %u %s", gtext, tries.names[l],
                         st->take ? st->take : "the end", id, want ? "refused" : "allowed");
        }
    }
    if (st->refuse)
        assert_int_equal(consume_special(m, v, st->refuse), 1);
    if (st->take && st->take[0] == '<')
        assert_int_equal(consume_special(m, v, st->take), 0);
    else if (st->take)
        assert_int_equal(gr_matcher_consume(m, (const uint8_t *)st->take, strlen(st->take),
                                            NULL, &err), 0);
}

/* llguidance's test_ll.rs special-token and token-range traces (its
 * Phi-3.5 names as Llama 3's: <|system|> <|start_header_id|>, <|user|>
 * <|end_header_id|>, <|assistant|> <|eot_id|>), and ignored text around a
 * special token; each mask checked against the definition (cfg.h). */
static void test_special_tokens(void **state)
{
    (void)state;
#define SH "<|start_header_id|>"
#define EH "<|end_header_id|>"
#define EOT "<|eot_id|>"
    static const struct {
        const char *grammar;
        sstep_t step[4];
        int end; /* accepting after the steps */
    } CASES[] = {
        {"start: " SH " /.*/\n",
         {{SH, 0, 0, 0, EOT, SH}, {"", 0, 0, 1, SH, "foo"}, {"", 0, 0, 1, SH, NULL}}, 1},
        {"start: hd /.*/\nhd: " SH " | " EH "\n",
         {{SH " " EH, 0, 0, 0, EOT, EH}, {"", 0, 0, 1, SH, "foo"}, {"", 0, 0, 1, NULL, NULL}}, 1},
        {"start: /.*/ " SH "\n",
         {{SH, 0, 0, 1, EH, "foo"}, {SH, 0, 0, 1, EOT, SH}, {"", 0, 0, 0, SH, NULL}}, 1},
        {"start: \"a\" " EOT " \"b\"\n%ignore \" \"\n",
         {{"", 0, 0, 1, EOT, "a "}, {EOT, 0, 0, 1, NULL, EOT}, {"", 0, 0, 1, EOT, " b"},
          {"", 0, 0, 0, NULL, NULL}}, 1},
        {"start: <[128000-128255]> /.*/\n",
         {{NULL, 128000, 128255, 0, NULL, EOT}, {"", 0, 0, 1, EOT, "x"}, {"", 0, 0, 1, NULL, NULL}},
         1},
        {"start: <[*]> \"b\"\n",
         {{NULL, 0, UINT32_MAX, 0, NULL, "<|end_of_text|>"}, {"", 0, 0, 1, EOT, NULL}}, 0},
    };
    tb_bitset_t mask, walk;
    assert_int_equal(tb_bitset_init(&mask, tries.keys.id_limit + 1), 0);
    assert_int_equal(tb_bitset_init(&walk, tries.keys.id_limit + 1), 0);
    for (size_t c = 0; c < sizeof CASES / sizeof CASES[0]; c++) {
        const char *gtext = CASES[c].grammar;
        gr_load_opts_t lo = {.format = "lark", .semantics = 1 + GR_SEM_LLGUIDANCE,
                             .vocab = tok_vocab(tries.tok)};
        gr_cfg_t cfg;
        gr_matcher_t m;
        tb_err_t err;
        if (gr_cfg_parse_opts(&cfg, gtext, strlen(gtext), "g.lark", &lo, &err))
            fail_msg("%s", err.msg);
        gr_gram_t *g = gr_gram_new(&cfg, NULL, &err);
        assert_non_null(g);
        assert_int_equal(gr_matcher_init(&m, g, tries.keys.max_len, &err), 0);
        for (size_t k = 0; k < 4 && (CASES[c].step[k].allow || CASES[c].step[k].hi); k++)
            check_special_step(gtext, &m, &CASES[c].step[k], &mask, &walk);
        assert_int_equal(gr_matcher_accepting(&m), CASES[c].end);
        gr_matcher_free(&m);
        gr_gram_free(g);
    }
    tb_bitset_free(&mask);
    tb_bitset_free(&walk);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_special_tokens),
        cmocka_unit_test(test_json_lark),
        cmocka_unit_test(test_json_gbnf),
        cmocka_unit_test(test_arith),
        cmocka_unit_test(test_keywords),
        cmocka_unit_test(test_nullable_and_right_recursion),
        cmocka_unit_test(test_llguidance_semantics),
        cmocka_unit_test(test_llg_dialect),
    };
    return cmocka_run_group_tests_name("grammar masks against the oracle", tests, setup,
                                       teardown);
}
