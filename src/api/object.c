/*
 * object.c: the generic object. Kind registry, dispatch of decode and
 * encode on apiVersion/kind, YAML streams with List expansion, kubectl's
 * List wrapper, defaulting and small lookups.
 */
#include <string.h>

#include "api_int.h"

#define GROUP_V1 "resource.k8s.io/v1"
#define GROUP_V1BETA2 "resource.k8s.io/v1beta2"

/* ORDER dra_kind */
static const struct {
    const char *name;
    const char *version;
} kinds[] = {
    {NULL, NULL},
    {"ResourceSlice", GROUP_V1},
    {"DeviceClass", GROUP_V1},
    {"ResourceClaim", GROUP_V1},
    {"ResourceClaimTemplate", GROUP_V1},
    {"Pod", "v1"},
    {"Node", "v1"},
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

const char *dra_api_kind_name(dra_kind kind)
{
    return (size_t)kind < NKINDS ? kinds[kind].name : NULL;
}

const char *dra_api_kind_version(dra_kind kind)
{
    return (size_t)kind < NKINDS ? kinds[kind].version : NULL;
}

dra_kind dra_api_kind_lookup(const char *api_version, const char *kind)
{
    if (!api_version || !kind)
        return DRA_KIND_UNKNOWN;
    for (size_t i = 1; i < NKINDS; i++) {
        if (strcmp(kinds[i].name, kind) != 0)
            continue;
        if (!strcmp(kinds[i].version, api_version))
            return (dra_kind)i;
        /* v1beta2 has exactly v1's shape; v1beta1 does not (flat
         * requests, devices wrapped in `basic`), so only v1beta2 maps. */
        if (!strcmp(kinds[i].version, GROUP_V1) && !strcmp(api_version, GROUP_V1BETA2))
            return (dra_kind)i;
    }
    return DRA_KIND_UNKNOWN;
}

dra_object *dra_api_object_new(dra_arena *a, dra_kind kind)
{
    dra_object *o;
    if (kind == DRA_KIND_UNKNOWN || (size_t)kind >= NKINDS)
        return NULL;
    if (!(o = dra_arena_zalloc(a, sizeof *o)))
        return NULL;
    o->kind = kind;
    o->api_version = kinds[kind].version;
    o->kind_name = kinds[kind].name;
    return o;
}

/* ---- decode ------------------------------------------------------------------ */

/* The string member |key| of |doc|: 1 found, 0 absent, -1 wrong type
 * (reported). */
static int type_field(api_dec *dc, const dra_doc *doc, const char *key, const char **out)
{
    const dra_doc *v = dra_doc_get(doc, key);
    *out = NULL;
    if (!v || v->kind == DRA_DOC_NULL)
        return 0;
    if (v->kind != DRA_DOC_STRING) {
        dra_path_field(&dc->path, key);
        api_dec_invalid(dc, v, "must be a string");
        dra_path_pop(&dc->path);
        return -1;
    }
    *out = v->u.str.s;
    return 1;
}

/* Decodes |doc|, taking apiVersion/kind from |def_version|/|def_kind|
 * when the document has none (items of a typed list such as
 * ResourceSliceList carry neither). */
static dra_err decode_with(dra_arena *a, const dra_doc *doc, const char *def_version,
                           const char *def_kind, dra_object **out, dra_diag *d)
{
    const char *ver, *kname;
    int rv, rk;
    dra_kind kind;
    dra_object *o;
    api_dec dc;
    *out = NULL;
    memset(&dc, 0, sizeof dc);
    dc.a = a;
    dc.d = d;
    dra_path_init(&dc.path, NULL);
    if (!doc || doc->kind != DRA_DOC_MAP) {
        dra_diag_add(d, "", doc ? doc->line : 0, doc ? doc->col : 0,
                     "an object must be a map with apiVersion and kind");
        return DRA_EINVAL;
    }
    rv = type_field(&dc, doc, "apiVersion", &ver);
    rk = type_field(&dc, doc, "kind", &kname);
    if (dc.oom)
        return DRA_ENOMEM;
    if (rv < 0 || rk < 0)
        return DRA_EINVAL;
    if (!rv)
        ver = def_version;
    if (!rk)
        kname = def_kind;
    if (!kname || !*kname || !ver || !*ver) {
        dra_diag_add(d, "", doc->line, doc->col, "%s not set",
                     !kname || !*kname ? "kind" : "apiVersion");
        return DRA_EINVAL;
    }
    kind = dra_api_kind_lookup(ver, kname);
    if (kind == DRA_KIND_UNKNOWN) {
        dra_diag_add(d, "", doc->line, doc->col,
                     "no kind \"%s\" is registered for version \"%s\"", kname, ver);
        return DRA_EUNSUPPORTED;
    }
    if (!(o = dra_arena_zalloc(a, sizeof *o)))
        return DRA_ENOMEM;
    o->kind = kind;
    o->line = doc->line;
    o->col = doc->col;
    o->api_version = dra_arena_strdup(a, ver);
    o->kind_name = dra_arena_strdup(a, kname);
    if (!o->api_version || !o->kind_name)
        return DRA_ENOMEM;
    api_dec_struct(&dc, api_kind_struct(kind), o, doc);
    if (dc.oom)
        return DRA_ENOMEM;
    *out = o;
    return dc.nerr ? DRA_EINVALID : DRA_OK;
}

dra_err dra_api_decode(dra_arena *a, const dra_doc *doc, dra_object **out, dra_diag *d)
{
    return decode_with(a, doc, NULL, NULL, out, d);
}

/* ---- encode ------------------------------------------------------------------ */

dra_err dra_api_encode(dra_arena *a, const dra_object *obj, dra_doc **out)
{
    const api_struct *st = obj ? api_kind_struct(obj->kind) : NULL;
    dra_object tmp;
    *out = NULL;
    if (!st)
        return DRA_EINVAL;
    /* A hand-built object may leave TypeMeta to us. */
    tmp = *obj;
    if (!tmp.kind_name || !*tmp.kind_name)
        tmp.kind_name = dra_api_kind_name(obj->kind);
    if (!tmp.api_version || !*tmp.api_version)
        tmp.api_version = dra_api_kind_version(obj->kind);
    *out = api_enc_struct(a, st, &tmp);
    return *out ? DRA_OK : DRA_ENOMEM;
}

dra_err dra_api_object_copy(dra_arena *a, const dra_object *obj, dra_object **out)
{
    dra_doc *doc;
    dra_err e;
    *out = NULL;
    if ((e = dra_api_encode(a, obj, &doc)) != DRA_OK)
        return e;
    /* The decoder reads back whatever the encoder writes; it can only
     * refuse a hand-set apiVersion that is not registered. */
    e = dra_api_decode(a, doc, out, NULL);
    if (e == DRA_OK) {
        (*out)->line = obj->line;
        (*out)->col = obj->col;
    } else {
        *out = NULL;
    }
    return e;
}

dra_err dra_api_encode_list(dra_arena *a, dra_object *const *objs, size_t n, dra_doc **out)
{
    dra_doc *list, *map, *meta, *s;
    *out = NULL;
    if (!(list = api_enc_list(a, n)))
        return DRA_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        dra_err e = dra_api_encode(a, objs[i], &list->u.list.items[i]);
        if (e != DRA_OK)
            return e;
    }
    if (!(map = api_enc_map(a, 4)) || !(meta = api_enc_map(a, 1)) ||
        !(s = api_enc_string(a, "")))
        return DRA_ENOMEM;
    api_enc_put(meta, "resourceVersion", s);
    if (!(s = api_enc_string(a, "v1")))
        return DRA_ENOMEM;
    api_enc_put(map, "apiVersion", s);
    api_enc_put(map, "items", list);
    if (!(s = api_enc_string(a, "List")))
        return DRA_ENOMEM;
    api_enc_put(map, "kind", s);
    api_enc_put(map, "metadata", meta);
    *out = map;
    return DRA_OK;
}

