/*
 * plugin/client.c: the kubelet's side of the plugin sockets, for drad's
 * node agent and the tests: GetInfo / NotifyRegistrationStatus on a
 * registration socket, NodePrepareResources / NodeUnprepareResources on
 * a DRA socket (v1 or v1beta1), and the standard health check. Unary
 * calls on the gRPC core C library, one pluck queue per call so the
 * client can be shared between threads.
 */
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <stdio.h>
#include <string.h>

#include "plugin_int.h"

#define DEFAULT_TIMEOUT_MS 45000

struct dra_plugin_client {
    const dra_mem *mem;
    grpc_channel *channel;
};

dra_err dra_plugin_client_new(const char *target, const dra_mem *mem,
                              dra_plugin_client **out)
{
    *out = NULL;
    if (!target || !*target)
        return DRA_EINVAL;
    dra_buf t;
    dra_buf_init(&t, mem);
    if (target[0] == '/')
        dra_buf_puts(&t, "unix:");
    dra_buf_puts(&t, target);
    if (t.oom) {
        dra_buf_fini(&t);
        return DRA_ENOMEM;
    }
    dra_plugin_client *c = dra_calloc(mem, 1, sizeof(*c));
    if (!c) {
        dra_buf_fini(&t);
        return DRA_ENOMEM;
    }
    c->mem = mem;
    grpc_init();
    grpc_arg args[1];
    args[0].type = GRPC_ARG_INTEGER;
    args[0].key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
    args[0].value.integer = (int)PLUGIN_DEFAULT_MAX_MESSAGE;
    grpc_channel_args cargs = {1, args};
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    c->channel = grpc_channel_create(t.p, creds, &cargs);
    grpc_channel_credentials_release(creds);
    dra_buf_fini(&t);
    *out = c;
    return DRA_OK;
}

void dra_plugin_client_free(dra_plugin_client *c)
{
    if (!c)
        return;
    grpc_channel_destroy(c->channel);
    dra_free(c->mem, c);
    grpc_shutdown();
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

static void set_status(dra_plugin_rpc_status *st, int code, grpc_slice details)
{
    if (!st)
        return;
    st->code = code;
    size_t n = GRPC_SLICE_LENGTH(details);
    if (n >= sizeof(st->message))
        n = sizeof(st->message) - 1;
    memcpy(st->message, GRPC_SLICE_START_PTR(details), n);
    st->message[n] = '\0';
}

static void copy_response(grpc_byte_buffer *bb, dra_buf *resp)
{
    grpc_byte_buffer_reader r;
    if (!grpc_byte_buffer_reader_init(&r, bb))
        return;
    grpc_slice s = grpc_byte_buffer_reader_readall(&r);
    grpc_byte_buffer_reader_destroy(&r);
    dra_buf_append(resp, GRPC_SLICE_START_PTR(s), GRPC_SLICE_LENGTH(s));
    grpc_slice_unref(s);
}

/* One unary call: sends |req| to |method|, appends the answer to |resp|.
 * Returns the call's status mapped to a dra_err (resp may then still be
 * empty). */
static dra_err unary(dra_plugin_client *c, const char *method,
                     const dra_buf *req, int timeout_ms, dra_buf *resp,
                     dra_plugin_rpc_status *st)
{
    if (timeout_ms <= 0)
        timeout_ms = DEFAULT_TIMEOUT_MS;
    gpr_timespec deadline = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                                         gpr_time_from_millis(timeout_ms, GPR_TIMESPAN));
    grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
    grpc_slice mslice = grpc_slice_from_copied_string(method);
    grpc_call *call = grpc_channel_create_call(c->channel, NULL, GRPC_PROPAGATE_DEFAULTS,
                                               cq, mslice, NULL, deadline, NULL);
    grpc_slice_unref(mslice);
    grpc_slice body = grpc_slice_from_copied_buffer(req->p ? req->p : "", req->len);
    grpc_byte_buffer *out = grpc_raw_byte_buffer_create(&body, 1);
    grpc_slice_unref(body);
    grpc_byte_buffer *in = NULL;
    grpc_metadata_array init_md, trail_md;
    grpc_metadata_array_init(&init_md);
    grpc_metadata_array_init(&trail_md);
    grpc_status_code code = GRPC_STATUS_UNKNOWN;
    grpc_slice details = grpc_empty_slice();

    grpc_op ops[6];
    memset(ops, 0, sizeof(ops));
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = out;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &init_md;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &in;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &trail_md;
    ops[5].data.recv_status_on_client.status = &code;
    ops[5].data.recv_status_on_client.status_details = &details;
    if (grpc_call_start_batch(call, ops, 6, call, NULL) == GRPC_CALL_OK)
        (void)grpc_completion_queue_pluck(cq, call, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    else
        code = GRPC_STATUS_INTERNAL;
    if (in && code == GRPC_STATUS_OK)
        copy_response(in, resp);
    set_status(st, (int)code, details);

    if (in)
        grpc_byte_buffer_destroy(in);
    grpc_byte_buffer_destroy(out);
    grpc_slice_unref(details);
    grpc_metadata_array_destroy(&init_md);
    grpc_metadata_array_destroy(&trail_md);
    grpc_call_unref(call);
    grpc_completion_queue_shutdown(cq);
    (void)grpc_completion_queue_pluck(cq, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    grpc_completion_queue_destroy(cq);
    if (resp->oom)
        return DRA_ENOMEM;
    return status_err((int)code);
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
