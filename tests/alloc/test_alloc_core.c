/* Allocator core tests on hand-built inventories with the test selector
 * backend (no CEL): placement, backtracking, alternatives, All mode,
 * counters, scheduling across nodes, bounds, cancellation and a
 * failmalloc loop. The YAML scenario table (test_alloc_table.c) covers
 * the semantics in breadth through the API adapter. */
#include "dra_test.h"

#include "dra/alloc.h"
#include "test_selectors.h"

#define NDEV 8

typedef struct inv {
    dra_cel_attr attrs[NDEV][2];
    dra_alloc_device devs[NDEV];
    dra_alloc_slice slice;
    char names[NDEV][16];
} inv;

/* A node-local slice with |n| GPUs; attribute "root" is "A" for the
 * first |na| devices and "B" for the rest; "index" is the position. */
static void mkinv(inv *v, const char *node, const char *pool, int n, int na)
{
    memset(v, 0, sizeof *v);
    for (int i = 0; i < n; i++) {
        snprintf(v->names[i], sizeof v->names[i], "gpu-%d", i);
        v->attrs[i][0].name = "root";
        v->attrs[i][0].kind = DRA_CEL_ATTR_STRING;
        v->attrs[i][0].s = i < na ? "A" : "B";
        v->attrs[i][1].name = "gpu.example.com/index";
        v->attrs[i][1].kind = DRA_CEL_ATTR_INT;
        v->attrs[i][1].i = i;
        v->devs[i].name = v->names[i];
        v->devs[i].attrs = v->attrs[i];
        v->devs[i].nattrs = 2;
    }
    v->slice.name = pool;
    v->slice.driver = "gpu.example.com";
    v->slice.pool = pool;
    v->slice.slice_count = 1;
    v->slice.node_name = node;
    v->slice.devices = v->devs;
    v->slice.ndevices = (size_t)n;
}

static const char *gpu_sel[] = {"driver=gpu.example.com"};
static const dra_alloc_class gpu_class = {"gpu", gpu_sel, 1, NULL, 0};

static dra_allocator *mkalloc(const dra_mem *mem, uint64_t max_steps)
{
    dra_alloc_options o;
    dra_allocator *a = NULL;
    memset(&o, 0, sizeof o);
    o.selectors = &test_selector_ops;
    o.max_steps = max_steps;
    o.explain = 1;
    if (dra_allocator_new(mem, &o, &a) != DRA_OK)
        return NULL;
    if (dra_allocator_add_class(a, &gpu_class) != DRA_OK) {
        dra_allocator_free(a);
        return NULL;
    }
    return a;
}

static dra_alloc_claim one_req(dra_alloc_request *r, const char *name, int64_t count)
{
    dra_alloc_claim c;
    memset(r, 0, sizeof *r);
    memset(&c, 0, sizeof c);
    r->name = "gpu";
    r->exactly.class_name = "gpu";
    r->exactly.count = count;
    c.namespace_ = "default";
    c.name = name;
    c.requests = r;
    c.nrequests = 1;
    return c;
}

