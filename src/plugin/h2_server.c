/*
 * plugin/h2_server.c: the sockets and threads of the plugin's gRPC
 * servers. One listening socket (a unix socket or a TCP port) and an
 * accepting thread; a thread per connection driving its h2_core with
 * poll(); a pool of |workers| threads running the handler, so calls on
 * one connection (the kubelet multiplexes all of its calls on one) run
 * in parallel. A worker hands its result back to the connection through
 * the connection's queue and wakes it with a byte on its pipe.
 *
 * Stop: the acceptor goes first, then every connection sends GOAWAY,
 * waits for its calls still with the workers (their handlers finish;
 * calls not started yet are answered CANCELLED) and exits; the workers
 * go last. Nothing is detached: every thread is joined.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "plugin_int.h"

/* How long a call may take to deliver its request message. */
#define RECV_TIMEOUT_MS (120 * 1000)
/* Connections served at once; more are closed as they come. */
#define MAX_CONNS 64
#define READ_CHUNK 16384

typedef struct conn conn;
struct conn {
    conn *prev, *next; /* the server's live or finished list */
    plugin_server *srv;
    int fd;
    int wake[2]; /* a byte: answers are waiting, or stop */
    pthread_t thread;
    plugin_h2 *h2;
    dra_buf pending; /* bytes plugin_h2_send gave that the socket did not take */
    size_t pending_off;
    pthread_mutex_t mu; /* everything below */
    pthread_cond_t cond;
    plugin_h2_call *done; /* answered calls to send */
    int in_flight;        /* calls with the workers */
    int stop;
};

struct plugin_server {
    const dra_mem *mem;
    plugin_rpc_handler handler;
    void *ud;
    size_t max_message;
    int lfd;
    int wake[2]; /* wakes the acceptor to stop */
    int port;
    pthread_t acceptor;
    int acceptor_started;
    pthread_t *workers;
    int n_workers, n_started;

    pthread_mutex_t mu; /* everything below */
    pthread_cond_t conn_cond; /* a connection finished */
    pthread_cond_t work_cond; /* a call was queued, or the workers stop */
    conn *live, *finished;
    int n_live;
    plugin_h2_call *queue, *queue_tail;
    int workers_stop;
};

static void wake(int fd)
{
    char b = 1;
    ssize_t r = write(fd, &b, 1); /* a full pipe is already readable */
    (void)r;
}

static void drain(int fd)
{
    char b[64];
    while (read(fd, b, sizeof(b)) > 0)
        ;
}

static int pipe_nb(int p[2])
{
    return pipe2(p, O_NONBLOCK | O_CLOEXEC);
}

static void list_push(conn **head, conn *c)
{
    c->prev = NULL;
    c->next = *head;
    if (*head)
        (*head)->prev = c;
    *head = c;
}

static void list_unlink(conn **head, conn *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        *head = c->next;
    if (c->next)
        c->next->prev = c->prev;
}

/* ---- workers ------------------------------------------------------------------ */

/* From the connection's thread, inside plugin_h2_recv. */
static void dispatch(void *ud, plugin_h2_call *call)
{
    conn *c = ud;
    plugin_server *s = c->srv;
    call->owner = c;
    call->next = NULL;
    pthread_mutex_lock(&c->mu);
    c->in_flight++;
    pthread_mutex_unlock(&c->mu);
    pthread_mutex_lock(&s->mu);
    if (s->queue_tail)
        s->queue_tail->next = call;
    else
        s->queue = call;
    s->queue_tail = call;
    pthread_cond_signal(&s->work_cond);
    pthread_mutex_unlock(&s->mu);
}

static void give_back(conn *c, plugin_h2_call *call)
{
    pthread_mutex_lock(&c->mu);
    call->next = c->done;
    c->done = call;
    c->in_flight--;
    /* Under the lock: the connection closes its pipe only once nothing
     * is in flight. */
    wake(c->wake[1]);
    pthread_cond_signal(&c->cond);
    pthread_mutex_unlock(&c->mu);
}

