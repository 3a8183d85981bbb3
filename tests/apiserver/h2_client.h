/* A small blocking HTTP/2 client (nghttp2 + GnuTLS) for the tests of
 * drad's HTTP/2 front end: one connection, many streams, pumped until a
 * condition holds. Test code: failures end the test through cmocka. */
#ifndef DRA_TEST_H2_CLIENT_H
#define DRA_TEST_H2_CLIENT_H

#include "dra_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <nghttp2/nghttp2.h>

typedef struct hc_stream {
    int32_t id;
    int status;
    char ctype[128], warning[512], cache[64];
    dra_buf body;
    int closed;
    uint32_t code; /* RST_STREAM error code at close */
    const char *req; /* request body, borrowed */
    size_t req_len, req_off;
} hc_stream;

typedef struct hc {
    int fd;
    gnutls_session_t tls;
    gnutls_certificate_credentials_t cred;
    nghttp2_session *s;
    int eof, goaway;
} hc;

static int64_t hc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int hc_tcp(int port)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

/* A TLS session over a new connection to |port|, offering ALPN |alpn|
 * (NULL: none) and the client certificate |cert|/|key| (NULL: none).
 * Returns the handshake's result. */
static int hc_tls(hc *c, int port, const char *ca, const char *cert, const char *key,
                  const char *alpn)
{
    gnutls_datum_t cad = {(unsigned char *)ca, (unsigned)strlen(ca)};
    int rc;
    memset(c, 0, sizeof *c);
    c->fd = hc_tcp(port);
    assert_int_equal(gnutls_certificate_allocate_credentials(&c->cred), 0);
    assert_true(gnutls_certificate_set_x509_trust_mem(c->cred, &cad, GNUTLS_X509_FMT_PEM) > 0);
    if (cert) {
        gnutls_datum_t cd = {(unsigned char *)cert, (unsigned)strlen(cert)};
        gnutls_datum_t kd = {(unsigned char *)key, (unsigned)strlen(key)};
        assert_int_equal(gnutls_certificate_set_x509_key_mem(c->cred, &cd, &kd,
                                                             GNUTLS_X509_FMT_PEM), 0);
    }
    assert_int_equal(gnutls_init(&c->tls, GNUTLS_CLIENT | GNUTLS_NO_SIGNAL), 0);
    assert_int_equal(gnutls_set_default_priority(c->tls), 0);
    assert_int_equal(gnutls_credentials_set(c->tls, GNUTLS_CRD_CERTIFICATE, c->cred), 0);
    gnutls_server_name_set(c->tls, GNUTLS_NAME_DNS, "localhost", 9);
    gnutls_session_set_verify_cert(c->tls, "localhost", 0);
    if (alpn) {
        gnutls_datum_t p = {(unsigned char *)alpn, (unsigned)strlen(alpn)};
        gnutls_alpn_set_protocols(c->tls, &p, 1, 0);
    }
    gnutls_transport_set_int(c->tls, c->fd);
    gnutls_handshake_set_timeout(c->tls, 10000);
    do
        rc = gnutls_handshake(c->tls);
    while (rc < 0 && !gnutls_error_is_fatal(rc));
    return rc;
}

static void hc_free(hc *c)
{
    nghttp2_session_del(c->s);
    if (c->tls)
        gnutls_deinit(c->tls);
    if (c->cred)
        gnutls_certificate_free_credentials(c->cred);
    if (c->fd > 0)
        close(c->fd);
    memset(c, 0, sizeof *c);
}

static int hc_on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name,
                        size_t nl, const uint8_t *value, size_t vl, uint8_t flags, void *ud)
{
    hc_stream *st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
    (void)flags, (void)ud;
    if (!st)
        return 0;
    if (nl == 7 && !memcmp(name, ":status", 7))
        st->status = atoi((const char *)value);
    else if (nl == 12 && !memcmp(name, "content-type", 12))
        snprintf(st->ctype, sizeof st->ctype, "%.*s", (int)vl, value);
    else if (nl == 7 && !memcmp(name, "warning", 7))
        snprintf(st->warning, sizeof st->warning, "%.*s", (int)vl, value);
    else if (nl == 13 && !memcmp(name, "cache-control", 13))
        snprintf(st->cache, sizeof st->cache, "%.*s", (int)vl, value);
    return 0;
}

static int hc_on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *d,
                      size_t len, void *ud)
{
    hc_stream *st = nghttp2_session_get_stream_user_data(s, id);
    (void)flags, (void)ud;
    if (st)
        dra_buf_append(&st->body, d, len);
    return 0;
}

static int hc_on_close(nghttp2_session *s, int32_t id, uint32_t code, void *ud)
{
    hc_stream *st = nghttp2_session_get_stream_user_data(s, id);
    (void)ud;
    if (st) {
        st->closed = 1;
        st->code = code;
    }
    return 0;
}

static int hc_on_frame(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
    hc *c = ud;
    (void)s;
    if (f->hd.type == NGHTTP2_GOAWAY)
        c->goaway = 1;
    return 0;
}

