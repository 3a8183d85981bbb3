/*
 * bench_sched: scheduler throughput end to end through drad's API server
 * in this process (store + handler + in-process transport), shaped like
 * Kubernetes' scheduler_perf DRA workloads. Nodes and one ResourceSlice
 * per node are created through the API, then pods each using a claim
 * from a template are created by client threads as fast as they can;
 * the claim controller makes the claims, the scheduler allocates,
 * reserves and binds. Measured: first pod create to last pod bound,
 * pods/s, p50/p99 create->bound latency (bound as seen by a watch of
 * bound pods, field selector spec.nodeName!=), RSS.
 * Then the offline explain (dractl explain's path) on the same snapshot.
 *
 * usage: bench_sched [--nodes N] [--gpus G] [--pods P] [--clients C]
 *                    [--shape one|match|seed] [--score MostAllocated|LeastAllocated]
 *                    [--dir DIR] [--sync] [--no-events]
 *                    [--bind-workers N] [--controller-workers N]
 *                    [--offline] [--repeat N]
 * --offline runs only the scheduler core and the explain on an offline
 * snapshot (no API server); --repeat sets how many repeated explains are
 * timed (default 5).
 */
#include <pthread.h>
#include <sys/resource.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dra/apiserver.h"
#include "dra/cluster.h"
#include "dra/sched.h"
#include "dra/store.h"

typedef struct cfg {
    int nodes, gpus, pods, clients, sync, no_events, bind_workers, cc_workers, offline, repeat;
    const char *shape, *score, *dir;
} cfg;

static const dra_gvr pods_gvr = DRA_GVR_PODS;

/* The process' CPU time (all threads: the API server, the store, the
 * scheduler, the controller and the clients), in seconds. */
static double proc_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Context switches of the whole process (every thread), voluntary and
 * not: each is a thread that blocked or was preempted. */
static long proc_csw(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_nvcsw + ru.ru_nivcsw;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time of the calling thread: on the shared machine, steadier than
 * wall time for the single-threaded parts (the explain). */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* |field| of /proc/self/|file| ("status": kB; "io": bytes). */
static long proc_field(const char *file, const char *field)
{
    char path[64];
    FILE *f;
    snprintf(path, sizeof path, "/proc/self/%s", file);
    f = fopen(path, "r");
    char line[256];
    long v = -1;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, field, n))
            v = atol(line + n + 1);
    if (f)
        fclose(f);
    return v;
}

static long rss_kib(const char *field)
{
    return proc_field("status", field);
}

/* ---- objects -------------------------------------------------------------------- */

static dra_doc *parse(dra_arena *a, const char *text)
{
    dra_doc *d = NULL;
    if (dra_doc_parse_json(a, text, strlen(text), &d, NULL)) {
        fprintf(stderr, "bench_sched: bad JSON: %.200s\n", text);
        exit(1);
    }
    return d;
}

static void create(dra_cluster *c, const dra_gvr *g, const char *ns, const char *json)
{
    dra_arena a;
    dra_kstatus st;
    dra_arena_init(&a, NULL);
    if (dra_cluster_create(c, g, ns, parse(&a, json), &a, NULL, &st)) {
        fprintf(stderr, "bench_sched: create: %s\n", st.message);
        exit(1);
    }
    dra_arena_fini(&a);
}

/* One node's slice: |gpus| devices shaped like NVIDIA's GPUs (seed: the
 * GB200 attributes of examples/resourceslice-gb200.yaml). */
