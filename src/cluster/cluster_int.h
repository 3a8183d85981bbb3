/*
 * cluster_int.h: internals shared by the files of the generic cluster
 * layer (cluster.c: requests and Status decoding; event.c: the event
 * recorder; watch.c: watch streams; reflector.c: list + watch with
 * resume). Transports see none of this; they only implement
 * dra_cluster_ops.
 */
#ifndef DRA_CLUSTER_INT_H
#define DRA_CLUSTER_INT_H

#include <pthread.h>
#include <stdint.h>

#include "dra/cluster.h"

/* How many (object, reason, message) keys the event recorder remembers
 * for folding repeats; the least recently used is forgotten first. */
#define CLUSTER_EVCACHE_N 256

/* One remembered event: the Event object it was written to and its count. */
typedef struct cluster_event {
    char *key;         /* owned; NULL when the slot is free */
    uint64_t hash;
    char *ns, *name;   /* owned; the Event object's namespace and name */
    int64_t count;
    uint64_t used;     /* LRU clock */
} cluster_event;

struct dra_cluster {
    dra_cluster_ops ops;
    dra_cluster_doc_request doc_request; /* may be NULL */
    void *ud;
    const dra_mem *mem;
    pthread_mutex_t lock; /* guards everything below */
    cluster_event ev[CLUSTER_EVCACHE_N];
    uint64_t ev_clock;
    uint64_t ev_last_ns; /* last event name suffix, kept strictly rising */
};

/* Appends "&key=value" (no '&' when |q| is empty) with |value|
 * percent-encoded like Go's url.QueryEscape (space as %20). Nothing when
 * |value| is NULL. DRA_OK or DRA_ENOMEM. */
DRA_HIDDEN dra_err cluster_query_add(dra_buf *q, const char *key,
                                     const char *value);
/* Appends the list options of |o| (may be NULL) to |q|; |watch| adds
 * watch=true and the watch-only options. DRA_OK or DRA_ENOMEM. */
DRA_HIDDEN dra_err cluster_query_list(dra_buf *q, const dra_list_opts *o,
                                      int watch);

/* Fills |st| (may be NULL) with a transport-level error: code 0, the
 * name of |err| as reason when |st| has none, and |msg| when it has no
 * message yet. */
DRA_HIDDEN void cluster_st_transport(dra_kstatus *st, dra_err err);

/* Performs method |method| on |path| (query |query|, may be NULL) with
 * |doc| as the body (NULL: no body): the document itself through the
 * transport's doc_request when it takes it, else serialised to JSON. */
DRA_HIDDEN dra_err cluster_send_doc(dra_cluster *c, const char *method,
                                    const char *path, const char *query,
                                    const char *ctype, const dra_doc *doc,
                                    dra_arena *a, dra_doc **out,
                                    dra_kstatus *st);

/* Builders for the small documents this layer writes (events, bindings,
 * delete options): a string member, skipped when |val| is NULL. */
DRA_HIDDEN dra_err cluster_set_str(dra_arena *a, dra_doc *map,
                                   const char *key, const char *val);

/* Wall-clock nanoseconds since the epoch, and the RFC 3339 UTC form of a
 * time in whole seconds (metav1.Time's JSON: "2006-01-02T15:04:05Z") into
 * |buf| (at least 32 bytes). */
DRA_HIDDEN uint64_t cluster_now_ns(void);
DRA_HIDDEN void cluster_rfc3339(uint64_t ns, char *buf, size_t size);

/* Sleeps |ms| milliseconds (EINTR resumes). */
DRA_HIDDEN void cluster_sleep_ms(long ms);

/* Frees the event cache (dra_cluster_free). */
DRA_HIDDEN void cluster_events_fini(dra_cluster *c);

#endif
