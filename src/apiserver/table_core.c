/*
 * table_core.c: Table printers for core/v1 pods, nodes, events and
 * namespaces, computing each cell the way kube-apiserver's printPod,
 * printNode, printEvent and printNamespace do (wide form).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table_int.h"

/* ---- pods ---------------------------------------------------------------- */

static const tcol cols_pod[] = {
    {"Name", "string", "name", api_tdesc_name, 0},
    {"Ready", "string", "", "The aggregate readiness state of this pod for accepting traffic.", 0},
    {"Status", "string", "", "The aggregate status of the containers in this pod.", 0},
    {"Restarts", "string", "",
     "The number of times the containers in this pod have been restarted and when the "
     "last container in this pod has restarted.", 0},
    {"Age", "string", "", api_tdesc_age, 0},
    {"IP", "string", "",
     "podIP address allocated to the pod. Routable at least within the cluster. Empty "
     "if not yet allocated.", 1},
    {"Node", "string", "",
     "NodeName indicates in which node this pod is scheduled. If empty, this pod is a "
     "candidate for scheduling by the scheduler defined in schedulerName. Once this "
     "field is set, the kubelet for this node becomes responsible for the lifecycle of "
     "this pod. This field should not be used to express a desire for the pod to be "
     "scheduled on a specific node. "
     "https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename", 1},
    {"Nominated Node", "string", "",
     "nominatedNodeName is set only when this pod preempts other pods on the node, but "
     "it cannot be scheduled right away as preemption victims receive their graceful "
     "termination periods. This field does not guarantee that the pod will be scheduled "
     "on this node. Scheduler may decide to place the pod elsewhere if other nodes "
     "become available sooner. Scheduler may also decide to give the resources on this "
     "node to a higher priority pod that is created after preemption. As a result, "
     "this field may be different than PodSpec.nodeName when the pod is scheduled.", 1},
    {"Readiness Gates", "string", "",
     "If specified, all readiness gates will be evaluated for pod readiness. A pod is "
     "ready when all its containers are ready AND all conditions specified in the "
     "readiness gates have status equal to \"True\" More info: "
     "https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates", 1},
};

static size_t nitems(const dra_doc *l)
{
    return l && l->kind == DRA_DOC_LIST ? l->u.list.n : 0;
}

static const dra_doc *item(const dra_doc *l, size_t i) { return l->u.list.items[i]; }

static int str_is(const char *s, const char *want) { return s && !strcmp(s, want); }

static int is_true(const dra_doc *v) { return v && v->kind == DRA_DOC_BOOL && v->u.b; }

/* The condition of |type| in the list at |path|, NULL when absent. */
static const dra_doc *condition(const dra_doc *obj, const char *path, const char *type)
{
    const dra_doc *l = api_t_get(obj, path);
    for (size_t i = 0; i < nitems(l); i++)
        if (str_is(api_t_gets(item(l, i), "type"), type))
            return item(l, i);
    return NULL;
}

static int condition_true(const dra_doc *obj, const char *type)
{
    return str_is(api_t_gets(condition(obj, "status.conditions", type), "status"), "True");
}

/* An init container with restartPolicy Always (a sidecar). */
static int restartable_init(const dra_doc *pod, const char *name)
{
    const dra_doc *ic = api_t_get(pod, "spec.initContainers");
    for (size_t i = 0; name && i < nitems(ic); i++)
        if (str_is(api_t_gets(item(ic, i), "name"), name))
            return str_is(api_t_gets(item(ic, i), "restartPolicy"), "Always");
    return 0;
}

typedef struct podst {
    const char *reason;
    int64_t restarts, sidecar_restarts, ready, total;
    int64_t last_restart, last_sidecar_restart; /* ns; 0: none */
} podst;

static void note_termination(const dra_doc *cs, int64_t *latest)
{
    int64_t ns;
    const char *at = api_t_gets(cs, "lastState.terminated.finishedAt");
    if (at && api_table_parse_time(at, &ns) && ns > *latest)
        *latest = ns;
}

/* Walks the init container statuses; returns 1 while the pod is
 * initializing, with the reason set. */
