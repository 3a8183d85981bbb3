/*
 * plugin/service.c: the gRPC handlers of the three servers. The DRA
 * socket serves DRAPlugin v1 and v1beta1 (the same messages on the
 * wire, the same code), the registration socket
 * pluginregistration.Registration, the health port grpc.health.v1.Health
 * answering SERVING only after a real GetInfo and an empty
 * NodePrepareResources on the plugin's own sockets (NVIDIA's health.go).
 * A request that does not decode is INVALID_ARGUMENT.
 */
#include <stdio.h>
#include <string.h>

#include "plugin_int.h"

#define SELF_CHECK_TIMEOUT_MS 5000

static void fail_rpc(plugin_rpc *rpc, int code, const char *msg)
{
    rpc->code = code;
    snprintf(rpc->msg, sizeof(rpc->msg), "%s", msg);
}

/* Decoding failures: Go's gRPC answers INTERNAL "grpc: error
 * unmarshalling request"; a malformed request is the caller's fault, so
 * INVALID_ARGUMENT here (and RESOURCE_EXHAUSTED beyond the claim limit). */
static void bad_request(plugin_rpc *rpc, dra_err e, const char *why)
{
    rpc->code = e == DRA_ELIMIT ? DRA_GRPC_RESOURCE_EXHAUSTED
                : e == DRA_ENOMEM ? DRA_GRPC_RESOURCE_EXHAUSTED
                                  : DRA_GRPC_INVALID_ARGUMENT;
    snprintf(rpc->msg, sizeof(rpc->msg), "grpc: error unmarshalling request: %s",
             why && *why ? why : dra_strerror(e));
}

static int is_prepare(const char *m)
{
    return strcmp(m, PLUGIN_METHOD_V1_PREPARE) == 0 ||
           strcmp(m, PLUGIN_METHOD_V1BETA1_PREPARE) == 0;
}

static int is_unprepare(const char *m)
{
    return strcmp(m, PLUGIN_METHOD_V1_UNPREPARE) == 0 ||
           strcmp(m, PLUGIN_METHOD_V1BETA1_UNPREPARE) == 0;
}

static void unknown_method(plugin_rpc *rpc)
{
    rpc->code = DRA_GRPC_UNIMPLEMENTED;
    snprintf(rpc->msg, sizeof(rpc->msg), "unknown method %s", rpc->method);
}

void plugin_handle_dra(void *ud, plugin_rpc *rpc)
{
    dra_plugin *p = ud;
    int prep = is_prepare(rpc->method);
    if (!prep && !is_unprepare(rpc->method)) {
        unknown_method(rpc);
        return;
    }
    dra_arena a;
    dra_arena_init(&a, p->mem);
    dra_plugin_claim_ref *claims;
    size_t n;
    char why[1024] = "";
    dra_err e = plugin_pb_decode_claims(&a, rpc->req, rpc->req_len, &claims, &n, why,
                                        sizeof(why));
    dra_plugin_claim_result *res = NULL;
    if (e != DRA_OK) {
        bad_request(rpc, e, why);
    } else if (prep) {
        e = plugin_prepare(p, claims, n, &a, &res, rpc->msg, sizeof(rpc->msg));
        if (e == DRA_ENOMEM)
            fail_rpc(rpc, DRA_GRPC_RESOURCE_EXHAUSTED, "out of memory");
        else if (e != DRA_OK)
            rpc->code = DRA_GRPC_UNKNOWN; /* a Go error from the handler */
        else if (plugin_pb_encode_prepare_resp(&a, res, n, rpc->resp) != DRA_OK)
            fail_rpc(rpc, DRA_GRPC_RESOURCE_EXHAUSTED, "out of memory");
    } else {
        plugin_unprepare(p, claims, n, &a, &res);
        if (!res || plugin_pb_encode_unprepare_resp(&a, res, n, rpc->resp) != DRA_OK)
            fail_rpc(rpc, DRA_GRPC_RESOURCE_EXHAUSTED, "out of memory");
    }
    dra_arena_fini(&a);
}

