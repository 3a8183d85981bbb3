/*
 * openapi_resource.c: schema tables for resource.k8s.io. v1 and v1beta2
 * share one shape, so their types carry no package and are named in the
 * package of the group-version whose document lists them; v1beta1 differs
 * (devices wrap their fields in `basic`, requests are flat instead of
 * `exactly`) and has its own versions of the types on those paths.
 * Descriptions are our own summaries of the upstream field docs.
 */
#include "openapi_int.h"

static const api_openapi_type T_ResourceSlice, T_ResourceSliceSpec, T_ResourcePool, T_Device,
    T_DeviceAttribute, T_DeviceCapacity, T_CapacityRequestPolicy, T_CapacityRequestPolicyRange,
    T_CounterSet, T_Counter, T_DeviceCounterConsumption, T_DeviceTaint, T_DeviceClass,
    T_DeviceClassSpec, T_DeviceSelector, T_CELDeviceSelector, T_DeviceClassConfiguration,
    T_OpaqueDeviceConfiguration, T_ResourceClaim, T_ResourceClaimSpec, T_DeviceClaim,
    T_DeviceRequest, T_ExactDeviceRequest, T_DeviceSubRequest, T_DeviceToleration,
    T_CapacityRequirements, T_DeviceConstraint, T_DeviceClaimConfiguration,
    T_ResourceClaimStatus, T_ResourceClaimConsumerReference, T_AllocationResult,
    T_DeviceAllocationResult, T_DeviceRequestAllocationResult, T_DeviceAllocationConfiguration,
    T_AllocatedDeviceStatus, T_NetworkDeviceData, T_ResourceClaimTemplate,
    T_ResourceClaimTemplateSpec, B_ResourceSlice, B_ResourceSliceSpec, B_Device, B_BasicDevice,
    B_ResourceClaim, B_ResourceClaimSpec, B_DeviceClaim, B_DeviceRequest,
    B_ResourceClaimTemplate, B_ResourceClaimTemplateSpec;

#define D_ATTRS "Attributes of the device, by qualified name (domain/id, or an id in the driver's domain). CEL selectors read them as device.attributes."
#define D_CAPACITY "Capacities of the device, such as memory, by qualified name. CEL selectors read them as device.capacity."

/* ---- ResourceSlice ----------------------------------------------------------- */

static const api_openapi_field F_ResourceSlice[] = {
    F_S("apiVersion", D_APIVERSION),
    F_S("kind", D_KIND),
    F_O("metadata", api_oa_ObjectMeta, D_METADATA),
    F_OR("spec", T_ResourceSliceSpec, "What the driver publishes: the pool, the nodes it serves, the devices and shared counters."),
};
static OA_TYPE(T_ResourceSlice, "ResourceSlice", NULL, 0,
               "One or more devices of a pool that a DRA driver publishes, usually for one node. The scheduler allocates devices from slices to claims.",
               F_ResourceSlice);

#define SLICE_SPEC_FIELDS(devtype)                                                                  \
    F_SR("driver", "DNS subdomain naming the DRA driver that provides these devices. Immutable; field selector spec.driver."), \
    F_OR("pool", T_ResourcePool, "The pool this slice is part of."),                                  \
    F_S("nodeName", "Node the devices are on (node-local pools). Immutable; field selector spec.nodeName. Exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection is set."), \
    F_O("nodeSelector", api_oa_NodeSelector, "Nodes the devices are reachable from (one term), for network-attached devices."), \
    F_B("allNodes", "The devices are reachable from every node."),                                    \
    F_LO("devices", devtype, "The devices of this slice, at most 128 (64 with taints or counters)."), \
    F_B("perDeviceNodeSelection", "Each device says itself which nodes it is reachable from."),       \
    F_LO("sharedCounters", T_CounterSet, "Counter sets that devices of the pool consume from; mutually exclusive with devices.")

static const api_openapi_field F_ResourceSliceSpec[] = {SLICE_SPEC_FIELDS(T_Device)};
static OA_TYPE(T_ResourceSliceSpec, "ResourceSliceSpec", NULL, 0, "What a ResourceSlice publishes.", F_ResourceSliceSpec);

