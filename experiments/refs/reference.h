/*
 * reference: the reference programs that tokbench's ids are checked
 * against, run over a file of lines (one output line of ids per input
 * line), for `conform` and `fuzz`:
 *   tokenizer.json   scripts/ref/ref.js hf (npm @anush008/tokenizers) and
 *                    ref.js hf-official (npm tokenizers, Hugging Face's own
 *                    binding): both, every time
 *   tiktoken         ref.js tiktoken (npm tiktoken, encode_ordinary)
 *   SentencePiece    spm_encode --output_format=id (Debian sentencepiece)
 * A reference that runs past its time limit ($TOKBENCH_REF_TIMEOUT seconds,
 * default 600) is killed and reported, as is one that crashes.
 */
#ifndef XP_REFERENCE_H
#define XP_REFERENCE_H

#include <limits.h>
#include <sys/types.h>

#include "../../base/buf.h"
#include "../../base/err.h"
#include "../../tok/tokenizer.h"

typedef enum {
    XP_REF_HF,
    XP_REF_HF_OFFICIAL,
    XP_REF_TIKTOKEN,
    XP_REF_SPM,
} xp_ref_kind_t;

#define XP_REF_MAX_PER_FORMAT 2

/* A started reference program. */
typedef struct {
    xp_ref_kind_t kind;
    pid_t pid;
    const char *argv[8];
    char script[PATH_MAX];
} xp_ref_t;

/* The references of format f into out (XP_REF_MAX_PER_FORMAT room); returns
 * how many, or -1 with err for a format that has none (GGUF). */
int xp_ref_kinds(tok_format_t f, xp_ref_kind_t *out, tb_err_t *err);

/* "ref.js hf", "ref.js hf-official", "ref.js tiktoken", "spm_encode". */
const char *xp_ref_name(xp_ref_kind_t k);

/* The format of the file at path, from its first bytes as tok_load decides
 * it, so that a reference can start before the tokenizer has loaded. */
int xp_ref_guess_format(const char *path, tok_format_t *f, tb_err_t *err);

/* Starts reference k for the vocabulary at path, reading the lines of file
 * `in` and writing the ids to file `out`. */
int xp_ref_start(xp_ref_t *r, xp_ref_kind_t k, const char *path,
                 const char *in, const char *out, tb_err_t *err);

/* Waits for a started reference (killing it first when `stop`, or when it
 * runs past the time limit); fails unless it ran and exited 0. */
int xp_ref_finish(xp_ref_t *r, int stop, tb_err_t *err);

/* The time limit of a reference, in seconds: $TOKBENCH_REF_TIMEOUT, or 600. */
double xp_ref_timeout_s(void);

/* Starts and finishes: runs reference k over `in` into `out`. */
int xp_ref_run(xp_ref_kind_t k, const char *path, const char *in,
               const char *out, tb_err_t *err);

/* Reads the ids of output line `lineno` (1-based, for messages) from
 * ref->data at *at, and moves *at past it. */
int xp_ref_next_ids(const tb_buf_t *ref, size_t *at, size_t lineno,
                    tok_ids_t *ids, tb_err_t *err);

/* Do the two id lists hold the same ids? */
int xp_ref_same_ids(const tok_ids_t *a, const tok_ids_t *b);

/* A fresh temporary file name under $TMPDIR (or /tmp) from `stem`, the
 * file created empty, for the lines a reference reads. */
int xp_ref_tmpfile(const char *stem, char *path, size_t size, tb_err_t *err);

#endif
