/*
 * numrange: regexes of the JSON numbers in an interval (numrange.h).
 *
 * A non-negative number is an integer part I and a fraction F, compared
 * first by I (as integers: by length, then digit by digit) and then by F
 * (as digit strings, a missing digit being 0).  An interval [a, b] is cut
 * into: I = Ia with F above Fa; Ia < I < Ib with any F; I = Ib with F
 * below Fb (or, when Ia = Ib, F between both).  Integer ranges of equal
 * length are the classic digit-by-digit split; fraction bounds the same
 * over strings of any length.  Negative numbers are '-' and the interval
 * of their magnitudes.  Regex pieces are strings: NULL is the empty
 * language, "" the empty string.
 */
#include "numrange.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int oom, integer;
} nctx_t;

/* A formatted string, or NULL with oom set. */
__attribute__((format(printf, 2, 3))) static char *fmt(nctx_t *c, const char *f, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, f);
    if (vasprintf(&s, f, ap) < 0) {
        s = NULL;
        c->oom = 1;
    }
    va_end(ap);
    return s;
}

/* a|b (each freed; NULL is the empty language). */
static char *alt(nctx_t *c, char *a, char *b)
{
    if (!a || !b)
        return a ? a : b;
    char *s = fmt(c, "%s|%s", a, b);
    free(a);
    free(b);
    return s;
}

/* prefix then (?:x), x freed; NULL when x is. */
static char *then(nctx_t *c, const char *prefix, char *x)
{
    if (!x)
        return NULL;
    char *s = *x ? fmt(c, "%s(?:%s)", prefix, x) : fmt(c, "%s", prefix);
    free(x);
    return s;
}

/* n digits */
static char *digits(nctx_t *c, size_t n)
{
    return n == 0 ? fmt(c, "%s", "") : n == 1 ? fmt(c, "[0-9]") : fmt(c, "[0-9]{%zu}", n);
}

static char *class_then(nctx_t *c, char lo, char hi, size_t rest)
{
    char *d = digits(c, rest);
    char *s = lo == hi ? then(c, (char[]){lo, 0}, d)
                       : then(c, (char[]){'[', lo, '-', hi, ']', 0}, d);
    return s;
}

static int all_of(const char *s, size_t n, char d)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != d)
            return 0;
    return 1;
}

/* Strings of n digits >= s (up == 0) or <= s (up == 1). */
static char *one_side(nctx_t *c, const char *s, size_t n, int up)
{
    if (all_of(s, n, up ? '9' : '0'))
        return digits(c, n);
    char *r = then(c, (char[]){s[0], 0}, one_side(c, s + 1, n - 1, up));
    if (!up && s[0] < '9')
        r = alt(c, r, class_then(c, (char)(s[0] + 1), '9', n - 1));
    if (up && s[0] > '0')
        r = alt(c, r, class_then(c, '0', (char)(s[0] - 1), n - 1));
    return r;
}

/* Strings of n digits from x to y (x <= y). */
static char *same_len(nctx_t *c, const char *x, const char *y, size_t n)
{
    if (n == 0)
        return fmt(c, "%s", "");
    if (x[0] == y[0])
        return then(c, (char[]){x[0], 0}, same_len(c, x + 1, y + 1, n - 1));
    char *r = then(c, (char[]){x[0], 0}, one_side(c, x + 1, n - 1, 0));
    if (x[0] + 1 <= y[0] - 1)
        r = alt(c, r, class_then(c, (char)(x[0] + 1), (char)(y[0] - 1), n - 1));
    return alt(c, r, then(c, (char[]){y[0], 0}, one_side(c, y + 1, n - 1, 1)));
}

/* Compares non-negative integers without leading zeros. */
static int cmp_int(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la != lb)
        return la < lb ? -1 : 1;
    int r = strcmp(a, b);
    return (r > 0) - (r < 0);
}

/* Integer parts from lo to hi (NULL: no bound), without leading zeros. */
static char *int_range(nctx_t *c, const char *lo, const char *hi)
{
    if (hi && cmp_int(lo, hi) > 0)
        return NULL;
    size_t ll = strlen(lo), lh = hi ? strlen(hi) : ll;
    char *r = NULL, *a = malloc(lh + 1), *b = malloc(lh + 1);
    if (!a || !b)
        c->oom = 1;
    for (size_t n = ll; a && b && n <= lh; n++) {
        memset(a, '0', n);
        memset(b, '9', n);
        a[0] = '1';
        a[n] = b[n] = 0;
        r = alt(c, r, same_len(c, n == ll ? lo : a, hi && n == lh ? hi : b, n));
    }
    free(a);
    free(b);
    if (!hi)
        r = alt(c, r, fmt(c, "[1-9][0-9]{%zu,}", ll));
    return r;
}

