/*
 * test_gpu_discover.c: GPU discovery through the fake driver root and the
 * ResourceSlices built from it, for the seed's GB200 node, an 8 x H100
 * node with MIG and an A100 node: every attribute and capacity with its
 * type, device names, the static MIG layout, the partitionable
 * (DynamicMIG) layout in both slice shapes, the CDI paths, and that every
 * slice passes kube-apiserver's validation.
 */
#include "gpu_fixture.h"

#include "dra/api.h"
#include "dra/codec.h"

#define MiB (1ull << 20)

static const dra_attr *attr(const dra_device *d, const char *name)
{
    return dra_device_attr(d, name);
}

static void want_str(const dra_device *d, const char *name, const char *v)
{
    const dra_attr *a = attr(d, name);
    if (!a)
        fail_msg("%s: no attribute %s", d->name, name);
    assert_int_equal(a->set, DRA_ATTR_STRING);
    assert_string_equal(a->s, v);
}

static void want_ver(const dra_device *d, const char *name, const char *v)
{
    const dra_attr *a = attr(d, name);
    if (!a)
        fail_msg("%s: no attribute %s", d->name, name);
    assert_int_equal(a->set, DRA_ATTR_VERSION);
    assert_string_equal(a->v, v);
}

static void want_absent(const dra_device *d, const char *name)
{
    if (attr(d, name) || dra_device_capacity(d, name))
        fail_msg("%s: %s should not be announced", d->name, name);
}

static void want_cap(const dra_device *d, const char *name, const char *qty)
{
    const dra_capacity_entry *c = dra_device_capacity(d, name);
    char buf[DRA_QTY_STR_MAX];
    if (!c)
        fail_msg("%s: no capacity %s", d->name, name);
    dra_quantity_str(&c->value, buf, sizeof buf);
    assert_string_equal(buf, qty);
}

static void want_counter(const dra_counter *c, size_t n, const char *name, const char *qty)
{
    char buf[DRA_QTY_STR_MAX];
    for (size_t i = 0; i < n; i++)
        if (!strcmp(c[i].name, name)) {
            dra_quantity_str(&c[i].value, buf, sizeof buf);
            assert_string_equal(buf, qty);
            return;
        }
    fail_msg("no counter %s", name);
}

static const dra_device *dev(const dra_resource_slice_spec *s, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < s[i].n_devices; j++)
            if (!strcmp(s[i].devices[j].name, name))
                return &s[i].devices[j];
    fail_msg("no device %s", name);
    return NULL;
}

static size_t count_devices(const dra_resource_slice_spec *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += s[i].n_devices;
    return c;
}

/* Every slice as a ResourceSlice object passes create validation. */
static void validate_all(dra_arena *a, dra_resource_slice_spec *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        dra_object *o = dra_api_object_new(a, DRA_KIND_RESOURCE_SLICE);
        dra_diag d;
        assert_non_null(o);
        o->meta.name = dra_arena_sprintf(a, "%s-gpu.nvidia.com-%zu", s[i].node_name, i);
        o->u.slice.spec = s[i];
        dra_diag_init(&d, NULL);
        dra_err err = dra_api_validate(o, &d);
        if (err) {
            dra_buf b;
            dra_buf_init(&b, NULL);
            dra_diag_format(&d, &b);
            fail_msg("slice %zu invalid: %s", i, b.p);
        }
        dra_diag_fini(&d);
    }
}

static void slices(dra_arena *a, const dra_gpu_inventory *inv, int dynamic, int split,
                   dra_resource_slice_spec **s, size_t *n)
{
    dra_gpu_slice_opts o = {.node_name = "node-a", .dynamic_mig = dynamic,
                            .split_counters = split, .pool_generation = 3};
    assert_int_equal(dra_gpu_slices(inv, &o, a, s, n, NULL), DRA_OK);
    for (size_t i = 0; i < *n; i++) {
        assert_string_equal((*s)[i].driver, "gpu.nvidia.com");
        assert_string_equal((*s)[i].pool.name, "node-a");
        assert_string_equal((*s)[i].node_name, "node-a");
        assert_int_equal((*s)[i].pool.generation, 3);
        assert_int_equal((*s)[i].pool.resource_slice_count, (int64_t)*n);
    }
}

