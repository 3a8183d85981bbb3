/*
 * cache.c: the informer cache. Every watch event is decoded once into
 * typed objects kept per key; the allocator's inventory (slices, nodes,
 * classes) is rebuilt only when those change, and allocations are
 * counted in and out of it incrementally as claims change, including the
 * ones this scheduler made and is still writing. Per-node device counts
 * keep nodes in scoring buckets, so a cycle visits the best nodes first.
 */
#include <stdio.h>
#include <string.h>

#include "sched_int.h"

typedef struct sc_plist {
    const char *key;
    sc_pod **v;
    size_t n, cap;
} sc_plist;

/* ---- small helpers ------------------------------------------------------------- */

dra_arena *sched_arena_new(const dra_mem *mem)
{
    dra_arena *a = dra_malloc(mem, sizeof *a);
    if (a)
        dra_arena_init(a, mem);
    return a;
}

void sched_arena_free(const dra_mem *mem, dra_arena *ar)
{
    if (!ar)
        return;
    dra_arena_fini(ar);
    dra_free(mem, ar);
}

void sched_grave(sc_core *c, dra_arena *ar)
{
    if (!ar)
        return;
    if (dra_grow(c->mem, (void **)&c->grave, &c->capgrave, c->ngrave + 1, sizeof *c->grave)) {
        /* No room to defer: the allocator is rebuilt before its next use
         * anyway (dirty), so nothing reads this arena any more. */
        sched_arena_free(c->mem, ar);
        return;
    }
    c->grave[c->ngrave++] = ar;
}

/* A zeroed struct of |size| bytes followed by a copy of |key|; the
 * struct's first member is its `const char *key`, set to the copy. */
static void *keyed_new(const dra_mem *mem, size_t size, const char *key)
{
    size_t len = strlen(key);
    char *p = dra_calloc(mem, 1, size + len + 1);
    const char *k;
    if (!p)
        return NULL;
    k = memcpy(p + size, key, len + 1);
    memcpy(p, &k, sizeof k);
    return p;
}

static const char *mkkey(char *buf, size_t size, const char *ns, const char *name)
{
    if ((size_t)snprintf(buf, size, "%s/%s", ns ? ns : "", name ? name : "") >= size)
        return NULL;
    return buf;
}

/* ---- core --------------------------------------------------------------------- */

dra_err sched_core_init(sc_core *c, const dra_sched_opts *o)
{
    memset(c, 0, sizeof *c);
    c->mem = o ? o->mem : NULL;
    sched_strs_init(&c->strs, c->mem);
    dra_map_init(&c->pods, c->mem);
    dra_map_init(&c->nodes_by_name, c->mem);
    dra_map_init(&c->claims, c->mem);
    dra_map_init(&c->slices, c->mem);
    dra_map_init(&c->classes, c->mem);
    dra_map_init(&c->templates, c->mem);
    dra_map_init(&c->claim_pods, c->mem);
    dra_map_init(&c->orphans, c->mem);
    dra_map_init(&c->deleted, c->mem);
    sched_wq_init(&c->wq, c->mem);
    for (int i = 0; i < SC_NBUCKETS; i++)
        c->buckets[i] = c->btails[i] = NULL;
    c->sched_name = sched_str(&c->strs, o && o->scheduler_name ? o->scheduler_name
                                                               : DRA_SCHED_DEFAULT_NAME);
    c->score = o ? o->score : DRA_SCHED_LEAST_ALLOCATED;
    c->scheduler = o ? o->scheduler : 1;
    c->max_steps = o ? o->max_steps : 0;
    c->controller = o ? o->claim_controller : 1;
    c->dirty = 1;
    return c->sched_name ? DRA_OK : DRA_ENOMEM;
}

static void free_claim(sc_core *c, sc_claim *cl)
{
    dra_free(c->mem, cl->okey);
    sched_arena_free(c->mem, cl->ar);
    sched_arena_free(c->mem, cl->as_ar);
    dra_free(c->mem, cl);
}

static void free_obj(sc_core *c, sc_obj *o)
{
    sched_arena_free(c->mem, o->ar);
    dra_free(c->mem, o);
}

static void free_node(sc_core *c, sc_node *n)
{
    sched_arena_free(c->mem, n->ar);
    sched_arena_free(c->mem, n->lab_ar);
    sched_res_fini(c->mem, &n->used);
    dra_free(c->mem, n);
}

static void free_graves(sc_core *c)
{
    for (size_t i = 0; i < c->ngrave; i++)
        sched_arena_free(c->mem, c->grave[i]);
    c->ngrave = 0;
}

