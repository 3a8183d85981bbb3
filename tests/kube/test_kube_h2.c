/* The HTTP/2 transport (dra_kube_h2_cluster_new) against the scripted
 * nghttp2 + GnuTLS server of h2_server.c on 127.0.0.1, certificates made
 * at test time by dra_apiserver_creds_load: every verb's :method, :path
 * and headers, error mapping, bearer token, token file rotation, client
 * certificates, CA mismatch, tls-server-name, a server without h2,
 * concurrency on one connection, watches (split lines, timeout, cancel,
 * RST, connection loss, flow control), connection loss mid-request,
 * GOAWAY retry, oversized answers, request timeouts, free with streams
 * open. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dra_test.h"
#include "dra/kube.h"
#include "h2_server.h"

#define BIG ((64u << 20) + 1)

typedef struct fx {
    char dir[64], dir2[64];
    dra_apiserver_creds cr, other; /* other: an unrelated CA */
    ts_server *s;
    int goaways; /* GOAWAYs still to send (under the server lock) */
} fx;

static fx F;

static const char not_found[] =
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
    "\"message\":\"pods \\\"x\\\" not found\",\"reason\":\"NotFound\","
    "\"code\":404}";
static const char exists[] =
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
    "\"message\":\"already there\",\"reason\":\"AlreadyExists\",\"code\":409}";

static const char expired[] =
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
    "\"message\":\"too old resource version\",\"reason\":\"Expired\","
    "\"code\":410}";

/* /err/NNN answers NNN (a Status for 404 and 409, text otherwise),
 * watches are held (refused with 410 in namespace gone), /slow never answers, /big answers 64 MiB + 1, /drop
 * cuts the connection, /goaway is refused by GOAWAY while f->goaways;
 * anything else echoes the method as an object. */
static void handler(ts_server *s, ts_stream *st, void *ud)
{
    fx *f = ud;
    char buf[256];
    if (strncmp(st->path, "/err/", 5) == 0) {
        int code = atoi(st->path + 5);
        const char *b = code == 404 ? not_found : code == 409 ? exists : "oops";
        ts_respond(st, code, code == 4090 ? NULL : b, strlen(b));
    } else if (strstr(st->path, "/namespaces/gone/")) {
        ts_respond(st, 410, expired, strlen(expired));
    } else if (strstr(st->path, "watch=true")) {
        ts_hold(s, st);
    } else if (strcmp(st->path, "/slow") == 0) {
        /* no answer */
    } else if (strcmp(st->path, "/big") == 0) {
        char *p = dra_malloc(NULL, BIG);
        memset(p, ' ', BIG);
        ts_respond(st, 200, p, BIG);
        dra_free(NULL, p);
    } else if (strcmp(st->path, "/drop") == 0) {
        ts_drop(st);
    } else if (strcmp(st->path, "/goaway") == 0 && f->goaways > 0) {
        f->goaways--;
        ts_goaway_in(st, st->id - 2);
    } else {
        snprintf(buf, sizeof buf,
                 "{\"kind\":\"Echo\",\"metadata\":{\"name\":\"x\"},"
                 "\"method\":\"%s\",\"n\":%zu}", st->method, st->body.len);
        ts_respond(st, 200, buf, strlen(buf));
    }
}

static int setup(void **state)
{
    dra_diag d;
    (void)state;
    dra_diag_init(&d, NULL);
    snprintf(F.dir, sizeof F.dir, "/tmp/dra-h2-XXXXXX");
    snprintf(F.dir2, sizeof F.dir2, "/tmp/dra-h2-XXXXXX");
    if (!mkdtemp(F.dir) || !mkdtemp(F.dir2) ||
        dra_apiserver_creds_load(F.dir, NULL, &F.cr, &d) != DRA_OK ||
        dra_apiserver_creds_load(F.dir2, NULL, &F.other, &d) != DRA_OK)
        fail_msg("creds: %s", dra_diag_first(&d));
    dra_diag_fini(&d);
    return 0;
}

static int teardown(void **state)
{
    char cmd[200];
    (void)state;
    dra_apiserver_creds_fini(&F.cr);
    dra_apiserver_creds_fini(&F.other);
    snprintf(cmd, sizeof cmd, "rm -rf %s %s", F.dir, F.dir2);
    return system(cmd) == 0 ? 0 : -1;
}

static int srv_up(void **state)
{
    (void)state;
    F.s = ts_start(&F.cr, 1, handler, &F);
    return F.s ? 0 : -1;
}