static const api_openapi_field F_ResourcePool[] = {
    F_SR("name", "Name of the pool, often the node name; DNS subdomains separated by slashes. Immutable."),
    F_IR("generation", "Bumped by the driver whenever the pool changes; slices with an older generation are ignored."),
    F_IR("resourceSliceCount", "How many slices make up this generation of the pool."),
};
static OA_TYPE(T_ResourcePool, "ResourcePool", NULL, 0, "The pool a slice belongs to.", F_ResourcePool);

#define DEVICE_FIELDS                                                                               \
    F_MO("attributes", T_DeviceAttribute, D_ATTRS),                                                 \
    F_MO("capacity", T_DeviceCapacity, D_CAPACITY),                                                 \
    F_LO("consumesCounters", T_DeviceCounterConsumption, "Counters of the pool's counter sets this device uses up when allocated."), \
    F_S("nodeName", "With perDeviceNodeSelection: the node this device is on."),                    \
    F_O("nodeSelector", api_oa_NodeSelector, "With perDeviceNodeSelection: the nodes this device is reachable from."), \
    F_B("allNodes", "With perDeviceNodeSelection: the device is reachable from every node."),       \
    F_LO("taints", T_DeviceTaint, "Taints on the device; only claims that tolerate them get it."),  \
    F_B("bindsToNode", "Allocating the device binds the pod to the node it was allocated for."),    \
    F_LS("bindingConditions", "Conditions that must be True in the claim's device status before the pod is bound."), \
    F_LS("bindingFailureConditions", "Conditions whose True value makes the scheduler drop the allocation."), \
    F_B("allowMultipleAllocations", "The device may be allocated to several claims at once (shared capacity).")

static const api_openapi_field F_Device[] = {
    F_SR("name", "Name of the device, a DNS label unique in the pool."),
    DEVICE_FIELDS,
};
static OA_TYPE(T_Device, "Device", NULL, 0, "One device of a pool: its attributes, capacities and constraints.", F_Device);

static const api_openapi_field F_DeviceAttribute[] = {
    F_I("int", "A number."),
    F_B("bool", "True or false."),
    F_S("string", "A string of at most 64 characters."),
    F_S("version", "A semantic version (semver 2.0.0)."),
};
static OA_TYPE(T_DeviceAttribute, "DeviceAttribute", NULL, 0, "One attribute value; exactly one field is set.", F_DeviceAttribute);

static const api_openapi_field F_DeviceCapacity[] = {
    F_QR("value", "The amount of the capacity."),
    F_O("requestPolicy", T_CapacityRequestPolicy, "How much of the capacity a request may consume, when the device is shared."),
};
static OA_TYPE(T_DeviceCapacity, "DeviceCapacity", NULL, 0, "One capacity of a device.", F_DeviceCapacity);

static const api_openapi_field F_CapacityRequestPolicy[] = {
    F_Q("default", "Amount consumed when a request does not say."),
    F_LQ("validValues", "The only amounts a request may consume."),
    F_O("validRange", T_CapacityRequestPolicyRange, "The range of amounts a request may consume."),
};
static OA_TYPE(T_CapacityRequestPolicy, "CapacityRequestPolicy", NULL, 0, "Rules for consuming a shared capacity.", F_CapacityRequestPolicy);

static const api_openapi_field F_CapacityRequestPolicyRange[] = {
    F_QR("min", "Smallest amount."),
    F_Q("max", "Largest amount."),
    F_Q("step", "Amounts are min plus a multiple of step."),
};
static OA_TYPE(T_CapacityRequestPolicyRange, "CapacityRequestPolicyRange", NULL, 0, "A range of amounts.", F_CapacityRequestPolicyRange);

static const api_openapi_field F_CounterSet[] = {
    F_SR("name", "Name of the counter set, a DNS label."),
    F_MO("counters", T_Counter, "The counters and their totals."),
};
static OA_TYPE(T_CounterSet, "CounterSet", NULL, 0, "Counters that devices of a pool share, such as the memory of a partitionable GPU.", F_CounterSet);

static const api_openapi_field F_Counter[] = {
    F_QR("value", "The amount."),
};
static OA_TYPE(T_Counter, "Counter", NULL, 0, "An amount of a counter.", F_Counter);

