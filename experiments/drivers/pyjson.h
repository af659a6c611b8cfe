/*
 * pyjson: a JSON value written as Python's json.dumps(v, indent=None,
 * ensure_ascii=False) writes it, which is how the MaskBench protocol turns
 * a test instance into the text it tokenizes: separators ", " and ": ",
 * keys in the order read (jansson keeps it), non-ASCII as UTF-8, floats as
 * Python's repr (the shortest digits that read back, 1e-05, 1e+16, 2.0),
 * integers as written.  Integers beyond 64 bits are not representable here:
 * jansson refuses them when it reads the file, and the caller reports that.
 */
#ifndef XP_PYJSON_H
#define XP_PYJSON_H

#include <jansson.h>

#include "../../base/buf.h"

/* Appends v's text to b; -1 on memory. */
int xp_py_dumps(const json_t *v, tb_buf_t *b);
/* Appends Python's repr of x. */
int xp_py_float_repr(double x, tb_buf_t *b);

#endif
