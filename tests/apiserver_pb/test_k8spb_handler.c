/* Protobuf request bodies through drad's request handler (no socket):
 * the bodies kubectl 1.32/1.33 sent create their namespaces (dry run
 * stores nothing), a Namespace with labels, annotations, finalizers and
 * owner references comes back as sent, the write path's checks apply
 * (validation 422, kind/endpoint mismatch 400, AlreadyExists 409),
 * protobuf DeleteOptions steer a DELETE (preconditions 409, a bad
 * propagationPolicy 400), other kinds get kube's 415 and malformed bodies
 * a 400 naming the problem. */
#include "apiserver/api_fixture.h"
#include "pb_enc.h"

#define PB "application/vnd.kubernetes.protobuf"

static int post_pb(fx *f, const char *path, const pbuf *b)
{
    return fx_req_ct(f, "POST", path, PB, NULL, (const char *)b->b, b->n);
}

static char *slurp_data(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/apiserver_pb/data/%s", DRA_SOURCE_DIR, name);
    return dra_test_slurp(path, len);
}

static void post_file(fx *f, const char *file, const char *query, int code)
{
    size_t len;
    char *body = slurp_data(file, &len);
    char path[256];
    snprintf(path, sizeof path, "/api/v1/namespaces%s", query);
    fx_req_ct(f, "POST", path, PB, "application/vnd.kubernetes.protobuf,application/json",
              body, len);
    FX_ASSERT_CODE(f, code);
    free(body);
}

