/*
 * dra/cluster.h: the one interface controllers use to read and write
 * Kubernetes objects: get, list, watch (from a resourceVersion), create,
 * update, update status, patch, delete, bind, events. The scheduler, the
 * claim controller, the GPU plugin and the node agent see only this, so
 * the same code runs inside drad and against a real kube-apiserver.
 *
 * A dra_cluster is a thin generic layer (src/cluster) over a transport:
 *  - in process (src/apiserver: dra_apiserver_cluster), which calls
 *    drad's request handler directly, no socket, same semantics as REST;
 *  - REST (src/kube: dra_kube_cluster_new), libcurl against any API
 *    server from a kubeconfig or the in-cluster service account.
 * A transport answers one HTTP-shaped request at a time and opens watch
 * streams; everything else (paths, query strings, Status decoding, error
 * codes, retries on conflict, list+watch with resume) is shared here.
 *
 * Objects cross this interface as dra_doc trees (codec.h) allocated in an
 * arena the caller passes, so a controller decodes them with
 * dra_api_decode without another parse.
 *
 * Threads: a dra_cluster may be used from several threads at once; a
 * dra_watch belongs to one thread at a time.
 */
#ifndef DRA_CLUSTER_H
#define DRA_CLUSTER_H

#include <stdint.h>

#include "dra/base.h"
#include "dra/codec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- resources ----------------------------------------------------------
 * group ("" for the core group), version, plural resource name. */
typedef struct dra_gvr {
    const char *group;
    const char *version;
    const char *resource;
} dra_gvr;

#define DRA_GVR(g, v, r) ((dra_gvr){(g), (v), (r)})
#define DRA_GVR_NAMESPACES DRA_GVR("", "v1", "namespaces")
#define DRA_GVR_NODES DRA_GVR("", "v1", "nodes")
#define DRA_GVR_PODS DRA_GVR("", "v1", "pods")
#define DRA_GVR_EVENTS DRA_GVR("", "v1", "events")
#define DRA_GVR_SLICES DRA_GVR("resource.k8s.io", "v1", "resourceslices")
#define DRA_GVR_CLASSES DRA_GVR("resource.k8s.io", "v1", "deviceclasses")
#define DRA_GVR_CLAIMS DRA_GVR("resource.k8s.io", "v1", "resourceclaims")
#define DRA_GVR_TEMPLATES \
    DRA_GVR("resource.k8s.io", "v1", "resourceclaimtemplates")

/* ---- errors --------------------------------------------------------------
 * A failed call returns a dra_err mapped from the HTTP status
 * (dra_cluster_code_err) and, when the caller passes one, fills a
 * dra_kstatus with what the server's Status said. */
typedef struct dra_kstatus {
    int code;          /* HTTP status: 404, 409, 422, ...; 0 for transport errors */
    char reason[64];   /* Status.reason: NotFound, AlreadyExists, Conflict, Invalid, ... */
    char message[1024]; /* Status.message (truncated), or the transport error */
} dra_kstatus;

/* Fills |st| (may be NULL: then nothing) with |code|, |reason| and the
 * printf-formatted message, each cut to its field's size: how a server
 * piece states the answer it would send. */
void dra_kstatus_set(dra_kstatus *st, int code, const char *reason,
                     const char *fmt, ...) DRA_PRINTF(4, 5);

/* HTTP status (and Status.reason, may be NULL) to a dra_err:
 * 2xx DRA_OK; 400 DRA_EINVAL; 401 DRA_EUNAUTHORIZED; 403 DRA_EFORBIDDEN;
 * 404 DRA_ENOTFOUND; 409 DRA_EEXIST when the reason is AlreadyExists,
 * else DRA_ECONFLICT; 410 DRA_EGONE; 413 DRA_ETOOLARGE; 415, 405
 * DRA_EUNSUPPORTED; 422 DRA_EINVALID; 429, 5xx DRA_EUNAVAILABLE; 504
 * DRA_ETIMEOUT; anything else DRA_EIO. */
