/*
 * dra/alloc.h: the structured-parameters allocator. Given a snapshot of
 * ResourceSlices, DeviceClasses, the devices already in use and a set of
 * ResourceClaims, it picks devices for every request of every claim on one
 * node, the way Kubernetes' scheduler does (resource.k8s.io/v1, 1.35
 * semantics plus the later upstream fixes; see docs/allocator.md).
 *
 * Pure and deterministic: no I/O, no clock (a caller-supplied callback may
 * cancel a search), no globals. Pools are visited sorted by (driver, pool),
 * slices by name, devices in slice order; pools with binding conditions go
 * last. A dra_allocator is not thread-safe: one call at a time.
 *
 * Input model. The allocator works on the plain structs below (the
 * "model"); the adapter in src/alloc/from_api.c builds them from the typed
 * API objects. Every pointer handed to the allocator (slices, devices,
 * classes, claims and all their strings) is BORROWED: the caller keeps it
 * alive and unchanged until dra_allocator_free, or, for claims, until the
 * outcome that refers to them is finished.
 */
#ifndef DRA_ALLOC_H
#define DRA_ALLOC_H

#include "dra/api.h"
#include "dra/base.h"
#include "dra/cel.h"
#include "dra/codec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Kubernetes' limit on results per claim (AllocationResultsMaxSize). */
#define DRA_ALLOC_MAX_RESULTS 32

/* ---- node selectors (core/v1 NodeSelector) ------------------------------ */

typedef enum dra_alloc_nsop {
    DRA_ALLOC_NS_IN,
    DRA_ALLOC_NS_NOT_IN,
    DRA_ALLOC_NS_EXISTS,
    DRA_ALLOC_NS_DOES_NOT_EXIST,
    DRA_ALLOC_NS_GT,
    DRA_ALLOC_NS_LT
} dra_alloc_nsop;

typedef struct dra_alloc_ns_req {
    const char *key;
    dra_alloc_nsop op;
    const char *const *values;
    size_t nvalues;
} dra_alloc_ns_req;

/* Requirements of one term are AND-ed; an empty term matches nothing.
 * |fields| may only use the key "metadata.name". */
typedef struct dra_alloc_ns_term {
    const dra_alloc_ns_req *exprs;
    size_t nexprs;
    const dra_alloc_ns_req *fields;
    size_t nfields;
} dra_alloc_ns_term;

/* Terms are OR-ed. Slices and devices must use exactly one term. */
typedef struct dra_alloc_node_selector {
    const dra_alloc_ns_term *terms;
    size_t nterms;
} dra_alloc_node_selector;

typedef struct dra_alloc_label {
    const char *key, *value;
} dra_alloc_label;

/* ---- inventory: ResourceSlice ------------------------------------------ */

typedef struct dra_alloc_counter {
    const char *name;
    dra_quantity value;
} dra_alloc_counter;

/* A shared counter set (slice.sharedCounters[]) or one entry of a device's
 * consumesCounters[] (then |name| is the counterSet it draws from). */
typedef struct dra_alloc_counter_set {
    const char *name;
    const dra_alloc_counter *counters;
    size_t ncounters;
} dra_alloc_counter_set;

typedef enum dra_alloc_effect {
    DRA_ALLOC_EFFECT_ANY = 0, /* tolerations only: "" matches any effect */
    DRA_ALLOC_EFFECT_NONE,
    DRA_ALLOC_EFFECT_NO_SCHEDULE,
    DRA_ALLOC_EFFECT_NO_EXECUTE,
    DRA_ALLOC_EFFECT_UNKNOWN /* taints only: treated like None */
} dra_alloc_effect;

typedef struct dra_alloc_taint {
    const char *key, *value; /* value may be NULL (empty) */
    dra_alloc_effect effect;
} dra_alloc_taint;

/* A device capacity with its optional requestPolicy (consumable capacity). */
typedef struct dra_alloc_capacity {
    const char *name; /* as in the slice: bare (driver's domain) or qualified */
    dra_quantity value;
    int has_policy;
    int has_default;
    dra_quantity def;
    const dra_quantity *valid_values; /* ascending */
    size_t nvalid_values;
    int has_range;
    dra_quantity min;
    int has_max, has_step;
    dra_quantity max, step;
} dra_alloc_capacity;

