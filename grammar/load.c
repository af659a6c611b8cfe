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

/* A reader; start_name (NULL: the format's own start rule) is Lark's alone. */
typedef int (*gr_reader_fn)(gr_cfg_t *g, const char *text, size_t len, const char *start_name,
                            gr_sym_t *start, tb_err_t *err);

static int no_start(const gr_cfg_t *g, const char *start_name, tb_err_t *err)
{
    return start_name ? tb_fail(err, "%s: a start rule can be named for a Lark grammar only "
                                "(GBNF's is root; a schema has none)", g->source)
                      : 0;
}

/* A JSON Schema with the default options; the compiler finishes g itself. */
static int read_schema(gr_cfg_t *g, const char *text, size_t len, const char *start_name,
                       gr_sym_t *start, tb_err_t *err)
{
    (void)start;
    return no_start(g, start_name, err) || gr_schema_compile(g, text, len, NULL, err) ? -1 : 0;
}

static int read_gbnf(gr_cfg_t *g, const char *text, size_t len, const char *start_name,
                     gr_sym_t *start, tb_err_t *err)
{
    return no_start(g, start_name, err) || gr_gbnf_read(g, text, len, start, err) ? -1 : 0;
}

static const struct {
    const char *name, *ext;
    gr_reader_fn read;
} FORMATS[] = {
    {"lark", ".lark", gr_lark_read_start},
    {"gbnf", ".gbnf", read_gbnf},
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

int gr_semantics_by_name(const char *name)
{
    return !strcmp(name, "default") ? 1 + GR_SEM_DEFAULT
           : !strcmp(name, "llguidance") ? 1 + GR_SEM_LLGUIDANCE
           : !strcmp(name, "lark")       ? 1 + GR_SEM_LARK
                                         : -1;
}

int gr_cfg_parse_opts(gr_cfg_t *g, const char *text, size_t len, const char *source,
                      const gr_load_opts_t *o, tb_err_t *err)
{
    gr_reader_fn read;
    gr_sym_t start;
    if (pick(source ? source : "<grammar>", o->format, &read, err) ||
        gr_cfg_init(g, source, err))
        return -1;
    if (o->semantics) { /* before reading: the readers lower by it */
        g->semantics = (gr_semantics_t)(o->semantics - 1);
        g->semantics_fixed = 1;
    }
    g->vocab = o->vocab;
    if (read(g, text, len, o->start_name, &start, err) ||
        (!g->finished && gr_cfg_finish(g, start, err))) {
        gr_cfg_free(g);
        return -1;
    }
    g->vocab = NULL; /* not the grammar's: the caller may free it */
    return 0;
}

int gr_cfg_parse_start(gr_cfg_t *g, const char *text, size_t len, const char *source,
                       const char *format, const char *start_name, tb_err_t *err)
{
    gr_load_opts_t o = {.format = format, .start_name = start_name};
    return gr_cfg_parse_opts(g, text, len, source, &o, err);
}

int gr_cfg_parse(gr_cfg_t *g, const char *text, size_t len, const char *source,
                 const char *format, tb_err_t *err)
{
    return gr_cfg_parse_start(g, text, len, source, format, NULL, err);
}

int gr_cfg_load_opts(gr_cfg_t *g, const char *path, const gr_load_opts_t *o, tb_err_t *err)
{
    gr_reader_fn read;
    uint8_t *data;
    size_t len;
    if (pick(path, o->format, &read, err) || tb_read_file(path, &data, &len, err))
        return -1;
    int rc = gr_cfg_parse_opts(g, (const char *)data, len, path, o, err);
    free(data);
    return rc;
}

int gr_cfg_load_start(gr_cfg_t *g, const char *path, const char *format,
                      const char *start_name, tb_err_t *err)
{
    gr_load_opts_t o = {.format = format, .start_name = start_name};
    return gr_cfg_load_opts(g, path, &o, err);
}

int gr_cfg_load(gr_cfg_t *g, const char *path, const char *format, tb_err_t *err)
{
    return gr_cfg_load_start(g, path, format, NULL, err);
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