static void slice_json(dra_buf *b, const cfg *c, int node)
{
    int seed = !strcmp(c->shape, "seed");
    const char *drv = seed ? "gpu.nvidia.com" : "gpu.example.com";
    dra_buf_reset(b);
    dra_buf_printf(b, "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\","
                      "\"metadata\":{\"name\":\"node-%05d-gpus\"},\"spec\":{\"driver\":\"%s\","
                      "\"nodeName\":\"node-%05d\",\"pool\":{\"name\":\"node-%05d\",\"generation\":1,"
                      "\"resourceSliceCount\":1},\"devices\":[",
                   node, drv, node, node);
    for (int g = 0; g < c->gpus; g++) {
        dra_buf_printf(b, "%s{\"name\":\"gpu-%d\",\"attributes\":{", g ? "," : "", g);
        if (seed)
            dra_buf_printf(b, "\"addressingMode\":{\"string\":\"ATS\"},\"architecture\":{\"string\":\"Blackwell\"},"
                              "\"brand\":{\"string\":\"Nvidia\"},\"cudaComputeCapability\":{\"version\":\"10.0.0\"},"
                              "\"cudaDriverVersion\":{\"version\":\"13.0.0\"},\"driverVersion\":{\"version\":\"580.126.20\"},"
                              "\"index\":{\"int\":%d},\"minor\":{\"int\":%d},\"pcieBusID\":{\"string\":\"0000:%02x:00.0\"},"
                              "\"productName\":{\"string\":\"NVIDIA GB200\"},"
                              "\"resource.kubernetes.io/pcieRoot\":{\"string\":\"pci0000:%02x\"},"
                              "\"type\":{\"string\":\"gpu\"},\"uuid\":{\"string\":\"GPU-%08x-%04x\"}},"
                              "\"capacity\":{\"memory\":{\"value\":\"189471Mi\"}}}",
                           g, g, g + 1, g / 4, node, g);
        else
            dra_buf_printf(b, "\"index\":{\"int\":%d},\"nvlink\":{\"string\":\"domain-%d\"},"
                              "\"productName\":{\"string\":\"Example H100\"},\"uuid\":{\"string\":\"GPU-%08x-%04x\"}},"
                              "\"capacity\":{\"memory\":{\"value\":\"80Gi\"}}}",
                           g, g / 4, node, g);
    }
    dra_buf_puts(b, "]}}");
}

static void setup_cluster(dra_cluster *cl, const cfg *c)
{
    dra_buf b;
    const dra_gvr nodes = DRA_GVR_NODES, slices = DRA_GVR_SLICES, classes = DRA_GVR_CLASSES,
                  tmpl = DRA_GVR_TEMPLATES;
    int seed = !strcmp(c->shape, "seed"), match = !strcmp(c->shape, "match");
    dra_buf_init(&b, NULL);
    if (seed)
        create(cl, &classes, NULL,
               "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"gpu.nvidia.com\"},"
               "\"spec\":{\"selectors\":[{\"cel\":{\"expression\":\"device.driver == 'gpu.nvidia.com' && "
               "device.attributes['gpu.nvidia.com'].type == 'gpu'\"}}]}}");
    else
        create(cl, &classes, NULL,
               "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"gpu.example.com\"},"
               "\"spec\":{\"selectors\":[{\"cel\":{\"expression\":\"device.driver == 'gpu.example.com'\"}}]}}");
    dra_buf_printf(&b, "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaimTemplate\","
                       "\"metadata\":{\"name\":\"gpus\",\"namespace\":\"default\"},\"spec\":{\"spec\":{\"devices\":"
                       "{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"%s\",\"count\":%d}}]%s}}}}",
                   seed ? "gpu.nvidia.com" : "gpu.example.com", match ? 4 : 1,
                   match ? ",\"constraints\":[{\"matchAttribute\":\"gpu.example.com/nvlink\"}]" : "");
    create(cl, &tmpl, "default", b.p);
    for (int n = 0; n < c->nodes; n++) {
        dra_buf_reset(&b);
        dra_buf_printf(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-%05d\","
                           "\"labels\":{\"kubernetes.io/hostname\":\"node-%05d\"}}}", n, n);
        create(cl, &nodes, NULL, b.p);
        slice_json(&b, c, n);
        create(cl, &slices, NULL, b.p);
    }
    dra_buf_fini(&b);
}

/* ---- pods: creators and a watch that sees them bound ----------------------------------- */

typedef struct run {
    const cfg *c;
    dra_cluster *cl;
    double *created, *bound;
    atomic_int next, nbound;
    double t0;
} run;

