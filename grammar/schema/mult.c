/*
 * mult: multipleOf of any decimal m = M * 10^-k.  A number x (no
 * exponent) is a multiple iff its fraction has nothing but zeros after
 * k digits and the integer N = x * 10^k is divisible by M.  With
 * M = g * M' (g = 2^a 5^b, M' coprime to 10), N is divisible by M' iff
 * the number's digits read as one integer (the dot skipped, zeros
 * appended or dropped) are: a remainder automaton of M' states, written as
 * a regex by state elimination; the divisibility by g (and the fraction)
 * is a condition on N's last digits, written per ending.  The two are
 * top-level look-aheads on
 * the number lexeme (lexer/regex.h), so the lexer intersects them.
 * Refused, with the reason, where an automaton or its regex would be too
 * big (an M' above 64, more than 256 endings, a regex above 256 KiB).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MAX_MPRIME 64
#define MAX_G 1024 /* the powers of 2 and 5 (and at most 256 endings) */
#define MAX_REGEX (256u << 10)

typedef struct {
    size_t n;
    char **e; /* e[i*n+j]: regex of the edge i -> j, NULL: none */
    int over;
} gnfa_t;

static char **edge(gnfa_t *g, size_t i, size_t j) { return &g->e[i * g->n + j]; }

/* e := e | x (x taken) */
static void add_alt(gnfa_t *g, size_t i, size_t j, char *x)
{
    char **p = edge(g, i, j);
    if (!x)
        return;
    if (!*p) {
        *p = x;
        return;
    }
    char *s = NULL;
    if (asprintf(&s, "(?:%s|%s)", *p, x) < 0)
        s = NULL, g->over = 1;
    free(*p);
    free(x);
    *p = s;
    if (s && strlen(s) > MAX_REGEX)
        g->over = 1;
}

/* The regex from state 0 to state n-1 (the single final), eliminating
 * the states between, fewest paths through first; NULL when too big. */
static char *eliminate(gnfa_t *g)
{
    size_t n = g->n;
    char *alive = calloc(n, 1);
    if (!alive)
        return NULL;
    memset(alive, 1, n);
    for (size_t round = 1; round + 1 < n && !g->over; round++) {
        size_t best = 0, bc = SIZE_MAX;
        for (size_t q = 1; q + 1 < n; q++) {
            if (!alive[q])
                continue;
            size_t in = 0, out = 0;
            for (size_t p = 0; p < n; p++)
                if (alive[p] && p != q) {
                    in += *edge(g, p, q) != NULL;
                    out += *edge(g, q, p) != NULL;
                }
            if (in * out < bc)
                bc = in * out, best = q;
        }
        if (!best)
            break;
        size_t q = best;
        char *loop = *edge(g, q, q);
        for (size_t p = 0; p < n && !g->over; p++) {
            if (!alive[p] || p == q || !*edge(g, p, q))
                continue;
            for (size_t r = 0; r < n && !g->over; r++) {
                if (!alive[r] || r == q || !*edge(g, q, r))
                    continue;
                char *s = NULL;
                if (asprintf(&s, "(?:%s)%s%s%s(?:%s)", *edge(g, p, q), loop ? "(?:" : "",
                             loop ? loop : "", loop ? ")*" : "", *edge(g, q, r)) < 0) {
                    g->over = 1;
                    break;
                }
                if (strlen(s) > MAX_REGEX)
                    g->over = 1;
                add_alt(g, p, r, s);
            }
        }
        alive[q] = 0;
        for (size_t p = 0; p < n; p++) {
            free(*edge(g, p, q)), *edge(g, p, q) = NULL;
            free(*edge(g, q, p)), *edge(g, q, p) = NULL;
        }
    }
    free(alive);
    char *r = g->over ? NULL : *edge(g, 0, n - 1);
    if (r)
        *edge(g, 0, n - 1) = NULL;
    return r;
}

static void gnfa_free(gnfa_t *g)
{
    for (size_t i = 0; g->e && i < g->n * g->n; i++)
        free(g->e[i]);
    free(g->e);
}

/* A digit class of the digits set in mask (bit d). */
static char *digit_class(unsigned mask)
{
    char buf[32];
    size_t o = 0;
    int cnt = 0;
    for (int d = 0; d < 10; d++)
        cnt += (mask >> d) & 1;
    if (!cnt)
        return NULL;
    if (cnt == 1) {
        for (int d = 0; d < 10; d++)
            if ((mask >> d) & 1)
                buf[o++] = (char)('0' + d);
    } else {
        buf[o++] = '[';
        for (int d = 0; d < 10; d++)
            if ((mask >> d) & 1)
                buf[o++] = (char)('0' + d);
        buf[o++] = ']';
    }
    buf[o] = 0;
    return strdup(buf);
}

/* Digits (and the dot, a self-loop) read as one integer, divisible by m
 * (coprime to 10); the magnitude as JSON writes it. */
