/*
 * k8spb.h: request bodies in Kubernetes' protobuf encoding
 * (application/vnd.kubernetes.protobuf: "k8s\0", then a runtime.Unknown
 * whose raw bytes are the object) decoded into the dra_doc its JSON body
 * would give, so the JSON write path (defaulting, validation, field
 * checks) serves both. k8spb.c is pure (no I/O, no globals);
 * k8spb_body.c answers a request with it.
 */
#ifndef DRA_K8SPB_H
#define DRA_K8SPB_H

#include <stddef.h>

#include "dra/base.h"
#include "dra/codec.h"

/* Limits against hostile bodies (the HTTP layer caps bodies at 3 MiB
 * before this runs). */
#define K8SPB_MAX_BYTES DRA_DOC_MAX_BYTES /* a whole body */
#define K8SPB_MAX_DEPTH 32                /* nested groups in a skipped field */
#define K8SPB_MAX_ITEMS (1u << 20)        /* values (strings, numbers, entries) */

/* 1 when a body of |kind| in |api_version| can be decoded: v1 Namespace,
 * and DeleteOptions in any version (client-go's typed clients send it in
 * their own group version). */
DRA_HIDDEN int k8spb_kind_known(const char *api_version, const char *kind);

/* Decodes |body| (|len| bytes, the whole request body with its "k8s\0"
 * prefix) into *out, a map allocated in |a|: apiVersion and kind as the
 * body's runtime.Unknown names them (absent when it leaves them empty),
 * then the object's fields with their JSON names and Go's JSON rules
 * (omitempty zero values left out, pointers kept when present, zero
 * metav1.Time as null, managedFields' fieldsV1 as the JSON it carries).
 * |dflt_av| and |dflt_kind| (may be NULL) stand in for an empty
 * apiVersion or kind when choosing the schema, as kube's decoder defaults
 * them from the endpoint. Unknown field numbers are skipped, as
 * upstream's generated code does; a repeated singular field keeps its
 * last value and a repeated message merges, as protobuf defines.
 * |d| (may be NULL) gets one entry on failure: path = the field being
 * read ("metadata.labels"), message = what is wrong. Errors:
 *   DRA_EPARSE       malformed: no prefix, empty, truncated, a bad varint,
 *                    tag or wire type, fieldsV1 that is not JSON, a time
 *                    outside years 1-9999, a map key with a NUL byte, no
 *                    kind at all;
 *   DRA_ELIMIT       over K8SPB_MAX_BYTES, _DEPTH or _ITEMS;
 *   DRA_EUNSUPPORTED a well-formed envelope whose kind is not decodable
 *                    (k8spb_kind_known is 0; the object is not read);
 *   DRA_ENOMEM.
 * *out is NULL on error. Nothing is kept after the call except what is
 * in |a|. */
DRA_HIDDEN dra_err k8spb_decode(dra_arena *a, const void *body, size_t len,
                                const char *dflt_av, const char *dflt_kind,
                                dra_doc **out, dra_diag *d);

/* ---- the request adapter (k8spb_body.c, part of the apiserver library) ---- */

typedef struct api_req api_req;

/* The protobuf body of request |r| as a document in r->a, the defaults
 * for an empty kind taken from the endpoint (DeleteOptions for a DELETE).
 * Answers 415 (kube-apiserver's UnsupportedMediaType message) when the
 * endpoint's kind, or else the body's, is not decodable, and 400 for a
 * malformed body or a limit; then returns DRA_EPARSE, as api_body does.
 * DRA_ENOMEM. */
DRA_HIDDEN dra_err api_k8spb_body(api_req *r, dra_doc **out);

#endif
