/*
 * stream.c: watch streams over libcurl's multi interface. Each watch is
 * one easy handle in its own multi handle, so dra_watch_next can wait
 * for data with a timeout (curl_multi_poll) and another thread can wake
 * it (curl_multi_wakeup) to cancel. Received bytes are split into lines:
 * the API server sends one JSON watch event per line.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "kube_int.h"

typedef struct kube_stream {
    kube_t *k;
    CURLM *multi;
    CURL *easy;
    struct curl_slist *hdrs;
    dra_buf data;   /* received, not yet handed out: data.p[start..len) */
    size_t start, scan;
    uint64_t received; /* bytes ever received: progress, whatever compaction did */
    int done;       /* the transfer finished (or failed) */
    CURLcode result;
    int overflow;
    int headers_done; /* the blank line after the response headers */
    int pending;      /* opened before the headers came: check them later */
    atomic_int canceled;
    char errbuf[CURL_ERROR_SIZE];
} kube_stream;

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
    kube_stream *s = ud;
    size_t len = size * n;
    /* Compact before growing: handed-out lines leave a prefix behind. */
    if (s->start && s->start == s->data.len) {
        dra_buf_reset(&s->data);
        s->start = s->scan = 0;
    } else if (s->start > s->data.len / 2) {
        memmove(s->data.p, s->data.p + s->start, s->data.len - s->start);
        s->data.len -= s->start;
        s->scan -= s->start;
        s->start = 0;
    }
    if (s->data.len - s->start + len > KUBE_MAX_BODY) {
        s->overflow = 1;
        return 0;
    }
    if (dra_buf_append(&s->data, p, len) != DRA_OK)
        return 0;
    s->received += len;
    return len;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    kube_stream *s = ud;
    size_t len = size * n;
    if ((len == 2 && p[0] == '\r' && p[1] == '\n') || (len == 1 && p[0] == '\n'))
        s->headers_done = 1;
    return len;
}

/* One round of transfer work, waiting up to |wait_ms| for the socket or a
 * wakeup. */
static void drive(kube_stream *s, int wait_ms)
{
    int running = 0, left = 0;
    uint64_t before = s->received;
    int headers = s->headers_done;
    CURLMsg *m;
    curl_multi_perform(s->multi, &running);
    while ((m = curl_multi_info_read(s->multi, &left)) != NULL)
        if (m->msg == CURLMSG_DONE) {
            s->done = 1;
            s->result = m->data.result;
        }
    /* Wait only when this round brought nothing: the caller must look
     * at what just arrived before we sleep on the socket again. */
    if (!s->done && running && wait_ms > 0 && s->received == before &&
        s->headers_done == headers)
        curl_multi_poll(s->multi, NULL, 0, wait_ms, NULL);
    else if (!s->done && !running) {
        s->done = 1; /* finished without a message: treat as ended */
    }
}

static void stream_free(kube_stream *s)
{
    if (s->multi && s->easy)
        curl_multi_remove_handle(s->multi, s->easy);
    if (s->easy)
        curl_easy_cleanup(s->easy);
    if (s->multi)
        curl_multi_cleanup(s->multi);
    curl_slist_free_all(s->hdrs);
    dra_buf_fini(&s->data);
    dra_free(s->k->mem, s);
}

static long status_of(kube_stream *s)
{
    long code = 0;
    curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
    return code;
}

/* Drives the transfer until the response headers are in (or it ends,
 * or |deadline| passes). */
static void await_headers(kube_stream *s, double deadline)
{
    while (!s->done && !s->headers_done && !atomic_load(&s->canceled)) {
        double left = deadline - kube_now_s();
        if (left <= 0)
            break;
        drive(s, left > 0.2 ? 200 : (int)(left * 1000) + 1);
    }
}

static int request_sent(kube_stream *s)
{
    curl_off_t t = 0;
    return curl_easy_getinfo(s->easy, CURLINFO_PRETRANSFER_TIME_T, &t) ==
               CURLE_OK && t > 0;
}

