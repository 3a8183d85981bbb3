/*
 * claims.c: the kubelet's DRA manager for one node. Resolves a pod's
 * claims (resourceClaimName, or the generated name in
 * status.resourceClaimStatuses), checks them as the kubelet does
 * (created for this pod, reserved for it, allocated), prepares the ones
 * not yet prepared with one NodePrepareResources per driver, and keeps
 * which pods use which prepared claim in STATE/claims.json, so a claim
 * is unprepared once no pod on the node uses it, also across restarts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "node_int.h"

/* ---- the table and its checkpoint -------------------------------------- */

static void claim_free(dra_node *n, node_claim *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_pods; i++)
        dra_free(n->mem, c->pods[i]);
    dra_free(n->mem, c->pods);
    dra_arena_fini(&c->a);
    dra_free(n->mem, c);
}

void node_claims_fini(dra_node *n)
{
    for (size_t i = 0; i < n->claims.n; i++)
        if (n->claims.entries[i].key)
            claim_free(n, n->claims.entries[i].val);
    dra_map_fini(&n->claims);
}

static dra_doc *str_list(dra_arena *a, char *const *v, size_t cnt, dra_err *err)
{
    dra_doc *l = dra_doc_new_list(a, cnt);
    for (size_t i = 0; i < cnt; i++)
        node_push(a, l, node_str(a, v[i]), err);
    if (!l)
        *err = DRA_ENOMEM;
    return l;
}

static dra_doc *claim_doc(dra_arena *a, const node_claim *c, dra_err *err)
{
    dra_doc *m = dra_doc_new_map(a, 6), *devs = dra_doc_new_list(a, c->n_devs);
    node_set_str(a, m, "uid", c->uid, err);
    node_set_str(a, m, "namespace", c->ns, err);
    node_set_str(a, m, "name", c->name, err);
    node_set(a, m, "drivers", str_list(a, c->drivers, c->n_drivers, err), err);
    for (size_t i = 0; i < c->n_devs; i++) {
        dra_doc *d = dra_doc_new_map(a, 2);
        node_set(a, d, "requests", str_list(a, c->devs[i].requests, c->devs[i].n_requests, err), err);
        node_set(a, d, "cdiDeviceIDs", str_list(a, c->devs[i].cdi_ids, c->devs[i].n_cdi_ids, err), err);
        node_push(a, devs, d, err);
    }
    node_set(a, m, "devices", devs, err);
    node_set(a, m, "pods", str_list(a, c->pods, c->n_pods, err), err);
    node_set(a, m, "prepared", dra_doc_new_bool(a, c->prepared), err);
    return m;
}

/* Writes claims.json; called with n->mu held. */
static dra_err claims_save(dra_node *n)
{
    dra_arena a;
    dra_err err = DRA_OK;
    dra_doc *root, *list;
    char *text;
    dra_arena_init(&a, n->mem);
    root = dra_doc_new_map(&a, 1);
    list = dra_doc_new_list(&a, n->claims.live);
    for (size_t i = 0; i < n->claims.n; i++)
        if (n->claims.entries[i].key)
            node_push(&a, list, claim_doc(&a, n->claims.entries[i].val, &err), &err);
    node_set(&a, root, "claims", list, &err);
    text = err ? NULL : node_to_json(n->mem, root);
    if (!text)
        err = DRA_ENOMEM;
    else if (node_write_file(n->claims_path, text, strlen(text)) != 0)
        err = DRA_EIO;
    dra_free(n->mem, text);
    dra_arena_fini(&a);
    return err;
}

static char **strs_from(dra_arena *a, const dra_doc *l, size_t *cnt)
{
    char **v;
    *cnt = 0;
    if (!l || l->kind != DRA_DOC_LIST || l->u.list.n == 0)
        return NULL;
    if (!(v = dra_arena_array(a, l->u.list.n, sizeof *v)))
        return NULL;
    for (size_t i = 0; i < l->u.list.n; i++)
        if (l->u.list.items[i]->kind == DRA_DOC_STRING)
            v[(*cnt)++] = dra_arena_strdup(a, l->u.list.items[i]->u.str.s);
    return v;
}

