/*
 * bwrap.c: turns a container configuration and its merged CDI edits
 * into what dra-shim runs: the bubblewrap options (namespaces, the
 * read-only host root, a fresh /dev with only the CDI device nodes, CDI
 * mounts, environment), the command, the hooks and the mount points the
 * shim must create first. Checks everything that can be checked before
 * starting, so the caller gets kubelet's CreateContainerError early.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "node_int.h"

typedef struct plan {
    dra_arena *a;
    dra_doc *bwrap, *ensure;
    dra_diag *d;
    const char *dir;
    int as_root;
    dra_err err;
} plan;

static void arg(plan *p, const char *s)
{
    dra_doc *v;
    if (p->err)
        return;
    v = dra_doc_new_string(p->a, s, strlen(s));
    if (!v || dra_doc_list_push(p->a, p->bwrap, v))
        p->err = DRA_ENOMEM;
}

static void args3(plan *p, const char *x, const char *y, const char *z)
{
    arg(p, x);
    arg(p, y);
    if (z)
        arg(p, z);
}

static dra_err bad(plan *p, const char *fmt, ...) DRA_PRINTF(2, 3);
static dra_err bad(plan *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!p->err) {
        dra_diag_vadd(p->d, "", 0, 0, fmt, ap);
        p->err = DRA_EINVAL;
    }
    va_end(ap);
    return p->err;
}

/* Where the sandbox sees a dra-shim that lives in one of its fresh file
 * systems (see node_ctr_plan). */
#define SHIM_IN_SANDBOX "/dev/.dra-shim"

/* Paths the sandbox builds fresh: mount points there need no help. */
static int in_fresh_fs(const char *path)
{
    static const char *const fresh[] = {"/dev", "/proc", "/tmp"};
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(fresh[i]);
        if (strncmp(path, fresh[i], n) == 0 && (path[n] == '/' || path[n] == '\0'))
            return 1;
    }
    return 0;
}

/* Records that |path| must exist before bwrap binds onto it. */
static void ensure(plan *p, const char *path, int is_dir)
{
    struct stat st;
    dra_doc *m;
    if (p->err || in_fresh_fs(path) || lstat(path, &st) == 0)
        return;
    if (!p->as_root) {
        bad(p, "cannot create mount point %s: it does not exist on the host, and creating it needs root", path);
        return;
    }
    m = dra_doc_new_map(p->a, 2);
    if (!m || dra_doc_map_set(p->a, m, "path", dra_doc_new_string(p->a, path, strlen(path))) ||
        dra_doc_map_set(p->a, m, "dir", dra_doc_new_bool(p->a, is_dir)) ||
        dra_doc_list_push(p->a, p->ensure, m))
        p->err = DRA_ENOMEM;
}

static int has_opt(const dra_node_cdi_mount *m, const char *o)
{
    for (size_t i = 0; i < m->n_options; i++)
        if (strcmp(m->options[i], o) == 0)
            return 1;
    return 0;
}

static void plan_mount(plan *p, const dra_node_cdi_mount *m)
{
    struct stat st;
    const char *type = m->type ? m->type : "";
    int is_bind = strcmp(type, "bind") == 0 || has_opt(m, "bind") || has_opt(m, "rbind");
    if (m->container_path[0] != '/')
        return (void)bad(p, "CDI mount %s: the container path must be absolute", m->container_path);
    if (strcmp(type, "tmpfs") == 0 && !is_bind) {
        ensure(p, m->container_path, 1);
        args3(p, "--tmpfs", m->container_path, NULL);
        return;
    }
    if (!is_bind && type[0] && strcmp(type, "none") != 0)
        return (void)bad(p, "CDI mount %s: mount type \"%s\" is not supported by this runtime (bind and tmpfs are)",
                         m->container_path, type);
    if (stat(m->host_path, &st) != 0)
        return (void)bad(p, "CDI mount %s: host path \"%s\": %s", m->container_path, m->host_path,
                         strerror(errno));
    ensure(p, m->container_path, S_ISDIR(st.st_mode));
    args3(p, has_opt(m, "ro") ? "--ro-bind" : "--bind", m->host_path, m->container_path);
}

