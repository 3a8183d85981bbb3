/* libFuzzer target for drad's HTTP/2 connection core (src/apiserver/
 * h2_conn.c) without sockets: the input is what a client sends, fed in
 * chunks to one connection over a server and store in a temporary
 * directory (kept across inputs). The first byte picks the chunk size,
 * whether the client certificate counts, and whether a valid opening
 * (preface, SETTINGS, a watch and a create, made once by an nghttp2
 * client) comes before the rest, so mutations reach the request path.
 * Writes are answered inline; nothing may crash, leak or hang. */
#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apiserver/h2_int.h"
#include "api_fixture.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static fuzz_api fx;
static dra_apiserver_creds creds;
static dra_buf opening;

static void teardown(void)
{
    dra_buf_fini(&opening);
    fuzz_api_close(&fx);
}

static void nv(nghttp2_nv *v, const char *k, const char *val)
{
    *v = (nghttp2_nv){(uint8_t *)k, (uint8_t *)val, strlen(k), strlen(val),
                      NGHTTP2_NV_FLAG_NONE};
}

static ssize_t body_read(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len,
                         uint32_t *flags, nghttp2_data_source *src, void *ud)
{
    static const char body[] = "{\"metadata\":{\"name\":\"fuzz\"}}";
    (void)s, (void)id, (void)src, (void)ud;
    if (len < sizeof body - 1)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    memcpy(buf, body, sizeof body - 1);
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)(sizeof body - 1);
}

/* What a client-go connection opens with, made by nghttp2's client. */
static void make_opening(void)
{
    nghttp2_session_callbacks *cb;
    nghttp2_session *s;
    nghttp2_nv h[6];
    nghttp2_data_provider dp = {{0}, body_read};
    const uint8_t *p;
    ssize_t n;
    dra_buf_init(&opening, NULL);
    if (nghttp2_session_callbacks_new(&cb) || nghttp2_session_client_new(&s, cb, NULL))
        abort();
    nghttp2_session_callbacks_del(cb);
    nghttp2_submit_settings(s, NGHTTP2_FLAG_NONE, NULL, 0);
    nv(&h[0], ":method", "GET");
    nv(&h[1], ":scheme", "https");
    nv(&h[2], ":authority", "localhost");
    nv(&h[3], ":path", "/api/v1/namespaces?watch=1&allowWatchBookmarks=true");
    nv(&h[4], "authorization", "Bearer fuzz-token");
    nghttp2_submit_request(s, NULL, h, 5, NULL, NULL);
    nv(&h[0], ":method", "POST");
    nv(&h[3], ":path", "/api/v1/namespaces");
    nv(&h[5], "content-type", "application/json");
    nghttp2_submit_request(s, NULL, h, 6, &dp, NULL);
    while ((n = nghttp2_session_mem_send(s, &p)) > 0)
        dra_buf_append(&opening, p, (size_t)n);
    nghttp2_session_del(s);
}

static void setup(void)
{
    dra_apiserver_opts o;
    memset(&o, 0, sizeof o);
    o.max_body = 4096;
    fuzz_api_open(&fx, "h2", &o);
    {
        static char token[] = "fuzz-token";
        creds.token = token;
    }
    make_opening();
    atexit(teardown);
}

/* Takes what the connection wants to send, as a peer that reads. */
static int drain(api_h2c *c, dra_buf *out)
{
    dra_err e;
    api_h2c_poll(c);
    do {
        dra_buf_reset(out);
        e = api_h2c_send(c, out, 1 << 16);
    } while (!e && out->len);
    return e ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    api_h2c_cfg cfg;
    api_h2c *c;
    dra_buf out;
    size_t chunk;
    if (size < 1 || size > (1u << 16))
        return 0;
    if (!fx.srv)
        setup();
    memset(&cfg, 0, sizeof cfg);
    cfg.srv = fx.srv;
    cfg.creds = &creds;
    cfg.cert_ok = data[0] & 1;
    chunk = (size_t)1 << ((data[0] >> 2) & 15);
    if (api_h2c_new(&cfg, &c))
        return 0;
    dra_buf_init(&out, NULL);
    if ((data[0] & 2) && api_h2c_recv(c, (const uint8_t *)opening.p, opening.len))
        goto done;
    for (size_t off = 1; off < size; off += chunk) {
        size_t n = size - off < chunk ? size - off : chunk;
        if (drain(c, &out) || api_h2c_recv(c, data + off, n))
            break;
    }
    drain(c, &out);
    api_h2c_shutdown(c);
    drain(c, &out);
done:
    dra_buf_fini(&out);
    api_h2c_free(c);
    return 0;
}
