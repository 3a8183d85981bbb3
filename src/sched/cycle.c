/*
 * cycle.c: one scheduling cycle, kube-scheduler's framework collapsed
 * into one pass. PreFilter resolves the pod's claims (generated names
 * from the pod status, ownership, allocations already made, device
 * classes) and the extended-resource claim; then nodes are visited best
 * score first (the scoring buckets of cache.c), each through the node
 * filters, the allocated claims' node selectors and the allocator with
 * every in-use and in-flight device counted; the first feasible node
 * wins (pods with firstAvailable requests look at more nodes and prefer
 * the best-ranked subrequests). When none fits, every node's reason goes
 * into the FitError histogram and the allocator explains the claims.
 */
#include <stdio.h>
#include <string.h>

#include "sched_int.h"

typedef struct cyc {
    sc_core *c;
    sc_pod *p;
    const sc_podinfo *in;
    sc_cycle *cy;
    dra_diag d;
    int k;                /* node-local devices a node needs at least */
    sc_node *pin;         /* the one node allocated claims allow, if known */
    int pin_none;         /* allocated claims pin different nodes */
    const dra_alloc_node_selector **sels; /* allocated claims' selectors */
    size_t nsels;
    int prio;             /* the pod has firstAvailable requests */
    size_t limit;         /* feasible nodes to look at for prio pods */
    int best_score;
    dra_alloc_outcome tmp;
    dra_arena scratch;    /* per-node special claim */
} cyc;

void sched_cycle_init(sc_cycle *cy, const dra_mem *mem)
{
    memset(cy, 0, sizeof *cy);
    dra_arena_init(&cy->ar, mem);
    dra_alloc_outcome_init(&cy->out, mem);
    dra_arena_init(&cy->ext_ar, mem);
    cy->ext = -1;
}

void sched_cycle_fini(sc_cycle *cy)
{
    dra_alloc_outcome_fini(&cy->out);
    dra_arena_fini(&cy->ext_ar);
    dra_arena_fini(&cy->ar);
}

static void set_rc(cyc *x, sc_rc rc, const char *wait, const char *fmt, const char *a,
                   const char *b)
{
    x->cy->rc = rc;
    x->cy->wait_claim = wait ? dra_arena_sprintf(&x->cy->ar, "%s/%s", x->in->ns, wait) : NULL;
    x->cy->message = dra_arena_sprintf(&x->cy->ar, fmt, a ? a : "", b ? b : "");
}

/* ---- PreFilter ------------------------------------------------------------------ */

static int reserved_for(const sc_claim *cl, const char *uid)
{
    const dra_claim_status *st = &cl->obj->u.claim.status;
    for (size_t i = 0; i < st->n_reserved_for; i++)
        if (st->reserved_for[i].uid && !strcmp(st->reserved_for[i].uid, uid))
            return 1;
    return 0;
}

/* The node a selector allows when it is one node by name. */
static const char *sel_node(const dra_alloc_node_selector *s)
{
    const dra_alloc_ns_term *t;
    if (!s || s->nterms != 1)
        return NULL;
    t = &s->terms[0];
    if (t->nexprs || t->nfields != 1 || strcmp(t->fields[0].key, "metadata.name") ||
        t->fields[0].op != DRA_ALLOC_NS_IN || t->fields[0].nvalues != 1)
        return NULL;
    return t->fields[0].values[0];
}

static int class_missing(cyc *x, const dra_claim_spec *spec)
{
    for (size_t i = 0; i < spec->n_requests; i++) {
        const dra_device_request *r = &spec->requests[i];
        size_t na = r->exactly ? 1 : r->n_first_available;
        for (size_t j = 0; j < na; j++) {
            const dra_device_request_spec *s = r->exactly ? r->exactly : &r->first_available[j];
            const char *cls = s->device_class_name ? s->device_class_name : "";
            if (dra_map_get(&x->c->classes, cls, strlen(cls)))
                continue;
            x->cy->rc = SC_RC_UNSCHED;
            x->cy->message = r->exactly
                ? dra_arena_sprintf(&x->cy->ar, "request %s: device class %s does not exist",
                                    r->name ? r->name : "", cls)
                : dra_arena_sprintf(&x->cy->ar, "request %s/%s: device class %s does not exist",
                                    r->name ? r->name : "", s->name ? s->name : "", cls);
            return 1;
        }
        x->prio |= r->n_first_available > 1;
    }
    return 0;
}

