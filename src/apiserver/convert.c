/*
 * convert.c: resource.k8s.io v1 <-> v1beta2 (a rename of apiVersion)
 * and v1 <-> v1beta1 (devices' `basic` wrapper, requests' `exactly`
 * wrapper, slice nodeName/allNodes zero values), on a copy of the
 * document, edited in place. Everything conversion does not touch is
 * kept as it came.
 */
#include <stdio.h>
#include <string.h>

#include "convert.h"
#include "patch.h"

#define GROUP "resource.k8s.io"

static const char *const kinds[] = {"DeviceClass", "ResourceClaim", "ResourceClaimTemplate",
                                    "ResourceSlice"};

int api_conv_version_known(const char *v)
{
    return v && (!strcmp(v, "v1") || !strcmp(v, "v1beta2") || !strcmp(v, "v1beta1"));
}

static const char *sget(const dra_doc *d, const char *k)
{
    const dra_doc *v = dra_doc_get(d, k);
    return v && v->kind == DRA_DOC_STRING ? v->u.str.s : NULL;
}

static dra_doc *mget(dra_doc *d, const char *k)
{
    return (dra_doc *)dra_doc_get(d, k);
}

/* Removes member |k| of map |m| in place; 1 when it was there. */
static int mdel(dra_doc *m, const char *k)
{
    if (!m || m->kind != DRA_DOC_MAP)
        return 0;
    for (size_t i = 0; i < m->u.map.n; i++) {
        if (strcmp(m->u.map.m[i].key, k))
            continue;
        memmove(m->u.map.m + i, m->u.map.m + i + 1, (m->u.map.n - i - 1) * sizeof *m->u.map.m);
        m->u.map.n--;
        return 1;
    }
    return 0;
}

/* ---- devices --------------------------------------------------------------- */

/* v1beta1 {name, basic: {...}} -> v1 {name, ...}. */
static dra_err device_up(dra_arena *a, dra_doc *dev)
{
    dra_doc *basic = mget(dev, "basic");
    dra_err err;
    if (!basic)
        return DRA_OK;
    mdel(dev, "basic");
    if (basic->kind != DRA_DOC_MAP)
        return DRA_OK;
    for (size_t i = 0; i < basic->u.map.n; i++)
        if ((err = dra_doc_map_set(a, dev, basic->u.map.m[i].key, basic->u.map.m[i].val)))
            return err;
    return DRA_OK;
}

/* v1 {name, ...} -> v1beta1 {name, basic: {...}} (basic always present,
 * as upstream's conversion always sets it). */
static dra_err device_down(dra_arena *a, dra_doc *dev)
{
    dra_doc *basic = dra_doc_new_map(a, dev->u.map.n);
    dra_err err;
    size_t k = 0;
    if (!basic)
        return DRA_ENOMEM;
    for (size_t i = 0; i < dev->u.map.n; i++) {
        if (!strcmp(dev->u.map.m[i].key, "name")) {
            dev->u.map.m[k++] = dev->u.map.m[i];
            continue;
        }
        if ((err = dra_doc_map_set(a, basic, dev->u.map.m[i].key, dev->u.map.m[i].val)))
            return err;
    }
    dev->u.map.n = k;
    return dra_doc_map_set(a, dev, "basic", basic);
}

static dra_err slice(dra_arena *a, dra_doc *obj, int up)
{
    dra_doc *spec = mget(obj, "spec"), *devs = mget(spec, "devices");
    dra_err err;
    if (up && spec && spec->kind == DRA_DOC_MAP) {
        /* v1beta1's plain nodeName/allNodes zero values mean unset in v1 */
        const dra_doc *nn = dra_doc_get(spec, "nodeName"), *an = dra_doc_get(spec, "allNodes");
        if (nn && nn->kind == DRA_DOC_STRING && nn->u.str.len == 0)
            mdel(spec, "nodeName");
        if (an && an->kind == DRA_DOC_BOOL && !an->u.b)
            mdel(spec, "allNodes");
    }
    for (size_t i = 0; devs && devs->kind == DRA_DOC_LIST && i < devs->u.list.n; i++) {
        dra_doc *d = devs->u.list.items[i];
        if (d->kind != DRA_DOC_MAP)
            continue;
        if ((err = up ? device_up(a, d) : device_down(a, d)))
            return err;
    }
    return DRA_OK;
}

/* ---- requests ------------------------------------------------------------------- */

