/* JSON merge patch and JSON patch: RFC 7386 / RFC 6902 cases, the
 * json-patch library's quirks kube-apiserver inherits, and the HTTP
 * answers for bad patches. Inputs are never modified. */
#include "apilib_test.h"
#include "patch.h"

static void merge_ok(const char *orig, const char *patch, const char *want)
{
    dra_arena a;
    dra_doc *o, *p, *out, *before;
    dra_arena_init(&a, NULL);
    o = J(&a, orig);
    p = J(&a, patch);
    before = J(&a, orig);
    assert_int_equal(api_patch_merge(&a, o, p, &out, NULL), DRA_OK);
    if (strcmp(show(out), want))
        fail_msg("merge %s + %s:\n got  %s\n want %s", orig, patch, show(out), want);
    assert_true(dra_doc_equal(o, before)); /* input untouched */
    dra_arena_fini(&a);
}

static void test_merge(void **state)
{
    (void)state;
    /* RFC 7386 appendix A, the object cases */
    merge_ok("{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}");
    merge_ok("{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}");
    merge_ok("{\"a\":\"b\"}", "{\"a\":null}", "{}");
    merge_ok("{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}");
    merge_ok("{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}");
    merge_ok("{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}");
    merge_ok("{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}", "{\"a\":{\"b\":\"d\"}}");
    merge_ok("{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}");
    merge_ok("{\"e\":null}", "{\"a\":1}", "{\"e\":null,\"a\":1}");
    merge_ok("{}", "{\"a\":{\"bb\":{\"ccc\":null}}}", "{\"a\":{\"bb\":{}}}");
    /* library quirk: nulls inside arrays vanish where the value lands on nothing */
    merge_ok("{}", "{\"a\":[1,null,2]}", "{\"a\":[1,2]}");
    merge_ok("{\"a\":\"x\"}", "{\"a\":[1,null,{\"k\":null}]}", "{\"a\":[1,{}]}");
    /* ... but not when an object is replaced by a non-object */
    merge_ok("{\"a\":{\"x\":1}}", "{\"a\":[null]}", "{\"a\":[null]}");
    /* kubectl label / annotate / finalizer removal bodies */
    merge_ok("{\"metadata\":{\"name\":\"c\",\"labels\":{\"a\":\"1\"}},\"spec\":{\"x\":1}}",
             "{\"metadata\":{\"labels\":{\"b\":\"2\"}}}",
             "{\"metadata\":{\"name\":\"c\",\"labels\":{\"a\":\"1\",\"b\":\"2\"}},\"spec\":{\"x\":1}}");
    merge_ok("{\"metadata\":{\"name\":\"c\",\"finalizers\":[\"x\"]}}",
             "{\"metadata\":{\"finalizers\":null}}", "{\"metadata\":{\"name\":\"c\"}}");
    /* a null original member is treated as absent */
    merge_ok("{\"a\":null}", "{\"a\":{\"b\":null,\"c\":1}}", "{\"a\":{\"c\":1}}");
    merge_ok("{\"n\":1.5,\"i\":9007199254740993}", "{\"j\":2}",
             "{\"n\":1.5,\"i\":9007199254740993,\"j\":2}");
}

static void test_merge_errors(void **state)
{
    dra_arena a;
    dra_doc *out = (dra_doc *)1;
    dra_kstatus st;
    (void)state;
    dra_arena_init(&a, NULL);
    memset(&st, 0, sizeof st);
    assert_int_equal(api_patch_merge(&a, J(&a, "{}"), J(&a, "null"), &out, &st), DRA_EINVAL);
    assert_null(out);
    assert_int_equal(st.code, 400);
    assert_string_equal(st.reason, "BadRequest");
    assert_string_equal(st.message, "Invalid JSON Patch");
    assert_int_equal(api_patch_merge(&a, J(&a, "{}"), J(&a, "[1]"), &out, &st), DRA_EINVALID);
    assert_int_equal(st.code, 422);
    assert_string_equal(st.reason, "Invalid");
    assert_string_equal(st.message,
                        " \"\" is invalid: patch: Invalid value: \"[1]\": couldn't get "
                        "version/kind; json parse error: json: cannot unmarshal array into Go "
                        "value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty"
                        "\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }");
    dra_arena_fini(&a);
}

static void jp_ok(const char *orig, const char *ops, const char *want)
{
    dra_arena a;
    dra_doc *o, *out;
    dra_diag dg;
    dra_arena_init(&a, NULL);
    dra_diag_init(&dg, NULL);
    o = J(&a, orig);
    if (api_patch_json(&a, o, J(&a, ops), &out, NULL, &dg) != DRA_OK)
        fail_msg("json patch %s on %s: %s", ops, orig, dra_diag_first(&dg));
    if (strcmp(show(out), want))
        fail_msg("json patch %s on %s:\n got  %s\n want %s", ops, orig, show(out), want);
    assert_true(dra_doc_equal(o, J(&a, orig)));
    dra_diag_fini(&dg);
    dra_arena_fini(&a);
}

