/*
 * alloc_int.h: the allocator's internal model. inventory.c indexes slices
 * into pools, devices and per-node candidate lists; search.c runs the
 * depth-first search over it; result.c turns a found placement into
 * AllocationResults; explain.c says why a claim does not fit.
 */
#ifndef DRA_ALLOC_INT_H
#define DRA_ALLOC_INT_H

#include "dra/alloc.h"

/* Quantities inside the allocator are exact integers in nano units
 * (value * 10^9), so the hot path adds and compares plain integers. */
typedef __int128 a_qn;
#define A_QN_MAX ((a_qn)(((unsigned __int128)1 << 126) - 1))

a_qn alloc_qn(const dra_quantity *q) DRA_HIDDEN;
dra_quantity alloc_qty(a_qn v, dra_quantity_format f) DRA_HIDDEN;

typedef enum a_loc { A_LOC_NODE, A_LOC_SELECTOR, A_LOC_ALL } a_loc;

typedef struct a_cons {
    uint32_t counter; /* index into a->counters */
    a_qn amount;
} a_cons;

typedef struct a_counter {
    const char *set, *name;
    a_qn total;
    a_qn used; /* by committed allocations */
    a_qn att;  /* by the current attempt */
} a_counter;

/* A device capacity in nano units, converted once when the inventory is
 * indexed (a device's quantities never change while the index lives), so
 * the capacity checks of the search and the explanations compare plain
 * integers. |pol| holds the request policy's values, NULL without one. */
typedef struct a_pol {
    a_qn def, min, max, step;
    const a_qn *valid; /* validValues, ascending */
} a_pol;

typedef struct a_cap {
    a_qn value;
    const a_pol *pol;
} a_cap;

typedef struct a_dev {
    const dra_alloc_device *d;
    const dra_alloc_slice *s;
    uint32_t pool;
    int32_t node;   /* node index when node-local, else -1 */
    a_loc loc;
    const dra_alloc_node_selector *sel; /* A_LOC_SELECTOR */
    int multi;
    int tainted;    /* has a NoSchedule or NoExecute taint */
    int32_t excl;   /* committed exclusive users */
    int32_t shares; /* committed shares (multi devices) */
    a_cons *cons;
    uint32_t ncons;
    a_cap *caps;    /* per capacity, d->caps converted */
    a_qn *cap_used; /* per capacity, committed (multi devices only, else NULL) */
    a_qn *cap_att;  /* per capacity, this attempt (multi devices only) */
    /* Selector results: program ids below 64 in two bit sets (known,
     * true), the rest in |selc| (0 unknown, 1 false, 2 true). Errors are
     * not kept: they are evaluated again for their message. */
    uint64_t sel_known, sel_true;
    uint8_t *selc;
    uint32_t nselc;
    void *prepared;
    int prepared_ok;
    int32_t att_claim;  /* claim index holding it in this attempt, -1 */
    int32_t att_shares; /* shares taken in this attempt */
} a_dev;

typedef enum a_pool_state { A_POOL_OK, A_POOL_INCOMPLETE, A_POOL_INVALID } a_pool_state;

typedef struct a_pool {
    const char *driver, *name;
    int64_t gen, expected;
    const dra_alloc_slice **slices; /* at generation |gen|, sorted by name */
    size_t nslices;
    a_pool_state state;
    const char *why; /* invalid (or incomplete) reason */
    const char **sets; /* counter-set names of the pool, empty sets included */
    size_t nsets;
    int binding;     /* has devices with binding conditions */
    int global;      /* has slices not bound to one node */
    uint32_t dev_begin, dev_end;
    uint32_t ctr_begin, ctr_end;
} a_pool;

typedef struct a_node {
    const char *name;
    const dra_alloc_label *labels;
    size_t nlabels;
    uint32_t *lpools; /* pools with slices local to this node, sorted */
    size_t nlpools, caplpools;
    int view_built;
    uint32_t *view;   /* candidate devices, in search order */
    size_t nview;
    uint32_t *vpools; /* pools visible here (including unusable ones) */
    size_t nvpools;
    int32_t total_local; /* node-local devices in usable pools */
    int32_t free_local;  /* those not exclusively used */
    size_t rank;        /* position in name order */
    int32_t idx;        /* position in a->nodes */
} a_node;

/* Distinct footprints kept per program: beyond this many (a selector on
 * a value every device has its own of, such as a uuid) devices are
 * evaluated one by one, as without the cache. */
#define A_FP_MAX 4096

