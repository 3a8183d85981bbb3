/*
 * reflector.c: client-go's Reflector on its own thread. Lists the
 * collection, watches from the list's resourceVersion (with bookmarks),
 * resumes from the last version seen when a stream ends, and lists again
 * after 410 Gone or any other watch failure, reporting what changed in
 * between as ADDED / MODIFIED / DELETED. It keeps only key ->
 * (uid, resourceVersion) per object, so a DELETED found by a relist
 * carries a stub object: apiVersion, kind and metadata.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cluster_int.h"

/* What we remember of one reported object; strings packed after it. */
typedef struct refl_entry {
    uint64_t gen; /* the relist that last saw it */
    char *key, *ns, *name, *uid, *rv;
} refl_entry;

struct dra_reflector {
    dra_cluster *c;
    const dra_mem *mem;
    dra_reflector_opts o; /* strings below are our copies */
    char *group, *version, *resource, *ns, *label, *field;
    pthread_t thread;
    pthread_mutex_t lock; /* guards stop and cur */
    pthread_cond_t cond;
    int stop;
    dra_watch *cur;
    atomic_int synced;
    /* Touched by the reflector thread only: */
    dra_map items; /* key -> refl_entry */
    uint64_t gen;
    char *last_rv, *kind, *api_version;
    dra_arena arena; /* one watch event or one list */
    long backoff_ms;
};

/* What to do after a watch stream: read on / resume from the last
 * version; list again now (410); list again after a backoff (errors);
 * watch again after a backoff; stop. */
enum { W_RESUME, W_GONE, W_RELIST, W_RETRY, W_STOP };

#define REFL_BACKOFF_MIN_MS 100
#define REFL_BACKOFF_MAX_MS 5000

/* ---- the key -> version table ----------------------------------------- */

static size_t slen(const char *s) { return s ? strlen(s) : 0; }

static char *pack(char **p, const char *s)
{
    char *start = *p;
    size_t n = slen(s);
    if (n)
        memcpy(start, s, n);
    start[n] = '\0';
    *p += n + 1;
    return start;
}

static refl_entry *entry_new(const dra_mem *mem, const char *ns,
                             const char *name, const char *uid,
                             const char *rv)
{
    size_t nk = slen(ns) + 1 + slen(name) + 1;
    size_t total = sizeof(refl_entry) + nk + slen(ns) + slen(name) +
                   slen(uid) + slen(rv) + 4;
    refl_entry *e = dra_malloc(mem, total);
    char *p;
    if (!e)
        return NULL;
    p = (char *)(e + 1);
    e->gen = 0;
    e->key = p;
    if (ns && ns[0])
        p += (size_t)sprintf(p, "%s/%s", ns, name) + 1;
    else
        p += (size_t)sprintf(p, "%s", name) + 1;
    e->ns = pack(&p, ns);
    e->name = pack(&p, name);
    e->uid = pack(&p, uid);
    e->rv = pack(&p, rv);
    return e;
}

/* Records |obj| as reported; *was_known tells whether it had been. Returns
 * 0 when nothing changed (same resourceVersion), 1 when it did, -1 on
 * ENOMEM. */
static int table_put(dra_reflector *r, const dra_doc *obj, int *was_known)
{
    const char *name = dra_obj_name(obj), *rv = dra_obj_rv(obj);
    refl_entry *e = entry_new(r->mem, dra_obj_namespace(obj), name ? name : "",
                              dra_obj_uid(obj), rv);
    dra_map_entry *me;
    if (!e)
        return -1;
    e->gen = r->gen;
    me = dra_map_find(&r->items, e->key, strlen(e->key));
    *was_known = me != NULL;
    if (me) {
        refl_entry *old = me->val;
        int same = strcmp(old->rv, e->rv) == 0;
        me->key = e->key; /* the map borrows the key from the entry */
        me->val = e;
        dra_free(r->mem, old);
        return !same;
    }
    if (dra_map_put(&r->items, e->key, strlen(e->key), e) != DRA_OK) {
        dra_free(r->mem, e);
        return -1;
    }
    return 1;
}

/* Forgets |obj|; returns whether it was known. */
static int table_del(dra_reflector *r, const dra_doc *obj)
{
    const char *ns = dra_obj_namespace(obj), *name = dra_obj_name(obj);
    char *key = dra_arena_sprintf(&r->arena, "%s%s%s", ns && ns[0] ? ns : "",
                                  ns && ns[0] ? "/" : "", name ? name : "");
    dra_map_entry *me = key ? dra_map_find(&r->items, key, strlen(key)) : NULL;
    refl_entry *old;
    if (!me)
        return 0;
    old = me->val;
    dra_map_del(&r->items, key, strlen(key));
    dra_free(r->mem, old);
    return 1;
}