static const api_openapi_field F_DeviceCounterConsumption[] = {
    F_SR("counterSet", "Name of the counter set consumed from."),
    F_MO("counters", T_Counter, "How much of each counter the device uses."),
};
static OA_TYPE(T_DeviceCounterConsumption, "DeviceCounterConsumption", NULL, 0, "What a device consumes from a counter set.", F_DeviceCounterConsumption);

static const api_openapi_field F_DeviceTaint[] = {
    F_SR("key", "Taint key."),
    F_S("value", "Taint value."),
    F_SR("effect", "NoSchedule, NoExecute or None."),
    F_T("timeAdded", "When the taint was added."),
};
static OA_TYPE(T_DeviceTaint, "DeviceTaint", NULL, 0, "A taint on a device.", F_DeviceTaint);

/* ---- DeviceClass -------------------------------------------------------------------- */

static const api_openapi_field F_DeviceClass[] = {
    F_S("apiVersion", D_APIVERSION),
    F_S("kind", D_KIND),
    F_O("metadata", api_oa_ObjectMeta, D_METADATA),
    F_OR("spec", T_DeviceClassSpec, "The selectors and configuration of the class."),
};
static OA_TYPE(T_DeviceClass, "DeviceClass", NULL, 0,
               "A class of devices claims can ask for: CEL selectors every device of the class satisfies, and configuration applied to them.",
               F_DeviceClass);

static const api_openapi_field F_DeviceClassSpec[] = {
    F_LO("selectors", T_DeviceSelector, "CEL selectors a device must satisfy to be in the class."),
    F_LO("config", T_DeviceClassConfiguration, "Configuration for the devices of the class, passed to the driver."),
    F_S("extendedResourceName", "Extended resource name (such as example.com/gpu) pods may request to get a device of this class."),
};
static OA_TYPE(T_DeviceClassSpec, "DeviceClassSpec", NULL, 0, "What a DeviceClass contains.", F_DeviceClassSpec);

static const api_openapi_field F_DeviceSelector[] = {
    F_O("cel", T_CELDeviceSelector, "A CEL expression over the device."),
};
static OA_TYPE(T_DeviceSelector, "DeviceSelector", NULL, 0, "One device selector.", F_DeviceSelector);

static const api_openapi_field F_CELDeviceSelector[] = {
    F_SR("expression", "A CEL expression that must be true for the device: it sees device.driver, device.attributes, device.capacity and device.allowMultipleAllocations."),
};
static OA_TYPE(T_CELDeviceSelector, "CELDeviceSelector", NULL, 0, "A CEL device selector.", F_CELDeviceSelector);

static const api_openapi_field F_DeviceClassConfiguration[] = {
    F_O("opaque", T_OpaqueDeviceConfiguration, "Driver-specific configuration."),
};
static OA_TYPE(T_DeviceClassConfiguration, "DeviceClassConfiguration", NULL, 0, "Configuration of a class.", F_DeviceClassConfiguration);

static const api_openapi_field F_OpaqueDeviceConfiguration[] = {
    F_SR("driver", "The driver the parameters are for."),
    OA_F("parameters", API_OA_RAW, 0, OA_REQ, NULL, NULL, NULL, "Parameters in the driver's own format (a JSON object, often with apiVersion and kind)."),
};
static OA_TYPE(T_OpaqueDeviceConfiguration, "OpaqueDeviceConfiguration", NULL, 0, "Configuration only the driver interprets.", F_OpaqueDeviceConfiguration);

/* ---- ResourceClaim --------------------------------------------------------------------- */

static const api_openapi_field F_ResourceClaim[] = {
    F_S("apiVersion", D_APIVERSION),
    F_S("kind", D_KIND),
    F_O("metadata", api_oa_ObjectMeta, D_METADATA),
    F_OR("spec", T_ResourceClaimSpec, "What the claim asks for. Immutable."),
    F_O("status", T_ResourceClaimStatus, "Whether and how the claim is allocated, and which pods use it. Written by the scheduler and drivers."),
};
static OA_TYPE(T_ResourceClaim, "ResourceClaim", NULL, 0,
               "A request for devices. The scheduler allocates matching devices and reserves the claim for the pods that use it.",
               F_ResourceClaim);

