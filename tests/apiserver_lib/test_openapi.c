/* OpenAPI v3: the index and its hashes, the PATCH operations kubectl's
 * field-validation probe looks for, and component schemas deep enough
 * for `kubectl explain` (every $ref resolves, descriptions everywhere). */
#include "dra_test.h"
#include "dra/codec.h"
#include "openapi.h"

static const char *const gvs[] = {"api/v1", "apis/resource.k8s.io/v1",
                                  "apis/resource.k8s.io/v1beta2", "apis/resource.k8s.io/v1beta1"};

static dra_doc *doc_of(dra_arena *a, const char *gv, char *hash)
{
    dra_buf b;
    dra_doc *d = NULL;
    dra_buf_init(&b, NULL);
    assert_int_equal(api_openapi_v3_doc(gv, &b, hash), DRA_OK);
    assert_int_equal(dra_doc_parse_json(a, b.p, b.len, &d, NULL), DRA_OK);
    dra_buf_fini(&b);
    return d;
}

static const dra_doc *get(const dra_doc *d, const char *k)
{
    const dra_doc *v = dra_doc_get(d, k);
    if (!v)
        fail_msg("missing %s", k);
    return v;
}

static const char *str(const dra_doc *d, const char *k)
{
    const dra_doc *v = get(d, k);
    assert_int_equal(v->kind, DRA_DOC_STRING);
    return v->u.str.s;
}

static void test_index(void **state)
{
    dra_arena a;
    dra_buf b;
    dra_doc *d = NULL;
    (void)state;
    dra_arena_init(&a, NULL);
    dra_buf_init(&b, NULL);
    assert_int_equal(api_openapi_v3_index(&b), DRA_OK);
    assert_int_equal(dra_doc_parse_json(&a, b.p, b.len, &d, NULL), DRA_OK);
    const dra_doc *paths = get(d, "paths");
    assert_int_equal(paths->u.map.n, 4);
    for (size_t i = 0; i < 4; i++) {
        char hash[33], want[256];
        assert_int_equal(api_openapi_v3_hash(gvs[i], hash), DRA_OK);
        snprintf(want, sizeof want, "/openapi/v3/%s?hash=%s", gvs[i], hash);
        assert_string_equal(str(get(paths, gvs[i]), "serverRelativeURL"), want);
    }
    /* the hash is stable, and the documents differ */
    char h1[33], h2[33], h3[33];
    assert_int_equal(api_openapi_v3_hash("apis/resource.k8s.io/v1", h1), DRA_OK);
    assert_int_equal(api_openapi_v3_hash("/openapi/v3/apis/resource.k8s.io/v1", h2), DRA_OK);
    assert_string_equal(h1, h2);
    assert_int_equal(api_openapi_v3_hash("apis/resource.k8s.io/v1beta1", h3), DRA_OK);
    assert_string_not_equal(h1, h3);
    assert_int_equal(api_openapi_v3_hash("apis/apps/v1", h3), DRA_ENOTFOUND);
    assert_int_equal(api_openapi_v3_doc("apis/resource.k8s.io/v1alpha3", &b, NULL), DRA_ENOTFOUND);
    assert_string_equal(api_openapi_v2_content_type(),
                        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
    dra_buf_fini(&b);
    dra_arena_fini(&a);
}

/* kubectl (cli-runtime's query param verifier): a PATCH operation whose
 * x-kubernetes-group-version-kind is the GVK and that lists the
 * fieldValidation query parameter inline. */
static int supports_field_validation(const dra_doc *doc, const char *g, const char *v, const char *k)
{
    const dra_doc *paths = get(doc, "paths");
    for (size_t i = 0; i < paths->u.map.n; i++) {
        const dra_doc *patch = dra_doc_get(paths->u.map.m[i].val, "patch");
        const dra_doc *gvk = dra_doc_get(patch, "x-kubernetes-group-version-kind");
        if (!gvk || strcmp(str(gvk, "group"), g) || strcmp(str(gvk, "version"), v) ||
            strcmp(str(gvk, "kind"), k))
            continue;
        const dra_doc *params = get(patch, "parameters");
        for (size_t j = 0; j < params->u.list.n; j++)
            if (!strcmp(str(params->u.list.items[j], "name"), "fieldValidation") &&
                !strcmp(str(params->u.list.items[j], "in"), "query"))
                return 1;
    }
    return 0;
}

static void test_field_validation_probe(void **state)
{
    dra_arena a;
    (void)state;
    dra_arena_init(&a, NULL);
    dra_doc *core = doc_of(&a, "api/v1", NULL);
    assert_string_equal(str(core, "openapi"), "3.0.0");
    assert_true(supports_field_validation(core, "", "v1", "Pod"));
    assert_true(supports_field_validation(core, "", "v1", "Node"));
    assert_true(supports_field_validation(core, "", "v1", "Namespace"));
    assert_true(supports_field_validation(core, "", "v1", "Event"));
    static const char *const kinds[] = {"DeviceClass", "ResourceClaim", "ResourceClaimTemplate",
                                        "ResourceSlice"};
    static const char *const versions[] = {"v1", "v1beta2", "v1beta1"};
    for (size_t v = 0; v < 3; v++) {
        dra_doc *d = doc_of(&a, gvs[v + 1], NULL);
        for (size_t k = 0; k < 4; k++)
            assert_true(supports_field_validation(d, "resource.k8s.io", versions[v], kinds[k]));
        assert_false(supports_field_validation(d, "resource.k8s.io", "v1alpha3", "ResourceClaim"));
    }
    assert_non_null(dra_doc_get(get(core, "paths"), "/api/v1/namespaces/{namespace}/pods/{name}/status"));
    assert_non_null(dra_doc_get(get(doc_of(&a, "apis/resource.k8s.io/v1", NULL), "paths"),
                                "/apis/resource.k8s.io/v1/resourceslices/{name}"));
    dra_arena_fini(&a);
}

/* Follows a property the way kubectl explain does: $ref or allOf[0].$ref. */
static const dra_doc *resolve(const dra_doc *doc, const dra_doc *s)
{
    const dra_doc *schemas = get(get(doc, "components"), "schemas");
    const dra_doc *ref = dra_doc_get(s, "$ref");
    const dra_doc *all = dra_doc_get(s, "allOf");
    if (!ref && all)
        ref = dra_doc_get(all->u.list.items[0], "$ref");
    if (!ref)
        return s;
    const char *name = ref->u.str.s + strlen("#/components/schemas/");
    const dra_doc *t = dra_doc_get(schemas, name);
    if (!t)
        fail_msg("unresolved $ref %s", ref->u.str.s);
    return t;
}

/* The schema at a dotted field path from the kind's schema. */
static const dra_doc *explain(const dra_doc *doc, const char *g, const char *v, const char *kind,
                              const char *path)
{
    const dra_doc *schemas = get(get(doc, "components"), "schemas");
    const dra_doc *s = NULL;
    for (size_t i = 0; i < schemas->u.map.n && !s; i++) {
        const dra_doc *gvks = dra_doc_get(schemas->u.map.m[i].val, "x-kubernetes-group-version-kind");
        for (size_t j = 0; gvks && j < gvks->u.list.n; j++) {
            const dra_doc *e = gvks->u.list.items[j];
            if (!strcmp(str(e, "group"), g) && !strcmp(str(e, "version"), v) &&
                !strcmp(str(e, "kind"), kind))
                s = schemas->u.map.m[i].val;
        }
    }
    if (!s)
        fail_msg("GVK %s/%s %s not found in OpenAPI schema", g, v, kind);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *f = strtok(buf, "."); f; f = strtok(NULL, ".")) {
        s = dra_doc_get(get(s, "properties"), f);
        if (!s)
            fail_msg("no field %s in %s", f, path);
        if (dra_doc_get(s, "items"))
            s = get(s, "items");
        else if (dra_doc_get(s, "additionalProperties"))
            s = get(s, "additionalProperties");
        s = resolve(doc, s);
    }
    return s;
}

