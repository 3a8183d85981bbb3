/*
 * bench_cel: the C half of the CEL selector benchmark. The same four DRA
 * selector expressions (plus a fifth, a regex match) and the same 1,000
 * generated devices as bench/cel-js-bench.mjs: each expression is compiled
 * once, the devices are prepared once, then the expression is evaluated
 * --evals times (default 1,000,000) cycling over the devices; the median
 * CPU ns/eval of --rounds timed runs is printed, with the number of matching
 * devices (which bench/run-cel-bench.sh checks against the JS engines) and
 * the number of heap allocations made while the timed evaluations ran
 * (must be 0; the exit status is 1 otherwise).
 *
 * Heap allocations are counted twice: through the dra_mem given to the
 * env, VM and prepared devices, and (outside sanitizer builds, where the
 * runtime owns malloc) by interposing malloc/calloc/realloc/free for the
 * whole process, which also sees allocations made by libraries such as
 * PCRE2 that do not go through dra_mem.
 *
 * usage: bench_cel [--evals N] [--rounds N] [--only a,b] [--tsv]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dra/base.h"
#include "dra/cel.h"
#include "dra/codec.h"

/* ---- process-wide allocation counter (malloc interposition) ------------ */

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define BENCH_NO_INTERPOSE 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define BENCH_NO_INTERPOSE 1
#endif

#if !defined(BENCH_NO_INTERPOSE) && defined(__GLIBC__)
#define BENCH_INTERPOSE 1
/* glibc's own entry points, so the wrappers below need no dlsym. */
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

/* A benchmark program, not library code: one process-wide counter is the
 * only way to see allocations from every library. */
static unsigned long g_heap_allocs;

#define BENCH_EXPORT __attribute__((visibility("default")))
BENCH_EXPORT void *malloc(size_t n)
{
    g_heap_allocs++;
    return __libc_malloc(n);
}
BENCH_EXPORT void *calloc(size_t n, size_t size)
{
    g_heap_allocs++;
    return __libc_calloc(n, size);
}
BENCH_EXPORT void *realloc(void *p, size_t n)
{
    g_heap_allocs++;
    return __libc_realloc(p, n);
}
BENCH_EXPORT void free(void *p)
{
    __libc_free(p);
}
static unsigned long heap_allocs(void) { return g_heap_allocs; }

/* 1 when the wrappers above really see the process's mallocs. */
static int heap_counting_works(void)
{
    unsigned long before = g_heap_allocs;
    void *volatile p = malloc(24);
    free(p);
    return g_heap_allocs != before;
}
#else
static int heap_counting_works(void) { return 0; }
static unsigned long heap_allocs(void) { return 0; }
#endif

/* ---- counting dra_mem ---------------------------------------------------- */

typedef struct counting_mem {
    dra_mem mem;
    unsigned long allocs; /* allocations and reallocations */
} counting_mem;

static void *cm_realloc(void *ud, void *ptr, size_t size)
{
    counting_mem *cm = ud;
    cm->allocs++;
    return realloc(ptr, size);
}

static void cm_free(void *ud, void *ptr)
{
    (void)ud;
    free(ptr);
}

static void counting_mem_init(counting_mem *cm)
{
    cm->mem.realloc = cm_realloc;
    cm->mem.free = cm_free;
    cm->mem.ud = cm;
    cm->allocs = 0;
}

/* ---- the workload (keep in sync with bench/cel-js-bench.mjs) ------------ */

typedef struct bench_expr {
    const char *id;
    const char *text;
} bench_expr;

