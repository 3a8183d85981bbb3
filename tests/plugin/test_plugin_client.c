/*
 * tests/plugin/test_plugin_client.c: the public gRPC client
 * (dra_plugin_client_*, on nghttp2) on its error paths, against the
 * plugin's own h2 server in process and against python3-grpcio's server
 * (an independent implementation): nothing listening, every status code
 * and its dra_err, a message that needs percent-encoding, an answer at
 * and over the 4 MiB limit, a deadline, one client shared by threads, a
 * server stopped and started again behind a pooled connection, every
 * allocation failing in turn, and a server that closes or is killed
 * mid-call.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dra_test.h"
#include "plugin/plugin_int.h"

#define MIB (1u << 20)

/* ---- the in-process server ---------------------------------------------------- */

typedef struct fixture {
    char dir[64];
    char sock[128];
    char addr[160];
    plugin_server *srv;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    int released;
} fixture;

/* SERVING plus an unknown field (15, bytes) so the message is |total|
 * bytes long: any protobuf decoder skips it. */
static void serving_of_size(dra_buf *out, size_t total)
{
    uint8_t hdr[16] = {0x08, 0x01, 0x7a};
    size_t k = 3, n = total - 7; /* 4 length bytes for 2^21 <= n < 2^28 */
    for (int i = 0; i < 3; i++, n >>= 7)
        hdr[k++] = (uint8_t)((n & 0x7f) | 0x80);
    hdr[k++] = (uint8_t)n;
    dra_buf_append(out, hdr, k);
    for (size_t i = 0; i < total - 7; i++)
        dra_buf_putc(out, 'x');
}

/* grpc.health.v1.Health/Check; the service name picks the answer. */
static void handler(void *ud, plugin_rpc *rpc)
{
    fixture *f = ud;
    dra_arena a;
    dra_arena_init(&a, NULL);
    const char *svc = "";
    if (strcmp(rpc->method, PLUGIN_METHOD_HEALTH_CHECK) != 0 ||
        plugin_pb_decode_health_req(&a, rpc->req, rpc->req_len, &svc) != DRA_OK) {
        rpc->code = DRA_GRPC_UNIMPLEMENTED;
        snprintf(rpc->msg, sizeof(rpc->msg), "unknown method %s", rpc->method);
    } else if (strncmp(svc, "fail:", 5) == 0) {
        rpc->code = atoi(svc + 5);
        snprintf(rpc->msg, sizeof(rpc->msg), "status %d: 100%% \xc3\xa9", rpc->code);
    } else if (strcmp(svc, "big4") == 0) {
        serving_of_size(rpc->resp, PLUGIN_DEFAULT_MAX_MESSAGE);
    } else if (strcmp(svc, "big4+1") == 0) {
        serving_of_size(rpc->resp, PLUGIN_DEFAULT_MAX_MESSAGE + 1);
    } else if (strcmp(svc, "hold") == 0) {
        pthread_mutex_lock(&f->mu);
        while (!f->released)
            pthread_cond_wait(&f->cond, &f->mu);
        pthread_mutex_unlock(&f->mu);
        plugin_pb_encode_health_resp(DRA_HEALTH_SERVING, rpc->resp);
    } else {
        plugin_pb_encode_health_resp(DRA_HEALTH_SERVING, rpc->resp);
    }
    dra_arena_fini(&a);
}

static int start_server(fixture *f)
{
    plugin_server_opts o = {f->addr, 4, 8 * MIB, handler, f, NULL};
    char err[256];
    unlink(f->sock);
    return plugin_server_start(&o, &f->srv, err, sizeof(err)) == DRA_OK ? 0 : -1;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    strcpy(f->dir, "/tmp/dra-plugin-client-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->sock, sizeof(f->sock), "%s/dra.sock", f->dir);
    snprintf(f->addr, sizeof(f->addr), "unix:%s", f->sock);
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cond, NULL);
    *state = f;
    return start_server(f);
}

