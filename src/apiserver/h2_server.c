/*
 * h2_server.c: the HTTP/2 front end's edge: the listening socket, TLS
 * (GnuTLS, ALPN "h2" only: a client offering only other protocols fails
 * the handshake, one offering none is closed right after it), connection
 * threads and write workers.
 * Each connection thread runs its own epoll over the connections it
 * accepted; the I/O-free core (h2_conn.c) does the HTTP/2. Writes go to
 * the worker pool, and their answers, like watch notifies, come back
 * through a per-connection eventfd.
 */
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>

#include "apiserver_int.h"
#include "front.h"
#include "h2_int.h"
#include "pool.h"

#define H2_MAX_CONNS 20000
#define H2_HANDSHAKE_MS 10000
#define H2_IDLE_MS 300000  /* no stream open and no bytes: GOAWAY, close */
#define H2_STALL_MS 60000  /* output pending and none taken: close */
#define H2_STOP_MS 2000    /* streams and answers flushing at stop */
#define H2_OUT_HIGH (256 * 1024) /* stop reading while this much is unsent */
#define H2_OUT_CHUNK (64 * 1024)
/* Records made ahead of the socket: one send carries up to this much
 * (16 records), not one record each. */
#define H2_WIRE_BATCH (256 * 1024)

typedef struct h2_thread h2_thread;
typedef struct h2_sconn h2_sconn;

enum { EP_LISTEN, EP_STOP, EP_SOCK, EP_WAKE };

typedef struct h2_ep {
    int kind;
    h2_sconn *c;
} h2_ep;

struct h2_sconn {
    h2_thread *t;
    h2_sconn *prev, *next;
    h2_ep ep_sock, ep_wake;
    int fd, evfd;
    gnutls_session_t tls;
    int handshaken, read_blocked, dead;
    int closed; /* torn down; freed after the current batch of events */
    uint32_t events;
    api_h2c *core;
    dra_buf out;  /* nghttp2's bytes, TLS records not yet made of them */
    size_t off;
    dra_buf wire; /* TLS records not yet taken by the socket */
    size_t woff;
    int64_t start_ms, active_ms, stall_ms;
};

struct h2_thread {
    dra_apiserver_h2 *h;
    pthread_t t;
    int started;
    int ep, stopfd;
    h2_ep ep_listen, ep_stop;
    h2_sconn *conns;
    h2_sconn *graveyard; /* closed, still named by pending events */
    atomic_int stop;
};

struct dra_apiserver_h2 {
    dra_apiserver *srv;
    const dra_apiserver_creds *creds;
    gnutls_certificate_credentials_t xcred;
    int lfd, port;
    h2_thread *threads;
    int nthreads;
    atomic_int nconns;

