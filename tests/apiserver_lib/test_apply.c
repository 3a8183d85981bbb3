/* Server-side apply and managedFields: create-or-update, FieldsV1 sets,
 * conflicts with upstream's message and causes, force, removal of fields
 * a manager stops applying, and Update entries for ordinary writes. */
#include "apilib_test.h"
#include "patch.h"

static const api_openapi_type *POD;

static const dra_doc *at(const dra_doc *d, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *f = strtok(buf, "."); f && d; f = strtok(NULL, ".")) {
        if (d->kind == DRA_DOC_LIST)
            d = d->u.list.items[atoi(f)];
        else
            d = dra_doc_get(d, f);
    }
    return d;
}

static const char *s_at(const dra_doc *d, const char *path)
{
    const dra_doc *v = at(d, path);
    return v && v->kind == DRA_DOC_STRING ? v->u.str.s : NULL;
}

#define APPLIED1                                                                              \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"default\"," \
    "\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox:1\"}]}}"

static api_apply_opts opts(const char *manager, int force)
{
    api_apply_opts o = {manager, force, "v1", "2026-03-01T12:00:00Z", NULL};
    return o;
}

static void test_create_and_reapply(void **state)
{
    dra_arena a;
    dra_doc *out, *out2;
    api_apply_opts o = opts("kubectl", 0);
    (void)state;
    dra_arena_init(&a, NULL);
    assert_int_equal(api_patch_apply(&a, POD, NULL, J(&a, APPLIED1), &o, &out, NULL, NULL), DRA_OK);
    assert_string_equal(s_at(out, "spec.containers.0.image"), "busybox:1");
    const dra_doc *mf = at(out, "metadata.managedFields");
    assert_int_equal(mf->u.list.n, 1);
    assert_string_equal(show(mf->u.list.items[0]),
        "{\"manager\":\"kubectl\",\"operation\":\"Apply\",\"apiVersion\":\"v1\",\"time\":"
        "\"2026-03-01T12:00:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":"
        "{\"f:labels\":{\"f:app\":{}}},\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"c\\\"}\":"
        "{\".\":{},\"f:image\":{},\"f:name\":{}}}}}}");
    /* the same configuration again: same object, one entry */
    assert_int_equal(api_patch_apply(&a, POD, out, J(&a, APPLIED1), &o, &out2, NULL, NULL), DRA_OK);
    assert_true(dra_doc_equal(out, out2));
    /* a new image from the same manager */
    assert_int_equal(api_patch_apply(&a, POD, out,
                                     J(&a, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
                                           "\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers\":[{\"name\":\"c\","
                                           "\"image\":\"busybox:2\"}]}}"), &o, &out2, NULL, NULL), DRA_OK);
    assert_string_equal(s_at(out2, "spec.containers.0.image"), "busybox:2");
    /* the manager stops applying the label: it goes */
    assert_int_equal(api_patch_apply(&a, POD, out2,
                                     J(&a, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},"
                                           "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox:2\"}]}}"),
                                     &o, &out, NULL, NULL), DRA_OK);
    assert_null(at(out, "metadata.labels.app"));
    assert_non_null(strstr(show(at(out, "metadata.managedFields")), "\"fieldsV1\":{\"f:spec\""));
    dra_arena_fini(&a);
}

/* A pod created with kubectl create (an Update entry) and then applied
 * server-side with another image: 409 as kube-apiserver words it. */
