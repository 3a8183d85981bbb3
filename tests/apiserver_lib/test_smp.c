/* Strategic merge patch: the pod apply case kubectl sends, merge keys
 * and strategies from the schema, every directive, ordering rules and
 * the error answers, as apimachinery's StrategicMergeMapPatch does. */
#include "apilib_test.h"
#include "patch.h"

static const api_openapi_type *POD, *CLAIM;

static void smp_ok(const api_openapi_type *t, const char *orig, const char *patch, const char *want)
{
    dra_arena a;
    dra_doc *o, *out;
    dra_kstatus st;
    dra_arena_init(&a, NULL);
    memset(&st, 0, sizeof st);
    o = J(&a, orig);
    if (api_patch_strategic(&a, t, o, J(&a, patch), &out, &st) != DRA_OK)
        fail_msg("smp %s: %d %s", patch, st.code, st.message);
    /* compare as documents: member order is not part of the contract */
    if (!dra_doc_equal(out, J(&a, want)))
        fail_msg("smp %s + %s:\n got  %s\n want %s", orig, patch, show(out), want);
    assert_true(dra_doc_equal(o, J(&a, orig)));
    dra_arena_fini(&a);
}

/* Lists must also come out in the right order: compare the JSON text of
 * one list. */
static void smp_list_order(const api_openapi_type *t, const char *orig, const char *patch,
                           const char *path, const char *want)
{
    dra_arena a;
    dra_doc *out;
    char buf[128], *f;
    const dra_doc *cur;
    dra_arena_init(&a, NULL);
    assert_int_equal(api_patch_strategic(&a, t, J(&a, orig), J(&a, patch), &out, NULL), DRA_OK);
    cur = out;
    snprintf(buf, sizeof buf, "%s", path);
    for (f = strtok(buf, "."); f; f = strtok(NULL, "."))
        cur = dra_doc_get(cur, f);
    assert_non_null(cur);
    if (strcmp(show(cur), want))
        fail_msg("order after %s:\n got  %s\n want %s", patch, show(cur), want);
    dra_arena_fini(&a);
}

#define POD2                                                                                  \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"1\"}}," \
    "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox:1\",\"env\":[{\"name\":\"X\","  \
    "\"value\":\"1\"}],\"ports\":[{\"containerPort\":80,\"protocol\":\"TCP\"}]},"                 \
    "{\"name\":\"d\",\"image\":\"nginx\"}],\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\"}]}}"

static void test_kubectl_apply_pod(void **state)
{
    (void)state;
    /* what kubectl apply sends after changing c's image: d must survive */
    smp_ok(POD, POD2,
           "{\"metadata\":{\"annotations\":{\"kubectl.kubernetes.io/last-applied-configuration\":\"{}\"},"
           "\"labels\":{\"a\":\"2\"}},\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"c\"},"
           "{\"name\":\"d\"}],\"containers\":[{\"image\":\"busybox:2\",\"name\":\"c\"}]}}",
           "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"2\"},"
           "\"annotations\":{\"kubectl.kubernetes.io/last-applied-configuration\":\"{}\"}},"
           "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox:2\",\"env\":[{\"name\":\"X\","
           "\"value\":\"1\"}],\"ports\":[{\"containerPort\":80,\"protocol\":\"TCP\"}]},"
           "{\"name\":\"d\",\"image\":\"nginx\"}],\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\"}]}}");
    smp_list_order(POD, POD2,
                   "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"c\"},{\"name\":\"d\"}],"
                   "\"containers\":[{\"image\":\"busybox:2\",\"name\":\"c\"}]}}",
                   "spec.containers",
                   "[{\"name\":\"c\",\"image\":\"busybox:2\",\"env\":[{\"name\":\"X\",\"value\":\"1\"}],"
                   "\"ports\":[{\"containerPort\":80,\"protocol\":\"TCP\"}]},{\"name\":\"d\",\"image\":\"nginx\"}]");
    /* kubectl apply removing container d and adding e between */
    smp_list_order(POD, POD2,
                   "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"c\"},{\"name\":\"e\"}],"
                   "\"containers\":[{\"name\":\"e\",\"image\":\"e\"},{\"$patch\":\"delete\",\"name\":\"d\"}]}}",
                   "spec.containers",
                   "[{\"name\":\"c\",\"image\":\"busybox:1\",\"env\":[{\"name\":\"X\",\"value\":\"1\"}],"
                   "\"ports\":[{\"containerPort\":80,\"protocol\":\"TCP\"}]},{\"name\":\"e\",\"image\":\"e\"}]");
    /* reordering through $setElementOrder alone */
    smp_list_order(POD, POD2,
                   "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"d\"},{\"name\":\"c\"}]}}",
                   "spec.containers",
                   "[{\"name\":\"d\",\"image\":\"nginx\"},{\"name\":\"c\",\"image\":\"busybox:1\",\"env\":"
                   "[{\"name\":\"X\",\"value\":\"1\"}],\"ports\":[{\"containerPort\":80,\"protocol\":\"TCP\"}]}]");
}

