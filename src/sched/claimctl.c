/*
 * claimctl.c: the resourceclaim controller's decisions, as
 * kube-controller-manager makes them (pkg/controller/resourceclaim):
 * for a pod, a claim per template entry (generateName <pod>-<entry>-,
 * pod-claim-name annotation, controller ownerReference, an orphan from a
 * crash reused) and pod.status.resourceClaimStatuses naming them, and a
 * reservation for pods that got a node without the scheduler; for a
 * claim, reservedFor entries of pods that are gone or done removed, the
 * allocation cleared when nobody reserves it any more, the finalizer
 * removed, and claims generated for pods that are done or gone deleted.
 * A plan lists the API calls; the live driver runs them.
 */
#include <stdio.h>
#include <string.h>

#include "sched_int.h"

void sched_plan_init(sc_plan *p, const dra_mem *mem)
{
    memset(p, 0, sizeof *p);
    dra_arena_init(&p->ar, mem);
}

void sched_plan_fini(sc_plan *p)
{
    dra_arena_fini(&p->ar);
    memset(p, 0, sizeof *p);
}

static sc_action *add(sc_plan *p, sc_op op, const char *ns, const char *name, const char *uid)
{
    sc_action *v;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 8;
        if (!(v = dra_arena_array(&p->ar, cap, sizeof *v)))
            return NULL;
        if (p->n)
            memcpy(v, p->v, p->n * sizeof *v);
        p->v = v;
        p->cap = cap;
    }
    v = &p->v[p->n++];
    memset(v, 0, sizeof *v);
    v->op = op;
    v->ns = ns ? dra_arena_strdup(&p->ar, ns) : NULL;
    v->name = name ? dra_arena_strdup(&p->ar, name) : NULL;
    v->uid = uid ? dra_arena_strdup(&p->ar, uid) : NULL;
    return v;
}

static int reserved_for(const dra_claim_status *st, const char *uid)
{
    for (size_t i = 0; i < st->n_reserved_for; i++)
        if (st->reserved_for[i].uid && !strcmp(st->reserved_for[i].uid, uid))
            return 1;
    return 0;
}

/* ---- what a change calls for ---------------------------------------------------------- */

static void enqueue(sc_core *c, const char *prefix, const char *ns, const char *name)
{
    char buf[640];
    if ((size_t)snprintf(buf, sizeof buf, "%s%s/%s", prefix, ns, name) < sizeof buf)
        sched_wq_add(&c->wq, buf);
}

/* upstream podNeedsWork */
static int pod_needs_work(sc_core *c, const sc_podinfo *p)
{
    if (p->deleting)
        return 0;
    for (size_t i = 0; i < p->nclaims; i++) {
        const sc_pclaim *pc = &p->claims[i];
        const char *name;
        sc_claim *cl;
        dra_err e = sched_pod_claim_name(p, pc, &name);
        if (e == DRA_ENOTFOUND)
            return pc->template_name != NULL;
        if (e != DRA_OK || !name)
            continue;
        if (!(cl = sched_claim_get(c, p->ns, name))) {
            if (pc->template_name)
                return 1;
            continue;
        }
        if (pc->template_name && (!cl->owner_uid || strcmp(cl->owner_uid, p->uid)))
            continue;
        if (!p->node_name)
            continue;
        if (cl->obj->u.claim.status.allocation && !reserved_for(&cl->obj->u.claim.status, p->uid))
            return 1;
    }
    return 0;
}

void sched_cc_pod_changed(sc_core *c, const sc_podinfo *p, int deleted)
{
    if (!c->controller || (!p->nclaims && !p->ext_claim))
        return;
    if (deleted || sched_pod_terminal(p) || (p->deleting && !p->node_name)) {
        /* Its claims may be released now. */
        for (size_t i = 0; i < p->nclaims; i++) {
            const char *name;
            if (sched_pod_claim_name(p, &p->claims[i], &name) == DRA_OK && name)
                enqueue(c, "claim:", p->ns, name);
        }
        if (p->ext_claim)
            enqueue(c, "claim:", p->ns, p->ext_claim);
    }
    if (!deleted && pod_needs_work(c, p))
        enqueue(c, "pod:", p->ns, p->name);
}

