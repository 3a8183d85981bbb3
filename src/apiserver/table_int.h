/*
 * table_int.h: internals shared by the Table printers (table.c holds the
 * framework and the resource.k8s.io printers, table_core.c the core/v1
 * ones). Not for use outside src/apiserver/table*.c.
 */
#ifndef DRA_APISERVER_TABLE_INT_H
#define DRA_APISERVER_TABLE_INT_H

#include "table.h"

/* Building state for one Table: every helper records allocation failure
 * in |oom| and returns NULL, so a printer checks once at the end. */
typedef struct tctx {
    dra_arena *a;
    int64_t now_ns;
    int oom;
} tctx;

typedef struct tcol {
    const char *name, *type, *format, *desc;
    int priority;
} tcol;

/* Appends one row's cells to |cells| (a list); may set *conditions to a
 * list of TableRowConditions. */
typedef void (*trow_fn)(tctx *t, const dra_doc *obj, dra_doc *cells,
                        dra_doc **conditions);

typedef struct tprinter {
    const tcol *cols;
    size_t ncols;
    trow_fn row;
} tprinter;

/* Column descriptions kube-apiserver takes from the API docs. */
extern DRA_HIDDEN const char api_tdesc_name[];
extern DRA_HIDDEN const char api_tdesc_age[];

DRA_HIDDEN dra_doc *api_t_str(tctx *t, const char *s);
DRA_HIDDEN dra_doc *api_t_int(tctx *t, int64_t v);
DRA_HIDDEN dra_doc *api_t_null(tctx *t);
DRA_HIDDEN void api_t_push(tctx *t, dra_doc *list, dra_doc *v);
DRA_HIDDEN void api_t_set(tctx *t, dra_doc *map, const char *k, dra_doc *v);
/* A string in the arena, printf-style. */
DRA_HIDDEN const char *api_t_fmt(tctx *t, const char *fmt, ...) DRA_PRINTF(2, 3);

/* The string at a dotted path of map keys, or NULL. */
DRA_HIDDEN const char *api_t_gets(const dra_doc *obj, const char *path);
/* The node at a dotted path of map keys, or NULL. */
DRA_HIDDEN const dra_doc *api_t_get(const dra_doc *obj, const char *path);
/* An integer at a dotted path, |dflt| when absent or not a number. */
DRA_HIDDEN int64_t api_t_geti(const dra_doc *obj, const char *path, int64_t dflt);
/* translateTimestampSince: "<unknown>" for a missing or zero time. */
DRA_HIDDEN const char *api_t_since(tctx *t, const char *timestamp);
/* 1 when |ts| holds a time (not NULL, not unparsable as upstream's zero). */
DRA_HIDDEN int api_t_has_time(const char *ts);

/* The core/v1 printers (table_core.c), NULL for other resources. */
DRA_HIDDEN const tprinter *api_t_core_printer(const char *resource);

#endif
