/*
 * plugin/sharing.c: applying a GPU sharing strategy to a group of
 * prepared devices, as NVIDIA's sharing.go does. TimeSlicing runs
 * nvidia-smi (compute mode DEFAULT, then compute-policy
 * --set-timeslice) with LD_PRELOAD set to the driver's NVML. MPS keeps
 * NVIDIA's layout (<plugin dir>/mps/<id>/{pipe,shm,log}, id = claim UID
 * plus five hex digits of the SHA-256 of the sorted UUIDs, the same env
 * and mounts in the CDI spec) but starts nvidia-cuda-mps-control -d
 * itself instead of creating a Deployment (see docs/plugin.md).
 */
#include <dirent.h>
#include <errno.h>
#include <gnutls/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin_int.h"

#define TOOL_TIMEOUT_MS 30000

/* The environment a driver tool runs with, in |a|: this process's,
 * plus |extra| entries, plus for nvidia-smi LD_PRELOAD=<nvml>[:old] (as
 * NVIDIA's plugin runs it) and for the MPS control daemon the driver
 * root's library directory on LD_LIBRARY_PATH (NVIDIA's daemon runs
 * chrooted into the driver root instead). */
static const char **tool_env(dra_plugin *p, dra_arena *a, const char *const *extra,
                             size_t n_extra, int preload)
{
    extern char **environ;
    size_t n = 0;
    while (environ[n])
        n++;
    const char **env = dra_arena_array(a, n + n_extra + 2, sizeof(char *));
    if (!env)
        return NULL;
    size_t k = 0;
    const char *var = preload ? "LD_PRELOAD" : "LD_LIBRARY_PATH";
    const char *old = getenv(var);
    const char *val = p->inv->nvml_path;
    char dir[4096];
    if (!preload) {
        snprintf(dir, sizeof(dir), "%s", p->inv->nvml_path);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        val = dir;
    }
    env[k++] = old && *old ? dra_arena_sprintf(a, "%s=%s:%s", var, val, old)
                           : dra_arena_sprintf(a, "%s=%s", var, val);
    for (size_t i = 0; i < n_extra; i++)
        env[k++] = extra[i];
    for (size_t i = 0; i < n; i++) {
        size_t vl = strlen(var);
        if (strncmp(environ[i], var, vl) == 0 && environ[i][vl] == '=')
            continue;
        int dup = 0;
        for (size_t j = 0; j < n_extra; j++) {
            const char *eq = strchr(extra[j], '=');
            size_t kl = eq ? (size_t)(eq - extra[j]) + 1 : 0;
            if (kl && strncmp(environ[i], extra[j], kl) == 0)
                dup = 1;
        }
        if (!dup)
            env[k++] = environ[i];
    }
    env[k] = NULL;
    return env;
}

/* Runs a driver tool; on failure the message says what ran and what it
 * printed ("error running nvidia-smi: exit status 1: <output>"). */
static dra_err run_tool(dra_plugin *p, const char *const *argv, const char *const *extra_env,
                        size_t n_extra, const char *input, int want_output,
                        char *err, size_t cap)
{
    dra_arena a;
    dra_arena_init(&a, p->mem);
    dra_buf out;
    dra_buf_init(&out, p->mem);
    int status = -1;
    const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    const char **env = tool_env(p, &a, extra_env, n_extra, strcmp(base, "nvidia-smi") == 0);
    dra_err e = env ? plugin_run(argv, env, input, TOOL_TIMEOUT_MS,
                                 want_output ? &out : NULL, &status)
                    : DRA_ENOMEM;
    const char *name = base;
    if (e == DRA_OK && status != 0) {
        while (out.len && (out.p[out.len - 1] == '\n' || out.p[out.len - 1] == ' '))
            out.p[--out.len] = '\0';
        if (status < 0)
            snprintf(err, cap, "error running %s: killed (timeout %d s)", name,
                     TOOL_TIMEOUT_MS / 1000);
        else
            snprintf(err, cap, "error running %s: exit status %d%s%s", name, status,
                     out.len ? ": " : "", out.len ? out.p : "");
        e = DRA_EIO;
    } else if (e == DRA_EIO) {
        snprintf(err, cap, "error running %s: %s", name, out.p ? out.p : "cannot start");
    }
    dra_buf_fini(&out);
    dra_arena_fini(&a);
    return e;
}

static dra_err set_compute_mode(dra_plugin *p, const char *const *uuids, size_t n,
                                const char *mode, char *err, size_t cap)
{
    for (size_t i = 0; i < n; i++) {
        const char *argv[] = {p->inv->files.nvidia_smi, "-i", uuids[i], "-c", mode, NULL};
        dra_err e = run_tool(p, argv, NULL, 0, NULL, 1, err, cap);
        if (e != DRA_OK)
            return e;
    }
    return DRA_OK;
}