dra_err dra_cluster_code_err(int code, const char *reason);

/* Decodes an error answer for a transport or a caller holding a raw
 * response: fills |st| (may be NULL) from the Status in |body| (|len|
 * bytes, may be NULL), or, when the body is not a Status, with the
 * reason and message client-go gives such answers ("the server could not
 * find the requested resource", ...; a 409 without a Status is
 * AlreadyExists for |method| POST, else Conflict). Returns
 * dra_cluster_code_err(code, reason). |mem| may be NULL. */
dra_err dra_cluster_status_decode(int code, const char *method,
                                  const char *body, size_t len,
                                  const dra_mem *mem, dra_kstatus *st);
/* The same from a parsed Status document (a watch ERROR event's object,
 * say); |code| 0 takes the Status' own code. */
dra_err dra_cluster_status_doc(const dra_doc *status, int code,
                               const char *method, dra_kstatus *st);

/* ---- the transport ---------------------------------------------------- */

/* One request. |path| is absolute and unescaped segments are the
 * caller's business (names are DNS labels, so nothing needs escaping in
 * practice); |query| is the already-encoded query string without '?', or
 * NULL. |content_type| defaults to application/json when a body is
 * given. */
typedef struct dra_cluster_req {
    const char *method; /* GET, POST, PUT, PATCH, DELETE */
    const char *path;
    const char *query;
    const char *content_type;
    const char *body;
    size_t body_len;
} dra_cluster_req;

/* An open watch stream at the transport level: a sequence of JSON watch
 * events ({"type": ..., "object": ...}), one per call. */
typedef struct dra_watch_stream dra_watch_stream;

typedef struct dra_cluster_ops {
    /* Performs |req|; on any HTTP answer sets *code and appends the
     * response body (JSON; a Status on errors) to |body|, returning
     * DRA_OK whatever the status. Returns DRA_EIO (with |st->message|) when
     * no HTTP answer came (connection refused, TLS failure), DRA_ETIMEOUT,
     * DRA_ENOMEM. */
    dra_err (*request)(void *ud, const dra_cluster_req *req, int *code,
                       dra_buf *body, dra_kstatus *st);
    /* Opens a watch: GET |path|?|query| where query already holds
     * watch=true and the caller's options. A refusal that comes as an
     * HTTP answer (410, 403, ...) returns its mapped error and fills |st|;
     * the stream is then not created. */
    dra_err (*watch_open)(void *ud, const char *path, const char *query,
                          dra_watch_stream **out, dra_kstatus *st);
    /* Waits up to |timeout_ms| (-1: forever) for the next event and
     * appends its JSON text to |line|. DRA_OK; DRA_ETIMEOUT when nothing
     * came in time (the stream stays open); DRA_EIO when the stream ended
     * or broke (the caller closes it and reconnects). */
    dra_err (*watch_next)(void *ud, dra_watch_stream *s, int timeout_ms,
                          dra_buf *line);
    /* Wakes a watch_next blocked on |s| from another thread, which then
     * returns DRA_ECANCELED. May be NULL (then cancellation waits for the
     * timeout). */
    void (*watch_cancel)(void *ud, dra_watch_stream *s);
    void (*watch_close)(void *ud, dra_watch_stream *s);
    /* Frees the transport's state when the dra_cluster is freed; may be
     * NULL. */
    void (*close)(void *ud);
} dra_cluster_ops;

typedef struct dra_cluster dra_cluster;

/* A transport in the same process as the server (drad's controllers) may
 * take a request's body as the document itself, without JSON text on
 * either side: performs |req| (whose body is NULL) with |body| as its
 * body, as ops->request would with dra_doc_to_json's text of |body|, and
 * answers the same way; or returns DRA_EUNSUPPORTED, having done nothing,
 * when it cannot take that document as it is (then the cluster sends the
 * text through ops->request). With |a| set (the caller wants the answer's
 * object) it may answer a 2xx with the object as a document in |a|
 * (*out; |resp| then empty), what dra_doc_parse_json would read from the
 * answer's text; *out is NULL otherwise. */