static void test_gb200(void **state)
{
    (void)state;
    static const char *const uuids[] = {
        "GPU-137d7996-cb8e-7683-e47d-9c99e6f49eb5", "GPU-d23f0824-128b-4f33-8c5c-7fd0a6a3a450",
        "GPU-9531985d-5d9d-49f8-9818-e811892f902b", "GPU-36f675cc-81e7-4ef5-a8e2-5d940ed90475"};
    static const char *const bus[] = {"0000:01:00.0", "0000:02:00.0", "0002:01:00.0", "0002:02:00.0"};
    static const char *const roots[] = {"pci0000:00", "pci0000:00", "pci0002:00", "pci0002:00"};
    fx f;
    dra_arena a;
    fx_make(&f, "gb200.yaml", "gb200-pod2-f06-node05");
    dra_arena_init(&a, NULL);
    dra_gpu *g = fx_open(&f, "/run/nvidia/driver");
    dra_gpu_inventory *inv = fx_discover(g, &a);
    assert_string_equal(inv->driver_version, "580.126.20");
    assert_string_equal(inv->cuda_driver_version, "13.0");
    assert_int_equal(inv->n_gpus, 4);
    dra_resource_slice_spec *s;
    size_t n;
    slices(&a, inv, 0, 0, &s, &n);
    assert_int_equal(n, 1);
    assert_int_equal(s[0].n_devices, 4);
    assert_int_equal(s[0].n_shared_counters, 0);
    for (unsigned i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof name, "gpu-%u", i);
        const dra_device *d = &s[0].devices[i];
        assert_string_equal(d->name, name);
        assert_int_equal(d->n_attrs, 11);
        want_str(d, "type", "gpu");
        want_str(d, "uuid", uuids[i]);
        want_str(d, "productName", "NVIDIA GB200");
        want_str(d, "brand", "Nvidia");
        want_str(d, "architecture", "Blackwell");
        want_ver(d, "cudaComputeCapability", "10.0.0");
        want_ver(d, "driverVersion", "580.126.20");
        want_ver(d, "cudaDriverVersion", "13.0.0");
        want_str(d, "resource.kubernetes.io/pciBusID", bus[i]);
        want_str(d, "resource.kubernetes.io/pcieRoot", roots[i]);
        want_str(d, "addressingMode", "ATS");
        want_absent(d, "index");
        want_absent(d, "minor");
        want_absent(d, "pcieBusID");
        assert_int_equal(d->n_capacity, 1);
        want_cap(d, "memory", "189471Mi");
        assert_int_equal(d->n_consumes_counters, 0);
        assert_int_equal(inv->gpus[i].memory_bytes, 189471ull * MiB);
    }
    validate_all(&a, s, n);
    /* DynamicMIG on GPUs without MIG support: announced as usual, one
     * slice per GPU, no counter slice (docs/gpu.md: differences). */
    slices(&a, inv, 1, 1, &s, &n);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(s[i].n_shared_counters, 0);
        assert_int_equal(s[i].n_devices, 1);
        assert_int_equal(s[i].devices[0].n_consumes_counters, 0);
        want_str(&s[i].devices[0], "addressingMode", "ATS");
    }
    validate_all(&a, s, n);
    dra_gpu_close(g);
    dra_arena_fini(&a);
    fx_rm(&f);
}

