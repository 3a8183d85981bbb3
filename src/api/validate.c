/*
 * validate.c: the entry points of api validation. Picks the rules for an
 * object's kind (create, update, status update), runs them with one
 * vctx, and turns the collected field errors into DRA_OK / DRA_EINVALID.
 * Also holds the Pod rules DRA cares about (resourceClaims and the
 * containers' resources.claims).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate.h"
#include "validate_int.h"

/* ---- Pod ---------------------------------------------------------------- */

static void v_pod_claim(vctx *v, const dra_object_meta *meta,
                        const dra_pod_resource_claim *c, vset *names)
{
    const char *name = c->name ? c->name : "";
    vmsgs m = {0};
    v_field(v, "name");
    if (!*name) {
        v_required(v, NULL);
    } else if (vset_has(names, name)) {
        v_duplicate_str(v, name);
    } else {
        chk_dns_label(name, &m);
        if (m.n) {
            v_invalid_msgs(v, name, &m, NULL);
        } else if (meta && c->resource_claim_template_name && meta->name &&
                   *meta->name) {
            /* The claim made from the template is named <pod>-<claim>. */
            char full[600];
            vmsgs fm = {0};
            snprintf(full, sizeof full, "%s-%s", meta->name, name);
            chk_dns_subdomain(full, &fm);
            v_invalid_msgs(v, full, &fm, "final ResourceClaim name: ");
        }
        vset_seen(v, names, name);
    }
    v_pop(v);
    if ((c->resource_claim_name != NULL) == (c->resource_claim_template_name != NULL)) {
        /* kube-apiserver prints the internal core.PodResourceClaim as JSON. */
        dra_buf b;
        dra_buf_init(&b, v->d ? v->d->mem : NULL);
        dra_buf_puts(&b, "{\"Name\":");
        v_json_quote(&b, name, strlen(name));
        dra_buf_puts(&b, ",\"ResourceClaimName\":");
        if (c->resource_claim_name)
            v_json_quote(&b, c->resource_claim_name, strlen(c->resource_claim_name));
        else
            dra_buf_puts(&b, "null");
        dra_buf_puts(&b, ",\"ResourceClaimTemplateName\":");
        if (c->resource_claim_template_name)
            v_json_quote(&b, c->resource_claim_template_name,
                         strlen(c->resource_claim_template_name));
        else
            dra_buf_puts(&b, "null");
        dra_buf_putc(&b, '}');
        v_invalid_raw(v, b.p ? b.p : "", c->resource_claim_name
                      ? "at most one of `resourceClaimName` or "
                        "`resourceClaimTemplateName` may be specified"
                      : "must specify one of: `resourceClaimName`, "
                        "`resourceClaimTemplateName`");
        dra_buf_fini(&b);
    }
    if (c->resource_claim_name) {
        v_field(v, "resourceClaimName");
        v_dns_subdomain(v, c->resource_claim_name);
        v_pop(v);
    }
    if (c->resource_claim_template_name) {
        v_field(v, "resourceClaimTemplateName");
        v_dns_subdomain(v, c->resource_claim_template_name);
        v_pop(v);
    }
}

static void v_container_claims(vctx *v, const dra_container *c,
                               const vset *pod_claims, const char *known)
{
    vset seen;
    char key[600];
    vset_init(&seen, v);
    v_field(v, "resources");
    v_field(v, "claims");
    for (size_t i = 0; i < c->n_claims; i++) {
        const dra_container_claim *cl = &c->claims[i];
        const char *name = cl->name ? cl->name : "";
        v_index(v, i);
        if (!*name) {
            v_required(v, NULL);
            v_pop(v);
            continue;
        }
        if (vset_has(&seen, name)) {
            /* Every request of that claim is already referenced. */
            v_duplicate_str(v, name);
        } else {
            snprintf(key, sizeof key, "%s", name);
            if (cl->request && *cl->request) {
                v_field(v, "request");
                v_dns_label(v, cl->request);
                v_pop(v);
                snprintf(key, sizeof key, "%s/%s", name, cl->request);
            }
            if (vset_seen(v, &seen, key))
                v_duplicate_str(v, key);
        }
        if (!vset_has(pod_claims, name)) {
            char detail[1200];
            snprintf(detail, sizeof detail,
                     "must be one of the names in pod.spec.resourceClaims%s%s",
                     *known ? ": " : " which is empty", known);
            v_not_found_str(v, name, detail);
        }
        v_pop(v);
    }
    v_pop(v);
    v_pop(v);
    vset_fini(&seen);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "a, b, c": the pod's claim names, sorted, for the NotFound detail. */
static void known_names(const vset *names, char *buf, size_t cap)
{
    const char *sorted[64];
    size_t n = 0, used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < names->m.n && n < 64; i++)
        if (names->m.entries[i].key)
            sorted[n++] = names->m.entries[i].key;
    qsort(sorted, n, sizeof sorted[0], cmp_str);
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", sorted[i]);
        if (w < 0 || (size_t)w >= cap - used)
            break;
        used += (size_t)w;
    }
}