static void release(fixture *f)
{
    pthread_mutex_lock(&f->mu);
    f->released = 1;
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->mu);
}

static int teardown(void **state)
{
    fixture *f = *state;
    release(f);
    plugin_server_stop(f->srv);
    unlink(f->sock);
    rmdir(f->dir);
    pthread_cond_destroy(&f->cond);
    pthread_mutex_destroy(&f->mu);
    free(f);
    return 0;
}

static dra_err check(dra_plugin_client *c, const char *svc, int timeout_ms,
                     dra_plugin_rpc_status *st)
{
    int hs = -1;
    dra_err e = dra_plugin_client_health_check(c, svc, timeout_ms, &hs, st);
    if (e == DRA_OK)
        assert_int_equal(hs, DRA_HEALTH_SERVING);
    return e;
}

/* ---- nothing there ------------------------------------------------------------ */

static void test_absent(void **state)
{
    (void)state;
    dra_plugin_client *c;
    dra_plugin_rpc_status st;
    assert_int_equal(dra_plugin_client_new("/nonexistent/dra.sock", NULL, &c), DRA_OK);
    assert_int_equal(check(c, "", 2000, &st), DRA_EUNAVAILABLE);
    assert_int_equal(st.code, DRA_GRPC_UNAVAILABLE);
    assert_non_null(strstr(st.message, "unix:/nonexistent/dra.sock"));
    assert_non_null(strstr(st.message, "No such file or directory"));
    dra_plugin_client_free(c);

    /* A socket file nobody listens on (a plugin killed before it
     * unlinked its socket). */
    char dir[] = "/tmp/dra-plugin-client-XXXXXX", path[128];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/stale.sock", dir);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    memcpy(sa.sun_path, path, strlen(path));
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    close(fd);
    assert_int_equal(dra_plugin_client_new(path, NULL, &c), DRA_OK);
    assert_int_equal(check(c, "", 2000, &st), DRA_EUNAVAILABLE);
    assert_non_null(strstr(st.message, "Connection refused"));
    dra_plugin_client_free(c);
    unlink(path);
    rmdir(dir);

    /* A TCP port nobody listens on, and targets that name nothing. */
    fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in in = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(in);
    assert_int_equal(bind(fd, (struct sockaddr *)&in, sizeof(in)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&in, &len), 0);
    char target[64];
    snprintf(target, sizeof(target), "127.0.0.1:%d", ntohs(in.sin_port));
    close(fd);
    const char *targets[] = {target, "no-port", "127.0.0.1:", ":80"};
    for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
        assert_int_equal(dra_plugin_client_new(targets[i], NULL, &c), DRA_OK);
        assert_int_equal(check(c, "", 2000, &st), DRA_EUNAVAILABLE);
        dra_plugin_client_free(c);
    }
}

/* ---- statuses and limits --------------------------------------------------------- */

static void test_status_mapping(void **state)
{
    fixture *f = *state;
    static const struct {
        int code;
        dra_err e;
    } cases[] = {
        {DRA_GRPC_CANCELLED, DRA_EIO},          {DRA_GRPC_UNKNOWN, DRA_EIO},
        {DRA_GRPC_INVALID_ARGUMENT, DRA_EINVAL}, {DRA_GRPC_DEADLINE_EXCEEDED, DRA_ETIMEOUT},
        {DRA_GRPC_NOT_FOUND, DRA_ENOTFOUND},    {DRA_GRPC_RESOURCE_EXHAUSTED, DRA_ETOOLARGE},
        {DRA_GRPC_FAILED_PRECONDITION, DRA_EIO}, {DRA_GRPC_UNIMPLEMENTED, DRA_EUNSUPPORTED},
        {DRA_GRPC_INTERNAL, DRA_EIO},           {DRA_GRPC_UNAVAILABLE, DRA_EUNAVAILABLE},
    };
    dra_plugin_client *c;
    assert_int_equal(dra_plugin_client_new(f->sock, NULL, &c), DRA_OK);
    dra_plugin_rpc_status st;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char svc[32], want[64];
        snprintf(svc, sizeof(svc), "fail:%d", cases[i].code);
        snprintf(want, sizeof(want), "status %d: 100%% \xc3\xa9", cases[i].code);
        assert_int_equal(check(c, svc, 5000, &st), cases[i].e);
        assert_int_equal(st.code, cases[i].code);
        assert_string_equal(st.message, want);
        /* An error status leaves the connection usable. */
        assert_int_equal(check(c, "", 5000, &st), DRA_OK);
        assert_int_equal(st.code, DRA_GRPC_OK);
    }
    /* The server's own transport error: an unknown method. */
    dra_arena a;
    dra_arena_init(&a, NULL);
    dra_plugin_info info;
    assert_int_equal(dra_plugin_client_get_info(c, 5000, &a, &info, &st), DRA_EUNSUPPORTED);
    assert_string_equal(st.message, "unknown method " PLUGIN_METHOD_GET_INFO);
    dra_arena_fini(&a);
    dra_plugin_client_free(c);
}

