/*
 * from_api.c: the one place that knows both the typed API objects
 * (dra/api.h) and the allocator's model. Slices, classes and claims come
 * in; AllocationResults go out. Everything is built in the caller's arena
 * and borrows from the API objects.
 */
#include <string.h>

#include "alloc_int.h"

#define NEW(ar, n, T) ((T *)dra_arena_array((ar), (n) + 1, sizeof(T)))

/* ---- node selectors ---------------------------------------------------------- */

static dra_err ns_op(const char *op, dra_alloc_nsop *out)
{
    static const struct {
        const char *name;
        dra_alloc_nsop op;
    } ops[] = {
        {"In", DRA_ALLOC_NS_IN},          {"NotIn", DRA_ALLOC_NS_NOT_IN},
        {"Exists", DRA_ALLOC_NS_EXISTS},  {"DoesNotExist", DRA_ALLOC_NS_DOES_NOT_EXIST},
        {"Gt", DRA_ALLOC_NS_GT},          {"Lt", DRA_ALLOC_NS_LT},
    };
    for (size_t i = 0; op && i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(op, ops[i].name) == 0) {
            *out = ops[i].op;
            return DRA_OK;
        }
    return DRA_EINVAL;
}

static dra_err ns_reqs(dra_arena *ar, const dra_node_selector_req *in, size_t n,
                       const dra_alloc_ns_req **out, const char *what, dra_diag *d)
{
    dra_alloc_ns_req *r = NEW(ar, n, dra_alloc_ns_req);
    if (!r)
        return DRA_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        r[i].key = in[i].key ? in[i].key : "";
        r[i].values = in[i].values.v;
        r[i].nvalues = in[i].values.n;
        if (ns_op(in[i].op, &r[i].op) != DRA_OK) {
            dra_diag_add(d, "", 0, 0, "%s: unknown node selector operator \"%s\"", what,
                         in[i].op ? in[i].op : "");
            return DRA_EINVAL;
        }
    }
    *out = r;
    return DRA_OK;
}

static dra_err node_selector(dra_arena *ar, const dra_node_selector *in,
                             const dra_alloc_node_selector **out, const char *what, dra_diag *d)
{
    dra_alloc_node_selector *s;
    dra_alloc_ns_term *t;
    dra_err err;
    *out = NULL;
    if (!in)
        return DRA_OK;
    s = NEW(ar, 1, dra_alloc_node_selector);
    t = NEW(ar, in->n_terms, dra_alloc_ns_term);
    if (!s || !t)
        return DRA_ENOMEM;
    for (size_t i = 0; i < in->n_terms; i++) {
        const dra_node_selector_term *it = &in->terms[i];
        if ((err = ns_reqs(ar, it->match_expressions, it->n_match_expressions, &t[i].exprs,
                           what, d)) != DRA_OK ||
            (err = ns_reqs(ar, it->match_fields, it->n_match_fields, &t[i].fields, what, d)) !=
                DRA_OK)
            return err;
        t[i].nexprs = it->n_match_expressions;
        t[i].nfields = it->n_match_fields;
    }
    s->terms = t;
    s->nterms = in->n_terms;
    *out = s;
    return DRA_OK;
}

dra_err dra_alloc_node_selector_from_api(dra_arena *ar, const dra_node_selector *in,
                                         const dra_alloc_node_selector **out, dra_diag *d)
{
    return node_selector(ar, in, out, "node selector", d);
}

/* ---- ResourceSlice ----------------------------------------------------------------- */

