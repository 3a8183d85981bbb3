/*
 * http.c: the HTTPS front end over libmicrohttpd and GnuTLS. MHD's pool
 * threads read requests and answer reads inline; writes (which wait for
 * a group commit) are handed to a small worker pool with the connection
 * suspended, so the commit can batch many clients. Watch and log streams
 * are callback responses: a stream with nothing to send suspends its
 * connection, and the stream's notify resumes it, so idle watchers cost
 * no thread. Every request is authenticated first: the bearer token or a
 * client certificate signed by drad's CA; anything else is 401.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>

#include "apiserver_int.h"
#include "front.h"
#include "pool.h"

typedef struct hwatch hwatch;

struct dra_apiserver_http {
    dra_apiserver *srv;
    const dra_apiserver_creds *creds;
    struct MHD_Daemon *d;
    int port;

    pthread_mutex_t lock; /* watches */
    pthread_cond_t idle;  /* a stream ended */
    api_pool *pool;       /* the write workers; NULL: writes answered inline */
    hwatch *watches;
};

/* Per-connection request state (MHD's con_cls). */
typedef struct conn {
    dra_apiserver_http *h;
    struct MHD_Connection *c;
    dra_buf body;
    dra_buf query;
    char *method, *path, *accept, *ctype, *user;
    int too_large, answered;
} conn;


/* A streamed answer in flight. */
struct hwatch {
    dra_apiserver_http *h;
    struct MHD_Connection *c;
    dra_stream *s;
    pthread_mutex_t lock;
    int suspended, pending, forced_end, eof;
    dra_buf buf;
    size_t off;
    hwatch *next, *prev;
};

/* ---- answers -------------------------------------------------------------------- */

static enum MHD_Result queue_response(struct MHD_Connection *c, unsigned code,
                                      const char *ct, struct MHD_Response *resp,
                                      const dra_apiserver_resp *r)
{
    enum MHD_Result rc;
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", ct);
    if (r && r->warning[0])
        MHD_add_response_header(resp, "Warning", r->warning);
    if (r && r->cache_control[0])
        MHD_add_response_header(resp, "Cache-Control", r->cache_control);
    rc = MHD_queue_response(c, code, resp);
    MHD_destroy_response(resp);
    return rc;
}

static enum MHD_Result queue_text(struct MHD_Connection *c, unsigned code,
                                  const char *ct, const char *body, size_t len,
                                  const dra_apiserver_resp *r)
{
    return queue_response(c, code, ct,
                          MHD_create_response_from_buffer(len, (void *)body,
                                                          MHD_RESPMEM_MUST_COPY),
                          r);
}

static void free_body(void *p)
{
    free(p);
}

/* The body of |r| handed to MHD without a copy (the response's buffer
 * uses libc, so MHD's callback can free it). */
static enum MHD_Result queue_body(struct MHD_Connection *c, dra_apiserver_resp *r)
{
    size_t len = r->body.len;
    char *p = dra_buf_detach(&r->body);
    struct MHD_Response *resp;
    if (!p)
        return MHD_NO;
    resp = MHD_create_response_from_buffer_with_free_callback(len, p, free_body);
    if (!resp)
        free(p);
    return queue_response(c, (unsigned)r->code, r->content_type, resp, r);
}

static enum MHD_Result status_answer(struct MHD_Connection *c, unsigned code,
                                     const char *reason, const char *msg)
{
    char body[512];
    size_t n = api_front_status(body, sizeof body, code, reason, msg);
    return queue_text(c, code, "application/json", body, n, NULL);
}

/* ---- streams ------------------------------------------------------------------------ */

static void hw_notify(void *arg)
{
    hwatch *w = arg;
    pthread_mutex_lock(&w->lock);
    w->pending = 1;
    if (w->suspended) {
        w->suspended = 0;
        MHD_resume_connection(w->c);
    }
    pthread_mutex_unlock(&w->lock);
}

