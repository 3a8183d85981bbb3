/* The points where Kubernetes' allocator (1.35, with kubernetes#140769)
 * and dra's once differed, one test each (issue 12), plus explanations
 * that name the cause. Scenarios are YAML in tests/data/alloc/k8s (format:
 * alloc_table.c); the large-cluster explanation is built here in C. */
#include "dra_test.h"

#include "alloc_table.h"
#include "dra/alloc.h"
#include "dra/codec.h"

static void run_points(const char *file)
{
    char path[512];
    size_t count = 0;
    int failed;
    snprintf(path, sizeof path, "%s/alloc/k8s/%s", DRA_TEST_DATA, file);
    failed = alloc_table_run_file(path, &count);
    print_message("%s: %zu scenarios, %d failed\n", file, count, failed);
    assert_int_equal(failed, 0);
    assert_true(count >= 3);
}

/* 1: All mode leaves out devices whose total capacity is too small and
 * fails on matching devices that are merely full. */
static void test_all_mode_capacity(void **state)
{
    (void)state;
    run_points("p1-all-mode-capacity.yaml");
}

/* 2: exactly resourceSliceCount slices at the newest generation. */
static void test_slice_count_exact(void **state)
{
    (void)state;
    run_points("p2-slice-count.yaml");
}

/* 3: invalid pools reported, even with empty counter sets. */
static void test_invalid_pools_reported(void **state)
{
    (void)state;
    run_points("p3-invalid-pools.yaml");
}

/* 4: firstAvailable config of the chosen subrequest only. */
static void test_first_available_config(void **state)
{
    (void)state;
    run_points("p4-first-available-config.yaml");
}

/* 5: CEL errors name class or request and selector, as Kubernetes. */
static void test_cel_error_origin(void **state)
{
    (void)state;
    run_points("p5-cel-runtime-errors.yaml");
}

/* 6: multi-host pools: the newest generation across the pool. */
static void test_multi_host_generations(void **state)
{
    (void)state;
    run_points("p6-multi-host-generations.yaml");
}

/* 7: explanations with the selector's values, grouped, complete. */
static void test_explanations(void **state)
{
    (void)state;
    run_points("p7-explanations.yaml");
}

/* ---- 7 at scale: 5,000 nodes x 8 GPUs, explained in a few lines ---------- */

#define NODES 5000
#define GPUS 8

typedef struct cluster {
    dra_arena ar;
    dra_allocator *a;
} cluster;

/* Half the nodes have GB200s (189471Mi), half H100s (80Gi). */
static void build_cluster(cluster *c, const dra_alloc_options *opt)
{
    dra_quantity big, small;
    assert_int_equal(dra_quantity_parse("189471Mi", 8, &big), DRA_OK);
    assert_int_equal(dra_quantity_parse("80Gi", 4, &small), DRA_OK);
    dra_arena_init(&c->ar, NULL);
    assert_int_equal(dra_allocator_new(NULL, opt, &c->a), DRA_OK);
    for (int n = 0; n < NODES; n++) {
        dra_alloc_slice *s = dra_arena_zalloc(&c->ar, sizeof *s);
        dra_alloc_device *dv = dra_arena_array(&c->ar, GPUS, sizeof *dv);
        char *node = dra_arena_sprintf(&c->ar, "node-%04d", n);
        assert_non_null(s);
        assert_non_null(dv);
        assert_non_null(node);
        for (int g = 0; g < GPUS; g++) {
            dra_cel_attr *at = dra_arena_array(&c->ar, 2, sizeof *at);
            dra_alloc_capacity *cap = dra_arena_array(&c->ar, 1, sizeof *cap);
            assert_non_null(at);
            assert_non_null(cap);
            at[0].name = "type";
            at[0].kind = DRA_CEL_ATTR_STRING;
            at[0].s = "gpu";
            at[1].name = "productName";
            at[1].kind = DRA_CEL_ATTR_STRING;
            at[1].s = n % 2 ? "NVIDIA H100 80GB HBM3" : "NVIDIA GB200";
            cap->name = "memory";
            cap->value = n % 2 ? small : big;
            dv[g].name = dra_arena_sprintf(&c->ar, "gpu-%d", g);
            dv[g].attrs = at;
            dv[g].nattrs = 2;
            dv[g].caps = cap;
            dv[g].ncaps = 1;
        }
        s->name = s->pool = s->node_name = node;
        s->driver = "gpu.nvidia.com";
        s->generation = s->slice_count = 1;
        s->devices = dv;
        s->ndevices = GPUS;
        assert_int_equal(dra_allocator_add_slice(c->a, s, NULL), DRA_OK);
    }
}

