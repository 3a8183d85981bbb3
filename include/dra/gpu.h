/*
 * dra/gpu.h: NVIDIA GPU discovery for the gpu.nvidia.com DRA driver.
 * NVML is loaded with dlopen from the driver root, as NVIDIA's kubelet
 * plugin does; full GPUs and MIG devices are read into an inventory; the
 * inventory becomes ResourceSlice specs with the device names, attributes
 * and capacities NVIDIA's driver (chart 25.12.0) publishes. Also here:
 * what a CDI spec needs (device nodes, driver libraries and binaries with
 * their host paths, MIG capability nodes) and an NVML event API for
 * device health (XID errors, lost GPUs) that the plugin polls.
 *
 * Sits on base, codec and api. The fake NVML used by the tests
 * (libnvidia-ml.so.1 serving GPUs from a YAML inventory) and the tool
 * that lays out a fake driver root are described in docs/gpu.md.
 *
 * Memory: a dra_gpu handle is allocated with the dra_mem of its options
 * and freed with dra_gpu_close. Inventories, slices and paths live in the
 * dra_arena the caller passes; nothing in them is freed on its own.
 * Threads: one dra_gpu may be used from several threads (NVML is thread
 * safe and keeps its own init count); a dra_gpu_health belongs to one
 * thread at a time.
 */
#ifndef DRA_GPU_H
#define DRA_GPU_H

#include <stdint.h>

#include "dra/api.h"
#include "dra/base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DRA_GPU_DRIVER_NAME "gpu.nvidia.com"

/* ---- loading NVML ---------------------------------------------------------- */

typedef struct dra_gpu dra_gpu; /* opaque: the loaded NVML library */

typedef struct dra_gpu_opts {
    /* Where this process sees the driver root (NVIDIA's
     * --container-driver-root, or --nvidia-driver-root when both are the
     * same, as in drad). NULL or "" means "/". */
    const char *driver_root;
    /* Where the host sees it (--nvidia-driver-root), used for every
     * host_path below. NULL means the same as driver_root. */
    const char *host_driver_root;
    /* An explicit NVML library; NULL searches the driver root like
     * NVIDIA's plugin: libnvidia-ml.so.1 in <root>/, <root>/usr/lib64,
     * <root>/usr/lib/x86_64-linux-gnu, <root>/usr/lib/aarch64-linux-gnu,
     * <root>/lib64, <root>/lib/x86_64-linux-gnu, <root>/lib/aarch64-linux-gnu,
     * symlinks resolved. */
    const char *nvml_path;
    const dra_mem *mem; /* NULL: libc */
} dra_gpu_opts;

/* Finds NVML under the driver root, dlopens it and resolves every NVML
 * function discovery and health use (dlsym, each checked). Does not call
 * nvmlInit: each discovery pass does init/shutdown itself.
 * *out is freed with dra_gpu_close. Errors, each with a message in |d|:
 *  DRA_ENOTFOUND  no libnvidia-ml.so.1 in the searched directories (the
 *                 message names the driver root and every path tried);
 *  DRA_EIO        dlopen failed (the message carries dlerror());
 *  DRA_EUNSUPPORTED a required NVML symbol is missing (named);
 *  DRA_EINVAL     NULL |out|; DRA_ENOMEM. */
dra_err dra_gpu_open(const dra_gpu_opts *opts, dra_gpu **out, dra_diag *d);
/* dlcloses the library. NULL is a no-op. */
void dra_gpu_close(dra_gpu *g);
/* The resolved library path that was loaded (as this process sees it);
 * owned by |g|. */
const char *dra_gpu_nvml_path(const dra_gpu *g);

/* ---- the inventory ----------------------------------------------------------- */

typedef struct dra_gpu_placement {
    unsigned start, size; /* memory slices [start, start+size) */
} dra_gpu_placement;

/* One MIG profile of a GPU: a GPU instance profile with a compute instance
 * of the same size (C == G), as go-nvlib names it. */
