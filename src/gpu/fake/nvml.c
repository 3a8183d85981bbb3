/*
 * fake/nvml.c: the NVML functions of the fake libnvidia-ml.so.1, served
 * from the inventory state.c loaded. Same ABI as the real library (the
 * declarations in nvml_abi.h): init counting, opaque handles, return
 * codes, buffer-size checks, MIG handles, GPU and compute instances, and
 * event sets fed by the control file. Every function can be made to fail
 * (DRA_FAKE_NVML_FAIL or the node's `fail:` map).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fake_int.h"

#define LOCK() pthread_mutex_lock(&fk_g.mu)
#define UNLOCK() pthread_mutex_unlock(&fk_g.mu)

/* Entry checks shared by every function but init: initialised, not told
 * to fail. Returns from the caller (unlocking) on failure. */
#define ENTER(name)                                                        \
    nv_return rc_ = NV_SUCCESS;                                            \
    LOCK();                                                                \
    if (fk_g.refs <= 0)                                                    \
        rc_ = NV_ERROR_UNINITIALIZED;                                      \
    else                                                                   \
        rc_ = fk_failpoint(name);                                          \
    if (rc_ != NV_SUCCESS) {                                               \
        UNLOCK();                                                          \
        return rc_;                                                        \
    }
#define LEAVE(rc)     \
    do {              \
        nv_return r_ = (rc); \
        UNLOCK();     \
        return r_;    \
    } while (0)

static nv_return put_str(char *buf, unsigned len, const char *s)
{
    if (!buf)
        return NV_ERROR_INVALID_ARGUMENT;
    if (strlen(s) + 1 > len)
        return NV_ERROR_INSUFFICIENT_SIZE;
    memcpy(buf, s, strlen(s) + 1);
    return NV_SUCCESS;
}

/* A lost or reset-needing GPU answers data queries with that error. */
static nv_return dev_ok(nv_device d)
{
    if (!d)
        return NV_ERROR_INVALID_ARGUMENT;
    int c = fk_condition(d->gpu);
    return c == FK_COND_LOST ? NV_ERROR_GPU_IS_LOST
           : c == FK_COND_RESET ? NV_ERROR_RESET_REQUIRED
                                : NV_SUCCESS;
}

FK_EXPORT const char *draFakeNvmlLastError(void);
const char *draFakeNvmlLastError(void)
{
    return fk_g.err;
}

FK_EXPORT nv_return nvmlInit_v2(void);
nv_return nvmlInit_v2(void)
{
    LOCK();
    nv_return rc = fk_failpoint("nvmlInit_v2");
    if (rc == NV_SUCCESS && fk_g.refs == 0)
        rc = fk_state_load();
    if (rc == NV_SUCCESS)
        fk_g.refs++;
    LEAVE(rc);
}

FK_EXPORT nv_return nvmlInit(void);
nv_return nvmlInit(void)
{
    return nvmlInit_v2();
}

FK_EXPORT nv_return nvmlShutdown(void);
nv_return nvmlShutdown(void)
{
    ENTER("nvmlShutdown");
    if (--fk_g.refs == 0)
        fk_state_free();
    LEAVE(NV_SUCCESS);
}

FK_EXPORT const char *nvmlErrorString(nv_return r);
const char *nvmlErrorString(nv_return r)
{
    switch (r) {
    case NV_SUCCESS: return "Success";
    case NV_ERROR_UNINITIALIZED: return "Uninitialized";
    case NV_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NV_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NV_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NV_ERROR_ALREADY_INITIALIZED: return "Already Initialized";
    case NV_ERROR_NOT_FOUND: return "Not Found";
    case NV_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NV_ERROR_INSUFFICIENT_POWER: return "Insufficient External Power";
    case NV_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NV_ERROR_TIMEOUT: return "Timeout";
    case NV_ERROR_IRQ_ISSUE: return "Interrupt Request Issue";
    case NV_ERROR_LIBRARY_NOT_FOUND: return "NVML Shared Library Not Found";
    case NV_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
    case NV_ERROR_CORRUPTED_INFOROM: return "Corrupted infoROM";
    case NV_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NV_ERROR_RESET_REQUIRED: return "GPU requires restart";
    case NV_ERROR_OPERATING_SYSTEM: return "GPU access blocked by the operating system";
    case NV_ERROR_LIB_RM_VERSION_MISMATCH: return "Driver/library version mismatch";
    case NV_ERROR_IN_USE: return "In use by another client";
    case NV_ERROR_MEMORY: return "Insufficient Memory";
    case NV_ERROR_NO_DATA: return "No data";
    default: return "Unknown Error";
    }
}

