/*
 * result.c: turns the placement stack of a successful search into
 * AllocationResults: devices.results in request order, class configs
 * (once per class, listing the requests that use it) and claim configs
 * (once each), the node selector, and shareIDs for shared devices.
 */
#include <stdio.h>
#include <string.h>

#include "alloc_int.h"

/* A deterministic RFC 4122-shaped (version 4 layout) ID: the allocator
 * reads no clock and no random source, so the ID comes from a hash of the
 * claim, the device and a per-allocator sequence number. */
static const char *share_id(s_state *S, const dra_alloc_claim *cl, const a_dev *v,
                            const char *req)
{
    dra_buf b;
    uint64_t h1, h2;
    char *id;
    dra_buf_init(&b, S->a->mem);
    dra_buf_printf(&b, "%s/%s/%s|%s|%s|%s|%s|%llu", cl->namespace_ ? cl->namespace_ : "",
                   cl->name ? cl->name : "", cl->uid ? cl->uid : "", req, v->s->driver,
                   v->s->pool, v->d->name, (unsigned long long)S->a->share_seq++);
    if (b.oom) {
        dra_buf_fini(&b);
        return NULL;
    }
    h1 = dra_hash(b.p, b.len);
    dra_buf_putc(&b, '#');
    h2 = dra_hash(b.p, b.len);
    dra_buf_fini(&b);
    id = dra_arena_sprintf(S->ar, "%08llx-%04llx-4%03llx-%04llx-%012llx",
                           (unsigned long long)(h1 >> 32), (unsigned long long)((h1 >> 16) & 0xffff),
                           (unsigned long long)(h1 & 0xfff),
                           (unsigned long long)(0x8000 | ((h2 >> 48) & 0x3fff)),
                           (unsigned long long)(h2 & 0xffffffffffffULL));
    return id;
}

static dra_err device_result(s_state *S, const s_place *p, dra_alloc_device_result *r)
{
    const a_dev *v = &S->a->devs[p->dev];
    const s_alt *alt = &S->reqs[p->req].alts[p->alt];
    const dra_alloc_claim *cl = S->claims[S->reqs[p->req].claim];
    memset(r, 0, sizeof *r);
    r->request = alt->name;
    r->driver = v->s->driver;
    r->pool = v->s->pool;
    r->device = v->d->name;
    r->admin_access = p->admin;
    r->tolerations = alt->r->tolerations;
    r->ntolerations = alt->r->ntolerations;
    r->binding_conditions = v->d->binding_conditions;
    r->nbinding_conditions = v->d->nbinding_conditions;
    r->binding_failure_conditions = v->d->binding_failure_conditions;
    r->nbinding_failure_conditions = v->d->nbinding_failure_conditions;
    if (!p->shared)
        return DRA_OK;
    if (!(r->share_id = share_id(S, cl, v, alt->name)))
        return DRA_ENOMEM;
    dra_alloc_consumed *c = dra_arena_array(S->ar, v->d->ncaps + 1, sizeof *c);
    if (!c)
        return DRA_ENOMEM;
    for (size_t i = 0; i < v->d->ncaps; i++) {
        c[i].name = v->d->caps[i].name;
        c[i].value = alloc_qty(p->consumed[i], v->d->caps[i].value.format);
    }
    r->consumed = c;
    r->nconsumed = v->d->ncaps;
    return DRA_OK;
}

/* ---- node selector -------------------------------------------------------------- */

static int req_equal(const dra_alloc_ns_req *x, const dra_alloc_ns_req *y)
{
    if (strcmp(x->key, y->key) != 0 || x->op != y->op || x->nvalues != y->nvalues)
        return 0;
    for (size_t i = 0; i < x->nvalues; i++)
        if (strcmp(x->values[i], y->values[i]) != 0)
            return 0;
    return 1;
}

static void add_reqs(dra_alloc_ns_req *dst, size_t *n, const dra_alloc_ns_req *src, size_t ns)
{
    for (size_t i = 0; i < ns; i++) {
        size_t j = 0;
        while (j < *n && !req_equal(&dst[j], &src[i]))
            j++;
        if (j == *n)
            dst[(*n)++] = src[i];
    }
}

static dra_err node_selector(s_state *S, size_t p0, size_t p1, dra_alloc_claim_result *cr)
{
    size_t ne = 0, nf = 0;
    int local = 0, any = 0;
    dra_alloc_ns_term *t;
    dra_alloc_node_selector *sel;
    for (size_t i = p0; i < p1; i++) {
        const a_dev *v = &S->a->devs[S->pl[i].dev];
        local |= v->loc == A_LOC_NODE || v->d->binds_to_node;
        if (v->loc == A_LOC_SELECTOR) {
            ne += v->sel->terms[0].nexprs;
            nf += v->sel->terms[0].nfields;
            any = 1;
        }
    }
    if (!local && !any)
        return DRA_OK; /* usable on every node */
    sel = dra_arena_zalloc(S->ar, sizeof *sel);
    t = dra_arena_zalloc(S->ar, sizeof *t);
    if (!sel || !t)
        return DRA_ENOMEM;
    sel->terms = t;
    sel->nterms = 1;
    if (local) {
        dra_alloc_ns_req *f = dra_arena_zalloc(S->ar, sizeof *f);
        const char **vals = dra_arena_array(S->ar, 1, sizeof *vals);
        if (!f || !vals)
            return DRA_ENOMEM;
        vals[0] = S->node->name;
        f->key = "metadata.name";
        f->op = DRA_ALLOC_NS_IN;
        f->values = vals;
        f->nvalues = 1;
        t->fields = f;
        t->nfields = 1;
    } else {
        /* AND the single terms of all devices into one, without repeats. */
        dra_alloc_ns_req *e = dra_arena_array(S->ar, ne + 1, sizeof *e);
        dra_alloc_ns_req *f = dra_arena_array(S->ar, nf + 1, sizeof *f);
        if (!e || !f)
            return DRA_ENOMEM;
        ne = nf = 0;
        for (size_t i = p0; i < p1; i++) {
            const a_dev *v = &S->a->devs[S->pl[i].dev];
            if (v->loc != A_LOC_SELECTOR)
                continue;
            add_reqs(e, &ne, v->sel->terms[0].exprs, v->sel->terms[0].nexprs);
            add_reqs(f, &nf, v->sel->terms[0].fields, v->sel->terms[0].nfields);
        }
        t->exprs = e;
        t->nexprs = ne;
        t->fields = f;
        t->nfields = nf;
    }
    cr->node_selector = sel;
    return DRA_OK;
}

