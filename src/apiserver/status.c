/*
 * status.c: every answer the handler writes that is not an object: the
 * Kubernetes Status documents for failures (with kube-apiserver's reasons,
 * messages and details, so kubectl prints the same lines) and successes,
 * plus the small helpers that set a 2xx body.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "apiserver_int.h"

const char *api_qualified(dra_arena *a, const api_resource *res)
{
    if (!res)
        return "";
    if (!*res->group)
        return res->resource;
    return dra_arena_sprintf(a, "%s.%s", res->resource, res->group);
}

const char *api_group_version(dra_arena *a, const api_resource *res)
{
    if (!*res->group)
        return res->version;
    return dra_arena_sprintf(a, "%s/%s", res->group, res->version);
}

static dra_err set(dra_arena *a, dra_doc *m, const char *k, const char *v)
{
    return v ? api_doc_set_str(a, m, k, v) : DRA_OK;
}

/* The Status document shell: kind, apiVersion, metadata, status. */
static dra_doc *status_doc(dra_arena *a, const char *status)
{
    dra_doc *s = dra_doc_new_map(a, 8), *md = dra_doc_new_map(a, 1);
    if (!s || !md || set(a, s, "kind", "Status") || set(a, s, "apiVersion", "v1") ||
        dra_doc_map_set(a, s, "metadata", md) || set(a, s, "status", status))
        return NULL;
    return s;
}

static dra_err reply_status(api_req *r, int code, dra_doc *s)
{
    dra_apiserver_resp *o = r->out;
    dra_err e;
    if (!s || api_doc_set_int(&r->a, s, "code", code))
        return DRA_ENOMEM;
    o->code = code;
    snprintf(o->content_type, sizeof o->content_type, "application/json");
    dra_buf_reset(&o->body);
    e = dra_doc_to_json(s, 0, &o->body);
    return e;
}

static dra_err vfail(api_req *r, int code, const char *reason,
                     const api_resource *res, const char *name,
                     const char *kind, const char *fmt, va_list ap)
{
    dra_buf msg;
    dra_doc *s = status_doc(&r->a, "Failure"), *det;
    dra_err e;
    if (!s)
        return DRA_ENOMEM;
    dra_buf_init(&msg, r->srv->mem);
    dra_buf_vprintf(&msg, fmt, ap);
    e = set(&r->a, s, "message", msg.p ? msg.p : "");
    dra_buf_fini(&msg);
    if (e || set(&r->a, s, "reason", reason))
        return DRA_ENOMEM;
    if (res || name) {
        if (!(det = dra_doc_new_map(&r->a, 4)) || set(&r->a, det, "name", name) ||
            (res && set(&r->a, det, "group", res->group)) ||
            (res && set(&r->a, det, "kind", kind ? kind : res->resource)) ||
            dra_doc_map_set(&r->a, s, "details", det))
            return DRA_ENOMEM;
    }
    return reply_status(r, code, s);
}

dra_err api_fail(api_req *r, int code, const char *reason,
                 const api_resource *res, const char *name, const char *fmt, ...)
{
    va_list ap;
    dra_err e;
    va_start(ap, fmt);
    e = vfail(r, code, reason, res, name, NULL, fmt, ap);
    va_end(ap);
    return e;
}

dra_err api_bad_request(api_req *r, const char *fmt, ...)
{
    va_list ap;
    dra_err e;
    va_start(ap, fmt);
    e = vfail(r, 400, "BadRequest", NULL, NULL, NULL, fmt, ap);
    va_end(ap);
    return e;
}

dra_err api_not_found(api_req *r, const api_resource *res, const char *name)
{
    return api_fail(r, 404, "NotFound", res, name, "%s \"%s\" not found",
                    api_qualified(&r->a, res), name);
}

dra_err api_already_exists(api_req *r, const api_resource *res,
                           const char *name)
{
    return api_fail(r, 409, "AlreadyExists", res, name,
                    "%s \"%s\" already exists", api_qualified(&r->a, res), name);
}

