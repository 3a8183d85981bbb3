/* libFuzzer target: the plugin's gRPC-over-HTTP/2 server connection
 * (src/plugin/h2_core.c) on whatever a client sends after the HTTP/2
 * preface: frames, headers, message prefixes, flow control, resets,
 * streams left open. The first input byte picks the read size (1-64
 * bytes at a time), so a frame split anywhere is covered. Complete calls
 * are answered at once (an echo, or an error for odd methods), the
 * core's clock advances so requests expire, and every byte it wants
 * to send is taken. No input may crash or leak. Seeds: an nghttp2
 * client's bytes for good and bad calls (corpus/plugin_h2). */
#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <string.h>

#include "plugin/plugin_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct calls {
    plugin_h2_call *head;
} calls;

static void dispatch(void *ud, plugin_h2_call *c)
{
    calls *q = ud;
    c->next = q->head;
    q->head = c;
}

static void answer_all(plugin_h2 *h, calls *q)
{
    while (q->head) {
        plugin_h2_call *c = q->head;
        q->head = c->next;
        if (strcmp(c->method, "/test.Echo/Echo") == 0) {
            dra_buf_append(c->rpc.resp, c->rpc.req, c->rpc.req_len);
        } else {
            c->rpc.code = DRA_GRPC_UNIMPLEMENTED;
            snprintf(c->rpc.msg, sizeof(c->rpc.msg), "unknown method \x01%%%s", c->method);
        }
        plugin_h2_answer(h, c);
    }
}

static int drain(plugin_h2 *h)
{
    const uint8_t *p;
    ssize_t n;
    while ((n = plugin_h2_send(h, &p)) > 0)
        ;
    return n < 0 ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t chunk = (size_t)(data[0] % 64) + 1;
    data++;
    size--;
    calls q = {NULL};
    plugin_h2_cfg cfg = {256, 8, dispatch, &q, NULL};
    plugin_h2 *h;
    if (plugin_h2_new(&cfg, &h) != DRA_OK)
        return 0;
    int64_t now = 0;
    plugin_h2_expire(h, now, 1000);
    int ok = plugin_h2_recv(h, (const uint8_t *)NGHTTP2_CLIENT_MAGIC, NGHTTP2_CLIENT_MAGIC_LEN) == 0;
    for (size_t off = 0; ok && off < size; off += chunk) {
        size_t n = size - off < chunk ? size - off : chunk;
        ok = plugin_h2_recv(h, data + off, n) == 0;
        answer_all(h, &q);
        now += 100;
        plugin_h2_expire(h, now, 1000);
        ok = ok && drain(h) == 0;
        (void)plugin_h2_done(h);
    }
    answer_all(h, &q);
    plugin_h2_goaway(h);
    (void)drain(h);
    plugin_h2_free(h);
    return 0;
}
