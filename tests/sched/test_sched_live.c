/* The live scheduler and claim controller against drad's API server
 * through the in-process cluster transport (a store in a temporary
 * directory): the seed pod bound with gpu-0 and its claim generated,
 * allocated and reserved; five pods on four GPUs with the fifth's
 * FailedScheduling event and PodScheduled condition, then bound once a
 * pod is deleted and its claim released; a selector no device meets;
 * extended resources backed by DRA; a pod of another scheduler left
 * alone. */
#include <time.h>
#include <unistd.h>

#include "sched_test.h"

#include "dra/apiserver.h"
#include "dra/cluster.h"
#include "dra/store.h"

typedef struct env {
    char dir[128];
    dra_store *store;
    dra_apiserver *srv;
    dra_cluster *c;
    dra_sched *s;
    dra_arena a;
} env;

static const dra_gvr pods = DRA_GVR_PODS, claims = DRA_GVR_CLAIMS, events = DRA_GVR_EVENTS;

static void env_open(env *e, int scheduler, int controller)
{
    dra_diag d;
    dra_apiserver_opts o;
    dra_store_opts so;
    dra_sched_opts sopt;
    char db[200];
    memset(e, 0, sizeof *e);
    snprintf(e->dir, sizeof e->dir, "/tmp/dra-sched-XXXXXX");
    assert_non_null(mkdtemp(e->dir));
    snprintf(db, sizeof db, "%s/state.db", e->dir);
    dra_diag_init(&d, NULL);
    memset(&so, 0, sizeof so);
    so.unsafe_nosync = 1;
    assert_int_equal(dra_store_open(db, &so, NULL, &e->store, &d), DRA_OK);
    memset(&o, 0, sizeof o);
    o.store = e->store;
    o.gc_period_ms = 100;
    if (dra_apiserver_new(&o, NULL, &e->srv, &d))
        fail_msg("server: %s", dra_diag_first(&d) ? dra_diag_first(&d) : "?");
    dra_diag_fini(&d);
    assert_non_null(e->c = dra_apiserver_cluster(e->srv));
    memset(&sopt, 0, sizeof sopt);
    sopt.scheduler = scheduler;
    sopt.claim_controller = controller;
    assert_int_equal(dra_sched_start(e->c, &sopt, &e->s), DRA_OK);
    dra_arena_init(&e->a, NULL);
}

static void env_close(env *e)
{
    char cmd[200];
    dra_sched_stop(e->s);
    dra_cluster_free(e->c);
    dra_apiserver_free(e->srv);
    dra_store_close(e->store);
    dra_arena_fini(&e->a);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", e->dir);
    assert_int_equal(system(cmd), 0);
}

static dra_gvr gvr_of(const dra_doc *d)
{
    const char *k = dra_obj_str(d, "kind");
    if (!strcmp(k, "Pod"))
        return pods;
    if (!strcmp(k, "Node"))
        return (dra_gvr)DRA_GVR_NODES;
    if (!strcmp(k, "ResourceSlice"))
        return (dra_gvr)DRA_GVR_SLICES;
    if (!strcmp(k, "DeviceClass"))
        return (dra_gvr)DRA_GVR_CLASSES;
    if (!strcmp(k, "ResourceClaimTemplate"))
        return (dra_gvr)DRA_GVR_TEMPLATES;
    return claims;
}

/* Creates every object of |yaml| through the API. */
static void create(env *e, const char *yaml)
{
    dra_arena a;
    dra_doc **docs = NULL;
    size_t n = 0;
    dra_diag d;
    dra_kstatus st;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    if (dra_doc_parse_yaml(&a, yaml, strlen(yaml), &docs, &n, &d) || dra_doc_flatten_lists(&a, &docs, &n))
        fail_msg("yaml: %s", dra_diag_first(&d));
    for (size_t i = 0; i < n; i++) {
        dra_gvr g = gvr_of(docs[i]);
        const char *ns = dra_obj_namespace(docs[i]);
        if (dra_cluster_create(e->c, &g, g.resource == pods.resource || g.resource == claims.resource ||
                                             !strcmp(g.resource, "resourceclaimtemplates")
                                         ? (ns ? ns : "default") : NULL,
                               docs[i], &a, NULL, &st))
            fail_msg("create %s: %s", dra_obj_name(docs[i]), st.message);
    }
    dra_diag_fini(&d);
    dra_arena_fini(&a);
}

