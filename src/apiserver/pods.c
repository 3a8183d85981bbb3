/*
 * pods.c: the pod subresources beyond status. pods/binding assigns a pod
 * to a node the way the scheduler's Binding does (409 when the pod is
 * already bound or being deleted); pods/log resolves the container as
 * kube-apiserver does and asks the node agent's log source for the
 * stream, answering like kube-apiserver for a pod without one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver_int.h"

/* ---- binding -------------------------------------------------------------------- */

typedef struct bind_ctx {
    const char *node, *uid;
    const dra_doc *annotations;
    int outcome; /* 0 bound, 1 already bound, 2 deleting, 3 uid mismatch */
    char other[256];
} bind_ctx;

static dra_err set_scheduled(dra_arena *a, dra_doc *pod)
{
    dra_doc *st = api_doc_map(a, pod, "status"), *conds, *c;
    char now[32];
    if (!st)
        return DRA_ENOMEM;
    conds = api_doc_at(st, "conditions");
    if (!conds || conds->kind != DRA_DOC_LIST) {
        if (!(conds = dra_doc_new_list(a, 1)) ||
            dra_doc_map_set(a, st, "conditions", conds))
            return DRA_ENOMEM;
    }
    for (size_t i = 0; i < conds->u.list.n; i++) {
        const char *t = api_doc_str(conds->u.list.items[i], "type");
        if (t && !strcmp(t, "PodScheduled")) {
            memmove(&conds->u.list.items[i], &conds->u.list.items[i + 1],
                    (conds->u.list.n - i - 1) * sizeof conds->u.list.items[0]);
            conds->u.list.n--;
            break;
        }
    }
    api_now(now, sizeof now);
    if (!(c = dra_doc_new_map(a, 4)) || api_doc_set_str(a, c, "type", "PodScheduled") ||
        api_doc_set_str(a, c, "status", "True") ||
        dra_doc_map_set(a, c, "lastProbeTime", dra_doc_new_null(a)) ||
        api_doc_set_str(a, c, "lastTransitionTime", now))
        return DRA_ENOMEM;
    return dra_doc_list_push(a, conds, c);
}

static int bind_fn(void *ud, dra_arena *a, dra_doc *pod)
{
    bind_ctx *b = ud;
    dra_doc *spec = api_doc_map(a, pod, "spec");
    const char *cur = api_doc_str(spec, "nodeName");
    const char *uid = api_meta_str(pod, "uid");
    if (b->uid && *b->uid && (!uid || strcmp(uid, b->uid))) {
        b->outcome = 3;
        snprintf(b->other, sizeof b->other, "%s", uid ? uid : "");
        return 1;
    }
    if (api_meta_str(pod, "deletionTimestamp")) {
        b->outcome = 2;
        return 1;
    }
    if (cur && *cur) {
        b->outcome = 1;
        snprintf(b->other, sizeof b->other, "%s", cur);
        return 1;
    }
    if (!spec || api_doc_set_str(a, spec, "nodeName", b->node))
        return DRA_ENOMEM;
    if (b->annotations && b->annotations->kind == DRA_DOC_MAP) {
        dra_doc *ann = api_doc_map(a, api_meta(pod), "annotations");
        if (!ann)
            return DRA_ENOMEM;
        for (size_t i = 0; i < b->annotations->u.map.n; i++)
            if (dra_doc_map_set(a, ann, b->annotations->u.map.m[i].key,
                                b->annotations->u.map.m[i].val))
                return DRA_ENOMEM;
    }
    return set_scheduled(a, pod) ? DRA_ENOMEM : 0;
}

