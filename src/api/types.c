/*
 * types.c: the field tables of every modelled Go struct, in Go struct
 * order with Go's JSON names and omitempty rules (k8s.io/api resource/v1,
 * core/v1 and apimachinery meta/v1 at Kubernetes 1.35). The generic
 * decoder (decode.c) and encoder (encode.c) are driven by these.
 */
#include <stddef.h>

#include "api_int.h"

/* Field initialisers. O: omitempty. */
#define F(n, ty, fl, T, m) {(n), (ty), (fl), 0, offsetof(T, m), 0, 0, NULL}
#define FSUB(n, ty, fl, T, m, sub) {(n), (ty), (fl), 0, offsetof(T, m), 0, 0, &(sub)}
#define FSKIP(n) {(n), API_F_SKIP, 0, 0, 0, 0, 0, NULL}
#define FLIST(n, fl, T, m, cnt, sub) \
    {(n), API_F_LIST, (fl), 0, offsetof(T, m), offsetof(T, cnt), 0, &(sub)}
#define FLISTSET(n, fl, T, m, cnt, setf, sub)                                 \
    {(n), API_F_LIST, (fl) | API_HAS_OFF3, 0, offsetof(T, m), offsetof(T, cnt), \
     offsetof(T, setf), &(sub)}
#define FMAPOF(n, T, m, cnt, sub) \
    {(n), API_F_MAPOF, API_OMIT, 0, offsetof(T, m), offsetof(T, cnt), 0, &(sub)}
#define FMASK(n, ty, bitv, T, m, maskm) \
    {(n), (ty), 0, (bitv), offsetof(T, m), offsetof(T, maskm), 0, NULL}
#define FINLINE(n, fl, sub) {(n), API_F_INLINE, (fl), 0, 0, 0, 0, &(sub)}
#define FINLINESET(n, fl, T, setf, sub) \
    {(n), API_F_INLINE, (fl) | API_HAS_OFF2, 0, 0, offsetof(T, setf), 0, &(sub)}

#define STRUCT(var, label, T, extram, tbl) \
    const api_struct var = {label, sizeof(T), offsetof(T, extram), 0, tbl, API_NFIELDS(tbl)}
#define MAPSTRUCT(var, label, T, extram, keym, tbl)                            \
    static const api_struct var = {label, sizeof(T), offsetof(T, extram),     \
                                   offsetof(T, keym), tbl, API_NFIELDS(tbl)}

#define O API_OMIT

/* ---- meta/v1 --------------------------------------------------------------- */

static const api_field owner_ref_fields[] = {
    F("apiVersion", API_F_STR, 0, dra_owner_ref, api_version),
    F("kind", API_F_STR, 0, dra_owner_ref, kind),
    F("name", API_F_STR, 0, dra_owner_ref, name),
    F("uid", API_F_STR, 0, dra_owner_ref, uid),
    F("controller", API_F_TRI, O, dra_owner_ref, controller),
    F("blockOwnerDeletion", API_F_TRI, O, dra_owner_ref, block_owner_deletion),
};
static STRUCT(st_owner_ref, "OwnerReference", dra_owner_ref, extra, owner_ref_fields);

static const api_field meta_fields[] = {
    F("name", API_F_STR, O, dra_object_meta, name),
    F("generateName", API_F_STR, O, dra_object_meta, generate_name),
    F("namespace", API_F_STR, O, dra_object_meta, namespace_),
    FSKIP("selfLink"),
    F("uid", API_F_STR, O, dra_object_meta, uid),
    F("resourceVersion", API_F_STR, O, dra_object_meta, resource_version),
    F("generation", API_F_I64, O, dra_object_meta, generation),
    F("creationTimestamp", API_F_PSTR, O, dra_object_meta, creation_timestamp),
    F("deletionTimestamp", API_F_PSTR, O, dra_object_meta, deletion_timestamp),
    FSKIP("deletionGracePeriodSeconds"),
    F("labels", API_F_STRMAP, O, dra_object_meta, labels),
    F("annotations", API_F_STRMAP, O, dra_object_meta, annotations),
    FLIST("ownerReferences", O, dra_object_meta, owner_refs, n_owner_refs, st_owner_ref),
    F("finalizers", API_F_STRLIST, O, dra_object_meta, finalizers),
    FSKIP("managedFields"),
};
STRUCT(api_st_meta, "ObjectMeta", dra_object_meta, extra, meta_fields);

