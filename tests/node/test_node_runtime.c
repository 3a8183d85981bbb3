/* The container runtime with real containers under bubblewrap: output
 * into the CRI log (streams, partial records), exit codes, environment
 * (CDI env after the container's), working directory and missing
 * commands as start errors, /dev holding only the standard entries and
 * the CDI device nodes, CDI mounts (also where the host has no mount
 * point), OCI hooks at their stages, SIGTERM ignored by a shell as pid 1
 * then SIGKILL ending the whole PID namespace, and a container found
 * again by id after its handle is gone (a restart of drad). Skips (77)
 * where bwrap cannot create namespaces. */
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dra_test.h"

#include "dra/node.h"

static char tmpdir[256];
static dra_node_runtime *rt;
static char started[32][64];
static size_t n_started;

static void path_in(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", tmpdir, name);
}

static void write_exec(const char *name, const char *text)
{
    char p[512];
    FILE *f;
    path_in(p, sizeof p, name);
    f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    chmod(p, 0755);
}

/* Runs a container to completion; returns its status and its log as
 * `kubectl logs` prints it. */
typedef struct run_result {
    dra_err err;
    char msg[512];
    dra_node_ctr_status st;
    char log[65536];
} run_result;

static int to_buf(void *ud, const char *p, size_t n)
{
    char *b = ud;
    size_t have = strlen(b);
    if (have + n >= 65536)
        n = 65535 - have;
    memcpy(b + have, p, n);
    b[have + n] = '\0';
    return 0;
}

static dra_node_ctr *start(const char *id, const char *const *argv, size_t argc, const char *const *env,
                      size_t n_env, const char *cwd, const dra_node_cdi_edits *edits, run_result *r)
{
    dra_node_ctr_config cfg;
    dra_diag d;
    dra_node_ctr *c = NULL;
    char log[512];
    memset(r, 0, sizeof *r);
    memset(&cfg, 0, sizeof cfg);
    snprintf(log, sizeof log, "%s/%s.log", tmpdir, id);
    cfg.id = id;
    cfg.argv = argv;
    cfg.argc = argc;
    cfg.env = env;
    cfg.n_env = n_env;
    cfg.working_dir = cwd;
    cfg.hostname = "pod-a";
    cfg.edits = edits;
    cfg.log_path = log;
    dra_diag_init(&d, NULL);
    r->err = dra_node_ctr_start(rt, &cfg, &c, &d);
    snprintf(r->msg, sizeof r->msg, "%s", dra_diag_first(&d) ? dra_diag_first(&d) : "");
    dra_diag_fini(&d);
    if (n_started < 32)
        snprintf(started[n_started++], 64, "%s", id);
    return c;
}

static void finish(dra_node_ctr *c, const char *id, run_result *r)
{
    char log[512];
    snprintf(log, sizeof log, "%s/%s.log", tmpdir, id);
    assert_int_equal(dra_node_ctr_wait(c, 20000, &r->st), DRA_OK);
    dra_node_ctr_free(c);
    r->log[0] = '\0';
    dra_node_log_read(log, NULL, to_buf, r->log);
}

static void run(const char *id, const char *script, const char *const *env, size_t n_env,
                const dra_node_cdi_edits *edits, run_result *r)
{
    const char *argv[] = {"/bin/sh", "-c", script};
    dra_node_ctr *c = start(id, argv, 3, env, n_env, NULL, edits, r);
    if (r->err != DRA_OK)
        fail_msg("start %s: %s: %s", id, dra_strerror(r->err), r->msg);
    finish(c, id, r);
}