static ssize_t hw_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    hwatch *w = cls;
    size_t n;
    (void)pos;
    if (w->off == w->buf.len) {
        dra_buf_reset(&w->buf);
        w->off = 0;
        if (w->forced_end) {
            w->eof = 1;
        } else if (!w->eof) {
            /* Read only after a notify (dra_stream_ops): a read that
             * finds nothing costs as much as one that finds an event. */
            int readable;
            pthread_mutex_lock(&w->lock);
            readable = w->pending;
            w->pending = 0;
            pthread_mutex_unlock(&w->lock);
            if (readable && dra_stream_read(w->s, &w->buf, &w->eof))
                return MHD_CONTENT_READER_END_WITH_ERROR;
        }
    }
    if (w->off < w->buf.len) {
        n = w->buf.len - w->off;
        if (n > max)
            n = max;
        memcpy(buf, w->buf.p + w->off, n);
        w->off += n;
        return (ssize_t)n;
    }
    if (w->eof)
        return MHD_CONTENT_READER_END_OF_STREAM;
    /* Nothing now: park the connection until the stream's notify. A
     * notify that came since the read is not lost: try again at once. */
    pthread_mutex_lock(&w->lock);
    if (w->pending || w->forced_end) {
        pthread_mutex_unlock(&w->lock);
        return 0;
    }
    w->suspended = 1;
    MHD_suspend_connection(w->c);
    pthread_mutex_unlock(&w->lock);
    return 0;
}

static void hw_free(void *cls)
{
    hwatch *w = cls;
    dra_apiserver_http *h = w->h;
    dra_stream_set_notify(w->s, NULL, NULL);
    dra_stream_close(w->s);
    pthread_mutex_lock(&h->lock);
    if (w->prev)
        w->prev->next = w->next;
    else
        h->watches = w->next;
    if (w->next)
        w->next->prev = w->prev;
    pthread_cond_broadcast(&h->idle);
    pthread_mutex_unlock(&h->lock);
    dra_buf_fini(&w->buf);
    pthread_mutex_destroy(&w->lock);
    dra_free(h->srv->mem, w);
}

static enum MHD_Result queue_stream(dra_apiserver_http *h, struct MHD_Connection *c,
                                    dra_apiserver_resp *r)
{
    hwatch *w = dra_calloc(h->srv->mem, 1, sizeof *w);
    struct MHD_Response *resp;
    enum MHD_Result rc;
    if (!w)
        return MHD_NO;
    w->h = h;
    w->c = c;
    w->s = r->stream;
    r->stream = NULL;
    w->pending = 1; /* the first read needs no notify */
    pthread_mutex_init(&w->lock, NULL);
    dra_buf_init(&w->buf, h->srv->mem);
    /* Bytes the handler already wrote come first (none for watches). */
    dra_buf_append(&w->buf, r->body.p ? r->body.p : "", r->body.len);
    resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, hw_read,
                                             w, hw_free);
    if (!resp) {
        dra_stream_close(w->s);
        dra_buf_fini(&w->buf);
        pthread_mutex_destroy(&w->lock);
        dra_free(h->srv->mem, w);
        return MHD_NO;
    }
    pthread_mutex_lock(&h->lock);
    w->next = h->watches;
    if (w->next)
        w->next->prev = w;
    h->watches = w;
    pthread_mutex_unlock(&h->lock);
    dra_stream_set_notify(w->s, hw_notify, w);
    MHD_add_response_header(resp, "Content-Type", r->content_type);
    MHD_add_response_header(resp, "Cache-Control", "no-cache, private");
    rc = MHD_queue_response(c, (unsigned)r->code, resp);
    MHD_destroy_response(resp);
    return rc;
}

/* ---- handling ------------------------------------------------------------------------- */

static enum MHD_Result answer(conn *cs)
{
    dra_apiserver_req q;
    dra_apiserver_resp r;
    enum MHD_Result rc;
    memset(&q, 0, sizeof q);
    q.method = cs->method;
    q.path = cs->path;
    q.query = cs->query.len ? cs->query.p : NULL;
    q.accept = cs->accept;
    q.content_type = cs->ctype;
    q.user = cs->user;
    q.body = cs->body.p;
    q.body_len = cs->body.len;
    /* libc for the body, which MHD frees (see queue_body). */
    dra_apiserver_resp_init(&r, NULL);
    if (dra_apiserver_handle(cs->h->srv, &q, &r)) {
        dra_apiserver_resp_fini(&r);
        return status_answer(cs->c, 500, "InternalError", "out of memory");
    }
    if (r.stream)
        rc = queue_stream(cs->h, cs->c, &r);
    else
        rc = queue_body(cs->c, &r);
    dra_apiserver_resp_fini(&r);
    return rc;
}

/* A write on a worker: the connection is suspended, and answering it
 * from here and then resuming is what MHD allows for those. */
static void run_write(void *job, void *ud)
{
    conn *cs = job;
    (void)ud;
    answer(cs);
    MHD_resume_connection(cs->c);
}

