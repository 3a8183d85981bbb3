/* Tests for the store's database format (store_sql.c, format 3: one row
 * per write, kept while it is a live object's state or history): no
 * stale row survives updates and deletions on either side of the
 * compaction point, an open deletes rows that are neither (as a failed
 * step would leave), and a format 2 database (objects table, events
 * without their states) is converted with its objects and history. The
 * database is read with SQLite directly. */
#include "dra_test.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dra/store.h"
#include "store_fixture.h"

static dra_err put(dra_store *s, dra_store_op op, const char *name, const char *payload,
                   uint64_t *rv)
{
    char json[2048];
    dra_store_write w;
    int n = snprintf(json, sizeof json,
                     "{\"metadata\":{\"name\":\"%s\",\"resourceVersion\":\"\"},\"v\":\"%s\"}",
                     name, payload);
    memset(&w, 0, sizeof w);
    w.op = op;
    w.resource = "things";
    w.ns = "";
    w.name = name;
    w.json = json;
    w.len = (size_t)n;
    w.rv_at = (size_t)(strstr(json, "\"resourceVersion\":\"") - json) + 19;
    dra_err e = dra_store_write_one(s, &w);
    dra_store_obj_unref(w.obj);
    if (rv)
        *rv = w.rv;
    return e;
}

/* Runs |sql| on the closed store's file; the first column of its last
 * row as an integer (-1 when none). */
static long long sql(const tdir *t, const char *q)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    long long v = -1;
    int rc;
    assert_int_equal(sqlite3_open(t->db, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, q, -1, &st, NULL), SQLITE_OK);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    assert_int_equal(rc, SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void must_sql(const tdir *t, const char *q)
{
    sqlite3 *db;
    char *err = NULL;
    assert_int_equal(sqlite3_open(t->db, &db), SQLITE_OK);
    if (sqlite3_exec(db, q, NULL, NULL, &err) != SQLITE_OK)
        fail_msg("%s: %s", q, err ? err : "?");
    sqlite3_close(db);
}

static void stats(dra_store *s, dra_store_stats *st)
{
    assert_int_equal(dra_store_stats_get(s, st), 0);
}

static const char *state_of(dra_store *s, const char *name)
{
    static char v[64];
    dra_store_obj *o = NULL;
    const char *p;
    if (dra_store_get(s, "things", "", name, &o) != DRA_OK)
        return NULL;
    p = strstr(o->json, "\"v\":\"");
    snprintf(v, sizeof v, "%.*s", p ? (int)strcspn(p + 5, "\"") : 0, p ? p + 5 : "");
    dra_store_obj_unref(o);
    return v;
}

/* The rows are exactly each live object's current state and the
 * history (every row after its resource's compaction point). */
static void check_rows(const tdir *t, const dra_store_stats *st)
{
#define LATER                                                                        \
    "EXISTS (SELECT 1 FROM events e2 WHERE e2.res = e.res AND e2.ns = e.ns AND "     \
    "e2.name = e.name AND e2.rv > e.rv)"
    assert_int_equal(sql(t, "SELECT count(*) FROM events e JOIN resources r ON e.res = r.id "
                            "WHERE e.rv <= r.compacted_rv AND (e.type = 2 OR " LATER ")"),
                     0);
    assert_int_equal(sql(t, "SELECT count(*) FROM events e JOIN resources r ON e.res = r.id "
                            "WHERE e.rv > r.compacted_rv"),
                     (long long)st->history_events);
    assert_int_equal(sql(t, "SELECT count(*) FROM events e WHERE e.type != 2 AND NOT " LATER),
                     (long long)st->objects);
#undef LATER
}

/* Rows track the state, whatever the writes did. */
static void test_rows_track_state(void **state)
{
    tdir t;
    dra_store *s;
    dra_store_stats st;
    dra_store_opts o = {.history_min_bytes = 1, .history_max_events = 40,
                        .compact_step = 16, .unsafe_nosync = 1};
    char name[16];
    (void)state;
    tdir_make(&t);
    s = open_store(&t, &o);
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof name, "o%d", i);
        assert_int_equal(put(s, DRA_STORE_CREATE, name, "v0", NULL), 0);
    }
    /* Churn on a few keys pushes the first states past the compaction
     * point; then the old keys change: their previous rows are older
     * than the history and go with the write. */
    for (int r = 0; r < 20; r++)
        for (int i = 0; i < 5; i++) {
            snprintf(name, sizeof name, "o%d", i);
            assert_int_equal(put(s, DRA_STORE_UPDATE, name, "churn", NULL), 0);
        }
    assert_int_equal(dra_store_compact(s), 0);
    for (int i = 50; i < 70; i++) {
        snprintf(name, sizeof name, "o%d", i);
        assert_int_equal(put(s, DRA_STORE_UPDATE, name, "late", NULL), 0);
    }
    for (int i = 70; i < 80; i++) {
        snprintf(name, sizeof name, "o%d", i);
        assert_int_equal(put(s, DRA_STORE_DELETE, name, "", NULL), 0);
    }
    assert_int_equal(dra_store_compact(s), 0);
    stats(s, &st);
    assert_int_equal(st.objects, 90);
    assert_true(st.compactions > 0);
    dra_store_close(s);
    check_rows(&t, &st);
    /* The same after a reopen, which finds nothing to clean. */
    s = open_store(&t, &o);
    stats(s, &st);
    assert_int_equal(st.objects, 90);
    assert_string_equal(state_of(s, "o3"), "churn");
    assert_string_equal(state_of(s, "o55"), "late");
    assert_string_equal(state_of(s, "o90"), "v0");
    assert_null(state_of(s, "o75"));
    dra_store_close(s);
    check_rows(&t, &st);
    tdir_rm(&t);
}