static void test_oversized_answer(void **state)
{
    fixture *f = *state;
    dra_plugin_client *c;
    dra_plugin_rpc_status st;
    assert_int_equal(dra_plugin_client_new(f->sock, NULL, &c), DRA_OK);
    /* Exactly the limit passes; one byte more is RESOURCE_EXHAUSTED, as
     * gRPC's max receive message length. */
    assert_int_equal(check(c, "big4", 10000, &st), DRA_OK);
    assert_int_equal(check(c, "big4+1", 10000, &st), DRA_ETOOLARGE);
    assert_int_equal(st.code, DRA_GRPC_RESOURCE_EXHAUSTED);
    assert_string_equal(st.message, "Received message larger than max (4194305 vs. 4194304)");
    assert_int_equal(check(c, "", 5000, &st), DRA_OK);
    assert_int_equal(check(c, "big4", 10000, &st), DRA_OK);
    dra_plugin_client_free(c);
}

static void test_timeout(void **state)
{
    fixture *f = *state;
    dra_plugin_client *c;
    dra_plugin_rpc_status st;
    assert_int_equal(dra_plugin_client_new(f->sock, NULL, &c), DRA_OK);
    assert_int_equal(check(c, "", 5000, &st), DRA_OK);
    assert_int_equal(check(c, "hold", 200, &st), DRA_ETIMEOUT);
    assert_int_equal(st.code, DRA_GRPC_DEADLINE_EXCEEDED);
    assert_string_equal(st.message, "Deadline Exceeded");
    release(f);
    assert_int_equal(check(c, "", 5000, &st), DRA_OK);
    dra_plugin_client_free(c);
}

/* ---- one client, several threads ----------------------------------------------------- */

typedef struct worker {
    dra_plugin_client *c;
    int ok;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    dra_plugin_rpc_status st;
    for (int i = 0; i < 25; i++) {
        int hs;
        if (dra_plugin_client_health_check(w->c, "", 10000, &hs, &st) == DRA_OK &&
            hs == DRA_HEALTH_SERVING)
            w->ok++;
    }
    return NULL;
}

static void test_shared_client(void **state)
{
    fixture *f = *state;
    dra_plugin_client *c;
    assert_int_equal(dra_plugin_client_new(f->addr, NULL, &c), DRA_OK);
    pthread_t t[12];
    worker w[12];
    for (int i = 0; i < 12; i++) {
        w[i] = (worker){c, 0};
        assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
    }
    for (int i = 0; i < 12; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(w[i].ok, 25);
    }
    dra_plugin_client_free(c);
}

/* ---- allocation failures ---------------------------------------------------------------- */

/* Every allocation of two calls (a new connection, then its reuse)
 * failing in turn: DRA_OK or DRA_ENOMEM, nothing leaked. */
