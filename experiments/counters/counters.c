/* counters: source names and the time stamp counter (see counters.h). */
#include "counters.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <stdio.h>
#include <string.h>
#include <time.h>

static const struct {
    const char *name;
    unsigned bit;
} source_names[] = {
    {"tsc", XP_SRC_TSC},
    {"papi", XP_SRC_PAPI},
    {"callgrind", XP_SRC_CALLGRIND},
};

int xp_sources_parse(const char *s, unsigned *mask, tb_err_t *err)
{
    *mask = 0;
    for (const char *w = s ? s : ""; *w;) {
        w += strspn(w, " +,;\t");
        size_t n = strcspn(w, " +,;\t");
        if (!n)
            break;
        unsigned bit = 0;
        if (n == 3 && !strncmp(w, "all", 3))
            bit = XP_SRC_ALL;
        for (size_t i = 0; i < sizeof source_names / sizeof *source_names; i++)
            if (strlen(source_names[i].name) == n && !strncmp(w, source_names[i].name, n))
                bit = source_names[i].bit;
        if (!bit)
            return tb_fail(err, "unknown counter source '%.*s' (tsc, papi, "
                           "callgrind or all)", (int)n, w);
        *mask |= bit;
        w += n;
    }
    if (!*mask)
        *mask = XP_SRC_TSC;
    return 0;
}

const char *xp_sources_format(unsigned mask, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof source_names / sizeof *source_names; i++)
        if (mask & source_names[i].bit && used < size)
            used += (size_t)snprintf(buf + used, size - used, "%s%s",
                                     used ? "+" : "", source_names[i].name);
    return buf;
}

int xp_tsc_rdtscp;

int xp_tsc_usable(char *why, size_t size)
{
#if !defined(__x86_64__)
    snprintf(why, size, "not an x86-64 CPU: no TSC");
    return 0;
#else
    unsigned a, b, c, d;
    xp_tsc_rdtscp = __get_cpuid(0x80000001, &a, &b, &c, &d) && (d & (1u << 27));
    /* Without an invariant TSC the counter follows frequency changes, so
     * reference cycles would not be comparable across repetitions. */
    if (!__get_cpuid(0x80000007, &a, &b, &c, &d) || !(d & (1u << 8))) {
        snprintf(why, size, "the TSC is not invariant (CPUID 0x80000007 EDX bit 8)");
        return 0;
    }
    snprintf(why, size, "%s with an invariant TSC",
             xp_tsc_rdtscp ? "rdtscp" : "lfence; rdtsc (the CPU shows no rdtscp)");
    return 1;
#endif
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One estimate: TSC ticks per second of the monotonic raw clock. */
static double one_estimate(unsigned ms)
{
    struct timespec nap = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    double t0 = now_s();
    uint64_t c0 = xp_tsc_end();
    nanosleep(&nap, NULL);
    double t1 = now_s();
    uint64_t c1 = xp_tsc_end();
    return t1 > t0 ? (double)(c1 - c0) / (t1 - t0) : 0;
}

double xp_tsc_measure_hz(unsigned ms)
{
    if (!ms)
        ms = 1;
    double e[3];
    for (int i = 0; i < 3; i++)
        e[i] = one_estimate(ms);
    /* the median of three discards one disturbed estimate either way */
    double lo = e[0] < e[1] ? e[0] : e[1], hi = e[0] < e[1] ? e[1] : e[0];
    return e[2] < lo ? lo : e[2] > hi ? hi : e[2];
}