static void jp_fails(const char *orig, const char *ops, const char *detail)
{
    dra_arena a;
    dra_doc *out = (dra_doc *)1;
    dra_diag dg;
    dra_kstatus st;
    dra_arena_init(&a, NULL);
    dra_diag_init(&dg, NULL);
    memset(&st, 0, sizeof st);
    assert_int_equal(api_patch_json(&a, J(&a, orig), J(&a, ops), &out, &st, &dg), DRA_EINVALID);
    assert_null(out);
    assert_int_equal(st.code, 422);
    assert_string_equal(st.reason, "Invalid");
    assert_string_equal(st.message, "the server rejected our request due to an error in our request");
    if (strcmp(dra_diag_first(&dg), detail))
        fail_msg("%s: detail %s, want %s", ops, dra_diag_first(&dg), detail);
    dra_diag_fini(&dg);
    dra_arena_fini(&a);
}

static void test_json_patch(void **state)
{
    (void)state;
    jp_ok("{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\"}]",
          "{\"foo\":\"bar\",\"baz\":\"qux\"}");
    jp_ok("{\"foo\":[\"bar\",\"baz\"]}", "[{\"op\":\"add\",\"path\":\"/foo/1\",\"value\":\"qux\"}]",
          "{\"foo\":[\"bar\",\"qux\",\"baz\"]}");
    jp_ok("{\"foo\":[\"bar\"]}", "[{\"op\":\"add\",\"path\":\"/foo/-\",\"value\":[\"abc\"]}]",
          "{\"foo\":[\"bar\",[\"abc\"]]}");
    jp_ok("{\"foo\":[\"bar\"]}", "[{\"op\":\"add\",\"path\":\"/foo/1\",\"value\":1}]",
          "{\"foo\":[\"bar\",1]}");
    jp_ok("{\"baz\":\"qux\",\"foo\":\"bar\"}", "[{\"op\":\"remove\",\"path\":\"/baz\"}]",
          "{\"foo\":\"bar\"}");
    jp_ok("{\"foo\":[\"bar\",\"qux\",\"baz\"]}", "[{\"op\":\"remove\",\"path\":\"/foo/1\"}]",
          "{\"foo\":[\"bar\",\"baz\"]}");
    jp_ok("{\"baz\":\"qux\",\"foo\":\"bar\"}", "[{\"op\":\"replace\",\"path\":\"/baz\",\"value\":\"boo\"}]",
          "{\"baz\":\"boo\",\"foo\":\"bar\"}");
    jp_ok("{\"foo\":{\"bar\":\"baz\",\"waldo\":\"fred\"},\"qux\":{\"corge\":\"grault\"}}",
          "[{\"op\":\"move\",\"from\":\"/foo/waldo\",\"path\":\"/qux/thud\"}]",
          "{\"foo\":{\"bar\":\"baz\"},\"qux\":{\"corge\":\"grault\",\"thud\":\"fred\"}}");
    jp_ok("{\"foo\":[\"all\",\"grass\",\"cows\",\"eat\"]}",
          "[{\"op\":\"move\",\"from\":\"/foo/1\",\"path\":\"/foo/3\"}]",
          "{\"foo\":[\"all\",\"cows\",\"eat\",\"grass\"]}");
    jp_ok("{\"a\":{\"b\":[1]}}", "[{\"op\":\"copy\",\"from\":\"/a/b\",\"path\":\"/c\"},"
          "{\"op\":\"add\",\"path\":\"/c/-\",\"value\":2}]", "{\"a\":{\"b\":[1]},\"c\":[1,2]}");
    jp_ok("{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}",
          "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"qux\"},{\"op\":\"test\",\"path\":\"/foo/1\",\"value\":2}]",
          "{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}");
    /* escapes: ~1 is '/', ~0 is '~' */
    jp_ok("{\"metadata\":{\"labels\":{\"a/b\":\"1\",\"m~n\":\"2\"}}}",
          "[{\"op\":\"replace\",\"path\":\"/metadata/labels/a~1b\",\"value\":\"3\"},"
          "{\"op\":\"remove\",\"path\":\"/metadata/labels/m~0n\"}]",
          "{\"metadata\":{\"labels\":{\"a/b\":\"3\"}}}");
    /* the typical kubectl patch --type=json body */
    jp_ok("{\"spec\":{\"containers\":[{\"name\":\"c\",\"args\":[\"a\"]}]}}",
          "[{\"op\":\"add\",\"path\":\"/spec/containers/0/args/-\",\"value\":\"--x\"}]",
          "{\"spec\":{\"containers\":[{\"name\":\"c\",\"args\":[\"a\",\"--x\"]}]}}");
    /* a null patch is an empty one; add without value adds null */
    jp_ok("{\"a\":1}", "null", "{\"a\":1}");
    jp_ok("{\"a\":1}", "[{\"op\":\"add\",\"path\":\"/b\"}]", "{\"a\":1,\"b\":null}");
    jp_ok("{\"a\":1}", "[{\"op\":\"test\",\"path\":\"/b\",\"value\":null}]", "{\"a\":1}");
}