static const api_field condition_fields[] = {
    F("type", API_F_STR, 0, dra_condition, type),
    F("status", API_F_STR, 0, dra_condition, status),
    F("observedGeneration", API_F_I64, O, dra_condition, observed_generation),
    F("lastTransitionTime", API_F_TIME, 0, dra_condition, last_transition_time),
    F("reason", API_F_STR, 0, dra_condition, reason),
    F("message", API_F_STR, 0, dra_condition, message),
};
static STRUCT(st_condition, "Condition", dra_condition, extra, condition_fields);

/* ---- core/v1 NodeSelector -------------------------------------------------- */

static const api_field nsr_fields[] = {
    F("key", API_F_STR, 0, dra_node_selector_req, key),
    F("operator", API_F_STR, 0, dra_node_selector_req, op),
    F("values", API_F_STRLIST, O, dra_node_selector_req, values),
};
static STRUCT(st_nsr, "NodeSelectorRequirement", dra_node_selector_req, extra, nsr_fields);

static const api_field nst_fields[] = {
    FLIST("matchExpressions", O, dra_node_selector_term, match_expressions,
          n_match_expressions, st_nsr),
    FLIST("matchFields", O, dra_node_selector_term, match_fields, n_match_fields, st_nsr),
};
static STRUCT(st_nst, "NodeSelectorTerm", dra_node_selector_term, extra, nst_fields);

static const api_field ns_fields[] = {
    FLISTSET("nodeSelectorTerms", 0, dra_node_selector, terms, n_terms, terms_set, st_nst),
};
static STRUCT(st_node_selector, "NodeSelector", dra_node_selector, extra, ns_fields);

/* ---- ResourceSlice ---------------------------------------------------------- */

static const api_field attr_fields[] = {
    FMASK("int", API_F_MASKI64, DRA_ATTR_INT, dra_attr_entry, val.i, val.set),
    FMASK("bool", API_F_MASKBOOL, DRA_ATTR_BOOL, dra_attr_entry, val.b, val.set),
    FMASK("string", API_F_MASKSTR, DRA_ATTR_STRING, dra_attr_entry, val.s, val.set),
    FMASK("version", API_F_MASKSTR, DRA_ATTR_VERSION, dra_attr_entry, val.v, val.set),
};
MAPSTRUCT(st_attr, "DeviceAttribute", dra_attr_entry, val.extra, name, attr_fields);

static const api_field range_fields[] = {
    F("min", API_F_PQTY, O, dra_capacity_range, min),
    F("max", API_F_PQTY, O, dra_capacity_range, max),
    F("step", API_F_PQTY, O, dra_capacity_range, step),
};
static STRUCT(st_range, "CapacityRequestPolicyRange", dra_capacity_range, extra, range_fields);

static const api_field policy_fields[] = {
    F("default", API_F_PQTY, 0, dra_capacity_request_policy, default_),
    {"validValues", API_F_QTYLIST, O, 0, offsetof(dra_capacity_request_policy, valid_values),
     offsetof(dra_capacity_request_policy, n_valid_values), 0, NULL},
    FSUB("validRange", API_F_PSTRUCT, O, dra_capacity_request_policy, valid_range, st_range),
};
static STRUCT(st_policy, "CapacityRequestPolicy", dra_capacity_request_policy, extra,
              policy_fields);

static const api_field capacity_fields[] = {
    F("value", API_F_QTY, 0, dra_capacity_entry, value),
    FSUB("requestPolicy", API_F_PSTRUCT, O, dra_capacity_entry, request_policy, st_policy),
};
MAPSTRUCT(st_capacity, "DeviceCapacity", dra_capacity_entry, extra, name, capacity_fields);

