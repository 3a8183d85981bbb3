/*
 * write.c: what every write goes through before the store: the body's
 * apiVersion and kind, the namespace, the registry strategy of its kind
 * (status wiped on create, status or spec reset on update, generation),
 * the system metadata (uid, creationTimestamp, generateName), strict
 * field validation, and the api module's defaulting and validation,
 * with kube-apiserver's 400 and 422 answers when something is wrong.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver_int.h"

/* Registry behaviour per resource (storage rows). */
typedef struct kind_rules {
    const char *resource;
    int status_sub;   /* has a status subresource: main writes keep status */
    int generation;   /* metadata.generation is kept */
    int create_status; /* 0 keep, 1 wipe, 2 pod Pending, 3 namespace (its
                        * status and finalizer: dra_api_default_doc) */
} kind_rules;

static const kind_rules rules[] = {
    {"pods", 1, 1, 2},
    {"nodes", 1, 0, 0},
    {"namespaces", 1, 0, 3},
    {"events", 0, 0, 0},
    {"resourceclaims", 1, 1, 1},
    {"resourceslices", 0, 1, 0},
    {"deviceclasses", 0, 1, 0},
    {"resourceclaimtemplates", 0, 1, 0},
};

static const kind_rules *rules_for(const api_resource *res)
{
    static const kind_rules none = {"", 0, 0, 0};
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (!strcmp(rules[i].resource, res->resource))
            return &rules[i];
    return &none;
}

/* ---- names for kinds kept as documents -------------------------------------- */

static int dns_label_ok(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (!n || n > max)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && c != '-')
            return 0;
        if ((i == 0 || i == n - 1) && !alnum)
            return 0;
    }
    return 1;
}

static int dns_subdomain_ok(const char *s)
{
    char part[254];
    size_t n = strlen(s), st = 0;
    if (!n || n > 253)
        return 0;
    for (size_t i = 0; i <= n; i++) {
        if (s[i] != '.' && s[i])
            continue;
        if (i == st || i - st > 63)
            return 0;
        memcpy(part, s + st, i - st);
        part[i - st] = '\0';
        if (!dns_label_ok(part, 63))
            return 0;
        st = i + 1;
    }
    return 1;
}

/* ObjectMeta name checks for Namespaces (DNS labels) and Events (DNS
 * subdomains), in kube's words. */
static void check_doc_name(const api_resource *res, const dra_doc *obj,
                           dra_diag *d)
{
    const char *name = api_meta_str(obj, "name");
    int label = !strcmp(res->resource, "namespaces");
    if (!name || !*name) {
        dra_diag_add(d, "metadata.name", 0, 0,
                     "Required value: name or generateName is required");
        return;
    }
    if (label && strlen(name) > 63)
        dra_diag_add(d, "metadata.name", 0, 0,
                     "Invalid value: \"%s\": must be no more than 63 characters",
                     name);
    else if (label && !dns_label_ok(name, 63))
        dra_diag_add(d, "metadata.name", 0, 0,
                     "Invalid value: \"%s\": a lowercase RFC 1123 label must "
                     "consist of lower case alphanumeric characters or '-', and "
                     "must start and end with an alphanumeric character (e.g. "
                     "'my-name',  or '123-abc', regex used for validation is "
                     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                     name);
    else if (!label && !dns_subdomain_ok(name))
        dra_diag_add(d, "metadata.name", 0, 0,
                     "Invalid value: \"%s\": a lowercase RFC 1123 subdomain must "
                     "consist of lower case alphanumeric characters, '-' or '.', "
                     "and must start and end with an alphanumeric character "
                     "(e.g. 'example.com', regex used for validation is "
                     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
                     "[a-z0-9])?)*')",
                     name);
}

/* ---- apiVersion, kind, namespace ------------------------------------------------- */

