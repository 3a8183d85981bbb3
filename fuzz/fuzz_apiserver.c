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

#include "dra/apiserver.h"
#include "dra/store.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static dra_store *store;
static dra_apiserver *srv;
static char dir[64];

static void teardown(void)
{
    char cmd[128];
    dra_apiserver_free(srv);
    dra_store_close(store);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd))
        fputs("fuzz_apiserver: could not remove the store\n", stderr);
}

static void setup(void)
{
    char db[128];
    dra_store_opts so;
    dra_apiserver_opts o;
    snprintf(dir, sizeof dir, "/tmp/dra-fuzz-api-XXXXXX");
    if (!mkdtemp(dir))
        abort();
    snprintf(db, sizeof db, "%s/state.db", dir);
    memset(&so, 0, sizeof so);
    /* No fsync: durability is not what is fuzzed, speed is needed. */
    so.unsafe_nosync = 1;
    so.history_min_bytes = 1u << 20;
    so.history_max_events = 4096;
    if (dra_store_open(db, &so, NULL, &store, NULL))
        abort();
    memset(&o, 0, sizeof o);
    o.store = store;
    o.graceful_pods = 1;
    if (dra_apiserver_new(&o, NULL, &srv, NULL))
        abort();
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
    if (!srv)
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
    if (dra_apiserver_handle(srv, &q, &r) != DRA_OK)
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
