/*
 * tests/plugin/test_plugin_prepare.c: prepare and unprepare on a fake
 * driver root (the H100 node: four full GPUs, four in MIG mode), without
 * sockets: the CDI spec written for a claim (kind, cdiVersion, device
 * names, device nodes with host paths, driver mounts, the fake NVML's
 * env), idempotency, a restart between prepare and unprepare, recovery
 * of half-done work, device overlap, per-claim errors, opaque configs
 * (time-slicing through the fake nvidia-smi, MPS with a stub control
 * daemon), concurrency, and device health (taints, refused prepares,
 * recovery).
 */
#include "gpu/gpu_fixture.h" /* first: it sets _GNU_SOURCE */

#include <pthread.h>
#include <sys/stat.h>

#include "plugin/plugin_int.h"

#define NODE "h100-node-01"

typedef struct pfx {
    fx f;
    dra_arena inv_arena;
    dra_gpu *g;
    dra_gpu_inventory *inv;
    char cdi[400], plugins[400], reg[400];
    dra_plugin_opts o;
    dra_plugin *p;
} pfx;

static void make_stub_mps(const pfx *x)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/usr/bin/nvidia-cuda-mps-control", x->f.root);
    FILE *s = fopen(path, "w");
    assert_non_null(s);
    /* -d: start (records it); otherwise a command on stdin (recorded). */
    fprintf(s, "#!/bin/sh\nif [ \"$1\" = -d ]; then echo started \"$CUDA_VISIBLE_DEVICES\" >> "
               "\"$CUDA_MPS_LOG_DIRECTORY/control.log\"; exit 0; fi\n"
               "cat >> \"$CUDA_MPS_LOG_DIRECTORY/control.log\"\n");
    fclose(s);
    chmod(path, 0755);
}

static void plugin_open(pfx *x)
{
    dra_diag d;
    dra_diag_init(&d, NULL);
    dra_err e = plugin_new_with_inventory(&x->o, x->inv, NULL, &x->p, &d);
    if (e != DRA_OK)
        fail_msg("plugin: %s", dra_diag_first(&d) ? dra_diag_first(&d) : dra_strerror(e));
    dra_diag_fini(&d);
}

static pfx *setup_with(int mps)
{
    pfx *x = calloc(1, sizeof(*x));
    fx_make(&x->f, "h100.yaml", NULL);
    if (mps)
        make_stub_mps(x);
    x->g = fx_open(&x->f, NULL);
    dra_arena_init(&x->inv_arena, NULL);
    x->inv = fx_discover(x->g, &x->inv_arena);
    snprintf(x->cdi, sizeof(x->cdi), "%s/cdi", x->f.dir);
    snprintf(x->plugins, sizeof(x->plugins), "%s/plugins", x->f.dir);
    snprintf(x->reg, sizeof(x->reg), "%s/registry", x->f.dir);
    dra_plugin_opts_default(&x->o);
    x->o.node_name = NODE;
    x->o.cdi_root = x->cdi;
    x->o.plugins_dir = x->plugins;
    x->o.registrar_dir = x->reg;
    x->o.nvidia_driver_root = x->f.root;
    x->o.container_driver_root = x->f.root;
    plugin_open(x);
    return x;
}

static int setup(void **state)
{
    *state = setup_with(0);
    return 0;
}

static int teardown(void **state)
{
    pfx *x = *state;
    dra_plugin_free(x->p);
    dra_arena_fini(&x->inv_arena);
    dra_gpu_close(x->g);
    fx_rm(&x->f);
    free(x);
    return 0;
}

static void restart(pfx *x)
{
    dra_plugin_free(x->p);
    x->p = NULL;
    plugin_open(x);
}

/* A claim allocated with |results| ("request:device[:pool[:admin]]" items,
 * space separated) and optional config YAML lines. */
