/*
 * nodes.c: drad's simulated nodes. At start it installs the chart's
 * DeviceClasses (create or update, as Helm would), then for each node of
 * the inventory (default: the seed's two GB200 nodes on the fake NVML)
 * lays out a fake NVIDIA driver root in the data directory, starts a node
 * agent (src/node: the kubelet's part) and a dra-gpu-plugin child process
 * that talks to drad over HTTP/2 (the port of DIR/kubeconfig-h2) and to the agent
 * over gRPC sockets in the node's kubelet directories, exactly as in a
 * real cluster; and returns once each node is Ready with its slice
 * published and its plugin registered. Also --real-gpus (the local node
 * on the real driver root) and --fake-nodes (KWOK-style nodes).
 *
 * Layout, per node, under <data>/nodes/<node>/:
 *   containers/ logs/ pods/ claims.json   the agent's state
 *   kubelet/plugins_registry/             registration sockets
 *   kubelet/plugins/gpu.nvidia.com/       dra.sock, checkpoint.json
 *   cdi/                                  CDI specs the plugin writes
 *   driver-root/                          the fake NVIDIA driver
 *   plugin.log, plugin.pid                the plugin child
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "children.h"
#include "dra/gpu.h"
#include "dra/node.h"
#include "dra/plugin.h"
#include "drad.h"

#define READY_TIMEOUT_MS 60000
#define PLUGIN_GRACE_MS 10000
/* Containers get at most this long to end when drad stops. */
#define SHUTDOWN_GRACE_S 2

#ifndef DRAD_SHARE_DIR
#define DRAD_SHARE_DIR "/usr/share/dra"
#endif
#ifndef DRAD_DEPLOY_DIR
#define DRAD_DEPLOY_DIR "/usr/share/dra/deploy"
#endif
#ifndef DRAD_GPU_PLUGIN
#define DRAD_GPU_PLUGIN "dra-gpu-plugin"
#endif
#ifndef DRAD_FAKE_NVML
#define DRAD_FAKE_NVML "/usr/lib/dra/fake-gpu/libnvidia-ml.so.1"
#endif
#ifndef DRAD_FAKE_SMI
#define DRAD_FAKE_SMI "/usr/lib/dra/fake-gpu/nvidia-smi"
#endif

/* ---- flags ---------------------------------------------------------------- */

int drad_node_flag(drad_node_flags *f, int argc, char **argv, int i)
{
    const char *a = argv[i], *v = NULL;
    int took = 1;
    char *end;
    if (!strcmp(a, "--real-gpus")) {
        f->real_gpus = 1;
        return 1;
    }
    if (!strcmp(a, "--nodes") || !strcmp(a, "--fake-nodes")) {
        if (i + 1 >= argc)
            return fprintf(stderr, "drad: %s needs a value\n", a), -1;
        v = argv[i + 1];
        took = 2;
    } else if (!strncmp(a, "--nodes=", 8)) {
        v = a + 8;
    } else if (!strncmp(a, "--fake-nodes=", 13)) {
        v = a + 13;
    } else {
        return 0;
    }
    if (a[2] == 'n') {
        if (!*v)
            return fprintf(stderr, "drad: --nodes wants a file or none\n"), -1;
        f->nodes = v;
        return took;
    }
    errno = 0;
    f->fake_nodes = strtol(v, &end, 10);
    if (errno || *end || end == v || f->fake_nodes < 0 || f->fake_nodes > 1000000)
        return fprintf(stderr, "drad: --fake-nodes wants a number from 0 to 1000000, not %s\n", v), -1;
    return took;
}

void drad_node_flags_usage(FILE *out)
{
    fputs("  --nodes FILE       simulated GPU nodes from a fake-GPU inventory (docs/gpu.md);\n"
          "                     default: the seed's gb200-pod2-f06-node05 and -node06;\n"
          "                     none: the API server and controllers only\n"
          "  --real-gpus        also run this machine as a node on its NVIDIA driver (/)\n"
          "  --fake-nodes N     N more nodes that run nothing (KWOK-style), 8 GB200 each\n",
          out);
}