void sched_core_fini(sc_core *c)
{
    dra_map *maps[] = {&c->pods, &c->claims, &c->slices, &c->classes, &c->templates,
                       &c->claim_pods};
    for (size_t i = 0; i < c->pods.n; i++)
        if (c->pods.entries[i].key) {
            sc_pod *p = c->pods.entries[i].val;
            sched_podinfo_free(c->mem, p->info);
            sched_res_fini(c->mem, &p->acct);
            sched_arena_free(c->mem, p->ext_ar);
            dra_free(c->mem, p->refs);
            dra_free(c->mem, p);
        }
    for (size_t i = 0; i < c->claims.n; i++)
        if (c->claims.entries[i].key)
            free_claim(c, c->claims.entries[i].val);
    for (size_t k = 2; k < 5; k++)
        for (size_t i = 0; i < maps[k]->n; i++)
            if (maps[k]->entries[i].key)
                free_obj(c, maps[k]->entries[i].val);
    for (size_t i = 0; i < c->claim_pods.n; i++)
        if (c->claim_pods.entries[i].key) {
            sc_plist *l = c->claim_pods.entries[i].val;
            dra_free(c->mem, l->v);
            dra_free(c->mem, l);
        }
    for (size_t i = 0; i < c->nnodes; i++)
        free_node(c, c->nodes[i]);
    dra_free(c->mem, c->nodes);
    for (size_t i = 0; i < 6; i++)
        dra_map_fini(maps[i]);
    dra_map_fini(&c->nodes_by_name);
    dra_map_fini(&c->orphans);
    for (size_t i = 0; i < c->ndeleted && i < 512; i++)
        dra_free(c->mem, (void *)c->deleted_uids[i]);
    dra_map_fini(&c->deleted);
    dra_allocator_free(c->inv.a);
    free_graves(c);
    dra_free(c->mem, c->grave);
    dra_free(c->mem, c->backoff);
    sched_wq_fini(&c->wq);
    sched_strs_fini(&c->strs);
}

/* ---- lookups -------------------------------------------------------------------- */

sc_claim *sched_claim_get(sc_core *c, const char *ns, const char *name)
{
    char buf[600];
    const char *k = mkkey(buf, sizeof buf, ns, name);
    return k ? dra_map_get(&c->claims, k, strlen(k)) : NULL;
}

sc_pod *sched_pod_get(sc_core *c, const char *key)
{
    return dra_map_get(&c->pods, key, strlen(key));
}

sc_obj *sched_template_get(sc_core *c, const char *ns, const char *name)
{
    char buf[600];
    const char *k = mkkey(buf, sizeof buf, ns, name);
    return k ? dra_map_get(&c->templates, k, strlen(k)) : NULL;
}

sc_pod **sched_claim_users(sc_core *c, const char *key, size_t *n)
{
    sc_plist *l = dra_map_get(&c->claim_pods, key, strlen(key));
    *n = l ? l->n : 0;
    return l ? l->v : NULL;
}

int sched_uid_deleted(const sc_core *c, const char *uid)
{
    return uid && *uid && dra_map_get(&c->deleted, uid, strlen(uid)) != NULL;
}

static void remember_deleted(sc_core *c, const char *uid)
{
    size_t slot = c->ndeleted % 512;
    char *u;
    if (!uid || !*uid || sched_uid_deleted(c, uid) || !(u = dra_strdup(c->mem, uid)))
        return;
    if (c->ndeleted >= 512) {
        const char *old = c->deleted_uids[slot];
        dra_map_del(&c->deleted, old, strlen(old));
        dra_free(c->mem, (void *)old);
    }
    if (dra_map_put(&c->deleted, u, strlen(u), (void *)1)) {
        dra_free(c->mem, u);
        if (c->ndeleted >= 512)
            c->deleted_uids[slot] = dra_strdup(c->mem, "");
        return;
    }
    c->deleted_uids[slot] = u;
    c->ndeleted++;
}

dra_alloc_claim *sched_claim_model(sc_core *c, sc_claim *cl, dra_diag *d)
{
    (void)c;
    if (!cl->model &&
        dra_alloc_claim_from_api(cl->ar, &cl->obj->meta, &cl->obj->u.claim.spec, &cl->model, d))
        cl->model = NULL;
    return cl->model;
}

/* ---- the pod-claim index ------------------------------------------------------------- */

static void plist_del(sc_core *c, const char *key, sc_pod *p)
{
    sc_plist *l = dra_map_get(&c->claim_pods, key, strlen(key));
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i] == p) {
            l->v[i] = l->v[--l->n];
            break;
        }
    if (!l->n) {
        dra_map_del(&c->claim_pods, l->key, strlen(l->key));
        dra_free(c->mem, l->v);
        dra_free(c->mem, l);
    }
}

static const char *plist_add(sc_core *c, const char *key, sc_pod *p)
{
    sc_plist *l = dra_map_get(&c->claim_pods, key, strlen(key));
    if (!l) {
        if (!(l = keyed_new(c->mem, sizeof *l, key)))
            return NULL;
        if (dra_map_put(&c->claim_pods, l->key, strlen(l->key), l)) {
            dra_free(c->mem, l);
            return NULL;
        }
    }
    if (dra_grow(c->mem, (void **)&l->v, &l->cap, l->n + 1, sizeof *l->v))
        return NULL;
    l->v[l->n++] = p;
    return l->key;
}

static void refs_clear(sc_core *c, sc_pod *p)
{
    for (size_t i = 0; i < p->nrefs; i++)
        plist_del(c, p->refs[i], p);
    dra_free(c->mem, p->refs);
    p->refs = NULL;
    p->nrefs = 0;
}

/* The claim keys the pod references now. */
static dra_err refs_update(sc_core *c, sc_pod *p)
{
    const sc_podinfo *in = p->info;
    const char **v = dra_calloc(c->mem, in->nclaims + 2, sizeof *v);
    char buf[600];
    size_t n = 0;
    if (!v)
        return DRA_ENOMEM;
    for (size_t i = 0; i <= in->nclaims; i++) {
        const char *name = NULL, *k;
        if (i < in->nclaims)
            sched_pod_claim_name(in, &in->claims[i], &name);
        else
            name = in->ext_claim;
        if (!name || !(k = mkkey(buf, sizeof buf, in->ns, name)))
            continue;
        v[n++] = k; /* placeholder: replaced by the index's stable key */
        if (!(v[n - 1] = plist_add(c, k, p))) {
            n--;
            break;
        }
    }
    refs_clear(c, p);
    p->refs = v;
    p->nrefs = n;
    return DRA_OK;
}

