/*
 * pod_int.h: one pod's worker, shared by pods.c (its lifecycle: claims,
 * containers, restarts, termination), podspec.c (a container's command,
 * environment and CDI edits from the pod spec) and podstatus.c (the
 * status the kubelet would write).
 */
#ifndef DRA_NODE_POD_INT_H
#define DRA_NODE_POD_INT_H

#include "node_int.h"

#define POD_ID_MAX 320

/* What other threads may read about a worker (under dra_node.mu). */
typedef struct pod_ctr_info {
    char name[256];
    char cur_id[POD_ID_MAX]; /* "" before the first start */
    int restarts;            /* restartCount of the current instance */
    int has_last;            /* an instance before it exists */
} pod_ctr_info;

struct pod_worker {
    dra_node *n;
    char uid[64];
    pthread_t th;
    int started;
    int wake_fd;
    /* Under n->mu: */
    char *json;   /* the latest pod from the watch, not yet taken */
    int gone;     /* deleted from the API server (or found orphaned) */
    int stop;     /* the agent stops: leave containers running */
    int finished; /* the thread is done and can be joined */
    char ns[254], name[254];
    char log_dir[4096];
    pod_ctr_info *info;
    size_t n_info;
};

/* One container of the pod, as the worker tracks it. */
typedef struct ctr_state {
    char name[256];
    const dra_doc *spec; /* in the pod document */
    int init, sidecar;
    dra_node_ctr *h;        /* the current instance while we follow it */
    int instances;          /* started so far; restartCount = instances - 1 */
    int has_cur;            /* the current instance's status is in |cur| */
    dra_node_ctr_status cur;
    char cur_id[POD_ID_MAX];
    int has_last;           /* lastState */
    dra_node_ctr_status last;
    char last_id[POD_ID_MAX];
    char wait_reason[64];   /* waiting: why (ContainerCreating, ...) */
    char wait_msg[1024];
    int64_t backoff_ms;     /* kubelet's per-container back-off entry */
    int64_t backoff_at_ns;  /* when it was last advanced */
    int64_t restart_at_ns;  /* a restart waits until then (0: none) */
    int final;              /* ended for good (restartPolicy) */
    int done;               /* init container: completed (sidecar: started) */
} ctr_state;

typedef struct pod_state {
    pod_worker *w;
    dra_node *n;
    dra_arena pa;       /* the pod document */
    dra_doc *pod;
    const char *uid, *ns, *name, *restart_policy;
    ctr_state *c;       /* init containers first, then containers */
    size_t nc, n_init;
    int prepared;
    char prep_msg[1024];
    int64_t prep_retry_ns;
    int64_t prep_backoff_ms;
    dra_arena ra;       /* the claim references */
    pod_claim_ref *refs;
    size_t n_refs;
    int64_t start_ns;   /* status.startTime */
    int terminating;
    int64_t kill_deadline_ns;
    int sigkill_sent;
    const char *phase;  /* what we computed last */
    char *last_written; /* JSON of the kubelet-owned status we wrote */
} pod_state;

/* podspec.c: the runtime configuration of container |c|, in |a|. On
 * failure |reason| is kubelet's waiting reason (CreateContainerConfigError,
 * CreateContainerError) and |msg| the message. */
dra_err pod_ctr_config(pod_state *ps, const ctr_state *c, const char *id, const char *log_path,
                       dra_arena *a, dra_node_ctr_config *cfg, const char **reason, char *msg,
                       size_t size) DRA_HIDDEN;

/* podstatus.c */
/* The pod phase as the kubelet computes it from the container states. */
const char *pod_phase(const pod_state *ps) DRA_HIDDEN;
/* Writes the kubelet-owned part of the status when it changed (or when
 * |force|). DRA_OK; DRA_ENOTFOUND when the pod is gone; errors of the
 * API server. */
dra_err pod_write_status(pod_state *ps, int force) DRA_HIDDEN;

/* pods.c */
int64_t pod_now(void) DRA_HIDDEN;

#endif
