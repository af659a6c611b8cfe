/*
 * support: helpers shared by the test programs (linked into each one).
 * They fail the running cmocka test with a message that says what to run
 * when an input is missing, rather than letting a test skip.
 */
#ifndef TESTS_SUPPORT_H
#define TESTS_SUPPORT_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../tok/tokenizer.h"
#include "../trie/trie.h"

/* Two tiers of cases.  A long case (a sweep over every vocabulary or a
 * whole corpus, a big sample) is registered with long_unit_test(f) in place
 * of cmocka_unit_test(f): its name becomes "long_f", and a constructor in
 * support.c filters by that prefix, so `make test` runs every case but the
 * long ones and `make check-long` (TB_TEST_LONG=1) only the long ones.  A
 * filtered case is not run and not counted, never reported as passing. */
#define long_unit_test(f) {"long_" #f, f, NULL, NULL, NULL}

/* cl100k's npm JSON in the data cache. */
#define TEST_CL100K "data/cache/cl100k/cl100k_base.json"

/* Writes to `out` a copy of cl100k's JSON with the ranks of " the" and
 * " and" swapped: a vocabulary that must differ from cl100k's reference. */
void test_write_tampered_cl100k(const char *out);

/* Fails the test unless path is readable ("run 'make data'"). */
void test_need_file(const char *path);

/* The id of the special token whose text is name[0..n) in v (found by
 * scanning v), or fails the test. */
uint32_t test_special_id(const tok_vocab_t *v, const char *name, size_t n);

/* Loads a tokenizer or fails the test with the loader's message. */
tok_tokenizer_t *test_load(const char *path);

/* Fails the test unless tok/charsmap refuses the blob with a message
 * that contains `want`. */
void test_charsmap_refused(const uint8_t *blob, size_t len, const char *want);

/* The integer in the first column of the query's first row, -1 when it
 * has no row; fails the test if the query is refused. */
long long test_sql_int(sqlite3 *db, const char *sql);

/* Runs `$BUILD/tokbench ARGS` (BUILD defaults to build) through the
 * shell; its stdout and stderr, up to size - 1 bytes, go into out.
 * Returns its exit status, -1 if a signal ended it. */
int test_tokbench(const char *args, char *out, size_t size);

/* test_tokbench with the arguments formatted as printf's. */
int test_tokbenchf(char *out, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* test_tokbench("mask ARGS"). */
int test_tokbench_mask(const char *args, char *out, size_t size);

/* The xorshift generator of the randomized tests: a number below n.  Its
 * state starts at a fixed seed, so every run draws the same cases; a
 * program that wants other cases sets test_rng before its tests run. */
extern uint64_t test_rng;
uint32_t test_rnd(uint32_t n);

/* Fails the test unless lex_dfa_new refuses the pattern with a message
 * that names it ("regex '...") and contains `want`. */
void test_regex_refused(const char *pattern, const char *want);

/* A vocabulary's keys (specials omitted) and one trie of every layout in
 * trie_layouts[] that can hold them, in that order. */
#define TEST_MAX_LAYOUTS 8
typedef struct {
    tok_tokenizer_t *tok;
    trie_keys_t keys;
    trie_t *tries[TEST_MAX_LAYOUTS];
    const char *names[TEST_MAX_LAYOUTS];
    size_t ntries;
} test_tries_t;

/* Loads the tokenizer at path (failing the test when it is missing) and
 * builds the tries; every layout must build.  Returns 0,
 * or -1 after saying why on stderr, for a cmocka group setup. */
int test_tries_load(test_tries_t *t, const char *path);
void test_tries_free(test_tries_t *t);

/* Makes a fresh directory from a mkdtemp template ("/tmp/name.XXXXXX"),
 * failing the test when it cannot. */
void test_tmpdir(char *tmpl);

/* The scratch directory of a `tokbench run`: made fresh from tmpl, with
 * dir/suite.csv open for writing and its header line written (the caller
 * adds the rows and closes it; its path goes to suite) and dir/r.db named
 * for the results (in db).  test_run_dir_remove removes all a run leaves
 * there, then the directory. */
FILE *test_run_dir(char *tmpl, char *suite, char *db, size_t size);
void test_run_dir_remove(const char *dir);

/* Removes a test's folder and all it holds (rm -rf): 0, or -1. */
int test_rm_tree(const char *dir);

/* Removes the named files from dir, then dir itself: what a test made
 * there and the side files of a SQLite database ("r.db-wal"), present
 * or not. */
void test_rmdir(const char *dir, const char *const *names, size_t n);

#endif
