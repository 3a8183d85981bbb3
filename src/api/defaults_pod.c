/*
 * defaults_pod.c: what kube-apiserver adds to a Pod. First the scheme
 * defaults every decoded v1 Pod gets (SetObjectDefaults_Pod in
 * pkg/apis/core/v1: SetDefaults_Pod, _PodSpec, _Container, the
 * declarative port protocol, probes, resource lists), then, on create
 * and update, what the default admission plugins change (Priority,
 * DefaultTolerationSeconds, ServiceAccount), and last the v1 conversion
 * aliases (serviceAccount, podIP/podIPs, hostIP/hostIPs). Works on the
 * typed dra_pod: typed containers plus the `extra` documents.
 */
#include <string.h>

#include "api_int.h"
#include "defaults_int.h"

/* ---- Go field orders of the structs defaults are written into ---------------------- */

static const char *const container_order[] = {
    "name", "image", "command", "args", "workingDir", "ports", "envFrom", "env",
    "resources", "resizePolicy", "restartPolicy", "restartPolicyRules", "volumeMounts",
    "volumeDevices", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle",
    "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy",
    "securityContext", "stdin", "stdinOnce", "tty", "targetContainerName", NULL};
static const char *const port_order[] = {"name", "hostPort", "containerPort", "protocol",
                                         "hostIP", NULL};
static const char *const probe_order[] = {
    "exec", "httpGet", "tcpSocket", "grpc", "initialDelaySeconds", "timeoutSeconds",
    "periodSeconds", "successThreshold", "failureThreshold",
    "terminationGracePeriodSeconds", NULL};
static const char *const http_get_order[] = {"path", "port", "host", "scheme",
                                             "httpHeaders", NULL};
static const char *const grpc_order[] = {"port", "service", NULL};
static const char *const resources_order[] = {"limits", "requests", "claims", NULL};
static const char *const toleration_order[] = {"key", "operator", "value", "effect",
                                               "tolerationSeconds", NULL};

/* ---- containers: the document parts ---------------------------------------------------- */

static dra_err http_get_defaults(dra_arena *a, dra_doc *h)
{
    dra_err e;
    if (!h)
        return DRA_OK;
    if ((e = def_put_str(a, h, "path", "/", http_get_order, DEF_ZERO)) ||
        (e = def_put_str(a, h, "scheme", "HTTP", http_get_order, DEF_ZERO)))
        return e;
    def_reorder(h, http_get_order);
    return DRA_OK;
}

/* SetDefaults_Probe, its HTTPGetAction, and gRPC's declared service "". */
static dra_err probe_defaults(dra_arena *a, dra_doc *p)
{
    dra_doc *g;
    dra_err e;
    if (!p)
        return DRA_OK;
    if ((e = def_put_int(a, p, "timeoutSeconds", 1, probe_order, DEF_ZERO)) ||
        (e = def_put_int(a, p, "periodSeconds", 10, probe_order, DEF_ZERO)) ||
        (e = def_put_int(a, p, "successThreshold", 1, probe_order, DEF_ZERO)) ||
        (e = def_put_int(a, p, "failureThreshold", 3, probe_order, DEF_ZERO)) ||
        (e = http_get_defaults(a, def_map(p, "httpGet"))))
        return e;
    if ((g = def_map(p, "grpc"))) {
        if ((e = def_put_str(a, g, "service", "", grpc_order, DEF_NIL)))
            return e;
        def_reorder(g, grpc_order);
    }
    def_reorder(p, probe_order);
    return DRA_OK;
}

/* Each port's protocol TCP; with host networking its hostPort follows
 * containerPort (SetDefaults_Pod's defaultHostNetworkPorts). */
