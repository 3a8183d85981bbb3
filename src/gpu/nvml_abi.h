/*
 * nvml_abi.h: the part of NVML's C ABI this project uses, declared from
 * NVML's documented API (return codes, opaque handles, structs with their
 * exact layout, constants). No nvml.h exists on the build machines, and
 * NVML itself is only ever reached through dlopen/dlsym. Shared by the
 * gpu module (the caller), the fake libnvidia-ml.so.1 (the callee) and the
 * fake nvidia-smi.
 */
#ifndef DRA_GPU_NVML_ABI_H
#define DRA_GPU_NVML_ABI_H

/* nvmlReturn_t (an int-sized C enum). */
typedef int nv_return;
#define NV_SUCCESS 0
#define NV_ERROR_UNINITIALIZED 1
#define NV_ERROR_INVALID_ARGUMENT 2
#define NV_ERROR_NOT_SUPPORTED 3
#define NV_ERROR_NO_PERMISSION 4
#define NV_ERROR_ALREADY_INITIALIZED 5
#define NV_ERROR_NOT_FOUND 6
#define NV_ERROR_INSUFFICIENT_SIZE 7
#define NV_ERROR_INSUFFICIENT_POWER 8
#define NV_ERROR_DRIVER_NOT_LOADED 9
#define NV_ERROR_TIMEOUT 10
#define NV_ERROR_IRQ_ISSUE 11
#define NV_ERROR_LIBRARY_NOT_FOUND 12
#define NV_ERROR_FUNCTION_NOT_FOUND 13
#define NV_ERROR_CORRUPTED_INFOROM 14
#define NV_ERROR_GPU_IS_LOST 15
#define NV_ERROR_RESET_REQUIRED 16
#define NV_ERROR_OPERATING_SYSTEM 17
#define NV_ERROR_LIB_RM_VERSION_MISMATCH 18
#define NV_ERROR_IN_USE 19
#define NV_ERROR_MEMORY 20
#define NV_ERROR_NO_DATA 21
#define NV_ERROR_UNKNOWN 999

/* Opaque handles: pointers to structs only NVML knows. */
typedef struct nv_device_st *nv_device;
typedef struct nv_gpu_instance_st *nv_gpu_instance;
typedef struct nv_compute_instance_st *nv_compute_instance;
typedef struct nv_event_set_st *nv_event_set;

/* Buffer sizes NVML documents. */
#define NV_UUID_BUFFER 96
#define NV_NAME_BUFFER 96
#define NV_DRIVER_VERSION_BUFFER 80
#define NV_PCI_BUS_ID_LEGACY 16
#define NV_PCI_BUS_ID 32

/* nvmlMemory_t: bytes. */
typedef struct nv_memory {
    unsigned long long total, free, used;
} nv_memory;

/* nvmlPciInfo_t (the v3 layout: legacy id first, full id last). */
typedef struct nv_pci_info {
    char bus_id_legacy[NV_PCI_BUS_ID_LEGACY];
    unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[NV_PCI_BUS_ID];
} nv_pci_info;

/* nvmlDeviceAddressingMode_v1_t; version = sizeof | 1 << 24. */
typedef struct nv_addressing_mode {
    unsigned int version, value;
} nv_addressing_mode;
#define NV_ADDRESSING_MODE_V1 ((unsigned int)(sizeof(nv_addressing_mode) | (1u << 24)))
#define NV_ADDRESSING_NONE 0
#define NV_ADDRESSING_HMM 1
#define NV_ADDRESSING_ATS 2

/* nvmlDeviceArchitecture_t values. */
#define NV_ARCH_KEPLER 2
#define NV_ARCH_MAXWELL 3
#define NV_ARCH_PASCAL 4
#define NV_ARCH_VOLTA 5
#define NV_ARCH_TURING 6
#define NV_ARCH_AMPERE 7
#define NV_ARCH_ADA 8
#define NV_ARCH_HOPPER 9
#define NV_ARCH_BLACKWELL 10
#define NV_ARCH_UNKNOWN 0xffffffffu

