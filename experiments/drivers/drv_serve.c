/*
 * drv_serve: grammars as a serving engine uses them.  MaskBench schemas
 * are compiled once each and shared; their valid instances, tokenized, are
 * replayed as `batch` concurrent sequences, each a matcher (with a mask
 * cache of its own) on its schema's grammar.  A round asks for the masks
 * of every sequence at once over `threads` threads (gr_masks_batch, on a
 * pool whose threads are started once for the case and woken per round),
 * as an engine does between two forward passes, then each sequence
 * consumes its next token; a sequence at its end starts the next instance.
 *
 * Row: vocab, layout (default dfs), pattern (a directory of MaskBench
 * files: ../shared/maskbench/data, or tests/maskbench's small ones when
 * that is absent), options threads=T (1), batch=B (16), masks=N (masks
 * measured, 4000), every=K and limit=S (the schemas: every Kth file, at
 * most S; 1 and 8), maskcache=M (MiB per sequence, 4; 0: none).  A file
 * whose schema does not compile or has no valid instance is passed over.
 * The replay runs once untimed, so the grammars' tables are filled (the
 * masks are then the work of a warm engine), then again with fresh
 * matchers and caches, timed, once per repetition (default 1): a shared
 * machine's noise comes in bursts, and the report takes the medians.
 * Metrics per repetition: serve_masks_s (masks per second of batch time),
 * serve_batch_p50_us and serve_batch_p99_us (a round's gr_masks_batch
 * call), items the masks computed; once, serve_peak_rss_kb (the process's
 * peak resident memory, VmHWM, reset when the case is set up after the
 * heap earlier cases freed is given back: malloc_trim, xp_peak_rss_reset).
 */
#include <malloc.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../grammar/match.h"
#include "../store/mbtable.h"
#include "maskbench.h"
#include "pyjson.h"
#include "setup.h"

typedef struct {
    size_t gram;  /* index in grams */
    tok_ids_t ids;
} seq_t;

typedef struct {
    mb_t mb; /* files, tokenizer, keys, trie */
    TB_VEC(gr_gram_t *) grams;
    TB_VEC(seq_t) seqs;
    uint64_t threads, batch, masks, cache_mb;
} serve_t;

/* One of the batch's sequences: which instance, how far, its matcher. */
typedef struct {
    size_t seq, at;
    gr_matcher_t m;
    gr_maskcache_t cache;
    tb_bitset_t mask;
} slot_t;

static void serve_teardown(void *state)
{
    serve_t *s = state;
    if (!s)
        return;
    for (size_t i = 0; i < s->grams.len; i++)
        gr_gram_free(s->grams.data[i]);
    free(s->grams.data);
    for (size_t i = 0; i < s->seqs.len; i++)
        free(s->seqs.data[i].ids.data);
    free(s->seqs.data);
    for (size_t i = 0; i < s->mb.n; i++)
        free(s->mb.files[i]);
    free(s->mb.files);
    free(s->mb.pos);
    trie_free(s->mb.trie);
    trie_keys_free(&s->mb.keys);
    tok_free(s->mb.tok);
    free(s);
}

/* File i's grammar and its valid instances as sequences; a schema that
 * does not compile, or has no valid instance, adds nothing. */
static int add_file(serve_t *s, size_t i, tb_err_t *err)
{
    json_error_t je;
    json_t *file = xp_py_load_file(s->mb.files[i], &je);
    if (!file)
        return 0;
    int empty, rc = 0;
    tb_err_t why;
    gr_gram_t *g = mb_compile(&s->mb, json_object_get(file, "schema"), &empty, &why);
    size_t before = s->seqs.len, k;
    json_t *t;
    json_array_foreach(json_object_get(file, "tests"), k, t) {
        if (!g || rc || !json_is_true(json_object_get(t, "valid")))
            continue;
        tb_buf_t b = {0};
        seq_t q = {.gram = s->grams.len};
        if (xp_py_dumps(json_object_get(t, "data"), &b))
            rc = tb_fail(err, "out of memory");
        else if (tok_encode(s->mb.tok, b.data, b.len, &q.ids, err))
            rc = tb_wrap(err, "%s: instance %zu", s->mb.files[i], k);
        else if (tb_vec_push(&s->seqs, q))
            rc = tb_fail(err, "out of memory");
        if (rc)
            free(q.ids.data);
        tb_buf_free(&b);
    }
    json_decref(file);
    if (g && s->seqs.len > before && !rc && tb_vec_push(&s->grams, g))
        rc = tb_fail(err, "out of memory");
    else if (g && (s->seqs.len == before || rc))
        gr_gram_free(g);
    return rc;
}

