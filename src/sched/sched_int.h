/*
 * sched_int.h: the scheduler's internals. One "core" holds the informer
 * cache (typed objects decoded once), the allocator with its inventory
 * kept across pods, the scheduling queue and the claim controller's work
 * queue. The core does no I/O and reads no clock: the live driver
 * (sched.c) feeds it watch events and the time, runs the writes it
 * plans on worker threads and reports back; the offline snapshot
 * (sim.c) feeds it objects and applies its plans in memory.
 *
 * Files: pod.c (pods and nodes out of their documents), filter.c (node
 * filters, resource fit), queue.c (scheduling queue, work queue), cache.c
 * (objects, indexes, allocator inventory, device counts), cycle.c (one
 * scheduling cycle), explain.c (messages), extres.c (extended resources
 * backed by DRA), writes.c (documents the writes send), claimctl.c (the
 * resourceclaim controller's decisions), sched.c (threads, API calls),
 * sim.c (offline).
 */
#ifndef DRA_SCHED_INT_H
#define DRA_SCHED_INT_H

#include "dra/alloc.h"
#include "dra/api.h"
#include "dra/sched.h"

#define SC_ANN_POD_CLAIM "resource.kubernetes.io/pod-claim-name"
#define SC_ANN_EXT_CLAIM "resource.kubernetes.io/extended-resource-claim"
#define SC_FINALIZER "resource.kubernetes.io/delete-protection"
#define SC_CLASS_PREFIX "deviceclass.resource.kubernetes.io/"
#define SC_SPECIAL_CLAIM "<extended-resources>"
#define SC_UNSCHEDULABLE_TAINT "node.kubernetes.io/unschedulable"

/* kube-scheduler's queue timings. */
#define SC_BACKOFF_INITIAL_MS 1000
#define SC_BACKOFF_MAX_MS 10000
#define SC_UNSCHED_FLUSH_MS (5 * 60 * 1000)

/* ---- interned strings: live as long as the core --------------------------- */

typedef struct sc_strs {
    dra_arena ar;
    dra_map m;
} sc_strs;
void sched_strs_init(sc_strs *s, const dra_mem *mem) DRA_HIDDEN;
void sched_strs_fini(sc_strs *s) DRA_HIDDEN;
/* The one stable copy of |str|; NULL on ENOMEM (or for NULL). */
const char *sched_str(sc_strs *s, const char *str) DRA_HIDDEN;

/* ---- resources for NodeResourcesFit ---------------------------------------- */

typedef struct sc_scalar {
    const char *name; /* interned */
    int64_t v;
} sc_scalar;

/* cpu in millicores, memory in bytes, pods as a count, every other
 * resource (extended, hugepages) as Quantity.Value(). */
typedef struct sc_res {
    int64_t cpu_m, mem, pods;
    sc_scalar *sc;
    size_t nsc, capsc; /* capsc > 0: sc is heap-grown (usage counters) */
} sc_res;

/* Adds |sign| * |r| to |acc| (heap-grown scalars). DRA_OK or DRA_ENOMEM. */
dra_err sched_res_add(const dra_mem *mem, sc_res *acc, const sc_res *r, int sign) DRA_HIDDEN;
void sched_res_fini(const dra_mem *mem, sc_res *r) DRA_HIDDEN;
int64_t sched_res_scalar(const sc_res *r, const char *name) DRA_HIDDEN; /* 0 when absent */

/* ---- pods ------------------------------------------------------------------- */

typedef struct sc_tol {
    const char *key, *value, *effect; /* NULL for "" */
    int exists;                       /* operator Exists */
} sc_tol;

typedef struct sc_taint {
    const char *key, *value, *effect;
} sc_taint;

typedef struct sc_pclaim {
    const char *name;          /* spec.resourceClaims[].name */
    const char *claim_name;    /* resourceClaimName */
    const char *template_name; /* resourceClaimTemplateName */
} sc_pclaim;

typedef struct sc_pstatus {
    const char *name;
    const char *claim; /* NULL: no claim needed */
} sc_pstatus;