/* The fields v1 keeps under `exactly`, in ExactDeviceRequest order. */
static const char *const exact_fields[] = {"deviceClassName", "selectors", "allocationMode",
                                           "count", "adminAccess", "tolerations", "capacity"};
#define NEXACT (sizeof exact_fields / sizeof exact_fields[0])

/* hasAnyMainRequestFieldsSet */
static int has_main_fields(const dra_doc *req)
{
    const dra_doc *v;
    const char *dc = sget(req, "deviceClassName"), *am = sget(req, "allocationMode");
    if ((dc && *dc) || (am && *am))
        return 1;
    if ((v = dra_doc_get(req, "count")) && !(v->kind == DRA_DOC_INT && v->u.i == 0) &&
        v->kind != DRA_DOC_NULL)
        return 1;
    static const char *const ptrs[] = {"selectors", "adminAccess", "tolerations", "capacity"};
    for (size_t i = 0; i < 4; i++)
        if ((v = dra_doc_get(req, ptrs[i])) && v->kind != DRA_DOC_NULL)
            return 1;
    return 0;
}

/* v1beta1 flat request -> v1 {name, exactly, firstAvailable}. */
static dra_err request_up(dra_arena *a, dra_doc *req)
{
    dra_doc *ex;
    dra_err err;
    int main_fields = has_main_fields(req);
    if (!(ex = dra_doc_new_map(a, NEXACT)))
        return DRA_ENOMEM;
    for (size_t i = 0; i < NEXACT; i++) {
        dra_doc *v = mget(req, exact_fields[i]);
        if (!v)
            continue;
        mdel(req, exact_fields[i]);
        if (main_fields && (err = dra_doc_map_set(a, ex, exact_fields[i], v)))
            return err;
    }
    if (!main_fields)
        return DRA_OK;
    /* exactly sits right after name, before firstAvailable */
    dra_doc *fa = mget(req, "firstAvailable");
    if (fa)
        mdel(req, "firstAvailable");
    if ((err = dra_doc_map_set(a, req, "exactly", ex)))
        return err;
    return fa ? dra_doc_map_set(a, req, "firstAvailable", fa) : DRA_OK;
}

/* v1 {name, exactly, firstAvailable} -> v1beta1 flat, in DeviceRequest
 * order: name, deviceClassName, selectors, allocationMode, count,
 * adminAccess, firstAvailable, tolerations, capacity. */
static dra_err request_down(dra_arena *a, dra_doc *req)
{
    dra_doc *ex = mget(req, "exactly"), *fa = mget(req, "firstAvailable"), *rest;
    dra_err err;
    if (!(rest = dra_doc_new_map(a, req->u.map.n)))
        return DRA_ENOMEM;
    for (size_t i = 0; i < req->u.map.n; i++) {
        const char *k = req->u.map.m[i].key;
        if (strcmp(k, "name") && strcmp(k, "exactly") && strcmp(k, "firstAvailable") &&
            (err = dra_doc_map_set(a, rest, k, req->u.map.m[i].val)))
            return err;
    }
    dra_doc *name = mget(req, "name");
    req->u.map.n = 0;
    if (name && (err = dra_doc_map_set(a, req, "name", name)))
        return err;
    for (size_t i = 0; i < NEXACT; i++) {
        dra_doc *v = ex && ex->kind == DRA_DOC_MAP ? mget(ex, exact_fields[i]) : NULL;
        if (i == 5 && fa && (err = dra_doc_map_set(a, req, "firstAvailable", fa)))
            return err;
        if (v && (err = dra_doc_map_set(a, req, exact_fields[i], v)))
            return err;
    }
    if (fa && !dra_doc_get(req, "firstAvailable") &&
        (err = dra_doc_map_set(a, req, "firstAvailable", fa)))
        return err;
    /* members of exactly this conversion does not know */
    for (size_t i = 0; ex && ex->kind == DRA_DOC_MAP && i < ex->u.map.n; i++)
        if (!dra_doc_get(req, ex->u.map.m[i].key) &&
            (err = dra_doc_map_set(a, req, ex->u.map.m[i].key, ex->u.map.m[i].val)))
            return err;
    for (size_t i = 0; i < rest->u.map.n; i++)
        if ((err = dra_doc_map_set(a, req, rest->u.map.m[i].key, rest->u.map.m[i].val)))
            return err;
    return DRA_OK;
}

