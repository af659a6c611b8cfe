/*
 * maskbench: what the MaskBench driver (drv_maskbench.c: the workload and
 * tokbench's runs) and its reference engines (mb_refs.c: XGrammar and
 * llguidance run beside it, their outcomes and times stored, their masks
 * compared with tokbench's) share: the driver's state, the sums of a run
 * and the helpers both sides use.
 */
#ifndef XP_MASKBENCH_H
#define XP_MASKBENCH_H

#include <jansson.h>
#include <stddef.h>

#include "../../base/err.h"
#include "../../base/buf.h"
#include "../../grammar/gram.h"
#include "../../lexer/slicer.h"
#include "../../tok/tokenizer.h"
#include "../../trie/trie.h"
#include "driver.h"

/* The reference engines, in the order they run after tokbench. */
typedef enum { MB_XGRAMMAR, MB_LLGUIDANCE, MB_REFS } mb_ref_id_t;

/* A reference engine's options: every Nth selected schema (0: not run), its
 * limit per schema in seconds, and on how many of those schemas its masks
 * are compared with tokbench's. */
typedef struct {
    unsigned every, timeout, masks;
} mb_ref_opts_t;

typedef struct {
    char **files;
    size_t *pos; /* each file's index in the selection of every shard */
    size_t n;
    unsigned workers, timeout;
    mb_ref_opts_t ref[MB_REFS];
    size_t cache_bytes;            /* per schema; 0: no mask cache */
    double cpu_over;               /* ns the CPU clock's reads add to a region; < 0: unknown */
    int compact, strict_oneof, verbose, format_annotation;
    lex_slicer_t *slicer; /* NULL with noslicer */
    tok_tokenizer_t *tok;
    trie_keys_t keys;
    trie_t *trie;
    char tmpdir[64];
    char vocab[4096]; /* the tokenizer file, for XGrammar */
} mb_t;

typedef TB_VEC(double) mb_times_t;

/* A run's outcomes by kind and its samples (us): TBM and TTFM, wall and
 * thread CPU time (an engine that gives no CPU time leaves those empty). */
typedef struct {
    size_t schemas, passing, compile, validation, invalidation, timeout, crash;
    mb_times_t tbm, tbm_cpu, ttfm, ttfm_cpu;
    double cache[4]; /* tokbench's mask cache: hits, misses, flushes, the most bytes of a schema */
} mb_sum_t;

/* The schema files of dir into s->files, sorted, every Nth, at most limit:
 * the selection; of those, the shard's share (driver.h). */
int mb_list_files(mb_t *s, const char *dir, unsigned every, unsigned limit,
                  const xp_env_t *env, tb_err_t *err);

/* The grammar of a MaskBench file's schema under s's options; NULL with
 * err (the compile error), and *empty set when the schema allows no value
 * (GR_SCHEMA_EMPTY: no refusal, the empty language). */
gr_gram_t *mb_compile(const mb_t *s, json_t *schema, int *empty, tb_err_t *err);

/* Counts one schema's outcome (as the outcomes table spells it). */
void mb_count(mb_sum_t *sum, const char *outcome);

/* The outcome counts on stderr, every 50 schemas or when last. */
void mb_progress(size_t n, const mb_sum_t *sum, int last);

/* Stores the samples as measurements of impl (ttfm_us, ttfm_cpu_us, tbm_us,
 * tbm_cpu_us). */
int mb_record_sum(xp_env_t *env, const char *impl, const mb_sum_t *sum, tb_err_t *err);

void mb_sum_free(mb_sum_t *sum);

/* Runs reference engine `ref` on its sample of s's schemas and stores its
 * outcomes and samples (impl "xgrammar", "llguidance"); then, when its
 * masks option asks, compares its masks with tokbench's (impl "xgrammar
 * masks", "llguidance masks").  An engine that cannot run leaves the case
 * going on, env's note saying why.  -1 only on memory. */
int mb_run_ref(mb_t *s, mb_ref_id_t ref, xp_env_t *env, tb_err_t *err);

/* The option names of engine ref: its sample, limit and masks ("xgrammar",
 * "xgtimeout", "xgmasks"). */
void mb_ref_options(mb_ref_id_t ref, const char **every, const char **timeout,
                    const char **masks);

#endif