/* The answer to a watch whose headers came late and were not 200, as the
 * ERROR event a server would have sent: {"type":"ERROR","object":Status}.
 * Consumes the body. */
static dra_err refusal_line(kube_stream *s, long code, dra_buf *line)
{
    dra_kstatus st;
    dra_arena a;
    dra_doc *ev, *obj;
    dra_err err = DRA_ENOMEM;
    memset(&st, 0, sizeof st);
    dra_cluster_status_decode((int)code, "GET",
                              s->data.p ? s->data.p + s->start : NULL,
                              s->data.len - s->start, s->k->mem, &st);
    s->start = s->scan = s->data.len;
    dra_arena_init(&a, s->k->mem);
    ev = dra_doc_new_map(&a, 2);
    obj = dra_doc_new_map(&a, 6);
    if (ev && obj &&
        !dra_doc_map_set(&a, obj, "kind", dra_doc_new_string(&a, "Status", 6)) &&
        !dra_doc_map_set(&a, obj, "apiVersion", dra_doc_new_string(&a, "v1", 2)) &&
        !dra_doc_map_set(&a, obj, "status",
                         dra_doc_new_string(&a, "Failure", 7)) &&
        !dra_doc_map_set(&a, obj, "message",
                         dra_doc_new_string(&a, st.message, strlen(st.message))) &&
        !dra_doc_map_set(&a, obj, "reason",
                         dra_doc_new_string(&a, st.reason, strlen(st.reason))) &&
        !dra_doc_map_set(&a, obj, "code", dra_doc_new_int(&a, code)) &&
        !dra_doc_map_set(&a, ev, "type", dra_doc_new_string(&a, "ERROR", 5)) &&
        !dra_doc_map_set(&a, ev, "object", obj))
        err = dra_doc_to_json(ev, 0, line);
    dra_arena_fini(&a);
    return err;
}

/* For a stream opened before its headers: DRA_OK once they say 200
 * (s->pending cleared), 1 while still waiting, or the result to return
 * (a refusal turned into an ERROR line, DRA_EIO when no answer came). */
static int check_pending(kube_stream *s, dra_buf *line, dra_err *res)
{
    long code;
    if (!s->headers_done && !s->done)
        return 1;
    code = status_of(s);
    if (code == 200 && s->headers_done) {
        s->pending = 0;
        return 0;
    }
    if (!s->done)
        return 1; /* read the whole refusal first */
    s->pending = 0;
    *res = code ? refusal_line(s, code, line) : DRA_EIO;
    return -1;
}