static const api_field counter_fields[] = {
    F("value", API_F_QTY, 0, dra_counter, value),
};
MAPSTRUCT(st_counter, "Counter", dra_counter, extra, name, counter_fields);

static const api_field counter_set_fields[] = {
    F("name", API_F_STR, 0, dra_counter_set, name),
    FMAPOF("counters", dra_counter_set, counters, n_counters, st_counter),
};
static STRUCT(st_counter_set, "CounterSet", dra_counter_set, extra, counter_set_fields);

static const api_field consumption_fields[] = {
    F("counterSet", API_F_STR, 0, dra_counter_consumption, counter_set),
    FMAPOF("counters", dra_counter_consumption, counters, n_counters, st_counter),
};
static STRUCT(st_consumption, "DeviceCounterConsumption", dra_counter_consumption, extra,
              consumption_fields);

static const api_field taint_fields[] = {
    F("key", API_F_STR, 0, dra_device_taint, key),
    F("value", API_F_STR, O, dra_device_taint, value),
    F("effect", API_F_STR, 0, dra_device_taint, effect),
    F("timeAdded", API_F_PSTR, O, dra_device_taint, time_added),
};
static STRUCT(st_taint, "DeviceTaint", dra_device_taint, extra, taint_fields);

static const api_field device_fields[] = {
    F("name", API_F_STR, 0, dra_device, name),
    FMAPOF("attributes", dra_device, attrs, n_attrs, st_attr),
    FMAPOF("capacity", dra_device, capacity, n_capacity, st_capacity),
    FLIST("consumesCounters", O, dra_device, consumes_counters, n_consumes_counters,
          st_consumption),
    F("nodeName", API_F_PSTR, O, dra_device, node_name),
    FSUB("nodeSelector", API_F_PSTRUCT, O, dra_device, node_selector, st_node_selector),
    F("allNodes", API_F_TRI, O, dra_device, all_nodes),
    FLIST("taints", O, dra_device, taints, n_taints, st_taint),
    F("bindsToNode", API_F_TRI, O, dra_device, binds_to_node),
    F("bindingConditions", API_F_STRLIST, O, dra_device, binding_conditions),
    F("bindingFailureConditions", API_F_STRLIST, O, dra_device, binding_failure_conditions),
    F("allowMultipleAllocations", API_F_TRI, O, dra_device, allow_multiple_allocations),
};
static STRUCT(st_device, "Device", dra_device, extra, device_fields);

static const api_field pool_fields[] = {
    F("name", API_F_STR, 0, dra_resource_pool, name),
    F("generation", API_F_I64, 0, dra_resource_pool, generation),
    F("resourceSliceCount", API_F_I64, 0, dra_resource_pool, resource_slice_count),
};
static STRUCT(st_pool, "ResourcePool", dra_resource_pool, extra, pool_fields);

static const api_field slice_spec_fields[] = {
    F("driver", API_F_STR, 0, dra_resource_slice_spec, driver),
    FSUB("pool", API_F_STRUCT, 0, dra_resource_slice_spec, pool, st_pool),
    F("nodeName", API_F_PSTR, O, dra_resource_slice_spec, node_name),
    FSUB("nodeSelector", API_F_PSTRUCT, O, dra_resource_slice_spec, node_selector,
         st_node_selector),
    F("allNodes", API_F_TRI, O, dra_resource_slice_spec, all_nodes),
    FLIST("devices", O, dra_resource_slice_spec, devices, n_devices, st_device),
    F("perDeviceNodeSelection", API_F_TRI, O, dra_resource_slice_spec,
      per_device_node_selection),
    FLIST("sharedCounters", O, dra_resource_slice_spec, shared_counters, n_shared_counters,
          st_counter_set),
};
STRUCT(api_st_slice_spec, "ResourceSliceSpec", dra_resource_slice_spec, extra,
       slice_spec_fields);

