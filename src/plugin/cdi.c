/*
 * plugin/cdi.c: the per-claim CDI spec (kind k8s.gpu.nvidia.com/claim,
 * file k8s.gpu.nvidia.com-claim_<claimUID>.yaml in --cdi-root), built
 * the way NVIDIA's plugin builds it through nvidia-container-toolkit:
 * spec-level "common" edits (control device nodes, driver libraries and
 * binaries bind-mounted read-only from the host view of the driver
 * root, nvidia-cdi-hook hooks when the hook exists) and one device per
 * prepared device named <claimUID>-<deviceName> with its device nodes
 * (MIG adds its GI and CI capability nodes). Written atomically; the
 * cdiVersion is the minimum its content needs, as the CDI library
 * computes it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin_int.h"

/* The options nvidia-container-toolkit gives driver files and sockets. */
static const char *const ro_opts[] = {"ro", "nosuid", "nodev", "rbind", "rprivate"};

static int is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

int plugin_cdi_name_ok(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || !is_alnum(name[0]) || !is_alnum(name[n - 1]))
        return 0;
    for (size_t i = 1; i + 1 < n; i++) {
        char c = name[i];
        if (!is_alnum(c) && c != '_' && c != '-' && c != '.' && c != ':')
            return 0;
    }
    return 1;
}

void plugin_cdi_file_name(const char *uid, char *buf, size_t size)
{
    /* GenerateTransientSpecName: <vendor>-<class>_<id>, '/' in id -> '_'. */
    int k = snprintf(buf, size, "%s-%s_", PLUGIN_CDI_VENDOR, PLUGIN_CDI_CLASS);
    size_t i = k > 0 ? (size_t)k : 0;
    for (const char *p = uid; *p && i + 6 < size; p++)
        buf[i++] = *p == '/' ? '_' : *p;
    if (i + 6 <= size)
        memcpy(buf + i, ".yaml", 6);
}

/* ---- edits -------------------------------------------------------------------- */

static dra_doc *edits_new(dra_docb *b)
{
    return dra_docb_map(b);
}

/* Gets (creating) the list |key| of an edits map, keeping CDI's field
 * order env, deviceNodes, hooks, mounts by creating all four empty on
 * first use and dropping the empty ones at the end. */
static dra_doc *edits_list(dra_docb *b, dra_doc *edits, const char *key)
{
    static const char *const order[] = {"env", "deviceNodes", "hooks", "mounts"};
    if (!edits)
        return NULL;
    if (edits->u.map.n == 0)
        for (size_t i = 0; i < 4; i++)
            dra_docb_set(b, edits, order[i], dra_docb_list(b));
    return (dra_doc *)dra_doc_get(edits, key);
}

/* Removes empty lists (CDI omits them) from an edits map. */
static void edits_trim(dra_doc *edits)
{
    if (!edits)
        return;
    size_t k = 0;
    for (size_t i = 0; i < edits->u.map.n; i++) {
        dra_doc *v = edits->u.map.m[i].val;
        if (v->kind == DRA_DOC_LIST && v->u.list.n == 0)
            continue;
        edits->u.map.m[k++] = edits->u.map.m[i];
    }
    edits->u.map.n = k;
}

static void add_env(dra_docb *b, dra_doc *edits, const char *kv)
{
    dra_docb_push(b, edits_list(b, edits, "env"), dra_docb_str(b, kv));
}

/* A device node. |host| NULL or equal to |path|: no hostPath. With
 * |type| set, the node is fully specified (the runtime need not stat
 * it, and the host may lack it). */
static void add_node(dra_docb *b, dra_doc *edits, const char *path, const char *host,
                     const char *type, int64_t major, int64_t minor, unsigned mode)
{
    dra_doc *n = dra_docb_map(b);
    dra_docb_set_str(b, n, "path", path);
    if (host && strcmp(host, path) != 0)
        dra_docb_set_str(b, n, "hostPath", host);
    if (type) {
        dra_docb_set_str(b, n, "type", type);
        dra_docb_set(b, n, "major", dra_docb_int(b, major));
        dra_docb_set(b, n, "minor", dra_docb_int(b, minor));
        if (mode)
            dra_docb_set(b, n, "fileMode", dra_docb_int(b, (int64_t)mode));
    }
    dra_docb_push(b, edits_list(b, edits, "deviceNodes"), n);
}