static int push_claim(cyc *x, const char *pc, sc_claim *cl)
{
    sc_cycle *cy = x->cy;
    sc_cclaim *v = dra_arena_array(&cy->ar, cy->nclaims + 1, sizeof *v);
    if (!v)
        return 0;
    if (cy->nclaims)
        memcpy(v, cy->claims, cy->nclaims * sizeof *v);
    cy->claims = v;
    v = &cy->claims[cy->nclaims++];
    v->pod_claim = pc;
    v->cl = cl;
    v->allocate = -1;
    return 1;
}

static int push_model(cyc *x, const dra_alloc_claim *m)
{
    sc_cycle *cy = x->cy;
    const dra_alloc_claim **v = dra_arena_array(&cy->ar, cy->nmodels + 2, sizeof *v);
    if (!v)
        return 0;
    if (cy->nmodels)
        memcpy(v, cy->models, cy->nmodels * sizeof *v);
    cy->models = v;
    cy->models[cy->nmodels++] = m;
    return 1;
}

/* An allocated claim: its node selector limits the nodes. 1 go on, 0
 * decided (a selector that cannot be read: rc set), -1 ENOMEM. */
static int allocated_claim(cyc *x, sc_cclaim *cc, const dra_allocation_result *res)
{
    const dra_alloc_node_selector *sel = NULL;
    const char *pin;
    dra_err err;
    cc->alloc = res;
    cc->reserve = !reserved_for(cc->cl, x->in->uid);
    dra_diag_clear(&x->d);
    err = dra_alloc_node_selector_from_api(&x->cy->ar, res->node_selector, &sel, &x->d);
    if (err == DRA_ENOMEM)
        return -1;
    if (err != DRA_OK) {
        x->cy->rc = SC_RC_ERROR;
        x->cy->message = dra_arena_sprintf(&x->cy->ar, "claim %s: allocation: %s", cc->cl->key,
                                           dra_diag_first(&x->d) ? dra_diag_first(&x->d)
                                                                 : dra_strerror(err));
        return 0;
    }
    cc->sel = sel;
    if (!sel)
        return 1;
    if ((pin = sel_node(sel))) {
        sc_node *n = dra_map_get(&x->c->nodes_by_name, pin, strlen(pin));
        if (x->pin && x->pin != n)
            x->pin_none = 1;
        x->pin = n;
        if (!n)
            x->pin_none = 1;
    }
    {
        const dra_alloc_node_selector **v = dra_arena_array(&x->cy->ar, x->nsels + 1, sizeof *v);
        if (!v)
            return -1;
        if (x->nsels)
            memcpy(v, x->sels, x->nsels * sizeof *v);
        x->sels = v;
        x->sels[x->nsels++] = sel;
    }
    return 1;
}

/* One pod claim: its claim resolved and checked, then noted as allocated
 * already or to be allocated. 1 go on, 0 decided (rc set), -1 ENOMEM. */
