/*
 * table.h: meta.k8s.io/v1 Table output (Accept: application/json;as=Table;
 * v=v1;g=meta.k8s.io) for every kind drad serves, with the columns,
 * types, formats, descriptions and cells kube-apiserver's printers
 * produce (pkg/printers/internalversion), always in their wide form, as
 * the server does; kubectl hides priority-1 columns unless -o wide.
 *
 * Owner: helper "apilib" (src/apiserver/table*.c).
 *
 * Pure functions: the clock is a parameter (|now_ns|), so ages are
 * deterministic in tests. Everything built lives in the caller's arena.
 * Errors: DRA_ENOMEM; DRA_EINVAL for a NULL argument.
 */
#ifndef DRA_APISERVER_TABLE_H
#define DRA_APISERVER_TABLE_H

#include <stdint.h>

#include "dra/base.h"
#include "dra/cluster.h"
#include "dra/codec.h"
#include "resources.h"

/* includeObject=: what each row's "object" holds. */
typedef enum api_table_include {
    API_TABLE_METADATA, /* PartialObjectMetadata (the default) */
    API_TABLE_NONE,     /* null */
    API_TABLE_OBJECT    /* the object itself (kubectl --sort-by) */
} api_table_include;

typedef struct api_table_opts {
    int64_t now_ns;               /* wall clock, nanoseconds since the epoch */
    api_table_include include;
    const char *resource_version; /* metadata.resourceVersion, or NULL */
    const char *continue_;        /* metadata.continue, or NULL */
    int no_headers;               /* columnDefinitions: null (later watch events) */
    int has_remaining;            /* with continue_: metadata.remainingItemCount */
    int64_t remaining;
} api_table_opts;

/* The Table for |n| objects |objs| (object documents as stored: metadata,
 * spec, status) of |res|'s kind, into *out (in |a|). Row objects borrow
 * subtrees of |objs|, so keep those alive as long as *out. Kinds without
 * a printer get upstream's default columns (Name, Created At). */
dra_err api_table_build(dra_arena *a, const api_resource *res,
                        const dra_doc *const *objs, size_t n,
                        const api_table_opts *opts, dra_doc **out);

/* The same Table written straight from stored JSON (table_stream.c),
 * with no document of the whole Table: begin writes everything before
 * the first row (|opts|' resource_version, continue_ and no_headers
 * apply), each row call one object's row (|first| for the first row;
 * |json| is the stored object, its metadata copied as stored), end
 * closes the Table. |scratch| is reset by each call. DRA_ENOMEM;
 * DRA_EPARSE when |json| is not an object. */
dra_err api_table_stream_begin(dra_arena *scratch, const api_resource *res,
                               const api_table_opts *opts, dra_buf *out);
dra_err api_table_stream_row(dra_arena *scratch, const api_resource *res,
                             const api_table_opts *opts, int first,
                             const char *json, size_t len, dra_buf *out);
dra_err api_table_stream_end(dra_buf *out);

/* includeObject query value ("", "Metadata", "None", "Object") to the
 * policy. DRA_EINVAL (|st|: 400 BadRequest) for anything else. */
dra_err api_table_parse_include(const char *s, api_table_include *out,
                                dra_kstatus *st);

/* apimachinery's duration.HumanDuration of |d_ns| into |buf| (at least
 * 32 bytes): "0s", "45s", "3m20s", "5h10m", "3d4h", "2y30d",
 * "<invalid>" below -1s. Returns |buf|. */
char *api_table_human_duration(int64_t d_ns, char *buf, size_t size);

/* Parses an RFC 3339 timestamp (metav1.Time or MicroTime: fraction and
 * offset optional) into nanoseconds since the epoch. 1 on success. */
int api_table_parse_time(const char *s, int64_t *ns);

#endif
