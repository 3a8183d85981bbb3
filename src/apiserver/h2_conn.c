/*
 * h2_conn.c: one HTTP/2 connection of drad's API server without I/O:
 * bytes in (api_h2c_recv), bytes out (api_h2c_send), nghttp2 doing the
 * framing, HPACK and flow control. One stream is one request to
 * dra_apiserver_handle, authenticated and bounded as in http.c (shared
 * rules in front.c). Writes run on the owner's workers and come back
 * through the mailbox; watch and log bodies are read only when nghttp2
 * asks for data, and their notify only marks the stream ready and wakes
 * the owner, which resumes it from api_h2c_poll.
 */
#include <nghttp2/nghttp2.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "apiserver_int.h"
#include "front.h"
#include "h2_int.h"

/* Header bytes per request (names, values, 32 per field as HPACK
 * counts them); above it the answer is 431. */
#define H2_MAX_HEADERS (64 * 1024)
/* Request body bytes buffered per connection across its streams; a
 * stream that would pass it is refused (the client retries). */
#define H2_MAX_CONN_BODY ((size_t)64 << 20)
#define H2_MAX_STREAMS 1000

typedef struct h2_mbox h2_mbox;
typedef struct h2s h2s;

/* What workers and stream notifies share with the connection. It lives
 * until the connection and every job have let go of it. */
struct h2_mbox {
    pthread_mutex_t lock;
    int refs;
    int closed; /* the connection is gone: drop answers, never wake */
    api_h2_job *done, *done_tail;
    dra_buf ready; /* int32_t ids of streams whose dra_stream notified */
    /* The owner was woken and has not polled yet: one commit notifies
     * every watch of a connection, which needs one wake-up, not 1,000. */
    int woken;
    void (*wake)(void *ud);
    void *ud;
    const dra_mem *mem;
};

/* A request as received, owned by its stream and then by its job. */
typedef struct h2_req {
    dra_arena a;
    const char *method, *path, *query, *accept, *ctype, *auth;
    dra_buf qbuf;
    dra_buf body;
} h2_req;

struct api_h2_job {
    h2_mbox *mb;
    dra_apiserver *srv;
    int32_t id;
    h2_req *req;
    const char *user;
    dra_apiserver_resp resp;
    int oom;
    api_h2_job *next;
};

struct h2s {
    api_h2c *c;
    h2s *prev, *next;
    int32_t id;
    h2_req *req;
    size_t hdr_bytes, content_length;
    int have_cl, hdr_too_big, too_large, answered, req_done;
    api_h2_job *job; /* out on a worker */
    dra_buf out;     /* answer bytes nghttp2 has not taken yet */
    size_t off;
    dra_stream *st;
    int eof, forced_end;
    int queued; /* in mb->ready; under mb->lock */
    int readable; /* notified since the last read of st (a read drains
                   * it or notifies again: dra_stream_ops) */
};

struct api_h2c {
    api_h2c_cfg cfg;
    const dra_mem *mem;
    nghttp2_session *session;
    nghttp2_mem nmem;
    h2_mbox *mb;
    h2s *streams;
    int njobs;
    int shutting;
    size_t body_bytes; /* buffered request bodies of all streams */
    dra_buf *sink;     /* api_h2c_send's output, for send_data */
};

/* ---- the mailbox ---------------------------------------------------------------- */

static void req_free(const dra_mem *mem, h2_req *r)
{
    if (!r)
        return;
    dra_buf_fini(&r->qbuf);
    dra_buf_fini(&r->body);
    dra_arena_fini(&r->a);
    dra_free(mem, r);
}

static void job_free(api_h2_job *j)
{
    const dra_mem *mem = j->mb->mem;
    dra_apiserver_resp_fini(&j->resp);
    req_free(mem, j->req);
    dra_free(mem, j);
}