static dra_err ports_defaults(dra_arena *a, dra_doc *ports, int host_network)
{
    dra_err e;
    for (size_t i = 0; ports && i < ports->u.list.n; i++) {
        dra_doc *p = ports->u.list.items[i];
        int64_t cp;
        if (p->kind != DRA_DOC_MAP)
            continue;
        if ((e = def_put_str(a, p, "protocol", "TCP", port_order, DEF_ZERO)))
            return e;
        if (host_network && def_int(def_get(p, "containerPort"), &cp) &&
            (e = def_put_int(a, p, "hostPort", cp, port_order, DEF_ZERO)))
            return e;
        def_reorder(p, port_order);
    }
    return DRA_OK;
}

static dra_err env_defaults(dra_arena *a, dra_doc *env)
{
    dra_err e;
    for (size_t i = 0; env && i < env->u.list.n; i++) {
        if ((e = def_field_ref(a, def_map(def_map(env->u.list.items[i], "valueFrom"), "fieldRef"))))
            return e;
    }
    return DRA_OK;
}

dra_err def_container_doc(const def_ctx *c, dra_doc *m, const char *image, int host_network)
{
    static const char *const probes[] = {"livenessProbe", "readinessProbe", "startupProbe"};
    dra_doc *lc = def_map(m, "lifecycle");
    dra_err e;
    if ((e = def_put_str(c->a, m, "terminationMessagePath", "/dev/termination-log",
                         container_order, DEF_ZERO)) ||
        (e = def_put_str(c->a, m, "terminationMessagePolicy", "File", container_order,
                         DEF_ZERO)) ||
        (e = def_put_str(c->a, m, "imagePullPolicy", def_pull_policy(image), container_order,
                         DEF_ZERO)) ||
        (e = ports_defaults(c->a, def_list(m, "ports"), host_network)) ||
        (e = env_defaults(c->a, def_list(m, "env"))))
        return e;
    for (size_t i = 0; i < 3; i++)
        if ((e = probe_defaults(c->a, def_map(m, probes[i]))))
            return e;
    if (lc && ((e = http_get_defaults(c->a, def_map(def_map(lc, "postStart"), "httpGet"))) ||
               (e = http_get_defaults(c->a, def_map(def_map(lc, "preStop"), "httpGet")))))
        return e;
    return DRA_OK;
}

/* ---- containers: the typed parts --------------------------------------------------------- */

/* SetDefaults_Pod: a limit without a request gives the request. */
static dra_err requests_from_limits(dra_arena *a, dra_container *k)
{
    size_t missing = 0, n;
    dra_qty_entry *v;
    for (size_t i = 0; i < k->limits.n; i++)
        missing += dra_qtymap_get(&k->requests, k->limits.v[i].key) == NULL;
    if (!missing)
        return DRA_OK;
    if (!(v = dra_arena_array(a, k->requests.n + missing, sizeof *v)))
        return DRA_ENOMEM;
    if (k->requests.n)
        memcpy(v, k->requests.v, k->requests.n * sizeof *v);
    n = k->requests.n;
    for (size_t i = 0; i < k->limits.n; i++)
        if (!dra_qtymap_get(&k->requests, k->limits.v[i].key))
            v[n++] = k->limits.v[i];
    k->requests.v = v;
    k->requests.n = n;
    return DRA_OK;
}

static dra_err typed_container(const def_ctx *c, dra_container *k, int host_network)
{
    dra_doc *m;
    dra_err e;
    if ((e = requests_from_limits(c->a, k)))
        return e;
    for (size_t i = 0; i < k->limits.n; i++)
        def_round_milli(&k->limits.v[i].q);
    for (size_t i = 0; i < k->requests.n; i++)
        def_round_milli(&k->requests.v[i].q);
    if (!(m = def_extra(c->a, &k->extra)))
        return DRA_ENOMEM;
    return def_container_doc(c, m, k->image, host_network);
}

/* Ephemeral containers stay documents: the same defaults, the resource
 * lists rounded, and `resources` always written (a Go struct). */
