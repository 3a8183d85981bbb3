/* Diagnostics: the list of errors an operation reports, each with the
 * field path or source position it concerns. Recording never fails the
 * caller's operation; running out of memory only sets |oom|. */
#include <stdio.h>
#include <string.h>

#include "dra/base.h"

void dra_diag_init(dra_diag *d, const dra_mem *mem)
{
    memset(d, 0, sizeof *d);
    d->mem = mem;
}

void dra_diag_clear(dra_diag *d)
{
    for (size_t i = 0; i < d->n; i++) {
        dra_free(d->mem, d->v[i].path);
        dra_free(d->mem, d->v[i].msg);
    }
    d->n = 0;
    d->dropped = 0;
}

void dra_diag_fini(dra_diag *d)
{
    dra_diag_clear(d);
    dra_free(d->mem, d->v);
    d->v = NULL;
    d->cap = 0;
}

dra_err dra_diag_vadd(dra_diag *d, const char *path, int line, int col,
                      const char *fmt, va_list ap)
{
    dra_buf b;
    dra_diag_entry *e;
    void *v;
    if (!d)
        return DRA_OK;
    if (d->max && d->n >= d->max) {
        d->dropped++;
        return DRA_OK;
    }
    v = d->v;
    if (dra_grow(d->mem, &v, &d->cap, d->n + 1, sizeof *d->v) != DRA_OK)
        goto oom;
    d->v = v;
    dra_buf_init(&b, d->mem);
    if (dra_buf_vprintf(&b, fmt, ap) != DRA_OK) {
        dra_buf_fini(&b);
        goto oom;
    }
    e = &d->v[d->n];
    e->msg = dra_buf_detach(&b);
    e->path = dra_strdup(d->mem, path ? path : "");
    if (!e->msg || !e->path) {
        dra_free(d->mem, e->msg);
        dra_free(d->mem, e->path);
        goto oom;
    }
    e->line = line;
    e->col = col;
    d->n++;
    return DRA_OK;
oom:
    d->oom = 1;
    return DRA_ENOMEM;
}

dra_err dra_diag_add(dra_diag *d, const char *path, int line, int col,
                     const char *fmt, ...)
{
    va_list ap;
    dra_err e;
    va_start(ap, fmt);
    e = dra_diag_vadd(d, path, line, col, fmt, ap);
    va_end(ap);
    return e;
}

dra_err dra_diag_format(const dra_diag *d, dra_buf *out)
{
    for (size_t i = 0; i < d->n; i++) {
        const dra_diag_entry *e = &d->v[i];
        if (e->path[0])
            dra_buf_printf(out, "%s: %s\n", e->path, e->msg);
        else if (e->line)
            dra_buf_printf(out, "%d:%d: %s\n", e->line, e->col, e->msg);
        else
            dra_buf_printf(out, "%s\n", e->msg);
    }
    if (d->dropped)
        dra_buf_printf(out, "(%zu more errors not shown)\n", d->dropped);
    if (d->oom)
        dra_buf_puts(out, "(some errors were lost: out of memory)\n");
    return out->oom ? DRA_ENOMEM : DRA_OK;
}

const char *dra_diag_first(const dra_diag *d)
{
    return d->n ? d->v[0].msg : NULL;
}