/* ---- streams ------------------------------------------------------------------ */

/* The items of a list document (kind List or <Kind>List with an items
 * list), else NULL. */
static const dra_doc *list_items(const dra_doc *doc, const char **item_kind, size_t *klen)
{
    const dra_doc *k = dra_doc_get(doc, "kind"), *items = dra_doc_get(doc, "items");
    size_t len;
    if (!k || k->kind != DRA_DOC_STRING || !items || items->kind != DRA_DOC_LIST)
        return NULL;
    len = k->u.str.len;
    if (len < 4 || memcmp(k->u.str.s + len - 4, "List", 4) != 0)
        return NULL;
    *item_kind = k->u.str.s;
    *klen = len - 4;
    return items;
}

/* Decodes one document into objs[*n] and bumps *n on success; keeps the
 * first failure in *first. Only DRA_ENOMEM stops the stream. */
static dra_err decode_one(dra_arena *a, const dra_doc *doc, const char *ver, const char *kind,
                          dra_object **objs, size_t *n, dra_err *first, dra_diag *d)
{
    dra_err e = decode_with(a, doc, ver, kind, &objs[*n], d);
    if (e == DRA_ENOMEM)
        return e;
    if (e == DRA_OK)
        (*n)++;
    else if (*first == DRA_OK)
        *first = e;
    return DRA_OK;
}