static void create_file(env *e, const char *path)
{
    char *t = dra_test_slurp(path, NULL);
    create(e, t);
    free(t);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static dra_doc *get(env *e, const dra_gvr *g, const char *name)
{
    dra_doc *d = NULL;
    dra_kstatus st;
    if (dra_cluster_get(e->c, g, "default", name, &e->a, &d, &st))
        return NULL;
    return d;
}

/* Waits up to 20 s for pod |name| to have a node; returns it or NULL. */
static const char *wait_bound(env *e, const char *name, int ms)
{
    int64_t end = now_ms() + ms;
    do {
        dra_doc *p = get(e, &pods, name);
        const char *n = p ? dra_obj_str(p, "spec.nodeName") : NULL;
        if (n)
            return n;
        usleep(10000);
    } while (now_ms() < end);
    return NULL;
}

/* The claim the controller made for |pod|'s entry |pc|. */
static dra_doc *pod_claim(env *e, const char *pod, const char *pc)
{
    dra_doc *p = get(e, &pods, pod);
    const dra_doc *l = dra_doc_get(dra_doc_get(p, "status"), "resourceClaimStatuses");
    for (size_t i = 0; l && l->kind == DRA_DOC_LIST && i < l->u.list.n; i++)
        if (!strcmp(dra_obj_str(l->u.list.items[i], "name"), pc))
            return get(e, &claims, dra_obj_str(l->u.list.items[i], "resourceClaimName"));
    return NULL;
}

static const char *json(const dra_doc *d)
{
    dra_buf b;
    static char out[16384];
    dra_buf_init(&b, NULL);
    dra_doc_to_json(d, 0, &b);
    snprintf(out, sizeof out, "%s", b.p ? b.p : "null");
    dra_buf_fini(&b);
    return out;
}

/* Waits for an event on |pod| with |reason| whose message has |needle|. */
static int wait_event(env *e, const char *pod, const char *reason, const char *needle, int ms)
{
    int64_t end = now_ms() + ms;
    do {
        dra_doc *l = NULL;
        dra_kstatus st;
        const dra_doc *items;
        if (!dra_cluster_list(e->c, &events, "default", NULL, &e->a, &l, &st)) {
            items = dra_doc_get(l, "items");
            for (size_t i = 0; items && i < items->u.list.n; i++) {
                const dra_doc *ev = items->u.list.items[i];
                const char *r = dra_obj_str(ev, "reason"), *m = dra_obj_str(ev, "message");
                const char *on = dra_obj_str(ev, "involvedObject.name");
                if (r && on && !strcmp(r, reason) && !strcmp(on, pod) && m && strstr(m, needle))
                    return 1;
            }
        }
        usleep(20000);
    } while (now_ms() < end);
    return 0;
}

static const char *gpu_yaml =
    "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
    "spec: {selectors: [{cel: {expression: \"device.driver == 'gpu.example.com'\"}}]}\n---\n"
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: one, namespace: default}\n"
    "spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}}\n---\n"
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n"
    "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: n1}\n"
    "spec: {driver: gpu.example.com, nodeName: n1, pool: {name: n1, generation: 1, resourceSliceCount: 1},"
    " devices: [{name: g0}, {name: g1}, {name: g2}, {name: g3}]}\n";

static void add_pod(env *e, const char *name, const char *sched)
{
    char buf[512];
    snprintf(buf, sizeof buf,
             "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default}\n"
             "spec: {schedulerName: %s, containers: [{name: c, image: busybox}],"
             " resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n",
             name, sched ? sched : "default-scheduler");
    create(e, buf);
}

/* ---- tests ----------------------------------------------------------------------------- */