static dra_err add_pod(dra_node *n, node_claim *c, const char *pod_uid)
{
    size_t cap = c->n_pods;
    for (size_t i = 0; i < c->n_pods; i++)
        if (strcmp(c->pods[i], pod_uid) == 0)
            return DRA_OK;
    if (dra_grow(n->mem, (void **)&c->pods, &cap, c->n_pods + 1, sizeof *c->pods))
        return DRA_ENOMEM;
    if (!(c->pods[c->n_pods] = dra_strdup(n->mem, pod_uid)))
        return DRA_ENOMEM;
    c->n_pods++;
    return DRA_OK;
}

static node_claim *claim_from_doc(dra_node *n, const dra_doc *m)
{
    node_claim *c = dra_calloc(n->mem, 1, sizeof *c);
    const dra_doc *devs = dra_doc_get(m, "devices"), *pods = dra_doc_get(m, "pods");
    const dra_doc *prep = dra_doc_get(m, "prepared");
    if (!c)
        return NULL;
    c->prepared = prep && prep->kind == DRA_DOC_BOOL && prep->u.b;
    dra_arena_init(&c->a, n->mem);
    c->uid = dra_arena_strdup(&c->a, node_doc_str(m, "uid"));
    c->ns = dra_arena_strdup(&c->a, node_doc_str(m, "namespace"));
    c->name = dra_arena_strdup(&c->a, node_doc_str(m, "name"));
    c->drivers = strs_from(&c->a, dra_doc_get(m, "drivers"), &c->n_drivers);
    if (devs && devs->kind == DRA_DOC_LIST && devs->u.list.n)
        c->devs = dra_arena_array(&c->a, devs->u.list.n, sizeof *c->devs);
    for (size_t i = 0; c->devs && i < devs->u.list.n; i++) {
        const dra_doc *d = devs->u.list.items[i];
        c->devs[i].requests = strs_from(&c->a, dra_doc_get(d, "requests"), &c->devs[i].n_requests);
        c->devs[i].cdi_ids = strs_from(&c->a, dra_doc_get(d, "cdiDeviceIDs"), &c->devs[i].n_cdi_ids);
        c->n_devs++;
    }
    for (size_t i = 0; pods && pods->kind == DRA_DOC_LIST && i < pods->u.list.n; i++)
        if (pods->u.list.items[i]->kind == DRA_DOC_STRING && add_pod(n, c, pods->u.list.items[i]->u.str.s))
            break;
    if (!c->uid || !c->ns || !c->name) {
        claim_free(n, c);
        return NULL;
    }
    return c;
}

dra_err node_claims_load(dra_node *n)
{
    dra_arena a;
    char *text;
    size_t len;
    const dra_doc *root, *list;
    dra_map_init(&n->claims, n->mem);
    dra_arena_init(&a, n->mem);
    if (node_read_file(&a, n->claims_path, 64u << 20, &text, &len) != 0) {
        dra_arena_fini(&a);
        return errno == ENOENT ? DRA_OK : DRA_EIO;
    }
    root = node_parse(&a, text, len);
    list = dra_doc_get(root, "claims");
    for (size_t i = 0; list && list->kind == DRA_DOC_LIST && i < list->u.list.n; i++) {
        node_claim *c = claim_from_doc(n, list->u.list.items[i]);
        if (c && dra_map_put(&n->claims, c->uid, strlen(c->uid), c) != DRA_OK)
            claim_free(n, c);
    }
    dra_arena_fini(&a);
    return DRA_OK;
}

/* ---- resolving a pod's claims ------------------------------------------- */

/* The claim name for pod claim |pc| (kubelet's resourceclaim.Name):
 * NULL with |*skip| set when the pod needs no claim for it. */