dra_err api_pod_binding(api_req *r)
{
    dra_doc *body, *target;
    bind_ctx b;
    dra_diag d;
    dra_err e;
    const api_resource binding = {"", "v1", "bindings", "binding", "Binding", 1,
                                  NULL, NULL, 0, DRA_KIND_UNKNOWN, 1};
    const char *kind;
    if ((e = api_body(r, &body)))
        return e == DRA_EPARSE ? DRA_OK : e;
    memset(&b, 0, sizeof b);
    target = api_doc_at(body, "target");
    b.node = api_doc_str(target, "name");
    b.uid = api_meta_str(body, "uid");
    b.annotations = api_doc_at(api_meta(body), "annotations");
    kind = api_doc_str(target, "kind");
    dra_diag_init(&d, r->srv->mem);
    if (kind && *kind && strcmp(kind, "Node"))
        dra_diag_add(&d, "target.kind", 0, 0,
                     "Unsupported value: \"%s\": supported values: \"Node\", \"\"",
                     kind);
    if (!b.node || !*b.node)
        dra_diag_add(&d, "target.name", 0, 0, "Required value");
    if (d.n) {
        e = api_invalid(r, &binding, r->name, &d);
        dra_diag_fini(&d);
        return e;
    }
    dra_diag_fini(&d);
    e = api_mutate_internal(r->srv, r->sres, r->ns, r->name, bind_fn, &b);
    if (e == DRA_ENOTFOUND)
        return api_not_found(r, r->sres, r->name);
    if (e)
        return api_store_fail(r, r->sres, r->name, e, NULL);
    switch (b.outcome) {
    case 1: {
        char why[400];
        snprintf(why, sizeof why, "pod %s is already assigned to node \"%s\"",
                 r->name, b.other);
        return api_fail(r, 409, "Conflict", &binding, r->name,
                        "Operation cannot be fulfilled on pods/binding \"%s\": %s",
                        r->name, why);
    }
    case 2:
        return api_fail(r, 409, "Conflict", &binding, r->name,
                        "Operation cannot be fulfilled on pods/binding \"%s\": pod "
                        "%s is being deleted, cannot be assigned to a host",
                        r->name, r->name);
    case 3:
        return api_fail(r, 409, "Conflict", &binding, r->name,
                        "Operation cannot be fulfilled on pods/binding \"%s\": "
                        "Precondition failed: UID in precondition: %s, UID in "
                        "object meta: %s", r->name, b.uid, b.other);
    default: {
        static const char ok[] = "{\"kind\":\"Status\",\"apiVersion\":\"v1\","
                                 "\"metadata\":{},\"status\":\"Success\",\"code\":201}";
        return api_reply(r, 201, ok, sizeof ok - 1);
    }
    }
}

/* ---- log ---------------------------------------------------------------------------- */

/* "[a b c]" of the names of the containers in list |key| of the spec. */
static const char *names(dra_arena *a, const dra_doc *spec, const char *key,
                         size_t *n)
{
    const dra_doc *l = api_doc_at(spec, key);
    dra_buf b;
    char *s;
    *n = 0;
    dra_buf_init(&b, a->mem);
    dra_buf_putc(&b, '[');
    for (size_t i = 0; l && l->kind == DRA_DOC_LIST && i < l->u.list.n; i++) {
        const char *nm = api_doc_str(l->u.list.items[i], "name");
        if (!nm)
            continue;
        dra_buf_printf(&b, "%s%s", (*n)++ ? " " : "", nm);
    }
    dra_buf_putc(&b, ']');
    s = b.p ? dra_arena_strdup(a, b.p) : NULL;
    dra_buf_fini(&b);
    return s;
}

static int has_container(const dra_doc *spec, const char *key, const char *name)
{
    const dra_doc *l = api_doc_at(spec, key);
    for (size_t i = 0; l && l->kind == DRA_DOC_LIST && i < l->u.list.n; i++) {
        const char *nm = api_doc_str(l->u.list.items[i], "name");
        if (nm && !strcmp(nm, name))
            return 1;
    }
    return 0;
}