static void test_output_and_exit(void **state)
{
    run_result r;
    char raw[4096], path[512];
    FILE *f;
    size_t n;
    (void)state;
    run("out1", "echo hello; echo oops >&2; printf 'no newline'; exit 3", NULL, 0, NULL, &r);
    assert_int_equal(r.st.phase, DRA_NODE_CTR_EXITED);
    assert_int_equal(r.st.exit_code, 3);
    assert_true(r.st.started_ns > 0 && r.st.finished_ns >= r.st.started_ns);
    assert_non_null(strstr(r.log, "hello\n"));
    assert_non_null(strstr(r.log, "oops\n"));
    assert_non_null(strstr(r.log, "no newline\n"));
    /* The file itself is CRI format: time, stream, tag, text. */
    snprintf(path, sizeof path, "%s/out1.log", tmpdir);
    f = fopen(path, "r");
    assert_non_null(f);
    n = fread(raw, 1, sizeof raw - 1, f);
    fclose(f);
    raw[n] = '\0';
    assert_non_null(strstr(raw, "Z stdout F hello\n"));
    assert_non_null(strstr(raw, "Z stderr F oops\n"));
    assert_int_equal(raw[4], '-');
    assert_int_equal(raw[29], 'Z'); /* nine fraction digits */
}

static void test_env_and_namespaces(void **state)
{
    run_result r;
    const char *env[] = {"PATH=/usr/bin:/bin", "WHO=pod", "KEEP=1"};
    const char *cdi_env[] = {"WHO=cdi"};
    dra_node_cdi_edits e;
    (void)state;
    memset(&e, 0, sizeof e);
    e.env = cdi_env;
    e.n_env = 1;
    run("env1", "echo who=$WHO keep=$KEEP home=${HOME-unset}; echo pid=$$; hostname; ls /dev | tr '\\n' ' '",
        env, 3, &e, &r);
    assert_int_equal(r.st.exit_code, 0);
    assert_non_null(strstr(r.log, "who=cdi keep=1 home=unset\n"));
    assert_non_null(strstr(r.log, "pid=1\n"));
    assert_non_null(strstr(r.log, "pod-a\n"));
    /* Only the standard entries: the host's other device nodes are not
     * there. */
    assert_non_null(strstr(r.log, "null "));
    assert_non_null(strstr(r.log, "urandom "));
    assert_null(strstr(r.log, "vda"));
    assert_null(strstr(r.log, "nvidia"));
}

static void test_cdi_devices_and_mounts(void **state)
{
    run_result r;
    char dev0[512], dev1[512], tool[512], libdir[512];
    dra_node_cdi_device_node nodes[2];
    dra_node_cdi_mount mounts[2];
    const char *ro[] = {"ro", "nosuid", "nodev", "rbind", "rprivate"};
    dra_node_cdi_edits e;
    FILE *f;
    (void)state;
    path_in(dev0, sizeof dev0, "nvidia0");
    path_in(dev1, sizeof dev1, "nvidia1");
    f = fopen(dev0, "w");
    fputs("fake gpu 0\n", f);
    fclose(f);
    f = fopen(dev1, "w");
    fclose(f);
    write_exec("fake-smi", "#!/bin/sh\necho fake-smi sees: $(ls /dev | grep nvidia | tr '\\n' ' ')\n");
    path_in(tool, sizeof tool, "fake-smi");
    path_in(libdir, sizeof libdir, "libs");
    mkdir(libdir, 0755);
    memset(&e, 0, sizeof e);
    memset(nodes, 0, sizeof nodes);
    nodes[0] = (dra_node_cdi_device_node){"/dev/nvidia0", dev0, "", 0, 0, -1, NULL, -1, -1};
    nodes[1] = (dra_node_cdi_device_node){"/dev/dri/card1", dev1, "", 0, 0, -1, NULL, -1, -1};
    e.device_nodes = nodes;
    e.n_device_nodes = 2;
    /* A binary at a path the host does not have, and a directory. */
    mounts[0] = (dra_node_cdi_mount){tool, "/usr/local/bin/dra-test-fake-smi", NULL, ro, 5};
    mounts[1] = (dra_node_cdi_mount){libdir, "/usr/lib/dra-test-driver-libs", NULL, ro, 5};
    e.mounts = mounts;
    e.n_mounts = 2;
    run("cdi1", "cat /dev/nvidia0; ls /dev/dri; dra-test-fake-smi; test -d /usr/lib/dra-test-driver-libs && echo libs;"
        " touch /usr/local/bin/dra-test-fake-smi 2>/dev/null || echo read-only",
        (const char *[]){"PATH=/usr/local/bin:/usr/bin:/bin"}, 1, &e, &r);
    assert_int_equal(r.st.exit_code, 0);
    assert_non_null(strstr(r.log, "fake gpu 0\n"));
    assert_non_null(strstr(r.log, "card1\n"));
    assert_non_null(strstr(r.log, "fake-smi sees: nvidia0\n"));
    assert_non_null(strstr(r.log, "libs\n"));
    assert_non_null(strstr(r.log, "read-only\n"));
    /* The host never saw the mount points. */
    assert_int_equal(access("/usr/local/bin/dra-test-fake-smi", F_OK), -1);
    /* A device node whose host path is missing and not fully specified. */
    nodes[0].host_path = "/nonexistent/nvidia9";
    e.n_mounts = 0;
    start("cdi2", (const char *[]){"/bin/true"}, 1, NULL, 0, NULL, &e, &r);
    assert_int_equal(r.err, DRA_EINVAL);
    assert_string_equal(r.msg, "failed to stat CDI host device \"/nonexistent/nvidia9\": No such file or directory");
    /* Unsupported edits are refused, not ignored. */
    memset(&e, 0, sizeof e);
    e.n_net_devices = 1;
    start("cdi3", (const char *[]){"/bin/true"}, 1, NULL, 0, NULL, &e, &r);
    assert_int_equal(r.err, DRA_EINVAL);
    assert_non_null(strstr(r.msg, "netDevices are not supported"));
}

