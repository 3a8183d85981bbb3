/* libFuzzer target: the HTTP/2 REST client (src/kube/h2_transport.c and
 * h2_conn.c) on whatever an API server sends. A TLS server thread on
 * 127.0.0.1 (ALPN h2, a CA and serving certificate made once at start-up
 * by dra_apiserver_creds_load) completes each handshake, writes the
 * input's bytes for that connection verbatim as its side of the HTTP/2
 * connection, ends it and reads until the client hangs up. Meanwhile a
 * client from dra_kube_h2_cluster_new makes a request (GET, list, POST,
 * or a PUT larger than the first flow-control window) and a watch read
 * to its end; the input format is in kube_h2_input.h. Server and client
 * live across inputs (no thread per input, so libFuzzer's per-input leak
 * check sees balanced allocations), and every input ends with all its
 * connections closed on both sides, so the next one dials afresh. Every
 * call must give an error from its documented set or a valid answer,
 * and the end of the server's bytes must end every call: a transport
 * timeout (the client's are 5 s) aborts as a finding, as do crashes,
 * leaks and UBSan reports. Inputs over 64 KiB are skipped. Seeds:
 * gen_kube_h2.c. FUZZ_KUBE_H2_VERBOSE=1 prints each call's result and
 * each input's time on stderr. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>

#include "dra/apiserver.h"
#include "dra/cluster.h"
#include "dra/kube.h"
#include "kube_h2_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_INPUT (1u << 16)
#define MAX_CONNS 8      /* the client dials at most four per input */
#define CONN_MS 4000     /* a server connection's whole life */
#define CLIENT_MS 5000   /* the client's request, connect and watch waits */
#define MAX_EVENTS 10000 /* dra_watch_next calls per watch */
#define BIG_LEN (96u << 10)

/* ---- the server --------------------------------------------------------------- */

typedef enum sstate { S_FREE, S_SHAKE, S_WRITE, S_WAIT, S_END, S_DRAIN } sstate;

/* One accepted connection, touched by the server thread only. */
typedef struct sconn {
    int fd;
    gnutls_session_t tls;
    sstate state;
    const uint8_t *p;      /* this connection's bytes */
    size_t len, off, mark; /* mark: where the next WAIT is (len: none) */
    size_t record;         /* TLS record size */
    int bye, waits, want_out, eof;
    unsigned need;         /* S_WAIT: requests the client must have sent */
    unsigned ended;        /* client frames with END_STREAM */
    size_t skip, hlen;     /* the client's frames: bytes to skip, header held */
    uint8_t hdr[9];
    double wait_until, deadline;
} sconn;

/* The server thread, serving the current input while armed. */
typedef struct server {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int quit, armed;            /* under lock, with the input: */
    const uint8_t *data;        /* the connections' bytes, KH2_SEP between */
    size_t size, record;
    int bye, naccepted, nclosed;
    int kept;                   /* the client kept an ended connection */
    sconn conns[MAX_CONNS];     /* the server thread's own */
} server;

/* Made once: the server, its credentials and socket, and the client.
 * Both live across inputs, so that neither makes a thread per input;
 * every input ends with every connection closed on both sides. */
static struct {
    dra_apiserver_creds cr;
    gnutls_certificate_credentials_t cred;
    gnutls_priority_t prio;
    int lfd, wake[2];
    char url[64];
    server s;
    dra_cluster *c;
    char big[BIG_LEN]; /* the PUT's body */
} G;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The |i|th connection's bytes (empty past the last). */
static void segment(const uint8_t *d, size_t n, int i, const uint8_t **p,
                    size_t *len)
{
    const uint8_t *end = d + n;
    for (;;) {
        const uint8_t *sep = memmem(d, (size_t)(end - d), KH2_SEP, KH2_MARK_LEN);
        if (i-- == 0) {
            *p = d;
            *len = (size_t)((sep ? sep : end) - d);
            return;
        }
        if (!sep) {
            *p = NULL;
            *len = 0;
            return;
        }
        d = sep + KH2_MARK_LEN;
    }
}