static enum MHD_Result add_query(void *cls, enum MHD_ValueKind kind, const char *key,
                     const char *value)
{
    (void)kind;
    api_front_query_add(cls, key, value);
    return MHD_YES;
}

static char *dup_header(const dra_mem *mem, struct MHD_Connection *c,
                        const char *name)
{
    const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
    return v ? dra_strdup(mem, v) : NULL;
}

/* The user the request authenticates as, or NULL. */
static char *authenticate(dra_apiserver_http *h, struct MHD_Connection *c)
{
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    const union MHD_ConnectionInfo *ci = NULL;
    const char *user;
    /* The certificate is looked at only without a bearer token. */
    if (!auth || strncasecmp(auth, "Bearer ", 7))
        ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    user = api_front_user(h->creds, auth,
                          ci && api_front_cert_ok((gnutls_session_t)ci->tls_session));
    return user ? dra_strdup(h->srv->mem, user) : NULL;
}

static enum MHD_Result too_large(dra_apiserver_http *h, struct MHD_Connection *c)
{
    char msg[96];
    api_front_too_large_msg(msg, sizeof msg, h->srv->opts.max_body);
    return status_answer(c, 413, "RequestEntityTooLarge", msg);
}

/* The first call for a request: headers only. Authenticates and checks
 * Content-Length; either may answer at once. */
static enum MHD_Result on_headers(dra_apiserver_http *h, struct MHD_Connection *c,
                                  void **con_cls)
{
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    conn *cs = dra_calloc(h->srv->mem, 1, sizeof *cs);
    if (!cs)
        return MHD_NO;
    cs->h = h;
    cs->c = c;
    dra_buf_init(&cs->body, h->srv->mem);
    dra_buf_init(&cs->query, h->srv->mem);
    *con_cls = cs;
    cs->user = authenticate(h, c);
    if (!cs->user) {
        cs->answered = 1;
        return status_answer(c, 401, "Unauthorized", "Unauthorized");
    }
    if (cl && strtoull(cl, NULL, 10) > h->srv->opts.max_body) {
        cs->answered = 1;
        return too_large(h, c);
    }
    return MHD_YES;
}

/* A write waits for its group commit: hand it to a worker with the
 * connection suspended, so the pool threads keep serving. */
static enum MHD_Result to_worker(dra_apiserver_http *h, conn *cs)
{
    MHD_suspend_connection(cs->c);
    if (api_pool_submit(h->pool, cs) == DRA_OK)
        return MHD_YES;
    /* Not taken (out of memory, or stopping): the connection is closed. */
    MHD_resume_connection(cs->c);
    return MHD_NO;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    dra_apiserver_http *h = cls;
    conn *cs = *con_cls;
    (void)version;
    if (!cs)
        return on_headers(h, c, con_cls);
    if (*upload_size) {
        if (!cs->answered && !cs->too_large) {
            if (cs->body.len + *upload_size > h->srv->opts.max_body)
                cs->too_large = 1;
            else if (dra_buf_append(&cs->body, upload, *upload_size))
                return MHD_NO;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (cs->answered)
        return MHD_YES;
    cs->answered = 1;
    if (cs->too_large)
        return too_large(h, c);
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_query, &cs->query);
    cs->method = dra_strdup(h->srv->mem, method);
    cs->path = dra_strdup(h->srv->mem, url);
    cs->accept = dup_header(h->srv->mem, c, "Accept");
    cs->ctype = dup_header(h->srv->mem, c, "Content-Type");
    if (!cs->method || !cs->path || cs->query.oom)
        return MHD_NO;
    if (api_front_is_write(method) && h->pool)
        return to_worker(h, cs);
    return answer(cs);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    conn *cs = *con_cls;
    const dra_mem *mem;
    (void)cls, (void)c, (void)toe;
    if (!cs)
        return;
    mem = cs->h->srv->mem;
    dra_buf_fini(&cs->body);
    dra_buf_fini(&cs->query);
    dra_free(mem, cs->method);
    dra_free(mem, cs->path);
    dra_free(mem, cs->accept);
    dra_free(mem, cs->ctype);
    dra_free(mem, cs->user);
    dra_free(mem, cs);
    *con_cls = NULL;
}

/* ---- start / stop --------------------------------------------------------------------- */

static dra_err listen_addr(const char *host, int port, struct sockaddr_storage *ss,
                           int *v6)
{
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    memset(ss, 0, sizeof *ss);
    if (!host || !*host || !strcmp(host, "localhost"))
        host = "127.0.0.1";
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        *v6 = 0;
        return DRA_OK;
    }
    if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        *v6 = 1;
        return DRA_OK;
    }
    return DRA_EINVAL;
}

