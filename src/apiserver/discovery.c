/*
 * discovery.c: legacy and aggregated discovery documents from the
 * resource table, in the field order kube-apiserver writes them, and
 * the Accept negotiation that decides which one a client gets. Each
 * document is built as a dra_doc in a scratch arena and encoded once.
 */
#include <ctype.h>
#include <string.h>

#include "discovery.h"
#include "dra/codec.h"
#include "resources.h"

#define CT_V2 "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
#define CT_V2BETA1 \
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"

/* ---- negotiation --------------------------------------------------------- */

/* Case-insensitive compare of [s, s+n) with |lit|. */
static int span_eq(const char *s, size_t n, const char *lit)
{
    size_t m = strlen(lit);
    if (n != m)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)s[i]) != tolower((unsigned char)lit[i]))
            return 0;
    return 1;
}

static void trim(const char **s, size_t *n)
{
    while (*n && isspace((unsigned char)**s)) {
        (*s)++;
        (*n)--;
    }
    while (*n && isspace((unsigned char)(*s)[*n - 1]))
        (*n)--;
}

/* Classifies one media range: 0 other, 1 plain JSON or wildcard,
 * 2 aggregated v2, 3 aggregated v2beta1. */
static int classify(const char *s, size_t n)
{
    const char *semi = memchr(s, ';', n);
    size_t tlen = semi ? (size_t)(semi - s) : n;
    const char *t = s;
    int g = 0, as = 0, v = 0; /* v: 1 v2, 2 v2beta1, 3 other */
    trim(&t, &tlen);
    if (!span_eq(t, tlen, "application/json") && !span_eq(t, tlen, "*/*") &&
        !span_eq(t, tlen, "application/*"))
        return 0;
    while (semi) {
        const char *p = semi + 1, *next = memchr(p, ';', n - (size_t)(p - s));
        size_t plen = next ? (size_t)(next - p) : n - (size_t)(p - s);
        const char *eq = memchr(p, '=', plen);
        semi = next;
        if (!eq)
            continue;
        const char *k = p, *val = eq + 1;
        size_t klen = (size_t)(eq - p), vlen = plen - klen - 1;
        trim(&k, &klen);
        trim(&val, &vlen);
        if (span_eq(k, klen, "g"))
            g = span_eq(val, vlen, "apidiscovery.k8s.io") ? 1 : -1;
        else if (span_eq(k, klen, "as"))
            as = span_eq(val, vlen, "APIGroupDiscoveryList") ? 1 : -1;
        else if (span_eq(k, klen, "v"))
            v = span_eq(val, vlen, "v2") ? 1 : span_eq(val, vlen, "v2beta1") ? 2 : 3;
    }
    if (g == 0 && as == 0 && v == 0)
        return 1;
    if (g == 1 && as == 1 && (v == 1 || v == 2))
        return v == 1 ? 2 : 3;
    return 0; /* some other typed JSON (a Table, say) */
}

api_disc_format api_disc_negotiate(const char *accept, const char **content_type)
{
    api_disc_format f = API_DISC_LEGACY;
    const char *s = accept ? accept : "";
    while (*s) {
        const char *comma = strchr(s, ',');
        size_t n = comma ? (size_t)(comma - s) : strlen(s);
        int c = classify(s, n);
        if (c == 1)
            break;
        if (c == 2 || c == 3) {
            f = c == 2 ? API_DISC_V2 : API_DISC_V2BETA1;
            break;
        }
        s += n + (comma ? 1 : 0);
    }
    if (content_type)
        *content_type = f == API_DISC_V2 ? CT_V2
                        : f == API_DISC_V2BETA1 ? CT_V2BETA1
                                                : "application/json";
    return f;
}

/* ---- document building ----------------------------------------------------- */

typedef struct bld {
    dra_arena a;
    dra_docb d; /* builds in a */
} bld;

/* Comma-separated |csv| as a list of strings. */
static dra_doc *csv_list(bld *b, const char *csv)
{
    dra_doc *l = dra_docb_list(&b->d);
    while (csv && *csv) {
        const char *c = strchr(csv, ',');
        size_t n = c ? (size_t)(c - csv) : strlen(csv);
        dra_docb_push(&b->d, l, dra_docb_strn(&b->d, csv, n));
        csv += n + (c ? 1 : 0);
    }
    return l;
}

static const char *const verbs_all[] = {"create", "delete", "deletecollection", "get",
                                        "list", "patch", "update", "watch", NULL};
