/*
 * writes.c: the documents the scheduler and the claim controller send:
 * a claim with its allocation and reservation (PUT status), the same
 * change redone on a fresh copy after a conflict and undone after a
 * failed bind, claims made from templates and for extended resources,
 * pod status patches. Pure functions over dra_doc trees in an arena.
 */
#include <string.h>
#include <time.h>

#include "sched_int.h"

static dra_doc *sdoc(dra_arena *ar, const char *s)
{
    return dra_doc_new_string(ar, s ? s : "", s ? strlen(s) : 0);
}

char *sched_doc_json(dra_arena *ar, const dra_doc *doc)
{
    dra_buf b;
    char *r = NULL;
    dra_buf_init(&b, ar->mem);
    if (dra_doc_to_json(doc, 0, &b) == DRA_OK && b.p)
        r = dra_arena_strndup(ar, b.p, b.len);
    dra_buf_fini(&b);
    return r;
}

const char *sched_rfc3339(dra_arena *ar, int64_t unix_s)
{
    time_t t = (time_t)unix_s;
    struct tm tm;
    char buf[32];
    if (!gmtime_r(&t, &tm) || !strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm))
        return NULL;
    return dra_arena_strdup(ar, buf);
}

const char *sched_generate_name(dra_arena *ar, const char *pod, const char *pc)
{
    size_t lp = strlen(pod), lc = strlen(pc), n = lp + lc + 2;
    if (n <= 57)
        return dra_arena_sprintf(ar, "%s-%s-", pod, pc);
    /* Both parts cut in proportion to their length, as the controller
     * does, so a long pod name does not swallow the claim name. */
    return dra_arena_sprintf(ar, "%.*s-%.*s", (int)(lp * 57 / n), pod, (int)(lc * 57 / n), pc);
}

dra_doc *sched_pod_ref_doc(dra_arena *ar, const char *ns, const char *name, const char *uid)
{
    dra_doc *d = dra_doc_new_map(ar, 3), *m = dra_doc_new_map(ar, 3);
    if (!d || !m || dra_doc_map_set(ar, d, "apiVersion", sdoc(ar, "v1")) ||
        dra_doc_map_set(ar, d, "kind", sdoc(ar, "Pod")) ||
        dra_doc_map_set(ar, m, "name", sdoc(ar, name)) ||
        dra_doc_map_set(ar, m, "namespace", sdoc(ar, ns)) ||
        (uid && *uid && dra_doc_map_set(ar, m, "uid", sdoc(ar, uid))) ||
        dra_doc_map_set(ar, d, "metadata", m))
        return NULL;
    return d;
}

/* ---- reserve --------------------------------------------------------------------- */

dra_doc *sched_claim_reserve_doc(dra_arena *ar, const sc_claim *cl,
                                 const dra_allocation_result *alloc, const sc_podinfo *pod,
                                 int add_finalizer)
{
    dra_object o = *cl->obj;
    dra_claim_status *st = &o.u.claim.status;
    dra_consumer_ref *rf = dra_arena_array(ar, st->n_reserved_for + 1, sizeof *rf);
    const char **fz = dra_arena_array(ar, o.meta.finalizers.n + 1, sizeof *fz);
    dra_doc *out = NULL;
    if (!rf || !fz)
        return NULL;
    if (alloc)
        st->allocation = (dra_allocation_result *)alloc;
    if (st->n_reserved_for)
        memcpy(rf, st->reserved_for, st->n_reserved_for * sizeof *rf);
    rf[st->n_reserved_for].resource = "pods";
    rf[st->n_reserved_for].name = pod->name;
    rf[st->n_reserved_for].uid = pod->uid;
    st->reserved_for = rf;
    st->n_reserved_for++;
    if (add_finalizer) {
        if (o.meta.finalizers.n)
            memcpy(fz, o.meta.finalizers.v, o.meta.finalizers.n * sizeof *fz);
        fz[o.meta.finalizers.n] = SC_FINALIZER;
        o.meta.finalizers.v = fz;
        o.meta.finalizers.n++;
        o.meta.finalizers.set = 1;
    }
    return dra_api_encode(ar, &o, &out) == DRA_OK ? out : NULL;
}

