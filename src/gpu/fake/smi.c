/*
 * fake/smi.c: the fake nvidia-smi a fake driver root ships, a program on
 * top of NVML like the real one: libnvidia-ml.so.1 through the normal
 * loader search, then below the driver root it was installed in. It
 * implements `-L` and `--query-gpu=... --format=csv[,noheader][,nounits]`
 * with the real tool's output, and accepts the two settings NVIDIA's
 * plugin runs (`-i ID -c MODE`, `compute-policy -i ID --set-timeslice N`).
 * Indexes count the GPUs this process can see, from 0, as the real one.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../nvml_abi.h"

#define SMI_FUNCS(X)                                                            \
    X(nvmlInit_v2, nv_return, (void))                                           \
    X(nvmlShutdown, nv_return, (void))                                          \
    X(nvmlErrorString, const char *, (nv_return))                               \
    X(nvmlSystemGetDriverVersion, nv_return, (char *, unsigned int))            \
    X(nvmlDeviceGetCount_v2, nv_return, (unsigned int *))                       \
    X(nvmlDeviceGetHandleByIndex_v2, nv_return, (unsigned int, nv_device *))    \
    X(nvmlDeviceGetHandleByUUID, nv_return, (const char *, nv_device *))        \
    X(nvmlDeviceGetUUID, nv_return, (nv_device, char *, unsigned int))          \
    X(nvmlDeviceGetName, nv_return, (nv_device, char *, unsigned int))          \
    X(nvmlDeviceGetMemoryInfo, nv_return, (nv_device, nv_memory *))             \
    X(nvmlDeviceGetPciInfo_v3, nv_return, (nv_device, nv_pci_info *))           \
    X(nvmlDeviceGetMigMode, nv_return, (nv_device, unsigned int *, unsigned int *)) \
    X(nvmlDeviceGetCudaComputeCapability, nv_return, (nv_device, int *, int *))  \
    X(nvmlDeviceGetMaxMigDeviceCount, nv_return, (nv_device, unsigned int *))   \
    X(nvmlDeviceGetMigDeviceHandleByIndex, nv_return, (nv_device, unsigned int, nv_device *))

typedef struct smi {
#define X(name, ret, args) ret(*name) args;
    SMI_FUNCS(X)
#undef X
    unsigned count;
} smi;

#define EXIT_NVML 9 /* the real tool's "couldn't communicate with the driver" */

static void *open_in(const char *dir)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/libnvidia-ml.so.1", dir);
    void *h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
    if (h)
        return h;
    /* Only the versioned file may be mounted (libnvidia-ml.so.<version>). */
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && !h && (e = readdir(d)))
        if (!strncmp(e->d_name, "libnvidia-ml.so.", 16) && e->d_name[16] >= '0' &&
            e->d_name[16] <= '9') {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
        }
    if (d)
        closedir(d);
    return h;
}

/* The loader's search first, then the driver root's library directories
 * (NVIDIA's list) relative to where this binary is installed. */
static void *open_nvml(void)
{
    static const char *const libdirs[] = {
        "", "/usr/lib64", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
        "/lib64", "/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu"};
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    char exe[PATH_MAX], dir[PATH_MAX + 64];
    if (h || !realpath("/proc/self/exe", exe))
        return h;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return NULL;
    *slash = 0; /* exe is now the binary's directory */
    if ((h = open_in(exe)))
        return h;
    /* <root>/usr/bin or <root>/bin: try both parents as the root. */
    for (int up = 0; up < 2 && !h; up++) {
        if (!(slash = strrchr(exe, '/')))
            break;
        *slash = 0;
        for (size_t i = 0; i < sizeof libdirs / sizeof *libdirs && !h; i++) {
            snprintf(dir, sizeof dir, "%s%s", exe, libdirs[i]);
            h = open_in(dir[0] ? dir : "/");
        }
    }
    return h;
}