static int pod_index(const char *name)
{
    return name && !strncmp(name, "pod-", 4) ? atoi(name + 4) : -1;
}

static void *creator(void *arg)
{
    run *r = arg;
    char buf[512];
    int i;
    while ((i = atomic_fetch_add(&r->next, 1)) < r->c->pods) {
        dra_arena a;
        dra_kstatus st;
        snprintf(buf, sizeof buf,
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"pod-%06d\",\"namespace\":\"default\"},"
                 "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox\",\"resources\":{\"claims\":[{\"name\":\"gpu\"}]}}],"
                 "\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimTemplateName\":\"gpus\"}]}}", i);
        dra_arena_init(&a, NULL);
        r->created[i] = now_s();
        if (dra_cluster_create(r->cl, &pods_gvr, "default", parse(&a, buf), &a, NULL, &st)) {
            fprintf(stderr, "bench_sched: create pod %d: %s\n", i, st.message);
            exit(1);
        }
        dra_arena_fini(&a);
    }
    return NULL;
}

static void on_pod(void *ud, dra_watch_type type, const dra_doc *obj)
{
    run *r = ud;
    int i = pod_index(dra_obj_name(obj));
    if (type == DRA_WATCH_DELETED || i < 0 || i >= r->c->pods || r->bound[i] > 0 ||
        !dra_obj_str(obj, "spec.nodeName"))
        return;
    r->bound[i] = now_s();
    atomic_fetch_add(&r->nbound, 1);
}

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static void bench_log(void *ud, int level, const char *msg)
{
    (void)ud;
    if (level <= DRA_SCHED_LOG_INFO && !strstr(msg, ": 0/"))
        fprintf(stderr, "sched: %s\n", msg);
}

static void usage(void)
{
    fputs("usage: bench_sched [--nodes N] [--gpus G] [--pods P] [--clients C]\n"
          "                   [--shape one|match|seed] [--score MostAllocated|LeastAllocated]\n"
          "                   [--dir DIR] [--sync] [--no-events]\n"
          "                   [--bind-workers N] [--controller-workers N]\n"
          "                   [--offline] [--repeat N]\n", stderr);
    exit(2);
}

static void parse_args(int argc, char **argv, cfg *c)
{
    memset(c, 0, sizeof *c);
    c->nodes = 5000;
    c->gpus = 8;
    c->pods = 10000;
    c->clients = 4;
    c->shape = "one";
    c->score = "LeastAllocated";
    c->dir = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--sync")) {
            c->sync = 1;
            continue;
        }
        if (!strcmp(a, "--no-events")) {
            c->no_events = 1;
            continue;
        }
        if (!strcmp(a, "--offline")) {
            c->offline = 1;
            continue;
        }
        if (!v)
            usage();
        i++;
        if (!strcmp(a, "--nodes")) c->nodes = atoi(v);
        else if (!strcmp(a, "--gpus")) c->gpus = atoi(v);
        else if (!strcmp(a, "--pods")) c->pods = atoi(v);
        else if (!strcmp(a, "--clients")) c->clients = atoi(v);
        else if (!strcmp(a, "--bind-workers")) c->bind_workers = atoi(v);
        else if (!strcmp(a, "--controller-workers")) c->cc_workers = atoi(v);
        else if (!strcmp(a, "--shape")) c->shape = v;
        else if (!strcmp(a, "--score")) c->score = v;
        else if (!strcmp(a, "--dir")) c->dir = v;
        else if (!strcmp(a, "--repeat")) c->repeat = atoi(v);
        else usage();
    }
    if (strcmp(c->shape, "one") && strcmp(c->shape, "match") && strcmp(c->shape, "seed"))
        usage();
}

/* Explains pod |pod| (added by the caller): the first call (which builds
 * the index when nothing did yet), then |repeat| more; prints first, min,
 * median, max. */