typedef dra_err (*dra_cluster_doc_request)(void *ud, const dra_cluster_req *req,
                                           const dra_doc *body, dra_arena *a,
                                           int *code, dra_buf *resp,
                                           dra_doc **out, dra_kstatus *st);

/* A cluster over |ops| (copied) and |ud| (owned by the cluster when
 * ops->close is set: dra_cluster_free calls it). |mem| may be NULL.
 * NULL on ENOMEM (ops->close is then not called). */
dra_cluster *dra_cluster_new(const dra_cluster_ops *ops, void *ud,
                             const dra_mem *mem);
void dra_cluster_free(dra_cluster *c); /* NULL: no-op */
/* Sets the transport's dra_cluster_doc_request (NULL: none), called with
 * the transport's |ud|. Before the cluster is used. */
void dra_cluster_set_doc_request(dra_cluster *c, dra_cluster_doc_request fn);

/* ---- requests ---------------------------------------------------------- */

/* The REST path of a resource, an object or a subresource, into |out|:
 * /api/v1/namespaces/NS/pods/NAME/status or /apis/G/V/R. |ns| NULL or ""
 * for cluster-scoped resources (and for all namespaces), |name| and |sub|
 * NULL when absent. DRA_OK or DRA_ENOMEM. */
dra_err dra_cluster_path(dra_buf *out, const dra_gvr *r, const char *ns,
                         const char *name, const char *sub);

/* Performs |req| and decodes the answer: on 2xx, *out (may be NULL) is
 * the response body parsed in |a| (NULL for an empty body); otherwise
 * the Status fills |st| and the mapped error is returned. A body that is
 * not JSON is DRA_EPARSE. */
dra_err dra_cluster_do(dra_cluster *c, const dra_cluster_req *req,
                       dra_arena *a, dra_doc **out, dra_kstatus *st);

/* List options (all optional; NULL/0 means absent). */
typedef struct dra_list_opts {
    const char *label_selector;
    const char *field_selector;
    const char *resource_version;
    const char *resource_version_match; /* NotOlderThan, Exact */
    int64_t limit;
    const char *continue_; /* continue */
    int allow_bookmarks;   /* allowWatchBookmarks=true (watch only) */
    int timeout_seconds;   /* timeoutSeconds (watch only) */
} dra_list_opts;

/* GET one object. DRA_ENOTFOUND when absent. */
dra_err dra_cluster_get(dra_cluster *c, const dra_gvr *r, const char *ns,
                        const char *name, dra_arena *a, dra_doc **out,
                        dra_kstatus *st);
/* GET the collection; *out is the <Kind>List document (items under
 * "items", the list's resourceVersion and continue under "metadata").
 * With opts->limit set, one page: follow metadata.continue yourself, or
 * use dra_cluster_list_all. */
dra_err dra_cluster_list(dra_cluster *c, const dra_gvr *r, const char *ns,
                         const dra_list_opts *opts, dra_arena *a,
                         dra_doc **out, dra_kstatus *st);
/* Every page of a list, concatenated into one List document; *rv (may be
 * NULL) receives the resourceVersion of the first page, in |a|. Pages of
 * opts->limit items (500 when 0); an expired continue token (410) falls
 * back to one unpaged list. Items lacking apiVersion/kind get the list's
 * (kind without "List"), as kubectl does. */
dra_err dra_cluster_list_all(dra_cluster *c, const dra_gvr *r,
                             const char *ns, const dra_list_opts *opts,
                             dra_arena *a, dra_doc **out, const char **rv,
                             dra_kstatus *st);
/* POST |obj|; *out (may be NULL) is the object as stored. */
dra_err dra_cluster_create(dra_cluster *c, const dra_gvr *r, const char *ns,
                           const dra_doc *obj, dra_arena *a, dra_doc **out,
                           dra_kstatus *st);
