/*
 * openapi_int.h: the shorthand the schema tables are written in, and the
 * types one table file lends another. Not for use outside
 * src/apiserver/openapi*.c.
 *
 * A field line names the JSON field, its kind and a short description;
 * lists say whether they are atomic, sets or maps keyed by some fields,
 * and which patch strategy strategic merge patch uses (the
 * patchStrategy/patchMergeKey and listType/listMapKey tags of the
 * upstream Go types).
 */
#ifndef DRA_APISERVER_OPENAPI_INT_H
#define DRA_APISERVER_OPENAPI_INT_H

#include "openapi.h"

#define OA_N(a) (sizeof(a) / sizeof((a)[0]))
#define OA_TYPE(var, name, pkg, flags, desc, fields) \
    const api_openapi_type var = {name, pkg, desc, fields, OA_N(fields), flags}

#define OA_REQ API_OA_F_REQUIRED
#define OA_F(n, kind, elem, flags, ref, keys, mkey, d) \
    {n, kind, elem, flags, ref, keys, mkey, d}

/* scalars */
#define F_S(n, d) OA_F(n, API_OA_STRING, 0, 0, NULL, NULL, NULL, d)
#define F_SR(n, d) OA_F(n, API_OA_STRING, 0, OA_REQ, NULL, NULL, NULL, d)
#define F_I(n, d) OA_F(n, API_OA_INT, 0, 0, NULL, NULL, NULL, d)
#define F_IR(n, d) OA_F(n, API_OA_INT, 0, OA_REQ, NULL, NULL, NULL, d)
#define F_I32(n, d) OA_F(n, API_OA_INT32, 0, 0, NULL, NULL, NULL, d)
#define F_I32R(n, d) OA_F(n, API_OA_INT32, 0, OA_REQ, NULL, NULL, NULL, d)
#define F_B(n, d) OA_F(n, API_OA_BOOL, 0, 0, NULL, NULL, NULL, d)
#define F_Q(n, d) OA_F(n, API_OA_QUANTITY, 0, 0, NULL, NULL, NULL, d)
#define F_QR(n, d) OA_F(n, API_OA_QUANTITY, 0, OA_REQ, NULL, NULL, NULL, d)
#define F_T(n, d) OA_F(n, API_OA_TIME, 0, 0, NULL, NULL, NULL, d)
#define F_MT(n, d) OA_F(n, API_OA_MICROTIME, 0, 0, NULL, NULL, NULL, d)
#define F_IOS(n, d) OA_F(n, API_OA_INT_OR_STRING, 0, 0, NULL, NULL, NULL, d)
#define F_RAW(n, d) OA_F(n, API_OA_RAW, 0, 0, NULL, NULL, NULL, d)
#define F_FV1(n, d) OA_F(n, API_OA_FIELDSV1, 0, 0, NULL, NULL, NULL, d)
/* an object of type t */
#define F_O(n, t, d) OA_F(n, API_OA_OBJECT, 0, 0, &t, NULL, NULL, d)
#define F_OR(n, t, d) OA_F(n, API_OA_OBJECT, 0, OA_REQ, &t, NULL, NULL, d)
/* lists: atomic of scalars / of objects; sets; maps keyed by |keys|
 * with SMP flags |sf| and merge key |mk| */
#define F_LS(n, d) OA_F(n, API_OA_ARRAY, API_OA_STRING, API_OA_F_ATOMIC, NULL, NULL, NULL, d)
#define F_LSR(n, d) OA_F(n, API_OA_ARRAY, API_OA_STRING, API_OA_F_ATOMIC | OA_REQ, NULL, NULL, NULL, d)
#define F_LI(n, d) OA_F(n, API_OA_ARRAY, API_OA_INT, API_OA_F_ATOMIC, NULL, NULL, NULL, d)
#define F_LQ(n, d) OA_F(n, API_OA_ARRAY, API_OA_QUANTITY, API_OA_F_ATOMIC, NULL, NULL, NULL, d)
#define F_LO(n, t, d) OA_F(n, API_OA_ARRAY, API_OA_OBJECT, API_OA_F_ATOMIC, &t, NULL, NULL, d)
#define F_LOR(n, t, d) OA_F(n, API_OA_ARRAY, API_OA_OBJECT, API_OA_F_ATOMIC | OA_REQ, &t, NULL, NULL, d)
#define F_SET(n, sf, d) OA_F(n, API_OA_ARRAY, API_OA_STRING, API_OA_F_SET | (sf), NULL, NULL, NULL, d)
#define F_LM(n, t, keys, sf, mk, d) OA_F(n, API_OA_ARRAY, API_OA_OBJECT, sf, &t, keys, mk, d)
/* maps of strings / quantities / objects */
#define F_MS(n, d) OA_F(n, API_OA_MAP, API_OA_STRING, 0, NULL, NULL, NULL, d)
#define F_MSA(n, d) OA_F(n, API_OA_MAP, API_OA_STRING, API_OA_F_MAP_ATOMIC, NULL, NULL, NULL, d)
#define F_MQ(n, d) OA_F(n, API_OA_MAP, API_OA_QUANTITY, 0, NULL, NULL, NULL, d)
#define F_MO(n, t, d) OA_F(n, API_OA_MAP, API_OA_OBJECT, 0, &t, NULL, NULL, d)

#define SMP_MERGE API_OA_F_SMP_MERGE
#define SMP_MERGE_RETAIN (API_OA_F_SMP_MERGE | API_OA_F_SMP_RETAIN)

#define PKG_CORE "io.k8s.api.core.v1"
#define PKG_META "io.k8s.apimachinery.pkg.apis.meta.v1"

/* Types openapi_core.c lends the resource.k8s.io tables. */
extern DRA_HIDDEN const api_openapi_type api_oa_ObjectMeta;
extern DRA_HIDDEN const api_openapi_type api_oa_NodeSelector;
extern DRA_HIDDEN const api_openapi_type api_oa_Condition;

/* Root kinds per file, |n| receives the count. */
DRA_HIDDEN const api_openapi_root *api_oa_core_roots(size_t *n);
DRA_HIDDEN const api_openapi_root *api_oa_resource_roots(size_t *n);

/* The descriptions of the common kind-level fields. */
#define D_APIVERSION                                                          \
    "The versioned schema of this object (group/version). Servers convert "  \
    "recognized schemas to their latest internal value."
#define D_KIND                                                                \
    "The REST resource this object represents, in CamelCase. Servers infer " \
    "it from the endpoint the client sends the request to; it cannot be "     \
    "updated."
#define D_METADATA "Standard object metadata: name, namespace, labels, annotations and the fields the system maintains."

#endif
