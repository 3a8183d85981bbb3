/* Watch streams and the reflector against the scripted transport:
 * event parsing (blank keep-alive lines, bookmarks, ERROR 410, malformed
 * lines), open failures, cancellation from another thread, and the
 * reflector's list / watch / resume / relist cycle. */
#include "dra_test.h"
#include "fake.h"

static dra_cluster *setup(fake *f)
{
    fake_init(f);
    return fake_cluster(f);
}

static void teardown(fake *f, dra_cluster *c)
{
    dra_cluster_free(c);
    fake_fini(f);
}

static void test_watch_parse(void **state)
{
    fake f;
    dra_cluster *c = setup(&f);
    dra_gvr claims = DRA_GVR_CLAIMS;
    dra_list_opts o = {0};
    dra_watch *w = NULL;
    dra_watch_event ev;
    dra_kstatus st;
    dra_arena a;
    int s;
    (void)state;
    dra_arena_init(&a, NULL);
    s = fake_stream_add(&f, 0, NULL);
    fake_stream_line(&f, s, "{\"type\":\"ADDED\",\"object\":{\"kind\":"
                            "\"ResourceClaim\",\"metadata\":{\"name\":\"c1\","
                            "\"resourceVersion\":\"5\"}}}");
    fake_stream_line(&f, s, "");
    fake_stream_line(&f, s, " \r");
    fake_stream_line(&f, s, "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":"
                            "\"ResourceClaim\",\"metadata\":{"
                            "\"resourceVersion\":\"6\"}}}");
    fake_stream_line(&f, s, "{\"type\":\"ERROR\",\"object\":{\"kind\":"
                            "\"Status\",\"apiVersion\":\"v1\",\"status\":"
                            "\"Failure\",\"message\":\"too old resource "
                            "version: 4 (6)\",\"reason\":\"Expired\","
                            "\"code\":410}}");
    fake_stream_line(&f, s, "{\"type\":\"ADDED\",\"object\":{\"kind\"");
    fake_stream_line(&f, s, "{\"type\":\"ADDED\",\"object\":{}}");
    fake_stream_end(&f, s);

    o.resource_version = "4";
    o.allow_bookmarks = 1;
    o.timeout_seconds = 30;
    o.label_selector = "a=b";
    o.limit = 7; /* not a watch option */
    assert_int_equal(dra_cluster_watch(c, &claims, "ns", &o, &w, &st), DRA_OK);
    assert_string_equal(fake_log(&f, 0),
                        "WATCH /apis/resource.k8s.io/v1/namespaces/ns/"
                        "resourceclaims?watch=true&labelSelector=a%3Db&"
                        "resourceVersion=4&allowWatchBookmarks=true&"
                        "timeoutSeconds=30||");
    assert_int_equal(dra_watch_next(w, -1, &a, &ev), DRA_OK);
    assert_int_equal(ev.type, DRA_WATCH_ADDED);
    assert_string_equal(ev.resource_version, "5");
    assert_string_equal(dra_obj_name(ev.object), "c1");
    assert_int_equal(dra_watch_event_err(&ev, &st), DRA_OK);
    assert_int_equal(dra_watch_next(w, -1, &a, &ev), DRA_OK);
    assert_int_equal(ev.type, DRA_WATCH_BOOKMARK);
    assert_string_equal(ev.resource_version, "6");
    assert_int_equal(dra_watch_next(w, -1, &a, &ev), DRA_OK);
    assert_int_equal(ev.type, DRA_WATCH_ERROR);
    assert_null(ev.resource_version);
    assert_int_equal(dra_watch_event_err(&ev, &st), DRA_EGONE);
    assert_int_equal(st.code, 410);
    assert_string_equal(st.reason, "Expired");
    assert_string_equal(st.message, "too old resource version: 4 (6)");
    /* A malformed line ends the stream for good. */
    assert_int_equal(dra_watch_next(w, -1, &a, &ev), DRA_EPARSE);
    assert_null(ev.object);
    assert_int_equal(dra_watch_next(w, -1, &a, &ev), DRA_EIO);
    dra_watch_close(w);

    /* Shapes that are JSON but not watch events. */
    {
        static const char *const bad[] = {
            "{\"type\":\"FOO\",\"object\":{}}", "{\"type\":\"ADDED\"}",
            "{\"type\":\"ADDED\",\"object\":[1]}", "[]", "7",
            "{\"type\":1,\"object\":{}}",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            s = fake_stream_add(&f, 0, NULL);
            fake_stream_line(&f, s, bad[i]);
            assert_int_equal(dra_cluster_watch(c, &claims, NULL, NULL, &w,
                                               &st), DRA_OK);
            if (dra_watch_next(w, 0, &a, &ev) != DRA_EPARSE)
                fail_msg("%s should not parse as an event", bad[i]);
            dra_watch_close(w);
        }
    }
    /* The end of a stream, and nothing within a timeout. */
    s = fake_stream_add(&f, 0, NULL);
    fake_stream_end(&f, s);
    assert_int_equal(dra_cluster_watch(c, &claims, NULL, NULL, &w, &st), DRA_OK);
    assert_int_equal(dra_watch_next(w, -1, &a, &ev), DRA_EIO);
    dra_watch_close(w);
    s = fake_stream_add(&f, 0, NULL);
    assert_int_equal(dra_cluster_watch(c, &claims, NULL, NULL, &w, &st), DRA_OK);
    assert_int_equal(dra_watch_next(w, 10, &a, &ev), DRA_ETIMEOUT);
    /* cancel before next: the next call returns at once */
    dra_watch_cancel(w);
    assert_int_equal(dra_watch_next(w, -1, &a, &ev), DRA_ECANCELED);
    dra_watch_close(w);

    /* Refusals that come as HTTP answers. */
    fake_stream_add(&f, 410, "{\"kind\":\"Status\",\"code\":410,\"reason\":"
                             "\"Expired\",\"message\":\"too old\"}");
    assert_int_equal(dra_cluster_watch(c, &claims, NULL, &o, &w, &st),
                     DRA_EGONE);
    assert_null(w);
    assert_string_equal(st.reason, "Expired");
    fake_stream_add(&f, 403, NULL);
    assert_int_equal(dra_cluster_watch(c, &claims, NULL, &o, &w, &st),
                     DRA_EFORBIDDEN);
    /* No stream scripted: a transport error. */
    assert_int_equal(dra_cluster_watch(c, &claims, NULL, &o, &w, &st), DRA_EIO);
    assert_string_equal(st.message, "no scripted stream");
    dra_arena_fini(&a);
    teardown(&f, c);
}

