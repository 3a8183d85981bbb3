/*
 * inventory.c: turns the borrowed ResourceSlices into the indexed
 * inventory the search walks. Pools are grouped by (driver, pool), only
 * their newest generation counts, they are sorted (binding-condition pools
 * last) and checked; every node gets a lazily built candidate list, and a
 * max-segment tree over nodes' free device counts lets scheduling skip
 * full nodes without visiting them.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc_int.h"

/* ---- quantities ---------------------------------------------------------- */

a_qn alloc_qn(const dra_quantity *q)
{
    a_qn v = q->mant;
    int e = q->scale + 9;
    for (; e > 0; e--) {
        if (v > A_QN_MAX / 10 || v < -(A_QN_MAX / 10))
            return v < 0 ? -A_QN_MAX : A_QN_MAX; /* saturate: never fits */
        v *= 10;
    }
    for (; e < 0; e++) /* finer than nano: round up, as Kubernetes does */
        v = v / 10 + (v % 10 > 0);
    return v;
}

dra_quantity alloc_qty(a_qn v, dra_quantity_format f)
{
    dra_quantity q;
    q.mant = v;
    q.scale = -9;
    q.format = f;
    if (v == 0) {
        q.scale = 0;
        return q;
    }
    while (q.mant % 10 == 0 && q.scale < 18) {
        q.mant /= 10;
        q.scale++;
    }
    return q;
}

/* ---- node selectors ------------------------------------------------------ */

static const char *label_get(const dra_alloc_label *l, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(l[i].key, key) == 0)
            return l[i].value ? l[i].value : "";
    return NULL;
}

static int parse_i64(const char *s, long long *out)
{
    char *end;
    if (!s || !*s)
        return 0;
    *out = strtoll(s, &end, 10);
    return *end == '\0';
}

static int req_match(const dra_alloc_ns_req *r, const char *have)
{
    long long x, y;
    switch (r->op) {
    case DRA_ALLOC_NS_IN:
    case DRA_ALLOC_NS_NOT_IN: {
        int in = 0;
        for (size_t i = 0; have && i < r->nvalues; i++)
            in |= strcmp(r->values[i], have) == 0;
        return r->op == DRA_ALLOC_NS_IN ? in : !in;
    }
    case DRA_ALLOC_NS_EXISTS:
        return have != NULL;
    case DRA_ALLOC_NS_DOES_NOT_EXIST:
        return have == NULL;
    case DRA_ALLOC_NS_GT:
    case DRA_ALLOC_NS_LT:
        if (r->nvalues != 1 || !parse_i64(have, &x) || !parse_i64(r->values[0], &y))
            return 0;
        return r->op == DRA_ALLOC_NS_GT ? x > y : x < y;
    }
    return 0;
}

int dra_alloc_node_selector_match(const dra_alloc_node_selector *sel, const char *name,
                                  const dra_alloc_label *labels, size_t nlabels)
{
    for (size_t t = 0; sel && t < sel->nterms; t++) {
        const dra_alloc_ns_term *term = &sel->terms[t];
        int ok = term->nexprs + term->nfields > 0;
        for (size_t i = 0; ok && i < term->nexprs; i++)
            ok = req_match(&term->exprs[i], label_get(labels, nlabels, term->exprs[i].key));
        for (size_t i = 0; ok && i < term->nfields; i++)
            ok = strcmp(term->fields[i].key, "metadata.name") == 0 &&
                 req_match(&term->fields[i], name);
        if (ok)
            return 1;
    }
    return 0;
}

/* ---- attributes ---------------------------------------------------------- */

const dra_cel_attr *dra_alloc_attr_lookup(const char *driver, const dra_alloc_device *dev,
                                          const char *qualified)
{
    const char *slash = strchr(qualified, '/');
    size_t dlen = slash ? (size_t)(slash - qualified) : 0;
    const char *id = slash ? slash + 1 : qualified;
    for (size_t i = 0; i < dev->nattrs; i++) {
        const char *n = dev->attrs[i].name;
        if (strcmp(n, qualified) == 0)
            return &dev->attrs[i];
        /* A bare name in the slice lives in the driver's domain. */
        if (!strchr(n, '/') && strcmp(n, id) == 0 &&
            (!slash || (strlen(driver) == dlen && memcmp(driver, qualified, dlen) == 0)))
            return &dev->attrs[i];
    }
    return NULL;
}

/* ---- allocator lifecycle and inputs ---------------------------------------- */