/* One extended-resource request of one container (KEP-5004). */
typedef struct sc_ereq {
    uint32_t container;     /* index in initContainers + containers */
    uint32_t ridx;          /* index among the container's sorted request names */
    const char *container_name;
    const char *resource;   /* interned */
    int64_t count;
} sc_ereq;

/* What the scheduler and the controller need of a Pod, decoded once per
 * version into its own arena. */
typedef struct sc_podinfo {
    dra_arena ar;
    const char *ns, *name, *uid, *rv;
    const char *scheduler_name; /* "default-scheduler" when unset */
    const char *node_name;      /* spec.nodeName, NULL when unset */
    const char *phase;
    int deleting;  /* metadata.deletionTimestamp set */
    int gated;     /* spec.schedulingGates not empty */
    dra_alloc_label *node_selector; /* spec.nodeSelector */
    size_t nnode_selector;
    const dra_alloc_node_selector *affinity; /* required node affinity; NULL: none */
    sc_tol *tols;
    size_t ntols;
    sc_pclaim *claims;
    size_t nclaims;
    sc_pstatus *statuses; /* status.resourceClaimStatuses */
    size_t nstatuses;
    sc_res req;           /* effective requests, plus overhead */
    sc_ereq *ereqs;       /* extended-resource requests per container */
    size_t nereqs;
    const char *ext_claim; /* status.extendedResourceClaimStatus.resourceClaimName */
    const char *cond_msg;  /* PodScheduled=False message, NULL when not False */
} sc_podinfo;

/* Pod info from a Pod document, in its own arena (interning resource
 * names in |strs|). DRA_EINVALID (message in |d|) for a document that is
 * not a usable Pod; DRA_ENOMEM. Free with sched_podinfo_free. */
dra_err sched_podinfo_new(const dra_mem *mem, sc_strs *strs, const dra_doc *doc,
                          sc_podinfo **out, dra_diag *d) DRA_HIDDEN;
void sched_podinfo_free(const dra_mem *mem, sc_podinfo *p) DRA_HIDDEN;
int sched_pod_terminal(const sc_podinfo *p) DRA_HIDDEN;
/* upstream's isPodDone: terminal, or deleted before it was scheduled. */
int sched_pod_done(const sc_podinfo *p) DRA_HIDDEN;
/* The claim name for pod claim |pc|: resourceClaimName, or the one
 * recorded in status.resourceClaimStatuses. *name NULL with DRA_OK: no
 * claim needed; DRA_ENOTFOUND: the claim was not generated yet. */
dra_err sched_pod_claim_name(const sc_podinfo *p, const sc_pclaim *pc, const char **name) DRA_HIDDEN;

/* Queue positions. */
typedef enum sc_qstate {
    SC_Q_NONE = 0, /* not queued: assigned, not ours, or done */
    SC_Q_ACTIVE,
    SC_Q_BACKOFF,
    SC_Q_UNSCHED,  /* failed; waits for an event that may help */
    SC_Q_GATED,    /* PreEnqueue failed: waits for a claim or the pod */
    SC_Q_CYCLE,    /* being scheduled right now */
    SC_Q_BINDING   /* reserve + bind writes in flight */
} sc_qstate;

struct sc_node;

/* One per pod key for as long as the pod exists; |info| is replaced on
 * every update. */
typedef struct sc_pod {
    const char *key; /* "ns/name", allocated with the struct */
    sc_podinfo *info;
    /* scheduling queue */
    sc_qstate q;
    struct sc_pod *qprev, *qnext;
    size_t heap_idx;
    int attempts;
    int64_t backoff_until_ms;
    int64_t queued_ms;       /* entered its current list */
    uint64_t cycle_move_seq; /* move requests seen when its cycle began */
    int updated;             /* changed while in a cycle or binding */
    const char *wait_claim;  /* SC_Q_GATED: "ns/name" awaited, NULL: the pod itself */
    int64_t first_seen_ms;   /* for latency figures */
    /* node accounting (NodeResourcesFit) */
    struct sc_node *acct_node;
    sc_res acct;
    const char *assumed_node; /* interned; set from reserve until the pod shows it */
    /* the extended-resource claim's allocation while it is written */
    dra_arena *ext_ar;
    dra_allocation_result *ext_res;
    /* claim keys this pod references (for the pod-claim index) */
    const char **refs;
    size_t nrefs;
} sc_pod;

