/*
 * plugin/plugin_int.h: internals of module plugin shared between its
 * files (and the plugin's tests and fuzzers): the protobuf layer (pb.c),
 * gRPC over nghttp2 (h2_core.c, h2_server.c: the servers; h2_client.c,
 * h2_dial.c: client connections), the RPC handlers (service.c),
 * CDI specs (cdi.c), the checkpoint (checkpoint.c), opaque configuration
 * (config.c), prepare/unprepare (prepare.c), publishing (publish.c) and
 * device health (health.c).
 */
#ifndef DRA_PLUGIN_INT_H
#define DRA_PLUGIN_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h> /* ssize_t */

#include "dra/api.h"
#include "dra/base.h"
#include "dra/codec.h"
#include "dra/gpu.h"
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

/* ---- gRPC server (h2_core.c, h2_server.c) ------------------------------------ */

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

/* One gRPC connection's protocol state (h2_core.c), without I/O: the
 * owner feeds it the bytes read, writes out what plugin_h2_send gives,
 * and answers each call the dispatch callback hands it. Not thread-safe:
 * one thread drives a connection. */
typedef struct plugin_h2 plugin_h2;

/* Fills the nghttp2_mem at |nmem| (void *: this header does not include
 * nghttp2's) so that nghttp2 allocates through |mem|. */
void plugin_h2_mem(const dra_mem *mem, void *nmem);

/* A complete unary request. From dispatch on it belongs to the owner,
 * who runs the handler on |rpc| (any thread) and gives it back with
 * plugin_h2_answer (the connection's thread) or plugin_h2_call_free. */
typedef struct plugin_h2_call plugin_h2_call;
struct plugin_h2_call {
    plugin_h2_call *next; /* the owner's queues */
    void *owner;
    int32_t stream_id;
    dra_buf in, out;
    plugin_rpc rpc;
    char method[256];
};

typedef struct plugin_h2_cfg {
    size_t max_message;   /* request and answer limit, bytes */
    uint32_t max_streams; /* streams open at once (0: 100) */
    void (*dispatch)(void *ud, plugin_h2_call *c);
    void *ud;
    const dra_mem *mem;
} plugin_h2_cfg;

/* DRA_OK or DRA_ENOMEM. The server's SETTINGS are queued to send. */
dra_err plugin_h2_new(const plugin_h2_cfg *cfg, plugin_h2 **out) DRA_HIDDEN;
/* Frees the connection; calls already dispatched stay the owner's. */
void plugin_h2_free(plugin_h2 *h) DRA_HIDDEN;
/* Bytes from the peer. 0; -1 when the connection is broken (close it). */
int plugin_h2_recv(plugin_h2 *h, const uint8_t *data, size_t len) DRA_HIDDEN;
/* The next bytes to write (valid until the next call), 0 when none, -1
 * when the connection is broken. */
ssize_t plugin_h2_send(plugin_h2 *h, const uint8_t **data) DRA_HIDDEN;
/* 1 when the connection has nothing more to read or write. */
int plugin_h2_done(const plugin_h2 *h) DRA_HIDDEN;
/* Queues a GOAWAY; the connection is done once it is written. */
void plugin_h2_goaway(plugin_h2 *h) DRA_HIDDEN;
/* Sends |c|'s answer (rpc.code, rpc.msg, and for OK the message in
 * out) if its stream is still open, and frees |c|. */
void plugin_h2_answer(plugin_h2 *h, plugin_h2_call *c) DRA_HIDDEN;
void plugin_h2_call_free(const dra_mem *mem, plugin_h2_call *c) DRA_HIDDEN;
/* Sets the core's clock to |now_ms| and answers CANCELLED every request
 * still arriving after |timeout_ms|; returns the time the next one is
 * due, -1 when none. */
int64_t plugin_h2_expire(plugin_h2 *h, int64_t now_ms, int64_t timeout_ms) DRA_HIDDEN;

