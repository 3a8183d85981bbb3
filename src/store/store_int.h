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
    /* A row (a write: its version, type, key and the state it wrote), in
     * increasing rv order. Everything is borrowed for the call. */
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

/* One batch: begin, then rows appended and deleted, then commit or rollback.
 * A batch does not record the counter: its rows carry it.
 * Each returns DRA_OK, DRA_EIO or DRA_EUNAVAILABLE (disk full, busy)
 * with the message copied into |msg| (|cap| bytes). */
DRA_HIDDEN dra_err sdb_begin(store_db *db, char *msg, size_t cap);
DRA_HIDDEN dra_err sdb_resource_add(store_db *db, const char *name,
                                    int64_t *id, char *msg, size_t cap);
/* Appends the row of a write: version |rv|, |type|, the key and the
 * state it wrote (for a delete, the last state). */
DRA_HIDDEN dra_err sdb_event(store_db *db, uint64_t rv, int type, int64_t res,
                             const char *ns, const char *name,
                             const char *value, size_t len, char *msg,
                             size_t cap);
/* Deletes the row of version |rv| (no-op when there is none). */
DRA_HIDDEN dra_err sdb_event_del(store_db *db, uint64_t rv, char *msg, size_t cap);
DRA_HIDDEN dra_err sdb_commit(store_db *db, char *msg, size_t cap);
DRA_HIDDEN void sdb_rollback(store_db *db);

/* One compaction step (or the clean-up after a load), its own
 * transaction: deletes the rows of the |nrv| versions |rvs|, records
 * each (resource id, compacted rv) pair of |res|/|crv| (|n| of them)
 * and the counter |rv| (the store's version: the rows deleted may have
 * held the highest one). */
DRA_HIDDEN dra_err sdb_compact(store_db *db, const uint64_t *rvs, size_t nrv,
                               const int64_t *res, const uint64_t *crv, size_t n,
                               uint64_t rv, char *msg, size_t cap);
/* Gives back up to |pages| free pages to the file system when more than
 * a quarter of the file is free (incremental vacuum). */
DRA_HIDDEN dra_err sdb_vacuum_step(store_db *db, int pages);
/* Database size (page_count * page_size) and WAL file size (-1 unknown). */
DRA_HIDDEN dra_err sdb_sizes(store_db *db, int64_t *db_bytes,
                             int64_t *wal_bytes);

#endif