static void test_merge_keys(void **state)
{
    (void)state;
    /* env by name, ports by containerPort: nested merges inside a merged container */
    smp_list_order(POD, POD2,
                   "{\"spec\":{\"containers\":[{\"name\":\"c\",\"env\":[{\"name\":\"Y\",\"value\":\"2\"},"
                   "{\"name\":\"X\",\"value\":\"9\"}],\"ports\":[{\"containerPort\":443}]}]}}",
                   "spec.containers",
                   "[{\"name\":\"c\",\"image\":\"busybox:1\",\"env\":[{\"name\":\"Y\",\"value\":\"2\"},"
                   "{\"name\":\"X\",\"value\":\"9\"}],\"ports\":[{\"containerPort\":443},{\"containerPort\":80,"
                   "\"protocol\":\"TCP\"}]},{\"name\":\"d\",\"image\":\"nginx\"}]");
    /* without $setElementOrder a new item goes before the server's items */
    smp_list_order(POD, POD2, "{\"spec\":{\"containers\":[{\"name\":\"z\",\"image\":\"z\"}]}}",
                   "spec.containers",
                   "[{\"name\":\"z\",\"image\":\"z\"},{\"name\":\"c\",\"image\":\"busybox:1\",\"env\":"
                   "[{\"name\":\"X\",\"value\":\"1\"}],\"ports\":[{\"containerPort\":80,\"protocol\":\"TCP\"}]},"
                   "{\"name\":\"d\",\"image\":\"nginx\"}]");
    /* a patched item keeps its place among the server's */
    smp_list_order(POD, "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]}}",
                   "{\"spec\":{\"containers\":[{\"name\":\"b\",\"image\":\"x\"}]}}", "spec.containers",
                   "[{\"name\":\"a\"},{\"name\":\"b\",\"image\":\"x\"},{\"name\":\"c\"}]");
    /* tolerations have no merge strategy: replaced */
    smp_ok(POD, "{\"spec\":{\"tolerations\":[{\"key\":\"a\"}]}}",
           "{\"spec\":{\"tolerations\":[{\"key\":\"b\"}]}}", "{\"spec\":{\"tolerations\":[{\"key\":\"b\"}]}}");
    /* finalizers merge as a set; $deleteFromPrimitiveList removes */
    smp_list_order(POD, "{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}",
                   "{\"metadata\":{\"finalizers\":[\"c\",\"a\"]}}", "metadata.finalizers",
                   "[\"c\",\"a\",\"b\"]");
    smp_list_order(POD, "{\"metadata\":{\"finalizers\":[\"a\",\"b\",\"c\"]}}",
                   "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[\"b\",\"x\"]}}",
                   "metadata.finalizers", "[\"a\",\"c\"]");
    smp_list_order(POD, "{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}",
                   "{\"metadata\":{\"$setElementOrder/finalizers\":[\"b\",\"a\"]}}",
                   "metadata.finalizers", "[\"b\",\"a\"]");
    /* ownerReferences by uid */
    smp_list_order(POD,
                   "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"1\",\"name\":\"a\"},{\"uid\":\"2\",\"name\":\"b\"}]}}",
                   "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"2\",\"controller\":true}]}}",
                   "metadata.ownerReferences",
                   "[{\"uid\":\"1\",\"name\":\"a\"},{\"uid\":\"2\",\"name\":\"b\",\"controller\":true}]");
    /* pod status conditions by type */
    smp_list_order(POD, "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]}}",
                   "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"},"
                   "{\"type\":\"PodScheduled\",\"status\":\"True\"}]}}",
                   "status.conditions",
                   "[{\"type\":\"Ready\",\"status\":\"True\"},{\"type\":\"PodScheduled\",\"status\":\"True\"}]");
    /* resourceClaims by name (merge,retainKeys) */
    smp_list_order(POD,
                   "{\"spec\":{\"resourceClaims\":[{\"name\":\"g\",\"resourceClaimTemplateName\":\"t\"}]}}",
                   "{\"spec\":{\"resourceClaims\":[{\"name\":\"h\",\"resourceClaimName\":\"c\"}]}}",
                   "spec.resourceClaims",
                   "[{\"name\":\"h\",\"resourceClaimName\":\"c\"},{\"name\":\"g\",\"resourceClaimTemplateName\":\"t\"}]");
    /* ResourceClaim: reservedFor merges by uid; spec lists are atomic */
    smp_list_order(CLAIM,
                   "{\"status\":{\"allocation\":{},\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"a\",\"uid\":\"1\"}]}}",
                   "{\"status\":{\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"b\",\"uid\":\"2\"}]}}",
                   "status.reservedFor",
                   "[{\"resource\":\"pods\",\"name\":\"b\",\"uid\":\"2\"},{\"resource\":\"pods\",\"name\":\"a\",\"uid\":\"1\"}]");
    smp_ok(CLAIM, "{\"spec\":{\"devices\":{\"requests\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}}",
           "{\"spec\":{\"devices\":{\"requests\":[{\"name\":\"c\"}]}}}",
           "{\"spec\":{\"devices\":{\"requests\":[{\"name\":\"c\"}]}}}");
    /* without a schema every list is replaced */
    smp_ok(NULL, "{\"l\":[1,2],\"m\":{\"a\":1}}", "{\"l\":[3],\"m\":{\"b\":2}}",
           "{\"l\":[3],\"m\":{\"a\":1,\"b\":2}}");
}