static void *worker_main(void *arg)
{
    plugin_server *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        while (!s->queue && !s->workers_stop)
            pthread_cond_wait(&s->work_cond, &s->mu);
        plugin_h2_call *call = s->queue;
        if (call) {
            s->queue = call->next;
            if (!s->queue)
                s->queue_tail = NULL;
        }
        pthread_mutex_unlock(&s->mu);
        if (!call)
            return NULL;
        conn *c = call->owner;
        pthread_mutex_lock(&c->mu);
        int stop = c->stop;
        pthread_mutex_unlock(&c->mu);
        if (stop) {
            call->rpc.code = DRA_GRPC_CANCELLED;
            snprintf(call->rpc.msg, sizeof(call->rpc.msg), "the server is stopping");
        } else {
            s->handler(s->ud, &call->rpc);
        }
        give_back(c, call);
    }
}

/* ---- a connection --------------------------------------------------------------- */

/* Writes what the core has to send. 0; -1 when the connection broke. */
static int flush(conn *c)
{
    for (;;) {
        if (c->pending_off < c->pending.len) {
            ssize_t w = send(c->fd, c->pending.p + c->pending_off,
                             c->pending.len - c->pending_off, MSG_NOSIGNAL);
            if (w < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : -1;
            c->pending_off += (size_t)w;
            if (c->pending_off < c->pending.len)
                return 0;
            dra_buf_reset(&c->pending);
            c->pending_off = 0;
        }
        const uint8_t *p;
        ssize_t n = plugin_h2_send(c->h2, &p);
        if (n <= 0)
            return (int)n;
        ssize_t w = send(c->fd, p, (size_t)n, MSG_NOSIGNAL);
        if (w < 0 && errno != EAGAIN && errno != EINTR)
            return -1;
        if (w < 0)
            w = 0;
        if (w < n && dra_buf_append(&c->pending, p + w, (size_t)(n - w)) != DRA_OK)
            return -1;
    }
}

/* Hands the workers' answers to the core; 1 when the connection should stop. */
static int take_answers(conn *c)
{
    pthread_mutex_lock(&c->mu);
    plugin_h2_call *list = c->done;
    c->done = NULL;
    int stop = c->stop;
    pthread_mutex_unlock(&c->mu);
    while (list) {
        plugin_h2_call *nx = list->next;
        plugin_h2_answer(c->h2, list);
        list = nx;
    }
    return stop;
}

/* Reads what the peer sent. 0; -1 at end of stream or on error. */
static int read_some(conn *c)
{
    uint8_t buf[READ_CHUNK];
    ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
    if (n < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -1;
    if (n == 0)
        return -1;
    return plugin_h2_recv(c->h2, buf, (size_t)n);
}

static void serve(conn *c)
{
    int goaway = 0;
    for (;;) {
        int64_t now = plugin_now_ms();
        int64_t due = plugin_h2_expire(c->h2, now, RECV_TIMEOUT_MS);
        if (take_answers(c) && !goaway) {
            plugin_h2_goaway(c->h2);
            goaway = 1;
        }
        if (flush(c) < 0)
            return;
        int pending = c->pending_off < c->pending.len;
        if (!pending && plugin_h2_done(c->h2))
            return;
        struct pollfd fds[2] = {{c->fd, (short)(POLLIN | (pending ? POLLOUT : 0)), 0},
                                {c->wake[0], POLLIN, 0}};
        int timeout = due < 0 ? -1 : (int)(due - now);
        if (poll(fds, 2, timeout) < 0 && errno != EINTR)
            return;
        if (fds[1].revents)
            drain(c->wake[0]);
        if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) && read_some(c) < 0)
            return;
    }
}

/* The wake pipe goes last: the server may write to it until the
 * connection left its live list. */
static void conn_free(conn *c)
{
    if (c->wake[0] >= 0) {
        close(c->wake[0]);
        close(c->wake[1]);
    }
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cond);
    dra_free(c->srv->mem, c);
}

