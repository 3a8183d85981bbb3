/* fake.c: the scripted transport of fake.h. */
#include <errno.h>
#include <time.h>

#include "dra_test.h"
#include "fake.h"

static char *dup_str(const char *s)
{
    char *p = s ? strdup(s) : NULL;
    if (s)
        assert_non_null(p);
    return p;
}

void fake_init(fake *f)
{
    memset(f, 0, sizeof *f);
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
}

void fake_fini(fake *f)
{
    for (size_t i = 0; i < f->nresp; i++)
        free(f->resp[i].body);
    for (size_t i = 0; i < f->nlog; i++)
        free(f->log[i]);
    for (size_t i = 0; i < f->nstreams; i++) {
        for (size_t j = 0; j < f->streams[i]->n; j++)
            free(f->streams[i]->lines[j]);
        free(f->streams[i]);
    }
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
}

static void logf_req(fake *f, const dra_cluster_req *req)
{
    size_t n = strlen(req->path) + (req->query ? strlen(req->query) : 0) +
               (req->content_type ? strlen(req->content_type) : 0) +
               req->body_len + 32;
    char *s = malloc(n);
    assert_non_null(s);
    snprintf(s, n, "%s %s%s%s|%s|%.*s", req->method, req->path,
             req->query ? "?" : "", req->query ? req->query : "",
             req->content_type ? req->content_type : "", (int)req->body_len,
             req->body ? req->body : "");
    assert_true(f->nlog < sizeof f->log / sizeof f->log[0]);
    f->log[f->nlog++] = s;
}

static dra_err f_request(void *ud, const dra_cluster_req *req, int *code,
                         dra_buf *body, dra_kstatus *st)
{
    fake *f = ud;
    dra_err err = DRA_OK;
    pthread_mutex_lock(&f->mu);
    logf_req(f, req);
    if (f->rpos >= f->nresp) {
        /* Nothing scripted: the server is unreachable. */
        err = DRA_EIO;
        snprintf(st->message, sizeof st->message, "no scripted answer");
    } else {
        size_t i = f->rpos++;
        err = f->resp[i].err;
        if (err == DRA_OK) {
            *code = f->resp[i].code;
            if (f->resp[i].body)
                dra_buf_puts(body, f->resp[i].body);
        } else {
            snprintf(st->message, sizeof st->message, "scripted failure");
        }
    }
    pthread_mutex_unlock(&f->mu);
    return err;
}

static dra_err f_watch_open(void *ud, const char *path, const char *query,
                            dra_watch_stream **out, dra_kstatus *st)
{
    fake *f = ud;
    dra_cluster_req req = {"WATCH", path, query, NULL, NULL, 0};
    fake_stream *s = NULL;
    dra_err err = DRA_OK;
    pthread_mutex_lock(&f->mu);
    logf_req(f, &req);
    f->watch_opens++;
    if (f->spos < f->nstreams)
        s = f->streams[f->spos++];
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    if (!s) {
        snprintf(st->message, sizeof st->message, "no scripted stream");
        return DRA_EIO;
    }
    if (s->open_code) {
        const char *b = s->open_body;
        err = dra_cluster_status_decode(s->open_code, "GET", b,
                                        b ? strlen(b) : 0, NULL, st);
        return err ? err : DRA_EIO;
    }
    *out = (dra_watch_stream *)s;
    return DRA_OK;
}

static dra_err f_watch_next(void *ud, dra_watch_stream *ws, int timeout_ms,
                            dra_buf *line)
{
    fake *f = ud;
    fake_stream *s = (fake_stream *)ws;
    struct timespec until;
    dra_err err = DRA_OK;
    clock_gettime(CLOCK_REALTIME, &until);
    if (timeout_ms >= 0) {
        until.tv_sec += timeout_ms / 1000;
        until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
    }
    pthread_mutex_lock(&f->mu);
    for (;;) {
        if (s->canceled) {
            err = DRA_ECANCELED;
            break;
        }
        if (s->pos < s->n) {
            dra_buf_puts(line, s->lines[s->pos++]);
            break;
        }
        if (s->ended) {
            err = DRA_EIO;
            break;
        }
        if (timeout_ms < 0) {
            pthread_cond_wait(&f->cv, &f->mu);
        } else if (pthread_cond_timedwait(&f->cv, &f->mu, &until) ==
                   ETIMEDOUT) {
            err = DRA_ETIMEOUT;
            break;
        }
    }
    pthread_mutex_unlock(&f->mu);
    return err;
}

