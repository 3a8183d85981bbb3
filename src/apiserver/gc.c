/*
 * gc.c: the controllers kube-controller-manager would run for the objects
 * drad stores, as passes inside the server: the garbage collector
 * (dependents whose owners are all gone are deleted; the orphan and
 * foregroundDeletion finalizers are carried out) and the namespace
 * controller (a Terminating namespace's contents are deleted, then the
 * namespace). Each pass reads the store's memory; writes go through the
 * same delete and update paths as requests.
 */
#include <stdio.h>
#include <string.h>

#include "apiserver_int.h"

/* Every storage row, once. */
static size_t storage_rows(const api_resource **out, size_t cap)
{
    size_t n, k = 0;
    const api_resource *t = api_resources(&n);
    for (size_t i = 0; i < n && k < cap; i++)
        if (t[i].preferred)
            out[k++] = &t[i];
    return k;
}

static int has(const dra_store_obj *o, const char *needle)
{
    return strstr(o->json, needle) != NULL;
}

/* ---- owners -------------------------------------------------------------------- */

/* 1 when the owner named by |ref| exists with that uid (or cannot be
 * resolved: a kind drad does not serve is left alone). */
static int owner_exists(dra_apiserver *srv, const dra_doc *ref, const char *dep_ns)
{
    const api_resource *res = api_resource_by_kind(api_doc_str(ref, "apiVersion"),
                                                   api_doc_str(ref, "kind"));
    const char *name = api_doc_str(ref, "name"), *uid = api_doc_str(ref, "uid");
    char key[96], pat[128];
    dra_store_obj *o;
    int ok;
    if (!res || !name || !uid)
        return 1;
    api_store_key(res, key, sizeof key);
    if (dra_store_get(srv->store, key, res->namespaced ? dep_ns : "", name, &o))
        return 0;
    snprintf(pat, sizeof pat, "\"uid\":\"%s\"", uid);
    ok = has(o, pat);
    dra_store_obj_unref(o);
    return ok;
}

static dra_doc *owner_refs(const dra_doc *obj)
{
    dra_doc *l = api_doc_at(api_meta(obj), "ownerReferences");
    return l && l->kind == DRA_DOC_LIST && l->u.list.n ? l : NULL;
}

/* 1 when |obj| has owner references, is not being deleted, and none of
 * its owners exists. */
static int owners_gone(dra_apiserver *srv, const dra_doc *obj)
{
    const dra_doc *refs = owner_refs(obj);
    const char *ns = api_meta_str(obj, "namespace");
    if (!refs || api_meta_str(obj, "deletionTimestamp"))
        return 0;
    for (size_t i = 0; i < refs->u.list.n; i++)
        if (owner_exists(srv, refs->u.list.items[i], ns ? ns : ""))
            return 0;
    return 1;
}

/* A dependent whose owners are all gone is deleted in the background.
 * |o| comes from a listing taken before finish_owner ran on the objects
 * before it: an owner of the same resource that was deleted with
 * propagationPolicy Orphan has stripped its reference since, so the
 * decision is made again on the stored copy. */
static void collect_orphans(dra_apiserver *srv, const api_resource *res,
                            const dra_store_obj *o, dra_arena *a)
{
    dra_doc *obj;
    dra_store_obj *cur;
    const char *ns, *name;
    char key[96];
    int gone;
    if (!has(o, "\"ownerReferences\"") || api_doc_parse(a, o->json, o->len, &obj) ||
        !owners_gone(srv, obj))
        return;
    ns = api_meta_str(obj, "namespace");
    name = api_meta_str(obj, "name");
    api_store_key(res, key, sizeof key);
    if (!name || dra_store_get(srv->store, key, ns ? ns : "", name, &cur))
        return;
    gone = !api_doc_parse(a, cur->json, cur->len, &obj) && owners_gone(srv, obj);
    dra_store_obj_unref(cur);
    if (gone)
        api_delete_internal(srv, res, ns, name, api_meta_str(obj, "uid"), "Background");
}

/* ---- dependents of one owner ------------------------------------------------------ */

typedef struct owner {
    const char *uid;
    const api_resource *res;
    const char *ns, *name;
    int blocking; /* dependents with blockOwnerDeletion still present */
    int any;
} owner;

