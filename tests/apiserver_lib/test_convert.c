/* resource.k8s.io conversion: v1beta1's `basic` and flat requests, the
 * v1beta2 rename, lists, round trips both ways, and the api module
 * accepting what comes out. */
#include "apilib_test.h"
#include "dra/api.h"
#include "convert.h"

static dra_doc *conv(dra_arena *a, const dra_doc *in, const char *to)
{
    dra_doc *out = NULL;
    dra_kstatus st;
    memset(&st, 0, sizeof st);
    if (api_conv_convert(a, in, to, &out, &st) != DRA_OK)
        fail_msg("convert to %s: %s", to, st.message);
    return out;
}

#define B1_SLICE                                                                                  \
    "{\"apiVersion\":\"resource.k8s.io/v1beta1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"s\"}," \
    "\"spec\":{\"driver\":\"gpu.nvidia.com\",\"pool\":{\"name\":\"n1\",\"generation\":1,"              \
    "\"resourceSliceCount\":1},\"nodeName\":\"n1\",\"devices\":[{\"name\":\"gpu-0\",\"basic\":{"       \
    "\"attributes\":{\"type\":{\"string\":\"gpu\"}},\"capacity\":{\"memory\":{\"value\":\"80Gi\"}}}},"  \
    "{\"name\":\"gpu-1\",\"basic\":{\"attributes\":{\"type\":{\"string\":\"gpu\"}},\"taints\":"        \
    "[{\"key\":\"k\",\"effect\":\"NoSchedule\"}]}}]}}"

#define V1_SLICE                                                                                  \
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"s\"}," \
    "\"spec\":{\"driver\":\"gpu.nvidia.com\",\"pool\":{\"name\":\"n1\",\"generation\":1,"              \
    "\"resourceSliceCount\":1},\"nodeName\":\"n1\",\"devices\":[{\"name\":\"gpu-0\",\"attributes\":"   \
    "{\"type\":{\"string\":\"gpu\"}},\"capacity\":{\"memory\":{\"value\":\"80Gi\"}}},{\"name\":"       \
    "\"gpu-1\",\"attributes\":{\"type\":{\"string\":\"gpu\"}},\"taints\":[{\"key\":\"k\",\"effect\":"  \
    "\"NoSchedule\"}]}]}}"

static void test_slice(void **state)
{
    dra_arena a;
    (void)state;
    dra_arena_init(&a, NULL);
    dra_doc *b1 = J(&a, B1_SLICE), *v1 = conv(&a, b1, "v1");
    assert_string_equal(show(v1), V1_SLICE);
    assert_string_equal(show(conv(&a, v1, "v1beta1")), B1_SLICE);
    assert_true(dra_doc_equal(b1, J(&a, B1_SLICE))); /* input untouched */
    /* v1beta2 is a rename */
    dra_doc *b2 = conv(&a, v1, "v1beta2");
    assert_string_equal(dra_doc_get(b2, "apiVersion")->u.str.s, "resource.k8s.io/v1beta2");
    assert_true(dra_doc_equal(dra_doc_get(b2, "spec"), dra_doc_get(v1, "spec")));
    assert_string_equal(show(conv(&a, b2, "v1beta1")), B1_SLICE);
    /* v1beta1's zero nodeName / allNodes mean unset in v1; a device
     * without fields gets an empty basic going down */
    dra_doc *z = conv(&a, J(&a, "{\"apiVersion\":\"resource.k8s.io/v1beta1\",\"kind\":\"ResourceSlice\","
                                "\"spec\":{\"nodeName\":\"\",\"allNodes\":false,\"devices\":[{\"name\":\"d\"}]}}"),
                      "v1");
    assert_string_equal(show(z), "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\","
                                 "\"spec\":{\"devices\":[{\"name\":\"d\"}]}}");
    assert_string_equal(show(conv(&a, z, "v1beta1")),
                        "{\"apiVersion\":\"resource.k8s.io/v1beta1\",\"kind\":\"ResourceSlice\","
                        "\"spec\":{\"devices\":[{\"name\":\"d\",\"basic\":{}}]}}");
    dra_arena_fini(&a);
}

#define B1_CLAIM                                                                                   \
    "{\"apiVersion\":\"resource.k8s.io/v1beta1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"c\"," \
    "\"namespace\":\"default\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"deviceClassName\":" \
    "\"gpu.nvidia.com\",\"selectors\":[{\"cel\":{\"expression\":\"true\"}}],\"allocationMode\":"         \
    "\"ExactCount\",\"count\":2,\"adminAccess\":false,\"tolerations\":[{\"operator\":\"Exists\"}],"     \
    "\"capacity\":{\"requests\":{\"memory\":\"10Gi\"}}},{\"name\":\"alt\",\"firstAvailable\":[{\"name\":" \
    "\"a\",\"deviceClassName\":\"x\"}]}],\"constraints\":[{\"matchAttribute\":\"gpu.nvidia.com/uuid\"}]}}," \
    "\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"gpu\",\"driver\":\"d\","       \
    "\"pool\":\"p\",\"device\":\"g\"}]}},\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"p\","          \
    "\"uid\":\"u\"}]}}"