static void f_watch_cancel(void *ud, dra_watch_stream *ws)
{
    fake *f = ud;
    pthread_mutex_lock(&f->mu);
    ((fake_stream *)ws)->canceled = 1;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

static void f_watch_close(void *ud, dra_watch_stream *ws)
{
    fake *f = ud;
    pthread_mutex_lock(&f->mu);
    ((fake_stream *)ws)->closed = 1;
    pthread_mutex_unlock(&f->mu);
}

static void f_close(void *ud) { ((fake *)ud)->freed = 1; }

dra_cluster *fake_cluster_mem(fake *f, const dra_mem *mem)
{
    static const dra_cluster_ops ops = {f_request,     f_watch_open,
                                        f_watch_next,  f_watch_cancel,
                                        f_watch_close, f_close};
    return dra_cluster_new(&ops, f, mem);
}

dra_cluster *fake_cluster(fake *f)
{
    dra_cluster *c = fake_cluster_mem(f, NULL);
    assert_non_null(c);
    return c;
}

void fake_resp(fake *f, int code, const char *body)
{
    pthread_mutex_lock(&f->mu);
    assert_true(f->nresp < FAKE_MAX);
    f->resp[f->nresp].code = code;
    f->resp[f->nresp].body = dup_str(body);
    f->resp[f->nresp++].err = DRA_OK;
    pthread_mutex_unlock(&f->mu);
}

void fake_resp_err(fake *f, dra_err err)
{
    pthread_mutex_lock(&f->mu);
    assert_true(f->nresp < FAKE_MAX);
    f->resp[f->nresp].code = 0;
    f->resp[f->nresp].body = NULL;
    f->resp[f->nresp++].err = err;
    pthread_mutex_unlock(&f->mu);
}

int fake_stream_add(fake *f, int open_code, const char *open_body)
{
    fake_stream *s = calloc(1, sizeof *s);
    int i;
    assert_non_null(s);
    s->open_code = open_code;
    s->open_body = open_body;
    pthread_mutex_lock(&f->mu);
    assert_true(f->nstreams < FAKE_MAX);
    i = (int)f->nstreams;
    f->streams[f->nstreams++] = s;
    pthread_mutex_unlock(&f->mu);
    return i;
}

void fake_stream_line(fake *f, int i, const char *line)
{
    pthread_mutex_lock(&f->mu);
    assert_true(f->streams[i]->n < FAKE_MAX);
    f->streams[i]->lines[f->streams[i]->n++] = dup_str(line);
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

void fake_stream_end(fake *f, int i)
{
    pthread_mutex_lock(&f->mu);
    f->streams[i]->ended = 1;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

const char *fake_log(fake *f, size_t i)
{
    const char *s;
    pthread_mutex_lock(&f->mu);
    s = i < f->nlog ? f->log[i] : NULL;
    pthread_mutex_unlock(&f->mu);
    return s;
}

size_t fake_nlog(fake *f)
{
    size_t n;
    pthread_mutex_lock(&f->mu);
    n = f->nlog;
    pthread_mutex_unlock(&f->mu);
    return n;
}

void fake_wait_opens(fake *f, int n)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    pthread_mutex_lock(&f->mu);
    while (f->watch_opens < n)
        if (pthread_cond_timedwait(&f->cv, &f->mu, &until) == ETIMEDOUT) {
            pthread_mutex_unlock(&f->mu);
            fail_msg("waited 20 s for watch number %d", n);
        }
    pthread_mutex_unlock(&f->mu);
}

void fake_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}
