/* Handler-level tests of kube-apiserver's defaulting in drad's write
 * path (src/apiserver/write.c over dra_api_default and
 * dra_api_default_doc): a created pod stores what kube-apiserver stores,
 * namespaces get their label and an appended finalizer, Priority
 * admission's 403s, the QoS class from defaulted quantities, and
 * DefaultTolerationSeconds on updates (the seed pod applied twice). */
#include "api_fixture.h"

#define PODS "/api/v1/namespaces/default/pods"

/* The JSON text of |d|'s member |key| (map order kept), malloc'd. */
static char *member_json(const dra_doc *d, const char *key)
{
    dra_buf b;
    char *s;
    const dra_doc *m = dra_doc_get(d, key);
    assert_non_null(m);
    dra_buf_init(&b, NULL);
    assert_int_equal(dra_doc_to_json(m, 0, &b), DRA_OK);
    s = strdup(b.p);
    dra_buf_fini(&b);
    return s;
}

/* The seed pod, created from its YAML, has kube-apiserver's defaults
 * field for field and in kube's order, as the api module's fixture
 * (tests/data/api/defaults/pod-gpu-test.yaml) holds them; the registry
 * adds phase Pending and the QoS class. */
static void test_pod_create_defaults(void **state)
{
    fx f;
    size_t len;
    char *yaml = dra_test_slurp(DRA_SOURCE_DIR "/examples/pod-gpu-test.yaml", &len);
    char *want = dra_test_slurp(DRA_TEST_DATA "/api/defaults/pod-gpu-test.yaml", NULL);
    dra_doc **docs;
    size_t n;
    char *got_spec, *want_spec;
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req_ct(&f, "POST", PODS, "application/yaml", NULL, yaml, len);
    FX_ASSERT_CODE(&f, 201);
    assert_int_equal(dra_doc_parse_yaml(&f.a, want, strlen(want), &docs, &n, NULL), DRA_OK);
    assert_int_equal(n, 1);
    got_spec = member_json(f.doc, "spec");
    want_spec = member_json(docs[0], "spec");
    assert_string_equal(got_spec, want_spec);
    assert_string_equal(fx_str(&f, "status.phase"), "Pending");
    assert_string_equal(fx_str(&f, "status.qosClass"), "BestEffort");
    /* Read back as stored. */
    fx_req(&f, "GET", PODS "/gpu-test-pod", NULL);
    free(got_spec);
    got_spec = member_json(f.doc, "spec");
    assert_string_equal(got_spec, want_spec);
    free(got_spec);
    free(want_spec);
    free(want);
    free(yaml);
    fx_close(&f);
}

/* kubectl apply's second patch of the seed pod: its three-way diff sends
 * the atomic tolerations list as the manifest has it, without the two
 * DefaultTolerationSeconds added at create. Admission adds them back
 * before ValidatePodUpdate, so kube answers 200 and nothing changes. */
static void test_pod_apply_again(void **state)
{
    fx f;
    size_t len;
    char *yaml = dra_test_slurp(DRA_SOURCE_DIR "/examples/pod-gpu-test.yaml", &len);
    char *rv, *tol;
    static const char smp[] =
        "{\"spec\":{\"tolerations\":[{\"effect\":\"NoSchedule\",\"key\":\"nvidia.com/gpu\","
        "\"operator\":\"Exists\"}]}}";
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req_ct(&f, "POST", PODS, "application/yaml", NULL, yaml, len);
    FX_ASSERT_CODE(&f, 201);
    rv = strdup(fx_str(&f, "metadata.resourceVersion"));
    tol = member_json(dra_doc_get(f.doc, "spec"), "tolerations");
    fx_req_ct(&f, "PATCH", PODS "/gpu-test-pod", "application/strategic-merge-patch+json", NULL,
              smp, strlen(smp));
    FX_ASSERT_CODE(&f, 200);
    assert_string_equal(fx_str(&f, "metadata.resourceVersion"), rv);
    {
        char *now = member_json(dra_doc_get(f.doc, "spec"), "tolerations");
        assert_string_equal(now, tol);
        free(now);
    }
    /* A replace with the manifest leaves out serviceAccountName, which
     * ServiceAccount admission sets on create only: kube refuses it. */
    fx_req_ct(&f, "PUT", PODS "/gpu-test-pod", "application/yaml", NULL, yaml, len);
    FX_ASSERT_CODE(&f, 422);
    assert_non_null(strstr(fx_str(&f, "message"), "spec.serviceAccountName: \"default\" -> null"));
    /* Removing the manifest's own toleration is still refused. */
    {
        static const char drop[] = "{\"spec\":{\"tolerations\":null}}";
        fx_req_ct(&f, "PATCH", PODS "/gpu-test-pod", "application/strategic-merge-patch+json",
                  NULL, drop, strlen(drop));
    }
    FX_ASSERT_CODE(&f, 422);
    assert_string_equal(fx_str(&f, "message"),
                        "Pod \"gpu-test-pod\" is invalid: spec.tolerations: Forbidden: existing "
                        "toleration can not be modified except its tolerationSeconds");
    free(tol);
    free(rv);
    free(yaml);
    fx_close(&f);
}