/* PUT |obj| (its metadata.resourceVersion, when set, is the optimistic
 * concurrency precondition: DRA_ECONFLICT when stale). |sub| NULL for the
 * object itself, "status" for the status subresource. */
dra_err dra_cluster_update(dra_cluster *c, const dra_gvr *r, const char *ns,
                           const char *name, const char *sub,
                           const dra_doc *obj, dra_arena *a, dra_doc **out,
                           dra_kstatus *st);

typedef enum dra_patch_type {
    DRA_PATCH_MERGE,     /* application/merge-patch+json */
    DRA_PATCH_STRATEGIC, /* application/strategic-merge-patch+json */
    DRA_PATCH_JSON,      /* application/json-patch+json */
    DRA_PATCH_APPLY      /* application/apply-patch+yaml (server-side apply) */
} dra_patch_type;
/* The Content-Type of |t|. Static string. */
const char *dra_patch_content_type(dra_patch_type t);

/* PATCH with a patch document given as JSON text. |sub| as for update;
 * |field_manager| may be NULL (required for DRA_PATCH_APPLY). */
dra_err dra_cluster_patch(dra_cluster *c, const dra_gvr *r, const char *ns,
                          const char *name, const char *sub,
                          dra_patch_type t, const char *patch, size_t len,
                          const char *field_manager, dra_arena *a,
                          dra_doc **out, dra_kstatus *st);

typedef struct dra_delete_opts {
    const char *propagation_policy; /* Background, Foreground, Orphan */
    int64_t grace_period_seconds;   /* used when grace_period_set */
    int grace_period_set;
    const char *precondition_uid;
    const char *precondition_rv;
} dra_delete_opts;
/* DELETE one object; |opts| may be NULL. *out (may be NULL) is what the
 * server answered: the object (still present, marked for deletion, when
 * finalizers hold it) or a Status. DRA_ENOTFOUND when absent. */
dra_err dra_cluster_delete(dra_cluster *c, const dra_gvr *r, const char *ns,
                           const char *name, const dra_delete_opts *opts,
                           dra_arena *a, dra_doc **out, dra_kstatus *st);

/* POST pods/NAME/binding with a Binding to |node|. |uid| (may be NULL)
 * is the pod UID precondition. */
dra_err dra_cluster_bind(dra_cluster *c, const char *ns, const char *pod,
                         const char *uid, const char *node, dra_kstatus *st);

/* An event for |obj| (a decoded object document: its apiVersion, kind,
 * metadata.name/namespace/uid are read), core/v1 Event as kubectl
 * describe shows it: type Normal or Warning, reason, message,
 * source.component = |component|, source.host = |host| (may be NULL).
 * Repeats of the same (object, reason, message) within a short time may
 * be folded into one Event with a higher count, as client-go's recorder
 * does. Best effort: callers usually ignore the error. */
dra_err dra_cluster_event(dra_cluster *c, const dra_doc *obj,
                          const char *type, const char *reason,
                          const char *component, const char *host,
                          const char *fmt, ...) DRA_PRINTF(7, 8);

/* Runs |fn| until it does not return DRA_ECONFLICT, at most |attempts|
 * times (client-go's RetryOnConflict; a short backoff between tries).
 * |fn| re-reads the object each time. Returns fn's last result. */
dra_err dra_cluster_retry_on_conflict(int attempts,
                                      dra_err (*fn)(void *ud), void *ud);

/* ---- watch -------------------------------------------------------------- */

typedef enum dra_watch_type {
    DRA_WATCH_ADDED,
    DRA_WATCH_MODIFIED,
    DRA_WATCH_DELETED,
    DRA_WATCH_BOOKMARK,
    DRA_WATCH_ERROR /* object is a Status; 410 means relist */
} dra_watch_type;

typedef struct dra_watch_event {
    dra_watch_type type;
    dra_doc *object;             /* in the arena passed to next */
    const char *resource_version; /* the object's, in that arena */
} dra_watch_event;

typedef struct dra_watch dra_watch;

