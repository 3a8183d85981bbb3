/*
 * plugin/h2_core.c: the server side of one gRPC connection over HTTP/2,
 * without I/O: bytes in (plugin_h2_recv), bytes out (plugin_h2_send),
 * nghttp2 doing the framing, HPACK and flow control. This file is the
 * gRPC layer over it: request headers, the 5-byte message prefix,
 * limits, and the answer as HEADERS + DATA + trailers (or trailers-only
 * for an error). A complete request becomes a plugin_h2_call handed to
 * the owner's dispatch callback; the owner answers it later (from
 * another thread's result, on the connection's thread) with
 * plugin_h2_answer. Only unary calls: one request message, one answer.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <string.h>

#include "plugin_int.h"

#define PREFIX_LEN 5

typedef struct h2_stream h2_stream;
struct h2_stream {
    h2_stream *prev, *next; /* every stream of the core */
    int32_t id;
    int64_t started_ms;
    int headers_ok;  /* a valid gRPC request's headers arrived */
    int answered;    /* an answer was submitted (later input is dropped) */
    int dispatched;  /* the call is with the owner */
    int compressed_encoding; /* grpc-encoding other than identity */
    char method[256];
    uint8_t prefix[PREFIX_LEN];
    size_t prefix_got;
    size_t msg_len;  /* of the message being received */
    int n_msgs;      /* messages started */
    dra_buf msg;     /* the request message */
    dra_buf out;     /* the framed answer message */
    size_t out_off;
    int status;      /* grpc-status for the trailers */
    char status_msg[1024];
};

struct plugin_h2 {
    plugin_h2_cfg cfg;
    nghttp2_session *session;
    nghttp2_mem nmem;
    h2_stream *streams; /* nghttp2_session_del frees its streams without a callback */
    int64_t now_ms; /* as of the last plugin_h2_expire */
    int fatal;
};

/* ---- allocation through the owner's dra_mem ----------------------------- */

void plugin_h2_mem(const dra_mem *mem, void *nmem)
{
    *(nghttp2_mem *)nmem = (nghttp2_mem){(void *)mem, dra_mem_hook_malloc, dra_mem_hook_free,
        dra_mem_hook_calloc, dra_mem_hook_realloc};
}

/* ---- streams -------------------------------------------------------------- */

static void unlink_stream(plugin_h2 *h, h2_stream *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else if (h->streams == s)
        h->streams = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->prev = s->next = NULL;
}

static void stream_free(plugin_h2 *h, h2_stream *s)
{
    unlink_stream(h, s);
    dra_buf_fini(&s->msg);
    dra_buf_fini(&s->out);
    dra_free(h->cfg.mem, s);
}

static void nv_set(nghttp2_nv *nv, const char *name, const char *value)
{
    nv->name = (uint8_t *)name;
    nv->namelen = strlen(name);
    nv->value = (uint8_t *)value;
    nv->valuelen = strlen(value);
    nv->flags = NGHTTP2_NV_FLAG_NONE;
}

/* grpc-message: bytes outside printable ASCII, and '%', as %XX. */
static void percent_encode(const char *in, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && k + 4 < cap; p++) {
        if (*p >= 0x20 && *p <= 0x7e && *p != '%') {
            out[k++] = (char)*p;
        } else {
            out[k++] = '%';
            out[k++] = hex[*p >> 4];
            out[k++] = hex[*p & 15];
        }
    }
    out[k] = '\0';
}

/* The trailers (or, for trailers-only, the whole header block) of |s|. */
static size_t trailer_nv(const h2_stream *s, nghttp2_nv *nv, char *code, size_t code_cap,
                         char *msg, size_t msg_cap)
{
    snprintf(code, code_cap, "%d", s->status);
    nv_set(&nv[0], "grpc-status", code);
    if (!s->status_msg[0])
        return 1;
    percent_encode(s->status_msg, msg, msg_cap);
    nv_set(&nv[1], "grpc-message", msg);
    return 2;
}

