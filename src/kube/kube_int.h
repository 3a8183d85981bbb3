/*
 * kube_int.h: internals of the libcurl REST transport shared by
 * transport.c (requests over a pool of libcurl handles) and stream.c
 * (watch streams on curl_multi). What is not about libcurl lives in
 * kube_common.h, which the HTTP/2 transport uses too.
 */
#ifndef DRA_KUBE_INT_H
#define DRA_KUBE_INT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include <curl/curl.h>

#include "kube_common.h"

#define KUBE_POOL_MAX 16              /* idle easy handles kept */

/* The transport's state (the |ud| of its dra_cluster_ops). */
typedef struct kube_t {
    const dra_mem *mem;
    dra_arena arena; /* strings below */
    const char *base; /* server URL without trailing '/' */
    const char *ca_path, *cert_path, *key_path; /* files curl reads */
    int fds[3]; /* memfds behind the paths above, -1 when none */
    int insecure, http2;
    struct curl_slist *connect_to; /* tls-server-name: connect here */
    long timeout_ms, connect_timeout_ms;
    const char *username, *password;
    kube_token token; /* bearer token, following its file */
    /* Handles: TLS sessions and DNS shared; idle easy handles pooled. */
    CURLSH *share;
    pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];
    pthread_mutex_t pool_lock;
    CURL *idle[KUBE_POOL_MAX];
    int nidle;
    kube_rate rate; /* client-side rate limit */
} kube_t;

/* Common options of every easy handle: URL, TLS, auth, timeouts,
 * headers. |hdrs| receives the header list to free after the transfer.
 * DRA_OK, DRA_ENOMEM, or DRA_EIO when the token file cannot be read
 * (message in |st|). */
DRA_HIDDEN dra_err kube_setup(kube_t *k, CURL *h, const char *path,
                              const char *query, const char *ctype,
                              struct curl_slist **hdrs, char *errbuf,
                              dra_kstatus *st);
/* A transfer's CURLcode as a dra_err, with the message in |st|. */
DRA_HIDDEN dra_err kube_curl_err(CURLcode rc, const char *errbuf,
                                 const char *method, const char *url,
                                 dra_kstatus *st);

/* Watch streams (stream.c): the watch ops of the transport. */
DRA_HIDDEN dra_err kube_watch_open(void *ud, const char *path,
                                   const char *query, dra_watch_stream **out,
                                   dra_kstatus *st);
DRA_HIDDEN dra_err kube_watch_next(void *ud, dra_watch_stream *s,
                                   int timeout_ms, dra_buf *line);
DRA_HIDDEN void kube_watch_cancel(void *ud, dra_watch_stream *s);
DRA_HIDDEN void kube_watch_close(void *ud, dra_watch_stream *s);

#endif