static void test_simple(void **state)
{
    inv v;
    dra_alloc_request r;
    dra_alloc_claim c = one_req(&r, "c1", 1);
    const dra_alloc_claim *cp = &c;
    dra_alloc_outcome o;
    dra_allocator *a = mkalloc(NULL, 0);
    (void)state;
    mkinv(&v, "node-1", "pool-1", 2, 2);
    assert_int_equal(dra_allocator_add_slice(a, &v.slice, NULL), DRA_OK);
    dra_alloc_outcome_init(&o, NULL);
    assert_int_equal(dra_allocator_allocate(a, "node-1", &cp, 1, &o, NULL), DRA_OK);
    assert_int_equal(o.nclaims, 1);
    assert_int_equal(o.claims[0].nresults, 1);
    assert_string_equal(o.claims[0].results[0].device, "gpu-0");
    assert_string_equal(o.claims[0].results[0].request, "gpu");
    assert_non_null(o.claims[0].node_selector);
    assert_string_equal(o.claims[0].node_selector->terms[0].fields[0].key, "metadata.name");
    assert_string_equal(o.claims[0].node_selector->terms[0].fields[0].values[0], "node-1");
    /* Committed devices are not handed out again. */
    assert_int_equal(dra_allocator_commit(a, &o), DRA_OK);
    assert_int_equal(dra_allocator_allocate(a, "node-1", &cp, 1, &o, NULL), DRA_OK);
    assert_string_equal(o.claims[0].results[0].device, "gpu-1");
    assert_int_equal(dra_allocator_commit(a, &o), DRA_OK);
    assert_int_equal(dra_allocator_allocate(a, "node-1", &cp, 1, &o, NULL), DRA_EUNSAT);
    assert_non_null(o.explanation);
    assert_non_null(strstr(o.explanation, "2 are already allocated"));
    /* Another node sees nothing. */
    assert_int_equal(dra_allocator_allocate(a, "node-2", &cp, 1, &o, NULL), DRA_EUNSAT);
    assert_non_null(strstr(o.explanation, "not available on this node"));
    dra_alloc_outcome_fini(&o);
    dra_allocator_free(a);
}

/* 8 GPUs, 3 on root A and 5 on B; 4 with matchAttribute root must all
 * come from B, which needs backtracking past A. */
/* Result device names point into the inventory, which lives on this
 * stack frame: the first and last are copied out into |got|. */
static dra_err run_match(const dra_mem *mem, uint64_t max_steps, dra_alloc_outcome *o,
                         char got[2][16])
{
    inv v;
    dra_alloc_request r;
    dra_alloc_claim c = one_req(&r, "c1", 4);
    const dra_alloc_claim *cp = &c;
    const char *reqs[] = {"gpu"};
    dra_alloc_constraint con = {reqs, 1, "gpu.example.com/root", NULL};
    dra_allocator *a = mkalloc(mem, max_steps);
    dra_err err;
    if (!a)
        return DRA_ENOMEM;
    c.constraints = &con;
    c.nconstraints = 1;
    mkinv(&v, "node-1", "pool-1", 8, 3);
    err = dra_allocator_add_slice(a, &v.slice, NULL);
    if (err == DRA_OK)
        err = dra_allocator_allocate(a, "node-1", &cp, 1, o, NULL);
    if (err == DRA_OK && got) {
        snprintf(got[0], 16, "%s", o->claims[0].results[0].device);
        snprintf(got[1], 16, "%s", o->claims[0].results[o->claims[0].nresults - 1].device);
    }
    dra_allocator_free(a);
    return err;
}

static void test_match_attribute_backtrack(void **state)
{
    dra_alloc_outcome o;
    char got[2][16];
    (void)state;
    dra_alloc_outcome_init(&o, NULL);
    assert_int_equal(run_match(NULL, 0, &o, got), DRA_OK);
    assert_int_equal(o.claims[0].nresults, 4);
    assert_string_equal(got[0], "gpu-3");
    assert_string_equal(got[1], "gpu-6");
    /* The bound stops the search with an error, not a wrong answer. */
    assert_int_equal(run_match(NULL, 5, &o, NULL), DRA_ELIMIT);
    dra_alloc_outcome_fini(&o);
}

/* Selector results are cached per footprint, the values a selector
 * reads: devices that agree there share one evaluation, devices that
 * differ get their own (a cache that ignored the values would give all
 * 8 GPUs the first one's answer). */
static const char *root_b_sel[] = {"attr:gpu.example.com/root=B"};
static const char *index6_sel[] = {"attr:gpu.example.com/index=6"};
static const char *bare_sel[] = {"attr:root=B"};

static const char *first_device(dra_allocator *a, const char *cls, int64_t count,
                                dra_alloc_outcome *o, dra_err want)
{
    dra_alloc_request r;
    dra_alloc_claim c = one_req(&r, "c1", count);
    const dra_alloc_claim *cp = &c;
    r.exactly.class_name = cls;
    assert_int_equal(dra_allocator_allocate(a, "node-1", &cp, 1, o, NULL), want);
    return want == DRA_OK ? o->claims[0].results[0].device : NULL;
}