static ssize_t read_answer(nghttp2_session *session, int32_t stream_id, uint8_t *buf,
                           size_t length, uint32_t *data_flags,
                           nghttp2_data_source *source, void *user_data)
{
    (void)user_data;
    h2_stream *s = source->ptr;
    size_t n = s->out.len - s->out_off;
    if (n > length)
        n = length;
    memcpy(buf, s->out.p + s->out_off, n);
    s->out_off += n;
    if (s->out_off == s->out.len) {
        *data_flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
        nghttp2_nv nv[2];
        char code[16], msg[3 * sizeof(s->status_msg)];
        size_t nnv = trailer_nv(s, nv, code, sizeof(code), msg, sizeof(msg));
        if (nghttp2_submit_trailer(session, stream_id, nv, nnv) != 0)
            return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    return (ssize_t)n;
}

/* Submits the answer of |s|: with a message (OK), HEADERS + DATA +
 * trailers; otherwise one HEADERS frame carrying the status
 * (trailers-only), with |http| as :status. A client still sending goes
 * on until it sees the status; what it sends is dropped. (No
 * RST_STREAM(NO_ERROR) after the status, as RFC 9113 8.1 allows: the
 * gRPC core client takes it for an error even after the trailers.) */
static int submit_answer(plugin_h2 *h, h2_stream *s, const char *http)
{
    s->answered = 1;
    nghttp2_nv nv[4];
    nv_set(&nv[0], ":status", http);
    nv_set(&nv[1], "content-type", "application/grpc");
    int rv;
    if (s->status == DRA_GRPC_OK) {
        nghttp2_data_provider prd;
        prd.source.ptr = s;
        prd.read_callback = read_answer;
        rv = nghttp2_submit_response(h->session, s->id, nv, 2, &prd);
    } else {
        char code[16], msg[3 * sizeof(s->status_msg)];
        size_t nnv = 2 + trailer_nv(s, nv + 2, code, sizeof(code), msg, sizeof(msg));
        rv = nghttp2_submit_response(h->session, s->id, nv, nnv, NULL);
    }
    if (rv != 0)
        h->fatal = 1;
    return rv;
}

/* An answer decided by the transport: a status and its message. */
static int fail_stream(plugin_h2 *h, h2_stream *s, const char *http, int code,
                       const char *fmt, ...) DRA_PRINTF(5, 6);
static int fail_stream(plugin_h2 *h, h2_stream *s, const char *http, int code,
                       const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->status_msg, sizeof(s->status_msg), fmt, ap);
    va_end(ap);
    s->status = code;
    return submit_answer(h, s, http);
}

/* ---- request headers ---------------------------------------------------------- */

static int grpc_content_type(const uint8_t *v, size_t n)
{
    static const char ct[] = "application/grpc";
    size_t k = sizeof(ct) - 1;
    return n >= k && memcmp(v, ct, k) == 0 && (n == k || v[k] == '+' || v[k] == ';');
}

static int header_is(const uint8_t *name, size_t n, const char *want)
{
    return n == strlen(want) && memcmp(name, want, n) == 0;
}

static int on_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *ud)
{
    plugin_h2 *h = ud;
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    h2_stream *s = dra_calloc(h->cfg.mem, 1, sizeof(*s));
    if (!s)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    s->id = frame->hd.stream_id;
    s->started_ms = h->now_ms;
    dra_buf_init(&s->msg, h->cfg.mem);
    dra_buf_init(&s->out, h->cfg.mem);
    s->next = h->streams;
    if (h->streams)
        h->streams->prev = s;
    h->streams = s;
    nghttp2_session_set_stream_user_data(session, s->id, s);
    return 0;
}

enum { SAW_POST = 1, SAW_TYPE = 2, SAW_PATH = 4, BAD_TYPE = 8, BAD_METHOD = 16 };