/* A node of the driver, with the numbers the real driver gives it
 * (|major| < 0: unknown). A character device this process sees is
 * listed by path and host path, as nvidia-container-toolkit lists it.
 * A file that is not a device node (a fake driver root) is listed with
 * its host path and fully specified (type c, major, minor), so the spec
 * stays valid for containerd and runc, which create the node from the
 * numbers without looking at the file, while drad's runtime binds the
 * file itself. A node that is missing and has known numbers is fully
 * specified without a host path, so the runtime creates it (NVIDIA's
 * toolkit leaves such nodes out, issue #1380: a spec made on a fresh
 * node lacks them). */
static void add_driver_node(dra_docb *b, dra_doc *edits, const dra_gpu_path *p,
                            int64_t major, int64_t minor)
{
    struct stat st;
    int found = p->local_path && stat(p->local_path, &st) == 0;
    if (major < 0 || (found && S_ISCHR(st.st_mode)))
        add_node(b, edits, p->path, p->host_path, NULL, 0, 0, 0);
    else
        add_node(b, edits, p->path, found ? p->host_path : NULL, "c", major, minor, 0666);
}

/* The real driver's numbers for a control node: nvidiactl 195:255,
 * nvidia-modeset 195:254, nvidia-uvm and nvidia-uvm-tools the
 * nvidia-uvm major from /proc/devices with minors 0 and 1. */
static void control_numbers(const dra_gpu_files *f, const char *path, int64_t *major,
                            int64_t *minor)
{
    *major = *minor = -1;
    if (strcmp(path, "/dev/nvidiactl") == 0)
        *major = 195, *minor = 255;
    else if (strcmp(path, "/dev/nvidia-modeset") == 0)
        *major = 195, *minor = 254;
    else if (strcmp(path, "/dev/nvidia-uvm") == 0 && f->uvm_major >= 0)
        *major = f->uvm_major, *minor = 0;
    else if (strcmp(path, "/dev/nvidia-uvm-tools") == 0 && f->uvm_major >= 0)
        *major = f->uvm_major, *minor = 1;
}

void plugin_cdi_add_mount(dra_docb *b, dra_doc *edits, const char *host,
                          const char *ctr, const char *const *opts, size_t n_opts)
{
    dra_doc *m = dra_docb_map(b);
    dra_docb_set_str(b, m, "hostPath", host);
    dra_docb_set_str(b, m, "containerPath", ctr);
    dra_docb_set(b, m, "options", dra_docb_strs(b, opts, n_opts));
    dra_docb_push(b, edits_list(b, edits, "mounts"), m);
}