static size_t find_mark(const sconn *k)
{
    const uint8_t *m = k->off < k->len
                           ? memmem(k->p + k->off, k->len - k->off, KH2_WAIT,
                                    KH2_MARK_LEN)
                           : NULL;
    return m ? (size_t)(m - k->p) : k->len;
}

/* Follows the client's frames (after its 24-byte preface) to count the
 * requests it has finished sending. */
static void count_frames(sconn *k, const uint8_t *p, size_t n)
{
    while (n) {
        if (k->skip) {
            size_t t = k->skip < n ? k->skip : n;
            k->skip -= t, p += t, n -= t;
            continue;
        }
        k->hdr[k->hlen++] = *p++, n--;
        if (k->hlen < 9)
            continue;
        if (k->hdr[3] <= 1 && (k->hdr[4] & 1)) /* DATA, HEADERS: END_STREAM */
            k->ended++;
        k->skip = (size_t)k->hdr[0] << 16 | (size_t)k->hdr[1] << 8 | k->hdr[2];
        k->hlen = 0;
    }
}

/* Takes |fd| for the input being served, or closes it (none is, or no
 * slot is free). */
static void conn_new(server *s, int fd)
{
    static const gnutls_datum_t h2 = {(unsigned char *)"h2", 2};
    sconn *k = NULL;
    int one = 1;
    for (int i = 0; i < MAX_CONNS && !k; i++)
        if (s->conns[i].state == S_FREE)
            k = &s->conns[i];
    pthread_mutex_lock(&s->lock);
    if (!k || !s->armed) {
        pthread_mutex_unlock(&s->lock);
        close(fd);
        return;
    }
    memset(k, 0, sizeof *k);
    segment(s->data, s->size, s->naccepted++, &k->p, &k->len);
    k->record = s->record;
    k->bye = s->bye;
    pthread_mutex_unlock(&s->lock);
    /* Small records must not wait for the client's delayed ACK. */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    k->fd = fd;
    if (gnutls_init(&k->tls, GNUTLS_SERVER | GNUTLS_NONBLOCK |
                                 GNUTLS_NO_SIGNAL) != 0 ||
        gnutls_priority_set(k->tls, G.prio) != 0 ||
        gnutls_credentials_set(k->tls, GNUTLS_CRD_CERTIFICATE, G.cred) != 0 ||
        gnutls_alpn_set_protocols(k->tls, &h2, 1, 0) != 0)
        abort();
    gnutls_transport_set_int(k->tls, fd);
    k->mark = find_mark(k);
    k->skip = 24;
    k->deadline = now_s() + CONN_MS / 1e3;
    k->state = S_SHAKE;
}

static void conn_end(server *s, sconn *k)
{
    gnutls_deinit(k->tls);
    close(k->fd);
    k->state = S_FREE;
    pthread_mutex_lock(&s->lock);
    s->nclosed++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->lock);
}

static void conn_read(sconn *k)
{
    uint8_t buf[16384];
    for (int i = 0; i < 64 && !k->eof; i++) {
        ssize_t r = gnutls_record_recv(k->tls, buf, sizeof buf);
        if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED)
            return;
        if (r <= 0) /* the client hung up (it never sends close_notify) */
            k->eof = 1;
        else
            count_frames(k, buf, (size_t)r);
    }
}

/* Writes up to the next WAIT or the end. 1 when it has to come back
 * (blocked, waiting, or the connection ended), 0 when all is written. */