static int refers(const dra_doc *ref, const char *uid)
{
    const char *u = api_doc_str(ref, "uid");
    return u && !strcmp(u, uid);
}

/* Removes the ownerReferences entry for the owner's uid. */
static int strip_ref(void *ud, dra_arena *a, dra_doc *obj)
{
    const owner *ow = ud;
    dra_doc *refs = owner_refs(obj);
    size_t j = 0;
    (void)a;
    if (!refs)
        return 1;
    for (size_t i = 0; i < refs->u.list.n; i++)
        if (!refers(refs->u.list.items[i], ow->uid))
            refs->u.list.items[j++] = refs->u.list.items[i];
    if (j == refs->u.list.n)
        return 1;
    refs->u.list.n = j;
    if (!j)
        api_doc_del(api_meta(obj), "ownerReferences");
    return 0;
}

/* Visits the dependents of |ow| with |orphan| (strip the reference) or
 * foreground deletion, counting those that still block. */
static void visit_dependents(dra_apiserver *srv, owner *ow, int orphan, dra_arena *a)
{
    const api_resource *rows[16];
    size_t nr = storage_rows(rows, 16);
    char pat[96];
    snprintf(pat, sizeof pat, "\"uid\":\"%s\"", ow->uid);
    for (size_t k = 0; k < nr; k++) {
        dra_store_page pg;
        char key[96];
        api_store_key(rows[k], key, sizeof key);
        if (dra_store_list(srv->store, key, NULL, NULL, NULL, 0, &pg, NULL))
            continue;
        for (size_t i = 0; i < pg.n; i++) {
            const dra_store_obj *o = pg.items[i].obj;
            dra_doc *obj, *refs;
            int block = 0, found = 0;
            if (!has(o, "\"ownerReferences\"") || !has(o, pat) ||
                api_doc_parse(a, o->json, o->len, &obj) || !(refs = owner_refs(obj)))
                continue;
            for (size_t j = 0; j < refs->u.list.n; j++) {
                const dra_doc *r = refs->u.list.items[j], *b;
                if (!refers(r, ow->uid))
                    continue;
                found = 1;
                b = api_doc_at(r, "blockOwnerDeletion");
                block = b && b->kind == DRA_DOC_BOOL && b->u.b;
            }
            if (!found)
                continue;
            ow->any = 1;
            if (orphan) {
                api_mutate_internal(srv, rows[k], pg.items[i].ns, pg.items[i].name,
                                    strip_ref, ow);
                continue;
            }
            ow->blocking += block;
            if (!api_meta_str(obj, "deletionTimestamp"))
                api_delete_internal(srv, rows[k], pg.items[i].ns, pg.items[i].name,
                                    NULL, "Foreground");
        }
        dra_store_page_fini(&pg);
        dra_arena_reset(a);
    }
}

static int drop_fin(void *ud, dra_arena *a, dra_doc *obj)
{
    (void)a;
    return api_drop_finalizer(obj, ud) ? 0 : 1;
}

/* An owner marked with orphan or foregroundDeletion. */
static void finish_owner(dra_apiserver *srv, const api_resource *res,
                         const dra_store_obj *o, dra_arena *a)
{
    dra_doc *obj;
    owner ow;
    int orphan, fg;
    if (!has(o, "\"deletionTimestamp\"") ||
        (!has(o, "\"orphan\"") && !has(o, "\"foregroundDeletion\"")) ||
        api_doc_parse(a, o->json, o->len, &obj))
        return;
    orphan = api_has_finalizer(obj, "orphan");
    fg = api_has_finalizer(obj, "foregroundDeletion");
    memset(&ow, 0, sizeof ow);
    ow.uid = dra_arena_strdup(a, api_meta_str(obj, "uid") ? api_meta_str(obj, "uid") : "");
    ow.res = res;
    ow.ns = dra_arena_strdup(a, api_meta_str(obj, "namespace") ? api_meta_str(obj, "namespace") : "");
    ow.name = dra_arena_strdup(a, api_meta_str(obj, "name"));
    if (!ow.uid || !ow.ns || !ow.name || !*ow.uid)
        return;
    if (orphan) {
        dra_arena sub;
        dra_arena_init(&sub, srv->mem);
        visit_dependents(srv, &ow, 1, &sub);
        dra_arena_fini(&sub);
        api_mutate_internal(srv, res, ow.ns, ow.name, drop_fin, (void *)"orphan");
    } else if (fg) {
        dra_arena sub;
        dra_arena_init(&sub, srv->mem);
        visit_dependents(srv, &ow, 0, &sub);
        dra_arena_fini(&sub);
        /* Dependents that block stay until they are gone; once none is
         * left the owner's finalizer goes, and with it the owner. */
        if (!ow.blocking)
            api_mutate_internal(srv, res, ow.ns, ow.name, drop_fin,
                                (void *)"foregroundDeletion");
    }
}

