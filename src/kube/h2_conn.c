/*
 * h2_conn.c: the I/O thread of the HTTP/2 transport. It alone owns the
 * sockets, the GnuTLS sessions and the nghttp2 sessions: it dials when
 * calls wait and no connection takes new streams, submits queued calls
 * as streams, feeds received bytes to nghttp2 (whose callbacks fill the
 * calls and wake their callers), returns consumed watch bytes to the
 * stream window, and tears a connection down when it breaks or, after
 * GOAWAY, when its last stream ends. Lock discipline: h->lock is held
 * for everything but poll() and the dial.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "h2_int.h"

struct h2_conn {
    h2_conn *next;
    h2_t *h;
    int fd;
    gnutls_session_t tls;
    nghttp2_session *ng;
    int goaway, dead;
    int32_t goaway_last; /* GOAWAY's last-stream-id */
    h2_call *calls;      /* submitted, not closed */
    const uint8_t *out;  /* nghttp2's bytes TLS has not taken yet */
    size_t outlen;
    char why[256];       /* why it died */
};

/* ---- nghttp2 memory ------------------------------------------------------ */

void h2_nghttp2_mem(nghttp2_mem *m, const dra_mem *mem)
{
    *m = (nghttp2_mem){(void *)mem, dra_mem_hook_malloc, dra_mem_hook_free,
        dra_mem_hook_calloc, dra_mem_hook_realloc};
}

/* ---- calls on a connection -------------------------------------------------- */

static void conn_link(h2_conn *c, h2_call *k)
{
    k->conn = c;
    k->cprev = NULL;
    k->cnext = c->calls;
    if (c->calls)
        c->calls->cprev = k;
    c->calls = k;
}

static void conn_unlink(h2_call *k)
{
    h2_conn *c = k->conn;
    if (!c)
        return;
    if (k->cprev)
        k->cprev->cnext = k->cnext;
    else
        c->calls = k->cnext;
    if (k->cnext)
        k->cnext->cprev = k->cprev;
    k->conn = NULL;
    k->cprev = k->cnext = NULL;
}

static void queue_front(h2_t *h, h2_call *k)
{
    k->qnext = h->qhead;
    h->qhead = k;
    if (!h->qtail)
        h->qtail = k;
}

/* A stream the server did not process (GOAWAY's last-stream-id, or
 * REFUSED_STREAM): sent again once, on a fresh connection. The I/O
 * thread is woken: called from the sending side (on_not_send) or a
 * teardown, it would otherwise poll up to a second before dialing. */
static int requeue(h2_t *h, h2_call *k)
{
    if (k->retried || k->headers_done || k->abandoned || k->done)
        return 0;
    conn_unlink(k);
    k->retried = 1;
    k->id = 0;
    k->body_off = 0;
    k->status = 0;
    dra_buf_reset(&k->data);
    queue_front(h, k);
    h2_wake(h);
    return 1;
}

/* ---- nghttp2 callbacks ---------------------------------------------------------- */

static int on_header(nghttp2_session *s, const nghttp2_frame *f,
                     const uint8_t *name, size_t namelen, const uint8_t *value,
                     size_t valuelen, uint8_t flags, void *ud)
{
    h2_call *k;
    char num[8];
    (void)flags, (void)ud;
    if (f->hd.type != NGHTTP2_HEADERS || namelen != 7 ||
        memcmp(name, ":status", 7) != 0 || valuelen >= sizeof num)
        return 0;
    k = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
    if (k) {
        memcpy(num, value, valuelen);
        num[valuelen] = '\0';
        k->status = atoi(num);
    }
    return 0;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
    h2_conn *c = ud;
    if (f->hd.type == NGHTTP2_HEADERS) {
        h2_call *k = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
        /* 1xx answers are interim; the final one has a status >= 200 */
        if (k && k->status >= 200 && !k->headers_done) {
            k->headers_done = 1;
            pthread_cond_broadcast(&k->cv);
        }
    } else if (f->hd.type == NGHTTP2_GOAWAY) {
        c->goaway = 1;
        c->goaway_last = f->goaway.last_stream_id;
        snprintf(c->why, sizeof c->why, "server sent GOAWAY (%s)",
                 nghttp2_http2_strerror(f->goaway.error_code));
    }
    return 0;
}

