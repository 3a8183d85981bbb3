/*
 * model.c: a slice's allocator model copied on its own, every string
 * with it (each distinct string once), so the cache keeps a ResourceSlice
 * as the allocator sees it and drops the typed object it was built from:
 * about a third of a slice's memory, with 5,000 nodes' slices held.
 */
#include <string.h>

#include "sched_int.h"

typedef struct mcopy {
    dra_arena *ar;
    dra_map strs; /* source text -> copy */
    int oom;
} mcopy;

static const char *cs(mcopy *x, const char *s)
{
    size_t len;
    char *r;
    if (!s)
        return NULL;
    len = strlen(s);
    if ((r = dra_map_get(&x->strs, s, len)))
        return r;
    if (!(r = dra_arena_strndup(x->ar, s, len)) || dra_map_put(&x->strs, r, len, r)) {
        x->oom = 1;
        return NULL;
    }
    return r;
}

static void *dup(mcopy *x, const void *p, size_t n, size_t size)
{
    void *r;
    if (!p || !n)
        return NULL;
    if (!(r = dra_arena_array(x->ar, n, size))) {
        x->oom = 1;
        return NULL;
    }
    return memcpy(r, p, n * size);
}

static const char *const *strv(mcopy *x, const char *const *v, size_t n)
{
    const char **r = dup(x, v, n, sizeof *v);
    for (size_t i = 0; r && i < n; i++)
        r[i] = cs(x, v[i]);
    return r;
}

static void reqs(mcopy *x, const dra_alloc_ns_req **v, size_t n)
{
    dra_alloc_ns_req *r = dup(x, *v, n, sizeof **v);
    for (size_t i = 0; r && i < n; i++) {
        r[i].key = cs(x, r[i].key);
        r[i].values = strv(x, r[i].values, r[i].nvalues);
    }
    *v = r;
}

static const dra_alloc_node_selector *selector(mcopy *x, const dra_alloc_node_selector *s)
{
    dra_alloc_node_selector *r;
    dra_alloc_ns_term *t;
    if (!s || !(r = dup(x, s, 1, sizeof *s)))
        return NULL;
    t = dup(x, s->terms, s->nterms, sizeof *s->terms);
    for (size_t i = 0; t && i < s->nterms; i++) {
        reqs(x, &t[i].exprs, t[i].nexprs);
        reqs(x, &t[i].fields, t[i].nfields);
    }
    r->terms = t;
    return r;
}

static const dra_alloc_counter_set *counter_sets(mcopy *x, const dra_alloc_counter_set *v, size_t n)
{
    dra_alloc_counter_set *r = dup(x, v, n, sizeof *v);
    for (size_t i = 0; r && i < n; i++) {
        dra_alloc_counter *c = dup(x, r[i].counters, r[i].ncounters, sizeof *c);
        for (size_t k = 0; c && k < r[i].ncounters; k++)
            c[k].name = cs(x, c[k].name);
        r[i].name = cs(x, r[i].name);
        r[i].counters = c;
    }
    return r;
}

static void attr_copy(mcopy *x, dra_cel_attr *a)
{
    const char *old = a->s;
    a->name = cs(x, a->name);
    a->s = cs(x, a->s);
    /* A version's pre-release and build parts point into its text. */
    if (a->kind == DRA_CEL_ATTR_VERSION && old && a->s) {
        if (a->version.pre)
            a->version.pre = a->s + (a->version.pre - old);
        if (a->version.build)
            a->version.build = a->s + (a->version.build - old);
    }
}

static void device_copy(mcopy *x, dra_alloc_device *d)
{
    dra_cel_attr *at = dup(x, d->attrs, d->nattrs, sizeof *d->attrs);
    dra_alloc_capacity *cp = dup(x, d->caps, d->ncaps, sizeof *d->caps);
    dra_alloc_taint *tn = dup(x, d->taints, d->ntaints, sizeof *d->taints);
    for (size_t i = 0; at && i < d->nattrs; i++)
        attr_copy(x, &at[i]);
    for (size_t i = 0; cp && i < d->ncaps; i++) {
        cp[i].name = cs(x, cp[i].name);
        cp[i].valid_values = dup(x, cp[i].valid_values, cp[i].nvalid_values, sizeof *cp[i].valid_values);
    }
    for (size_t i = 0; tn && i < d->ntaints; i++) {
        tn[i].key = cs(x, tn[i].key);
        tn[i].value = cs(x, tn[i].value);
    }
    d->name = cs(x, d->name);
    d->attrs = at;
    d->caps = cp;
    d->taints = tn;
    d->consumes = counter_sets(x, d->consumes, d->nconsumes);
    d->binding_conditions = strv(x, d->binding_conditions, d->nbinding_conditions);
    d->binding_failure_conditions = strv(x, d->binding_failure_conditions,
                                         d->nbinding_failure_conditions);
    d->node_name = cs(x, d->node_name);
    d->node_selector = selector(x, d->node_selector);
}

dra_err sched_slice_copy(dra_arena *ar, const dra_alloc_slice *in, dra_alloc_slice **out)
{
    mcopy x;
    dra_alloc_slice *s;
    dra_alloc_device *dv;
    memset(&x, 0, sizeof x);
    x.ar = ar;
    dra_map_init(&x.strs, ar->mem);
    *out = NULL;
    if (!(s = dup(&x, in, 1, sizeof *in)))
        goto done;
    dv = dup(&x, in->devices, in->ndevices, sizeof *in->devices);
    for (size_t i = 0; dv && i < in->ndevices; i++)
        device_copy(&x, &dv[i]);
    s->devices = dv;
    s->name = cs(&x, in->name);
    s->driver = cs(&x, in->driver);
    s->pool = cs(&x, in->pool);
    s->node_name = cs(&x, in->node_name);
    s->node_selector = selector(&x, in->node_selector);
    s->shared_counters = counter_sets(&x, in->shared_counters, in->nshared_counters);
done:
    dra_map_fini(&x.strs);
    if (x.oom || !s)
        return DRA_ENOMEM;
    *out = s;
    return DRA_OK;
}
