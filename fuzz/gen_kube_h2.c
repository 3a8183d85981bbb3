/* gen_kube_h2.c: writes the seed corpus of fuzz_kube_h2 (format in
 * kube_h2_input.h): what an API server sends for an answer, a Status
 * error, a list, watches (events split across DATA frames, a BOOKMARK
 * and an ERROR event, a watch sharing its connection with a request),
 * GOAWAY (also for a request held back by the stream limit), RST_STREAM,
 * REFUSED_STREAM, an upload held back by flow control, interim headers
 * and trailers. Frames are laid out here; every header block comes
 * from nghttp2's HPACK deflater, one per connection as a server has.
 * Built as gen_kube_h2 with -DDRA_FUZZ=ON; run
 *     build-fuzz/fuzz/gen_kube_h2 fuzz/corpus/kube_h2
 * to rewrite the seeds. */
#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube_h2_input.h"

typedef struct seed {
    uint8_t p[1 << 16];
    size_t len;
    nghttp2_hd_deflater *hd; /* the current connection's */
} seed;

#define POD                                                                 \
    "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"x\"," \
    "\"namespace\":\"default\",\"resourceVersion\":\"5\"}}"
#define LIST                                                                \
    "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{"          \
    "\"resourceVersion\":\"9\",\"continue\":\"c1\"},\"items\":["          \
    "{\"metadata\":{\"name\":\"a\"}},{\"metadata\":{\"name\":\"b\"}}]}"
#define NOT_FOUND                                                           \
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"         \
    "\"status\":\"Failure\",\"message\":\"pods \\\"x\\\" not found\","    \
    "\"reason\":\"NotFound\",\"details\":{\"name\":\"x\",\"kind\":"       \
    "\"pods\"},\"code\":404}"
#define EXPIRED                                                             \
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"         \
    "\"status\":\"Failure\",\"message\":\"too old resource version: 7 "   \
    "(9)\",\"reason\":\"Expired\",\"code\":410}"
#define EV1                                                                 \
    "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":"    \
    "\"v1\",\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"8\"}}}\n"
#define EV2                                                                 \
    "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":" \
    "\"v1\",\"metadata\":{\"name\":\"b\",\"resourceVersion\":\"9\"}}}\n"
#define BOOKMARK                                                            \
    "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":" \
    "\"v1\",\"metadata\":{\"resourceVersion\":\"10\"}}}\n"
#define ERROR_EV "{\"type\":\"ERROR\",\"object\":" EXPIRED "}\n"

static void put(seed *s, const void *p, size_t n)
{
    if (s->len + n > sizeof s->p)
        abort();
    if (n)
        memcpy(s->p + s->len, p, n);
    s->len += n;
}