typedef struct dra_alloc_device {
    const char *name;
    const dra_cel_attr *attrs; /* names bare or qualified, as in the slice */
    size_t nattrs;
    const dra_alloc_capacity *caps;
    size_t ncaps;
    const dra_alloc_counter_set *consumes; /* consumesCounters[] */
    size_t nconsumes;
    const dra_alloc_taint *taints;
    size_t ntaints;
    int allow_multiple_allocations;
    int binds_to_node;
    const char *const *binding_conditions;
    size_t nbinding_conditions;
    const char *const *binding_failure_conditions;
    size_t nbinding_failure_conditions;
    /* Only when the slice sets per_device_node_selection: exactly one. */
    const char *node_name;
    const dra_alloc_node_selector *node_selector;
    int all_nodes;
} dra_alloc_device;

typedef struct dra_alloc_slice {
    const char *name, *driver, *pool;
    int64_t generation, slice_count; /* spec.pool.generation, resourceSliceCount */
    /* Node selection: exactly one of these. */
    const char *node_name;
    const dra_alloc_node_selector *node_selector;
    int all_nodes;
    int per_device_node_selection;
    const dra_alloc_device *devices;
    size_t ndevices;
    const dra_alloc_counter_set *shared_counters;
    size_t nshared_counters;
} dra_alloc_slice;

/* ---- DeviceClass and claims --------------------------------------------- */

/* An opaque config entry. |parameters| is the caller's (for example a
 * dra_doc *); the allocator only copies the pointer into results. */
typedef struct dra_alloc_config {
    const char *const *requests; /* claim configs only; empty = all */
    size_t nrequests;
    const char *driver;
    const void *parameters;
} dra_alloc_config;

typedef struct dra_alloc_class {
    const char *name;
    const char *const *selectors; /* CEL expressions */
    size_t nselectors;
    const dra_alloc_config *config;
    size_t nconfig;
} dra_alloc_class;

typedef enum dra_alloc_tol_op { DRA_ALLOC_TOL_EQUAL = 0, DRA_ALLOC_TOL_EXISTS } dra_alloc_tol_op;

typedef struct dra_alloc_toleration {
    const char *key;   /* NULL/"" matches every key (with Exists) */
    dra_alloc_tol_op op;
    const char *value;
    dra_alloc_effect effect; /* ANY for "" */
    int has_seconds;
    int64_t seconds;
} dra_alloc_toleration;

typedef struct dra_alloc_cap_request {
    const char *name;
    dra_quantity value;
} dra_alloc_cap_request;

typedef enum dra_alloc_mode { DRA_ALLOC_EXACT_COUNT = 0, DRA_ALLOC_ALL } dra_alloc_mode;

/* ExactDeviceRequest or one DeviceSubRequest of firstAvailable. */
typedef struct dra_alloc_devreq {
    const char *name; /* subrequest name; NULL for `exactly` */
    const char *class_name;
    const char *const *selectors;
    size_t nselectors;
    dra_alloc_mode mode;
    int64_t count; /* ExactCount: 0 means 1 */
    int admin_access;
    const dra_alloc_toleration *tolerations;
    size_t ntolerations;
    const dra_alloc_cap_request *cap_requests;
    size_t ncap_requests;
} dra_alloc_devreq;

typedef struct dra_alloc_request {
    const char *name;
    dra_alloc_devreq exactly;              /* used when nfirst_available == 0 */
    const dra_alloc_devreq *first_available; /* tried in order */
    size_t nfirst_available;
} dra_alloc_request;

/* Exactly one of match_attribute / distinct_attribute (fully qualified). */
typedef struct dra_alloc_constraint {
    const char *const *requests; /* "req" or "req/sub"; empty = all */
    size_t nrequests;
    const char *match_attribute;
    const char *distinct_attribute;
} dra_alloc_constraint;

typedef struct dra_alloc_claim {
    const char *namespace_, *name, *uid; /* for messages and shareIDs */
    const dra_alloc_request *requests;
    size_t nrequests;
    const dra_alloc_constraint *constraints;
    size_t nconstraints;
    const dra_alloc_config *config;
    size_t nconfig;
} dra_alloc_claim;

