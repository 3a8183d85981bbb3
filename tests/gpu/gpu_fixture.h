/*
 * gpu_fixture.h: a fake driver root in a temporary directory for the gpu
 * tests: laid out with dra_gpu_fake_root from an inventory in
 * tests/data/gpu, with the fake NVML's dev root pointed at it (so the
 * tests see every GPU even on a machine that has real NVIDIA devices),
 * and removed again by fx_rm.
 */
#ifndef DRA_GPU_FIXTURE_H
#define DRA_GPU_FIXTURE_H

#define _GNU_SOURCE
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dra/gpu.h"
#include "dra_test.h"

typedef struct fx {
    char dir[256];
    char root[300];
    char events[400]; /* the fake NVML's control file */
} fx;

static inline int fx_rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static inline void fx_rm(fx *f)
{
    if (f->dir[0])
        nftw(f->dir, fx_rm_one, 16, FTW_DEPTH | FTW_PHYS);
    f->dir[0] = 0;
}

static inline void fx_path(char *buf, size_t size, const char *rel)
{
    snprintf(buf, size, "%s/%s", DRA_TEST_DATA "/gpu", rel);
}

/* Lays out |node| (NULL: the first) of tests/data/gpu/|inventory|. */
static inline void fx_make(fx *f, const char *inventory, const char *node)
{
    char inv[512];
    dra_diag d;
    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/dra-gpu-test-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->root, sizeof f->root, "%s/root", f->dir);
    snprintf(f->events, sizeof f->events, "%s/usr/lib/x86_64-linux-gnu/dra-fake-nvml.events",
             f->root);
    fx_path(inv, sizeof inv, inventory);
    dra_gpu_fake_root_opts o = {.inventory = inv, .node = node, .root = f->root,
                                .fake_nvml = DRA_FAKE_NVML, .fake_smi = DRA_FAKE_SMI};
    dra_diag_init(&d, NULL);
    dra_err err = dra_gpu_fake_root(&o, &d);
    if (err)
        fail_msg("fake root: %s", dra_diag_first(&d) ? dra_diag_first(&d) : dra_strerror(err));
    dra_diag_fini(&d);
    char dev[400];
    snprintf(dev, sizeof dev, "%s/dev", f->root);
    setenv("DRA_FAKE_NVML_DEV_ROOT", dev, 1);
    unsetenv("DRA_FAKE_NVML_FAIL");
    unsetenv("DRA_FAKE_NVML_CONFIG");
    unsetenv("DRA_FAKE_NVML_EVENTS");
    unsetenv("DRA_FAKE_NVML_NODE");
}

/* Opens NVML from the fixture's root (host root |host| or the same). */
static inline dra_gpu *fx_open(const fx *f, const char *host)
{
    dra_gpu_opts o = {.driver_root = f->root, .host_driver_root = host};
    dra_gpu *g = NULL;
    dra_diag d;
    dra_diag_init(&d, NULL);
    dra_err err = dra_gpu_open(&o, &g, &d);
    if (err)
        fail_msg("open: %s", dra_diag_first(&d) ? dra_diag_first(&d) : dra_strerror(err));
    dra_diag_fini(&d);
    return g;
}

static inline dra_gpu_inventory *fx_discover(dra_gpu *g, dra_arena *a)
{
    dra_gpu_inventory *inv = NULL;
    dra_diag d;
    dra_diag_init(&d, NULL);
    dra_err err = dra_gpu_discover(g, a, &inv, &d);
    if (err)
        fail_msg("discover: %s", dra_diag_first(&d) ? dra_diag_first(&d) : dra_strerror(err));
    dra_diag_fini(&d);
    return inv;
}

/* Appends a line to the fake NVML's event control file. */
static inline void fx_event(const fx *f, const char *line)
{
    FILE *e = fopen(f->events, "a");
    assert_non_null(e);
    fprintf(e, "%s\n", line);
    fclose(e);
}

#endif
