/*
 * Lark's own grammar files against Lark 1.1.5 (Debian's python3-lark, run
 * by scripts/ref/lark_check.py with Earley and the dynamic_complete lexer):
 * the grammars Lark ships (the .lark files of lark/grammars) and its examples
 * (python-lark-doc), as their users write them: imports of common and of
 * files beside them, templates, %declare, priorities.  Each file either
 * loads here, or is refused with the construct named; a loaded one gets
 * random sentences (tests/grammar_gen.h) and one-byte mutations of them,
 * each judged by the grammar automaton here and by Lark, and the verdicts
 * must be the same (docs/grammars.md, "Lark's own format", says where the
 * two readings may differ; none of these files reaches those cases).
 * Skips, saying so, where python3-lark or python-lark-doc is absent.
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
#include "../grammar/gram.h"
#include "../grammar/load.h"
#include "grammar_gen.h"
#include "grammar_oracle.h"
#include "support.h"

#define LARK_DIR "/usr/lib/python3/dist-packages/lark/grammars/"
#define DOC_DIR "/usr/share/doc/python-lark-doc/examples/"

/* Lark's %ignore takes an ignored terminal at the one length re.match
 * gives it, where here it may end wherever its regex matches: lark.lark's
 * COMMENT (blanks, "//", then anything but a newline) there runs to the
 * end of its line. */
#define GREEDY_IGNORE "a comment (%ignore COMMENT) ends before its line does"

/* A file, its start rule, what refuses it here (NULL: it loads), and a
 * text of Lark's examples to judge with mutants of it (NULL: none). */
static const struct {
    const char *path, *start, *refused, *sample;
} FILES[] = {
    /* terminals only, for %import: Lark refuses both as grammars, for any
     * start ("Using an undefined rule"); common.lark is refused here before
     * that, at _STRING_ESC_INNER's lone look-behind (%import
     * common.ESCAPED_STRING reads the whole idiom, larklook.h) */
    {LARK_DIR "common.lark", "start", "look-around", NULL},
    {LARK_DIR "lark.lark", "start", NULL, NULL},
    {LARK_DIR "python.lark", "file_input", NULL, NULL},
    {LARK_DIR "unicode.lark", "start", "no rule 'start'", NULL},
    {DOC_DIR "grammars/verilog.lark", "start", NULL, NULL},
    {DOC_DIR "advanced/python2.lark", "file_input", NULL, NULL},
    {DOC_DIR "advanced/template_lark.lark", "start", NULL, NULL},
    {DOC_DIR "composition/csv.lark", "start", NULL, NULL},
    {DOC_DIR "composition/json.lark", "start", NULL, NULL},
    {DOC_DIR "composition/storage.lark", "start", NULL,
     DOC_DIR "composition/combined_csv_and_json.txt"},
    {DOC_DIR "relative-imports/multiple2.lark", "start", NULL, NULL},
    {DOC_DIR "relative-imports/multiple3.lark", "start", NULL, NULL},
    {DOC_DIR "relative-imports/multiples.lark", "start", NULL, NULL},
    {DOC_DIR "standalone/json.lark", "value", NULL, NULL},
    {DOC_DIR "tests/negative_priority.lark", "start", NULL, NULL},
    {DOC_DIR "tests/no_newline_at_end.lark", "start", NULL, NULL},
    /* written here: what Lark's files above do not reach */
    {"tests/fixtures/lark/features.lark", "start", NULL, NULL},
    {"tests/fixtures/lark/compose.lark", "start", NULL, NULL},
    {"tests/fixtures/lark/adjacent.lark", "start", NULL, NULL},
    {"tests/fixtures/lark/lookaround.lark", "start", NULL, "tests/fixtures/lark/lookaround.txt"},
};
#define NFILES (sizeof FILES / sizeof FILES[0])

/* Files whose verdicts may differ from Lark's for a cause: every string
 * judged differently must hold `mark`. */
static const struct {
    const char *path, *cause, *mark;
} CAUSES[] = {
    {LARK_DIR "lark.lark", GREEDY_IGNORE, "//"},
    {DOC_DIR "advanced/template_lark.lark", GREEDY_IGNORE, "//"},
};

/* The index of path's entry in CAUSES, or -1. */
static int cause_of(const char *path)
{
    for (int i = 0; i < (int)(sizeof CAUSES / sizeof CAUSES[0]); i++)
        if (!strcmp(CAUSES[i].path, path))
            return i;
    return -1;
}

#define SENTENCES 40
#define MUTANTS 40
#define MAX_TEXTS (2 * SENTENCES + 1 + MUTANTS)
#define MAX_TEXT 2048

static int have_lark(void)
{
    return access(DOC_DIR "composition/storage.lark", R_OK) == 0 &&
           system("/usr/bin/python3 -c 'import lark' 2>/dev/null") == 0;
}

/* A one-byte change of text: a byte dropped, doubled or replaced by one
 * of the text's own (so the mutant stays near the language). */
static void mutate(tb_buf_t *text)
{
    if (!text->len)
        return;
    size_t at = test_rnd((uint32_t)text->len);
    uint8_t other = text->data[test_rnd((uint32_t)text->len)];
    switch (test_rnd(3)) {
    case 0:
        memmove(text->data + at, text->data + at + 1, text->len - at - 1);
        text->len--;
        break;
    case 1:
        if (!tb_buf_putc(text, 0)) {
            memmove(text->data + at + 1, text->data + at, text->len - at - 1);
            text->data[at] = other;
        }
        break;
    default:
        text->data[at] = other;
    }
}

