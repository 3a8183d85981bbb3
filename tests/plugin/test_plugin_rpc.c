/*
 * tests/plugin/test_plugin_rpc.c: the gRPC layer of module plugin on
 * its own: the protobuf encoders and decoders (round trips, malformed
 * bytes, invalid UTF-8, v1beta1 = v1 on the wire), and the unary server
 * adapter with the public client over a unix socket and TCP (answers,
 * error statuses, unknown methods, oversized messages, a stopped server).
 */
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dra_test.h"
#include "plugin/plugin_int.h"

/* ---- protobuf layer ------------------------------------------------------ */

static void test_claims_round_trip(void **state)
{
    (void)state;
    dra_arena a;
    dra_arena_init(&a, NULL);
    dra_buf b;
    dra_buf_init(&b, NULL);
    dra_plugin_claim_ref in[2] = {{"default", "uid-1", "claim-a"},
                                  {"team", "uid-2", "claim-b"}};
    assert_int_equal(plugin_pb_encode_claims(&a, in, 2, &b), DRA_OK);
    dra_plugin_claim_ref *out;
    size_t n;
    char err[128];
    assert_int_equal(plugin_pb_decode_claims(&a, (const uint8_t *)b.p, b.len, &out,
                                             &n, err, sizeof(err)),
                     DRA_OK);
    assert_int_equal(n, 2);
    assert_string_equal(out[1].namespace_, "team");
    assert_string_equal(out[1].uid, "uid-2");
    assert_string_equal(out[1].name, "claim-b");
    /* An empty request (the liveness probe's) decodes to no claims. */
    assert_int_equal(plugin_pb_decode_claims(&a, (const uint8_t *)"", 0, &out, &n,
                                             err, sizeof(err)),
                     DRA_OK);
    assert_int_equal(n, 0);
    dra_buf_fini(&b);
    dra_arena_fini(&a);
}

static void test_claims_malformed(void **state)
{
    (void)state;
    dra_arena a;
    dra_arena_init(&a, NULL);
    dra_plugin_claim_ref *out;
    size_t n;
    char err[128];
    /* field 1, length 5, but only 2 bytes follow */
    static const uint8_t trunc[] = {0x0a, 0x05, 0x0a, 0x01};
    assert_int_equal(plugin_pb_decode_claims(&a, trunc, sizeof(trunc), &out, &n, err,
                                             sizeof(err)),
                     DRA_EPARSE);
    /* claims[0].namespace = "\xff": not UTF-8 */
    static const uint8_t bad_utf8[] = {0x0a, 0x03, 0x0a, 0x01, 0xff};
    assert_int_equal(plugin_pb_decode_claims(&a, bad_utf8, sizeof(bad_utf8), &out, &n,
                                             err, sizeof(err)),
                     DRA_EPARSE);
    assert_non_null(strstr(err, "UTF-8"));
    /* a varint that never ends */
    static const uint8_t varint[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                     0xff, 0xff, 0xff, 0xff, 0xff};
    assert_int_equal(plugin_pb_decode_claims(&a, varint, sizeof(varint), &out, &n, err,
                                             sizeof(err)),
                     DRA_EPARSE);
    dra_arena_fini(&a);
}

