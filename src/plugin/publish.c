/*
 * plugin/publish.c: this node's ResourceSlices through the cluster
 * interface, as the kubelet plugin helper's ResourceSlice controller
 * keeps them: pool = node name, nodeName set, an ownerReference to the
 * Node (controller), generateName <node>-gpu.nvidia.com-, the pool
 * generation bumped whenever the content changes and resourceSliceCount
 * equal to the number of slices; existing slices are updated in place,
 * missing ones created, surplus ones deleted. Device health shows as
 * device taints (NVIDIA's main branch) or, with DRADeviceTaints off, as
 * unhealthy devices left out (25.12).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugin_int.h"

static int sick(const plugin_devstate *d)
{
    for (int i = 0; i < d->n_taints; i++)
        if (strcmp(d->taints[i].effect, "NoSchedule") == 0)
            return 1;
    return 0;
}

/* Adds taints to (or drops unhealthy devices from) |s|, under p->mu. */
static dra_err apply_health(dra_plugin *p, dra_arena *a, dra_resource_slice_spec *s)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n_devices; i++) {
        dra_device *dev = &s->devices[i];
        plugin_devstate *st = plugin_dev_find(p, dev->name);
        if (st && st->n_taints) {
            if (!p->o.gates.device_taints) {
                if (sick(st))
                    continue;
            } else {
                dra_device_taint *t = dra_arena_array(a, (size_t)st->n_taints, sizeof(*t));
                if (!t)
                    return DRA_ENOMEM;
                for (int j = 0; j < st->n_taints; j++) {
                    t[j].key = dra_arena_strdup(a, st->taints[j].key);
                    t[j].value = st->taints[j].value[0]
                                     ? dra_arena_strdup(a, st->taints[j].value)
                                     : NULL;
                    t[j].effect = st->taints[j].effect;
                    t[j].time_added = dra_arena_strdup(a, st->taints[j].time_added);
                }
                dev->taints = t;
                dev->n_taints = (size_t)st->n_taints;
            }
        }
        s->devices[k++] = *dev;
    }
    s->n_devices = k;
    return DRA_OK;
}

/* discovery's /version gitVersion decides the DynamicMIG layout. */
static int split_counters(dra_plugin *p, dra_arena *a)
{
    if (!p->o.cluster)
        return 1;
    dra_cluster_req req = {"GET", "/version", NULL, NULL, NULL, 0};
    dra_doc *v = NULL;
    if (dra_cluster_do(p->o.cluster, &req, a, &v, NULL) != DRA_OK)
        return 1;
    const char *gv = dra_obj_str(v, "gitVersion");
    int r = gv ? dra_gpu_split_counters(gv) : -1;
    return r < 0 ? 1 : r;
}

dra_err plugin_slices(dra_plugin *p, dra_arena *a, dra_resource_slice_spec **out, size_t *n,
                      dra_diag *d)
{
    dra_gpu_slice_opts o;
    memset(&o, 0, sizeof(o));
    o.node_name = p->o.node_name;
    o.dynamic_mig = p->o.gates.dynamic_mig;
    o.split_counters = o.dynamic_mig ? split_counters(p, a) : 0;
    dra_err e = dra_gpu_slices(p->inv, &o, a, out, n, d);
    pthread_mutex_lock(&p->mu);
    for (size_t i = 0; e == DRA_OK && i < *n; i++)
        e = apply_health(p, a, &(*out)[i]);
    pthread_mutex_unlock(&p->mu);
    return e;
}

/* ---- the API side ------------------------------------------------------------------- */

typedef struct existing {
    dra_doc **items;
    size_t n;
    int64_t max_gen;
} existing;

static int cmp_name(const void *x, const void *y)
{
    const char *a = dra_obj_name(*(dra_doc *const *)x), *b = dra_obj_name(*(dra_doc *const *)y);
    return strcmp(a ? a : "", b ? b : "");
}