static void test_selector_footprints(void **state)
{
    const dra_alloc_class root_b = {"root-b", root_b_sel, 1, NULL, 0};
    const dra_alloc_class index6 = {"index-6", index6_sel, 1, NULL, 0};
    const dra_alloc_class bare = {"bare", bare_sel, 1, NULL, 0};
    dra_alloc_selector_ops ops = test_selector_ops;
    dra_alloc_options opt;
    dra_alloc_outcome o;
    dra_allocator *a = NULL;
    long evals = 0;
    inv v;
    (void)state;
    ops.ud = &evals;
    memset(&opt, 0, sizeof opt);
    opt.selectors = &ops;
    opt.explain = 1;
    assert_int_equal(dra_allocator_new(NULL, &opt, &a), DRA_OK);
    assert_int_equal(dra_allocator_add_class(a, &root_b), DRA_OK);
    assert_int_equal(dra_allocator_add_class(a, &index6), DRA_OK);
    assert_int_equal(dra_allocator_add_class(a, &bare), DRA_OK);
    mkinv(&v, "node-1", "pool-1", 8, 5); /* root A: gpu-0..4, B: gpu-5..7 */
    assert_int_equal(dra_allocator_add_slice(a, &v.slice, NULL), DRA_OK);
    dra_alloc_outcome_init(&o, NULL);

    /* The bare "root" is the driver's domain: one evaluation per value. */
    assert_string_equal(first_device(a, "root-b", 3, &o, DRA_OK), "gpu-5");
    assert_string_equal(o.claims[0].results[2].device, "gpu-7");
    assert_int_equal(evals, 2);
    /* Asked again, or explained: the devices keep their results. */
    assert_string_equal(first_device(a, "root-b", 3, &o, DRA_OK), "gpu-5");
    first_device(a, "root-b", 4, &o, DRA_EUNSAT);
    assert_non_null(strstr(o.explanation, "all 3 devices of class root-b on this node fit, 4 needed"));
    assert_int_equal(evals, 2);

    /* A value every device has its own of: one evaluation per device. */
    assert_string_equal(first_device(a, "index-6", 1, &o, DRA_OK), "gpu-6");
    assert_int_equal(evals, 2 + 7);

    /* Reads the backend cannot list (a bare name's domain is the
     * driver's): evaluated device by device. */
    assert_string_equal(first_device(a, "bare", 1, &o, DRA_OK), "gpu-5");
    assert_int_equal(evals, 2 + 7 + 6);

    /* A new allocator (an inventory that changed): nothing carried over. */
    dra_allocator_free(a);
    evals = 0;
    assert_int_equal(dra_allocator_new(NULL, &opt, &a), DRA_OK);
    assert_int_equal(dra_allocator_add_class(a, &root_b), DRA_OK);
    v.attrs[5][0].s = "A";
    v.attrs[1][0].s = "B";
    assert_int_equal(dra_allocator_add_slice(a, &v.slice, NULL), DRA_OK);
    assert_string_equal(first_device(a, "root-b", 3, &o, DRA_OK), "gpu-1");
    assert_string_equal(o.claims[0].results[1].device, "gpu-6");
    assert_int_equal(evals, 2);
    dra_alloc_outcome_fini(&o);
    dra_allocator_free(a);
}

static void test_failmalloc(void **state)
{
    (void)state;
    for (long n = 0;; n++) {
        dra_failmem fm;
        dra_alloc_outcome o;
        dra_err err;
        dra_failmem_init(&fm, n);
        dra_alloc_outcome_init(&o, &fm.mem);
        err = run_match(&fm.mem, 0, &o, NULL);
        dra_alloc_outcome_fini(&o);
        assert_int_equal(fm.live, 0);
        if (!fm.failed) {
            assert_int_equal(err, DRA_OK);
            break;
        }
        assert_int_equal(err, DRA_ENOMEM);
    }
}


/* A richer run for the failmalloc loop: shared counters, a shared device
 * with capacity, firstAvailable, a constraint, scheduling, commit, an
 * explained failure and release. */
