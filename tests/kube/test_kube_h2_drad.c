/* The HTTP/2 transport end to end against drad's own API server: a store
 * and an API server in a temporary directory behind the HTTP/2 front end
 * (dra_apiserver_h2_start), reached through dra_kube_h2_cluster_new with
 * the CA and token dra_apiserver_creds_load made: create, get, list,
 * watch, update status and delete through the dra_cluster API, Status
 * errors with kube-apiserver's words, and a wrong token refused. */
#include <unistd.h>

#include "dra_test.h"
#include "dra/apiserver.h"
#include "dra/kube.h"
#include "dra/store.h"
#include "watch_backlog.h"

#define CLASS                                                               \
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\","    \
    "\"metadata\":{\"name\":\"gpu.example.com\"},\"spec\":{\"selectors\":" \
    "[{\"cel\":{\"expression\":\"device.driver == 'gpu.example.com'\"}}]}}"
#define CLAIM                                                               \
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","  \
    "\"metadata\":{\"name\":\"c1\"},\"spec\":{\"devices\":{"              \
    "\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"    \
    "\"gpu.example.com\"}}]}}}"

typedef struct srv {
    char dir[64], db[96];
    dra_store *store;
    dra_apiserver *api;
    dra_apiserver_creds cr;
    dra_apiserver_h2 *h2;
} srv;

static void srv_start(srv *s)
{
    dra_apiserver_opts o;
    dra_apiserver_http_opts ho;
    dra_diag d;
    memset(s, 0, sizeof *s);
    dra_diag_init(&d, NULL);
    snprintf(s->dir, sizeof s->dir, "/tmp/dra-h2e2e-XXXXXX");
    assert_non_null(mkdtemp(s->dir));
    snprintf(s->db, sizeof s->db, "%s/state.db", s->dir);
    if (dra_store_open(s->db, NULL, NULL, &s->store, &d) ||
        dra_apiserver_creds_load(s->dir, NULL, &s->cr, &d))
        fail_msg("store/creds: %s", dra_diag_first(&d));
    memset(&o, 0, sizeof o);
    o.store = s->store;
    if (dra_apiserver_new(&o, NULL, &s->api, &d))
        fail_msg("apiserver: %s", dra_diag_first(&d));
    memset(&ho, 0, sizeof ho);
    ho.creds = &s->cr;
    if (dra_apiserver_h2_start(s->api, &ho, &s->h2, &d))
        fail_msg("h2 front end: %s", dra_diag_first(&d));
    dra_diag_fini(&d);
}

static void srv_stop(srv *s)
{
    char cmd[128];
    dra_apiserver_h2_stop(s->h2);
    dra_apiserver_free(s->api);
    dra_store_close(s->store);
    dra_apiserver_creds_fini(&s->cr);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", s->dir);
    assert_int_equal(system(cmd), 0);
}

static dra_cluster *client(srv *s, const char *token)
{
    dra_kube_config cfg;
    dra_cluster *c = NULL;
    dra_diag d;
    dra_diag_init(&d, NULL);
    dra_kube_config_init(&cfg, NULL);
    cfg.server = dra_arena_sprintf(&cfg.arena, "https://127.0.0.1:%d",
                                   dra_apiserver_h2_port(s->h2));
    cfg.ca_data = s->cr.ca_cert;
    cfg.ca_len = strlen(s->cr.ca_cert);
    cfg.token = token;
    if (dra_kube_h2_cluster_new(&cfg, NULL, &c, &d) != DRA_OK)
        fail_msg("cluster_new: %s", dra_diag_first(&d));
    dra_kube_config_fini(&cfg);
    dra_diag_fini(&d);
    return c;
}

static dra_doc *json(dra_arena *a, const char *text)
{
    dra_doc *d = NULL;
    assert_int_equal(dra_doc_parse_json(a, text, strlen(text), &d, NULL),
                     DRA_OK);
    return d;
}

static void must(dra_err err, dra_err want, const dra_kstatus *st,
                 const char *what)
{
    if (err != want)
        fail_msg("%s: %s (want %s): %d %s: %s", what, dra_errname(err),
                 dra_errname(want), st->code, st->reason, st->message);
}

