/*
 * load.c: finds libnvidia-ml.so.1 under the driver root the way NVIDIA's
 * kubelet plugin does (root first, then its list of library directories,
 * symlinks resolved), dlopens it and resolves every function the module
 * calls, so a missing symbol is reported once, at start, by name.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_int.h"

static const char *const lib_dirs[] = {
    "/",     "/usr/lib64", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
    "/lib64", "/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu"};

/* "/" and "" mean the file system root; trailing slashes are dropped. */
static char *norm_root(const dra_mem *mem, const char *r)
{
    if (!r)
        r = "";
    size_t n = strlen(r);
    while (n > 0 && r[n - 1] == '/')
        n--;
    char *s = dra_malloc(mem, n + 1);
    if (s) {
        memcpy(s, r, n);
        s[n] = 0;
    }
    return s;
}

static dra_err find_lib(dra_gpu *g, dra_diag *d)
{
    dra_buf tried;
    char path[PATH_MAX], real[PATH_MAX];
    dra_buf_init(&tried, g->mem);
    for (size_t i = 0; i < sizeof lib_dirs / sizeof *lib_dirs; i++) {
        snprintf(path, sizeof path, "%s%s%slibnvidia-ml.so.1", g->root, lib_dirs[i],
                 lib_dirs[i][1] ? "/" : "");
        if (realpath(path, real)) {
            dra_buf_fini(&tried);
            g->lib_path = dra_strdup(g->mem, real);
            return g->lib_path ? DRA_OK : DRA_ENOMEM;
        }
        dra_buf_printf(&tried, "%s%s", i ? ", " : "", path);
    }
    dra_err err = tried.oom ? DRA_ENOMEM : DRA_ENOTFOUND;
    if (!tried.oom)
        dra_diag_add(d, "", 0, 0,
                     "NVML not found under the NVIDIA driver root \"%s\": no "
                     "libnvidia-ml.so.1 at %s",
                     g->root[0] ? g->root : "/", tried.p);
    dra_buf_fini(&tried);
    return err;
}

static dra_err resolve(dra_gpu *g, dra_diag *d)
{
#define GPU_X(name, ret, args)                                                \
    *(void **)(&g->nv.name) = dlsym(g->dl, #name);                            \
    if (!g->nv.name) {                                                        \
        dra_diag_add(d, "", 0, 0, "%s: NVML function %s not found (driver too " \
                     "old, or not NVML)", g->lib_path, #name);                \
        return DRA_EUNSUPPORTED;                                              \
    }
    NV_FUNCS(GPU_X)
#undef GPU_X
#define GPU_X(name, ret, args) *(void **)(&g->nv.name) = dlsym(g->dl, #name);
    NV_OPTIONAL_FUNCS(GPU_X)
#undef GPU_X
    *(void **)(&g->nv.fake_last_error) = dlsym(g->dl, "draFakeNvmlLastError");
    return DRA_OK;
}

dra_err dra_gpu_open(const dra_gpu_opts *opts, dra_gpu **out, dra_diag *d)
{
    static const dra_gpu_opts none;
    if (!out)
        return DRA_EINVAL;
    *out = NULL;
    if (!opts)
        opts = &none;
    dra_gpu *g = dra_calloc(opts->mem, 1, sizeof *g);
    if (!g)
        return DRA_ENOMEM;
    g->mem = opts->mem;
    g->root = norm_root(g->mem, opts->driver_root);
    g->host_root = norm_root(g->mem, opts->host_driver_root ? opts->host_driver_root
                                                            : opts->driver_root);
    dra_err err = g->root && g->host_root ? DRA_OK : DRA_ENOMEM;
    if (!err && opts->nvml_path) {
        char real[PATH_MAX];
        g->lib_path = dra_strdup(g->mem, realpath(opts->nvml_path, real) ? real
                                                                          : opts->nvml_path);
        err = g->lib_path ? DRA_OK : DRA_ENOMEM;
    } else if (!err) {
        err = find_lib(g, d);
    }
    if (!err) {
        g->dl = dlopen(g->lib_path, RTLD_NOW | RTLD_LOCAL);
        if (!g->dl) {
            const char *why = dlerror();
            dra_diag_add(d, "", 0, 0, "cannot load NVML: %s", why ? why : g->lib_path);
            err = DRA_EIO;
        }
    }
    if (!err)
        err = resolve(g, d);
    if (err) {
        dra_gpu_close(g);
        return err;
    }
    *out = g;
    return DRA_OK;
}

void dra_gpu_close(dra_gpu *g)
{
    if (!g)
        return;
    if (g->dl)
        dlclose(g->dl);
    dra_free(g->mem, g->root);
    dra_free(g->mem, g->host_root);
    dra_free(g->mem, g->lib_path);
    dra_free(g->mem, g);
}

const char *dra_gpu_nvml_path(const dra_gpu *g)
{
    return g ? g->lib_path : NULL;
}

const char *gpu_nv_error(const dra_gpu *g, nv_return rc, char *buf, size_t size)
{
    const char *s = g->nv.nvmlErrorString ? g->nv.nvmlErrorString(rc) : NULL;
    const char *extra = g->nv.fake_last_error ? g->nv.fake_last_error() : NULL;
    if (extra && *extra)
        snprintf(buf, size, "%s (%s)", s ? s : "unknown NVML error", extra);
    else if (s)
        snprintf(buf, size, "%s", s);
    else
        snprintf(buf, size, "NVML error %d", rc);
    return buf;
}

char *gpu_join(dra_arena *a, const char *root, const char *rel)
{
    return dra_arena_sprintf(a, "%s%s", root, rel);
}
