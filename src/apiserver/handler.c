/*
 * handler.c: dra_apiserver_handle, the I/O-free entry point. It decodes
 * the query string, resolves the path against the resource table
 * (resources.h) into (resource, namespace, name, subresource), reads the
 * Accept header and the write options, and dispatches to the verbs in
 * crud.c, watch.c and pods.c; non-resource paths (discovery, OpenAPI,
 * version, health) are answered here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver_int.h"
#include "discovery.h"
#include "openapi.h"

/* ---- query ---------------------------------------------------------------------- */

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Percent-decodes |n| bytes of |s| (and '+' as space) into |a|. */
static char *unescape(dra_arena *a, const char *s, size_t n)
{
    char *o = dra_arena_alloc(a, n + 1), *p = o;
    if (!o)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        int h, l;
        if (s[i] == '+') {
            *p++ = ' ';
        } else if (s[i] == '%' && i + 2 < n && (h = hexval(s[i + 1])) >= 0 &&
                   (l = hexval(s[i + 2])) >= 0) {
            *p++ = (char)(h * 16 + l);
            i += 2;
        } else {
            *p++ = s[i];
        }
    }
    *p = '\0';
    return o;
}

static dra_err parse_query(api_req *r)
{
    const char *q = r->in->query;
    size_t cap = 1;
    if (!q || !*q)
        return DRA_OK;
    for (const char *p = q; *p; p++)
        cap += *p == '&';
    r->q = dra_arena_array(&r->a, cap, sizeof *r->q);
    if (!r->q)
        return DRA_ENOMEM;
    while (*q) {
        const char *amp = strchr(q, '&'), *eq;
        size_t len = amp ? (size_t)(amp - q) : strlen(q);
        eq = memchr(q, '=', len);
        if (len) {
            api_qparam *qp = &r->q[r->nq++];
            size_t kl = eq ? (size_t)(eq - q) : len;
            qp->key = unescape(&r->a, q, kl);
            qp->val = eq ? unescape(&r->a, eq + 1, len - kl - 1) : "";
            if (!qp->key || !qp->val)
                return DRA_ENOMEM;
        }
        q += len + (amp != NULL);
    }
    return DRA_OK;
}

const char *api_q(const api_req *r, const char *key)
{
    for (size_t i = r->nq; i-- > 0;)
        if (!strcmp(r->q[i].key, key))
            return r->q[i].val;
    return NULL;
}

int api_q_bool(const api_req *r, const char *key, int dflt)
{
    const char *v = api_q(r, key);
    if (!v)
        return dflt;
    return !strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "True") || !*v;
}

/* ---- resources ---------------------------------------------------------------------- */

void api_store_key(const api_resource *s, char *buf, size_t cap)
{
    if (*s->group)
        snprintf(buf, cap, "%s.%s", s->resource, s->group);
    else
        snprintf(buf, cap, "%s", s->resource);
}

const api_resource *api_resource_by_kind(const char *api_version,
                                         const char *kind)
{
    size_t n;
    const api_resource *t = api_resources(&n);
    const char *slash = api_version ? strchr(api_version, '/') : NULL;
    size_t gl = slash ? (size_t)(slash - api_version) : 0;
    if (!api_version || !kind)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(t[i].kind, kind) || strlen(t[i].group) != gl ||
            strncmp(t[i].group, api_version, gl))
            continue;
        return api_resource_storage(&t[i]);
    }
    return NULL;
}

/* ---- non-resource paths ------------------------------------------------------------ */

static dra_err reply_buf(api_req *r, int code, const char *ct, dra_buf *b)
{
    dra_apiserver_resp *o = r->out;
    o->code = code;
    snprintf(o->content_type, sizeof o->content_type, "%s", ct);
    dra_buf_reset(&o->body);
    return b ? dra_buf_append(&o->body, b->p ? b->p : "", b->len) : DRA_OK;
}

static dra_err not_served(api_req *r)
{
    return api_fail(r, 404, "NotFound", NULL, NULL,
                    "the server could not find the requested resource");
}

