/*
 * apiserver_int.h: internals of module apiserver shared by its files:
 * the server struct, the per-request context, Status answers, object
 * metadata helpers, the write pipeline, watch streams and the background
 * controllers. The pieces owned by helper "apilib" (selector, patch,
 * table, openapi, discovery, convert) have their own headers.
 */
#ifndef DRA_APISERVER_INT_H
#define DRA_APISERVER_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "dra/api.h"
#include "dra/apiserver.h"
#include "dra/codec.h"
#include "dra/store.h"
#include "resources.h"

typedef struct api_stream api_stream;
typedef struct api_gc api_gc;

struct dra_apiserver {
    const dra_mem *mem;
    dra_store *store;
    dra_apiserver_opts opts;

    pthread_mutex_t lock; /* log source, stream list */
    dra_log_source_fn log_fn;
    void *log_ud;
    api_stream *streams; /* open watch streams, for the ticker */
    struct api_fkey *filter_keys; /* selectors of watches: api_filter_key */
    size_t nfilter_keys, cap_filter_keys;

    pthread_t bg;
    pthread_mutex_t bglock;
    pthread_cond_t bgcv;
    int bg_stop, bg_kick, bg_started;
    api_gc *gc; /* the collector's state: the background thread's alone */
};

/* ---- the request context ---------------------------------------------------- */

typedef struct api_qparam {
    const char *key, *val; /* decoded, in the request arena */
} api_qparam;

typedef enum api_fv {
    API_FV_STRICT, /* unknown fields are a 400 */
    API_FV_WARN,   /* a Warning header */
    API_FV_IGNORE
} api_fv;

typedef struct api_req {
    dra_apiserver *srv;
    const dra_apiserver_req *in;
    dra_apiserver_resp *out;
    dra_arena a;
    api_qparam *q;
    size_t nq;
    /* The route. */
    const api_resource *res;  /* the row of the requested version */
    const api_resource *sres; /* its storage row */
    char skey[96];            /* the store's resource key */
    const char *ns;           /* "" for cluster scope or all namespaces */
    int all_ns;               /* a namespaced collection across namespaces */
    const char *name;         /* NULL for a collection */
    const char *sub;          /* subresource or NULL */
    int watch;
    const char *conv;  /* the version the client speaks when it is not the
                        * stored one (v1beta1, v1beta2); res is then the
                        * storage row and objects convert on the way */
    int table;         /* Accept asks for a meta.k8s.io Table */
    int dry_run;
    api_fv fv;
    dra_doc *body_doc; /* in->body_doc copied into |a|, or NULL */
} api_req;

/* A query parameter's decoded value, or NULL. */
DRA_HIDDEN const char *api_q(const api_req *r, const char *key);
/* 1 for "true"/"1" (and |dflt| when absent). */
DRA_HIDDEN int api_q_bool(const api_req *r, const char *key, int dflt);

/* The store's name for the storage row |s|: "pods", or
 * "resourceclaims.resource.k8s.io". */
DRA_HIDDEN void api_store_key(const api_resource *s, char *buf, size_t cap);
/* "resourceclaims.resource.k8s.io", or "pods" for core: how messages
 * name a resource. Static or in |a|. */
DRA_HIDDEN const char *api_qualified(dra_arena *a, const api_resource *res);
/* The apiVersion of |res|'s rows: "v1" or "resource.k8s.io/v1". In |a|. */
DRA_HIDDEN const char *api_group_version(dra_arena *a, const api_resource *res);
/* The storage row of (apiVersion, kind), NULL when not served. */
DRA_HIDDEN const api_resource *api_resource_by_kind(const char *api_version,
                                                    const char *kind);

/* ---- answers ------------------------------------------------------------------ */

/* A Status failure answer: |code|, |reason|, a message (printf), and
 * details naming |name| of |res| (kind = plural resource, as upstream
 * does for NotFound, AlreadyExists and Conflict) when |res| is given.
 * Returns DRA_OK (the answer is the result) or DRA_ENOMEM. */
DRA_HIDDEN dra_err api_fail(api_req *r, int code, const char *reason,
                            const api_resource *res, const char *name,
                            const char *fmt, ...) DRA_PRINTF(6, 7);
DRA_HIDDEN dra_err api_not_found(api_req *r, const api_resource *res,
                                 const char *name);
DRA_HIDDEN dra_err api_already_exists(api_req *r, const api_resource *res,
                                      const char *name);
DRA_HIDDEN dra_err api_conflict(api_req *r, const api_resource *res,
                                const char *name, const char *why);
DRA_HIDDEN dra_err api_bad_request(api_req *r, const char *fmt, ...)
    DRA_PRINTF(2, 3);
