/*
 * search.c: the allocation search. A pre-pass resolves classes, compiles
 * selectors and collects All-mode devices; then a depth-first, first-fit
 * search walks claims, requests (trying firstAvailable subrequests in
 * order), and device slots. Within a request it enumerates combinations,
 * not permutations. Every placement is pushed on a stack and undone
 * exactly on backtrack: in-use marks, shares, capacity, counters and
 * constraint values.
 */
#include <inttypes.h>
#include <string.h>

#include "alloc_int.h"

enum { S_NO = 0, S_FOUND = 1, S_SIZE = 2, S_ERR = -1 };

const char *alloc_claim_name(dra_arena *ar, const dra_alloc_claim *c)
{
    if (c->namespace_ && *c->namespace_)
        return dra_arena_sprintf(ar, "%s/%s", c->namespace_, c->name ? c->name : "");
    return c->name ? c->name : "(unnamed)";
}

/* ---- individual checks ------------------------------------------------------- */

static int str_eq(const char *x, const char *y)
{
    return strcmp(x ? x : "", y ? y : "") == 0;
}

static int tol_matches(const dra_alloc_toleration *t, const dra_alloc_taint *tn)
{
    if (t->effect != DRA_ALLOC_EFFECT_ANY && t->effect != tn->effect)
        return 0;
    if (t->key && *t->key && strcmp(t->key, tn->key) != 0)
        return 0;
    if ((!t->key || !*t->key) && t->op != DRA_ALLOC_TOL_EXISTS)
        return 0;
    return t->op == DRA_ALLOC_TOL_EXISTS || str_eq(t->value, tn->value);
}

int alloc_tolerated(const a_dev *v, const dra_alloc_devreq *r)
{
    if (!v->tainted) /* the common case, without reading the device */
        return 1;
    for (size_t i = 0; i < v->d->ntaints; i++) {
        const dra_alloc_taint *tn = &v->d->taints[i];
        int ok = 0;
        /* None and effects this version does not know are ignored. */
        if (tn->effect != DRA_ALLOC_EFFECT_NO_SCHEDULE && tn->effect != DRA_ALLOC_EFFECT_NO_EXECUTE)
            continue;
        for (size_t j = 0; !ok && j < r->ntolerations; j++)
            ok = tol_matches(&r->tolerations[j], tn);
        if (!ok)
            return 0;
    }
    return 1;
}

/* Capacity names follow attribute rules: a bare name is in the driver's domain. */
static int name_eq(const char *driver, const char *dev, const char *req)
{
    size_t dl = strlen(driver);
    if (strcmp(dev, req) == 0)
        return 1;
    if (!strchr(dev, '/'))
        return strncmp(req, driver, dl) == 0 && req[dl] == '/' && strcmp(req + dl + 1, dev) == 0;
    if (!strchr(req, '/'))
        return strncmp(dev, driver, dl) == 0 && dev[dl] == '/' && strcmp(dev + dl + 1, req) == 0;
    return 0;
}

/* The amount a request takes from one capacity, after the request policy's
 * defaulting and rounding; 0 when the policy cannot satisfy it. |c| says
 * which parts of the policy exist, |cv| holds the converted values. */
static int cap_amount(const dra_alloc_capacity *c, const a_cap *cv, const a_qn *req, a_qn *out)
{
    const a_pol *pol = c->has_policy ? cv->pol : NULL;
    a_qn x;
    if (!req) {
        *out = pol && c->has_default ? pol->def : cv->value;
        return 1;
    }
    x = *req;
    if (pol && c->has_default && x == pol->def) {
        *out = x;
        return 1;
    }
    if (pol && c->nvalid_values) {
        for (size_t i = 0; i < c->nvalid_values; i++)
            if (pol->valid[i] >= x) {
                *out = pol->valid[i];
                return 1;
            }
        return 0;
    }
    if (pol && c->has_range) {
        if (x <= pol->min) {
            x = pol->min;
        } else if (c->has_step && pol->step > 0) {
            x = pol->min + ((x - pol->min + pol->step - 1) / pol->step) * pol->step;
        }
        if (c->has_max && x > pol->max)
            return 0;
    }
    *out = x;
    return 1;
}

static int cap_fit(const a_dev *v, const s_alt *alt, a_qn *consumed, int total_only)
{
    const dra_alloc_devreq *r = alt->r;
    const char *drv;
    /* An exclusive device without capacity requests: nothing to check. */
    if (!v->multi && !r->ncap_requests)
        return 1;
    drv = v->s->driver;
    /* Every capacity the request names must exist on the device. */
    for (size_t i = 0; i < r->ncap_requests; i++) {
        size_t c = 0;
        while (c < v->d->ncaps && !name_eq(drv, v->d->caps[c].name, r->cap_requests[i].name))
            c++;
        if (c == v->d->ncaps)
            return 0;
    }
    for (size_t c = 0; c < v->d->ncaps; c++) {
        const dra_alloc_capacity *cap = &v->d->caps[c];
        const a_qn *req = NULL;
        a_qn amount, avail = v->caps[c].value;
        for (size_t i = 0; i < r->ncap_requests; i++)
            if (name_eq(drv, cap->name, r->cap_requests[i].name))
                req = &alt->capreq[i];
        if (!v->multi && !req)
            continue;
        if (!cap_amount(cap, &v->caps[c], req, &amount))
            return 0;
        if (v->multi && !total_only)
            avail -= v->cap_used[c] + v->cap_att[c];
        if (amount > avail)
            return 0;
        if (consumed)
            consumed[c] = amount;
    }
    return 1;
}