static void test_gb200_files(void **state)
{
    (void)state;
    fx f;
    dra_arena a;
    char want[512];
    fx_make(&f, "gb200.yaml", NULL);
    dra_arena_init(&a, NULL);
    dra_gpu *g = fx_open(&f, "/run/nvidia/driver");
    dra_gpu_inventory *inv = fx_discover(g, &a);
    const dra_gpu_files *fl = &inv->files;
    assert_string_equal(fl->dev_root, f.root);
    assert_string_equal(fl->host_dev_root, "/run/nvidia/driver");
    static const char *const common[] = {"/dev/nvidia-modeset", "/dev/nvidia-uvm-tools",
                                         "/dev/nvidia-uvm", "/dev/nvidiactl"};
    assert_int_equal(fl->n_common_nodes, 4);
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(fl->common_nodes[i].path, common[i]);
        snprintf(want, sizeof want, "/run/nvidia/driver%s", common[i]);
        assert_string_equal(fl->common_nodes[i].host_path, want);
        snprintf(want, sizeof want, "%s%s", f.root, common[i]);
        assert_string_equal(fl->common_nodes[i].local_path, want);
        assert_int_equal(fl->common_nodes[i].is_char_dev, 0); /* regular files here */
    }
    assert_string_equal(fl->lib_dir, "/usr/lib/x86_64-linux-gnu");
    assert_int_equal(fl->n_libraries, 1);
    assert_string_equal(fl->libraries[0].path, "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.126.20");
    assert_string_equal(fl->libraries[0].host_path,
                        "/run/nvidia/driver/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.126.20");
    assert_int_equal(fl->n_lib_links, 1);
    assert_string_equal(fl->lib_links[0].path, "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1");
    assert_string_equal(fl->lib_links[0].host_path, "libnvidia-ml.so.580.126.20");
    assert_int_equal(fl->n_binaries, 1);
    assert_string_equal(fl->binaries[0].path, "/usr/bin/nvidia-smi");
    assert_string_equal(fl->binaries[0].host_path, "/run/nvidia/driver/usr/bin/nvidia-smi");
    snprintf(want, sizeof want, "%s/usr/bin/nvidia-smi", f.root);
    assert_string_equal(fl->nvidia_smi, want);
    assert_int_equal(fl->caps_major, 237);
    assert_int_equal(inv->gpus[2].n_drm_nodes, 2);
    assert_string_equal(inv->gpus[2].drm_nodes[0].path, "/dev/dri/card3");
    assert_string_equal(inv->gpus[2].drm_nodes[1].path, "/dev/dri/renderD130");
    assert_string_equal(inv->gpus[2].drm_nodes[1].host_path, "/run/nvidia/driver/dev/dri/renderD130");
    assert_string_equal(inv->gpus[2].dev_node.path, "/dev/nvidia2");
    assert_string_equal(inv->gpus[2].dev_node.host_path, "/run/nvidia/driver/dev/nvidia2");
    snprintf(want, sizeof want, "%s/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.126.20", f.root);
    assert_string_equal(inv->nvml_path, want);
    assert_string_equal(dra_gpu_nvml_path(g), want);
    const dra_gpu_device *gd;
    const dra_gpu_mig *m;
    assert_int_equal(dra_gpu_find(inv, "gpu-3", &gd, &m), DRA_OK);
    assert_string_equal(gd->uuid, "GPU-36f675cc-81e7-4ef5-a8e2-5d940ed90475");
    assert_null(m);
    assert_int_equal(dra_gpu_find(inv, "gpu-4", &gd, &m), DRA_ENOTFOUND);
    assert_int_equal(dra_gpu_find(inv, "gpu-", &gd, &m), DRA_ENOTFOUND);
    dra_gpu_close(g);
    dra_arena_fini(&a);
    fx_rm(&f);
}

static const char *const h100_migs[] = {
    "gpu-4-mig-1g10gb-19-0", "gpu-4-mig-1g10gb-19-1", "gpu-4-mig-1g10gb-19-2",
    "gpu-4-mig-1g10gb-19-3", "gpu-4-mig-1g10gb-19-4", "gpu-4-mig-1g10gb-19-5",
    "gpu-4-mig-1g10gb-19-6", "gpu-5-mig-1g10gb-19-6", "gpu-5-mig-2g20gb-14-4",
    "gpu-5-mig-3g40gb-9-0",  "gpu-6-mig-7g80gb-0-0",  "gpu-7-mig-1g10gb-me-20-6",
    "gpu-7-mig-1g20gb-15-4", "gpu-7-mig-4g40gb-5-0"};

