/*
 * openapi_core.c: schema tables for meta/v1 (ObjectMeta and friends) and
 * the core/v1 kinds drad serves: Pod (deep enough for `kubectl explain
 * pod.spec.containers` and for strategic merge patch of every list that
 * merges), Node, Namespace, Event. Types drad never looks inside (probes,
 * security contexts, affinity, volume sources) are described but kept
 * as plain objects; their lists are all atomic upstream, so patches
 * treat them alike. Descriptions are our own summaries.
 */
#include "openapi_int.h"

/* forward declarations, so the tables can refer to each other in any order */
static const api_openapi_type T_OwnerReference, T_ManagedFieldsEntry, T_LabelSelector,
    T_LabelSelectorRequirement, T_Pod, T_PodSpec, T_Container, T_EphemeralContainer,
    T_ContainerPort, T_EnvVar, T_EnvVarSource, T_EnvFromSource, T_ResourceRequirements,
    T_ContainerClaim, T_VolumeMount, T_VolumeDevice, T_Volume, T_Toleration,
    T_PodResourceClaim, T_PodSchedulingGate, T_HostAlias, T_TopologySpreadConstraint,
    T_LocalObjectReference, T_PodReadinessGate, T_PodStatus, T_PodCondition, T_PodIP,
    T_HostIP, T_ContainerStatus, T_ContainerState, T_ContainerStateWaiting,
    T_ContainerStateRunning, T_ContainerStateTerminated, T_PodResourceClaimStatus, T_PodOS,
    T_ContainerResizePolicy, T_Opaque, T_Probe, T_Lifecycle, T_SecurityContext,
    T_PodSecurityContext, T_Affinity, T_PodDNSConfig, T_VolumeSourceOpaque,
    T_VolumeMountStatus, T_Node, T_NodeSpec, T_Taint, T_NodeStatus, T_NodeCondition,
    T_NodeAddress, T_NodeSystemInfo, T_NodeDaemonEndpoints, T_DaemonEndpoint,
    T_ContainerImage, T_AttachedVolume, T_NodeRuntimeHandler, T_Namespace, T_NamespaceSpec,
    T_NamespaceStatus, T_NamespaceCondition, T_Event, T_ObjectReference, T_EventSource,
    T_EventSeries, T_NodeSelectorTerm, T_NodeSelectorRequirement, T_Binding;

/* ---- meta/v1 ------------------------------------------------------------- */

static const api_openapi_field F_ObjectMeta[] = {
    F_S("name", "Name of the object, unique among objects of its kind (within its namespace for namespaced kinds). Required on create unless generateName is set; cannot be updated."),
    F_S("generateName", "Prefix the server uses to generate a unique name when name is empty: it appends a short random suffix."),
    F_S("namespace", "Namespace the object lives in. Empty for cluster-scoped kinds; must be a DNS label; cannot be updated."),
    F_S("selfLink", "Deprecated and no longer set by the server."),
    F_S("uid", "Unique identifier the server assigns on create. Read-only; differs between an object and a later one with the same name."),
    F_S("resourceVersion", "Opaque version of this object as stored. Clients pass it back unchanged for optimistic concurrency and watches. Read-only."),
    F_I("generation", "Sequence number of the desired state, bumped by the server when the spec changes. Read-only."),
    F_T("creationTimestamp", "When the server created the object, in RFC 3339 form, UTC. Read-only."),
    F_T("deletionTimestamp", "When the object was marked for deletion. Set by the server when deletion is requested and finalizers keep the object; read-only."),
    F_I("deletionGracePeriodSeconds", "Seconds the object may take to terminate gracefully once deletion was requested. Read-only."),
    F_MS("labels", "String keys and values used to organize and select objects (label selectors)."),
    F_MS("annotations", "Unstructured key/value metadata for tools; not used for selection."),
    F_LM("ownerReferences", T_OwnerReference, "uid", SMP_MERGE, "uid", "Objects this one depends on. When every owner is gone the object is garbage collected. Entries are merged by uid."),
    F_SET("finalizers", SMP_MERGE, "Names of pending cleanup steps. An object with finalizers is only marked for deletion until each is removed."),
    F_LO("managedFields", T_ManagedFieldsEntry, "Which manager (field manager) owns which fields, as server-side apply maintains it. Mostly for internal bookkeeping."),
};
OA_TYPE(api_oa_ObjectMeta, "ObjectMeta", PKG_META, 0,
        "Metadata every persisted object has: name, namespace, labels, annotations and the fields the system maintains.",
        F_ObjectMeta);

static const api_openapi_field F_OwnerReference[] = {
    F_SR("apiVersion", "API version of the owner."),
    F_SR("kind", "Kind of the owner."),
    F_SR("name", "Name of the owner."),
    F_SR("uid", "UID of the owner."),
    F_B("controller", "True when the owner is the managing controller; at most one owner may be."),
    F_B("blockOwnerDeletion", "When true, foreground deletion of the owner waits until this object is gone."),
};
static OA_TYPE(T_OwnerReference, "OwnerReference", PKG_META, API_OA_T_ATOMIC,
               "Identifies an owning object. The owner must be in the same namespace as the dependent, or cluster-scoped.",
               F_OwnerReference);

static const api_openapi_field F_ManagedFieldsEntry[] = {
    F_S("manager", "Name of the workflow (field manager) managing these fields."),
    F_S("operation", "Operation that made this entry: Apply or Update."),
    F_S("apiVersion", "API version the field set is expressed in."),
    F_T("time", "When the fields were last changed by this manager."),
    F_S("fieldsType", "Format of fieldsV1; only \"FieldsV1\" exists."),
    F_FV1("fieldsV1", "The set of fields, as a trie of f:<field>, k:<keys>, v:<value> and i:<index> entries."),
    F_S("subresource", "Subresource the fields were changed through, empty for the main resource."),
};
static OA_TYPE(T_ManagedFieldsEntry, "ManagedFieldsEntry", PKG_META, 0,
               "The fields one manager owns, as recorded by server-side apply and field tracking.",
               F_ManagedFieldsEntry);

