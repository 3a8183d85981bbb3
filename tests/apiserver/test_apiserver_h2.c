/* drad's HTTP/2 front end (h2_conn.c, h2_server.c) over a real socket
 * with an nghttp2 + GnuTLS client: authentication as over HTTP/1.1,
 * CRUD answers identical to the handler's, 413 and 431, watches (one,
 * and 1,000 on one connection), 64 concurrent writes, RST_STREAM,
 * garbage and the wrong ALPN, and stopping with streams open. */
#include "api_fixture.h"
#include "h2_client.h"

#include <pthread.h>
#include <sys/stat.h>

#include "apiserver/apiserver_int.h"

#define NS "/api/v1/namespaces"
#define CLAIMS "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
#define CLAIM(name)                                                              \
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","         \
    "\"metadata\":{\"name\":\"" name "\"},\"spec\":{\"devices\":"               \
    "{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"         \
    "\"gpu.nvidia.com\"}}]}}}"

typedef struct hfx {
    fx f;
    dra_apiserver_creds cr;
    dra_apiserver_h2 *h2;
    int port;
} hfx;

static void hfx_open(hfx *x)
{
    dra_diag d;
    dra_apiserver_http_opts o;
    char dir[200];
    fx_open(&x->f, NULL, 0);
    dra_diag_init(&d, NULL);
    snprintf(dir, sizeof dir, "%s/pki", x->f.dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(dra_apiserver_creds_load(dir, NULL, &x->cr, &d), DRA_OK);
    memset(&o, 0, sizeof o);
    o.creds = &x->cr;
    o.threads = 2;
    o.workers = 64;
    if (dra_apiserver_h2_start(x->f.srv, &o, &x->h2, &d))
        fail_msg("h2: %s", dra_diag_first(&d) ? dra_diag_first(&d) : "?");
    dra_diag_fini(&d);
    x->port = dra_apiserver_h2_port(x->h2);
    assert_true(x->port > 0);
}

static void hfx_close(hfx *x)
{
    dra_apiserver_h2_stop(x->h2);
    dra_apiserver_creds_fini(&x->cr);
    fx_close(&x->f);
}

static void hfx_connect(hfx *x, hc *c)
{
    hc_connect(c, x->port, x->cr.ca_cert, NULL, NULL);
}

/* Open watch streams the server holds. */
static int open_streams(dra_apiserver *srv)
{
    return api_watch_count(srv);
}

static void test_h2_unauthorized(void **state)
{
    hfx x;
    hc c;
    hc_stream st;
    (void)state;
    hfx_open(&x);
    hfx_connect(&x, &c);
    assert_int_equal(hc_req(&c, &st, "GET", NS, NULL, NULL), 401);
    assert_string_equal(st.ctype, "application/json");
    assert_string_equal(st.body.p,
                        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                        "\"status\":\"Failure\",\"message\":\"Unauthorized\","
                        "\"reason\":\"Unauthorized\",\"code\":401}");
    hc_stream_fini(&st);
    assert_int_equal(hc_req(&c, &st, "GET", NS, "wrong-token", NULL), 401);
    hc_stream_fini(&st);
    /* A 401 before the body: the rest of it is not wanted. */
    assert_int_equal(hc_req(&c, &st, "POST", NS, NULL, "{\"metadata\":{}}"), 401);
    hc_stream_fini(&st);
    hc_free(&c);
    hfx_close(&x);
}

static void test_h2_token_and_cert(void **state)
{
    hfx x;
    hc c;
    hc_stream st;
    (void)state;
    hfx_open(&x);
    hfx_connect(&x, &c);
    assert_int_equal(hc_req(&c, &st, "GET", NS, x.cr.token, NULL), 200);
    assert_non_null(strstr(st.body.p, "\"kind\":\"NamespaceList\""));
    hc_stream_fini(&st);
    hc_free(&c);
    hc_connect(&c, x.port, x.cr.ca_cert, x.cr.client_cert, x.cr.client_key);
    assert_int_equal(hc_req(&c, &st, "GET", NS "/default", NULL, NULL), 200);
    assert_non_null(strstr(st.body.p, "\"name\":\"default\""));
    hc_stream_fini(&st);
    hc_free(&c);
    hfx_close(&x);
}

/* Each answer over HTTP/2 is byte for byte what the handler gives. */
static void test_h2_crud(void **state)
{
    hfx x;
    hc c;
    hc_stream st;
    char upd[1024];
    const char *rv;
    (void)state;
    hfx_open(&x);
    hfx_connect(&x, &c);
    assert_int_equal(hc_req(&c, &st, "POST", CLAIMS, x.cr.token, CLAIM("c1")), 201);
    assert_string_equal(st.ctype, "application/json");
    hc_stream_fini(&st);
    assert_int_equal(hc_req(&c, &st, "GET", CLAIMS "/c1", x.cr.token, NULL), 200);
    assert_int_equal(fx_req(&x.f, "GET", CLAIMS "/c1", NULL), 200);
    assert_string_equal(st.body.p, x.f.body);
    hc_stream_fini(&st);
    assert_int_equal(hc_req(&c, &st, "GET", CLAIMS "?limit=10&labelSelector=a%21%3Db",
                            x.cr.token, NULL), 200);
    assert_non_null(strstr(st.body.p, "\"name\":\"c1\""));
    hc_stream_fini(&st);
    /* An update with the resourceVersion just read. */
    rv = fx_str(&x.f, "metadata.resourceVersion");
    if (!rv)
        fail_msg("no resourceVersion");
    snprintf(upd, sizeof upd,
             "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
             "\"metadata\":{\"name\":\"c1\",\"resourceVersion\":\"%s\","
             "\"labels\":{\"a\":\"b\"}},\"spec\":{\"devices\":{\"requests\":[{\"name\":"
             "\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\"}}]}}}",
             rv ? rv : "");
    assert_int_equal(hc_req(&c, &st, "PUT", CLAIMS "/c1", x.cr.token, upd), 200);
    assert_non_null(strstr(st.body.p, "\"a\":\"b\""));
    hc_stream_fini(&st);
    assert_int_equal(hc_req(&c, &st, "PUT", CLAIMS "/c1", x.cr.token, upd), 409);
    assert_int_equal(fx_req(&x.f, "PUT", CLAIMS "/c1", upd), 409);
    assert_string_equal(st.body.p, x.f.body);
    hc_stream_fini(&st);
    assert_int_equal(hc_req(&c, &st, "DELETE", CLAIMS "/c1", x.cr.token, NULL), 200);
    hc_stream_fini(&st);
    assert_int_equal(hc_req(&c, &st, "GET", CLAIMS "/c1", x.cr.token, NULL), 404);
    assert_int_equal(fx_req(&x.f, "GET", CLAIMS "/c1", NULL), 404);
    assert_string_equal(st.body.p, x.f.body);
    hc_stream_fini(&st);
    hc_free(&c);
    hfx_close(&x);
}

static void test_h2_invalid_and_limits(void **state)
{
    hfx x;
    hc c;
    hc_stream st;
    size_t big = (size_t)3 * 1024 * 1024 + 100;
    char *body = malloc(big), *hdr;
    const char *bad = "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
                      "\"metadata\":{\"name\":\"Bad_Name\"}}";
    (void)state;
    hfx_open(&x);
    hfx_connect(&x, &c);
    assert_int_equal(hc_req(&c, &st, "POST", NS, x.cr.token, bad), 422);
    assert_int_equal(fx_req(&x.f, "POST", NS, bad), 422);
    assert_string_equal(st.body.p, x.f.body);
    hc_stream_fini(&st);
    /* Too large, announced by content-length and not. */
    memset(body, ' ', big);
    for (int cl = 1; cl >= 0; cl--) {
        hc_submit(&c, &st, "POST", NS, x.cr.token, body, big, cl);
        assert_true(hc_run(&c, hc_closed, &st, 20000));
        assert_int_equal(st.status, 413);
        assert_non_null(strstr(st.body.p, "\"reason\":\"RequestEntityTooLarge\""));
        hc_stream_fini(&st);
    }
    /* The connection still serves. */
    assert_int_equal(hc_req(&c, &st, "GET", NS, x.cr.token, NULL), 200);
    hc_stream_fini(&st);
    /* A long wrong token is just a wrong token. */
    hdr = malloc(70000);
    memset(hdr, 'x', 69999);
    hdr[69999] = '\0';
    assert_int_equal(hc_req(&c, &st, "GET", NS, hdr + 60000, NULL), 401);
    hc_stream_fini(&st);
    free(hdr);
    free(body);
    hc_free(&c);
    hfx_close(&x);
}

typedef struct watches {
    hc_stream *st;
    int n;
    const char *want;
} watches;

static int all_saw(void *arg)
{
    watches *w = arg;
    for (int i = 0; i < w->n; i++)
        if (!w->st[i].body.p || !strstr(w->st[i].body.p, w->want))
            return 0;
    return 1;
}

static int all_closed(void *arg)
{
    watches *w = arg;
    for (int i = 0; i < w->n; i++)
        if (!w->st[i].closed)
            return 0;
    return 1;
}

static int all_headers(void *arg)
{
    watches *w = arg;
    for (int i = 0; i < w->n; i++)
        if (!w->st[i].status)
            return 0;
    return 1;
}

/* |n| watches of namespaces on one connection, one commit, every
 * watch sees it. */
static void watch_many(int n)
{
    hfx x;
    hc c, c2;
    hc_stream create;
    watches w = {calloc((size_t)n, sizeof(hc_stream)), n, "\"name\":\"seen-by-all\""};
    char path[128];
    const char *rv;
    hfx_open(&x);
    hfx_connect(&x, &c);
    assert_int_equal(fx_req(&x.f, "GET", NS, NULL), 200);
    rv = fx_str(&x.f, "metadata.resourceVersion");
    if (!rv)
        fail_msg("no resourceVersion");
    snprintf(path, sizeof path, NS "?watch=true&resourceVersion=%s", rv ? rv : "");
    for (int i = 0; i < n; i++)
        hc_submit(&c, &w.st[i], "GET", path, x.cr.token, NULL, 0, 0);
    assert_true(hc_run(&c, all_headers, &w, 60000));
    for (int i = 0; i < n; i++) {
        assert_int_equal(w.st[i].status, 200);
        assert_string_equal(w.st[i].cache, "no-cache, private");
    }
    assert_int_equal(open_streams(x.f.srv), n);
    /* Another connection: this one's streams are all taken. */
    hfx_connect(&x, &c2);
    assert_int_equal(hc_req(&c2, &create, "POST", NS, x.cr.token,
                            "{\"metadata\":{\"name\":\"seen-by-all\"}}"), 201);
    hc_stream_fini(&create);
    hc_free(&c2);
    if (!hc_run(&c, all_saw, &w, 60000))
        fail_msg("not every watch saw the commit");
    for (int i = 0; i < n; i++)
        assert_non_null(strstr(w.st[i].body.p, "{\"type\":\"ADDED\""));
    /* Stopping ends every stream. */
    dra_apiserver_h2_stop(x.h2);
    x.h2 = NULL;
    assert_true(hc_run(&c, all_closed, &w, 20000));
    assert_true(c.goaway);
    assert_int_equal(open_streams(x.f.srv), 0);
    for (int i = 0; i < n; i++)
        hc_stream_fini(&w.st[i]);
    free(w.st);
    hc_free(&c);
    hfx_close(&x);
}

static void test_h2_watch(void **state)
{
    (void)state;
    watch_many(1);
}

static void test_h2_watch_1000(void **state)
{
    (void)state;
    watch_many(1000);
}

static void test_h2_concurrent_writes(void **state)
{
    hfx x;
    hc c;
    enum { N = 64 };
    hc_stream st[N];
    char bodies[N][96];
    watches w = {st, N, NULL};
    (void)state;
    hfx_open(&x);
    hfx_connect(&x, &c);
    for (int i = 0; i < N; i++) {
        snprintf(bodies[i], sizeof bodies[i], "{\"metadata\":{\"name\":\"ns-%d\"}}", i);
        hc_submit(&c, &st[i], "POST", NS, x.cr.token, bodies[i], strlen(bodies[i]), 1);
    }
    assert_true(hc_run(&c, all_closed, &w, 60000));
    for (int i = 0; i < N; i++) {
        if (st[i].status != 201)
            fail_msg("create %d: %d %s", i, st[i].status, st[i].body.p);
        hc_stream_fini(&st[i]);
    }
    assert_int_equal(fx_req(&x.f, "GET", NS, NULL), 200);
    assert_int_equal(fx_items(&x.f), N + 4);
    hc_free(&c);
    hfx_close(&x);
}

static int watch_gone(void *arg)
{
    hfx *x = arg;
    return open_streams(x->f.srv) == 0;
}

static void test_h2_rst_watch(void **state)
{
    hfx x;
    hc c;
    hc_stream st;
    watches w = {&st, 1, NULL};
    (void)state;
    hfx_open(&x);
    hfx_connect(&x, &c);
    hc_submit(&c, &st, "GET", NS "?watch=1", x.cr.token, NULL, 0, 0);
    assert_true(hc_run(&c, all_headers, &w, 20000));
    assert_int_equal(open_streams(x.f.srv), 1);
    nghttp2_submit_rst_stream(c.s, NGHTTP2_FLAG_NONE, st.id, NGHTTP2_CANCEL);
    assert_true(hc_run(&c, watch_gone, &x, 20000));
    hc_stream_fini(&st);
    /* Closing the connection frees another one. */
    hc_submit(&c, &st, "GET", NS "?watch=1", x.cr.token, NULL, 0, 0);
    assert_true(hc_run(&c, all_headers, &w, 20000));
    hc_stream_fini(&st);
    hc_free(&c);
    for (int i = 0; i < 400 && open_streams(x.f.srv); i++)
        usleep(10000);
    assert_int_equal(open_streams(x.f.srv), 0);
    hfx_close(&x);
}

/* Reads until the server closes; 1 when it did within 10 s. */
static int closed_by_server(int fd)
{
    char buf[4096];
    int64_t end = hc_now_ms() + 10000;
    while (hc_now_ms() < end) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 100) <= 0)
            continue;
        if (recv(fd, buf, sizeof buf, 0) <= 0)
            return 1;
    }
    return 0;
}

