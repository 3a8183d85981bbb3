/* Handler-level tests of drad's API server (src/apiserver), one per
 * kube-apiserver semantic of issue 8 point 3: system metadata, 422 with
 * kube's message and causes, conflicts, generateName, generation, the
 * status split, finalizers, garbage collection, namespaces, strict field
 * validation, body limits, malformed bodies, paging, selectors, pods
 * binding and log, discovery, and errors from a full store. Watches are
 * in test_apiserver_watch.c. */
#include "api_fixture.h"

#define CLAIM(name, extra)                                                       \
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","         \
    "\"metadata\":{\"name\":\"" name "\"" extra "},\"spec\":{\"devices\":"       \
    "{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"         \
    "\"gpu.nvidia.com\"}}]}}}"

#define SLICE(name, node, extra)                                                 \
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\","         \
    "\"metadata\":{\"name\":\"" name "\"" extra "},\"spec\":{\"driver\":"        \
    "\"gpu.nvidia.com\",\"nodeName\":\"" node "\",\"pool\":{\"name\":\"" node    \
    "\",\"generation\":1,\"resourceSliceCount\":1},\"devices\":[{\"name\":"      \
    "\"gpu-0\"}]}}"

#define CLAIMS "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
#define SLICES "/apis/resource.k8s.io/v1/resourceslices"

/* A random (version 4, RFC 4122 variant) UUID in lower-case 8-4-4-4-12 form. */
static void assert_uuid4(const char *u)
{
    assert_non_null(u);
    assert_int_equal(strlen(u), 36);
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23)
            assert_int_equal(u[i], '-');
        else
            assert_non_null(strchr("0123456789abcdef", u[i]));
    }
    assert_int_equal(u[14], '4');
    assert_non_null(strchr("89ab", u[19]));
}

static void test_namespaces_exist(void **state)
{
    fx f;
    const char *ns[] = {"default", "kube-system", "kube-public", "kube-node-lease"};
    (void)state;
    fx_open(&f, NULL, 0);
    for (size_t i = 0; i < 4; i++) {
        char p[96];
        snprintf(p, sizeof p, "/api/v1/namespaces/%s", ns[i]);
        fx_req(&f, "GET", p, NULL);
        FX_ASSERT_CODE(&f, 200);
        assert_string_equal(fx_str(&f, "status.phase"), "Active");
        assert_string_equal(fx_str(&f, "kind"), "Namespace");
    }
    fx_req(&f, "GET", "/api/v1/namespaces", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_int_equal(fx_items(&f), 4);
    assert_string_equal(fx_str(&f, "kind"), "NamespaceList");
    assert_non_null(fx_str(&f, "metadata.resourceVersion"));
    fx_close(&f);
}

static void test_create_system_fields(void **state)
{
    fx f;
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", CLAIMS,
           "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
           "\"metadata\":{\"name\":\"c1\",\"uid\":\"mine\",\"generation\":7},"
           "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":"
           "{\"deviceClassName\":\"gpu.nvidia.com\"}}]}},"
           "\"status\":{\"allocation\":{\"devices\":{\"results\":[]}}}}");
    FX_ASSERT_CODE(&f, 201);
    assert_string_equal(fx_str(&f, "metadata.namespace"), "default");
    assert_non_null(fx_str(&f, "metadata.uid"));
    assert_string_not_equal(fx_str(&f, "metadata.uid"), "mine");
    assert_uuid4(fx_str(&f, "metadata.uid"));
    assert_int_equal(strlen(fx_str(&f, "metadata.creationTimestamp")), 20);
    assert_int_equal(fx_int(&f, "metadata.generation"), 1);
    assert_non_null(fx_str(&f, "metadata.resourceVersion"));
    /* Users cannot create a claim with a status (it reads {} as kube
     * writes it); defaults are applied. */
    assert_int_equal(dra_doc_get(f.doc, "status")->u.map.n, 0);
    assert_string_equal(fx_str(&f, "kind"), "ResourceClaim");
    assert_non_null(strstr(f.body, "\"allocationMode\":\"ExactCount\""));
    assert_non_null(strstr(f.body, "\"count\":1"));
    fx_req(&f, "GET", CLAIMS "/c1", NULL);
    FX_ASSERT_CODE(&f, 200);
    fx_req(&f, "GET", CLAIMS "/nope", NULL);
    FX_ASSERT_CODE(&f, 404);
    assert_string_equal(fx_str(&f, "message"),
                        "resourceclaims.resource.k8s.io \"nope\" not found");
    assert_string_equal(fx_str(&f, "reason"), "NotFound");
    assert_string_equal(fx_str(&f, "details.kind"), "resourceclaims");
    assert_string_equal(fx_str(&f, "details.group"), "resource.k8s.io");
    fx_close(&f);
}

static void test_invalid_422(void **state)
{
    fx f;
    const dra_doc *causes;
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", SLICES,
           "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\","
           "\"metadata\":{\"name\":\"bad\"},\"spec\":{\"nodeName\":\"n1\","
           "\"pool\":{\"generation\":1,\"resourceSliceCount\":1}}}");
    FX_ASSERT_CODE(&f, 422);
    assert_string_equal(fx_str(&f, "reason"), "Invalid");
    /* The api module reports an empty driver as required and as not a
     * DNS subdomain, as upstream's validateDriverName does. */
    assert_non_null(strstr(fx_str(&f, "message"),
                           "ResourceSlice.resource.k8s.io \"bad\" is invalid: "
                           "[spec.driver: Required value, spec.driver: Invalid value: \"\": "));
    assert_non_null(strstr(fx_str(&f, "message"), ", spec.pool.name: Required value]"));
    assert_string_equal(fx_str(&f, "details.kind"), "ResourceSlice");
    causes = dra_doc_get(dra_doc_get(f.doc, "details"), "causes");
    assert_non_null(causes);
    assert_int_equal(causes->u.list.n, 3);
    assert_string_equal(dra_doc_get(causes->u.list.items[0], "reason")->u.str.s,
                        "FieldValueRequired");
    assert_string_equal(dra_doc_get(causes->u.list.items[0], "message")->u.str.s,
                        "Required value");
    assert_string_equal(dra_doc_get(causes->u.list.items[0], "field")->u.str.s,
                        "spec.driver");
    /* One cause: no brackets. Missing name and generateName. */
    fx_req(&f, "POST", CLAIMS,
           "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
           "\"metadata\":{},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\","
           "\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\"}}]}}}");
    FX_ASSERT_CODE(&f, 422);
    assert_string_equal(fx_str(&f, "message"),
                        "ResourceClaim.resource.k8s.io \"\" is invalid: metadata.name: "
                        "Required value: name or generateName is required");
    /* Immutable claim spec on update. */
    fx_req(&f, "POST", CLAIMS, CLAIM("c1", ""));
    FX_ASSERT_CODE(&f, 201);
    fx_req(&f, "PUT", CLAIMS "/c1",
           "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
           "\"metadata\":{\"name\":\"c1\"},\"spec\":{\"devices\":{\"requests\":"
           "[{\"name\":\"other\",\"exactly\":{\"deviceClassName\":\"x\"}}]}}}");
    FX_ASSERT_CODE(&f, 422);
    assert_non_null(strstr(fx_str(&f, "message"), "field is immutable"));
    /* A namespace name that is not a DNS label. */
    fx_req(&f, "POST", "/api/v1/namespaces",
           "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"Bad_NS\"}}");
    FX_ASSERT_CODE(&f, 422);
    assert_non_null(strstr(fx_str(&f, "message"),
                           "Namespace \"Bad_NS\" is invalid: metadata.name: Invalid "
                           "value: \"Bad_NS\": a lowercase RFC 1123 label"));
    fx_close(&f);
}