static void test_start_errors(void **state)
{
    run_result r;
    dra_node_ctr *c;
    (void)state;
    c = start("err1", (const char *[]){"no-such-command-xyz", "a"}, 2,
              (const char *[]){"PATH=/usr/bin:/bin"}, 1, NULL, NULL, &r);
    assert_null(c);
    assert_int_equal(r.err, DRA_EIO);
    assert_string_equal(r.msg, "exec: \"no-such-command-xyz\": executable file not found in $PATH");
    c = start("err2", (const char *[]){"/bin/true"}, 1, NULL, 0, "/nonexistent-dir", NULL, &r);
    assert_null(c);
    assert_int_equal(r.err, DRA_EIO);
    assert_string_equal(r.msg, "chdir to cwd (\"/nonexistent-dir\") set in config.json failed: No such file or directory");
    c = start("err3", (const char *[]){""}, 1, NULL, 0, NULL, NULL, &r);
    assert_int_equal(r.err, DRA_EINVAL);
    c = start("bad/id", (const char *[]){"/bin/true"}, 1, NULL, 0, NULL, NULL, &r);
    assert_int_equal(r.err, DRA_EINVAL);
    /* The id is taken. */
    c = start("err1", (const char *[]){"/bin/true"}, 1, NULL, 0, NULL, NULL, &r);
    assert_int_equal(r.err, DRA_EEXIST);
    /* A working directory that exists. */
    c = start("cwd1", (const char *[]){"/bin/pwd"}, 1, NULL, 0, "/usr/share", NULL, &r);
    assert_non_null(c);
    finish(c, "cwd1", &r);
    assert_string_equal(r.log, "/usr/share\n");
}