dra_err dra_allocator_new(const dra_mem *mem, const dra_alloc_options *opts,
                          dra_allocator **out)
{
    dra_allocator *a = dra_calloc(mem, 1, sizeof *a);
    dra_err err;
    *out = NULL;
    if (!a)
        return DRA_ENOMEM;
    a->mem = mem;
    if (opts)
        a->opts = *opts;
    if (!a->opts.max_steps)
        a->opts.max_steps = 1000000;
    dra_arena_init(&a->arena, mem);
    dra_map_init(&a->classes, mem);
    dra_map_init(&a->node_by_name, mem);
    dra_map_init(&a->dev_by_key, mem);
    dra_map_init(&a->prog_by_expr, mem);
    dra_map_init(&a->drv, mem);
    dra_map_init(&a->memo, mem);
    dra_buf_init(&a->keybuf, mem);
    dra_buf_init(&a->fpbuf, mem);
    if (a->opts.selectors) {
        a->ops = *a->opts.selectors;
    } else if ((err = alloc_cel_backend(a)) != DRA_OK) {
        dra_allocator_free(a);
        return err;
    }
    *out = a;
    return DRA_OK;
}

static void free_index(dra_allocator *a)
{
    for (size_t i = 0; i < a->ndevs; i++) {
        a_dev *v = &a->devs[i];
        if (v->prepared && a->ops.unprepare)
            a->ops.unprepare(a->ops.ud, v->prepared);
        dra_free(a->mem, v->selc);
    }
    for (size_t i = 0; i < a->nnodes; i++) {
        dra_free(a->mem, a->nodes[i]->lpools);
        dra_free(a->mem, a->nodes[i]->view);
        dra_free(a->mem, a->nodes[i]->vpools);
    }
    dra_free(a->mem, a->devs);
    dra_free(a->mem, a->pools);
    dra_free(a->mem, a->counters);
    dra_free(a->mem, a->global_pools);
    dra_free(a->mem, a->tree);
    dra_free(a->mem, a->sorted);
}

/* After a failed seal: drop the half-built index so a later call can
 * build it again from the start. */
static void reset_index(dra_allocator *a)
{
    free_index(a);
    a->devs = NULL;
    a->pools = NULL;
    a->counters = NULL;
    a->global_pools = NULL;
    a->tree = NULL;
    a->sorted = NULL;
    a->ndevs = a->npools = a->ncounters = a->nglobal_pools = a->treen = 0;
    a->any_multi = 0;
    a->shared_free = 0;
    for (size_t i = 0; i < a->nnodes; i++) {
        a_node *n = a->nodes[i];
        n->lpools = n->view = n->vpools = NULL;
        n->nlpools = n->caplpools = n->nview = n->nvpools = 0;
        n->view_built = 0;
        n->free_local = 0;
    }
    dra_map_fini(&a->dev_by_key);
    dra_map_init(&a->dev_by_key, a->mem);
}

void dra_allocator_free(dra_allocator *a)
{
    if (!a)
        return;
    free_index(a);
    alloc_drivers_fini(a);
    alloc_selectors_fini(a);
    if (a->cel_ud)
        alloc_cel_backend_free(a);
    for (size_t i = 0; i < a->nnodes; i++)
        dra_free(a->mem, a->nodes[i]);
    dra_free(a->mem, a->nodes);
    dra_free(a->mem, a->in_slices);
    dra_map_fini(&a->classes);
    dra_map_fini(&a->node_by_name);
    dra_map_fini(&a->dev_by_key);
    dra_map_fini(&a->prog_by_expr);
    dra_map_fini(&a->memo);
    dra_buf_fini(&a->keybuf);
    dra_buf_fini(&a->fpbuf);
    dra_arena_fini(&a->arena);
    dra_free(a->mem, a);
}

static int selector_one_term(const dra_alloc_node_selector *s)
{
    return s->nterms == 1;
}

