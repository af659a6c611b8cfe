/*
 * param: reading and evaluating the arguments and conditions of
 * llguidance's parametric rules (param.h).  Each is a function call
 * f(operands) whose operand shape the table below gives; nested
 * conditions (and, or, not) are nodes of the same store.
 */
#include "param.h"

#include <string.h>

/* Operand shapes: a bit index, a number, a bit range, a range and a
 * number, conditions. */
enum { S_NONE, S_BIT, S_NUM, S_RANGE, S_RANGE_NUM, S_COND, S_COND2 };

enum {
    A_NUM, A_SELF, A_SET_BIT, A_CLEAR_BIT, A_AND, A_OR, A_INCR, A_DECR, /* arguments */
    C_TRUE, C_BIT_CLEAR, C_BIT_SET, C_ONES, C_ZEROS, C_EQ, C_NE, C_LT, C_LE, C_GT, C_GE,
    C_CNT_EQ, C_CNT_NE, C_CNT_LT, C_CNT_LE, C_CNT_GT, C_CNT_GE, C_AND, C_OR, C_NOT, NOPS
};

static const struct {
    const char *name;
    uint8_t shape, cond;
} OPS[NOPS] = {
    [A_NUM] = {"", S_NONE, 0},
    [A_SELF] = {"_", S_NONE, 0},
    [A_SET_BIT] = {"set_bit", S_BIT, 0},
    [A_CLEAR_BIT] = {"clear_bit", S_BIT, 0},
    [A_AND] = {"bit_and", S_NUM, 0},
    [A_OR] = {"bit_or", S_NUM, 0},
    [A_INCR] = {"incr", S_RANGE, 0},
    [A_DECR] = {"decr", S_RANGE, 0},
    [C_TRUE] = {"true", S_NONE, 1},
    [C_BIT_CLEAR] = {"bit_clear", S_BIT, 1},
    [C_BIT_SET] = {"bit_set", S_BIT, 1},
    [C_ONES] = {"is_ones", S_RANGE, 1},
    [C_ZEROS] = {"is_zeros", S_RANGE, 1},
    [C_EQ] = {"eq", S_RANGE_NUM, 1},
    [C_NE] = {"ne", S_RANGE_NUM, 1},
    [C_LT] = {"lt", S_RANGE_NUM, 1},
    [C_LE] = {"le", S_RANGE_NUM, 1},
    [C_GT] = {"gt", S_RANGE_NUM, 1},
    [C_GE] = {"ge", S_RANGE_NUM, 1},
    [C_CNT_EQ] = {"bit_count_eq", S_RANGE_NUM, 1},
    [C_CNT_NE] = {"bit_count_ne", S_RANGE_NUM, 1},
    [C_CNT_LT] = {"bit_count_lt", S_RANGE_NUM, 1},
    [C_CNT_LE] = {"bit_count_le", S_RANGE_NUM, 1},
    [C_CNT_GT] = {"bit_count_gt", S_RANGE_NUM, 1},
    [C_CNT_GE] = {"bit_count_ge", S_RANGE_NUM, 1},
    [C_AND] = {"and", S_COND2, 1},
    [C_OR] = {"or", S_COND2, 1},
    [C_NOT] = {"not", S_COND, 1},
};

/* Deepest nesting of and/or/not (evaluation recurses). */
#define MAX_DEPTH 64

typedef struct {
    gr_text_t *t;
    gr_pexprs_t *px;
    unsigned depth;
} reader_t;

static void blank(gr_text_t *t)
{
    while (gr_text_at(t, 0) == ' ' || gr_text_at(t, 0) == '\t')
        gr_text_skip(t, 1);
}

