/*
 * extres.c: extended resources backed by DRA (KEP-5004, DRAExtendedResource,
 * as kube-scheduler 1.34/1.35 does it). A pod asking `nvidia.com/gpu: 1`
 * in a container's resources, on a node whose allocatable does not list
 * that resource, gets one special ResourceClaim with a request
 * container-I-request-J per container and resource, allocated from the
 * DeviceClass whose spec.extendedResourceName names it (or whose implicit
 * name deviceclass.resource.kubernetes.io/<class> does).
 */
#include <stdio.h>
#include <string.h>

#include "sched_int.h"

/* v1helper.IsExtendedResourceName (not native: has a domain outside
 * kubernetes.io; not a quota "requests." name) or the implicit class form. */
int sched_is_dra_ext_name(const char *r)
{
    if (!strncmp(r, SC_CLASS_PREFIX, strlen(SC_CLASS_PREFIX)))
        return 1;
    if (!strchr(r, '/') || strstr(r, "kubernetes.io/") || !strncmp(r, "requests.", 9))
        return 0;
    return 1;
}

const char *sched_ext_class(sc_core *c, const char *r)
{
    const sc_obj *best = NULL;
    size_t plen = strlen(SC_CLASS_PREFIX);
    for (size_t i = 0; i < c->classes.n; i++) {
        const sc_obj *o = c->classes.entries[i].val;
        const char *name;
        int cmp;
        if (!c->classes.entries[i].key)
            continue;
        name = o->obj->meta.name ? o->obj->meta.name : "";
        if (o->ext_name ? strcmp(o->ext_name, r)
                        : (strncmp(r, SC_CLASS_PREFIX, plen) || strcmp(r + plen, name)))
            continue;
        if (!best) {
            best = o;
            continue;
        }
        /* Newest first; RFC 3339 UTC times of one format sort as text. */
        cmp = strcmp(o->created ? o->created : "", best->created ? best->created : "");
        if (cmp > 0 || (cmp == 0 && strcmp(name, best->obj->meta.name) < 0))
            best = o;
    }
    return best ? best->obj->meta.name : NULL;
}

int sched_ext_wanted(sc_core *c, const sc_podinfo *p)
{
    for (size_t i = 0; i < p->nereqs; i++)
        if (sched_ext_class(c, p->ereqs[i].resource))
            return 1;
    return 0;
}

dra_err sched_ext_spec(sc_core *c, const sc_podinfo *p, const sc_node *n, dra_arena *ar,
                       dra_claim_spec **out, const char **what)
{
    dra_claim_spec *s;
    dra_device_request *rq;
    size_t k = 0;
    *out = NULL;
    *what = NULL;
    if (!p->nereqs)
        return DRA_OK;
    s = dra_arena_zalloc(ar, sizeof *s);
    rq = dra_arena_array(ar, p->nereqs + 1, sizeof *rq);
    if (!s || !rq)
        return DRA_ENOMEM;
    for (size_t i = 0; i < p->nereqs; i++) {
        const sc_ereq *e = &p->ereqs[i];
        const char *cls;
        dra_device_request_spec *x;
        if (n && sched_node_has_scalar(n, e->resource))
            continue; /* a device plugin on the node provides it */
        if (!(cls = sched_ext_class(c, e->resource))) {
            *what = e->resource;
            return DRA_ENOTFOUND;
        }
        if (!(x = dra_arena_zalloc(ar, sizeof *x)))
            return DRA_ENOMEM;
        x->device_class_name = cls;
        x->allocation_mode = "ExactCount";
        x->count = e->count;
        x->count_set = 1;
        rq[k].name = dra_arena_sprintf(ar, "container-%u-request-%u", e->container, e->ridx);
        rq[k].exactly = x;
        if (!rq[k++].name)
            return DRA_ENOMEM;
    }
    if (!k)
        return DRA_OK;
    s->requests = rq;
    s->n_requests = k;
    s->requests_set = 1;
    *out = s;
    return DRA_OK;
}

static dra_doc *str_doc(dra_arena *ar, const char *s)
{
    return dra_doc_new_string(ar, s ? s : "", s ? strlen(s) : 0);
}

dra_doc *sched_ext_status_doc(dra_arena *ar, const sc_podinfo *p, const dra_claim_spec *spec,
                              const char *claim_name)
{
    dra_doc *st = dra_doc_new_map(ar, 2), *maps = dra_doc_new_list(ar, spec->n_requests);
    if (!st || !maps)
        return NULL;
    for (size_t i = 0; i < spec->n_requests; i++) {
        const char *rn = spec->requests[i].name;
        for (size_t j = 0; j < p->nereqs; j++) {
            const sc_ereq *e = &p->ereqs[j];
            char want[64];
            dra_doc *m;
            snprintf(want, sizeof want, "container-%u-request-%u", e->container, e->ridx);
            if (strcmp(want, rn))
                continue;
            if (!(m = dra_doc_new_map(ar, 3)) ||
                dra_doc_map_set(ar, m, "containerName", str_doc(ar, e->container_name)) ||
                dra_doc_map_set(ar, m, "resourceName", str_doc(ar, e->resource)) ||
                dra_doc_map_set(ar, m, "requestName", str_doc(ar, rn)) ||
                dra_doc_list_push(ar, maps, m))
                return NULL;
        }
    }
    if (dra_doc_map_set(ar, st, "requestMappings", maps) ||
        dra_doc_map_set(ar, st, "resourceClaimName", str_doc(ar, claim_name)))
        return NULL;
    return st;
}