static dra_err check_gvk(api_req *r, dra_doc *obj)
{
    const char *gv = api_group_version(&r->a, r->res);
    const char *av = api_doc_str(obj, "apiVersion");
    const char *kind = api_doc_str(obj, "kind");
    dra_err e;
    if (!gv)
        return DRA_ENOMEM;
    /* A body without apiVersion or kind takes the endpoint's, as the
     * apiserver's decoder defaults them. */
    if (!av || !*av) {
        if ((e = api_doc_set_str(&r->a, obj, "apiVersion", gv)))
            return e;
    } else if (strcmp(av, gv)) {
        api_bad_request(r, "the API version in the data (%s) does not match "
                           "the expected API version (%s)", av, gv);
        return DRA_EINVALID;
    }
    if (!kind || !*kind) {
        if ((e = api_doc_set_str(&r->a, obj, "kind", r->res->kind)))
            return e;
    } else if (strcmp(kind, r->res->kind)) {
        api_bad_request(r, "%s in version \"%s\" cannot be handled as a %s: "
                           "the kind in the data does not match the endpoint",
                        kind, r->res->version, r->res->kind);
        return DRA_EINVALID;
    }
    return DRA_OK;
}

static dra_err check_namespace(api_req *r, dra_doc *meta)
{
    const char *ns = api_doc_str(meta, "namespace");
    if (!r->res->namespaced) {
        /* Cluster-scoped objects carry no namespace; one sent along is
         * dropped, as the registry does. */
        api_doc_del(meta, "namespace");
        return DRA_OK;
    }
    if (ns && *ns && strcmp(ns, r->ns)) {
        api_bad_request(r, "the namespace of the provided object does not "
                           "match the namespace sent on the request");
        return DRA_EINVALID;
    }
    return api_doc_set_str(&r->a, meta, "namespace", r->ns);
}

/* ---- the strategy ------------------------------------------------------------------- */

/* Pod QoS (qos.ComputePodQOS): sums of the positive cpu and memory
 * quantities, compared as quantities ("1" equals "1000m"). */
typedef struct qos_sum {
    dra_quantity q[2]; /* cpu, memory */
    int has[2];
} qos_sum;

/* Adds the cpu and memory of resource list |list| to |s|; *found gets
 * bit k for each of them present with a positive value. */
static void qos_add(qos_sum *s, const dra_doc *list, unsigned *found)
{
    static const char *const names[] = {"cpu", "memory"};
    for (size_t k = 0; k < 2; k++) {
        const dra_doc *v = api_doc_at(list, names[k]);
        dra_quantity q, sum;
        if (!v)
            continue;
        if (v->kind == DRA_DOC_INT)
            q = dra_quantity_from_int64(v->u.i, DRA_QTY_DECIMAL_SI);
        else if (v->kind != DRA_DOC_STRING ||
                 dra_quantity_parse(v->u.str.s, v->u.str.len, &q))
            continue;
        if (dra_quantity_sign(&q) <= 0)
            continue;
        *found |= 1u << k;
        if (!s->has[k])
            s->q[k] = q;
        else if (!dra_quantity_add(&s->q[k], &q, &sum))
            s->q[k] = sum;
        s->has[k] = 1;
    }
}

/* Accounts one resources member ({requests, limits}); a limits list that
 * lacks a positive cpu or memory limit rules Guaranteed out. |need_limits|
 * says whether that holds only for a non-empty limits list (pod level) or
 * always (containers). */
static void qos_resources(const dra_doc *res, qos_sum *req, qos_sum *lim,
                          int need_limits, int *guaranteed)
{
    const dra_doc *l = api_doc_at(res, "limits");
    unsigned found = 0, unused = 0;
    qos_add(req, api_doc_at(res, "requests"), &unused);
    qos_add(lim, l, &found);
    if ((need_limits || (l && l->kind == DRA_DOC_MAP && l->u.map.n)) && found != 3u)
        *guaranteed = 0;
}

/* The QoS class of a defaulted pod document. Pod-level resources decide
 * when spec.resources is present (PodLevelResources, on in 1.35),
 * otherwise the containers and init containers. */
