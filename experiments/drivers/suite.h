/*
 * suite: experiment suites, CSV files read with libcsv.
 *
 * The first record is a header naming the columns, in any order:
 *   experiment   (required) a driver name from driver.h's table
 *   vocabulary   manifest name or path of a vocabulary
 *   layout       trie layout
 *   pattern      regex or mask pattern
 *   corpus       manifest name or path of a text file
 *   repetitions  measured repetitions (empty: the runner's default)
 *   sources      counter sources, "tsc+papi+callgrind", "all" (empty: tsc)
 *   options      free "key=value" words a driver reads (reference=hf, n=..)
 * A line starting with '#' (outside a quoted field) is a comment; blank
 * records are skipped.
 * An unknown column is an error, so a typo does not silently drop a setting.
 */
#ifndef XP_SUITE_H
#define XP_SUITE_H

#include <stddef.h>
#include <stdint.h>

#include "../../base/err.h"

typedef struct {
    char *experiment, *vocab, *layout, *pattern, *corpus, *sources, *options;
    unsigned reps;   /* 0 when the row leaves it to the runner */
    unsigned line;   /* line of the record in the file, for messages */
} xp_row_t;

typedef struct {
    xp_row_t *rows; /* owned; every string in a row is owned by the suite */
    size_t n;
} xp_suite_t;

/* Parses CSV text; `name` only labels error messages. */
int xp_suite_parse(const char *name, const char *text, size_t len,
                   xp_suite_t *s, tb_err_t *err);
int xp_suite_load(const char *path, xp_suite_t *s, tb_err_t *err);
void xp_suite_free(xp_suite_t *s);

/* Copies the value of option `key` of the row into buf and returns buf, or
 * returns NULL when the row does not set it.  "key" alone means "1". */
const char *xp_row_option(const xp_row_t *r, const char *key, char *buf,
                          size_t size);

/* The value of option `key` as a whole number in [min, max] into *out, or
 * dflt when the row leaves it out; a value that is not such a number is an
 * error that names the row's line, the option and the value. */
int xp_row_uint(const xp_row_t *r, const char *key, uint64_t dflt, uint64_t min,
                uint64_t max, uint64_t *out, tb_err_t *err);

/* Builds a row from literal strings (any may be NULL: empty), owned by the
 * caller through xp_row_free; used by the hidden one-case sub-command. */
int xp_row_init(xp_row_t *r, const char *const fields[7], unsigned reps);
void xp_row_free(xp_row_t *r);

/* Turns the comment lines of a CSV text ('#' first on a line, outside
 * quotes) into blanks, newlines kept, so that strict libcsv reads the rest
 * with its line numbers right (the suites, the anchors). */
void xp_csv_blank_comments(char *t, size_t len);

#endif
