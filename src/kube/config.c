/*
 * config.c: client configuration the way kubectl finds it. Reads one
 * kubeconfig or merges the $KUBECONFIG list (first definition of a name
 * wins), picks the context, resolves its cluster and user into a
 * dra_kube_config (relative paths against the defining file, *-data
 * fields base64-decoded); or builds the in-cluster config from the
 * service account. Messages follow client-go's clientcmd wording.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kube_common.h"

#define KUBE_CONFIG_MAX (16u << 20)

/* ---- small helpers ------------------------------------------------------ */

void dra_kube_config_init(dra_kube_config *cfg, const dra_mem *mem)
{
    memset(cfg, 0, sizeof *cfg);
    dra_arena_init(&cfg->arena, mem);
    cfg->ns = "default";
    cfg->timeout_ms = 60000;
    cfg->connect_timeout_ms = 10000;
    cfg->burst = 10;
}

void dra_kube_config_fini(dra_kube_config *cfg)
{
    if (!cfg)
        return;
    dra_arena_fini(&cfg->arena);
    memset(cfg, 0, sizeof *cfg);
}

dra_err kube_read_file(dra_arena *a, const char *path, size_t max, char **out,
                       size_t *len, dra_diag *d)
{
    FILE *f = fopen(path, "rb");
    char *p;
    long n;
    if (!f) {
        int e = errno;
        dra_diag_add(d, "", 0, 0, "open %s: %s", path, strerror(e));
        return e == ENOENT ? DRA_ENOTFOUND : DRA_EIO;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        dra_diag_add(d, "", 0, 0, "read %s: not a regular file", path);
        return DRA_EIO;
    }
    if ((size_t)n > max) {
        fclose(f);
        dra_diag_add(d, "", 0, 0, "read %s: larger than %zu bytes", path, max);
        return DRA_ETOOLARGE;
    }
    p = dra_arena_alloc(a, (size_t)n + 1);
    if (!p) {
        fclose(f);
        return DRA_ENOMEM;
    }
    if (fread(p, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        dra_diag_add(d, "", 0, 0, "read %s: %s", path, strerror(errno));
        return DRA_EIO;
    }
    fclose(f);
    p[n] = '\0';
    *out = p;
    if (len)
        *len = (size_t)n;
    return DRA_OK;
}

static int b64_val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* Go's base64.StdEncoding: padded quanta of four; padding only at the end. */
static int b64_quad(const unsigned char q[4], char *o, size_t *on)
{
    int v[4];
    for (int i = 0; i < 4; i++)
        v[i] = b64_val(q[i]);
    if (v[0] < 0 || v[1] < 0)
        return -1;
    o[0] = (char)(v[0] << 2 | v[1] >> 4);
    if (q[2] == '=') {
        *on = 1;
        return q[3] == '=' ? 1 : -1;
    }
    if (v[2] < 0)
        return -1;
    o[1] = (char)((v[1] & 15) << 4 | v[2] >> 2);
    if (q[3] == '=') {
        *on = 2;
        return 1;
    }
    if (v[3] < 0)
        return -1;
    o[2] = (char)((v[2] & 3) << 6 | v[3]);
    *on = 3;
    return 0;
}

size_t kube_base64(dra_arena *a, const char *s, size_t n, char **out,
                   size_t *len)
{
    char *p = dra_arena_alloc(a, n / 4 * 3 + 4);
    unsigned char quad[4];
    size_t q = 0, o = 0;
    int done = 0;
    if (!p)
        return (size_t)-1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n' || c == '\r')
            continue;
        if (done)
            return i + 1; /* data after the padding */
        quad[q++] = c;
        if (q == 4) {
            size_t k = 0;
            int r = b64_quad(quad, p + o, &k);
            if (r < 0)
                return i + 1;
            o += k;
            done = r;
            q = 0;
        }
    }
    if (q)
        return n + 1; /* a truncated quantum */
    p[o] = '\0';
    *out = p;
    *len = o;
    return 0;
}

/* ---- kubeconfig files and their merge ------------------------------------ */

/* One named cluster, user or context, as the first file defined it. */
typedef struct kc_entry {
    const dra_doc *body; /* the "cluster"/"user"/"context" map; may be NULL */
    const char *dir;     /* directory of the defining file */
    int file;            /* index of that file */
} kc_entry;

