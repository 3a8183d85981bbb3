/* Watch semantics of drad's API server (resourceVersion "", "0" and
 * exact; selectors moving objects in and out; sendInitialEvents with its
 * bookmark; 410 Gone after compaction; timeoutSeconds), and the
 * in-process cluster transport that controllers inside drad use. */
#include "api_fixture.h"

#include "dra/cluster.h"

#define SLICES "/apis/resource.k8s.io/v1/resourceslices"
#define SLICE(name, node, extra)                                                 \
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\","         \
    "\"metadata\":{\"name\":\"" name "\"" extra "},\"spec\":{\"driver\":"        \
    "\"gpu.nvidia.com\",\"nodeName\":\"" node "\",\"pool\":{\"name\":\"" node    \
    "\",\"generation\":1,\"resourceSliceCount\":1},\"devices\":[]}}"

/* An open watch read by polling the stream. */
typedef struct tw {
    dra_stream *s;
    dra_buf buf;
    int eof;
} tw;

static void tw_open(fx *f, tw *w, const char *path_query)
{
    dra_apiserver_req q;
    dra_apiserver_resp r;
    char p[512], *qm;
    snprintf(p, sizeof p, "%s", path_query);
    qm = strchr(p, '?');
    *qm++ = '\0';
    memset(&q, 0, sizeof q);
    q.method = "GET";
    q.path = p;
    q.query = qm;
    dra_apiserver_resp_init(&r, NULL);
    assert_int_equal(dra_apiserver_handle(f->srv, &q, &r), DRA_OK);
    if (r.code != 200 || !r.stream)
        fail_msg("watch: %d %s", r.code, r.body.p ? r.body.p : "");
    memset(w, 0, sizeof *w);
    w->s = r.stream;
    r.stream = NULL;
    dra_apiserver_resp_fini(&r);
    dra_buf_init(&w->buf, NULL);
}

static void tw_close(tw *w)
{
    dra_stream_close(w->s);
    dra_buf_fini(&w->buf);
}

/* Reads what is there now; returns the number of event lines read so far. */
static size_t tw_read(tw *w)
{
    size_t n = 0;
    assert_int_equal(dra_stream_read(w->s, &w->buf, &w->eof), DRA_OK);
    for (size_t i = 0; i < w->buf.len; i++)
        n += w->buf.p[i] == '\n';
    return n;
}

/* The |i|-th event line's type and whether it names |name|. */
static int tw_event(tw *w, size_t i, const char *type, const char *name)
{
    const char *p = w->buf.p, *end;
    char want[96], nm[96];
    for (size_t k = 0; k < i; k++)
        p = strchr(p, '\n') + 1;
    end = strchr(p, '\n');
    snprintf(want, sizeof want, "{\"type\":\"%s\"", type);
    if (strncmp(p, want, strlen(want)))
        return 0;
    if (!name)
        return 1;
    snprintf(nm, sizeof nm, "\"name\":\"%s\"", name);
    {
        const char *hit = strstr(p, nm);
        return hit && hit < end;
    }
}

static void test_watch_from_now(void **state)
{
    fx f;
    tw w;
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", SLICES, SLICE("a", "n1", ",\"labels\":{\"t\":\"x\"}"));
    FX_ASSERT_CODE(&f, 201);
    fx_req(&f, "POST", SLICES, SLICE("b", "n2", ""));
    tw_open(&f, &w, SLICES "?watch=true&labelSelector=t%3Dx");
    assert_int_equal(tw_read(&w), 1);
    assert_true(tw_event(&w, 0, "ADDED", "a"));
    /* b gets the label: it enters the selection as ADDED. */
    fx_req(&f, "PUT", SLICES "/b", SLICE("b", "n2", ",\"labels\":{\"t\":\"x\"}"));
    FX_ASSERT_CODE(&f, 200);
    assert_int_equal(tw_read(&w), 2);
    assert_true(tw_event(&w, 1, "ADDED", "b"));
    /* a loses it: DELETED for this watcher. */
    fx_req(&f, "PUT", SLICES "/a", SLICE("a", "n1", ""));
    assert_int_equal(tw_read(&w), 3);
    assert_true(tw_event(&w, 2, "DELETED", "a"));
    fx_req(&f, "PUT", SLICES "/b", SLICE("b", "n2", ",\"labels\":{\"t\":\"x\",\"u\":\"1\"}"));
    assert_int_equal(tw_read(&w), 4);
    assert_true(tw_event(&w, 3, "MODIFIED", "b"));
    fx_req(&f, "DELETE", SLICES "/b", NULL);
    assert_int_equal(tw_read(&w), 5);
    assert_true(tw_event(&w, 4, "DELETED", "b"));
    assert_false(w.eof);
    tw_close(&w);
    fx_close(&f);
}

