/*
 * plugin/plugin.c: the plugin's life: options and feature gates as
 * NVIDIA's gpu-kubelet-plugin takes them, discovery through module gpu,
 * the plugin directory and CDI root, the CDI environment (hook, fake
 * NVML inventory), checkpoint recovery, then the servers in NVIDIA's
 * order (DRA socket, then registration socket), the health port and the
 * health thread; and the way back down.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin_int.h"

/* ---- feature gates ------------------------------------------------------------- */

typedef struct gate_def {
    const char *name;
    size_t off; /* offset of the int in dra_plugin_gates; SIZE_MAX: accepted, unused */
} gate_def;

#define GATE(n, f) {n, offsetof(dra_plugin_gates, f)}
static const gate_def gate_defs[] = {
    GATE("TimeSlicingSettings", time_slicing_settings),
    GATE("MPSSupport", mps_support),
    GATE("IMEXDaemonsWithDNSNames", imex_daemons_with_dns_names),
    GATE("PassthroughSupport", passthrough_support),
    GATE("NVMLDeviceHealthCheck", nvml_device_health_check),
    GATE("DynamicMIG", dynamic_mig),
    GATE("ComputeDomainCliques", compute_domain_cliques),
    GATE("CrashOnNVLinkFabricErrors", crash_on_nvlink_fabric_errors),
    GATE("DRADeviceTaints", device_taints),
    /* component-base logging gates NVIDIA's binaries also accept */
    {"ContextualLogging", SIZE_MAX},
    {"LoggingAlphaOptions", SIZE_MAX},
    {"LoggingBetaOptions", SIZE_MAX},
    {"AllAlpha", SIZE_MAX},
    {"AllBeta", SIZE_MAX},
};

void dra_plugin_gates_default(dra_plugin_gates *g)
{
    memset(g, 0, sizeof(*g));
    g->imex_daemons_with_dns_names = 1;
    g->compute_domain_cliques = 1;
    g->crash_on_nvlink_fabric_errors = 1;
    g->device_taints = 1;
}

static int parse_bool(const char *s, size_t n, int *out)
{
    static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};
    for (int i = 0; i < 6; i++) {
        if (strlen(t[i]) == n && strncmp(s, t[i], n) == 0)
            return *out = 1, 1;
        if (strlen(f[i]) == n && strncmp(s, f[i], n) == 0)
            return *out = 0, 1;
    }
    return 0;
}

static dra_err set_gate(dra_plugin_gates *g, const char *item, size_t len, dra_diag *d)
{
    const char *eq = memchr(item, '=', len);
    size_t kl = eq ? (size_t)(eq - item) : len;
    while (kl && item[kl - 1] == ' ')
        kl--;
    while (kl && *item == ' ')
        item++, kl--, len--;
    if (!eq) {
        dra_diag_add(d, "", 0, 0, "missing bool value for %.*s", (int)kl, item);
        return DRA_EINVAL;
    }
    const char *v = eq + 1;
    size_t vl = (size_t)(item + len - v);
    while (vl && *v == ' ')
        v++, vl--;
    while (vl && v[vl - 1] == ' ')
        vl--;
    for (size_t i = 0; i < sizeof(gate_defs) / sizeof(gate_defs[0]); i++) {
        if (strlen(gate_defs[i].name) != kl || strncmp(gate_defs[i].name, item, kl) != 0)
            continue;
        int b;
        if (!parse_bool(v, vl, &b)) {
            dra_diag_add(d, "", 0, 0,
                         "invalid value of %.*s=%.*s, err: strconv.ParseBool: parsing "
                         "\"%.*s\": invalid syntax",
                         (int)kl, item, (int)vl, v, (int)vl, v);
            return DRA_EINVAL;
        }
        if (gate_defs[i].off != SIZE_MAX)
            *(int *)((char *)g + gate_defs[i].off) = b;
        return DRA_OK;
    }
    dra_diag_add(d, "", 0, 0, "unrecognized feature gate: %.*s", (int)kl, item);
    return DRA_EINVAL;
}