static void test_conflicts(void **state)
{
    fx f;
    char rv[32], body[1024];
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", CLAIMS, CLAIM("c1", ""));
    FX_ASSERT_CODE(&f, 201);
    snprintf(rv, sizeof rv, "%s", fx_str(&f, "metadata.resourceVersion"));
    fx_req(&f, "POST", CLAIMS, CLAIM("c1", ""));
    FX_ASSERT_CODE(&f, 409);
    assert_string_equal(fx_str(&f, "reason"), "AlreadyExists");
    assert_string_equal(fx_str(&f, "message"),
                        "resourceclaims.resource.k8s.io \"c1\" already exists");
    /* An update from the current version wins; the same version again
     * is stale. */
    snprintf(body, sizeof body, CLAIM("c1", ",\"resourceVersion\":\"%s\",\"labels\":{\"a\":\"1\"}"), rv);
    fx_req(&f, "PUT", CLAIMS "/c1", body);
    FX_ASSERT_CODE(&f, 200);
    assert_string_not_equal(fx_str(&f, "metadata.resourceVersion"), rv);
    snprintf(body, sizeof body, CLAIM("c1", ",\"resourceVersion\":\"%s\",\"labels\":{\"a\":\"2\"}"), rv);
    fx_req(&f, "PUT", CLAIMS "/c1", body);
    FX_ASSERT_CODE(&f, 409);
    assert_string_equal(fx_str(&f, "reason"), "Conflict");
    assert_string_equal(fx_str(&f, "message"),
                        "Operation cannot be fulfilled on resourceclaims.resource.k8s.io "
                        "\"c1\": the object has been modified; please apply your changes "
                        "to the latest version and try again");
    /* Without a version the update is unconditional. */
    fx_req(&f, "PUT", CLAIMS "/c1", CLAIM("c1", ",\"labels\":{\"a\":\"3\"}"));
    FX_ASSERT_CODE(&f, 200);
    assert_string_equal(fx_str(&f, "metadata.labels.a"), "3");
    /* Name in the body and in the URL must agree. */
    fx_req(&f, "PUT", CLAIMS "/c1", CLAIM("c2", ""));
    FX_ASSERT_CODE(&f, 400);
    fx_req(&f, "PUT", CLAIMS "/absent", CLAIM("absent", ""));
    FX_ASSERT_CODE(&f, 404);
    fx_close(&f);
}

static void test_generate_name(void **state)
{
    fx f;
    char n1[80];
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", CLAIMS,
           "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
           "\"metadata\":{\"generateName\":\"pod-gpu-\"},\"spec\":{\"devices\":"
           "{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"c\"}}]}}}");
    FX_ASSERT_CODE(&f, 201);
    snprintf(n1, sizeof n1, "%s", fx_str(&f, "metadata.name"));
    assert_int_equal(strlen(n1), strlen("pod-gpu-") + 5);
    assert_memory_equal(n1, "pod-gpu-", 8);
    for (size_t i = 8; i < strlen(n1); i++)
        assert_non_null(strchr("bcdfghjklmnpqrstvwxz2456789", n1[i]));
    assert_string_equal(fx_str(&f, "metadata.generateName"), "pod-gpu-");
    assert_uuid4(fx_str(&f, "metadata.uid"));
    fx_close(&f);
}

static void test_generation(void **state)
{
    fx f;
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", SLICES, SLICE("s1", "n1", ""));
    FX_ASSERT_CODE(&f, 201);
    assert_int_equal(fx_int(&f, "metadata.generation"), 1);
    /* Metadata only: generation stays. */
    fx_req(&f, "PUT", SLICES "/s1", SLICE("s1", "n1", ",\"labels\":{\"x\":\"y\"}"));
    FX_ASSERT_CODE(&f, 200);
    assert_int_equal(fx_int(&f, "metadata.generation"), 1);
    /* A spec change bumps it (nodeName is immutable: change devices). */
    fx_req(&f, "PUT", SLICES "/s1",
           "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\","
           "\"metadata\":{\"name\":\"s1\"},\"spec\":{\"driver\":\"gpu.nvidia.com\","
           "\"nodeName\":\"n1\",\"pool\":{\"name\":\"n1\",\"generation\":2,"
           "\"resourceSliceCount\":1},\"devices\":[{\"name\":\"gpu-0\"},{\"name\":\"gpu-1\"}]}}");
    FX_ASSERT_CODE(&f, 200);
    assert_int_equal(fx_int(&f, "metadata.generation"), 2);
    /* An update that changes nothing writes nothing. */
    {
        char rv[32];
        snprintf(rv, sizeof rv, "%s", fx_str(&f, "metadata.resourceVersion"));
        fx_req(&f, "PUT", SLICES "/s1",
               "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\","
               "\"metadata\":{\"name\":\"s1\"},\"spec\":{\"driver\":\"gpu.nvidia.com\","
               "\"nodeName\":\"n1\",\"pool\":{\"name\":\"n1\",\"generation\":2,"
               "\"resourceSliceCount\":1},\"devices\":[{\"name\":\"gpu-0\"},{\"name\":\"gpu-1\"}]}}");
        FX_ASSERT_CODE(&f, 200);
        assert_string_equal(fx_str(&f, "metadata.resourceVersion"), rv);
    }
    fx_close(&f);
}

#define ALLOCATED                                                                \
    ",\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"gpu\"," \
    "\"driver\":\"gpu.nvidia.com\",\"pool\":\"n1\",\"device\":\"gpu-0\"}]}}}"

static void test_status_split(void **state)
{
    fx f;
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", CLAIMS, CLAIM("c1", ""));
    FX_ASSERT_CODE(&f, 201);
    /* The main resource ignores status. */
    fx_req(&f, "PUT", CLAIMS "/c1",
           "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
           "\"metadata\":{\"name\":\"c1\",\"labels\":{\"l\":\"1\"}},\"spec\":{\"devices\":"
           "{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"
           "\"gpu.nvidia.com\"}}]}}" ALLOCATED "}");
    FX_ASSERT_CODE(&f, 200);
    assert_int_equal(dra_doc_get(f.doc, "status")->u.map.n, 0);
    assert_string_equal(fx_str(&f, "metadata.labels.l"), "1");
    /* The status subresource takes status and ignores spec and labels. */
    fx_req(&f, "PUT", CLAIMS "/c1/status",
           "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
           "\"metadata\":{\"name\":\"c1\",\"labels\":{\"l\":\"2\"}},\"spec\":{\"devices\":"
           "{\"requests\":[{\"name\":\"other\",\"exactly\":{\"deviceClassName\":"
           "\"x\"}}]}}" ALLOCATED "}");
    FX_ASSERT_CODE(&f, 200);
    assert_non_null(strstr(f.body, "\"device\":\"gpu-0\""));
    assert_string_equal(fx_str(&f, "metadata.labels.l"), "1");
    assert_non_null(strstr(f.body, "\"deviceClassName\":\"gpu.nvidia.com\""));
    fx_req(&f, "GET", CLAIMS "/c1/status", NULL);
    FX_ASSERT_CODE(&f, 200);
    /* Status validation: reservedFor needs an allocation. */
    fx_req(&f, "POST", CLAIMS, CLAIM("c2", ""));
    fx_req(&f, "PUT", CLAIMS "/c2/status",
           "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
           "\"metadata\":{\"name\":\"c2\"},\"status\":{\"reservedFor\":[{\"resource\":"
           "\"pods\",\"name\":\"p\",\"uid\":\"u1\"}]}}");
    FX_ASSERT_CODE(&f, 422);
    /* Slices have no status subresource. */
    fx_req(&f, "GET", SLICES "/x/status", NULL);
    FX_ASSERT_CODE(&f, 404);
    fx_close(&f);
}

static void test_finalizers(void **state)
{
    fx f;
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", CLAIMS, CLAIM("c1", ",\"finalizers\":[\"example.com/hold\"]"));
    FX_ASSERT_CODE(&f, 201);
    fx_req(&f, "DELETE", CLAIMS "/c1", "{\"propagationPolicy\":\"Background\"}");
    FX_ASSERT_CODE(&f, 200);
    assert_non_null(fx_str(&f, "metadata.deletionTimestamp"));
    assert_int_equal(fx_int(&f, "metadata.deletionGracePeriodSeconds"), 0);
    assert_int_equal(fx_int(&f, "metadata.generation"), 2);
    /* Still there; a second delete changes nothing. */
    fx_req(&f, "GET", CLAIMS "/c1", NULL);
    FX_ASSERT_CODE(&f, 200);
    fx_req(&f, "DELETE", CLAIMS "/c1", NULL);
    FX_ASSERT_CODE(&f, 200);
    /* A create with the name of an object being deleted. */
    fx_req(&f, "POST", CLAIMS, CLAIM("c1", ""));
    FX_ASSERT_CODE(&f, 409);
    assert_non_null(strstr(fx_str(&f, "message"), "object is being deleted: "));
    /* Removing the last finalizer completes the deletion. */
    fx_req(&f, "PUT", CLAIMS "/c1", CLAIM("c1", ""));
    FX_ASSERT_CODE(&f, 200);
    fx_req(&f, "GET", CLAIMS "/c1", NULL);
    FX_ASSERT_CODE(&f, 404);
    /* Without finalizers, gone at once; kinds without the object answer
     * with a Status. */
    fx_req(&f, "POST", "/api/v1/namespaces/default/events",
           "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"e1\"},"
           "\"reason\":\"Test\",\"message\":\"hello\",\"type\":\"Normal\","
           "\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"p\",\"namespace\":\"default\"}}");
    FX_ASSERT_CODE(&f, 201);
    fx_req(&f, "DELETE", "/api/v1/namespaces/default/events/e1", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_string_equal(fx_str(&f, "kind"), "Status");
    assert_string_equal(fx_str(&f, "status"), "Success");
    fx_req(&f, "DELETE", "/api/v1/namespaces/default/events/e1", NULL);
    FX_ASSERT_CODE(&f, 404);
    fx_close(&f);
}

