/* file: whole-file reads and file checksums (see file.h). */
#include "file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "buf.h"
#include "sha256.h"

int tb_read_file(const char *path, uint8_t **data, size_t *len, tb_err_t *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tb_fail(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
        fclose(f);
        return tb_fail(err, "%s: not a regular file", path);
    }
    if ((uint64_t)st.st_size > TB_FILE_MAX) {
        fclose(f);
        return tb_fail(err, "%s: %lld bytes is over the %zu-byte input limit",
                       path, (long long)st.st_size, TB_FILE_MAX);
    }
    size_t n = (size_t)st.st_size;
    uint8_t *p = tb_alloc_big(n + 1);
    if (!p) {
        fclose(f);
        return tb_fail(err, "%s: out of memory for %zu bytes", path, n);
    }
    size_t got = fread(p, 1, n, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || got != n) {
        free(p);
        return tb_fail(err, "%s: read error after %zu of %zu bytes", path, got, n);
    }
    p[n] = 0;
    *data = p;
    *len = n;
    return 0;
}

int tb_file_sha256(const char *path, char hex[65], tb_err_t *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tb_fail(err, "%s: cannot open: %s", path, strerror(errno));
    tb_sha256_t h;
    tb_sha256_init(&h);
    uint8_t block[1 << 16];
    size_t n;
    while ((n = fread(block, 1, sizeof block, f)) > 0)
        tb_sha256_update(&h, block, n);
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return tb_fail(err, "%s: read error", path);
    uint8_t digest[32];
    tb_sha256_final(&h, digest);
    tb_hex(digest, 32, hex);
    return 0;
}