static const api_openapi_field F_Condition[] = {
    F_SR("type", "Condition type in CamelCase or domain/Type form."),
    F_SR("status", "True, False or Unknown."),
    F_I("observedGeneration", "The metadata.generation the condition was computed for."),
    F_T("lastTransitionTime", "When the status last changed."),
    F_S("reason", "Machine-readable CamelCase reason for the last transition."),
    F_S("message", "Human-readable details about the transition."),
};
OA_TYPE(api_oa_Condition, "Condition", PKG_META, 0,
        "One aspect of the current state of an object.", F_Condition);

static const api_openapi_field F_LabelSelector[] = {
    F_MS("matchLabels", "Exact label matches; each is the same as an In requirement with one value."),
    F_LO("matchExpressions", T_LabelSelectorRequirement, "Set-based requirements; all must hold."),
};
static OA_TYPE(T_LabelSelector, "LabelSelector", PKG_META, API_OA_T_ATOMIC,
               "A label query over objects; requirements are ANDed, an empty selector matches everything.",
               F_LabelSelector);

static const api_openapi_field F_LabelSelectorRequirement[] = {
    F_SR("key", "Label key the requirement applies to."),
    F_SR("operator", "In, NotIn, Exists or DoesNotExist."),
    F_LS("values", "Values for In and NotIn; must be empty for Exists and DoesNotExist."),
};
static OA_TYPE(T_LabelSelectorRequirement, "LabelSelectorRequirement", PKG_META, 0,
               "A key, an operator and values.", F_LabelSelectorRequirement);

/* ---- shared core/v1 pieces ------------------------------------------------ */

static const api_openapi_field F_Opaque[] = {{0}};
static const api_openapi_type T_Opaque = {"Object", PKG_CORE, "An object drad does not inspect.", F_Opaque, 0, 0};

static const api_openapi_type T_Probe = {"Probe", PKG_CORE,
    "A health check run against a container: an exec command, an HTTP GET, a TCP or gRPC connection, with timing and thresholds.",
    F_Opaque, 0, 0};
static const api_openapi_type T_Lifecycle = {"Lifecycle", PKG_CORE,
    "Actions the kubelet takes right after a container starts (postStart) and before it stops (preStop).",
    F_Opaque, 0, 0};
static const api_openapi_type T_SecurityContext = {"SecurityContext", PKG_CORE,
    "Security settings of one container (user and group ids, capabilities, privileged mode, seccomp, SELinux); they override the pod's.",
    F_Opaque, 0, 0};
static const api_openapi_type T_PodSecurityContext = {"PodSecurityContext", PKG_CORE,
    "Security settings for every container of the pod (user and group ids, fsGroup, sysctls, seccomp, SELinux).",
    F_Opaque, 0, 0};
static const api_openapi_type T_Affinity = {"Affinity", PKG_CORE,
    "Scheduling constraints: node affinity, pod affinity and pod anti-affinity.", F_Opaque, 0, 0};
static const api_openapi_type T_PodDNSConfig = {"PodDNSConfig", PKG_CORE,
    "DNS settings merged into the configuration generated from dnsPolicy: nameservers, searches, options.",
    F_Opaque, 0, 0};
static const api_openapi_type T_EnvVarSource = {"EnvVarSource", PKG_CORE,
    "Where an environment variable's value comes from: a field of the pod, a resource of the container, a ConfigMap or Secret key, or a file.",
    F_Opaque, 0, 0};
static const api_openapi_type T_VolumeSourceOpaque = {"VolumeSource", PKG_CORE,
    "One kind of volume source; see the Kubernetes volume documentation for its fields.", F_Opaque, 0, 0};
static const api_openapi_type T_VolumeMountStatus = {"VolumeMountStatus", PKG_CORE,
    "The state of one volume mount of a container.", F_Opaque, 0, 0};

static const api_openapi_field F_NodeSelectorRequirement[] = {
    F_SR("key", "Label (or field) key the requirement applies to."),
    F_SR("operator", "In, NotIn, Exists, DoesNotExist, Gt or Lt."),
    F_LS("values", "Values for In and NotIn; one integer for Gt and Lt; empty for Exists and DoesNotExist."),
};
static OA_TYPE(T_NodeSelectorRequirement, "NodeSelectorRequirement", PKG_CORE, 0,
               "A key, an operator and values, matched against node labels or fields.",
               F_NodeSelectorRequirement);

static const api_openapi_field F_NodeSelectorTerm[] = {
    F_LO("matchExpressions", T_NodeSelectorRequirement, "Requirements on node labels; all must hold."),
    F_LO("matchFields", T_NodeSelectorRequirement, "Requirements on node fields; all must hold."),
};
static OA_TYPE(T_NodeSelectorTerm, "NodeSelectorTerm", PKG_CORE, API_OA_T_ATOMIC,
               "Requirements ANDed together; an empty term matches no node.", F_NodeSelectorTerm);

static const api_openapi_field F_NodeSelector[] = {
    OA_F("nodeSelectorTerms", API_OA_ARRAY, API_OA_OBJECT, API_OA_F_ATOMIC | OA_REQ, &T_NodeSelectorTerm,
         NULL, NULL, "Terms ORed together: a node matches when any term does."),
};
OA_TYPE(api_oa_NodeSelector, "NodeSelector", PKG_CORE, API_OA_T_ATOMIC,
        "Selects nodes by their labels or fields.", F_NodeSelector);

static const api_openapi_field F_LocalObjectReference[] = {
    F_S("name", "Name of the referenced object in the same namespace."),
};
static OA_TYPE(T_LocalObjectReference, "LocalObjectReference", PKG_CORE, API_OA_T_ATOMIC,
               "A reference to an object in the same namespace.", F_LocalObjectReference);

