/*
 * store_sql.c: the store's database, the only file that speaks SQLite.
 * Format 3 is a log: one events row per write (its version, type, key
 * and the state it wrote: for a delete, the last state), appended in
 * version order, and resources (name -> id and each resource's
 * compaction point), plus a one-row meta table. The rows kept are each
 * live object's latest (its current state) and every row after its
 * resource's compaction point (the watch history); the store deletes
 * the others as they stop being either (store.c). So a write appends one
 * row to the end of one b-tree, where format 2 updated an objects row in
 * place, filled in its previous event and inserted a new one: about a
 * third of the pages per write (docs/drad.md). A format 2 database is
 * converted when opened.
 *
 * The resourceVersion counter is the highest version stored anywhere:
 * every write leaves a row with its version, so meta records the counter
 * only when rows are deleted. Statements are prepared once; every return
 * code is checked.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "store_int.h"

enum {
    Q_BEGIN,
    Q_COMMIT,
    Q_ROLLBACK,
    Q_EVENT,
    Q_EVENT_DEL,
    Q_KEEP_RV,
    Q_RES_ADD,
    Q_COMPACT_RES,
    Q_N
};

/* ORDER Q_*: one statement per enum value. */
static const char *const queries[Q_N] = {
    "BEGIN IMMEDIATE",
    "COMMIT",
    "ROLLBACK",
    ("INSERT INTO events(rv, type, res, ns, name, value) "
     "VALUES (?1, ?2, ?3, ?4, ?5, ?6)"),
    "DELETE FROM events WHERE rv = ?1",
    "UPDATE meta SET rv = max(rv, ?1)",
    "INSERT INTO resources(name, compacted_rv) VALUES (?1, 0)",
    "UPDATE resources SET compacted_rv = ?2 WHERE id = ?1",
};

#define FORMAT 3

/* A new database is format 3; an older one keeps its meta row (and is
 * converted by convert_v2). */
static const char schema[] =
    "CREATE TABLE IF NOT EXISTS resources("
    " id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
    " compacted_rv INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS events("
    " rv INTEGER PRIMARY KEY, type INTEGER NOT NULL, res INTEGER NOT NULL,"
    " ns TEXT NOT NULL, name TEXT NOT NULL, value BLOB);"
    "CREATE TABLE IF NOT EXISTS meta(id INTEGER PRIMARY KEY CHECK (id = 1),"
    " format INTEGER NOT NULL, rv INTEGER NOT NULL);"
    "INSERT OR IGNORE INTO meta(id, format, rv) VALUES (1, 3, 0);";

/* Format 2 kept current states in an objects table and gave an event
 * row bytes only once a later write superseded it: each event row gets
 * its state, a live object whose event was compacted away gets a row of
 * its own, and the objects table goes; in one transaction. */
static const char convert_v2[] =
    "BEGIN IMMEDIATE;"
    "CREATE INDEX objects_rv ON objects(rv);"
    "UPDATE events SET value = (SELECT o.value FROM objects o WHERE o.rv = events.rv)"
    " WHERE value IS NULL;"
    "DELETE FROM events WHERE value IS NULL;"
    "INSERT INTO events(rv, type, res, ns, name, value)"
    " SELECT rv, 0, res, ns, name, value FROM objects"
    " WHERE rv NOT IN (SELECT rv FROM events);"
    "DROP TABLE objects;"
    "UPDATE meta SET format = 3;"
    "COMMIT;";

struct store_db {
    const dra_mem *mem;
    sqlite3 *h;
    sqlite3_stmt *q[Q_N];
    char *wal_path;
};

/* SQLite's result codes to ours: a full disk (and a lock we could not
 * get) is a temporary refusal, anything else an I/O failure. */
