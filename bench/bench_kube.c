/*
 * bench_kube: the REST client (cluster.h over kube.h) against a running
 * API server, from $KUBECONFIG or the file given as the only argument:
 * creates/s and gets/s of ResourceClaims from 1 and 4 threads on
 * keep-alive connections, a list_all of what was created, and the delay
 * from a create's answer to its ADDED event on an open watch (p50, p99).
 * Prints figures; asserts nothing. Objects go to a namespace
 * "bench-kube-<pid>" that it creates (and leaves behind).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dra/kube.h"

static char ns[64];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static dra_doc *claim(dra_arena *a, const char *name)
{
    char text[512];
    dra_doc *d = NULL;
    snprintf(text, sizeof text,
             "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
             "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"devices\":{\"requests\":"
             "[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"
             "\"gpu.example.com\"}}]}}}", name);
    dra_doc_parse_json(a, text, strlen(text), &d, NULL);
    return d;
}

typedef struct job {
    dra_cluster *c;
    int id, n, get, errors;
} job;

static void *run(void *arg)
{
    job *j = arg;
    dra_gvr claims = DRA_GVR_CLAIMS;
    dra_arena a;
    char name[64];
    dra_arena_init(&a, NULL);
    for (int i = 0; i < j->n; i++) {
        dra_doc *out = NULL;
        snprintf(name, sizeof name, "t%d-%d", j->get ? 100 : j->id,
                 j->get ? i % 100 : i); /* gets read what phase 1 made */
        if (j->get ? dra_cluster_get(j->c, &claims, ns, name, &a, &out, NULL)
                   : dra_cluster_create(j->c, &claims, ns, claim(&a, name), &a,
                                        &out, NULL))
            j->errors++;
        dra_arena_reset(&a);
    }
    dra_arena_fini(&a);
    return NULL;
}

static void phase(dra_cluster *c, int threads, int per, int get)
{
    pthread_t t[16];
    job j[16];
    int errors = 0;
    double t0 = now_s(), dt;
    for (int i = 0; i < threads; i++) {
        j[i] = (job){c, get ? i : i + threads * 100, per, get, 0};
        pthread_create(&t[i], NULL, run, &j[i]);
    }
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        errors += j[i].errors;
    }
    dt = now_s() - t0;
    printf("%-7s %2d thread(s): %6d requests in %6.2f s = %8.0f/s (%d errors)\n",
           get ? "get" : "create", threads, threads * per, dt,
           threads * per / dt, errors);
}

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static void watch_latency(dra_cluster *c, int n)
{
    dra_gvr claims = DRA_GVR_CLAIMS;
    dra_list_opts o = {0};
    dra_watch *w = NULL;
    dra_watch_event ev;
    dra_arena a;
    double *lat = calloc((size_t)n, sizeof *lat);
    const char *rv = NULL;
    dra_doc *out = NULL;
    char name[64];
    int got = 0;
    dra_arena_init(&a, NULL);
    dra_cluster_list_all(c, &claims, ns, NULL, &a, &out, &rv, NULL);
    o.resource_version = rv;
    if (!lat || dra_cluster_watch(c, &claims, ns, &o, &w, NULL) != DRA_OK) {
        printf("watch: cannot open\n");
        free(lat);
        dra_arena_fini(&a);
        return;
    }
    for (int i = 0; i < n; i++) {
        double t0;
        snprintf(name, sizeof name, "lat-%d", i);
        if (dra_cluster_create(c, &claims, ns, claim(&a, name), &a, NULL, NULL))
            continue;
        t0 = now_s();
        while (dra_watch_next(w, 5000, &a, &ev) == DRA_OK) {
            if (ev.type == DRA_WATCH_ADDED &&
                strcmp(dra_obj_name(ev.object), name) == 0) {
                lat[got++] = (now_s() - t0) * 1e3;
                break;
            }
        }
        dra_arena_reset(&a);
    }
    qsort(lat, (size_t)got, sizeof *lat, cmp_d);
    if (got)
        printf("watch: create answered -> ADDED received, %d events: p50 %.3f ms, "
               "p99 %.3f ms\n", got, lat[got / 2], lat[got * 99 / 100]);
    dra_watch_close(w);
    free(lat);
    dra_arena_fini(&a);
}

int main(int argc, char **argv)
{
    dra_kube_config cfg;
    dra_cluster *c = NULL;
    dra_diag d;
    dra_arena a;
    dra_doc *out = NULL, *nsdoc = NULL;
    const char *rv = NULL;
    dra_gvr namespaces = DRA_GVR_NAMESPACES, claims = DRA_GVR_CLAIMS,
            classes = DRA_GVR_CLASSES;
    double t0;
    char text[256];
    dra_diag_init(&d, NULL);
    if (dra_kube_config_load(&cfg, argc > 1 ? argv[1] : NULL, NULL, NULL, &d) ||
        dra_kube_cluster_new(&cfg, NULL, &c, &d)) {
        fprintf(stderr, "bench_kube: %s\n", dra_diag_first(&d));
        return 1;
    }
    dra_kube_config_fini(&cfg);
    dra_arena_init(&a, NULL);
    snprintf(ns, sizeof ns, "bench-kube-%d", (int)getpid());
    snprintf(text, sizeof text, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
                                "\"metadata\":{\"name\":\"%s\"}}", ns);
    dra_doc_parse_json(&a, text, strlen(text), &nsdoc, NULL);
    dra_cluster_create(c, &namespaces, NULL, nsdoc, &a, NULL, NULL);
    snprintf(text, sizeof text,
             "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\","
             "\"metadata\":{\"name\":\"gpu.example.com\"},\"spec\":{}}");
    dra_doc_parse_json(&a, text, strlen(text), &nsdoc, NULL);
    dra_cluster_create(c, &classes, NULL, nsdoc, &a, NULL, NULL);
    phase(c, 1, 500, 0);
    phase(c, 4, 250, 0);
    phase(c, 1, 2000, 1);
    phase(c, 4, 1000, 1);
    t0 = now_s();
    if (dra_cluster_list_all(c, &claims, ns, NULL, &a, &out, &rv, NULL) == DRA_OK)
        printf("list_all: %zu claims in %.1f ms (pages of 500)\n",
               dra_doc_get(out, "items")->u.list.n, (now_s() - t0) * 1e3);
    watch_latency(c, 300);
    dra_arena_fini(&a);
    dra_cluster_free(c);
    dra_diag_fini(&d);
    return 0;
}
