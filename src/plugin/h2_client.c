/*
 * plugin/h2_client.c: the client side of gRPC over HTTP/2 on nghttp2's
 * client session. A connection (unix socket or TCP) carries unary calls
 * one after another; client.c keeps a pool of them so several threads
 * call at once, and the plugin's health check makes one per call. Each
 * call ends with a status as gRPC reports it: the server's, or one the
 * client decides (UNAVAILABLE: cannot connect or the connection went;
 * DEADLINE_EXCEEDED; RESOURCE_EXHAUSTED: an answer over the limit;
 * INTERNAL: a malformed answer). After anything but a clean end the
 * connection is not used again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "plugin_int.h"

#define PREFIX_LEN 5
#define READ_CHUNK 16384
#define OUT_CHUNK 65536
/* Stream and connection receive window: a 4 MiB answer in a few round
 * trips rather than 64 of nghttp2's default 64 KiB. */
#define RECV_WINDOW (1 << 20)

typedef struct h2c_call {
    int32_t stream_id;
    const uint8_t *req;
    size_t req_len, off; /* off counts the prefix too */
    uint8_t prefix[PREFIX_LEN];
    size_t max_message;
    dra_buf *resp;
    uint8_t rprefix[PREFIX_LEN]; /* the answer's message prefix */
    size_t rprefix_got, rmsg_len, rmsg_got;
    int n_msgs;
    int http_status;
    int have_status, code;
    char msg[sizeof(((dra_plugin_rpc_status *)0)->message)];
    int failed;  /* the client's own verdict is in code/msg */
    int ended;   /* the server ended its side */
    int closed;  /* the stream is gone */
    uint32_t rst_code;
} h2c_call;

struct plugin_h2c {
    const dra_mem *mem;
    int fd;
    nghttp2_session *session;
    nghttp2_mem nmem;
    h2c_call *call;
    dra_buf out; /* bytes the session gave that the socket has not taken */
    size_t out_off;
    int goaway;  /* the server will take no new streams */
    int broken;  /* not to be used again */
    int refused; /* the last call certainly did not reach the server */
    int wrote;   /* bytes went out during the current call */
    int oom;     /* an allocation failed (nghttp2's or ours) */
    char peer[200]; /* for messages, as gRPC names addresses */
    char authority[128];
};

/* ---- status --------------------------------------------------------------- */

static void set_status(dra_plugin_rpc_status *st, int code, const char *fmt, ...)
    DRA_PRINTF(3, 4);
static void set_status(dra_plugin_rpc_status *st, int code, const char *fmt, ...)
{
    st->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->message, sizeof(st->message), fmt, ap);
    va_end(ap);
}

/* The call's verdict, decided here rather than by the server: the rest
 * of the answer is not wanted, and the connection is not reused. */
static void fail_call(plugin_h2c *c, h2c_call *u, int code, const char *fmt, ...)
    DRA_PRINTF(4, 5);
static void fail_call(plugin_h2c *c, h2c_call *u, int code, const char *fmt, ...)
{
    if (u->failed)
        return;
    u->failed = 1;
    u->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(u->msg, sizeof(u->msg), fmt, ap);
    va_end(ap);
    c->broken = 1;
    if (!u->closed)
        (void)nghttp2_submit_rst_stream(c->session, NGHTTP2_FLAG_NONE, u->stream_id,
                                        NGHTTP2_CANCEL);
}

/* gRPC's mapping of an HTTP status without grpc-status (http-grpc-status-mapping.md). */
static int http_to_grpc(int http)
{
    switch (http) {
    case 400:
        return DRA_GRPC_INTERNAL;
    case 401:
        return 16; /* UNAUTHENTICATED */
    case 403:
        return 7; /* PERMISSION_DENIED */
    case 404:
        return DRA_GRPC_UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
        return DRA_GRPC_UNAVAILABLE;
    default:
        return DRA_GRPC_UNKNOWN;
    }
}

