/* driver: the experiment table and the case context (see driver.h). */
#include "driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/file.h"

const xp_driver_t *const xp_drivers[] = {
    &xp_driver_selftest,
    &xp_driver_tokenize,
    &xp_driver_conform,
    &xp_driver_fuzz,
    &xp_driver_walk,
    &xp_driver_lookup,
    &xp_driver_slice,
    &xp_driver_index,
    &xp_driver_maskbench,
    &xp_driver_jsts,
    &xp_driver_llgtests,
    &xp_driver_larkfiles,
    &xp_driver_load,
    &xp_driver_soak,
    &xp_driver_serve,
    NULL,
};

const xp_driver_t *xp_driver_find(const char *name)
{
    for (size_t i = 0; xp_drivers[i]; i++)
        if (!strcmp(xp_drivers[i]->name, name))
            return xp_drivers[i];
    return NULL;
}

/* Callgrind collects by this function's name, which a gcc clone
 * (xp_measured_rep.constprop.0) would change; clang knows no noclone (nor
 * clones an extern function under another name). */
#ifdef __clang__
#define XP_NOCLONE
#else
#define XP_NOCLONE noclone,
#endif

__attribute__((noinline, XP_NOCLONE used)) int
xp_measured_rep(const xp_driver_t *d, void *state, unsigned rep, xp_qty_t *q,
                tb_err_t *err)
{
    int rc = d->rep(state, rep, q, err);
    /* an empty asm the compiler must assume reads q: keeps the work live */
    __asm__ volatile("" ::"r"(q) : "memory");
    return rc;
}

int xp_env_record(xp_env_t *env, const xp_meas_t *m, tb_err_t *err)
{
    if (tb_vec_push(&env->meas, *m))
        return tb_fail(err, "out of memory recording a measurement");
    return 0;
}

int xp_env_outcome(xp_env_t *env, const xp_outcome_t *o, tb_err_t *err)
{
    if (tb_vec_push(&env->outcomes, *o))
        return tb_fail(err, "out of memory recording an outcome");
    return 0;
}

int xp_env_input(xp_env_t *env, const char *role, const char *path, tb_err_t *err)
{
    if (env->skip_checksums)
        return 0;
    for (size_t i = 0; i < env->inputs.len; i++)
        if (!strcmp(env->inputs.data[i].path, path))
            return 0;
    xp_input_t in = {0};
    snprintf(in.role, sizeof in.role, "%s", role);
    snprintf(in.path, sizeof in.path, "%s", path);
    if (tb_file_sha256(path, in.sha256, err))
        return -1;
    if (tb_vec_push(&env->inputs, in))
        return tb_fail(err, "out of memory recording input %s", path);
    return 0;
}

void xp_env_free(xp_env_t *env)
{
    free(env->meas.data);
    free(env->inputs.data);
    free(env->outcomes.data);
    env->meas.data = NULL;
    env->inputs.data = NULL;
    env->outcomes.data = NULL;
    env->meas.len = env->meas.cap = env->inputs.len = env->inputs.cap = 0;
    env->outcomes.len = env->outcomes.cap = 0;
}
