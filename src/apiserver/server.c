/*
 * server.c: the server's life: creation over a store (with Kubernetes'
 * standard namespaces), the background thread that runs the garbage
 * collector's and namespace controller's rounds (gc.c) and ticks watch
 * streams for bookmarks and timeouts, the log-source hook, and the small
 * public helpers for responses and streams.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "apiserver_int.h"

void dra_apiserver_resp_init(dra_apiserver_resp *r, const dra_mem *mem)
{
    memset(r, 0, sizeof *r);
    dra_buf_init(&r->body, mem);
}

void dra_apiserver_resp_fini(dra_apiserver_resp *r)
{
    if (!r)
        return;
    dra_buf_fini(&r->body);
    dra_stream_close(r->stream);
    r->stream = NULL;
}

dra_err dra_stream_read(dra_stream *s, dra_buf *out, int *eof)
{
    return s->ops->read(s->ud, out, eof);
}

void dra_stream_set_notify(dra_stream *s, void (*notify)(void *arg), void *arg)
{
    s->ops->set_notify(s->ud, notify, arg);
}

void dra_stream_close(dra_stream *s)
{
    if (s)
        s->ops->close(s->ud);
}

void dra_apiserver_set_log_source(dra_apiserver *srv, dra_log_source_fn fn,
                                  void *ud)
{
    pthread_mutex_lock(&srv->lock);
    srv->log_fn = fn;
    srv->log_ud = ud;
    pthread_mutex_unlock(&srv->lock);
}

/* ---- the background thread ------------------------------------------------------- */

static void deadline_in(struct timespec *ts, int ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

/* The collector's rounds follow the store's commits (its watches kick
 * the thread), but at most one every GC_ROUND_MS, so that a burst of
 * commits is one round. */
#define GC_ROUND_MS 20
#define TICK_MS 200

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *bg_main(void *arg)
{
    dra_apiserver *srv = arg;
    int64_t now = mono_ms(), last_round = now, last_period = now;
    int64_t next_tick = now + TICK_MS;
    /* The first round indexes what is stored. */
    api_gc_round(srv->gc, 0);
    pthread_mutex_lock(&srv->bglock);
    while (!srv->bg_stop) {
        struct timespec ts;
        int64_t due;
        int round = 0, period = 0;
        now = mono_ms();
        /* Ticks every 200 ms: watch timeouts and bookmarks need about a
         * second's precision. */
        if (srv->bg_kick && now - last_round >= GC_ROUND_MS)
            round = 1;
        if (now - last_period >= srv->opts.gc_period_ms)
            round = period = 1;
        if (!round && now < next_tick) {
            due = srv->bg_kick ? last_round + GC_ROUND_MS : next_tick;
            if (due > next_tick)
                due = next_tick;
            deadline_in(&ts, (int)(due - now));
            pthread_cond_timedwait(&srv->bgcv, &srv->bglock, &ts);
            continue;
        }
        if (round)
            srv->bg_kick = 0;
        pthread_mutex_unlock(&srv->bglock);
        if (now >= next_tick) {
            api_watch_tick(srv);
            next_tick = now + TICK_MS;
        }
        if (round) {
            api_gc_round(srv->gc, period);
            last_round = mono_ms();
            if (period)
                last_period = last_round;
        }
        pthread_mutex_lock(&srv->bglock);
    }
    pthread_mutex_unlock(&srv->bglock);
    return NULL;
}

/* ---- creation ---------------------------------------------------------------------- */

static dra_err ensure_namespace(dra_apiserver *srv, const char *name, dra_diag *d)
{
    char body[160];
    dra_apiserver_req q;
    dra_apiserver_resp r;
    dra_err e;
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":"
             "{\"name\":\"%s\",\"labels\":{\"kubernetes.io/metadata.name\":\"%s\"}}}",
             name, name);
    memset(&q, 0, sizeof q);
    q.method = "POST";
    q.path = "/api/v1/namespaces";
    q.content_type = "application/json";
    q.body = body;
    q.body_len = strlen(body);
    dra_apiserver_resp_init(&r, srv->mem);
    e = dra_apiserver_handle(srv, &q, &r);
    if (!e && r.code != 201 && r.code != 409) {
        dra_diag_add(d, "", 0, 0, "cannot create namespace %s: %s", name,
                     r.body.p ? r.body.p : "");
        e = DRA_EIO;
    }
    dra_apiserver_resp_fini(&r);
    return e;
}

dra_err dra_apiserver_new(const dra_apiserver_opts *opts, const dra_mem *mem,
                          dra_apiserver **out, dra_diag *d)
{
    static const char *const std_ns[] = {"default", "kube-system", "kube-public",
                                         "kube-node-lease"};
    dra_apiserver *srv;
    dra_err e = DRA_OK;
    *out = NULL;
    if (!opts || !opts->store)
        return DRA_EINVAL;
    srv = dra_calloc(mem, 1, sizeof *srv);
    if (!srv)
        return DRA_ENOMEM;
    srv->mem = mem;
    srv->store = opts->store;
    srv->opts = *opts;
    if (!srv->opts.max_body)
        srv->opts.max_body = 3u << 20;
    if (srv->opts.gc_period_ms <= 0)
        srv->opts.gc_period_ms = 30000;
    if (srv->opts.bookmark_ms <= 0)
        srv->opts.bookmark_ms = 60000;
    pthread_mutex_init(&srv->lock, NULL);
    pthread_mutex_init(&srv->bglock, NULL);
    pthread_cond_init(&srv->bgcv, NULL);
    for (size_t i = 0; i < sizeof std_ns / sizeof std_ns[0] && !e; i++)
        e = ensure_namespace(srv, std_ns[i], d);
    if (!e)
        e = api_gc_new(srv, &srv->gc);
    if (!e && pthread_create(&srv->bg, NULL, bg_main, srv)) {
        dra_diag_add(d, "", 0, 0, "cannot start the API server's background thread");
        e = DRA_EIO;
    }
    if (e) {
        api_gc_free(srv->gc);
        pthread_mutex_destroy(&srv->lock);
        pthread_mutex_destroy(&srv->bglock);
        pthread_cond_destroy(&srv->bgcv);
        dra_free(mem, srv);
        return e;
    }
    srv->bg_started = 1;
    *out = srv;
    return DRA_OK;
}

void dra_apiserver_free(dra_apiserver *srv)
{
    if (!srv)
        return;
    if (srv->bg_started) {
        pthread_mutex_lock(&srv->bglock);
        srv->bg_stop = 1;
        pthread_cond_signal(&srv->bgcv);
        pthread_mutex_unlock(&srv->bglock);
        pthread_join(srv->bg, NULL);
    }
    api_gc_free(srv->gc);
    for (size_t i = 0; i < srv->nfilter_keys; i++)
        dra_free(srv->mem, srv->filter_keys[i].k);
    dra_free(srv->mem, srv->filter_keys);
    pthread_mutex_destroy(&srv->lock);
    pthread_mutex_destroy(&srv->bglock);
    pthread_cond_destroy(&srv->bgcv);
    dra_free(srv->mem, srv);
}
