/*
 * event.c: core/v1 Events about objects, written the way client-go's
 * record.EventRecorder writes them (name "<object>.<hex nanoseconds>",
 * involvedObject, source, first/last timestamps, count), so kubectl
 * describe shows them. Repeats of the same (object, type, reason,
 * message, source) are folded into the existing Event by patching its
 * count and lastTimestamp, using a small LRU cache per dra_cluster.
 */
#include <stdio.h>
#include <string.h>

#include "cluster_int.h"

typedef struct event_in {
    const dra_doc *obj;
    const char *type, *reason, *component, *host, *message;
    const char *ns, *name; /* the Event object's */
} event_in;

void cluster_events_fini(dra_cluster *c)
{
    for (size_t i = 0; i < CLUSTER_EVCACHE_N; i++) {
        dra_free(c->mem, c->ev[i].key);
        dra_free(c->mem, c->ev[i].ns);
        dra_free(c->mem, c->ev[i].name);
        memset(&c->ev[i], 0, sizeof c->ev[i]);
    }
}

static const char *str_or_empty(const char *s) { return s ? s : ""; }

static const char *top_str(const dra_doc *obj, const char *key)
{
    const dra_doc *v = dra_doc_get(obj, key);
    return v && v->kind == DRA_DOC_STRING ? v->u.str.s : NULL;
}

/* The cache key: who the event is about and everything that makes two
 * events the same (client-go's getEventKey, with the uid standing for
 * the object when there is one). */
static char *event_key(dra_arena *a, const event_in *in)
{
    const char *uid = dra_obj_uid(in->obj);
    return dra_arena_sprintf(
        a, "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s",
        str_or_empty(uid), str_or_empty(top_str(in->obj, "kind")),
        str_or_empty(dra_obj_namespace(in->obj)),
        str_or_empty(dra_obj_name(in->obj)), in->type, in->reason,
        in->message, str_or_empty(in->component), str_or_empty(in->host));
}

static cluster_event *cache_find(dra_cluster *c, const char *key, uint64_t h)
{
    for (size_t i = 0; i < CLUSTER_EVCACHE_N; i++)
        if (c->ev[i].key && c->ev[i].hash == h &&
            strcmp(c->ev[i].key, key) == 0)
            return &c->ev[i];
    return NULL;
}

/* Remembers that |key| was written as Event ns/name with |count|; evicts
 * the least recently used entry when full. Best effort on ENOMEM. */
static void cache_put(dra_cluster *c, const char *key, uint64_t h,
                      const char *ns, const char *name, int64_t count)
{
    cluster_event *e;
    pthread_mutex_lock(&c->lock);
    e = cache_find(c, key, h);
    if (!e) {
        e = &c->ev[0];
        for (size_t i = 0; i < CLUSTER_EVCACHE_N; i++) {
            if (!c->ev[i].key) {
                e = &c->ev[i];
                break;
            }
            if (c->ev[i].used < e->used)
                e = &c->ev[i];
        }
    }
    dra_free(c->mem, e->key);
    dra_free(c->mem, e->ns);
    dra_free(c->mem, e->name);
    e->key = dra_strdup(c->mem, key);
    e->ns = dra_strdup(c->mem, ns);
    e->name = dra_strdup(c->mem, name);
    if (!e->key || !e->ns || !e->name) {
        dra_free(c->mem, e->key);
        dra_free(c->mem, e->ns);
        dra_free(c->mem, e->name);
        memset(e, 0, sizeof *e);
    } else {
        e->hash = h;
        e->count = count;
        e->used = ++c->ev_clock;
    }
    pthread_mutex_unlock(&c->lock);
}

/* Looks |key| up; on a hit bumps its count and copies the Event's
 * namespace and name into |a|. Returns the new count, 0 on a miss. */
