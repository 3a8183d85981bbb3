/* fuzz_node_crilog: arbitrary bytes as a CRI log file (through a memfd)
 * read back as `kubectl logs` does, with the options the first bytes
 * pick (tail, timestamps, limit, since). Malformed records are skipped;
 * nothing may crash, leak or hang. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dra/node.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int sink(void *ud, const char *p, size_t n)
{
    size_t *total = ud;
    (void)p;
    *total += n;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dra_node_log_opts o;
    char path[64];
    size_t total = 0;
    int fd;
    if (size < 3)
        return 0;
    memset(&o, 0, sizeof o);
    o.tail_lines = data[0] & 0x80 ? -1 : data[0] & 7;
    o.timestamps = data[1] & 1;
    o.limit_bytes = data[1] & 2 ? data[2] : 0;
    o.since_ns = data[1] & 4 ? (int64_t)1700000000 * 1000000000 : 0;
    fd = memfd_create("crilog", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    if (write(fd, data + 3, size - 3) == (ssize_t)(size - 3)) {
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        dra_node_log_read(path, &o, sink, &total);
        if (o.limit_bytes > 0 && total > (size_t)o.limit_bytes)
            __builtin_trap();
    }
    close(fd);
    return 0;
}
