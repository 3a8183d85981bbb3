/*
 * output.c: objects on their way back to a client in the form asked for:
 * as stored (plain JSON), or as a meta.k8s.io/v1 Table from the printers
 * of table.h (kubectl get) for single objects, lists and each watch
 * event, streamed from the stored JSON row by row.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "apiserver_int.h"
#include "convert.h"
#include "table.h"

#define TABLE_CT "application/json;as=Table;v=v1;g=meta.k8s.io"

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

dra_err api_table_opts_init(api_req *r, api_table_opts *o)
{
    dra_kstatus st;
    memset(o, 0, sizeof *o);
    o->now_ns = wall_ns();
    if (api_table_parse_include(api_q(r, "includeObject") ? api_q(r, "includeObject") : "",
                                &o->include, &st)) {
        api_bad_request(r, "%s", st.message);
        return DRA_EINVAL;
    }
    return DRA_OK;
}

/* The Table of |n| stored objects as the 200 answer. An object whose
 * JSON does not read is left out, as a list leaves it out. */
static dra_err reply_table(api_req *r, const dra_store_obj *const *objs, size_t n,
                           const api_table_opts *o)
{
    dra_buf *b = &r->out->body;
    dra_arena scratch;
    dra_err e;
    int first = 1;
    dra_arena_init(&scratch, r->srv->mem);
    dra_buf_reset(b);
    e = api_table_stream_begin(&scratch, r->res, o, b);
    for (size_t i = 0; i < n && !e; i++) {
        size_t mark = b->len;
        e = api_table_stream_row(&scratch, r->res, o, first, objs[i]->json, objs[i]->len, b);
        if (e && e != DRA_ENOMEM) {
            b->len = mark;
            e = DRA_OK;
            continue;
        }
        first = 0;
    }
    if (!e)
        e = api_table_stream_end(b);
    dra_arena_fini(&scratch);
    if (!e && b->oom)
        e = DRA_ENOMEM;
    if (e)
        return e;
    r->out->code = 200;
    snprintf(r->out->content_type, sizeof r->out->content_type, TABLE_CT);
    return DRA_OK;
}

const char *api_out_gv(api_req *r)
{
    if (r->conv)
        return dra_arena_sprintf(&r->a, "%s/%s", r->res->group, r->conv);
    return api_group_version(&r->a, r->res);
}

dra_err api_conv_out(api_req *r, const dra_doc *doc, dra_doc **out)
{
    dra_kstatus st;
    if (!r->conv) {
        *out = (dra_doc *)doc;
        return DRA_OK;
    }
    return api_conv_convert(&r->a, doc, r->conv, out, &st);
}

dra_err api_conv_in(api_req *r, dra_doc **doc)
{
    const char *want = api_out_gv(r), *av = api_doc_str(*doc, "apiVersion");
    dra_kstatus st;
    dra_doc *out;
    dra_err e;
    if (!r->conv)
        return DRA_OK;
    if (!want)
        return DRA_ENOMEM;
    /* A body without apiVersion or kind speaks the endpoint's version. */
    if (!av || !*av) {
        if ((e = api_doc_set_str(&r->a, *doc, "apiVersion", want)))
            return e;
    } else if (strcmp(av, want)) {
        api_bad_request(r, "the API version in the data (%s) does not match the "
                           "expected API version (%s)", av, want);
        return DRA_EINVALID;
    }
    if (!api_doc_str(*doc, "kind") && (e = api_doc_set_str(&r->a, *doc, "kind", r->res->kind)))
        return e;
    memset(&st, 0, sizeof st);
    e = api_conv_convert(&r->a, *doc, "v1", &out, &st);
    if (e == DRA_ENOMEM)
        return e;
    if (e) {
        api_bad_request(r, "%s", st.message[0] ? st.message : "cannot convert the object");
        return DRA_EINVALID;
    }
    *doc = out;
    return DRA_OK;
}

dra_err api_reply_objdoc(api_req *r, int code, const dra_doc *doc)
{
    dra_doc *out;
    dra_err e = api_conv_out(r, doc, &out);
    return e ? e : api_reply_doc(r, code, out);
}

dra_err api_reply_obj(api_req *r, int code, const dra_store_obj *o)
{
    api_table_opts to;
    char rvs[24];
    dra_doc *d;
    dra_err e;
    if (r->conv && !(r->table && code == 200)) {
        if ((e = api_doc_parse(&r->a, o->json, o->len, &d)))
            return e == DRA_ENOMEM ? e : api_reply(r, code, o->json, o->len);
        return api_reply_objdoc(r, code, d);
    }
    if (!r->table || code != 200)
        return api_reply(r, code, o->json, o->len);
    if ((e = api_table_opts_init(r, &to)))
        return e == DRA_EINVAL ? DRA_OK : e;
    snprintf(rvs, sizeof rvs, "%llu", (unsigned long long)o->rv);
    to.resource_version = rvs;
    e = reply_table(r, &o, 1, &to);
    return e && e != DRA_ENOMEM ? api_reply(r, code, o->json, o->len) : e;
}

dra_err api_reply_written(api_req *r, int code, const dra_store_obj *o, const dra_doc *doc)
{
    dra_arena *a = r->in->reply_arena;
    char rvs[24];
    dra_doc *d, *m;
    dra_err e;
    if (!a || r->conv || r->table)
        return api_reply_obj(r, code, o);
    e = dra_doc_copy_json(a, doc, SIZE_MAX, &d);
    if (e == DRA_EUNSUPPORTED || (e == DRA_OK && !(m = api_meta(d))))
        return api_reply_obj(r, code, o);
    snprintf(rvs, sizeof rvs, "%llu", (unsigned long long)o->rv);
    if (e || (e = api_doc_set_str(a, m, "resourceVersion", rvs)))
        return e;
    r->out->code = code;
    snprintf(r->out->content_type, sizeof r->out->content_type, "application/json");
    dra_buf_reset(&r->out->body);
    r->out->doc = d;
    return DRA_OK;
}

dra_err api_reply_table_list(api_req *r, const dra_store_obj *const *objs,
                             size_t n, uint64_t rv, const char *cont, long long remaining)
{
    api_table_opts to;
    char rvs[24];
    dra_err e;
    if ((e = api_table_opts_init(r, &to)))
        return e == DRA_EINVAL ? DRA_OK : e;
    snprintf(rvs, sizeof rvs, "%llu", (unsigned long long)rv);
    to.resource_version = rvs;
    to.continue_ = cont;
    to.has_remaining = remaining >= 0;
    to.remaining = remaining;
    return reply_table(r, objs, n, &to);
}

dra_err api_table_event(dra_arena *a, const api_resource *res,
                        const api_table_opts *base, int headers,
                        const dra_store_obj *o, dra_buf *out)
{
    api_table_opts to = *base;
    char rvs[24];
    size_t mark = out->len;
    dra_err e;
    to.now_ns = wall_ns();
    to.no_headers = !headers;
    snprintf(rvs, sizeof rvs, "%llu", (unsigned long long)o->rv);
    to.resource_version = rvs;
    if (!(e = api_table_stream_begin(a, res, &to, out)) &&
        !(e = api_table_stream_row(a, res, &to, 1, o->json, o->len, out)))
        e = api_table_stream_end(out);
    if (e && e != DRA_ENOMEM) {
        /* Not an object: sent as stored, as before. */
        out->len = mark;
        return dra_buf_append(out, o->json, o->len);
    }
    return e;
}