static void test_delete_preconditions(void **state)
{
    fx f;
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", CLAIMS, CLAIM("c1", ""));
    FX_ASSERT_CODE(&f, 201);
    fx_req(&f, "DELETE", CLAIMS "/c1", "{\"preconditions\":{\"uid\":\"wrong\"}}");
    FX_ASSERT_CODE(&f, 409);
    assert_non_null(strstr(fx_str(&f, "message"),
                           "Precondition failed: UID in precondition: wrong, UID in object meta: "));
    fx_req(&f, "DELETE", CLAIMS "/c1", "{\"preconditions\":{\"resourceVersion\":\"1\"}}");
    FX_ASSERT_CODE(&f, 409);
    fx_req(&f, "DELETE", CLAIMS "/c1", "{\"propagationPolicy\":\"Sideways\"}");
    FX_ASSERT_CODE(&f, 400);
    fx_req(&f, "DELETE", CLAIMS "/c1", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_string_equal(fx_str(&f, "kind"), "ResourceClaim");
    fx_close(&f);
}

#define NODE(name)                                                               \
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"" name "\"}}"

/* A slice owned by a node goes when the node goes (background). */
static void test_gc_background(void **state)
{
    fx f;
    char body[2048], uid[64];
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", "/api/v1/nodes", NODE("n1"));
    FX_ASSERT_CODE(&f, 201);
    snprintf(uid, sizeof uid, "%s", fx_str(&f, "metadata.uid"));
    snprintf(body, sizeof body,
             SLICE("s1", "n1", ",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":"
                               "\"Node\",\"name\":\"n1\",\"uid\":\"%s\",\"controller\":true}]"),
             uid);
    fx_req(&f, "POST", SLICES, body);
    FX_ASSERT_CODE(&f, 201);
    /* An owner reference to a node that does not exist (wrong uid). */
    fx_req(&f, "POST", SLICES,
           SLICE("s2", "n1", ",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":"
                             "\"Node\",\"name\":\"n1\",\"uid\":\"other\"}]"));
    FX_ASSERT_CODE(&f, 201);
    assert_true(fx_wait_code(&f, SLICES "/s2", 404));
    fx_req(&f, "GET", SLICES "/s1", NULL);
    FX_ASSERT_CODE(&f, 200);
    fx_req(&f, "DELETE", "/api/v1/nodes/n1", "{\"propagationPolicy\":\"Background\"}");
    FX_ASSERT_CODE(&f, 200);
    assert_true(fx_wait_code(&f, SLICES "/s1", 404));
    fx_close(&f);
}

static void owned_slice(fx *f, const char *name, const char *uid, int block)
{
    char body[2048];
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\","
             "\"metadata\":{\"name\":\"%s\",\"ownerReferences\":[{\"apiVersion\":\"v1\","
             "\"kind\":\"Node\",\"name\":\"n1\",\"uid\":\"%s\",\"blockOwnerDeletion\":%s}]"
             "%s},\"spec\":{\"driver\":\"d.example.com\",\"nodeName\":\"n1\",\"pool\":{\"name\":"
             "\"p\",\"generation\":1,\"resourceSliceCount\":1},\"devices\":[]}}",
             name, uid, block ? "true" : "false",
             block ? ",\"finalizers\":[\"example.com/hold\"]" : "");
    fx_req(f, "POST", SLICES, body);
    FX_ASSERT_CODE(f, 201);
}

