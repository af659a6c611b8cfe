/* Tests of the compiled cache (tok/compiled.c, tok_load_ex): a tokenizer
 * opened from its compiled file holds the same vocabulary and gives the
 * same ids and bytes as the one loaded from its source, on real files of
 * every loader; a compiled file truncated, damaged, of another version,
 * of another build's loaders or of another source is refused with a
 * one-line note and rebuilt; loads
 * racing on an empty cache all succeed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../base/file.h"
#include "../base/hash.h"
#include "../tok/tokenizer.h"
#include "support.h"

static char cache[64];

/* A fresh, empty cache folder for each test. */
static int fresh_cache(void **state)
{
    (void)state;
    snprintf(cache, sizeof cache, "/tmp/tokbench-compiled.XXXXXX");
    return mkdtemp(cache) ? 0 : -1;
}

static int drop_cache(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
    return system(cmd) ? -1 : 0;
}

static tok_tokenizer_t *load_way(const char *path, int no_cache,
                                 tok_load_opts_t *opts)
{
    tb_err_t err;
    memset(opts, 0, sizeof *opts);
    opts->cache_dir = cache;
    opts->no_cache = no_cache;
    tok_tokenizer_t *t = tok_load_ex(path, opts, &err);
    if (!t)
        fail_msg("loading %s: %s", path, err.msg);
    return t;
}

/* The path of the only compiled file in the cache. */
static void compiled_path(char *out, size_t size)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "ls %s/*.tbc", cache);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    assert_non_null(fgets(out, (int)size, p));
    out[strcspn(out, "\n")] = 0;
    pclose(p);
}

static void same_vocab(const tok_vocab_t *a, const tok_vocab_t *b)
{
    assert_int_equal(a->size, b->size);
    assert_memory_equal(a->offset, b->offset, ((size_t)a->size + 1) * 4);
    assert_memory_equal(a->bytes, b->bytes, a->offset[a->size] + (a->size == 0));
    assert_memory_equal(a->score, b->score, (size_t)a->size * 4);
    assert_memory_equal(a->kind, b->kind, a->size);
    assert_memory_equal(a->special, b->special, a->size);
    assert_memory_equal(a->byte_id, b->byte_id, sizeof a->byte_id);
    assert_int_equal(a->bos, b->bos);
    assert_int_equal(a->eos, b->eos);
    assert_int_equal(a->unk, b->unk);
    for (uint32_t id = 0; id < a->size; id++) {
        size_t len;
        const uint8_t *s = tok_vocab_token(a, id, &len);
        assert_int_equal(tok_vocab_find(a, s, len), tok_vocab_find(b, s, len));
    }
}

/* Encodes text under flags with both; the ids and their decodes agree. */
static void same_ids(const tok_tokenizer_t *a, const tok_tokenizer_t *b,
                     const uint8_t *text, size_t n, uint32_t flags)
{
    tok_ids_t x = {0}, y = {0};
    tb_err_t ea, eb;
    int ra = tok_encode_ex(a, text, n, flags, &x, &ea);
    int rb = tok_encode_ex(b, text, n, flags, &y, &eb);
    assert_int_equal(ra, rb);
    if (ra) {
        assert_string_equal(ea.msg, eb.msg);
    } else {
        assert_int_equal(x.len, y.len);
        assert_memory_equal(x.data, y.data, x.len * 4 + !x.len);
        tb_buf_t da = {0}, db = {0};
        assert_int_equal(tok_decode(a, x.data, x.len, &da, &ea), 0);
        assert_int_equal(tok_decode(b, y.data, y.len, &db, &eb), 0);
        assert_int_equal(da.len, db.len);
        assert_memory_equal(da.data, db.data, da.len + !da.len);
        tb_buf_free(&da);
        tb_buf_free(&db);
    }
    free(x.data);
    free(y.data);
}

/* The first 256 KiB of the multi corpus, or a short mixed text. */
static uint8_t *sample(size_t *n)
{
    static const char mixed[] =
        "Hello world!  The year 2024: naïve café, ÄÖÜ ß, Привет мир, 你好世界, "
        "こんにちは, 안녕하세요, مرحبا, 🎉🙂 <s> </s> <|endoftext|> \t\n\n  x";
    uint8_t *d;
    size_t len;
    tb_err_t err;
    if (!tb_read_file("data/cache/multi/multi.txt", &d, &len, &err)) {
        *n = len < (256u << 10) ? len : 256u << 10;
        while (*n && (d[*n] & 0xC0) == 0x80)
            (*n)--; /* a whole character last */
        return d;
    }
    *n = sizeof mixed - 1;
    d = malloc(*n);
    memcpy(d, mixed, *n);
    return d;
}

/* Loads path from the source and twice through the cache (the first
 * writes the compiled file, the second opens it), and compares. */