typedef struct dra_gpu_mig_profile {
    const char *name;        /* "1g.10gb", "1g.10gb+me", "7g.80gb" */
    unsigned profile_index;  /* NVML_GPU_INSTANCE_PROFILE_* passed to NVML */
    unsigned gi_profile_id;  /* its NVML .id: 19, 20, 15, 14, 9, 5, 0 */
    unsigned ci_profile_index; /* NVML_COMPUTE_INSTANCE_PROFILE_* with C == G */
    unsigned slice_count, instance_count;
    unsigned multiprocessors, copy_engines, decoders, encoders;
    unsigned jpeg_engines, ofa_engines;
    uint64_t memory_mib; /* NVML memorySizeMB (MiB) */
    dra_gpu_placement *placements; /* possible placements, NVML order */
    size_t n_placements;
} dra_gpu_mig_profile;

/* A path a container needs, three ways. For device nodes the stat facts
 * of |local_path| are filled when it is a character device (a fake
 * driver root has regular files there: is_char_dev 0, major/minor -1). */
typedef struct dra_gpu_path {
    const char *path;       /* inside the container: "/dev/nvidia0" */
    const char *host_path;  /* on the host: "<host root>/dev/nvidia0" */
    const char *local_path; /* as this process sees it */
    int is_char_dev;
    int64_t major, minor; /* -1 when unknown */
    unsigned mode;        /* permission bits (0666), 0 when unknown */
} dra_gpu_path;

struct dra_gpu_device;

/* An existing (static) MIG device. */
typedef struct dra_gpu_mig {
    const char *name; /* gpu-<minor>-mig-<profile>-<giProfileId>-<start> */
    const char *uuid; /* "MIG-..." */
    const struct dra_gpu_device *parent;
    const dra_gpu_mig_profile *profile;
    unsigned gi_id, ci_id;   /* GPU and compute instance ids */
    unsigned ci_profile_id;  /* compute instance profile .id */
    dra_gpu_placement placement;
    /* /dev/nvidia-caps/nvidia-cap<N> for the GI and for the CI: N from
     * /proc/driver/nvidia/capabilities/gpu<minor>/mig/gi<gi>[/ci<ci>]/access
     * (DeviceFileMinor, DeviceFileMode), major = the nvidia-caps entry of
     * /proc/devices (-1 when absent). */
    dra_gpu_path cap_gi, cap_ci;
} dra_gpu_mig;

typedef struct dra_gpu_device {
    const char *name; /* "gpu-<minor>" */
    unsigned index;   /* NVML index (not announced) */
    unsigned minor;   /* NVML minor number */
    const char *uuid;
    const char *product_name;  /* "NVIDIA GB200" */
    const char *brand;         /* go-nvlib words: "Nvidia", "Tesla", ... */
    const char *architecture;  /* "Blackwell", "Hopper", "Ampere", ... */
    const char *cuda_compute_capability; /* "10.0" as NVML reports it */
    const char *pci_bus_id;    /* "0000:3b:00.0" (lower case, 4-digit domain) */
    const char *pcie_root;     /* "pci0000:3a" from sysfs; NULL when unknown */
    const char *addressing_mode; /* "ATS", "HMM", "None"; NULL: not supported */
    uint64_t memory_bytes;     /* NVML total memory */
    int mig_capable;           /* nvmlDeviceGetMigMode answered */
    int mig_enabled;           /* current MIG mode is enabled */
    dra_gpu_mig_profile *profiles; /* C == G, without CI profile 1_SLICE_REV1 */
    size_t n_profiles;
    dra_gpu_mig *migs;         /* existing MIG devices, sorted by name */
    size_t n_migs;
    dra_gpu_path dev_node;     /* /dev/nvidia<minor> */
    /* The GPU's DRM nodes (/dev/dri/cardN, /dev/dri/renderDN), from the
     * drm/ directory of its PCI device in sysfs; nvidia-container-toolkit
     * adds them to a GPU's CDI device with by-path links
     * (/dev/dri/by-path/pci-<busid>-card, -render). */
    dra_gpu_path *drm_nodes;
    size_t n_drm_nodes;
} dra_gpu_device;

/* The driver's files as a CDI spec needs them. Paths inside the container
 * are the paths below the driver root ("/usr/bin/nvidia-smi"); host paths
 * are below host_driver_root. Only files that exist are listed. */