static void *conn_main(void *arg)
{
    conn *c = arg;
    plugin_server *s = c->srv;
    serve(c);
    /* The workers still hold calls of this connection: wait for them. */
    pthread_mutex_lock(&c->mu);
    c->stop = 1;
    while (c->in_flight > 0)
        pthread_cond_wait(&c->cond, &c->mu);
    plugin_h2_call *list = c->done;
    c->done = NULL;
    pthread_mutex_unlock(&c->mu);
    while (list) {
        plugin_h2_call *nx = list->next;
        plugin_h2_call_free(s->mem, list);
        list = nx;
    }
    plugin_h2_free(c->h2);
    dra_buf_fini(&c->pending);
    close(c->fd);
    pthread_mutex_lock(&s->mu);
    list_unlink(&s->live, c);
    s->n_live--;
    list_push(&s->finished, c);
    pthread_cond_broadcast(&s->conn_cond);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Joins and frees the finished connections (under s->mu). */
static void reap(plugin_server *s)
{
    while (s->finished) {
        conn *c = s->finished;
        s->finished = c->next;
        pthread_join(c->thread, NULL);
        conn_free(c);
    }
}

static void start_conn(plugin_server *s, int fd)
{
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)); /* fails on unix */
    conn *c = dra_calloc(s->mem, 1, sizeof(*c));
    if (!c) {
        close(fd);
        return;
    }
    c->srv = s;
    c->fd = fd;
    c->wake[0] = c->wake[1] = -1;
    dra_buf_init(&c->pending, s->mem);
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cond, NULL);
    plugin_h2_cfg hc = {s->max_message, 0, dispatch, c, s->mem};
    if (pipe_nb(c->wake) != 0) {
        c->wake[0] = c->wake[1] = -1;
        close(fd);
        conn_free(c);
        return;
    }
    if (plugin_h2_new(&hc, &c->h2) != DRA_OK) {
        close(fd);
        conn_free(c);
        return;
    }
    pthread_mutex_lock(&s->mu);
    list_push(&s->live, c);
    s->n_live++;
    if (pthread_create(&c->thread, NULL, conn_main, c) != 0) {
        list_unlink(&s->live, c);
        s->n_live--;
        pthread_mutex_unlock(&s->mu);
        plugin_h2_free(c->h2);
        close(fd);
        conn_free(c);
        return;
    }
    pthread_mutex_unlock(&s->mu);
}

static void *acceptor_main(void *arg)
{
    plugin_server *s = arg;
    for (;;) {
        struct pollfd fds[2] = {{s->lfd, POLLIN, 0}, {s->wake[0], POLLIN, 0}};
        if (poll(fds, 2, -1) < 0 && errno != EINTR)
            return NULL;
        if (fds[1].revents)
            return NULL;
        if (!(fds[0].revents & POLLIN))
            continue;
        int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        pthread_mutex_lock(&s->mu);
        reap(s);
        int full = s->n_live >= MAX_CONNS;
        pthread_mutex_unlock(&s->mu);
        if (full)
            close(fd);
        else
            start_conn(s, fd);
    }
}

/* ---- listening -------------------------------------------------------------------- */

static int listen_unix(const char *path, char *err, size_t errcap)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sa.sun_path)) {
        snprintf(err, errcap, "socket path too long: %s", path);
        return -1;
    }
    memcpy(sa.sun_path, path, strlen(path));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 128) != 0) {
        snprintf(err, errcap, "%s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* "host:port", "[v6]:port"; port 0 picks one (*port gets it). */
static int listen_tcp(const char *addr, int *port, char *err, size_t errcap)
{
    char host[256];
    const char *colon = strrchr(addr, ':');
    size_t hl = colon ? (size_t)(colon - addr) : 0;
    if (!colon || hl >= sizeof(host)) {
        snprintf(err, errcap, "bad address %s", addr);
        return -1;
    }
    memcpy(host, addr, hl);
    host[hl] = '\0';
    char *h = host;
    if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
        host[hl - 1] = '\0';
        h++;
    }
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int rv = getaddrinfo(*h ? h : NULL, colon + 1, &hints, &res);
    if (rv != 0) {
        snprintf(err, errcap, "%s: %s", addr, gai_strerror(rv));
        return -1;
    }
    int fd = -1;
    snprintf(err, errcap, "%s: no address", addr);
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    ai->ai_protocol);
        int one = 1;
        if (fd >= 0)
            (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (fd >= 0 && (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 128) != 0)) {
            snprintf(err, errcap, "%s: %s", addr, strerror(errno));
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (fd >= 0 && getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
        *port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                               : ((struct sockaddr_in *)&ss)->sin_port);
    return fd;
}

/* ---- the server ---------------------------------------------------------------------- */

static void server_free(plugin_server *s)
{
    if (s->lfd >= 0)
        close(s->lfd);
    if (s->wake[0] >= 0) {
        close(s->wake[0]);
        close(s->wake[1]);
    }
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->conn_cond);
    pthread_cond_destroy(&s->work_cond);
    dra_free(s->mem, s->workers);
    dra_free(s->mem, s);
}