static int flags_none(const drad_node_flags *f)
{
    return f->nodes && !strcmp(f->nodes, "none");
}

int drad_node_flags_any(const drad_node_flags *f)
{
    return !flags_none(f) || f->real_gpus || f->fake_nodes > 0;
}

/* ---- the pieces' files ------------------------------------------------------ */

typedef struct paths {
    char exe_dir[PATH_MAX];
    char inventory[PATH_MAX];
    char plugin[PATH_MAX];
    char fake_nvml[PATH_MAX];
    char fake_smi[PATH_MAX];
    char deploy[PATH_MAX];
} paths;

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* $ENV when set; else |rel| next to drad (an installed layout); else
 * where the build put it. */
static void find(char *out, const char *env, const char *exe_dir, const char *rel, const char *built,
                 int want_dir)
{
    const char *e = env ? getenv(env) : NULL;
    char p[PATH_MAX];
    if (e && *e) {
        snprintf(out, PATH_MAX, "%s", e);
        return;
    }
    if ((size_t)snprintf(p, sizeof p, "%s/%s", exe_dir, rel) < sizeof p && (want_dir ? is_dir(p) : is_file(p))) {
        snprintf(out, PATH_MAX, "%s", p);
        return;
    }
    snprintf(out, PATH_MAX, "%s", built);
}

static void find_paths(paths *p)
{
    ssize_t n = readlink("/proc/self/exe", p->exe_dir, sizeof p->exe_dir - 1);
    char *slash;
    p->exe_dir[n > 0 ? n : 0] = '\0';
    if ((slash = strrchr(p->exe_dir, '/')) != NULL)
        *slash = '\0';
    find(p->plugin, "DRA_GPU_PLUGIN", p->exe_dir, "dra-gpu-plugin", DRAD_GPU_PLUGIN, 0);
    find(p->fake_nvml, "DRA_FAKE_NVML", p->exe_dir, "../lib/dra/fake-gpu/libnvidia-ml.so.1", DRAD_FAKE_NVML, 0);
    find(p->fake_smi, "DRA_FAKE_SMI", p->exe_dir, "../lib/dra/fake-gpu/nvidia-smi", DRAD_FAKE_SMI, 0);
    find(p->inventory, NULL, p->exe_dir, "../share/dra/nodes-gb200.yaml", DRAD_SHARE_DIR "/nodes-gb200.yaml", 0);
    find(p->deploy, NULL, p->exe_dir, "../share/dra/deploy", DRAD_DEPLOY_DIR, 1);
}

static int read_text(dra_arena *a, const char *path, char **out, size_t *len)
{
    FILE *f = fopen(path, "re");
    long n;
    if (!f)
        return -1;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || n > (1 << 24) || fseek(f, 0, SEEK_SET) != 0 ||
        !(*out = dra_arena_alloc(a, (size_t)n + 1)) || fread(*out, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        return -1;
    }
    (*out)[n] = '\0';
    *len = (size_t)n;
    fclose(f);
    return 0;
}

/* Adds "|what|: <first message of |inner|>" to |d|: main prints the
 * first message only, so the context leads. */
static void say_with(dra_diag *d, dra_diag *inner, dra_err e, const char *what)
{
    const char *m = dra_diag_first(inner);
    dra_diag_add(d, "", 0, 0, "%s: %s", what, m ? m : dra_strerror(e));
}

/* ---- DeviceClasses ------------------------------------------------------------- */

/* The chart's classes: created, or updated when their spec (or labels
 * and annotations) differ from the chart's, as helm upgrade does. */
