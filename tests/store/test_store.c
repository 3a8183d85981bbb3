/* Tests for src/store: CRUD with preconditions, one counter, sorted and
 * paged lists, watches (filters, resume after a restart, 410 after
 * compaction), group commit under concurrent writers, a full database,
 * and the bounds compaction keeps. */
#include "dra_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dra/store.h"
#include "store_fixture.h"

/* A JSON object whose resourceVersion the store fills in. */
static dra_err put(dra_store *s, dra_store_op op, const char *res,
                   const char *ns, const char *name, uint64_t expect,
                   const char *payload, uint64_t *rv)
{
    char json[4096];
    dra_store_write w;
    int n = snprintf(json, sizeof json,
                     "{\"metadata\":{\"name\":\"%s\",\"resourceVersion\":\"\"},"
                     "\"v\":\"%s\"}",
                     name, payload);
    assert_true(n > 0 && (size_t)n < sizeof json);
    memset(&w, 0, sizeof w);
    w.op = op;
    w.resource = res;
    w.ns = ns;
    w.name = name;
    w.expect_rv = expect;
    w.json = json;
    w.len = (size_t)n;
    w.rv_at = (size_t)(strstr(json, "\"resourceVersion\":\"") - json) + 19;
    dra_err e = dra_store_write_one(s, &w);
    if (!e) {
        char want[64];
        snprintf(want, sizeof want, "\"resourceVersion\":\"%llu\"",
                 (unsigned long long)w.rv);
        assert_non_null(strstr(w.obj->json, want));
        assert_int_equal(w.obj->rv, w.rv);
        dra_store_obj_unref(w.obj);
    } else {
        assert_null(w.obj);
    }
    if (rv)
        *rv = w.rv;
    return e;
}

static void test_crud(void **state)
{
    tdir t;
    dra_store *s;
    dra_store_obj *o;
    uint64_t rv1, rv2, rv3;
    (void)state;
    tdir_make(&t);
    s = open_store(&t, NULL);
    assert_int_equal(dra_store_rv(s), 0);
    assert_int_equal(put(s, DRA_STORE_CREATE, "pods", "default", "a", 0, "1", &rv1), DRA_OK);
    assert_int_equal(rv1, 1);
    assert_int_equal(put(s, DRA_STORE_CREATE, "pods", "default", "a", 0, "x", NULL), DRA_EEXIST);
    assert_int_equal(put(s, DRA_STORE_UPDATE, "pods", "default", "b", 0, "x", NULL), DRA_ENOTFOUND);
    assert_int_equal(put(s, DRA_STORE_UPDATE, "pods", "default", "a", 99, "x", NULL), DRA_ECONFLICT);
    assert_int_equal(put(s, DRA_STORE_UPDATE, "pods", "default", "a", rv1, "2", &rv2), DRA_OK);
    assert_true(rv2 > rv1);
    /* Refused writes did not advance the counter. */
    assert_int_equal(rv2, 2);
    assert_int_equal(dra_store_get(s, "pods", "default", "a", &o), DRA_OK);
    assert_int_equal(o->rv, rv2);
    assert_non_null(strstr(o->json, "\"v\":\"2\""));
    assert_int_equal(o->json[o->len], '\0');
    dra_store_obj_unref(o);
    /* Same name in another namespace or resource is another object. */
    assert_int_equal(put(s, DRA_STORE_CREATE, "pods", "other", "a", 0, "o", NULL), DRA_OK);
    assert_int_equal(put(s, DRA_STORE_CREATE, "nodes", "", "a", 0, "n", NULL), DRA_OK);
    assert_int_equal(dra_store_get(s, "nodes", "default", "a", &o), DRA_ENOTFOUND);
    assert_int_equal(put(s, DRA_STORE_DELETE, "pods", "default", "a", rv1, "d", NULL), DRA_ECONFLICT);
    assert_int_equal(put(s, DRA_STORE_DELETE, "pods", "default", "a", 0, "d", &rv3), DRA_OK);
    assert_int_equal(dra_store_get(s, "pods", "default", "a", &o), DRA_ENOTFOUND);
    assert_int_equal(put(s, DRA_STORE_DELETE, "pods", "default", "a", 0, "d", NULL), DRA_ENOTFOUND);
    assert_int_equal(dra_store_rv(s), rv3);
    dra_store_close(s);
    tdir_rm(&t);
}