static void add_hook(dra_docb *b, dra_doc *edits, const char *hook,
                     const char *const *args, size_t n_args)
{
    dra_doc *h = dra_docb_map(b);
    static const char *const env[] = {"NVIDIA_CTK_DEBUG=false"};
    dra_docb_set_str(b, h, "hookName", "createContainer");
    dra_docb_set_str(b, h, "path", hook);
    dra_docb_set(b, h, "args", dra_docb_strs(b, args, n_args));
    dra_docb_set(b, h, "env", dra_docb_strs(b, env, 1));
    dra_docb_push(b, edits_list(b, edits, "hooks"), h);
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* The host path of the file a library link points to. */
static const char *link_target_host(dra_docb *b, const dra_gpu_files *f,
                                    const dra_gpu_path *link, const char *root)
{
    for (size_t i = 0; i < f->n_libraries; i++)
        if (strcmp(base_name(f->libraries[i].path), link->host_path) == 0)
            return f->libraries[i].host_path;
    size_t dlen = (size_t)(base_name(link->path) - link->path);
    return dra_arena_sprintf(b->a, "%s%.*s%s", strcmp(root, "/") ? root : "", (int)dlen,
                             link->path, link->host_path);
}

static void common_hooks(dra_docb *b, dra_doc *edits, const plugin_cdi_env *env)
{
    const dra_gpu_files *f = &env->inv->files;
    const char *hook = env->hook_path;
    size_t nl = 2 * f->n_lib_links + 2;
    const char **args = dra_arena_array(b->a, nl, sizeof(char *));
    if (!args) {
        b->oom = 1;
        return;
    }
    size_t k = 0;
    args[k++] = "nvidia-cdi-hook";
    args[k++] = "create-symlinks";
    for (size_t i = 0; i < f->n_lib_links; i++) {
        args[k++] = "--link";
        args[k++] = dra_arena_sprintf(b->a, "%s::%s", f->lib_links[i].host_path,
                                      f->lib_links[i].path);
    }
    if (f->n_lib_links)
        add_hook(b, edits, hook, args, k);
    const char *compat[] = {"nvidia-cdi-hook", "enable-cuda-compat",
                            dra_arena_sprintf(b->a, "--host-driver-version=%s",
                                              env->inv->driver_version)};
    add_hook(b, edits, hook, compat, 3);
    const char *ldc[] = {"nvidia-cdi-hook", "update-ldcache", "--folder", f->lib_dir};
    if (f->lib_dir)
        add_hook(b, edits, hook, ldc, 4);
    const char *dis[] = {"nvidia-cdi-hook", "disable-device-node-modification"};
    add_hook(b, edits, hook, dis, 2);
}

/* Spec-level edits: what every container with any of our GPUs needs. */
static dra_doc *common_edits(dra_docb *b, const plugin_cdi_env *env)
{
    const dra_gpu_files *f = &env->inv->files;
    dra_doc *e = edits_new(b);
    for (size_t i = 0; i < f->n_libraries; i++)
        if (strncmp(base_name(f->libraries[i].path), "libcuda.so.", 11) == 0 && f->lib_dir)
            add_env(b, e, dra_arena_sprintf(b->a, "NVIDIA_CTK_LIBCUDA_DIR=%s", f->lib_dir));
    for (size_t i = 0; i < f->n_common_nodes; i++) {
        const dra_gpu_path *p = &f->common_nodes[i];
        int64_t major, minor;
        control_numbers(f, p->path, &major, &minor);
        add_driver_node(b, e, p, major, minor);
    }
    for (size_t i = 0; i < f->n_libraries; i++)
        plugin_cdi_add_mount(b, e, f->libraries[i].host_path, f->libraries[i].path,
                             ro_opts, 5);
    /* Without nvidia-cdi-hook nothing creates the sonames' links in the
     * container: bind the files they point to under the link names, so
     * libnvidia-ml.so.1 is found where programs look for it. */
    if (!env->hook_path)
        for (size_t i = 0; i < f->n_lib_links; i++)
            plugin_cdi_add_mount(b, e,
                                 link_target_host(b, f, &f->lib_links[i],
                                                  env->host_driver_root),
                                 f->lib_links[i].path, ro_opts, 5);
    for (size_t i = 0; i < f->n_binaries; i++)
        plugin_cdi_add_mount(b, e, f->binaries[i].host_path, f->binaries[i].path,
                             ro_opts, 5);
    if (env->hook_path)
        common_hooks(b, e, env);
    return e;
}

/* Device edits: the GPU's node (the parent's for MIG), MIG capability
 * nodes (created in the container only, as NVIDIA's plugin does for
 * issue #787), then what the device's configuration adds (MPS). */
static dra_doc *device_edits(dra_docb *b, const plugin_cdi_dev *d)
{
    dra_doc *e = edits_new(b);
    add_driver_node(b, e, &d->gpu->dev_node, 195, (int64_t)d->gpu->minor);
    if (d->mig) {
        const dra_gpu_path *caps[2] = {&d->mig->cap_gi, &d->mig->cap_ci};
        for (int i = 0; i < 2; i++)
            add_node(b, e, caps[i]->path, NULL, "c", caps[i]->major, caps[i]->minor,
                     caps[i]->mode);
    }
    if (d->extra) {
        for (size_t i = 0; i < d->extra->n_env; i++)
            add_env(b, e, d->extra->env[i]);
        for (size_t i = 0; i < d->extra->n_mounts; i++) {
            const plugin_mount *m = &d->extra->mounts[i];
            plugin_cdi_add_mount(b, e, m->host_path, m->container_path, m->options,
                                 m->n_options);
        }
    }
    edits_trim(e);
    return e;
}

dra_err plugin_cdi_build(dra_arena *a, const plugin_cdi_env *env,
                         const char *claim_uid, const plugin_cdi_dev *devs,
                         size_t n, dra_doc **out)
{
    dra_docb b = {a, 0};
    *out = NULL;
    for (size_t i = 0; i < n; i++)
        if (devs[i].mig && (devs[i].mig->cap_gi.major < 0 || devs[i].mig->cap_ci.major < 0 ||
                            devs[i].mig->cap_gi.minor < 0 || devs[i].mig->cap_ci.minor < 0))
            return DRA_ENOTFOUND;
    dra_doc *spec = dra_docb_map(&b);
    dra_docb_set_str(&b, spec, "cdiVersion", "0.3.0");
    dra_docb_set_str(&b, spec, "kind", PLUGIN_CDI_KIND);
    dra_doc *list = dra_docb_list(&b);
    dra_docb_set(&b, spec, "devices", list);
    for (size_t i = 0; i < n; i++) {
        dra_doc *dev = dra_docb_map(&b);
        dra_docb_set(&b, dev, "name",
                      dra_docb_str(&b, dra_arena_sprintf(a, "%s-%s", claim_uid,
                                                          devs[i].device)));
        dra_docb_set(&b, dev, "containerEdits", device_edits(&b, &devs[i]));
        dra_docb_push(&b, list, dev);
    }
    dra_doc *common = common_edits(&b, env);
    edits_trim(common);
    if (common && common->u.map.n)
        dra_docb_set(&b, spec, "containerEdits", common);
    if (b.oom)
        return DRA_ENOMEM;
    dra_docb_set_str(&b, spec, "cdiVersion", plugin_cdi_min_version(spec));
    if (b.oom)
        return DRA_ENOMEM;
    *out = spec;
    return DRA_OK;
}

/* ---- minimum version (CDI specs-go/version.go) ------------------------------- */

static int edits_have(const dra_doc *edits, const char *list, const char *field)
{
    const dra_doc *l = dra_doc_get(edits, list);
    if (!l || l->kind != DRA_DOC_LIST)
        return 0;
    for (size_t i = 0; i < l->u.list.n; i++) {
        const dra_doc *v = dra_doc_get(l->u.list.items[i], field);
        if (v && (v->kind != DRA_DOC_STRING || v->u.str.len > 0))
            return 1;
    }
    return 0;
}

const char *plugin_cdi_min_version(const dra_doc *spec)
{
    int v050 = 0, v040 = 0, v060 = 0, v070 = 0;
    const dra_doc *devs = dra_doc_get(spec, "devices");
    const dra_doc *kind = dra_doc_get(spec, "kind");
    if (kind && kind->kind == DRA_DOC_STRING) {
        const char *slash = strchr(kind->u.str.s, '/');
        if (slash && strchr(slash + 1, '.'))
            v060 = 1;
    }
    if (dra_doc_get(spec, "annotations"))
        v060 = 1;
    size_t nd = devs && devs->kind == DRA_DOC_LIST ? devs->u.list.n : 0;
    for (size_t i = 0; i <= nd; i++) {
        const dra_doc *e;
        if (i < nd) {
            const dra_doc *d = devs->u.list.items[i];
            const dra_doc *name = dra_doc_get(d, "name");
            if (name && name->kind == DRA_DOC_STRING && name->u.str.len > 0) {
                char c = name->u.str.s[0];
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
                    v050 = 1;
            }
            if (dra_doc_get(d, "annotations"))
                v060 = 1;
            e = dra_doc_get(d, "containerEdits");
        } else {
            e = dra_doc_get(spec, "containerEdits");
        }
        if (!e)
            continue;
        if (edits_have(e, "deviceNodes", "hostPath"))
            v050 = 1;
        if (edits_have(e, "mounts", "type"))
            v040 = 1;
        if (dra_doc_get(e, "intelRdt") || dra_doc_get(e, "additionalGids"))
            v070 = 1;
    }
    if (v070)
        return "0.7.0";
    if (v060)
        return "0.6.0";
    if (v050)
        return "0.5.0";
    if (v040)
        return "0.4.0";
    return "0.3.0";
}

/* ---- files -------------------------------------------------------------------- */

dra_err plugin_cdi_write(const char *cdi_root, const char *uid, const dra_doc *spec,
                         const dra_mem *mem, int sync, dra_diag *d)
{
    char name[512];
    plugin_cdi_file_name(uid, name, sizeof(name));
    dra_buf y;
    dra_buf_init(&y, mem);
    dra_buf_puts(&y, "---\n");
    dra_err e = y.oom ? DRA_ENOMEM : dra_doc_to_yaml(spec, &y);
    if (e == DRA_OK)
        e = plugin_write_atomic(cdi_root, name, y.p, y.len, 0644, sync, d);
    dra_buf_fini(&y);
    return e;
}

dra_err plugin_cdi_remove(const char *cdi_root, const char *uid, dra_diag *d)
{
    char name[512], path[4096];
    plugin_cdi_file_name(uid, name, sizeof(name));
    snprintf(path, sizeof(path), "%s/%s", cdi_root, name);
    if (unlink(path) != 0 && errno != ENOENT) {
        dra_diag_add(d, "", 0, 0, "cannot remove %s: %s", path, strerror(errno));
        return DRA_EIO;
    }
    return DRA_OK;
}