static const char *claim_name(const dra_doc *pod, const dra_doc *pc, int *skip, char *msg, size_t size)
{
    const char *n = node_doc_str(pc, "resourceClaimName");
    const char *pname = node_doc_str(pc, "name");
    const dra_doc *st = dra_doc_at(pod, "status.resourceClaimStatuses");
    *skip = 0;
    if (n)
        return n;
    if (!node_doc_str(pc, "resourceClaimTemplateName")) {
        node_errf(msg, size, "pod claim %s: neither resourceClaimName nor resourceClaimTemplateName is set",
                 pname ? pname : "");
        return NULL;
    }
    for (size_t i = 0; st && st->kind == DRA_DOC_LIST && i < st->u.list.n; i++) {
        const dra_doc *e = st->u.list.items[i];
        const char *en = node_doc_str(e, "name");
        if (en && pname && strcmp(en, pname) == 0) {
            if (!(n = node_doc_str(e, "resourceClaimName")))
                *skip = 1; /* the controller decided no claim is needed */
            return n;
        }
    }
    node_errf(msg, size, "waiting for the ResourceClaim of pod claim %s to be created", pname ? pname : "");
    return NULL;
}

static int list_has_uid(const dra_doc *l, const char *key, const char *uid)
{
    for (size_t i = 0; l && l->kind == DRA_DOC_LIST && i < l->u.list.n; i++) {
        const char *u = node_doc_str(l->u.list.items[i], key);
        if (u && strcmp(u, uid) == 0)
            return 1;
    }
    return 0;
}

/* Created for this pod: its controller owner is the pod. */
static int owned_by(const dra_doc *claim, const char *pod_uid)
{
    const dra_doc *refs = dra_doc_at(claim, "metadata.ownerReferences");
    for (size_t i = 0; refs && refs->kind == DRA_DOC_LIST && i < refs->u.list.n; i++) {
        const dra_doc *r = refs->u.list.items[i], *ctl = dra_doc_get(r, "controller");
        const char *u = node_doc_str(r, "uid");
        if (ctl && ctl->kind == DRA_DOC_BOOL && ctl->u.b && u && strcmp(u, pod_uid) == 0)
            return 1;
    }
    return 0;
}

/* A claim of the pod as the API server has it, checked. */
typedef struct want {
    const char *pod_claim, *name, *uid;
    const char *drivers[16];
    size_t n_drivers;
} want;

static dra_err check_claim(dra_node *n, const dra_doc *pod, const dra_doc *pc, dra_arena *a, want *w,
                           int *skip, char *msg, size_t size)
{
    const char *ns = dra_obj_namespace(pod), *pod_uid = dra_obj_uid(pod), *pod_name = dra_obj_name(pod);
    const dra_doc *claim = NULL, *results;
    dra_kstatus st;
    dra_err e;
    memset(w, 0, sizeof *w);
    w->pod_claim = node_doc_str(pc, "name");
    if (!(w->name = claim_name(pod, pc, skip, msg, size)))
        return *skip ? DRA_OK : DRA_ENOTFOUND;
    memset(&st, 0, sizeof st);
    if ((e = dra_cluster_get(n->c, &DRA_GVR_CLAIMS, ns, w->name, a, (dra_doc **)&claim, &st)) != DRA_OK) {
        node_errf(msg, size, "fetch ResourceClaim %s referenced by pod %s: %s", w->name, pod_name,
                 st.message[0] ? st.message : dra_strerror(e));
        return e;
    }
    w->uid = dra_obj_uid(claim);
    if (node_doc_str(pc, "resourceClaimTemplateName") && !owned_by(claim, pod_uid))
        return node_errf(msg, size, "ResourceClaim %s was not created for pod %s/%s (pod is not owner)", w->name, ns,
                        pod_name),
               DRA_EINVAL;
    if (!list_has_uid(dra_doc_at(claim, "status.reservedFor"), "uid", pod_uid))
        return node_errf(msg, size, "pod %s(%s) is not allowed to use ResourceClaim %s", pod_name, pod_uid, w->name),
               DRA_EINVAL;
    if (!(results = dra_doc_at(claim, "status.allocation.devices.results")) || results->kind != DRA_DOC_LIST)
        return node_errf(msg, size, "ResourceClaim %s is not allocated", w->name), DRA_EINVAL;
    for (size_t i = 0; i < results->u.list.n; i++) {
        const char *drv = node_doc_str(results->u.list.items[i], "driver");
        size_t j = 0;
        while (drv && j < w->n_drivers && strcmp(w->drivers[j], drv) != 0)
            j++;
        if (drv && j == w->n_drivers && w->n_drivers < 16)
            w->drivers[w->n_drivers++] = drv;
    }
    return DRA_OK;
}