    api_pool *pool; /* the write workers; NULL: writes run inline */
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the worker pool ------------------------------------------------------------- */

static void run_job(void *job, void *ud)
{
    (void)ud;
    api_h2_job_run(job);
}

static void dispatch(void *ud, api_h2_job *j)
{
    h2_sconn *c = ud;
    /* Not taken (out of memory): answer here rather than not at all. */
    if (api_pool_submit(c->t->h->pool, j))
        api_h2_job_run(j);
}

/* ---- connections ----------------------------------------------------------------- */

static void wake_fd(int fd)
{
    uint64_t one = 1;
    /* The only failure, a full counter, still leaves it readable. */
    while (write(fd, &one, sizeof one) < 0 && errno == EINTR)
        ;
}

static void wake(void *ud)
{
    h2_sconn *c = ud;
    wake_fd(c->evfd);
}

static int wire_flush(h2_sconn *c);

static void conn_close(h2_sconn *c)
{
    h2_thread *t = c->t;
    if (c->prev)
        c->prev->next = c->next;
    else
        t->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    /* The core first: after it no worker or stream calls wake(). */
    api_h2c_free(c->core);
    epoll_ctl(t->ep, EPOLL_CTL_DEL, c->fd, NULL);
    epoll_ctl(t->ep, EPOLL_CTL_DEL, c->evfd, NULL);
    if (c->handshaken && !c->dead) {
        /* Best effort: what the socket takes now, no waiting. */
        gnutls_bye(c->tls, GNUTLS_SHUT_WR);
        wire_flush(c);
    }
    gnutls_deinit(c->tls);
    close(c->fd);
    close(c->evfd);
    dra_buf_fini(&c->out);
    dra_buf_fini(&c->wire);
    atomic_fetch_sub(&t->h->nconns, 1);
    c->closed = 1;
    c->next = t->graveyard;
    t->graveyard = c;
}

static void thread_reap(h2_thread *t)
{
    while (t->graveyard) {
        h2_sconn *c = t->graveyard;
        t->graveyard = c->next;
        dra_free(t->h->srv->mem, c);
    }
}

static void conn_interest(h2_sconn *c, uint32_t ev)
{
    struct epoll_event e;
    if (ev == c->events)
        return;
    memset(&e, 0, sizeof e);
    e.events = ev;
    e.data.ptr = &c->ep_sock;
    if (!epoll_ctl(c->t->ep, EPOLL_CTL_MOD, c->fd, &e))
        c->events = ev;
}

/* Bytes of the answer not yet on the socket: before and after TLS. */
static size_t unsent(const h2_sconn *c)
{
    return (c->out.len - c->off) + (c->wire.len - c->woff);
}

/* GnuTLS's push: records go to |wire|, and the socket gets them in
 * large sends. One send per 16 KiB record cost a system call and a
 * loopback packet each (a fifth of the connection thread's time when
 * 1,000 watches took one event). */
static ssize_t tls_push(gnutls_transport_ptr_t p, const void *data, size_t len)
{
    h2_sconn *c = p;
    if (dra_buf_append(&c->wire, data, len)) {
        gnutls_transport_set_errno(c->tls, ENOMEM);
        return -1;
    }
    return (ssize_t)len;
}

/* Sends what |wire| holds; 1 on progress. Marks the connection dead on
 * a socket error. */
static int wire_flush(h2_sconn *c)
{
    int moved = 0;
    while (c->woff < c->wire.len) {
        ssize_t n = send(c->fd, c->wire.p + c->woff, c->wire.len - c->woff,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                c->dead = 1;
            break;
        }
        c->woff += (size_t)n;
        c->stall_ms = now_ms(); /* progress: the stall clock restarts */
        moved = 1;
    }
    if (c->woff == c->wire.len) {
        /* An idle connection keeps no batch-sized buffer. */
        if (c->wire.cap > H2_OUT_CHUNK)
            dra_buf_fini(&c->wire);
        else
            dra_buf_reset(&c->wire);
        c->woff = 0;
    }
    return moved;
}

/* Makes records of what is buffered and sends them; 1 on progress.
 * Marks the connection dead on a TLS or socket error. */
static int conn_write(h2_sconn *c)
{
    int moved = wire_flush(c);
    while (!c->dead && c->woff == c->wire.len && c->off < c->out.len) {
        while (c->off < c->out.len && c->wire.len < H2_WIRE_BATCH) {
            size_t len = c->out.len - c->off;
            ssize_t n;
            if (len > 16384)
                len = 16384;
            /* The push never blocks, so neither does this. */
            n = gnutls_record_send(c->tls, c->out.p + c->off, len);
            if (n == GNUTLS_E_INTERRUPTED)
                continue;
            if (n < 0) {
                c->dead = 1;
                break;
            }
            c->off += (size_t)n;
        }
        moved |= wire_flush(c);
    }
    if (c->off == c->out.len) {
        dra_buf_reset(&c->out);
        c->off = 0;
    }
    return moved;
}

/* Moves bytes from the core to the socket until either side stops. */
static void conn_flush(h2_sconn *c)
{
    for (int i = 0; i < 64 && !c->dead; i++) {
        size_t before = unsent(c);
        if (c->out.len - c->off < H2_OUT_CHUNK &&
            api_h2c_send(c->core, &c->out, c->off + H2_OUT_CHUNK))
            c->dead = 1;
        if (!conn_write(c) && unsent(c) == before)
            break;
        c->active_ms = now_ms();
    }
}

static void conn_read(h2_sconn *c)
{
    uint8_t buf[16384];
    c->read_blocked = 0;
    while (!c->dead) {
        ssize_t n;
        if (unsent(c) > H2_OUT_HIGH) {
            /* The peer does not take what it asked for: read no more
             * requests from it until it does. */
            c->read_blocked = 1;
            return;
        }
        n = gnutls_record_recv(c->tls, buf, sizeof buf);
        if (n == GNUTLS_E_AGAIN)
            return;
        if (n == GNUTLS_E_INTERRUPTED)
            continue;
        if (n <= 0) {
            c->dead = 1;
            return;
        }
        c->active_ms = now_ms();
        if (api_h2c_recv(c->core, buf, (size_t)n)) {
            /* nghttp2 queued its GOAWAY: send it, then close. */
            api_h2c_terminate(c->core);
            conn_flush(c);
            c->dead = 1;
            return;
        }
        conn_flush(c);
    }
}

static int alpn_is_h2(gnutls_session_t s)
{
    gnutls_datum_t p;
    return gnutls_alpn_get_selected_protocol(s, &p) == 0 && p.size == 2 &&
           !memcmp(p.data, "h2", 2);
}

static void conn_handshake(h2_sconn *c)
{
    api_h2c_cfg cfg;
    int rc = gnutls_handshake(c->tls);
    wire_flush(c);
    if (c->dead)
        return;
    if (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED) {
        /* The push never blocks: only the socket can hold records back. */
        conn_interest(c, c->woff < c->wire.len ? EPOLLIN | EPOLLOUT : EPOLLIN);
        return;
    }
    if (rc < 0 || !alpn_is_h2(c->tls)) {
        c->dead = 1;
        return;
    }
    c->handshaken = 1;
    memset(&cfg, 0, sizeof cfg);
    cfg.srv = c->t->h->srv;
    cfg.creds = c->t->h->creds;
    cfg.cert_ok = api_front_cert_ok(c->tls);
    cfg.dispatch = c->t->h->pool ? dispatch : NULL;
    cfg.wake = wake;
    cfg.ud = c;
    if (api_h2c_new(&cfg, &c->core)) {
        c->dead = 1;
        return;
    }
    if (atomic_load(&c->t->stop))
        api_h2c_shutdown(c->core);
    c->active_ms = now_ms();
}

/* One round for |c| after an event; closes it when it is done. */
static void conn_service(h2_sconn *c, int readable)
{
    if (!c->handshaken) {
        conn_handshake(c);
        if (!c->handshaken && !c->dead)
            return;
        readable = 1;
    }
    if (!c->dead && readable)
        conn_read(c);
    if (!c->dead)
        conn_flush(c);
    if (!c->dead && c->read_blocked && unsent(c) <= H2_OUT_HIGH)
        conn_read(c);
    if (c->dead || (!api_h2c_alive(c->core) && !unsent(c))) {
        conn_close(c);
        return;
    }
    if (!unsent(c))
        c->stall_ms = 0;
    else if (!c->stall_ms)
        c->stall_ms = now_ms();
    conn_interest(c, (c->read_blocked ? 0u : (uint32_t)EPOLLIN) |
                         (unsent(c) ? (uint32_t)EPOLLOUT : 0u));
}

static void conn_wake(h2_sconn *c)
{
    uint64_t v;
    if (read(c->evfd, &v, sizeof v) < 0 && errno != EAGAIN)
        c->dead = 1;
    if (c->core)
        api_h2c_poll(c->core);
    conn_service(c, 0);
}

/* |c|'s session: reads straight from its socket, writes through
 * tls_push. */
static gnutls_session_t tls_new(dra_apiserver_h2 *h, h2_sconn *c)
{
    static const gnutls_datum_t alpn = {(unsigned char *)"h2", 2};
    gnutls_session_t s;
    if (gnutls_init(&s, GNUTLS_SERVER | GNUTLS_NONBLOCK | GNUTLS_NO_SIGNAL))
        return NULL;
    if (gnutls_set_default_priority(s) ||
        gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, h->xcred) ||
        gnutls_alpn_set_protocols(s, &alpn, 1, GNUTLS_ALPN_MANDATORY)) {
        gnutls_deinit(s);
        return NULL;
    }
    /* Asked for, not required: a token authenticates too. */
    gnutls_certificate_server_set_request(s, GNUTLS_CERT_REQUEST);
    gnutls_transport_set_ptr2(s, (gnutls_transport_ptr_t)(intptr_t)c->fd, c);
    gnutls_transport_set_push_function(s, tls_push);
    return s;
}

