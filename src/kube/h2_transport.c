/*
 * h2_transport.c: the REST transport of cluster.h on HTTP/2 over TLS
 * (nghttp2 + GnuTLS, no libcurl), as client-go speaks to every
 * kube-apiserver: one connection per cluster, every request and watch a
 * stream on it. Callers' threads build a call, queue it for the I/O
 * thread (h2_conn.c) and wait on the call's condition variable; watches
 * read lines out of buffers the I/O thread fills.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "h2_int.h"

/* ---- calls ----------------------------------------------------------------- */

void h2_wake(h2_t *h)
{
    uint64_t one = 1;
    if (write(h->evfd, &one, sizeof one) < 0) {
        /* the counter is saturated: the thread is awake anyway */
    }
}

void h2_call_release(h2_call *c)
{
    if (--c->refs > 0)
        return;
    pthread_cond_destroy(&c->cv);
    dra_buf_fini(&c->data);
    dra_arena_fini(&c->a);
    dra_free(c->h->mem, c);
}

void h2_call_fail(h2_call *c, dra_err err, const char *why)
{
    /* client-go's wording: Get "https://...": <what went wrong> */
    char verb[16];
    size_t i;
    for (i = 0; c->method[i] && i < sizeof verb - 1; i++)
        verb[i] = (char)(i && c->method[i] >= 'A' && c->method[i] <= 'Z'
                             ? c->method[i] + 32 : c->method[i]);
    verb[i] = '\0';
    snprintf(c->msg, sizeof c->msg, "%s \"%s\": %s", verb, c->url, why);
    c->err = err;
    c->done = 1;
    pthread_cond_broadcast(&c->cv);
}

static void dirty_push(h2_t *h, h2_call *c)
{
    if (c->in_dirty)
        return;
    c->in_dirty = 1;
    c->refs++;
    c->dnext = h->dirty;
    h->dirty = c;
    h2_wake(h);
}

static dra_err nv_add(h2_call *c, size_t *i, const char *name,
                      const char *value)
{
    nghttp2_nv *nv = &c->nva[(*i)++];
    nv->name = (uint8_t *)name;
    nv->namelen = strlen(name);
    nv->value = (uint8_t *)value;
    nv->valuelen = value ? strlen(value) : 0;
    nv->flags = NGHTTP2_NV_FLAG_NONE; /* nghttp2 copies them */
    return value ? DRA_OK : DRA_ENOMEM;
}

/* The header block: pseudo-headers, then what the curl transport sends
 * (Accept, User-Agent, credentials, Content-Type). */
static dra_err call_headers(h2_t *h, h2_call *c, const char *path,
                            const char *query, const char *ctype,
                            dra_kstatus *st)
{
    const char *q = query && query[0] ? query : NULL;
    const char *p = dra_arena_sprintf(&c->a, "%s%s%s%s", h->prefix, path,
                                      q ? "?" : "", q ? q : "");
    const char *auth = h->basic;
    dra_buf tok;
    dra_err err;
    size_t i = 0;
    dra_buf_init(&tok, h->mem);
    err = kube_token_get(&h->token, &tok, st);
    if (!err && tok.len)
        auth = dra_arena_sprintf(&c->a, "Bearer %s", tok.p);
    dra_buf_fini(&tok);
    if (err)
        return err;
    c->url = dra_arena_sprintf(&c->a, "%s%s", h->base, p ? p : "");
    c->nva = dra_arena_array(&c->a, 9, sizeof *c->nva);
    if (!c->url || !c->nva || !p)
        return DRA_ENOMEM;
    err = nv_add(c, &i, ":method", c->method);
    err |= nv_add(c, &i, ":scheme", "https");
    err |= nv_add(c, &i, ":authority", h->authority);
    err |= nv_add(c, &i, ":path", p);
    err |= nv_add(c, &i, "accept", "application/json");
    err |= nv_add(c, &i, "user-agent", dra_kube_user_agent());
    if (auth)
        err |= nv_add(c, &i, "authorization", auth);
    if (ctype)
        err |= nv_add(c, &i, "content-type", ctype);
    c->nvlen = i;
    return err ? DRA_ENOMEM : DRA_OK;
}