static const char *const verbs_ns[] = {"create", "delete", "get", "list",
                                       "patch", "update", "watch", NULL};
static const char *const verbs_status[] = {"get", "patch", "update", NULL};
static const char *const verbs_create[] = {"create", NULL};
static const char *const verbs_get[] = {"get", NULL};

static dra_doc *verb_list(bld *b, const char *const *v)
{
    dra_doc *l = dra_docb_list(&b->d);
    for (; *v; v++)
        dra_docb_push(&b->d, l, dra_docb_str(&b->d, *v));
    return l;
}

/* Subresources of a row in the order upstream lists them (by name). */
typedef struct subres {
    unsigned bit;
    const char *name;
    const char *kind; /* NULL: the parent's kind */
    const char *const *verbs;
} subres;

static const subres subs[] = {
    {API_SUB_BINDING, "binding", "Binding", verbs_create},
    {API_SUB_LOG, "log", NULL, verbs_get},
    {API_SUB_STATUS, "status", NULL, verbs_status},
};

static const char *const *row_verbs(const api_resource *r)
{
    /* namespaces have no deletecollection upstream */
    return !*r->group && !strcmp(r->resource, "namespaces") ? verbs_ns : verbs_all;
}

static dra_err finish(bld *b, dra_doc *doc, dra_buf *out)
{
    dra_err err = b->d.oom ? DRA_ENOMEM : dra_doc_to_json(doc, 0, out);
    dra_arena_fini(&b->a);
    if (err == DRA_OK && out->len && out->p[out->len - 1] == '\n') {
        out->len--; /* the encoder ends documents with a newline */
        out->p[out->len] = '\0';
    }
    return err;
}

static void bld_init(bld *b, const dra_buf *out)
{
    dra_arena_init(&b->a, out->mem);
    b->d.a = &b->a;
    b->d.oom = 0;
}

/* ---- legacy documents --------------------------------------------------- */

dra_err api_disc_api_versions(const char *server_address, dra_buf *out)
{
    bld b;
    bld_init(&b, out);
    dra_doc *doc = dra_docb_map(&b.d), *cidrs;
    dra_docb_set_str(&b.d, doc, "kind", "APIVersions");
    dra_docb_set(&b.d, doc, "versions", csv_list(&b, "v1"));
    if (server_address) {
        dra_doc *one = dra_docb_map(&b.d);
        cidrs = dra_docb_list(&b.d);
        dra_docb_set_str(&b.d, one, "clientCIDR", "0.0.0.0/0");
        dra_docb_set_str(&b.d, one, "serverAddress", server_address);
        dra_docb_push(&b.d, cidrs, one);
    } else {
        cidrs = dra_doc_new_null(&b.a);
        if (!cidrs)
            b.d.oom = 1;
    }
    dra_docb_set(&b.d, doc, "serverAddressByClientCIDRs", cidrs);
    return finish(&b, doc, out);
}

static dra_doc *group_version(bld *b, const char *group, const char *version)
{
    dra_doc *gv = dra_docb_map(&b->d);
    char *s = dra_arena_sprintf(&b->a, "%s/%s", group, version);
    if (!s)
        b->d.oom = 1;
    dra_docb_set_str(&b->d, gv, "groupVersion", s ? s : "");
    dra_docb_set_str(&b->d, gv, "version", version);
    return gv;
}

/* APIGroup for |group| (every served version, preferred first), or NULL
 * when it is not served. */
static dra_doc *api_group(bld *b, const char *group, int typed)
{
    size_t n;
    const api_resource *t = api_resources(&n);
    dra_doc *g = NULL, *versions = NULL, *preferred = NULL;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(t[i].group, group))
            continue;
        int seen = 0;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(t[j].group, group) && !strcmp(t[j].version, t[i].version))
                seen = 1;
        if (seen)
            continue;
        if (!g) {
            g = dra_docb_map(&b->d);
            if (typed) {
                dra_docb_set_str(&b->d, g, "kind", "APIGroup");
                dra_docb_set_str(&b->d, g, "apiVersion", "v1");
            }
            dra_docb_set_str(&b->d, g, "name", group);
            versions = dra_docb_list(&b->d);
        }
        dra_docb_push(&b->d, versions, group_version(b, group, t[i].version));
        if (t[i].preferred && !preferred)
            preferred = group_version(b, group, t[i].version);
    }
    if (!g)
        return NULL;
    dra_docb_set(&b->d, g, "versions", versions);
    if (preferred)
        dra_docb_set(&b->d, g, "preferredVersion", preferred);
    return g;
}

