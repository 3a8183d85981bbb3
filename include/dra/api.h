/*
 * dra/api.h: typed C structs for resource.k8s.io/v1 (ResourceSlice,
 * DeviceClass, ResourceClaim, ResourceClaimTemplate) and the core/v1 Pod
 * and Node fields DRA needs, with decode (dra_doc -> structs), encode
 * (structs -> dra_doc, Go field order, Go omitempty rules) and
 * kube-apiserver validation. Sits on codec; cel, alloc and everything
 * above consume these structs.
 *
 * Memory: every object, string and array reachable from a decoded
 * dra_object lives in the dra_arena passed to the decoder (or, for
 * objects a caller builds by hand, wherever the caller put them; the
 * encoder only reads). Nothing here is freed on its own: drop the arena.
 *
 * Conventions used by every struct below:
 *  - const char * fields: NULL means absent. For Go `*string` fields that
 *    distinguishes absent from "", for plain Go strings both mean empty.
 *  - dra_tri: a Go *bool (DRA_TRI_UNSET, DRA_TRI_FALSE, DRA_TRI_TRUE);
 *    a zeroed struct is "unset".
 *  - dra_opt_i64: a Go *int64 (set flag + value).
 *  - const dra_quantity *: a Go *resource.Quantity, NULL when absent.
 *  - arrays are a pointer plus an n_ count; Go maps are arrays of entries
 *    in source order (the encoder sorts keys like Go's encoding/json).
 *  - `extra`: every struct that maps a JSON object keeps the members the
 *    decoder did not recognise in a DRA_DOC_MAP (NULL when there were
 *    none); the encoder writes them back, so a round trip loses nothing.
 */
#ifndef DRA_API_H
#define DRA_API_H

#include <stdint.h>

#include "dra/base.h"
#include "dra/codec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- small value types --------------------------------------------------- */

typedef enum dra_tri {
    DRA_TRI_UNSET = 0,
    DRA_TRI_FALSE = 1,
    DRA_TRI_TRUE = 2
} dra_tri;
#define DRA_TRI_IS_TRUE(t) ((t) == DRA_TRI_TRUE)
#define DRA_TRI_IS_SET(t) ((t) != DRA_TRI_UNSET)

typedef struct dra_opt_i64 {
    int set;
    int64_t v;
} dra_opt_i64;

/* A list of strings. |set| records that the list was present in the
 * input (possibly empty), which Go keeps apart from absent (nil) where the
 * field has no omitempty: nil encodes as null, empty as []. */
typedef struct dra_strlist {
    const char **v;
    size_t n;
    int set;
} dra_strlist;

/* map[string]string (labels, annotations). */
typedef struct dra_kv {
    const char *key;
    const char *val;
} dra_kv;
typedef struct dra_strmap {
    dra_kv *v;
    size_t n;
} dra_strmap;

/* map[string]resource.Quantity (capacity requests, consumedCapacity,
 * container limits/requests). */
typedef struct dra_qty_entry {
    const char *key;
    dra_quantity q;
} dra_qty_entry;
typedef struct dra_qtymap {
    dra_qty_entry *v;
    size_t n;
} dra_qtymap;

/* ---- metav1 ------------------------------------------------------------- */

typedef struct dra_owner_ref {
    const char *api_version; /* apiVersion */
    const char *kind;
    const char *name;
    const char *uid;
    dra_tri controller;
    dra_tri block_owner_deletion; /* blockOwnerDeletion */
    dra_doc *extra;
} dra_owner_ref;

/* ObjectMeta. Timestamps are kept as the RFC 3339 text they came in as.
 * Fields not modelled here (selfLink, deletionGracePeriodSeconds,
 * managedFields, ...) stay in |extra| and keep their Go position. */