static void test_directives(void **state)
{
    (void)state;
    /* null deletes; unmatched nulls are ignored */
    smp_ok(POD, "{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"}}}",
           "{\"metadata\":{\"labels\":{\"a\":null,\"z\":null}}}", "{\"metadata\":{\"labels\":{\"b\":\"2\"}}}");
    smp_ok(POD, "{\"spec\":{}}", "{\"spec\":{\"nodeSelector\":{\"a\":\"1\",\"b\":null}}}",
           "{\"spec\":{\"nodeSelector\":{\"a\":\"1\"}}}");
    /* $patch: replace on a map, $patch: delete on a map */
    smp_ok(POD, "{\"spec\":{\"nodeSelector\":{\"a\":\"1\",\"b\":\"2\"}}}",
           "{\"spec\":{\"nodeSelector\":{\"$patch\":\"replace\",\"c\":\"3\"}}}",
           "{\"spec\":{\"nodeSelector\":{\"c\":\"3\"}}}");
    smp_ok(POD, "{\"spec\":{\"nodeSelector\":{\"a\":\"1\"}}}",
           "{\"spec\":{\"nodeSelector\":{\"$patch\":\"delete\"}}}", "{\"spec\":{\"nodeSelector\":{}}}");
    /* a directive on a key the original lacks leaves nothing behind */
    smp_ok(POD, "{\"spec\":{}}", "{\"spec\":{\"affinity\":{\"$patch\":\"delete\"}}}", "{\"spec\":{}}");
    /* $patch: replace in a merging list replaces it */
    smp_ok(POD, POD2,
           "{\"spec\":{\"containers\":[{\"name\":\"n\",\"image\":\"n\"},{\"$patch\":\"replace\"}]}}",
           "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"1\"}},"
           "\"spec\":{\"containers\":[{\"name\":\"n\",\"image\":\"n\"}],\"tolerations\":[{\"key\":\"k\","
           "\"operator\":\"Exists\"}]}}");
    /* $retainKeys on a volume: the old source goes */
    smp_ok(POD, "{\"spec\":{\"volumes\":[{\"name\":\"v\",\"emptyDir\":{}}]}}",
           "{\"spec\":{\"volumes\":[{\"$retainKeys\":[\"hostPath\",\"name\"],\"name\":\"v\","
           "\"hostPath\":{\"path\":\"/x\"}}]}}",
           "{\"spec\":{\"volumes\":[{\"name\":\"v\",\"hostPath\":{\"path\":\"/x\"}}]}}");
    /* a new list with directives inside drops them */
    smp_ok(POD, "{\"spec\":{}}",
           "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\",\"$patch\":\"delete\"}]}}",
           "{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}");
    /* type changes replace */
    smp_ok(POD, "{\"metadata\":{\"labels\":{\"a\":\"1\"}}}", "{\"metadata\":{\"labels\":\"x\"}}",
           "{\"metadata\":{\"labels\":\"x\"}}");
    smp_ok(POD, "{\"a\":1}", "null", "{\"a\":1}");
}

static void smp_err(const api_openapi_type *t, const char *orig, const char *patch, dra_err want,
                    int code, const char *reason, const char *msg)
{
    dra_arena a;
    dra_doc *out = (dra_doc *)1;
    dra_kstatus st;
    dra_arena_init(&a, NULL);
    memset(&st, 0, sizeof st);
    assert_int_equal(api_patch_strategic(&a, t, J(&a, orig), J(&a, patch), &out, &st), want);
    assert_int_equal(st.code, code);
    assert_string_equal(st.reason, reason);
    if (strcmp(st.message, msg))
        fail_msg("%s:\n got  %s\n want %s", patch, st.message, msg);
    dra_arena_fini(&a);
}

