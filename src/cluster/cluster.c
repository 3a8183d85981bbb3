/*
 * cluster.c: the generic half of every cluster client. Builds REST paths
 * and query strings, hands one HTTP-shaped request to the transport
 * (REST or in process), decodes the answer: the object on 2xx, the
 * Kubernetes Status (or client-go's wording when there is none) and the
 * mapped dra_err otherwise. Verbs (get, list, create, ...) sit on top.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cluster_int.h"

/* ---- errors ----------------------------------------------------------- */

void dra_kstatus_set(dra_kstatus *st, int code, const char *reason,
                     const char *fmt, ...)
{
    va_list ap;
    if (!st)
        return;
    st->code = code;
    snprintf(st->reason, sizeof st->reason, "%s", reason);
    va_start(ap, fmt);
    vsnprintf(st->message, sizeof st->message, fmt, ap);
    va_end(ap);
}

dra_err dra_cluster_code_err(int code, const char *reason)
{
    if (code >= 200 && code < 300)
        return DRA_OK;
    switch (code) {
    case 400: return DRA_EINVAL;
    case 401: return DRA_EUNAUTHORIZED;
    case 403: return DRA_EFORBIDDEN;
    case 404: return DRA_ENOTFOUND;
    case 405: return DRA_EUNSUPPORTED;
    case 409:
        return reason && strcmp(reason, "AlreadyExists") == 0 ? DRA_EEXIST
                                                              : DRA_ECONFLICT;
    case 410: return DRA_EGONE;
    case 413: return DRA_ETOOLARGE;
    case 415: return DRA_EUNSUPPORTED;
    case 422: return DRA_EINVALID;
    case 429: return DRA_EUNAVAILABLE;
    case 504: return DRA_ETIMEOUT;
    default:
        return code >= 500 && code < 600 ? DRA_EUNAVAILABLE : DRA_EIO;
    }
}

/* metav1.StatusReason for a code, as apimachinery's
 * NewGenericServerResponse picks it for answers without a Status. */
static const char *reason_for_code(int code, const char *method)
{
    switch (code) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 406: return "NotAcceptable";
    case 409:
        return method && strcmp(method, "POST") == 0 ? "AlreadyExists"
                                                     : "Conflict";
    case 410: return "Gone";
    case 413: return "RequestEntityTooLarge";
    case 415: return "UnsupportedMediaType";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    case 503: return "ServiceUnavailable";
    case 504: return "Timeout";
    default: return code >= 500 ? "InternalError" : "";
    }
}

/* The message client-go gives an error answer that carries no Status
 * (apimachinery NewGenericServerResponse); |text| is the raw body. */
static void generic_message(dra_kstatus *st, int code, const char *text,
                            size_t len)
{
    const char *m = NULL;
    int n = len > 512 ? 512 : (int)len;
    switch (code) {
    case 409: m = "the server reported a conflict"; break;
    case 404: m = "the server could not find the requested resource"; break;
    case 400: m = "the server rejected our request for an unknown reason"; break;
    case 401: m = "the server has asked for the client to provide credentials"; break;
    case 405: m = "the server does not allow this method on the requested resource"; break;
    case 422: m = "the server rejected our request due to an error in our request"; break;
    case 503: m = "the server is currently unable to handle the request"; break;
    case 504:
        m = "the server was unable to return a response in the time allotted, "
            "but may still be processing the request";
        break;
    case 429:
        m = "the server has received too many requests and has asked us to "
            "try again later";
        break;
    case 403: case 406: case 415:
        snprintf(st->message, sizeof st->message, "%.*s", n, text ? text : "");
        return;
    default:
        if (code >= 500) {
            snprintf(st->message, sizeof st->message,
                     "an error on the server (\"%.*s\") has prevented the "
                     "request from succeeding", n, text ? text : "");
            return;
        }
    }
    if (m)
        snprintf(st->message, sizeof st->message, "%s", m);
    else
        snprintf(st->message, sizeof st->message,
                 "the server responded with the status code %d but did not "
                 "return more information", code);
}