dra_err api_conflict(api_req *r, const api_resource *res, const char *name,
                     const char *why)
{
    return api_fail(r, 409, "Conflict", res, name,
                    "Operation cannot be fulfilled on %s \"%s\": %s",
                    api_qualified(&r->a, res), name,
                    why ? why
                        : "the object has been modified; please apply your "
                          "changes to the latest version and try again");
}

/* field.ErrorType of a field error, from the start of its message. */
static const char *cause_reason(const char *msg)
{
    static const struct {
        const char *prefix, *reason;
    } map[] = {
        {"Required value", "FieldValueRequired"},
        {"Invalid value", "FieldValueInvalid"},
        {"Forbidden", "FieldValueForbidden"},
        {"Unsupported value", "FieldValueNotSupported"},
        {"Duplicate value", "FieldValueDuplicate"},
        {"Too long", "FieldValueTooLong"},
        {"Too many", "FieldValueTooMany"},
        {"Not found", "FieldValueNotFound"},
        {"Internal error", "InternalError"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strncmp(msg, map[i].prefix, strlen(map[i].prefix)))
            return map[i].reason;
    return "FieldValueInvalid";
}

/* "path: message" (or the message alone), as field.Error.Error() prints. */
static const char *cause_text(dra_arena *a, const dra_diag_entry *de)
{
    if (de->path && *de->path)
        return dra_arena_sprintf(a, "%s: %s", de->path, de->msg);
    return de->msg;
}

dra_err api_invalid(api_req *r, const api_resource *res, const char *name,
                    const dra_diag *d)
{
    dra_doc *s = status_doc(&r->a, "Failure"), *det, *causes;
    dra_buf msg;
    size_t shown = 0;
    const char *first = NULL;
    dra_err e;
    if (!s || !(det = dra_doc_new_map(&r->a, 4)) ||
        !(causes = dra_doc_new_list(&r->a, d->n ? d->n : 1)))
        return DRA_ENOMEM;
    dra_buf_init(&msg, r->srv->mem);
    for (size_t i = 0; i < d->n; i++) {
        const char *t = cause_text(&r->a, &d->v[i]);
        dra_doc *c = dra_doc_new_map(&r->a, 3);
        int dup = 0;
        if (!t || !c || set(&r->a, c, "reason", cause_reason(d->v[i].msg)) ||
            set(&r->a, c, "message", d->v[i].msg) ||
            set(&r->a, c, "field", d->v[i].path ? d->v[i].path : "") ||
            dra_doc_list_push(&r->a, causes, c))
            goto oom;
        /* The aggregate message leaves out repeated texts, like
         * ErrorList.ToAggregate. */
        for (size_t j = 0; j < i && !dup; j++) {
            const char *u = cause_text(&r->a, &d->v[j]);
            dup = u && !strcmp(u, t);
        }
        if (dup)
            continue;
        if (!shown++)
            first = t;
        else
            dra_buf_printf(&msg, ", %s", t);
    }
    {
        const char *q = dra_arena_sprintf(&r->a, "%s%s%s", res->kind,
                                          *res->group ? "." : "", res->group);
        char *m;
        if (!q)
            goto oom;
        if (!shown)
            m = dra_arena_sprintf(&r->a, "%s \"%s\" is invalid", q, name);
        else if (shown == 1)
            m = dra_arena_sprintf(&r->a, "%s \"%s\" is invalid: %s", q, name, first);
        else
            m = dra_arena_sprintf(&r->a, "%s \"%s\" is invalid: [%s%s]", q, name,
                                  first, msg.p ? msg.p : "");
        if (!m || set(&r->a, s, "message", m))
            goto oom;
    }
    dra_buf_fini(&msg);
    if (set(&r->a, s, "reason", "Invalid") || set(&r->a, det, "name", name) ||
        set(&r->a, det, "group", res->group) || set(&r->a, det, "kind", res->kind) ||
        dra_doc_map_set(&r->a, det, "causes", causes) ||
        dra_doc_map_set(&r->a, s, "details", det))
        return DRA_ENOMEM;
    e = reply_status(r, 422, s);
    return e;
oom:
    dra_buf_fini(&msg);
    return DRA_ENOMEM;
}

dra_err api_fail_causes(api_req *r, int code, const char *reason,
                        const api_resource *res, const char *name,
                        const char *message, const char *cause_reason,
                        const dra_diag *causes)
{
    dra_doc *s = status_doc(&r->a, "Failure"), *det, *list;
    if (!s || set(&r->a, s, "message", message) || set(&r->a, s, "reason", reason) ||
        !(det = dra_doc_new_map(&r->a, 4)) || !(list = dra_doc_new_list(&r->a, 2)) ||
        set(&r->a, det, "name", name) || (res && set(&r->a, det, "group", res->group)) ||
        (res && set(&r->a, det, "kind", res->resource)))
        return DRA_ENOMEM;
    for (size_t i = 0; causes && i < causes->n; i++) {
        dra_doc *c = dra_doc_new_map(&r->a, 3);
        if (!c || set(&r->a, c, "reason", cause_reason) ||
            set(&r->a, c, "message", causes->v[i].msg) ||
            set(&r->a, c, "field", causes->v[i].path ? causes->v[i].path : "") ||
            dra_doc_list_push(&r->a, list, c))
            return DRA_ENOMEM;
    }
    if ((causes && causes->n && dra_doc_map_set(&r->a, det, "causes", list)) ||
        dra_doc_map_set(&r->a, s, "details", det))
        return DRA_ENOMEM;
    return reply_status(r, code, s);
}

dra_err api_store_fail(api_req *r, const api_resource *res, const char *name,
                       dra_err e, const char *msg)
{
    switch (e) {
    case DRA_ENOTFOUND:
        return api_not_found(r, res, name);
    case DRA_EEXIST:
        return api_already_exists(r, res, name);
    case DRA_ECONFLICT:
        return api_conflict(r, res, name, NULL);
    case DRA_EUNAVAILABLE:
        return api_fail(r, 503, "ServiceUnavailable", NULL, NULL,
                        "the object store cannot take writes now: %s",
                        msg && *msg ? msg : dra_strerror(e));
    case DRA_ENOMEM:
        return DRA_ENOMEM;
    default:
        return api_fail(r, 500, "InternalError", NULL, NULL,
                        "Internal error occurred: the object store failed: %s",
                        msg && *msg ? msg : dra_strerror(e));
    }
}

dra_err api_success(api_req *r, const api_resource *res, const char *name,
                    const char *uid)
{
    dra_doc *s = status_doc(&r->a, "Success"), *det;
    if (!s || !(det = dra_doc_new_map(&r->a, 4)) || set(&r->a, det, "name", name) ||
        set(&r->a, det, "group", res->group) ||
        set(&r->a, det, "kind", res->resource) || set(&r->a, det, "uid", uid) ||
        dra_doc_map_set(&r->a, s, "details", det))
        return DRA_ENOMEM;
    return reply_status(r, 200, s);
}

dra_err api_reply(api_req *r, int code, const char *json, size_t len)
{
    dra_apiserver_resp *o = r->out;
    o->code = code;
    snprintf(o->content_type, sizeof o->content_type, "application/json");
    dra_buf_reset(&o->body);
    return dra_buf_append(&o->body, json, len);
}

dra_err api_reply_doc(api_req *r, int code, const dra_doc *doc)
{
    dra_apiserver_resp *o = r->out;
    o->code = code;
    snprintf(o->content_type, sizeof o->content_type, "application/json");
    dra_buf_reset(&o->body);
    return dra_doc_to_json(doc, 0, &o->body);
}

void api_warn(api_req *r, const char *msg)
{
    dra_apiserver_resp *o = r->out;
    size_t n = strlen(o->warning);
    /* Several warnings go in one header value, comma separated, as
     * HTTP allows; the text is quoted with its quotes escaped. */
    if (n + 16 >= sizeof o->warning)
        return;
    n += (size_t)snprintf(o->warning + n, sizeof o->warning - n, "%s299 - \"",
                          n ? ", " : "");
    for (const char *p = msg; *p && n + 3 < sizeof o->warning; p++) {
        if (*p == '"' || *p == '\\')
            o->warning[n++] = '\\';
        o->warning[n++] = *p;
    }
    if (n + 2 <= sizeof o->warning) {
        o->warning[n++] = '"';
        o->warning[n] = '\0';
    }
}