/* A watch returns bytes to its stream window only while it holds no
 * complete line: a consumer that stops reading stops the server after
 * one window, while a single event may still grow to KUBE_MAX_BODY. */
static void watch_data(nghttp2_session *s, h2_call *k, int32_t id,
                       const uint8_t *data, size_t len)
{
    if (k->start && k->start == k->data.len) {
        dra_buf_reset(&k->data);
        k->start = 0;
    } else if (k->start > k->data.len / 2) {
        memmove(k->data.p, k->data.p + k->start, k->data.len - k->start);
        k->data.len -= k->start;
        k->start = 0;
    }
    if (k->data.len - k->start + len > KUBE_MAX_BODY ||
        dra_buf_append(&k->data, data, len) != DRA_OK) {
        k->err = DRA_EIO; /* an event larger than we accept */
        nghttp2_session_consume_stream(s, id, len);
        nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
        return;
    }
    if (k->has_line)
        k->deferred += len;
    else
        nghttp2_session_consume_stream(s, id, len);
    if (memchr(data, '\n', len))
        k->has_line = 1;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t id,
                   const uint8_t *data, size_t len, void *ud)
{
    h2_call *k = nghttp2_session_get_stream_user_data(s, id);
    (void)flags, (void)ud;
    /* The connection window never waits on a consumer: only streams do. */
    nghttp2_session_consume_connection(s, len);
    if (!k || k->abandoned || k->done || k->err) {
        nghttp2_session_consume_stream(s, id, len);
        return 0;
    }
    if (k->kind == H2_WATCH) {
        watch_data(s, k, id, data, len);
    } else {
        nghttp2_session_consume_stream(s, id, len);
        if (k->data.len + len > KUBE_MAX_BODY) {
            char why[96];
            snprintf(why, sizeof why,
                     "the server's answer is larger than %u bytes",
                     KUBE_MAX_BODY);
            h2_call_fail(k, DRA_EIO, why);
            nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
        } else if (dra_buf_append(&k->data, data, len) != DRA_OK) {
            k->err = DRA_ENOMEM;
            k->done = 1;
            nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
        }
    }
    pthread_cond_broadcast(&k->cv);
    return 0;
}

static int on_stream_close(nghttp2_session *s, int32_t id, uint32_t code,
                           void *ud)
{
    h2_conn *c = ud;
    h2_call *k = nghttp2_session_get_stream_user_data(s, id);
    if (!k)
        return 0;
    if (code == NGHTTP2_REFUSED_STREAM && requeue(c->h, k))
        return 0;
    conn_unlink(k);
    k->cut = code != NGHTTP2_NO_ERROR;
    if (!k->done) {
        char why[160];
        if (code != NGHTTP2_NO_ERROR && !k->abandoned &&
            (k->kind == H2_REQ || !k->headers_done)) {
            snprintf(why, sizeof why, "stream error: stream ID %d; %s", id,
                     nghttp2_http2_strerror(code));
            h2_call_fail(k, DRA_EIO, why);
        } else if (!k->headers_done && !k->abandoned) {
            h2_call_fail(k, DRA_EIO, "the server closed the stream "
                                     "without an answer");
        }
        k->done = 1;
        pthread_cond_broadcast(&k->cv);
    }
    h2_call_release(k); /* the stream's reference */
    return 0;
}

/* A HEADERS frame nghttp2 could not send (GOAWAY came first): the server
 * never saw the request. */
static int on_not_send(nghttp2_session *s, const nghttp2_frame *f,
                       int lib_error, void *ud)
{
    h2_conn *c = ud;
    h2_call *k;
    (void)lib_error;
    if (f->hd.type != NGHTTP2_HEADERS)
        return 0;
    k = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
    if (k && requeue(c->h, k))
        nghttp2_session_set_stream_user_data(s, f->hd.stream_id, NULL);
    return 0;
}

