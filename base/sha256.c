/* sha256: the compression function and padding of FIPS 180-4, section 6.2. */
#include "sha256.h"

#include <string.h>

static const uint32_t round_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void compress(uint32_t s[8], const uint8_t p[64])
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s[0], b = s[1], c = s[2], d = s[3];
    uint32_t e = s[4], f = s[5], g = s[6], h = s[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) +
                      ((e & f) ^ (~e & g)) + round_k[i] + w[i];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) +
                      ((a & b) ^ (a & c) ^ (b & c));
        h = g; g = f; f = e; e = d + t1;
        d = c; c = b; b = a; a = t1 + t2;
    }
    s[0] += a; s[1] += b; s[2] += c; s[3] += d;
    s[4] += e; s[5] += f; s[6] += g; s[7] += h;
}

/* The same compression with the SHA extensions (x86 since Goldmont and
 * Zen), which do two rounds an instruction: state0 holds A, B, E, F and
 * state1 C, D, G, H (lanes 3 to 0), as sha256rnds2 takes them; each call
 * does two rounds and leaves the new A, B, E, F in what held C, D, G, H,
 * so the two swap roles every other call.  The message schedule is msg1,
 * the word seven back (alignr) and msg2 on four words at a time. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define TB_SHA_NI 1

__attribute__((target("sha,ssse3,sse4.1"))) static void
compress_ni(uint32_t s[8], const uint8_t *p, size_t blocks)
{
    const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i state0 = _mm_set_epi32((int)s[0], (int)s[1], (int)s[4], (int)s[5]);
    __m128i state1 = _mm_set_epi32((int)s[2], (int)s[3], (int)s[6], (int)s[7]);
    for (; blocks--; p += 64) {
        __m128i save0 = state0, save1 = state1, w[4];
        for (int i = 0; i < 16; i++) {
            __m128i m;
            if (i < 4) {
                m = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i)),
                                     bswap);
            } else { /* words 4i .. 4i+3 from the four before them */
                m = _mm_sha256msg1_epu32(w[i % 4], w[(i + 1) % 4]);
                m = _mm_add_epi32(m, _mm_alignr_epi8(w[(i + 3) % 4], w[(i + 2) % 4], 4));
                m = _mm_sha256msg2_epu32(m, w[(i + 3) % 4]);
            }
            w[i % 4] = m;
            __m128i wk = _mm_add_epi32(m, _mm_loadu_si128((const __m128i *)(const void *)(round_k + 4 * i)));
            state1 = _mm_sha256rnds2_epu32(state1, state0, wk);
            state0 = _mm_sha256rnds2_epu32(state0, state1, _mm_shuffle_epi32(wk, 0x0E));
        }
        state0 = _mm_add_epi32(state0, save0);
        state1 = _mm_add_epi32(state1, save1);
    }
    uint32_t abef[4], cdgh[4];
    _mm_storeu_si128((__m128i *)(void *)abef, state0);
    _mm_storeu_si128((__m128i *)(void *)cdgh, state1);
    s[0] = abef[3], s[1] = abef[2], s[4] = abef[1], s[5] = abef[0];
    s[2] = cdgh[3], s[3] = cdgh[2], s[6] = cdgh[1], s[7] = cdgh[0];
}

static int has_sha_ni(void)
{
    static int known = -1;
    if (known < 0) {
        unsigned a, b, c, d;
        known = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b >> 29 & 1) &&
                __builtin_cpu_supports("ssse3") && __builtin_cpu_supports("sse4.1");
    }
    return known;
}
#endif

/* Compresses `blocks` whole blocks at p into s. */
static void compress_blocks(uint32_t s[8], const uint8_t *p, size_t blocks)
{
#ifdef TB_SHA_NI
    if (has_sha_ni()) {
        compress_ni(s, p, blocks);
        return;
    }
#endif
    for (; blocks--; p += 64)
        compress(s, p);
}

void tb_sha256_init(tb_sha256_t *h)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                   0xa54ff53a, 0x510e527f, 0x9b05688c,
                                   0x1f83d9ab, 0x5be0cd19};
    memcpy(h->state, iv, sizeof iv);
    h->total = 0;
    h->fill = 0;
}

void tb_sha256_update(tb_sha256_t *h, const void *data, size_t len)
{
    const uint8_t *p = data;
    h->total += len;
    while (len) {
        if (!h->fill && len >= 64) { /* whole blocks straight from the input */
            compress_blocks(h->state, p, len / 64);
            p += len / 64 * 64;
            len %= 64;
            continue;
        }
        size_t take = 64 - h->fill < len ? 64 - h->fill : len;
        memcpy(h->block + h->fill, p, take);
        h->fill += take;
        p += take;
        len -= take;
        if (h->fill == 64) {
            compress_blocks(h->state, h->block, 1);
            h->fill = 0;
        }
    }
}

void tb_sha256_final(tb_sha256_t *h, uint8_t digest[32])
{
    uint64_t bits = h->total * 8;
    uint8_t pad = 0x80;
    tb_sha256_update(h, &pad, 1);
    pad = 0;
    while (h->fill != 56)
        tb_sha256_update(h, &pad, 1);
    uint8_t len_be[8];
    for (int i = 0; i < 8; i++)
        len_be[i] = (uint8_t)(bits >> (56 - 8 * i));
    tb_sha256_update(h, len_be, 8);
    for (int i = 0; i < 8; i++) {
        digest[4 * i] = (uint8_t)(h->state[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(h->state[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(h->state[i] >> 8);
        digest[4 * i + 3] = (uint8_t)h->state[i];
    }
}

void tb_sha256(const void *data, size_t len, uint8_t digest[32])
{
    tb_sha256_t h;
    tb_sha256_init(&h);
    tb_sha256_update(&h, data, len);
    tb_sha256_final(&h, digest);
}

void tb_sha256_hex(const void *data, size_t len, char hex[65])
{
    uint8_t d[32];
    tb_sha256(data, len, d);
    tb_hex(d, 32, hex);
}

void tb_hex(const uint8_t *bytes, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * n] = 0;
}