typedef struct kc_merged {
    dra_arena *a;
    dra_map clusters, users, contexts;
    const char *current;
    int files;   /* files read so far */
    int entries; /* names defined, all files */
} kc_merged;

static const char *doc_str(const dra_doc *map, const char *key)
{
    const dra_doc *v = dra_doc_get(map, key);
    return v && v->kind == DRA_DOC_STRING ? v->u.str.s : NULL;
}

static const char *dir_of(dra_arena *a, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return ".";
    if (slash == path)
        return "/";
    return dra_arena_strndup(a, path, (size_t)(slash - path));
}

/* Adds the entries of list |key| (clusters, users, contexts) of one file:
 * within a file the last definition of a name wins, across files the
 * first (clientcmd's merge). */
static dra_err merge_list(kc_merged *m, dra_map *into, const dra_doc *root,
                          const char *key, const char *body_key,
                          const char *dir, int file)
{
    const dra_doc *l = dra_doc_get(root, key);
    if (!l || l->kind == DRA_DOC_NULL)
        return DRA_OK;
    if (l->kind != DRA_DOC_LIST)
        return DRA_EPARSE;
    for (size_t i = 0; i < l->u.list.n; i++) {
        const dra_doc *it = l->u.list.items[i];
        const char *name = doc_str(it, "name");
        kc_entry *e;
        if (it->kind != DRA_DOC_MAP || !name)
            return DRA_EPARSE;
        e = dra_map_get(into, name, strlen(name));
        if (e && e->file != file)
            continue;
        if (!e && !(e = dra_arena_zalloc(m->a, sizeof *e)))
            return DRA_ENOMEM;
        e->body = dra_doc_get(it, body_key);
        e->dir = dir;
        e->file = file;
        if (dra_map_put(into, name, strlen(name), e) != DRA_OK)
            return DRA_ENOMEM;
        m->entries++;
    }
    return DRA_OK;
}

/* Reads and merges one file. A missing file is skipped unless
 * |explicit|. */
static dra_err merge_file(kc_merged *m, const char *path, int explicit_,
                          dra_diag *d)
{
    char *text = NULL;
    size_t len = 0, n = 0;
    dra_doc **docs = NULL;
    const char *dir, *cur;
    dra_diag yd;
    dra_err err = kube_read_file(m->a, path, KUBE_CONFIG_MAX, &text, &len,
                                 NULL);
    if (err == DRA_ENOTFOUND && !explicit_)
        return DRA_OK;
    if (err == DRA_ENOTFOUND) {
        dra_diag_add(d, "", 0, 0, "stat %s: no such file or directory", path);
        return err;
    }
    if (err) {
        dra_diag_add(d, "", 0, 0, "error loading config file \"%s\": %s", path,
                     err == DRA_ENOMEM ? "out of memory" : "cannot read it");
        return err;
    }
    m->files++;
    dra_diag_init(&yd, m->a->mem);
    err = dra_doc_parse_yaml(m->a, text, len, &docs, &n, &yd);
    if (err == DRA_OK && n > 0 && docs[0]->kind != DRA_DOC_MAP &&
        docs[0]->kind != DRA_DOC_NULL)
        err = DRA_EPARSE;
    if (err != DRA_OK) {
        dra_diag_add(d, "", 0, 0, "error loading config file \"%s\": %s", path,
                     dra_diag_first(&yd) ? dra_diag_first(&yd)
                                         : "not a kubeconfig object");
        dra_diag_fini(&yd);
        return err == DRA_ENOMEM ? err : DRA_EPARSE;
    }
    dra_diag_fini(&yd);
    if (n == 0 || docs[0]->kind != DRA_DOC_MAP)
        return DRA_OK; /* an empty file is an empty config */
    dir = dir_of(m->a, path);
    if (!dir)
        return DRA_ENOMEM;
    err = merge_list(m, &m->clusters, docs[0], "clusters", "cluster", dir,
                     m->files);
    if (!err)
        err = merge_list(m, &m->users, docs[0], "users", "user", dir, m->files);
    if (!err)
        err = merge_list(m, &m->contexts, docs[0], "contexts", "context", dir,
                         m->files);
    if (err == DRA_EPARSE)
        dra_diag_add(d, "", 0, 0,
                     "error loading config file \"%s\": clusters, users and "
                     "contexts must be lists of {name, ...} entries", path);
    cur = doc_str(docs[0], "current-context");
    if (!err && cur && cur[0] && !m->current)
        m->current = cur;
    return err;
}

