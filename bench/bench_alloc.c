/*
 * bench_alloc.c: allocator throughput on scheduler_perf-shaped workloads.
 * Claims are scheduled one after another with the in-use state carried
 * over, as the scheduler does: each pod's claim goes to the first node (by
 * name) where it fits, and is committed before the next pod.
 *
 *   bench_alloc [scale] [--builtin]
 *     scale 1.0 = 5,000 nodes x 8 GPUs, 10,000 pods; --builtin replaces CEL
 *     by a trivial selector backend, to see the allocator's own cost
 *
 * Prints claims/s overall and for the first and last tenth of the pods
 * (the per-claim cost must not grow with the pods placed), the selector
 * evaluations, arena bytes and peak RSS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "dra/alloc.h"

/* CPU time of this process: the machine is shared, so wall-clock time
 * would measure the neighbours too. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long peak_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* ---- a fallback selector backend, only when CEL is not in the build ---- */

static dra_err fb_compile(void *ud, const char *expr, void **prog, dra_diag *d)
{
    (void)ud;
    (void)d;
    *prog = (void *)expr;
    return DRA_OK;
}
static void fb_release(void *ud, void *prog)
{
    (void)ud;
    (void)prog;
}
static dra_err fb_eval(void *ud, void *prog, const char *driver, const dra_alloc_device *dev,
                       void *prepared, int *result, dra_diag *d)
{
    const char *q = strchr(prog, '"'), *p = strstr(prog, ".profile == \"");
    (void)ud;
    (void)prepared;
    (void)d;
    *result = q && strncmp(q + 1, driver, strlen(driver)) == 0;
    if (p) {
        const dra_cel_attr *at = dra_alloc_attr_lookup(driver, dev, "gpu.example.com/profile");
        p += strlen(".profile == \"");
        *result = at && strncmp(at->s, p, strlen(at->s)) == 0 && p[strlen(at->s)] == '"';
    }
    return DRA_OK;
}
static const dra_alloc_selector_ops fallback = {NULL, fb_compile, fb_release, NULL, NULL,
                                               fb_eval, NULL, NULL};
static const char *backend = "CEL";
static int builtin;

static dra_allocator *new_allocator(void)
{
    dra_allocator *a = NULL;
    dra_alloc_options o;
    memset(&o, 0, sizeof o);
    if (builtin) {
        o.selectors = &fallback;
        backend = "built-in driver/profile check (--builtin)";
        return dra_allocator_new(NULL, &o, &a) == DRA_OK ? a : NULL;
    }
    if (dra_allocator_new(NULL, &o, &a) == DRA_EUNSUPPORTED) {
        o.selectors = &fallback;
        backend = "built-in driver check (CEL engine not in this build)";
        if (dra_allocator_new(NULL, &o, &a) != DRA_OK)
            return NULL;
    }
    return a;
}

/* ---- inventory -------------------------------------------------------------- */

typedef struct inv {
    char *names;       /* node and device names */
    dra_cel_attr *attrs;
    dra_alloc_device *devs;
    dra_alloc_slice *slices;
    dra_alloc_counter *ctrs;
    dra_alloc_counter_set *sets;
    size_t nslices;
} inv;

static const char *gpu_sel[] = {"device.driver == \"gpu.example.com\""};
static const dra_alloc_class gpu_class = {"gpu.example.com", gpu_sel, 1, NULL, 0};
/* Like the seed's class: reads an attribute, so it runs once per device. */
static const char *typed_sel[] = {
    "device.driver == \"gpu.example.com\" && device.attributes[\"gpu.example.com\"].type == \"gpu\""};
static const dra_alloc_class typed_class = {"gpu-typed", typed_sel, 1, NULL, 0};

/* |nodes| nodes with |per| GPUs each, one slice per node. Attribute
 * pcieRoot: GPUs 0-3 on "root-0", 4-7 on "root-1". */
static void gpu_inventory(inv *v, int nodes, int per)
{
    size_t nd = (size_t)nodes * (size_t)per;
    v->names = calloc((size_t)nodes + nd, 32);
    v->attrs = calloc(nd * 2, sizeof *v->attrs);
    v->devs = calloc(nd, sizeof *v->devs);
    v->slices = calloc((size_t)nodes, sizeof *v->slices);
    v->nslices = (size_t)nodes;
    for (int n = 0; n < nodes; n++) {
        char *nn = v->names + (size_t)n * 32;
        snprintf(nn, 32, "node-%05d", n);
        for (int g = 0; g < per; g++) {
            size_t i = (size_t)n * (size_t)per + (size_t)g;
            char *dn = v->names + ((size_t)nodes + i) * 32;
            snprintf(dn, 32, "gpu-%d", g);
            v->attrs[2 * i].name = "pcieRoot";
            v->attrs[2 * i].kind = DRA_CEL_ATTR_STRING;
            v->attrs[2 * i].s = g < 4 ? "root-0" : "root-1";
            v->attrs[2 * i + 1].name = "type";
            v->attrs[2 * i + 1].kind = DRA_CEL_ATTR_STRING;
            v->attrs[2 * i + 1].s = "gpu";
            v->devs[i].name = dn;
            v->devs[i].attrs = &v->attrs[2 * i];
            v->devs[i].nattrs = 2;
        }
        v->slices[n].name = nn;
        v->slices[n].driver = "gpu.example.com";
        v->slices[n].pool = nn;
        v->slices[n].slice_count = 1;
        v->slices[n].node_name = nn;
        v->slices[n].devices = &v->devs[(size_t)n * (size_t)per];
        v->slices[n].ndevices = (size_t)per;
    }
}

