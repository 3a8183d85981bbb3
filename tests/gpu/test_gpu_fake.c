/*
 * test_gpu_fake.c: the failure side of discovery (NVML missing, not NVML,
 * functions failing) and the fake driver itself: device visibility as in
 * a container, the fake nvidia-smi's output for -L and --query-gpu, health
 * events raised through the control file, the inventory reader's errors,
 * and the driver-root layout (library function and program).
 */
#include "gpu_fixture.h"

#include <dlfcn.h>
#include <sys/wait.h>
#include <yaml.h>

#include "gpu/fake/inventory.h"

static dra_err open_diag(const char *root, const char *lib, dra_gpu **g, dra_diag *d)
{
    dra_gpu_opts o = {.driver_root = root, .nvml_path = lib};
    dra_diag_init(d, NULL);
    return dra_gpu_open(&o, g, d);
}

static void want_msg(const dra_diag *d, const char *part)
{
    const char *m = dra_diag_first(d);
    if (!m || !strstr(m, part))
        fail_msg("message \"%s\" lacks \"%s\"", m ? m : "(none)", part);
}

static void test_nvml_missing(void **state)
{
    (void)state;
    dra_gpu *g = NULL;
    dra_diag d;
    char dir[] = "/tmp/dra-gpu-empty-XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_int_equal(open_diag(dir, NULL, &g, &d), DRA_ENOTFOUND);
    assert_null(g);
    want_msg(&d, "NVML not found under the NVIDIA driver root");
    want_msg(&d, dir);
    want_msg(&d, "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1");
    want_msg(&d, "/lib/aarch64-linux-gnu/libnvidia-ml.so.1");
    dra_diag_fini(&d);
    rmdir(dir);

    /* A library that is not NVML: the first missing function is named. */
    Dl_info info;
    assert_true(dladdr((void *)yaml_get_version_string, &info) != 0);
    assert_int_equal(open_diag("/", info.dli_fname, &g, &d), DRA_EUNSUPPORTED);
    want_msg(&d, "NVML function nvmlInit_v2 not found");
    dra_diag_fini(&d);

    /* Not a library at all. */
    char path[512];
    fx_path(path, sizeof path, "gb200.yaml");
    assert_int_equal(open_diag("/", path, &g, &d), DRA_EIO);
    want_msg(&d, "cannot load NVML");
    dra_diag_fini(&d);
}

static dra_err discover_diag(const fx *f, dra_arena *a, dra_diag *d)
{
    dra_gpu *g = fx_open(f, NULL);
    dra_gpu_inventory *inv;
    dra_diag_init(d, NULL);
    dra_err err = dra_gpu_discover(g, a, &inv, d);
    dra_gpu_close(g);
    return err;
}

