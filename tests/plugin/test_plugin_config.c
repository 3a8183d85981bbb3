/*
 * tests/plugin/test_plugin_config.c: the pure parts of module plugin:
 * opaque configuration (strict decoding and its messages, Normalize and
 * Validate under the feature gates, NVIDIA's precedence and type
 * checks), feature-gate parsing, the checkpoint format (round trip,
 * checksum), CDI names and the minimum cdiVersion rules.
 */
#include "dra_test.h"
#include "plugin/plugin_int.h"

static dra_doc *json(dra_arena *a, const char *text)
{
    dra_doc *d = NULL;
    assert_int_equal(dra_doc_parse_json(a, text, strlen(text), &d, NULL), DRA_OK);
    return d;
}

static void decode_err(const char *text, const char *want)
{
    dra_arena a;
    dra_arena_init(&a, NULL);
    plugin_cfg c;
    char err[1024] = "";
    dra_err e = plugin_cfg_decode(&a, json(&a, text), &c, err, sizeof(err));
    if (e == DRA_OK || strcmp(err, want) != 0)
        fail_msg("%s\n  got:  %s\n  want: %s", text, err, want);
    dra_arena_fini(&a);
}

static void test_decode_strict(void **state)
{
    (void)state;
    decode_err("{\"apiVersion\":\"resource.nvidia.com/v1beta1\",\"kind\":\"GpuConfig\","
               "\"sharing\":{\"strategy\":\"MPS\",\"foo\":1},\"bar\":2}",
               "strict decoding error: unknown field \"sharing.foo\", unknown field \"bar\"");
    decode_err("{\"apiVersion\":\"resource.nvidia.com/v1beta1\",\"kind\":\"MigDeviceConfig\","
               "\"sharing\":{\"strategy\":\"TimeSlicing\",\"timeSlicingConfig\":{}}}",
               "strict decoding error: unknown field \"sharing.timeSlicingConfig\"");
    decode_err("{\"apiVersion\":\"resource.nvidia.com/v1beta1\",\"kind\":\"GpuConfig\","
               "\"sharing\":{\"strategy\":5}}",
               "json: cannot unmarshal number 5 into Go struct field "
               "GpuSharing.sharing.strategy of type v1beta1.GpuSharingStrategy");
    decode_err("{\"apiVersion\":\"resource.nvidia.com/v1beta1\",\"kind\":\"GpuConfig\","
               "\"sharing\":{\"strategy\":\"MPS\",\"mpsConfig\":"
               "{\"defaultActiveThreadPercentage\":\"x\"}}}",
               "json: cannot unmarshal string into Go struct field "
               "MpsConfig.sharing.mpsConfig.defaultActiveThreadPercentage of type int");
    decode_err("{\"apiVersion\":\"resource.nvidia.com/v1beta1\",\"kind\":\"GpuConfig\","
               "\"sharing\":{\"strategy\":\"MPS\",\"mpsConfig\":"
               "{\"defaultPinnedDeviceMemoryLimit\":\"ten gigs\"}}}",
               "quantities must match the regular expression "
               "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    decode_err("{\"apiVersion\":\"resource.nvidia.com/v1beta1\",\"kind\":\"FooConfig\"}",
               "no kind \"FooConfig\" is registered for version \"resource.nvidia.com/v1beta1\" "
               "in scheme \"github.com/NVIDIA/k8s-dra-driver-gpu/api/nvidia.com/resource/v1beta1\"");
    decode_err("{\"apiVersion\":\"resource.nvidia.com/v1beta1\"}",
               "Object 'Kind' is missing in '{\"apiVersion\":\"resource.nvidia.com/v1beta1\"}'");
    decode_err("{\"kind\":\"GpuConfig\"}",
               "Object 'apiVersion' is missing in '{\"kind\":\"GpuConfig\"}'");
    /* GpuConfig has no metadata (TypeMeta only). */
    decode_err("{\"apiVersion\":\"resource.nvidia.com/v1beta1\",\"kind\":\"GpuConfig\","
               "\"metadata\":{\"name\":\"x\"}}",
               "strict decoding error: unknown field \"metadata\"");
}

static void test_decode_ok_and_validate(void **state)
{
    (void)state;
    dra_arena a;
    dra_arena_init(&a, NULL);
    plugin_cfg c;
    char err[512];
    dra_plugin_gates off, on;
    dra_plugin_gates_default(&off);
    dra_plugin_gates_default(&on);
    on.time_slicing_settings = on.mps_support = 1;

    assert_int_equal(plugin_cfg_decode(&a,
                                       json(&a, "{\"apiVersion\":\"resource.nvidia.com/v1beta1\","
                                                "\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":"
                                                "\"MPS\",\"mpsConfig\":{\"defaultActiveThreadPercentage\""
                                                ":50,\"defaultPinnedDeviceMemoryLimit\":\"10Gi\","
                                                "\"defaultPerDevicePinnedMemoryLimit\":{\"0\":\"5Gi\"}}}}"),
                                       &c, err, sizeof(err)),
                     DRA_OK);
    assert_int_equal(c.kind, PLUGIN_CFG_GPU);
    assert_string_equal(c.strategy, "MPS");
    assert_int_equal(c.mps.thread_pct, 50);
    assert_int_equal(dra_quantity_value(&c.mps.pinned), 10LL << 30);
    assert_int_equal(c.mps.n_per_dev, 1);
    /* Gates off: NVIDIA's "unknown GPU sharing strategy". */
    plugin_cfg_normalize(&c, &off);
    assert_int_equal(plugin_cfg_validate(&c, &off, err, sizeof(err)), DRA_EINVAL);
    assert_string_equal(err, "unknown GPU sharing strategy: MPS");
    assert_int_equal(plugin_cfg_validate(&c, &on, err, sizeof(err)), DRA_OK);
    c.mps.thread_pct = 101;
    assert_int_equal(plugin_cfg_validate(&c, &on, err, sizeof(err)), DRA_EINVAL);
    assert_string_equal(err, "active thread percentage must not be greater than 100");
    c.mps.thread_pct = -1;
    assert_int_equal(plugin_cfg_validate(&c, &on, err, sizeof(err)), DRA_EINVAL);
    assert_string_equal(err, "active thread percentage must not be negative");

    assert_int_equal(plugin_cfg_decode(&a,
                                       json(&a, "{\"apiVersion\":\"resource.nvidia.com/v1beta1\","
                                                "\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":"
                                                "\"TimeSlicing\",\"timeSlicingConfig\":{\"interval\":"
                                                "\"Forever\"}}}"),
                                       &c, err, sizeof(err)),
                     DRA_OK);
    plugin_cfg_normalize(&c, &on);
    assert_int_equal(plugin_cfg_validate(&c, &on, err, sizeof(err)), DRA_EINVAL);
    assert_string_equal(err, "unknown time-slice interval: Forever");

    /* Normalize: TimeSlicing without a config gets interval Default. */
    assert_int_equal(plugin_cfg_decode(&a,
                                       json(&a, "{\"apiVersion\":\"resource.nvidia.com/v1beta1\","
                                                "\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":"
                                                "\"TimeSlicing\"}}"),
                                       &c, err, sizeof(err)),
                     DRA_OK);
    plugin_cfg_normalize(&c, &on);
    assert_true(c.ts_set);
    assert_string_equal(c.interval, "Default");
    assert_int_equal(plugin_cfg_interval("Long"), 3);
    assert_int_equal(plugin_cfg_interval(NULL), 0);
    assert_int_equal(plugin_cfg_interval("long"), -1);

    /* The default GpuConfig is TimeSlicing/Default only with the gate. */
    plugin_cfg_default(&c, PLUGIN_CFG_GPU, &off);
    assert_false(c.has_sharing);
    plugin_cfg_default(&c, PLUGIN_CFG_GPU, &on);
    assert_string_equal(c.strategy, "TimeSlicing");
    assert_string_equal(c.interval, "Default");
    dra_arena_fini(&a);
}

static void test_precedence(void **state)
{
    (void)state;
    dra_arena a;
    dra_arena_init(&a, NULL);
    dra_plugin_gates g;
    dra_plugin_gates_default(&g);
    /* Class configs come first whatever their place in the list; among
     * claim configs later ones win; an unnamed later config beats an
     * earlier named one. */
    const char *yaml =
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: d}\n"
        "spec: {}\nstatus:\n  allocation:\n    devices:\n      results: []\n      config:\n"
        "      - source: FromClaim\n        requests: [a]\n        opaque: {driver: gpu.nvidia.com, "
        "parameters: {apiVersion: resource.nvidia.com/v1beta1, kind: GpuConfig, sharing: "
        "{strategy: S1}}}\n"
        "      - source: FromClass\n        opaque: {driver: gpu.nvidia.com, parameters: "
        "{apiVersion: resource.nvidia.com/v1beta1, kind: GpuConfig, sharing: {strategy: S0}}}\n"
        "      - source: FromClaim\n        requests: [b]\n        opaque: {driver: other.example.com, "
        "parameters: {nonsense: true}}\n"
        "      - source: FromClaim\n        requests: [m]\n        opaque: {driver: gpu.nvidia.com, "
        "parameters: {apiVersion: resource.nvidia.com/v1beta1, kind: MigDeviceConfig}}\n";
    dra_doc **docs;
    size_t n;
    assert_int_equal(dra_doc_parse_yaml(&a, yaml, strlen(yaml), &docs, &n, NULL), DRA_OK);
    dra_object *obj;
    assert_int_equal(dra_api_decode(&a, docs[0], &obj, NULL), DRA_OK);
    plugin_cfg *cfgs;
    size_t nc;
    char err[512];
    assert_int_equal(plugin_cfg_collect(&a, obj->u.claim.status.allocation, &g, &cfgs, &nc, err,
                                        sizeof(err)),
                     DRA_OK);
    /* defaults MIG, GPU; class S0; claim S1 (a); claim MIG (m) */
    assert_int_equal(nc, 5);
    assert_true(cfgs[0].is_default && cfgs[0].kind == PLUGIN_CFG_MIG);
    assert_true(cfgs[1].is_default && cfgs[1].kind == PLUGIN_CFG_GPU);
    assert_string_equal(cfgs[2].strategy, "S0");
    assert_string_equal(cfgs[3].strategy, "S1");
    assert_int_equal(plugin_cfg_match(cfgs, nc, "a", PLUGIN_DEV_GPU, err, sizeof(err)), 3);
    assert_int_equal(plugin_cfg_match(cfgs, nc, "z", PLUGIN_DEV_GPU, err, sizeof(err)), 2);
    assert_int_equal(plugin_cfg_match(cfgs, nc, "z", PLUGIN_DEV_MIG, err, sizeof(err)), 0);
    assert_int_equal(plugin_cfg_match(cfgs, nc, "m", PLUGIN_DEV_MIG, err, sizeof(err)), 4);
    assert_int_equal(plugin_cfg_match(cfgs, nc, "m", PLUGIN_DEV_GPU, err, sizeof(err)), -1);
    assert_string_equal(err, "cannot apply MigDeviceConfig to device type gpu (request: m)");
    assert_int_equal(plugin_cfg_match(cfgs, nc, "a", PLUGIN_DEV_MIG, err, sizeof(err)), -1);
    assert_string_equal(err, "cannot apply GpuConfig to device type mig (request: a)");
    dra_arena_fini(&a);
}

