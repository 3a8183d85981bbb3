/*
 * watch.c: watch streams. A watch is a dra_stream over a store watch:
 * synthetic ADDED events for the current objects first (resourceVersion
 * "" or "0", or sendInitialEvents), then every change after the start
 * version, filtered by namespace, labels and fields (an object that stops
 * matching leaves as DELETED, one that starts matching comes as ADDED),
 * bookmarks when asked for, an ERROR event with 410 when the history no
 * longer reaches back, and the end at timeoutSeconds. Readers poll the
 * stream and are woken by the store's writer and the server's ticker.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apiserver_int.h"
#include "convert.h"
#include "selector.h"
#include "table.h"

#define EVENTS_PER_READ 128
/* A read stops after this many bytes and notifies its reader that more
 * is ready, so one busy watch cannot make its reader buffer without
 * bound. */
#define BYTES_PER_READ (256u << 10)

struct api_stream {
    dra_stream pub;
    dra_apiserver *srv;
    api_stream *next, *prev; /* srv->streams, under srv->lock */
    pthread_mutex_t lock;    /* notify */
    void (*notify)(void *arg);
    void *notify_arg;

    const api_resource *res;
    char skey[96];
    char kind[64], gv[64];
    dra_arena a; /* filters */
    api_filter f;
    dra_arena scratch;
    int bookmarks;
    int table, headers_sent; /* events as one-row Tables */
    char conv[16];           /* the client's version, or "" */
    api_table_opts topts;
    int end_bookmark; /* sendInitialEvents: mark the end of the initial list */
    int64_t deadline_ms;
    /* Moved by the stream's reader, read by api_watch_tick's thread. */
    _Atomic int64_t next_bookmark_ms;

    dra_store_page initial;
    size_t pos;
    int initial_pending;
    dra_store_watch *w;
    uint64_t start_rv;
    int error_code; /* an ERROR event to send, then the end */
    char error_msg[160];
    int ended;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void wake(api_stream *s)
{
    pthread_mutex_lock(&s->lock);
    if (s->notify)
        s->notify(s->notify_arg);
    pthread_mutex_unlock(&s->lock);
}

static void on_store(void *ud)
{
    wake(ud);
}

/* ---- encoding ------------------------------------------------------------------ */

static void put_event(api_stream *s, dra_buf *out, const char *type,
                      const dra_store_obj *o)
{
    dra_buf_puts(out, "{\"type\":\"");
    dra_buf_puts(out, type);
    dra_buf_puts(out, "\",\"object\":");
    if (s->conv[0] && !s->table) {
        dra_doc *d, *c;
        dra_kstatus st;
        if (api_doc_parse(&s->scratch, o->json, o->len, &d) ||
            api_conv_convert(&s->scratch, d, s->conv, &c, &st) ||
            dra_doc_to_json(c, 0, out))
            dra_buf_append(out, o->json, o->len);
        dra_arena_reset(&s->scratch);
    } else if (!s->table) {
        dra_buf_append(out, o->json, o->len);
    } else {
        /* kube-apiserver sends the column definitions with the first
         * event only. */
        if (api_table_event(&s->scratch, s->res, &s->topts, !s->headers_sent, o, out))
            out->oom = 1;
        s->headers_sent = 1;
        dra_arena_reset(&s->scratch);
    }
    dra_buf_puts(out, "}\n");
}

static void put_bookmark(api_stream *s, dra_buf *out, uint64_t rv, int end)
{
    dra_buf_printf(out,
                   "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"%s\","
                   "\"apiVersion\":\"%s\",\"metadata\":{\"resourceVersion\":"
                   "\"%llu\",\"creationTimestamp\":null%s}}}\n",
                   s->kind, s->gv, (unsigned long long)rv,
                   end ? ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}"
                       : "");
}

static void put_error(api_stream *s, dra_buf *out)
{
    const char *reason = s->error_code == 410 ? "Expired"
                         : s->error_code == 504 ? "Timeout"
                                                : "InternalError";
    dra_buf_printf(out,
                   "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\","
                   "\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
                   "\"message\":\"%s\",\"reason\":\"%s\",\"code\":%d}}\n",
                   s->error_msg, reason, s->error_code);
}

/* ---- reading -------------------------------------------------------------------- */

static int pass(api_stream *s, dra_store_obj *o)
{
    return api_filter_obj(s->res, &s->f, o, &s->scratch);
}

/* The initial objects, up to BYTES_PER_READ as read_changes: 1 when it
 * stopped there with objects left (the caller notifies). Stopping after
 * a count of events instead cost a notify and a wake-up per 128 objects
 * of a large list. */
static int read_initial(api_stream *s, dra_buf *out)
{
    while (s->pos < s->initial.n && out->len < BYTES_PER_READ && !out->oom) {
        dra_store_obj *o = s->initial.items[s->pos++].obj;
        if (pass(s, o))
            put_event(s, out, "ADDED", o);
    }
    if (s->pos < s->initial.n)
        return 1;
    dra_store_page_fini(&s->initial);
    s->initial_pending = 0;
    if (s->end_bookmark)
        put_bookmark(s, out, s->start_rv, 1);
    return 0;
}

