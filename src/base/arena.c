/* Arena (bump) allocator. Blocks form a list, newest first; big requests
 * get a block of their own so they do not waste the current one. */
#include <stdio.h>
#include <string.h>

#include "dra/base.h"

#define ARENA_ALIGN 16u
#define ARENA_FIRST_BLOCK 256u
#define ARENA_MAX_BLOCK 65536u

struct dra_arena_block {
    dra_arena_block *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

void dra_arena_init(dra_arena *a, const dra_mem *mem)
{
    memset(a, 0, sizeof *a);
    a->mem = mem;
}

static void free_blocks(const dra_mem *mem, dra_arena_block *b)
{
    while (b) {
        dra_arena_block *next = b->next;
        dra_free(mem, b);
        b = next;
    }
}

void dra_arena_fini(dra_arena *a)
{
    free_blocks(a->mem, a->head);
    a->head = NULL;
    a->used = a->total = 0;
}

void dra_arena_reset(dra_arena *a)
{
    if (!a->head)
        return;
    /* The newest block is the biggest regular one; later blocks keep
     * growing from there. */
    free_blocks(a->mem, a->head->next);
    a->head->next = NULL;
    a->head->used = 0;
    a->used = 0;
    a->total = a->head->size;
}

void *dra_arena_alloc(dra_arena *a, size_t size)
{
    dra_arena_block *b = a->head;
    size_t bsize;
    void *p;
    if (size > SIZE_MAX - ARENA_ALIGN - sizeof *b)
        return NULL;
    size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (size == 0)
        size = ARENA_ALIGN;
    if (!b || b->size - b->used < size) {
        size_t step = a->next_block ? a->next_block : ARENA_FIRST_BLOCK;
        int dedicated = size > step / 2;
        bsize = dedicated ? size : step;
        b = dra_malloc(a->mem, sizeof *b + bsize);
        if (!b)
            return NULL;
        b->size = bsize;
        b->used = 0;
        /* Grow after dedicated blocks too, so an arena of mid-sized
         * objects soon gets blocks that hold several of them. */
        if (step < ARENA_MAX_BLOCK)
            a->next_block = step * 2;
        if (dedicated && a->head) {
            /* A dedicated block goes behind the current one, which keeps
             * serving small requests. */
            b->next = a->head->next;
            a->head->next = b;
        } else {
            b->next = a->head;
            a->head = b;
        }
        a->total += bsize;
    }
    p = b->data + b->used;
    b->used += size;
    a->used += size;
    return p;
}

void *dra_arena_zalloc(dra_arena *a, size_t size)
{
    void *p = dra_arena_alloc(a, size);
    if (p)
        memset(p, 0, size);
    return p;
}

void *dra_arena_array(dra_arena *a, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    return dra_arena_zalloc(a, n * size);
}

char *dra_arena_strndup(dra_arena *a, const char *s, size_t len)
{
    char *p;
    if (len == SIZE_MAX)
        return NULL;
    p = dra_arena_alloc(a, len + 1);
    if (!p)
        return NULL;
    if (len)
        memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

char *dra_arena_strdup(dra_arena *a, const char *s)
{
    return s ? dra_arena_strndup(a, s, strlen(s)) : NULL;
}

char *dra_arena_sprintf(dra_arena *a, const char *fmt, ...)
{
    va_list ap, ap2;
    int n;
    char *p;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        va_end(ap2);
        return NULL;
    }
    p = dra_arena_alloc(a, (size_t)n + 1);
    if (p)
        vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}