static dra_err db_err(store_db *db, int rc, char *msg, size_t cap)
{
    if (msg && cap)
        snprintf(msg, cap, "%s", db->h ? sqlite3_errmsg(db->h)
                                       : sqlite3_errstr(rc));
    switch (rc & 0xff) {
    case SQLITE_NOMEM:
        return DRA_ENOMEM;
    case SQLITE_FULL:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return DRA_EUNAVAILABLE;
    default:
        return DRA_EIO;
    }
}

/* Runs a prepared statement to completion and resets it. */
static dra_err step(store_db *db, int q, char *msg, size_t cap)
{
    sqlite3_stmt *st = db->q[q];
    int rc = sqlite3_step(st);
    dra_err e = DRA_OK;
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        e = db_err(db, rc, msg, cap);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return e;
}

static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
    return sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
}

static int bind_blob(sqlite3_stmt *st, int i, const char *v, size_t len)
{
    return sqlite3_bind_blob64(st, i, v, (sqlite3_uint64)len, SQLITE_STATIC);
}

/* Checks a sequence of bind results (each SQLITE_OK when fine). */
static dra_err bound(store_db *db, int q, int rc, char *msg, size_t cap)
{
    if (rc == SQLITE_OK)
        return DRA_OK;
    sqlite3_reset(db->q[q]);
    sqlite3_clear_bindings(db->q[q]);
    return db_err(db, rc, msg, cap);
}

static dra_err exec(store_db *db, const char *sql, dra_diag *d)
{
    char *err = NULL;
    int rc = sqlite3_exec(db->h, sql, NULL, NULL, &err);
    if (rc == SQLITE_OK)
        return DRA_OK;
    dra_diag_add(d, "", 0, 0, "%s", err ? err : sqlite3_errstr(rc));
    sqlite3_free(err);
    return (rc & 0xff) == SQLITE_NOMEM ? DRA_ENOMEM : DRA_EIO;
}

static int64_t pragma_int(store_db *db, const char *sql, int *ok)
{
    sqlite3_stmt *st;
    int64_t v = 0;
    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK) {
        *ok = 0;
        return 0;
    }
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    else
        *ok = 0;
    sqlite3_finalize(st);
    return v;
}

/* Converts a format 2 database; leaves other formats to sdb_load to
 * refuse. */
static dra_err upgrade(store_db *db, dra_diag *d)
{
    dra_err e;
    int ok = 1;
    if (pragma_int(db, "SELECT format FROM meta", &ok) != 2 || !ok)
        return DRA_OK;
    if ((e = exec(db, convert_v2, d)))
        (void)sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
    return e;
}

static dra_err configure(store_db *db, const dra_store_opts *o, dra_diag *d)
{
    dra_err e;
    int nosync = o->unsafe_nosync;
    /* auto_vacuum only takes effect before the first table exists, so
     * it comes first; on an existing file it is a no-op. One process
     * owns the file (drad locks its data directory), so the connection
     * holds its lock for good: no file locking per transaction, and the
     * WAL index lives in memory instead of a shared -shm file. */
    if ((e = exec(db, "PRAGMA auto_vacuum = INCREMENTAL", d)) ||
        (e = exec(db, "PRAGMA locking_mode = EXCLUSIVE", d)) ||
        (e = exec(db, "PRAGMA journal_mode = WAL", d)) ||
        (e = exec(db, nosync ? "PRAGMA synchronous = OFF"
                             : "PRAGMA synchronous = FULL", d)) ||
        (e = exec(db, "PRAGMA journal_size_limit = 16777216", d)) ||
        (e = exec(db, "PRAGMA foreign_keys = OFF", d)) ||
        (e = exec(db, "PRAGMA cache_size = -8192", d)) ||
        /* Reads (the load at startup above all) come straight from the
         * mapped file instead of being copied through read(2). */
        (e = exec(db, "PRAGMA mmap_size = 1073741824", d)))
        return e;
    if ((e = exec(db, schema, d)) || (e = upgrade(db, d)))
        return e;
    if (o->max_db_bytes > 0) {
        char sql[80];
        /* Pages of the default 4 KiB size; the cap counts pages. */
        snprintf(sql, sizeof sql, "PRAGMA max_page_count = %lld",
                 (long long)(o->max_db_bytes / 4096 + 1));
        return exec(db, sql, d);
    }
    return DRA_OK;
}

