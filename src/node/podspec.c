/*
 * podspec.c: from a container of the pod spec to the runtime's
 * configuration, as kubelet and containerd build it: the command and
 * args with $(VAR) references expanded, the environment (env with
 * values and the pod-field references kubelet resolves), the working
 * directory, and the CDI edits of the devices of the claims the
 * container names in resources.claims (all the claim's devices, or the
 * named request's). Images are not pulled, so the command must be given.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "pod_int.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

typedef struct envset {
    const char **kv; /* "K=V" in |a| */
    size_t n, cap;
    dra_arena *a;
} envset;

static const char *env_get(const envset *e, const char *k, size_t klen)
{
    for (size_t i = e->n; i-- > 0;)
        if (strncmp(e->kv[i], k, klen) == 0 && e->kv[i][klen] == '=')
            return e->kv[i] + klen + 1;
    return NULL;
}

/* Later values of a name replace earlier ones, in place. */
static dra_err env_put(envset *e, const char *k, const char *v)
{
    size_t klen = strlen(k);
    char *kv = dra_arena_sprintf(e->a, "%s=%s", k, v);
    if (!kv)
        return DRA_ENOMEM;
    for (size_t i = 0; i < e->n; i++)
        if (strncmp(e->kv[i], k, klen) == 0 && e->kv[i][klen] == '=') {
            e->kv[i] = kv;
            return DRA_OK;
        }
    if (e->n == e->cap) {
        const char **nv = dra_arena_array(e->a, e->cap * 2 + 16, sizeof *nv);
        if (!nv)
            return DRA_ENOMEM;
        if (e->n)
            memcpy(nv, e->kv, e->n * sizeof *nv);
        e->kv = nv;
        e->cap = e->cap * 2 + 16;
    }
    e->kv[e->n++] = kv;
    return DRA_OK;
}

/* kubelet's expansion.Expand: $(NAME) from |env| when defined, $$ is a
 * literal $, anything else is kept as written. */
static char *expand(dra_arena *a, const char *s, const envset *env)
{
    dra_buf b;
    char *out;
    dra_buf_init(&b, NULL);
    for (const char *p = s; *p; p++) {
        const char *close, *v;
        if (p[0] != '$' || !p[1]) {
            dra_buf_putc(&b, *p);
            continue;
        }
        if (p[1] == '$') {
            dra_buf_putc(&b, '$');
            p++;
            continue;
        }
        if (p[1] == '(' && (close = strchr(p + 2, ')')) != NULL &&
            (v = env_get(env, p + 2, (size_t)(close - p - 2))) != NULL) {
            dra_buf_puts(&b, v);
            p = close;
            continue;
        }
        dra_buf_putc(&b, '$');
    }
    out = b.oom ? NULL : dra_arena_strdup(a, b.p ? b.p : "");
    dra_buf_fini(&b);
    return out;
}

/* metadata.labels['k'] and metadata.annotations['k']. */
static const char *map_field(const dra_doc *pod, const char *path, const char *prefix, const char *where)
{
    size_t n = strlen(prefix);
    char key[320];
    size_t len;
    if (strncmp(path, prefix, n) != 0)
        return NULL;
    len = strlen(path + n);
    if (len < 2 || len - 2 >= sizeof key || path[n + len - 1] != ']' || path[n + len - 2] != '\'')
        return NULL;
    memcpy(key, path + n, len - 2);
    key[len - 2] = '\0';
    return node_doc_str(dra_doc_at(pod, where), key);
}

/* A fieldRef the kubelet resolves (podFieldSelectorRuntimeValue). */
static const char *field_value(pod_state *ps, const char *path, int *known)
{
    const char *ip = ps->n->o.internal_ip;
    const char *v;
    *known = 1;
    if (strcmp(path, "metadata.name") == 0)
        return ps->name;
    if (strcmp(path, "metadata.namespace") == 0)
        return ps->ns;
    if (strcmp(path, "metadata.uid") == 0)
        return ps->uid;
    if (strcmp(path, "spec.nodeName") == 0)
        return ps->n->o.name;
    if (strcmp(path, "spec.serviceAccountName") == 0)
        return (v = dra_obj_str(ps->pod, "spec.serviceAccountName")) ? v : "";
    if (strcmp(path, "status.hostIP") == 0 || strcmp(path, "status.hostIPs") == 0 ||
        strcmp(path, "status.podIP") == 0 || strcmp(path, "status.podIPs") == 0)
        return ip;
    if ((v = map_field(ps->pod, path, "metadata.labels['", "metadata.labels")) != NULL ||
        (v = map_field(ps->pod, path, "metadata.annotations['", "metadata.annotations")) != NULL)
        return v;
    if (strncmp(path, "metadata.labels['", 17) == 0 || strncmp(path, "metadata.annotations['", 22) == 0)
        return "";
    *known = 0;
    return NULL;
}