static void explain_pod(dra_sched_sim *s, const cfg *c, const char *pod, const char *what)
{
    dra_arena a;
    dra_sched_decision d;
    int n = c->repeat > 0 ? c->repeat : 5;
    double t0, c0, first, first_cpu, *v = calloc((size_t)n, sizeof *v),
                                      *u = calloc((size_t)n, sizeof *u);
    dra_arena_init(&a, NULL);
    t0 = now_s();
    c0 = cpu_s();
    dra_sched_sim_schedule(s, "default", pod, &a, &d);
    first = now_s() - t0;
    first_cpu = cpu_s() - c0;
    for (int i = 0; i < n; i++) {
        t0 = now_s();
        c0 = cpu_s();
        dra_sched_sim_schedule(s, "default", pod, &a, &d);
        v[i] = now_s() - t0;
        u[i] = cpu_s() - c0;
    }
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    qsort(u, (size_t)n, sizeof *u, cmp_d);
    printf("explain (%s): first %.1f ms (CPU %.1f ms); again, %d runs: wall min %.2f / median "
           "%.2f / max %.2f ms, CPU min %.2f / median %.2f ms; message: %.160s...\n",
           what, first * 1e3, first_cpu * 1e3, n, v[0] * 1e3, v[n / 2] * 1e3, v[n - 1] * 1e3,
           u[0] * 1e3, u[n / 2] * 1e3, d.message ? d.message : "");
    free(u);
    free(v);
    dra_arena_fini(&a);
}

/* Two pods that fit nowhere, explained: one whose claim asks for more
 * GPUs than any node has (the walk skips every node), then one whose
 * selector no device meets (every node with a free GPU is tried first). */
static void explain_timed(dra_sched_sim *s, const cfg *c, const char *cls, const char *what)
{
    dra_arena a;
    char buf[768], label[200];
    dra_arena_init(&a, NULL);
    snprintf(buf, sizeof buf,
             "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"too-big\","
             "\"namespace\":\"default\",\"uid\":\"tb\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\","
             "\"exactly\":{\"deviceClassName\":\"%s\",\"count\":%d}}]}}}",
             cls, c->gpus + 1);
    dra_sched_sim_add(s, parse(&a, buf), NULL);
    snprintf(buf, sizeof buf,
             "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"big-mem\","
             "\"namespace\":\"default\",\"uid\":\"bm\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\","
             "\"exactly\":{\"deviceClassName\":\"%s\",\"selectors\":[{\"cel\":{\"expression\":"
             "\"device.capacity['%s'].memory.compareTo(quantity('200Gi')) > 0\"}}]}}]}}}",
             cls, !strcmp(c->shape, "seed") ? "gpu.nvidia.com" : "gpu.example.com");
    dra_sched_sim_add(s, parse(&a, buf), NULL);
    dra_sched_sim_add(s, parse(&a, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"why\","
                                   "\"namespace\":\"default\",\"uid\":\"why\"},\"spec\":{\"containers\":[{\"name\":\"c\"}],"
                                   "\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimName\":\"too-big\"}]}}"),
                      NULL);
    dra_sched_sim_add(s, parse(&a, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"why-mem\","
                                   "\"namespace\":\"default\",\"uid\":\"why-mem\"},\"spec\":{\"containers\":[{\"name\":\"c\"}],"
                                   "\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimName\":\"big-mem\"}]}}"),
                      NULL);
    dra_arena_fini(&a);
    snprintf(label, sizeof label, "%s; too many GPUs", what);
    explain_pod(s, c, "why", label);
    snprintf(label, sizeof label, "%s; memory above 200Gi", what);
    explain_pod(s, c, "why-mem", label);
}

/* The offline explain (dractl explain pod's path) on the cluster as it
 * is now: the snapshot loaded from the API, then one unschedulable pod
 * explained. */
