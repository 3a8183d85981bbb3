/*
 * fake.c: fake nodes, KWOK-style. Registers N Ready nodes and one
 * ResourceSlice each (from a template, 8 GB200 GPUs by default), then a
 * single pod watch for all of them: a pod bound to a fake node gets a
 * Running status with running, ready containers (nothing runs, claims
 * are not prepared); a pod marked for deletion is deleted. A few writer
 * threads share the work, so the cost is one watch and one write per
 * pod, whatever the number of nodes.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "node_int.h"

typedef enum { JOB_STATUS, JOB_DELETE } job_kind;

typedef struct job {
    job_kind kind;
    char *ns, *name, *uid;
    char *body; /* JOB_STATUS: the merge patch */
    struct job *next;
} job;

struct dra_fake_nodes {
    const dra_mem *mem;
    dra_cluster *c;
    dra_fake_nodes_opts o;
    dra_arena oa;
    const char *prefix, *driver;
    dra_map nodes; /* name -> index + 1 (as a pointer) */
    char **names;
    dra_map seen; /* pod UID -> 1 once its status is queued */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    job *head, *tail;
    int stop;
    pthread_t *th;
    int nth;
    int writers; /* writer threads running */
    dra_reflector *refl;
    atomic_uint_fast64_t running;
    atomic_size_t next_node; /* registration work list */
    atomic_int failed;
    char fail_msg[1400];
};

/* ---- nodes and slices ------------------------------------------------------ */

static uint64_t mix(const char *s, uint64_t salt)
{
    return dra_hash(s, strlen(s)) ^ (salt * 0x9e3779b97f4a7c15ull);
}

/* A stable GPU UUID for device |dev| of |node|. */
static void fake_uuid(const char *node, const char *dev, char *buf, size_t size)
{
    uint64_t a = mix(node, dra_hash(dev, strlen(dev))), b = mix(dev, a);
    snprintf(buf, size, "GPU-%08x-%04x-%04x-%04x-%012llx", (unsigned)(a >> 32), (unsigned)(a >> 16) & 0xffff,
             (unsigned)a & 0xffff, (unsigned)(b >> 48), (unsigned long long)(b & 0xffffffffffffull));
}

static dra_doc *typed(dra_arena *a, const char *type, dra_doc *v, dra_err *err)
{
    dra_doc *m = dra_doc_new_map(a, 1);
    node_set(a, m, type, v, err);
    return m;
}

/* One GB200 GPU as NVIDIA's driver publishes it (examples/resourceslice-gb200.yaml). */
static dra_doc *gb200(dra_arena *a, const char *node, int i, dra_err *err)
{
    dra_doc *d = dra_doc_new_map(a, 3), *at = dra_doc_new_map(a, 13), *cap = dra_doc_new_map(a, 1);
    char name[32], bus[32], uuid[64];
    snprintf(name, sizeof name, "gpu-%d", i);
    snprintf(bus, sizeof bus, "0000:%02x:00.0", i + 1);
    fake_uuid(node, name, uuid, sizeof uuid);
    node_set_str(a, d, "name", name, err);
    node_set(a, at, "addressingMode", typed(a, "string", node_str(a, "ATS"), err), err);
    node_set(a, at, "architecture", typed(a, "string", node_str(a, "Blackwell"), err), err);
    node_set(a, at, "brand", typed(a, "string", node_str(a, "Nvidia"), err), err);
    node_set(a, at, "cudaComputeCapability", typed(a, "version", node_str(a, "10.0.0"), err), err);
    node_set(a, at, "cudaDriverVersion", typed(a, "version", node_str(a, "13.0.0"), err), err);
    node_set(a, at, "driverVersion", typed(a, "version", node_str(a, "580.126.20"), err), err);
    node_set(a, at, "index", typed(a, "int", dra_doc_new_int(a, i), err), err);
    node_set(a, at, "minor", typed(a, "int", dra_doc_new_int(a, i), err), err);
    node_set(a, at, "pcieBusID", typed(a, "string", node_str(a, bus), err), err);
    node_set(a, at, "productName", typed(a, "string", node_str(a, "NVIDIA GB200"), err), err);
    node_set(a, at, "resource.kubernetes.io/pcieRoot", typed(a, "string", node_str(a, "pci0000:00"), err), err);
    node_set(a, at, "type", typed(a, "string", node_str(a, "gpu"), err), err);
    node_set(a, at, "uuid", typed(a, "string", node_str(a, uuid), err), err);
    node_set(a, d, "attributes", at, err);
    node_set(a, cap, "memory", typed(a, "value", node_str(a, "189471Mi"), err), err);
    node_set(a, d, "capacity", cap, err);
    return d;
}

