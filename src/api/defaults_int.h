/*
 * defaults_int.h: internals shared by the api module's defaulting files
 * (defaults_doc.c, defaults_core.c, defaults_pod.c). Defaults are written
 * into dra_doc maps (the `extra` of typed structs and the documents of
 * untyped kinds) at the position Go's struct order gives them, so the
 * result prints in kube-apiserver's field order.
 */
#ifndef DRA_DEFAULTS_INT_H
#define DRA_DEFAULTS_INT_H

#include "dra/api.h"

/* The JSON names of a Go struct's fields in declaration order,
 * NULL-terminated. Members a table does not name sort after those it
 * does. */
typedef const char *const def_order[];

/* When a member counts as unset. Go's defaulters test a pointer for nil
 * (DEF_NIL: absent or null) or a plain string or number for its zero
 * value (DEF_ZERO: also "" and 0). */
typedef enum def_unset { DEF_NIL, DEF_ZERO } def_unset;

/* One defaulting pass: where new nodes go, what write it is, where a
 * refusal is reported. */
typedef struct def_ctx {
    dra_arena *a;
    dra_api_op op;
    dra_diag *d;
} def_ctx;

/* Member |key| of the map |m| (mutable), NULL when |m| is not a map or
 * lacks it. */
DRA_HIDDEN dra_doc *def_get(const dra_doc *m, const char *key);
/* Member |key| when it is a map / a list / a string, else NULL. */
DRA_HIDDEN dra_doc *def_map(const dra_doc *m, const char *key);
DRA_HIDDEN dra_doc *def_list(const dra_doc *m, const char *key);
DRA_HIDDEN const char *def_str(const dra_doc *m, const char *key);
/* 1 when |v| is unset under |how|. */
DRA_HIDDEN int def_is_unset(const dra_doc *v, def_unset how);
/* 1 with *out when |v| is a number with an integer value: YAML may type
 * 0297, 1e3 or 5.0 as floats, which Go's JSON decoding puts into an int
 * field as the integer (and our JSON printer prints as one). */
DRA_HIDDEN int def_int(const dra_doc *v, int64_t *out);

/* Sets member |key| of the map |m| to |v|: an existing member is
 * replaced in place, a new one is inserted at its Go position by
 * |order| (appended when |order| is NULL). |key| is copied. DRA_OK;
 * DRA_ENOMEM, also when |v| is NULL (a failed builder); DRA_EINVAL when
 * |m| is not a map. */
DRA_HIDDEN dra_err def_set(dra_arena *a, dra_doc *m, const char *key, dra_doc *v,
                           const char *const *order);
/* def_set only when the member is unset under |how|. */
DRA_HIDDEN dra_err def_put(dra_arena *a, dra_doc *m, const char *key, dra_doc *v,
                           const char *const *order, def_unset how);
DRA_HIDDEN dra_err def_put_str(dra_arena *a, dra_doc *m, const char *key, const char *s,
                               const char *const *order, def_unset how);
DRA_HIDDEN dra_err def_put_int(dra_arena *a, dra_doc *m, const char *key, int64_t i,
                               const char *const *order, def_unset how);
/* Removes member |key| of |m| when present. */
DRA_HIDDEN void def_del(dra_doc *m, const char *key);
/* Sets |key| in a map whose keys Go sorts (a map[string]T), keeping
 * byte order; replaces an existing member. */
DRA_HIDDEN dra_err def_set_sorted(dra_arena *a, dra_doc *m, const char *key, dra_doc *v);
/* The map at member |key| of |m|, created empty at its Go position when
 * absent or null. NULL on ENOMEM or when the member is some other kind
 * (then *e stays DRA_OK and nothing is defaulted below it). */
DRA_HIDDEN dra_doc *def_child(dra_arena *a, dra_doc *m, const char *key,
                              const char *const *order, dra_err *e);
/* *extra, created as an empty map when NULL. NULL on ENOMEM. */
DRA_HIDDEN dra_doc *def_extra(dra_arena *a, dra_doc **extra);
/* Stable reorder of the members of |m| by |order|. */
DRA_HIDDEN void def_reorder(dra_doc *m, const char *const *order);

/* Quantity.RoundUp(-3): values below milli precision round away from
 * zero to the next milli, as SetDefaults_ResourceList does. 1 when the
 * value changed. */
DRA_HIDDEN int def_round_milli(dra_quantity *q);
/* SetDefaults_ResourceList over a map of quantities in a document:
 * every value that parses is rounded and written the way kube-apiserver
 * prints it; values that do not parse are left for validation. */
DRA_HIDDEN dra_err def_round_list(dra_arena *a, dra_doc *list);

/* imagePullPolicy for a container or image volume without one:
 * "Always" when the reference is valid and its tag is latest (or it has
 * neither tag nor digest), "IfNotPresent" otherwise. Static string. */
DRA_HIDDEN const char *def_pull_policy(const char *image);

/* Pods (defaults_pod.c): scheme defaults of a typed Pod, then the
 * default admission plugins for ctx->op. |old| is the stored pod on
 * update (may be NULL). DRA_OK, DRA_EFORBIDDEN (message in ctx->d),
 * DRA_ENOMEM. */
DRA_HIDDEN dra_err def_pod(const def_ctx *c, dra_object *pod, const dra_object *old);
/* Pod volumes (defaults_core.c): SetDefaults_Volume and the volume
 * sources' defaulters over spec.volumes. */
DRA_HIDDEN dra_err def_volumes(const def_ctx *c, dra_doc *volumes);
/* The parts of a container kept as a document (ports, env, probes,
 * lifecycle and the three plain defaults) on |m|, which is the
 * container's extra map or, for an ephemeral container, the container
 * itself. |image| is the container's image. */
DRA_HIDDEN dra_err def_container_doc(const def_ctx *c, dra_doc *m, const char *image,
                                     int host_network);
/* An ObjectFieldSelector (a fieldRef; NULL: none): apiVersion "v1" when
 * unset, members in Go's order (defaults_core.c). DRA_OK, DRA_ENOMEM. */
DRA_HIDDEN dra_err def_field_ref(dra_arena *a, dra_doc *ref);
/* Nodes (defaults_core.c). */
DRA_HIDDEN dra_err def_node(const def_ctx *c, dra_object *node);

#endif