static const api_openapi_field F_ObjectReference[] = {
    F_S("kind", "Kind of the referent."),
    F_S("namespace", "Namespace of the referent."),
    F_S("name", "Name of the referent."),
    F_S("uid", "UID of the referent."),
    F_S("apiVersion", "API version of the referent."),
    F_S("resourceVersion", "Specific resourceVersion this reference is made from, if any."),
    F_S("fieldPath", "Part of the object the reference is about, such as spec.containers{name}."),
};
static OA_TYPE(T_ObjectReference, "ObjectReference", PKG_CORE, API_OA_T_ATOMIC,
               "A reference to any object, with enough information to inspect or modify it.",
               F_ObjectReference);

/* ---- Pod -------------------------------------------------------------------- */

static const api_openapi_field F_Pod[] = {
    F_S("apiVersion", D_APIVERSION),
    F_S("kind", D_KIND),
    F_O("metadata", api_oa_ObjectMeta, D_METADATA),
    F_O("spec", T_PodSpec, "Desired behaviour of the pod: its containers, volumes, scheduling constraints and claims."),
    F_O("status", T_PodStatus, "Most recently observed status of the pod, maintained by the system. Read-only for users."),
};
static OA_TYPE(T_Pod, "Pod", PKG_CORE, 0,
               "A group of containers that run together on one node, sharing network and storage.", F_Pod);

#define CONTAINER_FIELDS                                                                              \
    F_SR("name", "Name of the container, a DNS label unique within the pod; cannot be updated."),    \
    F_S("image", "Container image to run."),                                                         \
    F_LS("command", "Entrypoint array, not run in a shell; replaces the image's ENTRYPOINT. $(VAR) references expand."), \
    F_LS("args", "Arguments to the entrypoint; replace the image's CMD. $(VAR) references expand."), \
    F_S("workingDir", "Working directory of the container; the image's default when empty."),       \
    F_LM("ports", T_ContainerPort, "containerPort,protocol", SMP_MERGE, "containerPort", "Ports the container exposes; informational. Merged by containerPort."), \
    F_LO("envFrom", T_EnvFromSource, "Sources whose keys all become environment variables; env entries win on conflicts."), \
    F_LM("env", T_EnvVar, "name", SMP_MERGE, "name", "Environment variables set in the container. Merged by name."), \
    F_O("resources", T_ResourceRequirements, "Compute resources the container requests and is limited to, and the resource claims it uses."), \
    F_LO("resizePolicy", T_ContainerResizePolicy, "How each resource may be resized in place."), \
    F_S("restartPolicy", "For init containers only: Always makes it a sidecar that keeps running beside the main containers."), \
    F_LO("restartPolicyRules", T_Opaque, "Rules that decide, per exit code, whether the container restarts."), \
    F_LM("volumeMounts", T_VolumeMount, "mountPath", SMP_MERGE, "mountPath", "Pod volumes to mount into the container's filesystem. Merged by mountPath."), \
    F_LM("volumeDevices", T_VolumeDevice, "devicePath", SMP_MERGE, "devicePath", "Block devices the container uses. Merged by devicePath."), \
    F_O("livenessProbe", T_Probe, "Periodic check of container liveness; the container restarts when it fails."), \
    F_O("readinessProbe", T_Probe, "Periodic check of readiness to serve; failure removes the pod from service endpoints."), \
    F_O("startupProbe", T_Probe, "Check that the container started; other probes wait until it succeeds."), \
    F_O("lifecycle", T_Lifecycle, "Actions run on container start and stop."), \
    F_S("terminationMessagePath", "File whose content becomes the container's termination message."), \
    F_S("terminationMessagePolicy", "File or FallbackToLogsOnError: where the termination message comes from."), \
    F_S("imagePullPolicy", "Always, Never or IfNotPresent."), \
    F_O("securityContext", T_SecurityContext, "Security options of this container."), \
    F_B("stdin", "Allocate a buffer for stdin in the container runtime."), \
    F_B("stdinOnce", "Close stdin after the first attach session ends."), \
    F_B("tty", "Allocate a TTY for the container (needs stdin).")

static const api_openapi_field F_Container[] = {CONTAINER_FIELDS};
static OA_TYPE(T_Container, "Container", PKG_CORE, 0,
               "A single application container that runs in a pod.", F_Container);

static const api_openapi_field F_EphemeralContainer[] = {
    CONTAINER_FIELDS,
    F_S("targetContainerName", "Container whose namespaces (process, IPC) this ephemeral container joins."),
};
static OA_TYPE(T_EphemeralContainer, "EphemeralContainer", PKG_CORE, 0,
               "A temporary container added to a running pod for debugging; it has no ports, probes or resources.",
               F_EphemeralContainer);