/* ---- resolving a context ------------------------------------------------- */

static dra_err invalid(dra_diag *d, const char *fmt, const char *a1,
                       const char *a2)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, a1, a2);
    dra_diag_add(d, "", 0, 0, "invalid configuration: %s", msg);
    return DRA_EINVALID;
}

/* |p| made absolute against |dir| when relative; in cfg's arena. */
static const char *resolve(dra_kube_config *cfg, const char *dir,
                           const char *p)
{
    if (!p || !p[0])
        return NULL;
    if (p[0] == '/' || !dir)
        return dra_arena_strdup(&cfg->arena, p);
    return dra_arena_sprintf(&cfg->arena, "%s/%s", dir, p);
}

/* A *-data field: base64 into cfg's arena. */
static dra_err data_field(dra_kube_config *cfg, const dra_doc *body,
                          const char *key, const char *owner, const char **out,
                          size_t *len, dra_diag *d)
{
    const char *b64 = doc_str(body, key);
    char *p = NULL;
    size_t at;
    if (!b64 || !b64[0])
        return DRA_OK;
    at = kube_base64(&cfg->arena, b64, strlen(b64), &p, len);
    if (at == (size_t)-1)
        return DRA_ENOMEM;
    if (at) {
        char where[64];
        snprintf(where, sizeof where, "%zu", at - 1);
        dra_diag_add(d, "", 0, 0,
                     "invalid configuration: %s of %s: illegal base64 data at "
                     "input byte %s", key, owner, where);
        return DRA_EINVALID;
    }
    *out = p;
    return DRA_OK;
}

static int doc_true(const dra_doc *body, const char *key)
{
    const dra_doc *v = dra_doc_get(body, key);
    return v && v->kind == DRA_DOC_BOOL && v->u.b;
}

static dra_err set_cluster(dra_kube_config *cfg, const char *name,
                           const kc_entry *e, dra_diag *d)
{
    const dra_doc *b = e->body;
    const char *server = doc_str(b, "server"), *owner;
    dra_err err;
    owner = dra_arena_sprintf(&cfg->arena, "cluster \"%s\"", name);
    if (!owner)
        return DRA_ENOMEM;
    if (!server || !server[0])
        return invalid(d, "no server found for cluster \"%s\"%s", name, "");
    if (doc_str(b, "proxy-url") && doc_str(b, "proxy-url")[0]) {
        dra_diag_add(d, "", 0, 0,
                     "cluster \"%s\": proxy-url is not supported by dra (the "
                     "HTTPS_PROXY environment variable is)", name);
        return DRA_EUNSUPPORTED;
    }
    cfg->cluster = dra_arena_strdup(&cfg->arena, name);
    cfg->server = dra_arena_strdup(&cfg->arena, server);
    cfg->tls_server_name = dra_arena_strdup(&cfg->arena,
                                            doc_str(b, "tls-server-name"));
    cfg->insecure = doc_true(b, "insecure-skip-tls-verify");
    cfg->ca_file = resolve(cfg, e->dir, doc_str(b, "certificate-authority"));
    err = data_field(cfg, b, "certificate-authority-data", owner,
                     &cfg->ca_data, &cfg->ca_len, d);
    if (err)
        return err;
    if (cfg->insecure && (cfg->ca_file || cfg->ca_data))
        return invalid(d, "cluster \"%s\": specifying a root certificates "
                          "file with the insecure flag is not allowed%s",
                       name, "");
    return cfg->server ? DRA_OK : DRA_ENOMEM;
}