static int load(smi *s, void **handle)
{
    void *h = open_nvml();
    if (!h)
        goto fail;
#define X(name, ret, args)                                   \
    *(void **)(&s->name) = dlsym(h, #name);                  \
    if (!s->name)                                            \
        goto fail;
    SMI_FUNCS(X)
#undef X
    if (s->nvmlInit_v2() != NV_SUCCESS)
        goto fail;
    if (s->nvmlDeviceGetCount_v2(&s->count) != NV_SUCCESS)
        s->count = 0;
    *handle = h;
    return 0;
fail:
    printf("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
           "driver. Make sure that the latest NVIDIA driver is installed and running.\n\n");
    if (h)
        dlclose(h);
    return -1;
}

static void unload(smi *s, void *h)
{
    s->nvmlShutdown();
    dlclose(h);
}

static int no_devices(const smi *s)
{
    if (s->count)
        return 0;
    printf("No devices were found\n");
    return 1;
}

/* "NVIDIA H100 80GB HBM3 MIG 1g.10gb" -> "1g.10gb". */
static const char *mig_profile(const char *name)
{
    const char *p = strstr(name, "MIG ");
    const char *last = p;
    while (p && (p = strstr(p + 1, "MIG ")))
        last = p;
    return last ? last + 4 : name;
}

static void list_migs(const smi *s, nv_device gpu)
{
    unsigned cur, pend, max = 0, shown = 0;
    if (s->nvmlDeviceGetMigMode(gpu, &cur, &pend) != NV_SUCCESS || cur != NV_MIG_ENABLE ||
        s->nvmlDeviceGetMaxMigDeviceCount(gpu, &max) != NV_SUCCESS)
        return;
    for (unsigned i = 0; i < max; i++) {
        nv_device mig;
        char name[NV_NAME_BUFFER], uuid[NV_UUID_BUFFER];
        if (s->nvmlDeviceGetMigDeviceHandleByIndex(gpu, i, &mig) != NV_SUCCESS ||
            s->nvmlDeviceGetName(mig, name, sizeof name) != NV_SUCCESS ||
            s->nvmlDeviceGetUUID(mig, uuid, sizeof uuid) != NV_SUCCESS)
            continue;
        printf("  MIG %-11s Device %2u: (UUID: %s)\n", mig_profile(name), shown++, uuid);
    }
}

static int cmd_list(const smi *s)
{
    if (no_devices(s))
        return 6;
    int rc = 0;
    for (unsigned i = 0; i < s->count; i++) {
        nv_device d;
        char name[NV_NAME_BUFFER], uuid[NV_UUID_BUFFER];
        nv_return r = s->nvmlDeviceGetHandleByIndex_v2(i, &d);
        if (r == NV_SUCCESS)
            r = s->nvmlDeviceGetName(d, name, sizeof name);
        if (r == NV_SUCCESS)
            r = s->nvmlDeviceGetUUID(d, uuid, sizeof uuid);
        if (r != NV_SUCCESS) {
            printf("Unable to determine the device handle for GPU%u: %s\n", i,
                   s->nvmlErrorString(r));
            rc = 15;
            continue;
        }
        printf("GPU %u: %s (UUID: %s)\n", i, name, uuid);
        list_migs(s, d);
    }
    return rc;
}

typedef struct qfmt {
    int header, units;
} qfmt;

/* One field of one GPU into |out|; 0, or -1 for an unknown field. */
static int field(const smi *s, unsigned idx, nv_device d, const char *f, const qfmt *q,
                 char *out, size_t size)
{
    nv_memory m;
    nv_pci_info pci;
    unsigned cur, pend;
    int maj, min;
    char buf[NV_NAME_BUFFER];
    const char *mib = q->units ? " MiB" : "";
    nv_return r = NV_SUCCESS;
    if (!strcmp(f, "index"))
        snprintf(out, size, "%u", idx);
    else if (!strcmp(f, "count"))
        snprintf(out, size, "%u", s->count);
    else if (!strcmp(f, "uuid") || !strcmp(f, "gpu_uuid"))
        r = s->nvmlDeviceGetUUID(d, out, (unsigned)size);
    else if (!strcmp(f, "name") || !strcmp(f, "gpu_name"))
        r = s->nvmlDeviceGetName(d, out, (unsigned)size);
    else if (!strcmp(f, "driver_version"))
        r = s->nvmlSystemGetDriverVersion(out, (unsigned)size);
    else if (!strncmp(f, "memory.", 7) &&
             (!strcmp(f + 7, "total") || !strcmp(f + 7, "used") || !strcmp(f + 7, "free"))) {
        if ((r = s->nvmlDeviceGetMemoryInfo(d, &m)) == NV_SUCCESS)
            snprintf(out, size, "%llu%s",
                     (f[7] == 't' ? m.total : f[7] == 'u' ? m.used : m.free) >> 20, mib);
    } else if (!strcmp(f, "pci.bus_id") || !strcmp(f, "gpu_bus_id")) {
        if ((r = s->nvmlDeviceGetPciInfo_v3(d, &pci)) == NV_SUCCESS)
            snprintf(out, size, "%s", pci.bus_id);
    } else if (!strcmp(f, "mig.mode.current")) {
        r = s->nvmlDeviceGetMigMode(d, &cur, &pend);
        snprintf(out, size, "%s", r == NV_ERROR_NOT_SUPPORTED ? "[N/A]"
                                  : cur == NV_MIG_ENABLE      ? "Enabled"
                                                              : "Disabled");
        r = NV_SUCCESS;
    } else if (!strcmp(f, "compute_cap")) {
        if ((r = s->nvmlDeviceGetCudaComputeCapability(d, &maj, &min)) == NV_SUCCESS)
            snprintf(out, size, "%d.%d", maj, min);
    } else
        return -1;
    if (r != NV_SUCCESS) {
        snprintf(buf, sizeof buf, "[%s]", s->nvmlErrorString(r));
        snprintf(out, size, "%s", buf);
    }
    return 0;
}

static int parse_format(const char *fmt, qfmt *q)
{
    char copy[128];
    q->header = q->units = 1;
    snprintf(copy, sizeof copy, "%s", fmt ? fmt : "");
    char *save = NULL;
    int csv = 0;
    for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (!strcmp(w, "csv"))
            csv = 1;
        else if (!strcmp(w, "noheader"))
            q->header = 0;
        else if (!strcmp(w, "nounits"))
            q->units = 0;
        else
            return -1;
    }
    return csv ? 0 : -1;
}

