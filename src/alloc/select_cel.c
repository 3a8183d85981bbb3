/*
 * select_cel.c: the default selector backend, the CEL engine with
 * Kubernetes' DRA environment. One env and one VM per allocator; each
 * device is prepared once (attributes indexed for fast lookup).
 */
#include <string.h>

#include "alloc_int.h"

/* Prepared devices live as long as the allocator, so their memory comes
 * from large chunks freed all at once (a slab behind a dra_mem): one
 * malloc per many devices instead of several per device, and the unused
 * tail of each device's arena block is never touched. */
typedef struct slab_chunk {
    struct slab_chunk *next;
    size_t used, size, pad; /* 32 bytes: the data after it stays 16-aligned */
} slab_chunk;

typedef struct slab {
    const dra_mem *mem;
    slab_chunk *head;
} slab;

#define SLAB_CHUNK (1u << 20)
#define SLAB_HDR 16 /* each block remembers its size, for realloc */

typedef struct cel_be {
    const dra_mem *mem;
    dra_cel_env *env;
    dra_cel_vm *vm;
    slab slab;
    dra_mem slab_mem;
} cel_be;

static void *slab_take(slab *s, size_t size)
{
    size_t need = (size + SLAB_HDR + 15) & ~(size_t)15;
    slab_chunk *c = s->head;
    unsigned char *p;
    if (need < size)
        return NULL;
    if (!c || c->size - c->used < need) {
        size_t csize = need > SLAB_CHUNK / 4 ? need : SLAB_CHUNK;
        c = dra_malloc(s->mem, sizeof *c + csize);
        if (!c)
            return NULL;
        c->size = csize;
        c->used = 0;
        c->next = s->head;
        s->head = c;
    }
    p = (unsigned char *)(c + 1) + c->used;
    c->used += need;
    memcpy(p, &size, sizeof size);
    return p + SLAB_HDR;
}

static void *slab_realloc(void *ud, void *ptr, size_t size)
{
    slab *s = ud;
    void *n;
    size_t old;
    if (!ptr)
        return slab_take(s, size);
    memcpy(&old, (unsigned char *)ptr - SLAB_HDR, sizeof old);
    if (size <= old)
        return ptr;
    if ((n = slab_take(s, size)))
        memcpy(n, ptr, old);
    return n;
}

static void slab_free(void *ud, void *ptr)
{
    (void)ud;
    (void)ptr; /* released with the whole slab */
}

static void slab_fini(slab *s)
{
    while (s->head) {
        slab_chunk *c = s->head;
        s->head = c->next;
        dra_free(s->mem, c);
    }
}

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
    (void)ud;
    dra_cel_prepared_free(prepared); /* memory: the slab */
}

/* The prepared device is the handle. Its capacities are copied into the
 * CEL layout first (the prepared device points at their quantities);
 * attributes are borrowed from the model as they are. */
static dra_err be_prepare(void *ud, const char *driver, const dra_alloc_device *dev,
                          void **prepared)
{
    cel_be *b = ud;
    dra_cel_capacity *caps = NULL;
    dra_cel_device cd;
    dra_cel_prepared *pd;
    dra_err err;
    if (dev->ncaps && !(caps = dra_calloc(&b->slab_mem, dev->ncaps, sizeof *caps)))
        return DRA_ENOMEM;
    for (size_t i = 0; i < dev->ncaps; i++) {
        caps[i].name = dev->caps[i].name;
        caps[i].value = dev->caps[i].value;
    }
    memset(&cd, 0, sizeof cd);
    cd.driver = driver;
    cd.attrs = dev->attrs;
    cd.nattrs = dev->nattrs;
    cd.caps = caps;
    cd.ncaps = dev->ncaps;
    cd.allow_multiple_allocations = dev->allow_multiple_allocations;
    err = dra_cel_device_prepare(&b->slab_mem, &cd, &pd);
    if (err != DRA_OK)
        return err;
    *prepared = pd;
    return DRA_OK;
}

static dra_err be_eval(void *ud, void *prog, const char *driver, const dra_alloc_device *dev,
                       void *prepared, int *result, dra_diag *d)
{
    cel_be *b = ud;
    (void)driver;
    (void)dev;
    return dra_cel_eval_device(prog, b->vm, prepared, result, d);
}

/* A CEL selector reaches a device's attributes, capacity or sharing flag
 * only by naming the field (the object cannot be iterated or converted),
 * so without those names only the driver can change its result. The test
 * is textual and errs on the safe side (a name inside a string literal
 * just forgoes the shortcut). */
static int be_driver_only(void *ud, const char *expr, void *prog)
{
    (void)ud;
    (void)prog;
    return !strstr(expr, "attributes") && !strstr(expr, "capacity") &&
           !strstr(expr, "allowMultipleAllocations");
}

/* The device values a program reads, when it reads only fixed ones (see
 * dra_cel_program_device_reads); their names stay the program's. */
static dra_err be_reads(void *ud, void *prog, dra_arena *ar, const dra_cel_read **out, size_t *n)
{
    long k = dra_cel_program_device_reads(prog, NULL, 0);
    dra_cel_read *r;
    (void)ud;
    if (k < 0)
        return DRA_EUNSUPPORTED;
    if (!(r = dra_arena_array(ar, (size_t)k + 1, sizeof *r)))
        return DRA_ENOMEM;
    dra_cel_program_device_reads(prog, r, (size_t)k);
    *out = r;
    *n = (size_t)k;
    return DRA_OK;
}

dra_err alloc_cel_backend(dra_allocator *a)
{
    cel_be *b = dra_calloc(a->mem, 1, sizeof *b);
    dra_err err;
    if (!b)
        return DRA_ENOMEM;
    b->mem = a->mem;
    b->slab.mem = a->mem;
    b->slab_mem.realloc = slab_realloc;
    b->slab_mem.free = slab_free;
    b->slab_mem.ud = &b->slab;
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
    a->ops.driver_only = be_driver_only;
    a->ops.reads = be_reads;
    return DRA_OK;
}

void alloc_cel_backend_free(dra_allocator *a)
{
    cel_be *b = a->cel_ud;
    if (!b)
        return;
    dra_cel_vm_free(b->vm);
    dra_cel_env_free(b->env);
    slab_fini(&b->slab);
    dra_free(a->mem, b);
    a->cel_ud = NULL;
}