static const api_openapi_field F_ResourceClaimSpec[] = {
    F_O("devices", T_DeviceClaim, "The devices asked for."),
};
static OA_TYPE(T_ResourceClaimSpec, "ResourceClaimSpec", NULL, 0, "What a claim asks for.", F_ResourceClaimSpec);

#define DEVICE_CLAIM_FIELDS(reqtype)                                                                \
    F_LO("requests", reqtype, "The device requests; every request must be satisfied."),            \
    F_LO("constraints", T_DeviceConstraint, "Constraints across the devices of several requests, such as a matching attribute."), \
    F_LO("config", T_DeviceClaimConfiguration, "Configuration for the requested devices, passed to their drivers.")

static const api_openapi_field F_DeviceClaim[] = {DEVICE_CLAIM_FIELDS(T_DeviceRequest)};
static OA_TYPE(T_DeviceClaim, "DeviceClaim", NULL, 0, "The requests, constraints and configuration of a claim.", F_DeviceClaim);

static const api_openapi_field F_DeviceRequest[] = {
    F_SR("name", "Name of the request, a DNS label unique in the claim; containers and constraints refer to it."),
    F_O("exactly", T_ExactDeviceRequest, "Exactly this: devices of one class. Set either this or firstAvailable."),
    F_LO("firstAvailable", T_DeviceSubRequest, "Alternatives in order of preference; the first that can be satisfied is allocated."),
};
static OA_TYPE(T_DeviceRequest, "DeviceRequest", NULL, 0, "One request for devices.", F_DeviceRequest);

#define REQUEST_BODY_FIELDS                                                                          \
    F_LO("selectors", T_DeviceSelector, "CEL selectors a device must satisfy, in addition to its class's."), \
    F_S("allocationMode", "ExactCount (the default: count devices) or All (every matching device)."), \
    F_I("count", "Number of devices with ExactCount; 1 by default.")

static const api_openapi_field F_ExactDeviceRequest[] = {
    F_SR("deviceClassName", "The DeviceClass the devices come from."),
    REQUEST_BODY_FIELDS,
    F_B("adminAccess", "Ask for administrative access to devices that may be in use (needs a namespace labelled for it)."),
    F_LO("tolerations", T_DeviceToleration, "Device taints this request tolerates."),
    F_O("capacity", T_CapacityRequirements, "Capacity to consume from shared devices."),
};
static OA_TYPE(T_ExactDeviceRequest, "ExactDeviceRequest", NULL, 0, "A request for devices of one class.", F_ExactDeviceRequest);

static const api_openapi_field F_DeviceSubRequest[] = {
    F_SR("name", "Name of the alternative; results refer to it as <request>/<name>."),
    F_SR("deviceClassName", "The DeviceClass the devices come from."),
    REQUEST_BODY_FIELDS,
    F_LO("tolerations", T_DeviceToleration, "Device taints this alternative tolerates."),
    F_O("capacity", T_CapacityRequirements, "Capacity to consume from shared devices."),
};
static OA_TYPE(T_DeviceSubRequest, "DeviceSubRequest", NULL, 0, "One alternative of a firstAvailable request.", F_DeviceSubRequest);

static const api_openapi_field F_DeviceToleration[] = {
    F_S("key", "Taint key to tolerate; every key with Exists when empty."),
    F_S("operator", "Exists or Equal (the default)."),
    F_S("value", "Taint value with Equal."),
    F_S("effect", "Taint effect to tolerate; every effect when empty."),
    F_I("tolerationSeconds", "For NoExecute: how long the allocation survives the taint."),
};
static OA_TYPE(T_DeviceToleration, "DeviceToleration", NULL, 0, "Tolerates device taints.", F_DeviceToleration);

static const api_openapi_field F_CapacityRequirements[] = {
    F_MQ("requests", "How much of each capacity, by qualified name, the request consumes."),
};
static OA_TYPE(T_CapacityRequirements, "CapacityRequirements", NULL, 0, "Capacity a request consumes.", F_CapacityRequirements);