/* A gRPC client connection (h2_client.c): unary calls one after another
 * on one HTTP/2 connection to a unix socket or a TCP port. One thread
 * at a time; the public client (client.c) pools them. */
typedef struct plugin_h2c plugin_h2c;

/* Connects to |target| ("/path", "unix:/path", "unix:///path" or
 * "host:port") before |deadline_ms| (plugin_now_ms's clock). DRA_OK;
 * DRA_EUNAVAILABLE (UNAVAILABLE in |st|, with gRPC's wording),
 * DRA_ETIMEOUT (DEADLINE_EXCEEDED), DRA_ENOMEM. */
dra_err plugin_h2c_connect(const char *target, int64_t deadline_ms, const dra_mem *mem,
                           plugin_h2c **out, dra_plugin_rpc_status *st) DRA_HIDDEN;
/* A connection over |fd|, connected already (the fuzzer's socketpair),
 * which it owns from here on (closed on failure too). DRA_OK or
 * DRA_ENOMEM. */
dra_err plugin_h2c_adopt(int fd, const char *peer, const char *authority, const dra_mem *mem,
                         plugin_h2c **out) DRA_HIDDEN;
void plugin_h2c_free(plugin_h2c *c) DRA_HIDDEN; /* NULL: no-op */
/* One unary call: |req| to |method|, the answer message appended to
 * |resp| (a non-OK call may leave part of one there). |st| always gets
 * the outcome: the server's status, or one decided here: UNAVAILABLE
 * (connection lost), DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED (answer over
 * |max_message|, or out of memory: then resp->oom), INTERNAL (malformed
 * answer), CANCELLED and others from a reset stream. */
void plugin_h2c_call(plugin_h2c *c, const char *method, const uint8_t *req, size_t req_len,
                     int64_t deadline_ms, size_t max_message, dra_buf *resp,
                     dra_plugin_rpc_status *st) DRA_HIDDEN;
/* 1 when the last call ended cleanly and the connection may carry another. */
int plugin_h2c_usable(const plugin_h2c *c) DRA_HIDDEN;
/* 1 when the last call failed before any of it reached the server (a
 * stale connection, a refused stream): safe to try again elsewhere. */
int plugin_h2c_refused(const plugin_h2c *c) DRA_HIDDEN;
/* 1 when the last call failed for want of memory (then its status is
 * RESOURCE_EXHAUSTED "out of memory"; callers return DRA_ENOMEM). */
int plugin_h2c_oom(const plugin_h2c *c) DRA_HIDDEN;
/* For a pooled connection about to be reused: reads what came while it
 * was idle; 0 when the server closed it or is going away. */
int plugin_h2c_alive(plugin_h2c *c) DRA_HIDDEN;

/* A connected non-blocking socket to |target| (see plugin_h2c_connect)
 * before |deadline_ms| (h2_dial.c), -1 with an errno value in *err
 * (ETIMEDOUT at the deadline). |peer| gets the address as gRPC's
 * messages name it, |authority| the :authority to send. */
int plugin_dial(const char *target, int64_t deadline_ms, char *peer, size_t peercap,
                char *authority, size_t authcap, int *err) DRA_HIDDEN;

/* One call on a connection of its own, for the plugin's health check on
 * its own unix sockets: |method| with |req|, the answer message appended
 * to |resp|, the status in *code and |msg|. DRA_OK when the call ended
 * with a status (the server's, or one plugin_h2c_call decided: see
 * there); DRA_EIO (cannot connect), DRA_ETIMEOUT, DRA_ENOMEM. */
dra_err plugin_h2_unary(const char *socket_path, const char *method, const uint8_t *req,
                        size_t req_len, int timeout_ms, const dra_mem *mem, dra_buf *resp,
                        int *code, char *msg, size_t msgcap) DRA_HIDDEN;

/* ---- helpers (util.c) --------------------------------------------------------
 * Documents are built with the codec's dra_docb (one oom check at the
 * end). */

