/*
 * plugin/client.c: the kubelet's side of the plugin sockets, for drad's
 * node agent and the tests: GetInfo / NotifyRegistrationStatus on a
 * registration socket, NodePrepareResources / NodeUnprepareResources on
 * a DRA socket (v1 or v1beta1), and the standard health check. Unary
 * calls on nghttp2 (h2_client.c), each on a connection of its own at a
 * time: idle connections wait in a small pool, so threads calling at
 * once each get one and a sequence of calls reuses one. A pooled
 * connection the plugin closed (it stopped or was killed) is noticed
 * before use and replaced; a call that fails before any byte of it
 * reached the plugin is tried once more on a new connection.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "plugin_int.h"

#define DEFAULT_TIMEOUT_MS 45000
/* Idle connections kept: the node agent's parallel prepares. */
#define MAX_IDLE 8

struct dra_plugin_client {
    const dra_mem *mem;
    char *target;
    pthread_mutex_t mu; /* idle */
    plugin_h2c *idle[MAX_IDLE];
    int n_idle;
};

dra_err dra_plugin_client_new(const char *target, const dra_mem *mem,
                              dra_plugin_client **out)
{
    *out = NULL;
    if (!target || !*target)
        return DRA_EINVAL;
    dra_plugin_client *c = dra_calloc(mem, 1, sizeof(*c));
    if (!c)
        return DRA_ENOMEM;
    c->mem = mem;
    if (!(c->target = dra_strdup(mem, target))) {
        dra_free(mem, c);
        return DRA_ENOMEM;
    }
    pthread_mutex_init(&c->mu, NULL);
    *out = c;
    return DRA_OK;
}

void dra_plugin_client_free(dra_plugin_client *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->n_idle; i++)
        plugin_h2c_free(c->idle[i]);
    pthread_mutex_destroy(&c->mu);
    dra_free(c->mem, c->target);
    dra_free(c->mem, c);
}

static dra_err status_err(int code)
{
    switch (code) {
    case DRA_GRPC_OK:
        return DRA_OK;
    case DRA_GRPC_DEADLINE_EXCEEDED:
        return DRA_ETIMEOUT;
    case DRA_GRPC_UNAVAILABLE:
        return DRA_EUNAVAILABLE;
    case DRA_GRPC_INVALID_ARGUMENT:
        return DRA_EINVAL;
    case DRA_GRPC_NOT_FOUND:
        return DRA_ENOTFOUND;
    case DRA_GRPC_UNIMPLEMENTED:
        return DRA_EUNSUPPORTED;
    case DRA_GRPC_RESOURCE_EXHAUSTED:
        return DRA_ETOOLARGE;
    default:
        return DRA_EIO;
    }
}

/* An idle connection the plugin has not closed, NULL when none. */
static plugin_h2c *take_idle(dra_plugin_client *c)
{
    for (;;) {
        pthread_mutex_lock(&c->mu);
        plugin_h2c *h = c->n_idle > 0 ? c->idle[--c->n_idle] : NULL;
        pthread_mutex_unlock(&c->mu);
        if (!h || plugin_h2c_alive(h))
            return h;
        plugin_h2c_free(h);
    }
}

static void put_idle(dra_plugin_client *c, plugin_h2c *h)
{
    if (plugin_h2c_usable(h)) {
        pthread_mutex_lock(&c->mu);
        if (c->n_idle < MAX_IDLE) {
            c->idle[c->n_idle++] = h;
            h = NULL;
        }
        pthread_mutex_unlock(&c->mu);
    }
    plugin_h2c_free(h);
}

/* One unary call: sends |req| to |method|, appends the answer to |resp|.
 * Returns the call's status mapped to a dra_err (resp may then still be
 * empty). */
static dra_err unary(dra_plugin_client *c, const char *method,
                     const dra_buf *req, int timeout_ms, dra_buf *resp,
                     dra_plugin_rpc_status *st)
{
    dra_plugin_rpc_status local;
    if (!st)
        st = &local;
    if (timeout_ms <= 0)
        timeout_ms = DEFAULT_TIMEOUT_MS;
    int64_t deadline = plugin_now_ms() + timeout_ms;
    size_t before = resp->len;
    int oom = 0;
    for (int attempt = 0;; attempt++) {
        /* A retry takes a new connection: the pool may hold more stale ones. */
        plugin_h2c *h = attempt == 0 ? take_idle(c) : NULL;
        int reused = h != NULL;
        if (!h) {
            dra_err e = plugin_h2c_connect(c->target, deadline, c->mem, &h, st);
            if (e != DRA_OK)
                return e;
        }
        plugin_h2c_call(h, method, (const uint8_t *)req->p, req->len, deadline,
                        PLUGIN_DEFAULT_MAX_MESSAGE, resp, st);
        int again = reused && attempt == 0 && plugin_h2c_refused(h);
        oom = plugin_h2c_oom(h);
        put_idle(c, h);
        if (st->code != DRA_GRPC_OK)
            resp->len = before;
        if (!again)
            break;
    }
    if (resp->oom || oom)
        return DRA_ENOMEM;
    return status_err(st->code);
}

dra_err dra_plugin_client_get_info(dra_plugin_client *c, int timeout_ms,
                                   dra_arena *a, dra_plugin_info *out,
                                   dra_plugin_rpc_status *st)
{
    dra_buf req, resp;
    dra_buf_init(&req, c->mem);
    dra_buf_init(&resp, c->mem);
    memset(out, 0, sizeof(*out));
    dra_err e = unary(c, PLUGIN_METHOD_GET_INFO, &req, timeout_ms, &resp, st);
    if (e == DRA_OK)
        e = plugin_pb_decode_info(a, (const uint8_t *)resp.p, resp.len, out);
    dra_buf_fini(&resp);
    return e;
}