static void test_nvml_fails(void **state)
{
    (void)state;
    fx f;
    dra_arena a;
    dra_diag d;
    fx_make(&f, "gb200.yaml", NULL);
    dra_arena_init(&a, NULL);

    setenv("DRA_FAKE_NVML_FAIL", "nvmlInit_v2:DRIVER_NOT_LOADED", 1);
    assert_int_equal(discover_diag(&f, &a, &d), DRA_EUNAVAILABLE);
    want_msg(&d, "failed to initialize NVML");
    want_msg(&d, "Driver Not Loaded");
    dra_diag_fini(&d);

    setenv("DRA_FAKE_NVML_FAIL", "nvmlDeviceGetCount_v2:UNKNOWN,nvmlDeviceGetMemoryInfo:GPU_IS_LOST", 1);
    assert_int_equal(discover_diag(&f, &a, &d), DRA_EIO);
    want_msg(&d, "error getting device count: Unknown Error");
    dra_diag_fini(&d);

    setenv("DRA_FAKE_NVML_FAIL", "nvmlDeviceGetMemoryInfo:GPU_IS_LOST", 1);
    assert_int_equal(discover_diag(&f, &a, &d), DRA_EIO);
    want_msg(&d, "error getting memory info for device 0: GPU is lost");
    dra_diag_fini(&d);

    /* A bad inventory: the fake's own message comes through. */
    unsetenv("DRA_FAKE_NVML_FAIL");
    char bad[512];
    snprintf(bad, sizeof bad, "%s/bad.yaml", f.dir);
    FILE *b = fopen(bad, "w");
    fputs("nodes:\n- name: x\n  driverVersion: \"1.2\"\n  cudaDriverVersion: 1\n  gpus: []\n  colour: red\n", b);
    fclose(b);
    setenv("DRA_FAKE_NVML_CONFIG", bad, 1);
    assert_int_equal(discover_diag(&f, &a, &d), DRA_EUNAVAILABLE);
    want_msg(&d, "unknown key \"colour\"");
    want_msg(&d, "bad.yaml:6:3");
    dra_diag_fini(&d);
    unsetenv("DRA_FAKE_NVML_CONFIG");

    /* The inventory's own fail map. */
    b = fopen(bad, "w");
    fputs("nodes:\n- name: x\n  driverVersion: \"1.2\"\n  cudaDriverVersion: 1\n  gpus: []\n"
          "  fail: {nvmlSystemGetDriverVersion: NO_PERMISSION}\n", b);
    fclose(b);
    setenv("DRA_FAKE_NVML_CONFIG", bad, 1);
    assert_int_equal(discover_diag(&f, &a, &d), DRA_EIO);
    want_msg(&d, "error getting driver version: Insufficient Permissions");
    dra_diag_fini(&d);
    unsetenv("DRA_FAKE_NVML_CONFIG");
    dra_arena_fini(&a);
    fx_rm(&f);
}

static void touch(const char *dir, const char *name)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
}

/* As in a container: with nvidiactl present only GPUs whose node exists. */
static void test_visibility(void **state)
{
    (void)state;
    fx f;
    dra_arena a;
    char dev[400];
    fx_make(&f, "h100.yaml", NULL);
    snprintf(dev, sizeof dev, "%s/cdev", f.dir);
    assert_int_equal(mkdir(dev, 0755), 0);
    touch(dev, "nvidiactl");
    touch(dev, "nvidia2");
    touch(dev, "nvidia4");
    char caps[500];
    snprintf(caps, sizeof caps, "%s/nvidia-caps", dev);
    assert_int_equal(mkdir(caps, 0755), 0);
    touch(caps, "nvidia-cap615"); /* GPU 4, GI 8 (1g.10gb at 1) */
    touch(caps, "nvidia-cap616"); /* its CI 0 */
    setenv("DRA_FAKE_NVML_DEV_ROOT", dev, 1);
    dra_arena_init(&a, NULL);
    dra_gpu *g = fx_open(&f, NULL);
    dra_gpu_inventory *inv = fx_discover(g, &a);
    assert_int_equal(inv->n_gpus, 2);
    assert_int_equal(inv->gpus[0].index, 0);
    assert_string_equal(inv->gpus[0].name, "gpu-2");
    assert_string_equal(inv->gpus[1].name, "gpu-4");
    assert_int_equal(inv->gpus[1].n_migs, 1);
    assert_int_equal(inv->gpus[1].n_drm_nodes, 2);
    assert_string_equal(inv->gpus[1].migs[0].name, "gpu-4-mig-1g10gb-19-1");
    dra_gpu_close(g);
    /* Without nvidiactl (a host without NVIDIA devices): everything. */
    snprintf(caps, sizeof caps, "%s/nvidiactl", dev);
    unlink(caps);
    g = fx_open(&f, NULL);
    inv = fx_discover(g, &a);
    assert_int_equal(inv->n_gpus, 8);
    assert_int_equal(inv->gpus[4].n_migs, 7);
    dra_gpu_close(g);
    dra_arena_fini(&a);
    fx_rm(&f);
}

