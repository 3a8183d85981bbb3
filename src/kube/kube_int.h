/*
 * kube_int.h: internals of the REST transport shared by config.c (the
 * kubeconfig and in-cluster loaders), transport.c (requests over a pool
 * of libcurl handles) and stream.c (watch streams on curl_multi).
 */
#ifndef DRA_KUBE_INT_H
#define DRA_KUBE_INT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include <curl/curl.h>

#include "dra/kube.h"

#define KUBE_POOL_MAX 16              /* idle easy handles kept */
#define KUBE_MAX_BODY (64u << 20)     /* largest answer or watch line */

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
    /* Bearer token: static, or re-read from a file when it changes. */
    pthread_mutex_t auth_lock;
    const char *token_file;
    char *token;        /* owned (mem); current value, may be NULL */
    dev_t tok_dev;
    ino_t tok_ino;
    off_t tok_size;
    int64_t tok_mtime_ns;
    /* Handles: TLS sessions and DNS shared; idle easy handles pooled. */
    CURLSH *share;
    pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];
    pthread_mutex_t pool_lock;
    CURL *idle[KUBE_POOL_MAX];
    int nidle;
    /* Client-side rate limit (token bucket); qps 0: none. */
    pthread_mutex_t rate_lock;
    double qps, burst, tokens, last_s;
} kube_t;

/* Reads |path| whole into |a| (NUL-terminated). DRA_ENOTFOUND when it
 * does not exist, DRA_EIO when it cannot be read, DRA_ETOOLARGE beyond
 * |max| bytes; a message in |d|. */
DRA_HIDDEN dra_err kube_read_file(dra_arena *a, const char *path, size_t max,
                                  char **out, size_t *len, dra_diag *d);

/* Decodes standard base64 (whitespace skipped) into |a|, NUL-terminated.
 * Returns the offset of the first bad byte + 1 on error, 0 on success,
 * (size_t)-1 on ENOMEM. */
DRA_HIDDEN size_t kube_base64(dra_arena *a, const char *s, size_t n,
                              char **out, size_t *len);

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
/* Waits for the client-side rate limit. */
DRA_HIDDEN void kube_rate_wait(kube_t *k);

/* Watch streams (stream.c): the watch ops of the transport. */
DRA_HIDDEN dra_err kube_watch_open(void *ud, const char *path,
                                   const char *query, dra_watch_stream **out,
                                   dra_kstatus *st);
DRA_HIDDEN dra_err kube_watch_next(void *ud, dra_watch_stream *s,
                                   int timeout_ms, dra_buf *line);
DRA_HIDDEN void kube_watch_cancel(void *ud, dra_watch_stream *s);
DRA_HIDDEN void kube_watch_close(void *ud, dra_watch_stream *s);

/* Monotonic seconds. */
DRA_HIDDEN double kube_now_s(void);

#endif