dra_err dra_allocator_add_slice(dra_allocator *a, const dra_alloc_slice *s, dra_diag *d)
{
    int modes;
    if (a->sealed) {
        dra_diag_add(d, "", 0, 0, "slice %s: the inventory is sealed once allocation started",
                     s->name);
        return DRA_EINVAL;
    }
    modes = (s->node_name != NULL) + (s->node_selector != NULL) + (s->all_nodes != 0) +
            (s->per_device_node_selection != 0);
    if (!s->driver || !s->pool || !s->name || modes != 1) {
        dra_diag_add(d, "", 0, 0,
                     "slice %s: needs driver, pool and exactly one of nodeName, "
                     "nodeSelector, allNodes, perDeviceNodeSelection",
                     s->name ? s->name : "(unnamed)");
        return DRA_EINVAL;
    }
    if (s->node_selector && !selector_one_term(s->node_selector)) {
        dra_diag_add(d, "", 0, 0, "slice %s: nodeSelector must have exactly one term", s->name);
        return DRA_EINVAL;
    }
    for (size_t i = 0; i < s->ndevices; i++) {
        const dra_alloc_device *dv = &s->devices[i];
        int dm = (dv->node_name != NULL) + (dv->node_selector != NULL) + (dv->all_nodes != 0);
        if (s->per_device_node_selection ? dm != 1 : dm != 0) {
            dra_diag_add(d, "", 0, 0,
                         "slice %s: device %s: per-device node selection needs exactly "
                         "one of nodeName, nodeSelector, allNodes (and only then)",
                         s->name, dv->name);
            return DRA_EINVAL;
        }
        if (dv->node_selector && !selector_one_term(dv->node_selector)) {
            dra_diag_add(d, "", 0, 0, "slice %s: device %s: nodeSelector must have exactly one term",
                         s->name, dv->name);
            return DRA_EINVAL;
        }
    }
    if (dra_grow(a->mem, (void **)&a->in_slices, &a->capin_slices, a->nin_slices + 1,
                 sizeof *a->in_slices))
        return DRA_ENOMEM;
    a->in_slices[a->nin_slices++] = s;
    return DRA_OK;
}

dra_err dra_allocator_add_class(dra_allocator *a, const dra_alloc_class *c)
{
    a->epoch++;
    return dra_map_put(&a->classes, c->name, strlen(c->name), (void *)c);
}

dra_err dra_allocator_seal(dra_allocator *a, dra_diag *d)
{
    return alloc_seal(a, d);
}

a_node *alloc_node_get(dra_allocator *a, const char *name, int create)
{
    a_node *n = dra_map_get(&a->node_by_name, name, strlen(name));
    if (n || !create)
        return n;
    if (dra_grow(a->mem, (void **)&a->nodes, &a->capnodes, a->nnodes + 1, sizeof *a->nodes))
        return NULL;
    n = dra_calloc(a->mem, 1, sizeof *n);
    if (!n)
        return NULL;
    n->name = name;
    n->idx = (int32_t)a->nnodes;
    if (dra_map_put(&a->node_by_name, name, strlen(name), n)) {
        dra_free(a->mem, n);
        return NULL;
    }
    a->nodes[a->nnodes++] = n;
    return n;
}

dra_err dra_allocator_add_node(dra_allocator *a, const char *name,
                               const dra_alloc_label *labels, size_t nlabels)
{
    a_node *n;
    if (a->sealed)
        return DRA_EINVAL;
    if (alloc_node_get(a, name, 0))
        return DRA_EEXIST;
    n = alloc_node_get(a, name, 1);
    if (!n)
        return DRA_ENOMEM;
    n->labels = labels;
    n->nlabels = nlabels;
    return DRA_OK;
}

const char *alloc_dev_key(dra_arena *ar, const char *driver, const char *pool,
                          const char *dev, size_t *len)
{
    size_t l1 = strlen(driver), l2 = strlen(pool), l3 = strlen(dev);
    char *k = dra_arena_alloc(ar, l1 + l2 + l3 + 3);
    if (!k)
        return NULL;
    memcpy(k, driver, l1 + 1);
    memcpy(k + l1 + 1, pool, l2 + 1);
    memcpy(k + l1 + l2 + 2, dev, l3 + 1);
    *len = l1 + l2 + l3 + 2;
    return k;
}

/* ---- sealing: pools, devices, counters ------------------------------------ */

typedef struct grp {
    const char *driver, *name;
    const dra_alloc_slice **v;
    size_t n, cap;
    int binding;
} grp;

static int cmp_slice_name(const void *x, const void *y)
{
    const dra_alloc_slice *const *p = x, *const *q = y;
    return strcmp((*p)->name, (*q)->name);
}

static int cmp_grp(const void *x, const void *y)
{
    const grp *p = *(grp *const *)x, *q = *(grp *const *)y;
    int c;
    if (p->binding != q->binding)
        return p->binding - q->binding;
    c = strcmp(p->driver, q->driver);
    return c ? c : strcmp(p->name, q->name);
}