/* ---- selectors, configuration, requests ------------------------------------ */

static const api_field cel_fields[] = {
    F("expression", API_F_STR, 0, dra_device_selector, expression),
};
static STRUCT(st_cel, "CELDeviceSelector", dra_device_selector, cel_extra, cel_fields);

static const api_field selector_fields[] = {
    FINLINESET("cel", O, dra_device_selector, cel_set, st_cel),
};
static STRUCT(st_selector, "DeviceSelector", dra_device_selector, extra, selector_fields);

static const api_field opaque_fields[] = {
    F("driver", API_F_STR, 0, dra_opaque_config, driver),
    F("parameters", API_F_DOC, 0, dra_opaque_config, parameters),
};
static STRUCT(st_opaque, "OpaqueDeviceConfiguration", dra_opaque_config, extra, opaque_fields);

static const api_field claim_config_fields[] = {
    F("requests", API_F_STRLIST, O, dra_device_config, requests),
    FSUB("opaque", API_F_PSTRUCT, O, dra_device_config, opaque, st_opaque),
};
static STRUCT(st_claim_config, "DeviceClaimConfiguration", dra_device_config, extra,
              claim_config_fields);

static const api_field class_config_fields[] = {
    FSUB("opaque", API_F_PSTRUCT, O, dra_device_config, opaque, st_opaque),
};
static STRUCT(st_class_config, "DeviceClassConfiguration", dra_device_config, extra,
              class_config_fields);

static const api_field alloc_config_fields[] = {
    F("source", API_F_STR, 0, dra_device_config, source),
    F("requests", API_F_STRLIST, O, dra_device_config, requests),
    FSUB("opaque", API_F_PSTRUCT, O, dra_device_config, opaque, st_opaque),
};
static STRUCT(st_alloc_config, "DeviceAllocationConfiguration", dra_device_config, extra,
              alloc_config_fields);

static const api_field toleration_fields[] = {
    F("key", API_F_STR, O, dra_device_toleration, key),
    F("operator", API_F_STR, O, dra_device_toleration, op),
    F("value", API_F_STR, O, dra_device_toleration, value),
    F("effect", API_F_STR, O, dra_device_toleration, effect),
    F("tolerationSeconds", API_F_OPTI64, O, dra_device_toleration, toleration_seconds),
};
static STRUCT(st_toleration, "DeviceToleration", dra_device_toleration, extra,
              toleration_fields);

static const api_field capreq_fields[] = {
    F("requests", API_F_QTYMAP, O, dra_capacity_requirements, requests),
};
static STRUCT(st_capreq, "CapacityRequirements", dra_capacity_requirements, extra,
              capreq_fields);

#define REQ_COMMON_HEAD                                                            \
    F("deviceClassName", API_F_STR, 0, dra_device_request_spec, device_class_name), \
        FLIST("selectors", O, dra_device_request_spec, selectors, n_selectors,       \
              st_selector),                                                        \
        F("allocationMode", API_F_STR, O, dra_device_request_spec, allocation_mode), \
        {"count", API_F_I64, O | API_HAS_OFF2, 0, offsetof(dra_device_request_spec, count), \
         offsetof(dra_device_request_spec, count_set), 0, NULL}
#define REQ_COMMON_TAIL                                                             \
    FLIST("tolerations", O, dra_device_request_spec, tolerations, n_tolerations,   \
          st_toleration),                                                          \
        FSUB("capacity", API_F_PSTRUCT, O, dra_device_request_spec, capacity, st_capreq)

static const api_field exact_fields[] = {
    REQ_COMMON_HEAD,
    F("adminAccess", API_F_TRI, O, dra_device_request_spec, admin_access),
    REQ_COMMON_TAIL,
};
static STRUCT(st_exact, "ExactDeviceRequest", dra_device_request_spec, extra, exact_fields);