static void test_seed(void **state)
{
    env e;
    const char *node;
    dra_doc *cl;
    const char *js;
    (void)state;
    env_open(&e, 1, 1);
    create(&e, "apiVersion: v1\nkind: Node\nmetadata: {name: gb200-pod2-f06-node05}\n");
    create_file(&e, DRA_SOURCE_DIR "/examples/seed.yaml");
    node = wait_bound(&e, "gpu-test-pod", 20000);
    assert_non_null(node);
    assert_string_equal(node, "gb200-pod2-f06-node05");
    assert_non_null(cl = pod_claim(&e, "gpu-test-pod", "gpu-claim"));
    js = json(cl);
    assert_contains(js, "\"generateName\":\"gpu-test-pod-gpu-claim-\"");
    assert_contains(js, "\"resource.kubernetes.io/pod-claim-name\":\"gpu-claim\"");
    assert_contains(js, "\"controller\":true,\"blockOwnerDeletion\":true");
    assert_contains(js, "\"finalizers\":[\"resource.kubernetes.io/delete-protection\"]");
    assert_contains(js, "\"device\":\"gpu-0\"");
    assert_contains(js, "\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"gpu-test-pod\"");
    assert_true(wait_event(&e, "gpu-test-pod", "Scheduled",
                           "Successfully assigned default/gpu-test-pod to gb200-pod2-f06-node05", 5000));
    env_close(&e);
}

static void test_five_on_four(void **state)
{
    env e;
    char name[16];
    dra_doc *p, *cl;
    dra_kstatus st;
    const char *free_node;
    (void)state;
    env_open(&e, 1, 1);
    create(&e, gpu_yaml);
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "p%d", i);
        add_pod(&e, name, NULL);
    }
    /* Four bound, one pending: which one depends on the order of events. */
    {
        int bound = 0, pending = -1;
        int64_t end = now_ms() + 20000;
        while (now_ms() < end && bound < 4) {
            bound = 0;
            for (int i = 0; i < 5; i++) {
                snprintf(name, sizeof name, "p%d", i);
                p = get(&e, &pods, name);
                if (dra_obj_str(p, "spec.nodeName"))
                    bound++;
            }
            usleep(20000);
        }
        assert_int_equal(bound, 4);
        for (int i = 0; i < 5; i++) {
            snprintf(name, sizeof name, "p%d", i);
            if (!dra_obj_str(get(&e, &pods, name), "spec.nodeName"))
                pending = i;
        }
        assert_true(pending >= 0);
        snprintf(name, sizeof name, "p%d", pending);
    }
    assert_true(wait_event(&e, name, "FailedScheduling", "0/1 nodes are available: 1 cannot allocate all claims.", 10000));
    assert_true(wait_event(&e, name, "FailedScheduling", "request gpu", 1000));
    {
        int64_t end = now_ms() + 5000;
        const char *js = NULL;
        while (now_ms() < end) {
            js = json(get(&e, &pods, name));
            if (strstr(js, "\"reason\":\"Unschedulable\""))
                break;
            usleep(20000);
        }
        assert_contains(js, "{\"type\":\"PodScheduled\",\"status\":\"False\"");
        assert_contains(js, "\"reason\":\"Unschedulable\"");
        assert_contains(js, "cannot allocate all claims");
    }
    /* One bound pod goes: its claim is released and deleted, the fifth gets its GPU. */
    {
        char victim[16];
        const char *cname;
        snprintf(victim, sizeof victim, "p%d", name[1] == '0' ? 1 : 0);
        cl = pod_claim(&e, victim, "gpu");
        assert_non_null(cl);
        cname = dra_arena_strdup(&e.a, dra_obj_name(cl));
        assert_int_equal(dra_cluster_delete(e.c, &pods, "default", victim, NULL, &e.a, NULL, &st), DRA_OK);
        free_node = wait_bound(&e, name, 20000);
        assert_non_null(free_node);
        assert_string_equal(free_node, "n1");
        {
            int64_t end = now_ms() + 10000;
            while (now_ms() < end && get(&e, &claims, cname))
                usleep(20000);
            assert_null(get(&e, &claims, cname));
        }
    }
    env_close(&e);
}