static dra_err attrs(dra_arena *ar, const dra_device *in, dra_alloc_device *dv,
                     const char *what, dra_diag *d)
{
    dra_cel_attr *a = NEW(ar, in->n_attrs, dra_cel_attr);
    if (!a)
        return DRA_ENOMEM;
    for (size_t i = 0; i < in->n_attrs; i++) {
        const dra_attr *v = &in->attrs[i].val;
        a[i].name = in->attrs[i].name;
        if (v->set & DRA_ATTR_INT) {
            a[i].kind = DRA_CEL_ATTR_INT;
            a[i].i = v->i;
        } else if (v->set & DRA_ATTR_BOOL) {
            a[i].kind = DRA_CEL_ATTR_BOOL;
            a[i].b = v->b;
        } else if (v->set & DRA_ATTR_STRING) {
            a[i].kind = DRA_CEL_ATTR_STRING;
            a[i].s = v->s ? v->s : "";
        } else if (v->set & DRA_ATTR_VERSION) {
            a[i].kind = DRA_CEL_ATTR_VERSION;
            a[i].s = v->v ? v->v : "";
            if (dra_semver_parse(a[i].s, strlen(a[i].s), &a[i].version) != DRA_OK) {
                dra_diag_add(d, "", 0, 0, "%s: device %s: attribute %s: invalid version %s",
                             what, in->name, a[i].name, a[i].s);
                return DRA_EINVAL;
            }
        } else {
            dra_diag_add(d, "", 0, 0, "%s: device %s: attribute %s has no value", what,
                         in->name, a[i].name);
            return DRA_EINVAL;
        }
    }
    dv->attrs = a;
    dv->nattrs = in->n_attrs;
    return DRA_OK;
}

static dra_err caps(dra_arena *ar, const dra_device *in, dra_alloc_device *dv)
{
    dra_alloc_capacity *c = NEW(ar, in->n_capacity, dra_alloc_capacity);
    if (!c)
        return DRA_ENOMEM;
    for (size_t i = 0; i < in->n_capacity; i++) {
        const dra_capacity_request_policy *p = in->capacity[i].request_policy;
        c[i].name = in->capacity[i].name;
        c[i].value = in->capacity[i].value;
        if (!p)
            continue;
        c[i].has_policy = 1;
        if (p->default_) {
            c[i].has_default = 1;
            c[i].def = *p->default_;
        }
        c[i].valid_values = p->valid_values;
        c[i].nvalid_values = p->n_valid_values;
        if (p->valid_range && p->valid_range->min) {
            c[i].has_range = 1;
            c[i].min = *p->valid_range->min;
            if ((c[i].has_max = p->valid_range->max != NULL))
                c[i].max = *p->valid_range->max;
            if ((c[i].has_step = p->valid_range->step != NULL))
                c[i].step = *p->valid_range->step;
        }
    }
    dv->caps = c;
    dv->ncaps = in->n_capacity;
    return DRA_OK;
}

static dra_err counter_sets(dra_arena *ar, const char *const *names, const dra_counter *const *ctrs,
                            const size_t *nctrs, size_t n, const dra_alloc_counter_set **out)
{
    dra_alloc_counter_set *s = NEW(ar, n, dra_alloc_counter_set);
    if (!s)
        return DRA_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        dra_alloc_counter *c = NEW(ar, nctrs[i], dra_alloc_counter);
        if (!c)
            return DRA_ENOMEM;
        for (size_t k = 0; k < nctrs[i]; k++) {
            c[k].name = ctrs[i][k].name;
            c[k].value = ctrs[i][k].value;
        }
        s[i].name = names[i];
        s[i].counters = c;
        s[i].ncounters = nctrs[i];
    }
    *out = s;
    return DRA_OK;
}

static dra_alloc_effect effect(const char *e)
{
    if (!e || !*e)
        return DRA_ALLOC_EFFECT_ANY;
    if (strcmp(e, "None") == 0)
        return DRA_ALLOC_EFFECT_NONE;
    if (strcmp(e, "NoSchedule") == 0)
        return DRA_ALLOC_EFFECT_NO_SCHEDULE;
    if (strcmp(e, "NoExecute") == 0)
        return DRA_ALLOC_EFFECT_NO_EXECUTE;
    return DRA_ALLOC_EFFECT_UNKNOWN;
}

static dra_err consumes(dra_arena *ar, const dra_device *in, dra_alloc_device *dv)
{
    size_t n = in->n_consumes_counters;
    const char **names = NEW(ar, n, const char *);
    const dra_counter **ctrs = NEW(ar, n, const dra_counter *);
    size_t *nctrs = NEW(ar, n, size_t);
    if (!names || !ctrs || !nctrs)
        return DRA_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        names[i] = in->consumes_counters[i].counter_set ? in->consumes_counters[i].counter_set
                                                        : "";
        ctrs[i] = in->consumes_counters[i].counters;
        nctrs[i] = in->consumes_counters[i].n_counters;
    }
    dv->nconsumes = n;
    return counter_sets(ar, names, ctrs, nctrs, n, &dv->consumes);
}