/* 422 Invalid for |kind| (Kind, e.g. ResourceClaim) named |name| from
 * the field errors in |d| ("path: message" entries), with kube's message
 * and details.causes. */
DRA_HIDDEN dra_err api_invalid(api_req *r, const api_resource *res,
                               const char *name, const dra_diag *d);
/* A failure with |message| and details.causes from |causes| (path =
 * field, msg = message), each with reason |cause_reason|. */
DRA_HIDDEN dra_err api_fail_causes(api_req *r, int code, const char *reason,
                                   const api_resource *res, const char *name,
                                   const char *message, const char *cause_reason,
                                   const dra_diag *causes);
/* The answer for a store error (500/503/404/409...). */
DRA_HIDDEN dra_err api_store_fail(api_req *r, const api_resource *res,
                                  const char *name, dra_err e,
                                  const char *msg);
/* A Status Success answer with details (delete of a resource that does
 * not return the object). */
DRA_HIDDEN dra_err api_success(api_req *r, const api_resource *res,
                               const char *name, const char *uid);
/* |json| (|len| bytes) as the 2xx body. */
DRA_HIDDEN dra_err api_reply(api_req *r, int code, const char *json, size_t len);
/* |doc| encoded as the 2xx body. */
DRA_HIDDEN dra_err api_reply_doc(api_req *r, int code, const dra_doc *doc);
/* Appends a warning ("299 - \"...\"") to the response. */
DRA_HIDDEN void api_warn(api_req *r, const char *msg);

/* ---- documents and metadata (meta.c) -------------------------------------------- */

/* Member |key| of map |m| (mutable), or NULL. */
DRA_HIDDEN dra_doc *api_doc_at(const dra_doc *m, const char *key);
/* String member |key| of map |m|, or NULL. */
DRA_HIDDEN const char *api_doc_str(const dra_doc *m, const char *key);
/* Removes member |key| of map |m|; 1 when it was there. */
DRA_HIDDEN int api_doc_del(dra_doc *m, const char *key);
DRA_HIDDEN dra_err api_doc_set_str(dra_arena *a, dra_doc *m, const char *key,
                                   const char *val);
DRA_HIDDEN dra_err api_doc_set_int(dra_arena *a, dra_doc *m, const char *key,
                                   int64_t v);
/* The map member |key| of |m|, created empty when absent (NULL on ENOMEM
 * or when |m| is not a map or the member is not a map). */
DRA_HIDDEN dra_doc *api_doc_map(dra_arena *a, dra_doc *m, const char *key);
/* A deep copy of |d| in |a|, strings included, so it may outlive the
 * source (NULL on ENOMEM). */
DRA_HIDDEN dra_doc *api_doc_clone(dra_arena *a, const dra_doc *d);
/* Parses stored JSON into |a|. */
DRA_HIDDEN dra_err api_doc_parse(dra_arena *a, const char *json, size_t len,
                                 dra_doc **out);

/* metadata of |obj| (NULL when absent or not a map). */
DRA_HIDDEN dra_doc *api_meta(const dra_doc *obj);
DRA_HIDDEN const char *api_meta_str(const dra_doc *obj, const char *key);
/* The object's metadata.finalizers as a list node (NULL when none). */
DRA_HIDDEN dra_doc *api_meta_list(const dra_doc *obj, const char *key);
/* 1 when |f| is among metadata.finalizers. */
DRA_HIDDEN int api_has_finalizer(const dra_doc *obj, const char *f);
/* Removes |f| from metadata.finalizers; 1 when it was there. */
DRA_HIDDEN int api_drop_finalizer(dra_doc *obj, const char *f);
DRA_HIDDEN dra_err api_add_finalizer(dra_arena *a, dra_doc *obj, const char *f);
/* Puts the top-level members in kind, apiVersion, metadata order and
 * metadata's members in ObjectMeta's Go order (others keep theirs). */
DRA_HIDDEN void api_order(dra_doc *obj);

/* The time now as RFC 3339 (seconds, UTC) into |buf| (>= 21 bytes). */
DRA_HIDDEN void api_now(char *buf, size_t cap);
/* A random RFC 4122 version 4 UUID into |buf| (>= 37 bytes). */
DRA_HIDDEN void api_uuid(char *buf, size_t cap);
/* For a create with generateName, from one draw of random bytes: a
 * UUID into |uid| (>= 37 bytes) and |n| (at most 16) characters of
 * generateName's alphabet into |suf|. */
DRA_HIDDEN void api_uuid_suffix(char *uid, size_t cap, char *suf, size_t n);