/* s + 1 or s - 1 (s > 0 for -1), as a new string. */
static char *step(nctx_t *c, const char *s, int d)
{
    size_t n = strlen(s);
    char *r = malloc(n + 2);
    if (!r) {
        c->oom = 1;
        return NULL;
    }
    memcpy(r + 1, s, n + 1);
    r[0] = '0';
    for (size_t i = n; i > 0; i--) {
        if (d > 0 && r[i] == '9') {
            r[i] = '0';
        } else if (d < 0 && r[i] == '0') {
            r[i] = '9';
        } else {
            r[i] = (char)(r[i] + d);
            break;
        }
        if (i == 1)
            r[0] = '1';
    }
    size_t z = 0;
    while (r[z] == '0' && r[z + 1])
        z++;
    memmove(r, r + z, strlen(r + z) + 1);
    return r;
}

/* Non-empty digit strings t with 0.t >= 0.f (strict: >), f non-empty
 * without trailing zeros. */
static char *frac_ge(nctx_t *c, const char *f, int strict)
{
    char *r = f[0] < '9' ? fmt(c, "[%c-9][0-9]*", f[0] + 1) : NULL;
    char *rest = f[1] ? frac_ge(c, f + 1, strict)
                      : fmt(c, "%s", strict ? "[0-9]*[1-9][0-9]*" : "[0-9]*");
    return alt(c, r, then(c, (char[]){f[0], 0}, rest));
}

/* Non-empty digit strings t with 0.t <= 0.f (strict: <). */
static char *frac_le(nctx_t *c, const char *f, int strict)
{
    char *r = f[0] > '0' ? fmt(c, "[0-%c][0-9]*", f[0] - 1) : NULL;
    char *rest;
    if (!f[1]) {
        rest = strict ? NULL : fmt(c, "0*");
    } else {
        rest = frac_le(c, f + 1, strict);
        char *o = rest ? fmt(c, "(?:%s)?", rest) : NULL;
        free(rest);
        rest = o;
    }
    return alt(c, r, then(c, (char[]){f[0], 0}, rest));
}

/* Non-empty digit strings t with 0.a <= 0.t <= 0.b (strict ends
 * excluded), a <= b, either possibly empty (0). */
static char *frac_between(nctx_t *c, const char *a, int sa, const char *b, int sb)
{
    if (!*a && !*b)
        return sa || sb ? NULL : fmt(c, "0+");
    if (!*a && !sa)
        return frac_le(c, b, sb);
    char a0 = *a ? a[0] : '0', b0 = b[0];
    const char *a1 = *a ? a + 1 : a;
    if (a0 == b0) {
        /* t = a0 t': t' empty means 0.a0, which needs a' = 0 */
        char *sub = frac_between(c, a1, sa, b + 1, sb);
        int empty_ok = !*a1 && !sa && (b[1] || !sb);
        char *rest = sub && empty_ok ? fmt(c, "(?:%s)?", sub) : sub;
        if (rest != sub)
            free(sub);
        if (!rest && empty_ok)
            rest = fmt(c, "%s", "");
        return then(c, (char[]){a0, 0}, rest);
    }
    char *lo = *a1 ? frac_ge(c, a1, sa) : fmt(c, "%s", sa ? "[0-9]*[1-9][0-9]*" : "[0-9]*");
    char *r = then(c, (char[]){a0, 0}, lo);
    if (a0 + 1 <= b0 - 1)
        r = alt(c, r, fmt(c, "[%c-%c][0-9]*", a0 + 1, b0 - 1));
    char *hi;
    if (!b[1]) {
        hi = sb ? NULL : fmt(c, "0*");
    } else {
        char *s = frac_le(c, b + 1, sb);
        hi = s ? fmt(c, "(?:%s)?", s) : NULL;
        free(s);
    }
    return alt(c, r, then(c, (char[]){b0, 0}, hi));
}

/* The optional fraction part ("" = none written) of I.F with F between
 * the bounds' fractions; fa/fb NULL where that side is not bounded. */
