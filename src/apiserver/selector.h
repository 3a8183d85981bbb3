/*
 * selector.h: label and field selectors as kube-apiserver parses and
 * matches them (labelSelector= and fieldSelector= on list, watch and
 * deletecollection). Pure functions: no I/O, no globals.
 *
 * Owner: helper "apilib" (src/apiserver/selector.[ch]).
 *
 * Memory: every compiled selector and string it holds lives in the
 * dra_arena the caller passes; drop the arena to free them.
 *
 * Errors: a selector the server rejects returns DRA_EINVAL and fills the
 * optional |st| with what kube-apiserver answers: code 400, reason
 * BadRequest, and its message, for example
 *   unable to parse requirement: <nil>: Invalid value: "a b": name part ...
 *   invalid selector: 'x'; can't understand 'x'
 *   field label not supported: spec.foo
 * DRA_ENOMEM when the arena cannot grow.
 */
#ifndef DRA_APISERVER_SELECTOR_H
#define DRA_APISERVER_SELECTOR_H

#include "dra/base.h"
#include "dra/cluster.h"
#include "dra/codec.h"
#include "resources.h"

/* ---- label selectors ---------------------------------------------------- */

/* ORDER api_sel_op: names in selector.c. */
typedef enum api_sel_op {
    API_SEL_IN,
    API_SEL_NOTIN,
    API_SEL_EQ,  /* = */
    API_SEL_DEQ, /* == */
    API_SEL_NEQ, /* != */
    API_SEL_EXISTS,
    API_SEL_NOT_EXISTS, /* !key */
    API_SEL_GT,
    API_SEL_LT
} api_sel_op;

typedef struct api_sel_req {
    const char *key;
    api_sel_op op;
    const char **vals; /* sorted, without duplicates, as upstream keeps them */
    size_t n;
} api_sel_req;

/* A parsed label selector: requirements ANDed, sorted by key. An empty
 * selector (n == 0) matches everything. */
typedef struct api_label_sel {
    api_sel_req *reqs;
    size_t n;
} api_label_sel;

/* Parses |text| (URL-decoded; NULL or "" gives the empty selector) with
 * apimachinery's grammar: `k`, `!k`, `k=v`, `k==v`, `k!=v`, `k in (a,b)`,
 * `k notin (a,b)`, `k>1`, `k<1`, comma-joined, keys and values validated
 * like upstream. *out is in |a|. DRA_OK, DRA_EINVAL (|st| set), DRA_ENOMEM. */
dra_err api_sel_label_parse(dra_arena *a, const char *text,
                            api_label_sel **out, dra_kstatus *st);

/* 1 when the labels map |labels| (a DRA_DOC_MAP of strings, or NULL for
 * no labels) satisfies every requirement of |s|. */
int api_sel_label_match(const api_label_sel *s, const dra_doc *labels);

/* The value |key| must equal for |s| to match (a requirement `=`, `==`
 * or `in` with one value), or NULL. Borrowed from |s|. */
const char *api_sel_label_exact(const api_label_sel *s, const char *key);

/* ---- field selectors ---------------------------------------------------- */

typedef struct api_field_term {
    const char *field;
    const char *value; /* unescaped */
    int neq;           /* != */
} api_field_term;

typedef struct api_field_sel {
    api_field_term *terms;
    size_t n;
} api_field_sel;

/* Parses |text| (terms `f=v`, `f==v`, `f!=v` joined by commas; `\,`,
 * `\=` and `\\` escape values) and checks each field against those
 * kube-apiserver supports for |res|'s kind: metadata.name everywhere,
 * metadata.namespace where upstream accepts it; pods spec.nodeName,
 * spec.restartPolicy, spec.schedulerName, spec.serviceAccountName,
 * spec.hostNetwork, status.phase, status.podIP, status.podIPs,
 * status.nominatedNodeName (spec.host is taken as spec.nodeName); nodes
 * spec.unschedulable; namespaces status.phase; events involvedObject.*,
 * reason, reportingComponent, source, type; resourceslices spec.nodeName
 * and spec.driver. The error for another field is the one upstream's
 * conversion function for that kind returns. *out is in |a|. */
dra_err api_sel_field_parse(dra_arena *a, const char *text,
                            const api_resource *res, api_field_sel **out,
                            dra_kstatus *st);

/* 1 when |obj| (a decoded object of |res|'s kind) matches every term. A
 * field the object lacks reads as "", as upstream's fields.Set does. */
int api_sel_field_match(const api_field_sel *s, const api_resource *res,
                        const dra_doc *obj);

/* The value of selectable |field| for |obj| as upstream computes it
 * ("" when absent; "true"/"false" for spec.unschedulable and
 * spec.hostNetwork). Borrowed from |obj| or static. */
const char *api_sel_field_value(const api_resource *res, const dra_doc *obj,
                                const char *field);

/* The value |field| must equal for |s| to match, or NULL. */
const char *api_sel_field_exact(const api_field_sel *s, const char *field);

#endif
