/*
 * incluster.c: the in-process cluster transport (cluster.h). Controllers
 * running inside drad get a dra_cluster whose requests call the request
 * handler directly, with no socket, TLS or authentication (a create's
 * or an update's object goes, and comes back, as the document itself,
 * not as JSON text),
 * and whose watches read the handler's watch streams, waiting on a
 * condition variable that the stream's notify signals.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "apiserver_int.h"

typedef struct incl {
    dra_apiserver *srv;
} incl;

struct dra_watch_stream {
    dra_apiserver *srv;
    dra_stream *s;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int notified, canceled, eof;
    dra_buf pending; /* bytes read, not yet handed out as lines */
};

/* The fields every request shares: the handler is asked as drad's own
 * controllers, for JSON. */
static void req_init(dra_apiserver_req *q, const char *method, const char *path,
                     const char *query)
{
    memset(q, 0, sizeof *q);
    q->method = method;
    q->path = path;
    q->query = query;
    q->accept = "application/json";
    q->user = "system:drad";
}

/* A handler that could not answer at all, as the transport's Status. */
static void status_from_err(dra_kstatus *st, dra_err e)
{
    if (st) {
        st->code = 0;
        snprintf(st->message, sizeof st->message, "%s", dra_strerror(e));
    }
}

static dra_err tr_request(void *ud, const dra_cluster_req *req, int *code,
                          dra_buf *body, dra_kstatus *st)
{
    incl *c = ud;
    dra_apiserver_req q;
    dra_apiserver_resp r;
    dra_err e;
    req_init(&q, req->method, req->path, req->query);
    q.content_type = req->body ? (req->content_type ? req->content_type
                                                    : "application/json")
                               : NULL;
    q.body = req->body;
    q.body_len = req->body_len;
    dra_apiserver_resp_init(&r, c->srv->mem);
    e = dra_apiserver_handle(c->srv, &q, &r);
    if (e) {
        status_from_err(st, e);
        dra_apiserver_resp_fini(&r);
        return e;
    }
    *code = r.code;
    e = dra_buf_append(body, r.body.p ? r.body.p : "", r.body.len);
    /* A streamed answer (pods/log with follow) is cut at what was ready. */
    dra_apiserver_resp_fini(&r);
    return e;
}

/* A body as the document itself (dra_cluster_doc_request): the handler
 * takes a copy, or DRA_EUNSUPPORTED when it cannot (nothing answered);
 * the object written comes back as a document in |a| when it can. */
static dra_err tr_request_doc(void *ud, const dra_cluster_req *req, const dra_doc *body,
                              dra_arena *a, int *code, dra_buf *out, dra_doc **doc,
                              dra_kstatus *st)
{
    incl *c = ud;
    dra_apiserver_req q;
    dra_apiserver_resp r;
    dra_err e;
    req_init(&q, req->method, req->path, req->query);
    q.content_type = req->content_type;
    q.body_doc = body;
    q.reply_arena = a;
    dra_apiserver_resp_init(&r, c->srv->mem);
    e = dra_apiserver_handle(c->srv, &q, &r);
    *doc = NULL;
    if (e == DRA_OK) {
        *code = r.code;
        *doc = r.doc;
        e = dra_buf_append(out, r.body.p ? r.body.p : "", r.body.len);
    } else if (e != DRA_EUNSUPPORTED) {
        status_from_err(st, e);
    }
    dra_apiserver_resp_fini(&r);
    return e;
}

static void on_notify(void *arg)
{
    dra_watch_stream *w = arg;
    pthread_mutex_lock(&w->lock);
    w->notified = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->lock);
}