static void compare_file(const char *path)
{
    if (access(path, R_OK)) {
        print_message("skipped: %s is absent (make data)\n", path);
        return;
    }
    tok_load_opts_t o;
    tok_tokenizer_t *src = load_way(path, 1, &o);
    assert_int_equal(o.cached, 0);
    tok_free(load_way(path, 0, &o));
    assert_int_equal(o.cached, 0);
    assert_string_equal(o.note, "");
    tok_tokenizer_t *c = load_way(path, 0, &o);
    assert_int_equal(o.cached, 1);
    assert_string_equal(o.note, "");
    same_vocab(tok_vocab(src), tok_vocab(c));
    assert_string_equal(tok_model_name(src), tok_model_name(c));
    assert_int_equal(tok_format(src), tok_format(c));
    assert_int_equal(tok_encode_defaults(src), tok_encode_defaults(c));
    size_t n;
    uint8_t *text = sample(&n);
    for (uint32_t flags = 0; flags < 4; flags++)
        same_ids(src, c, text, n, flags);
    free(text);
    tok_free(src);
    tok_free(c);
}

static void every_loader_round_trips(void **state)
{
    (void)state;
    static const char *const files[] = {
        "tests/fixtures/hf_tiny.json",
        "data/cache/llama3/tokenizer.json",
        "data/cache/mistral/tokenizer.json",
        "data/cache/cl100k/cl100k_base.json",
        "data/cache/spm-unigram/spm-unigram.model",
        "data/cache/spm-bpe/spm-bpe.model",
        "../shared/llama.cpp-vocab/ggml-vocab-llama-spm.gguf",
        "../shared/llama.cpp-vocab/ggml-vocab-bert-bge.gguf",
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        compare_file(files[i]);
}

static const char *const tiny = "tests/fixtures/hf_tiny.json";

/* The compiled header's layout (tok/compiled.c's header_t): header hash at
 * byte 24, body hash at 32, the source's identity at 40 (24 bytes), the
 * sections' (offset, length) pairs from 64, then the build's hash, then
 * the body. */
enum {
    HEADER_SECTIONS = 14,
    HEADER_BUILD_AT = 64 + 16 * HEADER_SECTIONS,
    HEADER_END = HEADER_BUILD_AT + 8,
};

/* Loads path through the empty cache, which writes its compiled file;
 * that file's path into file. */
static void compile_path(const char *path, char *file, size_t size)
{
    tok_load_opts_t o;
    tok_free(load_way(path, 0, &o));
    compiled_path(file, size);
}

static void compile_tiny(char *file, size_t size)
{
    compile_path(tiny, file, size);
}

/* Writes the compiled file's first `keep` bytes, then `flip` xor'ed into
 * the byte at `at` (when at < keep). */
static void damage(const char *file, size_t keep, size_t at, uint8_t flip)
{
    uint8_t *d;
    size_t len;
    tb_err_t err;
    assert_int_equal(tb_read_file(file, &d, &len, &err), 0);
    if (keep > len)
        keep = len;
    if (at < keep)
        d[at] ^= flip;
    FILE *f = fopen(file, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(d, 1, keep, f), keep);
    fclose(f);
    free(d);
}

/* Every damage is noticed: the load comes from the source with a note
 * naming the file, gives the source's ids, and writes the file again. */
static void damaged_files_are_rebuilt(void **state)
{
    (void)state;
    const char *path = tiny;
    tok_load_opts_t o;
    char file[256];
    compile_tiny(file, sizeof file);
    struct stat st;
    assert_int_equal(stat(file, &st), 0);
    size_t size = (size_t)st.st_size;
    const struct {
        size_t keep, at;
        uint8_t flip;
        const char *why;
    } cases[] = {
        {0, 0, 0, "empty"},
        {10, 0, 0, "not a compiled tokenizer"},
        {size / 2, size, 0, "truncated"},
        {size - 1, size, 0, "truncated"},
        {size, 0, 0x20, "not a compiled tokenizer"},
        {size, 8, 1, "another format version"},
        {size, 12, 1, "another layout"},
        {size, 40, 1, "another source"},     /* the source's hash */
        {size, 80, 0x40, "header checksum"},  /* a section's offset */
        {size, HEADER_BUILD_AT, 1, "other loaders"},
        {size, HEADER_END + 34, 0x40, "body checksum"},
        {size, size - 100, 0x01, "checksum"},
        {size, size / 2, 0x80, "checksum"},
    };
    size_t n;
    uint8_t *text = sample(&n);
    tok_tokenizer_t *src = load_way(path, 1, &o);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        damage(file, cases[i].keep, cases[i].at, cases[i].flip);
        tok_tokenizer_t *t = load_way(path, 0, &o);
        assert_int_equal(o.cached, 0);
        if (!strstr(o.note, cases[i].why) || !strstr(o.note, file) ||
            !strstr(o.note, "rebuilt") || strchr(o.note, '\n'))
            fail_msg("case %zu: note '%s', wanted '%s'", i, o.note, cases[i].why);
        same_ids(src, t, text, n, 0);
        tok_free(t);
        tok_free(load_way(path, 0, &o)); /* written again, whole */
        assert_int_equal(o.cached, 1);
    }
    free(text);
    tok_free(src);
}

