/*
 * fuzz_cel: libFuzzer target for the CEL engine. Each input is compiled as
 * a selector expression in the DRA environment; when it compiles, it is
 * evaluated against three prepared devices (rich, empty, unicode/edge
 * values). The engine must never crash, leak or run unbounded: runtime
 * cost is capped by the environment's limit, and a diagnostic list is
 * passed so error paths that format messages are exercised too.
 * Differential: the same input compiled to plain instructions
 * (dra_cel_options.plain_code) must give the same result, message and
 * cost, at the default limit and at a limit of 20 that stops loops and
 * fused instructions midway.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dra/base.h"
#include "dra/cel.h"
#include "dra/codec.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NDEV 3

/* Built once per process: the env and devices are immutable inputs. */
static struct {
    dra_cel_env *env;
    dra_cel_env *plain, *small, *small_plain; /* see the header */
    dra_cel_vm *vm;
    dra_cel_prepared *dev[NDEV];
    int ready;
} g;

static const dra_cel_attr k_rich_attrs[] = {
    {.name = "gpu.nvidia.com/productName", .kind = DRA_CEL_ATTR_STRING, .s = "NVIDIA H100 80GB HBM3"},
    {.name = "gpu.nvidia.com/type", .kind = DRA_CEL_ATTR_STRING, .s = "gpu"},
    {.name = "gpu.nvidia.com/index", .kind = DRA_CEL_ATTR_INT, .i = 3},
    {.name = "gpu.nvidia.com/migCapable", .kind = DRA_CEL_ATTR_BOOL, .b = 1},
    {.name = "gpu.nvidia.com/driverVersion", .kind = DRA_CEL_ATTR_VERSION, .s = "580.126.20"},
    {.name = "resource.kubernetes.io/pciBusID", .kind = DRA_CEL_ATTR_STRING, .s = "0000:3b:00.0"},
    {.name = "namespace", .kind = DRA_CEL_ATTR_STRING, .s = "short-name form"},
};
static const dra_cel_attr k_edge_attrs[] = {
    {.name = "dra.example.com/max", .kind = DRA_CEL_ATTR_INT, .i = INT64_MAX},
    {.name = "dra.example.com/min", .kind = DRA_CEL_ATTR_INT, .i = INT64_MIN},
    {.name = "dra.example.com/label", .kind = DRA_CEL_ATTR_STRING, .s = "na\xc3\xafve \xf0\x9f\x99\x82"},
    {.name = "dra.example.com/empty", .kind = DRA_CEL_ATTR_STRING, .s = ""},
    {.name = "dra.example.com/version", .kind = DRA_CEL_ATTR_VERSION, .s = "1.0.0-rc.1+build.5"},
};

static int setup(void)
{
    static dra_cel_attr rich[sizeof k_rich_attrs / sizeof k_rich_attrs[0]];
    static dra_cel_attr edge[sizeof k_edge_attrs / sizeof k_edge_attrs[0]];
    static dra_cel_capacity caps[2];
    static const char *const qty[2] = {"80Gi", "1500m"};
    static dra_cel_device devs[NDEV];

    memcpy(rich, k_rich_attrs, sizeof rich);
    memcpy(edge, k_edge_attrs, sizeof edge);
    for (size_t i = 0; i < sizeof rich / sizeof rich[0]; i++)
        if (rich[i].kind == DRA_CEL_ATTR_VERSION &&
            dra_semver_parse(rich[i].s, strlen(rich[i].s), &rich[i].version))
            return -1;
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
        if (edge[i].kind == DRA_CEL_ATTR_VERSION &&
            dra_semver_parse(edge[i].s, strlen(edge[i].s), &edge[i].version))
            return -1;
    caps[0].name = "gpu.nvidia.com/memory";
    caps[1].name = "dra.example.com/cores";
    for (int i = 0; i < 2; i++)
        if (dra_quantity_parse(qty[i], strlen(qty[i]), &caps[i].value))
            return -1;
    devs[0] = (dra_cel_device){.driver = "gpu.nvidia.com", .attrs = rich,
                               .nattrs = sizeof rich / sizeof rich[0], .caps = caps,
                               .ncaps = 1};
    devs[1] = (dra_cel_device){.driver = "empty.example.com"};
    devs[2] = (dra_cel_device){.driver = "dra.example.com", .attrs = edge,
                               .nattrs = sizeof edge / sizeof edge[0], .caps = caps + 1,
                               .ncaps = 1, .allow_multiple_allocations = 1};
    dra_cel_options plain = {.plain_code = 1}, small = {.cost_limit = 20},
                     small_plain = {.cost_limit = 20, .plain_code = 1};
    if (dra_cel_env_new_dra(NULL, NULL, &g.env) || dra_cel_vm_new(NULL, &g.vm) ||
        dra_cel_env_new_dra(NULL, &plain, &g.plain) ||
        dra_cel_env_new_dra(NULL, &small, &g.small) ||
        dra_cel_env_new_dra(NULL, &small_plain, &g.small_plain))
        return -1;
    for (int i = 0; i < NDEV; i++)
        if (dra_cel_device_prepare(NULL, &devs[i], &g.dev[i]))
            return -1;
    g.ready = 1;
    return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return setup();
}

