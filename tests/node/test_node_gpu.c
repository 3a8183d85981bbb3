/* The node agent with the real GPU kubelet plugin (dra_plugin on the fake
 * GB200 driver root of the seed's node05), both on drad's in-process API
 * server: the agent registers the plugin from its registration socket,
 * a pod whose claim is not reserved for it stays ContainerCreating with
 * a FailedPrepareDynamicResources event carrying the reason, then runs
 * once the claim is allocated and reserved; inside, the seed's command
 * (nvidia-smi -L) sees exactly the allocated GPU; deleting the pod
 * unprepares the claim (its CDI spec is removed). With the plugin gone,
 * a pod waits ("not registered") and starts once a new plugin process
 * registers. Skips (77) where bwrap cannot create namespaces. */
#include "agent_fixture.h"

#include <sys/stat.h>

#include "dra/gpu.h"
#include "dra/plugin.h"

#define NODE "gb200-pod2-f06-node05"

static agent_env env;
static char root[256], plugins[256];
static dra_plugin *plugin;

static void plugin_up(void)
{
    dra_plugin_opts o;
    dra_diag d;
    dra_plugin_opts_default(&o);
    o.node_name = NODE;
    o.cdi_root = env.cdi;
    o.plugins_dir = plugins;
    o.registrar_dir = env.reg;
    o.nvidia_driver_root = root;
    o.container_driver_root = root;
    o.healthcheck_port = -1;
    o.cluster = env.c;
    dra_diag_init(&d, NULL);
    if (dra_plugin_new(&o, NULL, &plugin, &d) != DRA_OK || dra_plugin_start(plugin, &d) != DRA_OK)
        fail_msg("plugin: %s", dra_diag_first(&d) ? dra_diag_first(&d) : "?");
    dra_diag_fini(&d);
}

static void plugin_down(void)
{
    dra_plugin_free(plugin);
    plugin = NULL;
}

static int setup(void **state)
{
    dra_gpu_fake_root_opts fo;
    dra_diag d;
    (void)state;
    /* Under /tmp on purpose: a container's /tmp is private, so nothing
     * the container needs may be reached through a host path there (the
     * fake NVML finds its GPUs through the /dev/nvidiactl it is given). */
    env_open_in(&env, "/tmp", NODE);
    snprintf(root, sizeof root, "%s/driver-root", env.dir);
    snprintf(plugins, sizeof plugins, "%s/plugins", env.dir);
    memset(&fo, 0, sizeof fo);
    fo.inventory = DRA_SOURCE_DIR "/share/dra/nodes-gb200.yaml";
    fo.node = NODE;
    fo.root = root;
    fo.fake_nvml = DRA_FAKE_NVML;
    fo.fake_smi = DRA_FAKE_SMI;
    dra_diag_init(&d, NULL);
    if (dra_gpu_fake_root(&fo, &d) != DRA_OK)
        fail_msg("fake root: %s", dra_diag_first(&d) ? dra_diag_first(&d) : "?");
    dra_diag_fini(&d);
    env_start_node(&env);
    plugin_up();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    plugin_down();
    env_close(&env);
    return 0;
}

static const char claim_yaml[] =
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: %s}\n"
    "spec:\n  devices:\n    requests:\n    - name: gpu\n      exactly: {deviceClassName: gpu.nvidia.com}\n";

static const char pod_yaml[] =
    "apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\n"
    "spec:\n  nodeName: " NODE "\n  terminationGracePeriodSeconds: 1\n"
    "  resourceClaims:\n  - {name: gpu-claim, resourceClaimName: %s}\n"
    "  containers:\n  - name: ctr\n    image: ubuntu:22.04\n    command: [bash, -c]\n"
    "    args: [\"nvidia-smi -L && echo 'GPU allocation successful.' && sleep 3600\"]\n"
    "    resources:\n      claims:\n      - name: gpu-claim\n";

