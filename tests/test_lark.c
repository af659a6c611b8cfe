/*
 * Lark's own grammar files against Lark 1.1.5 (experiments/refs/larkfiles.h:
 * the files, Lark run live, the verdicts compared): the grammars Lark ships
 * and its examples, as their users write them: imports of common and of
 * files beside them, templates, %declare, priorities.  Each file either
 * loads here, or is refused with the construct named and by Lark too; a
 * loaded one gets random sentences (tests/grammar_gen.h) and one-byte
 * mutations of them, each judged by the grammar automaton here and by
 * Lark, and the verdicts must be the same but for larkfiles' causes
 * (docs/grammars.md, "Lark's own format", says where the two readings may
 * differ).  Skips, saying so, where python3-lark or python-lark-doc is
 * absent.
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
#include "../experiments/refs/larkfiles.h"
#include "../grammar/gram.h"
#include "grammar_gen.h"
#include "grammar_oracle.h"
#include "support.h"

#define SENTENCES 40
#define MUTANTS 40
#define MAX_TEXTS (2 * SENTENCES + 1 + MUTANTS)
#define MAX_TEXT 2048

/* The strings to judge: sentences of cfg, each followed by a mutant. */
static size_t make_texts(const char *path, gr_cfg_t *cfg, tb_buf_t *texts, size_t max,
                         uint64_t *rng)
{
    char msg[256];
    go_t *o = go_new(cfg, msg, sizeof msg);
    if (!o)
        fail_msg("go_new: %s", msg);
    gg_t *gen = gg_new(cfg, o, msg, sizeof msg);
    if (!gen)
        fail_msg("gg_new: %s", msg);
    size_t n = 0;
    while (n + 1 < max) {
        tb_buf_t *s = &texts[n];
        s->len = 0;
        if (gg_sentence(gen, 12, s)) {
            /* PCRE2's backtracking gives up (match limit) on a grammar that
             * is one merged lexeme of nested repetitions (csv.lark): fewer
             * strings then, said */
            print_message("%s: %zu strings: the generator stops: %s\n", path, n, gg_error(gen));
            break;
        }
        if (s->len > MAX_TEXT)
            continue;
        tb_buf_t *m = &texts[n + 1];
        m->len = 0;
        assert_int_equal(tb_buf_put(m, s->data, s->len), 0);
        assert_int_equal(xp_lark_mutate(m, rng), 0);
        n += 2;
    }
    gg_free(gen);
    go_free(o);
    return n;
}

/* The sample at path into texts[0], and mutants of it after; how many. */
static size_t sample_texts(const char *path, tb_buf_t *texts, uint64_t *rng)
{
    uint8_t *data;
    size_t len;
    tb_err_t err;
    if (tb_read_file(path, &data, &len, &err))
        fail_msg("%s", err.msg);
    for (size_t i = 0; i <= MUTANTS; i++) {
        texts[i].len = 0;
        assert_int_equal(tb_buf_put(&texts[i], data, len), 0);
        if (i)
            assert_int_equal(xp_lark_mutate(&texts[i], rng), 0);
    }
    free(data);
    return MUTANTS + 1;
}

static void lark_files(void **state)
{
    (void)state;
    if (!xp_lark_available()) {
        print_message("skipped: no python3-lark or python-lark-doc (make setup installs "
                      "them)\n");
        skip();
    }
    static tb_buf_t texts[MAX_TEXTS];
    static int want[MAX_TEXTS];
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    size_t loaded = 0, judged = 0, sentences = 0, refused = 0, caused = 0;
    for (size_t i = 0; i < xp_lark_nfiles; i++) {
        const xp_lark_file_t *f = &xp_lark_files[i];
        gr_cfg_t cfg;
        tb_err_t err;
        int rc = xp_lark_load(&cfg, f->path, f->start, &err);
        if (f->refused) {
            if (rc == 0)
                fail_msg("%s loads, where it was refused (%s)", f->path, f->refused);
            if (!strstr(err.msg, f->refused) || !strstr(err.msg, f->path))
                fail_msg("%s: refused with '%s', not naming the file and '%s'", f->path,
                         err.msg, f->refused);
            char msg[512];
            tb_err_t lerr;
            if (xp_lark_refuses(".", f->path, f->start, msg, sizeof msg, &lerr) != 1)
                fail_msg("%s: refused here (%s), Lark loads it", f->path, err.msg);
            refused++;
            continue;
        }
        if (rc)
            fail_msg("%s", err.msg);
        loaded++;
        size_t n = make_texts(f->path, &cfg, texts, 2 * SENTENCES, &rng);
        if (f->sample)
            n += sample_texts(f->sample, texts + n, &rng);
        gr_cfg_free(&cfg);
        if (xp_lark_verdicts(".", f->path, f->start, texts, n, want, &err) ||
            xp_lark_load(&cfg, f->path, f->start, &err))
            fail_msg("%s", err.msg);
        gr_gram_t *g = gr_gram_new(&cfg, NULL, &err);
        if (!g)
            fail_msg("%s", err.msg);
        xp_lark_judged_t j;
        if (xp_lark_judge(g, f->path, texts, n, want, &j, &err))
            fail_msg("%s", err.msg);
        gr_gram_free(g);
        judged += n;
        sentences += j.sentences;
        caused += j.caused;
        if (j.caused)
            print_message("%s: %zu of %zu verdicts differ, each for a known cause (the "
                          "first: %s)\n", f->path, j.caused, n, j.cause);
        if (j.differ)
            fail_msg("%s: %zu of %zu verdicts differ from Lark's, the first %s", f->path,
                     j.differ, n, j.first);
    }
    for (size_t k = 0; k < MAX_TEXTS; k++)
        tb_buf_free(&texts[k]);
    print_message("%zu of %zu files load, %zu refused as Lark refuses them; %zu strings "
                  "(%zu sentences here), each with Lark's verdict but %zu for a known "
                  "cause\n", loaded, xp_lark_nfiles, refused, judged, sentences, caused);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lark_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