static void explain_bench(dra_cluster *cl, const cfg *c)
{
    static const dra_gvr kinds[] = {DRA_GVR_NODES, DRA_GVR_CLASSES, DRA_GVR_SLICES,
                                    DRA_GVR_TEMPLATES, DRA_GVR_CLAIMS, DRA_GVR_PODS};
    dra_sched_sim *s = NULL;
    dra_arena a;
    double t0 = now_s();
    dra_sched_sim_new(NULL, &s);
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        dra_doc *list = NULL;
        const dra_doc *items;
        dra_kstatus st;
        dra_arena_init(&a, NULL);
        if (dra_cluster_list_all(cl, &kinds[k], NULL, NULL, &a, &list, NULL, &st) == DRA_OK &&
            (items = dra_doc_get(list, "items")))
            for (size_t i = 0; i < items->u.list.n; i++)
                dra_sched_sim_add(s, items->u.list.items[i], NULL);
        dra_arena_fini(&a);
    }
    printf("explain: snapshot loaded from the API in %.0f ms\n", (now_s() - t0) * 1e3);
    explain_timed(s, c, !strcmp(c->shape, "seed") ? "gpu.nvidia.com" : "gpu.example.com",
                  "snapshot from the API, first call builds the index");
    dra_sched_sim_free(s);
}

/* The scheduler core alone on the same inventory: an offline snapshot
 * (the cache, the allocator, the cycle, the claim made from the template
 * and the allocation applied to it), no API server and no writes. */
static void sim_bench(const cfg *c)
{
    dra_sched_sim *s = NULL;
    dra_sched_opts o;
    dra_arena a;
    dra_buf b;
    double t0, t1;
    int ok = 0;
    memset(&o, 0, sizeof o);
    dra_sched_score_parse(c->score, &o.score);
    dra_sched_sim_new(&o, &s);
    dra_buf_init(&b, NULL);
    dra_arena_init(&a, NULL);
    for (int n = 0; n < c->nodes; n++) {
        dra_buf_reset(&b);
        dra_buf_printf(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-%05d\"}}", n);
        dra_sched_sim_add(s, parse(&a, b.p), NULL);
        slice_json(&b, c, n);
        dra_sched_sim_add(s, parse(&a, b.p), NULL);
        dra_arena_reset(&a);
    }
    dra_sched_sim_add(s, parse(&a, !strcmp(c->shape, "seed")
        ? "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"gpu\"},"
          "\"spec\":{\"selectors\":[{\"cel\":{\"expression\":\"device.driver == 'gpu.nvidia.com' && "
          "device.attributes['gpu.nvidia.com'].type == 'gpu'\"}}]}}"
        : "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"gpu\"},"
          "\"spec\":{\"selectors\":[{\"cel\":{\"expression\":\"device.driver == 'gpu.example.com'\"}}]}}"), NULL);
    dra_buf_reset(&b);
    dra_buf_printf(&b, "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaimTemplate\","
                       "\"metadata\":{\"name\":\"gpus\",\"namespace\":\"default\"},\"spec\":{\"spec\":{\"devices\":"
                       "{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu\",\"count\":%d}}]%s}}}}",
                   !strcmp(c->shape, "match") ? 4 : 1,
                   !strcmp(c->shape, "match") ? ",\"constraints\":[{\"matchAttribute\":\"gpu.example.com/nvlink\"}]" : "");
    dra_sched_sim_add(s, parse(&a, b.p), NULL);
    for (int i = 0; i < c->pods; i++) {
        dra_buf_reset(&b);
        dra_buf_printf(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"pod-%06d\","
                           "\"namespace\":\"default\",\"uid\":\"uid-%06d\"},\"spec\":{\"containers\":[{\"name\":\"c\"}],"
                           "\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimTemplateName\":\"gpus\"}]}}", i, i);
        dra_sched_sim_add(s, parse(&a, b.p), NULL);
        dra_arena_reset(&a);
    }
    t0 = now_s();
    for (int i = 0; i < c->pods; i++) {
        dra_sched_decision d;
        char name[32];
        snprintf(name, sizeof name, "pod-%06d", i);
        dra_sched_sim_schedule(s, "default", name, &a, &d);
        ok += d.scheduled;
        if (i % 256 == 255)
            dra_arena_reset(&a);
    }
    t1 = now_s();
    printf("scheduler core alone (offline snapshot, no API): %d/%d pods placed in %.2f s: %.0f pods/s\n",
           ok, c->pods, t1 - t0, c->pods / (t1 - t0));
    explain_timed(s, c, "gpu", "the same snapshot, index built");
    dra_arena_fini(&a);
    dra_buf_fini(&b);
    dra_sched_sim_free(s);
}