static dra_err tr_watch_open(void *ud, const char *path, const char *query,
                             dra_watch_stream **out, dra_kstatus *st)
{
    incl *c = ud;
    dra_apiserver_req q;
    dra_apiserver_resp r;
    dra_watch_stream *w;
    dra_err e;
    *out = NULL;
    req_init(&q, "GET", path, query);
    dra_apiserver_resp_init(&r, c->srv->mem);
    e = dra_apiserver_handle(c->srv, &q, &r);
    if (e) {
        dra_apiserver_resp_fini(&r);
        return e;
    }
    if (r.code != 200 || !r.stream) {
        e = dra_cluster_status_decode(r.code == 200 ? 500 : r.code, "GET", r.body.p,
                                      r.body.len, c->srv->mem, st);
        dra_apiserver_resp_fini(&r);
        return e ? e : DRA_EIO;
    }
    w = dra_calloc(c->srv->mem, 1, sizeof *w);
    if (!w) {
        dra_apiserver_resp_fini(&r);
        return DRA_ENOMEM;
    }
    w->srv = c->srv;
    w->s = r.stream;
    r.stream = NULL;
    dra_apiserver_resp_fini(&r);
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cv, NULL);
    dra_buf_init(&w->pending, c->srv->mem);
    dra_stream_set_notify(w->s, on_notify, w);
    *out = w;
    return DRA_OK;
}

/* Moves the first complete line of |w->pending| into |line|. */
static int take_line(dra_watch_stream *w, dra_buf *line)
{
    char *nl = w->pending.p ? memchr(w->pending.p, '\n', w->pending.len) : NULL;
    size_t n;
    if (!nl)
        return 0;
    n = (size_t)(nl - w->pending.p);
    if (dra_buf_append(line, w->pending.p, n))
        return -1;
    memmove(w->pending.p, nl + 1, w->pending.len - n - 1);
    w->pending.len -= n + 1;
    w->pending.p[w->pending.len] = '\0';
    return 1;
}

static void deadline_in(struct timespec *ts, int ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    dra_timespec_add_ms(ts, ms);
}

static dra_err tr_watch_next(void *ud, dra_watch_stream *w, int timeout_ms,
                             dra_buf *line)
{
    struct timespec until;
    (void)ud;
    if (timeout_ms >= 0)
        deadline_in(&until, timeout_ms);
    for (;;) {
        size_t before;
        int got = take_line(w, line), timed_out = 0, notified;
        if (got < 0)
            return DRA_ENOMEM;
        if (got)
            return DRA_OK;
        if (w->eof)
            return DRA_EIO;
        pthread_mutex_lock(&w->lock);
        w->notified = 0;
        if (w->canceled) {
            pthread_mutex_unlock(&w->lock);
            return DRA_ECANCELED;
        }
        pthread_mutex_unlock(&w->lock);
        before = w->pending.len;
        if (dra_stream_read(w->s, &w->pending, &w->eof))
            return DRA_ENOMEM;
        if (w->pending.len != before || w->eof)
            continue;
        pthread_mutex_lock(&w->lock);
        while (!w->notified && !w->canceled && !timed_out) {
            if (timeout_ms < 0)
                pthread_cond_wait(&w->cv, &w->lock);
            else
                timed_out = pthread_cond_timedwait(&w->cv, &w->lock, &until) ==
                            ETIMEDOUT;
        }
        notified = w->notified; /* read under the lock the store's thread sets it under */
        pthread_mutex_unlock(&w->lock);
        if (timed_out && !notified)
            return DRA_ETIMEOUT;
    }
}

static void tr_watch_cancel(void *ud, dra_watch_stream *w)
{
    (void)ud;
    pthread_mutex_lock(&w->lock);
    w->canceled = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->lock);
}

static void tr_watch_close(void *ud, dra_watch_stream *w)
{
    (void)ud;
    if (!w)
        return;
    dra_stream_set_notify(w->s, NULL, NULL);
    dra_stream_close(w->s);
    dra_buf_fini(&w->pending);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->cv);
    dra_free(w->srv->mem, w);
}

static void tr_close(void *ud)
{
    incl *c = ud;
    dra_free(c->srv->mem, c);
}

static const dra_cluster_ops ops = {tr_request, tr_watch_open, tr_watch_next,
                                    tr_watch_cancel, tr_watch_close, tr_close};

dra_cluster *dra_apiserver_cluster(dra_apiserver *srv)
{
    incl *c = dra_calloc(srv->mem, 1, sizeof *c);
    dra_cluster *cl;
    if (!c)
        return NULL;
    c->srv = srv;
    cl = dra_cluster_new(&ops, c, srv->mem);
    if (!cl)
        dra_free(srv->mem, c);
    dra_cluster_set_doc_request(cl, tr_request_doc);
    return cl;
}