static ssize_t body_read(nghttp2_session *s, int32_t id, uint8_t *buf,
                         size_t len, uint32_t *flags, nghttp2_data_source *src,
                         void *ud)
{
    h2_call *k = src->ptr;
    size_t n;
    (void)s, (void)id, (void)ud;
    /* An abandoned caller may have freed its body already. */
    if (k->abandoned)
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    n = k->body_len - k->body_off;
    if (n > len)
        n = len;
    memcpy(buf, k->body + k->body_off, n);
    k->body_off += n;
    if (k->body_off == k->body_len)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

/* ---- dialing ---------------------------------------------------------------------- */

static int wait_fd(int fd, short ev, double deadline)
{
    struct pollfd p = {fd, ev, 0};
    double left = deadline - kube_now_s();
    int r;
    if (left <= 0)
        return 0;
    do
        r = poll(&p, 1, (int)(left * 1000) + 1);
    while (r < 0 && errno == EINTR);
    return r > 0;
}

static int connect_one(const struct addrinfo *ai, double deadline,
                       dra_err *err, char *why, size_t n)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    ai->ai_protocol), one = 1, soerr = 0;
    socklen_t sl = sizeof soerr;
    if (fd < 0) {
        snprintf(why, n, "socket: %s", strerror(errno));
        return -1;
    }
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        if (errno != EINPROGRESS) {
            soerr = errno;
        } else if (!wait_fd(fd, POLLOUT, deadline)) {
            *err = DRA_ETIMEOUT;
            snprintf(why, n, "i/o timeout");
            close(fd);
            return -1;
        } else {
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
        }
    }
    if (soerr) {
        snprintf(why, n, "connect: %s", strerror(soerr));
        close(fd);
        return -1;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static int dial_tcp(h2_t *h, double deadline, dra_err *err, char *why,
                    size_t n)
{
    struct addrinfo hints, *res = NULL, *ai;
    char sub[200] = "no address";
    int fd = -1, r;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_ADDRCONFIG;
    r = getaddrinfo(h->host, h->port, &hints, &res);
    if (r != 0) {
        snprintf(why, n, "dial tcp: lookup %s: %s", h->host, gai_strerror(r));
        return -1;
    }
    for (ai = res; ai && fd < 0 && *err != DRA_ETIMEOUT; ai = ai->ai_next)
        fd = connect_one(ai, deadline, err, sub, sizeof sub);
    freeaddrinfo(res);
    if (fd < 0)
        snprintf(why, n, "dial tcp %s:%s: %s", h->host, h->port, sub);
    return fd;
}

static void verify_message(gnutls_session_t tls, char *why, size_t n)
{
    gnutls_datum_t out = {NULL, 0};
    unsigned st = gnutls_session_get_verify_cert_status(tls);
    if (gnutls_certificate_verification_status_print(st, GNUTLS_CRT_X509, &out,
                                                     0) == 0) {
        snprintf(why, n, "tls: failed to verify certificate: %s", out.data);
        gnutls_free(out.data);
    } else {
        snprintf(why, n, "tls: failed to verify certificate");
    }
}

static int tls_setup(h2_t *h, h2_conn *c)
{
    static const gnutls_datum_t alpn[2] = {{(unsigned char *)"h2", 2},
                                           {(unsigned char *)"http/1.1", 8}};
    if (gnutls_init(&c->tls, GNUTLS_CLIENT | GNUTLS_NONBLOCK |
                                 GNUTLS_NO_SIGNAL) != 0)
        return -1;
    if (gnutls_set_default_priority(c->tls) != 0 ||
        gnutls_credentials_set(c->tls, GNUTLS_CRD_CERTIFICATE, h->cred) != 0 ||
        gnutls_alpn_set_protocols(c->tls, alpn, 2, 0) != 0)
        return -1;
    if (h->sni &&
        gnutls_server_name_set(c->tls, GNUTLS_NAME_DNS, h->sni, strlen(h->sni)))
        return -1;
    if (!h->insecure)
        gnutls_session_set_verify_cert(c->tls, h->verify_name, 0);
    gnutls_transport_set_int(c->tls, c->fd);
    return 0;
}

static dra_err tls_handshake(h2_t *h, h2_conn *c, double deadline, char *why,
                             size_t n)
{
    gnutls_datum_t proto = {NULL, 0};
    int r;
    if (tls_setup(h, c) != 0) {
        snprintf(why, n, "tls: cannot set up the session");
        return DRA_EIO;
    }
    while ((r = gnutls_handshake(c->tls)) < 0) {
        if (gnutls_error_is_fatal(r)) {
            if (r == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR)
                verify_message(c->tls, why, n);
            else if (r == GNUTLS_E_NO_APPLICATION_PROTOCOL)
                snprintf(why, n, "server %s does not speak HTTP/2", h->base);
            else
                snprintf(why, n, "tls: handshake: %s", gnutls_strerror(r));
            return DRA_EIO;
        }
        if (!wait_fd(c->fd, gnutls_record_get_direction(c->tls) ? POLLOUT
                                                                 : POLLIN,
                     deadline)) {
            snprintf(why, n, "net/http: TLS handshake timeout");
            return DRA_ETIMEOUT;
        }
    }
    if (gnutls_alpn_get_selected_protocol(c->tls, &proto) != 0 ||
        proto.size != 2 || memcmp(proto.data, "h2", 2) != 0) {
        snprintf(why, n, "server %s does not speak HTTP/2 (ALPN: %.*s)",
                 h->base, proto.size ? (int)proto.size : 4,
                 proto.size ? (const char *)proto.data : "none");
        return DRA_EIO;
    }
    return DRA_OK;
}

static int session_new(h2_t *h, h2_conn *c)
{
    nghttp2_session_callbacks *cb;
    nghttp2_option *opt;
    nghttp2_settings_entry iv[2] = {
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, H2_STREAM_WINDOW}};
    int r = -1;
    if (nghttp2_session_callbacks_new(&cb) != 0)
        return -1;
    if (nghttp2_option_new(&opt) != 0) {
        nghttp2_session_callbacks_del(cb);
        return -1;
    }
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
    nghttp2_session_callbacks_set_on_frame_not_send_callback(cb, on_not_send);
    /* Watches give window back only as their consumer takes lines. */
    nghttp2_option_set_no_auto_window_update(opt, 1);
    if (nghttp2_session_client_new3(&c->ng, cb, c, opt, &h->nmem) == 0 &&
        nghttp2_submit_settings(c->ng, NGHTTP2_FLAG_NONE, iv, 2) == 0 &&
        nghttp2_session_set_local_window_size(c->ng, NGHTTP2_FLAG_NONE, 0,
                                              H2_CONN_WINDOW) == 0)
        r = 0;
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cb);
    return r;
}

