/*
 * transport.c: the REST transport of cluster.h on libcurl. One request
 * at a time per easy handle, handles pooled so keep-alive connections
 * are reused, TLS sessions and DNS shared between them through a
 * curl_share with per-kind locks; PEM data handed to curl as memfd
 * files; the bearer token re-read when its file changes (projected
 * service-account tokens rotate). Watch streams are in stream.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kube_int.h"

/* ---- credentials ---------------------------------------------------------- */

/* Puts |len| bytes of PEM into an in-memory file and returns a path curl
 * (and GnuTLS behind it) can open: /proc/self/fd/N. The key never
 * touches a disk. */
static const char *pem_file(kube_t *k, int slot, const char *data, size_t len,
                            dra_diag *d)
{
    int fd = memfd_create("dra-kube-pem", MFD_CLOEXEC);
    size_t off = 0;
    if (fd < 0) {
        dra_diag_add(d, "", 0, 0, "memfd_create: %s", strerror(errno));
        return NULL;
    }
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            dra_diag_add(d, "", 0, 0, "writing PEM data: %s", strerror(errno));
            close(fd);
            return NULL;
        }
        off += (size_t)w;
    }
    k->fds[slot] = fd;
    return dra_arena_sprintf(&k->arena, "/proc/self/fd/%d", fd);
}

/* File or data for one credential; data wins as in client-go. A named
 * file must be readable now, so a typo fails here and not at the first
 * request. */
static dra_err cred_path(kube_t *k, int slot, const char *file,
                         const char *data, size_t len, const char **out,
                         const char *what, dra_diag *d)
{
    if (data && len) {
        *out = pem_file(k, slot, data, len, d);
        return *out ? DRA_OK : DRA_EIO;
    }
    if (file) {
        if (access(file, R_OK) != 0) {
            dra_diag_add(d, "", 0, 0, "unable to read %s %s: %s", what, file,
                         strerror(errno));
            return DRA_EIO;
        }
        *out = dra_arena_strdup(&k->arena, file);
        return *out ? DRA_OK : DRA_ENOMEM;
    }
    *out = NULL;
    return DRA_OK;
}

/* "Authorization: Bearer <token>" into |buf|, or nothing without a
 * token. */
static dra_err token_get(kube_t *k, dra_buf *buf, dra_kstatus *st)
{
    dra_buf tok;
    dra_err err;
    dra_buf_init(&tok, k->mem);
    err = kube_token_get(&k->token, &tok, st);
    if (!err && tok.len)
        err = dra_buf_printf(buf, "Authorization: Bearer %s", tok.p);
    dra_buf_fini(&tok);
    return err;
}

/* ---- libcurl plumbing ----------------------------------------------------- */

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access acc,
                       void *ud)
{
    kube_t *k = ud;
    (void)h, (void)acc;
    if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST)
        pthread_mutex_lock(&k->share_locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *ud)
{
    kube_t *k = ud;
    (void)h;
    if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST)
        pthread_mutex_unlock(&k->share_locks[data]);
}

/* Connection sharing, TLS trust and client identity of a handle. */
static void setup_tls_auth(kube_t *k, CURL *h)
{
    if (k->share)
        curl_easy_setopt(h, CURLOPT_SHARE, k->share);
    if (k->ca_path) {
        /* Only this CA, as client-go does: without clearing CAPATH libcurl
         * would also trust every system CA in /etc/ssl/certs. */
        curl_easy_setopt(h, CURLOPT_CAINFO, k->ca_path);
        curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
    }
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, k->insecure ? 0L : 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, k->insecure ? 0L : 2L);
    if (k->cert_path) {
        curl_easy_setopt(h, CURLOPT_SSLCERT, k->cert_path);
        curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
        curl_easy_setopt(h, CURLOPT_SSLKEY, k->key_path);
        curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    }
    if (k->connect_to)
        curl_easy_setopt(h, CURLOPT_CONNECT_TO, k->connect_to);
    if (k->username) {
        curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        curl_easy_setopt(h, CURLOPT_USERNAME, k->username);
        curl_easy_setopt(h, CURLOPT_PASSWORD, k->password ? k->password : "");
    }
}

