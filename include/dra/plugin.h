/*
 * dra/plugin.h: the NVIDIA GPU DRA kubelet plugin (driver gpu.nvidia.com)
 * and a gRPC client for the kubelet side of its sockets.
 *
 * The plugin serves the kubelet's plugin-registration service on
 * <registrar-dir>/gpu.nvidia.com-reg.sock and the DRA service (v1 and
 * v1beta1) on <plugins-dir>/gpu.nvidia.com/dra.sock, prepares claims
 * into CDI spec files, keeps a crash-safe checkpoint, publishes the
 * node's ResourceSlice through a dra_cluster and answers the standard
 * gRPC health check. The client half is what drad's node agent (or any
 * kubelet stand-in) uses to talk to such a plugin, this one or NVIDIA's.
 * Both halves speak gRPC on nghttp2 and protobuf-c, without the gRPC
 * core library; the servers are library dra_plugin, the client library
 * dra_plugin_client.
 *
 * Threads: a dra_plugin_client may be used from several threads at once
 * (each call takes a connection of its own from the client's pool); a
 * dra_plugin is started and stopped from one thread and serves calls on
 * its own worker threads.
 */
#ifndef DRA_PLUGIN_H
#define DRA_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "dra/base.h"
#include "dra/cluster.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- names shared by both halves ---------------------------------------- */

#define DRA_PLUGIN_DRIVER "gpu.nvidia.com"
/* PluginInfo.type for DRA drivers (pluginregistration constants.go). */
#define DRA_PLUGIN_TYPE_DRA "DRAPlugin"
/* Service names as listed in PluginInfo.supported_versions. */
#define DRA_PLUGIN_SERVICE_V1 "v1.DRAPlugin"
#define DRA_PLUGIN_SERVICE_V1BETA1 "v1beta1.DRAPlugin"
#define DRA_PLUGIN_SERVICE_HEALTH "v1alpha1.DRAResourceHealth"

/* gRPC status codes (grpc/status.h), so callers need not include gRPC. */
enum {
    DRA_GRPC_OK = 0,
    DRA_GRPC_CANCELLED = 1,
    DRA_GRPC_UNKNOWN = 2,
    DRA_GRPC_INVALID_ARGUMENT = 3,
    DRA_GRPC_DEADLINE_EXCEEDED = 4,
    DRA_GRPC_NOT_FOUND = 5,
    DRA_GRPC_RESOURCE_EXHAUSTED = 8,
    DRA_GRPC_FAILED_PRECONDITION = 9,
    DRA_GRPC_UNIMPLEMENTED = 12,
    DRA_GRPC_INTERNAL = 13,
    DRA_GRPC_UNAVAILABLE = 14
};

/* grpc.health.v1 HealthCheckResponse.ServingStatus. */
enum {
    DRA_HEALTH_UNKNOWN = 0,
    DRA_HEALTH_SERVING = 1,
    DRA_HEALTH_NOT_SERVING = 2,
    DRA_HEALTH_SERVICE_UNKNOWN = 3
};

/* The outcome of one RPC as the server sent it: its gRPC status code
 * and message (truncated), or for failures without an answer the code a
 * gRPC client reports itself, in gRPC's words: UNAVAILABLE (nothing
 * listens: "failed to connect to all addresses; ..."; the connection
 * went mid-call: "Socket closed"), DEADLINE_EXCEEDED ("Deadline
 * Exceeded"), RESOURCE_EXHAUSTED (an answer over 4 MiB: "Received
 * message larger than max (N vs. 4194304)"), INTERNAL (a malformed
 * answer). */
typedef struct dra_plugin_rpc_status {
    int code;
    char message[512];
} dra_plugin_rpc_status;

/* Claim as the kubelet names it in NodePrepareResources and
 * NodeUnprepareResources. Strings are borrowed. */
typedef struct dra_plugin_claim_ref {
    const char *namespace_;
    const char *uid;
    const char *name;
} dra_plugin_claim_ref;

/* One prepared device (DRA v1 Device). */
typedef struct dra_plugin_device {
    const char **request_names; /* empty: every request of the claim */
    size_t n_request_names;
    const char *pool_name;
    const char *device_name;
    const char **cdi_device_ids; /* fully qualified: vendor/class=name */
    size_t n_cdi_device_ids;
} dra_plugin_device;

/* The answer for one claim: |error| NULL or "" means prepared (or
 * unprepared); otherwise the devices are to be ignored. */
typedef struct dra_plugin_claim_result {
    const char *uid;
    dra_plugin_device *devices; /* prepare only */
    size_t n_devices;
    const char *error;
} dra_plugin_claim_result;

/* pluginregistration.PluginInfo. */
typedef struct dra_plugin_info {
    const char *type;     /* "DRAPlugin" */
    const char *name;     /* driver name */
    const char *endpoint; /* absolute path of the DRA socket */
    const char **supported_versions;
    size_t n_supported_versions;
} dra_plugin_info;

