/*
 * node_int.h: internals of the node module. cdi.c parses CDI specs and
 * resolves device names; bwrap.c turns a container config into the
 * bubblewrap command line; runtime.c starts and supervises containers
 * through dra-shim (shim.c); crilog.c writes and reads CRI-format logs;
 * agent.c, plugins.c, pods.c, podstatus.c and fake.c are the node agent.
 */
#ifndef DRA_NODE_INT_H
#define DRA_NODE_INT_H

#include <pthread.h>
#include <stdint.h>

#include "dra/node.h"
#include "dra/plugin.h"

/* ---- small helpers (util.c) ---- */

/* Wall clock in nanoseconds since the epoch (CLOCK_REALTIME). */
int64_t node_now_ns(void) DRA_HIDDEN;
/* Monotonic clock in milliseconds. */
int64_t node_mono_ms(void) DRA_HIDDEN;
/* RFC 3339 UTC with 9 fraction digits ("2026-01-02T03:04:05.123456789Z")
 * or, with |frac| 0, whole seconds as Kubernetes' metav1.Time prints
 * them. |buf| holds at least 40 bytes. */
void node_fmt_time(int64_t ns, int frac, char *buf, size_t size) DRA_HIDDEN;
/* Parses what node_fmt_time writes (any number of fraction digits, or
 * none). 0 on success, -1 otherwise. */
int node_parse_time(const char *s, size_t len, int64_t *ns) DRA_HIDDEN;
/* mkdir -p with mode 0700 for created directories. 0 or -1 (errno). */
int node_mkdirs(const char *path) DRA_HIDDEN;
/* Writes |len| bytes to |path| atomically (temporary file in the same
 * directory, fsync, rename). 0 or -1 (errno). */
int node_write_file(const char *path, const void *data, size_t len) DRA_HIDDEN;
/* Reads a whole file into a NUL-terminated buffer in |a| (at most
 * |max| bytes). 0, or -1 with errno (EFBIG when larger). */
int node_read_file(dra_arena *a, const char *path, size_t max, char **out,
                   size_t *len) DRA_HIDDEN;
/* Removes a directory tree (no symlinks followed). 0 or -1. */
int node_rmtree(const char *path) DRA_HIDDEN;
/* Start time of process |pid| in clock ticks since boot (field 22 of
 * /proc/PID/stat), or -1 when it does not exist. */
int64_t node_proc_start(int pid) DRA_HIDDEN;
/* snprintf into a message buffer, truncating silently (the messages
 * carry paths of unknown length). */
void node_errf(char *buf, size_t size, const char *fmt, ...) DRA_PRINTF(3, 4) DRA_HIDDEN;
/* A fresh random hex id of |n| hex digits (n < size). */
void node_random_hex(char *buf, size_t n) DRA_HIDDEN;

/* ---- dra-shim (shim.c) ---- */

/* `dra-shim run DIR SYNCFD` and `dra-shim init ERRFD CFGFD CWD -- CMD`:
 * the program's two roles, given its whole argv. Exit statuses. */
int node_shim_run(int argc, char **argv) DRA_HIDDEN;
int node_shim_init(int argc, char **argv) DRA_HIDDEN;

/* ---- containers (bwrap.c, runtime.c) ---- */

/* The configuration document dra-shim reads for |cfg|, in |a|: bwrap
 * options, command, environment, hooks and mount points to create.
 * |dir| is the container's state directory; |as_root| whether the
 * runtime runs as root. DRA_OK; DRA_EINVAL (message in |d|); DRA_ENOMEM. */
dra_err node_ctr_plan(dra_arena *a, const dra_node_ctr_config *cfg, const char *bwrap,
                      const char *shim, const char *dir, int as_root, dra_doc **out,
                      dra_diag *d) DRA_HIDDEN;

/* ---- CDI internals (cdi.c) ---- */

/* Merges |src| into |dst| (CDI ContainerEdits.Append: lists appended). */
dra_err cdi_edits_append(dra_arena *a, dra_node_cdi_edits *dst,
                         const dra_node_cdi_edits *src) DRA_HIDDEN;
/* Applies containerd's replacement rules to merged edits: later device
 * nodes replace earlier ones with the same path, later mounts replace
 * earlier ones at the same containerPath, mounts sorted by depth. */
void cdi_edits_finish(dra_node_cdi_edits *e) DRA_HIDDEN;

/* ---- documents (doc.c) ---- */

/* Dotted paths of map keys are looked up with the codec's dra_doc_at. */
/* Integer at a dotted path, |dflt| when absent or not an integer. */
int64_t node_doc_int(const dra_doc *d, const char *dotted, int64_t dflt) DRA_HIDDEN;
/* A string member, NULL when absent or not a string. */
const char *node_doc_str(const dra_doc *map, const char *key) DRA_HIDDEN;
/* Builders that record the first failure in |*err| (DRA_ENOMEM), so a
 * document is built as a flat list of calls and checked once. */
dra_doc *node_str(dra_arena *a, const char *s) DRA_HIDDEN;
void node_set(dra_arena *a, dra_doc *map, const char *key, dra_doc *val, dra_err *err) DRA_HIDDEN;
void node_set_str(dra_arena *a, dra_doc *map, const char *key, const char *s, dra_err *err) DRA_HIDDEN;
void node_push(dra_arena *a, dra_doc *list, dra_doc *item, dra_err *err) DRA_HIDDEN;
/* Deep copy of |d| into |a| (NULL on ENOMEM). */
dra_doc *node_doc_copy(dra_arena *a, const dra_doc *d) DRA_HIDDEN;
/* Removes |key| from |map| (no-op when absent). */
void node_doc_del(dra_doc *map, const char *key) DRA_HIDDEN;
/* Parses JSON text into |a|; NULL when it does not parse. */
dra_doc *node_parse(dra_arena *a, const char *text, size_t len) DRA_HIDDEN;
/* JSON text of |d| in a dra_mem block (free with dra_free(mem, ...)). */
char *node_to_json(const dra_mem *mem, const dra_doc *d) DRA_HIDDEN;

