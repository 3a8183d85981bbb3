/*
 * openapi.c: lookups over the schema tables and the OpenAPI v3 documents
 * built from them: the /openapi/v3 index with content hashes, and one
 * document per group-version whose paths carry PATCH operations with
 * x-kubernetes-group-version-kind and an inline fieldValidation
 * parameter (what kubectl 1.29+ looks for before it trusts the server to
 * validate), and whose components.schemas describe every served kind
 * deeply enough for `kubectl explain`.
 */
#include <stdio.h>
#include <string.h>

#include "dra/codec.h"
#include "openapi_int.h"
#include "resources.h"

/* ---- lookups --------------------------------------------------------------- */

typedef int (*root_fn)(void *ud, const api_openapi_root *r);

static int each_root(root_fn fn, void *ud)
{
    size_t n;
    const api_openapi_root *r = api_oa_core_roots(&n);
    for (size_t i = 0; i < n; i++)
        if (fn(ud, &r[i]))
            return 1;
    r = api_oa_resource_roots(&n);
    for (size_t i = 0; i < n; i++)
        if (fn(ud, &r[i]))
            return 1;
    return 0;
}

typedef struct kind_q {
    const char *group, *version, *kind;
    const api_openapi_type *found;
} kind_q;

static int match_kind(void *ud, const api_openapi_root *r)
{
    kind_q *q = ud;
    if (strcmp(r->group, q->group) || strcmp(r->version, q->version) || strcmp(r->kind, q->kind))
        return 0;
    q->found = r->type;
    return 1;
}

const api_openapi_type *api_openapi_kind_type(const char *group, const char *version,
                                              const char *kind)
{
    kind_q q = {group ? group : "", version ? version : "", kind ? kind : "", NULL};
    each_root(match_kind, &q);
    return q.found;
}

const api_openapi_field *api_openapi_field_find(const api_openapi_type *t, const char *name)
{
    for (size_t i = 0; t && i < t->n; i++)
        if (!strcmp(t->fields[i].name, name))
            return &t->fields[i];
    return NULL;
}

const api_openapi_field *api_openapi_step(api_oa_at at, const char *key,
                                          api_oa_at *sub)
{
    const api_openapi_field *f;
    sub->t = NULL;
    sub->map = 0;
    if (at.map) {
        sub->t = at.t;
        return NULL;
    }
    f = api_openapi_field_find(at.t, key);
    if (!f)
        return NULL;
    if (f->kind == API_OA_OBJECT || f->elem == API_OA_OBJECT)
        sub->t = f->ref;
    sub->map = f->kind == API_OA_MAP;
    return f;
}

/* kube-openapi answers with the dotted form: the "@v1.0" spelling kubectl
 * asks for is no valid media type, and kubectl 1.27/1.28 parse the reply's
 * Content-Type with Go's mime.ParseMediaType before using the body. */
const char *api_openapi_v2_content_type(void)
{
    return "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
}

/* ---- document building ------------------------------------------------------- */

typedef struct gen {
    dra_arena a;
    dra_docb d; /* builds in a */
    const char *group, *version; /* the document's group-version */
    const char *pkg;             /* its package, for types without one */
    dra_doc *schemas;            /* components.schemas */
    const api_openapi_type **seen;
    size_t nseen, capseen;
} gen;

static const char *type_name(gen *g, const api_openapi_type *t)
{
    char *s = dra_arena_sprintf(&g->a, "%s.%s", t->pkg ? t->pkg : g->pkg, t->name);
    if (!s)
        g->d.oom = 1;
    return s ? s : "";
}

static dra_doc *ref_to(gen *g, const char *name)
{
    dra_doc *r = dra_docb_map(&g->d);
    char *s = dra_arena_sprintf(&g->a, "#/components/schemas/%s", name);
    if (!s)
        g->d.oom = 1;
    dra_docb_set_str(&g->d, r, "$ref", s ? s : "");
    return r;
}

