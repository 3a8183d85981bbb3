/*
 * fakeroot.c: lays out a fake NVIDIA driver root for one node of a
 * fake-GPU inventory, with every file where the plugin (and
 * nvidia-container-toolkit) would find the real driver's: the fake
 * libnvidia-ml.so.<version> and its soname link, nvidia-smi, /dev nodes as
 * regular files, sysfs links for pcieRoot, /proc/devices and the MIG
 * capability files. Used by dra-fake-driver-root, drad and the tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake/inventory.h"
#include "gpu_int.h"

#define FAKE_CAPS_MAJOR 237 /* any free character major; /proc/devices says it */

typedef struct lay {
    const char *root;
    dra_diag *d;
} lay;

static dra_err io_fail(lay *l, const char *what, const char *path)
{
    dra_diag_add(l->d, "", 0, 0, "%s %s: %s", what, path, strerror(errno));
    return DRA_EIO;
}

/* mkdir -p <root><rel>. */
static dra_err mkdirs(lay *l, const char *rel)
{
    char p[PATH_MAX];
    if ((size_t)snprintf(p, sizeof p, "%s%s", l->root, rel) >= sizeof p)
        return DRA_EINVAL;
    for (char *c = p + 1; *c; c++) {
        if (*c != '/')
            continue;
        *c = 0;
        if (mkdir(p, 0755) && errno != EEXIST)
            return io_fail(l, "cannot create", p);
        *c = '/';
    }
    if (mkdir(p, 0755) && errno != EEXIST)
        return io_fail(l, "cannot create", p);
    return DRA_OK;
}

/* Writes |len| bytes to <root><rel> through a temporary file and rename. */
static dra_err put(lay *l, const char *rel, const void *data, size_t len, mode_t mode)
{
    char p[PATH_MAX], tmp[PATH_MAX + 16];
    snprintf(p, sizeof p, "%s%s", l->root, rel);
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", p, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return io_fail(l, "cannot write", tmp);
    size_t w = len ? fwrite(data, 1, len, f) : 0;
    if (fclose(f) || w != len || chmod(tmp, mode) || rename(tmp, p)) {
        dra_err err = io_fail(l, "cannot write", p);
        unlink(tmp);
        return err;
    }
    return DRA_OK;
}

static dra_err put_str(lay *l, const char *rel, const char *s)
{
    return put(l, rel, s, strlen(s), 0644);
}

static dra_err copy_file(lay *l, const dra_mem *mem, const char *src, const char *rel)
{
    FILE *f = fopen(src, "rb");
    if (!f) {
        dra_diag_add(l->d, "", 0, 0, "cannot read %s: %s", src, strerror(errno));
        return errno == ENOENT ? DRA_ENOTFOUND : DRA_EIO;
    }
    dra_buf b;
    char chunk[65536];
    size_t n;
    dra_buf_init(&b, mem);
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        dra_buf_append(&b, chunk, n);
    int bad = ferror(f);
    fclose(f);
    dra_err err = b.oom ? DRA_ENOMEM : bad ? io_fail(l, "cannot read", src) : DRA_OK;
    if (!err)
        err = put(l, rel, b.p ? b.p : "", b.len, 0755);
    dra_buf_fini(&b);
    return err;
}

static dra_err link_to(lay *l, const char *target, const char *rel)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s%s", l->root, rel);
    if (unlink(p) && errno != ENOENT)
        return io_fail(l, "cannot replace", p);
    if (symlink(target, p))
        return io_fail(l, "cannot link", p);
    return DRA_OK;
}

/* "00000000:3B:00.0" -> "0000:3b:00.0" (sysfs form). */
static void sys_bus_id(const char *nv, char *out, size_t size)
{
    unsigned dom = 0, bus = 0, dev = 0, fn = 0;
    sscanf(nv, "%x:%x:%x.%x", &dom, &bus, &dev, &fn);
    snprintf(out, size, "%04x:%02x:%02x.%x", dom & 0xffff, bus, dev, fn);
}

