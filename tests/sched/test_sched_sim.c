/* The scheduling cycle through dra_sched_sim (no cluster): the seed, a
 * full node with its explanation, node filters and their FitError
 * histogram, MostAllocated/LeastAllocated, shared and pre-allocated
 * claims, the allocator's features through the scheduler, extended
 * resources backed by DRA. */
#include "sched_test.h"

#define EX(f) DRA_SOURCE_DIR "/examples/" f

/* ---- fixtures ----------------------------------------------------------------- */

static const char *class_yaml =
    "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
    "spec:\n  selectors:\n  - cel: {expression: \"device.driver == 'gpu.example.com'\"}\n---\n"
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
    "metadata: {name: one-gpu, namespace: default}\n"
    "spec:\n  spec:\n    devices:\n      requests:\n      - name: gpu\n"
    "        exactly: {deviceClassName: gpu}\n";

/* A node with |n| GPUs; |extra| goes under the node's metadata (labels)
 * and |spec| is the node spec (taints...). */
static void add_node(dra_sched_sim *s, const char *name, int n, const char *labels,
                     const char *spec)
{
    dra_buf b;
    dra_buf_init(&b, NULL);
    dra_buf_printf(&b, "apiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n  labels: %s\n"
                       "spec: %s\n---\n", name, labels ? labels : "{}", spec ? spec : "{}");
    if (n > 0) {
        dra_buf_printf(&b, "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
                           "metadata: {name: %s-gpus}\nspec:\n  driver: gpu.example.com\n"
                           "  nodeName: %s\n  pool: {name: %s, generation: 1, resourceSliceCount: 1}\n"
                           "  devices:\n", name, name, name);
        for (int i = 0; i < n; i++)
            dra_buf_printf(&b, "  - name: gpu-%d\n    attributes:\n      index: {int: %d}\n"
                               "      model: {string: %s}\n      nvlink: {string: \"%s\"}\n"
                               "    capacity:\n      memory: {value: %s}\n",
                           i, i, i % 2 ? "B100" : "A100", i < n / 2 ? "x" : "y",
                           i % 2 ? "80Gi" : "40Gi");
    }
    sim_add_yaml(s, b.p);
    dra_buf_fini(&b);
}

static void add_pod(dra_sched_sim *s, const char *name, const char *claims, const char *extra)
{
    dra_buf b;
    dra_buf_init(&b, NULL);
    dra_buf_printf(&b, "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default, uid: uid-%s}\n"
                       "spec:\n  containers:\n  - name: ctr\n    image: busybox\n%s"
                       "  resourceClaims: %s\n",
                   name, name, extra ? extra : "", claims ? claims : "[]");
    sim_add_yaml(s, b.p);
    dra_buf_fini(&b);
}

#define ONE_GPU "[{name: gpu, resourceClaimTemplateName: one-gpu}]"

/* ---- the seed ---------------------------------------------------------------- */

static void test_seed(void **state)
{
    dra_sched_sim *s = sim_new(DRA_SCHED_LEAST_ALLOCATED);
    dra_sched_decision d;
    dra_arena a;
    (void)state;
    dra_arena_init(&a, NULL);
    sim_add_file(s, EX("seed.yaml"));
    assert_string_equal(sim_sched(s, "gpu-test-pod", &a, &d), "gb200-pod2-f06-node05");
    assert_int_equal(d.nclaims, 1);
    assert_string_equal(d.claims[0].pod_claim, "gpu-claim");
    assert_string_equal(d.claims[0].devices, "gpu.nvidia.com/gb200-pod2-f06-node05/gpu-0");
    assert_contains(d.claims[0].claim, "default/gpu-test-pod-gpu-claim-");
    /* Scheduling it again reports what it got. */
    assert_string_equal(sim_sched(s, "gpu-test-pod", &a, &d), "gb200-pod2-f06-node05");
    assert_string_equal(d.claims[0].state, "allocated");
    dra_sched_sim_free(s);
    dra_arena_fini(&a);
}

/* Five pods on a four-GPU node: the fifth is told why. */
static void test_five_on_four(void **state)
{
    dra_sched_sim *s = sim_new(DRA_SCHED_LEAST_ALLOCATED);
    dra_sched_decision d;
    dra_arena a;
    char name[32];
    (void)state;
    dra_arena_init(&a, NULL);
    sim_add_yaml(s, class_yaml);
    add_node(s, "n1", 4, NULL, NULL);
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "p%d", i);
        add_pod(s, name, ONE_GPU, NULL);
    }
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "p%d", i);
        assert_sched(s, name, &a, &d, "n1");
    }
    assert_null(sim_sched(s, "p4", &a, &d));
    assert_contains(d.message, "0/1 nodes are available: 1 cannot allocate all claims.");
    assert_contains(d.message, "request gpu");
    assert_contains(d.message, "allocated");
    assert_non_null(d.explanation);
    dra_sched_sim_free(s);
    dra_arena_fini(&a);
}

