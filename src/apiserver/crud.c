/*
 * crud.c: the verbs on stored objects: get, list (selectors, limit and
 * continue), create (generateName, namespace lifecycle), update and the
 * status subresource (optimistic concurrency, no-op detection,
 * finalizers ending a deletion), patch, delete (preconditions,
 * propagation policies, finalizers, graceful pods) and deletecollection.
 * Reads come from the store's memory; every write goes through
 * api_prepare (write.c) and one store write with a precondition.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "apiserver_int.h"
#include "convert.h"
#include "openapi.h"
#include "patch.h"
#include "selector.h"

#define RETRIES 16

/* ---- answers with objects ----------------------------------------------------- */

/* A parsed copy of a stored object in r->a. */
static dra_err parse_stored(api_req *r, const dra_store_obj *o, dra_doc **out)
{
    dra_err e = api_doc_parse(&r->a, o->json, o->len, out);
    if (e == DRA_ENOMEM)
        return e;
    if (e || (*out)->kind != DRA_DOC_MAP) {
        api_fail(r, 500, "InternalError", NULL, NULL,
                 "Internal error occurred: a stored object is not valid JSON");
        return DRA_EIO;
    }
    return DRA_OK;
}

static uint64_t parse_rv(const char *s, int *ok)
{
    char *end;
    unsigned long long v;
    *ok = 0;
    if (!s || !*s || *s < '0' || *s > '9')
        return 0;
    v = strtoull(s, &end, 10);
    *ok = !*end;
    return v;
}

/* ---- get ------------------------------------------------------------------------ */

dra_err api_get(api_req *r)
{
    dra_store_obj *o;
    dra_err e = dra_store_get(r->srv->store, r->skey, r->ns, r->name, &o);
    if (e)
        return api_not_found(r, r->sres, r->name);
    e = api_reply_obj(r, 200, o);
    dra_store_obj_unref(o);
    return e;
}

/* ---- list ------------------------------------------------------------------------- */

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static char *b64_encode(dra_arena *a, const char *s, size_t n)
{
    char *o = dra_arena_alloc(a, (n + 2) / 3 * 4 + 1), *p = o;
    if (!o)
        return NULL;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned char)s[i] << 16;
        if (i + 1 < n)
            v |= (unsigned char)s[i + 1] << 8;
        if (i + 2 < n)
            v |= (unsigned char)s[i + 2];
        *p++ = b64[(v >> 18) & 63];
        *p++ = b64[(v >> 12) & 63];
        if (i + 1 < n)
            *p++ = b64[(v >> 6) & 63];
        if (i + 2 < n)
            *p++ = b64[v & 63];
    }
    *p = '\0';
    return o;
}

static char *b64_decode(dra_arena *a, const char *s, size_t *len)
{
    size_t n = strlen(s);
    char *o = dra_arena_alloc(a, n * 3 / 4 + 4), *p = o;
    unsigned v = 0, bits = 0;
    if (!o)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const char *c = s[i] ? strchr(b64, s[i]) : NULL;
        if (s[i] == '=' )
            break;
        if (!c) {
            /* Standard alphabet too, as clients may re-encode. */
            if (s[i] == '+')
                c = b64 + 62;
            else if (s[i] == '/')
                c = b64 + 63;
            else
                return NULL;
        }
        v = (v << 6) | (unsigned)(c - b64);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            *p++ = (char)((v >> bits) & 0xff);
        }
    }
    *p = '\0';
    *len = (size_t)(p - o);
    return o;
}

static char *continue_token(api_req *r, uint64_t rv, const char *ns,
                            const char *name)
{
    dra_doc *t = dra_doc_new_map(&r->a, 3);
    dra_buf b;
    char *s, *key = dra_arena_sprintf(&r->a, "%s/%s", ns, name);
    if (!t || !key || api_doc_set_str(&r->a, t, "v", "meta.k8s.io/v1") ||
        api_doc_set_int(&r->a, t, "rv", (int64_t)rv) ||
        api_doc_set_str(&r->a, t, "start", key))
        return NULL;
    dra_buf_init(&b, r->srv->mem);
    if (dra_doc_to_json(t, 0, &b)) {
        dra_buf_fini(&b);
        return NULL;
    }
    s = b64_encode(&r->a, b.p, b.len);
    dra_buf_fini(&b);
    return s;
}

/* Decodes a continue token into the key to start after. DRA_EINVAL
 * (answered with 400) when it is not one of ours. */
static dra_err continue_key(api_req *r, const char *tok, const char **ns,
                            const char **name)
{
    size_t len;
    char *js = b64_decode(&r->a, tok, &len), *slash;
    dra_doc *d = NULL;
    const char *start;
    if (js && !dra_doc_parse_json(&r->a, js, len, &d, NULL) &&
        (start = api_doc_str(d, "start")) && (slash = strchr(start, '/')) &&
        api_doc_str(d, "v") && !strcmp(api_doc_str(d, "v"), "meta.k8s.io/v1")) {
        char *s = dra_arena_strdup(&r->a, start);
        if (!s)
            return DRA_ENOMEM;
        s[slash - start] = '\0';
        *ns = s;
        *name = s + (slash - start) + 1;
        return DRA_OK;
    }
    api_bad_request(r, "continue key is not valid: the continue token is "
                       "malformed");
    return DRA_EINVAL;
}

dra_err api_filter_parse(api_req *r, api_filter *f)
{
    dra_kstatus st;
    const char *ls = api_q(r, "labelSelector"), *fs = api_q(r, "fieldSelector");
    dra_err e;
    memset(f, 0, sizeof *f);
    if (ls && *ls) {
        if ((e = api_sel_label_parse(&r->a, ls, &f->labels, &st))) {
            if (e == DRA_ENOMEM)
                return e;
            api_fail(r, st.code ? st.code : 400, st.reason[0] ? st.reason : "BadRequest",
                     NULL, NULL, "%s", st.message);
            return DRA_EINVAL;
        }
        f->active |= f->labels->n > 0;
    }
    if (fs && *fs) {
        if ((e = api_sel_field_parse(&r->a, fs, r->res, &f->fields, &st))) {
            if (e == DRA_ENOMEM)
                return e;
            api_fail(r, st.code ? st.code : 400, st.reason[0] ? st.reason : "BadRequest",
                     NULL, NULL, "%s", st.message);
            return DRA_EINVAL;
        }
        f->active |= f->fields->n > 0;
    }
    return DRA_OK;
}

