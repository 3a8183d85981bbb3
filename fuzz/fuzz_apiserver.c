/* libFuzzer target for drad's request handler (src/apiserver): each input
 * is one request, "METHOD\nPATH\nQUERY\nCONTENT-TYPE\nACCEPT\n" followed
 * by the body, handled by one server over a store in a temporary
 * directory (kept across inputs, so later requests meet what earlier
 * ones created). Every answer must be an HTTP code with a body (a Status
 * for errors); a watch or log stream is read until it has nothing more
 * and closed. Nothing may crash, leak or hang. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_fixture.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static fuzz_api fx;

static void teardown(void)
{
    fuzz_api_close(&fx);
}

static void setup(void)
{
    dra_apiserver_opts o;
    memset(&o, 0, sizeof o);
    o.graceful_pods = 1;
    fuzz_api_open(&fx, "api", &o);
    atexit(teardown);
}

/* The next line of the input into |out| (at most |cap| - 1 bytes). */
static const unsigned char *line(const unsigned char *p, const unsigned char *end,
                                 char *out, size_t cap)
{
    size_t n = 0;
    while (p < end && *p != '\n') {
        if (n + 1 < cap && *p)
            out[n++] = (char)*p;
        p++;
    }
    out[n] = '\0';
    return p < end ? p + 1 : p;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    const unsigned char *p = data, *end = data + size;
    char method[16], path[512], query[512], ct[128], accept[256];
    dra_apiserver_req q;
    dra_apiserver_resp r;
    if (size > (1u << 16))
        return 0;
    if (!fx.srv)
        setup();
    p = line(p, end, method, sizeof method);
    p = line(p, end, path, sizeof path);
    p = line(p, end, query, sizeof query);
    p = line(p, end, ct, sizeof ct);
    p = line(p, end, accept, sizeof accept);
    memset(&q, 0, sizeof q);
    q.method = method;
    q.path = path;
    q.query = *query ? query : NULL;
    q.content_type = *ct ? ct : NULL;
    q.accept = *accept ? accept : NULL;
    q.body = (const char *)p;
    q.body_len = (size_t)(end - p);
    dra_apiserver_resp_init(&r, NULL);
    if (dra_apiserver_handle(fx.srv, &q, &r) != DRA_OK)
        abort(); /* libc allocator: only a bug gets here */
    if (r.code < 100 || r.code > 599)
        abort();
    if (r.code >= 400 && (!r.body.p || !strstr(r.body.p, "\"kind\":\"Status\"")))
        abort();
    /* The handler's safety net for a failure nobody answered: a bug. */
    if (r.body.p && strstr(r.body.p, "\"message\":\"Internal error occurred: "
                                     "the request failed without an answer"))
        abort();
    if (r.stream) {
        dra_buf b;
        int eof = 0;
        dra_buf_init(&b, NULL);
        for (int i = 0; i < 4 && !eof; i++) {
            size_t before = b.len;
            if (dra_stream_read(r.stream, &b, &eof))
                abort();
            if (b.len == before)
                break;
        }
        dra_buf_fini(&b);
    }
    dra_apiserver_resp_fini(&r);
    return 0;
}