/* ---- calling the plugins ----------------------------------------------- */

static char **strs_copy(dra_arena *a, const char *const *v, size_t cnt)
{
    char **o = cnt ? dra_arena_array(a, cnt, sizeof *o) : NULL;
    for (size_t i = 0; o && i < cnt; i++)
        o[i] = dra_arena_strdup(a, v[i]);
    return o;
}

/* Adds what the plugin returned for |c| to it. */
static dra_err take_devices(node_claim *c, const dra_plugin_claim_result *r)
{
    node_dev *v = dra_arena_array(&c->a, c->n_devs + r->n_devices + 1, sizeof *v);
    if (!v)
        return DRA_ENOMEM;
    if (c->n_devs)
        memcpy(v, c->devs, c->n_devs * sizeof *v);
    for (size_t i = 0; i < r->n_devices; i++) {
        const dra_plugin_device *d = &r->devices[i];
        v[c->n_devs].requests = strs_copy(&c->a, d->request_names, d->n_request_names);
        v[c->n_devs].n_requests = d->n_request_names;
        v[c->n_devs].cdi_ids = strs_copy(&c->a, d->cdi_device_ids, d->n_cdi_device_ids);
        v[c->n_devs].n_cdi_ids = d->n_cdi_device_ids;
        c->n_devs++;
    }
    c->devs = v;
    return DRA_OK;
}

/* NodePrepareResources (or Unprepare) for the claims |cs| with |driver|. */
static dra_err call_driver(dra_node *n, const char *driver, node_claim **cs, size_t cnt, int prepare,
                           char *msg, size_t size)
{
    node_plugin *p = node_plugin_get(n, driver);
    dra_plugin_claim_ref refs[64];
    dra_plugin_claim_result *res = NULL;
    dra_plugin_rpc_status rs;
    size_t nres = 0;
    dra_arena a;
    dra_err e;
    if (!p)
        return node_errf(msg, size, "DRA driver %s is not registered", driver), DRA_EUNAVAILABLE;
    if (cnt > 64)
        cnt = 64;
    for (size_t i = 0; i < cnt; i++)
        refs[i] = (dra_plugin_claim_ref){cs[i]->ns, cs[i]->uid, cs[i]->name};
    dra_arena_init(&a, n->mem);
    memset(&rs, 0, sizeof rs);
    e = prepare ? dra_plugin_client_prepare(p->client, p->service, refs, cnt, (int)n->o.prepare_timeout_ms, &a,
                                            &res, &nres, &rs)
                : dra_plugin_client_unprepare(p->client, p->service, refs, cnt, (int)n->o.prepare_timeout_ms, &a,
                                              &res, &nres, &rs);
    node_plugin_put(n, p);
    if (e) {
        node_errf(msg, size, "%s for driver %s: %s", prepare ? "NodePrepareResources" : "NodeUnprepareResources",
                 driver, rs.message[0] ? rs.message : dra_strerror(e));
        dra_arena_fini(&a);
        return e;
    }
    for (size_t i = 0; i < cnt && !e; i++) {
        const dra_plugin_claim_result *r = NULL;
        for (size_t j = 0; j < nres && !r; j++)
            if (res[j].uid && strcmp(res[j].uid, cs[i]->uid) == 0)
                r = &res[j];
        if (!r)
            node_errf(msg, size, "%s for ResourceClaim %s: plugin returned no result for this claim",
                     prepare ? "NodePrepareResources" : "NodeUnprepareResources", cs[i]->name),
                e = DRA_EIO;
        else if (r->error && r->error[0])
            node_errf(msg, size, "%s failed for ResourceClaim %s: %s",
                     prepare ? "NodePrepareResources" : "NodeUnprepareResources", cs[i]->name, r->error),
                e = DRA_EIO;
        else if (prepare)
            e = take_devices(cs[i], r);
    }
    dra_arena_fini(&a);
    return e;
}

