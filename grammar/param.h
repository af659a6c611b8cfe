/*
 * param: the expressions of llguidance's parametric rules (its
 * docs/parametric.md), read by lark.c.  A rule `name::_` has one 64-bit
 * parameter p; a reference `name::ARG` gives it a value computed from the
 * referring rule's own p, and an alternative ending `%if COND` exists only
 * where COND holds of p:
 *
 *     start   : perm::0x0
 *     perm::_ : ""                 %if is_ones([0:3])
 *             | "a" perm::set_bit(0) %if bit_clear(0)
 *
 * ARG: a number (decimal or 0x hex), `_` (p itself), set_bit(k),
 * clear_bit(k), bit_and(v), bit_or(v), incr(R), decr(R) (saturating in the
 * bit range R).  COND: true, true(), bit_clear(k), bit_set(k), is_ones(R),
 * is_zeros(R), eq ne lt le gt ge (R, v), bit_count_eq ... _ge (R, k),
 * and(c, c), or(c, c), not(c).  R is [x:y] (bits x to y-1) or `_` (all 64).
 * lark.c expands every value reached from the start into a rule of its own.
 */
#ifndef GR_PARAM_H
#define GR_PARAM_H

#include <stdint.h>

#include "../base/buf.h"
#include "ebnf.h"

/* One node of an argument or a condition: op (param.c's table), the bit
 * range [x, y) or bit x, the number v, and the operand nodes a and b of
 * and/or/not (indices into the store). */
typedef struct {
    uint8_t op, x, y;
    uint64_t v;
    uint32_t a, b;
} gr_pnode_t;

typedef TB_VEC(gr_pnode_t) gr_pexprs_t;

/* Reads an argument (cond 0) or a condition (cond 1) at t into px; *id
 * is its root.  Errors name the line and column. */
int gr_param_read(gr_text_t *t, gr_pexprs_t *px, int cond, uint32_t *id);

/* A constant argument's value: whether node id is a number (*v). */
int gr_param_const(const gr_pexprs_t *px, uint32_t id, uint64_t *v);

/* A constant argument v as a new node (*id). */
int gr_param_number(gr_pexprs_t *px, uint64_t v, uint32_t *id);

/* The argument's value, or the condition's truth (0 or 1), for p. */
uint64_t gr_param_eval(const gr_pexprs_t *px, uint32_t id, uint64_t p);

#endif