static const api_field subreq_fields[] = {
    F("name", API_F_STR, 0, dra_device_request_spec, name),
    REQ_COMMON_HEAD,
    REQ_COMMON_TAIL,
};
static STRUCT(st_subreq, "DeviceSubRequest", dra_device_request_spec, extra, subreq_fields);

static const api_field request_fields[] = {
    F("name", API_F_STR, 0, dra_device_request, name),
    FSUB("exactly", API_F_PSTRUCT, O, dra_device_request, exactly, st_exact),
    FLIST("firstAvailable", O, dra_device_request, first_available, n_first_available,
          st_subreq),
};
static STRUCT(st_request, "DeviceRequest", dra_device_request, extra, request_fields);

static const api_field constraint_fields[] = {
    F("requests", API_F_STRLIST, O, dra_device_constraint, requests),
    F("matchAttribute", API_F_PSTR, O, dra_device_constraint, match_attribute),
    F("distinctAttribute", API_F_PSTR, O, dra_device_constraint, distinct_attribute),
};
static STRUCT(st_constraint, "DeviceConstraint", dra_device_constraint, extra,
              constraint_fields);

static const api_field devclaim_fields[] = {
    FLISTSET("requests", 0, dra_claim_spec, requests, n_requests, requests_set, st_request),
    FLIST("constraints", O, dra_claim_spec, constraints, n_constraints, st_constraint),
    FLIST("config", O, dra_claim_spec, config, n_config, st_claim_config),
};
static STRUCT(st_devclaim, "DeviceClaim", dra_claim_spec, devices_extra, devclaim_fields);

static const api_field claim_spec_fields[] = {
    FINLINE("devices", 0, st_devclaim),
};
STRUCT(api_st_claim_spec, "ResourceClaimSpec", dra_claim_spec, extra, claim_spec_fields);

/* ---- ResourceClaim status ------------------------------------------------- */

static const api_field result_fields[] = {
    F("request", API_F_STR, 0, dra_device_result, request),
    F("driver", API_F_STR, 0, dra_device_result, driver),
    F("pool", API_F_STR, 0, dra_device_result, pool),
    F("device", API_F_STR, 0, dra_device_result, device),
    F("adminAccess", API_F_TRI, O, dra_device_result, admin_access),
    FLIST("tolerations", O, dra_device_result, tolerations, n_tolerations, st_toleration),
    F("bindingConditions", API_F_STRLIST, O, dra_device_result, binding_conditions),
    F("bindingFailureConditions", API_F_STRLIST, O, dra_device_result,
      binding_failure_conditions),
    F("shareID", API_F_PSTR, O, dra_device_result, share_id),
    F("consumedCapacity", API_F_QTYMAP, O, dra_device_result, consumed_capacity),
};
static STRUCT(st_result, "DeviceRequestAllocationResult", dra_device_result, extra,
              result_fields);

static const api_field devalloc_fields[] = {
    FLIST("results", O, dra_allocation_result, results, n_results, st_result),
    FLIST("config", O, dra_allocation_result, config, n_config, st_alloc_config),
};
static STRUCT(st_devalloc, "DeviceAllocationResult", dra_allocation_result, devices_extra,
              devalloc_fields);

static const api_field allocation_fields[] = {
    FINLINE("devices", 0, st_devalloc),
    FSUB("nodeSelector", API_F_PSTRUCT, O, dra_allocation_result, node_selector,
         st_node_selector),
    F("allocationTimestamp", API_F_PSTR, O, dra_allocation_result, allocation_timestamp),
};
static STRUCT(st_allocation, "AllocationResult", dra_allocation_result, extra,
              allocation_fields);

static const api_field consumer_fields[] = {
    F("apiGroup", API_F_STR, O, dra_consumer_ref, api_group),
    F("resource", API_F_STR, 0, dra_consumer_ref, resource),
    F("name", API_F_STR, 0, dra_consumer_ref, name),
    F("uid", API_F_STR, 0, dra_consumer_ref, uid),
};
static STRUCT(st_consumer, "ResourceClaimConsumerReference", dra_consumer_ref, extra,
              consumer_fields);