static void test_hooks(void **state)
{
    run_result r;
    char hook_host[512], hook_in[512], hook_bad[512], mark[512], mark2[512], st[512];
    char script[1024];
    dra_node_cdi_hook hooks[4];
    const char *a_host[] = {"hook-host", "prestart"}, *a_stop[] = {"hook-host", "poststop"};
    const char *henv[] = {"HOOKVAR=42"};
    dra_node_cdi_edits e;
    FILE *f;
    size_t n;
    (void)state;
    path_in(mark, sizeof mark, "mark-prestart");
    path_in(mark2, sizeof mark2, "mark-poststop");
    snprintf(script, sizeof script, "#!/bin/sh\ncat > %s/mark-$1\necho $HOOKVAR >> %s/mark-$1\n", tmpdir, tmpdir);
    write_exec("hook-host", script);
    write_exec("hook-in", "#!/bin/sh\necho made-by-createContainer > /tmp/hook-mark\n");
    write_exec("hook-bad", "#!/bin/sh\nexit 3\n");
    path_in(hook_host, sizeof hook_host, "hook-host");
    path_in(hook_in, sizeof hook_in, "hook-in");
    path_in(hook_bad, sizeof hook_bad, "hook-bad");
    memset(&e, 0, sizeof e);
    memset(hooks, 0, sizeof hooks);
    hooks[0] = (dra_node_cdi_hook){DRA_NODE_CDI_HOOK_PRESTART, "prestart", hook_host, a_host, 2, henv, 1, -1};
    hooks[1] = (dra_node_cdi_hook){DRA_NODE_CDI_HOOK_CREATE_CONTAINER, "createContainer", hook_in, NULL, 0, NULL, 0, 5};
    hooks[2] = (dra_node_cdi_hook){DRA_NODE_CDI_HOOK_POSTSTOP, "poststop", hook_host, a_stop, 2, henv, 1, -1};
    e.hooks = hooks;
    e.n_hooks = 3;
    run("hook1", "cat /tmp/hook-mark", NULL, 0, &e, &r);
    assert_int_equal(r.st.exit_code, 0);
    assert_string_equal(r.log, "made-by-createContainer\n");
    /* The host-side hooks read the OCI state on stdin and their env. */
    f = fopen(mark, "r");
    assert_non_null(f);
    n = fread(st, 1, sizeof st - 1, f);
    fclose(f);
    st[n] = '\0';
    assert_non_null(strstr(st, "\"id\":\"hook1\""));
    assert_non_null(strstr(st, "\"status\":\"created\""));
    assert_non_null(strstr(st, "}42\n")); /* the state has no newline */
    /* poststop runs after the state is written; give it a moment. */
    for (int i = 0; i < 100 && access(mark2, F_OK) != 0; i++)
        usleep(20000);
    assert_int_equal(access(mark2, F_OK), 0);
    /* A failing createContainer hook: the container does not start. */
    hooks[0] = (dra_node_cdi_hook){DRA_NODE_CDI_HOOK_CREATE_CONTAINER, "createContainer", hook_bad, NULL, 0, NULL, 0, -1};
    e.n_hooks = 1;
    start("hook2", (const char *[]){"/bin/true"}, 1, NULL, 0, NULL, &e, &r);
    assert_int_equal(r.err, DRA_EIO);
    assert_non_null(strstr(r.msg, "error running hook"));
    assert_non_null(strstr(r.msg, "exit status 3"));
}