uint32_t api_filter_key(api_req *r)
{
    dra_apiserver *srv = r->srv;
    const char *ls = api_q(r, "labelSelector"), *fs = api_q(r, "fieldSelector");
    char *k = NULL;
    size_t len;
    uint32_t id = 0;
    /* NUL-separated, so no selector text can forge another's key. */
    len = strlen(r->res->resource) + strlen(ls ? ls : "") + strlen(fs ? fs : "") + 3;
    if (!(k = dra_malloc(srv->mem, len)))
        return 0;
    snprintf(k, len, "%s%c%s%c%s", r->res->resource, 0, ls ? ls : "", 0, fs ? fs : "");
    pthread_mutex_lock(&srv->lock);
    for (size_t i = 0; i < srv->nfilter_keys && !id; i++)
        if (srv->filter_keys[i].len == len && !memcmp(srv->filter_keys[i].k, k, len))
            id = (uint32_t)i + 1;
    if (!id && srv->nfilter_keys < API_FILTER_KEYS &&
        !dra_grow(srv->mem, (void **)&srv->filter_keys, &srv->cap_filter_keys,
                  srv->nfilter_keys + 1, sizeof *srv->filter_keys)) {
        srv->filter_keys[srv->nfilter_keys++] = (api_fkey){k, len};
        id = (uint32_t)srv->nfilter_keys;
        k = NULL;
    }
    pthread_mutex_unlock(&srv->lock);
    dra_free(srv->mem, k);
    return id;
}

int api_filter_match(const api_resource *res, const api_filter *f,
                     const dra_doc *obj)
{
    if (f->labels && f->labels->n &&
        !api_sel_label_match(f->labels, api_doc_at(api_meta(obj), "labels")))
        return 0;
    if (f->fields && f->fields->n && !api_sel_field_match(f->fields, res, obj))
        return 0;
    return 1;
}

/* What selectors read of a stored object, kept with the value so that
 * each object is parsed once however many lists and watches filter it:
 * name, namespace and labels, and every field a field selector accepts. */
typedef struct objsum {
    dra_store_aux base;
    dra_arena a;
    dra_doc *skel;
    /* The last answer: filter key << 1 | passed (0: none yet). */
    _Atomic uint64_t memo;
} objsum;

static void objsum_free(dra_store_aux *aux)
{
    objsum *o = (objsum *)aux;
    const dra_mem *mem = o->a.mem;
    dra_arena_fini(&o->a);
    dra_free(mem, o);
}

/* Copies member |key| of |from| (when present) into map |to|. */
static dra_err keep(dra_arena *a, dra_doc *to, const dra_doc *from, const char *key)
{
    const dra_doc *v = api_doc_at(from, key);
    dra_doc *c;
    if (!v)
        return DRA_OK;
    c = api_doc_clone(a, v);
    return c ? dra_doc_map_set(a, to, key, c) : DRA_ENOMEM;
}

static dra_doc *skeleton(dra_arena *a, const dra_doc *obj)
{
    static const char *const meta[] = {"name", "namespace", "labels"};
    static const char *const spec[] = {"nodeName", "driver", "restartPolicy",
                                       "schedulerName", "serviceAccountName",
                                       "hostNetwork", "unschedulable", "host"};
    static const char *const status[] = {"phase", "podIP", "podIPs",
                                         "nominatedNodeName"};
    static const char *const top[] = {"involvedObject", "reason",
                                      "reportingComponent", "source", "type"};
    dra_doc *k = dra_doc_new_map(a, 8), *m, *sp, *st;
    size_t i;
    if (!k || !(m = api_doc_map(a, k, "metadata")) || !(sp = api_doc_map(a, k, "spec")) ||
        !(st = api_doc_map(a, k, "status")))
        return NULL;
    for (i = 0; i < sizeof meta / sizeof meta[0]; i++)
        if (keep(a, m, api_meta(obj), meta[i]))
            return NULL;
    for (i = 0; i < sizeof spec / sizeof spec[0]; i++)
        if (keep(a, sp, api_doc_at(obj, "spec"), spec[i]))
            return NULL;
    for (i = 0; i < sizeof status / sizeof status[0]; i++)
        if (keep(a, st, api_doc_at(obj, "status"), status[i]))
            return NULL;
    for (i = 0; i < sizeof top / sizeof top[0]; i++)
        if (keep(a, k, obj, top[i]))
            return NULL;
    return k;
}

/* The selector view of |o|, built and attached on first use; NULL when
 * it cannot be built (out of memory, or not an object). */
static objsum *summary(dra_store_obj *o, dra_arena *scratch)
{
    objsum *sum = (objsum *)dra_store_obj_aux(o), *won;
    dra_doc *d;
    if (sum)
        return sum;
    if (api_doc_parse(scratch, o->json, o->len, &d) || d->kind != DRA_DOC_MAP)
        return NULL;
    sum = dra_calloc(scratch->mem, 1, sizeof *sum);
    if (!sum)
        return NULL;
    sum->base.free = objsum_free;
    dra_arena_init(&sum->a, scratch->mem);
    sum->skel = skeleton(&sum->a, d);
    dra_arena_reset(scratch);
    if (!sum->skel) {
        objsum_free(&sum->base);
        return NULL;
    }
    won = (objsum *)dra_store_obj_aux_attach(o, &sum->base);
    if (won != sum)
        objsum_free(&sum->base);
    return won;
}

/* Whether stored object |o| passes |f|. */
int api_filter_obj(const api_resource *res, const api_filter *f,
                   dra_store_obj *o, dra_arena *scratch)
{
    objsum *sum;
    uint64_t m;
    int pass;
    if (!f->active)
        return 1;
    if (!(sum = summary(o, scratch)))
        return 0;
    m = atomic_load_explicit(&sum->memo, memory_order_relaxed);
    if (f->key && m >> 1 == f->key)
        return (int)(m & 1);
    pass = api_filter_match(res, f, sum->skel);
    if (f->key)
        atomic_store_explicit(&sum->memo, (uint64_t)f->key << 1 | (uint64_t)pass,
                              memory_order_relaxed);
    return pass;
}

