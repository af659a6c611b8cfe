/*
 * load: a grammar file (or text) of any supported format read into a
 * finished CFG (cfg.h): "lark" (lark.h), "gbnf" (gbnf.h) or "schema" (a
 * JSON Schema, schema.h, with its default options), chosen by name or by
 * the file's extension (.lark, .gbnf, .json).
 */
#ifndef GR_LOAD_H
#define GR_LOAD_H

#include <stddef.h>

#include "cfg.h"
#include "schema.h"

/* Reads the file at path into g (initialised here; freed on failure) and
 * finishes it.  format: "lark", "gbnf", "schema", or NULL for the extension. */
int gr_cfg_load(gr_cfg_t *g, const char *path, const char *format, tb_err_t *err);

/* gr_cfg_load with the start rule named: start_name is a Lark grammar's
 * rule (NULL: start; Lark's `start` option), an error for other formats. */
int gr_cfg_load_start(gr_cfg_t *g, const char *path, const char *format,
                      const char *start_name, tb_err_t *err);

/* The loaders' choices, all optional (zeroed: the format by the
 * extension, the format's start rule, the semantics the grammar asks for:
 * GR_SEM_LLGUIDANCE where a Lark grammar has %llguidance, else the
 * default; no vocabulary).  semantics is 1 + a gr_semantics_t to impose
 * one.  vocab: the vocabulary a Lark grammar's special tokens (<|name|>,
 * <[ids]>) name ids of; without one such a grammar is refused. */
typedef struct {
    const char *format, *start_name;
    int semantics;
    const tok_vocab_t *vocab;
} gr_load_opts_t;

/* gr_cfg_load_start and gr_cfg_parse_start with every choice. */
int gr_cfg_load_opts(gr_cfg_t *g, const char *path, const gr_load_opts_t *o, tb_err_t *err);
int gr_cfg_parse_opts(gr_cfg_t *g, const char *text, size_t len, const char *source,
                      const gr_load_opts_t *o, tb_err_t *err);

/* "default", "llguidance" or "lark" as 1 + its gr_semantics_t (a gr_load_opts_t's
 * semantics), -1 for another name. */
int gr_semantics_by_name(const char *name);

/* A JSON Schema file compiled with opts (NULL: the defaults) into g, as
 * gr_cfg_load does with format "schema". */
int gr_cfg_load_schema(gr_cfg_t *g, const char *path, const gr_schema_opts_t *opts,
                       tb_err_t *err);

/* The same for text[0..len); source names it in messages (and gives the
 * extension when format is NULL). */
int gr_cfg_parse(gr_cfg_t *g, const char *text, size_t len, const char *source,
                 const char *format, tb_err_t *err);
int gr_cfg_parse_start(gr_cfg_t *g, const char *text, size_t len, const char *source,
                       const char *format, const char *start_name, tb_err_t *err);

#endif
