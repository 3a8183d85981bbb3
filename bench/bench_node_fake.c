/*
 * bench_node_fake: fake nodes at cluster scale with drad's control plane
 * in one process: the store, the API server (in-process transport), the
 * scheduler and the claim controller, and N KWOK-style fake nodes with
 * G GPUs each. Creates P pods, each with a one-GPU claim from a
 * template, and measures how long until all are Running.
 *
 *   bench_node_fake [--nodes N] [--gpus G] [--pods P] [--creators T]
 *                   [--writers W] [--nosync] [--bound] [--dir DIR]
 *
 * --bound: pods are created bound to a fake node and without claims, as
 * KWOK's own benchmark does (no scheduler, no claim controller): the
 * fake nodes' own cost.
 *
 * Defaults: 5,000 nodes x 8 GPUs, 100,000 pods (the goal in
 * docs/node.md: all Running within 5 s). With claims only as many pods
 * as there are GPUs can run (40,000 of the default 100,000): the rest
 * stay Pending, and the wait is for the ones that can run. Prints the
 * phases' times.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dra/apiserver.h"
#include "dra/cluster.h"
#include "dra/node.h"
#include "dra/sched.h"
#include "dra/store.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static dra_doc *yaml(dra_arena *a, const char *text)
{
    dra_doc **docs;
    size_t n;
    if (dra_doc_parse_yaml(a, text, strlen(text), &docs, &n, NULL) != DRA_OK || n != 1)
        return NULL;
    return docs[0];
}

typedef struct creator {
    dra_cluster *c;
    size_t from, to;
    atomic_size_t *failed;
    size_t bound_nodes; /* > 0: pods bound to fake-node-(i % n), no claim */
} creator;

static void *create_pods(void *arg)
{
    creator *cr = arg;
    dra_arena a;
    dra_arena_init(&a, NULL);
    for (size_t i = cr->from; i < cr->to; i++) {
        char y[512];
        dra_doc *pod;
        dra_kstatus st;
        if (cr->bound_nodes)
            snprintf(y, sizeof y,
                     "apiVersion: v1\nkind: Pod\nmetadata: {name: pod-%zu}\n"
                     "spec:\n  nodeName: fake-node-%zu\n  containers:\n  - {name: c, image: busybox}\n", i,
                     i % cr->bound_nodes);
        else
            snprintf(y, sizeof y,
                     "apiVersion: v1\nkind: Pod\nmetadata: {name: pod-%zu}\n"
                     "spec:\n  resourceClaims:\n  - {name: gpu, resourceClaimTemplateName: one-gpu}\n"
                     "  containers:\n  - name: c\n    image: busybox\n    resources: {claims: [{name: gpu}]}\n",
                     i);
        dra_arena_reset(&a);
        memset(&st, 0, sizeof st);
        if (!(pod = yaml(&a, y)) || dra_cluster_create(cr->c, &DRA_GVR_PODS, "default", pod, &a, NULL, &st)) {
            if (atomic_fetch_add(cr->failed, 1) == 0)
                fprintf(stderr, "create pod-%zu: %s\n", i, st.message);
        }
    }
    dra_arena_fini(&a);
    return NULL;
}

static size_t opt(int argc, char **argv, const char *name, size_t dflt)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return (size_t)strtoull(argv[i + 1], NULL, 10);
    return dflt;
}

static const char *sopt(int argc, char **argv, const char *name, const char *dflt)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return dflt;
}

static int flag(int argc, char **argv, const char *name)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return 1;
    return 0;
}

static dra_err setup_classes(dra_cluster *c)
{
    dra_arena a;
    dra_err e;
    dra_arena_init(&a, NULL);
    e = dra_cluster_create(c, &DRA_GVR_CLASSES, NULL,
                           yaml(&a, "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\n"
                                    "metadata: {name: gpu.nvidia.com}\nspec:\n  selectors:\n"
                                    "  - cel: {expression: \"device.driver == 'gpu.nvidia.com'\"}\n"),
                           &a, NULL, NULL);
    if (!e)
        e = dra_cluster_create(c, &DRA_GVR_TEMPLATES, "default",
                               yaml(&a, "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
                                        "metadata: {name: one-gpu}\nspec:\n  spec:\n    devices:\n"
                                        "      requests:\n      - name: gpu\n"
                                        "        exactly: {deviceClassName: gpu.nvidia.com}\n"),
                               &a, NULL, NULL);
    dra_arena_fini(&a);
    return e;
}

