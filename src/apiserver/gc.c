/*
 * gc.c: the controllers kube-controller-manager would run for the objects
 * drad stores, inside the server: the garbage collector (dependents whose
 * owners are all gone are deleted; the orphan and foregroundDeletion
 * finalizers are carried out) and the namespace controller (a Terminating
 * namespace's contents are deleted, then the namespace).
 *
 * Incremental: the collector follows a store watch per resource and
 * keeps an owner index (owner -> dependents, built from each object's
 * ownerReferences as it is written), so a write costs a substring check
 * and a delete looks at its own dependents only. Each round (on the
 * background thread, woken by the watches) turns the events into work:
 * dependents to check, owners to finish, namespaces to empty; the work
 * then reads the current objects and writes through the same delete and
 * update paths as requests, so an index entry that is out of date only
 * costs a check. Everything here runs on the background thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver_int.h"

#define GC_ROWS 16
#define GC_POLL 128

/* An owner reference, resolved to the owner's key when drad serves its
 * kind (key NULL otherwise: such an owner is never collected). */
typedef struct gc_ref {
    char *key; /* "<row>/<ns>/<name>" of the owner */
    char *uid;
    int block;
} gc_ref;

/* An object with owner references. */
typedef struct gc_dep {
    char *key;
    char *raw; /* the ownerReferences JSON it was made from */
    size_t rawlen, n;
    gc_ref *refs;
} gc_dep;

/* The dependents of one owner key. */
typedef struct gc_owner {
    gc_dep **v;
    size_t n, cap;
} gc_owner;

struct api_gc {
    dra_apiserver *srv;
    const api_resource *rows[GC_ROWS];
    char keys[GC_ROWS][96];
    size_t nrows;
    int ns_row; /* the namespaces row */
    dra_store_watch *w[GC_ROWS];
    int ready; /* watches open and the first scan done */
    int retry; /* some work failed: rescan at the next period */

    dra_map deps;   /* key -> gc_dep */
    dra_map owners; /* owner key -> gc_owner */
    dra_map fin;    /* owner keys marked orphan/foregroundDeletion -> "" */
    dra_map term;   /* Terminating namespaces -> "" */
    /* This round's work, de-duplicated (keys owned by the maps). */
    dra_map q_dep, q_owner, q_ns;
};

/* ---- keys and small helpers -------------------------------------------------- */

static int has(const dra_store_obj *o, const char *needle)
{
    return strstr(o->json, needle) != NULL;
}

static char *key_make(const dra_mem *mem, int row, const char *ns, const char *name)
{
    size_t a = strlen(ns), b = strlen(name);
    char *k = dra_malloc(mem, a + b + 8);
    if (k)
        snprintf(k, a + b + 8, "%d/%s/%s", row, ns, name);
    return k;
}

/* Splits a key back into (row, ns, name); |buf| receives the copy the
 * strings point into. 0 when it is not a key. */
static int key_split(const char *key, char *buf, size_t cap, int *row,
                     const char **ns, const char **name)
{
    char *a, *b;
    if (strlen(key) >= cap)
        return 0;
    strcpy(buf, key);
    a = strchr(buf, '/');
    b = a ? strchr(a + 1, '/') : NULL;
    if (!a || !b)
        return 0;
    *a = *b = '\0';
    *row = atoi(buf);
    *ns = a + 1;
    *name = b + 1;
    return 1;
}

/* Adds a copy of |key| to the set |m| (values unused). */
static void set_add(api_gc *g, dra_map *m, const char *key)
{
    size_t n = strlen(key);
    char *k;
    if (dra_map_get(m, key, n))
        return;
    k = dra_strdup(g->srv->mem, key);
    if (!k || dra_map_put(m, k, n, k)) {
        dra_free(g->srv->mem, k);
        g->retry = 1;
    }
}

static void set_del(api_gc *g, dra_map *m, const char *key)
{
    size_t n = strlen(key);
    char *k = dra_map_get(m, key, n);
    if (k) {
        dra_map_del(m, key, n);
        dra_free(g->srv->mem, k);
    }
}

static void set_clear(api_gc *g, dra_map *m)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->entries[i].key)
            dra_free(g->srv->mem, m->entries[i].val);
    dra_map_fini(m);
    dra_map_init(m, g->srv->mem);
}

static int row_of(api_gc *g, const api_resource *res)
{
    for (size_t i = 0; i < g->nrows; i++)
        if (g->rows[i] == res)
            return (int)i;
    return -1;
}