typedef struct dra_object_meta {
    const char *name;
    const char *generate_name; /* generateName */
    const char *namespace_;    /* namespace */
    const char *uid;
    const char *resource_version; /* resourceVersion */
    int64_t generation;
    const char *creation_timestamp; /* creationTimestamp; NULL: omitted */
    const char *deletion_timestamp; /* deletionTimestamp */
    dra_strmap labels;
    dra_strmap annotations;
    dra_owner_ref *owner_refs; /* ownerReferences */
    size_t n_owner_refs;
    dra_strlist finalizers;
    dra_doc *extra;
} dra_object_meta;

/* metav1.Condition (status.devices[].conditions[]). */
typedef struct dra_condition {
    const char *type;
    const char *status;
    int64_t observed_generation;     /* observedGeneration (omitempty) */
    const char *last_transition_time; /* lastTransitionTime (always written) */
    const char *reason;
    const char *message;
    dra_doc *extra;
} dra_condition;

/* ---- core/v1 NodeSelector ------------------------------------------------- */

typedef struct dra_node_selector_req {
    const char *key;
    const char *op; /* operator: In, NotIn, Exists, DoesNotExist, Gt, Lt */
    dra_strlist values;
    dra_doc *extra;
} dra_node_selector_req;

typedef struct dra_node_selector_term {
    dra_node_selector_req *match_expressions; /* matchExpressions */
    size_t n_match_expressions;
    dra_node_selector_req *match_fields; /* matchFields */
    size_t n_match_fields;
    dra_doc *extra;
} dra_node_selector_term;

typedef struct dra_node_selector {
    dra_node_selector_term *terms; /* nodeSelectorTerms */
    size_t n_terms;
    int terms_set; /* nodeSelectorTerms present (nil encodes as null) */
    dra_doc *extra;
} dra_node_selector;

/* ---- ResourceSlice -------------------------------------------------------- */

/* DeviceAttribute: exactly one of int/bool/string/version should be set;
 * the decoder records every member present so validation can report
 * "exactly one". |set| is a mask of DRA_ATTR_* bits. */
enum {
    DRA_ATTR_INT = 1u << 0,
    DRA_ATTR_BOOL = 1u << 1,
    DRA_ATTR_STRING = 1u << 2,
    DRA_ATTR_VERSION = 1u << 3
};
typedef struct dra_attr {
    unsigned set;
    int64_t i;
    int b;
    const char *s; /* string */
    const char *v; /* version (semver text, parse with dra_semver_parse) */
    dra_doc *extra;
} dra_attr;

/* One entry of Device.attributes: map[QualifiedName]DeviceAttribute. */
typedef struct dra_attr_entry {
    const char *name; /* QualifiedName: "id" or "domain/id" */
    dra_attr val;
} dra_attr_entry;

typedef struct dra_capacity_range {
    const dra_quantity *min; /* required by validation, *Quantity in Go */
    const dra_quantity *max;
    const dra_quantity *step;
    dra_doc *extra;
} dra_capacity_range;

/* CapacityRequestPolicy. Go declares `default` without omitempty, so an
 * absent default encodes as null. */
typedef struct dra_capacity_request_policy {
    const dra_quantity *default_; /* default */
    dra_quantity *valid_values;   /* validValues */
    size_t n_valid_values;
    dra_capacity_range *valid_range; /* validRange */
    dra_doc *extra;
} dra_capacity_request_policy;

/* One entry of Device.capacity: map[QualifiedName]DeviceCapacity. */
typedef struct dra_capacity_entry {
    const char *name;
    dra_quantity value;
    dra_capacity_request_policy *request_policy; /* requestPolicy */
    dra_doc *extra;
} dra_capacity_entry;

/* One entry of map[string]Counter ({value: Quantity}). */
typedef struct dra_counter {
    const char *name;
    dra_quantity value;
    dra_doc *extra;
} dra_counter;

typedef struct dra_counter_set {
    const char *name;
    dra_counter *counters;
    size_t n_counters;
    dra_doc *extra;
} dra_counter_set;

/* DeviceCounterConsumption {counterSet, counters}. */
typedef struct dra_counter_consumption {
    const char *counter_set; /* counterSet */
    dra_counter *counters;
    size_t n_counters;
    dra_doc *extra;
} dra_counter_consumption;