static dra_err start_threads(plugin_server *s, int n_workers)
{
    s->workers = dra_calloc(s->mem, (size_t)n_workers, sizeof(pthread_t));
    if (!s->workers)
        return DRA_ENOMEM;
    s->n_workers = n_workers;
    for (; s->n_started < n_workers; s->n_started++)
        if (pthread_create(&s->workers[s->n_started], NULL, worker_main, s) != 0)
            return DRA_EIO;
    if (pthread_create(&s->acceptor, NULL, acceptor_main, s) != 0)
        return DRA_EIO;
    s->acceptor_started = 1;
    return DRA_OK;
}

dra_err plugin_server_start(const plugin_server_opts *o, plugin_server **out,
                            char *err, size_t errcap)
{
    *out = NULL;
    plugin_server *s = dra_calloc(o->mem, 1, sizeof(*s));
    if (!s)
        return DRA_ENOMEM;
    s->mem = o->mem;
    s->handler = o->handler;
    s->ud = o->ud;
    s->max_message = o->max_message ? o->max_message : PLUGIN_DEFAULT_MAX_MESSAGE;
    s->lfd = s->wake[0] = s->wake[1] = -1;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->conn_cond, NULL);
    pthread_cond_init(&s->work_cond, NULL);
    if (strncmp(o->address, "unix:", 5) == 0) {
        s->lfd = listen_unix(o->address + 5, err, errcap);
        s->port = 1;
    } else {
        s->lfd = listen_tcp(o->address, &s->port, err, errcap);
    }
    if (s->lfd < 0) {
        server_free(s);
        return DRA_EIO;
    }
    if (pipe_nb(s->wake) != 0) {
        snprintf(err, errcap, "pipe: %s", strerror(errno));
        s->wake[0] = s->wake[1] = -1;
        server_free(s);
        return DRA_EIO;
    }
    dra_err e = start_threads(s, o->workers > 0 ? o->workers : 1);
    *out = s;
    if (e != DRA_OK) {
        snprintf(err, errcap, "cannot start a server thread");
        plugin_server_stop(s);
        *out = NULL;
    }
    return e;
}

int plugin_server_port(const plugin_server *s)
{
    return s ? s->port : -1;
}

void plugin_server_stop(plugin_server *s)
{
    if (!s)
        return;
    if (s->acceptor_started) {
        wake(s->wake[1]);
        pthread_join(s->acceptor, NULL);
    }
    close(s->lfd);
    s->lfd = -1;
    pthread_mutex_lock(&s->mu);
    for (conn *c = s->live; c; c = c->next) {
        pthread_mutex_lock(&c->mu);
        c->stop = 1;
        wake(c->wake[1]);
        pthread_mutex_unlock(&c->mu);
    }
    while (s->live)
        pthread_cond_wait(&s->conn_cond, &s->mu);
    reap(s);
    /* No connection is left to queue a call: the workers may go. */
    s->workers_stop = 1;
    pthread_cond_broadcast(&s->work_cond);
    pthread_mutex_unlock(&s->mu);
    for (int i = 0; i < s->n_started; i++)
        pthread_join(s->workers[i], NULL);
    server_free(s);
}
