/* The served resource table (resources.h): the one list routing,
 * discovery, OpenAPI and the printers read, so adding a resource is one
 * row here plus its printer. */
#include "resources.h"

#include <string.h>

#define RK "resource.k8s.io"
#define DRA_ROWS(v, pref)                                                      \
    {RK, v, "deviceclasses", "deviceclass", "DeviceClass", 0, NULL, NULL, 0,   \
     DRA_KIND_DEVICE_CLASS, pref},                                             \
    {RK, v, "resourceclaims", "resourceclaim", "ResourceClaim", 1, NULL, NULL, \
     API_SUB_STATUS, DRA_KIND_RESOURCE_CLAIM, pref},                           \
    {RK, v, "resourceclaimtemplates", "resourceclaimtemplate",                 \
     "ResourceClaimTemplate", 1, NULL, NULL, 0,                                \
     DRA_KIND_RESOURCE_CLAIM_TEMPLATE, pref},                                  \
    {RK, v, "resourceslices", "resourceslice", "ResourceSlice", 0, NULL, NULL, \
     0, DRA_KIND_RESOURCE_SLICE, pref}

static const api_resource table[] = {
    {"", "v1", "events", "event", "Event", 1, "ev", NULL, 0, DRA_KIND_UNKNOWN, 1},
    {"", "v1", "namespaces", "namespace", "Namespace", 0, "ns", NULL,
     API_SUB_STATUS, DRA_KIND_UNKNOWN, 1},
    {"", "v1", "nodes", "node", "Node", 0, "no", NULL, API_SUB_STATUS,
     DRA_KIND_NODE, 1},
    {"", "v1", "pods", "pod", "Pod", 1, "po", "all",
     API_SUB_STATUS | API_SUB_BINDING | API_SUB_LOG, DRA_KIND_POD, 1},
    DRA_ROWS("v1", 1),
    DRA_ROWS("v1beta2", 0),
    DRA_ROWS("v1beta1", 0),
};

const api_resource *api_resources(size_t *n)
{
    *n = sizeof table / sizeof table[0];
    return table;
}

const api_resource *api_resource_find(const char *group, const char *version,
                                      const char *resource)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const api_resource *r = &table[i];
        if (!strcmp(r->group, group) && !strcmp(r->version, version) &&
            !strcmp(r->resource, resource))
            return r;
    }
    return NULL;
}

const api_resource *api_resource_storage(const api_resource *r)
{
    if (r->preferred)
        return r;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const api_resource *s = &table[i];
        if (s->preferred && !strcmp(s->group, r->group) &&
            !strcmp(s->resource, r->resource))
            return s;
    }
    return r;
}