static void test_bad_args(void **state)
{
    tdir t;
    dra_store *s;
    dra_store_write w;
    char longname[2000];
    (void)state;
    tdir_make(&t);
    s = open_store(&t, NULL);
    memset(&w, 0, sizeof w);
    w.op = DRA_STORE_CREATE;
    w.resource = "pods";
    w.ns = "";
    w.name = "";
    w.json = "{}";
    w.len = 2;
    w.rv_at = DRA_STORE_NO_RV;
    assert_int_equal(dra_store_write_one(s, &w), DRA_EINVAL);
    w.name = "x";
    w.rv_at = 3;
    assert_int_equal(dra_store_write_one(s, &w), DRA_EINVAL);
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    w.name = longname;
    w.rv_at = DRA_STORE_NO_RV;
    assert_int_equal(dra_store_write_one(s, &w), DRA_EINVAL);
    w.name = "x";
    assert_int_equal(dra_store_write_one(s, &w), DRA_OK);
    assert_string_equal(w.obj->json, "{}");
    dra_store_obj_unref(w.obj);
    dra_store_close(s);
    tdir_rm(&t);
}

static void test_list(void **state)
{
    tdir t;
    dra_store *s;
    dra_store_page l;
    int more;
    const char *names[] = {"c", "a", "b", "e", "d"};
    (void)state;
    tdir_make(&t);
    s = open_store(&t, NULL);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(put(s, DRA_STORE_CREATE, "claims", "ns2", names[i], 0, "", NULL), 0);
        assert_int_equal(put(s, DRA_STORE_CREATE, "claims", "ns1", names[i], 0, "", NULL), 0);
    }
    assert_int_equal(dra_store_list(s, "claims", NULL, NULL, NULL, 0, &l, &more), 0);
    assert_int_equal(l.n, 10);
    assert_false(more);
    assert_int_equal(l.rv, 10);
    assert_string_equal(l.items[0].ns, "ns1");
    assert_string_equal(l.items[0].name, "a");
    assert_string_equal(l.items[4].name, "e");
    assert_string_equal(l.items[5].ns, "ns2");
    dra_store_page_fini(&l);
    /* A page, then the rest after its last key. */
    assert_int_equal(dra_store_list(s, "claims", "ns2", NULL, NULL, 2, &l, &more), 0);
    assert_int_equal(l.n, 2);
    assert_true(more);
    assert_string_equal(l.items[1].name, "b");
    dra_store_page_fini(&l);
    assert_int_equal(dra_store_list(s, "claims", "ns2", "ns2", "b", 2, &l, &more), 0);
    assert_int_equal(l.n, 2);
    assert_string_equal(l.items[0].name, "c");
    assert_true(more);
    dra_store_page_fini(&l);
    assert_int_equal(dra_store_list(s, "claims", NULL, "ns1", "e", 0, &l, &more), 0);
    assert_int_equal(l.n, 5);
    assert_string_equal(l.items[0].ns, "ns2");
    dra_store_page_fini(&l);
    assert_int_equal(dra_store_list(s, "nothing", NULL, NULL, NULL, 0, &l, &more), 0);
    assert_int_equal(l.n, 0);
    dra_store_page_fini(&l);
    dra_store_page_fini(&l);
    /* The sorted index follows deletes, creates and updates made after a
     * list built it. */
    assert_int_equal(put(s, DRA_STORE_DELETE, "claims", "ns1", "a", 0, "", NULL), 0);
    assert_int_equal(put(s, DRA_STORE_CREATE, "claims", "ns1", "bb", 0, "", NULL), 0);
    assert_int_equal(put(s, DRA_STORE_CREATE, "claims", "ns0", "z", 0, "", NULL), 0);
    assert_int_equal(put(s, DRA_STORE_UPDATE, "claims", "ns1", "c", 0, "new", NULL), 0);
    assert_int_equal(dra_store_list(s, "claims", "ns1", NULL, NULL, 0, &l, &more), 0);
    assert_int_equal(l.n, 5);
    assert_string_equal(l.items[0].name, "b");
    assert_string_equal(l.items[1].name, "bb");
    assert_string_equal(l.items[2].name, "c");
    assert_non_null(strstr(l.items[2].obj->json, "\"new\""));
    dra_store_page_fini(&l);
    assert_int_equal(dra_store_list(s, "claims", NULL, NULL, NULL, 0, &l, &more), 0);
    assert_int_equal(l.n, 11);
    assert_string_equal(l.items[0].ns, "ns0");
    dra_store_page_fini(&l);
    /* A continue key that no longer exists still resumes after it. */
    assert_int_equal(dra_store_list(s, "claims", "ns1", "ns1", "a", 1, &l, &more), 0);
    assert_int_equal(l.n, 1);
    assert_string_equal(l.items[0].name, "b");
    assert_true(more);
    dra_store_page_fini(&l);
    assert_int_equal(dra_store_list(s, "claims", "ns3", NULL, NULL, 0, &l, &more), 0);
    assert_int_equal(l.n, 0);
    dra_store_page_fini(&l);
    dra_store_close(s);
    tdir_rm(&t);
}