static dra_err no_request(void *ud, const dra_cluster_req *req, int *code,
                          dra_buf *body, dra_kstatus *st)
{
    (void)ud, (void)req, (void)body, (void)st;
    *code = 200;
    return DRA_OK;
}

static void test_watch_unsupported(void **state)
{
    dra_cluster_ops ops = {0};
    dra_cluster *c;
    dra_watch *w = (dra_watch *)1;
    dra_gvr pods = DRA_GVR_PODS;
    dra_kstatus st;
    (void)state;
    ops.request = no_request;
    c = dra_cluster_new(&ops, NULL, NULL);
    assert_non_null(c);
    assert_int_equal(dra_cluster_watch(c, &pods, NULL, NULL, &w, &st),
                     DRA_EUNSUPPORTED);
    assert_null(w);
    dra_watch_close(NULL);
    dra_watch_cancel(NULL);
    dra_cluster_free(c);
    dra_cluster_free(NULL);
}

typedef struct blocked {
    dra_watch *w;
    dra_err err;
} blocked;

static void *block_next(void *arg)
{
    blocked *b = arg;
    dra_arena a;
    dra_watch_event ev;
    dra_arena_init(&a, NULL);
    b->err = dra_watch_next(b->w, -1, &a, &ev);
    dra_arena_fini(&a);
    return NULL;
}

