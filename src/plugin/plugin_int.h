/*
 * plugin/plugin_int.h: internals of module plugin shared between its
 * files (and the plugin's tests and fuzzers): the protobuf layer (pb.c),
 * the gRPC server adapter (grpc_server.c), the RPC handlers (service.c),
 * CDI specs (cdi.c), the checkpoint (checkpoint.c), opaque configuration
 * (config.c), prepare/unprepare (prepare.c), publishing (publish.c) and
 * device health (health.c).
 */
#ifndef DRA_PLUGIN_INT_H
#define DRA_PLUGIN_INT_H

#include <stddef.h>
#include <stdint.h>

#include "dra/api.h"
#include "dra/base.h"
#include "dra/codec.h"
#include "dra/plugin.h"

/* ---- constants ----------------------------------------------------------- */

#define PLUGIN_METHOD_GET_INFO "/pluginregistration.Registration/GetInfo"
#define PLUGIN_METHOD_NOTIFY "/pluginregistration.Registration/NotifyRegistrationStatus"
#define PLUGIN_METHOD_V1_PREPARE \
    "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"
#define PLUGIN_METHOD_V1_UNPREPARE \
    "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources"
#define PLUGIN_METHOD_V1BETA1_PREPARE \
    "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodePrepareResources"
#define PLUGIN_METHOD_V1BETA1_UNPREPARE \
    "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodeUnprepareResources"
#define PLUGIN_METHOD_HEALTH_CHECK "/grpc.health.v1.Health/Check"

/* gRPC's own default receive limit, which the kubelet also uses. */
#define PLUGIN_DEFAULT_MAX_MESSAGE ((size_t)4 << 20)
/* Claims in one request: a pod has at most a few dozen; this bounds the
 * work one call can ask for. */
#define PLUGIN_MAX_CLAIMS 4096

/* CDI names (NVIDIA cdi.go): vendor k8s.gpu.nvidia.com, class claim. */
#define PLUGIN_CDI_VENDOR "k8s." DRA_PLUGIN_DRIVER
#define PLUGIN_CDI_CLASS "claim"
#define PLUGIN_CDI_KIND PLUGIN_CDI_VENDOR "/" PLUGIN_CDI_CLASS

/* ---- protobuf (pb.c) -------------------------------------------------------
 * Decoders allocate everything (strings included) in |a|. They return
 * DRA_OK; DRA_EPARSE for malformed protobuf or a string that is not
 * UTF-8 (message in |err| where there is one); DRA_ELIMIT for more than
 * PLUGIN_MAX_CLAIMS claims; DRA_ENOMEM. Encoders append to |out| and
 * return DRA_OK or DRA_ENOMEM. */

/* NodePrepareResourcesRequest or NodeUnprepareResourcesRequest (v1 or
 * v1beta1: identical on the wire). */
dra_err plugin_pb_decode_claims(dra_arena *a, const uint8_t *data, size_t len,
                                dra_plugin_claim_ref **out, size_t *n,
                                char *err, size_t errcap) DRA_HIDDEN;
dra_err plugin_pb_encode_claims(dra_arena *a, const dra_plugin_claim_ref *claims,
                                size_t n, dra_buf *out) DRA_HIDDEN;
dra_err plugin_pb_encode_prepare_resp(dra_arena *a,
                                      const dra_plugin_claim_result *res,
                                      size_t n, dra_buf *out) DRA_HIDDEN;
dra_err plugin_pb_decode_prepare_resp(dra_arena *a, const uint8_t *data,
                                      size_t len, dra_plugin_claim_result **out,
                                      size_t *n) DRA_HIDDEN;
dra_err plugin_pb_encode_unprepare_resp(dra_arena *a,
                                        const dra_plugin_claim_result *res,
                                        size_t n, dra_buf *out) DRA_HIDDEN;
dra_err plugin_pb_decode_unprepare_resp(dra_arena *a, const uint8_t *data,
                                        size_t len,
                                        dra_plugin_claim_result **out,
                                        size_t *n) DRA_HIDDEN;
dra_err plugin_pb_decode_info_req(dra_arena *a, const uint8_t *data,
                                  size_t len) DRA_HIDDEN;
dra_err plugin_pb_encode_info(dra_arena *a, const dra_plugin_info *info,
                              dra_buf *out) DRA_HIDDEN;
dra_err plugin_pb_decode_info(dra_arena *a, const uint8_t *data, size_t len,
                              dra_plugin_info *out) DRA_HIDDEN;
dra_err plugin_pb_encode_reg_status(int registered, const char *error,
                                    dra_buf *out) DRA_HIDDEN;
dra_err plugin_pb_decode_reg_status(dra_arena *a, const uint8_t *data,
                                    size_t len, int *registered,
                                    const char **error) DRA_HIDDEN;
/* Messages without fields (InfoRequest, RegistrationStatusResponse). */
dra_err plugin_pb_encode_empty(dra_buf *out) DRA_HIDDEN;
dra_err plugin_pb_decode_empty(dra_arena *a, const uint8_t *data,
                               size_t len) DRA_HIDDEN;
dra_err plugin_pb_encode_health_req(const char *service, dra_buf *out) DRA_HIDDEN;
dra_err plugin_pb_decode_health_req(dra_arena *a, const uint8_t *data,
                                    size_t len, const char **service) DRA_HIDDEN;
dra_err plugin_pb_encode_health_resp(int status, dra_buf *out) DRA_HIDDEN;
dra_err plugin_pb_decode_health_resp(dra_arena *a, const uint8_t *data,
                                     size_t len, int *status) DRA_HIDDEN;

/* ---- gRPC server (grpc_server.c) ------------------------------------------ */

/* One call as the handler sees it: the full method name and request
 * bytes in; the handler sets |code| (DRA_GRPC_*), |msg| and, for OK,
 * appends the response message to |resp|. */
typedef struct plugin_rpc {
    const char *method;
    const uint8_t *req;
    size_t req_len;
    dra_buf *resp;
    int code;
    char msg[1024];
} plugin_rpc;

typedef void (*plugin_rpc_handler)(void *ud, plugin_rpc *rpc);

typedef struct plugin_server_opts {
    const char *address; /* "unix:/path" or "host:port" (port 0: any) */
    int workers;         /* calls served at once (threads) */
    size_t max_message;  /* receive and send limit, bytes */
    plugin_rpc_handler handler;
    void *ud;
    const dra_mem *mem;
} plugin_server_opts;

typedef struct plugin_server plugin_server;

/* Binds |o->address| and starts the workers; the handler may run on any
 * of them, concurrently. DRA_OK; DRA_EIO (cannot bind: message in
 * |err|); DRA_ENOMEM. */
dra_err plugin_server_start(const plugin_server_opts *o, plugin_server **out,
                            char *err, size_t errcap) DRA_HIDDEN;
/* The bound TCP port (the real one for port 0); 1 for unix sockets. */
int plugin_server_port(const plugin_server *s) DRA_HIDDEN;
/* Stops accepting, cancels calls in flight, joins the workers and frees
 * the server. NULL: no-op. */
void plugin_server_stop(plugin_server *s) DRA_HIDDEN;

#endif