dra_err plugin_ts_set(dra_plugin *p, const char *const *uuids, size_t n, int interval,
                      char *err, size_t cap)
{
    char why[700];
    if (n == 0)
        return DRA_OK;
    if (!p->inv->files.nvidia_smi) {
        snprintf(err, cap, "error setting compute mode: nvidia-smi not found in the driver root");
        return DRA_ENOTFOUND;
    }
    if (set_compute_mode(p, uuids, n, "DEFAULT", why, sizeof(why)) != DRA_OK) {
        snprintf(err, cap, "error setting compute mode: %s", why);
        return DRA_EIO;
    }
    char ts[8];
    snprintf(ts, sizeof(ts), "%d", interval);
    for (size_t i = 0; i < n; i++) {
        const char *argv[] = {p->inv->files.nvidia_smi, "compute-policy", "-i", uuids[i],
                              "--set-timeslice", ts, NULL};
        if (run_tool(p, argv, NULL, 0, NULL, 1, why, sizeof(why)) != DRA_OK) {
            snprintf(err, cap, "error setting time slice: %s", why);
            return DRA_EIO;
        }
    }
    return DRA_OK;
}

/* ---- MPS ---------------------------------------------------------------------- */

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* NVIDIA's GetMpsControlDaemonID. */
static const char *mps_id(dra_arena *a, const char *claim_uid, const char **sorted,
                          size_t n)
{
    dra_buf joined;
    dra_buf_init(&joined, a->mem);
    for (size_t i = 0; i < n; i++) {
        if (i)
            dra_buf_putc(&joined, ',');
        dra_buf_puts(&joined, sorted[i]);
    }
    unsigned char digest[32];
    const char *id = NULL;
    if (!joined.oom && gnutls_hash_fast(GNUTLS_DIG_SHA256, joined.p ? joined.p : "",
                                        joined.len, digest) == 0)
        id = dra_arena_sprintf(a, "%s-%02x%02x%x", claim_uid, digest[0], digest[1],
                               digest[2] >> 4);
    dra_buf_fini(&joined);
    return id;
}

/* The pinned memory limits, "<MiB>M" per UUID (MpsPerDevicePinnedMemoryLimit.Normalize). */
static dra_err mps_limits(dra_arena *a, const plugin_mps_cfg *c, const char **uuids,
                          size_t n, const char ***limits, char *err, size_t cap)
{
    const char **v = dra_arena_array(a, n ? n : 1, sizeof(char *));
    if (!v)
        return DRA_ENOMEM;
    *limits = v;
    if (c->pinned_set && n) {
        int64_t mib = dra_quantity_value(&c->pinned) / 1024 / 1024;
        if (mib <= 0) {
            char q[DRA_QTY_STR_MAX];
            dra_quantity_str(&c->pinned, q, sizeof(q));
            snprintf(err, cap, "invalid limit: default value set too low: %s", q);
            return DRA_EINVAL;
        }
        for (size_t i = 0; i < n; i++)
            v[i] = dra_arena_sprintf(a, "%lldM", (long long)mib);
    }
    for (size_t k = 0; k < c->n_per_dev; k++) {
        const char *key = c->per_dev[k].key;
        long idx = -1;
        for (size_t i = 0; i < n; i++)
            if (strcmp(uuids[i], key) == 0)
                idx = (long)i;
        if (idx < 0) {
            char *end;
            errno = 0;
            long x = strtol(key, &end, 10);
            if (*key == '\0' || *end || errno) {
                snprintf(err, cap, "invalid device: unable to parse key as an integer: %s", key);
                return DRA_EINVAL;
            }
            if (x < 0 || (size_t)x >= n) {
                snprintf(err, cap, "invalid device: invalid device index: %ld", x);
                return DRA_EINVAL;
            }
            idx = x;
        }
        int64_t mib = dra_quantity_value(&c->per_dev[k].q) / 1024 / 1024;
        if (mib <= 0) {
            char q[DRA_QTY_STR_MAX];
            dra_quantity_str(&c->per_dev[k].q, q, sizeof(q));
            snprintf(err, cap, "invalid limit: value set too low: %s: %s", key, q);
            return DRA_EINVAL;
        }
        v[idx] = dra_arena_sprintf(a, "%lldM", (long long)mib);
    }
    return DRA_OK;
}

static const char *mps_root(dra_plugin *p, dra_arena *a, const char *id)
{
    return dra_arena_sprintf(a, "%s/mps/%s", p->plugin_dir, id);
}

/* half of MemTotal in kB, NVIDIA's getDefaultShmSize. */
static long shm_size_kb(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    long kb = 0;
    char line[256];
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "MemTotal: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb > 0 ? kb / 2 : 65536;
}

