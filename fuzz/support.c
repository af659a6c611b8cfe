/* support: scratch files and DFA exploration for the fuzz
 * targets (support.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support.h"

#include "../grammar/gram.h"

/* $TMPDIR, else /dev/shm where there is one: SQLite syncs its files, which
 * on a disk held fuzz_results to a third of its speed. */
static const char *scratch_dir(void)
{
    const char *dir = getenv("TMPDIR");
    if (dir && *dir)
        return dir;
    return access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm";
}

static void scratch_path(const char *name, const char *side, char *out, size_t size)
{
    snprintf(out, size, "%s/tokbench-fuzz-%ld%s%s", scratch_dir(), (long)getpid(), name,
             side);
}

const char *fuzz_scratch_path(const char *name)
{
    static char path[4096];
    scratch_path(name, "", path, sizeof path);
    return path;
}

const char *fuzz_scratch(const char *name, const uint8_t *data, size_t n)
{
    const char *path = fuzz_scratch_path(name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n || fclose(f)) {
        perror(path);
        abort();
    }
    return path;
}

void fuzz_scratch_remove(const char *name)
{
    static const char *const sides[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof sides / sizeof *sides; i++) {
        char path[4096];
        scratch_path(name, sides[i], path, sizeof path);
        unlink(path);
    }
}

char *fuzz_strndup(const uint8_t *data, size_t n)
{
    char *s = malloc(n + 1);
    if (!s)
        abort();
    memcpy(s, data, n);
    s[n] = 0;
    return s;
}

const lex_dfa_opts_t fuzz_dfa_opts = {.max_states = 2000, .max_terms = 1u << 16};

void fuzz_dfa_explore(lex_dfa_t *d, size_t max_states,
                      void (*visit)(lex_dfa_t *d, uint32_t s, void *arg), void *arg)
{
    tb_err_t err;
    for (uint32_t s = LEX_START; s < d->nstates && s <= max_states; s++) {
        uint8_t live[256];
        for (unsigned b = 0; b < 256; b++)
            live[b] = lex_dfa_next(d, s, (uint8_t)b) != LEX_DEAD;
        const uint64_t *allowed = lex_dfa_allowed(d, s);
        if (lex_dfa_error(d, &err))
            return;
        for (unsigned b = 0; b < 256; b++)
            if (((allowed[b >> 6] >> (b & 63)) & 1) != live[b]) {
                fprintf(stderr, "state %u: byte 0x%02x allowed %d, step live %d\n", s,
                        b, (int)((allowed[b >> 6] >> (b & 63)) & 1), live[b]);
                abort();
            }
        if (visit)
            visit(d, s, arg);
    }
}

void fuzz_gram_explore(gr_cfg_t *g, size_t max_states)
{
    tb_err_t err;
    gr_opts_t opts = {.max_states = 4096, .max_items = 1u << 16, .lexer = fuzz_dfa_opts};
    gr_gram_t *gram = gr_gram_new(g, &opts, &err);
    if (!gram)
        return;
    uint32_t *queue = malloc(max_states * sizeof *queue);
    if (!queue)
        abort();
    size_t head = 0, tail = 0;
    queue[tail++] = GR_START;
    while (head < tail && !gram->failed) {
        uint32_t s = queue[head++];
        (void)gr_accepting(gram, s);
        for (int b = 0; b < 256 && !gram->failed; b++) {
            uint32_t next = gr_step(gram, s, (uint8_t)b);
            if (gram->failed)
                break;
            if (gr_step(gram, s, (uint8_t)b) != next)
                abort(); /* the table forgot what the slow path found */
            if (next != GR_DEAD && tail < max_states) {
                int seen = 0;
                for (size_t i = 0; i < tail && !seen; i++)
                    seen = queue[i] == next;
                if (!seen)
                    queue[tail++] = next;
            }
        }
    }
    free(queue);
    gr_gram_free(gram);
}
