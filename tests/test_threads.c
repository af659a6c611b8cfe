/* Tests of one tokenizer shared between threads: many threads encode real
 * text at once, through tok_encode (which shares the tokenizer's spare
 * state), through tok_encode_with (a state per thread) and through
 * tok_encode_batch, and every text's ids must equal those of a run on one
 * thread.  Real vocabularies (llama3, cl100k, gemma3) and real text (the
 * multi and unicode corpora); a vocabulary or corpus absent from
 * data/cache skips with a message.  Built with `make SANITIZE=thread` too,
 * to run under ThreadSanitizer. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../base/file.h"
#include "support.h"

#define THREADS 6
/* Lines taken from each corpus: thousands of encodes per vocabulary and
 * mode once every thread has encoded them all. */
#define MULTI_LINES 1500
#define UNICODE_LINES 500

static const char *const corpora[] = {"data/cache/multi/multi.txt",
                                      "data/cache/unicode/unicode.txt"};
static const size_t corpus_lines[] = {MULTI_LINES, UNICODE_LINES};

/* The texts every case encodes, and their ids from one thread. */
typedef struct {
    uint8_t *data[2];           /* the corpora's bytes */
    TB_VEC(const uint8_t *) text;
    TB_VEC(size_t) len;
    tok_ids_t *want;
} texts_t;

/* Takes the first `max` lines of data[0..n) (without their '\n'). */
static void add_lines(texts_t *tx, const uint8_t *data, size_t n, size_t max)
{
    for (size_t at = 0, k = 0; at < n && k < max; k++) {
        const uint8_t *nl = memchr(data + at, '\n', n - at);
        size_t end = nl ? (size_t)(nl - data) : n;
        assert_int_equal(tb_vec_push(&tx->text, data + at), 0);
        assert_int_equal(tb_vec_push(&tx->len, end - at), 0);
        at = end + 1;
    }
}

/* 0 and a message when a vocabulary or corpus is missing. */
static int have(const char *vocab)
{
    const char *paths[] = {vocab, corpora[0], corpora[1]};
    for (size_t i = 0; i < 3; i++)
        if (access(paths[i], R_OK)) {
            print_message("%s: absent (run `make data`): skipped\n", paths[i]);
            return 0;
        }
    return 1;
}

/* The ids of every text, encoded on this thread. */
static void texts_want(texts_t *tx, const tok_tokenizer_t *t)
{
    tb_err_t err;
    tx->want = calloc(tx->text.len, sizeof *tx->want);
    assert_non_null(tx->want);
    for (size_t i = 0; i < tx->text.len; i++)
        if (tok_encode(t, tx->text.data[i], tx->len.data[i], &tx->want[i], &err))
            fail_msg("text %zu: %s", i, err.msg);
}

static void texts_load(texts_t *tx, const tok_tokenizer_t *t)
{
    memset(tx, 0, sizeof *tx);
    tb_err_t err;
    for (size_t c = 0; c < 2; c++) {
        size_t n;
        if (tb_read_file(corpora[c], &tx->data[c], &n, &err))
            fail_msg("%s", err.msg);
        add_lines(tx, tx->data[c], n, corpus_lines[c]);
    }
    texts_want(tx, t);
}

static void texts_free(texts_t *tx)
{
    for (size_t i = 0; i < tx->text.len; i++)
        free(tx->want[i].data);
    free(tx->want);
    free(tx->text.data);
    free(tx->len.data);
    free(tx->data[0]);
    free(tx->data[1]);
}

/* Empty lists may have no array: memcmp must not see NULL. */
static int same_ids(const tok_ids_t *a, const tok_ids_t *b)
{
    return a->len == b->len &&
           (!a->len || !memcmp(a->data, b->data, a->len * sizeof *a->data));
}

/* One thread's work: every text once, starting at its own offset so that
 * the threads encode different texts at the same moment; `own` gives it a
 * state of its own, else it shares the tokenizer's through tok_encode. */
typedef struct {
    const tok_tokenizer_t *t;
    const texts_t *tx;
    unsigned k;
    int own;
    size_t wrong, failed, first_wrong;
    pthread_t thread;
} job_t;

static void *encode_all(void *arg)
{
    job_t *j = arg;
    const texts_t *tx = j->tx;
    size_t n = tx->text.len;
    tok_state_t *st = j->own ? tok_state_new(j->t) : NULL;
    tok_ids_t ids = {0};
    tb_err_t err;
    j->first_wrong = SIZE_MAX;
    for (size_t r = 0; r < n; r++) {
        size_t i = (r + j->k * n / THREADS) % n;
        ids.len = 0;
        int rc = j->own ? tok_encode_with(j->t, st, tx->text.data[i], tx->len.data[i],
                                          tok_encode_defaults(j->t), &ids, &err)
                        : tok_encode(j->t, tx->text.data[i], tx->len.data[i],
                                     &ids, &err);
        if (rc) {
            j->failed++;
        } else if (!same_ids(&ids, &tx->want[i])) {
            j->wrong++;
            if (j->first_wrong == SIZE_MAX)
                j->first_wrong = i;
        }
    }
    free(ids.data);
    tok_state_free(st);
    return NULL;
}

