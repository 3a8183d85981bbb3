/*
 * dra-fake-driver-root: lays out a fake NVIDIA driver root for one node of
 * a fake-GPU inventory (dra_gpu_fake_root), so dra-gpu-plugin
 * --nvidia-driver-root=DIR finds NVML, nvidia-smi and the device nodes
 * where it would find the real driver's. `--list` prints the inventory's
 * node names.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dra/gpu.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: dra-fake-driver-root [--inventory FILE] [--node NAME] --root DIR\n"
            "                            [--nvml LIB] [--smi PROGRAM]\n"
            "       dra-fake-driver-root [--inventory FILE] --list\n"
            "Lays out a driver root for one node of a fake-GPU inventory (default\n"
            "%s/nodes-gb200.yaml; NAME defaults to the first node).\n",
            DRA_SHARE_DIR);
}

/* <dir of this program>/fake-gpu/<name>, else the build tree's copy. */
static const char *beside_me(const char *name, const char *built, char *buf, size_t size)
{
    char exe[PATH_MAX];
    if (realpath("/proc/self/exe", exe)) {
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            snprintf(buf, size, "%s/fake-gpu/%s", exe, name);
            if (access(buf, R_OK) == 0)
                return buf;
        }
    }
    return built;
}

static int list_nodes(const char *inventory)
{
    dra_arena a;
    dra_diag d;
    const char **names;
    size_t n;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    dra_err err = dra_gpu_fake_nodes(inventory, &a, &names, &n, &d);
    if (err)
        fprintf(stderr, "dra-fake-driver-root: %s\n", dra_diag_first(&d) ? dra_diag_first(&d) : dra_strerror(err));
    for (size_t i = 0; !err && i < n; i++)
        printf("%s\n", names[i]);
    dra_diag_fini(&d);
    dra_arena_fini(&a);
    return err ? 1 : 0;
}

int main(int argc, char **argv)
{
    char nvml_buf[PATH_MAX + 32], smi_buf[PATH_MAX + 32];
    dra_gpu_fake_root_opts o = {0};
    int list = 0;
    o.inventory = DRA_SHARE_DIR "/nodes-gb200.yaml";
    o.fake_nvml = beside_me("libnvidia-ml.so.1", DRA_FAKE_NVML_BUILT, nvml_buf, sizeof nvml_buf);
    o.fake_smi = beside_me("nvidia-smi", DRA_FAKE_SMI_BUILT, smi_buf, sizeof smi_buf);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--list")) {
            list = 1;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!v) {
            usage(stderr);
            return 2;
        }
        if (!strcmp(a, "--inventory"))
            o.inventory = v;
        else if (!strcmp(a, "--node"))
            o.node = v;
        else if (!strcmp(a, "--root"))
            o.root = v;
        else if (!strcmp(a, "--nvml"))
            o.fake_nvml = v;
        else if (!strcmp(a, "--smi"))
            o.fake_smi = v;
        else {
            usage(stderr);
            return 2;
        }
        i++;
    }
    if (list)
        return list_nodes(o.inventory);
    if (!o.root) {
        usage(stderr);
        return 2;
    }
    dra_diag d;
    dra_diag_init(&d, NULL);
    dra_err err = dra_gpu_fake_root(&o, &d);
    if (err)
        fprintf(stderr, "dra-fake-driver-root: %s\n",
                dra_diag_first(&d) ? dra_diag_first(&d) : dra_strerror(err));
    dra_diag_fini(&d);
    return err ? 1 : 0;
}