static dra_err decode_doc(dra_arena *a, const dra_doc *doc, dra_object **objs, size_t *n,
                          dra_err *first, dra_diag *d)
{
    const char *ik = NULL, *ver = NULL;
    size_t iklen = 0;
    const dra_doc *items = list_items(doc, &ik, &iklen), *v;
    char *def_kind = NULL;
    if (!items)
        return decode_one(a, doc, NULL, NULL, objs, n, first, d);
    if (iklen && !(def_kind = dra_arena_strndup(a, ik, iklen)))
        return DRA_ENOMEM;
    v = dra_doc_get(doc, "apiVersion");
    if (def_kind && v && v->kind == DRA_DOC_STRING)
        ver = v->u.str.s;
    for (size_t i = 0; i < items->u.list.n; i++)
        if (decode_one(a, items->u.list.items[i], ver, def_kind, objs, n, first, d) != DRA_OK)
            return DRA_ENOMEM;
    return DRA_OK;
}

dra_err dra_api_decode_stream(dra_arena *a, const char *text, size_t len, dra_object ***objs,
                              size_t *n, dra_diag *d)
{
    dra_doc **docs;
    size_t ndocs, total = 0, k = 0;
    dra_object **out;
    dra_err e, first = DRA_OK;
    *objs = NULL;
    *n = 0;
    e = dra_doc_parse_yaml(a, text, len, &docs, &ndocs, d);
    if (e != DRA_OK)
        return e;
    for (size_t i = 0; i < ndocs; i++) {
        const char *ik;
        size_t iklen;
        const dra_doc *items = list_items(docs[i], &ik, &iklen);
        total += items ? items->u.list.n : 1;
    }
    if (!(out = dra_arena_array(a, total ? total : 1, sizeof *out)))
        return DRA_ENOMEM;
    for (size_t i = 0; i < ndocs; i++)
        if ((e = decode_doc(a, docs[i], out, &k, &first, d)) != DRA_OK)
            return e;
    *objs = out;
    *n = k;
    return first;
}

/* ---- defaults and lookups ------------------------------------------------------ */

static void default_request(dra_device_request_spec *r)
{
    if (!r->allocation_mode || !*r->allocation_mode)
        r->allocation_mode = "ExactCount";
    if (!strcmp(r->allocation_mode, "ExactCount") && r->count == 0)
        r->count = 1;
    for (size_t i = 0; i < r->n_tolerations; i++)
        if (!r->tolerations[i].op || !*r->tolerations[i].op)
            r->tolerations[i].op = "Equal";
}

static void default_claim_spec(dra_claim_spec *s)
{
    for (size_t i = 0; i < s->n_requests; i++) {
        dra_device_request *r = &s->requests[i];
        if (r->exactly)
            default_request(r->exactly);
        for (size_t j = 0; j < r->n_first_available; j++)
            default_request(&r->first_available[j]);
    }
}

void dra_api_set_defaults(dra_object *obj)
{
    if (obj && obj->kind == DRA_KIND_RESOURCE_CLAIM)
        default_claim_spec(&obj->u.claim.spec);
    else if (obj && obj->kind == DRA_KIND_RESOURCE_CLAIM_TEMPLATE)
        default_claim_spec(&obj->u.claim_template.spec);
}

const char *dra_strmap_get(const dra_strmap *m, const char *key)
{
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->v[i].key, key))
            return m->v[i].val;
    return NULL;
}

const dra_quantity *dra_qtymap_get(const dra_qtymap *m, const char *key)
{
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->v[i].key, key))
            return &m->v[i].q;
    return NULL;
}

const dra_attr *dra_device_attr(const dra_device *dev, const char *name)
{
    for (size_t i = 0; i < dev->n_attrs; i++)
        if (!strcmp(dev->attrs[i].name, name))
            return &dev->attrs[i].val;
    return NULL;
}

const dra_capacity_entry *dra_device_capacity(const dra_device *dev, const char *name)
{
    for (size_t i = 0; i < dev->n_capacity; i++)
        if (!strcmp(dev->capacity[i].name, name))
            return &dev->capacity[i];
    return NULL;
}

/* ---- key sorting ---------------------------------------------------------------- */

/* encoding/json's bytewise order, which codec already implements. Its depth
 * limit is the one the encoders apply, so a document too deep to be sorted
 * could not be printed either. */
void dra_api_doc_sort_keys(dra_doc *doc)
{
    if (doc)
        (void)dra_doc_sort_keys(doc, DRA_DOC_ORDER_BYTES);
}