static void mbox_unref(h2_mbox *mb)
{
    int last;
    pthread_mutex_lock(&mb->lock);
    last = --mb->refs == 0;
    pthread_mutex_unlock(&mb->lock);
    if (!last)
        return;
    pthread_mutex_destroy(&mb->lock);
    dra_buf_fini(&mb->ready);
    dra_free(mb->mem, mb);
}

/* Called with the connection gone: later posts are dropped. */
static void mbox_close(h2_mbox *mb)
{
    api_h2_job *done;
    pthread_mutex_lock(&mb->lock);
    mb->closed = 1;
    done = mb->done;
    mb->done = mb->done_tail = NULL;
    pthread_mutex_unlock(&mb->lock);
    while (done) {
        api_h2_job *n = done->next;
        job_free(done);
        mbox_unref(mb); /* the queued job's reference */
        done = n;
    }
    mbox_unref(mb);
}

/* Under mb->lock. */
static void mbox_wake(h2_mbox *mb)
{
    if (mb->woken || !mb->wake)
        return;
    mb->woken = 1;
    mb->wake(mb->ud);
}

/* The handler's view of |r|, as |user|; borrows from |r|. */
static void handler_req(const h2_req *r, const char *user, dra_apiserver_req *q)
{
    memset(q, 0, sizeof *q);
    q->method = r->method;
    q->path = r->path;
    q->query = r->query;
    q->accept = r->accept;
    q->content_type = r->ctype;
    q->user = user;
    q->body = r->body.p;
    q->body_len = r->body.len;
}

void api_h2_job_run(api_h2_job *j)
{
    h2_mbox *mb = j->mb;
    h2_req *r = j->req;
    dra_apiserver_req q;
    handler_req(r, j->user, &q);
    j->oom = dra_apiserver_handle(j->srv, &q, &j->resp) != DRA_OK;
    pthread_mutex_lock(&mb->lock);
    if (mb->closed) {
        pthread_mutex_unlock(&mb->lock);
        job_free(j);
        mbox_unref(mb);
        return;
    }
    if (mb->done_tail)
        mb->done_tail->next = j;
    else
        mb->done = j;
    mb->done_tail = j;
    mbox_wake(mb);
    pthread_mutex_unlock(&mb->lock);
    /* The job's reference passes to the queue, dropped when taken. */
}

static void stream_notify(void *arg)
{
    h2s *s = arg;
    h2_mbox *mb = s->c->mb;
    pthread_mutex_lock(&mb->lock);
    if (!s->queued && !mb->closed) {
        if (!dra_buf_append(&mb->ready, &s->id, sizeof s->id))
            s->queued = 1;
        mbox_wake(mb);
    }
    pthread_mutex_unlock(&mb->lock);
}

/* ---- streams ------------------------------------------------------------------------ */

static void stream_free(api_h2c *c, h2s *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else if (c->streams == s)
        c->streams = s->next;
    if (s->next)
        s->next->prev = s->prev;
    if (s->st) {
        dra_stream_set_notify(s->st, NULL, NULL);
        dra_stream_close(s->st);
    }
    /* A job still out finds no stream under its id and is dropped. */
    if (s->req)
        c->body_bytes -= s->req->body.len;
    req_free(c->mem, s->req);
    dra_buf_fini(&s->out);
    dra_free(c->mem, s);
}

static h2s *stream_get(api_h2c *c, int32_t id)
{
    return nghttp2_session_get_stream_user_data(c->session, id);
}

static void nv_set(nghttp2_nv *nv, const char *name, const char *value)
{
    nv->name = (uint8_t *)name;
    nv->namelen = strlen(name);
    nv->value = (uint8_t *)value;
    nv->valuelen = strlen(value);
    nv->flags = NGHTTP2_NV_FLAG_NONE;
}

/* Copies what is buffered, reading the dra_stream only when the buffer
 * is empty and nghttp2 asks: a slow reader costs no more than one
 * read's worth of bytes. */