/* Rows from before the compaction point that are not a live object's
 * current state are deleted by the next open. */
static void test_open_deletes_stale_rows(void **state)
{
    tdir t;
    dra_store *s;
    dra_store_stats st;
    dra_store_opts o = {.history_min_bytes = 1, .history_max_events = 10,
                        .compact_step = 64, .unsafe_nosync = 1};
    char q[320];
    (void)state;
    tdir_make(&t);
    s = open_store(&t, &o);
    assert_int_equal(put(s, DRA_STORE_CREATE, "keep", "first", NULL), 0);
    for (int i = 0; i < 30; i++)
        assert_int_equal(put(s, DRA_STORE_UPDATE, "keep", "now", NULL), 0);
    assert_int_equal(dra_store_compact(s), 0);
    dra_store_close(s);
    /* What a crash between a write and its clean-up could leave: an old
     * state of "keep" and a deletion of "gone", both before the point
     * (versions 1 and 2 are free: the first states were compacted). */
    assert_true(sql(&t, "SELECT compacted_rv FROM resources WHERE name = 'things'") > 3);
    assert_int_equal(sql(&t, "SELECT count(*) FROM events WHERE rv <= 2"), 0);
    snprintf(q, sizeof q,
             "INSERT INTO events(rv, type, res, ns, name, value) VALUES "
             "(1, 1, (SELECT id FROM resources WHERE name = 'things'), '', 'keep', "
             "'{\"v\":\"stale\"}'), "
             "(2, 2, (SELECT id FROM resources WHERE name = 'things'), '', 'gone', "
             "'{\"v\":\"x\"}')");
    must_sql(&t, q);
    s = open_store(&t, &o);
    assert_string_equal(state_of(s, "keep"), "now");
    assert_null(state_of(s, "gone"));
    stats(s, &st);
    dra_store_close(s);
    assert_int_equal(sql(&t, "SELECT count(*) FROM events WHERE rv <= 2"), 0);
    check_rows(&t, &st);
    tdir_rm(&t);
}

/* A format 2 database: current states in objects, event rows with no
 * state while it is current, an object whose events were compacted. */