/* Whether plan_claim has nothing to do for |cl| as it is: no
 * reservation to check, no finalizer to remove, no owning pod to look
 * for. Most claims made outside pods are, so their events wake no
 * worker. */
static int claim_idle(const sc_claim *cl)
{
    if (cl->obj->u.claim.status.n_reserved_for)
        return 0;
    if (cl->deleting)
        return !cl->finalizer;
    return !cl->owner_pod || !cl->owner_uid;
}

void sched_cc_claim_changed(sc_core *c, const sc_claim *cl)
{
    size_t n;
    sc_pod **users;
    if (!c->controller)
        return;
    if (!claim_idle(cl)) {
        char buf[640];
        if ((size_t)snprintf(buf, sizeof buf, "claim:%s", cl->key) < sizeof buf)
            sched_wq_add(&c->wq, buf);
    }
    users = sched_claim_users(c, cl->key, &n);
    for (size_t i = 0; i < n; i++)
        if (!users[i]->info->deleting && pod_needs_work(c, users[i]->info))
            enqueue(c, "pod:", users[i]->info->ns, users[i]->info->name);
}

/* ---- syncing a pod ------------------------------------------------------------------------ */

static int add_status(sc_plan *pl, const char *name, const char *claim)
{
    sc_pstatus *v = dra_arena_array(&pl->ar, pl->nst + 1, sizeof *v);
    if (!v)
        return 0;
    if (pl->nst)
        memcpy(v, pl->st, pl->nst * sizeof *v);
    v[pl->nst].name = dra_arena_strdup(&pl->ar, name);
    v[pl->nst].claim = claim ? dra_arena_strdup(&pl->ar, claim) : NULL;
    pl->st = v;
    pl->nst++;
    return 1;
}

/* A claim this pod's controller made for pod claim |pc| but never
 * recorded (a crash between create and the status patch). */
static sc_claim *orphan(sc_core *c, const sc_podinfo *p, const sc_pclaim *pc)
{
    char buf[600];
    if ((size_t)snprintf(buf, sizeof buf, "%s/%s", p->uid, pc->name) >= sizeof buf)
        return NULL;
    return dra_map_get(&c->orphans, buf, strlen(buf));
}

static dra_err plan_pod_claim(sc_core *c, const sc_podinfo *p, const sc_pclaim *pc, sc_plan *pl)
{
    const char *name;
    sc_claim *cl;
    sc_obj *t;
    sc_action *a;
    dra_err e = sched_pod_claim_name(p, pc, &name);
    if (e == DRA_OK && !name)
        return DRA_OK; /* no claim needed */
    if (e != DRA_OK && e != DRA_ENOTFOUND)
        return DRA_OK;
    if (e == DRA_OK) {
        cl = sched_claim_get(c, p->ns, name);
        if (cl && (!pc->template_name || (cl->owner_uid && !strcmp(cl->owner_uid, p->uid))))
            return add_status(pl, pc->name, name) ? DRA_OK : DRA_ENOMEM;
    }
    if (!pc->template_name)
        return DRA_OK; /* the user has to create it */
    pl->need_statuses = 1;
    if ((cl = orphan(c, p, pc)))
        return add_status(pl, pc->name, cl->obj->meta.name) ? DRA_OK : DRA_ENOMEM;
    if (!(t = sched_template_get(c, p->ns, pc->template_name))) {
        pl->ev_reason = "FailedResourceClaimCreation";
        pl->ev_msg = dra_arena_sprintf(&pl->ar, "PodResourceClaim %s: resource claim template "
                                       "\"%s\": resourceclaimtemplate.resource.k8s.io \"%s\" "
                                       "not found", pc->name, pc->template_name, pc->template_name);
        return DRA_ENOTFOUND;
    }
    if (!(a = add(pl, SC_OP_CREATE_CLAIM, p->ns, NULL, NULL)))
        return DRA_ENOMEM;
    a->pod_claim = dra_arena_strdup(&pl->ar, pc->name);
    /* Created with the finalizer the scheduler would add at reserve: one
     * write less per pod, the same state once allocated. */
    a->doc = sched_claim_from_template(&pl->ar, p, pc, t->obj, 1);
    return a->doc && a->pod_claim ? DRA_OK : DRA_ENOMEM;
}