static const api_openapi_field F_PodSpec[] = {
    F_LM("volumes", T_Volume, "name", SMP_MERGE_RETAIN, "name", "Volumes the pod's containers can mount. Merged by name."),
    F_LM("initContainers", T_Container, "name", SMP_MERGE, "name", "Containers run in order before the app containers start; each must succeed. Merged by name."),
    OA_F("containers", API_OA_ARRAY, API_OA_OBJECT, SMP_MERGE | OA_REQ, &T_Container, "name", "name",
         "The pod's application containers; at least one. Merged by name."),
    F_LM("ephemeralContainers", T_EphemeralContainer, "name", SMP_MERGE, "name", "Debugging containers added to the running pod. Merged by name."),
    F_S("restartPolicy", "Always, OnFailure or Never: when the kubelet restarts containers that exit."),
    F_I("terminationGracePeriodSeconds", "Seconds the pod gets to stop gracefully before its processes are killed."),
    F_I("activeDeadlineSeconds", "Seconds the pod may be active before the system marks it failed."),
    F_S("dnsPolicy", "ClusterFirst, ClusterFirstWithHostNet, Default or None."),
    F_MSA("nodeSelector", "Labels a node must carry for the pod to be scheduled there."),
    F_S("serviceAccountName", "Service account the pod runs as."),
    F_S("serviceAccount", "Deprecated alias of serviceAccountName."),
    F_B("automountServiceAccountToken", "Whether the service account token is mounted."),
    F_S("nodeName", "Node the pod runs on. The scheduler sets it (through the binding subresource); setting it directly skips scheduling."),
    F_B("hostNetwork", "Use the node's network namespace."),
    F_B("hostPID", "Use the node's process namespace."),
    F_B("hostIPC", "Use the node's IPC namespace."),
    F_B("shareProcessNamespace", "Containers of the pod share one process namespace."),
    F_O("securityContext", T_PodSecurityContext, "Pod-level security attributes."),
    F_LM("imagePullSecrets", T_LocalObjectReference, "name", SMP_MERGE, "name", "Secrets used to pull the images. Merged by name."),
    F_S("hostname", "Hostname of the pod; the pod name when empty."),
    F_S("subdomain", "Subdomain of the pod's fully qualified hostname."),
    F_O("affinity", T_Affinity, "Scheduling constraints on nodes and other pods."),
    F_S("schedulerName", "Scheduler that places the pod; the default scheduler when empty."),
    F_LO("tolerations", T_Toleration, "Node taints the pod tolerates."),
    F_LM("hostAliases", T_HostAlias, "ip", SMP_MERGE, "ip", "Extra /etc/hosts entries. Merged by ip."),
    F_S("priorityClassName", "PriorityClass giving the pod's priority."),
    F_I32("priority", "Priority value resolved from priorityClassName by admission."),
    F_O("dnsConfig", T_PodDNSConfig, "DNS parameters in addition to those from dnsPolicy."),
    F_LO("readinessGates", T_PodReadinessGate, "Extra conditions that must be True for the pod to be ready."),
    F_S("runtimeClassName", "RuntimeClass used to run the pod."),
    F_B("enableServiceLinks", "Inject service information as environment variables (Docker links style)."),
    F_S("preemptionPolicy", "Never or PreemptLowerPriority."),
    F_MQ("overhead", "Resources the pod's sandbox uses on top of its containers, set by admission."),
    F_LM("topologySpreadConstraints", T_TopologySpreadConstraint, "topologyKey,whenUnsatisfiable", SMP_MERGE, "topologyKey",
         "How the pod is spread across topology domains. Merged by topologyKey."),
    F_B("setHostnameAsFQDN", "Set the pod's hostname to its fully qualified domain name."),
    F_O("os", T_PodOS, "Operating system the pod's containers need."),
    F_B("hostUsers", "Use the host's user namespace (true) or a new one (false)."),
    F_LM("schedulingGates", T_PodSchedulingGate, "name", SMP_MERGE, "name", "Gates that hold the pod back from scheduling until all are removed. Merged by name."),
    F_LM("resourceClaims", T_PodResourceClaim, "name", SMP_MERGE_RETAIN, "name",
         "ResourceClaims (dynamic resource allocation) the pod needs, by name; containers use them through resources.claims. Merged by name."),
    F_O("resources", T_ResourceRequirements, "Resources for the whole pod, shared by its containers."),
    F_S("hostnameOverride", "Hostname to use instead of the generated one."),
    F_O("workloadRef", T_Opaque, "Reference to the workload this pod belongs to, for gang scheduling."),
};
static OA_TYPE(T_PodSpec, "PodSpec", PKG_CORE, 0, "The description of a pod.", F_PodSpec);

static const api_openapi_field F_ContainerPort[] = {
    F_S("name", "IANA service name for the port, unique in the pod."),
    F_I32("hostPort", "Port on the node to expose the container port on."),
    F_I32R("containerPort", "Port number on the pod's IP address."),
    F_S("protocol", "UDP, TCP or SCTP; TCP by default."),
    F_S("hostIP", "Node IP to bind the host port to."),
};
static OA_TYPE(T_ContainerPort, "ContainerPort", PKG_CORE, 0, "A network port of a container.", F_ContainerPort);

static const api_openapi_field F_EnvVar[] = {
    F_SR("name", "Name of the variable."),
    F_S("value", "Value; $(VAR) references to earlier variables expand."),
    F_O("valueFrom", T_EnvVarSource, "Where the value comes from, instead of value."),
};
static OA_TYPE(T_EnvVar, "EnvVar", PKG_CORE, 0, "An environment variable of a container.", F_EnvVar);

static const api_openapi_field F_EnvFromSource[] = {
    F_S("prefix", "Prefix added to every key."),
    F_O("configMapRef", T_Opaque, "ConfigMap to take the variables from."),
    F_O("secretRef", T_Opaque, "Secret to take the variables from."),
};
static OA_TYPE(T_EnvFromSource, "EnvFromSource", PKG_CORE, 0, "A set of environment variables from a ConfigMap or Secret.", F_EnvFromSource);

static const api_openapi_field F_ContainerClaim[] = {
    F_SR("name", "Name of an entry in the pod's spec.resourceClaims; the container gets that claim's devices."),
    F_S("request", "One request of the claim to use; all of the claim's devices when empty."),
};
static OA_TYPE(T_ContainerClaim, "ResourceClaim", PKG_CORE, 0,
               "A claim of the pod a container uses.", F_ContainerClaim);

static const api_openapi_field F_ResourceRequirements[] = {
    F_MQ("limits", "Most of each compute resource the container may use."),
    F_MQ("requests", "Least of each compute resource the container needs; the scheduler reserves it."),
    F_LM("claims", T_ContainerClaim, "name", 0, NULL,
         "Entries of the pod's spec.resourceClaims this container uses (dynamic resource allocation)."),
};
static OA_TYPE(T_ResourceRequirements, "ResourceRequirements", PKG_CORE, 0,
               "Compute resource requirements.", F_ResourceRequirements);

static const api_openapi_field F_ContainerResizePolicy[] = {
    F_SR("resourceName", "Resource the policy applies to: cpu or memory."),
    F_SR("restartPolicy", "NotRequired or RestartContainer."),
};
static OA_TYPE(T_ContainerResizePolicy, "ContainerResizePolicy", PKG_CORE, 0,
               "How a resource of a container may be resized.", F_ContainerResizePolicy);