static dra_err device(dra_arena *ar, const dra_device *in, dra_alloc_device *dv,
                      const char *what, dra_diag *d)
{
    dra_alloc_taint *t = NEW(ar, in->n_taints, dra_alloc_taint);
    dra_err err;
    if (!t)
        return DRA_ENOMEM;
    dv->name = in->name ? in->name : "";
    if ((err = attrs(ar, in, dv, what, d)) != DRA_OK || (err = caps(ar, in, dv)) != DRA_OK ||
        (err = consumes(ar, in, dv)) != DRA_OK)
        return err;
    for (size_t i = 0; i < in->n_taints; i++) {
        t[i].key = in->taints[i].key ? in->taints[i].key : "";
        t[i].value = in->taints[i].value;
        t[i].effect = effect(in->taints[i].effect);
        if (t[i].effect == DRA_ALLOC_EFFECT_ANY)
            t[i].effect = DRA_ALLOC_EFFECT_UNKNOWN;
    }
    dv->taints = t;
    dv->ntaints = in->n_taints;
    dv->allow_multiple_allocations = DRA_TRI_IS_TRUE(in->allow_multiple_allocations);
    dv->binds_to_node = DRA_TRI_IS_TRUE(in->binds_to_node);
    dv->binding_conditions = in->binding_conditions.v;
    dv->nbinding_conditions = in->binding_conditions.n;
    dv->binding_failure_conditions = in->binding_failure_conditions.v;
    dv->nbinding_failure_conditions = in->binding_failure_conditions.n;
    dv->node_name = in->node_name;
    dv->all_nodes = DRA_TRI_IS_TRUE(in->all_nodes);
    return node_selector(ar, in->node_selector, &dv->node_selector, what, d);
}

dra_err dra_alloc_slice_from_api(dra_arena *ar, const dra_object *obj, dra_alloc_slice **out,
                                 dra_diag *d)
{
    const dra_resource_slice_spec *sp = &obj->u.slice.spec;
    dra_alloc_slice *s = NEW(ar, 1, dra_alloc_slice);
    dra_alloc_device *dv = NEW(ar, sp->n_devices, dra_alloc_device);
    const char *what;
    dra_err err;
    if (!s || !dv)
        return DRA_ENOMEM;
    s->name = obj->meta.name ? obj->meta.name : "";
    what = dra_arena_sprintf(ar, "ResourceSlice %s", s->name);
    if (!what)
        return DRA_ENOMEM;
    s->driver = sp->driver ? sp->driver : "";
    s->pool = sp->pool.name ? sp->pool.name : "";
    s->generation = sp->pool.generation;
    s->slice_count = sp->pool.resource_slice_count;
    s->node_name = sp->node_name;
    s->all_nodes = DRA_TRI_IS_TRUE(sp->all_nodes);
    s->per_device_node_selection = DRA_TRI_IS_TRUE(sp->per_device_node_selection);
    if ((err = node_selector(ar, sp->node_selector, &s->node_selector, what, d)) != DRA_OK)
        return err;
    for (size_t i = 0; i < sp->n_devices; i++)
        if ((err = device(ar, &sp->devices[i], &dv[i], what, d)) != DRA_OK)
            return err;
    s->devices = dv;
    s->ndevices = sp->n_devices;
    {
        size_t n = sp->n_shared_counters;
        const char **names = NEW(ar, n, const char *);
        const dra_counter **ctrs = NEW(ar, n, const dra_counter *);
        size_t *nctrs = NEW(ar, n, size_t);
        if (!names || !ctrs || !nctrs)
            return DRA_ENOMEM;
        for (size_t i = 0; i < n; i++) {
            names[i] = sp->shared_counters[i].name ? sp->shared_counters[i].name : "";
            ctrs[i] = sp->shared_counters[i].counters;
            nctrs[i] = sp->shared_counters[i].n_counters;
        }
        s->nshared_counters = n;
        if ((err = counter_sets(ar, names, ctrs, nctrs, n, &s->shared_counters)) != DRA_OK)
            return err;
    }
    *out = s;
    return DRA_OK;
}

/* ---- DeviceClass and claims ------------------------------------------------------------ */