/* THREADS threads at once, each encoding every text; none may differ. */
static void run_threads(const tok_tokenizer_t *t, const texts_t *tx, int own,
                        const char *name)
{
    job_t jobs[THREADS];
    for (unsigned k = 0; k < THREADS; k++) {
        jobs[k] = (job_t){.t = t, .tx = tx, .k = k, .own = own};
        assert_int_equal(pthread_create(&jobs[k].thread, NULL, encode_all, &jobs[k]), 0);
    }
    size_t wrong = 0, failed = 0, first = SIZE_MAX;
    for (unsigned k = 0; k < THREADS; k++) {
        pthread_join(jobs[k].thread, NULL);
        wrong += jobs[k].wrong;
        failed += jobs[k].failed;
        if (jobs[k].first_wrong < first)
            first = jobs[k].first_wrong;
    }
    if (wrong || failed)
        fail_msg("%s, %s: %zu of %zu encodes wrong (first: text %zu), %zu failed",
                 name, own ? "a state per thread" : "tok_encode", wrong,
                 (size_t)THREADS * tx->text.len, first, failed);
}

/* tok_encode_batch on THREADS threads and on one: the ids of one thread. */
static void run_batch(const tok_tokenizer_t *t, const texts_t *tx,
                      const char *name)
{
    size_t n = tx->text.len;
    for (unsigned threads = 1; threads <= THREADS; threads += THREADS - 1) {
        tok_ids_t *outs = calloc(n, sizeof *outs);
        assert_non_null(outs);
        tb_err_t err;
        size_t bad;
        if (tok_encode_batch(t, tx->text.data, tx->len.data, n, threads,
                             tok_encode_defaults(t), outs, &bad, &err))
            fail_msg("%s: batch on %u threads: %s", name, threads, err.msg);
        for (size_t i = 0; i < n; i++) {
            if (!same_ids(&outs[i], &tx->want[i]))
                fail_msg("%s: batch on %u threads: text %zu differs", name,
                         threads, i);
            free(outs[i].data);
        }
        free(outs);
    }
}

static void shared(const char *name, const char *path)
{
    if (!have(path))
        skip();
    tok_tokenizer_t *t = test_load(path);
    texts_t tx;
    texts_load(&tx, t);
    assert_true(tx.text.len > 1000);
    run_threads(t, &tx, 0, name);
    run_threads(t, &tx, 1, name);
    run_batch(t, &tx, name);
    texts_free(&tx);
    tok_free(t);
}

static void shared_llama3(void **state)
{
    (void)state;
    shared("llama3", "data/cache/llama3/tokenizer.json");
}

static void shared_cl100k(void **state)
{
    (void)state;
    shared("cl100k", TEST_CL100K);
}

static void shared_gemma3(void **state)
{
    (void)state;
    shared("gemma3", "data/cache/gemma3/tokenizer.json");
}

/* Invalid UTF-8 is where Llama 3's hand-written split matcher hands over
 * to PCRE2, whose JIT-compiled copy of the pattern the tokenizer makes
 * the first time: threads that meet it at once in a fresh tokenizer must
 * make one copy between them and all get the ids of another tokenizer's
 * single thread. */
static void invalid_utf8_first_met_by_threads(void **state)
{
    (void)state;
    const char *path = "data/cache/llama3/tokenizer.json";
    const char *invalid = "data/cache/invalid/invalid.txt";
    if (!have(path))
        skip();
    if (access(invalid, R_OK)) {
        print_message("%s: absent (run `make data`): skipped\n", invalid);
        skip();
    }
    texts_t tx;
    memset(&tx, 0, sizeof tx);
    size_t n;
    tb_err_t err;
    if (tb_read_file(invalid, &tx.data[0], &n, &err))
        fail_msg("%s", err.msg);
    add_lines(&tx, tx.data[0], n, 400);
    tok_tokenizer_t *one = test_load(path);
    texts_want(&tx, one);
    tok_free(one);
    for (int own = 0; own <= 1; own++) {
        tok_tokenizer_t *t = test_load(path);
        run_threads(t, &tx, own, "llama3 on invalid UTF-8");
        tok_free(t);
    }
    texts_free(&tx);
}

/* A batch that fails names its lowest failing text, however the threads
 * meet the failures: Unigram and SentencePiece-BPE models refuse invalid
 * UTF-8, byte-level models take it. */
static void batch_names_first_failure(void **state)
{
    (void)state;
    const char *path = "data/cache/gemma3/tokenizer.json";
    if (!have(path))
        skip();
    tok_tokenizer_t *t = test_load(path);
    enum { N = 400 };
    const uint8_t *texts[N];
    size_t lens[N];
    for (size_t i = 0; i < N; i++) {
        int bad = i == 137 || i == 138 || i == 300;
        texts[i] = (const uint8_t *)(bad ? "ok \xFF" : "plain text");
        lens[i] = strlen((const char *)texts[i]);
    }
    tb_err_t err;
    tok_ids_t ids = {0};
    if (!tok_encode(t, texts[137], lens[137], &ids, &err)) {
        print_message("gemma3 takes invalid UTF-8: skipped\n");
        free(ids.data);
        tok_free(t);
        skip();
    }
    for (unsigned threads = 1; threads <= 4; threads++) {
        tok_ids_t outs[N];
        memset(outs, 0, sizeof outs);
        size_t bad = 0;
        assert_int_equal(tok_encode_batch(t, texts, lens, N, threads, tok_encode_defaults(t),
                                          outs, &bad, &err), -1);
        assert_int_equal(bad, 137);
        assert_non_null(strstr(err.msg, "text 137: "));
        assert_non_null(strstr(err.msg, "invalid UTF-8 at byte 3"));
        for (size_t i = 0; i < N; i++)
            free(outs[i].data);
    }
    free(ids.data);
    tok_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shared_llama3),
        cmocka_unit_test(shared_cl100k),
        cmocka_unit_test(shared_gemma3),
        cmocka_unit_test(invalid_utf8_first_met_by_threads),
        cmocka_unit_test(batch_names_first_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
