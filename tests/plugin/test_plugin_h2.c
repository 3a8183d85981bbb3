/*
 * tests/plugin/test_plugin_h2.c: the plugin's gRPC transport (h2_core.c,
 * h2_server.c, h2_client.c) on its error paths, driven by clients that
 * can send what a gRPC library never would: an nghttp2 client session
 * with hand-chosen headers and DATA bytes (bad message prefixes,
 * compression, a message larger than the limit, a request cut off in
 * the middle, two messages, the wrong content-type), a connection
 * closed mid-message or while its call runs, many streams at once on
 * one connection (handlers in parallel), and the public client
 * (client.c) and the health check's one-call client on the good paths
 * (test_plugin_client has the client's error paths); every allocation of
 * a call failing in turn in the server; and the core's 120 s request
 * deadline on a clock the test sets.
 */
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "dra_test.h"
#include "plugin/plugin_int.h"

#define MAX_MSG 4096
#define WORKERS 4

/* ---- the server: an echo handler, and one that waits for company ---------- */

typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cond;
    int inside, most, release;
} gate;

static void handler(void *ud, plugin_rpc *rpc)
{
    gate *g = ud;
    if (strcmp(rpc->method, "/test.Echo/Echo") == 0) {
        dra_buf_append(rpc->resp, rpc->req, rpc->req_len);
    } else if (strcmp(rpc->method, "/test.Echo/Wait") == 0) {
        /* Held until the test releases the gate (or WORKERS calls are
         * inside at once): proves calls of one connection run in
         * parallel; the bounded wait keeps a broken server from hanging
         * the test, it is not a speed check. */
        pthread_mutex_lock(&g->mu);
        g->inside++;
        if (g->inside > g->most)
            g->most = g->inside;
        if (g->inside >= WORKERS)
            g->release = 1; /* for good: later calls pass straight through */
        pthread_cond_broadcast(&g->cond);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 20;
        while (!g->release)
            if (pthread_cond_timedwait(&g->cond, &g->mu, &ts) != 0)
                break;
        pthread_mutex_unlock(&g->mu);
        dra_buf_append(rpc->resp, rpc->req, rpc->req_len);
        pthread_mutex_lock(&g->mu);
        g->inside--;
        pthread_mutex_unlock(&g->mu);
    } else {
        rpc->code = DRA_GRPC_UNIMPLEMENTED;
        snprintf(rpc->msg, sizeof(rpc->msg), "unknown method %s", rpc->method);
    }
}