static int on_header(nghttp2_session *session, const nghttp2_frame *frame,
                     const uint8_t *name, size_t namelen, const uint8_t *value,
                     size_t valuelen, uint8_t flags, void *ud)
{
    (void)flags;
    (void)ud;
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    h2_stream *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
    if (!s)
        return 0;
    if (header_is(name, namelen, ":method")) {
        s->headers_ok |= valuelen == 4 && memcmp(value, "POST", 4) == 0 ? SAW_POST : BAD_METHOD;
    } else if (header_is(name, namelen, ":path")) {
        size_t n = valuelen < sizeof(s->method) - 1 ? valuelen : sizeof(s->method) - 1;
        memcpy(s->method, value, n);
        s->method[n] = '\0';
        s->headers_ok |= SAW_PATH;
    } else if (header_is(name, namelen, "content-type")) {
        s->headers_ok |= grpc_content_type(value, valuelen) ? SAW_TYPE : BAD_TYPE;
    } else if (header_is(name, namelen, "grpc-encoding")) {
        s->compressed_encoding = !(valuelen == 8 && memcmp(value, "identity", 8) == 0);
    }
    return 0;
}

/* Checks a request's headers once they are all in; 1 when it may go on. */
static int check_headers(plugin_h2 *h, h2_stream *s)
{
    if (!(s->headers_ok & SAW_POST)) {
        fail_stream(h, s, "405", DRA_GRPC_INTERNAL, "grpc: method must be POST");
        return 0;
    }
    if (!(s->headers_ok & SAW_TYPE)) {
        fail_stream(h, s, "415", DRA_GRPC_INTERNAL, "grpc: invalid gRPC request content-type");
        return 0;
    }
    return 1;
}

/* ---- request messages ----------------------------------------------------------- */

/* The first byte of a message prefix: 0 (not compressed) is the only
 * one this server takes. */
static int check_flag(plugin_h2 *h, h2_stream *s)
{
    uint8_t flag = s->prefix[0];
    if (flag == 0)
        return 1;
    if (flag == 1 && s->compressed_encoding)
        fail_stream(h, s, "200", DRA_GRPC_UNIMPLEMENTED,
                    "grpc: Decompressor is not installed for the request's grpc-encoding");
    else if (flag == 1)
        fail_stream(h, s, "200", DRA_GRPC_INTERNAL,
                    "grpc: compressed flag set with identity or empty encoding");
    else
        fail_stream(h, s, "200", DRA_GRPC_INTERNAL, "grpc: invalid compressed flag %u",
                    (unsigned)flag);
    return 0;
}

/* A message prefix is complete: flag, length, limits. 1 to go on. */
static int begin_message(plugin_h2 *h, h2_stream *s)
{
    if (!check_flag(h, s))
        return 0;
    uint32_t len = (uint32_t)s->prefix[1] << 24 | (uint32_t)s->prefix[2] << 16 |
                   (uint32_t)s->prefix[3] << 8 | s->prefix[4];
    if (++s->n_msgs > 1) {
        fail_stream(h, s, "200", DRA_GRPC_INTERNAL,
                    "grpc: more than one request message for a unary call");
        return 0;
    }
    if (len > h->cfg.max_message) {
        fail_stream(h, s, "200", DRA_GRPC_RESOURCE_EXHAUSTED,
                    "grpc: received message larger than max (%" PRIu32 " vs. %zu)", len,
                    h->cfg.max_message);
        return 0;
    }
    s->msg_len = len;
    return 1;
}

static int on_data_chunk(nghttp2_session *session, uint8_t flags, int32_t stream_id,
                         const uint8_t *data, size_t len, void *ud)
{
    (void)flags;
    plugin_h2 *h = ud;
    h2_stream *s = nghttp2_session_get_stream_user_data(session, stream_id);
    if (!s || s->answered)
        return 0;
    while (len > 0) {
        if (s->prefix_got < PREFIX_LEN) {
            size_t n = PREFIX_LEN - s->prefix_got < len ? PREFIX_LEN - s->prefix_got : len;
            memcpy(s->prefix + s->prefix_got, data, n);
            s->prefix_got += n;
            data += n;
            len -= n;
            if (s->prefix_got == PREFIX_LEN && !begin_message(h, s))
                return h->fatal ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
            continue;
        }
        size_t want = s->msg_len - s->msg.len;
        size_t n = want < len ? want : len;
        if (dra_buf_append(&s->msg, data, n) != DRA_OK) {
            fail_stream(h, s, "200", DRA_GRPC_RESOURCE_EXHAUSTED,
                        "out of memory reading the request");
            return h->fatal ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
        }
        data += n;
        len -= n;
        if (s->msg.len == s->msg_len && len > 0) {
            /* A second message right behind the first. */
            s->prefix_got = 0;
            s->msg_len = 0;
        }
    }
    return 0;
}