static const char *pod_qos(const dra_doc *pod)
{
    const dra_doc *spec = api_doc_at(pod, "spec"), *pr = api_doc_at(spec, "resources");
    static const char *const lists[] = {"containers", "initContainers"};
    qos_sum req, lim;
    int guaranteed = 1;
    memset(&req, 0, sizeof req);
    memset(&lim, 0, sizeof lim);
    if (pr && pr->kind == DRA_DOC_MAP) {
        qos_resources(pr, &req, &lim, 0, &guaranteed);
    } else {
        for (size_t l = 0; l < 2; l++) {
            const dra_doc *cs = api_doc_at(spec, lists[l]);
            for (size_t i = 0; cs && cs->kind == DRA_DOC_LIST && i < cs->u.list.n; i++)
                qos_resources(api_doc_at(cs->u.list.items[i], "resources"), &req, &lim, 1,
                              &guaranteed);
        }
    }
    if (!req.has[0] && !req.has[1] && !lim.has[0] && !lim.has[1])
        return "BestEffort";
    for (size_t k = 0; k < 2; k++)
        if (req.has[k] && (!lim.has[k] || dra_quantity_cmp(&req.q[k], &lim.q[k])))
            guaranteed = 0;
    if (guaranteed && req.has[0] + req.has[1] == lim.has[0] + lim.has[1])
        return "Guaranteed";
    return "Burstable";
}

/* The registry's PrepareForCreate, the part that needs no defaults:
 * claims lose their status, pods start Pending (their QoS class comes
 * after defaulting, pod_status_create). Namespaces get theirs from
 * dra_api_default_doc. */
static dra_err strategy_create(api_req *r, const kind_rules *k, dra_doc *obj)
{
    dra_doc *st;
    switch (k->create_status) {
    case 1:
        api_doc_del(obj, "status");
        return DRA_OK;
    case 2:
        if (!(st = dra_doc_new_map(&r->a, 2)) ||
            api_doc_set_str(&r->a, st, "phase", "Pending"))
            return DRA_ENOMEM;
        return dra_doc_map_set(&r->a, obj, "status", st);
    default:
        return DRA_OK;
    }
}

/* The members of |from| other than kind, apiVersion, metadata, status
 * replace those of |to| (the status subresource keeps the spec). */
static dra_err copy_spec(dra_arena *a, dra_doc *to, const dra_doc *from)
{
    for (size_t i = 0; i < to->u.map.n;) {
        const char *key = to->u.map.m[i].key;
        if (strcmp(key, "kind") && strcmp(key, "apiVersion") &&
            strcmp(key, "metadata") && strcmp(key, "status"))
            api_doc_del(to, key);
        else
            i++;
    }
    for (size_t i = 0; i < from->u.map.n; i++) {
        const char *key = from->u.map.m[i].key;
        if (strcmp(key, "kind") && strcmp(key, "apiVersion") &&
            strcmp(key, "metadata") && strcmp(key, "status")) {
            dra_doc *c = api_doc_clone(a, from->u.map.m[i].val);
            if (!c || dra_doc_map_set(a, to, key, c))
                return DRA_ENOMEM;
        }
    }
    return DRA_OK;
}

static dra_err copy_member(dra_arena *a, dra_doc *to, const dra_doc *from,
                           const char *key)
{
    const dra_doc *v = api_doc_at(from, key);
    dra_doc *c;
    if (!v) {
        api_doc_del(to, key);
        return DRA_OK;
    }
    c = api_doc_clone(a, v);
    return c ? dra_doc_map_set(a, to, key, c) : DRA_ENOMEM;
}

static dra_err strategy_update(api_req *r, const kind_rules *k, api_mode mode,
                               dra_doc *obj, const dra_doc *old)
{
    dra_err e;
    if (mode == API_UPDATE)
        return k->status_sub ? copy_member(&r->a, obj, old, "status") : DRA_OK;
    /* Status: everything but the status comes from the stored object;
     * metadata too, except the resourceVersion precondition. */
    if ((e = copy_spec(&r->a, obj, old)))
        return e;
    {
        const char *rv = api_meta_str(obj, "resourceVersion");
        dra_doc *m = api_doc_clone(&r->a, api_meta(old));
        if (!m || dra_doc_map_set(&r->a, obj, "metadata", m))
            return DRA_ENOMEM;
        if (rv && (e = api_doc_set_str(&r->a, m, "resourceVersion", rv)))
            return e;
        else if (!rv)
            api_doc_del(m, "resourceVersion");
    }
    return DRA_OK;
}

/* ---- pod updates (kube's ValidatePodUpdate) ------------------------------------------ */

