/*
 * quad: four 32-bit lanes at a time, in GCC's portable vector extension.
 *
 * Scans over short arrays of 32-bit entries (a grammar row's classes, a
 * word's pair ranks) compare four entries at once; lane comparisons give
 * all ones or zero per lane, and tb_quad_lanes turns them into four bits
 * (one SSE2 instruction on x86-64, plain code elsewhere).
 */
#ifndef TB_QUAD_H
#define TB_QUAD_H

#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <xmmintrin.h>
#endif

typedef uint32_t tb_quad_t __attribute__((vector_size(16)));

/* The four entries from p, which needs no alignment. */
static inline tb_quad_t tb_quad_at(const uint32_t *p)
{
    tb_quad_t q;
    memcpy(&q, p, sizeof q);
    return q;
}

/* Lane j of q (all ones or zero) as bit j. */
static inline unsigned tb_quad_lanes(tb_quad_t q)
{
#ifdef __SSE2__
    return (unsigned)_mm_movemask_ps((__m128)q);
#else
    return (q[0] & 1) | (q[1] & 2) | (q[2] & 4) | (q[3] & 8);
#endif
}

#endif