/* ---- results (status.allocation) ----------------------------------------- */

typedef struct dra_alloc_consumed {
    const char *name; /* the device's capacity name */
    dra_quantity value;
} dra_alloc_consumed;

/* One devices.results[] entry. Strings point into the inventory, the
 * claim, or the outcome's arena. */
typedef struct dra_alloc_device_result {
    const char *request; /* "req" or "req/sub" */
    const char *driver, *pool, *device;
    int admin_access;
    const dra_alloc_toleration *tolerations;
    size_t ntolerations;
    const char *const *binding_conditions;
    size_t nbinding_conditions;
    const char *const *binding_failure_conditions;
    size_t nbinding_failure_conditions;
    const char *share_id; /* NULL unless the device allows multiple allocations */
    const dra_alloc_consumed *consumed;
    size_t nconsumed;
} dra_alloc_device_result;

typedef enum dra_alloc_source { DRA_ALLOC_FROM_CLASS, DRA_ALLOC_FROM_CLAIM } dra_alloc_source;

typedef struct dra_alloc_config_result {
    dra_alloc_source source;
    const char *const *requests;
    size_t nrequests;
    const dra_alloc_config *config; /* borrowed from the class or claim */
} dra_alloc_config_result;

typedef struct dra_alloc_claim_result {
    const dra_alloc_claim *claim;
    dra_alloc_device_result *results;
    size_t nresults;
    dra_alloc_config_result *config;
    size_t nconfig;
    /* NULL: available on all nodes. Otherwise one term. */
    const dra_alloc_node_selector *node_selector;
} dra_alloc_claim_result;

/* ---- explanations (as data) -----------------------------------------------
 * Why claims could not be allocated, one sentence per request, the same
 * words as dra_alloc_outcome.explanation (which is built from these).
 * Everything lives in the outcome's arena. */
typedef struct dra_alloc_why_request {
    const char *request; /* "req", or "req/sub" for each firstAvailable alternative */
    const char *text;    /* one sentence, without the request name: "none of the 4
                          * devices of class gpu fits, 1 needed: 4 do not match
                          * selector #0 (memory is 189471Mi, needs more than 200Gi)" */
    int enough;          /* it has enough usable devices on its own */
} dra_alloc_why_request;

typedef struct dra_alloc_why_claim {
    const dra_alloc_claim *claim;
    const char *name;                  /* "namespace/name" */
    dra_alloc_why_request *requests;   /* in request order, alternatives in order */
    size_t nrequests;
    const char **constraints;          /* one sentence per constraint */
    size_t nconstraints;
} dra_alloc_why_claim;

/* What one allocate/schedule call produced. Initialise with
 * dra_alloc_outcome_init, release with dra_alloc_outcome_fini; a used
 * outcome can be passed again (it is reset). */
typedef struct dra_alloc_outcome {
    dra_arena arena;
    const char *node;               /* the node allocated for */
    dra_alloc_claim_result *claims; /* one per input claim, same order */
    size_t nclaims;
    /* With explanations enabled: on DRA_EUNSAT, and on the errors that
     * concern the claims themselves (DRA_ENOTFOUND for a missing class,
     * a selector that does not compile), why; in arena. The first line
     * says where ("cannot allocate all claims on node X" / "on any node
     * (N nodes)"), then per claim "claim NS/NAME:" and one indented line
     * per request ("  request gpu: ...") and constraint, and a last line
     * when every request fits on its own but not together. */
    char *explanation;
    uint64_t steps;                 /* search steps taken */
    /* The same explanation as data (additive; NULL/0 when none). */
    const char *why_where;          /* the first line of |explanation| */
    dra_alloc_why_claim *why;       /* one per input claim, same order */
    size_t nwhy;
    const char *why_together;       /* the last line, or NULL */
} dra_alloc_outcome;

void dra_alloc_outcome_init(dra_alloc_outcome *o, const dra_mem *mem);
void dra_alloc_outcome_fini(dra_alloc_outcome *o);

