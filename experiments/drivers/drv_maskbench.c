/*
 * drv_maskbench: the MaskBench workload (../shared/maskbench/README.md):
 * JSON Schemas compiled to grammars (grammar/schema.h), their test
 * instances tokenized with Llama 3 and fed token by token with a mask
 * before every token, as the benchmark's runner measures an engine.
 *
 * Row: vocabulary (llama3), layout (dfs), pattern = the data directory of
 * schema files, options:
 *   every=N     every Nth file in sorted order (the 10th, 20th, ...);
 *   limit=N     at most N of those (the selection; under `tokbench run
 *               --shard K/N` the case runs the schemas of the selection
 *               whose index i has i mod N == K - 1: driver.h);
 *   workers=N   schemas in parallel (default: the online cores), each mask
 *               single-threaded;
 *   timeout=S   seconds per schema (default 900, the benchmark's 15 min);
 *   compact     no whitespace between JSON tokens (the default is JSON's);
 *   format=annotation  `format` constrains nothing (JSON Schema 2019-09
 *               and 2020-12's default; the default here, format=assertion,
 *               asserts each format: grammar/schema.h);
 *   strict_oneof  a oneOf whose branches may overlap is a compile error
 *               (the default reads it as anyOf, as the protocol
 *               says: an instance matching two branches is accepted);
 *   verbose     a line per schema on stderr (outcome, TTFM, slowest mask,
 *               the reason);
 *   noslicer    masks walk the whole trie (the default takes the JSON
 *               string slices of lexer/slicer.h whole where subsumed);
 *   maskcache=MB  masks kept per grammar state, at most MB megabytes per
 *               schema (grammar/maskcache.h; default 64, 0: every mask is
 *               walked); its hits, misses, flushes and bytes are stored;
 *   xgrammar=N  also runs XGrammar (scripts/ref/xgrammar.js maskbench under
 *               node: anyWhitespace on, strictMode off) on every Nth of the
 *               selected schemas, after tokbench's, one at a time (under
 *               --shard, each shard on those of the sample it holds);
 *   xgtimeout=S XGrammar's limit per schema (default 60 s: its compile
 *               alone can take tens of seconds);
 *   xgmasks=N   then compares XGrammar's masks with tokbench's token by
 *               token on the first N schemas of XGrammar's sample that
 *               tokbench compiles (of each shard's share, under --shard),
 *               first instance each: one outcome row per
 *               schema (impl "xgrammar masks": same, explained or
 *               unexplained differences, by cause; refs/xgdiff.h), every
 *               point where they differ listed on stderr;
 *   llguidance=N, llgtimeout=S, llgmasks=N  the same for llguidance
 *               (scripts/ref/llguidance, `make llguidance-ref`), fed the
 *               token ids tokbench's tokenizer gives; impl "llguidance" and
 *               "llguidance masks" (mb_refs.c).
 * Per schema, TTFM is compile + grammar set-up + the first mask; every later
 * mask is a TBM sample.  Both are taken as wall time (what the benchmark
 * publishes) and as the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), which
 * a shared machine's preemptions do not inflate: each pair is stored.  The
 * wall time leaves out the CPU clock's reads, and the CPU time has their
 * least cost taken off (start_times).  A valid instance passes when every
 * token is in its mask and the end is accepting; an invalid one when some
 * token is refused or the end is not accepting.  A schema that allows no
 * value (GR_SCHEMA_EMPTY) is no compile error: its first mask is empty
 * (TTFM is its compile time) and each instance passes if it is invalid.
 * The instances share the grammar and its lazily built tables, as an
 * engine's sequences do; where its lexer holds more than half the states
 * its limit allows, the tables are dropped before the next instance
 * (gr_gram_reset), whose masks then start cold.  The schema's outcome: passing, compile
 * error (with the compiler's reason), validation error (a valid instance
 * failed: the instance and token), invalidation error (an invalid instance
 * was accepted), timeout, crash (a worker that died, or a mask the engine
 * could not compute, such as a lexer past its state limit: the message is
 * the detail; the published table has no other row for either).  A crash
 * fails the case once every outcome is stored, so the run exits non-zero.
 *
 * Schemas run in worker processes (forked from the loaded tokenizer, trie
 * and slicer, so they share them; not pinned to the runner's CPU), one
 * schema at a time each, as the benchmark's runner runs an engine: a
 * worker takes schema indices from its pipe, runs each under an alarm for
 * the timeout, writes the results to a file and says so on a pipe shared
 * by the workers.  A worker that dies (a crash, or the alarm: a timeout)
 * ends that schema only: the parent records it and starts another worker.
 * The parent stores TTFM and TBM samples as measurements (wallclock, us) and one outcome row per schema
 * (xp_env_outcome).  No counter passes: the driver has no rep.
 *
 * The reference engines' figures and outcomes are stored the same way
 * under their impl names (mb_refs.c): XGrammar's TTFM as wall and process
 * CPU time, its TBM as wall time only (its samples also time the first
 * mask of every instance: it builds a matcher per instance; its
 * tokenization is Hugging Face's); llguidance's TTFM and TBM as wall and
 * thread CPU time, measured as here.  Where an engine cannot run (no node,
 * no build), the case goes on without it and its note says why.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../base/utf8.h"
#include "../../grammar/load.h"
#include "../../grammar/match.h"
#include "../../grammar/schema.h"
#include "../../tok/tokenizer.h"
#include "driver.h"
#include "maskbench.h"
#include "pyjson.h"
#include "../cli/cli.h"
#include "setup.h"


static void mb_teardown(void *state)
{
    mb_t *s = state;
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->files[i]);
    free(s->files);
    free(s->pos);
    lex_slicer_free(s->slicer);
    trie_free(s->trie);
    trie_keys_free(&s->keys);
    tok_free(s->tok);
    if (s->tmpdir[0])
        rmdir(s->tmpdir);
    free(s);
}

int mb_list_files(mb_t *s, const char *dir, unsigned every, unsigned limit,
                      const xp_env_t *env, tb_err_t *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return tb_fail(err, "MaskBench data directory '%s': %s (the data comes from "
                       "../shared/maskbench/data; see README)", dir, strerror(errno));
    TB_VEC(char *) all = {0};
    int rc = 0;
    for (struct dirent *e; !rc && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json"))
            continue;
        char *p = malloc(strlen(dir) + len + 2);
        if (!p || tb_vec_push(&all, p)) {
            free(p);
            rc = tb_fail(err, "out of memory");
            break;
        }
        sprintf(p, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (!rc && all.len == 0)
        rc = tb_fail(err, "MaskBench data directory '%s' holds no .json file", dir);
    if (!rc) {
        qsort(all.data, all.len, sizeof *all.data, tb_cmp_strs);
        s->files = calloc(all.len, sizeof *s->files);
        s->pos = calloc(all.len, sizeof *s->pos);
        if (!s->files || !s->pos)
            rc = tb_fail(err, "out of memory");
    }
    size_t selected = 0;
    for (size_t i = 0; i < all.len; i++) {
        int pick = !rc && (i + 1) % every == 0 && (!limit || selected < limit);
        selected += pick;
        if (pick && (!env->shards || (selected - 1) % env->shards == env->shard - 1)) {
            s->pos[s->n] = selected - 1;
            s->files[s->n++] = all.data[i];
        } else {
            free(all.data[i]);
        }
    }
    free(all.data);
    return rc;
}

/* A reference engine's options (mb_ref_options names them): its sample
 * (default none), its limit per schema (default 60 s: XGrammar's compile
 * alone can take tens of seconds), and the schemas of that sample whose
 * masks are compared. */