int alloc_cap_fit(const a_dev *v, const s_alt *alt, a_qn *consumed)
{
    return cap_fit(v, alt, consumed, 0);
}

int alloc_cap_fit_total(const a_dev *v, const s_alt *alt)
{
    return cap_fit(v, alt, NULL, 1);
}

int alloc_counters_fit(const dra_allocator *a, const a_dev *v)
{
    for (uint32_t i = 0; i < v->ncons; i++) {
        const a_counter *c = &a->counters[v->cons[i].counter];
        if (c->used + c->att + v->cons[i].amount > c->total)
            return 0;
    }
    return 1;
}

/* ---- constraints ---------------------------------------------------------------- */

static int con_applies(const s_con *c, const s_req *rq, const s_alt *alt)
{
    const char *rn = rq->r->name;
    size_t rl = strlen(rn);
    if (!c->c->nrequests)
        return 1;
    for (size_t i = 0; i < c->c->nrequests; i++) {
        const char *x = c->c->requests[i];
        if (strcmp(x, rn) == 0)
            return 1; /* a parent name covers all its subrequests */
        if (alt->r->name && strncmp(x, rn, rl) == 0 && x[rl] == '/' &&
            strcmp(x + rl + 1, alt->r->name) == 0)
            return 1;
    }
    return 0;
}

static int attr_eq(const dra_cel_attr *x, const dra_cel_attr *y)
{
    if (x->kind != y->kind)
        return 0;
    switch (x->kind) {
    case DRA_CEL_ATTR_INT:
        return x->i == y->i;
    case DRA_CEL_ATTR_BOOL:
        return !x->b == !y->b;
    default:
        return str_eq(x->s, y->s);
    }
}

static int con_add(s_con *c, const a_dev *v)
{
    const dra_cel_attr *at = dra_alloc_attr_lookup(v->s->driver, v->d, c->attr);
    if (!at)
        return 0;
    if (c->distinct) {
        for (size_t i = 0; i < c->count; i++)
            if (attr_eq(c->vals[i], at))
                return 0;
    } else if (c->count && !attr_eq(c->vals[0], at)) {
        return 0;
    }
    c->vals[c->count < DRA_ALLOC_MAX_RESULTS ? c->count : DRA_ALLOC_MAX_RESULTS] = at;
    c->count++;
    return 1;
}

/* ---- placing and undoing one device ------------------------------------------------ */

static int in_use(const a_dev *v, const s_alt *alt, uint32_t claim)
{
    if (alt->r->admin_access)
        return v->att_claim == (int32_t)claim;
    return v->excl > 0 || v->att_claim >= 0;
}

static void charge_att(dra_allocator *a, const a_dev *v, int sign)
{
    for (uint32_t i = 0; i < v->ncons; i++)
        a->counters[v->cons[i].counter].att += sign * v->cons[i].amount;
}

static void cons_undo(s_state *S, uint32_t claim, uint32_t mask)
{
    uint32_t c0 = S->claim_con0[claim];
    for (uint32_t k = c0; k < S->claim_con0[claim + 1]; k++)
        if (mask & (1u << (k - c0)))
            S->cons[k].count--;
}

static void unplace(s_state *S)
{
    s_place *p = &S->pl[--S->npl];
    a_dev *v = &S->a->devs[p->dev];
    uint32_t claim = S->reqs[p->req].claim;
    cons_undo(S, claim, p->cons_mask);
    if (p->charged)
        charge_att(S->a, v, -1);
    if (p->shared) {
        v->att_shares--;
        for (size_t c = 0; c < v->d->ncaps; c++)
            v->cap_att[c] -= p->consumed[c];
    } else {
        v->att_claim = -1;
    }
    S->claim_nres[claim]--;
}

/* Selector |k| of |alt| on |v|: 1 selected, 0 not, or a negative error
 * code with the message in |d| worded as Kubernetes words it ("class C:
 * selector #I: CEL runtime error: ..." or "selector #I: CEL runtime
 * error: ..."), after the claim and request and with the device named. */
int alloc_sel_eval(dra_allocator *a, dra_arena *ar, const dra_alloc_claim *cl,
                   const s_alt *alt, size_t k, a_dev *v, dra_diag *d)
{
    dra_diag ed;
    int r;
    dra_diag_init(&ed, a->mem);
    r = alloc_prog_eval(a, alt->sel[k], v, &ed);
    if (r < 0 && r != DRA_ENOMEM) {
        const char *msg = dra_diag_first(&ed) ? dra_diag_first(&ed) : dra_strerror(r);
        if (k < alt->nclass_sel)
            dra_diag_add(d, "", 0, 0,
                         "claim %s, request %s: class %s: selector #%zu: CEL runtime error: "
                         "%s (device %s/%s/%s)",
                         alloc_claim_name(ar, cl), alt->name, alt->cls->name, k, msg,
                         v->s->driver, v->s->pool, v->d->name);
        else
            dra_diag_add(d, "", 0, 0,
                         "claim %s, request %s: selector #%zu: CEL runtime error: %s "
                         "(device %s/%s/%s)",
                         alloc_claim_name(ar, cl), alt->name, k - alt->nclass_sel, msg,
                         v->s->driver, v->s->pool, v->d->name);
    }
    dra_diag_fini(&ed);
    return r;
}