static sc_node *node_get(sc_core *c, const char *name)
{
    return name ? dra_map_get(&c->nodes_by_name, name, strlen(name)) : NULL;
}

/* A new node in the cache, without labels, taints or allocatable. */
static sc_node *node_new(sc_core *c, const char *name)
{
    sc_node *n = dra_calloc(c->mem, 1, sizeof *n);
    if (!n || !(n->name = sched_str(&c->strs, name)) || !(n->ar = sched_arena_new(c->mem)) ||
        !(n->lab_ar = sched_arena_new(c->mem)) ||
        dra_grow(c->mem, (void **)&c->nodes, &c->capnodes, c->nnodes + 1, sizeof *c->nodes) ||
        dra_map_put(&c->nodes_by_name, n->name, strlen(n->name), n)) {
        if (n) {
            sched_arena_free(c->mem, n->ar);
            sched_arena_free(c->mem, n->lab_ar);
        }
        dra_free(c->mem, n);
        return NULL;
    }
    n->bucket = SC_B_NONE;
    n->idx = c->nnodes;
    c->nodes[c->nnodes++] = n;
    return n;
}

/* ---- inventory: counting allocations -------------------------------------------------- */

static int node_pref(const sc_core *c, const sc_node *n)
{
    if (n->total <= 0)
        return SC_B_NODEV;
    if (n->free <= 0)
        return SC_B_FULL;
    if (c->score == DRA_SCHED_MOST_ALLOCATED)
        return (int)((int64_t)(n->total - n->free) * 100 / n->total);
    return (int)((int64_t)n->free * 100 / n->total);
}

static void bucket_unlink(sc_core *c, sc_node *n)
{
    int b = n->bucket;
    if (b < 0)
        return;
    if (n->bprev)
        n->bprev->bnext = n->bnext;
    else
        c->buckets[b] = n->bnext;
    if (n->bnext)
        n->bnext->bprev = n->bprev;
    else
        c->btails[b] = n->bprev;
    n->bprev = n->bnext = NULL;
    n->bucket = SC_B_NONE;
}

void sched_node_rebucket(sc_core *c, sc_node *n)
{
    int b = n->gone ? SC_B_NONE : node_pref(c, n);
    if (b == n->bucket)
        return;
    bucket_unlink(c, n);
    if (b < 0)
        return;
    n->bucket = b;
    n->bprev = c->btails[b];
    n->bnext = NULL;
    if (c->btails[b])
        c->btails[b]->bnext = n;
    else
        c->buckets[b] = n;
    c->btails[b] = n;
}

/* The node's device counts from the allocator, and its bucket. */
static void node_counts(sc_core *c, sc_node *n)
{
    int32_t total = 0, nfree = 0;
    if (!c->inv.a || dra_allocator_node_devices(c->inv.a, n->name, &total, &nfree) != DRA_OK)
        total = nfree = 0;
    n->total = total;
    n->free = nfree;
    sched_node_rebucket(c, n);
}

/* Marks (|sign| 1) or unmarks one allocation in the allocator, and
 * updates the counts of the nodes its devices are on. While the
 * inventory is dirty nothing is counted: the rebuild counts every claim
 * afresh. */
void sched_count(sc_core *c, const dra_allocation_result *res, int sign)
{
    if (c->dirty || !c->inv.a || !res)
        return;
    dra_alloc_mark_api(c->inv.a, res, sign);
    for (size_t i = 0; i < res->n_results; i++) {
        const dra_device_result *r = &res->results[i];
        const char *nn;
        sc_node *n;
        if (DRA_TRI_IS_TRUE(r->admin_access) || r->share_id ||
            !(nn = dra_allocator_device_node(c->inv.a, r->driver, r->pool, r->device)) ||
            !(n = node_get(c, nn)))
            continue;
        node_counts(c, n);
    }
}

static const dra_allocation_result *observed(const sc_claim *cl)
{
    return cl->obj ? cl->obj->u.claim.status.allocation : NULL;
}

static void recount(sc_core *c, sc_claim *cl)
{
    const dra_allocation_result *want = observed(cl) ? observed(cl) : cl->assumed;
    if (want == cl->counted)
        return;
    sched_count(c, cl->counted, -1);
    sched_count(c, want, 1);
    cl->counted = want;
}

void sched_ext_unassume(sc_core *c, sc_pod *p)
{
    if (p->ext_res)
        sched_count(c, p->ext_res, -1);
    sched_arena_free(c->mem, p->ext_ar);
    p->ext_ar = NULL;
    p->ext_res = NULL;
}

dra_err sched_claim_assume(sc_core *c, sc_claim *cl, dra_arena *ar, dra_allocation_result *res,
                           const char *pod_uid)
{
    dra_arena *old = cl->as_ar;
    cl->as_ar = ar;
    cl->assumed = res;
    cl->assumed_pod = ar && pod_uid ? dra_arena_strdup(ar, pod_uid) : NULL;
    recount(c, cl);
    sched_arena_free(c->mem, old);
    return DRA_OK;
}

/* ---- rebuilding the inventory ------------------------------------------------------------- */

static sc_node *node_new(sc_core *c, const char *name);

