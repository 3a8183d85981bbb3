/*
 * h2_int.h: internals of the HTTP/2 REST transport (nghttp2 + GnuTLS,
 * no libcurl). h2_transport.c holds the cluster ops the callers' threads
 * run; h2_conn.c the I/O thread that alone touches sockets, TLS sessions
 * and nghttp2 sessions. They meet under h2_t.lock: a queue of calls to
 * submit, a list of calls that need the I/O thread's attention, and a
 * condition variable per call.
 */
#ifndef DRA_KUBE_H2_INT_H
#define DRA_KUBE_H2_INT_H

#include <pthread.h>

#include <gnutls/gnutls.h>
#include <nghttp2/nghttp2.h>

#include "kube_common.h"

#define H2_STREAM_WINDOW (1 << 20)  /* per stream: bounds a watch's backlog */
#define H2_CONN_WINDOW (16 << 20)   /* the connection: never the bottleneck */

typedef struct h2_conn h2_conn;
typedef struct h2_t h2_t;

typedef enum h2_kind { H2_REQ, H2_WATCH } h2_kind;

/* One request or watch: one HTTP/2 stream. Owned by references (the
 * caller's, the I/O thread's while queued or open, the dirty list's);
 * every field below |refs| is read and written under h2_t.lock. */
typedef struct h2_call {
    h2_t *h;
    h2_kind kind;
    int refs;
    pthread_cond_t cv;
    dra_arena a;               /* header strings, the URL */
    nghttp2_nv *nva;
    size_t nvlen;
    const char *method, *url;  /* for messages */
    const char *body;          /* the caller's; read only while it waits */
    size_t body_len, body_off;
    struct h2_call *qnext;     /* submission queue */
    struct h2_call *dnext;     /* dirty list */
    int in_dirty;
    h2_conn *conn;             /* once submitted */
    struct h2_call *cprev, *cnext; /* the conn's calls */
    int32_t id;                /* stream id, 0 before submission */
    int retried;               /* resubmitted after GOAWAY refused it */
    int status;                /* :status */
    int headers_done, done;
    dra_err err;               /* a transport failure, message in msg */
    char msg[512];
    dra_buf data;              /* answer body / watch bytes */
    size_t start;              /* watch: bytes handed out */
    int has_line;              /* watch: data[start..] holds a '\n' */
    size_t deferred;           /* watch: not yet returned to the window */
    size_t to_consume;         /* watch: released, for the I/O thread */
    int cut;                   /* watch: reset or connection lost, so a
                                * partial last line is not an event */
    int canceled, abandoned;
} h2_call;

/* The transport (the |ud| of its dra_cluster_ops). */
struct h2_t {
    const dra_mem *mem;
    nghttp2_mem nmem;
    dra_arena arena;              /* settings strings below */
    const char *base;             /* https://host:port[/prefix] */
    const char *host, *port;      /* where to connect */
    const char *authority, *prefix;
    const char *verify_name;      /* name checked in the certificate */
    const char *sni;              /* NULL for an IP address */
    const char *basic;            /* "Basic ..." or NULL */
    int insecure, timeout_ms, connect_timeout_ms;
    gnutls_certificate_credentials_t cred;
    kube_token token;
    kube_rate rate;
    pthread_mutex_t lock;
    pthread_t thread;
    int started, stop, evfd;
    h2_call *qhead, *qtail;       /* waiting for a stream */
    h2_call *dirty;               /* abandoned or consumed: act on it */
    h2_conn *conns;               /* the first takes new streams unless
                                   * it is draining after GOAWAY */
};

/* Fills |m| so nghttp2 allocates through |mem|. */
DRA_HIDDEN void h2_nghttp2_mem(nghttp2_mem *m, const dra_mem *mem);

/* The I/O thread's body (pthread start routine; |arg| is the h2_t). */
DRA_HIDDEN void *h2_io_main(void *arg);

/* Wakes the I/O thread. */
DRA_HIDDEN void h2_wake(h2_t *h);

/* Drops one reference to |c|, freeing it at zero. Under h->lock. */
DRA_HIDDEN void h2_call_release(h2_call *c);

/* Ends |c| with a transport error: client-go's wording,
 * <Verb> "<url>": <why>. Under h->lock. */
DRA_HIDDEN void h2_call_fail(h2_call *c, dra_err err, const char *why);

#endif