/* Opens a watch on the collection (|ns| NULL: all namespaces), from
 * opts->resource_version ("" or NULL: synthetic ADDED events for every
 * current object first, "0": the same, served from the cache; an exact
 * version: the changes after it, DRA_EGONE when compacted). */
dra_err dra_cluster_watch(dra_cluster *c, const dra_gvr *r, const char *ns,
                          const dra_list_opts *opts, dra_watch **out,
                          dra_kstatus *st);
/* The next event, parsed into |a|. DRA_OK; DRA_ETIMEOUT (nothing within
 * |timeout_ms|; -1 waits forever); DRA_ECANCELED after
 * dra_watch_cancel; DRA_EIO when the stream ended (reconnect from the
 * last resourceVersion seen); DRA_EPARSE for a malformed event (the
 * stream is then unusable). */
dra_err dra_watch_next(dra_watch *w, int timeout_ms, dra_arena *a,
                       dra_watch_event *ev);
/* Makes a blocked or later dra_watch_next return DRA_ECANCELED. Safe from
 * any thread while another uses |w|. */
void dra_watch_cancel(dra_watch *w);
/* For an ERROR event, the error its Status maps to (DRA_EGONE for 410
 * Expired/Gone: relist; DRA_EIO when the Status has no code) and |st|
 * (may be NULL) filled from it; DRA_OK for every other event type. */
dra_err dra_watch_event_err(const dra_watch_event *ev, dra_kstatus *st);
void dra_watch_close(dra_watch *w); /* NULL: no-op */

/* ---- reflector: list + watch with resume --------------------------------
 * client-go's Reflector: lists the collection, then watches from the
 * list's resourceVersion; when the stream ends it resumes from the last
 * version seen; on 410 Gone (or any watch error) it lists again and
 * reports what changed meanwhile as ADDED / MODIFIED / DELETED (it keeps
 * the key -> resourceVersion of every object it has reported). Runs on
 * its own thread and calls |on_event| from there, one call at a time;
 * the document lives in an arena that is reset after the call returns
 * (copy or decode what you keep). */
typedef struct dra_reflector dra_reflector;

typedef struct dra_reflector_opts {
    dra_gvr gvr;
    const char *ns;             /* NULL: all namespaces */
    const char *label_selector; /* may be NULL */
    const char *field_selector; /* may be NULL */
    /* Called for each change; |type| is never BOOKMARK or ERROR. */
    void (*on_event)(void *ud, dra_watch_type type, const dra_doc *obj);
    /* Called after the first list has been fully reported, and after
     * each relist (may be NULL): the cache is complete. */
    void (*on_synced)(void *ud);
    void *ud;
} dra_reflector_opts;

/* Starts the reflector thread. DRA_OK; DRA_ENOMEM; DRA_EIO when the
 * thread cannot start. Errors of the list and watch calls are retried
 * with backoff (up to 5 s) forever, never reported as events. */
dra_err dra_reflector_start(dra_cluster *c, const dra_reflector_opts *opts,
                            dra_reflector **out);
/* 1 once on_synced has been called for the first list. */
int dra_reflector_synced(const dra_reflector *r);
/* Stops the thread (cancelling a blocked watch; a list in flight ends
 * at the transport's request timeout) and frees the reflector. No
 * callback runs after this returns. Not from a callback. NULL: no-op. */
void dra_reflector_stop(dra_reflector *r);

/* ---- small helpers on object documents -------------------------------- */

/* metadata.name, .namespace, .uid, .resourceVersion of |obj|; NULL when
 * absent. The strings belong to |obj|. */
const char *dra_obj_name(const dra_doc *obj);
const char *dra_obj_namespace(const dra_doc *obj);
const char *dra_obj_uid(const dra_doc *obj);
const char *dra_obj_rv(const dra_doc *obj);
/* The string at a dotted path of map keys ("spec.nodeName",
 * "status.phase"); NULL when absent or not a string. */
const char *dra_obj_str(const dra_doc *obj, const char *dotted);

#ifdef __cplusplus
}
#endif
#endif
