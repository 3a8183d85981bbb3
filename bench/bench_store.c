/* bench_store: figures for drad's object store (src/store), in process.
 *   creates/s, durable (synchronous=FULL), 1 serial writer and 64 writers
 *     (group commit);
 *   gets/s from memory (4 threads);
 *   watch fan-out: one commit to 1,000 watches polled by 8 threads, the
 *     time from the commit's first notify to each watcher taking the
 *     event (p50, p99, max over many commits);
 *   compaction under churn: longest step, database size against the
 *     live data;
 *   open time with 100,000 stored objects.
 * Usage: bench_store [DIR] (default: a directory under /tmp). BENCH_ONLY
 * (a comma-separated list of w1, w64, gets, fanout, churn, open) runs
 * those alone; BENCH_NOSYNC=1 turns fsync off for the write runs. Each
 * write run also prints the process's CPU time and context switches per
 * write, which a loaded machine disturbs less than the rate. Prints
 * figures; asserts nothing. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "dra/store.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char base[256];

/* CPU seconds (user + system) and context switches of the process. */
static void usage_now(double *cpu, long *csw)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    *cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    *csw = ru.ru_nvcsw + ru.ru_nivcsw;
}

static int selected(const char *name)
{
    const char *only = getenv("BENCH_ONLY");
    size_t n = strlen(name);
    if (!only || !*only)
        return 1;
    for (const char *p = only; (p = strstr(p, name)); p += n)
        if ((p == only || p[-1] == ',') && (p[n] == ',' || !p[n]))
            return 1;
    return 0;
}

static dra_store *open_at(const char *name, const dra_store_opts *o)
{
    char p[400];
    dra_store *s = NULL;
    snprintf(p, sizeof p, "%s/%s.db", base, name);
    if (dra_store_open(p, o, NULL, &s, NULL)) {
        fprintf(stderr, "bench_store: cannot open %s\n", p);
        exit(1);
    }
    return s;
}