/* The client half-closed: the request is complete, or it is not. */
static int end_request(plugin_h2 *h, h2_stream *s)
{
    if (s->answered || s->dispatched)
        return 0;
    if (s->n_msgs == 0 && s->prefix_got == 0) {
        fail_stream(h, s, "200", DRA_GRPC_INVALID_ARGUMENT, "request message missing");
        return 0;
    }
    if (s->prefix_got < PREFIX_LEN || s->msg.len < s->msg_len) {
        fail_stream(h, s, "200", DRA_GRPC_INTERNAL,
                    "grpc: the request ended inside a message (%zu of %zu bytes)",
                    s->prefix_got < PREFIX_LEN ? s->prefix_got : PREFIX_LEN + s->msg.len,
                    PREFIX_LEN + s->msg_len);
        return 0;
    }
    plugin_h2_call *c = dra_calloc(h->cfg.mem, 1, sizeof(*c));
    if (!c) {
        fail_stream(h, s, "200", DRA_GRPC_RESOURCE_EXHAUSTED, "out of memory");
        return 0;
    }
    s->dispatched = 1;
    c->stream_id = s->id;
    memcpy(c->method, s->method, sizeof(c->method));
    c->in = s->msg; /* moved */
    dra_buf_init(&s->msg, h->cfg.mem);
    dra_buf_init(&c->out, h->cfg.mem);
    c->rpc.method = c->method;
    c->rpc.req = (const uint8_t *)(c->in.p ? c->in.p : "");
    c->rpc.req_len = c->in.len;
    c->rpc.resp = &c->out;
    h->cfg.dispatch(h->cfg.ud, c);
    return 0;
}

static int on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *ud)
{
    plugin_h2 *h = ud;
    if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA)
        return 0;
    h2_stream *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
    if (!s)
        return 0;
    if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST &&
        !check_headers(h, s))
        return h->fatal ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
    if (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)
        end_request(h, s);
    return h->fatal ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
}

static int on_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code,
                           void *ud)
{
    (void)error_code;
    plugin_h2 *h = ud;
    h2_stream *s = nghttp2_session_get_stream_user_data(session, stream_id);
    if (s) {
        nghttp2_session_set_stream_user_data(session, stream_id, NULL);
        stream_free(h, s);
    }
    return 0;
}

/* ---- the connection ---------------------------------------------------------------- */

dra_err plugin_h2_new(const plugin_h2_cfg *cfg, plugin_h2 **out)
{
    *out = NULL;
    plugin_h2 *h = dra_calloc(cfg->mem, 1, sizeof(*h));
    if (!h)
        return DRA_ENOMEM;
    h->cfg = *cfg;
    plugin_h2_mem(cfg->mem, &h->nmem);
    nghttp2_session_callbacks *cb;
    if (nghttp2_session_callbacks_new(&cb) != 0) {
        dra_free(cfg->mem, h);
        return DRA_ENOMEM;
    }
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
    int rv = nghttp2_session_server_new3(&h->session, cb, h, NULL, &h->nmem);
    nghttp2_session_callbacks_del(cb);
    nghttp2_settings_entry iv[] = {
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, cfg->max_streams ? cfg->max_streams : 100},
    };
    if (rv == 0)
        rv = nghttp2_submit_settings(h->session, NGHTTP2_FLAG_NONE, iv, 1);
    if (rv != 0) {
        plugin_h2_free(h);
        return DRA_ENOMEM;
    }
    *out = h;
    return DRA_OK;
}