/* ---- nodes ------------------------------------------------------------------ */

enum { SC_B_NONE = -1, SC_B_FULL = 101, SC_B_NODEV = 102, SC_NBUCKETS = 103 };

typedef struct sc_node {
    const char *name;   /* interned */
    dra_arena *ar;      /* taints, allocatable */
    dra_arena *lab_ar;  /* labels: borrowed by the allocator, replaced only on change */
    dra_alloc_label *labels;
    size_t nlabels;
    sc_taint *taints;
    size_t ntaints;
    int unschedulable;
    int has_alloc;      /* status.allocatable present */
    sc_res alloc;
    sc_res used;        /* requests of pods on it (heap-grown) */
    /* the node's own devices (slices or devices with nodeName, in usable
     * pools) and those not in use, as the allocator counts them: for
     * scoring */
    int32_t total, free;
    int bucket;
    struct sc_node *bprev, *bnext;
    size_t idx;         /* in core->nodes */
    int gone;
} sc_node;

/* Node fields from a Node document: labels into |lab_ar|, the rest into
 * |ar|. DRA_EINVALID or DRA_ENOMEM. */
dra_err sched_node_parse(sc_strs *strs, const dra_doc *doc, dra_arena *ar, dra_arena *lab_ar,
                         sc_node *n, dra_diag *d) DRA_HIDDEN;

/* ---- filters (filter.c) ------------------------------------------------------ */

/* ORDER sc_reason: reason texts in filter.c, kube-scheduler's wording. */
typedef enum sc_reason {
    SC_R_OK = 0,
    SC_R_UNSCHEDULABLE,
    SC_R_NODE_NAME,
    SC_R_TAINT,         /* text names the taint */
    SC_R_AFFINITY,
    SC_R_RESOURCES,     /* text names the resource */
    SC_R_CLAIM_NODE,    /* an allocated claim is not available on the node */
    SC_R_DRA,           /* cannot allocate all claims */
    SC_R_N
} sc_reason;

struct sc_core;
/* The first filter |n| fails for |p| (kube's order: NodeUnschedulable,
 * NodeName, TaintToleration, NodeAffinity, NodeResourcesFit), SC_R_OK
 * when all pass. Extended resources the node does not list but a class
 * of |c| backs are skipped by the resource fit (DRA allocates them); |c|
 * may be NULL. For SC_R_TAINT and SC_R_RESOURCES *what (may be NULL)
 * gets the taint or resource, a string from |n| or |p|. */
sc_reason sched_filter(struct sc_core *c, const sc_podinfo *p, const sc_node *n,
                       const char **what) DRA_HIDDEN;
/* The reason text as kube-scheduler writes it, into |b|. */
void sched_reason_text(dra_buf *b, sc_reason r, const char *what, const sc_node *n) DRA_HIDDEN;
int sched_tolerates(const sc_tol *tols, size_t n, const char *key, const char *value,
                    const char *effect) DRA_HIDDEN;
/* Whether the node provides extended resource |r| itself (device plugin). */
int sched_node_has_scalar(const sc_node *n, const char *r) DRA_HIDDEN;

/* ---- claims, slices, classes, templates -------------------------------------- */

typedef struct sc_claim {
    const char *key; /* "ns/name", allocated with the struct */
    dra_arena *ar;   /* owns obj and model */
    dra_object *obj;
    const char *uid, *rv;
    const char *owner_pod, *owner_uid; /* controller ownerReference to a v1 Pod */
    const char *pod_claim;             /* resource.kubernetes.io/pod-claim-name */
    char *okey;                        /* its key in core->orphans (heap), or NULL */
    int ext;                           /* extended-resource claim annotation */
    int finalizer, deleting;
    dra_alloc_claim *model;            /* built on first use, in ar */
    /* an allocation this scheduler made and is writing (reserve) */
    dra_arena *as_ar;
    dra_allocation_result *assumed;
    const char *assumed_pod;           /* uid of the pod it was made for */
    /* what is counted in the allocator now: the observed allocation, or
     * else the assumed one */
    const dra_allocation_result *counted;
    dra_arena *counted_ar;             /* keeps |counted| alive */
} sc_claim;