static void test_convert_v2(void **state)
{
    tdir t;
    dra_store *s;
    dra_store_watch *w;
    dra_store_event ev[8];
    dra_store_stats st;
    size_t n;
    (void)state;
    tdir_make(&t);
    must_sql(&t,
             "CREATE TABLE resources(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
             " compacted_rv INTEGER NOT NULL);"
             "CREATE TABLE objects(id INTEGER PRIMARY KEY, res INTEGER NOT NULL, ns TEXT NOT NULL,"
             " name TEXT NOT NULL, rv INTEGER NOT NULL, value BLOB NOT NULL);"
             "CREATE UNIQUE INDEX objects_key ON objects(res, ns, name);"
             "CREATE TABLE events(rv INTEGER PRIMARY KEY, type INTEGER NOT NULL,"
             " res INTEGER NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL, value BLOB);"
             "CREATE TABLE meta(id INTEGER PRIMARY KEY CHECK (id = 1), format INTEGER NOT NULL,"
             " rv INTEGER NOT NULL);"
             "INSERT INTO meta VALUES (1, 2, 2);"
             "INSERT INTO resources VALUES (1, 'things', 2);"
             /* d: rv 2, its event compacted; a: added at 3; b: added at 1
              * (compacted), modified at 4; c: added at 5, deleted at 6. */
             "INSERT INTO objects(res, ns, name, rv, value) VALUES"
             " (1, '', 'd', 2, '{\"v\":\"d2\"}'), (1, '', 'a', 3, '{\"v\":\"a3\"}'),"
             " (1, '', 'b', 4, '{\"v\":\"b4\"}');"
             "INSERT INTO events VALUES (3, 0, 1, '', 'a', NULL), (4, 1, 1, '', 'b', NULL),"
             " (5, 0, 1, '', 'c', '{\"v\":\"c5\"}'), (6, 2, 1, '', 'c', '{\"v\":\"c5\"}');");
    s = open_store(&t, NULL);
    stats(s, &st);
    assert_int_equal(st.objects, 3);
    assert_int_equal(st.rv, 6);
    assert_string_equal(state_of(s, "d"), "d2");
    assert_string_equal(state_of(s, "a"), "a3");
    assert_string_equal(state_of(s, "b"), "b4");
    assert_null(state_of(s, "c"));
    /* The history after the compaction point, with the states. */
    assert_int_equal(dra_store_watch_open(s, "things", NULL, 2, NULL, NULL, &w), 0);
    assert_int_equal(dra_store_watch_poll(w, ev, 8, &n), 0);
    assert_int_equal(n, 4);
    assert_int_equal(ev[0].type, DRA_STORE_ADDED);
    assert_non_null(strstr(ev[0].obj->json, "a3"));
    assert_int_equal(ev[1].type, DRA_STORE_MODIFIED);
    assert_non_null(strstr(ev[1].obj->json, "b4"));
    assert_int_equal(ev[3].type, DRA_STORE_DELETED);
    assert_non_null(strstr(ev[3].obj->json, "c5"));
    for (size_t i = 0; i < n; i++)
        dra_store_event_fini(&ev[i]);
    dra_store_watch_close(w);
    /* Writes go on from the counter. */
    {
        uint64_t rv;
        assert_int_equal(put(s, DRA_STORE_UPDATE, "d", "d7", &rv), 0);
        assert_int_equal(rv, 7);
    }
    dra_store_close(s);
    assert_int_equal(sql(&t, "SELECT format FROM meta"), 3);
    assert_int_equal(sql(&t, "SELECT count(*) FROM sqlite_master WHERE name = 'objects'"), 0);
    assert_int_equal(sql(&t, "SELECT count(*) FROM events WHERE value IS NULL"), 0);
    /* d's old row (rv 2, before the point) went with the write at 7. */
    assert_int_equal(sql(&t, "SELECT count(*) FROM events WHERE rv = 2"), 0);
    s = open_store(&t, NULL);
    assert_string_equal(state_of(s, "d"), "d7");
    assert_string_equal(state_of(s, "b"), "b4");
    dra_store_close(s);
    tdir_rm(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_track_state),
        cmocka_unit_test(test_open_deletes_stale_rows),
        cmocka_unit_test(test_convert_v2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