/* ---- selector backend ---------------------------------------------------
 * How selector expressions are compiled and evaluated. The default (NULL
 * in the options) is the CEL engine with Kubernetes' DRA environment.
 * Tests may plug in their own. compile: DRA_OK and *prog, or an error with
 * a message in |d|. prepare: build a per-device handle (optional; NULL
 * callback means eval gets a NULL |prepared|). eval: *result 0/1, or an
 * error (a runtime error fails the allocation, as in Kubernetes).
 * driver_only (optional): non-zero when the program's result can depend on
 * the device's driver alone (it reads no attribute, capacity or sharing
 * flag); such a program is evaluated once per driver. reads (optional):
 * the device values the program reads when that is a fixed list (as
 * dra_cel_program_device_reads says it): *out gets *n entries in |ar|
 * (their names too, or borrowed from |prog|), DRA_OK; DRA_EUNSUPPORTED
 * when the program may read anything; DRA_ENOMEM. Such a program is
 * evaluated once per distinct combination of those values on the devices
 * (absent values included), the result shared by every device that has
 * the same ones. */
typedef struct dra_alloc_selector_ops {
    void *ud;
    dra_err (*compile)(void *ud, const char *expr, void **prog, dra_diag *d);
    void (*release)(void *ud, void *prog);
    dra_err (*prepare)(void *ud, const char *driver, const dra_alloc_device *dev,
                       void **prepared);
    void (*unprepare)(void *ud, void *prepared);
    dra_err (*eval)(void *ud, void *prog, const char *driver,
                    const dra_alloc_device *dev, void *prepared, int *result,
                    dra_diag *d);
    int (*driver_only)(void *ud, const char *expr, void *prog);
    dra_err (*reads)(void *ud, void *prog, dra_arena *ar, const dra_cel_read **out,
                     size_t *n);
} dra_alloc_selector_ops;

/* ---- the allocator ------------------------------------------------------ */

typedef struct dra_allocator dra_allocator;

typedef struct dra_alloc_options {
    const dra_alloc_selector_ops *selectors; /* NULL: CEL */
    uint64_t max_steps;   /* search bound per call; 0: 1,000,000 */
    /* Build explanations for unsatisfiable claims in allocate and
     * schedule (dra_allocator_explain explains whatever this says). */
    int explain;
    /* Polled on the first search step and every 256 steps after; a
     * non-zero return (DRA_ETIMEOUT or DRA_ECANCELED) stops the search
     * with that code. NULL: never. */
    int (*cancel)(void *ud);
    void *cancel_ud;
} dra_alloc_options;

/* Create an empty allocator. |opts| may be NULL (CEL selectors, defaults);
 * it is copied. DRA_OK, DRA_ENOMEM, or DRA_EUNSUPPORTED when the default
 * CEL backend is not available in this build. Free with dra_allocator_free. */
dra_err dra_allocator_new(const dra_mem *mem, const dra_alloc_options *opts,
                          dra_allocator **out);
void dra_allocator_free(dra_allocator *a); /* NULL ok */

/* Add inventory. Borrowed (see the top of this file). Slices and nodes
 * must be added before the inventory is indexed (the first allocate,
 * schedule, mark or seal); later adds return DRA_EINVAL. add_slice:
 * DRA_EINVAL (with a message in |d|) also when the node selection is not
 * exactly one of the four, or a node selector has not exactly one term.
 * add_class works at any time; a class with the same name replaces the
 * old one. DRA_ENOMEM. */
dra_err dra_allocator_add_slice(dra_allocator *a, const dra_alloc_slice *s,
                                dra_diag *d);
dra_err dra_allocator_add_class(dra_allocator *a, const dra_alloc_class *c);
/* Nodes known to the scheduler (for dra_allocator_schedule and node
 * selectors). Nodes named by slices are known even if not added. Labels
 * are borrowed. DRA_EEXIST when added twice, DRA_EINVAL once indexed,
 * DRA_ENOMEM. */
dra_err dra_allocator_add_node(dra_allocator *a, const char *name,
                               const dra_alloc_label *labels, size_t nlabels);