static int conn_write(server *s, sconn *k, double now)
{
    k->want_out = 0;
    while (k->off < k->len) {
        size_t n;
        ssize_t r;
        if (k->off == k->mark) {
            k->off += KH2_MARK_LEN;
            k->need = k->off < k->len ? k->p[k->off++] : 1;
            k->mark = find_mark(k);
            if (++k->waits > KH2_MAX_WAITS)
                continue;
            k->state = S_WAIT;
            k->wait_until = now + KH2_WAIT_MS / 1e3;
            return 1;
        }
        n = k->mark - k->off; /* the mark is never behind */
        if (n > k->record)
            n = k->record;
        /* After EAGAIN GnuTLS wants the same call again: off, mark and
         * record stay put until it succeeds. */
        r = gnutls_record_send(k->tls, k->p + k->off, n);
        if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED) {
            k->want_out = 1;
            return 1;
        }
        if (r < 0) {
            conn_end(s, k);
            return 1;
        }
        k->off += (size_t)r;
    }
    k->state = S_END;
    return 0;
}

/* One step of a connection, never blocking. */
static void conn_step(server *s, sconn *k, double now)
{
    int r;
    if (now >= k->deadline) {
        /* The client reads whatever comes, so only a client that kept a
         * connection the server had ended lets one get this old. */
        if (k->state == S_DRAIN) {
            pthread_mutex_lock(&s->lock);
            s->kept = 1;
            pthread_mutex_unlock(&s->lock);
        }
        conn_end(s, k);
        return;
    }
    if (k->state == S_SHAKE) {
        r = gnutls_handshake(k->tls);
        if (r < 0) {
            if (gnutls_error_is_fatal(r))
                conn_end(s, k);
            return;
        }
        k->state = S_WRITE;
    }
    conn_read(k);
    if (k->eof) {
        conn_end(s, k);
        return;
    }
    if (k->state == S_WAIT) {
        if (k->ended < k->need && now < k->wait_until)
            return;
        k->state = S_WRITE;
    }
    if (k->state == S_WRITE && conn_write(s, k, now))
        return;
    if (k->state == S_END) {
        if (k->bye) {
            r = gnutls_bye(k->tls, GNUTLS_SHUT_WR);
            if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED) {
                k->want_out = 1;
                return;
            }
        }
        shutdown(k->fd, SHUT_WR);
        k->want_out = 0;
        k->state = S_DRAIN; /* until the client hangs up */
    }
}

static short conn_events(const sconn *k)
{
    if (k->state == S_SHAKE)
        return gnutls_record_get_direction(k->tls) ? POLLOUT : POLLIN;
    return (short)(POLLIN | (k->want_out ? POLLOUT : 0));
}