static size_t count_lines(const char *s)
{
    size_t n = 1;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* A claim for more than 200Gi on a 40,000-GPU cluster where no GPU has
 * that much: two groups (one per memory size), one sentence in all. */
static void test_explanation_at_scale(void **state)
{
    static const char *const cls_sel[] = {
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"};
    static const char *const req_sel[] = {
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('200Gi')) > 0"};
    dra_alloc_class cls = {"gpu.nvidia.com", cls_sel, 1, NULL, 0};
    dra_alloc_request rq;
    dra_alloc_claim claim;
    const dra_alloc_claim *claims[1] = {&claim};
    dra_alloc_options opt;
    dra_alloc_outcome out;
    dra_diag d;
    cluster c;
    (void)state;
    memset(&opt, 0, sizeof opt);
    opt.explain = 1;
    build_cluster(&c, &opt);
    assert_int_equal(dra_allocator_add_class(c.a, &cls), DRA_OK);
    memset(&rq, 0, sizeof rq);
    rq.name = "gpu";
    rq.exactly.class_name = "gpu.nvidia.com";
    rq.exactly.selectors = req_sel;
    rq.exactly.nselectors = 1;
    memset(&claim, 0, sizeof claim);
    claim.namespace_ = "default";
    claim.name = "big";
    claim.requests = &rq;
    claim.nrequests = 1;
    dra_alloc_outcome_init(&out, NULL);
    dra_diag_init(&d, NULL);
    assert_int_equal(dra_allocator_schedule(c.a, claims, 1, &out, &d), DRA_EUNSAT);
    assert_non_null(out.explanation);
    print_message("%s\n", out.explanation);
    assert_int_equal(count_lines(out.explanation), 3);
    assert_non_null(strstr(out.explanation, "cannot allocate all claims on any node (5000 nodes)"));
    assert_non_null(strstr(out.explanation,
                           "request gpu: none of the 40000 devices of class gpu.nvidia.com fits, "
                           "1 needed: 20000 do not match selector #0 (memory is 189471Mi, needs "
                           "more than 200Gi; e.g. gpu.nvidia.com/node-0000/gpu-0, "));
    assert_non_null(strstr(out.explanation, "20000 do not match selector #0 (memory is 80Gi, "
                                            "needs more than 200Gi; e.g. "));
    assert_true(strlen(out.explanation) < 1000);
    /* The same as data. */
    assert_int_equal(out.nwhy, 1);
    assert_int_equal(out.why[0].nrequests, 1);
    assert_string_equal(out.why[0].requests[0].request, "gpu");
    assert_false(out.why[0].requests[0].enough);
    assert_non_null(strstr(out.why[0].requests[0].text, "memory is 80Gi"));
    assert_null(out.why_together);
    dra_diag_fini(&d);
    dra_alloc_outcome_fini(&out);
    dra_allocator_free(c.a);
    dra_arena_fini(&c.ar);
}

/* ---- 7 under memory failure: every allocation failing in turn ------------- */

/* Four GPUs (two memory sizes) and a claim with a selector on memory, a
 * missing class and a prefix selector: explained through the CEL
 * backend, selector terms compiled on the way. */
static dra_err run_explained(const dra_mem *mem, size_t *why_requests)
{
    static const char *const cls_sel[] = {
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"};
    static const char *const mem_sel[] = {
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('100Gi')) > 0 && "
        "'uuid' in device.attributes['gpu.nvidia.com']"};
    static const char *const h100_sel[] = {
        "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')"};
    dra_alloc_class cls = {"gpu", cls_sel, 1, NULL, 0};
    dra_cel_attr at[4][2];
    dra_alloc_capacity cap[4];
    dra_alloc_device dv[4];
    dra_alloc_slice s;
    dra_alloc_request rq[3];
    dra_alloc_claim claim;
    const dra_alloc_claim *claims[1] = {&claim};
    dra_alloc_options opt;
    dra_alloc_outcome out;
    dra_allocator *a = NULL;
    dra_diag d;
    dra_err err;
    memset(&opt, 0, sizeof opt);
    opt.explain = 1;
    memset(dv, 0, sizeof dv);
    memset(cap, 0, sizeof cap);
    for (int i = 0; i < 4; i++) {
        static const char *const names[] = {"gpu-0", "gpu-1", "gpu-2", "gpu-3"};
        at[i][0] = (dra_cel_attr){.name = "type", .kind = DRA_CEL_ATTR_STRING, .s = "gpu"};
        at[i][1] = (dra_cel_attr){.name = "productName", .kind = DRA_CEL_ATTR_STRING,
                                  .s = i < 2 ? "NVIDIA GB200" : "NVIDIA A100"};
        cap[i].name = "memory";
        assert_int_equal(dra_quantity_parse(i < 2 ? "189471Mi" : "80Gi", i < 2 ? 8 : 4,
                                            &cap[i].value), DRA_OK);
        dv[i].name = names[i];
        dv[i].attrs = at[i];
        dv[i].nattrs = 2;
        dv[i].caps = &cap[i];
        dv[i].ncaps = 1;
    }
    memset(&s, 0, sizeof s);
    s.name = s.pool = s.node_name = "node-1";
    s.driver = "gpu.nvidia.com";
    s.generation = s.slice_count = 1;
    s.devices = dv;
    s.ndevices = 4;
    memset(rq, 0, sizeof rq);
    rq[0] = (dra_alloc_request){.name = "gpu", .exactly = {.class_name = "gpu", .selectors = mem_sel,
                                                           .nselectors = 1}};
    rq[1] = (dra_alloc_request){.name = "nic", .exactly = {.class_name = "nic"}};
    rq[2] = (dra_alloc_request){.name = "h100", .exactly = {.class_name = "gpu",
                                                            .selectors = h100_sel,
                                                            .nselectors = 1}};
    memset(&claim, 0, sizeof claim);
    claim.namespace_ = "default";
    claim.name = "big";
    claim.requests = rq;
    claim.nrequests = 3;
    dra_alloc_outcome_init(&out, mem);
    dra_diag_init(&d, mem);
    if ((err = dra_allocator_new(mem, &opt, &a)) == DRA_OK &&
        (err = dra_allocator_add_slice(a, &s, &d)) == DRA_OK &&
        (err = dra_allocator_add_class(a, &cls)) == DRA_OK)
        err = dra_allocator_allocate(a, "node-1", claims, 1, &out, &d);
    if (err == DRA_ENOTFOUND) {
        assert_non_null(out.explanation);
        assert_non_null(strstr(out.explanation, "2 do not match selector #0 (memory is 80Gi, "
                                                "needs more than 100Gi"));
        assert_non_null(strstr(out.explanation, "(uuid is missing"));
        assert_non_null(strstr(out.explanation, "request nic: device class nic does not exist"));
        *why_requests = out.nwhy ? out.why[0].nrequests : 0;
    }
    dra_diag_fini(&d);
    dra_alloc_outcome_fini(&out);
    dra_allocator_free(a);
    return err;
}

static void test_explanation_failmalloc(void **state)
{
    (void)state;
    for (long n = 0;; n++) {
        dra_failmem fm;
        size_t nreq = 0;
        dra_err err;
        dra_failmem_init(&fm, n);
        err = run_explained(&fm.mem, &nreq);
        assert_int_equal(fm.live, 0);
        if (!fm.failed) {
            assert_int_equal(err, DRA_ENOTFOUND);
            assert_int_equal(nreq, 3);
            print_message("explained after %ld allocations failed in turn\n", n);
            break;
        }
        if (err != DRA_ENOMEM)
            fail_msg("allocation %ld failing gave %s", n, dra_errname(err));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_mode_capacity),
        cmocka_unit_test(test_slice_count_exact),
        cmocka_unit_test(test_invalid_pools_reported),
        cmocka_unit_test(test_first_available_config),
        cmocka_unit_test(test_cel_error_origin),
        cmocka_unit_test(test_multi_host_generations),
        cmocka_unit_test(test_explanations),
        cmocka_unit_test(test_explanation_at_scale),
        cmocka_unit_test(test_explanation_failmalloc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
