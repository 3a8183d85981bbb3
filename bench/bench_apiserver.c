/* bench_apiserver: the API server's request handler in process, without
 * TLS or sockets (what bench_drad.sh measures over HTTPS, less the
 * transport): creates of ResourceClaims from 1 and 8 threads (with the
 * CPU time and context switches per create), gets, a list of 10,000
 * ResourceSlices as JSON and as Table (best of 5), and the time to open
 * the store and start the server over the objects written; creates
 * through the in-process cluster transport, the objects handed over as
 * documents and as JSON text, alternately.
 * Usage: bench_apiserver [--slices N] [--creates N] [--nosync] [--dir DIR]
 * Prints figures; asserts nothing. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "dra/apiserver.h"
#include "dra/cluster.h"
#include "dra/store.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage_now(double *cpu, long *csw)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    *cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    *csw = ru.ru_nvcsw + ru.ru_nivcsw;
}

/* CPU time of the calling thread: the in-process requests run on it,
 * store commit included, apart from the server's background thread. */
static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t opt(int argc, char **argv, const char *name, size_t dflt)
{
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], name))
            return (size_t)strtoull(argv[i + 1], NULL, 10);
    return dflt;
}

static int flag(int argc, char **argv, const char *name)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], name))
            return 1;
    return 0;
}

/* One request; returns the code (the body is dropped). */
static int req(dra_apiserver *srv, const char *method, const char *path,
               const char *query, const char *accept, const char *body,
               size_t *len)
{
    dra_apiserver_req q;
    dra_apiserver_resp r;
    int code;
    memset(&q, 0, sizeof q);
    q.method = method;
    q.path = path;
    q.query = query;
    q.accept = accept;
    q.content_type = body ? "application/json" : NULL;
    q.body = body;
    q.body_len = body ? strlen(body) : 0;
    dra_apiserver_resp_init(&r, NULL);
    if (dra_apiserver_handle(srv, &q, &r))
        code = 500;
    else
        code = r.code;
    if (len)
        *len = r.body.len;
    dra_apiserver_resp_fini(&r);
    return code;
}

#define CLAIMS "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
#define SLICES "/apis/resource.k8s.io/v1/resourceslices"

static const char claim[] =
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
    "\"metadata\":{\"generateName\":\"load-\"},\"spec\":{\"devices\":{\"requests\":"
    "[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\"}}]}}}";

typedef struct targs {
    dra_apiserver *srv;
    size_t n, failed;
} targs;

static void *creator(void *arg)
{
    targs *t = arg;
    for (size_t i = 0; i < t->n; i++)
        if (req(t->srv, "POST", CLAIMS, NULL, NULL, claim, NULL) != 201)
            t->failed++;
    return NULL;
}

static void bench_creates(dra_apiserver *srv, int threads, size_t total)
{
    pthread_t th[64];
    targs a[64];
    double t0, t, c0, c1;
    long w0, w1;
    size_t failed = 0;
    usage_now(&c0, &w0);
    t0 = now_s();
    for (int i = 0; i < threads; i++) {
        a[i] = (targs){srv, total / (size_t)threads, 0};
        pthread_create(&th[i], NULL, creator, &a[i]);
    }
    for (int i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        failed += a[i].failed;
    }
    t = now_s() - t0;
    usage_now(&c1, &w1);
    printf("creates, %d thread(s): %8.0f/s (%zu in %.2f s, %zu failed; per create "
           "%.1f us CPU, %.2f context switches)\n",
           threads, (double)total / t, total, t, failed, (c1 - c0) * 1e6 / (double)total,
           (double)(w1 - w0) / (double)total);
}

/* Creates through the in-process cluster transport, as drad's
 * controllers make them (the stored object back as a document): the
 * object handed over as a document, or as JSON text (no doc_request). */
static void bench_incluster(dra_apiserver *srv, size_t n, int as_docs)
{
    static const dra_gvr claims = DRA_GVR_CLAIMS;
    dra_cluster *c = dra_apiserver_cluster(srv);
    dra_arena a;
    dra_doc *obj, *out;
    double c0, c1;
    size_t failed = 0;
    if (!c)
        exit(1);
    if (!as_docs)
        dra_cluster_set_doc_request(c, NULL);
    dra_arena_init(&a, NULL);
    c0 = thread_cpu_s();
    for (size_t i = 0; i < n; i++) {
        dra_arena_reset(&a);
        if (dra_doc_parse_json(&a, claim, sizeof claim - 1, &obj, NULL) ||
            dra_cluster_create(c, &claims, "default", obj, &a, &out, NULL))
            failed++;
    }
    c1 = thread_cpu_s();
    printf("creates through the in-process cluster, objects as %s: per create %.1f us "
           "thread CPU (%zu, %zu failed)\n",
           as_docs ? "documents" : "JSON text", (c1 - c0) * 1e6 / (double)n, n, failed);
    dra_arena_fini(&a);
    dra_cluster_free(c);
}

static void *getter(void *arg)
{
    targs *t = arg;
    for (size_t i = 0; i < t->n; i++)
        if (req(t->srv, "GET", SLICES "/slice-1", NULL, NULL, NULL, NULL) != 200)
            t->failed++;
    return NULL;
}

