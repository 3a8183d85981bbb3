/* Common includes and helpers for the cmocka test binaries. */
#ifndef DRA_TEST_H
#define DRA_TEST_H

#include <setjmp.h>
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

#endif