static dra_err call_new(h2_t *h, h2_kind kind, const char *method,
                        const char *path, const char *query, const char *ctype,
                        h2_call **out, dra_kstatus *st)
{
    h2_call *c = dra_calloc(h->mem, 1, sizeof *c);
    dra_err err;
    if (!c)
        return DRA_ENOMEM;
    c->h = h;
    c->kind = kind;
    c->refs = 1;
    {
        /* Deadlines are CLOCK_MONOTONIC: a clock step must not fire or
         * stall a timeout. */
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&c->cv, &ca);
        pthread_condattr_destroy(&ca);
    }
    dra_arena_init(&c->a, h->mem);
    dra_buf_init(&c->data, h->mem);
    c->method = dra_arena_strdup(&c->a, method);
    err = c->method ? call_headers(h, c, path, query, ctype, st) : DRA_ENOMEM;
    if (err) {
        h2_call_release(c);
        return err;
    }
    *out = c;
    return DRA_OK;
}

/* Queues |c| for the I/O thread (which takes a reference), starting the
 * thread on first use: creating the cluster does not dial. Under lock. */
static dra_err call_submit(h2_t *h, h2_call *c, dra_kstatus *st)
{
    if (!h->started) {
        if (pthread_create(&h->thread, NULL, h2_io_main, h) != 0) {
            snprintf(st->message, sizeof st->message,
                     "cannot start the HTTP/2 I/O thread");
            return DRA_EIO;
        }
        h->started = 1;
    }
    c->refs++;
    c->qnext = NULL;
    if (h->qtail)
        h->qtail->qnext = c;
    else
        h->qhead = c;
    h->qtail = c;
    h2_wake(h);
    return DRA_OK;
}

static void deadline_of(struct timespec *ts, int ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    dra_timespec_add_ms(ts, ms);
}

/* Waits under the lock until *|flag| (a field of |c|) or c->done is set,
 * or |dl| (NULL: none) passes. 0 on timeout. */
static int h2_wait(h2_call *c, const int *flag, const struct timespec *dl)
{
    while (!*flag && !c->done) {
        if (!dl)
            pthread_cond_wait(&c->cv, &c->h->lock);
        else if (pthread_cond_timedwait(&c->cv, &c->h->lock, dl) == ETIMEDOUT)
            return *flag || c->done;
    }
    return 1;
}

/* Gives |c| up: while the I/O thread still holds it (queued, or its
 * stream open), it resets the stream or drops it from the queue, and
 * frees it. Under lock. */
static void call_abandon(h2_t *h, h2_call *c)
{
    c->abandoned = 1;
    if (c->refs > 1)
        dirty_push(h, c);
    h2_call_release(c);
}

/* ---- requests ---------------------------------------------------------------- */

static dra_err h2_request(void *ud, const dra_cluster_req *req, int *code,
                          dra_buf *body, dra_kstatus *st)
{
    h2_t *h = ud;
    const char *ctype = req->body ? (req->content_type ? req->content_type
                                                       : "application/json")
                                  : req->content_type;
    struct timespec dl;
    h2_call *c;
    dra_err err;
    kube_rate_take(&h->rate);
    err = call_new(h, H2_REQ, req->method, req->path, req->query, ctype, &c, st);
    if (err)
        return err;
    c->body = req->body;
    c->body_len = req->body ? req->body_len : 0;
    if (h->timeout_ms > 0)
        deadline_of(&dl, h->timeout_ms);
    pthread_mutex_lock(&h->lock);
    err = call_submit(h, c, st);
    if (!err && !h2_wait(c, &c->done, h->timeout_ms > 0 ? &dl : NULL)) {
        char why[96];
        snprintf(why, sizeof why,
                 "context deadline exceeded (Client.Timeout %d ms)",
                 h->timeout_ms);
        h2_call_fail(c, DRA_ETIMEOUT, why);
    }
    if (!err && c->err) {
        err = c->err;
        snprintf(st->message, sizeof st->message, "%s", c->msg);
        st->code = 0;
    } else if (!err) {
        *code = c->status;
        err = c->data.len ? dra_buf_append(body, c->data.p, c->data.len)
                          : DRA_OK;
    }
    call_abandon(h, c);
    pthread_mutex_unlock(&h->lock);
    return err;
}

/* ---- watches --------------------------------------------------------------------- */

