/* support: see support.h. */
#include "support.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

long long test_sql_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    long long v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    return v;
}

int test_tokbench(const char *args, char *out, size_t size)
{
    const char *build = getenv("BUILD");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s/tokbench %s 2>&1", build && *build ? build : "build",
             args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