static void test_collect_errors(void **state)
{
    (void)state;
    dra_arena a;
    dra_arena_init(&a, NULL);
    dra_plugin_gates g;
    dra_plugin_gates_default(&g);
    dra_allocation_result al;
    memset(&al, 0, sizeof(al));
    dra_device_config dc;
    memset(&dc, 0, sizeof(dc));
    dc.source = "FromClaim";
    al.config = &dc;
    al.n_config = 1;
    plugin_cfg *cfgs;
    size_t nc;
    char err[512];
    assert_int_equal(plugin_cfg_collect(&a, &al, &g, &cfgs, &nc, err, sizeof(err)), DRA_EINVAL);
    assert_string_equal(err, "error getting opaque device configs: only opaque parameters are "
                             "supported by this driver");
    dc.source = "FromNowhere";
    assert_int_equal(plugin_cfg_collect(&a, &al, &g, &cfgs, &nc, err, sizeof(err)), DRA_EINVAL);
    assert_string_equal(err, "error getting opaque device configs: invalid config source: "
                             "FromNowhere");
    dra_arena_fini(&a);
}

static void test_gates(void **state)
{
    (void)state;
    dra_plugin_gates g;
    dra_diag d;
    dra_diag_init(&d, NULL);
    dra_plugin_gates_default(&g);
    assert_int_equal(dra_plugin_gates_parse(&g, "TimeSlicingSettings=true,MPSSupport=True,"
                                                 " NVMLDeviceHealthCheck=1,",
                                            &d),
                     DRA_OK);
    assert_true(g.time_slicing_settings && g.mps_support && g.nvml_device_health_check);
    assert_true(g.device_taints);
    assert_int_equal(dra_plugin_gates_parse(&g, "Bogus=true", &d), DRA_EINVAL);
    assert_string_equal(dra_diag_first(&d), "unrecognized feature gate: Bogus");
    dra_diag_clear(&d);
    assert_int_equal(dra_plugin_gates_parse(&g, "MPSSupport=maybe", &d), DRA_EINVAL);
    assert_non_null(strstr(dra_diag_first(&d), "invalid value of MPSSupport=maybe"));
    dra_diag_clear(&d);
    dra_plugin_gates_default(&g);
    assert_int_equal(dra_plugin_gates_parse(&g, "DynamicMIG=true,MPSSupport=true", &d),
                     DRA_EINVAL);
    assert_non_null(strstr(dra_diag_first(&d), "DynamicMIG is currently mutually exclusive "
                                                "with MPSSupport"));
    dra_diag_fini(&d);
}