static ssize_t read_body(nghttp2_session *session, int32_t id, uint8_t *buf,
                         size_t length, uint32_t *flags, nghttp2_data_source *src,
                         void *ud)
{
    h2s *s = src->ptr;
    size_t n;
    (void)session, (void)id, (void)ud, (void)buf; /* NO_COPY: send_data writes */
    if (s->off == s->out.len) {
        dra_buf_reset(&s->out);
        s->off = 0;
        if (s->st && !s->eof) {
            if (s->forced_end) {
                s->eof = 1;
            } else if (s->readable) {
                /* Without a notify since the last read there is nothing:
                 * no second read of 1,000 streams after each commit. */
                s->readable = 0;
                if (dra_stream_read(s->st, &s->out, &s->eof))
                    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
            }
        }
    }
    n = s->out.len - s->off;
    if (n > length)
        n = length;
    /* send_data copies the bytes straight to the connection's output
     * (and moves s->off), not through nghttp2's frame buffer. */
    if (n)
        *flags |= NGHTTP2_DATA_FLAG_NO_COPY;
    if (s->off + n == s->out.len && (!s->st || s->eof))
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    else if (!n)
        return NGHTTP2_ERR_DEFERRED;
    return (ssize_t)n;
}

/* A DATA frame whose read said NO_COPY: its header, then its bytes from
 * the stream's buffer. drad never pads frames. */
static int send_data(nghttp2_session *session, nghttp2_frame *frame,
                     const uint8_t *framehd, size_t length, nghttp2_data_source *src,
                     void *ud)
{
    api_h2c *c = ud;
    h2s *s = src->ptr;
    (void)session, (void)frame;
    if (!c->sink || dra_buf_append(c->sink, framehd, 9) ||
        dra_buf_append(c->sink, s->out.p + s->off, length))
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    s->off += length;
    return 0;
}

/* Submits |r| as the answer of |s|, taking its body and stream. */
static void answer(api_h2c *c, h2s *s, dra_apiserver_resp *r, int head)
{
    nghttp2_nv nv[5];
    size_t n = 0;
    char code[8], clen[24];
    nghttp2_data_provider dp;
    snprintf(code, sizeof code, "%d", r->code);
    nv_set(&nv[n++], ":status", code);
    nv_set(&nv[n++], "content-type", r->content_type);
    s->answered = 1;
    dra_buf_fini(&s->out);
    s->out = r->body;
    dra_buf_init(&r->body, c->mem);
    s->off = 0;
    if (r->stream) {
        /* As http.c: a stream's answer carries only these two. */
        s->st = r->stream;
        r->stream = NULL;
        s->readable = 1;
        nv_set(&nv[n++], "cache-control", "no-cache, private");
        dra_stream_set_notify(s->st, stream_notify, s);
    } else {
        if (r->warning[0])
            nv_set(&nv[n++], "warning", r->warning);
        if (r->cache_control[0])
            nv_set(&nv[n++], "cache-control", r->cache_control);
        snprintf(clen, sizeof clen, "%zu", s->out.len);
        nv_set(&nv[n++], "content-length", clen);
    }
    dp.source.ptr = s;
    dp.read_callback = read_body;
    if (nghttp2_submit_response(c->session, s->id, nv, n, head ? NULL : &dp))
        nghttp2_submit_rst_stream(c->session, NGHTTP2_FLAG_NONE, s->id,
                                  NGHTTP2_INTERNAL_ERROR);
}

static void answer_status(api_h2c *c, h2s *s, unsigned code, const char *reason,
                          const char *msg)
{
    dra_apiserver_resp r;
    char body[512];
    size_t n = api_front_status(body, sizeof body, code, reason, msg);
    dra_apiserver_resp_init(&r, c->mem);
    r.code = (int)code;
    snprintf(r.content_type, sizeof r.content_type, "application/json");
    if (dra_buf_append(&r.body, body, n))
        nghttp2_submit_rst_stream(c->session, NGHTTP2_FLAG_NONE, s->id,
                                  NGHTTP2_INTERNAL_ERROR);
    else
        answer(c, s, &r, 0);
    dra_apiserver_resp_fini(&r);
}