dra_err kube_watch_open(void *ud, const char *path, const char *query,
                        dra_watch_stream **out, dra_kstatus *st)
{
    kube_t *k = ud;
    kube_stream *s = dra_calloc(k->mem, 1, sizeof *s);
    double deadline;
    long code;
    dra_err err;
    if (!s)
        return DRA_ENOMEM;
    s->k = k;
    dra_buf_init(&s->data, k->mem);
    atomic_init(&s->canceled, 0);
    kube_rate_take(&k->rate);
    s->multi = curl_multi_init();
    s->easy = curl_easy_init();
    if (!s->multi || !s->easy) {
        stream_free(s);
        return DRA_ENOMEM;
    }
    err = kube_setup(k, s->easy, path, query, NULL, &s->hdrs, s->errbuf, st);
    if (err) {
        stream_free(s);
        return err;
    }
    curl_easy_setopt(s->easy, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(s->easy, CURLOPT_WRITEDATA, s);
    curl_easy_setopt(s->easy, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(s->easy, CURLOPT_HEADERDATA, s);
    curl_multi_add_handle(s->multi, s->easy);
    deadline = kube_now_s() + (k->timeout_ms > 0 ? k->timeout_ms : 60000) / 1e3;
    await_headers(s, deadline);
    if (!s->headers_done && !s->done && !atomic_load(&s->canceled) &&
        request_sent(s)) {
        /* Connected and asked, but the server holds its headers back
         * (some send them with the first event). Go on; dra_watch_next
         * checks the status when it comes and turns a refusal into an
         * ERROR event. */
        s->pending = 1;
        *out = (dra_watch_stream *)s;
        return DRA_OK;
    }
    code = status_of(s);
    if (code == 0) {
        char *url = NULL;
        if (!s->done)
            s->result = CURLE_OPERATION_TIMEDOUT;
        curl_easy_getinfo(s->easy, CURLINFO_EFFECTIVE_URL, &url);
        err = kube_curl_err(s->result == CURLE_OK ? CURLE_RECV_ERROR
                                                  : s->result,
                            s->errbuf, "GET", url ? url : path, st);
        stream_free(s);
        return err;
    }
    if (code != 200) {
        /* A refusal: its Status body is small; read it and map it. */
        while (!s->done && kube_now_s() < deadline)
            drive(s, 200);
        err = dra_cluster_status_decode((int)code, "GET",
                                        s->data.p ? s->data.p + s->start : NULL,
                                        s->data.len - s->start, k->mem, st);
        stream_free(s);
        return err ? err : DRA_EIO;
    }
    *out = (dra_watch_stream *)s;
    return DRA_OK;
}

/* Hands out the next complete line, if any. */
static int take_line(kube_stream *s, dra_buf *line)
{
    const char *p = s->data.p;
    const char *nl = s->data.len > s->scan
                         ? memchr(p + s->scan, '\n', s->data.len - s->scan)
                         : NULL;
    size_t end;
    if (!nl) {
        s->scan = s->data.len;
        return 0;
    }
    end = (size_t)(nl - p);
    dra_buf_append(line, p + s->start,
                   end - s->start - (end > s->start && p[end - 1] == '\r'));
    s->start = s->scan = end + 1;
    return 1;
}

dra_err kube_watch_next(void *ud, dra_watch_stream *ws, int timeout_ms,
                        dra_buf *line)
{
    kube_stream *s = (kube_stream *)ws;
    double deadline = timeout_ms >= 0 ? kube_now_s() + timeout_ms / 1e3 : 0;
    (void)ud;
    for (;;) {
        if (atomic_load(&s->canceled))
            return DRA_ECANCELED;
        if (s->pending) {
            dra_err res = DRA_OK;
            int r = check_pending(s, line, &res);
            if (r < 0)
                return res;
            if (r > 0) {
                if (timeout_ms >= 0 && kube_now_s() >= deadline)
                    return DRA_ETIMEOUT;
                drive(s, timeout_ms >= 0 ? 50 : 1000);
                continue;
            }
        }
        if (take_line(s, line))
            return line->oom ? DRA_ENOMEM : DRA_OK;
        if (s->overflow)
            return DRA_EIO; /* an event larger than we accept */
        if (s->done) {
            /* A last event without its newline still counts. */
            if (s->data.len > s->start) {
                dra_buf_append(line, s->data.p + s->start,
                               s->data.len - s->start);
                s->start = s->scan = s->data.len;
                return line->oom ? DRA_ENOMEM : DRA_OK;
            }
            return DRA_EIO;
        }
        if (timeout_ms >= 0) {
            double left = deadline - kube_now_s();
            if (left <= 0)
                return DRA_ETIMEOUT;
            drive(s, left > 1.0 ? 1000 : (int)(left * 1000) + 1);
        } else {
            drive(s, 1000);
        }
    }
}

void kube_watch_cancel(void *ud, dra_watch_stream *ws)
{
    kube_stream *s = (kube_stream *)ws;
    (void)ud;
    atomic_store(&s->canceled, 1);
    curl_multi_wakeup(s->multi);
}

void kube_watch_close(void *ud, dra_watch_stream *ws)
{
    (void)ud;
    if (ws)
        stream_free((kube_stream *)ws);
}