typedef struct sc_obj {
    const char *key;
    dra_arena *ar;
    dra_object *obj;      /* NULL for slices: only their model is kept */
    void *model;        /* dra_alloc_slice * / dra_alloc_class * */
    const char *ext_name; /* classes: the extended resource name they back */
    const char *created;  /* classes: creationTimestamp text */
} sc_obj;

/* A deep copy of |in| into |ar| that owns all its strings (model.c).
 * DRA_OK or DRA_ENOMEM. */
dra_err sched_slice_copy(dra_arena *ar, const dra_alloc_slice *in, dra_alloc_slice **out) DRA_HIDDEN;

/* ---- the claim controller's work queue ----------------------------------------- */

typedef struct sc_wq_item {
    const char *key; /* "pod:ns/name" or "claim:ns/name", with the struct */
    int state;       /* 1 queued, 2 processing, 3 processing + dirty */
    int failures;
    int64_t not_before_ms;
    struct sc_wq_item *next;
} sc_wq_item;

typedef struct sc_wq {
    const dra_mem *mem;
    dra_map items;       /* key -> sc_wq_item */
    sc_wq_item *head, *tail; /* ready FIFO */
    sc_wq_item **delayed;    /* min-heap by not_before_ms */
    size_t ndelayed, capdelayed;
} sc_wq;

void sched_wq_init(sc_wq *q, const dra_mem *mem) DRA_HIDDEN;
void sched_wq_fini(sc_wq *q) DRA_HIDDEN;
/* Queue |key| (copied) unless already queued. DRA_OK or DRA_ENOMEM. */
dra_err sched_wq_add(sc_wq *q, const char *key) DRA_HIDDEN;
/* Moves due delayed items to the FIFO; returns the next due time or -1. */
int64_t sched_wq_tick(sc_wq *q, int64_t now_ms) DRA_HIDDEN;
/* The next key to work on (borrowed until sched_wq_done), NULL when none. */
const char *sched_wq_get(sc_wq *q) DRA_HIDDEN;
/* Finished |key|. ok: its failure count resets; otherwise it is queued
 * again after 5 ms doubling per failure, up to 30 s (at once when it was
 * added again while being worked on). */
void sched_wq_done(sc_wq *q, const char *key, int ok, int64_t now_ms) DRA_HIDDEN;
size_t sched_wq_len(const sc_wq *q) DRA_HIDDEN;

/* ---- inventory: the allocator and device counts --------------------------------- */

typedef struct sc_inv {
    dra_allocator *a;
    int any_global; /* devices not local to one node exist */
    int any_multi;  /* devices allowing multiple allocations exist */
} sc_inv;

/* ---- the core ----------------------------------------------------------------- */

struct sc_core {
    const dra_mem *mem;
    const char *sched_name; /* interned */
    dra_sched_score score;
    int scheduler;        /* pods are queued for scheduling */
    int implicit_nodes;   /* offline: a slice's nodeName makes a node (no labels) */
    uint64_t max_steps;   /* allocator search bound; 0: its default */
    int controller;       /* claim controller work is queued */
    sc_strs strs;
    /* cache */
    dra_map pods;         /* key -> sc_pod */
    dra_map nodes_by_name; /* name -> sc_node */
    sc_node **nodes;
    size_t nnodes, capnodes;
    dra_map claims;       /* key -> sc_claim */
    dra_map slices;       /* name -> sc_obj */
    dra_map classes;      /* name -> sc_obj */
    dra_map templates;    /* key -> sc_obj */
    dra_map claim_pods;   /* claim key -> sc_plist: pods referencing it */
    dra_map orphans;      /* "<owner pod uid>/<pod claim>" -> sc_claim */
    /* deleted pod UIDs (upstream keeps the last 500) */
    const char *deleted_uids[512];
    size_t ndeleted;
    dra_map deleted;      /* uid -> 1 */
    /* inventory */
    sc_inv inv;
    int dirty;            /* slices, nodes or classes changed: rebuild first */
    dra_arena **grave;    /* arenas the allocator may still borrow from */
    size_t ngrave, capgrave;
    uint64_t rebuilds;
    sc_node *buckets[SC_NBUCKETS]; /* heads of the scoring buckets */
    sc_node *btails[SC_NBUCKETS];
    size_t rr;            /* round-robin start for pods without devices */
    /* scheduling queue */
    sc_pod *active, *active_tail;
    sc_pod *unsched, *unsched_tail;
    sc_pod *gated, *gated_tail;
    sc_pod **backoff;     /* min-heap by backoff_until_ms */
    size_t nbackoff, capbackoff;
    uint64_t move_seq;
    size_t npending;
    /* claim controller */
    sc_wq wq;
    /* figures */
    dra_sched_stats st;
};
typedef struct sc_core sc_core;

