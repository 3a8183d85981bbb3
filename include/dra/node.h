/*
 * dra/node.h: drad's node agent, the kubelet's part of DRA on one machine.
 *
 * Three layers, each usable alone:
 *  - CDI: parse Container Device Interface spec files and resolve
 *    qualified device names (vendor/class=name) into container edits,
 *    as containerd does with cdi_spec_dirs;
 *  - the container runtime: one container of a pod under bubblewrap on
 *    the host's filesystem (no images are pulled), with its CDI edits,
 *    its output kept as a CRI-format log, supervised by a small shim
 *    process (dra-shim) that outlives drad, so containers survive a
 *    restart of drad and are found again;
 *  - the node agent: registers a Node through a dra_cluster, heartbeats,
 *    registers DRA kubelet plugins from their registration sockets,
 *    prepares the claims of the pods bound to the node over gRPC, runs
 *    their containers, keeps pod status as the kubelet does, and serves
 *    logs; plus fake nodes that take pods to Running without running
 *    anything (KWOK-style), for control-plane tests at scale.
 *
 * Ownership: everything a function returns in a dra_arena lives there;
 * handles (dra_node_runtime, dra_node_ctr, dra_node, dra_fake_nodes) are freed by
 * their own functions. Strings passed in options are borrowed for the
 * call unless said otherwise.
 */
#ifndef DRA_NODE_H
#define DRA_NODE_H

#include <stddef.h>
#include <stdint.h>

#include "dra/base.h"
#include "dra/cluster.h"
#include "dra/codec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== CDI (cncf-tags/container-device-interface v1.1.0) ================= */

/* A device node edit. |host_path| NULL means |path|. |type| is "", "b",
 * "c", "u" or "p"; |major|/|minor| 0 when absent; |file_mode| -1, |uid|
 * and |gid| -1 when absent. */
typedef struct dra_node_cdi_device_node {
    const char *path;
    const char *host_path;
    const char *type;
    int64_t major, minor;
    int64_t file_mode;
    const char *permissions; /* NULL when absent */
    int64_t uid, gid;
} dra_node_cdi_device_node;

typedef struct dra_node_cdi_mount {
    const char *host_path;      /* hostPath */
    const char *container_path; /* containerPath */
    const char *type;           /* NULL when absent */
    const char **options;
    size_t n_options;
} dra_node_cdi_mount;

/* OCI hook names, in the order an OCI runtime runs them. */
typedef enum dra_node_cdi_hook_kind {
    DRA_NODE_CDI_HOOK_PRESTART,
    DRA_NODE_CDI_HOOK_CREATE_RUNTIME,
    DRA_NODE_CDI_HOOK_CREATE_CONTAINER,
    DRA_NODE_CDI_HOOK_START_CONTAINER,
    DRA_NODE_CDI_HOOK_POSTSTART,
    DRA_NODE_CDI_HOOK_POSTSTOP
} dra_node_cdi_hook_kind;

typedef struct dra_node_cdi_hook {
    dra_node_cdi_hook_kind kind;
    const char *hook_name; /* as written: "createContainer", ... */
    const char *path;
    const char **args; /* args[0] is argv[0], as in OCI */
    size_t n_args;
    const char **env;
    size_t n_env;
    int64_t timeout; /* seconds; -1 when absent */
} dra_node_cdi_hook;

/* ContainerEdits. |n_net_devices| and |has_intel_rdt| are recorded so
 * the runtime can refuse what it cannot apply. */
typedef struct dra_node_cdi_edits {
    const char **env;
    size_t n_env;
    dra_node_cdi_device_node *device_nodes;
    size_t n_device_nodes;
    dra_node_cdi_mount *mounts;
    size_t n_mounts;
    dra_node_cdi_hook *hooks;
    size_t n_hooks;
    int64_t *additional_gids;
    size_t n_additional_gids;
    size_t n_net_devices;
    int has_intel_rdt;
} dra_node_cdi_edits;

typedef struct dra_node_cdi_device {
    const char *name;
    dra_node_cdi_edits edits;
} dra_node_cdi_device;

/* A parsed and validated spec file. */
typedef struct dra_node_cdi_spec {
    const char *cdi_version;
    const char *kind;   /* vendor/class */
    const char *vendor; /* split from kind */
    const char *class_;
    dra_node_cdi_device *devices;
    size_t n_devices;
    dra_node_cdi_edits edits; /* spec-level containerEdits */
} dra_node_cdi_spec;