static dra_err discovery(api_req *r, char **seg, size_t n)
{
    dra_buf b;
    dra_err e = DRA_OK;
    const char *ct = "application/json";
    dra_buf_init(&b, r->srv->mem);
    if (n == 1) {
        api_disc_format f = api_disc_negotiate(r->in->accept, &ct);
        int core = !strcmp(seg[0], "api");
        if (f != API_DISC_LEGACY)
            e = api_disc_aggregated(core, f, &b);
        else if (core)
            e = api_disc_api_versions(r->srv->opts.server_address, &b);
        else
            e = api_disc_group_list(&b);
    } else if (n == 2 && !strcmp(seg[0], "api")) {
        e = api_disc_resource_list("", seg[1], &b);
    } else if (n == 2) {
        e = api_disc_group(seg[1], &b);
    } else {
        e = api_disc_resource_list(seg[1], seg[2], &b);
    }
    if (e == DRA_ENOTFOUND)
        e = not_served(r);
    else if (!e)
        e = reply_buf(r, 200, ct, &b);
    dra_buf_fini(&b);
    return e;
}

static dra_err version(api_req *r)
{
    static const char v[] =
        "{\"major\":\"1\",\"minor\":\"35\",\"emulationMajor\":\"1\","
        "\"emulationMinor\":\"35\",\"minCompatibilityMajor\":\"1\","
        "\"minCompatibilityMinor\":\"34\",\"gitVersion\":\"v1.35.0-dra\","
        "\"gitCommit\":\"\",\"gitTreeState\":\"clean\","
        "\"buildDate\":\"1970-01-01T00:00:00Z\",\"goVersion\":\"c11\","
        "\"compiler\":\"gc\",\"platform\":\"linux/amd64\"}";
    return api_reply(r, 200, v, sizeof v - 1);
}

static dra_err openapi(api_req *r, char **seg, size_t n)
{
    dra_buf b;
    char hash[40];
    dra_err e;
    if (n == 2 && !strcmp(seg[1], "v2")) {
        /* Zero bytes is an empty protobuf OpenAPI v2 document: every
         * kubectl accepts it and then validates nothing client-side. */
        return reply_buf(r, 200, api_openapi_v2_content_type(), NULL);
    }
    if (n < 2 || strcmp(seg[1], "v3"))
        return not_served(r);
    dra_buf_init(&b, r->srv->mem);
    if (n == 2) {
        e = api_openapi_v3_index(&b);
    } else {
        /* /openapi/v3/api/v1 or /openapi/v3/apis/<group>/<version>. */
        dra_buf gv;
        dra_buf_init(&gv, r->srv->mem);
        for (size_t i = 2; i < n; i++)
            dra_buf_printf(&gv, "%s%s", i > 2 ? "/" : "", seg[i]);
        e = gv.oom ? DRA_ENOMEM : api_openapi_v3_doc(gv.p, &b, hash);
        dra_buf_fini(&gv);
        if (!e) {
            const char *want = api_q(r, "hash");
            /* A request naming the current hash may be cached for good;
             * kubectl then stops fetching the document. */
            snprintf(r->out->cache_control, sizeof r->out->cache_control, "%s",
                     want && !strcmp(want, hash) ? "public, immutable"
                                                 : "no-cache, private");
        }
    }
    if (e == DRA_ENOTFOUND || e == DRA_EINVAL)
        e = not_served(r);
    else if (!e)
        e = reply_buf(r, 200, "application/json", &b);
    dra_buf_fini(&b);
    return e;
}

static dra_err non_resource(api_req *r, char **seg, size_t n, int *done)
{
    *done = 1;
    if (!strcmp(seg[0], "version") && n == 1)
        return version(r);
    if (!strcmp(seg[0], "healthz") || !strcmp(seg[0], "readyz") ||
        !strcmp(seg[0], "livez")) {
        dra_err e = reply_buf(r, 200, "text/plain; charset=utf-8", NULL);
        return e ? e : dra_buf_puts(&r->out->body, "ok");
    }
    if (!strcmp(seg[0], "openapi"))
        return openapi(r, seg, n);
    if ((!strcmp(seg[0], "api") && n <= 2) || (!strcmp(seg[0], "apis") && n <= 3))
        return discovery(r, seg, n);
    *done = 0;
    return DRA_OK;
}

/* ---- routing ----------------------------------------------------------------------- */

static size_t split(dra_arena *a, const char *path, char ***out)
{
    size_t cap = 1, n = 0;
    char *copy = dra_arena_strdup(a, path), *save = NULL, *tok;
    for (const char *p = path; *p; p++)
        cap += *p == '/';
    *out = dra_arena_array(a, cap, sizeof **out);
    if (!copy || !*out)
        return (size_t)-1;
    for (tok = strtok_r(copy, "/", &save); tok; tok = strtok_r(NULL, "/", &save))
        (*out)[n++] = tok;
    return n;
}