/* 1 when toleration |t| is in |l| up to its tolerationSeconds, 0 when
 * not, -1 when out of memory. */
static int toleration_kept(dra_arena *a, const dra_doc *t, const dra_doc *l)
{
    dra_doc *want = api_doc_clone(a, t);
    if (!want)
        return -1;
    if (want->kind == DRA_DOC_MAP)
        api_doc_del(want, "tolerationSeconds");
    for (size_t i = 0; l && l->kind == DRA_DOC_LIST && i < l->u.list.n; i++) {
        dra_doc *c = api_doc_clone(a, l->u.list.items[i]);
        if (!c)
            return -1;
        if (c->kind == DRA_DOC_MAP)
            api_doc_del(c, "tolerationSeconds");
        if (dra_doc_equal(want, c))
            return 1;
    }
    return 0;
}

static size_t list_len(const dra_doc *l)
{
    return l && l->kind == DRA_DOC_LIST ? l->u.list.n : 0;
}

/* The spec members that differ, as "  spec.K: OLD -> NEW" lines: kube
 * appends a Go cmp.Diff of the two PodSpecs here, which a C server cannot
 * reproduce; this names the same fields. */
static dra_err spec_diff(const dra_doc *os, const dra_doc *ns, dra_buf *b)
{
    const dra_doc *maps[2] = {os, ns};
    for (size_t s = 0; s < 2; s++)
        for (size_t i = 0; i < maps[s]->u.map.n; i++) {
            const char *k = maps[s]->u.map.m[i].key;
            const dra_doc *ov = api_doc_at(os, k), *nv = api_doc_at(ns, k);
            dra_buf vo, vn;
            if ((s == 1 && ov) || (ov && nv && dra_doc_equal(ov, nv)))
                continue;
            dra_buf_init(&vo, NULL);
            dra_buf_init(&vn, NULL);
            if ((ov ? dra_doc_to_json(ov, -1, &vo) : dra_buf_printf(&vo, "null")) ||
                (nv ? dra_doc_to_json(nv, -1, &vn) : dra_buf_printf(&vn, "null")) ||
                dra_buf_printf(b, "\n  spec.%s: %.*s -> %.*s", k, (int)(vo.len > 200 ? 200 : vo.len),
                               vo.p ? vo.p : "", (int)(vn.len > 200 ? 200 : vn.len),
                               vn.p ? vn.p : "")) {
                dra_buf_fini(&vo);
                dra_buf_fini(&vn);
                return DRA_ENOMEM;
            }
            dra_buf_fini(&vo);
            dra_buf_fini(&vn);
        }
    return DRA_OK;
}

/* What may change in a pod's spec through the main resource: the images,
 * activeDeadlineSeconds, added tolerations (and tolerationSeconds),
 * removed scheduling gates, terminationGracePeriodSeconds from negative
 * to 1. Everything else is a 422 Forbidden, as kube words it. Findings in
 * |d|; DRA_ENOMEM. */