typedef struct a_prog {
    const char *expr;
    void *prog;
    dra_err err;
    const char *msg;
    int driver_only; /* never names attributes, capacity or allowMultipleAllocations */
    void *why;       /* explain_sel.c: its terms, built on first use */
    /* The device values it reads, when that is a fixed list (nreads >=
     * 0; -1: it may read anything). Then results are also cached per
     * footprint, the values read (absent ones too), in |fp|: key -> 1
     * false, 2 true; so identical devices cost one evaluation. */
    const dra_cel_read *reads;
    long nreads;
    dra_map fp;      /* key -> (ordinal + 1) << 2 | (result + 1) */
    uint32_t *devfp; /* per device: its footprint's ordinal + 1, 0 unknown */
} a_prog;

/* Results of driver-only programs depend on the driver alone, so they are
 * evaluated once per driver on a device with nothing but the driver. */
typedef struct a_drv {
    dra_alloc_device dummy;
    const char *driver;
    void *prepared;
    int prepared_ok;
    uint8_t *selc;
    uint32_t nselc;
} a_drv;

struct dra_allocator {
    const dra_mem *mem;
    dra_alloc_options opts;
    dra_alloc_selector_ops ops;
    void *cel_ud; /* default backend state */
    dra_arena arena;
    /* inputs */
    const dra_alloc_slice **in_slices;
    size_t nin_slices, capin_slices;
    dra_map classes; /* name -> const dra_alloc_class * */
    dra_map node_by_name; /* name -> a_node * */
    a_node **nodes;
    size_t nnodes, capnodes;
    a_node **sorted; /* by name */
    /* index */
    int sealed;
    a_pool *pools;
    size_t npools;
    a_dev *devs;
    size_t ndevs;
    a_counter *counters;
    size_t ncounters;
    dra_map dev_by_key; /* "driver\0pool\0device" -> a_dev * */
    uint32_t *global_pools;
    size_t nglobal_pools;
    int any_multi;
    int32_t shared_free; /* non-node-local devices not exclusively used */
    int32_t *tree;       /* max-segment tree over sorted nodes' free_local */
    size_t treen;
    /* selectors */
    dra_map prog_by_expr; /* expr -> (id + 1) */
    dra_map drv; /* driver -> a_drv * */
    a_prog *progs;
    size_t nprogs, capprogs;
    size_t evals;
    uint64_t share_seq;
    /* Scheduling memo: for a claim shape, the first node (rank) that may
     * fit. Valid while |epoch| is unchanged; anything that can make room
     * (an unmark, a class change) bumps the epoch. Placing devices only
     * takes room away, so a node that failed keeps failing until then. */
    uint64_t epoch;
    dra_map memo; /* shape key -> a_memo * */
    dra_buf keybuf;
    dra_buf fpbuf; /* footprint keys (select.c) */
};

typedef struct a_memo {
    uint64_t epoch;
    size_t cursor;
} a_memo;

/* inventory.c */
dra_err alloc_seal(dra_allocator *a, dra_diag *d) DRA_HIDDEN;
a_node *alloc_node_get(dra_allocator *a, const char *name, int create) DRA_HIDDEN;
dra_err alloc_node_view(dra_allocator *a, a_node *n) DRA_HIDDEN;
int alloc_dev_matches_node(const dra_allocator *a, const a_dev *v, const a_node *n) DRA_HIDDEN;
void alloc_tree_update(dra_allocator *a, const a_node *n) DRA_HIDDEN;
/* First node (rank order) at or after |from| with free_local >= |k|, or
 * a->nnodes. */
size_t alloc_tree_find(const dra_allocator *a, size_t from, int32_t k) DRA_HIDDEN;
const char *alloc_dev_key(dra_arena *ar, const char *driver, const char *pool,
                          const char *dev, size_t *len) DRA_HIDDEN;

/* select.c: selector programs and the per-device result cache */
/* The footprint of device |v| for program |id| (the values it reads) as a
 * key in |b|; 0 when the program's reads are not a fixed list (or out of
 * memory: b->oom). */
int alloc_fp_key(dra_allocator *a, uint32_t id, const a_dev *v, dra_buf *b) DRA_HIDDEN;
/* The footprint of device |v| for program |id| as a number (1 + the order
 * it was first seen in), once the device was evaluated through the
 * footprint cache; 0 when not known. Equal numbers: equal footprints. */
uint32_t alloc_fp_ordinal(const dra_allocator *a, uint32_t id, const a_dev *v) DRA_HIDDEN;
/* 1 when program |inner|'s reads are a fixed list and all among |outer|'s. */
int alloc_reads_within(const dra_allocator *a, uint32_t inner, uint32_t outer) DRA_HIDDEN;
/* 1 when |outer| reads attribute or capacity (|cap|) |domain|/|id|, or,
 * with |domain| NULL, the driver (|cap| 0) or the sharing flag (1). */
int alloc_reads_has(const dra_allocator *a, uint32_t outer, int cap, const char *domain,
                    const char *id) DRA_HIDDEN;