static int ours(dra_plugin *p, const dra_doc *item)
{
    const char *drv = dra_obj_str(item, "spec.driver");
    const char *pool = dra_obj_str(item, "spec.pool.name");
    const char *node = dra_obj_str(item, "spec.nodeName");
    return drv && strcmp(drv, DRA_PLUGIN_DRIVER) == 0 && pool &&
           strcmp(pool, p->o.node_name) == 0 && node && strcmp(node, p->o.node_name) == 0;
}

static dra_err list_ours(dra_plugin *p, dra_arena *a, existing *ex, dra_diag *d)
{
    char sel[512];
    snprintf(sel, sizeof(sel), "spec.nodeName=%s,spec.driver=%s", p->o.node_name,
             DRA_PLUGIN_DRIVER);
    dra_list_opts lo;
    memset(&lo, 0, sizeof(lo));
    lo.field_selector = sel;
    dra_doc *list = NULL;
    dra_kstatus st;
    memset(&st, 0, sizeof(st));
    dra_err e = dra_cluster_list_all(p->o.cluster, &DRA_GVR_SLICES, NULL, &lo, a, &list, NULL,
                                     &st);
    if (e == DRA_EINVAL || e == DRA_EUNSUPPORTED) { /* no such field selector here */
        lo.field_selector = NULL;
        e = dra_cluster_list_all(p->o.cluster, &DRA_GVR_SLICES, NULL, &lo, a, &list, NULL, &st);
    }
    if (e != DRA_OK) {
        dra_diag_add(d, "", 0, 0, "list ResourceSlices: %s",
                     st.message[0] ? st.message : dra_strerror(e));
        return e;
    }
    const dra_doc *items = dra_doc_get(list, "items");
    size_t n = items && items->kind == DRA_DOC_LIST ? items->u.list.n : 0;
    ex->items = dra_arena_array(a, n ? n : 1, sizeof(dra_doc *));
    if (!ex->items)
        return DRA_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        dra_doc *it = items->u.list.items[i];
        if (!ours(p, it))
            continue;
        ex->items[ex->n++] = it;
        const dra_doc *g = dra_doc_get(dra_doc_get(dra_doc_get(it, "spec"), "pool"),
                                       "generation");
        if (g && g->kind == DRA_DOC_INT && g->u.i > ex->max_gen)
            ex->max_gen = g->u.i;
    }
    qsort(ex->items, ex->n, sizeof(dra_doc *), cmp_name);
    return DRA_OK;
}

/* The ownerReference to this node's Node object; none when the Node
 * cannot be read (the slice is still published: the kubelet's own
 * cleanup covers it). */
static dra_owner_ref *owner(dra_plugin *p, dra_arena *a)
{
    dra_doc *node = NULL;
    if (dra_cluster_get(p->o.cluster, &DRA_GVR_NODES, NULL, p->o.node_name, a, &node, NULL) !=
            DRA_OK ||
        !dra_obj_uid(node))
        return NULL;
    dra_owner_ref *o = dra_arena_zalloc(a, sizeof(*o));
    if (!o)
        return NULL;
    o->api_version = "v1";
    o->kind = "Node";
    o->name = p->o.node_name;
    o->uid = dra_arena_strdup(a, dra_obj_uid(node));
    o->controller = DRA_TRI_TRUE;
    return o;
}

static dra_doc *slice_doc(dra_plugin *p, dra_arena *a, dra_resource_slice_spec *spec,
                          dra_owner_ref *own, const dra_doc *old)
{
    dra_object *obj = dra_api_object_new(a, DRA_KIND_RESOURCE_SLICE);
    if (!obj)
        return NULL;
    obj->meta.generate_name = dra_arena_sprintf(a, "%s-%s-", p->o.node_name, DRA_PLUGIN_DRIVER);
    if (old) {
        obj->meta.name = dra_obj_name(old);
        obj->meta.resource_version = dra_obj_rv(old);
        obj->meta.uid = dra_obj_uid(old);
    }
    if (own) {
        obj->meta.owner_refs = own;
        obj->meta.n_owner_refs = 1;
    }
    obj->u.slice.spec = *spec;
    dra_doc *doc = NULL;
    return dra_api_encode(a, obj, &doc) == DRA_OK ? doc : NULL;
}