/* Checks a qualified device name "vendor/class=name" with the CDI
 * grammar (vendor and class: a letter first, a letter or digit last,
 * letters, digits, '_', '-', '.' between; name: a letter or digit at
 * both ends, also ':' between). DRA_OK, or DRA_EINVAL with the CDI
 * parser's message in |d| ("unqualified device \"x\", missing vendor",
 * "invalid device \"a/b=c\": invalid vendor. ..."). */
dra_err dra_node_cdi_parse_name(const char *id, dra_arena *a, const char **vendor,
                           const char **class_, const char **name,
                           dra_diag *d);

/* Parses and validates one spec file's text (YAML or JSON: |json| picks
 * the decoder) into |a|. Validation as the CDI library does it: a known
 * cdiVersion not below what the content needs, a valid kind, at least
 * one device, valid and unique device names, non-empty device edits,
 * env entries "K=V", device node paths, types and permissions, mount
 * paths, hook names and paths. DRA_OK; DRA_EPARSE (bad YAML/JSON);
 * DRA_EINVALID (the message in |d|); DRA_ENOMEM. */
dra_err dra_node_cdi_spec_parse(dra_arena *a, const char *text, size_t len,
                           int json, dra_node_cdi_spec **out, dra_diag *d);

/* The default spec directories, lowest priority first. */
#define DRA_NODE_CDI_DEFAULT_DIRS {"/etc/cdi", "/var/run/cdi"}

/* Resolves |ids| against the spec files in |dirs| (lowest priority
 * first: a device defined in a later directory replaces one from an
 * earlier; one defined twice in the same directory is a conflict and
 * is dropped; *.json and *.yaml files only, subdirectories skipped;
 * files that fail to parse are skipped, as containerd's cache does,
 * with their error recorded in |d|) and merges the edits the way
 * InjectDevices does: for each id in order, the spec-level edits of its
 * spec the first time that spec is met, then the device's edits. Device
 * nodes replace an earlier one with the same path, mounts one with the
 * same containerPath, and mounts end up sorted by path depth (stable).
 * Duplicate ids are applied once. DRA_OK; DRA_ENOTFOUND with
 * "unresolvable CDI devices a, b" as the first entry of |d| when any id
 * is not defined; DRA_EINVAL for an id that is not a qualified name;
 * DRA_ENOMEM. *out lives in |a|. */
dra_err dra_node_cdi_resolve(const char *const *dirs, size_t n_dirs,
                        const char *const *ids, size_t n_ids, dra_arena *a,
                        dra_node_cdi_edits *out, dra_diag *d);

/* ==== the container runtime ==============================================
 * A container is the host's root filesystem mounted read-only, a fresh
 * /dev (null, zero, full, random, urandom, tty, ptmx, pts, shm) plus
 * exactly the device nodes its CDI edits name, a fresh /proc, a private
 * /tmp, its CDI mounts; its own PID namespace (the command is pid 1, so
 * a SIGKILL to it ends every process of the container) and UTS
 * namespace; the host's network. Processes run as root without
 * capabilities (inside a user namespace when the runtime is not root).
 * Each container lives in STATE/<id>/ (config.json, a minimal OCI
 * config for hooks that read the bundle; shim.json, state, hooks.log);
 * its supervisor, dra-shim, keeps running when the caller exits. */

typedef struct dra_node_runtime dra_node_runtime;

typedef struct dra_node_runtime_opts {
    const char *state_dir; /* required; created (0700) when missing */
    const char *bwrap;     /* NULL: "/usr/bin/bwrap" */
    /* NULL: $DRA_SHIM when set, else "dra-shim" beside the running
     * program, else the build tree's src/node/dra-shim. */
    const char *shim;
} dra_node_runtime_opts;

/* A runtime over |opts| (strings copied). DRA_OK; DRA_EINVAL (no state
 * dir, bwrap or dra-shim not executable: message in |d|); DRA_EIO (the
 * state directory cannot be created); DRA_ENOMEM. */
dra_err dra_node_runtime_new(const dra_node_runtime_opts *opts, const dra_mem *mem,
                        dra_node_runtime **out, dra_diag *d);
void dra_node_runtime_free(dra_node_runtime *rt); /* leaves containers running */

/* Checks that bwrap can create the namespaces a container needs here,
 * by running one. DRA_OK, or DRA_EUNSUPPORTED with bwrap's message in
 * |d|. */
dra_err dra_node_runtime_probe(dra_node_runtime *rt, dra_diag *d);

typedef struct dra_node_ctr_config {
    const char *id; /* [A-Za-z0-9_.-], at most 128: STATE/<id> */
    const char *const *argv; /* command and arguments, argc >= 1 */
    size_t argc;
    const char *const *env; /* "K=V", later entries win */
    size_t n_env;
    const char *working_dir; /* NULL: "/" */
    const char *hostname;    /* NULL: the host's (no UTS namespace) */
    const dra_node_cdi_edits *edits; /* NULL: none; env appended after |env| */
    const char *log_path; /* CRI log file, appended to (created 0640) */
} dra_node_ctr_config;