static int64_t cache_bump(dra_cluster *c, dra_arena *a, const char *key,
                          uint64_t h, const char **ns, const char **name)
{
    int64_t count = 0;
    cluster_event *e;
    pthread_mutex_lock(&c->lock);
    e = cache_find(c, key, h);
    if (e) {
        *ns = dra_arena_strdup(a, e->ns);
        *name = dra_arena_strdup(a, e->name);
        if (*ns && *name) {
            count = ++e->count;
            e->used = ++c->ev_clock;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return count;
}

/* A unique, rising nanosecond stamp for Event names (two events in the
 * same nanosecond from one client would otherwise collide). */
static uint64_t unique_ns(dra_cluster *c)
{
    uint64_t ns = cluster_now_ns();
    pthread_mutex_lock(&c->lock);
    if (ns <= c->ev_last_ns)
        ns = c->ev_last_ns + 1;
    c->ev_last_ns = ns;
    pthread_mutex_unlock(&c->lock);
    return ns;
}

static dra_doc *involved_object(dra_arena *a, const dra_doc *obj)
{
    dra_doc *r = dra_doc_new_map(a, 6);
    dra_err err = r ? DRA_OK : DRA_ENOMEM;
    if (!err)
        err = cluster_set_str(a, r, "kind", top_str(obj, "kind"));
    if (!err)
        err = cluster_set_str(a, r, "namespace", dra_obj_namespace(obj));
    if (!err)
        err = cluster_set_str(a, r, "name", dra_obj_name(obj));
    if (!err)
        err = cluster_set_str(a, r, "uid", dra_obj_uid(obj));
    if (!err)
        err = cluster_set_str(a, r, "apiVersion", top_str(obj, "apiVersion"));
    if (!err)
        err = cluster_set_str(a, r, "resourceVersion", dra_obj_rv(obj));
    return err ? NULL : r;
}

static dra_err set_doc(dra_arena *a, dra_doc *map, const char *key,
                       dra_doc *v)
{
    return v ? dra_doc_map_set(a, map, key, v) : DRA_ENOMEM;
}

static dra_doc *event_doc(dra_arena *a, const event_in *in, const char *ts)
{
    dra_doc *e = dra_doc_new_map(a, 14), *md = dra_doc_new_map(a, 2),
            *src = dra_doc_new_map(a, 2);
    dra_err err = e && md && src ? DRA_OK : DRA_ENOMEM;
    if (!err) err = cluster_set_str(a, e, "kind", "Event");
    if (!err) err = cluster_set_str(a, e, "apiVersion", "v1");
    if (!err) err = cluster_set_str(a, md, "name", in->name);
    if (!err) err = cluster_set_str(a, md, "namespace", in->ns);
    if (!err) err = dra_doc_map_set(a, e, "metadata", md);
    if (!err) err = set_doc(a, e, "involvedObject", involved_object(a, in->obj));
    if (!err) err = cluster_set_str(a, e, "reason", in->reason);
    if (!err) err = cluster_set_str(a, e, "message", in->message);
    if (!err) err = cluster_set_str(a, src, "component", in->component);
    if (!err && in->host && in->host[0])
        err = cluster_set_str(a, src, "host", in->host);
    if (!err) err = dra_doc_map_set(a, e, "source", src);
    if (!err) err = cluster_set_str(a, e, "firstTimestamp", ts);
    if (!err) err = cluster_set_str(a, e, "lastTimestamp", ts);
    if (!err) err = set_doc(a, e, "count", dra_doc_new_int(a, 1));
    if (!err) err = cluster_set_str(a, e, "type", in->type);
    if (!err) err = set_doc(a, e, "eventTime", dra_doc_new_null(a));
    if (!err)
        err = cluster_set_str(a, e, "reportingComponent",
                              str_or_empty(in->component));
    if (!err)
        err = cluster_set_str(a, e, "reportingInstance", str_or_empty(in->host));
    return err ? NULL : e;
}

/* The strategic merge patch client-go sends for a repeat. */
static dra_doc *fold_patch(dra_arena *a, int64_t count, const char *message,
                           const char *ts)
{
    dra_doc *p = dra_doc_new_map(a, 3);
    dra_err err = p ? DRA_OK : DRA_ENOMEM;
    if (!err) err = set_doc(a, p, "count", dra_doc_new_int(a, count));
    if (!err) err = cluster_set_str(a, p, "lastTimestamp", ts);
    if (!err) err = cluster_set_str(a, p, "message", message);
    return err ? NULL : p;
}

/* PATCHes the remembered Event ns/name to |count|. */
static dra_err event_fold(dra_cluster *c, dra_arena *a, const char *ns,
                          const char *name, int64_t count, const char *msg,
                          const char *ts, dra_kstatus *st)
{
    dra_gvr ev = DRA_GVR_EVENTS;
    dra_buf path;
    dra_doc *p = fold_patch(a, count, msg, ts);
    dra_err err = p ? DRA_OK : DRA_ENOMEM;
    dra_buf_init(&path, c->mem);
    if (!err)
        err = dra_cluster_path(&path, &ev, ns, name, NULL);
    if (!err)
        err = cluster_send_doc(c, "PATCH", path.p, NULL,
                               dra_patch_content_type(DRA_PATCH_STRATEGIC), p,
                               a, NULL, st);
    dra_buf_fini(&path);
    return err;
}

static dra_err event_create(dra_cluster *c, dra_arena *a, event_in *in,
                            const char *ts, dra_kstatus *st)
{
    dra_gvr ev = DRA_GVR_EVENTS;
    const char *ons = dra_obj_namespace(in->obj);
    char hex[32];
    dra_doc *e;
    snprintf(hex, sizeof hex, "%llx", (unsigned long long)unique_ns(c));
    in->ns = ons && ons[0] ? ons : "default";
    in->name = dra_arena_sprintf(a, "%s.%s",
                                 str_or_empty(dra_obj_name(in->obj)), hex);
    e = in->name ? event_doc(a, in, ts) : NULL;
    if (!e)
        return DRA_ENOMEM;
    return dra_cluster_create(c, &ev, in->ns, e, a, NULL, st);
}

static int valid_type(const char *t)
{
    return t && (strcmp(t, "Normal") == 0 || strcmp(t, "Warning") == 0);
}

dra_err dra_cluster_event(dra_cluster *c, const dra_doc *obj,
                          const char *type, const char *reason,
                          const char *component, const char *host,
                          const char *fmt, ...)
{
    dra_arena a;
    dra_buf msg;
    event_in in = {obj, type, reason, component, host, NULL, NULL, NULL};
    char ts[32];
    const char *key, *ns = NULL, *name = NULL;
    uint64_t h = 0;
    int64_t count = 0;
    dra_err err = DRA_OK;
    va_list ap;
    if (!c || !obj || !valid_type(type) || !reason || !reason[0] || !fmt ||
        !dra_obj_name(obj))
        return DRA_EINVAL;
    dra_arena_init(&a, c->mem);
    dra_buf_init(&msg, c->mem);
    va_start(ap, fmt);
    dra_buf_vprintf(&msg, fmt, ap);
    va_end(ap);
    in.message = msg.p ? msg.p : "";
    key = msg.oom ? NULL : event_key(&a, &in);
    if (!key)
        err = DRA_ENOMEM;
    cluster_rfc3339(cluster_now_ns(), ts, sizeof ts);
    if (!err) {
        h = dra_hash(key, strlen(key));
        count = cache_bump(c, &a, key, h, &ns, &name);
    }
    if (!err && count > 1) {
        err = event_fold(c, &a, ns, name, count, in.message, ts, NULL);
        if (err != DRA_ENOTFOUND)
            goto done; /* folded, or failed for another reason */
        err = DRA_OK; /* the Event expired: write a new one */
    }
    if (!err) {
        err = event_create(c, &a, &in, ts, NULL);
        if (!err)
            cache_put(c, key, h, in.ns, in.name, 1);
    }
done:
    dra_buf_fini(&msg);
    dra_arena_fini(&a);
    return err;
}