static int same_spec(const dra_doc *a, const dra_doc *b)
{
    return dra_doc_equal(dra_doc_get(a, "spec"), dra_doc_get(b, "spec"));
}

/* Deletes |slice|; one already gone is no error, another failure is
 * added to |d| with the server's message. */
static dra_err delete_slice(dra_plugin *p, dra_arena *a, const dra_doc *slice, dra_diag *d)
{
    dra_kstatus st;
    memset(&st, 0, sizeof(st));
    dra_err e = dra_cluster_delete(p->o.cluster, &DRA_GVR_SLICES, NULL, dra_obj_name(slice),
                                   NULL, a, NULL, &st);
    if (e == DRA_ENOTFOUND)
        return DRA_OK;
    if (e != DRA_OK)
        dra_diag_add(d, "", 0, 0, "delete ResourceSlice %s: %s", dra_obj_name(slice),
                     st.message[0] ? st.message : dra_strerror(e));
    return e;
}

static dra_err sync_slices(dra_plugin *p, dra_arena *a, dra_resource_slice_spec *want,
                           size_t n, dra_diag *d)
{
    existing ex;
    memset(&ex, 0, sizeof(ex));
    dra_err e = list_ours(p, a, &ex, d);
    if (e != DRA_OK)
        return e;
    dra_owner_ref *own = owner(p, a);
    /* Unchanged content at the current generation: nothing to do. */
    int same = ex.n == n;
    for (size_t i = 0; same && i < n; i++) {
        want[i].pool.generation = ex.max_gen;
        want[i].pool.resource_slice_count = (int64_t)n;
        dra_doc *doc = slice_doc(p, a, &want[i], own, ex.items[i]);
        if (!doc)
            return DRA_ENOMEM;
        same = same_spec(doc, ex.items[i]);
    }
    if (same)
        return DRA_OK;
    dra_kstatus st;
    for (size_t i = 0; i < n && e == DRA_OK; i++) {
        want[i].pool.generation = ex.max_gen + 1;
        want[i].pool.resource_slice_count = (int64_t)n;
        const dra_doc *old = i < ex.n ? ex.items[i] : NULL;
        dra_doc *doc = slice_doc(p, a, &want[i], own, old);
        if (!doc)
            return DRA_ENOMEM;
        memset(&st, 0, sizeof(st));
        e = old ? dra_cluster_update(p->o.cluster, &DRA_GVR_SLICES, NULL, dra_obj_name(old),
                                     NULL, doc, a, NULL, &st)
                : dra_cluster_create(p->o.cluster, &DRA_GVR_SLICES, NULL, doc, a, NULL, &st);
        if (e != DRA_OK)
            dra_diag_add(d, "", 0, 0, "%s ResourceSlice: %s", old ? "update" : "create",
                         st.message[0] ? st.message : dra_strerror(e));
    }
    for (size_t i = n; i < ex.n && e == DRA_OK; i++)
        e = delete_slice(p, a, ex.items[i], d);
    return e;
}

dra_err plugin_publish(dra_plugin *p, dra_diag *d)
{
    if (!p->o.cluster)
        return DRA_OK;
    dra_arena a;
    dra_arena_init(&a, p->mem);
    pthread_mutex_lock(&p->pub_mu);
    dra_resource_slice_spec *want;
    size_t n;
    dra_err e = plugin_slices(p, &a, &want, &n, d);
    /* A conflict means someone else wrote meanwhile: read again, retry. */
    for (int attempt = 0; e == DRA_OK && attempt < 5; attempt++) {
        e = sync_slices(p, &a, want, n, d);
        if (e != DRA_ECONFLICT)
            break;
        dra_diag_clear(d);
        e = DRA_OK;
    }
    if (e == DRA_OK)
        p->published = 1;
    pthread_mutex_unlock(&p->pub_mu);
    dra_arena_fini(&a);
    return e;
}