static void test_watch_cancel(void **state)
{
    fake f;
    dra_cluster *c = setup(&f);
    dra_gvr pods = DRA_GVR_PODS;
    blocked b = {NULL, DRA_OK};
    pthread_t t;
    (void)state;
    fake_stream_add(&f, 0, NULL);
    assert_int_equal(dra_cluster_watch(c, &pods, "ns", NULL, &b.w, NULL),
                     DRA_OK);
    assert_int_equal(pthread_create(&t, NULL, block_next, &b), 0);
    dra_watch_cancel(b.w);
    pthread_join(t, NULL);
    assert_int_equal(b.err, DRA_ECANCELED);
    dra_watch_close(b.w);
    teardown(&f, c);
}

/* ---- reflector ------------------------------------------------------------ */

typedef struct rec {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char *ev[256];
    size_t n;
    int synced;
} rec;

static void rec_event(void *ud, dra_watch_type t, const dra_doc *obj)
{
    static const char *const names[] = {"ADDED", "MODIFIED", "DELETED",
                                        "BOOKMARK", "ERROR"};
    rec *r = ud;
    char line[256];
    const char *k = dra_obj_str(obj, "kind");
    snprintf(line, sizeof line, "%s %s/%s %s %s %s", names[t],
             dra_obj_namespace(obj) ? dra_obj_namespace(obj) : "",
             dra_obj_name(obj), dra_obj_rv(obj), k ? k : "-",
             dra_obj_uid(obj) ? dra_obj_uid(obj) : "-");
    pthread_mutex_lock(&r->mu);
    assert_true(r->n < 256);
    r->ev[r->n++] = strdup(line);
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static void rec_synced(void *ud)
{
    rec *r = ud;
    pthread_mutex_lock(&r->mu);
    r->synced++;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* Waits for |n| events and |synced| syncs; a 20 s hang guard. */
static void rec_wait(rec *r, size_t n, int synced)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    pthread_mutex_lock(&r->mu);
    while (r->n < n || r->synced < synced)
        if (pthread_cond_timedwait(&r->cv, &r->mu, &until) != 0) {
            size_t got = r->n;
            int s = r->synced;
            pthread_mutex_unlock(&r->mu);
            fail_msg("waited 20 s: %zu events, %d syncs", got, s);
        }
    pthread_mutex_unlock(&r->mu);
}

static void rec_init(rec *r)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
}

static void rec_fini(rec *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->ev[i]);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
}

static dra_reflector_opts pod_opts(rec *r)
{
    dra_reflector_opts o = {DRA_GVR_PODS, "n", "app=x", NULL, rec_event,
                            rec_synced, r};
    return o;
}

#define POD(name, rv) \
    "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"n\",\"uid\":\"u-" \
    name "\",\"resourceVersion\":\"" rv "\"}}"
#define EVENT(type, name, rv) \
    "{\"type\":\"" type "\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":" \
    "\"v1\",\"metadata\":{\"name\":\"" name "\",\"namespace\":\"n\"," \
    "\"uid\":\"u-" name "\",\"resourceVersion\":\"" rv "\"}}}"