FK_EXPORT nv_return nvmlSystemGetDriverVersion(char *buf, unsigned int len);
nv_return nvmlSystemGetDriverVersion(char *buf, unsigned int len)
{
    ENTER("nvmlSystemGetDriverVersion");
    LEAVE(put_str(buf, len, fk_g.node->driver_version));
}

FK_EXPORT nv_return nvmlSystemGetCudaDriverVersion(int *v);
nv_return nvmlSystemGetCudaDriverVersion(int *v)
{
    ENTER("nvmlSystemGetCudaDriverVersion");
    if (!v)
        LEAVE(NV_ERROR_INVALID_ARGUMENT);
    *v = fk_g.node->cuda_version;
    LEAVE(NV_SUCCESS);
}

FK_EXPORT nv_return nvmlSystemGetCudaDriverVersion_v2(int *v);
nv_return nvmlSystemGetCudaDriverVersion_v2(int *v)
{
    return nvmlSystemGetCudaDriverVersion(v);
}

FK_EXPORT nv_return nvmlDeviceGetCount_v2(unsigned int *n);
nv_return nvmlDeviceGetCount_v2(unsigned int *n)
{
    ENTER("nvmlDeviceGetCount_v2");
    if (!n)
        LEAVE(NV_ERROR_INVALID_ARGUMENT);
    *n = (unsigned)fk_g.n_gpus;
    LEAVE(NV_SUCCESS);
}

FK_EXPORT nv_return nvmlDeviceGetCount(unsigned int *n);
nv_return nvmlDeviceGetCount(unsigned int *n)
{
    return nvmlDeviceGetCount_v2(n);
}

FK_EXPORT nv_return nvmlDeviceGetHandleByIndex_v2(unsigned int i, nv_device *d);
nv_return nvmlDeviceGetHandleByIndex_v2(unsigned int i, nv_device *d)
{
    ENTER("nvmlDeviceGetHandleByIndex_v2");
    if (!d || i >= fk_g.n_gpus)
        LEAVE(NV_ERROR_INVALID_ARGUMENT);
    *d = &fk_g.gpus[i].h;
    LEAVE(NV_SUCCESS);
}

FK_EXPORT nv_return nvmlDeviceGetHandleByIndex(unsigned int i, nv_device *d);
nv_return nvmlDeviceGetHandleByIndex(unsigned int i, nv_device *d)
{
    return nvmlDeviceGetHandleByIndex_v2(i, d);
}

FK_EXPORT nv_return nvmlDeviceGetHandleByUUID(const char *uuid, nv_device *d);
nv_return nvmlDeviceGetHandleByUUID(const char *uuid, nv_device *d)
{
    ENTER("nvmlDeviceGetHandleByUUID");
    if (!uuid || !d)
        LEAVE(NV_ERROR_INVALID_ARGUMENT);
    for (size_t i = 0; i < fk_g.n_gpus; i++) {
        fgpu *g = &fk_g.gpus[i];
        if (!strcmp(g->g->uuid, uuid)) {
            *d = &g->h;
            LEAVE(NV_SUCCESS);
        }
        for (size_t j = 0; j < g->n_migs; j++)
            if (!strcmp(g->migs[j].m->uuid, uuid)) {
                *d = &g->migs[j].h;
                LEAVE(NV_SUCCESS);
            }
    }
    LEAVE(NV_ERROR_NOT_FOUND);
}