static char *fraction(nctx_t *c, const char *fa, int sa, const char *fb, int sb)
{
    int none_ok = (!fa || (!*fa && !sa)) && (!fb || *fb || !sb);
    if (c->integer) /* 3.0 is the integer 3 (JSON Schema draft 6 on) */
        return !none_ok ? NULL : fmt(c, "%s", c->integer > 1 ? "(?:\\.0+)?" : "");
    char *t;
    if (fa && fb)
        t = frac_between(c, fa, sa, fb, sb);
    else if (fa && *fa)
        t = frac_ge(c, fa, sa);
    else if (fa)
        t = fmt(c, "%s", sa ? "[0-9]*[1-9][0-9]*" : "[0-9]+");
    else if (fb && *fb)
        t = frac_le(c, fb, sb);
    else if (fb)
        t = sb ? NULL : fmt(c, "0+");
    else
        t = fmt(c, "[0-9]+");
    char *r = t ? fmt(c, none_ok ? "(?:\\.(?:%s))?" : "\\.(?:%s)", t) : NULL;
    free(t);
    return r ? r : none_ok ? fmt(c, "%s", "") : NULL;
}

typedef struct {
    int neg;
    char ip[GR_NUM_MAX_DIGITS + 2], fp[GR_NUM_MAX_DIGITS + 2];
} dec_t;

static int dec_parse(const char *s, dec_t *d, tb_err_t *err)
{
    const char *p = s;
    memset(d, 0, sizeof *d);
    d->neg = *p == '-';
    p += d->neg;
    size_t n = strspn(p, "0123456789");
    if (!n || n > GR_NUM_MAX_DIGITS)
        return tb_fail(err, "bound '%s' is not a decimal of at most %d digits", s,
                       GR_NUM_MAX_DIGITS);
    while (n > 1 && *p == '0')
        p++, n--;
    memcpy(d->ip, p, n);
    p += n;
    if (*p == '.') {
        size_t m = strspn(++p, "0123456789");
        if (!m || m > GR_NUM_MAX_DIGITS)
            return tb_fail(err, "bound '%s' is not a decimal of at most %d digits", s,
                           GR_NUM_MAX_DIGITS);
        while (m && p[m - 1] == '0')
            m--;
        memcpy(d->fp, p, m);
        p += strspn(p, "0123456789");
    }
    if (*p)
        return tb_fail(err, "bound '%s' is not a decimal of at most %d digits", s,
                       GR_NUM_MAX_DIGITS);
    if (!strcmp(d->ip, "0") && !d->fp[0])
        d->neg = 0;
    return 0;
}

static int dec_cmp_abs(const dec_t *a, const dec_t *b)
{
    int r = cmp_int(a->ip, b->ip);
    if (!r)
        r = strcmp(a->fp, b->fp);
    return (r > 0) - (r < 0);
}

static int dec_sign(const dec_t *d)
{
    return d->neg ? -1 : (strcmp(d->ip, "0") || d->fp[0]) ? 1 : 0;
}

/* Non-negative texts (no sign) from a to b (b NULL: no bound). */
static char *nonneg(nctx_t *c, const dec_t *a, int sa, const dec_t *b, int sb)
{
    if (b && !strcmp(a->ip, b->ip))
        return then(c, a->ip, fraction(c, a->fp, sa, b->fp, sb));
    char *r = then(c, a->ip, fraction(c, a->fp, sa, NULL, 0));
    char *lo = step(c, a->ip, 1), *hi = b ? step(c, b->ip, -1) : NULL;
    if (lo && (!b || (hi && cmp_int(lo, hi) <= 0))) {
        char *mid = int_range(c, lo, hi);
        char *any = fraction(c, NULL, 0, NULL, 0);
        char *m = mid && any ? fmt(c, "(?:%s)%s", mid, any) : NULL;
        free(mid);
        free(any);
        r = alt(c, r, m);
    }
    free(lo);
    free(hi);
    if (b)
        r = alt(c, r, then(c, b->ip, fraction(c, NULL, 0, b->fp, sb)));
    return r;
}

#define EXP "(?:[eE][+-]?[0-9]+)?"

/* Where 0 is the only bound, exponents are kept: the mantissa's sign and
 * whether it is zero decide. */
static char *zero_bound(nctx_t *c, int above, int strict)
{
    const char *pos = "(?:[1-9][0-9]*(?:\\.[0-9]+)?|0\\.[0-9]*[1-9][0-9]*)" EXP;
    const char *zero = "0(?:\\.0+)?" EXP;
    if (strict)
        return fmt(c, "%s%s", above ? "" : "-", pos);
    return fmt(c, "-?%s|%s%s", zero, above ? "" : "-", pos);
}