static const api_openapi_field F_VolumeMount[] = {
    F_SR("name", "Name of the pod volume to mount."),
    F_B("readOnly", "Mount read-only."),
    F_S("recursiveReadOnly", "Disabled, IfPossible or Enabled: whether read-only applies to submounts."),
    F_SR("mountPath", "Path inside the container; must not contain ':'."),
    F_S("subPath", "Path within the volume to mount instead of its root."),
    F_S("mountPropagation", "None, HostToContainer or Bidirectional."),
    F_S("subPathExpr", "Like subPath, with $(VAR) expansion."),
};
static OA_TYPE(T_VolumeMount, "VolumeMount", PKG_CORE, 0, "A volume mounted into a container.", F_VolumeMount);

static const api_openapi_field F_VolumeDevice[] = {
    F_SR("name", "Name of the persistentVolumeClaim volume of the pod."),
    F_SR("devicePath", "Path inside the container the device appears at."),
};
static OA_TYPE(T_VolumeDevice, "VolumeDevice", PKG_CORE, 0, "A raw block device used by a container.", F_VolumeDevice);

static const api_openapi_field F_Volume[] = {
    F_SR("name", "Name of the volume, a DNS label unique within the pod."),
    F_O("hostPath", T_VolumeSourceOpaque, "A file or directory of the node."),
    F_O("emptyDir", T_VolumeSourceOpaque, "A temporary directory that lives as long as the pod."),
    F_O("secret", T_VolumeSourceOpaque, "The keys of a Secret as files."),
    F_O("configMap", T_VolumeSourceOpaque, "The keys of a ConfigMap as files."),
    F_O("persistentVolumeClaim", T_VolumeSourceOpaque, "A PersistentVolumeClaim in the pod's namespace."),
    F_O("projected", T_VolumeSourceOpaque, "Several sources projected into one directory."),
    F_O("downwardAPI", T_VolumeSourceOpaque, "Fields of the pod as files."),
    F_O("csi", T_VolumeSourceOpaque, "An ephemeral volume from a CSI driver."),
    F_O("ephemeral", T_VolumeSourceOpaque, "A volume provisioned for this pod from a claim template."),
    F_O("image", T_VolumeSourceOpaque, "The content of an OCI image or artifact."),
    F_O("nfs", T_VolumeSourceOpaque, "An NFS export."),
};
static OA_TYPE(T_Volume, "Volume", PKG_CORE, 0,
               "A named volume of the pod; exactly one source field is set.", F_Volume);

static const api_openapi_field F_Toleration[] = {
    F_S("key", "Taint key the toleration matches; all keys when empty (with Exists)."),
    F_S("operator", "Exists or Equal (the default)."),
    F_S("value", "Taint value to match with Equal."),
    F_S("effect", "Taint effect to match: NoSchedule, PreferNoSchedule or NoExecute; all when empty."),
    F_I("tolerationSeconds", "For NoExecute: how long the pod stays bound after the taint appears."),
};
static OA_TYPE(T_Toleration, "Toleration", PKG_CORE, 0, "Lets the pod run on nodes with a matching taint.", F_Toleration);

static const api_openapi_field F_PodResourceClaim[] = {
    F_SR("name", "Name of this claim entry inside the pod; containers refer to it."),
    F_S("resourceClaimName", "Name of an existing ResourceClaim in the pod's namespace."),
    F_S("resourceClaimTemplateName", "Name of a ResourceClaimTemplate; a claim is generated from it for this pod and deleted with it."),
};
static OA_TYPE(T_PodResourceClaim, "PodResourceClaim", PKG_CORE, 0,
               "A ResourceClaim the pod needs: exactly one of resourceClaimName and resourceClaimTemplateName.",
               F_PodResourceClaim);

static const api_openapi_field F_PodSchedulingGate[] = {
    F_SR("name", "Name of the gate, unique in the pod."),
};
static OA_TYPE(T_PodSchedulingGate, "PodSchedulingGate", PKG_CORE, 0, "A gate that holds back scheduling.", F_PodSchedulingGate);

static const api_openapi_field F_HostAlias[] = {
    F_SR("ip", "IP address of the entry."),
    F_LS("hostnames", "Hostnames for the address."),
};
static OA_TYPE(T_HostAlias, "HostAlias", PKG_CORE, 0, "An /etc/hosts entry.", F_HostAlias);

static const api_openapi_field F_TopologySpreadConstraint[] = {
    F_I32R("maxSkew", "Largest allowed difference in matching pods between domains."),
    F_SR("topologyKey", "Node label whose values define the domains."),
    F_SR("whenUnsatisfiable", "DoNotSchedule or ScheduleAnyway."),
    F_O("labelSelector", T_LabelSelector, "Which pods count."),
    F_I32("minDomains", "Minimum number of eligible domains."),
    F_S("nodeAffinityPolicy", "Honor or Ignore the pod's node affinity when counting."),
    F_S("nodeTaintsPolicy", "Honor or Ignore node taints when counting."),
    F_LS("matchLabelKeys", "Pod label keys whose values further restrict the counted pods."),
};
static OA_TYPE(T_TopologySpreadConstraint, "TopologySpreadConstraint", PKG_CORE, 0,
               "How matching pods are spread across a topology.", F_TopologySpreadConstraint);

static const api_openapi_field F_PodReadinessGate[] = {
    F_SR("conditionType", "Pod condition type that must be True."),
};
static OA_TYPE(T_PodReadinessGate, "PodReadinessGate", PKG_CORE, 0, "An extra readiness condition.", F_PodReadinessGate);

static const api_openapi_field F_PodOS[] = {
    F_SR("name", "linux or windows."),
};
static OA_TYPE(T_PodOS, "PodOS", PKG_CORE, 0, "The operating system of a pod.", F_PodOS);