int main(int argc, char **argv)
{
    cfg c;
    char dir[256], db[300], cmd[320];
    dra_store *store = NULL;
    dra_store_opts so;
    dra_apiserver *srv = NULL;
    dra_apiserver_opts ao;
    dra_cluster *cl, *client;
    dra_sched *s = NULL;
    dra_sched_opts o;
    dra_reflector *w = NULL;
    dra_reflector_opts ro;
    dra_sched_stats st;
    pthread_t *th;
    run r;
    double t_setup, t_end, *lat, cpu0, cpu_used;
    long rss_before;
    dra_store_stats sst0, sst1;
    long wchar0, csw0 = 0, csw_used = 0;
    parse_args(argc, argv, &c);
    if (c.offline) { /* the scheduler core and the explain alone, no API server */
        sim_bench(&c);
        return 0;
    }
    snprintf(dir, sizeof dir, "%s/bench-sched-XXXXXX", c.dir ? c.dir : "/tmp");
    if (!mkdtemp(dir))
        return perror("mkdtemp"), 1;
    snprintf(db, sizeof db, "%s/state.db", dir);
    memset(&so, 0, sizeof so);
    so.unsafe_nosync = !c.sync;
    if (dra_store_open(db, &so, NULL, &store, NULL))
        return fprintf(stderr, "bench_sched: store\n"), 1;
    memset(&ao, 0, sizeof ao);
    ao.store = store;
    /* The API server's garbage collector rescans every object each pass
     * (reading their JSON); nothing is deleted here, so it runs rarely. */
    ao.gc_period_ms = 60000;
    if (dra_apiserver_new(&ao, NULL, &srv, NULL))
        return fprintf(stderr, "bench_sched: server\n"), 1;
    cl = dra_apiserver_cluster(srv);
    client = dra_apiserver_cluster(srv);
    printf("bench_sched: %d nodes x %d GPUs, %d pods (%s claims), %d clients, score %s, store %s\n",
           c.nodes, c.gpus, c.pods, !strcmp(c.shape, "match") ? "4-GPU matchAttribute"
                                    : !strcmp(c.shape, "seed") ? "1-GPU, seed GB200 attributes and class"
                                                               : "1-GPU",
           c.clients, c.score, c.sync ? "synchronous=FULL" : "synchronous=OFF");
    t_setup = now_s();
    setup_cluster(client, &c);
    printf("setup: %d nodes and slices created through the API in %.2f s\n", c.nodes, now_s() - t_setup);
    memset(&o, 0, sizeof o);
    o.scheduler = 1;
    o.claim_controller = 1;
    o.no_scheduled_events = c.no_events;
    o.bind_workers = c.bind_workers;
    o.log = bench_log;
    o.controller_workers = c.cc_workers;
    dra_sched_score_parse(c.score, &o.score);
    if (dra_sched_start(cl, &o, &s))
        return fprintf(stderr, "bench_sched: scheduler\n"), 1;
    while (!dra_sched_synced(s))
        usleep(10000);
    memset(&r, 0, sizeof r);
    r.c = &c;
    r.cl = client;
    r.created = calloc((size_t)c.pods, sizeof *r.created);
    r.bound = calloc((size_t)c.pods, sizeof *r.bound);
    memset(&ro, 0, sizeof ro);
    ro.gvr = pods_gvr;
    /* Bound pods only, as `kubectl get pods --field-selector
     * spec.nodeName!= -w` would watch them: the client parses one event
     * per pod (its binding) instead of three. */
    ro.field_selector = "spec.nodeName!=";
    ro.on_event = on_pod;
    ro.ud = &r;
    dra_reflector_start(client, &ro, &w);
    while (!dra_reflector_synced(w))
        usleep(10000);
    rss_before = rss_kib("VmRSS:");
    dra_store_stats_get(store, &sst0);
    wchar0 = proc_field("io", "wchar:");
    th = calloc((size_t)c.clients, sizeof *th);
    cpu0 = proc_cpu_s();
    csw0 = proc_csw();
    r.t0 = now_s();
    for (int i = 0; i < c.clients; i++)
        pthread_create(&th[i], NULL, creator, &r);
    for (int i = 0; i < c.clients; i++)
        pthread_join(th[i], NULL);
    {
        double created_all = now_s(), last = 0;
        int stalled = 0, prev = -1;
        while (atomic_load(&r.nbound) < c.pods && stalled < 300) {
            int nb = atomic_load(&r.nbound);
            stalled = nb == prev ? stalled + 1 : 0;
            prev = nb;
            usleep(100000);
        }
        for (int i = 0; i < c.pods; i++)
            if (r.bound[i] > last)
                last = r.bound[i];
        t_end = last;
        cpu_used = proc_cpu_s() - cpu0;
        csw_used = proc_csw() - csw0;
        printf("created %d pods in %.2f s (%.0f creates/s)\n", c.pods, created_all - r.t0,
               c.pods / (created_all - r.t0));
    }
    lat = calloc((size_t)c.pods, sizeof *lat);
    {
        int n = 0;
        for (int i = 0; i < c.pods; i++)
            if (r.bound[i] > 0)
                lat[n++] = r.bound[i] - r.created[i];
        qsort(lat, (size_t)n, sizeof *lat, cmp_d);
        dra_sched_get_stats(s, &st);
        printf("bound %d/%d pods; first create to last bound %.2f s: %.0f pods/s\n", n, c.pods,
               t_end - r.t0, n / (t_end - r.t0));
        printf("CPU from the first create to the last bound: %.2f s, %.0f us per pod; "
               "%.1f context switches per pod\n",
               cpu_used, cpu_used * 1e6 / c.pods, (double)csw_used / c.pods);
        if (n)
            printf("create->bound latency: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
                   lat[n / 2] * 1e3, lat[(size_t)(n * 0.99)] * 1e3, lat[n - 1] * 1e3);
        printf("scheduler: %llu cycles, %llu bound, %llu unschedulable, %llu bind errors, "
               "%llu conflicts, %llu claims created, %llu inventory rebuilds, %llu events "
               "dropped\n",
               (unsigned long long)st.attempts, (unsigned long long)st.scheduled,
               (unsigned long long)st.unschedulable, (unsigned long long)st.bind_errors,
               (unsigned long long)st.conflicts, (unsigned long long)st.claims_created,
               (unsigned long long)st.rebuilds, (unsigned long long)st.events_dropped);
        printf("RSS: %ld MiB after setup, %ld MiB now, peak %ld MiB (store, API server, "
               "scheduler, controller and client in one process)\n",
               rss_before / 1024, rss_kib("VmRSS:") / 1024, rss_kib("VmHWM:") / 1024);
        dra_store_stats_get(store, &sst1);
        printf("store: %llu writes in %llu transactions (%.1f writes per transaction, "
               "%.1f per pod)\n",
               (unsigned long long)(sst1.writes - sst0.writes),
               (unsigned long long)(sst1.batches - sst0.batches),
               (double)(sst1.writes - sst0.writes) /
                   (double)(sst1.batches - sst0.batches ? sst1.batches - sst0.batches : 1),
               (double)(sst1.writes - sst0.writes) / c.pods);
        printf("bytes written by the process (the database and its WAL): %.1f MiB, %.1f KiB "
               "per store write\n",
               (double)(proc_field("io", "wchar:") - wchar0) / 1048576.0,
               (double)(proc_field("io", "wchar:") - wchar0) / 1024.0 /
                   (double)(sst1.writes - sst0.writes ? sst1.writes - sst0.writes : 1));
    }
    dra_reflector_stop(w);
    dra_sched_stop(s);
    explain_bench(client, &c);
    sim_bench(&c);
    dra_cluster_free(cl);
    dra_cluster_free(client);
    dra_apiserver_free(srv);
    dra_store_close(store);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd))
        return 1;
    free(lat);
    free(th);
    free(r.created);
    free(r.bound);
    return 0;
}
