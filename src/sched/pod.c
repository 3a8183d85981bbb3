/*
 * pod.c: the parts of Pods and Nodes the scheduler and the claim
 * controller use, read straight from the watch documents into compact
 * structs (a Pod's full typed form would copy every unknown field). Also
 * the interned-string pool and resource arithmetic.
 */
#include <stdlib.h>
#include <string.h>

#include "sched_int.h"

/* ---- interned strings ----------------------------------------------------- */

void sched_strs_init(sc_strs *s, const dra_mem *mem)
{
    dra_arena_init(&s->ar, mem);
    dra_map_init(&s->m, mem);
}

void sched_strs_fini(sc_strs *s)
{
    dra_map_fini(&s->m);
    dra_arena_fini(&s->ar);
}

const char *sched_str(sc_strs *s, const char *str)
{
    size_t len;
    char *p;
    if (!str)
        return NULL;
    len = strlen(str);
    if ((p = dra_map_get(&s->m, str, len)))
        return p;
    if (!(p = dra_arena_strndup(&s->ar, str, len)) || dra_map_put(&s->m, p, len, p))
        return NULL;
    return p;
}

/* ---- resources ---------------------------------------------------------------- */

int64_t sched_res_scalar(const sc_res *r, const char *name)
{
    for (size_t i = 0; i < r->nsc; i++)
        if (r->sc[i].name == name || strcmp(r->sc[i].name, name) == 0)
            return r->sc[i].v;
    return 0;
}

dra_err sched_res_add(const dra_mem *mem, sc_res *acc, const sc_res *r, int sign)
{
    acc->cpu_m += sign * r->cpu_m;
    acc->mem += sign * r->mem;
    acc->pods += sign * r->pods;
    for (size_t i = 0; i < r->nsc; i++) {
        size_t j = 0;
        while (j < acc->nsc && acc->sc[j].name != r->sc[i].name)
            j++;
        if (j == acc->nsc) {
            if (dra_grow(mem, (void **)&acc->sc, &acc->capsc, acc->nsc + 1, sizeof *acc->sc))
                return DRA_ENOMEM;
            acc->sc[acc->nsc].name = r->sc[i].name;
            acc->sc[acc->nsc++].v = 0;
        }
        acc->sc[j].v += sign * r->sc[i].v;
    }
    return DRA_OK;
}

void sched_res_fini(const dra_mem *mem, sc_res *r)
{
    if (r->capsc)
        dra_free(mem, r->sc);
    memset(r, 0, sizeof *r);
}

/* ---- document helpers ---------------------------------------------------------- */

static const char *dstr(const dra_doc *m, const char *key)
{
    const dra_doc *v = dra_doc_get(m, key);
    return v && v->kind == DRA_DOC_STRING ? v->u.str.s : NULL;
}

static const dra_doc *dlist(const dra_doc *m, const char *key)
{
    const dra_doc *v = dra_doc_get(m, key);
    return v && v->kind == DRA_DOC_LIST ? v : NULL;
}

static const dra_doc *dmap(const dra_doc *m, const char *key)
{
    const dra_doc *v = dra_doc_get(m, key);
    return v && v->kind == DRA_DOC_MAP ? v : NULL;
}

static const char *cp(dra_arena *ar, const char *s, int *oom)
{
    char *r;
    if (!s)
        return NULL;
    if (!(r = dra_arena_strdup(ar, s)))
        *oom = 1;
    return r;
}

static int qty_of(const dra_doc *v, dra_quantity *q)
{
    if (v->kind == DRA_DOC_INT) {
        *q = dra_quantity_from_int64(v->u.i, DRA_QTY_DECIMAL_SI);
        return 1;
    }
    return v->kind == DRA_DOC_STRING && dra_quantity_parse(v->u.str.s, v->u.str.len, q) == DRA_OK;
}

static int64_t qty_milli(dra_quantity q)
{
    q.scale += 3;
    return dra_quantity_value(&q);
}

/* Adds resource |name| = |v| to |r| (summing when |max| is 0, else
 * keeping the larger value), scalars interned. */
