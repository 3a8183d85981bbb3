/*
 * gpu_int.h: internals of the gpu module shared by its files: the loaded
 * NVML (function table), the per-pass helpers of discovery, and the file
 * lookups under the driver root.
 */
#ifndef DRA_GPU_INT_H
#define DRA_GPU_INT_H

#include "dra/gpu.h"
#include "nvml_abi.h"

/* The NVML function table, resolved by dra_gpu_open. */
typedef struct gpu_nvml {
#define GPU_X(name, ret, args) ret(*name) args;
    NV_FUNCS(GPU_X)
    NV_OPTIONAL_FUNCS(GPU_X)
#undef GPU_X
    const char *(*fake_last_error)(void); /* only in the fake library */
} gpu_nvml;

struct dra_gpu {
    const dra_mem *mem;
    void *dl;
    gpu_nvml nv;
    char *root;      /* local driver root, no trailing slash ("" for /) */
    char *host_root; /* host driver root, same form */
    char *lib_path;  /* resolved NVML path */
};

/* The NVML text for |rc| (nvmlErrorString), plus the fake library's
 * detail when it has one, into |buf|. */
DRA_HIDDEN const char *gpu_nv_error(const dra_gpu *g, nv_return rc, char *buf,
                                    size_t size);

/* "<root><rel>" for a path |rel| starting with '/', "/" joined sensibly;
 * allocated in |a|. */
DRA_HIDDEN char *gpu_join(dra_arena *a, const char *root, const char *rel);

/* Fills inv->files and each GPU's dev_node, pcie_root and each MIG
 * device's cap nodes (files.c). DRA_OK or DRA_ENOMEM. */
DRA_HIDDEN dra_err gpu_files_discover(const dra_gpu *g, dra_arena *a,
                                      dra_gpu_inventory *inv);

/* go-nvlib's profile name for GI profile |index| with a C == G compute
 * instance, memory |mib| on a GPU of |total| bytes; NULL for an unknown
 * index. Allocated in |a|. */
DRA_HIDDEN const char *gpu_profile_name(dra_arena *a, unsigned index,
                                        unsigned long long mib,
                                        unsigned long long total);
/* GPU slices of GI profile |index| (go-nvlib's table); 0 when unknown. */
DRA_HIDDEN unsigned gpu_gi_slices(unsigned index);
/* The C == G compute instance profile index for |slices|; -1 when none. */
DRA_HIDDEN int gpu_ci_index(unsigned slices);

#endif