static int conn_register(h2_sconn *c)
{
    struct epoll_event e;
    memset(&e, 0, sizeof e);
    e.events = EPOLLIN;
    e.data.ptr = &c->ep_sock;
    if (epoll_ctl(c->t->ep, EPOLL_CTL_ADD, c->fd, &e))
        return -1;
    c->events = EPOLLIN;
    e.data.ptr = &c->ep_wake;
    if (epoll_ctl(c->t->ep, EPOLL_CTL_ADD, c->evfd, &e)) {
        epoll_ctl(c->t->ep, EPOLL_CTL_DEL, c->fd, NULL);
        return -1;
    }
    return 0;
}

static void conn_accept(h2_thread *t, int fd)
{
    dra_apiserver_h2 *h = t->h;
    h2_sconn *c = NULL;
    int one = 1;
    if (atomic_fetch_add(&h->nconns, 1) >= H2_MAX_CONNS ||
        !(c = dra_calloc(h->srv->mem, 1, sizeof *c)))
        goto fail;
    c->t = t;
    c->fd = fd;
    c->ep_sock = (h2_ep){EP_SOCK, c};
    c->ep_wake = (h2_ep){EP_WAKE, c};
    dra_buf_init(&c->out, h->srv->mem);
    dra_buf_init(&c->wire, h->srv->mem);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (c->evfd < 0)
        goto fail;
    if (!(c->tls = tls_new(h, c)))
        goto fail_evfd;
    if (conn_register(c))
        goto fail_tls;
    c->start_ms = c->active_ms = now_ms();
    c->next = t->conns;
    if (c->next)
        c->next->prev = c;
    t->conns = c;
    return;
fail_tls:
    gnutls_deinit(c->tls);
fail_evfd:
    close(c->evfd);
fail:
    dra_free(h->srv->mem, c);
    atomic_fetch_sub(&h->nconns, 1);
    close(fd);
}

