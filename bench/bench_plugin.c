/*
 * bench_plugin.c: the GPU kubelet plugin as the kubelet sees it, on fake
 * driver roots (module gpu's fake NVML) and an in-process API server
 * stand-in (a dra_cluster transport that answers from memory):
 *  - NodePrepareResources latency over the real unix socket, for claims
 *    of 1 and 8 GPUs, p50 and p99, each prepare including the claim GET,
 *    the CDI spec write (fsync'ed) and two checkpoint replacements
 *    (fsync of file and directory each); unprepare runs between tries;
 *  - discovery to published: dra_plugin_new (NVML discovery of the
 *    8 x H100 node with MIG on four GPUs) + dra_plugin_start until the
 *    ResourceSlice reaches the API server;
 *  - the process's RSS (plugin, its gRPC servers and the client).
 *
 *   bench_plugin [iterations [dir]]   (default 300 in /tmp)
 *
 * |dir| holds the driver root, the CDI root and the checkpoint: the
 * figures depend on what an fsync costs there, which is printed first
 * (a tmpfs such as /dev/shm shows the plugin's own cost).
 *
 * Needs the fake NVML built: cmake --build B --target bench_plugin
 * dra_fake_nvml dra_fake_smi. Wall-clock times (fsync is I/O): on a
 * shared machine, run it twice and keep the lower figures.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dra/gpu.h"
#include "dra/plugin.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void die(const char *what, const dra_diag *d, dra_err e)
{
    fprintf(stderr, "bench_plugin: %s: %s\n", what,
            d && dra_diag_first(d) ? dra_diag_first(d) : dra_strerror(e));
    exit(1);
}

/* ---- an API server in memory -------------------------------------------- */

typedef struct api {
    char claims[64][4096]; /* JSON by claim index */
    char claim_names[64][64];
    int n_claims;
    int slices_created;
    dra_buf slice; /* the last slice written */
} api;

static int ends_with_name(const char *path, const char *prefix, char *name, size_t cap)
{
    size_t n = strlen(prefix);
    if (strncmp(path, prefix, n) != 0)
        return 0;
    snprintf(name, cap, "%s", path + n);
    return 1;
}

static dra_err api_request(void *ud, const dra_cluster_req *req, int *code, dra_buf *body,
                           dra_kstatus *st)
{
    api *a = ud;
    char name[256];
    (void)st;
    *code = 200;
    if (strcmp(req->method, "GET") == 0 &&
        ends_with_name(req->path, "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/",
                       name, sizeof(name))) {
        for (int i = 0; i < a->n_claims; i++)
            if (strcmp(a->claim_names[i], name) == 0)
                return dra_buf_puts(body, a->claims[i]);
        *code = 404;
        return dra_buf_puts(body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":"
                                  "\"Failure\",\"reason\":\"NotFound\",\"code\":404}");
    }
    if (strcmp(req->method, "GET") == 0 && strncmp(req->path, "/api/v1/nodes/", 14) == 0)
        return dra_buf_printf(body, "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":"
                                    "{\"name\":\"%s\",\"uid\":\"node-uid-1\"}}",
                              req->path + 14);
    if (strcmp(req->path, "/apis/resource.k8s.io/v1/resourceslices") == 0) {
        if (strcmp(req->method, "GET") == 0)
            return dra_buf_puts(body, "{\"kind\":\"ResourceSliceList\",\"apiVersion\":"
                                      "\"resource.k8s.io/v1\",\"metadata\":{},\"items\":[]}");
        if (strcmp(req->method, "POST") == 0) {
            a->slices_created++;
            dra_buf_reset(&a->slice);
            dra_buf_append(&a->slice, req->body, req->body_len);
            *code = 201;
            return dra_buf_append(body, req->body, req->body_len);
        }
    }
    if (strcmp(req->path, "/version") == 0)
        return dra_buf_puts(body, "{\"gitVersion\":\"v1.35.0\"}");
    *code = 404;
    return dra_buf_puts(body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"code\":404}");
}

static dra_err no_watch(void *ud, const char *path, const char *query, dra_watch_stream **out,
                        dra_kstatus *st)
{
    (void)ud, (void)path, (void)query, (void)out, (void)st;
    return DRA_EUNSUPPORTED;
}

/* ---- fixtures -------------------------------------------------------------- */

static char src_dir[512], fake_dir[512];
static const char *base_dir = "/tmp";

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)flag, (void)f;
    return remove(p);
}

static void paths(void)
{
    char exe[512] = "", file[512];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = '\0';
    snprintf(fake_dir, sizeof(fake_dir), "%s/../fake-gpu", dirname(exe));
    snprintf(file, sizeof(file), "%s", __FILE__);
    snprintf(src_dir, sizeof(src_dir), "%s/..", dirname(file));
}

/* The H100 node of tests/data/gpu/h100.yaml (MIG on four GPUs), or
 * with |all_full| eight full H100s written here. */