/* gRPC's mapping of RST_STREAM codes (PROTOCOL-HTTP2.md). */
static int rst_to_grpc(uint32_t code)
{
    switch (code) {
    case NGHTTP2_REFUSED_STREAM:
        return DRA_GRPC_UNAVAILABLE;
    case NGHTTP2_CANCEL:
        return DRA_GRPC_CANCELLED;
    case NGHTTP2_ENHANCE_YOUR_CALM:
        return DRA_GRPC_RESOURCE_EXHAUSTED;
    case NGHTTP2_INADEQUATE_SECURITY:
        return 7; /* PERMISSION_DENIED */
    default:
        return DRA_GRPC_INTERNAL;
    }
}

/* ---- answer headers and messages ------------------------------------------ */

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

static int name_is(const uint8_t *name, size_t n, const char *want)
{
    return n == strlen(want) && memcmp(name, want, n) == 0;
}

/* The current call, when |stream_id| is its stream. */
static h2c_call *call_of(plugin_h2c *c, int32_t stream_id)
{
    return c->call && c->call->stream_id == stream_id ? c->call : NULL;
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame,
                     const uint8_t *name, size_t namelen, const uint8_t *value,
                     size_t valuelen, uint8_t flags, void *ud)
{
    (void)session;
    (void)flags;
    h2c_call *u = call_of(ud, frame->hd.stream_id);
    if (!u)
        return 0;
    char v[16];
    if (name_is(name, namelen, ":status")) {
        percent_decode(value, valuelen, v, sizeof(v));
        u->http_status = atoi(v);
    } else if (name_is(name, namelen, "grpc-status")) {
        percent_decode(value, valuelen, v, sizeof(v));
        u->code = atoi(v);
        u->have_status = 1;
    } else if (name_is(name, namelen, "grpc-message")) {
        percent_decode(value, valuelen, u->msg, sizeof(u->msg));
    }
    return 0;
}

/* The answer's message prefix is complete: 1 to go on. */
static int begin_message(plugin_h2c *c, h2c_call *u)
{
    if (++u->n_msgs > 1) {
        fail_call(c, u, DRA_GRPC_INTERNAL, "more than one answer message for a unary call");
        return 0;
    }
    if (u->rprefix[0] != 0) {
        fail_call(c, u, DRA_GRPC_INTERNAL,
                  "compressed answer (flag %u) without a negotiated grpc-encoding",
                  (unsigned)u->rprefix[0]);
        return 0;
    }
    size_t len = (size_t)u->rprefix[1] << 24 | (size_t)u->rprefix[2] << 16 |
                 (size_t)u->rprefix[3] << 8 | u->rprefix[4];
    if (len > u->max_message) {
        fail_call(c, u, DRA_GRPC_RESOURCE_EXHAUSTED,
                  "Received message larger than max (%zu vs. %zu)", len, u->max_message);
        return 0;
    }
    u->rmsg_len = len;
    u->rmsg_got = 0;
    return 1;
}

static int on_data_chunk(nghttp2_session *session, uint8_t flags, int32_t stream_id,
                         const uint8_t *data, size_t len, void *ud)
{
    (void)session;
    (void)flags;
    plugin_h2c *c = ud;
    h2c_call *u = call_of(c, stream_id);
    while (u && !u->failed && len > 0) {
        if (u->rprefix_got < PREFIX_LEN) {
            size_t n = PREFIX_LEN - u->rprefix_got < len ? PREFIX_LEN - u->rprefix_got : len;
            memcpy(u->rprefix + u->rprefix_got, data, n);
            u->rprefix_got += n;
            data += n;
            len -= n;
            if (u->rprefix_got == PREFIX_LEN && !begin_message(c, u))
                return 0;
            continue;
        }
        size_t want = u->rmsg_len - u->rmsg_got;
        size_t n = want < len ? want : len;
        if (dra_buf_append(u->resp, data, n) != DRA_OK) {
            fail_call(c, u, DRA_GRPC_RESOURCE_EXHAUSTED, "out of memory reading the answer");
            return 0;
        }
        u->rmsg_got += n;
        data += n;
        len -= n;
        if (u->rmsg_got == u->rmsg_len && len > 0)
            u->rprefix_got = 0; /* a second message: begin_message refuses it */
    }
    return 0;
}