/* nvmlBrandType_t values. */
#define NV_BRAND_UNKNOWN 0
#define NV_BRAND_QUADRO 1
#define NV_BRAND_TESLA 2
#define NV_BRAND_NVS 3
#define NV_BRAND_GRID 4
#define NV_BRAND_GEFORCE 5
#define NV_BRAND_TITAN 6
#define NV_BRAND_NVIDIA_VAPPS 7
#define NV_BRAND_NVIDIA_VPC 8
#define NV_BRAND_NVIDIA_VCS 9
#define NV_BRAND_NVIDIA_VWS 10
#define NV_BRAND_NVIDIA_CLOUD_GAMING 11
#define NV_BRAND_QUADRO_RTX 12
#define NV_BRAND_NVIDIA_RTX 13
#define NV_BRAND_NVIDIA 14
#define NV_BRAND_GEFORCE_RTX 15
#define NV_BRAND_TITAN_RTX 16

/* MIG modes. */
#define NV_MIG_DISABLE 0
#define NV_MIG_ENABLE 1

/* GPU instance profile indexes (NVML_GPU_INSTANCE_PROFILE_*). */
#define NV_GI_PROFILE_1_SLICE 0x0
#define NV_GI_PROFILE_2_SLICE 0x1
#define NV_GI_PROFILE_3_SLICE 0x2
#define NV_GI_PROFILE_4_SLICE 0x3
#define NV_GI_PROFILE_7_SLICE 0x4
#define NV_GI_PROFILE_8_SLICE 0x5
#define NV_GI_PROFILE_6_SLICE 0x6
#define NV_GI_PROFILE_1_SLICE_REV1 0x7
#define NV_GI_PROFILE_2_SLICE_REV1 0x8
#define NV_GI_PROFILE_1_SLICE_REV2 0x9
#define NV_GI_PROFILE_1_SLICE_GFX 0xA
#define NV_GI_PROFILE_2_SLICE_GFX 0xB
#define NV_GI_PROFILE_4_SLICE_GFX 0xC
#define NV_GI_PROFILE_1_SLICE_NO_ME 0xD
#define NV_GI_PROFILE_2_SLICE_NO_ME 0xE
#define NV_GI_PROFILE_1_SLICE_ALL_ME 0xF
#define NV_GI_PROFILE_2_SLICE_ALL_ME 0x10
#define NV_GI_PROFILE_COUNT 0x11

/* Compute instance profile indexes (NVML_COMPUTE_INSTANCE_PROFILE_*). */
#define NV_CI_PROFILE_1_SLICE 0x0
#define NV_CI_PROFILE_2_SLICE 0x1
#define NV_CI_PROFILE_3_SLICE 0x2
#define NV_CI_PROFILE_4_SLICE 0x3
#define NV_CI_PROFILE_7_SLICE 0x4
#define NV_CI_PROFILE_8_SLICE 0x5
#define NV_CI_PROFILE_6_SLICE 0x6
#define NV_CI_PROFILE_1_SLICE_REV1 0x7
#define NV_CI_PROFILE_COUNT 0x8
#define NV_CI_ENGINE_PROFILE_SHARED 0x0
#define NV_CI_ENGINE_PROFILE_COUNT 0x1

/* nvmlGpuInstanceProfileInfo_t (the unversioned v1 layout). memory_mib is
 * NVML's memorySizeMB, documented in nvml.h as MiB. */
typedef struct nv_gi_profile_info {
    unsigned int id, is_p2p_supported, slice_count, instance_count;
    unsigned int multiprocessor_count, copy_engine_count, decoder_count;
    unsigned int encoder_count, jpeg_count, ofa_count;
    unsigned long long memory_mib;
} nv_gi_profile_info;

/* nvmlGpuInstancePlacement_t / nvmlComputeInstancePlacement_t. */
typedef struct nv_placement {
    unsigned int start, size;
} nv_placement;

/* nvmlGpuInstanceInfo_t. */
typedef struct nv_gi_info {
    nv_device device;
    unsigned int id, profile_id;
    nv_placement placement;
} nv_gi_info;

/* nvmlComputeInstanceInfo_t. */
typedef struct nv_ci_info {
    nv_device device;
    nv_gpu_instance gpu_instance;
    unsigned int id, profile_id;
    nv_placement placement;
} nv_ci_info;

/* nvmlComputeInstanceProfileInfo_t (the unversioned v1 layout). */
typedef struct nv_ci_profile_info {
    unsigned int id, slice_count, instance_count, multiprocessor_count;
    unsigned int shared_copy_engine_count, shared_decoder_count;
    unsigned int shared_encoder_count, shared_jpeg_count, shared_ofa_count;
} nv_ci_profile_info;

/* nvmlEventData_t. */
typedef struct nv_event_data {
    nv_device device;
    unsigned long long event_type, event_data;
    unsigned int gpu_instance_id, compute_instance_id;
} nv_event_data;

