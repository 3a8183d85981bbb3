/* The REST transport against tests/kube/stub_apiserver.py over HTTPS
 * (run by run_rest.sh, which makes the certificates and starts the stub):
 * bearer token and client-certificate authentication, CA checks and
 * tls-server-name, every verb, Status errors, paging, gzip, keep-alive,
 * token file rotation, timeouts, concurrent use, watch streams (chunked
 * events split across chunks, bookmarks, 410 as an ERROR event and as an
 * HTTP answer, timeouts, cancellation) and the reflector relisting after
 * the stub compacts its history. */
#include <pthread.h>
#include <unistd.h>

#include "dra_test.h"
#include "dra/kube.h"

static const char *dir, *port;

static char *path_in(const char *name)
{
    static char buf[8][512];
    static int i;
    char *b = buf[i++ % 8];
    snprintf(b, sizeof buf[0], "%s/%s", dir, name);
    return b;
}

static void base_cfg(dra_kube_config *cfg)
{
    dra_kube_config_init(cfg, NULL);
    cfg->server = dra_arena_sprintf(&cfg->arena, "https://127.0.0.1:%s", port);
    cfg->ca_file = dra_arena_strdup(&cfg->arena, path_in("ca.crt"));
    cfg->token = "token-one";
}

static dra_cluster *connect_cfg(dra_kube_config *cfg)
{
    dra_cluster *c = NULL;
    dra_diag d;
    dra_diag_init(&d, NULL);
    if (dra_kube_cluster_new(cfg, NULL, &c, &d) != DRA_OK)
        fail_msg("cluster_new: %s", dra_diag_first(&d));
    dra_diag_fini(&d);
    dra_kube_config_fini(cfg);
    return c;
}

static dra_cluster *connect_default(void)
{
    dra_kube_config cfg;
    base_cfg(&cfg);
    return connect_cfg(&cfg);
}

static dra_doc *json(dra_arena *a, const char *text)
{
    dra_doc *d = NULL;
    assert_int_equal(dra_doc_parse_json(a, text, strlen(text), &d, NULL),
                     DRA_OK);
    return d;
}

/* The stub's request log. */
static const dra_doc *stub_log(dra_cluster *c, dra_arena *a)
{
    dra_cluster_req req = {"GET", "/debug/log", NULL, NULL, NULL, 0};
    dra_doc *out = NULL;
    assert_int_equal(dra_cluster_do(c, &req, a, &out, NULL), DRA_OK);
    assert_int_equal(out->kind, DRA_DOC_LIST);
    return out;
}

/* The last logged request with |method| and |path|. */
static const dra_doc *logged(const dra_doc *log, const char *method,
                             const char *path)
{
    for (size_t i = log->u.list.n; i-- > 0;) {
        const dra_doc *e = log->u.list.items[i];
        if (strcmp(dra_obj_str(e, "method"), method) == 0 &&
            strcmp(dra_obj_str(e, "path"), path) == 0)
            return e;
    }
    fail_msg("no %s %s in the stub's log", method, path);
    return NULL;
}