static void answer_too_large(api_h2c *c, h2s *s)
{
    char msg[96];
    api_front_too_large_msg(msg, sizeof msg, c->cfg.srv->opts.max_body);
    answer_status(c, s, 413, "RequestEntityTooLarge", msg);
}

/* ---- requests ----------------------------------------------------------------------- */

/* The header block ended: what http.c decides before reading a body. */
static void headers_done(api_h2c *c, h2s *s)
{
    h2_req *r = s->req;
    if (s->hdr_too_big) {
        answer_status(c, s, 431, "RequestHeaderFieldsTooLarge",
                      "Request header fields too large");
        return;
    }
    if (!r->method || !r->path) {
        nghttp2_submit_rst_stream(c->session, NGHTTP2_FLAG_NONE, s->id,
                                  NGHTTP2_PROTOCOL_ERROR);
        s->answered = 1;
        return;
    }
    if (!api_front_user(c->cfg.creds, r->auth, c->cfg.cert_ok)) {
        answer_status(c, s, 401, "Unauthorized", "Unauthorized");
        return;
    }
    if (s->have_cl && s->content_length > c->cfg.srv->opts.max_body)
        answer_too_large(c, s);
}

/* Splits :path into the decoded path and the re-encoded query, as
 * libmicrohttpd hands them to http.c. */
static dra_err split_path(h2_req *r)
{
    char *p = dra_arena_strdup(&r->a, r->path), *qm;
    if (!p)
        return DRA_ENOMEM;
    qm = strchr(p, '?');
    if (qm) {
        *qm++ = '\0';
        if (api_front_query(&r->qbuf, qm))
            return DRA_ENOMEM;
    }
    api_front_unescape(p);
    r->path = p;
    r->query = r->qbuf.len ? r->qbuf.p : NULL;
    return DRA_OK;
}

static void answer_inline(api_h2c *c, h2s *s, const char *user)
{
    h2_req *r = s->req;
    dra_apiserver_req q;
    dra_apiserver_resp resp;
    handler_req(r, user, &q);
    dra_apiserver_resp_init(&resp, c->mem);
    if (dra_apiserver_handle(c->cfg.srv, &q, &resp))
        answer_status(c, s, 500, "InternalError", "out of memory");
    else
        answer(c, s, &resp, !strcmp(r->method, "HEAD"));
    dra_apiserver_resp_fini(&resp);
}

static void dispatch(api_h2c *c, h2s *s, const char *user)
{
    api_h2_job *j = dra_calloc(c->mem, 1, sizeof *j);
    if (!j) {
        answer_status(c, s, 500, "InternalError", "out of memory");
        return;
    }
    j->mb = c->mb;
    j->srv = c->cfg.srv;
    j->id = s->id;
    j->req = s->req;
    j->user = user;
    dra_apiserver_resp_init(&j->resp, c->mem);
    c->body_bytes -= s->req->body.len;
    s->req = NULL;
    s->job = j;
    c->njobs++;
    pthread_mutex_lock(&c->mb->lock);
    c->mb->refs++;
    pthread_mutex_unlock(&c->mb->lock);
    c->cfg.dispatch(c->cfg.ud, j);
}

/* The request is complete (END_STREAM). */
static void request_done(api_h2c *c, h2s *s)
{
    const char *user;
    s->req_done = 1;
    if (s->answered)
        return;
    if (s->too_large) {
        answer_too_large(c, s);
        return;
    }
    user = api_front_user(c->cfg.creds, s->req->auth, c->cfg.cert_ok);
    if (split_path(s->req)) {
        answer_status(c, s, 500, "InternalError", "out of memory");
        return;
    }
    s->answered = 1;
    if (api_front_is_write(s->req->method) && c->cfg.dispatch)
        dispatch(c, s, user);
    else
        answer_inline(c, s, user);
}