static dra_err lay_gpu_sys(lay *l, const fk_gpu *g)
{
    char bus[32], rel[PATH_MAX], target[PATH_MAX];
    if (!g->pcie_root)
        return DRA_OK;
    sys_bus_id(g->pci_bus_id, bus, sizeof bus);
    snprintf(rel, sizeof rel, "/sys/devices/%s/%s", g->pcie_root, bus);
    dra_err err = mkdirs(l, rel);
    if (err)
        return err;
    /* Its DRM nodes: card<minor+1> (card0 is the BMC's VGA on servers),
     * renderD<128+minor>, in sysfs and in dev/dri. */
    char card[32], render[32];
    snprintf(card, sizeof card, "card%u", g->minor + 1);
    snprintf(render, sizeof render, "renderD%u", 128 + g->minor);
    const char *names[2] = {card, render};
    for (int i = 0; i < 2; i++) {
        snprintf(rel, sizeof rel, "/sys/devices/%s/%s/drm/%s", g->pcie_root, bus, names[i]);
        if ((err = mkdirs(l, rel)))
            return err;
        snprintf(rel, sizeof rel, "/dev/dri/%s", names[i]);
        if ((err = put_str(l, rel, "")))
            return err;
    }
    snprintf(rel, sizeof rel, "/sys/bus/pci/devices/%s", bus);
    snprintf(target, sizeof target, "../../../devices/%s/%s", g->pcie_root, bus);
    return link_to(l, target, rel);
}

static dra_err lay_cap(lay *l, unsigned gpu, unsigned gi, int ci, unsigned minor_no)
{
    char dir[256], rel[300], body[128];
    if (ci < 0)
        snprintf(dir, sizeof dir, "/proc/driver/nvidia/capabilities/gpu%u/mig/gi%u", gpu, gi);
    else
        snprintf(dir, sizeof dir, "/proc/driver/nvidia/capabilities/gpu%u/mig/gi%u/ci%d", gpu,
                 gi, ci);
    dra_err err = mkdirs(l, dir);
    if (err)
        return err;
    snprintf(rel, sizeof rel, "%s/access", dir);
    snprintf(body, sizeof body, "DeviceFileMinor: %u\nDeviceFileMode: 292\nDeviceFileModify: 1\n",
             minor_no);
    if ((err = put_str(l, rel, body)))
        return err;
    snprintf(rel, sizeof rel, "/dev/nvidia-caps/nvidia-cap%u", minor_no);
    return put_str(l, rel, "");
}

static dra_err lay_gpu(lay *l, const fk_gpu *g)
{
    char rel[64];
    snprintf(rel, sizeof rel, "/dev/nvidia%u", g->minor);
    dra_err err = put_str(l, rel, "");
    if (!err)
        err = lay_gpu_sys(l, g);
    for (size_t i = 0; !err && i < g->n_migs; i++) {
        const fk_mig *m = &g->migs[i];
        err = lay_cap(l, g->minor, m->gi, -1, fk_cap_minor_gi(g->minor, m->gi));
        if (!err)
            err = lay_cap(l, g->minor, m->gi, (int)m->ci, fk_cap_minor_ci(g->minor, m->gi, m->ci));
    }
    return err;
}

static dra_err node_yaml(lay *l, const dra_mem *mem, const fk_inventory *inv,
                         const fk_node *node, dra_buf *out)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return DRA_ENOMEM;
    int bad = fk_inventory_write_node(inv, node, f);
    bad |= fclose(f);
    dra_err err = bad || !text ? DRA_ENOMEM : dra_buf_append(out, text, len);
    free(text); /* open_memstream's buffer is libc's */
    (void)l;
    (void)mem;
    return err;
}

static dra_err lay_dirs(lay *l)
{
    static const char *const dirs[] = {"/usr/lib/x86_64-linux-gnu", "/usr/bin", "/dev/nvidia-caps", "/dev/dri",
                                       "/sys/bus/pci/devices", "/proc/driver/nvidia/capabilities"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        dra_err err = mkdirs(l, dirs[i]);
        if (err)
            return err;
    }
    return DRA_OK;
}