static dra_err check_wal(store_db *db, dra_diag *d)
{
    sqlite3_stmt *st;
    dra_err e = DRA_EIO;
    if (sqlite3_prepare_v2(db->h, "PRAGMA journal_mode", -1, &st, NULL)) {
        dra_diag_add(d, "", 0, 0, "%s", sqlite3_errmsg(db->h));
        return DRA_EIO;
    }
    if (sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *m = sqlite3_column_text(st, 0);
        if (m && !strcmp((const char *)m, "wal"))
            e = DRA_OK;
        else
            dra_diag_add(d, "", 0, 0, "cannot switch the database to WAL mode");
    } else {
        dra_diag_add(d, "", 0, 0, "%s", sqlite3_errmsg(db->h));
    }
    sqlite3_finalize(st);
    return e;
}

dra_err sdb_open(const char *path, const dra_store_opts *opts,
                 const dra_mem *mem, store_db **out, dra_diag *d)
{
    store_db *db;
    int rc;
    dra_err e;
    *out = NULL;
    db = dra_calloc(mem, 1, sizeof *db);
    if (!db)
        return DRA_ENOMEM;
    db->mem = mem;
    rc = sqlite3_open_v2(path, &db->h,
                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                             SQLITE_OPEN_NOMUTEX,
                         NULL);
    if (rc != SQLITE_OK) {
        dra_diag_add(d, "", 0, 0, "%s: %s", path,
                     db->h ? sqlite3_errmsg(db->h) : sqlite3_errstr(rc));
        e = rc == SQLITE_NOMEM ? DRA_ENOMEM : DRA_EIO;
        goto fail;
    }
    sqlite3_extended_result_codes(db->h, 1);
    /* One process owns the file; a short busy timeout covers a
     * checkpoint from a previous owner still finishing. */
    sqlite3_busy_timeout(db->h, 2000);
    if ((e = configure(db, opts, d)) || (e = check_wal(db, d)))
        goto fail;
    for (int i = 0; i < Q_N; i++) {
        rc = sqlite3_prepare_v3(db->h, queries[i], -1, SQLITE_PREPARE_PERSISTENT,
                                &db->q[i], NULL);
        if (rc != SQLITE_OK) {
            dra_diag_add(d, "", 0, 0, "%s", sqlite3_errmsg(db->h));
            e = DRA_EIO;
            goto fail;
        }
    }
    db->wal_path = dra_malloc(mem, strlen(path) + 5);
    if (!db->wal_path) {
        e = DRA_ENOMEM;
        goto fail;
    }
    strcpy(db->wal_path, path);
    strcat(db->wal_path, "-wal");
    *out = db;
    return DRA_OK;
fail:
    sdb_close(db);
    return e;
}

void sdb_close(store_db *db)
{
    if (!db)
        return;
    for (int i = 0; i < Q_N; i++)
        sqlite3_finalize(db->q[i]);
    if (db->h) {
        /* A clean close checkpoints and removes the WAL; a failure here
         * leaves the WAL for the next open to recover, nothing is lost. */
        sqlite3_close(db->h);
    }
    dra_free(db->mem, db->wal_path);
    dra_free(db->mem, db);
}

static dra_err load_resources(store_db *db, const sdb_load_cb *cb, dra_diag *d)
{
    sqlite3_stmt *st;
    int rc;
    dra_err e = DRA_OK;
    if (sqlite3_prepare_v2(db->h, "SELECT id, name, compacted_rv FROM resources",
                           -1, &st, NULL))
        goto sqlfail;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && !e) {
        const unsigned char *name = sqlite3_column_text(st, 1);
        if (!name)
            continue;
        e = cb->resource(cb->ud, sqlite3_column_int64(st, 0),
                         (const char *)name,
                         (uint64_t)sqlite3_column_int64(st, 2));
    }
    if (!e && rc != SQLITE_DONE)
        e = DRA_EIO, dra_diag_add(d, "", 0, 0, "%s", sqlite3_errmsg(db->h));
    sqlite3_finalize(st);
    return e;