static dra_err check_gates(const dra_plugin_gates *g, dra_diag *d)
{
    static const struct {
        size_t off;
        const char *name;
    } exclusive[] = {{offsetof(dra_plugin_gates, passthrough_support), "PassthroughSupport"},
                     {offsetof(dra_plugin_gates, nvml_device_health_check),
                      "NVMLDeviceHealthCheck"},
                     {offsetof(dra_plugin_gates, mps_support), "MPSSupport"}};
    if (g->compute_domain_cliques && !g->imex_daemons_with_dns_names) {
        dra_diag_add(d, "", 0, 0, "feature gate validation failed: feature gate "
                                  "ComputeDomainCliques requires IMEXDaemonsWithDNSNames to "
                                  "also be enabled");
        return DRA_EINVAL;
    }
    for (size_t i = 0; i < 3 && g->dynamic_mig; i++)
        if (*(const int *)((const char *)g + exclusive[i].off)) {
            dra_diag_add(d, "", 0, 0, "feature gate validation failed: feature gate "
                                      "DynamicMIG is currently mutually exclusive with %s",
                         exclusive[i].name);
            return DRA_EINVAL;
        }
    return DRA_OK;
}

dra_err dra_plugin_gates_parse(dra_plugin_gates *g, const char *spec, dra_diag *d)
{
    const char *p = spec ? spec : "";
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        size_t k = 0;
        while (k < len && p[k] == ' ')
            k++;
        if (k < len) {
            dra_err e = set_gate(g, p, len, d);
            if (e != DRA_OK)
                return e;
        }
        p += len + (comma ? 1 : 0);
    }
    return check_gates(g, d);
}

/* ---- options ----------------------------------------------------------------------- */

void dra_plugin_opts_default(dra_plugin_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->namespace_ = "default";
    o->cdi_root = "/etc/cdi";
    o->nvidia_driver_root = "/";
    o->registrar_dir = "/var/lib/kubelet/plugins_registry";
    o->plugins_dir = "/var/lib/kubelet/plugins";
    o->healthcheck_port = -1;
    o->healthcheck_host = "";
    o->workers = 4;
    o->max_message = PLUGIN_DEFAULT_MAX_MESSAGE;
    dra_plugin_gates_default(&o->gates);
}

static const char *dup_or(dra_arena *a, const char *s, const char *def)
{
    return dra_arena_strdup(a, s ? s : def);
}