/* Offline: nodes that slices name but no Node object describes. */
static dra_err implicit_nodes(sc_core *c)
{
    for (size_t i = 0; c->implicit_nodes && i < c->slices.n; i++) {
        const sc_obj *o = c->slices.entries[i].val;
        const dra_alloc_slice *sl;
        if (!c->slices.entries[i].key || !(sl = o->model))
            continue;
        for (size_t j = 0; j <= sl->ndevices; j++) {
            const char *nn = j < sl->ndevices ? (sl->per_device_node_selection
                                                     ? sl->devices[j].node_name : NULL)
                                              : sl->node_name;
            if (nn && !node_get(c, nn) && !node_new(c, nn))
                return DRA_ENOMEM;
        }
    }
    return DRA_OK;
}

static dra_err fill_allocator(sc_core *c, dra_allocator *a)
{
    dra_err err;
    for (size_t i = 0; i < c->nnodes; i++)
        if ((err = dra_allocator_add_node(a, c->nodes[i]->name, c->nodes[i]->labels,
                                          c->nodes[i]->nlabels)) != DRA_OK && err != DRA_EEXIST)
            return err;
    for (size_t i = 0; i < c->slices.n; i++) {
        const sc_obj *o = c->slices.entries[i].val;
        if (!c->slices.entries[i].key || !o->model)
            continue;
        /* A slice the allocator rejects (bad node selection) is left out,
         * as the apiserver would not have stored it. */
        if ((err = dra_allocator_add_slice(a, o->model, NULL)) == DRA_ENOMEM)
            return err;
    }
    for (size_t i = 0; i < c->classes.n; i++) {
        const sc_obj *o = c->classes.entries[i].val;
        if (c->classes.entries[i].key && o->model &&
            (err = dra_allocator_add_class(a, o->model)) != DRA_OK)
            return err;
    }
    return dra_allocator_seal(a, NULL);
}

dra_err sched_rebuild(sc_core *c)
{
    dra_alloc_options ao;
    dra_alloc_stats st;
    dra_allocator *a = NULL;
    dra_err err;
    /* Explanations off: a node that fails costs nothing more; a pod that
     * fits nowhere is explained once (dra_allocator_explain, cycle.c). */
    memset(&ao, 0, sizeof ao);
    ao.max_steps = c->max_steps;
    if ((err = implicit_nodes(c)) != DRA_OK)
        return err;
    if ((err = dra_allocator_new(c->mem, &ao, &a)) != DRA_OK)
        return err;
    if ((err = fill_allocator(c, a)) != DRA_OK) {
        dra_allocator_free(a);
        return err;
    }
    dra_allocator_free(c->inv.a);
    c->inv.a = a;
    dra_allocator_stats(a, &st);
    c->inv.any_global = st.any_nonlocal;
    c->inv.any_multi = st.any_shareable;
    free_graves(c);
    c->dirty = 0;
    for (size_t i = 0; i < c->claims.n; i++)
        if (c->claims.entries[i].key) {
            sc_claim *cl = c->claims.entries[i].val;
            cl->counted = NULL;
            recount(c, cl);
        }
    for (size_t i = 0; i < c->nnodes; i++)
        node_counts(c, c->nodes[i]);
    c->st.rebuilds++;
    return DRA_OK;
}

/* ---- node accounting for pods -------------------------------------------------------------- */

dra_err sched_pod_account(sc_core *c, sc_pod *p, sc_node *node)
{
    dra_err err = DRA_OK;
    if (p->acct_node == node)
        return DRA_OK;
    if (p->acct_node) {
        sched_res_add(c->mem, &p->acct_node->used, &p->acct, -1);
        sched_res_fini(c->mem, &p->acct);
        p->acct_node = NULL;
    }
    if (node) {
        sc_res empty;
        memset(&empty, 0, sizeof empty);
        if ((err = sched_res_add(c->mem, &empty, &p->info->req, 1)) != DRA_OK ||
            (err = sched_res_add(c->mem, &node->used, &empty, 1)) != DRA_OK) {
            sched_res_fini(c->mem, &empty);
            return err;
        }
        p->acct = empty;
        p->acct_node = node;
    }
    return err;
}


/* ---- versions ---------------------------------------------------------------------------------- */

static int rv_num(const char *s, uint64_t *v)
{
    uint64_t x = 0;
    if (!s || !*s)
        return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || x > UINT64_MAX / 10)
            return 0;
        x = x * 10 + (uint64_t)(*s - '0');
    }
    *v = x;
    return 1;
}

/* Whether |doc| is not newer than what the cache holds (|cached|): our
 * own writes go into the cache before the watch brings them, and an
 * older event must not undo them. Versions that are not numbers are
 * never skipped. */
static int not_newer(const char *cached, const dra_doc *doc)
{
    uint64_t a, b;
    return rv_num(cached, &a) && rv_num(dra_obj_rv(doc), &b) && b <= a;
}

/* ---- pods ----------------------------------------------------------------------------------- */

static void pod_account_current(sc_core *c, sc_pod *p)
{
    const sc_podinfo *in = p->info;
    sc_node *n = NULL;
    if (in->node_name)
        p->assumed_node = NULL; /* the binding is visible now */
    if (!sched_pod_terminal(in))
        n = node_get(c, in->node_name ? in->node_name : p->assumed_node);
    sched_pod_account(c, p, n);
}