/* ---- nghttp2 callbacks ------------------------------------------------------------------ */

static int on_begin_headers(nghttp2_session *session, const nghttp2_frame *frame,
                            void *ud)
{
    api_h2c *c = ud;
    h2s *s;
    if (frame->hd.type != NGHTTP2_HEADERS ||
        frame->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    s = dra_calloc(c->mem, 1, sizeof *s);
    if (s && !(s->req = dra_calloc(c->mem, 1, sizeof *s->req))) {
        dra_free(c->mem, s);
        s = NULL;
    }
    if (!s)
        return nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE,
                                         frame->hd.stream_id, NGHTTP2_INTERNAL_ERROR)
                   ? NGHTTP2_ERR_CALLBACK_FAILURE
                   : 0;
    s->c = c;
    s->id = frame->hd.stream_id;
    dra_arena_init(&s->req->a, c->mem);
    dra_buf_init(&s->req->qbuf, c->mem);
    dra_buf_init(&s->req->body, c->mem);
    dra_buf_init(&s->out, c->mem);
    s->next = c->streams;
    if (s->next)
        s->next->prev = s;
    c->streams = s;
    nghttp2_session_set_stream_user_data(session, s->id, s);
    return 0;
}

static const char **header_slot(h2_req *r, const uint8_t *name, size_t len)
{
#define H2_IS(lit) (len == sizeof(lit) - 1 && !memcmp(name, lit, len))
    if (H2_IS(":method"))
        return &r->method;
    if (H2_IS(":path"))
        return &r->path;
    if (H2_IS("accept"))
        return &r->accept;
    if (H2_IS("content-type"))
        return &r->ctype;
    if (H2_IS("authorization"))
        return &r->auth;
#undef H2_IS
    return NULL;
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame,
                     const uint8_t *name, size_t namelen, const uint8_t *value,
                     size_t valuelen, uint8_t flags, void *ud)
{
    h2s *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
    const char **slot;
    (void)flags, (void)ud;
    if (!s || !s->req || frame->headers.cat != NGHTTP2_HCAT_REQUEST || s->hdr_too_big)
        return 0;
    s->hdr_bytes += namelen + valuelen + 32;
    if (s->hdr_bytes > H2_MAX_HEADERS) {
        s->hdr_too_big = 1;
        return 0;
    }
    if (namelen == 14 && !memcmp(name, "content-length", 14)) {
        s->have_cl = 1;
        s->content_length = 0;
        for (size_t i = 0; i < valuelen && s->content_length <= SIZE_MAX / 20; i++)
            s->content_length = s->content_length * 10 + (size_t)(value[i] - '0');
        return 0;
    }
    slot = header_slot(s->req, name, namelen);
    /* The first of repeated fields counts, as a header lookup in http.c. */
    if (slot && !*slot &&
        !(*slot = dra_arena_strndup(&s->req->a, (const char *)value, valuelen)))
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    return 0;
}

static int on_data_chunk(nghttp2_session *session, uint8_t flags, int32_t id,
                         const uint8_t *data, size_t len, void *ud)
{
    api_h2c *c = ud;
    h2s *s = nghttp2_session_get_stream_user_data(session, id);
    (void)flags;
    if (!s || !s->req || s->answered || s->too_large)
        return 0;
    if (s->req->body.len + len > c->cfg.srv->opts.max_body) {
        /* Answered now: the rest of the body is never buffered, and the
         * stream is reset once the answer is out. */
        s->too_large = 1;
        c->body_bytes -= s->req->body.len;
        dra_buf_fini(&s->req->body);
        answer_too_large(c, s);
        return 0;
    }
    if (c->body_bytes + len > H2_MAX_CONN_BODY) {
        s->answered = 1;
        return nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, id,
                                         NGHTTP2_REFUSED_STREAM);
    }
    if (dra_buf_append(&s->req->body, data, len))
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    c->body_bytes += len;
    return 0;
}