static dra_err ephemeral_containers(const def_ctx *c, dra_doc *list, int host_network)
{
    dra_err e;
    for (size_t i = 0; list && i < list->u.list.n; i++) {
        dra_doc *m = list->u.list.items[i], *res;
        if (m->kind != DRA_DOC_MAP)
            continue;
        if ((e = def_container_doc(c, m, def_str(m, "image"), host_network)))
            return e;
        if (!(res = def_child(c->a, m, "resources", container_order, &e))) {
            if (e)
                return e;
            continue;
        }
        if ((e = def_round_list(c->a, def_map(res, "limits"))) ||
            (e = def_round_list(c->a, def_map(res, "requests"))))
            return e;
        def_reorder(res, resources_order);
        def_reorder(m, container_order);
    }
    return DRA_OK;
}

/* ---- pod-level resources (PodLevelResources, on by default since 1.34) -------------------- */

/* A resource list being summed: entries in |a|, keys borrowed. */
typedef struct rlist {
    dra_qty_entry *v;
    size_t n, cap;
} rlist;

static dra_qty_entry *rl_find(rlist *l, const char *key)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i].key, key))
            return &l->v[i];
    return NULL;
}

static dra_err rl_push(dra_arena *a, rlist *l, const char *key, const dra_quantity *q)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        dra_qty_entry *v = dra_arena_array(a, cap, sizeof *v);
        if (!v)
            return DRA_ENOMEM;
        if (l->n)
            memcpy(v, l->v, l->n * sizeof *v);
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].key = key;
    l->v[l->n++].q = *q;
    return DRA_OK;
}

/* addResourceList: sums; a sum beyond exact range keeps the old value. */
static dra_err rl_add(dra_arena *a, rlist *l, const char *key, const dra_quantity *q)
{
    dra_qty_entry *x = rl_find(l, key);
    if (!x)
        return rl_push(a, l, key, q);
    (void)dra_quantity_add(&x->q, q, &x->q);
    return DRA_OK;
}

/* maxResourceList: the larger of the two per resource. */
static dra_err rl_max(dra_arena *a, rlist *l, const rlist *from)
{
    dra_err e;
    for (size_t i = 0; i < from->n; i++) {
        dra_qty_entry *x = rl_find(l, from->v[i].key);
        if (!x) {
            if ((e = rl_push(a, l, from->v[i].key, &from->v[i].q)))
                return e;
        } else if (dra_quantity_cmp(&from->v[i].q, &x->q) > 0) {
            x->q = from->v[i].q;
        }
    }
    return DRA_OK;
}

static dra_err rl_add_map(dra_arena *a, rlist *l, const dra_qtymap *m)
{
    dra_err e;
    for (size_t i = 0; i < m->n; i++)
        if ((e = rl_add(a, l, m->v[i].key, &m->v[i].q)))
            return e;
    return DRA_OK;
}

static dra_err rl_add_rl(dra_arena *a, rlist *l, const rlist *from)
{
    dra_err e;
    for (size_t i = 0; i < from->n; i++)
        if ((e = rl_add(a, l, from->v[i].key, &from->v[i].q)))
            return e;
    return DRA_OK;
}

/* AggregateContainerRequests / AggregateContainerLimits: the regular
 * containers and sidecars summed, against the largest init step (an
 * init container plus the sidecars started before it). */
static dra_err aggregate(dra_arena *a, const dra_pod_spec *s, int limits, rlist *out)
{
    rlist side = {0}, init = {0};
    dra_err e;
    for (size_t i = 0; i < s->n_containers; i++) {
        const dra_container *k = &s->containers[i];
        if ((e = rl_add_map(a, out, limits ? &k->limits : &k->requests)))
            return e;
    }
    for (size_t i = 0; i < s->n_init_containers; i++) {
        const dra_container *k = &s->init_containers[i];
        const dra_qtymap *m = limits ? &k->limits : &k->requests;
        const char *rp = def_str(k->extra, "restartPolicy");
        rlist step = {0};
        if (rp && !strcmp(rp, "Always")) {
            if ((e = rl_add_map(a, out, m)) || (e = rl_add_map(a, &side, m)) ||
                (e = rl_max(a, &init, &side)))
                return e;
            continue;
        }
        if ((e = rl_add_map(a, &step, m)) || (e = rl_add_rl(a, &step, &side)) ||
            (e = rl_max(a, &init, &step)))
            return e;
    }
    return rl_max(a, out, &init);
}