static void test_checkpoint_format(void **state)
{
    (void)state;
    dra_arena a;
    dra_arena_init(&a, NULL);
    plugin_cp cp;
    memset(&cp, 0, sizeof(cp));
    cp.boot_id = "boot-1";
    const char *reqs[] = {"gpu/sub"};
    const char *ids[] = {"k8s.gpu.nvidia.com/claim=u1-gpu-0"};
    plugin_cp_device dev = {0, "GPU-1", NULL, 0, 0, 0, reqs, 1, "node", "gpu-0", ids, 1};
    plugin_cp_group grp = {&dev, 1, "", 1};
    plugin_cp_claim c = {"u1", PLUGIN_CP_COMPLETED, "c", "ns", json(&a, "{\"allocation\":{}}"),
                         &grp, 1};
    plugin_cp_claim s = {"u2", PLUGIN_CP_STARTED, "c2", "ns", NULL, NULL, 0};
    assert_int_equal(plugin_cp_put(&cp, &a, &c), DRA_OK);
    assert_int_equal(plugin_cp_put(&cp, &a, &s), DRA_OK);
    dra_buf b;
    dra_buf_init(&b, NULL);
    assert_int_equal(plugin_cp_encode(&cp, &a, &b), DRA_OK);
    assert_non_null(strstr(b.p, "\"checkpointState\":\"PrepareCompleted\""));
    assert_non_null(strstr(b.p, "\"DeviceName\":\"gpu-0\""));
    assert_non_null(strstr(b.p, "\"nodeBootID\":\"boot-1\""));
    plugin_cp back;
    assert_int_equal(plugin_cp_decode(&a, b.p, b.len, &back, NULL), DRA_OK);
    assert_int_equal(back.n, 2);
    plugin_cp_claim *bc = plugin_cp_find(&back, "u1");
    assert_non_null(bc);
    assert_int_equal(bc->state, PLUGIN_CP_COMPLETED);
    assert_int_equal(bc->n_groups, 1);
    assert_true(bc->groups[0].timeslice);
    assert_string_equal(bc->groups[0].devices[0].requests[0], "gpu/sub");
    assert_string_equal(bc->groups[0].devices[0].uuid, "GPU-1");
    assert_int_equal(plugin_cp_find(&back, "u2")->state, PLUGIN_CP_STARTED);
    /* A flipped byte is caught by the checksum. */
    char *hit = strstr(b.p, "gpu-0");
    hit[4] = '9';
    dra_diag d;
    dra_diag_init(&d, NULL);
    assert_int_equal(plugin_cp_decode(&a, b.p, b.len, &back, &d), DRA_EINVALID);
    assert_non_null(strstr(dra_diag_first(&d), "checkpoint is corrupted"));
    assert_int_equal(plugin_cp_decode(&a, "{", 1, &back, &d), DRA_EINVALID);
    dra_diag_fini(&d);
    assert_int_equal(plugin_cp_del(&cp, "u1"), 1);
    assert_int_equal(plugin_cp_del(&cp, "u1"), 0);
    dra_buf_fini(&b);
    dra_arena_fini(&a);
}