static void table_clear(dra_reflector *r)
{
    for (size_t i = 0; i < r->items.n; i++)
        if (r->items.entries[i].key)
            dra_free(r->mem, r->items.entries[i].val);
    dra_map_fini(&r->items);
    dra_map_init(&r->items, r->mem);
}

/* ---- helpers ------------------------------------------------------------ */

static int stopping(dra_reflector *r)
{
    int s;
    pthread_mutex_lock(&r->lock);
    s = r->stop;
    pthread_mutex_unlock(&r->lock);
    return s;
}

/* Waits the next backoff step (doubling up to 5 s); returns early when
 * the reflector is stopped. */
static void backoff_wait(dra_reflector *r)
{
    struct timespec until;
    long ms;
    r->backoff_ms = r->backoff_ms ? r->backoff_ms * 2 : REFL_BACKOFF_MIN_MS;
    if (r->backoff_ms > REFL_BACKOFF_MAX_MS)
        r->backoff_ms = REFL_BACKOFF_MAX_MS;
    ms = r->backoff_ms;
    clock_gettime(CLOCK_REALTIME, &until);
    dra_timespec_add_ms(&until, ms);
    pthread_mutex_lock(&r->lock);
    while (!r->stop &&
           pthread_cond_timedwait(&r->cond, &r->lock, &until) == 0) {
    }
    pthread_mutex_unlock(&r->lock);
}

static void set_str(dra_reflector *r, char **dst, const char *s)
{
    char *n = s ? dra_strdup(r->mem, s) : NULL;
    if (s && !n)
        return; /* keep the old value on ENOMEM */
    dra_free(r->mem, *dst);
    *dst = n;
}

static void emit(dra_reflector *r, dra_watch_type t, const dra_doc *obj)
{
    if (r->o.on_event)
        r->o.on_event(r->o.ud, t, obj);
}

/* The last state we know of a vanished object, for its DELETED event. */
static dra_doc *stub(dra_reflector *r, const refl_entry *e)
{
    dra_arena *a = &r->arena;
    dra_doc *d = dra_doc_new_map(a, 3), *md = dra_doc_new_map(a, 4);
    dra_err err = d && md ? DRA_OK : DRA_ENOMEM;
    if (!err)
        err = cluster_set_str(a, d, "apiVersion", r->api_version);
    if (!err)
        err = cluster_set_str(a, d, "kind", r->kind);
    if (!err)
        err = cluster_set_str(a, md, "name", e->name);
    if (!err && e->ns[0])
        err = cluster_set_str(a, md, "namespace", e->ns);
    if (!err && e->uid[0])
        err = cluster_set_str(a, md, "uid", e->uid);
    if (!err)
        err = cluster_set_str(a, md, "resourceVersion", e->rv);
    if (!err)
        err = dra_doc_map_set(a, d, "metadata", md);
    return err ? NULL : d;
}

/* ---- list ----------------------------------------------------------------- */

static void remember_kind(dra_reflector *r, const dra_doc *list)
{
    const dra_doc *k = dra_doc_get(list, "kind"),
                  *av = dra_doc_get(list, "apiVersion");
    if (k && k->kind == DRA_DOC_STRING && k->u.str.len > 4 &&
        strcmp(k->u.str.s + k->u.str.len - 4, "List") == 0) {
        char *kind = dra_arena_strndup(&r->arena, k->u.str.s, k->u.str.len - 4);
        set_str(r, &r->kind, kind);
    }
    if (av && av->kind == DRA_DOC_STRING)
        set_str(r, &r->api_version, av->u.str.s);
}

/* Reports what vanished since the last list: every entry not seen by
 * generation r->gen. */
static void report_vanished(dra_reflector *r)
{
    for (size_t i = 0; i < r->items.n; i++) {
        dra_map_entry *me = &r->items.entries[i];
        refl_entry *e = me->key ? me->val : NULL;
        dra_doc *d;
        if (!e || e->gen == r->gen)
            continue;
        d = stub(r, e);
        if (d)
            emit(r, DRA_WATCH_DELETED, d);
        dra_map_del(&r->items, e->key, strlen(e->key));
        dra_free(r->mem, e);
    }
}