typedef struct dra_device_taint {
    const char *key;
    const char *value;
    const char *effect;     /* None, NoSchedule, NoExecute */
    const char *time_added; /* timeAdded, RFC 3339 */
    dra_doc *extra;
} dra_device_taint;

typedef struct dra_device {
    const char *name;
    dra_attr_entry *attrs; /* attributes */
    size_t n_attrs;
    dra_capacity_entry *capacity;
    size_t n_capacity;
    dra_counter_consumption *consumes_counters; /* consumesCounters */
    size_t n_consumes_counters;
    const char *node_name;            /* nodeName (*string) */
    dra_node_selector *node_selector; /* nodeSelector */
    dra_tri all_nodes;                /* allNodes */
    dra_device_taint *taints;
    size_t n_taints;
    dra_tri binds_to_node;                 /* bindsToNode */
    dra_strlist binding_conditions;         /* bindingConditions */
    dra_strlist binding_failure_conditions; /* bindingFailureConditions */
    dra_tri allow_multiple_allocations;     /* allowMultipleAllocations */
    dra_doc *extra;
} dra_device;

typedef struct dra_resource_pool {
    const char *name;
    int64_t generation;
    int64_t resource_slice_count; /* resourceSliceCount */
    dra_doc *extra;
} dra_resource_pool;

typedef struct dra_resource_slice_spec {
    const char *driver;
    dra_resource_pool pool;
    const char *node_name;            /* nodeName (*string) */
    dra_node_selector *node_selector; /* nodeSelector */
    dra_tri all_nodes;                /* allNodes */
    dra_device *devices;
    size_t n_devices;
    dra_tri per_device_node_selection; /* perDeviceNodeSelection */
    dra_counter_set *shared_counters;  /* sharedCounters */
    size_t n_shared_counters;
    dra_doc *extra;
} dra_resource_slice_spec;

typedef struct dra_resource_slice {
    dra_resource_slice_spec spec;
} dra_resource_slice;

/* ---- shared claim/class pieces ------------------------------------------ */

/* DeviceSelector {cel: {expression}}; |cel_set| says `cel` was present. */
typedef struct dra_device_selector {
    int cel_set;
    const char *expression; /* cel.expression */
    dra_doc *cel_extra;     /* unknown members inside `cel` */
    dra_doc *extra;
} dra_device_selector;

/* OpaqueDeviceConfiguration. |parameters| is any JSON value (validation
 * requires an object); NULL when absent or null. */
typedef struct dra_opaque_config {
    const char *driver;
    dra_doc *parameters;
    dra_doc *extra;
} dra_opaque_config;

/* DeviceClaimConfiguration / DeviceClassConfiguration /
 * DeviceAllocationConfiguration share this shape; |source| (FromClass,
 * FromClaim) is used only in allocation results, |requests| not in
 * classes. */
typedef struct dra_device_config {
    const char *source;
    dra_strlist requests;
    dra_opaque_config *opaque;
    dra_doc *extra;
} dra_device_config;

typedef struct dra_device_toleration {
    const char *key;
    const char *op; /* operator: Exists, Equal (default) */
    const char *value;
    const char *effect;
    dra_opt_i64 toleration_seconds; /* tolerationSeconds */
    dra_doc *extra;
} dra_device_toleration;

/* CapacityRequirements {requests: map[QualifiedName]Quantity}. */
typedef struct dra_capacity_requirements {
    dra_qtymap requests;
    dra_doc *extra;
} dra_capacity_requirements;

/* ExactDeviceRequest and DeviceSubRequest: the same fields; |name| is
 * used only by subrequests (firstAvailable[]) and |admin_access| only by
 * exactly. Count is a plain Go int64: |count_set| records that the input
 * had it (count: 0 and absent both encode as absent, as in Go). */