dra_err sched_core_init(sc_core *c, const dra_sched_opts *o) DRA_HIDDEN;
void sched_core_fini(sc_core *c) DRA_HIDDEN;

/* Applies one watch event (|type| ADDED, MODIFIED or DELETED) for
 * resource |kind| to the cache, moving queued pods and queueing
 * controller work as needed. DRA_OK; DRA_EINVALID for a document that
 * does not decode (the event is dropped, message in |d|); DRA_ENOMEM. */
dra_err sched_apply(sc_core *c, dra_kind kind, dra_watch_type type, const dra_doc *obj,
                    int64_t now_ms, dra_diag *d) DRA_HIDDEN;

sc_claim *sched_claim_get(sc_core *c, const char *ns, const char *name) DRA_HIDDEN;
sc_pod *sched_pod_get(sc_core *c, const char *key) DRA_HIDDEN;
sc_obj *sched_template_get(sc_core *c, const char *ns, const char *name) DRA_HIDDEN;
int sched_uid_deleted(const sc_core *c, const char *uid) DRA_HIDDEN;
/* The claim's allocator model, built on first use. NULL on ENOMEM or a
 * claim that cannot be modelled (message in |d|). */
dra_alloc_claim *sched_claim_model(sc_core *c, sc_claim *cl, dra_diag *d) DRA_HIDDEN;
/* Pods referencing claim |key|; *n entries, NULL when none. */
sc_pod **sched_claim_users(sc_core *c, const char *key, size_t *n) DRA_HIDDEN;

/* Rebuilds the allocator from the cached slices, nodes and classes and
 * re-counts every allocation (observed and assumed). DRA_OK, DRA_ENOMEM,
 * DRA_EUNSUPPORTED. */
dra_err sched_rebuild(sc_core *c) DRA_HIDDEN;
/* Marks (|sign| 1) or unmarks (-1) one allocation as in use: the
 * allocator and the node device counts. */
void sched_count(sc_core *c, const dra_allocation_result *res, int sign) DRA_HIDDEN;
/* Drops the pod's in-flight extended-resource allocation, if any. */
void sched_ext_unassume(sc_core *c, sc_pod *p) DRA_HIDDEN;
/* Sets |cl|'s assumed allocation (NULL clears it; |ar| is then owned by
 * the claim) and re-counts. */
dra_err sched_claim_assume(sc_core *c, sc_claim *cl, dra_arena *ar,
                           dra_allocation_result *res, const char *pod_uid) DRA_HIDDEN;
/* Node accounting for pods: the pod's requests count on |node| (NULL:
 * nowhere). */
dra_err sched_pod_account(sc_core *c, sc_pod *p, sc_node *node) DRA_HIDDEN;
/* Scoring buckets: where |n| belongs now, given its device counts. */
void sched_node_rebucket(sc_core *c, sc_node *n) DRA_HIDDEN;
/* Hands |ar| to the graveyard (freed at the next rebuild). */
void sched_grave(sc_core *c, dra_arena *ar) DRA_HIDDEN;
void sched_arena_free(const dra_mem *mem, dra_arena *ar) DRA_HIDDEN;
dra_arena *sched_arena_new(const dra_mem *mem) DRA_HIDDEN;

/* ---- scheduling queue (queue.c) ------------------------------------------------- */

/* Where a pod goes when it (re)enters the queue: gated when its claims
 * are not there yet, else active (or backoff while its backoff runs). */