/* mkdir -p with |mode| for the directories it creates. DRA_OK; DRA_EIO
 * or DRA_EINVAL with the message in |d|. */
dra_err plugin_mkdirs(const char *path, unsigned mode, dra_diag *d) DRA_HIDDEN;
dra_err plugin_fsync_dir(const char *dir) DRA_HIDDEN;
/* How far plugin_write_atomic syncs. */
enum {
    PLUGIN_SYNC_NONE = 0, /* atomic for readers and for a crash of this process */
    PLUGIN_SYNC_DATA = 1, /* also whole after a power loss: the old file or the new */
    PLUGIN_SYNC_ALL = 2   /* also the new one after a power loss */
};
/* Replaces <dir>/<name> with |data| atomically: a temp file in |dir|,
 * written (mode |mode|), fdatasync'ed from PLUGIN_SYNC_DATA on, renamed
 * over the target, then the directory fsync'ed with PLUGIN_SYNC_ALL. A
 * crash leaves the old file or the new one, never a mix. DRA_OK;
 * DRA_EIO / DRA_EINVAL with the path and errno text in |d|. */
dra_err plugin_write_atomic(const char *dir, const char *name, const char *data,
                            size_t len, unsigned mode, int sync,
                            dra_diag *d) DRA_HIDDEN;
/* Appends the file at |path| to |out|. DRA_ENOTFOUND when it does not
 * exist; DRA_ELIMIT beyond |max| bytes; DRA_EIO; DRA_ENOMEM. */
dra_err plugin_read_file(const char *path, const dra_mem *mem, dra_buf *out,
                         size_t max, dra_diag *d) DRA_HIDDEN;
/* An exclusive flock(2) on |path| (created 0600), waiting at most
 * |timeout_ms|: DRA_OK (*fd_out holds it), DRA_ETIMEOUT, DRA_EIO. */
dra_err plugin_flock(const char *path, int timeout_ms, int *fd_out) DRA_HIDDEN;
void plugin_funlock(int fd) DRA_HIDDEN; /* -1: no-op */
int64_t plugin_now_ms(void) DRA_HIDDEN;  /* monotonic */
struct dra_plugin;
/* One line to the plugin's log callback, if any. */
void plugin_log(const struct dra_plugin *p, const char *fmt, ...) DRA_PRINTF(2, 3) DRA_HIDDEN;
void plugin_rfc3339(char *buf, size_t size) DRA_HIDDEN; /* now, UTC */

/* ---- CDI (cdi.c) ----------------------------------------------------------- */

typedef struct plugin_mount {
    const char *host_path;
    const char *container_path;
    const char *const *options;
    size_t n_options;
} plugin_mount;

/* Edits a device's configuration adds (MPS: env and mounts). */
typedef struct plugin_edits {
    const char **env;
    size_t n_env;
    plugin_mount *mounts;
    size_t n_mounts;
} plugin_edits;

/* One prepared device as its CDI entry needs it. */
typedef struct plugin_cdi_dev {
    const char *device;         /* announced name: "gpu-0" */
    const dra_gpu_device *gpu;  /* the GPU, the parent for MIG */
    const dra_gpu_mig *mig;     /* NULL for a full GPU */
    const plugin_edits *extra;  /* may be NULL */
} plugin_cdi_dev;

typedef struct plugin_cdi_env {
    const dra_gpu_inventory *inv;
    const char *host_driver_root; /* --nvidia-driver-root */
    const char *hook_path;        /* host path of nvidia-cdi-hook; NULL: no hooks */
} plugin_cdi_env;

/* 1 when |name| is a valid CDI device name (alphanumeric first and
 * last, then [A-Za-z0-9_.:-]). */