static dra_err run_rich(const dra_mem *mem)
{
    inv v;
    dra_alloc_counter total = {"mem", {0}}, use = {"mem", {0}};
    dra_alloc_counter_set set = {"cs", &total, 1}, cons = {"cs", &use, 1};
    dra_alloc_slice ctr;
    dra_alloc_capacity cap;
    dra_alloc_devreq subs[2];
    dra_alloc_request r[2];
    dra_alloc_claim c;
    const dra_alloc_claim *cp = &c;
    const char *reqs[] = {"gpu"};
    dra_alloc_constraint con = {reqs, 1, "gpu.example.com/root", NULL};
    dra_alloc_outcome o;
    dra_allocator *a = mkalloc(mem, 0);
    dra_err err;
    if (!a)
        return DRA_ENOMEM;
    total.value = dra_quantity_from_int64(3, DRA_QTY_DECIMAL_SI);
    use.value = dra_quantity_from_int64(1, DRA_QTY_DECIMAL_SI);
    memset(&cap, 0, sizeof cap);
    cap.name = "bw";
    cap.value = dra_quantity_from_int64(10, DRA_QTY_DECIMAL_SI);
    mkinv(&v, "node-1", "pool-1", 6, 3);
    v.slice.slice_count = 2;
    for (int i = 0; i < 6; i++) {
        v.devs[i].consumes = &cons;
        v.devs[i].nconsumes = 1;
    }
    v.devs[5].allow_multiple_allocations = 1;
    v.devs[5].caps = &cap;
    v.devs[5].ncaps = 1;
    memset(&ctr, 0, sizeof ctr);
    ctr.name = "counters";
    ctr.driver = "gpu.example.com";
    ctr.pool = "pool-1";
    ctr.slice_count = 2;
    ctr.node_name = "node-1";
    ctr.shared_counters = &set;
    ctr.nshared_counters = 1;
    memset(subs, 0, sizeof subs);
    memset(r, 0, sizeof r);
    memset(&c, 0, sizeof c);
    subs[0].name = "four";
    subs[0].class_name = "gpu";
    subs[0].count = 4;
    subs[1].name = "two";
    subs[1].class_name = "gpu";
    subs[1].count = 2;
    r[0].name = "gpu";
    r[0].first_available = subs;
    r[0].nfirst_available = 2;
    r[1].name = "shared";
    r[1].exactly.class_name = "gpu";
    c.name = "rich";
    c.requests = r;
    c.nrequests = 2;
    c.constraints = &con;
    c.nconstraints = 1;
    dra_alloc_outcome_init(&o, mem);
    if ((err = dra_allocator_add_slice(a, &v.slice, NULL)) != DRA_OK ||
        (err = dra_allocator_add_slice(a, &ctr, NULL)) != DRA_OK)
        goto out;
    if ((err = dra_allocator_schedule(a, &cp, 1, &o, NULL)) != DRA_OK)
        goto out;
    if (o.claims[0].nresults != 3 || strcmp(o.claims[0].results[0].request, "gpu/two") != 0) {
        err = DRA_EINVAL;
        goto out;
    }
    if ((err = dra_allocator_commit(a, &o)) != DRA_OK)
        goto out;
    /* The counters are used up now: explained on every node. */
    err = dra_allocator_schedule(a, &cp, 1, &o, NULL);
    if (err == DRA_EUNSAT)
        err = o.explanation && strstr(o.explanation, "shared counters") ? DRA_OK : DRA_EINVAL;
out:
    dra_alloc_outcome_fini(&o);
    dra_allocator_free(a);
    return err;
}

static void test_rich_and_failmalloc(void **state)
{
    (void)state;
    assert_int_equal(run_rich(NULL), DRA_OK);
    for (long n = 0;; n++) {
        dra_failmem fm;
        dra_err err;
        dra_failmem_init(&fm, n);
        err = run_rich(&fm.mem);
        assert_int_equal(fm.live, 0);
        if (!fm.failed) {
            assert_int_equal(err, DRA_OK);
            break;
        }
        assert_int_equal(err, DRA_ENOMEM);
    }
}

/* An allocation that ran out of memory leaves the allocator usable: the
 * same call succeeds once memory is back, with the same answer. */
