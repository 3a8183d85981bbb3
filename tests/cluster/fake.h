/*
 * fake.h: a scripted transport for the generic cluster layer. Requests
 * are answered from a queue of canned responses and logged; watch
 * streams are queues of lines the test feeds (from any thread), ending
 * with "stream ended" or blocking until cancelled. Thread-safe, so the
 * reflector's thread can use it while the test drives it.
 */
#ifndef DRA_TEST_CLUSTER_FAKE_H
#define DRA_TEST_CLUSTER_FAKE_H

#include <pthread.h>

#include "dra/cluster.h"

#define FAKE_MAX 512

typedef struct fake_stream {
    char *lines[FAKE_MAX];
    size_t n, pos;
    int ended;     /* after the lines: DRA_EIO instead of blocking */
    int canceled;
    int open_code; /* != 0: watch_open answers this code and open_body */
    const char *open_body;
    int closed;
} fake_stream;

typedef struct fake {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct {
        int code;
        char *body;
        dra_err err;
    } resp[FAKE_MAX];
    size_t nresp, rpos;
    char *log[FAKE_MAX * 4]; /* "METHOD path?query|content-type|body" */
    size_t nlog;
    fake_stream *streams[FAKE_MAX];
    size_t nstreams, spos;
    int watch_opens;
    int freed; /* set by ops.close */
} fake;

void fake_init(fake *f);
void fake_fini(fake *f);
/* A cluster over |f| (ops.close only marks f->freed). */
dra_cluster *fake_cluster(fake *f);
/* The same allocating through |mem|; NULL on ENOMEM. */
dra_cluster *fake_cluster_mem(fake *f, const dra_mem *mem);

/* Queues the answer of the next request(): an HTTP code and body, or a
 * transport error when |err| != DRA_OK. */
void fake_resp(fake *f, int code, const char *body);
void fake_resp_err(fake *f, dra_err err);
/* Queues a watch stream for the next watch_open; returns its index. */
int fake_stream_add(fake *f, int open_code, const char *open_body);
void fake_stream_line(fake *f, int s, const char *line);
void fake_stream_end(fake *f, int s);

/* The i-th logged request (NULL past the end); how many were logged. */
const char *fake_log(fake *f, size_t i);
size_t fake_nlog(fake *f);
/* Waits until |n| watches have been opened; fails the test after 20 s
 * (a hang guard, not a timing assertion). */
void fake_wait_opens(fake *f, int n);
void fake_sleep_ms(long ms);

#endif