static void copy_str(char *dst, size_t size, const dra_doc *v)
{
    if (v && v->kind == DRA_DOC_STRING)
        snprintf(dst, size, "%s", v->u.str.s);
}

dra_err dra_cluster_status_doc(const dra_doc *status, int code,
                               const char *method, dra_kstatus *st)
{
    dra_kstatus local;
    const dra_doc *k = dra_doc_get(status, "kind");
    const dra_doc *c = dra_doc_get(status, "code");
    if (!st)
        st = &local;
    memset(st, 0, sizeof *st);
    if (c && c->kind == DRA_DOC_INT && c->u.i > 0 && c->u.i < 1000 &&
        code == 0)
        code = (int)c->u.i;
    st->code = code;
    if (k && k->kind == DRA_DOC_STRING && strcmp(k->u.str.s, "Status") == 0) {
        copy_str(st->reason, sizeof st->reason, dra_doc_get(status, "reason"));
        copy_str(st->message, sizeof st->message,
                 dra_doc_get(status, "message"));
    } else {
        generic_message(st, code, NULL, 0);
    }
    if (!st->reason[0])
        snprintf(st->reason, sizeof st->reason, "%s",
                 reason_for_code(code, method));
    if (!st->message[0])
        generic_message(st, code, NULL, 0);
    return dra_cluster_code_err(code, st->reason);
}

dra_err dra_cluster_status_decode(int code, const char *method,
                                  const char *body, size_t len,
                                  const dra_mem *mem, dra_kstatus *st)
{
    dra_arena a;
    dra_doc *doc = NULL;
    dra_kstatus local;
    dra_err err;
    if (!st)
        st = &local;
    dra_arena_init(&a, mem);
    if (body && len &&
        dra_doc_parse_json(&a, body, len, &doc, NULL) == DRA_OK &&
        doc->kind == DRA_DOC_MAP && dra_doc_get(doc, "kind") &&
        dra_doc_get(doc, "kind")->kind == DRA_DOC_STRING &&
        strcmp(dra_doc_get(doc, "kind")->u.str.s, "Status") == 0) {
        err = dra_cluster_status_doc(doc, code, method, st);
    } else {
        memset(st, 0, sizeof *st);
        st->code = code;
        snprintf(st->reason, sizeof st->reason, "%s",
                 reason_for_code(code, method));
        generic_message(st, code, body, body ? len : 0);
        err = dra_cluster_code_err(code, st->reason);
    }
    dra_arena_fini(&a);
    return err;
}

void cluster_st_transport(dra_kstatus *st, dra_err err)
{
    if (!st)
        return;
    st->code = 0;
    if (!st->message[0])
        snprintf(st->message, sizeof st->message, "%s", dra_strerror(err));
}

/* ---- lifecycle -------------------------------------------------------- */

dra_cluster *dra_cluster_new(const dra_cluster_ops *ops, void *ud,
                             const dra_mem *mem)
{
    dra_cluster *c;
    if (!ops || !ops->request)
        return NULL;
    c = dra_calloc(mem, 1, sizeof *c);
    if (!c)
        return NULL;
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        dra_free(mem, c);
        return NULL;
    }
    c->ops = *ops;
    c->ud = ud;
    c->mem = mem;
    return c;
}

void dra_cluster_set_doc_request(dra_cluster *c, dra_cluster_doc_request fn)
{
    if (c)
        c->doc_request = fn;
}

void dra_cluster_free(dra_cluster *c)
{
    if (!c)
        return;
    if (c->ops.close)
        c->ops.close(c->ud);
    cluster_events_fini(c);
    pthread_mutex_destroy(&c->lock);
    dra_free(c->mem, c);
}

/* ---- paths and queries ------------------------------------------------ */

