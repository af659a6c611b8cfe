/*
 * fuzz_schema: JSON Schemas through the compiler (grammar/schema.h) under
 * options taken from the input; a schema it accepts is set up for masks
 * under small limits and its automaton explored breadth first from the
 * start (fuzz_gram_explore).
 *
 * Input: an optional option byte, then the schema.
 *   - First byte below 0x80 (every JSON text starts so: '{', 't', 'f',
 *     whitespace...): the whole input is the schema, compiled with the
 *     default options and remote_dir set (below).  A plain .json file is
 *     thus a seed as it is.
 *   - First byte 0x80 | x (no JSON text starts with it): the option byte,
 *     the rest is the schema.  Bits of x:
 *       bit 0  strict_oneof
 *       bit 1  format_annotation
 *       bit 2  compact
 *       bit 3  definition_order
 *       bits 4-6, d: draft = 0 (2020-12), 4, 6, 7, 2019, 2020 for d = 0..5,
 *              2019 for d = 6; d = 7: draft 0 and remote_dir NULL (no
 *              remote document read).
 *     A root $schema still overrides the draft, as in the compiler.
 * remote_dir: fuzz/remotes/ (a few small schemas written for this), so
 * $ref to http://localhost:1234/PATH reads fuzz/remotes/PATH; the network
 * is never used.  The folder is found from the working directory (the
 * repository's root, where scripts/fuzz.sh runs) or else from the
 * binary's path (build/fuzz/bin/ -> ../../../fuzz/remotes); the
 * environment variable FUZZ_SCHEMA_REMOTES overrides both.
 * Seeds: fuzz/corpus/schema/ (small schemas of the tests and of the kinds
 * MaskBench holds, one per keyword the compiler handles; the ones named
 * opt_* start with an option byte).  Dictionary: fuzz/schema.dict.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../grammar/schema.h"
#include "support.h"

static char remotes[PATH_MAX];

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Finds fuzz/remotes once; an empty remotes[] leaves remote_dir NULL. */
static void find_remotes(void)
{
    const char *env = getenv("FUZZ_SCHEMA_REMOTES");
    if (env && is_dir(env)) {
        snprintf(remotes, sizeof remotes, "%s", env);
        return;
    }
    if (is_dir("fuzz/remotes") && realpath("fuzz/remotes", remotes))
        return;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    remotes[0] = 0;
    if (n <= 0)
        return;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return;
    *slash = 0;
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/../../../fuzz/remotes", exe);
    if (!is_dir(path) || !realpath(path, remotes))
        remotes[0] = 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    find_remotes();
    if (!remotes[0])
        fprintf(stderr, "fuzz_schema: no fuzz/remotes folder found: "
                        "$refs to http://localhost:1234/ are not read\n");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int drafts[8] = {0, 4, 6, 7, 2019, 2020, 2019, 0};
    gr_schema_opts_t opts = {.remote_dir = remotes[0] ? remotes : NULL};
    if (size > 0 && data[0] >= 0x80) {
        unsigned x = data[0] & 0x7f, d = (x >> 4) & 7;
        opts.strict_oneof = x & 1;
        opts.format_annotation = (x >> 1) & 1;
        opts.compact = (x >> 2) & 1;
        opts.definition_order = (x >> 3) & 1;
        opts.draft = drafts[d];
        if (d == 7)
            opts.remote_dir = NULL;
        data++;
        size--;
    }
    tb_err_t err;
    gr_cfg_t cfg;
    if (gr_cfg_init(&cfg, "fuzz.json", &err))
        abort();
    if (gr_schema_compile(&cfg, (const char *)data, size, &opts, &err)) {
        gr_cfg_free(&cfg);
        return 0;
    }
    fuzz_gram_explore(&cfg, 64);
    return 0;
}