FK_EXPORT nv_return nvmlDeviceGetIndex(nv_device d, unsigned int *i);
nv_return nvmlDeviceGetIndex(nv_device d, unsigned int *i)
{
    ENTER("nvmlDeviceGetIndex");
    if (!d || !i || d->is_mig)
        LEAVE(NV_ERROR_INVALID_ARGUMENT);
    *i = d->gpu->index;
    LEAVE(NV_SUCCESS);
}

FK_EXPORT nv_return nvmlDeviceGetMinorNumber(nv_device d, unsigned int *m);
nv_return nvmlDeviceGetMinorNumber(nv_device d, unsigned int *m)
{
    ENTER("nvmlDeviceGetMinorNumber");
    nv_return rc = dev_ok(d);
    if (rc == NV_SUCCESS && (!m || d->is_mig))
        rc = m ? NV_ERROR_NOT_SUPPORTED : NV_ERROR_INVALID_ARGUMENT;
    if (rc == NV_SUCCESS)
        *m = d->gpu->g->minor;
    LEAVE(rc);
}

FK_EXPORT nv_return nvmlDeviceGetUUID(nv_device d, char *buf, unsigned int len);
nv_return nvmlDeviceGetUUID(nv_device d, char *buf, unsigned int len)
{
    ENTER("nvmlDeviceGetUUID");
    /* The identity answers even for a GPU in a failed state (NVML keeps
     * it), so an XID can still be attributed to its GPU. */
    nv_return rc = d ? NV_SUCCESS : NV_ERROR_INVALID_ARGUMENT;
    if (rc == NV_SUCCESS)
        rc = put_str(buf, len, d->is_mig ? d->mig->m->uuid : d->gpu->g->uuid);
    LEAVE(rc);
}

FK_EXPORT nv_return nvmlDeviceGetName(nv_device d, char *buf, unsigned int len);
nv_return nvmlDeviceGetName(nv_device d, char *buf, unsigned int len)
{
    ENTER("nvmlDeviceGetName");
    nv_return rc = dev_ok(d);
    char name[NV_NAME_BUFFER * 2];
    if (rc == NV_SUCCESS) {
        if (d->is_mig)
            snprintf(name, sizeof name, "%s MIG %s", d->gpu->g->name,
                     d->mig->m->profile->name);
        else
            snprintf(name, sizeof name, "%s", d->gpu->g->name);
        rc = put_str(buf, len, name);
    }
    LEAVE(rc);
}

FK_EXPORT nv_return nvmlDeviceGetMemoryInfo(nv_device d, nv_memory *m);
nv_return nvmlDeviceGetMemoryInfo(nv_device d, nv_memory *m)
{
    ENTER("nvmlDeviceGetMemoryInfo");
    nv_return rc = dev_ok(d);
    if (rc == NV_SUCCESS && !m)
        rc = NV_ERROR_INVALID_ARGUMENT;
    if (rc == NV_SUCCESS) {
        /* An idle GPU: the driver reserves a little, like the real one. */
        m->total = d->is_mig ? d->mig->m->profile->memory_mib << 20 : d->gpu->g->memory_bytes;
        m->used = m->total / 200;
        m->free = m->total - m->used;
    }
    LEAVE(rc);
}

FK_EXPORT nv_return nvmlDeviceGetArchitecture(nv_device d, unsigned int *a);
nv_return nvmlDeviceGetArchitecture(nv_device d, unsigned int *a)
{
    ENTER("nvmlDeviceGetArchitecture");
    nv_return rc = dev_ok(d);
    if (rc == NV_SUCCESS && !a)
        rc = NV_ERROR_INVALID_ARGUMENT;
    if (rc == NV_SUCCESS)
        *a = d->gpu->g->arch_value;
    LEAVE(rc);
}