static int pod_init(tctx *t, const dra_doc *pod, podst *ps)
{
    const dra_doc *st = api_t_get(pod, "status.initContainerStatuses");
    size_t ninit = nitems(api_t_get(pod, "spec.initContainers"));
    for (size_t i = 0; i < nitems(st); i++) {
        const dra_doc *c = item(st, i);
        const char *name = api_t_gets(c, "name");
        const dra_doc *term = api_t_get(c, "state.terminated");
        const char *wreason = api_t_gets(c, "state.waiting.reason");
        int sidecar = restartable_init(pod, name);
        ps->restarts += api_t_geti(c, "restartCount", 0);
        note_termination(c, &ps->last_restart);
        if (sidecar) {
            ps->sidecar_restarts += api_t_geti(c, "restartCount", 0);
            note_termination(c, &ps->last_sidecar_restart);
        }
        if (term && api_t_geti(term, "exitCode", 0) == 0)
            continue;
        if (sidecar && is_true(dra_doc_get(c, "started"))) {
            if (is_true(dra_doc_get(c, "ready")))
                ps->ready++;
            continue;
        }
        if (term) {
            const char *r = api_t_gets(term, "reason");
            if (r && *r)
                ps->reason = api_t_fmt(t, "Init:%s", r);
            else if (api_t_geti(term, "signal", 0))
                ps->reason = api_t_fmt(t, "Init:Signal:%lld", (long long)api_t_geti(term, "signal", 0));
            else
                ps->reason = api_t_fmt(t, "Init:ExitCode:%lld", (long long)api_t_geti(term, "exitCode", 0));
        } else if (wreason && *wreason && strcmp(wreason, "PodInitializing")) {
            ps->reason = api_t_fmt(t, "Init:%s", wreason);
        } else {
            ps->reason = api_t_fmt(t, "Init:%zu/%zu", i, ninit);
        }
        return 1;
    }
    return 0;
}

/* The regular containers, last to first, as printPod walks them. */
static void pod_containers(tctx *t, const dra_doc *pod, podst *ps)
{
    const dra_doc *st = api_t_get(pod, "status.containerStatuses");
    int running = 0;
    ps->restarts = ps->sidecar_restarts;
    ps->last_restart = ps->last_sidecar_restart;
    for (size_t k = nitems(st); k-- > 0;) {
        const dra_doc *c = item(st, k);
        const char *w = api_t_gets(c, "state.waiting.reason");
        const dra_doc *term = api_t_get(c, "state.terminated");
        const char *tr = api_t_gets(term, "reason");
        ps->restarts += api_t_geti(c, "restartCount", 0);
        note_termination(c, &ps->last_restart);
        if (w && *w) {
            ps->reason = w;
        } else if (term && tr && *tr) {
            ps->reason = tr;
        } else if (term) {
            if (api_t_geti(term, "signal", 0))
                ps->reason = api_t_fmt(t, "Signal:%lld", (long long)api_t_geti(term, "signal", 0));
            else
                ps->reason = api_t_fmt(t, "ExitCode:%lld", (long long)api_t_geti(term, "exitCode", 0));
        } else if (is_true(dra_doc_get(c, "ready")) && api_t_get(c, "state.running")) {
            running = 1;
            ps->ready++;
        }
    }
    if (str_is(ps->reason, "Completed") && running)
        ps->reason = condition_true(pod, "Ready") ? "Running" : "NotReady";
}

static dra_doc *pod_conditions(tctx *t, const char *phase)
{
    int ok = str_is(phase, "Succeeded");
    if (!ok && !str_is(phase, "Failed"))
        return NULL;
    dra_doc *l = dra_doc_new_list(t->a, 1), *c = dra_doc_new_map(t->a, 4);
    if (!l || !c)
        t->oom = 1;
    api_t_set(t, c, "type", api_t_str(t, "Completed"));
    api_t_set(t, c, "status", api_t_str(t, "True"));
    api_t_set(t, c, "reason", api_t_str(t, ok ? "Succeeded" : "Failed"));
    api_t_set(t, c, "message", api_t_str(t, ok ? "The pod has completed successfully."
                                               : "The pod failed."));
    api_t_push(t, l, c);
    return l;
}

static const char *readiness_gates(tctx *t, const dra_doc *pod)
{
    const dra_doc *gates = api_t_get(pod, "spec.readinessGates");
    size_t n = nitems(gates), ok = 0;
    if (n == 0)
        return "<none>";
    for (size_t i = 0; i < n; i++) {
        const dra_doc *c = condition(pod, "status.conditions",
                                     api_t_gets(item(gates, i), "conditionType"));
        if (str_is(api_t_gets(c, "status"), "True"))
            ok++;
    }
    return api_t_fmt(t, "%zu/%zu", ok, n);
}

static const char *or_none(const char *s) { return s && *s ? s : "<none>"; }

