/* The REST transport against a real drad (run by run_drad.sh, which
 * starts drad on a free port and sets KUBECONFIG to the file drad
 * writes): kubeconfig loading from $KUBECONFIG with drad's CA and token,
 * resource.k8s.io CRUD with kube-apiserver's Status errors (404, 409,
 * 422), paging, pods and binding, events folded on the server, watch
 * streams, the reflector, and a wrong token refused with 401. */
#include <pthread.h>
#include <unistd.h>

#include "dra_test.h"
#include "dra/kube.h"
#include "watch_backlog.h"

static dra_cluster *connect_env(void)
{
    dra_kube_config cfg;
    dra_cluster *c = NULL;
    dra_diag d;
    dra_diag_init(&d, NULL);
    if (dra_kube_config_load(&cfg, NULL, NULL, NULL, &d) != DRA_OK)
        fail_msg("kubeconfig: %s", dra_diag_first(&d));
    if (dra_kube_cluster_new(&cfg, NULL, &c, &d) != DRA_OK)
        fail_msg("cluster_new: %s", dra_diag_first(&d));
    dra_kube_config_fini(&cfg);
    dra_diag_fini(&d);
    return c;
}

static dra_doc *json(dra_arena *a, const char *text)
{
    dra_doc *d = NULL;
    if (dra_doc_parse_json(a, text, strlen(text), &d, NULL) != DRA_OK)
        fail_msg("bad test JSON: %s", text);
    return d;
}

#define CLASS(name)                                                         \
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\","    \
    "\"metadata\":{\"name\":\"" name "\"},\"spec\":{\"selectors\":[{"     \
    "\"cel\":{\"expression\":\"device.driver == 'gpu.example.com'\"}}]}}"
#define CLAIM(name)                                                         \
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","  \
    "\"metadata\":{\"name\":\"" name "\"},\"spec\":{\"devices\":{"        \
    "\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"    \
    "\"gpu.example.com\"}}]}}}"

static void must(dra_err err, dra_err want, const dra_kstatus *st,
                 const char *what)
{
    if (err != want)
        fail_msg("%s: %s (want %s): %d %s: %s", what, dra_errname(err),
                 dra_errname(want), st->code, st->reason, st->message);
}