static void test_h2_bad_clients(void **state)
{
    hfx x;
    hc c;
    hc_stream st;
    uint8_t junk[512];
    int fd;
    (void)state;
    hfx_open(&x);
    /* Garbage instead of a TLS handshake. */
    fd = hc_tcp(x.port);
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (uint8_t)(i * 7 + 3);
    assert_int_equal(send(fd, junk, sizeof junk, MSG_NOSIGNAL), (ssize_t)sizeof junk);
    assert_true(closed_by_server(fd));
    close(fd);
    /* No ALPN: the handshake completes, then the server closes. */
    assert_int_equal(hc_tls(&c, x.port, x.cr.ca_cert, NULL, NULL, NULL), 0);
    assert_true(closed_by_server(c.fd));
    hc_free(&c);
    /* HTTP/1.1 only: refused. */
    if (hc_tls(&c, x.port, x.cr.ca_cert, NULL, NULL, "http/1.1") == 0)
        assert_true(closed_by_server(c.fd));
    hc_free(&c);
    /* h2, then bytes that are not HTTP/2: GOAWAY or a close. */
    assert_int_equal(hc_tls(&c, x.port, x.cr.ca_cert, NULL, NULL, "h2"), 0);
    assert_int_equal(gnutls_record_send(c.tls, "GET / HTTP/1.1\r\n\r\n", 18), 18);
    assert_true(closed_by_server(c.fd));
    hc_free(&c);
    /* A bad frame after a good preface: GOAWAY, and the server closes. */
    hfx_connect(&x, &c);
    assert_int_equal(hc_req(&c, &st, "GET", NS, x.cr.token, NULL), 200);
    hc_stream_fini(&st);
    {
        /* DATA on stream 0 is a connection error. */
        static const uint8_t bad[] = {0, 0, 1, 0, 0, 0, 0, 0, 0, 'x'};
        uint8_t buf[4096];
        ssize_t n;
        assert_int_equal(gnutls_record_send(c.tls, bad, sizeof bad), (ssize_t)sizeof bad);
        while ((n = gnutls_record_recv(c.tls, buf, sizeof buf)) > 0)
            if (nghttp2_session_mem_recv(c.s, buf, (size_t)n) < 0)
                break;
        assert_true(c.goaway);
    }
    hc_free(&c);
    /* A request cut off by RST_STREAM mid-body, then the connection dropped
     * with a write in flight. */
    hfx_connect(&x, &c);
    hc_submit(&c, &st, "POST", NS, x.cr.token, "{\"metadata\":", 12, 0);
    nghttp2_submit_rst_stream(c.s, NGHTTP2_FLAG_NONE, st.id, NGHTTP2_CANCEL);
    hc_send(&c);
    hc_stream_fini(&st);
    hc_submit(&c, &st, "POST", NS, x.cr.token, "{\"metadata\":{\"name\":\"late\"}}",
              29, 1);
    hc_send(&c);
    hc_stream_fini(&st);
    hc_free(&c);
    /* Still serving. */
    hfx_connect(&x, &c);
    assert_int_equal(hc_req(&c, &st, "GET", NS, x.cr.token, NULL), 200);
    hc_stream_fini(&st);
    hc_free(&c);
    hfx_close(&x);
}

