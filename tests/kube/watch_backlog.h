/* A watch that starts behind a backlog larger than one read of the
 * server's watch stream (256 KiB): every event still arrives, in order,
 * with no further commit to wake the stream, from a version and as the
 * initial events of a watch from none; and a
 * label-selected watch over the same backlog, which skips all but the
 * last object, gets that one. Shared by the transports' tests (HTTP/1.1,
 * HTTP/2, in process). */
#ifndef DRA_TEST_WATCH_BACKLOG_H
#define DRA_TEST_WATCH_BACKLOG_H

#include <stdio.h>
#include <string.h>

#include "dra_test.h"
#include "dra/cluster.h"

#define BACKLOG_N 700

static void backlog_must(dra_err err, const dra_kstatus *st, const char *what)
{
    if (err != DRA_OK)
        fail_msg("%s: %s: %d %s: %s", what, dra_errname(err), st->code, st->reason,
                 st->message);
}

/* The next event that is not a BOOKMARK. */
static dra_err backlog_next(dra_watch *w, dra_arena *a, dra_watch_event *ev)
{
    dra_err e;
    do
        e = dra_watch_next(w, 10000, a, ev);
    while (e == DRA_OK && ev->type == DRA_WATCH_BOOKMARK);
    return e;
}

/* Creates BACKLOG_N claims of about 700 bytes in namespace |ns| (which
 * must exist and be empty), then checks both watches from the version
 * before them. */
static void watch_backlog(dra_cluster *c, const char *ns)
{
    static const dra_gvr claims = DRA_GVR_CLAIMS;
    dra_arena a;
    dra_kstatus st;
    dra_doc *out = NULL, *d = NULL;
    const char *rv = NULL;
    char rvbuf[32], pad[401], body[1024], want[16];
    dra_list_opts o = {0};
    dra_watch *w = NULL;
    dra_watch_event ev;
    dra_arena_init(&a, NULL);
    memset(pad, 'x', 400);
    pad[400] = '\0';
    backlog_must(dra_cluster_list_all(c, &claims, ns, NULL, &a, &out, &rv, &st), &st, "list");
    snprintf(rvbuf, sizeof rvbuf, "%s", rv);
    for (int i = 0; i < BACKLOG_N; i++) {
        snprintf(body, sizeof body,
                 "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
                 "\"metadata\":{\"name\":\"bl-%03d\",\"labels\":{\"last\":\"%s\"},"
                 "\"annotations\":{\"pad\":\"%s\"}},\"spec\":{\"devices\":{\"requests\":"
                 "[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu.example.com\"}}]}}}",
                 i, i == BACKLOG_N - 1 ? "yes" : "no", pad);
        assert_int_equal(dra_doc_parse_json(&a, body, strlen(body), &d, NULL), DRA_OK);
        backlog_must(dra_cluster_create(c, &claims, ns, d, &a, NULL, &st), &st, "create");
        dra_arena_reset(&a);
    }
    /* Every event, in order; nothing is committed meanwhile. */
    o.resource_version = rvbuf;
    backlog_must(dra_cluster_watch(c, &claims, ns, &o, &w, &st), &st, "watch");
    for (int i = 0; i < BACKLOG_N; i++) {
        snprintf(want, sizeof want, "bl-%03d", i);
        if (backlog_next(w, &a, &ev) != DRA_OK)
            fail_msg("the watch stopped after %d of %d events", i, BACKLOG_N);
        assert_int_equal(ev.type, DRA_WATCH_ADDED);
        assert_string_equal(dra_obj_name(ev.object), want);
        dra_arena_reset(&a);
    }
    assert_int_equal(dra_watch_next(w, 200, &a, &ev), DRA_ETIMEOUT);
    dra_watch_close(w);
    /* From no version: the same objects as synthetic ADDED events, in
     * name order, also more than one read. */
    o.resource_version = NULL;
    backlog_must(dra_cluster_watch(c, &claims, ns, &o, &w, &st), &st, "watch from now");
    for (int i = 0; i < BACKLOG_N; i++) {
        snprintf(want, sizeof want, "bl-%03d", i);
        if (backlog_next(w, &a, &ev) != DRA_OK)
            fail_msg("the initial events stopped after %d of %d", i, BACKLOG_N);
        assert_int_equal(ev.type, DRA_WATCH_ADDED);
        assert_string_equal(dra_obj_name(ev.object), want);
        dra_arena_reset(&a);
    }
    assert_int_equal(dra_watch_next(w, 200, &a, &ev), DRA_ETIMEOUT);
    dra_watch_close(w);
    o.resource_version = rvbuf;
    /* A selector that skips 699 objects of the backlog. */
    o.label_selector = "last=yes";
    backlog_must(dra_cluster_watch(c, &claims, ns, &o, &w, &st), &st, "selected watch");
    assert_int_equal(backlog_next(w, &a, &ev), DRA_OK);
    assert_int_equal(ev.type, DRA_WATCH_ADDED);
    snprintf(want, sizeof want, "bl-%03d", BACKLOG_N - 1);
    assert_string_equal(dra_obj_name(ev.object), want);
    dra_watch_close(w);
    dra_arena_fini(&a);
}

#endif
