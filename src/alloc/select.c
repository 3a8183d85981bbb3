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
    if (dra_map_put(&a->prog_by_expr, p->expr, len, (void *)(uintptr_t)(a->nprogs + 1))) {
        if (p->prog)
            a->ops.release(a->ops.ud, p->prog);
        return DRA_ENOMEM;
    }
    *id = (uint32_t)a->nprogs++;
    return DRA_OK;
}

static int eval_now(dra_allocator *a, const a_prog *p, a_dev *v, dra_diag *d)
{
    int result = 0;
    dra_err err;
    if (!v->prepared_ok && a->ops.prepare) {
        err = a->ops.prepare(a->ops.ud, v->s->driver, v->d, &v->prepared);
        if (err != DRA_OK)
            return err;
        v->prepared_ok = 1;
    }
    a->evals++;
    err = a->ops.eval(a->ops.ud, p->prog, v->s->driver, v->d, v->prepared, &result, d);
    return err != DRA_OK ? (int)err : result != 0;
}

int alloc_prog_eval(dra_allocator *a, uint32_t id, a_dev *v, dra_diag *d)
{
    const a_prog *p = &a->progs[id];
    int r;
    if (p->err != DRA_OK) {
        dra_diag_add(d, "", 0, 0, "%s", p->msg);
        return p->err;
    }
    if (id >= v->nselc) {
        uint32_t n = v->nselc ? v->nselc : 4;
        uint8_t *c;
        while (n <= id)
            n *= 2;
        if (!(c = dra_realloc(a->mem, v->selc, n)))
            return DRA_ENOMEM;
        memset(c + v->nselc, 0, n - v->nselc);
        v->selc = c;
        v->nselc = n;
    }
    switch (v->selc[id]) {
    case 1:
        return 0;
    case 2:
        return 1;
    default: /* unknown, or an error to report again with its message */
        r = eval_now(a, p, v, d);
        if (r == DRA_ENOMEM)
            return r;
        v->selc[id] = r < 0 ? 3 : (uint8_t)(r + 1);
        return r;
    }
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