static int resolve_claim(cyc *x, const sc_pclaim *pc)
{
    const sc_podinfo *in = x->in;
    const char *name;
    const dra_alloc_claim *m;
    sc_claim *cl;
    sc_cclaim *cc;
    dra_err e = sched_pod_claim_name(in, pc, &name);
    if (e == DRA_ENOTFOUND) {
        set_rc(x, SC_RC_WAIT, NULL, "pod \"%s\": ResourceClaim not created yet%s",
               dra_arena_sprintf(&x->cy->ar, "%s/%s", in->ns, in->name), "");
        return 0;
    }
    if (e != DRA_OK) {
        set_rc(x, SC_RC_UNSCHED, NULL, "spec.resourceClaim \"%s\": none of the supported "
               "fields are set%s", pc->name, "");
        return 0;
    }
    if (!name)
        return 1;
    if (!(cl = sched_claim_get(x->c, in->ns, name))) {
        set_rc(x, SC_RC_WAIT, name, "resourceclaim.resource.k8s.io \"%s\" not found%s", name, "");
        return 0;
    }
    if (cl->deleting) {
        set_rc(x, SC_RC_WAIT, name, "resourceclaim \"%s\" is being deleted%s", name, "");
        return 0;
    }
    if (pc->template_name && (!cl->owner_uid || strcmp(cl->owner_uid, in->uid))) {
        set_rc(x, SC_RC_WAIT, name, "ResourceClaim %s was not created for the pod "
               "(pod is not owner)%s", cl->key, "");
        return 0;
    }
    if (!push_claim(x, pc->name, cl))
        return -1;
    cc = &x->cy->claims[x->cy->nclaims - 1];
    if (cl->obj->u.claim.status.allocation)
        return allocated_claim(x, cc, cl->obj->u.claim.status.allocation);
    if (cl->assumed) {
        /* Another pod's reserve is writing this claim: wait for it. */
        set_rc(x, SC_RC_WAIT, name, "resource claim %s is in the process of being "
               "allocated%s", cl->key, "");
        return 0;
    }
    if (class_missing(x, &cl->obj->u.claim.spec))
        return 0;
    if (!(m = sched_claim_model(x->c, cl, &x->d))) {
        x->cy->rc = SC_RC_ERROR;
        x->cy->message = dra_arena_sprintf(&x->cy->ar, "claim %s: %s", cl->key,
                                           dra_diag_first(&x->d) ? dra_diag_first(&x->d)
                                                                 : "cannot be modelled");
        return 0;
    }
    cc->allocate = (int)x->cy->nmodels;
    cc->reserve = 1;
    return push_model(x, m) ? 1 : -1;
}

/* Returns 1 to go on to the nodes, 0 when the cycle is decided (rc set),
 * -1 on ENOMEM. */
static int prefilter(cyc *x)
{
    for (size_t i = 0; i < x->in->nclaims; i++) {
        int r = resolve_claim(x, &x->in->claims[i]);
        if (r <= 0)
            return r;
    }
    if (sched_ext_wanted(x->c, x->in)) {
        if (!push_claim(x, SC_SPECIAL_CLAIM, NULL))
            return -1;
        x->cy->ext = (int)x->cy->nclaims - 1;
        x->cy->claims[x->cy->ext].reserve = 1;
    }
    return 1;
}

/* ---- nodes ------------------------------------------------------------------------ */

/* The allocator's lower bound on free node-local devices. */
static int lower_bound(cyc *x)
{
    int64_t k = 0;
    if (x->c->inv.any_global)
        return 0;
    for (size_t i = 0; i < x->cy->nmodels; i++) {
        const dra_alloc_claim *m = x->cy->models[i];
        for (size_t j = 0; j < m->nrequests; j++) {
            const dra_alloc_request *rq = &m->requests[j];
            size_t na = rq->nfirst_available ? rq->nfirst_available : 1;
            int64_t best = INT64_MAX;
            for (size_t a = 0; a < na; a++) {
                const dra_alloc_devreq *r = rq->nfirst_available ? &rq->first_available[a] : &rq->exactly;
                int64_t need = r->admin_access ? 0 : r->mode == DRA_ALLOC_ALL ? 1
                               : r->count > 0 ? r->count : 1;
                best = need < best ? need : best;
            }
            k += best;
        }
    }
    if (x->c->inv.any_multi && k > 1)
        k = 1;
    return k > 1000000 ? 1000000 : (int)k;
}

/* The special claim for node |n| (or for no device plugin at all when
 * |n| is NULL) as an allocator model in |ar|; *m NULL when nothing goes
 * through DRA there. DRA_ENOTFOUND with *what: a resource nobody backs. */
static dra_err ext_model(cyc *x, const sc_node *n, dra_arena *ar, const dra_alloc_claim **m,
                         dra_claim_spec **spec, const char **what)
{
    dra_object_meta meta;
    dra_alloc_claim *mm;
    dra_err err;
    *m = NULL;
    if ((err = sched_ext_spec(x->c, x->in, n, ar, spec, what)) != DRA_OK || !*spec)
        return err;
    memset(&meta, 0, sizeof meta);
    meta.namespace_ = x->in->ns;
    meta.name = SC_SPECIAL_CLAIM;
    meta.uid = dra_arena_sprintf(ar, "%s-extended-resources", x->in->uid);
    if ((err = dra_alloc_claim_from_api(ar, &meta, *spec, &mm, &x->d)) != DRA_OK)
        return err;
    *m = mm;
    return DRA_OK;
}