/* |remaining| < 0: unknown (a selector), so omitted as kube-apiserver
 * does. */
static dra_err list_head(api_req *r, dra_buf *b, uint64_t rv, const char *cont,
                         long long remaining)
{
    const char *gv = api_out_gv(r);
    if (!gv)
        return DRA_ENOMEM;
    dra_buf_printf(b, "{\"kind\":\"%sList\",\"apiVersion\":\"%s\",\"metadata\":"
                      "{\"resourceVersion\":\"%llu\"", r->res->kind, gv,
                   (unsigned long long)rv);
    if (cont)
        dra_buf_printf(b, ",\"continue\":\"%s\"", cont);
    if (cont && remaining >= 0)
        dra_buf_printf(b, ",\"remainingItemCount\":%lld", remaining);
    return dra_buf_puts(b, "},\"items\":[");
}

/* One stored object into a list answer, in the client's version. */
static dra_err put_item(api_req *r, dra_buf *b, const dra_store_obj *o,
                        dra_arena *scratch)
{
    dra_doc *d, *out;
    dra_kstatus st;
    dra_err e;
    if (!r->conv)
        return dra_buf_append(b, o->json, o->len);
    if ((e = api_doc_parse(scratch, o->json, o->len, &d)) ||
        (e = api_conv_convert(scratch, d, r->conv, &out, &st)))
        e = e == DRA_ENOMEM ? e : dra_buf_append(b, o->json, o->len);
    else
        e = dra_doc_to_json(out, 0, b);
    dra_arena_reset(scratch);
    return e;
}

dra_err api_snapshot(api_req *r, const api_filter *f, const char *after_ns,
                     const char *after_name, size_t limit, dra_store_page *pg)
{
    const char *name = f->fields ? api_sel_field_exact(f->fields, "metadata.name") : NULL;
    /* kubectl's by-name watches and delete waits select metadata.name:
     * in one namespace (or cluster scope) that is a single lookup. */
    if (name && !after_ns && (!r->res->namespaced || !r->all_ns))
        return dra_store_list_one(r->srv->store, r->skey, r->ns, name, pg);
    return dra_store_list(r->srv->store, r->skey, r->all_ns ? NULL : r->ns, after_ns,
                          after_name, limit, pg, NULL);
}

dra_err api_list(api_req *r)
{
    api_filter f;
    dra_store_page pg;
    const char *ans = NULL, *aname = NULL, *lim = api_q(r, "limit");
    const char *cont = api_q(r, "continue"), *tok = NULL;
    size_t limit = 0, taken = 0, last = 0, remaining = 0, i;
    long long count = -1; /* remainingItemCount; -1: unknown, omitted */
    dra_store_obj **sel;
    dra_arena scratch;
    dra_buf *b = &r->out->body;
    dra_err e;
    if ((e = api_filter_parse(r, &f)))
        return e == DRA_EINVAL ? DRA_OK : e;
    if (lim && *lim) {
        long long l = atoll(lim);
        limit = l > 0 ? (size_t)l : 0;
    }
    if (cont && *cont && (e = continue_key(r, cont, &ans, &aname)))
        return e == DRA_EINVAL ? DRA_OK : e;
    /* Without a selector the store cuts the page and counts the rest;
     * with one, the page ends at the limit-th match and only whether
     * another follows is known (kube-apiserver then omits the count). */
    if ((e = api_snapshot(r, &f, ans, aname, f.active ? 0 : limit, &pg)))
        return e;
    sel = dra_arena_array(&r->a, pg.n ? pg.n : 1, sizeof *sel);
    if (!sel) {
        dra_store_page_fini(&pg);
        return DRA_ENOMEM;
    }
    dra_arena_init(&scratch, r->srv->mem);
    for (i = 0; i < pg.n; i++) {
        if (!api_filter_obj(r->res, &f, pg.items[i].obj, &scratch))
            continue;
        if (limit && taken == limit)
            break;
        sel[taken++] = pg.items[i].obj;
        last = i;
    }
    if (!f.active) {
        remaining = pg.n - i + pg.remaining;
        count = (long long)remaining;
    } else {
        for (size_t j = i; j < pg.n && !remaining; j++)
            remaining = (size_t)api_filter_obj(r->res, &f, pg.items[j].obj, &scratch);
    }
    if (remaining && !(tok = continue_token(r, pg.rv, pg.items[last].ns,
                                            pg.items[last].name)))
        e = DRA_ENOMEM;
    if (!e && r->table) {
        e = api_reply_table_list(r, (const dra_store_obj *const *)sel, taken, pg.rv, tok, count);
    } else if (!e) {
        r->out->code = 200;
        snprintf(r->out->content_type, sizeof r->out->content_type,
                 "application/json");
        dra_buf_reset(b);
        e = list_head(r, b, pg.rv, tok, count);
        for (size_t k = 0; k < taken && !e; k++) {
            if (k)
                dra_buf_putc(b, ',');
            e = put_item(r, b, sel[k], &scratch);
        }
        dra_buf_puts(b, "]}");
        if (b->oom)
            e = DRA_ENOMEM;
    }
    dra_arena_fini(&scratch);
    dra_store_page_fini(&pg);
    return e;
}

/* ---- create ------------------------------------------------------------------------ */

/* Whether a stored namespace may be going away. One that is not names
 * neither a deletionTimestamp nor the Terminating phase anywhere in its
 * JSON (written by our encoder, which escapes no letter), so most writes
 * need not parse it. */
static int ns_may_terminate(const dra_store_obj *o)
{
    return strstr(o->json, "deletionTimestamp") || strstr(o->json, "Terminating");
}