static void test_big_memory(void **state)
{
    env e;
    (void)state;
    env_open(&e, 1, 1);
    create(&e, "apiVersion: v1\nkind: Node\nmetadata: {name: gb200-pod2-f06-node05}\n");
    create_file(&e, DRA_SOURCE_DIR "/examples/resourceslice-gb200.yaml");
    create_file(&e, DRA_SOURCE_DIR "/examples/deviceclass-gpu.yaml");
    create(&e, "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
               "metadata: {name: big, namespace: default}\nspec:\n  devices:\n    requests:\n"
               "    - name: gpu\n      exactly:\n        deviceClassName: gpu.nvidia.com\n"
               "        selectors:\n        - cel:\n            expression: \"device.capacity"
               "['gpu.nvidia.com'].memory.compareTo(quantity('200Gi')) > 0\"\n---\n"
               "apiVersion: v1\nkind: Pod\nmetadata: {name: big-pod, namespace: default}\n"
               "spec: {containers: [{name: c, image: busybox}], resourceClaims: [{name: gpu, resourceClaimName: big}]}\n");
    assert_true(wait_event(&e, "big-pod", "FailedScheduling", "200Gi", 10000));
    assert_null(dra_obj_str(get(&e, &pods, "big-pod"), "spec.nodeName"));
    env_close(&e);
}

static void test_extended_resource(void **state)
{
    env e;
    dra_doc *p, *cl;
    const char *cname;
    (void)state;
    env_open(&e, 1, 1);
    create(&e, gpu_yaml);
    create(&e, "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu-er}\n"
               "spec: {extendedResourceName: example.com/gpu, selectors: [{cel: {expression: "
               "\"device.driver == 'gpu.example.com'\"}}]}\n---\n"
               "apiVersion: v1\nkind: Pod\nmetadata: {name: legacy, namespace: default}\n"
               "spec: {containers: [{name: main, image: busybox, resources: {limits: {example.com/gpu: \"2\"}}}]}\n");
    assert_non_null(wait_bound(&e, "legacy", 20000));
    p = get(&e, &pods, "legacy");
    assert_contains(json(p), "\"extendedResourceClaimStatus\":{\"requestMappings\":[{\"containerName\":\"main\","
                             "\"resourceName\":\"example.com/gpu\",\"requestName\":\"container-0-request-0\"}]");
    cname = dra_obj_str(dra_doc_get(dra_doc_get(p, "status"), "extendedResourceClaimStatus"), "resourceClaimName");
    assert_non_null(cname);
    assert_non_null(cl = get(&e, &claims, cname));
    assert_contains(json(cl), "\"resource.kubernetes.io/extended-resource-claim\":\"true\"");
    assert_contains(json(cl), "\"generateName\":\"legacy-extended-resources-\"");
    assert_contains(json(cl), "\"count\":2");
    assert_contains(json(cl), "\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"legacy\"");
    env_close(&e);
}

/* Pods that name another scheduler are left alone, but the controller
 * still makes their claims. */
static void test_other_scheduler(void **state)
{
    env e;
    (void)state;
    env_open(&e, 1, 1);
    create(&e, gpu_yaml);
    add_pod(&e, "mine", NULL);
    add_pod(&e, "theirs", "dra-scheduler");
    assert_non_null(wait_bound(&e, "mine", 20000));
    {
        int64_t end = now_ms() + 5000;
        while (now_ms() < end && !pod_claim(&e, "theirs", "gpu"))
            usleep(20000);
    }
    assert_non_null(pod_claim(&e, "theirs", "gpu"));
    usleep(300000);
    assert_null(dra_obj_str(get(&e, &pods, "theirs"), "spec.nodeName"));
    env_close(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed),
        cmocka_unit_test(test_five_on_four),
        cmocka_unit_test(test_big_memory),
        cmocka_unit_test(test_extended_resource),
        cmocka_unit_test(test_other_scheduler),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
