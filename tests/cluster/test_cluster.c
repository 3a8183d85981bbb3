/* The generic cluster layer against the scripted transport of fake.h:
 * error mapping, paths and queries, Status decoding, every verb's
 * request, list_all paging, retry on conflict, event folding. Watch and
 * the reflector are in test_watch.c. */
#include "dra_test.h"
#include "fake.h"

static void test_code_err(void **state)
{
    static const struct {
        int code;
        const char *reason;
        dra_err want;
    } cases[] = {
        {200, NULL, DRA_OK},          {201, NULL, DRA_OK},
        {400, NULL, DRA_EINVAL},      {401, NULL, DRA_EUNAUTHORIZED},
        {403, NULL, DRA_EFORBIDDEN},  {404, NULL, DRA_ENOTFOUND},
        {405, NULL, DRA_EUNSUPPORTED}, {409, "AlreadyExists", DRA_EEXIST},
        {409, "Conflict", DRA_ECONFLICT}, {409, NULL, DRA_ECONFLICT},
        {410, "Expired", DRA_EGONE},  {413, NULL, DRA_ETOOLARGE},
        {415, NULL, DRA_EUNSUPPORTED}, {422, "Invalid", DRA_EINVALID},
        {429, NULL, DRA_EUNAVAILABLE}, {500, NULL, DRA_EUNAVAILABLE},
        {503, NULL, DRA_EUNAVAILABLE}, {504, NULL, DRA_ETIMEOUT},
        {302, NULL, DRA_EIO},         {418, NULL, DRA_EIO},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (dra_cluster_code_err(cases[i].code, cases[i].reason) !=
            cases[i].want)
            fail_msg("code %d reason %s: got %s", cases[i].code,
                     cases[i].reason ? cases[i].reason : "NULL",
                     dra_errname(dra_cluster_code_err(cases[i].code,
                                                      cases[i].reason)));
}

static void path_is(const dra_gvr *r, const char *ns, const char *name,
                    const char *sub, const char *want)
{
    dra_buf b;
    dra_buf_init(&b, NULL);
    assert_int_equal(dra_cluster_path(&b, r, ns, name, sub), DRA_OK);
    assert_string_equal(b.p, want);
    dra_buf_fini(&b);
}

static void test_paths(void **state)
{
    dra_gvr pods = DRA_GVR_PODS, claims = DRA_GVR_CLAIMS,
            slices = DRA_GVR_SLICES, nodes = DRA_GVR_NODES,
            bad = {"", NULL, "x"};
    dra_buf b;
    (void)state;
    dra_buf_init(&b, NULL);
    assert_int_equal(dra_cluster_path(&b, &bad, NULL, NULL, NULL), DRA_EINVAL);
    dra_buf_fini(&b);
    path_is(&pods, "default", "p1", "status",
            "/api/v1/namespaces/default/pods/p1/status");
    path_is(&pods, NULL, NULL, NULL, "/api/v1/pods");
    path_is(&pods, "", NULL, NULL, "/api/v1/pods");
    path_is(&claims, "ns1", NULL, NULL,
            "/apis/resource.k8s.io/v1/namespaces/ns1/resourceclaims");
    path_is(&claims, "ns1", "c", NULL,
            "/apis/resource.k8s.io/v1/namespaces/ns1/resourceclaims/c");
    path_is(&slices, NULL, "s", NULL,
            "/apis/resource.k8s.io/v1/resourceslices/s");
    path_is(&nodes, NULL, "n", "status", "/api/v1/nodes/n/status");
}

static dra_cluster *setup(fake *f)
{
    fake_init(f);
    return fake_cluster(f);
}

static void teardown(fake *f, dra_cluster *c)
{
    dra_cluster_free(c);
    assert_true(f->freed);
    fake_fini(f);
}

static void test_status_decode(void **state)
{
    fake f;
    dra_cluster *c = setup(&f);
    dra_gvr claims = DRA_GVR_CLAIMS;
    dra_kstatus st;
    dra_arena a;
    dra_doc *out = (dra_doc *)1;
    (void)state;
    dra_arena_init(&a, NULL);

    fake_resp(&f, 404,
              "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
              "\"status\":\"Failure\",\"message\":\"resourceclaims.resource."
              "k8s.io \\\"nope\\\" not found\",\"reason\":\"NotFound\","
              "\"details\":{\"name\":\"nope\",\"group\":\"resource.k8s.io\","
              "\"kind\":\"resourceclaims\"},\"code\":404}");
    assert_int_equal(dra_cluster_get(c, &claims, "default", "nope", &a, &out,
                                     &st), DRA_ENOTFOUND);
    assert_null(out);
    assert_int_equal(st.code, 404);
    assert_string_equal(st.reason, "NotFound");
    assert_string_equal(st.message,
                        "resourceclaims.resource.k8s.io \"nope\" not found");

    /* 409 with a Status saying AlreadyExists on create. */
    fake_resp(&f, 409, "{\"kind\":\"Status\",\"reason\":\"AlreadyExists\","
                       "\"message\":\"x already exists\",\"code\":409}");
    {
        dra_doc *obj = dra_doc_new_map(&a, 1);
        assert_int_equal(dra_cluster_create(c, &claims, "default", obj, &a,
                                            NULL, &st), DRA_EEXIST);
        assert_string_equal(st.reason, "AlreadyExists");
        /* 409 without a Status: AlreadyExists for POST (client-go). */
        fake_resp(&f, 409, "nope");
        assert_int_equal(dra_cluster_create(c, &claims, "default", obj, &a,
                                            NULL, &st), DRA_EEXIST);
        assert_string_equal(st.message, "the server reported a conflict");
        /* ... and Conflict for PUT. */
        fake_resp(&f, 409, "");
        assert_int_equal(dra_cluster_update(c, &claims, "default", "x", NULL,
                                            obj, &a, NULL, &st),
                         DRA_ECONFLICT);
        assert_string_equal(st.reason, "Conflict");
    }

    /* Answers without a Status get client-go's generic messages. */
    fake_resp(&f, 404, "404 page not found");
    assert_int_equal(dra_cluster_get(c, &claims, "default", "x", &a, &out,
                                     &st), DRA_ENOTFOUND);
    assert_string_equal(st.reason, "NotFound");
    assert_string_equal(st.message,
                        "the server could not find the requested resource");
    fake_resp(&f, 500, "boom");
    assert_int_equal(dra_cluster_get(c, &claims, "default", "x", &a, &out,
                                     &st), DRA_EUNAVAILABLE);
    assert_string_equal(st.reason, "InternalError");
    assert_string_equal(st.message, "an error on the server (\"boom\") has "
                                    "prevented the request from succeeding");
    fake_resp(&f, 403, "{\"kind\":\"Status\",\"code\":403,\"message\":"
                       "\"nodes is forbidden\"}");
    assert_int_equal(dra_cluster_get(c, &claims, "default", "x", &a, &out,
                                     &st), DRA_EFORBIDDEN);
    assert_string_equal(st.reason, "Forbidden"); /* from the code */
    assert_string_equal(st.message, "nodes is forbidden");
    fake_resp(&f, 401, NULL);
    assert_int_equal(dra_cluster_get(c, &claims, "default", "x", &a, &out,
                                     &st), DRA_EUNAUTHORIZED);
    assert_string_equal(st.message,
                        "the server has asked for the client to provide "
                        "credentials");

    /* A 2xx that is not JSON. */
    fake_resp(&f, 200, "{\"kind\":");
    assert_int_equal(dra_cluster_get(c, &claims, "default", "x", &a, &out,
                                     &st), DRA_EPARSE);
    assert_non_null(strstr(st.message, "invalid JSON"));
    /* A 2xx with an empty body: DRA_OK, no document. */
    fake_resp(&f, 200, "");
    assert_int_equal(dra_cluster_get(c, &claims, "default", "x", &a, &out,
                                     &st), DRA_OK);
    assert_null(out);
    /* No HTTP answer at all. */
    fake_resp_err(&f, DRA_EIO);
    assert_int_equal(dra_cluster_get(c, &claims, "default", "x", &a, &out,
                                     &st), DRA_EIO);
    assert_int_equal(st.code, 0);
    assert_string_equal(st.message, "scripted failure");
    /* A NULL status is fine everywhere. */
    fake_resp(&f, 404, NULL);
    assert_int_equal(dra_cluster_get(c, &claims, "default", "x", &a, &out,
                                     NULL), DRA_ENOTFOUND);
    /* Bad arguments never reach the transport. */
    assert_int_equal(dra_cluster_get(c, &claims, "default", "", &a, &out,
                                     &st), DRA_EINVAL);
    assert_int_equal(fake_nlog(&f), 12);
    dra_arena_fini(&a);
    teardown(&f, c);
}

static dra_doc *json(dra_arena *a, const char *text)
{
    dra_doc *d = NULL;
    assert_int_equal(dra_doc_parse_json(a, text, strlen(text), &d, NULL),
                     DRA_OK);
    return d;
}

static void test_verbs(void **state)
{
    fake f;
    dra_cluster *c = setup(&f);
    dra_gvr claims = DRA_GVR_CLAIMS, pods = DRA_GVR_PODS;
    dra_kstatus st;
    dra_arena a;
    dra_doc *out = NULL, *obj;
    dra_delete_opts del = {0};
    (void)state;
    dra_arena_init(&a, NULL);
    obj = json(&a, "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":"
                   "\"ResourceClaim\",\"metadata\":{\"name\":\"c1\"}}");

    fake_resp(&f, 200, "{\"metadata\":{\"name\":\"c1\",\"resourceVersion\":"
                       "\"7\"},\"spec\":{\"x\":\"y\"}}");
    assert_int_equal(dra_cluster_get(c, &claims, "ns", "c1", &a, &out, &st),
                     DRA_OK);
    assert_string_equal(dra_obj_name(out), "c1");
    assert_string_equal(dra_obj_rv(out), "7");
    assert_string_equal(dra_obj_str(out, "spec.x"), "y");
    assert_null(dra_obj_str(out, "spec.x.y"));
    assert_null(dra_obj_str(out, "metadata"));
    assert_null(dra_obj_uid(out));
    assert_int_equal(st.code, 200);

    fake_resp(&f, 201, "{}");
    assert_int_equal(dra_cluster_create(c, &claims, "ns", obj, &a, &out, &st),
                     DRA_OK);
    fake_resp(&f, 200, "{}");
    assert_int_equal(dra_cluster_update(c, &claims, "ns", "c1", "status", obj,
                                        &a, &out, &st), DRA_OK);
    fake_resp(&f, 200, "{}");
    assert_int_equal(dra_cluster_patch(c, &claims, "ns", "c1", NULL,
                                       DRA_PATCH_MERGE, "{\"a\":1}", 7,
                                       "dra-sched", &a, &out, &st), DRA_OK);
    fake_resp(&f, 200, "{}");
    assert_int_equal(dra_cluster_patch(c, &claims, "ns", "c1", "status",
                                       DRA_PATCH_APPLY, "{}", 2, "m x", &a,
                                       NULL, &st), DRA_OK);
    assert_int_equal(dra_cluster_patch(c, &claims, "ns", "c1", NULL,
                                       DRA_PATCH_APPLY, "{}", 2, NULL, &a,
                                       NULL, &st), DRA_EINVAL);
    fake_resp(&f, 200, "{\"kind\":\"Status\",\"status\":\"Success\"}");
    del.propagation_policy = "Background";
    del.grace_period_set = 1;
    del.grace_period_seconds = 0;
    del.precondition_uid = "u-1";
    assert_int_equal(dra_cluster_delete(c, &claims, "ns", "c1", &del, &a, &out,
                                        &st), DRA_OK);
    assert_non_null(out);
    fake_resp(&f, 200, "{}");
    assert_int_equal(dra_cluster_delete(c, &claims, "ns", "c1", NULL, &a, NULL,
                                        &st), DRA_OK);
    fake_resp(&f, 201, "{\"kind\":\"Status\",\"status\":\"Success\"}");
    assert_int_equal(dra_cluster_bind(c, "ns", "p1", "uid-9", "node-1", &st),
                     DRA_OK);
    fake_resp(&f, 200, "{\"kind\":\"PodList\",\"items\":[]}");
    {
        dra_list_opts o = {0};
        o.label_selector = "app in (a,b),!x";
        o.field_selector = "spec.nodeName=n 1";
        o.resource_version = "0";
        o.limit = 5;
        assert_int_equal(dra_cluster_list(c, &pods, NULL, &o, &a, &out, &st),
                         DRA_OK);
    }

    assert_string_equal(fake_log(&f, 0),
                        "GET /apis/resource.k8s.io/v1/namespaces/ns/"
                        "resourceclaims/c1||");
    assert_string_equal(
        fake_log(&f, 1),
        "POST /apis/resource.k8s.io/v1/namespaces/ns/resourceclaims||"
        "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
        "\"metadata\":{\"name\":\"c1\"}}");
    assert_non_null(strstr(fake_log(&f, 2), "PUT /apis/resource.k8s.io/v1/"
                                            "namespaces/ns/resourceclaims/c1/"
                                            "status||{\"apiVersion\""));
    assert_string_equal(fake_log(&f, 3),
                        "PATCH /apis/resource.k8s.io/v1/namespaces/ns/"
                        "resourceclaims/c1?fieldManager=dra-sched|"
                        "application/merge-patch+json|{\"a\":1}");
    assert_string_equal(fake_log(&f, 4),
                        "PATCH /apis/resource.k8s.io/v1/namespaces/ns/"
                        "resourceclaims/c1/status?fieldManager=m%20x|"
                        "application/apply-patch+yaml|{}");
    assert_string_equal(
        fake_log(&f, 5),
        "DELETE /apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/c1||"
        "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
        "\"gracePeriodSeconds\":0,\"preconditions\":{\"uid\":\"u-1\"},"
        "\"propagationPolicy\":\"Background\"}");
    assert_string_equal(fake_log(&f, 6),
                        "DELETE /apis/resource.k8s.io/v1/namespaces/ns/"
                        "resourceclaims/c1||");
    assert_string_equal(
        fake_log(&f, 7),
        "POST /api/v1/namespaces/ns/pods/p1/binding||{\"kind\":\"Binding\","
        "\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p1\",\"namespace\":"
        "\"ns\",\"uid\":\"uid-9\"},\"target\":{\"kind\":\"Node\","
        "\"apiVersion\":\"v1\",\"name\":\"node-1\"}}");
    assert_string_equal(
        fake_log(&f, 8),
        "GET /api/v1/pods?labelSelector=app%20in%20%28a%2Cb%29%2C%21x&"
        "fieldSelector=spec.nodeName%3Dn%201&resourceVersion=0&limit=5||");
    assert_null(fake_log(&f, 9));
    assert_string_equal(dra_patch_content_type(DRA_PATCH_STRATEGIC),
                        "application/strategic-merge-patch+json");
    assert_string_equal(dra_patch_content_type(DRA_PATCH_JSON),
                        "application/json-patch+json");
    dra_arena_fini(&a);
    teardown(&f, c);
}

static void test_list_all(void **state)
{
    fake f;
    dra_cluster *c = setup(&f);
    dra_gvr slices = DRA_GVR_SLICES;
    dra_kstatus st;
    dra_arena a;
    dra_doc *out = NULL;
    const dra_doc *items;
    const char *rv = NULL;
    dra_buf js;
    dra_list_opts o = {0};
    (void)state;
    dra_arena_init(&a, NULL);
    fake_resp(&f, 200,
              "{\"kind\":\"ResourceSliceList\",\"apiVersion\":"
              "\"resource.k8s.io/v1\",\"metadata\":{\"resourceVersion\":\"50\","
              "\"continue\":\"t1\",\"remainingItemCount\":3},\"items\":["
              "{\"metadata\":{\"name\":\"s1\"}},{\"metadata\":{\"name\":\"s2\"}}]}");
    fake_resp(&f, 200,
              "{\"kind\":\"ResourceSliceList\",\"metadata\":{\"resourceVersion\":"
              "\"50\",\"continue\":\"t2\"},\"items\":[{\"metadata\":{\"name\":"
              "\"s3\"}},{\"kind\":\"Other\",\"metadata\":{\"name\":\"s4\"}}]}");
    fake_resp(&f, 200,
              "{\"kind\":\"ResourceSliceList\",\"metadata\":{\"resourceVersion\":"
              "\"50\"},\"items\":[{\"metadata\":{\"name\":\"s5\"}}]}");
    o.limit = 2;
    o.resource_version = "0";
    o.label_selector = "a=b";
    assert_int_equal(dra_cluster_list_all(c, &slices, NULL, &o, &a, &out, &rv,
                                          &st), DRA_OK);
    assert_string_equal(rv, "50");
    items = dra_doc_get(out, "items");
    assert_int_equal(items->u.list.n, 5);
    assert_string_equal(dra_obj_name(items->u.list.items[4]), "s5");
    assert_string_equal(dra_obj_str(items->u.list.items[0], "kind"),
                        "ResourceSlice");
    assert_string_equal(dra_obj_str(items->u.list.items[0], "apiVersion"),
                        "resource.k8s.io/v1");
    assert_string_equal(dra_obj_str(items->u.list.items[3], "kind"), "Other");
    dra_buf_init(&js, NULL);
    assert_int_equal(dra_doc_to_json(dra_doc_get(out, "metadata"), 0, &js),
                     DRA_OK);
    assert_string_equal(js.p, "{\"resourceVersion\":\"50\"}");
    dra_buf_fini(&js);
    assert_string_equal(fake_log(&f, 0),
                        "GET /apis/resource.k8s.io/v1/resourceslices?"
                        "labelSelector=a%3Db&resourceVersion=0&limit=2||");
    assert_string_equal(fake_log(&f, 1),
                        "GET /apis/resource.k8s.io/v1/resourceslices?"
                        "labelSelector=a%3Db&limit=2&continue=t1||");
    assert_string_equal(fake_log(&f, 2),
                        "GET /apis/resource.k8s.io/v1/resourceslices?"
                        "labelSelector=a%3Db&limit=2&continue=t2||");

    /* The continue token expires: one full list instead. Default page
     * size 500. */
    fake_resp(&f, 200, "{\"kind\":\"ResourceSliceList\",\"metadata\":{"
                       "\"resourceVersion\":\"60\",\"continue\":\"t1\"},"
                       "\"items\":[{\"metadata\":{\"name\":\"s1\"}}]}");
    fake_resp(&f, 410, "{\"kind\":\"Status\",\"code\":410,\"reason\":"
                       "\"Expired\",\"message\":\"continue expired\"}");
    fake_resp(&f, 200, "{\"kind\":\"ResourceSliceList\",\"metadata\":{"
                       "\"resourceVersion\":\"61\"},\"items\":[{\"metadata\":"
                       "{\"name\":\"s1\"}},{\"metadata\":{\"name\":\"s2\"}}]}");
    assert_int_equal(dra_cluster_list_all(c, &slices, NULL, NULL, &a, &out,
                                          &rv, &st), DRA_OK);
    assert_string_equal(rv, "61");
    assert_int_equal(dra_doc_get(out, "items")->u.list.n, 2);
    assert_string_equal(fake_log(&f, 3), "GET /apis/resource.k8s.io/v1/"
                                         "resourceslices?limit=500||");
    assert_string_equal(fake_log(&f, 5),
                        "GET /apis/resource.k8s.io/v1/resourceslices||");

    /* An error on a later page is the caller's. */
    fake_resp(&f, 200, "{\"kind\":\"ResourceSliceList\",\"metadata\":{"
                       "\"continue\":\"t1\"},\"items\":[]}");
    fake_resp(&f, 503, NULL);
    assert_int_equal(dra_cluster_list_all(c, &slices, NULL, NULL, &a, &out,
                                          &rv, &st), DRA_EUNAVAILABLE);
    assert_null(out);
    /* A list answer that is not an object. */
    fake_resp(&f, 200, "[1]");
    assert_int_equal(dra_cluster_list_all(c, &slices, NULL, NULL, &a, &out,
                                          &rv, &st), DRA_EPARSE);
    dra_arena_fini(&a);
    teardown(&f, c);
}

typedef struct conflict_ctx {
    int calls, conflicts;
} conflict_ctx;

static dra_err conflict_fn(void *ud)
{
    conflict_ctx *x = ud;
    return ++x->calls <= x->conflicts ? DRA_ECONFLICT : DRA_OK;
}

static dra_err other_fn(void *ud)
{
    ((conflict_ctx *)ud)->calls++;
    return DRA_ENOTFOUND;
}

static void test_retry(void **state)
{
    conflict_ctx x = {0, 2};
    (void)state;
    assert_int_equal(dra_cluster_retry_on_conflict(5, conflict_fn, &x), DRA_OK);
    assert_int_equal(x.calls, 3);
    x.calls = 0;
    x.conflicts = 100;
    assert_int_equal(dra_cluster_retry_on_conflict(4, conflict_fn, &x),
                     DRA_ECONFLICT);
    assert_int_equal(x.calls, 4);
    x.calls = 0;
    assert_int_equal(dra_cluster_retry_on_conflict(5, other_fn, &x),
                     DRA_ENOTFOUND);
    assert_int_equal(x.calls, 1);
    assert_int_equal(dra_cluster_retry_on_conflict(5, NULL, &x), DRA_EINVAL);
}

/* The JSON body of logged request |i|. */
static dra_doc *logged_body(fake *f, dra_arena *a, size_t i)
{
    const char *l = fake_log(f, i), *bar;
    assert_non_null(l);
    bar = strchr(strchr(l, '|') + 1, '|');
    return json(a, bar + 1);
}

static void test_events(void **state)
{
    fake f;
    dra_cluster *c = setup(&f);
    dra_arena a;
    dra_doc *claim, *slice, *ev;
    const char *name;
    (void)state;
    dra_arena_init(&a, NULL);
    claim = json(&a, "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":"
                     "\"ResourceClaim\",\"metadata\":{\"name\":\"c1\","
                     "\"namespace\":\"ns\",\"uid\":\"u1\",\"resourceVersion\":"
                     "\"5\"}}");
    slice = json(&a, "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":"
                     "\"ResourceSlice\",\"metadata\":{\"name\":\"s1\","
                     "\"uid\":\"u2\"}}");

    fake_resp(&f, 201, "{}");
    assert_int_equal(dra_cluster_event(c, claim, "Warning", "FailedAlloc",
                                       "dra-scheduler", "node-a",
                                       "cannot allocate %d devices", 2),
                     DRA_OK);
    ev = logged_body(&f, &a, 0);
    assert_non_null(strstr(fake_log(&f, 0),
                           "POST /api/v1/namespaces/ns/events||"));
    name = dra_obj_name(ev);
    assert_true(strncmp(name, "c1.", 3) == 0 && strlen(name) > 10);
    assert_true(strspn(name + 3, "0123456789abcdef") == strlen(name + 3));
    assert_string_equal(dra_obj_namespace(ev), "ns");
    assert_string_equal(dra_obj_str(ev, "kind"), "Event");
    assert_string_equal(dra_obj_str(ev, "apiVersion"), "v1");
    assert_string_equal(dra_obj_str(ev, "type"), "Warning");
    assert_string_equal(dra_obj_str(ev, "reason"), "FailedAlloc");
    assert_string_equal(dra_obj_str(ev, "message"), "cannot allocate 2 devices");
    assert_string_equal(dra_obj_str(ev, "involvedObject.kind"), "ResourceClaim");
    assert_string_equal(dra_obj_str(ev, "involvedObject.apiVersion"),
                        "resource.k8s.io/v1");
    assert_string_equal(dra_obj_str(ev, "involvedObject.name"), "c1");
    assert_string_equal(dra_obj_str(ev, "involvedObject.namespace"), "ns");
    assert_string_equal(dra_obj_str(ev, "involvedObject.uid"), "u1");
    assert_string_equal(dra_obj_str(ev, "involvedObject.resourceVersion"), "5");
    assert_string_equal(dra_obj_str(ev, "source.component"), "dra-scheduler");
    assert_string_equal(dra_obj_str(ev, "source.host"), "node-a");
    assert_string_equal(dra_obj_str(ev, "reportingComponent"), "dra-scheduler");
    assert_string_equal(dra_obj_str(ev, "reportingInstance"), "node-a");
    assert_int_equal(dra_doc_get(ev, "count")->u.i, 1);
    assert_int_equal(strlen(dra_obj_str(ev, "firstTimestamp")), 20);
    assert_string_equal(dra_obj_str(ev, "firstTimestamp"),
                        dra_obj_str(ev, "lastTimestamp"));

    /* The same event again: folded into the first by a strategic merge
     * patch of count and lastTimestamp. */
    fake_resp(&f, 200, "{}");
    assert_int_equal(dra_cluster_event(c, claim, "Warning", "FailedAlloc",
                                       "dra-scheduler", "node-a",
                                       "cannot allocate %d devices", 2),
                     DRA_OK);
    {
        char want[256];
        snprintf(want, sizeof want,
                 "PATCH /api/v1/namespaces/ns/events/%s|"
                 "application/strategic-merge-patch+json|{\"count\":2,", name);
        assert_true(strncmp(fake_log(&f, 1), want, strlen(want)) == 0);
    }
    fake_resp(&f, 200, "{}");
    assert_int_equal(dra_cluster_event(c, claim, "Warning", "FailedAlloc",
                                       "dra-scheduler", "node-a",
                                       "cannot allocate %d devices", 2),
                     DRA_OK);
    assert_non_null(strstr(fake_log(&f, 2), "{\"count\":3,"));
    /* Another message is another event. */
    fake_resp(&f, 201, "{}");
    assert_int_equal(dra_cluster_event(c, claim, "Warning", "FailedAlloc",
                                       "dra-scheduler", "node-a",
                                       "cannot allocate %d devices", 3),
                     DRA_OK);
    assert_non_null(strstr(fake_log(&f, 3), "POST /api/v1/namespaces/ns/"));
    /* The folded Event expired on the server: a new one is written. */
    fake_resp(&f, 404, NULL);
    fake_resp(&f, 201, "{}");
    assert_int_equal(dra_cluster_event(c, claim, "Warning", "FailedAlloc",
                                       "dra-scheduler", "node-a",
                                       "cannot allocate %d devices", 2),
                     DRA_OK);
    assert_non_null(strstr(fake_log(&f, 4), "PATCH "));
    assert_non_null(strstr(fake_log(&f, 5), "POST /api/v1/namespaces/ns/"));
    assert_int_equal(dra_doc_get(logged_body(&f, &a, 5), "count")->u.i, 1);
    /* Cluster-scoped objects get their events in "default"; no host. */
    fake_resp(&f, 201, "{}");
    assert_int_equal(dra_cluster_event(c, slice, "Normal", "Published",
                                       "gpu-plugin", NULL, "ok"), DRA_OK);
    ev = logged_body(&f, &a, 6);
    assert_non_null(strstr(fake_log(&f, 6), "POST /api/v1/namespaces/default/"
                                            "events||"));
    assert_null(dra_obj_str(ev, "involvedObject.namespace"));
    assert_null(dra_obj_str(ev, "source.host"));
    assert_string_equal(dra_obj_str(ev, "reportingInstance"), "");
    /* Event names from one client never collide. */
    assert_string_not_equal(dra_obj_name(ev), name);
    /* Bad arguments. */
    assert_int_equal(dra_cluster_event(c, claim, "Fatal", "R", "x", NULL, "m"),
                     DRA_EINVAL);
    assert_int_equal(dra_cluster_event(c, claim, "Normal", "", "x", NULL, "m"),
                     DRA_EINVAL);
    assert_int_equal(fake_nlog(&f), 7);

    /* The fold cache is bounded: after 256 other keys the first is
     * forgotten and written anew instead of patched. */
    for (int i = 0; i < 256; i++) {
        fake_resp(&f, 201, "{}");
        assert_int_equal(dra_cluster_event(c, claim, "Normal", "R", "x", NULL,
                                           "message %d", i), DRA_OK);
    }
    fake_resp(&f, 201, "{}");
    assert_int_equal(dra_cluster_event(c, slice, "Normal", "Published",
                                       "gpu-plugin", NULL, "ok"), DRA_OK);
    assert_non_null(strstr(fake_log(&f, 7 + 256), "POST "));
    /* ... while a recent key is still folded. */
    fake_resp(&f, 200, "{}");
    assert_int_equal(dra_cluster_event(c, claim, "Normal", "R", "x", NULL,
                                       "message %d", 255), DRA_OK);
    assert_non_null(strstr(fake_log(&f, 8 + 256), "PATCH "));
    dra_arena_fini(&a);
    teardown(&f, c);
}

static void test_failmem(void **state)
{
    /* Every allocation of a verb fails in turn: an error, never a crash
     * or a leak. */
    dra_cluster_ops none = {0};
    (void)state;
    assert_null(dra_cluster_new(&none, NULL, NULL)); /* no request op */
    for (long n = 0; n < 400; n++) {
        dra_failmem fm;
        fake f;
        dra_cluster *c;
        dra_arena a;
        dra_doc *obj, *out = NULL;
        dra_gvr claims = DRA_GVR_CLAIMS;
        dra_err e1, e2, e3;
        dra_failmem_init(&fm, n);
        fake_init(&f);
        dra_arena_init(&a, NULL);
        obj = json(&a, "{\"metadata\":{\"name\":\"c1\",\"namespace\":\"n\","
                       "\"uid\":\"u\"}}");
        c = fake_cluster_mem(&f, &fm.mem);
        if (c) {
            fake_resp(&f, 201, "{}");
            e1 = dra_cluster_event(c, obj, "Normal", "R", "x", "h", "m");
            fake_resp(&f, 200, "{}");
            e2 = dra_cluster_update(c, &claims, "n", "c1", NULL, obj, &a,
                                    &out, NULL);
            fake_resp(&f, 404, "{\"kind\":\"Status\",\"code\":404}");
            e3 = dra_cluster_get(c, &claims, "n", "c1", &a, &out, NULL);
            assert_true(e1 == DRA_OK || e1 == DRA_ENOMEM);
            assert_true(e2 == DRA_OK || e2 == DRA_ENOMEM);
            assert_true(e3 == DRA_ENOTFOUND || e3 == DRA_ENOMEM);
            dra_cluster_free(c);
        }
        dra_arena_fini(&a);
        fake_fini(&f);
        assert_int_equal(fm.live, 0);
        if (!fm.failed)
            break;
        assert_true(n < 399);
    }
}

/* The codec's document helpers this layer and its users build on:
 * dotted lookups (dra_doc_at, under dra_obj_str) and the deferred
 * out-of-memory builder (dra_docb). */
static void test_doc_helpers(void **state)
{
    dra_arena a;
    dra_doc *d, *l;
    dra_buf b;
    (void)state;
    dra_arena_init(&a, NULL);
    d = json(&a, "{\"spec\":{\"x\":{\"y\":true},\"s\":\"v\"},\"a.b\":1}");
    assert_true(dra_doc_at(d, "spec.x.y")->u.b);
    assert_ptr_equal(dra_doc_at(d, ""), d);
    assert_null(dra_doc_at(d, "spec.s.t"));  /* through a string */
    assert_null(dra_doc_at(d, "spec..x"));   /* an empty key */
    assert_null(dra_doc_at(d, "spec.x."));
    assert_null(dra_doc_at(d, ".spec"));
    assert_null(dra_doc_at(d, "a.b"));       /* keys never contain '.' here */
    assert_null(dra_doc_at(d, NULL));
    assert_null(dra_doc_at(NULL, "spec"));
    assert_null(dra_obj_str(d, ""));
    assert_string_equal(dra_obj_str(d, "spec.s"), "v");

    dra_docb db = {&a, 0};
    static const char *const two[] = {"p", "q"};
    d = dra_docb_map(&db);
    dra_docb_set_str(&db, d, "k", NULL);
    dra_docb_set(&db, d, "n", dra_docb_int(&db, -3));
    dra_docb_set(&db, d, "t", dra_docb_bool(&db, 1));
    dra_docb_set(&db, d, "c", dra_docb_strn(&db, "abc", 2));
    dra_docb_set(&db, d, "l", dra_docb_strs(&db, two, 2));
    assert_false(db.oom);
    dra_buf_init(&b, NULL);
    assert_int_equal(dra_doc_to_json(d, 0, &b), DRA_OK);
    assert_string_equal(b.p, "{\"k\":\"\",\"n\":-3,\"t\":true,\"c\":\"ab\",\"l\":[\"p\",\"q\"]}");
    dra_buf_fini(&b);
    l = dra_docb_list(&db);
    dra_docb_push(&db, l, NULL); /* a piece that failed */
    assert_true(db.oom);
    dra_arena_fini(&a);
    /* Every allocation failure is recorded, never a crash or a leak. */
    for (long i = 0; i < 40; i++) {
        dra_failmem fm;
        dra_failmem_init(&fm, i);
        dra_arena_init(&a, &fm.mem);
        dra_docb f = {&a, 0};
        d = dra_docb_map(&f);
        dra_docb_set(&f, d, "l", dra_docb_strs(&f, two, 2));
        dra_docb_set_str(&f, d, "s", "x");
        assert_int_equal(f.oom, fm.failed != 0);
        dra_arena_fini(&a);
        assert_int_equal(fm.live, 0);
    }
}

/* The deadline arithmetic the reflector's backoff waits with. */
static void test_timespec(void **state)
{
    struct timespec ts = {10, 999000000L};
    (void)state;
    dra_timespec_add_ms(&ts, 1);
    assert_int_equal(ts.tv_sec, 11);
    assert_int_equal(ts.tv_nsec, 0);
    dra_timespec_add_ms(&ts, 2500);
    assert_int_equal(ts.tv_sec, 13);
    assert_int_equal(ts.tv_nsec, 500000000L);
    dra_timespec_add_ms(&ts, 0);
    assert_int_equal(ts.tv_sec, 13);
    dra_timespec_add_ms(&ts, 30000 + 999);
    assert_int_equal(ts.tv_sec, 44);
    assert_int_equal(ts.tv_nsec, 499000000L);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_code_err),   cmocka_unit_test(test_paths),
        cmocka_unit_test(test_status_decode), cmocka_unit_test(test_verbs),
        cmocka_unit_test(test_list_all),   cmocka_unit_test(test_retry),
        cmocka_unit_test(test_events),     cmocka_unit_test(test_failmem),
        cmocka_unit_test(test_doc_helpers), cmocka_unit_test(test_timespec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