static dra_err selectors(dra_arena *ar, const dra_device_selector *in, size_t n,
                         const char *const **out, const char *what, dra_diag *d)
{
    const char **s = NEW(ar, n, const char *);
    if (!s)
        return DRA_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        if (!in[i].cel_set || !in[i].expression) {
            dra_diag_add(d, "", 0, 0, "%s: selector #%zu has no CEL expression", what, i);
            return DRA_EINVAL;
        }
        s[i] = in[i].expression;
    }
    *out = s;
    return DRA_OK;
}

static dra_err configs(dra_arena *ar, const dra_device_config *in, size_t n,
                       const dra_alloc_config **out)
{
    dra_alloc_config *c = NEW(ar, n, dra_alloc_config);
    if (!c)
        return DRA_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        c[i].requests = in[i].requests.v;
        c[i].nrequests = in[i].requests.n;
        c[i].driver = in[i].opaque ? in[i].opaque->driver : NULL;
        c[i].parameters = in[i].opaque ? in[i].opaque->parameters : NULL;
    }
    *out = c;
    return DRA_OK;
}

dra_err dra_alloc_class_from_api(dra_arena *ar, const dra_object *obj, dra_alloc_class **out,
                                 dra_diag *d)
{
    const dra_device_class_spec *sp = &obj->u.device_class.spec;
    dra_alloc_class *c = NEW(ar, 1, dra_alloc_class);
    const char *what;
    dra_err err;
    if (!c)
        return DRA_ENOMEM;
    c->name = obj->meta.name ? obj->meta.name : "";
    if (!(what = dra_arena_sprintf(ar, "DeviceClass %s", c->name)))
        return DRA_ENOMEM;
    if ((err = selectors(ar, sp->selectors, sp->n_selectors, &c->selectors, what, d)) != DRA_OK ||
        (err = configs(ar, sp->config, sp->n_config, &c->config)) != DRA_OK)
        return err;
    c->nselectors = sp->n_selectors;
    c->nconfig = sp->n_config;
    *out = c;
    return DRA_OK;
}

static dra_err devreq(dra_arena *ar, const dra_device_request_spec *in, dra_alloc_devreq *r,
                      const char *what, dra_diag *d)
{
    dra_alloc_toleration *t = NEW(ar, in->n_tolerations, dra_alloc_toleration);
    size_t ncap = in->capacity ? in->capacity->requests.n : 0;
    dra_alloc_cap_request *cr = NEW(ar, ncap, dra_alloc_cap_request);
    dra_err err;
    if (!t || !cr)
        return DRA_ENOMEM;
    r->class_name = in->device_class_name;
    if ((err = selectors(ar, in->selectors, in->n_selectors, &r->selectors, what, d)) != DRA_OK)
        return err;
    r->nselectors = in->n_selectors;
    if (in->allocation_mode && strcmp(in->allocation_mode, "All") == 0) {
        r->mode = DRA_ALLOC_ALL;
    } else if (in->allocation_mode && *in->allocation_mode &&
               strcmp(in->allocation_mode, "ExactCount") != 0) {
        dra_diag_add(d, "", 0, 0, "%s: unknown allocation mode %s", what, in->allocation_mode);
        return DRA_EINVAL;
    }
    r->count = in->count > 0 ? in->count : 1;
    r->admin_access = DRA_TRI_IS_TRUE(in->admin_access);
    for (size_t i = 0; i < in->n_tolerations; i++) {
        const dra_device_toleration *x = &in->tolerations[i];
        t[i].key = x->key;
        t[i].op = x->op && strcmp(x->op, "Exists") == 0 ? DRA_ALLOC_TOL_EXISTS : DRA_ALLOC_TOL_EQUAL;
        t[i].value = x->value;
        t[i].effect = effect(x->effect);
        t[i].has_seconds = x->toleration_seconds.set;
        t[i].seconds = x->toleration_seconds.v;
    }
    r->tolerations = t;
    r->ntolerations = in->n_tolerations;
    for (size_t i = 0; i < ncap; i++) {
        cr[i].name = in->capacity->requests.v[i].key;
        cr[i].value = in->capacity->requests.v[i].q;
    }
    r->cap_requests = cr;
    r->ncap_requests = ncap;
    return DRA_OK;
}

