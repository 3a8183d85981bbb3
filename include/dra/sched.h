/*
 * dra/sched.h: the scheduler and the resourceclaim controller. The
 * controller turns pods' ResourceClaimTemplates into ResourceClaims and
 * releases claims when pods end (kube-controller-manager's resourceclaim
 * controller); the scheduler places pods that name it in
 * spec.schedulerName: queue with backoff, node filters, DRA allocation
 * through alloc, a score, then reserve (claim status) and bind
 * (pods/binding), with FailedScheduling events that explain which
 * request could not be satisfied and why.
 *
 * Both see the cluster only through dra/cluster.h (informers are
 * dra_reflectors), so the same code runs inside drad and, as
 * dra-scheduler, against any API server. The same cache and scheduling
 * cycle also run offline (dra_sched_sim): dractl's explain and simulate.
 *
 * Threads: dra_sched runs its own threads (one reflector per resource,
 * one scheduling loop, binding and controller workers); its functions
 * may be called from any thread. A dra_sched_sim is single-threaded.
 */
#ifndef DRA_SCHED_H
#define DRA_SCHED_H

#include <stdint.h>

#include "dra/base.h"
#include "dra/cluster.h"
#include "dra/codec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* spec.schedulerName of pods the scheduler in drad takes, and the
 * default name of the standalone dra-scheduler. */
#define DRA_SCHED_DEFAULT_NAME "default-scheduler"
#define DRA_SCHED_STANDALONE_NAME "dra-scheduler"

/* How feasible nodes are ranked, by the share of each node's own devices
 * in use (kube-scheduler's NodeResourcesFit strategies applied to DRA
 * devices; LeastAllocated is its default). */
typedef enum dra_sched_score {
    DRA_SCHED_LEAST_ALLOCATED = 0, /* spread: the emptiest node first */
    DRA_SCHED_MOST_ALLOCATED       /* pack: the fullest node that fits first */
} dra_sched_score;

/* "MostAllocated" / "LeastAllocated" (case-insensitive) to *out. DRA_OK
 * or DRA_EINVAL. */
dra_err dra_sched_score_parse(const char *s, dra_sched_score *out);

/* Log levels for the optional log sink. */
enum { DRA_SCHED_LOG_ERROR = 0, DRA_SCHED_LOG_INFO = 1, DRA_SCHED_LOG_DEBUG = 2 };

typedef struct dra_sched_opts {
    const char *scheduler_name; /* NULL: DRA_SCHED_DEFAULT_NAME (copied) */
    dra_sched_score score;
    int scheduler;        /* run the scheduler */
    int claim_controller; /* run the resourceclaim controller */
    /* Parallel reserve+bind writers; 0: 16 (kube-scheduler binds each
     * pod on its own goroutine). */
    int bind_workers;
    /* 0: 16 (kube-controller-manager's resourceclaim controller runs 10
     * to 50 workers, depending on the release). Each blocks on its
     * write's group commit: with 16 rather than 8 the commits carry 4
     * writes instead of 2.7 (bench_sched). */
    int controller_workers;
    int no_scheduled_events; /* skip the Normal "Scheduled" event per bound pod */
    const char *host;     /* events' source.host; may be NULL (copied) */
    uint64_t max_steps;   /* the allocator's search bound per node; 0: 1,000,000 */
    /* Optional log sink, called from the scheduler's threads. */
    void (*log)(void *ud, int level, const char *msg);
    void *log_ud;
    const dra_mem *mem; /* NULL: libc */
} dra_sched_opts;

/* ---- live: against a cluster ---------------------------------------------- */

typedef struct dra_sched dra_sched;

/* Starts the informers and whatever |o| enables on |c| (borrowed: it must
 * outlive the dra_sched). Returns at once; the caches fill in the
 * background (dra_sched_synced). DRA_OK; DRA_EINVAL when |o| enables
 * neither part; DRA_ENOMEM; DRA_EIO when a thread cannot start. Stop and
 * free with dra_sched_stop. */