/* Class and request selectors; 1 selected, 0 not, S_ERR on an error. */
static int selected(s_state *S, const s_alt *alt, a_dev *v, uint32_t claim)
{
    for (size_t i = 0; !alt->all && i < alt->nsel; i++) {
        int r = alloc_sel_eval(S->a, S->ar, S->claims[claim], alt, i, v, S->d);
        if (r < 0) {
            S->err = (dra_err)r;
            return S_ERR;
        }
        if (!r)
            return 0;
    }
    return 1;
}

/* Adds the device to every constraint of the claim that covers the
 * request; on refusal undoes the ones added. 1 added (*mask says where),
 * 0 refused, S_ERR when All mode must take a device that breaks one. */
static int cons_add(s_state *S, const s_req *rq, const s_alt *alt, const a_dev *v, int must,
                    uint32_t *mask)
{
    uint32_t claim = rq->claim, c0 = S->claim_con0[claim];
    *mask = 0;
    for (uint32_t k = c0; k < S->claim_con0[claim + 1]; k++) {
        if (!con_applies(&S->cons[k], rq, alt))
            continue;
        if (con_add(&S->cons[k], v)) {
            *mask |= 1u << (k - c0);
            continue;
        }
        cons_undo(S, claim, *mask);
        if (!must)
            return 0;
        dra_diag_add(S->d, "", 0, 0,
                     "claim %s, request %s: all devices must be allocated, but device "
                     "%s/%s/%s does not satisfy the %s constraint on %s",
                     alloc_claim_name(S->ar, S->claims[claim]), alt->name, v->s->driver,
                     v->s->pool, v->d->name,
                     S->cons[k].distinct ? "distinctAttribute" : "matchAttribute", S->cons[k].attr);
        S->err = DRA_ECONFLICT;
        return S_ERR;
    }
    return 1;
}

/* Records a placement whose checks all passed. */
static int push(s_state *S, const s_place *tmpl, const a_qn *consumed)
{
    dra_allocator *a = S->a;
    a_dev *v = &a->devs[tmpl->dev];
    uint32_t claim = S->reqs[tmpl->req].claim;
    s_place *p;
    a_qn *c = NULL;
    if (consumed && !(c = dra_arena_array(S->ar, v->d->ncaps + 1, sizeof *c)))
        goto oom;
    if (dra_grow(a->mem, (void **)&S->pl, &S->cappl, S->npl + 1, sizeof *S->pl))
        goto oom;
    if (c)
        memcpy(c, consumed, v->d->ncaps * sizeof *c);
    p = &S->pl[S->npl++];
    *p = *tmpl;
    p->consumed = c;
    if (p->charged)
        charge_att(a, v, 1);
    if (p->shared) {
        v->att_shares++;
        for (size_t k = 0; k < v->d->ncaps; k++)
            v->cap_att[k] += c[k];
    } else {
        v->att_claim = (int32_t)claim;
    }
    S->claim_nres[claim]++;
    return 1;
oom:
    cons_undo(S, claim, tmpl->cons_mask);
    S->err = DRA_ENOMEM;
    return S_ERR;
}

/* The per-device checks in Kubernetes' order of cost; side effects only
 * once everything passed. Returns 1 placed, 0 refused, S_ERR on error. */
static int place(s_state *S, uint32_t ri, uint32_t ai, uint32_t di, int must)
{
    a_dev *v = &S->a->devs[di];
    const s_req *rq = &S->reqs[ri];
    const s_alt *alt = &rq->alts[ai];
    a_qn buf[33], *consumed = NULL;
    s_place p;
    int r;
    memset(&p, 0, sizeof p);
    p.dev = di;
    p.req = ri;
    p.alt = ai;
    p.admin = alt->r->admin_access;
    if (in_use(v, alt, rq->claim))
        return 0;
    if ((r = selected(S, alt, v, rq->claim)) != 1)
        return r;
    if (!alloc_tolerated(v, alt->r))
        return 0;
    p.shared = v->multi && !p.admin;
    if (p.shared || alt->r->ncap_requests) {
        /* Capacities per device are at most 32 after validation. */
        consumed = v->d->ncaps < 33 ? buf : dra_arena_array(S->ar, v->d->ncaps, sizeof *buf);
        if (!consumed) {
            S->err = DRA_ENOMEM;
            return S_ERR;
        }
        if (!alloc_cap_fit(v, alt, consumed))
            return 0;
    }
    /* Counters are charged once per device, however many shares it has. */
    p.charged = !p.admin && (!v->multi || (v->excl + v->shares + v->att_shares == 0));
    if (p.charged && !alloc_counters_fit(S->a, v))
        return 0;
    if ((r = cons_add(S, rq, alt, v, must, &p.cons_mask)) != 1)
        return r;
    return push(S, &p, p.shared ? consumed : NULL);
}

/* ---- the search ------------------------------------------------------------------------ */

static int s_request(s_state *S, uint32_t ri);

