/* libFuzzer target for src/apiserver/k8spb.c: each input is a whole
 * protobuf request body (application/vnd.kubernetes.protobuf), decoded
 * once as it stands and once with the endpoint defaults a POST to
 * /api/v1/namespaces supplies. A success is a map that encodes to JSON;
 * a failure has exactly one message and no document; nothing may crash,
 * leak or hang. Seeds: bodies kubectl 1.32/1.33 sent (captured) and
 * hand-made ones touching every field kind. */
#include <stdlib.h>

#include "apiserver/k8spb.h"
#include "dra/codec.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static void one(const unsigned char *data, size_t size, const char *av, const char *kind)
{
    dra_arena a;
    dra_diag d;
    dra_doc *doc = NULL;
    dra_err e;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    e = k8spb_decode(&a, data, size, av, kind, &doc, &d);
    if (e == DRA_OK) {
        dra_buf b;
        if (!doc || doc->kind != DRA_DOC_MAP || d.n)
            abort();
        dra_buf_init(&b, NULL);
        if (dra_doc_to_json(doc, 0, &b) != DRA_OK)
            abort();
        dra_buf_fini(&b);
    } else if (e != DRA_ENOMEM && (doc || d.n != 1 || !dra_diag_first(&d))) {
        abort(); /* every failure explains itself, once */
    }
    dra_diag_fini(&d);
    dra_arena_fini(&a);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    one(data, size, NULL, NULL);
    one(data, size, "v1", "Namespace");
    return 0;
}
