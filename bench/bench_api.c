/* bench_api: cost of the api codec on the largest objects Kubernetes
 * allows: a ResourceSlice with 128 devices of 32 attributes/capacities
 * each, and a 32-request ResourceClaim with a full allocation. Times the
 * text parse (codec), decode to typed structs, encode back to a document
 * and printing, separately. Usage: bench_api [iterations]
 *
 * On VMs where returning memory to the kernel is slow, glibc's trimming
 * dominates (every iteration frees its arena); measure the codec itself
 * with MALLOC_TRIM_THRESHOLD_=1000000000 MALLOC_TOP_PAD_=100000000. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dra/api.h"
#include "dra/codec.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void big_slice(dra_buf *b)
{
    dra_buf_puts(b, "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\","
                    "\"metadata\":{\"name\":\"node-1-gpu.example.com-abcde\"},\"spec\":{"
                    "\"driver\":\"gpu.example.com\",\"nodeName\":\"node-1\",\"pool\":{\"name\":"
                    "\"node-1\",\"generation\":1,\"resourceSliceCount\":1},\"devices\":[");
    for (int d = 0; d < 128; d++) {
        dra_buf_printf(b, "%s{\"name\":\"gpu-%d\",\"attributes\":{", d ? "," : "", d);
        for (int i = 0; i < 28; i++) {
            if (i % 4 == 0)
                dra_buf_printf(b, "%s\"attr%d\":{\"int\":%d}", i ? "," : "", i, d * i);
            else if (i % 4 == 1)
                dra_buf_printf(b, ",\"gpu.example.com/attr%d\":{\"string\":\"value-%d\"}", i, d);
            else if (i % 4 == 2)
                dra_buf_printf(b, ",\"attr%d\":{\"version\":\"1.%d.0\"}", i, d);
            else
                dra_buf_printf(b, ",\"attr%d\":{\"bool\":%s}", i, d % 2 ? "true" : "false");
        }
        dra_buf_puts(b, "},\"capacity\":{");
        for (int i = 0; i < 4; i++)
            dra_buf_printf(b, "%s\"cap%d\":{\"value\":\"%dGi\"}", i ? "," : "", i, 80 + i);
        dra_buf_puts(b, "}}");
    }
    dra_buf_puts(b, "]}}");
}

static void big_claim(dra_buf *b)
{
    dra_buf_puts(b, "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
                    "\"metadata\":{\"name\":\"c\",\"namespace\":\"default\"},\"spec\":{"
                    "\"devices\":{\"requests\":[");
    for (int r = 0; r < 32; r++)
        dra_buf_printf(b, "%s{\"name\":\"req-%d\",\"exactly\":{\"deviceClassName\":\"gpu\","
                          "\"selectors\":[{\"cel\":{\"expression\":\"device.attributes['gpu."
                          "example.com'].attr0 >= %d\"}}]}}",
                       r ? "," : "", r, r);
    dra_buf_puts(b, "]}},\"status\":{\"allocation\":{\"devices\":{\"results\":[");
    for (int r = 0; r < 32; r++)
        dra_buf_printf(b, "%s{\"request\":\"req-%d\",\"driver\":\"gpu.example.com\","
                          "\"pool\":\"node-1\",\"device\":\"gpu-%d\"}",
                       r ? "," : "", r, r);
    dra_buf_puts(b, "]},\"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":"
                    "\"metadata.name\",\"operator\":\"In\",\"values\":[\"node-1\"]}]}]}},"
                    "\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"p\",\"uid\":\"u\"}]}}");
}

static int bench(const char *label, const dra_buf *text, int iters)
{
    double t_parse = 0, t_dec = 0, t_enc = 0, t_print = 0, t0;
    size_t out_len = 0;
    for (int i = 0; i < iters; i++) {
        dra_arena a;
        dra_doc *doc, *enc;
        dra_object *o;
        dra_buf out;
        dra_arena_init(&a, NULL);
        dra_buf_init(&out, NULL);
        t0 = now_s();
        if (dra_doc_parse_json(&a, text->p, text->len, &doc, NULL) != DRA_OK)
            return 1;
        t_parse += now_s() - t0;
        t0 = now_s();
        if (dra_api_decode(&a, doc, &o, NULL) != DRA_OK)
            return 1;
        t_dec += now_s() - t0;
        t0 = now_s();
        if (dra_api_encode(&a, o, &enc) != DRA_OK)
            return 1;
        t_enc += now_s() - t0;
        t0 = now_s();
        if (dra_doc_to_json(enc, 0, &out) != DRA_OK)
            return 1;
        t_print += now_s() - t0;
        out_len = out.len;
        dra_buf_fini(&out);
        dra_arena_fini(&a);
    }
    printf("%-32s %7zu bytes in, %7zu out | per object: parse %8.1f us, decode %8.1f us, "
           "encode %8.1f us, print %8.1f us | decode %6.1f MB/s\n",
           label, text->len, out_len, t_parse / iters * 1e6, t_dec / iters * 1e6,
           t_enc / iters * 1e6, t_print / iters * 1e6, (double)text->len * iters / t_dec / 1e6);
    return 0;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 200;
    dra_buf s, c;
    int rc;
    if (iters <= 0)
        iters = 1;
    dra_buf_init(&s, NULL);
    dra_buf_init(&c, NULL);
    big_slice(&s);
    big_claim(&c);
    rc = bench("ResourceSlice 128x32", &s, iters) || bench("ResourceClaim 32 requests", &c, iters);
    dra_buf_fini(&s);
    dra_buf_fini(&c);
    if (rc)
        fprintf(stderr, "bench_api: decode failed\n");
    return rc;
}
