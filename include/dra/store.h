/*
 * dra/store.h: drad's object store. Current objects live in memory, keyed
 * by (resource, namespace, name), and are served from there; SQLite (WAL,
 * synchronous=FULL) makes every acknowledged write durable. One
 * resourceVersion counter orders all writes; each write may carry an
 * optimistic-concurrency precondition. Every write also appends an event
 * to a bounded per-resource history, persisted, so a watcher that comes
 * back with its last resourceVersion (even across a restart) misses
 * nothing until that history is compacted, and then learns so (DRA_EGONE).
 *
 * The store knows nothing of Kubernetes beyond that: values are opaque
 * JSON texts. The apiserver module builds them; the only thing the store
 * writes into a value is its resourceVersion, spliced in at an offset the
 * caller names, because the version is only known when the write is
 * ordered.
 *
 * Concurrent writes are batched into one transaction and one fsync
 * (group commit): the writer that finds no commit running commits
 * everything queued, on its own thread, and hands the next batch to the
 * first writer that queued meanwhile; a write returns once it is durable
 * and visible to readers and watchers. A maintenance thread compacts the
 * history off the commit path.
 *
 * Threads: every function may be called from any thread, except that a
 * dra_store_watch is used by one thread at a time (its notify callback
 * comes from the thread that committed a batch).
 */
#ifndef DRA_STORE_H
#define DRA_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "dra/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dra_store dra_store;

/* A stored value: immutable, reference counted, shared by the index,
 * the history and every reader holding it. |json| is NUL-terminated. */
typedef struct dra_store_obj {
    uint64_t rv;      /* the resourceVersion of this state */
    size_t len;       /* bytes in json, NUL excluded */
    const char *json; /* the object as stored (resourceVersion spliced in) */
} dra_store_obj;

/* Something a reader derives from a stored value and caches with it
 * (values never change, so what is derived stays true): a struct that
 * starts with this header. The value calls |free| when it dies. */
typedef struct dra_store_aux {
    void (*free)(struct dra_store_aux *aux);
} dra_store_aux;

/* The cache attached to |o|, or NULL. */
dra_store_aux *dra_store_obj_aux(const dra_store_obj *o);
/* Attaches |aux| to |o| unless one is attached already (first wins, from
 * any thread). Returns the attached one: |aux|, or the earlier one, in
 * which case |aux| stays the caller's to free. */
dra_store_aux *dra_store_obj_aux_attach(dra_store_obj *o, dra_store_aux *aux);

/* Takes one more reference; returns |o|. NULL: no-op. */
dra_store_obj *dra_store_obj_ref(dra_store_obj *o);
/* Drops a reference; the last one frees. NULL: no-op. */
void dra_store_obj_unref(dra_store_obj *o);

typedef struct dra_store_opts {
    /* Events kept for watchers: the history is trimmed (oldest first,
     * across all resources) once the states it holds that are no longer
     * current (superseded or deleted; a current state costs nothing, its
     * bytes are the object's) pass max(3/4 of the live bytes,
     * history_min_bytes), or it has more than history_max_events events.
     * 0: defaults (1 MiB, 1,000,000). */
    size_t history_min_bytes;
    size_t history_max_events;
    /* Events removed per compaction transaction (0: 256); each such
     * step holds the write lock for a short, bounded time. */
    size_t compact_step;
    /* 0: synchronous=FULL (durable on return, the default); 1:
     * synchronous=OFF (benchmarks and tests of something else only). */
    int unsafe_nosync;
    /* When non-zero, the database file may not grow beyond about this
     * many bytes: writes that need more fail with DRA_EUNAVAILABLE as on
     * a full disk (tests use it to simulate one). */
    int64_t max_db_bytes;
} dra_store_opts;

/* Opens (creating when absent) the database at |path| and loads it into
 * memory: objects, history, the counter. |opts| and |mem| may be NULL.
 * Starts the maintenance thread. Errors: DRA_EIO when the file cannot be
 * opened or read, or is not a store (the message, SQLite's, goes to |d|);
 * DRA_ENOMEM. *out is NULL on error. */