static int is_optional(const dra_doc *ref)
{
    const dra_doc *o = dra_doc_get(ref, "optional");
    return o && o->kind == DRA_DOC_BOOL && o->u.b;
}

/* One env entry; DRA_EINVALID (with |msg|) for what cannot be given. */
static dra_err env_entry(pod_state *ps, const dra_doc *ev, envset *env, char *msg, size_t size)
{
    const char *name = node_doc_str(ev, "name"), *val = node_doc_str(ev, "value");
    const dra_doc *from = dra_doc_get(ev, "valueFrom"), *ref;
    if (!name)
        return DRA_OK;
    if (!from) {
        char *x = expand(env->a, val ? val : "", env);
        return x ? env_put(env, name, x) : DRA_ENOMEM;
    }
    if ((ref = dra_doc_get(from, "fieldRef")) != NULL) {
        const char *path = node_doc_str(ref, "fieldPath");
        int known;
        const char *v = path ? field_value(ps, path, &known) : NULL;
        if (!v)
            return node_errf(msg, size, "unsupported fieldPath: %s", path ? path : ""), DRA_EINVALID;
        return env_put(env, name, v);
    }
    if ((ref = dra_doc_get(from, "configMapKeyRef")) != NULL || (ref = dra_doc_get(from, "secretKeyRef")) != NULL) {
        int cm = dra_doc_get(from, "configMapKeyRef") != NULL;
        if (is_optional(ref))
            return DRA_OK;
        return node_errf(msg, size, "%s \"%s\" not found (drad serves no %s)", cm ? "configmap" : "secret",
                        node_doc_str(ref, "name") ? node_doc_str(ref, "name") : "", cm ? "ConfigMaps" : "Secrets"),
               DRA_EINVALID;
    }
    return node_errf(msg, size, "env %s: this valueFrom source is not supported by drad's node agent", name),
           DRA_EINVALID;
}

static dra_err build_env(pod_state *ps, const ctr_state *c, envset *env, char *msg, size_t size)
{
    const dra_doc *list = dra_doc_get(c->spec, "env"), *from = dra_doc_get(c->spec, "envFrom");
    dra_err e;
    if ((e = env_put(env, "PATH", DEFAULT_PATH)) || (e = env_put(env, "HOSTNAME", ps->name)))
        return e;
    for (size_t i = 0; from && from->kind == DRA_DOC_LIST && i < from->u.list.n; i++) {
        const dra_doc *f = from->u.list.items[i];
        const dra_doc *ref = dra_doc_get(f, "configMapRef") ? dra_doc_get(f, "configMapRef")
                                                            : dra_doc_get(f, "secretRef");
        if (ref && is_optional(ref))
            continue;
        return node_errf(msg, size, "%s \"%s\" not found (drad serves no ConfigMaps or Secrets)",
                        dra_doc_get(f, "configMapRef") ? "configmap" : "secret",
                        node_doc_str(ref, "name") ? node_doc_str(ref, "name") : ""),
               DRA_EINVALID;
    }
    for (size_t i = 0; list && list->kind == DRA_DOC_LIST && i < list->u.list.n; i++)
        if ((e = env_entry(ps, list->u.list.items[i], env, msg, size)) != DRA_OK)
            return e;
    return DRA_OK;
}

/* command + args, expanded; the image's entrypoint is unknown. */
static dra_err build_argv(const ctr_state *c, const envset *env, dra_arena *a, dra_node_ctr_config *cfg,
                          char *msg, size_t size)
{
    const dra_doc *cmd = dra_doc_get(c->spec, "command"), *args = dra_doc_get(c->spec, "args");
    size_t nc = cmd && cmd->kind == DRA_DOC_LIST ? cmd->u.list.n : 0;
    size_t na = args && args->kind == DRA_DOC_LIST ? args->u.list.n : 0;
    const char **v;
    if (nc == 0)
        return node_errf(msg, size,
                        "container %s has no command: drad runs containers on the host's file system without "
                        "pulling images, so the image's entrypoint is unknown; give spec.containers[].command",
                        c->name),
               DRA_EINVALID;
    if (!(v = dra_arena_array(a, nc + na, sizeof *v)))
        return DRA_ENOMEM;
    for (size_t i = 0; i < nc + na; i++) {
        const dra_doc *it = i < nc ? cmd->u.list.items[i] : args->u.list.items[i - nc];
        if (it->kind != DRA_DOC_STRING || !(v[i] = expand(a, it->u.str.s, env)))
            return it->kind != DRA_DOC_STRING ? DRA_EINVALID : DRA_ENOMEM;
    }
    cfg->argv = v;
    cfg->argc = nc + na;
    return DRA_OK;
}