static int srv_down(void **state)
{
    (void)state;
    ts_stop(F.s);
    F.s = NULL;
    return 0;
}

static void base_cfg(dra_kube_config *cfg)
{
    dra_kube_config_init(cfg, NULL);
    cfg->server = dra_arena_sprintf(&cfg->arena, "https://127.0.0.1:%d",
                                    ts_port(F.s));
    cfg->ca_data = F.cr.ca_cert;
    cfg->ca_len = strlen(F.cr.ca_cert);
    cfg->token = "token-one";
}

static dra_cluster *connect_cfg(dra_kube_config *cfg)
{
    dra_cluster *c = NULL;
    dra_diag d;
    dra_diag_init(&d, NULL);
    if (dra_kube_h2_cluster_new(cfg, NULL, &c, &d) != DRA_OK)
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

static dra_err get(dra_cluster *c, const char *path, dra_kstatus *st)
{
    dra_cluster_req req = {"GET", path, NULL, NULL, NULL, 0};
    dra_arena a;
    dra_err e;
    dra_arena_init(&a, NULL);
    e = dra_cluster_do(c, &req, &a, NULL, st);
    dra_arena_fini(&a);
    return e;
}

/* Copies the last request's fields out under the server lock. */
static ts_stream last(void)
{
    ts_stream st;
    ts_lock(F.s);
    st = ts_stats_of(F.s)->last;
    ts_unlock(F.s);
    return st;
}

static int nconn(void)
{
    int n;
    ts_lock(F.s);
    n = ts_stats_of(F.s)->nconn;
    ts_unlock(F.s);
    return n;
}

/* ---- requests -------------------------------------------------------------- */

static void test_verbs(void **state)
{
    static const dra_gvr claims = DRA_GVR("resource.k8s.io", "v1",
                                          "resourceclaims");
    dra_cluster *c = connect_default();
    dra_kstatus st;
    dra_arena a;
    dra_doc *obj, *out = NULL;
    ts_stream l;
    (void)state;
    dra_arena_init(&a, NULL);
    assert_int_equal(nconn(), 0); /* creating does not dial */
    assert_int_equal(dra_cluster_get(c, &claims, "ns", "x", &a, &out, &st),
                     DRA_OK);
    l = last();
    assert_string_equal(l.method, "GET");
    assert_string_equal(l.path,
                        "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/x");
    assert_string_equal(l.accept, "application/json");
    assert_string_equal(l.ua, dra_kube_user_agent());
    assert_string_equal(l.auth, "Bearer token-one");
    assert_string_equal(l.ctype, "");
    assert_string_equal(dra_obj_str(out, "method"), "GET");
    {
        static const char o[] = "{\"metadata\":{\"name\":\"x\"}}";
        assert_int_equal(dra_doc_parse_json(&a, o, strlen(o), &obj, NULL),
                         DRA_OK);
    }
    assert_int_equal(dra_cluster_create(c, &claims, "ns", obj, &a, &out, &st),
                     DRA_OK);
    l = last();
    assert_string_equal(l.method, "POST");
    assert_string_equal(l.path, "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims");
    assert_string_equal(l.ctype, "application/json");
    assert_int_equal(dra_cluster_update(c, &claims, "ns", "x", "status", obj,
                                        &a, &out, &st), DRA_OK);
    l = last();
    assert_string_equal(l.method, "PUT");
    assert_string_equal(l.path, "/apis/resource.k8s.io/v1/namespaces/ns/"
                                "resourceclaims/x/status");
    assert_int_equal(dra_cluster_patch(c, &claims, "ns", "x", NULL,
                                       DRA_PATCH_MERGE, "{\"a\":1}", 7, NULL,
                                       &a, &out, &st), DRA_OK);
    l = last();
    assert_string_equal(l.method, "PATCH");
    assert_string_equal(l.ctype, "application/merge-patch+json");
    assert_int_equal(dra_cluster_delete(c, &claims, "ns", "x", NULL, &a, &out,
                                        &st), DRA_OK);
    l = last();
    assert_string_equal(l.method, "DELETE");
    {
        dra_list_opts o = {.label_selector = "a=b", .limit = 5};
        assert_int_equal(dra_cluster_list(c, &claims, NULL, &o, &a, &out, &st),
                         DRA_OK);
        l = last();
        assert_non_null(strstr(l.path, "/apis/resource.k8s.io/v1/resourceclaims?"));
        assert_non_null(strstr(l.path, "labelSelector=a%3Db"));
        assert_non_null(strstr(l.path, "limit=5"));
    }
    {
        dra_cluster_req req = {"POST", "/body", NULL, "text/plain", "hello", 5};
        assert_int_equal(dra_cluster_do(c, &req, &a, &out, &st), DRA_OK);
        l = last();
        assert_string_equal(l.ctype, "text/plain");
        assert_int_equal(dra_doc_get(out, "n")->u.i, 5);
    }
    assert_int_equal(nconn(), 1);
    dra_arena_fini(&a);
    dra_cluster_free(c);
}

static void test_errors(void **state)
{
    dra_cluster *c = connect_default();
    dra_kstatus st;
    (void)state;
    assert_int_equal(get(c, "/err/404", &st), DRA_ENOTFOUND);
    assert_int_equal(st.code, 404);
    assert_string_equal(st.reason, "NotFound");
    assert_string_equal(st.message, "pods \"x\" not found");
    assert_int_equal(get(c, "/err/409", &st), DRA_EEXIST);
    assert_string_equal(st.reason, "AlreadyExists");
    assert_int_equal(get(c, "/err/500", &st), DRA_EUNAVAILABLE);
    assert_int_equal(st.code, 500);
    assert_int_equal(get(c, "/err/403", &st), DRA_EFORBIDDEN);
    assert_int_equal(get(c, "/err/422", &st), DRA_EINVALID);
    assert_int_equal(get(c, "/err/504", &st), DRA_ETIMEOUT);
    {
        dra_cluster_req req = {"POST", "/err/4090", NULL, NULL, "{}", 2};
        assert_int_equal(dra_cluster_do(c, &req, NULL, NULL, &st), DRA_EIO);
    }
    /* an answer larger than 64 MiB fails cleanly, the connection lives */
    assert_int_equal(get(c, "/big", &st), DRA_EIO);
    assert_non_null(strstr(st.message, "larger than"));
    assert_int_equal(get(c, "/ok", &st), DRA_OK);
    assert_int_equal(nconn(), 1);
    dra_cluster_free(c);
}

static void test_auth(void **state)
{
    char tf[128];
    FILE *f;
    dra_kube_config cfg;
    dra_cluster *c;
    dra_kstatus st;
    (void)state;
    /* token file, re-read when it changes */
    snprintf(tf, sizeof tf, "%s/tok", F.dir);
    f = fopen(tf, "w");
    fputs("file-one\n", f);
    fclose(f);
    base_cfg(&cfg);
    cfg.token_file = tf;
    c = connect_cfg(&cfg);
    assert_int_equal(get(c, "/a", &st), DRA_OK);
    assert_string_equal(last().auth, "Bearer file-one");
    f = fopen(tf, "w");
    fputs("file-two-longer\n", f);
    fclose(f);
    assert_int_equal(get(c, "/a", &st), DRA_OK);
    assert_string_equal(last().auth, "Bearer file-two-longer");
    dra_cluster_free(c);
    /* client certificate from data, no token */
    base_cfg(&cfg);
    cfg.token = NULL;
    cfg.cert_data = F.cr.client_cert;
    cfg.cert_len = strlen(F.cr.client_cert);
    cfg.key_data = F.cr.client_key;
    cfg.key_len = strlen(F.cr.client_key);
    c = connect_cfg(&cfg);
    assert_int_equal(get(c, "/a", &st), DRA_OK);
    assert_string_equal(last().auth, "");
    assert_int_equal(last().client_cert, 1);
    dra_cluster_free(c);
    /* basic auth */
    base_cfg(&cfg);
    cfg.token = NULL;
    cfg.username = "admin";
    cfg.password = "secret";
    c = connect_cfg(&cfg);
    assert_int_equal(get(c, "/a", &st), DRA_OK);
    assert_string_equal(last().auth, "Basic YWRtaW46c2VjcmV0");
    dra_cluster_free(c);
}

static void test_tls(void **state)
{
    dra_kube_config cfg;
    dra_cluster *c;
    dra_kstatus st;
    dra_diag d;
    (void)state;
    /* a CA that did not sign the server's certificate */
    base_cfg(&cfg);
    cfg.ca_data = F.other.ca_cert;
    cfg.ca_len = strlen(F.other.ca_cert);
    c = connect_cfg(&cfg);
    assert_int_equal(get(c, "/a", &st), DRA_EIO);
    assert_int_equal(st.code, 0);
    assert_non_null(strstr(st.message, "certificate"));
    dra_cluster_free(c);
    /* ... which insecure-skip-tls-verify ignores */
    base_cfg(&cfg);
    cfg.ca_data = NULL;
    cfg.ca_len = 0;
    cfg.insecure = 1;
    c = connect_cfg(&cfg);
    assert_int_equal(get(c, "/a", &st), DRA_OK);
    dra_cluster_free(c);
    /* tls-server-name: localhost is in the certificate, another is not */
    base_cfg(&cfg);
    cfg.tls_server_name = "localhost";
    c = connect_cfg(&cfg);
    assert_int_equal(get(c, "/a", &st), DRA_OK);
    dra_cluster_free(c);
    base_cfg(&cfg);
    cfg.tls_server_name = "wrong.example";
    c = connect_cfg(&cfg);
    assert_int_equal(get(c, "/a", &st), DRA_EIO);
    assert_non_null(strstr(st.message, "certificate"));
    dra_cluster_free(c);
    /* http:// is refused at creation; an unreadable CA file too */
    dra_diag_init(&d, NULL);
    base_cfg(&cfg);
    cfg.server = "http://127.0.0.1:1";
    assert_int_equal(dra_kube_h2_cluster_new(&cfg, NULL, &c, &d), DRA_EINVAL);
    assert_non_null(strstr(dra_diag_first(&d), "https"));
    dra_diag_clear(&d);
    cfg.server = "https://127.0.0.1:1";
    cfg.ca_data = NULL;
    cfg.ca_len = 0;
    cfg.ca_file = "/nonexistent/ca.crt";
    assert_int_equal(dra_kube_h2_cluster_new(&cfg, NULL, &c, &d), DRA_EIO);
    dra_kube_config_fini(&cfg);
    dra_diag_fini(&d);
    /* nothing listens: the cluster is made, the request fails */
    base_cfg(&cfg);
    cfg.server = "https://127.0.0.1:1";
    c = connect_cfg(&cfg);
    assert_int_equal(get(c, "/a", &st), DRA_EIO);
    assert_non_null(strstr(st.message, "connect"));
    dra_cluster_free(c);
}

static void test_no_h2(void **state)
{
    ts_server *h1 = ts_start(&F.cr, 0, handler, &F);
    dra_kube_config cfg;
    dra_cluster *c;
    dra_kstatus st;
    (void)state;
    base_cfg(&cfg);
    cfg.server = dra_arena_sprintf(&cfg.arena, "https://127.0.0.1:%d",
                                   ts_port(h1));
    c = connect_cfg(&cfg);
    assert_int_equal(get(c, "/a", &st), DRA_EIO);
    assert_non_null(strstr(st.message, "does not speak HTTP/2"));
    dra_cluster_free(c);
    ts_stop(h1);
}

typedef struct worker {
    dra_cluster *c;
    int ok;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    dra_kstatus st;
    for (int i = 0; i < 8; i++)
        w->ok += get(w->c, "/x", &st) == DRA_OK;
    return NULL;
}

static void test_concurrent(void **state)
{
    dra_cluster *c = connect_default();
    pthread_t t[8];
    worker w[8];
    int ok = 0;
    (void)state;
    for (int i = 0; i < 8; i++) {
        w[i] = (worker){c, 0};
        pthread_create(&t[i], NULL, work, &w[i]);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        ok += w[i].ok;
    }
    assert_int_equal(ok, 64);
    assert_int_equal(nconn(), 1);
    dra_cluster_free(c);
}

static void test_timeout_drop_goaway(void **state)
{
    dra_kube_config cfg;
    dra_cluster *c;
    dra_kstatus st;
    (void)state;
    base_cfg(&cfg);
    cfg.timeout_ms = 300;
    c = connect_cfg(&cfg);
    assert_int_equal(get(c, "/slow", &st), DRA_ETIMEOUT);
    assert_int_equal(get(c, "/a", &st), DRA_OK); /* the same connection */
    assert_int_equal(nconn(), 1);
    /* the connection drops under a request: an error, then a new one */
    assert_int_equal(get(c, "/drop", &st), DRA_EIO);
    assert_non_null(strstr(st.message, "Get \"https://127.0.0.1:"));
    assert_int_equal(get(c, "/a", &st), DRA_OK);
    assert_int_equal(nconn(), 2);
    /* GOAWAY before the stream was processed: sent again, once */
    ts_lock(F.s);
    F.goaways = 1;
    ts_unlock(F.s);
    assert_int_equal(get(c, "/goaway", &st), DRA_OK);
    assert_int_equal(nconn(), 3);
    /* every GOAWAY: twice unprocessed is an error */
    ts_lock(F.s);
    F.goaways = 2;
    ts_unlock(F.s);
    assert_int_equal(get(c, "/goaway", &st), DRA_EIO);
    ts_lock(F.s);
    F.goaways = 0;
    ts_unlock(F.s);
    assert_int_equal(get(c, "/a", &st), DRA_OK);
    dra_cluster_free(c);
}

/* ---- watches ------------------------------------------------------------------- */

static const dra_gvr pods = DRA_GVR("", "v1", "pods");

static dra_watch *open_watch(dra_cluster *c)
{
    dra_watch *w = NULL;
    dra_kstatus st;
    assert_int_equal(dra_cluster_watch(c, &pods, "ns", NULL, &w, &st), DRA_OK);
    return w;
}

static void send_str(const char *s) { assert_true(ts_send(F.s, s, strlen(s))); }

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

static void test_watch(void **state)
{
    dra_cluster *c = connect_default();
    dra_watch *w = open_watch(c);
    dra_watch_event ev;
    dra_arena a;
    (void)state;
    dra_arena_init(&a, NULL);
    assert_non_null(strstr(last().path, "/api/v1/namespaces/ns/pods?"));
    /* one event split over three DATA frames, then two in one */
    send_str("{\"type\":\"ADDED\",\"object\":{\"metadata\":");
    send_str("{\"name\":\"p1\",\"resourceVersion\":\"5\"}");
    send_str("}}\n");
    assert_int_equal(dra_watch_next(w, 5000, &a, &ev), DRA_OK);
    assert_int_equal(ev.type, DRA_WATCH_ADDED);
    assert_string_equal(dra_obj_name(ev.object), "p1");
    send_str("{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"p1\"}}}\n"
             "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"p1\"}}}\n");
    assert_int_equal(dra_watch_next(w, 5000, &a, &ev), DRA_OK);
    assert_int_equal(ev.type, DRA_WATCH_MODIFIED);
    assert_int_equal(dra_watch_next(w, 5000, &a, &ev), DRA_OK);
    assert_int_equal(ev.type, DRA_WATCH_DELETED);
    /* nothing within the timeout */
    assert_int_equal(dra_watch_next(w, 200, &a, &ev), DRA_ETIMEOUT);
    /* cancelled from another thread while blocked */
    {
        canceller x = {w, DRA_OK};
        pthread_t t;
        pthread_create(&t, NULL, blocked_next, &x);
        usleep(100000);
        dra_watch_cancel(w);
        pthread_join(t, NULL);
        assert_int_equal(x.err, DRA_ECANCELED);
    }
    dra_watch_close(w);
    /* the server ends the stream: the last event, then EIO */
    w = open_watch(c);
    send_str("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p2\"}}}");
    assert_true(ts_end(F.s));
    assert_int_equal(dra_watch_next(w, 5000, &a, &ev), DRA_OK);
    assert_string_equal(dra_obj_name(ev.object), "p2");
    assert_int_equal(dra_watch_next(w, 5000, &a, &ev), DRA_EIO);
    dra_watch_close(w);
    /* the server resets the stream mid-event: no fragment, EIO */
    w = open_watch(c);
    send_str("{\"type\":\"ADDED\",\"object\":");
    usleep(50000);
    assert_true(ts_rst(F.s));
    assert_int_equal(dra_watch_next(w, 5000, &a, &ev), DRA_EIO);
    dra_watch_close(w);
    /* a refusal comes as the mapped error, with the server's Status */
    {
        dra_watch *w2 = NULL;
        dra_kstatus st;
        assert_int_equal(dra_cluster_watch(c, &pods, "gone", NULL, &w2, &st),
                         DRA_EGONE);
        assert_null(w2);
        assert_int_equal(st.code, 410);
        assert_string_equal(st.reason, "Expired");
    }
    /* closing a watch resets its stream */
    w = open_watch(c);
    dra_watch_close(w);
    for (int i = 0; i < 100; i++) {
        int n;
        ts_lock(F.s);
        n = ts_stats_of(F.s)->ncancel;
        ts_unlock(F.s);
        if (n > 0)
            break;
        usleep(20000);
    }
    ts_lock(F.s);
    assert_true(ts_stats_of(F.s)->ncancel > 0);
    ts_unlock(F.s);
    assert_int_equal(nconn(), 1);
    dra_arena_fini(&a);
    dra_cluster_free(c);
}

static void test_watch_conn_lost(void **state)
{
    dra_cluster *c = connect_default();
    dra_watch *w = open_watch(c);
    dra_watch_event ev;
    dra_kstatus st;
    dra_arena a;
    (void)state;
    dra_arena_init(&a, NULL);
    send_str("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p\"}}}\n");
    assert_int_equal(dra_watch_next(w, 5000, &a, &ev), DRA_OK);
    ts_close_all(F.s);
    assert_int_equal(dra_watch_next(w, 5000, &a, &ev), DRA_EIO);
    dra_watch_close(w);
    assert_int_equal(get(c, "/a", &st), DRA_OK); /* dials again */
    assert_int_equal(nconn(), 2);
    /* GOAWAY with a watch open: the watch goes on, new requests use a
     * new connection, the old one closes when the watch ends */
    w = open_watch(c);
    ts_goaway_all(F.s);
    usleep(100000);
    assert_int_equal(get(c, "/a", &st), DRA_OK);
    assert_int_equal(nconn(), 3);
    dra_watch_close(w);
    dra_arena_fini(&a);
    dra_cluster_free(c);
}

/* A consumer that does not read holds the server back at the stream
 * window: the client does not buffer the 8 MiB the server has. */
static void test_watch_flow_control(void **state)
{
    dra_cluster *c = connect_default();
    dra_watch *w = open_watch(c);
    dra_watch_event ev;
    dra_arena a;
    char *line = dra_malloc(NULL, 1024);
    size_t back = 0;
    int got = 0;
    (void)state;
    dra_arena_init(&a, NULL);
    snprintf(line, 1024, "{\"type\":\"ADDED\",\"object\":{\"metadata\":"
                         "{\"name\":\"p\"},\"pad\":\"%0900d\"}}\n", 0);
    for (int i = 0; i < 8192; i++)
        send_str(line);
    usleep(300000);
    back = ts_backlog(F.s);
    assert_true(back > 6u << 20); /* at most ~2 windows left the server */
    while (got < 8192 && dra_watch_next(w, 5000, &a, &ev) == DRA_OK) {
        got++;
        if (got % 256 == 0)
            dra_arena_reset(&a);
    }
    assert_int_equal(got, 8192);
    assert_int_equal(ts_backlog(F.s), 0);
    dra_free(NULL, line);
    dra_watch_close(w);
    dra_arena_fini(&a);
    dra_cluster_free(c);
}

static void test_free_with_streams_open(void **state)
{
    dra_cluster *c = connect_default();
    dra_watch *w1 = open_watch(c), *w2 = open_watch(c);
    dra_watch_event ev;
    dra_arena a;
    (void)state;
    dra_arena_init(&a, NULL);
    send_str("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p\"}}}\n");
    assert_int_equal(dra_watch_next(w2, 5000, &a, &ev), DRA_OK);
    send_str("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"q\"}}}\n");
    /* closed with data buffered and streams open at the I/O thread */
    dra_watch_close(w1);
    dra_watch_close(w2);
    dra_cluster_free(c);
    dra_arena_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_verbs, srv_up, srv_down),
        cmocka_unit_test_setup_teardown(test_errors, srv_up, srv_down),
        cmocka_unit_test_setup_teardown(test_auth, srv_up, srv_down),
        cmocka_unit_test_setup_teardown(test_tls, srv_up, srv_down),
        cmocka_unit_test_setup_teardown(test_no_h2, srv_up, srv_down),
        cmocka_unit_test_setup_teardown(test_concurrent, srv_up, srv_down),
        cmocka_unit_test_setup_teardown(test_timeout_drop_goaway, srv_up,
                                        srv_down),
        cmocka_unit_test_setup_teardown(test_watch, srv_up, srv_down),
        cmocka_unit_test_setup_teardown(test_watch_conn_lost, srv_up, srv_down),
        cmocka_unit_test_setup_teardown(test_watch_flow_control, srv_up,
                                        srv_down),
        cmocka_unit_test_setup_teardown(test_free_with_streams_open, srv_up,
                                        srv_down),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
