/*
 * files.c: what a CDI spec needs from the driver root, found the way
 * NVIDIA's plugin and nvidia-container-toolkit find it: device nodes under
 * the dev root (the driver root when it has dev/, else /), the versioned
 * driver libraries next to libnvidia-ml, the driver binaries, the
 * nvidia-caps major and MIG capability minors from /proc, and pcieRoot
 * from the sysfs link of each GPU's bus id.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "gpu_int.h"

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A path |rel| ("/dev/nvidia0") three ways, with the stat facts of the
 * local file. */
static dra_err fill_path(dra_arena *a, dra_gpu_path *out, const char *local_root,
                         const char *host_root, const char *rel)
{
    struct stat st;
    memset(out, 0, sizeof *out);
    out->path = dra_arena_strdup(a, rel);
    out->local_path = gpu_join(a, local_root, rel);
    out->host_path = gpu_join(a, host_root, rel);
    out->major = out->minor = -1;
    if (!out->path || !out->local_path || !out->host_path)
        return DRA_ENOMEM;
    if (stat(out->local_path, &st) == 0 && S_ISCHR(st.st_mode)) {
        out->is_char_dev = 1;
        out->major = major(st.st_rdev);
        out->minor = minor(st.st_rdev);
        out->mode = st.st_mode & 07777;
    }
    return DRA_OK;
}

static dra_err common_nodes(dra_arena *a, dra_gpu_files *f)
{
    /* nvidia-container-toolkit's order. */
    static const char *const names[] = {"nvidia-modeset", "nvidia-uvm-tools", "nvidia-uvm",
                                        "nvidiactl"};
    f->common_nodes = dra_arena_array(a, 4, sizeof *f->common_nodes);
    if (!f->common_nodes)
        return DRA_ENOMEM;
    for (size_t i = 0; i < 4; i++) {
        char rel[64];
        struct stat st;
        snprintf(rel, sizeof rel, "/dev/%s", names[i]);
        char *local = gpu_join(a, f->dev_root, rel);
        if (!local)
            return DRA_ENOMEM;
        if (stat(local, &st))
            continue;
        dra_err err = fill_path(a, &f->common_nodes[f->n_common_nodes], f->dev_root,
                                f->host_dev_root, rel);
        if (err)
            return err;
        f->n_common_nodes++;
    }
    return DRA_OK;
}

static int name_cmp(const void *x, const void *y)
{
    return strcmp(((const dra_gpu_path *)x)->path, ((const dra_gpu_path *)y)->path);
}

/* The part of |local| below |root| ("/usr/lib/..."), or |local| itself
 * when it is not below the root. */
static const char *below_root(const char *root, const char *local)
{
    size_t n = strlen(root);
    if (n && !strncmp(local, root, n) && local[n] == '/')
        return local + n;
    return local;
}

typedef struct dirscan {
    dra_gpu_path *libs, *links;
    size_t n_libs, n_links, cap;
} dirscan;

static dra_err scan_entry(const dra_gpu *g, dra_arena *a, const char *dir, const char *name,
                          const char *suffix, dirscan *s)
{
    char local[PATH_MAX], target[PATH_MAX];
    struct stat st;
    size_t nl = strlen(name), ns = strlen(suffix);
    if (strncmp(name, "lib", 3) || !strstr(name, ".so"))
        return DRA_OK;
    if ((size_t)snprintf(local, sizeof local, "%s/%s", dir, name) >= sizeof local ||
        lstat(local, &st))
        return DRA_OK;
    const char *rel = below_root(g->root, local);
    if (S_ISREG(st.st_mode) && nl > ns && !strcmp(name + nl - ns, suffix) && s->n_libs < s->cap) {
        dra_err err = fill_path(a, &s->libs[s->n_libs], g->root, g->host_root, rel);
        s->n_libs += err == DRA_OK;
        return err;
    }
    ssize_t tl;
    if (S_ISLNK(st.st_mode) && s->n_links < s->cap &&
        (tl = readlink(local, target, sizeof target - 1)) > 0) {
        target[tl] = 0;
        size_t t = (size_t)tl;
        if (t <= ns || strcmp(target + t - ns, suffix) || strchr(target, '/'))
            return DRA_OK;
        dra_gpu_path *l = &s->links[s->n_links++];
        memset(l, 0, sizeof *l);
        l->path = dra_arena_strdup(a, rel);
        l->local_path = dra_arena_strdup(a, local);
        l->host_path = dra_arena_strdup(a, target);
        l->major = l->minor = -1;
        return l->path && l->local_path && l->host_path ? DRA_OK : DRA_ENOMEM;
    }
    return DRA_OK;
}

