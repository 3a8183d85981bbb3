/*
 * dra/apiserver.h: drad's Kubernetes-compatible API server. The core is
 * an I/O-free request handler (dra_apiserver_handle: a parsed request in,
 * a status code, a body and maybe a stream out) over the object store
 * (dra/store.h); tests and the fuzzer drive it without a socket. Around
 * it: the in-process cluster transport (controllers inside drad call the
 * handler directly), and the HTTPS front ends (HTTP/1.1 over
 * libmicrohttpd, HTTP/2 over nghttp2, both GnuTLS with a bearer token or
 * client certificate), with the credentials they need.
 *
 * Semantics follow kube-apiserver 1.35: defaulting and validation from
 * the api module with kube's 422 Status and causes, one resourceVersion
 * counter, optimistic concurrency, generateName, uid, creationTimestamp,
 * generation, the status subresource split, finalizers and
 * deletionTimestamp, owner references with background, foreground and
 * orphan deletion, namespace deletion, selectors, paged lists, watch
 * with bookmarks and 410 Gone (docs/drad.md lists what is served).
 *
 * Threads: the handler may be called from any number of threads at once.
 */
#ifndef DRA_APISERVER_H
#define DRA_APISERVER_H

#include <stddef.h>
#include <stdint.h>

#include "dra/base.h"
#include "dra/cluster.h"
#include "dra/store.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dra_apiserver dra_apiserver;

/* ---- streams (watch, log -f) --------------------------------------------
 * A response body that continues after the handler returns. The reader
 * (the HTTP front end, the in-process transport) polls it without
 * blocking and is woken through the notify callback when more may be
 * ready. A stream is read by one thread at a time. */
typedef struct dra_stream_ops {
    /* Appends what is ready to |out| (possibly nothing) and sets *eof
     * once the stream has ended (after its last bytes). DRA_OK; DRA_ENOMEM.
     * Never blocks. A read that stops with more ready (it bounds its
     * output) calls notify before it returns, so a reader needs to read
     * only once per notify (and once at the start). */
    dra_err (*read)(void *ud, dra_buf *out, int *eof);
    /* Installs |notify| (NULL: none), called from any thread whenever a
     * read may return more or the end; it must not call back into the
     * stream. It may be called spuriously. */
    void (*set_notify)(void *ud, void (*notify)(void *arg), void *arg);
    /* Ends the stream and frees it; notify is not called after this
     * returns. */
    void (*close)(void *ud);
} dra_stream_ops;

typedef struct dra_stream {
    const dra_stream_ops *ops;
    void *ud;
} dra_stream;

/* Convenience wrappers over |s->ops|. close(NULL) is a no-op. */
dra_err dra_stream_read(dra_stream *s, dra_buf *out, int *eof);
void dra_stream_set_notify(dra_stream *s, void (*notify)(void *arg), void *arg);
void dra_stream_close(dra_stream *s);

/* ---- pod logs ---------------------------------------------------------------
 * The node agent answers GET pods/NAME/log through this hook. Without one
 * the server answers as kube-apiserver does for a pod whose container has
 * not started. */
typedef struct dra_log_opts {
    const char *container; /* never NULL: the resolved container name */
    int follow;
    int previous;
    int timestamps;
    int64_t tail_lines;  /* -1: all */
    int64_t limit_bytes; /* -1: no limit */
    int64_t since_seconds; /* -1: from the start */
} dra_log_opts;

/* Returns the log of |container| of the pod |ns|/|name| as a stream that
 * ends after the log (or, with follow, when the container ends). On an
 * error, fills |st| (code, reason, message: 400 BadRequest for a
 * container that is not running, say) and returns the mapped error. */
typedef dra_err (*dra_log_source_fn)(void *ud, const char *ns,
                                     const char *name, const char *pod_uid,
                                     const dra_log_opts *opts,
                                     dra_stream **out, dra_kstatus *st);

/* ---- the server ------------------------------------------------------------- */