static dra_err h2_watch_open(void *ud, const char *path, const char *query,
                             dra_watch_stream **out, dra_kstatus *st)
{
    h2_t *h = ud;
    struct timespec dl;
    h2_call *c;
    dra_err err;
    kube_rate_take(&h->rate);
    err = call_new(h, H2_WATCH, "GET", path, query, NULL, &c, st);
    if (err)
        return err;
    deadline_of(&dl, h->timeout_ms > 0 ? h->timeout_ms : 60000);
    pthread_mutex_lock(&h->lock);
    err = call_submit(h, c, st);
    if (!err && !h2_wait(c, &c->headers_done, &dl) && !c->done &&
        !c->err)
        h2_call_fail(c, DRA_ETIMEOUT, "timeout awaiting response headers");
    if (!err && c->headers_done && c->status != 200) {
        /* A refusal: its Status body is small; read it and map it. */
        h2_wait(c, &c->done, &dl);
        err = dra_cluster_status_decode(c->status, "GET", c->data.p,
                                        c->data.len, h->mem, st);
        if (!err)
            err = DRA_EIO;
    } else if (!err && c->err) {
        err = c->err;
        snprintf(st->message, sizeof st->message, "%s", c->msg);
    }
    if (err)
        call_abandon(h, c);
    else {
        *out = (dra_watch_stream *)c;
    }
    pthread_mutex_unlock(&h->lock);
    return err;
}

/* Hands out the next complete line, if any, returning the bytes before
 * it to the stream window once no complete line is left. Under lock. */
static int take_line(h2_t *h, h2_call *c, dra_buf *line)
{
    size_t n = c->data.len - c->start, len;
    const char *p = n ? c->data.p + c->start : NULL;
    const char *nl = n ? memchr(p, '\n', n) : NULL;
    if (!nl)
        return 0;
    len = (size_t)(nl - p);
    dra_buf_append(line, p, len - (len && p[len - 1] == '\r'));
    c->start += len + 1;
    n = c->data.len - c->start;
    c->has_line = n && memchr(c->data.p + c->start, '\n', n) != NULL;
    if (!c->has_line && c->deferred) {
        c->to_consume += c->deferred;
        c->deferred = 0;
        dirty_push(h, c);
    }
    return 1;
}

static dra_err h2_watch_next(void *ud, dra_watch_stream *s, int timeout_ms,
                             dra_buf *line)
{
    h2_t *h = ud;
    h2_call *c = (h2_call *)s;
    struct timespec dl;
    dra_err err = DRA_ETIMEOUT;
    if (timeout_ms >= 0)
        deadline_of(&dl, timeout_ms);
    pthread_mutex_lock(&h->lock);
    for (;;) {
        if (c->canceled) {
            err = DRA_ECANCELED;
            break;
        }
        if (take_line(h, c, line)) {
            err = line->oom ? DRA_ENOMEM : DRA_OK;
            break;
        }
        if (c->err || c->done) {
            /* A last event without its newline still counts when the
             * stream ended cleanly; cut short, it is a fragment. */
            err = DRA_EIO;
            if (!c->err && !c->cut && c->data.len > c->start) {
                dra_buf_append(line, c->data.p + c->start,
                               c->data.len - c->start);
                c->start = c->data.len;
                err = line->oom ? DRA_ENOMEM : DRA_OK;
            }
            break;
        }
        if (timeout_ms < 0)
            pthread_cond_wait(&c->cv, &h->lock);
        else if (pthread_cond_timedwait(&c->cv, &h->lock, &dl) == ETIMEDOUT &&
                 !c->canceled && !c->done && !c->has_line && !c->err)
            break;
    }
    pthread_mutex_unlock(&h->lock);
    return err;
}

static void h2_watch_cancel(void *ud, dra_watch_stream *s)
{
    h2_t *h = ud;
    h2_call *c = (h2_call *)s;
    pthread_mutex_lock(&h->lock);
    c->canceled = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&h->lock);
}

static void h2_watch_close(void *ud, dra_watch_stream *s)
{
    h2_t *h = ud;
    if (!s)
        return;
    pthread_mutex_lock(&h->lock);
    call_abandon(h, (h2_call *)s);
    pthread_mutex_unlock(&h->lock);
}

/* ---- configuration ------------------------------------------------------------------ */