/* ---- connection threads --------------------------------------------------------------- */

static void thread_accept(h2_thread *t)
{
    for (int i = 0; i < 64; i++) {
        int fd = accept4(t->h->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        conn_accept(t, fd);
    }
}

/* Handshakes that take too long, idle and stalled connections. */
static void thread_timers(h2_thread *t, int64_t now)
{
    h2_sconn *next;
    for (h2_sconn *c = t->conns; c; c = next) {
        next = c->next;
        if (!c->handshaken) {
            if (now - c->start_ms > H2_HANDSHAKE_MS)
                conn_close(c);
        } else if (c->stall_ms && now - c->stall_ms > H2_STALL_MS) {
            conn_close(c);
        } else if (api_h2c_idle(c->core) && now - c->active_ms > H2_IDLE_MS) {
            api_h2c_terminate(c->core);
            conn_service(c, 0);
        }
    }
}

static void thread_begin_stop(h2_thread *t)
{
    h2_sconn *next;
    epoll_ctl(t->ep, EPOLL_CTL_DEL, t->h->lfd, NULL);
    for (h2_sconn *c = t->conns; c; c = next) {
        next = c->next;
        if (!c->handshaken) {
            conn_close(c);
            continue;
        }
        api_h2c_shutdown(c->core);
        conn_service(c, 0);
    }
}

static void *thread_main(void *arg)
{
    h2_thread *t = arg;
    struct epoll_event ev[128];
    int64_t last_timers = now_ms(), stop_at = 0;
    for (;;) {
        int n = epoll_wait(t->ep, ev, 128, 250);
        int64_t now = now_ms();
        for (int i = 0; i < n; i++) {
            h2_ep *e = ev[i].data.ptr;
            if (e->c && e->c->closed)
                continue;
            if (e->kind == EP_LISTEN)
                thread_accept(t);
            else if (e->kind == EP_STOP) {
                uint64_t v;
                if (read(t->stopfd, &v, sizeof v) < 0 && errno != EAGAIN)
                    break;
                if (!stop_at) {
                    stop_at = now + H2_STOP_MS;
                    thread_begin_stop(t);
                }
            } else if (e->kind == EP_SOCK)
                conn_service(e->c, 1);
            else if (e->kind == EP_WAKE)
                conn_wake(e->c);
        }
        thread_reap(t);
        if (now - last_timers >= 1000) {
            thread_timers(t, now);
            last_timers = now;
        }
        if (stop_at && (!t->conns || now >= stop_at))
            break;
    }
    while (t->conns)
        conn_close(t->conns);
    thread_reap(t);
    return NULL;
}

/* ---- start / stop ---------------------------------------------------------------------- */

static dra_err listen_on(dra_apiserver_h2 *h, const dra_apiserver_http_opts *opts,
                         dra_diag *d)
{
    struct sockaddr_storage ss;
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    socklen_t len;
    const char *host = opts->host;
    int one = 1;
    memset(&ss, 0, sizeof ss);
    if (!host || !*host || !strcmp(host, "localhost"))
        host = "127.0.0.1";
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)opts->port);
        len = sizeof *a4;
    } else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)opts->port);
        len = sizeof *a6;
    } else {
        dra_diag_add(d, "", 0, 0, "cannot listen on \"%s\": not an IP address", host);
        return DRA_EINVAL;
    }
    h->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (h->lfd < 0)
        goto fail;
    setsockopt(h->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(h->lfd, (struct sockaddr *)&ss, len) || listen(h->lfd, 1024))
        goto fail;
    len = sizeof ss;
    if (getsockname(h->lfd, (struct sockaddr *)&ss, &len))
        goto fail;
    h->port = ntohs(ss.ss_family == AF_INET ? a4->sin_port : a6->sin6_port);
    return DRA_OK;