int plugin_cdi_name_ok(const char *name) DRA_HIDDEN;
/* k8s.gpu.nvidia.com-claim_<uid>.yaml ('/' in uid -> '_'). */
void plugin_cdi_file_name(const char *uid, char *buf, size_t size) DRA_HIDDEN;
/* The spec for claim |claim_uid| with |n| devices, in |a|. DRA_OK;
 * DRA_ENOTFOUND when a MIG device's capability nodes are unknown;
 * DRA_ENOMEM. */
dra_err plugin_cdi_build(dra_arena *a, const plugin_cdi_env *env,
                         const char *claim_uid, const plugin_cdi_dev *devs,
                         size_t n, dra_doc **out) DRA_HIDDEN;
void plugin_cdi_add_mount(dra_docb *b, dra_doc *edits, const char *host,
                          const char *ctr, const char *const *opts,
                          size_t n_opts) DRA_HIDDEN;
/* The lowest cdiVersion that can express |spec| (static string). */
const char *plugin_cdi_min_version(const dra_doc *spec) DRA_HIDDEN;
/* Writes the claim's spec file ("---" + YAML, 0644) atomically. */
dra_err plugin_cdi_write(const char *cdi_root, const char *uid,
                         const dra_doc *spec, const dra_mem *mem, int sync,
                         dra_diag *d) DRA_HIDDEN;
/* Removes it; a missing file is not an error. */
dra_err plugin_cdi_remove(const char *cdi_root, const char *uid,
                          dra_diag *d) DRA_HIDDEN;

/* ---- checkpoint (checkpoint.c) ------------------------------------------------ */

#define PLUGIN_CP_FILE "checkpoint.json"
enum { PLUGIN_CP_STARTED = 1, PLUGIN_CP_COMPLETED = 2 };

/* One prepared device: what the kubelet got back (requests, pool,
 * device, CDI ids) and which hardware it is. */
typedef struct plugin_cp_device {
    int mig;                 /* 0: full GPU */
    const char *uuid;        /* GPU or MIG UUID */
    const char *parent_uuid; /* MIG only */
    unsigned parent_minor, gi, ci;
    const char **requests;
    size_t n_requests;
    const char *pool;
    const char *device;
    const char **cdi_ids;
    size_t n_cdi_ids;
} plugin_cp_device;

/* Devices that share one configuration, and what applying it left
 * behind (an MPS daemon id, time-slicing set on the GPUs). */
typedef struct plugin_cp_group {
    plugin_cp_device *devices;
    size_t n_devices;
    const char *mps_id; /* "" or NULL: none */
    int timeslice;
} plugin_cp_group;

typedef struct plugin_cp_claim {
    const char *uid;
    int state; /* PLUGIN_CP_STARTED or PLUGIN_CP_COMPLETED */
    const char *name;
    const char *namespace_;
    dra_doc *status; /* the claim's status as read from the API server */
    plugin_cp_group *groups; /* COMPLETED only */
    size_t n_groups;
} plugin_cp_claim;

typedef struct plugin_cp {
    const char *boot_id;
    plugin_cp_claim *claims;
    size_t n, cap;
} plugin_cp;

const char *plugin_cp_state_name(int state) DRA_HIDDEN;
plugin_cp_claim *plugin_cp_find(plugin_cp *cp, const char *uid) DRA_HIDDEN;
/* Inserts or replaces (by uid) a shallow copy of |c|. DRA_OK, DRA_ENOMEM. */
dra_err plugin_cp_put(plugin_cp *cp, dra_arena *a, const plugin_cp_claim *c) DRA_HIDDEN;
int plugin_cp_del(plugin_cp *cp, const char *uid) DRA_HIDDEN; /* 1: removed */
/* The file's text ({"checksum":N,"v2":{...}}), appended to |out|. */
dra_err plugin_cp_encode(const plugin_cp *cp, dra_arena *a, dra_buf *out) DRA_HIDDEN;
/* Parses the file's text into |cp| (in |a|). DRA_EINVALID with the
 * reason in |d| for a corrupted or malformed checkpoint; DRA_ENOMEM. */