/* https://host[:port][/prefix]: where to dial, what to name. */
static dra_err parse_server(h2_t *h, const char *server, dra_diag *d)
{
    const char *auth, *end, *host_end, *port = NULL;
    size_t n;
    if (!server || !server[0]) {
        dra_diag_add(d, "", 0, 0, "no server to talk to");
        return DRA_EINVAL;
    }
    if (strncmp(server, "https://", 8) != 0) {
        dra_diag_add(d, "", 0, 0,
                     "server %s: the HTTP/2 transport speaks only https://",
                     server);
        return DRA_EINVAL;
    }
    auth = server + 8;
    end = auth + strcspn(auth, "/");
    if (auth[0] == '[') {
        const char *rb = memchr(auth, ']', (size_t)(end - auth));
        host_end = rb ? rb + 1 : end;
        h->host = dra_arena_strndup(&h->arena, auth + 1,
                                    (size_t)(host_end - auth) - (rb ? 2 : 1));
    } else {
        const char *c = memchr(auth, ':', (size_t)(end - auth));
        host_end = c ? c : end;
        h->host = dra_arena_strndup(&h->arena, auth, (size_t)(host_end - auth));
    }
    if (host_end < end && *host_end == ':' && host_end + 1 < end)
        port = host_end + 1;
    h->port = port ? dra_arena_strndup(&h->arena, port, (size_t)(end - port))
                   : "443";
    h->authority = dra_arena_strndup(&h->arena, auth, (size_t)(end - auth));
    n = strlen(end);
    while (n && end[n - 1] == '/')
        n--;
    h->prefix = dra_arena_strndup(&h->arena, end, n);
    h->base = dra_arena_sprintf(&h->arena, "https://%s%s", h->authority,
                                h->prefix ? h->prefix : "");
    if (!h->host || !h->port || !h->authority || !h->prefix || !h->base)
        return DRA_ENOMEM;
    if (!h->host[0]) {
        dra_diag_add(d, "", 0, 0, "server %s: no host", server);
        return DRA_EINVAL;
    }
    return DRA_OK;
}

static int is_ip(const char *s)
{
    unsigned char buf[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

static dra_err tls_fail(dra_diag *d, const char *what, const char *where,
                        int r)
{
    dra_diag_add(d, "", 0, 0, "unable to load %s %s: %s", what, where,
                 r < 0 ? gnutls_strerror(r) : "no certificate found");
    return DRA_EIO;
}

/* Trust and identity, parsed once: data wins over the file, as in
 * client-go; a named file must be readable now, so a typo fails here. */
static dra_err load_creds(h2_t *h, const dra_kube_config *cfg, dra_diag *d)
{
    gnutls_certificate_credentials_t cr;
    int r;
    if (gnutls_certificate_allocate_credentials(&h->cred) != 0)
        return DRA_ENOMEM;
    cr = h->cred;
    if (cfg->ca_data && cfg->ca_len) {
        gnutls_datum_t ca = {(unsigned char *)cfg->ca_data,
                             (unsigned)cfg->ca_len};
        if ((r = gnutls_certificate_set_x509_trust_mem(cr, &ca,
                                                       GNUTLS_X509_FMT_PEM)) <= 0)
            return tls_fail(d, "certificate-authority", "data", r);
    } else if (cfg->ca_file) {
        if ((r = gnutls_certificate_set_x509_trust_file(
                 cr, cfg->ca_file, GNUTLS_X509_FMT_PEM)) <= 0)
            return tls_fail(d, "certificate-authority", cfg->ca_file, r);
    } else if (!cfg->insecure) {
        gnutls_certificate_set_x509_system_trust(cr); /* as client-go */
    }
    if (cfg->cert_data && cfg->cert_len) {
        gnutls_datum_t crt = {(unsigned char *)cfg->cert_data,
                              (unsigned)cfg->cert_len};
        gnutls_datum_t key = {(unsigned char *)cfg->key_data,
                              (unsigned)cfg->key_len};
        if (!cfg->key_data || !cfg->key_len ||
            (r = gnutls_certificate_set_x509_key_mem(cr, &crt, &key,
                                                     GNUTLS_X509_FMT_PEM)) < 0)
            return tls_fail(d, "client-certificate", "data",
                            cfg->key_data ? r : GNUTLS_E_INVALID_REQUEST);
    } else if (cfg->cert_file) {
        if (!cfg->key_file ||
            (r = gnutls_certificate_set_x509_key_file(cr, cfg->cert_file,
                                                      cfg->key_file,
                                                      GNUTLS_X509_FMT_PEM)) < 0)
            return tls_fail(d, "client-certificate", cfg->cert_file,
                            cfg->key_file ? r : GNUTLS_E_INVALID_REQUEST);
    }
    return DRA_OK;
}

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* "Basic base64(user:password)". */
static const char *basic_auth(dra_arena *a, const char *user, const char *pw)
{
    const char *in = dra_arena_sprintf(a, "%s:%s", user, pw ? pw : "");
    size_t n = in ? strlen(in) : 0, o = 6;
    char *out = in ? dra_arena_alloc(a, 6 + (n + 2) / 3 * 4 + 1) : NULL;
    if (!out)
        return NULL;
    memcpy(out, "Basic ", 6);
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)(unsigned char)in[i] << 16;
        if (i + 1 < n)
            v |= (unsigned)(unsigned char)in[i + 1] << 8;
        if (i + 2 < n)
            v |= (unsigned char)in[i + 2];
        out[o++] = b64[v >> 18 & 63];
        out[o++] = b64[v >> 12 & 63];
        out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? b64[v & 63] : '=';
    }
    out[o] = '\0';
    return out;
}

