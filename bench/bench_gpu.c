/*
 * bench_gpu: time from NVML discovery to ResourceSlice objects ready to
 * publish (JSON bytes), for the 8 x H100 node with MIG on the fake NVML
 * (tests/data/gpu/h100.yaml): dra_gpu_open (dlopen + dlsym) once, then per
 * round nvmlInit .. nvmlShutdown (the fake re-reads its YAML inventory
 * there, which a real driver does not), the driver-root files, the slices
 * in NVIDIA's default layout and in the DynamicMIG layout, and their JSON
 * encoding. Goal: <= 50 ms. Prints figures; asserts nothing.
 *
 *   bench_gpu [--inventory FILE] [--node NAME] [--rounds N]
 */
#define _GNU_SOURCE
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dra/api.h"
#include "dra/codec.h"
#include "dra/gpu.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* <build> from <build>/bench/bench_gpu; the source dir from its cache. */
static int find_dirs(char *build, size_t bsize, char *src, size_t ssize)
{
    char exe[PATH_MAX], line[PATH_MAX + 64];
    if (!realpath("/proc/self/exe", exe))
        return -1;
    for (int i = 0; i < 2; i++) {
        char *s = strrchr(exe, '/');
        if (!s)
            return -1;
        *s = 0;
    }
    snprintf(build, bsize, "%s", exe);
    snprintf(line, sizeof line, "%s/CMakeCache.txt", build);
    FILE *f = fopen(line, "r");
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        if (!strncmp(line, "dra_SOURCE_DIR:STATIC=", 22)) {
            line[strcspn(line, "\n")] = 0;
            found = (size_t)snprintf(src, ssize, "%s", line + 22) < ssize;
        }
    if (f)
        fclose(f);
    return found ? 0 : -1;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

typedef struct round_out {
    size_t devices, slices, json_bytes;
} round_out;

static int publishable(dra_arena *a, const dra_gpu_inventory *inv, int dynamic, round_out *r)
{
    dra_gpu_slice_opts o = {.node_name = "h100-node-01", .dynamic_mig = dynamic,
                            .split_counters = dynamic, .pool_generation = 1};
    dra_resource_slice_spec *s;
    size_t n;
    dra_buf json;
    if (dra_gpu_slices(inv, &o, a, &s, &n, NULL))
        return -1;
    dra_buf_init(&json, NULL);
    for (size_t i = 0; i < n; i++) {
        dra_object *obj = dra_api_object_new(a, DRA_KIND_RESOURCE_SLICE);
        dra_doc *doc;
        if (!obj)
            return -1;
        obj->meta.generate_name = "h100-node-01-gpu.nvidia.com-";
        obj->u.slice.spec = s[i];
        if (dra_api_encode(a, obj, &doc) || dra_doc_to_json(doc, 0, &json))
            return -1;
        r->devices += s[i].n_devices;
    }
    r->slices += n;
    r->json_bytes += json.len;
    dra_buf_fini(&json);
    return 0;
}

static int one_round(dra_gpu *g, round_out *r, double *t_disc)
{
    dra_arena a;
    dra_gpu_inventory *inv;
    dra_diag d;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    double t0 = now_ms();
    int rc = dra_gpu_discover(g, &a, &inv, &d) ? -1 : 0;
    *t_disc = now_ms() - t0;
    if (rc)
        fprintf(stderr, "bench_gpu: %s\n", dra_diag_first(&d) ? dra_diag_first(&d) : "discovery failed");
    if (!rc)
        rc = publishable(&a, inv, 0, r);
    if (!rc)
        rc = publishable(&a, inv, 1, r);
    dra_diag_fini(&d);
    dra_arena_fini(&a);
    return rc;
}

int main(int argc, char **argv)
{
    char build[PATH_MAX], src[PATH_MAX], inv_path[PATH_MAX + 64], lib[PATH_MAX + 64];
    char smi[PATH_MAX + 64], dir[] = "/tmp/dra-bench-gpu-XXXXXX", root[64], dev[80];
    const char *inventory = NULL, *node = NULL;
    int rounds = 200;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--inventory"))
            inventory = argv[i + 1];
        else if (!strcmp(argv[i], "--node"))
            node = argv[i + 1];
        else if (!strcmp(argv[i], "--rounds"))
            rounds = atoi(argv[i + 1]);
    }
    if (rounds < 1 || find_dirs(build, sizeof build, src, sizeof src)) {
        fprintf(stderr, "bench_gpu: run it from the build tree (bench/bench_gpu)\n");
        return 2;
    }
    snprintf(inv_path, sizeof inv_path, "%s/tests/data/gpu/h100.yaml", src);
    snprintf(lib, sizeof lib, "%s/fake-gpu/libnvidia-ml.so.1", build);
    snprintf(smi, sizeof smi, "%s/fake-gpu/nvidia-smi", build);
    if (!mkdtemp(dir))
        return 1;
    snprintf(root, sizeof root, "%s/root", dir);
    snprintf(dev, sizeof dev, "%s/dev", root);
    setenv("DRA_FAKE_NVML_DEV_ROOT", dev, 1);
    dra_gpu_fake_root_opts fo = {.inventory = inventory ? inventory : inv_path, .node = node,
                                 .root = root, .fake_nvml = lib, .fake_smi = smi};
    dra_diag d;
    dra_diag_init(&d, NULL);
    dra_gpu *g = NULL;
    double t0 = now_ms();
    dra_err err = dra_gpu_fake_root(&fo, &d);
    double t_layout = now_ms() - t0;
    dra_gpu_opts go = {.driver_root = root};
    t0 = now_ms();
    if (!err)
        err = dra_gpu_open(&go, &g, &d);
    double t_open = now_ms() - t0;
    double *t = calloc((size_t)rounds, sizeof *t), *td = calloc((size_t)rounds, sizeof *td);
    round_out r = {0};
    int rc = err || !t || !td ? 1 : 0;
    if (err)
        fprintf(stderr, "bench_gpu: %s\n", dra_diag_first(&d) ? dra_diag_first(&d) : dra_strerror(err));
    for (int i = 0; !rc && i < rounds; i++) {
        round_out one = {0};
        t0 = now_ms();
        rc = one_round(g, &one, &td[i]);
        t[i] = now_ms() - t0;
        r = one;
    }
    if (!rc) {
        size_t p99 = (size_t)rounds * 99 / 100;
        qsort(t, (size_t)rounds, sizeof *t, cmp_d);
        qsort(td, (size_t)rounds, sizeof *td, cmp_d);
        printf("bench_gpu: %s, %d rounds\n", fo.inventory, rounds);
        printf("  fake driver root layout        %8.3f ms (once)\n", t_layout);
        printf("  dra_gpu_open (dlopen, dlsym)   %8.3f ms (once)\n", t_open);
        printf("  discovery (nvmlInit..Shutdown + files): min %.3f ms, median %.3f ms, p99 %.3f ms\n",
               td[0], td[rounds / 2], td[p99]);
        printf("  discovery -> JSON slices, both layouts: min %.3f ms, median %.3f ms, p99 %.3f ms "
               "(goal <= 50 ms)\n",
               t[0], t[rounds / 2], t[p99]);
        printf("  per round: %zu slices, %zu devices, %zu bytes of JSON\n", r.slices, r.devices,
               r.json_bytes);
    }
    free(t);
    free(td);
    dra_gpu_close(g);
    dra_diag_fini(&d);
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return rc;
}
