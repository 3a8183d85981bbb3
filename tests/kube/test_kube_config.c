/* Client configuration as kubectl finds it: one kubeconfig, the
 * $KUBECONFIG list merged (first definition wins), ~/.kube/config,
 * contexts, relative paths, *-data fields, the errors and their wording,
 * unsupported auth plugins, and the in-cluster service account. Files
 * are written into a temporary directory; the environment is set per
 * case. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dra_test.h"
#include "dra/kube.h"

static char tmp[256];

static const char *at(const char *name)
{
    static char buf[8][512];
    static int i;
    char *b = buf[i++ % 8];
    snprintf(b, sizeof buf[0], "%s/%s", tmp, name);
    return b;
}

static void put(const char *name, const char *text)
{
    FILE *f = fopen(at(name), "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void clean_env(void)
{
    unsetenv("KUBECONFIG");
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    unsetenv("POD_NAMESPACE");
    setenv("HOME", at("home"), 1);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmp, sizeof tmp, "%s/dra-kubecfg.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(tmp));
    mkdir(at("home"), 0700);
    mkdir(at("home/.kube"), 0700);
    mkdir(at("sub"), 0700);
    mkdir(at("sa"), 0700);
    return 0;
}

static int teardown(void **state)
{
    char cmd[600];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    return system(cmd) == 0 ? 0 : -1;
}

/* Loads and expects |want|; on failure *msg receives the first message. */
static dra_err load(dra_kube_config *cfg, const char *path, const char *ctx,
                    char *msg, size_t size)
{
    dra_diag d;
    dra_err err;
    dra_diag_init(&d, NULL);
    err = dra_kube_config_load(cfg, path, ctx, NULL, &d);
    if (msg)
        snprintf(msg, size, "%s", dra_diag_first(&d) ? dra_diag_first(&d) : "");
    dra_diag_fini(&d);
    return err;
}

static const char *const BASIC =
    "apiVersion: v1\n"
    "kind: Config\n"
    "current-context: dev\n"
    "clusters:\n"
    "- name: c1\n"
    "  cluster:\n"
    "    server: https://10.1.1.1:6443\n"
    "    certificate-authority: certs/ca.crt\n"
    "    tls-server-name: api.example\n"
    "- name: c2\n"
    "  cluster:\n"
    "    server: https://10.2.2.2\n"
    "    certificate-authority-data: aGVsbG8gd29ybGQ=\n"
    "users:\n"
    "- name: u1\n"
    "  user:\n"
    "    token: abc\n"
    "- name: u2\n"
    "  user:\n"
    "    client-certificate: /abs/client.crt\n"
    "    client-key-data: a2V5\n"
    "    tokenFile: tok\n"
    "contexts:\n"
    "- name: dev\n"
    "  context: {cluster: c1, user: u1, namespace: team-a}\n"
    "- name: prod\n"
    "  context: {cluster: c2, user: u2}\n";