/* A device node: bound from its host path. One that is missing on the
 * host but fully specified (type and major) is created in the
 * container's directory first, as a runtime would mknod it. */
static void plan_device(plan *p, const dra_node_cdi_device_node *dn, size_t i)
{
    const char *host = dn->host_path ? dn->host_path : dn->path;
    struct stat st;
    int minimal = dn->type[0] && (dn->major != 0 || dn->type[0] == 'p');
    if (dn->path[0] != '/')
        return (void)bad(p, "CDI device %s: the path must be absolute", dn->path);
    if (stat(host, &st) != 0) {
        char *made;
        mode_t kind = dn->type[0] == 'b' ? S_IFBLK : dn->type[0] == 'p' ? S_IFIFO : S_IFCHR;
        if (!minimal)
            return (void)bad(p, "failed to stat CDI host device \"%s\": %s", host, strerror(errno));
        if (!(made = dra_arena_sprintf(p->a, "%s/dev%zu", p->dir, i))) {
            p->err = DRA_ENOMEM;
            return;
        }
        unlink(made);
        if (mknod(made, kind | (dn->file_mode >= 0 ? (mode_t)dn->file_mode & 07777 : 0666),
                  makedev((unsigned)dn->major, (unsigned)dn->minor)) != 0)
            return (void)bad(p, "CDI device %s: host path \"%s\" does not exist and creating the node failed: %s",
                             dn->path, host, strerror(errno));
        host = made;
    } else if (S_ISDIR(st.st_mode)) {
        return (void)bad(p, "CDI device %s: host path \"%s\" is a directory", dn->path, host);
    }
    ensure(p, dn->path, 0);
    args3(p, "--dev-bind", host, dn->path);
}

static void plan_env(plan *p, const char *kv)
{
    const char *eq = strchr(kv, '=');
    char *k;
    if (!eq || eq == kv)
        return (void)bad(p, "invalid environment variable \"%s\"", kv);
    if (!(k = dra_arena_strndup(p->a, kv, (size_t)(eq - kv)))) {
        p->err = DRA_ENOMEM;
        return;
    }
    args3(p, "--setenv", k, eq + 1);
}

static void plan_edits(plan *p, const dra_node_cdi_edits *e)
{
    if (e->n_net_devices)
        bad(p, "CDI netDevices are not supported by this runtime (containers share the host's network)");
    if (e->has_intel_rdt)
        bad(p, "CDI intelRdt is not supported by this runtime");
    if (e->n_additional_gids)
        bad(p, "CDI additionalGids are not supported by this runtime");
    for (size_t i = 0; i < e->n_mounts; i++)
        plan_mount(p, &e->mounts[i]);
    for (size_t i = 0; i < e->n_device_nodes; i++)
        plan_device(p, &e->device_nodes[i], i);
}

static dra_doc *str_list(dra_arena *a, const char *const *v, size_t n)
{
    dra_doc *l = dra_doc_new_list(a, n);
    for (size_t i = 0; l && i < n; i++) {
        dra_doc *s = dra_doc_new_string(a, v[i], strlen(v[i]));
        if (!s || dra_doc_list_push(a, l, s))
            return NULL;
    }
    return l;
}

static dra_doc *hooks_doc(dra_arena *a, const dra_node_cdi_edits *e)
{
    dra_doc *l = dra_doc_new_list(a, e ? e->n_hooks : 0);
    for (size_t i = 0; l && e && i < e->n_hooks; i++) {
        const dra_node_cdi_hook *h = &e->hooks[i];
        dra_doc *m = dra_doc_new_map(a, 5);
        if (!m || dra_doc_map_set(a, m, "hookName", dra_doc_new_string(a, h->hook_name, strlen(h->hook_name))) ||
            dra_doc_map_set(a, m, "path", dra_doc_new_string(a, h->path, strlen(h->path))) ||
            dra_doc_map_set(a, m, "args", str_list(a, h->args, h->n_args)) ||
            dra_doc_map_set(a, m, "env", str_list(a, h->env, h->n_env)) ||
            (h->timeout >= 0 && dra_doc_map_set(a, m, "timeout", dra_doc_new_int(a, h->timeout))) ||
            dra_doc_list_push(a, l, m))
            return NULL;
    }
    return l;
}

