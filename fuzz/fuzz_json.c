/* libFuzzer target: JSON decode; on success the tree must survive JSON
 * (compact and indented) and YAML round trips, and re-encoding must be a
 * fixed point. One arena per input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra/codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                         \
    do {                                                                 \
        if (!(c)) {                                                      \
            fprintf(stderr, "fuzz_json: check failed: %s\n", #c);        \
            abort();                                                     \
        }                                                                \
    } while (0)

static void json_roundtrip(dra_arena *a, const dra_doc *d, int indent)
{
    dra_buf b1, b2;
    dra_doc *d2 = NULL;
    dra_buf_init(&b1, NULL);
    dra_buf_init(&b2, NULL);
    CHECK(dra_doc_to_json(d, indent, &b1) == DRA_OK);
    CHECK(dra_doc_parse_json(a, b1.p, b1.len, &d2, NULL) == DRA_OK);
    CHECK(dra_doc_equal(d, d2));
    CHECK(dra_doc_to_json(d2, indent, &b2) == DRA_OK);
    CHECK(b1.len == b2.len && memcmp(b1.p, b2.p, b1.len) == 0);
    dra_buf_fini(&b1);
    dra_buf_fini(&b2);
}

static void yaml_roundtrip(dra_arena *a, const dra_doc *d)
{
    dra_buf b1, b2;
    dra_doc **docs = NULL;
    size_t n = 0;
    dra_buf_init(&b1, NULL);
    dra_buf_init(&b2, NULL);
    CHECK(dra_doc_to_yaml(d, &b1) == DRA_OK);
    CHECK(dra_doc_parse_yaml(a, b1.p, b1.len, &docs, &n, NULL) == DRA_OK);
    if (d->kind == DRA_DOC_NULL) {
        CHECK(n == 0); /* a null document is an empty one */
    } else {
        CHECK(n == 1);
        CHECK(dra_doc_equal(d, docs[0]));
        CHECK(dra_doc_to_yaml(docs[0], &b2) == DRA_OK);
        CHECK(b1.len == b2.len && memcmp(b1.p, b2.p, b1.len) == 0);
    }
    dra_buf_fini(&b1);
    dra_buf_fini(&b2);
}

/* Sorting is idempotent: a second sort changes nothing. */
static void sort_stable(dra_doc *d, dra_doc_order order)
{
    dra_buf b1, b2;
    dra_buf_init(&b1, NULL);
    dra_buf_init(&b2, NULL);
    CHECK(dra_doc_sort_keys(d, order) == DRA_OK);
    CHECK(dra_doc_to_json(d, 0, &b1) == DRA_OK);
    CHECK(dra_doc_sort_keys(d, order) == DRA_OK);
    CHECK(dra_doc_to_json(d, 0, &b2) == DRA_OK);
    CHECK(b1.len == b2.len && memcmp(b1.p, b2.p, b1.len) == 0);
    dra_buf_fini(&b1);
    dra_buf_fini(&b2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dra_arena a;
    dra_diag dg;
    dra_doc *d = NULL;
    dra_err err;
    dra_arena_init(&a, NULL);
    dra_diag_init(&dg, NULL);
    err = dra_doc_parse_json(&a, (const char *)data, size, &d, &dg);
    if (err == DRA_OK) {
        CHECK(d != NULL);
        json_roundtrip(&a, d, 0);
        json_roundtrip(&a, d, 2);
        yaml_roundtrip(&a, d);
        sort_stable(d, DRA_DOC_ORDER_YAML);
        sort_stable(d, DRA_DOC_ORDER_BYTES);
    } else {
        CHECK(d == NULL && dg.n >= 1);
    }
    dra_diag_fini(&dg);
    dra_arena_fini(&a);
    return 0;
}