static dra_err relist(dra_reflector *r)
{
    dra_list_opts lo = {0};
    dra_doc *list = NULL;
    const dra_doc *items;
    const char *rv = NULL;
    dra_gvr gvr = {r->group, r->version, r->resource};
    dra_err err;
    lo.label_selector = r->label;
    lo.field_selector = r->field;
    dra_arena_reset(&r->arena);
    err = dra_cluster_list_all(r->c, &gvr, r->ns, &lo, &r->arena, &list, &rv,
                               NULL);
    if (err != DRA_OK)
        return err;
    remember_kind(r, list);
    r->gen++;
    items = dra_doc_get(list, "items");
    for (size_t i = 0; items && items->kind == DRA_DOC_LIST &&
                       i < items->u.list.n; i++) {
        const dra_doc *obj = items->u.list.items[i];
        int known = 0, changed;
        if (!dra_obj_name(obj))
            continue;
        changed = table_put(r, obj, &known);
        if (changed < 0)
            return DRA_ENOMEM;
        if (changed)
            emit(r, known ? DRA_WATCH_MODIFIED : DRA_WATCH_ADDED, obj);
    }
    report_vanished(r);
    set_str(r, &r->last_rv, rv ? rv : "");
    atomic_store(&r->synced, 1);
    if (r->o.on_synced)
        r->o.on_synced(r->o.ud);
    return DRA_OK;
}

/* ---- watch ---------------------------------------------------------------- */

/* Applies one watch event; returns W_RESUME to go on reading, W_GONE or
 * W_RELIST on an ERROR event. */
static int apply_event(dra_reflector *r, const dra_watch_event *ev)
{
    int known = 0, changed;
    if (ev->type == DRA_WATCH_ERROR)
        return dra_watch_event_err(ev, NULL) == DRA_EGONE ? W_GONE : W_RELIST;
    if (ev->resource_version && ev->resource_version[0])
        set_str(r, &r->last_rv, ev->resource_version);
    if (ev->type == DRA_WATCH_BOOKMARK)
        return W_RESUME;
    if (!dra_obj_name(ev->object))
        return W_RESUME;
    if (ev->type == DRA_WATCH_DELETED) {
        table_del(r, ev->object);
        emit(r, DRA_WATCH_DELETED, ev->object);
        return W_RESUME;
    }
    changed = table_put(r, ev->object, &known);
    if (changed < 0)
        return W_RELIST; /* ENOMEM: our table is incomplete now */
    if (changed)
        emit(r, known ? DRA_WATCH_MODIFIED : DRA_WATCH_ADDED, ev->object);
    return W_RESUME;
}