/* A client that asks for a large answer many times and never reads:
 * stop still ends it, nothing grows without bound. */
static void test_h2_stop_with_streams(void **state)
{
    hfx x;
    hc c, lazy;
    hc_stream st[3];
    (void)state;
    hfx_open(&x);
    hfx_connect(&x, &c);
    hfx_connect(&x, &lazy);
    hc_submit(&c, &st[0], "GET", NS "?watch=1", x.cr.token, NULL, 0, 0);
    hc_submit(&c, &st[1], "GET", CLAIMS "?watch=1", x.cr.token, NULL, 0, 0);
    for (int i = 0; i < 200; i++) {
        hc_submit(&lazy, &st[2], "GET", "/openapi/v2", x.cr.token, NULL, 0, 0);
        hc_stream_fini(&st[2]);
    }
    hc_send(&lazy);
    hc_send(&c);
    usleep(200 * 1000);
    dra_apiserver_h2_stop(x.h2);
    x.h2 = NULL;
    assert_int_equal(open_streams(x.f.srv), 0);
    for (int i = 0; i < 2; i++)
        hc_stream_fini(&st[i]);
    hc_free(&c);
    hc_free(&lazy);
    hfx_close(&x);
}

/* Large answers to a client that reads nothing for a while: more than
 * the loopback socket buffers hold, so the server's records wait in its
 * output (partial sends, EAGAIN, reads of requests held back), then every
 * byte of every answer arrives in order. */