static int serve_setup(const xp_row_t *row, xp_env_t *env, void **state, tb_err_t *err)
{
    /* the case's peak, not the run's so far: the heap earlier cases
     * freed is given back first, so that the reset starts from less */
    malloc_trim(0);
    xp_peak_rss_reset();
    serve_t *s = calloc(1, sizeof *s);
    if (!s)
        return tb_fail(err, "out of memory");
    *state = s;
    uint64_t every = 1, limit = 8;
    if (xp_row_uint(row, "threads", 1, 1, 256, &s->threads, err) ||
        xp_row_uint(row, "batch", 16, 1, 1u << 16, &s->batch, err) ||
        xp_row_uint(row, "masks", 4000, 1, UINT32_MAX, &s->masks, err) ||
        xp_row_uint(row, "every", 1, 1, UINT32_MAX, &every, err) ||
        xp_row_uint(row, "limit", 8, 1, UINT32_MAX, &limit, err) ||
        xp_row_uint(row, "maskcache", 4, 0, 1u << 12, &s->cache_mb, err))
        return -1;
    const trie_layout_t *layout = trie_layout_find(row->layout[0] ? row->layout : "dfs");
    if (!layout)
        return tb_fail(err, "field 'layout': no trie layout '%s'", row->layout);
    if (mb_list_files(&s->mb, row->pattern, (unsigned)every, (unsigned)limit, env, err) ||
        xp_row_vocab(row, env, s->mb.vocab, sizeof s->mb.vocab, err) ||
        !(s->mb.tok = tok_load(s->mb.vocab, err)) ||
        trie_keys_from_vocab(&s->mb.keys, tok_vocab(s->mb.tok), TRIE_SPECIALS_OMIT, err) ||
        !(s->mb.trie = trie_build(layout, &s->mb.keys, err)) ||
        trie_prepare_walk(s->mb.trie, err))
        return -1;
    for (size_t i = 0; i < s->mb.n; i++)
        if (xp_env_input(env, "schema", s->mb.files[i], err) || add_file(s, i, err))
            return -1;
    if (!s->seqs.len)
        return tb_fail(err, "%s: no schema of the selection compiles with a valid instance",
                       row->pattern);
    return 0;
}

static void slot_free(slot_t *sl)
{
    gr_matcher_free(&sl->m);
    gr_maskcache_free(&sl->cache);
}

/* Slot sl starts sequence q afresh: a matcher on q's grammar. */
static int slot_start(serve_t *s, slot_t *sl, size_t q, tb_err_t *err)
{
    gr_gram_t *g = s->grams.data[s->seqs.data[q].gram];
    sl->seq = q;
    sl->at = 0;
    if (gr_matcher_init(&sl->m, g, s->mb.keys.max_len, err))
        return -1;
    if (s->cache_mb) {
        gr_maskcache_init(&sl->cache, g, sl->mask.nbits, (size_t)s->cache_mb << 20);
        gr_matcher_use_cache(&sl->m, &sl->cache);
    }
    return 0;
}

/* One replay of s->masks masks (rounded up to whole rounds); each round's
 * batch time into lat (ns) when lat is not NULL. */
static int replay(serve_t *s, tb_pool_t *pool, mb_times_t *lat, tb_err_t *err)
{
    size_t b = s->batch, next = 0, done = 0;
    slot_t *sl = calloc(b, sizeof *sl);
    gr_matcher_t **mp = calloc(b, sizeof *mp);
    tb_bitset_t **maskp = calloc(b, sizeof *maskp);
    int rc = !sl || !mp || !maskp ? tb_fail(err, "out of memory") : 0;
    for (size_t i = 0; !rc && i < b; i++) {
        if (tb_bitset_init(&sl[i].mask, trie_mask_bits(s->mb.trie)))
            rc = tb_fail(err, "out of memory");
        else
            rc = slot_start(s, &sl[i], next++ % s->seqs.len, err);
        mp[i] = &sl[i].m;
        maskp[i] = &sl[i].mask;
    }
    const tok_vocab_t *v = tok_vocab(s->mb.tok);
    while (!rc && done < s->masks) {
        double t0 = xp_now_ns();
        rc = gr_masks_batch(mp, b, s->mb.trie, maskp, NULL, pool, err);
        double ns = xp_now_ns() - t0;
        if (!rc && lat && tb_vec_push(lat, ns))
            rc = tb_fail(err, "out of memory");
        done += b;
        for (size_t i = 0; !rc && i < b; i++) {
            const tok_ids_t *ids = &s->seqs.data[sl[i].seq].ids;
            size_t len;
            const uint8_t *tok = sl[i].at < ids->len
                                     ? tok_vocab_token(v, ids->data[sl[i].at], &len)
                                     : NULL;
            /* an instance at its end, or refused where the validators
             * and the grammar differ: the slot takes the next one */
            int r = tok ? gr_matcher_consume(&sl[i].m, tok, len, NULL, err) : 1;
            if (r < 0)
                rc = -1;
            else if (r == 0)
                sl[i].at++;
            else {
                slot_free(&sl[i]);
                rc = slot_start(s, &sl[i], next++ % s->seqs.len, err);
            }
        }
    }
    for (size_t i = 0; sl && i < b; i++) {
        slot_free(&sl[i]);
        tb_bitset_free(&sl[i].mask);
    }
    free(sl);
    free(mp);
    free(maskp);
    return rc;
}