static void test_conflicts(void **state)
{
    dra_arena a;
    dra_doc *created, *out = NULL;
    dra_kstatus st;
    dra_diag causes;
    api_apply_opts cr = opts("kubectl-client-side-apply", 0), ap = opts("kubectl", 0);
    (void)state;
    dra_arena_init(&a, NULL);
    dra_diag_init(&causes, NULL);
    memset(&st, 0, sizeof st);
    assert_int_equal(api_patch_managed_update(&a, POD, NULL, J(&a, APPLIED1), &cr, &created), DRA_OK);
    assert_string_equal(s_at(created, "metadata.managedFields.0.operation"), "Update");
    assert_string_equal(s_at(created, "metadata.managedFields.0.manager"), "kubectl-client-side-apply");

    const char *img2 = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},"
                       "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox:2\"}]}}";
    assert_int_equal(api_patch_apply(&a, POD, created, J(&a, img2), &ap, &out, &st, &causes),
                     DRA_ECONFLICT);
    assert_null(out);
    assert_int_equal(st.code, 409);
    assert_string_equal(st.reason, "Conflict");
    assert_string_equal(st.message, "Apply failed with 1 conflict: conflict with "
                                    "\"kubectl-client-side-apply\" using v1: .spec.containers[name=\"c\"].image");
    assert_int_equal(causes.n, 1);
    assert_string_equal(causes.v[0].path, ".spec.containers[name=\"c\"].image");
    assert_string_equal(causes.v[0].msg, "conflict with \"kubectl-client-side-apply\" using v1");

    /* the same value is shared, not a conflict */
    assert_int_equal(api_patch_apply(&a, POD, created, J(&a, APPLIED1), &ap, &out, &st, NULL), DRA_OK);
    assert_int_equal(at(out, "metadata.managedFields")->u.list.n, 2);
    assert_string_equal(s_at(out, "metadata.managedFields.0.operation"), "Apply"); /* Apply sorts first */

    /* force takes the image over */
    ap.force = 1;
    assert_int_equal(api_patch_apply(&a, POD, created, J(&a, img2), &ap, &out, &st, NULL), DRA_OK);
    assert_string_equal(s_at(out, "spec.containers.0.image"), "busybox:2");
    const char *mf = show(at(out, "metadata.managedFields"));
    assert_non_null(strstr(mf, "{\"manager\":\"kubectl-client-side-apply\",\"operation\":\"Update\""));
    /* the updater kept the label and the container's name, lost the image */
    assert_null(strstr(strstr(mf, "kubectl-client-side-apply"), "f:image"));
    assert_non_null(strstr(strstr(mf, "kubectl-client-side-apply"), "f:app"));

    /* two managers, several conflicts */
    dra_doc *two;
    api_apply_opts ed = opts("editor", 0);
    assert_int_equal(api_patch_managed_update(&a, POD, created,
                                              J(&a, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
                                                    "\"labels\":{\"app\":\"db\"}},\"spec\":{\"containers\":[{\"name\":\"c\","
                                                    "\"image\":\"busybox:1\"}]}}"), &ed, &two), DRA_OK);
    ap.force = 0;
    assert_int_equal(api_patch_apply(&a, POD, two,
                                     J(&a, "{\"metadata\":{\"labels\":{\"app\":\"x\"}},\"spec\":{\"containers\":"
                                           "[{\"name\":\"c\",\"image\":\"busybox:9\"}]}}"), &ap, &out, &st, NULL),
                     DRA_ECONFLICT);
    assert_string_equal(st.message,
                        "Apply failed with 2 conflicts: conflicts with \"editor\" using v1:\n- .metadata.labels.app\n"
                        "conflicts with \"kubectl-client-side-apply\" using v1:\n- .spec.containers[name=\"c\"].image");
    dra_diag_fini(&causes);
    dra_arena_fini(&a);
}

static void test_ownership_and_lists(void **state)
{
    dra_arena a;
    dra_doc *live, *out;
    api_apply_opts cr = opts("kubectl-create", 0), ap = opts("mgr", 0);
    (void)state;
    dra_arena_init(&a, NULL);
    assert_int_equal(api_patch_managed_update(&a, POD, NULL, J(&a, APPLIED1), &cr, &live), DRA_OK);
    /* applying a second container merges into the list by name */
    assert_int_equal(api_patch_apply(&a, POD, live,
                                     J(&a, "{\"spec\":{\"containers\":[{\"name\":\"e\",\"image\":\"e\"}]}}"),
                                     &ap, &out, NULL, NULL), DRA_OK);
    assert_string_equal(s_at(out, "spec.containers.0.name"), "c");
    assert_string_equal(s_at(out, "spec.containers.1.name"), "e");
    /* dropping it again removes only what mgr owned */
    assert_int_equal(api_patch_apply(&a, POD, out, J(&a, "{\"metadata\":{\"annotations\":{\"x\":\"1\"}}}"),
                                     &ap, &live, NULL, NULL), DRA_OK);
    assert_int_equal(at(live, "spec.containers")->u.list.n, 1);
    assert_string_equal(s_at(live, "spec.containers.0.name"), "c");
    assert_string_equal(s_at(live, "metadata.annotations.x"), "1");
    assert_string_equal(s_at(live, "metadata.labels.app"), "web"); /* kubectl-create's */
    /* finalizers are a set: one element each */
    assert_int_equal(api_patch_apply(&a, POD, live, J(&a, "{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}"),
                                     &ap, &out, NULL, NULL), DRA_OK);
    assert_non_null(strstr(show(at(out, "metadata.managedFields")), "\"f:finalizers\":{\"v:\\\"a\\\"\":{},\"v:\\\"b\\\"\":{}}"));
    /* status is not recorded through the main resource */
    assert_int_equal(api_patch_apply(&a, POD, NULL, J(&a, "{\"status\":{\"phase\":\"Running\"}}"),
                                     &ap, &out, NULL, NULL), DRA_OK);
    assert_null(at(out, "metadata.managedFields"));
    ap.subresource = "status";
    assert_int_equal(api_patch_apply(&a, POD, NULL, J(&a, "{\"status\":{\"phase\":\"Running\"}}"),
                                     &ap, &out, NULL, NULL), DRA_OK);
    assert_string_equal(s_at(out, "metadata.managedFields.0.subresource"), "status");
    dra_arena_fini(&a);
}