/* How well the outcome ranks on firstAvailable: 100 when every request
 * got its first choice, less per later alternative (DynamicResources'
 * prioritized-list score). */
static int prio_score(const cyc *x, const dra_alloc_outcome *o)
{
    int64_t got = 0, max = 0;
    for (size_t i = 0; i < o->nclaims; i++) {
        const dra_alloc_claim *m = o->claims[i].claim;
        for (size_t j = 0; j < m->nrequests; j++) {
            const dra_alloc_request *rq = &m->requests[j];
            size_t idx = 0;
            if (rq->nfirst_available < 2)
                continue;
            for (size_t r = 0; r < o->claims[i].nresults; r++) {
                const char *name = o->claims[i].results[r].request, *sl = strchr(name, '/');
                if (!sl || strncmp(name, rq->name, (size_t)(sl - name)) || rq->name[sl - name])
                    continue;
                for (size_t a = 0; a < rq->nfirst_available; a++)
                    if (rq->first_available[a].name && !strcmp(rq->first_available[a].name, sl + 1))
                        idx = a;
            }
            max += (int64_t)rq->nfirst_available;
            got += (int64_t)(rq->nfirst_available - idx);
        }
    }
    (void)x;
    return max ? (int)(got * 100 / max) : 100;
}

static int res_score(const cyc *x, const sc_node *n)
{
    int b = n->bucket;
    (void)x;
    return b >= 0 && b <= 100 ? b : 0;
}

/* Node filters plus the allocated claims' selectors: SC_R_OK or why not. */
static sc_reason node_checks(cyc *x, const sc_node *n, const char **what)
{
    sc_reason r = sched_filter(x->c, x->in, n, what);
    if (r != SC_R_OK)
        return r;
    if (x->pin_none || (x->pin && x->pin != n))
        return SC_R_CLAIM_NODE;
    for (size_t i = 0; i < x->nsels; i++)
        if (!dra_alloc_node_selector_match(x->sels[i], n->name, n->labels, n->nlabels))
            return SC_R_CLAIM_NODE;
    return SC_R_OK;
}

/* Tries one node. 1 feasible (outcome in x->tmp), 0 not, -1 a fatal
 * error (rc set), -2 ENOMEM. */
static int try_node(cyc *x, sc_node *n)
{
    const dra_alloc_claim *all[DRA_ALLOC_MAX_RESULTS + 2], *em = NULL;
    const char *what;
    dra_claim_spec *spec = NULL;
    size_t na = 0;
    dra_err err;
    if (node_checks(x, n, &what) != SC_R_OK)
        return 0;
    if (x->cy->ext >= 0) {
        dra_arena_reset(&x->scratch);
        err = ext_model(x, n, &x->scratch, &em, &spec, &what);
        if (err == DRA_ENOTFOUND)
            return 0;
        if (err != DRA_OK)
            return err == DRA_ENOMEM ? -2 : 0;
    }
    if (!x->cy->nmodels && !em) {
        dra_alloc_outcome_fini(&x->tmp);
        dra_alloc_outcome_init(&x->tmp, x->c->mem);
        return 1;
    }
    if (x->cy->nmodels > DRA_ALLOC_MAX_RESULTS)
        return 0;
    for (size_t i = 0; i < x->cy->nmodels; i++)
        all[na++] = x->cy->models[i];
    if (em)
        all[na++] = em;
    dra_diag_clear(&x->d);
    err = dra_allocator_allocate(x->c->inv.a, n->name, all, na, &x->tmp, &x->d);
    if (err == DRA_OK)
        return 1;
    if (err == DRA_EUNSAT || err == DRA_EINVALID)
        return 0;
    if (err == DRA_ENOMEM)
        return -2;
    x->cy->rc = SC_RC_ERROR;
    x->cy->message = dra_arena_strdup(&x->cy->ar, dra_diag_first(&x->d) ? dra_diag_first(&x->d)
                                                                         : dra_strerror(err));
    return -1;
}