#define V1_CLAIM                                                                                   \
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"c\","  \
    "\"namespace\":\"default\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":"     \
    "{\"deviceClassName\":\"gpu.nvidia.com\",\"selectors\":[{\"cel\":{\"expression\":\"true\"}}],"       \
    "\"allocationMode\":\"ExactCount\",\"count\":2,\"adminAccess\":false,\"tolerations\":[{\"operator\":" \
    "\"Exists\"}],\"capacity\":{\"requests\":{\"memory\":\"10Gi\"}}}},{\"name\":\"alt\",\"firstAvailable\":" \
    "[{\"name\":\"a\",\"deviceClassName\":\"x\"}]}],\"constraints\":[{\"matchAttribute\":"                \
    "\"gpu.nvidia.com/uuid\"}]}},\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":"   \
    "\"gpu\",\"driver\":\"d\",\"pool\":\"p\",\"device\":\"g\"}]}},\"reservedFor\":[{\"resource\":"       \
    "\"pods\",\"name\":\"p\",\"uid\":\"u\"}]}}"

static void test_claim_and_template(void **state)
{
    dra_arena a;
    (void)state;
    dra_arena_init(&a, NULL);
    dra_doc *v1 = conv(&a, J(&a, B1_CLAIM), "v1");
    assert_string_equal(show(v1), V1_CLAIM);
    assert_string_equal(show(conv(&a, v1, "v1beta1")), B1_CLAIM);
    /* the seed template, written against v1beta1 as 1.32 clients did */
    dra_doc *t1 = conv(&a, J(&a, "{\"apiVersion\":\"resource.k8s.io/v1beta1\",\"kind\":\"ResourceClaimTemplate\","
                                 "\"metadata\":{\"name\":\"single-gpu\",\"namespace\":\"default\"},\"spec\":{\"spec\":"
                                 "{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"deviceClassName\":"
                                 "\"gpu.nvidia.com\"}]}}}}"), "v1");
    assert_string_equal(show(t1), "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaimTemplate\","
                                  "\"metadata\":{\"name\":\"single-gpu\",\"namespace\":\"default\"},\"spec\":{\"spec\":"
                                  "{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"
                                  "\"gpu.nvidia.com\"}}]}}}}");
    /* the result decodes and validates as a v1 object */
    dra_object *obj;
    dra_diag dg;
    dra_diag_init(&dg, NULL);
    assert_int_equal(dra_api_decode(&a, t1, &obj, &dg), DRA_OK);
    assert_int_equal(dra_api_validate(obj, &dg), DRA_OK);
    assert_string_equal(obj->u.claim_template.spec.requests[0].exactly->device_class_name, "gpu.nvidia.com");
    dra_diag_fini(&dg);
    /* a request with only firstAvailable gets no exactly; an empty one neither */
    dra_doc *e = conv(&a, J(&a, "{\"apiVersion\":\"resource.k8s.io/v1beta1\",\"kind\":\"ResourceClaim\","
                                "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"x\"},{\"name\":\"y\","
                                "\"count\":0,\"deviceClassName\":\"\"}]}}}"), "v1");
    assert_string_equal(show(dra_doc_get(e, "spec")),
                        "{\"devices\":{\"requests\":[{\"name\":\"x\"},{\"name\":\"y\"}]}}");
    /* a selector list, even empty, counts as a main field upstream */
    e = conv(&a, J(&a, "{\"apiVersion\":\"resource.k8s.io/v1beta1\",\"kind\":\"ResourceClaim\","
                       "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"x\",\"selectors\":[]}]}}}"), "v1");
    assert_string_equal(show(dra_doc_get(e, "spec")),
                        "{\"devices\":{\"requests\":[{\"name\":\"x\",\"exactly\":{\"selectors\":[]}}]}}");
    /* DeviceClass: a rename in every direction */
    dra_doc *dc = conv(&a, J(&a, "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\","
                                 "\"spec\":{\"selectors\":[{\"cel\":{\"expression\":\"true\"}}]}}"), "v1beta1");
    assert_string_equal(show(dc), "{\"apiVersion\":\"resource.k8s.io/v1beta1\",\"kind\":\"DeviceClass\","
                                  "\"spec\":{\"selectors\":[{\"cel\":{\"expression\":\"true\"}}]}}");
    dra_arena_fini(&a);
}

static void test_lists_and_errors(void **state)
{
    dra_arena a;
    dra_doc *out;
    dra_kstatus st;
    (void)state;
    dra_arena_init(&a, NULL);
    dra_doc *l = conv(&a, J(&a, "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSliceList\","
                                "\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[{\"metadata\":{\"name\":\"a\"},"
                                "\"spec\":{\"devices\":[{\"name\":\"d\",\"attributes\":{}}]}}]}"), "v1beta1");
    assert_string_equal(show(l), "{\"apiVersion\":\"resource.k8s.io/v1beta1\",\"kind\":\"ResourceSliceList\","
                                 "\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[{\"metadata\":{\"name\":\"a\"},"
                                 "\"spec\":{\"devices\":[{\"name\":\"d\",\"basic\":{\"attributes\":{}}}]}}]}");
    memset(&st, 0, sizeof st);
    assert_int_equal(api_conv_convert(&a, J(&a, "{\"apiVersion\":\"resource.k8s.io/v1alpha3\","
                                                "\"kind\":\"ResourceClaim\"}"), "v1", &out, &st), DRA_EINVAL);
    assert_int_equal(st.code, 400);
    assert_string_equal(st.message, "no kind \"ResourceClaim\" is registered for version \"resource.k8s.io/v1alpha3\"");
    assert_int_equal(api_conv_convert(&a, J(&a, "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"Pod\"}"),
                                      "v1beta1", &out, &st), DRA_EINVAL);
    assert_int_equal(api_conv_convert(&a, J(&a, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}"), "v1", &out, &st),
                     DRA_EINVAL);
    assert_int_equal(api_conv_convert(&a, J(&a, "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\"}"),
                                      "v2", &out, &st), DRA_EINVAL);
    assert_int_equal(api_conv_convert(&a, J(&a, "{\"kind\":\"DeviceClass\"}"), "v1", &out, &st), DRA_EINVAL);
    assert_true(api_conv_version_known("v1beta2"));
    assert_false(api_conv_version_known("v1alpha3"));
    dra_arena_fini(&a);
}

/* The seed slice through v1beta1 and back, and through every version pair. */
static void test_seed_round_trips(void **state)
{
    dra_arena a;
    dra_doc **docs;
    size_t n, len;
    char *text = dra_test_slurp(DRA_SOURCE_DIR "/examples/seed.yaml", &len);
    static const char *const vs[] = {"v1", "v1beta2", "v1beta1"};
    (void)state;
    dra_arena_init(&a, NULL);
    assert_int_equal(dra_doc_parse_yaml(&a, text, len, &docs, &n, NULL), DRA_OK);
    for (size_t i = 0; i < n; i++) {
        const dra_doc *av = dra_doc_get(docs[i], "apiVersion");
        if (strcmp(av->u.str.s, "resource.k8s.io/v1"))
            continue;
        for (size_t x = 0; x < 3; x++)
            for (size_t y = 0; y < 3; y++) {
                dra_doc *there = conv(&a, docs[i], vs[x]);
                dra_doc *mid = conv(&a, there, vs[y]);
                dra_doc *back = conv(&a, mid, "v1");
                if (!dra_doc_equal(back, docs[i]))
                    fail_msg("round trip v1 -> %s -> %s -> v1 changed %s", vs[x], vs[y],
                             dra_doc_get(docs[i], "kind")->u.str.s);
            }
    }
    free(text);
    dra_arena_fini(&a);
}

static void test_failmem(void **state)
{
    (void)state;
    for (long i = 0; i < 200; i++) {
        dra_failmem fm;
        dra_arena a, in;
        dra_doc *out;
        dra_arena_init(&in, NULL);
        dra_doc *c = J(&in, B1_CLAIM), *s = J(&in, V1_SLICE);
        dra_failmem_init(&fm, i);
        dra_arena_init(&a, &fm.mem);
        dra_err e = api_conv_convert(&a, c, "v1", &out, NULL);
        assert_true(e == DRA_OK || e == DRA_ENOMEM);
        e = api_conv_convert(&a, s, "v1beta1", &out, NULL);
        assert_true(e == DRA_OK || e == DRA_ENOMEM);
        dra_arena_fini(&a);
        dra_arena_fini(&in);
        assert_int_equal(fm.live, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slice),
        cmocka_unit_test(test_claim_and_template),
        cmocka_unit_test(test_lists_and_errors),
        cmocka_unit_test(test_seed_round_trips),
        cmocka_unit_test(test_failmem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
