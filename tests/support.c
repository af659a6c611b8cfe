/* support: see support.h. */
#include "support.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "../lexer/deriv.h"
#include "../tok/charsmap.h"

/* The tier of support.h, set before main runs the groups. */
__attribute__((constructor)) static void choose_tier(void)
{
    const char *tier = getenv("TB_TEST_LONG");
    if (tier && strcmp(tier, "0"))
        cmocka_set_test_filter("long_*");
    else
        cmocka_set_skip_filter("long_*");
}

void test_need_file(const char *path)
{
    if (access(path, R_OK))
        fail_msg("%s is missing: run 'make data' from the repository root", path);
}

uint32_t test_special_id(const tok_vocab_t *v, const char *name, size_t n)
{
    for (uint32_t id = 0; id < v->size; id++) {
        size_t len;
        const uint8_t *s = tok_vocab_token(v, id, &len);
        if (v->special[id] && len == n && !memcmp(s, name, n))
            return id;
    }
    fail_msg("no special token %.*s in the vocabulary", (int)n, name);
    return 0;
}

tok_tokenizer_t *test_load(const char *path)
{
    test_need_file(path);
    tb_err_t err;
    tok_tokenizer_t *t = tok_load(path, &err);
    if (!t)
        fail_msg("loading %s: %s", path, err.msg);
    return t;
}

void test_charsmap_refused(const uint8_t *blob, size_t len, const char *want)
{
    tok_charsmap_t cm;
    tb_err_t err;
    if (tok_charsmap_open(&cm, blob, len, &err) == 0)
        fail_msg("a charsmap that should be refused (for '%s') was accepted", want);
    if (!strstr(err.msg, want))
        fail_msg("expected a charsmap error containing '%s', got '%s'", want, err.msg);
}

long long test_sql_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    long long v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    return v;
}

int test_tokbench(const char *args, char *out, size_t size)
{
    const char *build = getenv("BUILD");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s/tokbench %s 2>&1", build && *build ? build : "build",
             args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int test_tokbenchf(char *out, size_t size, const char *fmt, ...)
{
    char args[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof args)
        fail_msg("tokbench arguments longer than %zu bytes", sizeof args);
    return test_tokbench(args, out, size);
}

int test_tokbench_mask(const char *args, char *out, size_t size)
{
    char cmd[1024];
    if ((size_t)snprintf(cmd, sizeof cmd, "mask %s", args) >= sizeof cmd)
        fail_msg("tokbench mask arguments longer than %zu bytes", sizeof cmd);
    return test_tokbench(cmd, out, size);
}

uint64_t test_rng = 0x9e3779b97f4a7c15ull;

uint32_t test_rnd(uint32_t n)
{
    test_rng ^= test_rng << 13;
    test_rng ^= test_rng >> 7;
    test_rng ^= test_rng << 17;
    return (uint32_t)(test_rng % n);
}

void test_regex_refused(const char *pattern, const char *want)
{
    tb_err_t err;
    lex_dfa_t *d = lex_dfa_new(pattern, NULL, &err);
    if (d) {
        lex_dfa_free(d);
        fail_msg("'%s' was accepted", pattern);
    }
    if (!strstr(err.msg, want) || !strstr(err.msg, "regex '"))
        fail_msg("'%s': got \"%s\", want \"%s\"", pattern, err.msg, want);
}

int test_tries_load(test_tries_t *t, const char *path)
{
    tb_err_t err;
    t->tok = test_load(path);
    if (trie_keys_from_vocab(&t->keys, tok_vocab(t->tok), TRIE_SPECIALS_OMIT, &err)) {
        fprintf(stderr, "%s: %s\n", path, err.msg);
        return -1;
    }
    for (size_t i = 0; trie_layouts[i] && t->ntries < TEST_MAX_LAYOUTS; i++) {
        const char *name = trie_layouts[i]->name;
        trie_t *trie = trie_build(trie_layouts[i], &t->keys, &err);
        if (!trie) {
            fprintf(stderr, "%s %s: %s\n", path, name, err.msg);
            return -1;
        }
        t->names[t->ntries] = name;
        t->tries[t->ntries++] = trie;
    }
    return 0;
}

void test_tries_free(test_tries_t *t)
{
    for (size_t i = 0; i < t->ntries; i++)
        trie_free(t->tries[i]);
    trie_keys_free(&t->keys);
    tok_free(t->tok);
}

void test_tmpdir(char *tmpl)
{
    if (!mkdtemp(tmpl))
        fail_msg("mkdtemp %s failed", tmpl);
}

int test_rm_tree(const char *dir)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) ? -1 : 0;
}

void test_rmdir(const char *dir, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

FILE *test_run_dir(char *tmpl, char *suite, char *db, size_t size)
{
    test_tmpdir(tmpl);
    snprintf(suite, size, "%s/suite.csv", tmpl);
    snprintf(db, size, "%s/r.db", tmpl);
    FILE *f = fopen(suite, "w");
    if (!f)
        fail_msg("cannot write %s", suite);
    fputs("experiment,vocabulary,layout,pattern,corpus,repetitions,sources,options\n", f);
    return f;
}

void test_run_dir_remove(const char *dir)
{
    static const char *const made[] = {"suite.csv", "r.db", "r.db-wal", "r.db-shm"};
    test_rmdir(dir, made, sizeof made / sizeof *made);
}

void test_write_tampered_cl100k(const char *out)
{
    test_need_file(TEST_CL100K);
    tb_err_t err;
    tok_tokenizer_t *t = tok_load(TEST_CL100K, &err);
    if (!t)
        fail_msg("%s", err.msg);
    int32_t a = tok_vocab_find(tok_vocab(t), (const uint8_t *)" the", 4);
    int32_t b = tok_vocab_find(tok_vocab(t), (const uint8_t *)" and", 4);
    assert_true(a >= 0 && b >= 0);
    tok_free(t);
    json_error_t je;
    json_t *root = json_load_file(TEST_CL100K, 0, &je);
    assert_non_null(root);
    const char *ranks = json_string_value(json_object_get(root, "bpe_ranks"));
    assert_non_null(ranks);
    /* "! 0 TOK0 TOK1 ...": field k + 2 holds rank k */
    size_t n = strlen(ranks);
    char *copy = malloc(n + 1);
    assert_non_null(copy);
    size_t field = 0, at = 0, start[2] = {0}, len[2] = {0};
    for (size_t i = 0; i <= n; i++)
        if (i == n || ranks[i] == ' ') {
            long rank = (long)field - 2;
            int which = rank == a ? 0 : rank == b ? 1 : -1;
            if (which >= 0) {
                start[which] = at;
                len[which] = i - at;
            }
            field++;
            at = i + 1;
        }
    /* Rebuild with the two fields exchanged. */
    size_t o = 0;
    at = 0;
    field = 0;
    for (size_t i = 0; i <= n; i++)
        if (i == n || ranks[i] == ' ') {
            long rank = (long)field - 2;
            int which = rank == a ? 1 : rank == b ? 0 : -1;
            size_t s = which >= 0 ? start[which] : at;
            size_t l = which >= 0 ? len[which] : i - at;
            memcpy(copy + o, ranks + s, l);
            o += l;
            if (i < n)
                copy[o++] = ' ';
            field++;
            at = i + 1;
        }
    copy[o] = 0;
    json_object_set_new(root, "bpe_ranks", json_string(copy));
    assert_int_equal(json_dump_file(root, out, JSON_COMPACT), 0);
    free(copy);
    json_decref(root);
}