/* Group the input slices by (driver, pool), keeping the newest generation. */
static dra_err group_slices(dra_allocator *a, dra_map *m, grp ***order, size_t *ngrp)
{
    grp **out = dra_arena_array(&a->arena, a->nin_slices + 1, sizeof *out);
    size_t n = 0;
    if (!out)
        return DRA_ENOMEM;
    for (size_t i = 0; i < a->nin_slices; i++) {
        const dra_alloc_slice *s = a->in_slices[i];
        size_t klen;
        const char *k = alloc_dev_key(&a->arena, s->driver, s->pool, "", &klen);
        grp *g = k ? dra_map_get(m, k, klen) : NULL;
        if (!k)
            return DRA_ENOMEM;
        if (!g) {
            if (!(g = dra_arena_zalloc(&a->arena, sizeof *g)) || dra_map_put(m, k, klen, g))
                return DRA_ENOMEM;
            g->driver = s->driver;
            g->name = s->pool;
            out[n++] = g;
        } else if (s->generation < g->v[0]->generation) {
            continue;
        } else if (s->generation > g->v[0]->generation) {
            g->n = 0; /* a newer generation replaces everything older */
        }
        if (dra_grow(a->mem, (void **)&g->v, &g->cap, g->n + 1, sizeof *g->v))
            return DRA_ENOMEM;
        g->v[g->n++] = s;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < out[i]->n; j++)
            for (size_t k = 0; k < out[i]->v[j]->ndevices; k++)
                out[i]->binding |= out[i]->v[j]->devices[k].nbinding_conditions > 0;
    qsort(out, n, sizeof *out, cmp_grp);
    *order = out;
    *ngrp = n;
    return DRA_OK;
}

static a_counter *find_counter(dra_allocator *a, const a_pool *p, const char *set,
                               const char *name)
{
    for (uint32_t i = p->ctr_begin; i < p->ctr_end; i++)
        if (strcmp(a->counters[i].set, set) == 0 && strcmp(a->counters[i].name, name) == 0)
            return &a->counters[i];
    return NULL;
}

static void invalidate(dra_allocator *a, a_pool *p, const char *fmt, const char *x,
                       const char *y)
{
    /* An incomplete pool stays incomplete: Kubernetes validates only
     * complete ones. */
    if (p->state != A_POOL_OK)
        return;
    p->state = A_POOL_INVALID;
    p->why = dra_arena_sprintf(&a->arena, fmt, x, y);
}

static int has_set(const a_pool *p, const char *name)
{
    for (size_t i = 0; i < p->nsets; i++)
        if (strcmp(p->sets[i], name) == 0)
            return 1;
    return 0;
}

/* Counter sets of a pool: names unique across the pool. A set without
 * counters is still a set: it takes its name, and a device may name it
 * (the pool is checked as Kubernetes checks it, whatever the counters). */
static dra_err add_counters(dra_allocator *a, a_pool *p, size_t *cap)
{
    size_t nsets = 0;
    p->ctr_begin = (uint32_t)a->ncounters;
    for (size_t i = 0; i < p->nslices; i++)
        nsets += p->slices[i]->nshared_counters;
    if (!(p->sets = dra_arena_array(&a->arena, nsets + 1, sizeof *p->sets)))
        return DRA_ENOMEM;
    for (size_t i = 0; i < p->nslices; i++) {
        const dra_alloc_slice *s = p->slices[i];
        for (size_t j = 0; j < s->nshared_counters; j++) {
            const dra_alloc_counter_set *cs = &s->shared_counters[j];
            if (has_set(p, cs->name)) {
                invalidate(a, p, "duplicate counter set name %s%s", cs->name, "");
                continue;
            }
            p->sets[p->nsets++] = cs->name;
            for (size_t k = 0; k < cs->ncounters; k++) {
                a_counter *c;
                if (dra_grow(a->mem, (void **)&a->counters, cap, a->ncounters + 1,
                             sizeof *a->counters))
                    return DRA_ENOMEM;
                c = &a->counters[a->ncounters++];
                memset(c, 0, sizeof *c);
                c->set = cs->name;
                c->name = cs->counters[k].name;
                c->total = alloc_qn(&cs->counters[k].value);
            }
        }
    }
    p->ctr_end = (uint32_t)a->ncounters;
    return DRA_OK;
}

/* Records that |pid| has slices or devices local to node |name|. */
static a_node *node_add_pool(dra_allocator *a, const char *name, uint32_t pid)
{
    a_node *n = alloc_node_get(a, name, 1);
    if (!n)
        return NULL;
    if (!n->nlpools || n->lpools[n->nlpools - 1] != pid) {
        if (dra_grow(a->mem, (void **)&n->lpools, &n->caplpools, n->nlpools + 1,
                     sizeof *n->lpools))
            return NULL;
        n->lpools[n->nlpools++] = pid;
    }
    return n;
}

/* The device's capacities and request policies in nano units, and, for
 * a device that can be shared, its per-capacity consumption counters. */
