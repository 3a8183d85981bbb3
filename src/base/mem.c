/* The pluggable allocator: every allocation in libdra goes through a
 * dra_mem so that tests can fail allocations one by one (failmalloc). */
#include <stdlib.h>
#include <string.h>

#include "dra/base.h"

void *dra_realloc(const dra_mem *mem, void *ptr, size_t size)
{
    if (size == 0)
        size = 1;
    if (!mem)
        return realloc(ptr, size);
    return mem->realloc(mem->ud, ptr, size);
}

void *dra_malloc(const dra_mem *mem, size_t size)
{
    return dra_realloc(mem, NULL, size);
}

void *dra_calloc(const dra_mem *mem, size_t n, size_t size)
{
    void *p;
    if (size && n > SIZE_MAX / size)
        return NULL;
    p = dra_malloc(mem, n * size);
    if (p)
        memset(p, 0, (n * size) != 0 ? n * size : 1);
    return p;
}

void dra_free(const dra_mem *mem, void *ptr)
{
    if (!ptr)
        return;
    if (!mem)
        free(ptr);
    else
        mem->free(mem->ud, ptr);
}

void *dra_mem_hook_malloc(size_t size, void *mem)
{
    return dra_malloc(mem, size);
}

void dra_mem_hook_free(void *ptr, void *mem)
{
    dra_free(mem, ptr);
}

void *dra_mem_hook_calloc(size_t n, size_t size, void *mem)
{
    return dra_calloc(mem, n, size);
}

void *dra_mem_hook_realloc(void *ptr, size_t size, void *mem)
{
    return dra_realloc(mem, ptr, size);
}

char *dra_strdup(const dra_mem *mem, const char *s)
{
    size_t n;
    char *p;
    if (!s)
        return NULL;
    n = strlen(s) + 1;
    p = dra_malloc(mem, n);
    if (p)
        memcpy(p, s, n);
    return p;
}

dra_err dra_grow(const dra_mem *mem, void **ptr, size_t *cap, size_t need,
                 size_t elem)
{
    size_t ncap = *cap ? *cap : 8;
    void *p;
    if (need <= *cap)
        return DRA_OK;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return DRA_ENOMEM;
        ncap *= 2;
    }
    if (elem && ncap > SIZE_MAX / elem)
        return DRA_ENOMEM;
    p = dra_realloc(mem, *ptr, ncap * elem);
    if (!p)
        return DRA_ENOMEM;
    *ptr = p;
    *cap = ncap;
    return DRA_OK;
}

static void *failmem_realloc(void *ud, void *ptr, size_t size)
{
    dra_failmem *fm = ud;
    void *p;
    if (fm->fail_after >= 0 && fm->allocs >= fm->fail_after) {
        fm->failed = 1;
        return NULL;
    }
    p = realloc(ptr, size);
    if (!p)
        return NULL;
    fm->allocs++;
    if (!ptr)
        fm->live++;
    return p;
}

static void failmem_free(void *ud, void *ptr)
{
    dra_failmem *fm = ud;
    if (ptr) {
        fm->live--;
        free(ptr);
    }
}

void dra_failmem_init(dra_failmem *fm, long fail_after)
{
    memset(fm, 0, sizeof *fm);
    fm->mem.realloc = failmem_realloc;
    fm->mem.free = failmem_free;
    fm->mem.ud = fm;
    fm->fail_after = fail_after;
}
