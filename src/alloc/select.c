/*
 * select.c: selector programs for the allocator. Each distinct expression
 * string is compiled once per allocator (compile errors are remembered
 * too), and each (device, program) result is cached on the device, so a
 * selector runs at most once per device however many claims ask.
 */
#include <string.h>

#include "alloc_int.h"

dra_err alloc_prog_id(dra_allocator *a, const char *expr, uint32_t *id)
{
    size_t len = strlen(expr);
    uintptr_t v = (uintptr_t)dra_map_get(&a->prog_by_expr, expr, len);
    a_prog *p;
    dra_diag d;
    if (v) {
        *id = (uint32_t)(v - 1);
        return DRA_OK;
    }
    if (dra_grow(a->mem, (void **)&a->progs, &a->capprogs, a->nprogs + 1, sizeof *a->progs))
        return DRA_ENOMEM;
    p = &a->progs[a->nprogs];
    memset(p, 0, sizeof *p);
    if (!(p->expr = dra_arena_strndup(&a->arena, expr, len)))
        return DRA_ENOMEM;
    dra_diag_init(&d, a->mem);
    p->err = a->ops.compile(a->ops.ud, expr, &p->prog, &d);
    if (p->err == DRA_ENOMEM) {
        dra_diag_fini(&d);
        return DRA_ENOMEM;
    }
    if (p->err != DRA_OK) {
        dra_buf b;
        dra_buf_init(&b, a->mem);
        dra_diag_format(&d, &b);
        p->msg = dra_arena_strdup(&a->arena, b.p ? b.p : dra_strerror(p->err));
        dra_buf_fini(&b);
        p->prog = NULL;
    }
    dra_diag_fini(&d);
    p->driver_only = p->prog && a->ops.driver_only && a->ops.driver_only(a->ops.ud, expr, p->prog);
    if (dra_map_put(&a->prog_by_expr, p->expr, len, (void *)(uintptr_t)(a->nprogs + 1))) {
        if (p->prog)
            a->ops.release(a->ops.ud, p->prog);
        return DRA_ENOMEM;
    }
    *id = (uint32_t)a->nprogs++;
    return DRA_OK;
}

static int eval_now(dra_allocator *a, const a_prog *p, const char *driver,
                    const dra_alloc_device *dev, void **prepared, int *prepared_ok, dra_diag *d)
{
    int result = 0;
    dra_err err;
    if (!*prepared_ok && a->ops.prepare) {
        err = a->ops.prepare(a->ops.ud, driver, dev, prepared);
        if (err != DRA_OK)
            return err;
        *prepared_ok = 1;
    }
    a->evals++;
    err = a->ops.eval(a->ops.ud, p->prog, driver, dev, *prepared, &result, d);
    return err != DRA_OK ? (int)err : result != 0;
}

/* Grows a per-program result cache to hold |id|. */
static dra_err cache_fit(dra_allocator *a, uint8_t **c, uint32_t *n, uint32_t id)
{
    uint32_t m = *n ? *n : 4;
    uint8_t *p;
    if (id < *n)
        return DRA_OK;
    while (m <= id)
        m *= 2;
    if (!(p = dra_realloc(a->mem, *c, m)))
        return DRA_ENOMEM;
    memset(p + *n, 0, m - *n);
    *c = p;
    *n = m;
    return DRA_OK;
}

static a_drv *drv_get(dra_allocator *a, const char *driver)
{
    size_t len = strlen(driver);
    a_drv *x = dra_map_get(&a->drv, driver, len);
    if (x)
        return x;
    if (!(x = dra_arena_zalloc(&a->arena, sizeof *x)))
        return NULL;
    x->driver = driver;
    x->dummy.name = "";
    if (dra_map_put(&a->drv, driver, len, x))
        return NULL;
    return x;
}

/* Cached result of program |id|: 0/1, or <0 for an error (evaluated
 * again so the message reaches |d|). */
static int cached(dra_allocator *a, const a_prog *p, uint8_t *slot, const char *driver,
                  const dra_alloc_device *dev, void **prepared, int *prepared_ok, dra_diag *d)
{
    int r;
    if (*slot == 1 || *slot == 2)
        return *slot - 1;
    r = eval_now(a, p, driver, dev, prepared, prepared_ok, d);
    if (r != DRA_ENOMEM)
        *slot = r < 0 ? 3 : (uint8_t)(r + 1);
    return r;
}

int alloc_prog_eval(dra_allocator *a, uint32_t id, a_dev *v, dra_diag *d)
{
    const a_prog *p = &a->progs[id];
    int r;
    if (p->err != DRA_OK) {
        dra_diag_add(d, "", 0, 0, "%s", p->msg);
        return p->err;
    }
    if (cache_fit(a, &v->selc, &v->nselc, id) != DRA_OK)
        return DRA_ENOMEM;
    if (v->selc[id] == 1 || v->selc[id] == 2)
        return v->selc[id] - 1;
    if (p->driver_only) {
        a_drv *x = drv_get(a, v->s->driver);
        if (!x || cache_fit(a, &x->selc, &x->nselc, id) != DRA_OK)
            return DRA_ENOMEM;
        r = cached(a, p, &x->selc[id], x->driver, &x->dummy, &x->prepared, &x->prepared_ok, d);
    } else {
        r = cached(a, p, &v->selc[id], v->s->driver, v->d, &v->prepared, &v->prepared_ok, d);
    }
    if (r >= 0)
        v->selc[id] = (uint8_t)(r + 1);
    return r;
}

void alloc_drivers_fini(dra_allocator *a)
{
    for (size_t i = 0; i < a->drv.n; i++) {
        a_drv *x = a->drv.entries[i].key ? a->drv.entries[i].val : NULL;
        if (!x)
            continue;
        if (x->prepared && a->ops.unprepare)
            a->ops.unprepare(a->ops.ud, x->prepared);
        dra_free(a->mem, x->selc);
    }
    dra_map_fini(&a->drv);
}

void alloc_selectors_fini(dra_allocator *a)
{
    for (size_t i = 0; i < a->nprogs; i++)
        if (a->progs[i].prog)
            a->ops.release(a->ops.ud, a->progs[i].prog);
    dra_free(a->mem, a->progs);
    a->progs = NULL;
    a->nprogs = 0;
}
