/*
 * kube_common.h: internals shared by every REST transport and the config
 * loader, free of any HTTP library: file and base64 helpers (config.c),
 * the clock, the bearer token that follows its file, and the client-side
 * rate limit (common.c). transport.c/stream.c (libcurl, kube_int.h) and
 * h2_*.c (nghttp2 + GnuTLS, h2_int.h) build on it.
 */
#ifndef DRA_KUBE_COMMON_H
#define DRA_KUBE_COMMON_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "dra/kube.h"

#define KUBE_MAX_BODY (64u << 20) /* largest answer or watch line */

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

/* Monotonic seconds. */
DRA_HIDDEN double kube_now_s(void);

/* The bearer token: static, or re-read from a file whenever the file
 * changes (device, inode, size or mtime), since projected
 * service-account tokens rotate. Safe from several threads. */
typedef struct kube_token {
    const dra_mem *mem;
    pthread_mutex_t lock;
    char *file;  /* owned (mem); NULL: static token only */
    char *value; /* owned (mem); current value, may be NULL */
    dev_t dev;
    ino_t ino;
    off_t size;
    int64_t mtime_ns;
} kube_token;

/* Takes the token settings of |cfg|; reads the file now, since a missing
 * token file is a configuration error (client-go keeps the static token
 * when the file fails and one is set). DRA_OK; DRA_EIO (message in |d|);
 * DRA_ENOMEM. Fini it whatever the result. */
DRA_HIDDEN dra_err kube_token_init(kube_token *t, const dra_kube_config *cfg,
                                   const dra_mem *mem, dra_diag *d);
DRA_HIDDEN void kube_token_fini(kube_token *t);
/* Appends the current token (re-read when its file changed) to |out|;
 * nothing when there is none. DRA_OK; DRA_EIO when the file cannot be
 * read and no earlier value exists (message in |st|); DRA_ENOMEM. */
DRA_HIDDEN dra_err kube_token_get(kube_token *t, dra_buf *out,
                                  dra_kstatus *st);

/* client-go's token bucket: qps 0 means no limit. */
typedef struct kube_rate {
    pthread_mutex_t lock;
    double qps, burst, tokens, last_s;
} kube_rate;

DRA_HIDDEN void kube_rate_init(kube_rate *r, double qps, int burst);
DRA_HIDDEN void kube_rate_fini(kube_rate *r);
/* Sleeps until the bucket allows one more request. */
DRA_HIDDEN void kube_rate_take(kube_rate *r);

#endif
