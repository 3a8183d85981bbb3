/* bench_watch: watch delivery latency over HTTPS from a running drad.
 * Opens N watches (default 1,000) on ResourceClaims in one libcurl multi
 * loop, then creates M claims (default 100) one at a time from a second
 * thread and records, for every watcher, when the ADDED event of each
 * claim arrived. Prints the latency from the moment the create was sent
 * from the moment its 201 came back, and from the moment the first
 * watcher saw it (the fan-out alone), p50, p99 and max over all
 * deliveries.
 * With --http2 every watch is a stream of one HTTP/2 connection, as
 * client-go multiplexes a process's watches (drad serves HTTP/2 on its
 * second port, the server of DIR/kubeconfig-h2), read by a lean
 * nghttp2 client (watch_h2.c); --http2-curl does the same through
 * libcurl's multi interface, whose own cost per stream shows in the
 * figures. Without either, each watch has an HTTP/1.1 connection of its
 * own (libcurl).
 * --conns K deals the lean client's streams over K connections (drad
 * serves each on one of its HTTP/2 threads), as watches from several
 * processes come.
 * Usage: bench_watch [--http2 [--conns K]|--http2-curl] URL TOKEN CA-FILE [WATCHERS] [CREATES]
 * Prints figures; asserts nothing. */
#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "watch_h2.h"

#define NS "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *url, *token, *ca;
static int nwatch = 1000, ncreate = 100, http2, lean, conns = 1;
static double *sent, *acked; /* per create */
static double *lat_sent, *lat_acked, *lat_first, *first;
static atomic_size_t nlat;
static atomic_int ready, done;
static long run; /* this run's label: the watches see only its claims */

typedef struct watcher {
    char partial[256];
    size_t plen;
    int opened;
} watcher;

/* Finds "bench-<i>" ADDED events in the stream. Events are one per line;
 * only the name matters, so the line is scanned for it. */
static void scan(watcher *w, const char *p, size_t len)
{
    double t = now_s();
    const char *end = p + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *hit;
        size_t take = (size_t)((nl ? nl : end) - p);
        /* Type and name are near the start: keep the line's head. */
        if (take > sizeof w->partial - 1 - w->plen)
            take = sizeof w->partial - 1 - w->plen;
        memcpy(w->partial + w->plen, p, take);
        w->plen += take;
        if (!nl)
            break;
        p = nl + 1;
        w->partial[w->plen] = '\0';
        /* The claim name is near the start of the object. */
        hit = strstr(w->partial, "\"name\":\"bench-");
        if (hit && strstr(w->partial, "\"type\":\"ADDED\"")) {
            int k = atoi(hit + 14);
            if (k >= 0 && k < ncreate &&
                atomic_load(&nlat) < (size_t)ncreate * (size_t)nwatch) {
                /* One thread records (the watch loop): the check holds. */
                size_t j = atomic_fetch_add(&nlat, 1);
                /* Arrival times now, the differences once all is known
                 * (an event may come before its create's 201). */
                lat_sent[j] = t;
                lat_acked[j] = (double)k;
            }
        }
        w->plen = 0;
    }
}

static size_t on_data(char *p, size_t sz, size_t n, void *ud)
{
    scan(ud, p, sz * n);
    return sz * n;
}

static double opened_at; /* when the last watch opened (lean client) */

static void h2_open(void *ud, int i)
{
    watcher *w = (watcher *)ud + i;
    if (!w->opened) {
        w->opened = 1;
        if (atomic_fetch_add(&ready, 1) + 1 == nwatch)
            opened_at = now_s();
    }
}

static void h2_data(void *ud, int i, const char *p, size_t len)
{
    scan((watcher *)ud + i, p, len);
}

/* A watch is open once its response headers are in (the body only
 * starts with the first event). */
static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
    watcher *w = ud;
    if (sz * n <= 2 && (p[0] == '\r' || p[0] == '\n') && !w->opened) {
        w->opened = 1;
        atomic_fetch_add(&ready, 1);
    }
    return sz * n;
}

static size_t discard(char *p, size_t sz, size_t n, void *ud)
{
    (void)p, (void)ud;
    return sz * n;
}

