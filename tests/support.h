/*
 * support: helpers shared by the test programs (linked into each one).
 * They fail the running cmocka test with a message that says what to run
 * when an input is missing, rather than letting a test skip.
 */
#ifndef TESTS_SUPPORT_H
#define TESTS_SUPPORT_H

#include "../tok/tokenizer.h"

/* Fails the test unless path is readable ("run 'make data'"). */
void test_need_file(const char *path);

/* Loads a tokenizer or fails the test with the loader's message. */
tok_tokenizer_t *test_load(const char *path);

/* Fails the test unless tok/charsmap refuses the blob with a message
 * that contains `want`. */
void test_charsmap_refused(const uint8_t *blob, size_t len, const char *want);

#endif