/* Foreground: the owner stays, marked, until blocking dependents are gone. */
static void test_gc_foreground(void **state)
{
    fx f;
    char uid[64];
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", "/api/v1/nodes", NODE("n1"));
    snprintf(uid, sizeof uid, "%s", fx_str(&f, "metadata.uid"));
    owned_slice(&f, "blocker", uid, 1);
    owned_slice(&f, "free", uid, 0);
    fx_req(&f, "DELETE", "/api/v1/nodes/n1", "{\"propagationPolicy\":\"Foreground\"}");
    FX_ASSERT_CODE(&f, 200);
    assert_non_null(strstr(f.body, "foregroundDeletion"));
    assert_true(fx_wait_code(&f, SLICES "/free", 404));
    /* The blocker is marked but held by its own finalizer: the node waits. */
    fx_req(&f, "GET", SLICES "/blocker", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_non_null(fx_str(&f, "metadata.deletionTimestamp"));
    fx_req(&f, "GET", "/api/v1/nodes/n1", NULL);
    FX_ASSERT_CODE(&f, 200);
    /* Release it: then the node goes. */
    {
        char body[2048];
        snprintf(body, sizeof body,
                 "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\","
                 "\"metadata\":{\"name\":\"blocker\",\"ownerReferences\":[{\"apiVersion\":"
                 "\"v1\",\"kind\":\"Node\",\"name\":\"n1\",\"uid\":\"%s\","
                 "\"blockOwnerDeletion\":true}]},\"spec\":{\"driver\":\"d.example.com\","
                 "\"nodeName\":\"n1\",\"pool\":{\"name\":\"p\",\"generation\":1,"
                 "\"resourceSliceCount\":1},\"devices\":[]}}", uid);
        fx_req(&f, "PUT", SLICES "/blocker", body);
        FX_ASSERT_CODE(&f, 200);
    }
    assert_true(fx_wait_code(&f, SLICES "/blocker", 404));
    assert_true(fx_wait_code(&f, "/api/v1/nodes/n1", 404));
    fx_close(&f);
}

static void test_gc_orphan(void **state)
{
    fx f;
    char uid[64];
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", "/api/v1/nodes", NODE("n1"));
    snprintf(uid, sizeof uid, "%s", fx_str(&f, "metadata.uid"));
    owned_slice(&f, "kept", uid, 0);
    fx_req(&f, "DELETE", "/api/v1/nodes/n1", "{\"propagationPolicy\":\"Orphan\"}");
    FX_ASSERT_CODE(&f, 200);
    assert_true(fx_wait_code(&f, "/api/v1/nodes/n1", 404));
    fx_req(&f, "GET", SLICES "/kept", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_null(strstr(f.body, "ownerReferences"));
    fx_close(&f);
}

/* Orphan with owner and dependent of the same resource: the collector's
 * listing still shows the dependent's old reference after the owner
 * stripped it; the dependent must stay (found by tests/e2e with kubectl
 * delete --cascade=orphan). "c1" sorts before "child". */
static void test_gc_orphan_same_resource(void **state)
{
    fx f;
    char uid[64], body[1024];
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", CLAIMS, CLAIM("c1", ""));
    FX_ASSERT_CODE(&f, 201);
    snprintf(uid, sizeof uid, "%s", fx_str(&f, "metadata.uid"));
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
             "\"metadata\":{\"name\":\"child\",\"ownerReferences\":[{\"apiVersion\":"
             "\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"name\":\"c1\",\"uid\":"
             "\"%s\",\"controller\":true,\"blockOwnerDeletion\":true}]},\"spec\":"
             "{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":"
             "{\"deviceClassName\":\"gpu.nvidia.com\"}}]}}}", uid);
    fx_req(&f, "POST", CLAIMS, body);
    FX_ASSERT_CODE(&f, 201);
    fx_req(&f, "DELETE", CLAIMS "/c1", "{\"propagationPolicy\":\"Orphan\"}");
    FX_ASSERT_CODE(&f, 200);
    assert_true(fx_wait_code(&f, CLAIMS "/c1", 404));
    fx_req(&f, "GET", CLAIMS "/child", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_null(strstr(f.body, "ownerReferences"));
    fx_close(&f);
}

static void test_namespace_deletion(void **state)
{
    fx f;
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", "/api/v1/namespaces",
           "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"team\"}}");
    FX_ASSERT_CODE(&f, 201);
    assert_non_null(strstr(f.body, "\"finalizers\":[\"kubernetes\"]"));
    fx_req(&f, "POST", "/apis/resource.k8s.io/v1/namespaces/team/resourceclaims",
           CLAIM("c1", ""));
    FX_ASSERT_CODE(&f, 201);
    fx_req(&f, "POST", "/apis/resource.k8s.io/v1/namespaces/team/resourceclaims",
           CLAIM("held", ",\"finalizers\":[\"example.com/hold\"]"));
    FX_ASSERT_CODE(&f, 201);
    fx_req(&f, "POST", "/apis/resource.k8s.io/v1/namespaces/nowhere/resourceclaims",
           CLAIM("c1", ""));
    FX_ASSERT_CODE(&f, 404);
    assert_string_equal(fx_str(&f, "message"), "namespaces \"nowhere\" not found");
    fx_req(&f, "DELETE", "/api/v1/namespaces/team", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_string_equal(fx_str(&f, "status.phase"), "Terminating");
    fx_req(&f, "POST", "/apis/resource.k8s.io/v1/namespaces/team/resourceclaims",
           CLAIM("c2", ""));
    FX_ASSERT_CODE(&f, 403);
    assert_string_equal(fx_str(&f, "message"),
                        "resourceclaims.resource.k8s.io \"c2\" is forbidden: unable to "
                        "create new content in namespace team because it is being terminated");
    assert_true(fx_wait_code(&f, "/apis/resource.k8s.io/v1/namespaces/team/resourceclaims/c1", 404));
    /* The held claim keeps the namespace until it goes. */
    fx_req(&f, "GET", "/api/v1/namespaces/team", NULL);
    FX_ASSERT_CODE(&f, 200);
    fx_req(&f, "PUT", "/apis/resource.k8s.io/v1/namespaces/team/resourceclaims/held",
           CLAIM("held", ""));
    FX_ASSERT_CODE(&f, 200);
    assert_true(fx_wait_code(&f, "/api/v1/namespaces/team", 404));
    fx_close(&f);
}

static void test_strict_fields(void **state)
{
    fx f;
    const char *body =
        "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
        "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"foo\":1,\"devices\":{\"requests\":"
        "[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"c\"}}]}}}";
    char b[1024];
    (void)state;
    fx_open(&f, NULL, 0);
    snprintf(b, sizeof b, body, "s");
    fx_req(&f, "POST", CLAIMS "?fieldValidation=Strict", b);
    FX_ASSERT_CODE(&f, 400);
    /* kube-apiserver's create/update wording (transformDecodeError). */
    assert_string_equal(fx_str(&f, "message"),
                        "ResourceClaim in version \"v1\" cannot be handled as a ResourceClaim: "
                        "strict decoding error: unknown field \"spec.foo\"");
    snprintf(b, sizeof b, body, "w");
    fx_req(&f, "POST", CLAIMS "?fieldValidation=Warn", b);
    FX_ASSERT_CODE(&f, 201);
    assert_string_equal(f.warning, "299 - \"unknown field \\\"spec.foo\\\"\"");
    /* Accepted with a warning, but not stored, as kube's decoding drops it. */
    assert_null(strstr(f.body, "\"foo\""));
    fx_req(&f, "PUT", CLAIMS "/w?fieldValidation=Strict", b);
    FX_ASSERT_CODE(&f, 400);
    assert_string_equal(fx_str(&f, "message"),
                        "ResourceClaim in version \"v1\" cannot be handled as a ResourceClaim: "
                        "strict decoding error: unknown field \"spec.foo\"");
    /* A patch reports the bare strict decoding error, as kube's patcher. */
    fx_req(&f, "POST", CLAIMS, CLAIM("p", ""));
    FX_ASSERT_CODE(&f, 201);
    {
        const char *pb = "{\"metadata\":{\"labels\":{\"a\":\"b\"}},\"spec\":{\"bar\":1}}";
        fx_req_ct(&f, "PATCH", CLAIMS "/p?fieldValidation=Strict",
                  "application/merge-patch+json", NULL, pb, strlen(pb));
    }
    FX_ASSERT_CODE(&f, 400);
    assert_string_equal(fx_str(&f, "message"), "strict decoding error: unknown field \"spec.bar\"");
    snprintf(b, sizeof b, body, "i");
    fx_req(&f, "POST", CLAIMS "?fieldValidation=Ignore", b);
    FX_ASSERT_CODE(&f, 201);
    assert_string_equal(f.warning, "");
    assert_null(strstr(f.body, "\"foo\""));
    /* Deeper unknown fields, inside list items, go too. */
    fx_req(&f, "POST", CLAIMS "?fieldValidation=Ignore",
           "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
           "\"metadata\":{\"name\":\"deep\"},\"spec\":{\"devices\":{\"requests\":"
           "[{\"name\":\"gpu\",\"zap\":1,\"exactly\":{\"deviceClassName\":\"c\",\"zip\":2}}]}}}");
    FX_ASSERT_CODE(&f, 201);
    assert_null(strstr(f.body, "\"zap\""));
    assert_null(strstr(f.body, "\"zip\""));
    /* Unknown names that look like paths ("a.", "b[0]") go too, at the
     * top level and in a pod (fuzz_apiserver found a 500 with no body). */
    fx_req(&f, "POST", CLAIMS "?fieldValidation=Warn",
           "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
           "\"apiVersion.\":1,\"metadata\":{\"name\":\"dots\",\"b[0]\":2},\"spec\":{}}");
    FX_ASSERT_CODE(&f, 201);
    assert_null(strstr(f.body, "\"apiVersion.\""));
    assert_null(strstr(f.body, "b[0]"));
    fx_req(&f, "POST", "/api/v1/namespaces/default/pods?fieldValidation=Ignore",
           "{\"apiVersion.\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},"
           "\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"i\"}]}}");
    FX_ASSERT_CODE(&f, 201);
    assert_null(strstr(f.body, "\"apiVersion.\""));
    assert_non_null(strstr(f.body, "\"apiVersion\":\"v1\""));
    fx_req(&f, "POST", CLAIMS "?fieldValidation=Loose", b);
    FX_ASSERT_CODE(&f, 400);
    /* A duplicate field is refused by the decoder. */
    fx_req(&f, "POST", CLAIMS "?fieldValidation=Strict",
           "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
           "\"metadata\":{\"name\":\"d\",\"name\":\"e\"},\"spec\":{}}");
    FX_ASSERT_CODE(&f, 400);
    assert_non_null(strstr(fx_str(&f, "message"), "duplicate"));
    fx_close(&f);
}

static void test_bodies(void **state)
{
    fx f;
    size_t big = (3u << 20) + 1;
    char *b = malloc(big);
    (void)state;
    fx_open(&f, NULL, 0);
    memset(b, ' ', big);
    b[0] = '{';
    b[big - 1] = '}';
    fx_req_ct(&f, "POST", CLAIMS, NULL, NULL, b, big);
    FX_ASSERT_CODE(&f, 413);
    assert_string_equal(fx_str(&f, "reason"), "RequestEntityTooLarge");
    free(b);
    fx_req(&f, "POST", CLAIMS, "{\"apiVersion\": ");
    FX_ASSERT_CODE(&f, 400);
    assert_non_null(strstr(fx_str(&f, "message"), "json parse error"));
    fx_req(&f, "POST", CLAIMS, "[1,2]");
    FX_ASSERT_CODE(&f, 400);
    {
        static const char y[] =
            "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n"
            "  name: from-yaml\nspec:\n  devices:\n    requests:\n    - name: gpu\n"
            "      exactly:\n        deviceClassName: c\n";
        fx_req_ct(&f, "POST", CLAIMS, "application/yaml", NULL, y, sizeof y - 1);
    }
    FX_ASSERT_CODE(&f, 201);
    fx_req_ct(&f, "POST", CLAIMS, "application/yaml", NULL, "a: [b\n", 6);
    FX_ASSERT_CODE(&f, 400);
    assert_non_null(strstr(fx_str(&f, "message"), "yaml parse error"));
    fx_req_ct(&f, "POST", CLAIMS, "application/vnd.kubernetes.protobuf", NULL,
              "k8s\0", 4);
    FX_ASSERT_CODE(&f, 415);
    /* Wrong group version in the body. */
    fx_req(&f, "POST", CLAIMS,
           "{\"apiVersion\":\"v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"v\"}}");
    FX_ASSERT_CODE(&f, 400);
    assert_string_equal(fx_str(&f, "message"),
                        "the API version in the data (v1) does not match the expected "
                        "API version (resource.k8s.io/v1)");
    /* Namespace mismatch. */
    fx_req(&f, "POST", CLAIMS, CLAIM("m", ",\"namespace\":\"other\""));
    FX_ASSERT_CODE(&f, 400);
    fx_close(&f);
}

static void test_list_paging(void **state)
{
    fx f;
    char tok[512];
    (void)state;
    fx_open(&f, NULL, 0);
    for (int i = 0; i < 7; i++) {
        char body[1024], name[16];
        snprintf(name, sizeof name, "c%d", i);
        snprintf(body, sizeof body,
                 "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
                 "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"devices\":{\"requests\":"
                 "[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"c\"}}]}}}", name);
        fx_req(&f, "POST", CLAIMS, body);
        FX_ASSERT_CODE(&f, 201);
    }
    fx_req(&f, "GET", CLAIMS "?limit=3", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_int_equal(fx_items(&f), 3);
    assert_string_equal(fx_str(&f, "kind"), "ResourceClaimList");
    assert_string_equal(fx_str(&f, "apiVersion"), "resource.k8s.io/v1");
    assert_int_equal(fx_int(&f, "metadata.remainingItemCount"), 4);
    snprintf(tok, sizeof tok, "%s", fx_str(&f, "metadata.continue"));
    {
        char p[700];
        snprintf(p, sizeof p, CLAIMS "?limit=3&continue=%s", tok);
        fx_req(&f, "GET", p, NULL);
        FX_ASSERT_CODE(&f, 200);
        assert_int_equal(fx_items(&f), 3);
        assert_string_equal(dra_doc_get(dra_doc_get(dra_doc_get(f.doc, "items")->u.list.items[0],
                                                    "metadata"), "name")->u.str.s, "c3");
        snprintf(tok, sizeof tok, "%s", fx_str(&f, "metadata.continue"));
        snprintf(p, sizeof p, CLAIMS "?limit=3&continue=%s", tok);
        fx_req(&f, "GET", p, NULL);
        FX_ASSERT_CODE(&f, 200);
        assert_int_equal(fx_items(&f), 1);
        assert_null(fx_str(&f, "metadata.continue"));
    }
    /* With a selector the count of what remains is unknown: omitted,
     * as kube-apiserver does; the continue token is still there. */
    fx_req(&f, "GET", CLAIMS "?limit=3&fieldSelector=metadata.name!%3Dc0", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_int_equal(fx_items(&f), 3);
    assert_int_equal(fx_int(&f, "metadata.remainingItemCount"), -1);
    assert_non_null(fx_str(&f, "metadata.continue"));
    fx_req(&f, "GET", CLAIMS "?limit=6&fieldSelector=metadata.name!%3Dc0", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_int_equal(fx_items(&f), 6);
    assert_null(fx_str(&f, "metadata.continue"));
    fx_req(&f, "GET", CLAIMS "?limit=7", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_int_equal(fx_items(&f), 7);
    assert_null(fx_str(&f, "metadata.continue"));
    fx_req(&f, "GET", CLAIMS "?limit=6", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_int_equal(fx_int(&f, "metadata.remainingItemCount"), 1);
    fx_req(&f, "GET", CLAIMS "?continue=garbage!!", NULL);
    FX_ASSERT_CODE(&f, 400);
    /* Across namespaces. */
    fx_req(&f, "GET", "/apis/resource.k8s.io/v1/resourceclaims", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_int_equal(fx_items(&f), 7);
    fx_close(&f);
}

static void test_selectors(void **state)
{
    fx f;
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", SLICES, SLICE("a", "n1", ",\"labels\":{\"tier\":\"gold\"}"));
    fx_req(&f, "POST", SLICES, SLICE("b", "n2", ",\"labels\":{\"tier\":\"silver\"}"));
    fx_req(&f, "POST", SLICES, SLICE("c", "n1", ""));
    FX_ASSERT_CODE(&f, 201);
    fx_req(&f, "GET", SLICES "?labelSelector=tier%3Dgold", NULL);
    assert_int_equal(fx_items(&f), 1);
    fx_req(&f, "GET", SLICES "?labelSelector=tier", NULL);
    assert_int_equal(fx_items(&f), 2);
    fx_req(&f, "GET", SLICES "?labelSelector=tier+notin+(gold)", NULL);
    assert_int_equal(fx_items(&f), 2);
    fx_req(&f, "GET", SLICES "?fieldSelector=spec.nodeName%3Dn1", NULL);
    assert_int_equal(fx_items(&f), 2);
    fx_req(&f, "GET", SLICES "?fieldSelector=spec.nodeName%3Dn1,metadata.name%3Dc", NULL);
    assert_int_equal(fx_items(&f), 1);
    /* By name: one lookup, the other terms still apply. */
    fx_req(&f, "GET", SLICES "?fieldSelector=metadata.name%3Da", NULL);
    assert_int_equal(fx_items(&f), 1);
    fx_req(&f, "GET", SLICES "?fieldSelector=metadata.name%3Da,spec.nodeName%3Dn2", NULL);
    assert_int_equal(fx_items(&f), 0);
    fx_req(&f, "GET", SLICES "?fieldSelector=metadata.name%3Dnone", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_int_equal(fx_items(&f), 0);
    fx_req(&f, "GET", SLICES "?fieldSelector=spec.pool.name%3Dn1", NULL);
    FX_ASSERT_CODE(&f, 400);
    fx_req(&f, "GET", SLICES "?labelSelector=a+b", NULL);
    FX_ASSERT_CODE(&f, 400);
    /* deletecollection with a field selector, as the kubelet does. */
    fx_req(&f, "DELETE", SLICES "?fieldSelector=spec.nodeName%3Dn1", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_int_equal(fx_items(&f), 2);
    fx_req(&f, "GET", SLICES, NULL);
    assert_int_equal(fx_items(&f), 1);
    fx_close(&f);
}

#define POD(name, node)                                                          \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" name "\"},"  \
    "\"spec\":{" node "\"containers\":[{\"name\":\"main\",\"image\":\"busybox\"}]}}"

static dra_err fake_log(void *ud, const char *ns, const char *name,
                        const char *uid, const dra_log_opts *o, dra_stream **out,
                        dra_kstatus *st);

/* kube's ValidatePodUpdate through the main resource: images and added
 * tolerations may change, nothing else in the spec; binding still sets
 * nodeName (found by tests/e2e: kubectl apply of the seed pod again must be
 * refused, its default tolerations being dropped). */
static void test_pod_update_rules(void **state)
{
    fx f;
    char *rv;
    const char *p = "/api/v1/namespaces/default/pods/p1";
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", "/api/v1/namespaces/default/pods",
           "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\"},"
           "\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"main\","
           "\"image\":\"busybox\"}],\"tolerations\":[{\"key\":\"g\",\"operator\":\"Exists\"}]}}");
    FX_ASSERT_CODE(&f, 201);
#define MERGE(body)                                                              \
    fx_req_ct(&f, "PATCH", p, "application/merge-patch+json", NULL, body, strlen(body))
    /* DefaultTolerationSeconds acts on updates before ValidatePodUpdate:
     * a list without the default tolerations gets them back, so sending
     * the created list again changes nothing. */
    fx_req(&f, "GET", p, NULL);
    rv = strdup(fx_str(&f, "metadata.resourceVersion"));
    MERGE("{\"spec\":{\"tolerations\":[{\"key\":\"g\",\"operator\":\"Exists\"}]}}");
    FX_ASSERT_CODE(&f, 200);
    assert_string_equal(fx_str(&f, "metadata.resourceVersion"), rv);
    free(rv);
    MERGE("{\"spec\":{\"tolerations\":[]}}");
    FX_ASSERT_CODE(&f, 422);
    assert_string_equal(fx_str(&f, "message"),
                        "Pod \"p1\" is invalid: spec.tolerations: Forbidden: existing toleration "
                        "can not be modified except its tolerationSeconds");
    assert_non_null(strstr(f.body, "\"reason\":\"FieldValueForbidden\""));
    assert_non_null(strstr(f.body, "\"field\":\"spec.tolerations\""));
    MERGE("{\"spec\":{\"restartPolicy\":\"Always\"}}");
    FX_ASSERT_CODE(&f, 422);
    assert_non_null(strstr(fx_str(&f, "message"),
                           "Pod \"p1\" is invalid: spec: Forbidden: pod updates may not change "
                           "fields other than `spec.containers[*].image`,"));
    assert_non_null(strstr(fx_str(&f, "message"), "spec.restartPolicy: \"Never\" -> \"Always\""));
    {
        const char *b = "[{\"op\":\"add\",\"path\":\"/spec/containers/-\","
                        "\"value\":{\"name\":\"c2\",\"image\":\"x\"}}]";
        fx_req_ct(&f, "PATCH", p, "application/json-patch+json", NULL, b, strlen(b));
        FX_ASSERT_CODE(&f, 422);
        assert_non_null(strstr(f.body, "\"field\":\"spec.containers\""));
    }
    /* Allowed: an image (strategic: a merge patch would replace the list
     * and default imagePullPolicy anew, which kube refuses too), an added
     * toleration, activeDeadlineSeconds, labels. */
    {
        const char *b = "{\"metadata\":{\"labels\":{\"a\":\"b\"}},\"spec\":{"
                        "\"activeDeadlineSeconds\":60,\"containers\":[{\"name\":\"main\","
                        "\"image\":\"busybox:2\"}]}}";
        fx_req_ct(&f, "PATCH", p, "application/strategic-merge-patch+json", NULL, b, strlen(b));
        FX_ASSERT_CODE(&f, 200);
    }
    {
        const char *b = "[{\"op\":\"add\",\"path\":\"/spec/tolerations/-\",\"value\":"
                        "{\"key\":\"h\",\"operator\":\"Exists\",\"effect\":\"NoExecute\","
                        "\"tolerationSeconds\":5}}]";
        fx_req_ct(&f, "PATCH", p, "application/json-patch+json", NULL, b, strlen(b));
        FX_ASSERT_CODE(&f, 200);
    }
#undef MERGE
    fx_req(&f, "POST", "/api/v1/namespaces/default/pods/p1/binding",
           "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"p1\"},"
           "\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"node-a\"}}");
    FX_ASSERT_CODE(&f, 201);
    fx_req(&f, "GET", p, NULL);
    assert_string_equal(fx_str(&f, "spec.nodeName"), "node-a");
    assert_non_null(strstr(f.body, "\"image\":\"busybox:2\""));
    fx_close(&f);
}

static void test_pods(void **state)
{
    fx f;
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", "/api/v1/namespaces/default/pods", POD("p1", ""));
    FX_ASSERT_CODE(&f, 201);
    assert_string_equal(fx_str(&f, "status.phase"), "Pending");
    assert_string_equal(fx_str(&f, "status.qosClass"), "BestEffort");
    /* kube-apiserver's defaults and default admission. */
    assert_string_equal(fx_str(&f, "spec.restartPolicy"), "Always");
    assert_string_equal(fx_str(&f, "spec.dnsPolicy"), "ClusterFirst");
    assert_string_equal(fx_str(&f, "spec.schedulerName"), "default-scheduler");
    assert_int_equal(fx_int(&f, "spec.terminationGracePeriodSeconds"), 30);
    assert_non_null(strstr(f.body, "\"terminationMessagePath\":\"/dev/termination-log\""));
    assert_non_null(strstr(f.body, "\"imagePullPolicy\":\"Always\""));
    assert_non_null(strstr(f.body, "\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":300"));
    assert_int_equal(fx_int(&f, "spec.priority"), 0);
    fx_req(&f, "GET", "/api/v1/namespaces/default/pods/p1/log", NULL);
    FX_ASSERT_CODE(&f, 400);
    assert_string_equal(fx_str(&f, "message"), "pod p1 does not have a host assigned");
    fx_req(&f, "POST", "/api/v1/namespaces/default/pods/p1/binding",
           "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"p1\"},"
           "\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"node-a\"}}");
    FX_ASSERT_CODE(&f, 201);
    fx_req(&f, "GET", "/api/v1/namespaces/default/pods/p1", NULL);
    assert_string_equal(fx_str(&f, "spec.nodeName"), "node-a");
    assert_non_null(strstr(f.body, "\"type\":\"PodScheduled\""));
    fx_req(&f, "POST", "/api/v1/namespaces/default/pods/p1/binding",
           "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"p1\"},"
           "\"target\":{\"kind\":\"Node\",\"name\":\"node-b\"}}");
    FX_ASSERT_CODE(&f, 409);
    assert_non_null(strstr(fx_str(&f, "message"), "is already assigned to node \"node-a\""));
    fx_req(&f, "POST", "/api/v1/namespaces/default/pods/p1/binding",
           "{\"target\":{\"kind\":\"Node\"}}");
    FX_ASSERT_CODE(&f, 422);
    fx_req(&f, "GET", "/api/v1/namespaces/default/pods/p1/log", NULL);
    FX_ASSERT_CODE(&f, 400);
    assert_string_equal(fx_str(&f, "message"),
                        "container \"main\" in pod \"p1\" is waiting to start: ContainerCreating");
    fx_req(&f, "GET", "/api/v1/namespaces/default/pods/p1/log?container=nope", NULL);
    FX_ASSERT_CODE(&f, 400);
    dra_apiserver_set_log_source(f.srv, fake_log, NULL);
    fx_req(&f, "GET", "/api/v1/namespaces/default/pods/p1/log?tailLines=2", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_string_equal(f.body, "default/p1/main tail=2\n");
    /* Field selector on pods by node. */
    fx_req(&f, "POST", "/api/v1/namespaces/default/pods", POD("p2", ""));
    fx_req(&f, "GET", "/api/v1/namespaces/default/pods?fieldSelector=spec.nodeName%3Dnode-a", NULL);
    assert_int_equal(fx_items(&f), 1);
    fx_req(&f, "GET", "/api/v1/pods?fieldSelector=status.phase%3DPending", NULL);
    assert_int_equal(fx_items(&f), 2);
    fx_close(&f);
}

/* A log source whose stream holds one line. */
typedef struct fake_stream {
    char text[128];
    int done;
} fake_stream;

static dra_err fs_read(void *ud, dra_buf *out, int *eof)
{
    fake_stream *s = ud;
    if (!s->done)
        dra_buf_puts(out, s->text);
    s->done = 1;
    *eof = 1;
    return DRA_OK;
}
static void fs_notify(void *ud, void (*n)(void *), void *arg)
{
    (void)ud, (void)n, (void)arg;
}
static void fs_close(void *ud)
{
    free(ud);
}
static const dra_stream_ops fs_ops = {fs_read, fs_notify, fs_close};

static dra_err fake_log(void *ud, const char *ns, const char *name,
                        const char *uid, const dra_log_opts *o, dra_stream **out,
                        dra_kstatus *st)
{
    struct {
        fake_stream s;
        dra_stream pub;
    } *b = calloc(1, sizeof *b);
    (void)ud, (void)uid, (void)st;
    snprintf(b->s.text, sizeof b->s.text, "%s/%s/%s tail=%lld\n", ns, name,
             o->container, (long long)o->tail_lines);
    b->pub.ops = &fs_ops;
    b->pub.ud = b;
    *out = &b->pub;
    return DRA_OK;
}

static void test_graceful_pods(void **state)
{
    fx f;
    (void)state;
    fx_open(&f, NULL, 1);
    fx_req(&f, "POST", "/api/v1/namespaces/default/pods",
           POD("p1", "\"nodeName\":\"n1\",\"terminationGracePeriodSeconds\":5,"));
    FX_ASSERT_CODE(&f, 201);
    fx_req(&f, "DELETE", "/api/v1/namespaces/default/pods/p1", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_int_equal(fx_int(&f, "metadata.deletionGracePeriodSeconds"), 5);
    fx_req(&f, "GET", "/api/v1/namespaces/default/pods/p1", NULL);
    FX_ASSERT_CODE(&f, 200);
    /* The node agent's final delete. */
    fx_req(&f, "DELETE", "/api/v1/namespaces/default/pods/p1?gracePeriodSeconds=0", NULL);
    FX_ASSERT_CODE(&f, 200);
    /* Unbound pods go at once. */
    fx_req(&f, "POST", "/api/v1/namespaces/default/pods", POD("p2", ""));
    fx_req(&f, "DELETE", "/api/v1/namespaces/default/pods/p2", NULL);
    FX_ASSERT_CODE(&f, 200);
    fx_req(&f, "GET", "/api/v1/namespaces/default/pods/p2", NULL);
    FX_ASSERT_CODE(&f, 404);
    fx_close(&f);
}

static void test_routes(void **state)
{
    fx f;
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "GET", "/api", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_string_equal(fx_str(&f, "kind"), "APIVersions");
    fx_req(&f, "GET", "/apis/resource.k8s.io/v1", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_string_equal(fx_str(&f, "kind"), "APIResourceList");
    fx_req(&f, "GET", "/version", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_string_equal(fx_str(&f, "major"), "1");
    fx_req(&f, "GET", "/healthz", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_string_equal(f.body, "ok");
    fx_req(&f, "GET", "/openapi/v2", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_string_equal(f.body, "");
    fx_req(&f, "GET", "/apis/resource.k8s.io/v1/widgets", NULL);
    FX_ASSERT_CODE(&f, 404);
    fx_req(&f, "GET", "/apis/resource.k8s.io/v1/namespaces/default/resourceslices", NULL);
    FX_ASSERT_CODE(&f, 404);
    fx_req(&f, "GET", "/api/v1/pods/x", NULL);
    FX_ASSERT_CODE(&f, 404);
    fx_req(&f, "PUT", SLICES, "{}");
    FX_ASSERT_CODE(&f, 405);
    fx_req(&f, "POST", "/apis/resource.k8s.io/v1/resourceclaims", CLAIM("x", ""));
    FX_ASSERT_CODE(&f, 404);
    fx_req_ct(&f, "GET", SLICES, NULL, "application/vnd.kubernetes.protobuf", NULL, 0);
    FX_ASSERT_CODE(&f, 406);
    fx_req(&f, "GET", "", NULL);
    FX_ASSERT_CODE(&f, 200);
    fx_close(&f);
}

static void test_dry_run(void **state)
{
    fx f;
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", CLAIMS "?dryRun=All", CLAIM("d", ""));
    FX_ASSERT_CODE(&f, 201);
    fx_req(&f, "GET", CLAIMS "/d", NULL);
    FX_ASSERT_CODE(&f, 404);
    fx_close(&f);
}

/* A store that cannot grow: writes get 503, reads keep working. */
static void test_store_full(void **state)
{
    fx f;
    dra_store_opts so = {.max_db_bytes = 160 * 1024};
    int got503 = 0;
    (void)state;
    fx_open(&f, &so, 0);
    for (int i = 0; i < 300 && !got503; i++) {
        char body[8192], name[32], pad[6000];
        memset(pad, 'x', sizeof pad - 1);
        pad[sizeof pad - 1] = '\0';
        snprintf(name, sizeof name, "c%d", i);
        snprintf(body, sizeof body,
                 "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
                 "\"metadata\":{\"name\":\"%s\",\"annotations\":{\"pad\":\"%s\"}},"
                 "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":"
                 "{\"deviceClassName\":\"c\"}}]}}}", name, pad);
        fx_req(&f, "POST", CLAIMS, body);
        if (f.code == 503)
            got503 = 1;
        else
            FX_ASSERT_CODE(&f, 201);
    }
    assert_true(got503);
    assert_string_equal(fx_str(&f, "reason"), "ServiceUnavailable");
    fx_req(&f, "GET", CLAIMS "/c0", NULL);
    FX_ASSERT_CODE(&f, 200);
    fx_close(&f);
}


static void test_patch(void **state)
{
    fx f;
    char rv[32];
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", CLAIMS, CLAIM("c1", ",\"labels\":{\"a\":\"1\"}"));
    FX_ASSERT_CODE(&f, 201);
    snprintf(rv, sizeof rv, "%s", fx_str(&f, "metadata.resourceVersion"));
    /* Merge patch: null deletes, members merge. */
    {
        static const char mp[] = "{\"metadata\":{\"labels\":{\"a\":null,\"b\":\"2\"}}}";
        fx_req_ct(&f, "PATCH", CLAIMS "/c1", "application/merge-patch+json", NULL, mp,
                  sizeof mp - 1);
    }
    FX_ASSERT_CODE(&f, 200);
    assert_null(fx_str(&f, "metadata.labels.a"));
    assert_string_equal(fx_str(&f, "metadata.labels.b"), "2");
    /* A resourceVersion in the patch is a precondition. */
    {
        char body[128];
        int n = snprintf(body, sizeof body,
                         "{\"metadata\":{\"resourceVersion\":\"%s\",\"labels\":{\"c\":\"3\"}}}", rv);
        fx_req_ct(&f, "PATCH", CLAIMS "/c1", "application/merge-patch+json", NULL, body,
                  (size_t)n);
        FX_ASSERT_CODE(&f, 409);
    }
    /* JSON patch. */
    {
        static const char jp[] = "[{\"op\":\"add\",\"path\":\"/metadata/labels/d\",\"value\":\"4\"}]";
        static const char bad[] = "[{\"op\":\"replace\",\"path\":\"/spec/nothing/here\",\"value\":1}]";
        fx_req_ct(&f, "PATCH", CLAIMS "/c1", "application/json-patch+json", NULL, jp,
                  sizeof jp - 1);
        FX_ASSERT_CODE(&f, 200);
        assert_string_equal(fx_str(&f, "metadata.labels.d"), "4");
        fx_req_ct(&f, "PATCH", CLAIMS "/c1", "application/json-patch+json", NULL, bad,
                  sizeof bad - 1);
        FX_ASSERT_CODE(&f, 422);
    }
    /* Patching the spec of a claim is still an update: immutable. */
    {
        static const char sp[] = "{\"spec\":{\"devices\":{\"requests\":[{\"name\":\"x\",\"exactly\":{\"deviceClassName\":\"y\"}}]}}}";
        fx_req_ct(&f, "PATCH", CLAIMS "/c1", "application/merge-patch+json", NULL, sp,
                  sizeof sp - 1);
        FX_ASSERT_CODE(&f, 422);
    }
    fx_req_ct(&f, "PATCH", CLAIMS "/c1", "application/xml", NULL, "<x/>", 4);
    FX_ASSERT_CODE(&f, 415);
    fx_req_ct(&f, "PATCH", CLAIMS "/none", "application/merge-patch+json", NULL, "{}", 2);
    FX_ASSERT_CODE(&f, 404);
    fx_req_ct(&f, "PATCH", CLAIMS "/c1", "application/merge-patch+json", NULL, "{\"a\":", 5);
    FX_ASSERT_CODE(&f, 400);
    fx_close(&f);
}

/* Strategic merge patch merges pod containers by name, as kubectl apply
 * needs; a plain merge patch would replace the list. */
static void test_patch_strategic(void **state)
{
    fx f;
    static const char smp[] =
        "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"a\"},{\"name\":\"b\"}],"
        "\"containers\":[{\"name\":\"b\",\"image\":\"new\"}]}}";
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", "/api/v1/namespaces/default/pods",
           "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},"
           "\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"ia\"},"
           "{\"name\":\"b\",\"image\":\"ib\"}]}}");
    FX_ASSERT_CODE(&f, 201);
    fx_req_ct(&f, "PATCH", "/api/v1/namespaces/default/pods/p",
              "application/strategic-merge-patch+json", NULL, smp, sizeof smp - 1);
    FX_ASSERT_CODE(&f, 200);
    if (!strstr(f.body, "{\"name\":\"a\",\"image\":\"ia\""))
        fail_msg("container a lost: %s", f.body);
    assert_non_null(strstr(f.body, "\"image\":\"new\""));
    assert_int_equal(fx_int(&f, "metadata.generation"), 2);
    fx_close(&f);
}

static void test_patch_apply(void **state)
{
    fx f;
    static const char cfg[] =
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: gpu\n"
        "  labels:\n    team: a\nspec:\n  selectors:\n  - cel:\n      expression: "
        "device.driver == 'gpu.nvidia.com'\n";
    static const char cfg2[] =
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: gpu\n"
        "  labels:\n    team: b\nspec:\n  selectors:\n  - cel:\n      expression: "
        "device.driver == 'gpu.nvidia.com'\n";
    (void)state;
    fx_open(&f, NULL, 0);
    /* Server-side apply creates the object when it is absent. */
    fx_req_ct(&f, "PATCH",
              "/apis/resource.k8s.io/v1/deviceclasses/gpu?fieldManager=kubectl&force=false",
              "application/apply-patch+yaml", NULL, cfg, sizeof cfg - 1);
    FX_ASSERT_CODE(&f, 201);
    assert_non_null(strstr(f.body, "\"manager\":\"kubectl\""));
    fx_req_ct(&f, "PATCH",
              "/apis/resource.k8s.io/v1/deviceclasses/gpu?fieldManager=kubectl",
              "application/apply-patch+yaml", NULL, cfg2, sizeof cfg2 - 1);
    FX_ASSERT_CODE(&f, 200);
    assert_string_equal(fx_str(&f, "metadata.labels.team"), "b");
    fx_req_ct(&f, "PATCH", "/apis/resource.k8s.io/v1/deviceclasses/gpu",
              "application/apply-patch+yaml", NULL, cfg2, sizeof cfg2 - 1);
    FX_ASSERT_CODE(&f, 400);
    fx_close(&f);
}

#define TABLE_ACCEPT                                                             \
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;"    \
    "v=v1beta1;g=meta.k8s.io,application/json"

static void test_table(void **state)
{
    fx f;
    const dra_doc *cols, *rows;
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", SLICES, SLICE("s1", "n1", ""));
    fx_req(&f, "POST", SLICES, SLICE("s2", "n2", ""));
    /* A page of one: the continue token and the count of the rest, as
     * a JSON list has them. */
    fx_req_ct(&f, "GET", SLICES "?limit=1", NULL, TABLE_ACCEPT, NULL, 0);
    FX_ASSERT_CODE(&f, 200);
    assert_string_equal(fx_str(&f, "kind"), "Table");
    assert_non_null(fx_str(&f, "metadata.continue"));
    assert_int_equal(fx_int(&f, "metadata.remainingItemCount"), 1);
    fx_req_ct(&f, "GET", SLICES "?limit=500", NULL, TABLE_ACCEPT, NULL, 0);
    FX_ASSERT_CODE(&f, 200);
    assert_string_equal(fx_str(&f, "kind"), "Table");
    cols = dra_doc_get(f.doc, "columnDefinitions");
    assert_int_equal(cols->u.list.n, 5);
    assert_string_equal(dra_doc_get(cols->u.list.items[1], "name")->u.str.s, "Node");
    assert_string_equal(dra_doc_get(cols->u.list.items[2], "name")->u.str.s, "Driver");
    rows = dra_doc_get(f.doc, "rows");
    assert_int_equal(rows->u.list.n, 2);
    assert_string_equal(fx_str(&f, "metadata.resourceVersion") ? "y" : "n", "y");
    fx_req_ct(&f, "GET", SLICES "/s1", NULL, TABLE_ACCEPT, NULL, 0);
    FX_ASSERT_CODE(&f, 200);
    assert_string_equal(fx_str(&f, "kind"), "Table");
    assert_non_null(strstr(f.body, "PartialObjectMetadata"));
    fx_req_ct(&f, "GET", SLICES "?includeObject=Object", NULL, TABLE_ACCEPT, NULL, 0);
    FX_ASSERT_CODE(&f, 200);
    assert_non_null(strstr(f.body, "\"kind\":\"ResourceSlice\""));
    fx_req_ct(&f, "GET", SLICES "?includeObject=All", NULL, TABLE_ACCEPT, NULL, 0);
    FX_ASSERT_CODE(&f, 400);
    fx_close(&f);
}

static void test_openapi(void **state)
{
    fx f;
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "GET", "/openapi/v3", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_non_null(strstr(f.body, "apis/resource.k8s.io/v1"));
    fx_req(&f, "GET", "/openapi/v3/apis/resource.k8s.io/v1", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_non_null(strstr(f.body, "fieldValidation"));
    fx_req(&f, "GET", "/openapi/v3/apis/nothing.example.com/v1", NULL);
    FX_ASSERT_CODE(&f, 404);
    fx_close(&f);
}

/* resource.k8s.io v1beta1 and v1beta2 are served by conversion: objects
 * are stored as v1 and read back in the version asked for. */
static void test_versions(void **state)
{
    fx f;
    static const char mp[] = "{\"metadata\":{\"labels\":{\"l\":\"x\"}}}";
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", "/apis/resource.k8s.io/v1beta1/namespaces/default/resourceclaims",
           "{\"apiVersion\":\"resource.k8s.io/v1beta1\",\"kind\":\"ResourceClaim\","
           "\"metadata\":{\"name\":\"old\"},\"spec\":{\"devices\":{\"requests\":"
           "[{\"name\":\"gpu\",\"deviceClassName\":\"gpu.nvidia.com\"}]}}}");
    FX_ASSERT_CODE(&f, 201);
    assert_string_equal(fx_str(&f, "apiVersion"), "resource.k8s.io/v1beta1");
    assert_non_null(strstr(f.body, "\"requests\":[{\"name\":\"gpu\",\"deviceClassName\""));
    fx_req(&f, "GET", CLAIMS "/old", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_string_equal(fx_str(&f, "apiVersion"), "resource.k8s.io/v1");
    assert_non_null(strstr(f.body, "\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\""));
    fx_req(&f, "GET", "/apis/resource.k8s.io/v1beta2/namespaces/default/resourceclaims", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_string_equal(fx_str(&f, "apiVersion"), "resource.k8s.io/v1beta2");
    assert_string_equal(fx_str(&f, "kind"), "ResourceClaimList");
    assert_non_null(strstr(f.body, "\"apiVersion\":\"resource.k8s.io/v1beta2\",\"metadata\"") ||
                    strstr(f.body, "resource.k8s.io/v1beta2"));
    fx_req_ct(&f, "PATCH", "/apis/resource.k8s.io/v1beta1/namespaces/default/resourceclaims/old",
              "application/merge-patch+json", NULL, mp, sizeof mp - 1);
    FX_ASSERT_CODE(&f, 200);
    assert_string_equal(fx_str(&f, "metadata.labels.l"), "x");
    assert_string_equal(fx_str(&f, "apiVersion"), "resource.k8s.io/v1beta1");
    /* A body of another version than the endpoint's. */
    fx_req(&f, "POST", "/apis/resource.k8s.io/v1beta1/namespaces/default/resourceclaims",
           CLAIM("mixed", ""));
    FX_ASSERT_CODE(&f, 400);
    fx_req(&f, "DELETE", "/apis/resource.k8s.io/v1beta2/namespaces/default/resourceclaims/old", NULL);
    FX_ASSERT_CODE(&f, 200);
    assert_string_equal(fx_str(&f, "apiVersion"), "resource.k8s.io/v1beta2");
    fx_close(&f);
}

/* kubectl 1.32+ creates namespaces with a protobuf body. */
static void test_protobuf_namespace(void **state)
{
    fx f;
    static const unsigned char pb[] = {
        'k', '8', 's', 0,
        /* Unknown.typeMeta {apiVersion "v1", kind "Namespace"} */
        0x0a, 0x0f, 0x0a, 0x02, 'v', '1', 0x12, 0x09, 'N', 'a', 'm', 'e', 's', 'p',
        'a', 'c', 'e',
        /* Unknown.raw: Namespace {metadata {name "pb-ns", labels {a: b}}} */
        0x12, 0x11, 0x0a, 0x0f, 0x0a, 0x05, 'p', 'b', '-', 'n', 's', 0x5a, 0x06,
        0x0a, 0x01, 'a', 0x12, 0x01, 'b'};
    static const unsigned char pod[] = {'k', '8', 's', 0, 0x0a, 0x09, 0x0a, 0x02,
                                        'v', '1', 0x12, 0x03, 'P', 'o', 'd'};
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req_ct(&f, "POST", "/api/v1/namespaces", "application/vnd.kubernetes.protobuf",
              NULL, (const char *)pb, sizeof pb);
    FX_ASSERT_CODE(&f, 201);
    assert_string_equal(fx_str(&f, "metadata.name"), "pb-ns");
    assert_string_equal(fx_str(&f, "metadata.labels.a"), "b");
    assert_string_equal(fx_str(&f, "status.phase"), "Active");
    fx_req_ct(&f, "POST", "/api/v1/namespaces/default/pods",
              "application/vnd.kubernetes.protobuf", NULL, (const char *)pod, sizeof pod);
    FX_ASSERT_CODE(&f, 415);
    fx_req_ct(&f, "POST", "/api/v1/namespaces", "application/vnd.kubernetes.protobuf",
              NULL, "k8s\0\xff\xff", 6);
    FX_ASSERT_CODE(&f, 400);
    fx_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_namespaces_exist),
        cmocka_unit_test(test_create_system_fields),
        cmocka_unit_test(test_invalid_422),
        cmocka_unit_test(test_conflicts),
        cmocka_unit_test(test_generate_name),
        cmocka_unit_test(test_generation),
        cmocka_unit_test(test_status_split),
        cmocka_unit_test(test_finalizers),
        cmocka_unit_test(test_delete_preconditions),
        cmocka_unit_test(test_gc_background),
        cmocka_unit_test(test_gc_foreground),
        cmocka_unit_test(test_gc_orphan),
        cmocka_unit_test(test_gc_orphan_same_resource),
        cmocka_unit_test(test_namespace_deletion),
        cmocka_unit_test(test_strict_fields),
        cmocka_unit_test(test_pod_update_rules),
        cmocka_unit_test(test_bodies),
        cmocka_unit_test(test_list_paging),
        cmocka_unit_test(test_selectors),
        cmocka_unit_test(test_pods),
        cmocka_unit_test(test_graceful_pods),
        cmocka_unit_test(test_routes),
        cmocka_unit_test(test_dry_run),
        cmocka_unit_test(test_store_full),
        cmocka_unit_test(test_patch),
        cmocka_unit_test(test_patch_strategic),
        cmocka_unit_test(test_patch_apply),
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_openapi),
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_protobuf_namespace),
    };
    if (getenv("DRA_TEST_FILTER"))
        cmocka_set_test_filter(getenv("DRA_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