static void test_prepare_resp_round_trip(void **state)
{
    (void)state;
    dra_arena a;
    dra_arena_init(&a, NULL);
    dra_buf b;
    dra_buf_init(&b, NULL);
    const char *reqs[] = {"gpu"};
    const char *ids[] = {"k8s.gpu.nvidia.com/claim=uid-1-gpu-0"};
    dra_plugin_device dev = {reqs, 1, "node-a", "gpu-0", ids, 1};
    dra_plugin_claim_result in[2] = {{"uid-1", &dev, 1, NULL},
                                     {"uid-2", NULL, 0, "it failed"}};
    assert_int_equal(plugin_pb_encode_prepare_resp(&a, in, 2, &b), DRA_OK);
    dra_plugin_claim_result *out;
    size_t n;
    assert_int_equal(plugin_pb_decode_prepare_resp(&a, (const uint8_t *)b.p, b.len,
                                                   &out, &n),
                     DRA_OK);
    assert_int_equal(n, 2);
    assert_string_equal(out[0].uid, "uid-1");
    assert_string_equal(out[0].error, "");
    assert_int_equal(out[0].n_devices, 1);
    assert_string_equal(out[0].devices[0].device_name, "gpu-0");
    assert_string_equal(out[0].devices[0].pool_name, "node-a");
    assert_string_equal(out[0].devices[0].request_names[0], "gpu");
    assert_string_equal(out[0].devices[0].cdi_device_ids[0], ids[0]);
    assert_string_equal(out[1].error, "it failed");

    dra_buf_reset(&b);
    assert_int_equal(plugin_pb_encode_unprepare_resp(&a, in, 2, &b), DRA_OK);
    assert_int_equal(plugin_pb_decode_unprepare_resp(&a, (const uint8_t *)b.p, b.len,
                                                     &out, &n),
                     DRA_OK);
    assert_int_equal(n, 2);
    assert_string_equal(out[1].uid, "uid-2");
    assert_string_equal(out[1].error, "it failed");
    dra_buf_fini(&b);
    dra_arena_fini(&a);
}

static void test_info_round_trip(void **state)
{
    (void)state;
    dra_arena a;
    dra_arena_init(&a, NULL);
    dra_buf b;
    dra_buf_init(&b, NULL);
    const char *vers[] = {DRA_PLUGIN_SERVICE_V1, DRA_PLUGIN_SERVICE_V1BETA1};
    dra_plugin_info in = {"DRAPlugin", "gpu.nvidia.com", "/x/dra.sock", vers, 2};
    assert_int_equal(plugin_pb_encode_info(&a, &in, &b), DRA_OK);
    dra_plugin_info out;
    assert_int_equal(plugin_pb_decode_info(&a, (const uint8_t *)b.p, b.len, &out),
                     DRA_OK);
    assert_string_equal(out.type, "DRAPlugin");
    assert_string_equal(out.endpoint, "/x/dra.sock");
    assert_int_equal(out.n_supported_versions, 2);
    assert_string_equal(out.supported_versions[1], "v1beta1.DRAPlugin");
    dra_buf_fini(&b);
    dra_arena_fini(&a);
}

/* ---- server + client ------------------------------------------------------ */

static void echo_handler(void *ud, plugin_rpc *rpc)
{
    (void)ud;
    dra_arena a;
    dra_arena_init(&a, NULL);
    if (strcmp(rpc->method, PLUGIN_METHOD_V1_PREPARE) == 0 ||
        strcmp(rpc->method, PLUGIN_METHOD_V1BETA1_PREPARE) == 0) {
        dra_plugin_claim_ref *claims;
        size_t n;
        if (plugin_pb_decode_claims(&a, rpc->req, rpc->req_len, &claims, &n, rpc->msg,
                                    sizeof(rpc->msg)) != DRA_OK) {
            rpc->code = DRA_GRPC_INVALID_ARGUMENT;
        } else {
            /* Answer every claim but one named "skip": the client must
             * report it as left out. */
            dra_plugin_claim_result *res = dra_arena_array(&a, n + 1, sizeof(*res));
            size_t k = 0;
            for (size_t i = 0; i < n; i++) {
                if (strcmp(claims[i].name, "skip") == 0)
                    continue;
                res[k].uid = claims[i].uid;
                res[k++].error = strcmp(claims[i].name, "bad") == 0 ? "nope" : NULL;
            }
            plugin_pb_encode_prepare_resp(&a, res, k, rpc->resp);
        }
    } else if (strcmp(rpc->method, PLUGIN_METHOD_NOTIFY) == 0) {
        int reg;
        const char *err;
        if (plugin_pb_decode_reg_status(&a, rpc->req, rpc->req_len, &reg, &err) != DRA_OK)
            rpc->code = DRA_GRPC_INVALID_ARGUMENT;
        else if (!reg) {
            rpc->code = DRA_GRPC_UNKNOWN;
            snprintf(rpc->msg, sizeof(rpc->msg), "failed registration process: %s", err);
        }
    } else if (strcmp(rpc->method, PLUGIN_METHOD_HEALTH_CHECK) == 0) {
        plugin_pb_encode_health_resp(DRA_HEALTH_SERVING, rpc->resp);
    } else {
        rpc->code = DRA_GRPC_UNIMPLEMENTED;
        snprintf(rpc->msg, sizeof(rpc->msg), "unknown method %s", rpc->method);
    }
    dra_arena_fini(&a);
}