dra_err kube_setup(kube_t *k, CURL *h, const char *path, const char *query,
                   const char *ctype, struct curl_slist **hdrs, char *errbuf,
                   dra_kstatus *st)
{
    dra_buf b;
    struct curl_slist *l = NULL, *n;
    dra_err err;
    dra_buf_init(&b, k->mem);
    dra_buf_printf(&b, "%s%s%s%s", k->base, path, query && query[0] ? "?" : "",
                   query && query[0] ? query : "");
    if (b.oom) {
        dra_buf_fini(&b);
        return DRA_ENOMEM;
    }
    curl_easy_setopt(h, CURLOPT_URL, b.p); /* curl copies strings */
    dra_buf_reset(&b);
    err = token_get(k, &b, st);
    if (err == DRA_OK && b.len)
        l = curl_slist_append(l, b.p);
    dra_buf_fini(&b);
    if (err) {
        curl_slist_free_all(l);
        return err;
    }
    n = curl_slist_append(l, "Accept: application/json");
    if (n && ctype) {
        char line[160];
        snprintf(line, sizeof line, "Content-Type: %s", ctype);
        n = curl_slist_append(n, line);
    }
    if (n) /* no "Expect: 100-continue" round trip before large bodies */
        n = curl_slist_append(n, "Expect:");
    if (!n) {
        curl_slist_free_all(l);
        return DRA_ENOMEM;
    }
    *hdrs = n;
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, n);
    curl_easy_setopt(h, CURLOPT_USERAGENT, dra_kube_user_agent());
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    errbuf[0] = '\0';
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 10L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, k->connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, k->http2 ? CURL_HTTP_VERSION_2TLS
                                                       : CURL_HTTP_VERSION_1_1);
    setup_tls_auth(k, h);
    return DRA_OK;
}

dra_err kube_curl_err(CURLcode rc, const char *errbuf, const char *method,
                      const char *url, dra_kstatus *st)
{
    const char *why = errbuf && errbuf[0] ? errbuf : curl_easy_strerror(rc);
    /* client-go's wording: Get "https://...": <what went wrong> */
    char verb[16];
    size_t i;
    for (i = 0; method[i] && i < sizeof verb - 1; i++)
        verb[i] = (char)(i ? (method[i] >= 'A' && method[i] <= 'Z'
                                  ? method[i] + 32 : method[i])
                           : method[i]);
    verb[i] = '\0';
    snprintf(st->message, sizeof st->message, "%s \"%s\": %s", verb,
             url ? url : "", why);
    st->code = 0;
    return rc == CURLE_OPERATION_TIMEDOUT ? DRA_ETIMEOUT : DRA_EIO;
}

/* ---- the request op -------------------------------------------------------- */

static CURL *pool_get(kube_t *k)
{
    CURL *h = NULL;
    pthread_mutex_lock(&k->pool_lock);
    if (k->nidle > 0)
        h = k->idle[--k->nidle];
    pthread_mutex_unlock(&k->pool_lock);
    return h ? h : curl_easy_init();
}

static void pool_put(kube_t *k, CURL *h)
{
    /* Reset drops every option but keeps the live connection, the TLS
     * session cache and the share. */
    curl_easy_reset(h);
    pthread_mutex_lock(&k->pool_lock);
    if (k->nidle < KUBE_POOL_MAX) {
        k->idle[k->nidle++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&k->pool_lock);
    if (h)
        curl_easy_cleanup(h);
}

typedef struct sink {
    dra_buf *body;
    int overflow;
} sink;

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    sink *s = ud;
    size_t len = size * n;
    if (s->body->len + len > KUBE_MAX_BODY) {
        s->overflow = 1;
        return 0; /* aborts the transfer */
    }
    return dra_buf_append(s->body, p, len) == DRA_OK ? len : 0;
}

static void set_method(CURL *h, const dra_cluster_req *req)
{
    if (strcmp(req->method, "GET") == 0 && !req->body) {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
        return;
    }
    if (strcmp(req->method, "POST") != 0)
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req->method);
    if (req->body || strcmp(req->method, "POST") == 0 ||
        strcmp(req->method, "PUT") == 0 || strcmp(req->method, "PATCH") == 0) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                         (curl_off_t)(req->body ? req->body_len : 0));
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, req->body ? req->body : "");
    }
}