typedef struct fixture {
    char dir[64];
    char sock[128];
    plugin_server *srv;
    gate g;
    dra_test_failmem fm; /* the server's allocator: never fails unless armed */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    strcpy(f->dir, "/tmp/dra-plugin-h2-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->sock, sizeof(f->sock), "%s/s.sock", f->dir);
    pthread_mutex_init(&f->g.mu, NULL);
    pthread_cond_init(&f->g.cond, NULL);
    char addr[160], err[256];
    snprintf(addr, sizeof(addr), "unix:%s", f->sock);
    dra_test_failmem_init(&f->fm);
    plugin_server_opts o = {addr, WORKERS, MAX_MSG, handler, &f->g, &f->fm.mem};
    if (plugin_server_start(&o, &f->srv, err, sizeof(err)) != DRA_OK)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    plugin_server_stop(f->srv);
    pthread_mutex_destroy(&f->g.mu);
    pthread_cond_destroy(&f->g.cond);
    unlink(f->sock);
    rmdir(f->dir);
    free(f);
    return 0;
}

/* ---- a raw HTTP/2 client --------------------------------------------------------- */

#define MAX_STREAMS 64

typedef struct answer {
    int32_t id;
    int http, grpc_status, closed;
    uint32_t rst;
    char grpc_message[512];
    dra_buf body; /* DATA as received: prefixes included */
} answer;

typedef struct raw {
    int fd;
    nghttp2_session *s;
    answer a[MAX_STREAMS];
    int n;
    const uint8_t *body; /* what every request's DATA carries */
    size_t body_len;
} raw;

static answer *find(raw *r, int32_t id)
{
    for (int i = 0; i < r->n; i++)
        if (r->a[i].id == id)
            return &r->a[i];
    return NULL;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *fr, const uint8_t *name,
                     size_t nl, const uint8_t *value, size_t vl, uint8_t flags, void *ud)
{
    (void)s;
    (void)flags;
    answer *a = find(ud, fr->hd.stream_id);
    if (!a)
        return 0;
    char v[512];
    snprintf(v, sizeof(v), "%.*s", (int)vl, (const char *)value);
    if (nl == 7 && memcmp(name, ":status", 7) == 0)
        a->http = atoi(v);
    else if (nl == 11 && memcmp(name, "grpc-status", 11) == 0)
        a->grpc_status = atoi(v);
    else if (nl == 12 && memcmp(name, "grpc-message", 12) == 0)
        snprintf(a->grpc_message, sizeof(a->grpc_message), "%s", v);
    return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *d, size_t n,
                   void *ud)
{
    (void)s;
    (void)flags;
    answer *a = find(ud, id);
    if (a)
        dra_buf_append(&a->body, d, n);
    return 0;
}

static int on_close(nghttp2_session *s, int32_t id, uint32_t code, void *ud)
{
    (void)s;
    answer *a = find(ud, id);
    if (a) {
        a->closed = 1;
        a->rst = code;
    }
    return 0;
}

static ssize_t read_body(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len,
                         uint32_t *flags, nghttp2_data_source *src, void *ud)
{
    (void)s;
    (void)id;
    raw *r = ud;
    size_t *off = src->ptr;
    size_t n = r->body_len - *off < len ? r->body_len - *off : len;
    memcpy(buf, r->body + *off, n);
    *off += n;
    if (*off == r->body_len)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

static void raw_open(raw *r, const char *path)
{
    memset(r, 0, sizeof(*r));
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    r->fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal(connect(r->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    nghttp2_session_callbacks *cb;
    assert_int_equal(nghttp2_session_callbacks_new(&cb), 0);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
    assert_int_equal(nghttp2_session_client_new(&r->s, cb, r), 0);
    nghttp2_session_callbacks_del(cb);
    assert_int_equal(nghttp2_submit_settings(r->s, NGHTTP2_FLAG_NONE, NULL, 0), 0);
}

static void raw_close(raw *r)
{
    nghttp2_session_del(r->s);
    if (r->fd >= 0)
        close(r->fd);
    for (int i = 0; i < r->n; i++)
        dra_buf_fini(&r->a[i].body);
}

static void raw_flush(raw *r)
{
    const uint8_t *p;
    ssize_t n;
    while ((n = nghttp2_session_mem_send(r->s, &p)) > 0)
        assert_int_equal(send(r->fd, p, (size_t)n, MSG_NOSIGNAL), n);
}

/* Queues a request: |ctype| NULL means application/grpc; |end| 0 leaves
 * the stream open after the body. */
static answer *raw_request(raw *r, const char *method, const char *path, const char *ctype,
                           const char *encoding, int end, size_t *off)
{
    nghttp2_nv nv[6];
    size_t n = 0;
#define NV(k, v) nv[n++] = (nghttp2_nv){(uint8_t *)(k), (uint8_t *)(v), strlen(k), strlen(v), 0}
    NV(":method", method);
    NV(":scheme", "http");
    NV(":path", path);
    NV(":authority", "localhost");
    NV("content-type", ctype ? ctype : "application/grpc");
    if (encoding)
        NV("grpc-encoding", encoding);
#undef NV
    nghttp2_data_provider prd;
    prd.source.ptr = off;
    prd.read_callback = read_body;
    int32_t id;
    if (end) {
        id = nghttp2_submit_request(r->s, NULL, nv, n, &prd, NULL);
    } else {
        /* Headers and body without END_STREAM. */
        id = nghttp2_submit_headers(r->s, NGHTTP2_FLAG_NONE, -1, NULL, nv, n, NULL);
        assert_true(id > 0);
        raw_flush(r); /* the stream opens once its HEADERS are out */
        assert_int_equal(nghttp2_submit_data(r->s, NGHTTP2_FLAG_NONE, id, &prd), 0);
    }
    assert_true(id > 0);
    answer *a = &r->a[r->n++];
    a->id = id;
    dra_buf_init(&a->body, NULL);
    return a;
}

/* Runs the session until every stream is closed. */
static void raw_run(raw *r)
{
    for (;;) {
        raw_flush(r);
        int open = 0;
        for (int i = 0; i < r->n; i++)
            open += !r->a[i].closed;
        if (!open)
            return;
        struct pollfd pfd = {r->fd, POLLIN, 0};
        assert_true(poll(&pfd, 1, 20000) == 1);
        uint8_t buf[16384];
        ssize_t k = recv(r->fd, buf, sizeof(buf), 0);
        assert_true(k > 0);
        assert_true(nghttp2_session_mem_recv(r->s, buf, (size_t)k) == k);
    }
}

static void prefix(uint8_t *p, uint8_t flag, uint32_t len)
{
    p[0] = flag;
    p[1] = (uint8_t)(len >> 24);
    p[2] = (uint8_t)(len >> 16);
    p[3] = (uint8_t)(len >> 8);
    p[4] = (uint8_t)len;
}

/* One request with |body| as its DATA; the answer's fields. */
static void one_call(fixture *f, const char *method, const char *path, const char *ctype,
                     const char *encoding, const uint8_t *body, size_t len, answer *out)
{
    raw r;
    raw_open(&r, f->sock);
    r.body = body;
    r.body_len = len;
    size_t off = 0;
    raw_request(&r, method, path, ctype, encoding, 1, &off);
    raw_run(&r);
    *out = r.a[0];
    dra_buf_init(&r.a[0].body, NULL);
    raw_close(&r);
}

/* ---- tests ------------------------------------------------------------------------ */

static void test_echo_and_unknown(void **state)
{
    fixture *f = *state;
    uint8_t body[5 + 3];
    prefix(body, 0, 3);
    memcpy(body + 5, "abc", 3);
    answer a;
    one_call(f, "POST", "/test.Echo/Echo", "application/grpc+proto", NULL, body, sizeof(body),
             &a);
    assert_int_equal(a.http, 200);
    assert_int_equal(a.grpc_status, 0);
    assert_int_equal(a.body.len, sizeof(body));
    assert_memory_equal(a.body.p, body, sizeof(body));
    dra_buf_fini(&a.body);

    one_call(f, "POST", "/test.Nope/Nope", NULL, "identity", body, sizeof(body), &a);
    assert_int_equal(a.grpc_status, DRA_GRPC_UNIMPLEMENTED);
    assert_int_equal(a.body.len, 0);
    /* grpc-message is percent-encoded: the space stays, '/' is printable. */
    assert_string_equal(a.grpc_message, "unknown method /test.Nope/Nope");
    dra_buf_fini(&a.body);
}

static void test_bad_prefix(void **state)
{
    fixture *f = *state;
    uint8_t body[5 + 3];
    memcpy(body + 5, "abc", 3);
    answer a;
    /* Compressed without an encoding. */
    prefix(body, 1, 3);
    one_call(f, "POST", "/test.Echo/Echo", NULL, NULL, body, sizeof(body), &a);
    assert_int_equal(a.http, 200);
    assert_int_equal(a.grpc_status, DRA_GRPC_INTERNAL);
    assert_non_null(strstr(a.grpc_message, "compressed flag"));
    dra_buf_fini(&a.body);
    /* Compressed with one this server cannot read. */
    one_call(f, "POST", "/test.Echo/Echo", NULL, "gzip", body, sizeof(body), &a);
    assert_int_equal(a.grpc_status, DRA_GRPC_UNIMPLEMENTED);
    dra_buf_fini(&a.body);
    /* A flag that is neither 0 nor 1. */
    prefix(body, 7, 3);
    one_call(f, "POST", "/test.Echo/Echo", NULL, NULL, body, sizeof(body), &a);
    assert_int_equal(a.grpc_status, DRA_GRPC_INTERNAL);
    dra_buf_fini(&a.body);
}

static void test_oversized(void **state)
{
    fixture *f = *state;
    /* Only the prefix is sent: the limit is enforced before the body. */
    uint8_t body[5];
    prefix(body, 0, MAX_MSG + 1);
    answer a;
    one_call(f, "POST", "/test.Echo/Echo", NULL, NULL, body, sizeof(body), &a);
    assert_int_equal(a.grpc_status, DRA_GRPC_RESOURCE_EXHAUSTED);
    assert_non_null(strstr(a.grpc_message, "larger than max"));
    dra_buf_fini(&a.body);
    /* At the limit exactly it is served. */
    uint8_t *big = calloc(1, 5 + MAX_MSG);
    prefix(big, 0, MAX_MSG);
    one_call(f, "POST", "/test.Echo/Echo", NULL, NULL, big, 5 + MAX_MSG, &a);
    assert_int_equal(a.grpc_status, 0);
    assert_int_equal(a.body.len, 5 + MAX_MSG);
    dra_buf_fini(&a.body);
    free(big);
}

static void test_malformed_requests(void **state)
{
    fixture *f = *state;
    uint8_t body[5 + 3 + 5 + 3];
    prefix(body, 0, 3);
    memcpy(body + 5, "abc", 3);
    prefix(body + 8, 0, 3);
    memcpy(body + 13, "def", 3);
    answer a;
    /* Ended inside the prefix, then inside the message. */
    one_call(f, "POST", "/test.Echo/Echo", NULL, NULL, body, 3, &a);
    assert_int_equal(a.grpc_status, DRA_GRPC_INTERNAL);
    dra_buf_fini(&a.body);
    one_call(f, "POST", "/test.Echo/Echo", NULL, NULL, body, 7, &a);
    assert_int_equal(a.grpc_status, DRA_GRPC_INTERNAL);
    assert_non_null(strstr(a.grpc_message, "ended inside a message"));
    dra_buf_fini(&a.body);
    /* No message at all. */
    one_call(f, "POST", "/test.Echo/Echo", NULL, NULL, body, 0, &a);
    assert_int_equal(a.grpc_status, DRA_GRPC_INVALID_ARGUMENT);
    dra_buf_fini(&a.body);
    /* Two messages on a unary call. */
    one_call(f, "POST", "/test.Echo/Echo", NULL, NULL, body, sizeof(body), &a);
    assert_int_equal(a.grpc_status, DRA_GRPC_INTERNAL);
    dra_buf_fini(&a.body);
    /* Not gRPC: content-type, method. */
    one_call(f, "POST", "/test.Echo/Echo", "application/json", NULL, body, 8, &a);
    assert_int_equal(a.http, 415);
    assert_int_equal(a.grpc_status, DRA_GRPC_INTERNAL);
    dra_buf_fini(&a.body);
    one_call(f, "PUT", "/test.Echo/Echo", NULL, NULL, body, 8, &a);
    assert_int_equal(a.http, 405);
    dra_buf_fini(&a.body);
}

/* Half a message, then the client goes away; then a call that is
 * running when its client goes away. The server goes on serving. */
static void test_closed_mid_message(void **state)
{
    fixture *f = *state;
    uint8_t body[5 + 100];
    prefix(body, 0, 100);
    memset(body + 5, 'x', 100);
    raw r;
    raw_open(&r, f->sock);
    r.body = body;
    r.body_len = 50;
    size_t off = 0;
    raw_request(&r, "POST", "/test.Echo/Echo", NULL, NULL, 0, &off);
    raw_flush(&r);
    raw_close(&r);

    raw_open(&r, f->sock);
    r.body = body;
    r.body_len = sizeof(body);
    off = 0;
    raw_request(&r, "POST", "/test.Echo/Wait", NULL, NULL, 1, &off);
    raw_flush(&r);
    pthread_mutex_lock(&f->g.mu);
    while (f->g.inside == 0)
        pthread_cond_wait(&f->g.cond, &f->g.mu);
    pthread_mutex_unlock(&f->g.mu);
    raw_close(&r);
    pthread_mutex_lock(&f->g.mu);
    f->g.release = 1;
    pthread_cond_broadcast(&f->g.cond);
    pthread_mutex_unlock(&f->g.mu);

    answer a;
    one_call(f, "POST", "/test.Echo/Echo", NULL, NULL, body, sizeof(body), &a);
    assert_int_equal(a.grpc_status, 0);
    assert_int_equal(a.body.len, sizeof(body));
    dra_buf_fini(&a.body);
}

/* 64 streams at once on one connection: every one answered with its own
 * bytes, and WORKERS handlers inside at the same time. */
static void test_many_streams(void **state)
{
    fixture *f = *state;
    uint8_t body[5 + 4];
    prefix(body, 0, 4);
    memcpy(body + 5, "wxyz", 4);
    raw r;
    raw_open(&r, f->sock);
    r.body = body;
    r.body_len = sizeof(body);
    size_t off[MAX_STREAMS] = {0};
    for (int i = 0; i < MAX_STREAMS; i++)
        raw_request(&r, "POST", i % 2 ? "/test.Echo/Wait" : "/test.Echo/Echo", NULL, NULL, 1,
                    &off[i]);
    raw_run(&r);
    for (int i = 0; i < MAX_STREAMS; i++) {
        assert_int_equal(r.a[i].grpc_status, 0);
        assert_int_equal(r.a[i].body.len, sizeof(body));
    }
    raw_close(&r);
    pthread_mutex_lock(&f->g.mu); /* the handlers may still be leaving the gate */
    int most = f->g.most;
    pthread_mutex_unlock(&f->g.mu);
    assert_int_equal(most, WORKERS);
}

/* The plugin's own one-call client (the health self-check's) and the
 * public client against the same server; then a stop with a client
 * connected and a call held in its handler. */
static void test_clients_and_stop(void **state)
{
    fixture *f = *state;
    dra_buf resp;
    dra_buf_init(&resp, NULL);
    int code;
    char msg[256];
    assert_int_equal(plugin_h2_unary(f->sock, "/test.Echo/Echo", (const uint8_t *)"hi", 2,
                                     5000, NULL, &resp, &code, msg, sizeof(msg)),
                     DRA_OK);
    assert_int_equal(code, 0);
    assert_int_equal(resp.len, 2);
    assert_memory_equal(resp.p, "hi", 2);
    dra_buf_reset(&resp);
    assert_int_equal(plugin_h2_unary(f->sock, "/x.Y/Z", (const uint8_t *)"", 0, 5000, NULL,
                                     &resp, &code, msg, sizeof(msg)),
                     DRA_OK);
    assert_int_equal(code, DRA_GRPC_UNIMPLEMENTED);
    assert_string_equal(msg, "unknown method /x.Y/Z");
    assert_int_equal(plugin_h2_unary("/nonexistent/s.sock", "/x.Y/Z", NULL, 0, 1000, NULL,
                                     &resp, &code, msg, sizeof(msg)),
                     DRA_EIO);
    dra_buf_fini(&resp);

    dra_plugin_client *c;
    assert_int_equal(dra_plugin_client_new(f->sock, NULL, &c), DRA_OK);
    int hs;
    dra_plugin_rpc_status st;
    assert_int_equal(dra_plugin_client_health_check(c, "", 5000, &hs, &st), DRA_EUNSUPPORTED);
    assert_int_equal(st.code, DRA_GRPC_UNIMPLEMENTED);
    dra_plugin_client_free(c);

    /* A call held in the handler while the server stops: the stop waits
     * for it and joins everything (ASan would see a leaked thread or fd
     * through the leak check). */
    uint8_t body[5];
    prefix(body, 0, 0);
    raw r;
    raw_open(&r, f->sock);
    r.body = body;
    r.body_len = sizeof(body);
    size_t off = 0;
    raw_request(&r, "POST", "/test.Echo/Wait", NULL, NULL, 1, &off);
    raw_flush(&r);
    pthread_mutex_lock(&f->g.mu);
    while (f->g.inside == 0)
        pthread_cond_wait(&f->g.cond, &f->g.mu);
    f->g.release = 1;
    pthread_cond_broadcast(&f->g.cond);
    pthread_mutex_unlock(&f->g.mu);
    plugin_server_stop(f->srv);
    f->srv = NULL;
    raw_close(&r);
}

/* ---- the core's request deadline, on a clock the test sets --------------------- */

typedef struct held {
    plugin_h2_call *c[4];
    int n;
} held;

static void hold(void *ud, plugin_h2_call *c)
{
    held *q = ud;
    assert_true(q->n < 4);
    q->c[q->n++] = c;
}

/* Moves bytes both ways between the client session and the core until
 * neither has more to say. */
static void pump(raw *r, plugin_h2 *h)
{
    for (int moved = 1; moved;) {
        const uint8_t *p;
        ssize_t n;
        moved = 0;
        while ((n = nghttp2_session_mem_send(r->s, &p)) > 0) {
            assert_int_equal(plugin_h2_recv(h, p, (size_t)n), 0);
            moved = 1;
        }
        while ((n = plugin_h2_send(h, &p)) > 0) {
            assert_int_equal(nghttp2_session_mem_recv(r->s, p, (size_t)n), n);
            moved = 1;
        }
        assert_true(n == 0);
    }
}

/* A request whose message never completes is cancelled (RST_STREAM
 * CANCEL, as gRPC servers do) when its deadline passes, not before; a
 * call already handed to a worker is not, and is answered after. */
static void test_core_request_deadline(void **state)
{
    enum { DEADLINE = 120000 };
    held q = {{NULL}, 0};
    plugin_h2_cfg cfg = {MAX_MSG, 8, hold, &q, NULL};
    plugin_h2 *h;
    raw r;
    nghttp2_session_callbacks *cb;
    uint8_t body[5 + 2];
    size_t off_full = 0;
    answer *slow, *full;
    (void)state;
    assert_int_equal(plugin_h2_new(&cfg, &h), DRA_OK);
    memset(&r, 0, sizeof r);
    r.fd = -1;
    assert_int_equal(nghttp2_session_callbacks_new(&cb), 0);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
    assert_int_equal(nghttp2_session_client_new(&r.s, cb, &r), 0);
    nghttp2_session_callbacks_del(cb);
    assert_int_equal(nghttp2_submit_settings(r.s, NGHTTP2_FLAG_NONE, NULL, 0), 0);
    assert_int_equal(plugin_h2_expire(h, 0, DEADLINE), -1); /* nothing waits */

    /* At t=0 a call that is complete, and one that is headers only. */
    prefix(body, 0, 2);
    memcpy(body + 5, "hi", 2);
    r.body = body;
    r.body_len = sizeof body;
    {
        nghttp2_nv nv[5];
        size_t n = 0;
#define NV(k, v) nv[n++] = (nghttp2_nv){(uint8_t *)(k), (uint8_t *)(v), strlen(k), strlen(v), 0}
        NV(":method", "POST");
        NV(":scheme", "http");
        NV(":path", "/test.Echo/Echo");
        NV(":authority", "localhost");
        NV("content-type", "application/grpc");
#undef NV
        nghttp2_data_provider prd = {.source.ptr = &off_full, .read_callback = read_body};
        int32_t id = nghttp2_submit_request(r.s, NULL, nv, n, &prd, NULL);
        assert_true(id > 0);
        full = &r.a[r.n++];
        full->id = id;
        dra_buf_init(&full->body, NULL);
        id = nghttp2_submit_headers(r.s, NGHTTP2_FLAG_NONE, -1, NULL, nv, n, NULL);
        assert_true(id > 0);
        slow = &r.a[r.n++];
        slow->id = id;
        dra_buf_init(&slow->body, NULL);
    }
    pump(&r, h);
    assert_int_equal(q.n, 1); /* the complete one went to a worker */

    /* One millisecond before the deadline nothing happens; the next due
     * time is the slow stream's. */
    assert_int_equal(plugin_h2_expire(h, DEADLINE - 1, DEADLINE), DEADLINE);
    pump(&r, h);
    assert_false(slow->closed);
    assert_int_equal(plugin_h2_expire(h, DEADLINE, DEADLINE), -1);
    pump(&r, h);
    assert_true(slow->closed);
    assert_int_equal(slow->rst, NGHTTP2_CANCEL);
    assert_false(full->closed); /* dispatched: the worker owns it */

    /* The worker answers long after: still delivered. */
    dra_buf_append(q.c[0]->rpc.resp, q.c[0]->rpc.req, q.c[0]->rpc.req_len);
    plugin_h2_answer(h, q.c[0]);
    pump(&r, h);
    assert_true(full->closed);
    assert_int_equal(full->rst, NGHTTP2_NO_ERROR);
    assert_int_equal(full->grpc_status, 0);
    assert_int_equal(full->body.len, sizeof body);
    assert_memory_equal(full->body.p, body, sizeof body);
    plugin_h2_free(h);
    raw_close(&r);
}

/* ---- allocation failures in the server ------------------------------------------ */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Every allocation one call makes in the server (its connection, the
 * stream, the request and answer buffers, the worker's hand-off) fails in
 * turn: the call gets an answer or a closed connection within its
 * deadline, never a hang, nothing leaks (ASan), and the next call is
 * served. */
static void test_server_alloc_failures(void **state)
{
    fixture *f = *state;
    dra_test_failmem *fm = &f->fm;
    const char *sock = f->sock;
    char msg[256];
    dra_buf resp;
    int code, covered = 0;
    dra_buf_init(&resp, NULL);
    for (long at = 1; at < 1000 && !covered; at++) {
        double t0 = now_s();
        dra_err e;
        dra_test_failmem_arm(fm, at);
        e = plugin_h2_unary(sock, "/test.Echo/Echo", (const uint8_t *)"hi", 2, 3000, NULL,
                            &resp, &code, msg, sizeof msg);
        /* Every allocation of the call came before the armed one. */
        covered = atomic_load(&fm->calls) < at;
        dra_test_failmem_arm(fm, 0);
        assert_true(now_s() - t0 < 2.5);
        /* An answer: served, RESOURCE_EXHAUSTED, or the connection closed
         * (UNAVAILABLE, which clients retry). */
        assert_int_equal(e, DRA_OK);
        assert_true(code == 0 || code == DRA_GRPC_RESOURCE_EXHAUSTED || code == DRA_GRPC_UNAVAILABLE);
        if (covered) {
            assert_int_equal(e, DRA_OK);
            assert_int_equal(code, 0);
        }
        dra_buf_reset(&resp);
        assert_int_equal(plugin_h2_unary(sock, "/test.Echo/Echo", (const uint8_t *)"hi", 2, 3000,
                                         NULL, &resp, &code, msg, sizeof msg),
                         DRA_OK);
        assert_int_equal(code, 0);
        assert_int_equal(resp.len, 2);
        dra_buf_reset(&resp);
    }
    assert_true(covered);
    dra_buf_fini(&resp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_echo_and_unknown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_prefix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_oversized, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed_requests, setup, teardown),
        cmocka_unit_test_setup_teardown(test_closed_mid_message, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_streams, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clients_and_stop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_alloc_failures, setup, teardown),
        cmocka_unit_test(test_core_request_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