static dra_err pod_update_rules(api_req *r, const dra_doc *ns, const dra_doc *os, dra_diag *d)
{
    static const char *const lists[] = {"containers", "initContainers"};
    dra_arena *a = &r->a;
    const dra_doc *ot = api_doc_at(os, "tolerations"), *og = api_doc_at(os, "schedulingGates");
    const dra_doc *ng = api_doc_at(ns, "schedulingGates"), *ogp, *ngp;
    dra_doc *m;
    for (size_t k = 0; k < 2; k++)
        if (list_len(api_doc_at(ns, lists[k])) != list_len(api_doc_at(os, lists[k]))) {
            dra_diag_add(d, k ? "spec.initContainers" : "spec.containers", 0, 0,
                         "Forbidden: pod updates may not add or remove containers");
            return DRA_OK;
        }
    for (size_t i = 0; i < list_len(ot); i++) {
        int kept = toleration_kept(a, ot->u.list.items[i], api_doc_at(ns, "tolerations"));
        if (kept < 0)
            return DRA_ENOMEM;
        if (!kept) {
            dra_diag_add(d, "spec.tolerations", 0, 0, "Forbidden: existing toleration can "
                         "not be modified except its tolerationSeconds");
            break;
        }
    }
    for (size_t i = 0; i < list_len(ng); i++) {
        const dra_doc *g = ng->u.list.items[i];
        size_t j = 0;
        while (j < list_len(og) && !dra_doc_equal(g, og->u.list.items[j]))
            j++;
        if (j == list_len(og)) {
            const char *gn = api_doc_str(g, "name");
            dra_diag_add(d, "spec.schedulingGates", 0, 0, "Forbidden: only deletion is "
                         "allowed, but found new scheduling gate '%s'", gn ? gn : "");
            break;
        }
    }
    if (!(m = api_doc_clone(a, ns)))
        return DRA_ENOMEM;
    for (size_t k = 0; k < 2; k++) {
        const dra_doc *ol = api_doc_at(os, lists[k]);
        dra_doc *ml = api_doc_at(m, lists[k]);
        for (size_t i = 0; i < list_len(ml) && i < list_len(ol); i++)
            if (ml->u.list.items[i]->kind == DRA_DOC_MAP &&
                copy_member(a, ml->u.list.items[i], ol->u.list.items[i], "image"))
                return DRA_ENOMEM;
    }
    ogp = api_doc_at(os, "terminationGracePeriodSeconds");
    ngp = api_doc_at(ns, "terminationGracePeriodSeconds");
    if ((copy_member(a, m, os, "activeDeadlineSeconds") ||
         copy_member(a, m, os, "tolerations") || copy_member(a, m, os, "schedulingGates")) ||
        (ogp && ngp && ogp->kind == DRA_DOC_INT && ogp->u.i < 0 && ngp->kind == DRA_DOC_INT &&
         ngp->u.i == 1 && copy_member(a, m, os, "terminationGracePeriodSeconds")))
        return DRA_ENOMEM;
    if (!dra_doc_equal(m, os)) {
        dra_buf b;
        dra_err e;
        dra_buf_init(&b, r->srv->mem);
        e = spec_diff(os, m, &b);
        if (!e)
            dra_diag_add(d, "spec", 0, 0, "Forbidden: pod updates may not change fields other "
                         "than `spec.containers[*].image`,`spec.initContainers[*].image`,"
                         "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
                         "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it "
                         "to be set to 1 if it was previously negative)%s", b.p ? b.p : "");
        dra_buf_fini(&b);
        return e;
    }
    return DRA_OK;
}

/* ---- system metadata ----------------------------------------------------------------- */

static dra_err meta_create(api_req *r, const kind_rules *k, dra_doc *meta)
{
    char uid[40], now[32];
    const char *name = api_doc_str(meta, "name");
    const char *gen = api_doc_str(meta, "generateName");
    int generate = (!name || !*name) && gen && *gen;
    char suf[6];
    dra_err e;
    if (generate)
        api_uuid_suffix(uid, sizeof uid, suf, 5);
    else
        api_uuid(uid, sizeof uid);
    api_now(now, sizeof now);
    if (generate) {
        /* The base is cut to 58 characters so the name stays within 63. */
        char base[59];
        size_t n = strlen(gen) > 58 ? 58 : strlen(gen);
        memcpy(base, gen, n);
        base[n] = '\0';
        const char *nm = dra_arena_sprintf(&r->a, "%s%s", base, suf);
        if (!nm || (e = api_doc_set_str(&r->a, meta, "name", nm)))
            return DRA_ENOMEM;
    }
    api_doc_del(meta, "selfLink");
    api_doc_del(meta, "deletionTimestamp");
    api_doc_del(meta, "deletionGracePeriodSeconds");
    if ((e = api_doc_set_str(&r->a, meta, "uid", uid)) ||
        (e = api_doc_set_str(&r->a, meta, "creationTimestamp", now)))
        return e;
    if (k->generation)
        return api_doc_set_int(&r->a, meta, "generation", 1);
    api_doc_del(meta, "generation");
    return DRA_OK;
}