typedef struct dra_device_request_spec {
    const char *name;
    const char *device_class_name; /* deviceClassName */
    dra_device_selector *selectors;
    size_t n_selectors;
    const char *allocation_mode; /* allocationMode: ExactCount | All */
    int64_t count;
    int count_set;
    dra_tri admin_access; /* adminAccess */
    dra_device_toleration *tolerations;
    size_t n_tolerations;
    dra_capacity_requirements *capacity;
    dra_doc *extra;
} dra_device_request_spec;

typedef struct dra_device_request {
    const char *name;
    dra_device_request_spec *exactly;         /* NULL when absent */
    dra_device_request_spec *first_available; /* firstAvailable[] */
    size_t n_first_available;
    dra_doc *extra;
} dra_device_request;

typedef struct dra_device_constraint {
    dra_strlist requests;
    const char *match_attribute;    /* matchAttribute (*string) */
    const char *distinct_attribute; /* distinctAttribute (*string) */
    dra_doc *extra;
} dra_device_constraint;

/* ResourceClaimSpec (= spec.devices plus unknown members). */
typedef struct dra_claim_spec {
    dra_device_request *requests; /* devices.requests */
    size_t n_requests;
    int requests_set; /* present (Go has no omitempty: nil -> null) */
    dra_device_constraint *constraints; /* devices.constraints */
    size_t n_constraints;
    dra_device_config *config; /* devices.config */
    size_t n_config;
    dra_doc *devices_extra; /* unknown members of spec.devices */
    dra_doc *extra;         /* unknown members of spec */
} dra_claim_spec;

/* ---- ResourceClaim status ------------------------------------------------ */

typedef struct dra_device_result {
    const char *request; /* "req" or "req/sub" */
    const char *driver;
    const char *pool;
    const char *device;
    dra_tri admin_access; /* adminAccess */
    dra_device_toleration *tolerations;
    size_t n_tolerations;
    dra_strlist binding_conditions;         /* bindingConditions */
    dra_strlist binding_failure_conditions; /* bindingFailureConditions */
    const char *share_id;                   /* shareID (*UID) */
    dra_qtymap consumed_capacity;           /* consumedCapacity */
    dra_doc *extra;
} dra_device_result;

typedef struct dra_allocation_result {
    dra_device_result *results; /* devices.results */
    size_t n_results;
    dra_device_config *config; /* devices.config (with source) */
    size_t n_config;
    dra_doc *devices_extra;
    dra_node_selector *node_selector; /* nodeSelector; NULL: everywhere */
    const char *allocation_timestamp; /* allocationTimestamp */
    dra_doc *extra;
} dra_allocation_result;

typedef struct dra_consumer_ref {
    const char *api_group; /* apiGroup */
    const char *resource;
    const char *name;
    const char *uid;
    dra_doc *extra;
} dra_consumer_ref;

typedef struct dra_network_data {
    const char *interface_name; /* interfaceName */
    dra_strlist ips;
    const char *hardware_address; /* hardwareAddress */
    dra_doc *extra;
} dra_network_data;

/* AllocatedDeviceStatus. Go declares `conditions` without omitempty. */
typedef struct dra_allocated_device_status {
    const char *driver;
    const char *pool;
    const char *device;
    const char *share_id; /* shareID */
    dra_condition *conditions;
    size_t n_conditions;
    int conditions_set;
    dra_doc *data; /* raw JSON; NULL when absent */
    dra_network_data *network_data; /* networkData */
    dra_doc *extra;
} dra_allocated_device_status;

typedef struct dra_claim_status {
    dra_allocation_result *allocation;
    dra_consumer_ref *reserved_for; /* reservedFor */
    size_t n_reserved_for;
    dra_allocated_device_status *devices;
    size_t n_devices;
    dra_doc *extra;
} dra_claim_status;

typedef struct dra_resource_claim {
    dra_claim_spec spec;
    dra_claim_status status;
} dra_resource_claim;

/* ResourceClaimTemplate.spec = {metadata, spec}. */
typedef struct dra_resource_claim_template {
    dra_object_meta meta; /* spec.metadata (labels/annotations only) */
    dra_claim_spec spec;  /* spec.spec */
    dra_doc *extra;       /* unknown members of the template's spec */
} dra_resource_claim_template;