/* One store event as the client sees it through its filters. */
static void emit(api_stream *s, dra_buf *out, const dra_store_event *ev)
{
    int now, before;
    if (ev->type == DRA_STORE_DELETED) {
        if (pass(s, ev->obj))
            put_event(s, out, "DELETED", ev->obj);
        return;
    }
    now = pass(s, ev->obj);
    if (ev->type == DRA_STORE_ADDED) {
        if (now)
            put_event(s, out, "ADDED", ev->obj);
        return;
    }
    before = ev->prev && s->f.active ? pass(s, ev->prev) : now;
    if (now && before)
        put_event(s, out, "MODIFIED", ev->obj);
    else if (now)
        put_event(s, out, "ADDED", ev->obj);
    else if (before)
        put_event(s, out, "DELETED", ev->obj);
}

/* Everything the store has for the watch, up to BYTES_PER_READ: 1 when
 * it stopped there with events possibly left (the caller notifies). */
static int read_changes(api_stream *s, dra_buf *out)
{
    dra_store_event evs[EVENTS_PER_READ];
    size_t n;
    do {
        dra_err e = dra_store_watch_poll(s->w, evs, EVENTS_PER_READ, &n);
        if (e == DRA_EGONE) {
            s->error_code = 410;
            snprintf(s->error_msg, sizeof s->error_msg,
                     "too old resource version: %llu (the watch fell behind the "
                     "history kept)",
                     (unsigned long long)dra_store_watch_rv(s->w));
            return 0;
        }
        for (size_t i = 0; i < n; i++) {
            emit(s, out, &evs[i]);
            dra_store_event_fini(&evs[i]);
        }
        if (out->oom)
            return 0;
    } while (n == EVENTS_PER_READ && out->len < BYTES_PER_READ);
    return n == EVENTS_PER_READ;
}

static dra_err stream_read(void *ud, dra_buf *out, int *eof)
{
    api_stream *s = ud;
    int64_t t = now_ms();
    *eof = 0;
    if (s->ended) {
        *eof = 1;
        return DRA_OK;
    }
    int more = 0;
    if (s->initial_pending)
        more = read_initial(s, out);
    /* Changes committed while the initial list was read notified before
     * this read: read them now, as no other notify may come. */
    if (!more && !s->initial_pending && !s->error_code && s->w)
        more = read_changes(s, out);
    if (more)
        wake(s);
    if (s->error_code) {
        put_error(s, out);
        s->ended = *eof = 1;
        return out->oom ? DRA_ENOMEM : DRA_OK;
    }
    if (s->bookmarks && !s->initial_pending &&
        t >= atomic_load_explicit(&s->next_bookmark_ms, memory_order_relaxed)) {
        put_bookmark(s, out, dra_store_watch_rv(s->w), 0);
        atomic_store_explicit(&s->next_bookmark_ms, t + s->srv->opts.bookmark_ms,
                              memory_order_relaxed);
    }
    if (t >= s->deadline_ms && !s->initial_pending)
        s->ended = *eof = 1;
    return out->oom ? DRA_ENOMEM : DRA_OK;
}

static void stream_set_notify(void *ud, void (*notify)(void *), void *arg)
{
    api_stream *s = ud;
    pthread_mutex_lock(&s->lock);
    s->notify = notify;
    s->notify_arg = arg;
    pthread_mutex_unlock(&s->lock);
}

static void stream_free(api_stream *s)
{
    dra_apiserver *srv = s->srv;
    pthread_mutex_lock(&srv->lock);
    if (s->prev)
        s->prev->next = s->next;
    else if (srv->streams == s)
        srv->streams = s->next;
    if (s->next)
        s->next->prev = s->prev;
    pthread_mutex_unlock(&srv->lock);
    dra_store_watch_close(s->w);
    dra_store_page_fini(&s->initial);
    dra_arena_fini(&s->a);
    dra_arena_fini(&s->scratch);
    pthread_mutex_destroy(&s->lock);
    dra_free(srv->mem, s);
}

static void stream_close(void *ud)
{
    stream_free(ud);
}

static const dra_stream_ops stream_ops = {stream_read, stream_set_notify,
                                          stream_close};

int api_watch_count(dra_apiserver *srv)
{
    int n = 0;
    pthread_mutex_lock(&srv->lock);
    for (api_stream *s = srv->streams; s; s = s->next)
        n++;
    pthread_mutex_unlock(&srv->lock);
    return n;
}

void api_watch_tick(dra_apiserver *srv)
{
    int64_t t = now_ms();
    pthread_mutex_lock(&srv->lock);
    for (api_stream *s = srv->streams; s; s = s->next)
        if (t >= s->deadline_ms ||
            (s->bookmarks &&
             t >= atomic_load_explicit(&s->next_bookmark_ms, memory_order_relaxed)))
            wake(s);
    pthread_mutex_unlock(&srv->lock);
}

/* ---- opening ------------------------------------------------------------------- */

