/*
 * support: helpers shared by the test programs (linked into each one).
 * They fail the running cmocka test with a message that says what to run
 * when an input is missing, rather than letting a test skip.
 */
#ifndef TESTS_SUPPORT_H
#define TESTS_SUPPORT_H

#include <sqlite3.h>
#include <stddef.h>

#include "../tok/tokenizer.h"

/* Fails the test unless path is readable ("run 'make data'"). */
void test_need_file(const char *path);

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

#endif