static const api_openapi_field F_DeviceConstraint[] = {
    F_LS("requests", "Requests the constraint applies to; all when empty."),
    F_S("matchAttribute", "Fully qualified attribute every chosen device must have with the same value."),
    F_S("distinctAttribute", "Fully qualified attribute every chosen device must have with a different value."),
};
static OA_TYPE(T_DeviceConstraint, "DeviceConstraint", NULL, 0, "A constraint across devices.", F_DeviceConstraint);

static const api_openapi_field F_DeviceClaimConfiguration[] = {
    F_LS("requests", "Requests the configuration applies to; all when empty."),
    F_O("opaque", T_OpaqueDeviceConfiguration, "Driver-specific configuration."),
};
static OA_TYPE(T_DeviceClaimConfiguration, "DeviceClaimConfiguration", NULL, 0, "Configuration for requested devices.", F_DeviceClaimConfiguration);

static const api_openapi_field F_ResourceClaimStatus[] = {
    F_O("allocation", T_AllocationResult, "The allocated devices, once the claim is allocated. Set once; may only be cleared afterwards."),
    F_LM("reservedFor", T_ResourceClaimConsumerReference, "uid", SMP_MERGE, "uid",
         "Consumers (pods) that may use the claim, at most 256. Merged by uid."),
    F_LM("devices", T_AllocatedDeviceStatus, "driver,device,pool,shareID", 0, NULL,
         "Status of the allocated devices, reported by their drivers."),
};
static OA_TYPE(T_ResourceClaimStatus, "ResourceClaimStatus", NULL, 0, "The state of a claim.", F_ResourceClaimStatus);

static const api_openapi_field F_ResourceClaimConsumerReference[] = {
    F_S("apiGroup", "API group of the consumer; empty for core."),
    F_SR("resource", "Resource of the consumer, such as pods."),
    F_SR("name", "Name of the consumer."),
    F_SR("uid", "UID of the consumer."),
};
static OA_TYPE(T_ResourceClaimConsumerReference, "ResourceClaimConsumerReference", NULL, 0,
               "An object that uses a claim.", F_ResourceClaimConsumerReference);

static const api_openapi_field F_AllocationResult[] = {
    F_O("devices", T_DeviceAllocationResult, "The allocated devices and their configuration."),
    F_O("nodeSelector", api_oa_NodeSelector, "Nodes the allocated devices are usable from; pods using the claim run there."),
    F_T("allocationTimestamp", "When the allocation was made."),
};
static OA_TYPE(T_AllocationResult, "AllocationResult", NULL, 0, "The result of allocating a claim.", F_AllocationResult);

static const api_openapi_field F_DeviceAllocationResult[] = {
    F_LO("results", T_DeviceRequestAllocationResult, "One entry per allocated device."),
    F_LO("config", T_DeviceAllocationConfiguration, "Configuration of the class and the claim, in the order drivers apply it."),
};
static OA_TYPE(T_DeviceAllocationResult, "DeviceAllocationResult", NULL, 0, "Allocated devices.", F_DeviceAllocationResult);

static const api_openapi_field F_DeviceRequestAllocationResult[] = {
    F_SR("request", "The request (or request/alternative) the device was allocated for."),
    F_SR("driver", "The driver of the device."),
    F_SR("pool", "The pool of the device."),
    F_SR("device", "The name of the device in its pool."),
    F_B("adminAccess", "The device was allocated with administrative access."),
    F_LO("tolerations", T_DeviceToleration, "Taints tolerated when the device was allocated."),
    F_LS("bindingConditions", "Conditions to wait for before binding, copied from the device."),
    F_LS("bindingFailureConditions", "Conditions that fail the binding, copied from the device."),
    F_S("shareID", "Identifies this share of a device allocated to several claims."),
    F_MQ("consumedCapacity", "Capacity consumed from a shared device."),
};
static OA_TYPE(T_DeviceRequestAllocationResult, "DeviceRequestAllocationResult", NULL, 0,
               "One allocated device.", F_DeviceRequestAllocationResult);