/* ---- config ------------------------------------------------------------------- */

static dra_err class_configs(s_state *S, uint32_t ci, dra_alloc_config_result *out, size_t *n)
{
    uint32_t r0 = S->claim_req0[ci], r1 = S->claim_req0[ci + 1];
    for (uint32_t i = r0; i < r1; i++) {
        const s_alt *alt = &S->reqs[i].alts[S->reqs[i].chosen];
        const char **names;
        size_t nn = 0;
        int seen = 0;
        if (!alt->cls->nconfig)
            continue;
        for (uint32_t j = r0; j < i; j++)
            seen |= S->reqs[j].alts[S->reqs[j].chosen].cls == alt->cls;
        if (seen)
            continue; /* the class's entries were added with the first user */
        if (!(names = dra_arena_array(S->ar, r1 - r0, sizeof *names)))
            return DRA_ENOMEM;
        for (uint32_t j = i; j < r1; j++)
            if (S->reqs[j].alts[S->reqs[j].chosen].cls == alt->cls)
                names[nn++] = S->reqs[j].alts[S->reqs[j].chosen].name;
        for (size_t k = 0; k < alt->cls->nconfig; k++) {
            dra_alloc_config_result *c = &out[(*n)++];
            c->source = DRA_ALLOC_FROM_CLASS;
            c->requests = names;
            c->nrequests = nn;
            c->config = &alt->cls->config[k];
        }
    }
    return DRA_OK;
}

/* A claim config applies when it names no request (all), a request of
 * the claim (a parent covers whichever subrequest was chosen), or the
 * chosen subrequest as "req/sub". A config for a subrequest that was not
 * chosen is left out, as Kubernetes does. */
static int claim_config_applies(const s_state *S, uint32_t ci, const dra_alloc_config *cfg)
{
    if (!cfg->nrequests)
        return 1;
    for (uint32_t i = S->claim_req0[ci]; i < S->claim_req0[ci + 1]; i++) {
        const s_req *q = &S->reqs[i];
        for (size_t k = 0; k < cfg->nrequests; k++)
            if (strcmp(cfg->requests[k], q->r->name) == 0 ||
                strcmp(cfg->requests[k], q->alts[q->chosen].name) == 0)
                return 1;
    }
    return 0;
}

static dra_err configs(s_state *S, uint32_t ci, dra_alloc_claim_result *cr)
{
    const dra_alloc_claim *cl = S->claims[ci];
    size_t max = cl->nconfig;
    dra_err err;
    for (uint32_t i = S->claim_req0[ci]; i < S->claim_req0[ci + 1]; i++)
        max += S->reqs[i].alts[S->reqs[i].chosen].cls->nconfig;
    if (!max)
        return DRA_OK;
    if (!(cr->config = dra_arena_array(S->ar, max, sizeof *cr->config)))
        return DRA_ENOMEM;
    if ((err = class_configs(S, ci, cr->config, &cr->nconfig)) != DRA_OK)
        return err;
    for (size_t k = 0; k < cl->nconfig; k++) {
        dra_alloc_config_result *c;
        if (!claim_config_applies(S, ci, &cl->config[k]))
            continue;
        c = &cr->config[cr->nconfig++];
        c->source = DRA_ALLOC_FROM_CLAIM;
        c->requests = cl->config[k].requests;
        c->nrequests = cl->config[k].nrequests;
        c->config = &cl->config[k];
    }
    return DRA_OK;
}

dra_err alloc_build_results(s_state *S, dra_alloc_outcome *out)
{
    size_t p = 0;
    dra_err err;
    out->claims = dra_arena_array(S->ar, S->nclaims + 1, sizeof *out->claims);
    if (!out->claims)
        return DRA_ENOMEM;
    out->nclaims = S->nclaims;
    for (uint32_t ci = 0; ci < S->nclaims; ci++) {
        dra_alloc_claim_result *cr = &out->claims[ci];
        size_t p0 = p;
        cr->claim = S->claims[ci];
        /* Placements are in claim order, so each claim's run is contiguous. */
        while (p < S->npl && S->reqs[S->pl[p].req].claim == ci)
            p++;
        cr->results = dra_arena_array(S->ar, p - p0 + 1, sizeof *cr->results);
        if (!cr->results)
            return DRA_ENOMEM;
        cr->nresults = p - p0;
        for (size_t i = p0; i < p; i++)
            if ((err = device_result(S, &S->pl[i], &cr->results[i - p0])) != DRA_OK)
                return err;
        if ((err = configs(S, ci, cr)) != DRA_OK || (err = node_selector(S, p0, p, cr)) != DRA_OK)
            return err;
    }
    return DRA_OK;
}