/* A selector no device meets: the message names the selector. */
static void test_big_memory(void **state)
{
    dra_sched_sim *s = sim_new(DRA_SCHED_LEAST_ALLOCATED);
    dra_sched_decision d;
    dra_arena a;
    (void)state;
    dra_arena_init(&a, NULL);
    sim_add_file(s, EX("seed.yaml"));
    sim_add_yaml(s, "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                    "metadata: {name: big, namespace: default}\nspec:\n  devices:\n    requests:\n"
                    "    - name: gpu\n      exactly:\n        deviceClassName: gpu.nvidia.com\n"
                    "        selectors:\n        - cel:\n            expression: \"device.capacity"
                    "['gpu.nvidia.com'].memory.compareTo(quantity('200Gi')) > 0\"\n");
    add_pod(s, "big-pod", "[{name: gpu, resourceClaimName: big}]",
            "  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n");
    assert_null(sim_sched(s, "big-pod", &a, &d));
    assert_contains(d.message, "1 cannot allocate all claims");
    assert_contains(d.message, "request gpu");
    assert_contains(d.message, "200Gi");
    dra_sched_sim_free(s);
    dra_arena_fini(&a);
}

/* Objects replaced by newer versions (a class, a slice, a template) are
 * found by name afterwards, and a claim whose allocation has a node
 * selector that cannot be read is an error for its pod, not a crash
 * (both found by fuzz_sched). */
static void test_replace_objects(void **state)
{
    dra_sched_sim *s = sim_new(DRA_SCHED_LEAST_ALLOCATED);
    dra_sched_decision d;
    dra_arena a;
    (void)state;
    dra_arena_init(&a, NULL);
    sim_add_yaml(s, class_yaml);
    sim_add_yaml(s, class_yaml); /* the same names again */
    add_node(s, "n1", 2, NULL, NULL);
    add_node(s, "n1", 2, NULL, NULL);
    add_pod(s, "p", ONE_GPU, NULL);
    assert_sched(s, "p", &a, &d, "n1");
    sim_add_yaml(s, "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                    "metadata: {name: odd, namespace: default, uid: odd}\n"
                    "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n"
                    "status:\n  allocation:\n    devices: {results: [{request: gpu, driver: gpu.example.com,"
                    " pool: n1, device: gpu-1}]}\n    nodeSelector: {nodeSelectorTerms: [{matchFields:"
                    " [{key: metadata.name, operator: Inuint, values: [n1]}]}]}\n");
    add_pod(s, "q", "[{name: gpu, resourceClaimName: odd}]", NULL);
    assert_sched(s, "q", &a, &d, NULL);
    assert_contains(d.message, "claim default/odd: allocation:");
    dra_sched_sim_free(s);
    dra_arena_fini(&a);
}

/* Selector results are cached per device and per the values a selector
 * reads; a slice that changes must not keep its devices' old results:
 * after the models change, the first GPU (A100 before, B100 now) is
 * picked, and the explanation quotes the new values. */
static void test_changed_slice(void **state)
{
    static const char *const b100 =
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
        "metadata: {name: b100, namespace: default}\n"
        "spec:\n  spec:\n    devices:\n      requests:\n      - name: gpu\n"
        "        exactly:\n          deviceClassName: gpu\n          count: %d\n"
        "          selectors:\n          - cel: {expression: \"device.attributes['gpu.example.com']"
        ".model == 'B100'\"}\n";
    dra_sched_sim *s = sim_new(DRA_SCHED_LEAST_ALLOCATED);
    dra_sched_decision d;
    dra_arena a;
    char buf[1024];
    (void)state;
    dra_arena_init(&a, NULL);
    sim_add_yaml(s, class_yaml);
    snprintf(buf, sizeof buf, b100, 1);
    sim_add_yaml(s, buf);
    add_node(s, "n1", 4, NULL, NULL); /* A100, B100, A100, B100 */
    add_pod(s, "p0", "[{name: gpu, resourceClaimTemplateName: b100}]", NULL);
    assert_sched(s, "p0", &a, &d, "n1");
    assert_string_equal(claim_devices(&d, "gpu"), "gpu.example.com/n1/gpu-1");
    /* Every GPU a B100 now (generation 2 of the pool). */
    sim_add_yaml(s, "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
                    "metadata: {name: n1-gpus}\nspec:\n  driver: gpu.example.com\n  nodeName: n1\n"
                    "  pool: {name: n1, generation: 2, resourceSliceCount: 1}\n  devices:\n"
                    "  - {name: gpu-0, attributes: {model: {string: B100}}}\n"
                    "  - {name: gpu-1, attributes: {model: {string: B100}}}\n"
                    "  - {name: gpu-2, attributes: {model: {string: C100}}}\n"
                    "  - {name: gpu-3, attributes: {model: {string: B100}}}\n");
    add_pod(s, "p1", "[{name: gpu, resourceClaimTemplateName: b100}]", NULL);
    assert_sched(s, "p1", &a, &d, "n1");
    assert_string_equal(claim_devices(&d, "gpu"), "gpu.example.com/n1/gpu-0");
    /* Two more: one B100 is left, and gpu-2's new model is the reason. */
    snprintf(buf, sizeof buf, b100, 2);
    buf[strstr(buf, "b100") - buf + 1] = '2'; /* template b200: two GPUs */
    sim_add_yaml(s, buf);
    add_pod(s, "p2", "[{name: gpu, resourceClaimTemplateName: b200}]", NULL);
    assert_sched(s, "p2", &a, &d, NULL);
    assert_contains(d.explanation, "model is \"C100\", needs \"B100\"");
    assert_contains(d.explanation, "2 are already allocated");
    dra_sched_sim_free(s);
    dra_arena_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed),
        cmocka_unit_test(test_five_on_four),
        cmocka_unit_test(test_big_memory),
        cmocka_unit_test(test_replace_objects),
        cmocka_unit_test(test_changed_slice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