static const api_openapi_field F_DeviceAllocationConfiguration[] = {
    F_SR("source", "FromClass or FromClaim: where the configuration came from."),
    F_LS("requests", "Requests it applies to; all when empty."),
    F_O("opaque", T_OpaqueDeviceConfiguration, "Driver-specific configuration."),
};
static OA_TYPE(T_DeviceAllocationConfiguration, "DeviceAllocationConfiguration", NULL, 0,
               "Configuration for allocated devices.", F_DeviceAllocationConfiguration);

static const api_openapi_field F_AllocatedDeviceStatus[] = {
    F_SR("driver", "The driver of the device."),
    F_SR("pool", "The pool of the device."),
    F_SR("device", "The name of the device."),
    F_S("shareID", "Which share of a shared device this is."),
    F_LM("conditions", api_oa_Condition, "type", 0, NULL, "Conditions of the device, such as Ready."),
    F_RAW("data", "Driver-specific data about the device."),
    F_O("networkData", T_NetworkDeviceData, "Network settings of a network device."),
};
static OA_TYPE(T_AllocatedDeviceStatus, "AllocatedDeviceStatus", NULL, 0,
               "What a driver reports about an allocated device.", F_AllocatedDeviceStatus);

static const api_openapi_field F_NetworkDeviceData[] = {
    F_S("interfaceName", "Name of the network interface in the pod."),
    F_LS("ips", "IP addresses in CIDR form."),
    F_S("hardwareAddress", "MAC address."),
};
static OA_TYPE(T_NetworkDeviceData, "NetworkDeviceData", NULL, 0, "Network data of a device.", F_NetworkDeviceData);

/* ---- ResourceClaimTemplate --------------------------------------------------------------- */

static const api_openapi_field F_ResourceClaimTemplate[] = {
    F_S("apiVersion", D_APIVERSION),
    F_S("kind", D_KIND),
    F_O("metadata", api_oa_ObjectMeta, D_METADATA),
    F_OR("spec", T_ResourceClaimTemplateSpec, "The claim stamped out for each pod. Immutable."),
};
static OA_TYPE(T_ResourceClaimTemplate, "ResourceClaimTemplate", NULL, 0,
               "A template pods name in spec.resourceClaims; a ResourceClaim is created from it for each pod and deleted with the pod.",
               F_ResourceClaimTemplate);

static const api_openapi_field F_ResourceClaimTemplateSpec[] = {
    F_O("metadata", api_oa_ObjectMeta, "Labels and annotations copied to each generated claim."),
    F_OR("spec", T_ResourceClaimSpec, "The spec of each generated claim."),
};
static OA_TYPE(T_ResourceClaimTemplateSpec, "ResourceClaimTemplateSpec", NULL, 0,
               "The claim a template produces.", F_ResourceClaimTemplateSpec);

/* ---- v1beta1 ----------------------------------------------------------------------------- */

static const api_openapi_field F_B_ResourceSlice[] = {
    F_S("apiVersion", D_APIVERSION),
    F_S("kind", D_KIND),
    F_O("metadata", api_oa_ObjectMeta, D_METADATA),
    F_OR("spec", B_ResourceSliceSpec, "What the driver publishes: the pool, the nodes it serves, the devices and shared counters."),
};
static OA_TYPE(B_ResourceSlice, "ResourceSlice", NULL, 0,
               "One or more devices of a pool that a DRA driver publishes, usually for one node.", F_B_ResourceSlice);

static const api_openapi_field F_B_ResourceSliceSpec[] = {SLICE_SPEC_FIELDS(B_Device)};
static OA_TYPE(B_ResourceSliceSpec, "ResourceSliceSpec", NULL, 0, "What a ResourceSlice publishes.", F_B_ResourceSliceSpec);

static const api_openapi_field F_B_Device[] = {
    F_SR("name", "Name of the device, a DNS label unique in the pool."),
    F_O("basic", B_BasicDevice, "The device's attributes, capacities and constraints."),
};
static OA_TYPE(B_Device, "Device", NULL, 0, "One device of a pool.", F_B_Device);

static const api_openapi_field F_B_BasicDevice[] = {DEVICE_FIELDS};
static OA_TYPE(B_BasicDevice, "BasicDevice", NULL, 0, "The fields of a device.", F_B_BasicDevice);

