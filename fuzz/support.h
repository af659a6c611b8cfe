/*
 * support: what the fuzz targets share.  Loaders that take a path read the
 * input from a scratch file of this process (in $TMPDIR, else /dev/shm or
 * /tmp), removed after each input.  What the commands under test print on
 * stdout is dropped by libFuzzer's -close_fd_mask=1 (scripts/fuzz.sh);
 * their messages, libFuzzer's lines and the sanitizers' reports stay.
 */
#ifndef FUZZ_SUPPORT_H
#define FUZZ_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "../grammar/cfg.h"
#include "../lexer/deriv.h"

/* The path of this process's scratch file `name` (a suffix such as ".db"),
 * in a static buffer. */
const char *fuzz_scratch_path(const char *name);

/* Writes data[0..n) to the scratch file `name` and returns its path;
 * aborts if it cannot (the machine's fault, not the input's). */
const char *fuzz_scratch(const char *name, const uint8_t *data, size_t n);

/* Removes the scratch file `name` and its SQLite side files (-wal, -shm,
 * -journal), present or not. */
void fuzz_scratch_remove(const char *name);

/* A NUL-terminated copy of data[0..n) (aborts when out of memory). */
char *fuzz_strndup(const uint8_t *data, size_t n);

/* Explores d from LEX_START breadth first (states are numbered in the
 * order they are made) for up to max_states states, stepping every byte;
 * visit (may be NULL) sees each live state.  Aborts if a state's allowed
 * bytes differ from the bytes leading to a live state.  Stops early when d
 * passes a limit (a clean failure, not a finding). */
void fuzz_dfa_explore(lex_dfa_t *d, size_t max_states,
                      void (*visit)(lex_dfa_t *d, uint32_t s, void *arg), void *arg);

/* Sets up the finished grammar g (taken over) for masks under small limits
 * and explores its automaton breadth first from the start for up to
 * max_states states, stepping every byte and asking each state whether it
 * accepts; aborts if a step from a state differs from feeding the same
 * byte again (the table must answer what the slow path computed).  A
 * grammar that passes a limit stops the exploration (a clean failure). */
void fuzz_gram_explore(gr_cfg_t *g, size_t max_states);

/* Small DFA limits, so that a pattern that explodes fails fast. */
extern const lex_dfa_opts_t fuzz_dfa_opts;

#endif
