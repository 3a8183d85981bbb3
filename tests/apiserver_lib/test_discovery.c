/* Discovery: Accept negotiation as kubectl 1.27-1.33 send it, and the
 * shapes of the legacy and aggregated documents. */
#include "dra_test.h"
#include "dra/codec.h"
#include "discovery.h"

#define ACCEPT_133                                                              \
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"      \
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList," \
    "application/json"
#define ACCEPT_127 \
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"

static void test_negotiate(void **state)
{
    const char *ct;
    (void)state;
    assert_int_equal(api_disc_negotiate(ACCEPT_133, &ct), API_DISC_V2);
    assert_string_equal(ct, "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
    assert_int_equal(api_disc_negotiate(ACCEPT_127, &ct), API_DISC_V2BETA1);
    assert_string_equal(ct, "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList");
    assert_int_equal(api_disc_negotiate("application/json", &ct), API_DISC_LEGACY);
    assert_string_equal(ct, "application/json");
    assert_int_equal(api_disc_negotiate(NULL, &ct), API_DISC_LEGACY);
    assert_int_equal(api_disc_negotiate("", NULL), API_DISC_LEGACY);
    assert_int_equal(api_disc_negotiate("*/*", NULL), API_DISC_LEGACY);
    /* parameters in another order, spaces, case of the type */
    assert_int_equal(api_disc_negotiate("Application/JSON; as=APIGroupDiscoveryList; "
                                        "v=v2; g=apidiscovery.k8s.io", NULL), API_DISC_V2);
    /* extra parameters (profile) do not hide the aggregated type */
    assert_int_equal(api_disc_negotiate("application/json;g=apidiscovery.k8s.io;v=v2;"
                                        "as=APIGroupDiscoveryList;profile=nopeer", NULL),
                     API_DISC_V2);
    /* the client's order decides: plain JSON first means legacy */
    assert_int_equal(api_disc_negotiate("application/json," ACCEPT_133, NULL), API_DISC_LEGACY);
    /* an unknown discovery version or another type is skipped */
    assert_int_equal(api_disc_negotiate("application/json;g=apidiscovery.k8s.io;v=v3;"
                                        "as=APIGroupDiscoveryList," ACCEPT_127, NULL),
                     API_DISC_V2BETA1);
    assert_int_equal(api_disc_negotiate("application/vnd.kubernetes.protobuf," ACCEPT_133, NULL),
                     API_DISC_V2);
}

static dra_doc *build(dra_arena *a, dra_err (*fn)(dra_buf *), dra_buf *keep)
{
    dra_doc *d = NULL;
    dra_buf_init(keep, NULL);
    assert_int_equal(fn(keep), DRA_OK);
    assert_int_equal(dra_doc_parse_json(a, keep->p, keep->len, &d, NULL), DRA_OK);
    return d;
}

static const dra_doc *at(const dra_doc *d, size_t i)
{
    assert_non_null(d);
    assert_int_equal(d->kind, DRA_DOC_LIST);
    assert_true(i < d->u.list.n);
    return d->u.list.items[i];
}

static const char *s(const dra_doc *d, const char *k)
{
    const dra_doc *v = dra_doc_get(d, k);
    assert_non_null(v);
    assert_int_equal(v->kind, DRA_DOC_STRING);
    return v->u.str.s;
}

/* The entry named |name| of an APIResourceList. */
static const dra_doc *entry(const dra_doc *list, const char *name)
{
    const dra_doc *res = dra_doc_get(list, "resources");
    for (size_t i = 0; i < res->u.list.n; i++)
        if (!strcmp(s(res->u.list.items[i], "name"), name))
            return res->u.list.items[i];
    fail_msg("no entry %s", name);
    return NULL;
}

static void expect_verbs(const dra_doc *e, const char *want)
{
    dra_buf b;
    const dra_doc *v = dra_doc_get(e, "verbs");
    dra_buf_init(&b, NULL);
    for (size_t i = 0; i < v->u.list.n; i++)
        dra_buf_printf(&b, "%s%s", i ? "," : "", v->u.list.items[i]->u.str.s);
    assert_string_equal(b.p ? b.p : "", want);
    dra_buf_fini(&b);
}

static void test_legacy(void **state)
{
    dra_arena a;
    dra_buf b;
    dra_doc *d = NULL;
    (void)state;
    dra_arena_init(&a, NULL);
    dra_buf_init(&b, NULL);
    assert_int_equal(api_disc_api_versions("127.0.0.1:6443", &b), DRA_OK);
    assert_string_equal(b.p, "{\"kind\":\"APIVersions\",\"versions\":[\"v1\"],"
                             "\"serverAddressByClientCIDRs\":[{\"clientCIDR\":\"0.0.0.0/0\","
                             "\"serverAddress\":\"127.0.0.1:6443\"}]}");
    dra_buf_reset(&b);
    assert_int_equal(api_disc_group_list(&b), DRA_OK);
    assert_string_equal(b.p,
        "{\"kind\":\"APIGroupList\",\"apiVersion\":\"v1\",\"groups\":[{\"name\":\"resource.k8s.io\","
        "\"versions\":[{\"groupVersion\":\"resource.k8s.io/v1\",\"version\":\"v1\"},"
        "{\"groupVersion\":\"resource.k8s.io/v1beta2\",\"version\":\"v1beta2\"},"
        "{\"groupVersion\":\"resource.k8s.io/v1beta1\",\"version\":\"v1beta1\"}],"
        "\"preferredVersion\":{\"groupVersion\":\"resource.k8s.io/v1\",\"version\":\"v1\"}}]}");
    dra_buf_reset(&b);
    assert_int_equal(api_disc_group("resource.k8s.io", &b), DRA_OK);
    assert_non_null(strstr(b.p, "{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\",\"name\":\"resource.k8s.io\""));
    assert_int_equal(api_disc_group("apps", &b), DRA_ENOTFOUND);
    assert_int_equal(api_disc_group("", &b), DRA_ENOTFOUND);

    dra_buf_reset(&b);
    assert_int_equal(api_disc_resource_list("", "v1", &b), DRA_OK);
    assert_int_equal(dra_doc_parse_json(&a, b.p, b.len, &d, NULL), DRA_OK);
    assert_string_equal(s(d, "kind"), "APIResourceList");
    assert_string_equal(s(d, "groupVersion"), "v1");
    const dra_doc *pods = entry(d, "pods");
    assert_string_equal(s(pods, "singularName"), "pod");
    assert_string_equal(s(pods, "kind"), "Pod");
    assert_true(dra_doc_get(pods, "namespaced")->u.b);
    assert_string_equal(at(dra_doc_get(pods, "shortNames"), 0)->u.str.s, "po");
    assert_string_equal(at(dra_doc_get(pods, "categories"), 0)->u.str.s, "all");
    expect_verbs(pods, "create,delete,deletecollection,get,list,patch,update,watch");
    expect_verbs(entry(d, "pods/binding"), "create");
    assert_string_equal(s(entry(d, "pods/binding"), "kind"), "Binding");
    expect_verbs(entry(d, "pods/log"), "get");
    expect_verbs(entry(d, "pods/status"), "get,patch,update");
    assert_string_equal(s(entry(d, "pods/status"), "singularName"), "");
    expect_verbs(entry(d, "namespaces"), "create,delete,get,list,patch,update,watch");
    assert_false(dra_doc_get(entry(d, "nodes"), "namespaced")->u.b);
    assert_null(dra_doc_get(entry(d, "nodes/status"), "shortNames"));
    /* subresources right after their parent, by name */
    const dra_doc *res = dra_doc_get(d, "resources");
    size_t i;
    for (i = 0; strcmp(s(res->u.list.items[i], "name"), "pods"); i++)
        ;
    assert_string_equal(s(at(res, i + 1), "name"), "pods/binding");
    assert_string_equal(s(at(res, i + 2), "name"), "pods/log");
    assert_string_equal(s(at(res, i + 3), "name"), "pods/status");

    dra_buf_reset(&b);
    assert_int_equal(api_disc_resource_list("resource.k8s.io", "v1beta1", &b), DRA_OK);
    assert_int_equal(dra_doc_parse_json(&a, b.p, b.len, &d, NULL), DRA_OK);
    assert_string_equal(s(d, "groupVersion"), "resource.k8s.io/v1beta1");
    assert_string_equal(s(entry(d, "resourceclaims/status"), "kind"), "ResourceClaim");
    assert_false(dra_doc_get(entry(d, "resourceslices"), "namespaced")->u.b);
    assert_null(dra_doc_get(entry(d, "resourceslices"), "shortNames"));
    assert_int_equal(api_disc_resource_list("resource.k8s.io", "v1alpha3", &b), DRA_ENOTFOUND);
    assert_int_equal(api_disc_resource_list("", "v2", &b), DRA_ENOTFOUND);
    dra_buf_fini(&b);
    dra_arena_fini(&a);
}

static dra_err agg_apis_v2(dra_buf *b) { return api_disc_aggregated(0, API_DISC_V2, b); }
static dra_err agg_api_v2beta1(dra_buf *b) { return api_disc_aggregated(1, API_DISC_V2BETA1, b); }

static void test_aggregated(void **state)
{
    dra_arena a;
    dra_buf b;
    (void)state;
    dra_arena_init(&a, NULL);
    const dra_doc *d = build(&a, agg_apis_v2, &b);
    assert_string_equal(s(d, "kind"), "APIGroupDiscoveryList");
    assert_string_equal(s(d, "apiVersion"), "apidiscovery.k8s.io/v2");
    const dra_doc *items = dra_doc_get(d, "items");
    assert_int_equal(items->u.list.n, 1);
    const dra_doc *g = at(items, 0);
    assert_string_equal(s(dra_doc_get(g, "metadata"), "name"), "resource.k8s.io");
    const dra_doc *vs = dra_doc_get(g, "versions");
    assert_int_equal(vs->u.list.n, 3);
    assert_string_equal(s(at(vs, 0), "version"), "v1");
    assert_string_equal(s(at(vs, 1), "version"), "v1beta2");
    assert_string_equal(s(at(vs, 2), "version"), "v1beta1");
    assert_string_equal(s(at(vs, 0), "freshness"), "Current");
    const dra_doc *rs = dra_doc_get(at(vs, 0), "resources");
    assert_int_equal(rs->u.list.n, 4);
    const dra_doc *claims = at(rs, 1);
    assert_string_equal(s(claims, "resource"), "resourceclaims");
    assert_string_equal(s(claims, "scope"), "Namespaced");
    assert_string_equal(s(claims, "singularResource"), "resourceclaim");
    assert_string_equal(s(dra_doc_get(claims, "responseKind"), "kind"), "ResourceClaim");
    assert_string_equal(s(dra_doc_get(claims, "responseKind"), "group"), "");
    const dra_doc *sub = at(dra_doc_get(claims, "subresources"), 0);
    assert_string_equal(s(sub, "subresource"), "status");
    expect_verbs(sub, "get,patch,update");
    assert_string_equal(s(at(rs, 3), "scope"), "Cluster");
    dra_buf_fini(&b);

    d = build(&a, agg_api_v2beta1, &b);
    assert_string_equal(s(d, "apiVersion"), "apidiscovery.k8s.io/v2beta1");
    g = at(dra_doc_get(d, "items"), 0);
    assert_null(dra_doc_get(dra_doc_get(g, "metadata"), "name")); /* core group */
    rs = dra_doc_get(at(dra_doc_get(g, "versions"), 0), "resources");
    assert_string_equal(s(at(rs, 3), "resource"), "pods");
    assert_string_equal(at(dra_doc_get(at(rs, 3), "shortNames"), 0)->u.str.s, "po");
    dra_buf_fini(&b);
    assert_int_equal(api_disc_aggregated(1, API_DISC_LEGACY, &b), DRA_EINVAL);
    dra_arena_fini(&a);
}

static void test_failmem(void **state)
{
    (void)state;
    for (long i = 0; i < 400; i++) {
        dra_failmem fm;
        dra_buf b;
        dra_err e;
        dra_failmem_init(&fm, i);
        dra_buf_init(&b, &fm.mem);
        e = api_disc_aggregated(0, API_DISC_V2, &b);
        assert_true(e == DRA_OK || e == DRA_ENOMEM);
        e = api_disc_resource_list("", "v1", &b);
        assert_true(e == DRA_OK || e == DRA_ENOMEM);
        dra_buf_fini(&b);
        assert_int_equal(fm.live, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_negotiate),
        cmocka_unit_test(test_legacy),
        cmocka_unit_test(test_aggregated),
        cmocka_unit_test(test_failmem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
