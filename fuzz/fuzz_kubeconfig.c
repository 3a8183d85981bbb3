/* libFuzzer target: a kubeconfig file. The input is written to an
 * in-memory file (memfd) and loaded as an explicit --kubeconfig path;
 * the context picked is "ctx" for inputs starting with '#', else
 * current-context. Any input gives a config or an error with a message,
 * never a crash or a leak. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dra/kube.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dra_kube_config cfg;
    dra_diag d;
    char path[64];
    int fd;
    dra_err err;
    if (size > 1 << 16)
        return 0;
    fd = memfd_create("fuzz-kubeconfig", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    dra_diag_init(&d, NULL);
    err = dra_kube_config_load(&cfg, path, size && data[0] == '#' ? "ctx" : NULL,
                               NULL, &d);
    if (err != DRA_OK && !dra_diag_first(&d) && err != DRA_ENOMEM)
        abort(); /* every failure explains itself */
    if (err == DRA_OK && (!cfg.server || !cfg.ns))
        abort();
    dra_kube_config_fini(&cfg);
    dra_diag_fini(&d);
    close(fd);
    return 0;
}
