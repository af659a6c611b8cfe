/*
 * fuzz: tokbench's ids against the reference programs on generated text
 * (the `fuzz` command; fuzz.c says what the lines hold and how a
 * mismatch is shrunk).
 */
#ifndef XP_FUZZ_H
#define XP_FUZZ_H

#include "../../base/buf.h"
#include "../../base/err.h"
#include "../../tok/vocab.h"

typedef struct {
    long lines, mismatches; /* added up over the references */
} xp_fuzz_stats_t;

/* Generates `lines` lines from `seed` and compares vocab_path's ids with
 * every reference of its format; prints nothing.  Returns -1 only when
 * the comparison could not run; mismatches are counted in st. */
int xp_fuzz_check(const char *vocab_path, long lines, long seed,
                  xp_fuzz_stats_t *st, tb_err_t *err);

/* Appends the `lines` lines that `seed` gives for vocab (its special
 * tokens are among the pieces; invalid UTF-8 too with bytes_ok), each
 * ended by "\n", to text: what xp_fuzz_check and `tokbench fuzz` compare. */
int xp_fuzz_generate(const tok_vocab_t *vocab, int bytes_ok, long lines,
                     long seed, tb_buf_t *text, tb_err_t *err);

#endif
