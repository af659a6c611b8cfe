/*
 * file: whole-file reads with a size limit, so that a corrupt length or a
 * wrong path gives a message instead of an unbounded allocation.
 */
#ifndef TB_FILE_H
#define TB_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Largest input file tokbench reads whole (vocabularies reach ~35 MB). */
#define TB_FILE_MAX ((size_t)1 << 30)

/* Reads `path` into a malloc'd buffer (NUL-terminated one past *len). */
int tb_read_file(const char *path, uint8_t **data, size_t *len, tb_err_t *err);

/* Maps `path` read-only into memory (NUL-terminated one past *len, like
 * tb_read_file): the pages of the page cache are used as they are, where a
 * read would clear fresh pages and copy the file into them, the larger cost
 * of loading a big vocabulary on a virtual machine.  Undone with
 * tb_unmap_file(*data, *len). */
int tb_map_file(const char *path, const uint8_t **data, size_t *len,
                tb_err_t *err);
void tb_unmap_file(const uint8_t *data, size_t len);
/* Gives back the resident pages that lie wholly within bytes [from, to)
 * of a tb_map_file mapping of len bytes (to == len: to the mapping's
 * end), which stays valid: a later read faults them in again from the
 * file.  For a loader done with a part of its file that still builds
 * tables, so that its peak does not hold that part beside its copy. */
void tb_release_map(const uint8_t *data, size_t len, size_t from, size_t to);

/* Creates the folder `path` and those above it that are missing. */
int tb_mkdirs(const char *path, tb_err_t *err);

/* sha256 of a file as 64 lowercase hex digits plus NUL. */
int tb_file_sha256(const char *path, char hex[65], tb_err_t *err);

#endif