typedef struct dra_gpu_files {
    const char *dev_root;       /* driver root if it has dev/, else "/" */
    const char *host_dev_root;  /* the same on the host */
    dra_gpu_path *common_nodes; /* nvidiactl, nvidia-uvm, nvidia-uvm-tools, nvidia-modeset */
    size_t n_common_nodes;
    dra_gpu_path *libraries; /* lib*.so.<driverVersion> in the NVML directory */
    size_t n_libraries;
    /* Symbolic links next to them (libnvidia-ml.so.1 ...); |host_path| is
     * the link target as written (a file name in the same directory). */
    dra_gpu_path *lib_links;
    size_t n_lib_links;
    dra_gpu_path *binaries; /* nvidia-smi, nvidia-debugdump, nvidia-persistenced,
                             * nvidia-cuda-mps-control/-server, nvidia-imex(-ctl) */
    size_t n_binaries;
    const char *lib_dir;     /* container path of the NVML directory */
    const char *nvidia_smi;  /* local path of nvidia-smi; NULL when absent */
    int64_t caps_major;      /* nvidia-caps major from /proc/devices; -1 */
    int64_t uvm_major;       /* nvidia-uvm major from /proc/devices; -1 */
} dra_gpu_files;

typedef struct dra_gpu_inventory {
    const char *driver_version;      /* "580.126.20" as NVML reports it */
    const char *cuda_driver_version; /* "13.0" (v/1000 "." (v%1000)/10) */
    int cuda_driver_version_raw;     /* 13000 */
    dra_gpu_device *gpus;            /* NVML index order */
    size_t n_gpus;
    dra_gpu_files files;
    const char *nvml_path; /* the library that answered (local view) */
} dra_gpu_inventory;

/* One discovery pass: nvmlInit_v2, every GPU (minor, UUID, MIG mode,
 * memory, name, architecture, brand, compute capability, PCI bus id,
 * addressing mode, MIG profiles and placements), every existing MIG
 * device, the system driver and CUDA versions, nvmlShutdown; then the
 * files under the driver root, pcieRoot from sysfs and MIG capability
 * minors from /proc. sysfs and /proc are read below the driver root when
 * <root>/sys/bus/pci/devices resp. <root>/proc/devices exist (a fake
 * driver root), else from /sys and /proc. Everything in *out lives in
 * |a|. Errors (message in |d| naming the NVML call, the device index and
 * nvmlErrorString's text): DRA_EUNAVAILABLE nvmlInit failed (driver not
 * loaded, ...); DRA_EIO another NVML call failed; DRA_EINVALID a MIG
 * device matches no profile (NVIDIA's driver fails the same way);
 * DRA_EINVAL NULL argument; DRA_ENOMEM. */
dra_err dra_gpu_discover(dra_gpu *g, dra_arena *a, dra_gpu_inventory **out,
                         dra_diag *d);

/* A device of |inv| by name ("gpu-0", "gpu-0-mig-1g10gb-19-0"): *gpu is
 * the GPU (the parent for MIG), *mig the existing MIG device or NULL.
 * Lookup only: it does not say whether a layout announces the device (a
 * GPU with MIG on is found, though the default layout leaves it out;
 * DynamicMIG's abstract MIG devices are not found). Either out pointer
 * may be NULL. DRA_OK or DRA_ENOTFOUND. */
dra_err dra_gpu_find(const dra_gpu_inventory *inv, const char *name,
                     const dra_gpu_device **gpu, const dra_gpu_mig **mig);

/* Masterminds semver's normalisation used for the version attributes:
 * "10.0" -> "10.0.0", "580.95.05" -> "580.95.5", "13.0" -> "13.0.0".
 * Writes at most |size| bytes; DRA_EPARSE when |in| is not 1 to 3 dot
 * separated numbers (with an optional -pre/+build tail kept as is),
 * DRA_ERANGE when |size| is too small. */
dra_err dra_gpu_version(const char *in, char *buf, size_t size);

/* go-nvlib's profile string as used in MIG device names: dots removed,
 * lower case, [^a-z0-9-.] -> '-', trimmed of '-': "1g.10gb+me" -> "1g10gb-me".
 * Writes at most |size| bytes (truncates, always NUL-terminated). */