static dra_err libraries(const dra_gpu *g, dra_arena *a, const dra_gpu_inventory *inv,
                         dra_gpu_files *f)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", inv->nvml_path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return DRA_OK;
    *slash = 0;
    f->lib_dir = dra_arena_strdup(a, below_root(g->root, dir));
    char *suffix = dra_arena_sprintf(a, ".so.%s", inv->driver_version);
    dirscan s = {0};
    s.cap = 512;
    s.libs = dra_arena_array(a, s.cap, sizeof *s.libs);
    s.links = dra_arena_array(a, s.cap, sizeof *s.links);
    if (!f->lib_dir || !suffix || !s.libs || !s.links)
        return DRA_ENOMEM;
    DIR *d = opendir(dir);
    struct dirent *e;
    dra_err err = DRA_OK;
    while (d && !err && (e = readdir(d)))
        err = scan_entry(g, a, dir, e->d_name, suffix, &s);
    if (d)
        closedir(d);
    qsort(s.libs, s.n_libs, sizeof *s.libs, name_cmp);
    qsort(s.links, s.n_links, sizeof *s.links, name_cmp);
    f->libraries = s.libs;
    f->n_libraries = s.n_libs;
    f->lib_links = s.links;
    f->n_lib_links = s.n_links;
    return err;
}

static dra_err binaries(const dra_gpu *g, dra_arena *a, dra_gpu_files *f)
{
    static const char *const names[] = {
        "nvidia-smi", "nvidia-debugdump", "nvidia-persistenced", "nvidia-cuda-mps-control",
        "nvidia-cuda-mps-server", "nvidia-imex", "nvidia-imex-ctl"};
    static const char *const dirs[] = {"", "/opt/bin", "/usr/bin", "/usr/sbin", "/bin", "/sbin"};
    f->binaries = dra_arena_array(a, 7, sizeof *f->binaries);
    if (!f->binaries)
        return DRA_ENOMEM;
    for (size_t i = 0; i < 7; i++)
        for (size_t j = 0; j < sizeof dirs / sizeof *dirs; j++) {
            char rel[128], real[PATH_MAX];
            snprintf(rel, sizeof rel, "%s/%s", dirs[j], names[i]);
            char *local = gpu_join(a, g->root, rel);
            if (!local)
                return DRA_ENOMEM;
            if (!realpath(local, real))
                continue;
            dra_err err = fill_path(a, &f->binaries[f->n_binaries++], g->root, g->host_root, rel);
            if (err)
                return err;
            if (i == 0 && !(f->nvidia_smi = dra_arena_strdup(a, real)))
                return DRA_ENOMEM;
            break;
        }
    return DRA_OK;
}

/* The character-device major of driver |name| ("nvidia-caps",
 * "nvidia-uvm") in <proc>/devices, or -1. */
static int64_t proc_major(const char *proc, const char *wanted)
{
    char p[PATH_MAX], line[256];
    int chr = 0;
    int64_t major_no = -1;
    snprintf(p, sizeof p, "%s/devices", proc);
    FILE *f = fopen(p, "r");
    while (f && fgets(line, sizeof line, f)) {
        long v;
        char name[128];
        if (!strncmp(line, "Character devices:", 18))
            chr = 1;
        else if (!strncmp(line, "Block devices:", 14))
            chr = 0;
        else if (chr && sscanf(line, "%ld %127s", &v, name) == 2 && !strcmp(name, wanted))
            major_no = v;
    }
    if (f)
        fclose(f);
    return major_no;
}