static dra_err request(dra_arena *ar, const dra_device_request *in, dra_alloc_request *r,
                       const char *claim, dra_diag *d)
{
    const char *what = dra_arena_sprintf(ar, "claim %s, request %s", claim, in->name);
    dra_err err;
    if (!what)
        return DRA_ENOMEM;
    r->name = in->name ? in->name : "";
    if (in->n_first_available) {
        dra_alloc_devreq *s = NEW(ar, in->n_first_available, dra_alloc_devreq);
        if (!s)
            return DRA_ENOMEM;
        for (size_t i = 0; i < in->n_first_available; i++) {
            if ((err = devreq(ar, &in->first_available[i], &s[i], what, d)) != DRA_OK)
                return err;
            s[i].name = in->first_available[i].name ? in->first_available[i].name : "";
            s[i].admin_access = 0; /* subrequests have no adminAccess */
        }
        r->first_available = s;
        r->nfirst_available = in->n_first_available;
        return DRA_OK;
    }
    if (!in->exactly) {
        dra_diag_add(d, "", 0, 0, "%s: needs exactly or firstAvailable", what);
        return DRA_EINVAL;
    }
    return devreq(ar, in->exactly, &r->exactly, what, d);
}

dra_err dra_alloc_claim_from_api(dra_arena *ar, const dra_object_meta *meta,
                                 const dra_claim_spec *spec, dra_alloc_claim **out, dra_diag *d)
{
    dra_alloc_claim *c = NEW(ar, 1, dra_alloc_claim);
    dra_alloc_request *r = NEW(ar, spec->n_requests, dra_alloc_request);
    dra_alloc_constraint *k = NEW(ar, spec->n_constraints, dra_alloc_constraint);
    const char *name;
    dra_err err;
    if (!c || !r || !k)
        return DRA_ENOMEM;
    c->namespace_ = meta->namespace_;
    c->name = meta->name ? meta->name : meta->generate_name;
    c->uid = meta->uid;
    if (!(name = alloc_claim_name(ar, c)))
        return DRA_ENOMEM;
    for (size_t i = 0; i < spec->n_requests; i++)
        if ((err = request(ar, &spec->requests[i], &r[i], name, d)) != DRA_OK)
            return err;
    for (size_t i = 0; i < spec->n_constraints; i++) {
        k[i].requests = spec->constraints[i].requests.v;
        k[i].nrequests = spec->constraints[i].requests.n;
        k[i].match_attribute = spec->constraints[i].match_attribute;
        k[i].distinct_attribute = spec->constraints[i].distinct_attribute;
    }
    c->requests = r;
    c->nrequests = spec->n_requests;
    c->constraints = k;
    c->nconstraints = spec->n_constraints;
    if ((err = configs(ar, spec->config, spec->n_config, &c->config)) != DRA_OK)
        return err;
    c->nconfig = spec->n_config;
    *out = c;
    return DRA_OK;
}

dra_err dra_alloc_labels_from_api(dra_arena *ar, const dra_object *node,
                                  dra_alloc_label **labels, size_t *n)
{
    const dra_strmap *m = &node->meta.labels;
    dra_alloc_label *l = NEW(ar, m->n, dra_alloc_label);
    if (!l)
        return DRA_ENOMEM;
    for (size_t i = 0; i < m->n; i++) {
        l[i].key = m->v[i].key;
        l[i].value = m->v[i].val ? m->v[i].val : "";
    }
    *labels = l;
    *n = m->n;
    return DRA_OK;
}

dra_err dra_alloc_mark_api(dra_allocator *a, const dra_allocation_result *res, int sign)
{
    for (size_t i = 0; res && i < res->n_results; i++) {
        const dra_device_result *x = &res->results[i];
        dra_alloc_consumed cons[64];
        dra_alloc_device_result r;
        dra_err err;
        memset(&r, 0, sizeof r);
        if (!x->driver || !x->pool || !x->device)
            continue;
        r.driver = x->driver;
        r.pool = x->pool;
        r.device = x->device;
        r.admin_access = DRA_TRI_IS_TRUE(x->admin_access);
        r.share_id = x->share_id;
        for (size_t k = 0; k < x->consumed_capacity.n && k < 64; k++) {
            cons[k].name = x->consumed_capacity.v[k].key;
            cons[k].value = x->consumed_capacity.v[k].q;
            r.nconsumed = k + 1;
        }
        r.consumed = cons;
        err = sign < 0 ? dra_allocator_unmark(a, &r) : dra_allocator_mark(a, &r);
        if (err != DRA_OK)
            return err;
    }
    return DRA_OK;
}

/* ---- results back to the API ------------------------------------------------------------ */