static const api_field network_fields[] = {
    F("interfaceName", API_F_STR, O, dra_network_data, interface_name),
    F("ips", API_F_STRLIST, O, dra_network_data, ips),
    F("hardwareAddress", API_F_STR, O, dra_network_data, hardware_address),
};
static STRUCT(st_network, "NetworkDeviceData", dra_network_data, extra, network_fields);

static const api_field devstatus_fields[] = {
    F("driver", API_F_STR, 0, dra_allocated_device_status, driver),
    F("pool", API_F_STR, 0, dra_allocated_device_status, pool),
    F("device", API_F_STR, 0, dra_allocated_device_status, device),
    F("shareID", API_F_PSTR, O, dra_allocated_device_status, share_id),
    FLISTSET("conditions", 0, dra_allocated_device_status, conditions, n_conditions,
             conditions_set, st_condition),
    F("data", API_F_DOC, O, dra_allocated_device_status, data),
    FSUB("networkData", API_F_PSTRUCT, O, dra_allocated_device_status, network_data,
         st_network),
};
static STRUCT(st_devstatus, "AllocatedDeviceStatus", dra_allocated_device_status, extra,
              devstatus_fields);

static const api_field claim_status_fields[] = {
    FSUB("allocation", API_F_PSTRUCT, O, dra_claim_status, allocation, st_allocation),
    FLIST("reservedFor", O, dra_claim_status, reserved_for, n_reserved_for, st_consumer),
    FLIST("devices", O, dra_claim_status, devices, n_devices, st_devstatus),
};
STRUCT(api_st_claim_status, "ResourceClaimStatus", dra_claim_status, extra,
       claim_status_fields);

static const api_field template_spec_fields[] = {
    FSUB("metadata", API_F_STRUCT, 0, dra_resource_claim_template, meta, api_st_meta),
    FSUB("spec", API_F_STRUCT, 0, dra_resource_claim_template, spec, api_st_claim_spec),
};
STRUCT(api_st_template_spec, "ResourceClaimTemplateSpec", dra_resource_claim_template, extra,
       template_spec_fields);

/* ---- DeviceClass ----------------------------------------------------------- */

static const api_field class_spec_fields[] = {
    FLIST("selectors", O, dra_device_class_spec, selectors, n_selectors, st_selector),
    FLIST("config", O, dra_device_class_spec, config, n_config, st_class_config),
    F("extendedResourceName", API_F_PSTR, O, dra_device_class_spec, extended_resource_name),
};
STRUCT(api_st_class_spec, "DeviceClassSpec", dra_device_class_spec, extra, class_spec_fields);

/* ---- core/v1 Pod ----------------------------------------------------------- */

static const api_field container_claim_fields[] = {
    F("name", API_F_STR, 0, dra_container_claim, name),
    F("request", API_F_STR, O, dra_container_claim, request),
};
static STRUCT(st_container_claim, "ResourceClaim", dra_container_claim, extra,
              container_claim_fields);

static const api_field resources_fields[] = {
    F("limits", API_F_QTYMAP, O, dra_container, limits),
    F("requests", API_F_QTYMAP, O, dra_container, requests),
    FLIST("claims", O, dra_container, claims, n_claims, st_container_claim),
};
static STRUCT(st_resources, "ResourceRequirements", dra_container, resources_extra,
              resources_fields);

static const api_field container_fields[] = {
    F("name", API_F_STR, 0, dra_container, name),
    F("image", API_F_STR, O, dra_container, image),
    FSKIP("command"), FSKIP("args"), FSKIP("workingDir"), FSKIP("ports"),
    FSKIP("envFrom"), FSKIP("env"),
    FINLINE("resources", 0, st_resources),
    FSKIP("resizePolicy"), FSKIP("restartPolicy"), FSKIP("restartPolicyRules"),
    FSKIP("volumeMounts"), FSKIP("volumeDevices"), FSKIP("livenessProbe"),
    FSKIP("readinessProbe"), FSKIP("startupProbe"), FSKIP("lifecycle"),
    FSKIP("terminationMessagePath"), FSKIP("terminationMessagePolicy"),
    FSKIP("imagePullPolicy"), FSKIP("securityContext"), FSKIP("stdin"),
    FSKIP("stdinOnce"), FSKIP("tty"),
};
static STRUCT(st_container, "Container", dra_container, extra, container_fields);