fail:
    dra_diag_add(d, "", 0, 0, "cannot serve HTTP/2 on %s port %d: %s", host,
                 opts->port, strerror(errno));
    return DRA_EIO;
}

static dra_err tls_setup(dra_apiserver_h2 *h, dra_diag *d)
{
    const dra_apiserver_creds *cr = h->creds;
    gnutls_datum_t cert = {(unsigned char *)cr->server_cert,
                           (unsigned)strlen(cr->server_cert)};
    gnutls_datum_t key = {(unsigned char *)cr->server_key,
                          (unsigned)strlen(cr->server_key)};
    gnutls_datum_t ca = {(unsigned char *)cr->ca_cert,
                         cr->ca_cert ? (unsigned)strlen(cr->ca_cert) : 0};
    int rc = gnutls_certificate_allocate_credentials(&h->xcred);
    if (rc)
        return DRA_ENOMEM;
    rc = gnutls_certificate_set_x509_key_mem(h->xcred, &cert, &key, GNUTLS_X509_FMT_PEM);
    if (!rc && cr->ca_cert &&
        gnutls_certificate_set_x509_trust_mem(h->xcred, &ca, GNUTLS_X509_FMT_PEM) < 0)
        rc = GNUTLS_E_BASE64_DECODING_ERROR;
    if (rc) {
        dra_diag_add(d, "", 0, 0, "HTTP/2 TLS setup failed: %s", gnutls_strerror(rc));
        return DRA_EIO;
    }
    return DRA_OK;
}

