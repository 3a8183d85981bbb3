/*
 * fake/fake_int.h: the state of the fake libnvidia-ml.so.1 shared by its
 * files (state.c: loading the inventory, visibility, the event control
 * file; nvml.c: the NVML functions). NVML is a process-wide library with
 * an init count, so this state is one global, guarded by a mutex.
 */
#ifndef DRA_GPU_FAKE_INT_H
#define DRA_GPU_FAKE_INT_H

#include <pthread.h>

#include "../nvml_abi.h"
#include "inventory.h"

#define FK_EXPORT __attribute__((visibility("default")))
#define FK_HIDDEN __attribute__((visibility("hidden")))

typedef struct fgpu fgpu;
typedef struct fmig fmig;

struct nv_device_st {
    int is_mig;
    fgpu *gpu; /* the GPU, or the MIG device's parent */
    fmig *mig;
};
struct nv_gpu_instance_st {
    fmig *mig;
};
struct nv_compute_instance_st {
    fmig *mig;
};

struct fmig {
    struct nv_device_st h;
    struct nv_gpu_instance_st gi;
    struct nv_compute_instance_st ci;
    const fk_mig *m;
};

struct fgpu {
    struct nv_device_st h;
    const fk_gpu *g;
    unsigned index; /* among visible GPUs */
    fmig *migs;     /* visible MIG devices */
    size_t n_migs;
};

/* Lasting conditions raised through the control file. */
#define FK_COND_OK 0
#define FK_COND_LOST 1
#define FK_COND_RESET 2

struct nv_event_set_st {
    long offset;                /* control file bytes already consumed */
    unsigned long long mask[64]; /* per visible GPU index */
};

typedef struct fk_state {
    pthread_mutex_t mu;
    int refs;
    fk_inventory inv;
    const fk_node *node;
    fgpu *gpus;
    size_t n_gpus;
    char source[4200];  /* where the inventory came from */
    char events[4200];  /* control file, "" when none */
    char err[1024];     /* last error, for draFakeNvmlLastError */
    /* condition cache of the control file */
    long long ev_size, ev_mtime_ns;
    unsigned char cond[64]; /* per visible GPU index */
} fk_state;

FK_HIDDEN extern fk_state fk_g;

/* Loads inventory, node and visibility into fk_g (called with the mutex
 * held, refs == 0). Returns an NVML code; sets fk_g.err on failure. */
FK_HIDDEN nv_return fk_state_load(void);
/* Frees what fk_state_load built. */
FK_HIDDEN void fk_state_free(void);
/* The configured failure for |func| (env DRA_FAKE_NVML_FAIL, then the
 * node's fail map), or NV_SUCCESS. */
FK_HIDDEN nv_return fk_failpoint(const char *func);
/* The lasting condition of visible GPU |g| (re-reads the control file
 * when it changed). */
FK_HIDDEN int fk_condition(const fgpu *g);
/* Reads the control-file lines after set->offset; fills *ev with the
 * first one that is an event for a registered GPU and returns
 * NV_SUCCESS, NV_ERROR_GPU_IS_LOST for a lost line, or NV_ERROR_TIMEOUT
 * when there is nothing new. */
FK_HIDDEN nv_return fk_events_next(struct nv_event_set_st *set, nv_event_data *ev);
/* A visible GPU by "GPU-..." UUID, "gpu-N"/"N" minor; NULL. */
FK_HIDDEN fgpu *fk_gpu_by_ref(const char *ref);

#endif
