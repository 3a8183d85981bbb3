/* libFuzzer target for validation: any bytes go through the YAML/JSON
 * stream reader; every object that decodes is validated with the create
 * rules, and each object is also checked as an update and a status update
 * of the previous object of the same kind (the shape of the update
 * fixtures in tests/data/api). Defaults are applied to a copy and that is
 * validated too, as the apiserver validates defaulted objects. Nothing may
 * crash, leak or loop; a result other than DRA_OK or DRA_EINVALID, or
 * DRA_EINVALID without a message, is a bug. */
#include <stdlib.h>

#include "dra/api.h"
#include "dra/codec.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* Validation reports a bad object as DRA_EINVALID with at least one
 * message; anything else means the validator itself went wrong. */
static void check(dra_err err, dra_diag *d)
{
    if (err != DRA_OK && err != DRA_EINVALID)
        abort();
    if (err == DRA_EINVALID && d->n == 0)
        abort();
    if (err == DRA_OK && d->n != 0)
        abort();
    dra_diag_clear(d);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    dra_arena a;
    dra_diag d;
    dra_object **objs = NULL;
    const dra_object *last[DRA_KIND_NODE + 1] = {NULL};
    size_t n = 0;
    if (size > (1u << 16))
        return 0;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    (void)dra_api_decode_stream(&a, (const char *)data, size, &objs, &n, &d);
    dra_diag_clear(&d);
    for (size_t i = 0; i < n; i++) {
        dra_object *o = objs[i], *def = NULL;
        if (o->kind <= DRA_KIND_UNKNOWN || o->kind > DRA_KIND_NODE)
            continue;
        check(dra_api_validate(o, &d), &d);
        if (last[o->kind]) {
            check(dra_api_validate_update(last[o->kind], o, &d), &d);
            check(dra_api_validate_status_update(last[o->kind], o, &d), &d);
            /* and the other way round: removals as well as additions */
            check(dra_api_validate_update(o, last[o->kind], &d), &d);
            check(dra_api_validate_status_update(o, last[o->kind], &d), &d);
        }
        if (dra_api_object_copy(&a, o, &def) != DRA_OK)
            abort(); /* libc allocator: only a bug gets here */
        dra_api_set_defaults(def);
        check(dra_api_validate(def, &d), &d);
        check(dra_api_validate_update(o, def, &d), &d);
        last[o->kind] = o;
    }
    dra_diag_fini(&d);
    dra_arena_fini(&a);
    return 0;
}