dra_err api_disc_group_list(dra_buf *out)
{
    bld b;
    size_t n;
    const api_resource *t = api_resources(&n);
    bld_init(&b, out);
    dra_doc *doc = dra_docb_map(&b.d), *groups = dra_docb_list(&b.d);
    dra_docb_set_str(&b.d, doc, "kind", "APIGroupList");
    dra_docb_set_str(&b.d, doc, "apiVersion", "v1");
    for (size_t i = 0; i < n; i++) {
        int seen = 0;
        if (!*t[i].group)
            continue;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(t[j].group, t[i].group))
                seen = 1;
        if (!seen)
            dra_docb_push(&b.d, groups, api_group(&b, t[i].group, 0));
    }
    dra_docb_set(&b.d, doc, "groups", groups);
    return finish(&b, doc, out);
}

dra_err api_disc_group(const char *group, dra_buf *out)
{
    bld b;
    if (!group || !*group)
        return DRA_ENOTFOUND;
    bld_init(&b, out);
    dra_doc *g = api_group(&b, group, 1);
    if (!g && !b.d.oom) {
        dra_arena_fini(&b.a);
        return DRA_ENOTFOUND;
    }
    return finish(&b, g, out);
}

static dra_doc *resource_entry(bld *b, const api_resource *r, const subres *sub)
{
    dra_doc *e = dra_docb_map(&b->d);
    if (sub) {
        char *name = dra_arena_sprintf(&b->a, "%s/%s", r->resource, sub->name);
        if (!name)
            b->d.oom = 1;
        dra_docb_set_str(&b->d, e, "name", name ? name : "");
        dra_docb_set_str(&b->d, e, "singularName", "");
    } else {
        dra_docb_set_str(&b->d, e, "name", r->resource);
        dra_docb_set_str(&b->d, e, "singularName", r->singular);
    }
    dra_doc *ns = dra_doc_new_bool(&b->a, r->namespaced);
    if (!ns)
        b->d.oom = 1;
    dra_docb_set(&b->d, e, "namespaced", ns);
    dra_docb_set_str(&b->d, e, "kind", sub && sub->kind ? sub->kind : r->kind);
    dra_docb_set(&b->d, e, "verbs", verb_list(b, sub ? sub->verbs : row_verbs(r)));
    if (!sub && r->short_names)
        dra_docb_set(&b->d, e, "shortNames", csv_list(b, r->short_names));
    if (!sub && r->categories)
        dra_docb_set(&b->d, e, "categories", csv_list(b, r->categories));
    return e;
}

dra_err api_disc_resource_list(const char *group, const char *version, dra_buf *out)
{
    bld b;
    size_t n, found = 0;
    const api_resource *t = api_resources(&n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t[i].group, group) && !strcmp(t[i].version, version))
            found++;
    if (!found)
        return DRA_ENOTFOUND;
    bld_init(&b, out);
    dra_doc *doc = dra_docb_map(&b.d), *res = dra_docb_list(&b.d);
    char *gv = *group ? dra_arena_sprintf(&b.a, "%s/%s", group, version)
                      : dra_arena_strdup(&b.a, version);
    if (!gv)
        b.d.oom = 1;
    dra_docb_set_str(&b.d, doc, "kind", "APIResourceList");
    dra_docb_set_str(&b.d, doc, "apiVersion", "v1");
    dra_docb_set_str(&b.d, doc, "groupVersion", gv ? gv : "");
    for (size_t i = 0; i < n; i++) {
        if (strcmp(t[i].group, group) || strcmp(t[i].version, version))
            continue;
        dra_docb_push(&b.d, res, resource_entry(&b, &t[i], NULL));
        for (size_t k = 0; k < sizeof subs / sizeof subs[0]; k++)
            if (t[i].subresources & subs[k].bit)
                dra_docb_push(&b.d, res, resource_entry(&b, &t[i], &subs[k]));
    }
    dra_docb_set(&b.d, doc, "resources", res);
    return finish(&b, doc, out);
}

/* ---- aggregated documents -------------------------------------------------- */

static dra_doc *response_kind(bld *b, const char *kind)
{
    dra_doc *k = dra_docb_map(&b->d);
    dra_docb_set_str(&b->d, k, "group", "");
    dra_docb_set_str(&b->d, k, "version", "");
    dra_docb_set_str(&b->d, k, "kind", kind);
    return k;
}