/* DeviceFileMinor / DeviceFileMode of a capability access file. */
static int cap_file(const char *path, int64_t *minor_no, unsigned *mode)
{
    char line[256];
    int found = 0;
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f)) {
        long v;
        if (sscanf(line, "DeviceFileMinor: %ld", &v) == 1) {
            *minor_no = v;
            found = 1;
        } else if (sscanf(line, "DeviceFileMode: %ld", &v) == 1) {
            *mode = (unsigned)v;
        }
    }
    if (f)
        fclose(f);
    return found;
}

static dra_err cap_node(dra_arena *a, const dra_gpu_files *f, const char *proc,
                        const char *access, dra_gpu_path *out)
{
    char p[PATH_MAX];
    int64_t minor_no = -1;
    unsigned mode = 0;
    memset(out, 0, sizeof *out);
    out->major = out->minor = -1;
    snprintf(p, sizeof p, "%s/driver/nvidia/capabilities/%s", proc, access);
    if (!cap_file(p, &minor_no, &mode))
        return DRA_OK;
    char rel[64];
    snprintf(rel, sizeof rel, "/dev/nvidia-caps/nvidia-cap%lld", (long long)minor_no);
    dra_err err = fill_path(a, out, f->dev_root, f->host_dev_root, rel);
    if (err)
        return err;
    /* Created in the container from these numbers, as NVIDIA does. */
    out->is_char_dev = f->caps_major >= 0;
    out->major = f->caps_major;
    out->minor = minor_no;
    out->mode = mode;
    return DRA_OK;
}

/* filepath.Clean for absolute paths: no "//", ".", "..". */
static void clean(char *p)
{
    char *out = p, *in = p;
    while (*in) {
        while (*in == '/')
            in++;
        char *seg = in;
        while (*in && *in != '/')
            in++;
        size_t n = (size_t)(in - seg);
        if (n == 0 || (n == 1 && seg[0] == '.'))
            continue;
        if (n == 2 && seg[0] == '.' && seg[1] == '.') {
            while (out > p && *--out != '/')
                ;
            continue;
        }
        *out++ = '/';
        memmove(out, seg, n);
        out += n;
    }
    if (out == p)
        *out++ = '/';
    *out = 0;
}

/* k8s deviceattribute's PCIe root: the sysfs link of the bus id must
 * point below <sys>/devices/pci and end in the bus id. */
static const char *pcie_root(dra_arena *a, const char *sys, const char *bus)
{
    char link[PATH_MAX], target[PATH_MAX], full[2 * PATH_MAX + 2];
    snprintf(link, sizeof link, "%s/bus/pci/devices/%s", sys, bus);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0)
        return NULL;
    target[n] = 0;
    if (target[0] == '/')
        snprintf(full, sizeof full, "%s", target);
    else
        snprintf(full, sizeof full, "%s/bus/pci/devices/%s", sys, target);
    clean(full);
    char prefix[PATH_MAX];
    snprintf(prefix, sizeof prefix, "%s/devices/pci", sys);
    clean(prefix);
    const char *base = strrchr(full, '/');
    if (strncmp(full, prefix, strlen(prefix)) || !base || strcmp(base + 1, bus))
        return NULL;
    const char *first = full + strlen(prefix) - 3; /* "pci..." */
    const char *end = strchr(first, '/');
    return dra_arena_strndup(a, first, end ? (size_t)(end - first) : strlen(first));
}

