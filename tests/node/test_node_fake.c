/* Fake nodes (KWOK-style) on drad's in-process API server: the nodes are
 * registered Ready with one ResourceSlice each (GB200 GPUs with per-node
 * UUIDs, or a template's devices), a pod bound to a fake node becomes
 * Running with ready container statuses, a pod on another node is left
 * alone, a deleted pod is removed; and with drad's scheduler and claim
 * controller, a pod with a one-GPU claim template is scheduled onto a
 * fake node, its claim allocated and reserved, and the pod Running. */
#include "agent_fixture.h"

#include "dra/sched.h"

static agent_env env;
static dra_fake_nodes *fake;

static int setup(void **state)
{
    dra_fake_nodes_opts o;
    dra_diag d;
    (void)state;
    env_open(&env, "unused");
    memset(&o, 0, sizeof o);
    o.count = 3;
    o.prefix = "fake";
    o.gpus = 2;
    o.writers = 2;
    dra_diag_init(&d, NULL);
    if (dra_fake_nodes_start(env.c, &o, NULL, &fake, &d) != DRA_OK)
        fail_msg("fake nodes: %s", dra_diag_first(&d) ? dra_diag_first(&d) : "?");
    dra_diag_fini(&d);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    dra_fake_nodes_stop(fake);
    env_close(&env);
    return 0;
}

static void test_nodes_and_slices(void **state)
{
    dra_arena a;
    dra_doc *list = NULL, *node = NULL;
    const dra_doc *items;
    const char *uuids[6];
    size_t nu = 0;
    (void)state;
    dra_arena_init(&a, NULL);
    assert_int_equal(dra_cluster_get(env.c, &DRA_GVR_NODES, NULL, "fake-2", &a, &node, NULL), DRA_OK);
    assert_true(cond_true(node, "Ready"));
    assert_int_equal(dra_cluster_list(env.c, &DRA_GVR_SLICES, NULL, NULL, &a, &list, NULL), DRA_OK);
    items = dra_doc_get(list, "items");
    assert_int_equal(items->u.list.n, 3);
    for (size_t i = 0; i < items->u.list.n; i++) {
        const dra_doc *s = items->u.list.items[i];
        const dra_doc *devs = dra_doc_get(dra_doc_get(s, "spec"), "devices");
        assert_string_equal(dra_obj_str(s, "spec.driver"), "gpu.nvidia.com");
        assert_string_equal(dra_obj_str(s, "spec.nodeName"), dra_obj_str(s, "spec.pool.name"));
        assert_int_equal(devs->u.list.n, 2);
        for (size_t j = 0; j < devs->u.list.n; j++)
            uuids[nu++] = dra_obj_str(devs->u.list.items[j], "attributes.uuid.string");
    }
    for (size_t i = 0; i < nu; i++)
        for (size_t j = i + 1; j < nu; j++)
            assert_string_not_equal(uuids[i], uuids[j]);
    dra_arena_fini(&a);
}

static void test_pods(void **state)
{
    dra_arena a;
    dra_doc *pod;
    const dra_doc *cs;
    (void)state;
    dra_arena_init(&a, NULL);
    env_apply(&env, "apiVersion: v1\nkind: Pod\nmetadata: {name: p1}\n"
                    "spec:\n  nodeName: fake-1\n  containers:\n  - {name: a, image: img-x}\n  - {name: b, image: img-y}\n"
                    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: elsewhere}\n"
                    "spec:\n  nodeName: real-node\n  containers:\n  - {name: a, image: x}\n");
    pod = env_wait(&env, &a, "p1", is_running_ready, NULL, 20000, "Running");
    cs = dra_doc_get(dra_doc_get(pod, "status"), "containerStatuses");
    assert_int_equal(cs->u.list.n, 2);
    assert_true(dra_doc_get(cs->u.list.items[1], "ready")->u.b);
    assert_string_equal(dra_obj_str(cs->u.list.items[1], "image"), "img-y");
    assert_non_null(dra_obj_str(pod, "status.podIP"));
    /* Counted once the status write returned, after the pod shows it. */
    for (int i = 0; i < 200 && dra_fake_nodes_running(fake) < 1; i++)
        usleep(10000);
    assert_true(dra_fake_nodes_running(fake) >= 1);
    pod = env_pod(&env, &a, "elsewhere");
    assert_false(is_phase(pod, (void *)"Running"));
    assert_int_equal(dra_cluster_delete(env.c, &DRA_GVR_PODS, "default", "p1", NULL, &a, NULL, NULL), DRA_OK);
    env_wait(&env, &a, "p1", is_gone, NULL, 20000, "deleted");
    dra_arena_fini(&a);
}

static void test_scheduled_with_claim(void **state)
{
    dra_arena a;
    dra_doc *pod, *claims = NULL;
    const dra_doc *items;
    dra_sched *s;
    dra_sched_opts so;
    (void)state;
    dra_arena_init(&a, NULL);
    memset(&so, 0, sizeof so);
    so.scheduler = 1;
    so.claim_controller = 1;
    assert_int_equal(dra_sched_start(env.c, &so, &s), DRA_OK);
    env_apply(&env, "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.nvidia.com}\n"
                    "spec:\n  selectors:\n  - cel: {expression: \"device.driver == 'gpu.nvidia.com'\"}\n");
    {
        dra_doc **docs;
        size_t n;
        const char *t = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: one-gpu}\n"
                        "spec:\n  spec:\n    devices:\n      requests:\n      - name: gpu\n"
                        "        exactly: {deviceClassName: gpu.nvidia.com}\n";
        assert_int_equal(dra_doc_parse_yaml(&a, t, strlen(t), &docs, &n, NULL), DRA_OK);
        assert_int_equal(dra_cluster_create(env.c, &DRA_GVR_TEMPLATES, "default", docs[0], &a, NULL, NULL), DRA_OK);
    }
    env_apply(&env, "apiVersion: v1\nkind: Pod\nmetadata: {name: gpu-pod}\n"
                    "spec:\n  resourceClaims:\n  - {name: gpu, resourceClaimTemplateName: one-gpu}\n"
                    "  containers:\n  - name: c\n    image: x\n    resources: {claims: [{name: gpu}]}\n");
    pod = env_wait(&env, &a, "gpu-pod", is_running_ready, NULL, 30000, "scheduled and Running");
    assert_int_equal(strncmp(dra_obj_str(pod, "spec.nodeName"), "fake-", 5), 0);
    assert_int_equal(dra_cluster_list(env.c, &DRA_GVR_CLAIMS, "default", NULL, &a, &claims, NULL), DRA_OK);
    items = dra_doc_get(claims, "items");
    assert_int_equal(items->u.list.n, 1);
    assert_non_null(dra_doc_get(dra_doc_get(items->u.list.items[0], "status"), "allocation"));
    assert_non_null(dra_doc_get(dra_doc_get(items->u.list.items[0], "status"), "reservedFor"));
    dra_sched_stop(s);
    dra_arena_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nodes_and_slices),
        cmocka_unit_test(test_pods),
        cmocka_unit_test(test_scheduled_with_claim),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