/* Namespaced writes need a namespace that exists and is not going away. */
static dra_err check_ns_alive(api_req *r, const char *name)
{
    dra_store_obj *o;
    dra_doc *d;
    const char *phase;
    dra_err e;
    if (!r->sres->namespaced)
        return DRA_OK;
    if (dra_store_get(r->srv->store, "namespaces", "", r->ns, &o)) {
        api_fail(r, 404, "NotFound", api_resource_find("", "v1", "namespaces"),
                 r->ns, "namespaces \"%s\" not found", r->ns);
        return DRA_EINVAL;
    }
    if (!ns_may_terminate(o)) {
        dra_store_obj_unref(o);
        return DRA_OK;
    }
    e = parse_stored(r, o, &d);
    dra_store_obj_unref(o);
    if (e)
        return e == DRA_ENOMEM ? e : DRA_EINVAL;
    phase = api_doc_str(api_doc_at(d, "status"), "phase");
    if (api_meta_str(d, "deletionTimestamp") || (phase && !strcmp(phase, "Terminating"))) {
        api_fail(r, 403, "Forbidden", r->sres, name,
                 "%s \"%s\" is forbidden: unable to create new content in "
                 "namespace %s because it is being terminated",
                 api_qualified(&r->a, r->sres), name, r->ns);
        return DRA_EINVAL;
    }
    return DRA_OK;
}

static dra_err create_exists(api_req *r, const char *name)
{
    dra_store_obj *o;
    dra_doc *d;
    if (!dra_store_get(r->srv->store, r->skey, r->ns, name, &o)) {
        int deleting = !parse_stored(r, o, &d) && api_meta_str(d, "deletionTimestamp");
        dra_store_obj_unref(o);
        if (deleting)
            return api_fail(r, 409, "AlreadyExists", r->sres, name,
                            "object is being deleted: %s \"%s\" already exists",
                            api_qualified(&r->a, r->sres), name);
    }
    return api_already_exists(r, r->sres, name);
}

/* Creates |body| (a decoded object document, left unchanged). */
static dra_err create_doc(api_req *r, const dra_doc *body)
{
    dra_doc *obj, *out;
    dra_store_obj *stored;
    char msg[192];
    dra_err e;
    for (int attempt = 0;; attempt++) {
        const char *name, *gen;
        if (!(obj = api_doc_clone(&r->a, body)))
            return DRA_ENOMEM;
        if ((e = api_prepare(r, API_CREATE, obj, NULL, &out)))
            return e == DRA_EINVALID ? DRA_OK : e;
        name = api_meta_str(out, "name");
        gen = api_meta_str(body, "name") ? NULL : api_meta_str(out, "generateName");
        if ((e = check_ns_alive(r, name)))
            return e == DRA_EINVAL ? DRA_OK : e;
        if (r->dry_run)
            return api_reply_objdoc(r, 201, out);
        e = api_store_write(r, DRA_STORE_CREATE, out, 0, &stored, msg, sizeof msg);
        /* A generated name that collides is drawn again, up to 8 times,
         * as the registry's RetryGenerateName does. */
        if (e == DRA_EEXIST && gen && attempt < 8)
            continue;
        if (e == DRA_EEXIST)
            return create_exists(r, name);
        if (e)
            return api_store_fail(r, r->sres, name, e, msg);
        break;
    }
    e = api_reply_written(r, 201, stored, out);
    dra_store_obj_unref(stored);
    return e;
}

dra_err api_create(api_req *r)
{
    dra_doc *body;
    dra_err e;
    if ((e = api_body(r, &body)))
        return e == DRA_EPARSE ? DRA_OK : e;
    if ((e = api_conv_in(r, &body)))
        return e == DRA_EINVALID ? DRA_OK : e;
    return create_doc(r, body);
}

/* ---- update -------------------------------------------------------------------------- */

/* 1 when an update leaves nothing changed but the resourceVersion. */
static int unchanged(api_req *r, dra_doc *out, const dra_doc *old)
{
    const char *orv = api_meta_str(old, "resourceVersion");
    if (!orv || api_doc_set_str(&r->a, api_meta(out), "resourceVersion", orv))
        return 0;
    return dra_doc_equal(out, old);
}

/* Whether a deleting object has nothing left holding it: no finalizers
 * and no grace period running (kube's ShouldDeleteDuringUpdate: a pod in
 * graceful deletion goes with its kubelet's DELETE of period 0, not with
 * any update, such as a status write, made meanwhile). */
static int deletion_done(const api_resource *res, const dra_doc *obj)
{
    const dra_doc *sf, *g;
    if (!api_meta_str(obj, "deletionTimestamp") || api_meta_list(obj, "finalizers"))
        return 0;
    g = api_doc_at(api_meta(obj), "deletionGracePeriodSeconds");
    if (g && g->kind == DRA_DOC_INT && g->u.i > 0)
        return 0;
    if (strcmp(res->resource, "namespaces") || *res->group)
        return 1;
    sf = api_doc_at(api_doc_at(obj, "spec"), "finalizers");
    return !sf || sf->kind != DRA_DOC_LIST || !sf->u.list.n;
}

/* How an update builds the new object from the stored one: a PUT copies
 * its body, a PATCH applies its patch. *want is the resourceVersion the
 * client made a precondition (NULL: none). NULL with *e set on failure
 * (DRA_EINVALID: the answer is already in the response). */
typedef struct upd {
    api_mode mode;
    dra_doc *(*make)(api_req *r, const dra_doc *old, void *ud, const char **want,
                     dra_err *e);
    void *ud;
} upd;

/* The update loop shared by PUT and PATCH: read, build the new object
 * from the current one, prepare, write with the current version as
 * precondition; a conflict the client did not ask for is retried. */
