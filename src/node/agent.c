/*
 * agent.c: the node agent's frame. Registers the Node as the kubelet
 * does (create, or take over an existing one), then runs one loop that
 * heartbeats the node's conditions, rescans the plugin registration
 * directory when inotify (or a one-second tick) says so, and reaps the
 * pod workers that finished. The pods themselves come from a reflector
 * on spec.nodeName (pods.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "node_int.h"

void node_wake(int fd)
{
    uint64_t one = 1;
    if (fd >= 0 && write(fd, &one, sizeof one) < 0 && errno != EAGAIN)
        return;
}

dra_err node_event(dra_node *n, const dra_doc *obj, const char *type, const char *reason, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return dra_cluster_event(n->c, obj, type, reason, "kubelet", n->o.name, "%s", msg);
}

/* ---- the Node object -------------------------------------------------------- */

/* First line of |path| without its newline, or "" . */
static void first_line(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "re");
    buf[0] = '\0';
    if (!f)
        return;
    if (fgets(buf, (int)size, f))
        buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
}

/* PRETTY_NAME from /etc/os-release. */
static void os_image(char *buf, size_t size)
{
    char line[512];
    FILE *f = fopen("/etc/os-release", "re");
    snprintf(buf, size, "Linux");
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "PRETTY_NAME=", 12) == 0) {
            char *v = line + 12;
            v[strcspn(v, "\n")] = '\0';
            if (v[0] == '"') {
                v++;
                v[strcspn(v, "\"")] = '\0';
            }
            node_errf(buf, size, "%s", v);
        }
    }
    if (f)
        fclose(f);
}

static const char *go_arch(const char *machine)
{
    if (strcmp(machine, "x86_64") == 0)
        return "amd64";
    if (strcmp(machine, "aarch64") == 0)
        return "arm64";
    return machine;
}