int main(int argc, char **argv)
{
    size_t nodes = opt(argc, argv, "--nodes", 5000), gpus = opt(argc, argv, "--gpus", 8);
    size_t pods = opt(argc, argv, "--pods", 100000), nc = opt(argc, argv, "--creators", 8);
    int writers = (int)opt(argc, argv, "--writers", 8);
    char dir[256], db[300], cmd[400];
    dra_store_opts so;
    dra_apiserver_opts ao;
    dra_store *store;
    dra_apiserver *srv;
    dra_cluster *c;
    dra_sched *sched;
    dra_sched_opts sch;
    dra_fake_nodes *fake;
    dra_fake_nodes_opts fo;
    dra_diag d;
    pthread_t th[64];
    creator cr[64];
    atomic_size_t failed = 0;
    double t0, t1, t2, t3, last_print;
    snprintf(dir, sizeof dir, "%s/dra-bench-fake-XXXXXX", sopt(argc, argv, "--dir", "/tmp"));
    if (!mkdtemp(dir))
        return perror("mkdtemp"), 1;
    snprintf(db, sizeof db, "%s/state.db", dir);
    memset(&so, 0, sizeof so);
    so.unsafe_nosync = flag(argc, argv, "--nosync");
    dra_diag_init(&d, NULL);
    if (dra_store_open(db, &so, NULL, &store, &d) != DRA_OK)
        return fprintf(stderr, "store: %s\n", dra_diag_first(&d)), 1;
    memset(&ao, 0, sizeof ao);
    ao.store = store;
    ao.graceful_pods = 1;
    if (dra_apiserver_new(&ao, NULL, &srv, &d) != DRA_OK || !(c = dra_apiserver_cluster(srv)))
        return fprintf(stderr, "apiserver: %s\n", dra_diag_first(&d)), 1;
    if (setup_classes(c) != DRA_OK)
        return fprintf(stderr, "device class / template failed\n"), 1;
    memset(&sch, 0, sizeof sch);
    sch.scheduler = 1;
    sch.claim_controller = 1;
    sch.no_scheduled_events = 1;
    if (flag(argc, argv, "--bound"))
        sch.scheduler = sch.claim_controller = 0, sched = NULL;
    else if (dra_sched_start(c, &sch, &sched) != DRA_OK)
        return fprintf(stderr, "scheduler failed to start\n"), 1;
    printf("bench_node_fake: %zu nodes x %zu GPUs, %zu one-GPU pods, %d status writers%s\n", nodes, gpus, pods,
           writers, so.unsafe_nosync ? ", store without fsync" : "");
    memset(&fo, 0, sizeof fo);
    fo.count = nodes;
    fo.gpus = gpus;
    fo.writers = writers;
    t0 = now_s();
    if (dra_fake_nodes_start(c, &fo, NULL, &fake, &d) != DRA_OK)
        return fprintf(stderr, "fake nodes: %s\n", dra_diag_first(&d)), 1;
    t1 = now_s();
    printf("  nodes and slices registered: %.2f s (%.0f nodes/s)\n", t1 - t0, (double)nodes / (t1 - t0));
    if (nc > 64)
        nc = 64;
    for (size_t i = 0; i < nc; i++) {
        cr[i] = (creator){c, pods * i / nc, pods * (i + 1) / nc, &failed, flag(argc, argv, "--bound") ? nodes : 0};
        pthread_create(&th[i], NULL, create_pods, &cr[i]);
    }
    for (size_t i = 0; i < nc; i++)
        pthread_join(th[i], NULL);
    t2 = now_s();
    printf("  pods created: %.2f s (%.0f pods/s), %zu failed\n", t2 - t1, (double)pods / (t2 - t1),
           (size_t)failed);
    last_print = t2;
    /* One GPU each: no more than the GPUs can run (the rest stay
     * Pending, unschedulable). */
    size_t can_run = pods - failed;
    if (!flag(argc, argv, "--bound") && can_run > nodes * gpus) {
        can_run = nodes * gpus;
        printf("  %zu pods can run (one GPU each, %zu GPUs); the other %zu stay Pending\n", can_run,
               nodes * gpus, pods - failed - can_run);
    }
    while (dra_fake_nodes_running(fake) < can_run) {
        usleep(10000);
        if (now_s() - last_print > 5) {
            last_print = now_s();
            printf("    ... %llu Running after %.1f s\n", (unsigned long long)dra_fake_nodes_running(fake),
                   last_print - t1);
            fflush(stdout);
        }
        if (now_s() - t1 > 3600)
            break;
    }
    t3 = now_s();
    printf("  all %llu Running: %.2f s after the first pod was created (%.2f s after the last)\n",
           (unsigned long long)dra_fake_nodes_running(fake), t3 - t1, t3 - t2);
    printf("  pod throughput, creation to Running: %.0f pods/s\n", (double)can_run / (t3 - t1));
    dra_fake_nodes_stop(fake);
    dra_sched_stop(sched);
    dra_cluster_free(c);
    dra_apiserver_free(srv);
    dra_store_close(store);
    dra_diag_fini(&d);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}