#define NV_EVENT_SINGLE_BIT_ECC 0x1ull
#define NV_EVENT_DOUBLE_BIT_ECC 0x2ull
#define NV_EVENT_XID_CRITICAL 0x8ull
#define NV_INSTANCE_NONE 0xFFFFFFFFu /* gpu/compute instance id of a full GPU */

/* The functions, as X(name, return, parameters). ORDER nv_funcs: the
 * loader resolves them in this order and the fake exports each. */
#define NV_FUNCS(X)                                                            \
    X(nvmlInit_v2, nv_return, (void))                                          \
    X(nvmlShutdown, nv_return, (void))                                         \
    X(nvmlErrorString, const char *, (nv_return))                              \
    X(nvmlSystemGetDriverVersion, nv_return, (char *, unsigned int))           \
    X(nvmlSystemGetCudaDriverVersion, nv_return, (int *))                      \
    X(nvmlDeviceGetCount_v2, nv_return, (unsigned int *))                      \
    X(nvmlDeviceGetHandleByIndex_v2, nv_return, (unsigned int, nv_device *))   \
    X(nvmlDeviceGetHandleByUUID, nv_return, (const char *, nv_device *))       \
    X(nvmlDeviceGetMinorNumber, nv_return, (nv_device, unsigned int *))        \
    X(nvmlDeviceGetUUID, nv_return, (nv_device, char *, unsigned int))         \
    X(nvmlDeviceGetName, nv_return, (nv_device, char *, unsigned int))         \
    X(nvmlDeviceGetMemoryInfo, nv_return, (nv_device, nv_memory *))            \
    X(nvmlDeviceGetArchitecture, nv_return, (nv_device, unsigned int *))       \
    X(nvmlDeviceGetBrand, nv_return, (nv_device, unsigned int *))              \
    X(nvmlDeviceGetCudaComputeCapability, nv_return, (nv_device, int *, int *)) \
    X(nvmlDeviceGetPciInfo_v3, nv_return, (nv_device, nv_pci_info *))          \
    X(nvmlDeviceGetMigMode, nv_return, (nv_device, unsigned int *, unsigned int *)) \
    X(nvmlDeviceGetGpuInstanceProfileInfo, nv_return,                          \
      (nv_device, unsigned int, nv_gi_profile_info *))                         \
    X(nvmlDeviceGetGpuInstancePossiblePlacements_v2, nv_return,                \
      (nv_device, unsigned int, nv_placement *, unsigned int *))               \
    X(nvmlDeviceGetMaxMigDeviceCount, nv_return, (nv_device, unsigned int *))  \
    X(nvmlDeviceGetMigDeviceHandleByIndex, nv_return,                          \
      (nv_device, unsigned int, nv_device *))                                  \
    X(nvmlDeviceGetGpuInstanceId, nv_return, (nv_device, unsigned int *))      \
    X(nvmlDeviceGetComputeInstanceId, nv_return, (nv_device, unsigned int *))  \
    X(nvmlDeviceGetGpuInstanceById, nv_return,                                 \
      (nv_device, unsigned int, nv_gpu_instance *))                            \
    X(nvmlGpuInstanceGetInfo, nv_return, (nv_gpu_instance, nv_gi_info *))      \
    X(nvmlGpuInstanceGetComputeInstanceById, nv_return,                        \
      (nv_gpu_instance, unsigned int, nv_compute_instance *))                  \
    X(nvmlComputeInstanceGetInfo_v2, nv_return, (nv_compute_instance, nv_ci_info *)) \
    X(nvmlGpuInstanceGetComputeInstanceProfileInfo, nv_return,                 \
      (nv_gpu_instance, unsigned int, unsigned int, nv_ci_profile_info *))     \
    X(nvmlEventSetCreate, nv_return, (nv_event_set *))                         \
    X(nvmlDeviceGetSupportedEventTypes, nv_return, (nv_device, unsigned long long *)) \
    X(nvmlDeviceRegisterEvents, nv_return, (nv_device, unsigned long long, nv_event_set)) \
    X(nvmlEventSetWait_v2, nv_return, (nv_event_set, nv_event_data *, unsigned int)) \
    X(nvmlEventSetFree, nv_return, (nv_event_set))

/* Functions used only when present (older drivers lack them). */
#define NV_OPTIONAL_FUNCS(X)                                                   \
    X(nvmlDeviceGetAddressingMode, nv_return, (nv_device, nv_addressing_mode *))

#endif