static int step(s_state *S)
{
    dra_allocator *a = S->a;
    S->steps++;
    if (S->steps > a->opts.max_steps) {
        dra_diag_add(S->d, "", 0, 0,
                     "the search bound of %" PRIu64 " steps was hit on node %s before an "
                     "allocation was found or ruled out",
                     a->opts.max_steps, S->node ? S->node->name : "(any)");
        return DRA_ELIMIT;
    }
    if (a->opts.cancel && (S->steps & 255) == 1) {
        int r = a->opts.cancel(a->opts.cancel_ud);
        if (r) {
            dra_diag_add(S->d, "", 0, 0, "allocation stopped: %s", dra_strerror(r));
            return r;
        }
    }
    return DRA_OK;
}

static int s_fill(s_state *S, uint32_t ri, uint32_t ai, int64_t k, size_t start)
{
    s_req *rq = &S->reqs[ri];
    s_alt *alt = &rq->alts[ai];
    int r;
    if (k == alt->count) {
        rq->chosen = ai;
        return s_request(S, ri + 1);
    }
    if ((int64_t)S->claim_nres[rq->claim] + (alt->count - k) > DRA_ALLOC_MAX_RESULTS)
        return S_SIZE;
    if (alt->all) {
        r = place(S, ri, ai, alt->all[k], 1);
        if (r != 1)
            return r;
        r = s_fill(S, ri, ai, k + 1, 0);
        if (r != S_FOUND)
            unplace(S);
        return r;
    }
    /* Combinations: slot k takes a device after slot k-1's, so there must
     * be enough candidates left for the remaining slots. */
    for (size_t i = start; i < S->node->nview && (int64_t)(S->node->nview - i) >= alt->count - k;
         i++) {
        if ((S->err = (dra_err)step(S)) != DRA_OK)
            return S_ERR;
        r = place(S, ri, ai, S->node->view[i], 0);
        if (r == S_ERR)
            return r;
        if (r == 0)
            continue;
        r = s_fill(S, ri, ai, k + 1, i + 1);
        if (r == S_FOUND)
            return r;
        unplace(S);
        if (r == S_ERR || r == S_SIZE)
            return r;
    }
    return S_NO;
}

static int s_request(s_state *S, uint32_t ri)
{
    s_req *rq;
    int r, all_size = 1;
    if (ri == S->nreqs)
        return S_FOUND;
    rq = &S->reqs[ri];
    for (size_t ai = 0; ai < rq->nalts; ai++) {
        if (rq->alts[ai].count == 0) { /* All mode found nothing: no solution */
            all_size = 0;
            continue;
        }
        r = s_fill(S, ri, (uint32_t)ai, 0, 0);
        if (r == S_FOUND || r == S_ERR)
            return r;
        if (r != S_SIZE)
            all_size = 0;
    }
    /* "Too many results" tells the previous request of the same claim to
     * try a smaller alternative; for an earlier claim it is a plain no. */
    if (all_size && ri != S->claim_req0[rq->claim])
        return S_SIZE;
    return S_NO;
}

/* ---- pre-pass ------------------------------------------------------------------------ */

/* Explaining: records why |alt| cannot be tried (|msg|, the words after
 * "claim X, request Y: ", in S->ar) and lets the pre-pass go on. */
static dra_err broken(s_state *S, s_alt *alt, dra_err why, const char *msg)
{
    if (!(alt->broken = msg))
        return DRA_ENOMEM;
    alt->nsel = alt->nclass_sel = 0;
    if (!S->fatal)
        S->fatal = why;
    return DRA_OK;
}

static dra_err prep_selectors(s_state *S, const dra_alloc_claim *cl, s_alt *alt)
{
    dra_allocator *a = S->a;
    size_t n = alt->cls->nselectors + alt->r->nselectors;
    dra_err err;
    alt->sel = dra_arena_array(S->ar, n + 1, sizeof *alt->sel);
    if (!alt->sel)
        return DRA_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        int from_class = i < alt->cls->nselectors;
        const char *expr = from_class ? alt->cls->selectors[i]
                                      : alt->r->selectors[i - alt->cls->nselectors];
        const a_prog *p;
        if ((err = alloc_prog_id(a, expr, &alt->sel[i])) != DRA_OK)
            return err;
        p = &a->progs[alt->sel[i]];
        if (p->err != DRA_OK) {
            if (from_class)
                dra_diag_add(S->d, "", 0, 0,
                             "claim %s, request %s: class %s: selector #%zu: CEL compile error: %s",
                             alloc_claim_name(S->ar, cl), alt->name, alt->cls->name, i, p->msg);
            else
                dra_diag_add(S->d, "", 0, 0,
                             "claim %s, request %s: selector #%zu: CEL compile error: %s",
                             alloc_claim_name(S->ar, cl), alt->name, i - alt->cls->nselectors,
                             p->msg);
            if (!S->lenient)
                return p->err;
            return broken(S, alt, p->err,
                          from_class ? dra_arena_sprintf(S->ar, "class %s: selector #%zu: CEL "
                                                         "compile error: %s", alt->cls->name, i,
                                                         p->msg)
                                     : dra_arena_sprintf(S->ar, "selector #%zu: CEL compile "
                                                         "error: %s", i - alt->cls->nselectors,
                                                         p->msg));
        }
    }
    alt->nsel = n;
    alt->nclass_sel = alt->cls->nselectors;
    return DRA_OK;
}