static void test_claims(void **state)
{
    dra_cluster *c = connect_env();
    dra_gvr classes = DRA_GVR_CLASSES, claims = DRA_GVR_CLAIMS;
    dra_arena a;
    dra_kstatus st;
    dra_doc *out = NULL;
    char *rv;
    (void)state;
    dra_arena_init(&a, NULL);
    must(dra_cluster_create(c, &classes, NULL, json(&a, CLASS("gpu.example.com")),
                            &a, &out, &st), DRA_OK, &st, "create class");
    must(dra_cluster_create(c, &claims, "default", json(&a, CLAIM("c1")), &a,
                            &out, &st), DRA_OK, &st, "create claim");
    assert_int_equal(st.code, 201);
    assert_non_null(dra_obj_uid(out));
    rv = dra_arena_strdup(&a, dra_obj_rv(out));
    must(dra_cluster_create(c, &claims, "default", json(&a, CLAIM("c1")), &a,
                            &out, &st), DRA_EEXIST, &st, "create twice");
    assert_string_equal(st.message,
                        "resourceclaims.resource.k8s.io \"c1\" already exists");
    must(dra_cluster_get(c, &claims, "default", "nope", &a, &out, &st),
         DRA_ENOTFOUND, &st, "get missing");
    assert_string_equal(st.message,
                        "resourceclaims.resource.k8s.io \"nope\" not found");
    must(dra_cluster_get(c, &claims, "default", "c1", &a, &out, &st), DRA_OK,
         &st, "get");
    assert_string_equal(dra_obj_str(out, "kind"), "ResourceClaim");
    {
        const char *patch = "{\"metadata\":{\"labels\":{\"team\":\"a\"}}}";
        must(dra_cluster_patch(c, &claims, "default", "c1", NULL,
                               DRA_PATCH_MERGE, patch, strlen(patch),
                               "dra-test", &a, &out, &st), DRA_OK, &st, "patch");
        assert_string_equal(dra_obj_str(out, "metadata.labels.team"), "a");
    }
    /* A stale resourceVersion: 409 Conflict with kube-apiserver's words. */
    {
        dra_doc *stale = json(&a, CLAIM("c1"));
        dra_doc *md = (dra_doc *)dra_doc_get(stale, "metadata");
        dra_doc_map_set(&a, md, "resourceVersion",
                        dra_doc_new_string(&a, rv, strlen(rv)));
        must(dra_cluster_update(c, &claims, "default", "c1", NULL, stale, &a,
                                &out, &st), DRA_ECONFLICT, &st, "stale update");
        assert_non_null(strstr(st.message, "the object has been modified"));
    }
    /* Invalid: 422 with the validation message. */
    must(dra_cluster_create(c, &claims, "default",
                            json(&a, "{\"apiVersion\":\"resource.k8s.io/v1\","
                                     "\"kind\":\"ResourceClaim\",\"metadata\":"
                                     "{\"name\":\"bad\"},\"spec\":{\"devices\":"
                                     "{\"requests\":[{\"exactly\":{"
                                     "\"deviceClassName\":\"x\"}}]}}}"),
                            &a, &out, &st), DRA_EINVALID, &st, "invalid");
    assert_string_equal(st.reason, "Invalid");
    assert_true(strncmp(st.message,
                        "ResourceClaim.resource.k8s.io \"bad\" is invalid: ",
                        47) == 0);
    must(dra_cluster_delete(c, &claims, "default", "c1", NULL, &a, &out, &st),
         DRA_OK, &st, "delete");
    must(dra_cluster_delete(c, &claims, "default", "c1", NULL, &a, &out, &st),
         DRA_ENOTFOUND, &st, "delete twice");
    dra_arena_fini(&a);
    dra_cluster_free(c);
}

static void test_paging_pods_events(void **state)
{
    dra_cluster *c = connect_env();
    dra_gvr slices = DRA_GVR_SLICES, pods = DRA_GVR_PODS, claims = DRA_GVR_CLAIMS,
            events = DRA_GVR_EVENTS;
    dra_arena a;
    dra_kstatus st;
    dra_doc *out = NULL, *claim = NULL;
    const char *rv = NULL;
    dra_list_opts o = {0};
    char body[512];
    (void)state;
    dra_arena_init(&a, NULL);
    for (int i = 0; i < 5; i++) {
        snprintf(body, sizeof body,
                 "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":"
                 "\"ResourceSlice\",\"metadata\":{\"name\":\"s%d\"},\"spec\":{"
                 "\"driver\":\"gpu.example.com\",\"pool\":{\"name\":\"p%d\","
                 "\"generation\":0,\"resourceSliceCount\":1},\"allNodes\":true,"
                 "\"devices\":[{\"name\":\"d0\"}]}}", i, i);
        must(dra_cluster_create(c, &slices, NULL, json(&a, body), &a, NULL,
                                &st), DRA_OK, &st, "create slice");
    }
    o.limit = 2;
    must(dra_cluster_list_all(c, &slices, NULL, &o, &a, &out, &rv, &st), DRA_OK,
         &st, "list_all");
    assert_int_equal(dra_doc_get(out, "items")->u.list.n, 5);
    assert_non_null(rv);
    assert_string_equal(dra_obj_str(dra_doc_get(out, "items")->u.list.items[0],
                                    "kind"), "ResourceSlice");

    /* A pod bound to a node through pods/NAME/binding. */
    must(dra_cluster_create(c, &pods, "default",
                            json(&a, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
                                     "\"metadata\":{\"name\":\"p1\"},\"spec\":"
                                     "{\"containers\":[{\"name\":\"c\","
                                     "\"image\":\"busybox\"}]}}"),
                            &a, &out, &st), DRA_OK, &st, "create pod");
    must(dra_cluster_bind(c, "default", "p1", dra_obj_uid(out), "node-1", &st),
         DRA_OK, &st, "bind");
    must(dra_cluster_get(c, &pods, "default", "p1", &a, &out, &st), DRA_OK, &st,
         "get pod");
    assert_string_equal(dra_obj_str(out, "spec.nodeName"), "node-1");

    /* The same event twice: one Event with count 2 on the server. */
    must(dra_cluster_create(c, &claims, "default", json(&a, CLAIM("ev1")), &a,
                            &claim, &st), DRA_OK, &st, "create claim");
    must(dra_cluster_event(c, claim, "Warning", "FailedScheduling", "dra-test",
                           "host-1", "no device fits %s", "gpu"),
         DRA_OK, &st, "event");
    must(dra_cluster_event(c, claim, "Warning", "FailedScheduling", "dra-test",
                           "host-1", "no device fits %s", "gpu"),
         DRA_OK, &st, "event again");
    memset(&o, 0, sizeof o);
    o.field_selector = "involvedObject.name=ev1,involvedObject.kind=ResourceClaim";
    must(dra_cluster_list(c, &events, "default", &o, &a, &out, &st), DRA_OK, &st,
         "list events");
    {
        const dra_doc *items = dra_doc_get(out, "items");
        assert_int_equal(items->u.list.n, 1);
        assert_int_equal(dra_doc_get(items->u.list.items[0], "count")->u.i, 2);
        assert_string_equal(dra_obj_str(items->u.list.items[0], "message"),
                            "no device fits gpu");
        assert_string_equal(dra_obj_str(items->u.list.items[0],
                                        "involvedObject.uid"),
                            dra_obj_uid(claim));
    }
    dra_arena_fini(&a);
    dra_cluster_free(c);
}