/* ---- DeviceClass -------------------------------------------------------- */

typedef struct dra_device_class_spec {
    dra_device_selector *selectors;
    size_t n_selectors;
    dra_device_config *config; /* only |opaque| and |extra| are used */
    size_t n_config;
    const char *extended_resource_name; /* extendedResourceName (*string) */
    dra_doc *extra;
} dra_device_class_spec;

typedef struct dra_device_class {
    dra_device_class_spec spec;
} dra_device_class;

/* ---- core/v1 Pod and Node (the fields DRA needs; the rest is |extra|) --- */

typedef struct dra_pod_resource_claim {
    const char *name;
    const char *resource_claim_name;          /* resourceClaimName (*string) */
    const char *resource_claim_template_name; /* resourceClaimTemplateName */
    dra_doc *extra;
} dra_pod_resource_claim;

/* core/v1 ResourceClaim in containers[].resources.claims[]. */
typedef struct dra_container_claim {
    const char *name;
    const char *request;
    dra_doc *extra;
} dra_container_claim;

typedef struct dra_container {
    const char *name;
    const char *image;
    dra_qtymap limits;   /* resources.limits */
    dra_qtymap requests; /* resources.requests */
    dra_container_claim *claims; /* resources.claims */
    size_t n_claims;
    dra_doc *resources_extra;
    dra_doc *extra;
} dra_container;

typedef struct dra_pod_spec {
    dra_container *init_containers; /* initContainers */
    size_t n_init_containers;
    dra_container *containers;
    size_t n_containers;
    const char *node_name; /* nodeName */
    dra_pod_resource_claim *resource_claims; /* resourceClaims */
    size_t n_resource_claims;
    dra_doc *extra;
} dra_pod_spec;

typedef struct dra_pod_claim_status {
    const char *name;
    const char *resource_claim_name; /* resourceClaimName (*string) */
    dra_doc *extra;
} dra_pod_claim_status;

typedef struct dra_pod_status {
    const char *phase;
    dra_pod_claim_status *resource_claim_statuses; /* resourceClaimStatuses */
    size_t n_resource_claim_statuses;
    dra_doc *extra;
} dra_pod_status;

typedef struct dra_pod {
    dra_pod_spec spec;
    dra_pod_status status;
} dra_pod;

/* Node: only metadata is typed; spec and status stay documents. */
typedef struct dra_node {
    dra_doc *spec;   /* NULL: written as {} */
    dra_doc *status; /* NULL: written as {} */
} dra_node;

/* ---- the generic object ------------------------------------------------ */

/* ORDER dra_kind: kind table in src/api/kinds.c. */
typedef enum dra_kind {
    DRA_KIND_UNKNOWN = 0,
    DRA_KIND_RESOURCE_SLICE,
    DRA_KIND_DEVICE_CLASS,
    DRA_KIND_RESOURCE_CLAIM,
    DRA_KIND_RESOURCE_CLAIM_TEMPLATE,
    DRA_KIND_POD,
    DRA_KIND_NODE
} dra_kind;

typedef struct dra_object {
    dra_kind kind;
    const char *api_version; /* as written; e.g. resource.k8s.io/v1 */
    const char *kind_name;   /* "ResourceSlice", ... */
    dra_object_meta meta;
    union {
        dra_resource_slice slice;
        dra_device_class device_class;
        dra_resource_claim claim;
        dra_resource_claim_template claim_template;
        dra_pod pod;
        dra_node node;
    } u;
    dra_doc *extra; /* unknown top-level members */
    int line, col;  /* source position of the object, 0 when unknown */
} dra_object;

/* "ResourceSlice" etc.; NULL for DRA_KIND_UNKNOWN. Static strings. */
const char *dra_api_kind_name(dra_kind kind);
/* The apiVersion this library writes for |kind| ("resource.k8s.io/v1",
 * "v1"). Static; NULL for DRA_KIND_UNKNOWN. */