static const bench_expr k_exprs[] = {
    {"a", "device.driver == 'gpu.nvidia.com'"},
    {"b", "device.driver == 'gpu.nvidia.com' && "
          "device.attributes['gpu.nvidia.com'].type == 'gpu'"},
    {"c", "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) > 0"},
    {"d", "['a100', 'h100', 'gb200'].exists(p, device.attributes['gpu.nvidia.com']"
          ".productName.lowerAscii().contains(p))"},
    /* Not one of the four required expressions: a regex on the hot path,
     * where a per-call match buffer would show up as heap allocations. */
    {"e", "device.attributes['resource.kubernetes.io'].pciBusID.matches('^0000:[0-3][0-9a-f]:')"},
};
#define NEXPRS (sizeof k_exprs / sizeof k_exprs[0])

typedef struct bench_product {
    const char *name, *arch;
    int gib;
} bench_product;

static const bench_product k_products[] = {
    {"NVIDIA A100-SXM4-40GB", "Ampere", 40},
    {"NVIDIA A100-SXM4-80GB", "Ampere", 80},
    {"NVIDIA H100 80GB HBM3", "Hopper", 80},
    {"NVIDIA H200 141GB HBM3e", "Hopper", 141},
    {"NVIDIA GB200 186GB HBM3e", "Blackwell", 186},
    {"NVIDIA L4", "Ada Lovelace", 24},
    {"Tesla T4", "Turing", 16},
};
#define NPRODUCTS (sizeof k_products / sizeof k_products[0])
#define NDEVICES 1000
#define NATTRS 6

/* Storage for one generated device; the dra_cel_device borrows it. */
typedef struct bench_device {
    char uuid[64], pci[32], mem[32];
    dra_cel_attr attrs[NATTRS];
    dra_cel_capacity cap;
    dra_cel_device dev;
    dra_cel_prepared *prep;
} bench_device;

/* Device |i|, exactly as benchDevice(i) in cel-js-bench.mjs: every tenth
 * device is from another driver publishing the same fully qualified
 * gpu.nvidia.com attributes; every fourth is a MIG slice with an eighth of
 * the memory. */
static dra_err bench_device_init(bench_device *bd, int i, const dra_mem *mem)
{
    const bench_product *p = &k_products[i % (int)NPRODUCTS];
    int mig = i % 4 == 3;
    snprintf(bd->uuid, sizeof bd->uuid, "GPU-%08x-4e1d-9c2f-%012x", (unsigned)i,
             (unsigned)(i * 7919));
    snprintf(bd->pci, sizeof bd->pci, "0000:%02x:00.0", (unsigned)(i % 256));
    if (mig)
        snprintf(bd->mem, sizeof bd->mem, "%dMi", p->gib * 128);
    else
        snprintf(bd->mem, sizeof bd->mem, "%dGi", p->gib);

    dra_cel_attr *a = bd->attrs;
    memset(a, 0, sizeof bd->attrs);
    a[0] = (dra_cel_attr){.name = "gpu.nvidia.com/type", .kind = DRA_CEL_ATTR_STRING,
                          .s = mig ? "mig" : "gpu"};
    a[1] = (dra_cel_attr){.name = "gpu.nvidia.com/productName",
                          .kind = DRA_CEL_ATTR_STRING, .s = p->name};
    a[2] = (dra_cel_attr){.name = "gpu.nvidia.com/architecture",
                          .kind = DRA_CEL_ATTR_STRING, .s = p->arch};
    a[3] = (dra_cel_attr){.name = "gpu.nvidia.com/uuid", .kind = DRA_CEL_ATTR_STRING,
                          .s = bd->uuid};
    a[4] = (dra_cel_attr){.name = "gpu.nvidia.com/index", .kind = DRA_CEL_ATTR_INT,
                          .i = i % 8};
    a[5] = (dra_cel_attr){.name = "resource.kubernetes.io/pciBusID",
                          .kind = DRA_CEL_ATTR_STRING, .s = bd->pci};
    bd->cap.name = "gpu.nvidia.com/memory";
    dra_err err = dra_quantity_parse(bd->mem, strlen(bd->mem), &bd->cap.value);
    if (err)
        return err;
    bd->dev = (dra_cel_device){
        .driver = i % 10 == 9 ? "gpu.example.com" : "gpu.nvidia.com",
        .attrs = bd->attrs, .nattrs = NATTRS, .caps = &bd->cap, .ncaps = 1};
    return dra_cel_device_prepare(mem, &bd->dev, &bd->prep);
}