static void test_h100_static(void **state)
{
    (void)state;
    fx f;
    dra_arena a;
    fx_make(&f, "h100.yaml", NULL);
    dra_arena_init(&a, NULL);
    dra_gpu *g = fx_open(&f, NULL);
    dra_gpu_inventory *inv = fx_discover(g, &a);
    assert_int_equal(inv->n_gpus, 8);
    assert_string_equal(inv->cuda_driver_version, "12.8");
    /* go-nvlib's profile names, in NVML profile index order. */
    static const char *const profiles[] = {"1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb",
                                           "7g.80gb", "1g.10gb+me", "1g.20gb"};
    static const unsigned ids[] = {19, 14, 9, 5, 0, 20, 15};
    assert_int_equal(inv->gpus[0].n_profiles, 7);
    for (size_t i = 0; i < 7; i++) {
        assert_string_equal(inv->gpus[0].profiles[i].name, profiles[i]);
        assert_int_equal(inv->gpus[0].profiles[i].gi_profile_id, ids[i]);
    }
    assert_int_equal(inv->gpus[0].profiles[6].n_placements, 4);
    assert_int_equal(inv->gpus[0].profiles[6].placements[3].start, 6);
    assert_int_equal(inv->gpus[0].profiles[6].placements[3].size, 2);
    dra_resource_slice_spec *s;
    size_t n;
    slices(&a, inv, 0, 0, &s, &n);
    assert_int_equal(n, 1);
    assert_int_equal(count_devices(s, n), 4 + 14);
    for (unsigned i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof name, "gpu-%u", i);
        const dra_device *d = dev(s, n, name);
        want_str(d, "productName", "NVIDIA H100 80GB HBM3");
        want_str(d, "architecture", "Hopper");
        want_ver(d, "cudaComputeCapability", "9.0.0");
        want_ver(d, "driverVersion", "570.172.8"); /* 570.172.08, Masterminds prints %d */
        want_ver(d, "cudaDriverVersion", "12.8.0");
        want_absent(d, "addressingMode"); /* NOT_SUPPORTED on this GPU */
        want_cap(d, "memory", "81559Mi");
    }
    for (size_t i = 0; i < sizeof h100_migs / sizeof *h100_migs; i++)
        assert_string_equal(s[0].devices[4 + i].name, h100_migs[i]);
    for (unsigned i = 4; i < 8; i++) {
        char name[16];
        snprintf(name, sizeof name, "gpu-%u", i);
        for (size_t j = 0; j < s[0].n_devices; j++)
            assert_string_not_equal(s[0].devices[j].name, name); /* MIG on: not announced */
    }
    const dra_device *m = dev(s, n, "gpu-4-mig-1g10gb-19-0");
    assert_int_equal(m->n_attrs, 12);
    want_str(m, "type", "mig");
    want_str(m, "uuid", "MIG-32ad10da-571b-4961-8e1a-9c9b2dbc3035");
    want_str(m, "parentUUID", inv->gpus[4].uuid);
    want_str(m, "profile", "1g.10gb");
    want_str(m, "productName", "NVIDIA H100 80GB HBM3");
    want_str(m, "brand", "Nvidia");
    want_str(m, "architecture", "Hopper");
    want_ver(m, "cudaComputeCapability", "9.0.0");
    want_ver(m, "driverVersion", "570.172.8");
    want_ver(m, "cudaDriverVersion", "12.8.0");
    want_str(m, "resource.kubernetes.io/pciBusID", "0000:9d:00.0");
    want_str(m, "resource.kubernetes.io/pcieRoot", "pci0000:97");
    assert_int_equal(m->n_capacity, 8);
    want_cap(m, "multiprocessors", "16");
    want_cap(m, "copyEngines", "1");
    want_cap(m, "decoders", "1");
    want_cap(m, "encoders", "0");
    want_cap(m, "jpegEngines", "1");
    want_cap(m, "ofaEngines", "0");
    want_cap(m, "memory", "9984Mi");
    want_cap(m, "memorySlice0", "1");
    m = dev(s, n, "gpu-5-mig-3g40gb-9-0");
    assert_int_equal(m->n_capacity, 11);
    want_cap(m, "multiprocessors", "60");
    want_cap(m, "memory", "40448Mi");
    want_cap(m, "memorySlice3", "1");
    want_absent(m, "memorySlice4");
    m = dev(s, n, "gpu-7-mig-1g10gb-me-20-6");
    want_str(m, "profile", "1g.10gb+me");
    want_cap(m, "ofaEngines", "1");
    want_cap(m, "memorySlice6", "1");
    m = dev(s, n, "gpu-6-mig-7g80gb-0-0");
    want_cap(m, "memorySlice7", "1");
    want_cap(m, "copyEngines", "8");
    validate_all(&a, s, n);

    /* The MIG device's capability nodes: GI 7 and CI 0 of GPU 4. */
    const dra_gpu_device *gd;
    const dra_gpu_mig *mig;
    assert_int_equal(dra_gpu_find(inv, "gpu-4-mig-1g10gb-19-0", &gd, &mig), DRA_OK);
    assert_ptr_equal(gd, &inv->gpus[4]);
    assert_int_equal(mig->gi_id, 7);
    assert_int_equal(mig->ci_id, 0);
    assert_string_equal(mig->cap_gi.path, "/dev/nvidia-caps/nvidia-cap606");
    assert_string_equal(mig->cap_ci.path, "/dev/nvidia-caps/nvidia-cap607");
    assert_int_equal(mig->cap_gi.is_char_dev, 1);
    assert_int_equal(mig->cap_gi.major, 237);
    assert_int_equal(mig->cap_gi.minor, 606);
    assert_int_equal(mig->cap_gi.mode, 0444);
    assert_int_equal(dra_gpu_find(inv, "gpu-6-mig-7g80gb-0-0", &gd, &mig), DRA_OK);
    assert_int_equal(mig->gi_id, 0);
    assert_int_equal(mig->placement.size, 8);
    dra_gpu_close(g);
    dra_arena_fini(&a);
    fx_rm(&f);
}