dra_err dra_cluster_path(dra_buf *out, const dra_gvr *r, const char *ns,
                         const char *name, const char *sub)
{
    size_t mark = out->len;
    if (!r || !r->version || !r->resource)
        return DRA_EINVAL;
    /* Every request builds one: appends, not printf. */
    if (!r->group || !r->group[0]) {
        dra_buf_puts(out, "/api/");
    } else {
        dra_buf_puts(out, "/apis/");
        dra_buf_puts(out, r->group);
        dra_buf_putc(out, '/');
    }
    dra_buf_puts(out, r->version);
    if (ns && ns[0]) {
        dra_buf_puts(out, "/namespaces/");
        dra_buf_puts(out, ns);
    }
    dra_buf_putc(out, '/');
    dra_buf_puts(out, r->resource);
    if (name && name[0]) {
        dra_buf_putc(out, '/');
        dra_buf_puts(out, name);
    }
    if (name && name[0] && sub && sub[0]) {
        dra_buf_putc(out, '/');
        dra_buf_puts(out, sub);
    }
    if (out->oom) {
        out->oom = 0;
        out->len = mark;
        if (out->p)
            out->p[mark] = '\0';
        return DRA_ENOMEM;
    }
    return DRA_OK;
}

static int unreserved(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_' ||
           ch == '~';
}

dra_err cluster_query_add(dra_buf *q, const char *key, const char *value)
{
    static const char hex[] = "0123456789ABCDEF";
    if (!value)
        return DRA_OK;
    if (q->len)
        dra_buf_putc(q, '&');
    dra_buf_puts(q, key);
    dra_buf_putc(q, '=');
    for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
        if (unreserved(*p)) {
            dra_buf_putc(q, (char)*p);
        } else {
            char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            dra_buf_append(q, e, 3);
        }
    }
    return q->oom ? DRA_ENOMEM : DRA_OK;
}

dra_err cluster_query_list(dra_buf *q, const dra_list_opts *o, int watch)
{
    char num[32];
    if (watch)
        cluster_query_add(q, "watch", "true");
    if (!o)
        return q->oom ? DRA_ENOMEM : DRA_OK;
    if (o->label_selector && o->label_selector[0])
        cluster_query_add(q, "labelSelector", o->label_selector);
    if (o->field_selector && o->field_selector[0])
        cluster_query_add(q, "fieldSelector", o->field_selector);
    if (o->resource_version && o->resource_version[0])
        cluster_query_add(q, "resourceVersion", o->resource_version);
    if (o->resource_version_match && o->resource_version_match[0])
        cluster_query_add(q, "resourceVersionMatch",
                          o->resource_version_match);
    if (!watch && o->limit > 0) {
        snprintf(num, sizeof num, "%lld", (long long)o->limit);
        cluster_query_add(q, "limit", num);
    }
    if (!watch && o->continue_ && o->continue_[0])
        cluster_query_add(q, "continue", o->continue_);
    if (watch && o->allow_bookmarks)
        cluster_query_add(q, "allowWatchBookmarks", "true");
    if (watch && o->timeout_seconds > 0) {
        snprintf(num, sizeof num, "%d", o->timeout_seconds);
        cluster_query_add(q, "timeoutSeconds", num);
    }
    return q->oom ? DRA_ENOMEM : DRA_OK;
}

/* ---- one request ------------------------------------------------------ */

static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\n' && s[i] != '\r' && s[i] != '\t')
            return 0;
    return 1;
}

static dra_err decode_ok(dra_buf *body, int code, dra_arena *a,
                         dra_doc **out, dra_kstatus *st)
{
    dra_diag d;
    dra_err err;
    if (!out)
        return DRA_OK;
    if (!body->len || blank(body->p, body->len))
        return DRA_OK;
    if (!a)
        return DRA_EINVAL;
    dra_diag_init(&d, body->mem);
    err = dra_doc_parse_json(a, body->p, body->len, out, &d);
    if (err != DRA_OK && st) {
        st->code = code;
        snprintf(st->message, sizeof st->message,
                 "invalid JSON in the server's answer: %s",
                 dra_diag_first(&d) ? dra_diag_first(&d) : dra_strerror(err));
    }
    dra_diag_fini(&d);
    if (err == DRA_ENOMEM)
        return err;
    return err == DRA_OK ? DRA_OK : DRA_EPARSE;
}

