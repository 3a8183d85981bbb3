/* Growable byte buffer used by every encoder and formatter. */
#include <stdio.h>
#include <string.h>

#include "dra/base.h"

void dra_buf_init(dra_buf *b, const dra_mem *mem)
{
    memset(b, 0, sizeof *b);
    b->mem = mem;
}

void dra_buf_fini(dra_buf *b)
{
    dra_free(b->mem, b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

void dra_buf_reset(dra_buf *b)
{
    b->len = 0;
    if (b->p)
        b->p[0] = '\0';
}

static dra_err reserve(dra_buf *b, size_t extra)
{
    void *p = b->p;
    /* The common case, room already there, without a call into dra_grow:
     * the JSON encoder appends a few bytes at a time. */
    if (b->cap > b->len && extra < b->cap - b->len)
        return DRA_OK;
    if (extra > SIZE_MAX - b->len - 1)
        goto oom;
    if (dra_grow(b->mem, &p, &b->cap, b->len + extra + 1, 1) != DRA_OK)
        goto oom;
    b->p = p;
    return DRA_OK;
oom:
    b->oom = 1;
    return DRA_ENOMEM;
}

dra_err dra_buf_append(dra_buf *b, const void *data, size_t len)
{
    if (reserve(b, len) != DRA_OK)
        return DRA_ENOMEM;
    if (len)
        memcpy(b->p + b->len, data, len);
    b->len += len;
    b->p[b->len] = '\0';
    return DRA_OK;
}

dra_err dra_buf_puts(dra_buf *b, const char *s)
{
    return dra_buf_append(b, s, strlen(s));
}

dra_err dra_buf_putc(dra_buf *b, char c)
{
    return dra_buf_append(b, &c, 1);
}

dra_err dra_buf_vprintf(dra_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    size_t room = b->p && b->cap > b->len ? b->cap - b->len : 0;
    int n;
    /* Formatted once into the room there is, which usually suffices;
     * only a longer result is measured by that pass and formatted again. */
    va_copy(ap2, ap);
    n = vsnprintf(room ? b->p + b->len : NULL, room, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        if (b->p)
            b->p[b->len] = '\0';
        return DRA_EINVAL;
    }
    if ((size_t)n >= room) {
        if (reserve(b, (size_t)n) != DRA_OK) {
            if (b->p)
                b->p[b->len] = '\0';
            return DRA_ENOMEM;
        }
        vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    }
    b->len += (size_t)n;
    return DRA_OK;
}

dra_err dra_buf_printf(dra_buf *b, const char *fmt, ...)
{
    va_list ap;
    dra_err e;
    va_start(ap, fmt);
    e = dra_buf_vprintf(b, fmt, ap);
    va_end(ap);
    return e;
}

char *dra_buf_detach(dra_buf *b)
{
    char *s;
    if (!b->p && reserve(b, 0) != DRA_OK)
        return NULL;
    b->p[b->len] = '\0';
    s = b->p;
    b->p = NULL;
    b->len = b->cap = 0;
    return s;
}