static int on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame,
                         void *ud)
{
    api_h2c *c = ud;
    h2s *s;
    if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA)
        return 0;
    s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
    if (!s)
        return 0;
    if (frame->hd.type == NGHTTP2_HEADERS &&
        frame->headers.cat == NGHTTP2_HCAT_REQUEST && !s->answered)
        headers_done(c, s);
    if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) && !s->req_done)
        request_done(c, s);
    return 0;
}

/* An answer sent in full before the request ended (401, 413): the
 * client is asked to stop sending (RFC 9113 8.1). */
static int on_frame_send(nghttp2_session *session, const nghttp2_frame *frame,
                         void *ud)
{
    h2s *s;
    (void)ud;
    if ((frame->hd.type != NGHTTP2_DATA && frame->hd.type != NGHTTP2_HEADERS) ||
        !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
        return 0;
    s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
    if (s && !s->req_done)
        nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_NO_ERROR);
    return 0;
}

static int on_stream_close(nghttp2_session *session, int32_t id, uint32_t code,
                           void *ud)
{
    api_h2c *c = ud;
    h2s *s = nghttp2_session_get_stream_user_data(session, id);
    (void)code;
    if (s)
        stream_free(c, s);
    return 0;
}

/* ---- the connection ---------------------------------------------------------------------- */

static dra_err session_new(api_h2c *c)
{
    nghttp2_session_callbacks *cb;
    nghttp2_option *opt;
    nghttp2_settings_entry iv[] = {
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, H2_MAX_STREAMS},
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, H2_MAX_HEADERS},
    };
    int rv;
    if (nghttp2_session_callbacks_new(&cb))
        return DRA_ENOMEM;
    if (nghttp2_option_new(&opt)) {
        nghttp2_session_callbacks_del(cb);
        return DRA_ENOMEM;
    }
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
    nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
    nghttp2_session_callbacks_set_send_data_callback(cb, send_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
    /* Flow-control windows are replenished as bytes are taken: bodies
     * are bounded by max_body and H2_MAX_CONN_BODY instead. */
    nghttp2_option_set_no_http_messaging(opt, 0);
    rv = nghttp2_session_server_new3(&c->session, cb, c, opt, &c->nmem);
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cb);
    if (rv)
        return DRA_ENOMEM;
    rv = nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, iv,
                                 sizeof iv / sizeof iv[0]);
    return rv ? DRA_ENOMEM : DRA_OK;
}

dra_err api_h2c_new(const api_h2c_cfg *cfg, api_h2c **out)
{
    const dra_mem *mem = cfg->srv->mem;
    api_h2c *c = dra_calloc(mem, 1, sizeof *c);
    *out = NULL;
    if (!c)
        return DRA_ENOMEM;
    c->cfg = *cfg;
    c->mem = mem;
    c->nmem = (nghttp2_mem){(void *)mem, dra_mem_hook_malloc, dra_mem_hook_free,
        dra_mem_hook_calloc, dra_mem_hook_realloc};
    c->mb = dra_calloc(mem, 1, sizeof *c->mb);
    if (!c->mb) {
        dra_free(mem, c);
        return DRA_ENOMEM;
    }
    pthread_mutex_init(&c->mb->lock, NULL);
    c->mb->refs = 1;
    c->mb->mem = mem;
    c->mb->wake = cfg->wake;
    c->mb->ud = cfg->ud;
    dra_buf_init(&c->mb->ready, mem);
    if (session_new(c)) {
        api_h2c_free(c);
        return DRA_ENOMEM;
    }
    *out = c;
    return DRA_OK;
}