static void test_retry_after_enomem(void **state)
{
    (void)state;
    for (long n = 0;; n++) {
        dra_failmem fm;
        inv v;
        dra_alloc_request r;
        dra_alloc_claim c = one_req(&r, "c1", 4);
        const dra_alloc_claim *cp = &c;
        const char *reqs[] = {"gpu"};
        dra_alloc_constraint con = {reqs, 1, "gpu.example.com/root", NULL};
        dra_alloc_outcome o;
        dra_allocator *a;
        dra_err err;
        dra_failmem_init(&fm, -1);
        a = mkalloc(&fm.mem, 0);
        assert_non_null(a);
        c.constraints = &con;
        c.nconstraints = 1;
        mkinv(&v, "node-1", "pool-1", 8, 3);
        assert_int_equal(dra_allocator_add_slice(a, &v.slice, NULL), DRA_OK);
        dra_alloc_outcome_init(&o, &fm.mem);
        fm.fail_after = fm.allocs + n;
        err = dra_allocator_schedule(a, &cp, 1, &o, NULL);
        fm.fail_after = -1;
        if (err == DRA_ENOMEM)
            err = dra_allocator_schedule(a, &cp, 1, &o, NULL);
        assert_int_equal(err, DRA_OK);
        assert_int_equal(o.claims[0].nresults, 4);
        assert_string_equal(o.claims[0].results[0].device, "gpu-3");
        dra_alloc_outcome_fini(&o);
        dra_allocator_free(a);
        assert_int_equal(fm.live, 0);
        if (!fm.failed)
            break;
    }
}

static void test_first_available(void **state)
{
    inv v;
    dra_alloc_devreq subs[2];
    dra_alloc_request r;
    dra_alloc_claim c;
    const dra_alloc_claim *cp = &c;
    dra_alloc_outcome o;
    dra_allocator *a = mkalloc(NULL, 0);
    (void)state;
    memset(subs, 0, sizeof subs);
    memset(&r, 0, sizeof r);
    memset(&c, 0, sizeof c);
    subs[0].name = "big";
    subs[0].class_name = "gpu";
    subs[0].count = 3;
    subs[1].name = "small";
    subs[1].class_name = "gpu";
    subs[1].count = 1;
    r.name = "gpu";
    r.first_available = subs;
    r.nfirst_available = 2;
    c.name = "c";
    c.requests = &r;
    c.nrequests = 1;
    mkinv(&v, "node-1", "pool-1", 2, 2);
    assert_int_equal(dra_allocator_add_slice(a, &v.slice, NULL), DRA_OK);
    dra_alloc_outcome_init(&o, NULL);
    assert_int_equal(dra_allocator_allocate(a, "node-1", &cp, 1, &o, NULL), DRA_OK);
    assert_int_equal(o.claims[0].nresults, 1);
    assert_string_equal(o.claims[0].results[0].request, "gpu/small");
    dra_alloc_outcome_fini(&o);
    dra_allocator_free(a);
}

static void test_all_mode(void **state)
{
    inv v;
    dra_alloc_request r;
    dra_alloc_claim c = one_req(&r, "c", 0);
    const dra_alloc_claim *cp = &c;
    dra_alloc_outcome o;
    dra_alloc_device_result used;
    dra_allocator *a = mkalloc(NULL, 0);
    (void)state;
    r.exactly.mode = DRA_ALLOC_ALL;
    mkinv(&v, "node-1", "pool-1", 5, 2);
    assert_int_equal(dra_allocator_add_slice(a, &v.slice, NULL), DRA_OK);
    dra_alloc_outcome_init(&o, NULL);
    assert_int_equal(dra_allocator_allocate(a, "node-1", &cp, 1, &o, NULL), DRA_OK);
    assert_int_equal(o.claims[0].nresults, 5);
    memset(&used, 0, sizeof used);
    used.driver = "gpu.example.com";
    used.pool = "pool-1";
    used.device = "gpu-4";
    assert_int_equal(dra_allocator_mark(a, &used), DRA_OK);
    assert_int_equal(dra_allocator_allocate(a, "node-1", &cp, 1, &o, NULL), DRA_EUNSAT);
    assert_non_null(strstr(o.explanation, "All mode needs every matching device"));
    /* Admin access ignores the other allocation. */
    r.exactly.admin_access = 1;
    assert_int_equal(dra_allocator_allocate(a, "node-1", &cp, 1, &o, NULL), DRA_OK);
    assert_int_equal(o.claims[0].nresults, 5);
    assert_true(o.claims[0].results[4].admin_access);
    assert_int_equal(dra_allocator_unmark(a, &used), DRA_OK);
    assert_int_equal(dra_allocator_unmark(a, &used), DRA_EINVAL);
    dra_alloc_outcome_fini(&o);
    dra_allocator_free(a);
}