/* Fields only the server sets keep their stored values on update. */
static dra_err meta_update(api_req *r, dra_doc *meta, const dra_doc *old)
{
    const dra_doc *om = api_meta(old);
    const char *uid = api_doc_str(meta, "uid"), *ouid = api_doc_str(om, "uid");
    static const char *const kept[] = {"uid", "creationTimestamp", "generation",
                                       "deletionTimestamp",
                                       "deletionGracePeriodSeconds", "selfLink"};
    dra_err e;
    if (uid && *uid && ouid && strcmp(uid, ouid)) {
        char why[200];
        snprintf(why, sizeof why,
                 "Precondition failed: UID in precondition: %s, UID in object "
                 "meta: %s", uid, ouid);
        api_conflict(r, r->sres, api_doc_str(om, "name"), why);
        return DRA_EINVALID;
    }
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
        if ((e = copy_member(&r->a, meta, om, kept[i])))
            return e;
    /* managedFields left out of an update keep their stored value; an
     * empty list clears them, as the field manager does. */
    if (!api_doc_at(meta, "managedFields"))
        return copy_member(&r->a, meta, om, "managedFields");
    return DRA_OK;
}

/* 1 when a member other than metadata and status differs. */
static int spec_changed(const dra_doc *a, const dra_doc *b)
{
    const dra_doc *sides[2] = {a, b};
    for (int s = 0; s < 2; s++) {
        const dra_doc *x = sides[s], *y = sides[1 - s];
        for (size_t i = 0; i < x->u.map.n; i++) {
            const char *key = x->u.map.m[i].key;
            const dra_doc *other;
            if (!strcmp(key, "kind") || !strcmp(key, "apiVersion") ||
                !strcmp(key, "metadata") || !strcmp(key, "status"))
                continue;
            other = api_doc_at(y, key);
            if (!other || !dra_doc_equal(x->u.map.m[i].val, other))
                return 1;
        }
    }
    return 0;
}

/* ---- typed decoding, defaulting, validation ------------------------------------------- */

static dra_err decode_failed(api_req *r, const dra_diag *d)
{
    const char *first = dra_diag_first(d);
    const char *path = d->n ? d->v[0].path : NULL;
    api_bad_request(r, "%s in version \"%s\" cannot be handled as a %s: %s%s%s",
                    r->res->kind, r->res->version, r->res->kind,
                    path && *path ? path : "", path && *path ? ": " : "",
                    first ? first : "malformed object");
    return DRA_EINVALID;
}

/* Unknown fields: a 400 under Strict; under Warn a warning each; under
 * Warn and Ignore they are dropped from |o|, since kube-apiserver's
 * decoding into its types never keeps them. */
static dra_err unknown_fields(api_req *r, dra_object *o)
{
    dra_diag d;
    dra_buf b;
    if (r->fv == API_FV_IGNORE) {
        dra_api_drop_unknown_fields(o);
        return DRA_OK;
    }
    dra_diag_init(&d, r->srv->mem);
    if (!dra_api_unknown_fields(o, &d)) {
        dra_diag_fini(&d);
        return DRA_OK;
    }
    if (r->fv == API_FV_WARN) {
        for (size_t i = 0; i < d.n; i++)
            api_warn(r, d.v[i].msg);
        dra_diag_fini(&d);
        dra_api_drop_unknown_fields(o);
        return DRA_OK;
    }
    dra_buf_init(&b, r->srv->mem);
    for (size_t i = 0; i < d.n; i++)
        dra_buf_printf(&b, "%s%s", i ? ", " : "", d.v[i].msg);
    /* create and update go through kube's transformDecodeError, which
     * names the body's kind and version; patch reports the bare error. */
    if (r->in->method && !strcmp(r->in->method, "PATCH"))
        api_bad_request(r, "strict decoding error: %s", b.p ? b.p : "");
    else
        api_bad_request(r, "%s in version \"%s\" cannot be handled as a %s: "
                        "strict decoding error: %s", r->res->kind, r->res->version,
                        r->res->kind, b.p ? b.p : "");
    dra_buf_fini(&b);
    dra_diag_fini(&d);
    return DRA_EINVALID;
}

static const char *obj_name(api_req *r, const dra_doc *obj)
{
    const char *n = api_meta_str(obj, "name");
    if (n && *n)
        return n;
    n = api_meta_str(obj, "generateName");
    return n ? n : (r->name ? r->name : "");
}

/* The defaulting pass a write mode gets: admission acts on the main
 * resource's creates and updates, a status write gets scheme defaults. */