static int res_put(dra_arena *ar, sc_strs *strs, sc_res *r, const char *name,
                   const dra_quantity *q, int max)
{
    int64_t v;
    size_t i;
    if (!strcmp(name, "cpu")) {
        v = qty_milli(*q);
        r->cpu_m = max ? (v > r->cpu_m ? v : r->cpu_m) : r->cpu_m + v;
        return 1;
    }
    v = dra_quantity_value(q);
    if (!strcmp(name, "memory")) {
        r->mem = max ? (v > r->mem ? v : r->mem) : r->mem + v;
        return 1;
    }
    if (!strcmp(name, "pods")) {
        r->pods = max ? (v > r->pods ? v : r->pods) : r->pods + v;
        return 1;
    }
    if (!strcmp(name, "ephemeral-storage"))
        return 1; /* not checked */
    for (i = 0; i < r->nsc; i++)
        if (!strcmp(r->sc[i].name, name))
            break;
    if (i == r->nsc) {
        sc_scalar *n = dra_arena_array(ar, r->nsc + 1, sizeof *n);
        const char *in = sched_str(strs, name);
        if (!n || !in)
            return 0;
        if (r->nsc)
            memcpy(n, r->sc, r->nsc * sizeof *n);
        n[r->nsc].name = in;
        n[r->nsc].v = 0;
        r->sc = n;
        r->nsc++;
    }
    r->sc[i].v = max ? (v > r->sc[i].v ? v : r->sc[i].v) : r->sc[i].v + v;
    return 1;
}

/* Effective requests of one container: requests, and limits for the
 * resources that have no request (the apiserver's defaulting). */
static int container_res(dra_arena *ar, sc_strs *strs, const dra_doc *c, sc_res *out)
{
    const dra_doc *res = dmap(c, "resources");
    const dra_doc *req = res ? dmap(res, "requests") : NULL;
    const dra_doc *lim = res ? dmap(res, "limits") : NULL;
    dra_quantity q;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; req && i < req->u.map.n; i++)
        if (qty_of(req->u.map.m[i].val, &q) && !res_put(ar, strs, out, req->u.map.m[i].key, &q, 0))
            return 0;
    for (size_t i = 0; lim && i < lim->u.map.n; i++)
        if (!(req && dra_doc_get(req, lim->u.map.m[i].key)) && qty_of(lim->u.map.m[i].val, &q) &&
            !res_put(ar, strs, out, lim->u.map.m[i].key, &q, 0))
            return 0;
    return 1;
}

static int res_merge(dra_arena *ar, sc_strs *strs, sc_res *acc, const sc_res *r, int max)
{
    dra_quantity q;
    acc->cpu_m = max ? (r->cpu_m > acc->cpu_m ? r->cpu_m : acc->cpu_m) : acc->cpu_m + r->cpu_m;
    acc->mem = max ? (r->mem > acc->mem ? r->mem : acc->mem) : acc->mem + r->mem;
    for (size_t i = 0; i < r->nsc; i++) {
        q = dra_quantity_from_int64(r->sc[i].v, DRA_QTY_DECIMAL_SI);
        if (!res_put(ar, strs, acc, r->sc[i].name, &q, max))
            return 0;
    }
    return 1;
}

/* ---- extended resources per container ------------------------------------------------ */

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* Records the DRA-capable extended requests of container |ci|. The index
 * of a resource is its position among the container's request names in
 * sorted order, as upstream numbers container-I-request-J. */
static int container_ereqs(sc_podinfo *p, sc_strs *strs, const dra_doc *c, uint32_t ci,
                           const sc_res *r)
{
    const dra_doc *res = dmap(c, "resources");
    const dra_doc *req = res ? dmap(res, "requests") : NULL;
    const dra_doc *lim = res ? dmap(res, "limits") : NULL;
    const char *names[128];
    size_t nn = 0;
    int oom = 0;
    for (size_t i = 0; req && i < req->u.map.n && nn < 128; i++)
        names[nn++] = req->u.map.m[i].key;
    for (size_t i = 0; lim && i < lim->u.map.n && nn < 128; i++)
        if (!(req && dra_doc_get(req, lim->u.map.m[i].key)))
            names[nn++] = lim->u.map.m[i].key;
    qsort(names, nn, sizeof *names, cmp_str);
    for (size_t j = 0; j < nn; j++) {
        int64_t v = sched_res_scalar(r, names[j]);
        sc_ereq *e;
        if (v <= 0 || !sched_is_dra_ext_name(names[j]))
            continue;
        e = dra_arena_array(&p->ar, p->nereqs + 1, sizeof *e);
        if (!e)
            return 0;
        if (p->nereqs)
            memcpy(e, p->ereqs, p->nereqs * sizeof *e);
        p->ereqs = e;
        e = &p->ereqs[p->nereqs++];
        e->container = ci;
        e->ridx = (uint32_t)j;
        e->container_name = cp(&p->ar, dstr(c, "name"), &oom);
        e->resource = sched_str(strs, names[j]);
        e->count = v;
        if (oom || !e->resource)
            return 0;
    }
    return 1;
}