/* The sorted index against a model: random creates, deletes (of merged
 * and of not yet merged keys), re-creates and updates between lists,
 * including runs long enough that the index is rebuilt rather than
 * merged. Namespaces "a" and "a-b" order differently as (namespace,
 * name) than as "ns/name". */
#define MODEL_NS 3
#define MODEL_NAMES 1000
/* A list of namespace |only| (-1: all) matches the model's live keys. */
static void model_list(dra_store *s, const unsigned char *live, int only)
{
    static const char *const nss[MODEL_NS] = {"a", "a-b", "b"};
    dra_store_page l;
    size_t k = 0;
    assert_int_equal(dra_store_list(s, "claims", only < 0 ? NULL : nss[only], NULL, NULL, 0,
                                    &l, NULL), 0);
    for (int n = 0; n < MODEL_NS; n++)
        for (int i = 0; i < MODEL_NAMES; i++) {
            char name[16];
            if (!live[n * MODEL_NAMES + i] || (only >= 0 && n != only))
                continue;
            snprintf(name, sizeof name, "n%03d", i);
            assert_true(k < l.n);
            assert_string_equal(l.items[k].ns, nss[n]);
            assert_string_equal(l.items[k].name, name);
            k++;
        }
    assert_int_equal(l.n, k);
    dra_store_page_fini(&l);
}

/* The whole collection, then each namespace alone (its slice). */
static void model_check(dra_store *s, const unsigned char *live)
{
    for (int n = -1; n < MODEL_NS; n++)
        model_list(s, live, n);
}

static void test_list_model(void **state)
{
    static const char *const nss[MODEL_NS] = {"a", "a-b", "b"};
    static const int run[] = {1, 3, 10, 50, 2500, 7, 3000, 200, 1, 400};
    unsigned char live[MODEL_NS * MODEL_NAMES] = {0};
    dra_store_opts o;
    uint32_t x = 12345;
    tdir t;
    dra_store *s;
    (void)state;
    memset(&o, 0, sizeof o);
    o.unsafe_nosync = 1;
    tdir_make(&t);
    s = open_store(&t, &o);
    model_check(s, live);
    for (size_t r = 0; r < sizeof run / sizeof *run; r++) {
        for (int i = 0; i < run[r]; i++) {
            int k, n;
            char name[16];
            x = x * 1103515245u + 12345u;
            k = (int)((x >> 8) % (MODEL_NS * MODEL_NAMES));
            n = k / MODEL_NAMES;
            snprintf(name, sizeof name, "n%03d", k % MODEL_NAMES);
            if (!live[k]) {
                assert_int_equal(put(s, DRA_STORE_CREATE, "claims", nss[n], name, 0, "", NULL), 0);
                live[k] = 1;
            } else if ((x >> 20) % 3) {
                assert_int_equal(put(s, DRA_STORE_DELETE, "claims", nss[n], name, 0, "", NULL), 0);
                live[k] = 0;
            } else {
                assert_int_equal(put(s, DRA_STORE_UPDATE, "claims", nss[n], name, 0, "u", NULL), 0);
            }
        }
        model_check(s, live);
    }
    dra_store_close(s);
    tdir_rm(&t);
}

typedef struct wake {
    atomic_int n;
} wake;

static void on_notify(void *ud)
{
    atomic_fetch_add(&((wake *)ud)->n, 1);
}

