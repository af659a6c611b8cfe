/* support: see support.h. */
#include "support.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

void test_need_file(const char *path)
{
    if (access(path, R_OK))
        fail_msg("%s is missing: run 'make data' from the repository root", path);
}

tok_tokenizer_t *test_load(const char *path)
{
    test_need_file(path);
    tb_err_t err;
    tok_tokenizer_t *t = tok_load(path, &err);
    if (!t)
        fail_msg("loading %s: %s", path, err.msg);
    return t;
}