static void test_cdi_names_versions(void **state)
{
    (void)state;
    char name[256];
    plugin_cdi_file_name("4a3f-uid", name, sizeof(name));
    assert_string_equal(name, "k8s.gpu.nvidia.com-claim_4a3f-uid.yaml");
    plugin_cdi_file_name("a/b", name, sizeof(name));
    assert_string_equal(name, "k8s.gpu.nvidia.com-claim_a_b.yaml");
    assert_true(plugin_cdi_name_ok("dab5ab50-d59a-42a6-af16-cfd4628c0f7a-gpu-0"));
    assert_false(plugin_cdi_name_ok("-x"));
    assert_false(plugin_cdi_name_ok("x/y"));
    assert_false(plugin_cdi_name_ok(""));

    dra_arena a;
    dra_arena_init(&a, NULL);
    assert_string_equal(plugin_cdi_min_version(json(&a,
                            "{\"kind\":\"k8s.gpu.nvidia.com/claim\",\"devices\":[{\"name\":\"a\","
                            "\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/x\"}]}}]}")),
                        "0.3.0");
    assert_string_equal(plugin_cdi_min_version(json(&a,
                            "{\"kind\":\"k8s.gpu.nvidia.com/claim\",\"devices\":[{\"name\":\"1a\","
                            "\"containerEdits\":{}}]}")),
                        "0.5.0");
    assert_string_equal(plugin_cdi_min_version(json(&a,
                            "{\"kind\":\"k8s.gpu.nvidia.com/claim\",\"devices\":[{\"name\":\"a\","
                            "\"containerEdits\":{}}],\"containerEdits\":{\"deviceNodes\":"
                            "[{\"path\":\"/dev/x\",\"hostPath\":\"/r/dev/x\"}]}}")),
                        "0.5.0");
    assert_string_equal(plugin_cdi_min_version(json(&a,
                            "{\"kind\":\"k8s.gpu.nvidia.com/claim\",\"devices\":[{\"name\":\"a\","
                            "\"containerEdits\":{\"mounts\":[{\"hostPath\":\"/a\",\"containerPath\":"
                            "\"/a\",\"type\":\"bind\"}]}}]}")),
                        "0.4.0");
    assert_string_equal(plugin_cdi_min_version(json(&a,
                            "{\"kind\":\"x.com/a.b\",\"devices\":[{\"name\":\"a\"}]}")),
                        "0.6.0");
    dra_arena_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_strict),
        cmocka_unit_test(test_decode_ok_and_validate),
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_collect_errors),
        cmocka_unit_test(test_gates),
        cmocka_unit_test(test_checkpoint_format),
        cmocka_unit_test(test_cdi_names_versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