static void bench_gets(dra_apiserver *srv, int threads, size_t total)
{
    pthread_t th[64];
    targs a[64];
    size_t failed = 0;
    double t0 = now_s(), t;
    for (int i = 0; i < threads; i++) {
        a[i] = (targs){srv, total / (size_t)threads, 0};
        pthread_create(&th[i], NULL, getter, &a[i]);
    }
    for (int i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        failed += a[i].failed;
    }
    t = now_s() - t0;
    printf("gets, %d thread(s): %8.0f/s (%zu failed)\n", threads, (double)total / t, failed);
}

static void make_slices(dra_apiserver *srv, size_t n)
{
    char body[2048];
    for (size_t i = 0; i < n; i++) {
        snprintf(body, sizeof body,
                 "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\","
                 "\"metadata\":{\"name\":\"slice-%zu\"},\"spec\":{\"driver\":"
                 "\"gpu.nvidia.com\",\"nodeName\":\"node-%zu\",\"pool\":{\"name\":"
                 "\"node-%zu\",\"generation\":1,\"resourceSliceCount\":1},\"devices\":["
                 "{\"name\":\"gpu-0\",\"attributes\":{\"type\":{\"string\":\"gpu\"},"
                 "\"uuid\":{\"string\":\"GPU-137d7996-cb8e-7683-e47d-9c99e6f49eb5\"},"
                 "\"productName\":{\"string\":\"NVIDIA GB200\"}},\"capacity\":{\"memory\":"
                 "{\"value\":\"189471Mi\"}}},{\"name\":\"gpu-1\",\"attributes\":{\"type\":"
                 "{\"string\":\"gpu\"}},\"capacity\":{\"memory\":{\"value\":\"189471Mi\"}}}]}}",
                 i, i, i);
        if (req(srv, "POST", SLICES, NULL, NULL, body, NULL) != 201) {
            fprintf(stderr, "slice %zu failed\n", i);
            exit(1);
        }
    }
}

static void bench_list(dra_apiserver *srv, size_t n, const char *form, const char *accept)
{
    double best = 1e9;
    char q[64];
    size_t len = 0;
    snprintf(q, sizeof q, "limit=%zu", n);
    for (int i = 0; i < 5; i++) {
        double t0 = now_s(), t;
        req(srv, "GET", SLICES, q, accept, NULL, &len);
        t = now_s() - t0;
        if (t < best)
            best = t;
    }
    printf("list of %zu ResourceSlices as %s: best of 5 %.1f ms (%zu bytes)\n", n, form,
           best * 1e3, len);
}

static void open_all(const char *db, const dra_store_opts *so, dra_store **st,
                     dra_apiserver **srv)
{
    dra_apiserver_opts ao;
    dra_diag d;
    dra_diag_init(&d, NULL);
    if (dra_store_open(db, so, NULL, st, &d)) {
        fprintf(stderr, "store: %s\n", dra_diag_first(&d));
        exit(1);
    }
    memset(&ao, 0, sizeof ao);
    ao.store = *st;
    if (dra_apiserver_new(&ao, NULL, srv, &d)) {
        fprintf(stderr, "server: %s\n", dra_diag_first(&d));
        exit(1);
    }
    dra_diag_fini(&d);
}

int main(int argc, char **argv)
{
    size_t slices = opt(argc, argv, "--slices", 10000);
    size_t creates = opt(argc, argv, "--creates", 8000);
    dra_store_opts so;
    dra_store *st;
    dra_apiserver *srv;
    char dir[256], db[300], cmd[400];
    const char *base = "/tmp";
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--dir"))
            base = argv[i + 1];
    snprintf(dir, sizeof dir, "%s/dra-bench-api-XXXXXX", base);
    if (!mkdtemp(dir))
        return perror("mkdtemp"), 1;
    snprintf(db, sizeof db, "%s/state.db", dir);
    memset(&so, 0, sizeof so);
    so.unsafe_nosync = flag(argc, argv, "--nosync");
    printf("bench_apiserver: store %s\n", so.unsafe_nosync ? "without fsync" : "durable");
    open_all(db, &so, &st, &srv);
    if (creates) {
        bench_creates(srv, 1, creates / 4);
        bench_creates(srv, 8, creates);
        for (int i = 0; i < 4; i++)
            bench_incluster(srv, creates / 8, i % 2);
    }
    if (slices) {
        make_slices(srv, slices);
        bench_gets(srv, 1, 100000);
        bench_gets(srv, 4, 200000);
        bench_list(srv, slices, "JSON", "application/json");
        bench_list(srv, slices, "Table",
                   "application/json;as=Table;v=v1;g=meta.k8s.io,application/json");
    }
    dra_apiserver_free(srv);
    dra_store_close(st);
    for (int i = 0; i < 3; i++) {
        double t0 = now_s(), t1;
        open_all(db, &so, &st, &srv);
        t1 = now_s();
        printf("store open and server start with %zu objects: %.0f ms\n",
               creates / 4 + creates + creates / 8 * 4 + slices + 4, (t1 - t0) * 1e3);
        dra_apiserver_free(srv);
        dra_store_close(st);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}