static void test_signals_and_reopen(void **state)
{
    run_result r;
    dra_node_ctr *c, *again;
    dra_node_ctr_status st;
    (void)state;
    /* sh as pid 1 has no SIGTERM handler: the kernel drops the signal,
     * as for a container's pid 1 under any runtime. */
    c = start("sig1", (const char *[]){"/bin/sh", "-c", "sleep 300 & sleep 300; echo never"}, 3, NULL, 0, NULL,
              NULL, &r);
    assert_non_null(c);
    assert_int_equal(dra_node_ctr_status_get(c, &st), DRA_OK);
    assert_int_equal(st.phase, DRA_NODE_CTR_RUNNING);
    assert_true(st.pid > 1);
    /* Forget the handle, as a restarted drad would, and find it again. */
    dra_node_ctr_free(c);
    assert_int_equal(dra_node_ctr_open(rt, "sig1", &again, NULL), DRA_OK);
    assert_int_equal(dra_node_ctr_status_get(again, &st), DRA_OK);
    assert_int_equal(st.phase, DRA_NODE_CTR_RUNNING);
    assert_int_equal(dra_node_ctr_remove(rt, "sig1"), DRA_ECONFLICT);
    assert_int_equal(dra_node_ctr_signal(again, SIGTERM), DRA_OK);
    assert_int_equal(dra_node_ctr_wait(again, 300, &st), DRA_ETIMEOUT);
    assert_int_equal(dra_node_ctr_signal(again, SIGKILL), DRA_OK);
    assert_int_equal(dra_node_ctr_wait(again, 10000, &st), DRA_OK);
    assert_int_equal(st.phase, DRA_NODE_CTR_EXITED);
    assert_int_equal(st.exit_code, 137);
    /* Signalling an ended container is not an error. */
    assert_int_equal(dra_node_ctr_signal(again, SIGKILL), DRA_OK);
    dra_node_ctr_free(again);
    assert_int_equal(dra_node_ctr_remove(rt, "sig1"), DRA_OK);
    assert_int_equal(dra_node_ctr_open(rt, "sig1", &again, NULL), DRA_ENOTFOUND);
    /* A trap: SIGTERM reaches a pid 1 that handles it. */
    c = start("sig2", (const char *[]){"/bin/sh", "-c", "trap 'echo got-term; exit 0' TERM; while :; do sleep 0.05; done"},
              3, NULL, 0, NULL, NULL, &r);
    assert_non_null(c);
    usleep(200000);
    assert_int_equal(dra_node_ctr_signal(c, SIGTERM), DRA_OK);
    finish(c, "sig2", &r);
    assert_int_equal(r.st.exit_code, 0);
    assert_string_equal(r.log, "got-term\n");
}

static void test_logs(void **state)
{
    run_result r;
    char path[512];
    dra_node_log_opts o;
    char out[65536];
    (void)state;
    /* A 40 KiB line becomes partial records and reads back whole. */
    run("log1", "echo one; echo two; head -c 40000 /dev/zero | tr '\\0' x; echo; echo three", NULL, 0, NULL, &r);
    assert_int_equal(r.st.exit_code, 0);
    snprintf(path, sizeof path, "%s/log1.log", tmpdir);
    memset(&o, 0, sizeof o);
    o.tail_lines = 2;
    out[0] = '\0';
    assert_int_equal(dra_node_log_read(path, &o, to_buf, out), DRA_OK);
    assert_int_equal(strlen(out), 40001 + 6);
    assert_int_equal(strncmp(out, "xxxx", 4), 0);
    assert_string_equal(out + 40001, "three\n");
    o.tail_lines = 1;
    o.timestamps = 1;
    out[0] = '\0';
    assert_int_equal(dra_node_log_read(path, &o, to_buf, out), DRA_OK);
    assert_int_equal(strlen(out), 31 + 6);
    assert_string_equal(out + 31, "three\n");
    assert_int_equal(out[30], ' ');
    o.tail_lines = -1;
    o.timestamps = 0;
    o.limit_bytes = 6;
    out[0] = '\0';
    assert_int_equal(dra_node_log_read(path, &o, to_buf, out), DRA_OK);
    assert_string_equal(out, "one\ntw");
    o.limit_bytes = 0;
    o.since_ns = INT64_MAX;
    out[0] = '\0';
    assert_int_equal(dra_node_log_read(path, &o, to_buf, out), DRA_OK);
    assert_string_equal(out, "");
    snprintf(path, sizeof path, "%s/nope.log", tmpdir);
    assert_int_equal(dra_node_log_read(path, NULL, to_buf, out), DRA_ENOTFOUND);
}

/* --follow: returns once the container ended, with everything. */
static int ended(void *ud)
{
    dra_node_ctr_status st;
    return dra_node_ctr_status_get(ud, &st) == DRA_OK && st.phase == DRA_NODE_CTR_EXITED;
}