static void *creator(void *arg)
{
    CURL *c = curl_easy_init();
    struct curl_slist *h = NULL;
    char auth[256], body[512], u[512];
    (void)arg;
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    h = curl_slist_append(h, auth);
    h = curl_slist_append(h, "Content-Type: application/json");
    snprintf(u, sizeof u, "%s%s", url, NS);
    curl_easy_setopt(c, CURLOPT_URL, u);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_CAINFO, ca);
    curl_easy_setopt(c, CURLOPT_CAPATH, NULL);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    while (atomic_load(&ready) < nwatch)
        sched_yield();
    for (int i = 0; i < ncreate; i++) {
        snprintf(body, sizeof body,
                 "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
                 "\"metadata\":{\"name\":\"bench-%d-%ld\",\"labels\":{\"bench\":"
                 "\"%ld\"}},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"g\","
                 "\"exactly\":{\"deviceClassName\":\"c\"}}]}}}",
                 i, run, run);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        sent[i] = now_s();
        curl_easy_perform(c);
        acked[i] = now_s();
        /* Let the deliveries of one create settle before the next. */
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
    {
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
    }
    atomic_store(&done, 1);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return NULL;
}

typedef struct grow {
    char buf[8192];
    size_t n;
} grow;

static size_t collect(char *p, size_t sz, size_t n, void *ud)
{
    grow *g = ud;
    size_t len = sz * n, room = sizeof g->buf - 1 - g->n;
    memcpy(g->buf + g->n, p, len < room ? len : room);
    g->n += len < room ? len : room;
    g->buf[g->n] = '\0';
    return len;
}

/* The collection's current resourceVersion, from a one-item list. */
static void list_rv(char *u, size_t ucap, char *rv, size_t cap)
{
    CURL *c = curl_easy_init();
    struct curl_slist *h = NULL;
    char auth[256];
    grow g = {{0}, 0};
    const char *p;
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    h = curl_slist_append(h, auth);
    snprintf(u, ucap, "%s%s?limit=1", url, NS);
    curl_easy_setopt(c, CURLOPT_URL, u);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_CAINFO, ca);
    curl_easy_setopt(c, CURLOPT_CAPATH, NULL);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &g);
    if (curl_easy_perform(c) == CURLE_OK &&
        (p = strstr(g.buf, "\"resourceVersion\":\"")) != NULL) {
        size_t k = 0;
        p += 19;
        while (p[k] >= '0' && p[k] <= '9' && k + 1 < cap) {
            rv[k] = p[k];
            k++;
        }
        rv[k] = '\0';
    }
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, double *v, size_t n)
{
    if (!n) {
        printf("%s: no deliveries\n", what);
        return;
    }
    qsort(v, n, sizeof *v, cmpd);
    printf("%s: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", what, v[n / 2] * 1e3,
           v[n * 99 / 100] * 1e3, v[n - 1] * 1e3);
}

/* The watches through libcurl's multi interface, until the creator is
 * done. */