static struct MHD_Daemon *start_daemon(dra_apiserver_http *h,
                                       const dra_apiserver_http_opts *opts,
                                       struct sockaddr_storage *ss, int v6)
{
    int threads = opts->threads > 0 ? opts->threads : 2;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
                     MHD_ALLOW_SUSPEND_RESUME | MHD_USE_TLS | (v6 ? MHD_USE_IPv6 : 0);
    /* MHD_OPTION_HTTPS_MEM_TRUST makes the handshake ask for a client
     * certificate, which authenticate() then verifies. */
    return MHD_start_daemon(
        flags, (uint16_t)opts->port, NULL, NULL, on_request, h,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)ss,
        MHD_OPTION_HTTPS_MEM_KEY, opts->creds->server_key,
        MHD_OPTION_HTTPS_MEM_CERT, opts->creds->server_cert,
        MHD_OPTION_HTTPS_MEM_TRUST, opts->creds->ca_cert,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)threads,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)20000,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)300,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)1024,
        MHD_OPTION_END);
}

static void http_free(dra_apiserver_http *h)
{
    pthread_mutex_destroy(&h->lock);
    pthread_cond_destroy(&h->idle);
    dra_free(h->srv->mem, h);
}

dra_err dra_apiserver_http_start(dra_apiserver *srv,
                                 const dra_apiserver_http_opts *opts,
                                 dra_apiserver_http **out, dra_diag *d)
{
    dra_apiserver_http *h;
    struct sockaddr_storage ss;
    const union MHD_DaemonInfo *di;
    int v6, workers;
    *out = NULL;
    if (!opts || !opts->creds || !opts->creds->server_cert || !opts->creds->token)
        return DRA_EINVAL;
    if (listen_addr(opts->host, opts->port, &ss, &v6)) {
        dra_diag_add(d, "", 0, 0, "cannot listen on \"%s\": not an IP address",
                     opts->host);
        return DRA_EINVAL;
    }
    h = dra_calloc(srv->mem, 1, sizeof *h);
    if (!h)
        return DRA_ENOMEM;
    h->srv = srv;
    h->creds = opts->creds;
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->idle, NULL);
    workers = opts->workers > 0 ? opts->workers : 64;
    /* No worker at all (no thread could start): writes answered inline. */
    if (api_pool_start(srv->mem, workers, run_write, NULL, &h->pool) == DRA_ENOMEM) {
        http_free(h);
        return DRA_ENOMEM;
    }
    h->d = start_daemon(h, opts, &ss, v6);
    if (!h->d) {
        dra_diag_add(d, "", 0, 0, "cannot serve HTTPS on port %d (address in use, "
                                  "or TLS setup failed)", opts->port);
        api_pool_stop(h->pool);
        http_free(h);
        return DRA_EIO;
    }
    di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = di ? di->port : opts->port;
    *out = h;
    return DRA_OK;
}

int dra_apiserver_http_port(const dra_apiserver_http *h)
{
    return h->port;
}

void dra_apiserver_http_stop(dra_apiserver_http *h)
{
    MHD_socket ls;
    if (!h)
        return;
    /* No new connections; then every stream is ended and its connection
     * resumed (MHD must not be stopped with suspended connections), and
     * the workers finish what they hold. */
    ls = MHD_quiesce_daemon(h->d);
    if (ls != MHD_INVALID_SOCKET)
        close(ls);
    pthread_mutex_lock(&h->lock);
    for (hwatch *w = h->watches; w; w = w->next) {
        pthread_mutex_lock(&w->lock);
        w->forced_end = 1;
        if (w->suspended) {
            w->suspended = 0;
            MHD_resume_connection(w->c);
        }
        pthread_mutex_unlock(&w->lock);
    }
    pthread_mutex_unlock(&h->lock);
    api_pool_stop(h->pool);
    h->pool = NULL;
    /* Give the ended streams a moment to flush their last chunk. */
    pthread_mutex_lock(&h->lock);
    for (int i = 0; i < 50 && h->watches; i++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&h->idle, &h->lock, &ts);
    }
    pthread_mutex_unlock(&h->lock);
    MHD_stop_daemon(h->d);
    http_free(h);
}