static void test_updates(void **state)
{
    dra_arena a;
    dra_doc *v1, *v2;
    api_apply_opts cr = opts("kubectl-create", 0), ed = opts("kubectl-edit", 0);
    (void)state;
    dra_arena_init(&a, NULL);
    assert_int_equal(api_patch_managed_update(&a, POD, NULL, J(&a, APPLIED1), &cr, &v1), DRA_OK);
    ed.now = "2026-03-01T12:05:00Z";
    assert_int_equal(api_patch_managed_update(&a, POD, v1,
                                              J(&a, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
                                                    "\"labels\":{\"app\":\"web\"},\"managedFields\":[]},\"spec\":{\"containers\":"
                                                    "[{\"name\":\"c\",\"image\":\"busybox:3\"}]}}"), &ed, &v2), DRA_OK);
    const dra_doc *mf = at(v2, "metadata.managedFields");
    assert_int_equal(mf->u.list.n, 2);
    /* sorted by operation, then time */
    assert_string_equal(s_at(mf, "0.manager"), "kubectl-create");
    assert_string_equal(s_at(mf, "1.manager"), "kubectl-edit");
    assert_string_equal(show(at(mf, "1.fieldsV1")),
                        "{\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"c\\\"}\":{\"f:image\":{}}}}}");
    assert_null(strstr(show(at(mf, "0.fieldsV1")), "f:image"));
    /* nothing changed: no entry for the manager */
    assert_int_equal(api_patch_managed_update(&a, POD, v2, v2, &cr, &v1), DRA_OK);
    assert_int_equal(at(v1, "metadata.managedFields")->u.list.n, 2);
    assert_int_equal(api_patch_managed_update(&a, POD, NULL, NULL, &cr, &v1), DRA_EINVAL);
    dra_arena_fini(&a);
}

static void test_errors(void **state)
{
    dra_arena a;
    dra_doc *out;
    dra_kstatus st;
    api_apply_opts none = opts("", 0), ap = opts("m", 0);
    (void)state;
    dra_arena_init(&a, NULL);
    memset(&st, 0, sizeof st);
    assert_int_equal(api_patch_apply(&a, POD, NULL, J(&a, "{}"), &none, &out, &st, NULL), DRA_EINVALID);
    assert_int_equal(st.code, 422);
    assert_string_equal(st.message, "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required "
                                    "value: is required for apply patch");
    assert_int_equal(api_patch_apply(&a, POD, NULL, J(&a, "[1]"), &ap, &out, &st, NULL), DRA_EINVAL);
    assert_int_equal(st.code, 400);
    dra_arena_fini(&a);
}

static void test_failmem(void **state)
{
    (void)state;
    for (long i = 0; i < 1500; i += 11) {
        dra_failmem fm;
        dra_arena a, in;
        dra_doc *out, *live;
        api_apply_opts cr = opts("c", 0), ap = opts("m", 1);
        dra_arena_init(&in, NULL);
        assert_int_equal(api_patch_managed_update(&in, POD, NULL, J(&in, APPLIED1), &cr, &live), DRA_OK);
        dra_doc *cfg = J(&in, "{\"metadata\":{\"labels\":{\"app\":\"x\"}},\"spec\":{\"containers\":"
                              "[{\"name\":\"c\",\"image\":\"z\"},{\"name\":\"d\"}]}}");
        dra_failmem_init(&fm, i);
        dra_arena_init(&a, &fm.mem);
        dra_err e = api_patch_apply(&a, POD, live, cfg, &ap, &out, NULL, NULL);
        assert_true(e == DRA_OK || e == DRA_ENOMEM);
        e = api_patch_managed_update(&a, POD, live, cfg, &cr, &out);
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
    return POD ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_and_reapply),
        cmocka_unit_test(test_conflicts),
        cmocka_unit_test(test_ownership_and_lists),
        cmocka_unit_test(test_updates),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_failmem),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