dra_err alloc_prog_id(dra_allocator *a, const char *expr, uint32_t *id) DRA_HIDDEN;
/* 1 selected, 0 not, <0 an error (message in |d|). */
int alloc_prog_eval(dra_allocator *a, uint32_t id, a_dev *v, dra_diag *d) DRA_HIDDEN;
dra_err alloc_cel_backend(dra_allocator *a) DRA_HIDDEN;
void alloc_cel_backend_free(dra_allocator *a) DRA_HIDDEN;
void alloc_selectors_fini(dra_allocator *a) DRA_HIDDEN;
void alloc_drivers_fini(dra_allocator *a) DRA_HIDDEN;

/* ---- search state (search.c, result.c, explain.c) ------------------------ */

typedef struct s_alt {
    const dra_alloc_devreq *r;
    const dra_alloc_class *cls;
    const char *name; /* "req" or "req/sub" */
    uint32_t *sel;    /* class selectors, then the request's */
    size_t nsel, nclass_sel;
    int64_t count;
    uint32_t *all; /* All mode: the devices it must take */
    a_qn *capreq;  /* per cap_requests entry */
    const char *broken; /* explaining: why it cannot be tried (no class, bad selector) */
} s_alt;

typedef struct s_req {
    uint32_t claim;
    const dra_alloc_request *r;
    s_alt *alts;
    size_t nalts;
    size_t chosen;
} s_req;

typedef struct s_con {
    const dra_alloc_constraint *c;
    const char *attr;
    int distinct;
    size_t count;
    const dra_cel_attr **vals; /* values of the devices added, a stack */
} s_con;

typedef struct s_place {
    uint32_t dev, req, alt;
    int admin, shared, charged;
    uint32_t cons_mask; /* constraints of the claim this device was added to */
    a_qn *consumed;     /* per device capacity (multi devices) */
} s_place;

typedef struct s_state {
    dra_allocator *a;
    a_node *node; /* NULL: explaining across all nodes */
    const dra_alloc_claim *const *claims;
    size_t nclaims;
    dra_arena *ar;
    s_req *reqs;
    size_t nreqs;
    uint32_t *claim_req0; /* first request of each claim, plus nreqs */
    s_con *cons;
    uint32_t *claim_con0; /* first constraint of each claim, plus ncons */
    size_t ncons;
    s_place *pl;
    size_t npl, cappl;
    size_t *claim_nres;
    uint64_t steps;
    dra_err err; /* set with S_ERR */
    dra_diag *d;
    /* Explaining: a missing class or a selector that does not compile
     * marks its alternative broken and sets |fatal| instead of stopping
     * the pre-pass, so every other request is still explained. */
    int lenient;
    dra_err fatal;
} s_state;

/* search.c: the individual checks, shared with explain.c */
int alloc_tolerated(const a_dev *v, const dra_alloc_devreq *r) DRA_HIDDEN;
/* 1 when the device has room for the request's capacity; fills
 * |consumed| (per device capacity) when not NULL. */
int alloc_cap_fit(const a_dev *v, const s_alt *alt, a_qn *consumed) DRA_HIDDEN;
/* 1 when the device could hold the request were none of its capacity in
 * use: names present, policy satisfied, amount within the total. */
int alloc_cap_fit_total(const a_dev *v, const s_alt *alt) DRA_HIDDEN;
int alloc_counters_fit(const dra_allocator *a, const a_dev *v) DRA_HIDDEN;
const char *alloc_claim_name(dra_arena *ar, const dra_alloc_claim *c) DRA_HIDDEN;

int alloc_sel_eval(dra_allocator *a, dra_arena *ar, const dra_alloc_claim *cl,
                   const s_alt *alt, size_t k, a_dev *v, dra_diag *d) DRA_HIDDEN;

/* result.c */
dra_err alloc_build_results(s_state *S, dra_alloc_outcome *out) DRA_HIDDEN;

/* explain_sel.c: appends to |b| why program |id| is false on |v|, in
 * words ("memory is 189471Mi, needs more than 200Gi"). DRA_OK, DRA_ENOMEM. */
dra_err alloc_sel_why(dra_allocator *a, uint32_t id, a_dev *v, dra_buf *b) DRA_HIDDEN;
/* 1 when those words depend only on the values program |id| reads (its
 * terms' results and the values shown are all among them), so devices
 * with the same footprint get the same words; 0 otherwise or on ENOMEM. */
int alloc_sel_why_fixed(dra_allocator *a, uint32_t id) DRA_HIDDEN;

/* explain.c */
dra_err alloc_explain(s_state *S, dra_alloc_outcome *out) DRA_HIDDEN;

#endif
