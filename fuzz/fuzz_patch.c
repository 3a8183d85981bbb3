/* libFuzzer target for the PATCH machinery of drad's API server: merge
 * patch, JSON patch, strategic merge patch, server-side apply and
 * managedFields updates over arbitrary documents. Input: one mode byte,
 * one kind byte, then the original document and the patch as JSON,
 * separated by a NUL byte. Every outcome but a crash, a leak or a hang
 * is fine. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "apiserver/patch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const kinds[][3] = {
    {"", "v1", "Pod"}, {"", "v1", "Node"}, {"resource.k8s.io", "v1", "ResourceClaim"},
    {"resource.k8s.io", "v1beta1", "ResourceSlice"}, {"", "v1", "Event"}, {"", "", ""},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dra_arena a;
    dra_doc *orig = NULL, *patch = NULL, *out = NULL;
    dra_kstatus st;
    dra_diag d;
    const char *text, *sep;
    size_t len;
    if (size < 2 || size > (1u << 16))
        return 0;
    unsigned mode = data[0] % 6, kind = data[1] % 6;
    text = (const char *)data + 2;
    len = size - 2;
    sep = memchr(text, '\0', len);
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    if (sep) {
        if (dra_doc_parse_json(&a, text, (size_t)(sep - text), &orig, NULL) != DRA_OK)
            goto done;
        if (dra_doc_parse_json(&a, sep + 1, len - (size_t)(sep - text) - 1, &patch, NULL) != DRA_OK)
            goto done;
    } else {
        if (dra_doc_parse_json(&a, "{}", 2, &orig, NULL) != DRA_OK ||
            dra_doc_parse_json(&a, text, len, &patch, NULL) != DRA_OK)
            goto done;
    }
    if (orig->kind != DRA_DOC_MAP)
        goto done;
    const api_openapi_type *t = api_openapi_kind_type(kinds[kind][0], kinds[kind][1], kinds[kind][2]);
    api_apply_opts o = {"fuzzer", (int)(data[1] & 0x80), "v1", "2026-01-01T00:00:00Z",
                        (data[1] & 0x40) ? "status" : NULL};
    switch (mode) {
    case 0: api_patch_merge(&a, orig, patch, &out, &st); break;
    case 1: api_patch_json(&a, orig, patch, &out, &st, &d); break;
    case 2: api_patch_strategic(&a, t, orig, patch, &out, &st); break;
    case 3: api_patch_apply(&a, t, orig, patch, &o, &out, &st, &d); break;
    case 4: api_patch_apply(&a, t, NULL, patch, &o, &out, &st, &d); break;
    default:
        if (patch->kind == DRA_DOC_MAP)
            api_patch_managed_update(&a, t, orig, patch, &o, &out);
    }
done:
    dra_diag_fini(&d);
    dra_arena_fini(&a);
    return 0;
}