/* One evaluation's outcome, for the differential check. */
typedef struct outcome {
    dra_err rc;
    int r;
    uint64_t cost;
    char msg[160];
} outcome;

static int compile_eval(dra_cel_env *env, const uint8_t *data, size_t size, outcome *out)
{
    dra_diag d;
    dra_cel_program *p = NULL;
    dra_err rc;
    dra_diag_init(&d, NULL);
    rc = dra_cel_compile(env, (const char *)data, size, &p, &d);
    for (int i = 0; i < NDEV; i++) {
        outcome *o = &out[i];
        memset(o, 0, sizeof *o);
        o->rc = rc;
        if (rc == DRA_OK) {
            dra_diag_clear(&d);
            o->rc = dra_cel_eval_device(p, g.vm, g.dev[i], &o->r, &d);
            o->cost = dra_cel_vm_last_cost(g.vm);
        }
        if (dra_diag_first(&d))
            snprintf(o->msg, sizeof o->msg, "%s", dra_diag_first(&d));
    }
    dra_cel_program_unref(p);
    dra_diag_fini(&d);
    return rc == DRA_OK;
}

/* The optimised and the plain code agree (|tag| names the limit). */
static void same(dra_cel_env *fast, dra_cel_env *plain, const uint8_t *data, size_t size,
                 const char *tag)
{
    outcome a[NDEV], b[NDEV];
    int ok_a = compile_eval(fast, data, size, a), ok_b = compile_eval(plain, data, size, b);
    if (!ok_a && !ok_b && a[0].rc == b[0].rc)
        return; /* neither compiles, for the same reason */
    for (int i = 0; i < NDEV; i++)
        if (a[i].rc != b[i].rc || a[i].r != b[i].r || a[i].cost != b[i].cost ||
            strcmp(a[i].msg, b[i].msg)) {
            fprintf(stderr,
                    "fuzz_cel: %s limit, device %d: optimised %s %d cost %llu '%s', plain %s "
                    "%d cost %llu '%s'\n",
                    tag, i, dra_errname(a[i].rc), a[i].r, (unsigned long long)a[i].cost,
                    a[i].msg, dra_errname(b[i].rc), b[i].r, (unsigned long long)b[i].cost,
                    b[i].msg);
            __builtin_trap();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!g.ready)
        return 0;
    dra_diag d;
    dra_diag_init(&d, NULL);
    dra_cel_program *p = NULL;
    if (dra_cel_compile(g.env, (const char *)data, size, &p, &d) == DRA_OK) {
        (void)dra_cel_program_cost_estimate(p);
        for (int i = 0; i < NDEV; i++) {
            int r1 = 0, r2 = 0;
            dra_diag_clear(&d);
            dra_err e1 = dra_cel_eval_device(p, g.vm, g.dev[i], &r1, &d);
            /* Once more without a diagnostic: the VM must be reusable
             * after an error, and the quiet path must not differ. */
            dra_err e2 = dra_cel_eval_device(p, g.vm, g.dev[i], &r2, NULL);
            if (e1 != e2 || (e1 == DRA_OK && r1 != r2))
                __builtin_trap();
        }
        dra_cel_program_unref(p);
        same(g.env, g.plain, data, size, "default");
        same(g.small, g.small_plain, data, size, "small");
    }
    dra_diag_fini(&d);
    return 0;
}