static dra_doc *claim(dra_arena *a, const char *uid, const char *results, const char *config)
{
    dra_buf y;
    dra_buf_init(&y, NULL);
    dra_buf_printf(&y, "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                       "metadata: {name: claim-%s, namespace: default, uid: %s}\n"
                       "spec: {devices: {requests: []}}\nstatus:\n  allocation:\n"
                       "    devices:\n      results:\n",
                   uid, uid);
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", results);
    char *save = NULL;
    for (char *it = strtok_r(buf, " ", &save); it; it = strtok_r(NULL, " ", &save)) {
        char *req = it, *dev = strchr(req, ':');
        *dev++ = '\0';
        char *pool = strchr(dev, ':');
        int admin = 0;
        if (pool) {
            *pool++ = '\0';
            char *adm = strchr(pool, ':');
            if (adm) {
                *adm = '\0';
                admin = 1;
            }
        }
        const char *drv = strcmp(req, "other") == 0 ? "other.example.com" : "gpu.nvidia.com";
        dra_buf_printf(&y, "      - {request: %s, driver: %s, pool: %s, device: %s%s}\n", req, drv,
                       pool && *pool ? pool : NODE, dev, admin ? ", adminAccess: true" : "");
    }
    if (config)
        dra_buf_printf(&y, "      config:\n%s", config);
    dra_doc **docs;
    size_t n;
    dra_diag d;
    dra_diag_init(&d, NULL);
    if (dra_doc_parse_yaml(a, y.p, y.len, &docs, &n, &d) != DRA_OK)
        fail_msg("claim yaml: %s\n%s", dra_diag_first(&d), y.p);
    dra_diag_fini(&d);
    dra_buf_fini(&y);
    return docs[0];
}

static dra_plugin_claim_result prepare(pfx *x, dra_arena *a, dra_doc *c)
{
    dra_plugin_claim_result r;
    plugin_prepare_doc(x->p, c, a, &r);
    return r;
}

static void expect_ok(const dra_plugin_claim_result *r)
{
    if (r->error && *r->error)
        fail_msg("prepare failed: %s", r->error);
}

static void expect_err(const dra_plugin_claim_result *r, const char *part)
{
    if (!r->error || !strstr(r->error, part))
        fail_msg("want an error with \"%s\", got \"%s\"", part, r->error ? r->error : "(none)");
}