static const api_openapi_field F_PodStatus[] = {
    F_I("observedGeneration", "The metadata.generation this status was computed for."),
    F_S("phase", "Pending, Running, Succeeded, Failed or Unknown: a summary of where the pod is in its lifecycle."),
    F_LM("conditions", T_PodCondition, "type", SMP_MERGE, "type", "Current service state of the pod. Merged by type."),
    F_S("message", "Human-readable reason for the pod's condition."),
    F_S("reason", "CamelCase reason for the pod's condition, such as Evicted."),
    F_S("nominatedNodeName", "Node the pod preempted others on and will likely be scheduled to."),
    F_S("hostIP", "Primary IP of the node the pod is on."),
    OA_F("hostIPs", API_OA_ARRAY, API_OA_OBJECT, API_OA_F_ATOMIC | SMP_MERGE, &T_HostIP, NULL, "ip", "IPs of the node the pod is on."),
    F_S("podIP", "Primary IP of the pod."),
    F_LM("podIPs", T_PodIP, "ip", SMP_MERGE, "ip", "IPs of the pod, the primary first. Merged by ip."),
    F_T("startTime", "When the kubelet accepted the pod."),
    F_LO("initContainerStatuses", T_ContainerStatus, "Status of each init container."),
    F_LO("containerStatuses", T_ContainerStatus, "Status of each container."),
    F_S("qosClass", "Guaranteed, Burstable or BestEffort."),
    F_LO("ephemeralContainerStatuses", T_ContainerStatus, "Status of each ephemeral container."),
    F_S("resize", "Deprecated state of an in-place resize."),
    F_LM("resourceClaimStatuses", T_PodResourceClaimStatus, "name", SMP_MERGE_RETAIN, "name",
         "Names of the ResourceClaims generated for the pod's claim entries. Merged by name."),
    F_O("extendedResourceClaimStatus", T_Opaque, "The claim created for extended resources backed by DRA."),
    F_MQ("allocatedResources", "Resources allocated to the pod."),
    F_O("resources", T_ResourceRequirements, "Pod-level resources in effect."),
};
static OA_TYPE(T_PodStatus, "PodStatus", PKG_CORE, 0, "The observed state of a pod.", F_PodStatus);

static const api_openapi_field F_PodCondition[] = {
    F_SR("type", "Condition type: PodScheduled, Initialized, ContainersReady, Ready and others."),
    F_I("observedGeneration", "The metadata.generation the condition was set for."),
    F_SR("status", "True, False or Unknown."),
    F_T("lastProbeTime", "When the condition was last probed."),
    F_T("lastTransitionTime", "When the status last changed."),
    F_S("reason", "CamelCase reason of the last transition."),
    F_S("message", "Human-readable details."),
};
static OA_TYPE(T_PodCondition, "PodCondition", PKG_CORE, 0, "A condition of a pod.", F_PodCondition);

static const api_openapi_field F_PodIP[] = {F_SR("ip", "An IP address of the pod.")};
static OA_TYPE(T_PodIP, "PodIP", PKG_CORE, 0, "An IP address of a pod.", F_PodIP);
static const api_openapi_field F_HostIP[] = {F_SR("ip", "An IP address of the node.")};
static OA_TYPE(T_HostIP, "HostIP", PKG_CORE, 0, "An IP address of the pod's node.", F_HostIP);

static const api_openapi_field F_ContainerStatus[] = {
    F_SR("name", "Name of the container."),
    F_O("state", T_ContainerState, "Current state."),
    F_O("lastState", T_ContainerState, "State of the previous run, when it restarted."),
    OA_F("ready", API_OA_BOOL, 0, OA_REQ, NULL, NULL, NULL, "Whether the container passes its readiness probe."),
    F_I32R("restartCount", "How many times the container restarted."),
    F_SR("image", "Image the container runs."),
    F_SR("imageID", "Image digest."),
    F_S("containerID", "ID in the container runtime, <type>://<id>."),
    F_B("started", "Whether the container passed its startup probe."),
    F_MQ("allocatedResources", "Resources allocated to the container."),
    F_O("resources", T_ResourceRequirements, "Resources in effect."),
    F_LM("volumeMounts", T_VolumeMountStatus, "mountPath", SMP_MERGE, "mountPath", "Status of the volume mounts."),
    F_O("user", T_Opaque, "Identity of the container's process."),
    F_LM("allocatedResourcesStatus", T_Opaque, "name", SMP_MERGE, "name", "Health of the resources allocated to the container."),
    F_S("stopSignal", "Signal sent to stop the container."),
};
static OA_TYPE(T_ContainerStatus, "ContainerStatus", PKG_CORE, 0, "The status of one container.", F_ContainerStatus);

static const api_openapi_field F_ContainerState[] = {
    F_O("waiting", T_ContainerStateWaiting, "Set while the container is waiting to run."),
    F_O("running", T_ContainerStateRunning, "Set while the container runs."),
    F_O("terminated", T_ContainerStateTerminated, "Set when the container has exited."),
};
static OA_TYPE(T_ContainerState, "ContainerState", PKG_CORE, 0, "One of waiting, running or terminated.", F_ContainerState);

static const api_openapi_field F_ContainerStateWaiting[] = {
    F_S("reason", "Why the container is not running yet, such as ContainerCreating."),
    F_S("message", "Details."),
};
static OA_TYPE(T_ContainerStateWaiting, "ContainerStateWaiting", PKG_CORE, 0, "A waiting container.", F_ContainerStateWaiting);

static const api_openapi_field F_ContainerStateRunning[] = {
    F_T("startedAt", "When the container last started."),
};
static OA_TYPE(T_ContainerStateRunning, "ContainerStateRunning", PKG_CORE, 0, "A running container.", F_ContainerStateRunning);

static const api_openapi_field F_ContainerStateTerminated[] = {
    F_I32R("exitCode", "Exit status of the last run."),
    F_I32("signal", "Signal that ended it."),
    F_S("reason", "Why it ended, such as Completed or Error."),
    F_S("message", "Details."),
    F_T("startedAt", "When it started."),
    F_T("finishedAt", "When it ended."),
    F_S("containerID", "ID in the container runtime."),
};
static OA_TYPE(T_ContainerStateTerminated, "ContainerStateTerminated", PKG_CORE, 0, "An exited container.", F_ContainerStateTerminated);