/* cardN and renderDN under <sys>/bus/pci/devices/<bus>/drm, sorted. */
static dra_err drm_nodes(dra_arena *a, const dra_gpu_files *f, const char *sys,
                         dra_gpu_device *gpu)
{
    char dir[PATH_MAX];
    if ((size_t)snprintf(dir, sizeof dir, "%s/bus/pci/devices/%s/drm", sys, gpu->pci_bus_id) >=
        sizeof dir)
        return DRA_OK;
    DIR *d = opendir(dir);
    struct dirent *e;
    dra_err err = DRA_OK;
    if (!d)
        return DRA_OK;
    gpu->drm_nodes = dra_arena_array(a, 8, sizeof *gpu->drm_nodes);
    if (!gpu->drm_nodes)
        err = DRA_ENOMEM;
    while (!err && gpu->n_drm_nodes < 8 && (e = readdir(d))) {
        const char *n = e->d_name;
        const char *num = !strncmp(n, "card", 4) ? n + 4 : !strncmp(n, "renderD", 7) ? n + 7 : NULL;
        if (!num || !*num || strspn(num, "0123456789") != strlen(num))
            continue;
        char rel[300];
        snprintf(rel, sizeof rel, "/dev/dri/%s", n);
        err = fill_path(a, &gpu->drm_nodes[gpu->n_drm_nodes++], f->dev_root, f->host_dev_root, rel);
    }
    closedir(d);
    if (!err)
        qsort(gpu->drm_nodes, gpu->n_drm_nodes, sizeof *gpu->drm_nodes, name_cmp);
    return err;
}

static dra_err per_gpu(const dra_gpu *g, dra_arena *a, dra_gpu_inventory *inv)
{
    dra_gpu_files *f = &inv->files;
    char *sys = gpu_join(a, g->root, "/sys/bus/pci/devices");
    char *procdev = gpu_join(a, g->root, "/proc/devices");
    if (!sys || !procdev)
        return DRA_ENOMEM;
    const char *sysroot = is_dir(sys) ? gpu_join(a, g->root, "/sys") : "/sys";
    const char *proc = access(procdev, R_OK) == 0 ? gpu_join(a, g->root, "/proc") : "/proc";
    if (!sysroot || !proc)
        return DRA_ENOMEM;
    f->caps_major = proc_major(proc, "nvidia-caps");
    f->uvm_major = proc_major(proc, "nvidia-uvm");
    for (size_t i = 0; i < inv->n_gpus; i++) {
        dra_gpu_device *gpu = &inv->gpus[i];
        char rel[64], acc[128];
        snprintf(rel, sizeof rel, "/dev/nvidia%u", gpu->minor);
        dra_err err = fill_path(a, &gpu->dev_node, f->dev_root, f->host_dev_root, rel);
        if (err)
            return err;
        gpu->pcie_root = pcie_root(a, sysroot, gpu->pci_bus_id);
        if ((err = drm_nodes(a, f, sysroot, gpu)))
            return err;
        for (size_t j = 0; j < gpu->n_migs; j++) {
            dra_gpu_mig *m = &gpu->migs[j];
            snprintf(acc, sizeof acc, "gpu%u/mig/gi%u/access", gpu->minor, m->gi_id);
            if ((err = cap_node(a, f, proc, acc, &m->cap_gi)))
                return err;
            snprintf(acc, sizeof acc, "gpu%u/mig/gi%u/ci%u/access", gpu->minor, m->gi_id, m->ci_id);
            if ((err = cap_node(a, f, proc, acc, &m->cap_ci)))
                return err;
        }
    }
    return DRA_OK;
}

dra_err gpu_files_discover(const dra_gpu *g, dra_arena *a, dra_gpu_inventory *inv)
{
    dra_gpu_files *f = &inv->files;
    char *dev = gpu_join(a, g->root, "/dev");
    if (!dev)
        return DRA_ENOMEM;
    int own_dev = g->root[0] && is_dir(dev);
    f->dev_root = own_dev ? g->root : "";
    f->host_dev_root = own_dev ? g->host_root : "";
    dra_err err = common_nodes(a, f);
    if (!err)
        err = libraries(g, a, inv, f);
    if (!err)
        err = binaries(g, a, f);
    if (!err)
        err = per_gpu(g, a, inv);
    if (!err) {
        /* Borrowed strings of |g| must not outlive it: copy. */
        f->dev_root = dra_arena_strdup(a, f->dev_root[0] ? f->dev_root : "/");
        f->host_dev_root = dra_arena_strdup(a, f->host_dev_root[0] ? f->host_dev_root : "/");
        if (!f->dev_root || !f->host_dev_root)
            err = DRA_ENOMEM;
    }
    return err;
}