/* Keeps |n| when it beats the best so far. Returns 1 to stop looking. */
static int consider(cyc *x, sc_node *n, size_t *found)
{
    int score = res_score(x, n) + (x->prio ? prio_score(x, &x->tmp) : 0);
    dra_alloc_outcome t;
    (*found)++;
    if (!x->cy->node || score > x->best_score) {
        dra_arena ta = x->cy->ext_ar;
        t = x->cy->out;
        x->cy->out = x->tmp;
        x->tmp = t;
        /* The outcome refers to this node's special claim: keep its arena. */
        x->cy->ext_ar = x->scratch;
        x->scratch = ta;
        x->cy->node = n;
        x->best_score = score;
        if (x->cy->ext >= 0) {
            const char *what;
            /* The special claim for the chosen node, kept in the cycle. */
            if (sched_ext_spec(x->c, x->in, n, &x->cy->ar, &x->cy->ext_spec, &what) != DRA_OK)
                x->cy->ext_spec = NULL;
        }
    }
    return !x->prio || prio_score(x, &x->cy->out) == 100 || *found >= x->limit;
}

/* kube-scheduler's numFeasibleNodesToFind with its adaptive percentage. */
static size_t feasible_limit(size_t n)
{
    size_t pct, k;
    if (n < 100)
        return n ? n : 1;
    pct = n / 125 < 45 ? 50 - n / 125 : 5;
    k = n * pct / 100;
    return k < 100 ? 100 : k;
}

static int visit(cyc *x, sc_node *n, size_t *found)
{
    int r = try_node(x, n);
    if (r < 0)
        return r;
    return r ? (consider(x, n, found) ? 2 : 1) : 0;
}

/* Walks the nodes best first. 0 done (node or not), <0 as try_node. */
static int walk(cyc *x)
{
    sc_core *c = x->c;
    size_t found = 0;
    int r;
    if (x->pin || x->pin_none)
        return x->pin ? (visit(x, x->pin, &found) < 0 ? -1 : 0) : 0;
    if (!x->cy->nmodels && x->cy->ext < 0) {
        /* No devices: spread round-robin, like kube's rotating start. */
        for (size_t i = 0; i < c->nnodes; i++) {
            sc_node *n = c->nodes[(c->rr + i) % c->nnodes];
            if ((r = visit(x, n, &found)) < 0)
                return r;
            if (r == 2) {
                c->rr = (c->rr + i + 1) % c->nnodes;
                return 0;
            }
        }
        return 0;
    }
    for (int b = 100; b >= 0; b--)
        for (sc_node *n = c->buckets[b]; n; n = n->bnext) {
            if (n->free < x->k)
                continue;
            if ((r = visit(x, n, &found)) < 0)
                return r;
            if (r == 2)
                return 0;
        }
    if (x->k > 0)
        return 0; /* full nodes and nodes without devices cannot help */
    for (int b = SC_B_FULL; b <= SC_B_NODEV; b++)
        for (sc_node *n = c->buckets[b]; n; n = n->bnext)
            if ((r = visit(x, n, &found)) < 0 || r == 2)
                return r < 0 ? r : 0;
    return 0;
}

/* ---- when nothing fits -------------------------------------------------------------- */

/* One line from the allocator's explanation as data: each claim's
 * requests and constraints, without the "where" line the FitError
 * histogram already says. */
static const char *why_line(dra_arena *ar, const dra_alloc_outcome *o)
{
    dra_buf b;
    const char *r;
    dra_buf_init(&b, ar->mem);
    for (size_t i = 0; i < o->nwhy; i++) {
        const dra_alloc_why_claim *w = &o->why[i];
        if (!w->nrequests && !w->nconstraints)
            continue;
        dra_buf_printf(&b, "%sclaim %s:", b.len ? "; " : "", w->name ? w->name : "?");
        for (size_t j = 0; j < w->nrequests; j++)
            dra_buf_printf(&b, "%s request %s: %s", j ? ";" : "", w->requests[j].request,
                           w->requests[j].text);
        for (size_t j = 0; j < w->nconstraints; j++)
            dra_buf_printf(&b, "%s %s", w->nrequests || j ? ";" : "", w->constraints[j]);
    }
    if (o->why_together)
        dra_buf_printf(&b, "%s%s", b.len ? "; " : "", o->why_together);
    r = b.len ? dra_arena_strdup(ar, b.p) : NULL;
    dra_buf_fini(&b);
    return r;
}

