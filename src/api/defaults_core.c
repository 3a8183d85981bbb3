/*
 * defaults_core.c: dra_api_default, the entry point of kube-apiserver's
 * defaulting for every typed kind, plus the core/v1 pieces that are not
 * the pod itself: pod volumes (SetDefaults_Volume and the volume
 * sources' defaulters) and Node (SetDefaults_NodeStatus, resource
 * rounding, the podCIDR alias). Pods are in defaults_pod.c, the
 * document helpers and untyped kinds in defaults_doc.c.
 */
#include <string.h>

#include "api_int.h"
#include "defaults_int.h"

/* ---- volumes ------------------------------------------------------------------------ */

static const char *const volume_order[] = {
    "name", "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo",
    "secret", "nfs", "iscsi", "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume",
    "cinder", "cephfs", "flocker", "downwardAPI", "fc", "azureFile", "configMap",
    "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "projected",
    "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral", "image", NULL};
static const char *const host_path_order[] = {"path", "type", NULL};
static const char *const secret_order[] = {"secretName", "items", "defaultMode", "optional",
                                           NULL};
static const char *const config_map_order[] = {"name", "items", "defaultMode", "optional",
                                               NULL};
static const char *const downward_order[] = {"items", "defaultMode", NULL};
static const char *const projected_order[] = {"sources", "defaultMode", NULL};
static const char *const sa_token_order[] = {"audience", "expirationSeconds", "path", NULL};
static const char *const field_ref_order[] = {"apiVersion", "fieldPath", NULL};
static const char *const iscsi_order[] = {
    "targetPortal", "iqn", "lun", "iscsiInterface", "fsType", "readOnly", "portals",
    "chapAuthDiscovery", "chapAuthSession", "secretRef", "initiatorName", NULL};
static const char *const rbd_order[] = {"monitors", "image", "fsType", "pool", "user",
                                        "keyring", "secretRef", "readOnly", NULL};
static const char *const azure_disk_order[] = {"diskName", "diskURI", "cachingMode", "fsType",
                                               "readOnly", "kind", NULL};
static const char *const scale_io_order[] = {
    "gateway", "system", "secretRef", "sslEnabled", "protectionDomain", "storagePool",
    "storageMode", "volumeName", "fsType", "readOnly", NULL};
static const char *const pvc_spec_order[] = {
    "accessModes", "selector", "resources", "volumeName", "storageClassName", "volumeMode",
    "dataSource", "dataSourceRef", "volumeAttributesClassName", NULL};
static const char *const image_order[] = {"reference", "pullPolicy", NULL};

/* A plain string default, one row per field a defaulter sets. */
typedef struct str_default {
    const char *source; /* the VolumeSource member */
    const char *field;
    const char *value;
    def_unset how;
    const char *const *order;
} str_default;

static const str_default str_defaults[] = {
    {"hostPath", "type", "", DEF_NIL, host_path_order},
    {"iscsi", "iscsiInterface", "default", DEF_ZERO, iscsi_order},
    {"rbd", "pool", "rbd", DEF_ZERO, rbd_order},
    {"rbd", "user", "admin", DEF_ZERO, rbd_order},
    {"rbd", "keyring", "/etc/ceph/keyring", DEF_ZERO, rbd_order},
    {"azureDisk", "cachingMode", "ReadWrite", DEF_NIL, azure_disk_order},
    {"azureDisk", "fsType", "ext4", DEF_NIL, azure_disk_order},
    {"azureDisk", "kind", "Shared", DEF_NIL, azure_disk_order},
    {"scaleIO", "storageMode", "ThinProvisioned", DEF_ZERO, scale_io_order},
    {"scaleIO", "fsType", "xfs", DEF_ZERO, scale_io_order},
};

/* defaultMode 0644 (420) of the secret, configMap, downwardAPI and
 * projected volumes. */
static const struct {
    const char *source;
    const char *const *order;
} mode_defaults[] = {
    {"secret", secret_order},
    {"configMap", config_map_order},
    {"downwardAPI", downward_order},
    {"projected", projected_order},
};