static void row_pod(tctx *t, const dra_doc *pod, dra_doc *cells, dra_doc **cond)
{
    podst ps = {0};
    const char *phase = api_t_gets(pod, "status.phase");
    const char *sreason = api_t_gets(pod, "status.reason");
    const dra_doc *ic = api_t_get(pod, "spec.initContainers");
    const dra_doc *sched = condition(pod, "status.conditions", "PodScheduled");
    const dra_doc *ips = api_t_get(pod, "status.podIPs");
    const char *ip = nitems(ips) ? api_t_gets(item(ips, 0), "ip") : NULL;
    ps.reason = sreason && *sreason ? sreason : phase ? phase : "";
    if (str_is(api_t_gets(sched, "reason"), "SchedulingGated"))
        ps.reason = "SchedulingGated";
    *cond = pod_conditions(t, phase);
    ps.total = (int64_t)nitems(api_t_get(pod, "spec.containers"));
    for (size_t i = 0; i < nitems(ic); i++)
        if (str_is(api_t_gets(item(ic, i), "restartPolicy"), "Always"))
            ps.total++;
    int initializing = pod_init(t, pod, &ps);
    if (!initializing || condition_true(pod, "Initialized"))
        pod_containers(t, pod, &ps);
    if (api_t_has_time(api_t_gets(pod, "metadata.deletionTimestamp"))) {
        if (str_is(sreason, "NodeLost"))
            ps.reason = "Unknown";
        else if (!str_is(phase, "Failed") && !str_is(phase, "Succeeded"))
            ps.reason = "Terminating";
    }
    const char *restarts = api_t_fmt(t, "%lld", (long long)ps.restarts);
    if (ps.restarts && ps.last_restart) {
        char age[32];
        api_table_human_duration(t->now_ns - ps.last_restart, age, sizeof age);
        restarts = api_t_fmt(t, "%lld (%s ago)", (long long)ps.restarts, age);
    }
    api_t_push(t, cells, api_t_str(t, api_t_gets(pod, "metadata.name")));
    api_t_push(t, cells, api_t_str(t, api_t_fmt(t, "%lld/%lld", (long long)ps.ready,
                                                (long long)ps.total)));
    api_t_push(t, cells, api_t_str(t, ps.reason));
    api_t_push(t, cells, api_t_str(t, restarts));
    api_t_push(t, cells, api_t_str(t, api_t_since(t, api_t_gets(pod, "metadata.creationTimestamp"))));
    api_t_push(t, cells, api_t_str(t, or_none(ip)));
    api_t_push(t, cells, api_t_str(t, or_none(api_t_gets(pod, "spec.nodeName"))));
    api_t_push(t, cells, api_t_str(t, or_none(api_t_gets(pod, "status.nominatedNodeName"))));
    api_t_push(t, cells, api_t_str(t, readiness_gates(t, pod)));
}

/* ---- nodes ----------------------------------------------------------------- */

#define DESC_ADDRESSES                                                          \
    "List of addresses reachable to the node. Queried from cloud provider, if "    \
    "available. More info: https://kubernetes.io/docs/reference/node/node-status/" \
    "#addresses Note: This field is declared as mergeable, but the merge key is "  \
    "not sufficiently unique, which can cause data corruption when it is merged. " \
    "Callers should instead use a full-replacement patch. See "                    \
    "https://pr.k8s.io/79391 for an example. Consumers should assume that "        \
    "addresses can change during the lifetime of a Node. However, there are some " \
    "exceptions where this may not be possible, such as Pods that inherit a "      \
    "Node's address in its own status or consumers of the downward API "           \
    "(status.hostIP)."

static const tcol cols_node[] = {
    {"Name", "string", "name", api_tdesc_name, 0},
    {"Status", "string", "", "The status of the node", 0},
    {"Roles", "string", "", "The roles of the node", 0},
    {"Age", "string", "", api_tdesc_age, 0},
    {"Version", "string", "", "Kubelet Version reported by the node.", 0},
    {"Internal-IP", "string", "", DESC_ADDRESSES, 1},
    {"External-IP", "string", "", DESC_ADDRESSES, 1},
    {"OS-Image", "string", "",
     "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).", 1},
    {"Kernel-Version", "string", "",
     "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", 1},
    {"Container-Runtime", "string", "",
     "ContainerRuntime Version reported by the node through runtime remote API (e.g. "
     "containerd://1.4.2).", 1},
};

