/* cli: helpers shared by the commands (see cli.h). */
#include "cli.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../base/utf8.h"

int xp_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return 1;
    return 0;
}

void xp_print_quoted(const uint8_t *s, size_t n)
{
    char *text = malloc(4 * n + 1);
    if (text)
        tb_utf8_escape(s, n, text, 4 * n + 1);
    printf("'%s'", text ? text : "(out of memory)");
    free(text);
}

int xp_schema_arg(int argc, char **argv, int i, gr_schema_opts_t *o)
{
    if (!strcmp(argv[i], "--format-annotation"))
        return o->format_annotation = 1, 1;
    if (!strcmp(argv[i], "--remote-dir") && i + 1 < argc)
        return o->remote_dir = argv[i + 1], 2;
    return 0;
}

int xp_schema_args_set(const gr_schema_opts_t *o)
{
    return o->format_annotation || o->remote_dir;
}

int xp_semantics_arg(int argc, char **argv, int i, int *sem)
{
    if (strcmp(argv[i], "--semantics") || i + 1 >= argc)
        return 0;
    if ((*sem = gr_semantics_by_name(argv[i + 1])) < 0) {
        fprintf(stderr, "tokbench: --semantics takes default, llguidance or lark, not '%s'\n",
                argv[i + 1]);
        return -1;
    }
    return 2;
}

int xp_load_grammar_start(gr_cfg_t *cfg, const char *path, const char *format,
                          const char *start, int semantics, const gr_schema_opts_t *o,
                          const tok_vocab_t *vocab, tb_err_t *err)
{
    gr_load_opts_t lo = {.format = format, .start_name = start, .semantics = semantics,
                         .vocab = vocab};
    if (!(format && !strcmp(format, "schema") && !start))
        return gr_cfg_load_opts(cfg, path, &lo, err);
    gr_schema_opts_t so = o ? *o : (gr_schema_opts_t){0};
    so.llguidance |= semantics == 1 + GR_SEM_LLGUIDANCE; /* read as llguidance reads it */
    if (gr_cfg_load_schema(cfg, path, &so, err))
        return -1;
    if (semantics) /* and the lexer reads its lexemes so */
        cfg->semantics = (gr_semantics_t)(semantics - 1);
    return 0;
}

int xp_load_grammar(gr_cfg_t *cfg, const char *path, const char *format,
                    const gr_schema_opts_t *o, tb_err_t *err)
{
    return xp_load_grammar_start(cfg, path, format, NULL, 0, o, NULL, err);
}

int xp_die(const tb_err_t *err)
{
    fprintf(stderr, "tokbench: %s\n", err->msg);
    return 1;
}

static int has_manifest(const char *root)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/data/manifest", root);
    return access(p, R_OK) == 0;
}

const char *xp_data_root(tb_err_t *err)
{
    static char root[PATH_MAX];
    const char *env = getenv("TOKBENCH_ROOT");
    if (env && *env) {
        if (!has_manifest(env)) {
            tb_fail(err, "TOKBENCH_ROOT=%s has no data/manifest", env);
            return NULL;
        }
        return env;
    }
    if (has_manifest("."))
        return ".";
    /* The binary lives in ROOT/build/tokbench or ROOT/build/san/tokbench. */
    ssize_t n = readlink("/proc/self/exe", root, sizeof root - 1);
    if (n > 0) {
        root[n] = 0;
        for (int up = 0; up < 3; up++) {
            char *slash = strrchr(root, '/');
            if (!slash)
                break;
            *slash = 0;
            if (has_manifest(root))
                return root;
        }
    }
    tb_fail(err, "no data/manifest here or beside the binary; set TOKBENCH_ROOT "
                 "to the tokbench checkout");
    return NULL;
}

/* Finds NAME's member column in the manifest; 0 if found. */
static int manifest_member(const char *root, const char *name, char *member,
                           size_t size)
{
    char p[PATH_MAX], line[4096];
    snprintf(p, sizeof p, "%s/data/manifest", root);
    FILE *f = fopen(p, "r");
    if (!f)
        return -1;
    int found = -1;
    while (found && fgets(line, sizeof line, f)) {
        char n[256], kind[64], source[512], mem[1024];
        if (line[0] == '#' ||
            sscanf(line, "%255s %63s %511s %1023s", n, kind, source, mem) != 4)
            continue;
        if (!strcmp(n, name)) {
            snprintf(member, size, "%s", mem);
            found = 0;
        }
    }
    fclose(f);
    return found;
}

int xp_resolve_spec(const char *spec, char *path, size_t size, tb_err_t *err)
{
    if (strchr(spec, '/') || access(spec, R_OK) == 0) {
        snprintf(path, size, "%s", spec);
        return 0;
    }
    const char *root = xp_data_root(err);
    if (!root)
        return -1;
    char member[1024];
    if (manifest_member(root, spec, member, sizeof member))
        return tb_fail(err, "'%s' is neither a file nor a name in %s/data/manifest",
                       spec, root);
    const char *base = strrchr(member, '/');
    snprintf(path, size, "%s/data/cache/%s/%s", root, spec, base ? base + 1 : member);
    if (access(path, R_OK))
        return tb_fail(err, "%s: not fetched yet; run 'make data'", path);
    return 0;
}