static dra_err kube_request(void *ud, const dra_cluster_req *req, int *code,
                            dra_buf *body, dra_kstatus *st)
{
    kube_t *k = ud;
    char errbuf[CURL_ERROR_SIZE];
    struct curl_slist *hdrs = NULL;
    sink s = {body, 0};
    CURL *h;
    CURLcode rc;
    long status = 0;
    dra_err err;
    const char *ctype = req->body ? (req->content_type ? req->content_type
                                                       : "application/json")
                                  : req->content_type;
    kube_rate_take(&k->rate);
    if (!(h = pool_get(k)))
        return DRA_ENOMEM;
    err = kube_setup(k, h, req->path, req->query, ctype, &hdrs, errbuf, st);
    if (err) {
        pool_put(k, h);
        return err;
    }
    set_method(h, req);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, k->timeout_ms);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
    rc = curl_easy_perform(h);
    if (rc == CURLE_OK) {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        *code = (int)status;
    } else if (s.overflow) {
        snprintf(st->message, sizeof st->message,
                 "the server's answer is larger than %u bytes", KUBE_MAX_BODY);
        err = DRA_EIO;
    } else if (body->oom) {
        err = DRA_ENOMEM;
    } else {
        char *url = NULL;
        curl_easy_getinfo(h, CURLINFO_EFFECTIVE_URL, &url);
        err = kube_curl_err(rc, errbuf, req->method, url, st);
    }
    pool_put(k, h);
    curl_slist_free_all(hdrs);
    return err;
}

/* ---- lifecycle ------------------------------------------------------------- */

static void kube_free(kube_t *k)
{
    for (int i = 0; i < k->nidle; i++)
        curl_easy_cleanup(k->idle[i]);
    if (k->share)
        curl_share_cleanup(k->share);
    curl_slist_free_all(k->connect_to);
    for (int i = 0; i < 3; i++)
        if (k->fds[i] >= 0)
            close(k->fds[i]);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&k->share_locks[i]);
    pthread_mutex_destroy(&k->pool_lock);
    kube_token_fini(&k->token);
    kube_rate_fini(&k->rate);
    dra_arena_fini(&k->arena);
    dra_free(k->mem, k);
    curl_global_cleanup();
}

static void kube_close(void *ud) { kube_free(ud); }

/* tls-server-name: requests name that host, so curl sends it as SNI and
 * checks it in the certificate, and CURLOPT_CONNECT_TO sends the
 * connection to the real server. (The Host header then carries the TLS
 * name too; client-go keeps the server's there.) */
static dra_err server_name(kube_t *k, const char *tls_name)
{
    const char *base = k->base, *auth = strstr(base, "://") + 3;
    const char *end = auth + strcspn(auth, "/"), *host_end, *port = NULL;
    const char *dport = strncmp(base, "https", 5) == 0 ? "443" : "80";
    char *ct, *nb;
    int plen;
    if (auth[0] == '[') {
        const char *rb = memchr(auth, ']', (size_t)(end - auth));
        host_end = rb ? rb + 1 : end;
    } else {
        const char *c = memchr(auth, ':', (size_t)(end - auth));
        host_end = c ? c : end;
    }
    if (host_end < end && *host_end == ':')
        port = host_end + 1;
    if (!port || port == end) {
        port = dport;
        plen = (int)strlen(dport);
    } else {
        plen = (int)(end - port);
    }
    ct = dra_arena_sprintf(&k->arena, "%s:%.*s:%.*s:%.*s", tls_name, plen,
                           port, (int)(host_end - auth), auth, plen, port);
    nb = dra_arena_sprintf(&k->arena, "%.*s%s:%.*s%s", (int)(auth - base),
                           base, tls_name, plen, port, end);
    if (!ct || !nb || !(k->connect_to = curl_slist_append(NULL, ct)))
        return DRA_ENOMEM;
    k->base = nb;
    return DRA_OK;
}

/* The server URL: a scheme is added when missing (https when any TLS
 * setting is present, like client-go's DefaultServerURL), the trailing
 * '/' dropped. */