static dra_err plan_pod(sc_core *c, const char *key, sc_plan *pl)
{
    sc_pod *pod = sched_pod_get(c, key);
    const sc_podinfo *p;
    dra_err err;
    if (!pod || (p = pod->info)->deleting)
        return DRA_OK;
    pl->pod_ns = dra_arena_strdup(&pl->ar, p->ns);
    pl->pod_name = dra_arena_strdup(&pl->ar, p->name);
    pl->pod_uid = dra_arena_strdup(&pl->ar, p->uid);
    for (size_t i = 0; i < p->nclaims; i++)
        if ((err = plan_pod_claim(c, p, &p->claims[i], pl)) != DRA_OK)
            return err == DRA_ENOTFOUND ? DRA_OK : err;
    if (!p->node_name)
        return DRA_OK;
    /* A pod that got its node without the scheduler: reserve its claims
     * that are allocated already. */
    for (size_t i = 0; i < p->nclaims; i++) {
        const char *name;
        sc_claim *cl;
        sc_action *a;
        if (sched_pod_claim_name(p, &p->claims[i], &name) != DRA_OK || !name ||
            !(cl = sched_claim_get(c, p->ns, name)) || !cl->obj->u.claim.status.allocation ||
            reserved_for(&cl->obj->u.claim.status, p->uid) || cl->deleting)
            continue;
        if (!(a = add(pl, SC_OP_CLAIM_STATUS, p->ns, name, cl->uid)) ||
            !(a->doc = sched_claim_reserve_doc(&pl->ar, cl, NULL, p, 0)))
            return DRA_ENOMEM;
    }
    return DRA_OK;
}

/* ---- syncing a claim ------------------------------------------------------------------------ */

static int in_list(const char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; s && i < n; i++)
        if (!strcmp(v[i], s))
            return 1;
    return 0;
}

/* Whether reservedFor entry |r| must go. *unsure: the pod is unknown to
 * the cache and must be looked up (unless |checked|). */
static int entry_stale(sc_core *c, const sc_claim *cl, const dra_consumer_ref *r,
                       const char *const *gone, size_t ngone, int checked, int *unsure)
{
    char buf[600];
    sc_pod *pod;
    if (sched_uid_deleted(c, r->uid) || in_list(gone, ngone, r->uid))
        return 1;
    if ((size_t)snprintf(buf, sizeof buf, "%s/%s", cl->obj->meta.namespace_,
                         r->name ? r->name : "") >= sizeof buf)
        return 0;
    if (!(pod = sched_pod_get(c, buf))) {
        if (!checked)
            *unsure = 1;
        return 0;
    }
    return strcmp(pod->info->uid, r->uid ? r->uid : "") || sched_pod_done(pod->info);
}

/* The claim object with a new reservedFor and, when |dealloc|, no
 * allocation; or without the finalizer when |unfinalize|. */
static dra_doc *claim_with(dra_arena *ar, const sc_claim *cl, dra_consumer_ref *rf, size_t n,
                           int dealloc, int unfinalize)
{
    dra_object o = *cl->obj;
    const char **fz = dra_arena_array(ar, o.meta.finalizers.n + 1, sizeof *fz);
    dra_doc *out = NULL;
    size_t k = 0;
    if (!fz)
        return NULL;
    o.u.claim.status.reserved_for = rf;
    o.u.claim.status.n_reserved_for = n;
    if (dealloc) {
        o.u.claim.status.allocation = NULL;
        o.u.claim.status.devices = NULL;
        o.u.claim.status.n_devices = 0;
    }
    if (unfinalize) {
        for (size_t i = 0; i < o.meta.finalizers.n; i++)
            if (strcmp(o.meta.finalizers.v[i], SC_FINALIZER))
                fz[k++] = o.meta.finalizers.v[i];
        o.meta.finalizers.v = fz;
        o.meta.finalizers.n = k;
    }
    return dra_api_encode(ar, &o, &out) == DRA_OK ? out : NULL;
}

/* Generated for a pod (controller ownerReference) that is done or gone:
 * delete it. upstream leaves gone pods to the garbage collector; drad has
 * none, so a pod known to be deleted counts as gone here too. */