static dra_err convert_caps(dra_allocator *a, a_dev *v)
{
    const dra_alloc_device *dv = v->d;
    if (!dv->ncaps)
        return DRA_OK;
    if (!(v->caps = dra_arena_array(&a->arena, dv->ncaps, sizeof *v->caps)))
        return DRA_ENOMEM;
    for (size_t i = 0; i < dv->ncaps; i++) {
        const dra_alloc_capacity *c = &dv->caps[i];
        a_pol *pol;
        a_qn *valid = NULL;
        v->caps[i].value = alloc_qn(&c->value);
        if (!c->has_policy)
            continue;
        if (!(pol = dra_arena_zalloc(&a->arena, sizeof *pol)))
            return DRA_ENOMEM;
        if (c->nvalid_values &&
            !(valid = dra_arena_array(&a->arena, c->nvalid_values, sizeof *valid)))
            return DRA_ENOMEM;
        for (size_t k = 0; k < c->nvalid_values; k++)
            valid[k] = alloc_qn(&c->valid_values[k]);
        pol->valid = valid;
        pol->def = c->has_default ? alloc_qn(&c->def) : 0;
        pol->min = c->has_range ? alloc_qn(&c->min) : 0;
        pol->max = c->has_max ? alloc_qn(&c->max) : 0;
        pol->step = c->has_step ? alloc_qn(&c->step) : 0;
        v->caps[i].pol = pol;
    }
    if (!v->multi)
        return DRA_OK;
    v->cap_used = dra_arena_array(&a->arena, dv->ncaps, sizeof *v->cap_used);
    v->cap_att = dra_arena_array(&a->arena, dv->ncaps, sizeof *v->cap_att);
    return v->cap_used && v->cap_att ? DRA_OK : DRA_ENOMEM;
}

static dra_err add_device(dra_allocator *a, a_pool *p, uint32_t pid,
                          const dra_alloc_slice *s, const dra_alloc_device *dv)
{
    a_dev *v = &a->devs[a->ndevs];
    size_t klen, nc = 0;
    const char *key = alloc_dev_key(&a->arena, s->driver, s->pool, dv->name, &klen);
    memset(v, 0, sizeof *v);
    v->d = dv;
    v->s = s;
    v->pool = pid;
    v->node = -1;
    v->att_claim = -1;
    v->multi = dv->allow_multiple_allocations;
    a->any_multi |= v->multi;
    for (size_t i = 0; i < dv->ntaints; i++)
        v->tainted |= dv->taints[i].effect == DRA_ALLOC_EFFECT_NO_SCHEDULE ||
                      dv->taints[i].effect == DRA_ALLOC_EFFECT_NO_EXECUTE;
    if (!key)
        return DRA_ENOMEM;
    if (dra_map_get(&a->dev_by_key, key, klen))
        invalidate(a, p, "duplicate device name %s%s", dv->name, "");
    else if (dra_map_put(&a->dev_by_key, key, klen, v))
        return DRA_ENOMEM;
    const char *nn = s->per_device_node_selection ? dv->node_name : s->node_name;
    const dra_alloc_node_selector *sel =
        s->per_device_node_selection ? dv->node_selector : s->node_selector;
    if (nn) {
        a_node *n = node_add_pool(a, nn, pid);
        if (!n)
            return DRA_ENOMEM;
        v->loc = A_LOC_NODE;
        v->node = n->idx;
    } else {
        v->loc = sel ? A_LOC_SELECTOR : A_LOC_ALL;
        v->sel = sel;
        p->global = 1;
    }
    for (size_t i = 0; i < dv->nconsumes; i++)
        nc += dv->consumes[i].ncounters;
    v->cons = dra_arena_array(&a->arena, nc + 1, sizeof *v->cons);
    if (!v->cons || convert_caps(a, v) != DRA_OK)
        return DRA_ENOMEM;
    for (size_t i = 0; i < dv->nconsumes; i++) {
        const dra_alloc_counter_set *cs = &dv->consumes[i];
        if (!has_set(p, cs->name)) { /* even when it lists no counters */
            invalidate(a, p, "counter set %s not found%s", cs->name, "");
            continue;
        }
        for (size_t k = 0; k < cs->ncounters; k++) {
            a_counter *c = find_counter(a, p, cs->name, cs->counters[k].name);
            if (!c) {
                invalidate(a, p, "counter %s not found in counter set %s", cs->counters[k].name,
                           cs->name);
                continue;
            }
            v->cons[v->ncons].counter = (uint32_t)(c - a->counters);
            v->cons[v->ncons++].amount = alloc_qn(&cs->counters[k].value);
        }
    }
    a->ndevs++;
    return DRA_OK;
}