void sched_queue_admit(sc_core *c, sc_pod *p, int64_t now_ms) DRA_HIDDEN;
void sched_queue_remove(sc_core *c, sc_pod *p) DRA_HIDDEN;
/* The next pod to schedule (moved to SC_Q_CYCLE), NULL when none is due. */
sc_pod *sched_queue_pop(sc_core *c, int64_t now_ms) DRA_HIDDEN;
/* After a failed cycle: unschedulable (or backoff if something moved
 * meanwhile). |backoff_only|: an error, straight to backoff. */
void sched_queue_failed(sc_core *c, sc_pod *p, int64_t now_ms, int backoff_only) DRA_HIDDEN;
/* After a cycle that has to wait for a claim in flight (or a pod
 * update): gated until that changes. */
void sched_queue_wait(sc_core *c, sc_pod *p, int64_t now_ms) DRA_HIDDEN;
/* Something that may help unschedulable pods happened: move them all. */
void sched_queue_move_all(sc_core *c, int64_t now_ms) DRA_HIDDEN;
/* Re-checks gated pods waiting for claim |key| (NULL: all gated pods). */
void sched_queue_wake_claim(sc_core *c, const char *key, int64_t now_ms) DRA_HIDDEN;
/* Moves due backoffs to active and flushes long-unschedulable pods;
 * returns the next time something is due, or -1. */
int64_t sched_queue_tick(sc_core *c, int64_t now_ms) DRA_HIDDEN;
/* PreEnqueue: whether every claim of |p| exists (else *wait gets the
 * claim key awaited, or NULL for the pod itself, and *why the reason in
 * |b|). */
int sched_pre_enqueue(sc_core *c, const sc_podinfo *p, const char **wait, dra_buf *why) DRA_HIDDEN;
/* Whether |p| is one this scheduler must place. */
int sched_pod_ours(const sc_core *c, const sc_podinfo *p) DRA_HIDDEN;

/* ---- one scheduling cycle (cycle.c) ---------------------------------------------- */

typedef enum sc_rc {
    SC_RC_OK = 0,   /* a node: reserve and bind */
    SC_RC_WAIT,     /* waiting for something in flight: no event, retried on change */
    SC_RC_UNSCHED,  /* no node: event + condition, wait for a relevant change */
    SC_RC_ERROR     /* broken input (CEL error...): event + condition, backoff */
} sc_rc;

/* One claim of the pod in this cycle. */
typedef struct sc_cclaim {
    const char *pod_claim;   /* the pod's name for it */
    sc_claim *cl;            /* NULL for the extended-resource claim not made yet */
    int allocate;            /* index into the outcome, -1 when already allocated */
    int reserve;             /* the pod must be added to reservedFor */
    const dra_allocation_result *alloc; /* already allocated: that allocation */
    const dra_alloc_node_selector *sel; /* its node selector (model) */
} sc_cclaim;

typedef struct sc_cycle {
    dra_arena ar;            /* everything below */
    sc_rc rc;
    sc_node *node;
    const char *message;     /* kube-style FailedScheduling message */
    const char *explanation; /* full text */
    const char *wait_claim;  /* SC_RC_WAIT: claim key, or NULL */
    sc_cclaim *claims;
    size_t nclaims;
    /* claims to allocate (models), the outcome on |node| */
    const dra_alloc_claim **models;
    size_t nmodels;
    dra_alloc_outcome out;
    /* extended resources: the special claim's requests on |node| */
    int ext;                 /* index in claims of the special claim, -1 */
    dra_claim_spec *ext_spec;
    dra_arena ext_ar;        /* the special claim's model the outcome refers to */
} sc_cycle;

void sched_cycle_init(sc_cycle *cy, const dra_mem *mem) DRA_HIDDEN;
void sched_cycle_fini(sc_cycle *cy) DRA_HIDDEN;
/* Runs the cycle for |p| (rebuilding the inventory first if needed).
 * |explain_all|: also explain when a node was found (dractl). DRA_OK
 * with |cy| filled; DRA_ENOMEM. */
dra_err sched_cycle_run(sc_core *c, sc_pod *p, sc_cycle *cy, int explain_all) DRA_HIDDEN;
/* Reserve: counts the cycle's new allocations as in use (assumed) and
 * the pod on its node. */