static void test_reflector_relist(void **state)
{
    fake f;
    dra_cluster *c = setup(&f);
    rec r;
    dra_reflector_opts o;
    dra_reflector *refl = NULL;
    int s;
    (void)state;
    rec_init(&r);
    o = pod_opts(&r);
    fake_resp(&f, 200, "{\"kind\":\"PodList\",\"apiVersion\":\"v1\","
                       "\"metadata\":{\"resourceVersion\":\"10\"},\"items\":["
                       POD("a", "1") "," POD("b", "2") "," POD("c", "3") "]}");
    s = fake_stream_add(&f, 0, NULL);
    fake_stream_line(&f, s, EVENT("MODIFIED", "b", "11"));
    fake_stream_line(&f, s, "{\"type\":\"ERROR\",\"object\":{\"kind\":"
                            "\"Status\",\"code\":410,\"reason\":\"Expired\","
                            "\"message\":\"too old resource version\"}}");
    /* Meanwhile c was deleted and d created. */
    fake_resp(&f, 200, "{\"kind\":\"PodList\",\"apiVersion\":\"v1\","
                       "\"metadata\":{\"resourceVersion\":\"20\"},\"items\":["
                       POD("a", "1") "," POD("b", "11") "," POD("d", "15") "]}");
    fake_stream_add(&f, 0, NULL); /* blocks until stopped */

    assert_int_equal(dra_reflector_start(c, &o, &refl), DRA_OK);
    rec_wait(&r, 6, 2);
    fake_wait_opens(&f, 2);
    assert_true(dra_reflector_synced(refl));
    dra_reflector_stop(refl);

    assert_int_equal(r.n, 6);
    assert_string_equal(r.ev[0], "ADDED n/a 1 Pod u-a");
    assert_string_equal(r.ev[1], "ADDED n/b 2 Pod u-b");
    assert_string_equal(r.ev[2], "ADDED n/c 3 Pod u-c");
    assert_string_equal(r.ev[3], "MODIFIED n/b 11 Pod u-b");
    /* After the relist: d is new, c vanished (a stub with what we knew),
     * a and b are unchanged and not reported again. */
    assert_string_equal(r.ev[4], "ADDED n/d 15 Pod u-d");
    assert_string_equal(r.ev[5], "DELETED n/c 3 Pod u-c");
    assert_int_equal(r.synced, 2);
    assert_string_equal(fake_log(&f, 0),
                        "GET /api/v1/namespaces/n/pods?labelSelector=app%3Dx&"
                        "limit=500||");
    assert_true(strncmp(fake_log(&f, 1),
                        "WATCH /api/v1/namespaces/n/pods?watch=true&"
                        "labelSelector=app%3Dx&resourceVersion=10&"
                        "allowWatchBookmarks=true&timeoutSeconds=", 106) == 0);
    assert_string_equal(fake_log(&f, 2), fake_log(&f, 0));
    assert_non_null(strstr(fake_log(&f, 3), "&resourceVersion=20&"));
    assert_null(fake_log(&f, 4));
    rec_fini(&r);
    teardown(&f, c);
}

static void test_reflector_resume(void **state)
{
    fake f;
    dra_cluster *c = setup(&f);
    rec r;
    dra_reflector_opts o;
    dra_reflector *refl = NULL;
    int s;
    (void)state;
    rec_init(&r);
    o = pod_opts(&r);
    fake_resp(&f, 200, "{\"kind\":\"PodList\",\"apiVersion\":\"v1\","
                       "\"metadata\":{\"resourceVersion\":\"10\"},\"items\":["
                       POD("a", "1") "]}");
    s = fake_stream_add(&f, 0, NULL);
    fake_stream_line(&f, s, EVENT("ADDED", "e", "12"));
    fake_stream_line(&f, s, "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":"
                            "\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{"
                            "\"resourceVersion\":\"13\"}}}");
    fake_stream_end(&f, s);
    s = fake_stream_add(&f, 0, NULL);
    /* A replayed event with a version we have already seen is dropped. */
    fake_stream_line(&f, s, EVENT("ADDED", "a", "1"));
    fake_stream_line(&f, s, EVENT("MODIFIED", "a", "14"));
    fake_stream_line(&f, s, EVENT("DELETED", "e", "15"));

    assert_int_equal(dra_reflector_start(c, &o, &refl), DRA_OK);
    rec_wait(&r, 4, 1);
    dra_reflector_stop(refl);
    assert_int_equal(r.n, 4);
    assert_string_equal(r.ev[0], "ADDED n/a 1 Pod u-a");
    assert_string_equal(r.ev[1], "ADDED n/e 12 Pod u-e");
    assert_string_equal(r.ev[2], "MODIFIED n/a 14 Pod u-a");
    assert_string_equal(r.ev[3], "DELETED n/e 15 Pod u-e");
    assert_int_equal(r.synced, 1);
    /* One list; the second watch resumed from the bookmark's version. */
    assert_non_null(strstr(fake_log(&f, 0), "GET "));
    assert_non_null(strstr(fake_log(&f, 1), "&resourceVersion=10&"));
    assert_non_null(strstr(fake_log(&f, 2), "WATCH "));
    assert_non_null(strstr(fake_log(&f, 2), "&resourceVersion=13&"));
    assert_null(fake_log(&f, 3));
    rec_fini(&r);
    teardown(&f, c);
}