static dra_err h2_init(h2_t *h, const dra_kube_config *cfg, dra_diag *d)
{
    const char *tls_name = cfg->tls_server_name && cfg->tls_server_name[0]
                               ? cfg->tls_server_name : NULL;
    dra_err err = parse_server(h, cfg->server, d);
    if (!err)
        err = load_creds(h, cfg, d);
    if (err)
        return err;
    h->verify_name = dra_arena_strdup(&h->arena, tls_name ? tls_name : h->host);
    if (!h->verify_name)
        return DRA_ENOMEM;
    h->sni = is_ip(h->verify_name) ? NULL : h->verify_name;
    h->insecure = cfg->insecure;
    h->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : 0;
    h->connect_timeout_ms = cfg->connect_timeout_ms > 0
                                ? cfg->connect_timeout_ms : 10000;
    if (cfg->username && cfg->username[0] &&
        !(h->basic = basic_auth(&h->arena, cfg->username, cfg->password)))
        return DRA_ENOMEM;
    if ((h->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        dra_diag_add(d, "", 0, 0, "eventfd: %s", strerror(errno));
        return DRA_EIO;
    }
    return kube_token_init(&h->token, cfg, h->mem, d);
}

/* ---- lifecycle ---------------------------------------------------------------------- */

static void h2_free(h2_t *h)
{
    if (h->started) {
        pthread_mutex_lock(&h->lock);
        h->stop = 1;
        h2_wake(h);
        pthread_mutex_unlock(&h->lock);
        pthread_join(h->thread, NULL);
    }
    if (h->evfd >= 0)
        close(h->evfd);
    if (h->cred)
        gnutls_certificate_free_credentials(h->cred);
    kube_token_fini(&h->token);
    kube_rate_fini(&h->rate);
    pthread_mutex_destroy(&h->lock);
    dra_arena_fini(&h->arena);
    dra_free(h->mem, h);
}

static void h2_close(void *ud) { h2_free(ud); }

dra_err dra_kube_h2_cluster_new(const dra_kube_config *cfg, const dra_mem *mem,
                                dra_cluster **out, dra_diag *d)
{
    static const dra_cluster_ops ops = {
        h2_request,      h2_watch_open,  h2_watch_next,
        h2_watch_cancel, h2_watch_close, h2_close,
    };
    h2_t *h;
    dra_err err;
    if (!out || !cfg)
        return DRA_EINVAL;
    *out = NULL;
    if (!(h = dra_calloc(mem, 1, sizeof *h)))
        return DRA_ENOMEM;
    h->mem = mem;
    h->evfd = -1;
    h2_nghttp2_mem(&h->nmem, mem);
    dra_arena_init(&h->arena, mem);
    pthread_mutex_init(&h->lock, NULL);
    kube_rate_init(&h->rate, cfg->qps, cfg->burst);
    /* calloc'd: a zeroed kube_token is safe to fini before its init */
    err = h2_init(h, cfg, d);
    if (!err && !(*out = dra_cluster_new(&ops, h, mem)))
        err = DRA_ENOMEM;
    if (err)
        h2_free(h);
    return err;
}
