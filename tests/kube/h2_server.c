/* h2_server.c: the scripted HTTP/2-over-TLS test server (h2_server.h).
 * Blocking sockets and blocking TLS writes, polled reads: simple, and
 * enough for a client whose I/O thread always reads. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gnutls/gnutls.h>

#include "h2_server.h"

struct ts_conn {
    ts_server *s;
    int fd;
    gnutls_session_t tls;
    nghttp2_session *ng;
    int client_cert, dead;
    ts_stream *streams;
    struct ts_conn *next;
};

struct ts_server {
    pthread_mutex_t lock;
    pthread_t thread;
    int lfd, port, h2, stop, wake[2];
    gnutls_certificate_credentials_t cred;
    gnutls_priority_t prio;
    ts_handler fn;
    void *ud;
    ts_conn *conns;
    ts_stream *held;
    ts_stats st;
};

static void flush(ts_conn *c)
{
    const uint8_t *p;
    ssize_t n = 0;
    while (!c->dead && (n = nghttp2_session_mem_send(c->ng, &p)) > 0) {
        size_t off = 0;
        while (off < (size_t)n) {
            ssize_t w = gnutls_record_send(c->tls, p + off, (size_t)n - off);
            if (w == GNUTLS_E_AGAIN || w == GNUTLS_E_INTERRUPTED)
                continue;
            if (w < 0) {
                c->dead = 1;
                return;
            }
            off += (size_t)w;
        }
    }
    if (n < 0)
        c->dead = 1;
}

static ts_stream *stream_of(nghttp2_session *ng, int32_t id)
{
    return nghttp2_session_get_stream_user_data(ng, id);
}

static int on_begin(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
    ts_conn *c = ud;
    ts_stream *st;
    if (f->hd.type != NGHTTP2_HEADERS ||
        f->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    st = dra_calloc(NULL, 1, sizeof *st);
    st->conn = c;
    st->id = f->hd.stream_id;
    st->client_cert = c->client_cert;
    dra_buf_init(&st->body, NULL);
    dra_buf_init(&st->out, NULL);
    st->next = c->streams;
    c->streams = st;
    nghttp2_session_set_stream_user_data(ng, st->id, st);
    return 0;
}

static void field(char *dst, size_t cap, const uint8_t *v, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, v, n);
    dst[n] = '\0';
}

static int on_header(nghttp2_session *ng, const nghttp2_frame *f,
                     const uint8_t *name, size_t nl, const uint8_t *v,
                     size_t vl, uint8_t flags, void *ud)
{
    ts_stream *st = stream_of(ng, f->hd.stream_id);
    (void)flags, (void)ud;
    if (!st)
        return 0;
#define IS(lit) (nl == sizeof(lit) - 1 && memcmp(name, lit, nl) == 0)
    if (IS(":method"))
        field(st->method, sizeof st->method, v, vl);
    else if (IS(":path"))
        field(st->path, sizeof st->path, v, vl);
    else if (IS("authorization"))
        field(st->auth, sizeof st->auth, v, vl);
    else if (IS("content-type"))
        field(st->ctype, sizeof st->ctype, v, vl);
    else if (IS("user-agent"))
        field(st->ua, sizeof st->ua, v, vl);
    else if (IS("accept"))
        field(st->accept, sizeof st->accept, v, vl);
#undef IS
    return 0;
}

static int on_data(nghttp2_session *ng, uint8_t flags, int32_t id,
                   const uint8_t *data, size_t len, void *ud)
{
    ts_stream *st = stream_of(ng, id);
    (void)flags, (void)ud;
    if (st)
        dra_buf_append(&st->body, data, len);
    return 0;
}

static void record(ts_server *s, const ts_stream *st)
{
    dra_buf_fini(&s->st.last.body);
    s->st.last = *st;
    dra_buf_init(&s->st.last.body, NULL);
    dra_buf_init(&s->st.last.out, NULL);
    dra_buf_append(&s->st.last.body, st->body.p, st->body.len);
    s->st.nreq++;
}

static int on_frame(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
    ts_conn *c = ud;
    ts_stream *st;
    if ((f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA) ||
        !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
        return 0;
    if (!(st = stream_of(ng, f->hd.stream_id)))
        return 0;
    record(c->s, st);
    c->s->fn(c->s, st, c->s->ud);
    return 0;
}

static void stream_free(ts_server *s, ts_stream *st)
{
    if (s->held == st)
        s->held = NULL;
    dra_buf_fini(&st->body);
    dra_buf_fini(&st->out);
    dra_free(NULL, st);
}

static int on_close(nghttp2_session *ng, int32_t id, uint32_t code, void *ud)
{
    ts_conn *c = ud;
    ts_stream *st = stream_of(ng, id), **pp = &c->streams;
    if (!st)
        return 0;
    if (code == NGHTTP2_CANCEL)
        c->s->st.ncancel++;
    while (*pp && *pp != st)
        pp = &(*pp)->next;
    if (*pp)
        *pp = st->next;
    stream_free(c->s, st);
    return 0;
}

static ssize_t body_read(nghttp2_session *ng, int32_t id, uint8_t *buf,
                         size_t len, uint32_t *flags, nghttp2_data_source *src,
                         void *ud)
{
    ts_stream *st = src->ptr;
    size_t n = st->out.len - st->off;
    (void)ng, (void)id, (void)ud;
    if (n == 0 && !st->eof)
        return NGHTTP2_ERR_DEFERRED;
    if (n > len)
        n = len;
    if (n)
        memcpy(buf, st->out.p + st->off, n);
    st->off += n;
    if (st->eof && st->off == st->out.len)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

static void submit(ts_stream *st, int status)
{
    char code[8];
    nghttp2_data_provider prd = {{.ptr = st}, body_read};
    nghttp2_nv nv[2] = {
        {(uint8_t *)":status", (uint8_t *)code, 7, 0, NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)"content-type", (uint8_t *)"application/json", 12, 16,
         NGHTTP2_NV_FLAG_NONE}};
    nv[0].valuelen = (size_t)snprintf(code, sizeof code, "%d", status);
    st->answered = 1;
    nghttp2_submit_response(st->conn->ng, st->id, nv, 2, &prd);
}

void ts_respond(ts_stream *st, int status, const char *body, size_t len)
{
    if (body)
        dra_buf_append(&st->out, body, len);
    st->eof = 1;
    submit(st, status);
}

void ts_hold(ts_server *s, ts_stream *st)
{
    s->held = st;
    submit(st, 200);
}

void ts_goaway_in(ts_stream *st, int32_t last_id)
{
    nghttp2_submit_goaway(st->conn->ng, NGHTTP2_FLAG_NONE, last_id,
                          NGHTTP2_NO_ERROR, NULL, 0);
}

void ts_drop(ts_stream *st)
{
    shutdown(st->conn->fd, SHUT_RDWR);
}

/* ---- connections ------------------------------------------------------------ */