static void test_crud(void **state)
{
    dra_cluster *c = connect_default();
    dra_gvr pods = DRA_GVR_PODS;
    dra_arena a;
    dra_kstatus st;
    dra_doc *out = NULL, *obj;
    const dra_doc *log, *e;
    char *stale;
    (void)state;
    dra_arena_init(&a, NULL);
    obj = json(&a, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
                   "{\"name\":\"p1\"},\"spec\":{\"containers\":[]}}");
    assert_int_equal(dra_cluster_create(c, &pods, "crud", obj, &a, &out, &st),
                     DRA_OK);
    assert_int_equal(st.code, 201);
    assert_non_null(dra_obj_uid(out));
    stale = dra_arena_strdup(&a, dra_obj_rv(out));
    assert_int_equal(dra_cluster_create(c, &pods, "crud", obj, &a, &out, &st),
                     DRA_EEXIST);
    assert_string_equal(st.message, "pods \"p1\" already exists");
    assert_int_equal(dra_cluster_get(c, &pods, "crud", "p1", &a, &out, &st),
                     DRA_OK);
    assert_string_equal(dra_obj_namespace(out), "crud");
    /* Update, then a stale update: 409 Conflict with the server's words. */
    assert_int_equal(dra_cluster_update(c, &pods, "crud", "p1", NULL, out, &a,
                                        &out, &st), DRA_OK);
    assert_string_not_equal(dra_obj_rv(out), stale);
    {
        dra_doc *old = json(&a, "{\"metadata\":{\"name\":\"p1\","
                                "\"resourceVersion\":\"1\"}}");
        assert_int_equal(dra_cluster_update(c, &pods, "crud", "p1", NULL, old,
                                            &a, &out, &st), DRA_ECONFLICT);
        assert_string_equal(st.reason, "Conflict");
        assert_non_null(strstr(st.message, "the object has been modified"));
    }
    {
        const char *patch = "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}";
        assert_int_equal(dra_cluster_patch(c, &pods, "crud", "p1", NULL,
                                           DRA_PATCH_MERGE, patch,
                                           strlen(patch), "dra-test", &a, &out,
                                           &st), DRA_OK);
    }
    assert_string_equal(dra_obj_str(out, "metadata.labels.a"), "b");
    assert_int_equal(dra_cluster_patch(c, &pods, "crud", "p1", NULL,
                                       DRA_PATCH_JSON, "[]", 2, NULL, &a, &out,
                                       &st), DRA_EUNSUPPORTED);
    assert_int_equal(dra_cluster_bind(c, "crud", "p1", NULL, "node-7", &st),
                     DRA_OK);
    assert_int_equal(dra_cluster_get(c, &pods, "crud", "p1", &a, &out, &st),
                     DRA_OK);
    assert_string_equal(dra_obj_str(out, "spec.nodeName"), "node-7");
    {
        dra_delete_opts del = {"Background", 0, 0, NULL, NULL};
        assert_int_equal(dra_cluster_delete(c, &pods, "crud", "p1", &del, &a,
                                            &out, &st), DRA_OK);
    }
    assert_int_equal(dra_cluster_get(c, &pods, "crud", "p1", &a, &out, &st),
                     DRA_ENOTFOUND);
    assert_string_equal(st.message, "pods \"p1\" not found");
    /* A path the server does not serve: a plain-text 404. */
    {
        dra_cluster_req req = {"GET", "/apis/nope", NULL, NULL, NULL, 0};
        assert_int_equal(dra_cluster_do(c, &req, &a, &out, &st), DRA_ENOTFOUND);
        assert_string_equal(st.message,
                            "the server could not find the requested resource");
    }

    /* What went over the wire. */
    log = stub_log(c, &a);
    e = logged(log, "POST", "/api/v1/namespaces/crud/pods");
    assert_string_equal(dra_obj_str(e, "ctype"), "application/json");
    assert_string_equal(dra_obj_str(e, "accept"), "application/json");
    assert_string_equal(dra_obj_str(e, "ua"), dra_kube_user_agent());
    assert_non_null(strstr(dra_obj_str(e, "ae"), "gzip"));
    assert_true(dra_doc_get(e, "gzip")->u.b); /* answered gzipped, decoded */
    assert_string_equal(dra_obj_str(e, "who"), "token:token-one");
    e = logged(log, "PATCH", "/api/v1/namespaces/crud/pods/p1");
    assert_string_equal(dra_obj_str(e, "ctype"), "application/json-patch+json");
    e = logged(log, "DELETE", "/api/v1/namespaces/crud/pods/p1");
    assert_non_null(strstr(dra_obj_str(e, "body"),
                           "\"propagationPolicy\":\"Background\""));
    e = logged(log, "POST", "/api/v1/namespaces/crud/pods/p1/binding");
    assert_non_null(strstr(dra_obj_str(e, "body"), "\"name\":\"node-7\""));
    /* Keep-alive: one thread's sequential requests share a connection. */
    {
        int64_t p0 = dra_doc_get(log->u.list.items[log->u.list.n - 2],
                                 "port")->u.i;
        int64_t p1 = dra_doc_get(log->u.list.items[log->u.list.n - 1],
                                 "port")->u.i;
        assert_int_equal(p0, p1);
    }
    dra_arena_fini(&a);
    dra_cluster_free(c);
}