static dra_err mps_dirs(dra_plugin *p, dra_arena *a, const char *id, char *err, size_t cap)
{
    static const char *const sub[] = {"pipe", "shm", "log"};
    dra_diag d;
    dra_diag_init(&d, p->mem);
    for (int i = 0; i < 3; i++) {
        const char *dir = dra_arena_sprintf(a, "%s/%s", mps_root(p, a, id), sub[i]);
        if (!dir || plugin_mkdirs(dir, 0755, &d) != DRA_OK) {
            snprintf(err, cap, "error creating directory: %s",
                     dra_diag_first(&d) ? dra_diag_first(&d) : "out of memory");
            dra_diag_fini(&d);
            return DRA_EIO;
        }
    }
    dra_diag_fini(&d);
    /* shm is a tmpfs of half the memory in NVIDIA's plugin. Without the
     * privilege to mount, the plain directory serves (MPS works, its
     * shared memory is then on the directory's filesystem). */
    char opts[64];
    snprintf(opts, sizeof(opts), "size=%ldk", shm_size_kb());
    const char *shm = dra_arena_sprintf(a, "%s/shm", mps_root(p, a, id));
    if (shm)
        (void)mount("shm", shm, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RELATIME, opts);
    return DRA_OK;
}

static dra_err mps_launch(dra_plugin *p, dra_arena *a, const char *id, const char **uuids,
                          size_t n, const plugin_mps_cfg *c, const char **limits,
                          char *err, size_t cap)
{
    const char *root = mps_root(p, a, id);
    dra_buf vis;
    dra_buf_init(&vis, p->mem);
    for (size_t i = 0; i < n; i++)
        dra_buf_printf(&vis, "%s%s", i ? "," : "", uuids[i]);
    const char *env[] = {dra_arena_sprintf(a, "CUDA_VISIBLE_DEVICES=%s", vis.p ? vis.p : ""),
                         dra_arena_sprintf(a, "CUDA_MPS_PIPE_DIRECTORY=%s/pipe", root),
                         dra_arena_sprintf(a, "CUDA_MPS_LOG_DIRECTORY=%s/log", root)};
    dra_buf_fini(&vis);
    const char *start[] = {p->mps_control, "-d", NULL};
    char why[700];
    if (run_tool(p, start, env, 3, NULL, 0, why, sizeof(why)) != DRA_OK) {
        snprintf(err, cap, "error starting MPS control daemon: %s", why);
        return DRA_EIO;
    }
    dra_buf cmds;
    dra_buf_init(&cmds, p->mem);
    if (c && c->thread_pct_set)
        dra_buf_printf(&cmds, "set_default_active_thread_percentage %lld\n",
                       (long long)c->thread_pct);
    for (size_t i = 0; i < n; i++)
        if (limits[i])
            dra_buf_printf(&cmds, "set_default_device_pinned_mem_limit %s %s\n", uuids[i],
                           limits[i]);
    dra_err e = DRA_OK;
    /* One command per run, as the daemon's template does with echo. */
    for (char *line = cmds.p; e == DRA_OK && line && *line;) {
        char *nl = strchr(line, '\n');
        *nl = '\0';
        const char *ctl[] = {p->mps_control, NULL};
        const char *in = dra_arena_sprintf(a, "%s\n", line);
        if (run_tool(p, ctl, env, 3, in, 1, why, sizeof(why)) != DRA_OK) {
            snprintf(err, cap, "MPS control daemon is not yet ready: %s", why);
            e = DRA_EIO;
        }
        line = nl + 1;
    }
    dra_buf_fini(&cmds);
    if (e == DRA_OK) {
        const char *log = dra_arena_sprintf(a, "%s/log", root);
        dra_diag d;
        dra_diag_init(&d, p->mem);
        e = plugin_write_atomic(log, "startup.log", "startup complete\n", 17, 0644, 0, &d);
        if (e != DRA_OK)
            snprintf(err, cap, "MPS control daemon is not yet ready: %s", dra_diag_first(&d));
        dra_diag_fini(&d);
    }
    return e;
}

static plugin_edits *mps_edits(dra_arena *a, const char *root)
{
    static const char *const opts[] = {"rw", "nosuid", "nodev", "bind"};
    plugin_edits *ed = dra_arena_zalloc(a, sizeof(*ed));
    const char **env = dra_arena_array(a, 1, sizeof(char *));
    plugin_mount *m = dra_arena_array(a, 2, sizeof(*m));
    if (!ed || !env || !m)
        return NULL;
    env[0] = "CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps";
    m[0].host_path = dra_arena_sprintf(a, "%s/shm", root);
    m[0].container_path = "/dev/shm";
    m[1].host_path = dra_arena_sprintf(a, "%s/pipe", root);
    m[1].container_path = "/tmp/nvidia-mps";
    for (int i = 0; i < 2; i++) {
        m[i].options = opts;
        m[i].n_options = 4;
    }
    ed->env = env;
    ed->n_env = 1;
    ed->mounts = m;
    ed->n_mounts = 2;
    return ed;
}