static dra_err set_user(dra_kube_config *cfg, const char *name,
                        const kc_entry *e, dra_diag *d)
{
    const dra_doc *b = e->body;
    const char *owner = dra_arena_sprintf(&cfg->arena, "user \"%s\"", name);
    dra_err err;
    if (!owner)
        return DRA_ENOMEM;
    if (dra_doc_get(b, "exec") && dra_doc_get(b, "exec")->kind != DRA_DOC_NULL) {
        dra_diag_add(d, "", 0, 0,
                     "user \"%s\": exec credential plugins are not supported "
                     "by dra; use a token, a tokenFile or a client certificate",
                     name);
        return DRA_EUNSUPPORTED;
    }
    if (dra_doc_get(b, "auth-provider") &&
        dra_doc_get(b, "auth-provider")->kind != DRA_DOC_NULL) {
        dra_diag_add(d, "", 0, 0,
                     "user \"%s\": auth-provider plugins are not supported by "
                     "dra; use a token, a tokenFile or a client certificate",
                     name);
        return DRA_EUNSUPPORTED;
    }
    if (doc_str(b, "as") && doc_str(b, "as")[0]) {
        dra_diag_add(d, "", 0, 0,
                     "user \"%s\": impersonation (as) is not supported by dra",
                     name);
        return DRA_EUNSUPPORTED;
    }
    cfg->user = dra_arena_strdup(&cfg->arena, name);
    cfg->token = dra_arena_strdup(&cfg->arena, doc_str(b, "token"));
    cfg->token_file = resolve(cfg, e->dir, doc_str(b, "tokenFile"));
    cfg->username = dra_arena_strdup(&cfg->arena, doc_str(b, "username"));
    cfg->password = dra_arena_strdup(&cfg->arena, doc_str(b, "password"));
    cfg->cert_file = resolve(cfg, e->dir, doc_str(b, "client-certificate"));
    cfg->key_file = resolve(cfg, e->dir, doc_str(b, "client-key"));
    err = data_field(cfg, b, "client-certificate-data", owner, &cfg->cert_data,
                     &cfg->cert_len, d);
    if (!err)
        err = data_field(cfg, b, "client-key-data", owner, &cfg->key_data,
                         &cfg->key_len, d);
    if (err)
        return err;
    if ((cfg->cert_file || cfg->cert_data) && !cfg->key_file && !cfg->key_data)
        return invalid(d, "client-key-data or client-key must be specified "
                          "for %s to use the clientCert authentication "
                          "method.%s", name, "");
    return DRA_OK;
}

static dra_err resolve_context(dra_kube_config *cfg, kc_merged *m,
                               const char *context, dra_diag *d)
{
    const char *name = context && context[0] ? context : m->current;
    const char *cl, *us, *ns;
    const kc_entry *ce, *ue;
    dra_err err;
    if (!name || !name[0])
        return invalid(d, "no context chosen%s%s", "", "");
    ce = dra_map_get(&m->contexts, name, strlen(name));
    if (!ce)
        return invalid(d, "context was not found for specified context: %s%s",
                       name, "");
    cl = doc_str(ce->body, "cluster");
    us = doc_str(ce->body, "user");
    ns = doc_str(ce->body, "namespace");
    cfg->context = dra_arena_strdup(&cfg->arena, name);
    if (!cl || !cl[0])
        return invalid(d, "cluster was not specified for context \"%s\"%s",
                       name, "");
    ue = us && us[0] ? dra_map_get(&m->users, us, strlen(us)) : NULL;
    if (us && us[0] && !ue)
        return invalid(d, "user \"%s\" was not found for context \"%s\"", us,
                       name);
    if (!(ce = dra_map_get(&m->clusters, cl, strlen(cl))))
        return invalid(d, "cluster \"%s\" was not found for context \"%s\"", cl,
                       name);
    if ((err = set_cluster(cfg, cl, ce, d)) != DRA_OK)
        return err;
    if (ue && (err = set_user(cfg, us, ue, d)) != DRA_OK)
        return err;
    if (ns && ns[0])
        cfg->ns = dra_arena_strdup(&cfg->arena, ns);
    return cfg->ns && cfg->context ? DRA_OK : DRA_ENOMEM;
}

/* The files to read: |path|, else the $KUBECONFIG list, else
 * ~/.kube/config. */
static dra_err merge_all(kc_merged *m, const char *path, dra_diag *d)
{
    const char *env = getenv("KUBECONFIG"), *home;
    dra_err err = DRA_OK;
    if (path && path[0])
        return merge_file(m, path, 1, d);
    if (env && env[0]) {
        const char *p = env;
        while (!err && *p) {
            const char *colon = strchr(p, ':');
            size_t n = colon ? (size_t)(colon - p) : strlen(p);
            if (n) {
                char *one = dra_arena_strndup(m->a, p, n);
                err = one ? merge_file(m, one, 0, d) : DRA_ENOMEM;
            }
            p += n + (colon ? 1 : 0);
        }
        return err;
    }
    home = getenv("HOME");
    if (home && home[0]) {
        char *def = dra_arena_sprintf(m->a, "%s/.kube/config", home);
        err = def ? merge_file(m, def, 0, d) : DRA_ENOMEM;
    }
    return err;
}