/* One request through the transport: the text of |req|, or |doc| as the
 * body through doc_request (DRA_EUNSUPPORTED when it does not take it:
 * nothing was sent, |st| untouched). */
static dra_err cluster_request(dra_cluster *c, const dra_cluster_req *req,
                               const dra_doc *doc, dra_arena *a,
                               dra_doc **out, dra_kstatus *st)
{
    dra_kstatus local;
    dra_buf body;
    int code = 0;
    dra_err err;
    if (out)
        *out = NULL;
    if (!st)
        st = &local;
    if (!doc)
        memset(st, 0, sizeof *st);
    if (!c || !req || !req->method || !req->path)
        return DRA_EINVAL;
    dra_buf_init(&body, c->mem);
    if (doc) {
        dra_kstatus mine;
        dra_doc *got = NULL;
        memset(&mine, 0, sizeof mine);
        err = c->doc_request(c->ud, req, doc, out ? a : NULL, &code, &body, &got, &mine);
        if (err == DRA_EUNSUPPORTED) {
            dra_buf_fini(&body);
            return err;
        }
        *st = mine;
        if (err == DRA_OK && got && code >= 200 && code < 300) {
            st->code = code;
            *out = got;
            dra_buf_fini(&body);
            return DRA_OK;
        }
    } else {
        err = c->ops.request(c->ud, req, &code, &body, st);
    }
    if (err != DRA_OK) {
        cluster_st_transport(st, err);
    } else if (body.oom) {
        err = DRA_ENOMEM;
    } else if (code >= 200 && code < 300) {
        st->code = code;
        err = decode_ok(&body, code, a, out, st);
    } else {
        err = dra_cluster_status_decode(code, req->method, body.p, body.len,
                                        c->mem, st);
        if (err == DRA_OK) /* a 1xx or 3xx that reached us */
            err = DRA_EIO;
    }
    dra_buf_fini(&body);
    return err;
}

dra_err dra_cluster_do(dra_cluster *c, const dra_cluster_req *req,
                       dra_arena *a, dra_doc **out, dra_kstatus *st)
{
    return cluster_request(c, req, NULL, a, out, st);
}

dra_err cluster_send_doc(dra_cluster *c, const char *method,
                         const char *path, const char *query,
                         const char *ctype, const dra_doc *doc, dra_arena *a,
                         dra_doc **out, dra_kstatus *st)
{
    dra_buf json;
    dra_cluster_req req = {method, path, query, ctype, NULL, 0};
    dra_err err = DRA_OK;
    if (doc && c->doc_request) {
        err = cluster_request(c, &req, doc, a, out, st);
        if (err != DRA_EUNSUPPORTED)
            return err;
        err = DRA_OK;
    }
    dra_buf_init(&json, c->mem);
    if (doc) {
        err = dra_doc_to_json(doc, 0, &json);
        req.body = json.p;
        req.body_len = json.len;
    }
    if (err == DRA_OK)
        err = dra_cluster_do(c, &req, a, out, st);
    else if (st)
        snprintf(st->message, sizeof st->message,
                 "cannot encode the request body: %s", dra_strerror(err));
    dra_buf_fini(&json);
    return err;
}

/* ---- verbs ------------------------------------------------------------ */

/* The path and the query string of one request. */
typedef struct cluster_url {
    dra_buf path, query;
} cluster_url;

static void url_init(cluster_url *u, dra_cluster *c)
{
    dra_buf_init(&u->path, c->mem);
    dra_buf_init(&u->query, c->mem);
}

static void url_fini(cluster_url *u)
{
    dra_buf_fini(&u->path);
    dra_buf_fini(&u->query);
}