int gr_num_range(tb_buf_t *out, const char *lo, int lo_strict, const char *hi,
                 int hi_strict, int integer, tb_err_t *err)
{
    dec_t a, b, zero;
    nctx_t c = {.integer = integer};  /* 2: integers may be written with ".0" */
    if ((lo && dec_parse(lo, &a, err)) || (hi && dec_parse(hi, &b, err)) ||
        dec_parse("0", &zero, err))
        return -1;
    if (lo && hi) {
        int sa = dec_sign(&a), sb = dec_sign(&b);
        int cmp = sa != sb ? (sa < sb ? -1 : 1) : sa < 0 ? -dec_cmp_abs(&a, &b) : dec_cmp_abs(&a, &b);
        if (cmp > 0 || (cmp == 0 && (lo_strict || hi_strict)))
            return tb_fail(err, "the interval from %s to %s is empty", lo, hi);
    }
    char *r = NULL;
    if (!integer && ((lo && !hi && dec_sign(&a) == 0) || (hi && !lo && dec_sign(&b) == 0))) {
        r = zero_bound(&c, lo != NULL, lo ? lo_strict : hi_strict);
    } else {
        /* x >= 0: from max(lo, 0) to hi. */
        int has_pos = !hi || dec_sign(&b) > 0 || (dec_sign(&b) == 0 && !hi_strict);
        if (has_pos) {
            int low_pos = lo && dec_sign(&a) >= 0;
            r = nonneg(&c, low_pos ? &a : &zero, low_pos && lo_strict, hi ? &b : NULL,
                       hi_strict);
        }
        /* x <= 0 written '-': magnitudes from max(-hi, 0) to -lo. */
        int has_neg = !lo || dec_sign(&a) < 0 || (dec_sign(&a) == 0 && !lo_strict);
        if (has_neg) {
            int high_neg = hi && dec_sign(&b) <= 0;
            dec_t ma = high_neg ? b : zero, mb = lo ? a : zero;
            ma.neg = mb.neg = 0;
            char *n = nonneg(&c, &ma, high_neg && hi_strict, lo ? &mb : NULL, lo_strict);
            r = alt(&c, r, n ? then(&c, "-", n) : NULL);
        }
    }
    int rc = 0;
    if (c.oom)
        rc = tb_fail(err, "out of memory");
    else if (!r)
        rc = tb_fail(err, "no %s lies in the interval from %s to %s",
                     integer ? "integer" : "number", lo ? lo : "-inf", hi ? hi : "inf");
    else if (tb_buf_put(out, "(?:", 3) || tb_buf_put(out, r, strlen(r)) || tb_buf_put(out, ")", 1))
        rc = tb_fail(err, "out of memory");
    free(r);
    return rc;
}

int gr_num_decimal(double v, char *buf, size_t size)
{
    if (!isfinite(v))
        return -1;
    char e[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(e, sizeof e, "%.*e", p - 1, v);
        if (strtod(e, NULL) == v)
            break;
    }
    /* e is [-]D[.DDD]e[+-]X: digits and the place of the point. */
    char dig[24];
    size_t nd = 0;
    const char *p = e + (e[0] == '-');
    for (; *p && *p != 'e'; p++)
        if (*p != '.')
            dig[nd++] = *p;
    long point = strtol(p + 1, NULL, 10) + 1; /* digits before the point */
    while (nd > 1 && dig[nd - 1] == '0')
        nd--;
    size_t need = (size_t)labs(point) + nd + 4;
    if (need > size || labs(point) > GR_NUM_MAX_DIGITS)
        return -1;
    char *o = buf;
    if (e[0] == '-' && !(nd == 1 && dig[0] == '0'))
        *o++ = '-';
    if (point <= 0) {
        o += sprintf(o, "0.");
        for (long i = 0; i < -point; i++)
            *o++ = '0';
        memcpy(o, dig, nd);
        o += nd;
    } else {
        for (long i = 0; i < point; i++)
            *o++ = (size_t)i < nd ? dig[i] : '0';
        if ((size_t)point < nd) {
            *o++ = '.';
            memcpy(o, dig + point, nd - (size_t)point);
            o += nd - (size_t)point;
        }
    }
    *o = 0;
    return 0;
}