/* ---- client ---------------------------------------------------------------
 * One client per socket (registration socket, DRA socket, or the TCP
 * health port). */
typedef struct dra_plugin_client dra_plugin_client;

/* A client for |target|: an absolute path (a unix socket), "unix:PATH",
 * "unix:///PATH", or "HOST:PORT" (TCP, for the health port). Connecting
 * is lazy: this succeeds even when nothing listens yet; calls then fail
 * with DRA_EUNAVAILABLE. Connections are kept for the next calls; one
 * the server closed meanwhile (it stopped, or was killed and started
 * again) is replaced before use, and a call that failed before any of
 * it was sent is tried once more on a new connection. |mem| may be NULL. DRA_OK; DRA_EINVAL for an empty
 * target; DRA_ENOMEM. The client is freed with dra_plugin_client_free. */
dra_err dra_plugin_client_new(const char *target, const dra_mem *mem,
                              dra_plugin_client **out);
void dra_plugin_client_free(dra_plugin_client *c); /* NULL: no-op */

/* Every call below waits at most |timeout_ms| (<= 0: 45 s, the
 * kubelet's DRA timeout), decodes the answer into |a| (strings and
 * arrays live there) and fills |st| (may be NULL) with the gRPC status.
 * Returns DRA_OK when the server answered OK and the answer decoded;
 * otherwise, by gRPC status: DEADLINE_EXCEEDED DRA_ETIMEOUT,
 * UNAVAILABLE DRA_EUNAVAILABLE, INVALID_ARGUMENT DRA_EINVAL, NOT_FOUND
 * DRA_ENOTFOUND, UNIMPLEMENTED DRA_EUNSUPPORTED, RESOURCE_EXHAUSTED
 * DRA_ETOOLARGE, anything else DRA_EIO; DRA_EPARSE when the answer is
 * not the expected message; DRA_ENOMEM. */

/* pluginregistration.Registration/GetInfo. */
dra_err dra_plugin_client_get_info(dra_plugin_client *c, int timeout_ms,
                                   dra_arena *a, dra_plugin_info *out,
                                   dra_plugin_rpc_status *st);
/* pluginregistration.Registration/NotifyRegistrationStatus; |error|
 * may be NULL. A plugin answers an error status when |registered| is
 * 0 (then this returns the mapped error, as the kubelet sees it). */
dra_err dra_plugin_client_notify_registration(dra_plugin_client *c,
                                              int registered,
                                              const char *error,
                                              int timeout_ms,
                                              dra_plugin_rpc_status *st);

/* NodePrepareResources of |service| (DRA_PLUGIN_SERVICE_V1 or
 * DRA_PLUGIN_SERVICE_V1BETA1; NULL: v1), for |n| claims. *out is an
 * array of *n_out results in |a|, one per claim UID the plugin answered
 * for, in the order of |claims| where they match (extra entries last).
 * A claim the plugin left out is reported as a result with the error
 * "plugin returned no result for this claim", as the kubelet treats it.
 * DRA_EINVAL for an unknown |service|. */
dra_err dra_plugin_client_prepare(dra_plugin_client *c, const char *service,
                                  const dra_plugin_claim_ref *claims,
                                  size_t n, int timeout_ms, dra_arena *a,
                                  dra_plugin_claim_result **out,
                                  size_t *n_out, dra_plugin_rpc_status *st);
/* NodeUnprepareResources, same conventions (results have no devices). */
dra_err dra_plugin_client_unprepare(dra_plugin_client *c, const char *service,
                                    const dra_plugin_claim_ref *claims,
                                    size_t n, int timeout_ms, dra_arena *a,
                                    dra_plugin_claim_result **out,
                                    size_t *n_out, dra_plugin_rpc_status *st);

/* grpc.health.v1.Health/Check for |service| ("" or "liveness" for this
 * plugin); *status is a DRA_HEALTH_* value. */
dra_err dra_plugin_client_health_check(dra_plugin_client *c,
                                       const char *service, int timeout_ms,
                                       int *status, dra_plugin_rpc_status *st);

/* ---- the plugin ----------------------------------------------------------- */

/* Feature gates NVIDIA's driver defines (pkg/featuregates), as parsed
 * from --feature-gates "Name=true,Name=false". Unknown names are an
 * error, as in NVIDIA's parser. */