static void conn_free(h2_conn *c)
{
    if (c->ng)
        nghttp2_session_del(c->ng);
    if (c->tls)
        gnutls_deinit(c->tls);
    if (c->fd >= 0)
        close(c->fd);
    dra_free(c->h->mem, c);
}

/* TCP, TLS with ALPN h2, then the HTTP/2 session. Runs without the lock:
 * it reads only settings that never change. */
static h2_conn *conn_dial(h2_t *h, dra_err *err, char *why, size_t n)
{
    double deadline = kube_now_s() + h->connect_timeout_ms / 1e3;
    h2_conn *c = dra_calloc(h->mem, 1, sizeof *c);
    *err = DRA_EIO;
    if (!c) {
        *err = DRA_ENOMEM;
        snprintf(why, n, "out of memory");
        return NULL;
    }
    c->h = h;
    c->fd = dial_tcp(h, deadline, err, why, n);
    if (c->fd >= 0 && (*err = tls_handshake(h, c, deadline, why, n)) == DRA_OK) {
        if (session_new(h, c) == 0)
            return c;
        *err = DRA_ENOMEM;
        snprintf(why, n, "cannot start an HTTP/2 session");
    }
    conn_free(c);
    return NULL;
}

/* ---- the loop ------------------------------------------------------------------------- */

