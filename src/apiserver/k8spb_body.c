/*
 * k8spb_body.c: a request's protobuf body (Content-Type
 * application/vnd.kubernetes.protobuf) through k8spb_decode, answered as
 * api_body answers a JSON body: the document, or a 400/415 Status. The
 * endpoint supplies the kind a body leaves empty, as kube-apiserver's
 * decoder takes it from the object it decodes into, and an endpoint whose
 * kind k8spb cannot decode answers 415 without reading the body.
 */
#include <string.h>

#include "apiserver_int.h"
#include "k8spb.h"

/* kube-apiserver's UnsupportedMediaType message, as api_body words it for
 * any other media type it cannot read. */
#define K8SPB_415                                                                  \
    "the body of the request was in an unknown format - accepted media types "     \
    "include: application/json, application/yaml"

dra_err api_k8spb_body(api_req *r, dra_doc **out)
{
    const char *av = NULL, *kind = NULL;
    dra_diag d;
    dra_err e;
    *out = NULL;
    if (r->in->method && !strcmp(r->in->method, "DELETE")) {
        kind = "DeleteOptions";
    } else if (r->res && !r->sub) {
        if (!(av = api_group_version(&r->a, r->res)))
            return DRA_ENOMEM;
        kind = r->res->kind;
    }
    /* An endpoint whose kind cannot be decoded refuses protobuf before
     * reading the body, as kube-apiserver refuses a media type a resource
     * does not serve (protobuf for custom resources). */
    if (kind && !k8spb_kind_known(av, kind))
        return api_fail(r, 415, "UnsupportedMediaType", NULL, NULL, "%s", K8SPB_415)
                   ? DRA_ENOMEM
                   : DRA_EPARSE;
    dra_diag_init(&d, r->srv->mem);
    d.max = 1;
    e = k8spb_decode(&r->a, r->in->body, r->in->body_len, av, kind, out, &d);
    if (e == DRA_EUNSUPPORTED) {
        e = api_fail(r, 415, "UnsupportedMediaType", NULL, NULL, "%s", K8SPB_415);
    } else if (e == DRA_EPARSE || e == DRA_ELIMIT || e == DRA_EINVAL) {
        const char *why = dra_diag_first(&d);
        e = api_bad_request(r, "protobuf body: %s%s%s", d.n && *d.v[0].path ? d.v[0].path : "",
                            d.n && *d.v[0].path ? ": " : "", why ? why : "malformed");
    }
    dra_diag_fini(&d);
    if (e == DRA_OK && !*out)
        return DRA_EPARSE; /* the answer above is the result */
    return e;
}