static int on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *ud)
{
    (void)session;
    plugin_h2c *c = ud;
    if (frame->hd.type == NGHTTP2_GOAWAY) {
        c->goaway = 1;
        return 0;
    }
    h2c_call *u = call_of(c, frame->hd.stream_id);
    if (u && (frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
        (frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
        u->ended = 1;
    return 0;
}

static int on_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code,
                           void *ud)
{
    (void)session;
    h2c_call *u = call_of(ud, stream_id);
    if (u) {
        u->closed = 1;
        u->rst_code = error_code;
    }
    return 0;
}

/* The request: the 5-byte prefix, then the message. */
static ssize_t read_req(nghttp2_session *session, int32_t stream_id, uint8_t *buf,
                        size_t length, uint32_t *data_flags, nghttp2_data_source *source,
                        void *ud)
{
    (void)session;
    (void)source;
    h2c_call *u = call_of(ud, stream_id);
    if (!u)
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    size_t total = PREFIX_LEN + u->req_len, n = 0;
    while (n < length && u->off < total) {
        size_t k;
        if (u->off < PREFIX_LEN) {
            k = PREFIX_LEN - u->off < length - n ? PREFIX_LEN - u->off : length - n;
            memcpy(buf + n, u->prefix + u->off, k);
        } else {
            k = total - u->off < length - n ? total - u->off : length - n;
            memcpy(buf + n, u->req + (u->off - PREFIX_LEN), k);
        }
        n += k;
        u->off += k;
    }
    if (u->off == total)
        *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

/* ---- connecting ----------------------------------------------------------------- */

static dra_err new_session(plugin_h2c *c)
{
    nghttp2_session_callbacks *cb;
    if (nghttp2_session_callbacks_new(&cb) != 0)
        return DRA_ENOMEM;
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
    int rv = nghttp2_session_client_new3(&c->session, cb, c, NULL, &c->nmem);
    nghttp2_session_callbacks_del(cb);
    if (rv != 0) {
        c->session = NULL;
        return DRA_ENOMEM;
    }
    nghttp2_settings_entry iv[] = {
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, RECV_WINDOW},
    };
    if (nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, iv, 2) != 0 ||
        nghttp2_session_set_local_window_size(c->session, NGHTTP2_FLAG_NONE, 0, RECV_WINDOW) !=
            0)
        return DRA_ENOMEM;
    return DRA_OK;
}

void plugin_h2c_free(plugin_h2c *c)
{
    if (!c)
        return;
    nghttp2_session_del(c->session);
    if (c->fd >= 0)
        close(c->fd);
    dra_buf_fini(&c->out);
    dra_free(c->mem, c);
}

dra_err plugin_h2c_adopt(int fd, const char *peer, const char *authority, const dra_mem *mem,
                         plugin_h2c **out)
{
    *out = NULL;
    plugin_h2c *c = dra_calloc(mem, 1, sizeof(*c));
    if (!c) {
        close(fd);
        return DRA_ENOMEM;
    }
    c->mem = mem;
    c->fd = fd;
    plugin_h2_mem(mem, &c->nmem);
    dra_buf_init(&c->out, mem);
    snprintf(c->peer, sizeof(c->peer), "%s", peer);
    snprintf(c->authority, sizeof(c->authority), "%s", authority);
    if (new_session(c) != DRA_OK) {
        plugin_h2c_free(c);
        return DRA_ENOMEM;
    }
    *out = c;
    return DRA_OK;
}

dra_err plugin_h2c_connect(const char *target, int64_t deadline_ms, const dra_mem *mem,
                           plugin_h2c **out, dra_plugin_rpc_status *st)
{
    *out = NULL;
    char peer[sizeof(((plugin_h2c *)0)->peer)], authority[sizeof(((plugin_h2c *)0)->authority)];
    int err;
    int fd = plugin_dial(target, deadline_ms, peer, sizeof(peer), authority, sizeof(authority),
                         &err);
    if (fd < 0) {
        if (err == ETIMEDOUT)
            set_status(st, DRA_GRPC_DEADLINE_EXCEEDED, "Deadline Exceeded");
        else
            set_status(st, DRA_GRPC_UNAVAILABLE,
                       "failed to connect to all addresses; last error: %s: %s", peer,
                       strerror(err));
        return err == ETIMEDOUT ? DRA_ETIMEOUT : DRA_EUNAVAILABLE;
    }
    dra_err e = plugin_h2c_adopt(fd, peer, authority, mem, out);
    if (e != DRA_OK)
        set_status(st, DRA_GRPC_RESOURCE_EXHAUSTED, "out of memory");
    return e;
}

/* ---- I/O ------------------------------------------------------------------------ */

/* Everything the session has to send, into c->out. 0 or -1. */
static int fill_out(plugin_h2c *c)
{
    if (c->out_off == c->out.len) {
        dra_buf_reset(&c->out);
        c->out_off = 0;
    }
    while (c->out.len - c->out_off < OUT_CHUNK) {
        const uint8_t *p;
        ssize_t n = nghttp2_session_mem_send(c->session, &p);
        if (n < 0) {
            c->oom |= n == NGHTTP2_ERR_NOMEM;
            return -1;
        }
        if (n == 0)
            break;
        if (dra_buf_append(&c->out, p, (size_t)n) != DRA_OK) {
            c->oom = 1;
            return -1;
        }
    }
    return 0;
}

/* Writes what the socket takes now. 0, or an errno value. */
static int flush_out(plugin_h2c *c)
{
    while (c->out_off < c->out.len) {
        ssize_t w = send(c->fd, c->out.p + c->out_off, c->out.len - c->out_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : errno;
        c->out_off += (size_t)w;
        c->wrote = 1;
    }
    return 0;
}

/* Reads what is there into the session. 0; EAGAIN when nothing was;
 * -1 at the end of the stream; another errno value; EPROTO when the
 * session refused the bytes. */
static int read_in(plugin_h2c *c)
{
    uint8_t buf[READ_CHUNK];
    ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
        return EAGAIN;
    if (n < 0)
        return errno;
    if (n == 0)
        return -1;
    ssize_t rv = nghttp2_session_mem_recv(c->session, buf, (size_t)n);
    if (rv < 0) {
        c->oom |= rv == NGHTTP2_ERR_NOMEM;
        return EPROTO;
    }
    return 0;
}

/* A failure of the connection itself during |u|. */
static void conn_lost(plugin_h2c *c, h2c_call *u, int err)
{
    if (err == -1)
        fail_call(c, u, DRA_GRPC_UNAVAILABLE, "Socket closed");
    else if (err == EPROTO && c->oom)
        fail_call(c, u, DRA_GRPC_RESOURCE_EXHAUSTED, "out of memory");
    else if (err == EPROTO)
        fail_call(c, u, DRA_GRPC_INTERNAL, "HTTP/2 error from %s", c->peer);
    else
        fail_call(c, u, DRA_GRPC_UNAVAILABLE, "%s: %s", c->peer, strerror(err));
    if (!c->wrote && err != EPROTO)
        c->refused = 1;
}

/* Drives the connection until |u| ends (its stream closed, or the
 * server's end of it), fails, or its deadline passes. */
static void run(plugin_h2c *c, h2c_call *u, int64_t deadline_ms)
{
    while (!u->failed && !u->closed && !u->ended) {
        int err = 0;
        if (fill_out(c) != 0) {
            if (c->oom)
                fail_call(c, u, DRA_GRPC_RESOURCE_EXHAUSTED, "out of memory");
            else
                fail_call(c, u, DRA_GRPC_INTERNAL, "HTTP/2 session error");
            return;
        }
        if ((err = flush_out(c)) != 0) {
            conn_lost(c, u, err);
            return;
        }
        if (!nghttp2_session_want_read(c->session) && c->out_off == c->out.len) {
            fail_call(c, u, DRA_GRPC_UNAVAILABLE, "the HTTP/2 connection to %s ended",
                      c->peer);
            return;
        }
        int64_t left = deadline_ms - plugin_now_ms();
        if (left <= 0) {
            fail_call(c, u, DRA_GRPC_DEADLINE_EXCEEDED, "Deadline Exceeded");
            return;
        }
        struct pollfd pfd = {c->fd, POLLIN | (c->out_off < c->out.len ? POLLOUT : 0), 0};
        int r = poll(&pfd, 1, left > 1000000 ? 1000000 : (int)left);
        if (r < 0 && errno != EINTR) {
            conn_lost(c, u, errno);
            return;
        }
        if (r <= 0 || !(pfd.revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        err = read_in(c);
        if (err != 0 && err != EAGAIN) {
            conn_lost(c, u, err);
            return;
        }
    }
}

/* The outcome of an ended call into |st|. */
static void outcome(plugin_h2c *c, const h2c_call *u, dra_plugin_rpc_status *st)
{
    if (u->failed) {
        set_status(st, u->code, "%s", u->msg);
    } else if (u->have_status) {
        set_status(st, u->code, "%s", u->msg);
        if (u->code == DRA_GRPC_OK && u->n_msgs > 0 &&
            (u->rprefix_got < PREFIX_LEN || u->rmsg_got < u->rmsg_len))
            set_status(st, DRA_GRPC_INTERNAL, "the answer ended inside a message");
    } else if (u->closed && u->rst_code != NGHTTP2_NO_ERROR) {
        set_status(st, rst_to_grpc(u->rst_code), "Received RST_STREAM with error code %u",
                   (unsigned)u->rst_code);
        if (u->rst_code == NGHTTP2_REFUSED_STREAM)
            c->refused = 1;
    } else if (u->http_status != 200) {
        set_status(st, http_to_grpc(u->http_status),
                   "Received http2 header with status: %d", u->http_status);
    } else {
        set_status(st, DRA_GRPC_UNKNOWN, "the server's answer has no grpc-status");
    }
    /* Ended but still open: the server did not read all of the request;
     * the stream's rest would have to be reset, a new connection is
     * simpler. */
    if (u->failed || !u->closed || c->goaway)
        c->broken = 1;
}

static int submit_call(plugin_h2c *c, h2c_call *u, const char *method, int64_t deadline_ms)
{
    /* grpc-timeout: at most 8 digits, so long deadlines go in seconds. */
    char timeout[32];
    int64_t left = deadline_ms - plugin_now_ms();
    if (left > 99999999)
        snprintf(timeout, sizeof(timeout), "%lldS", (long long)(left / 1000));
    else
        snprintf(timeout, sizeof(timeout), "%lldm", (long long)(left > 0 ? left : 1));
    nghttp2_nv nv[] = {
        {(uint8_t *)":method", (uint8_t *)"POST", 7, 4, NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)":path", (uint8_t *)method, 5, strlen(method), NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)":authority", (uint8_t *)c->authority, 10, strlen(c->authority),
         NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)"content-type", (uint8_t *)"application/grpc", 12, 16,
         NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)"te", (uint8_t *)"trailers", 2, 8, NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)"grpc-timeout", (uint8_t *)timeout, 12, strlen(timeout),
         NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)"user-agent", (uint8_t *)"dra-plugin-client", 10, 17,
         NGHTTP2_NV_FLAG_NONE},
    };
    nghttp2_data_provider prd;
    prd.source.ptr = NULL;
    prd.read_callback = read_req;
    int32_t id = nghttp2_submit_request(c->session, NULL, nv, sizeof(nv) / sizeof(nv[0]), &prd,
                                        NULL);
    if (id < 0) {
        c->oom |= id == NGHTTP2_ERR_NOMEM;
        return -1;
    }
    u->stream_id = id;
    return 0;
}