static dra_err verb_fail(dra_kstatus *st, dra_err err)
{
    if (st) {
        memset(st, 0, sizeof *st);
        snprintf(st->message, sizeof st->message, "%s", dra_strerror(err));
    }
    return err;
}

dra_err dra_cluster_get(dra_cluster *c, const dra_gvr *r, const char *ns,
                        const char *name, dra_arena *a, dra_doc **out,
                        dra_kstatus *st)
{
    cluster_url u;
    dra_err err;
    if (!c || !name || !name[0])
        return verb_fail(st, DRA_EINVAL);
    url_init(&u, c);
    err = dra_cluster_path(&u.path, r, ns, name, NULL);
    if (err == DRA_OK) {
        dra_cluster_req req = {"GET", u.path.p, NULL, NULL, NULL, 0};
        err = dra_cluster_do(c, &req, a, out, st);
    } else {
        verb_fail(st, err);
    }
    url_fini(&u);
    return err;
}

dra_err dra_cluster_list(dra_cluster *c, const dra_gvr *r, const char *ns,
                         const dra_list_opts *opts, dra_arena *a,
                         dra_doc **out, dra_kstatus *st)
{
    cluster_url u;
    dra_err err;
    if (!c)
        return verb_fail(st, DRA_EINVAL);
    url_init(&u, c);
    err = dra_cluster_path(&u.path, r, ns, NULL, NULL);
    if (err == DRA_OK)
        err = cluster_query_list(&u.query, opts, 0);
    if (err == DRA_OK) {
        dra_cluster_req req = {"GET", u.path.p,
                               u.query.len ? u.query.p : NULL, NULL, NULL, 0};
        err = dra_cluster_do(c, &req, a, out, st);
    } else {
        verb_fail(st, err);
    }
    url_fini(&u);
    return err;
}

/* Drops metadata.continue and metadata.remainingItemCount from a list
 * that now holds every page. */
static void strip_paging(dra_doc *list)
{
    dra_doc *md = (dra_doc *)dra_doc_get(list, "metadata");
    size_t j = 0;
    if (!md || md->kind != DRA_DOC_MAP)
        return;
    for (size_t i = 0; i < md->u.map.n; i++) {
        const char *k = md->u.map.m[i].key;
        if (strcmp(k, "continue") != 0 && strcmp(k, "remainingItemCount") != 0)
            md->u.map.m[j++] = md->u.map.m[i];
    }
    md->u.map.n = j;
}

static const char *list_meta_str(const dra_doc *list, const char *key)
{
    const dra_doc *v = dra_doc_get(dra_doc_get(list, "metadata"), key);
    return v && v->kind == DRA_DOC_STRING ? v->u.str.s : NULL;
}

/* Appends the items of |page| to the "items" list of |first|. */
static dra_err append_items(dra_arena *a, dra_doc *first, const dra_doc *page)
{
    dra_doc *items = (dra_doc *)dra_doc_get(first, "items");
    const dra_doc *more = dra_doc_get(page, "items");
    if (!more || more->kind != DRA_DOC_LIST || !more->u.list.n)
        return DRA_OK;
    if (!items || items->kind != DRA_DOC_LIST) {
        items = dra_doc_new_list(a, more->u.list.n);
        if (!items || dra_doc_map_set(a, first, "items", items) != DRA_OK)
            return DRA_ENOMEM;
    }
    for (size_t i = 0; i < more->u.list.n; i++)
        if (dra_doc_list_push(a, items, more->u.list.items[i]) != DRA_OK)
            return DRA_ENOMEM;
    return DRA_OK;
}

/* Items of a list usually omit apiVersion and kind (kube-apiserver
 * leaves them out); give them the list's, as kubectl does, so that each
 * item decodes on its own. */
