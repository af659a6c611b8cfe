/* support: see support.h. */
#include "support.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../tok/charsmap.h"

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

void test_charsmap_refused(const uint8_t *blob, size_t len, const char *want)
{
    tok_charsmap_t cm;
    tb_err_t err;
    if (tok_charsmap_open(&cm, blob, len, &err) == 0)
        fail_msg("a charsmap that should be refused (for '%s') was accepted", want);
    if (!strstr(err.msg, want))
        fail_msg("expected a charsmap error containing '%s', got '%s'", want, err.msg);
}