/* ---- measurement --------------------------------------------------------- */

typedef struct bench_opts {
    long evals, rounds;
    const char *only;
    int tsv;
} bench_opts;

typedef struct bench_result {
    double ns, compile_us;
    int matches;
    unsigned long long cost_sum; /* runtime cost over the devices, once each */
    unsigned long dra_allocs, heap_allocs; /* during the timed evaluations */
} bench_result;

/* Timing uses the process's CPU time, not the wall clock: the benchmark
 * runs on shared 2-core machines where other jobs would otherwise be
 * billed to the engine. The JS side measures the same way. */
static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Evaluates |p| |n| times over the devices; returns matches or -1 after
 * printing the first evaluation error. */
static long run_evals(const dra_cel_program *p, dra_cel_vm *vm, bench_device *devs,
                      long n, unsigned long long *cost_sum)
{
    long matches = 0;
    int i = 0;
    for (long k = 0; k < n; k++) {
        int r = 0;
        dra_err err = dra_cel_eval_device(p, vm, devs[i].prep, &r, NULL);
        if (err) {
            dra_diag d;
            dra_diag_init(&d, NULL);
            dra_cel_eval_device(p, vm, devs[i].prep, &r, &d);
            fprintf(stderr, "bench_cel: device %d: %s: %s\n", i, dra_errname(err),
                    dra_diag_first(&d) ? dra_diag_first(&d) : "");
            dra_diag_fini(&d);
            return -1;
        }
        matches += r;
        if (cost_sum)
            *cost_sum += dra_cel_vm_last_cost(vm);
        if (++i == NDEVICES)
            i = 0;
    }
    return matches;
}

static int measure(dra_cel_env *env, dra_cel_vm *vm, bench_device *devs,
                   counting_mem *cm, const bench_expr *e, const bench_opts *o,
                   bench_result *res)
{
    dra_diag d;
    dra_diag_init(&d, NULL);
    dra_cel_program *p = NULL;
    double t0 = now_ns();
    dra_err err = dra_cel_compile(env, e->text, strlen(e->text), &p, &d);
    res->compile_us = (now_ns() - t0) / 1e3;
    if (err) {
        fprintf(stderr, "bench_cel: (%s) compile: %s: %s\n", e->id, dra_errname(err),
                dra_diag_first(&d) ? dra_diag_first(&d) : "");
        dra_diag_fini(&d);
        return -1;
    }
    dra_diag_fini(&d);

    /* The cost fingerprint: optimisations must keep cel-go's units. */
    res->cost_sum = 0;
    long m = run_evals(p, vm, devs, NDEVICES, &res->cost_sum);
    long warm = o->evals < 200000 ? o->evals : 200000;
    if (m < 0 || run_evals(p, vm, devs, warm, NULL) < 0) {
        dra_cel_program_unref(p);
        return -1;
    }
    res->matches = (int)m;

    double *t = calloc((size_t)o->rounds, sizeof *t);
    if (!t) {
        dra_cel_program_unref(p);
        return -1;
    }
    unsigned long dra0 = cm->allocs, heap0 = heap_allocs();
    volatile long sink = 0;
    for (long r = 0; r < o->rounds; r++) {
        double s = now_ns();
        sink += run_evals(p, vm, devs, o->evals, NULL);
        t[r] = (now_ns() - s) / (double)o->evals;
    }
    res->dra_allocs = cm->allocs - dra0;
    res->heap_allocs = heap_allocs() - heap0;
    (void)sink;
    qsort(t, (size_t)o->rounds, sizeof *t, cmp_double);
    res->ns = t[o->rounds / 2];
    free(t);
    dra_cel_program_unref(p);
    return 0;
}