/* ---- the owner index ---------------------------------------------------------------- */

static void dep_free(api_gc *g, gc_dep *d)
{
    const dra_mem *mem = g->srv->mem;
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++) {
        dra_free(mem, d->refs[i].key);
        dra_free(mem, d->refs[i].uid);
    }
    dra_free(mem, d->refs);
    dra_free(mem, d->raw);
    dra_free(mem, d->key);
    dra_free(mem, d);
}

static void owner_unlink(api_gc *g, const char *okey, gc_dep *d)
{
    gc_owner *o = dra_map_get(&g->owners, okey, strlen(okey));
    if (!o)
        return;
    for (size_t i = 0; i < o->n; i++)
        if (o->v[i] == d) {
            o->v[i] = o->v[--o->n];
            break;
        }
    if (!o->n) {
        dra_map_entry *e = dra_map_find(&g->owners, okey, strlen(okey));
        char *k = (char *)e->key;
        dra_map_del(&g->owners, okey, strlen(okey));
        dra_free(g->srv->mem, k);
        dra_free(g->srv->mem, o->v);
        dra_free(g->srv->mem, o);
    }
}

static dra_err owner_link(api_gc *g, const char *okey, gc_dep *d)
{
    const dra_mem *mem = g->srv->mem;
    gc_owner *o = dra_map_get(&g->owners, okey, strlen(okey));
    if (!o) {
        char *k = dra_strdup(mem, okey);
        o = dra_calloc(mem, 1, sizeof *o);
        if (!k || !o || dra_map_put(&g->owners, k, strlen(k), o)) {
            dra_free(mem, k);
            dra_free(mem, o);
            return DRA_ENOMEM;
        }
    }
    for (size_t i = 0; i < o->n; i++)
        if (o->v[i] == d)
            return DRA_OK;
    if (o->n == o->cap) {
        size_t nc = o->cap ? o->cap * 2 : 4;
        gc_dep **nv = dra_realloc(mem, o->v, nc * sizeof *nv);
        if (!nv)
            return DRA_ENOMEM;
        o->v = nv;
        o->cap = nc;
    }
    o->v[o->n++] = d;
    return DRA_OK;
}

/* Drops |key|'s entry; its owners that are being finished get another
 * look (one of their dependents changed). */
static void dep_drop(api_gc *g, const char *key)
{
    gc_dep *d = dra_map_get(&g->deps, key, strlen(key));
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++) {
        if (!d->refs[i].key)
            continue;
        if (dra_map_get(&g->fin, d->refs[i].key, strlen(d->refs[i].key)))
            set_add(g, &g->q_owner, d->refs[i].key);
        owner_unlink(g, d->refs[i].key, d);
    }
    dra_map_del(&g->deps, key, strlen(key));
    dep_free(g, d);
}

/* The ownerReferences array of a stored object as it appears in the
 * JSON (metadata comes first in every stored object, and no member
 * before metadata.ownerReferences holds an array), or NULL. Only used to
 * see that a new state keeps the references of the last one. */
static const char *raw_refs(const char *json, size_t *len)
{
    const char *p = strstr(json, "\"ownerReferences\":[");
    int depth = 0, in_str = 0;
    if (!p)
        return NULL;
    p += 18;
    for (const char *q = p; *q; q++) {
        if (in_str) {
            if (*q == '\\' && q[1])
                q++;
            else if (*q == '"')
                in_str = 0;
        } else if (*q == '"') {
            in_str = 1;
        } else if (*q == '[' || *q == '{') {
            depth++;
        } else if ((*q == ']' || *q == '}') && --depth == 0) {
            *len = (size_t)(q + 1 - p);
            return p;
        }
    }
    return NULL;
}

/* Resolves the owner references of |obj| (of storage row |row|) into
 * |d|. DRA_OK (d->n may be 0) or DRA_ENOMEM. */