/* {"allOf":[{"$ref":...}]} as kube-openapi writes references in v3. */
static void put_ref(gen *g, dra_doc *m, const char *name, int with_default)
{
    dra_doc *l = dra_docb_list(&g->d);
    dra_docb_push(&g->d, l, ref_to(g, name));
    dra_docb_set(&g->d, m, "allOf", l);
    if (with_default)
        dra_docb_set(&g->d, m, "default", dra_docb_map(&g->d));
}

static void add_type(gen *g, const api_openapi_type *t);

/* The schema of one value of kind |k| (an element or the field itself). */
static void put_value(gen *g, dra_doc *m, unsigned k, const api_openapi_type *ref)
{
    switch (k) {
    case API_OA_OBJECT:
        add_type(g, ref);
        put_ref(g, m, type_name(g, ref), 1);
        break;
    case API_OA_STRING: dra_docb_set_str(&g->d, m, "type", "string"); break;
    case API_OA_INT:
        dra_docb_set_str(&g->d, m, "type", "integer");
        dra_docb_set_str(&g->d, m, "format", "int64");
        break;
    case API_OA_INT32:
        dra_docb_set_str(&g->d, m, "type", "integer");
        dra_docb_set_str(&g->d, m, "format", "int32");
        break;
    case API_OA_NUMBER:
        dra_docb_set_str(&g->d, m, "type", "number");
        dra_docb_set_str(&g->d, m, "format", "double");
        break;
    case API_OA_BOOL: dra_docb_set_str(&g->d, m, "type", "boolean"); break;
    case API_OA_QUANTITY: put_ref(g, m, "io.k8s.apimachinery.pkg.api.resource.Quantity", 0); break;
    case API_OA_TIME: put_ref(g, m, PKG_META ".Time", 0); break;
    case API_OA_MICROTIME: put_ref(g, m, PKG_META ".MicroTime", 0); break;
    case API_OA_INT_OR_STRING: put_ref(g, m, "io.k8s.apimachinery.pkg.util.intstr.IntOrString", 0); break;
    case API_OA_RAW: put_ref(g, m, "io.k8s.apimachinery.pkg.runtime.RawExtension", 0); break;
    case API_OA_FIELDSV1: put_ref(g, m, PKG_META ".FieldsV1", 0); break;
    default: break;
    }
}

static dra_doc *csv_list(gen *g, const char *csv)
{
    dra_doc *l = dra_docb_list(&g->d);
    while (csv && *csv) {
        const char *c = strchr(csv, ',');
        size_t n = c ? (size_t)(c - csv) : strlen(csv);
        dra_docb_push(&g->d, l, dra_docb_strn(&g->d, csv, n));
        csv += n + (c ? 1 : 0);
    }
    return l;
}

static dra_doc *field_schema(gen *g, const api_openapi_field *f)
{
    dra_doc *m = dra_docb_map(&g->d);
    dra_docb_set_str(&g->d, m, "description", f->desc ? f->desc : "");
    if (f->kind == API_OA_ARRAY) {
        dra_doc *items = dra_docb_map(&g->d);
        dra_docb_set_str(&g->d, m, "type", "array");
        put_value(g, items, f->elem, f->ref);
        dra_docb_set(&g->d, m, "items", items);
        if (f->keys) {
            dra_docb_set_str(&g->d, m, "x-kubernetes-list-type", "map");
            dra_docb_set(&g->d, m, "x-kubernetes-list-map-keys", csv_list(g, f->keys));
        } else if (f->flags & API_OA_F_SET) {
            dra_docb_set_str(&g->d, m, "x-kubernetes-list-type", "set");
        } else {
            dra_docb_set_str(&g->d, m, "x-kubernetes-list-type", "atomic");
        }
    } else if (f->kind == API_OA_MAP) {
        dra_doc *items = dra_docb_map(&g->d);
        dra_docb_set_str(&g->d, m, "type", "object");
        put_value(g, items, f->elem, f->ref);
        dra_docb_set(&g->d, m, "additionalProperties", items);
        if (f->flags & API_OA_F_MAP_ATOMIC)
            dra_docb_set_str(&g->d, m, "x-kubernetes-map-type", "atomic");
    } else {
        put_value(g, m, f->kind, f->ref);
    }
    if (f->flags & (API_OA_F_SMP_MERGE | API_OA_F_SMP_RETAIN | API_OA_F_SMP_REPLACE)) {
        const char *s = (f->flags & API_OA_F_SMP_RETAIN) ? "merge,retainKeys"
                        : (f->flags & API_OA_F_SMP_MERGE) ? "merge" : "replace";
        dra_docb_set_str(&g->d, m, "x-kubernetes-patch-strategy", s);
        if (f->merge_key)
            dra_docb_set_str(&g->d, m, "x-kubernetes-patch-merge-key", f->merge_key);
    }
    return m;
}