static dra_err fill_item_kinds(dra_arena *a, dra_doc *list)
{
    const dra_doc *k = dra_doc_get(list, "kind"),
                  *av = dra_doc_get(list, "apiVersion"),
                  *items = dra_doc_get(list, "items");
    char *kind;
    if (!k || k->kind != DRA_DOC_STRING || k->u.str.len <= 4 ||
        strcmp(k->u.str.s + k->u.str.len - 4, "List") != 0 || !items ||
        items->kind != DRA_DOC_LIST)
        return DRA_OK;
    kind = dra_arena_strndup(a, k->u.str.s, k->u.str.len - 4);
    if (!kind)
        return DRA_ENOMEM;
    for (size_t i = 0; i < items->u.list.n; i++) {
        dra_doc *it = items->u.list.items[i];
        dra_err err = DRA_OK;
        if (it->kind != DRA_DOC_MAP)
            continue;
        if (!dra_doc_get(it, "kind"))
            err = cluster_set_str(a, it, "kind", kind);
        if (!err && !dra_doc_get(it, "apiVersion") && av &&
            av->kind == DRA_DOC_STRING)
            err = cluster_set_str(a, it, "apiVersion", av->u.str.s);
        if (err)
            return err;
    }
    return DRA_OK;
}

dra_err dra_cluster_list_all(dra_cluster *c, const dra_gvr *r,
                             const char *ns, const dra_list_opts *opts,
                             dra_arena *a, dra_doc **out, const char **rv,
                             dra_kstatus *st)
{
    dra_list_opts o;
    dra_doc *first = NULL, *page = NULL;
    int restarted = 0;
    dra_err err;
    if (out)
        *out = NULL;
    if (rv)
        *rv = NULL;
    if (!c || !a)
        return verb_fail(st, DRA_EINVAL);
    memset(&o, 0, sizeof o);
    if (opts)
        o = *opts;
    if (o.limit <= 0)
        o.limit = 500;
    for (;;) {
        const char *cont;
        err = dra_cluster_list(c, r, ns, &o, a, &page, st);
        if (err == DRA_EGONE && first && !restarted) {
            /* The continue token expired: fall back to one full list,
             * as client-go's pager does. */
            restarted = 1;
            first = NULL;
            o.limit = 0;
            o.continue_ = NULL;
            o.resource_version = opts ? opts->resource_version : NULL;
            o.resource_version_match = opts ? opts->resource_version_match
                                            : NULL;
            continue;
        }
        if (err != DRA_OK)
            return err;
        if (!page || page->kind != DRA_DOC_MAP) {
            if (st)
                snprintf(st->message, sizeof st->message,
                         "the server's list answer is not an object");
            return DRA_EPARSE;
        }
        if (!first)
            first = page;
        else if ((err = append_items(a, first, page)) != DRA_OK)
            return verb_fail(st, err);
        cont = list_meta_str(page, "continue");
        if (!cont || !cont[0] || o.limit == 0)
            break;
        o.continue_ = cont;
        /* A continued list must not name a resourceVersion (400). */
        o.resource_version = NULL;
        o.resource_version_match = NULL;
    }
    strip_paging(first);
    if ((err = fill_item_kinds(a, first)) != DRA_OK)
        return verb_fail(st, err);
    if (rv)
        *rv = list_meta_str(first, "resourceVersion");
    if (out)
        *out = first;
    return DRA_OK;
}

dra_err dra_cluster_create(dra_cluster *c, const dra_gvr *r, const char *ns,
                           const dra_doc *obj, dra_arena *a, dra_doc **out,
                           dra_kstatus *st)
{
    cluster_url u;
    dra_err err;
    if (out)
        *out = NULL;
    if (!c || !obj)
        return verb_fail(st, DRA_EINVAL);
    url_init(&u, c);
    err = dra_cluster_path(&u.path, r, ns, NULL, NULL);
    if (err == DRA_OK)
        err = cluster_send_doc(c, "POST", u.path.p, NULL, NULL, obj, a, out,
                               st);
    else
        verb_fail(st, err);
    url_fini(&u);
    return err;
}