static dra_doc *agg_resource(bld *b, const api_resource *r)
{
    dra_doc *e = dra_docb_map(&b->d);
    dra_docb_set_str(&b->d, e, "resource", r->resource);
    dra_docb_set(&b->d, e, "responseKind", response_kind(b, r->kind));
    dra_docb_set_str(&b->d, e, "scope", r->namespaced ? "Namespaced" : "Cluster");
    dra_docb_set_str(&b->d, e, "singularResource", r->singular);
    dra_docb_set(&b->d, e, "verbs", verb_list(b, row_verbs(r)));
    if (r->short_names)
        dra_docb_set(&b->d, e, "shortNames", csv_list(b, r->short_names));
    if (r->categories)
        dra_docb_set(&b->d, e, "categories", csv_list(b, r->categories));
    if (r->subresources) {
        dra_doc *sl = dra_docb_list(&b->d);
        for (size_t k = 0; k < sizeof subs / sizeof subs[0]; k++) {
            if (!(r->subresources & subs[k].bit))
                continue;
            dra_doc *s = dra_docb_map(&b->d);
            dra_docb_set_str(&b->d, s, "subresource", subs[k].name);
            dra_docb_set(&b->d, s, "responseKind", response_kind(b, subs[k].kind ? subs[k].kind : r->kind));
            dra_docb_set(&b->d, s, "verbs", verb_list(b, subs[k].verbs));
            dra_docb_push(&b->d, sl, s);
        }
        dra_docb_set(&b->d, e, "subresources", sl);
    }
    return e;
}

static dra_doc *agg_group(bld *b, const char *group)
{
    size_t n;
    const api_resource *t = api_resources(&n);
    dra_doc *g = dra_docb_map(&b->d), *meta = dra_docb_map(&b->d), *versions = dra_docb_list(&b->d);
    if (*group)
        dra_docb_set_str(&b->d, meta, "name", group);
    dra_doc *null = dra_doc_new_null(&b->a);
    if (!null)
        b->d.oom = 1;
    dra_docb_set(&b->d, meta, "creationTimestamp", null);
    dra_docb_set(&b->d, g, "metadata", meta);
    for (size_t i = 0; i < n; i++) {
        int seen = 0;
        if (strcmp(t[i].group, group))
            continue;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(t[j].group, group) && !strcmp(t[j].version, t[i].version))
                seen = 1;
        if (seen)
            continue;
        dra_doc *v = dra_docb_map(&b->d), *res = dra_docb_list(&b->d);
        dra_docb_set_str(&b->d, v, "version", t[i].version);
        for (size_t j = i; j < n; j++)
            if (!strcmp(t[j].group, group) && !strcmp(t[j].version, t[i].version))
                dra_docb_push(&b->d, res, agg_resource(b, &t[j]));
        dra_docb_set(&b->d, v, "resources", res);
        dra_docb_set_str(&b->d, v, "freshness", "Current");
        dra_docb_push(&b->d, versions, v);
    }
    dra_docb_set(&b->d, g, "versions", versions);
    return g;
}

dra_err api_disc_aggregated(int core, api_disc_format fmt, dra_buf *out)
{
    bld b;
    size_t n;
    const api_resource *t = api_resources(&n);
    if (fmt != API_DISC_V2 && fmt != API_DISC_V2BETA1)
        return DRA_EINVAL;
    bld_init(&b, out);
    dra_doc *doc = dra_docb_map(&b.d), *items = dra_docb_list(&b.d);
    dra_docb_set_str(&b.d, doc, "kind", "APIGroupDiscoveryList");
    dra_docb_set_str(&b.d, doc, "apiVersion", fmt == API_DISC_V2 ? "apidiscovery.k8s.io/v2"
                                                      : "apidiscovery.k8s.io/v2beta1");
    dra_docb_set(&b.d, doc, "metadata", dra_docb_map(&b.d));
    for (size_t i = 0; i < n; i++) {
        int seen = 0;
        if (core != !*t[i].group)
            continue;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(t[j].group, t[i].group))
                seen = 1;
        if (!seen)
            dra_docb_push(&b.d, items, agg_group(&b, t[i].group));
    }
    dra_docb_set(&b.d, doc, "items", items);
    return finish(&b, doc, out);
}