/* The JSON text of |obj| for the store: compact, with an empty
 * metadata.resourceVersion whose position goes to *rv_at. |obj| is
 * changed (its resourceVersion member). DRA_OK; DRA_ENOMEM; DRA_EINVAL. */
DRA_HIDDEN dra_err api_encode_for_store(dra_arena *a, dra_doc *obj,
                                        dra_buf *out, size_t *rv_at);

/* Parses a request body: JSON, or YAML for application/yaml. On a
 * malformed body answers 400 (or 415 for a media type the server does
 * not read) and returns DRA_EPARSE. */
DRA_HIDDEN dra_err api_body(api_req *r, dra_doc **out);

/* ---- the write pipeline (write.c) ----------------------------------------------- */

typedef enum api_mode {
    API_CREATE,
    API_UPDATE,
    API_UPDATE_STATUS
} api_mode;

/* Checks |obj| (decoded in r->a, changed in place) for a write in |mode|
 * against |old| (NULL for create): apiVersion/kind, strict field
 * validation, the strategy (status and spec reset, generation),
 * defaulting and validation. Returns the object to store in *out (may be
 * |obj| itself or a re-encoded copy). On a refusal the answer (400, 422)
 * is in r->out and DRA_EINVALID is returned; DRA_ENOMEM. */
DRA_HIDDEN dra_err api_prepare(api_req *r, api_mode mode, dra_doc *obj,
                               const dra_doc *old, dra_doc **out);

/* Writes |obj| (a prepared object) to the store with |op| and
 * precondition |expect_rv|; *stored receives the stored value (a
 * reference). Errors are the store's. */
DRA_HIDDEN dra_err api_store_write(api_req *r, dra_store_op op, dra_doc *obj,
                                   uint64_t expect_rv, dra_store_obj **stored,
                                   char *msg, size_t cap);

/* ---- selectors (crud.c over selector.h) ------------------------------------------ */

struct api_label_sel;
struct api_field_sel;
typedef struct api_filter {
    struct api_label_sel *labels;
    struct api_field_sel *fields;
    int active;   /* some requirement to check */
    uint32_t key; /* the selectors' interned id, 0 when none: objects
                   * remember their last answer to a key */
} api_filter;

/* The request's labelSelector and fieldSelector, parsed in r->a. On a
 * bad selector answers 400 and returns DRA_EINVAL; DRA_ENOMEM. */
DRA_HIDDEN dra_err api_filter_parse(api_req *r, api_filter *f);
/* An interned selector key (srv->filter_keys): resource, label
 * selector, field selector, NUL-separated. */
#define API_FILTER_KEYS 4096
typedef struct api_fkey {
    char *k;
    size_t len;
} api_fkey;
/* The id of the request's selectors on its resource, the same for
 * every request with the same ones (1, 2, ...; 0 past API_FILTER_KEYS
 * distinct ones, or out of memory). Watches use it so that 1,000 of them
 * with one selector test each object once. */
DRA_HIDDEN uint32_t api_filter_key(api_req *r);
/* 1 when the object document |obj| of |res| passes |f|. */
DRA_HIDDEN int api_filter_match(const api_resource *res, const api_filter *f,
                                const dra_doc *obj);
/* The same for a stored object, through the selector view cached with
 * the value (built on first use; |scratch| is the parse space, reset). */
DRA_HIDDEN int api_filter_obj(const api_resource *res, const api_filter *f,
                              dra_store_obj *o, dra_arena *scratch);

/* The objects a list (or a watch's initial events) starts from, after
 * (|after_ns|, |after_name|) when given: the collection (at most |limit|
 * of it, 0: all, with pg->remaining), or the one object a metadata.name
 * field selector names. DRA_OK; DRA_ENOMEM. */
DRA_HIDDEN dra_err api_snapshot(api_req *r, const api_filter *f,
                                const char *after_ns, const char *after_name,
                                size_t limit, dra_store_page *pg);

/* ---- verbs (crud.c) -------------------------------------------------------------- */

DRA_HIDDEN dra_err api_get(api_req *r);
DRA_HIDDEN dra_err api_list(api_req *r);
DRA_HIDDEN dra_err api_create(api_req *r);
DRA_HIDDEN dra_err api_update(api_req *r);
DRA_HIDDEN dra_err api_patch(api_req *r);
DRA_HIDDEN dra_err api_delete(api_req *r);
DRA_HIDDEN dra_err api_delete_collection(api_req *r);

/* ---- output (output.c over table.h) -------------------------------------------- */

struct api_table_opts;
/* Writes the object back to a client in the requested form: as stored,
 * or (Accept asks for it, code 200) as a one-row Table. */