FK_EXPORT nv_return nvmlDeviceGetBrand(nv_device d, unsigned int *b);
nv_return nvmlDeviceGetBrand(nv_device d, unsigned int *b)
{
    ENTER("nvmlDeviceGetBrand");
    nv_return rc = dev_ok(d);
    if (rc == NV_SUCCESS && !b)
        rc = NV_ERROR_INVALID_ARGUMENT;
    if (rc == NV_SUCCESS)
        *b = d->gpu->g->brand_value;
    LEAVE(rc);
}

FK_EXPORT nv_return nvmlDeviceGetCudaComputeCapability(nv_device d, int *major, int *minor);
nv_return nvmlDeviceGetCudaComputeCapability(nv_device d, int *major, int *minor)
{
    ENTER("nvmlDeviceGetCudaComputeCapability");
    nv_return rc = dev_ok(d);
    if (rc == NV_SUCCESS && (!major || !minor))
        rc = NV_ERROR_INVALID_ARGUMENT;
    if (rc == NV_SUCCESS) {
        *major = d->gpu->g->cc_major;
        *minor = d->gpu->g->cc_minor;
    }
    LEAVE(rc);
}

FK_EXPORT nv_return nvmlDeviceGetPciInfo_v3(nv_device d, nv_pci_info *p);
nv_return nvmlDeviceGetPciInfo_v3(nv_device d, nv_pci_info *p)
{
    ENTER("nvmlDeviceGetPciInfo_v3");
    nv_return rc = dev_ok(d);
    if (rc == NV_SUCCESS && (!p || d->is_mig))
        rc = p ? NV_ERROR_NOT_SUPPORTED : NV_ERROR_INVALID_ARGUMENT;
    if (rc == NV_SUCCESS) {
        const fk_gpu *g = d->gpu->g;
        unsigned dom = 0, bus = 0, dev = 0, fn = 0;
        memset(p, 0, sizeof *p);
        sscanf(g->pci_bus_id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn);
        snprintf(p->bus_id, sizeof p->bus_id, "%s", g->pci_bus_id);
        snprintf(p->bus_id_legacy, sizeof p->bus_id_legacy, "%04X:%02X:%02X.0",
                 dom & 0xffff, bus, dev);
        p->domain = dom;
        p->bus = bus;
        p->device = dev;
        p->pci_device_id = g->pci_device_id;
    }
    LEAVE(rc);
}

FK_EXPORT nv_return nvmlDeviceGetAddressingMode(nv_device d, nv_addressing_mode *m);
nv_return nvmlDeviceGetAddressingMode(nv_device d, nv_addressing_mode *m)
{
    ENTER("nvmlDeviceGetAddressingMode");
    nv_return rc = dev_ok(d);
    if (rc == NV_SUCCESS && !m)
        rc = NV_ERROR_INVALID_ARGUMENT;
    else if (rc == NV_SUCCESS && m->version != NV_ADDRESSING_MODE_V1)
        rc = 25; /* NVML_ERROR_ARGUMENT_VERSION_MISMATCH */
    else if (rc == NV_SUCCESS && d->gpu->g->addressing_mode < 0)
        rc = NV_ERROR_NOT_SUPPORTED;
    if (rc == NV_SUCCESS)
        m->value = (unsigned)d->gpu->g->addressing_mode;
    LEAVE(rc);
}

FK_EXPORT nv_return nvmlDeviceGetMigMode(nv_device d, unsigned int *cur, unsigned int *pending);
nv_return nvmlDeviceGetMigMode(nv_device d, unsigned int *cur, unsigned int *pending)
{
    ENTER("nvmlDeviceGetMigMode");
    nv_return rc = dev_ok(d);
    if (rc == NV_SUCCESS && (!cur || !pending))
        rc = NV_ERROR_INVALID_ARGUMENT;
    else if (rc == NV_SUCCESS && (d->is_mig || !d->gpu->g->mig_capable))
        rc = NV_ERROR_NOT_SUPPORTED;
    if (rc == NV_SUCCESS)
        *cur = *pending = d->gpu->g->mig_enabled ? NV_MIG_ENABLE : NV_MIG_DISABLE;
    LEAVE(rc);
}