/* The template's devices for |node|, uuid attributes made unique. */
static dra_doc *template_devices(dra_fake_nodes *f, dra_arena *a, const char *node, dra_err *err)
{
    const dra_doc *src = dra_doc_at(f->o.slice_template, "spec.devices");
    dra_doc *l = src ? node_doc_copy(a, src) : NULL;
    if (!l || l->kind != DRA_DOC_LIST) {
        *err = *err ? *err : DRA_EINVAL;
        return NULL;
    }
    for (size_t i = 0; i < l->u.list.n; i++) {
        dra_doc *at = (dra_doc *)dra_doc_get(l->u.list.items[i], "attributes");
        const char *dn = node_doc_str(l->u.list.items[i], "name");
        char uuid[64];
        if (!dra_doc_get(at, "uuid") || !dn)
            continue;
        fake_uuid(node, dn, uuid, sizeof uuid);
        node_set(a, at, "uuid", typed(a, "string", node_str(a, uuid), err), err);
    }
    return l;
}

static dra_doc *slice_doc(dra_fake_nodes *f, dra_arena *a, const char *node, const char *node_uid, dra_err *err)
{
    dra_doc *s = dra_doc_new_map(a, 4), *meta = dra_doc_new_map(a, 2), *spec = dra_doc_new_map(a, 4);
    dra_doc *pool = dra_doc_new_map(a, 3), *refs = dra_doc_new_list(a, 1), *ref = dra_doc_new_map(a, 5);
    dra_doc *devs;
    node_set_str(a, s, "apiVersion", "resource.k8s.io/v1", err);
    node_set_str(a, s, "kind", "ResourceSlice", err);
    node_set(a, meta, "generateName", node_str(a, dra_arena_sprintf(a, "%s-%s-", node, f->driver)), err);
    node_set_str(a, ref, "apiVersion", "v1", err);
    node_set_str(a, ref, "kind", "Node", err);
    node_set_str(a, ref, "name", node, err);
    node_set_str(a, ref, "uid", node_uid, err);
    node_set(a, ref, "controller", dra_doc_new_bool(a, 1), err);
    node_push(a, refs, ref, err);
    if (node_uid && node_uid[0])
        node_set(a, meta, "ownerReferences", refs, err);
    node_set(a, s, "metadata", meta, err);
    node_set_str(a, spec, "driver", f->driver, err);
    node_set_str(a, spec, "nodeName", node, err);
    node_set_str(a, pool, "name", node, err);
    node_set(a, pool, "generation", dra_doc_new_int(a, 1), err);
    node_set(a, pool, "resourceSliceCount", dra_doc_new_int(a, 1), err);
    node_set(a, spec, "pool", pool, err);
    if (f->o.slice_template) {
        devs = template_devices(f, a, node, err);
    } else {
        devs = dra_doc_new_list(a, f->o.gpus);
        for (size_t i = 0; i < f->o.gpus; i++)
            node_push(a, devs, gb200(a, node, (int)i, err), err);
    }
    node_set(a, spec, "devices", devs, err);
    node_set(a, s, "spec", spec, err);
    return s;
}