static void test_failmem(void **state)
{
    fixture *f = *state;
    long k;
    for (k = 0;; k++) {
        dra_failmem fm;
        dra_failmem_init(&fm, k);
        dra_plugin_client *c;
        dra_plugin_rpc_status st;
        st.message[0] = '\0';
        dra_err e = dra_plugin_client_new(f->sock, &fm.mem, &c);
        if (e == DRA_OK) {
            int hs;
            e = dra_plugin_client_health_check(c, "", 5000, &hs, &st);
            if (e == DRA_OK)
                e = dra_plugin_client_health_check(c, "", 5000, &hs, &st);
            dra_plugin_client_free(c);
        }
        if (fm.live != 0)
            fail_msg("k=%ld leaks %ld blocks", k, fm.live);
        if (!fm.failed) {
            assert_int_equal(e, DRA_OK);
            break;
        }
        if (e != DRA_OK && e != DRA_ENOMEM)
            fail_msg("k=%ld returned %s (%s)", k, dra_errname(e), st.message);
    }
    assert_true(k > 10);
}

/* ---- the server goes away ------------------------------------------------------------- */

/* A restarted plugin behind a pooled connection: the next call after the
 * restart succeeds without a failed call in between (the node agent's
 * retry after the plugin re-registers). */
static void test_server_restart(void **state)
{
    fixture *f = *state;
    dra_plugin_client *c;
    dra_plugin_rpc_status st;
    assert_int_equal(dra_plugin_client_new(f->sock, NULL, &c), DRA_OK);
    assert_int_equal(check(c, "", 5000, &st), DRA_OK);
    plugin_server_stop(f->srv);
    f->srv = NULL;
    assert_int_equal(start_server(f), 0);
    assert_int_equal(check(c, "", 5000, &st), DRA_OK);
    plugin_server_stop(f->srv);
    f->srv = NULL;
    unlink(f->sock);
    assert_int_equal(check(c, "", 5000, &st), DRA_EUNAVAILABLE);
    assert_int_equal(st.code, DRA_GRPC_UNAVAILABLE);
    assert_int_equal(start_server(f), 0);
    assert_int_equal(check(c, "", 5000, &st), DRA_OK);
    dra_plugin_client_free(c);
}

/* A server that reads the start of a call and closes: what the client
 * sees of a plugin killed mid-call. */
static void *closer_main(void *arg)
{
    int lfd = *(int *)arg;
    int fd = accept(lfd, NULL, NULL);
    uint8_t buf[4096];
    size_t got = 0;
    while (fd >= 0 && got < 64) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    if (fd >= 0)
        close(fd);
    return NULL;
}

static void test_closed_mid_call(void **state)
{
    (void)state;
    char dir[] = "/tmp/dra-plugin-client-XXXXXX", path[128];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/close.sock", dir);
    int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    memcpy(sa.sun_path, path, strlen(path));
    assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(lfd, 4), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, closer_main, &lfd), 0);
    dra_plugin_client *c;
    dra_plugin_rpc_status st;
    assert_int_equal(dra_plugin_client_new(path, NULL, &c), DRA_OK);
    assert_int_equal(check(c, "", 5000, &st), DRA_EUNAVAILABLE);
    assert_int_equal(st.code, DRA_GRPC_UNAVAILABLE);
    pthread_join(t, NULL);
    dra_plugin_client_free(c);
    close(lfd);
    unlink(path);
    rmdir(dir);
}

/* ---- python3-grpcio as the server ------------------------------------------------------ */

#define GRPCIO_SERVER DRA_SOURCE_DIR "/tests/plugin/grpcio_health_server.py"

/* Starts the python server on |sock|; the pid, 0 where grpcio is
 * missing (it exits 77), -1 when it did not come up. It is up when it
 * has made |sock|.ready: its socket exists before it accepts. */
