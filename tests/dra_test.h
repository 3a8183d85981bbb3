/* Common includes and helpers for the cmocka test binaries. */
#ifndef DRA_TEST_H
#define DRA_TEST_H

#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dra/base.h"

/* Reads a whole file into a malloc'd NUL-terminated buffer; fails the
 * test when it cannot. */
static inline char *dra_test_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *p = NULL;
    size_t n = 0, cap = 0, r;
    if (!f)
        fail_msg("cannot open %s", path);
    do {
        if (cap - n < 4096) {
            cap = cap * 2 + 4096;
            p = realloc(p, cap + 1);
            assert_non_null(p);
        }
        r = fread(p + n, 1, cap - n, f);
        n += r;
    } while (r > 0);
    fclose(f);
    p[n] = '\0';
    if (len)
        *len = n;
    return p;
}

/* An allocator whose |fail_at|-th allocation since the last arm fails
 * (0: none), counted in |calls| across threads: the failure paths of code
 * that allocates on several threads. */
typedef struct dra_test_failmem {
    dra_mem mem;
    atomic_long calls, fail_at;
} dra_test_failmem;

static inline void *dra_test_failmem_realloc(void *ud, void *p, size_t n)
{
    dra_test_failmem *f = ud;
    long at = atomic_load(&f->fail_at), k = atomic_fetch_add(&f->calls, 1) + 1;
    return at && k == at ? NULL : realloc(p, n);
}

static inline void dra_test_failmem_free(void *ud, void *p)
{
    (void)ud;
    free(p);
}

static inline void dra_test_failmem_init(dra_test_failmem *f)
{
    f->mem = (dra_mem){dra_test_failmem_realloc, dra_test_failmem_free, f};
    atomic_init(&f->calls, 0);
    atomic_init(&f->fail_at, 0);
}

/* Restarts the count; the |at|-th allocation from now fails (0: none). */
static inline void dra_test_failmem_arm(dra_test_failmem *f, long at)
{
    atomic_store(&f->fail_at, 0);
    atomic_store(&f->calls, 0);
    atomic_store(&f->fail_at, at);
}

#endif
