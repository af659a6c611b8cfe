/*
 * pyjson: a JSON value written as Python's json.dumps(v, indent=None,
 * ensure_ascii=False) writes it, which is how the MaskBench protocol turns
 * a test instance into the text it tokenizes: separators ", " and ": ",
 * keys in the order read (jansson keeps it), non-ASCII as UTF-8, floats as
 * Python's repr (the shortest digits that read back, 1e-05, 1e+16, 2.0),
 * integers as written, those beyond 64 bits too (read by xp_py_load_file).
 */
#ifndef XP_PYJSON_H
#define XP_PYJSON_H

#include <jansson.h>

#include "../../base/buf.h"

/* A JSON file as json_load_file(path, JSON_ALLOW_NUL) reads it, except
 * that an integer beyond 64 bits, which jansson refuses, is read as the
 * string XP_PY_BIG followed by its text: xp_py_dumps writes it back as
 * that integer, and xp_py_unbig turns it back into the integer in a text
 * json_dumps wrote.  NULL with je on error. */
#define XP_PY_BIG "\001big:"
json_t *xp_py_load_file(const char *path, json_error_t *je);
/* Rewrites in place every string "\u0001big:N" of a JSON text as N. */
void xp_py_unbig(char *text);

/* Appends v's text to b; -1 on memory. */
int xp_py_dumps(const json_t *v, tb_buf_t *b);
/* Appends Python's repr of x. */
int xp_py_float_repr(double x, tb_buf_t *b);

#endif