static dra_doc *get_map(dra_arena *ar, dra_doc *m, const char *key)
{
    dra_doc *v = (dra_doc *)dra_doc_get(m, key);
    if (v && v->kind == DRA_DOC_MAP)
        return v;
    if (!(v = dra_doc_new_map(ar, 4)) || dra_doc_map_set(ar, m, key, v))
        return NULL;
    return v;
}

static int has_uid(const dra_doc *list, const char *uid)
{
    for (size_t i = 0; list && list->kind == DRA_DOC_LIST && i < list->u.list.n; i++) {
        const dra_doc *u = dra_doc_get(list->u.list.items[i], "uid");
        if (u && u->kind == DRA_DOC_STRING && !strcmp(u->u.str.s, uid))
            return 1;
    }
    return 0;
}

int sched_claim_redo(dra_arena *ar, dra_doc *fresh, const dra_doc *alloc_doc,
                     const char *pod_name, const char *pod_uid, const char **why)
{
    dra_doc *md = get_map(ar, fresh, "metadata"), *st = get_map(ar, fresh, "status");
    dra_doc *rf, *e;
    const dra_doc *cur;
    *why = "out of memory";
    if (!md || !st)
        return 0;
    if (dra_doc_get(md, "deletionTimestamp") &&
        dra_doc_get(md, "deletionTimestamp")->kind == DRA_DOC_STRING) {
        *why = "claim got deleted in the meantime";
        return 0;
    }
    cur = dra_doc_get(st, "allocation");
    if (alloc_doc) {
        if (cur && cur->kind == DRA_DOC_MAP) {
            if (!dra_doc_equal(cur, alloc_doc)) {
                *why = "claim got allocated elsewhere in the meantime";
                return 0;
            }
        } else if (dra_doc_map_set(ar, st, "allocation", (dra_doc *)alloc_doc)) {
            return 0;
        }
    } else if (!cur || cur->kind != DRA_DOC_MAP) {
        *why = "claim got deallocated in the meantime";
        return 0;
    }
    rf = (dra_doc *)dra_doc_get(st, "reservedFor");
    if (!rf || rf->kind != DRA_DOC_LIST) {
        if (!(rf = dra_doc_new_list(ar, 1)) || dra_doc_map_set(ar, st, "reservedFor", rf))
            return 0;
    }
    if (has_uid(rf, pod_uid))
        return 1;
    if (!(e = dra_doc_new_map(ar, 3)) || dra_doc_map_set(ar, e, "resource", sdoc(ar, "pods")) ||
        dra_doc_map_set(ar, e, "name", sdoc(ar, pod_name)) ||
        dra_doc_map_set(ar, e, "uid", sdoc(ar, pod_uid)) || dra_doc_list_push(ar, rf, e))
        return 0;
    return 1;
}

dra_doc *sched_claim_unreserve_doc(dra_arena *ar, const dra_doc *written, const char *pod_uid,
                                   int dealloc)
{
    dra_doc *d = (dra_doc *)written, *st = get_map(ar, d, "status"), *nl;
    const dra_doc *rf;
    if (!st)
        return NULL;
    rf = dra_doc_get(st, "reservedFor");
    if (!(nl = dra_doc_new_list(ar, 2)))
        return NULL;
    for (size_t i = 0; rf && rf->kind == DRA_DOC_LIST && i < rf->u.list.n; i++) {
        const dra_doc *u = dra_doc_get(rf->u.list.items[i], "uid");
        if (u && u->kind == DRA_DOC_STRING && !strcmp(u->u.str.s, pod_uid))
            continue;
        if (dra_doc_list_push(ar, nl, rf->u.list.items[i]))
            return NULL;
    }
    if (dra_doc_map_set(ar, st, "reservedFor", nl))
        return NULL;
    if (dealloc && nl->u.list.n == 0 &&
        (dra_doc_map_set(ar, st, "allocation", dra_doc_new_null(ar)) ||
         dra_doc_map_set(ar, st, "devices", dra_doc_new_null(ar))))
        return NULL;
    return d;
}

/* ---- new claims --------------------------------------------------------------------------- */