void api_h2c_free(api_h2c *c)
{
    if (!c)
        return;
    /* nghttp2_session_del frees its streams without the close callback. */
    while (c->streams)
        stream_free(c, c->streams);
    nghttp2_session_del(c->session);
    mbox_close(c->mb);
    dra_free(c->mem, c);
}

dra_err api_h2c_recv(api_h2c *c, const uint8_t *p, size_t len)
{
    ssize_t n = nghttp2_session_mem_recv(c->session, p, len);
    if (n == NGHTTP2_ERR_NOMEM)
        return DRA_ENOMEM;
    return n < 0 ? DRA_EPARSE : DRA_OK;
}

dra_err api_h2c_send(api_h2c *c, dra_buf *out, size_t max)
{
    dra_err e = DRA_OK;
    c->sink = out;
    while (out->len < max) {
        const uint8_t *data;
        ssize_t n = nghttp2_session_mem_send(c->session, &data);
        if (n < 0) {
            e = n == NGHTTP2_ERR_NOMEM || out->oom ? DRA_ENOMEM : DRA_EPARSE;
            break;
        }
        if (n == 0)
            break;
        if (dra_buf_append(out, data, (size_t)n)) {
            e = DRA_ENOMEM;
            break;
        }
    }
    c->sink = NULL;
    return e;
}

/* A job's answer, on the connection's thread. */
static void job_done(api_h2c *c, api_h2_job *j)
{
    h2s *s = stream_get(c, j->id);
    c->njobs--;
    if (s && s->job == j) {
        s->job = NULL;
        if (j->oom)
            answer_status(c, s, 500, "InternalError", "out of memory");
        else
            answer(c, s, &j->resp, 0);
    }
    job_free(j);
    mbox_unref(c->mb);
}

void api_h2c_poll(api_h2c *c)
{
    h2_mbox *mb = c->mb;
    api_h2_job *done;
    dra_buf ready;
    size_t n;
    pthread_mutex_lock(&mb->lock);
    mb->woken = 0;
    done = mb->done;
    mb->done = mb->done_tail = NULL;
    ready = mb->ready;
    dra_buf_init(&mb->ready, c->mem);
    n = ready.len / sizeof(int32_t);
    /* Cleared before the reads they cause, so a later notify queues
     * the stream again. */
    for (size_t i = 0; i < n; i++) {
        int32_t id;
        h2s *s;
        memcpy(&id, ready.p + i * sizeof id, sizeof id);
        if ((s = stream_get(c, id))) {
            s->queued = 0;
            s->readable = 1;
        }
    }
    pthread_mutex_unlock(&mb->lock);
    while (done) {
        api_h2_job *next = done->next;
        job_done(c, done);
        done = next;
    }
    for (size_t i = 0; i < n; i++) {
        int32_t id;
        memcpy(&id, ready.p + i * sizeof id, sizeof id);
        if (stream_get(c, id))
            nghttp2_session_resume_data(c->session, id);
    }
    dra_buf_fini(&ready);
}

void api_h2c_shutdown(api_h2c *c)
{
    if (c->shutting)
        return;
    c->shutting = 1;
    nghttp2_submit_goaway(c->session, NGHTTP2_FLAG_NONE,
                          nghttp2_session_get_last_proc_stream_id(c->session),
                          NGHTTP2_NO_ERROR, NULL, 0);
    for (h2s *s = c->streams; s; s = s->next) {
        if (s->st) {
            s->forced_end = 1;
            nghttp2_session_resume_data(c->session, s->id);
        }
    }
}

void api_h2c_terminate(api_h2c *c)
{
    nghttp2_session_terminate_session(c->session, NGHTTP2_NO_ERROR);
}

int api_h2c_alive(const api_h2c *c)
{
    return c->njobs > 0 || nghttp2_session_want_read(c->session) ||
           nghttp2_session_want_write(c->session);
}

int api_h2c_idle(const api_h2c *c)
{
    return !c->streams && !c->njobs;
}
