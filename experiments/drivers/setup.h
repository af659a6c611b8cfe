/*
 * setup: what the drivers' setups share.  Every trie experiment starts the
 * same way: the row's vocabulary, resolved and recorded as an input of the
 * run, turned into keys, then a layout built over them; and they time with
 * the same monotonic clock (wall time in ns, as a double for the ratios).
 */
#ifndef XP_SETUP_H
#define XP_SETUP_H

#include <stddef.h>
#include <time.h>

#include "../../base/buf.h"
#include "../../base/err.h"
#include "../../tok/tokenizer.h"
#include "../../trie/trie.h"
#include "driver.h"

/* The monotonic clock in ns: wall time that no clock adjustment moves. */
static inline double xp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Resolves the row's vocabulary field (a manifest name or a path) into
 * path and records it as the run's "vocabulary" input, so its checksum
 * lands in the run.  Errors name the field or the spec. */
int xp_row_vocab(const xp_row_t *row, xp_env_t *env, char *path, size_t size,
                 tb_err_t *err);

/* Loads the tokenizer at path and makes its keys, specials omitted (the
 * caller frees them); the ids in the vocabulary, specials included, go to
 * *vocab_size unless it is NULL. */
int xp_vocab_keys(const char *path, trie_keys_t *keys, size_t *vocab_size, tb_err_t *err);

/* xp_row_vocab, then xp_vocab_keys. */
int xp_row_keys(const xp_row_t *row, xp_env_t *env, trie_keys_t *keys, size_t *vocab_size,
                tb_err_t *err);

/* trie_build, its wall time in *ns (failed or not). */
trie_t *xp_build_timed(const trie_layout_t *layout, const trie_keys_t *keys, double *ns,
                       tb_err_t *err);

/* The tokenizer of SPEC (a manifest name or a path) into *tok, its keys
 * (specials omitted) into keys, and the trie of layout `name` over them.
 * The caller frees all three, also on failure (they start zeroed). */
trie_t *xp_load_trie(const char *spec, const char *name, trie_keys_t *keys,
                     tok_tokenizer_t **tok, tb_err_t *err);

/* Runs argv (a reference program) with stdin from the file `in`, its
 * stdout captured into out (NUL-ended), its stderr discarded; *seconds:
 * its wall time.  The child inherits the run's CPU pinning.  Fails naming
 * argv[0] unless it exits 0. */
int xp_run_capture(char *const argv[], const char *in, tb_buf_t *out, double *seconds,
                   tb_err_t *err);

/* This process's resident memory now, in KiB (the second field of
 * /proc/self/statm; 0 if unknown). */
double xp_rss_kb(void);

/* This process's peak resident memory in KiB (VmHWM), and its reset to
 * the resident set now (Linux 4.0's clear_refs 5), so that a case or a
 * forked child measures its own peak rather than one inherited from
 * earlier work: xp_peak_rss_reset returns -1 where it cannot, and the peak
 * then includes the earlier. */
double xp_peak_rss_kb(void);
int xp_peak_rss_reset(void);

#endif