static dra_err build_pool(dra_allocator *a, grp *g, size_t *ccap)
{
    uint32_t pid = (uint32_t)a->npools;
    a_pool *p = &a->pools[a->npools++];
    dra_err err;
    memset(p, 0, sizeof *p);
    p->driver = g->driver;
    p->name = g->name;
    qsort(g->v, g->n, sizeof *g->v, cmp_slice_name);
    p->slices = dra_arena_array(&a->arena, g->n, sizeof *p->slices);
    if (!p->slices)
        return DRA_ENOMEM;
    memcpy(p->slices, g->v, g->n * sizeof *g->v);
    p->nslices = g->n;
    p->gen = g->v[0]->generation;
    p->expected = g->v[0]->slice_count;
    p->binding = g->binding;
    /* Usable only with exactly resourceSliceCount slices at the newest
     * generation: fewer means an update is under way, and so may more
     * (Kubernetes treats both as incomplete). */
    if ((int64_t)g->n != p->expected) {
        p->state = A_POOL_INCOMPLETE;
        p->why = dra_arena_sprintf(&a->arena, "%zu slice%s at generation %lld where "
                                   "resourceSliceCount says %lld", g->n, g->n == 1 ? "" : "s",
                                   (long long)p->gen, (long long)p->expected);
        if (!p->why)
            return DRA_ENOMEM;
    }
    if ((err = add_counters(a, p, ccap)) != DRA_OK)
        return err;
    for (size_t i = 0; i < g->n; i++) {
        if (g->v[i]->node_name && !node_add_pool(a, g->v[i]->node_name, pid))
            return DRA_ENOMEM;
        p->global |= g->v[i]->all_nodes || g->v[i]->node_selector;
    }
    p->dev_begin = (uint32_t)a->ndevs;
    for (size_t i = 0; i < g->n; i++)
        for (size_t j = 0; j < g->v[i]->ndevices; j++)
            if ((err = add_device(a, p, pid, g->v[i], &g->v[i]->devices[j])) != DRA_OK)
                return err;
    p->dev_end = (uint32_t)a->ndevs;
    return DRA_OK;
}

static int cmp_node_name(const void *x, const void *y)
{
    return strcmp((*(a_node *const *)x)->name, (*(a_node *const *)y)->name);
}

static dra_err build_nodes(dra_allocator *a)
{
    size_t n = 1;
    a->sorted = dra_calloc(a->mem, a->nnodes + 1, sizeof *a->sorted);
    if (!a->sorted)
        return DRA_ENOMEM;
    if (a->nnodes) /* nodes is NULL when there are none */
        memcpy(a->sorted, a->nodes, a->nnodes * sizeof *a->nodes);
    qsort(a->sorted, a->nnodes, sizeof *a->sorted, cmp_node_name);
    for (size_t i = 0; i < a->nnodes; i++)
        a->sorted[i]->rank = i;
    for (size_t i = 0; i < a->ndevs; i++) {
        if (a->pools[a->devs[i].pool].state != A_POOL_OK)
            continue;
        if (a->devs[i].node >= 0) {
            a->nodes[a->devs[i].node]->free_local++;
            a->nodes[a->devs[i].node]->total_local++;
        } else
            a->shared_free++;
    }
    while (n < a->nnodes)
        n *= 2;
    a->treen = n;
    a->tree = dra_calloc(a->mem, 2 * n, sizeof *a->tree);
    if (!a->tree)
        return DRA_ENOMEM;
    for (size_t i = 0; i < a->nnodes; i++)
        a->tree[n + i] = a->sorted[i]->free_local;
    for (size_t i = n - 1; i >= 1; i--)
        a->tree[i] = a->tree[2 * i] > a->tree[2 * i + 1] ? a->tree[2 * i] : a->tree[2 * i + 1];
    return DRA_OK;
}

dra_err alloc_seal(dra_allocator *a, dra_diag *d)
{
    dra_map groups;
    grp **order = NULL;
    size_t ngrp = 0, ndev = 0, ccap = 0, ng = 0;
    dra_err err;
    if (a->sealed)
        return DRA_OK;
    dra_map_init(&groups, a->mem);
    err = group_slices(a, &groups, &order, &ngrp);
    for (size_t i = 0; err == DRA_OK && i < ngrp; i++)
        for (size_t j = 0; j < order[i]->n; j++)
            ndev += order[i]->v[j]->ndevices;
    if (err == DRA_OK) {
        a->pools = dra_calloc(a->mem, ngrp + 1, sizeof *a->pools);
        a->devs = dra_calloc(a->mem, ndev + 1, sizeof *a->devs);
        a->global_pools = dra_calloc(a->mem, ngrp + 1, sizeof *a->global_pools);
        if (!a->pools || !a->devs || !a->global_pools)
            err = DRA_ENOMEM;
    }
    for (size_t i = 0; err == DRA_OK && i < ngrp; i++) {
        err = build_pool(a, order[i], &ccap);
        if (err == DRA_OK && a->pools[i].global)
            a->global_pools[ng++] = (uint32_t)i;
    }
    a->nglobal_pools = ng;
    for (size_t i = 0; i < ngrp; i++)
        dra_free(a->mem, order[i]->v);
    dra_map_fini(&groups);
    if (err == DRA_OK)
        err = build_nodes(a);
    if (err != DRA_OK) {
        reset_index(a);
        dra_diag_add(d, "", 0, 0, "indexing the inventory: %s", dra_strerror(err));
        return err;
    }
    a->sealed = 1;
    return DRA_OK;
}