static void test_single_file(void **state)
{
    dra_kube_config cfg;
    char msg[512];
    (void)state;
    clean_env();
    put("sub/config", BASIC);
    assert_int_equal(load(&cfg, at("sub/config"), NULL, msg, sizeof msg),
                     DRA_OK);
    assert_string_equal(cfg.context, "dev");
    assert_string_equal(cfg.cluster, "c1");
    assert_string_equal(cfg.user, "u1");
    assert_string_equal(cfg.server, "https://10.1.1.1:6443");
    assert_string_equal(cfg.ca_file, at("sub/certs/ca.crt")); /* relative */
    assert_string_equal(cfg.tls_server_name, "api.example");
    assert_string_equal(cfg.token, "abc");
    assert_string_equal(cfg.ns, "team-a");
    assert_null(cfg.ca_data);
    assert_int_equal(cfg.timeout_ms, 60000);
    dra_kube_config_fini(&cfg);

    assert_int_equal(load(&cfg, at("sub/config"), "prod", msg, sizeof msg),
                     DRA_OK);
    assert_string_equal(cfg.server, "https://10.2.2.2");
    assert_int_equal(cfg.ca_len, 11);
    assert_memory_equal(cfg.ca_data, "hello world", 11);
    assert_string_equal(cfg.cert_file, "/abs/client.crt");
    assert_int_equal(cfg.key_len, 3);
    assert_string_equal(cfg.key_data, "key");
    assert_string_equal(cfg.token_file, at("sub/tok"));
    assert_string_equal(cfg.ns, "default");
    dra_kube_config_fini(&cfg);

    assert_int_equal(load(&cfg, at("sub/config"), "nope", msg, sizeof msg),
                     DRA_EINVALID);
    assert_string_equal(msg, "invalid configuration: context was not found "
                             "for specified context: nope");
    dra_kube_config_fini(&cfg);
    assert_int_equal(load(&cfg, at("missing"), NULL, msg, sizeof msg),
                     DRA_ENOTFOUND);
    {
        char want[600];
        snprintf(want, sizeof want, "stat %s: no such file or directory",
                 at("missing"));
        assert_string_equal(msg, want);
    }
    dra_kube_config_fini(&cfg);
}

static void test_merge(void **state)
{
    dra_kube_config cfg;
    char msg[512], env[1200];
    (void)state;
    clean_env();
    /* a: no current-context; defines c1 and u1. b: redefines c1 (loses),
     * defines u2, sets current-context. */
    put("a", "clusters:\n- name: c1\n  cluster: {server: 'https://first:1'}\n"
             "users:\n- name: u1\n  user: {token: from-a}\n"
             "contexts:\n- name: x\n  context: {cluster: c1, user: u2}\n");
    put("sub/b", "current-context: x\n"
                 "clusters:\n- name: c1\n  cluster: {server: 'https://second:2'}\n"
                 "users:\n- name: u2\n  user: {tokenFile: t2}\n"
                 "- name: u1\n  user: {token: from-b}\n"
                 "contexts:\n- name: x\n  context: {cluster: c1, user: u1}\n");
    snprintf(env, sizeof env, "%s::%s:%s", at("a"), at("does-not-exist"),
             at("sub/b"));
    setenv("KUBECONFIG", env, 1);
    assert_int_equal(load(&cfg, NULL, NULL, msg, sizeof msg), DRA_OK);
    assert_string_equal(cfg.context, "x");
    assert_string_equal(cfg.server, "https://first:1");
    assert_string_equal(cfg.user, "u2");
    assert_string_equal(cfg.token_file, at("sub/t2")); /* b's directory */
    dra_kube_config_fini(&cfg);
    /* An explicit path ignores $KUBECONFIG. */
    assert_int_equal(load(&cfg, at("sub/b"), NULL, msg, sizeof msg), DRA_OK);
    assert_string_equal(cfg.server, "https://second:2");
    assert_string_equal(cfg.token, "from-b");
    dra_kube_config_fini(&cfg);

    /* Within one file the last definition of a name wins. */
    put("dup", "current-context: x\n"
               "clusters:\n- name: c\n  cluster: {server: 'https://one'}\n"
               "- name: c\n  cluster: {server: 'https://two'}\n"
               "contexts:\n- name: x\n  context: {cluster: c}\n");
    assert_int_equal(load(&cfg, at("dup"), NULL, msg, sizeof msg), DRA_OK);
    assert_string_equal(cfg.server, "https://two");
    assert_null(cfg.user); /* a context without a user: no credentials */
    dra_kube_config_fini(&cfg);

    /* ~/.kube/config when $KUBECONFIG is unset. */
    unsetenv("KUBECONFIG");
    put("home/.kube/config", BASIC);
    assert_int_equal(load(&cfg, NULL, "prod", msg, sizeof msg), DRA_OK);
    assert_string_equal(cfg.server, "https://10.2.2.2");
    dra_kube_config_fini(&cfg);
    unlink(at("home/.kube/config"));
    assert_int_equal(load(&cfg, NULL, NULL, msg, sizeof msg), DRA_EINVALID);
    assert_string_equal(msg, "invalid configuration: no configuration has been "
                             "provided, try setting KUBERNETES_MASTER "
                             "environment variable");
    dra_kube_config_fini(&cfg);
}