static node_claim *claim_new(dra_node *n, const dra_doc *pod, const want *w)
{
    node_claim *c = dra_calloc(n->mem, 1, sizeof *c);
    if (!c)
        return NULL;
    dra_arena_init(&c->a, n->mem);
    c->uid = dra_arena_strdup(&c->a, w->uid);
    c->ns = dra_arena_strdup(&c->a, dra_obj_namespace(pod));
    c->name = dra_arena_strdup(&c->a, w->name);
    c->drivers = strs_copy(&c->a, w->drivers, w->n_drivers);
    c->n_drivers = w->n_drivers;
    if (!c->uid || !c->ns || !c->name || (w->n_drivers && !c->drivers)) {
        claim_free(n, c);
        return NULL;
    }
    return c;
}

/* Records every claim of |ws| (so a later release unprepares it even
 * when preparing fails half way), then prepares those not prepared yet,
 * one call per driver. Called with prep_mu held. */
static dra_err prepare_new(dra_node *n, const dra_doc *pod, want *ws, size_t nw, char *msg, size_t size)
{
    node_claim *fresh[64];
    size_t nf = 0;
    dra_err e = DRA_OK;
    for (size_t i = 0; i < nw && nf < 64 && !e; i++) {
        node_claim *c;
        pthread_mutex_lock(&n->mu);
        if (!(c = dra_map_get(&n->claims, ws[i].uid, strlen(ws[i].uid)))) {
            if (!(c = claim_new(n, pod, &ws[i])) || dra_map_put(&n->claims, c->uid, strlen(c->uid), c)) {
                claim_free(n, c);
                c = NULL;
                e = DRA_ENOMEM;
            }
        }
        if (c && !e && add_pod(n, c, dra_obj_uid(pod)))
            e = DRA_ENOMEM;
        if (c && !c->prepared) {
            c->n_devs = 0;
            fresh[nf++] = c;
        }
        pthread_mutex_unlock(&n->mu);
    }
    /* For each driver (the first claim naming it), the claims using it. */
    for (size_t i = 0; i < nf && !e; i++)
        for (size_t d = 0; d < fresh[i]->n_drivers && !e; d++) {
            node_claim *batch[64];
            size_t nb = 0;
            int first = 1;
            for (size_t k = 0; k < i && first; k++)
                for (size_t m = 0; m < fresh[k]->n_drivers; m++)
                    first &= strcmp(fresh[k]->drivers[m], fresh[i]->drivers[d]) != 0;
            if (!first)
                continue;
            for (size_t k = i; k < nf; k++)
                for (size_t m = 0; m < fresh[k]->n_drivers; m++)
                    if (strcmp(fresh[k]->drivers[m], fresh[i]->drivers[d]) == 0)
                        batch[nb++] = fresh[k];
            e = call_driver(n, fresh[i]->drivers[d], batch, nb, 1, msg, size);
        }
    pthread_mutex_lock(&n->mu);
    for (size_t i = 0; i < nf && !e; i++)
        fresh[i]->prepared = 1;
    claims_save(n);
    pthread_mutex_unlock(&n->mu);
    return e;
}

dra_err node_claims_prepare(dra_node *n, const dra_doc *pod, dra_arena *a, pod_claim_ref **refs,
                            size_t *n_refs, char *msg, size_t size)
{
    const dra_doc *pcs = dra_doc_at(pod, "spec.resourceClaims");
    size_t cnt = pcs && pcs->kind == DRA_DOC_LIST ? pcs->u.list.n : 0, nw = 0;
    want *ws = cnt ? dra_arena_array(a, cnt, sizeof *ws) : NULL;
    pod_claim_ref *out = cnt ? dra_arena_array(a, cnt, sizeof *out) : NULL;
    dra_err e = DRA_OK;
    *refs = NULL;
    *n_refs = 0;
    if (cnt && (!ws || !out))
        return DRA_ENOMEM;
    for (size_t i = 0; i < cnt; i++) {
        int skip = 0;
        if ((e = check_claim(n, pod, pcs->u.list.items[i], a, &ws[nw], &skip, msg, size)) != DRA_OK)
            return e;
        if (!skip)
            nw++;
    }
    pthread_mutex_lock(&n->prep_mu);
    e = prepare_new(n, pod, ws, nw, msg, size);
    pthread_mutex_unlock(&n->prep_mu);
    for (size_t i = 0; i < nw && !e; i++) {
        out[i] = (pod_claim_ref){dra_arena_strdup(a, ws[i].pod_claim), dra_arena_strdup(a, ws[i].uid),
                                 dra_arena_strdup(a, ws[i].name)};
        if (!out[i].pod_claim || !out[i].uid || !out[i].name)
            e = DRA_ENOMEM;
    }
    if (!e) {
        *refs = out;
        *n_refs = nw;
    }
    return e;
}