static int seen_type(gen *g, const api_openapi_type *t)
{
    for (size_t i = 0; i < g->nseen; i++)
        if (g->seen[i] == t)
            return 1;
    if (g->nseen == g->capseen) {
        size_t ncap = g->capseen ? g->capseen * 2 : 32;
        const api_openapi_type **nv = dra_arena_array(&g->a, ncap, sizeof *nv);
        if (!nv) {
            g->d.oom = 1;
            return 1;
        }
        if (g->nseen)
            memcpy(nv, g->seen, g->nseen * sizeof *nv);
        g->seen = nv;
        g->capseen = ncap;
    }
    g->seen[g->nseen++] = t;
    return 0;
}

typedef struct gvk_q {
    gen *g;
    const api_openapi_type *t;
    dra_doc *list;
} gvk_q;

static int add_gvk(void *ud, const api_openapi_root *r)
{
    gvk_q *q = ud;
    if (r->type != q->t || strcmp(r->group, q->g->group) || strcmp(r->version, q->g->version))
        return 0;
    dra_doc *e = dra_docb_map(&q->g->d);
    dra_docb_set_str(&q->g->d, e, "group", r->group);
    dra_docb_set_str(&q->g->d, e, "kind", r->kind);
    dra_docb_set_str(&q->g->d, e, "version", r->version);
    if (!q->list)
        q->list = dra_docb_list(&q->g->d);
    dra_docb_push(&q->g->d, q->list, e);
    return 0;
}

/* Adds |t| and every type it reaches to components.schemas, once. */
static void add_type(gen *g, const api_openapi_type *t)
{
    dra_doc *s, *props, *req = NULL;
    if (!t || seen_type(g, t))
        return;
    s = dra_docb_map(&g->d);
    dra_docb_set(&g->d, g->schemas, type_name(g, t), s);
    dra_docb_set_str(&g->d, s, "description", t->desc ? t->desc : "");
    dra_docb_set_str(&g->d, s, "type", "object");
    if (t->n) {
        props = dra_docb_map(&g->d);
        for (size_t i = 0; i < t->n; i++) {
            dra_docb_set(&g->d, props, t->fields[i].name, field_schema(g, &t->fields[i]));
            if (t->fields[i].flags & API_OA_F_REQUIRED) {
                if (!req)
                    req = dra_docb_list(&g->d);
                dra_docb_push(&g->d, req, dra_docb_str(&g->d, t->fields[i].name));
            }
        }
        dra_docb_set(&g->d, s, "properties", props);
    }
    if (req)
        dra_docb_set(&g->d, s, "required", req);
    if (t->flags & API_OA_T_ATOMIC)
        dra_docb_set_str(&g->d, s, "x-kubernetes-map-type", "atomic");
    gvk_q q = {g, t, NULL};
    each_root(add_gvk, &q);
    if (q.list)
        dra_docb_set(&g->d, s, "x-kubernetes-group-version-kind", q.list);
}