/* Writes d[0..len) over the compiled file with its body and header hashes
 * made to agree with it, and frees d.  The header's layout (see
 * HEADER_BUILD_AT). */
static void write_agreeing(const char *file, uint8_t *d, size_t len)
{
    uint64_t h = tb_hash(d + HEADER_END, len - HEADER_END);
    memcpy(d + 32, &h, 8);
    memset(d + 24, 0, 8);
    h = tb_hash(d, HEADER_END);
    memcpy(d + 24, &h, 8);
    FILE *f = fopen(file, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(d, 1, len, f), len);
    fclose(f);
    free(d);
}

/* Section sec of the compiled file of path damaged and the hashes made to
 * agree (as a forger would): the load refuses it, saying why, and
 * rebuilds it. */
static void refuse_damaged_section(const char *path, const char *file, int sec,
                                   void (*damage)(uint8_t *section, uint64_t len),
                                   const char *why)
{
    tok_load_opts_t o;
    uint8_t *d;
    size_t len;
    tb_err_t err;
    assert_int_equal(tb_read_file(file, &d, &len, &err), 0);
    uint64_t at, n;
    memcpy(&at, d + 64 + 16 * sec, 8);
    memcpy(&n, d + 72 + 16 * sec, 8);
    assert_true(n > 0 && at + n <= len);
    damage(d + at, n);
    write_agreeing(file, d, len);
    tok_tokenizer_t *t = load_way(path, 0, &o);
    assert_int_equal(o.cached, 0);
    if (!strstr(o.note, why) || !strstr(o.note, "rebuilt"))
        fail_msg("section %d: note '%s', wanted '%s'", sec, o.note, why);
    tok_free(t);
}

/* All ones but the last bit: an empty index's slots, ids out of range. */
static void fill_fe(uint8_t *section, uint64_t len)
{
    memset(section, 0xFE, len);
}

/* A damaged file with hashes that agree is still refused by the checks of
 * its tables, section by section. */
