/* libFuzzer target: YAML stream decode; every document must survive a
 * YAML round trip (equal tree, byte-identical re-encoding) and a JSON
 * round trip. One arena per input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra/codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                         \
    do {                                                                 \
        if (!(c)) {                                                      \
            fprintf(stderr, "fuzz_yaml: check failed: %s\n", #c);        \
            abort();                                                     \
        }                                                                \
    } while (0)

static void roundtrip(dra_arena *a, const dra_doc *d)
{
    dra_buf y1, y2, j;
    dra_doc **docs = NULL, *jd = NULL;
    size_t n = 0;
    dra_buf_init(&y1, NULL);
    dra_buf_init(&y2, NULL);
    dra_buf_init(&j, NULL);
    CHECK(dra_doc_to_yaml(d, &y1) == DRA_OK);
    CHECK(dra_doc_parse_yaml(a, y1.p, y1.len, &docs, &n, NULL) == DRA_OK);
    CHECK(n == 1);
    CHECK(dra_doc_equal(d, docs[0]));
    CHECK(dra_doc_to_yaml(docs[0], &y2) == DRA_OK);
    CHECK(y1.len == y2.len && memcmp(y1.p, y2.p, y1.len) == 0);
    CHECK(dra_doc_to_json(d, 0, &j) == DRA_OK);
    CHECK(dra_doc_parse_json(a, j.p, j.len, &jd, NULL) == DRA_OK);
    CHECK(dra_doc_equal(d, jd));
    dra_buf_fini(&y1);
    dra_buf_fini(&y2);
    dra_buf_fini(&j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dra_arena a;
    dra_diag dg;
    dra_doc **docs = NULL;
    size_t n = 0;
    dra_err err;
    dra_arena_init(&a, NULL);
    dra_diag_init(&dg, NULL);
    err = dra_doc_parse_yaml(&a, (const char *)data, size, &docs, &n, &dg);
    if (err == DRA_OK) {
        for (size_t i = 0; i < n; i++)
            roundtrip(&a, docs[i]);
        if (dra_doc_flatten_lists(&a, &docs, &n) == DRA_OK)
            for (size_t i = 0; i < n; i++)
                CHECK(docs[i] != NULL);
    } else {
        CHECK(docs == NULL && n == 0 && dg.n >= 1);
    }
    dra_diag_fini(&dg);
    dra_arena_fini(&a);
    return 0;
}
