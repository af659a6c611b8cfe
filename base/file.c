/* file: whole-file reads and maps, file checksums (see file.h). */
#include "file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "sha256.h"

/* Opens path to take it whole: its descriptor, and its size in *n; or -1
 * with a message for a missing file, another kind of file or one past
 * TB_FILE_MAX. */
static int open_input(const char *path, size_t *n, tb_err_t *err)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return tb_fail(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return tb_fail(err, "%s: not a regular file", path);
    }
    if ((uint64_t)st.st_size > TB_FILE_MAX) {
        close(fd);
        return tb_fail(err, "%s: %lld bytes is over the %zu-byte input limit",
                       path, (long long)st.st_size, TB_FILE_MAX);
    }
    *n = (size_t)st.st_size;
    return fd;
}

int tb_read_file(const char *path, uint8_t **data, size_t *len, tb_err_t *err)
{
    size_t n, got = 0;
    int fd = open_input(path, &n, err);
    if (fd < 0)
        return -1;
    uint8_t *p = tb_alloc_big(n + 1);
    if (!p) {
        close(fd);
        return tb_fail(err, "%s: out of memory for %zu bytes", path, n);
    }
    while (got < n) {
        ssize_t r = read(fd, p + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (got != n) {
        free(p);
        return tb_fail(err, "%s: read error after %zu of %zu bytes", path, got, n);
    }
    p[n] = 0;
    *data = p;
    *len = n;
    return 0;
}

/* The mapping of a file of len bytes: whole pages, one byte more. */
static size_t map_size(size_t len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (len + 1 + page - 1) / page * page;
}

int tb_map_file(const char *path, const uint8_t **data, size_t *len,
                tb_err_t *err)
{
    size_t n;
    int fd = open_input(path, &n, err);
    if (fd < 0)
        return -1;
    size_t size = map_size(n);
    /* zero pages first, the file over them: the byte past the end is 0
     * even when the file fills its last page */
    uint8_t *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED && n &&
        mmap(p, n, PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE, fd, 0) ==
            MAP_FAILED) {
        munmap(p, size);
        p = MAP_FAILED;
    }
    int e = errno;
    close(fd);
    if (p == MAP_FAILED)
        return tb_fail(err, "%s: cannot map %zu bytes: %s", path, n, strerror(e));
    *data = p;
    *len = n;
    return 0;
}

void tb_unmap_file(const uint8_t *data, size_t len)
{
    if (data)
        munmap((void *)data, map_size(len));
}

void tb_release_map(const uint8_t *data, size_t len, size_t from, size_t to)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t a = (from + page - 1) / page * page;
    size_t b = to >= len ? map_size(len) : to / page * page;
    /* private, read-only and never written: no page holds anything the
     * file (or, past its end, a zero page) does not give again */
    if (data && a < b)
        madvise((void *)(data + a), b - a, MADV_DONTNEED);
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

int tb_mkdirs(const char *path, tb_err_t *err)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; ; s++) {
        if (*s == '/' || !*s) {
            char c = *s;
            *s = 0;
            if (mkdir(p, 0755) && errno != EEXIST)
                return tb_fail(err, "%s: cannot create the folder: %s", p, strerror(errno));
            *s = c;
            if (!c)
                break;
        }
    }
    return 0;
}