dra_err def_field_ref(dra_arena *a, dra_doc *ref)
{
    dra_err e;
    if (!ref)
        return DRA_OK;
    if ((e = def_put_str(a, ref, "apiVersion", "v1", field_ref_order, DEF_ZERO)))
        return e;
    def_reorder(ref, field_ref_order);
    return DRA_OK;
}

/* fieldRef.apiVersion of each downward API item. */
static dra_err items_field_refs(dra_arena *a, dra_doc *items)
{
    dra_err e;
    for (size_t i = 0; items && i < items->u.list.n; i++) {
        if ((e = def_field_ref(a, def_map(items->u.list.items[i], "fieldRef"))))
            return e;
    }
    return DRA_OK;
}

static dra_err projected_sources(dra_arena *a, dra_doc *sources)
{
    dra_err e;
    for (size_t i = 0; sources && i < sources->u.list.n; i++) {
        dra_doc *s = sources->u.list.items[i], *tok = def_map(s, "serviceAccountToken");
        if ((e = items_field_refs(a, def_list(def_map(s, "downwardAPI"), "items"))))
            return e;
        if (!tok)
            continue;
        if ((e = def_put_int(a, tok, "expirationSeconds", 3600, sa_token_order, DEF_NIL)))
            return e;
        def_reorder(tok, sa_token_order);
    }
    return DRA_OK;
}

/* Generic ephemeral volumes: the claim template's spec is a PVC spec. */
static dra_err ephemeral_volume(dra_arena *a, dra_doc *eph)
{
    dra_doc *spec = def_map(def_map(eph, "volumeClaimTemplate"), "spec"), *res;
    dra_err e;
    if (!spec)
        return DRA_OK;
    if ((e = def_put_str(a, spec, "volumeMode", "Filesystem", pvc_spec_order, DEF_NIL)))
        return e;
    def_reorder(spec, pvc_spec_order);
    res = def_map(spec, "resources");
    if ((e = def_round_list(a, def_map(res, "limits"))))
        return e;
    return def_round_list(a, def_map(res, "requests"));
}

/* SetDefaults_Volume: no source at all means an emptyDir. */
static int has_source(const dra_doc *v)
{
    for (size_t i = 0; i < v->u.map.n; i++)
        if (strcmp(v->u.map.m[i].key, "name") && v->u.map.m[i].val->kind != DRA_DOC_NULL)
            return 1;
    return 0;
}

static dra_err volume_defaults(dra_arena *a, dra_doc *v)
{
    dra_doc *src, *img;
    dra_err e;
    if (!has_source(v) &&
        (e = def_set(a, v, "emptyDir", dra_doc_new_map(a, 0), volume_order)))
        return e;
    for (size_t i = 0; i < sizeof str_defaults / sizeof str_defaults[0]; i++) {
        const str_default *sd = &str_defaults[i];
        if (!(src = def_map(v, sd->source)))
            continue;
        if ((e = def_put_str(a, src, sd->field, sd->value, sd->order, sd->how)))
            return e;
        def_reorder(src, sd->order);
    }
    if ((src = def_map(v, "azureDisk")) &&
        (e = def_put(a, src, "readOnly", dra_doc_new_bool(a, 0), azure_disk_order, DEF_NIL)))
        return e;
    for (size_t i = 0; i < sizeof mode_defaults / sizeof mode_defaults[0]; i++) {
        if (!(src = def_map(v, mode_defaults[i].source)))
            continue;
        if ((e = def_put_int(a, src, "defaultMode", 0644, mode_defaults[i].order, DEF_NIL)))
            return e;
        def_reorder(src, mode_defaults[i].order);
    }
    if ((e = items_field_refs(a, def_list(def_map(v, "downwardAPI"), "items"))) ||
        (e = projected_sources(a, def_list(def_map(v, "projected"), "sources"))) ||
        (e = ephemeral_volume(a, def_map(v, "ephemeral"))))
        return e;
    /* ImageVolume (beta, on by default in 1.35): the pull policy as for a
     * container image. */
    if ((img = def_map(v, "image"))) {
        if ((e = def_put_str(a, img, "pullPolicy", def_pull_policy(def_str(img, "reference")),
                             image_order, DEF_ZERO)))
            return e;
        def_reorder(img, image_order);
    }
    def_reorder(v, volume_order);
    return DRA_OK;
}