static char *cdi_path(pfx *x, const char *uid, char *buf, size_t size)
{
    snprintf(buf, size, "%s/k8s.gpu.nvidia.com-claim_%s.yaml", x->cdi, uid);
    return buf;
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* The spec file, parsed. */
static dra_doc *read_spec(pfx *x, dra_arena *a, const char *uid)
{
    char path[600];
    size_t len;
    char *text = dra_test_slurp(cdi_path(x, uid, path, sizeof(path)), &len);
    assert_int_equal(strncmp(text, "---\n", 4), 0);
    dra_doc **docs;
    size_t n;
    assert_int_equal(dra_doc_parse_yaml(a, text, len, &docs, &n, NULL), DRA_OK);
    free(text);
    assert_int_equal(n, 1);
    return docs[0];
}

static const dra_doc *find_in(const dra_doc *list, const char *key, const char *val)
{
    for (size_t i = 0; list && i < list->u.list.n; i++) {
        const dra_doc *v = dra_doc_get(list->u.list.items[i], key);
        if (v && v->kind == DRA_DOC_STRING && strcmp(v->u.str.s, val) == 0)
            return list->u.list.items[i];
    }
    return NULL;
}

static int has_str(const dra_doc *list, const char *s)
{
    for (size_t i = 0; list && i < list->u.list.n; i++)
        if (list->u.list.items[i]->kind == DRA_DOC_STRING &&
            strcmp(list->u.list.items[i]->u.str.s, s) == 0)
            return 1;
    return 0;
}

static const char *str_at(const dra_doc *m, const char *key)
{
    const dra_doc *v = dra_doc_get(m, key);
    return v && v->kind == DRA_DOC_STRING ? v->u.str.s : NULL;
}

static void check_gpu0_spec(pfx *x, dra_arena *a, const char *uid)
{
    dra_doc *s = read_spec(x, a, uid);
    char want[600];
    assert_string_equal(str_at(s, "cdiVersion"), "0.5.0");
    assert_string_equal(str_at(s, "kind"), "k8s.gpu.nvidia.com/claim");
    const dra_doc *devs = dra_doc_get(s, "devices");
    assert_int_equal(devs->u.list.n, 1);
    snprintf(want, sizeof(want), "%s-gpu-0", uid);
    assert_string_equal(str_at(devs->u.list.items[0], "name"), want);
    const dra_doc *nodes =
        dra_doc_get(dra_doc_get(devs->u.list.items[0], "containerEdits"), "deviceNodes");
    const dra_doc *n0 = find_in(nodes, "path", "/dev/nvidia0");
    assert_non_null(n0);
    snprintf(want, sizeof(want), "%s/dev/nvidia0", x->f.root);
    assert_string_equal(str_at(n0, "hostPath"), want);
    const dra_doc *ce = dra_doc_get(s, "containerEdits");
    assert_non_null(find_in(dra_doc_get(ce, "deviceNodes"), "path", "/dev/nvidiactl"));
    const dra_doc *mounts = dra_doc_get(ce, "mounts");
    const dra_doc *smi = find_in(mounts, "containerPath", "/usr/bin/nvidia-smi");
    assert_non_null(smi);
    snprintf(want, sizeof(want), "%s/usr/bin/nvidia-smi", x->f.root);
    assert_string_equal(str_at(smi, "hostPath"), want);
    assert_true(has_str(dra_doc_get(smi, "options"), "ro"));
    assert_true(has_str(dra_doc_get(smi, "options"), "rbind"));
    assert_non_null(find_in(mounts, "containerPath", "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"));
    /* The fake root's device nodes are plain files: listed with their
     * host path (drad binds them) and fully specified, type c with the
     * driver's numbers, so containerd would accept the spec too. */
    assert_string_equal(str_at(n0, "type"), "c");
    assert_int_equal(dra_doc_get(n0, "major")->u.i, 195);
    assert_int_equal(dra_doc_get(n0, "minor")->u.i, 0);
    const dra_doc *ctl = find_in(dra_doc_get(ce, "deviceNodes"), "path", "/dev/nvidiactl");
    snprintf(want, sizeof(want), "%s/dev/nvidiactl", x->f.root);
    assert_string_equal(str_at(ctl, "hostPath"), want);
    assert_string_equal(str_at(ctl, "type"), "c");
    assert_int_equal(dra_doc_get(ctl, "minor")->u.i, 255);
    const dra_doc *uvm = find_in(dra_doc_get(ce, "deviceNodes"), "path", "/dev/nvidia-uvm");
    assert_int_equal(dra_doc_get(uvm, "major")->u.i, 509);
    /* No host path of the driver root in the environment: a container's
     * /tmp is private, and the fake NVML reads its node from nvidiactl. */
    const dra_doc *env = dra_doc_get(ce, "env");
    for (size_t i = 0; env && i < env->u.list.n; i++)
        assert_null(strstr(env->u.list.items[i]->u.str.s, "DRA_FAKE_NVML"));
}

static int cp_has(pfx *x, const char *uid, int state)
{
    dra_arena a;
    dra_arena_init(&a, NULL);
    plugin_cp cp;
    assert_int_equal(plugin_cp_read(x->p->plugin_dir, &a, &cp, NULL), DRA_OK);
    plugin_cp_claim *c = plugin_cp_find(&cp, uid);
    int r = c && (state == 0 || c->state == state);
    dra_arena_fini(&a);
    return r;
}

/* ---- the tests --------------------------------------------------------------- */

static void test_prepare_unprepare_restart(void **state)
{
    pfx *x = *state;
    dra_arena a;
    dra_arena_init(&a, NULL);
    const char *uid = "7f1c3c5e-0b1d-4c55-9b59-3b0c3bb4a001";
    dra_plugin_claim_result r = prepare(x, &a, claim(&a, uid, "gpu:gpu-0", NULL));
    expect_ok(&r);
    assert_int_equal(r.n_devices, 1);
    assert_string_equal(r.devices[0].device_name, "gpu-0");
    assert_string_equal(r.devices[0].pool_name, NODE);
    assert_string_equal(r.devices[0].request_names[0], "gpu");
    assert_string_equal(r.devices[0].cdi_device_ids[0],
                        "k8s.gpu.nvidia.com/claim=7f1c3c5e-0b1d-4c55-9b59-3b0c3bb4a001-gpu-0");
    check_gpu0_spec(x, &a, uid);
    assert_true(cp_has(x, uid, PLUGIN_CP_COMPLETED));

    /* Again: the same answer, from the checkpoint. */
    dra_plugin_claim_result r2 = prepare(x, &a, claim(&a, uid, "gpu:gpu-0", NULL));
    expect_ok(&r2);
    assert_string_equal(r2.devices[0].cdi_device_ids[0], r.devices[0].cdi_device_ids[0]);

    /* A restart answers the same, then unprepare removes everything. */
    restart(x);
    r2 = prepare(x, &a, claim(&a, uid, "gpu:gpu-0", NULL));
    expect_ok(&r2);
    assert_string_equal(r2.devices[0].cdi_device_ids[0], r.devices[0].cdi_device_ids[0]);
    restart(x);
    dra_plugin_claim_ref ref = {"default", uid, "claim-x"};
    dra_plugin_claim_result *ur;
    plugin_unprepare(x->p, &ref, 1, &a, &ur);
    assert_null(ur[0].error);
    char path[600];
    assert_false(exists(cdi_path(x, uid, path, sizeof(path))));
    assert_false(cp_has(x, uid, 0));
    /* Unpreparing what is not prepared succeeds. */
    plugin_unprepare(x->p, &ref, 1, &a, &ur);
    assert_null(ur[0].error);
    dra_arena_fini(&a);
}

static void test_subrequest_and_other_drivers(void **state)
{
    pfx *x = *state;
    dra_arena a;
    dra_arena_init(&a, NULL);
    dra_plugin_claim_result r =
        prepare(x, &a, claim(&a, "uid-sub", "gpus/big:gpu-1 other:gpu-9 gpus/big:gpu-2", NULL));
    expect_ok(&r);
    assert_int_equal(r.n_devices, 2);
    assert_string_equal(r.devices[0].request_names[0], "gpus");
    dra_doc *s = read_spec(x, &a, "uid-sub");
    assert_int_equal(dra_doc_get(s, "devices")->u.list.n, 2);
    dra_arena_fini(&a);
}

static void test_errors(void **state)
{
    pfx *x = *state;
    dra_arena a;
    dra_arena_init(&a, NULL);
    dra_plugin_claim_result r = prepare(x, &a, claim(&a, "u-e1", "gpu:gpu-42", NULL));
    assert_string_equal(r.error, "error preparing devices for claim default/claim-u-e1:u-e1: "
                                 "prepare devices failed: requested device is not allocatable: "
                                 "gpu-42");
    r = prepare(x, &a, claim(&a, "u-e2", "gpu:gpu-0:other-node", NULL));
    expect_err(&r, "gpu-0 is in pool other-node, this node's pool is " NODE);
    /* Nothing is left behind by a failed prepare. */
    char path[600];
    assert_false(exists(cdi_path(x, "u-e1", path, sizeof(path))));
    assert_false(cp_has(x, "u-e1", 0));
    const char *unalloc = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                          "metadata: {name: c, namespace: default, uid: u-e3}\nspec: {}\n";
    dra_doc **docs;
    size_t n;
    assert_int_equal(dra_doc_parse_yaml(&a, unalloc, strlen(unalloc), &docs, &n, NULL), DRA_OK);
    r = prepare(x, &a, docs[0]);
    expect_err(&r, "claim not yet allocated");
    dra_arena_fini(&a);
}

static void test_overlap(void **state)
{
    pfx *x = *state;
    dra_arena a;
    dra_arena_init(&a, NULL);
    dra_plugin_claim_result r = prepare(x, &a, claim(&a, "u-a", "gpu:gpu-3", NULL));
    expect_ok(&r);
    r = prepare(x, &a, claim(&a, "u-b", "gpu:gpu-3", NULL));
    expect_err(&r, "requested device gpu-3 is already allocated to different claim u-a");
    /* Admin access may share it. */
    r = prepare(x, &a, claim(&a, "u-c", "gpu:gpu-3::admin", NULL));
    expect_ok(&r);
    dra_arena_fini(&a);
}

#define CFG(src, reqs, params)                                                              \
    "      - source: " src "\n        requests: " reqs "\n        opaque: {driver: "           \
    "gpu.nvidia.com, parameters: {apiVersion: resource.nvidia.com/v1beta1, " params "}}\n"

static void test_configs(void **state)
{
    pfx *x = *state;
    dra_arena a;
    dra_arena_init(&a, NULL);
    dra_plugin_claim_result r = prepare(
        x, &a, claim(&a, "u-c1", "gpu:gpu-0", CFG("FromClaim", "[gpu]", "kind: GpuConfig, foo: 1")));
    expect_err(&r, "prepare devices failed: error getting opaque device configs: error decoding "
                   "config parameters: strict decoding error: unknown field \"foo\"");
    r = prepare(x, &a, claim(&a, "u-c2", "gpu:gpu-0",
                             CFG("FromClaim", "[gpu]", "kind: MigDeviceConfig")));
    expect_err(&r, "cannot apply MigDeviceConfig to device type gpu (request: gpu)");
    r = prepare(x, &a, claim(&a, "u-c3", "gpu:gpu-0",
                             CFG("FromClaim", "[]",
                                 "kind: GpuConfig, sharing: {strategy: TimeSlicing}")));
    expect_err(&r, "error validating GPU config: unknown GPU sharing strategy: TimeSlicing");

    /* With the gate, time-slicing runs the driver's nvidia-smi. */
    dra_plugin_free(x->p);
    x->p = NULL;
    x->o.gates.time_slicing_settings = 1;
    plugin_open(x);
    r = prepare(x, &a, claim(&a, "u-c4", "gpu:gpu-0",
                             CFG("FromClass", "[]",
                                 "kind: GpuConfig, sharing: {strategy: TimeSlicing, "
                                 "timeSlicingConfig: {interval: Long}}")));
    expect_ok(&r);
    dra_plugin_claim_ref ref = {"default", "u-c4", "claim-u-c4"};
    dra_plugin_claim_result *ur;
    plugin_unprepare(x->p, &ref, 1, &a, &ur);
    assert_null(ur[0].error);
    r = prepare(x, &a, claim(&a, "u-c5", "gpu:gpu-0",
                             CFG("FromClaim", "[gpu]",
                                 "kind: GpuConfig, sharing: {strategy: TimeSlicing, "
                                 "mpsConfig: {}}")));
    expect_err(&r, "cannot use MpsConfig with the 'TimeSlicing' strategy");
    dra_arena_fini(&a);
}

static void test_mps(void **state)
{
    (void)state;
    pfx *x = setup_with(1);
    dra_plugin_free(x->p);
    x->p = NULL;
    x->o.gates.mps_support = 1;
    plugin_open(x);
    dra_arena a;
    dra_arena_init(&a, NULL);
    dra_plugin_claim_result r = prepare(
        x, &a, claim(&a, "u-mps", "gpu:gpu-1 gpu:gpu-2",
                     CFG("FromClaim", "[gpu]",
                         "kind: GpuConfig, sharing: {strategy: MPS, mpsConfig: "
                         "{defaultActiveThreadPercentage: 50, defaultPinnedDeviceMemoryLimit: 10Gi}}")));
    expect_ok(&r);
    dra_doc *s = read_spec(x, &a, "u-mps");
    const dra_doc *dev = dra_doc_get(s, "devices")->u.list.items[0];
    const dra_doc *ce = dra_doc_get(dev, "containerEdits");
    assert_true(has_str(dra_doc_get(ce, "env"), "CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps"));
    const dra_doc *pipe = find_in(dra_doc_get(ce, "mounts"), "containerPath", "/tmp/nvidia-mps");
    assert_non_null(pipe);
    assert_non_null(strstr(str_at(pipe, "hostPath"), "/plugins/gpu.nvidia.com/mps/u-mps-"));
    /* The stub daemon got its settings, one command per run. */
    char log[800];
    size_t len;
    char root[700];
    snprintf(root, sizeof(root), "%s", str_at(pipe, "hostPath"));
    *strrchr(root, '/') = '\0';
    snprintf(log, sizeof(log), "%s/log/control.log", root);
    char *text = dra_test_slurp(log, &len);
    assert_non_null(strstr(text, "started GPU-"));
    assert_non_null(strstr(text, "set_default_active_thread_percentage 50"));
    assert_non_null(strstr(text, "set_default_device_pinned_mem_limit GPU-"));
    assert_non_null(strstr(text, " 10240M"));
    free(text);
    dra_plugin_claim_ref ref = {"default", "u-mps", "claim-u-mps"};
    dra_plugin_claim_result *ur;
    plugin_unprepare(x->p, &ref, 1, &a, &ur);
    assert_null(ur[0].error);
    assert_false(exists(root));
    dra_arena_fini(&a);
    void *st = x;
    teardown(&st);
}

static void test_mig(void **state)
{
    pfx *x = *state;
    const plugin_devstate *mig = NULL;
    for (size_t i = 0; i < x->p->n_devs && !mig; i++)
        if (x->p->devs[i].mig)
            mig = &x->p->devs[i];
    assert_non_null(mig);
    dra_arena a;
    dra_arena_init(&a, NULL);
    char res[200];
    snprintf(res, sizeof(res), "mig:%s", mig->name);
    dra_plugin_claim_result r = prepare(x, &a, claim(&a, "u-mig", res, NULL));
    expect_ok(&r);
    dra_doc *s = read_spec(x, &a, "u-mig");
    const dra_doc *nodes = dra_doc_get(
        dra_doc_get(dra_doc_get(s, "devices")->u.list.items[0], "containerEdits"), "deviceNodes");
    assert_int_equal(nodes->u.list.n, 3);
    char want[100];
    snprintf(want, sizeof(want), "/dev/nvidia%u", mig->gpu->minor);
    assert_non_null(find_in(nodes, "path", want));
    const dra_doc *cap = nodes->u.list.items[1];
    assert_non_null(strstr(str_at(cap, "path"), "/dev/nvidia-caps/nvidia-cap"));
    assert_string_equal(str_at(cap, "type"), "c");
    assert_int_equal(dra_doc_get(cap, "minor")->u.i, mig->mig->cap_gi.minor);
    /* A MIG config fits a MIG device. */
    r = prepare(x, &a, claim(&a, "u-mig2", res, CFG("FromClaim", "[mig]", "kind: MigDeviceConfig")));
    expect_err(&r, "already allocated to different claim u-mig");
    dra_arena_fini(&a);
}

static void test_recovery(void **state)
{
    pfx *x = *state;
    dra_arena a;
    dra_arena_init(&a, NULL);
    /* A crash after PrepareStarted and the CDI write, before
     * PrepareCompleted; and a CDI file nobody owns. */
    plugin_cp cp;
    assert_int_equal(plugin_cp_read(x->p->plugin_dir, &a, &cp, NULL), DRA_OK);
    plugin_cp_claim half = {"u-half", PLUGIN_CP_STARTED, "c", "default", NULL, NULL, 0};
    assert_int_equal(plugin_cp_put(&cp, &a, &half), DRA_OK);
    cp.boot_id = x->p->boot_id;
    assert_int_equal(plugin_cp_write(x->p->plugin_dir, &cp, NULL, 1, NULL), DRA_OK);
    char p1[600], p2[600];
    FILE *f = fopen(cdi_path(x, "u-half", p1, sizeof(p1)), "w");
    fputs("---\n", f);
    fclose(f);
    f = fopen(cdi_path(x, "u-orphan", p2, sizeof(p2)), "w");
    fputs("---\n", f);
    fclose(f);
    restart(x);
    assert_false(exists(p1));
    assert_false(exists(p2));
    assert_false(cp_has(x, "u-half", 0));
    /* The kubelet's retry then prepares it from scratch. */
    dra_plugin_claim_result r = prepare(x, &a, claim(&a, "u-half", "gpu:gpu-1", NULL));
    expect_ok(&r);

    /* A corrupted checkpoint stops the plugin with a clear error. */
    char cpf[600];
    snprintf(cpf, sizeof(cpf), "%s/checkpoint.json", x->p->plugin_dir);
    size_t len;
    char *text = dra_test_slurp(cpf, &len);
    char *hit = strstr(text, "gpu-1");
    hit[4] = '7';
    f = fopen(cpf, "w");
    fwrite(text, 1, len, f);
    fclose(f);
    free(text);
    dra_plugin_free(x->p);
    x->p = NULL;
    dra_diag d;
    dra_diag_init(&d, NULL);
    assert_int_equal(plugin_new_with_inventory(&x->o, x->inv, NULL, &x->p, &d), DRA_EINVALID);
    assert_non_null(strstr(dra_diag_first(&d), "checkpoint is corrupted"));
    dra_diag_fini(&d);
    unlink(cpf);
    plugin_open(x);
    dra_arena_fini(&a);
}

typedef struct par {
    pfx *x;
    int gpu;
    int ok;
} par;

static void *par_prepare(void *arg)
{
    par *p = arg;
    dra_arena a;
    dra_arena_init(&a, NULL);
    char uid[32], res[32];
    snprintf(uid, sizeof(uid), "u-par-%d", p->gpu);
    snprintf(res, sizeof(res), "gpu:gpu-%d", p->gpu);
    for (int i = 0; i < 5; i++) {
        dra_plugin_claim_result r = prepare(p->x, &a, claim(&a, uid, res, NULL));
        dra_plugin_claim_ref ref = {"default", uid, uid};
        dra_plugin_claim_result *ur;
        plugin_unprepare(p->x->p, &ref, 1, &a, &ur);
        if ((!r.error || !*r.error) && r.n_devices == 1 && !ur[0].error)
            p->ok++;
    }
    prepare(p->x, &a, claim(&a, uid, res, NULL));
    dra_arena_fini(&a);
    return NULL;
}

static void test_concurrent(void **state)
{
    pfx *x = *state;
    pthread_t t[4];
    par p[4];
    for (int i = 0; i < 4; i++) {
        p[i].x = x;
        p[i].gpu = i;
        p[i].ok = 0;
        assert_int_equal(pthread_create(&t[i], NULL, par_prepare, &p[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(p[i].ok, 5);
    }
    for (int i = 0; i < 4; i++) {
        char uid[32];
        snprintf(uid, sizeof(uid), "u-par-%d", i);
        assert_true(cp_has(x, uid, PLUGIN_CP_COMPLETED));
    }
}

static const dra_device *slice_dev(const dra_resource_slice_spec *s, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < s[i].n_devices; j++)
            if (strcmp(s[i].devices[j].name, name) == 0)
                return &s[i].devices[j];
    return NULL;
}

static void test_health(void **state)
{
    pfx *x = *state;
    dra_arena a;
    dra_arena_init(&a, NULL);
    dra_gpu_health_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = DRA_GPU_HEALTH_XID;
    ev.device = "gpu-2";
    ev.xid = 79;
    assert_int_equal(plugin_health_apply(x->p, &ev), 1);
    assert_int_equal(plugin_health_apply(x->p, &ev), 0); /* no change */
    dra_plugin_claim_result r = prepare(x, &a, claim(&a, "u-h1", "gpu:gpu-2", NULL));
    expect_err(&r, "requested device is not healthy: gpu-2");
    dra_resource_slice_spec *s;
    size_t n;
    assert_int_equal(plugin_slices(x->p, &a, &s, &n, NULL), DRA_OK);
    const dra_device *d = slice_dev(s, n, "gpu-2");
    assert_non_null(d);
    assert_int_equal(d->n_taints, 1);
    assert_string_equal(d->taints[0].key, "gpu.nvidia.com/xid");
    assert_string_equal(d->taints[0].value, "79");
    assert_string_equal(d->taints[0].effect, "NoSchedule");
    assert_int_equal(slice_dev(s, n, "gpu-1")->n_taints, 0);

    /* An XID NVIDIA ignores taints with effect None: still usable. */
    ev.device = "gpu-1";
    ev.xid = 13;
    ev.ignored = 1;
    assert_int_equal(plugin_health_apply(x->p, &ev), 1);
    r = prepare(x, &a, claim(&a, "u-h2", "gpu:gpu-1", NULL));
    expect_ok(&r);

    /* Taints off (DRADeviceTaints=false): the device is left out. */
    x->p->o.gates.device_taints = 0;
    assert_int_equal(plugin_slices(x->p, &a, &s, &n, NULL), DRA_OK);
    assert_null(slice_dev(s, n, "gpu-2"));
    assert_non_null(slice_dev(s, n, "gpu-1"));
    x->p->o.gates.device_taints = 1;

    /* A lost GPU, then recovery. */
    ev.kind = DRA_GPU_HEALTH_LOST;
    ev.device = "gpu-0";
    assert_int_equal(plugin_health_apply(x->p, &ev), 1);
    assert_int_equal(plugin_slices(x->p, &a, &s, &n, NULL), DRA_OK);
    assert_string_equal(slice_dev(s, n, "gpu-0")->taints[0].key, "gpu.nvidia.com/gpu-lost");
    ev.kind = DRA_GPU_HEALTH_RECOVERED;
    assert_int_equal(plugin_health_apply(x->p, &ev), 1);
    ev.device = "gpu-2";
    assert_int_equal(plugin_health_apply(x->p, &ev), 1);
    r = prepare(x, &a, claim(&a, "u-h3", "gpu:gpu-2", NULL));
    expect_ok(&r);
    assert_int_equal(plugin_slices(x->p, &a, &s, &n, NULL), DRA_OK);
    assert_int_equal(slice_dev(s, n, "gpu-2")->n_taints, 0);
    dra_arena_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_prepare_unprepare_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_subrequest_and_other_drivers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overlap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_configs, setup, teardown),
        cmocka_unit_test(test_mps),
        cmocka_unit_test_setup_teardown(test_mig, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recovery, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_health, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