void v_pod_spec(vctx *v, const dra_object_meta *meta, const dra_pod_spec *s)
{
    vset names;
    char known[1024];
    vset_init(&names, v);
    v_field(v, "spec");
    v_field(v, "resourceClaims");
    for (size_t i = 0; i < s->n_resource_claims; i++) {
        v_index(v, i);
        v_pod_claim(v, meta, &s->resource_claims[i], &names);
        v_pop(v);
    }
    v_pop(v);
    known_names(&names, known, sizeof known);
    v_field(v, "containers");
    for (size_t i = 0; i < s->n_containers; i++) {
        v_index(v, i);
        v_container_claims(v, &s->containers[i], &names, known);
        v_pop(v);
    }
    v_pop(v);
    v_field(v, "initContainers");
    for (size_t i = 0; i < s->n_init_containers; i++) {
        v_index(v, i);
        v_container_claims(v, &s->init_containers[i], &names, known);
        v_pop(v);
    }
    v_pop(v);
    v_pop(v);
    vset_fini(&names);
}

/* status.resourceClaimStatuses, written by the claim controller: each
 * names one of the pod's claims, once, and a generated claim name must be
 * a valid claim name. */
static void v_pod_claim_statuses(vctx *v, const dra_pod *pod)
{
    vset claims, seen;
    vset_init(&claims, v);
    vset_init(&seen, v);
    for (size_t i = 0; i < pod->spec.n_resource_claims; i++) {
        const char *n = pod->spec.resource_claims[i].name;
        vset_seen(v, &claims, n ? n : "");
    }
    v_field(v, "status");
    v_field(v, "resourceClaimStatuses");
    for (size_t i = 0; i < pod->status.n_resource_claim_statuses; i++) {
        const dra_pod_claim_status *st = &pod->status.resource_claim_statuses[i];
        const char *name = st->name ? st->name : "";
        v_index(v, i);
        v_field(v, "name");
        if (!vset_has(&claims, name))
            v_invalid_str(v, name, "must match the name of an entry in "
                                   "`spec.resourceClaims`");
        if (vset_seen(v, &seen, name))
            v_duplicate_str(v, name);
        if (st->resource_claim_name) {
            vmsgs m = {0};
            chk_dns_subdomain(st->resource_claim_name, &m);
            for (size_t k = 0; k < m.n; k++)
                v_invalid_json_str(v, st->resource_claim_name, m.m[k]);
        }
        v_pop(v);
        v_pop(v);
    }
    v_pop(v);
    v_pop(v);
    vset_fini(&claims);
    vset_fini(&seen);
}

/* ---- deep comparison through the encoder ------------------------------- */

/* Compares member |field| (then |sub|, when not NULL) of the encoded
 * objects. Returns 1 equal, 0 different, -1 out of memory. */
static int encoded_equal(const dra_object *a, const dra_object *b,
                         const char *field, const char *sub, const dra_mem *mem)
{
    dra_arena ar;
    dra_doc *da, *db;
    int eq = -1;
    dra_arena_init(&ar, mem);
    if (dra_api_encode(&ar, a, &da) == DRA_OK &&
        dra_api_encode(&ar, b, &db) == DRA_OK) {
        const dra_doc *x = dra_doc_get(da, field), *y = dra_doc_get(db, field);
        if (sub) {
            x = dra_doc_get(x, sub);
            y = dra_doc_get(y, sub);
        }
        eq = (!x && !y) || (x && y && dra_doc_equal(x, y));
    }
    dra_arena_fini(&ar);
    return eq;
}

static void immutable(vctx *v, const dra_object *o, const dra_object *old,
                      const char *field, const char *sub)
{
    int eq = encoded_equal(o, old, field, sub, v->d ? v->d->mem : NULL);
    if (eq == 1)
        return;
    if (eq < 0) {
        v->oom = 1;
        return;
    }
    v_field(v, field);
    if (sub)
        v_field(v, sub);
    /* kube-apiserver prints the whole Go struct here; an object dump
     * helps nobody, so the value is elided. */
    v_invalid_raw(v, "{...}", "field is immutable");
    if (sub)
        v_pop(v);
    v_pop(v);
}

/* ---- per-kind dispatch ----------------------------------------------------- */

static void v_create_meta(vctx *v, const dra_object *o)
{
    int namespaced = o->kind == DRA_KIND_RESOURCE_CLAIM ||
                     o->kind == DRA_KIND_RESOURCE_CLAIM_TEMPLATE ||
                     o->kind == DRA_KIND_POD;
    v_object_meta(v, &o->meta, namespaced);
}