/* Requests as resourcehelper.PodRequests computes them without pod-level
 * resources: the larger of the containers' sum and each init container,
 * plus overhead; one pod. */
static int pod_requests(sc_podinfo *p, sc_strs *strs, const dra_doc *spec)
{
    const dra_doc *init = dlist(spec, "initContainers"), *ctrs = dlist(spec, "containers");
    const dra_doc *over = dmap(spec, "overhead");
    sc_res sum, mx, one;
    dra_quantity q;
    uint32_t ci = 0;
    memset(&sum, 0, sizeof sum);
    memset(&mx, 0, sizeof mx);
    for (size_t i = 0; init && i < init->u.list.n; i++, ci++) {
        if (!container_res(&p->ar, strs, init->u.list.items[i], &one) ||
            !res_merge(&p->ar, strs, &mx, &one, 1) ||
            !container_ereqs(p, strs, init->u.list.items[i], ci, &one))
            return 0;
    }
    for (size_t i = 0; ctrs && i < ctrs->u.list.n; i++, ci++) {
        if (!container_res(&p->ar, strs, ctrs->u.list.items[i], &one) ||
            !res_merge(&p->ar, strs, &sum, &one, 0) ||
            !container_ereqs(p, strs, ctrs->u.list.items[i], ci, &one))
            return 0;
    }
    if (!res_merge(&p->ar, strs, &sum, &mx, 1))
        return 0;
    for (size_t i = 0; over && i < over->u.map.n; i++)
        if (qty_of(over->u.map.m[i].val, &q) && !res_put(&p->ar, strs, &sum, over->u.map.m[i].key, &q, 0))
            return 0;
    sum.pods = 1;
    p->req = sum;
    return 1;
}

/* ---- node affinity ------------------------------------------------------------------- */