static void test_follow(void **state)
{
    run_result r;
    dra_node_ctr *c;
    dra_node_log_opts o;
    char path[512], out[4096];
    (void)state;
    c = start("fol1", (const char *[]){"/bin/sh", "-c", "for i in 1 2 3; do echo line$i; sleep 0.1; done"}, 3,
              NULL, 0, NULL, NULL, &r);
    assert_non_null(c);
    snprintf(path, sizeof path, "%s/fol1.log", tmpdir);
    memset(&o, 0, sizeof o);
    o.tail_lines = -1;
    o.follow = 1;
    o.done = ended;
    o.done_ud = c;
    out[0] = '\0';
    assert_int_equal(dra_node_log_read(path, &o, to_buf, out), DRA_OK);
    assert_string_equal(out, "line1\nline2\nline3\n");
    dra_node_ctr_free(c);
}

/* A dra-shim under /tmp (a build tree there) is hidden by the
 * container's own /tmp; the runtime binds it in. The container starts
 * with no signal ignored or blocked (the shim ignores SIGPIPE, SIGHUP
 * and SIGINT itself, and drad blocks SIGTERM: neither may leak in). */
static void test_shim_in_tmp_and_signals(void **state)
{
    dra_node_runtime_opts o;
    dra_node_runtime *saved = rt;
    char shim[512], dir[512], cmd[1200];
    run_result r;
    (void)state;
    path_in(shim, sizeof shim, "dra-shim");
    path_in(dir, sizeof dir, "state-tmpshim");
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", DRA_SHIM_PATH, shim);
    assert_int_equal(system(cmd), 0);
    memset(&o, 0, sizeof o);
    o.state_dir = dir;
    o.shim = shim;
    assert_int_equal(dra_node_runtime_new(&o, NULL, &rt, NULL), DRA_OK);
    run("tmpshim", "grep -E '^Sig(Blk|Ign)' /proc/self/status", NULL, 0, NULL, &r);
    dra_node_runtime_free(rt);
    rt = saved;
    assert_int_equal(r.st.exit_code, 0);
    assert_string_equal(r.log, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
}

static int setup(void **state)
{
    dra_node_runtime_opts o;
    char dir[300];
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dra-test-rt-XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    snprintf(dir, sizeof dir, "%s/state", tmpdir);
    memset(&o, 0, sizeof o);
    o.state_dir = dir;
    return dra_node_runtime_new(&o, NULL, &rt, NULL) == DRA_OK ? 0 : -1;
}

/* Ends whatever a failed test left running, by id, then removes all. */
static int teardown(void **state)
{
    char cmd[400];
    (void)state;
    for (size_t i = 0; i < n_started; i++) {
        dra_node_ctr *c;
        if (dra_node_ctr_open(rt, started[i], &c, NULL) == DRA_OK) {
            dra_node_ctr_signal(c, SIGKILL);
            dra_node_ctr_wait(c, 5000, NULL);
            dra_node_ctr_free(c);
        }
    }
    dra_node_runtime_free(rt);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_output_and_exit),
        cmocka_unit_test(test_env_and_namespaces),
        cmocka_unit_test(test_cdi_devices_and_mounts),
        cmocka_unit_test(test_start_errors),
        cmocka_unit_test(test_hooks),
        cmocka_unit_test(test_signals_and_reopen),
        cmocka_unit_test(test_logs),
        cmocka_unit_test(test_follow),
        cmocka_unit_test(test_shim_in_tmp_and_signals),
    };
    dra_diag d;
    int rc;
    if (setup(NULL) != 0)
        return 1;
    dra_diag_init(&d, NULL);
    if (dra_node_runtime_probe(rt, &d) != DRA_OK) {
        printf("skipping: %s\n", dra_diag_first(&d));
        dra_diag_fini(&d);
        teardown(NULL);
        return 77;
    }
    dra_diag_fini(&d);
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    teardown(NULL);
    return rc;
}
