/*
 * larkfiles: Lark's own grammar files against Lark 1.1.5 (Debian's
 * python3-lark, run live by scripts/ref/lark_check.py with Earley and the
 * dynamic_complete lexer): the grammars Lark ships (lark/grammars) and its
 * examples (python-lark-doc), with four files of ours beside them.  Each
 * file either loads here or is refused with the construct named (and then
 * Lark must refuse it too); a loaded one has strings judged by the grammar
 * automaton here and by Lark, and each verdict must be Lark's but for the
 * causes of xp_lark_cause (docs/grammars.md, "Lark itself as the
 * reference").
 *
 * Where the strings come from is the caller's: tests/test_lark.c takes
 * sentences of its generator (tests/grammar_gen.h, which shares no code
 * with the lexer), the larkfiles driver (drv_larkfiles.c) walks of the
 * automaton (xp_lark_walk); both add one-byte mutants and Lark's sample
 * texts.
 */
#ifndef XP_LARKFILES_H
#define XP_LARKFILES_H

#include <stddef.h>
#include <stdint.h>

#include "../../base/buf.h"
#include "../../base/err.h"
#include "../../grammar/gram.h"

/* A file (an absolute path, or one under the checkout's root), its start
 * rule, what refuses it here (NULL: it loads), and a text of Lark's
 * examples to judge with mutants of it (NULL: none). */
typedef struct {
    const char *path, *start, *refused, *sample;
} xp_lark_file_t;

extern const xp_lark_file_t xp_lark_files[];
extern const size_t xp_lark_nfiles;

/* Loads the Lark file at path with rule start as Lark reads it, under
 * Lark's semantics (GR_SEM_LARK: %ignore greedy, as with Lark's lexers). */
int xp_lark_load(gr_cfg_t *cfg, const char *path, const char *start, tb_err_t *err);

/* Where python3-lark and Lark's example files are: 1, else 0. */
int xp_lark_available(void);

/* The cause for which the verdict of file path on s[0..n) may differ from
 * Lark's, or NULL: a cause holds for some files, on strings that hold
 * what it needs (a comment, a character outside ASCII). */
const char *xp_lark_cause(const char *path, const uint8_t *s, size_t n);

/* A one-byte change of text drawn from *rng (a nonzero xorshift state): a
 * byte dropped, doubled or replaced by one of the text's own, so that the
 * mutant stays near the language.  -1 out of memory. */
int xp_lark_mutate(tb_buf_t *text, uint64_t *rng);

/* A random string of g from its start: bytes drawn among those g allows,
 * up to about max_len of them, then the shortest way to a sentence from
 * there (breadth-first, at most 20000 states looked at).  1 when no end
 * was found (out holds the walk), 0 with a sentence in out, -1 with err. */
int xp_lark_walk(gr_gram_t *g, uint64_t *rng, size_t max_len, tb_buf_t *out,
                 tb_err_t *err);

/* Lark's verdicts on texts[0..n) of the grammar at path with start (1 a
 * sentence) into want; root the checkout (scripts/ref/lark_check.py).
 * Lark refusing the grammar is an error naming its message. */
int xp_lark_verdicts(const char *root, const char *path, const char *start,
                     const tb_buf_t *texts, size_t n, int *want, tb_err_t *err);

/* Whether Lark refuses the grammar at path with start: 1 with its message
 * in msg, 0 if it loads it, -1 with err if Lark could not be run. */
int xp_lark_refuses(const char *root, const char *path, const char *start, char *msg,
                    size_t size, tb_err_t *err);

/* The verdicts here against Lark's. */
typedef struct {
    size_t strings, sentences; /* judged; sentences here */
    size_t caused;             /* differing, each for a cause of xp_lark_cause */
    const char *cause;         /* the first of those causes */
    size_t differ;             /* differing for no known cause */
    char first[320];           /* the first of those, quoted, with both verdicts */
} xp_lark_judged_t;

/* Judges texts[0..n) by g (the grammar of file path) against want into
 * *out.  -1 with err when g fails (gr_gram_error). */
int xp_lark_judge(gr_gram_t *g, const char *path, const tb_buf_t *texts, size_t n,
                  const int *want, xp_lark_judged_t *out, tb_err_t *err);

#endif
