/*
 * discover.c: one NVML discovery pass, the calls NVIDIA's plugin makes
 * (nvlib.go getGpuInfo, getMigDevices; go-nvlib's profile walk) in the
 * same order and with the same tolerance: NOT_SUPPORTED and
 * INVALID_ARGUMENT skip a MIG profile, NOT_FOUND skips an empty MIG slot,
 * anything else fails the pass with the call and device named.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_int.h"

typedef struct pass {
    dra_gpu *g;
    const gpu_nvml *nv;
    dra_arena *a;
    dra_diag *d;
} pass;

static dra_err nv_fail(pass *p, nv_return rc, const char *fmt, unsigned idx)
{
    char buf[512], what[160];
    snprintf(what, sizeof what, fmt, idx);
    dra_diag_add(p->d, "", 0, 0, "%s: %s", what, gpu_nv_error(p->g, rc, buf, sizeof buf));
    return DRA_EIO;
}

#define NVCALL(call, fmt, idx)                              \
    do {                                                    \
        nv_return rc_ = (call);                             \
        if (rc_ != NV_SUCCESS)                              \
            return nv_fail(p, rc_, fmt, idx);               \
    } while (0)

static const char *arch_word(unsigned a)
{
    static const char *const w[] = {NULL, NULL, "Kepler", "Maxwell", "Pascal", "Volta",
                                    "Turing", "Ampere", "Ada Lovelace", "Hopper",
                                    "Blackwell"};
    if (a == NV_ARCH_UNKNOWN)
        return "Unknown";
    return a < sizeof w / sizeof *w ? w[a] : NULL;
}

static const char *brand_word(unsigned b)
{
    static const char *const w[] = {
        "Unknown", "Quadro", "Tesla", "NVS", "Grid", "GeForce", "Titan", "NvidiaVApps",
        "NvidiaVPC", "NvidiaVCS", "NvidiaVWS", "NvidiaCloudGaming", "QuadroRTX",
        "NvidiaRTX", "Nvidia", "GeForceRTX", "TitanRTX"};
    return b < sizeof w / sizeof *w ? w[b] : NULL;
}

/* go-nvlib GetPCIBusID: lower case, "00000000:" -> "0000:". */
static const char *bus_id(dra_arena *a, const char *nv)
{
    char *s = dra_arena_strdup(a, nv);
    if (!s)
        return NULL;
    for (char *c = s; *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c = (char)(*c - 'A' + 'a');
    if (strcmp(s, "0000") && !strncmp(s, "0000", 4))
        return s + 4;
    return s;
}

static dra_err gpu_profiles(pass *p, nv_device h, dra_gpu_device *gpu)
{
    const gpu_nvml *nv = p->nv;
    dra_gpu_mig_profile tmp[NV_GI_PROFILE_COUNT];
    size_t n = 0;
    for (unsigned i = 0; i < NV_GI_PROFILE_COUNT; i++) {
        nv_gi_profile_info info;
        nv_placement pl[16];
        unsigned cnt = 16;
        nv_return rc = nv->nvmlDeviceGetGpuInstanceProfileInfo(h, i, &info);
        if (rc == NV_ERROR_NOT_SUPPORTED || rc == NV_ERROR_INVALID_ARGUMENT)
            continue;
        if (rc != NV_SUCCESS)
            return nv_fail(p, rc, "error retrieving GpuInstanceProfileInfo for GPU %u", gpu->index);
        rc = nv->nvmlDeviceGetGpuInstancePossiblePlacements_v2(h, info.id, pl, &cnt);
        if (rc == NV_ERROR_NOT_SUPPORTED || rc == NV_ERROR_INVALID_ARGUMENT)
            continue;
        if (rc != NV_SUCCESS)
            return nv_fail(p, rc, "error retrieving GpuInstancePossiblePlacements for GPU %u",
                           gpu->index);
        int ci = gpu_ci_index(gpu_gi_slices(i));
        const char *name = gpu_profile_name(p->a, i, info.memory_mib, gpu->memory_bytes);
        if (ci < 0 || !name)
            continue;
        dra_gpu_mig_profile *m = &tmp[n++];
        memset(m, 0, sizeof *m);
        m->name = name;
        m->profile_index = i;
        m->gi_profile_id = info.id;
        m->ci_profile_index = (unsigned)ci;
        m->slice_count = info.slice_count;
        m->instance_count = info.instance_count;
        m->multiprocessors = info.multiprocessor_count;
        m->copy_engines = info.copy_engine_count;
        m->decoders = info.decoder_count;
        m->encoders = info.encoder_count;
        m->jpeg_engines = info.jpeg_count;
        m->ofa_engines = info.ofa_count;
        m->memory_mib = info.memory_mib;
        m->n_placements = cnt;
        m->placements = dra_arena_array(p->a, cnt ? cnt : 1, sizeof *m->placements);
        if (!m->placements)
            return DRA_ENOMEM;
        for (unsigned k = 0; k < cnt; k++) {
            m->placements[k].start = pl[k].start;
            m->placements[k].size = pl[k].size;
        }
    }
    gpu->n_profiles = n;
    gpu->profiles = dra_arena_array(p->a, n ? n : 1, sizeof *gpu->profiles);
    if (!gpu->profiles)
        return DRA_ENOMEM;
    memcpy(gpu->profiles, tmp, n * sizeof *tmp);
    return DRA_OK;
}

/* The profile of a MIG device: same GI profile id, and a C == G compute
 * instance profile (the 1-slice REV1 variant counts too) with its id. */
static const dra_gpu_mig_profile *match_profile(pass *p, dra_gpu_device *gpu,
                                                nv_gpu_instance gi, unsigned gi_pid,
                                                unsigned ci_pid)
{
    const dra_gpu_mig_profile *found = NULL;
    for (size_t i = 0; i < gpu->n_profiles; i++) {
        const dra_gpu_mig_profile *m = &gpu->profiles[i];
        if (m->gi_profile_id != gi_pid)
            continue;
        unsigned cis[2] = {m->ci_profile_index, NV_CI_PROFILE_1_SLICE_REV1};
        for (int k = 0; k < (m->ci_profile_index == NV_CI_PROFILE_1_SLICE ? 2 : 1); k++) {
            nv_ci_profile_info ci;
            if (p->nv->nvmlGpuInstanceGetComputeInstanceProfileInfo(
                    gi, cis[k], NV_CI_ENGINE_PROFILE_SHARED, &ci) == NV_SUCCESS &&
                ci.id == ci_pid)
                found = m;
        }
    }
    return found;
}

static dra_err one_mig(pass *p, nv_device h, nv_device mh, dra_gpu_device *gpu, dra_gpu_mig *m)
{
    const gpu_nvml *nv = p->nv;
    unsigned gi_id, ci_id, x = gpu->index;
    nv_gpu_instance gi;
    nv_compute_instance ci;
    nv_gi_info gii;
    nv_ci_info cii;
    char uuid[NV_UUID_BUFFER], dns[64];
    NVCALL(nv->nvmlDeviceGetGpuInstanceId(mh, &gi_id), "error getting GPU instance ID for MIG device of GPU %u", x);
    NVCALL(nv->nvmlDeviceGetGpuInstanceById(h, gi_id, &gi), "error getting GPU instance of GPU %u", x);
    NVCALL(nv->nvmlGpuInstanceGetInfo(gi, &gii), "error getting GPU instance info of GPU %u", x);
    NVCALL(nv->nvmlDeviceGetComputeInstanceId(mh, &ci_id), "error getting compute instance ID for MIG device of GPU %u", x);
    NVCALL(nv->nvmlGpuInstanceGetComputeInstanceById(gi, ci_id, &ci), "error getting compute instance of GPU %u", x);
    NVCALL(nv->nvmlComputeInstanceGetInfo_v2(ci, &cii), "error getting compute instance info of GPU %u", x);
    NVCALL(nv->nvmlDeviceGetUUID(mh, uuid, sizeof uuid), "error getting UUID for MIG device of GPU %u", x);
    m->profile = match_profile(p, gpu, gi, gii.profile_id, cii.profile_id);
    if (!m->profile) {
        dra_diag_add(p->d, "", 0, 0, "error getting profile info for MIG device: %s", uuid);
        return DRA_EINVALID;
    }
    m->uuid = dra_arena_strdup(p->a, uuid);
    m->parent = gpu;
    m->gi_id = gii.id;
    m->ci_id = cii.id;
    m->ci_profile_id = cii.profile_id;
    m->placement.start = gii.placement.start;
    m->placement.size = gii.placement.size;
    dra_gpu_profile_dns(m->profile->name, dns, sizeof dns);
    m->name = dra_arena_sprintf(p->a, "gpu-%u-mig-%s-%u-%u", gpu->minor, dns,
                                m->profile->gi_profile_id, gii.placement.start);
    return m->uuid && m->name ? DRA_OK : DRA_ENOMEM;
}

static int mig_cmp(const void *x, const void *y)
{
    return strcmp(((const dra_gpu_mig *)x)->name, ((const dra_gpu_mig *)y)->name);
}

static dra_err gpu_migs(pass *p, nv_device h, dra_gpu_device *gpu)
{
    unsigned max;
    NVCALL(p->nv->nvmlDeviceGetMaxMigDeviceCount(h, &max), "error getting max MIG device count for GPU %u",
           gpu->index);
    if (max > 64)
        max = 64;
    gpu->migs = dra_arena_array(p->a, max ? max : 1, sizeof *gpu->migs);
    if (!gpu->migs)
        return DRA_ENOMEM;
    for (unsigned i = 0; i < max; i++) {
        nv_device mh;
        nv_return rc = p->nv->nvmlDeviceGetMigDeviceHandleByIndex(h, i, &mh);
        if (rc == NV_ERROR_NOT_FOUND || rc == NV_ERROR_INVALID_ARGUMENT)
            continue;
        if (rc != NV_SUCCESS)
            return nv_fail(p, rc, "error getting MIG device handle of GPU %u", gpu->index);
        dra_err err = one_mig(p, h, mh, gpu, &gpu->migs[gpu->n_migs]);
        if (err)
            return err;
        gpu->n_migs++;
    }
    qsort(gpu->migs, gpu->n_migs, sizeof *gpu->migs, mig_cmp);
    return DRA_OK;
}

static dra_err gpu_strings(pass *p, nv_device h, dra_gpu_device *gpu)
{
    const gpu_nvml *nv = p->nv;
    unsigned x = gpu->index, arch, brand;
    int maj, min;
    char name[NV_NAME_BUFFER];
    NVCALL(nv->nvmlDeviceGetName(h, name, sizeof name), "error getting product name for device %u", x);
    NVCALL(nv->nvmlDeviceGetArchitecture(h, &arch), "error getting device architecture for device %u", x);
    NVCALL(nv->nvmlDeviceGetBrand(h, &brand), "error getting device brand for device %u", x);
    NVCALL(nv->nvmlDeviceGetCudaComputeCapability(h, &maj, &min),
           "error getting CUDA compute capability for device %u", x);
    gpu->product_name = dra_arena_strdup(p->a, name);
    gpu->architecture = arch_word(arch);
    gpu->brand = brand_word(brand);
    gpu->cuda_compute_capability = dra_arena_sprintf(p->a, "%d.%d", maj, min);
    if (!gpu->architecture || !gpu->brand) {
        dra_diag_add(p->d, "", 0, 0, "error interpreting device %s as string for device %u: %u",
                     gpu->brand ? "architecture" : "brand", x, gpu->brand ? arch : brand);
        return DRA_EIO;
    }
    return gpu->product_name && gpu->cuda_compute_capability ? DRA_OK : DRA_ENOMEM;
}

static dra_err gpu_addressing(pass *p, nv_device h, dra_gpu_device *gpu)
{
    nv_addressing_mode m = {NV_ADDRESSING_MODE_V1, 0};
    if (!p->nv->nvmlDeviceGetAddressingMode)
        return DRA_OK;
    nv_return rc = p->nv->nvmlDeviceGetAddressingMode(h, &m);
    if (rc == NV_ERROR_NOT_SUPPORTED)
        return DRA_OK;
    if (rc != NV_SUCCESS)
        return nv_fail(p, rc, "error getting addressing mode for device %u", gpu->index);
    static const char *const w[] = {"None", "HMM", "ATS"};
    if (m.value > 2) {
        dra_diag_add(p->d, "", 0, 0, "error interpreting addressing mode as string: %u", m.value);
        return DRA_EIO;
    }
    gpu->addressing_mode = w[m.value];
    return DRA_OK;
}

static dra_err one_gpu(pass *p, unsigned i, dra_gpu_device *gpu)
{
    const gpu_nvml *nv = p->nv;
    nv_device h;
    char uuid[NV_UUID_BUFFER];
    unsigned cur, pend;
    nv_memory mem;
    nv_pci_info pci;
    gpu->index = i;
    NVCALL(nv->nvmlDeviceGetHandleByIndex_v2(i, &h), "error getting handle for device %u", i);
    NVCALL(nv->nvmlDeviceGetMinorNumber(h, &gpu->minor), "error getting minor number for device %u", i);
    NVCALL(nv->nvmlDeviceGetUUID(h, uuid, sizeof uuid), "error getting UUID for device %u", i);
    nv_return rc = nv->nvmlDeviceGetMigMode(h, &cur, &pend);
    if (rc != NV_SUCCESS && rc != NV_ERROR_NOT_SUPPORTED)
        return nv_fail(p, rc, "error checking if MIG mode enabled for device %u", i);
    gpu->mig_capable = rc == NV_SUCCESS;
    gpu->mig_enabled = rc == NV_SUCCESS && cur == NV_MIG_ENABLE;
    NVCALL(nv->nvmlDeviceGetMemoryInfo(h, &mem), "error getting memory info for device %u", i);
    gpu->memory_bytes = mem.total;
    dra_err err = gpu_strings(p, h, gpu);
    if (err)
        return err;
    NVCALL(nv->nvmlDeviceGetPciInfo_v3(h, &pci), "error getting PCI info for device %u", i);
    pci.bus_id[sizeof pci.bus_id - 1] = 0;
    gpu->uuid = dra_arena_strdup(p->a, uuid);
    gpu->pci_bus_id = bus_id(p->a, pci.bus_id);
    gpu->name = dra_arena_sprintf(p->a, "gpu-%u", gpu->minor);
    if (!gpu->uuid || !gpu->pci_bus_id || !gpu->name)
        return DRA_ENOMEM;
    if ((err = gpu_addressing(p, h, gpu)) || (err = gpu_profiles(p, h, gpu)))
        return err;
    return gpu->mig_enabled ? gpu_migs(p, h, gpu) : DRA_OK;
}

static dra_err system_info(pass *p, dra_gpu_inventory *inv)
{
    char ver[NV_DRIVER_VERSION_BUFFER];
    int cuda;
    NVCALL(p->nv->nvmlSystemGetDriverVersion(ver, sizeof ver), "error getting driver version%.0u", 0);
    NVCALL(p->nv->nvmlSystemGetCudaDriverVersion(&cuda), "error getting CUDA driver version%.0u", 0);
    inv->driver_version = dra_arena_strdup(p->a, ver);
    inv->cuda_driver_version_raw = cuda;
    inv->cuda_driver_version = dra_arena_sprintf(p->a, "%d.%d", cuda / 1000, (cuda % 1000) / 10);
    return inv->driver_version && inv->cuda_driver_version ? DRA_OK : DRA_ENOMEM;
}

static dra_err walk(pass *p, dra_gpu_inventory *inv)
{
    unsigned n;
    dra_err err = system_info(p, inv);
    if (err)
        return err;
    NVCALL(p->nv->nvmlDeviceGetCount_v2(&n), "error getting device count%.0u", 0);
    if (n > 1024)
        n = 1024;
    inv->gpus = dra_arena_array(p->a, n ? n : 1, sizeof *inv->gpus);
    if (!inv->gpus)
        return DRA_ENOMEM;
    for (unsigned i = 0; i < n; i++) {
        if ((err = one_gpu(p, i, &inv->gpus[i])))
            return err;
        inv->n_gpus = i + 1;
    }
    return DRA_OK;
}

dra_err dra_gpu_discover(dra_gpu *g, dra_arena *a, dra_gpu_inventory **out, dra_diag *d)
{
    if (!g || !a || !out)
        return DRA_EINVAL;
    *out = NULL;
    pass p = {g, &g->nv, a, d};
    dra_gpu_inventory *inv = dra_arena_zalloc(a, sizeof *inv);
    if (!inv)
        return DRA_ENOMEM;
    nv_return rc = g->nv.nvmlInit_v2();
    if (rc != NV_SUCCESS) {
        char buf[512];
        dra_diag_add(d, "", 0, 0, "failed to initialize NVML (%s): %s", g->lib_path,
                     gpu_nv_error(g, rc, buf, sizeof buf));
        return DRA_EUNAVAILABLE;
    }
    dra_err err = walk(&p, inv);
    g->nv.nvmlShutdown();
    if (!err) {
        inv->nvml_path = dra_arena_strdup(a, g->lib_path);
        err = inv->nvml_path ? gpu_files_discover(g, a, inv) : DRA_ENOMEM;
    }
    if (!err)
        *out = inv;
    return err;
}

dra_err dra_gpu_find(const dra_gpu_inventory *inv, const char *name,
                     const dra_gpu_device **gpu, const dra_gpu_mig **mig)
{
    if (gpu)
        *gpu = NULL;
    if (mig)
        *mig = NULL;
    if (!inv || !name)
        return DRA_ENOTFOUND;
    for (size_t i = 0; i < inv->n_gpus; i++) {
        const dra_gpu_device *gd = &inv->gpus[i];
        size_t len = strlen(gd->name);
        if (strncmp(name, gd->name, len) || (name[len] && name[len] != '-'))
            continue;
        if (!name[len]) {
            if (gpu)
                *gpu = gd;
            return DRA_OK;
        }
        for (size_t j = 0; j < gd->n_migs; j++)
            if (!strcmp(gd->migs[j].name, name)) {
                if (gpu)
                    *gpu = gd;
                if (mig)
                    *mig = &gd->migs[j];
                return DRA_OK;
            }
    }
    return DRA_ENOTFOUND;
}