static int is_dir(const char *p)
{
    struct stat st;
    return p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
    struct stat st;
    return p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static dra_err copy_opts(dra_plugin *p, const dra_plugin_opts *in, dra_diag *d)
{
    dra_arena *a = &p->arena;
    p->o = *in;
    if (!in->node_name || !*in->node_name) {
        dra_diag_add(d, "", 0, 0, "Required flag \"node-name\" not set");
        return DRA_EINVAL;
    }
    p->o.node_name = dra_arena_strdup(a, in->node_name);
    p->o.namespace_ = dup_or(a, in->namespace_, "default");
    p->o.cdi_root = dup_or(a, in->cdi_root, "/etc/cdi");
    p->o.nvidia_driver_root = dup_or(a, in->nvidia_driver_root, "/");
    p->o.registrar_dir = dup_or(a, in->registrar_dir, "/var/lib/kubelet/plugins_registry");
    p->o.plugins_dir = dup_or(a, in->plugins_dir, "/var/lib/kubelet/plugins");
    p->o.healthcheck_host = dup_or(a, in->healthcheck_host, "");
    p->o.additional_xids_to_ignore = dup_or(a, in->additional_xids_to_ignore, "");
    p->o.nvidia_cdi_hook_path = dup_or(a, in->nvidia_cdi_hook_path, "");
    if (p->o.workers <= 0)
        p->o.workers = 4;
    if (p->o.max_message == 0)
        p->o.max_message = PLUGIN_DEFAULT_MAX_MESSAGE;
    const char *paths[] = {p->o.cdi_root, p->o.registrar_dir, p->o.plugins_dir,
                           p->o.nvidia_driver_root};
    const char *names[] = {"cdi-root", "kubelet-registrar-directory-path",
                           "kubelet-plugins-directory-path", "nvidia-driver-root"};
    for (int i = 0; i < 4; i++)
        if (paths[i] && paths[i][0] != '/') {
            dra_diag_add(d, "", 0, 0, "--%s must be an absolute path: %s", names[i], paths[i]);
            return DRA_EINVAL;
        }
    if (p->o.healthcheck_port > 65535) {
        dra_diag_add(d, "", 0, 0, "--healthcheck-port out of range: %d",
                     p->o.healthcheck_port);
        return DRA_EINVAL;
    }
    p->host_root = p->o.nvidia_driver_root;
    if (in->container_driver_root && *in->container_driver_root)
        p->local_root = dra_arena_strdup(a, in->container_driver_root);
    else
        p->local_root = is_dir("/driver-root") ? "/driver-root" : p->host_root;
    p->o.container_driver_root = p->local_root;
    return check_gates(&p->o.gates, d);
}

/* ---- devices ---------------------------------------------------------------------- */

/* The devices NVIDIA's driver announces (default mode): full GPUs, and
 * for GPUs in MIG mode their existing MIG devices instead. */
static dra_err build_devs(dra_plugin *p)
{
    const dra_gpu_inventory *inv = p->inv;
    size_t n = 0;
    for (size_t i = 0; i < inv->n_gpus; i++)
        n += inv->gpus[i].mig_enabled ? inv->gpus[i].n_migs : 1;
    p->devs = dra_arena_array(&p->arena, n ? n : 1, sizeof(*p->devs));
    if (!p->devs)
        return DRA_ENOMEM;
    for (size_t i = 0; i < inv->n_gpus; i++) {
        const dra_gpu_device *g = &inv->gpus[i];
        if (!g->mig_enabled) {
            plugin_devstate *d = &p->devs[p->n_devs++];
            d->name = g->name;
            d->kind = PLUGIN_DEV_GPU;
            d->gpu = g;
            continue;
        }
        for (size_t j = 0; j < g->n_migs; j++) {
            plugin_devstate *d = &p->devs[p->n_devs++];
            d->name = g->migs[j].name;
            d->kind = PLUGIN_DEV_MIG;
            d->gpu = g;
            d->mig = &g->migs[j];
        }
    }
    return DRA_OK;
}

plugin_devstate *plugin_dev_find(dra_plugin *p, const char *name)
{
    for (size_t i = 0; i < p->n_devs; i++)
        if (strcmp(p->devs[i].name, name) == 0)
            return &p->devs[i];
    return NULL;
}

/* ---- directories and the CDI environment -------------------------------------- */

static const char *read_boot_id(dra_arena *a)
{
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    char buf[64] = "";
    if (f) {
        if (!fgets(buf, sizeof(buf), f))
            buf[0] = '\0';
        fclose(f);
    }
    buf[strcspn(buf, "\n")] = '\0';
    return buf[0] ? dra_arena_strdup(a, buf) : NULL;
}

/* nvidia-cdi-hook: the flag's host path; else one installed in the
 * driver root; else NVIDIA's own copy next to the plugin (its image
 * ships one in /usr/bin); else none, and the spec has no hooks. */
static const char *find_hook(dra_plugin *p, const char *flag)
{
    dra_arena *a = &p->arena;
    if (flag && *flag)
        return dra_arena_strdup(a, flag);
    const char *rel = "/usr/bin/nvidia-cdi-hook";
    const char *local = dra_arena_sprintf(a, "%s%s", strcmp(p->local_root, "/") ? p->local_root : "",
                                          rel);
    if (is_file(local))
        return dra_arena_sprintf(a, "%s%s", strcmp(p->host_root, "/") ? p->host_root : "", rel);
    const char *copy = dra_arena_sprintf(a, "%s/nvidia-cdi-hook", p->plugin_dir);
    if (is_file(rel) && copy) {
        dra_buf b;
        dra_buf_init(&b, p->mem);
        dra_err e = plugin_read_file(rel, p->mem, &b, (size_t)256 << 20, NULL);
        if (e == DRA_OK)
            e = plugin_write_atomic(p->plugin_dir, "nvidia-cdi-hook", b.p ? b.p : "", b.len,
                                    0755, PLUGIN_SYNC_ALL, NULL);
        dra_buf_fini(&b);
        if (e == DRA_OK)
            return copy;
    }
    return NULL;
}

static dra_err make_dirs(dra_plugin *p, dra_diag *d)
{
    dra_arena *a = &p->arena;
    p->plugin_dir = dra_arena_sprintf(a, "%s/%s", p->o.plugins_dir, DRA_PLUGIN_DRIVER);
    p->dra_sock = dra_arena_sprintf(a, "%s/dra.sock", p->plugin_dir);
    p->reg_sock = dra_arena_sprintf(a, "%s/%s-reg.sock", p->o.registrar_dir, DRA_PLUGIN_DRIVER);
    p->cp_lock = dra_arena_sprintf(a, "%s/cp.lock", p->plugin_dir);
    if (!p->plugin_dir || !p->dra_sock || !p->reg_sock || !p->cp_lock)
        return DRA_ENOMEM;
    dra_err e = plugin_mkdirs(p->plugin_dir, 0700, d);
    if (e == DRA_OK)
        e = plugin_mkdirs(p->o.cdi_root, 0750, d);
    if (e == DRA_OK)
        e = plugin_mkdirs(p->o.registrar_dir, 0700, d);
    return e;
}

static void cdi_env(dra_plugin *p, const char *hook_flag)
{
    const dra_gpu_files *f = &p->inv->files;
    p->cdi.inv = p->inv;
    p->cdi.host_driver_root = p->host_root;
    p->cdi.hook_path = find_hook(p, hook_flag);
    /* A fake NVML in a container finds its node's inventory in the
     * /dev/nvidiactl it is given (module gpu lays it out that way), so
     * the spec needs no host path of the driver root in an environment
     * variable: containers have a private /tmp, where that path may be. */
    for (size_t i = 0; i < f->n_binaries; i++) {
        const char *b = strrchr(f->binaries[i].path, '/');
        if (b && strcmp(b + 1, "nvidia-cuda-mps-control") == 0)
            p->mps_control = f->binaries[i].local_path;
    }
}

/* ---- lifecycle ---------------------------------------------------------------------- */

static void plugin_destroy(dra_plugin *p)
{
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->cp_mu);
    pthread_mutex_destroy(&p->pub_mu);
    pthread_cond_destroy(&p->cond);
    pthread_cond_destroy(&p->pub_cond);
    dra_free(p->mem, p->busy);
    if (p->gpu)
        dra_gpu_close(p->gpu);
    dra_arena_fini(&p->arena);
    dra_free(p->mem, p);
}