static dra_err dep_refs(api_gc *g, int row, const dra_doc *obj, gc_dep *d)
{
    const dra_mem *mem = g->srv->mem;
    const dra_doc *refs = api_doc_at(api_meta(obj), "ownerReferences");
    const char *ns = g->rows[row]->namespaced ? api_meta_str(obj, "namespace") : "";
    size_t n = refs && refs->kind == DRA_DOC_LIST ? refs->u.list.n : 0;
    if (!n)
        return DRA_OK;
    d->refs = dra_calloc(mem, n, sizeof *d->refs);
    if (!d->refs)
        return DRA_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const dra_doc *r = refs->u.list.items[i], *b;
        const api_resource *res = api_resource_by_kind(api_doc_str(r, "apiVersion"),
                                                       api_doc_str(r, "kind"));
        const char *name = api_doc_str(r, "name"), *uid = api_doc_str(r, "uid");
        int orow = res ? row_of(g, res) : -1;
        gc_ref *ref = &d->refs[d->n++];
        b = api_doc_at(r, "blockOwnerDeletion");
        ref->block = b && b->kind == DRA_DOC_BOOL && b->u.b;
        if (orow < 0 || !name || !uid)
            continue; /* not an owner drad can look up: left alone */
        ref->key = key_make(mem, orow, res->namespaced ? (ns ? ns : "") : "", name);
        ref->uid = dra_strdup(mem, uid);
        if (!ref->key || !ref->uid)
            return DRA_ENOMEM;
    }
    return DRA_OK;
}

/* Records the owner references of (|row|, |key|) as its state |o| has
 * them. A state that keeps the last one's references costs a compare;
 * otherwise the JSON is parsed and the entry replaced, and the
 * dependent is checked (its owners may be gone already). */
static void dep_note(api_gc *g, int row, const char *key, const dra_store_obj *o)
{
    const dra_mem *mem = g->srv->mem;
    gc_dep *old = dra_map_get(&g->deps, key, strlen(key)), *d;
    size_t rl = 0;
    const char *raw = raw_refs(o->json, &rl);
    dra_arena a;
    dra_doc *obj;
    if (old && raw && old->rawlen == rl && !memcmp(old->raw, raw, rl))
        return;
    dep_drop(g, key);
    if (!raw)
        return;
    d = dra_calloc(mem, 1, sizeof *d);
    if (!d) {
        g->retry = 1;
        return;
    }
    dra_arena_init(&a, mem);
    d->key = dra_strdup(mem, key);
    if ((d->raw = dra_malloc(mem, rl + 1))) {
        memcpy(d->raw, raw, rl);
        d->raw[rl] = '\0';
    }
    d->rawlen = rl;
    if (!d->key || !d->raw || api_doc_parse(&a, o->json, o->len, &obj) ||
        obj->kind != DRA_DOC_MAP || dep_refs(g, row, obj, d) ||
        dra_map_put(&g->deps, d->key, strlen(d->key), d)) {
        dra_arena_fini(&a);
        dep_free(g, d);
        g->retry = 1;
        return;
    }
    dra_arena_fini(&a);
    for (size_t i = 0; i < d->n; i++) {
        if (!d->refs[i].key)
            continue;
        if (owner_link(g, d->refs[i].key, d))
            g->retry = 1;
        if (dra_map_get(&g->fin, d->refs[i].key, strlen(d->refs[i].key)))
            set_add(g, &g->q_owner, d->refs[i].key);
    }
    set_add(g, &g->q_dep, key);
}

/* ---- events into work ------------------------------------------------------------------ */

static void ingest(api_gc *g, int row, dra_store_event_type type,
                   const char *ns, const char *name, const dra_store_obj *o)
{
    char *key = key_make(g->srv->mem, row, ns, name);
    int is_ns = row == g->ns_row;
    if (!key) {
        g->retry = 1;
        return;
    }
    if (type == DRA_STORE_DELETED) {
        gc_owner *ow;
        dep_drop(g, key);
        ow = dra_map_get(&g->owners, key, strlen(key));
        /* Its dependents may have lost their last owner. */
        for (size_t i = 0; ow && i < ow->n; i++)
            set_add(g, &g->q_dep, ow->v[i]->key);
        set_del(g, &g->fin, key);
        if (is_ns)
            set_del(g, &g->term, name);
        else if (*ns && dra_map_get(&g->term, ns, strlen(ns)))
            set_add(g, &g->q_ns, ns);
    } else {
        if (dra_map_get(&g->deps, key, strlen(key)) || has(o, "\"ownerReferences\""))
            dep_note(g, row, key, o);
        if (has(o, "\"deletionTimestamp\"")) {
            if (has(o, "\"orphan\"") || has(o, "\"foregroundDeletion\"")) {
                set_add(g, &g->fin, key);
                set_add(g, &g->q_owner, key);
            }
            if (is_ns) {
                set_add(g, &g->term, name);
                set_add(g, &g->q_ns, name);
            }
        }
    }
    dra_free(g->srv->mem, key);
}

/* ---- work: dependents ------------------------------------------------------------------- */

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