static int ref_options(const xp_row_t *row, mb_ref_id_t r, mb_ref_opts_t *o, tb_err_t *err)
{
    const char *every, *timeout, *masks;
    mb_ref_options(r, &every, &timeout, &masks);
    uint64_t e = 0, t = 0, m = 0;
    if (xp_row_uint(row, every, 0, 0, UINT_MAX, &e, err) ||
        xp_row_uint(row, timeout, 60, 1, UINT_MAX, &t, err) ||
        xp_row_uint(row, masks, 0, 0, UINT_MAX, &m, err))
        return -1;
    if (m && !e)
        return tb_fail(err, "option %s=N compares masks on the sample of %s=N: it wants %s=N",
                       masks, every, every);
    *o = (mb_ref_opts_t){(unsigned)e, (unsigned)t, (unsigned)m};
    return 0;
}

static int mb_setup(const xp_row_t *row, xp_env_t *env, void **state, tb_err_t *err)
{
    prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
    mb_t *s = calloc(1, sizeof *s);
    if (!s)
        return tb_fail(err, "out of memory");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t every = 0, workers = 0, timeout = 0, limit = 0, cache_mb = 0; /* clang cannot see
                                                                           * that rc != 0
                                                                           * leaves them unread */
    int rc = xp_row_uint(row, "every", 1, 1, UINT_MAX, &every, err) ||
             xp_row_uint(row, "workers", cores > 0 ? (uint64_t)cores : 1, 1, 1024, &workers,
                         err) ||
             xp_row_uint(row, "timeout", 900, 1, UINT_MAX, &timeout, err) ||
             xp_row_uint(row, "limit", 0, 0, UINT_MAX, &limit, err) ||
             xp_row_uint(row, "maskcache", 64, 0, 1u << 20, &cache_mb, err) ? -1 : 0;
    s->cache_bytes = (size_t)cache_mb << 20;
    for (int r = 0; !rc && r < MB_REFS; r++)
        rc = ref_options(row, (mb_ref_id_t)r, &s->ref[r], err);
    s->workers = (unsigned)workers, s->timeout = (unsigned)timeout;
    s->cpu_over = -1;
    char buf[8];
    s->compact = xp_row_option(row, "compact", buf, sizeof buf) != NULL;
    s->strict_oneof = xp_row_option(row, "strict_oneof", buf, sizeof buf) != NULL;
    s->verbose = xp_row_option(row, "verbose", buf, sizeof buf) != NULL;
    char fmt[16] = "";
    const char *fv = xp_row_option(row, "format", fmt, sizeof fmt);
    s->format_annotation = fv && !strcmp(fv, "annotation");
    const trie_layout_t *layout = trie_layout_find(row->layout[0] ? row->layout : "dfs");
    if (!rc && !layout)
        rc = tb_fail(err, "field 'layout': no trie layout '%s'", row->layout);
    if (!rc && fv && !s->format_annotation && strcmp(fv, "assertion"))
        rc = tb_fail(err, "option format=%s: annotation or assertion", fv);
    if (!rc)
        rc = mb_list_files(s, row->pattern, (unsigned)every, (unsigned)limit, env, err);
    if (!rc)
        rc = xp_row_vocab(row, env, s->vocab, sizeof s->vocab, err);
    if (!rc && !(s->tok = tok_load(s->vocab, err)))
        rc = -1;
    if (!rc && trie_keys_from_vocab(&s->keys, tok_vocab(s->tok), TRIE_SPECIALS_OMIT, err))
        rc = -1;
    if (!rc && (!(s->trie = trie_build(layout, &s->keys, err)) ||
                trie_prepare_walk(s->trie, err)))
        rc = -1;
    if (!rc && !xp_row_option(row, "noslicer", buf, sizeof buf) &&
        !(s->slicer = lex_slicer_new(&s->keys, layout, NULL, 0, err)))
        rc = -1;
    snprintf(s->tmpdir, sizeof s->tmpdir, "/tmp/tokbench-maskbench.XXXXXX");
    if (!rc && !mkdtemp(s->tmpdir)) {
        s->tmpdir[0] = 0;
        rc = tb_fail(err, "a scratch directory in /tmp: %s", strerror(errno));
    }
    if (rc)
        mb_teardown(s);
    else
        *state = s;
    return rc;
}

