/* Watch semantics of drad's API server (resourceVersion "", "0" and
 * exact; selectors moving objects in and out; sendInitialEvents with its
 * bookmark; 410 Gone after compaction; timeoutSeconds), and the
 * in-process cluster transport that controllers inside drad use. */
#include "api_fixture.h"

#include "dra/cluster.h"
#include "../kube/watch_backlog.h"

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

/* After a read, |w| has |n| events and the last is |type| of |name|. */
static void tw_expect(tw *w, size_t n, const char *type, const char *name)
{
    assert_int_equal(tw_read(w), n);
    assert_true(tw_event(w, n - 1, type, name));
}

/* Watches with different selectors read the same objects in turn (each
 * object remembers its last answer per selector): every watch still sees
 * exactly its own selection, and two with one selector the same. */
static void test_watch_selectors_interleaved(void **state)
{
    fx f;
    tw wx[2], wy, wn;
    (void)state;
    fx_open(&f, NULL, 0);
    tw_open(&f, &wx[0], SLICES "?watch=true&labelSelector=t%3Dx");
    tw_open(&f, &wy, SLICES "?watch=true&labelSelector=t%3Dy");
    tw_open(&f, &wx[1], SLICES "?watch=true&labelSelector=t%3Dx");
    tw_open(&f, &wn, SLICES "?watch=true&labelSelector=t%3Dx&fieldSelector=spec.nodeName%3Dn2");
    fx_req(&f, "POST", SLICES, SLICE("a", "n1", ",\"labels\":{\"t\":\"x\"}"));
    fx_req(&f, "POST", SLICES, SLICE("b", "n2", ",\"labels\":{\"t\":\"y\"}"));
    fx_req(&f, "POST", SLICES, SLICE("c", "n2", ",\"labels\":{\"t\":\"x\"}"));
    FX_ASSERT_CODE(&f, 201);
    for (int i = 0; i < 2; i++) {
        tw_expect(&wx[i], 2, "ADDED", "c");
        assert_true(tw_event(&wx[i], 0, "ADDED", "a"));
    }
    tw_expect(&wy, 1, "ADDED", "b");
    tw_expect(&wn, 1, "ADDED", "c");
    /* b moves from y to x: the old state is judged again per selector. */
    fx_req(&f, "PUT", SLICES "/b", SLICE("b", "n2", ",\"labels\":{\"t\":\"x\"}"));
    FX_ASSERT_CODE(&f, 200);
    tw_expect(&wy, 2, "DELETED", "b");
    tw_expect(&wx[1], 3, "ADDED", "b");
    tw_expect(&wn, 2, "ADDED", "b");
    tw_expect(&wx[0], 3, "ADDED", "b");
    tw_close(&wx[0]);
    tw_close(&wx[1]);
    tw_close(&wy);
    tw_close(&wn);
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

/* More events than one read of the watch stream holds, in process. */
static void test_incluster_backlog(void **state)
{
    fx f;
    dra_cluster *c;
    (void)state;
    fx_open(&f, NULL, 0);
    c = dra_apiserver_cluster(f.srv);
    assert_non_null(c);
    watch_backlog(c, "default");
    dra_cluster_free(c);
    fx_close(&f);
}

/* The JSON of |d|, as a string to free. */
static char *json_of(const dra_doc *d)
{
    dra_buf b;
    char *s;
    dra_buf_init(&b, NULL);
    assert_int_equal(dra_doc_to_json(d, 0, &b), DRA_OK);
    s = strdup(b.p);
    dra_buf_fini(&b);
    return s;
}

/* What a write answered is what a read then gets, to the byte. */
static void answer_is_stored(dra_cluster *c, dra_arena *a, const dra_doc *out)
{
    dra_gvr pods = DRA_GVR_PODS;
    dra_doc *got;
    char *x, *y;
    assert_int_equal(dra_cluster_get(c, &pods, "default", dra_obj_name(out), a, &got, NULL),
                     DRA_OK);
    x = json_of(out);
    y = json_of(got);
    assert_string_equal(x, y);
    free(x);
    free(y);
}

/* The object of a create through |c| from |json| (with |name| put in),
 * as stored, less what differs between two objects (name, uid,
 * resourceVersion, creationTimestamp); or the error's Status. */
static char *create_as(dra_cluster *c, dra_arena *a, const char *json, const char *name,
                       dra_kstatus *st, dra_err *err)
{
    dra_gvr pods = DRA_GVR_PODS;
    dra_doc *obj, *out = NULL, *m;
    assert_int_equal(dra_doc_parse_json(a, json, strlen(json), &obj, NULL), DRA_OK);
    if (obj->kind == DRA_DOC_MAP && (m = (dra_doc *)dra_doc_get(obj, "metadata")))
        dra_doc_map_set(a, m, "name", dra_doc_new_string(a, name, strlen(name)));
    *err = dra_cluster_create(c, &pods, "default", obj, a, &out, st);
    if (*err)
        return strdup(st->message);
    answer_is_stored(c, a, out);
    /* an update's answer likewise */
    m = (dra_doc *)dra_doc_get(out, "metadata");
    dra_doc_map_set(a, m, "labels", dra_doc_new_map(a, 0));
    dra_doc_map_set(a, (dra_doc *)dra_doc_get(m, "labels"), "l", dra_doc_new_string(a, "v", 1));
    assert_int_equal(dra_cluster_update(c, &pods, "default", name, NULL, out, a, &out, st),
                     DRA_OK);
    answer_is_stored(c, a, out);
    m = (dra_doc *)dra_doc_get(out, "metadata");
    dra_doc_map_set(a, m, "name", dra_doc_new_null(a));
    dra_doc_map_set(a, m, "uid", dra_doc_new_null(a));
    dra_doc_map_set(a, m, "resourceVersion", dra_doc_new_null(a));
    dra_doc_map_set(a, m, "creationTimestamp", dra_doc_new_null(a));
    return json_of(out);
}

/* A create's or an update's object goes through the in-process transport
 * as the document itself (the handler takes a copy): the answers are
 * those of the JSON text, stored objects and errors alike, and what the
 * handler cannot take as it is (another method, a float, a repeated key)
 * goes as text. */
static void test_incluster_docs(void **state)
{
    static const char *const bodies[] = {
        /* plain, with escapes and UTF-8 */
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\",\"namespace\":"
        "\"default\",\"annotations\":{\"a\":\"<&>\\u00e9\"}},\"spec\":{\"containers\":[{\"name\":"
        "\"c\",\"image\":\"i\"}]}}",
        /* a float that reads back as an int: through the text */
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\",\"namespace\":"
        "\"default\"},\"spec\":{\"terminationGracePeriodSeconds\":FLOAT,\"containers\":"
        "[{\"name\":\"c\",\"image\":\"i\"}]}}",
        /* invalid, unknown field, not an object */
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\",\"namespace\":"
        "\"default\"},\"spec\":{\"containers\":[]}}",
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\",\"namespace\":"
        "\"default\"},\"spec\":{\"nope\":1,\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}",
        "[1,2]",
    };
    fx f;
    dra_cluster *docs, *text;
    dra_arena a;
    dra_apiserver_req q;
    dra_apiserver_resp r;
    dra_doc *d;
    (void)state;
    fx_open(&f, NULL, 0);
    docs = dra_apiserver_cluster(f.srv);
    text = dra_apiserver_cluster(f.srv);
    dra_cluster_set_doc_request(text, NULL);
    dra_arena_init(&a, NULL);
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        char json[1024], n1[32], n2[32], *p, *x, *y;
        dra_kstatus s1, s2;
        dra_err e1, e2;
        snprintf(json, sizeof json, "%s", bodies[i]);
        if ((p = strstr(json, "FLOAT")))
            memcpy(p, "30.00", 5);
        snprintf(n1, sizeof n1, "docs-%zu", i);
        snprintf(n2, sizeof n2, "text-%zu", i);
        x = create_as(docs, &a, json, n1, &s1, &e1);
        y = create_as(text, &a, json, n2, &s2, &e2);
        assert_int_equal(e1, e2);
        if (e1) {
            assert_int_equal(s1.code, s2.code);
            assert_string_equal(s1.reason, s2.reason);
            /* the messages name the object */
            for (char *t; (t = strstr(x, "docs-"));)
                memcpy(t, "text-", 5);
        }
        assert_string_equal(x, y);
        free(x);
        free(y);
    }
    /* The handler's side: what it takes, and what it leaves to the text. */
    {
        static const char ns[] =
            "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"ns-doc\"}}";
        assert_int_equal(dra_doc_parse_json(&a, ns, sizeof ns - 1, &d, NULL), DRA_OK);
    }
    memset(&q, 0, sizeof q);
    q.method = "POST";
    q.path = "/api/v1/namespaces";
    q.body_doc = d;
    dra_apiserver_resp_init(&r, NULL);
    assert_int_equal(dra_apiserver_handle(f.srv, &q, &r), DRA_OK);
    assert_int_equal(r.code, 201);
    q.method = "PATCH";
    assert_int_equal(dra_apiserver_handle(f.srv, &q, &r), DRA_EUNSUPPORTED);
    q.method = "PUT";
    q.content_type = "application/yaml";
    assert_int_equal(dra_apiserver_handle(f.srv, &q, &r), DRA_EUNSUPPORTED);
    q.content_type = NULL;
    q.body = "{}";
    q.body_len = 2;
    assert_int_equal(dra_apiserver_handle(f.srv, &q, &r), DRA_EUNSUPPORTED);
    q.body = NULL;
    q.body_len = 0;
    q.body_doc = dra_doc_new_float(&a, 1.0);
    assert_int_equal(dra_apiserver_handle(f.srv, &q, &r), DRA_EUNSUPPORTED);
    dra_apiserver_resp_fini(&r);
    dra_arena_fini(&a);
    dra_cluster_free(docs);
    dra_cluster_free(text);
    fx_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_watch_from_now),
        cmocka_unit_test(test_watch_exact),
        cmocka_unit_test(test_watch_by_name),
        cmocka_unit_test(test_watch_selectors_interleaved),
        cmocka_unit_test(test_watch_initial_events),
        cmocka_unit_test(test_watch_gone),
        cmocka_unit_test(test_watch_timeout),
        cmocka_unit_test(test_watch_bookmarks),
        cmocka_unit_test(test_incluster),
        cmocka_unit_test(test_incluster_backlog),
        cmocka_unit_test(test_incluster_docs),
    };
    if (getenv("DRA_TEST_FILTER"))
        cmocka_set_test_filter(getenv("DRA_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