static const char *node_address(const dra_doc *node, const char *type)
{
    const dra_doc *l = api_t_get(node, "status.addresses");
    for (size_t i = 0; i < nitems(l); i++)
        if (str_is(api_t_gets(item(l, i), "type"), type))
            return api_t_gets(item(l, i), "address");
    return NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted, de-duplicated roles from node-role.kubernetes.io/<role> and
 * kubernetes.io/role=<role> labels, comma-joined; "<none>" when none. */
static const char *node_roles(tctx *t, const dra_doc *node)
{
    static const char prefix[] = "node-role.kubernetes.io/";
    const dra_doc *labels = api_t_get(node, "metadata.labels");
    size_t n = labels && labels->kind == DRA_DOC_MAP ? labels->u.map.n : 0, k = 0;
    const char **roles = n ? dra_arena_array(t->a, n, sizeof *roles) : NULL;
    dra_buf b;
    if (n && !roles) {
        t->oom = 1;
        return "";
    }
    for (size_t i = 0; i < n; i++) {
        const char *key = labels->u.map.m[i].key;
        const dra_doc *v = labels->u.map.m[i].val;
        if (!strncmp(key, prefix, sizeof prefix - 1) && key[sizeof prefix - 1])
            roles[k++] = key + sizeof prefix - 1;
        else if (!strcmp(key, "kubernetes.io/role") && v->kind == DRA_DOC_STRING && v->u.str.len)
            roles[k++] = v->u.str.s;
    }
    if (k == 0)
        return "<none>";
    qsort(roles, k, sizeof *roles, cmp_str);
    dra_buf_init(&b, NULL);
    for (size_t i = 0; i < k; i++)
        if (i == 0 || strcmp(roles[i], roles[i - 1]))
            dra_buf_printf(&b, "%s%s", b.len ? "," : "", roles[i]);
    const char *s = b.oom ? NULL : dra_arena_strdup(t->a, b.p);
    dra_buf_fini(&b);
    if (!s)
        t->oom = 1;
    return s ? s : "";
}

static const char *or_unknown(const char *s) { return s && *s ? s : "<unknown>"; }

static void row_node(tctx *t, const dra_doc *node, dra_doc *cells, dra_doc **cond)
{
    const dra_doc *ready = condition(node, "status.conditions", "Ready");
    const char *status = !ready ? "Unknown"
                         : str_is(api_t_gets(ready, "status"), "True") ? "Ready"
                                                                      : "NotReady";
    const char *ver = api_t_gets(node, "status.nodeInfo.kubeletVersion");
    (void)cond;
    if (is_true(api_t_get(node, "spec.unschedulable")))
        status = api_t_fmt(t, "%s,SchedulingDisabled", status);
    api_t_push(t, cells, api_t_str(t, api_t_gets(node, "metadata.name")));
    api_t_push(t, cells, api_t_str(t, status));
    api_t_push(t, cells, api_t_str(t, node_roles(t, node)));
    api_t_push(t, cells, api_t_str(t, api_t_since(t, api_t_gets(node, "metadata.creationTimestamp"))));
    api_t_push(t, cells, api_t_str(t, ver ? ver : ""));
    api_t_push(t, cells, api_t_str(t, or_none(node_address(node, "InternalIP"))));
    api_t_push(t, cells, api_t_str(t, or_none(node_address(node, "ExternalIP"))));
    api_t_push(t, cells, api_t_str(t, or_unknown(api_t_gets(node, "status.nodeInfo.osImage"))));
    api_t_push(t, cells, api_t_str(t, or_unknown(api_t_gets(node, "status.nodeInfo.kernelVersion"))));
    api_t_push(t, cells, api_t_str(t, or_unknown(api_t_gets(node, "status.nodeInfo.containerRuntimeVersion"))));
}

/* ---- events ---------------------------------------------------------------- */

static const tcol cols_event[] = {
    {"Last Seen", "string", "", "The time at which the most recent occurrence of this event was recorded.", 0},
    {"Type", "string", "", "Type of this event (Normal, Warning), new types could be added in the future", 0},
    {"Reason", "string", "",
     "This should be a short, machine understandable string that gives the reason for "
     "the transition into the object's current status.", 0},
    {"Object", "string", "", "The object that this event is about.", 0},
    {"Subobject", "string", "",
     "If referring to a piece of an object instead of an entire object, this string "
     "should contain a valid JSON/Go field access statement, such as "
     "desiredState.manifest.containers[2]. For example, if the object reference is to a "
     "container within a pod, this would take on a value like: \"spec.containers{name}\" "
     "(where \"name\" refers to the name of the container that triggered the event) or "
     "if no container name is specified \"spec.containers[2]\" (container with index 2 "
     "in this pod). This syntax is chosen only to have some well-defined way of "
     "referencing a part of an object.", 1},
    {"Source", "string", "", "The component reporting this event. Should be a short machine understandable string.", 1},
    {"Message", "string", "", "A human-readable description of the status of this operation.", 0},
    {"First Seen", "string", "", "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)", 1},
    {"Count", "string", "", "The number of times this event has occurred.", 1},
    {"Name", "string", "name", api_tdesc_name, 1},
};

static const char *first_nonempty(const char *a, const char *b)
{
    return a && *a ? a : b && *b ? b : "";
}

/* Message without leading and trailing white space (strings.TrimSpace). */
static const char *trimmed(tctx *t, const char *s)
{
    size_t len;
    if (!s)
        return "";
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\v' || *s == '\f')
        s++;
    len = strlen(s);
    while (len && strchr(" \t\n\r\v\f", s[len - 1]))
        len--;
    char *o = dra_arena_strndup(t->a, s, len);
    if (!o)
        t->oom = 1;
    return o ? o : "";
}

static void row_event(tctx *t, const dra_doc *ev, dra_doc *cells, dra_doc **cond)
{
    const char *first_ts = api_t_gets(ev, "firstTimestamp");
    const char *first = api_t_has_time(first_ts) ? api_t_since(t, first_ts)
                                                 : api_t_since(t, api_t_gets(ev, "eventTime"));
    const char *last_ts = api_t_gets(ev, "lastTimestamp");
    const char *last = api_t_has_time(last_ts) ? api_t_since(t, last_ts) : first;
    int64_t count = api_t_geti(ev, "count", 0);
    const dra_doc *series = api_t_get(ev, "series");
    const char *kind = api_t_gets(ev, "involvedObject.kind");
    const char *name = api_t_gets(ev, "involvedObject.name");
    char lower[128];
    const char *comp = first_nonempty(api_t_gets(ev, "source.component"),
                                      api_t_gets(ev, "reportingComponent"));
    const char *inst = first_nonempty(api_t_gets(ev, "source.host"),
                                      api_t_gets(ev, "reportingInstance"));
    (void)cond;
    if (series && series->kind == DRA_DOC_MAP) {
        last = api_t_since(t, api_t_gets(series, "lastObservedTime"));
        count = api_t_geti(series, "count", 0);
    } else if (count == 0) {
        count = 1;
    }
    snprintf(lower, sizeof lower, "%s", kind ? kind : "");
    for (char *p = lower; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    api_t_push(t, cells, api_t_str(t, last));
    api_t_push(t, cells, api_t_str(t, api_t_gets(ev, "type")));
    api_t_push(t, cells, api_t_str(t, api_t_gets(ev, "reason")));
    api_t_push(t, cells, api_t_str(t, name && *name ? api_t_fmt(t, "%s/%s", lower, name) : lower));
    api_t_push(t, cells, api_t_str(t, api_t_gets(ev, "involvedObject.fieldPath")));
    api_t_push(t, cells, api_t_str(t, *inst ? api_t_fmt(t, "%s, %s", comp, inst) : comp));
    api_t_push(t, cells, api_t_str(t, trimmed(t, api_t_gets(ev, "message"))));
    api_t_push(t, cells, api_t_str(t, first));
    api_t_push(t, cells, api_t_int(t, count));
    api_t_push(t, cells, api_t_str(t, api_t_gets(ev, "metadata.name")));
}

/* ---- namespaces -------------------------------------------------------------- */

static const tcol cols_ns[] = {
    {"Name", "string", "name", api_tdesc_name, 0},
    {"Status", "string", "", "The status of the namespace", 0},
    {"Age", "string", "", api_tdesc_age, 0},
};

static void row_ns(tctx *t, const dra_doc *ns, dra_doc *cells, dra_doc **cond)
{
    (void)cond;
    api_t_push(t, cells, api_t_str(t, api_t_gets(ns, "metadata.name")));
    api_t_push(t, cells, api_t_str(t, api_t_gets(ns, "status.phase")));
    api_t_push(t, cells, api_t_str(t, api_t_since(t, api_t_gets(ns, "metadata.creationTimestamp"))));
}

#define NCOLS(c) (sizeof c / sizeof c[0])

const tprinter *api_t_core_printer(const char *resource)
{
    static const tprinter pods = {cols_pod, NCOLS(cols_pod), row_pod};
    static const tprinter events = {cols_event, NCOLS(cols_event), row_event};
    static const tprinter nss = {cols_ns, NCOLS(cols_ns), row_ns};
    static const tprinter nodes = {cols_node, NCOLS(cols_node), row_node};
    if (!strcmp(resource, "pods"))
        return &pods;
    if (!strcmp(resource, "nodes"))
        return &nodes;
    if (!strcmp(resource, "events"))
        return &events;
    if (!strcmp(resource, "namespaces"))
        return &nss;
    return NULL;
}
