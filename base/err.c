/* err: formatting of error messages (see err.h). */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int tb_fail(tb_err_t *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int tb_wrap(tb_err_t *err, const char *fmt, ...)
{
    if (err) {
        char old[TB_ERR_MAX];
        memcpy(old, err->msg, sizeof old);
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        size_t at = n < 0 ? 0 : (size_t)n < sizeof err->msg ? (size_t)n
                                                            : sizeof err->msg - 1;
        /* Whatever does not fit is cut: the start names the culprit. */
        size_t room = sizeof err->msg - at;
        if (room > 2) {
            memcpy(err->msg + at, ": ", 2);
            size_t keep = strnlen(old, sizeof old);
            if (keep > room - 3)
                keep = room - 3;
            memcpy(err->msg + at + 2, old, keep);
            err->msg[at + 2 + keep] = 0;
        }
    }
    return -1;
}