static void add_scalar_components(gen *g)
{
    static const struct { const char *name, *desc, *type, *format; } sc[] = {
        {"io.k8s.apimachinery.pkg.api.resource.Quantity",
         "A fixed-point number with an optional suffix: SI (m, k, M, G, ...), binary (Ki, Mi, Gi, ...) or an exponent (e3). Written as a string, such as 189471Mi or 500m.",
         NULL, NULL},
        {PKG_META ".Time", "A time in RFC 3339 form with second precision, UTC.", "string", "date-time"},
        {PKG_META ".MicroTime", "A time in RFC 3339 form with microsecond precision.", "string", "date-time"},
        {"io.k8s.apimachinery.pkg.util.intstr.IntOrString", "An integer or a string.", NULL, "int-or-string"},
        {"io.k8s.apimachinery.pkg.runtime.RawExtension", "An embedded JSON object, interpreted by whoever consumes it.", "object", NULL},
        {PKG_META ".FieldsV1", "A set of fields in the FieldsV1 trie format.", "object", NULL},
    };
    for (size_t i = 0; i < OA_N(sc); i++) {
        dra_doc *s = dra_docb_map(&g->d);
        dra_docb_set_str(&g->d, s, "description", sc[i].desc);
        if (sc[i].type)
            dra_docb_set_str(&g->d, s, "type", sc[i].type);
        if (sc[i].format && !strcmp(sc[i].format, "int-or-string")) {
            dra_docb_set(&g->d, s, "x-kubernetes-int-or-string", dra_docb_bool(&g->d, 1));
        } else if (sc[i].format) {
            dra_docb_set_str(&g->d, s, "format", sc[i].format);
        } else if (!sc[i].type) { /* Quantity: a string or a number */
            dra_doc *one = dra_docb_list(&g->d), *a = dra_docb_map(&g->d), *b = dra_docb_map(&g->d);
            dra_docb_set_str(&g->d, a, "type", "string");
            dra_docb_set_str(&g->d, b, "type", "number");
            dra_docb_push(&g->d, one, a);
            dra_docb_push(&g->d, one, b);
            dra_docb_set(&g->d, s, "oneOf", one);
        }
        dra_docb_set(&g->d, g->schemas, sc[i].name, s);
    }
}

/* ---- paths ------------------------------------------------------------------- */

static dra_doc *param(gen *g, const char *name, const char *in, const char *desc, int required)
{
    dra_doc *p = dra_docb_map(&g->d), *sch = dra_docb_map(&g->d);
    dra_docb_set_str(&g->d, p, "name", name);
    dra_docb_set_str(&g->d, p, "in", in);
    dra_docb_set_str(&g->d, p, "description", desc);
    if (required)
        dra_docb_set(&g->d, p, "required", dra_docb_bool(&g->d, 1));
    dra_docb_set_str(&g->d, sch, "type", "string");
    dra_docb_set(&g->d, sch, "uniqueItems", dra_docb_bool(&g->d, 1));
    dra_docb_set(&g->d, p, "schema", sch);
    return p;
}

static dra_doc *content_of(gen *g, const char *schema_name, const char *const *types)
{
    dra_doc *c = dra_docb_map(&g->d);
    for (; *types; types++) {
        dra_doc *e = dra_docb_map(&g->d);
        dra_docb_set(&g->d, e, "schema", ref_to(g, schema_name));
        dra_docb_set(&g->d, c, *types, e);
    }
    return c;
}

static const char *const json_types[] = {"application/json", "application/yaml", NULL};
static const char *const patch_types[] = {"application/apply-patch+yaml", "application/json-patch+json",
                                          "application/merge-patch+json",
                                          "application/strategic-merge-patch+json", NULL};

typedef struct opinfo {
    const api_resource *r;
    const char *kind_schema; /* component name of the kind */
    const char *sub;         /* "status" or NULL */
} opinfo;

static dra_doc *gvk_ext(gen *g, const api_resource *r)
{
    dra_doc *m = dra_docb_map(&g->d);
    dra_docb_set_str(&g->d, m, "group", r->group);
    dra_docb_set_str(&g->d, m, "kind", r->kind);
    dra_docb_set_str(&g->d, m, "version", r->version);
    return m;
}