/* All mode: every matching device this node sees, fixed up front. */
static dra_err prep_all(s_state *S, const dra_alloc_claim *cl, s_alt *alt)
{
    dra_allocator *a = S->a;
    a_node *n = S->node;
    size_t cnt = 0;
    for (size_t i = 0; i < n->nvpools; i++) {
        const a_pool *p = &a->pools[n->vpools[i]];
        if (p->state == A_POOL_OK)
            continue;
        dra_diag_add(S->d, "", 0, 0,
                     "claim %s, request %s: asks for all devices, but resource pool %s/%s is %s",
                     alloc_claim_name(S->ar, cl), alt->name, p->driver, p->name,
                     p->state == A_POOL_INCOMPLETE ? "currently being updated"
                                                   : "invalid");
        return DRA_ECONFLICT;
    }
    alt->all = dra_arena_array(S->ar, n->nview + 1, sizeof *alt->all);
    if (!alt->all)
        return DRA_ENOMEM;
    for (size_t i = 0; i < n->nview; i++) {
        a_dev *v = &a->devs[n->view[i]];
        int ok = 1;
        for (size_t k = 0; ok && k < alt->nsel; k++) {
            int r = alloc_sel_eval(a, S->ar, cl, alt, k, v, S->d);
            if (r < 0)
                return (dra_err)r;
            ok = r;
        }
        /* A device that could not hold the request even when unused is
         * not part of "all" (kubernetes#140769); one that is merely full
         * right now is, and fails the request in the search. */
        if (ok && !alloc_cap_fit_total(v, alt))
            ok = 0;
        if (ok)
            alt->all[cnt++] = n->view[i];
    }
    alt->count = (int64_t)cnt;
    return DRA_OK;
}

static dra_err prep_alt(s_state *S, const dra_alloc_claim *cl, const dra_alloc_request *rq,
                        const dra_alloc_devreq *r, s_alt *alt)
{
    dra_err err;
    alt->r = r;
    alt->name = r->name ? dra_arena_sprintf(S->ar, "%s/%s", rq->name, r->name) : rq->name;
    if (!alt->name)
        return DRA_ENOMEM;
    alt->cls = r->class_name ? dra_map_get(&S->a->classes, r->class_name, strlen(r->class_name))
                             : NULL;
    if (!alt->cls) {
        dra_diag_add(S->d, "", 0, 0, "claim %s, request %s: device class %s does not exist",
                     alloc_claim_name(S->ar, cl), alt->name,
                     r->class_name ? r->class_name : "(none)");
        if (!S->lenient)
            return DRA_ENOTFOUND;
        alt->count = r->mode == DRA_ALLOC_ALL ? 0 : r->count > 0 ? r->count : 1;
        return broken(S, alt, DRA_ENOTFOUND,
                      dra_arena_sprintf(S->ar, "device class %s does not exist",
                                        r->class_name ? r->class_name : "(none)"));
    }
    if ((err = prep_selectors(S, cl, alt)) != DRA_OK || alt->broken) {
        alt->count = r->mode == DRA_ALLOC_ALL ? 0 : r->count > 0 ? r->count : 1;
        return err;
    }
    alt->capreq = dra_arena_array(S->ar, r->ncap_requests + 1, sizeof *alt->capreq);
    if (!alt->capreq)
        return DRA_ENOMEM;
    for (size_t i = 0; i < r->ncap_requests; i++)
        alt->capreq[i] = alloc_qn(&r->cap_requests[i].value);
    if (r->mode == DRA_ALLOC_ALL)
        return S->node ? prep_all(S, cl, alt) : DRA_OK;
    alt->count = r->count > 0 ? r->count : 1;
    return DRA_OK;
}

static int64_t alt_min(const s_alt *alt)
{
    return alt->r->mode == DRA_ALLOC_ALL ? (alt->count > 0 ? alt->count : 1) : alt->count;
}

static dra_err prep_claim(s_state *S, uint32_t ci, size_t *ri, size_t *ki)
{
    const dra_alloc_claim *cl = S->claims[ci];
    int64_t lower = 0;
    dra_err err;
    S->claim_req0[ci] = (uint32_t)*ri;
    S->claim_con0[ci] = (uint32_t)*ki;
    for (size_t i = 0; i < cl->nrequests; i++) {
        const dra_alloc_request *rq = &cl->requests[i];
        s_req *q = &S->reqs[(*ri)++];
        int64_t best = INT64_MAX;
        q->claim = ci;
        q->r = rq;
        q->nalts = rq->nfirst_available ? rq->nfirst_available : 1;
        if (!(q->alts = dra_arena_array(S->ar, q->nalts, sizeof *q->alts)))
            return DRA_ENOMEM;
        for (size_t k = 0; k < q->nalts; k++) {
            const dra_alloc_devreq *r = rq->nfirst_available ? &rq->first_available[k] : &rq->exactly;
            if ((err = prep_alt(S, cl, rq, r, &q->alts[k])) != DRA_OK)
                return err;
            if (alt_min(&q->alts[k]) < best)
                best = alt_min(&q->alts[k]);
        }
        lower += best;
    }
    if (lower > DRA_ALLOC_MAX_RESULTS) {
        dra_diag_add(S->d, "", 0, 0,
                     "claim %s: the number of requested devices %" PRId64
                     " exceeds the claim limit of %d",
                     alloc_claim_name(S->ar, cl), lower, DRA_ALLOC_MAX_RESULTS);
        return DRA_ELIMIT;
    }
    if (cl->nconstraints > 32) {
        dra_diag_add(S->d, "", 0, 0, "claim %s: more than 32 constraints",
                     alloc_claim_name(S->ar, cl));
        return DRA_ELIMIT;
    }
    for (size_t i = 0; i < cl->nconstraints; i++) {
        s_con *c = &S->cons[(*ki)++];
        c->c = &cl->constraints[i];
        c->distinct = cl->constraints[i].distinct_attribute != NULL;
        c->attr = c->distinct ? cl->constraints[i].distinct_attribute
                              : cl->constraints[i].match_attribute;
        if (!c->attr) {
            dra_diag_add(S->d, "", 0, 0, "claim %s: constraint #%zu has no attribute",
                         alloc_claim_name(S->ar, cl), i);
            return DRA_EINVAL;
        }
        if (!(c->vals = dra_arena_array(S->ar, DRA_ALLOC_MAX_RESULTS + 1, sizeof *c->vals)))
            return DRA_ENOMEM;
    }
    return DRA_OK;
}