static dra_err install_class(dra_cluster *c, dra_arena *a, dra_doc *want, dra_diag *d)
{
    const char *name = dra_obj_name(want);
    dra_doc *cur = NULL, *meta;
    dra_kstatus st;
    dra_err e;
    memset(&st, 0, sizeof st);
    e = dra_cluster_get(c, &DRA_GVR_CLASSES, NULL, name, a, &cur, &st);
    if (e == DRA_ENOTFOUND)
        e = dra_cluster_create(c, &DRA_GVR_CLASSES, NULL, want, a, NULL, &st);
    else if (e == DRA_OK && (meta = (dra_doc *)dra_doc_get(cur, "metadata")) != NULL) {
        static const char *const keys[] = {"labels", "annotations"};
        int same = dra_doc_equal(dra_doc_get(cur, "spec"), dra_doc_get(want, "spec"));
        for (int i = 0; i < 2; i++) {
            const dra_doc *w = dra_doc_get(dra_doc_get(want, "metadata"), keys[i]);
            if (w && !dra_doc_equal(w, dra_doc_get(meta, keys[i]))) {
                same = 0;
                dra_doc_map_set(a, meta, keys[i], (dra_doc *)w);
            }
        }
        if (!same && (e = dra_doc_map_set(a, cur, "spec", (dra_doc *)dra_doc_get(want, "spec"))) == DRA_OK)
            e = dra_cluster_update(c, &DRA_GVR_CLASSES, NULL, name, NULL, cur, a, NULL, &st);
    }
    if (e)
        dra_diag_add(d, "", 0, 0, "DeviceClass %s: %s", name ? name : "?",
                     st.message[0] ? st.message : dra_strerror(e));
    return e;
}

static dra_err install_classes(dra_cluster *c, const char *deploy, dra_diag *d)
{
    static const char *const files[] = {"deviceclass-gpu.yaml", "deviceclass-mig.yaml",
                                        "deviceclass-vfio-gpu.yaml"};
    dra_err e = DRA_OK;
    for (size_t i = 0; i < sizeof files / sizeof *files && !e; i++) {
        dra_arena a;
        char path[PATH_MAX + 64], *text;
        dra_doc **docs;
        size_t len, n = 0;
        dra_arena_init(&a, NULL);
        snprintf(path, sizeof path, "%s/%s", deploy, files[i]);
        if (read_text(&a, path, &text, &len) != 0) {
            dra_diag_add(d, "", 0, 0, "the chart's DeviceClasses: cannot read %s: %s", path, strerror(errno));
            e = DRA_EIO;
        } else if ((e = dra_doc_parse_yaml(&a, text, len, &docs, &n, NULL)) != DRA_OK) {
            dra_diag_add(d, "", 0, 0, "the chart's DeviceClasses: %s does not parse", path);
        } else {
            for (size_t k = 0; k < n && !e; k++)
                if (dra_obj_name(docs[k]))
                    e = install_class(c, &a, docs[k], d);
        }
        dra_arena_fini(&a);
    }
    return e;
}

/* ---- one node ---------------------------------------------------------------------- */

typedef struct node_slot {
    char name[256];
    char dir[PATH_MAX];
    char reg[PATH_MAX], plugins[PATH_MAX], cdi[PATH_MAX], root[PATH_MAX];
    char log[PATH_MAX], pid[PATH_MAX];
    const char *cdi_dirs[1];
    int real; /* the real driver root (/) */
    dra_node *agent;
    drad_child *plugin;
} node_slot;

struct drad_nodes {
    const drad_ctx *ctx;
    paths p;
    char data[PATH_MAX];
    dra_cluster *cluster;
    dra_node_group *group;
    node_slot *slots;
    size_t n;
    dra_fake_nodes *fake;
};