/* Allocates |device| to the claim and reserves it for the pod. */
static void allocate(const char *claim, const char *pod_name, const char *device)
{
    dra_arena a;
    dra_doc *pod, *c = NULL, **docs;
    size_t n;
    char y[1024];
    dra_kstatus st;
    dra_arena_init(&a, NULL);
    assert_non_null(pod = env_pod(&env, &a, pod_name));
    assert_int_equal(dra_cluster_get(env.c, &DRA_GVR_CLAIMS, "default", claim, &a, &c, NULL), DRA_OK);
    snprintf(y, sizeof y,
             "allocation:\n  devices:\n    results:\n    - {request: gpu, driver: gpu.nvidia.com, pool: " NODE
             ", device: %s}\nreservedFor:\n- {resource: pods, name: %s, uid: %s}\n",
             device, pod_name, dra_obj_uid(pod));
    assert_int_equal(dra_doc_parse_yaml(&a, y, strlen(y), &docs, &n, NULL), DRA_OK);
    assert_int_equal(dra_doc_map_set(&a, c, "status", docs[0]), DRA_OK);
    memset(&st, 0, sizeof st);
    if (dra_cluster_update(env.c, &DRA_GVR_CLAIMS, "default", claim, "status", c, &a, NULL, &st))
        fail_msg("claim status: %s", st.message);
    dra_arena_fini(&a);
}

static int waiting_creating(const dra_doc *pod, void *ud)
{
    const dra_doc *cs = pod ? ctr_status(pod, 0) : NULL;
    const char *w = cs ? cs_str(cs, "state.waiting.reason") : NULL;
    (void)ud;
    return w && !strcmp(w, "ContainerCreating");
}

/* The message of the newest event with |reason| about pod |name|. */
static int event_with(const char *name, const char *reason, const char *needle)
{
    dra_arena a;
    dra_doc *list = NULL;
    int found = 0;
    dra_arena_init(&a, NULL);
    if (dra_cluster_list(env.c, &DRA_GVR_EVENTS, "default", NULL, &a, &list, NULL) == DRA_OK) {
        const dra_doc *items = dra_doc_get(list, "items");
        for (size_t i = 0; items && i < items->u.list.n && !found; i++) {
            const dra_doc *ev = items->u.list.items[i];
            const char *r = dra_obj_str(ev, "reason"), *m = dra_obj_str(ev, "message");
            const char *o = dra_obj_str(ev, "involvedObject.name");
            found = r && m && o && !strcmp(r, reason) && !strcmp(o, name) && strstr(m, needle);
        }
    }
    dra_arena_fini(&a);
    return found;
}

static void cdi_spec_path(const char *claim, char *buf, size_t size)
{
    dra_arena a;
    dra_doc *c = NULL;
    dra_arena_init(&a, NULL);
    assert_int_equal(dra_cluster_get(env.c, &DRA_GVR_CLAIMS, "default", claim, &a, &c, NULL), DRA_OK);
    snprintf(buf, size, "%s/k8s.gpu.nvidia.com-claim_%s.yaml", env.cdi, dra_obj_uid(c));
    dra_arena_fini(&a);
}

static void test_seed_pod(void **state)
{
    dra_arena a;
    char y[2048], log[4096], spec[512];
    (void)state;
    dra_arena_init(&a, NULL);
    snprintf(y, sizeof y, claim_yaml, "claim-1");
    env_apply(&env, y);
    snprintf(y, sizeof y, pod_yaml, "gpu-test-pod", "claim-1");
    env_apply(&env, y);
    /* Not reserved for the pod yet: the kubelet refuses to prepare. */
    env_wait(&env, &a, "gpu-test-pod", waiting_creating, NULL, 20000, "ContainerCreating");
    for (int i = 0; i < 200 && !event_with("gpu-test-pod", "FailedPrepareDynamicResources", "not allowed to use"); i++)
        usleep(50000);
    assert_true(event_with("gpu-test-pod", "FailedPrepareDynamicResources",
                           "Failed to prepare dynamic resources: pod gpu-test-pod("));
    allocate("claim-1", "gpu-test-pod", "gpu-0");
    env_wait(&env, &a, "gpu-test-pod", is_running_ready, NULL, 30000, "Running");
    for (int i = 0; i < 200; i++) {
        env_logs(&env, "gpu-test-pod", NULL, log, sizeof log);
        if (strstr(log, "successful"))
            break;
        usleep(50000);
    }
    assert_string_equal(log, "GPU 0: NVIDIA GB200 (UUID: GPU-137d7996-cb8e-7683-e47d-9c99e6f49eb5)\n"
                             "GPU allocation successful.\n");
    cdi_spec_path("claim-1", spec, sizeof spec);
    assert_int_equal(access(spec, F_OK), 0);
    /* A second pod with gpu-2: sees only that one, as GPU 0. */
    snprintf(y, sizeof y, claim_yaml, "claim-2");
    env_apply(&env, y);
    snprintf(y, sizeof y, pod_yaml, "second", "claim-2");
    env_apply(&env, y);
    allocate("claim-2", "second", "gpu-2");
    env_wait(&env, &a, "second", is_running_ready, NULL, 30000, "Running");
    for (int i = 0; i < 200; i++) {
        env_logs(&env, "second", NULL, log, sizeof log);
        if (strstr(log, "successful"))
            break;
        usleep(50000);
    }
    assert_non_null(strstr(log, "GPU 0: NVIDIA GB200 (UUID: "));
    assert_null(strstr(log, "GPU-137d7996"));
    assert_null(strstr(log, "GPU 1:"));
    /* Deleting unprepares: the CDI spec goes. */
    assert_int_equal(dra_cluster_delete(env.c, &DRA_GVR_PODS, "default", "gpu-test-pod", NULL, &a, NULL, NULL),
                     DRA_OK);
    env_wait(&env, &a, "gpu-test-pod", is_gone, NULL, 30000, "deleted");
    assert_int_equal(access(spec, F_OK), -1);
    assert_int_equal(dra_cluster_delete(env.c, &DRA_GVR_PODS, "default", "second", NULL, &a, NULL, NULL), DRA_OK);
    env_wait(&env, &a, "second", is_gone, NULL, 30000, "deleted");
    dra_arena_fini(&a);
}