static void check_part_gpu0(const dra_device *d, const char *set)
{
    assert_string_equal(d->name, "gpu-0");
    want_str(d, "type", "gpu");
    want_absent(d, "addressingMode");
    want_str(d, "resource.kubernetes.io/pcieRoot", "pci0000:15");
    /* Capacity: the maxima over every profile (the 7g.80gb one). */
    assert_int_equal(d->n_capacity, 7);
    want_cap(d, "multiprocessors", "132");
    want_cap(d, "copyEngines", "8");
    want_cap(d, "memory", "81152Mi");
    assert_int_equal(d->n_consumes_counters, 1);
    assert_string_equal(d->consumes_counters[0].counter_set, set);
    assert_int_equal(d->consumes_counters[0].n_counters, 15);
    want_counter(d->consumes_counters[0].counters, 15, "memory-slice-7", "1");
    want_counter(d->consumes_counters[0].counters, 15, "jpeg-engines", "7");
}

static void check_part_mig(const dra_resource_slice_spec *s, size_t n)
{
    const dra_device *m = dev(s, n, "gpu-0-mig-1g20gb-15-4");
    want_str(m, "type", "mig");
    want_str(m, "profile", "1g.20gb");
    want_absent(m, "uuid");
    want_absent(m, "resource.kubernetes.io/pcieRoot");
    want_str(m, "resource.kubernetes.io/pciBusID", "0000:1b:00.0");
    assert_int_equal(m->n_capacity, 7);
    want_cap(m, "multiprocessors", "26");
    want_cap(m, "memory", "20096Mi");
    want_absent(m, "memorySlice4");
    assert_int_equal(m->n_consumes_counters, 1);
    const dra_counter_consumption *cc = &m->consumes_counters[0];
    assert_string_equal(cc->counter_set, "gpu-0-counter-set");
    assert_int_equal(cc->n_counters, 9);
    want_counter(cc->counters, cc->n_counters, "multiprocessors", "26");
    want_counter(cc->counters, cc->n_counters, "copy-engines", "1");
    want_counter(cc->counters, cc->n_counters, "ofa-engines", "0");
    want_counter(cc->counters, cc->n_counters, "memory-slice-4", "1");
    want_counter(cc->counters, cc->n_counters, "memory-slice-5", "1");
}