static int hugepages(const char *k)
{
    return !strncmp(k, "hugepages-", 10);
}

/* IsSupportedPodLevelResource. */
static int pod_level(const char *k)
{
    return !strcmp(k, "cpu") || !strcmp(k, "memory") || hugepages(k);
}

/* IsOvercommitAllowed: native resources other than hugepages. */
static int overcommit(const char *k)
{
    return (!strchr(k, '/') || strstr(k, "kubernetes.io/")) && !hugepages(k);
}

static size_t map_n(const dra_doc *m)
{
    return m && m->kind == DRA_DOC_MAP ? m->u.map.n : 0;
}

static dra_err set_qty(dra_arena *a, dra_doc *m, const char *key, const dra_quantity *q)
{
    char buf[DRA_QTY_STR_MAX];
    size_t n = dra_quantity_str(q, buf, sizeof buf);
    return def_set_sorted(a, m, key, dra_doc_new_string(a, buf, n < sizeof buf ? n : sizeof buf - 1));
}

/* defaultHugePagePodLimits: hugepage limits of the containers become the
 * pod's when the pod sets neither a limit nor a request for them. */
static dra_err hugepage_limits(dra_arena *a, const dra_pod_spec *s, dra_doc *res)
{
    dra_doc *lim = def_map(res, "limits"), *req = def_map(res, "requests");
    rlist agg = {0};
    dra_err e;
    if (!map_n(lim) && !map_n(req))
        return DRA_OK;
    if ((e = aggregate(a, s, 1, &agg)))
        return e;
    for (size_t i = 0; i < agg.n; i++) {
        const char *k = agg.v[i].key;
        if (!hugepages(k) || def_get(req, k) || def_get(lim, k))
            continue;
        if ((!lim && !(lim = def_child(a, res, "limits", resources_order, &e))) ||
            (e = set_qty(a, lim, k, &agg.v[i].q)))
            return e ? e : DRA_OK;
    }
    return DRA_OK;
}

/* defaultPodRequests: with pod-level limits, the pod's requests come
 * from the containers' requests (overcommittable resources) and then
 * from the pod's limits. */
static dra_err pod_requests(dra_arena *a, const dra_pod_spec *s, dra_doc *res)
{
    dra_doc *lim = def_map(res, "limits"), *req = def_map(res, "requests");
    rlist agg = {0};
    dra_err e;
    if (!map_n(lim))
        return DRA_OK;
    if ((e = aggregate(a, s, 0, &agg)))
        return e;
    for (size_t i = 0; i < agg.n + lim->u.map.n; i++) {
        const char *k = i < agg.n ? agg.v[i].key : lim->u.map.m[i - agg.n].key;
        if (def_get(req, k) || !pod_level(k) || (i < agg.n && !overcommit(k)))
            continue;
        if (!req && !(req = def_child(a, res, "requests", resources_order, &e)))
            return e;
        e = i < agg.n ? set_qty(a, req, k, &agg.v[i].q)
                      : def_set_sorted(a, req, k, api_doc_copy(a, lim->u.map.m[i - agg.n].val));
        if (e)
            return e;
    }
    return DRA_OK;
}

/* ---- the pod spec ------------------------------------------------------------------------- */

static int host_network(const dra_doc *spec)
{
    const dra_doc *v = def_get(spec, "hostNetwork");
    return v && v->kind == DRA_DOC_BOOL && v->u.b;
}

