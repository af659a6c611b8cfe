/*
 * schema-coverage: compiles the schema of every MaskBench file in a folder
 * (each file {"schema": ..., "tests": ...}, see ../shared/maskbench) with
 * gr_schema_compile and prints how many compiled and the compile errors
 * grouped by reason.  A measuring tool, run by hand (`make
 * build/schema-coverage`), not a test: the data is not in the repository.
 *
 *   schema-coverage DIR [--every N] [--list] [--strict-oneof]
 *
 * --every N takes every Nth file in sorted order (the Nth, 2Nth, ...; the
 * issue's sample is --every 10); --list prints each failing file with its
 * message.
 */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/buf.h"
#include "../grammar/schema.h"

typedef struct {
    char *reason;
    int n;
} reason_t;

static int cmp_reason(const void *a, const void *b)
{
    return ((const reason_t *)b)->n - ((const reason_t *)a)->n;
}

/* The reason of a message: the text after the pointer, with quoted names
 * kept (they are the keyword) and the rest of the details cut. */
static void reason_of(const char *msg, char *out, size_t n)
{
    const char *p = strstr(msg, ": ");
    p = p && msg[0] == '#' ? p + 2 : msg;
    const char *q = strstr(p, " at offset");
    size_t len = q ? (size_t)(q - p) : strlen(p);
    if (!strncmp(p, "pattern '", 9) || !strncmp(p, "format '", 8)) {
        const char *r = q ? strstr(q, ": ") : NULL;
        snprintf(out, n, "pattern: %.90s", r ? r + 2 : p);
        return;
    }
    snprintf(out, n, "%.*s", (int)(len < 90 ? len : 90), p);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: schema-coverage DIR [--every N] [--list] [--strict-oneof]\n");
        return 2;
    }
    int every = 1, list = 0;
    gr_schema_opts_t opts = {0};
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--every") && i + 1 < argc)
            every = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--list"))
            list = 1;
        else if (!strcmp(argv[i], "--strict-oneof"))
            opts.strict_oneof = 1;
    }
    DIR *d = opendir(argv[1]);
    if (!d) {
        perror(argv[1]);
        return 1;
    }
    char **files = NULL;
    size_t nf = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".json")) {
            files = realloc(files, (nf + 1) * sizeof *files);
            files[nf++] = strdup(e->d_name);
        }
    closedir(d);
    qsort(files, nf, sizeof *files, tb_cmp_strs);
    reason_t *rs = NULL;
    size_t nr = 0;
    int ok = 0, total = 0;
    /* the Nth, 2Nth, ... file, as the MaskBench driver's every=N takes them */
    for (size_t i = (size_t)(every > 0 ? every : 1) - 1; i < nf;
         i += (size_t)(every > 0 ? every : 1)) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[1], files[i]);
        json_error_t je;
        json_t *f = json_load_file(path, JSON_DECODE_INT_AS_REAL, &je);
        json_t *s = f ? json_object_get(f, "schema") : NULL;
        char *text = s ? json_dumps(s, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
        json_decref(f);
        total++;
        if (!text) {
            fprintf(stderr, "%s: unreadable\n", path);
            continue;
        }
        /* The schema text as in the file (re-read so integers stay exact). */
        free(text);
        FILE *fp = fopen(path, "rb");
        fseek(fp, 0, SEEK_END);
        long len = ftell(fp);
        rewind(fp);
        char *buf = malloc((size_t)len);
        size_t got = fread(buf, 1, (size_t)len, fp);
        fclose(fp);
        json_t *whole = json_loadb(buf, got, 0, &je);
        free(buf);
        if (!whole)
            whole = json_load_file(path, JSON_DECODE_INT_AS_REAL, &je);
        text = json_dumps(json_object_get(whole, "schema"),
                          JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(17));
        json_decref(whole);
        gr_cfg_t g;
        tb_err_t err = {0};
        int r = gr_cfg_init(&g, files[i], &err) ? -1
                : gr_schema_compile(&g, text, strlen(text), &opts, &err);
        gr_cfg_free(&g);
        free(text);
        if (!r) {
            ok++;
            continue;
        }
        if (list)
            printf("FAIL %s: %s\n", files[i], err.msg);
        char why[128];
        reason_of(err.msg, why, sizeof why);
        size_t k = 0;
        while (k < nr && strcmp(rs[k].reason, why))
            k++;
        if (k == nr) {
            rs = realloc(rs, (nr + 1) * sizeof *rs);
            rs[nr++] = (reason_t){strdup(why), 0};
        }
        rs[k].n++;
    }
    qsort(rs, nr, sizeof *rs, cmp_reason);
    printf("schemas %d, compiled %d (%.1f%%), compile errors %d\n", total, ok,
           100.0 * ok / (total ? total : 1), total - ok);
    for (size_t k = 0; k < nr; k++) {
        printf("%6d  %s\n", rs[k].n, rs[k].reason);
        free(rs[k].reason);
    }
    free(rs);
    for (size_t i = 0; i < nf; i++)
        free(files[i]);
    free(files);
    return 0;
}