/* ---- per-node candidate lists ---------------------------------------------- */

int alloc_dev_matches_node(const dra_allocator *a, const a_dev *v, const a_node *n)
{
    switch (v->loc) {
    case A_LOC_NODE:
        return v->node == n->idx;
    case A_LOC_ALL:
        return 1;
    case A_LOC_SELECTOR:
        return dra_alloc_node_selector_match(v->sel, n->name, n->labels, n->nlabels);
    }
    (void)a;
    return 0;
}

static dra_err view_push(const dra_mem *mem, uint32_t **v, size_t *n, size_t *cap, uint32_t x)
{
    if (dra_grow(mem, (void **)v, cap, *n + 1, sizeof **v))
        return DRA_ENOMEM;
    (*v)[(*n)++] = x;
    return DRA_OK;
}

static int slice_targets(const dra_alloc_slice *s, const a_node *n)
{
    if (s->node_name)
        return strcmp(s->node_name, n->name) == 0;
    if (s->node_selector)
        return dra_alloc_node_selector_match(s->node_selector, n->name, n->labels, n->nlabels);
    return s->all_nodes;
}

/* Appends the pool's devices that this node may use to the view, and the
 * pool to the node's visible pools when any of its slices or devices
 * targets the node (unusable pools included: All mode and explanations
 * need to know about them). */
static dra_err view_pool(dra_allocator *a, a_node *n, uint32_t pid, size_t *cv, size_t *cp)
{
    const a_pool *p = &a->pools[pid];
    int visible = 0;
    for (uint32_t i = p->dev_begin; i < p->dev_end; i++) {
        if (!alloc_dev_matches_node(a, &a->devs[i], n))
            continue;
        visible = 1;
        if (p->state == A_POOL_OK && view_push(a->mem, &n->view, &n->nview, cv, i))
            return DRA_ENOMEM;
    }
    for (size_t i = 0; !visible && i < p->nslices; i++)
        visible = slice_targets(p->slices[i], n);
    if (!visible)
        return DRA_OK;
    return view_push(a->mem, &n->vpools, &n->nvpools, cp, pid);
}

dra_err alloc_node_view(dra_allocator *a, a_node *n)
{
    size_t i = 0, j = 0, cv = 0, cp = 0;
    dra_err err = DRA_OK;
    if (n->view_built)
        return DRA_OK;
    /* Merge the node's own pools with the pools every node may see; both
     * lists are ascending pool ids, which is the search order. */
    while (err == DRA_OK && (i < n->nlpools || j < a->nglobal_pools)) {
        uint32_t pid;
        if (j >= a->nglobal_pools || (i < n->nlpools && n->lpools[i] < a->global_pools[j]))
            pid = n->lpools[i++];
        else if (i < n->nlpools && n->lpools[i] == a->global_pools[j])
            pid = n->lpools[i++], j++;
        else
            pid = a->global_pools[j++];
        err = view_pool(a, n, pid, &cv, &cp);
    }
    if (err != DRA_OK) {
        dra_free(a->mem, n->view);
        dra_free(a->mem, n->vpools);
        n->view = n->vpools = NULL;
        n->nview = n->nvpools = 0;
        return err;
    }
    n->view_built = 1;
    return DRA_OK;
}

/* ---- free-device tree ------------------------------------------------------ */

void alloc_tree_update(dra_allocator *a, const a_node *n)
{
    size_t i = a->treen + n->rank;
    a->tree[i] = n->free_local;
    for (i /= 2; i >= 1; i /= 2)
        a->tree[i] = a->tree[2 * i] > a->tree[2 * i + 1] ? a->tree[2 * i] : a->tree[2 * i + 1];
}

static size_t tree_find(const dra_allocator *a, size_t i, size_t lo, size_t hi, size_t from,
                        int32_t k)
{
    size_t mid, r;
    if (hi <= from || a->tree[i] < k)
        return SIZE_MAX;
    if (hi - lo == 1)
        return lo;
    mid = (lo + hi) / 2;
    r = tree_find(a, 2 * i, lo, mid, from, k);
    return r != SIZE_MAX ? r : tree_find(a, 2 * i + 1, mid, hi, from, k);
}