static void *serve(void *arg)
{
    server *s = arg;
    for (;;) {
        struct pollfd p[2 + MAX_CONNS];
        sconn *at[MAX_CONNS];
        nfds_t n = 2;
        double now = now_s(), next = now + 1;
        int quit, armed, pending = 0, fd;
        char b[64];
        pthread_mutex_lock(&s->lock);
        quit = s->quit, armed = s->armed;
        pthread_mutex_unlock(&s->lock);
        for (int i = 0; i < MAX_CONNS; i++) {
            sconn *k = &s->conns[i];
            if (k->state == S_FREE)
                continue;
            if (!armed) { /* the input is over: its bytes may be gone */
                conn_end(s, k);
                continue;
            }
            at[n - 2] = k;
            p[n++] = (struct pollfd){k->fd, conn_events(k), 0};
            if (k->deadline < next)
                next = k->deadline;
            if (k->state == S_WAIT && k->wait_until < next)
                next = k->wait_until;
            if (k->state != S_SHAKE && gnutls_record_check_pending(k->tls))
                pending = 1;
        }
        if (quit)
            break;
        p[0] = (struct pollfd){G.wake[0], POLLIN, 0};
        p[1] = (struct pollfd){G.lfd, POLLIN, 0};
        poll(p, n, pending || next <= now ? 0 : (int)((next - now) * 1000) + 1);
        while (read(G.wake[0], b, sizeof b) > 0) {
        }
        while ((fd = accept4(G.lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0)
            conn_new(s, fd);
        for (nfds_t i = 2; i < n; i++)
            if (at[i - 2]->state != S_FREE)
                conn_step(s, at[i - 2], now_s());
    }
    return NULL;
}

static void server_wake(void)
{
    if (write(G.wake[1], "x", 1) < 0) {
        /* the pipe is full: the thread is awake anyway */
    }
}

/* Serves |data| from the next connection on. */
static void server_arm(server *s, const uint8_t *data, size_t size,
                       unsigned mode)
{
    pthread_mutex_lock(&s->lock);
    s->data = data;
    s->size = size;
    s->record = KH2_RECORD(mode >> 4);
    s->bye = (mode & KH2_BYE) != 0;
    s->naccepted = s->nclosed = s->kept = 0;
    s->armed = 1;
    pthread_mutex_unlock(&s->lock);
}

/* Until the client has hung up every connection the server took (each
 * ends by its deadline anyway). */
static void server_idle(server *s)
{
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    dl.tv_sec += CONN_MS / 1000 + 1;
    pthread_mutex_lock(&s->lock);
    while (s->nclosed < s->naccepted &&
           pthread_cond_timedwait(&s->cv, &s->lock, &dl) != ETIMEDOUT) {
    }
    pthread_mutex_unlock(&s->lock);
}

/* Ends the input: no connection of it stays open. 1 when the client
 * kept one the server had ended. */
static int server_disarm(server *s)
{
    int kept;
    pthread_mutex_lock(&s->lock);
    s->armed = 0;
    server_wake();
    while (s->nclosed < s->naccepted)
        pthread_cond_wait(&s->cv, &s->lock);
    s->data = NULL;
    kept = s->kept;
    pthread_mutex_unlock(&s->lock);
    return kept;
}

/* ---- set-up, once ----------------------------------------------------------------- */

static void teardown(void)
{
    pthread_mutex_lock(&G.s.lock);
    G.s.quit = 1;
    pthread_mutex_unlock(&G.s.lock);
    server_wake();
    pthread_join(G.s.thread, NULL);
    pthread_cond_destroy(&G.s.cv);
    pthread_mutex_destroy(&G.s.lock);
    dra_cluster_free(G.c);
    gnutls_priority_deinit(G.prio);
    gnutls_certificate_free_credentials(G.cred);
    dra_apiserver_creds_fini(&G.cr);
    close(G.lfd);
    close(G.wake[0]);
    close(G.wake[1]);
}

static void creds_make(void)
{
    static const char *const files[] = {"ca.crt",    "ca.key",    "server.crt",
                                        "server.key", "admin.crt", "admin.key",
                                        "token"};
    char dir[64], path[96];
    dra_diag d;
    dra_diag_init(&d, NULL);
    snprintf(dir, sizeof dir, "/tmp/dra-fuzz-kube-h2-XXXXXX");
    if (!mkdtemp(dir) || dra_apiserver_creds_load(dir, NULL, &G.cr, &d)) {
        fprintf(stderr, "fuzz_kube_h2: credentials: %s\n",
                dra_diag_first(&d) ? dra_diag_first(&d) : "mkdtemp failed");
        abort();
    }
    dra_diag_fini(&d);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir); /* the PEM texts are in G.cr now */
}

static void server_start(server *s)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t al = sizeof a;
    gnutls_datum_t crt = {(unsigned char *)G.cr.server_cert,
                          (unsigned)strlen(G.cr.server_cert)};
    gnutls_datum_t key = {(unsigned char *)G.cr.server_key,
                          (unsigned)strlen(G.cr.server_key)};
    pthread_condattr_t ca;
    if (gnutls_certificate_allocate_credentials(&G.cred) != 0 ||
        gnutls_certificate_set_x509_key_mem(G.cred, &crt, &key,
                                            GNUTLS_X509_FMT_PEM) < 0 ||
        gnutls_priority_init(&G.prio, NULL, NULL) != 0)
        abort();
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    G.lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (G.lfd < 0 || bind(G.lfd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(G.lfd, 16) != 0 ||
        getsockname(G.lfd, (struct sockaddr *)&a, &al) != 0 ||
        pipe2(G.wake, O_CLOEXEC | O_NONBLOCK) != 0)
        abort();
    snprintf(G.url, sizeof G.url, "https://127.0.0.1:%d", ntohs(a.sin_port));
    pthread_mutex_init(&s->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&s->thread, NULL, serve, s) != 0)
        abort();
}