/* The allocator's explanation of the claims, once the walk found no node
 * (so no search again): the full text, and *line the part for the
 * message. */
static const char *dra_explanation(cyc *x, const char **line)
{
    const dra_alloc_claim *all[DRA_ALLOC_MAX_RESULTS + 2], *em = NULL;
    dra_claim_spec *spec;
    const char *what, *r = NULL;
    dra_alloc_outcome o;
    dra_diag d;
    size_t na = 0;
    dra_err err;
    *line = NULL;
    for (size_t i = 0; i < x->cy->nmodels && na < DRA_ALLOC_MAX_RESULTS; i++)
        all[na++] = x->cy->models[i];
    dra_arena_reset(&x->scratch);
    if (x->cy->ext >= 0 && ext_model(x, NULL, &x->scratch, &em, &spec, &what) == DRA_OK && em)
        all[na++] = em;
    if (!na)
        return NULL;
    dra_alloc_outcome_init(&o, x->c->mem);
    dra_diag_init(&d, x->c->mem);
    err = dra_allocator_explain(x->c->inv.a, all, na, &o, &d);
    if (err == DRA_EUNSAT && o.explanation) {
        r = dra_arena_strdup(&x->cy->ar, o.explanation);
        *line = why_line(&x->cy->ar, &o);
    } else if (err != DRA_OK && dra_diag_first(&d)) {
        r = *line = dra_arena_strdup(&x->cy->ar, dra_diag_first(&d));
    }
    if (!*line)
        *line = r;
    dra_diag_fini(&d);
    dra_alloc_outcome_fini(&o);
    return r;
}

/* The FitError histogram: every node's first failing filter. Reasons
 * whose text names nothing (most of them) are counted per reason and
 * added once at the end, in the order a node first showed them. */
static dra_err fit_histogram(cyc *x, sc_hist *h)
{
    sc_core *c = x->c;
    size_t count[SC_R_N] = {0};
    const sc_node *first[SC_R_N] = {NULL};
    sc_reason order[SC_R_N];
    size_t norder = 0;
    dra_buf b;
    dra_err err = DRA_OK;
    int dra = x->cy->nmodels || x->cy->ext >= 0;
    dra_buf_init(&b, c->mem);
    for (size_t i = 0; i < c->nnodes && err == DRA_OK; i++) {
        const sc_node *n = c->nodes[i];
        const char *what = NULL;
        sc_reason r = node_checks(x, n, &what);
        if (r == SC_R_OK && x->cy->ext >= 0) {
            dra_claim_spec *spec;
            dra_arena_reset(&x->scratch);
            if (sched_ext_spec(c, x->in, n, &x->scratch, &spec, &what) == DRA_ENOTFOUND)
                r = SC_R_RESOURCES;
        }
        if (r == SC_R_OK)
            r = dra ? SC_R_DRA : SC_R_OK;
        if (r == SC_R_OK)
            continue;
        if (r != SC_R_TAINT && r != SC_R_RESOURCES) {
            if (!count[r]++) {
                first[r] = n;
                order[norder++] = r;
            }
            continue;
        }
        dra_buf_reset(&b);
        sched_reason_text(&b, r, what, n);
        err = sched_hist_add(h, b.p ? b.p : "");
    }
    for (size_t k = 0; k < norder && err == DRA_OK; k++) {
        dra_buf_reset(&b);
        sched_reason_text(&b, order[k], NULL, first[order[k]]);
        err = sched_hist_add_n(h, b.p ? b.p : "", count[order[k]]);
    }
    dra_buf_fini(&b);
    return err;
}

static dra_err unschedulable(cyc *x)
{
    sc_core *c = x->c;
    sc_hist h;
    dra_err err;
    int dra = x->cy->nmodels || x->cy->ext >= 0;
    sched_hist_init(&h, c->mem);
    err = fit_histogram(x, &h);
    if (err == DRA_OK) {
        const char *line = NULL, *expl = dra ? dra_explanation(x, &line) : NULL;
        x->cy->rc = SC_RC_UNSCHED;
        x->cy->explanation = expl;
        x->cy->message = sched_fit_message(&x->cy->ar, c->nnodes, NULL, &h, line);
        if (!x->cy->message)
            err = DRA_ENOMEM;
    }
    sched_hist_fini(&h);
    return err;
}