void plugin_h2c_call(plugin_h2c *c, const char *method, const uint8_t *req, size_t req_len,
                     int64_t deadline_ms, size_t max_message, dra_buf *resp,
                     dra_plugin_rpc_status *st)
{
    h2c_call u;
    memset(&u, 0, sizeof(u));
    u.req = req ? req : (const uint8_t *)"";
    u.req_len = req_len;
    u.prefix[1] = (uint8_t)(req_len >> 24);
    u.prefix[2] = (uint8_t)(req_len >> 16);
    u.prefix[3] = (uint8_t)(req_len >> 8);
    u.prefix[4] = (uint8_t)req_len;
    u.max_message = max_message;
    u.resp = resp;
    c->refused = 0;
    c->wrote = 0;
    if (c->broken || c->goaway) {
        c->broken = c->refused = 1;
        set_status(st, DRA_GRPC_UNAVAILABLE, "the connection to %s is closing", c->peer);
        return;
    }
    c->call = &u;
    if (submit_call(c, &u, method, deadline_ms) != 0) {
        c->broken = c->refused = 1;
        c->call = NULL;
        if (c->oom)
            set_status(st, DRA_GRPC_RESOURCE_EXHAUSTED, "out of memory");
        else
            set_status(st, DRA_GRPC_UNAVAILABLE, "the connection to %s takes no new calls",
                       c->peer);
        return;
    }
    run(c, &u, deadline_ms);
    outcome(c, &u, st);
    c->call = NULL;
}