/* SetDefaults_PodSpec and the pod-level parts of SetDefaults_Pod. */
static dra_err spec_plain_defaults(dra_arena *a, dra_doc *x)
{
    dra_err e;
    if ((e = def_put_str(a, x, "dnsPolicy", "ClusterFirst", NULL, DEF_ZERO)) ||
        (e = def_put_str(a, x, "restartPolicy", "Always", NULL, DEF_ZERO)) ||
        (e = def_put(a, x, "securityContext", dra_doc_new_map(a, 0), NULL, DEF_NIL)) ||
        (e = def_put_int(a, x, "terminationGracePeriodSeconds", 30, NULL, DEF_NIL)) ||
        (e = def_put_str(a, x, "schedulerName", "default-scheduler", NULL, DEF_ZERO)) ||
        (e = def_put(a, x, "enableServiceLinks", dra_doc_new_bool(a, 1), NULL, DEF_NIL)))
        return e;
    return DRA_OK;
}

static dra_err spec_defaults(const def_ctx *c, dra_pod_spec *s)
{
    dra_doc *x = def_extra(c->a, &s->extra), *res;
    int hn;
    dra_err e;
    if (!x)
        return DRA_ENOMEM;
    hn = host_network(x);
    /* The containers' requests first: pod-level defaults sum them. */
    for (size_t i = 0; i < s->n_init_containers; i++)
        if ((e = requests_from_limits(c->a, &s->init_containers[i])))
            return e;
    for (size_t i = 0; i < s->n_containers; i++)
        if ((e = requests_from_limits(c->a, &s->containers[i])))
            return e;
    if ((res = def_map(x, "resources")) &&
        ((e = hugepage_limits(c->a, s, res)) || (e = pod_requests(c->a, s, res))))
        return e;
    if ((e = spec_plain_defaults(c->a, x)) || (e = def_volumes(c, def_list(x, "volumes"))))
        return e;
    for (size_t i = 0; i < s->n_init_containers; i++)
        if ((e = typed_container(c, &s->init_containers[i], hn)))
            return e;
    for (size_t i = 0; i < s->n_containers; i++)
        if ((e = typed_container(c, &s->containers[i], hn)))
            return e;
    /* defaultHostNetworkPorts leaves ephemeral containers alone. */
    if ((e = ephemeral_containers(c, def_list(x, "ephemeralContainers"), 0)) ||
        (e = def_round_list(c->a, def_map(x, "overhead"))))
        return e;
    if (res && ((e = def_round_list(c->a, def_map(res, "limits"))) ||
                (e = def_round_list(c->a, def_map(res, "requests")))))
        return e;
    return DRA_OK;
}

/* ---- status ----------------------------------------------------------------------------- */

/* The resource lists in container statuses are rounded like the spec's. */
static dra_err status_resources(dra_arena *a, dra_doc *list)
{
    dra_err e;
    for (size_t i = 0; list && i < list->u.list.n; i++) {
        dra_doc *st = list->u.list.items[i], *res = def_map(st, "resources");
        if ((e = def_round_list(a, def_map(st, "allocatedResources"))) ||
            (e = def_round_list(a, def_map(res, "limits"))) ||
            (e = def_round_list(a, def_map(res, "requests"))))
            return e;
    }
    return DRA_OK;
}

/* v1's single podIP/hostIP and its list: a single address that is not
 * the list's first becomes the whole list (v1 -> internal), and the
 * single address always mirrors the first entry (internal -> v1). */
static dra_err ip_pair(dra_arena *a, dra_doc *st, const char *one, const char *many)
{
    const char *ip = def_str(st, one), *first = NULL;
    dra_doc *l = def_list(st, many), *item;
    dra_err e;
    if (l && l->u.list.n)
        first = def_str(l->u.list.items[0], "ip");
    if (ip && *ip && (!first || strcmp(first, ip))) {
        if (!(l = dra_doc_new_list(a, 1)) || !(item = dra_doc_new_map(a, 1)) ||
            (e = def_set(a, item, "ip", dra_doc_new_string(a, ip, strlen(ip)), NULL)) ||
            (e = dra_doc_list_push(a, l, item)) || (e = def_set(a, st, many, l, NULL)))
            return DRA_ENOMEM;
        return DRA_OK;
    }
    if (first && (!ip || strcmp(ip, first)))
        return def_set(a, st, one, dra_doc_new_string(a, first, strlen(first)), NULL);
    return DRA_OK;
}