static void make_root(const char *dir, int all_full)
{
    char inv[1024], out[1024], nvml[1024], smi[1024];
    snprintf(inv, sizeof(inv), "%s/tests/data/gpu/h100.yaml", src_dir);
    snprintf(out, sizeof(out), "%s/inventory.yaml", dir);
    if (all_full) {
        FILE *o = fopen(out, "w");
        if (!o)
            exit(1);
        fprintf(o, "nodes:\n- name: h100-node-01\n  driverVersion: \"570.172.08\"\n"
                   "  cudaDriverVersion: 12080\n  gpus:\n");
        for (int g = 0; g < 8; g++)
            fprintf(o, "  - {minor: %d, uuid: GPU-00000000-0000-4000-8000-00000000000%d, "
                       "name: NVIDIA H100 80GB HBM3, brand: Nvidia, architecture: Hopper, "
                       "computeCapability: \"9.0\", memory: 81559Mi, pciBusId: "
                       "\"0000:%02x:00.0\", pciDeviceId: 0x233010DE}\n",
                    g, g, 0x10 + g);
        fclose(o);
    } else {
        snprintf(out, sizeof(out), "%s", inv);
    }
    snprintf(nvml, sizeof(nvml), "%s/libnvidia-ml.so.1", fake_dir);
    snprintf(smi, sizeof(smi), "%s/nvidia-smi", fake_dir);
    char root[1100];
    snprintf(root, sizeof(root), "%s/root", dir);
    dra_gpu_fake_root_opts fo = {out, NULL, root, nvml, smi, NULL};
    dra_diag d;
    dra_diag_init(&d, NULL);
    dra_err e = dra_gpu_fake_root(&fo, &d);
    if (e != DRA_OK)
        die("fake driver root (build dra_fake_nvml and dra_fake_smi)", &d, e);
    dra_diag_fini(&d);
}

typedef struct node {
    char dir[256], root[400], cdi[400], plugins[400], reg[400];
    api api;
    dra_cluster *cluster;
    dra_plugin *p;
} node;

static void node_start(node *n, int all_full, double *discover_ms)
{
    snprintf(n->dir, sizeof(n->dir), "%s/dra-bench-plugin-XXXXXX", base_dir);
    if (!mkdtemp(n->dir))
        exit(1);
    make_root(n->dir, all_full);
    snprintf(n->root, sizeof(n->root), "%s/root", n->dir);
    snprintf(n->cdi, sizeof(n->cdi), "%s/cdi", n->dir);
    snprintf(n->plugins, sizeof(n->plugins), "%s/plugins", n->dir);
    snprintf(n->reg, sizeof(n->reg), "%s/registry", n->dir);
    char dev[500];
    snprintf(dev, sizeof(dev), "%s/dev", n->root);
    setenv("DRA_FAKE_NVML_DEV_ROOT", dev, 1);
    dra_buf_init(&n->api.slice, NULL);
    dra_cluster_ops ops = {api_request, no_watch, NULL, NULL, NULL, NULL};
    n->cluster = dra_cluster_new(&ops, &n->api, NULL);
    dra_plugin_opts o;
    dra_plugin_opts_default(&o);
    o.node_name = "h100-node-01";
    o.cdi_root = n->cdi;
    o.plugins_dir = n->plugins;
    o.registrar_dir = n->reg;
    o.nvidia_driver_root = n->root;
    o.container_driver_root = n->root;
    o.cluster = n->cluster;
    dra_diag d;
    dra_diag_init(&d, NULL);
    double t0 = now_ms();
    dra_err e = dra_plugin_new(&o, NULL, &n->p, &d);
    if (e == DRA_OK)
        e = dra_plugin_start(n->p, &d);
    if (e != DRA_OK)
        die("plugin", &d, e);
    while (n->api.slices_created == 0 && now_ms() - t0 < 10000) {
        struct timespec nap = {0, 100000};
        nanosleep(&nap, NULL);
    }
    *discover_ms = now_ms() - t0;
    dra_diag_fini(&d);
}