sqlfail:
    dra_diag_add(d, "", 0, 0, "%s", sqlite3_errmsg(db->h));
    return DRA_EIO;
}

/* Every row, in version order. A row without a state (none is written
 * so) or without its key is skipped. */
static dra_err load_rows(store_db *db, const sdb_load_cb *cb, uint64_t *maxrv, dra_diag *d)
{
    static const char q[] = "SELECT res, ns, name, rv, value, type FROM events ORDER BY rv";
    sqlite3_stmt *st;
    int rc;
    dra_err e = DRA_OK;
    if (sqlite3_prepare_v2(db->h, q, -1, &st, NULL)) {
        dra_diag_add(d, "", 0, 0, "%s", sqlite3_errmsg(db->h));
        return DRA_EIO;
    }
    while (!e && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        uint64_t rv = (uint64_t)sqlite3_column_int64(st, 3);
        const char *ns = (const char *)sqlite3_column_text(st, 1);
        const char *name = (const char *)sqlite3_column_text(st, 2);
        /* A zero-length blob reads as NULL: an empty state. */
        const char *v = sqlite3_column_blob(st, 4);
        size_t len = (size_t)sqlite3_column_bytes(st, 4);
        if (rv > *maxrv)
            *maxrv = rv;
        if (!ns || !name)
            continue;
        e = cb->event(cb->ud, rv, sqlite3_column_int(st, 5), sqlite3_column_int64(st, 0), ns,
                      name, v ? v : "", len);
    }
    if (!e && rc != SQLITE_DONE) {
        dra_diag_add(d, "", 0, 0, "%s", sqlite3_errmsg(db->h));
        e = DRA_EIO;
    }
    sqlite3_finalize(st);
    return e;
}

dra_err sdb_load(store_db *db, const sdb_load_cb *cb, uint64_t *rv, dra_diag *d)
{
    sqlite3_stmt *st;
    dra_err e;
    uint64_t maxrv = 0;
    if (sqlite3_prepare_v2(db->h, "SELECT format, rv FROM meta", -1, &st, NULL)) {
        dra_diag_add(d, "", 0, 0, "%s", sqlite3_errmsg(db->h));
        return DRA_EIO;
    }
    if (sqlite3_step(st) != SQLITE_ROW || sqlite3_column_int(st, 0) != FORMAT) {
        dra_diag_add(d, "", 0, 0, "not a dra store (format %d)", FORMAT);
        sqlite3_finalize(st);
        return DRA_EIO;
    }
    maxrv = (uint64_t)sqlite3_column_int64(st, 1);
    sqlite3_finalize(st);
    if ((e = load_resources(db, cb, d)) || (e = load_rows(db, cb, &maxrv, d)))
        return e;
    *rv = maxrv;
    return DRA_OK;
}

dra_err sdb_begin(store_db *db, char *msg, size_t cap)
{
    return step(db, Q_BEGIN, msg, cap);
}

dra_err sdb_commit(store_db *db, char *msg, size_t cap)
{
    return step(db, Q_COMMIT, msg, cap);
}

void sdb_rollback(store_db *db)
{
    /* After some errors SQLite has already rolled back; ROLLBACK then
     * fails harmlessly, so only roll back an open transaction. */
    if (!sqlite3_get_autocommit(db->h))
        step(db, Q_ROLLBACK, NULL, 0);
}

dra_err sdb_resource_add(store_db *db, const char *name, int64_t *id,
                         char *msg, size_t cap)
{
    dra_err e = bound(db, Q_RES_ADD, bind_text(db->q[Q_RES_ADD], 1, name), msg,
                      cap);
    if (e || (e = step(db, Q_RES_ADD, msg, cap)))
        return e;
    *id = sqlite3_last_insert_rowid(db->h);
    return DRA_OK;
}