static dra_err status_defaults(dra_arena *a, dra_pod_status *s)
{
    static const char *const lists[] = {"initContainerStatuses", "containerStatuses",
                                        "ephemeralContainerStatuses"};
    dra_err e;
    if (!s->extra)
        return DRA_OK;
    for (size_t i = 0; i < 3; i++)
        if ((e = status_resources(a, def_list(s->extra, lists[i]))))
            return e;
    if ((e = ip_pair(a, s->extra, "podIP", "podIPs")) ||
        (e = ip_pair(a, s->extra, "hostIP", "hostIPs")))
        return e;
    return DRA_OK;
}

/* ---- default admission ----------------------------------------------------------------- */

static dra_err toleration(dra_arena *a, dra_doc *list, const char *key)
{
    dra_doc *t = dra_doc_new_map(a, 4);
    dra_err e;
    if (!t || (e = def_put_str(a, t, "key", key, toleration_order, DEF_NIL)) ||
        (e = def_put_str(a, t, "operator", "Exists", toleration_order, DEF_NIL)) ||
        (e = def_put_str(a, t, "effect", "NoExecute", toleration_order, DEF_NIL)) ||
        (e = def_put_int(a, t, "tolerationSeconds", 300, toleration_order, DEF_NIL)))
        return DRA_ENOMEM;
    return dra_doc_list_push(a, list, t);
}

/* DefaultTolerationSeconds (create and update): a pod that does not
 * tolerate node.kubernetes.io/not-ready or /unreachable with NoExecute
 * (an empty key or effect matches too) gets it for 300 s. */
static dra_err default_tolerations(dra_arena *a, dra_doc *x)
{
    static const char *const keys[] = {"node.kubernetes.io/not-ready",
                                       "node.kubernetes.io/unreachable"};
    dra_doc *l = def_get(x, "tolerations");
    int has[2] = {0, 0};
    dra_err e;
    if (l && l->kind != DRA_DOC_LIST && l->kind != DRA_DOC_NULL)
        return DRA_OK;
    for (size_t i = 0; l && l->kind == DRA_DOC_LIST && i < l->u.list.n; i++) {
        const char *k = def_str(l->u.list.items[i], "key");
        const char *eff = def_str(l->u.list.items[i], "effect");
        if (eff && *eff && strcmp(eff, "NoExecute"))
            continue;
        for (size_t j = 0; j < 2; j++)
            has[j] |= !k || !*k || !strcmp(k, keys[j]);
    }
    if (has[0] && has[1])
        return DRA_OK;
    if (!l || l->kind == DRA_DOC_NULL) {
        if ((e = def_set(a, x, "tolerations", dra_doc_new_list(a, 2), NULL)))
            return e;
        l = def_get(x, "tolerations");
    }
    for (size_t j = 0; j < 2; j++)
        if (!has[j] && (e = toleration(a, l, keys[j])))
            return e;
    return DRA_OK;
}

/* The PriorityClasses every cluster has (scheduling.SystemPriorityClasses);
 * drad serves no PriorityClass API, so these are all a pod can name. */
static int priority_of(const char *pc, int64_t *value)
{
    if (!pc || !*pc)
        *value = 0; /* DefaultPriorityWhenNoDefaultClassExists */
    else if (!strcmp(pc, "system-node-critical"))
        *value = 2000001000;
    else if (!strcmp(pc, "system-cluster-critical"))
        *value = 2000000000;
    else
        return 0;
    return 1;
}

/* Priority admission. On create the pod's priority and preemption policy
 * come from its class (no class: 0 and PreemptLowerPriority), and a pod
 * that brings a different value is refused; on update an omitted value
 * is kept from the stored pod. */