static dra_err update_loop(api_req *r, const upd *u)
{
    for (int tries = 0;; tries++) {
        dra_store_obj *cur, *stored;
        dra_doc *old, *obj, *out;
        const char *want;
        uint64_t wrv = 0;
        char msg[192];
        int ok = 0, del;
        dra_err e;
        if (dra_store_get(r->srv->store, r->skey, r->ns, r->name, &cur))
            return api_not_found(r, r->sres, r->name);
        e = parse_stored(r, cur, &old);
        uint64_t crv = cur->rv;
        dra_store_obj_unref(cur);
        if (e)
            return e == DRA_ENOMEM ? e : DRA_OK;
        want = NULL;
        if (!(obj = u->make(r, old, u->ud, &want, &e)))
            return e == DRA_EINVALID ? DRA_OK : e;
        if (want && *want) {
            wrv = parse_rv(want, &ok);
            if (!ok || wrv != crv)
                return api_conflict(r, r->sres, r->name, NULL);
        }
        if ((e = api_prepare(r, u->mode, obj, old, &out)))
            return e == DRA_EINVALID ? DRA_OK : e;
        if (unchanged(r, out, old))
            return api_reply_objdoc(r, 200, old);
        if (r->dry_run)
            return api_reply_objdoc(r, 200, out);
        del = deletion_done(r->sres, out);
        e = api_store_write(r, del ? DRA_STORE_DELETE : DRA_STORE_UPDATE, out, crv,
                            &stored, msg, sizeof msg);
        if (e == DRA_ECONFLICT && !wrv && tries < RETRIES)
            continue;
        if (e == DRA_ENOTFOUND && tries < RETRIES)
            continue;
        if (e)
            return api_store_fail(r, r->sres, r->name, e, msg);
        /* A deleting write's answer is what the store kept. */
        e = del ? api_reply_obj(r, 200, stored) : api_reply_written(r, 200, stored, out);
        dra_store_obj_unref(stored);
        return e;
    }
}

static dra_doc *put_make(api_req *r, const dra_doc *old, void *ud,
                         const char **want, dra_err *e)
{
    dra_doc *c = api_doc_clone(&r->a, ud);
    (void)old;
    *e = c ? DRA_OK : DRA_ENOMEM;
    *want = api_meta_str(c, "resourceVersion");
    return c;
}

dra_err api_update(api_req *r)
{
    dra_doc *body;
    const char *name;
    upd u;
    dra_err e;
    if ((e = api_body(r, &body)))
        return e == DRA_EPARSE ? DRA_OK : e;
    if ((e = api_conv_in(r, &body)))
        return e == DRA_EINVALID ? DRA_OK : e;
    name = api_meta_str(body, "name");
    if (!name || strcmp(name, r->name)) {
        if (!name || !*name) {
            dra_doc *m = api_doc_map(&r->a, body, "metadata");
            if (!m || api_doc_set_str(&r->a, m, "name", r->name))
                return api_bad_request(r, "metadata must be an object");
        } else {
            return api_bad_request(r, "the name of the object (%s) does not match "
                                      "the name on the URL (%s)", name, r->name);
        }
    }
    u.mode = r->sub ? API_UPDATE_STATUS : API_UPDATE;
    u.make = put_make;
    u.ud = body;
    return update_loop(r, &u);
}

/* ---- patch ------------------------------------------------------------------------------ */

typedef struct pctx {
    dra_patch_type type;
    dra_doc *patch;
    const api_openapi_type *ty;
    api_apply_opts ao;
} pctx;

/* The patch type of a Content-Type, or -1. */
static int patch_type(const char *ct)
{
    static const struct {
        const char *mt;
        dra_patch_type t;
    } types[] = {
        {"application/merge-patch+json", DRA_PATCH_MERGE},
        {"application/strategic-merge-patch+json", DRA_PATCH_STRATEGIC},
        {"application/json-patch+json", DRA_PATCH_JSON},
        {"application/apply-patch+yaml", DRA_PATCH_APPLY},
    };
    size_t n;
    if (!ct)
        return -1;
    while (*ct == ' ')
        ct++;
    n = strcspn(ct, "; ");
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strlen(types[i].mt) == n && !strncasecmp(ct, types[i].mt, n))
            return (int)types[i].t;
    return -1;
}

static dra_err patch_failed(api_req *r, dra_err e, const dra_kstatus *st,
                            const dra_diag *causes)
{
    const char *reason = st->reason[0] ? st->reason : "InternalError";
    int code = st->code ? st->code : 500;
    if (e == DRA_ENOMEM)
        return e;
    if (causes && causes->n)
        return api_fail_causes(r, code, reason, r->sres, r->name, st->message,
                               "FieldManagerConflict", causes);
    return api_fail(r, code, reason, NULL, NULL, "%s", st->message);
}

static const char *json_patch_rv(const dra_doc *ops, const dra_doc *patched)
{
    for (size_t i = 0; ops->kind == DRA_DOC_LIST && i < ops->u.list.n; i++) {
        const char *path = api_doc_str(ops->u.list.items[i], "path");
        if (path && !strcmp(path, "/metadata/resourceVersion"))
            return api_meta_str(patched, "resourceVersion");
    }
    return NULL;
}

static dra_doc *patch_make(api_req *r, const dra_doc *old, void *ud,
                           const char **want, dra_err *e)
{
    pctx *p = ud;
    dra_doc *out = NULL, *view;
    dra_kstatus st;
    dra_diag causes;
    memset(&st, 0, sizeof st);
    /* A patch speaks the client's version: it applies to the object as
     * that version shows it, and the result converts back. */
    if ((*e = api_conv_out(r, old, &view)))
        return NULL;
    old = view;
    dra_diag_init(&causes, r->srv->mem);
    switch (p->type) {
    case DRA_PATCH_MERGE:
        *e = api_patch_merge(&r->a, old, p->patch, &out, &st);
        *want = api_meta_str(p->patch, "resourceVersion");
        break;
    case DRA_PATCH_STRATEGIC:
        *e = api_patch_strategic(&r->a, p->ty, old, p->patch, &out, &st);
        *want = api_meta_str(p->patch, "resourceVersion");
        break;
    case DRA_PATCH_JSON:
        *e = api_patch_json(&r->a, old, p->patch, &out, &st, NULL);
        if (!*e)
            *want = json_patch_rv(p->patch, out);
        break;
    default:
        *e = api_patch_apply(&r->a, p->ty, old, p->patch, &p->ao, &out, &st, &causes);
        *want = api_meta_str(p->patch, "resourceVersion");
        break;
    }
    if (*e) {
        dra_err f = patch_failed(r, *e, &st, &causes);
        *e = f ? f : DRA_EINVALID;
        out = NULL;
    }
    dra_diag_fini(&causes);
    if (out && (*e = api_conv_in(r, &out)))
        out = NULL;
    return out;
}