const char *dra_api_kind_version(dra_kind kind);
/* Kind for (apiVersion, kind), accepting resource.k8s.io/v1 and, since
 * its shape is identical, resource.k8s.io/v1beta2; DRA_KIND_UNKNOWN
 * otherwise (v1beta1 has a different shape and is not registered). */
dra_kind dra_api_kind_lookup(const char *api_version, const char *kind);

/* A zeroed object of |kind| with apiVersion and kind filled in, in |a|.
 * NULL on ENOMEM or for DRA_KIND_UNKNOWN. */
dra_object *dra_api_object_new(dra_arena *a, dra_kind kind);

/* ---- decode / encode ---------------------------------------------------- */

/* Decodes one object from the document |doc| (a map with apiVersion and
 * kind). Everything in *out lives in |a|; strings are copied, so |doc|
 * may be dropped afterwards (unknown members are deep-copied too).
 * Errors, all of them, not only the first, go to |d| with the field path
 * ("spec.devices[0].attributes[uuid]: Invalid value: 5: must be ...")
 * and the source line/column.
 * Returns DRA_OK; DRA_EINVALID when a field has the wrong type or a bad
 * quantity (*out is still set to what could be decoded); DRA_EUNSUPPORTED
 * for an unregistered apiVersion/kind ("no kind \"X\" is registered for
 * version \"Y\"", *out NULL); DRA_EINVAL when |doc| is not a map or lacks
 * apiVersion/kind; DRA_ENOMEM. */
dra_err dra_api_decode(dra_arena *a, const dra_doc *doc, dra_object **out,
                       dra_diag *d);

/* Encodes |obj| as a document in |a| the way kube-apiserver writes it:
 * kind, apiVersion, metadata, spec, status, every struct's fields in Go
 * struct order with Go's encoding/json rules (omitempty drops zero
 * values; a nil pointer or slice without omitempty is null; a non-pointer
 * struct such as status is always written, {} when empty), map keys
 * sorted, quantities canonical, unknown members written back (at their Go
 * position where Kubernetes knows the field but this model does not,
 * else after the known fields). A NULL api_version/kind_name is filled
 * from the kind. Everything in *out is copied into |a|; |obj| is only
 * read. DRA_OK; DRA_EINVAL for DRA_KIND_UNKNOWN; DRA_ENOMEM. */
dra_err dra_api_encode(dra_arena *a, const dra_object *obj, dra_doc **out);

/* Decodes a YAML stream or JSON text holding any number of objects
 * (documents separated by ---; a `kind: List` or `kind: <Kind>List` with
 * items is expanded into its items, and items of a typed list such as
 * ResourceSliceList that carry no apiVersion/kind take the list's). YAML
 * scalars are typed like kubectl's reader (go-yaml v2: `n`, `yes`, `off`
 * are booleans). Objects are returned in order in
 * *objs (an array in |a|, *n entries). Every document is decoded even
 * when an earlier one fails; errors carry line:column and field path.
 * Returns DRA_OK, DRA_EPARSE (bad YAML/JSON, *objs not set), or the first
 * non-OK code dra_api_decode returned (objects that decoded are still
 * returned, the failed ones are left out); DRA_ENOMEM. */
dra_err dra_api_decode_stream(dra_arena *a, const char *text, size_t len,
                              dra_object ***objs, size_t *n, dra_diag *d);

/* Builds kubectl's list wrapper {apiVersion: v1, items: [...], kind: List,
 * metadata: {resourceVersion: ""}} for |n| objects. DRA_OK or DRA_ENOMEM. */
dra_err dra_api_encode_list(dra_arena *a, dra_object *const *objs, size_t n,
                            dra_doc **out);

/* Reports every member |obj| kept as unknown that Kubernetes 1.35 does
 * not define either, as kube-apiserver's strict field validation words
 * it: "unknown field \"spec.devices[0].foo\"", with the source line and
 * column, into |d| (may be NULL). Fields Kubernetes knows but this model
 * keeps untyped (most of a Pod, a Node's spec and status) are not
 * reported, and neither is anything inside them. Returns the count. */