/* The client: a kubeconfig in memory, as tests/kube/test_kube_h2_drad.c
 * makes one, trusting the CA, with a token and 5 s timeouts. */
static void client_new(void)
{
    static const char token[] = "fuzz-token";
    dra_kube_config cfg;
    dra_diag d;
    dra_diag_init(&d, NULL);
    dra_kube_config_init(&cfg, NULL);
    cfg.server = G.url;
    cfg.ca_data = G.cr.ca_cert;
    cfg.ca_len = strlen(G.cr.ca_cert);
    cfg.token = token;
    cfg.timeout_ms = CLIENT_MS;
    cfg.connect_timeout_ms = CLIENT_MS;
    if (dra_kube_h2_cluster_new(&cfg, NULL, &G.c, &d) != DRA_OK) {
        fprintf(stderr, "fuzz_kube_h2: client: %s\n", dra_diag_first(&d));
        abort();
    }
    dra_kube_config_fini(&cfg);
    dra_diag_fini(&d);
}

static void setup(void)
{
    size_t off;
    creds_make();
    server_start(&G.s);
    client_new();
    off = (size_t)snprintf(G.big, sizeof G.big,
                           "{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
                           "\"metadata\":{\"name\":\"x\"},\"pad\":\"");
    memset(G.big + off, 'x', BIG_LEN - off - 2);
    memcpy(G.big + BIG_LEN - 2, "\"}", 2);
    atexit(teardown);
}

/* ---- the client ----------------------------------------------------------------- */

static int verbose = -1; /* FUZZ_KUBE_H2_VERBOSE=1: each result on stderr */

static void say(const char *what, dra_err err, const dra_kstatus *st)
{
    if (verbose < 0)
        verbose = getenv("FUZZ_KUBE_H2_VERBOSE") != NULL;
    if (verbose)
        fprintf(stderr, "%s: %s, code %d, %s\n", what, dra_errname(err),
                st ? st->code : 0, st ? st->message : "");
}

static void finding(const char *what, dra_err err, const dra_kstatus *st)
{
    fprintf(stderr, "fuzz_kube_h2: %s: %s (%s), code %d, message \"%s\"\n",
            what, dra_errname(err), dra_strerror(err), st ? st->code : 0,
            st ? st->message : "");
    abort();
}

/* What a request or a watch's opening may answer: the error its HTTP
 * status maps to (cluster.h), DRA_EPARSE for a 2xx that is not JSON,
 * DRA_ENOMEM, or a transport failure (DRA_EIO, with a message). A
 * DRA_ETIMEOUT is an HTTP 504 or a call the end of the connection did
 * not end. A request's success carries its 2xx status (|is_request|). */
static void check_call(const char *what, int is_request, dra_err err,
                       const dra_kstatus *st)
{
    switch (err) {
    case DRA_OK:
        if (is_request && (st->code < 200 || st->code > 299))
            finding(what, err, st);
        break;
    case DRA_ETIMEOUT:
        if (st->code != 504)
            finding(what, err, st);
        break;
    case DRA_EIO:
        if (!st->code && !st->message[0])
            finding(what, err, st);
        break;
    case DRA_ENOMEM: case DRA_EPARSE: case DRA_EINVAL: case DRA_EUNAUTHORIZED:
    case DRA_EFORBIDDEN: case DRA_ENOTFOUND: case DRA_EUNSUPPORTED:
    case DRA_EEXIST: case DRA_ECONFLICT: case DRA_EGONE: case DRA_ETOOLARGE:
    case DRA_EINVALID: case DRA_EUNAVAILABLE:
        break;
    default:
        finding(what, err, st);
    }
}

