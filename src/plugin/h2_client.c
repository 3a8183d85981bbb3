/*
 * plugin/h2_client.c: one unary gRPC call over a unix socket on nghttp2's
 * client session, for the plugin's health check, which calls its own
 * registration and DRA sockets (NVIDIA's health.go does the same) and
 * so must not need the gRPC core library. One connection per call; the
 * node agent and the tests use the full client (client.c) instead.
 */
#include <errno.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "plugin_int.h"

typedef struct ucall {
    const uint8_t *req;
    size_t req_len, off; /* off counts the 5-byte prefix too */
    uint8_t prefix[5];
    dra_buf raw; /* the answer's DATA: prefix and message */
    int code, have_status, closed;
    char *msg;
    size_t msgcap;
} ucall;

static int hexval(int ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

static void percent_decode(const uint8_t *v, size_t n, char *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < cap; i++) {
        int hi, lo;
        if (v[i] == '%' && i + 2 < n && (hi = hexval(v[i + 1])) >= 0 &&
            (lo = hexval(v[i + 2])) >= 0) {
            out[k++] = (char)(hi << 4 | lo);
            i += 2;
        } else {
            out[k++] = (char)v[i];
        }
    }
    out[k] = '\0';
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame,
                     const uint8_t *name, size_t namelen, const uint8_t *value,
                     size_t valuelen, uint8_t flags, void *ud)
{
    (void)session;
    (void)frame;
    (void)flags;
    ucall *u = ud;
    if (namelen == 11 && memcmp(name, "grpc-status", 11) == 0) {
        char code[16];
        percent_decode(value, valuelen, code, sizeof(code));
        u->code = atoi(code);
        u->have_status = 1;
    } else if (namelen == 12 && memcmp(name, "grpc-message", 12) == 0) {
        percent_decode(value, valuelen, u->msg, u->msgcap);
    }
    return 0;
}

static int on_data_chunk(nghttp2_session *session, uint8_t flags, int32_t stream_id,
                         const uint8_t *data, size_t len, void *ud)
{
    (void)session;
    (void)flags;
    (void)stream_id;
    ucall *u = ud;
    return dra_buf_append(&u->raw, data, len) == DRA_OK ? 0 : NGHTTP2_ERR_CALLBACK_FAILURE;
}

static int on_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code,
                           void *ud)
{
    (void)session;
    (void)stream_id;
    (void)error_code;
    ((ucall *)ud)->closed = 1;
    return 0;
}

static ssize_t read_req(nghttp2_session *session, int32_t stream_id, uint8_t *buf,
                        size_t length, uint32_t *data_flags, nghttp2_data_source *source,
                        void *ud)
{
    (void)session;
    (void)stream_id;
    (void)source;
    ucall *u = ud;
    size_t total = 5 + u->req_len, n = 0;
    while (n < length && u->off < total) {
        size_t k;
        if (u->off < 5) {
            k = 5 - u->off < length - n ? 5 - u->off : length - n;
            memcpy(buf + n, u->prefix + u->off, k);
        } else {
            k = total - u->off < length - n ? total - u->off : length - n;
            memcpy(buf + n, u->req + (u->off - 5), k);
        }
        n += k;
        u->off += k;
    }
    if (u->off == total)
        *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

static int connect_unix(const char *path)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sa.sun_path))
        return -1;
    memcpy(sa.sun_path, path, strlen(path));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Writes everything the session has to send; 0 or -1. */
static int write_out(nghttp2_session *session, int fd)
{
    for (;;) {
        const uint8_t *p;
        ssize_t n = nghttp2_session_mem_send(session, &p);
        if (n <= 0)
            return (int)n;
        while (n > 0) {
            ssize_t w = send(fd, p, (size_t)n, MSG_NOSIGNAL);
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                return -1;
            p += w;
            n -= w;
        }
    }
}

/* Runs the session until the call's stream closes. */
static dra_err run(nghttp2_session *session, int fd, ucall *u, int timeout_ms)
{
    int64_t deadline = plugin_now_ms() + timeout_ms;
    while (!u->closed) {
        if (write_out(session, fd) != 0)
            return DRA_EIO;
        int64_t left = deadline - plugin_now_ms();
        if (left <= 0)
            return DRA_ETIMEOUT;
        struct pollfd pfd = {fd, POLLIN, 0};
        int r = poll(&pfd, 1, (int)left);
        if (r < 0 && errno != EINTR)
            return DRA_EIO;
        if (r <= 0)
            continue;
        uint8_t buf[8192];
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || nghttp2_session_mem_recv(session, buf, (size_t)n) < 0)
            return DRA_EIO;
    }
    return DRA_OK;
}

/* The message of a finished call's DATA into |resp|. */
static dra_err take_message(const ucall *u, dra_buf *resp)
{
    if (u->code != DRA_GRPC_OK)
        return DRA_OK;
    const uint8_t *p = (const uint8_t *)u->raw.p;
    if (u->raw.len < 5 || p[0] != 0)
        return DRA_EIO;
    size_t len = (size_t)p[1] << 24 | (size_t)p[2] << 16 | (size_t)p[3] << 8 | p[4];
    if (len != u->raw.len - 5)
        return DRA_EIO;
    return dra_buf_append(resp, p + 5, len);
}

dra_err plugin_h2_unary(const char *socket_path, const char *method, const uint8_t *req,
                        size_t req_len, int timeout_ms, const dra_mem *mem, dra_buf *resp,
                        int *code, char *msg, size_t msgcap)
{
    *code = DRA_GRPC_UNKNOWN;
    msg[0] = '\0';
    ucall u;
    memset(&u, 0, sizeof(u));
    u.req = req;
    u.req_len = req_len;
    u.prefix[1] = (uint8_t)(req_len >> 24);
    u.prefix[2] = (uint8_t)(req_len >> 16);
    u.prefix[3] = (uint8_t)(req_len >> 8);
    u.prefix[4] = (uint8_t)req_len;
    u.msg = msg;
    u.msgcap = msgcap;
    dra_buf_init(&u.raw, mem);
    int fd = connect_unix(socket_path);
    if (fd < 0)
        return DRA_EIO;
    nghttp2_session_callbacks *cb;
    nghttp2_session *session = NULL;
    dra_err e = DRA_ENOMEM;
    if (nghttp2_session_callbacks_new(&cb) == 0) {
        nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
        nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
        if (nghttp2_session_client_new(&session, cb, &u) != 0)
            session = NULL;
        nghttp2_session_callbacks_del(cb);
    }
    nghttp2_nv nv[] = {
        {(uint8_t *)":method", (uint8_t *)"POST", 7, 4, NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)":path", (uint8_t *)method, 5, strlen(method), NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)":authority", (uint8_t *)"localhost", 10, 9, NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)"content-type", (uint8_t *)"application/grpc", 12, 16,
         NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)"te", (uint8_t *)"trailers", 2, 8, NGHTTP2_NV_FLAG_NONE},
    };
    nghttp2_data_provider prd;
    prd.source.ptr = NULL;
    prd.read_callback = read_req;
    if (session && nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, NULL, 0) == 0 &&
        nghttp2_submit_request(session, NULL, nv, sizeof(nv) / sizeof(nv[0]), &prd, NULL) > 0)
        e = run(session, fd, &u, timeout_ms);
    if (e == DRA_OK && !u.have_status)
        e = DRA_EIO;
    if (e == DRA_OK) {
        *code = u.code;
        e = take_message(&u, resp);
    }
    nghttp2_session_del(session);
    close(fd);
    dra_buf_fini(&u.raw);
    return e;
}
