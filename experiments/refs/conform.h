/*
 * conform: ids of tokbench against the reference tokenizer, line by line.
 * The `conform` command prints mismatches; the conform experiment (in
 * drv_tokenize.c) calls xp_conform_check and stores the counts.
 */
#ifndef XP_CONFORM_H
#define XP_CONFORM_H

#include "../../base/err.h"

typedef struct {
    long lines, tokens, mismatches, skipped, errors;
} xp_conform_stats_t;

/* Runs each reference for ref_path's format (reference.h; ref_path NULL
 * means vocab_path itself) over every line of corpus_path and compares with
 * vocab_path's ids; prints nothing.  The counts add up over the references
 * (a tokenizer.json has two, so its lines count twice).
 * Returns -1 only when the comparison could not run; mismatches are
 * counted in st. */
int xp_conform_check(const char *vocab_path, const char *ref_path,
                     const char *corpus_path, xp_conform_stats_t *st,
                     tb_err_t *err);

#endif