static int cmd_query(const smi *s, const char *fields, const char *fmt)
{
    qfmt q;
    char copy[1024], *names[32];
    size_t n = 0;
    if (parse_format(fmt, &q)) {
        printf("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n\n");
        return 2;
    }
    snprintf(copy, sizeof copy, "%s", fields);
    char *save = NULL;
    for (char *w = strtok_r(copy, ",", &save); w && n < 32; w = strtok_r(NULL, ",", &save))
        names[n++] = w + strspn(w, " ");
    for (size_t i = 0; i < n; i++) {
        char out[256];
        if (field(s, 0, NULL, names[i], &q, out, sizeof out) < 0) {
            printf("Field \"%s\" is not a valid field to query.\n\n", names[i]);
            return 2;
        }
    }
    if (no_devices(s))
        return 6;
    for (size_t i = 0; q.header && i < n; i++)
        printf("%s%s%s", i ? ", " : "", names[i],
               q.units && !strncmp(names[i], "memory.", 7) ? " [MiB]" : "");
    if (q.header)
        printf("\n");
    for (unsigned g = 0; g < s->count; g++) {
        nv_device d;
        if (s->nvmlDeviceGetHandleByIndex_v2(g, &d) != NV_SUCCESS)
            continue;
        for (size_t i = 0; i < n; i++) {
            char out[256];
            field(s, g, d, names[i], &q, out, sizeof out);
            printf("%s%s", i ? ", " : "", out);
        }
        printf("\n");
    }
    return 0;
}