static void test_watch(void **state)
{
    tdir t;
    dra_store *s;
    dra_store_watch *all, *ns1;
    dra_store_event ev[8];
    size_t n;
    uint64_t rv;
    wake wk = {0};
    (void)state;
    tdir_make(&t);
    s = open_store(&t, NULL);
    assert_int_equal(put(s, DRA_STORE_CREATE, "pods", "ns1", "before", 0, "", NULL), 0);
    assert_int_equal(dra_store_watch_open(s, "pods", NULL, 1, on_notify, &wk, &all), 0);
    assert_int_equal(dra_store_watch_open(s, "pods", "ns1", 0, NULL, NULL, &ns1), 0);
    assert_int_equal(dra_store_watch_open(s, "pods", NULL, 5, NULL, NULL, &(dra_store_watch *){NULL}), DRA_ERANGE);
    assert_int_equal(put(s, DRA_STORE_CREATE, "pods", "ns1", "x", 0, "1", &rv), 0);
    assert_int_equal(put(s, DRA_STORE_CREATE, "pods", "ns2", "y", 0, "1", NULL), 0);
    assert_int_equal(put(s, DRA_STORE_UPDATE, "pods", "ns1", "x", rv, "2", NULL), 0);
    assert_int_equal(put(s, DRA_STORE_DELETE, "pods", "ns1", "x", 0, "3", NULL), 0);
    assert_int_equal(put(s, DRA_STORE_CREATE, "nodes", "", "n", 0, "", NULL), 0);
    assert_int_equal(atomic_load(&wk.n), 4);
    assert_int_equal(dra_store_watch_poll(all, ev, 8, &n), 0);
    assert_int_equal(n, 4);
    assert_int_equal(ev[0].type, DRA_STORE_ADDED);
    assert_string_equal(ev[0].name, "x");
    assert_null(ev[0].prev);
    assert_int_equal(ev[2].type, DRA_STORE_MODIFIED);
    assert_non_null(strstr(ev[2].prev->json, "\"v\":\"1\""));
    assert_non_null(strstr(ev[2].obj->json, "\"v\":\"2\""));
    assert_int_equal(ev[3].type, DRA_STORE_DELETED);
    assert_int_equal(ev[3].rv, 5);
    assert_non_null(strstr(ev[3].obj->json, "\"resourceVersion\":\"5\""));
    for (size_t i = 0; i < n; i++)
        dra_store_event_fini(&ev[i]);
    assert_int_equal(dra_store_watch_poll(all, ev, 8, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(dra_store_watch_rv(all), 6); /* nothing pending: the store's */
    /* The namespace filter, and taking events a few at a time. */
    assert_int_equal(dra_store_watch_poll(ns1, ev, 2, &n), 0);
    assert_int_equal(n, 2);
    assert_string_equal(ev[0].name, "before");
    assert_string_equal(ev[1].name, "x");
    assert_int_equal(dra_store_watch_rv(ns1), 2);
    dra_store_event_fini(&ev[0]);
    dra_store_event_fini(&ev[1]);
    assert_int_equal(dra_store_watch_poll(ns1, ev, 8, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(ev[1].type, DRA_STORE_DELETED);
    dra_store_event_fini(&ev[0]);
    dra_store_event_fini(&ev[1]);
    dra_store_watch_close(all);
    dra_store_watch_close(ns1);
    dra_store_watch_close(NULL);
    dra_store_close(s);
    tdir_rm(&t);
}

/* Objects, history and the counter come back after a restart, and a
 * watcher resumes from its last version without a gap. */
static void test_reopen(void **state)
{
    tdir t;
    dra_store *s;
    dra_store_obj *o;
    dra_store_watch *w;
    dra_store_event ev[8];
    size_t n;
    uint64_t rv;
    (void)state;
    tdir_make(&t);
    s = open_store(&t, NULL);
    assert_int_equal(put(s, DRA_STORE_CREATE, "pods", "a", "p1", 0, "1", &rv), 0);
    assert_int_equal(put(s, DRA_STORE_UPDATE, "pods", "a", "p1", rv, "2", NULL), 0);
    assert_int_equal(put(s, DRA_STORE_CREATE, "pods", "a", "p2", 0, "1", NULL), 0);
    assert_int_equal(put(s, DRA_STORE_DELETE, "pods", "a", "p2", 0, "x", NULL), 0);
    /* Deleted and made again: the history's previous states run across
     * the gap. */
    assert_int_equal(put(s, DRA_STORE_CREATE, "other", "a", "q", 0, "q1", NULL), 0);
    assert_int_equal(put(s, DRA_STORE_DELETE, "other", "a", "q", 0, "qx", NULL), 0);
    assert_int_equal(put(s, DRA_STORE_CREATE, "other", "a", "q", 0, "q3", &rv), 0);
    assert_int_equal(put(s, DRA_STORE_UPDATE, "other", "a", "q", rv, "q4", NULL), 0);
    dra_store_close(s);
    s = open_store(&t, NULL);
    assert_int_equal(dra_store_watch_open(s, "other", NULL, 4, NULL, NULL, &w), 0);
    assert_int_equal(dra_store_watch_poll(w, ev, 8, &n), 0);
    assert_int_equal(n, 4);
    assert_int_equal(ev[1].type, DRA_STORE_DELETED);
    assert_non_null(strstr(ev[1].prev->json, "\"q1\""));
    assert_int_equal(ev[2].type, DRA_STORE_ADDED);
    assert_int_equal(ev[3].type, DRA_STORE_MODIFIED);
    assert_non_null(strstr(ev[3].prev->json, "\"q3\""));
    assert_non_null(strstr(ev[3].obj->json, "\"q4\""));
    for (size_t i = 0; i < n; i++)
        dra_store_event_fini(&ev[i]);
    dra_store_watch_close(w);
    dra_store_close(s);
    s = open_store(&t, NULL);
    assert_int_equal(dra_store_rv(s), 8);
    assert_int_equal(dra_store_get(s, "pods", "a", "p1", &o), 0);
    assert_int_equal(o->rv, 2);
    dra_store_obj_unref(o);
    assert_int_equal(dra_store_get(s, "pods", "a", "p2", &o), DRA_ENOTFOUND);
    assert_int_equal(put(s, DRA_STORE_CREATE, "pods", "a", "p3", 0, "1", &rv), 0);
    assert_int_equal(rv, 9);
    assert_int_equal(dra_store_watch_open(s, "pods", NULL, 1, NULL, NULL, &w), 0);
    assert_int_equal(dra_store_watch_poll(w, ev, 8, &n), 0);
    assert_int_equal(n, 4);
    assert_int_equal(ev[0].type, DRA_STORE_MODIFIED);
    assert_non_null(ev[0].prev); /* rebuilt from the history on load */
    assert_non_null(strstr(ev[0].prev->json, "\"v\":\"1\""));
    assert_non_null(strstr(ev[0].obj->json, "\"v\":\"2\""));
    assert_int_equal(ev[2].type, DRA_STORE_DELETED);
    assert_non_null(strstr(ev[2].prev->json, "\"name\":\"p2\""));
    assert_int_equal(ev[3].rv, 9);
    for (size_t i = 0; i < n; i++)
        dra_store_event_fini(&ev[i]);
    dra_store_watch_close(w);
    dra_store_close(s);
    tdir_rm(&t);
}

/* More objects than the loader's batches hold (8 x 256), in three
 * resources, some updated and deleted: a reopen (objects indexed by a
 * second thread) finds every one with its history, and an allocation
 * failure at any point of the open is reported cleanly. */
static void test_reopen_many(void **state)
{
    enum { N = 2500 };
    static const char *const res[] = {"pods", "resourceclaims", "nodes"};
    dra_store_opts o = {.unsafe_nosync = 1};
    dra_test_failmem fm;
    dra_store_stats st;
    dra_store_watch *w;
    dra_store_event ev[16];
    dra_store_obj *obj;
    dra_store *s;
    char name[32];
    uint64_t rv, last = 0;
    size_t n, seen = 0;
    long calls;
    tdir t;
    (void)state;
    tdir_make(&t);
    s = open_store(&t, &o);
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "o%05d", i);
        assert_int_equal(put(s, DRA_STORE_CREATE, res[i % 3], "ns", name, 0, "1", &rv), 0);
        if (i % 7 == 0)
            assert_int_equal(put(s, DRA_STORE_UPDATE, res[i % 3], "ns", name, rv, "2", NULL), 0);
        if (i % 11 == 0)
            assert_int_equal(put(s, DRA_STORE_DELETE, res[i % 3], "ns", name, 0, "x", NULL), 0);
    }
    dra_store_close(s);
    s = open_store(&t, &o);
    assert_int_equal(dra_store_stats_get(s, &st), 0);
    assert_int_equal(st.objects, N - (N + 10) / 11);
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "o%05d", i);
        dra_err e = dra_store_get(s, res[i % 3], "ns", name, &obj);
        if (i % 11 == 0) {
            assert_int_equal(e, DRA_ENOTFOUND);
            continue;
        }
        assert_int_equal(e, 0);
        assert_non_null(strstr(obj->json, i % 7 == 0 ? "\"v\":\"2\"" : "\"v\":\"1\""));
        dra_store_obj_unref(obj);
    }
    /* The history of one resource, in order, with previous states. */
    assert_int_equal(dra_store_watch_open(s, "resourceclaims", NULL, 1, NULL, NULL, &w), 0);
    while (dra_store_watch_poll(w, ev, 16, &n) == 0 && n) {
        for (size_t i = 0; i < n; i++) {
            assert_true(ev[i].rv > last);
            last = ev[i].rv;
            if (ev[i].type != DRA_STORE_ADDED)
                assert_non_null(ev[i].prev);
            seen++;
            dra_store_event_fini(&ev[i]);
        }
    }
    dra_store_watch_close(w);
    assert_true(seen > N / 3);
    dra_store_close(s);
    /* How many allocations an open makes, then a failure at points
     * spread over all of them. */
    dra_test_failmem_init(&fm);
    assert_int_equal(dra_store_open(t.db, &o, &fm.mem, &s, NULL), 0);
    dra_store_close(s);
    calls = atomic_load(&fm.calls);
    assert_true(calls > N);
    for (long at = 1; at <= calls; at += calls / 97 + 1) {
        dra_err e;
        dra_test_failmem_arm(&fm, at);
        e = dra_store_open(t.db, &o, &fm.mem, &s, NULL);
        if (e == DRA_OK)
            dra_store_close(s);
        else
            assert_int_equal(e, DRA_ENOMEM);
    }
    tdir_rm(&t);
}

