/*
 * fake/inventory.h: the YAML inventory of fake GPUs (docs/gpu.md): MIG
 * profile sets and nodes with their GPUs and MIG devices. Parsed with
 * libyaml by one file compiled into two places: the fake
 * libnvidia-ml.so.1 (which serves it through NVML) and the gpu module
 * (which lays out fake driver roots). Uses no other libdra code, so the
 * shared library stays self-contained.
 */
#ifndef DRA_GPU_FAKE_INVENTORY_H
#define DRA_GPU_FAKE_INVENTORY_H

#include <stddef.h>
#include <stdio.h>

#include "dra/base.h" /* the dra_mem type only */

typedef struct fk_profile {
    const char *name;     /* "1g.10gb" */
    unsigned index;       /* NVML GPU instance profile index */
    unsigned id;          /* NVML profile id */
    unsigned slices, instances, multiprocessors, copy_engines, decoders;
    unsigned encoders, jpeg_engines, ofa_engines;
    unsigned long long memory_mib;
    unsigned placement_size;
    unsigned *starts;
    size_t n_starts;
} fk_profile;

typedef struct fk_profile_set {
    const char *name;
    fk_profile *v;
    size_t n;
} fk_profile_set;

typedef struct fk_mig {
    const char *uuid;
    const fk_profile *profile;
    unsigned start, gi, ci;
} fk_mig;

typedef struct fk_gpu {
    unsigned minor;
    const char *uuid, *name;
    const char *brand, *architecture; /* as written (go-nvlib words) */
    unsigned brand_value, arch_value; /* NVML values */
    int cc_major, cc_minor;
    unsigned long long memory_bytes;
    const char *pci_bus_id;   /* NVML form: "00000000:01:00.0" */
    const char *pcie_root;    /* "pci0000:00" or NULL */
    unsigned pci_device_id;
    int addressing_mode;      /* NV_ADDRESSING_*; -1: not supported */
    int mig_capable, mig_enabled;
    unsigned max_mig_devices;
    const fk_profile_set *profiles; /* NULL when not MIG capable */
    fk_mig *migs;
    size_t n_migs;
} fk_gpu;

/* An NVML function told to fail, with the code it returns. */
typedef struct fk_fail {
    const char *func;
    int code;
} fk_fail;

typedef struct fk_node {
    const char *name;
    const char *driver_version;
    int cuda_version; /* 13000 */
    fk_gpu *gpus;
    size_t n_gpus;
    fk_fail *fails;
    size_t n_fails;
} fk_node;

typedef struct fk_block fk_block;
typedef struct fk_inventory {
    const dra_mem *mem;
    fk_block *blocks; /* every allocation, freed together */
    fk_profile_set *sets;
    size_t n_sets;
    fk_node *nodes;
    size_t n_nodes;
} fk_inventory;

/* Parses |len| bytes of YAML. On error returns -1 (bad content) or -3
 * (not YAML) with "line:col: message" (or a plain message) in |err|;
 * everything allocated is freed. |mem| may be NULL (libc). */
int fk_inventory_parse(fk_inventory *inv, const dra_mem *mem, const char *text,
                       size_t len, char *err, size_t errlen);
/* Reads and parses |path|; errors name the path; -2 when it cannot be
 * opened. */
int fk_inventory_load(fk_inventory *inv, const dra_mem *mem, const char *path,
                      char *err, size_t errlen);
void fk_inventory_free(fk_inventory *inv);

/* The node named |name|, or the first one when |name| is NULL; NULL when
 * there is none. */
const fk_node *fk_inventory_node(const fk_inventory *inv, const char *name);

/* Writes |node| (with the profile sets it uses) as an inventory of its
 * own, readable by fk_inventory_parse. 0, or -1 on a write error. */
int fk_inventory_write_node(const fk_inventory *inv, const fk_node *node, FILE *f);

/* The GI id NVML gives an instance at this placement when the inventory
 * names none: the node of the memory-slice tree (8 slices: 0; 4: 1-2;
 * 2: 3-6; 1: 7-14). */
unsigned fk_default_gi(unsigned start, unsigned size);

/* Minor numbers of /dev/nvidia-caps/nvidia-cap<N> for a GI and a CI of
 * the GPU with minor |gpu|, laid out like the driver's mig-minors table
 * (config 1, monitor 2, then per GPU 15 GIs of one access + 8 CIs). */
unsigned fk_cap_minor_gi(unsigned gpu, unsigned gi);
unsigned fk_cap_minor_ci(unsigned gpu, unsigned gi, unsigned ci);

/* NVML return codes by name ("GPU_IS_LOST", "DRIVER_NOT_LOADED"); -1. */
int fk_return_code(const char *name);

#endif