dra_err sched_cycle_assume(sc_core *c, sc_pod *p, sc_cycle *cy) DRA_HIDDEN;
/* Undoes sched_cycle_assume (binding failed). */
void sched_cycle_forget(sc_core *c, sc_pod *p, const char *const *claim_keys, size_t n) DRA_HIDDEN;

/* ---- extended resources (extres.c) ----------------------------------------------- */

/* The DeviceClass backing extended resource |r| (explicit
 * extendedResourceName, or the implicit deviceclass.resource.kubernetes.io/
 * name; newest class wins, then name order); NULL when none. */
const char *sched_ext_class(sc_core *c, const char *r) DRA_HIDDEN;
/* Whether the pod requests any extended resource DRA could back. */
int sched_ext_wanted(sc_core *c, const sc_podinfo *p) DRA_HIDDEN;
/* The special claim's spec for node |n| (requests container-I-request-J
 * for every DRA-backed resource the node does not provide itself), in
 * |ar|; *out NULL when nothing goes through DRA on this node. DRA_OK,
 * DRA_ENOMEM; DRA_ENOTFOUND (with *what) when a resource is neither
 * provided by the node nor backed by a class. */
dra_err sched_ext_spec(sc_core *c, const sc_podinfo *p, const sc_node *n, dra_arena *ar,
                       dra_claim_spec **out, const char **what) DRA_HIDDEN;
/* status.extendedResourceClaimStatus for claim |claim_name| with |spec|. */
dra_doc *sched_ext_status_doc(dra_arena *ar, const sc_podinfo *p, const dra_claim_spec *spec,
                              const char *claim_name) DRA_HIDDEN;
/* A resource name is extended (v1helper.IsExtendedResourceName) or the
 * implicit device class form. */
int sched_is_dra_ext_name(const char *r) DRA_HIDDEN;

/* ---- messages (explain.c) ------------------------------------------------------- */

/* "0/N nodes are available: 2 reason, 1 reason." from a histogram. */
typedef struct sc_hist {
    dra_map m;  /* text -> count (uintptr_t) */
    dra_arena ar;
} sc_hist;
void sched_hist_init(sc_hist *h, const dra_mem *mem) DRA_HIDDEN;
void sched_hist_fini(sc_hist *h) DRA_HIDDEN;
dra_err sched_hist_add(sc_hist *h, const char *text) DRA_HIDDEN;
/* Counts |text| |n| times. */
dra_err sched_hist_add_n(sc_hist *h, const char *text, size_t n) DRA_HIDDEN;
/* The FitError message: "0/N nodes are available: ..." with the
 * allocator's explanation (|expl|, may be NULL) shortened after it. */
const char *sched_fit_message(dra_arena *ar, size_t nnodes, const char *prefilter,
                              sc_hist *h, const char *expl) DRA_HIDDEN;
/* Shortens an explanation to at most |max| bytes on line boundaries,
 * lines joined with "; ". */
const char *sched_shorten(dra_arena *ar, const char *expl, size_t max) DRA_HIDDEN;

/* ---- documents for the writes (writes.c) ------------------------------------------ */

/* The claim as it must be PUT to /status: |cl|'s object with |alloc|
 * (may be NULL: unchanged) and |pod| added to reservedFor. Deep copy in
 * |ar|. */
dra_doc *sched_claim_reserve_doc(dra_arena *ar, const sc_claim *cl,
                                 const dra_allocation_result *alloc, const sc_podinfo *pod,
                                 int add_finalizer) DRA_HIDDEN;
/* The same change applied to a fresh claim document (after a conflict):
 * sets status.allocation to |alloc_doc| (when not NULL) and adds the pod
 * to status.reservedFor. Returns 0 when the fresh claim is allocated
 * differently or being deleted (then *why is set). */
int sched_claim_redo(dra_arena *ar, dra_doc *fresh, const dra_doc *alloc_doc,
                     const char *pod_name, const char *pod_uid, const char **why) DRA_HIDDEN;
/* The rollback of a reserve: |written| with the pod removed from
 * reservedFor and, when |dealloc| and nobody else reserves it, the
 * allocation cleared. */
dra_doc *sched_claim_unreserve_doc(dra_arena *ar, const dra_doc *written, const char *pod_uid,
                                   int dealloc) DRA_HIDDEN;
