/*
 * jsontext: JSON text scanned without parsing it, for what a parser keeps
 * no trace of: jansson reads an integer beyond 64 bits as a double or not
 * at all, so the few who need its digits find its literal here.
 */
#ifndef TB_JSONTEXT_H
#define TB_JSONTEXT_H

#include <stddef.h>

/* The next number literal of JSON text t[0..n) from *at on, outside
 * strings (*at must not be inside one): its span is [*start, *at) after
 * the call.  1 for an integer (no fraction, no exponent), 0 for another
 * number, -1 when none is left. */
int tb_json_next_number(const char *t, size_t n, size_t *at, size_t *start);

#endif
