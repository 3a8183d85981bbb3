/* bench_codec: throughput of the codec on a synthetic ResourceSlice with
 * many devices (JSON parse/encode, YAML encode/parse) and of quantity
 * parse+compare. Prints CPU-time figures (process time, so a busy machine
 * skews them less than wall time). Usage: bench_codec [devices]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dra/codec.h"

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void make_slice(dra_buf *b, int ndev)
{
    dra_buf_puts(b, "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\","
                    "\"metadata\":{\"name\":\"node-1-gpu\"},\"spec\":{\"driver\":\"gpu.nvidia.com\","
                    "\"nodeName\":\"node-1\",\"pool\":{\"name\":\"node-1\",\"generation\":1,"
                    "\"resourceSliceCount\":1},\"devices\":[");
    for (int i = 0; i < ndev; i++)
        dra_buf_printf(b, "%s{\"name\":\"gpu-%d\",\"attributes\":{\"index\":{\"int\":%d},"
                          "\"uuid\":{\"string\":\"GPU-%08x-06c0-7d70-1a51-e59b25b2c16c\"},"
                          "\"productName\":{\"string\":\"NVIDIA H200\"},\"driverVersion\":"
                          "{\"version\":\"550.127.8\"}},\"capacity\":{\"memory\":{\"value\":"
                          "\"143771Mi\"},\"sm\":{\"value\":\"132\"}}}",
                       i ? "," : "", i, i, (unsigned)i);
    dra_buf_puts(b, "]}}");
}

int main(int argc, char **argv)
{
    int ndev = argc > 1 ? atoi(argv[1]) : 20000;
    dra_buf src, j, y;
    dra_arena a, a2;
    dra_doc *d, **docs;
    size_t nd;
    double t0, t1, t2, t3, t4;
    static const char *const qs[] = {"189471Mi", "185Gi", "1.5Gi", "100m", "2", "40G", "1e3", "0.5"};
    dra_quantity q[8];
    long cmp = 0;
    dra_buf_init(&src, NULL);
    dra_buf_init(&j, NULL);
    dra_buf_init(&y, NULL);
    make_slice(&src, ndev);
    dra_arena_init(&a, NULL);
    dra_arena_init(&a2, NULL);
    t0 = cpu_now();
    if (dra_doc_parse_json(&a, src.p, src.len, &d, NULL) != DRA_OK)
        return 1;
    t1 = cpu_now();
    if (dra_doc_to_json(d, 2, &j) != DRA_OK)
        return 1;
    t2 = cpu_now();
    if (dra_doc_to_yaml(d, &y) != DRA_OK)
        return 1;
    t3 = cpu_now();
    if (dra_doc_parse_yaml(&a2, y.p, y.len, &docs, &nd, NULL) != DRA_OK || nd != 1)
        return 1;
    t4 = cpu_now();
    printf("devices %d: JSON %.1f MB parse %.0f MB/s, indented encode %.0f MB/s; "
           "YAML %.1f MB encode %.0f MB/s, parse %.0f MB/s; arena %.1f MB\n",
           ndev, src.len / 1e6, src.len / 1e6 / (t1 - t0), j.len / 1e6 / (t2 - t1),
           y.len / 1e6, y.len / 1e6 / (t3 - t2), y.len / 1e6 / (t4 - t3), a.total / 1e6);
    t0 = cpu_now();
    for (int r = 0; r < 200000; r++) {
        for (int i = 0; i < 8; i++)
            if (dra_quantity_parse(qs[i], strlen(qs[i]), &q[i]) != DRA_OK)
                return 1;
        for (int i = 0; i < 8; i++)
            cmp += dra_quantity_cmp(&q[i], &q[(i + 1) & 7]);
    }
    t1 = cpu_now();
    printf("quantity: %.0f ns per parse+compare (checksum %ld)\n",
           (t1 - t0) / (200000.0 * 8) * 1e9, cmp);
    dra_arena_fini(&a);
    dra_arena_fini(&a2);
    dra_buf_fini(&src);
    dra_buf_fini(&j);
    dra_buf_fini(&y);
    return 0;
}