/* An answer's document goes back to JSON, as callers print it. */
static void touch(const dra_doc *doc)
{
    dra_buf b;
    dra_buf_init(&b, NULL);
    if (doc && dra_doc_to_json(doc, 0, &b) != DRA_OK && !b.oom)
        finding("re-encoding an answer", DRA_EINVAL, NULL);
    dra_buf_fini(&b);
}

static void request(dra_cluster *c, unsigned kind)
{
    static const char small[] =
        "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"x\"}}";
    const dra_gvr pods = DRA_GVR_PODS;
    dra_list_opts lo = {.limit = 10};
    dra_cluster_req req = {"POST", "/api/v1/namespaces/default/pods", NULL,
                           NULL, small, sizeof small - 1};
    dra_kstatus st;
    dra_doc *doc = NULL;
    dra_arena a;
    dra_err err;
    dra_arena_init(&a, NULL);
    switch (kind) {
    case KH2_GET:
        err = dra_cluster_get(c, &pods, "default", "x", &a, &doc, &st);
        break;
    case KH2_LIST:
        err = dra_cluster_list(c, &pods, "default", &lo, &a, &doc, &st);
        break;
    case KH2_UPDATE:
        req = (dra_cluster_req){"PUT", "/api/v1/namespaces/default/pods/x",
                                NULL, NULL, G.big, BIG_LEN};
        /* fall through */
    default:
        err = dra_cluster_do(c, &req, &a, &doc, &st);
    }
    say("request", err, &st);
    check_call("request", 1, err, &st);
    touch(doc);
    dra_arena_fini(&a);
}

static dra_watch *watch_open(dra_cluster *c)
{
    const dra_gvr pods = DRA_GVR_PODS;
    dra_list_opts lo = {.resource_version = "7", .allow_bookmarks = 1};
    dra_kstatus st;
    dra_watch *w = NULL;
    dra_err err = dra_cluster_watch(c, &pods, "default", &lo, &w, &st);
    say("watch", err, &st);
    check_call("watch", 0, err, &st);
    if ((err == DRA_OK) != (w != NULL))
        finding("watch: the stream does not match the result", err, &st);
    return w;
}

/* Events until the stream ends: DRA_OK with an event, then DRA_EIO (the
 * end), DRA_EPARSE (a malformed event) or DRA_ENOMEM. */
static void watch_drain(dra_watch *w)
{
    dra_arena a;
    dra_arena_init(&a, NULL);
    for (int i = 0; i < MAX_EVENTS; i++) {
        dra_watch_event ev;
        dra_kstatus st;
        dra_err err = dra_watch_next(w, CLIENT_MS, &a, &ev);
        say("watch next", err, NULL);
        if (err == DRA_EIO || err == DRA_EPARSE || err == DRA_ENOMEM)
            break;
        if (err != DRA_OK || !ev.object || ev.type > DRA_WATCH_ERROR)
            finding("watch next", err, NULL);
        err = dra_watch_event_err(&ev, &st);
        if ((err == DRA_OK) != (ev.type != DRA_WATCH_ERROR))
            finding("watch event error", err, &st);
        touch(ev.object);
        dra_arena_reset(&a);
    }
    dra_arena_fini(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dra_watch *w = NULL;
    double t0 = now_s();
    unsigned mode;
    if (size < 1 || size > MAX_INPUT)
        return 0;
    if (!G.c)
        setup();
    mode = data[0];
    server_arm(&G.s, data + 1, size - 1, mode);
    if (mode & KH2_SHARED) {
        /* The request goes on the watch's connection while it is open. */
        w = watch_open(G.c);
        request(G.c, mode & 3);
    } else {
        request(G.c, mode & 3);
        server_idle(&G.s);
        w = watch_open(G.c);
    }
    if (w)
        watch_drain(w);
    dra_watch_close(w);
    server_idle(&G.s);
    if (server_disarm(&G.s))
        finding("the client kept a connection open for seconds after the "
                "server ended it", DRA_OK, NULL);
    if (verbose > 0)
        fprintf(stderr, "input: %.1f ms\n", (now_s() - t0) * 1e3);
    return 0;
}