dra_err sdb_event(store_db *db, uint64_t rv, int type, int64_t res,
                  const char *ns, const char *name, const char *value,
                  size_t len, char *msg, size_t cap)
{
    sqlite3_stmt *st = db->q[Q_EVENT];
    int rc = sqlite3_bind_int64(st, 1, (sqlite3_int64)rv);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int(st, 2, type);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(st, 3, res);
    if (rc == SQLITE_OK)
        rc = bind_text(st, 4, ns);
    if (rc == SQLITE_OK)
        rc = bind_text(st, 5, name);
    if (rc == SQLITE_OK)
        rc = bind_blob(st, 6, value, len);
    dra_err e = bound(db, Q_EVENT, rc, msg, cap);
    return e ? e : step(db, Q_EVENT, msg, cap);
}

dra_err sdb_event_del(store_db *db, uint64_t rv, char *msg, size_t cap)
{
    dra_err e = bound(db, Q_EVENT_DEL,
                      sqlite3_bind_int64(db->q[Q_EVENT_DEL], 1, (sqlite3_int64)rv), msg, cap);
    return e ? e : step(db, Q_EVENT_DEL, msg, cap);
}

dra_err sdb_compact(store_db *db, const uint64_t *rvs, size_t nrv, const int64_t *res,
                    const uint64_t *crv, size_t n, uint64_t rv, char *msg, size_t cap)
{
    dra_err e;
    if ((e = sdb_begin(db, msg, cap)))
        return e;
    /* The rows about to go may hold the highest version stored. */
    e = bound(db, Q_KEEP_RV,
              sqlite3_bind_int64(db->q[Q_KEEP_RV], 1, (sqlite3_int64)rv), msg,
              cap);
    if (!e)
        e = step(db, Q_KEEP_RV, msg, cap);
    for (size_t i = 0; i < nrv && !e; i++)
        e = sdb_event_del(db, rvs[i], msg, cap);
    for (size_t i = 0; i < n && !e; i++) {
        sqlite3_stmt *st = db->q[Q_COMPACT_RES];
        int rc = sqlite3_bind_int64(st, 1, res[i]);
        if (rc == SQLITE_OK)
            rc = sqlite3_bind_int64(st, 2, (sqlite3_int64)crv[i]);
        e = bound(db, Q_COMPACT_RES, rc, msg, cap);
        if (!e)
            e = step(db, Q_COMPACT_RES, msg, cap);
    }
    if (!e)
        e = sdb_commit(db, msg, cap);
    if (e)
        sdb_rollback(db);
    return e;
}


dra_err sdb_vacuum_step(store_db *db, int pages)
{
    int ok = 1;
    char sql[64];
    int64_t freel = pragma_int(db, "PRAGMA freelist_count", &ok);
    int64_t total = pragma_int(db, "PRAGMA page_count", &ok);
    if (!ok)
        return DRA_EIO;
    if (freel < 64 || freel * 4 < total)
        return DRA_OK;
    snprintf(sql, sizeof sql, "PRAGMA incremental_vacuum(%d)", pages);
    if (sqlite3_exec(db->h, sql, NULL, NULL, NULL) != SQLITE_OK)
        return DRA_EIO;
    return DRA_OK;
}

dra_err sdb_sizes(store_db *db, int64_t *db_bytes, int64_t *wal_bytes)
{
    int ok = 1;
    struct stat sb;
    int64_t pages = pragma_int(db, "PRAGMA page_count", &ok);
    int64_t psize = pragma_int(db, "PRAGMA page_size", &ok);
    *db_bytes = ok ? pages * psize : -1;
    *wal_bytes = stat(db->wal_path, &sb) == 0 ? (int64_t)sb.st_size : -1;
    return ok ? DRA_OK : DRA_EIO;
}
