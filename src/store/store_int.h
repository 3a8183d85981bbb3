/*
 * store_int.h: internals of module store. store.c keeps the in-memory
 * index, the histories, the watches and the writer thread; store_sql.c
 * (the only file that includes sqlite3.h) keeps the database: schema,
 * loading, one transaction per batch of writes, compaction steps.
 */
#ifndef DRA_STORE_INT_H
#define DRA_STORE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "dra/store.h"

typedef struct store_db store_db;

/* What the loader hands back, row by row. */
typedef struct sdb_load_cb {
    /* A resource row: its id, name and compaction point. */
    dra_err (*resource)(void *ud, int64_t id, const char *name,
                        uint64_t compacted_rv);
    /* A current object. |value| is borrowed for the call. */
    dra_err (*object)(void *ud, int64_t res, const char *ns, const char *name,
                      uint64_t rv, const char *value, size_t len);
    /* A history event, in increasing rv order; |value| NULL when the
     * event holds the current state of its object (share the object's),
     * and then |ns| and |name| are NULL too (the rv finds the object). */
    dra_err (*event)(void *ud, uint64_t rv, int type, int64_t res,
                     const char *ns, const char *name, const char *value,
                     size_t len);
    void *ud;
} sdb_load_cb;

/* Opens or creates the database with WAL, synchronous FULL (OFF when
 * opts->unsafe_nosync), incremental auto-vacuum, the size cap of
 * opts->max_db_bytes, and the schema; prepares every statement. DRA_EIO
 * with SQLite's message in |d|; DRA_ENOMEM. */
DRA_HIDDEN dra_err sdb_open(const char *path, const dra_store_opts *opts,
                            const dra_mem *mem, store_db **out, dra_diag *d);
DRA_HIDDEN void sdb_close(store_db *db);
/* Reads everything back through |cb|; *rv is the highest version ever
 * assigned (the counter to continue from): the largest of meta's and
 * every stored row's. */
DRA_HIDDEN dra_err sdb_load(store_db *db, const sdb_load_cb *cb, uint64_t *rv,
                            dra_diag *d);

/* One batch: begin, then puts/deletes/events, then commit or rollback.
 * A batch does not record the counter: its event rows carry it.
 * Each returns DRA_OK, DRA_EIO or DRA_EUNAVAILABLE (disk full, busy)
 * with the message copied into |msg| (|cap| bytes). */
DRA_HIDDEN dra_err sdb_begin(store_db *db, char *msg, size_t cap);
DRA_HIDDEN dra_err sdb_resource_add(store_db *db, const char *name,
                                    int64_t *id, char *msg, size_t cap);
DRA_HIDDEN dra_err sdb_put(store_db *db, int64_t res, const char *ns,
                           const char *name, uint64_t rv, const char *value,
                           size_t len, char *msg, size_t cap);
DRA_HIDDEN dra_err sdb_del(store_db *db, int64_t res, const char *ns,
                           const char *name, char *msg, size_t cap);
/* |value| NULL: the event is its object's current state (see schema). */
DRA_HIDDEN dra_err sdb_event(store_db *db, uint64_t rv, int type, int64_t res,
                             const char *ns, const char *name,
                             const char *value, size_t len, char *msg,
                             size_t cap);
/* Gives the event at |rv| its bytes, now that a later write superseded
 * the state it recorded (no-op when compacted or already filled). */
DRA_HIDDEN dra_err sdb_event_fill(store_db *db, uint64_t rv, const char *value,
                                  size_t len, char *msg, size_t cap);
DRA_HIDDEN dra_err sdb_commit(store_db *db, char *msg, size_t cap);
DRA_HIDDEN void sdb_rollback(store_db *db);

/* One compaction step, its own transaction: deletes the events with
 * rv <= |upto|, records each (resource id, compacted rv) pair of
 * |res|/|crv| (|n| of them) and the counter |rv| (the store's version:
 * the events deleted may have held the highest one). */
DRA_HIDDEN dra_err sdb_compact(store_db *db, uint64_t upto, const int64_t *res,
                               const uint64_t *crv, size_t n, uint64_t rv,
                               char *msg, size_t cap);
/* Gives back up to |pages| free pages to the file system when more than
 * a quarter of the file is free (incremental vacuum). */
DRA_HIDDEN dra_err sdb_vacuum_step(store_db *db, int pages);
/* Database size (page_count * page_size) and WAL file size (-1 unknown). */
DRA_HIDDEN dra_err sdb_sizes(store_db *db, int64_t *db_bytes,
                             int64_t *wal_bytes);

#endif