/* The claim spec (ResourceClaim.spec or ResourceClaimTemplate.spec.spec). */
static dra_err claim_spec(dra_arena *a, dra_doc *spec, int up)
{
    dra_doc *reqs = mget(mget(spec, "devices"), "requests");
    dra_err err;
    for (size_t i = 0; reqs && reqs->kind == DRA_DOC_LIST && i < reqs->u.list.n; i++) {
        dra_doc *r = reqs->u.list.items[i];
        if (r->kind != DRA_DOC_MAP)
            continue;
        if ((err = up ? request_up(a, r) : request_down(a, r)))
            return err;
    }
    return DRA_OK;
}

/* ---- objects ---------------------------------------------------------------------- */

static int kind_index(const char *kind)
{
    for (size_t i = 0; kind && i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(kinds[i], kind))
            return (int)i;
    return -1;
}

/* Converts one object (already a copy) from |from| to |to|. */
static dra_err convert_one(dra_arena *a, dra_doc *obj, int kind, const char *from, const char *to)
{
    dra_err err;
    int from_b1 = !strcmp(from, "v1beta1"), to_b1 = !strcmp(to, "v1beta1");
    char *av = dra_arena_sprintf(a, GROUP "/%s", to);
    dra_doc *avd = av ? dra_doc_new_string(a, av, strlen(av)) : NULL;
    if (!avd)
        return DRA_ENOMEM;
    if (from_b1 != to_b1) {
        int up = from_b1;
        if (kind == 3)
            err = slice(a, obj, up);
        else if (kind == 1)
            err = claim_spec(a, mget(obj, "spec"), up);
        else if (kind == 2)
            err = claim_spec(a, mget(mget(obj, "spec"), "spec"), up);
        else
            err = DRA_OK;
        if (err)
            return err;
    }
    return dra_doc_map_set(a, obj, "apiVersion", avd);
}

static dra_err bad(dra_kstatus *st, const char *fmt, const char *x, const char *y)
{
    dra_kstatus_set(st, 400, "BadRequest", fmt, x ? x : "", y ? y : "");
    return DRA_EINVAL;
}

dra_err api_conv_convert(dra_arena *a, const dra_doc *obj, const char *to_version,
                         dra_doc **out, dra_kstatus *st)
{
    const char *av = sget(obj, "apiVersion"), *kind = sget(obj, "kind");
    const char *from;
    char listkind[64];
    dra_doc *copy;
    dra_err err;
    *out = NULL;
    if (!obj || obj->kind != DRA_DOC_MAP || !av || !kind)
        return bad(st, "Object 'Kind' is missing in '%s%s'", "", "");
    if (strncmp(av, GROUP "/", sizeof GROUP))
        return bad(st, "no kind \"%s\" is registered for version \"%s\"", kind, av);
    from = av + sizeof GROUP;
    if (!api_conv_version_known(from))
        return bad(st, "no kind \"%s\" is registered for version \"%s\"", kind, av);
    if (!api_conv_version_known(to_version))
        return bad(st, "no kind \"%s\" is registered for version \"resource.k8s.io/%s\"", kind,
                   to_version ? to_version : "");
    int k = kind_index(kind), list = 0;
    if (k < 0) {
        size_t n = strlen(kind);
        if (n > 4 && n < sizeof listkind && !strcmp(kind + n - 4, "List")) {
            snprintf(listkind, sizeof listkind, "%.*s", (int)(n - 4), kind);
            k = kind_index(listkind);
            list = 1;
        }
    }
    if (k < 0)
        return bad(st, "no kind \"%s\" is registered for version \"%s\"", kind, av);
    if (!(copy = api_patch_copy(a, obj)))
        return DRA_ENOMEM;
    if ((err = convert_one(a, copy, list ? -1 : k, from, to_version)))
        return err;
    dra_doc *items = list ? mget(copy, "items") : NULL;
    for (size_t i = 0; items && items->kind == DRA_DOC_LIST && i < items->u.list.n; i++) {
        dra_doc *it = items->u.list.items[i];
        const char *iav = sget(it, "apiVersion");
        if (it->kind != DRA_DOC_MAP)
            continue;
        if ((err = convert_one(a, it, k, iav && !strncmp(iav, GROUP "/", sizeof GROUP) &&
                                                  api_conv_version_known(iav + sizeof GROUP)
                                              ? iav + sizeof GROUP
                                              : from,
                               to_version)))
            return err;
        if (!iav)
            mdel(it, "apiVersion"); /* items keep leaving it to the list */
    }
    *out = copy;
    return DRA_OK;
}