/* Results point into the outcome's arena, which dies with the outcome, so
 * everything the API result needs is copied into |ar|. */
static const char **copy_strs(dra_arena *ar, const char *const *v, size_t n, int *oom)
{
    const char **out;
    if (!n)
        return NULL;
    if (!(out = NEW(ar, n, const char *))) {
        *oom = 1;
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (v[i] && !(out[i] = dra_arena_strdup(ar, v[i])))
            *oom = 1;
    return out;
}

static const char *copy_str(dra_arena *ar, const char *s, int *oom)
{
    const char *c = s ? dra_arena_strdup(ar, s) : NULL;
    if (s && !c)
        *oom = 1;
    return c;
}

static const char *effect_name(dra_alloc_effect e)
{
    switch (e) {
    case DRA_ALLOC_EFFECT_NONE:
        return "None";
    case DRA_ALLOC_EFFECT_NO_SCHEDULE:
        return "NoSchedule";
    case DRA_ALLOC_EFFECT_NO_EXECUTE:
        return "NoExecute";
    default:
        return NULL;
    }
}

static dra_err result_device(dra_arena *ar, const dra_alloc_device_result *in,
                             dra_device_result *r)
{
    dra_device_toleration *t = NEW(ar, in->ntolerations, dra_device_toleration);
    dra_qty_entry *q = NEW(ar, in->nconsumed, dra_qty_entry);
    int oom = 0;
    if (!t || !q)
        return DRA_ENOMEM;
    r->request = copy_str(ar, in->request, &oom);
    r->driver = copy_str(ar, in->driver, &oom);
    r->pool = copy_str(ar, in->pool, &oom);
    r->device = copy_str(ar, in->device, &oom);
    r->admin_access = in->admin_access ? DRA_TRI_TRUE : DRA_TRI_UNSET;
    for (size_t i = 0; i < in->ntolerations; i++) {
        const dra_alloc_toleration *x = &in->tolerations[i];
        t[i].key = copy_str(ar, x->key, &oom);
        t[i].op = x->op == DRA_ALLOC_TOL_EXISTS ? "Exists" : "Equal";
        t[i].value = copy_str(ar, x->value, &oom);
        t[i].effect = effect_name(x->effect);
        t[i].toleration_seconds.set = x->has_seconds;
        t[i].toleration_seconds.v = x->seconds;
    }
    r->tolerations = in->ntolerations ? t : NULL;
    r->n_tolerations = in->ntolerations;
    r->binding_conditions.v = copy_strs(ar, in->binding_conditions, in->nbinding_conditions, &oom);
    r->binding_conditions.n = in->nbinding_conditions;
    r->binding_failure_conditions.v =
        copy_strs(ar, in->binding_failure_conditions, in->nbinding_failure_conditions, &oom);
    r->binding_failure_conditions.n = in->nbinding_failure_conditions;
    r->share_id = copy_str(ar, in->share_id, &oom);
    for (size_t i = 0; i < in->nconsumed; i++) {
        q[i].key = copy_str(ar, in->consumed[i].name, &oom);
        q[i].q = in->consumed[i].value;
    }
    r->consumed_capacity.v = in->nconsumed ? q : NULL;
    r->consumed_capacity.n = in->nconsumed;
    return oom ? DRA_ENOMEM : DRA_OK;
}

static dra_err result_selector(dra_arena *ar, const dra_alloc_node_selector *in,
                               dra_node_selector **out)
{
    static const char *const opnames[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    dra_node_selector *s;
    *out = NULL;
    if (!in)
        return DRA_OK;
    if (!(s = NEW(ar, 1, dra_node_selector)) ||
        !(s->terms = NEW(ar, in->nterms, dra_node_selector_term)))
        return DRA_ENOMEM;
    s->n_terms = in->nterms;
    s->terms_set = 1;
    for (size_t i = 0; i < in->nterms; i++) {
        const dra_alloc_ns_term *t = &in->terms[i];
        dra_node_selector_req *e = NEW(ar, t->nexprs, dra_node_selector_req);
        dra_node_selector_req *f = NEW(ar, t->nfields, dra_node_selector_req);
        if (!e || !f)
            return DRA_ENOMEM;
        for (size_t k = 0; k < t->nexprs + t->nfields; k++) {
            const dra_alloc_ns_req *x = k < t->nexprs ? &t->exprs[k] : &t->fields[k - t->nexprs];
            dra_node_selector_req *y = k < t->nexprs ? &e[k] : &f[k - t->nexprs];
            int oom = 0;
            y->key = copy_str(ar, x->key, &oom);
            y->op = opnames[x->op];
            y->values.v = copy_strs(ar, x->values, x->nvalues, &oom);
            if (oom)
                return DRA_ENOMEM;
            y->values.n = x->nvalues;
            y->values.set = x->nvalues > 0;
        }
        s->terms[i].match_expressions = t->nexprs ? e : NULL;
        s->terms[i].n_match_expressions = t->nexprs;
        s->terms[i].match_fields = t->nfields ? f : NULL;
        s->terms[i].n_match_fields = t->nfields;
    }
    *out = s;
    return DRA_OK;
}

dra_err dra_alloc_result_to_api(dra_arena *ar, const dra_alloc_claim_result *cr,
                                dra_allocation_result **out)
{
    dra_allocation_result *r = NEW(ar, 1, dra_allocation_result);
    dra_device_result *dr = NEW(ar, cr->nresults, dra_device_result);
    dra_device_config *dc = NEW(ar, cr->nconfig, dra_device_config);
    dra_err err;
    if (!r || !dr || !dc)
        return DRA_ENOMEM;
    for (size_t i = 0; i < cr->nresults; i++)
        if ((err = result_device(ar, &cr->results[i], &dr[i])) != DRA_OK)
            return err;
    for (size_t i = 0; i < cr->nconfig; i++) {
        const dra_alloc_config_result *x = &cr->config[i];
        dra_opaque_config *op = NEW(ar, 1, dra_opaque_config);
        if (!op)
            return DRA_ENOMEM;
        int oom = 0;
        dc[i].source = x->source == DRA_ALLOC_FROM_CLASS ? "FromClass" : "FromClaim";
        dc[i].requests.v = copy_strs(ar, x->requests, x->nrequests, &oom);
        if (oom)
            return DRA_ENOMEM;
        dc[i].requests.n = x->nrequests;
        op->driver = x->config->driver;
        op->parameters = (dra_doc *)x->config->parameters;
        dc[i].opaque = op;
    }
    r->results = dr;
    r->n_results = cr->nresults;
    r->config = cr->nconfig ? dc : NULL;
    r->n_config = cr->nconfig;
    if ((err = result_selector(ar, cr->node_selector, &r->node_selector)) != DRA_OK)
        return err;
    *out = r;
    return DRA_OK;
}

static dra_err load_one(dra_allocator *a, dra_arena *ar, const dra_object *o, dra_diag *d)
{
    dra_alloc_slice *s;
    dra_alloc_class *c;
    dra_alloc_label *l;
    size_t nl;
    dra_err err;
    switch (o->kind) {
    case DRA_KIND_RESOURCE_SLICE:
        if ((err = dra_alloc_slice_from_api(ar, o, &s, d)) != DRA_OK)
            return err;
        return dra_allocator_add_slice(a, s, d);
    case DRA_KIND_DEVICE_CLASS:
        if ((err = dra_alloc_class_from_api(ar, o, &c, d)) != DRA_OK)
            return err;
        return dra_allocator_add_class(a, c);
    case DRA_KIND_NODE:
        if (!o->meta.name)
            return DRA_OK;
        if ((err = dra_alloc_labels_from_api(ar, o, &l, &nl)) != DRA_OK)
            return err;
        err = dra_allocator_add_node(a, o->meta.name, l, nl);
        return err == DRA_EEXIST ? DRA_OK : err;
    default:
        return DRA_OK;
    }
}

dra_err dra_alloc_load_api(dra_allocator *a, dra_arena *ar, dra_object *const *objs, size_t n,
                           dra_diag *d)
{
    dra_err err;
    for (size_t i = 0; i < n; i++)
        if ((err = load_one(a, ar, objs[i], d)) != DRA_OK)
            return err;
    for (size_t i = 0; i < n; i++)
        if (objs[i]->kind == DRA_KIND_RESOURCE_CLAIM && objs[i]->u.claim.status.allocation &&
            (err = dra_alloc_mark_api(a, objs[i]->u.claim.status.allocation, 1)) != DRA_OK)
            return err;
    return DRA_OK;
}