static dra_api_op default_op(api_mode mode)
{
    if (mode == API_CREATE)
        return DRA_API_OP_CREATE;
    return mode == API_UPDATE ? DRA_API_OP_UPDATE : DRA_API_OP_DECODE;
}

/* Admission's refusal: 403 `pods "x" is forbidden: ...`. |name| is the
 * name admission saw: on a create the one the client sent ("" with
 * generateName, which is drawn only after admission). */
static dra_err forbidden(api_req *r, const char *name, const dra_diag *d)
{
    const char *why = dra_diag_first(d), *res = api_qualified(&r->a, r->sres);
    dra_err e;
    if (!res)
        return DRA_ENOMEM;
    e = api_fail(r, 403, "Forbidden", r->sres, name, "%s \"%s\" is forbidden: %s", res, name,
                 why ? why : "");
    return e ? e : DRA_EINVALID;
}

/* Decodes |obj| into *o, with the unknown-field rules (a 400 under
 * Strict, dropped otherwise). DRA_EINVALID when answered. */
static dra_err typed_decode(api_req *r, dra_doc *obj, dra_object **o, dra_diag *d)
{
    dra_err e = dra_api_decode(&r->a, obj, o, d);
    if (e == DRA_ENOMEM)
        return e;
    if (e)
        return decode_failed(r, d);
    return unknown_fields(r, *o);
}

/* Validation of the defaulted |o| (against |oo| on updates), then its
 * encoding into *out; a pod update through the main resource adds kube's
 * ValidatePodUpdate rules against the stored |old|. The findings go into
 * one 422, as kube's strategy returns them. */
static dra_err typed_check(api_req *r, api_mode mode, const dra_object *o,
                           const dra_object *oo, const dra_doc *old, const char *name,
                           dra_doc **out, dra_diag *d)
{
    dra_err e;
    if (mode == API_CREATE || !oo)
        e = dra_api_validate(o, d);
    else if (mode == API_UPDATE)
        e = dra_api_validate_update(oo, o, d);
    else
        e = dra_api_validate_status_update(oo, o, d);
    if (e && e != DRA_EINVALID)
        return e;
    if ((e = dra_api_encode(&r->a, o, out)))
        return e;
    if (o->kind == DRA_KIND_POD && mode == API_UPDATE && old) {
        const dra_doc *ns = api_doc_at(*out, "spec"), *os = api_doc_at(old, "spec");
        if (ns && os && ns->kind == DRA_DOC_MAP && os->kind == DRA_DOC_MAP &&
            (e = pod_update_rules(r, ns, os, d)))
            return e;
    }
    if (!d->n)
        return DRA_OK;
    e = api_invalid(r, r->sres, name, d);
    return e ? e : DRA_EINVALID;
}

/* The typed kinds: decode, kube's defaulting and default admission
 * (dra_api_default), validation, encoding. |sent| is the name the client
 * sent (for admission's 403). */
static dra_err typed(api_req *r, api_mode mode, dra_doc *obj, const dra_doc *old,
                     const char *sent, dra_doc **out)
{
    dra_diag d;
    dra_object *o = NULL, *oo = NULL;
    const char *name = obj_name(r, obj);
    dra_err e;
    dra_diag_init(&d, r->srv->mem);
    if ((e = typed_decode(r, obj, &o, &d)))
        goto done;
    if (old) {
        dra_diag_clear(&d);
        if ((e = dra_api_decode(&r->a, old, &oo, &d)) == DRA_ENOMEM)
            goto done;
        /* A stored object always decodes; if not, treat this as a create
         * for validation, with no stored values to keep. */
        if (e)
            oo = NULL;
    }
    dra_diag_clear(&d);
    e = dra_api_default(&r->a, o, default_op(mode), oo, &d);
    if (e == DRA_EFORBIDDEN)
        e = forbidden(r, mode == API_CREATE ? (sent ? sent : "") : name, &d);
    if (e)
        goto done;
    dra_diag_clear(&d);
    e = typed_check(r, mode, o, oo, old, name, out, &d);
done:
    dra_diag_fini(&d);
    return e;
}