static int thread_start(dra_apiserver_h2 *h, h2_thread *t)
{
    struct epoll_event e;
    t->h = h;
    t->ep_listen = (h2_ep){EP_LISTEN, NULL};
    t->ep_stop = (h2_ep){EP_STOP, NULL};
    t->ep = epoll_create1(EPOLL_CLOEXEC);
    t->stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (t->ep < 0 || t->stopfd < 0)
        return -1;
    memset(&e, 0, sizeof e);
    /* Every thread waits on the one listener; EPOLLEXCLUSIVE wakes one. */
    e.events = EPOLLIN | EPOLLEXCLUSIVE;
    e.data.ptr = &t->ep_listen;
    if (epoll_ctl(t->ep, EPOLL_CTL_ADD, h->lfd, &e))
        return -1;
    e.events = EPOLLIN;
    e.data.ptr = &t->ep_stop;
    if (epoll_ctl(t->ep, EPOLL_CTL_ADD, t->stopfd, &e))
        return -1;
    if (pthread_create(&t->t, NULL, thread_main, t))
        return -1;
    t->started = 1;
    return 0;
}

static void h2_free(dra_apiserver_h2 *h)
{
    for (int i = 0; i < h->nthreads; i++) {
        h2_thread *t = &h->threads[i];
        atomic_store(&t->stop, 1);
        if (t->started)
            wake_fd(t->stopfd);
    }
    for (int i = 0; i < h->nthreads; i++) {
        h2_thread *t = &h->threads[i];
        if (t->started)
            pthread_join(t->t, NULL);
        if (t->ep >= 0)
            close(t->ep);
        if (t->stopfd >= 0)
            close(t->stopfd);
    }
    /* After the threads: every connection is gone, so workers still
     * holding jobs only drop their answers. */
    api_pool_stop(h->pool);
    h->pool = NULL;
    if (h->lfd >= 0)
        close(h->lfd);
    if (h->xcred)
        gnutls_certificate_free_credentials(h->xcred);
    dra_free(h->srv->mem, h->threads);
    dra_free(h->srv->mem, h);
}

static dra_err start_threads(dra_apiserver_h2 *h, const dra_apiserver_http_opts *opts)
{
    int workers = opts->workers > 0 ? opts->workers : 64;
    int threads = opts->threads > 0 ? opts->threads : 2;
    dra_err e;
    h->threads = dra_calloc(h->srv->mem, (size_t)threads, sizeof *h->threads);
    if (!h->threads)
        return DRA_ENOMEM;
    /* No worker at all (no thread could start): writes run inline. */
    if ((e = api_pool_start(h->srv->mem, workers, run_job, NULL, &h->pool)) == DRA_ENOMEM)
        return e;
    for (int i = 0; i < threads; i++)
        h->threads[i].ep = h->threads[i].stopfd = -1;
    for (; h->nthreads < threads;) {
        int rc = thread_start(h, &h->threads[h->nthreads++]);
        if (rc)
            return DRA_EIO;
    }
    return DRA_OK;
}

dra_err dra_apiserver_h2_start(dra_apiserver *srv, const dra_apiserver_http_opts *opts,
                               dra_apiserver_h2 **out, dra_diag *d)
{
    dra_apiserver_h2 *h;
    dra_err e;
    *out = NULL;
    if (!opts || !opts->creds || !opts->creds->server_cert ||
        !opts->creds->server_key || !opts->creds->token)
        return DRA_EINVAL;
    h = dra_calloc(srv->mem, 1, sizeof *h);
    if (!h)
        return DRA_ENOMEM;
    h->srv = srv;
    h->creds = opts->creds;
    h->lfd = -1;
    atomic_init(&h->nconns, 0);
    if ((e = tls_setup(h, d)) || (e = listen_on(h, opts, d)) ||
        (e = start_threads(h, opts))) {
        if (e == DRA_EIO && !dra_diag_first(d))
            dra_diag_add(d, "", 0, 0, "cannot start the HTTP/2 threads");
        h2_free(h);
        return e;
    }
    *out = h;
    return DRA_OK;
}

int dra_apiserver_h2_port(const dra_apiserver_h2 *h)
{
    return h->port;
}

void dra_apiserver_h2_stop(dra_apiserver_h2 *h)
{
    if (h)
        h2_free(h);
}
