/*
 * dra/kube.h: the REST transports of dra/cluster.h. Talk to any
 * Kubernetes API server (a real kube-apiserver or drad) over libcurl
 * (dra_kube_cluster_new, library dra_kube) or over HTTP/2 with nghttp2 +
 * GnuTLS (dra_kube_h2_cluster_new, library dra_kube_h2), configured from
 * a kubeconfig with kubectl's rules or from the in-cluster service
 * account (library dra_kubeconfig, which both link).
 *
 * Config precedence (kubectl's): an explicit path; else $KUBECONFIG, a
 * colon-separated list whose files are merged (the first file to define
 * a cluster, user or context name, or current-context, wins; missing
 * files are skipped); else ~/.kube/config; when none of these exists and
 * KUBERNETES_SERVICE_HOST is set, the in-cluster config. Relative file
 * paths in a kubeconfig are relative to the file that names them.
 * Not supported (a clear DRA_EUNSUPPORTED naming the user): exec
 * credential plugins, auth-provider plugins, proxy-url, impersonation.
 *
 * Threads: a config is plain data; the cluster it makes may be used from
 * several threads at once (cluster.h).
 */
#ifndef DRA_KUBE_H
#define DRA_KUBE_H

#include <stddef.h>

#include "dra/base.h"
#include "dra/cluster.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where the in-cluster service account lives. */
#define DRA_KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* A resolved client configuration: one server, one identity. Every
 * string lives in |arena| (owned; dra_kube_config_fini frees it); a
 * caller that edits a field points it at memory that outlives the
 * config. PEM data fields are decoded bytes (NUL-terminated as well);
 * data wins over the matching file, as in client-go. */
typedef struct dra_kube_config {
    dra_arena arena;
    const char *server;          /* https://host:port[/prefix], no trailing '/' */
    const char *tls_server_name; /* SNI and name checked in the server's cert */
    const char *ca_file;
    const char *ca_data;
    size_t ca_len;
    int insecure;                /* insecure-skip-tls-verify */
    const char *cert_file, *cert_data;
    size_t cert_len;
    const char *key_file, *key_data;
    size_t key_len;
    const char *token;      /* bearer token */
    const char *token_file; /* re-read whenever it changes; wins over token */
    const char *username, *password; /* basic auth */
    const char *ns;         /* the context's namespace, "default" when unset */
    const char *context, *cluster, *user; /* names, for messages */
    /* Transport settings; load fills the defaults, callers may change them. */
    int timeout_ms;         /* one request, whole; 0: none (default 60000) */
    int connect_timeout_ms; /* default 10000 */
    double qps;             /* client-side rate limit; 0: none (default) */
    int burst;              /* bucket size with qps (default 10) */
    int http2;              /* 1: offer HTTP/2 over TLS; 0: HTTP/1.1 (default) */
} dra_kube_config;

/* An empty config with the default transport settings. */
void dra_kube_config_init(dra_kube_config *cfg, const dra_mem *mem);
void dra_kube_config_fini(dra_kube_config *cfg);

/* Loads the kubeconfig as kubectl would (precedence above) and resolves
 * |context| (NULL: current-context) into |cfg| (initialised here; fini it
 * whatever the result). Errors, each with a message in |d| worded like
 * kubectl's where it has one:
 *   DRA_ENOTFOUND  an explicit |path| that does not exist;
 *   DRA_EPARSE     a file that is not a kubeconfig (YAML errors with
 *                  their position);
 *   DRA_EINVALID   "invalid configuration: ..." (no configuration, the
 *                  context, cluster or user not found, no server,
 *                  client certificate without key, bad base64, ...);
 *   DRA_EUNSUPPORTED  exec / auth-provider users, proxy-url;
 *   DRA_EIO        a file that cannot be read; DRA_ENOMEM. */
dra_err dra_kube_config_load(dra_kube_config *cfg, const char *path,
                             const char *context, const dra_mem *mem,
                             dra_diag *d);

/* The in-cluster config: server https://$KUBERNETES_SERVICE_HOST:
 * $KUBERNETES_SERVICE_PORT, token and CA from |sa_dir| (NULL:
 * DRA_KUBE_SA_DIR) files "token" (re-read as it rotates) and "ca.crt",
 * namespace from $POD_NAMESPACE, else the "namespace" file, else
 * "default". DRA_ENOTFOUND when the environment variables are unset
 * ("unable to load in-cluster configuration, ..."), DRA_EIO when the
 * token cannot be read, DRA_ENOMEM. */
dra_err dra_kube_config_in_cluster(dra_kube_config *cfg, const char *sa_dir,
                                   const dra_mem *mem, dra_diag *d);

/* A cluster (cluster.h) speaking REST to cfg->server. |cfg| is copied;
 * it may be freed afterwards. PEM data is handed to libcurl as in-memory
 * files (memfd), never written to disk. Requests send Accept:
 * application/json, Accept-Encoding (gzip), User-Agent dra/<version>, the
 * bearer token or client certificate; keep-alive connections are reused.
 * Watches run on their own connection through curl_multi, so
 * dra_watch_next honours its timeout and dra_watch_cancel wakes it at
 * once. Transport failures are DRA_EIO (DRA_ETIMEOUT on a timeout) with
 * curl's message in the dra_kstatus. Errors here: DRA_EINVAL (no
 * server, or a server URL that is not http(s)), DRA_EIO (a credential
 * file that cannot be read, libcurl unavailable), DRA_ENOMEM; the
 * message goes to |d|. */
dra_err dra_kube_cluster_new(const dra_kube_config *cfg, const dra_mem *mem,
                             dra_cluster **out, dra_diag *d);

/* A cluster speaking HTTP/2 over TLS (ALPN h2) to cfg->server on one
 * connection, as client-go does, with nghttp2 and GnuTLS only (library
 * dra_kube_h2: no libcurl in the process). Same semantics as
 * dra_kube_cluster_new for everything the cluster ops do (headers, error
 * mapping, credentials, tls-server-name, timeouts, rate limit, 64 MiB
 * answers and watch events), except: no Accept-Encoding, and a watch
 * whose response headers do not come within timeout_ms fails
 * (DRA_ETIMEOUT) rather than opening late. Every request and watch is a
 * stream on that connection, driven by one I/O thread; the connection is
 * made at the first request (creating the cluster does not dial) and
 * again after it breaks: requests in flight then fail with DRA_EIO,
 * watches end (DRA_EIO from dra_watch_next), and a request the server
 * refused unprocessed (GOAWAY) is sent once more on a new connection.
 * Watches use HTTP/2 flow control, so a slow consumer holds back the
 * server and not the client's memory. Close every watch before
 * dra_cluster_free. Errors here: DRA_EINVAL (no server, or one that is
 * not https://), DRA_EIO (a credential that cannot be read or parsed),
 * DRA_ENOMEM; the message goes to |d|. A server that does not negotiate
 * h2 fails each request with DRA_EIO "server ... does not speak
 * HTTP/2". */
dra_err dra_kube_h2_cluster_new(const dra_kube_config *cfg,
                                const dra_mem *mem, dra_cluster **out,
                                dra_diag *d);

/* The User-Agent sent: "dra/<version>". Static string. */
const char *dra_kube_user_agent(void);

#ifdef __cplusplus
}
#endif
#endif