/* ---- one schema, in the child ------------------------------------------------- */

static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* A timed region reads the thread's CPU clock, then the wall clock, and
 * ends in the reverse order, so that the wall time leaves out both reads of
 * the CPU clock: a system call, 1.7 us on a bhyve guest (the wall clock 30
 * ns) against a TBM p50 near 10 us.  The CPU time still holds part of
 * those reads: the least an empty region measures (cpu_ns_overhead, taken
 * at set-up) is taken off it. */
static void start_times(double *w0, double *c0)
{
    *c0 = cpu_ns();
    *w0 = xp_now_ns();
}

static double cpu_ns_overhead(void)
{
    double least = 0;
    for (int i = 0; i < 101; i++) {
        double w0, c0, c;
        start_times(&w0, &c0);
        c = cpu_ns() - c0;
        least = i == 0 || c < least ? c : least;
    }
    return least;
}

/* "wall:cpu" in us since (w0, c0), the CPU time less cpu_over ns. */
static void put_times(FILE *out, const char *sep, double w0, double c0, double cpu_over)
{
    double w = xp_now_ns(), c = cpu_ns() - c0 - cpu_over;
    fprintf(out, "%s%.3f:%.3f", sep, (w - w0) / 1e3, (c > 0 ? c : 0) / 1e3);
}

/* One instance through the matcher from the start: masks timed into out as
 * "tbm" values, unless skip_first (the first mask was TTFM's). */