dra_err dra_sched_start(dra_cluster *c, const dra_sched_opts *o, dra_sched **out);
/* Stops every thread (in-flight API calls finish first) and frees |s|.
 * NULL: no-op. */
void dra_sched_stop(dra_sched *s);
/* 1 once every informer has listed its resource once. */
int dra_sched_synced(dra_sched *s);

typedef struct dra_sched_stats {
    uint64_t attempts;      /* scheduling cycles run */
    uint64_t scheduled;     /* pods bound */
    uint64_t unschedulable; /* cycles that found no node */
    uint64_t bind_errors;   /* reserve or bind failed and was rolled back */
    uint64_t conflicts;     /* claim writes retried after a conflict */
    uint64_t claims_created;
    uint64_t claims_deallocated;
    uint64_t claims_deleted;
    uint64_t rebuilds;      /* allocator inventory rebuilt */
    size_t pending;         /* pods waiting in the queue now */
    /* Events are sent by their own thread from a queue of 10,000 (as
     * client-go's recorder does, with 1,000); those that did not fit
     * were dropped. */
    uint64_t events_dropped;
} dra_sched_stats;
void dra_sched_get_stats(dra_sched *s, dra_sched_stats *st);

/* ---- offline: a snapshot, the same cycle, no writes ----------------------- */

typedef struct dra_sched_sim dra_sched_sim;

/* An empty snapshot. |o| may be NULL (scheduler_name and score are used).
 * DRA_OK, DRA_ENOMEM, DRA_EUNSUPPORTED (no CEL backend in this build). */
dra_err dra_sched_sim_new(const dra_sched_opts *o, dra_sched_sim **out);
void dra_sched_sim_free(dra_sched_sim *s); /* NULL: no-op */

/* Adds (or replaces, by kind/namespace/name) one object: Node, Pod,
 * ResourceSlice, DeviceClass, ResourceClaim, ResourceClaimTemplate; other
 * kinds are ignored (DRA_OK). |obj| is only read. DRA_EINVALID (message
 * in |d|) for an object of a known kind that does not decode;
 * DRA_ENOMEM. */
dra_err dra_sched_sim_add(dra_sched_sim *s, const dra_doc *obj, dra_diag *d);

/* One pod's outcome. Strings live in the arena passed to the call. */
typedef struct dra_sched_claim_outcome {
    const char *pod_claim;   /* pod.spec.resourceClaims[].name, or
                              * "<extended-resources>" */
    const char *claim;       /* ns/name ("(generated)" when it does not exist yet) */
    const char *state;       /* "allocated now", "already allocated", "pending" */
    const char *devices;     /* "driver/pool/device, ..." or NULL */
} dra_sched_claim_outcome;

typedef struct dra_sched_decision {
    int scheduled;            /* a node was chosen (or the pod is bound already) */
    int bound;                /* the pod already had spec.nodeName */
    const char *node;         /* the node, or NULL */
    const char *message;      /* the FailedScheduling message kube users would see */
    const char *explanation;  /* the full explanation, one line per item */
    dra_sched_claim_outcome *claims;
    size_t nclaims;
} dra_sched_decision;

/* Schedules pod |ns|/|name| as the scheduler would, without writing:
 * claims from templates are generated in memory as the claim controller
 * would, and on success the pod is assumed bound and its claims
 * allocated in the snapshot, so the next call sees those devices in use.
 * A pod already bound reports its node and claims. DRA_OK with |out|
 * filled (whether or not a node was found); DRA_ENOTFOUND for an unknown
 * pod; DRA_ENOMEM. */
dra_err dra_sched_sim_schedule(dra_sched_sim *s, const char *ns, const char *name,
                               dra_arena *a, dra_sched_decision *out);

/* Explains claim |ns|/|name| on its own: its allocation and consumers,
 * or, when pending, why no node can hold it. Same conventions. */
dra_err dra_sched_sim_explain_claim(dra_sched_sim *s, const char *ns, const char *name,
                                    dra_arena *a, dra_sched_decision *out);

#ifdef __cplusplus
}
#endif
#endif