static dra_err plan_owner(sc_core *c, const sc_claim *cl, const char *const *gone, size_t ngone,
                          int checked, sc_plan *pl)
{
    char buf[600];
    sc_pod *pod;
    int gone_now;
    if (!cl->owner_pod || !cl->owner_uid)
        return DRA_OK;
    if ((size_t)snprintf(buf, sizeof buf, "%s/%s", cl->obj->meta.namespace_, cl->owner_pod) >= sizeof buf)
        return DRA_OK;
    pod = sched_pod_get(c, buf);
    if (pod)
        gone_now = strcmp(pod->info->uid, cl->owner_uid) || sched_pod_done(pod->info);
    else if (sched_uid_deleted(c, cl->owner_uid) || in_list(gone, ngone, cl->owner_uid))
        gone_now = 1;
    else if (!checked) {
        sc_action *a = add(pl, SC_OP_POD_CHECK, cl->obj->meta.namespace_, cl->owner_pod, cl->owner_uid);
        return a ? DRA_OK : DRA_ENOMEM;
    } else
        gone_now = 0;
    if (gone_now && !add(pl, SC_OP_CLAIM_DELETE, cl->obj->meta.namespace_, cl->obj->meta.name, cl->uid))
        return DRA_ENOMEM;
    return DRA_OK;
}

static dra_err plan_claim(sc_core *c, const char *key, const char *const *gone, size_t ngone,
                          int checked, sc_plan *pl)
{
    sc_claim *cl = dra_map_get(&c->claims, key, strlen(key));
    const dra_claim_status *st;
    dra_consumer_ref *valid;
    size_t nvalid = 0;
    int unsure = 0;
    sc_action *a;
    if (!cl)
        return DRA_OK;
    st = &cl->obj->u.claim.status;
    if (!(valid = dra_arena_array(&pl->ar, st->n_reserved_for + 1, sizeof *valid)))
        return DRA_ENOMEM;
    for (size_t i = 0; i < st->n_reserved_for; i++) {
        const dra_consumer_ref *r = &st->reserved_for[i];
        int pods = (!r->api_group || !*r->api_group) && r->resource && !strcmp(r->resource, "pods");
        int u = 0;
        if (pods && entry_stale(c, cl, r, gone, ngone, checked, &u))
            continue;
        if (u) {
            unsure = 1;
            if (!add(pl, SC_OP_POD_CHECK, cl->obj->meta.namespace_, r->name, r->uid))
                return DRA_ENOMEM;
        }
        valid[nvalid++] = *r; /* other consumers are kept, as upstream cannot check them */
    }
    if (unsure)
        return DRA_OK; /* look the unknown pods up first, then plan again */
    if (nvalid < st->n_reserved_for) {
        int dealloc = !nvalid && cl->finalizer && st->allocation;
        if (!(a = add(pl, SC_OP_CLAIM_STATUS, cl->obj->meta.namespace_, cl->obj->meta.name, cl->uid)) ||
            !(a->doc = claim_with(&pl->ar, cl, valid, nvalid, dealloc, 0)))
            return DRA_ENOMEM;
        a->then_unfinalize = dealloc;
        a->dealloc = dealloc;
    } else if (cl->finalizer && cl->deleting && !nvalid) {
        if (st->allocation) {
            if (!(a = add(pl, SC_OP_CLAIM_STATUS, cl->obj->meta.namespace_, cl->obj->meta.name, cl->uid)) ||
                !(a->doc = claim_with(&pl->ar, cl, valid, 0, 1, 0)))
                return DRA_ENOMEM;
            a->then_unfinalize = 1;
            a->dealloc = 1;
        } else if (!(a = add(pl, SC_OP_CLAIM_UPDATE, cl->obj->meta.namespace_, cl->obj->meta.name, cl->uid)) ||
                   !(a->doc = claim_with(&pl->ar, cl, valid, 0, 0, 1))) {
            return DRA_ENOMEM;
        }
    }
    if (!nvalid && !cl->deleting)
        return plan_owner(c, cl, gone, ngone, checked, pl);
    return DRA_OK;
}

dra_err sched_cc_plan(sc_core *c, const char *key, const char *const *gone, size_t ngone,
                      int checked, sc_plan *plan)
{
    if (!strncmp(key, "pod:", 4))
        return plan_pod(c, key + 4, plan);
    if (!strncmp(key, "claim:", 6))
        return plan_claim(c, key + 6, gone, ngone, checked, plan);
    return DRA_OK;
}