static void frame(seed *s, uint8_t type, uint8_t flags, int32_t id,
                  const void *payload, size_t n)
{
    uint8_t h[9] = {(uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n, type,
                    flags, (uint8_t)(id >> 24 & 0x7f), (uint8_t)(id >> 16),
                    (uint8_t)(id >> 8), (uint8_t)id};
    put(s, h, sizeof h);
    put(s, payload, n);
}

/* A new seed with its mode byte. */
static void begin(seed *s, unsigned mode)
{
    uint8_t m = (uint8_t)mode;
    s->len = 0;
    s->hd = NULL;
    put(s, &m, 1);
}

/* The next connection: its own HPACK state; the server's SETTINGS
 * (at most |streams| at once) and its ACK of the client's. */
static void conn_max(seed *s, uint8_t streams)
{
    uint8_t iv[6] = {0, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 0, 0, 0, streams};
    if (s->hd) {
        nghttp2_hd_deflate_del(s->hd);
        put(s, KH2_SEP, KH2_MARK_LEN);
    }
    if (nghttp2_hd_deflate_new(&s->hd, 4096) != 0)
        abort();
    frame(s, NGHTTP2_SETTINGS, NGHTTP2_FLAG_NONE, 0, iv, sizeof iv);
    frame(s, NGHTTP2_SETTINGS, NGHTTP2_FLAG_ACK, 0, NULL, 0);
}

static void conn(seed *s)
{
    conn_max(s, 100);
}

static void nv(nghttp2_nv *v, const char *name, const char *value)
{
    *v = (nghttp2_nv){(uint8_t *)name, (uint8_t *)value, strlen(name),
                      strlen(value), NGHTTP2_NV_FLAG_NONE};
}

static void block(seed *s, int32_t id, const nghttp2_nv *v, size_t n, int end)
{
    uint8_t buf[512];
    ssize_t len = nghttp2_hd_deflate_hd(s->hd, buf, sizeof buf, v, n);
    if (len < 0)
        abort();
    frame(s, NGHTTP2_HEADERS,
          (uint8_t)(NGHTTP2_FLAG_END_HEADERS | (end ? NGHTTP2_FLAG_END_STREAM : 0)),
          id, buf, (size_t)len);
}

/* A response's HEADERS: :status and content-type, as kube-apiserver. */
static void headers(seed *s, int32_t id, const char *status, int end)
{
    nghttp2_nv v[3];
    nv(&v[0], ":status", status);
    nv(&v[1], "content-type", "application/json");
    nv(&v[2], "date", "Thu, 03 Dec 2026 18:00:00 GMT");
    block(s, id, v, strcmp(status, "200") == 0 ? 3 : 2, end);
}

static void data(seed *s, int32_t id, const char *text, size_t n, int end)
{
    frame(s, NGHTTP2_DATA, end ? NGHTTP2_FLAG_END_STREAM : NGHTTP2_FLAG_NONE,
          id, text, n);
}

static void text(seed *s, int32_t id, const char *t, int end)
{
    data(s, id, t, strlen(t), end);
}

static void u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

static void rst(seed *s, int32_t id, uint32_t code)
{
    uint8_t p[4];
    u32(p, code);
    frame(s, NGHTTP2_RST_STREAM, NGHTTP2_FLAG_NONE, id, p, 4);
}

static void goaway(seed *s, int32_t last, uint32_t code)
{
    uint8_t p[8];
    u32(p, (uint32_t)last);
    u32(p + 4, code);
    frame(s, NGHTTP2_GOAWAY, NGHTTP2_FLAG_NONE, 0, p, 8);
}

static void window(seed *s, int32_t id, uint32_t incr)
{
    uint8_t p[4];
    u32(p, incr);
    frame(s, NGHTTP2_WINDOW_UPDATE, NGHTTP2_FLAG_NONE, id, p, 4);
}

static void ping(seed *s)
{
    frame(s, NGHTTP2_PING, NGHTTP2_FLAG_NONE, 0, "fuzzping", 8);
}

/* Holds the server back until the client has sent |n| whole requests. */
static void wait_for(seed *s, uint8_t n)
{
    put(s, KH2_WAIT, KH2_MARK_LEN);
    put(s, &n, 1);
}

static void save(seed *s, const char *dir, const char *name)
{
    char path[512];
    FILE *f;
    if (s->hd)
        nghttp2_hd_deflate_del(s->hd);
    s->hd = NULL;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!(f = fopen(path, "wb")) || fwrite(s->p, 1, s->len, f) != s->len ||
        fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

#define REC(v) ((unsigned)(v) << 4) /* records of 16 << v bytes */

int main(int argc, char **argv)
{
    static seed s;
    static const char ev12[] = EV1 EV2, list[] = LIST;
    const char *dir = argc > 1 ? argv[1] : ".";

    /* A GET answered, then a watch with two events in one DATA frame. */
    begin(&s, KH2_GET | KH2_BYE | REC(10));
    conn(&s), headers(&s, 1, "200", 0), text(&s, 1, POD, 1);
    conn(&s), headers(&s, 1, "200", 0), text(&s, 1, EV1 EV2, 1);
    save(&s, dir, "get-ok");

    /* 404 with a Status; the watch refused with 410 Expired. */
    begin(&s, KH2_GET | REC(10));
    conn(&s), headers(&s, 1, "404", 0), text(&s, 1, NOT_FOUND, 1);
    conn(&s), headers(&s, 1, "410", 0), text(&s, 1, EXPIRED, 1);
    save(&s, dir, "get-404");

    /* A list in two DATA frames after a PING; a BOOKMARK and an ERROR. */
    begin(&s, KH2_LIST | KH2_BYE | REC(6));
    conn(&s), ping(&s), headers(&s, 1, "200", 0);
    data(&s, 1, list, 40, 0), text(&s, 1, list + 40, 1);
    conn(&s), headers(&s, 1, "200", 0), text(&s, 1, BOOKMARK, 0);
    text(&s, 1, ERROR_EV, 1);
    save(&s, dir, "list-bookmark-error");

    /* Two events split across DATA frames mid-line, a keep-alive blank
     * line between, in 64-byte TLS records. */
    begin(&s, KH2_GET | KH2_BYE | REC(2));
    conn(&s), headers(&s, 1, "200", 0), text(&s, 1, POD, 1);
    conn(&s), headers(&s, 1, "200", 0);
    data(&s, 1, ev12, 30, 0);
    data(&s, 1, ev12 + 30, sizeof EV1 - 1 - 30, 0);
    text(&s, 1, "\n", 0);
    data(&s, 1, ev12 + sizeof EV1 - 1, 20, 0);
    text(&s, 1, ev12 + sizeof EV1 - 1 + 20, 0);
    data(&s, 1, "", 0, 1);
    save(&s, dir, "watch-split");

    /* The watch open (stream 1) while a GET (stream 3) is answered on the
     * same connection; then the watch's second event and its end. */
    begin(&s, KH2_GET | KH2_SHARED | KH2_BYE | REC(10));
    conn(&s), headers(&s, 1, "200", 0), text(&s, 1, EV1, 0);
    wait_for(&s, 2);
    headers(&s, 3, "200", 0), text(&s, 3, POD, 1);
    text(&s, 1, EV2, 0), data(&s, 1, "", 0, 1);
    save(&s, dir, "watch-shared");

    /* One stream at a time: the GET waits behind the open watch until
     * GOAWAY, which it never reached, sends it to a new connection. */
    begin(&s, KH2_GET | KH2_SHARED | KH2_BYE | REC(10));
    conn_max(&s, 1), headers(&s, 1, "200", 0), text(&s, 1, EV1, 0);
    wait_for(&s, 2); /* never met: the server goes on after KH2_WAIT_MS */
    goaway(&s, 1, NGHTTP2_NO_ERROR), text(&s, 1, EV2, 1);
    conn(&s), headers(&s, 1, "200", 0), text(&s, 1, POD, 1);
    save(&s, dir, "shared-goaway-pending");

    /* GOAWAY before the GET was processed (sent again on a new
     * connection), GOAWAY after it; the watch ends in a GOAWAY with an
     * error. */
    begin(&s, KH2_GET | KH2_BYE | REC(10));
    conn(&s), goaway(&s, 0, NGHTTP2_NO_ERROR);
    conn(&s), headers(&s, 1, "200", 0), text(&s, 1, POD, 1);
    goaway(&s, 1, NGHTTP2_NO_ERROR);
    conn(&s), headers(&s, 1, "200", 0), text(&s, 1, EV1, 0);
    goaway(&s, 1, NGHTTP2_ENHANCE_YOUR_CALM);
    save(&s, dir, "goaway");

    /* RST_STREAM in the middle of an answer and of a watch's event. */
    begin(&s, KH2_GET | REC(10));
    conn(&s), headers(&s, 1, "200", 0), data(&s, 1, POD, 20, 0);
    rst(&s, 1, NGHTTP2_INTERNAL_ERROR);
    conn(&s), headers(&s, 1, "200", 0), data(&s, 1, ev12, sizeof EV1 + 10, 0);
    rst(&s, 1, NGHTTP2_CANCEL);
    save(&s, dir, "rst-stream");

    /* A POST refused unprocessed (sent again), then created. */
    begin(&s, KH2_CREATE | KH2_BYE | REC(10));
    conn(&s), rst(&s, 1, NGHTTP2_REFUSED_STREAM);
    conn(&s), headers(&s, 1, "201", 0), text(&s, 1, POD, 1);
    save(&s, dir, "create-refused");

    /* A 96 KiB PUT: the windows opened, the answer once it is sent. */
    begin(&s, KH2_UPDATE | KH2_BYE | REC(10));
    conn(&s), window(&s, 0, 1u << 20), window(&s, 1, 1u << 20);
    wait_for(&s, 1);
    headers(&s, 1, "200", 0), text(&s, 1, POD, 1);
    save(&s, dir, "update-window");

    /* 100 Continue before the answer, trailers after it. */
    begin(&s, KH2_GET | KH2_BYE | REC(8));
    conn(&s), headers(&s, 1, "100", 0), headers(&s, 1, "200", 0);
    text(&s, 1, POD, 0);
    {
        nghttp2_nv v;
        nv(&v, "x-trailer", "done");
        block(&s, 1, &v, 1, 1);
    }
    save(&s, dir, "interim-trailers");
    return 0;
}