static dra_err apply_pod(sc_core *c, dra_watch_type type, const dra_doc *doc, int64_t now_ms,
                         dra_diag *d)
{
    sc_podinfo *in = NULL, *old;
    char buf[600];
    const char *key;
    sc_pod *p;
    int was_assigned;
    dra_err err;
    if (type != DRA_WATCH_DELETED && dra_obj_name(doc) &&
        mkkey(buf, sizeof buf, dra_obj_namespace(doc) ? dra_obj_namespace(doc) : "default",
              dra_obj_name(doc)) &&
        (p = sched_pod_get(c, buf)) && !strcmp(p->info->uid, dra_obj_uid(doc) ? dra_obj_uid(doc) : "") &&
        not_newer(p->info->rv, doc))
        return DRA_OK;
    err = sched_podinfo_new(c->mem, &c->strs, doc, &in, d);
    if (err != DRA_OK)
        return err;
    if (!(key = mkkey(buf, sizeof buf, in->ns, in->name))) {
        sched_podinfo_free(c->mem, in);
        return DRA_EINVALID;
    }
    p = sched_pod_get(c, key);
    if (type == DRA_WATCH_DELETED) {
        sched_podinfo_free(c->mem, in);
        if (!p)
            return DRA_OK;
        remember_deleted(c, p->info->uid);
        was_assigned = p->acct_node != NULL;
        sched_cc_pod_changed(c, p->info, 1);
        sched_pod_account(c, p, NULL);
        sched_ext_unassume(c, p);
        sched_queue_remove(c, p);
        refs_clear(c, p);
        dra_map_del(&c->pods, p->key, strlen(p->key));
        sched_podinfo_free(c->mem, p->info);
        dra_free(c->mem, p);
        if (was_assigned)
            sched_queue_move_all(c, now_ms);
        return DRA_OK;
    }
    if (!p) {
        if (!(p = keyed_new(c->mem, sizeof *p, key)) ||
            dra_map_put(&c->pods, p->key, strlen(p->key), p)) {
            dra_free(c->mem, p);
            sched_podinfo_free(c->mem, in);
            return DRA_ENOMEM;
        }
        p->first_seen_ms = now_ms;
    }
    old = p->info;
    if (old && strcmp(old->uid, in->uid)) {
        /* Replaced by a new pod of the same name: the old one is gone. */
        remember_deleted(c, old->uid);
        sched_cc_pod_changed(c, old, 1);
        p->assumed_node = NULL;
        p->attempts = 0;
        p->backoff_until_ms = 0;
    }
    was_assigned = p->acct_node != NULL;
    p->info = in;
    err = refs_update(c, p);
    pod_account_current(c, p);
    sched_queue_admit(c, p, now_ms);
    sched_cc_pod_changed(c, in, 0);
    if (was_assigned && !p->acct_node)
        sched_queue_move_all(c, now_ms); /* it ended: its resources are free */
    sched_podinfo_free(c->mem, old);
    return err;
}

/* ---- claims ------------------------------------------------------------------------------------ */

static void claim_fields(sc_claim *cl)
{
    const dra_object_meta *m = &cl->obj->meta;
    cl->uid = m->uid ? m->uid : "";
    cl->rv = m->resource_version;
    cl->owner_pod = cl->owner_uid = NULL;
    for (size_t i = 0; i < m->n_owner_refs; i++) {
        const dra_owner_ref *o = &m->owner_refs[i];
        if (DRA_TRI_IS_TRUE(o->controller) && o->api_version && !strcmp(o->api_version, "v1") &&
            o->kind && !strcmp(o->kind, "Pod")) {
            cl->owner_pod = o->name;
            cl->owner_uid = o->uid;
        }
    }
    cl->pod_claim = dra_strmap_get(&m->annotations, SC_ANN_POD_CLAIM);
    cl->ext = dra_strmap_get(&m->annotations, SC_ANN_EXT_CLAIM) &&
              !strcmp(dra_strmap_get(&m->annotations, SC_ANN_EXT_CLAIM), "true");
    cl->deleting = m->deletion_timestamp != NULL;
    cl->finalizer = 0;
    for (size_t i = 0; i < m->finalizers.n; i++)
        cl->finalizer |= !strcmp(m->finalizers.v[i], SC_FINALIZER);
    cl->model = NULL;
}

/* The orphan index: claims by (owner pod uid, pod claim name). */
static void orphan_update(sc_core *c, sc_claim *cl, int remove)
{
    char buf[600];
    const char *want = NULL;
    if (!remove && cl->owner_uid && cl->pod_claim &&
        (size_t)snprintf(buf, sizeof buf, "%s/%s", cl->owner_uid, cl->pod_claim) < sizeof buf)
        want = buf;
    if (cl->okey && (!want || strcmp(cl->okey, want))) {
        if (dra_map_get(&c->orphans, cl->okey, strlen(cl->okey)) == cl)
            dra_map_del(&c->orphans, cl->okey, strlen(cl->okey));
        dra_free(c->mem, cl->okey);
        cl->okey = NULL;
    }
    if (want && !cl->okey && (cl->okey = dra_strdup(c->mem, want)) &&
        (dra_map_del(&c->orphans, cl->okey, strlen(cl->okey)),
         dra_map_put(&c->orphans, cl->okey, strlen(cl->okey), cl))) {
        dra_free(c->mem, cl->okey);
        cl->okey = NULL;
    }
}