/* Index the inventory now (otherwise the first allocate, schedule or mark
 * does it); afterwards slices and nodes can no longer be added. DRA_OK,
 * DRA_ENOMEM. */
dra_err dra_allocator_seal(dra_allocator *a, dra_diag *d);

/* Record a device as in use by an existing allocation: exclusive unless
 * |admin_access| (then nothing is recorded) or the device allows multiple
 * allocations (then |consumed| is added to its consumed capacity).
 * Devices not in the inventory are ignored. Counters are charged once per
 * device. DRA_OK or DRA_ENOMEM. */
dra_err dra_allocator_mark(dra_allocator *a, const dra_alloc_device_result *r);
/* Undo dra_allocator_mark for the same result. */
dra_err dra_allocator_unmark(dra_allocator *a, const dra_alloc_device_result *r);

/* Allocate every claim of |claims| on |node|, all or nothing, given the
 * devices marked in use. Does not change the in-use state: call
 * dra_allocator_commit to keep the result.
 * Returns DRA_OK with |out| filled; DRA_EUNSAT when no allocation exists on
 * this node (|out->explanation| says why when explanations are on, and the
 * same text is added to |d|); DRA_ENOTFOUND for an unknown class;
 * DRA_EEVAL/DRA_ETYPE/DRA_EPARSE for a selector that fails to compile or
 * evaluate; DRA_ELIMIT for more than 32 results or when the search bound is
 * hit; DRA_ECONFLICT for All over a pool that is being updated or when
 * a device All mode must take breaks a constraint;
 * DRA_EINVALID when the search failed and an invalid pool was visible;
 * whatever the cancel callback returned; DRA_ENOMEM. Errors carry a message
 * naming the claim and request in |d| (may be NULL). */
dra_err dra_allocator_allocate(dra_allocator *a, const char *node,
                               const dra_alloc_claim *const *claims, size_t nclaims,
                               dra_alloc_outcome *out, dra_diag *d);

/* Like allocate, on the first known node (sorted by name) where every
 * claim fits. Nodes that cannot hold enough free devices are skipped
 * without a search. DRA_EUNSAT when no node fits; the explanation then
 * covers all nodes. */
dra_err dra_allocator_schedule(dra_allocator *a,
                               const dra_alloc_claim *const *claims, size_t nclaims,
                               dra_alloc_outcome *out, dra_diag *d);

/* Like schedule, on the first node (by name) that |filter| accepts and
 * where every claim fits: for pods with node affinity or claims already
 * allocated with a node selector. |filter| gets the node's name and
 * labels and returns non-zero to allow it. */
typedef int (*dra_alloc_node_filter)(void *ud, const char *node,
                                     const dra_alloc_label *labels, size_t nlabels);
dra_err dra_allocator_schedule_where(dra_allocator *a,
                                     const dra_alloc_claim *const *claims, size_t nclaims,
                                     dra_alloc_node_filter filter, void *ud,
                                     dra_alloc_outcome *out, dra_diag *d);

/* Explains why |claims| cannot all be allocated on one node, across all
 * nodes, without searching: for a caller that already tried the nodes
 * (a scheduler, with explanations off so that nodes that fail cost no
 * explanation each). The same explanation as dra_allocator_schedule's
 * DRA_EUNSAT with explanations on, whatever |opts.explain| says: returns
 * DRA_EUNSAT with |out->explanation| and |out->why| filled (the text
 * also in |d|); for a missing class or a selector that does not compile
 * that error (DRA_ENOTFOUND, DRA_EPARSE, ...) with every request
 * explained; DRA_ENOMEM. */
dra_err dra_allocator_explain(dra_allocator *a, const dra_alloc_claim *const *claims,
                              size_t nclaims, dra_alloc_outcome *out, dra_diag *d);

/* Mark every device of a successful outcome in use (the scheduler's
 * Reserve). Unmarks it all again with dra_allocator_release. */
dra_err dra_allocator_commit(dra_allocator *a, const dra_alloc_outcome *o);
dra_err dra_allocator_release(dra_allocator *a, const dra_alloc_outcome *o);