static void expect_fields(const dra_doc *s, const char *const *names)
{
    const dra_doc *props = get(s, "properties");
    for (; *names; names++) {
        const dra_doc *f = dra_doc_get(props, *names);
        if (!f)
            fail_msg("no field %s", *names);
        assert_true(strlen(str(f, "description")) > 5);
    }
}

static void test_explain(void **state)
{
    dra_arena a;
    (void)state;
    dra_arena_init(&a, NULL);
    dra_doc *rv1 = doc_of(&a, "apis/resource.k8s.io/v1", NULL);
    const dra_doc *devices = explain(rv1, "resource.k8s.io", "v1", "ResourceClaim", "spec.devices");
    static const char *const dc[] = {"requests", "constraints", "config", NULL};
    expect_fields(devices, dc);
    const dra_doc *exactly = explain(rv1, "resource.k8s.io", "v1", "ResourceClaim",
                                     "spec.devices.requests.exactly");
    static const char *const ex[] = {"deviceClassName", "selectors", "allocationMode", "count",
                                     "adminAccess", "tolerations", "capacity", NULL};
    expect_fields(exactly, ex);
    assert_string_equal(get(exactly, "required")->u.list.items[0]->u.str.s, "deviceClassName");
    const dra_doc *rf = dra_doc_get(get(explain(rv1, "resource.k8s.io", "v1", "ResourceClaim", "status"),
                                        "properties"), "reservedFor");
    assert_string_equal(str(rf, "x-kubernetes-list-type"), "map");
    assert_string_equal(str(rf, "x-kubernetes-patch-merge-key"), "uid");
    assert_string_equal(str(rf, "x-kubernetes-patch-strategy"), "merge");
    const dra_doc *dev = explain(rv1, "resource.k8s.io", "v1", "ResourceSlice", "spec.devices");
    static const char *const df[] = {"name", "attributes", "capacity", "taints", NULL};
    expect_fields(dev, df);
    const dra_doc *val = dra_doc_get(get(explain(rv1, "resource.k8s.io", "v1", "ResourceSlice",
                                                 "spec.devices.attributes"), "properties"), "version");
    assert_string_equal(str(val, "type"), "string");

    dra_doc *core = doc_of(&a, "api/v1", NULL);
    const dra_doc *ctr = explain(core, "", "v1", "Pod", "spec.containers");
    static const char *const cf[] = {"name", "image", "command", "args", "env", "ports",
                                     "resources", "volumeMounts", NULL};
    expect_fields(ctr, cf);
    const dra_doc *containers = dra_doc_get(get(explain(core, "", "v1", "Pod", "spec"), "properties"),
                                            "containers");
    assert_string_equal(str(containers, "x-kubernetes-patch-merge-key"), "name");
    assert_string_equal(str(containers, "x-kubernetes-list-type"), "map");
    const dra_doc *claims = explain(core, "", "v1", "Pod", "spec.containers.resources.claims");
    static const char *const cl[] = {"name", "request", NULL};
    expect_fields(claims, cl);
    assert_string_equal(str(claims, "description"), "A claim of the pod a container uses.");
    explain(core, "", "v1", "Event", "involvedObject");
    explain(core, "", "v1", "Node", "status.nodeInfo");
    explain(core, "", "v1", "Namespace", "status.conditions");

    dra_doc *b1 = doc_of(&a, "apis/resource.k8s.io/v1beta1", NULL);
    static const char *const bf[] = {"attributes", "capacity", NULL};
    expect_fields(explain(b1, "resource.k8s.io", "v1beta1", "ResourceSlice", "spec.devices.basic"), bf);
    static const char *const br[] = {"name", "deviceClassName", "count", "firstAvailable", NULL};
    expect_fields(explain(b1, "resource.k8s.io", "v1beta1", "ResourceClaim", "spec.devices.requests"), br);
    assert_non_null(dra_doc_get(get(get(b1, "components"), "schemas"), "io.k8s.api.resource.v1beta1.BasicDevice"));
    assert_null(dra_doc_get(get(get(rv1, "components"), "schemas"), "io.k8s.api.resource.v1.BasicDevice"));
    dra_arena_fini(&a);
}

