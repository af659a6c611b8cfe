/*
 * load: a grammar file (or text) of any supported format read into a
 * finished CFG (cfg.h): "lark" (lark.h) or "gbnf" (gbnf.h), chosen by name
 * or by the file's extension (.lark, .gbnf).  The JSON Schema format
 * ("schema", grammar/schema.h's gr_schema_compile) is being written
 * separately and is refused here until it lands.
 */
#ifndef GR_LOAD_H
#define GR_LOAD_H

#include <stddef.h>

#include "cfg.h"

/* Reads the file at path into g (initialised here; freed on failure) and
 * finishes it.  format: "lark", "gbnf", or NULL for the extension. */
int gr_cfg_load(gr_cfg_t *g, const char *path, const char *format, tb_err_t *err);

/* The same for text[0..len); source names it in messages (and gives the
 * extension when format is NULL). */
int gr_cfg_parse(gr_cfg_t *g, const char *text, size_t len, const char *source,
                 const char *format, tb_err_t *err);

#endif