/* Statistics for benchmarks. */
typedef struct dra_alloc_stats {
    size_t pools, slices, devices, nodes;
    size_t selector_programs, selector_evals;
    size_t arena_bytes;
    int any_nonlocal;  /* some devices are not local to one node (once indexed) */
    int any_shareable; /* some devices allow multiple allocations */
} dra_alloc_stats;
void dra_allocator_stats(const dra_allocator *a, dra_alloc_stats *st);

/* Per-node device counts, for scoring: the devices local to |node|
 * (their slice's or their own nodeName) in usable pools, and how many of
 * them no allocation uses exclusively. Indexes the inventory first.
 * DRA_OK; DRA_ENOTFOUND for a node the inventory does not know; the
 * errors of dra_allocator_seal. */
dra_err dra_allocator_node_devices(dra_allocator *a, const char *node, int32_t *ntotal,
                                   int32_t *nfree);
/* The node a device is local to (a string the allocator keeps), or NULL
 * for a device that is not node-local or not in the inventory. */
const char *dra_allocator_device_node(dra_allocator *a, const char *driver, const char *pool,
                                      const char *device);

/* Helpers. dra_alloc_attr_lookup finds a device attribute by fully
 * qualified name (a bare name in the slice belongs to |driver|'s domain);
 * NULL when absent. */
const dra_cel_attr *dra_alloc_attr_lookup(const char *driver, const dra_alloc_device *dev,
                                          const char *qualified);
/* Whether |sel| matches a node with |name| and |labels|. */
int dra_alloc_node_selector_match(const dra_alloc_node_selector *sel, const char *name,
                                  const dra_alloc_label *labels, size_t nlabels);

/* ---- adapter: typed API objects <-> the model (src/alloc/from_api.c) ------
 * Everything built lives in |ar| and borrows strings, quantities and
 * opaque parameters from the API objects, which must outlive it. All
 * return DRA_OK, DRA_ENOMEM, or DRA_EINVAL with a message naming the
 * object and field in |d| (an unknown node-selector operator, a bad
 * semver attribute, a missing field). */
dra_err dra_alloc_slice_from_api(dra_arena *ar, const dra_object *slice,
                                 dra_alloc_slice **out, dra_diag *d);
dra_err dra_alloc_class_from_api(dra_arena *ar, const dra_object *cls,
                                 dra_alloc_class **out, dra_diag *d);
/* A claim from its metadata and spec (a ResourceClaim's, or one made from
 * a template). Request defaults (count 1, ExactCount) apply. */
dra_err dra_alloc_claim_from_api(dra_arena *ar, const dra_object_meta *meta,
                                 const dra_claim_spec *spec, dra_alloc_claim **out,
                                 dra_diag *d);
/* A core/v1 NodeSelector (from a slice, device or allocation result) in
 * the model; *out is NULL when |in| is NULL. */
dra_err dra_alloc_node_selector_from_api(dra_arena *ar, const dra_node_selector *in,
                                         const dra_alloc_node_selector **out, dra_diag *d);
/* A Node's labels as a model label array. */
dra_err dra_alloc_labels_from_api(dra_arena *ar, const dra_object *node,
                                  dra_alloc_label **labels, size_t *n);
/* Mark (or with |sign| < 0 unmark) every device of an existing
 * allocation in use. */
dra_err dra_alloc_mark_api(dra_allocator *a, const dra_allocation_result *res, int sign);
/* Feed every ResourceSlice, DeviceClass and Node of |objs| into |a|
 * (model structs built in |ar|), then mark the devices of every
 * ResourceClaim that has status.allocation in use. Other kinds are
 * skipped. Errors as above, plus those of dra_allocator_add_slice. */
dra_err dra_alloc_load_api(dra_allocator *a, dra_arena *ar, dra_object *const *objs,
                           size_t n, dra_diag *d);
/* status.allocation for one claim of an outcome, as Kubernetes writes it.
 * Strings and lists are copied into |ar|, so the result outlives the
 * outcome; the opaque config parameters stay borrowed from the class or
 * claim. */
dra_err dra_alloc_result_to_api(dra_arena *ar, const dra_alloc_claim_result *cr,
                                dra_allocation_result **out);

#ifdef __cplusplus
}
#endif
#endif