static int run_instance(gr_matcher_t *m, const trie_t *trie, tb_bitset_t *mask,
                        const tok_vocab_t *v, const tok_ids_t *ids, int skip_first,
                        double cpu_over, FILE *out, size_t *refused, int *accepting,
                        tb_err_t *err)
{
    gr_matcher_rollback(m, gr_matcher_tokens(m));
    *refused = ids->len;
    fputs("tbm", out);
    for (size_t i = 0; i < ids->len; i++) {
        if (!(i == 0 && skip_first)) {
            double w0, c0;
            start_times(&w0, &c0);
            if (gr_matcher_mask(m, trie, mask, NULL, err))
                return -1;
            put_times(out, " ", w0, c0, cpu_over);
        }
        size_t len, at;
        const uint8_t *b = tok_vocab_token(v, ids->data[i], &len);
        int allowed = tb_bitset_get(mask, ids->data[i]);
        int r = gr_matcher_consume(m, b, len, &at, err);
        if (r < 0)
            return -1;
        if ((r == 0) != allowed)
            return tb_fail(err, "internal: token %zu (id %u) is %s by the matcher but %s "
                           "its mask", i, ids->data[i], r ? "refused" : "accepted",
                           allowed ? "in" : "not in");
        if (r) {
            *refused = i;
            break;
        }
    }
    fputc('\n', out);
    *accepting = *refused == ids->len && gr_matcher_accepting(m);
    return 0;
}

/* The text of a file's schema, as the compiler reads it; NULL without one. */
static char *schema_text(json_t *schema)
{
    char *text = schema ? json_dumps(schema, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    if (text)
        xp_py_unbig(text); /* integers beyond 64 bits as written (the compiler reads them) */
    return text;
}

/* The grammar of a parsed schema under s's options (mb_compile's). */
static gr_gram_t *compile_doc(const mb_t *s, const gr_schema_doc_t *doc, int *empty,
                              tb_err_t *err)
{
    gr_schema_opts_t opts = {.compact = s->compact, .strict_oneof = s->strict_oneof,
                             .format_annotation = s->format_annotation};
    gr_cfg_t cfg;
    gr_gram_t *g = NULL;
    *empty = 0;
    if (!gr_cfg_init(&cfg, "schema", err)) {
        int rc = gr_schema_compile_doc(&cfg, doc, &opts, err);
        *empty = rc == GR_SCHEMA_EMPTY;
        if (rc)
            gr_cfg_free(&cfg);
        else
            g = gr_gram_new(&cfg, NULL, err);
    }
    return g;
}

gr_gram_t *mb_compile(const mb_t *s, json_t *schema, int *empty, tb_err_t *err)
{
    *empty = 0;
    char *text = schema_text(schema);
    gr_schema_doc_t doc;
    gr_gram_t *g = NULL;
    if (!text)
        tb_fail(err, "the file has no \"schema\"");
    else if (!gr_schema_parse(text, strlen(text), "schema", &doc, err)) {
        g = compile_doc(s, &doc, empty, err);
        gr_schema_doc_free(&doc);
    }
    free(text);
    return g;
}

/* An instance's result line: its label, whether the verdict matched it,
 * its tokens and where the first was refused. */
static void put_inst(FILE *out, size_t k, int valid, int pass, size_t tokens, size_t refused)
{
    fprintf(out, "inst %zu %s %s %zu %zu\n", k, valid ? "valid" : "invalid",
            pass ? "pass" : "fail", tokens, refused);
}

/* A lexer past half its states (a pattern's words counted against a
 * length: product states) starts the next instance afresh, its grammar's
 * tables dropped (gr_gram_reset) and the matcher made again, rather than
 * run into its limit in the middle of that instance. */
static int restart(const mb_t *s, gr_gram_t *g, gr_matcher_t *m, tb_err_t *err)
{
    gr_maskcache_t *cache = m->cache;
    gr_matcher_free(m);
    if (gr_gram_reset(g, err) || gr_matcher_init(m, g, s->keys.max_len, err) ||
        (s->slicer && gr_matcher_use_slicer(m, s->slicer, err)))
        return -1;
    gr_matcher_use_cache(m, cache); /* it empties itself: the grammar's epoch moved */
    return 0;
}

/* Compiles the schema and runs its instances, writing the result lines:
 *   compile_error REASON | ttfm WALL:CPU
 *   tbm WALL:CPU WALL:CPU ...         (one line per instance; us)
 *   inst K valid|invalid pass|fail TOKENS REFUSED_AT
 *   error MESSAGE                     (an instance that could not run)
 *   cache HITS MISSES FLUSHES BYTES   (the mask cache, at the end) */
static int run_schema(mb_t *s, json_t *file, FILE *out, tb_err_t *err)
{
    json_t *tests = json_object_get(file, "tests");
    gr_matcher_t m = {0};
    gr_maskcache_t cache = {0};
    tb_bitset_t mask = {0};
    int rc = 0;
    if (s->cpu_over < 0) /* once per worker */
        s->cpu_over = cpu_ns_overhead();
    /* TTFM starts from the parsed schema, as MaskBench's protocol times
     * llguidance (TopLevelGrammar::from_json_schema of a JSON value): the
     * file's JSON is read here before the clock starts. */
    char *text = schema_text(json_object_get(file, "schema"));
    gr_schema_doc_t doc = {0};
    if (!text || gr_schema_parse(text, strlen(text), "schema", &doc, err)) {
        fprintf(out, "compile_error %s\n", text ? err->msg : "the file has no \"schema\"");
        free(text);
        return 0;
    }
    double w0, c0;
    start_times(&w0, &c0);
    int empty;
    gr_gram_t *g = compile_doc(s, &doc, &empty, err);
    if (!g && empty) {
        /* the first mask is empty, and every instance must be invalid */
        put_times(out, "ttfm ", w0, c0, s->cpu_over);
        fputc('\n', out);
        size_t k;
        json_t *t;
        json_array_foreach(tests, k, t) {
            int valid = json_is_true(json_object_get(t, "valid"));
            put_inst(out, k, valid, !valid, 0, 0);
        }
        goto out;
    }
    if (!g) {
        fprintf(out, "compile_error %s\n", err->msg);
        goto out;
    }
    if (gr_matcher_init(&m, g, s->keys.max_len, err) ||
        (s->slicer && gr_matcher_use_slicer(&m, s->slicer, err)) ||
        tb_bitset_init(&mask, trie_mask_bits(s->trie))) {
        fprintf(out, "error %s\n", err->msg);
        goto out;
    }
    if (s->cache_bytes) {
        gr_maskcache_init(&cache, g, mask.nbits, s->cache_bytes);
        gr_matcher_use_cache(&m, &cache);
    }
    if (gr_matcher_mask(&m, s->trie, &mask, NULL, err)) {
        fprintf(out, "error %s\n", err->msg);
        goto out;
    }
    put_times(out, "ttfm ", w0, c0, s->cpu_over);
    fputc('\n', out);
    size_t k;
    json_t *t;
    json_array_foreach(tests, k, t) {
        tb_buf_t b = {0};
        tok_ids_t ids = {0};
        size_t refused = 0;
        int accepting = 0, valid = json_is_true(json_object_get(t, "valid"));
        if (k > 0 && gr_gram_lexer_half_full(g) && restart(s, g, &m, err)) {
            fprintf(out, "error %s\n", err->msg);
            break;
        }
        if (xp_py_dumps(json_object_get(t, "data"), &b) ||
            tok_encode(s->tok, b.data, b.len, &ids, err) ||
            run_instance(&m, s->trie, &mask, tok_vocab(s->tok), &ids, k == 0, s->cpu_over, out,
                         &refused, &accepting, err))
            fprintf(out, "\nerror instance %zu: %s\n", k, err->msg);
        else
            put_inst(out, k, valid, accepting == valid, ids.len, refused);
        tb_buf_free(&b);
        free(ids.data);
    }
    fprintf(out, "cache %llu %llu %llu %zu\n", (unsigned long long)cache.stats.hits,
            (unsigned long long)cache.stats.misses, (unsigned long long)cache.stats.flushes,
            gr_maskcache_bytes(&cache));
out:
    gr_maskcache_free(&cache);
    tb_bitset_free(&mask);
    gr_matcher_free(&m);
    gr_gram_free(g);
    gr_schema_doc_free(&doc);
    free(text);
    return rc;
}

/* The runner pins itself to one CPU; a worker may run on any, so that
 * `workers` schemas run on as many cores rather than share one. */
static void unpin(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < n && c < CPU_SETSIZE; c++)
        CPU_SET(c, &set);
    sched_setaffinity(0, sizeof set, &set);
}