static int64_t timeout_ms(api_req *r)
{
    const char *ts = api_q(r, "timeoutSeconds");
    if (ts && *ts && atoll(ts) > 0)
        return atoll(ts) * 1000;
    /* Without a timeout kube-apiserver picks 30 to 60 minutes, so that
     * watchers spread their reconnections. */
    return (30 * 60 + rand() % (30 * 60)) * 1000LL;
}

static dra_err stream_new(api_req *r, api_stream **out)
{
    api_stream *s = dra_calloc(r->srv->mem, 1, sizeof *s);
    const char *gv;
    if (!s)
        return DRA_ENOMEM;
    s->pub.ops = &stream_ops;
    s->pub.ud = s;
    s->srv = r->srv;
    pthread_mutex_init(&s->lock, NULL);
    dra_arena_init(&s->a, r->srv->mem);
    dra_arena_init(&s->scratch, r->srv->mem);
    s->res = r->res;
    snprintf(s->skey, sizeof s->skey, "%s", r->skey);
    snprintf(s->kind, sizeof s->kind, "%s", r->res->kind);
    gv = api_out_gv(r);
    snprintf(s->gv, sizeof s->gv, "%s", gv ? gv : "");
    snprintf(s->conv, sizeof s->conv, "%s", r->conv ? r->conv : "");
    s->deadline_ms = now_ms() + timeout_ms(r);
    atomic_init(&s->next_bookmark_ms, now_ms() + r->srv->opts.bookmark_ms);
    s->bookmarks = api_q_bool(r, "allowWatchBookmarks", 0);
    *out = s;
    return DRA_OK;
}

/* Parses the filters again in the stream's own arena (the request's
 * dies with the request). */
static dra_err stream_filters(api_req *r, api_stream *s)
{
    dra_arena keep = r->a;
    dra_err e;
    r->a = s->a;
    e = api_filter_parse(r, &s->f);
    if (!e && s->f.active)
        s->f.key = api_filter_key(r);
    s->a = r->a;
    r->a = keep;
    return e;
}

static dra_err open_from(api_req *r, api_stream *s, uint64_t rv)
{
    dra_store *st = r->srv->store;
    dra_err e = dra_store_watch_open(st, s->skey, r->all_ns ? NULL : r->ns, rv,
                                     on_store, s, &s->w);
    s->start_rv = rv;
    if (e == DRA_EGONE) {
        s->error_code = 410;
        snprintf(s->error_msg, sizeof s->error_msg,
                 "too old resource version: %llu (%llu)", (unsigned long long)rv,
                 (unsigned long long)dra_store_rv(st));
        return DRA_OK;
    }
    if (e == DRA_ERANGE) {
        s->error_code = 504;
        snprintf(s->error_msg, sizeof s->error_msg,
                 "Too large resource version: %llu, current: %llu",
                 (unsigned long long)rv, (unsigned long long)dra_store_rv(st));
        return DRA_OK;
    }
    return e;
}

dra_err api_watch(api_req *r)
{
    const char *rvs = api_q(r, "resourceVersion");
    const char *sie = api_q(r, "sendInitialEvents");
    int initial = !rvs || !*rvs || !strcmp(rvs, "0");
    api_stream *s;
    dra_err e;
    if (sie && *sie)
        initial = api_q_bool(r, "sendInitialEvents", 0);
    if (sie && initial && !api_q_bool(r, "allowWatchBookmarks", 0))
        return api_bad_request(r, "sendInitialEvents is forbidden for watch "
                                  "unless allowWatchBookmarks=true");
    if ((e = stream_new(r, &s)))
        return e;
    if (r->table && (e = api_table_opts_init(r, &s->topts))) {
        stream_free(s);
        return e == DRA_EINVAL ? DRA_OK : e;
    }
    s->table = r->table;
    if ((e = stream_filters(r, s))) {
        /* A bad selector: the 400 answer is already in the response. */
        stream_free(s);
        return e == DRA_EINVAL ? DRA_OK : e;
    }
    if (initial) {
        e = api_snapshot(r, &s->f, NULL, NULL, 0, &s->initial);
        s->initial_pending = 1;
        s->end_bookmark = sie && initial && s->bookmarks;
        if (!e)
            e = open_from(r, s, s->initial.rv);
    } else {
        char *end;
        unsigned long long v = strtoull(rvs, &end, 10);
        if (*end || *rvs < '0' || *rvs > '9') {
            stream_free(s);
            return api_bad_request(r, "resourceVersion: Invalid value: \"%s\": "
                                      "must be a decimal number", rvs);
        }
        e = open_from(r, s, v);
    }
    if (e) {
        stream_free(s);
        return e;
    }
    pthread_mutex_lock(&r->srv->lock);
    s->next = r->srv->streams;
    if (s->next)
        s->next->prev = s;
    r->srv->streams = s;
    pthread_mutex_unlock(&r->srv->lock);
    r->out->code = 200;
    snprintf(r->out->content_type, sizeof r->out->content_type, "application/json");
    r->out->stream = &s->pub;
    return DRA_OK;
}