/* Server-side apply of an object that does not exist: it is created. */
static dra_err apply_create(api_req *r, pctx *p)
{
    dra_doc *out = NULL;
    dra_kstatus st;
    dra_diag causes;
    dra_err e;
    memset(&st, 0, sizeof st);
    dra_diag_init(&causes, r->srv->mem);
    e = api_patch_apply(&r->a, p->ty, NULL, p->patch, &p->ao, &out, &st, &causes);
    if (e) {
        e = patch_failed(r, e, &st, &causes);
        dra_diag_fini(&causes);
        return e;
    }
    dra_diag_fini(&causes);
    if ((e = api_conv_in(r, &out)))
        return e == DRA_EINVALID ? DRA_OK : e;
    if (!api_meta_str(out, "name")) {
        dra_doc *m = api_doc_map(&r->a, out, "metadata");
        if (!m || api_doc_set_str(&r->a, m, "name", r->name))
            return DRA_ENOMEM;
    }
    return create_doc(r, out);
}

dra_err api_patch(api_req *r)
{
    pctx p;
    upd u;
    dra_diag d;
    int t = patch_type(r->in->content_type);
    char now[32];
    dra_err e;
    if (t < 0)
        return api_fail(r, 415, "UnsupportedMediaType", NULL, NULL,
                        "the body of the request was in an unknown format - "
                        "accepted media types include: application/json-patch+json, "
                        "application/merge-patch+json, application/apply-patch+yaml, "
                        "application/strategic-merge-patch+json");
    memset(&p, 0, sizeof p);
    p.type = (dra_patch_type)t;
    if (!r->in->body || !r->in->body_len)
        return api_bad_request(r, "the request body is empty");
    dra_diag_init(&d, r->srv->mem);
    d.max = 1;
    if (p.type == DRA_PATCH_APPLY) {
        dra_doc **docs = NULL;
        size_t n = 0;
        e = dra_doc_parse_yaml(&r->a, r->in->body, r->in->body_len, &docs, &n, &d);
        if (!e && n == 1)
            p.patch = docs[0];
        else if (!e)
            e = DRA_EPARSE;
    } else {
        e = dra_doc_parse_json(&r->a, r->in->body, r->in->body_len, &p.patch, &d);
    }
    if (e) {
        const char *m = dra_diag_first(&d);
        if (e != DRA_ENOMEM)
            e = api_bad_request(r, "error decoding patch: %s",
                                m ? m : "the patch must be one document");
        dra_diag_fini(&d);
        return e;
    }
    dra_diag_fini(&d);
    p.ty = api_openapi_kind_type(r->res->group, r->res->version, r->res->kind);
    if (p.type == DRA_PATCH_APPLY) {
        p.ao.manager = api_q(r, "fieldManager");
        p.ao.force = api_q_bool(r, "force", 0);
        p.ao.api_version = api_group_version(&r->a, r->res);
        api_now(now, sizeof now);
        p.ao.now = now;
        if (!p.ao.manager || !*p.ao.manager)
            return api_bad_request(r, "PATCH %s: fieldManager is required for "
                                      "apply requests", r->in->path);
        if (!r->sub) {
            dra_store_obj *cur;
            if (dra_store_get(r->srv->store, r->skey, r->ns, r->name, &cur))
                return apply_create(r, &p);
            dra_store_obj_unref(cur);
        }
    }
    u.mode = r->sub ? API_UPDATE_STATUS : API_UPDATE;
    u.make = patch_make;
    u.ud = &p;
    return update_loop(r, &u);
}

/* ---- delete -------------------------------------------------------------------------------- */

typedef struct delopts {
    const char *policy;
    const char *uid, *rv; /* preconditions */
    int64_t grace;
    int grace_set;
} delopts;

static dra_err parse_delopts(api_req *r, delopts *o)
{
    const char *gp = api_q(r, "gracePeriodSeconds");
    memset(o, 0, sizeof *o);
    o->policy = api_q(r, "propagationPolicy");
    if (gp && *gp) {
        o->grace = atoll(gp);
        o->grace_set = 1;
    }
    if (r->in->body_len) {
        dra_doc *b, *pre, *g;
        const char *orphan;
        dra_err e = api_body(r, &b);
        if (e)
            return e == DRA_EPARSE ? DRA_EINVAL : e;
        if (api_doc_str(b, "propagationPolicy"))
            o->policy = api_doc_str(b, "propagationPolicy");
        pre = api_doc_at(b, "preconditions");
        o->uid = api_doc_str(pre, "uid");
        o->rv = api_doc_str(pre, "resourceVersion");
        g = api_doc_at(b, "gracePeriodSeconds");
        if (g && g->kind == DRA_DOC_INT) {
            o->grace = g->u.i;
            o->grace_set = 1;
        }
        g = api_doc_at(b, "orphanDependents");
        if (!o->policy && g && g->kind == DRA_DOC_BOOL)
            o->policy = g->u.b ? "Orphan" : "Background";
        (void)orphan;
    }
    if (o->policy && strcmp(o->policy, "Background") &&
        strcmp(o->policy, "Foreground") && strcmp(o->policy, "Orphan")) {
        api_bad_request(r, "DeleteOptions.propagationPolicy: Unsupported value: "
                           "\"%s\": supported values: \"Foreground\", "
                           "\"Background\", \"Orphan\"", o->policy);
        return DRA_EINVAL;
    }
    return DRA_OK;
}

/* Kinds whose DELETE answers with the object (ReturnDeletedObject). */
static int returns_object(const api_resource *res)
{
    return !strcmp(res->resource, "pods") || !strcmp(res->resource, "namespaces") ||
           !strcmp(res->group, "resource.k8s.io");
}

static dra_err mark_deleting(api_req *r, dra_doc *obj, int64_t grace)
{
    char now[32];
    dra_doc *m = api_meta(obj), *g;
    dra_err e;
    api_now(now, sizeof now);
    if ((e = api_doc_set_str(&r->a, m, "deletionTimestamp", now)) ||
        (e = api_doc_set_int(&r->a, m, "deletionGracePeriodSeconds", grace)))
        return e;
    g = api_doc_at(m, "generation");
    if (g && g->kind == DRA_DOC_INT && g->u.i > 0)
        g->u.i++;
    return DRA_OK;
}