/* kubectl get X -w: rv 0 and a metadata.name selector. */
static void test_watch_by_name(void **state)
{
    fx f;
    tw w;
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", SLICES, SLICE("a", "n1", ""));
    fx_req(&f, "POST", SLICES, SLICE("b", "n1", ""));
    tw_open(&f, &w, SLICES "?watch=1&resourceVersion=0&fieldSelector=metadata.name%3Db");
    assert_int_equal(tw_read(&w), 1);
    assert_true(tw_event(&w, 0, "ADDED", "b"));
    fx_req(&f, "PUT", SLICES "/a", SLICE("a", "n1", ",\"labels\":{\"x\":\"1\"}"));
    fx_req(&f, "PUT", SLICES "/b", SLICE("b", "n1", ",\"labels\":{\"x\":\"1\"}"));
    assert_int_equal(tw_read(&w), 2);
    assert_true(tw_event(&w, 1, "MODIFIED", "b"));
    tw_close(&w);
    fx_close(&f);
}

static void test_watch_exact(void **state)
{
    fx f;
    tw w;
    char p[256], rv[32];
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", SLICES, SLICE("a", "n1", ""));
    snprintf(rv, sizeof rv, "%s", fx_str(&f, "metadata.resourceVersion"));
    fx_req(&f, "POST", SLICES, SLICE("b", "n1", ""));
    fx_req(&f, "DELETE", SLICES "/a", NULL);
    snprintf(p, sizeof p, SLICES "?watch=1&resourceVersion=%s&fieldSelector=spec.nodeName%%3Dn1", rv);
    tw_open(&f, &w, p);
    /* Only what came after rv: b added, a deleted. */
    assert_int_equal(tw_read(&w), 2);
    assert_true(tw_event(&w, 0, "ADDED", "b"));
    assert_true(tw_event(&w, 1, "DELETED", "a"));
    tw_close(&w);
    /* A version from the future. */
    tw_open(&f, &w, SLICES "?watch=1&resourceVersion=999999");
    assert_int_equal(tw_read(&w), 1);
    assert_true(tw_event(&w, 0, "ERROR", NULL));
    assert_non_null(strstr(w.buf.p, "Too large resource version"));
    assert_true(w.eof);
    tw_close(&w);
    fx_req(&f, "GET", SLICES "?watch=1&resourceVersion=abc", NULL);
    FX_ASSERT_CODE(&f, 400);
    fx_close(&f);
}

static void test_watch_initial_events(void **state)
{
    fx f;
    tw w;
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", SLICES, SLICE("a", "n1", ""));
    tw_open(&f, &w, SLICES "?watch=1&sendInitialEvents=true&allowWatchBookmarks=true"
                           "&resourceVersionMatch=NotOlderThan");
    assert_int_equal(tw_read(&w), 2);
    assert_true(tw_event(&w, 0, "ADDED", "a"));
    assert_true(tw_event(&w, 1, "BOOKMARK", NULL));
    assert_non_null(strstr(w.buf.p, "\"k8s.io/initial-events-end\":\"true\""));
    tw_close(&w);
    fx_req(&f, "GET", SLICES "?watch=1&sendInitialEvents=true", NULL);
    FX_ASSERT_CODE(&f, 400);
    fx_close(&f);
}