static dra_err next_change(dra_watch *w, dra_arena *a, dra_watch_event *ev)
{
    dra_err err;
    do
        err = dra_watch_next(w, 20000, a, ev);
    while (err == DRA_OK && ev->type == DRA_WATCH_BOOKMARK);
    return err;
}

typedef struct seen {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char log[64][96];
    int n, synced;
} seen;

static void on_event(void *ud, dra_watch_type t, const dra_doc *obj)
{
    static const char *const names[] = {"ADDED", "MODIFIED", "DELETED"};
    seen *s = ud;
    pthread_mutex_lock(&s->mu);
    if (s->n < 64)
        snprintf(s->log[s->n++], sizeof s->log[0], "%s %s", names[t],
                 dra_obj_name(obj));
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void on_synced(void *ud)
{
    seen *s = ud;
    pthread_mutex_lock(&s->mu);
    s->synced++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* Waits (up to 30 s) until the reflector has reported |n| events and
 * its first list (n = 0: the first list only). */
static void wait_seen(seen *s, int n)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30;
    pthread_mutex_lock(&s->mu);
    while (s->n < n || s->synced < 1)
        if (pthread_cond_timedwait(&s->cv, &s->mu, &until) != 0) {
            int got = s->n, synced = s->synced;
            pthread_mutex_unlock(&s->mu);
            fail_msg("waited 30 s for %d events and the first list, got %d events, "
                     "%d lists", n, got, synced);
        }
    pthread_mutex_unlock(&s->mu);
}

static void test_watch_and_reflector(void **state)
{
    dra_cluster *c = connect_env();
    dra_gvr claims = DRA_GVR_CLAIMS;
    dra_arena a;
    dra_kstatus st;
    dra_doc *out = NULL;
    dra_watch *w = NULL;
    dra_watch_event ev;
    dra_list_opts o = {0};
    const char *rv = NULL;
    dra_reflector_opts ro = {DRA_GVR_CLAIMS, "watch", NULL, NULL, on_event,
                             on_synced, NULL};
    dra_reflector *r = NULL;
    seen s;
    (void)state;
    dra_arena_init(&a, NULL);
    memset(&s, 0, sizeof s);
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.cv, NULL);
    ro.ud = &s;
    must(dra_cluster_create(c, &DRA_GVR_NAMESPACES, NULL,
                            json(&a, "{\"apiVersion\":\"v1\",\"kind\":"
                                     "\"Namespace\",\"metadata\":{\"name\":"
                                     "\"watch\"}}"), &a, NULL, &st),
         DRA_OK, &st, "create namespace");
    must(dra_cluster_list_all(c, &claims, "watch", NULL, &a, &out, &rv, &st),
         DRA_OK, &st, "list");
    o.resource_version = rv;
    o.allow_bookmarks = 1;
    must(dra_cluster_watch(c, &claims, "watch", &o, &w, &st), DRA_OK, &st,
         "watch");
    assert_int_equal(dra_watch_next(w, 100, &a, &ev), DRA_ETIMEOUT);
    assert_int_equal(dra_reflector_start(c, &ro, &r), DRA_OK);
    /* The reflector lists on its own thread: a claim created and deleted
     * before that list would be seen by neither its list nor its watch
     * (which starts at the list's version). */
    wait_seen(&s, 0);
    assert_true(dra_reflector_synced(r));
    must(dra_cluster_create(c, &claims, "watch", json(&a, CLAIM("w1")), &a,
                            NULL, &st), DRA_OK, &st, "create");
    must(dra_cluster_delete(c, &claims, "watch", "w1", NULL, &a, NULL, &st),
         DRA_OK, &st, "delete");
    assert_int_equal(next_change(w, &a, &ev), DRA_OK);
    assert_int_equal(ev.type, DRA_WATCH_ADDED);
    assert_string_equal(dra_obj_name(ev.object), "w1");
    assert_int_equal(next_change(w, &a, &ev), DRA_OK);
    assert_int_equal(ev.type, DRA_WATCH_DELETED);
    dra_watch_close(w);
    wait_seen(&s, 2);
    dra_reflector_stop(r);
    assert_string_equal(s.log[0], "ADDED w1");
    assert_string_equal(s.log[1], "DELETED w1");
    pthread_cond_destroy(&s.cv);
    pthread_mutex_destroy(&s.mu);
    dra_arena_fini(&a);
    dra_cluster_free(c);
}