static void test_reflector_errors(void **state)
{
    fake f;
    dra_cluster *c = setup(&f);
    rec r;
    dra_reflector_opts o;
    dra_reflector *refl = NULL;
    const char *list = "{\"kind\":\"PodList\",\"apiVersion\":\"v1\","
                       "\"metadata\":{\"resourceVersion\":\"30\"},\"items\":["
                       POD("a", "1") "]}";
    int s;
    (void)state;
    rec_init(&r);
    o = pod_opts(&r);
    fake_resp(&f, 500, "{\"kind\":\"Status\",\"code\":500}"); /* backoff */
    fake_resp(&f, 200, list);
    fake_stream_add(&f, 403, NULL); /* watch refused: relist */
    fake_resp(&f, 200, list);
    s = fake_stream_add(&f, 0, NULL);
    fake_stream_line(&f, s, "{\"type\":\"ADDED\",\"object\":"); /* garbage */
    fake_resp(&f, 200, list);
    fake_stream_add(&f, 0, NULL); /* blocks */

    assert_int_equal(dra_reflector_start(c, &o, &refl), DRA_OK);
    fake_wait_opens(&f, 3);
    rec_wait(&r, 1, 3);
    dra_reflector_stop(refl);
    /* The object was reported once across three lists. */
    assert_int_equal(r.n, 1);
    assert_string_equal(r.ev[0], "ADDED n/a 1 Pod u-a");
    assert_int_equal(r.synced, 3);
    assert_int_equal(fake_nlog(&f), 7);
    rec_fini(&r);
    teardown(&f, c);
}

static void test_reflector_stop_in_backoff(void **state)
{
    fake f;
    dra_cluster *c = setup(&f);
    rec r;
    dra_reflector_opts o;
    dra_reflector *refl = NULL;
    (void)state;
    rec_init(&r);
    o = pod_opts(&r);
    o.on_synced = NULL;
    /* Nothing scripted: every list fails; stop during the backoff. */
    assert_int_equal(dra_reflector_start(c, &o, &refl), DRA_OK);
    for (int i = 0; fake_nlog(&f) < 2; i++) {
        assert_true(i < 2000); /* a 20 s hang guard */
        fake_sleep_ms(10);
    }
    assert_false(dra_reflector_synced(refl));
    dra_reflector_stop(refl);
    dra_reflector_stop(NULL);
    assert_int_equal(r.n, 0);
    rec_fini(&r);
    teardown(&f, c);
    {
        dra_reflector_opts bad = {0};
        assert_int_equal(dra_reflector_start(NULL, &bad, &refl), DRA_EINVAL);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_watch_parse),
        cmocka_unit_test(test_watch_unsupported),
        cmocka_unit_test(test_watch_cancel),
        cmocka_unit_test(test_reflector_relist),
        cmocka_unit_test(test_reflector_resume),
        cmocka_unit_test(test_reflector_errors),
        cmocka_unit_test(test_reflector_stop_in_backoff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
