/*
 * openapi.h: the API schema of the kinds drad serves, compiled into the
 * library as C tables (openapi_core.c: core/v1 and meta/v1 types;
 * openapi_resource.c: resource.k8s.io v1, v1beta2, v1beta1), and the
 * OpenAPI documents built from it: the /openapi/v3 index and one
 * document per group-version, enough for kubectl's server-side field
 * validation probe and for `kubectl explain`. The same tables carry the
 * patch metadata that strategic merge patch and server-side apply use
 * (patch.h), so there is one description of each type.
 *
 * Owner: helper "apilib" (src/apiserver/openapi*.c).
 *
 * The tables are static and immutable; lookups return pointers into
 * them. Document builders append JSON to a caller's dra_buf and return
 * DRA_OK, DRA_ENOTFOUND (group-version not served) or DRA_ENOMEM.
 */
#ifndef DRA_APISERVER_OPENAPI_H
#define DRA_APISERVER_OPENAPI_H

#include <stddef.h>
#include <stdint.h>

#include "dra/base.h"

/* Value kinds of a field (or of a list's or map's elements). */
typedef enum api_oa_kind {
    API_OA_OBJECT,        /* a typed object: |ref| */
    API_OA_STRING,
    API_OA_INT,           /* integer, int64 */
    API_OA_INT32,         /* integer, int32 */
    API_OA_NUMBER,        /* number, double */
    API_OA_BOOL,
    API_OA_QUANTITY,      /* resource.Quantity */
    API_OA_TIME,          /* metav1.Time (RFC 3339, seconds) */
    API_OA_MICROTIME,     /* metav1.MicroTime */
    API_OA_INT_OR_STRING, /* intstr.IntOrString */
    API_OA_RAW,           /* runtime.RawExtension: any JSON object */
    API_OA_FIELDSV1,      /* metav1.FieldsV1: any JSON object */
    API_OA_ARRAY,         /* elements: |elem| (and |ref| for objects) */
    API_OA_MAP            /* map[string]elem */
} api_oa_kind;

/* api_openapi_field.flags */
enum {
    API_OA_F_REQUIRED = 1u << 0,
    API_OA_F_SMP_MERGE = 1u << 1,  /* patchStrategy merge */
    API_OA_F_SMP_RETAIN = 1u << 2, /* patchStrategy retainKeys */
    API_OA_F_SMP_REPLACE = 1u << 3,/* patchStrategy replace */
    API_OA_F_SET = 1u << 4,        /* x-kubernetes-list-type: set */
    API_OA_F_MAP_ATOMIC = 1u << 5, /* x-kubernetes-map-type: atomic (a map) */
    API_OA_F_ATOMIC = 1u << 6      /* x-kubernetes-list-type: atomic, said explicitly */
};

/* api_openapi_type.flags */
enum {
    API_OA_T_ATOMIC = 1u << 0 /* x-kubernetes-map-type: atomic (structType) */
};

typedef struct api_openapi_type api_openapi_type;

typedef struct api_openapi_field {
    const char *name;
    unsigned char kind;  /* api_oa_kind */
    unsigned char elem;  /* element kind of an ARRAY or MAP */
    unsigned short flags;
    const api_openapi_type *ref; /* OBJECT, or object elements */
    const char *keys;      /* x-kubernetes-list-map-keys, comma-separated */
    const char *merge_key; /* x-kubernetes-patch-merge-key */
    const char *desc;
} api_openapi_field;

struct api_openapi_type {
    const char *name; /* Go type name: "Container" */
    const char *pkg;  /* "io.k8s.api.core.v1"; NULL: the package of the
                       * group-version whose document names it */
    const char *desc;
    const api_openapi_field *fields;
    size_t n;
    unsigned flags;
};

/* The root type of kind |kind| as served in group/version (the object,
 * with apiVersion, kind, metadata, spec, status), or NULL. */
const api_openapi_type *api_openapi_kind_type(const char *group,
                                              const char *version,
                                              const char *kind);

/* The field |name| of |t|, or NULL (also for a NULL |t|). */
const api_openapi_field *api_openapi_field_find(const api_openapi_type *t,
                                                const char *name);

/* Where a schema walk is: in an object of type |t|, or (|map| set) among
 * the values of a map whose elements are |t| (NULL: scalars or unknown). */
typedef struct api_oa_at {
    const api_openapi_type *t;
    int map;
} api_oa_at;

/* One step of a walk from |at| down member |key|: the field (NULL inside a
 * map, whose keys are data, and for a field the schema does not know) and
 * in |sub| where its value is (t NULL when that is no object). */
const api_openapi_field *api_openapi_step(api_oa_at at, const char *key,
                                          api_oa_at *sub);

/* GET /openapi/v3: {"paths":{"api/v1":{"serverRelativeURL":
 * "/openapi/v3/api/v1?hash=<H>"}, "apis/resource.k8s.io/v1":...}}. */
dra_err api_openapi_v3_index(dra_buf *out);

/* GET /openapi/v3/<gv> where |gv| is "api/v1" or
 * "apis/resource.k8s.io/<version>": the OpenAPI 3.0 document with paths
 * (each carrying a PATCH operation with x-kubernetes-group-version-kind
 * and the fieldValidation parameter) and components.schemas. *hash (may
 * be NULL) receives the content hash the index links with (hex, in a
 * caller buffer of at least 33 bytes). */
dra_err api_openapi_v3_doc(const char *gv, dra_buf *out, char *hash);

/* The content hash of the document for |gv| (as api_openapi_v3_doc). */
dra_err api_openapi_v3_hash(const char *gv, char *hash);

/* GET /openapi/v2: what works for every kubectl 1.27-1.33 is a 200 with
 * an empty body and this Content-Type (an empty protobuf document), when
 * the client asks for protobuf. Static. */
const char *api_openapi_v2_content_type(void);

/* A root kind of a served group-version (internal to openapi*.c). */
typedef struct api_openapi_root {
    const char *group, *version, *kind;
    const api_openapi_type *type;
} api_openapi_root;

#endif