/* The next event that is not a BOOKMARK. */
static dra_err next_change(dra_watch *w, dra_arena *a, dra_watch_event *ev)
{
    dra_err e;
    do
        e = dra_watch_next(w, 10000, a, ev);
    while (e == DRA_OK && ev->type == DRA_WATCH_BOOKMARK);
    return e;
}

static void test_crud_watch(void **state)
{
    dra_gvr classes = DRA_GVR_CLASSES, claims = DRA_GVR_CLAIMS;
    srv s;
    dra_cluster *c;
    dra_watch *w = NULL;
    dra_watch_event ev;
    dra_kstatus st;
    dra_arena a;
    dra_doc *out = NULL, *list = NULL;
    dra_list_opts o;
    (void)state;
    srv_start(&s);
    c = client(&s, s.cr.token);
    dra_arena_init(&a, NULL);
    must(dra_cluster_create(c, &classes, NULL, json(&a, CLASS), &a, &out, &st),
         DRA_OK, &st, "create class");
    must(dra_cluster_create(c, &claims, "default", json(&a, CLAIM), &a, &out,
                            &st), DRA_OK, &st, "create claim");
    must(dra_cluster_create(c, &claims, "default", json(&a, CLAIM), &a, &out,
                            &st), DRA_EEXIST, &st, "create twice");
    assert_string_equal(st.message,
                        "resourceclaims.resource.k8s.io \"c1\" already exists");
    must(dra_cluster_get(c, &claims, "default", "c1", &a, &out, &st), DRA_OK,
         &st, "get");
    assert_string_equal(dra_obj_str(out, "kind"), "ResourceClaim");
    must(dra_cluster_get(c, &claims, "default", "nope", &a, &out, &st),
         DRA_ENOTFOUND, &st, "get missing");
    must(dra_cluster_list(c, &claims, "default", NULL, &a, &list, &st), DRA_OK,
         &st, "list");
    assert_int_equal(dra_doc_get(list, "items")->u.list.n, 1);
    memset(&o, 0, sizeof o);
    o.resource_version = dra_obj_str(list, "metadata.resourceVersion");
    must(dra_cluster_watch(c, &claims, "default", &o, &w, &st), DRA_OK, &st,
         "watch");
    /* update status, seen by the watch */
    {
        dra_doc *obj = NULL;
        dra_err e;
        must(dra_cluster_get(c, &claims, "default", "c1", &a, &obj, &st),
             DRA_OK, &st, "get again");
        dra_doc_map_set(&a, obj, "status",
                        json(&a, "{\"allocation\":{\"devices\":{\"results\":"
                                 "[{\"request\":\"gpu\",\"driver\":"
                                 "\"gpu.nvidia.com\",\"pool\":\"n1\","
                                 "\"device\":\"gpu-0\"}]}}}"));
        e = dra_cluster_update(c, &claims, "default", "c1", "status", obj, &a,
                               &out, &st);
        must(e, DRA_OK, &st, "update status");
        assert_non_null(dra_doc_at(out, "status.allocation.devices"));
        must(next_change(w, &a, &ev), DRA_OK, &st, "watch MODIFIED");
        assert_int_equal(ev.type, DRA_WATCH_MODIFIED);
    }
    must(dra_cluster_delete(c, &claims, "default", "c1", NULL, &a, &out, &st),
         DRA_OK, &st, "delete");
    {
        dra_err e;
        do
            e = next_change(w, &a, &ev);
        while (e == DRA_OK && ev.type != DRA_WATCH_DELETED);
        must(e, DRA_OK, &st, "watch DELETED");
        assert_string_equal(dra_obj_name(ev.object), "c1");
    }
    dra_watch_close(w);
    dra_arena_fini(&a);
    dra_cluster_free(c);
    /* a wrong token: 401 */
    c = client(&s, "not-the-token");
    must(dra_cluster_get(c, &claims, "default", "c1", NULL, NULL, &st),
         DRA_EUNAUTHORIZED, &st, "wrong token");
    assert_int_equal(st.code, 401);
    dra_cluster_free(c);
    srv_stop(&s);
}

/* More events than one read of the watch stream holds, over HTTP/2. */
static void test_watch_backlog(void **state)
{
    srv s;
    dra_cluster *c;
    (void)state;
    srv_start(&s);
    c = client(&s, s.cr.token);
    watch_backlog(c, "default");
    dra_cluster_free(c);
    srv_stop(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crud_watch),
        cmocka_unit_test(test_watch_backlog),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
