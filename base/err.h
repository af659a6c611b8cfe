/*
 * err: the error value every fallible function in tokbench fills.
 *
 * Library code never prints and never exits: a function that can fail takes
 * a tb_err_t *, writes one message naming the file, field, offset or pattern
 * at fault, and returns -1 (or NULL).  Only main() decides what to do with it.
 */
#ifndef TB_ERR_H
#define TB_ERR_H

#include <stddef.h>

#define TB_ERR_MAX 1024

typedef struct {
    char msg[TB_ERR_MAX];
} tb_err_t;

/* Formats the message into err (if err is non-NULL) and returns -1, so that
 * callers can write `return tb_fail(err, "...", ...);`. */
int tb_fail(tb_err_t *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prepends "context: " to an existing message, for callers that add the
 * file name or command around an error raised deeper down.  Returns -1. */
int tb_wrap(tb_err_t *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