/* A ResourceClaim-sized object (about 600 bytes). */
static size_t object(char *buf, size_t cap, const char *name, size_t *rv_at)
{
    int n = snprintf(buf, cap,
                     "{\"kind\":\"ResourceClaim\",\"apiVersion\":\"resource.k8s.io/v1\","
                     "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\","
                     "\"uid\":\"6a51168b-140d-45de-9c68-eb749ade017d\","
                     "\"resourceVersion\":\"\",\"generation\":1,"
                     "\"creationTimestamp\":\"2026-12-03T08:26:29Z\"},"
                     "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\","
                     "\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\","
                     "\"allocationMode\":\"ExactCount\",\"count\":1}}]}},"
                     "\"status\":{\"allocation\":{\"devices\":{\"results\":[{"
                     "\"request\":\"gpu\",\"driver\":\"gpu.nvidia.com\",\"pool\":"
                     "\"gb200-pod2-f06-node05\",\"device\":\"gpu-0\"}]},"
                     "\"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchFields\":[{"
                     "\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":["
                     "\"gb200-pod2-f06-node05\"]}]}]}},\"reservedFor\":[{"
                     "\"resource\":\"pods\",\"name\":\"gpu-test-pod\",\"uid\":"
                     "\"f9f36e07-8fbe-46e4-bc9f-d8e5df658654\"}]}}",
                     name);
    *rv_at = (size_t)(strstr(buf, "\"resourceVersion\":\"") - buf) + 19;
    return (size_t)n;
}

static dra_err put(dra_store *s, dra_store_op op, const char *name)
{
    char buf[2048];
    dra_store_write w;
    memset(&w, 0, sizeof w);
    w.op = op;
    w.resource = "resourceclaims.resource.k8s.io";
    w.ns = "default";
    w.name = name;
    w.json = buf;
    w.len = object(buf, sizeof buf, name, &w.rv_at);
    dra_err e = dra_store_write_one(s, &w);
    dra_store_obj_unref(w.obj);
    return e;
}

/* ---- writes ------------------------------------------------------------------ */

typedef struct wargs {
    dra_store *s;
    int id, n;
} wargs;

static void *writer(void *arg)
{
    wargs *a = arg;
    char name[64];
    for (int i = 0; i < a->n; i++) {
        snprintf(name, sizeof name, "w%d-%d", a->id, i);
        if (put(a->s, DRA_STORE_CREATE, name))
            fprintf(stderr, "write failed\n");
    }
    return NULL;
}

static void bench_writes(int threads, int per)
{
    char name[32];
    dra_store *s;
    pthread_t th[64];
    wargs a[64];
    dra_store_stats st;
    double t0, t, c0, c1;
    long w0, w1;
    dra_store_opts o = {.unsafe_nosync = getenv("BENCH_NOSYNC") != NULL};
    snprintf(name, sizeof name, "writes%d", threads);
    s = open_at(name, &o);
    usage_now(&c0, &w0);
    t0 = now_s();
    for (int i = 0; i < threads; i++) {
        a[i] = (wargs){s, i, per};
        pthread_create(&th[i], NULL, writer, &a[i]);
    }
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    t = now_s() - t0;
    usage_now(&c1, &w1);
    dra_store_stats_get(s, &st);
    printf("creates, %s, %2d writer(s): %8.0f/s  (%d writes in %.2f s, "
           "%.1f writes per commit; per write %.1f us CPU, %.2f context "
           "switches)\n",
           o.unsafe_nosync ? "no fsync" : "durable", threads,
           threads * per / t, threads * per, t,
           (double)st.writes / (double)(st.batches ? st.batches : 1),
           (c1 - c0) * 1e6 / (threads * per), (double)(w1 - w0) / (threads * per));
    dra_store_close(s);
}

/* ---- reads --------------------------------------------------------------------- */

static void *getter(void *arg)
{
    wargs *a = arg;
    char name[64];
    for (int i = 0; i < a->n; i++) {
        dra_store_obj *o;
        snprintf(name, sizeof name, "w%d-%d", (i * 7) % 64, (i * 13) % 100);
        if (!dra_store_get(a->s, "resourceclaims.resource.k8s.io", "default", name, &o))
            dra_store_obj_unref(o);
    }
    return NULL;
}

static void bench_gets(void)
{
    dra_store *s = open_at("writes64", NULL);
    pthread_t th[4];
    wargs a[4];
    double t0 = now_s(), t;
    for (int i = 0; i < 4; i++) {
        a[i] = (wargs){s, i, 1000000};
        pthread_create(&th[i], NULL, getter, &a[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    t = now_s() - t0;
    printf("gets from memory, 4 threads:     %8.0f/s\n", 4e6 / t);
    dra_store_close(s);
}

/* ---- watch fan-out ---------------------------------------------------------------- */

#define WATCHERS 1000
#define POLLERS 8
#define COMMITS 200

typedef struct fan {
    dra_store *s;
    dra_store_watch *w[WATCHERS];
    pthread_mutex_t lock;
    pthread_cond_t cv;
    atomic_int pending[POLLERS];
    _Atomic double first_notify;
    double *lat;
    atomic_size_t nlat;
    atomic_int stop;
} fan;

typedef struct wud {
    fan *f;
    int poller;
} wud;

static wud wuds[WATCHERS];

static void on_notify(void *ud)
{
    wud *u = ud;
    double t = 0, z = 0;
    t = now_s();
    atomic_compare_exchange_strong(&u->f->first_notify, &z, t);
    atomic_store(&u->f->pending[u->poller], 1);
}

typedef struct pargs {
    fan *f;
    int id;
} pargs;

static void *poller(void *arg)
{
    pargs *p = arg;
    fan *f = p->f;
    dra_store_event ev[4];
    while (!atomic_load(&f->stop)) {
        size_t n;
        if (!atomic_exchange(&f->pending[p->id], 0)) {
            /* Spin briefly, then yield: the wake-up cost is part of what
             * is measured, and a condition variable per poller would add
             * the same. */
            sched_yield();
            continue;
        }
        for (int i = p->id; i < WATCHERS; i += POLLERS) {
            if (dra_store_watch_poll(f->w[i], ev, 4, &n) || !n)
                continue;
            double t = now_s() - atomic_load(&f->first_notify);
            size_t k = atomic_fetch_add(&f->nlat, 1);
            if (k < (size_t)WATCHERS * COMMITS)
                f->lat[k] = t;
            for (size_t j = 0; j < n; j++)
                dra_store_event_fini(&ev[j]);
        }
    }
    return NULL;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void bench_fanout(void)
{
    static fan f;
    pthread_t th[POLLERS];
    pargs pa[POLLERS];
    dra_store_opts o = {.unsafe_nosync = 1};
    memset(&f, 0, sizeof f);
    f.s = open_at("fanout", &o);
    f.lat = calloc((size_t)WATCHERS * COMMITS, sizeof *f.lat);
    for (int i = 0; i < WATCHERS; i++) {
        wuds[i] = (wud){&f, i % POLLERS};
        dra_store_watch_open(f.s, "resourceclaims.resource.k8s.io", NULL,
                             dra_store_rv(f.s), on_notify, &wuds[i], &f.w[i]);
    }
    for (int i = 0; i < POLLERS; i++) {
        pa[i] = (pargs){&f, i};
        pthread_create(&th[i], NULL, poller, &pa[i]);
    }
    for (int c = 0; c < COMMITS; c++) {
        char name[32];
        size_t want = (size_t)WATCHERS * (size_t)(c + 1);
        atomic_store(&f.first_notify, 0.0);
        snprintf(name, sizeof name, "fan-%d", c);
        put(f.s, DRA_STORE_CREATE, name);
        /* Every delivery of this commit before the next one resets the
         * clock (a count of yields ran out too soon on a loaded machine,
         * and a late delivery was then timed from zero). */
        for (double until = now_s() + 30; atomic_load(&f.nlat) < want && now_s() < until;)
            sched_yield();
    }
    atomic_store(&f.stop, 1);
    for (int i = 0; i < POLLERS; i++)
        pthread_join(th[i], NULL);
    {
        size_t n = atomic_load(&f.nlat);
        qsort(f.lat, n, sizeof *f.lat, cmpd);
        printf("watch fan-out, 1 commit -> %d watchers (%d pollers, %d commits): "
               "p50 %.3f ms, p99 %.3f ms, max %.3f ms (%zu deliveries)\n",
               WATCHERS, POLLERS, COMMITS, f.lat[n / 2] * 1e3,
               f.lat[n * 99 / 100] * 1e3, f.lat[n - 1] * 1e3, n);
    }
    for (int i = 0; i < WATCHERS; i++)
        dra_store_watch_close(f.w[i]);
    free(f.lat);
    dra_store_close(f.s);
}

/* ---- compaction and size ---------------------------------------------------------- */

static void bench_compaction(void)
{
    dra_store_opts o = {.unsafe_nosync = 1};
    dra_store *s = open_at("churn", &o);
    dra_store_stats st;
    double t0 = now_s();
    /* 2,000 objects, each updated 50 times: 100,000 writes of which
     * only the latest state of each object is live. */
    for (int i = 0; i < 2000; i++) {
        char name[32];
        snprintf(name, sizeof name, "o%d", i);
        put(s, DRA_STORE_CREATE, name);
    }
    for (int round = 0; round < 50; round++)
        for (int i = 0; i < 2000; i++) {
            char name[32];
            snprintf(name, sizeof name, "o%d", i);
            put(s, DRA_STORE_UPDATE, name);
        }
    dra_store_compact(s);
    dra_store_stats_get(s, &st);
    printf("churn (2,000 objects x 51 writes, %.1f s): live %.1f MB, history %.1f MB "
           "(%zu events), database %.1f MB (%.2fx live), wal %.1f MB, %llu compaction "
           "steps, longest %.2f ms\n",
           now_s() - t0, (double)st.live_bytes / 1e6, (double)st.history_bytes / 1e6,
           st.history_events, (double)st.db_bytes / 1e6,
           (double)st.db_bytes / (double)st.live_bytes, (double)st.wal_bytes / 1e6,
           (unsigned long long)st.compactions, (double)st.compact_max_us / 1e3);
    dra_store_close(s);
}

static void bench_open(void)
{
    dra_store_opts o = {.unsafe_nosync = 1};
    dra_store *s = open_at("big", &o);
    double t0;
    pthread_t th[8];
    wargs a[8];
    for (int i = 0; i < 8; i++) {
        a[i] = (wargs){s, 100 + i, 12500};
        pthread_create(&th[i], NULL, writer, &a[i]);
    }
    for (int i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    dra_store_close(s);
    /* The first open after the writes runs a WAL checkpoint; the second
     * is the steady restart. */
    for (int i = 0; i < 3; i++) {
        t0 = now_s();
        s = open_at("big", &o);
        printf("open with 100,000 objects (and their history): %.0f ms\n",
               (now_s() - t0) * 1e3);
        dra_store_close(s);
    }
}

int main(int argc, char **argv)
{
    char cmd[400];
    if (argc > 1)
        snprintf(base, sizeof base, "%s", argv[1]);
    else {
        snprintf(base, sizeof base, "/tmp/dra-bench-store-XXXXXX");
        if (!mkdtemp(base))
            return 1;
    }
    if (selected("w1"))
        bench_writes(1, 1000);
    if (selected("w64") || selected("gets"))
        bench_writes(64, 500);
    if (selected("gets"))
        bench_gets();
    if (selected("fanout"))
        bench_fanout();
    if (selected("churn"))
        bench_compaction();
    if (selected("open"))
        bench_open();
    if (argc <= 1) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
        if (system(cmd))
            return 1;
    }
    return 0;
}