static void conn_teardown(h2_t *h, h2_conn *c)
{
    h2_conn **pp = &h->conns;
    const char *why = c->why[0] ? c->why : "connection lost";
    while (c->calls) {
        h2_call *k = c->calls;
        conn_unlink(k);
        if (k->id > 0)
            nghttp2_session_set_stream_user_data(c->ng, k->id, NULL);
        /* Above GOAWAY's last-stream-id and still here: nghttp2 held its
         * HEADERS back (the server's stream limit) and the connection
         * ended before it said so through on_not_send. The server never
         * saw it, so it goes to a new connection like any refused call. */
        if (c->goaway && k->id > c->goaway_last && requeue(h, k))
            continue;
        k->cut = 1;
        if (!k->done) {
            if (k->kind == H2_REQ || !k->headers_done)
                h2_call_fail(k, DRA_EIO, why);
            k->done = 1;
            pthread_cond_broadcast(&k->cv);
        }
        h2_call_release(k);
    }
    while (*pp && *pp != c)
        pp = &(*pp)->next;
    if (*pp)
        *pp = c->next;
    conn_free(c);
}

static void fail_queue(h2_t *h, dra_err err, const char *why)
{
    while (h->qhead) {
        h2_call *k = h->qhead;
        h->qhead = k->qnext;
        if (!k->abandoned)
            h2_call_fail(k, err, why);
        h2_call_release(k);
    }
    h->qtail = NULL;
}

static void process_dirty(h2_t *h)
{
    while (h->dirty) {
        h2_call *k = h->dirty;
        h->dirty = k->dnext;
        k->in_dirty = 0;
        /* k->conn is cleared when the stream closes or the connection
         * goes: then there is nothing to reset or return. */
        if (k->conn && k->id > 0) {
            if (k->abandoned)
                nghttp2_submit_rst_stream(k->conn->ng, NGHTTP2_FLAG_NONE,
                                          k->id, NGHTTP2_CANCEL);
            else if (k->to_consume)
                nghttp2_session_consume_stream(k->conn->ng, k->id,
                                               k->to_consume);
        }
        k->to_consume = 0;
        h2_call_release(k);
    }
}

static void submit_one(h2_conn *c, h2_call *k)
{
    nghttp2_data_provider prd = {{.ptr = k}, body_read};
    int32_t id = nghttp2_submit_request(c->ng, NULL, k->nva, k->nvlen,
                                        k->body ? &prd : NULL, k);
    if (id < 0) {
        h2_call_fail(k, DRA_EIO, nghttp2_strerror(id));
        h2_call_release(k);
        return;
    }
    k->id = id;
    conn_link(c, k);
}

static void submit_queue(h2_t *h, h2_conn *c)
{
    while (h->qhead) {
        h2_call *k = h->qhead;
        h->qhead = k->qnext;
        if (!h->qhead)
            h->qtail = NULL;
        if (k->abandoned)
            h2_call_release(k);
        else
            submit_one(c, k);
    }
}

/* Dials for the queued calls, the lock released meanwhile. */
static void dial(h2_t *h)
{
    char why[512];
    dra_err err;
    h2_conn *c;
    pthread_mutex_unlock(&h->lock);
    c = conn_dial(h, &err, why, sizeof why);
    pthread_mutex_lock(&h->lock);
    if (!c) {
        fail_queue(h, err, why);
        return;
    }
    c->next = h->conns;
    h->conns = c;
}

/* Hands nghttp2's output to TLS. 1 when TLS would block (wait for
 * POLLOUT). */
static int conn_send(h2_conn *c)
{
    for (;;) {
        ssize_t r;
        if (!c->outlen) {
            ssize_t n = nghttp2_session_mem_send(c->ng, &c->out);
            if (n < 0) {
                snprintf(c->why, sizeof c->why, "http2: %s",
                         nghttp2_strerror((int)n));
                c->dead = 1;
                return 0;
            }
            if (n == 0)
                return 0;
            c->outlen = (size_t)n;
        }
        /* After EAGAIN GnuTLS wants the very same buffer again: c->out
         * stays put until it is taken. */
        r = gnutls_record_send(c->tls, c->out, c->outlen);
        if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED)
            return 1;
        if (r < 0) {
            snprintf(c->why, sizeof c->why, "write: %s",
                     gnutls_strerror((int)r));
            c->dead = 1;
            return 0;
        }
        c->out += r;
        c->outlen -= (size_t)r;
    }
}