static void test_h100_dynamic(void **state)
{
    (void)state;
    fx f;
    dra_arena a;
    fx_make(&f, "h100.yaml", NULL);
    dra_arena_init(&a, NULL);
    dra_gpu *g = fx_open(&f, NULL);
    dra_gpu_inventory *inv = fx_discover(g, &a);
    dra_resource_slice_spec *s;
    size_t n;

    /* >= 1.35: counters alone first, then one devices-only slice per GPU. */
    slices(&a, inv, 1, 1, &s, &n);
    assert_int_equal(n, 9);
    assert_int_equal(s[0].n_devices, 0);
    assert_int_equal(s[0].n_shared_counters, 8);
    for (unsigned i = 0; i < 8; i++) {
        char name[32];
        snprintf(name, sizeof name, "gpu-%u-counter-set", i);
        assert_string_equal(s[0].shared_counters[i].name, name);
        assert_int_equal(s[0].shared_counters[i].n_counters, 15);
        assert_int_equal(s[1 + i].n_shared_counters, 0);
        /* full GPU + 7 + 7 + 4 + 3 + 2 + 1 + 1 partitions */
        assert_int_equal(s[1 + i].n_devices, 26);
    }
    const dra_counter_set *cs = &s[0].shared_counters[0];
    want_counter(cs->counters, cs->n_counters, "multiprocessors", "132");
    want_counter(cs->counters, cs->n_counters, "copy-engines", "8");
    want_counter(cs->counters, cs->n_counters, "decoders", "7");
    want_counter(cs->counters, cs->n_counters, "encoders", "0");
    want_counter(cs->counters, cs->n_counters, "jpeg-engines", "7");
    want_counter(cs->counters, cs->n_counters, "ofa-engines", "1");
    want_counter(cs->counters, cs->n_counters, "memory", "81152Mi");
    want_counter(cs->counters, cs->n_counters, "memory-slice-0", "1");
    want_counter(cs->counters, cs->n_counters, "memory-slice-7", "1");
    check_part_gpu0(&s[1].devices[0], "gpu-0-counter-set");
    assert_string_equal(s[1].devices[1].name, "gpu-0-mig-1g10gb-19-0");
    for (size_t j = 1; j < s[1].n_devices; j++)
        assert_true(strcmp(s[1].devices[j - 1].name, s[1].devices[j].name) < 0);
    check_part_mig(s, n);
    dev(s, n, "gpu-7-mig-1g10gb-me-20-3");
    dev(s, n, "gpu-3-mig-7g80gb-0-0");
    validate_all(&a, s, n);

    /* < 1.35: one slice per GPU with its counter set and its devices. */
    slices(&a, inv, 1, 0, &s, &n);
    assert_int_equal(n, 8);
    for (unsigned i = 0; i < 8; i++) {
        assert_int_equal(s[i].n_shared_counters, 1);
        assert_int_equal(s[i].n_devices, 26);
    }
    assert_string_equal(s[3].shared_counters[0].name, "gpu-3-counter-set");
    check_part_gpu0(&s[0].devices[0], "gpu-0-counter-set");
    dra_gpu_close(g);
    dra_arena_fini(&a);
    fx_rm(&f);
}

static void test_a100(void **state)
{
    (void)state;
    fx f;
    dra_arena a;
    fx_make(&f, "a100.yaml", NULL);
    dra_arena_init(&a, NULL);
    dra_gpu *g = fx_open(&f, NULL);
    dra_gpu_inventory *inv = fx_discover(g, &a);
    assert_int_equal(inv->n_gpus, 4);
    assert_int_equal(inv->gpus[3].mig_enabled, 1);
    assert_int_equal(inv->gpus[3].n_migs, 0);
    assert_null(inv->gpus[1].pcie_root);
    assert_int_equal(inv->gpus[1].n_drm_nodes, 0); /* no sysfs entry at all */
    dra_resource_slice_spec *s;
    size_t n;
    slices(&a, inv, 0, 0, &s, &n);
    assert_int_equal(n, 1);
    assert_int_equal(s[0].n_devices, 4); /* gpu-0, gpu-1, two MIG devices; gpu-3 nothing */
    assert_string_equal(s[0].devices[0].name, "gpu-0");
    assert_string_equal(s[0].devices[1].name, "gpu-1");
    assert_string_equal(s[0].devices[2].name, "gpu-2-mig-3g20gb-9-0");
    assert_string_equal(s[0].devices[3].name, "gpu-2-mig-3g20gb-9-4");
    const dra_device *d = &s[0].devices[1];
    assert_int_equal(d->n_attrs, 9);
    want_absent(d, "resource.kubernetes.io/pcieRoot");
    want_str(d, "resource.kubernetes.io/pciBusID", "0000:0f:00.0");
    want_str(d, "productName", "NVIDIA A100-SXM4-40GB");
    want_str(d, "architecture", "Ampere");
    want_ver(d, "cudaComputeCapability", "8.0.0");
    want_ver(d, "driverVersion", "550.163.1");
    want_ver(d, "cudaDriverVersion", "12.4.0");
    want_cap(d, "memory", "40Gi");
    d = &s[0].devices[3];
    want_str(d, "profile", "3g.20gb");
    want_cap(d, "multiprocessors", "42");
    want_cap(d, "decoders", "2");
    want_cap(d, "memory", "19968Mi");
    want_cap(d, "memorySlice4", "1");
    want_cap(d, "memorySlice7", "1");
    want_absent(d, "memorySlice3");
    validate_all(&a, s, n);
    /* DynamicMIG on the A100 node: 7 profiles, 1g.5gb 7 placements. */
    slices(&a, inv, 1, 1, &s, &n);
    assert_int_equal(n, 5);
    dev(s, n, "gpu-3-mig-1g5gb-me-20-6");
    dev(s, n, "gpu-1-mig-7g40gb-0-0");
    validate_all(&a, s, n);
    dra_gpu_close(g);
    dra_arena_fini(&a);
    fx_rm(&f);
}

