/*
 * patch_int.h: helpers shared by patch.c (merge and JSON patch, tree
 * editing), patch_smp.c (strategic merge patch) and patch_apply.c
 * (server-side apply). Not for use outside src/apiserver/patch*.c.
 */
#ifndef DRA_APISERVER_PATCH_INT_H
#define DRA_APISERVER_PATCH_INT_H

#include "patch.h"

/* Removes member |key| of map |m| in place, keeping the order of the
 * rest; 1 when it was there. |m| must be a copy this code owns. */
DRA_HIDDEN int api_patch_map_del(dra_doc *m, const char *key);
/* Member |key| of |m| (a map), or NULL. */
DRA_HIDDEN dra_doc *api_patch_map_get(dra_doc *m, const char *key);
/* Inserts |v| at index |i| (<= n) of list |l|. DRA_OK or DRA_ENOMEM. */
DRA_HIDDEN dra_err api_patch_list_insert(dra_arena *a, dra_doc *l, size_t i,
                                         dra_doc *v);
/* Removes item |i| of list |l| in place. */
DRA_HIDDEN void api_patch_list_del(dra_doc *l, size_t i);

/* Removes null map members from |d| (owned), recursively, and with
 * |list_items| null list items too: json-patch's pruneNulls (1) and
 * strategic merge's discardNullValuesFromPatch (0). NULL is a no-op. */
DRA_HIDDEN void api_patch_drop_nulls(dra_doc *d, int list_items);

/* Appends |d| formatted like Go's fmt %v of its unstructured form
 * (map[k:v k2:v2] with sorted keys, [a b], <nil>, numbers, bare
 * strings), as upstream's error messages print maps and lists. */
DRA_HIDDEN void api_patch_go_fmt(dra_buf *b, const dra_doc *d);

#endif