void dra_gpu_profile_dns(const char *profile, char *buf, size_t size);

/* ---- ResourceSlices ----------------------------------------------------------- */

typedef struct dra_gpu_slice_opts {
    const char *node_name; /* pool name and spec.nodeName (required) */
    /* Feature gate DynamicMIG: every (MIG profile, placement) becomes an
     * abstract MIG device consuming the shared counters of its GPU (KEP 4815
     * partitionable devices), the full GPU consumes all of them. Off:
     * NVIDIA's default: full GPUs, and for GPUs with MIG mode on only
     * their existing MIG devices, all in one slice. */
    int dynamic_mig;
    /* With dynamic_mig: 1 for API servers >= 1.35 (see
     * dra_gpu_split_counters): one slice with only the counter sets, then
     * one devices-only slice per GPU; 0: one slice per GPU holding its
     * counter set and its devices. */
    int split_counters;
    int64_t pool_generation; /* written into every slice (0 is kept) */
} dra_gpu_slice_opts;

/* The ResourceSlice specs NVIDIA's driver publishes for |inv| (driver
 * gpu.nvidia.com, pool = node name, nodeName set, resourceSliceCount =
 * *n). Devices: full GPUs named gpu-<minor> with attributes type, uuid,
 * productName, brand, architecture, cudaComputeCapability, driverVersion,
 * cudaDriverVersion (versions), resource.kubernetes.io/pciBusID,
 * resource.kubernetes.io/pcieRoot (when known), addressingMode (when
 * supported; not in DynamicMIG mode) and capacity memory (bytes); MIG
 * devices as docs/gpu.md lists. GPUs in order of minor, the devices of
 * a GPU by name (the GPU first). The caller adds metadata and may add device
 * taints (the structs are its to change). Everything lives in |a|.
 * DRA_OK; DRA_EINVAL (NULL argument, no node name); DRA_ENOMEM. */
dra_err dra_gpu_slices(const dra_gpu_inventory *inv,
                       const dra_gpu_slice_opts *o, dra_arena *a,
                       dra_resource_slice_spec **out, size_t *n,
                       dra_diag *d);

/* 1 when an API server of this version (discovery's gitVersion,
 * "v1.35.0", "v1.34.2-gke.100") wants counters in their own slice
 * (>= 1.35.0), 0 when older, -1 when the text is not a version. */
int dra_gpu_split_counters(const char *git_version);

/* ---- device health -------------------------------------------------------------- */

typedef enum dra_gpu_health_kind {
    DRA_GPU_HEALTH_NONE = 0,    /* the wait timed out */
    DRA_GPU_HEALTH_XID,         /* an XID critical error on |device| */
    DRA_GPU_HEALTH_LOST,        /* the GPU fell off the bus / NVML lost it */
    DRA_GPU_HEALTH_UNMONITORED, /* events could not be registered for it */
    DRA_GPU_HEALTH_RECOVERED    /* a device reported LOST (or failing after
                                 * an XID) answers NVML again */
} dra_gpu_health_kind;

typedef struct dra_gpu_health_event {
    dra_gpu_health_kind kind;
    /* The affected device's name in the inventory ("gpu-1",
     * "gpu-0-mig-1g10gb-19-0"); NULL means every device of the node. */
    const char *device;
    const char *gpu_uuid; /* the physical GPU's UUID; NULL with device NULL */
    uint64_t xid;         /* for DRA_GPU_HEALTH_XID */
    /* The XID is one NVIDIA ignores by default (13, 31, 43, 45, 68, 109)
     * or one of the additional ones: 25.12 drops such events, main taints
     * with effect None. Reported so the plugin can choose. */
    int ignored;
    unsigned gi, ci; /* NVML instance ids; 0xFFFFFFFF for the full GPU */
    char message[256]; /* one line for logs and taint messages */
} dra_gpu_health_event;

typedef struct dra_gpu_health dra_gpu_health;