/* MIG-style: per node one GPU pool with a counter slice (memory 80,
 * slices 7) and a device slice: 7 x 1g (1 slice, 10 memory), 3 x 2g
 * (2 slices, 20), 2 x 3g (3 slices, 40), 1 x 7g (7 slices, 80). */
static void mig_inventory(inv *v, int nodes)
{
    static const struct { const char *name; int n, slices, mem; } prof[] = {
        {"1g", 7, 1, 10}, {"2g", 3, 2, 20}, {"3g", 2, 3, 40}, {"7g", 1, 7, 80}};
    const int per = 13;
    size_t nd = (size_t)nodes * per;
    v->names = calloc((size_t)nodes * 2 + nd, 32);
    v->attrs = calloc(nd, sizeof *v->attrs);
    v->devs = calloc(nd, sizeof *v->devs);
    v->slices = calloc((size_t)nodes * 2, sizeof *v->slices);
    v->ctrs = calloc(nd * 2 + (size_t)nodes * 2, sizeof *v->ctrs);
    v->sets = calloc(nd + (size_t)nodes, sizeof *v->sets);
    v->nslices = (size_t)nodes * 2;
    size_t di = 0, ci = 0, si = 0;
    for (int n = 0; n < nodes; n++) {
        char *nn = v->names + (size_t)n * 64, *cn = nn + 32;
        dra_alloc_slice *cs = &v->slices[2 * n], *ds = &v->slices[2 * n + 1];
        snprintf(nn, 32, "node-%05d", n);
        snprintf(cn, 32, "node-%05d-counters", n);
        v->ctrs[ci].name = "memory";
        v->ctrs[ci].value = dra_quantity_from_int64(80, DRA_QTY_DECIMAL_SI);
        v->ctrs[ci + 1].name = "slices";
        v->ctrs[ci + 1].value = dra_quantity_from_int64(7, DRA_QTY_DECIMAL_SI);
        v->sets[si].name = "gpu-0";
        v->sets[si].counters = &v->ctrs[ci];
        v->sets[si].ncounters = 2;
        ci += 2;
        *cs = (dra_alloc_slice){cn, "gpu.example.com", nn, 0, 2, nn, NULL, 0, 0, NULL, 0,
                                &v->sets[si++], 1};
        *ds = (dra_alloc_slice){nn, "gpu.example.com", nn, 0, 2, nn, NULL, 0, 0,
                                &v->devs[di], (size_t)per, NULL, 0};
        for (size_t p = 0; p < 4; p++)
            for (int k = 0; k < prof[p].n; k++) {
                char *dn = v->names + ((size_t)nodes * 2 + di) * 32;
                snprintf(dn, 32, "gpu-0-mig-%s-%d", prof[p].name, k);
                v->attrs[di].name = "profile";
                v->attrs[di].kind = DRA_CEL_ATTR_STRING;
                v->attrs[di].s = prof[p].name;
                v->ctrs[ci].name = "memory";
                v->ctrs[ci].value = dra_quantity_from_int64(prof[p].mem, DRA_QTY_DECIMAL_SI);
                v->ctrs[ci + 1].name = "slices";
                v->ctrs[ci + 1].value = dra_quantity_from_int64(prof[p].slices, DRA_QTY_DECIMAL_SI);
                v->sets[si].name = "gpu-0";
                v->sets[si].counters = &v->ctrs[ci];
                v->sets[si].ncounters = 2;
                v->devs[di].name = dn;
                v->devs[di].attrs = &v->attrs[di];
                v->devs[di].nattrs = 1;
                v->devs[di].consumes = &v->sets[si];
                v->devs[di].nconsumes = 1;
                ci += 2;
                si++;
                di++;
            }
    }
}

static void inv_free(inv *v)
{
    free(v->names);
    free(v->attrs);
    free(v->devs);
    free(v->slices);
    free(v->ctrs);
    free(v->sets);
}

/* ---- running a workload ------------------------------------------------------ */

typedef struct workload {
    const char *title;
    const char *class_name;
    int64_t count;
    const char *constraint; /* matchAttribute or NULL */
    const char *const *profiles; /* MIG: request selector per pod, cycling */
    size_t nprofiles;
} workload;

