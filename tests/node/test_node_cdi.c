/* CDI: the name grammar and the parser's messages, spec validation
 * (versions, unknown fields, empty edits, env, hooks, mounts), spec
 * directories (later directory wins, same-directory conflicts dropped,
 * only *.json and *.yaml, broken files skipped), and how edits of
 * several devices merge (spec edits once, device nodes and mounts
 * replaced by path, mounts sorted by depth), plus the
 * "unresolvable CDI devices" error. */
#include <sys/stat.h>
#include <unistd.h>

#include "dra_test.h"

#include "dra/node.h"

static char tmpdir[256];

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    char d[300];
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dra-test-cdi-XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    snprintf(d, sizeof d, "%s/etc", tmpdir);
    mkdir(d, 0755);
    snprintf(d, sizeof d, "%s/run", tmpdir);
    mkdir(d, 0755);
    return 0;
}

static int teardown(void **state)
{
    char cmd[400];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void expect_name_error(const char *id, const char *msg)
{
    dra_arena a;
    dra_diag d;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    assert_int_equal(dra_node_cdi_parse_name(id, &a, NULL, NULL, NULL, &d), DRA_EINVAL);
    assert_string_equal(dra_diag_first(&d), msg);
    dra_diag_fini(&d);
    dra_arena_fini(&a);
}

static void test_names(void **state)
{
    dra_arena a;
    const char *v, *c, *n;
    (void)state;
    dra_arena_init(&a, NULL);
    assert_int_equal(dra_node_cdi_parse_name("k8s.gpu.nvidia.com/claim=0c1d-gpu-0", &a, &v, &c, &n, NULL), DRA_OK);
    assert_string_equal(v, "k8s.gpu.nvidia.com");
    assert_string_equal(c, "claim");
    assert_string_equal(n, "0c1d-gpu-0");
    assert_int_equal(dra_node_cdi_parse_name("a/b=c:d_e.f", &a, NULL, NULL, NULL, NULL), DRA_OK);
    dra_arena_fini(&a);
    expect_name_error("gpu0", "unqualified device \"gpu0\", missing vendor");
    expect_name_error("/dev/nvidia0", "unqualified device \"/dev/nvidia0\", missing vendor");
    expect_name_error("vendor.com/=x", "unqualified device \"vendor.com/=x\", missing vendor");
    expect_name_error("1vendor/class=x",
                      "invalid device \"1vendor/class=x\": invalid vendor. \"1vendor\", should start with letter");
    expect_name_error("vendor-/class=x",
                      "invalid device \"vendor-/class=x\": invalid vendor. \"vendor-\", should end with a letter or digit");
    expect_name_error("vendor/cl:ass=x",
                      "invalid device \"vendor/cl:ass=x\": invalid class. invalid character ':' in name \"cl:ass\"");
    expect_name_error("vendor/class=-x",
                      "invalid device \"vendor/class=-x\": invalid class \"-x\", should start with a letter or digit");
    expect_name_error("vendor/class=x/y",
                      "invalid device \"vendor/class=x/y\": invalid character '/' in device name \"x/y\"");
}

static dra_err parse(const char *text, int json, dra_node_cdi_spec **out, char *msg, size_t size)
{
    static dra_arena a;
    dra_diag d;
    dra_err e;
    dra_arena_fini(&a);
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    e = dra_node_cdi_spec_parse(&a, text, strlen(text), json, out, &d);
    snprintf(msg, size, "%s", dra_diag_first(&d) ? dra_diag_first(&d) : "");
    dra_diag_fini(&d);
    return e;
}

static void test_spec_parse(void **state)
{
    dra_node_cdi_spec *s;
    char msg[512];
    (void)state;
    assert_int_equal(parse("---\ncdiVersion: 0.5.0\nkind: k8s.gpu.nvidia.com/claim\n"
                           "containerEdits:\n  env: [NVIDIA_CTK_LIBCUDA_DIR=/usr/lib]\n"
                           "  hooks:\n  - hookName: createContainer\n    path: /bin/true\n    args: [\"true\", x]\n"
                           "devices:\n- name: 0c1d-gpu-0\n  containerEdits:\n    deviceNodes:\n"
                           "    - path: /dev/nvidia0\n      hostPath: /drv/dev/nvidia0\n      type: c\n"
                           "      major: 195\n      minor: 0\n      permissions: rw\n",
                           0, &s, msg, sizeof msg),
                     DRA_OK);
    assert_string_equal(s->vendor, "k8s.gpu.nvidia.com");
    assert_string_equal(s->class_, "claim");
    assert_int_equal(s->n_devices, 1);
    assert_string_equal(s->devices[0].edits.device_nodes[0].host_path, "/drv/dev/nvidia0");
    assert_int_equal(s->devices[0].edits.device_nodes[0].major, 195);
    assert_int_equal(s->devices[0].edits.device_nodes[0].uid, -1);
    assert_int_equal(s->edits.hooks[0].kind, DRA_NODE_CDI_HOOK_CREATE_CONTAINER);
    assert_int_equal(s->edits.hooks[0].n_args, 2);
    assert_int_equal(s->edits.hooks[0].timeout, -1);
    /* JSON, as containerd reads *.json files. */
    assert_int_equal(parse("{\"cdiVersion\":\"0.3.0\",\"kind\":\"a.com/gpu\",\"devices\":[{\"name\":\"g0\","
                           "\"containerEdits\":{\"env\":[\"A=1\"]}}]}",
                           1, &s, msg, sizeof msg),
                     DRA_OK);
    assert_string_equal(s->devices[0].edits.env[0], "A=1");
}

static void expect_invalid(const char *text, const char *want)
{
    dra_node_cdi_spec *s;
    char msg[512];
    dra_err e = parse(text, 0, &s, msg, sizeof msg);
    assert_true(e == DRA_EINVALID || e == DRA_EPARSE);
    assert_string_equal(msg, want);
}

static void test_spec_invalid(void **state)
{
    (void)state;
    expect_invalid("cdiVersion: 0.9.0\nkind: a.com/gpu\ndevices: [{name: g, containerEdits: {env: [A=1]}}]\n",
                   "invalid version \"0.9.0\"");
    expect_invalid("cdiVersion: 0.3.0\nkind: a.com/gpu\ndevices: [{name: 0g, containerEdits: {env: [A=1]}}]\n",
                   "the spec version must be at least v0.5.0");
    expect_invalid("cdiVersion: 0.4.0\nkind: a.com/gpu\ndevices: [{name: g, containerEdits: {deviceNodes: "
                   "[{path: /dev/x, hostPath: /x}]}}]\n",
                   "the spec version must be at least v0.5.0");
    expect_invalid("cdiVersion: 0.5.0\nkind: a.com/g.pu\ndevices: [{name: g, containerEdits: {env: [A=1]}}]\n",
                   "the spec version must be at least v0.6.0");
    expect_invalid("cdiVersion: 0.3.0\nkind: a.com/gpu\ndevices: [{name: g, containerEdits: {mounts: "
                   "[{hostPath: /a, containerPath: /b, type: bind}]}}]\n",
                   "the spec version must be at least v0.4.0");
    expect_invalid("cdiVersion: 1.0.0\nkind: gpu\ndevices: [{name: g, containerEdits: {env: [A=1]}}]\n",
                   "invalid vendor/class \"gpu\" in Spec");
    expect_invalid("cdiVersion: 1.0.0\nkind: a.com/gpu\ndevices: []\n", "invalid spec, no devices");
    expect_invalid("cdiVersion: 1.0.0\nkind: a.com/gpu\ndevices: [{name: g, containerEdits: {}}]\n",
                   "failed add device \"g\": invalid device, empty device edits");
    expect_invalid("cdiVersion: 1.0.0\nkind: a.com/gpu\ndevices: [{name: g, containerEdits: {env: [=1]}}]\n",
                   "failed add device \"g\": invalid device \"g\": invalid container edits: invalid environment "
                   "variable \"=1\"");
    expect_invalid("cdiVersion: 1.0.0\nkind: a.com/gpu\ndevices: [{name: g, containerEdits: {hooks: "
                   "[{hookName: preStart, path: /x}]}}]\n",
                   "failed add device \"g\": invalid device \"g\": invalid hook name \"preStart\"");
    expect_invalid("cdiVersion: 1.0.0\nkind: a.com/gpu\ndevices: [{name: g, containerEdits: {deviceNodes: "
                   "[{path: /dev/x, type: z}]}}]\n",
                   "failed add device \"g\": invalid device \"g\": device \"/dev/x\": invalid type \"z\"");
    expect_invalid("cdiVersion: 1.0.0\nkind: a.com/gpu\ndevices: [{name: g, containerEdits: {deviceNodes: "
                   "[{path: /dev/x, permissions: rwx}]}}]\n",
                   "failed add device \"g\": invalid device \"g\": device \"/dev/x\": invalid permissions \"rwx\"");
    expect_invalid("cdiVersion: 1.0.0\nkind: a.com/gpu\ndevices: [{name: g, containerEdits: {mounts: "
                   "[{containerPath: /b}]}}]\n",
                   "failed add device \"g\": invalid device \"g\": invalid mount, empty host path");
    expect_invalid("cdiVersion: 1.0.0\nkind: a.com/gpu\ndevices: [{name: g, containerEdits: {env: [A=1]}}, "
                   "{name: g, containerEdits: {env: [B=1]}}]\n",
                   "invalid spec, multiple device \"g\"");
    expect_invalid("cdiVersion: 1.0.0\nkind: a.com/gpu\nextra: 1\ndevices: [{name: g, containerEdits: {env: [A=1]}}]\n",
                   "failed to unmarshal CDI Spec: unknown field \"extra\"");
    expect_invalid("cdiVersion: 1.0.0\nkind: [a]\ndevices: [{name: g, containerEdits: {env: [A=1]}}]\n",
                   "failed to unmarshal CDI Spec: kind: expected a string");
    expect_invalid("cdiVersion: 1.0.0\nkind: a.com/gpu\ndevices: [{name: g, containerEdits: {deviceNodes: "
                   "[{path: /dev/x, major: x}]}}]\n",
                   "failed to unmarshal CDI Spec: major: expected an integer");
    expect_invalid("cdiVersion: 1.0.0\nkind: a.com/gpu\ndevices: [{name: g, containerEdits: {env: A=1}}]\n",
                   "failed to unmarshal CDI Spec: env: expected a list");
    expect_invalid("- just\n- a list\n", "failed to parse CDI Spec, no Spec data");
    expect_invalid("cdiVersion: [\n", "did not find expected node content while parsing a flow node");
}

static dra_err resolve(const char *const *ids, size_t n, dra_arena *a, dra_node_cdi_edits *e, char *msg, size_t size)
{
    char etc[300], run[300];
    const char *dirs[2] = {etc, run};
    dra_diag d;
    dra_err err;
    snprintf(etc, sizeof etc, "%s/etc", tmpdir);
    snprintf(run, sizeof run, "%s/run", tmpdir);
    dra_diag_init(&d, NULL);
    err = dra_node_cdi_resolve(dirs, 2, ids, n, a, e, &d);
    snprintf(msg, size, "%s", dra_diag_first(&d) ? dra_diag_first(&d) : "");
    dra_diag_fini(&d);
    return err;
}

static void test_resolve(void **state)
{
    char etc[300], run[300], msg[512];
    dra_arena a;
    dra_node_cdi_edits e;
    (void)state;
    snprintf(etc, sizeof etc, "%s/etc", tmpdir);
    snprintf(run, sizeof run, "%s/run", tmpdir);
    write_file(etc, "vendor.yaml",
               "cdiVersion: 0.5.0\nkind: v.com/gpu\ncontainerEdits:\n  env: [COMMON=etc]\n"
               "devices:\n- name: g0\n  containerEdits: {env: [WHO=etc-g0]}\n"
               "- name: g1\n  containerEdits: {env: [WHO=etc-g1]}\n");
    /* The same device in the higher-priority directory wins. */
    write_file(run, "v-gpu_claim.json",
               "{\"cdiVersion\":\"0.5.0\",\"kind\":\"v.com/gpu\",\"containerEdits\":{\"env\":[\"COMMON=run\"],"
               "\"mounts\":[{\"hostPath\":\"/a\",\"containerPath\":\"/usr/lib/x/y\"},"
               "{\"hostPath\":\"/b\",\"containerPath\":\"/opt\"}]},"
               "\"devices\":[{\"name\":\"g1\",\"containerEdits\":{\"env\":[\"WHO=run-g1\"],"
               "\"deviceNodes\":[{\"path\":\"/dev/nvidia1\"},{\"path\":\"/dev/nvidiactl\",\"hostPath\":\"/h1\"}]}},"
               "{\"name\":\"g2\",\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/nvidiactl\",\"hostPath\":\"/h2\"}],"
               "\"mounts\":[{\"hostPath\":\"/c\",\"containerPath\":\"/opt\"}]}}]}");
    /* Two files in one directory defining the same device: a conflict. */
    write_file(run, "dup1.yaml", "cdiVersion: 0.5.0\nkind: d.com/x\ndevices: [{name: a, containerEdits: {env: [A=1]}}]\n");
    write_file(run, "dup2.yaml", "cdiVersion: 0.5.0\nkind: d.com/x\ndevices: [{name: a, containerEdits: {env: [A=2]}}]\n");
    /* Ignored: other extensions, subdirectories; skipped: broken specs. */
    write_file(run, "notes.txt", "cdiVersion: nope");
    write_file(run, "broken.yaml", "cdiVersion: 0.5.0\nkind: b.com/x\ndevices: [}\n");
    dra_arena_init(&a, NULL);
    {
        const char *ids[] = {"v.com/gpu=g1", "v.com/gpu=g0", "v.com/gpu=g2", "v.com/gpu=g1"};
        assert_int_equal(resolve(ids, 4, &a, &e, msg, sizeof msg), DRA_OK);
    }
    /* g1 from run (its spec's edits first), then g0 from etc (its spec's
     * edits, then its own), then g2 (same spec as g1: no repeat). */
    assert_int_equal(e.n_env, 4);
    assert_string_equal(e.env[0], "COMMON=run");
    assert_string_equal(e.env[1], "WHO=run-g1");
    assert_string_equal(e.env[2], "COMMON=etc");
    assert_string_equal(e.env[3], "WHO=etc-g0");
    /* /dev/nvidiactl from g2 replaced g1's. */
    assert_int_equal(e.n_device_nodes, 2);
    assert_string_equal(e.device_nodes[0].path, "/dev/nvidia1");
    assert_null(e.device_nodes[0].host_path);
    assert_string_equal(e.device_nodes[1].host_path, "/h2");
    /* /opt from g2 replaced the spec's; sorted by depth. */
    assert_int_equal(e.n_mounts, 2);
    assert_string_equal(e.mounts[0].container_path, "/opt");
    assert_string_equal(e.mounts[0].host_path, "/c");
    assert_string_equal(e.mounts[1].container_path, "/usr/lib/x/y");
    {
        const char *ids[] = {"d.com/x=a", "v.com/gpu=g0", "v.com/gpu=nope"};
        assert_int_equal(resolve(ids, 3, &a, &e, msg, sizeof msg), DRA_ENOTFOUND);
        assert_string_equal(msg, "unresolvable CDI devices d.com/x=a, v.com/gpu=nope");
    }
    {
        const char *ids[] = {"b.com/x=a"};
        assert_int_equal(resolve(ids, 1, &a, &e, msg, sizeof msg), DRA_ENOTFOUND);
        assert_string_equal(msg, "unresolvable CDI devices b.com/x=a");
    }
    {
        const char *ids[] = {"nvidia.com/gpu"};
        assert_int_equal(resolve(ids, 1, &a, &e, msg, sizeof msg), DRA_EINVAL);
    }
    /* No ids: nothing to read, nothing to apply. */
    assert_int_equal(resolve(NULL, 0, &a, &e, msg, sizeof msg), DRA_OK);
    assert_int_equal(e.n_env, 0);
    dra_arena_fini(&a);
}

/* Every allocation failure gives DRA_ENOMEM or success, never a crash
 * or a leak. */
static void test_failmalloc(void **state)
{
    static const char spec[] = "cdiVersion: 0.5.0\nkind: f.com/gpu\ncontainerEdits: {env: [A=1]}\n"
                               "devices:\n- name: g0\n  containerEdits:\n    deviceNodes: [{path: /dev/x}]\n"
                               "    mounts: [{hostPath: /a, containerPath: /b, options: [ro]}]\n";
    (void)state;
    for (long i = 0;; i++) {
        dra_failmem fm;
        dra_arena a;
        dra_node_cdi_spec *s = NULL;
        dra_err e;
        dra_failmem_init(&fm, i);
        dra_arena_init(&a, &fm.mem);
        e = dra_node_cdi_spec_parse(&a, spec, sizeof spec - 1, 0, &s, NULL);
        dra_arena_fini(&a);
        assert_int_equal(fm.live, 0);
        if (!fm.failed) {
            assert_int_equal(e, DRA_OK);
            break;
        }
        assert_true(e == DRA_ENOMEM || e == DRA_EPARSE);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_spec_parse),
        cmocka_unit_test(test_spec_invalid),
        cmocka_unit_test_setup_teardown(test_resolve, setup, teardown),
        cmocka_unit_test(test_failmalloc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