static void test_compaction(void **state)
{
    tdir t;
    dra_store *s;
    dra_store_watch *w, *quiet;
    dra_store_event ev[4];
    dra_store_stats st;
    size_t n;
    uint64_t rv = 0;
    dra_store_opts o = {.history_min_bytes = 4096, .history_max_events = 50,
                        .compact_step = 8};
    (void)state;
    tdir_make(&t);
    s = open_store(&t, &o);
    assert_int_equal(put(s, DRA_STORE_CREATE, "classes", "", "c", 0, "", NULL), 0);
    assert_int_equal(put(s, DRA_STORE_CREATE, "leases", "", "l", 0, "", &rv), 0);
    assert_int_equal(dra_store_watch_open(s, "leases", NULL, rv, NULL, NULL, &w), 0);
    assert_int_equal(dra_store_watch_open(s, "classes", NULL, rv, NULL, NULL, &quiet), 0);
    /* A lease renewed many times: the history stays bounded. */
    for (int i = 0; i < 400; i++)
        assert_int_equal(put(s, DRA_STORE_UPDATE, "leases", "", "l", 0, "renewed", &rv), 0);
    assert_int_equal(dra_store_compact(s), 0);
    assert_int_equal(dra_store_stats_get(s, &st), 0);
    assert_true(st.history_events <= 50);
    assert_true(st.compactions > 0);
    assert_int_equal(st.objects, 2);
    assert_int_equal(st.rv, rv);
    /* The lease watcher fell behind the compacted history: 410. */
    assert_int_equal(dra_store_watch_poll(w, ev, 4, &n), DRA_EGONE);
    dra_store_watch_close(w);
    assert_int_equal(dra_store_watch_open(s, "leases", NULL, 2, NULL, NULL, &w), DRA_EGONE);
    assert_int_equal(dra_store_watch_open(s, "leases", NULL, rv - 5, NULL, NULL, &w), 0);
    assert_int_equal(dra_store_watch_poll(w, ev, 4, &n), 0);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++)
        dra_store_event_fini(&ev[i]);
    dra_store_watch_close(w);
    /* The quiet resource lost nothing, so its watcher is still fine. */
    assert_int_equal(dra_store_watch_poll(quiet, ev, 4, &n), 0);
    assert_int_equal(n, 0);
    dra_store_watch_close(quiet);
    dra_store_close(s);
    /* The compaction point survives a restart. */
    s = open_store(&t, &o);
    assert_int_equal(dra_store_watch_open(s, "leases", NULL, 2, NULL, NULL, &w), DRA_EGONE);
    assert_int_equal(dra_store_watch_open(s, "classes", NULL, 1, NULL, NULL, &w), 0);
    dra_store_watch_close(w);
    dra_store_close(s);
    tdir_rm(&t);
}