dra_err dra_store_open(const char *path, const dra_store_opts *opts,
                       const dra_mem *mem, dra_store **out, dra_diag *d);
/* Waits for writes in progress, stops the maintenance thread, closes the
 * database. Watches still open must be closed first. NULL: no-op. */
void dra_store_close(dra_store *s);

/* The last resourceVersion assigned and committed (0 for an empty
 * store). */
uint64_t dra_store_rv(dra_store *s);

/* The current value of (resource, ns, name), with a reference the
 * caller drops with dra_store_obj_unref. |ns| "" for cluster-scoped
 * objects. DRA_OK; DRA_ENOTFOUND. */
dra_err dra_store_get(dra_store *s, const char *resource, const char *ns,
                      const char *name, dra_store_obj **out);

/* A consistent snapshot of a collection, sorted by (namespace, name). */
typedef struct dra_store_item {
    const char *ns;   /* borrowed from the snapshot */
    const char *name; /* borrowed from the snapshot */
    dra_store_obj *obj;
} dra_store_item;
typedef struct dra_store_list {
    dra_store_item *items;
    size_t n;
    uint64_t rv; /* the store's resourceVersion when the snapshot was taken */
    size_t remaining; /* objects of the range after those returned (a limit cut) */
    void *priv;  /* owned by the store functions */
} dra_store_page;

/* Every object of |resource| in namespace |ns| (NULL: all namespaces)
 * whose (ns, name) sorts after (|after_ns|, |after_name|) when those are
 * given (both non-NULL; list continuation), at most |limit| of them
 * (0: all). *more is set (may be NULL) when objects remain after the
 * last one returned. Free with dra_store_page_fini. DRA_OK; DRA_ENOMEM. */
dra_err dra_store_list(dra_store *s, const char *resource, const char *ns,
                       const char *after_ns, const char *after_name,
                       size_t limit, dra_store_page *out, int *more);
void dra_store_page_fini(dra_store_page *l); /* zeroed or finished: no-op */

/* The page a list would give when only (|ns|, |name|) can match: that
 * object alone (or nothing), with the store's version read under the
 * same lock. For by-name lists and watches, which then skip the scan of
 * the collection. DRA_OK; DRA_ENOMEM. */
dra_err dra_store_list_one(dra_store *s, const char *resource, const char *ns,
                           const char *name, dra_store_page *out);

/* ---- writes -------------------------------------------------------------- */

typedef enum dra_store_op {
    DRA_STORE_CREATE, /* fails with DRA_EEXIST when present */
    DRA_STORE_UPDATE, /* fails with DRA_ENOTFOUND when absent */
    DRA_STORE_DELETE  /* fails with DRA_ENOTFOUND when absent */
} dra_store_op;

/* No offset: the value carries no resourceVersion to fill in. */
#define DRA_STORE_NO_RV ((size_t)-1)

/* One write. The caller fills the inputs; dra_store_write fills the
 * outputs. For DRA_STORE_DELETE |json| is the object's last state, which
 * the DELETED event carries (with the deletion's resourceVersion). */
typedef struct dra_store_write {
    dra_store_op op;
    const char *resource;
    const char *ns; /* "" for cluster-scoped */
    const char *name;
    /* UPDATE and DELETE: when non-zero, the write is refused with
     * DRA_ECONFLICT unless the current value has this version. */
    uint64_t expect_rv;
    const char *json; /* borrowed for the call */
    size_t len;
    /* The byte offset in |json| where the decimal resourceVersion is
     * inserted (between the quotes of "resourceVersion":""), or
     * DRA_STORE_NO_RV. */
    size_t rv_at;

    /* outputs */
    uint64_t rv;        /* the version assigned */
    dra_store_obj *obj; /* the stored value (the DELETED state for a
                         * delete), a reference the caller drops; NULL
                         * on error */
    char msg[192];      /* why, when the write failed in the database */
} dra_store_write;