typedef enum dra_node_ctr_phase {
    DRA_NODE_CTR_CREATED, /* the supervisor is starting it */
    DRA_NODE_CTR_RUNNING,
    DRA_NODE_CTR_EXITED,
    DRA_NODE_CTR_FAILED, /* never ran: |message| says why (exit code 128) */
    DRA_NODE_CTR_LOST    /* its supervisor vanished while it ran (reboot,
                     * kill): the exit status is unknown */
} dra_node_ctr_phase;

typedef struct dra_node_ctr_status {
    dra_node_ctr_phase phase;
    int pid;             /* host pid of the container's pid 1 (0: none) */
    int64_t started_ns;  /* wall clock; 0 when it never started */
    int64_t finished_ns; /* 0 while running */
    int exit_code;       /* 128 + signal when killed by a signal */
    char message[512];
} dra_node_ctr_status;

typedef struct dra_node_ctr dra_node_ctr;

/* Starts a container and returns once its command runs (or failed to).
 * DRA_OK with *out; DRA_EINVAL for a configuration that cannot be
 * applied (bad id or command, a CDI host path that does not exist, a
 * CDI edit this runtime does not support: the message in |d|, as
 * kubelet's CreateContainerError); DRA_EIO when it was created but did
 * not start (a hook failed, the executable is missing, the working
 * directory does not exist: the message in |d|, kubelet's StartError;
 * the container's state stays FAILED); DRA_EEXIST when |id| is taken;
 * DRA_ENOMEM. Free the handle with dra_node_ctr_free. */
dra_err dra_node_ctr_start(dra_node_runtime *rt, const dra_node_ctr_config *cfg,
                      dra_node_ctr **out, dra_diag *d);

/* Opens an existing container by id, e.g. after a restart: its state
 * as its supervisor last wrote it. DRA_OK; DRA_ENOTFOUND when there is
 * no such container; DRA_EIO for an unreadable state; DRA_ENOMEM. */
dra_err dra_node_ctr_open(dra_node_runtime *rt, const char *id, dra_node_ctr **out,
                     dra_diag *d);

const char *dra_node_ctr_id(const dra_node_ctr *c);

/* The current status (re-read from the state file). */
dra_err dra_node_ctr_status_get(dra_node_ctr *c, dra_node_ctr_status *st);

/* A descriptor that becomes readable when the container's supervisor
 * exits (after the container ended and its state was written): poll
 * it. -1 when the kernel lacks pidfd_open (then poll the status). */
int dra_node_ctr_fd(const dra_node_ctr *c);

/* Sends |sig| to the container's pid 1 (SIGTERM: it decides; SIGKILL:
 * the kernel ends every process in the container). DRA_OK (also when
 * it already exited); DRA_EIO when kill(2) fails otherwise. */
dra_err dra_node_ctr_signal(dra_node_ctr *c, int sig);

/* Waits up to |timeout_ms| (-1: forever) for the container to end.
 * DRA_OK (ended: |st| filled, may be NULL); DRA_ETIMEOUT. */
dra_err dra_node_ctr_wait(dra_node_ctr *c, int timeout_ms, dra_node_ctr_status *st);

void dra_node_ctr_free(dra_node_ctr *c); /* the handle only; NULL: no-op */

/* Deletes the state of an ended container. DRA_OK (also when absent);
 * DRA_ECONFLICT while it runs; DRA_EIO. */
dra_err dra_node_ctr_remove(dra_node_runtime *rt, const char *id);

/* The ids of every container in the state directory, in |a|. */
dra_err dra_node_runtime_list(dra_node_runtime *rt, dra_arena *a, const char ***ids,
                         size_t *n);

/* ==== CRI logs ============================================================
 * What dra-shim writes, one record per line of output:
 *   2026-01-02T03:04:05.123456789Z stdout F the line
 * (P instead of F for a part of a line longer than 16 KiB), as
 * containerd writes for the kubelet. */

typedef struct dra_node_log_opts {
    int timestamps;     /* prefix each line with its RFC 3339 time */
    int64_t tail_lines; /* < 0: all */
    int64_t since_ns;   /* > 0: only records at or after this time */
    int64_t limit_bytes; /* > 0: stop after this many bytes of output */
    int follow;         /* keep reading until |done| says the writer ended */
    /* For follow: called between polls; non-zero means the container
     * has ended (read what is left, then stop). NULL: never ends. */
    int (*done)(void *ud);
    void *done_ud;
    /* For follow: non-zero means stop now (client went away). */
    int (*cancel)(void *ud);
    void *cancel_ud;
} dra_node_log_opts;