typedef struct dra_apiserver_opts {
    dra_store *store;   /* required; borrowed, must outlive the server */
    /* host:port clients reach the server at (discovery's
     * serverAddressByClientCIDRs); may be NULL. */
    const char *server_address;
    size_t max_body; /* request bodies above this are 413; 0: 3 MiB */
    /* Pods bound to a node are deleted gracefully (deletionTimestamp and
     * a grace period, removed by the node agent) when set; otherwise, and
     * for unbound pods or gracePeriodSeconds=0, at once. */
    int graceful_pods;
    /* The garbage collector and namespace controller follow the store's
     * commits (a round at most every 20 ms, looking only at what
     * changed); this period in ms (0: 30000) is when work that failed
     * (a full disk, say) is retried by reading everything again. */
    int gc_period_ms;
    /* How often a watch with allowWatchBookmarks gets a BOOKMARK, in ms
     * (0: 60000, about what kube-apiserver does). */
    int bookmark_ms;
} dra_apiserver_opts;

/* Creates the server over opts->store: makes sure the namespaces
 * default, kube-system, kube-public and kube-node-lease exist and starts
 * the background thread (garbage collection, namespace deletion, watch
 * bookmarks and timeouts). |mem| may be NULL. DRA_OK; DRA_EINVAL without
 * a store; DRA_EIO (the store refused the namespaces; |d| says why);
 * DRA_ENOMEM. */
dra_err dra_apiserver_new(const dra_apiserver_opts *opts, const dra_mem *mem,
                          dra_apiserver **out, dra_diag *d);
/* Stops the background thread and frees the server. Streams, clusters
 * and HTTP front ends made from it must be gone first. NULL: no-op. */
void dra_apiserver_free(dra_apiserver *srv);

/* Installs (or with |fn| NULL removes) the pod log source. */
void dra_apiserver_set_log_source(dra_apiserver *srv, dra_log_source_fn fn,
                                  void *ud);

/* One request, as the HTTP layer parsed it. Everything is borrowed for
 * the call. */
typedef struct dra_apiserver_req {
    const char *method; /* GET, POST, PUT, PATCH, DELETE, HEAD, ... */
    const char *path;   /* percent-decoded path, without the query */
    const char *query;  /* raw (still encoded) query string, or NULL */
    const char *accept;       /* Accept header, or NULL */
    const char *content_type; /* Content-Type header, or NULL */
    const char *user;         /* authenticated user, or NULL */
    const char *body;
    size_t body_len;
    /* The body as a document, for a caller in the same process (the
     * in-process cluster transport), instead of |body|: taken as the JSON
     * text of it would be read (dra_doc_copy_json), for a POST or PUT of
     * JSON. Never changed. */
    const dra_doc *body_doc;
    /* For a caller in the same process (may be NULL): a create's or an
     * update's answer, the object as stored, may come as |resp->doc| in
     * this arena instead of body text: the document dra_doc_parse_json
     * would read from that text. */
    dra_arena *reply_arena;
} dra_apiserver_req;

/* The answer. |body| and the header strings are the response's; free it
 * with dra_apiserver_resp_fini. When |stream| is set the body continues
 * with what the stream yields, and the response owns the stream until
 * the caller takes it (sets the field to NULL). */
typedef struct dra_apiserver_resp {
    int code;
    char content_type[128];
    dra_buf body;
    char warning[512]; /* a Warning header value ("299 - \"...\""), or "" */
    char cache_control[64]; /* a Cache-Control value, or "" */
    dra_stream *stream;
    /* The answer as a document in the request's reply_arena, the body
     * then empty; NULL when the answer is text. */
    dra_doc *doc;
} dra_apiserver_resp;

void dra_apiserver_resp_init(dra_apiserver_resp *r, const dra_mem *mem);
void dra_apiserver_resp_fini(dra_apiserver_resp *r);

/* Answers |req| into |resp| (initialised by the caller). Every outcome,
 * errors included, is an HTTP answer in |resp| (a Status body for
 * errors), and DRA_OK is returned; other codes only for DRA_ENOMEM
 * when not even an error answer could be built, and DRA_EUNSUPPORTED,
 * with nothing answered, when |req->body_doc| cannot be taken as it is
 * (another method or media type, a body also given as text, a document
 * whose JSON would read back differently or could pass the body limit):
 * the caller then sends its JSON text instead. */
dra_err dra_apiserver_handle(dra_apiserver *srv, const dra_apiserver_req *req,
                             dra_apiserver_resp *resp);

/* ---- the in-process transport ----------------------------------------------- */

