/* bench_watch's HTTP/2 client: the watches as streams of one connection
 * or a few. */
#ifndef BENCH_WATCH_H2_H
#define BENCH_WATCH_H2_H
#include <stdatomic.h>
#include <stddef.h>

#define H2W_MAX_CONNS 64

typedef struct h2w_opts {
    const char *url;   /* https://IPv4:PORT */
    const char *token; /* bearer token */
    const char *ca;    /* PEM file the server's chain must lead to */
    const char *path;  /* path and query of every watch */
    int n;             /* streams */
    int conns;         /* connections they are dealt over, 1..H2W_MAX_CONNS */
    /* Called on the running thread: response headers of stream |i|,
     * then each piece of its body as it comes. */
    void (*on_open)(void *ud, int i);
    void (*on_data)(void *ud, int i, const char *p, size_t len);
    void *ud;
    atomic_int *stop; /* run until it reads non-zero */
} h2w_opts;

/* Opens the connection and the streams and dispatches until *stop or
 * the connection ends: 0, or -1 after printing why. */
int h2w_run(const h2w_opts *o);

#endif