dra_err def_volumes(const def_ctx *c, dra_doc *volumes)
{
    dra_err e;
    for (size_t i = 0; volumes && i < volumes->u.list.n; i++)
        if (volumes->u.list.items[i]->kind == DRA_DOC_MAP &&
            (e = volume_defaults(c->a, volumes->u.list.items[i])))
            return e;
    return DRA_OK;
}

/* ---- Node ----------------------------------------------------------------------------- */

static const char *const node_spec_order[] = {"podCIDR", "podCIDRs", "providerID",
                                              "unschedulable", "taints", "configSource",
                                              "externalID", NULL};
static const char *const node_status_order[] = {
    "capacity", "allocatable", "phase", "conditions", "addresses", "daemonEndpoints",
    "nodeInfo", "images", "volumesInUse", "volumesAttached", "config", "runtimeHandlers",
    "features", NULL};

/* NodeSpec's podCIDR and podCIDRs: a podCIDR that is not podCIDRs[0]
 * (or comes without a list) becomes the list, and podCIDR mirrors the
 * list's first entry. */
static dra_err pod_cidrs(dra_arena *a, dra_doc *spec)
{
    const char *one = def_str(spec, "podCIDR"), *first = NULL;
    dra_doc *l = def_list(spec, "podCIDRs"), *s;
    dra_err e;
    if (l && l->u.list.n && l->u.list.items[0]->kind == DRA_DOC_STRING)
        first = l->u.list.items[0]->u.str.s;
    if (one && *one && (!first || strcmp(first, one))) {
        if (!(l = dra_doc_new_list(a, 1)) || !(s = dra_doc_new_string(a, one, strlen(one))) ||
            (e = dra_doc_list_push(a, l, s)))
            return DRA_ENOMEM;
        return def_set(a, spec, "podCIDRs", l, node_spec_order);
    }
    if (first && *first && (!one || strcmp(one, first)))
        return def_set(a, spec, "podCIDR", dra_doc_new_string(a, first, strlen(first)),
                       node_spec_order);
    return DRA_OK;
}

dra_err def_node(const def_ctx *c, dra_object *node)
{
    dra_doc *st = node->u.node.status, *cap;
    dra_err e;
    if (node->u.node.spec && node->u.node.spec->kind == DRA_DOC_MAP) {
        if ((e = pod_cidrs(c->a, node->u.node.spec)))
            return e;
        def_reorder(node->u.node.spec, node_spec_order);
    }
    if (!st || st->kind != DRA_DOC_MAP)
        return DRA_OK;
    /* SetDefaults_NodeStatus: allocatable is the capacity when absent. */
    cap = def_get(st, "capacity");
    if (cap && cap->kind == DRA_DOC_MAP && cap->u.map.n &&
        (e = def_put(c->a, st, "allocatable", api_doc_copy(c->a, cap), node_status_order,
                     DEF_NIL)))
        return e;
    if ((e = def_round_list(c->a, def_map(st, "capacity"))) ||
        (e = def_round_list(c->a, def_map(st, "allocatable"))))
        return e;
    def_reorder(st, node_status_order);
    return DRA_OK;
}

/* ---- entry point ---------------------------------------------------------------------- */

dra_err dra_api_default(dra_arena *a, dra_object *obj, dra_api_op op,
                        const dra_object *old, dra_diag *d)
{
    def_ctx c = {a, op, d};
    if (!a || !obj || obj->kind == DRA_KIND_UNKNOWN)
        return DRA_EINVAL;
    switch (obj->kind) {
    case DRA_KIND_RESOURCE_CLAIM:
    case DRA_KIND_RESOURCE_CLAIM_TEMPLATE:
        dra_api_set_defaults(obj);
        return DRA_OK;
    case DRA_KIND_POD:
        return def_pod(&c, obj, old && old->kind == DRA_KIND_POD ? old : NULL);
    case DRA_KIND_NODE:
        return def_node(&c, obj);
    default:
        /* ResourceSlice and DeviceClass have no defaults in v1. */
        return DRA_OK;
    }
}