int plugin_h2c_usable(const plugin_h2c *c)
{
    return !c->broken;
}

int plugin_h2c_refused(const plugin_h2c *c)
{
    return c->refused;
}

int plugin_h2c_oom(const plugin_h2c *c)
{
    return c->oom;
}

int plugin_h2c_alive(plugin_h2c *c)
{
    if (c->broken || c->goaway)
        return 0;
    struct pollfd pfd = {c->fd, POLLIN, 0};
    while (poll(&pfd, 1, 0) > 0) {
        /* Only a server going away, or its PING or SETTINGS, comes
         * between calls. */
        int err = read_in(c);
        if (err == EAGAIN)
            break;
        if (err != 0 || c->goaway)
            return 0;
    }
    return 1;
}

/* ---- one call on its own connection ------------------------------------------- */

dra_err plugin_h2_unary(const char *socket_path, const char *method, const uint8_t *req,
                        size_t req_len, int timeout_ms, const dra_mem *mem, dra_buf *resp,
                        int *code, char *msg, size_t msgcap)
{
    *code = DRA_GRPC_UNKNOWN;
    msg[0] = '\0';
    int64_t deadline = plugin_now_ms() + timeout_ms;
    dra_plugin_rpc_status st;
    plugin_h2c *c;
    dra_err e = plugin_h2c_connect(socket_path, deadline, mem, &c, &st);
    if (e != DRA_OK)
        return e == DRA_ENOMEM || e == DRA_ETIMEOUT ? e : DRA_EIO;
    size_t before = resp->len;
    plugin_h2c_call(c, method, req, req_len, deadline, PLUGIN_DEFAULT_MAX_MESSAGE, resp, &st);
    int oom = plugin_h2c_oom(c);
    plugin_h2c_free(c);
    if (resp->oom || oom)
        return DRA_ENOMEM;
    *code = st.code;
    snprintf(msg, msgcap, "%s", st.message);
    if (st.code != DRA_GRPC_OK)
        resp->len = before;
    return st.code == DRA_GRPC_DEADLINE_EXCEEDED ? DRA_ETIMEOUT : DRA_OK;
}
