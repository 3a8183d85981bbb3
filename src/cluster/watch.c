/*
 * watch.c: watch streams over any transport. Opens GET ...?watch=true
 * with the caller's options, then turns each line the transport hands
 * over into a typed event parsed into the caller's arena. Malformed
 * lines end the stream (DRA_EPARSE); ERROR events carry their Status,
 * whose mapped error dra_watch_event_err reports (DRA_EGONE for 410).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "cluster_int.h"

struct dra_watch {
    dra_cluster *c;
    dra_watch_stream *s;
    dra_buf line;
    atomic_int canceled;
    int broken; /* a malformed event was seen: the stream is unusable */
};

dra_err dra_cluster_watch(dra_cluster *c, const dra_gvr *r, const char *ns,
                          const dra_list_opts *opts, dra_watch **out,
                          dra_kstatus *st)
{
    dra_kstatus local;
    dra_buf path, query;
    dra_watch *w = NULL;
    dra_err err;
    if (!st)
        st = &local;
    memset(st, 0, sizeof *st);
    if (out)
        *out = NULL;
    if (!c || !out || !c->ops.watch_open || !c->ops.watch_next) {
        snprintf(st->message, sizeof st->message, "watch not supported");
        return c && out ? DRA_EUNSUPPORTED : DRA_EINVAL;
    }
    dra_buf_init(&path, c->mem);
    dra_buf_init(&query, c->mem);
    err = dra_cluster_path(&path, r, ns, NULL, NULL);
    if (!err)
        err = cluster_query_list(&query, opts, 1);
    if (!err && !(w = dra_calloc(c->mem, 1, sizeof *w)))
        err = DRA_ENOMEM;
    if (!err) {
        w->c = c;
        dra_buf_init(&w->line, c->mem);
        atomic_init(&w->canceled, 0);
        err = c->ops.watch_open(c->ud, path.p, query.p, &w->s, st);
        if (err == DRA_OK && !w->s)
            err = DRA_EIO;
    }
    if (err) {
        if (!st->message[0])
            cluster_st_transport(st, err);
        if (w)
            dra_buf_fini(&w->line);
        dra_free(c->mem, w);
        w = NULL;
    }
    dra_buf_fini(&path);
    dra_buf_fini(&query);
    *out = w;
    return err;
}

static int is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
            return 0;
    return 1;
}

static int event_type(const dra_doc *t, dra_watch_type *out)
{
    static const struct {
        const char *name;
        dra_watch_type type;
    } types[] = {
        {"ADDED", DRA_WATCH_ADDED},       {"MODIFIED", DRA_WATCH_MODIFIED},
        {"DELETED", DRA_WATCH_DELETED},   {"BOOKMARK", DRA_WATCH_BOOKMARK},
        {"ERROR", DRA_WATCH_ERROR},
    };
    if (!t || t->kind != DRA_DOC_STRING)
        return 0;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(t->u.str.s, types[i].name) == 0) {
            *out = types[i].type;
            return 1;
        }
    return 0;
}

/* Parses one event line into |ev|. DRA_EPARSE when it is not JSON or not
 * {"type": known, "object": {...}}. */
static dra_err parse_event(dra_arena *a, const char *text, size_t len,
                           dra_watch_event *ev)
{
    dra_doc *doc = NULL;
    const dra_doc *obj;
    dra_err err = dra_doc_parse_json(a, text, len, &doc, NULL);
    if (err == DRA_ENOMEM)
        return err;
    if (err != DRA_OK || doc->kind != DRA_DOC_MAP)
        return DRA_EPARSE;
    obj = dra_doc_get(doc, "object");
    if (!event_type(dra_doc_get(doc, "type"), &ev->type) || !obj ||
        obj->kind != DRA_DOC_MAP)
        return DRA_EPARSE;
    ev->object = (dra_doc *)obj;
    ev->resource_version =
        ev->type == DRA_WATCH_ERROR ? NULL : dra_obj_rv(ev->object);
    return DRA_OK;
}

dra_err dra_watch_next(dra_watch *w, int timeout_ms, dra_arena *a,
                       dra_watch_event *ev)
{
    dra_err err;
    if (!w || !a || !ev)
        return DRA_EINVAL;
    memset(ev, 0, sizeof *ev);
    for (;;) {
        if (atomic_load(&w->canceled))
            return DRA_ECANCELED;
        if (w->broken)
            return DRA_EIO;
        dra_buf_reset(&w->line);
        err = w->c->ops.watch_next(w->c->ud, w->s, timeout_ms, &w->line);
        if (atomic_load(&w->canceled))
            return DRA_ECANCELED;
        if (err != DRA_OK)
            return err;
        if (w->line.oom)
            return DRA_ENOMEM;
        if (!w->line.len || is_blank(w->line.p, w->line.len))
            continue; /* keep-alive newlines */
        err = parse_event(a, w->line.p, w->line.len, ev);
        if (err == DRA_EPARSE)
            w->broken = 1;
        if (err != DRA_OK)
            memset(ev, 0, sizeof *ev);
        return err;
    }
}

dra_err dra_watch_event_err(const dra_watch_event *ev, dra_kstatus *st)
{
    if (st)
        memset(st, 0, sizeof *st);
    if (!ev || ev->type != DRA_WATCH_ERROR)
        return DRA_OK;
    if (!ev->object) {
        if (st)
            snprintf(st->message, sizeof st->message, "watch error");
        return DRA_EIO;
    }
    /* A Status without a usable code is still an error: DRA_EIO. */
    {
        dra_kstatus local;
        dra_err err = dra_cluster_status_doc(ev->object, 0, "GET",
                                             st ? st : &local);
        return err == DRA_OK ? DRA_EIO : err;
    }
}

void dra_watch_cancel(dra_watch *w)
{
    if (!w)
        return;
    atomic_store(&w->canceled, 1);
    if (w->c->ops.watch_cancel)
        w->c->ops.watch_cancel(w->c->ud, w->s);
}

void dra_watch_close(dra_watch *w)
{
    if (!w)
        return;
    if (w->c->ops.watch_close)
        w->c->ops.watch_close(w->c->ud, w->s);
    dra_buf_fini(&w->line);
    dra_free(w->c->mem, w);
}