/* Every $ref in every document points at a schema of that document. */
static void walk_refs(const dra_doc *doc, const dra_doc *d, size_t *n)
{
    if (d->kind == DRA_DOC_MAP) {
        const dra_doc *ref = dra_doc_get(d, "$ref");
        if (ref) {
            resolve(doc, d);
            (*n)++;
        }
        for (size_t i = 0; i < d->u.map.n; i++)
            walk_refs(doc, d->u.map.m[i].val, n);
    } else if (d->kind == DRA_DOC_LIST) {
        for (size_t i = 0; i < d->u.list.n; i++)
            walk_refs(doc, d->u.list.items[i], n);
    }
}

static void test_refs_resolve(void **state)
{
    dra_arena a;
    (void)state;
    dra_arena_init(&a, NULL);
    for (size_t i = 0; i < 4; i++) {
        size_t n = 0;
        dra_doc *d = doc_of(&a, gvs[i], NULL);
        walk_refs(d, d, &n);
        assert_true(n > 20);
    }
    dra_arena_fini(&a);
}

static void test_lookup(void **state)
{
    (void)state;
    const api_openapi_type *pod = api_openapi_kind_type("", "v1", "Pod");
    assert_non_null(pod);
    const api_openapi_field *spec = api_openapi_field_find(pod, "spec");
    assert_non_null(spec);
    const api_openapi_field *c = api_openapi_field_find(spec->ref, "containers");
    assert_true(c->flags & API_OA_F_SMP_MERGE);
    assert_string_equal(c->merge_key, "name");
    assert_non_null(api_openapi_kind_type("resource.k8s.io", "v1beta1", "ResourceSlice"));
    assert_null(api_openapi_kind_type("resource.k8s.io", "v1alpha3", "ResourceSlice"));
    assert_null(api_openapi_field_find(NULL, "x"));
}

static void test_failmem(void **state)
{
    (void)state;
    for (long i = 0; i < 2000; i += 7) {
        dra_failmem fm;
        dra_buf b;
        dra_err e;
        dra_failmem_init(&fm, i);
        dra_buf_init(&b, &fm.mem);
        e = api_openapi_v3_doc("apis/resource.k8s.io/v1", &b, NULL);
        assert_true(e == DRA_OK || e == DRA_ENOMEM);
        dra_buf_fini(&b);
        assert_int_equal(fm.live, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index),
        cmocka_unit_test(test_field_validation_probe),
        cmocka_unit_test(test_explain),
        cmocka_unit_test(test_refs_resolve),
        cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_failmem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