static const fk_profile *profile_by(const fk_gpu *g, int by_id, unsigned v)
{
    if (!g->mig_capable)
        return NULL;
    for (size_t i = 0; i < g->profiles->n; i++)
        if ((by_id ? g->profiles->v[i].id : g->profiles->v[i].index) == v)
            return &g->profiles->v[i];
    return NULL;
}

FK_EXPORT nv_return nvmlDeviceGetGpuInstanceProfileInfo(nv_device d, unsigned int profile,
                                                        nv_gi_profile_info *info);
nv_return nvmlDeviceGetGpuInstanceProfileInfo(nv_device d, unsigned int profile,
                                              nv_gi_profile_info *info)
{
    ENTER("nvmlDeviceGetGpuInstanceProfileInfo");
    nv_return rc = dev_ok(d);
    const fk_profile *p = NULL;
    if (rc == NV_SUCCESS && (!info || d->is_mig || profile >= NV_GI_PROFILE_COUNT))
        rc = NV_ERROR_INVALID_ARGUMENT;
    else if (rc == NV_SUCCESS && !(p = profile_by(d->gpu->g, 0, profile)))
        rc = NV_ERROR_NOT_SUPPORTED;
    if (rc == NV_SUCCESS) {
        memset(info, 0, sizeof *info);
        info->id = p->id;
        info->slice_count = p->slices;
        info->instance_count = p->instances;
        info->multiprocessor_count = p->multiprocessors;
        info->copy_engine_count = p->copy_engines;
        info->decoder_count = p->decoders;
        info->encoder_count = p->encoders;
        info->jpeg_count = p->jpeg_engines;
        info->ofa_count = p->ofa_engines;
        info->memory_mib = p->memory_mib;
    }
    LEAVE(rc);
}

FK_EXPORT nv_return nvmlDeviceGetGpuInstancePossiblePlacements_v2(nv_device d, unsigned int id,
                                                                  nv_placement *pl,
                                                                  unsigned int *count);
nv_return nvmlDeviceGetGpuInstancePossiblePlacements_v2(nv_device d, unsigned int id,
                                                        nv_placement *pl, unsigned int *count)
{
    ENTER("nvmlDeviceGetGpuInstancePossiblePlacements_v2");
    nv_return rc = dev_ok(d);
    const fk_profile *p = NULL;
    if (rc == NV_SUCCESS && (!count || d->is_mig))
        rc = NV_ERROR_INVALID_ARGUMENT;
    else if (rc == NV_SUCCESS && !(p = profile_by(d->gpu->g, 1, id)))
        rc = NV_ERROR_NOT_SUPPORTED;
    if (rc == NV_SUCCESS && pl && *count < p->n_starts)
        rc = NV_ERROR_INSUFFICIENT_SIZE;
    if (rc == NV_SUCCESS && pl)
        for (size_t i = 0; i < p->n_starts; i++) {
            pl[i].start = p->starts[i];
            pl[i].size = p->placement_size;
        }
    if (rc == NV_SUCCESS || rc == NV_ERROR_INSUFFICIENT_SIZE)
        *count = (unsigned)p->n_starts;
    LEAVE(rc);
}

FK_EXPORT nv_return nvmlDeviceGetMaxMigDeviceCount(nv_device d, unsigned int *n);
nv_return nvmlDeviceGetMaxMigDeviceCount(nv_device d, unsigned int *n)
{
    ENTER("nvmlDeviceGetMaxMigDeviceCount");
    nv_return rc = dev_ok(d);
    if (rc == NV_SUCCESS && (!n || d->is_mig))
        rc = NV_ERROR_INVALID_ARGUMENT;
    if (rc == NV_SUCCESS)
        *n = d->gpu->g->mig_capable ? d->gpu->g->max_mig_devices : 0;
    LEAVE(rc);
}

