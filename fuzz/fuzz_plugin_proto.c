/* libFuzzer target: the plugin's protobuf decoding (src/plugin/pb.c) of
 * every message the plugin or its client reads: the DRA requests and
 * responses, PluginInfo, RegistrationStatus, the health messages. No
 * input may crash or leak; a request that decodes must re-encode and
 * decode to the same claims, and a decoded response must re-encode. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/plugin_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                          \
    do {                                                                  \
        if (!(c)) {                                                       \
            fprintf(stderr, "fuzz_plugin_proto: check failed: %s\n", #c); \
            abort();                                                      \
        }                                                                 \
    } while (0)

static void claims(dra_arena *a, const uint8_t *data, size_t size)
{
    dra_plugin_claim_ref *c, *c2;
    size_t n, n2;
    char err[256];
    if (plugin_pb_decode_claims(a, data, size, &c, &n, err, sizeof(err)) != DRA_OK)
        return;
    dra_buf b;
    dra_buf_init(&b, NULL);
    CHECK(plugin_pb_encode_claims(a, c, n, &b) == DRA_OK);
    CHECK(plugin_pb_decode_claims(a, (const uint8_t *)(b.p ? b.p : ""), b.len, &c2, &n2, err,
                                  sizeof(err)) == DRA_OK);
    CHECK(n2 == n);
    for (size_t i = 0; i < n; i++)
        CHECK(strcmp(c[i].uid, c2[i].uid) == 0 && strcmp(c[i].name, c2[i].name) == 0 &&
              strcmp(c[i].namespace_, c2[i].namespace_) == 0);
    dra_buf_fini(&b);
}

static void responses(dra_arena *a, const uint8_t *data, size_t size)
{
    dra_plugin_claim_result *r;
    size_t n;
    dra_buf b;
    dra_buf_init(&b, NULL);
    if (plugin_pb_decode_prepare_resp(a, data, size, &r, &n) == DRA_OK)
        CHECK(plugin_pb_encode_prepare_resp(a, r, n, &b) == DRA_OK);
    if (plugin_pb_decode_unprepare_resp(a, data, size, &r, &n) == DRA_OK)
        CHECK(plugin_pb_encode_unprepare_resp(a, r, n, &b) == DRA_OK);
    dra_plugin_info info;
    if (plugin_pb_decode_info(a, data, size, &info) == DRA_OK)
        CHECK(plugin_pb_encode_info(a, &info, &b) == DRA_OK);
    dra_buf_fini(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dra_arena a;
    dra_arena_init(&a, NULL);
    claims(&a, data, size);
    responses(&a, data, size);
    int reg, status;
    const char *s;
    (void)plugin_pb_decode_reg_status(&a, data, size, &reg, &s);
    (void)plugin_pb_decode_health_req(&a, data, size, &s);
    (void)plugin_pb_decode_health_resp(&a, data, size, &status);
    (void)plugin_pb_decode_info_req(&a, data, size);
    (void)plugin_pb_decode_empty(&a, data, size);
    dra_arena_fini(&a);
    return 0;
}