/* The fixed part: namespaces, the root, /dev, /proc, /tmp. */
static void plan_base(plan *p, const char *bwrap, const dra_node_ctr_config *cfg)
{
    arg(p, bwrap);
    if (!p->as_root) {
        args3(p, "--unshare-user", "--uid", "0");
        args3(p, "--gid", "0", NULL);
    }
    args3(p, "--unshare-pid", "--as-pid-1", "--die-with-parent");
    arg(p, "--new-session");
    if (cfg->hostname)
        args3(p, "--unshare-uts", "--hostname", cfg->hostname);
    args3(p, "--ro-bind", "/", "/");
    args3(p, "--dev", "/dev", NULL);
    args3(p, "--proc", "/proc", NULL);
    args3(p, "--tmpfs", "/tmp", NULL);
}

static int id_ok(const char *id)
{
    size_t n = id ? strlen(id) : 0;
    if (n == 0 || n > 128 || id[0] == '.')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(id[i] == '_' || id[i] == '-' || id[i] == '.' || (id[i] >= '0' && id[i] <= '9') ||
              (id[i] >= 'a' && id[i] <= 'z') || (id[i] >= 'A' && id[i] <= 'Z')))
            return 0;
    return 1;
}

/* The configuration dra-shim reads (see shim.c). DRA_OK; DRA_EINVAL
 * (message in |d|); DRA_ENOMEM. */
dra_err node_ctr_plan(dra_arena *a, const dra_node_ctr_config *cfg, const char *bwrap,
                      const char *shim, const char *dir, int as_root, dra_doc **out,
                      dra_diag *d)
{
    plan p = {a, dra_doc_new_list(a, 32), dra_doc_new_list(a, 4), d, dir, as_root, DRA_OK};
    dra_doc *m = dra_doc_new_map(a, 10);
    const char *cwd = cfg->working_dir && cfg->working_dir[0] ? cfg->working_dir : "/";
    if (!p.bwrap || !p.ensure || !m)
        return DRA_ENOMEM;
    if (!id_ok(cfg->id))
        return bad(&p, "invalid container id \"%s\"", cfg->id ? cfg->id : "");
    if (cfg->argc == 0 || !cfg->argv[0] || !cfg->argv[0][0])
        return bad(&p, "no command specified");
    if (cwd[0] != '/')
        return bad(&p, "the working directory \"%s\" is not absolute", cwd);
    plan_base(&p, bwrap, cfg);
    /* The sandbox runs dra-shim's init by path. One under /tmp (a build
     * tree there) would be hidden by the container's own /tmp: bind it
     * into the fresh /dev instead. */
    if (in_fresh_fs(shim)) {
        args3(&p, "--ro-bind", shim, SHIM_IN_SANDBOX);
        shim = SHIM_IN_SANDBOX;
    }
    if (cfg->edits)
        plan_edits(&p, cfg->edits);
    arg(&p, "--clearenv");
    for (size_t i = 0; i < cfg->n_env; i++)
        plan_env(&p, cfg->env[i]);
    for (size_t i = 0; cfg->edits && i < cfg->edits->n_env; i++)
        plan_env(&p, cfg->edits->env[i]);
    if (p.err)
        return p.err;
    if (dra_doc_map_set(a, m, "id", dra_doc_new_string(a, cfg->id, strlen(cfg->id))) ||
        dra_doc_map_set(a, m, "dir", dra_doc_new_string(a, dir, strlen(dir))) ||
        dra_doc_map_set(a, m, "shim", dra_doc_new_string(a, shim, strlen(shim))) ||
        dra_doc_map_set(a, m, "log", dra_doc_new_string(a, cfg->log_path, strlen(cfg->log_path))) ||
        dra_doc_map_set(a, m, "cwd", dra_doc_new_string(a, cwd, strlen(cwd))) ||
        dra_doc_map_set(a, m, "bwrap", p.bwrap) || dra_doc_map_set(a, m, "ensure", p.ensure) ||
        dra_doc_map_set(a, m, "command", str_list(a, cfg->argv, cfg->argc)) ||
        dra_doc_map_set(a, m, "hooks", hooks_doc(a, cfg->edits)))
        return DRA_ENOMEM;
    *out = m;
    return DRA_OK;
}