static void test_json_patch_errors(void **state)
{
    dra_arena a;
    dra_doc *out;
    dra_kstatus st;
    dra_buf big;
    (void)state;
    jp_fails("{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"/b\",\"value\":2}]",
             "replace operation does not apply: doc is missing key: /b: missing value");
    jp_fails("{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"/x/y\"}]",
             "remove operation does not apply: doc is missing path: \"/x/y\": missing value");
    jp_fails("{\"a\":[1]}", "[{\"op\":\"add\",\"path\":\"/a/5\",\"value\":2}]",
             "error in add for path: '/a/5': Unable to access invalid index: 5");
    jp_fails("{\"a\":1}", "[{\"op\":\"test\",\"path\":\"/a\",\"value\":2}]",
             "testing value /a failed: test failed");
    jp_fails("{\"a\":1}", "[{\"op\":\"frob\",\"path\":\"/a\"}]", "Unexpected kind: frob");
    jp_fails("{\"a\":1}", "[{\"path\":\"/a\"}]", "Unexpected kind: unknown");
    jp_fails("{\"a\":1}", "[{\"op\":\"add\",\"path\":\"a\",\"value\":1}]",
             "add operation does not apply: doc is missing path: \"a\": missing value");
    jp_fails("{\"a\":1}", "[{\"op\":\"move\",\"path\":\"/b\"}]",
             "move operation failed to decode from: missing value");
    /* a later failure undoes the earlier operations (the result is dropped) */
    jp_fails("{\"a\":1}", "[{\"op\":\"add\",\"path\":\"/b\",\"value\":1},"
             "{\"op\":\"remove\",\"path\":\"/c\"}]",
             "remove operation does not apply: doc is missing path: \"/c\": missing value");

    dra_arena_init(&a, NULL);
    memset(&st, 0, sizeof st);
    assert_int_equal(api_patch_json(&a, J(&a, "{}"), J(&a, "{\"op\":\"add\"}"), &out, &st, NULL),
                     DRA_EINVAL);
    assert_int_equal(st.code, 400);
    assert_string_equal(st.message, "json: cannot unmarshal object into Go value of type jsonpatch.Patch");
    assert_int_equal(api_patch_json(&a, J(&a, "{}"), J(&a, "[\"x\"]"), &out, &st, NULL), DRA_EINVAL);
    assert_string_equal(st.message, "json: cannot unmarshal string into Go value of type jsonpatch.Operation");
    dra_buf_init(&big, NULL);
    dra_buf_putc(&big, '[');
    for (int i = 0; i <= API_PATCH_MAX_JSON_OPS; i++)
        dra_buf_printf(&big, "%s{\"op\":\"test\",\"path\":\"/a\"}", i ? "," : "");
    dra_buf_putc(&big, ']');
    assert_int_equal(api_patch_json(&a, J(&a, "{}"), J(&a, big.p), &out, &st, NULL), DRA_ETOOLARGE);
    assert_int_equal(st.code, 413);
    assert_string_equal(st.message, "The allowed maximum operations in a JSON patch is 10000, got 10001");
    dra_buf_fini(&big);
    dra_arena_fini(&a);
}

static void test_failmem(void **state)
{
    (void)state;
    for (long i = 0; i < 300; i++) {
        dra_failmem fm;
        dra_arena a, in;
        dra_doc *out;
        dra_err e;
        dra_arena_init(&in, NULL);
        dra_doc *o = J(&in, "{\"metadata\":{\"name\":\"x\",\"labels\":{\"a\":\"1\"}},\"spec\":{\"l\":[1,2,3]}}");
        dra_doc *mp = J(&in, "{\"metadata\":{\"labels\":{\"b\":\"2\",\"a\":null}},\"spec\":{\"l\":[4,null]}}");
        dra_doc *jp = J(&in, "[{\"op\":\"add\",\"path\":\"/spec/l/0\",\"value\":{\"k\":[1]}},"
                             "{\"op\":\"copy\",\"from\":\"/metadata\",\"path\":\"/m2\"}]");
        dra_failmem_init(&fm, i);
        dra_arena_init(&a, &fm.mem);
        e = api_patch_merge(&a, o, mp, &out, NULL);
        assert_true(e == DRA_OK || e == DRA_ENOMEM);
        e = api_patch_json(&a, o, jp, &out, NULL, NULL);
        assert_true(e == DRA_OK || e == DRA_ENOMEM);
        dra_arena_fini(&a);
        dra_arena_fini(&in);
        assert_int_equal(fm.live, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_merge_errors),
        cmocka_unit_test(test_json_patch),
        cmocka_unit_test(test_json_patch_errors),
        cmocka_unit_test(test_failmem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