static const api_openapi_field F_B_ResourceClaim[] = {
    F_S("apiVersion", D_APIVERSION),
    F_S("kind", D_KIND),
    F_O("metadata", api_oa_ObjectMeta, D_METADATA),
    F_OR("spec", B_ResourceClaimSpec, "What the claim asks for. Immutable."),
    F_O("status", T_ResourceClaimStatus, "Whether and how the claim is allocated, and which pods use it."),
};
static OA_TYPE(B_ResourceClaim, "ResourceClaim", NULL, 0, "A request for devices.", F_B_ResourceClaim);

static const api_openapi_field F_B_ResourceClaimSpec[] = {
    F_O("devices", B_DeviceClaim, "The devices asked for."),
};
static OA_TYPE(B_ResourceClaimSpec, "ResourceClaimSpec", NULL, 0, "What a claim asks for.", F_B_ResourceClaimSpec);

static const api_openapi_field F_B_DeviceClaim[] = {DEVICE_CLAIM_FIELDS(B_DeviceRequest)};
static OA_TYPE(B_DeviceClaim, "DeviceClaim", NULL, 0, "The requests, constraints and configuration of a claim.", F_B_DeviceClaim);

static const api_openapi_field F_B_DeviceRequest[] = {
    F_SR("name", "Name of the request, a DNS label unique in the claim."),
    F_S("deviceClassName", "The DeviceClass the devices come from; not set together with firstAvailable."),
    REQUEST_BODY_FIELDS,
    F_B("adminAccess", "Ask for administrative access to devices that may be in use."),
    F_LO("firstAvailable", T_DeviceSubRequest, "Alternatives in order of preference, instead of deviceClassName."),
    F_LO("tolerations", T_DeviceToleration, "Device taints this request tolerates."),
    F_O("capacity", T_CapacityRequirements, "Capacity to consume from shared devices."),
};
static OA_TYPE(B_DeviceRequest, "DeviceRequest", NULL, 0, "One request for devices.", F_B_DeviceRequest);

static const api_openapi_field F_B_ResourceClaimTemplate[] = {
    F_S("apiVersion", D_APIVERSION),
    F_S("kind", D_KIND),
    F_O("metadata", api_oa_ObjectMeta, D_METADATA),
    F_OR("spec", B_ResourceClaimTemplateSpec, "The claim stamped out for each pod."),
};
static OA_TYPE(B_ResourceClaimTemplate, "ResourceClaimTemplate", NULL, 0,
               "A template from which a ResourceClaim is created for each pod.", F_B_ResourceClaimTemplate);

static const api_openapi_field F_B_ResourceClaimTemplateSpec[] = {
    F_O("metadata", api_oa_ObjectMeta, "Labels and annotations copied to each generated claim."),
    F_OR("spec", B_ResourceClaimSpec, "The spec of each generated claim."),
};
static OA_TYPE(B_ResourceClaimTemplateSpec, "ResourceClaimTemplateSpec", NULL, 0,
               "The claim a template produces.", F_B_ResourceClaimTemplateSpec);

/* ---- roots -------------------------------------------------------------------------------- */

#define RK "resource.k8s.io"
static const api_openapi_root roots[] = {
    {RK, "v1", "DeviceClass", &T_DeviceClass},
    {RK, "v1", "ResourceClaim", &T_ResourceClaim},
    {RK, "v1", "ResourceClaimTemplate", &T_ResourceClaimTemplate},
    {RK, "v1", "ResourceSlice", &T_ResourceSlice},
    {RK, "v1beta2", "DeviceClass", &T_DeviceClass},
    {RK, "v1beta2", "ResourceClaim", &T_ResourceClaim},
    {RK, "v1beta2", "ResourceClaimTemplate", &T_ResourceClaimTemplate},
    {RK, "v1beta2", "ResourceSlice", &T_ResourceSlice},
    {RK, "v1beta1", "DeviceClass", &T_DeviceClass},
    {RK, "v1beta1", "ResourceClaim", &B_ResourceClaim},
    {RK, "v1beta1", "ResourceClaimTemplate", &B_ResourceClaimTemplate},
    {RK, "v1beta1", "ResourceSlice", &B_ResourceSlice},
};

const api_openapi_root *api_oa_resource_roots(size_t *n)
{
    *n = OA_N(roots);
    return roots;
}