dra_err dra_cluster_update(dra_cluster *c, const dra_gvr *r, const char *ns,
                           const char *name, const char *sub,
                           const dra_doc *obj, dra_arena *a, dra_doc **out,
                           dra_kstatus *st)
{
    cluster_url u;
    dra_err err;
    if (out)
        *out = NULL;
    if (!c || !obj || !name || !name[0])
        return verb_fail(st, DRA_EINVAL);
    url_init(&u, c);
    err = dra_cluster_path(&u.path, r, ns, name, sub);
    if (err == DRA_OK)
        err = cluster_send_doc(c, "PUT", u.path.p, NULL, NULL, obj, a, out,
                               st);
    else
        verb_fail(st, err);
    url_fini(&u);
    return err;
}

const char *dra_patch_content_type(dra_patch_type t)
{
    switch (t) {
    case DRA_PATCH_STRATEGIC: return "application/strategic-merge-patch+json";
    case DRA_PATCH_JSON: return "application/json-patch+json";
    case DRA_PATCH_APPLY: return "application/apply-patch+yaml";
    case DRA_PATCH_MERGE:
    default: return "application/merge-patch+json";
    }
}

dra_err dra_cluster_patch(dra_cluster *c, const dra_gvr *r, const char *ns,
                          const char *name, const char *sub,
                          dra_patch_type t, const char *patch, size_t len,
                          const char *field_manager, dra_arena *a,
                          dra_doc **out, dra_kstatus *st)
{
    cluster_url u;
    dra_err err;
    if (out)
        *out = NULL;
    if (!c || !name || !name[0] || !patch ||
        (t == DRA_PATCH_APPLY && (!field_manager || !field_manager[0])))
        return verb_fail(st, DRA_EINVAL);
    url_init(&u, c);
    err = dra_cluster_path(&u.path, r, ns, name, sub);
    if (err == DRA_OK && field_manager && field_manager[0])
        err = cluster_query_add(&u.query, "fieldManager", field_manager);
    if (err == DRA_OK) {
        dra_cluster_req req = {"PATCH", u.path.p,
                               u.query.len ? u.query.p : NULL,
                               dra_patch_content_type(t), patch, len};
        err = dra_cluster_do(c, &req, a, out, st);
    } else {
        verb_fail(st, err);
    }
    url_fini(&u);
    return err;
}

dra_err cluster_set_str(dra_arena *a, dra_doc *map, const char *key,
                        const char *val)
{
    dra_doc *v;
    if (!val)
        return DRA_OK;
    v = dra_doc_new_string(a, val, strlen(val));
    return v ? dra_doc_map_set(a, map, key, v) : DRA_ENOMEM;
}

/* metav1.DeleteOptions as a document; NULL on ENOMEM. */
static dra_doc *delete_options(dra_arena *a, const dra_delete_opts *o)
{
    dra_doc *d = dra_doc_new_map(a, 6);
    dra_err err = d ? DRA_OK : DRA_ENOMEM;
    if (!err)
        err = cluster_set_str(a, d, "kind", "DeleteOptions");
    if (!err)
        err = cluster_set_str(a, d, "apiVersion", "v1");
    if (!err && o->grace_period_set) {
        dra_doc *g = dra_doc_new_int(a, o->grace_period_seconds);
        err = g ? dra_doc_map_set(a, d, "gracePeriodSeconds", g) : DRA_ENOMEM;
    }
    if (!err && (o->precondition_uid || o->precondition_rv)) {
        dra_doc *p = dra_doc_new_map(a, 2);
        err = p ? DRA_OK : DRA_ENOMEM;
        if (!err)
            err = cluster_set_str(a, p, "uid", o->precondition_uid);
        if (!err)
            err = cluster_set_str(a, p, "resourceVersion", o->precondition_rv);
        if (!err)
            err = dra_doc_map_set(a, d, "preconditions", p);
    }
    if (!err)
        err = cluster_set_str(a, d, "propagationPolicy", o->propagation_policy);
    return err ? NULL : d;
}