static int record(xp_env_t *env, const char *metric, unsigned rep, double v, uint64_t masks,
                  tb_err_t *err)
{
    xp_meas_t m = {.rep = rep, .value = v, .items = masks};
    snprintf(m.source, sizeof m.source, "wallclock");
    snprintf(m.impl, sizeof m.impl, "tokbench");
    snprintf(m.metric, sizeof m.metric, "%s", metric);
    return xp_env_record(env, &m, err);
}

/* One timed replay's figures from its rounds' latencies (sorted here). */
static int record_rep(xp_env_t *env, const serve_t *s, unsigned rep, mb_times_t *lat,
                      tb_err_t *err)
{
    double total = 0;
    for (size_t i = 0; i < lat->len; i++)
        total += lat->data[i];
    qsort(lat->data, lat->len, sizeof *lat->data, tb_cmp_doubles);
    xp_samples_t sorted = {lat->data, lat->len};
    uint64_t masks = lat->len * s->batch;
    return record(env, "serve_masks_s", rep, (double)masks / (total / 1e9), masks, err) ||
                   record(env, "serve_batch_p50_us", rep, xp_mb_quantile(&sorted, 0.5) / 1e3,
                          masks, err) ||
                   record(env, "serve_batch_p99_us", rep, xp_mb_quantile(&sorted, 0.99) / 1e3,
                          masks, err)
               ? -1
               : 0;
}

static int serve_extra(void *state, const xp_row_t *row, xp_env_t *env, tb_err_t *err)
{
    serve_t *s = state;
    unsigned reps = row->reps ? row->reps : 1;
    mb_times_t lat = {0};
    /* The runner pins itself to one CPU and threads inherit it: the
     * batch's threads, started here, get every CPU for the case, T = 1
     * alike. */
    cpu_set_t pinned, all;
    int repin = !sched_getaffinity(0, sizeof pinned, &pinned);
    CPU_ZERO(&all);
    for (long c = 0, n = sysconf(_SC_NPROCESSORS_ONLN); c < n && c < CPU_SETSIZE; c++)
        CPU_SET(c, &all);
    sched_setaffinity(0, sizeof all, &all);
    tb_pool_t *pool = tb_pool_new((unsigned)s->threads, err);
    int rc = !pool || replay(s, pool, NULL, err) ? -1 : 0;
    for (unsigned i = 0; !rc && i < reps && !(env->stop && *env->stop); i++) {
        lat.len = 0;
        if (replay(s, pool, &lat, err) || record_rep(env, s, i, &lat, err))
            rc = -1;
    }
    tb_pool_free(pool);
    if (repin)
        sched_setaffinity(0, sizeof pinned, &pinned);
    if (!rc)
        rc = record(env, "serve_peak_rss_kb", 0, xp_peak_rss_kb(), 0, err);
    free(lat.data);
    return rc;
}

const xp_driver_t xp_driver_serve = {
    .name = "serve",
    .summary = "MaskBench instances replayed as B concurrent sequences over T threads against "
               "shared compiled grammars: masks per second, a batch's p50/p99 latency, peak "
               "memory (vocab, pattern: a MaskBench directory; threads=T batch=B masks=N "
               "every=K limit=S maskcache=M)",
    .setup = serve_setup,
    .extra = serve_extra,
    .teardown = serve_teardown,
    .default_reps = 1,
};