size_t dra_api_unknown_fields(const dra_object *obj, dra_diag *d);

/* Removes from |obj| every member dra_api_unknown_fields reports, as
 * kube-apiserver's decoding into its types drops them when field
 * validation is Warn or Ignore. Returns how many it removed. */
size_t dra_api_drop_unknown_fields(dra_object *obj);

/* Deep copy of |obj| into |a|, made by encoding and decoding, so the copy
 * holds exactly what the encoding holds (unknown members included).
 * DRA_OK; DRA_EINVAL for DRA_KIND_UNKNOWN; DRA_EUNSUPPORTED when a
 * hand-set api_version is not registered for the kind; DRA_ENOMEM. */
dra_err dra_api_object_copy(dra_arena *a, const dra_object *obj, dra_object **out);

/* Sorts the members of every map in |doc| by key, recursively, in place:
 * kubectl's output order (it prints through map[string]interface{}),
 * where dra_api_encode gives the apiserver's Go struct order. */
void dra_api_doc_sort_keys(dra_doc *doc);

/* Applies kube-apiserver's defaults in place: exactly/firstAvailable
 * allocationMode "ExactCount" and count 1 when the mode is ExactCount and
 * count is 0, toleration operator "Equal". Strings set are static. For
 * ResourceClaim and ResourceClaimTemplate; other kinds are left as is. */
void dra_api_set_defaults(dra_object *obj);

/* ---- kube-apiserver's defaulting and default admission (src/api/defaults*.c) */

/* The write a defaulting pass is for. kube-apiserver applies its scheme
 * defaults to every object it decodes; its default admission plugins act
 * only on creates and updates of the main resource. */
typedef enum dra_api_op {
    DRA_API_OP_DECODE = 0, /* scheme defaults only (a status update, a read) */
    DRA_API_OP_CREATE,     /* + what admission adds on create */
    DRA_API_OP_UPDATE      /* + what admission adds on update */
} dra_api_op;

/* Applies, in place, what kube-apiserver 1.35 adds to |obj| before it
 * validates and stores it:
 *  - ResourceClaim, ResourceClaimTemplate: dra_api_set_defaults.
 *  - Pod: SetObjectDefaults_Pod (dnsPolicy, restartPolicy, securityContext,
 *    terminationGracePeriodSeconds, schedulerName, enableServiceLinks;
 *    per container terminationMessagePath/Policy, imagePullPolicy by
 *    tag, port protocol, fieldRef apiVersion, probe and httpGet values,
 *    requests from limits, resource lists rounded to milli; volumes;
 *    pod-level resources; hostNetwork host ports), then for CREATE and
 *    UPDATE the default admission plugins: Priority (CREATE: priority and
 *    preemptionPolicy from the class; UPDATE: kept from |old|),
 *    DefaultTolerationSeconds, ServiceAccount (CREATE: "default", no
 *    token volume), and last the v1 aliases serviceAccount, podIP(s) and
 *    hostIP(s).
 *  - Node: allocatable from capacity, rounding, the podCIDR alias.
 *  - ResourceSlice, DeviceClass: nothing (v1 defines no defaults).
 * Only unset fields are filled, except where kube overwrites too (the
 * v1 aliases; a zero probe value; hostPort 0 under hostNetwork).
 * Running it twice gives what running it once gives. New nodes go into
 * |a|, which must live as long as |obj| (normally the arena |obj| was
 * decoded into); nothing is freed. |old| is the stored object on UPDATE
 * (may be NULL). Returns DRA_OK; DRA_EFORBIDDEN when admission refuses
 * the pod (an unknown priorityClassName, a priority or preemptionPolicy
 * that differs from the class's), with kube's message, without the
 * `pods "x" is forbidden: ` prefix, in |d| (may be NULL; |obj| may be
 * partly defaulted then); DRA_EINVAL for a NULL argument or
 * DRA_KIND_UNKNOWN; DRA_ENOMEM. */