static const api_field pod_claim_fields[] = {
    F("name", API_F_STR, 0, dra_pod_resource_claim, name),
    F("resourceClaimName", API_F_PSTR, O, dra_pod_resource_claim, resource_claim_name),
    F("resourceClaimTemplateName", API_F_PSTR, O, dra_pod_resource_claim,
      resource_claim_template_name),
};
static STRUCT(st_pod_claim, "PodResourceClaim", dra_pod_resource_claim, extra,
              pod_claim_fields);

static const api_field pod_spec_fields[] = {
    FSKIP("volumes"),
    FLIST("initContainers", O, dra_pod_spec, init_containers, n_init_containers, st_container),
    FLIST("containers", 0, dra_pod_spec, containers, n_containers, st_container),
    FSKIP("ephemeralContainers"), FSKIP("restartPolicy"),
    FSKIP("terminationGracePeriodSeconds"), FSKIP("activeDeadlineSeconds"),
    FSKIP("dnsPolicy"), FSKIP("nodeSelector"), FSKIP("serviceAccountName"),
    FSKIP("serviceAccount"), FSKIP("automountServiceAccountToken"),
    F("nodeName", API_F_STR, O, dra_pod_spec, node_name),
    FSKIP("hostNetwork"), FSKIP("hostPID"), FSKIP("hostIPC"),
    FSKIP("shareProcessNamespace"), FSKIP("securityContext"), FSKIP("imagePullSecrets"),
    FSKIP("hostname"), FSKIP("subdomain"), FSKIP("affinity"), FSKIP("schedulerName"),
    FSKIP("tolerations"), FSKIP("hostAliases"), FSKIP("priorityClassName"),
    FSKIP("priority"), FSKIP("dnsConfig"), FSKIP("readinessGates"),
    FSKIP("runtimeClassName"), FSKIP("enableServiceLinks"), FSKIP("preemptionPolicy"),
    FSKIP("overhead"), FSKIP("topologySpreadConstraints"), FSKIP("setHostnameAsFQDN"),
    FSKIP("os"), FSKIP("hostUsers"), FSKIP("schedulingGates"),
    FLIST("resourceClaims", O, dra_pod_spec, resource_claims, n_resource_claims, st_pod_claim),
    FSKIP("resources"), FSKIP("hostnameOverride"), FSKIP("workloadRef"),
};
STRUCT(api_st_pod_spec, "PodSpec", dra_pod_spec, extra, pod_spec_fields);

static const api_field pod_claim_status_fields[] = {
    F("name", API_F_STR, 0, dra_pod_claim_status, name),
    F("resourceClaimName", API_F_PSTR, O, dra_pod_claim_status, resource_claim_name),
};
static STRUCT(st_pod_claim_status, "PodResourceClaimStatus", dra_pod_claim_status, extra,
              pod_claim_status_fields);

static const api_field pod_status_fields[] = {
    FSKIP("observedGeneration"),
    F("phase", API_F_STR, O, dra_pod_status, phase),
    FSKIP("conditions"), FSKIP("message"), FSKIP("reason"), FSKIP("nominatedNodeName"),
    FSKIP("hostIP"), FSKIP("hostIPs"), FSKIP("podIP"), FSKIP("podIPs"),
    FSKIP("startTime"), FSKIP("initContainerStatuses"), FSKIP("containerStatuses"),
    FSKIP("qosClass"), FSKIP("ephemeralContainerStatuses"), FSKIP("resize"),
    FLIST("resourceClaimStatuses", O, dra_pod_status, resource_claim_statuses,
          n_resource_claim_statuses, st_pod_claim_status),
    FSKIP("extendedResourceClaimStatus"),
};
STRUCT(api_st_pod_status, "PodStatus", dra_pod_status, extra, pod_status_fields);