dra_err plugin_mps_start(dra_plugin *p, dra_arena *a, const char *claim_uid,
                         const char *const *uuids_in, size_t n,
                         const char *const *gpu_uuids, size_t n_gpu,
                         const plugin_mps_cfg *cfg, const char **id_out,
                         plugin_edits **edits, char *err, size_t cap)
{
    const char **uuids = dra_arena_array(a, n ? n : 1, sizeof(char *));
    if (!uuids)
        return DRA_ENOMEM;
    memcpy(uuids, uuids_in, n * sizeof(char *));
    qsort(uuids, n, sizeof(char *), cmp_str);
    const char *id = mps_id(a, claim_uid, uuids, n);
    const char **limits = NULL;
    char why[700];
    if (!id)
        return DRA_ENOMEM;
    if (cfg) {
        dra_err e = mps_limits(a, cfg, uuids, n, &limits, why, sizeof(why));
        if (e != DRA_OK) {
            snprintf(err, cap, "error starting MPS control daemon: error transforming "
                               "DefaultPerDevicePinnedMemoryLimit into string: %s", why);
            return e;
        }
    } else {
        limits = dra_arena_array(a, n ? n : 1, sizeof(char *));
    }
    if (!p->mps_control) {
        snprintf(err, cap, "error starting MPS control daemon: nvidia-cuda-mps-control "
                           "not found in the driver root");
        return DRA_ENOTFOUND;
    }
    if (mps_dirs(p, a, id, why, sizeof(why)) != DRA_OK) {
        snprintf(err, cap, "error starting MPS control daemon: %s", why);
        return DRA_EIO;
    }
    if (n_gpu && (!p->inv->files.nvidia_smi ||
                  set_compute_mode(p, gpu_uuids, n_gpu, "EXCLUSIVE_PROCESS", why,
                                   sizeof(why)) != DRA_OK)) {
        snprintf(err, cap, "error starting MPS control daemon: error setting compute mode: %s",
                 p->inv->files.nvidia_smi ? why : "nvidia-smi not found in the driver root");
        plugin_mps_stop(p, id, why, sizeof(why));
        return DRA_EIO;
    }
    dra_err e = mps_launch(p, a, id, uuids, n, cfg, limits, err, cap);
    if (e != DRA_OK) {
        plugin_mps_stop(p, id, why, sizeof(why));
        return e;
    }
    *edits = mps_edits(a, mps_root(p, a, id));
    *id_out = id;
    return *edits ? DRA_OK : DRA_ENOMEM;
}

static void rm_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char sub[4096];
            snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
            struct stat st;
            if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
                rm_tree(sub);
            else
                unlink(sub);
        }
        closedir(d);
    }
    rmdir(path);
}

dra_err plugin_mps_stop(dra_plugin *p, const char *id, char *err, size_t cap)
{
    dra_arena a;
    dra_arena_init(&a, p->mem);
    const char *root = mps_root(p, &a, id);
    struct stat st;
    dra_err e = DRA_OK;
    if (root && stat(root, &st) == 0) {
        if (p->mps_control) {
            const char *env[] = {dra_arena_sprintf(&a, "CUDA_MPS_PIPE_DIRECTORY=%s/pipe", root),
                                 dra_arena_sprintf(&a, "CUDA_MPS_LOG_DIRECTORY=%s/log", root)};
            const char *ctl[] = {p->mps_control, NULL};
            char why[700];
            /* "quit" to a daemon that is already gone fails: that is fine. */
            (void)run_tool(p, ctl, env, 2, "quit\n", 1, why, sizeof(why));
        }
        const char *shm = dra_arena_sprintf(&a, "%s/shm", root);
        if (shm)
            (void)umount2(shm, MNT_DETACH);
        rm_tree(root);
        if (stat(root, &st) == 0) {
            snprintf(err, cap, "error stopping MPS control daemon: cannot remove %s", root);
            e = DRA_EIO;
        }
    }
    dra_arena_fini(&a);
    return e;
}

void plugin_mps_stop_claim(dra_plugin *p, const char *claim_uid)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/mps", p->plugin_dir);
    DIR *d = opendir(dir);
    if (!d)
        return;
    size_t ul = strlen(claim_uid);
    struct dirent *e;
    char ids[16][256];
    int n = 0;
    while ((e = readdir(d)) != NULL && n < 16)
        if (strncmp(e->d_name, claim_uid, ul) == 0 && e->d_name[ul] == '-')
            snprintf(ids[n++], sizeof(ids[0]), "%s", e->d_name);
    closedir(d);
    for (int i = 0; i < n; i++) {
        char why[256];
        (void)plugin_mps_stop(p, ids[i], why, sizeof(why));
    }
}