/* The container the request means, or NULL after answering 400. */
static const char *pick_container(api_req *r, const dra_doc *pod)
{
    const dra_doc *spec = api_doc_at(pod, "spec");
    const char *c = api_q(r, "container");
    size_t n, ni;
    const char *all, *init;
    if (c && *c) {
        if (has_container(spec, "containers", c) ||
            has_container(spec, "initContainers", c) ||
            has_container(spec, "ephemeralContainers", c))
            return c;
        api_bad_request(r, "container %s is not valid for pod %s", c, r->name);
        return NULL;
    }
    all = names(&r->a, spec, "containers", &n);
    init = names(&r->a, spec, "initContainers", &ni);
    if (n == 1) {
        const dra_doc *l = api_doc_at(spec, "containers");
        return api_doc_str(l->u.list.items[0], "name");
    }
    if (ni)
        api_bad_request(r, "a container name must be specified for pod %s, choose "
                           "one of: %s or one of the init containers: %s",
                        r->name, all ? all : "[]", init ? init : "[]");
    else
        api_bad_request(r, "a container name must be specified for pod %s, choose "
                           "one of: %s", r->name, all ? all : "[]");
    return NULL;
}

static int64_t q_int(api_req *r, const char *key)
{
    const char *v = api_q(r, key);
    return v && *v ? atoll(v) : -1;
}

dra_err api_pod_log(api_req *r)
{
    dra_store_obj *o;
    dra_doc *pod;
    const char *c, *node;
    dra_log_source_fn fn;
    void *ud;
    dra_log_opts lo;
    dra_stream *st = NULL;
    dra_kstatus ks;
    dra_err e;
    if (dra_store_get(r->srv->store, r->skey, r->ns, r->name, &o))
        return api_not_found(r, r->sres, r->name);
    e = api_doc_parse(&r->a, o->json, o->len, &pod);
    dra_store_obj_unref(o);
    if (e)
        return e == DRA_ENOMEM ? e : api_fail(r, 500, "InternalError", NULL, NULL,
                                              "a stored pod is not valid JSON");
    if (!(c = pick_container(r, pod)))
        return DRA_OK;
    node = api_doc_str(api_doc_at(pod, "spec"), "nodeName");
    if (!node || !*node)
        return api_bad_request(r, "pod %s does not have a host assigned", r->name);
    pthread_mutex_lock(&r->srv->lock);
    fn = r->srv->log_fn;
    ud = r->srv->log_ud;
    pthread_mutex_unlock(&r->srv->lock);
    if (!fn)
        return api_bad_request(r, "container \"%s\" in pod \"%s\" is waiting to "
                                  "start: ContainerCreating", c, r->name);
    memset(&lo, 0, sizeof lo);
    lo.container = c;
    lo.follow = api_q_bool(r, "follow", 0);
    lo.previous = api_q_bool(r, "previous", 0);
    lo.timestamps = api_q_bool(r, "timestamps", 0);
    lo.tail_lines = q_int(r, "tailLines");
    lo.limit_bytes = q_int(r, "limitBytes");
    lo.since_seconds = q_int(r, "sinceSeconds");
    memset(&ks, 0, sizeof ks);
    e = fn(ud, r->ns, r->name, api_meta_str(pod, "uid"), &lo, &st, &ks);
    if (e)
        return api_fail(r, ks.code ? ks.code : 500,
                        ks.reason[0] ? ks.reason : "InternalError", NULL, NULL, "%s",
                        ks.message[0] ? ks.message : dra_strerror(e));
    r->out->code = 200;
    snprintf(r->out->content_type, sizeof r->out->content_type, "text/plain");
    dra_buf_reset(&r->out->body);
    if (lo.follow) {
        r->out->stream = st;
        return DRA_OK;
    }
    /* Without follow the whole log is ready: read it to its end. */
    for (int eof = 0, rounds = 0; !eof && rounds < 1000000; rounds++)
        if ((e = dra_stream_read(st, &r->out->body, &eof)))
            break;
    dra_stream_close(st);
    return e;
}