static void v_create(vctx *v, const dra_object *o)
{
    v_create_meta(v, o);
    switch (o->kind) {
    case DRA_KIND_RESOURCE_SLICE:
        v_slice_spec(v, &o->u.slice.spec, NULL);
        break;
    case DRA_KIND_DEVICE_CLASS:
        v_class_spec(v, &o->u.device_class.spec, NULL);
        break;
    case DRA_KIND_RESOURCE_CLAIM:
        v_field(v, "spec");
        v_claim_spec(v, &o->u.claim.spec);
        v_pop(v);
        /* kube-apiserver drops status on create; checking it here as a
         * status update from nothing lets saved claims be checked too. */
        v_claim_status(v, &o->u.claim.spec, &o->u.claim.status, NULL,
                       o->meta.deletion_timestamp != NULL);
        break;
    case DRA_KIND_RESOURCE_CLAIM_TEMPLATE:
        v_field(v, "spec");
        v_template_meta(v, &o->u.claim_template.meta);
        v_field(v, "spec");
        v_claim_spec(v, &o->u.claim_template.spec);
        v_pop(v);
        v_pop(v);
        break;
    case DRA_KIND_POD:
        v_pod_spec(v, &o->meta, &o->u.pod.spec);
        /* Status is dropped on create; checked so saved pods can be. */
        v_pod_claim_statuses(v, &o->u.pod);
        break;
    default:
        break;
    }
}

/* Immutable metadata first, then the metadata rules of a create
 * (labels, annotations, owner references, ...). */
static void v_update_meta(vctx *v, const dra_object *o, const dra_object *old)
{
    v_object_meta_update(v, &o->meta, &old->meta);
    v_create_meta(v, o);
}

static void v_update(vctx *v, const dra_object *o, const dra_object *old)
{
    switch (o->kind) {
    case DRA_KIND_RESOURCE_SLICE:
        v_update_meta(v, o, old);
        v_slice_spec(v, &o->u.slice.spec, &old->u.slice.spec);
        break;
    case DRA_KIND_DEVICE_CLASS:
        v_update_meta(v, o, old);
        v_class_spec(v, &o->u.device_class.spec, &old->u.device_class.spec);
        break;
    case DRA_KIND_RESOURCE_CLAIM:
    case DRA_KIND_RESOURCE_CLAIM_TEMPLATE:
        /* The spec is immutable, so only the change is worth reporting. */
        v_update_meta(v, o, old);
        immutable(v, o, old, "spec", NULL);
        break;
    default:
        v_object_meta_update(v, &o->meta, &old->meta);
        v_create(v, o);
        break;
    }
}

static void v_status_update(vctx *v, const dra_object *o, const dra_object *old)
{
    v_update_meta(v, o, old);
    if (o->kind == DRA_KIND_POD)
        v_pod_claim_statuses(v, &o->u.pod);
    if (o->kind != DRA_KIND_RESOURCE_CLAIM)
        return;
    v_claim_status(v, &o->u.claim.spec, &o->u.claim.status, &old->u.claim.status,
                   o->meta.deletion_timestamp != NULL);
    if (o->u.claim.status.allocation && old->u.claim.status.allocation)
        immutable(v, o, old, "status", "allocation");
}

dra_err dra_api_validate_ex(const dra_object *obj, const dra_object *old_obj,
                            dra_api_validate_mode mode,
                            const dra_api_validate_opts *opts, dra_diag *d)
{
    vctx v;
    if (!obj || obj->kind == DRA_KIND_UNKNOWN)
        return DRA_EINVAL;
    if (mode != DRA_API_VALIDATE_CREATE &&
        (!old_obj || old_obj->kind != obj->kind))
        return DRA_EINVAL;
    vctx_init(&v, d, NULL);
    v.hooks = opts;
    switch (mode) {
    case DRA_API_VALIDATE_CREATE:
        v_create(&v, obj);
        break;
    case DRA_API_VALIDATE_UPDATE:
        v_update(&v, obj, old_obj);
        break;
    case DRA_API_VALIDATE_STATUS_UPDATE:
        v_status_update(&v, obj, old_obj);
        break;
    }
    if (v.oom)
        return DRA_ENOMEM;
    return v.nerr ? DRA_EINVALID : DRA_OK;
}

dra_err dra_api_validate(const dra_object *obj, dra_diag *d)
{
    return dra_api_validate_ex(obj, NULL, DRA_API_VALIDATE_CREATE, NULL, d);
}

dra_err dra_api_validate_update(const dra_object *old_obj,
                                const dra_object *new_obj, dra_diag *d)
{
    return dra_api_validate_ex(new_obj, old_obj, DRA_API_VALIDATE_UPDATE, NULL, d);
}

dra_err dra_api_validate_status_update(const dra_object *old_obj,
                                       const dra_object *new_obj, dra_diag *d)
{
    return dra_api_validate_ex(new_obj, old_obj, DRA_API_VALIDATE_STATUS_UPDATE,
                               NULL, d);
}