/* The database stays within about twice the live data under churn. */
static void test_db_bounded(void **state)
{
    tdir t;
    dra_store *s;
    dra_store_stats st;
    char payload[1100];
    dra_store_opts o = {.history_min_bytes = 1, .unsafe_nosync = 1};
    (void)state;
    memset(payload, 'x', sizeof payload - 1);
    payload[sizeof payload - 1] = '\0';
    tdir_make(&t);
    s = open_store(&t, &o);
    for (int i = 0; i < 200; i++) {
        char name[16];
        snprintf(name, sizeof name, "o%d", i);
        assert_int_equal(put(s, DRA_STORE_CREATE, "things", "", name, 0, payload, NULL), 0);
    }
    for (int round = 0; round < 20; round++)
        for (int i = 0; i < 200; i++) {
            char name[16];
            snprintf(name, sizeof name, "o%d", i);
            assert_int_equal(put(s, DRA_STORE_UPDATE, "things", "", name, 0, payload, NULL), 0);
        }
    assert_int_equal(dra_store_compact(s), 0);
    assert_int_equal(dra_store_stats_get(s, &st), 0);
    assert_true(st.history_bytes <= st.live_bytes);
    /* Live data about 230 KB; history at most 3/4 of that; rows, indexes
     * and free pages cost some more. */
    if (st.db_bytes > (int64_t)(2.25 * (double)st.live_bytes) + 65536)
        fail_msg("database %lld bytes for %zu live", (long long)st.db_bytes,
                 st.live_bytes);
    dra_store_close(s);
    tdir_rm(&t);
}