static dra_err lay_common(lay *l, const dra_gpu_fake_root_opts *o, const fk_node *node,
                          const char *yaml)
{
    char rel[PATH_MAX], name[NV_DRIVER_VERSION_BUFFER + 32], body[256];
    snprintf(name, sizeof name, "libnvidia-ml.so.%s", node->driver_version);
    snprintf(rel, sizeof rel, "/usr/lib/x86_64-linux-gnu/%s", name);
    dra_err err = copy_file(l, o->mem, o->fake_nvml, rel);
    if (!err)
        err = link_to(l, name, "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1");
    if (!err)
        err = link_to(l, "libnvidia-ml.so.1", "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so");
    if (!err)
        err = put_str(l, "/usr/lib/x86_64-linux-gnu/dra-fake-nvml.yaml", yaml);
    if (!err)
        err = copy_file(l, o->mem, o->fake_smi, "/usr/bin/nvidia-smi");
    /* nvidiactl holds the inventory: a container given it sees the node. */
    if (!err)
        err = put_str(l, "/dev/nvidiactl", yaml);
    static const char *const nodes[] = {"/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
                                        "/dev/nvidia-modeset", "/dev/nvidia-caps/nvidia-cap1",
                                        "/dev/nvidia-caps/nvidia-cap2"};
    for (size_t i = 0; !err && i < sizeof nodes / sizeof *nodes; i++)
        err = put_str(l, nodes[i], "");
    snprintf(body, sizeof body,
             "Character devices:\n  1 mem\n195 nvidia-frontend\n%d nvidia-caps\n"
             "509 nvidia-uvm\n\nBlock devices:\n  8 sd\n",
             FAKE_CAPS_MAJOR);
    if (!err)
        err = put_str(l, "/proc/devices", body);
    for (size_t i = 0; !err && i < node->n_gpus; i++)
        err = lay_gpu(l, &node->gpus[i]);
    return err;
}

static dra_err inv_err(int rc)
{
    return rc == -2 ? DRA_ENOTFOUND : rc == -3 ? DRA_EPARSE : DRA_EINVALID;
}

dra_err dra_gpu_fake_root(const dra_gpu_fake_root_opts *o, dra_diag *d)
{
    if (!o || !o->inventory || !o->root || !o->fake_nvml || !o->fake_smi) {
        dra_diag_add(d, "", 0, 0, "fake driver root: inventory, root, fake NVML and nvidia-smi paths are required");
        return DRA_EINVAL;
    }
    char err_text[1024];
    fk_inventory inv;
    int rc = fk_inventory_load(&inv, o->mem, o->inventory, err_text, sizeof err_text);
    if (rc) {
        dra_diag_add(d, "", 0, 0, "%s", err_text);
        return inv_err(rc);
    }
    const fk_node *node = fk_inventory_node(&inv, o->node);
    dra_err err = DRA_OK;
    if (!node) {
        dra_diag_add(d, "", 0, 0, "%s: no node %s", o->inventory, o->node ? o->node : "at all");
        err = DRA_ENOTFOUND;
    }
    lay l = {o->root, d};
    dra_buf yaml;
    dra_buf_init(&yaml, o->mem);
    if (!err)
        err = mkdirs(&l, "");
    if (!err)
        err = lay_dirs(&l);
    if (!err)
        err = node_yaml(&l, o->mem, &inv, node, &yaml);
    if (!err)
        err = lay_common(&l, o, node, yaml.p ? yaml.p : "");
    dra_buf_fini(&yaml);
    fk_inventory_free(&inv);
    return err;
}

dra_err dra_gpu_fake_nodes(const char *inventory, dra_arena *a, const char ***names, size_t *n,
                           dra_diag *d)
{
    char err_text[1024];
    fk_inventory inv;
    if (!inventory || !a || !names || !n)
        return DRA_EINVAL;
    int rc = fk_inventory_load(&inv, a->mem, inventory, err_text, sizeof err_text);
    if (rc) {
        dra_diag_add(d, "", 0, 0, "%s", err_text);
        return inv_err(rc);
    }
    dra_err err = DRA_OK;
    *names = dra_arena_array(a, inv.n_nodes ? inv.n_nodes : 1, sizeof **names);
    *n = inv.n_nodes;
    for (size_t i = 0; *names && i < inv.n_nodes; i++)
        if (!((*names)[i] = dra_arena_strdup(a, inv.nodes[i].name)))
            err = DRA_ENOMEM;
    if (!*names)
        err = DRA_ENOMEM;
    fk_inventory_free(&inv);
    return err;
}