static void test_watch_gone(void **state)
{
    fx f;
    tw w;
    dra_store_opts so = {.history_min_bytes = 1024, .history_max_events = 20,
                         .compact_step = 8};
    (void)state;
    fx_open(&f, &so, 0);
    fx_req(&f, "POST", SLICES, SLICE("a", "n1", ""));
    tw_open(&f, &w, SLICES "?watch=1&resourceVersion=5");
    for (int i = 0; i < 60; i++) {
        char body[1024];
        snprintf(body, sizeof body, SLICE("a", "n1", ",\"labels\":{\"i\":\"%d\"}"), i);
        fx_req(&f, "PUT", SLICES "/a", body);
        FX_ASSERT_CODE(&f, 200);
    }
    assert_int_equal(dra_store_compact(f.store), DRA_OK);
    /* The open watch fell behind the history: ERROR 410, then the end. */
    tw_read(&w);
    while (!w.eof)
        tw_read(&w);
    assert_non_null(strstr(w.buf.p, "{\"type\":\"ERROR\""));
    assert_non_null(strstr(w.buf.p, "\"code\":410"));
    assert_non_null(strstr(w.buf.p, "\"reason\":\"Expired\""));
    tw_close(&w);
    /* Starting from a compacted version. */
    tw_open(&f, &w, SLICES "?watch=1&resourceVersion=5");
    assert_int_equal(tw_read(&w), 1);
    assert_true(tw_event(&w, 0, "ERROR", NULL));
    assert_non_null(strstr(w.buf.p, "too old resource version: 5"));
    tw_close(&w);
    fx_close(&f);
}

static void test_watch_timeout(void **state)
{
    fx f;
    tw w;
    (void)state;
    fx_open(&f, NULL, 0);
    tw_open(&f, &w, SLICES "?watch=1&timeoutSeconds=1");
    for (int i = 0; i < 200 && !w.eof; i++) {
        tw_read(&w);
        usleep(50 * 1000);
    }
    assert_true(w.eof);
    tw_close(&w);
    fx_close(&f);
}

/* Bookmarks come every bookmark_ms (300 ms in these tests) when asked for,
 * carrying the store's version; never without allowWatchBookmarks. */
static void test_watch_bookmarks(void **state)
{
    fx f;
    tw w, plain;
    (void)state;
    fx_open(&f, NULL, 0);
    fx_req(&f, "POST", SLICES, SLICE("a", "n1", ""));
    tw_open(&f, &w, SLICES "?watch=1&allowWatchBookmarks=true&resourceVersion=0");
    tw_open(&f, &plain, SLICES "?watch=1&resourceVersion=0");
    for (int i = 0; i < 200 && !strstr(w.buf.p ? w.buf.p : "", "BOOKMARK"); i++) {
        tw_read(&w);
        tw_read(&plain);
        usleep(20 * 1000);
    }
    assert_non_null(strstr(w.buf.p, "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ResourceSlice\","
                                    "\"apiVersion\":\"resource.k8s.io/v1\",\"metadata\":"
                                    "{\"resourceVersion\":\""));
    tw_read(&plain);
    assert_null(strstr(plain.buf.p, "BOOKMARK"));
    tw_close(&w);
    tw_close(&plain);
    fx_close(&f);
}

/* ---- the in-process transport --------------------------------------------- */