/* How the object goes: 0 removed now, 1 marked and kept (finalizers,
 * namespace finalization, graceful pods). */
static dra_err plan_delete(api_req *r, const delopts *o, dra_doc *obj, int *keep)
{
    const char *pol = o->policy;
    int ns = !strcmp(r->sres->resource, "namespaces") && !*r->sres->group;
    dra_err e;
    *keep = 0;
    if (api_meta_str(obj, "deletionTimestamp")) {
        *keep = 1; /* already going: nothing more to do */
        return DRA_OK;
    }
    if (pol && !strcmp(pol, "Foreground") &&
        (e = api_add_finalizer(&r->a, obj, "foregroundDeletion")))
        return e;
    if (pol && !strcmp(pol, "Orphan") && (e = api_add_finalizer(&r->a, obj, "orphan")))
        return e;
    if (ns) {
        dra_doc *st = api_doc_map(&r->a, obj, "status");
        if (!st || api_doc_set_str(&r->a, st, "phase", "Terminating"))
            return DRA_ENOMEM;
        *keep = 1;
        return mark_deleting(r, obj, 0);
    }
    if (!strcmp(r->sres->resource, "pods") && !*r->sres->group &&
        r->srv->opts.graceful_pods && api_doc_str(api_doc_at(obj, "spec"), "nodeName") &&
        !(o->grace_set && o->grace == 0)) {
        int64_t g = 30;
        const dra_doc *tg = api_doc_at(api_doc_at(obj, "spec"),
                                       "terminationGracePeriodSeconds");
        if (o->grace_set)
            g = o->grace;
        else if (tg && tg->kind == DRA_DOC_INT)
            g = tg->u.i;
        *keep = 1;
        return mark_deleting(r, obj, g);
    }
    if (api_meta_list(obj, "finalizers")) {
        *keep = 1;
        return mark_deleting(r, obj, 0);
    }
    return DRA_OK;
}

/* deletionTimestamp - |old_s| + |new_s|, as kube moves the deadline of a
 * graceful deletion that is shortened; now + |new_s| when the stored
 * time does not parse. */