static dra_owner_ref *pod_owner(dra_arena *ar, const sc_podinfo *pod)
{
    dra_owner_ref *o = dra_arena_zalloc(ar, sizeof *o);
    if (!o)
        return NULL;
    o->api_version = "v1";
    o->kind = "Pod";
    o->name = pod->name;
    o->uid = pod->uid;
    o->controller = DRA_TRI_TRUE;
    o->block_owner_deletion = DRA_TRI_TRUE;
    return o;
}

static int strmap_with(dra_arena *ar, const dra_strmap *in, const char *k, const char *v,
                       dra_strmap *out)
{
    dra_kv *kv = dra_arena_array(ar, in->n + 1, sizeof *kv);
    size_t n = 0;
    if (!kv)
        return 0;
    for (size_t i = 0; i < in->n; i++)
        if (strcmp(in->v[i].key, k))
            kv[n++] = in->v[i];
    kv[n].key = k;
    kv[n++].val = v;
    out->v = kv;
    out->n = n;
    return 1;
}

static dra_doc *new_claim(dra_arena *ar, const sc_podinfo *pod, const char *gen,
                          const dra_strmap *labels, const dra_strmap *ann, const char *ak,
                          const char *av, const dra_claim_spec *spec, int finalizer)
{
    dra_object *o = dra_api_object_new(ar, DRA_KIND_RESOURCE_CLAIM);
    static const char *fz[] = {SC_FINALIZER};
    dra_doc *out = NULL;
    if (!o || !gen || !(o->meta.owner_refs = pod_owner(ar, pod)) ||
        !strmap_with(ar, ann, ak, av, &o->meta.annotations))
        return NULL;
    o->meta.generate_name = gen;
    o->meta.namespace_ = pod->ns;
    o->meta.n_owner_refs = 1;
    if (labels)
        o->meta.labels = *labels;
    if (finalizer) {
        o->meta.finalizers.v = fz;
        o->meta.finalizers.n = 1;
        o->meta.finalizers.set = 1;
    }
    o->u.claim.spec = *spec;
    return dra_api_encode(ar, o, &out) == DRA_OK ? out : NULL;
}

dra_doc *sched_claim_from_template(dra_arena *ar, const sc_podinfo *pod, const sc_pclaim *pc,
                                   const dra_object *tmpl, int finalizer)
{
    const dra_resource_claim_template *t = &tmpl->u.claim_template;
    return new_claim(ar, pod, sched_generate_name(ar, pod->name, pc->name), &t->meta.labels,
                     &t->meta.annotations, SC_ANN_POD_CLAIM, pc->name, &t->spec, finalizer);
}

dra_doc *sched_ext_claim_doc(dra_arena *ar, const sc_podinfo *pod, const dra_claim_spec *spec)
{
    static const dra_strmap none = {NULL, 0};
    return new_claim(ar, pod, dra_arena_sprintf(ar, "%s-extended-resources-", pod->name), NULL,
                     &none, SC_ANN_EXT_CLAIM, "true", spec, 1);
}

/* ---- pod status patches ---------------------------------------------------------------------- */

dra_doc *sched_claim_statuses_doc(dra_arena *ar, const sc_pstatus *st, size_t n)
{
    dra_doc *l = dra_doc_new_list(ar, n);
    if (!l)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        dra_doc *e = dra_doc_new_map(ar, 2);
        if (!e || dra_doc_map_set(ar, e, "name", sdoc(ar, st[i].name)) ||
            (st[i].claim && dra_doc_map_set(ar, e, "resourceClaimName", sdoc(ar, st[i].claim))) ||
            dra_doc_list_push(ar, l, e))
            return NULL;
    }
    return l;
}

char *sched_claim_statuses_patch(dra_arena *ar, const sc_pstatus *st, size_t n)
{
    dra_doc *root = dra_doc_new_map(ar, 1), *s = dra_doc_new_map(ar, 1);
    dra_doc *l = sched_claim_statuses_doc(ar, st, n);
    if (!root || !s || !l || dra_doc_map_set(ar, s, "resourceClaimStatuses", l) ||
        dra_doc_map_set(ar, root, "status", s))
        return NULL;
    return sched_doc_json(ar, root);
}
