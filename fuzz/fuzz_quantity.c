/* libFuzzer target: resource.Quantity. A parsed value's canonical string
 * must parse back to an equal value with the same canonical string;
 * comparison must be antisymmetric and agree with subtraction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra/codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                          \
    do {                                                                  \
        if (!(c)) {                                                       \
            fprintf(stderr, "fuzz_quantity: check failed: %s\n", #c);     \
            abort();                                                      \
        }                                                                 \
    } while (0)

static void check_one(const dra_quantity *q)
{
    char s1[DRA_QTY_STR_MAX], s2[DRA_QTY_STR_MAX];
    dra_quantity r;
    int64_t v;
    size_t n = dra_quantity_str(q, s1, sizeof s1);
    CHECK(n < DRA_QTY_STR_MAX && n == strlen(s1));
    CHECK(dra_quantity_parse(s1, n, &r) == DRA_OK);
    /* Upstream caps parsed binary values at 2^63-1, so a larger binary
     * sum prints a string that re-parses capped: only smaller ones
     * round-trip. */
    if (q->format == DRA_QTY_BINARY_SI) {
        dra_quantity hi = dra_quantity_from_int64(INT64_MAX, DRA_QTY_BINARY_SI);
        dra_quantity lo = dra_quantity_from_int64(-INT64_MAX, DRA_QTY_BINARY_SI);
        if (dra_quantity_cmp(q, &hi) > 0 || dra_quantity_cmp(q, &lo) < 0)
            return;
    }
    CHECK(dra_quantity_cmp(q, &r) == 0);
    /* A binary value printed without suffix re-parses as decimal, as
     * upstream; otherwise the canonical string is a fixed point. */
    dra_quantity_str(&r, s2, sizeof s2);
    CHECK(r.format != q->format || strcmp(s1, s2) == 0);
    if (dra_quantity_to_int64(q, &v) == DRA_OK) {
        dra_quantity i = dra_quantity_from_int64(v, DRA_QTY_DECIMAL_SI);
        CHECK(dra_quantity_cmp(q, &i) == 0);
    }
    (void)dra_quantity_to_double(q);
    (void)dra_quantity_value(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Two quantities separated by the first space (if any). */
    const char *s = (const char *)data;
    const char *sp = memchr(s, ' ', size);
    size_t la = sp ? (size_t)(sp - s) : size;
    dra_quantity a, b, d;
    if (dra_quantity_parse(s, la, &a) != DRA_OK)
        return 0;
    check_one(&a);
    if (!sp || dra_quantity_parse(sp + 1, size - la - 1, &b) != DRA_OK)
        return 0;
    check_one(&b);
    CHECK(dra_quantity_cmp(&a, &b) == -dra_quantity_cmp(&b, &a));
    if (dra_quantity_sub(&a, &b, &d) == DRA_OK) {
        CHECK(dra_quantity_sign(&d) == dra_quantity_cmp(&a, &b));
        check_one(&d);
    }
    if (dra_quantity_add(&a, &b, &d) == DRA_OK)
        check_one(&d);
    return 0;
}