FK_EXPORT nv_return nvmlDeviceGetMigDeviceHandleByIndex(nv_device d, unsigned int i, nv_device *out);
nv_return nvmlDeviceGetMigDeviceHandleByIndex(nv_device d, unsigned int i, nv_device *out)
{
    ENTER("nvmlDeviceGetMigDeviceHandleByIndex");
    nv_return rc = dev_ok(d);
    if (rc == NV_SUCCESS && (!out || d->is_mig || !d->gpu->g->mig_capable ||
                             i >= d->gpu->g->max_mig_devices))
        rc = NV_ERROR_INVALID_ARGUMENT;
    else if (rc == NV_SUCCESS && i >= d->gpu->n_migs)
        rc = NV_ERROR_NOT_FOUND;
    if (rc == NV_SUCCESS)
        *out = &d->gpu->migs[i].h;
    LEAVE(rc);
}

FK_EXPORT nv_return nvmlDeviceIsMigDeviceHandle(nv_device d, unsigned int *is);
nv_return nvmlDeviceIsMigDeviceHandle(nv_device d, unsigned int *is)
{
    ENTER("nvmlDeviceIsMigDeviceHandle");
    if (!d || !is)
        LEAVE(NV_ERROR_INVALID_ARGUMENT);
    *is = (unsigned)d->is_mig;
    LEAVE(NV_SUCCESS);
}

FK_EXPORT nv_return nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nv_device d, nv_device *out);
nv_return nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nv_device d, nv_device *out)
{
    ENTER("nvmlDeviceGetDeviceHandleFromMigDeviceHandle");
    if (!d || !out || !d->is_mig)
        LEAVE(NV_ERROR_INVALID_ARGUMENT);
    *out = &d->gpu->h;
    LEAVE(NV_SUCCESS);
}

FK_EXPORT nv_return nvmlDeviceGetGpuInstanceId(nv_device d, unsigned int *id);
nv_return nvmlDeviceGetGpuInstanceId(nv_device d, unsigned int *id)
{
    ENTER("nvmlDeviceGetGpuInstanceId");
    if (!d || !id)
        LEAVE(NV_ERROR_INVALID_ARGUMENT);
    if (!d->is_mig)
        LEAVE(NV_ERROR_NOT_SUPPORTED);
    *id = d->mig->m->gi;
    LEAVE(NV_SUCCESS);
}

FK_EXPORT nv_return nvmlDeviceGetComputeInstanceId(nv_device d, unsigned int *id);
nv_return nvmlDeviceGetComputeInstanceId(nv_device d, unsigned int *id)
{
    ENTER("nvmlDeviceGetComputeInstanceId");
    if (!d || !id)
        LEAVE(NV_ERROR_INVALID_ARGUMENT);
    if (!d->is_mig)
        LEAVE(NV_ERROR_NOT_SUPPORTED);
    *id = d->mig->m->ci;
    LEAVE(NV_SUCCESS);
}

FK_EXPORT nv_return nvmlDeviceGetGpuInstanceById(nv_device d, unsigned int id, nv_gpu_instance *gi);
nv_return nvmlDeviceGetGpuInstanceById(nv_device d, unsigned int id, nv_gpu_instance *gi)
{
    ENTER("nvmlDeviceGetGpuInstanceById");
    if (!d || !gi || d->is_mig)
        LEAVE(NV_ERROR_INVALID_ARGUMENT);
    if (!d->gpu->g->mig_enabled)
        LEAVE(NV_ERROR_NOT_SUPPORTED);
    for (size_t i = 0; i < d->gpu->n_migs; i++)
        if (d->gpu->migs[i].m->gi == id) {
            *gi = &d->gpu->migs[i].gi;
            LEAVE(NV_SUCCESS);
        }
    LEAVE(NV_ERROR_NOT_FOUND);
}