void plugin_h2_free(plugin_h2 *h)
{
    if (!h)
        return;
    /* Deleting the session closes its streams through on_stream_close. */
    nghttp2_session_del(h->session);
    while (h->streams)
        stream_free(h, h->streams);
    dra_free(h->cfg.mem, h);
}

int plugin_h2_recv(plugin_h2 *h, const uint8_t *data, size_t len)
{
    if (h->fatal)
        return -1;
    ssize_t n = nghttp2_session_mem_recv(h->session, data, len);
    if (n < 0 || h->fatal) {
        h->fatal = 1;
        return -1;
    }
    return 0;
}

ssize_t plugin_h2_send(plugin_h2 *h, const uint8_t **data)
{
    if (h->fatal)
        return -1;
    ssize_t n = nghttp2_session_mem_send(h->session, data);
    if (n < 0 || h->fatal) {
        h->fatal = 1;
        return -1;
    }
    return n;
}

int plugin_h2_done(const plugin_h2 *h)
{
    return h->fatal || (!nghttp2_session_want_read(h->session) &&
                        !nghttp2_session_want_write(h->session));
}

void plugin_h2_goaway(plugin_h2 *h)
{
    if (!h->fatal && nghttp2_session_terminate_session(h->session, NGHTTP2_NO_ERROR) != 0)
        h->fatal = 1;
}

void plugin_h2_call_free(const dra_mem *mem, plugin_h2_call *c)
{
    if (!c)
        return;
    dra_buf_fini(&c->in);
    dra_buf_fini(&c->out);
    dra_free(mem, c);
}

void plugin_h2_answer(plugin_h2 *h, plugin_h2_call *c)
{
    h2_stream *s = nghttp2_session_get_stream_user_data(h->session, c->stream_id);
    if (s && !s->answered && !h->fatal) {
        s->status = c->rpc.code;
        snprintf(s->status_msg, sizeof(s->status_msg), "%s", c->rpc.msg);
        if (c->rpc.code == DRA_GRPC_OK && c->out.oom) {
            s->status = DRA_GRPC_RESOURCE_EXHAUSTED;
            snprintf(s->status_msg, sizeof(s->status_msg), "out of memory");
        } else if (c->rpc.code == DRA_GRPC_OK && c->out.len > h->cfg.max_message) {
            s->status = DRA_GRPC_RESOURCE_EXHAUSTED;
            snprintf(s->status_msg, sizeof(s->status_msg),
                     "grpc: trying to send message larger than max (%zu vs. %zu)", c->out.len,
                     h->cfg.max_message);
        } else if (c->rpc.code == DRA_GRPC_OK) {
            uint8_t prefix[PREFIX_LEN] = {0, (uint8_t)(c->out.len >> 24),
                                          (uint8_t)(c->out.len >> 16),
                                          (uint8_t)(c->out.len >> 8), (uint8_t)c->out.len};
            if (dra_buf_append(&s->out, prefix, PREFIX_LEN) != DRA_OK ||
                dra_buf_append(&s->out, c->out.p ? c->out.p : "", c->out.len) != DRA_OK) {
                s->status = DRA_GRPC_RESOURCE_EXHAUSTED;
                snprintf(s->status_msg, sizeof(s->status_msg), "out of memory");
            }
        }
        submit_answer(h, s, "200");
    }
    plugin_h2_call_free(h->cfg.mem, c);
}

int64_t plugin_h2_expire(plugin_h2 *h, int64_t now_ms, int64_t timeout_ms)
{
    h->now_ms = now_ms;
    int64_t next = -1;
    h2_stream *s = h->streams;
    while (s) {
        h2_stream *nx = s->next;
        if (s->answered || s->dispatched) {
            s = nx;
            continue;
        }
        int64_t due = s->started_ms + timeout_ms;
        if (due <= now_ms) {
            /* As gRPC cancels a call: the client sees CANCELLED. */
            s->answered = 1;
            if (nghttp2_submit_rst_stream(h->session, NGHTTP2_FLAG_NONE, s->id,
                                          NGHTTP2_CANCEL) != 0)
                h->fatal = 1;
        } else if (next < 0 || due < next)
            next = due;
        s = nx;
    }
    return next;
}