/* The CDI ids of the claims the container names. */
static dra_err container_cdi(pod_state *ps, const ctr_state *c, dra_arena *a, const char ***ids, size_t *n_ids)
{
    const dra_doc *claims = dra_doc_at(c->spec, "resources.claims");
    const char **all = NULL;
    size_t n = 0;
    *ids = NULL;
    *n_ids = 0;
    for (size_t i = 0; claims && claims->kind == DRA_DOC_LIST && i < claims->u.list.n; i++) {
        const char *cn = node_doc_str(claims->u.list.items[i], "name");
        const char *req = node_doc_str(claims->u.list.items[i], "request");
        const char **got;
        size_t ng;
        for (size_t r = 0; cn && r < ps->n_refs; r++) {
            const char **nv;
            if (strcmp(ps->refs[r].pod_claim, cn) != 0)
                continue;
            if (node_claims_cdi(ps->n, ps->refs[r].uid, req, a, &got, &ng) != DRA_OK || ng == 0)
                continue;
            if (!(nv = dra_arena_array(a, n + ng, sizeof *nv)))
                return DRA_ENOMEM;
            if (n)
                memcpy(nv, all, n * sizeof *nv);
            memcpy(nv + n, got, ng * sizeof *nv);
            all = nv;
            n += ng;
        }
    }
    *ids = all;
    *n_ids = n;
    return DRA_OK;
}

/* spec.hostname, else the pod name cut to 63 characters without a
 * trailing '-' or '.', as the kubelet does. */
static const char *pod_hostname(pod_state *ps, dra_arena *a)
{
    const char *h = dra_obj_str(ps->pod, "spec.hostname");
    size_t n;
    char *v;
    if (h && h[0])
        return h;
    n = strlen(ps->name);
    if (n <= 63)
        return ps->name;
    if (!(v = dra_arena_strndup(a, ps->name, 63)))
        return ps->name;
    for (n = 63; n > 1 && (v[n - 1] == '-' || v[n - 1] == '.'); n--)
        v[n - 1] = '\0';
    return v;
}

dra_err pod_ctr_config(pod_state *ps, const ctr_state *c, const char *id, const char *log_path,
                       dra_arena *a, dra_node_ctr_config *cfg, const char **reason, char *msg,
                       size_t size)
{
    envset env = {NULL, 0, 0, a};
    const char **ids;
    size_t n_ids;
    dra_node_cdi_edits *edits;
    dra_diag d;
    dra_err e;
    memset(cfg, 0, sizeof *cfg);
    *reason = "CreateContainerConfigError";
    if ((e = build_env(ps, c, &env, msg, size)) != DRA_OK)
        return e;
    *reason = "CreateContainerError";
    if ((e = build_argv(c, &env, a, cfg, msg, size)) != DRA_OK)
        return e;
    if ((e = container_cdi(ps, c, a, &ids, &n_ids)) != DRA_OK)
        return e;
    if (!(edits = dra_arena_zalloc(a, sizeof *edits)))
        return DRA_ENOMEM;
    dra_diag_init(&d, NULL);
    e = dra_node_cdi_resolve(ps->n->cdi_dirs, ps->n->n_cdi_dirs, ids, n_ids, a, edits, &d);
    if (e && e != DRA_ENOMEM)
        node_errf(msg, size, "failed to create containerd container: CDI device injection failed: %s",
                 dra_diag_first(&d) ? dra_diag_first(&d) : dra_strerror(e));
    dra_diag_fini(&d);
    if (e)
        return e == DRA_ENOMEM ? e : DRA_EINVALID;
    cfg->id = id;
    cfg->env = env.kv;
    cfg->n_env = env.n;
    cfg->working_dir = node_doc_str(c->spec, "workingDir");
    cfg->hostname = pod_hostname(ps, a);
    cfg->edits = edits;
    cfg->log_path = log_path;
    return DRA_OK;
}