/* Resolves seg[i..n) (after /api/v1 or /apis/g/v) into the request. */
static dra_err route_resource(api_req *r, const char *group, const char *ver,
                              char **seg, size_t i, size_t n, int *ok)
{
    *ok = 0;
    if (i < n && !strcmp(seg[i], "watch")) {
        r->watch = 1;
        i++;
    }
    r->ns = "";
    if (n - i >= 3 && !strcmp(seg[i], "namespaces") && strcmp(seg[i + 2], "status") &&
        strcmp(seg[i + 2], "finalize")) {
        r->ns = seg[i + 1];
        i += 2;
    }
    if (i >= n || n - i > 3)
        return DRA_OK;
    r->res = api_resource_find(group, ver, seg[i]);
    if (!r->res)
        return DRA_OK;
    r->name = n - i >= 2 ? seg[i + 1] : NULL;
    r->sub = n - i == 3 ? seg[i + 2] : NULL;
    if (*r->ns && !r->res->namespaced)
        return DRA_OK;
    if (r->res->namespaced && !*r->ns) {
        if (r->name)
            return DRA_OK;
        r->all_ns = 1;
    }
    r->sres = api_resource_storage(r->res);
    api_store_key(r->sres, r->skey, sizeof r->skey);
    *ok = 1;
    return DRA_OK;
}

/* Accept: a Table when the client lists it (kubectl puts it first, with
 * plain JSON as the fallback); protobuf alone is refused. */
static int accept_ok(api_req *r)
{
    const char *a = r->in->accept;
    r->table = a && strstr(a, "as=Table") && strstr(a, "g=meta.k8s.io");
    if (!a || !*a)
        return 1;
    return strstr(a, "json") || strstr(a, "*/*") || strstr(a, "yaml");
}

static dra_err write_opts(api_req *r)
{
    const char *fv = api_q(r, "fieldValidation");
    const char *dry = api_q(r, "dryRun");
    r->fv = API_FV_WARN;
    if (fv && !strcmp(fv, "Strict"))
        r->fv = API_FV_STRICT;
    else if (fv && !strcmp(fv, "Ignore"))
        r->fv = API_FV_IGNORE;
    else if (fv && *fv && strcmp(fv, "Warn")) {
        api_bad_request(r, "fieldValidation must be one of \"Ignore\", \"Warn\", "
                           "or \"Strict\", not \"%s\"", fv);
        return DRA_EINVALID;
    }
    if (dry && *dry) {
        if (strcmp(dry, "All")) {
            api_bad_request(r, "dryRun must be \"All\", not \"%s\"", dry);
            return DRA_EINVALID;
        }
        r->dry_run = 1;
    }
    return DRA_OK;
}

static dra_err method_not_allowed(api_req *r)
{
    return api_fail(r, 405, "MethodNotAllowed", NULL, NULL,
                    "the server does not allow this method on the requested "
                    "resource");
}

static dra_err dispatch_sub(api_req *r, const char *m)
{
    unsigned subs = r->res->subresources;
    if (!strcmp(r->sub, "status") && (subs & API_SUB_STATUS)) {
        if (!strcmp(m, "GET"))
            return api_get(r);
        if (!strcmp(m, "PUT"))
            return api_update(r);
        if (!strcmp(m, "PATCH"))
            return api_patch(r);
        return method_not_allowed(r);
    }
    if (!strcmp(r->sub, "binding") && (subs & API_SUB_BINDING))
        return !strcmp(m, "POST") ? api_pod_binding(r) : method_not_allowed(r);
    if (!strcmp(r->sub, "log") && (subs & API_SUB_LOG))
        return !strcmp(m, "GET") ? api_pod_log(r) : method_not_allowed(r);
    return not_served(r);
}

static dra_err dispatch(api_req *r)
{
    const char *m = r->in->method ? r->in->method : "";
    int get = !strcmp(m, "GET") || !strcmp(m, "HEAD");
    if (!accept_ok(r))
        return api_fail(r, 406, "NotAcceptable", NULL, NULL,
                        "only the following media types are accepted: "
                        "application/json, application/yaml");
    if (write_opts(r))
        return DRA_OK;
    if (!r->res->preferred) {
        /* Served through conversion: everything below works on the
         * storage version; objects convert in and out. */
        r->conv = r->res->version;
        r->res = r->sres;
    }
    if (r->sub)
        return dispatch_sub(r, m);
    if (r->watch && !(get && !r->name))
        return method_not_allowed(r);
    if (!r->name) {
        if (get)
            return r->watch || api_q_bool(r, "watch", 0) ? api_watch(r) : api_list(r);
        if (!strcmp(m, "POST"))
            return r->all_ns ? not_served(r) : api_create(r);
        if (!strcmp(m, "DELETE"))
            return r->all_ns ? not_served(r) : api_delete_collection(r);
        return method_not_allowed(r);
    }
    if (get)
        return api_get(r);
    if (!strcmp(m, "PUT"))
        return api_update(r);
    if (!strcmp(m, "PATCH"))
        return api_patch(r);
    if (!strcmp(m, "DELETE"))
        return api_delete(r);
    return method_not_allowed(r);
}