static const api_openapi_field F_PodResourceClaimStatus[] = {
    F_SR("name", "Name of the pod's claim entry."),
    F_S("resourceClaimName", "Name of the ResourceClaim generated for it; unset when none was needed."),
};
static OA_TYPE(T_PodResourceClaimStatus, "PodResourceClaimStatus", PKG_CORE, 0,
               "The ResourceClaim generated for one claim entry of the pod.", F_PodResourceClaimStatus);

static const api_openapi_field F_Binding[] = {
    F_S("apiVersion", D_APIVERSION),
    F_S("kind", D_KIND),
    F_O("metadata", api_oa_ObjectMeta, D_METADATA),
    F_OR("target", T_ObjectReference, "The node to bind the pod to."),
};
static OA_TYPE(T_Binding, "Binding", PKG_CORE, 0,
               "Binds a pod to a node (the pods/binding subresource the scheduler posts).", F_Binding);

/* ---- Node ---------------------------------------------------------------------- */

static const api_openapi_field F_Node[] = {
    F_S("apiVersion", D_APIVERSION),
    F_S("kind", D_KIND),
    F_O("metadata", api_oa_ObjectMeta, D_METADATA),
    F_O("spec", T_NodeSpec, "How the node is configured: taints, schedulability, pod CIDRs."),
    F_O("status", T_NodeStatus, "Observed state of the node, reported by its kubelet."),
};
static OA_TYPE(T_Node, "Node", PKG_CORE, 0, "A worker machine that runs pods.", F_Node);

static const api_openapi_field F_NodeSpec[] = {
    F_S("podCIDR", "Pod IP range of the node."),
    F_SET("podCIDRs", SMP_MERGE, "Pod IP ranges of the node, one per IP family."),
    F_S("providerID", "ID of the node at its cloud provider."),
    F_B("unschedulable", "Keep new pods off the node (kubectl cordon)."),
    F_LO("taints", T_Taint, "Taints that repel pods without a matching toleration."),
    F_O("configSource", T_Opaque, "Deprecated dynamic kubelet configuration."),
    F_S("externalID", "Deprecated."),
};
static OA_TYPE(T_NodeSpec, "NodeSpec", PKG_CORE, 0, "Configuration of a node.", F_NodeSpec);

static const api_openapi_field F_Taint[] = {
    F_SR("key", "Taint key."),
    F_S("value", "Taint value."),
    F_SR("effect", "NoSchedule, PreferNoSchedule or NoExecute."),
    F_T("timeAdded", "When a NoExecute taint was added."),
};
static OA_TYPE(T_Taint, "Taint", PKG_CORE, 0, "A taint on a node.", F_Taint);

static const api_openapi_field F_NodeStatus[] = {
    F_MQ("capacity", "Total resources of the node."),
    F_MQ("allocatable", "Resources available to pods."),
    F_S("phase", "Deprecated lifecycle phase."),
    F_LM("conditions", T_NodeCondition, "type", SMP_MERGE, "type", "Current conditions, such as Ready. Merged by type."),
    F_LM("addresses", T_NodeAddress, "type", SMP_MERGE, "type", "Addresses of the node. Merged by type."),
    F_O("daemonEndpoints", T_NodeDaemonEndpoints, "Ports of the daemons on the node."),
    F_O("nodeInfo", T_NodeSystemInfo, "Identity and versions of the node's software."),
    F_LO("images", T_ContainerImage, "Container images on the node."),
    F_LS("volumesInUse", "Volumes attached and mounted on the node."),
    F_LO("volumesAttached", T_AttachedVolume, "Volumes attached to the node."),
    F_O("config", T_Opaque, "Status of dynamic kubelet configuration."),
    F_LO("runtimeHandlers", T_NodeRuntimeHandler, "Runtime handlers available."),
    F_O("features", T_Opaque, "Features the node supports."),
    F_LS("declaredFeatures", "Feature names the node declares."),
};
static OA_TYPE(T_NodeStatus, "NodeStatus", PKG_CORE, 0, "Observed state of a node.", F_NodeStatus);

static const api_openapi_field F_NodeCondition[] = {
    F_SR("type", "Ready, MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable or another type."),
    F_SR("status", "True, False or Unknown."),
    F_T("lastHeartbeatTime", "When the condition was last reported."),
    F_T("lastTransitionTime", "When the status last changed."),
    F_S("reason", "CamelCase reason."),
    F_S("message", "Details."),
};
static OA_TYPE(T_NodeCondition, "NodeCondition", PKG_CORE, 0, "A condition of a node.", F_NodeCondition);

static const api_openapi_field F_NodeAddress[] = {
    F_SR("type", "Hostname, InternalIP, ExternalIP, InternalDNS or ExternalDNS."),
    F_SR("address", "The address."),
};
static OA_TYPE(T_NodeAddress, "NodeAddress", PKG_CORE, 0, "An address of a node.", F_NodeAddress);

static const api_openapi_field F_NodeSystemInfo[] = {
    F_SR("machineID", "Machine ID from /etc/machine-id."),
    F_SR("systemUUID", "System UUID of the machine."),
    F_SR("bootID", "ID of the current boot."),
    F_SR("kernelVersion", "Kernel version (uname -r)."),
    F_SR("osImage", "Operating system image from /etc/os-release."),
    F_SR("containerRuntimeVersion", "Container runtime and version, such as containerd://2.0.0."),
    F_SR("kubeletVersion", "Version of the kubelet."),
    F_S("kubeProxyVersion", "Deprecated."),
    F_SR("operatingSystem", "Operating system (GOOS)."),
    F_SR("architecture", "CPU architecture (GOARCH)."),
    F_O("swap", T_Opaque, "Swap memory of the node."),
};
static OA_TYPE(T_NodeSystemInfo, "NodeSystemInfo", PKG_CORE, 0, "Identity and software of a node.", F_NodeSystemInfo);