/* Starts HTTP/2 on a handshaken connection. */
static void hc_h2(hc *c)
{
    nghttp2_session_callbacks *cb;
    nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 2000},
                                   {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20}};
    assert_int_equal(nghttp2_session_callbacks_new(&cb), 0);
    nghttp2_session_callbacks_set_on_header_callback(cb, hc_on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, hc_on_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, hc_on_close);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, hc_on_frame);
    assert_int_equal(nghttp2_session_client_new(&c->s, cb, c), 0);
    nghttp2_session_callbacks_del(cb);
    assert_int_equal(nghttp2_submit_settings(c->s, NGHTTP2_FLAG_NONE, iv, 2), 0);
}

static void hc_connect(hc *c, int port, const char *ca, const char *cert, const char *key)
{
    assert_int_equal(hc_tls(c, port, ca, cert, key, "h2"), 0);
    hc_h2(c);
}

static ssize_t hc_read_req(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len,
                           uint32_t *flags, nghttp2_data_source *src, void *ud)
{
    hc_stream *st = src->ptr;
    size_t n = st->req_len - st->req_off;
    (void)s, (void)id, (void)ud;
    if (n > len)
        n = len;
    memcpy(buf, st->req + st->req_off, n);
    st->req_off += n;
    if (st->req_off == st->req_len)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

/* Submits a request on a new stream into |st| (zeroed here). |token|
 * NULL: no Authorization; |cl|: send content-length. */
static void hc_submit(hc *c, hc_stream *st, const char *method, const char *path,
                      const char *token, const char *body, size_t body_len, int cl)
{
    nghttp2_nv nv[8];
    size_t n = 0;
    char auth[256], clen[32];
    nghttp2_data_provider dp;
#define HC_NV(k, v)                                                              \
    nv[n++] = (nghttp2_nv){(uint8_t *)(k), (uint8_t *)(v), strlen(k), strlen(v),   \
                           NGHTTP2_NV_FLAG_NONE}
    memset(st, 0, sizeof *st);
    dra_buf_init(&st->body, NULL);
    HC_NV(":method", method);
    HC_NV(":scheme", "https");
    HC_NV(":authority", "localhost");
    HC_NV(":path", path);
    HC_NV("accept", "application/json");
    if (token) {
        snprintf(auth, sizeof auth, "Bearer %s", token);
        HC_NV("authorization", auth);
    }
    if (body) {
        HC_NV("content-type", "application/json");
        if (cl) {
            snprintf(clen, sizeof clen, "%zu", body_len);
            HC_NV("content-length", clen);
        }
    }
#undef HC_NV
    st->req = body;
    st->req_len = body_len;
    dp.source.ptr = st;
    dp.read_callback = hc_read_req;
    st->id = nghttp2_submit_request(c->s, NULL, nv, n, body ? &dp : NULL, st);
    assert_true(st->id > 0);
}

static void hc_stream_fini(hc_stream *st)
{
    dra_buf_fini(&st->body);
}

/* Sends what nghttp2 has queued (blocking). */
static void hc_send(hc *c)
{
    const uint8_t *d;
    ssize_t n;
    while (!c->eof && (n = nghttp2_session_mem_send(c->s, &d)) > 0) {
        for (ssize_t off = 0; off < n;) {
            ssize_t w = gnutls_record_send(c->tls, d + off, (size_t)(n - off));
            if (w == GNUTLS_E_AGAIN || w == GNUTLS_E_INTERRUPTED)
                continue;
            if (w < 0) {
                c->eof = 1;
                return;
            }
            off += w;
        }
    }
}

/* Pumps the connection until |done(arg)| or |ms| pass; returns done's
 * last answer. */
static int hc_run(hc *c, int (*done)(void *), void *arg, int ms)
{
    int64_t end = hc_now_ms() + ms;
    uint8_t buf[16384];
    while (!done(arg)) {
        struct pollfd p = {c->fd, POLLIN, 0};
        ssize_t n;
        hc_send(c);
        if (c->eof || hc_now_ms() > end)
            return done(arg);
        if (!gnutls_record_check_pending(c->tls) && poll(&p, 1, 50) <= 0)
            continue;
        n = gnutls_record_recv(c->tls, buf, sizeof buf);
        if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED)
            continue;
        if (n <= 0 || nghttp2_session_mem_recv(c->s, buf, (size_t)n) < 0)
            c->eof = 1;
    }
    hc_send(c);
    return 1;
}

static int hc_closed(void *arg)
{
    return ((hc_stream *)arg)->closed;
}

/* One request, run to its end. Returns the status. */
static int hc_req(hc *c, hc_stream *st, const char *method, const char *path,
                  const char *token, const char *body)
{
    hc_submit(c, st, method, path, token, body, body ? strlen(body) : 0, 1);
    if (!hc_run(c, hc_closed, st, 20000))
        fail_msg("%s %s: no answer", method, path);
    return st->status;
}

#endif