static void expect_error(const char *text, const char *ctx, dra_err want,
                         const char *want_msg)
{
    dra_kube_config cfg;
    char msg[512];
    put("bad", text);
    assert_int_equal(load(&cfg, at("bad"), ctx, msg, sizeof msg), want);
    if (!strstr(msg, want_msg))
        fail_msg("message \"%s\" lacks \"%s\"", msg, want_msg);
    dra_kube_config_fini(&cfg);
}

static void test_errors(void **state)
{
    const char *ctx = "current-context: x\ncontexts:\n- name: x\n  context: "
                      "{cluster: c, user: u}\n";
    char text[1024];
    (void)state;
    clean_env();
    expect_error("clusters: [", NULL, DRA_EPARSE, "error loading config file");
    expect_error("- just\n- a list\n", NULL, DRA_EPARSE,
                 "error loading config file");
    expect_error("clusters: 7\n", NULL, DRA_EPARSE, "must be lists");
    expect_error("current-context: x\n", NULL, DRA_EINVALID,
                 "context was not found for specified context: x");
    expect_error("contexts:\n- name: x\n  context: {cluster: c}\n", NULL,
                 DRA_EINVALID, "invalid configuration: no context chosen");
    snprintf(text, sizeof text, "%s", ctx);
    expect_error(text, NULL, DRA_EINVALID,
                 "user \"u\" was not found for context \"x\"");
    snprintf(text, sizeof text, "%susers:\n- name: u\n  user: {}\n", ctx);
    expect_error(text, NULL, DRA_EINVALID,
                 "cluster \"c\" was not found for context \"x\"");
    snprintf(text, sizeof text,
             "%susers:\n- name: u\n  user: {}\nclusters:\n- name: c\n"
             "  cluster: {insecure-skip-tls-verify: true}\n", ctx);
    expect_error(text, NULL, DRA_EINVALID, "no server found for cluster \"c\"");
    snprintf(text, sizeof text,
             "%susers:\n- name: u\n  user: {}\nclusters:\n- name: c\n"
             "  cluster: {server: 'https://s', insecure-skip-tls-verify: true,"
             " certificate-authority-data: aGk=}\n", ctx);
    expect_error(text, NULL, DRA_EINVALID,
                 "root certificates file with the insecure flag");
    snprintf(text, sizeof text,
             "%susers:\n- name: u\n  user: {}\nclusters:\n- name: c\n"
             "  cluster: {server: 'https://s', certificate-authority-data: "
             "'not*base64'}\n", ctx);
    expect_error(text, NULL, DRA_EINVALID,
                 "certificate-authority-data of cluster \"c\": illegal base64 "
                 "data at input byte 3");
    snprintf(text, sizeof text,
             "%susers:\n- name: u\n  user: {client-certificate-data: aGk=}\n"
             "clusters:\n- name: c\n  cluster: {server: 'https://s'}\n", ctx);
    expect_error(text, NULL, DRA_EINVALID,
                 "client-key-data or client-key must be specified for u");
    snprintf(text, sizeof text,
             "%susers:\n- name: u\n  user:\n    exec:\n      apiVersion: "
             "client.authentication.k8s.io/v1\n      command: aws\n"
             "clusters:\n- name: c\n  cluster: {server: 'https://s'}\n", ctx);
    expect_error(text, NULL, DRA_EUNSUPPORTED,
                 "user \"u\": exec credential plugins are not supported");
    snprintf(text, sizeof text,
             "%susers:\n- name: u\n  user:\n    auth-provider: {name: gcp}\n"
             "clusters:\n- name: c\n  cluster: {server: 'https://s'}\n", ctx);
    expect_error(text, NULL, DRA_EUNSUPPORTED,
                 "user \"u\": auth-provider plugins are not supported");
    snprintf(text, sizeof text,
             "%susers:\n- name: u\n  user: {}\nclusters:\n- name: c\n"
             "  cluster: {server: 'https://s', proxy-url: 'http://p:3128'}\n",
             ctx);
    expect_error(text, NULL, DRA_EUNSUPPORTED, "proxy-url is not supported");
}