static dra_doc *responses(gen *g, const char *schema, int created)
{
    dra_doc *rs = dra_docb_map(&g->d), *ok = dra_docb_map(&g->d);
    dra_docb_set_str(&g->d, ok, "description", "OK");
    dra_docb_set(&g->d, ok, "content", content_of(g, schema, json_types));
    dra_docb_set(&g->d, rs, "200", ok);
    if (created) {
        dra_doc *c = dra_docb_map(&g->d);
        dra_docb_set_str(&g->d, c, "description", "Created");
        dra_docb_set(&g->d, c, "content", content_of(g, schema, json_types));
        dra_docb_set(&g->d, rs, "201", c);
    }
    dra_doc *un = dra_docb_map(&g->d);
    dra_docb_set_str(&g->d, un, "description", "Unauthorized");
    dra_docb_set(&g->d, rs, "401", un);
    return rs;
}

static dra_doc *operation(gen *g, const opinfo *o, const char *verb, const char *action,
                          int body, int write)
{
    dra_doc *op = dra_docb_map(&g->d), *params = dra_docb_list(&g->d);
    const char *what = o->sub ? dra_arena_sprintf(&g->a, "%s of the specified %s", o->sub, o->r->kind)
                              : dra_arena_sprintf(&g->a, "the specified %s", o->r->kind);
    char *desc = dra_arena_sprintf(&g->a, "%s %s", verb, what ? what : "");
    char *opid = dra_arena_sprintf(&g->a, "%s%s%s%s", action, o->r->kind,
                                   o->sub ? "_" : "", o->sub ? o->sub : "");
    if (!what || !desc || !opid)
        g->d.oom = 1;
    dra_docb_set_str(&g->d, op, "description", desc ? desc : "");
    dra_docb_set_str(&g->d, op, "operationId", opid ? opid : "");
    if (write) {
        dra_docb_push(&g->d, params, param(g, "dryRun", "query", "When present, the change is validated but not persisted (All).", 0));
        dra_docb_push(&g->d, params, param(g, "fieldManager", "query", "Name of the actor making the change; required for apply patches.", 0));
        dra_docb_push(&g->d, params, param(g, "fieldValidation", "query",
                                "What to do with unknown or duplicate fields in the body: Ignore, Warn or Strict (reject with 400 BadRequest).", 0));
        if (!strcmp(action, "patch"))
            dra_docb_push(&g->d, params, param(g, "force", "query", "For apply patches: take over fields other managers own.", 0));
    }
    dra_docb_set(&g->d, op, "parameters", params);
    if (body) {
        dra_doc *rb = dra_docb_map(&g->d);
        dra_docb_set(&g->d, rb, "content", content_of(g, !strcmp(action, "patch") ? PKG_META ".Patch" : o->kind_schema,
                                            !strcmp(action, "patch") ? patch_types : json_types));
        dra_docb_set(&g->d, rb, "required", dra_docb_bool(&g->d, 1));
        dra_docb_set(&g->d, op, "requestBody", rb);
    }
    dra_docb_set(&g->d, op, "responses", responses(g, o->kind_schema, write && strcmp(action, "delete")));
    dra_docb_set_str(&g->d, op, "x-kubernetes-action", action);
    dra_docb_set(&g->d, op, "x-kubernetes-group-version-kind", gvk_ext(g, o->r));
    return op;
}

static dra_doc *item_path(gen *g, const opinfo *o)
{
    dra_doc *p = dra_docb_map(&g->d), *params = dra_docb_list(&g->d);
    dra_docb_set(&g->d, p, "get", operation(g, o, "read", "get", 0, 0));
    dra_docb_set(&g->d, p, "put", operation(g, o, "replace", "put", 1, 1));
    if (!o->sub)
        dra_docb_set(&g->d, p, "delete", operation(g, o, "delete", "delete", 0, 1));
    dra_docb_set(&g->d, p, "patch", operation(g, o, "partially update", "patch", 1, 1));
    char *d = dra_arena_sprintf(&g->a, "name of the %s", o->r->kind);
    if (!d)
        g->d.oom = 1;
    dra_docb_push(&g->d, params, param(g, "name", "path", d ? d : "", 1));
    if (o->r->namespaced)
        dra_docb_push(&g->d, params, param(g, "namespace", "path", "object name and auth scope, such as for teams and projects", 1));
    dra_docb_push(&g->d, params, param(g, "pretty", "query", "If 'true', the output is pretty printed.", 0));
    dra_docb_set(&g->d, p, "parameters", params);
    return p;
}