dra_err plugin_cp_decode(dra_arena *a, const char *text, size_t len,
                         plugin_cp *cp, dra_diag *d) DRA_HIDDEN;
/* Reads <dir>/checkpoint.json; a missing file is an empty checkpoint. */
dra_err plugin_cp_read(const char *dir, dra_arena *a, plugin_cp *cp,
                       dra_diag *d) DRA_HIDDEN;
/* Replaces <dir>/checkpoint.json (0600) atomically, file and directory
 * synced when |sync|. DRA_OK; DRA_EIO with the reason in |d|; DRA_ENOMEM. */
dra_err plugin_cp_write(const char *dir, const plugin_cp *cp, const dra_mem *mem, int sync,
                        dra_diag *d) DRA_HIDDEN;

/* ---- opaque configuration (config.c) ------------------------------------------ */

/* Kinds of config, and of devices they fit. */
enum { PLUGIN_CFG_GPU = 1, PLUGIN_CFG_MIG, PLUGIN_CFG_VFIO, PLUGIN_CFG_OTHER };
enum { PLUGIN_DEV_GPU = 1, PLUGIN_DEV_MIG, PLUGIN_DEV_VFIO };

typedef struct plugin_mps_limit {
    const char *key; /* a GPU UUID or an index into the group's sorted UUIDs */
    dra_quantity q;
} plugin_mps_limit;

typedef struct plugin_mps_cfg {
    int thread_pct_set;
    int64_t thread_pct;        /* defaultActiveThreadPercentage */
    int pinned_set;
    dra_quantity pinned;       /* defaultPinnedDeviceMemoryLimit */
    plugin_mps_limit *per_dev; /* defaultPerDevicePinnedMemoryLimit */
    size_t n_per_dev;
} plugin_mps_cfg;

/* One decoded opaque config (GpuConfig, MigDeviceConfig, ...). */
typedef struct plugin_cfg {
    int kind;              /* PLUGIN_CFG_* */
    const char *kind_name; /* "GpuConfig", ... */
    int has_sharing;
    const char *strategy;  /* as written ("" when absent) */
    int ts_set;            /* timeSlicingConfig present (GpuConfig) */
    const char *interval;  /* NULL when absent */
    int mps_set;           /* mpsConfig present */
    plugin_mps_cfg mps;
    const char *const *requests; /* the config entry's requests */
    size_t n_requests;
    int is_default;
} plugin_cfg;

/* Strict decode of |params| (an opaque config's parameters). DRA_OK;
 * DRA_EINVAL with the apimachinery-worded reason in |err|; DRA_ENOMEM. */
dra_err plugin_cfg_decode(dra_arena *a, const dra_doc *params, plugin_cfg *out,
                          char *err, size_t cap) DRA_HIDDEN;
/* NVIDIA's DefaultGpuConfig / DefaultMigDeviceConfig / VfioDeviceConfig. */
void plugin_cfg_default(plugin_cfg *c, int kind, const dra_plugin_gates *g) DRA_HIDDEN;
void plugin_cfg_normalize(plugin_cfg *c, const dra_plugin_gates *g) DRA_HIDDEN;
/* DRA_OK or DRA_EINVAL with NVIDIA's message in |err|. */
dra_err plugin_cfg_validate(const plugin_cfg *c, const dra_plugin_gates *g,
                            char *err, size_t cap) DRA_HIDDEN;
/* 0..3 for Default/Short/Medium/Long (NULL: 0), -1 otherwise. */
int plugin_cfg_interval(const char *interval) DRA_HIDDEN;
/* Defaults, then FromClass, then FromClaim configs for this driver, in
 * precedence order (lowest first). DRA_EINVAL with the message in |err|
 * ("error getting opaque device configs: ..."); DRA_ENOMEM. */
