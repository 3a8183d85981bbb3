/* h2_server.h: a small scripted HTTP/2-over-TLS server for the tests of
 * the HTTP/2 transport (nghttp2 + GnuTLS, test code). One thread serves
 * every connection; a handler, called on that thread with the server
 * locked, answers each request, holds it open as a watch, or does
 * nothing. The test thread drives held streams and connections with the
 * ts_* calls below, which take the lock themselves. */
#ifndef DRA_TEST_H2_SERVER_H
#define DRA_TEST_H2_SERVER_H

#include <nghttp2/nghttp2.h>

#include "dra/apiserver.h"
#include "dra/base.h"

typedef struct ts_server ts_server;
typedef struct ts_conn ts_conn;

/* One request as the server saw it. */
typedef struct ts_stream {
    ts_conn *conn;
    int32_t id;
    char method[16], path[1024], auth[1024], ctype[128], ua[128], accept[128];
    dra_buf body;
    dra_buf out;     /* answer body not yet sent */
    size_t off;
    int eof, answered;
    int client_cert; /* the connection presented a CA-signed cert */
    struct ts_stream *next;
} ts_stream;

typedef void (*ts_handler)(ts_server *s, ts_stream *st, void *ud);

/* What the server saw, read by the test under ts_lock. */
typedef struct ts_stats {
    int nconn, nreq, nhandshake_fail, ncancel;
    ts_stream last; /* copy of the last request's fields (body included) */
} ts_stats;

/* Starts on 127.0.0.1 with |cr|'s server certificate; ALPN offers h2
 * (|h2| 1) or only http/1.1 (|h2| 0). Client certificates are requested,
 * not required. NULL on failure. */
ts_server *ts_start(const dra_apiserver_creds *cr, int h2, ts_handler fn,
                    void *ud);
int ts_port(const ts_server *s);
void ts_stop(ts_server *s);

void ts_lock(ts_server *s);
void ts_unlock(ts_server *s);
ts_stats *ts_stats_of(ts_server *s); /* under ts_lock */

/* In the handler: answer with |status| and |body| (may be NULL). */
void ts_respond(ts_stream *st, int status, const char *body, size_t len);
/* In the handler: 200 now, the body later through ts_send (a watch). */
void ts_hold(ts_server *s, ts_stream *st);
/* In the handler: GOAWAY naming |last_id| the last stream processed. */
void ts_goaway_in(ts_stream *st, int32_t last_id);

/* In the handler: cut the connection under the request. */
void ts_drop(ts_stream *st);

/* From the test thread, on the most recently held stream: send bytes as
 * one DATA frame; end it; reset it. 0 when no stream is held. */
int ts_send(ts_server *s, const char *data, size_t len);
int ts_end(ts_server *s);
int ts_rst(ts_server *s);
/* Bytes queued on the held stream that flow control keeps back. */
size_t ts_backlog(ts_server *s);
/* Drops every connection at once (no GOAWAY). */
void ts_close_all(ts_server *s);
/* Sends GOAWAY (NO_ERROR, last stream = the highest processed) on every
 * connection. */
void ts_goaway_all(ts_server *s);

#endif