/* Streams |path| to |write| as `kubectl logs` shows it (partial records
 * joined, a newline after each full line). |write| returns 0 to go on,
 * non-zero to stop (then DRA_ECANCELED). DRA_OK; DRA_ENOTFOUND when the
 * file does not exist; DRA_EIO. Malformed records are skipped. */
dra_err dra_node_log_read(const char *path, const dra_node_log_opts *opts,
                     int (*write)(void *ud, const char *p, size_t n),
                     void *ud);

/* ==== the node agent ========================================================
 * One per simulated node, inside drad (or beside any API server: it
 * only uses the dra_cluster it is given). It
 *  - registers its Node (create, or take over an existing one):
 *    capacity and allocatable cpu, memory, pods, ephemeral-storage;
 *    labels kubernetes.io/hostname, kubernetes.io/os, kubernetes.io/arch
 *    (plus |labels|); conditions Ready, MemoryPressure, DiskPressure,
 *    PIDPressure; addresses InternalIP and Hostname; nodeInfo; and
 *    refreshes the conditions' heartbeat every |heartbeat_s| (Lease
 *    objects are not used: drad does not serve them);
 *  - watches |registrar_dir| for plugin registration sockets and
 *    registers DRA plugins through GetInfo and NotifyRegistrationStatus,
 *    as the kubelet's plugin watcher does;
 *  - watches the pods bound to the node (fieldSelector spec.nodeName)
 *    and for each: prepares its claims (NodePrepareResources to each
 *    claim's drivers), runs its init containers then its containers
 *    with the CDI edits of the devices each container names, keeps its
 *    status as the kubelet does, restarts containers per restartPolicy
 *    with CrashLoopBackOff, and on deletion stops them (SIGTERM, the
 *    grace period, SIGKILL), unprepares the claims no other pod on the
 *    node uses, and deletes the pod;
 *  - keeps STATE/ (containers/, logs/, pods/, claims.json) so that
 *    after a restart it finds its running containers again and knows
 *    which claims it prepared. */

typedef struct dra_node dra_node;

typedef struct dra_node_opts {
    const char *name;      /* the Node's name (required) */
    const char *state_dir; /* required; created (0700) when missing */
    /* The plugin registration directory to watch (the kubelet's
     * /var/lib/kubelet/plugins_registry); NULL: no plugins. */
    const char *registrar_dir;
    /* CDI spec directories, lowest priority first; NULL: /etc/cdi,
     * /var/run/cdi. */
    const char *const *cdi_dirs;
    size_t n_cdi_dirs;
    /* The node's InternalIP, also every pod's hostIP and podIP (pods
     * share the host's network); NULL: 127.0.0.1. */
    const char *internal_ip;
    /* Capacity as quantities; NULL: the host's CPU count and MemTotal,
     * "110" pods, the state directory's file system size. */
    const char *cpu, *memory, *pods, *ephemeral_storage;
    const char *const *labels; /* extra "key=value" labels */
    size_t n_labels;
    int heartbeat_s;            /* 0: 10 */
    const char *bwrap, *shim;   /* see dra_node_runtime_opts */
    int64_t backoff_initial_ms; /* CrashLoopBackOff; 0: 10 s */
    int64_t backoff_max_ms;     /* 0: 300 s */
    int64_t prepare_timeout_ms; /* per gRPC call; 0: 45 s */
    const char *kubelet_version; /* nodeInfo.kubeletVersion; NULL: "v1.35.0" */
} dra_node_opts;

/* Starts the agent: registers the Node, then starts its threads
 * (heartbeat and plugin watcher, the pod reflector, one worker per pod).
 * |c| is borrowed and must outlive the agent. DRA_OK; DRA_EINVAL (a
 * missing option, bwrap or dra-shim missing: |d| says which); DRA_EIO
 * (the state directory, the Node could not be registered: |d| has the
 * server's message); DRA_ENOMEM. */
dra_err dra_node_start(dra_cluster *c, const dra_node_opts *opts,
                       const dra_mem *mem, dra_node **out, dra_diag *d);

/* Stops the agent's threads and frees it. Containers keep running and
 * the state stays, as when a kubelet stops: the next dra_node_start
 * with the same state directory takes over. NULL: no-op. */
void dra_node_stop(dra_node *n);