typedef struct dra_plugin_gates {
    int time_slicing_settings;    /* TimeSlicingSettings (alpha, off) */
    int mps_support;              /* MPSSupport (alpha, off) */
    int passthrough_support;      /* PassthroughSupport (alpha, off) */
    int dynamic_mig;              /* DynamicMIG (alpha, off) */
    int nvml_device_health_check; /* NVMLDeviceHealthCheck (alpha, off) */
    int device_taints;            /* DeviceTaints: publish unhealthy
                                   * devices tainted instead of leaving
                                   * them out (on; see docs/plugin.md) */
    int imex_daemons_with_dns_names; /* ComputeDomain gates: accepted */
    int compute_domain_cliques;      /* and recorded, not used: this */
    int crash_on_nvlink_fabric_errors; /* plugin has no ComputeDomains */
} dra_plugin_gates;

/* Parses |spec| ("A=true,B=false,"; empty items are skipped) on top of
 * the defaults already in |g| (see dra_plugin_gates_default). DRA_OK;
 * DRA_EINVAL with the message in |d| for an unknown gate, a value that
 * is not a boolean, or a forbidden combination (DynamicMIG with
 * PassthroughSupport, NVMLDeviceHealthCheck or MPSSupport). */
dra_err dra_plugin_gates_parse(dra_plugin_gates *g, const char *spec,
                               dra_diag *d);
void dra_plugin_gates_default(dra_plugin_gates *g);

/* The plugin's settings: NVIDIA's flags, with the same defaults where
 * dra_plugin_opts_default sets them. Strings are borrowed until
 * dra_plugin_free. */
typedef struct dra_plugin_opts {
    const char *node_name;             /* --node-name (required) */
    const char *namespace_;            /* --namespace ("default") */
    const char *cdi_root;              /* --cdi-root ("/etc/cdi") */
    const char *nvidia_driver_root;    /* --nvidia-driver-root ("/"): host view */
    const char *container_driver_root; /* --container-driver-root: where this
                                        * process sees the driver root; NULL:
                                        * "/driver-root" when that exists,
                                        * else nvidia_driver_root */
    const char *nvidia_cdi_hook_path;  /* --nvidia-cdi-hook-path (host path);
                                        * NULL: see docs/plugin.md */
    const char *registrar_dir;         /* --kubelet-registrar-directory-path */
    const char *plugins_dir;           /* --kubelet-plugins-directory-path */
    int healthcheck_port;              /* --healthcheck-port (-1: off, 0: any) */
    const char *healthcheck_host;      /* where it listens ("": all, as upstream) */
    const char *additional_xids_to_ignore; /* "13,31" style, may be NULL */
    dra_plugin_gates gates;
    dra_cluster *cluster; /* borrowed; NULL: no API server (prepare then
                           * fails: claims cannot be read) */
    /* Where the plugin reports what it does on its own threads (health
     * events, failed republishes, prepares); NULL: silent. */
    void (*log)(void *ud, const char *msg);
    void *log_ud;
    int workers;          /* concurrent DRA calls served (default 4) */
    size_t max_message;   /* gRPC receive limit in bytes (default 4 MiB) */
    /* Fault injection for tests: each prepare waits this long after its
     * CDI spec is written, before PrepareCompleted is recorded (0: no
     * wait). dra-gpu-plugin reads it from $DRA_GPU_PLUGIN_PREPARE_DELAY_MS. */
    int prepare_delay_ms;
} dra_plugin_opts;

void dra_plugin_opts_default(dra_plugin_opts *o);

typedef struct dra_plugin dra_plugin;

/* Validates |opts|, discovers the GPUs (module gpu) under the driver
 * root, reads the checkpoint and creates the plugin (no socket yet).
 * DRA_OK; DRA_EINVAL (bad option, message in |d|); DRA_EIO (directories,
 * checkpoint, NVML: message in |d|); DRA_ENOMEM. Free with
 * dra_plugin_free. */
dra_err dra_plugin_new(const dra_plugin_opts *opts, const dra_mem *mem,
                       dra_plugin **out, dra_diag *d);

/* Publishes the ResourceSlice, starts the DRA server, then the
 * registration server, the health port and the health thread. DRA_OK;
 * DRA_EIO (a socket or port could not be bound; message in |d|). */
dra_err dra_plugin_start(dra_plugin *p, dra_diag *d);

/* Stops serving: closes the sockets (unlinking them), joins the
 * threads. Published slices stay (the kubelet removes them when the
 * plugin is gone for good). Idempotent. */
void dra_plugin_stop(dra_plugin *p);

/* Deletes every ResourceSlice of this driver on this node: the
 * uninstall path (dra-gpu-plugin --cleanup, or on SIGTERM with
 * --remove-slices-on-exit). DRA_OK or the cluster's error. */
dra_err dra_plugin_remove_slices(dra_plugin *p, dra_diag *d);

/* The TCP port of the health service after dra_plugin_start (-1 when
 * off). */
int dra_plugin_healthcheck_port(const dra_plugin *p);

void dra_plugin_free(dra_plugin *p); /* stops first; NULL: no-op */

#ifdef __cplusplus
}
#endif
#endif