static void test_incluster(void **state)
{
    fx f;
    dra_cluster *c;
    dra_arena a;
    dra_doc *obj, *out, *list;
    dra_kstatus st;
    dra_watch *w;
    dra_watch_event ev;
    dra_gvr slices = DRA_GVR_SLICES, pods = DRA_GVR_PODS;
    dra_list_opts lo;
    const char *rv;
    (void)state;
    fx_open(&f, NULL, 0);
    c = dra_apiserver_cluster(f.srv);
    assert_non_null(c);
    dra_arena_init(&a, NULL);
    assert_int_equal(dra_doc_parse_json(&a, SLICE("s1", "n1", ""), strlen(SLICE("s1", "n1", "")),
                                        &obj, NULL), DRA_OK);
    assert_int_equal(dra_cluster_create(c, &slices, NULL, obj, &a, &out, &st), DRA_OK);
    assert_non_null(dra_obj_uid(out));
    assert_int_equal(dra_cluster_create(c, &slices, NULL, obj, &a, &out, &st), DRA_EEXIST);
    assert_int_equal(st.code, 409);
    assert_int_equal(dra_cluster_get(c, &slices, NULL, "s1", &a, &out, &st), DRA_OK);
    assert_string_equal(dra_obj_str(out, "spec.nodeName"), "n1");
    assert_int_equal(dra_cluster_get(c, &slices, NULL, "none", &a, &out, &st), DRA_ENOTFOUND);
    assert_string_equal(st.reason, "NotFound");
    memset(&lo, 0, sizeof lo);
    assert_int_equal(dra_cluster_list_all(c, &slices, NULL, &lo, &a, &list, &rv, &st), DRA_OK);
    assert_int_equal(dra_doc_get(list, "items")->u.list.n, 1);
    /* Watch from the list's version; a change arrives. */
    lo.resource_version = rv;
    assert_int_equal(dra_cluster_watch(c, &slices, NULL, &lo, &w, &st), DRA_OK);
    assert_int_equal(dra_watch_next(w, 50, &a, &ev), DRA_ETIMEOUT);
    assert_int_equal(dra_doc_parse_json(&a, SLICE("s2", "n2", ""), strlen(SLICE("s2", "n2", "")),
                                        &obj, NULL), DRA_OK);
    assert_int_equal(dra_cluster_create(c, &slices, NULL, obj, &a, NULL, &st), DRA_OK);
    assert_int_equal(dra_watch_next(w, 5000, &a, &ev), DRA_OK);
    assert_int_equal(ev.type, DRA_WATCH_ADDED);
    assert_string_equal(dra_obj_name(ev.object), "s2");
    dra_watch_cancel(w);
    assert_int_equal(dra_watch_next(w, -1, &a, &ev), DRA_ECANCELED);
    dra_watch_close(w);
    /* Pods: create and bind through the transport. */
    {
        static const char pod[] =
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
            "\"namespace\":\"default\"},\"spec\":{\"containers\":[{\"name\":\"c\","
            "\"image\":\"i\"}]}}";
        assert_int_equal(dra_doc_parse_json(&a, pod, sizeof pod - 1, &obj, NULL), DRA_OK);
        assert_int_equal(dra_cluster_create(c, &pods, "default", obj, &a, &out, &st), DRA_OK);
        assert_int_equal(dra_cluster_bind(c, "default", "p", dra_obj_uid(out), "n1", &st), DRA_OK);
        assert_int_equal(dra_cluster_bind(c, "default", "p", NULL, "n2", &st), DRA_ECONFLICT);
        assert_int_equal(dra_cluster_get(c, &pods, "default", "p", &a, &out, &st), DRA_OK);
        assert_string_equal(dra_obj_str(out, "spec.nodeName"), "n1");
    }
    dra_arena_fini(&a);
    dra_cluster_free(c);
    fx_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_watch_from_now),
        cmocka_unit_test(test_watch_exact),
        cmocka_unit_test(test_watch_by_name),
        cmocka_unit_test(test_watch_initial_events),
        cmocka_unit_test(test_watch_gone),
        cmocka_unit_test(test_watch_timeout),
        cmocka_unit_test(test_watch_bookmarks),
        cmocka_unit_test(test_incluster),
    };
    if (getenv("DRA_TEST_FILTER"))
        cmocka_set_test_filter(getenv("DRA_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