static void consistent_damage_is_refused(void **state)
{
    (void)state;
    char file[256];
    compile_tiny(file, sizeof file);
    static const struct {
        int sec;
        const char *why;
    } cases[] = {{2, "token offsets"}, {6, "index by bytes"}, {7, "merge table"},
                 {9, "BPE tables"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        refuse_damaged_section(tiny, file, cases[i].sec, fill_fe, cases[i].why);
}

/* The first used premerge slot's neighbours (cp, id, first, n_left,
 * n_right, then neighbours), one bit changed. */
static void flip_neighbours(uint8_t *section, uint64_t len)
{
    size_t slot = 0;
    while (slot + 16 <= len && !memcmp(section + slot, "\0\0\0\0", 4)) /* cp 0: empty */
        slot += 16;
    assert_true(slot + 16 <= len);
    section[slot + 14] ^= 0x80;
}

/* The same for the premerged characters of a byte-level vocabulary (the
 * tiny one has none): a slot of all ones names an id out of range, and a
 * character whose neighbours (the bytes its partners can meet) disagree
 * with its partners would let a partner by unchecked. */
static void damaged_premerge_is_refused(void **state)
{
    (void)state;
    const char *path = "tests/fixtures/hf_bytes_tiny.json";
    char file[256];
    compile_path(path, file, sizeof file);
    refuse_damaged_section(path, file, 12, fill_fe, "BPE tables");
    refuse_damaged_section(path, file, 12, flip_neighbours, "BPE tables");
}

/* A file that a build of other loader sources wrote (the Makefile's
 * TOK_BUILD_HASH differs), whole and with hashes that agree, is refused
 * and written again with this build's hash, which the next load takes. */
static void another_build_is_rebuilt(void **state)
{
    (void)state;
    const char *path = tiny;
    tok_load_opts_t o;
    char file[256];
    compile_tiny(file, sizeof file);
    uint8_t *d;
    size_t len;
    tb_err_t err;
    assert_int_equal(tb_read_file(file, &d, &len, &err), 0);
    uint64_t ours, h;
    memcpy(&ours, d + HEADER_BUILD_AT, 8);
    h = ours ^ 0x5a5a;
    memcpy(d + HEADER_BUILD_AT, &h, 8);
    write_agreeing(file, d, len);
    tok_tokenizer_t *t = load_way(path, 0, &o);
    assert_int_equal(o.cached, 0);
    if (!strstr(o.note, "other loaders") || !strstr(o.note, "rebuilt"))
        fail_msg("note '%s'", o.note);
    tok_free(t);
    assert_int_equal(tb_read_file(file, &d, &len, &err), 0);
    memcpy(&h, d + HEADER_BUILD_AT, 8);
    free(d);
    assert_true(h == ours);
    tok_free(load_way(path, 0, &o));
    assert_int_equal(o.cached, 1);
}

/* Processes that load the same file into an empty cache at once all
 * succeed (each writes its own temporary file, renamed over the name),
 * and what they leave is a whole compiled file. */
static void racing_loads_succeed(void **state)
{
    (void)state;
    const char *path = "data/cache/mistral/tokenizer.json";
    if (access(path, R_OK))
        path = "tests/fixtures/hf_tiny.json";
    enum { N = 4 };
    pid_t pid[N];
    for (int i = 0; i < N; i++) {
        fflush(NULL);
        pid[i] = fork();
        assert_true(pid[i] >= 0);
        if (pid[i] == 0) {
            tok_load_opts_t o = {.cache_dir = cache};
            tb_err_t err;
            tok_tokenizer_t *t = tok_load_ex(path, &o, &err);
            _exit(t && !o.note[0] ? 0 : 1);
        }
    }
    for (int i = 0; i < N; i++) {
        int status;
        assert_int_equal(waitpid(pid[i], &status, 0), pid[i]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    tok_load_opts_t o;
    tok_free(load_way(path, 0, &o));
    assert_int_equal(o.cached, 1);
    assert_string_equal(o.note, "");
}

/* A plain tiktoken file takes its pattern from its name: the same bytes
 * under a name that names no encoding are refused, cache or not. */
static void the_path_is_part_of_the_key(void **state)
{
    (void)state;
    static const char b64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char good[128], bad[128];
    snprintf(good, sizeof good, "%s/cl100k_base.tiktoken", cache);
    snprintf(bad, sizeof bad, "%s/mystery.tiktoken", cache);
    for (int k = 0; k < 2; k++) {
        FILE *f = fopen(k ? bad : good, "w");
        assert_non_null(f);
        for (int b = 0; b < 256; b++)
            fprintf(f, "%c%c== %d\n", b64[b >> 2], b64[(b & 3) << 4], b);
        fprintf(f, "YWI= 256\n");
        fclose(f);
    }
    tok_load_opts_t o;
    tok_free(load_way(good, 0, &o));
    tok_free(load_way(good, 0, &o));
    assert_int_equal(o.cached, 1);
    o = (tok_load_opts_t){.cache_dir = cache};
    tb_err_t err;
    assert_null(tok_load_ex(bad, &o, &err));
    assert_non_null(strstr(err.msg, "name it after its encoding"));
}

/* "off" and no_cache write nothing; an unwritable folder costs a note. */
static void cache_switches(void **state)
{
    (void)state;
    const char *path = "tests/fixtures/hf_tiny.json";
    tok_load_opts_t o = {.cache_dir = "off"};
    tb_err_t err;
    tok_free(tok_load_ex(path, &o, &err));
    assert_int_equal(o.cached, 0);
    tok_free(load_way(path, 1, &o));
    char cmd[160], out[64] = "";
    snprintf(cmd, sizeof cmd, "ls %s | wc -l", cache);
    FILE *p = popen(cmd, "r");
    assert_non_null(fgets(out, sizeof out, p));
    pclose(p);
    assert_int_equal(atoi(out), 0);
    o = (tok_load_opts_t){.cache_dir = "/proc/no/such/folder"};
    tok_tokenizer_t *t = tok_load_ex(path, &o, &err);
    assert_non_null(t);
    assert_non_null(strstr(o.note, "not written"));
    tok_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(every_loader_round_trips, fresh_cache,
                                        drop_cache),
        cmocka_unit_test_setup_teardown(damaged_files_are_rebuilt, fresh_cache,
                                        drop_cache),
        cmocka_unit_test_setup_teardown(consistent_damage_is_refused, fresh_cache,
                                        drop_cache),
        cmocka_unit_test_setup_teardown(damaged_premerge_is_refused, fresh_cache,
                                        drop_cache),
        cmocka_unit_test_setup_teardown(another_build_is_rebuilt, fresh_cache,
                                        drop_cache),
        cmocka_unit_test_setup_teardown(racing_loads_succeed, fresh_cache,
                                        drop_cache),
        cmocka_unit_test_setup_teardown(the_path_is_part_of_the_key, fresh_cache,
                                        drop_cache),
        cmocka_unit_test_setup_teardown(cache_switches, fresh_cache, drop_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