static int parse_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v <= 0)
        return -1;
    *out = v;
    return 0;
}

static int parse_opts(int argc, char **argv, bench_opts *o)
{
    *o = (bench_opts){.evals = 1000000, .rounds = 3};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--tsv")) {
            o->tsv = 1;
        } else if (!strcmp(a, "--evals") && v) {
            if (parse_long(v, &o->evals))
                return -1;
            i++;
        } else if (!strcmp(a, "--rounds") && v) {
            if (parse_long(v, &o->rounds))
                return -1;
            i++;
        } else if (!strcmp(a, "--only") && v) {
            o->only = v;
            i++;
        } else {
            return -1;
        }
    }
    return 0;
}

static int selected(const bench_opts *o, const char *id)
{
    if (!o->only)
        return 1;
    size_t n = strlen(id);
    for (const char *s = o->only; *s;) {
        const char *c = strchr(s, ',');
        size_t len = c ? (size_t)(c - s) : strlen(s);
        if (len == n && !strncmp(s, id, n))
            return 1;
        s += len + (c != NULL);
    }
    return 0;
}

static void report(const bench_opts *o, const bench_expr *e, const bench_result *r)
{
    if (o->tsv) {
        printf("RESULT\tdra\t%s\t%.1f\t%.1f\t%d\t%lu\t%lu\n", e->id, r->ns, r->compile_us,
               r->matches, r->dra_allocs, r->heap_allocs);
        return;
    }
    printf("# (%s) %s\n  dra %9.1f ns/eval  compile %6.1f us  matches %d/%d  cost %llu  "
           "allocations during %ld evals: dra_mem %lu, heap %lu%s\n",
           e->id, e->text, r->ns, r->compile_us, r->matches, NDEVICES, r->cost_sum,
           o->evals * o->rounds, r->dra_allocs, r->heap_allocs,
           heap_counting_works() ? "" : " (heap not counted in this build)");
}

int main(int argc, char **argv)
{
    bench_opts o;
    if (parse_opts(argc, argv, &o)) {
        fprintf(stderr, "usage: bench_cel [--evals N] [--rounds N] [--only a,b] [--tsv]\n");
        return 2;
    }
    counting_mem cm;
    counting_mem_init(&cm);
    int rc = 1;
    dra_cel_env *env = NULL;
    dra_cel_vm *vm = NULL;
    bench_device *devs = calloc(NDEVICES, sizeof *devs);
    if (!devs)
        return 1;
    if (dra_cel_env_new_dra(&cm.mem, NULL, &env) || dra_cel_vm_new(&cm.mem, &vm)) {
        fprintf(stderr, "bench_cel: cannot create the CEL environment\n");
        goto out;
    }
    for (int i = 0; i < NDEVICES; i++) {
        dra_err err = bench_device_init(&devs[i], i, &cm.mem);
        if (err) {
            fprintf(stderr, "bench_cel: device %d: %s\n", i, dra_errname(err));
            goto out;
        }
    }
    int counting = heap_counting_works();
    if (!counting)
        printf("# heap allocations outside dra_mem are not counted in this build"
               " (sanitizer or non-glibc)\n");
    rc = 0;
    for (size_t k = 0; k < NEXPRS; k++) {
        if (!selected(&o, k_exprs[k].id))
            continue;
        bench_result r = {0};
        if (measure(env, vm, devs, &cm, &k_exprs[k], &o, &r)) {
            rc = 1;
            continue;
        }
        report(&o, &k_exprs[k], &r);
        if (r.dra_allocs || r.heap_allocs)
            rc = 1;
    }
out:
    for (int i = 0; i < NDEVICES; i++)
        dra_cel_prepared_free(devs[i].prep);
    free(devs);
    dra_cel_vm_free(vm);
    dra_cel_env_free(env);
    return rc;
}