static dra_doc *collection_path(gen *g, const opinfo *o)
{
    dra_doc *p = dra_docb_map(&g->d), *params = dra_docb_list(&g->d);
    dra_docb_set(&g->d, p, "get", operation(g, o, "list or watch objects of kind", "list", 0, 0));
    dra_docb_set(&g->d, p, "post", operation(g, o, "create", "post", 1, 1));
    if (o->r->namespaced)
        dra_docb_push(&g->d, params, param(g, "namespace", "path", "object name and auth scope, such as for teams and projects", 1));
    dra_docb_push(&g->d, params, param(g, "pretty", "query", "If 'true', the output is pretty printed.", 0));
    dra_docb_set(&g->d, p, "parameters", params);
    return p;
}

static void add_paths(gen *g, dra_doc *paths)
{
    size_t n;
    const api_resource *t = api_resources(&n);
    for (size_t i = 0; i < n; i++) {
        const api_resource *r = &t[i];
        if (strcmp(r->group, g->group) || strcmp(r->version, g->version))
            continue;
        const api_openapi_type *ty = api_openapi_kind_type(r->group, r->version, r->kind);
        if (!ty)
            continue;
        add_type(g, ty);
        opinfo o = {r, type_name(g, ty), NULL};
        char *base = *r->group ? dra_arena_sprintf(&g->a, "/apis/%s/%s", r->group, r->version)
                               : dra_arena_sprintf(&g->a, "/api/%s", r->version);
        char *coll = dra_arena_sprintf(&g->a, "%s%s/%s", base ? base : "",
                                       r->namespaced ? "/namespaces/{namespace}" : "", r->resource);
        char *item = dra_arena_sprintf(&g->a, "%s/{name}", coll ? coll : "");
        char *status = dra_arena_sprintf(&g->a, "%s/status", item ? item : "");
        if (!base || !coll || !item || !status) {
            g->d.oom = 1;
            return;
        }
        dra_docb_set(&g->d, paths, coll, collection_path(g, &o));
        dra_docb_set(&g->d, paths, item, item_path(g, &o));
        if (r->subresources & API_SUB_STATUS) {
            opinfo so = o;
            so.sub = "status";
            dra_docb_set(&g->d, paths, status, item_path(g, &so));
        }
    }
}

/* Maps "api/v1" / "apis/<group>/<version>" to a served group-version. */
static int parse_gv(const char *gv, const char **group, const char **version, char *buf, size_t size)
{
    size_t n;
    const api_resource *t = api_resources(&n);
    if (!gv)
        return 0;
    if (!strncmp(gv, "/openapi/v3/", 12))
        gv += 12;
    for (size_t i = 0; i < n; i++) {
        if (*t[i].group)
            snprintf(buf, size, "apis/%s/%s", t[i].group, t[i].version);
        else
            snprintf(buf, size, "api/%s", t[i].version);
        if (!strcmp(buf, gv)) {
            *group = t[i].group;
            *version = t[i].version;
            return 1;
        }
    }
    return 0;
}