dra_err dra_plugin_remove_slices(dra_plugin *p, dra_diag *d)
{
    if (!p->o.cluster)
        return DRA_OK;
    dra_arena a;
    dra_arena_init(&a, p->mem);
    pthread_mutex_lock(&p->pub_mu);
    existing ex;
    memset(&ex, 0, sizeof(ex));
    dra_err e = list_ours(p, &a, &ex, d);
    for (size_t i = 0; e == DRA_OK && i < ex.n; i++)
        e = delete_slice(p, &a, ex.items[i], d);
    p->published = 0;
    pthread_mutex_unlock(&p->pub_mu);
    dra_arena_fini(&a);
    return e;
}

/* ---- the publisher thread ------------------------------------------------------------
 * Publishing never blocks startup or the health thread: requests mark
 * the slices dirty and wake this thread, which publishes and retries
 * failures with a backoff from 1 s up to 30 s (the API server may not
 * be there yet, as in NVIDIA's helper, whose controller retries too). */

static void *publisher_main(void *arg)
{
    dra_plugin *p = arg;
    int backoff_ms = 0;
    dra_diag d;
    dra_diag_init(&d, p->mem);
    pthread_mutex_lock(&p->mu);
    while (!p->pub_stop) {
        if (!p->pub_dirty) {
            pthread_cond_wait(&p->pub_cond, &p->mu);
            continue;
        }
        p->pub_dirty = 0;
        pthread_mutex_unlock(&p->mu);
        dra_diag_clear(&d);
        dra_err e = plugin_publish(p, &d);
        if (e != DRA_OK)
            plugin_log(p, "publishing ResourceSlices failed (retrying): %s",
                       dra_diag_first(&d) ? dra_diag_first(&d) : dra_strerror(e));
        else if (backoff_ms)
            plugin_log(p, "ResourceSlices published");
        pthread_mutex_lock(&p->mu);
        if (e == DRA_OK) {
            backoff_ms = 0;
            continue;
        }
        p->pub_dirty = 1;
        backoff_ms = backoff_ms ? (backoff_ms * 2 > 30000 ? 30000 : backoff_ms * 2) : 1000;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        dra_timespec_add_ms(&ts, backoff_ms);
        while (!p->pub_stop && pthread_cond_timedwait(&p->pub_cond, &p->mu, &ts) == 0)
            ;
    }
    pthread_mutex_unlock(&p->mu);
    dra_diag_fini(&d);
    return NULL;
}

void plugin_publish_request(dra_plugin *p)
{
    pthread_mutex_lock(&p->mu);
    p->pub_dirty = 1;
    pthread_cond_broadcast(&p->pub_cond);
    pthread_mutex_unlock(&p->mu);
}

dra_err plugin_publisher_start(dra_plugin *p, dra_diag *d)
{
    if (!p->o.cluster)
        return DRA_OK;
    p->pub_stop = 0;
    p->pub_dirty = 1;
    if (pthread_create(&p->pub_thread, NULL, publisher_main, p) != 0) {
        dra_diag_add(d, "", 0, 0, "cannot start the publisher thread");
        return DRA_EIO;
    }
    p->pub_started = 1;
    return DRA_OK;
}

void plugin_publisher_stop(dra_plugin *p)
{
    if (!p->pub_started)
        return;
    pthread_mutex_lock(&p->mu);
    p->pub_stop = 1;
    pthread_cond_broadcast(&p->pub_cond);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->pub_thread, NULL);
    p->pub_started = 0;
}