static void test_errors(void **state)
{
    (void)state;
    smp_err(POD, POD2, "{\"spec\":{\"containers\":[{\"image\":\"x\"}]}}", DRA_EIO, 500, "",
            "map: map[image:x] does not contain declared merge key: name");
    smp_err(POD, POD2, "{\"spec\":{\"containers\":[{\"$patch\":\"merge\",\"name\":\"c\"}]}}", DRA_EIO,
            500, "", "merging lists cannot yet be specified in the patch");
    smp_err(POD, POD2, "{\"spec\":{\"containers\":[{\"$patch\":\"frob\",\"name\":\"c\"}]}}", DRA_EIO,
            500, "", "unknown patch type: frob in map: map[$patch:frob name:c]");
    smp_err(POD, POD2, "{\"spec\":{\"$setElementOrder\":[]}}", DRA_EINVAL, 400, "BadRequest",
            "invalid patch format of setElementOrder list");
    smp_err(POD, "{\"metadata\":{\"finalizers\":[\"a\"]}}", "{\"metadata\":{\"$deleteFromPrimitiveList\":[\"a\"]}}",
            DRA_EINVAL, 400, "BadRequest", "invalid patch format of primitive list");
    smp_err(POD, "{\"spec\":{\"volumes\":[{\"name\":\"v\"}]}}",
            "{\"spec\":{\"volumes\":[{\"$retainKeys\":\"name\",\"name\":\"v\"}]}}", DRA_EINVAL, 400,
            "BadRequest", "invalid patch format of retainKeys");
    smp_err(POD, "{\"spec\":{\"volumes\":[{\"name\":\"v\"}]}}",
            "{\"spec\":{\"volumes\":[{\"$retainKeys\":[\"name\"],\"name\":\"v\",\"emptyDir\":{}}]}}",
            DRA_EINVAL, 400, "BadRequest", "invalid patch format of retainKeys");
    smp_err(POD, "{\"metadata\":{\"finalizers\":[[\"a\"]]}}", "{\"metadata\":{\"finalizers\":[[\"b\"]]}}",
            DRA_EINVALID, 422, "Invalid", "the server rejected our request due to an error in our request");
    smp_err(POD, "{\"metadata\":{\"finalizers\":[\"a\"]}}", "{\"metadata\":{\"finalizers\":[1]}}",
            DRA_EIO, 500, "", "list element types are not identical: [[a] [1]]");
    smp_err(POD, POD2, "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"c\"}],"
                       "\"containers\":[{\"name\":\"x\"}]}}",
            DRA_EIO, 500, "",
            "The order in patch list:\n[map[name:x]]\n doesn't match $setElementOrder list:\n"
            "[map[name:c]]\n");
    smp_err(POD, "{}", "[1]", DRA_EINVAL, 400, "BadRequest",
            "json: cannot unmarshal array into Go value of type map[string]interface {}");
}

static void test_failmem(void **state)
{
    (void)state;
    for (long i = 0; i < 400; i += 3) {
        dra_failmem fm;
        dra_arena a, in;
        dra_doc *out;
        dra_arena_init(&in, NULL);
        dra_doc *o = J(&in, POD2);
        dra_doc *p = J(&in, "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"c\"},{\"name\":\"e\"}],"
                            "\"containers\":[{\"name\":\"c\",\"env\":[{\"name\":\"Z\"}]},{\"$patch\":\"delete\","
                            "\"name\":\"d\"},{\"name\":\"e\",\"env\":[{\"name\":\"A\"}]}]},"
                            "\"metadata\":{\"labels\":{\"a\":null,\"n\":\"1\"}}}");
        dra_failmem_init(&fm, i);
        dra_arena_init(&a, &fm.mem);
        dra_err e = api_patch_strategic(&a, POD, o, p, &out, NULL);
        if (i > 390)
            assert_int_equal(e, DRA_OK); /* enough allocations: it succeeds */
        assert_true(e == DRA_OK || e == DRA_ENOMEM);
        dra_arena_fini(&a);
        dra_arena_fini(&in);
        assert_int_equal(fm.live, 0);
    }
}

static int setup(void **state)
{
    (void)state;
    POD = api_openapi_kind_type("", "v1", "Pod");
    CLAIM = api_openapi_kind_type("resource.k8s.io", "v1", "ResourceClaim");
    return POD && CLAIM ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kubectl_apply_pod),
        cmocka_unit_test(test_merge_keys),
        cmocka_unit_test(test_directives),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_failmem),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