/* Performs |w| and returns once it is durable (committed and fsynced
 * with the others of its batch) and visible. Errors: DRA_EEXIST,
 * DRA_ENOTFOUND, DRA_ECONFLICT (preconditions; nothing written);
 * DRA_EINVAL (bad arguments: empty resource or name, rv_at beyond len);
 * DRA_EIO (the database refused: I/O error, read-only file, corrupt;
 * |w->msg| says what); DRA_EUNAVAILABLE (disk full, or the store is
 * closing); DRA_ENOMEM. On any error nothing of |w| is stored and the
 * counter is not advanced. */
dra_err dra_store_write_one(dra_store *s, dra_store_write *w);

/* ---- watch ---------------------------------------------------------------- */

typedef enum dra_store_event_type {
    DRA_STORE_ADDED,
    DRA_STORE_MODIFIED,
    DRA_STORE_DELETED
} dra_store_event_type;

typedef struct dra_store_event {
    dra_store_event_type type;
    uint64_t rv;
    const char *ns;   /* valid while obj is held */
    const char *name; /* valid while obj is held */
    dra_store_obj *obj;  /* new state (DELETED: last state), a reference */
    dra_store_obj *prev; /* state before, a reference; NULL when created or
                          * no longer known (history loaded after a restart) */
} dra_store_event;

/* Drops the references an event holds and zeroes it. */
void dra_store_event_fini(dra_store_event *ev);

typedef struct dra_store_watch dra_store_watch;

/* Opens a watch on |resource| (|ns| NULL: every namespace) delivering
 * the events after version |from_rv|. |notify| (may be NULL) is called
 * from the committing thread after each commit that added events for
 * |resource|; it must not call into the store and should only wake
 * whoever polls. Errors: DRA_EGONE when
 * events after |from_rv| have been compacted away (410 Gone);
 * DRA_ERANGE when |from_rv| is beyond the current version; DRA_ENOMEM. */
dra_err dra_store_watch_open(dra_store *s, const char *resource,
                             const char *ns, uint64_t from_rv,
                             void (*notify)(void *ud), void *ud,
                             dra_store_watch **out);
/* Takes up to |max| pending events (oldest first) into |evs|; *n is how
 * many (0: nothing new). The caller finishes each with
 * dra_store_event_fini. DRA_OK; DRA_EGONE when events this watch had not
 * taken yet were compacted (the watch is then useless: close it). */
dra_err dra_store_watch_poll(dra_store_watch *w, dra_store_event *evs,
                             size_t max, size_t *n);
/* The version up to which this watch has seen everything: the last
 * event taken, or the store's version once nothing is pending (for
 * bookmarks). */
uint64_t dra_store_watch_rv(dra_store_watch *w);
/* Closes the watch; |notify| is not called once this returns. NULL:
 * no-op. */
void dra_store_watch_close(dra_store_watch *w);

/* ---- figures -------------------------------------------------------------- */

typedef struct dra_store_stats {
    size_t objects;        /* live objects */
    size_t live_bytes;     /* bytes of their values */
    size_t history_events; /* events kept */
    size_t history_bytes;  /* bytes of the states they keep that are not
                            * current (what compaction bounds) */
    uint64_t rv;
    uint64_t batches;      /* transactions committed for writes */
    uint64_t writes;       /* writes committed */
    uint64_t compactions;  /* compaction steps */
    uint64_t compact_max_us; /* longest compaction step (write lock held) */
    int64_t db_bytes;      /* database file size (page_count * page_size) */
    int64_t wal_bytes;     /* size of the -wal file, -1 when unknown */
} dra_store_stats;

/* A snapshot of the figures (DRA_OK; DRA_EIO when the database sizes
 * cannot be read; the in-memory figures are filled anyway). */
dra_err dra_store_stats_get(dra_store *s, dra_store_stats *st);

/* Runs compaction now until the history is within its bounds (tests and
 * benchmarks; the maintenance thread does this on its own after commits).
 * DRA_OK or the database error. */
dra_err dra_store_compact(dra_store *s);

#ifdef __cplusplus
}
#endif
#endif
