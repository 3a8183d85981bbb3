/*
 * select.c: selector programs for the allocator. Each distinct expression
 * string is compiled once per allocator (compile errors are remembered
 * too), and each (device, program) result is cached on the device, so a
 * selector runs at most once per device however many claims ask. A
 * program whose device reads are a fixed list is run once per footprint
 * (the values it reads) instead: thousands of identical GPUs cost one
 * evaluation and no prepared device each.
 */
#include <string.h>

#include "alloc_int.h"

static void prog_reads(dra_allocator *a, a_prog *p)
{
    const dra_cel_read *r = NULL;
    size_t n = 0;
    p->nreads = -1;
    if (!p->prog || p->driver_only || !a->ops.reads)
        return;
    if (a->ops.reads(a->ops.ud, p->prog, &a->arena, &r, &n) != DRA_OK || n > 64)
        return; /* ENOMEM too: the program is just evaluated per device */
    p->reads = r;
    p->nreads = (long)n;
}

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
    dra_map_init(&p->fp, a->mem);
    p->nreads = -1;
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
    prog_reads(a, p);
    if (dra_map_put(&a->prog_by_expr, p->expr, len, (void *)(uintptr_t)(a->nprogs + 1))) {
        if (p->prog)
            a->ops.release(a->ops.ud, p->prog);
        dra_map_fini(&p->fp);
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

/* ---- footprints ------------------------------------------------------------------ */

/* Keys are built for every device an explanation looks at: compact, and
 * cheap to write (a length and the bytes; fixed-size values as they are). */
static void key_bytes(dra_buf *b, const void *p, size_t n)
{
    uint32_t len = (uint32_t)n;
    if (n > UINT32_MAX) { /* no such name; keep the key unambiguous */
        b->oom = 1;
        return;
    }
    dra_buf_append(b, &len, sizeof len);
    dra_buf_append(b, p, n);
}

static void key_str(dra_buf *b, const char *s)
{
    key_bytes(b, s ? s : "", s ? strlen(s) : 0);
}

/* Whether a slice's attribute or capacity |name| (bare: in the driver's
 * domain; split at the first '/' as the CEL device map splits it) is the
 * read's domain and id. |dlen| is strlen(driver). */
static int name_is(const char *name, const char *driver, size_t dlen, const dra_cel_read *r)
{
    const char *slash = strchr(name, '/');
    if (!slash)
        return dlen == r->domain_len && strlen(name) == r->id_len &&
               !memcmp(name, r->id, r->id_len) && !memcmp(driver, r->domain, dlen);
    return (size_t)(slash - name) == r->domain_len && !memcmp(name, r->domain, r->domain_len) &&
           strlen(slash + 1) == r->id_len && !memcmp(slash + 1, r->id, r->id_len);
}

static void key_attr(dra_buf *b, const dra_cel_attr *at)
{
    char tag = (char)(1 + at->kind);
    switch (at->kind) {
    case DRA_CEL_ATTR_INT: {
        char x[1 + sizeof at->i];
        x[0] = tag;
        memcpy(x + 1, &at->i, sizeof at->i);
        dra_buf_append(b, x, sizeof x);
        break;
    }
    case DRA_CEL_ATTR_BOOL:
        dra_buf_putc(b, tag);
        dra_buf_putc(b, at->b ? 1 : 0);
        break;
    case DRA_CEL_ATTR_STRING:
        dra_buf_putc(b, tag);
        key_str(b, at->s);
        break;
    case DRA_CEL_ATTR_VERSION: { /* the parsed version, as CEL sees it */
        uint64_t n[3] = {at->version.major, at->version.minor, at->version.patch};
        dra_buf_putc(b, tag);
        dra_buf_append(b, n, sizeof n);
        key_bytes(b, at->version.pre ? at->version.pre : "", at->version.pre ? at->version.prelen : 0);
        key_bytes(b, at->version.build ? at->version.build : "",
                  at->version.build ? at->version.buildlen : 0);
        break;
    }
    }
}

/* Every value starts with its tag (0: absent), so keys cannot run into
 * each other. */
static void key_qty(dra_buf *b, const dra_quantity *q)
{
    char k[1 + sizeof q->mant + 3 * sizeof(int32_t)];
    int32_t f[3] = {q->scale, (int32_t)q->format, (int32_t)q->flags};
    k[0] = 9;
    memcpy(k + 1, &q->mant, sizeof q->mant);
    memcpy(k + 1 + sizeof q->mant, f, sizeof f);
    dra_buf_append(b, k, sizeof k);
}

/* The footprint of |v| for |p|: each value read, or that it is absent
 * (the first entry of a name wins, as in the CEL device map). */
static void fp_key(dra_buf *b, const a_prog *p, const char *driver, const dra_alloc_device *dev)
{
    size_t dlen = strlen(driver);
    dra_buf_reset(b);
    dra_buf_putc(b, 'f'); /* never empty, even without reads */
    for (long i = 0; i < p->nreads; i++) {
        const dra_cel_read *r = &p->reads[i];
        size_t k = 0;
        switch (r->field) {
        case DRA_CEL_READ_DRIVER:
            key_bytes(b, driver, dlen);
            break;
        case DRA_CEL_READ_ALLOW_MULTIPLE:
            dra_buf_putc(b, dev->allow_multiple_allocations ? 1 : 0);
            break;
        case DRA_CEL_READ_ATTRIBUTE:
            while (k < dev->nattrs && !name_is(dev->attrs[k].name, driver, dlen, r))
                k++;
            if (k < dev->nattrs)
                key_attr(b, &dev->attrs[k]);
            else
                dra_buf_putc(b, 0);
            break;
        case DRA_CEL_READ_CAPACITY:
            while (k < dev->ncaps && !name_is(dev->caps[k].name, driver, dlen, r))
                k++;
            if (k < dev->ncaps)
                key_qty(b, &dev->caps[k].value);
            else
                dra_buf_putc(b, 0);
            break;
        }
    }
}

int alloc_fp_key(dra_allocator *a, uint32_t id, const a_dev *v, dra_buf *b)
{
    const a_prog *p = &a->progs[id];
    if (p->nreads < 0 || p->err != DRA_OK)
        return 0;
    fp_key(b, p, v->s->driver, v->d);
    return !b->oom;
}

static int same_read(const dra_cel_read *x, const dra_cel_read *y)
{
    return x->field == y->field && x->domain_len == y->domain_len && x->id_len == y->id_len &&
           (!x->domain || (!memcmp(x->domain, y->domain, x->domain_len) &&
                           !memcmp(x->id, y->id, x->id_len)));
}

int alloc_reads_within(const dra_allocator *a, uint32_t inner, uint32_t outer)
{
    const a_prog *in = &a->progs[inner], *out = &a->progs[outer];
    if (in->nreads < 0 || out->nreads < 0)
        return 0;
    for (long i = 0; i < in->nreads; i++) {
        long k = 0;
        while (k < out->nreads && !same_read(&in->reads[i], &out->reads[k]))
            k++;
        if (k == out->nreads)
            return 0;
    }
    return 1;
}

int alloc_reads_has(const dra_allocator *a, uint32_t outer, int cap, const char *domain,
                    const char *id)
{
    const a_prog *p = &a->progs[outer];
    dra_cel_read r;
    memset(&r, 0, sizeof r);
    if (!domain) {
        r.field = cap ? DRA_CEL_READ_ALLOW_MULTIPLE : DRA_CEL_READ_DRIVER;
    } else {
        r.field = cap ? DRA_CEL_READ_CAPACITY : DRA_CEL_READ_ATTRIBUTE;
        r.domain = domain;
        r.domain_len = strlen(domain);
        r.id = id;
        r.id_len = strlen(id);
    }
    for (long i = 0; i < p->nreads; i++)
        if (same_read(&p->reads[i], &r))
            return 1;
    return 0;
}

/* Program |p| on |v| through its footprint cache: a device with the same
 * values read as one evaluated before gets that result. */
static int fp_eval(dra_allocator *a, a_prog *p, a_dev *v, dra_diag *d)
{
    dra_buf *b = &a->fpbuf;
    size_t di = (size_t)(v - a->devs);
    uintptr_t hit;
    char *k;
    int r;
    /* Each device's footprint number, for explanations (alloc_fp_ordinal). */
    if (!p->devfp && !(p->devfp = dra_calloc(a->mem, a->ndevs + 1, sizeof *p->devfp)))
        return DRA_ENOMEM;
    fp_key(b, p, v->s->driver, v->d);
    if (b->oom) {
        b->oom = 0;
        return DRA_ENOMEM;
    }
    if ((hit = (uintptr_t)dra_map_get(&p->fp, b->p, b->len))) {
        p->devfp[di] = (uint32_t)(hit >> 2);
        return (int)(hit & 3) - 1;
    }
    r = eval_now(a, p, v->s->driver, v->d, &v->prepared, &v->prepared_ok, d);
    if (r < 0 || p->fp.live >= A_FP_MAX)
        return r; /* errors are evaluated again, for their message */
    if (!(k = dra_arena_alloc(&a->arena, b->len)))
        return DRA_ENOMEM;
    memcpy(k, b->p, b->len);
    hit = (uintptr_t)(p->fp.live + 1) << 2 | (uintptr_t)(r + 1);
    if (dra_map_put(&p->fp, k, b->len, (void *)hit))
        return DRA_ENOMEM;
    p->devfp[di] = (uint32_t)(hit >> 2);
    return r;
}

uint32_t alloc_fp_ordinal(const dra_allocator *a, uint32_t id, const a_dev *v)
{
    const a_prog *p = &a->progs[id];
    return p->devfp ? p->devfp[v - a->devs] : 0;
}

/* ---- per device ------------------------------------------------------------------ */

/* The result cached on |v| for program |id|: 0/1, or -1 when unknown. */
static int dev_get(const a_dev *v, uint32_t id)
{
    if (id < 64) {
        uint64_t bit = (uint64_t)1 << id;
        return v->sel_known & bit ? (v->sel_true & bit) != 0 : -1;
    }
    return id < v->nselc && v->selc[id] ? v->selc[id] - 1 : -1;
}

static dra_err dev_put(dra_allocator *a, a_dev *v, uint32_t id, int r)
{
    if (id < 64) {
        uint64_t bit = (uint64_t)1 << id;
        v->sel_known |= bit;
        v->sel_true = r ? v->sel_true | bit : v->sel_true & ~bit;
        return DRA_OK;
    }
    if (cache_fit(a, &v->selc, &v->nselc, id) != DRA_OK)
        return DRA_ENOMEM;
    v->selc[id] = (uint8_t)(r + 1);
    return DRA_OK;
}

int alloc_prog_eval(dra_allocator *a, uint32_t id, a_dev *v, dra_diag *d)
{
    a_prog *p = &a->progs[id];
    int r = dev_get(v, id);
    if (r >= 0)
        return r;
    if (p->err != DRA_OK) {
        dra_diag_add(d, "", 0, 0, "%s", p->msg);
        return p->err;
    }
    if (p->driver_only) {
        a_drv *x = drv_get(a, v->s->driver);
        if (!x || cache_fit(a, &x->selc, &x->nselc, id) != DRA_OK)
            return DRA_ENOMEM;
        r = cached(a, p, &x->selc[id], x->driver, &x->dummy, &x->prepared, &x->prepared_ok, d);
    } else if (p->nreads >= 0) {
        r = fp_eval(a, p, v, d);
    } else {
        r = eval_now(a, p, v->s->driver, v->d, &v->prepared, &v->prepared_ok, d);
    }
    if (r >= 0 && dev_put(a, v, id, r) != DRA_OK)
        return DRA_ENOMEM;
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
    for (size_t i = 0; i < a->nprogs; i++) {
        if (a->progs[i].prog)
            a->ops.release(a->ops.ud, a->progs[i].prog);
        dra_map_fini(&a->progs[i].fp);
        dra_free(a->mem, a->progs[i].devfp);
    }
    dra_free(a->mem, a->progs);
    a->progs = NULL;
    a->nprogs = 0;
}