/* Three nodes with one GPU each: claims land on them in name order, then
 * nothing is left and the explanation covers every node. */
static void test_schedule(void **state)
{
    inv v[3];
    const char *nodes[] = {"node-c", "node-a", "node-b"};
    dra_alloc_request r;
    dra_alloc_claim c = one_req(&r, "c", 1);
    const dra_alloc_claim *cp = &c;
    dra_alloc_outcome o;
    dra_allocator *a = mkalloc(NULL, 0);
    (void)state;
    for (int i = 0; i < 3; i++) {
        mkinv(&v[i], nodes[i], nodes[i], 1, 1);
        assert_int_equal(dra_allocator_add_slice(a, &v[i].slice, NULL), DRA_OK);
    }
    dra_alloc_outcome_init(&o, NULL);
    for (int i = 0; i < 3; i++) {
        char want[16];
        snprintf(want, sizeof want, "node-%c", 'a' + i);
        assert_int_equal(dra_allocator_schedule(a, &cp, 1, &o, NULL), DRA_OK);
        assert_string_equal(o.node, want);
        assert_int_equal(dra_allocator_commit(a, &o), DRA_OK);
    }
    assert_int_equal(dra_allocator_schedule(a, &cp, 1, &o, NULL), DRA_EUNSAT);
    assert_non_null(strstr(o.explanation, "on any node"));
    assert_non_null(strstr(o.explanation, "3 are already allocated"));
    dra_alloc_outcome_fini(&o);
    dra_allocator_free(a);
}

static int not_node_a(void *ud, const char *node, const dra_alloc_label *l, size_t n)
{
    (void)ud;
    (void)l;
    (void)n;
    return strcmp(node, "node-a") != 0;
}

/* A filter skips nodes; the memo of the unfiltered shape is not moved by it. */
static void test_schedule_where(void **state)
{
    inv v[2];
    const char *nodes[] = {"node-a", "node-b"};
    dra_alloc_request r;
    dra_alloc_claim c = one_req(&r, "c", 1);
    const dra_alloc_claim *cp = &c;
    dra_alloc_outcome o;
    dra_allocator *a = mkalloc(NULL, 0);
    (void)state;
    for (int i = 0; i < 2; i++) {
        mkinv(&v[i], nodes[i], nodes[i], 1, 1);
        assert_int_equal(dra_allocator_add_slice(a, &v[i].slice, NULL), DRA_OK);
    }
    dra_alloc_outcome_init(&o, NULL);
    assert_int_equal(dra_allocator_schedule_where(a, &cp, 1, not_node_a, NULL, &o, NULL), DRA_OK);
    assert_string_equal(o.node, "node-b");
    assert_int_equal(dra_allocator_schedule(a, &cp, 1, &o, NULL), DRA_OK);
    assert_string_equal(o.node, "node-a");
    assert_int_equal(dra_allocator_commit(a, &o), DRA_OK);
    assert_int_equal(dra_allocator_schedule_where(a, &cp, 1, not_node_a, NULL, &o, NULL), DRA_OK);
    assert_string_equal(o.node, "node-b");
    assert_int_equal(dra_allocator_commit(a, &o), DRA_OK);
    assert_int_equal(dra_allocator_schedule(a, &cp, 1, &o, NULL), DRA_EUNSAT);
    /* Releasing makes room again, and the memo forgets the failure. */
    assert_int_equal(dra_allocator_allocate(a, "node-b", &cp, 1, &o, NULL), DRA_EUNSAT);
    {
        dra_alloc_device_result used;
        memset(&used, 0, sizeof used);
        used.driver = "gpu.example.com";
        used.pool = "node-a";
        used.device = "gpu-0";
        assert_int_equal(dra_allocator_unmark(a, &used), DRA_OK);
    }
    assert_int_equal(dra_allocator_schedule(a, &cp, 1, &o, NULL), DRA_OK);
    assert_string_equal(o.node, "node-a");
    dra_alloc_outcome_fini(&o);
    dra_allocator_free(a);
}

