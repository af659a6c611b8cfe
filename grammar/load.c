/*
 * load: picks the reader of a grammar format and finishes the CFG (load.h).
 */
#include "load.h"

#include <stdlib.h>
#include <string.h>

#include "../base/file.h"
#include "gbnf.h"
#include "lark.h"
#include "schema.h"

typedef int (*gr_reader_fn)(gr_cfg_t *g, const char *text, size_t len, gr_sym_t *start,
                            tb_err_t *err);

/* A JSON Schema with the default options; the compiler finishes g itself. */
static int read_schema(gr_cfg_t *g, const char *text, size_t len, gr_sym_t *start,
                       tb_err_t *err)
{
    (void)start;
    return gr_schema_compile(g, text, len, NULL, err);
}

static const struct {
    const char *name, *ext;
    gr_reader_fn read;
} FORMATS[] = {
    {"lark", ".lark", gr_lark_read},
    {"gbnf", ".gbnf", gr_gbnf_read},
    {"schema", ".json", read_schema},
};
#define NFORMATS (sizeof FORMATS / sizeof FORMATS[0])

static int pick(const char *source, const char *format, gr_reader_fn *out, tb_err_t *err)
{
    if (format) {
        for (size_t i = 0; i < NFORMATS; i++) {
            if (strcmp(format, FORMATS[i].name) == 0) {
                *out = FORMATS[i].read;
                return 0;
            }
        }
        return tb_fail(err, "%s: unknown grammar format '%s' (lark, gbnf or schema)", source, format);
    }
    const char *dot = strrchr(source, '.');
    for (size_t i = 0; dot && i < NFORMATS; i++) {
        if (strcmp(dot, FORMATS[i].ext) == 0) {
            *out = FORMATS[i].read;
            return 0;
        }
    }
    return tb_fail(err, "%s: cannot tell the grammar format from the name (.lark, .gbnf or "
                   ".json; or name the format: lark, gbnf, schema)", source);
}

int gr_cfg_parse(gr_cfg_t *g, const char *text, size_t len, const char *source,
                 const char *format, tb_err_t *err)
{
    gr_reader_fn read;
    gr_sym_t start;
    if (pick(source ? source : "<grammar>", format, &read, err) || gr_cfg_init(g, source, err))
        return -1;
    if (read(g, text, len, &start, err) || (!g->finished && gr_cfg_finish(g, start, err))) {
        gr_cfg_free(g);
        return -1;
    }
    return 0;
}

int gr_cfg_load(gr_cfg_t *g, const char *path, const char *format, tb_err_t *err)
{
    gr_reader_fn read;
    uint8_t *data;
    size_t len;
    if (pick(path, format, &read, err) || tb_read_file(path, &data, &len, err))
        return -1;
    int rc = gr_cfg_parse(g, (const char *)data, len, path, format, err);
    free(data);
    return rc;
}

int gr_cfg_load_schema(gr_cfg_t *g, const char *path, const gr_schema_opts_t *opts,
                       tb_err_t *err)
{
    uint8_t *data;
    size_t len;
    if (tb_read_file(path, &data, &len, err))
        return -1;
    int rc = gr_cfg_init(g, path, err);
    if (!rc && gr_schema_compile(g, (const char *)data, len, opts, err)) {
        gr_cfg_free(g);
        rc = -1;
    }
    free(data);
    return rc;
}