static int ns_op(const char *op, dra_alloc_nsop *out)
{
    static const char *const names[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    for (int i = 0; op && i < 6; i++)
        if (!strcmp(op, names[i])) {
            *out = (dra_alloc_nsop)i;
            return 1;
        }
    return 0;
}

static int ns_reqs(dra_arena *ar, const dra_doc *l, const dra_alloc_ns_req **out, size_t *n,
                   dra_diag *d)
{
    dra_alloc_ns_req *r;
    int oom = 0;
    *out = NULL;
    *n = 0;
    if (!l)
        return 1;
    if (!(r = dra_arena_array(ar, l->u.list.n + 1, sizeof *r)))
        return 0;
    for (size_t i = 0; i < l->u.list.n; i++) {
        const dra_doc *e = l->u.list.items[i], *vals = dlist(e, "values");
        const char **v = NULL;
        size_t nv = 0;
        if (!ns_op(dstr(e, "operator"), &r[i].op)) {
            dra_diag_add(d, "", 0, 0, "unknown node selector operator \"%s\"",
                         dstr(e, "operator") ? dstr(e, "operator") : "");
            return -1;
        }
        r[i].key = cp(ar, dstr(e, "key") ? dstr(e, "key") : "", &oom);
        if (vals) {
            if (!(v = dra_arena_array(ar, vals->u.list.n + 1, sizeof *v)))
                return 0;
            for (size_t j = 0; j < vals->u.list.n; j++)
                if (vals->u.list.items[j]->kind == DRA_DOC_STRING)
                    v[nv++] = cp(ar, vals->u.list.items[j]->u.str.s, &oom);
        }
        r[i].values = v;
        r[i].nvalues = nv;
        if (oom)
            return 0;
    }
    *out = r;
    *n = l->u.list.n;
    return 1;
}

/* spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution */
static int pod_affinity(sc_podinfo *p, const dra_doc *spec, dra_diag *d)
{
    const dra_doc *a = dmap(spec, "affinity"), *na = a ? dmap(a, "nodeAffinity") : NULL;
    const dra_doc *req = na ? dmap(na, "requiredDuringSchedulingIgnoredDuringExecution") : NULL;
    const dra_doc *terms = req ? dlist(req, "nodeSelectorTerms") : NULL;
    dra_alloc_node_selector *s;
    dra_alloc_ns_term *t;
    int r;
    if (!req)
        return 1;
    if (!(s = dra_arena_zalloc(&p->ar, sizeof *s)))
        return 0;
    if (terms) {
        if (!(t = dra_arena_array(&p->ar, terms->u.list.n + 1, sizeof *t)))
            return 0;
        for (size_t i = 0; i < terms->u.list.n; i++) {
            const dra_doc *term = terms->u.list.items[i];
            if ((r = ns_reqs(&p->ar, dlist(term, "matchExpressions"), &t[i].exprs, &t[i].nexprs, d)) <= 0 ||
                (r = ns_reqs(&p->ar, dlist(term, "matchFields"), &t[i].fields, &t[i].nfields, d)) <= 0)
                return r;
        }
        s->terms = t;
        s->nterms = terms->u.list.n;
    }
    p->affinity = s;
    return 1;
}

/* ---- pods ----------------------------------------------------------------------------- */

static int pod_tolerations(sc_podinfo *p, const dra_doc *spec)
{
    const dra_doc *l = dlist(spec, "tolerations");
    int oom = 0;
    if (!l)
        return 1;
    if (!(p->tols = dra_arena_array(&p->ar, l->u.list.n + 1, sizeof *p->tols)))
        return 0;
    for (size_t i = 0; i < l->u.list.n; i++) {
        const dra_doc *t = l->u.list.items[i];
        const char *op = dstr(t, "operator");
        sc_tol *x = &p->tols[p->ntols++];
        x->key = cp(&p->ar, dstr(t, "key"), &oom);
        x->value = cp(&p->ar, dstr(t, "value"), &oom);
        x->effect = cp(&p->ar, dstr(t, "effect"), &oom);
        x->exists = op && !strcmp(op, "Exists");
    }
    return !oom;
}

static int pod_claims(sc_podinfo *p, const dra_doc *spec, const dra_doc *status)
{
    const dra_doc *l = dlist(spec, "resourceClaims");
    const dra_doc *s = status ? dlist(status, "resourceClaimStatuses") : NULL;
    const dra_doc *ext = status ? dmap(status, "extendedResourceClaimStatus") : NULL;
    int oom = 0;
    if (l) {
        if (!(p->claims = dra_arena_array(&p->ar, l->u.list.n + 1, sizeof *p->claims)))
            return 0;
        for (size_t i = 0; i < l->u.list.n; i++) {
            const dra_doc *e = l->u.list.items[i];
            sc_pclaim *c = &p->claims[p->nclaims++];
            c->name = cp(&p->ar, dstr(e, "name") ? dstr(e, "name") : "", &oom);
            c->claim_name = cp(&p->ar, dstr(e, "resourceClaimName"), &oom);
            c->template_name = cp(&p->ar, dstr(e, "resourceClaimTemplateName"), &oom);
        }
    }
    if (s) {
        if (!(p->statuses = dra_arena_array(&p->ar, s->u.list.n + 1, sizeof *p->statuses)))
            return 0;
        for (size_t i = 0; i < s->u.list.n; i++) {
            const dra_doc *e = s->u.list.items[i];
            sc_pstatus *x = &p->statuses[p->nstatuses++];
            x->name = cp(&p->ar, dstr(e, "name") ? dstr(e, "name") : "", &oom);
            x->claim = cp(&p->ar, dstr(e, "resourceClaimName"), &oom);
        }
    }
    if (ext)
        p->ext_claim = cp(&p->ar, dstr(ext, "resourceClaimName"), &oom);
    return !oom;
}

static int pod_conditions(sc_podinfo *p, const dra_doc *status)
{
    const dra_doc *l = status ? dlist(status, "conditions") : NULL;
    int oom = 0;
    for (size_t i = 0; l && i < l->u.list.n; i++) {
        const dra_doc *c = l->u.list.items[i];
        const char *t = dstr(c, "type"), *s = dstr(c, "status");
        if (t && !strcmp(t, "PodScheduled") && s && !strcmp(s, "False"))
            p->cond_msg = cp(&p->ar, dstr(c, "message") ? dstr(c, "message") : "", &oom);
    }
    return !oom;
}

static int pod_node_selector(sc_podinfo *p, const dra_doc *spec)
{
    const dra_doc *m = dmap(spec, "nodeSelector");
    int oom = 0;
    if (!m)
        return 1;
    if (!(p->node_selector = dra_arena_array(&p->ar, m->u.map.n + 1, sizeof *p->node_selector)))
        return 0;
    for (size_t i = 0; i < m->u.map.n; i++) {
        const dra_doc *v = m->u.map.m[i].val;
        p->node_selector[i].key = cp(&p->ar, m->u.map.m[i].key, &oom);
        p->node_selector[i].value = cp(&p->ar, v->kind == DRA_DOC_STRING ? v->u.str.s : "", &oom);
    }
    p->nnode_selector = m->u.map.n;
    return !oom;
}

static int pod_meta(sc_podinfo *p, const dra_doc *doc)
{
    const dra_doc *md = dmap(doc, "metadata"), *spec = dmap(doc, "spec");
    const dra_doc *status = dmap(doc, "status"), *gates = spec ? dlist(spec, "schedulingGates") : NULL;
    const char *sn = spec ? dstr(spec, "schedulerName") : NULL;
    const char *nn = spec ? dstr(spec, "nodeName") : NULL;
    int oom = 0;
    p->ns = cp(&p->ar, dstr(md, "namespace") ? dstr(md, "namespace") : "default", &oom);
    p->name = cp(&p->ar, dstr(md, "name"), &oom);
    p->uid = cp(&p->ar, dstr(md, "uid") ? dstr(md, "uid") : "", &oom);
    p->rv = cp(&p->ar, dstr(md, "resourceVersion"), &oom);
    p->deleting = dra_doc_get(md, "deletionTimestamp") &&
                  dra_doc_get(md, "deletionTimestamp")->kind == DRA_DOC_STRING;
    p->scheduler_name = cp(&p->ar, sn && *sn ? sn : DRA_SCHED_DEFAULT_NAME, &oom);
    p->node_name = nn && *nn ? cp(&p->ar, nn, &oom) : NULL;
    p->phase = cp(&p->ar, status ? dstr(status, "phase") : NULL, &oom);
    p->gated = gates && gates->u.list.n > 0;
    return !oom;
}

dra_err sched_podinfo_new(const dra_mem *mem, sc_strs *strs, const dra_doc *doc,
                          sc_podinfo **out, dra_diag *d)
{
    const dra_doc *spec = dmap(doc, "spec"), *status = dmap(doc, "status");
    sc_podinfo *p = dra_calloc(mem, 1, sizeof *p);
    int r;
    *out = NULL;
    if (!p)
        return DRA_ENOMEM;
    dra_arena_init(&p->ar, mem);
    if (!pod_meta(p, doc))
        goto oom;
    if (!p->name || !dmap(doc, "metadata")) {
        dra_diag_add(d, "", 0, 0, "pod without metadata.name");
        sched_podinfo_free(mem, p);
        return DRA_EINVALID;
    }
    if (spec) {
        if ((r = pod_affinity(p, spec, d)) < 0) {
            sched_podinfo_free(mem, p);
            return DRA_EINVALID;
        }
        if (!r || !pod_tolerations(p, spec) || !pod_node_selector(p, spec) ||
            !pod_requests(p, strs, spec))
            goto oom;
    } else {
        p->req.pods = 1;
    }
    if (!pod_claims(p, spec, status) || !pod_conditions(p, status))
        goto oom;
    *out = p;
    return DRA_OK;
oom:
    sched_podinfo_free(mem, p);
    return DRA_ENOMEM;
}

void sched_podinfo_free(const dra_mem *mem, sc_podinfo *p)
{
    if (!p)
        return;
    dra_arena_fini(&p->ar);
    dra_free(mem, p);
}

int sched_pod_terminal(const sc_podinfo *p)
{
    return p->phase && (!strcmp(p->phase, "Succeeded") || !strcmp(p->phase, "Failed"));
}

int sched_pod_done(const sc_podinfo *p)
{
    return sched_pod_terminal(p) || (p->deleting && !p->node_name);
}

dra_err sched_pod_claim_name(const sc_podinfo *p, const sc_pclaim *pc, const char **name)
{
    *name = NULL;
    if (pc->claim_name) {
        *name = pc->claim_name;
        return DRA_OK;
    }
    if (!pc->template_name)
        return DRA_EUNSUPPORTED;
    for (size_t i = 0; i < p->nstatuses; i++)
        if (!strcmp(p->statuses[i].name, pc->name)) {
            *name = p->statuses[i].claim;
            return DRA_OK;
        }
    return DRA_ENOTFOUND;
}

/* ---- nodes ------------------------------------------------------------------------------ */

static int node_taints(dra_arena *ar, const dra_doc *spec, sc_node *n)
{
    const dra_doc *l = spec ? dlist(spec, "taints") : NULL;
    int oom = 0;
    n->taints = NULL;
    n->ntaints = 0;
    if (!l)
        return 1;
    if (!(n->taints = dra_arena_array(ar, l->u.list.n + 1, sizeof *n->taints)))
        return 0;
    for (size_t i = 0; i < l->u.list.n; i++) {
        const dra_doc *t = l->u.list.items[i];
        sc_taint *x = &n->taints[n->ntaints++];
        x->key = cp(ar, dstr(t, "key") ? dstr(t, "key") : "", &oom);
        x->value = cp(ar, dstr(t, "value"), &oom);
        x->effect = cp(ar, dstr(t, "effect"), &oom);
    }
    return !oom;
}

dra_err sched_node_parse(sc_strs *strs, const dra_doc *doc, dra_arena *ar, dra_arena *lab_ar,
                         sc_node *n, dra_diag *d)
{
    const dra_doc *md = dmap(doc, "metadata"), *spec = dmap(doc, "spec");
    const dra_doc *status = dmap(doc, "status"), *labels = md ? dmap(md, "labels") : NULL;
    const dra_doc *alloc = status ? dmap(status, "allocatable") : NULL;
    const dra_doc *u = spec ? dra_doc_get(spec, "unschedulable") : NULL;
    dra_quantity q;
    int oom = 0;
    if (!md || !dstr(md, "name")) {
        dra_diag_add(d, "", 0, 0, "node without metadata.name");
        return DRA_EINVALID;
    }
    if (lab_ar) {
        n->labels = dra_arena_array(lab_ar, (labels ? labels->u.map.n : 0) + 1, sizeof *n->labels);
        if (!n->labels)
            return DRA_ENOMEM;
        n->nlabels = 0;
        for (size_t i = 0; labels && i < labels->u.map.n; i++) {
            const dra_doc *v = labels->u.map.m[i].val;
            n->labels[n->nlabels].key = cp(lab_ar, labels->u.map.m[i].key, &oom);
            n->labels[n->nlabels++].value =
                cp(lab_ar, v->kind == DRA_DOC_STRING ? v->u.str.s : "", &oom);
        }
    }
    if (!node_taints(ar, spec, n))
        return DRA_ENOMEM;
    n->unschedulable = u && u->kind == DRA_DOC_BOOL && u->u.b;
    memset(&n->alloc, 0, sizeof n->alloc);
    n->has_alloc = alloc != NULL;
    for (size_t i = 0; alloc && i < alloc->u.map.n; i++)
        if (qty_of(alloc->u.map.m[i].val, &q) && !res_put(ar, strs, &n->alloc, alloc->u.map.m[i].key, &q, 0))
            return DRA_ENOMEM;
    return oom ? DRA_ENOMEM : DRA_OK;
}
