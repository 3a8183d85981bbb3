/* libFuzzer target: the GPU driver's opaque configuration
 * (src/plugin/config.c). The input is JSON: either one parameters
 * object (decoded strictly, then normalised and validated under every
 * combination of the TimeSlicingSettings and MPSSupport gates), or a
 * list of allocation config entries ({source, requests, opaque}) that
 * is collected and matched for GPU and MIG requests as prepare does.
 * Errors must be messages, never crashes or leaks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/plugin_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(dra_arena *a, const dra_doc *params)
{
    plugin_cfg c;
    char err[1024];
    if (plugin_cfg_decode(a, params, &c, err, sizeof(err)) != DRA_OK) {
        if (!err[0])
            abort(); /* a refusal always says why */
        return;
    }
    for (int g = 0; g < 4; g++) {
        dra_plugin_gates gates;
        dra_plugin_gates_default(&gates);
        gates.time_slicing_settings = g & 1;
        gates.mps_support = (g >> 1) & 1;
        plugin_cfg x = c;
        plugin_cfg_normalize(&x, &gates);
        (void)plugin_cfg_validate(&x, &gates, err, sizeof(err));
        (void)plugin_cfg_interval(x.interval);
    }
}

/* Wraps |list| as a claim's status.allocation.devices.config. */
static void collect(dra_arena *a, dra_doc *list)
{
    dra_doc *claim = dra_doc_new_map(a, 4), *status = dra_doc_new_map(a, 1);
    dra_doc *alloc = dra_doc_new_map(a, 1), *devs = dra_doc_new_map(a, 2);
    dra_doc *meta = dra_doc_new_map(a, 1);
    if (!claim || !status || !alloc || !devs || !meta)
        return;
    dra_doc_map_set(a, claim, "apiVersion", dra_doc_new_string(a, "resource.k8s.io/v1", 18));
    dra_doc_map_set(a, claim, "kind", dra_doc_new_string(a, "ResourceClaim", 13));
    dra_doc_map_set(a, meta, "name", dra_doc_new_string(a, "c", 1));
    dra_doc_map_set(a, claim, "metadata", meta);
    dra_doc_map_set(a, devs, "results", dra_doc_new_list(a, 0));
    dra_doc_map_set(a, devs, "config", list);
    dra_doc_map_set(a, alloc, "devices", devs);
    dra_doc_map_set(a, status, "allocation", alloc);
    dra_doc_map_set(a, claim, "status", status);
    dra_object *obj = NULL;
    (void)dra_api_decode(a, claim, &obj, NULL);
    if (!obj || obj->kind != DRA_KIND_RESOURCE_CLAIM || !obj->u.claim.status.allocation)
        return;
    dra_plugin_gates gates;
    dra_plugin_gates_default(&gates);
    plugin_cfg *cfgs;
    size_t n;
    char err[1024];
    if (plugin_cfg_collect(a, obj->u.claim.status.allocation, &gates, &cfgs, &n, err,
                           sizeof(err)) != DRA_OK)
        return;
    static const char *const reqs[] = {"a", "b", "gpu", ""};
    for (size_t r = 0; r < 4; r++)
        for (int k = PLUGIN_DEV_GPU; k <= PLUGIN_DEV_VFIO; k++) {
            int i = plugin_cfg_match(cfgs, n, reqs[r], k, err, sizeof(err));
            if (i >= (int)n)
                abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dra_arena a;
    dra_arena_init(&a, NULL);
    dra_doc *doc = NULL;
    if (dra_doc_parse_json(&a, (const char *)data, size, &doc, NULL) == DRA_OK && doc) {
        if (doc->kind == DRA_DOC_LIST)
            collect(&a, doc);
        else
            one(&a, doc);
    }
    dra_arena_fini(&a);
    return 0;
}