#define POD_PC(name, extra)                                                      \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{" name "},"           \
    "\"spec\":{" extra "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}"

/* Priority admission: a class drad does not serve is kube's 403 for a
 * missing PriorityClass, and so is a pod that brings its own priority;
 * the system classes give their values. */
static void test_pod_priority_forbidden(void **state)
{
    fx f;
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", PODS, POD_PC("\"name\":\"p1\"", "\"priorityClassName\":\"high\","));
    FX_ASSERT_CODE(&f, 403);
    assert_string_equal(fx_str(&f, "reason"), "Forbidden");
    assert_string_equal(fx_str(&f, "message"),
                        "pods \"p1\" is forbidden: no PriorityClass with name high was found");
    assert_string_equal(fx_str(&f, "details.name"), "p1");
    assert_string_equal(fx_str(&f, "details.kind"), "pods");
    fx_req(&f, "GET", PODS "/p1", NULL);
    FX_ASSERT_CODE(&f, 404);
    /* generateName: admission runs before the name is drawn. */
    fx_req(&f, "POST", PODS, POD_PC("\"generateName\":\"g-\"", "\"priorityClassName\":\"high\","));
    FX_ASSERT_CODE(&f, 403);
    assert_string_equal(fx_str(&f, "message"),
                        "pods \"\" is forbidden: no PriorityClass with name high was found");
    fx_req(&f, "POST", PODS, POD_PC("\"name\":\"p2\"", "\"priority\":7,"));
    FX_ASSERT_CODE(&f, 403);
    assert_string_equal(fx_str(&f, "message"),
                        "pods \"p2\" is forbidden: the integer value of priority (7) must not be "
                        "provided in pod spec; priority admission controller computed 0 from "
                        "the given PriorityClass name");
    fx_req(&f, "POST", PODS,
           POD_PC("\"name\":\"p3\"", "\"priorityClassName\":\"system-node-critical\","));
    FX_ASSERT_CODE(&f, 201);
    assert_int_equal(fx_int(&f, "spec.priority"), 2000001000);
    /* An update that leaves priority out keeps the stored one. */
    {
        static const char keep[] = "{\"spec\":{\"priority\":null}}";
        fx_req_ct(&f, "PATCH", PODS "/p3", "application/merge-patch+json", NULL, keep,
                  strlen(keep));
    }
    FX_ASSERT_CODE(&f, 200);
    assert_int_equal(fx_int(&f, "spec.priority"), 2000001000);
    fx_close(&f);
}

/* Creates pod |name| with |containers| (a JSON list) and optional
 * pod-level |res|, and returns its QoS class (static). */
static const char *qos_of(fx *f, const char *name, const char *containers, const char *res)
{
    char body[1024];
    static char qos[32];
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"},"
             "\"spec\":{%s%s%s\"containers\":%s}}",
             name, res ? "\"resources\":" : "", res ? res : "", res ? "," : "", containers);
    fx_req(f, "POST", PODS, body);
    FX_ASSERT_CODE(f, 201);
    snprintf(qos, sizeof qos, "%s", fx_str(f, "status.qosClass"));
    return qos;
}

#define CTR(res) "{\"name\":\"c\",\"image\":\"busybox\",\"resources\":" res "}"

/* The QoS class is computed after defaulting (requests from limits) and
 * compares quantities, not their spelling. */