size_t alloc_tree_find(const dra_allocator *a, size_t from, int32_t k)
{
    size_t r;
    if (from >= a->nnodes)
        return a->nnodes;
    if (k <= 0)
        return from;
    r = tree_find(a, 1, 0, a->treen, from, k);
    return r >= a->nnodes ? a->nnodes : r;
}

/* ---- in-use state ------------------------------------------------------------ */

static a_dev *find_key(dra_allocator *a, const char *driver, const char *pool,
                       const char *device)
{
    char buf[512];
    size_t l1 = strlen(driver), l2 = strlen(pool), l3 = strlen(device);
    if (l1 + l2 + l3 + 3 > sizeof buf)
        return NULL;
    memcpy(buf, driver, l1 + 1);
    memcpy(buf + l1 + 1, pool, l2 + 1);
    memcpy(buf + l1 + l2 + 2, device, l3 + 1);
    return dra_map_get(&a->dev_by_key, buf, l1 + l2 + l3 + 2);
}

static a_dev *find_dev(dra_allocator *a, const dra_alloc_device_result *r)
{
    return find_key(a, r->driver, r->pool, r->device);
}

const char *dra_allocator_device_node(dra_allocator *a, const char *driver, const char *pool,
                                      const char *device)
{
    a_dev *v;
    if (alloc_seal(a, NULL) != DRA_OK || !driver || !pool || !device ||
        !(v = find_key(a, driver, pool, device)) || v->node < 0)
        return NULL;
    return a->nodes[v->node]->name;
}

dra_err dra_allocator_node_devices(dra_allocator *a, const char *node, int32_t *ntotal,
                                   int32_t *nfree)
{
    dra_err err = alloc_seal(a, NULL);
    a_node *n;
    if (err != DRA_OK)
        return err;
    if (!(n = alloc_node_get(a, node, 0)))
        return DRA_ENOTFOUND;
    *ntotal = n->total_local;
    *nfree = n->free_local;
    return DRA_OK;
}

static void charge(dra_allocator *a, a_dev *v, int sign)
{
    for (uint32_t i = 0; i < v->ncons; i++)
        a->counters[v->cons[i].counter].used += sign * v->cons[i].amount;
}

static void set_free(dra_allocator *a, a_dev *v, int delta)
{
    if (a->pools[v->pool].state != A_POOL_OK)
        return;
    if (v->node >= 0) {
        a->nodes[v->node]->free_local += delta;
        alloc_tree_update(a, a->nodes[v->node]);
    } else {
        a->shared_free += delta;
    }
}

static void apply(dra_allocator *a, a_dev *v, const dra_alloc_device_result *r, int sign)
{
    int before = v->excl + v->shares;
    if (r->share_id && v->multi) {
        v->shares += sign;
        for (size_t i = 0; i < r->nconsumed; i++)
            for (size_t c = 0; c < v->d->ncaps; c++)
                if (strcmp(v->d->caps[c].name, r->consumed[i].name) == 0)
                    v->cap_used[c] += sign * alloc_qn(&r->consumed[i].value);
    } else {
        v->excl += sign;
        if ((sign > 0 && v->excl == 1) || (sign < 0 && v->excl == 0))
            set_free(a, v, -sign);
    }
    /* Counters are charged once per device, however many shares it has. */
    if (before == 0 && v->excl + v->shares > 0)
        charge(a, v, 1);
    else if (before > 0 && v->excl + v->shares == 0)
        charge(a, v, -1);
}

static dra_err mark(dra_allocator *a, const dra_alloc_device_result *r, int sign)
{
    a_dev *v;
    dra_err err = alloc_seal(a, NULL);
    if (err != DRA_OK)
        return err;
    if (r->admin_access || !(v = find_dev(a, r)))
        return DRA_OK;
    if (sign < 0 && (r->share_id && v->multi ? v->shares : v->excl) == 0)
        return DRA_EINVAL;
    if (sign < 0)
        a->epoch++;
    apply(a, v, r, sign);
    return DRA_OK;
}

dra_err dra_allocator_mark(dra_allocator *a, const dra_alloc_device_result *r)
{
    return mark(a, r, 1);
}

dra_err dra_allocator_unmark(dra_allocator *a, const dra_alloc_device_result *r)
{
    return mark(a, r, -1);
}

void dra_allocator_stats(const dra_allocator *a, dra_alloc_stats *st)
{
    memset(st, 0, sizeof *st);
    st->pools = a->npools;
    st->slices = a->nin_slices;
    st->devices = a->ndevs;
    st->nodes = a->nnodes;
    st->selector_programs = a->nprogs;
    st->selector_evals = a->evals;
    st->arena_bytes = a->arena.total;
    st->any_nonlocal = a->nglobal_pools > 0;
    st->any_shareable = a->any_multi;
}