static dra_err decode_kind(const dra_mem *mem, const dra_doc *doc, dra_kind want, dra_arena **ar,
                           dra_object **obj, dra_diag *d)
{
    dra_err err;
    *obj = NULL;
    if (!(*ar = sched_arena_new(mem)))
        return DRA_ENOMEM;
    err = dra_api_decode(*ar, doc, obj, d);
    if (err != DRA_OK || !*obj || (*obj)->kind != want) {
        sched_arena_free(mem, *ar);
        *ar = NULL;
        return err == DRA_ENOMEM ? DRA_ENOMEM : DRA_EINVALID;
    }
    dra_api_set_defaults(*obj);
    return DRA_OK;
}

static dra_err apply_claim(sc_core *c, dra_watch_type type, const dra_doc *doc, int64_t now_ms,
                           dra_diag *d)
{
    dra_arena *ar = NULL, *old_ar;
    dra_object *obj;
    char buf[600];
    const char *key;
    sc_claim *cl;
    int had_alloc, was_new = 0;
    dra_err err;
    if (type != DRA_WATCH_DELETED && dra_obj_name(doc) &&
        (cl = sched_claim_get(c, dra_obj_namespace(doc), dra_obj_name(doc))) &&
        !strcmp(cl->uid, dra_obj_uid(doc) ? dra_obj_uid(doc) : "") && not_newer(cl->rv, doc))
        return DRA_OK;
    err = decode_kind(c->mem, doc, DRA_KIND_RESOURCE_CLAIM, &ar, &obj, d);
    if (err != DRA_OK)
        return err;
    if (!(key = mkkey(buf, sizeof buf, obj->meta.namespace_, obj->meta.name))) {
        sched_arena_free(c->mem, ar);
        return DRA_EINVALID;
    }
    cl = dra_map_get(&c->claims, key, strlen(key));
    if (type == DRA_WATCH_DELETED) {
        sched_arena_free(c->mem, ar);
        if (!cl)
            return DRA_OK;
        had_alloc = cl->counted != NULL;
        cl->assumed = NULL;
        orphan_update(c, cl, 1);
        dra_map_del(&c->claims, cl->key, strlen(cl->key));
        sched_count(c, cl->counted, -1);
        sched_cc_claim_changed(c, cl);
        sched_queue_wake_claim(c, cl->key, now_ms);
        free_claim(c, cl);
        if (had_alloc)
            sched_queue_move_all(c, now_ms);
        return DRA_OK;
    }
    if (!cl) {
        if (!(cl = keyed_new(c->mem, sizeof *cl, key)) ||
            dra_map_put(&c->claims, cl->key, strlen(cl->key), cl)) {
            dra_free(c->mem, cl);
            sched_arena_free(c->mem, ar);
            return DRA_ENOMEM;
        }
        was_new = 1;
    }
    had_alloc = observed(cl) != NULL;
    if (cl->obj && cl->uid && obj->meta.uid && strcmp(cl->uid, obj->meta.uid) && cl->assumed) {
        /* A new claim under the old name: our assumption was for the old one. */
        cl->assumed = NULL;
    }
    old_ar = cl->ar;
    cl->obj = obj;
    cl->ar = ar;
    claim_fields(cl);
    orphan_update(c, cl, 0);
    recount(c, cl);
    sched_arena_free(c->mem, old_ar);
    sched_cc_claim_changed(c, cl);
    if (was_new || !observed(cl) != !had_alloc || cl->deleting)
        sched_queue_wake_claim(c, cl->key, now_ms);
    if (had_alloc && !observed(cl))
        sched_queue_move_all(c, now_ms); /* deallocated: devices are free */
    return DRA_OK;
}

/* ---- slices, classes, templates --------------------------------------------------------------------- */

/* Decodes a slice or class and builds its allocator model in |ar|. */
static dra_err decode_model(const dra_mem *mem, const dra_doc *doc, dra_kind kind, size_t hint,
                            dra_arena **ar, dra_object **obj, void **model, dra_diag *d)
{
    dra_err err;
    *model = NULL;
    if (hint) {
        if (!(*ar = sched_arena_new(mem)))
            return DRA_ENOMEM;
        (*ar)->next_block = hint; /* one block that holds everything */
        if ((err = dra_api_decode(*ar, doc, obj, d)) != DRA_OK || (*obj)->kind != kind) {
            sched_arena_free(mem, *ar);
            *ar = NULL;
            return err == DRA_ENOMEM ? err : DRA_EINVALID;
        }
        dra_api_set_defaults(*obj);
    } else if ((err = decode_kind(mem, doc, kind, ar, obj, d)) != DRA_OK) {
        return err;
    }
    err = kind == DRA_KIND_RESOURCE_SLICE
              ? dra_alloc_slice_from_api(*ar, *obj, (dra_alloc_slice **)model, d)
              : dra_alloc_class_from_api(*ar, *obj, (dra_alloc_class **)model, d);
    if (err != DRA_OK) {
        sched_arena_free(mem, *ar);
        *ar = NULL;
        return err == DRA_ENOMEM ? err : DRA_EINVALID;
    }
    return DRA_OK;
}

/* Classes stay in the cache for long: decoded once to learn their size,
 * then again into one block of exactly that size (an arena's doubling
 * blocks would waste up to half of it). */
static dra_err decode_tight(const dra_mem *mem, const dra_doc *doc, dra_kind kind, dra_arena **ar,
                            dra_object **obj, void **model, dra_diag *d)
{
    dra_err err = decode_model(mem, doc, kind, 0, ar, obj, model, d);
    size_t used;
    if (err != DRA_OK)
        return err;
    used = (*ar)->used;
    sched_arena_free(mem, *ar);
    return decode_model(mem, doc, kind, used + 64, ar, obj, model, d);
}