/* Namespaces and Events, kept as documents: their defaults
 * (dra_api_default_doc; api_prepare has drawn the name already, which a
 * namespace's kubernetes.io/metadata.name label follows) and name rules. */
static dra_err untyped(api_req *r, api_mode mode, dra_doc *obj, dra_doc **out)
{
    dra_diag d;
    dra_err e;
    dra_diag_init(&d, r->srv->mem);
    e = dra_api_default_doc(&r->a, obj, default_op(mode), &d);
    if (!e) {
        dra_diag_clear(&d);
        check_doc_name(r->sres, obj, &d);
        if (d.n && !(e = api_invalid(r, r->sres, obj_name(r, obj), &d)))
            e = DRA_EINVALID;
    }
    dra_diag_fini(&d);
    *out = obj;
    return e;
}

/* status.qosClass of a created pod, from its defaulted resources (the
 * registry's PrepareForCreate runs after decoding and admission). */
static dra_err pod_status_create(api_req *r, dra_doc *pod)
{
    dra_doc *st = api_doc_map(&r->a, pod, "status");
    if (!st)
        return DRA_ENOMEM;
    return api_doc_set_str(&r->a, st, "qosClass", pod_qos(pod));
}

static int is_pods(const api_resource *res)
{
    return !strcmp(res->resource, "pods") && !*res->group;
}

dra_err api_prepare(api_req *r, api_mode mode, dra_doc *obj, const dra_doc *old,
                    dra_doc **out)
{
    const kind_rules *k = rules_for(r->sres);
    const char *sent;
    dra_doc *meta;
    dra_err e;
    *out = NULL;
    if ((e = check_gvk(r, obj)))
        return e;
    if (!(meta = api_doc_map(&r->a, obj, "metadata"))) {
        api_bad_request(r, "metadata must be an object");
        return DRA_EINVALID;
    }
    if (mode != API_UPDATE_STATUS && (e = check_namespace(r, meta)))
        return e;
    if (mode == API_CREATE)
        e = strategy_create(r, k, obj);
    else
        e = strategy_update(r, k, mode, obj, old);
    if (e)
        return e;
    meta = api_meta(obj);
    sent = api_doc_str(meta, "name");
    if (mode == API_CREATE)
        e = meta_create(r, k, meta);
    else
        e = meta_update(r, meta, old);
    if (e)
        return e;
    if (r->sres->dkind != DRA_KIND_UNKNOWN)
        e = typed(r, mode, obj, old, sent, out);
    else
        e = untyped(r, mode, obj, out);
    if (!e && mode == API_CREATE && is_pods(r->sres))
        e = pod_status_create(r, *out);
    if (e)
        return e;
    api_order(*out);
    if (old && k->generation && spec_changed(*out, old)) {
        int64_t g = 0;
        const dra_doc *gd = api_doc_at(api_meta(old), "generation");
        if (gd && gd->kind == DRA_DOC_INT)
            g = gd->u.i;
        if ((e = api_doc_set_int(&r->a, api_meta(*out), "generation", g + 1)))
            return e;
    }
    return DRA_OK;
}

dra_err api_store_write(api_req *r, dra_store_op op, dra_doc *obj,
                        uint64_t expect_rv, dra_store_obj **stored, char *msg,
                        size_t cap)
{
    dra_buf b;
    dra_store_write w;
    dra_err e;
    *stored = NULL;
    memset(&w, 0, sizeof w);
    dra_buf_init(&b, r->srv->mem);
    if ((e = api_encode_for_store(&r->a, obj, &b, &w.rv_at))) {
        dra_buf_fini(&b);
        return e;
    }
    w.op = op;
    w.resource = r->skey;
    w.ns = r->sres->namespaced ? (api_meta_str(obj, "namespace") ? api_meta_str(obj, "namespace") : "") : "";
    w.name = api_meta_str(obj, "name");
    if (!w.name)
        w.name = "";
    w.expect_rv = expect_rv;
    w.json = b.p;
    w.len = b.len;
    e = dra_store_write_one(r->srv->store, &w);
    dra_buf_fini(&b);
    if (msg && cap)
        snprintf(msg, cap, "%s", w.msg);
    if (!e)
        *stored = w.obj;
    return e;
}