/* More events than one read of drad's watch stream holds. */
static void test_watch_backlog(void **state)
{
    dra_cluster *c = connect_env();
    dra_arena a;
    dra_kstatus st;
    (void)state;
    dra_arena_init(&a, NULL);
    must(dra_cluster_create(c, &DRA_GVR_NAMESPACES, NULL,
                            json(&a, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
                                     "\"metadata\":{\"name\":\"backlog\"}}"),
                            &a, NULL, &st),
         DRA_OK, &st, "create namespace");
    watch_backlog(c, "backlog");
    dra_arena_fini(&a);
    dra_cluster_free(c);
}

static void test_unauthorized(void **state)
{
    dra_kube_config cfg;
    dra_cluster *c = NULL;
    dra_gvr claims = DRA_GVR_CLAIMS;
    dra_arena a;
    dra_kstatus st;
    dra_doc *out;
    (void)state;
    assert_int_equal(dra_kube_config_load(&cfg, NULL, NULL, NULL, NULL), DRA_OK);
    cfg.token = "not-the-token";
    cfg.token_file = NULL;
    cfg.cert_file = cfg.cert_data = cfg.key_file = cfg.key_data = NULL;
    assert_int_equal(dra_kube_cluster_new(&cfg, NULL, &c, NULL), DRA_OK);
    dra_kube_config_fini(&cfg);
    dra_arena_init(&a, NULL);
    must(dra_cluster_list(c, &claims, NULL, NULL, &a, &out, &st),
         DRA_EUNAUTHORIZED, &st, "wrong token");
    assert_int_equal(st.code, 401);
    assert_string_equal(st.reason, "Unauthorized");
    dra_arena_fini(&a);
    dra_cluster_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_claims),
        cmocka_unit_test(test_paging_pods_events),
        cmocka_unit_test(test_watch_and_reflector),
        cmocka_unit_test(test_watch_backlog),
        cmocka_unit_test(test_unauthorized),
    };
    if (!getenv("KUBECONFIG")) {
        fprintf(stderr, "run through run_drad.sh (KUBECONFIG)\n");
        return 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