/* One schema: its result file, written under the alarm. */
static void one_schema(mb_t *s, size_t i)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%zu", s->tmpdir, i);
    FILE *out = fopen(path, "w");
    if (!out)
        _exit(3);
    json_error_t je;
    json_t *file = xp_py_load_file(s->files[i], &je);
    tb_err_t err = {{0}};
    if (!file)
        fprintf(out, "compile_error %s:%d:%d: %s\n", s->files[i], je.line, je.column,
                je.text);
    else
        run_schema(s, file, out, &err);
    json_decref(file);
    fclose(out);
}

/* What a worker says when a schema is done (one write: atomic on a pipe). */
typedef struct {
    uint64_t worker, schema;
} mb_done_t;

/* A worker: schema indices from cmd until it closes, "done" on done_fd. */
static void worker(mb_t *s, unsigned w, int cmd, int done_fd)
{
    unpin();
    uint64_t i;
    while (read(cmd, &i, sizeof i) == (ssize_t)sizeof i) {
        alarm(s->timeout);
        one_schema(s, (size_t)i);
        alarm(0);
        mb_done_t d = {w, i};
        if (write(done_fd, &d, sizeof d) != (ssize_t)sizeof d)
            _exit(4);
    }
    _exit(0);
}

/* ---- the parent --------------------------------------------------------------- */