static int cancel_now(void *ud)
{
    return *(int *)ud ? DRA_ETIMEOUT : 0;
}

static void test_cancel_and_errors(void **state)
{
    inv v;
    dra_alloc_request r;
    dra_alloc_claim c = one_req(&r, "c", 5);
    const dra_alloc_claim *cp = &c;
    const char *reqs[] = {"gpu"};
    dra_alloc_constraint con = {reqs, 1, "gpu.example.com/index", NULL};
    const char *bad[] = {"error"};
    dra_alloc_outcome o;
    dra_alloc_options opt;
    dra_allocator *a = NULL;
    dra_diag d;
    int cancel = 1;
    (void)state;
    memset(&opt, 0, sizeof opt);
    opt.selectors = &test_selector_ops;
    opt.cancel = cancel_now;
    opt.cancel_ud = &cancel;
    assert_int_equal(dra_allocator_new(NULL, &opt, &a), DRA_OK);
    assert_int_equal(dra_allocator_add_class(a, &gpu_class), DRA_OK);
    mkinv(&v, "node-1", "pool-1", 8, 8);
    assert_int_equal(dra_allocator_add_slice(a, &v.slice, NULL), DRA_OK);
    /* No five devices share an index: the search runs until cancelled. */
    c.constraints = &con;
    c.nconstraints = 1;
    dra_alloc_outcome_init(&o, NULL);
    dra_diag_init(&d, NULL);
    assert_int_equal(dra_allocator_allocate(a, "node-1", &cp, 1, &o, &d), DRA_ETIMEOUT);
    /* A selector runtime error fails the allocation with its message. */
    cancel = 0;
    c.nconstraints = 0;
    r.exactly.count = 1;
    r.exactly.selectors = bad;
    r.exactly.nselectors = 1;
    dra_diag_clear(&d);
    assert_int_equal(dra_allocator_allocate(a, "node-1", &cp, 1, &o, &d), DRA_EEVAL);
    assert_non_null(strstr(dra_diag_first(&d), "no such key"));
    /* Unknown class. */
    r.exactly.selectors = NULL;
    r.exactly.nselectors = 0;
    r.exactly.class_name = "nope";
    dra_diag_clear(&d);
    assert_int_equal(dra_allocator_allocate(a, "node-1", &cp, 1, &o, &d), DRA_ENOTFOUND);
    assert_non_null(strstr(dra_diag_first(&d), "device class nope does not exist"));
    /* 33 devices is over the claim limit. */
    r.exactly.class_name = "gpu";
    r.exactly.count = 33;
    dra_diag_clear(&d);
    assert_int_equal(dra_allocator_allocate(a, "node-1", &cp, 1, &o, &d), DRA_ELIMIT);
    assert_non_null(strstr(dra_diag_first(&d), "exceeds the claim limit"));
    dra_diag_fini(&d);
    dra_alloc_outcome_fini(&o);
    dra_allocator_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simple),
        cmocka_unit_test(test_match_attribute_backtrack),
        cmocka_unit_test(test_selector_footprints),
        cmocka_unit_test(test_failmalloc),
        cmocka_unit_test(test_rich_and_failmalloc),
        cmocka_unit_test(test_retry_after_enomem),
        cmocka_unit_test(test_first_available),
        cmocka_unit_test(test_all_mode),
        cmocka_unit_test(test_schedule),
        cmocka_unit_test(test_schedule_where),
        cmocka_unit_test(test_cancel_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