static dra_err move_deadline(api_req *r, dra_doc *meta, int64_t old_s, int64_t new_s)
{
    const char *ts = api_doc_str(meta, "deletionTimestamp");
    struct tm tm;
    time_t t = time(NULL);
    char buf[32];
    memset(&tm, 0, sizeof tm);
    if (ts && strptime(ts, "%Y-%m-%dT%H:%M:%SZ", &tm))
        t = timegm(&tm) - (time_t)old_s;
    t += (time_t)new_s;
    gmtime_r(&t, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return api_doc_set_str(&r->a, meta, "deletionTimestamp", buf);
}

/* A DELETE of an object already being deleted, as kube's BeforeDelete:
 * a graceful deletion may only be shortened (to 0: the pod goes now,
 * its kubelet is done with it, unless finalizers hold it); an object
 * with no grace period left and no finalizers goes (an earlier removal
 * did not finish); otherwise the deletion is pending and nothing
 * changes. Returns 1 when |obj| is to be written (*keep 1: updated, 0:
 * removed), 0 when nothing changes; *e on failure. */
static int delete_again(api_req *r, const delopts *o, dra_doc *obj, int *keep, dra_err *e)
{
    dra_doc *m = api_meta(obj);
    const dra_doc *g = api_doc_at(m, "deletionGracePeriodSeconds");
    int64_t cur = g && g->kind == DRA_DOC_INT ? g->u.i : 0;
    int held = api_meta_list(obj, "finalizers") != NULL;
    *e = DRA_OK;
    if (cur > 0) {
        if (!o->grace_set || o->grace < 0 || o->grace >= cur)
            return 0;
        if ((*e = move_deadline(r, m, cur, o->grace)) ||
            (*e = api_doc_set_int(&r->a, m, "deletionGracePeriodSeconds", o->grace)))
            return 0;
        *keep = o->grace > 0 || held;
        return 1;
    }
    if (held)
        return 0;
    *keep = 0;
    return 1;
}

static dra_err check_preconditions(api_req *r, const delopts *o, const dra_doc *obj)
{
    const char *uid = api_meta_str(obj, "uid"), *rv = api_meta_str(obj, "resourceVersion");
    char why[256];
    if (o->uid && *o->uid && (!uid || strcmp(o->uid, uid))) {
        snprintf(why, sizeof why, "Precondition failed: UID in precondition: %s, "
                                  "UID in object meta: %s", o->uid, uid ? uid : "");
        api_conflict(r, r->sres, r->name, why);
        return DRA_EINVAL;
    }
    if (o->rv && *o->rv && (!rv || strcmp(o->rv, rv))) {
        snprintf(why, sizeof why, "Precondition failed: ResourceVersion in "
                                  "precondition: %s, ResourceVersion in object "
                                  "meta: %s", o->rv, rv ? rv : "");
        api_conflict(r, r->sres, r->name, why);
        return DRA_EINVAL;
    }
    return DRA_OK;
}

static dra_err delete_one(api_req *r, const delopts *o, int reply)
{
    for (int tries = 0;; tries++) {
        dra_store_obj *cur, *stored;
        dra_doc *obj;
        uint64_t crv;
        int keep;
        char msg[192];
        dra_err e;
        if (dra_store_get(r->srv->store, r->skey, r->ns, r->name, &cur))
            return reply ? api_not_found(r, r->sres, r->name) : DRA_ENOTFOUND;
        crv = cur->rv;
        e = parse_stored(r, cur, &obj);
        if (e) {
            dra_store_obj_unref(cur);
            return e == DRA_ENOMEM ? e : DRA_OK;
        }
        if ((e = check_preconditions(r, o, obj))) {
            dra_store_obj_unref(cur);
            return reply ? DRA_OK : DRA_ECONFLICT;
        }
        if (api_meta_str(obj, "deletionTimestamp")) {
            if (!delete_again(r, o, obj, &keep, &e)) {
                if (!e)
                    e = reply ? api_reply_obj(r, 200, cur) : DRA_OK;
                dra_store_obj_unref(cur);
                return e;
            }
            dra_store_obj_unref(cur);
        } else {
            dra_store_obj_unref(cur);
            if ((e = plan_delete(r, o, obj, &keep)))
                return e;
        }
        if (r->dry_run)
            return reply ? api_reply_objdoc(r, 200, obj) : DRA_OK;
        e = api_store_write(r, keep ? DRA_STORE_UPDATE : DRA_STORE_DELETE, obj, crv,
                            &stored, msg, sizeof msg);
        if ((e == DRA_ECONFLICT || (e == DRA_ENOTFOUND && tries == 0)) &&
            tries < RETRIES)
            continue;
        if (e)
            return reply ? api_store_fail(r, r->sres, r->name, e, msg) : e;
        if (!reply)
            e = DRA_OK;
        else if (keep || returns_object(r->sres))
            e = api_reply_obj(r, 200, stored);
        else
            e = api_success(r, r->sres, r->name, api_meta_str(obj, "uid"));
        dra_store_obj_unref(stored);
        return e;
    }
}

dra_err api_delete(api_req *r)
{
    delopts o;
    dra_err e = parse_delopts(r, &o);
    if (e)
        return e == DRA_EINVAL ? DRA_OK : e;
    return delete_one(r, &o, 1);
}

dra_err api_delete_collection(api_req *r)
{
    api_filter f;
    delopts o;
    dra_store_page pg;
    dra_arena scratch;
    dra_buf *b = &r->out->body;
    dra_err e;
    size_t n = 0;
    if ((e = parse_delopts(r, &o)) || (e = api_filter_parse(r, &f)))
        return e == DRA_EINVAL ? DRA_OK : e;
    if ((e = dra_store_list(r->srv->store, r->skey, r->ns, NULL, NULL, 0, &pg, NULL)))
        return e;
    dra_arena_init(&scratch, r->srv->mem);
    dra_buf_reset(b);
    e = list_head(r, b, pg.rv, NULL, 0);
    for (size_t i = 0; i < pg.n && !e; i++) {
        dra_store_obj *after;
        if (!api_filter_obj(r->res, &f, pg.items[i].obj, &scratch))
            continue;
        r->name = pg.items[i].name;
        e = delete_one(r, &o, 0);
        if (e == DRA_ENOTFOUND || e == DRA_ECONFLICT) {
            e = DRA_OK;
            continue;
        }
        if (e)
            break;
        if (n++)
            dra_buf_putc(b, ',');
        /* The answer lists each object as it was when deleted (or as it
         * stays, marked, when finalizers hold it). */
        if (!dra_store_get(r->srv->store, r->skey, r->ns, pg.items[i].name, &after)) {
            e = put_item(r, b, after, &scratch);
            dra_store_obj_unref(after);
        } else {
            e = put_item(r, b, pg.items[i].obj, &scratch);
        }
    }
    r->name = NULL;
    dra_arena_fini(&scratch);
    dra_store_page_fini(&pg);
    if (e)
        return api_store_fail(r, r->sres, "", e, NULL);
    dra_buf_puts(b, "]}");
    r->out->code = 200;
    snprintf(r->out->content_type, sizeof r->out->content_type, "application/json");
    return b->oom ? DRA_ENOMEM : DRA_OK;
}

/* ---- for the background controllers --------------------------------------------------------- */

static void internal_req(api_req *r, dra_apiserver *srv, const api_resource *res,
                         const char *ns, const char *name, dra_apiserver_resp *resp,
                         dra_apiserver_req *in)
{
    memset(r, 0, sizeof *r);
    memset(in, 0, sizeof *in);
    in->method = "DELETE";
    r->srv = srv;
    r->in = in;
    r->out = resp;
    r->res = r->sres = res;
    api_store_key(res, r->skey, sizeof r->skey);
    r->ns = ns ? ns : "";
    r->name = name;
    r->fv = API_FV_IGNORE;
    dra_arena_init(&r->a, srv->mem);
}

dra_err api_delete_internal(dra_apiserver *srv, const api_resource *res,
                            const char *ns, const char *name, const char *uid,
                            const char *policy)
{
    api_req r;
    dra_apiserver_req in;
    dra_apiserver_resp resp;
    delopts o = {.policy = policy, .uid = uid};
    dra_err e;
    dra_apiserver_resp_init(&resp, srv->mem);
    internal_req(&r, srv, res, ns, name, &resp, &in);
    e = delete_one(&r, &o, 0);
    dra_arena_fini(&r.a);
    dra_apiserver_resp_fini(&resp);
    return e;
}

dra_err api_mutate_internal(dra_apiserver *srv, const api_resource *res,
                            const char *ns, const char *name,
                            int (*fn)(void *ud, dra_arena *a, dra_doc *obj),
                            void *ud)
{
    api_req r;
    dra_apiserver_req in;
    dra_apiserver_resp resp;
    dra_err e = DRA_OK;
    dra_apiserver_resp_init(&resp, srv->mem);
    internal_req(&r, srv, res, ns, name, &resp, &in);
    for (int tries = 0; tries < RETRIES; tries++) {
        dra_store_obj *cur, *stored = NULL;
        dra_doc *obj;
        uint64_t crv;
        int rc;
        if ((e = dra_store_get(srv->store, r.skey, r.ns, name, &cur)))
            break;
        crv = cur->rv;
        e = api_doc_parse(&r.a, cur->json, cur->len, &obj);
        dra_store_obj_unref(cur);
        if (e)
            break;
        rc = fn(ud, &r.a, obj);
        if (rc < 0) {
            e = (dra_err)rc;
            break;
        }
        if (rc == 1)
            break;
        e = api_store_write(&r, deletion_done(res, obj) ? DRA_STORE_DELETE
                                                        : DRA_STORE_UPDATE,
                            obj, crv, &stored, NULL, 0);
        dra_store_obj_unref(stored);
        if (e != DRA_ECONFLICT)
            break;
    }
    dra_arena_fini(&r.a);
    dra_apiserver_resp_fini(&resp);
    return e;
}