static void test_pod_qos(void **state)
{
    fx f;
    (void)state;
    fx_open(&f, NULL, 0);
    assert_string_equal(qos_of(&f, "q1", "[" CTR("{}") "]", NULL), "BestEffort");
    assert_string_equal(
        qos_of(&f, "q2",
               "[" CTR("{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"},"
                       "\"limits\":{\"cpu\":\"1000m\",\"memory\":\"1024Mi\"}}") "]",
               NULL),
        "Guaranteed");
    assert_string_equal(qos_of(&f, "q3", "[" CTR("{\"limits\":{\"cpu\":\"2\",\"memory\":\"1G\"}}") "]",
                               NULL),
                        "Guaranteed");
    fx_req(&f, "GET", PODS "/q3", NULL);
    assert_non_null(strstr(f.body, "\"requests\":{\"cpu\":\"2\",\"memory\":\"1G\"}"));
    assert_string_equal(qos_of(&f, "q4", "[" CTR("{\"requests\":{\"cpu\":\"1\"}}") "]", NULL),
                        "Burstable");
    assert_string_equal(qos_of(&f, "q5", "[" CTR("{\"limits\":{\"cpu\":\"1\"}}") "]", NULL),
                        "Burstable");
    assert_string_equal(
        qos_of(&f, "q6",
               "[" CTR("{\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"},"
                       "\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}") "]",
               NULL),
        "Burstable");
    /* Zero values do not count; other resources neither. */
    assert_string_equal(
        qos_of(&f, "q7", "[" CTR("{\"limits\":{\"cpu\":\"0\",\"nvidia.com/gpu\":\"1\"}}") "]",
               NULL),
        "BestEffort");
    /* Pod-level resources decide when present. */
    assert_string_equal(qos_of(&f, "q8", "[" CTR("{}") "]",
                               "{\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}"),
                        "Guaranteed");
    fx_close(&f);
}

/* Namespaces: the kubernetes.io/metadata.name label follows the (final)
 * name over what the client sent, "kubernetes" is appended to the
 * client's finalizers, status is Active. */
static void test_namespace_defaults(void **state)
{
    fx f;
    const dra_doc *fin;
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", "/api/v1/namespaces",
           "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"ns1\","
           "\"labels\":{\"kubernetes.io/metadata.name\":\"other\",\"team\":\"a\"}},"
           "\"spec\":{\"finalizers\":[\"example.com/keep\"]},\"status\":{\"phase\":\"Terminating\"}}");
    FX_ASSERT_CODE(&f, 201);
    assert_non_null(strstr(f.body, "\"labels\":{\"kubernetes.io/metadata.name\":\"ns1\","
                                   "\"team\":\"a\"}"));
    fin = dra_doc_get(dra_doc_get(f.doc, "spec"), "finalizers");
    assert_non_null(fin);
    assert_int_equal(fin->u.list.n, 2);
    assert_string_equal(fin->u.list.items[0]->u.str.s, "example.com/keep");
    assert_string_equal(fin->u.list.items[1]->u.str.s, "kubernetes");
    assert_string_equal(fx_str(&f, "status.phase"), "Active");
    fx_req(&f, "POST", "/api/v1/namespaces",
           "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"generateName\":\"gen-\"}}");
    FX_ASSERT_CODE(&f, 201);
    {
        char want[128];
        snprintf(want, sizeof want, "\"labels\":{\"kubernetes.io/metadata.name\":\"%s\"}",
                 fx_str(&f, "metadata.name"));
        assert_non_null(strstr(f.body, want));
        assert_non_null(strstr(f.body, "\"spec\":{\"finalizers\":[\"kubernetes\"]}"));
    }
    /* The built-in namespaces went through the same path. */
    fx_req(&f, "GET", "/api/v1/namespaces/kube-system", NULL);
    assert_non_null(strstr(f.body, "\"kubernetes.io/metadata.name\":\"kube-system\""));
    assert_non_null(strstr(f.body, "\"finalizers\":[\"kubernetes\"]"));
    fx_close(&f);
}

/* Events: the zero values kube's encoder writes. */
static void test_event_defaults(void **state)
{
    fx f;
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", "/api/v1/namespaces/default/events",
           "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"e1\"},"
           "\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"p\"},\"reason\":\"R\"}");
    FX_ASSERT_CODE(&f, 201);
    assert_non_null(strstr(f.body, "\"reason\":\"R\",\"source\":{},\"firstTimestamp\":null,"
                                   "\"lastTimestamp\":null,"));
    assert_non_null(strstr(f.body, "\"reportingComponent\":\"\",\"reportingInstance\":\"\""));
    fx_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pod_create_defaults),
        cmocka_unit_test(test_pod_apply_again),
        cmocka_unit_test(test_pod_priority_forbidden),
        cmocka_unit_test(test_pod_qos),
        cmocka_unit_test(test_namespace_defaults),
        cmocka_unit_test(test_event_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