static dra_err set_server(kube_t *k, const dra_kube_config *cfg, dra_diag *d)
{
    const char *s = cfg->server;
    int tls = cfg->ca_file || cfg->ca_data || cfg->cert_file ||
              cfg->cert_data || cfg->insecure;
    char *base;
    size_t n;
    if (!s || !s[0]) {
        dra_diag_add(d, "", 0, 0, "no server to talk to");
        return DRA_EINVAL;
    }
    if (strncmp(s, "https://", 8) == 0 || strncmp(s, "http://", 7) == 0)
        base = dra_arena_strdup(&k->arena, s);
    else if (strstr(s, "://")) {
        dra_diag_add(d, "", 0, 0, "server %s: only http and https", s);
        return DRA_EINVAL;
    } else
        base = dra_arena_sprintf(&k->arena, "%s://%s", tls ? "https" : "http",
                                 s);
    if (!base)
        return DRA_ENOMEM;
    n = strlen(base);
    while (n && base[n - 1] == '/')
        base[--n] = '\0';
    k->base = base;
    if (!cfg->tls_server_name || !cfg->tls_server_name[0])
        return DRA_OK;
    return server_name(k, cfg->tls_server_name);
}

static dra_err kube_init(kube_t *k, const dra_kube_config *cfg, dra_diag *d)
{
    dra_err err = set_server(k, cfg, d);
    if (!err)
        err = cred_path(k, 0, cfg->ca_file, cfg->ca_data, cfg->ca_len,
                        &k->ca_path, "certificate-authority", d);
    if (!err)
        err = cred_path(k, 1, cfg->cert_file, cfg->cert_data, cfg->cert_len,
                        &k->cert_path, "client-certificate", d);
    if (!err)
        err = cred_path(k, 2, cfg->key_file, cfg->key_data, cfg->key_len,
                        &k->key_path, "client-key", d);
    if (err)
        return err;
    k->insecure = cfg->insecure;
    k->http2 = cfg->http2;
    k->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : 0;
    k->connect_timeout_ms = cfg->connect_timeout_ms > 0
                                ? cfg->connect_timeout_ms : 10000;
    if (cfg->username && cfg->username[0]) {
        k->username = dra_arena_strdup(&k->arena, cfg->username);
        k->password = dra_arena_strdup(&k->arena, cfg->password);
    }
    return kube_token_init(&k->token, cfg, k->mem, d);
}

dra_err dra_kube_cluster_new(const dra_kube_config *cfg, const dra_mem *mem,
                             dra_cluster **out, dra_diag *d)
{
    static const dra_cluster_ops ops = {
        kube_request,      kube_watch_open,  kube_watch_next,
        kube_watch_cancel, kube_watch_close, kube_close,
    };
    kube_t *k;
    dra_err err;
    if (!out || !cfg)
        return DRA_EINVAL;
    *out = NULL;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        dra_diag_add(d, "", 0, 0, "libcurl cannot start");
        return DRA_EIO;
    }
    k = dra_calloc(mem, 1, sizeof *k);
    if (!k) {
        curl_global_cleanup();
        return DRA_ENOMEM;
    }
    k->mem = mem;
    k->fds[0] = k->fds[1] = k->fds[2] = -1;
    dra_arena_init(&k->arena, mem);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&k->share_locks[i], NULL);
    pthread_mutex_init(&k->pool_lock, NULL);
    kube_rate_init(&k->rate, cfg->qps, cfg->burst);
    /* calloc'd: a zeroed kube_token is safe to fini before its init */
    err = kube_init(k, cfg, d);
    if (!err && (k->share = curl_share_init()) != NULL) {
        /* Only TLS sessions and DNS: libcurl does not support sharing the
         * connection cache between concurrent threads; each pooled
         * handle keeps its own connections alive instead. */
        curl_share_setopt(k->share, CURLSHOPT_LOCKFUNC, share_lock);
        curl_share_setopt(k->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
        curl_share_setopt(k->share, CURLSHOPT_USERDATA, k);
        curl_share_setopt(k->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
        curl_share_setopt(k->share, CURLSHOPT_SHARE,
                          CURL_LOCK_DATA_SSL_SESSION);
    }
    if (!err && !(*out = dra_cluster_new(&ops, k, mem)))
        err = DRA_ENOMEM;
    if (err)
        kube_free(k);
    return err;
}