/* ---- releasing ------------------------------------------------------------- */

/* Unprepares |c| with every driver. Called with prep_mu held. */
static dra_err unprepare(dra_node *n, node_claim *c, char *msg, size_t size)
{
    for (size_t d = 0; d < c->n_drivers; d++) {
        dra_err e = call_driver(n, c->drivers[d], &c, 1, 0, msg, size);
        if (e)
            return e;
    }
    return DRA_OK;
}

/* Removes the claims that no pod uses, unpreparing them first. */
static dra_err drop_unused(dra_node *n, char *msg, size_t size)
{
    dra_err first = DRA_OK;
    for (;;) {
        node_claim *c = NULL;
        dra_err e;
        pthread_mutex_lock(&n->mu);
        for (size_t i = 0; i < n->claims.n && !c; i++) {
            node_claim *k = n->claims.entries[i].val;
            if (n->claims.entries[i].key && k->n_pods == 0)
                c = k;
        }
        pthread_mutex_unlock(&n->mu);
        if (!c)
            return first;
        if ((e = unprepare(n, c, msg, size)) != DRA_OK)
            return e;
        pthread_mutex_lock(&n->mu);
        dra_map_del(&n->claims, c->uid, strlen(c->uid));
        claims_save(n);
        pthread_mutex_unlock(&n->mu);
        claim_free(n, c);
    }
}

dra_err node_claims_release(dra_node *n, const char *pod_uid, char *msg, size_t size)
{
    dra_err e;
    int changed = 0;
    pthread_mutex_lock(&n->prep_mu);
    pthread_mutex_lock(&n->mu);
    for (size_t i = 0; i < n->claims.n; i++) {
        node_claim *c = n->claims.entries[i].val;
        if (!n->claims.entries[i].key)
            continue;
        for (size_t j = 0; j < c->n_pods; j++)
            if (strcmp(c->pods[j], pod_uid) == 0) {
                dra_free(n->mem, c->pods[j]);
                c->pods[j] = c->pods[--c->n_pods];
                changed = 1;
                break;
            }
    }
    if (changed)
        claims_save(n);
    pthread_mutex_unlock(&n->mu);
    e = drop_unused(n, msg, size);
    pthread_mutex_unlock(&n->prep_mu);
    return e;
}

void node_claims_gc(dra_node *n)
{
    char msg[512];
    pthread_mutex_lock(&n->prep_mu);
    (void)drop_unused(n, msg, sizeof msg);
    pthread_mutex_unlock(&n->prep_mu);
}

dra_err node_claims_cdi(dra_node *n, const char *claim_uid, const char *request, dra_arena *a,
                        const char ***ids, size_t *n_ids)
{
    node_claim *c;
    size_t cnt = 0, k = 0;
    const char **v;
    *ids = NULL;
    *n_ids = 0;
    pthread_mutex_lock(&n->mu);
    if (!(c = dra_map_get(&n->claims, claim_uid, strlen(claim_uid)))) {
        pthread_mutex_unlock(&n->mu);
        return DRA_ENOTFOUND;
    }
    for (size_t i = 0; i < c->n_devs; i++)
        cnt += c->devs[i].n_cdi_ids;
    v = cnt ? dra_arena_array(a, cnt, sizeof *v) : NULL;
    for (size_t i = 0; v && i < c->n_devs; i++) {
        const node_dev *d = &c->devs[i];
        int match = !request || d->n_requests == 0;
        for (size_t j = 0; !match && j < d->n_requests; j++)
            match = strcmp(d->requests[j], request) == 0;
        for (size_t j = 0; match && j < d->n_cdi_ids; j++)
            v[k++] = dra_arena_strdup(a, d->cdi_ids[j]);
    }
    pthread_mutex_unlock(&n->mu);
    if (cnt && !v)
        return DRA_ENOMEM;
    *ids = v;
    *n_ids = k;
    return DRA_OK;
}