static void curl_watch(const char *u, watcher *ws)
{
    CURLM *m = curl_multi_init();
    CURL **hs = calloc((size_t)nwatch, sizeof *hs);
    struct curl_slist *h = NULL;
    char auth[256];
    double t0 = now_s(), topen = 0;
    int running;
    curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)nwatch + 10);
    if (http2) {
        curl_multi_setopt(m, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
        curl_multi_setopt(m, CURLMOPT_MAX_CONCURRENT_STREAMS, (long)nwatch);
    }
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    h = curl_slist_append(h, auth);
    for (int i = 0; i < nwatch; i++) {
        hs[i] = curl_easy_init();
        curl_easy_setopt(hs[i], CURLOPT_URL, u);
        curl_easy_setopt(hs[i], CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(hs[i], CURLOPT_CAINFO, ca);
        /* Only drad's CA: libcurl would otherwise parse the whole system
         * CA directory for every connection. */
        curl_easy_setopt(hs[i], CURLOPT_CAPATH, NULL);
        curl_easy_setopt(hs[i], CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(hs[i], CURLOPT_WRITEDATA, &ws[i]);
        curl_easy_setopt(hs[i], CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(hs[i], CURLOPT_HEADERDATA, &ws[i]);
        if (http2) {
            /* Wait for the first connection and share it. */
            curl_easy_setopt(hs[i], CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
            curl_easy_setopt(hs[i], CURLOPT_PIPEWAIT, 1L);
        } else {
            curl_easy_setopt(hs[i], CURLOPT_FORBID_REUSE, 1L);
        }
        curl_multi_add_handle(m, hs[i]);
    }
    do {
        curl_multi_perform(m, &running);
        curl_multi_poll(m, NULL, 0, 20, NULL);
        if (!topen && atomic_load(&ready) >= nwatch)
            topen = now_s() - t0;
        if (atomic_load(&ready) < nwatch && now_s() - t0 > 60) {
            fprintf(stderr, "bench_watch: only %d of %d watches opened\n",
                    atomic_load(&ready), nwatch);
            atomic_store(&ready, nwatch);
        }
    } while (!atomic_load(&done) && running);
    printf("%d watchers opened in %.2f s\n", nwatch, topen);
    for (int i = 0; i < nwatch; i++) {
        curl_multi_remove_handle(m, hs[i]);
        curl_easy_cleanup(hs[i]);
    }
    free(hs);
    curl_multi_cleanup(m);
    curl_slist_free_all(h);
}

/* The same through watch_h2.c on this thread. */
static void lean_watch(const char *u, watcher *ws)
{
    h2w_opts o = {url, token, ca, u + strlen(url), nwatch, conns, h2_open,
                  h2_data, ws, &done};
    double t0 = now_s();
    if (h2w_run(&o)) {
        /* Let the creator finish; the figures then say what came. */
        atomic_store(&ready, nwatch);
        return;
    }
    printf("%d watchers opened in %.2f s\n", nwatch, opened_at ? opened_at - t0 : 0);
}

int main(int argc, char **argv)
{
    watcher *ws;
    char u[512];
    pthread_t th;
    while (argc > 1 && !strncmp(argv[1], "--", 2)) {
        if (!strcmp(argv[1], "--http2") || !strcmp(argv[1], "--http2-curl")) {
            http2 = 1;
            lean = !strcmp(argv[1], "--http2");
        } else if (!strcmp(argv[1], "--conns") && argc > 2) {
            conns = atoi(argv[2]);
            argv++, argc--;
        } else {
            argc = 0;
            break;
        }
        argv++, argc--;
    }
    if (argc < 4) {
        fprintf(stderr, "usage: bench_watch [--http2 [--conns K]|--http2-curl] URL TOKEN CA-FILE [WATCHERS] [CREATES]\n");
        return 2;
    }
    url = argv[1];
    token = argv[2];
    ca = argv[3];
    if (argc > 4)
        nwatch = atoi(argv[4]);
    if (argc > 5)
        ncreate = atoi(argv[5]);
    curl_global_init(CURL_GLOBAL_ALL);
    sent = calloc((size_t)ncreate, sizeof *sent);
    acked = calloc((size_t)ncreate, sizeof *acked);
    lat_sent = calloc((size_t)ncreate * (size_t)nwatch, sizeof *lat_sent);
    lat_acked = calloc((size_t)ncreate * (size_t)nwatch, sizeof *lat_acked);
    ws = calloc((size_t)nwatch, sizeof *ws);
    /* Only this run's claims match. Like an informer, list first and
     * watch from the list's version: no initial scan per watcher. */
    run = (long)time(NULL) * 1000 + (long)(now_s() * 1000) % 1000;
    {
        char lu[512], rv[32] = "0";
        list_rv(lu, sizeof lu, rv, sizeof rv);
        snprintf(u, sizeof u, "%s%s?watch=true&resourceVersion=%s&labelSelector=bench%%3D%ld",
                 url, NS, rv, run);
    }
    pthread_create(&th, NULL, creator, NULL);
    if (lean)
        lean_watch(u, ws);
    else
        curl_watch(u, ws);
    pthread_join(th, NULL);
    /* The first watcher to see an event marks (nearly) its commit: the
     * spread after it is the fan-out itself, without the create's own
     * round trip on either side. */
    first = malloc((size_t)ncreate * sizeof *first);
    for (int k = 0; k < ncreate; k++)
        first[k] = 1e300;
    for (size_t j = 0; j < atomic_load(&nlat); j++) {
        int k = (int)lat_acked[j];
        if (lat_sent[j] < first[k])
            first[k] = lat_sent[j];
    }
    lat_first = calloc(atomic_load(&nlat) + 1, sizeof *lat_first);
    for (size_t j = 0; j < atomic_load(&nlat); j++) {
        int k = (int)lat_acked[j];
        double t = lat_sent[j];
        lat_first[j] = t - first[k];
        lat_sent[j] = t - sent[k];
        lat_acked[j] = t - acked[k];
    }
    printf("%zu deliveries of %d creates to %d watchers\n", atomic_load(&nlat),
           ncreate, nwatch);
    report("latency from the create being sent", lat_sent, atomic_load(&nlat));
    report("latency from its 201 coming back  ", lat_acked, atomic_load(&nlat));
    report("after the first watcher saw it    ", lat_first, atomic_load(&nlat));
    free(first);
    free(lat_first);
    free(ws);
    curl_global_cleanup();
    return 0;
}