static int run(const char *title, inv *v, int pods, const workload *w)
{
    dra_allocator *a = new_allocator();
    dra_alloc_outcome o;
    dra_alloc_stats st;
    double t0, t1, w0, tseal, tfirst = 0, tlast0 = 0, tlast = 0;
    int placed = 0, tenth = pods / 10 > 0 ? pods / 10 : 1;
    char name[32];
    if (!a)
        return 1;
    for (size_t i = 0; i < v->nslices; i++)
        if (dra_allocator_add_slice(a, &v->slices[i], NULL) != DRA_OK)
            return 1;
    dra_allocator_add_class(a, &gpu_class);
    dra_allocator_add_class(a, &typed_class);
    dra_alloc_outcome_init(&o, NULL);
    t0 = now();
    if (dra_allocator_seal(a, NULL) != DRA_OK)
        return 1;
    tseal = now() - t0;
    t0 = now();
    w0 = wall();
    for (int p = 0; p < pods; p++) {
        /* The claim the resourceclaim controller makes from the template. */
        const char *reqs[] = {"gpu"};
        const char *sel[1];
        dra_alloc_constraint con = {reqs, 1, w->constraint, NULL};
        dra_alloc_request r;
        dra_alloc_claim c;
        const dra_alloc_claim *cp = &c;
        dra_err err;
        memset(&r, 0, sizeof r);
        memset(&c, 0, sizeof c);
        snprintf(name, sizeof name, "pod-%d-gpu-00000", p);
        r.name = "gpu";
        r.exactly.class_name = w->class_name;
        r.exactly.count = w->count;
        if (w->nprofiles) {
            sel[0] = w->profiles[(size_t)p % w->nprofiles];
            r.exactly.selectors = sel;
            r.exactly.nselectors = 1;
        }
        c.namespace_ = "default";
        c.name = name;
        c.requests = &r;
        c.nrequests = 1;
        c.constraints = &con;
        c.nconstraints = w->constraint ? 1 : 0;
        if (p == pods - tenth)
            tlast0 = now();
        err = dra_allocator_schedule(a, &cp, 1, &o, NULL);
        if (err == DRA_OK) {
            dra_allocator_commit(a, &o);
            placed++;
        } else if (err != DRA_EUNSAT) {
            fprintf(stderr, "%s: pod %d: %s\n", title, p, dra_strerror(err));
            return 1;
        }
        if (p == tenth - 1)
            tfirst = now() - t0;
    }
    t1 = now();
    tlast = t1 - tlast0;
    dra_allocator_stats(a, &st);
    printf("%s: %zu nodes, %zu devices, index %.1f ms; %d pods, %d placed in %.3f s CPU "
           "(%.3f s wall): %.0f claims/s (first 10%%: %.0f/s, last 10%%: %.0f/s); "
           "%zu selector evals; arena %.1f MiB\n",
           title, st.nodes, st.devices, tseal * 1e3, pods, placed, t1 - t0, wall() - w0,
           pods / (t1 - t0), tenth / tfirst, tenth / tlast, st.selector_evals,
           (double)st.arena_bytes / (1 << 20));
    dra_alloc_outcome_fini(&o);
    dra_allocator_free(a);
    return 0;
}

int main(int argc, char **argv)
{
    double scale = argc > 1 && argv[1][0] != '-' ? atof(argv[1]) : 1.0;
    int nodes = (int)(5000 * scale), pods = (int)(10000 * scale);
    static const char *const mig[] = {"device.attributes[\"gpu.example.com\"].profile == \"1g\"",
                                      "device.attributes[\"gpu.example.com\"].profile == \"2g\"",
                                      "device.attributes[\"gpu.example.com\"].profile == \"1g\""};
    workload one = {"1 GPU per claim", "gpu.example.com", 1, NULL, NULL, 0};
    workload one_t = {"1 GPU per claim, attribute class", "gpu-typed", 1, NULL, NULL, 0};
    workload four = {"4 GPUs + matchAttribute pcieRoot", "gpu.example.com", 4,
                     "gpu.example.com/pcieRoot", NULL, 0};
    workload four_t = {"4 GPUs + matchAttribute, attribute class", "gpu-typed", 4,
                       "gpu.example.com/pcieRoot", NULL, 0};
    workload part = {"MIG partitions (1g/2g/1g)", "gpu.example.com", 1, NULL, mig, 3};
    inv v;
    int rc = 0;
    for (int i = 1; i < argc; i++)
        builtin |= strcmp(argv[i], "--builtin") == 0;
    if (nodes < 1 || pods < 1) {
        fprintf(stderr, "usage: bench_alloc [scale>0] [--builtin]\n");
        return 2;
    }
    memset(&v, 0, sizeof v);
    gpu_inventory(&v, nodes, 8);
    rc |= run(one.title, &v, pods, &one);
    rc |= run(one_t.title, &v, pods, &one_t);
    rc |= run(four.title, &v, pods, &four);
    rc |= run(four_t.title, &v, pods, &four_t);
    inv_free(&v);
    memset(&v, 0, sizeof v);
    mig_inventory(&v, nodes / 2);
    rc |= run(part.title, &v, pods, &part);
    inv_free(&v);
    printf("selector backend: %s; peak RSS %ld KiB\n", backend, peak_rss_kib());
    return rc;
}