static void test_in_cluster(void **state)
{
    dra_kube_config cfg;
    dra_diag d;
    char msg[512];
    (void)state;
    clean_env();
    dra_diag_init(&d, NULL);
    assert_int_equal(dra_kube_config_in_cluster(&cfg, at("sa"), NULL, &d),
                     DRA_ENOTFOUND);
    assert_string_equal(dra_diag_first(&d),
                        "unable to load in-cluster configuration, "
                        "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT "
                        "must be defined");
    dra_kube_config_fini(&cfg);
    dra_diag_clear(&d);
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    /* No token file yet. */
    assert_int_equal(dra_kube_config_in_cluster(&cfg, at("sa"), NULL, &d),
                     DRA_EIO);
    dra_kube_config_fini(&cfg);
    put("sa/token", "  jwt.token.here\n");
    put("sa/namespace", "kube-system\n");
    assert_int_equal(dra_kube_config_in_cluster(&cfg, at("sa"), NULL, &d),
                     DRA_OK);
    assert_string_equal(cfg.server, "https://10.96.0.1:443");
    assert_string_equal(cfg.token, "jwt.token.here");
    assert_string_equal(cfg.token_file, at("sa/token"));
    assert_null(cfg.ca_file); /* no ca.crt: the system roots */
    assert_string_equal(cfg.ns, "kube-system");
    dra_kube_config_fini(&cfg);
    put("sa/ca.crt", "pem");
    setenv("POD_NAMESPACE", "from-env", 1);
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    assert_int_equal(dra_kube_config_in_cluster(&cfg, at("sa"), NULL, &d),
                     DRA_OK);
    assert_string_equal(cfg.server, "https://[fd00::1]:443");
    assert_string_equal(cfg.ca_file, at("sa/ca.crt"));
    assert_string_equal(cfg.ns, "from-env");
    dra_kube_config_fini(&cfg);
    dra_diag_fini(&d);
    /* With no kubeconfig at all, load falls back to the service account
     * (at its standard path, absent here: the token cannot be read). */
    unsetenv("POD_NAMESPACE");
    assert_int_equal(load(&cfg, NULL, NULL, msg, sizeof msg), DRA_EIO);
    assert_non_null(strstr(msg, DRA_KUBE_SA_DIR "/token"));
    dra_kube_config_fini(&cfg);
    clean_env();
}

static void test_failmem(void **state)
{
    (void)state;
    clean_env();
    put("sub/config", BASIC);
    for (long n = 0;; n++) {
        dra_failmem fm;
        dra_kube_config cfg;
        dra_diag d;
        dra_err err;
        dra_failmem_init(&fm, n);
        dra_diag_init(&d, &fm.mem);
        err = dra_kube_config_load(&cfg, at("sub/config"), "prod", &fm.mem, &d);
        dra_kube_config_fini(&cfg);
        dra_diag_fini(&d);
        assert_int_equal(fm.live, 0);
        if (!fm.failed) {
            assert_int_equal(err, DRA_OK);
            break;
        }
        assert_true(err == DRA_ENOMEM || err == DRA_EPARSE);
        assert_true(n < 5000);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_file), cmocka_unit_test(test_merge),
        cmocka_unit_test(test_errors),      cmocka_unit_test(test_in_cluster),
        cmocka_unit_test(test_failmem),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
