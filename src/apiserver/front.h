/*
 * front.h: what drad's two network front ends (http.c over
 * libmicrohttpd, h2_*.c over nghttp2) must agree on, so a client sees
 * the same server over HTTP/1.1 and HTTP/2: who a request authenticates
 * as, the 401/413 Status bodies, and the query string handed to the
 * handler, re-encoded the way libmicrohttpd parses it.
 */
#ifndef DRA_APISERVER_FRONT_H
#define DRA_APISERVER_FRONT_H

#include <stddef.h>

#include <gnutls/gnutls.h>

#include "dra/apiserver.h"

/* The user a request authenticates as, or NULL: |authorization| (the
 * header, or NULL) as "Bearer <token>" decides when present, compared in
 * constant time; otherwise |cert_ok| (a client certificate signed by the
 * CA, api_front_cert_ok). The result is a static string. */
DRA_HIDDEN const char *api_front_user(const dra_apiserver_creds *creds,
                                      const char *authorization, int cert_ok);
/* 1 when |s|'s peer sent a certificate that verifies against the
 * session's trust list (drad's CA). */
DRA_HIDDEN int api_front_cert_ok(gnutls_session_t s);

/* A kube Status body for an error answer: |code|, |reason|, |msg|
 * (plain text with no quotes). Writes at most |cap| bytes, NUL-ended;
 * returns the length. */
DRA_HIDDEN size_t api_front_status(char *out, size_t cap, unsigned code,
                                   const char *reason, const char *msg);
/* The 413 message for a body above |max_body|, into |out|. */
DRA_HIDDEN void api_front_too_large_msg(char *out, size_t cap, size_t max_body);

/* Appends one decoded query argument to |b| in the handler's form
 * ("&" between arguments, unreserved bytes as they are, the others
 * %XX); |value| NULL: an argument without "=". DRA_OK; DRA_ENOMEM. */
DRA_HIDDEN dra_err api_front_query_add(dra_buf *b, const char *key,
                                       const char *value);
/* The raw query |raw| (after "?") split and decoded as libmicrohttpd
 * does ("&" pieces, "+" as space, %XX) and appended with
 * api_front_query_add. DRA_OK; DRA_ENOMEM. */
DRA_HIDDEN dra_err api_front_query(dra_buf *b, const char *raw);
/* Decodes %XX in place (invalid escapes stay as they are), as
 * libmicrohttpd does for the request path; returns the new length. */
DRA_HIDDEN size_t api_front_unescape(char *s);

/* 1 for the methods that write (answered on a worker). */
DRA_HIDDEN int api_front_is_write(const char *method);

#endif