/* A cluster client (cluster.h) whose requests go straight to |srv|'s
 * handler, with no socket and no authentication, and whose watches
 * read the server's streams. Owned by the caller: dra_cluster_free it
 * before dra_apiserver_free. NULL on ENOMEM. */
dra_cluster *dra_apiserver_cluster(dra_apiserver *srv);

/* ---- credentials --------------------------------------------------------------
 * What drad creates in its data directory at the first start and reuses
 * afterwards: a self-signed CA, a serving certificate for 127.0.0.1 and
 * localhost signed by it, a client certificate for the admin user, and a
 * random bearer token. PEM texts are NUL-terminated and owned by the
 * struct. */
typedef struct dra_apiserver_creds {
    const dra_mem *mem;
    char *ca_cert, *ca_key;
    char *server_cert, *server_key;
    char *client_cert, *client_key;
    char *token;
} dra_apiserver_creds;

/* Loads the credentials from |dir| (ca.crt, ca.key, server.crt,
 * server.key, admin.crt, admin.key, token), creating whatever is
 * missing with GnuTLS (files mode 0600, keys ECDSA P-256, valid ten
 * years). DRA_OK; DRA_EIO (a file cannot be read or written: |d| says
 * which); DRA_ENOMEM. */
dra_err dra_apiserver_creds_load(const char *dir, const dra_mem *mem,
                                 dra_apiserver_creds *out, dra_diag *d);
void dra_apiserver_creds_fini(dra_apiserver_creds *c);

/* ---- the HTTPS front end --------------------------------------------------------- */

typedef struct dra_apiserver_http dra_apiserver_http;

typedef struct dra_apiserver_http_opts {
    const char *host;  /* address to bind: NULL means 127.0.0.1 */
    int port;          /* 0: a free port (read it back) */
    const dra_apiserver_creds *creds; /* required; borrowed for the life */
    int threads;       /* connection threads (0: 2) */
    int workers;       /* threads running write requests (0: 64); each
                        * waits on a group commit, so more workers mean
                        * bigger commits */
} dra_apiserver_http_opts;

/* Starts serving HTTPS on host:port. Every request must carry
 * "Authorization: Bearer <token>" or a client certificate signed by the
 * CA; others get 401 with a Status body. DRA_OK; DRA_EIO (cannot bind,
 * TLS setup failed; |d| says why); DRA_ENOMEM. */
dra_err dra_apiserver_http_start(dra_apiserver *srv,
                                 const dra_apiserver_http_opts *opts,
                                 dra_apiserver_http **out, dra_diag *d);
/* The port actually bound. */
int dra_apiserver_http_port(const dra_apiserver_http *h);
/* Stops accepting, ends open watch and log streams, waits for requests
 * in flight, and frees. NULL: no-op. */
void dra_apiserver_http_stop(dra_apiserver_http *h);

/* ---- the HTTP/2 front end ----------------------------------------------------------
 * The same API over HTTP/2 on TLS (nghttp2 + GnuTLS), as kubectl and
 * client-go speak it: ALPN offers only "h2" (a client offering only
 * other protocols fails the handshake, one offering none is closed
 * right after it), one request per stream, up
 * to 1,000 concurrent streams per connection, watches multiplexed. */

typedef struct dra_apiserver_h2 dra_apiserver_h2;

/* Starts serving HTTP/2 on host:port with the options and the
 * authentication of dra_apiserver_http_start (the same 401 Status);
 * |opts->threads| connection threads, |opts->workers| write workers.
 * The result is the caller's: dra_apiserver_h2_stop it before
 * dra_apiserver_free. DRA_OK; DRA_EINVAL (no credentials, |d| may say
 * the host is not an IP address); DRA_EIO (cannot bind, TLS setup or
 * threads failed; |d| says why); DRA_ENOMEM. */
dra_err dra_apiserver_h2_start(dra_apiserver *srv, const dra_apiserver_http_opts *opts,
                               dra_apiserver_h2 **out, dra_diag *d);
/* The port actually bound. */
int dra_apiserver_h2_port(const dra_apiserver_h2 *h);
/* Stops accepting, sends GOAWAY, ends open watch and log streams,
 * gives answers in flight up to 2 s to go out, waits for the write
 * workers, and frees. NULL: no-op. */
void dra_apiserver_h2_stop(dra_apiserver_h2 *h);

#ifdef __cplusplus
}
#endif
#endif