/* A slice is kept as its allocator model only, copied with its strings
 * into one block of the size it needs; the typed object in |tmp| (the
 * caller frees it) is not needed after. */
static dra_err slice_compact(const dra_mem *mem, const dra_alloc_slice *in, dra_arena **ar,
                             void **model)
{
    dra_arena *probe = sched_arena_new(mem);
    dra_alloc_slice *s;
    size_t used;
    dra_err err;
    *ar = NULL;
    if (!probe)
        return DRA_ENOMEM;
    err = sched_slice_copy(probe, in, &s);
    used = probe->used;
    sched_arena_free(mem, probe);
    if (err != DRA_OK || !(*ar = sched_arena_new(mem)))
        return DRA_ENOMEM;
    (*ar)->next_block = used + 64;
    if ((err = sched_slice_copy(*ar, in, &s)) != DRA_OK) {
        sched_arena_free(mem, *ar);
        *ar = NULL;
        return err;
    }
    *model = s;
    return DRA_OK;
}

static dra_err apply_obj(sc_core *c, dra_map *m, dra_kind kind, dra_watch_type type,
                         const dra_doc *doc, int64_t now_ms, dra_diag *d)
{
    dra_arena *ar = NULL;
    dra_object *obj;
    char buf[600];
    const char *key;
    sc_obj *o, *old;
    void *model = NULL;
    int inventory = kind != DRA_KIND_RESOURCE_CLAIM_TEMPLATE;
    dra_arena *tmp = NULL;
    dra_err err;
    if (kind == DRA_KIND_DEVICE_CLASS && type != DRA_WATCH_DELETED)
        err = decode_tight(c->mem, doc, kind, &ar, &obj, &model, d);
    else if (kind == DRA_KIND_RESOURCE_SLICE && type != DRA_WATCH_DELETED)
        err = decode_model(c->mem, doc, kind, 0, &ar, &obj, &model, d);
    else
        err = decode_kind(c->mem, doc, kind, &ar, &obj, d);
    if (err != DRA_OK)
        return err;
    key = obj->meta.namespace_ ? mkkey(buf, sizeof buf, obj->meta.namespace_, obj->meta.name)
                               : obj->meta.name;
    if (!key) {
        sched_arena_free(c->mem, ar);
        return DRA_EINVALID;
    }
    if (kind == DRA_KIND_RESOURCE_SLICE && type != DRA_WATCH_DELETED) {
        /* The key is copied below; the typed slice goes once compacted. */
        if (!(key = dra_arena_strdup(ar, key)))
            err = DRA_ENOMEM;
        tmp = ar;
        if (err != DRA_OK || (err = slice_compact(c->mem, model, &ar, &model)) != DRA_OK) {
            sched_arena_free(c->mem, tmp);
            return err;
        }
        obj = NULL;
    }
    old = dra_map_get(m, key, strlen(key));
    if (type == DRA_WATCH_DELETED) {
        sched_arena_free(c->mem, ar);
        if (!old)
            return DRA_OK;
        dra_map_del(m, old->key, strlen(old->key));
        if (inventory) {
            sched_grave(c, old->ar);
            old->ar = NULL;
            c->dirty = 1;
        }
        free_obj(c, old);
        return DRA_OK;
    }
    o = keyed_new(c->mem, sizeof *o, key);
    sched_arena_free(c->mem, tmp);
    if (!o) {
        sched_arena_free(c->mem, ar);
        return DRA_ENOMEM;
    }
    o->ar = ar;
    o->obj = obj;
    o->model = model;
    if (kind == DRA_KIND_DEVICE_CLASS) {
        o->ext_name = obj->u.device_class.spec.extended_resource_name;
        o->created = obj->meta.creation_timestamp;
    }
    /* The map keeps the first key it saw for an entry: the old object's
     * key goes with the old object, so its entry goes first. */
    if (old)
        dra_map_del(m, old->key, strlen(old->key));
    if (dra_map_put(m, o->key, strlen(o->key), o)) {
        free_obj(c, o);
        if (old) /* nothing replaced it after all */
            dra_map_put(m, old->key, strlen(old->key), old);
        return DRA_ENOMEM;
    }
    if (old) {
        if (inventory) {
            sched_grave(c, old->ar);
            old->ar = NULL;
        }
        free_obj(c, old);
    }
    if (inventory) {
        c->dirty = 1;
        sched_queue_move_all(c, now_ms);
    }
    return DRA_OK;
}

/* ---- nodes --------------------------------------------------------------------------------------------- */

static int labels_equal(const sc_node *a, const sc_node *b)
{
    if (a->nlabels != b->nlabels)
        return 0;
    for (size_t i = 0; i < a->nlabels; i++)
        if (strcmp(a->labels[i].key, b->labels[i].key) ||
            strcmp(a->labels[i].value, b->labels[i].value))
            return 0;
    return 1;
}

static int taints_equal(const sc_node *a, const sc_node *b)
{
    if (a->ntaints != b->ntaints)
        return 0;
    for (size_t i = 0; i < a->ntaints; i++)
        if (strcmp(a->taints[i].key, b->taints[i].key) ||
            strcmp(a->taints[i].value ? a->taints[i].value : "", b->taints[i].value ? b->taints[i].value : "") ||
            strcmp(a->taints[i].effect ? a->taints[i].effect : "", b->taints[i].effect ? b->taints[i].effect : ""))
            return 0;
    return 1;
}