/* Runs |cmd| with the shell; returns its output (malloc'd) and status. */
static char *run(const char *cmd, int *status)
{
    FILE *p = popen(cmd, "r");
    char *out = NULL;
    size_t len = 0, cap = 0, n;
    char buf[4096];
    assert_non_null(p);
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) {
        if (len + n + 1 > cap) {
            cap = (len + n + 1) * 2;
            out = realloc(out, cap);
            assert_non_null(out);
        }
        memcpy(out + len, buf, n);
        len += n;
    }
    if (!out)
        out = calloc(1, 1);
    out[len] = 0;
    int st = pclose(p);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
}

static void smi_is(const fx *f, const char *env, const char *args, int want_rc, const char *want)
{
    char cmd[2048];
    int rc;
    snprintf(cmd, sizeof cmd, "%s %s/usr/bin/nvidia-smi %s 2>&1", env ? env : "", f->root, args);
    char *out = run(cmd, &rc);
    if (strcmp(out, want) || rc != want_rc)
        fail_msg("nvidia-smi %s: exit %d, output:\n%s\nwanted exit %d:\n%s", args, rc, out,
                 want_rc, want);
    free(out);
}

static void test_smi(void **state)
{
    (void)state;
    fx f;
    fx_make(&f, "gb200.yaml", NULL);
    smi_is(&f, NULL, "-L", 0,
           "GPU 0: NVIDIA GB200 (UUID: GPU-137d7996-cb8e-7683-e47d-9c99e6f49eb5)\n"
           "GPU 1: NVIDIA GB200 (UUID: GPU-d23f0824-128b-4f33-8c5c-7fd0a6a3a450)\n"
           "GPU 2: NVIDIA GB200 (UUID: GPU-9531985d-5d9d-49f8-9818-e811892f902b)\n"
           "GPU 3: NVIDIA GB200 (UUID: GPU-36f675cc-81e7-4ef5-a8e2-5d940ed90475)\n");
    smi_is(&f, NULL, "--query-gpu=index,uuid,name,memory.total --format=csv", 0,
           "index, uuid, name, memory.total [MiB]\n"
           "0, GPU-137d7996-cb8e-7683-e47d-9c99e6f49eb5, NVIDIA GB200, 189471 MiB\n"
           "1, GPU-d23f0824-128b-4f33-8c5c-7fd0a6a3a450, NVIDIA GB200, 189471 MiB\n"
           "2, GPU-9531985d-5d9d-49f8-9818-e811892f902b, NVIDIA GB200, 189471 MiB\n"
           "3, GPU-36f675cc-81e7-4ef5-a8e2-5d940ed90475, NVIDIA GB200, 189471 MiB\n");
    /* A container that got gpu-2 and gpu-3: it sees two GPUs, from index 0. */
    char dev[400], env[600];
    snprintf(dev, sizeof dev, "%s/cdev", f.dir);
    assert_int_equal(mkdir(dev, 0755), 0);
    touch(dev, "nvidiactl");
    touch(dev, "nvidia2");
    touch(dev, "nvidia3");
    snprintf(env, sizeof env, "DRA_FAKE_NVML_DEV_ROOT=%s", dev);
    smi_is(&f, env, "-L", 0,
           "GPU 0: NVIDIA GB200 (UUID: GPU-9531985d-5d9d-49f8-9818-e811892f902b)\n"
           "GPU 1: NVIDIA GB200 (UUID: GPU-36f675cc-81e7-4ef5-a8e2-5d940ed90475)\n");
    smi_is(&f, env, "--query-gpu=index,uuid,name,memory.total --format=csv,noheader", 0,
           "0, GPU-9531985d-5d9d-49f8-9818-e811892f902b, NVIDIA GB200, 189471 MiB\n"
           "1, GPU-36f675cc-81e7-4ef5-a8e2-5d940ed90475, NVIDIA GB200, 189471 MiB\n");
    smi_is(&f, env, "--query-gpu=index,memory.total --format=csv,nounits", 0,
           "index, memory.total\n0, 189471\n1, 189471\n");
    smi_is(&f, env, "--query-gpu index,pci.bus_id,driver_version --format csv,noheader,nounits", 0,
           "0, 00000002:01:00.0, 580.126.20\n1, 00000002:02:00.0, 580.126.20\n");
    smi_is(&f, env, "--query-gpu=index,colour --format=csv", 2,
           "Field \"colour\" is not a valid field to query.\n\n");
    /* The container got no GPU node at all. */
    snprintf(dev, sizeof dev, "%s/cdev/nvidia2", f.dir);
    unlink(dev);
    snprintf(dev, sizeof dev, "%s/cdev/nvidia3", f.dir);
    unlink(dev);
    smi_is(&f, env, "-L", 6, "No devices were found\n");
    smi_is(&f, NULL, "-i 1 -c DEFAULT", 0, "Set compute mode to DEFAULT for GPU 00000000:02:00.0.\nAll done.\n");
    fx_rm(&f);
}