/* ---- namespaces --------------------------------------------------------------------- */

static int finalize_ns(void *ud, dra_arena *a, dra_doc *obj)
{
    dra_doc *spec = api_doc_at(obj, "spec"), *f;
    size_t j = 0;
    (void)ud;
    (void)a;
    f = api_doc_at(spec, "finalizers");
    if (!f || f->kind != DRA_DOC_LIST)
        return 1;
    for (size_t i = 0; i < f->u.list.n; i++) {
        const dra_doc *s = f->u.list.items[i];
        if (s->kind == DRA_DOC_STRING && !strcmp(s->u.str.s, "kubernetes"))
            continue;
        f->u.list.items[j++] = f->u.list.items[i];
    }
    if (j == f->u.list.n)
        return 1;
    f->u.list.n = j;
    return 0;
}

/* Deletes what is left in namespace |ns|; 1 when it is empty. */
static int empty_namespace(dra_apiserver *srv, const char *ns)
{
    const api_resource *rows[16];
    size_t nr = storage_rows(rows, 16);
    int left = 0;
    for (size_t k = 0; k < nr; k++) {
        dra_store_page pg;
        char key[96];
        if (!rows[k]->namespaced)
            continue;
        api_store_key(rows[k], key, sizeof key);
        if (dra_store_list(srv->store, key, ns, NULL, NULL, 0, &pg, NULL)) {
            left++;
            continue;
        }
        left += (int)pg.n;
        for (size_t i = 0; i < pg.n; i++)
            if (!has(pg.items[i].obj, "\"deletionTimestamp\""))
                api_delete_internal(srv, rows[k], ns, pg.items[i].name, NULL,
                                    "Background");
        dra_store_page_fini(&pg);
    }
    return !left;
}

static void namespaces_pass(dra_apiserver *srv)
{
    dra_store_page pg;
    const api_resource *nsres = api_resource_find("", "v1", "namespaces");
    if (dra_store_list(srv->store, "namespaces", NULL, NULL, NULL, 0, &pg, NULL))
        return;
    for (size_t i = 0; i < pg.n; i++) {
        if (!has(pg.items[i].obj, "\"deletionTimestamp\""))
            continue;
        if (empty_namespace(srv, pg.items[i].name))
            api_mutate_internal(srv, nsres, "", pg.items[i].name, finalize_ns, NULL);
    }
    dra_store_page_fini(&pg);
}

void api_gc_pass(dra_apiserver *srv)
{
    const api_resource *rows[16];
    size_t nr = storage_rows(rows, 16);
    dra_arena a;
    namespaces_pass(srv);
    dra_arena_init(&a, srv->mem);
    for (size_t k = 0; k < nr; k++) {
        dra_store_page pg;
        char key[96];
        api_store_key(rows[k], key, sizeof key);
        if (dra_store_list(srv->store, key, NULL, NULL, NULL, 0, &pg, NULL))
            continue;
        for (size_t i = 0; i < pg.n; i++) {
            finish_owner(srv, rows[k], pg.items[i].obj, &a);
            collect_orphans(srv, rows[k], pg.items[i].obj, &a);
            dra_arena_reset(&a);
        }
        dra_store_page_fini(&pg);
    }
    dra_arena_fini(&a);
}

void api_gc_kick(dra_apiserver *srv)
{
    pthread_mutex_lock(&srv->bglock);
    srv->bg_kick = 1;
    pthread_cond_signal(&srv->bgcv);
    pthread_mutex_unlock(&srv->bglock);
}