/* A dependent whose owners are all gone is deleted in the background;
 * the decision is made on the object as stored now. */
static void check_dep(api_gc *g, const char *key, dra_arena *a)
{
    char buf[600];
    const char *ns, *name;
    int row;
    dra_store_obj *cur;
    dra_doc *obj;
    int gone;
    if (!key_split(key, buf, sizeof buf, &row, &ns, &name) || row < 0 ||
        (size_t)row >= g->nrows ||
        dra_store_get(g->srv->store, g->keys[row], ns, name, &cur))
        return;
    gone = !api_doc_parse(a, cur->json, cur->len, &obj) && owners_gone(g->srv, obj);
    dra_store_obj_unref(cur);
    if (gone && api_delete_internal(g->srv, g->rows[row], ns, name,
                                    api_meta_str(obj, "uid"), "Background") &&
        dra_store_get(g->srv->store, g->keys[row], ns, name, &cur) == DRA_OK) {
        /* Still there and not deleted: try again at the next period. */
        dra_store_obj_unref(cur);
        g->retry = 1;
    }
}

/* ---- work: owners being finished ------------------------------------------------------- */

typedef struct owner {
    const char *uid;
    int blocking; /* dependents with blockOwnerDeletion still present */
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

/* One dependent of |ow| (as stored now): |orphan| strips the reference,
 * otherwise it is deleted in the foreground and counted while it blocks. */
static void visit_dep(api_gc *g, owner *ow, const char *dkey, int orphan, dra_arena *a)
{
    char buf[600];
    const char *ns, *name;
    int row, block = 0, found = 0;
    dra_store_obj *cur;
    dra_doc *obj, *refs;
    if (!key_split(dkey, buf, sizeof buf, &row, &ns, &name) ||
        dra_store_get(g->srv->store, g->keys[row], ns, name, &cur))
        return;
    if (api_doc_parse(a, cur->json, cur->len, &obj) || !(refs = owner_refs(obj))) {
        dra_store_obj_unref(cur);
        return;
    }
    dra_store_obj_unref(cur);
    for (size_t j = 0; j < refs->u.list.n; j++) {
        const dra_doc *r = refs->u.list.items[j], *b;
        if (!refers(r, ow->uid))
            continue;
        found = 1;
        b = api_doc_at(r, "blockOwnerDeletion");
        block = b && b->kind == DRA_DOC_BOOL && b->u.b;
    }
    if (!found)
        return;
    if (orphan) {
        if (api_mutate_internal(g->srv, g->rows[row], ns, name, strip_ref, ow) &&
            !dra_store_get(g->srv->store, g->keys[row], ns, name, &cur)) {
            dra_store_obj_unref(cur);
            g->retry = 1;
        }
        return;
    }
    ow->blocking += block;
    if (!api_meta_str(obj, "deletionTimestamp"))
        api_delete_internal(g->srv, g->rows[row], ns, name, NULL, "Foreground");
}

static int drop_fin(void *ud, dra_arena *a, dra_doc *obj)
{
    (void)a;
    return api_drop_finalizer(obj, ud) ? 0 : 1;
}

/* The dependents' keys of owner |okey| (a copy: visiting them may change
 * the index). NULL with *n 0 when none. */
static char **dep_keys(api_gc *g, const char *okey, size_t *n)
{
    gc_owner *o = dra_map_get(&g->owners, okey, strlen(okey));
    char **v;
    *n = 0;
    if (!o || !o->n || !(v = dra_calloc(g->srv->mem, o->n, sizeof *v)))
        return NULL;
    for (size_t i = 0; i < o->n; i++)
        if ((v[*n] = dra_strdup(g->srv->mem, o->v[i]->key)))
            (*n)++;
    return v;
}

/* An owner marked with orphan or foregroundDeletion: its dependents are
 * orphaned or deleted, then the finalizer goes (foreground: once no
 * blocking dependent is left). */
static void finish_owner(api_gc *g, const char *okey, dra_arena *a)
{
    char buf[600], **deps;
    const char *ns, *name, *uid;
    int row, orphan, fg;
    size_t n;
    dra_store_obj *cur;
    dra_doc *obj;
    owner ow;
    if (!key_split(okey, buf, sizeof buf, &row, &ns, &name) ||
        dra_store_get(g->srv->store, g->keys[row], ns, name, &cur))
        return;
    if (!has(cur, "\"deletionTimestamp\"") || api_doc_parse(a, cur->json, cur->len, &obj)) {
        dra_store_obj_unref(cur);
        return;
    }
    dra_store_obj_unref(cur);
    orphan = api_has_finalizer(obj, "orphan");
    fg = api_has_finalizer(obj, "foregroundDeletion");
    uid = api_meta_str(obj, "uid");
    if ((!orphan && !fg) || !uid || !*uid)
        return;
    memset(&ow, 0, sizeof ow);
    ow.uid = uid;
    deps = dep_keys(g, okey, &n);
    for (size_t i = 0; i < n; i++) {
        dra_arena sub;
        dra_arena_init(&sub, g->srv->mem);
        visit_dep(g, &ow, deps[i], orphan, &sub);
        dra_arena_fini(&sub);
        dra_free(g->srv->mem, deps[i]);
    }
    dra_free(g->srv->mem, deps);
    /* Dependents that block stay until they are gone (their deletion
     * brings the owner back here); once none is left the finalizer
     * goes, and with it the owner. */
    if (orphan)
        api_mutate_internal(g->srv, g->rows[row], ns, name, drop_fin, (void *)"orphan");
    else if (!ow.blocking)
        api_mutate_internal(g->srv, g->rows[row], ns, name, drop_fin,
                            (void *)"foregroundDeletion");
}

/* ---- work: namespaces ------------------------------------------------------------------- */

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
static int empty_namespace(api_gc *g, const char *ns)
{
    int left = 0;
    for (size_t k = 0; k < g->nrows; k++) {
        dra_store_page pg;
        if (!g->rows[k]->namespaced)
            continue;
        if (dra_store_list(g->srv->store, g->keys[k], ns, NULL, NULL, 0, &pg, NULL)) {
            left++;
            continue;
        }
        left += (int)pg.n;
        for (size_t i = 0; i < pg.n; i++) {
            dra_err e;
            if (has(pg.items[i].obj, "\"deletionTimestamp\""))
                continue;
            e = api_delete_internal(g->srv, g->rows[k], ns, pg.items[i].name, NULL,
                                    "Background");
            /* An object that stays unmarked brings no event back here. */
            if (e && e != DRA_ENOTFOUND)
                g->retry = 1;
        }
        dra_store_page_fini(&pg);
    }
    return !left;
}

static void check_ns(api_gc *g, const char *ns)
{
    dra_store_obj *o;
    int deleting;
    if (dra_store_get(g->srv->store, "namespaces", "", ns, &o))
        return;
    deleting = has(o, "\"deletionTimestamp\"");
    dra_store_obj_unref(o);
    if (deleting && empty_namespace(g, ns))
        api_mutate_internal(g->srv, g->rows[g->ns_row], "", ns, finalize_ns, NULL);
}

/* ---- rounds ------------------------------------------------------------------------------ */

static void watches_close(api_gc *g)
{
    for (size_t k = 0; k < g->nrows; k++) {
        dra_store_watch_close(g->w[k]);
        g->w[k] = NULL;
    }
    g->ready = 0;
}

static void index_clear(api_gc *g)
{
    for (size_t i = 0; i < g->deps.n; i++)
        if (g->deps.entries[i].key)
            dep_free(g, g->deps.entries[i].val);
    dra_map_fini(&g->deps);
    dra_map_init(&g->deps, g->srv->mem);
    for (size_t i = 0; i < g->owners.n; i++) {
        gc_owner *o = g->owners.entries[i].val;
        if (!g->owners.entries[i].key)
            continue;
        dra_free(g->srv->mem, (char *)g->owners.entries[i].key);
        dra_free(g->srv->mem, o->v);
        dra_free(g->srv->mem, o);
    }
    dra_map_fini(&g->owners);
    dra_map_init(&g->owners, g->srv->mem);
    set_clear(g, &g->fin);
    set_clear(g, &g->term);
}

static void on_store(void *ud)
{
    api_gc_kick(ud);
}

/* Opens the watches at the current version, then reads every stored
 * object as if it had just been written: the index is rebuilt and
 * everything a full pass would do is queued. Events after that version
 * come through the watches (some twice: harmless). */
static void rescan(api_gc *g)
{
    dra_store *st = g->srv->store;
    uint64_t rv = dra_store_rv(st);
    watches_close(g);
    index_clear(g);
    g->retry = 0;
    for (size_t k = 0; k < g->nrows; k++)
        if (dra_store_watch_open(st, g->keys[k], NULL, rv, on_store, g->srv, &g->w[k])) {
            watches_close(g);
            g->retry = 1;
            return;
        }
    for (size_t k = 0; k < g->nrows; k++) {
        dra_store_page pg;
        if (dra_store_list(st, g->keys[k], NULL, NULL, NULL, 0, &pg, NULL)) {
            g->retry = 1;
            continue;
        }
        for (size_t i = 0; i < pg.n; i++)
            ingest(g, (int)k, DRA_STORE_ADDED, pg.items[i].ns, pg.items[i].name,
                   pg.items[i].obj);
        dra_store_page_fini(&pg);
    }
    g->ready = 1;
}

/* Takes every pending event into work; 0 when a watch fell behind the
 * history (the caller rescans). */
static int drain(api_gc *g)
{
    dra_store_event evs[GC_POLL];
    for (size_t k = 0; k < g->nrows; k++) {
        size_t n;
        do {
            if (dra_store_watch_poll(g->w[k], evs, GC_POLL, &n))
                return 0;
            for (size_t i = 0; i < n; i++) {
                ingest(g, (int)k, evs[i].type, evs[i].ns, evs[i].name, evs[i].obj);
                dra_store_event_fini(&evs[i]);
            }
        } while (n == GC_POLL);
    }
    return 1;
}

/* Runs (and empties) one work set. */
static void run_set(api_gc *g, dra_map *m, void (*fn)(api_gc *, const char *, dra_arena *))
{
    dra_map q = *m;
    dra_arena a;
    dra_map_init(m, g->srv->mem);
    dra_arena_init(&a, g->srv->mem);
    for (size_t i = 0; i < q.n; i++) {
        if (!q.entries[i].key)
            continue;
        fn(g, q.entries[i].val, &a);
        dra_arena_reset(&a);
        dra_free(g->srv->mem, q.entries[i].val);
    }
    dra_arena_fini(&a);
    dra_map_fini(&q);
}

static void ns_fn(api_gc *g, const char *ns, dra_arena *a)
{
    (void)a;
    check_ns(g, ns);
}

dra_err api_gc_new(dra_apiserver *srv, api_gc **out)
{
    size_t n;
    const api_resource *t = api_resources(&n);
    api_gc *g = dra_calloc(srv->mem, 1, sizeof *g);
    *out = NULL;
    if (!g)
        return DRA_ENOMEM;
    g->srv = srv;
    g->ns_row = -1;
    for (size_t i = 0; i < n && g->nrows < GC_ROWS; i++) {
        if (!t[i].preferred)
            continue;
        if (!strcmp(t[i].resource, "namespaces") && !*t[i].group)
            g->ns_row = (int)g->nrows;
        g->rows[g->nrows] = &t[i];
        api_store_key(&t[i], g->keys[g->nrows], sizeof g->keys[0]);
        g->nrows++;
    }
    dra_map_init(&g->deps, srv->mem);
    dra_map_init(&g->owners, srv->mem);
    dra_map_init(&g->fin, srv->mem);
    dra_map_init(&g->term, srv->mem);
    dra_map_init(&g->q_dep, srv->mem);
    dra_map_init(&g->q_owner, srv->mem);
    dra_map_init(&g->q_ns, srv->mem);
    *out = g;
    return DRA_OK;
}

void api_gc_free(api_gc *g)
{
    if (!g)
        return;
    watches_close(g);
    index_clear(g);
    set_clear(g, &g->q_dep);
    set_clear(g, &g->q_owner);
    set_clear(g, &g->q_ns);
    dra_map_fini(&g->deps);
    dra_map_fini(&g->owners);
    dra_map_fini(&g->fin);
    dra_map_fini(&g->term);
    dra_map_fini(&g->q_dep);
    dra_map_fini(&g->q_owner);
    dra_map_fini(&g->q_ns);
    dra_free(g->srv->mem, g);
}

void api_gc_round(api_gc *g, int period)
{
    /* The first round, one after a watch fell behind, and a periodic
     * one after some work failed read everything again. */
    if (!g->ready || (period && g->retry))
        rescan(g);
    else if (!drain(g))
        rescan(g);
    run_set(g, &g->q_ns, ns_fn);
    run_set(g, &g->q_owner, finish_owner);
    run_set(g, &g->q_dep, check_dep);
}

void api_gc_kick(dra_apiserver *srv)
{
    pthread_mutex_lock(&srv->bglock);
    if (!srv->bg_kick) {
        srv->bg_kick = 1;
        pthread_cond_signal(&srv->bgcv);
    }
    pthread_mutex_unlock(&srv->bglock);
}