static dra_err priority(const def_ctx *c, dra_doc *x, const dra_doc *old)
{
    const char *pc = def_str(x, "priorityClassName");
    const char *policy = "PreemptLowerPriority";
    const dra_doc *p = def_get(x, "priority"), *pp = def_get(x, "preemptionPolicy");
    int64_t value, given;
    dra_err e;
    if (c->op == DRA_API_OP_UPDATE) {
        const dra_doc *op = def_get(old, "priority"), *opp = def_get(old, "preemptionPolicy");
        if (def_is_unset(p, DEF_NIL) && !def_is_unset(op, DEF_NIL) &&
            (e = def_set(c->a, x, "priority", api_doc_copy(c->a, op), NULL)))
            return e;
        if (def_is_unset(pp, DEF_NIL) && !def_is_unset(opp, DEF_NIL))
            return def_set(c->a, x, "preemptionPolicy", api_doc_copy(c->a, opp), NULL);
        return DRA_OK;
    }
    if (!priority_of(pc, &value)) {
        dra_diag_add(c->d, "", 0, 0, "no PriorityClass with name %s was found", pc);
        return DRA_EFORBIDDEN;
    }
    if (def_int(p, &given) && given != value) {
        dra_diag_add(c->d, "", 0, 0,
                     "the integer value of priority (%lld) must not be provided in pod spec; "
                     "priority admission controller computed %lld from the given "
                     "PriorityClass name", (long long)given, (long long)value);
        return DRA_EFORBIDDEN;
    }
    if (pp && pp->kind == DRA_DOC_STRING && strcmp(pp->u.str.s, policy)) {
        dra_diag_add(c->d, "", 0, 0,
                     "the string value of PreemptionPolicy (%s) must not be provided in pod "
                     "spec; priority admission controller computed %s from the given "
                     "PriorityClass name", pp->u.str.s, policy);
        return DRA_EFORBIDDEN;
    }
    if ((e = def_put_int(c->a, x, "priority", value, NULL, DEF_NIL)))
        return e;
    return def_put_str(c->a, x, "preemptionPolicy", policy, NULL, DEF_NIL);
}

/* ServiceAccount admission on create: the namespace's "default" account
 * unless the pod names one (mirror pods are left alone). drad issues no
 * tokens, so no kube-api-access volume is mounted. */
static dra_err service_account(const def_ctx *c, const dra_object *pod, dra_doc *x)
{
    if (dra_strmap_get(&pod->meta.annotations, "kubernetes.io/config.mirror"))
        return DRA_OK;
    return def_put_str(c->a, x, "serviceAccountName", "default", NULL, DEF_ZERO);
}

/* v1's deprecated serviceAccount: read as serviceAccountName when that is
 * empty (|out| 0), and written back equal to it (|out| 1; an empty name
 * writes none, omitempty). */
static dra_err service_account_alias(dra_arena *a, dra_doc *x, int out)
{
    const char *name = def_str(x, "serviceAccountName"), *dep = def_str(x, "serviceAccount");
    if (!out) {
        if ((!name || !*name) && dep && *dep)
            return def_set(a, x, "serviceAccountName", dra_doc_new_string(a, dep, strlen(dep)),
                           NULL);
        return DRA_OK;
    }
    if (!name || !*name) {
        def_del(x, "serviceAccount");
        return DRA_OK;
    }
    if (dep && !strcmp(dep, name))
        return DRA_OK;
    return def_set(a, x, "serviceAccount", dra_doc_new_string(a, name, strlen(name)), NULL);
}

dra_err def_pod(const def_ctx *c, dra_object *pod, const dra_object *old)
{
    dra_doc *x;
    dra_err e;
    if ((e = spec_defaults(c, &pod->u.pod.spec)))
        return e;
    x = pod->u.pod.spec.extra;
    if ((e = service_account_alias(c->a, x, 0)))
        return e;
    if (c->op == DRA_API_OP_CREATE || c->op == DRA_API_OP_UPDATE) {
        if ((e = priority(c, x, old ? old->u.pod.spec.extra : NULL)) ||
            (e = default_tolerations(c->a, x)))
            return e;
        if (c->op == DRA_API_OP_CREATE && (e = service_account(c, pod, x)))
            return e;
    }
    if ((e = service_account_alias(c->a, x, 1)))
        return e;
    return status_defaults(c->a, &pod->u.pod.status);
}