/* ---- entry points ----------------------------------------------------------------------- */

dra_err sched_cycle_run(sc_core *c, sc_pod *p, sc_cycle *cy, int explain_all)
{
    cyc x;
    dra_err err = DRA_OK;
    int r;
    memset(&x, 0, sizeof x);
    x.c = c;
    x.p = p;
    x.in = p->info;
    x.cy = cy;
    dra_diag_init(&x.d, c->mem);
    dra_arena_init(&x.scratch, c->mem);
    dra_alloc_outcome_init(&x.tmp, c->mem);
    c->st.attempts++;
    if (c->dirty && (err = sched_rebuild(c)) != DRA_OK)
        goto out;
    r = prefilter(&x);
    if (r < 0) {
        err = DRA_ENOMEM;
        goto out;
    }
    if (r == 0) {
        if (cy->rc == SC_RC_UNSCHED && cy->message)
            cy->message = sched_fit_message(&cy->ar, c->nnodes, cy->message, NULL, NULL);
        goto out;
    }
    x.k = lower_bound(&x);
    x.limit = x.prio ? feasible_limit(c->nnodes) : 1;
    r = walk(&x);
    if (r == -2) {
        err = DRA_ENOMEM;
        goto out;
    }
    if (r == -1) {
        cy->message = sched_fit_message(&cy->ar, c->nnodes, cy->message, NULL, NULL);
        goto out;
    }
    if (cy->node) {
        cy->rc = SC_RC_OK;
        if (explain_all)
            cy->explanation = dra_arena_sprintf(&cy->ar, "node %s fits (score %d)",
                                                cy->node->name, x.best_score);
        goto out;
    }
    c->st.unschedulable++;
    err = unschedulable(&x);
out:
    dra_alloc_outcome_fini(&x.tmp);
    dra_arena_fini(&x.scratch);
    dra_diag_fini(&x.d);
    return err;
}

dra_err sched_cycle_assume(sc_core *c, sc_pod *p, sc_cycle *cy)
{
    for (size_t i = 0; i < cy->nclaims; i++) {
        sc_cclaim *cc = &cy->claims[i];
        const dra_alloc_claim_result *cr;
        dra_allocation_result *res = NULL;
        dra_arena *ar;
        dra_err err;
        if (cc->allocate < 0 && i != (size_t)cy->ext)
            continue;
        if (i == (size_t)cy->ext) {
            if (!cy->ext_spec || cy->out.nclaims <= cy->nmodels)
                continue; /* all through device plugins */
            cr = &cy->out.claims[cy->nmodels];
        } else {
            cr = &cy->out.claims[cc->allocate];
        }
        if (!(ar = sched_arena_new(c->mem)))
            return DRA_ENOMEM;
        if ((err = dra_alloc_result_to_api(ar, cr, &res)) != DRA_OK) {
            sched_arena_free(c->mem, ar);
            return err;
        }
        if (i == (size_t)cy->ext) {
            sched_arena_free(c->mem, p->ext_ar);
            p->ext_ar = ar;
            p->ext_res = res;
            sched_count(c, res, 1);
        } else {
            sched_claim_assume(c, cc->cl, ar, res, p->info->uid);
        }
    }
    p->assumed_node = cy->node->name;
    return sched_pod_account(c, p, cy->node);
}

void sched_cycle_forget(sc_core *c, sc_pod *p, const char *const *claim_keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        sc_claim *cl = dra_map_get(&c->claims, claim_keys[i], strlen(claim_keys[i]));
        if (cl && cl->assumed && p && cl->assumed_pod && !strcmp(cl->assumed_pod, p->info->uid))
            sched_claim_assume(c, cl, NULL, NULL, NULL);
    }
    if (!p)
        return;
    sched_ext_unassume(c, p);
    p->assumed_node = NULL;
    sched_pod_account(c, p, p->info->node_name && !sched_pod_terminal(p->info)
                                ? dra_map_get(&c->nodes_by_name, p->info->node_name,
                                              strlen(p->info->node_name))
                                : NULL);
}