static dra_err prep(s_state *S)
{
    size_t nreq = 0, ncon = 0, ri = 0, ki = 0;
    dra_err err;
    for (size_t i = 0; i < S->nclaims; i++) {
        nreq += S->claims[i]->nrequests;
        ncon += S->claims[i]->nconstraints;
    }
    S->reqs = dra_arena_array(S->ar, nreq + 1, sizeof *S->reqs);
    S->cons = dra_arena_array(S->ar, ncon + 1, sizeof *S->cons);
    S->claim_req0 = dra_arena_array(S->ar, S->nclaims + 1, sizeof *S->claim_req0);
    S->claim_con0 = dra_arena_array(S->ar, S->nclaims + 1, sizeof *S->claim_con0);
    S->claim_nres = dra_arena_array(S->ar, S->nclaims + 1, sizeof *S->claim_nres);
    if (!S->reqs || !S->cons || !S->claim_req0 || !S->claim_con0 || !S->claim_nres)
        return DRA_ENOMEM;
    for (uint32_t i = 0; i < S->nclaims; i++)
        if ((err = prep_claim(S, i, &ri, &ki)) != DRA_OK)
            return err;
    S->claim_req0[S->nclaims] = (uint32_t)ri;
    S->claim_con0[S->nclaims] = (uint32_t)ki;
    S->nreqs = ri;
    S->ncons = ki;
    return DRA_OK;
}

/* ---- entry points ------------------------------------------------------------------------- */

void dra_alloc_outcome_init(dra_alloc_outcome *o, const dra_mem *mem)
{
    memset(o, 0, sizeof *o);
    dra_arena_init(&o->arena, mem);
}

void dra_alloc_outcome_fini(dra_alloc_outcome *o)
{
    dra_arena_fini(&o->arena);
    memset(o, 0, sizeof *o);
}

static void outcome_reset(dra_alloc_outcome *o)
{
    dra_arena_reset(&o->arena);
    o->node = NULL;
    o->claims = NULL;
    o->nclaims = 0;
    o->explanation = NULL;
    o->steps = 0;
    o->why_where = NULL;
    o->why = NULL;
    o->nwhy = 0;
    o->why_together = NULL;
}

static dra_err invalid_pools(s_state *S)
{
    const a_node *n = S->node;
    dra_buf b;
    int any = 0;
    dra_buf_init(&b, S->a->mem);
    for (size_t i = 0; i < n->nvpools; i++) {
        const a_pool *p = &S->a->pools[n->vpools[i]];
        if (p->state != A_POOL_INVALID)
            continue;
        dra_buf_printf(&b, "%s%s/%s: %s", any ? "; " : "", p->driver, p->name, p->why);
        any = 1;
    }
    if (any)
        dra_diag_add(S->d, "", 0, 0, "invalid resource pools were encountered: %s",
                     b.p ? b.p : "");
    dra_buf_fini(&b);
    return any ? DRA_EINVALID : DRA_OK;
}

/* One node: prepare, search, build results or explain. */
static dra_err run_on_node(dra_allocator *a, a_node *n, const dra_alloc_claim *const *claims,
                           size_t nclaims, int explain, dra_alloc_outcome *out, dra_diag *d)
{
    s_state S;
    dra_err err;
    int r;
    memset(&S, 0, sizeof S);
    S.a = a;
    S.node = n;
    S.claims = claims;
    S.nclaims = nclaims;
    S.ar = &out->arena;
    S.d = d;
    S.lenient = explain;
    outcome_reset(out);
    out->node = n->name;
    if ((err = alloc_node_view(a, n)) != DRA_OK || (err = prep(&S)) != DRA_OK)
        goto done;
    if (S.fatal) { /* a missing class or a broken selector: explain them all */
        err = S.fatal;
        if (alloc_explain(&S, out) == DRA_ENOMEM)
            err = DRA_ENOMEM;
        goto done;
    }
    r = s_request(&S, 0);
    out->steps = S.steps;
    if (r == S_FOUND) {
        err = alloc_build_results(&S, out);
    } else if (r == S_ERR) {
        err = S.err;
    } else if ((err = invalid_pools(&S)) == DRA_OK) {
        err = DRA_EUNSAT;
        if (explain && alloc_explain(&S, out) == DRA_ENOMEM)
            err = DRA_ENOMEM;
        else if (explain && out->explanation)
            dra_diag_add(d, "", 0, 0, "%s", out->explanation);
    }
done:
    while (S.npl)
        unplace(&S);
    dra_free(a->mem, S.pl);
    return err;
}

