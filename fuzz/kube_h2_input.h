/* fuzz/kube_h2_input.h: the input format of fuzz_kube_h2, shared by the
 * fuzzer and the seed generator (gen_kube_h2.c). An input is one mode
 * byte, then the server's side of each connection the client makes, in
 * the order it dials them, separated by KH2_SEP (a connection with no
 * bytes left gets the handshake and then the end). Inside a connection's
 * bytes, KH2_WAIT and the count byte after it (1 when none follows)
 * make the server stop writing until the client has finished sending
 * that many requests on the connection (HEADERS or DATA frames with
 * END_STREAM), the client closes, or KH2_WAIT_MS pass; at most
 * KH2_MAX_WAITS per connection are honoured, later markers are dropped. */
#ifndef DRA_FUZZ_KUBE_H2_INPUT_H
#define DRA_FUZZ_KUBE_H2_INPUT_H

#define KH2_SEP "@@CONN@@"
#define KH2_WAIT "@@WAIT@@"
#define KH2_MARK_LEN 8 /* both markers */
#define KH2_WAIT_MS 50
#define KH2_MAX_WAITS 4

/* The mode byte. Bits 0-1: the request made first; bit 2: the watch is
 * opened first and the request goes on its connection while it is open
 * (else the request comes first, and the watch, once the request's
 * connections are gone, on a connection of its own); bit 3: the server
 * ends each connection with a TLS close_notify before its FIN (else the
 * FIN alone); bits 4-7 (v): the server writes TLS records of at most
 * 16 << (v % 11) bytes. */
#define KH2_GET 0    /* GET one pod */
#define KH2_LIST 1   /* GET the pods, limit 10 */
#define KH2_CREATE 2 /* POST a small pod */
#define KH2_UPDATE 3 /* PUT a 96 KiB body: more than the first window */
#define KH2_SHARED 4
#define KH2_BYE 8
#define KH2_RECORD(v) (16u << ((v) % 11)) /* v: bits 4-7 of the mode byte */

#endif
