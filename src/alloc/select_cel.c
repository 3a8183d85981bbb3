/*
 * select_cel.c: the default selector backend, the CEL engine with
 * Kubernetes' DRA environment. One env and one VM per allocator; each
 * device is prepared once (attributes indexed for fast lookup).
 */
#include <string.h>

#include "alloc_int.h"

typedef struct cel_be {
    const dra_mem *mem;
    dra_cel_env *env;
    dra_cel_vm *vm;
} cel_be;

typedef struct cel_dev {
    dra_cel_device dev;
    dra_cel_capacity *caps;
    dra_cel_prepared *pd;
} cel_dev;

static dra_err be_compile(void *ud, const char *expr, void **prog, dra_diag *d)
{
    cel_be *b = ud;
    return dra_cel_compile(b->env, expr, strlen(expr), (dra_cel_program **)prog, d);
}

static void be_release(void *ud, void *prog)
{
    (void)ud;
    dra_cel_program_unref(prog);
}

static void be_unprepare(void *ud, void *prepared)
{
    cel_be *b = ud;
    cel_dev *cd = prepared;
    if (!cd)
        return;
    dra_cel_prepared_free(cd->pd);
    dra_free(b->mem, cd->caps);
    dra_free(b->mem, cd);
}

static dra_err be_prepare(void *ud, const char *driver, const dra_alloc_device *dev,
                          void **prepared)
{
    cel_be *b = ud;
    cel_dev *cd = dra_calloc(b->mem, 1, sizeof *cd);
    dra_err err;
    if (!cd)
        return DRA_ENOMEM;
    cd->caps = dra_calloc(b->mem, dev->ncaps + 1, sizeof *cd->caps);
    if (!cd->caps) {
        dra_free(b->mem, cd);
        return DRA_ENOMEM;
    }
    for (size_t i = 0; i < dev->ncaps; i++) {
        cd->caps[i].name = dev->caps[i].name;
        cd->caps[i].value = dev->caps[i].value;
    }
    cd->dev.driver = driver;
    cd->dev.attrs = dev->attrs;
    cd->dev.nattrs = dev->nattrs;
    cd->dev.caps = cd->caps;
    cd->dev.ncaps = dev->ncaps;
    cd->dev.allow_multiple_allocations = dev->allow_multiple_allocations;
    err = dra_cel_device_prepare(b->mem, &cd->dev, &cd->pd);
    if (err != DRA_OK) {
        be_unprepare(ud, cd);
        return err;
    }
    *prepared = cd;
    return DRA_OK;
}

static dra_err be_eval(void *ud, void *prog, const char *driver, const dra_alloc_device *dev,
                       void *prepared, int *result, dra_diag *d)
{
    cel_be *b = ud;
    cel_dev *cd = prepared;
    (void)driver;
    (void)dev;
    return dra_cel_eval_device(prog, b->vm, cd->pd, result, d);
}

dra_err alloc_cel_backend(dra_allocator *a)
{
    cel_be *b = dra_calloc(a->mem, 1, sizeof *b);
    dra_err err;
    if (!b)
        return DRA_ENOMEM;
    b->mem = a->mem;
    a->cel_ud = b;
    if ((err = dra_cel_env_new_dra(a->mem, NULL, &b->env)) != DRA_OK)
        return err;
    if ((err = dra_cel_vm_new(a->mem, &b->vm)) != DRA_OK)
        return err;
    a->ops.ud = b;
    a->ops.compile = be_compile;
    a->ops.release = be_release;
    a->ops.prepare = be_prepare;
    a->ops.unprepare = be_unprepare;
    a->ops.eval = be_eval;
    return DRA_OK;
}

void alloc_cel_backend_free(dra_allocator *a)
{
    cel_be *b = a->cel_ud;
    if (!b)
        return;
    dra_cel_vm_free(b->vm);
    dra_cel_env_free(b->env);
    dra_free(a->mem, b);
    a->cel_ud = NULL;
}