dra_err dra_allocator_allocate(dra_allocator *a, const char *node,
                               const dra_alloc_claim *const *claims, size_t nclaims,
                               dra_alloc_outcome *out, dra_diag *d)
{
    a_node tmp, *n;
    dra_err err = alloc_seal(a, d);
    if (err != DRA_OK)
        return err;
    n = alloc_node_get(a, node, 0);
    if (n)
        return run_on_node(a, n, claims, nclaims, a->opts.explain, out, d);
    /* A node the inventory never heard of: only shared devices apply. */
    memset(&tmp, 0, sizeof tmp);
    tmp.name = node;
    tmp.idx = -1;
    err = run_on_node(a, &tmp, claims, nclaims, a->opts.explain, out, d);
    if (out->node == node && (err == DRA_OK || err == DRA_EUNSAT))
        out->node = dra_arena_strdup(&out->arena, node);
    dra_free(a->mem, tmp.view);
    dra_free(a->mem, tmp.vpools);
    return err;
}

/* Devices a node must have free, at least, for the claims to fit. */
static int32_t lower_bound(const dra_allocator *a, const dra_alloc_claim *const *claims,
                           size_t nclaims)
{
    int64_t k = 0;
    for (size_t i = 0; i < nclaims; i++)
        for (size_t j = 0; j < claims[i]->nrequests; j++) {
            const dra_alloc_request *rq = &claims[i]->requests[j];
            size_t na = rq->nfirst_available ? rq->nfirst_available : 1;
            int64_t best = INT64_MAX;
            for (size_t x = 0; x < na; x++) {
                const dra_alloc_devreq *r = rq->nfirst_available ? &rq->first_available[x]
                                                                 : &rq->exactly;
                int64_t need = r->admin_access ? 0
                               : r->mode == DRA_ALLOC_ALL ? 1
                               : r->count > 0 ? r->count : 1;
                best = need < best ? need : best;
            }
            k += best;
        }
    /* Shared devices may serve several requests at once. */
    if (a->any_multi && k > 1)
        k = 1;
    k -= a->shared_free;
    return k > INT32_MAX ? INT32_MAX : (int32_t)k;
}

/* Explains across all nodes. With |fatal_only|, only when the pre-pass
 * finds a missing class or a broken selector (DRA_OK back otherwise, and
 * nothing in |d|); the error code is returned then. */
static dra_err explain_all_nodes(dra_allocator *a, const dra_alloc_claim *const *claims,
                                 size_t nclaims, int fatal_only, dra_alloc_outcome *out,
                                 dra_diag *d)
{
    s_state S;
    dra_diag pd;
    dra_err err;
    memset(&S, 0, sizeof S);
    S.a = a;
    S.claims = claims;
    S.nclaims = nclaims;
    S.ar = &out->arena;
    S.lenient = 1;
    dra_diag_init(&pd, a->mem);
    S.d = &pd;
    outcome_reset(out);
    err = prep(&S);
    if (err == DRA_OK && fatal_only && !S.fatal) {
        dra_diag_fini(&pd);
        return DRA_OK;
    }
    for (size_t i = 0; i < pd.n; i++)
        dra_diag_add(d, "", 0, 0, "%s", pd.v[i].msg);
    dra_diag_fini(&pd);
    if (err == DRA_OK)
        err = alloc_explain(&S, out);
    if (err != DRA_OK)
        return err;
    if (out->explanation && !S.fatal)
        dra_diag_add(d, "", 0, 0, "%s", out->explanation);
    return S.fatal ? S.fatal : DRA_EUNSAT;
}

/* ---- scheduling memo ---------------------------------------------------------------------- */

/* The key is binary (lengths and numbers as raw bytes): it is built for
 * every scheduled pod, so it must be cheap. */
static void key_num(dra_buf *b, int64_t v)
{
    dra_buf_append(b, &v, sizeof v);
}

static void key_str(dra_buf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    key_num(b, s ? (int64_t)n : -1);
    dra_buf_append(b, s, n);
}

static void key_devreq(dra_buf *b, const dra_alloc_devreq *r)
{
    key_str(b, r->name);
    key_str(b, r->class_name);
    key_num(b, (int64_t)r->mode);
    key_num(b, r->count);
    key_num(b, r->admin_access);
    key_num(b, (int64_t)r->nselectors);
    for (size_t i = 0; i < r->nselectors; i++)
        key_str(b, r->selectors[i]);
    key_num(b, (int64_t)r->ntolerations);
    for (size_t i = 0; i < r->ntolerations; i++) {
        key_str(b, r->tolerations[i].key);
        key_str(b, r->tolerations[i].value);
        key_num(b, (int64_t)r->tolerations[i].op * 16 + (int64_t)r->tolerations[i].effect);
    }
    key_num(b, (int64_t)r->ncap_requests);
    for (size_t i = 0; i < r->ncap_requests; i++) {
        a_qn q = alloc_qn(&r->cap_requests[i].value);
        key_str(b, r->cap_requests[i].name);
        dra_buf_append(b, &q, sizeof q);
    }
}

/* Everything about the claims that decides where they fit (names and
 * config do not). */
