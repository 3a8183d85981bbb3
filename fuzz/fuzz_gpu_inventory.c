/*
 * fuzz_gpu_inventory: the fake-GPU inventory reader (libyaml document
 * API, strict keys and types). The fake libnvidia-ml.so.1 parses this in
 * every process that loads it, including whatever a container's
 * /dev/nvidiactl holds, so bad input must give an error, never a crash or
 * a leak. Property: every node of an accepted inventory, written back out,
 * parses again.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpu/fake/inventory.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fk_inventory inv, again;
    char err[512];
    if (size > 1 << 16)
        return 0;
    if (fk_inventory_parse(&inv, NULL, (const char *)data, size, err, sizeof err))
        return 0;
    for (size_t i = 0; i < inv.n_nodes; i++) {
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        if (!f)
            abort();
        fk_inventory_write_node(&inv, &inv.nodes[i], f);
        fclose(f);
        if (fk_inventory_parse(&again, NULL, out, len, err, sizeof err))
            abort(); /* what we write, we must read */
        if (again.n_nodes != 1 || again.nodes[0].n_gpus != inv.nodes[i].n_gpus)
            abort();
        fk_inventory_free(&again);
        free(out);
    }
    fk_inventory_free(&inv);
    return 0;
}