typedef struct fixture {
    char dir[64];
    char sock[128];
    char addr[160];
    plugin_server *srv;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    strcpy(f->dir, "/tmp/dra-plugin-rpc-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->sock, sizeof(f->sock), "%s/dra.sock", f->dir);
    snprintf(f->addr, sizeof(f->addr), "unix:%s", f->sock);
    plugin_server_opts o = {f->addr, 2, 1 << 16, echo_handler, NULL, NULL};
    char err[256];
    if (plugin_server_start(&o, &f->srv, err, sizeof(err)) != DRA_OK)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    plugin_server_stop(f->srv);
    unlink(f->sock);
    rmdir(f->dir);
    free(f);
    return 0;
}

static void test_prepare_over_socket(void **state)
{
    fixture *f = *state;
    dra_plugin_client *c;
    assert_int_equal(dra_plugin_client_new(f->sock, NULL, &c), DRA_OK);
    dra_arena a;
    dra_arena_init(&a, NULL);
    dra_plugin_claim_ref claims[3] = {{"ns", "u1", "ok"}, {"ns", "u2", "skip"},
                                      {"ns", "u3", "bad"}};
    dra_plugin_claim_result *res;
    size_t n;
    dra_plugin_rpc_status st;
    for (int v = 0; v < 2; v++) {
        const char *svc = v ? DRA_PLUGIN_SERVICE_V1BETA1 : NULL;
        assert_int_equal(dra_plugin_client_prepare(c, svc, claims, 3, 5000, &a, &res, &n,
                                                   &st),
                         DRA_OK);
        assert_int_equal(st.code, 0);
        assert_int_equal(n, 3);
        assert_string_equal(res[0].uid, "u1");
        assert_string_equal(res[0].error, "");
        assert_string_equal(res[1].uid, "u2");
        assert_string_equal(res[1].error, "plugin returned no result for this claim");
        assert_string_equal(res[2].uid, "u3");
        assert_string_equal(res[2].error, "nope");
    }
    /* An unknown service name is the caller's error. */
    assert_int_equal(dra_plugin_client_prepare(c, "v9.DRAPlugin", claims, 1, 5000, &a,
                                               &res, &n, &st),
                     DRA_EINVAL);
    /* A method the server does not serve. */
    assert_int_equal(dra_plugin_client_unprepare(c, NULL, claims, 1, 5000, &a, &res, &n,
                                                 &st),
                     DRA_EUNSUPPORTED);
    assert_int_equal(st.code, DRA_GRPC_UNIMPLEMENTED);
    assert_non_null(strstr(st.message, "NodeUnprepareResources"));
    /* An error status comes back with its message. */
    assert_int_equal(dra_plugin_client_notify_registration(c, 0, "kubelet says no", 5000,
                                                           &st),
                     DRA_EIO);
    assert_int_equal(st.code, DRA_GRPC_UNKNOWN);
    assert_string_equal(st.message, "failed registration process: kubelet says no");
    assert_int_equal(dra_plugin_client_notify_registration(c, 1, NULL, 5000, &st),
                     DRA_OK);
    dra_arena_fini(&a);
    dra_plugin_client_free(c);
}

static void test_oversized(void **state)
{
    fixture *f = *state;
    dra_plugin_client *c;
    assert_int_equal(dra_plugin_client_new(f->sock, NULL, &c), DRA_OK);
    dra_arena a;
    dra_arena_init(&a, NULL);
    /* 100 KiB of claim name: over the server's 64 KiB limit. */
    size_t big = 100 * 1024;
    char *name = malloc(big + 1);
    memset(name, 'x', big);
    name[big] = '\0';
    dra_plugin_claim_ref claim = {"ns", "u1", name};
    dra_plugin_claim_result *res;
    size_t n;
    dra_plugin_rpc_status st;
    assert_int_equal(dra_plugin_client_prepare(c, NULL, &claim, 1, 5000, &a, &res, &n,
                                               &st),
                     DRA_ETOOLARGE);
    assert_int_equal(st.code, DRA_GRPC_RESOURCE_EXHAUSTED);
    /* The server still answers afterwards. */
    claim.name = "ok";
    assert_int_equal(dra_plugin_client_prepare(c, NULL, &claim, 1, 5000, &a, &res, &n,
                                               &st),
                     DRA_OK);
    free(name);
    dra_arena_fini(&a);
    dra_plugin_client_free(c);
}

typedef struct par {
    const char *sock;
    int ok;
} par;

static void *par_main(void *arg)
{
    par *p = arg;
    dra_plugin_client *c;
    if (dra_plugin_client_new(p->sock, NULL, &c) != DRA_OK)
        return NULL;
    dra_arena a;
    dra_arena_init(&a, NULL);
    for (int i = 0; i < 20; i++) {
        dra_plugin_claim_ref claim = {"ns", "u", "ok"};
        dra_plugin_claim_result *res;
        size_t n;
        if (dra_plugin_client_prepare(c, NULL, &claim, 1, 5000, &a, &res, &n, NULL) ==
                DRA_OK &&
            n == 1)
            p->ok++;
        dra_arena_reset(&a);
    }
    dra_arena_fini(&a);
    dra_plugin_client_free(c);
    return NULL;
}

static void test_concurrent_clients(void **state)
{
    fixture *f = *state;
    pthread_t t[4];
    par p[4];
    for (int i = 0; i < 4; i++) {
        p[i].sock = f->sock;
        p[i].ok = 0;
        assert_int_equal(pthread_create(&t[i], NULL, par_main, &p[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(p[i].ok, 20);
    }
}

static void test_tcp_and_unavailable(void **state)
{
    (void)state;
    plugin_server_opts o = {"127.0.0.1:0", 1, 1 << 16, echo_handler, NULL, NULL};
    plugin_server *s;
    char err[256];
    assert_int_equal(plugin_server_start(&o, &s, err, sizeof(err)), DRA_OK);
    int port = plugin_server_port(s);
    assert_true(port > 0);
    char target[64];
    snprintf(target, sizeof(target), "127.0.0.1:%d", port);
    dra_plugin_client *c;
    assert_int_equal(dra_plugin_client_new(target, NULL, &c), DRA_OK);
    int hs;
    dra_plugin_rpc_status st;
    assert_int_equal(dra_plugin_client_health_check(c, "", 5000, &hs, &st), DRA_OK);
    assert_int_equal(hs, DRA_HEALTH_SERVING);
    plugin_server_stop(s);
    assert_int_equal(dra_plugin_client_health_check(c, "", 2000, &hs, &st),
                     DRA_EUNAVAILABLE);
    assert_int_equal(st.code, DRA_GRPC_UNAVAILABLE);
    dra_plugin_client_free(c);

    /* Nothing listens at all. */
    assert_int_equal(dra_plugin_client_new("/nonexistent/dra.sock", NULL, &c), DRA_OK);
    assert_int_equal(dra_plugin_client_health_check(c, "", 2000, &hs, &st),
                     DRA_EUNAVAILABLE);
    dra_plugin_client_free(c);
    assert_int_equal(dra_plugin_client_new("", NULL, &c), DRA_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_claims_round_trip),
        cmocka_unit_test(test_claims_malformed),
        cmocka_unit_test(test_prepare_resp_round_trip),
        cmocka_unit_test(test_info_round_trip),
        cmocka_unit_test_setup_teardown(test_prepare_over_socket, setup, teardown),
        cmocka_unit_test_setup_teardown(test_oversized, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_clients, setup, teardown),
        cmocka_unit_test(test_tcp_and_unavailable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