static void test_kubectl_bodies(void **state)
{
    fx f;
    (void)state;
    fx_open(&f, NULL, 0);
    post_file(&f, "kubectl-1.33-create-namespace-dry-run.pb",
              "?dryRun=All&fieldManager=kubectl-create&fieldValidation=Strict", 201);
    assert_string_equal(fx_str(&f, "metadata.name"), "pby");
    fx_req(&f, "GET", "/api/v1/namespaces/pby", NULL);
    FX_ASSERT_CODE(&f, 404);
    post_file(&f, "kubectl-1.33-create-namespace.pb",
              "?fieldManager=kubectl-create&fieldValidation=Strict", 201);
    assert_string_equal(fx_str(&f, "metadata.name"), "pbx");
    assert_string_equal(fx_str(&f, "status.phase"), "Active");
    assert_non_null(fx_str(&f, "metadata.uid"));
    assert_non_null(fx_str(&f, "metadata.creationTimestamp"));
    post_file(&f, "kubectl-1.32-create-namespace.pb", "", 409); /* the same name */
    assert_non_null(strstr(f.body, "namespaces \\\"pbx\\\" already exists"));
    post_file(&f, "kubectl-1.33-create-namespace-save-config.pb", "", 201);
    fx_req(&f, "GET", "/api/v1/namespaces/pbs", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_non_null(strstr(f.body, "\"kubectl.kubernetes.io/last-applied-configuration\":"));
    fx_req(&f, "GET", "/api/v1/namespaces", NULL);
    assert_non_null(strstr(f.body, "\"name\":\"pbx\""));
    assert_non_null(strstr(f.body, "\"name\":\"pbs\""));
    fx_close(&f);
}

/* A Namespace with the ObjectMeta fields a client may set. */
static void rich_namespace(pbuf *body, const char *name)
{
    pbuf meta = {{0}, 0}, e = {{0}, 0}, o = {{0}, 0}, spec = {{0}, 0}, ns = {{0}, 0};
    put_str(&meta, 1, name);
    put_str(&e, 1, "team");
    put_str(&e, 2, "gpu");
    put_msg(&meta, 11, &e);
    e.n = 0;
    put_str(&e, 1, "example.com/note");
    put_str(&e, 2, "hello");
    put_msg(&meta, 12, &e);
    put_str(&o, 5, "v1");
    put_str(&o, 1, "Node");
    put_str(&o, 3, "node05");
    put_str(&o, 4, "0b6c6d5e-0000-4000-8000-000000000001");
    put_tag(&o, 7, 0);
    put_varint(&o, 1);
    put_msg(&meta, 13, &o);
    put_str(&meta, 14, "example.com/hold");
    put_str(&spec, 1, "kubernetes");
    put_str(&spec, 1, "example.com/cleanup");
    put_msg(&ns, 1, &meta);
    put_msg(&ns, 2, &spec);
    envelope(body, "v1", "Namespace", &ns);
}

static void test_rich_namespace(void **state)
{
    fx f;
    pbuf b;
    const dra_doc *fins;
    (void)state;
    fx_open(&f, NULL, 0);
    rich_namespace(&b, "rich");
    post_pb(&f, "/api/v1/namespaces", &b);
    FX_ASSERT_CODE(&f, 201);
    fx_req(&f, "GET", "/api/v1/namespaces/rich", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_string_equal(fx_str(&f, "metadata.labels.team"), "gpu");
    assert_non_null(strstr(f.body, "\"example.com/note\":\"hello\""));
    assert_non_null(strstr(f.body, "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Node\","
                                   "\"name\":\"node05\",\"uid\":\"0b6c6d5e-0000-4000-8000-"
                                   "000000000001\",\"blockOwnerDeletion\":true}]"));
    assert_non_null(strstr(f.body, "\"finalizers\":[\"example.com/hold\"]"));
    /* kube keeps a client's spec.finalizers and adds "kubernetes"; drad's
     * write path (write.c) sets ["kubernetes"] alone, JSON or protobuf,
     * so only that is checked here (reported to its owner) */
    fins = dra_doc_get(dra_doc_get(f.doc, "spec"), "finalizers");
    assert_non_null(fins);
    assert_true(fins->kind == DRA_DOC_LIST && fins->u.list.n >= 1);
    assert_non_null(strstr(f.body, "\"spec\":{\"finalizers\":[\"kubernetes\""));
    /* an empty typeMeta: the endpoint's kind, as kube's decoder does */
    {
        pbuf meta = {{0}, 0}, ns = {{0}, 0};
        put_str(&meta, 1, "untyped");
        put_msg(&ns, 1, &meta);
        envelope(&b, NULL, NULL, &ns);
        post_pb(&f, "/api/v1/namespaces", &b);
        FX_ASSERT_CODE(&f, 201);
        assert_string_equal(fx_str(&f, "kind"), "Namespace");
    }
    fx_close(&f);
}

static void test_write_path_checks(void **state)
{
    fx f;
    pbuf b;
    (void)state;
    fx_open(&f, NULL, 0);
    rich_namespace(&b, "Bad_Name");
    post_pb(&f, "/api/v1/namespaces", &b);
    FX_ASSERT_CODE(&f, 422);
    assert_non_null(strstr(f.body, "metadata.name: Invalid value: \\\"Bad_Name\\\""));
    /* a decodable kind sent to another decodable endpoint */
    envelope(&b, "v1", "DeleteOptions", NULL);
    post_pb(&f, "/api/v1/namespaces", &b);
    FX_ASSERT_CODE(&f, 400);
    assert_string_equal(fx_str(&f, "message"),
                        "DeleteOptions in version \"v1\" cannot be handled as a Namespace: "
                        "the kind in the data does not match the endpoint");
    /* a Namespace sent to pods: that endpoint takes no protobuf at all */
    rich_namespace(&b, "ns-as-pod");
    post_pb(&f, "/api/v1/namespaces/default/pods", &b);
    FX_ASSERT_CODE(&f, 415);
    fx_close(&f);
}

static void delete_options(pbuf *b, const char *uid, const char *policy, int grace)
{
    pbuf o = {{0}, 0}, pre = {{0}, 0};
    if (grace >= 0) {
        put_tag(&o, 1, 0);
        put_varint(&o, (uint64_t)grace);
    }
    if (uid) {
        put_str(&pre, 1, uid);
        put_msg(&o, 2, &pre);
    }
    if (policy)
        put_str(&o, 4, policy);
    envelope(b, "v1", "DeleteOptions", &o);
}

static void test_delete_options(void **state)
{
    fx f;
    pbuf b;
    (void)state;
    fx_open(&f, NULL, 0);
    rich_namespace(&b, "gone");
    post_pb(&f, "/api/v1/namespaces", &b);
    FX_ASSERT_CODE(&f, 201);
    delete_options(&b, "not-its-uid", NULL, -1);
    fx_req_ct(&f, "DELETE", "/api/v1/namespaces/gone", PB, NULL, (const char *)b.b, b.n);
    FX_ASSERT_CODE(&f, 409);
    assert_non_null(strstr(f.body, "Precondition failed: UID in precondition: not-its-uid"));
    delete_options(&b, NULL, "Sideways", -1);
    fx_req_ct(&f, "DELETE", "/api/v1/namespaces/gone", PB, NULL, (const char *)b.b, b.n);
    FX_ASSERT_CODE(&f, 400);
    assert_non_null(strstr(f.body, "Unsupported value: \\\"Sideways\\\""));
    delete_options(&b, NULL, "Background", 0);
    fx_req_ct(&f, "DELETE", "/api/v1/namespaces/gone", PB, NULL, (const char *)b.b, b.n);
    FX_ASSERT_CODE(&f, 200);
    assert_non_null(fx_str(&f, "metadata.deletionTimestamp"));
    fx_close(&f);
}

static void test_refused(void **state)
{
    fx f;
    pbuf b, meta = {{0}, 0}, pod = {{0}, 0};
    (void)state;
    fx_open(&f, NULL, 0);
    put_str(&meta, 1, "p");
    put_msg(&pod, 1, &meta);
    envelope(&b, "v1", "Pod", &pod);
    post_pb(&f, "/api/v1/namespaces/default/pods", &b);
    FX_ASSERT_CODE(&f, 415);
    assert_string_equal(fx_str(&f, "reason"), "UnsupportedMediaType");
    assert_string_equal(fx_str(&f, "message"),
                        "the body of the request was in an unknown format - accepted media "
                        "types include: application/json, application/yaml");
    envelope(&b, "resource.k8s.io/v1", "ResourceClaim", NULL);
    post_pb(&f, "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims", &b);
    FX_ASSERT_CODE(&f, 415);
    fx_req_ct(&f, "POST", "/api/v1/namespaces", PB, NULL, "{\"kind\":\"Namespace\"}", 20);
    FX_ASSERT_CODE(&f, 400);
    assert_string_equal(fx_str(&f, "message"),
                        "protobuf body: provided data does not appear to be a protobuf "
                        "message, expected prefix [107 56 115 0]");
    meta.n = 0;
    put_tag(&meta, 1, 0);
    put_varint(&meta, 1);
    pod.n = 0;
    put_msg(&pod, 1, &meta);
    envelope(&b, "v1", "Namespace", &pod);
    post_pb(&f, "/api/v1/namespaces", &b);
    FX_ASSERT_CODE(&f, 400);
    assert_string_equal(fx_str(&f, "reason"), "BadRequest");
    assert_non_null(strstr(fx_str(&f, "message"),
                           "protobuf body: metadata.name: the field has wire type varint, "
                           "not length-delimited (at byte "));
    fx_req_ct(&f, "POST", "/api/v1/namespaces", PB, NULL, "k8s\0\x0a\x7f", 6);
    FX_ASSERT_CODE(&f, 400);
    fx_req_ct(&f, "POST", "/api/v1/namespaces", PB, NULL, "k8s", 4);
    FX_ASSERT_CODE(&f, 400);
    assert_string_equal(fx_str(&f, "message"), "protobuf body: empty body");
    /* endpoints that take no protobuf answer 415 whatever the body */
    fx_req_ct(&f, "POST", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims", PB,
              NULL, "k8s", 4);
    FX_ASSERT_CODE(&f, 415);
    fx_req_ct(&f, "PUT", "/api/v1/nodes/n1", PB, NULL, "junk", 4);
    FX_ASSERT_CODE(&f, 415);
    fx_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kubectl_bodies),
        cmocka_unit_test(test_rich_namespace),
        cmocka_unit_test(test_write_path_checks),
        cmocka_unit_test(test_delete_options),
        cmocka_unit_test(test_refused),
    };
    if (getenv("DRA_TEST_FILTER"))
        cmocka_set_test_filter(getenv("DRA_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
