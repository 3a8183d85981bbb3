/* libFuzzer target for the api decoder and encoder: any bytes go through
 * the YAML/JSON stream reader, every object that decodes is encoded,
 * and the encoding must decode again to an equal encoding. Nothing may
 * crash, leak or loop. */
#include <stdlib.h>

#include "dra/api.h"
#include "dra/codec.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    dra_arena a;
    dra_diag d;
    dra_object **objs = NULL;
    size_t n = 0;
    if (size > (1u << 16))
        return 0;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    d.max = 64;
    (void)dra_api_decode_stream(&a, (const char *)data, size, &objs, &n, &d);
    for (size_t i = 0; i < n; i++) {
        dra_doc *e1, *e2;
        dra_object *o2 = NULL;
        if (dra_api_encode(&a, objs[i], &e1) != DRA_OK)
            abort(); /* libc allocator: only a bug gets here */
        if (dra_api_decode(&a, e1, &o2, NULL) != DRA_OK || dra_api_encode(&a, o2, &e2) != DRA_OK ||
            !dra_doc_equal(e1, e2))
            abort(); /* encode output must decode to the same thing */
    }
    dra_diag_fini(&d);
    dra_arena_fini(&a);
    return 0;
}