static void test_smi_mig(void **state)
{
    (void)state;
    fx f;
    char cmd[1024];
    int rc;
    fx_make(&f, "h100.yaml", NULL);
    snprintf(cmd, sizeof cmd, "%s/usr/bin/nvidia-smi -L", f.root);
    char *out = run(cmd, &rc);
    assert_int_equal(rc, 0);
    const char *want =
        "GPU 5: NVIDIA H100 80GB HBM3 (UUID: GPU-e8038a7b-a1ac-4496-bf64-1c47d3c38212)\n"
        "  MIG 3g.40gb     Device  0: (UUID: MIG-6877cb62-fdc1-4e16-9f09-1891cdd0ff50)\n"
        "  MIG 2g.20gb     Device  1: (UUID: MIG-a4909ab9-01a3-46ce-87ea-707f5e468daa)\n"
        "  MIG 1g.10gb     Device  2: (UUID: MIG-ccb2821b-f330-49be-9645-83999423888a)\n"
        "GPU 6: ";
    if (!strstr(out, want))
        fail_msg("nvidia-smi -L on the H100 node:\n%s", out);
    assert_non_null(strstr(out, "  MIG 1g.10gb+me  Device  2: (UUID: MIG-"));
    free(out);
    /* nvidia-smi without a driver next to it. */
    snprintf(cmd, sizeof cmd, "mkdir -p %s/bare/usr/bin && cp %s %s/bare/usr/bin/ && "
             "%s/bare/usr/bin/nvidia-smi -L", f.dir, DRA_FAKE_SMI, f.dir, f.dir);
    out = run(cmd, &rc);
    assert_int_equal(rc, 9);
    assert_non_null(strstr(out, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"));
    free(out);
    fx_rm(&f);
}

static dra_gpu_health *health(dra_gpu *g, const dra_gpu_inventory *inv, const char *xids)
{
    dra_gpu_health *h = NULL;
    dra_diag d;
    dra_diag_init(&d, NULL);
    dra_err err = dra_gpu_health_new(g, inv, xids, &h, &d);
    if (err)
        fail_msg("health: %s", dra_diag_first(&d) ? dra_diag_first(&d) : dra_strerror(err));
    dra_diag_fini(&d);
    return h;
}

static void wait_for(dra_gpu_health *h, int ms, dra_gpu_health_event *ev)
{
    assert_int_equal(dra_gpu_health_wait(h, ms, ev, NULL), DRA_OK);
}

static void test_health(void **state)
{
    (void)state;
    fx f;
    dra_arena a;
    dra_gpu_health_event ev;
    fx_make(&f, "gb200.yaml", NULL);
    fx_event(&f, "xid gpu-0 79"); /* before the monitor: never delivered */
    dra_arena_init(&a, NULL);
    dra_gpu *g = fx_open(&f, NULL);
    dra_gpu_inventory *inv = fx_discover(g, &a);
    dra_gpu_health *h = health(g, inv, " 48, x, 63 ");
    wait_for(h, 0, &ev);
    assert_int_equal(ev.kind, DRA_GPU_HEALTH_NONE);

    fx_event(&f, "xid gpu-1 79");
    wait_for(h, 5000, &ev);
    assert_int_equal(ev.kind, DRA_GPU_HEALTH_XID);
    assert_string_equal(ev.device, "gpu-1");
    assert_string_equal(ev.gpu_uuid, "GPU-d23f0824-128b-4f33-8c5c-7fd0a6a3a450");
    assert_int_equal(ev.xid, 79);
    assert_int_equal(ev.ignored, 0);
    assert_int_equal(ev.gi, 0xFFFFFFFFu);

    fx_event(&f, "xid GPU-9531985d-5d9d-49f8-9818-e811892f902b 13");
    fx_event(&f, "xid 3 63");
    wait_for(h, 5000, &ev);
    assert_int_equal(ev.kind, DRA_GPU_HEALTH_XID);
    assert_string_equal(ev.device, "gpu-2");
    assert_int_equal(ev.ignored, 1); /* NVIDIA's default list */
    wait_for(h, 5000, &ev);
    assert_string_equal(ev.device, "gpu-3");
    assert_int_equal(ev.ignored, 1); /* --additional-xids-to-ignore */

    fx_event(&f, "lost gpu-3");
    wait_for(h, 5000, &ev);
    assert_int_equal(ev.kind, DRA_GPU_HEALTH_LOST);
    assert_string_equal(ev.device, "gpu-3");
    assert_non_null(strstr(ev.message, "GPU is lost"));
    wait_for(h, 20, &ev);
    assert_int_equal(ev.kind, DRA_GPU_HEALTH_NONE);
    fx_event(&f, "clear gpu-3");
    wait_for(h, 20, &ev);
    assert_int_equal(ev.kind, DRA_GPU_HEALTH_RECOVERED);
    assert_string_equal(ev.device, "gpu-3");

    /* An XID that leaves the GPU needing a reset recovers once cleared. */
    fx_event(&f, "xid gpu-0 48 reset");
    wait_for(h, 5000, &ev);
    assert_int_equal(ev.kind, DRA_GPU_HEALTH_XID);
    assert_int_equal(ev.xid, 48);
    assert_int_equal(ev.ignored, 1);
    wait_for(h, 20, &ev);
    assert_int_equal(ev.kind, DRA_GPU_HEALTH_NONE);
    fx_event(&f, "clear 0");
    wait_for(h, 20, &ev);
    assert_int_equal(ev.kind, DRA_GPU_HEALTH_RECOVERED);
    assert_string_equal(ev.device, "gpu-0");
    dra_gpu_health_free(h);

    /* Registration failing: every GPU is reported unmonitored first. */
    setenv("DRA_FAKE_NVML_FAIL", "nvmlDeviceRegisterEvents:NOT_SUPPORTED", 1);
    h = health(g, inv, NULL);
    for (int i = 0; i < 4; i++) {
        wait_for(h, 0, &ev);
        assert_int_equal(ev.kind, DRA_GPU_HEALTH_UNMONITORED);
    }
    wait_for(h, 0, &ev);
    assert_int_equal(ev.kind, DRA_GPU_HEALTH_NONE);
    dra_gpu_health_free(h);
    unsetenv("DRA_FAKE_NVML_FAIL");
    dra_gpu_close(g);
    dra_arena_fini(&a);
    fx_rm(&f);
}

static void test_health_mig(void **state)
{
    (void)state;
    fx f;
    dra_arena a;
    dra_gpu_health_event ev;
    fx_make(&f, "h100.yaml", NULL);
    dra_arena_init(&a, NULL);
    dra_gpu *g = fx_open(&f, NULL);
    dra_gpu_inventory *inv = fx_discover(g, &a);
    dra_gpu_health *h = health(g, inv, NULL);
    fx_event(&f, "xid gpu-4 94 gi 9 ci 0");
    fx_event(&f, "xid gpu-4 94 gi 14 ci 0"); /* no such instance: skipped */
    fx_event(&f, "xid gpu-5 94");
    wait_for(h, 5000, &ev);
    assert_int_equal(ev.kind, DRA_GPU_HEALTH_XID);
    assert_string_equal(ev.device, "gpu-4-mig-1g10gb-19-2");
    assert_int_equal(ev.gi, 9);
    assert_int_equal(ev.ci, 0);
    wait_for(h, 5000, &ev);
    assert_int_equal(ev.kind, DRA_GPU_HEALTH_XID);
    assert_string_equal(ev.device, "gpu-5"); /* the whole GPU: all its MIG devices */
    dra_gpu_health_free(h);
    dra_gpu_close(g);
    dra_arena_fini(&a);
    fx_rm(&f);
}

static void inventory_error(const char *yaml, const char *want)
{
    fk_inventory inv;
    char err[512];
    int rc = fk_inventory_parse(&inv, NULL, yaml, strlen(yaml), err, sizeof err);
    if (rc == 0 || !strstr(err, want))
        fail_msg("inventory %s: got %d \"%s\", wanted \"%s\"", yaml, rc, rc ? err : "", want);
}

static void test_inventory_errors(void **state)
{
    (void)state;
    const char *node = "nodes:\n- name: n\n  driverVersion: \"1\"\n  cudaDriverVersion: 1\n  gpus:\n";
    char buf[2048];
    inventory_error("nodes: [", "2:1: did not find expected node content");
    inventory_error("- a", "1:1: inventory: expected a mapping");
    inventory_error("nodes: {}", "nodes: expected a list");
    inventory_error("nodes:\n- name: n\n", "2:3: node: missing key \"driverVersion\"");
    snprintf(buf, sizeof buf, "%s  - {minor: 0, uuid: u, name: n, brand: Acme, architecture: Hopper, "
             "computeCapability: \"9.0\", memory: 1Gi, pciBusId: \"0000:01:00.0\"}\n", node);
    inventory_error(buf, "brand: unknown brand \"Acme\"");
    snprintf(buf, sizeof buf, "%s  - {minor: 0, uuid: u, name: n, brand: Nvidia, architecture: Hopper, "
             "computeCapability: \"9.0\", memory: 1Tb, pciBusId: \"0000:01:00.0\"}\n", node);
    inventory_error(buf, "memory: 1Tb is not a byte count");
    snprintf(buf, sizeof buf, "%s  - {minor: 0, uuid: u, name: n, brand: Nvidia, architecture: Hopper, "
             "computeCapability: \"9.0\", memory: 1Gi, pciBusId: \"bus\"}\n", node);
    inventory_error(buf, "pciBusId: bus is not domain:bus:device.function");
    snprintf(buf, sizeof buf, "%s  - {minor: 0, uuid: u, name: n, brand: Nvidia, architecture: Hopper, "
             "computeCapability: \"9.0\", memory: 1Gi, pciBusId: \"0000:01:00.0\", mig: {profiles: x}}\n", node);
    inventory_error(buf, "profiles: no set \"x\" under migProfiles");
    snprintf(buf, sizeof buf, "%s  - {minor: 0, uuid: u, name: n, brand: Nvidia, architecture: Hopper, "
             "computeCapability: \"9.0\", memory: 1Gi, pciBusId: \"0000:01:00.0\"}\n"
             "  - {minor: 0, uuid: v, name: n, brand: Nvidia, architecture: Hopper, "
             "computeCapability: \"9.0\", memory: 1Gi, pciBusId: \"0000:02:00.0\"}\n", node);
    inventory_error(buf, "repeats an earlier GPU");
    /* A MIG layout that overlaps, and a placement the profile lacks. */
    char path[512];
    fx_path(path, sizeof path, "h100.yaml");
    size_t len;
    char *h100 = dra_test_slurp(path, &len);
    char *at = strstr(h100, "{profile: 2g.20gb, start: 4,");
    assert_non_null(at);
    memcpy(at, "{profile: 2g.20gb, start: 2,", 28);
    fk_inventory inv;
    char err[512];
    assert_int_equal(fk_inventory_parse(&inv, NULL, h100, len, err, sizeof err), -1);
    assert_non_null(strstr(err, "overlap"));
    memcpy(at, "{profile: 2g.20gb, start: 6,", 28);
    assert_int_equal(fk_inventory_parse(&inv, NULL, h100, len, err, sizeof err), -1);
    assert_non_null(strstr(err, "start: 6 is not a placement of 2g.20gb"));
    free(h100);
    assert_int_equal(fk_default_gi(0, 8), 0);
    assert_int_equal(fk_default_gi(4, 4), 2);
    assert_int_equal(fk_default_gi(6, 2), 6);
    assert_int_equal(fk_default_gi(6, 1), 13);
}

/* A node written back out parses to the same GPUs, odd names included. */
static void test_inventory_roundtrip(void **state)
{
    (void)state;
    char path[512], err[512];
    size_t len;
    fx_path(path, sizeof path, "h100.yaml");
    char *text = dra_test_slurp(path, &len);
    char *at = strstr(text, "name: NVIDIA H100 80GB HBM3\n");
    assert_non_null(at);
    static const char odd[] = "name: 'N\"V\\ H100 80GB HBM3'\n";
    assert_int_equal(sizeof odd - 1, strlen("name: NVIDIA H100 80GB HBM3\n"));
    memcpy(at, odd, sizeof odd - 1);
    fk_inventory a, b;
    assert_int_equal(fk_inventory_parse(&a, NULL, text, len, err, sizeof err), 0);
    char *out = NULL;
    size_t olen = 0;
    FILE *f = open_memstream(&out, &olen);
    assert_int_equal(fk_inventory_write_node(&a, &a.nodes[0], f), 0);
    fclose(f);
    if (fk_inventory_parse(&b, NULL, out, olen, err, sizeof err))
        fail_msg("%s in\n%s", err, out);
    const fk_node *x = &a.nodes[0], *y = &b.nodes[0];
    assert_string_equal(x->gpus[0].name, "N\"V\\ H100 80GB HBM3");
    assert_string_equal(y->gpus[0].name, x->gpus[0].name);
    assert_string_equal(y->driver_version, "570.172.08");
    assert_int_equal(y->n_gpus, 8);
    for (size_t i = 0; i < 8; i++) {
        assert_string_equal(y->gpus[i].uuid, x->gpus[i].uuid);
        assert_string_equal(y->gpus[i].pci_bus_id, x->gpus[i].pci_bus_id);
        assert_int_equal(y->gpus[i].memory_bytes, x->gpus[i].memory_bytes);
        assert_int_equal(y->gpus[i].n_migs, x->gpus[i].n_migs);
        for (size_t j = 0; j < x->gpus[i].n_migs; j++) {
            assert_string_equal(y->gpus[i].migs[j].uuid, x->gpus[i].migs[j].uuid);
            assert_string_equal(y->gpus[i].migs[j].profile->name, x->gpus[i].migs[j].profile->name);
            assert_int_equal(y->gpus[i].migs[j].gi, x->gpus[i].migs[j].gi);
        }
    }
    assert_int_equal(y->gpus[0].profiles->n, 7);
    assert_int_equal(y->gpus[0].profiles->v[6].memory_mib, 81152);
    fk_inventory_free(&a);
    fk_inventory_free(&b);
    free(out);
    free(text);
}

static int is_link_to(const char *path, const char *target)
{
    char buf[512];
    ssize_t n = readlink(path, buf, sizeof buf - 1);
    if (n < 0)
        return 0;
    buf[n] = 0;
    return !strcmp(buf, target);
}

static void test_fake_root(void **state)
{
    (void)state;
    fx f;
    char p[700];
    struct stat st;
    fx_make(&f, "gb200.yaml", "gb200-pod2-f06-node06");
    snprintf(p, sizeof p, "%s/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", f.root);
    assert_true(is_link_to(p, "libnvidia-ml.so.580.126.20"));
    snprintf(p, sizeof p, "%s/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.126.20", f.root);
    assert_int_equal(stat(p, &st), 0);
    assert_true(st.st_mode & S_IXUSR);
    snprintf(p, sizeof p, "%s/usr/bin/nvidia-smi", f.root);
    assert_int_equal(access(p, X_OK), 0);
    static const char *const devs[] = {"nvidia0", "nvidia3", "nvidiactl", "nvidia-uvm",
                                       "nvidia-uvm-tools", "nvidia-modeset", "nvidia-caps/nvidia-cap1"};
    for (size_t i = 0; i < sizeof devs / sizeof *devs; i++) {
        snprintf(p, sizeof p, "%s/dev/%s", f.root, devs[i]);
        assert_int_equal(stat(p, &st), 0);
    }
    snprintf(p, sizeof p, "%s/sys/bus/pci/devices/0002:01:00.0", f.root);
    assert_true(is_link_to(p, "../../../devices/pci0002:00/0002:01:00.0"));
    /* nvidiactl and the yaml next to the library hold node06 only. */
    snprintf(p, sizeof p, "%s/dev/nvidiactl", f.root);
    char *ctl = dra_test_slurp(p, NULL);
    assert_non_null(strstr(ctl, "gb200-pod2-f06-node06"));
    assert_null(strstr(ctl, "node05"));
    fk_inventory inv;
    char err[512];
    assert_int_equal(fk_inventory_parse(&inv, NULL, ctl, strlen(ctl), err, sizeof err), 0);
    assert_int_equal(inv.n_nodes, 1);
    assert_int_equal(inv.nodes[0].n_gpus, 4);
    fk_inventory_free(&inv);
    free(ctl);

    /* The node list, and the program's errors and layout. */
    dra_arena a;
    const char **names;
    size_t n;
    char inv_path[512], cmd[2048];
    int rc;
    fx_path(inv_path, sizeof inv_path, "gb200.yaml");
    dra_arena_init(&a, NULL);
    assert_int_equal(dra_gpu_fake_nodes(inv_path, &a, &names, &n, NULL), DRA_OK);
    assert_int_equal(n, 2);
    assert_string_equal(names[1], "gb200-pod2-f06-node06");
    dra_arena_fini(&a);
    snprintf(cmd, sizeof cmd, "%s --inventory %s --node nope --root %s/x 2>&1", DRA_FAKE_DRIVER_ROOT,
             inv_path, f.dir);
    char *out = run(cmd, &rc);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "no node nope"));
    free(out);
    snprintf(cmd, sizeof cmd, "%s --inventory %s --root %s/h 2>&1 && %s/h/usr/bin/nvidia-smi "
             "--query-gpu=name --format=csv,noheader", DRA_FAKE_DRIVER_ROOT, inv_path, f.dir, f.dir);
    out = run(cmd, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(out, "NVIDIA GB200\nNVIDIA GB200\nNVIDIA GB200\nNVIDIA GB200\n");
    free(out);
    snprintf(cmd, sizeof cmd, "%s --list --inventory %s", DRA_FAKE_DRIVER_ROOT, inv_path);
    out = run(cmd, &rc);
    assert_string_equal(out, "gb200-pod2-f06-node05\ngb200-pod2-f06-node06\n");
    free(out);
    fx_rm(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nvml_missing),    cmocka_unit_test(test_nvml_fails),
        cmocka_unit_test(test_visibility),      cmocka_unit_test(test_smi),
        cmocka_unit_test(test_smi_mig),         cmocka_unit_test(test_health),
        cmocka_unit_test(test_health_mig),      cmocka_unit_test(test_inventory_errors),
        cmocka_unit_test(test_inventory_roundtrip), cmocka_unit_test(test_fake_root),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