static const api_openapi_field F_DaemonEndpoint[] = {
    F_I32R("Port", "Port number."),
};
static OA_TYPE(T_DaemonEndpoint, "DaemonEndpoint", PKG_CORE, 0, "A daemon's port.", F_DaemonEndpoint);

static const api_openapi_field F_NodeDaemonEndpoints[] = {
    F_O("kubeletEndpoint", T_DaemonEndpoint, "Where the kubelet listens."),
};
static OA_TYPE(T_NodeDaemonEndpoints, "NodeDaemonEndpoints", PKG_CORE, 0, "Ports of the node's daemons.", F_NodeDaemonEndpoints);

static const api_openapi_field F_ContainerImage[] = {
    F_LS("names", "Names (tags and digests) of the image."),
    F_I("sizeBytes", "Size of the image."),
};
static OA_TYPE(T_ContainerImage, "ContainerImage", PKG_CORE, 0, "An image on a node.", F_ContainerImage);

static const api_openapi_field F_AttachedVolume[] = {
    F_SR("name", "Name of the attached volume."),
    F_SR("devicePath", "Where the device is available."),
};
static OA_TYPE(T_AttachedVolume, "AttachedVolume", PKG_CORE, 0, "A volume attached to a node.", F_AttachedVolume);

static const api_openapi_field F_NodeRuntimeHandler[] = {
    F_S("name", "Handler name; empty for the default."),
    F_O("features", T_Opaque, "Features of the handler."),
};
static OA_TYPE(T_NodeRuntimeHandler, "NodeRuntimeHandler", PKG_CORE, 0, "A runtime handler of a node.", F_NodeRuntimeHandler);

/* ---- Namespace --------------------------------------------------------------------- */

static const api_openapi_field F_Namespace[] = {
    F_S("apiVersion", D_APIVERSION),
    F_S("kind", D_KIND),
    F_O("metadata", api_oa_ObjectMeta, D_METADATA),
    F_O("spec", T_NamespaceSpec, "Behaviour of the namespace."),
    F_O("status", T_NamespaceStatus, "Observed state of the namespace."),
};
static OA_TYPE(T_Namespace, "Namespace", PKG_CORE, 0, "A scope for names; objects in it are deleted with it.", F_Namespace);

static const api_openapi_field F_NamespaceSpec[] = {
    F_LS("finalizers", "Steps that must finish before the namespace is removed from storage."),
};
static OA_TYPE(T_NamespaceSpec, "NamespaceSpec", PKG_CORE, 0, "Behaviour of a namespace.", F_NamespaceSpec);

static const api_openapi_field F_NamespaceStatus[] = {
    F_S("phase", "Active or Terminating."),
    F_LM("conditions", T_NamespaceCondition, "type", SMP_MERGE, "type", "Current conditions. Merged by type."),
};
static OA_TYPE(T_NamespaceStatus, "NamespaceStatus", PKG_CORE, 0, "Observed state of a namespace.", F_NamespaceStatus);

static const api_openapi_field F_NamespaceCondition[] = {
    F_SR("type", "Condition type."),
    F_SR("status", "True, False or Unknown."),
    F_T("lastTransitionTime", "When the status last changed."),
    F_S("reason", "CamelCase reason."),
    F_S("message", "Details."),
};
static OA_TYPE(T_NamespaceCondition, "NamespaceCondition", PKG_CORE, 0, "A condition of a namespace.", F_NamespaceCondition);

/* ---- Event ------------------------------------------------------------------------ */

static const api_openapi_field F_Event[] = {
    F_S("apiVersion", D_APIVERSION),
    F_S("kind", D_KIND),
    OA_F("metadata", API_OA_OBJECT, 0, OA_REQ, &api_oa_ObjectMeta, NULL, NULL, D_METADATA),
    F_OR("involvedObject", T_ObjectReference, "The object the event is about."),
    F_S("reason", "Short CamelCase reason, such as FailedScheduling."),
    F_S("message", "Human-readable description."),
    F_O("source", T_EventSource, "The component that reported the event."),
    F_T("firstTimestamp", "When the event was first recorded."),
    F_T("lastTimestamp", "When the most recent occurrence was recorded."),
    F_I32("count", "How many times the event occurred."),
    F_S("type", "Normal or Warning."),
    F_MT("eventTime", "When the event was first observed, with microseconds."),
    F_O("series", T_EventSeries, "Data on repeated occurrences."),
    F_S("action", "What action was taken or failed."),
    F_O("related", T_ObjectReference, "A second object involved."),
    F_S("reportingComponent", "Controller that emitted the event, such as kubernetes.io/kubelet."),
    F_S("reportingInstance", "Instance of the controller, such as the node name."),
};
static OA_TYPE(T_Event, "Event", PKG_CORE, 0, "A report of something that happened in the cluster, shown by kubectl describe.", F_Event);

static const api_openapi_field F_EventSource[] = {
    F_S("component", "Component the event comes from."),
    F_S("host", "Node the event was generated on."),
};
static OA_TYPE(T_EventSource, "EventSource", PKG_CORE, 0, "The source of an event.", F_EventSource);

static const api_openapi_field F_EventSeries[] = {
    F_I32("count", "Occurrences in the series so far."),
    F_MT("lastObservedTime", "When the last occurrence was observed."),
};
static OA_TYPE(T_EventSeries, "EventSeries", PKG_CORE, 0, "A series of repeated events.", F_EventSeries);

/* ---- roots ------------------------------------------------------------------------- */

static const api_openapi_root roots[] = {
    {"", "v1", "Binding", &T_Binding},
    {"", "v1", "Event", &T_Event},
    {"", "v1", "Namespace", &T_Namespace},
    {"", "v1", "Node", &T_Node},
    {"", "v1", "Pod", &T_Pod},
};

const api_openapi_root *api_oa_core_roots(size_t *n)
{
    *n = OA_N(roots);
    return roots;
}