static int alloc_equal(const sc_node *a, const sc_node *b)
{
    if (a->has_alloc != b->has_alloc || a->alloc.cpu_m != b->alloc.cpu_m ||
        a->alloc.mem != b->alloc.mem || a->alloc.pods != b->alloc.pods || a->alloc.nsc != b->alloc.nsc)
        return 0;
    for (size_t i = 0; i < a->alloc.nsc; i++)
        if (sched_res_scalar(&b->alloc, a->alloc.sc[i].name) != a->alloc.sc[i].v)
            return 0;
    return 1;
}

static void node_delete(sc_core *c, sc_node *n)
{
    sc_node *last = c->nodes[--c->nnodes];
    last->idx = n->idx;
    c->nodes[n->idx] = last;
    dra_map_del(&c->nodes_by_name, n->name, strlen(n->name));
    for (size_t i = 0; i < c->pods.n; i++)
        if (c->pods.entries[i].key) {
            sc_pod *p = c->pods.entries[i].val;
            if (p->acct_node == n)
                sched_pod_account(c, p, NULL);
        }
    n->gone = 1;
    bucket_unlink(c, n);
    /* The allocator borrows the labels until the rebuild. */
    sched_grave(c, n->lab_ar);
    sched_arena_free(c->mem, n->ar);
    sched_res_fini(c->mem, &n->used);
    n->ar = n->lab_ar = NULL;
    dra_free(c->mem, n);
    c->dirty = 1;
}

static dra_err apply_node(sc_core *c, dra_watch_type type, const dra_doc *doc, int64_t now_ms,
                          dra_diag *d)
{
    const dra_doc *md = dra_doc_get(doc, "metadata"), *nm = md ? dra_doc_get(md, "name") : NULL;
    const char *name = nm && nm->kind == DRA_DOC_STRING ? nm->u.str.s : NULL;
    sc_node *n = node_get(c, name), tmp;
    dra_arena *ar, *lab;
    dra_err err = DRA_ENOMEM;
    int changed;
    if (!name) {
        dra_diag_add(d, "", 0, 0, "node without metadata.name");
        return DRA_EINVALID;
    }
    if (type == DRA_WATCH_DELETED) {
        if (n)
            node_delete(c, n);
        return DRA_OK;
    }
    memset(&tmp, 0, sizeof tmp);
    ar = sched_arena_new(c->mem);
    lab = sched_arena_new(c->mem);
    if (!ar || !lab || (err = sched_node_parse(&c->strs, doc, ar, lab, &tmp, d)) != DRA_OK) {
        sched_arena_free(c->mem, ar);
        sched_arena_free(c->mem, lab);
        return ar && lab ? err : DRA_ENOMEM;
    }
    if (!n) {
        if (!(n = node_new(c, name))) {
            sched_arena_free(c->mem, ar);
            sched_arena_free(c->mem, lab);
            return DRA_ENOMEM;
        }
        sched_arena_free(c->mem, n->ar);
        sched_arena_free(c->mem, n->lab_ar);
        n->ar = ar;
        n->lab_ar = lab;
        n->labels = tmp.labels;
        n->nlabels = tmp.nlabels;
        n->taints = tmp.taints;
        n->ntaints = tmp.ntaints;
        n->unschedulable = tmp.unschedulable;
        n->has_alloc = tmp.has_alloc;
        n->alloc = tmp.alloc;
        c->dirty = 1;
        sched_node_rebucket(c, n);
        sched_queue_move_all(c, now_ms);
        return DRA_OK;
    }
    changed = !taints_equal(n, &tmp) || n->unschedulable != tmp.unschedulable || !alloc_equal(n, &tmp);
    if (labels_equal(n, &tmp)) {
        sched_arena_free(c->mem, lab);
    } else {
        sched_grave(c, n->lab_ar);
        n->lab_ar = lab;
        n->labels = tmp.labels;
        n->nlabels = tmp.nlabels;
        c->dirty = 1;
        changed = 1;
    }
    sched_arena_free(c->mem, n->ar);
    n->ar = ar;
    n->taints = tmp.taints;
    n->ntaints = tmp.ntaints;
    n->unschedulable = tmp.unschedulable;
    n->has_alloc = tmp.has_alloc;
    n->alloc = tmp.alloc;
    if (changed)
        sched_queue_move_all(c, now_ms);
    return DRA_OK;
}

/* ---- entry point ---------------------------------------------------------------------------------------------- */

dra_err sched_apply(sc_core *c, dra_kind kind, dra_watch_type type, const dra_doc *obj,
                    int64_t now_ms, dra_diag *d)
{
    switch (kind) {
    case DRA_KIND_POD:
        return apply_pod(c, type, obj, now_ms, d);
    case DRA_KIND_RESOURCE_CLAIM:
        return apply_claim(c, type, obj, now_ms, d);
    case DRA_KIND_NODE:
        return apply_node(c, type, obj, now_ms, d);
    case DRA_KIND_RESOURCE_SLICE:
        return apply_obj(c, &c->slices, kind, type, obj, now_ms, d);
    case DRA_KIND_DEVICE_CLASS:
        return apply_obj(c, &c->classes, kind, type, obj, now_ms, d);
    case DRA_KIND_RESOURCE_CLAIM_TEMPLATE:
        return apply_obj(c, &c->templates, kind, type, obj, now_ms, d);
    default:
        return DRA_OK;
    }
}
