/*
 * logsrc.c: pods/NAME/log for drad's API server. A group of node agents
 * answers the server's log-source hook (apiserver.h): the agent running
 * the pod reads the container's CRI log; with follow, a thread keeps
 * reading while the container runs and the stream hands out what it
 * has, waking the server's reader as more arrives.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "dra/apiserver.h"
#include "node_int.h"

struct dra_node_group {
    const dra_mem *mem;
    pthread_mutex_t mu;
    dra_node **v;
    size_t n, cap;
};

dra_err dra_node_group_new(const dra_mem *mem, dra_node_group **out)
{
    dra_node_group *g = dra_calloc(mem, 1, sizeof *g);
    *out = NULL;
    if (!g)
        return DRA_ENOMEM;
    g->mem = mem;
    pthread_mutex_init(&g->mu, NULL);
    *out = g;
    return DRA_OK;
}

dra_err dra_node_group_add(dra_node_group *g, dra_node *n)
{
    dra_err e;
    pthread_mutex_lock(&g->mu);
    e = dra_grow(g->mem, (void **)&g->v, &g->cap, g->n + 1, sizeof *g->v);
    if (!e)
        g->v[g->n++] = n;
    pthread_mutex_unlock(&g->mu);
    return e;
}

void dra_node_group_remove(dra_node_group *g, dra_node *n)
{
    pthread_mutex_lock(&g->mu);
    for (size_t i = 0; i < g->n; i++)
        if (g->v[i] == n) {
            g->v[i] = g->v[--g->n];
            break;
        }
    pthread_mutex_unlock(&g->mu);
}

void dra_node_group_free(dra_node_group *g)
{
    if (!g)
        return;
    pthread_mutex_destroy(&g->mu);
    dra_free(g->mem, g->v);
    dra_free(g->mem, g);
}

/* ---- the stream ------------------------------------------------------------ */

typedef struct lstream {
    const dra_mem *mem;
    pthread_mutex_t mu;
    dra_buf buf;   /* read but not handed out yet */
    int eof, cancel;
    void (*notify)(void *);
    void *notify_arg;
    pthread_t th;
    int threaded;
    /* for the follow thread */
    dra_node *node;
    char uid[64], container[256];
    int previous;
    dra_node_log_opts o;
} lstream;

static int ls_write(void *ud, const char *p, size_t n)
{
    lstream *s = ud;
    void (*notify)(void *);
    void *arg;
    int stop;
    pthread_mutex_lock(&s->mu);
    dra_buf_append(&s->buf, p, n);
    notify = s->notify;
    arg = s->notify_arg;
    stop = s->cancel || s->buf.oom;
    pthread_mutex_unlock(&s->mu);
    if (notify)
        notify(arg);
    return stop;
}

static int ls_cancelled(void *ud)
{
    lstream *s = ud;
    int c;
    pthread_mutex_lock(&s->mu);
    c = s->cancel;
    pthread_mutex_unlock(&s->mu);
    return c;
}

static void *ls_follow(void *arg)
{
    lstream *s = arg;
    void (*notify)(void *);
    void *narg;
    dra_node_logs(s->node, s->uid, s->container[0] ? s->container : NULL, s->previous, &s->o, ls_write, s, NULL);
    pthread_mutex_lock(&s->mu);
    s->eof = 1;
    notify = s->notify;
    narg = s->notify_arg;
    pthread_mutex_unlock(&s->mu);
    if (notify)
        notify(narg);
    return NULL;
}

static dra_err ls_read(void *ud, dra_buf *out, int *eof)
{
    lstream *s = ud;
    dra_err e = DRA_OK;
    pthread_mutex_lock(&s->mu);
    if (s->buf.len)
        e = dra_buf_append(out, s->buf.p, s->buf.len);
    if (!e)
        dra_buf_reset(&s->buf);
    *eof = s->eof && s->buf.len == 0;
    pthread_mutex_unlock(&s->mu);
    return e;
}

static void ls_set_notify(void *ud, void (*notify)(void *arg), void *arg)
{
    lstream *s = ud;
    pthread_mutex_lock(&s->mu);
    s->notify = notify;
    s->notify_arg = arg;
    pthread_mutex_unlock(&s->mu);
}

static void ls_close(void *ud)
{
    lstream *s = ud;
    pthread_mutex_lock(&s->mu);
    s->cancel = 1;
    s->notify = NULL;
    pthread_mutex_unlock(&s->mu);
    if (s->threaded)
        pthread_join(s->th, NULL);
    dra_buf_fini(&s->buf);
    pthread_mutex_destroy(&s->mu);
    dra_free(s->mem, s);
}

static const dra_stream_ops ls_ops = {ls_read, ls_set_notify, ls_close};

static dra_node *owner(dra_node_group *g, const char *uid)
{
    dra_node *n = NULL;
    pthread_mutex_lock(&g->mu);
    for (size_t i = 0; i < g->n && !n; i++)
        if (dra_node_has_pod(g->v[i], uid))
            n = g->v[i];
    pthread_mutex_unlock(&g->mu);
    return n;
}

dra_err dra_node_log_source(void *group, const char *ns, const char *name, const char *pod_uid,
                            const struct dra_log_opts *opts, struct dra_stream **out, dra_kstatus *st)
{
    dra_node_group *g = group;
    dra_node *n = pod_uid ? owner(g, pod_uid) : NULL;
    lstream *s;
    dra_stream *ds;
    dra_err e;
    *out = NULL;
    if (!n) {
        *st = (dra_kstatus){400, "BadRequest", ""};
        snprintf(st->message, sizeof st->message, "container \"%s\" in pod \"%s\" is waiting to start: "
                 "ContainerCreating", opts->container ? opts->container : "", name);
        (void)ns;
        return DRA_EINVAL;
    }
    if (!(s = dra_calloc(g->mem, 1, sizeof *s + sizeof *ds)))
        return DRA_ENOMEM;
    ds = (dra_stream *)(s + 1);
    s->mem = g->mem;
    pthread_mutex_init(&s->mu, NULL);
    dra_buf_init(&s->buf, g->mem);
    s->node = n;
    snprintf(s->uid, sizeof s->uid, "%s", pod_uid);
    snprintf(s->container, sizeof s->container, "%s", opts->container ? opts->container : "");
    s->previous = opts->previous;
    s->o.timestamps = opts->timestamps;
    s->o.tail_lines = opts->tail_lines;
    s->o.limit_bytes = opts->limit_bytes > 0 ? opts->limit_bytes : 0;
    s->o.since_ns = opts->since_seconds >= 0 ? node_now_ns() - opts->since_seconds * 1000000000 : 0;
    s->o.follow = opts->follow;
    s->o.cancel = ls_cancelled;
    s->o.cancel_ud = s;
    ds->ops = &ls_ops;
    ds->ud = s;
    if (!opts->follow) {
        e = dra_node_logs(n, s->uid, s->container[0] ? s->container : NULL, s->previous, &s->o, ls_write, s, st);
        s->eof = 1;
    } else {
        /* Errors (no such container, ...) are answered before streaming. */
        dra_node_log_opts probe = s->o;
        probe.follow = 0;
        probe.tail_lines = 0;
        e = dra_node_logs(n, s->uid, s->container[0] ? s->container : NULL, s->previous, &probe, ls_write, s, st);
        if (!e && pthread_create(&s->th, NULL, ls_follow, s) == 0)
            s->threaded = 1;
        else if (!e)
            e = DRA_EIO;
    }
    if (e) {
        ls_close(s);
        return e;
    }
    *out = ds;
    return DRA_OK;
}
