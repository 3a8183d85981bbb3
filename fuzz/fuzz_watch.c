/* libFuzzer target: what a server sends to the cluster client. The input
 * is answered as one request body (status code from its first byte) and
 * split into lines fed as a watch stream: Status decoding, list_all's
 * page handling and the watch event parser must give an error, never a
 * crash, leak or hang. The first line is also decoded as a Status. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra/cluster.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct feed {
    const char *p;
    size_t n, pos;
    int code, requests;
} feed;

static dra_err f_request(void *ud, const dra_cluster_req *req, int *code,
                         dra_buf *body, dra_kstatus *st)
{
    feed *f = ud;
    (void)req, (void)st;
    if (f->requests++ > 3) /* list_all follows continue tokens: bound it */
        return DRA_EIO;
    *code = f->code;
    return dra_buf_append(body, f->p, f->n);
}

static dra_err f_open(void *ud, const char *path, const char *query,
                      dra_watch_stream **out, dra_kstatus *st)
{
    (void)path, (void)query, (void)st;
    *out = ud;
    return DRA_OK;
}

static dra_err f_next(void *ud, dra_watch_stream *s, int timeout_ms,
                      dra_buf *line)
{
    feed *f = ud;
    const char *nl;
    size_t len;
    (void)s, (void)timeout_ms;
    if (f->pos >= f->n)
        return DRA_EIO;
    nl = memchr(f->p + f->pos, '\n', f->n - f->pos);
    len = nl ? (size_t)(nl - (f->p + f->pos)) : f->n - f->pos;
    dra_buf_append(line, f->p + f->pos, len);
    f->pos += len + 1;
    return DRA_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int codes[] = {200, 201, 400, 404, 409, 410, 422, 500, 503};
    static const dra_cluster_ops ops = {f_request, f_open, f_next, NULL, NULL,
                                        NULL};
    feed f = {(const char *)data, size, 0, 0, 0};
    dra_gvr claims = DRA_GVR_CLAIMS;
    dra_kstatus st;
    dra_arena a;
    dra_doc *out = NULL;
    const char *rv = NULL;
    dra_watch *w = NULL;
    dra_watch_event ev;
    dra_cluster *c;
    const char *nl;
    if (size > 1 << 16)
        return 0;
    f.code = size ? codes[data[0] % (sizeof codes / sizeof codes[0])] : 200;
    nl = memchr(data, '\n', size);
    dra_cluster_status_decode(f.code, "POST", (const char *)data,
                              nl ? (size_t)(nl - (const char *)data) : size,
                              NULL, &st);
    c = dra_cluster_new(&ops, &f, NULL);
    if (!c)
        return 0;
    dra_arena_init(&a, NULL);
    dra_cluster_list_all(c, &claims, "ns", NULL, &a, &out, &rv, &st);
    if (dra_cluster_watch(c, &claims, NULL, NULL, &w, &st) == DRA_OK) {
        for (int i = 0; i < 1000; i++) {
            dra_err err = dra_watch_next(w, 0, &a, &ev);
            if (err != DRA_OK)
                break;
            if (!ev.object)
                abort();
            dra_watch_event_err(&ev, &st);
            dra_obj_str(ev.object, "metadata.name");
        }
        dra_watch_close(w);
    }
    dra_arena_fini(&a);
    dra_cluster_free(c);
    return 0;
}