void plugin_handle_reg(void *ud, plugin_rpc *rpc)
{
    dra_plugin *p = ud;
    dra_arena a;
    dra_arena_init(&a, p->mem);
    if (strcmp(rpc->method, PLUGIN_METHOD_GET_INFO) == 0) {
        static const char *const versions[] = {DRA_PLUGIN_SERVICE_V1,
                                               DRA_PLUGIN_SERVICE_V1BETA1};
        dra_plugin_info info = {DRA_PLUGIN_TYPE_DRA, DRA_PLUGIN_DRIVER, p->dra_sock,
                                (const char **)versions, 2};
        dra_err e = plugin_pb_decode_info_req(&a, rpc->req, rpc->req_len);
        if (e != DRA_OK)
            bad_request(rpc, e, NULL);
        else if (plugin_pb_encode_info(&a, &info, rpc->resp) != DRA_OK)
            fail_rpc(rpc, DRA_GRPC_RESOURCE_EXHAUSTED, "out of memory");
    } else if (strcmp(rpc->method, PLUGIN_METHOD_NOTIFY) == 0) {
        int reg;
        const char *err;
        dra_err e = plugin_pb_decode_reg_status(&a, rpc->req, rpc->req_len, &reg, &err);
        if (e != DRA_OK) {
            bad_request(rpc, e, NULL);
        } else {
            pthread_mutex_lock(&p->mu);
            p->registered = reg;
            snprintf(p->reg_error, sizeof(p->reg_error), "%s", err);
            pthread_mutex_unlock(&p->mu);
            if (!reg) {
                rpc->code = DRA_GRPC_UNKNOWN;
                snprintf(rpc->msg, sizeof(rpc->msg), "failed registration process: %s", err);
            } else {
                plugin_pb_encode_empty(rpc->resp);
            }
        }
    } else {
        unknown_method(rpc);
    }
    dra_arena_fini(&a);
}

/* One call to the plugin's own socket |path|; 1 when it answered OK. */
static int self_call(dra_plugin *p, const char *path, const char *method, const dra_buf *req,
                     dra_buf *resp)
{
    int code;
    char msg[256];
    return plugin_h2_unary(path, method, (const uint8_t *)(req->p ? req->p : ""), req->len,
                           SELF_CHECK_TIMEOUT_MS, p->mem, resp, &code, msg,
                           sizeof(msg)) == DRA_OK &&
           code == DRA_GRPC_OK && !resp->oom;
}

/* GetInfo on the registration socket and an empty v1beta1
 * NodePrepareResources on the DRA socket, as NVIDIA's Check does. */
static int self_check(dra_plugin *p)
{
    dra_arena a;
    dra_arena_init(&a, p->mem);
    dra_buf req, resp;
    dra_buf_init(&req, p->mem);
    dra_buf_init(&resp, p->mem);
    dra_plugin_info info;
    dra_plugin_claim_result *res;
    size_t n;
    int ok = self_call(p, p->reg_sock, PLUGIN_METHOD_GET_INFO, &req, &resp) &&
             plugin_pb_decode_info(&a, (const uint8_t *)resp.p, resp.len, &info) == DRA_OK;
    dra_buf_reset(&resp);
    ok = ok && plugin_pb_encode_claims(&a, NULL, 0, &req) == DRA_OK &&
         self_call(p, p->dra_sock, PLUGIN_METHOD_V1BETA1_PREPARE, &req, &resp) &&
         plugin_pb_decode_prepare_resp(&a, (const uint8_t *)resp.p, resp.len, &res, &n) ==
             DRA_OK;
    dra_buf_fini(&req);
    dra_buf_fini(&resp);
    dra_arena_fini(&a);
    return ok;
}

void plugin_handle_health(void *ud, plugin_rpc *rpc)
{
    dra_plugin *p = ud;
    if (strcmp(rpc->method, PLUGIN_METHOD_HEALTH_CHECK) != 0) {
        unknown_method(rpc);
        return;
    }
    dra_arena a;
    dra_arena_init(&a, p->mem);
    const char *service;
    dra_err e = plugin_pb_decode_health_req(&a, rpc->req, rpc->req_len, &service);
    if (e != DRA_OK)
        bad_request(rpc, e, NULL);
    else if (strcmp(service, "") != 0 && strcmp(service, "liveness") != 0)
        fail_rpc(rpc, DRA_GRPC_NOT_FOUND, "unknown service");
    else if (plugin_pb_encode_health_resp(self_check(p) ? DRA_HEALTH_SERVING
                                                        : DRA_HEALTH_NOT_SERVING,
                                          rpc->resp) != DRA_OK)
        fail_rpc(rpc, DRA_GRPC_RESOURCE_EXHAUSTED, "out of memory");
    dra_arena_fini(&a);
}