static void test_h2_slow_reader(void **state)
{
    hfx x;
    hc c;
    hc_stream one, st[160];
    watches w = {st, 160, NULL};
    (void)state;
    hfx_open(&x);
    hfx_connect(&x, &c);
    assert_int_equal(hc_req(&c, &one, "GET", "/openapi/v3/api/v1", x.cr.token, NULL), 200);
    assert_true(one.body.len > 64 * 1024); /* 160 of them: 16 MiB and more */
    /* Flow control lets the server send it all; the socket does not. */
    assert_int_equal(nghttp2_session_set_local_window_size(c.s, NGHTTP2_FLAG_NONE, 0, 1 << 30), 0);
    for (int i = 0; i < 160; i++)
        hc_submit(&c, &st[i], "GET", "/openapi/v3/api/v1", x.cr.token, NULL, 0, 1);
    hc_send(&c);
    usleep(300 * 1000);
    assert_true(hc_run(&c, all_closed, &w, 20000));
    for (int i = 0; i < 160; i++) {
        assert_int_equal(st[i].status, 200);
        assert_int_equal(st[i].body.len, one.body.len);
        assert_memory_equal(st[i].body.p, one.body.p, one.body.len);
        hc_stream_fini(&st[i]);
    }
    hc_stream_fini(&one);
    /* Still serving on the same connection. */
    assert_int_equal(hc_req(&c, &one, "GET", NS, x.cr.token, NULL), 200);
    hc_stream_fini(&one);
    hc_free(&c);
    hfx_close(&x);
}

int main(void)
{
    if (getenv("H2_FILTER"))
        cmocka_set_test_filter(getenv("H2_FILTER"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_h2_unauthorized),
        cmocka_unit_test(test_h2_token_and_cert),
        cmocka_unit_test(test_h2_crud),
        cmocka_unit_test(test_h2_invalid_and_limits),
        cmocka_unit_test(test_h2_watch),
        cmocka_unit_test(test_h2_watch_1000),
        cmocka_unit_test(test_h2_concurrent_writes),
        cmocka_unit_test(test_h2_rst_watch),
        cmocka_unit_test(test_h2_bad_clients),
        cmocka_unit_test(test_h2_stop_with_streams),
        cmocka_unit_test(test_h2_slow_reader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