/* Stops the agent as a node that shuts down: every running container
 * gets SIGTERM, then SIGKILL after its pod's grace period or |grace_s|,
 * whichever is shorter (kubelet's graceful node shutdown), then the
 * agent stops as dra_node_stop does. Pod statuses are not written: the
 * next dra_node_start on the state directory finds the containers ended
 * and applies restartPolicy. NULL: no-op. */
void dra_node_shutdown(dra_node *n, int grace_s);

/* The node's name. */
const char *dra_node_name(const dra_node *n);

/* 1 when a DRA plugin for |driver| is registered with the agent now
 * (it answered GetInfo and was told it is registered), else 0. */
int dra_node_has_plugin(dra_node *n, const char *driver);

/* Logs of |container| (NULL: the pod's only container) of the pod with
 * UID |pod_uid| on this node, as `kubectl logs` prints them; |previous|
 * for the instance before the current one; with opts->follow the call
 * returns once the container ends or opts->cancel says so. DRA_OK;
 * DRA_ENOTFOUND (no such pod on this node: message in |st|);
 * DRA_EINVAL (no such container, several containers and none named,
 * no previous instance, not started yet: kubelet's message in |st|,
 * code 400); DRA_ECANCELED when |write| or opts->cancel stopped it. */
dra_err dra_node_logs(dra_node *n, const char *pod_uid, const char *container,
                      int previous, const dra_node_log_opts *opts,
                      int (*write)(void *ud, const char *p, size_t n),
                      void *ud, dra_kstatus *st);

/* Whether the pod with |pod_uid| is one this agent runs. */
int dra_node_has_pod(dra_node *n, const char *pod_uid);

/* ---- pods/log for drad's API server ----
 * A group of agents (borrowed; remove one before stopping it) whose
 * dra_node_log_source answers apiserver.h's log-source hook:
 *   dra_apiserver_set_log_source(srv, dra_node_log_source, group);
 * The agent running the pod serves it; a pod on no agent of the group
 * (not started yet, or on a fake node) gets kubelet's 400 "container
 * ... is waiting to start: ContainerCreating". */
typedef struct dra_node_group dra_node_group;
dra_err dra_node_group_new(const dra_mem *mem, dra_node_group **out);
dra_err dra_node_group_add(dra_node_group *g, dra_node *n);
void dra_node_group_remove(dra_node_group *g, dra_node *n);
void dra_node_group_free(dra_node_group *g); /* NULL: no-op */
struct dra_log_opts;
struct dra_stream;
/* A dra_log_source_fn; |group| is a dra_node_group. */
dra_err dra_node_log_source(void *group, const char *ns, const char *name,
                            const char *pod_uid,
                            const struct dra_log_opts *opts,
                            struct dra_stream **out, dra_kstatus *st);

/* ==== fake nodes (KWOK-style) ================================================
 * Many nodes that run nothing: each is registered with a Ready status and
 * a ResourceSlice from a template, and every pod bound to one of them is
 * taken to Running (its claims are not prepared, its containers get
 * running statuses) and, on deletion, deleted. One shared pod watch and
 * a few writer threads serve them all, however many there are. */

typedef struct dra_fake_nodes dra_fake_nodes;

typedef struct dra_fake_nodes_opts {
    size_t count;        /* how many nodes */
    const char *prefix;  /* node names PREFIX-0..; NULL: "fake-node" */
    size_t first;        /* index of the first node (0) */
    /* The node template's devices: a ResourceSlice document whose
     * spec.devices are copied for every node (nodeName, pool and the
     * uuid attributes rewritten per node); NULL: |gpus| GB200 GPUs as
     * NVIDIA's driver publishes them. */
    const dra_doc *slice_template;
    size_t gpus;         /* when no template; 0: 8 */
    const char *driver;  /* the slices' driver; NULL: gpu.nvidia.com */
    const char *const *labels; /* extra "key=value" labels */
    size_t n_labels;
    int writers;         /* threads writing statuses; 0: 8 */
    int no_slices;       /* 1: publish no ResourceSlices */
} dra_fake_nodes_opts;

/* Registers the nodes and their slices (existing ones are kept and
 * updated), then starts the pod watch. DRA_OK; DRA_EINVAL; DRA_EIO (the
 * server refused: |d|); DRA_ENOMEM. */
dra_err dra_fake_nodes_start(dra_cluster *c, const dra_fake_nodes_opts *opts,
                             const dra_mem *mem, dra_fake_nodes **out,
                             dra_diag *d);
/* Pods taken to Running so far (for benchmarks). */
uint64_t dra_fake_nodes_running(const dra_fake_nodes *f);
void dra_fake_nodes_stop(dra_fake_nodes *f); /* NULL: no-op */

#ifdef __cplusplus
}
#endif
#endif