static void test_plugin_comes_back(void **state)
{
    dra_arena a;
    char y[2048], log[4096];
    (void)state;
    dra_arena_init(&a, NULL);
    plugin_down();
    snprintf(y, sizeof y, claim_yaml, "claim-3");
    env_apply(&env, y);
    snprintf(y, sizeof y, pod_yaml, "later", "claim-3");
    env_apply(&env, y);
    allocate("claim-3", "later", "gpu-1");
    for (int i = 0; i < 200 && !event_with("later", "FailedPrepareDynamicResources", "not registered"); i++)
        usleep(50000);
    assert_true(event_with("later", "FailedPrepareDynamicResources", "DRA driver gpu.nvidia.com is not registered"));
    env_wait(&env, &a, "later", waiting_creating, NULL, 20000, "ContainerCreating");
    plugin_up();
    env_wait(&env, &a, "later", is_running_ready, NULL, 30000, "Running once the plugin registered");
    for (int i = 0; i < 200; i++) {
        env_logs(&env, "later", NULL, log, sizeof log);
        if (strstr(log, "successful"))
            break;
        usleep(50000);
    }
    assert_non_null(strstr(log, "GPU 0: NVIDIA GB200 (UUID: GPU-d23f0824-128b-4f33-8c5c-7fd0a6a3a450)\n"));
    assert_int_equal(dra_cluster_delete(env.c, &DRA_GVR_PODS, "default", "later", NULL, &a, NULL, NULL), DRA_OK);
    env_wait(&env, &a, "later", is_gone, NULL, 30000, "deleted");
    dra_arena_fini(&a);
}

/* The plugin's own error reaches the pod's events. */
static void test_plugin_error(void **state)
{
    dra_arena a;
    char y[2048];
    (void)state;
    dra_arena_init(&a, NULL);
    snprintf(y, sizeof y, claim_yaml, "claim-4");
    env_apply(&env, y);
    snprintf(y, sizeof y, pod_yaml, "nodevice", "claim-4");
    env_apply(&env, y);
    allocate("claim-4", "nodevice", "gpu-9");
    for (int i = 0; i < 200 && !event_with("nodevice", "FailedPrepareDynamicResources", "gpu-9"); i++)
        usleep(50000);
    assert_true(event_with("nodevice", "FailedPrepareDynamicResources",
                           "NodePrepareResources failed for ResourceClaim claim-4: "));
    env_wait(&env, &a, "nodevice", waiting_creating, NULL, 20000, "ContainerCreating");
    dra_arena_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_pod),
        cmocka_unit_test(test_plugin_comes_back),
        cmocka_unit_test(test_plugin_error),
    };
    if (!env_can_run("/tmp/dra-agent-probe-gpu"))
        return 77;
    return cmocka_run_group_tests(tests, setup, teardown);
}
