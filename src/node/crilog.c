/*
 * crilog.c: reads the CRI-format logs dra-shim writes, the way the
 * kubelet serves `kubectl logs`: partial records joined into lines,
 * --tail, --since-time, --limit-bytes, --timestamps and --follow (which
 * keeps reading while the container runs).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "node_int.h"

/* One parsed record; pointers into the reader's buffer. */
typedef struct rec {
    const char *ts;
    size_t ts_len;
    int64_t ns;
    int partial;
    const char *text;
    size_t len;
} rec;

/* "<ts> <stream> <P|F> <content>"; 0 or -1 for a malformed record. */
static int rec_parse(const char *p, size_t n, rec *r)
{
    const char *sp1 = memchr(p, ' ', n), *sp2, *end = p + n;
    if (!sp1 || node_parse_time(p, (size_t)(sp1 - p), &r->ns) != 0)
        return -1;
    r->ts = p;
    r->ts_len = (size_t)(sp1 - p);
    if (!(sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1))) || sp2 + 2 > end)
        return -1;
    if (sp2[1] != 'P' && sp2[1] != 'F')
        return -1;
    r->partial = sp2[1] == 'P';
    if (sp2 + 2 == end) {
        r->text = end;
        r->len = 0;
        return 0;
    }
    if (sp2[2] != ' ')
        return -1;
    r->text = sp2 + 3;
    r->len = (size_t)(end - r->text);
    return 0;
}

typedef struct reader {
    int fd;
    char buf[64 * 1024];
    size_t len, off;
} reader;

/* The next complete record (without its newline) or NULL when the file
 * has no complete record left for now. A record longer than the buffer
 * (not one dra-shim writes) is dropped. */
static const char *next_line(reader *rd, size_t *n)
{
    for (;;) {
        char *nl = memchr(rd->buf + rd->off, '\n', rd->len - rd->off);
        ssize_t r;
        if (nl) {
            const char *line = rd->buf + rd->off;
            *n = (size_t)(nl - line);
            rd->off = (size_t)(nl - rd->buf) + 1;
            return line;
        }
        if (rd->off > 0) {
            memmove(rd->buf, rd->buf + rd->off, rd->len - rd->off);
            rd->len -= rd->off;
            rd->off = 0;
        }
        if (rd->len == sizeof rd->buf)
            rd->len = 0;
        r = read(rd->fd, rd->buf + rd->len, sizeof rd->buf - rd->len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return NULL;
        rd->len += (size_t)r;
    }
}

typedef struct out {
    const dra_node_log_opts *o;
    int (*write)(void *ud, const char *p, size_t n);
    void *ud;
    int64_t skip;    /* full lines still to skip for --tail */
    int64_t written; /* bytes, for --limit-bytes */
    int mid_line;    /* inside a line made of partial records */
    int stop;        /* 1: limit reached; 2: the writer said stop */
} out;

static void emit(out *w, const char *p, size_t n)
{
    if (w->stop || n == 0)
        return;
    if (w->o->limit_bytes > 0 && w->written + (int64_t)n > w->o->limit_bytes) {
        n = (size_t)(w->o->limit_bytes - w->written);
        w->stop = 1;
    }
    w->written += (int64_t)n;
    if (n && w->write(w->ud, p, n) != 0)
        w->stop = 2;
}

static void emit_rec(out *w, const rec *r)
{
    int starts = !w->mid_line;
    w->mid_line = r->partial;
    if (w->skip > 0) {
        if (!r->partial)
            w->skip--;
        return;
    }
    if (starts && w->o->timestamps) {
        emit(w, r->ts, r->ts_len);
        emit(w, " ", 1);
    }
    emit(w, r->text, r->len);
    if (!r->partial)
        emit(w, "\n", 1);
}

static int wanted(const dra_node_log_opts *o, const rec *r)
{
    return o->since_ns <= 0 || r->ns >= o->since_ns;
}

/* Full lines in the file that pass --since: the count --tail needs. */
static int64_t count_lines(const char *path, const dra_node_log_opts *o)
{
    reader *rd = dra_malloc(NULL, sizeof *rd);
    const char *line;
    size_t n;
    int64_t count = 0;
    rec r;
    if (!rd)
        return 0;
    rd->len = rd->off = 0;
    if ((rd->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        dra_free(NULL, rd);
        return 0;
    }
    while ((line = next_line(rd, &n)) != NULL)
        if (rec_parse(line, n, &r) == 0 && !r.partial && wanted(o, &r))
            count++;
    close(rd->fd);
    dra_free(NULL, rd);
    return count;
}

/* Drains what the file holds now. */
static void pump(reader *rd, out *w)
{
    const char *line;
    size_t n;
    rec r;
    while (!w->stop && (line = next_line(rd, &n)) != NULL)
        if (rec_parse(line, n, &r) == 0 && wanted(w->o, &r))
            emit_rec(w, &r);
}

static void follow(reader *rd, out *w)
{
    const dra_node_log_opts *o = w->o;
    for (;;) {
        int ended = o->done ? o->done(o->done_ud) : 0;
        pump(rd, w);
        if (w->stop || ended)
            return;
        if (o->cancel && o->cancel(o->cancel_ud)) {
            w->stop = 2;
            return;
        }
        /* Regular files are always readable: a short sleep is the poll. */
        poll(NULL, 0, 50);
    }
}

dra_err dra_node_log_read(const char *path, const dra_node_log_opts *opts,
                     int (*write)(void *ud, const char *p, size_t n),
                     void *ud)
{
    dra_node_log_opts none;
    out w;
    reader *rd;
    if (!opts) {
        memset(&none, 0, sizeof none);
        none.tail_lines = -1;
        opts = &none;
    }
    memset(&w, 0, sizeof w);
    w.o = opts;
    w.write = write;
    w.ud = ud;
    if (!(rd = dra_malloc(NULL, sizeof *rd)))
        return DRA_ENOMEM;
    rd->len = rd->off = 0;
    if ((rd->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        int e = errno;
        dra_free(NULL, rd);
        return e == ENOENT ? DRA_ENOTFOUND : DRA_EIO;
    }
    if (opts->tail_lines >= 0) {
        int64_t total = count_lines(path, opts);
        w.skip = total > opts->tail_lines ? total - opts->tail_lines : 0;
    }
    if (opts->follow)
        follow(rd, &w);
    else
        pump(rd, &w);
    close(rd->fd);
    dra_free(NULL, rd);
    return w.stop == 2 ? DRA_ECANCELED : DRA_OK;
}