static int is_word_char(uint8_t c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int punct(reader_t *r, char c)
{
    blank(r->t);
    if (gr_text_at(r->t, 0) != (uint8_t)c)
        return gr_text_fail(r->t, gr_text_pos(r->t), "expected '%c' in a parametric rule's "
                            "expression", c);
    gr_text_skip(r->t, 1);
    return 0;
}

/* A decimal or 0x hexadecimal 64-bit number. */
static int number(reader_t *r, uint64_t *v)
{
    gr_text_t *t = r->t;
    blank(t);
    gr_pos_t pos = gr_text_pos(t);
    int hex = gr_text_at(t, 0) == '0' && (gr_text_at(t, 1) == 'x' || gr_text_at(t, 1) == 'X');
    unsigned base = hex ? 16 : 10, digits = 0;
    if (hex)
        gr_text_skip(t, 2);
    *v = 0;
    for (;; digits++) {
        uint8_t c = gr_text_at(t, 0);
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                     : hex && (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (unsigned)((c | 0x20) - 'a') + 10u
                                                                     : 99u;
        if (d == 99u)
            break;
        if (*v > (UINT64_MAX - d) / base)
            return gr_text_fail(t, pos, "number above 64 bits");
        *v = *v * base + d;
        gr_text_skip(t, 1);
    }
    if (!digits || is_word_char(gr_text_at(t, 0)))
        return gr_text_fail(t, pos, "expected a number");
    return 0;
}

/* A bit index 0..63 (limit 64: a range's end). */
static int bit(reader_t *r, uint8_t *b, unsigned limit)
{
    uint64_t v;
    blank(r->t);
    gr_pos_t pos = gr_text_pos(r->t);
    if (number(r, &v))
        return -1;
    if (v > limit)
        return gr_text_fail(r->t, pos, "bit %llu out of range (0 to %u)", (unsigned long long)v,
                            limit);
    *b = (uint8_t)v;
    return 0;
}

/* [x:y] or _ (every bit). */
static int range(reader_t *r, gr_pnode_t *n)
{
    blank(r->t);
    if (gr_text_at(r->t, 0) == '_' && !is_word_char(gr_text_at(r->t, 1))) {
        gr_text_skip(r->t, 1);
        n->x = 0, n->y = 64;
        return 0;
    }
    gr_pos_t pos = gr_text_pos(r->t);
    if (punct(r, '[') || bit(r, &n->x, 63) || punct(r, ':') || bit(r, &n->y, 64) ||
        punct(r, ']'))
        return -1;
    return n->x < n->y ? 0 : gr_text_fail(r->t, pos, "empty bit range [%u:%u]", n->x, n->y);
}

static int read_node(reader_t *r, int cond, uint32_t *id);

static int operands(reader_t *r, gr_pnode_t *n)
{
    switch (OPS[n->op].shape) {
    case S_BIT:
        return bit(r, &n->x, 63);
    case S_NUM:
        return number(r, &n->v);
    case S_RANGE:
        return range(r, n);
    case S_RANGE_NUM:
        return range(r, n) || punct(r, ',') || number(r, &n->v);
    case S_COND:
        return read_node(r, 1, &n->a);
    case S_COND2:
        return read_node(r, 1, &n->a) || punct(r, ',') || read_node(r, 1, &n->b);
    }
    return 0;
}

static int read_node(reader_t *r, int cond, uint32_t *id)
{
    gr_text_t *t = r->t;
    blank(t);
    gr_pos_t pos = gr_text_pos(t);
    if (++r->depth > MAX_DEPTH)
        return gr_text_fail(t, pos, "conditions nested more than %d deep", MAX_DEPTH);
    gr_pnode_t n = {0};
    size_t at = t->i, len = 0;
    while (is_word_char(gr_text_at(t, len)))
        len++;
    if (!cond && len && gr_text_at(t, 0) >= '0' && gr_text_at(t, 0) <= '9') {
        n.op = A_NUM;
        if (number(r, &n.v))
            return -1;
    } else {
        while (n.op < NOPS && (OPS[n.op].cond != cond || strlen(OPS[n.op].name) != len ||
                               memcmp(OPS[n.op].name, t->s + at, len)))
            n.op++;
        if (!len || n.op == NOPS)
            return gr_text_fail(t, pos, "unknown %s '%.*s' (docs/grammars.md lists them)",
                                cond ? "condition" : "parameter function", (int)len, t->s + at);
        gr_text_skip(t, len);
        blank(t);
        int call = gr_text_at(t, 0) == '(';
        if (!call && OPS[n.op].shape != S_NONE)
            return gr_text_fail(t, pos, "%s needs its operands in ( )", OPS[n.op].name);
        if (call && (punct(r, '(') || operands(r, &n) || punct(r, ')')))
            return -1;
        if (call && n.op == A_SELF)
            return gr_text_fail(t, pos, "_ takes no operands");
    }
    r->depth--;
    *id = (uint32_t)r->px->len;
    return tb_vec_push(r->px, n) ? tb_fail(t->err, "out of memory") : 0;
}

int gr_param_read(gr_text_t *t, gr_pexprs_t *px, int cond, uint32_t *id)
{
    reader_t r = {t, px, 0};
    return read_node(&r, cond, id);
}

int gr_param_const(const gr_pexprs_t *px, uint32_t id, uint64_t *v)
{
    *v = px->data[id].v;
    return px->data[id].op == A_NUM;
}

int gr_param_number(gr_pexprs_t *px, uint64_t v, uint32_t *id)
{
    *id = (uint32_t)px->len;
    return tb_vec_push(px, ((gr_pnode_t){.op = A_NUM, .v = v}));
}

/* The bits [x, y) of p (none for a node without a range: y is 0). */
static uint64_t field(uint64_t p, const gr_pnode_t *n, uint64_t *mask)
{
    unsigned w = n->y > n->x ? (unsigned)(n->y - n->x) : 0;
    *mask = w == 64 ? UINT64_MAX : ((uint64_t)1 << w) - 1;
    return (p >> n->x) & *mask;
}

uint64_t gr_param_eval(const gr_pexprs_t *px, uint32_t id, uint64_t p)
{
    const gr_pnode_t *n = &px->data[id];
    uint64_t one = (uint64_t)1 << n->x, mask, f = field(p, n, &mask);
    int cnt = __builtin_popcountll(f);
    switch (n->op) {
    case A_NUM: return n->v;
    case A_SELF: return p;
    case A_SET_BIT: return p | one;
    case A_CLEAR_BIT: return p & ~one;
    case A_AND: return p & n->v;
    case A_OR: return p | n->v;
    case A_INCR: return f == mask ? p : p + one;
    case A_DECR: return f == 0 ? p : p - one;
    case C_TRUE: return 1;
    case C_BIT_CLEAR: return !(p & one);
    case C_BIT_SET: return !!(p & one);
    case C_ONES: return f == mask;
    case C_ZEROS: return f == 0;
    case C_EQ: return f == n->v;
    case C_NE: return f != n->v;
    case C_LT: return f < n->v;
    case C_LE: return f <= n->v;
    case C_GT: return f > n->v;
    case C_GE: return f >= n->v;
    case C_CNT_EQ: return (uint64_t)cnt == n->v;
    case C_CNT_NE: return (uint64_t)cnt != n->v;
    case C_CNT_LT: return (uint64_t)cnt < n->v;
    case C_CNT_LE: return (uint64_t)cnt <= n->v;
    case C_CNT_GT: return (uint64_t)cnt > n->v;
    case C_CNT_GE: return (uint64_t)cnt >= n->v;
    case C_AND: return gr_param_eval(px, n->a, p) && gr_param_eval(px, n->b, p);
    case C_OR: return gr_param_eval(px, n->a, p) || gr_param_eval(px, n->b, p);
    default: return !gr_param_eval(px, n->a, p); /* C_NOT */
    }
}