dra_err plugin_new_with_inventory(const dra_plugin_opts *opts, const dra_gpu_inventory *inv,
                                  const dra_mem *mem, dra_plugin **out, dra_diag *d)
{
    *out = NULL;
    dra_plugin *p = dra_calloc(mem, 1, sizeof(*p));
    if (!p)
        return DRA_ENOMEM;
    p->mem = mem;
    dra_arena_init(&p->arena, mem);
    pthread_mutex_init(&p->mu, NULL);
    pthread_mutex_init(&p->cp_mu, NULL);
    pthread_mutex_init(&p->pub_mu, NULL);
    pthread_cond_init(&p->cond, NULL);
    pthread_cond_init(&p->pub_cond, NULL);
    atomic_init(&p->stopping, 0);
    p->health_port = -1;
    p->checkpoint_sync = 1;
    p->inv = inv;
    dra_err e = copy_opts(p, opts, d);
    if (e == DRA_OK)
        e = make_dirs(p, d);
    if (e == DRA_OK)
        e = build_devs(p);
    if (e == DRA_OK) {
        p->boot_id = read_boot_id(&p->arena);
        cdi_env(p, p->o.nvidia_cdi_hook_path);
        e = plugin_recover(p, d);
    }
    if (e != DRA_OK) {
        plugin_destroy(p);
        return e;
    }
    *out = p;
    return DRA_OK;
}

dra_err dra_plugin_new(const dra_plugin_opts *opts, const dra_mem *mem, dra_plugin **out,
                       dra_diag *d)
{
    *out = NULL;
    dra_plugin tmp;
    memset(&tmp, 0, sizeof(tmp));
    dra_arena_init(&tmp.arena, mem);
    dra_err e = copy_opts(&tmp, opts, d);
    dra_gpu *g = NULL;
    if (e == DRA_OK) {
        dra_gpu_opts go = {tmp.local_root, tmp.host_root, NULL, mem};
        e = dra_gpu_open(&go, &g, d);
    }
    dra_arena_fini(&tmp.arena);
    if (e != DRA_OK)
        return e;
    /* The inventory lives in the plugin's arena: discover into a
     * holder that becomes part of the plugin. */
    dra_arena *inv_arena = dra_calloc(mem, 1, sizeof(*inv_arena));
    if (!inv_arena) {
        dra_gpu_close(g);
        return DRA_ENOMEM;
    }
    dra_arena_init(inv_arena, mem);
    dra_gpu_inventory *inv;
    e = dra_gpu_discover(g, inv_arena, &inv, d);
    if (e == DRA_OK)
        e = plugin_new_with_inventory(opts, inv, mem, out, d);
    if (e != DRA_OK) {
        dra_arena_fini(inv_arena);
        dra_free(mem, inv_arena);
        dra_gpu_close(g);
        return e;
    }
    (*out)->gpu = g;
    (*out)->inv_arena = inv_arena;
    return DRA_OK;
}