static void conn_recv(h2_conn *c)
{
    uint8_t buf[16384];
    for (int i = 0; i < 64 && !c->dead; i++) {
        ssize_t r = gnutls_record_recv(c->tls, buf, sizeof buf);
        if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED)
            return;
        if (r == 0 || r == GNUTLS_E_PREMATURE_TERMINATION) {
            if (!c->goaway || c->calls)
                snprintf(c->why, sizeof c->why,
                         "the server closed the connection (unexpected EOF)");
            c->dead = 1;
        } else if (r < 0) {
            snprintf(c->why, sizeof c->why, "read: %s",
                     gnutls_strerror((int)r));
            c->dead = 1;
        } else {
            ssize_t n = nghttp2_session_mem_recv(c->ng, buf, (size_t)r);
            if (n < 0) {
                snprintf(c->why, sizeof c->why, "http2: %s",
                         nghttp2_strerror((int)n));
                c->dead = 1;
            }
        }
    }
}

static int usable(const h2_t *h)
{
    return h->conns && !h->conns->goaway && !h->conns->dead;
}

/* Sends what is due and fills |pfd| for every live connection; tears
 * down the dead and the drained. Returns the number of entries; *now set
 * when TLS holds decrypted bytes already (no waiting then). */
static size_t io_prepare(h2_t *h, struct pollfd *pfd, size_t cap, int *now)
{
    size_t n = 1;
    h2_conn *c = h->conns, *next;
    for (; c; c = next) {
        int out;
        next = c->next;
        out = c->dead ? 0 : conn_send(c);
        if (c->dead || (c->goaway && !c->calls && !c->outlen) ||
            (!nghttp2_session_want_read(c->ng) &&
             !nghttp2_session_want_write(c->ng))) {
            conn_teardown(h, c);
            continue;
        }
        if (n < cap)
            pfd[n++] = (struct pollfd){c->fd, (short)(POLLIN | (out ? POLLOUT : 0)), 0};
        if (gnutls_record_check_pending(c->tls))
            *now = 1;
    }
    return n;
}

static void io_pass(h2_t *h, struct pollfd *pfd, size_t cap)
{
    int now = 0;
    size_t n, i;
    uint64_t v;
    process_dirty(h);
    if (h->qhead && !usable(h))
        dial(h);
    if (h->qhead && usable(h))
        submit_queue(h, h->conns);
    pfd[0] = (struct pollfd){h->evfd, POLLIN, 0};
    n = io_prepare(h, pfd, cap, &now);
    pthread_mutex_unlock(&h->lock);
    poll(pfd, (nfds_t)n, now ? 0 : 1000);
    pthread_mutex_lock(&h->lock);
    if (read(h->evfd, &v, sizeof v) < 0) {
        /* nothing to drain */
    }
    /* Only this thread changes h->conns, so the order still matches. */
    i = 1;
    for (h2_conn *c = h->conns; c && i < n; c = c->next, i++)
        if (pfd[i].revents || gnutls_record_check_pending(c->tls))
            conn_recv(c);
}

void *h2_io_main(void *arg)
{
    h2_t *h = arg;
    struct pollfd pfd[64];
    pthread_mutex_lock(&h->lock);
    while (!h->stop)
        io_pass(h, pfd, sizeof pfd / sizeof pfd[0]);
    while (h->conns) {
        snprintf(h->conns->why, sizeof h->conns->why,
                 "the client is shutting down");
        conn_teardown(h, h->conns);
    }
    fail_queue(h, DRA_EIO, "the client is shutting down");
    process_dirty(h);
    pthread_mutex_unlock(&h->lock);
    return NULL;
}