dra_err dra_cluster_delete(dra_cluster *c, const dra_gvr *r, const char *ns,
                           const char *name, const dra_delete_opts *opts,
                           dra_arena *a, dra_doc **out, dra_kstatus *st)
{
    cluster_url u;
    dra_arena tmp;
    dra_doc *body = NULL;
    dra_err err;
    if (out)
        *out = NULL;
    if (!c || !name || !name[0])
        return verb_fail(st, DRA_EINVAL);
    url_init(&u, c);
    dra_arena_init(&tmp, c->mem);
    err = dra_cluster_path(&u.path, r, ns, name, NULL);
    if (err == DRA_OK && opts && !(body = delete_options(&tmp, opts)))
        err = DRA_ENOMEM;
    if (err == DRA_OK)
        err = cluster_send_doc(c, "DELETE", u.path.p, NULL, NULL, body, a,
                               out, st);
    else
        verb_fail(st, err);
    dra_arena_fini(&tmp);
    url_fini(&u);
    return err;
}

/* core/v1 Binding of pod |ns|/|pod| (uid precondition |uid|) to |node|. */
static dra_doc *binding_doc(dra_arena *a, const char *ns, const char *pod,
                            const char *uid, const char *node)
{
    dra_doc *b = dra_doc_new_map(a, 4), *md = dra_doc_new_map(a, 3),
            *t = dra_doc_new_map(a, 3);
    dra_err err = b && md && t ? DRA_OK : DRA_ENOMEM;
    if (!err)
        err = cluster_set_str(a, b, "kind", "Binding");
    if (!err)
        err = cluster_set_str(a, b, "apiVersion", "v1");
    if (!err)
        err = cluster_set_str(a, md, "name", pod);
    if (!err)
        err = cluster_set_str(a, md, "namespace", ns);
    if (!err && uid && uid[0])
        err = cluster_set_str(a, md, "uid", uid);
    if (!err)
        err = dra_doc_map_set(a, b, "metadata", md);
    if (!err)
        err = cluster_set_str(a, t, "kind", "Node");
    if (!err)
        err = cluster_set_str(a, t, "apiVersion", "v1");
    if (!err)
        err = cluster_set_str(a, t, "name", node);
    if (!err)
        err = dra_doc_map_set(a, b, "target", t);
    return err ? NULL : b;
}

dra_err dra_cluster_bind(dra_cluster *c, const char *ns, const char *pod,
                         const char *uid, const char *node, dra_kstatus *st)
{
    dra_gvr pods = DRA_GVR_PODS;
    cluster_url u;
    dra_arena tmp;
    dra_doc *b;
    dra_err err;
    if (!c || !ns || !ns[0] || !pod || !pod[0] || !node || !node[0])
        return verb_fail(st, DRA_EINVAL);
    url_init(&u, c);
    dra_arena_init(&tmp, c->mem);
    err = dra_cluster_path(&u.path, &pods, ns, pod, "binding");
    b = err ? NULL : binding_doc(&tmp, ns, pod, uid, node);
    if (!err && !b)
        err = DRA_ENOMEM;
    if (err == DRA_OK)
        err = cluster_send_doc(c, "POST", u.path.p, NULL, NULL, b, &tmp, NULL,
                               st);
    else
        verb_fail(st, err);
    dra_arena_fini(&tmp);
    url_fini(&u);
    return err;
}

/* client-go's retry.DefaultRetry: 5 steps of 10 ms, jitter 0.1. */
dra_err dra_cluster_retry_on_conflict(int attempts, dra_err (*fn)(void *ud),
                                      void *ud)
{
    dra_err err = DRA_EINVAL;
    if (!fn)
        return DRA_EINVAL;
    if (attempts < 1)
        attempts = 1;
    for (int i = 0; i < attempts; i++) {
        if (i > 0)
            cluster_sleep_ms(10 + (long)(cluster_now_ns() % 2));
        err = fn(ud);
        if (err != DRA_ECONFLICT)
            break;
    }
    return err;
}