FK_EXPORT nv_return nvmlGpuInstanceGetInfo(nv_gpu_instance gi, nv_gi_info *info);
nv_return nvmlGpuInstanceGetInfo(nv_gpu_instance gi, nv_gi_info *info)
{
    ENTER("nvmlGpuInstanceGetInfo");
    if (!gi || !info)
        LEAVE(NV_ERROR_INVALID_ARGUMENT);
    const fk_mig *m = gi->mig->m;
    memset(info, 0, sizeof *info);
    info->device = &gi->mig->h.gpu->h;
    info->id = m->gi;
    info->profile_id = m->profile->id;
    info->placement.start = m->start;
    info->placement.size = m->profile->placement_size;
    LEAVE(NV_SUCCESS);
}

FK_EXPORT nv_return nvmlGpuInstanceGetComputeInstanceById(nv_gpu_instance gi, unsigned int id,
                                                          nv_compute_instance *ci);
nv_return nvmlGpuInstanceGetComputeInstanceById(nv_gpu_instance gi, unsigned int id,
                                                nv_compute_instance *ci)
{
    ENTER("nvmlGpuInstanceGetComputeInstanceById");
    if (!gi || !ci)
        LEAVE(NV_ERROR_INVALID_ARGUMENT);
    if (gi->mig->m->ci != id)
        LEAVE(NV_ERROR_NOT_FOUND);
    *ci = &gi->mig->ci;
    LEAVE(NV_SUCCESS);
}

/* Compute slices of each NVML compute instance profile index. */
static const unsigned ci_slices[NV_CI_PROFILE_COUNT] = {1, 2, 3, 4, 7, 8, 6, 1};

static unsigned ci_index_for(unsigned slices)
{
    for (unsigned i = 0; i < NV_CI_PROFILE_1_SLICE_REV1; i++)
        if (ci_slices[i] == slices)
            return i;
    return 0;
}

FK_EXPORT nv_return nvmlComputeInstanceGetInfo_v2(nv_compute_instance ci, nv_ci_info *info);
nv_return nvmlComputeInstanceGetInfo_v2(nv_compute_instance ci, nv_ci_info *info)
{
    ENTER("nvmlComputeInstanceGetInfo_v2");
    if (!ci || !info)
        LEAVE(NV_ERROR_INVALID_ARGUMENT);
    const fk_mig *m = ci->mig->m;
    memset(info, 0, sizeof *info);
    info->device = &ci->mig->h.gpu->h;
    info->gpu_instance = &ci->mig->gi;
    info->id = m->ci;
    info->profile_id = ci_index_for(m->profile->slices); /* the full-size CI */
    info->placement.start = 0;
    info->placement.size = m->profile->slices;
    LEAVE(NV_SUCCESS);
}

FK_EXPORT nv_return nvmlComputeInstanceGetInfo(nv_compute_instance ci, nv_ci_info *info);
nv_return nvmlComputeInstanceGetInfo(nv_compute_instance ci, nv_ci_info *info)
{
    return nvmlComputeInstanceGetInfo_v2(ci, info);
}

FK_EXPORT nv_return nvmlGpuInstanceGetComputeInstanceProfileInfo(nv_gpu_instance gi,
                                                                 unsigned int profile,
                                                                 unsigned int eng,
                                                                 nv_ci_profile_info *info);
nv_return nvmlGpuInstanceGetComputeInstanceProfileInfo(nv_gpu_instance gi, unsigned int profile,
                                                       unsigned int eng, nv_ci_profile_info *info)
{
    ENTER("nvmlGpuInstanceGetComputeInstanceProfileInfo");
    if (!gi || !info || profile >= NV_CI_PROFILE_COUNT || eng >= NV_CI_ENGINE_PROFILE_COUNT)
        LEAVE(NV_ERROR_INVALID_ARGUMENT);
    const fk_profile *p = gi->mig->m->profile;
    /* Compute instances of the GI's size and smaller; REV1 is not offered. */
    if (profile == NV_CI_PROFILE_1_SLICE_REV1 || ci_slices[profile] > p->slices)
        LEAVE(NV_ERROR_NOT_SUPPORTED);
    unsigned s = ci_slices[profile];
    memset(info, 0, sizeof *info);
    info->id = profile;
    info->slice_count = s;
    info->instance_count = p->slices / s;
    info->multiprocessor_count = p->multiprocessors * s / p->slices;
    info->shared_copy_engine_count = p->copy_engines;
    info->shared_decoder_count = p->decoders;
    info->shared_encoder_count = p->encoders;
    info->shared_jpeg_count = p->jpeg_engines;
    info->shared_ofa_count = p->ofa_engines;
    LEAVE(NV_SUCCESS);
}