/* ---- the agent (agent.c, plugins.c, claims.c, pods.c, podstatus.c) ---- */

typedef struct node_plugin {
    char *driver;
    char *endpoint;   /* the DRA socket */
    char *service;    /* v1.DRAPlugin or v1beta1.DRAPlugin */
    char *reg_path;   /* the registration socket it came from */
    uint64_t reg_ino; /* its inode and change time: a restarted plugin */
    int64_t reg_ctime; /* makes a new socket at the same path */
    dra_plugin_client *client;
    int refs;         /* callers using |client| (under dra_node.mu) */
    int removed;      /* unregistered: freed when refs drops to 0 */
    struct node_plugin *next;
} node_plugin;

/* A prepared device as the plugin returned it. */
typedef struct node_dev {
    char **requests; /* empty: every request of the claim */
    size_t n_requests;
    char **cdi_ids;
    size_t n_cdi_ids;
} node_dev;

/* A claim prepared on this node (claims.json). */
typedef struct node_claim {
    dra_arena a; /* everything below */
    char *uid, *ns, *name;
    char **drivers;
    size_t n_drivers;
    node_dev *devs;
    size_t n_devs;
    char **pods; /* UIDs of the pods using it */
    size_t n_pods;
    int prepared; /* every driver answered; else prepare again */
} node_claim;

typedef struct pod_worker pod_worker;

struct dra_node {
    const dra_mem *mem;
    dra_cluster *c;
    dra_arena oa; /* copies of the options */
    dra_node_opts o;
    const char **cdi_dirs;
    size_t n_cdi_dirs;
    dra_node_runtime *rt;
    char *pods_dir, *logs_dir, *claims_path;
    pthread_mutex_t mu;   /* plugins, pods, claims, stop */
    pthread_mutex_t prep_mu; /* one prepare/unprepare at a time */
    pthread_cond_t plugin_cv; /* a plugin registered */
    node_plugin *plugins;
    dra_map pods;   /* UID -> pod_worker */
    dra_map claims; /* UID -> node_claim */
    dra_reflector *refl;
    pthread_t loop;
    int loop_started;
    int wake_fd;    /* eventfd: the main loop */
    int stop;
    int shutdown_s; /* >= 0: stopping as a node shutdown (dra_node_shutdown) */
    int synced;
    uint64_t plugin_gen; /* bumped when a plugin registers */
    int orphans_done;
    char node_uid[64];
    int64_t boot_ns;
};

/* agent.c */
void node_wake(int fd) DRA_HIDDEN;
dra_err node_event(dra_node *n, const dra_doc *obj, const char *type, const char *reason,
                   const char *fmt, ...) DRA_PRINTF(5, 6) DRA_HIDDEN;

/* plugins.c: the registration directory. */
int node_plugins_init(dra_node *n) DRA_HIDDEN; /* the inotify fd or -1 */
void node_plugins_scan(dra_node *n) DRA_HIDDEN;
void node_plugins_on_inotify(dra_node *n, int fd) DRA_HIDDEN;
void node_plugins_fini(dra_node *n) DRA_HIDDEN;
/* A registered plugin for |driver| with a reference held, or NULL. */
node_plugin *node_plugin_get(dra_node *n, const char *driver) DRA_HIDDEN;
void node_plugin_put(dra_node *n, node_plugin *p) DRA_HIDDEN;

/* claims.c: prepared claims and their checkpoint. */
dra_err node_claims_load(dra_node *n) DRA_HIDDEN;
void node_claims_fini(dra_node *n) DRA_HIDDEN;
/* The claims a pod uses, resolved against the API server and prepared
 * through their drivers; |msg| says why not. */
typedef struct pod_claim_ref {
    char *pod_claim; /* the pod's name for it (spec.resourceClaims[].name) */
    char *uid, *name;
} pod_claim_ref;
dra_err node_claims_prepare(dra_node *n, const dra_doc *pod, dra_arena *a, pod_claim_ref **refs,
                            size_t *n_refs, char *msg, size_t size) DRA_HIDDEN;
/* Drops |pod_uid| from every claim; unprepares those no pod uses any
 * more. DRA_OK, or the first failure (message in |msg|): retry. */
dra_err node_claims_release(dra_node *n, const char *pod_uid, char *msg, size_t size) DRA_HIDDEN;
/* The CDI ids of the devices of |claim_uid| for |request| (NULL: all). */
dra_err node_claims_cdi(dra_node *n, const char *claim_uid, const char *request, dra_arena *a,
                        const char ***ids, size_t *n_ids) DRA_HIDDEN;
/* Unprepares claims no pod uses (after a restart). */
void node_claims_gc(dra_node *n) DRA_HIDDEN;

/* pods.c: one worker per pod. */
/* Wakes every pod worker (a plugin registered: waiting prepares retry). */
void node_pods_wake_all(dra_node *n) DRA_HIDDEN;
void node_pods_on_event(void *ud, dra_watch_type type, const dra_doc *obj) DRA_HIDDEN;
void node_pods_on_synced(void *ud) DRA_HIDDEN;
/* Joins finished workers; after the first sync, adopts the state of
 * pods that are gone (deleted while we were down). */
void node_pods_housekeeping(dra_node *n) DRA_HIDDEN;
void node_pods_stop_all(dra_node *n) DRA_HIDDEN;

#endif