/* A socket path that is free to bind: a stale socket is removed; any
 * other file there is an error. */
static dra_err free_socket(const char *path, dra_diag *d)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return DRA_OK;
    if (!S_ISSOCK(st.st_mode)) {
        dra_diag_add(d, "", 0, 0, "%s exists and is not a socket", path);
        return DRA_EIO;
    }
    if (unlink(path) != 0) {
        dra_diag_add(d, "", 0, 0, "cannot remove stale socket %s: %s", path, strerror(errno));
        return DRA_EIO;
    }
    return DRA_OK;
}

static dra_err serve_unix(dra_plugin *p, const char *path, plugin_rpc_handler h,
                          int workers, plugin_server **out, dra_diag *d)
{
    char addr[4200], err[512];
    dra_err e = free_socket(path, d);
    if (e != DRA_OK)
        return e;
    snprintf(addr, sizeof(addr), "unix:%s", path);
    plugin_server_opts so = {addr, workers, p->o.max_message, h, p, p->mem};
    e = plugin_server_start(&so, out, err, sizeof(err));
    if (e != DRA_OK) {
        dra_diag_add(d, "", 0, 0, "listen on %s: %s", path, err);
        return e;
    }
    chmod(path, 0600);
    return DRA_OK;
}

dra_err dra_plugin_start(dra_plugin *p, dra_diag *d)
{
    dra_err e = plugin_publisher_start(p, d);
    if (e == DRA_OK)
        e = serve_unix(p, p->dra_sock, plugin_handle_dra, p->o.workers, &p->dra_srv, d);
    if (e == DRA_OK)
        e = serve_unix(p, p->reg_sock, plugin_handle_reg, 1, &p->reg_srv, d);
    if (e == DRA_OK && p->o.healthcheck_port >= 0) {
        char addr[300], err[512];
        snprintf(addr, sizeof(addr), "%s:%d",
                 *p->o.healthcheck_host ? p->o.healthcheck_host : "0.0.0.0",
                 p->o.healthcheck_port);
        plugin_server_opts so = {addr, 1, 4096, plugin_handle_health, p, p->mem};
        e = plugin_server_start(&so, &p->health_srv, err, sizeof(err));
        if (e != DRA_OK)
            dra_diag_add(d, "", 0, 0, "failed to listen for healthcheck service at %s: %s",
                         addr, err);
        else
            p->health_port = plugin_server_port(p->health_srv);
    }
    if (e == DRA_OK && p->o.gates.nvml_device_health_check)
        e = plugin_health_start(p, d);
    if (e != DRA_OK)
        dra_plugin_stop(p);
    return e;
}

void dra_plugin_stop(dra_plugin *p)
{
    if (!p)
        return;
    atomic_store(&p->stopping, 1);
    plugin_health_stop(p);
    plugin_publisher_stop(p);
    /* Registration first: the kubelet stops calling before the DRA
     * socket goes away. */
    plugin_server_stop(p->reg_srv);
    plugin_server_stop(p->health_srv);
    plugin_server_stop(p->dra_srv);
    p->reg_srv = p->health_srv = p->dra_srv = NULL;
    if (p->reg_sock)
        unlink(p->reg_sock);
    if (p->dra_sock)
        unlink(p->dra_sock);
    p->health_port = -1;
}

int dra_plugin_healthcheck_port(const dra_plugin *p)
{
    return p ? p->health_port : -1;
}

void dra_plugin_free(dra_plugin *p)
{
    if (!p)
        return;
    dra_plugin_stop(p);
    dra_arena *inv_arena = p->inv_arena;
    const dra_mem *mem = p->mem;
    plugin_destroy(p);
    if (inv_arena) {
        dra_arena_fini(inv_arena);
        dra_free(mem, inv_arena);
    }
}