/* Reads "WALL:CPU" at *p into the two vectors; 0, 1 at the end, -1 on
 * memory. */
static int read_pair(char **p, mb_times_t *wall, mb_times_t *cpu, double *w)
{
    char *e;
    *w = strtod(*p, &e);
    if (e == *p || *e != ':')
        return 1;
    double c = strtod(e + 1, p);
    return tb_vec_push(wall, *w) || tb_vec_push(cpu, c) ? -1 : 0;
}

/* Reads a child's result file into an outcome row and the sums. */
static int read_result(mb_sum_t *sum, const char *path, xp_outcome_t *o, tb_err_t *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return snprintf(o->outcome, sizeof o->outcome, "crash"), 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int compiled = 0, failed_valid = 0, failed_invalid = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        line[strcspn(line, "\n")] = 0;
        if (!strncmp(line, "compile_error ", 14)) {
            snprintf(o->outcome, sizeof o->outcome, "compile error");
            snprintf(o->detail, sizeof o->detail, "%s", line + 14);
        } else if (!strncmp(line, "ttfm ", 5)) {
            char *p = line + 5;
            compiled = 1;
            if (read_pair(&p, &sum->ttfm, &sum->ttfm_cpu, &o->ttfm_us) < 0)
                goto oom;
        } else if (!strncmp(line, "tbm", 3)) {
            double v;
            int r;
            for (char *p = line + 3; (r = read_pair(&p, &sum->tbm, &sum->tbm_cpu, &v)) == 0;) {
                o->masks++;
                o->max_us = v > o->max_us ? v : o->max_us;
            }
            if (r < 0)
                goto oom;
        } else if (!strncmp(line, "inst ", 5)) {
            size_t k = 0, tokens = 0, refused = 0;
            char kind[16] = "", verdict[8] = "";
            sscanf(line + 5, "%zu %15s %7s %zu %zu", &k, kind, verdict, &tokens, &refused);
            o->tokens += tokens;
            if (!strcmp(verdict, "fail") && !strcmp(kind, "valid") && !failed_valid++)
                snprintf(o->detail, sizeof o->detail, "instance %zu: token %zu of %zu %s", k,
                         refused, tokens, refused < tokens ? "refused" : "(end not accepting)");
            if (!strcmp(verdict, "fail") && !strcmp(kind, "invalid") && !failed_invalid++ &&
                !failed_valid)
                snprintf(o->detail, sizeof o->detail, "instance %zu accepted", k);
        } else if (!strncmp(line, "cache ", 6)) {
            double v[4] = {0, 0, 0, 0};
            sscanf(line + 6, "%lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3]);
            for (int i = 0; i < 3; i++)
                sum->cache[i] += v[i];
            sum->cache[3] = v[3] > sum->cache[3] ? v[3] : sum->cache[3];
        } else if (!strncmp(line, "error ", 6) && !o->detail[0]) {
            snprintf(o->outcome, sizeof o->outcome, "crash");
            snprintf(o->detail, sizeof o->detail, "%s", line + 6);
        }
    }
    free(line);
    fclose(f);
    if (!o->outcome[0] && compiled)
        snprintf(o->outcome, sizeof o->outcome, "%s", failed_valid ? "validation error"
                 : failed_invalid ? "invalidation error" : "passing");
    else if (!o->outcome[0])
        snprintf(o->outcome, sizeof o->outcome, "crash");
    return 0;
oom:
    free(line);
    fclose(f);
    return tb_fail(err, "out of memory");
}

void mb_count(mb_sum_t *sum, const char *outcome)
{
    sum->schemas++;
    sum->passing += !strcmp(outcome, "passing");
    sum->compile += !strcmp(outcome, "compile error");
    sum->validation += !strcmp(outcome, "validation error");
    sum->invalidation += !strcmp(outcome, "invalidation error");
    sum->timeout += !strcmp(outcome, "timeout");
    sum->crash += !strcmp(outcome, "crash");
}

