/*
 * resources.h: the table of resources drad serves, shared by routing,
 * discovery, OpenAPI, Table output and storage. One row per (group,
 * version, resource); resource.k8s.io is served in v1 (stored and
 * preferred), v1beta2 and v1beta1 (converted on the way in and out).
 */
#ifndef DRA_APISERVER_RESOURCES_H
#define DRA_APISERVER_RESOURCES_H

#include <stddef.h>

#include "dra/api.h"
#include "dra/base.h"

/* Subresources a resource has (api_resource.subresources). */
enum {
    API_SUB_STATUS = 1u << 0,  /* /status: get, patch, update */
    API_SUB_BINDING = 1u << 1, /* pods/binding: create */
    API_SUB_LOG = 1u << 2      /* pods/log: get */
};

typedef struct api_resource {
    const char *group;    /* "" for core */
    const char *version;  /* the version this row serves */
    const char *resource; /* plural, lower case */
    const char *singular;
    const char *kind;
    int namespaced;
    const char *short_names; /* comma-separated, or NULL */
    const char *categories;  /* comma-separated, or NULL */
    unsigned subresources;   /* API_SUB_* */
    dra_kind dkind; /* typed model in dra/api.h; DRA_KIND_UNKNOWN for kinds kept as documents */
    int preferred;  /* 1 for the version objects are stored in and discovery lists first */
} api_resource;

/* Every served row, groups in discovery order ("" first), within a group
 * the preferred version first. Static table; *n receives its length. */
const api_resource *api_resources(size_t *n);
/* The row for (group, version, plural resource), NULL when not served. */
const api_resource *api_resource_find(const char *group, const char *version,
                                      const char *resource);
/* The preferred (storage) row of the same group and resource as |r|. */
const api_resource *api_resource_storage(const api_resource *r);

#endif
