/*
 * select_none.c: stands in for the CEL backend in builds without the CEL
 * engine; allocators then need caller-supplied selector operations.
 */
#include "alloc_int.h"

dra_err alloc_cel_backend(dra_allocator *a)
{
    (void)a;
    return DRA_EUNSUPPORTED;
}

void alloc_cel_backend_free(dra_allocator *a)
{
    (void)a;
}