FK_EXPORT nv_return nvmlEventSetCreate(nv_event_set *set);
nv_return nvmlEventSetCreate(nv_event_set *set)
{
    ENTER("nvmlEventSetCreate");
    if (!set)
        LEAVE(NV_ERROR_INVALID_ARGUMENT);
    struct nv_event_set_st *s = calloc(1, sizeof *s);
    if (!s)
        LEAVE(NV_ERROR_MEMORY);
    /* Events raised before the set existed are not delivered. */
    struct stat st;
    if (fk_g.events[0] && stat(fk_g.events, &st) == 0)
        s->offset = (long)st.st_size;
    *set = s;
    LEAVE(NV_SUCCESS);
}

FK_EXPORT nv_return nvmlEventSetFree(nv_event_set set);
nv_return nvmlEventSetFree(nv_event_set set)
{
    ENTER("nvmlEventSetFree");
    if (!set)
        LEAVE(NV_ERROR_INVALID_ARGUMENT);
    free(set);
    LEAVE(NV_SUCCESS);
}

FK_EXPORT nv_return nvmlDeviceGetSupportedEventTypes(nv_device d, unsigned long long *types);
nv_return nvmlDeviceGetSupportedEventTypes(nv_device d, unsigned long long *types)
{
    ENTER("nvmlDeviceGetSupportedEventTypes");
    nv_return rc = dev_ok(d);
    if (rc == NV_SUCCESS && (!types || d->is_mig))
        rc = NV_ERROR_INVALID_ARGUMENT;
    if (rc == NV_SUCCESS)
        *types = NV_EVENT_XID_CRITICAL | NV_EVENT_DOUBLE_BIT_ECC | NV_EVENT_SINGLE_BIT_ECC;
    LEAVE(rc);
}

FK_EXPORT nv_return nvmlDeviceRegisterEvents(nv_device d, unsigned long long types, nv_event_set set);
nv_return nvmlDeviceRegisterEvents(nv_device d, unsigned long long types, nv_event_set set)
{
    ENTER("nvmlDeviceRegisterEvents");
    nv_return rc = dev_ok(d);
    if (rc == NV_SUCCESS && (!set || d->is_mig))
        rc = NV_ERROR_INVALID_ARGUMENT;
    if (rc == NV_SUCCESS)
        set->mask[d->gpu->index] |= types;
    LEAVE(rc);
}

FK_EXPORT nv_return nvmlEventSetWait_v2(nv_event_set set, nv_event_data *data, unsigned int ms);
nv_return nvmlEventSetWait_v2(nv_event_set set, nv_event_data *data, unsigned int ms)
{
    struct timespec start, now, nap = {0, 10 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        ENTER("nvmlEventSetWait_v2");
        if (!set || !data)
            LEAVE(NV_ERROR_INVALID_ARGUMENT);
        nv_return rc = fk_events_next(set, data);
        UNLOCK();
        if (rc != NV_ERROR_TIMEOUT)
            return rc;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long el = (now.tv_sec - start.tv_sec) * 1000LL +
                       (now.tv_nsec - start.tv_nsec) / 1000000;
        if (el >= (long long)ms)
            return NV_ERROR_TIMEOUT;
        nanosleep(&nap, NULL);
    }
}

FK_EXPORT nv_return nvmlEventSetWait(nv_event_set set, nv_event_data *data, unsigned int ms);
nv_return nvmlEventSetWait(nv_event_set set, nv_event_data *data, unsigned int ms)
{
    return nvmlEventSetWait_v2(set, data, ms);
}
