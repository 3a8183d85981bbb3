/* fuzz_node_cdi: CDI spec files (the first byte picks the decoder: odd
 * JSON, even YAML) through the parser and validator, then every
 * device's edits merged with containerd's replacement rules. Errors are
 * fine; crashes, leaks and hangs are not. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dra/node.h"
#include "node/node_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dra_arena a;
    dra_diag d;
    dra_node_cdi_spec *s = NULL;
    int json;
    if (size < 1)
        return 0;
    json = data[0] & 1;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    if (dra_node_cdi_spec_parse(&a, (const char *)data + 1, size - 1, json, &s, &d) == DRA_OK) {
        dra_node_cdi_edits e;
        memset(&e, 0, sizeof e);
        cdi_edits_append(&a, &e, &s->edits);
        for (size_t i = 0; i < s->n_devices; i++)
            cdi_edits_append(&a, &e, &s->devices[i].edits);
        cdi_edits_finish(&e);
        for (size_t i = 0; i < s->n_devices; i++) {
            char *id = dra_arena_sprintf(&a, "%s=%s", s->kind, s->devices[i].name);
            if (id && dra_node_cdi_parse_name(id, &a, NULL, NULL, NULL, NULL) != DRA_OK)
                __builtin_trap(); /* a validated spec names valid devices */
        }
    }
    dra_diag_fini(&d);
    dra_arena_fini(&a);
    return 0;
}