/* ---- top-level objects -------------------------------------------------------
 * TypeMeta is inlined first, kind before apiVersion, as Go writes it. */
#define TYPEMETA                                                 \
    F("kind", API_F_STR, O, dra_object, kind_name),              \
        F("apiVersion", API_F_STR, O, dra_object, api_version)

static const api_field slice_obj_fields[] = {
    TYPEMETA,
    FSUB("metadata", API_F_STRUCT, 0, dra_object, meta, api_st_meta),
    FSUB("spec", API_F_STRUCT, 0, dra_object, u.slice.spec, api_st_slice_spec),
};
static const api_field class_obj_fields[] = {
    TYPEMETA,
    FSUB("metadata", API_F_STRUCT, 0, dra_object, meta, api_st_meta),
    FSUB("spec", API_F_STRUCT, 0, dra_object, u.device_class.spec, api_st_class_spec),
};
static const api_field claim_obj_fields[] = {
    TYPEMETA,
    FSUB("metadata", API_F_STRUCT, 0, dra_object, meta, api_st_meta),
    FSUB("spec", API_F_STRUCT, 0, dra_object, u.claim.spec, api_st_claim_spec),
    FSUB("status", API_F_STRUCT, 0, dra_object, u.claim.status, api_st_claim_status),
};
static const api_field template_obj_fields[] = {
    TYPEMETA,
    FSUB("metadata", API_F_STRUCT, 0, dra_object, meta, api_st_meta),
    FSUB("spec", API_F_STRUCT, 0, dra_object, u.claim_template, api_st_template_spec),
};
static const api_field pod_obj_fields[] = {
    TYPEMETA,
    FSUB("metadata", API_F_STRUCT, 0, dra_object, meta, api_st_meta),
    FSUB("spec", API_F_STRUCT, 0, dra_object, u.pod.spec, api_st_pod_spec),
    FSUB("status", API_F_STRUCT, 0, dra_object, u.pod.status, api_st_pod_status),
};
static const api_field node_obj_fields[] = {
    TYPEMETA,
    FSUB("metadata", API_F_STRUCT, 0, dra_object, meta, api_st_meta),
    F("spec", API_F_DOC, API_EMPTYOBJ, dra_object, u.node.spec),
    F("status", API_F_DOC, API_EMPTYOBJ, dra_object, u.node.status),
};

/* ORDER dra_kind */
static const api_struct kind_structs[] = {
    {NULL, 0, 0, 0, NULL, 0},
    {"ResourceSlice", sizeof(dra_object), offsetof(dra_object, extra), 0, slice_obj_fields,
     API_NFIELDS(slice_obj_fields)},
    {"DeviceClass", sizeof(dra_object), offsetof(dra_object, extra), 0, class_obj_fields,
     API_NFIELDS(class_obj_fields)},
    {"ResourceClaim", sizeof(dra_object), offsetof(dra_object, extra), 0, claim_obj_fields,
     API_NFIELDS(claim_obj_fields)},
    {"ResourceClaimTemplate", sizeof(dra_object), offsetof(dra_object, extra), 0,
     template_obj_fields, API_NFIELDS(template_obj_fields)},
    {"Pod", sizeof(dra_object), offsetof(dra_object, extra), 0, pod_obj_fields,
     API_NFIELDS(pod_obj_fields)},
    {"Node", sizeof(dra_object), offsetof(dra_object, extra), 0, node_obj_fields,
     API_NFIELDS(node_obj_fields)},
};

const api_struct *api_kind_struct(dra_kind kind)
{
    if ((size_t)kind == 0 || (size_t)kind >= API_NFIELDS(kind_structs))
        return NULL;
    return &kind_structs[kind];
}