static pid_t spawn_grpcio(const char *sock)
{
    char ready[160];
    snprintf(ready, sizeof ready, "%s.ready", sock);
    unlink(sock);
    unlink(ready);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/usr/bin/python3", "python3", GRPCIO_SERVER, sock, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 300; i++) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) && (WEXITSTATUS(status) == 77 ||
                                         WEXITSTATUS(status) == 127) ? 0 : -1;
        struct stat sb;
        if (stat(ready, &sb) == 0 && stat(sock, &sb) == 0 && S_ISSOCK(sb.st_mode))
            return pid;
        usleep(50 * 1000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

/* The python server's directory, socket and process, so that a failed
 * assertion still ends the process and removes the files (teardown). */
typedef struct grpcio_fx {
    char dir[40], sock[128], ready[160];
    pid_t pid;
} grpcio_fx;

static int grpcio_setup(void **state)
{
    grpcio_fx *g = calloc(1, sizeof *g);
    if (!g)
        return -1;
    strcpy(g->dir, "/tmp/dra-plugin-client-XXXXXX");
    if (!mkdtemp(g->dir)) {
        free(g);
        return -1;
    }
    snprintf(g->sock, sizeof g->sock, "%s/grpcio.sock", g->dir);
    snprintf(g->ready, sizeof g->ready, "%s.ready", g->sock);
    *state = g;
    return 0;
}

static int grpcio_teardown(void **state)
{
    grpcio_fx *g = *state;
    if (g->pid > 0) {
        kill(g->pid, SIGKILL);
        waitpid(g->pid, NULL, 0);
    }
    unlink(g->sock);
    unlink(g->ready);
    int rc = rmdir(g->dir);
    free(g);
    return rc;
}

static void test_grpcio_server(void **state)
{
    grpcio_fx *g = *state;
    const char *sock = g->sock;
    g->pid = spawn_grpcio(sock);
    if (g->pid == 0)
        skip();
    assert_true(g->pid > 0);
    dra_plugin_client *c;
    dra_plugin_rpc_status st;
    assert_int_equal(dra_plugin_client_new(sock, NULL, &c), DRA_OK);
    assert_int_equal(check(c, "", 10000, &st), DRA_OK);
    assert_int_equal(check(c, "big3", 10000, &st), DRA_OK);
    assert_int_equal(check(c, "big5", 10000, &st), DRA_ETOOLARGE);
    assert_non_null(strstr(st.message, "larger than max"));
    assert_int_equal(check(c, "fail", 10000, &st), DRA_EIO);
    assert_int_equal(st.code, DRA_GRPC_FAILED_PRECONDITION);
    assert_string_equal(st.message, "not now: 100% \xc3\xa9");
    assert_int_equal(check(c, "hold", 300, &st), DRA_ETIMEOUT);
    assert_int_equal(st.code, DRA_GRPC_DEADLINE_EXCEEDED);
    assert_int_equal(check(c, "", 10000, &st), DRA_OK);
    /* Killed (-9) while it has the call. */
    assert_int_equal(check(c, "die", 10000, &st), DRA_EUNAVAILABLE);
    assert_int_equal(st.code, DRA_GRPC_UNAVAILABLE);
    /* Bounded: a server that did not die fails the test, not hangs it. */
    int status = 0;
    pid_t w = 0;
    for (int i = 0; i < 200 && !w; i++) {
        if (!(w = waitpid(g->pid, &status, WNOHANG)))
            usleep(50 * 1000);
    }
    assert_int_equal(w, g->pid);
    g->pid = 0;
    assert_true(WIFSIGNALED(status));
    /* Started again: the same client reaches it. */
    assert_int_equal(check(c, "", 10000, &st), DRA_EUNAVAILABLE);
    g->pid = spawn_grpcio(sock);
    assert_true(g->pid > 0);
    assert_int_equal(check(c, "", 10000, &st), DRA_OK);
    assert_int_equal(check(c, "big3", 10000, &st), DRA_OK);
    dra_plugin_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_absent),
        cmocka_unit_test_setup_teardown(test_status_mapping, setup, teardown),
        cmocka_unit_test_setup_teardown(test_oversized_answer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_client, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failmem, setup, teardown),
        cmocka_unit_test(test_closed_mid_call),
        cmocka_unit_test_setup_teardown(test_grpcio_server, grpcio_setup, grpcio_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