DRA_HIDDEN dra_err api_reply_obj(api_req *r, int code, const dra_store_obj *o);
/* The same for an object just written: |doc| is the document that was
 * encoded for the store (resourceVersion still the placeholder), so a
 * caller in the same process that asked for it (reply_arena) gets a
 * copy of it, with the stored version, instead of text to parse. */
DRA_HIDDEN dra_err api_reply_written(api_req *r, int code, const dra_store_obj *o,
                                     const dra_doc *doc);
/* An object document (as stored) as the 2xx body, converted to the
 * client's version. */
DRA_HIDDEN dra_err api_reply_objdoc(api_req *r, int code, const dra_doc *doc);
/* The apiVersion objects go back to the client in: "v1",
 * "resource.k8s.io/v1beta1". In r->a. */
DRA_HIDDEN const char *api_out_gv(api_req *r);
/* |doc| (stored form) converted to the client's version, into *out (the
 * same |doc| when there is nothing to convert). */
DRA_HIDDEN dra_err api_conv_out(api_req *r, const dra_doc *doc, dra_doc **out);
/* A request body in the client's version converted to the stored one,
 * in place of *doc. On a body that cannot be converted answers 400 and
 * returns DRA_EINVALID. */
DRA_HIDDEN dra_err api_conv_in(api_req *r, dra_doc **doc);
/* The Table of |n| stored objects for a list answer; |remaining| < 0
 * leaves remainingItemCount out. */
DRA_HIDDEN dra_err api_reply_table_list(api_req *r,
                                        const dra_store_obj *const *objs,
                                        size_t n, uint64_t rv, const char *cont,
                                        long long remaining);
/* Table options from the request (includeObject) and the clock. On a
 * bad includeObject answers 400 and returns DRA_EINVAL. */
DRA_HIDDEN dra_err api_table_opts_init(api_req *r, struct api_table_opts *o);
/* One watch event's object as a one-row Table (with the column
 * definitions when |headers|), appended to |out|. */
DRA_HIDDEN dra_err api_table_event(dra_arena *a, const api_resource *res,
                                   const struct api_table_opts *base, int headers,
                                   const dra_store_obj *o, dra_buf *out);

/* Deletes (|ns|, |name|) of storage row |res| the way DELETE does with
 * |policy| ("Background", "Foreground", "Orphan" or NULL), for the
 * background controllers. DRA_OK (deleted or marked); DRA_ENOTFOUND;
 * store errors. */
DRA_HIDDEN dra_err api_delete_internal(dra_apiserver *srv,
                                       const api_resource *res,
                                       const char *ns, const char *name,
                                       const char *uid, const char *policy);
/* Applies |fn| to the current (|ns|, |name|) of |res| and writes the
 * result back with the update semantics (finalizers emptied on a
 * deleting object delete it), retrying on conflicts. |fn| returns 0 to
 * write, 1 for "nothing to change", or a negative dra_err. */
DRA_HIDDEN dra_err api_mutate_internal(dra_apiserver *srv,
                                       const api_resource *res,
                                       const char *ns, const char *name,
                                       int (*fn)(void *ud, dra_arena *a,
                                                 dra_doc *obj),
                                       void *ud);

/* ---- pods (pods.c) ---------------------------------------------------------------- */

DRA_HIDDEN dra_err api_pod_binding(api_req *r);
DRA_HIDDEN dra_err api_pod_log(api_req *r);

/* ---- watch (watch.c) -------------------------------------------------------------- */

DRA_HIDDEN dra_err api_watch(api_req *r);
/* Called about once a second by the background thread: wakes the
 * streams whose bookmark or timeout is due. */
DRA_HIDDEN void api_watch_tick(dra_apiserver *srv);
/* Open watch streams (for tests: a front end must free the ones its
 * clients left). */
DRA_HIDDEN int api_watch_count(dra_apiserver *srv);

/* ---- background controllers (gc.c) ----------------------------------------------- */

/* The collector's state for |srv| (no watches open yet). DRA_OK or
 * DRA_ENOMEM. */
DRA_HIDDEN dra_err api_gc_new(dra_apiserver *srv, api_gc **out);
/* Closes its watches and frees it. NULL: no-op. */
DRA_HIDDEN void api_gc_free(api_gc *g);
/* One round of the garbage collector and the namespace controller: the
 * events since the last round become work, and the work is done. The
 * first round (and one after the history outran the collector, or a
 * |period|ic round after some work failed) reads every stored object.
 * Background thread only. */
DRA_HIDDEN void api_gc_round(api_gc *g, int period);
/* Wakes the background thread for a round (the collector's store
 * watches call it after each commit). */
DRA_HIDDEN void api_gc_kick(dra_apiserver *srv);

#endif
