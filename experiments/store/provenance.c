/* provenance: collecting where a run ran (see provenance.h). */
#include "provenance.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifndef TB_CFLAGS
#define TB_CFLAGS "unknown"
#endif

/* First line of a command's output into buf ("" on failure). */
static int first_line(const char *cmd, char *buf, size_t size, int *lines)
{
    buf[0] = 0;
    *lines = 0;
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char line[512];
    while (fgets(line, sizeof line, p)) {
        if (!(*lines)++)
            snprintf(buf, size, "%.*s", (int)strcspn(line, "\n"), line);
    }
    return pclose(p) == 0 ? 0 : -1;
}

static void git_state(xp_prov_t *p, const char *root)
{
    char cmd[4200];
    int lines;
    snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse HEAD 2>/dev/null", root);
    if (strchr(root, '\'') || first_line(cmd, p->git_commit, sizeof p->git_commit, &lines) ||
        !p->git_commit[0]) {
        snprintf(p->git_commit, sizeof p->git_commit, "unknown");
        p->git_dirty = -1;
        return;
    }
    char ignored[8];
    snprintf(cmd, sizeof cmd,
             "git -C '%s' status --porcelain --untracked-files=no 2>/dev/null", root);
    p->git_dirty = first_line(cmd, ignored, sizeof ignored, &lines) ? -1 : lines > 0;
}

/* The value of the first "key : value" line of /proc/cpuinfo. */
static int cpuinfo_field(const char *key, char *buf, size_t size)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    int found = 0;
    size_t klen = strlen(key);
    while (f && !found && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!strncmp(line, key, klen) && colon && strspn(line + klen, " \t") == (size_t)(colon - line - (long)klen)) {
            colon += 1 + strspn(colon + 1, " ");
            snprintf(buf, size, "%.*s", (int)strcspn(colon, "\n"), colon);
            found = 1;
        }
    }
    if (f)
        fclose(f);
    return found;
}

/* The hypervisor and, separately, a container: this VM shows both. */
static void detect_virt(xp_prov_t *p)
{
    char vm[32], ct[32];
    int lines;
    /* systemd-detect-virt prints "none" and exits 1 when there is none */
    first_line("systemd-detect-virt --vm 2>/dev/null", vm, sizeof vm, &lines);
    first_line("systemd-detect-virt --container 2>/dev/null", ct, sizeof ct, &lines);
    if (!vm[0] || !strcmp(vm, "none")) {
        char flags[4096];
        int hyp = cpuinfo_field("flags", flags, sizeof flags) && strstr(flags, " hypervisor");
        snprintf(vm, sizeof vm, "%s", hyp ? "hypervisor (cpuinfo)" : vm[0] ? "none" : "unknown");
    }
    if (ct[0] && strcmp(ct, "none"))
        snprintf(p->virt, sizeof p->virt, "%.24s, container %.24s", vm, ct);
    else
        snprintf(p->virt, sizeof p->virt, "%s", vm);
}

static void detect_sources(xp_prov_t *p, xp_papi_t *papi)
{
    char why[512];
    size_t used = 0, size = sizeof p->sources_detail;
    p->sources = 0;
    if (xp_tsc_usable(why, sizeof why) && p->tsc_hz > 0)
        p->sources |= XP_SRC_TSC;
    used += (size_t)snprintf(p->sources_detail + used, size - used, "tsc: %s%s\n",
                             p->sources & XP_SRC_TSC ? "works, " : "unavailable, ", why);
    xp_papi_probe(papi);
    if (papi->ok)
        p->sources |= XP_SRC_PAPI;
    if (used < size)
        used += (size_t)snprintf(p->sources_detail + used, size - used, "papi: %s%s\n",
                                 papi->ok ? "works, " : "unavailable, ", papi->why);
    int cg = xp_callgrind_usable(why, sizeof why);
    if (cg)
        p->sources |= XP_SRC_CALLGRIND;
    if (used < size)
        snprintf(p->sources_detail + used, size - used, "callgrind: %s%s\n",
                 cg ? "works, " : "unavailable, ", why);
}

void xp_prov_collect(xp_prov_t *p, const char *root, xp_papi_t *papi)
{
    memset(p, 0, sizeof *p);
    git_state(p, root ? root : ".");
#ifdef __VERSION__
    snprintf(p->compiler, sizeof p->compiler, "%s %s",
#ifdef __clang__
             "clang",
#else
             "gcc",
#endif
             __VERSION__);
#endif
    snprintf(p->cflags, sizeof p->cflags, "%s", TB_CFLAGS);
    if (!cpuinfo_field("model name", p->cpu_model, sizeof p->cpu_model))
        snprintf(p->cpu_model, sizeof p->cpu_model, "unknown");
    p->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    p->tsc_hz = xp_tsc_measure_hz(100);
    struct utsname u;
    if (uname(&u) == 0) {
        snprintf(p->kernel, sizeof p->kernel, "%s %s %s", u.sysname, u.release, u.machine);
        snprintf(p->host, sizeof p->host, "%s", u.nodename);
    }
    detect_virt(p);
    detect_sources(p, papi);
    p->pinned_cpu = -1;
}

int xp_pin_cpu(int cpu, tb_err_t *err)
{
    if (cpu < 0)
        cpu = sched_getcpu();
    if (cpu < 0)
        return tb_fail(err, "sched_getcpu failed");
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set))
        return tb_fail(err, "cannot pin to CPU %d (sched_setaffinity)", cpu);
    return cpu;
}