static void node_stop(node *n)
{
    dra_plugin_free(n->p);
    dra_cluster_free(n->cluster);
    dra_buf_fini(&n->api.slice);
    nftw(n->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Adds claim |idx| (UID bench-<k>-<idx>) allocated with gpu-0..gpu-<k-1>. */
static void add_claim(api *a, int idx, int k, char *uid, size_t cap)
{
    snprintf(uid, cap, "bench-%d-%04d", k, idx);
    snprintf(a->claim_names[idx % 64], sizeof(a->claim_names[0]), "c-%.60s", uid);
    dra_buf b;
    dra_buf_init(&b, NULL);
    dra_buf_printf(&b, "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
                       "\"metadata\":{\"name\":\"c-%s\",\"namespace\":\"default\",\"uid\":\"%s\"},"
                       "\"spec\":{\"devices\":{\"requests\":[]}},\"status\":{\"allocation\":"
                       "{\"devices\":{\"results\":[",
                   uid, uid);
    for (int g = 0; g < k; g++)
        dra_buf_printf(&b, "%s{\"request\":\"gpus\",\"driver\":\"gpu.nvidia.com\",\"pool\":"
                           "\"h100-node-01\",\"device\":\"gpu-%d\"}",
                       g ? "," : "", g);
    dra_buf_puts(&b, "]}}}}");
    snprintf(a->claims[idx % 64], sizeof(a->claims[0]), "%s", b.p);
    if (a->n_claims < 64)
        a->n_claims++;
    dra_buf_fini(&b);
}

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static void prepare_bench(node *n, int k, int iters)
{
    char sock[500];
    snprintf(sock, sizeof(sock), "%s/gpu.nvidia.com/dra.sock", n->plugins);
    dra_plugin_client *c;
    if (dra_plugin_client_new(sock, NULL, &c) != DRA_OK)
        exit(1);
    double *t = calloc((size_t)iters, sizeof(double));
    dra_arena a;
    dra_arena_init(&a, NULL);
    for (int i = -10; i < iters; i++) { /* ten warm-up rounds */
        char uid[64];
        add_claim(&n->api, (i + 10) % 64, k, uid, sizeof(uid));
        dra_plugin_claim_ref ref = {"default", uid, n->api.claim_names[(i + 10) % 64]};
        dra_plugin_claim_result *res;
        size_t nr;
        dra_plugin_rpc_status st;
        double t0 = now_ms();
        dra_err e = dra_plugin_client_prepare(c, NULL, &ref, 1, 10000, &a, &res, &nr, &st);
        double dt = now_ms() - t0;
        if (e != DRA_OK || nr != 1 || (res[0].error && *res[0].error) ||
            res[0].n_devices != (size_t)k) {
            fprintf(stderr, "bench_plugin: prepare failed: %s %s\n", st.message,
                    nr ? res[0].error : "");
            exit(1);
        }
        if (i >= 0)
            t[i] = dt;
        if (dra_plugin_client_unprepare(c, NULL, &ref, 1, 10000, &a, &res, &nr, &st) != DRA_OK)
            exit(1);
        dra_arena_reset(&a);
    }
    qsort(t, (size_t)iters, sizeof(double), cmp_d);
    printf("NodePrepareResources, %d GPU%s: p50 %.3f ms, p99 %.3f ms, max %.3f ms (%d tries, "
           "goal p50 <= 2 ms)\n",
           k, k > 1 ? "s" : "", t[iters / 2], t[(iters * 99) / 100], t[iters - 1], iters);
    free(t);
    dra_arena_fini(&a);
    dra_plugin_client_free(c);
}

/* What one fsync costs in base_dir: a file's, or the directory's. */
static double fsync_ms(int dir)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/dra-bench-fsync", base_dir);
    int fd = dir ? open(base_dir, O_RDONLY | O_DIRECTORY) : open(path, O_CREAT | O_WRONLY, 0600);
    double t[20];
    for (int i = 0; i < 20; i++) {
        if (!dir && write(fd, "0123456789", 10) != 10)
            break;
        double t0 = now_ms();
        fsync(fd);
        t[i] = now_ms() - t0;
    }
    close(fd);
    unlink(path);
    qsort(t, 20, sizeof(double), cmp_d);
    return t[10];
}

static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t kl = strlen(key);
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, key, kl) == 0)
            v = atol(line + kl);
    if (f)
        fclose(f);
    return v;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 300;
    if (iters < 10)
        iters = 10;
    if (argc > 2)
        base_dir = argv[2];
    paths();
    printf("fsync in %s: file %.3f ms, directory %.3f ms (median of 20)\n", base_dir,
           fsync_ms(0), fsync_ms(1));
    double disc[5];
    for (int i = 0; i < 5; i++) {
        node m;
        memset(&m, 0, sizeof(m));
        node_start(&m, 0, &disc[i]);
        node_stop(&m);
    }
    qsort(disc, 5, sizeof(double), cmp_d);
    printf("discovery to published (8 x H100, MIG on 4): median %.2f ms, best %.2f ms "
           "(goal <= 50 ms)\n", disc[2], disc[0]);

    node n;
    memset(&n, 0, sizeof(n));
    double ignored;
    node_start(&n, 1, &ignored);
    long rss0 = status_kb("VmRSS:");
    prepare_bench(&n, 1, iters);
    prepare_bench(&n, 8, iters);
    printf("RSS: %.1f MiB after startup, %.1f MiB after the runs, peak %.1f MiB "
           "(plugin + gRPC servers + client in one process; goal <= 8 MiB)\n",
           rss0 / 1024.0, status_kb("VmRSS:") / 1024.0, status_kb("VmHWM:") / 1024.0);
    node_stop(&n);
    return 0;
}