static void test_auth(void **state)
{
    dra_kube_config cfg;
    dra_cluster *c;
    dra_gvr nodes = DRA_GVR_NODES;
    dra_kstatus st;
    dra_arena a;
    dra_doc *out;
    char *pem;
    size_t len;
    (void)state;
    dra_arena_init(&a, NULL);

    /* No credentials: 401 with the server's Status. */
    base_cfg(&cfg);
    cfg.token = NULL;
    c = connect_cfg(&cfg);
    assert_int_equal(dra_cluster_list(c, &nodes, NULL, NULL, &a, &out, &st),
                     DRA_EUNAUTHORIZED);
    assert_string_equal(st.reason, "Unauthorized");
    dra_cluster_free(c);

    /* A client certificate and key given as data, the CA as data too. */
    base_cfg(&cfg);
    cfg.token = NULL;
    pem = dra_test_slurp(path_in("client.crt"), &len);
    cfg.cert_data = dra_arena_strndup(&cfg.arena, pem, len);
    cfg.cert_len = len;
    free(pem);
    pem = dra_test_slurp(path_in("client.key"), &len);
    cfg.key_data = dra_arena_strndup(&cfg.arena, pem, len);
    cfg.key_len = len;
    free(pem);
    pem = dra_test_slurp(path_in("ca.crt"), &len);
    cfg.ca_data = dra_arena_strndup(&cfg.arena, pem, len);
    cfg.ca_len = len;
    cfg.ca_file = "/nonexistent/ca.crt"; /* data wins */
    free(pem);
    c = connect_cfg(&cfg);
    assert_int_equal(dra_cluster_list(c, &nodes, NULL, NULL, &a, &out, &st),
                     DRA_OK);
    assert_string_equal(dra_obj_str(logged(stub_log(c, &a), "GET",
                                           "/api/v1/nodes"), "who"),
                        "cert:dra-client");
    dra_cluster_free(c);

    /* Client certificate files signed by a CA the server does not trust:
     * the handshake fails. */
    base_cfg(&cfg);
    cfg.token = NULL;
    cfg.cert_file = path_in("rogue.crt");
    cfg.key_file = path_in("rogue.key");
    c = connect_cfg(&cfg);
    assert_int_not_equal(dra_cluster_list(c, &nodes, NULL, NULL, &a, &out,
                                          &st), DRA_OK);
    dra_cluster_free(c);

    /* A server certificate from a CA we do not trust. */
    base_cfg(&cfg);
    cfg.ca_file = path_in("other-ca.crt");
    c = connect_cfg(&cfg);
    assert_int_equal(dra_cluster_list(c, &nodes, NULL, NULL, &a, &out, &st),
                     DRA_EIO);
    assert_int_equal(st.code, 0);
    assert_true(strncmp(st.message, "Get \"https://127.0.0.1:", 23) == 0);
    dra_cluster_free(c);
    /* ... which insecure-skip-tls-verify accepts. */
    base_cfg(&cfg);
    cfg.ca_file = NULL;
    cfg.insecure = 1;
    c = connect_cfg(&cfg);
    assert_int_equal(dra_cluster_list(c, &nodes, NULL, NULL, &a, &out, &st),
                     DRA_OK);
    dra_cluster_free(c);

    /* tls-server-name: the certificate names stub.test, not the address
     * we connect to by name. */
    base_cfg(&cfg);
    cfg.server = dra_arena_sprintf(&cfg.arena, "https://localhost:%s/", port);
    cfg.tls_server_name = "stub.test";
    c = connect_cfg(&cfg);
    assert_int_equal(dra_cluster_list(c, &nodes, NULL, NULL, &a, &out, &st),
                     DRA_OK);
    dra_cluster_free(c);
    base_cfg(&cfg);
    cfg.tls_server_name = "wrong.test";
    c = connect_cfg(&cfg);
    assert_int_equal(dra_cluster_list(c, &nodes, NULL, NULL, &a, &out, &st),
                     DRA_EIO);
    dra_cluster_free(c);
    dra_arena_fini(&a);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_token_rotation(void **state)
{
    dra_kube_config cfg;
    dra_cluster *c;
    dra_gvr nodes = DRA_GVR_NODES;
    dra_arena a;
    dra_doc *out;
    dra_kstatus st;
    const char *tf = path_in("client-token");
    (void)state;
    dra_arena_init(&a, NULL);
    write_file(tf, "token-one\n");
    base_cfg(&cfg);
    cfg.token = "stale-static-token";
    cfg.token_file = tf; /* wins over the static token */
    c = connect_cfg(&cfg);
    assert_int_equal(dra_cluster_list(c, &nodes, NULL, NULL, &a, &out, &st),
                     DRA_OK);
    /* The server now wants token-two; the client's file rotates too. */
    write_file(path_in("tokens"), "token-two\n");
    assert_int_equal(dra_cluster_list(c, &nodes, NULL, NULL, &a, &out, &st),
                     DRA_EUNAUTHORIZED);
    write_file(tf, "token-two\n");
    assert_int_equal(dra_cluster_list(c, &nodes, NULL, NULL, &a, &out, &st),
                     DRA_OK);
    write_file(path_in("tokens"), "token-one\n");
    dra_cluster_free(c);
    /* A token file that does not exist fails at creation. */
    {
        dra_diag d;
        dra_cluster *bad = NULL;
        dra_diag_init(&d, NULL);
        base_cfg(&cfg);
        cfg.token = NULL;
        cfg.token_file = path_in("no-such-token");
        assert_int_equal(dra_kube_cluster_new(&cfg, NULL, &bad, &d), DRA_EIO);
        assert_null(bad);
        assert_non_null(strstr(dra_diag_first(&d), "no-such-token"));
        dra_diag_fini(&d);
        dra_kube_config_fini(&cfg);
    }
    dra_arena_fini(&a);
}

static void test_paging_and_errors(void **state)
{
    dra_cluster *c = connect_default();
    dra_gvr slices = DRA_GVR_SLICES;
    dra_arena a;
    dra_kstatus st;
    dra_doc *out;
    const char *rv;
    dra_list_opts o = {0};
    char body[128];
    (void)state;
    dra_arena_init(&a, NULL);
    for (int i = 0; i < 5; i++) {
        snprintf(body, sizeof body, "{\"metadata\":{\"name\":\"s%d\"}}", i);
        assert_int_equal(dra_cluster_create(c, &slices, NULL, json(&a, body),
                                            &a, NULL, &st), DRA_OK);
    }
    o.limit = 2;
    assert_int_equal(dra_cluster_list_all(c, &slices, NULL, &o, &a, &out, &rv,
                                          &st), DRA_OK);
    assert_int_equal(dra_doc_get(out, "items")->u.list.n, 5);
    assert_string_equal(dra_obj_str(dra_doc_get(out, "items")->u.list.items[4],
                                    "kind"), "ResourceSlice");
    assert_non_null(rv);
    /* A client-side rate limit and an HTTP/2 offer (the stub answers
     * HTTP/1.1 through ALPN) change nothing a caller sees. */
    {
        dra_kube_config cfg;
        dra_cluster *lim;
        base_cfg(&cfg);
        cfg.qps = 200;
        cfg.burst = 2;
        cfg.http2 = 1;
        lim = connect_cfg(&cfg);
        for (int i = 0; i < 6; i++)
            assert_int_equal(dra_cluster_get(lim, &slices, NULL, "s1", &a,
                                             &out, &st), DRA_OK);
        dra_cluster_free(lim);
    }
    /* The request timeout. */
    {
        dra_kube_config cfg;
        dra_cluster *slow;
        dra_cluster_req req = {"GET", "/debug/slow", "ms=3000", NULL, NULL, 0};
        base_cfg(&cfg);
        cfg.timeout_ms = 300;
        slow = connect_cfg(&cfg);
        assert_int_equal(dra_cluster_do(slow, &req, &a, &out, &st),
                         DRA_ETIMEOUT);
        assert_non_null(strstr(st.message, "/debug/slow?ms=3000"));
        dra_cluster_free(slow);
    }
    /* Nobody listening. */
    {
        dra_kube_config cfg;
        dra_cluster *gone;
        base_cfg(&cfg);
        cfg.server = "https://127.0.0.1:1";
        gone = connect_cfg(&cfg);
        assert_int_equal(dra_cluster_list(gone, &slices, NULL, NULL, &a, &out,
                                          &st), DRA_EIO);
        assert_true(strncmp(st.message,
                            "Get \"https://127.0.0.1:1/apis/resource.k8s.io/"
                            "v1/resourceslices\": ", 62) == 0);
        {
            dra_watch *w = NULL;
            assert_int_equal(dra_cluster_watch(gone, &slices, NULL, NULL, &w,
                                               &st), DRA_EIO);
            assert_null(w);
            assert_true(strncmp(st.message,
                                "Get \"https://127.0.0.1:1/apis/resource.k8s."
                                "io/v1/resourceslices?watch=true\": ", 73) == 0);
        }
        dra_cluster_free(gone);
    }
    dra_arena_fini(&a);
    dra_cluster_free(c);
}

typedef struct worker {
    dra_cluster *c;
    int id, ok;
    char why[1200]; /* the first failure */
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    dra_gvr claims = DRA_GVR_CLAIMS;
    dra_arena a;
    dra_kstatus st;
    char body[128];
    dra_arena_init(&a, NULL);
    for (int i = 0; i < 15; i++) {
        dra_doc *obj = NULL, *out = NULL;
        dra_err e1, e2 = DRA_OK;
        snprintf(body, sizeof body, "{\"metadata\":{\"name\":\"w%d-%d\"}}",
                 w->id, i);
        dra_doc_parse_json(&a, body, strlen(body), &obj, NULL);
        e1 = dra_cluster_create(w->c, &claims, "par", obj, &a, NULL, &st);
        if (!e1)
            e2 = dra_cluster_get(w->c, &claims, "par", dra_obj_name(obj), &a,
                                 &out, &st);
        if (!e1 && !e2 && strcmp(dra_obj_name(out), dra_obj_name(obj)) == 0)
            w->ok++;
        else if (!w->why[0])
            snprintf(w->why, sizeof w->why, "%s %s: %s", e1 ? "create" : "get",
                     dra_errname(e1 ? e1 : e2), st.message);
        dra_arena_reset(&a);
    }
    dra_arena_fini(&a);
    return NULL;
}

static void test_concurrent(void **state)
{
    dra_cluster *c = connect_default();
    worker w[4];
    pthread_t t[4];
    (void)state;
    memset(w, 0, sizeof w);
    for (int i = 0; i < 4; i++) {
        w[i].c = c;
        w[i].id = i;
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    dra_cluster_free(c);
    for (int i = 0; i < 4; i++)
        if (w[i].ok != 15)
            fail_msg("worker %d: %d of 15; first failure: %s", i, w[i].ok,
                     w[i].why);
}

typedef struct canceller {
    dra_watch *w;
    dra_err err;
} canceller;

static void *blocked_next(void *arg)
{
    canceller *x = arg;
    dra_arena a;
    dra_watch_event ev;
    dra_arena_init(&a, NULL);
    x->err = dra_watch_next(x->w, -1, &a, &ev);
    dra_arena_fini(&a);
    return NULL;
}

/* Next event that is not a bookmark. */
static dra_err next_change(dra_watch *w, dra_arena *a, dra_watch_event *ev)
{
    dra_err err;
    do
        err = dra_watch_next(w, 10000, a, ev);
    while (err == DRA_OK && ev->type == DRA_WATCH_BOOKMARK);
    return err;
}

static void test_watch(void **state)
{
    dra_cluster *c = connect_default();
    dra_gvr claims = DRA_GVR_CLAIMS;
    dra_arena a;
    dra_kstatus st;
    dra_doc *out = NULL;
    dra_watch *w = NULL;
    dra_watch_event ev;
    dra_list_opts o = {0};
    const char *rv;
    (void)state;
    dra_arena_init(&a, NULL);
    assert_int_equal(dra_cluster_list_all(c, &claims, "w", NULL, &a, &out, &rv,
                                          &st), DRA_OK);
    o.resource_version = rv;
    o.allow_bookmarks = 1;
    o.field_selector = "stub=split"; /* each event split over two chunks */
    assert_int_equal(dra_cluster_watch(c, &claims, "w", &o, &w, &st), DRA_OK);
    assert_int_equal(dra_watch_next(w, 10000, &a, &ev), DRA_OK);
    assert_int_equal(ev.type, DRA_WATCH_BOOKMARK);
    /* Nothing yet: a timeout, and the stream stays usable. */
    assert_int_equal(dra_watch_next(w, 50, &a, &ev), DRA_ETIMEOUT);
    assert_int_equal(dra_cluster_create(c, &claims, "w",
                                        json(&a, "{\"metadata\":{\"name\":"
                                                 "\"c1\"}}"), &a, &out, &st),
                     DRA_OK);
    assert_int_equal(dra_cluster_patch(c, &claims, "w", "c1", NULL,
                                       DRA_PATCH_MERGE, "{\"spec\":{}}", 11,
                                       NULL, &a, &out, &st), DRA_OK);
    assert_int_equal(dra_cluster_delete(c, &claims, "w", "c1", NULL, &a, &out,
                                        &st), DRA_OK);
    assert_int_equal(next_change(w, &a, &ev), DRA_OK);
    assert_int_equal(ev.type, DRA_WATCH_ADDED);
    assert_string_equal(dra_obj_name(ev.object), "c1");
    assert_int_equal(next_change(w, &a, &ev), DRA_OK);
    assert_int_equal(ev.type, DRA_WATCH_MODIFIED);
    assert_int_equal(next_change(w, &a, &ev), DRA_OK);
    assert_int_equal(ev.type, DRA_WATCH_DELETED);
    rv = dra_arena_strdup(&a, ev.resource_version);
    /* Cancelled from another thread while blocked. */
    {
        canceller x = {w, DRA_OK};
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, blocked_next, &x), 0);
        usleep(100000); /* let it block; the result does not depend on it */
        dra_watch_cancel(w);
        pthread_join(t, NULL);
        assert_int_equal(x.err, DRA_ECANCELED);
    }
    dra_watch_close(w);

    /* "" lists first: synthetic ADDED for what exists. */
    assert_int_equal(dra_cluster_create(c, &claims, "w",
                                        json(&a, "{\"metadata\":{\"name\":"
                                                 "\"c2\"}}"), &a, &out, &st),
                     DRA_OK);
    assert_int_equal(dra_cluster_watch(c, &claims, "w", NULL, &w, &st), DRA_OK);
    assert_int_equal(dra_watch_next(w, 10000, &a, &ev), DRA_OK);
    assert_int_equal(ev.type, DRA_WATCH_ADDED);
    assert_string_equal(dra_obj_name(ev.object), "c2");
    dra_watch_close(w);

    /* Compacted history: 200 + ERROR 410, and an HTTP 410. */
    {
        dra_cluster_req req = {"POST", "/debug/expire", NULL, NULL, "{}", 2};
        assert_int_equal(dra_cluster_do(c, &req, &a, &out, &st), DRA_OK);
    }
    o.resource_version = rv;
    o.field_selector = NULL;
    assert_int_equal(dra_cluster_watch(c, &claims, "w", &o, &w, &st), DRA_OK);
    assert_int_equal(dra_watch_next(w, 10000, &a, &ev), DRA_OK);
    assert_int_equal(ev.type, DRA_WATCH_ERROR);
    assert_int_equal(dra_watch_event_err(&ev, &st), DRA_EGONE);
    assert_string_equal(st.reason, "Expired");
    /* the stub ends the stream after the error */
    assert_int_equal(dra_watch_next(w, 10000, &a, &ev), DRA_EIO);
    dra_watch_close(w);
    o.resource_version = "gone-http";
    assert_int_equal(dra_cluster_watch(c, &claims, "w", &o, &w, &st),
                     DRA_EGONE);
    assert_null(w);
    assert_int_equal(st.code, 410);
    /* timeoutSeconds: the server ends the stream, the client sees EIO. */
    o.resource_version = "0";
    o.timeout_seconds = 1;
    assert_int_equal(dra_cluster_watch(c, &claims, "w", &o, &w, &st), DRA_OK);
    {
        dra_err err;
        do
            err = dra_watch_next(w, 10000, &a, &ev);
        while (err == DRA_OK);
        assert_int_equal(err, DRA_EIO);
    }
    dra_watch_close(w);

    /* A server that holds its headers back past the request timeout: the
     * watch opens anyway; its events, or its refusal as an ERROR event,
     * come through next. */
    {
        dra_kube_config cfg;
        dra_cluster *late;
        base_cfg(&cfg);
        cfg.timeout_ms = 1500; /* enough to connect, even under valgrind */
        late = connect_cfg(&cfg);
        o.timeout_seconds = 0;
        o.resource_version = "late";
        assert_int_equal(dra_cluster_watch(late, &claims, "w", &o, &w, &st),
                         DRA_OK);
        assert_int_equal(dra_watch_next(w, 10000, &a, &ev), DRA_OK);
        assert_int_equal(ev.type, DRA_WATCH_ADDED);
        assert_string_equal(dra_obj_name(ev.object), "c2");
        dra_watch_close(w);
        o.resource_version = "late-gone";
        assert_int_equal(dra_cluster_watch(late, &claims, "w", &o, &w, &st),
                         DRA_OK);
        assert_int_equal(dra_watch_next(w, 10000, &a, &ev), DRA_OK);
        assert_int_equal(ev.type, DRA_WATCH_ERROR);
        assert_int_equal(dra_watch_event_err(&ev, &st), DRA_EGONE);
        assert_int_equal(st.code, 410);
        assert_string_equal(st.message, "late gone");
        assert_int_equal(dra_watch_next(w, 10000, &a, &ev), DRA_EIO);
        dra_watch_close(w);
        dra_cluster_free(late);
    }
    dra_arena_fini(&a);
    dra_cluster_free(c);
}

