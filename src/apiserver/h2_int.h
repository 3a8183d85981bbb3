/*
 * h2_int.h: drad's HTTP/2 front end, split in two: h2_conn.c is one
 * connection without I/O (bytes in, bytes out, nghttp2 doing framing,
 * HPACK and flow control, the API handler answering), h2_server.c owns
 * the sockets, TLS, connection threads and the write workers. A write
 * request leaves the connection as an api_h2_job, runs on a worker
 * (api_h2_job_run) and comes back through the connection's mailbox,
 * which outlives the connection while jobs hold it.
 */
#ifndef DRA_APISERVER_H2_INT_H
#define DRA_APISERVER_H2_INT_H

#include <stddef.h>
#include <stdint.h>

#include "dra/apiserver.h"

typedef struct api_h2c api_h2c;
typedef struct api_h2_job api_h2_job;

typedef struct api_h2c_cfg {
    dra_apiserver *srv;               /* borrowed; outlives the connection */
    const dra_apiserver_creds *creds; /* borrowed */
    int cert_ok; /* the TLS peer presented a certificate signed by the CA */
    /* Hands |job| to another thread, which must call api_h2_job_run
     * exactly once; NULL: writes are answered inline. */
    void (*dispatch)(void *ud, api_h2_job *job);
    /* Called from any thread (with an internal lock held: it must only
     * signal, e.g. write an eventfd) when api_h2c_poll has work; never
     * after api_h2c_free returns. May be NULL. */
    void (*wake)(void *ud);
    void *ud;
} api_h2c_cfg;

/* A new server connection; the SETTINGS frame is queued (1,000
 * concurrent streams). DRA_OK; DRA_ENOMEM. */
DRA_HIDDEN dra_err api_h2c_new(const api_h2c_cfg *cfg, api_h2c **out);
/* Frees the connection: open streams are closed, jobs still running
 * are dropped when they finish. NULL: no-op. */
DRA_HIDDEN void api_h2c_free(api_h2c *c);

/* Feeds bytes read from the peer. DRA_OK; DRA_EPARSE when the peer
 * broke the protocol beyond recovery (send what is queued, then
 * close); DRA_ENOMEM. */
DRA_HIDDEN dra_err api_h2c_recv(api_h2c *c, const uint8_t *p, size_t len);
/* Appends bytes to send to |out| until it holds |max| or nothing more
 * is ready. DRA_OK; DRA_ENOMEM; DRA_EPARSE (session failed). */
DRA_HIDDEN dra_err api_h2c_send(api_h2c *c, dra_buf *out, size_t max);
/* Takes finished jobs and woken streams (after cfg->wake). */
DRA_HIDDEN void api_h2c_poll(api_h2c *c);
/* GOAWAY and an end to every watch or log stream; requests already
 * received are still answered. */
DRA_HIDDEN void api_h2c_shutdown(api_h2c *c);
/* GOAWAY at once, for an idle or stalled connection. */
DRA_HIDDEN void api_h2c_terminate(api_h2c *c);
/* 1 while the session wants to read or write or a job is out. */
DRA_HIDDEN int api_h2c_alive(const api_h2c *c);
/* 1 when no stream is open and no job is out. */
DRA_HIDDEN int api_h2c_idle(const api_h2c *c);

/* Runs a dispatched job on the calling thread (it may block on a group
 * commit) and posts the answer back to its connection, or drops it
 * when the connection is gone. Consumes |job|. */
DRA_HIDDEN void api_h2_job_run(api_h2_job *job);

#endif