static void shape_key(dra_buf *b, const dra_alloc_claim *const *claims, size_t nclaims)
{
    for (size_t i = 0; i < nclaims; i++) {
        const dra_alloc_claim *c = claims[i];
        key_num(b, (int64_t)c->nrequests);
        for (size_t j = 0; j < c->nrequests; j++) {
            const dra_alloc_request *rq = &c->requests[j];
            key_str(b, rq->name);
            key_num(b, (int64_t)rq->nfirst_available);
            if (!rq->nfirst_available)
                key_devreq(b, &rq->exactly);
            for (size_t k = 0; k < rq->nfirst_available; k++)
                key_devreq(b, &rq->first_available[k]);
        }
        key_num(b, (int64_t)c->nconstraints);
        for (size_t j = 0; j < c->nconstraints; j++) {
            key_str(b, c->constraints[j].match_attribute);
            key_str(b, c->constraints[j].distinct_attribute);
            key_num(b, (int64_t)c->constraints[j].nrequests);
            for (size_t k = 0; k < c->constraints[j].nrequests; k++)
                key_str(b, c->constraints[j].requests[k]);
        }
    }
}

static a_memo *memo_get(dra_allocator *a, const dra_alloc_claim *const *claims, size_t nclaims)
{
    dra_buf *b = &a->keybuf;
    a_memo *m = NULL;
    dra_buf_reset(b);
    shape_key(b, claims, nclaims);
    if (!b->oom && b->p) {
        m = dra_map_get(&a->memo, b->p, b->len);
        if (!m) {
            char *k = dra_arena_alloc(&a->arena, b->len + 1);
            m = dra_arena_zalloc(&a->arena, sizeof *m);
            if (k)
                memcpy(k, b->p, b->len + 1);
            if (!k || !m || dra_map_put(&a->memo, k, b->len, m))
                m = NULL;
            else
                m->epoch = a->epoch + 1; /* stale: starts from the first node */
        }
    }
    b->oom = 0;
    if (m && m->epoch != a->epoch) {
        m->epoch = a->epoch;
        m->cursor = 0;
    }
    return m;
}

dra_err dra_allocator_schedule_where(dra_allocator *a, const dra_alloc_claim *const *claims,
                                     size_t nclaims, dra_alloc_node_filter filter, void *ud,
                                     dra_alloc_outcome *out, dra_diag *d)
{
    dra_err err = alloc_seal(a, d);
    int32_t k;
    size_t from;
    int invalid = 0;
    a_memo *memo = NULL, none = {0, 0};
    if (err != DRA_OK)
        return err;
    k = lower_bound(a, claims, nclaims);
    /* Nodes before the memo's cursor are known not to fit this shape. A
     * filter may skip nodes that would fit, so filtered calls neither use
     * nor move the memo. */
    if (!filter)
        memo = memo_get(a, claims, nclaims);
    if (!memo)
        memo = &none;
    from = memo->cursor;
    for (;;) {
        size_t i = alloc_tree_find(a, from, k);
        a_node *n;
        if (i >= a->nnodes) {
            memo->cursor = a->nnodes;
            break;
        }
        n = a->sorted[i];
        from = i + 1;
        if (filter && !filter(ud, n->name, n->labels, n->nlabels))
            continue;
        err = run_on_node(a, n, claims, nclaims, 0, out, NULL);
        if (err == DRA_OK) {
            memo->cursor = i;
            return DRA_OK;
        }
        if (err == DRA_EINVALID)
            invalid = 1;
        else if (err != DRA_EUNSAT) {
            /* A fatal error (unknown class, CEL error) is the same on every
             * node: report it as Kubernetes does, with the message, and
             * explain every request when it is about the claims. */
            if (a->opts.explain &&
                (err = explain_all_nodes(a, claims, nclaims, 1, out, d)) != DRA_OK)
                return err;
            return run_on_node(a, n, claims, nclaims, 0, out, d);
        }
        memo->cursor = from;
    }
    if (invalid)
        dra_diag_add(d, "", 0, 0, "invalid resource pools were encountered on some nodes");
    if (!a->opts.explain) {
        outcome_reset(out);
        return DRA_EUNSAT;
    }
    return explain_all_nodes(a, claims, nclaims, 0, out, d);
}

dra_err dra_allocator_schedule(dra_allocator *a, const dra_alloc_claim *const *claims,
                               size_t nclaims, dra_alloc_outcome *out, dra_diag *d)
{
    return dra_allocator_schedule_where(a, claims, nclaims, NULL, NULL, out, d);
}

dra_err dra_allocator_explain(dra_allocator *a, const dra_alloc_claim *const *claims,
                              size_t nclaims, dra_alloc_outcome *out, dra_diag *d)
{
    dra_err err = alloc_seal(a, d);
    if (err != DRA_OK)
        return err;
    return explain_all_nodes(a, claims, nclaims, 0, out, d);
}

static dra_err commit(dra_allocator *a, const dra_alloc_outcome *o, int sign)
{
    dra_err err;
    for (size_t i = 0; i < o->nclaims; i++)
        for (size_t j = 0; j < o->claims[i].nresults; j++) {
            const dra_alloc_device_result *r = &o->claims[i].results[j];
            err = sign > 0 ? dra_allocator_mark(a, r) : dra_allocator_unmark(a, r);
            if (err != DRA_OK)
                return err;
        }
    return DRA_OK;
}

dra_err dra_allocator_commit(dra_allocator *a, const dra_alloc_outcome *o)
{
    return commit(a, o, 1);
}

dra_err dra_allocator_release(dra_allocator *a, const dra_alloc_outcome *o)
{
    return commit(a, o, -1);
}