/* ---- reflector end to end -------------------------------------------------- */

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

static void wait_seen(seen *s, int n, int synced)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30;
    pthread_mutex_lock(&s->mu);
    while (s->n < n || s->synced < synced)
        if (pthread_cond_timedwait(&s->cv, &s->mu, &until) != 0) {
            int got = s->n, sy = s->synced;
            pthread_mutex_unlock(&s->mu);
            fail_msg("waited 30 s: %d events, %d syncs", got, sy);
        }
    pthread_mutex_unlock(&s->mu);
}

static void test_reflector(void **state)
{
    dra_cluster *c = connect_default(), *c2 = connect_default();
    dra_gvr nodes = DRA_GVR_NODES;
    dra_reflector_opts ro = {DRA_GVR_NODES, NULL, NULL, NULL, on_event,
                             on_synced, NULL};
    dra_reflector *r = NULL;
    dra_arena a;
    seen s;
    (void)state;
    memset(&s, 0, sizeof s);
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.cv, NULL);
    ro.ud = &s;
    dra_arena_init(&a, NULL);
    assert_int_equal(dra_cluster_create(c2, &nodes, NULL,
                                        json(&a, "{\"metadata\":{\"name\":"
                                                 "\"n1\"}}"), &a, NULL, NULL),
                     DRA_OK);
    assert_int_equal(dra_reflector_start(c, &ro, &r), DRA_OK);
    wait_seen(&s, 1, 1);
    assert_int_equal(dra_cluster_create(c2, &nodes, NULL,
                                        json(&a, "{\"metadata\":{\"name\":"
                                                 "\"n2\"}}"), &a, NULL, NULL),
                     DRA_OK);
    wait_seen(&s, 2, 1);
    /* n1 goes and the history is compacted: the open watch gets ERROR
     * 410 and the reflector relists; n1's deletion still arrives, once. */
    assert_int_equal(dra_cluster_delete(c2, &nodes, NULL, "n1", NULL, &a, NULL,
                                        NULL), DRA_OK);
    {
        dra_cluster_req req = {"POST", "/debug/expire", NULL, NULL, "{}", 2};
        assert_int_equal(dra_cluster_do(c2, &req, &a, NULL, NULL), DRA_OK);
    }
    wait_seen(&s, 3, 1);
    assert_int_equal(dra_cluster_create(c2, &nodes, NULL,
                                        json(&a, "{\"metadata\":{\"name\":"
                                                 "\"n3\"}}"), &a, NULL, NULL),
                     DRA_OK);
    wait_seen(&s, 4, 1);
    dra_reflector_stop(r); /* cancels the blocked watch */
    assert_string_equal(s.log[0], "ADDED n1");
    assert_string_equal(s.log[1], "ADDED n2");
    assert_string_equal(s.log[2], "DELETED n1");
    assert_string_equal(s.log[3], "ADDED n3");
    assert_int_equal(s.n, 4);
    dra_arena_fini(&a);
    dra_cluster_free(c);
    dra_cluster_free(c2);
    pthread_cond_destroy(&s.cv);
    pthread_mutex_destroy(&s.mu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crud),
        cmocka_unit_test(test_auth),
        cmocka_unit_test(test_token_rotation),
        cmocka_unit_test(test_paging_and_errors),
        cmocka_unit_test(test_concurrent),
        cmocka_unit_test(test_watch),
        cmocka_unit_test(test_reflector),
    };
    dir = getenv("STUB_DIR");
    port = getenv("STUB_PORT");
    if (!dir || !port) {
        fprintf(stderr, "run through run_rest.sh (STUB_DIR, STUB_PORT)\n");
        return 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