dra_err dra_plugin_client_notify_registration(dra_plugin_client *c,
                                              int registered,
                                              const char *error,
                                              int timeout_ms,
                                              dra_plugin_rpc_status *st)
{
    dra_buf req, resp;
    dra_buf_init(&req, c->mem);
    dra_buf_init(&resp, c->mem);
    dra_err e = plugin_pb_encode_reg_status(registered, error, &req);
    if (e == DRA_OK)
        e = unary(c, PLUGIN_METHOD_NOTIFY, &req, timeout_ms, &resp, st);
    dra_buf_fini(&req);
    dra_buf_fini(&resp);
    return e;
}

static const char *dra_method(const char *service, int prepare)
{
    if (!service || strcmp(service, DRA_PLUGIN_SERVICE_V1) == 0)
        return prepare ? PLUGIN_METHOD_V1_PREPARE : PLUGIN_METHOD_V1_UNPREPARE;
    if (strcmp(service, DRA_PLUGIN_SERVICE_V1BETA1) == 0)
        return prepare ? PLUGIN_METHOD_V1BETA1_PREPARE : PLUGIN_METHOD_V1BETA1_UNPREPARE;
    return NULL;
}

/* Orders |got| like |claims| and adds the error result the kubelet
 * would see for each claim the plugin did not answer. */
static dra_err align_results(dra_arena *a, const dra_plugin_claim_ref *claims,
                             size_t n, dra_plugin_claim_result *got, size_t n_got,
                             dra_plugin_claim_result **out, size_t *n_out)
{
    size_t cap = n + n_got;
    dra_plugin_claim_result *v = dra_arena_array(a, cap ? cap : 1, sizeof(*v));
    char *used = dra_arena_zalloc(a, n_got ? n_got : 1);
    if (!v || !used)
        return DRA_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < n_got && (used[j] || strcmp(got[j].uid, claims[i].uid ? claims[i].uid : "") != 0))
            j++;
        if (j < n_got) {
            used[j] = 1;
            v[k++] = got[j];
            continue;
        }
        memset(&v[k], 0, sizeof(v[k]));
        v[k].uid = dra_arena_strdup(a, claims[i].uid ? claims[i].uid : "");
        v[k++].error = "plugin returned no result for this claim";
        if (!v[k - 1].uid)
            return DRA_ENOMEM;
    }
    for (size_t j = 0; j < n_got; j++)
        if (!used[j])
            v[k++] = got[j];
    *out = v;
    *n_out = k;
    return DRA_OK;
}

static dra_err dra_call(dra_plugin_client *c, const char *service, int prepare,
                        const dra_plugin_claim_ref *claims, size_t n,
                        int timeout_ms, dra_arena *a,
                        dra_plugin_claim_result **out, size_t *n_out,
                        dra_plugin_rpc_status *st)
{
    *out = NULL;
    *n_out = 0;
    const char *method = dra_method(service, prepare);
    if (!method)
        return DRA_EINVAL;
    dra_buf req, resp;
    dra_buf_init(&req, c->mem);
    dra_buf_init(&resp, c->mem);
    dra_plugin_claim_result *got = NULL;
    size_t n_got = 0;
    dra_err e = plugin_pb_encode_claims(a, claims, n, &req);
    if (e == DRA_OK)
        e = unary(c, method, &req, timeout_ms, &resp, st);
    if (e == DRA_OK)
        e = prepare ? plugin_pb_decode_prepare_resp(a, (const uint8_t *)resp.p,
                                                    resp.len, &got, &n_got)
                    : plugin_pb_decode_unprepare_resp(a, (const uint8_t *)resp.p,
                                                      resp.len, &got, &n_got);
    if (e == DRA_OK)
        e = align_results(a, claims, n, got, n_got, out, n_out);
    dra_buf_fini(&req);
    dra_buf_fini(&resp);
    return e;
}

dra_err dra_plugin_client_prepare(dra_plugin_client *c, const char *service,
                                  const dra_plugin_claim_ref *claims,
                                  size_t n, int timeout_ms, dra_arena *a,
                                  dra_plugin_claim_result **out,
                                  size_t *n_out, dra_plugin_rpc_status *st)
{
    return dra_call(c, service, 1, claims, n, timeout_ms, a, out, n_out, st);
}

dra_err dra_plugin_client_unprepare(dra_plugin_client *c, const char *service,
                                    const dra_plugin_claim_ref *claims,
                                    size_t n, int timeout_ms, dra_arena *a,
                                    dra_plugin_claim_result **out,
                                    size_t *n_out, dra_plugin_rpc_status *st)
{
    return dra_call(c, service, 0, claims, n, timeout_ms, a, out, n_out, st);
}

dra_err dra_plugin_client_health_check(dra_plugin_client *c,
                                       const char *service, int timeout_ms,
                                       int *status, dra_plugin_rpc_status *st)
{
    dra_buf req, resp;
    dra_buf_init(&req, c->mem);
    dra_buf_init(&resp, c->mem);
    dra_arena a;
    dra_arena_init(&a, c->mem);
    *status = DRA_HEALTH_UNKNOWN;
    dra_err e = plugin_pb_encode_health_req(service, &req);
    if (e == DRA_OK)
        e = unary(c, PLUGIN_METHOD_HEALTH_CHECK, &req, timeout_ms, &resp, st);
    if (e == DRA_OK)
        e = plugin_pb_decode_health_resp(&a, (const uint8_t *)resp.p, resp.len, status);
    dra_arena_fini(&a);
    dra_buf_fini(&req);
    dra_buf_fini(&resp);
    return e;
}