/* The strings to judge: sentences of cfg, each followed by a mutant. */
static size_t make_texts(const char *path, gr_cfg_t *cfg, tb_buf_t *texts, size_t max)
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
        mutate(m);
        n += 2;
    }
    gg_free(gen);
    go_free(o);
    return n;
}

/* The sample at path into texts[0], and mutants of it after; how many. */
static size_t sample_texts(const char *path, tb_buf_t *texts)
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
            mutate(&texts[i]);
    }
    free(data);
    return MUTANTS + 1;
}

/* Lark's verdicts on texts[0..n) into want (1 a sentence); its load error
 * fails the test. */
static void lark_verdicts(const char *path, const char *start, const tb_buf_t *texts,
                          size_t n, int *want)
{
    char in[] = "/tmp/test_lark_in_XXXXXX", out[64], cmd[1024];
    int fd = mkstemp(in);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < texts[i].len; k++)
            fprintf(f, "%02x", texts[i].data[k]);
        fputc('\n', f);
    }
    fclose(f);
    snprintf(out, sizeof out, "%s.out", in);
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 scripts/ref/lark_check.py %s %s < %s > %s",
             path, start, in, out);
    int rc = system(cmd);
    f = fopen(out, "r");
    assert_non_null(f);
    char line[1100];
    for (size_t i = 0; i < n; i++) {
        if (!fgets(line, sizeof line, f))
            fail_msg("%s: lark_check.py gave %zu verdicts of %zu (exit %d)", path, i, n, rc);
        if (line[0] == 'E')
            fail_msg("%s: Lark refuses it: %s", path, line + 2);
        want[i] = line[0] == '1';
    }
    fclose(f);
    remove(in);
    remove(out);
}

/* Whether Lark refuses the grammar at path with start: its message
 * (lark_check.py's "E ..." line) into msg, or 0 if it loads it. */
static int lark_refuses(const char *path, const char *start, char *msg, size_t size)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 scripts/ref/lark_check.py %s %s </dev/null",
             path, start);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    msg[0] = 0;
    if (!fgets(msg, (int)size, f))
        msg[0] = 0;
    pclose(f);
    return msg[0] == 'E';
}

static void lark_files(void **state)
{
    (void)state;
    if (!have_lark()) {
        print_message("skipped: no python3-lark or python-lark-doc (make setup installs "
                      "them)\n");
        skip();
    }
    static tb_buf_t texts[MAX_TEXTS];
    static int want[MAX_TEXTS];
    size_t loaded = 0, judged = 0, sentences = 0, refused = 0;
    for (size_t i = 0; i < NFILES; i++) {
        gr_cfg_t cfg;
        tb_err_t err;
        int rc = gr_cfg_load_start(&cfg, FILES[i].path, "lark", FILES[i].start, &err);
        if (FILES[i].refused) {
            if (rc == 0)
                fail_msg("%s loads, where it was refused (%s)", FILES[i].path,
                         FILES[i].refused);
            if (!strstr(err.msg, FILES[i].refused) || !strstr(err.msg, FILES[i].path))
                fail_msg("%s: refused with '%s', not naming the file and '%s'",
                         FILES[i].path, err.msg, FILES[i].refused);
            char msg[512];
            if (!lark_refuses(FILES[i].path, FILES[i].start, msg, sizeof msg))
                fail_msg("%s: refused here (%s), Lark loads it", FILES[i].path, err.msg);
            refused++;
            continue;
        }
        if (rc)
            fail_msg("%s", err.msg);
        loaded++;
        size_t n = make_texts(FILES[i].path, &cfg, texts, 2 * SENTENCES);
        if (FILES[i].sample)
            n += sample_texts(FILES[i].sample, texts + n);
        gr_cfg_free(&cfg);
        lark_verdicts(FILES[i].path, FILES[i].start, texts, n, want);
        if (gr_cfg_load_start(&cfg, FILES[i].path, "lark", FILES[i].start, &err))
            fail_msg("%s", err.msg);
        gr_gram_t *g = gr_gram_new(&cfg, NULL, &err);
        if (!g)
            fail_msg("%s", err.msg);
        size_t differ = 0, caused = 0;
        int c = cause_of(FILES[i].path);
        for (size_t k = 0; k < n; k++) {
            uint32_t s = gr_feed(g, GR_START, texts[k].data, texts[k].len, NULL);
            int got = s != GR_DEAD && gr_accepting(g, s);
            sentences += (size_t)got;
            if (got != want[k] && c >= 0 &&
                memmem(texts[k].data, texts[k].len, CAUSES[c].mark, strlen(CAUSES[c].mark))) {
                caused++;
                continue;
            }
            if (got != want[k] && differ++ < 5)
                print_message("%s: '%.*s': here %s, Lark %s\n", FILES[i].path,
                              (int)texts[k].len, (const char *)texts[k].data,
                              got ? "a sentence" : "refused", want[k] ? "a sentence" : "refused");
        }
        assert_int_equal(gr_gram_error(g, &err), 0);
        gr_gram_free(g);
        judged += n;
        if (caused)
            print_message("%s: %zu of %zu verdicts differ, each of a string holding '%s' "
                          "(%s)\n", FILES[i].path, caused, n, CAUSES[c].mark, CAUSES[c].cause);
        if (differ)
            fail_msg("%s: %zu of %zu verdicts differ from Lark's", FILES[i].path, differ, n);
    }
    for (size_t k = 0; k < MAX_TEXTS; k++)
        tb_buf_free(&texts[k]);
    print_message("%zu of %zu files load, %zu refused as Lark refuses them; %zu strings "
                  "(%zu sentences) judged as Lark does\n",
                  loaded, NFILES, refused, judged, sentences);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lark_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