static int in_cluster_env(void)
{
    const char *h = getenv("KUBERNETES_SERVICE_HOST"),
               *p = getenv("KUBERNETES_SERVICE_PORT");
    return h && h[0] && p && p[0];
}

dra_err dra_kube_config_load(dra_kube_config *cfg, const char *path,
                             const char *context, const dra_mem *mem,
                             dra_diag *d)
{
    dra_arena scratch;
    kc_merged m;
    dra_err err;
    dra_kube_config_init(cfg, mem);
    dra_arena_init(&scratch, mem);
    memset(&m, 0, sizeof m);
    m.a = &scratch;
    dra_map_init(&m.clusters, mem);
    dra_map_init(&m.users, mem);
    dra_map_init(&m.contexts, mem);
    err = merge_all(&m, path, d);
    if (!err && !m.entries && !m.current) {
        /* Nothing configured: a pod's service account, if we are in
         * one (clientcmd's in-cluster fallback), else kubectl's error. */
        if ((!path || !path[0]) && in_cluster_env()) {
            dra_kube_config_fini(cfg);
            err = dra_kube_config_in_cluster(cfg, NULL, mem, d);
        } else {
            err = invalid(d, "no configuration has been provided, try setting "
                             "KUBERNETES_MASTER environment variable%s%s",
                          "", "");
        }
    } else if (!err) {
        err = resolve_context(cfg, &m, context, d);
    }
    dra_map_fini(&m.clusters);
    dra_map_fini(&m.users);
    dra_map_fini(&m.contexts);
    dra_arena_fini(&scratch);
    return err;
}

/* ---- in cluster ------------------------------------------------------------ */

static char *trimmed(char *s)
{
    size_t n = strlen(s);
    while (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\n' || s[n - 1] == '\r' ||
                 s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

dra_err dra_kube_config_in_cluster(dra_kube_config *cfg, const char *sa_dir,
                                   const dra_mem *mem, dra_diag *d)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST"),
               *port = getenv("KUBERNETES_SERVICE_PORT"),
               *pod_ns = getenv("POD_NAMESPACE");
    char *text = NULL, *tok;
    struct stat sb;
    dra_err err;
    dra_kube_config_init(cfg, mem);
    if (!sa_dir)
        sa_dir = DRA_KUBE_SA_DIR;
    if (!host || !host[0] || !port || !port[0]) {
        dra_diag_add(d, "", 0, 0,
                     "unable to load in-cluster configuration, "
                     "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must "
                     "be defined");
        return DRA_ENOTFOUND;
    }
    cfg->context = "in-cluster";
    cfg->server = dra_arena_sprintf(&cfg->arena, strchr(host, ':')
                                                     ? "https://[%s]:%s"
                                                     : "https://%s:%s",
                                    host, port);
    cfg->token_file = dra_arena_sprintf(&cfg->arena, "%s/token", sa_dir);
    if (!cfg->server || !cfg->token_file)
        return DRA_ENOMEM;
    /* Like rest.InClusterConfig, the token must be readable now. */
    err = kube_read_file(&cfg->arena, cfg->token_file, 1u << 20, &tok, NULL, d);
    if (err)
        return err == DRA_ENOTFOUND ? DRA_EIO : err;
    cfg->token = trimmed(tok);
    cfg->ca_file = dra_arena_sprintf(&cfg->arena, "%s/ca.crt", sa_dir);
    if (!cfg->ca_file)
        return DRA_ENOMEM;
    if (stat(cfg->ca_file, &sb) != 0)
        cfg->ca_file = NULL; /* client-go goes on with the system roots */
    if (pod_ns && pod_ns[0]) {
        cfg->ns = dra_arena_strdup(&cfg->arena, pod_ns);
    } else {
        char *nsf = dra_arena_sprintf(&cfg->arena, "%s/namespace", sa_dir);
        if (nsf && kube_read_file(&cfg->arena, nsf, 4096, &text, NULL, NULL) ==
                       DRA_OK && trimmed(text)[0])
            cfg->ns = trimmed(text);
    }
    return cfg->ns ? DRA_OK : DRA_ENOMEM;
}