static int64_t mem_total_kib(void)
{
    char line[256];
    long long kb = 0;
    FILE *f = fopen("/proc/meminfo", "re");
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemTotal: %lld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

/* One of capacity and allocatable in |m|: the figures measured, unless the
 * node's options set them. */
static void resource_list(dra_node *n, dra_arena *a, dra_doc *m, const char *cpu,
                          const char *eph, const char *mem, dra_err *err)
{
    node_set_str(a, m, "cpu", n->o.cpu ? n->o.cpu : cpu, err);
    node_set_str(a, m, "ephemeral-storage", n->o.ephemeral_storage ? n->o.ephemeral_storage : eph, err);
    node_set_str(a, m, "hugepages-1Gi", "0", err);
    node_set_str(a, m, "hugepages-2Mi", "0", err);
    node_set_str(a, m, "memory", n->o.memory ? n->o.memory : mem, err);
    node_set_str(a, m, "pods", n->o.pods ? n->o.pods : "110", err);
}

/* capacity and allocatable: the kubelet subtracts its default hard
 * eviction thresholds (memory.available 100Mi, nodefs.available 10%). */
static void resources(dra_node *n, dra_arena *a, dra_doc *status, dra_err *err)
{
    dra_doc *cap = dra_doc_new_map(a, 6), *alloc = dra_doc_new_map(a, 6);
    char cpu[32], mem[32], eph[32], amem[32], aeph[32];
    struct statvfs sv;
    int64_t kib = mem_total_kib(), disk = 0;
    if (statvfs(n->o.state_dir, &sv) == 0)
        disk = (int64_t)sv.f_blocks * (int64_t)sv.f_frsize / 1024;
    snprintf(cpu, sizeof cpu, "%ld", sysconf(_SC_NPROCESSORS_ONLN));
    snprintf(mem, sizeof mem, "%lldKi", (long long)kib);
    snprintf(amem, sizeof amem, "%lldKi", (long long)(kib > 102400 ? kib - 102400 : kib));
    snprintf(eph, sizeof eph, "%lldKi", (long long)disk);
    snprintf(aeph, sizeof aeph, "%lld", (long long)(disk * 1024 / 10 * 9));
    resource_list(n, a, cap, cpu, eph, mem, err);
    resource_list(n, a, alloc, cpu, aeph, amem, err);
    node_set(a, status, "capacity", cap, err);
    node_set(a, status, "allocatable", alloc, err);
}

static void condition(dra_arena *a, dra_doc *list, const char *type, const char *status, const char *reason,
                      const char *msg, const char *since, const char *now, dra_err *err)
{
    dra_doc *c = dra_doc_new_map(a, 6);
    node_set_str(a, c, "type", type, err);
    node_set_str(a, c, "status", status, err);
    node_set_str(a, c, "lastHeartbeatTime", now, err);
    node_set_str(a, c, "lastTransitionTime", since, err);
    node_set_str(a, c, "reason", reason, err);
    node_set_str(a, c, "message", msg, err);
    node_push(a, list, c, err);
}

/* The kubelet's four conditions; transition times kept from |old|. */
static dra_doc *conditions(dra_node *n, dra_arena *a, const dra_doc *old, dra_err *err)
{
    static const char *const t[4][4] = {
        {"MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
        {"DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
        {"PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
        {"Ready", "True", "KubeletReady", "kubelet is posting ready status"}};
    dra_doc *l = dra_doc_new_list(a, 4);
    char now[48], boot[48];
    node_fmt_time(node_now_ns(), 0, now, sizeof now);
    node_fmt_time(n->boot_ns, 0, boot, sizeof boot);
    for (int i = 0; i < 4; i++) {
        const char *since = boot;
        for (size_t k = 0; old && old->kind == DRA_DOC_LIST && k < old->u.list.n; k++) {
            const dra_doc *c = old->u.list.items[k];
            const char *ty = node_doc_str(c, "type"), *st = node_doc_str(c, "status");
            if (ty && st && strcmp(ty, t[i][0]) == 0 && strcmp(st, t[i][1]) == 0 &&
                node_doc_str(c, "lastTransitionTime"))
                since = node_doc_str(c, "lastTransitionTime");
        }
        condition(a, l, t[i][0], t[i][1], t[i][2], t[i][3], since, now, err);
    }
    return l;
}

static dra_doc *node_info(dra_node *n, dra_arena *a, dra_err *err)
{
    dra_doc *i = dra_doc_new_map(a, 10);
    struct utsname u;
    char machine_id[128], boot_id[128], os[256], uuid[128];
    uname(&u);
    first_line("/etc/machine-id", machine_id, sizeof machine_id);
    first_line("/proc/sys/kernel/random/boot_id", boot_id, sizeof boot_id);
    first_line("/sys/class/dmi/id/product_uuid", uuid, sizeof uuid);
    os_image(os, sizeof os);
    node_set_str(a, i, "machineID", machine_id, err);
    node_set_str(a, i, "systemUUID", uuid[0] ? uuid : machine_id, err);
    node_set_str(a, i, "bootID", boot_id, err);
    node_set_str(a, i, "kernelVersion", u.release, err);
    node_set_str(a, i, "osImage", os, err);
    node_set_str(a, i, "containerRuntimeVersion", "bwrap://0.8.0", err);
    node_set_str(a, i, "kubeletVersion", n->o.kubelet_version, err);
    node_set_str(a, i, "kubeProxyVersion", "", err);
    node_set_str(a, i, "operatingSystem", "linux", err);
    node_set_str(a, i, "architecture", go_arch(u.machine), err);
    return i;
}

static dra_doc *addresses(dra_node *n, dra_arena *a, dra_err *err)
{
    dra_doc *l = dra_doc_new_list(a, 2), *ip = dra_doc_new_map(a, 2), *host = dra_doc_new_map(a, 2);
    node_set_str(a, ip, "type", "InternalIP", err);
    node_set_str(a, ip, "address", n->o.internal_ip, err);
    node_set_str(a, host, "type", "Hostname", err);
    node_set_str(a, host, "address", n->o.name, err);
    node_push(a, l, ip, err);
    node_push(a, l, host, err);
    return l;
}

/* The node's status as this agent reports it. */
static dra_doc *node_status(dra_node *n, dra_arena *a, const dra_doc *old, dra_err *err)
{
    dra_doc *st = dra_doc_new_map(a, 8), *ep = dra_doc_new_map(a, 1), *kl = dra_doc_new_map(a, 1);
    resources(n, a, st, err);
    node_set(a, st, "conditions", conditions(n, a, dra_doc_get(old, "conditions"), err), err);
    node_set(a, st, "addresses", addresses(n, a, err), err);
    node_set(a, kl, "Port", dra_doc_new_int(a, 0), err);
    node_set(a, ep, "kubeletEndpoint", kl, err);
    node_set(a, st, "daemonEndpoints", ep, err);
    node_set(a, st, "nodeInfo", node_info(n, a, err), err);
    return st;
}

/* Our labels on |labels| (a map; created when NULL). */
static dra_doc *labels(dra_node *n, dra_arena *a, const dra_doc *old, dra_err *err)
{
    dra_doc *l = old ? node_doc_copy(a, old) : dra_doc_new_map(a, 8);
    struct utsname u;
    uname(&u);
    node_set_str(a, l, "beta.kubernetes.io/arch", go_arch(u.machine), err);
    node_set_str(a, l, "beta.kubernetes.io/os", "linux", err);
    node_set_str(a, l, "kubernetes.io/arch", go_arch(u.machine), err);
    node_set_str(a, l, "kubernetes.io/hostname", n->o.name, err);
    node_set_str(a, l, "kubernetes.io/os", "linux", err);
    for (size_t i = 0; i < n->o.n_labels; i++) {
        const char *eq = strchr(n->o.labels[i], '=');
        char *k = eq ? dra_arena_strndup(a, n->o.labels[i], (size_t)(eq - n->o.labels[i])) : NULL;
        if (k)
            node_set_str(a, l, k, eq + 1, err);
    }
    return l;
}

static dra_doc *new_node(dra_node *n, dra_arena *a, dra_err *err)
{
    dra_doc *node = dra_doc_new_map(a, 5), *meta = dra_doc_new_map(a, 3), *ann = dra_doc_new_map(a, 2);
    node_set_str(a, node, "apiVersion", "v1", err);
    node_set_str(a, node, "kind", "Node", err);
    node_set_str(a, meta, "name", n->o.name, err);
    node_set(a, meta, "labels", labels(n, a, NULL, err), err);
    node_set_str(a, ann, "volumes.kubernetes.io/controller-managed-attach-detach", "true", err);
    node_set(a, meta, "annotations", ann, err);
    node_set(a, node, "metadata", meta, err);
    node_set(a, node, "spec", dra_doc_new_map(a, 0), err);
    node_set(a, node, "status", node_status(n, a, NULL, err), err);
    return node;
}

/* PUT status over the node's latest version (retried on conflict). */
static dra_err update_status(dra_node *n, dra_diag *d)
{
    dra_err e = DRA_OK;
    for (int attempt = 0; attempt < 5; attempt++) {
        dra_arena a;
        dra_doc *cur = NULL;
        dra_kstatus st;
        dra_err berr = DRA_OK;
        dra_arena_init(&a, n->mem);
        memset(&st, 0, sizeof st);
        e = dra_cluster_get(n->c, &DRA_GVR_NODES, NULL, n->o.name, &a, &cur, &st);
        if (!e) {
            snprintf(n->node_uid, sizeof n->node_uid, "%s", dra_obj_uid(cur) ? dra_obj_uid(cur) : "");
            node_set(&a, cur, "status", node_status(n, &a, dra_doc_get(cur, "status"), &berr), &berr);
            e = berr ? berr : dra_cluster_update(n->c, &DRA_GVR_NODES, NULL, n->o.name, "status", cur, &a, NULL, &st);
        }
        if (e && d && e != DRA_ECONFLICT)
            dra_diag_add(d, "", 0, 0, "node %s: %s", n->o.name, st.message[0] ? st.message : dra_strerror(e));
        dra_arena_fini(&a);
        if (e != DRA_ECONFLICT)
            break;
    }
    return e;
}

/* On a node that exists already, our labels are put right (others'
 * labels stay). Best effort. */
static void reconcile_labels(dra_node *n)
{
    dra_arena a;
    dra_doc *cur = NULL, *meta, *l;
    dra_kstatus st;
    dra_err err = DRA_OK;
    dra_arena_init(&a, n->mem);
    if (dra_cluster_get(n->c, &DRA_GVR_NODES, NULL, n->o.name, &a, &cur, &st) == DRA_OK &&
        (meta = (dra_doc *)dra_doc_get(cur, "metadata")) != NULL) {
        l = labels(n, &a, dra_doc_get(meta, "labels"), &err);
        if (!err && !dra_doc_equal(l, dra_doc_get(meta, "labels"))) {
            node_set(&a, meta, "labels", l, &err);
            if (!err)
                dra_cluster_update(n->c, &DRA_GVR_NODES, NULL, n->o.name, NULL, cur, &a, NULL, &st);
        }
    }
    dra_arena_fini(&a);
}

static dra_err register_node(dra_node *n, dra_diag *d)
{
    dra_arena a;
    dra_doc *node, *out = NULL;
    dra_kstatus st;
    dra_err e = DRA_OK;
    dra_arena_init(&a, n->mem);
    node = new_node(n, &a, &e);
    memset(&st, 0, sizeof st);
    if (!e)
        e = dra_cluster_create(n->c, &DRA_GVR_NODES, NULL, node, &a, &out, &st);
    if (e == DRA_OK) {
        snprintf(n->node_uid, sizeof n->node_uid, "%s", dra_obj_uid(out) ? dra_obj_uid(out) : "");
        /* A server that drops status on create gets it now. */
        e = update_status(n, d);
    } else if (e == DRA_EEXIST) {
        reconcile_labels(n);
        e = update_status(n, d);
    } else {
        dra_diag_add(d, "", 0, 0, "register node %s: %s", n->o.name, st.message[0] ? st.message : dra_strerror(e));
    }
    dra_arena_fini(&a);
    return e;
}

/* ---- the loop ---------------------------------------------------------------- */

static void *loop_main(void *arg)
{
    dra_node *n = arg;
    int ino = node_plugins_init(n);
    int64_t next_beat = node_mono_ms() + n->o.heartbeat_s * 1000;
    node_plugins_scan(n);
    for (;;) {
        struct pollfd p[2] = {{n->wake_fd, POLLIN, 0}, {ino, POLLIN, 0}};
        int stop;
        poll(p, ino >= 0 ? 2 : 1, 1000);
        if (p[0].revents) {
            uint64_t v;
            if (read(n->wake_fd, &v, sizeof v) < 0 && errno != EAGAIN)
                break;
        }
        pthread_mutex_lock(&n->mu);
        stop = n->stop;
        pthread_mutex_unlock(&n->mu);
        if (stop)
            break;
        if (ino >= 0 && p[1].revents)
            node_plugins_on_inotify(n, ino);
        node_plugins_scan(n);
        if (node_mono_ms() >= next_beat) {
            update_status(n, NULL);
            next_beat = node_mono_ms() + n->o.heartbeat_s * 1000;
        }
        node_pods_housekeeping(n);
    }
    if (ino >= 0)
        close(ino);
    return NULL;
}

/* ---- start and stop ------------------------------------------------------------ */

static const char *dup_opt(dra_node *n, const char *s, const char *dflt)
{
    return s ? dra_arena_strdup(&n->oa, s) : dflt;
}

static dra_err copy_opts(dra_node *n, const dra_node_opts *o)
{
    static const char *const cdi_default[] = DRA_NODE_CDI_DEFAULT_DIRS;
    const char *const *dirs = o->cdi_dirs ? o->cdi_dirs : cdi_default;
    size_t nd = o->cdi_dirs ? o->n_cdi_dirs : 2;
    n->o = *o;
    n->o.name = dup_opt(n, o->name, NULL);
    n->o.state_dir = dup_opt(n, o->state_dir, NULL);
    n->o.registrar_dir = dup_opt(n, o->registrar_dir, NULL);
    n->o.internal_ip = dup_opt(n, o->internal_ip, "127.0.0.1");
    n->o.cpu = dup_opt(n, o->cpu, NULL);
    n->o.memory = dup_opt(n, o->memory, NULL);
    n->o.pods = dup_opt(n, o->pods, NULL);
    n->o.ephemeral_storage = dup_opt(n, o->ephemeral_storage, NULL);
    n->o.kubelet_version = dup_opt(n, o->kubelet_version, "v1.35.0");
    n->o.bwrap = dup_opt(n, o->bwrap, NULL);
    n->o.shim = dup_opt(n, o->shim, NULL);
    if (!n->o.heartbeat_s)
        n->o.heartbeat_s = 10;
    if (!n->o.backoff_initial_ms)
        n->o.backoff_initial_ms = 10000;
    if (!n->o.backoff_max_ms)
        n->o.backoff_max_ms = 300000;
    if (!n->o.prepare_timeout_ms)
        n->o.prepare_timeout_ms = 45000;
    n->cdi_dirs = dra_arena_array(&n->oa, nd + 1, sizeof *n->cdi_dirs);
    for (size_t i = 0; n->cdi_dirs && i < nd; i++)
        n->cdi_dirs[i] = dra_arena_strdup(&n->oa, dirs[i]);
    n->n_cdi_dirs = nd;
    n->o.labels = NULL;
    if (o->n_labels && (n->o.labels = dra_arena_array(&n->oa, o->n_labels, sizeof *n->o.labels)) != NULL)
        for (size_t i = 0; i < o->n_labels; i++)
            ((const char **)n->o.labels)[i] = dra_arena_strdup(&n->oa, o->labels[i]);
    n->pods_dir = dra_arena_sprintf(&n->oa, "%s/pods", o->state_dir);
    n->logs_dir = dra_arena_sprintf(&n->oa, "%s/logs", o->state_dir);
    n->claims_path = dra_arena_sprintf(&n->oa, "%s/claims.json", o->state_dir);
    if (!n->o.name || !n->o.state_dir || !n->cdi_dirs || !n->pods_dir || !n->logs_dir || !n->claims_path ||
        (o->n_labels && !n->o.labels))
        return DRA_ENOMEM;
    return DRA_OK;
}

static dra_err make_dirs(dra_node *n, dra_diag *d)
{
    const char *dirs[] = {n->o.state_dir, n->pods_dir, n->logs_dir};
    for (size_t i = 0; i < 3; i++)
        if (node_mkdirs(dirs[i]) != 0)
            return dra_diag_add(d, "", 0, 0, "create %s: %s", dirs[i], strerror(errno)), DRA_EIO;
    return DRA_OK;
}

static dra_err open_runtime(dra_node *n, dra_diag *d)
{
    dra_node_runtime_opts ro;
    char *dir = dra_arena_sprintf(&n->oa, "%s/containers", n->o.state_dir);
    if (!dir)
        return DRA_ENOMEM;
    memset(&ro, 0, sizeof ro);
    ro.state_dir = dir;
    ro.bwrap = n->o.bwrap;
    ro.shim = n->o.shim;
    return dra_node_runtime_new(&ro, n->mem, &n->rt, d);
}

static dra_err start_watch(dra_node *n)
{
    dra_reflector_opts ro;
    char *sel = dra_arena_sprintf(&n->oa, "spec.nodeName=%s", n->o.name);
    if (!sel)
        return DRA_ENOMEM;
    memset(&ro, 0, sizeof ro);
    ro.gvr = DRA_GVR_PODS;
    ro.field_selector = sel;
    ro.on_event = node_pods_on_event;
    ro.on_synced = node_pods_on_synced;
    ro.ud = n;
    return dra_reflector_start(n->c, &ro, &n->refl);
}

dra_err dra_node_start(dra_cluster *c, const dra_node_opts *opts,
                       const dra_mem *mem, dra_node **out, dra_diag *d)
{
    dra_node *n;
    dra_err e;
    *out = NULL;
    if (!c || !opts || !opts->name || !opts->name[0] || !opts->state_dir || !opts->state_dir[0])
        return dra_diag_add(d, "", 0, 0, "the node agent needs a cluster, a node name and a state directory"),
               DRA_EINVAL;
    if (!(n = dra_calloc(mem, 1, sizeof *n)))
        return DRA_ENOMEM;
    n->mem = mem;
    n->c = c;
    n->wake_fd = -1;
    n->shutdown_s = -1;
    n->boot_ns = node_now_ns();
    dra_arena_init(&n->oa, mem);
    dra_map_init(&n->pods, mem);
    dra_map_init(&n->claims, mem);
    pthread_mutex_init(&n->mu, NULL);
    pthread_mutex_init(&n->prep_mu, NULL);
    pthread_cond_init(&n->plugin_cv, NULL);
    if ((e = copy_opts(n, opts)) != DRA_OK || (e = make_dirs(n, d)) != DRA_OK || (e = open_runtime(n, d)) != DRA_OK)
        goto fail;
    dra_map_fini(&n->claims);
    if ((e = node_claims_load(n)) != DRA_OK) {
        dra_diag_add(d, "", 0, 0, "read %s: %s", n->claims_path, strerror(errno));
        goto fail;
    }
    if ((n->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
        e = DRA_EIO;
        goto fail;
    }
    if ((e = register_node(n, d)) != DRA_OK) {
        e = e == DRA_ENOMEM ? e : DRA_EIO;
        goto fail;
    }
    if ((e = start_watch(n)) != DRA_OK)
        goto fail;
    if (pthread_create(&n->loop, NULL, loop_main, n) != 0) {
        e = DRA_EIO;
        goto fail;
    }
    n->loop_started = 1;
    *out = n;
    return DRA_OK;
fail:
    dra_node_stop(n);
    return e;
}

void dra_node_stop(dra_node *n)
{
    if (!n)
        return;
    pthread_mutex_lock(&n->mu);
    n->stop = 1;
    pthread_mutex_unlock(&n->mu);
    node_wake(n->wake_fd);
    if (n->loop_started)
        pthread_join(n->loop, NULL);
    /* No pod events after this: then the workers can be stopped. */
    dra_reflector_stop(n->refl);
    node_pods_stop_all(n);
    node_plugins_fini(n);
    node_claims_fini(n);
    dra_node_runtime_free(n->rt);
    if (n->wake_fd >= 0)
        close(n->wake_fd);
    pthread_cond_destroy(&n->plugin_cv);
    pthread_mutex_destroy(&n->prep_mu);
    pthread_mutex_destroy(&n->mu);
    dra_arena_fini(&n->oa);
    dra_free(n->mem, n);
}

void dra_node_shutdown(dra_node *n, int grace_s)
{
    if (!n)
        return;
    pthread_mutex_lock(&n->mu);
    n->shutdown_s = grace_s < 0 ? 0 : grace_s;
    pthread_mutex_unlock(&n->mu);
    dra_node_stop(n);
}

const char *dra_node_name(const dra_node *n)
{
    return n->o.name;
}

int dra_node_has_plugin(dra_node *n, const char *driver)
{
    node_plugin *p = node_plugin_get(n, driver);
    if (!p)
        return 0;
    node_plugin_put(n, p);
    return 1;
}