static char *coprime_regex(unsigned m, int *over)
{
    /* states: 0 start, 1 after a leading 0, 2.. 2+m-1 remainder after a
     * non-zero first digit, 2+m..2+2m-1 the same after the dot with no
     * digit yet, then the final */
    size_t n = 3 + 2 * (size_t)m, fin = n - 1;
    gnfa_t g = {.n = n, .e = calloc(n * n, sizeof(char *))};
    if (!g.e)
        return *over = 0, NULL;
    unsigned first[64] = {0};
    for (int d = 1; d < 10; d++)
        first[d % m] |= 1u << d;
    for (unsigned r = 0; r < m; r++)
        add_alt(&g, 0, 2 + r, digit_class(first[r]));
    add_alt(&g, 0, 1, strdup("0"));
    /* 0 then ".digits": the digits' remainder (leading zeros keep it 0) */
    add_alt(&g, 1, 2 + m + 0, strdup("\\."));
    add_alt(&g, 1, fin, strdup(""));
    for (unsigned r = 0; r < m; r++) {
        unsigned to[64] = {0};
        for (int d = 0; d < 10; d++)
            to[(10 * r + d) % m] |= 1u << d;
        for (unsigned s = 0; s < m; s++) {
            add_alt(&g, 2 + r, 2 + s, digit_class(to[s]));
            /* after the dot: at least one digit, then as before */
            add_alt(&g, 2 + m + r, 2 + s, digit_class(to[s]));
        }
        add_alt(&g, 2 + r, 2 + m + r, strdup("\\."));
    }
    add_alt(&g, 2, fin, strdup(""));
    /* the dot may appear once only: the states after it must not read
     * another; JSON's shape is checked by the number lexeme itself, so a
     * second dot here only widens this look-ahead where the lexeme
     * refuses anyway. */
    char *r = eliminate(&g);
    *over = g.over;
    gnfa_free(&g);
    return r;
}

/* Numbers whose value times 10^k is an integer N divisible by g = 2^a 5^b:
 * the last t = max(a, b) digits of N (int digits, then the first k of the
 * fraction, zeros past its end) are one of the 10^t / g multiples of g
 * below 10^t, and the fraction has only zeros after k digits.  Written
 * per multiple (the magnitude); NULL with *over when there are too many. */
static char *scaled_regex(uint64_t g, unsigned a, unsigned b, unsigned k, int *over)
{
    unsigned t = a > b ? a : b;
    uint64_t p10t = 1;
    for (unsigned i = 0; i < t; i++)
        p10t *= 10;
    if (p10t / g > 256 || t > 18) {
        *over = 1;
        return NULL;
    }
    tb_buf_t re = {0};
    int e = tb_buf_put(&re, "(?:", 3);
    char rho[24];
    for (uint64_t v = 0; v < p10t && !e; v += g) {
        snprintf(rho, sizeof rho, "%0*llu", (int)t, (unsigned long long)v);
        if (!t)
            rho[0] = 0;
        if (v && (e = tb_buf_putc(&re, '|')))
            break;
        /* the int part, and the k digits F of the fraction N takes */
        char F[64];
        const char *intre = "(?:0|[1-9][0-9]*)";
        char intbuf[96];
        unsigned free_f = 0; /* leading fraction digits that are free */
        if (t <= k) {
            free_f = k - t;
            memset(F, 'x', free_f);
            memcpy(F + free_f, rho, t);
        } else {
            unsigned sl = t - k;
            memcpy(F, rho + sl, k);
            char sig[24];
            memcpy(sig, rho, sl);
            sig[sl] = 0;
            const char *st = sig;
            while (*st == '0')
                st++;
            snprintf(intbuf, sizeof intbuf, "(?:[1-9][0-9]*%s|%s)", sig, *st ? st : "0");
            intre = intbuf;
        }
        F[k] = 0;
        e = e || tb_buf_put(&re, intre, strlen(intre)) || tb_buf_put(&re, "(?:", 3);
        /* fraction text of length L < k (the rest of F must be zeros), or
         * of k or more (then zeros) */
        int first = 1;
        for (unsigned L = 0; L <= k && !e; L++) {
            int ok = 1;
            for (unsigned q = L; q < k && L < k; q++)
                if (F[q] != 'x' && F[q] != '0')
                    ok = 0;
            if (!ok)
                continue;
            if (!first)
                e = tb_buf_putc(&re, '|');
            first = 0;
            if (L == 0 && k > 0) {
                continue; /* no fraction: an empty alternative */
            }
            e = e || tb_buf_put(&re, "\\.", 2);
            for (unsigned q = 0; q < L && !e; q++)
                e = F[q] == 'x' ? tb_buf_put(&re, "[0-9]", 5) : tb_buf_putc(&re, (uint8_t)F[q]);
            if (L == k)
                e = e || tb_buf_put(&re, "0*", 2);
        }
        if (k == 0)
            e = e || tb_buf_putc(&re, '|'); /* no fraction */
        e = e || tb_buf_putc(&re, ')');
    }
    e = e || tb_buf_putc(&re, ')') || tb_buf_putc(&re, 0);
    if (e) {
        tb_buf_free(&re);
        return NULL;
    }
    return (char *)re.data;
}

/* m as M * 10^-k from its shortest round-trip decimal; -1 if M passes
 * 2^53. */
