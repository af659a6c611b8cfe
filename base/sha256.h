/*
 * sha256: checksums of input files, recorded with every run so that a result
 * names exactly the vocabulary and corpus it was measured on (FIPS 180-4).
 */
#ifndef TB_SHA256_H
#define TB_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t state[8];
    uint64_t total;
    uint8_t block[64];
    size_t fill;
} tb_sha256_t;

void tb_sha256_init(tb_sha256_t *h);
void tb_sha256_update(tb_sha256_t *h, const void *data, size_t len);
void tb_sha256_final(tb_sha256_t *h, uint8_t digest[32]);

/* One-shot digest, raw and as 64 hex digits plus NUL. */
void tb_sha256(const void *data, size_t len, uint8_t digest[32]);
void tb_sha256_hex(const void *data, size_t len, char hex[65]);

/* Writes 2*n lowercase hex digits plus NUL. */
void tb_hex(const uint8_t *bytes, size_t n, char *out);

#endif