static int mkdirs(const char *path)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST)
            return -1;
        *s = '/';
    }
    return mkdir(p, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* snprintf into a PATH_MAX buffer; -1 when it does not fit. */
static int path_fmt(char *buf, const char *fmt, ...) DRA_PRINTF(2, 3);
static int path_fmt(char *buf, const char *fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(buf, PATH_MAX, fmt, ap);
    va_end(ap);
    return n < 0 || n >= PATH_MAX ? -1 : 0;
}

/* The longest socket path under |kubelet| (the registration socket). */
static int sockets_fit(const char *kubelet)
{
    struct sockaddr_un sun;
    char sock[PATH_MAX];
    return path_fmt(sock, "%s/plugins_registry/%s-reg.sock", kubelet, DRA_PLUGIN_DRIVER) == 0 &&
           strlen(sock) < sizeof sun.sun_path;
}

/* A short directory for node |i|'s kubelet directories when the data
 * directory's path is too long for unix socket addresses (108 bytes):
 * $XDG_RUNTIME_DIR (else /tmp) /dra-<hash of the data dir>/<i>, ours and
 * 0700 (a directory someone else made there is refused); the node's
 * kubelet directory in the data directory becomes a link to it. The
 * sockets are made anew at every start; the plugin's checkpoint lives
 * there too and, like a kubelet's, does not outlive a reboot anyway. */
static dra_err short_kubelet(drad_nodes *ns, node_slot *s, size_t i, char *out, dra_diag *d)
{
    const char *base = getenv("XDG_RUNTIME_DIR");
    char top[PATH_MAX], link[PATH_MAX], cur[PATH_MAX];
    struct stat st;
    uint32_t h = 2166136261u;
    ssize_t n;
    for (const char *p = ns->data; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    if (!base || !*base || !is_dir(base) || strlen(base) > 40)
        base = "/tmp";
    if (path_fmt(top, "%s/dra-%08x", base, (unsigned)h) || path_fmt(out, "%s/%zu", top, i) ||
        path_fmt(link, "%s/kubelet", s->dir))
        return DRA_EINVAL;
    if (mkdir(top, 0700) != 0 && errno != EEXIST)
        return dra_diag_add(d, "", 0, 0, "create %s: %s", top, strerror(errno)), DRA_EIO;
    if (lstat(top, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
        return dra_diag_add(d, "", 0, 0, "%s is not a private directory of this user: remove it, or use a "
                            "shorter --data-dir", top), DRA_EIO;
    if (mkdir(out, 0700) != 0 && errno != EEXIST)
        return dra_diag_add(d, "", 0, 0, "create %s: %s", out, strerror(errno)), DRA_EIO;
    n = readlink(link, cur, sizeof cur - 1);
    if (n >= 0 && (size_t)n == strlen(out) && !strncmp(cur, out, (size_t)n))
        return DRA_OK;
    unlink(link); /* a stale link (a real directory stays and fails below) */
    if (symlink(out, link) != 0)
        return dra_diag_add(d, "", 0, 0, "link %s to %s: %s", link, out, strerror(errno)), DRA_EIO;
    return DRA_OK;
}

static dra_err slot_dirs(drad_nodes *ns, node_slot *s, size_t i, dra_diag *d)
{
    char kubelet[PATH_MAX];
    const char *dirs[4];
    dra_err e;
    int bad = path_fmt(s->dir, "%s/nodes/%s", ns->data, s->name);
    bad |= path_fmt(kubelet, "%s/kubelet", s->dir);
    bad |= path_fmt(s->cdi, "%s/cdi", s->dir);
    bad |= s->real ? path_fmt(s->root, "/") : path_fmt(s->root, "%s/driver-root", s->dir);
    bad |= path_fmt(s->log, "%s/plugin.log", s->dir);
    bad |= path_fmt(s->pid, "%s/plugin.pid", s->dir);
    if (bad)
        return dra_diag_add(d, "", 0, 0, "node %s: the data directory's path is too long", s->name), DRA_EINVAL;
    s->cdi_dirs[0] = s->cdi;
    if (mkdirs(s->dir) != 0)
        return dra_diag_add(d, "", 0, 0, "create %s: %s", s->dir, strerror(errno)), DRA_EIO;
    if (!sockets_fit(kubelet) && (e = short_kubelet(ns, s, i, kubelet, d)) != DRA_OK)
        return e;
    if (path_fmt(s->reg, "%s/plugins_registry", kubelet) || path_fmt(s->plugins, "%s/plugins", kubelet) ||
        !sockets_fit(kubelet))
        return dra_diag_add(d, "", 0, 0, "node %s: no socket path under %s fits a unix socket address",
                            s->name, kubelet), DRA_EINVAL;
    dirs[0] = s->reg;
    dirs[1] = s->plugins;
    dirs[2] = s->cdi;
    dirs[3] = s->root;
    for (int k = 0; k < 4; k++)
        if (!(s->real && k == 3) && mkdirs(dirs[k]) != 0)
            return dra_diag_add(d, "", 0, 0, "create %s: %s", dirs[k], strerror(errno)), DRA_EIO;
    return DRA_OK;
}

static dra_err slot_driver_root(drad_nodes *ns, node_slot *s, const char *inventory, dra_diag *d)
{
    dra_gpu_fake_root_opts fo;
    dra_diag inner;
    char what[PATH_MAX + 300];
    dra_err e;
    memset(&fo, 0, sizeof fo);
    fo.inventory = inventory;
    fo.node = s->name;
    fo.root = s->root;
    fo.fake_nvml = ns->p.fake_nvml;
    fo.fake_smi = ns->p.fake_smi;
    dra_diag_init(&inner, NULL);
    if ((e = dra_gpu_fake_root(&fo, &inner)) != DRA_OK) {
        snprintf(what, sizeof what, "node %s: laying out the fake driver root %s", s->name, s->root);
        say_with(d, &inner, e, what);
    }
    dra_diag_fini(&inner);
    return e;
}

static dra_err slot_agent(drad_nodes *ns, node_slot *s, dra_diag *d)
{
    dra_node_opts o;
    dra_err e;
    memset(&o, 0, sizeof o);
    o.name = s->name;
    o.state_dir = s->dir;
    o.registrar_dir = s->reg;
    o.cdi_dirs = s->cdi_dirs;
    o.n_cdi_dirs = 1;
    if ((e = dra_node_start(ns->cluster, &o, NULL, &s->agent, d)) != DRA_OK)
        return e;
    return dra_node_group_add(ns->group, s->agent);
}

static dra_err slot_plugin(drad_nodes *ns, node_slot *s, dra_diag *d)
{
    const char *argv[] = {ns->p.plugin,
                          "--node-name", s->name,
                          "--kubeconfig", ns->ctx->kubeconfig_h2,
                          "--cdi-root", s->cdi,
                          "--nvidia-driver-root", s->root,
                          "--container-driver-root", s->root,
                          "--kubelet-registrar-directory-path", s->reg,
                          "--kubelet-plugins-directory-path", s->plugins,
                          "--healthcheck-port", "-1",
                          NULL};
    char name[400];
    drad_child_opts o;
    if (access(ns->p.plugin, X_OK) != 0)
        return dra_diag_add(d, "", 0, 0, "%s is not an executable (build dra-gpu-plugin, or set $DRA_GPU_PLUGIN)",
                            ns->p.plugin),
               DRA_EINVAL;
    snprintf(name, sizeof name, "dra-gpu-plugin for %s", s->name);
    memset(&o, 0, sizeof o);
    o.name = name;
    o.argv = argv;
    o.log_path = s->log;
    o.pid_path = s->pid;
    return drad_child_start(&o, &s->plugin, d);
}

/* Whether |s|'s slice is in the API server (published by its plugin). */
static int slice_published(drad_nodes *ns, const node_slot *s)
{
    dra_arena a;
    dra_doc *list = NULL;
    dra_list_opts lo;
    char sel[400];
    int found = 0;
    memset(&lo, 0, sizeof lo);
    snprintf(sel, sizeof sel, "spec.nodeName=%s,spec.driver=%s", s->name, DRA_PLUGIN_DRIVER);
    lo.field_selector = sel;
    dra_arena_init(&a, NULL);
    if (dra_cluster_list(ns->cluster, &DRA_GVR_SLICES, NULL, &lo, &a, &list, NULL) == DRA_OK) {
        const dra_doc *items = dra_doc_get(list, "items");
        found = items && items->kind == DRA_DOC_LIST && items->u.list.n > 0;
    }
    dra_arena_fini(&a);
    return found;
}

/* The last line of the plugin's log, for a message. */
static void last_line(const char *path, char *buf, size_t size)
{
    char line[512];
    FILE *f = fopen(path, "re");
    buf[0] = '\0';
    while (f && fgets(line, sizeof line, f))
        if (line[0] != '\n')
            snprintf(buf, size, "%s", line);
    if (f)
        fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Ready: every plugin registered with its agent and its slice there. */
static dra_err wait_ready(drad_nodes *ns, dra_diag *d)
{
    int64_t deadline = mono_ms() + READY_TIMEOUT_MS;
    for (size_t i = 0; i < ns->n; i++) {
        node_slot *s = &ns->slots[i];
        while (!dra_node_has_plugin(s->agent, DRA_PLUGIN_DRIVER) || !slice_published(ns, s)) {
            char last[512];
            if (mono_ms() < deadline) {
                usleep(10000);
                continue;
            }
            last_line(s->log, last, sizeof last);
            dra_diag_add(d, "", 0, 0,
                         "node %s: dra-gpu-plugin did not %s within %d s (restarted %u times; %s%s%s)", s->name,
                         dra_node_has_plugin(s->agent, DRA_PLUGIN_DRIVER) ? "publish its ResourceSlice"
                                                                           : "register with the node agent",
                         READY_TIMEOUT_MS / 1000, drad_child_restarts(s->plugin), s->log, last[0] ? ": " : "",
                         last);
            return DRA_ETIMEOUT;
        }
    }
    return DRA_OK;
}

/* ---- the inventory --------------------------------------------------------------- */

/* The local node's name for --real-gpus: the host name, lower case, as
 * the kubelet registers it. */
static void host_node_name(char *buf, size_t size)
{
    if (gethostname(buf, size) != 0 || !buf[0])
        snprintf(buf, size, "localhost");
    buf[size - 1] = '\0';
    for (char *p = buf; *p; p++)
        *p = (char)tolower((unsigned char)*p);
}

/* The real driver must answer NVML before anything starts: a machine
 * without it fails here, clearly. */
static dra_err check_real_gpus(dra_diag *d)
{
    dra_gpu_opts o;
    dra_gpu *g = NULL;
    dra_gpu_inventory *inv = NULL;
    dra_diag inner;
    dra_arena a;
    dra_err e;
    memset(&o, 0, sizeof o);
    o.driver_root = "/";
    dra_diag_init(&inner, NULL);
    if ((e = dra_gpu_open(&o, &g, &inner)) == DRA_OK) {
        dra_arena_init(&a, NULL);
        e = dra_gpu_discover(g, &a, &inv, &inner);
        if (e == DRA_OK && inv->n_gpus == 0) {
            dra_diag_add(&inner, "", 0, 0, "NVML answered but lists no GPU");
            e = DRA_ENOTFOUND;
        }
        dra_arena_fini(&a);
        dra_gpu_close(g);
    }
    if (e)
        say_with(d, &inner, e, "--real-gpus: no usable NVIDIA driver on this machine");
    dra_diag_fini(&inner);
    return e;
}

/* The slots: the inventory's nodes, then the local one. */
static dra_err make_slots(drad_nodes *ns, const char *inventory, dra_diag *d)
{
    const drad_node_flags *f = ns->ctx->node_flags;
    dra_arena a;
    const char **names = NULL;
    size_t n = 0;
    dra_err e = DRA_OK;
    dra_arena_init(&a, NULL);
    if (inventory) {
        dra_diag inner;
        char what[PATH_MAX + 64];
        dra_diag_init(&inner, NULL);
        if ((e = dra_gpu_fake_nodes(inventory, &a, &names, &n, &inner)) != DRA_OK) {
            snprintf(what, sizeof what, "--nodes %s: not a fake-GPU inventory (docs/gpu.md)", inventory);
            say_with(d, &inner, e, what);
        }
        dra_diag_fini(&inner);
    }
    if (!e && !(ns->slots = dra_calloc(NULL, n + 1, sizeof *ns->slots)))
        e = DRA_ENOMEM;
    for (size_t i = 0; !e && i < n; i++) {
        if (strlen(names[i]) >= sizeof ns->slots[i].name)
            e = DRA_EINVAL;
        else
            snprintf(ns->slots[ns->n++].name, sizeof ns->slots[i].name, "%s", names[i]);
    }
    if (!e && f->real_gpus) {
        node_slot *s = &ns->slots[ns->n++];
        host_node_name(s->name, sizeof s->name);
        s->real = 1;
    }
    dra_arena_fini(&a);
    return e;
}

/* ---- start and stop ---------------------------------------------------------------- */

static dra_err start_slot(drad_nodes *ns, node_slot *s, size_t i, const char *inventory, dra_diag *d)
{
    dra_err e = slot_dirs(ns, s, i, d);
    if (!e && !s->real)
        e = slot_driver_root(ns, s, inventory, d);
    /* The Node first: the plugin's slice names it as its owner. */
    if (!e)
        e = slot_agent(ns, s, d);
    if (!e)
        e = slot_plugin(ns, s, d);
    return e;
}

static dra_err start_fake(drad_nodes *ns, dra_diag *d)
{
    dra_fake_nodes_opts o;
    memset(&o, 0, sizeof o);
    o.count = (size_t)ns->ctx->node_flags->fake_nodes;
    return dra_fake_nodes_start(ns->cluster, &o, NULL, &ns->fake, d);
}

dra_err drad_nodes_start(const drad_ctx *ctx, drad_nodes **out, dra_diag *d)
{
    const drad_node_flags *f = ctx->node_flags;
    const char *inventory = NULL;
    drad_nodes *ns;
    dra_err e = DRA_OK;
    *out = NULL;
    if (!(ns = dra_calloc(NULL, 1, sizeof *ns)))
        return DRA_ENOMEM;
    ns->ctx = ctx;
    find_paths(&ns->p);
    if (!realpath(ctx->data_dir, ns->data))
        snprintf(ns->data, sizeof ns->data, "%s", ctx->data_dir);
    if (!flags_none(f))
        inventory = f->nodes ? f->nodes : (f->real_gpus ? NULL : ns->p.inventory);
    if (!(ns->cluster = dra_apiserver_cluster(ctx->srv)) || dra_node_group_new(NULL, &ns->group) != DRA_OK) {
        drad_nodes_stop(ns);
        return DRA_ENOMEM;
    }
    dra_apiserver_set_log_source(ctx->srv, dra_node_log_source, ns->group);
    e = install_classes(ns->cluster, ns->p.deploy, d);
    if (!e && f->real_gpus)
        e = check_real_gpus(d);
    if (!e)
        e = make_slots(ns, inventory, d);
    for (size_t i = 0; !e && i < ns->n; i++)
        e = start_slot(ns, &ns->slots[i], i, inventory, d);
    if (!e && f->fake_nodes > 0)
        e = start_fake(ns, d);
    if (!e)
        e = wait_ready(ns, d);
    if (e) {
        drad_nodes_stop(ns);
        return e;
    }
    *out = ns;
    return DRA_OK;
}

static void *shutdown_main(void *arg)
{
    dra_node_shutdown(arg, SHUTDOWN_GRACE_S);
    return NULL;
}

/* Every agent shuts down at once: each may wait for its containers. */
static void shutdown_agents(drad_nodes *ns)
{
    pthread_t *th = dra_calloc(NULL, ns->n + 1, sizeof *th);
    int *started = dra_calloc(NULL, ns->n + 1, sizeof *started);
    for (size_t i = 0; i < ns->n; i++) {
        if (!ns->slots[i].agent)
            continue;
        dra_node_group_remove(ns->group, ns->slots[i].agent);
        if (th && started && pthread_create(&th[i], NULL, shutdown_main, ns->slots[i].agent) == 0)
            started[i] = 1;
        else
            dra_node_shutdown(ns->slots[i].agent, SHUTDOWN_GRACE_S);
    }
    for (size_t i = 0; th && started && i < ns->n; i++)
        if (started[i])
            pthread_join(th[i], NULL);
    dra_free(NULL, th);
    dra_free(NULL, started);
}

void drad_nodes_stop(drad_nodes *ns)
{
    if (!ns)
        return;
    dra_fake_nodes_stop(ns->fake);
    /* The agents first: no prepare is in flight when the plugins go. */
    shutdown_agents(ns);
    for (size_t i = 0; i < ns->n; i++)
        drad_child_stop(ns->slots[i].plugin, PLUGIN_GRACE_MS);
    if (ns->group)
        dra_apiserver_set_log_source(ns->ctx->srv, NULL, NULL);
    dra_node_group_free(ns->group);
    dra_cluster_free(ns->cluster);
    dra_free(NULL, ns->slots);
    dra_free(NULL, ns);
}