static void test_versions(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"10.0", "10.0.0"},         {"580.95.05", "580.95.5"}, {"13.0", "13.0.0"},
        {"580.126.20", "580.126.20"}, {"12", "12.0.0"},        {"v1.35.0", "1.35.0"},
        {"1.2.3-rc.1+b.5", "1.2.3-rc.1+b.5"}, {"007.1", "7.1.0"}};
    char buf[64];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        assert_int_equal(dra_gpu_version(cases[i][0], buf, sizeof buf), DRA_OK);
        assert_string_equal(buf, cases[i][1]);
    }
    static const char *const bad[] = {"", "a.b", "1..2", "1.2.3.4", "1.2-", "1.2+", "1.x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(dra_gpu_version(bad[i], buf, sizeof buf), DRA_EPARSE);
    assert_int_equal(dra_gpu_version("580.126.20", buf, 5), DRA_ERANGE);
    assert_int_equal(dra_gpu_split_counters("v1.35.0"), 1);
    assert_int_equal(dra_gpu_split_counters("v1.36.2-gke.1100"), 1);
    assert_int_equal(dra_gpu_split_counters("v1.34.2"), 0);
    assert_int_equal(dra_gpu_split_counters("v1.35.0-alpha.1"), 0);
    assert_int_equal(dra_gpu_split_counters("junk"), -1);
    static const char *const dns[][2] = {{"1g.10gb", "1g10gb"},     {"1g.10gb+me", "1g10gb-me"},
                                         {"2g.20gb+me.all", "2g20gb-meall"},
                                         {"1g.5gb-me", "1g5gb-me"}, {"1c.2g.20gb", "1c2g20gb"},
                                         {"+X.y+", "xy"}, {"a b", "a-b"}};
    for (size_t i = 0; i < sizeof dns / sizeof *dns; i++) {
        dra_gpu_profile_dns(dns[i][0], buf, sizeof buf);
        assert_string_equal(buf, dns[i][1]);
    }
    assert_int_equal(dra_gpu_xid_ignored_by_default(109), 1);
    assert_int_equal(dra_gpu_xid_ignored_by_default(79), 0);
}

/* Discovery under a failing allocator: every failure point cleans up. */
static void test_failmem(void **state)
{
    (void)state;
    fx f;
    fx_make(&f, "h100.yaml", NULL);
    int done = 0;
    for (long k = 0; !done && k < 100000; k++) {
        dra_failmem fm;
        dra_failmem_init(&fm, k);
        dra_gpu_opts o = {.driver_root = f.root, .mem = &fm.mem};
        dra_gpu *g = NULL;
        dra_err err = dra_gpu_open(&o, &g, NULL);
        if (!err) {
            dra_arena a;
            dra_gpu_inventory *inv;
            dra_resource_slice_spec *s;
            size_t n;
            dra_gpu_slice_opts so = {.node_name = "n", .dynamic_mig = 1, .split_counters = 1};
            dra_arena_init(&a, &fm.mem);
            err = dra_gpu_discover(g, &a, &inv, NULL);
            if (!err)
                err = dra_gpu_slices(inv, &so, &a, &s, &n, NULL);
            dra_arena_fini(&a);
            dra_gpu_close(g);
        }
        if (err)
            assert_int_equal(err, DRA_ENOMEM);
        done = !err;
        assert_int_equal(fm.live, 0);
    }
    assert_true(done);
    fx_rm(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gb200),       cmocka_unit_test(test_gb200_files),
        cmocka_unit_test(test_h100_static), cmocka_unit_test(test_h100_dynamic),
        cmocka_unit_test(test_a100),        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_failmem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