static dra_err route(api_req *r)
{
    char **seg;
    size_t n = split(&r->a, r->in->path ? r->in->path : "/", &seg);
    int done = 0, ok = 0;
    dra_err e;
    if (n == (size_t)-1)
        return DRA_ENOMEM;
    if (n == 0) {
        static const char paths[] =
            "{\"paths\":[\"/api\",\"/api/v1\",\"/apis\",\"/apis/resource.k8s.io\","
            "\"/apis/resource.k8s.io/v1\",\"/apis/resource.k8s.io/v1beta1\","
            "\"/apis/resource.k8s.io/v1beta2\",\"/healthz\",\"/livez\","
            "\"/openapi/v2\",\"/openapi/v3\",\"/readyz\",\"/version\"]}";
        return api_reply(r, 200, paths, sizeof paths - 1);
    }
    if ((e = non_resource(r, seg, n, &done)) || done)
        return e;
    if (!strcmp(seg[0], "api") && n > 2)
        e = route_resource(r, "", seg[1], seg, 2, n, &ok);
    else if (!strcmp(seg[0], "apis") && n > 3)
        e = route_resource(r, seg[1], seg[2], seg, 3, n, &ok);
    if (e)
        return e;
    if (!ok)
        return not_served(r);
    return dispatch(r);
}

/* An in-process body given as a document: a POST or PUT of JSON takes
 * a copy of it, what reading its JSON text would have built (a body
 * within the size limit, so the 413 check below cannot differ). Anything
 * else is DRA_EUNSUPPORTED, and the caller sends the text. */
static dra_err take_body_doc(api_req *r)
{
    const dra_apiserver_req *in = r->in;
    if (in->body || in->body_len || !in->method ||
        (strcmp(in->method, "POST") && strcmp(in->method, "PUT")) ||
        (in->content_type && strcmp(in->content_type, "application/json")))
        return DRA_EUNSUPPORTED;
    return dra_doc_copy_json(&r->a, in->body_doc, r->srv->opts.max_body, &r->body_doc);
}

dra_err dra_apiserver_handle(dra_apiserver *srv, const dra_apiserver_req *req,
                             dra_apiserver_resp *resp)
{
    api_req r;
    dra_err e;
    memset(&r, 0, sizeof r);
    r.srv = srv;
    r.in = req;
    r.out = resp;
    resp->cache_control[0] = '\0';
    dra_arena_init(&r.a, srv->mem);
    if (req->body_doc && (e = take_body_doc(&r))) {
        dra_arena_fini(&r.a);
        return e;
    }
    resp->code = 500;
    resp->warning[0] = '\0';
    if (req->body_len > srv->opts.max_body) {
        e = api_fail(&r, 413, "RequestEntityTooLarge", NULL, NULL,
                     "Request entity too large: limit is %zu",
                     srv->opts.max_body);
    } else if (!(e = parse_query(&r))) {
        e = route(&r);
    }
    /* A handler that failed without answering is a bug, but the client
     * still gets a Status saying so, never an empty 500. */
    if (e && e != DRA_ENOMEM && !resp->body.len && !resp->stream)
        e = api_fail(&r, 500, "InternalError", NULL, NULL,
                     "Internal error occurred: the request failed without an "
                     "answer (%s)", dra_errname(e));
    dra_arena_fini(&r.a);
    if (e == DRA_ENOMEM) {
        static const char oom[] =
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
            "\"status\":\"Failure\",\"message\":\"out of memory\","
            "\"reason\":\"InternalError\",\"code\":500}";
        resp->code = 500;
        dra_buf_reset(&resp->body);
        snprintf(resp->content_type, sizeof resp->content_type, "application/json");
        if (dra_buf_append(&resp->body, oom, sizeof oom - 1))
            return DRA_ENOMEM;
    }
    return DRA_OK;
}