dra_err plugin_cfg_collect(dra_arena *a, const dra_allocation_result *al,
                           const dra_plugin_gates *g, plugin_cfg **out,
                           size_t *n, char *err, size_t errcap) DRA_HIDDEN;
/* The index of the config for a result of |request| on a device of
 * |dev_kind|, or -1 with the reason in |err|. */
int plugin_cfg_match(const plugin_cfg *cfgs, size_t n, const char *request,
                     int dev_kind, char *err, size_t errcap) DRA_HIDDEN;

/* ---- processes (run.c) ------------------------------------------------------------ */

/* Runs |argv| (argv[0] a path) with |env| (NULL-terminated "K=V"; NULL:
 * this process's environment) and |input| on stdin (may be NULL), at
 * most |timeout_ms|; stdout and stderr together are appended to |out|
 * (may be NULL). Returns DRA_OK with the exit status in *status (-1
 * when killed by a signal or the timeout), DRA_EIO when it could not
 * start. */
dra_err plugin_run(const char *const *argv, const char *const *env,
                   const char *input, int timeout_ms, dra_buf *out,
                   int *status) DRA_HIDDEN;

/* ---- the plugin (plugin.c, prepare.c, sharing.c, service.c, publish.c,
 *      health.c) --------------------------------------------------------------- */

typedef struct plugin_taint {
    char key[64];   /* gpu.nvidia.com/xid, /gpu-lost, /unmonitored */
    char value[32]; /* the XID */
    const char *effect; /* "NoSchedule" or "None" */
    char time_added[32];
} plugin_taint;

/* An announced device and its health. */
typedef struct plugin_devstate {
    const char *name;
    int kind;                  /* PLUGIN_DEV_* */
    const dra_gpu_device *gpu; /* the parent for MIG */
    const dra_gpu_mig *mig;
    plugin_taint taints[3];
    int n_taints;
} plugin_devstate;

struct dra_plugin {
    const dra_mem *mem;
    dra_arena arena; /* options, paths, inventory: the plugin's lifetime */
    dra_plugin_opts o;
    const char *local_root, *host_root;
    const char *plugin_dir, *dra_sock, *reg_sock, *cp_lock;
    const char *boot_id;
    dra_gpu *gpu; /* NULL when the inventory was given */
    dra_arena *inv_arena; /* owns the discovered inventory; NULL when given */
    const dra_gpu_inventory *inv;
    plugin_devstate *devs;
    size_t n_devs;
    plugin_cdi_env cdi;
    const char *mps_control; /* local path of nvidia-cuda-mps-control */
    int checkpoint_sync;     /* sync the checkpoint (1; 0 only in tests) */

    pthread_mutex_t mu; /* devs' health, busy set, registration, slices */
    pthread_cond_t cond;
    const char **busy; /* claim UIDs being prepared or unprepared */
    size_t n_busy, cap_busy;
    pthread_mutex_t cp_mu; /* checkpoint read-modify-write in this process */
    int registered;
    char reg_error[256];

    plugin_server *dra_srv, *reg_srv, *health_srv;
    int health_port;
    pthread_t health_thread;
    int health_started;
    atomic_int stopping;
    pthread_mutex_t pub_mu; /* one publish at a time */
    int published;
    pthread_t pub_thread; /* the publisher: pub_* below are under |mu| */
    pthread_cond_t pub_cond;
    int pub_started, pub_stop, pub_dirty;
};

/* Creates a plugin over an inventory the caller discovered (or built by
 * hand, in tests): directories, CDI environment, checkpoint recovery.
 * |inv| is borrowed and must outlive the plugin. Errors as
 * dra_plugin_new. */
dra_err plugin_new_with_inventory(const dra_plugin_opts *opts,
                                  const dra_gpu_inventory *inv,
                                  const dra_mem *mem, dra_plugin **out,
                                  dra_diag *d) DRA_HIDDEN;
plugin_devstate *plugin_dev_find(dra_plugin *p, const char *name) DRA_HIDDEN;