/* -i accepts an index or a UUID, like the real tool. */
static int resolve(const smi *s, const char *id, nv_device *d, char *bus, size_t size)
{
    char *end;
    unsigned long i = strtoul(id, &end, 10);
    nv_return r = (*id && !*end) ? s->nvmlDeviceGetHandleByIndex_v2((unsigned)i, d)
                                 : s->nvmlDeviceGetHandleByUUID(id, d);
    nv_pci_info pci;
    if (r == NV_SUCCESS)
        r = s->nvmlDeviceGetPciInfo_v3(*d, &pci);
    if (r != NV_SUCCESS) {
        printf("No devices were found\n");
        return -1;
    }
    snprintf(bus, size, "%s", pci.bus_id);
    return 0;
}

static int cmd_set(const smi *s, const char *id, const char *mode, const char *slice)
{
    nv_device d;
    char bus[NV_PCI_BUS_ID];
    if (!id || resolve(s, id, &d, bus, sizeof bus))
        return 6;
    if (mode) {
        if (strcmp(mode, "DEFAULT") && strcmp(mode, "EXCLUSIVE_PROCESS") &&
            strcmp(mode, "PROHIBITED") && strcmp(mode, "0") && strcmp(mode, "2") &&
            strcmp(mode, "3")) {
            printf("Invalid compute mode: %s\n", mode);
            return 2;
        }
        printf("Set compute mode to %s for GPU %s.\nAll done.\n", mode, bus);
    }
    if (slice) {
        char *end;
        long v = strtol(slice, &end, 10);
        if (*end || v < 0 || v > 3) {
            printf("Invalid timeslice value: %s\n", slice);
            return 2;
        }
        printf("Set timeslice to %ld for GPU %s.\nAll done.\n", v, bus);
    }
    return 0;
}

static void usage(void)
{
    printf("NVIDIA System Management Interface (fake, for tests; see docs/gpu.md)\n\n"
           "    nvidia-smi -L\n"
           "    nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv[,noheader][,nounits]\n"
           "    nvidia-smi -i ID -c DEFAULT|EXCLUSIVE_PROCESS|PROHIBITED\n"
           "    nvidia-smi compute-policy -i ID --set-timeslice 0..3\n");
}

typedef struct args {
    int list, policy;
    const char *query, *format, *id, *mode, *slice;
} args;

/* Takes "--opt=value" or "--opt value"; 1 when |argv[*i]| is |opt|. */
static int opt_value(int argc, char **argv, int *i, const char *opt, const char **out)
{
    size_t n = strlen(opt);
    if (strncmp(argv[*i], opt, n))
        return 0;
    if (argv[*i][n] == '=') {
        *out = argv[*i] + n + 1;
        return 1;
    }
    if (argv[*i][n] || *i + 1 >= argc)
        return 0;
    *out = argv[++*i];
    return 1;
}

static int parse_args(int argc, char **argv, args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-L") || !strcmp(argv[i], "--list-gpus"))
            a->list = 1;
        else if (i == 1 && !strcmp(argv[i], "compute-policy"))
            a->policy = 1;
        else if (!opt_value(argc, argv, &i, "--query-gpu", &a->query) &&
                 !opt_value(argc, argv, &i, "--format", &a->format) &&
                 !opt_value(argc, argv, &i, "-i", &a->id) &&
                 !opt_value(argc, argv, &i, "--id", &a->id) &&
                 !opt_value(argc, argv, &i, "-c", &a->mode) &&
                 !opt_value(argc, argv, &i, "--compute-mode", &a->mode) &&
                 !opt_value(argc, argv, &i, "--set-timeslice", &a->slice))
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    args a;
    smi s;
    void *h;
    if (parse_args(argc, argv, &a) || (!a.list && !a.query && !a.mode && !a.slice)) {
        usage();
        return argc > 1 ? 2 : 0;
    }
    if (load(&s, &h))
        return EXIT_NVML;
    int rc;
    if (a.list)
        rc = cmd_list(&s);
    else if (a.query)
        rc = cmd_query(&s, a.query, a.format);
    else
        rc = cmd_set(&s, a.id, a.mode, a.policy ? a.slice : NULL);
    fflush(stdout);
    unload(&s, h);
    return rc;
}