static void conn_free(ts_server *s, ts_conn *c)
{
    while (c->streams) {
        ts_stream *st = c->streams;
        c->streams = st->next;
        stream_free(s, st);
    }
    nghttp2_session_del(c->ng);
    gnutls_deinit(c->tls);
    close(c->fd);
    dra_free(NULL, c);
}

static int conn_new(ts_server *s, int fd)
{
    static const gnutls_datum_t h2 = {(unsigned char *)"h2", 2},
                                h1 = {(unsigned char *)"http/1.1", 8};
    nghttp2_session_callbacks *cb;
    nghttp2_settings_entry iv = {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100};
    ts_conn *c = dra_calloc(NULL, 1, sizeof *c);
    unsigned status = 1;
    int r;
    c->s = s;
    c->fd = fd;
    gnutls_init(&c->tls, GNUTLS_SERVER);
    gnutls_priority_set(c->tls, s->prio);
    gnutls_credentials_set(c->tls, GNUTLS_CRD_CERTIFICATE, s->cred);
    gnutls_certificate_server_set_request(c->tls, GNUTLS_CERT_REQUEST);
    gnutls_alpn_set_protocols(c->tls, s->h2 ? &h2 : &h1, 1, 0);
    gnutls_transport_set_int(c->tls, fd);
    gnutls_handshake_set_timeout(c->tls, 5000);
    do
        r = gnutls_handshake(c->tls);
    while (r < 0 && !gnutls_error_is_fatal(r));
    if (r < 0) {
        s->st.nhandshake_fail++;
        gnutls_deinit(c->tls);
        close(fd);
        dra_free(NULL, c);
        return -1;
    }
    if (gnutls_certificate_get_peers(c->tls, &status) &&
        gnutls_certificate_verify_peers2(c->tls, &status) == 0 && status == 0)
        c->client_cert = 1;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
    nghttp2_session_server_new(&c->ng, cb, c);
    nghttp2_session_callbacks_del(cb);
    nghttp2_submit_settings(c->ng, NGHTTP2_FLAG_NONE, &iv, 1);
    flush(c);
    c->next = s->conns;
    s->conns = c;
    s->st.nconn++;
    return 0;
}