/* What the child of schema i left, as its outcome row. */
static int finish(mb_t *s, mb_sum_t *sum, size_t i, int status, xp_env_t *env, tb_err_t *err)
{
    xp_outcome_t o = {0};
    const char *base = strrchr(s->files[i], '/');
    snprintf(o.item, sizeof o.item, "%s", base ? base + 1 : s->files[i]);
    char path[128];
    snprintf(path, sizeof path, "%s/%zu", s->tmpdir, i);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
        snprintf(o.outcome, sizeof o.outcome, "timeout");
        snprintf(o.detail, sizeof o.detail, "more than %u s", s->timeout);
    } else if (WIFSIGNALED(status)) {
        snprintf(o.outcome, sizeof o.outcome, "crash");
        snprintf(o.detail, sizeof o.detail, "signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    } else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
        snprintf(o.outcome, sizeof o.outcome, "crash");
        snprintf(o.detail, sizeof o.detail, "exit status %d", WEXITSTATUS(status));
    } else if (read_result(sum, path, &o, err)) {
        return -1;
    }
    unlink(path);
    mb_count(sum, o.outcome);
    if (s->verbose)
        fprintf(stderr, "maskbench: %s: %s; ttfm %.0f us, %llu masks, slowest %.0f us%s%s\n",
                o.item, o.outcome, o.ttfm_us, (unsigned long long)o.masks, o.max_us,
                o.detail[0] ? "; " : "", o.detail);
    return xp_env_outcome(env, &o, err);
}

void mb_progress(size_t n, const mb_sum_t *sum, int last)
{
    if (!last && sum->schemas % 50)
        return;
    fprintf(stderr, "maskbench: %zu/%zu schemas: %zu passing, %zu compile errors, %zu "
            "validation, %zu invalidation, %zu timeouts, %zu crashes\n", sum->schemas, n,
            sum->passing, sum->compile, sum->validation, sum->invalidation, sum->timeout,
            sum->crash);
}

/* A worker process and the schema it runs (SIZE_MAX: none). */
typedef struct {
    pid_t pid;
    int cmd;
    size_t schema;
} mb_worker_t;