static dra_err build_doc(const char *gv, dra_buf *out)
{
    gen g;
    char buf[128], pkg[96];
    const char *group, *version;
    dra_err err;
    if (!parse_gv(gv, &group, &version, buf, sizeof buf))
        return DRA_ENOTFOUND;
    memset(&g, 0, sizeof g);
    dra_arena_init(&g.a, out->mem);
    g.d.a = &g.a;
    g.group = group;
    g.version = version;
    snprintf(pkg, sizeof pkg, "io.k8s.api.%s.%s",
             *group ? (!strcmp(group, "resource.k8s.io") ? "resource" : group) : "core", version);
    g.pkg = pkg;
    dra_doc *doc = dra_docb_map(&g.d), *info = dra_docb_map(&g.d);
    dra_doc *paths = dra_docb_map(&g.d), *comp = dra_docb_map(&g.d);
    g.schemas = dra_docb_map(&g.d);
    dra_docb_set_str(&g.d, doc, "openapi", "3.0.0");
    dra_docb_set_str(&g.d, info, "title", "Kubernetes");
    dra_docb_set_str(&g.d, info, "version", "v1.35.0");
    dra_docb_set(&g.d, doc, "info", info);
    add_paths(&g, paths);
    add_scalar_components(&g);
    {
        dra_doc *patch = dra_docb_map(&g.d);
        dra_docb_set_str(&g.d, patch, "description", "A patch in one of the supported formats (JSON patch, merge patch, strategic merge patch, apply configuration).");
        dra_docb_set_str(&g.d, patch, "type", "object");
        dra_docb_set(&g.d, g.schemas, PKG_META ".Patch", patch);
    }
    dra_docb_set(&g.d, doc, "paths", paths);
    dra_docb_set(&g.d, comp, "schemas", g.schemas);
    dra_docb_set(&g.d, doc, "components", comp);
    err = g.d.oom ? DRA_ENOMEM : dra_doc_to_json(doc, 0, out);
    if (err == DRA_OK && out->len && out->p[out->len - 1] == '\n')
        out->p[--out->len] = '\0';
    dra_arena_fini(&g.a);
    return err;
}

static void hash_hex(const char *p, size_t len, char *hash)
{
    uint64_t h1 = dra_hash(p, len), h2 = 1469598103934665603ULL;
    for (size_t i = len; i-- > 0;) { /* a second FNV pass, backwards */
        h2 ^= (unsigned char)p[i];
        h2 *= 1099511628211ULL;
    }
    snprintf(hash, 33, "%016llX%016llX", (unsigned long long)h1, (unsigned long long)h2);
}

dra_err api_openapi_v3_doc(const char *gv, dra_buf *out, char *hash)
{
    size_t start = out->len;
    dra_err err = build_doc(gv, out);
    if (err == DRA_OK && hash)
        hash_hex(out->p + start, out->len - start, hash);
    return err;
}

dra_err api_openapi_v3_hash(const char *gv, char *hash)
{
    dra_buf b;
    dra_err err;
    dra_buf_init(&b, NULL);
    err = api_openapi_v3_doc(gv, &b, hash);
    dra_buf_fini(&b);
    return err;
}

dra_err api_openapi_v3_index(dra_buf *out)
{
    size_t n;
    const api_resource *t = api_resources(&n);
    dra_buf b;
    int first = 1;
    dra_buf_init(&b, out->mem);
    dra_buf_puts(&b, "{\"paths\":{");
    for (size_t i = 0; i < n; i++) {
        char gv[128], hash[33];
        int seen = 0;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(t[j].group, t[i].group) && !strcmp(t[j].version, t[i].version))
                seen = 1;
        if (seen)
            continue;
        if (*t[i].group)
            snprintf(gv, sizeof gv, "apis/%s/%s", t[i].group, t[i].version);
        else
            snprintf(gv, sizeof gv, "api/%s", t[i].version);
        dra_err err = api_openapi_v3_hash(gv, hash);
        if (err) {
            dra_buf_fini(&b);
            return err;
        }
        dra_buf_printf(&b, "%s\"%s\":{\"serverRelativeURL\":\"/openapi/v3/%s?hash=%s\"}",
                       first ? "" : ",", gv, gv, hash);
        first = 0;
    }
    dra_buf_puts(&b, "}}");
    if (b.oom) {
        dra_buf_fini(&b);
        return DRA_ENOMEM;
    }
    dra_err err = dra_buf_append(out, b.p, b.len);
    dra_buf_fini(&b);
    return err;
}