/* The RPC bodies. |claims| come from a request; one result per claim
 * is written to *out (in |a|). prepare returns DRA_OK, or an error for
 * the whole call (a claim could not be read: NVIDIA's helper fails the
 * RPC then) with the message in |err|. */
dra_err plugin_prepare(dra_plugin *p, const dra_plugin_claim_ref *claims,
                       size_t n, dra_arena *a, dra_plugin_claim_result **out,
                       char *err, size_t errcap) DRA_HIDDEN;
/* Prepares one claim given as its object document (as read from the
 * API server); used by plugin_prepare and by tests. */
void plugin_prepare_doc(dra_plugin *p, const dra_doc *claim, dra_arena *a,
                        dra_plugin_claim_result *r) DRA_HIDDEN;
void plugin_unprepare(dra_plugin *p, const dra_plugin_claim_ref *claims, size_t n,
                      dra_arena *a, dra_plugin_claim_result **out) DRA_HIDDEN;
/* Startup recovery: drops checkpoint entries of another boot, rolls back
 * PrepareStarted entries, removes CDI files no completed claim owns. */
dra_err plugin_recover(dra_plugin *p, dra_diag *d) DRA_HIDDEN;

/* Sharing (sharing.c). Time-slicing through nvidia-smi on |uuids|. */
dra_err plugin_ts_set(dra_plugin *p, const char *const *uuids, size_t n,
                      int interval, char *err, size_t cap) DRA_HIDDEN;
/* Starts the MPS control daemon for a group: *id (in |a|), the edits
 * each device gets. */
dra_err plugin_mps_start(dra_plugin *p, dra_arena *a, const char *claim_uid,
                         const char *const *uuids, size_t n_uuids,
                         const char *const *gpu_uuids, size_t n_gpu_uuids,
                         const plugin_mps_cfg *cfg, const char **id,
                         plugin_edits **edits, char *err, size_t cap) DRA_HIDDEN;
/* Stops it and removes its directories; a daemon that is gone is fine. */
dra_err plugin_mps_stop(dra_plugin *p, const char *id, char *err, size_t cap) DRA_HIDDEN;
/* Stops every MPS daemon whose id starts with |claim_uid|- (rollback). */
void plugin_mps_stop_claim(dra_plugin *p, const char *claim_uid) DRA_HIDDEN;

/* The gRPC handlers (service.c). */
void plugin_handle_dra(void *ud, plugin_rpc *rpc) DRA_HIDDEN;
void plugin_handle_reg(void *ud, plugin_rpc *rpc) DRA_HIDDEN;
void plugin_handle_health(void *ud, plugin_rpc *rpc) DRA_HIDDEN;

/* Publishing (publish.c): builds this node's slices (taints, or
 * unhealthy devices left out) and makes the API server's match. */
dra_err plugin_publish(dra_plugin *p, dra_diag *d) DRA_HIDDEN;
/* Asks the publisher thread to publish (soon, and retried until it
 * works); start/stop the thread (no-ops without a cluster). */
void plugin_publish_request(dra_plugin *p) DRA_HIDDEN;
dra_err plugin_publisher_start(dra_plugin *p, dra_diag *d) DRA_HIDDEN;
void plugin_publisher_stop(dra_plugin *p) DRA_HIDDEN;
/* The slice specs as they would be published, in |a| (tests). */
dra_err plugin_slices(dra_plugin *p, dra_arena *a, dra_resource_slice_spec **out,
                      size_t *n, dra_diag *d) DRA_HIDDEN;

/* Health (health.c): applies one event to the device states; returns 1
 * when anything changed (then the caller republishes). */
int plugin_health_apply(dra_plugin *p, const dra_gpu_health_event *ev) DRA_HIDDEN;
dra_err plugin_health_start(dra_plugin *p, dra_diag *d) DRA_HIDDEN;
void plugin_health_stop(dra_plugin *p) DRA_HIDDEN;

#endif