static int spawn(mb_t *s, mb_worker_t *wk, unsigned w, int done[2], tb_err_t *err)
{
    int cmd[2];
    if (pipe(cmd))
        return tb_fail(err, "pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t p = fork();
    if (p == 0) {
        close(cmd[1]);
        close(done[0]);
        worker(s, w, cmd[0], done[1]);
    }
    close(cmd[0]);
    if (p < 0) {
        close(cmd[1]);
        return tb_fail(err, "fork: %s", strerror(errno));
    }
    wk[w] = (mb_worker_t){.pid = p, .cmd = cmd[1], .schema = SIZE_MAX};
    return 0;
}

/* Gives worker w the next schema, or closes its pipe when there is none. */
static void assign(mb_t *s, mb_worker_t *wk, size_t *next, xp_env_t *env)
{
    if (*next < s->n && !(env->stop && *env->stop)) {
        uint64_t i = *next;
        if (write(wk->cmd, &i, sizeof i) == (ssize_t)sizeof i) {
            wk->schema = (*next)++;
            return;
        }
    }
    if (wk->cmd >= 0)
        close(wk->cmd);
    wk->cmd = -1;
}

/* Reaps dead workers: the schema one was running failed with its status;
 * a replacement takes the next schema. */
static int reap(mb_t *s, mb_sum_t *sum, mb_worker_t *wk, int done[2], size_t *next,
                size_t *alive, xp_env_t *env, tb_err_t *err)
{
    int status;
    pid_t p;
    while ((p = waitpid(-1, &status, WNOHANG)) > 0) {
        for (unsigned w = 0; w < s->workers; w++) {
            if (wk[w].pid != p)
                continue;
            size_t i = wk[w].schema;
            if (wk[w].cmd >= 0)
                close(wk[w].cmd);
            wk[w] = (mb_worker_t){.cmd = -1, .schema = SIZE_MAX};
            (*alive)--;
            if (i == SIZE_MAX)
                continue;
            if (finish(s, sum, i, status, env, err))
                return -1;
            mb_progress(s->n, sum, 0);
            if (*next < s->n && !(env->stop && *env->stop)) {
                if (spawn(s, wk, w, done, err))
                    return -1;
                (*alive)++;
                assign(s, &wk[w], next, env);
            }
        }
    }
    return 0;
}

/* Runs every schema on the workers. */
static int run_all(mb_t *s, mb_sum_t *sum, xp_env_t *env, tb_err_t *err)
{
    mb_worker_t *wk = calloc(s->workers, sizeof *wk);
    int done[2];
    if (!wk)
        return tb_fail(err, "out of memory");
    if (pipe(done)) {
        free(wk);
        return tb_fail(err, "pipe: %s", strerror(errno));
    }
    size_t next = 0, alive = 0;
    int rc = 0;
    for (unsigned w = 0; !rc && w < s->workers && w < s->n; w++) {
        rc = spawn(s, wk, w, done, err);
        alive += !rc;
        if (!rc)
            assign(s, &wk[w], &next, env);
    }
    /* A worker that died leaves its pipe closed: writing to it must fail,
     * not end this process. */
    void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
    fcntl(done[0], F_SETFL, O_NONBLOCK);
    while (!rc && alive) {
        struct pollfd pfd = {.fd = done[0], .events = POLLIN};
        poll(&pfd, 1, 100);
        /* Every schema reported done first, then the dead: a worker that
         * died after reporting one has not lost it. */
        mb_done_t d;
        while (!rc && read(done[0], &d, sizeof d) == (ssize_t)sizeof d) {
            if (d.worker >= s->workers || wk[d.worker].schema != d.schema)
                continue;
            wk[d.worker].schema = SIZE_MAX;
            rc = finish(s, sum, (size_t)d.schema, 0, env, err);
            mb_progress(s->n, sum, 0);
            assign(s, &wk[d.worker], &next, env);
        }
        if (!rc)
            rc = reap(s, sum, wk, done, &next, &alive, env, err);
    }
    signal(SIGPIPE, old_pipe);
    for (unsigned w = 0; w < s->workers; w++)
        if (wk[w].pid) { /* stopped early: end the workers */
            kill(wk[w].pid, SIGKILL);
            waitpid(wk[w].pid, NULL, 0);
        }
    close(done[0]);
    close(done[1]);
    free(wk);
    return rc;
}

static int record(xp_env_t *env, const char *impl, const char *metric, const double *v,
                  size_t n, tb_err_t *err)
{
    for (size_t i = 0; i < n; i++) {
        xp_meas_t m = {.rep = (unsigned)i, .value = v[i], .items = 1};
        snprintf(m.source, sizeof m.source, "wallclock");
        snprintf(m.impl, sizeof m.impl, "%s", impl);
        snprintf(m.metric, sizeof m.metric, "%s", metric);
        if (xp_env_record(env, &m, err))
            return -1;
    }
    return 0;
}

int mb_record_sum(xp_env_t *env, const char *impl, const mb_sum_t *sum, tb_err_t *err)
{
    return record(env, impl, "ttfm_us", sum->ttfm.data, sum->ttfm.len, err) ||
           record(env, impl, "ttfm_cpu_us", sum->ttfm_cpu.data, sum->ttfm_cpu.len, err) ||
           record(env, impl, "tbm_us", sum->tbm.data, sum->tbm.len, err) ||
           record(env, impl, "tbm_cpu_us", sum->tbm_cpu.data, sum->tbm_cpu.len, err) ? -1 : 0;
}

/* The mask cache's figures over the run, one measurement each. */
static int record_cache(xp_env_t *env, const mb_sum_t *sum, tb_err_t *err)
{
    static const char *const metric[4] = {"mask_cache_hits", "mask_cache_misses",
                                          "mask_cache_flushes", "mask_cache_max_bytes"};
    for (int i = 0; i < 4; i++)
        if (record(env, "tokbench", metric[i], &sum->cache[i], 1, err))
            return -1;
    return 0;
}

void mb_sum_free(mb_sum_t *sum)
{
    free(sum->tbm.data);
    free(sum->tbm_cpu.data);
    free(sum->ttfm.data);
    free(sum->ttfm_cpu.data);
}

static int mb_extra(void *state, const xp_row_t *row, xp_env_t *env, tb_err_t *err)
{
    (void)row;
    mb_t *s = state;
    mb_sum_t sum = {0};
    int rc = run_all(s, &sum, env, err);
    mb_progress(s->n, &sum, 1);
    if (!rc)
        rc = mb_record_sum(env, "tokbench", &sum, err) || record_cache(env, &sum, err);
    size_t crashes = sum.crash;
    mb_sum_free(&sum);
    for (int r = 0; !rc && r < MB_REFS; r++)
        if (s->ref[r].every && !(env->stop && *env->stop))
            rc = mb_run_ref(s, (mb_ref_id_t)r, env, err);
    /* Every outcome is stored by now; a crash of the engine under test
     * still fails the case, so that `tokbench run` exits non-zero. */
    if (!rc && crashes)
        rc = tb_fail(err, "tokbench crashed on %zu of %zu schemas (outcome 'crash': the "
                     "schema and signal or message are in its row)", crashes, s->n);
    return rc;
}

const xp_driver_t xp_driver_maskbench = {
    .name = "maskbench",
    .summary = "MaskBench: JSON Schemas compiled, instances fed token by token with a mask "
               "before each (pattern: data directory; every=N limit=N workers=N timeout=S "
               "maskcache=MB xgrammar=N xgtimeout=S xgmasks=N llguidance=N llgtimeout=S "
               "llgmasks=N)",
    .setup = mb_setup,
    .extra = mb_extra,
    .teardown = mb_teardown,
    .default_reps = 1,
    .splits = 1,
};