/* The claim the controller creates for |pc| of |pod| from |tmpl|. */
dra_doc *sched_claim_from_template(dra_arena *ar, const sc_podinfo *pod, const sc_pclaim *pc,
                                   const dra_object *tmpl, int finalizer) DRA_HIDDEN;
/* The extended-resource claim to create for |pod| with |spec|. */
dra_doc *sched_ext_claim_doc(dra_arena *ar, const sc_podinfo *pod, const dra_claim_spec *spec) DRA_HIDDEN;
/* generateName "<pod>-<claim>-", both cut in proportion past 57 bytes. */
const char *sched_generate_name(dra_arena *ar, const char *pod, const char *pc) DRA_HIDDEN;
/* A minimal Pod document (apiVersion, kind, metadata) for events. */
dra_doc *sched_pod_ref_doc(dra_arena *ar, const char *ns, const char *name, const char *uid) DRA_HIDDEN;
/* status.resourceClaimStatuses as a list document, and as a merge-patch
 * body for pods/status */
dra_doc *sched_claim_statuses_doc(dra_arena *ar, const sc_pstatus *st, size_t n) DRA_HIDDEN;
char *sched_claim_statuses_patch(dra_arena *ar, const sc_pstatus *st, size_t n) DRA_HIDDEN;
char *sched_doc_json(dra_arena *ar, const dra_doc *doc) DRA_HIDDEN;
/* RFC 3339 UTC time of |unix_s|. */
const char *sched_rfc3339(dra_arena *ar, int64_t unix_s) DRA_HIDDEN;

/* ---- the claim controller (claimctl.c) --------------------------------------------- */

/* One API call the controller wants made. */
typedef enum sc_op {
    SC_OP_CREATE_CLAIM,    /* POST doc; result name goes to the pod status */
    SC_OP_POD_STATUSES,    /* merge-patch pods/status with resourceClaimStatuses */
    SC_OP_CLAIM_STATUS,    /* PUT claims/status doc */
    SC_OP_CLAIM_UPDATE,    /* PUT claim doc (finalizer removal) */
    SC_OP_CLAIM_DELETE,    /* DELETE claim (uid precondition) */
    SC_OP_POD_CHECK        /* GET pod: unknown consumer in reservedFor */
} sc_op;

typedef struct sc_action {
    sc_op op;
    const char *ns, *name, *uid;
    const char *pod_claim;  /* CREATE_CLAIM: the pod claim it is for */
    dra_doc *doc;
    const char *patch;      /* POD_STATUSES */
    int then_unfinalize;    /* CLAIM_STATUS: remove the finalizer after */
    int dealloc;            /* CLAIM_STATUS: it clears the allocation */
} sc_action;

typedef struct sc_plan {
    dra_arena ar;
    sc_action *v;
    size_t n, cap;
    /* POD_STATUSES is built after the creates: the entries so far */
    sc_pstatus *st;
    size_t nst;
    int need_statuses;
    const char *pod_ns, *pod_name, *pod_uid;
    /* a Warning event on the pod (FailedResourceClaimCreation) */
    const char *ev_reason, *ev_msg;
} sc_plan;

void sched_plan_init(sc_plan *p, const dra_mem *mem) DRA_HIDDEN;
void sched_plan_fini(sc_plan *p) DRA_HIDDEN;
/* What syncing work key |key| ("pod:ns/name" or "claim:ns/name") needs.
 * A claim plan whose reservedFor names pods the cache does not know is
 * only POD_CHECKs; after looking them up, plan again with |checked| set
 * and |gone| the UIDs the API no longer has. DRA_OK (an empty plan:
 * nothing to do), DRA_ENOMEM. */
dra_err sched_cc_plan(sc_core *c, const char *key, const char *const *gone, size_t ngone,
                      int checked, sc_plan *plan) DRA_HIDDEN;
/* Queues the controller work a change of |p| calls for. */
void sched_cc_pod_changed(sc_core *c, const sc_podinfo *p, int deleted) DRA_HIDDEN;
void sched_cc_claim_changed(sc_core *c, const sc_claim *cl) DRA_HIDDEN;

#endif