typedef struct wargs {
    dra_store *s;
    int id, n;
} wargs;

static void *writer(void *arg)
{
    wargs *a = arg;
    for (int i = 0; i < a->n; i++) {
        char name[32];
        snprintf(name, sizeof name, "w%d-%d", a->id, i);
        if (put(a->s, DRA_STORE_CREATE, "claims", "ns", name, 0, "v", NULL))
            fail_msg("create %s failed", name);
    }
    return NULL;
}

static void test_concurrent(void **state)
{
    tdir t;
    dra_store *s;
    pthread_t th[8];
    wargs a[8];
    dra_store_page l;
    dra_store_stats st;
    (void)state;
    tdir_make(&t);
    s = open_store(&t, NULL);
    for (int i = 0; i < 8; i++) {
        a[i].s = s;
        a[i].id = i;
        a[i].n = 50;
        assert_int_equal(pthread_create(&th[i], NULL, writer, &a[i]), 0);
    }
    for (int i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(dra_store_stats_get(s, &st), 0);
    assert_int_equal(st.writes, 400);
    assert_int_equal(st.rv, 400);
    assert_true(st.batches <= st.writes);
    dra_store_close(s);
    s = open_store(&t, NULL);
    assert_int_equal(dra_store_list(s, "claims", NULL, NULL, NULL, 0, &l, NULL), 0);
    assert_int_equal(l.n, 400);
    /* Every version distinct. */
    {
        char *seen = calloc(401, 1);
        for (size_t i = 0; i < l.n; i++) {
            assert_true(l.items[i].obj->rv >= 1 && l.items[i].obj->rv <= 400);
            assert_false(seen[l.items[i].obj->rv]);
            seen[l.items[i].obj->rv] = 1;
        }
        free(seen);
    }
    dra_store_page_fini(&l);
    dra_store_close(s);
    tdir_rm(&t);
}

typedef struct race {
    dra_store *s;
    uint64_t expect;
    const char *val;
    dra_err e;
} race;

static void *racer(void *arg)
{
    race *a = arg;
    a->e = put(a->s, DRA_STORE_UPDATE, "claims", "ns", "shared", a->expect,
               a->val, NULL);
    return NULL;
}

/* Two updates from the same version, at the same time: exactly one wins,
 * the other gets a conflict, and the winner's value is what is stored. */
static void test_two_writers(void **state)
{
    tdir t;
    dra_store *s;
    (void)state;
    tdir_make(&t);
    s = open_store(&t, NULL);
    assert_int_equal(put(s, DRA_STORE_CREATE, "claims", "ns", "shared", 0, "0", NULL), 0);
    for (int round = 0; round < 20; round++) {
        pthread_t th[2];
        race a[2] = {{s, 0, "\"a\"", 0}, {s, 0, "\"b\"", 0}};
        dra_store_obj *o;
        assert_int_equal(dra_store_get(s, "claims", "ns", "shared", &o), 0);
        a[0].expect = a[1].expect = o->rv;
        dra_store_obj_unref(o);
        a[0].val = "a";
        a[1].val = "b";
        for (int i = 0; i < 2; i++)
            assert_int_equal(pthread_create(&th[i], NULL, racer, &a[i]), 0);
        for (int i = 0; i < 2; i++)
            pthread_join(th[i], NULL);
        assert_true((a[0].e == DRA_OK && a[1].e == DRA_ECONFLICT) ||
                    (a[1].e == DRA_OK && a[0].e == DRA_ECONFLICT));
        assert_int_equal(dra_store_get(s, "claims", "ns", "shared", &o), 0);
        assert_non_null(strstr(o->json, a[0].e == DRA_OK ? "\"v\":\"a\"" : "\"v\":\"b\""));
        dra_store_obj_unref(o);
    }
    dra_store_close(s);
    tdir_rm(&t);
}

/* A database that cannot grow: writes fail with a clear error, nothing
 * half-written, reads keep working, the next open sees only what was
 * acknowledged. */
static void test_full(void **state)
{
    tdir t;
    dra_store *s;
    dra_store_page l;
    char payload[3000];
    int ok = 0, full = 0;
    uint64_t last = 0;
    dra_store_opts o = {.max_db_bytes = 256 * 1024};
    (void)state;
    memset(payload, 'y', sizeof payload - 1);
    payload[sizeof payload - 1] = '\0';
    tdir_make(&t);
    s = open_store(&t, &o);
    for (int i = 0; i < 400 && full < 3; i++) {
        char name[16];
        uint64_t rv;
        snprintf(name, sizeof name, "o%d", i);
        dra_err e = put(s, DRA_STORE_CREATE, "things", "", name, 0, payload, &rv);
        if (e == DRA_OK) {
            ok++;
            assert_true(rv > last);
            last = rv;
        } else {
            assert_int_equal(e, DRA_EUNAVAILABLE);
            full++;
        }
    }
    assert_true(full > 0);
    assert_true(ok > 10);
    assert_int_equal(dra_store_rv(s), last);
    assert_int_equal(dra_store_list(s, "things", NULL, NULL, NULL, 0, &l, NULL), 0);
    assert_int_equal(l.n, (size_t)ok);
    dra_store_page_fini(&l);
    dra_store_close(s);
    s = open_store(&t, NULL);
    assert_int_equal(dra_store_rv(s), last);
    assert_int_equal(dra_store_list(s, "things", NULL, NULL, NULL, 0, &l, NULL), 0);
    assert_int_equal(l.n, (size_t)ok);
    dra_store_page_fini(&l);
    dra_store_close(s);
    tdir_rm(&t);
}

static void test_bad_file(void **state)
{
    tdir t;
    dra_store *s = NULL;
    dra_diag d;
    FILE *f;
    (void)state;
    tdir_make(&t);
    f = fopen(t.db, "w");
    assert_non_null(f);
    fputs("this is not a database, not at all, but long enough to look like one......"
          "..............................................................................",
          f);
    fclose(f);
    dra_diag_init(&d, NULL);
    assert_int_equal(dra_store_open(t.db, NULL, NULL, &s, &d), DRA_EIO);
    assert_null(s);
    assert_non_null(dra_diag_first(&d));
    dra_diag_clear(&d);
    /* A directory where the file should be. */
    assert_int_equal(dra_store_open(t.dir, NULL, NULL, &s, &d), DRA_EIO);
    dra_diag_fini(&d);
    tdir_rm(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crud),
        cmocka_unit_test(test_bad_args),
        cmocka_unit_test(test_list),
        cmocka_unit_test(test_list_model),
        cmocka_unit_test(test_watch),
        cmocka_unit_test(test_reopen),
        cmocka_unit_test(test_reopen_many),
        cmocka_unit_test(test_compaction),
        cmocka_unit_test(test_db_bounded),
        cmocka_unit_test(test_concurrent),
        cmocka_unit_test(test_two_writers),
        cmocka_unit_test(test_full),
        cmocka_unit_test(test_bad_file),
    };
    if (getenv("DRA_TEST_FILTER"))
        cmocka_set_test_filter(getenv("DRA_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