/* Starts monitoring every GPU of |inv| (borrowed: it must outlive the
 * monitor): nvmlInit_v2 (held until free), nvmlEventSetCreate, then per
 * GPU nvmlDeviceGetHandleByUUID, nvmlDeviceGetSupportedEventTypes and
 * nvmlDeviceRegisterEvents for XID critical and ECC errors. A GPU whose
 * registration fails is reported as DRA_GPU_HEALTH_UNMONITORED by the
 * first waits. |additional_xids| is NVIDIA's --additional-xids-to-ignore
 * ("48, 63"; malformed entries are skipped like upstream); may be NULL.
 * Errors: DRA_EUNAVAILABLE (nvmlInit or nvmlEventSetCreate failed, with
 * the NVML text in |d|), DRA_EINVAL, DRA_ENOMEM. */
dra_err dra_gpu_health_new(dra_gpu *g, const dra_gpu_inventory *inv,
                           const char *additional_xids,
                           dra_gpu_health **out, dra_diag *d);

/* Waits at most |timeout_ms| (nvmlEventSetWait_v2) for the next health
 * event and fills *ev (strings borrowed from the inventory and |h|, valid
 * until the next call). Timeout: DRA_OK with kind DRA_GPU_HEALTH_NONE.
 * nvmlEventSetWait's GPU_IS_LOST is resolved by asking each GPU which is
 * lost (device NULL when none can be told apart). Devices reported LOST,
 * or failing NVML right after an XID, are probed on every call and
 * reported RECOVERED once they answer again. Non-XID events are skipped.
 * Returns DRA_OK, DRA_EIO (the wait failed otherwise; message in |d|),
 * DRA_EINVAL. */
dra_err dra_gpu_health_wait(dra_gpu_health *h, int timeout_ms,
                            dra_gpu_health_event *ev, dra_diag *d);

/* Frees the event set and drops the NVML init. NULL is a no-op. */
void dra_gpu_health_free(dra_gpu_health *h);

/* 1 when |xid| is in NVIDIA's default ignore list (13, 31, 43, 45, 68, 109). */
int dra_gpu_xid_ignored_by_default(uint64_t xid);

/* ---- the fake driver root (tests, drad) ---------------------------------------- */

/* Lays out a driver root for one node of a fake-GPU inventory (YAML, see
 * docs/gpu.md) exactly where the plugin looks for the real driver:
 *   <root>/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.<driverVersion>
 *     (a copy of |fake_nvml|) and the link libnvidia-ml.so.1 to it,
 *   <root>/usr/lib/x86_64-linux-gnu/dra-fake-nvml.yaml (the node's GPUs),
 *   <root>/usr/bin/nvidia-smi (a copy of |fake_smi|),
 *   <root>/dev/nvidia<minor>, nvidiactl, nvidia-uvm, nvidia-uvm-tools,
 *     nvidia-modeset, nvidia-caps/nvidia-cap<N> (regular files; nvidiactl
 *     holds the inventory, so a container that gets it sees its GPUs),
 *   <root>/sys/bus/pci/devices/<busid> links (pcieRoot) and
 *   <root>/proc/devices, <root>/proc/driver/nvidia/capabilities/... .
 * Existing files are replaced; no root privileges needed. */
typedef struct dra_gpu_fake_root_opts {
    const char *inventory; /* path of the YAML inventory */
    const char *node;      /* node to lay out; NULL: the only/first node */
    const char *root;      /* directory to fill (created) */
    const char *fake_nvml; /* the built fake libnvidia-ml.so.1 */
    const char *fake_smi;  /* the built fake nvidia-smi */
    const dra_mem *mem;
} dra_gpu_fake_root_opts;

/* DRA_OK; DRA_ENOTFOUND (no such node, or a source file missing);
 * DRA_EPARSE / DRA_EINVALID (bad inventory, with line:col in |d|);
 * DRA_EIO (a file could not be written; path and errno text in |d|);
 * DRA_EINVAL; DRA_ENOMEM. */
dra_err dra_gpu_fake_root(const dra_gpu_fake_root_opts *o, dra_diag *d);

/* The names of the nodes of a fake inventory, in file order, into |a|.
 * Same errors as dra_gpu_fake_root's inventory errors. */
dra_err dra_gpu_fake_nodes(const char *inventory, dra_arena *a,
                           const char ***names, size_t *n, dra_diag *d);

#ifdef __cplusplus
}
#endif
#endif