static void conn_read(ts_conn *c)
{
    uint8_t buf[16384];
    ssize_t r = gnutls_record_recv(c->tls, buf, sizeof buf);
    if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED)
        return;
    if (r <= 0 || nghttp2_session_mem_recv(c->ng, buf, (size_t)r) < 0) {
        c->dead = 1;
        return;
    }
    flush(c);
}

static void reap(ts_server *s)
{
    ts_conn **pp = &s->conns;
    while (*pp) {
        ts_conn *c = *pp;
        if (c->dead || (!nghttp2_session_want_read(c->ng) &&
                        !nghttp2_session_want_write(c->ng))) {
            *pp = c->next;
            conn_free(s, c);
        } else {
            pp = &c->next;
        }
    }
}

static void *serve(void *arg)
{
    ts_server *s = arg;
    struct pollfd p[64];
    pthread_mutex_lock(&s->lock);
    while (!s->stop) {
        nfds_t n = 2, i;
        ts_conn *c;
        int now = 0;
        p[0] = (struct pollfd){s->lfd, POLLIN, 0};
        p[1] = (struct pollfd){s->wake[0], POLLIN, 0};
        for (c = s->conns; c && n < 64; c = c->next, n++) {
            p[n] = (struct pollfd){c->fd, POLLIN, 0};
            now |= gnutls_record_check_pending(c->tls) > 0;
        }
        pthread_mutex_unlock(&s->lock);
        poll(p, n, now ? 0 : 100);
        pthread_mutex_lock(&s->lock);
        if (p[1].revents) {
            char b[64];
            if (read(s->wake[0], b, sizeof b) < 0) {
                /* nothing */
            }
        }
        for (c = s->conns, i = 2; c && i < n; c = c->next, i++)
            if (p[i].revents || gnutls_record_check_pending(c->tls))
                conn_read(c);
        if (p[0].revents) {
            int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
            if (fd >= 0)
                conn_new(s, fd);
        }
        for (c = s->conns; c; c = c->next)
            flush(c);
        reap(s);
    }
    while (s->conns) {
        ts_conn *c = s->conns;
        s->conns = c->next;
        conn_free(s, c);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

ts_server *ts_start(const dra_apiserver_creds *cr, int h2, ts_handler fn,
                    void *ud)
{
    ts_server *s = dra_calloc(NULL, 1, sizeof *s);
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t al = sizeof a;
    gnutls_datum_t crt = {(unsigned char *)cr->server_cert,
                          (unsigned)strlen(cr->server_cert)};
    gnutls_datum_t key = {(unsigned char *)cr->server_key,
                          (unsigned)strlen(cr->server_key)};
    gnutls_datum_t ca = {(unsigned char *)cr->ca_cert,
                         (unsigned)strlen(cr->ca_cert)};
    int one = 1;
    pthread_mutex_init(&s->lock, NULL);
    s->h2 = h2;
    s->fn = fn;
    s->ud = ud;
    dra_buf_init(&s->st.last.body, NULL);
    gnutls_certificate_allocate_credentials(&s->cred);
    gnutls_certificate_set_x509_key_mem(s->cred, &crt, &key,
                                        GNUTLS_X509_FMT_PEM);
    gnutls_certificate_set_x509_trust_mem(s->cred, &ca, GNUTLS_X509_FMT_PEM);
    gnutls_priority_init(&s->prio, NULL, NULL);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(s->lfd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(s->lfd, 16) != 0 || pipe(s->wake) != 0)
        return NULL;
    getsockname(s->lfd, (struct sockaddr *)&a, &al);
    s->port = ntohs(a.sin_port);
    pthread_create(&s->thread, NULL, serve, s);
    return s;
}

int ts_port(const ts_server *s) { return s->port; }

void ts_stop(ts_server *s)
{
    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    pthread_mutex_unlock(&s->lock);
    if (write(s->wake[1], "x", 1) < 0) {
        /* the loop wakes within 100 ms anyway */
    }
    pthread_join(s->thread, NULL);
    close(s->lfd);
    close(s->wake[0]);
    close(s->wake[1]);
    gnutls_priority_deinit(s->prio);
    gnutls_certificate_free_credentials(s->cred);
    dra_buf_fini(&s->st.last.body);
    pthread_mutex_destroy(&s->lock);
    dra_free(NULL, s);
}

void ts_lock(ts_server *s) { pthread_mutex_lock(&s->lock); }
void ts_unlock(ts_server *s) { pthread_mutex_unlock(&s->lock); }
ts_stats *ts_stats_of(ts_server *s) { return &s->st; }

/* ---- driving from the test thread ---------------------------------------------- */

static int held_do(ts_server *s, int what, const char *data, size_t len)
{
    ts_stream *st;
    int ok = 0;
    pthread_mutex_lock(&s->lock);
    if ((st = s->held) != NULL) {
        ok = 1;
        if (what == 0)
            dra_buf_append(&st->out, data, len);
        else if (what == 1)
            st->eof = 1;
        if (what == 2)
            nghttp2_submit_rst_stream(st->conn->ng, NGHTTP2_FLAG_NONE, st->id,
                                      NGHTTP2_INTERNAL_ERROR);
        else
            nghttp2_session_resume_data(st->conn->ng, st->id);
        flush(st->conn);
    }
    pthread_mutex_unlock(&s->lock);
    return ok;
}

int ts_send(ts_server *s, const char *data, size_t len)
{
    return held_do(s, 0, data, len);
}
int ts_end(ts_server *s) { return held_do(s, 1, NULL, 0); }
int ts_rst(ts_server *s) { return held_do(s, 2, NULL, 0); }

size_t ts_backlog(ts_server *s)
{
    size_t n = 0;
    pthread_mutex_lock(&s->lock);
    if (s->held)
        n = s->held->out.len - s->held->off;
    pthread_mutex_unlock(&s->lock);
    return n;
}

void ts_close_all(ts_server *s)
{
    pthread_mutex_lock(&s->lock);
    while (s->conns) {
        ts_conn *c = s->conns;
        s->conns = c->next;
        shutdown(c->fd, SHUT_RDWR);
        conn_free(s, c);
    }
    pthread_mutex_unlock(&s->lock);
}

void ts_goaway_all(ts_server *s)
{
    pthread_mutex_lock(&s->lock);
    for (ts_conn *c = s->conns; c; c = c->next) {
        nghttp2_submit_goaway(c->ng, NGHTTP2_FLAG_NONE,
                              nghttp2_session_get_last_proc_stream_id(c->ng),
                              NGHTTP2_NO_ERROR, NULL, 0);
        flush(c);
    }
    pthread_mutex_unlock(&s->lock);
}