dra_err dra_api_default(dra_arena *a, dra_object *obj, dra_api_op op,
                        const dra_object *old, dra_diag *d);

/* The same for objects kept as documents, by apiVersion/kind: v1
 * Namespace (the kubernetes.io/metadata.name label, which always follows
 * the name: call after the name is final; status.phase Active; on CREATE
 * status {phase: Active} and the "kubernetes" finalizer added to
 * spec.finalizers) and v1 Event (no defaulter upstream: the zero values
 * kube's encoder writes, source {}, the null timestamps, empty
 * reportingComponent/Instance, and Go's field order). Any other kind is
 * left as is. Edits |obj| in place (do not pass a YAML tree with
 * aliases); new nodes in |a|. DRA_OK; DRA_EINVAL when |obj| is not a
 * map; DRA_ENOMEM. */
dra_err dra_api_default_doc(dra_arena *a, dra_doc *obj, dra_api_op op, dra_diag *d);

/* ---- lookups ------------------------------------------------------------ */

/* Value for |key| in |m|, NULL when absent. */
const char *dra_strmap_get(const dra_strmap *m, const char *key);
/* Entry for |key| in |m|, NULL when absent. */
const dra_quantity *dra_qtymap_get(const dra_qtymap *m, const char *key);
/* Attribute |name| of |dev| exactly as spelled (no domain defaulting),
 * NULL when absent. */
const dra_attr *dra_device_attr(const dra_device *dev, const char *name);
/* Capacity |name| of |dev| exactly as spelled, NULL when absent. */
const dra_capacity_entry *dra_device_capacity(const dra_device *dev,
                                              const char *name);

/* ---- validation (src/api/validate*.c) ------------------------------------ */

/* Validates |obj| with kube-apiserver's create rules. DRA_OK, or DRA_EINVALID with every error in |d| as "path: message". */
dra_err dra_api_validate(const dra_object *obj, dra_diag *d);
/* Update rules (immutable fields, e.g. claim spec, slice driver/pool name) between |old_obj| and |new_obj|, plus create rules on |new_obj|. */
dra_err dra_api_validate_update(const dra_object *old_obj, const dra_object *new_obj, dra_diag *d);
/* Status-subresource update rules (allocation set once and then immutable, reservedFor only when allocated and at most 256, devices status entries must name allocated devices, ...). */
dra_err dra_api_validate_status_update(const dra_object *old_obj, const dra_object *new_obj, dra_diag *d);

/* ---- format checks shared with the API server (src/api/validate_util.c) -- */

/* The wording of the label key and value checks (ORDER label_words in
 * validate_util.c). UTIL: k8s.io/apimachinery/pkg/util/validation, which
 * object validation uses ("must be no more than 63 characters", "a
 * qualified name ..."). CONTENT: pkg/api/validate/content of Kubernetes
 * 1.35, which labels.Parse uses for label selectors ("... 63 bytes", "a
 * valid label key ..."). The rules are the same. */
typedef enum dra_api_wording {
    DRA_API_WORDING_UTIL,
    DRA_API_WORDING_CONTENT
} dra_api_wording;

/* apimachinery's IsQualifiedName (IsLabelKey) on |key|: stores its
 * messages (static strings, upstream's order) in |msgs|, at most |cap|,
 * and returns how many there are (at most 4; 0 for a valid key). */
size_t dra_api_check_label_key(const char *key, dra_api_wording w,
                               const char **msgs, size_t cap);
/* IsValidLabelValue (IsLabelValue) on |value|, like the key check (at
 * most 2 messages). */
size_t dra_api_check_label_value(const char *value, dra_api_wording w,
                                 const char **msgs, size_t cap);
/* Appends s[0..len) to |b| quoted like Go's strconv.Quote (%q), as
 * kube-apiserver prints bad values: printable UTF-8 kept, the rest
 * escaped. Out of memory sets b->oom. */
void dra_api_go_quote(dra_buf *b, const char *s, size_t len);

#ifdef __cplusplus
}
#endif
#endif