static int transient(dra_err err)
{
    return err == DRA_EIO || err == DRA_EUNAVAILABLE || err == DRA_ETIMEOUT;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static dra_watch *open_watch(dra_reflector *r, int *res)
{
    dra_list_opts lo = {0};
    dra_gvr gvr = {r->group, r->version, r->resource};
    dra_watch *w = NULL;
    dra_err err;
    lo.label_selector = r->label;
    lo.field_selector = r->field;
    lo.resource_version = r->last_rv;
    lo.allow_bookmarks = 1;
    /* client-go asks for a timeout in [300, 600) s so that watches of
     * many clients do not all end at once. */
    lo.timeout_seconds = 300 + (int)(cluster_now_ns() / 1000 % 300);
    err = dra_cluster_watch(r->c, &gvr, r->ns, &lo, &w, NULL);
    if (err != DRA_OK) {
        *res = err == DRA_EGONE ? W_GONE : transient(err) ? W_RETRY
                                                          : W_RELIST;
        return NULL;
    }
    pthread_mutex_lock(&r->lock);
    if (r->stop) {
        pthread_mutex_unlock(&r->lock);
        dra_watch_close(w);
        *res = W_STOP;
        return NULL;
    }
    r->cur = w;
    pthread_mutex_unlock(&r->lock);
    return w;
}

/* One watch stream, from r->last_rv until it ends. */
static int watch_once(dra_reflector *r)
{
    dra_watch_event ev;
    double start = mono_s();
    int res = W_RESUME, progress = 0;
    dra_watch *w = open_watch(r, &res);
    if (!w)
        return res;
    for (;;) {
        dra_err err;
        dra_arena_reset(&r->arena);
        err = dra_watch_next(w, 1000, &r->arena, &ev);
        if (err == DRA_ETIMEOUT) {
            if (stopping(r)) {
                res = W_STOP;
                break;
            }
            continue;
        }
        if (err == DRA_ECANCELED) {
            res = W_STOP;
            break;
        }
        if (err != DRA_OK) {
            /* DRA_EIO: the stream ended; resume from the last version.
             * A malformed event or ENOMEM: start over from a list. */
            res = err == DRA_EIO ? W_RESUME : W_RELIST;
            break;
        }
        res = apply_event(r, &ev);
        if (res == W_RESUME) {
            progress = 1;
            r->backoff_ms = 0;
        }
        if (res != W_RESUME)
            break;
    }
    pthread_mutex_lock(&r->lock);
    r->cur = NULL;
    pthread_mutex_unlock(&r->lock);
    dra_watch_close(w);
    /* A stream that ended at once without a single event would make us
     * spin against a server that closes immediately: back off. */
    if (res == W_RESUME && !progress && mono_s() - start < 1.0)
        res = W_RETRY;
    /* Likewise a 410 right after the list that preceded it. */
    if (res == W_GONE && !progress)
        res = W_RELIST;
    return res;
}

static void *reflector_main(void *arg)
{
    dra_reflector *r = arg;
    int need_list = 1;
    while (!stopping(r)) {
        int res;
        if (need_list) {
            if (relist(r) != DRA_OK) {
                backoff_wait(r);
                continue;
            }
            need_list = 0;
        }
        res = watch_once(r);
        if (res == W_STOP)
            break;
        if (res == W_GONE || res == W_RELIST)
            need_list = 1;
        if (res == W_RELIST || res == W_RETRY)
            backoff_wait(r);
    }
    return NULL;
}

/* ---- lifecycle -------------------------------------------------------------- */

static void reflector_free(dra_reflector *r)
{
    const dra_mem *mem = r->mem;
    table_clear(r);
    dra_map_fini(&r->items);
    dra_arena_fini(&r->arena);
    dra_free(mem, r->group);
    dra_free(mem, r->version);
    dra_free(mem, r->resource);
    dra_free(mem, r->ns);
    dra_free(mem, r->label);
    dra_free(mem, r->field);
    dra_free(mem, r->last_rv);
    dra_free(mem, r->kind);
    dra_free(mem, r->api_version);
    pthread_cond_destroy(&r->cond);
    pthread_mutex_destroy(&r->lock);
    dra_free(mem, r);
}

static int dup_opt(const dra_mem *mem, char **dst, const char *s)
{
    if (!s)
        return 1;
    *dst = dra_strdup(mem, s);
    return *dst != NULL;
}

dra_err dra_reflector_start(dra_cluster *c, const dra_reflector_opts *opts,
                            dra_reflector **out)
{
    dra_reflector *r;
    if (out)
        *out = NULL;
    if (!c || !opts || !out || !opts->gvr.version || !opts->gvr.resource)
        return DRA_EINVAL;
    r = dra_calloc(c->mem, 1, sizeof *r);
    if (!r)
        return DRA_ENOMEM;
    r->c = c;
    r->mem = c->mem;
    r->o = *opts;
    atomic_init(&r->synced, 0);
    dra_map_init(&r->items, c->mem);
    dra_arena_init(&r->arena, c->mem);
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->cond, NULL);
    if (!dup_opt(c->mem, &r->group, opts->gvr.group ? opts->gvr.group : "") ||
        !dup_opt(c->mem, &r->version, opts->gvr.version) ||
        !dup_opt(c->mem, &r->resource, opts->gvr.resource) ||
        !dup_opt(c->mem, &r->ns, opts->ns) ||
        !dup_opt(c->mem, &r->label, opts->label_selector) ||
        !dup_opt(c->mem, &r->field, opts->field_selector)) {
        reflector_free(r);
        return DRA_ENOMEM;
    }
    if (pthread_create(&r->thread, NULL, reflector_main, r) != 0) {
        reflector_free(r);
        return DRA_EIO;
    }
    *out = r;
    return DRA_OK;
}

int dra_reflector_synced(const dra_reflector *r)
{
    return r ? atomic_load(&((dra_reflector *)r)->synced) : 0;
}

void dra_reflector_stop(dra_reflector *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->lock);
    r->stop = 1;
    if (r->cur)
        dra_watch_cancel(r->cur);
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
    pthread_join(r->thread, NULL);
    reflector_free(r);
}