static dra_doc *fake_node_doc(dra_fake_nodes *f, dra_arena *a, const char *name, size_t idx, dra_err *err)
{
    static const char *const conds[4][4] = {
        {"MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
        {"DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
        {"PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
        {"Ready", "True", "KubeletReady", "kubelet is posting ready status"}};
    dra_doc *n = dra_doc_new_map(a, 5), *meta = dra_doc_new_map(a, 3), *labels = dra_doc_new_map(a, 4);
    dra_doc *st = dra_doc_new_map(a, 6), *cap = dra_doc_new_map(a, 4), *cl = dra_doc_new_list(a, 4);
    dra_doc *addrs = dra_doc_new_list(a, 2), *ip = dra_doc_new_map(a, 2), *info = dra_doc_new_map(a, 4);
    char now[48], addr[32];
    node_fmt_time(node_now_ns(), 0, now, sizeof now);
    snprintf(addr, sizeof addr, "10.%zu.%zu.%zu", (idx >> 16) & 255, (idx >> 8) & 255, idx & 255);
    node_set_str(a, n, "apiVersion", "v1", err);
    node_set_str(a, n, "kind", "Node", err);
    node_set_str(a, meta, "name", name, err);
    node_set_str(a, labels, "kubernetes.io/hostname", name, err);
    node_set_str(a, labels, "kubernetes.io/os", "linux", err);
    node_set_str(a, labels, "kubernetes.io/arch", "amd64", err);
    node_set_str(a, labels, "type", "fake", err);
    for (size_t i = 0; i < f->o.n_labels; i++) {
        const char *eq = strchr(f->o.labels[i], '=');
        if (eq)
            node_set_str(a, labels, dra_arena_strndup(a, f->o.labels[i], (size_t)(eq - f->o.labels[i])), eq + 1,
                         err);
    }
    node_set(a, meta, "labels", labels, err);
    node_set(a, n, "metadata", meta, err);
    node_set(a, n, "spec", dra_doc_new_map(a, 0), err);
    node_set_str(a, cap, "cpu", "144", err);
    node_set_str(a, cap, "memory", "1536Gi", err);
    node_set_str(a, cap, "pods", "110", err);
    node_set_str(a, cap, "ephemeral-storage", "7Ti", err);
    node_set(a, st, "capacity", cap, err);
    node_set(a, st, "allocatable", node_doc_copy(a, cap), err);
    for (int i = 0; i < 4; i++) {
        dra_doc *c = dra_doc_new_map(a, 6);
        node_set_str(a, c, "type", conds[i][0], err);
        node_set_str(a, c, "status", conds[i][1], err);
        node_set_str(a, c, "lastHeartbeatTime", now, err);
        node_set_str(a, c, "lastTransitionTime", now, err);
        node_set_str(a, c, "reason", conds[i][2], err);
        node_set_str(a, c, "message", conds[i][3], err);
        node_push(a, cl, c, err);
    }
    node_set(a, st, "conditions", cl, err);
    node_set_str(a, ip, "type", "InternalIP", err);
    node_set_str(a, ip, "address", addr, err);
    node_push(a, addrs, ip, err);
    node_set(a, st, "addresses", addrs, err);
    node_set_str(a, info, "kubeletVersion", "v1.35.0-fake", err);
    node_set_str(a, info, "operatingSystem", "linux", err);
    node_set_str(a, info, "architecture", "amd64", err);
    node_set_str(a, info, "containerRuntimeVersion", "fake://", err);
    node_set(a, st, "nodeInfo", info, err);
    node_set(a, n, "status", st, err);
    return n;
}

/* Registers node |idx| and its slice; an existing node is kept. */
static dra_err register_one(dra_fake_nodes *f, size_t idx, dra_kstatus *st)
{
    dra_arena a;
    dra_doc *node, *out = NULL;
    dra_err e = DRA_OK;
    const char *name = f->names[idx];
    dra_arena_init(&a, f->mem);
    node = fake_node_doc(f, &a, name, f->o.first + idx, &e);
    if (!e)
        e = dra_cluster_create(f->c, &DRA_GVR_NODES, NULL, node, &a, &out, st);
    if (e == DRA_OK && !node_doc_str(dra_doc_get(out, "status"), "phase") && !dra_doc_at(out, "status.conditions"))
        e = dra_cluster_update(f->c, &DRA_GVR_NODES, NULL, name, "status", out, &a, &out, st);
    if (e == DRA_EEXIST) {
        /* Taken over from an earlier run: its slice is there as well. */
        dra_arena_fini(&a);
        return DRA_OK;
    }
    if (!e && !f->o.no_slices) {
        dra_doc *slice = slice_doc(f, &a, name, dra_obj_uid(out), &e);
        if (!e)
            e = dra_cluster_create(f->c, &DRA_GVR_SLICES, NULL, slice, &a, NULL, st);
    }
    dra_arena_fini(&a);
    return e;
}

static void *register_main(void *arg)
{
    dra_fake_nodes *f = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&f->next_node, 1);
        dra_kstatus st;
        dra_err e;
        if (i >= f->o.count || atomic_load(&f->failed))
            return NULL;
        memset(&st, 0, sizeof st);
        if ((e = register_one(f, i, &st)) != DRA_OK && !atomic_exchange(&f->failed, 1))
            snprintf(f->fail_msg, sizeof f->fail_msg, "fake node %s: %s", f->names[i],
                     st.message[0] ? st.message : dra_strerror(e));
    }
}

/* ---- pods ---------------------------------------------------------------------- */

static void job_free(dra_fake_nodes *f, job *j)
{
    if (!j)
        return;
    dra_free(f->mem, j->ns);
    dra_free(f->mem, j->name);
    dra_free(f->mem, j->uid);
    dra_free(f->mem, j->body);
    dra_free(f->mem, j);
}

static void push_job(dra_fake_nodes *f, job *j)
{
    pthread_mutex_lock(&f->mu);
    if (f->tail)
        f->tail->next = j;
    else
        f->head = j;
    f->tail = j;
    pthread_cond_signal(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

/* The end of both status builders: |cs| as status.containerStatuses of
 * |root|, which becomes the JSON text returned (NULL when |err| or out of
 * memory); |a| is finished either way. */
static char *status_json(dra_fake_nodes *f, dra_arena *a, dra_doc *root, dra_doc *st,
                         dra_doc *cs, dra_err err)
{
    char *out = NULL;
    node_set(a, st, "containerStatuses", cs, &err);
    node_set(a, root, "status", st, &err);
    if (!err)
        out = node_to_json(f->mem, root);
    dra_arena_fini(a);
    return out;
}

/* The status a kubelet would write for the running pod |pod|. */
static char *running_status(dra_fake_nodes *f, const dra_doc *pod, size_t node_idx)
{
    static const char *const types[] = {"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady",
                                        "PodScheduled"};
    dra_arena a;
    dra_err err = DRA_OK;
    dra_doc *root, *st, *cl, *cs, *ips, *ipm;
    const dra_doc *ctrs = dra_doc_at(pod, "spec.containers");
    char now[48], ip[32];
    dra_arena_init(&a, f->mem);
    node_fmt_time(node_now_ns(), 0, now, sizeof now);
    snprintf(ip, sizeof ip, "10.%zu.%zu.%zu", (node_idx >> 16) & 255, (node_idx >> 8) & 255, node_idx & 255);
    root = dra_doc_new_map(&a, 1);
    st = dra_doc_new_map(&a, 9);
    cl = dra_doc_new_list(&a, 5);
    cs = dra_doc_new_list(&a, 2);
    ips = dra_doc_new_list(&a, 1);
    ipm = dra_doc_new_map(&a, 1);
    node_set_str(&a, st, "phase", "Running", &err);
    for (int i = 0; i < 5; i++) {
        dra_doc *c = dra_doc_new_map(&a, 4);
        node_set_str(&a, c, "type", types[i], &err);
        node_set_str(&a, c, "status", "True", &err);
        node_set(&a, c, "lastProbeTime", dra_doc_new_null(&a), &err);
        node_set_str(&a, c, "lastTransitionTime", now, &err);
        node_push(&a, cl, c, &err);
    }
    node_set(&a, st, "conditions", cl, &err);
    node_set_str(&a, st, "hostIP", ip, &err);
    node_set_str(&a, ipm, "ip", ip, &err);
    node_push(&a, ips, ipm, &err);
    node_set(&a, st, "hostIPs", ips, &err);
    node_set_str(&a, st, "podIP", ip, &err);
    node_set(&a, st, "podIPs", node_doc_copy(&a, ips), &err);
    node_set_str(&a, st, "startTime", now, &err);
    for (size_t i = 0; ctrs && ctrs->kind == DRA_DOC_LIST && i < ctrs->u.list.n; i++) {
        const dra_doc *ct = ctrs->u.list.items[i];
        dra_doc *m = dra_doc_new_map(&a, 9), *state = dra_doc_new_map(&a, 1), *run = dra_doc_new_map(&a, 1);
        const char *img = node_doc_str(ct, "image");
        node_set_str(&a, m, "name", node_doc_str(ct, "name"), &err);
        node_set_str(&a, run, "startedAt", now, &err);
        node_set(&a, state, "running", run, &err);
        node_set(&a, m, "state", state, &err);
        node_set(&a, m, "lastState", dra_doc_new_map(&a, 0), &err);
        node_set(&a, m, "ready", dra_doc_new_bool(&a, 1), &err);
        node_set(&a, m, "restartCount", dra_doc_new_int(&a, 0), &err);
        node_set_str(&a, m, "image", img ? img : "", &err);
        node_set_str(&a, m, "imageID", "", &err);
        node_set(&a, m, "containerID",
                 node_str(&a, dra_arena_sprintf(&a, "fake://%s-%zu", dra_obj_uid(pod), i)), &err);
        node_set(&a, m, "started", dra_doc_new_bool(&a, 1), &err);
        node_push(&a, cs, m, &err);
    }
    return status_json(f, &a, root, st, cs, err);
}

/* The final status of a deleted pod: its containers stopped cleanly. */
static char *final_status(dra_fake_nodes *f, const dra_doc *pod)
{
    dra_arena a;
    dra_err err = DRA_OK;
    dra_doc *root, *st, *cs;
    const dra_doc *old = dra_doc_at(pod, "status.containerStatuses");
    char now[48];
    dra_arena_init(&a, f->mem);
    node_fmt_time(node_now_ns(), 0, now, sizeof now);
    root = dra_doc_new_map(&a, 1);
    st = dra_doc_new_map(&a, 2);
    cs = dra_doc_new_list(&a, 2);
    node_set_str(&a, st, "phase", "Succeeded", &err);
    for (size_t i = 0; old && old->kind == DRA_DOC_LIST && i < old->u.list.n; i++) {
        dra_doc *m = node_doc_copy(&a, old->u.list.items[i]), *state = dra_doc_new_map(&a, 1);
        dra_doc *t = dra_doc_new_map(&a, 5);
        const char *started = dra_obj_str(old->u.list.items[i], "state.running.startedAt");
        node_set(&a, t, "exitCode", dra_doc_new_int(&a, 0), &err);
        node_set_str(&a, t, "reason", "Completed", &err);
        node_set_str(&a, t, "startedAt", started ? started : now, &err);
        node_set_str(&a, t, "finishedAt", now, &err);
        node_set_str(&a, t, "containerID", dra_obj_str(old->u.list.items[i], "containerID"), &err);
        node_set(&a, state, "terminated", t, &err);
        node_set(&a, m, "state", state, &err);
        node_set(&a, m, "ready", dra_doc_new_bool(&a, 0), &err);
        node_set(&a, m, "started", dra_doc_new_bool(&a, 0), &err);
        node_push(&a, cs, m, &err);
    }
    return status_json(f, &a, root, st, cs, err);
}

static job *new_job(dra_fake_nodes *f, job_kind k, const dra_doc *pod)
{
    job *j = dra_calloc(f->mem, 1, sizeof *j);
    if (!j)
        return NULL;
    j->kind = k;
    j->ns = dra_strdup(f->mem, dra_obj_namespace(pod));
    j->name = dra_strdup(f->mem, dra_obj_name(pod));
    j->uid = dra_strdup(f->mem, dra_obj_uid(pod));
    if (!j->ns || !j->name || !j->uid) {
        job_free(f, j);
        return NULL;
    }
    return j;
}

static void fake_on_event(void *ud, dra_watch_type type, const dra_doc *pod)
{
    dra_fake_nodes *f = ud;
    const char *node = dra_obj_str(pod, "spec.nodeName"), *uid = dra_obj_uid(pod);
    const char *phase = dra_obj_str(pod, "status.phase");
    void *idx;
    job *j;
    if (!uid)
        return;
    if (type == DRA_WATCH_DELETED) {
        pthread_mutex_lock(&f->mu);
        dra_map_del(&f->seen, uid, strlen(uid));
        pthread_mutex_unlock(&f->mu);
        return;
    }
    if (!node || !(idx = dra_map_get(&f->nodes, node, strlen(node))))
        return;
    if (dra_obj_str(pod, "metadata.deletionTimestamp")) {
        if ((j = new_job(f, JOB_DELETE, pod)) != NULL) {
            j->body = final_status(f, pod);
            push_job(f, j);
        }
        return;
    }
    if (phase && (strcmp(phase, "Running") == 0 || strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0))
        return;
    pthread_mutex_lock(&f->mu);
    if (dra_map_get(&f->seen, uid, strlen(uid))) {
        pthread_mutex_unlock(&f->mu);
        return;
    }
    pthread_mutex_unlock(&f->mu);
    if (!(j = new_job(f, JOB_STATUS, pod)) ||
        !(j->body = running_status(f, pod, f->o.first + (size_t)(uintptr_t)idx - 1))) {
        job_free(f, j);
        return;
    }
    pthread_mutex_lock(&f->mu);
    /* The key lives in the job until the job is done; keep our own. */
    if (dra_map_put(&f->seen, dra_arena_strdup(&f->oa, uid), strlen(uid), (void *)1) != DRA_OK) {
        pthread_mutex_unlock(&f->mu);
        job_free(f, j);
        return;
    }
    pthread_mutex_unlock(&f->mu);
    push_job(f, j);
}

static void run_job(dra_fake_nodes *f, job *j)
{
    dra_kstatus st;
    memset(&st, 0, sizeof st);
    if (j->kind == JOB_STATUS) {
        if (dra_cluster_patch(f->c, &DRA_GVR_PODS, j->ns, j->name, "status", DRA_PATCH_MERGE, j->body,
                              strlen(j->body), NULL, NULL, NULL, &st) == DRA_OK)
            atomic_fetch_add(&f->running, 1);
    } else {
        dra_delete_opts o;
        memset(&o, 0, sizeof o);
        o.grace_period_set = 1;
        o.precondition_uid = j->uid;
        /* As the kubelet: the final status (the containers stopped),
         * then the delete that removes the pod. */
        if (j->body)
            dra_cluster_patch(f->c, &DRA_GVR_PODS, j->ns, j->name, "status", DRA_PATCH_MERGE, j->body,
                              strlen(j->body), NULL, NULL, NULL, &st);
        dra_cluster_delete(f->c, &DRA_GVR_PODS, j->ns, j->name, &o, NULL, NULL, &st);
    }
}

static void *writer_main(void *arg)
{
    dra_fake_nodes *f = arg;
    for (;;) {
        job *j;
        pthread_mutex_lock(&f->mu);
        while (!f->head && !f->stop)
            pthread_cond_wait(&f->cv, &f->mu);
        if (f->stop) {
            pthread_mutex_unlock(&f->mu);
            return NULL;
        }
        j = f->head;
        f->head = j->next;
        if (!f->head)
            f->tail = NULL;
        pthread_mutex_unlock(&f->mu);
        run_job(f, j);
        job_free(f, j);
    }
}

/* ---- start and stop ----------------------------------------------------------------- */

static dra_err make_names(dra_fake_nodes *f)
{
    if (!(f->names = dra_arena_array(&f->oa, f->o.count + 1, sizeof *f->names)))
        return DRA_ENOMEM;
    for (size_t i = 0; i < f->o.count; i++) {
        if (!(f->names[i] = dra_arena_sprintf(&f->oa, "%s-%zu", f->prefix, f->o.first + i)) ||
            dra_map_put(&f->nodes, f->names[i], strlen(f->names[i]), (void *)(uintptr_t)(i + 1)))
            return DRA_ENOMEM;
    }
    return DRA_OK;
}

/* Registers every node with |nth| threads at once. */
static dra_err register_all(dra_fake_nodes *f, dra_diag *d)
{
    int started = 0;
    for (; started < f->nth; started++)
        if (pthread_create(&f->th[started], NULL, register_main, f) != 0)
            break;
    if (started == 0)
        register_main(f);
    for (int i = 0; i < started; i++)
        pthread_join(f->th[i], NULL);
    if (atomic_load(&f->failed))
        return dra_diag_add(d, "", 0, 0, "%s", f->fail_msg), DRA_EIO;
    return DRA_OK;
}

dra_err dra_fake_nodes_start(dra_cluster *c, const dra_fake_nodes_opts *opts,
                             const dra_mem *mem, dra_fake_nodes **out,
                             dra_diag *d)
{
    dra_fake_nodes *f;
    dra_reflector_opts ro;
    dra_err e;
    *out = NULL;
    if (!c || !opts || opts->count == 0)
        return dra_diag_add(d, "", 0, 0, "fake nodes need a cluster and a count"), DRA_EINVAL;
    if (!(f = dra_calloc(mem, 1, sizeof *f)))
        return DRA_ENOMEM;
    f->mem = mem;
    f->c = c;
    f->o = *opts;
    dra_arena_init(&f->oa, mem);
    dra_map_init(&f->nodes, mem);
    dra_map_init(&f->seen, mem);
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    f->prefix = dra_arena_strdup(&f->oa, opts->prefix ? opts->prefix : "fake-node");
    f->driver = dra_arena_strdup(&f->oa, opts->driver ? opts->driver : "gpu.nvidia.com");
    f->o.gpus = opts->gpus ? opts->gpus : 8;
    f->nth = opts->writers > 0 ? opts->writers : 8;
    f->th = dra_calloc(mem, (size_t)f->nth, sizeof *f->th);
    if (!f->prefix || !f->driver || !f->th || (e = make_names(f)) != DRA_OK) {
        dra_fake_nodes_stop(f);
        return DRA_ENOMEM;
    }
    if ((e = register_all(f, d)) != DRA_OK) {
        dra_fake_nodes_stop(f);
        return e;
    }
    for (int i = 0; i < f->nth; i++) {
        if (pthread_create(&f->th[i], NULL, writer_main, f) != 0)
            break;
        f->writers++;
    }
    memset(&ro, 0, sizeof ro);
    ro.gvr = DRA_GVR_PODS;
    /* Bound pods only (a pod enters the watch as ADDED when bound): the
     * create and the claim controller's status patch of every pod are
     * not parsed here at all. */
    ro.field_selector = "spec.nodeName!=";
    ro.on_event = fake_on_event;
    ro.ud = f;
    if ((e = dra_reflector_start(c, &ro, &f->refl)) != DRA_OK) {
        dra_fake_nodes_stop(f);
        return e;
    }
    *out = f;
    return DRA_OK;
}

uint64_t dra_fake_nodes_running(const dra_fake_nodes *f)
{
    return atomic_load(&((dra_fake_nodes *)f)->running);
}

void dra_fake_nodes_stop(dra_fake_nodes *f)
{
    if (!f)
        return;
    dra_reflector_stop(f->refl);
    pthread_mutex_lock(&f->mu);
    f->stop = 1;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    for (int i = 0; i < f->writers; i++)
        pthread_join(f->th[i], NULL);
    while (f->head) {
        job *j = f->head;
        f->head = j->next;
        job_free(f, j);
    }
    dra_free(f->mem, f->th);
    dra_map_fini(&f->seen);
    dra_map_fini(&f->nodes);
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
    dra_arena_fini(&f->oa);
    dra_free(f->mem, f);
}