static int decimal_parts(double m, uint64_t *M, unsigned *k)
{
    char buf[64];
    int p;
    for (p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, m);
        if (strtod(buf, NULL) == m)
            break;
    }
    /* buf: d.ddddde[+-]X */
    char *e = strchr(buf, 'e');
    if (!e)
        return -1;
    long ex = strtol(e + 1, NULL, 10);
    uint64_t v = 0;
    int nd = 0;
    for (char *q = buf; q < e; q++)
        if (*q >= '0' && *q <= '9') {
            if (v > (1ull << 53) / 10)
                return -1;
            v = v * 10 + (uint64_t)(*q - '0');
            nd++;
        }
    /* value = v * 10^(ex - (nd - 1)) */
    long sc = ex - (nd - 1);
    while (sc > 0) {
        if (v > (1ull << 53) / 10)
            return -1;
        v *= 10, sc--;
    }
    while (sc < 0 && v % 10 == 0)
        v /= 10, sc++;
    if (-sc > 300)
        return -1;
    *M = v;
    *k = (unsigned)-sc;
    return 0;
}

int sc_multiple_of(sc_t *c, json_t *mo, const char *ptr, int integer, tb_buf_t *re)
{
    double m = json_number_value(mo);
    if (!json_is_number(mo) || !(m > 0) || !isfinite(m))
        return sc_fail(c, ptr, "'multipleOf' must be a number above 0");
    uint64_t M;
    unsigned k;
    if (decimal_parts(m, &M, &k) || !M)
        return sc_fail(c, ptr, "'multipleOf' %.17g: not a decimal written here", m);
    uint64_t g = 1, mp = M;
    while (mp % 2 == 0)
        mp /= 2, g *= 2;
    while (mp % 5 == 0)
        mp /= 5, g *= 5;
    /* every integer is a multiple of 1/n (0.5, 0.25, 0.2...) */
    uint64_t p10 = 1;
    for (unsigned i = 0; i < k && p10 <= (1ull << 53) / 10; i++)
        p10 *= 10;
    if (integer && mp == 1 && k <= 15 && p10 % g == 0)
        return 0;
    if (mp > MAX_MPRIME || g > MAX_G || k > 30)
        return sc_fail(c, ptr, "'multipleOf' %.17g is not supported: divisibility by %llu "
                       "needs more states than written here (its factor prime to 10 is "
                       "%llu, at most %u)", m, (unsigned long long)M,
                       (unsigned long long)mp, MAX_MPRIME);
    int over = 0, e = 0;
    char *a = mp > 1 ? coprime_regex((unsigned)mp, &over) : NULL;
    unsigned pa = 0, pb = 0;
    for (uint64_t x = g; x % 2 == 0; x /= 2)
        pa++;
    for (uint64_t x = g; x % 5 == 0; x /= 5)
        pb++;
    char *b = !over && (mp == 1 || a) ? scaled_regex(g, pa, pb, k, &over) : NULL;
    if (!over && a && b)
        e = tb_buf_put(re, "(?=-?(?:", 8) || tb_buf_put(re, a, strlen(a)) ||
            tb_buf_put(re, ")$)", 3);
    if (!over && b)
        e = e || tb_buf_put(re, "(?=-?(?:", 8) || tb_buf_put(re, b, strlen(b)) ||
            tb_buf_put(re, ")$)", 3);
    free(a);
    free(b);
    if (over)
        return sc_fail(c, ptr, "'multipleOf' %.17g is not supported: its multiples need "
                       "more than 256 endings or a regex above %u KiB", m, MAX_REGEX >> 10);
    if (e || !b)
        return sc_oom(c);
    return 0;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b, b = t;
    }
    return a;
}

json_t *sc_multiple_lcm(json_t *a, json_t *b)
{
    uint64_t ma, mb;
    unsigned ka, kb;
    if (!json_is_number(a) || !json_is_number(b) || !(json_number_value(a) > 0) ||
        !(json_number_value(b) > 0) || decimal_parts(json_number_value(a), &ma, &ka) ||
        decimal_parts(json_number_value(b), &mb, &kb))
        return NULL;
    unsigned K = ka > kb ? ka : kb;
    for (unsigned i = ka; i < K; i++)
        if ((ma *= 10) > (1ull << 53))
            return NULL;
    for (unsigned i = kb; i < K; i++)
        if ((mb *= 10) > (1ull << 53))
            return NULL;
    uint64_t l = ma / gcd(ma, mb);
    if (l > (1ull << 53) / mb)
        return NULL;
    l *= mb;
    char buf[64];
    snprintf(buf, sizeof buf, "%llue-%u", (unsigned long long)l, K);
    double v = strtod(buf, NULL);
    uint64_t mv;
    unsigned kv;
    /* only where the double is that decimal */
    if (decimal_parts(v, &mv, &kv))
        return NULL;
    while (kv < K && mv <= (1ull << 53) / 10)
        mv *= 10, kv++;
    if (kv != K || mv != l)
        return NULL;
    return l == (uint64_t)v && !K ? json_integer((json_int_t)l) : json_real(v);
}
